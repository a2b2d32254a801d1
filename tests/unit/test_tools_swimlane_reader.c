/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the offline swimlane readers (tools/swimlane/perf_data.h):
 * l2_swimlane_records.json (the join, spec/swimlane-format.md §2), deps.json
 * (§3.3), name maps (§3.4), tdisp (§2.9), on the reference fixtures
 * (tests/conformance/fixtures/swimlane-probe/, spec §7) and on the malformed
 * corpus (tests/conformance/malformed/, README.md there lists the key each
 * message must name).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "tools/swimlane/perf_data.h"
#include "unit_helpers.h"

/* The source tree: this file is <tree>/tests/unit/<name>.c (CMake passes
 * absolute source paths, so __FILE__ is absolute). */
static char tree[1024];

/* <tree>/<rel> in one of 8 rotating buffers. */
static const char *src_path(const char *rel)
{
	static char buf[8][2048];
	static int k;
	char *b = buf[k++ & 7];
	if (strlen(tree) + strlen(rel) + 2 > sizeof(buf[0]))
		fail_msg("path too long: %s/%s", tree, rel);
	strcpy(b, tree);
	strcat(b, "/");
	strcat(b, rel);
	return b;
}

#define FIX "tests/conformance/fixtures/swimlane-probe/"

static int count_kind(const struct sl_phase_list *l, int kind)
{
	int n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].kind == kind;
	return n;
}

/* ---- records: fixture A (level 4, join path) --------------------------- */

static void test_fixture_a_records(void **state)
{
	(void)state;
	struct sl_perf_data d;
	int rc = sl_read_perf_data(src_path(FIX "A_level4_full/l2_swimlane_records.json"), &d);
	assert_int_equal(rc, 0);
	assert_int_equal(d.level, 4);
	assert_int_equal(d.clock_freq_hz, 50000000);
	assert_true(d.factor == 1000000.0 / 50000000.0);
	/* the base is the first orch record's start (spec §2.2) */
	assert_int_equal(d.base_cycles, 1000000);
	assert_int_equal(d.num_cores, 4);
	assert_int_equal(d.n_core_types, 4);
	assert_int_equal(d.core_types[0], SL_AIC);
	assert_int_equal(d.core_types[1], SL_AIC);
	assert_int_equal(d.core_types[2], SL_AIV);
	assert_int_equal(d.core_types[3], SL_AIV);
	assert_int_equal(d.n_aicore_rows, 7);
	assert_int_equal(d.n_aicpu_rows, 7);
	assert_int_equal(d.n_unmatched, 0);
	assert_null(d.unmatched_warning);

	/* sorted by task id, stable: ring-1 r1t3 after every ring-0 id */
	static const uint64_t ids[] = { 1, 2, 4, 4, 6, 4294967299ull, 4294967299ull };
	static const int cores[] = { 0, 2, 1, 3, 0, 2, 3 };
	assert_int_equal(d.n_tasks, 7);
	for (size_t i = 0; i < 7; i++) {
		assert_int_equal(d.tasks[i].task_id, ids[i]);
		assert_int_equal(d.tasks[i].core_id, cores[i]);
		assert_int_equal(d.tasks[i].func_id, -1);
		assert_true(d.tasks[i].has_propagation);
	}
	/* t1 on core 0: (1000140 - 1000000) * 0.02, exactly as spec §2.3 */
	const struct sl_task *t1 = &d.tasks[0];
	assert_int_equal(t1->core_type, SL_AIC);
	assert_true(t1->start_us == 2.8000000000000003);
	assert_true(t1->end_us == 8.0);
	assert_true(t1->duration_us == 5.199999999999999); /* kernel-duration-us */
	assert_true(t1->local_setup_us == 0.2);
	assert_true(t1->receive_us == 2.6); /* the event's ts */
	assert_true(t1->dispatch_us == 2.4);
	assert_true(t1->finish_us == 8.4);
	assert_true(t1->propagation_us == 0.20000000000000018);
	/* t2 on core 2 (AIV): ts 7.800000000000001, kernel duration 4.1 */
	const struct sl_task *t2 = &d.tasks[1];
	assert_int_equal(t2->core_type, SL_AIV);
	assert_true(t2->receive_us == 7.800000000000001);
	assert_true(t2->duration_us == 4.1);
	assert_true(t2->local_setup_us == 0.1);
	/* MIX t4: core 1 is AIC, core 3 AIV; ts 18.8 and 18.84 */
	assert_int_equal(d.tasks[2].core_type, SL_AIC);
	assert_true(d.tasks[2].receive_us == 18.8);
	assert_true(d.tasks[2].duration_us == 5.0);
	assert_int_equal(d.tasks[3].core_type, SL_AIV);
	assert_true(d.tasks[3].receive_us == 18.84);
	assert_true(d.tasks[3].duration_us == 4.760000000000002 ||
		    d.tasks[3].duration_us == 4.7600000000000016);
	/* t6: ts 26.200000000000003, kernel duration 3.599999999999998 */
	assert_true(d.tasks[4].receive_us == 26.200000000000003);
	assert_true(d.tasks[4].duration_us == 3.599999999999998);

	/* sched phases: 4 thread slots, two empty (kept) */
	assert_true(d.has_sched);
	assert_int_equal(d.n_sched, 4);
	assert_int_equal(d.sched[0].n, 14);
	assert_int_equal(d.sched[1].n, 9);
	assert_int_equal(d.sched[2].n, 0);
	assert_int_equal(d.sched[3].n, 0);
	const struct sl_phase_list *s0 = &d.sched[0], *s1 = &d.sched[1];
	assert_int_equal(count_kind(s0, SL_PH_DISPATCH), 4);
	assert_int_equal(count_kind(s0, SL_PH_COMPLETE), 4);
	assert_int_equal(count_kind(s0, SL_PH_RESOLVE), 2);
	assert_int_equal(count_kind(s0, SL_PH_DUMMY), 1);
	assert_int_equal(count_kind(s0, SL_PH_DUMMY_TASK), 1);
	assert_int_equal(count_kind(s0, SL_PH_RELEASE), 1);
	assert_int_equal(count_kind(s0, SL_PH_PREDICATED_SKIP), 1);
	assert_int_equal(count_kind(s1, SL_PH_DISPATCH), 2);
	assert_int_equal(count_kind(s1, SL_PH_COMPLETE), 2);
	assert_int_equal(count_kind(s1, SL_PH_ASYNC_POLL), 1);
	assert_int_equal(count_kind(s1, SL_PH_EARLY_DISPATCH), 1);
	assert_int_equal(count_kind(s1, SL_PH_DRAIN), 1);
	assert_int_equal(count_kind(s1, SL_PH_DRAIN_PREPARE), 1);
	assert_int_equal(count_kind(s1, SL_PH_DRAIN_PUBLISH), 1);
	/* first record: dispatch 1000110..1000125, pop 1/0, shared [1,0,0] */
	const struct sl_phase *p0 = &s0->v[0];
	assert_int_equal(p0->kind, SL_PH_DISPATCH);
	assert_true(p0->start_us == 2.2);
	assert_true(p0->end_us == 2.5);
	assert_int_equal(p0->loop_iter, 1);
	assert_int_equal(p0->tasks_processed, 1);
	assert_int_equal(p0->flags, SL_PF_POP | SL_PF_SHARED_START | SL_PF_SHARED_END |
				     SL_PF_LOOP_ITER | SL_PF_TASKS);
	assert_int_equal(p0->pop_hit, 1);
	assert_int_equal(p0->pop_miss, 0);
	assert_int_equal(p0->shared_at_start[0], 1);
	assert_int_equal(p0->shared_at_start[1], 0);
	assert_null(p0->name);
	/* dummy_task t5 and predicated_skip t7 carry a task id, no pops */
	const struct sl_phase *dt = &s0->v[8], *ps = &s0->v[13];
	assert_int_equal(dt->kind, SL_PH_DUMMY_TASK);
	assert_true((dt->flags & SL_PF_TASK_ID) && !(dt->flags & SL_PF_POP));
	assert_int_equal(dt->task_id, 5);
	assert_true(dt->start_us == dt->end_us);
	assert_int_equal(ps->kind, SL_PH_PREDICATED_SKIP);
	assert_int_equal(ps->task_id, 7);
	assert_false(s0->v[2].flags & SL_PF_TASK_ID);

	/* orch: one lane, 8 records */
	assert_true(d.has_orch);
	assert_int_equal(d.n_orch, 1);
	assert_int_equal(d.orch[0].n, 8);
	assert_true(d.orch[0].v[0].start_us == 0.0);
	assert_true(d.orch[0].v[0].end_us == 0.8);
	assert_int_equal(d.orch[0].v[3].submit_idx, 3);
	assert_int_equal(d.orch[0].v[3].task_id, 4294967299ull);
	assert_true(d.orch[0].v[3].has_task_id);

	assert_int_equal(d.n_core_to_thread, 4);
	static const int32_t c2t[] = { 0, 1, 0, 1 };
	assert_memory_equal(d.core_to_thread, c2t, sizeof(c2t));
	sl_perf_data_free(&d);
	assert_null(d.tasks);
}

static void test_fixture_b_same_records(void **state)
{
	(void)state;
	struct sl_perf_data d;
	assert_int_equal(sl_read_perf_data(src_path(FIX "B_level4_nodeps/l2_swimlane_records.json"),
					   &d), 0);
	assert_int_equal(d.n_tasks, 7);
	assert_true(d.tasks[0].start_us == 2.8000000000000003);
	assert_int_equal(d.orch[0].n, 8);
	sl_perf_data_free(&d);
}

/* ---- records: fixture C (level 1, 5-column v2 rows) --------------------- */

static void test_fixture_c_level1(void **state)
{
	(void)state;
	struct sl_perf_data d;
	assert_int_equal(sl_read_perf_data(src_path(FIX "C_level1_v2rows/l2_swimlane_records.json"),
					   &d), 0);
	assert_int_equal(d.level, 1);
	assert_int_equal(d.n_aicpu_rows, 0);
	assert_int_equal(d.n_tasks, 7);
	/* base = t1's receive = its start (r2s 0): ts 0.0, duration 5.2 */
	assert_int_equal(d.base_cycles, 1000140);
	const struct sl_task *t1 = &d.tasks[0];
	assert_int_equal(t1->task_id, 1);
	assert_false(t1->has_propagation);
	assert_true(t1->start_us == 0.0);
	assert_true(t1->duration_us == 5.2);
	assert_true(t1->local_setup_us == 0.0);
	assert_true(t1->dispatch_us == 0.0 && t1->finish_us == 0.0);
	assert_true(d.tasks[1].start_us == 5.1000000000000005);
	/* level 1 keeps aicore_tasks order for equal ids: core 2 then 3 */
	assert_int_equal(d.tasks[5].task_id, 4294967299ull);
	assert_int_equal(d.tasks[5].core_id, 2);
	assert_int_equal(d.tasks[6].core_id, 3);
	assert_false(d.has_sched);
	assert_false(d.has_orch);
	assert_int_equal(d.n_core_to_thread, 0);
	sl_perf_data_free(&d);
}

/* ---- records: the reference's err_inputs (spec §7.4) -------------------- */

static void expect_perf_error(const char *rel, const char *want)
{
	struct sl_perf_data d;
	const char *path = src_path(rel);
	int rc = sl_read_perf_data(path, &d);
	assert_int_equal(rc, -EINVAL);
	char exp[8192];
	snprintf(exp, sizeof(exp), "%s: %s", path, want);
	assert_string_equal(tp_last_error(), exp);
	assert_null(d.tasks);
}

static void test_err_inputs(void **state)
{
	(void)state;
	expect_perf_error(FIX "err_inputs/bad_level.json",
			  "l2_swimlane_level: Unsupported l2_swimlane_level: 5 (expected 1, 2, 3, or 4)");
	expect_perf_error(FIX "err_inputs/no_level.json",
			  "l2_swimlane_level: missing (expected an integer 1..4)");
	expect_perf_error(FIX "err_inputs/no_clock.json",
			  "metadata.clock_freq_hz: metadata missing/zero clock_freq_hz: 0");
	expect_perf_error(FIX "err_inputs/v1_legacy.json",
			  "metadata.clock_freq_hz: metadata missing/zero clock_freq_hz: 0");
	expect_perf_error(FIX "err_inputs/broken.json",
			  "line 1, column 25: invalid JSON (parse error: premature EOF)");

	struct sl_perf_data d;
	assert_int_equal(sl_read_perf_data(src_path(FIX "err_inputs/level_str.json"), &d), 0);
	assert_int_equal(d.level, 3);
	assert_int_equal(d.n_tasks, 7);
	sl_perf_data_free(&d);

	assert_int_equal(sl_read_perf_data(src_path(FIX "err_inputs/unmatched.json"), &d), 0);
	assert_int_equal(d.n_tasks, 7);
	assert_int_equal(d.n_aicpu_rows, 8);
	assert_int_equal(d.n_unmatched, 1);
	assert_string_equal(d.unmatched_warning,
			    "1 aicpu_task(s) had no matching AICore record (top offenders: core 3: 1); "
			    "the missing AICore buffer(s) were dropped on rotation. Bump "
			    "PLATFORM_AICORE_BUFFERS_PER_CORE if you see this regularly.");
	sl_perf_data_free(&d);

	assert_int_equal(sl_read_perf_data(src_path(FIX "err_inputs/missing.json"), &d), -ENOENT);
	assert_non_null(strstr(tp_last_error(), "missing.json"));
}

/* ---- records: in-memory variants ---------------------------------------- */

static int read_mem(const char *json, struct sl_perf_data *d)
{
	return sl_read_perf_data_mem("mem.json", (const uint8_t *)json, strlen(json), d);
}

#define HDR(level) "{\"l2_swimlane_level\": " level ", \"metadata\": {\"clock_freq_hz\": 1000000000, " \
		   "\"core_types\": [\"aic\", \"aiv\"]}, "

static void test_mem_u64_and_variants(void **state)
{
	(void)state;
	struct sl_perf_data d;
	/* a token above INT64_MAX, a 7-column row (extra ignored), clock 1 GHz
	 * given as a string, level as a string, core 5 outside core_types */
	const char *j = "{\"l2_swimlane_level\": \"2\", \"metadata\": {\"clock_freq_hz\": \" 1000000000 \"},"
			"\"aicore_tasks\": [[5, 18446744073709551615, 7, 100, 250, 4, [\"x\"]]],"
			"\"aicpu_tasks\": [[5, 7, 90, 260]], \"future_key\": {\"a\": [1, 2.5]}}";
	assert_int_equal(read_mem(j, &d), 0);
	assert_int_equal(d.level, 2);
	assert_int_equal(d.n_tasks, 1);
	assert_int_equal(d.tasks[0].task_id, UINT64_MAX);
	assert_int_equal(d.tasks[0].core_type, SL_AIV);
	assert_int_equal(d.base_cycles, 90);
	assert_true(d.factor == 0.001);
	assert_true(d.tasks[0].start_us == 10 * 0.001);
	assert_true(d.tasks[0].local_setup_us == 4 * 0.001);
	assert_true(d.tasks[0].dispatch_us == 0.0); /* 90 - 90 */
	assert_false(d.has_sched);
	char b[32];
	assert_string_equal(sl_tdisp(d.tasks[0].task_id, b, sizeof(b)), "r255t4294967295");
	sl_perf_data_free(&d);

	/* level >= 2 with no aicpu rows: zero tasks (spec §2.5) */
	assert_int_equal(read_mem(HDR("2") "\"aicore_tasks\": [[0, 1, 1, 10, 20, 0]]}", &d), 0);
	assert_int_equal(d.n_tasks, 0);
	assert_int_equal(d.n_aicore_rows, 1);
	sl_perf_data_free(&d);

	/* level 1 path keeps rows, stable for equal ids; receive <= 0 is not a
	 * base candidate, the start itself never is (spec §2.2) */
	assert_int_equal(read_mem(HDR("1") "\"aicore_tasks\": [[1, 9, 1, 50, 80, 60], "
				  "[0, 3, 1, 200, 300], [0, 9, 2, 100, 120, 0]]}", &d), 0);
	assert_int_equal(d.n_tasks, 3);
	assert_int_equal(d.base_cycles, 80);
	assert_int_equal(d.tasks[0].task_id, 3);
	assert_int_equal(d.tasks[1].core_id, 1);
	assert_int_equal(d.tasks[2].core_id, 0);
	assert_true(d.tasks[1].start_us == -30 * 0.001); /* 50 - 80, negative */
	assert_int_equal(d.n_r2s_over, 1); /* 60 > 50: counted for the warning */
	assert_int_equal(d.tasks[1].core_type, SL_AIV);
	assert_int_equal(d.tasks[2].core_type, SL_AIC);
	sl_perf_data_free(&d);

	/* [[],[],[]] counts as non-empty; no kind → unknown; legacy and
	 * unknown kind strings; a negative orch task id counts as absent */
	assert_int_equal(read_mem(HDR("4") "\"aicpu_scheduler_phases\": [[], [{\"start_cycles\": 5, \"end_cycles\": 5}, "
				  "{\"kind\": \"fanout\"}, {\"kind\": \"bogus\", \"shared_at_start\": [1,2]}], []],"
				  "\"aicpu_orchestrator_phases\": [[{\"submit_idx\": 1, \"task_id\": -1, "
				  "\"start_cycles\": 7, \"end_cycles\": 9}]]}", &d), 0);
	assert_true(d.has_sched);
	assert_int_equal(d.n_sched, 3);
	assert_int_equal(d.sched[1].n, 3);
	assert_int_equal(d.sched[1].v[0].kind, SL_PH_UNKNOWN);
	assert_null(d.sched[1].v[0].name);
	assert_true(d.sched[1].v[0].start_us == 0.0); /* 5 is the base */
	assert_int_equal(d.sched[1].v[1].kind, SL_PH_FANOUT);
	assert_int_equal(d.sched[1].v[2].kind, SL_PH_UNKNOWN);
	assert_string_equal(d.sched[1].v[2].name, "bogus");
	assert_false(d.sched[1].v[2].flags & SL_PF_SHARED_START); /* not length 3 */
	assert_int_equal(d.base_cycles, 5);
	assert_false(d.orch[0].v[0].has_task_id);
	assert_true(d.orch[0].v[0].start_us == 2 * 0.001);
	sl_perf_data_free(&d);

	/* Starts missing or 0 with an end: read as 0 µs (spec §2.3),
	 * counted for the warning with the first one named; a record that is
	 * all zero is not counted. */
	char zw[256];
	assert_int_equal(d.n_zero_starts, 0);
	assert_null(sl_perf_zero_start_warning(&d, zw, sizeof(zw)));
	assert_int_equal(read_mem(HDR("4") "\"aicore_tasks\": [[0, 1, 1, 10, 20, 0], "
				  "[1, 2, 1, 0, 30, 0]], \"aicpu_tasks\": [[0, 1, 5, 25], [1, 1, 0, 0]], "
				  "\"aicpu_scheduler_phases\": [[{\"kind\": \"dispatch\", \"start_cycles\": 6, "
				  "\"end_cycles\": 7}, {\"kind\": \"complete\", \"end_cycles\": 9}]], "
				  "\"aicpu_orchestrator_phases\": [[{\"submit_idx\": 0, \"start_cycles\": 0, "
				  "\"end_cycles\": 8}]]}", &d), 0);
	assert_int_equal(d.n_zero_starts, 3);
	assert_string_equal(d.first_zero_start, "aicore_tasks[1] start_cycles");
	assert_non_null(sl_perf_zero_start_warning(&d, zw, sizeof(zw)));
	assert_string_equal(zw, "3 records with a missing or zero start but an end (first: "
			    "aicore_tasks[1] start_cycles): taken as 0 µs (spec §2.3), so drawn "
			    "from before the run and counted so in the averages; no device writes "
			    "one: damaged records?");
	sl_perf_data_free(&d);

	/* Unknown kinds are interned once each (one copy per distinct
	 * string, through the hash index: 300 distinct, then each again),
	 * a NUL inside one kept as '?' so it matches itself. */
	{
		size_t cap = 64 * 1024, n = 0;
		char *j = malloc(cap);
		assert_non_null(j);
		n += (size_t)snprintf(j + n, cap - n, HDR("4") "\"aicpu_scheduler_phases\": [[");
		for (int i = 0; i < 600; i++)
			n += (size_t)snprintf(j + n, cap - n, "%s{\"kind\": \"k%d\"}", i ? "," : "",
					      i % 300);
		n += (size_t)snprintf(j + n, cap - n, ",{\"kind\": \"dis\\u0000patch\"},"
				      "{\"kind\": \"dis\\u0000patch\"},{\"kind\": \"dis?patch\"}]]}");
		assert_true(n < cap);
		assert_int_equal(read_mem(j, &d), 0);
		free(j);
		assert_int_equal(d.sched[0].n, 603);
		assert_int_equal(d.n_unknown_phases, 603);
		assert_string_equal(d.first_unknown_phase, "k0");
		for (int i = 0; i < 300; i++) {
			char want[16];
			snprintf(want, sizeof(want), "k%d", i);
			assert_string_equal(d.sched[0].v[i].name, want);
			/* the same copy the second time */
			assert_ptr_equal(d.sched[0].v[i].name, d.sched[0].v[i + 300].name);
		}
		assert_string_equal(d.sched[0].v[600].name, "dis?patch");
		assert_ptr_equal(d.sched[0].v[600].name, d.sched[0].v[601].name);
		assert_ptr_equal(d.sched[0].v[600].name, d.sched[0].v[602].name);
		sl_perf_data_free(&d);
	}
}

/* A timestamp more than a day after the first one (a sentinel end) is
 * taken, and sl_perf_far_warning() names the first and counts them all. */
static void test_far_timestamps(void **state)
{
	(void)state;
	struct sl_perf_data d;
	char buf[320];
	/* 50 MHz: a day is 4.32e12 ticks */
	const char *j = "{\"l2_swimlane_level\": 3, \"metadata\": {\"clock_freq_hz\": 50000000},"
			"\"aicore_tasks\": [[0, 8589934592, 1, 100, 18446744073709551615, 1],"
			"[1, 3, 1, 100, 200, 1]],"
			"\"aicpu_tasks\": [[0, 1, 90, 300], [1, 1, 90, 5000000000000]],"
			"\"aicpu_scheduler_phases\": [[{\"kind\": \"dispatch\", \"start_cycles\": 95,"
			"\"end_cycles\": 96}]]}";
	assert_int_equal(read_mem(j, &d), 0);
	assert_int_equal(d.n_tasks, 2);
	const char *w = sl_perf_far_warning(&d, buf, sizeof(buf));
	assert_non_null(w);
	/* the first in the reader's task order (by task id) */
	assert_string_equal(w, "2 timestamps more than a day after the records' first one (first: "
			       "aicpu_tasks: the finish of task t3 on core 1, 1e+05 s after it): "
			       "a sentinel or corrupt value? Taken as is");
	sl_perf_data_free(&d);
	/* an ordinary file: nothing */
	const char *ok = "{\"l2_swimlane_level\": 2, \"metadata\": {\"clock_freq_hz\": 50000000},"
			 "\"aicore_tasks\": [[0, 3, 1, 100, 200, 1]], \"aicpu_tasks\": [[0, 1, 90, 300]]}";
	assert_int_equal(read_mem(ok, &d), 0);
	assert_null(sl_perf_far_warning(&d, buf, sizeof(buf)));
	sl_perf_data_free(&d);
}

/* AICPU times that cannot belong to the AICore times they joined (the
 * dispatch after the AICore's end, the finish before its start: rows of two
 * runs put together) are counted by sl_perf_order_warning(); absent AICPU
 * times (0) are not. */
static void test_order_warning(void **state)
{
	(void)state;
	struct sl_perf_data d;
	char buf[512];
	const char *j = "{\"l2_swimlane_level\": 2, \"metadata\": {\"clock_freq_hz\": 50000000},"
			"\"aicore_tasks\": [[0, 3, 1, 100, 200, 1], [1, 4, 1, 100, 200, 1],"
			"[2, 5, 1, 100, 200, 1], [3, 6, 1, 100, 200, 1]],"
			"\"aicpu_tasks\": [[0, 1, 90, 300], [1, 1, 250, 300], [2, 1, 50, 60],"
			"[3, 1, 0, 0]]}";
	assert_int_equal(read_mem(j, &d), 0);
	const char *w = sl_perf_order_warning(&d, buf, sizeof(buf));
	assert_non_null(w);
	assert_string_equal(w, "2 of 4 tasks have AICPU times that cannot be their AICore's "
			       "(first: task t4 on core 1, dispatched 1.00 us after its AICore end): "
			       "aicpu_tasks and aicore_tasks of different runs? Their latency, head "
			       "and tail overheads are meaningless");
	sl_perf_data_free(&d);
	const char *ok = "{\"l2_swimlane_level\": 2, \"metadata\": {\"clock_freq_hz\": 50000000},"
			 "\"aicore_tasks\": [[0, 3, 1, 100, 200, 1]], \"aicpu_tasks\": [[0, 1, 90, 300]]}";
	assert_int_equal(read_mem(ok, &d), 0);
	assert_null(sl_perf_order_warning(&d, buf, sizeof(buf)));
	sl_perf_data_free(&d);
}

static void test_mem_unmatched_top3(void **state)
{
	(void)state;
	struct sl_perf_data d;
	/* misses: core 4 x1, core 2 x2, core 7 x2, core 1 x1 → core 2: 2,
	 * core 7: 2 (tie: first seen first), core 4: 1 */
	assert_int_equal(read_mem(HDR("2") "\"aicore_tasks\": [[0, 1, 1, 10, 20, 0]],"
				  "\"aicpu_tasks\": [[4, 1, 5, 6], [2, 1, 5, 6], [0, 1, 8, 22], [7, 1, 5, 6],"
				  "[2, 2, 5, 6], [7, 2, 5, 6], [1, 1, 5, 6]]}", &d), 0);
	assert_int_equal(d.n_tasks, 1);
	assert_int_equal(d.n_unmatched, 6);
	assert_string_equal(d.unmatched_warning,
			    "6 aicpu_task(s) had no matching AICore record (top offenders: core 2: 2, "
			    "core 7: 2, core 4: 1); the missing AICore buffer(s) were dropped on "
			    "rotation. Bump PLATFORM_AICORE_BUFFERS_PER_CORE if you see this regularly.");
	sl_perf_data_free(&d);
}

static void expect_mem_error(const char *json, const char *want)
{
	struct sl_perf_data d;
	assert_int_equal(read_mem(json, &d), -EINVAL);
	if (!strstr(tp_last_error(), want))
		fail_msg("message \"%s\" lacks \"%s\"", tp_last_error(), want);
	assert_non_null(strstr(tp_last_error(), "mem.json: "));
}

static void test_mem_errors(void **state)
{
	(void)state;
	expect_mem_error(HDR("2") "\"aicore_tasks\": [[0, 1, 1, 10, 20, 0], [0, 2, 1, 30, 40, 0]]}",
			 "aicore_tasks[1]: duplicate join key (core_id, reg_task_id) = (0, 1), "
			 "also in aicore_tasks[0]");
	expect_mem_error(HDR("2") "\"aicore_tasks\": [[0, 1, 1, 10, 20, -1]]}",
			 "aicore_tasks[0][5]: negative value -1");
	expect_mem_error(HDR("2") "\"aicore_tasks\": [[0, 1, 1, 10, 20, 1e3]]}",
			 "aicore_tasks[0][5]: expected an integer, got the float 1e3");
	expect_mem_error(HDR("2") "\"aicore_tasks\": [[0, 1, 1, 10, 18446744073709551616]]}",
			 "aicore_tasks[0][4]: integer 18446744073709551616 out of range");
	expect_mem_error(HDR("2") "\"aicpu_tasks\": [[0, 1, 1, 10, 20]]}",
			 "aicpu_tasks[0][4]: aicpu_tasks rows have exactly 4 columns");
	expect_mem_error(HDR("2") "\"aicpu_tasks\": [[0, 1, 1, null]]}",
			 "aicpu_tasks[0][3]: expected an integer, got null");
	expect_mem_error(HDR("2") "\"aicpu_tasks\": \"none\"}", "aicpu_tasks: expected an array");
	expect_mem_error(HDR("2") "\"aicpu_tasks\": [], \"aicpu_tasks\": []}",
			 "aicpu_tasks: duplicate key");
	expect_mem_error("{\"l2_swimlane_level\": 4, \"metadata\": {\"clock_freq_hz\": -5}}",
			 "metadata.clock_freq_hz: metadata missing/zero clock_freq_hz: -5");
	expect_mem_error("{\"l2_swimlane_level\": \"four\"}",
			 "l2_swimlane_level: expected an integer, got the string \"four\"");
	expect_mem_error("{\"l2_swimlane_level\": 4, \"metadata\": {\"core_to_thread\": [0, \"1\"]}}",
			 "metadata.core_to_thread[1]: expected an integer");
	expect_mem_error("{\"l2_swimlane_level\": 4}\n\n  {}", "line 3, column 3: invalid JSON");
	expect_mem_error("{\"a\": \"\xff\"}", "line 1, column");
	expect_mem_error("42", "(top level): expected a JSON object, got a number");
}

/* A file bigger than the 1 MiB read chunk: values and a syntax error on
 * the far side of a chunk boundary. */
static void test_file_chunks(void **state)
{
	(void)state;
	char *dir = uh_mkdtemp();
	assert_non_null(dir);
	char path[4096];
	snprintf(path, sizeof(path), "%s/big.json", dir);
	const int n = 60000;
	for (int pass = 0; pass < 2; pass++) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fprintf(f, "{\n\"l2_swimlane_level\": 2,\n\"metadata\": {\"clock_freq_hz\": 50000000},\n"
			   "\"aicore_tasks\": [\n");
		for (int i = 0; i < n; i++)
			fprintf(f, "  [%d, %d, %d, %d, %d, 1]%s\n", i % 8, n - i, i, 2000 + i,
				3000 + i, i + 1 < n ? "," : "");
		fprintf(f, "],\n\"aicpu_tasks\": [\n");
		for (int i = 0; i < n; i++)
			fprintf(f, "  [%d, %d, %d, %d]%s\n", i % 8, i, 1500 + i, 4000 + i,
				pass == 1 && i == n - 2 ? ",," : i + 1 < n ? "," : "");
		fprintf(f, "]}\n");
		fclose(f);
		struct sl_perf_data d;
		int rc = sl_read_perf_data(path, &d);
		if (pass == 0) {
			assert_int_equal(rc, 0);
			assert_int_equal(d.n_tasks, n);
			assert_int_equal(d.base_cycles, 1500);
			/* sorted by token: the last row (token 1) comes first */
			assert_int_equal(d.tasks[0].task_id, 1);
			assert_int_equal(d.tasks[0].core_id, (n - 1) % 8);
			assert_true(d.tasks[0].start_us == (double)(2000 + n - 1 - 1500) * 0.02);
			sl_perf_data_free(&d);
		} else {
			assert_int_equal(rc, -EINVAL);
			/* 4 header lines, n rows, 2 lines, then rows 0..n-2 */
			char want[64];
			snprintf(want, sizeof(want), "line %d, column", 4 + n + 2 + n - 1);
			if (!strstr(tp_last_error(), want))
				fail_msg("\"%s\" lacks \"%s\"", tp_last_error(), want);
		}
	}
	uh_rm_rf(dir); /* frees it */
}

/* One value longer than 4 MiB (yajl re-lexes a value that spans chunks at
 * every chunk: a 200 MB one ran for minutes) is refused naming its line;
 * 6 MiB of whitespace between values is not a value and passes; a 3 MiB
 * string under an ignored key passes. */
static void test_file_long_value(void **state)
{
	(void)state;
	char *dir = uh_mkdtemp();
	assert_non_null(dir);
	char path[4096];
	snprintf(path, sizeof(path), "%s/long.json", dir);
	for (int pass = 0; pass < 4; pass++) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fprintf(f, "{\n\"l2_swimlane_level\": 2,\n\"metadata\": {\"clock_freq_hz\": "
			   "50000000},\n\"aicore_tasks\": [[0, 1, 1, 10, 20, 1]],\n");
		size_t big = pass == 3 ? (3u << 20) : (6u << 20);
		if (pass == 0) { /* a number */
			fputs("\"aicpu_tasks\": [[0, 1, ", f);
			for (size_t i = 0; i < big; i++)
				fputc('7', f);
			fputs(", 30]]}\n", f);
		} else if (pass == 1 || pass == 3) { /* a string under an unknown key */
			fputs("\"note\": \"", f);
			for (size_t i = 0; i < big; i++)
				fputc('x', f);
			fputs("\",\n\"aicpu_tasks\": [[0, 1, 5, 30]]}\n", f);
		} else { /* whitespace */
			fputs("\"aicpu_tasks\":", f);
			for (size_t i = 0; i < big; i++)
				fputc(i % 64 ? ' ' : '\n', f);
			fputs("[[0, 1, 5, 30]]}\n", f);
		}
		fclose(f);
		struct sl_perf_data d;
		int rc = sl_read_perf_data(path, &d);
		if (pass == 0 || pass == 1) {
			assert_int_equal(rc, -EINVAL);
			const char *want = pass == 0 ? "long.json: line 5: one JSON value"
						     : "long.json: line 5: one JSON value (a number, "
						       "string or key) longer than 4 MiB";
			if (!strstr(tp_last_error(), want))
				fail_msg("pass %d: \"%s\" lacks \"%s\"", pass, tp_last_error(), want);
		} else {
			if (rc != 0)
				fail_msg("pass %d: %s", pass, tp_last_error());
			assert_int_equal(d.n_tasks, 1);
			sl_perf_data_free(&d);
		}
	}
	uh_rm_rf(dir); /* frees it */
}

/* ---- deps.json ---------------------------------------------------------- */

static void test_fixture_a_deps(void **state)
{
	(void)state;
	struct sl_deps d;
	assert_int_equal(sl_read_deps(src_path(FIX "A_level4_full/deps.json"), &d), 0);
	assert_true(d.has_edges);
	assert_null(d.edges_warning);
	/* 9 edges, (1, 6) twice (tensormap then creator) → 8 unique */
	static const uint64_t pred[] = { 0, 1, 2, 4294967299ull, 4, 5, 1, 6 };
	static const uint64_t succ[] = { 1, 2, 4294967299ull, 4, 5, 6, 6, 7 };
	assert_int_equal(d.n_edges, 8);
	assert_memory_equal(d.pred, pred, sizeof(pred));
	assert_memory_equal(d.succ, succ, sizeof(succ));
	assert_int_equal(d.n_tasks, 7);
	assert_int_equal(d.n_block_tasks, 7);
	long t4 = sl_deps_find_task(&d, 4);
	assert_true(t4 >= 0);
	assert_int_equal(d.kernel_ids[t4][0], 3);
	assert_int_equal(d.kernel_ids[t4][1], 4);
	assert_int_equal(d.kernel_ids[t4][2], -1);
	long t5 = sl_deps_find_task(&d, 5);
	assert_true(t5 >= 0);
	assert_int_equal(d.kernel_ids[t5][0], -1);
	assert_int_equal(d.kernel_ids[t5][1], -1);
	assert_int_equal(d.kernel_ids[t5][2], -1);
	long r1t3 = sl_deps_find_task(&d, 4294967299ull);
	assert_true(r1t3 >= 0);
	assert_int_equal(d.block_num[r1t3], 2);
	assert_int_equal(sl_deps_block_num(&d, 4294967299ull), 2);
	assert_int_equal(sl_deps_block_num(&d, 1), 1);
	assert_int_equal(sl_deps_find_task(&d, 0), -1); /* alloc t0 */
	assert_int_equal(sl_deps_block_num(&d, 0), 0);
	sl_deps_free(&d);
}

static int deps_mem(const char *json, struct sl_deps *d)
{
	return sl_read_deps_mem("deps.json", (const uint8_t *)json, strlen(json), d);
}

static void test_deps_variants(void **state)
{
	(void)state;
	struct sl_deps d;
	/* numbers and strings, negatives mod 2^64, self loops kept, bad edges
	 * skipped, kernel map only from length-3 lists, block_num clamps */
	assert_int_equal(deps_mem("{\"tasks\": [{\"task_id\": 3, \"kernel_ids\": [1, 2, 3], \"block_num\": 0},"
				  "{\"task_id\": \"-1\", \"kernel_ids\": [1, 2], \"block_num\": \"4\"},"
				  "{\"task_id\": \"9\", \"kernel_ids\": [7, -1, -1], \"block_num\": \"x\"},"
				  "{\"kernel_ids\": [0, 0, 0]}, {\"task_id\": 3, \"kernel_ids\": [5, 5, 5]}],"
				  "\"edges\": [{\"pred\": \"3\", \"succ\": 3}, 7, {\"pred\": \"a\", \"succ\": 1},"
				  "{\"pred\": 1}, {\"pred\": [1], \"succ\": 2}, {\"pred\": -1, \"succ\": \"3\"},"
				  "{\"succ\": \"3\", \"pred\": \"3\"}]}", &d), 0);
	assert_true(d.has_edges);
	assert_int_equal(d.n_edges, 2);
	assert_int_equal(d.pred[0], 3);
	assert_int_equal(d.succ[0], 3);
	assert_int_equal(d.pred[1], UINT64_MAX);
	assert_int_equal(d.succ[1], 3);
	assert_int_equal(d.n_tasks, 3); /* 3, 9 and 3 again */
	long t3 = sl_deps_find_task(&d, 3);
	assert_int_equal(d.kernel_ids[t3][0], 5); /* the later entry wins */
	assert_int_equal(sl_deps_find_task(&d, UINT64_MAX), -1);
	assert_int_equal(sl_deps_block_num(&d, UINT64_MAX), 4);
	assert_int_equal(sl_deps_block_num(&d, 9), 1);
	assert_int_equal(sl_deps_block_num(&d, 3), 1);
	/* what was skipped is said, the first of each kind named */
	assert_string_equal(d.quirks_warning,
			    "deps.json: 1 task id listed twice (tasks[4]: task_id 3 again; the later "
			    "entry is used); 1 kernel_ids list not of 3 entries (tasks[1]: 2; expected "
			    "AIC, AIV0, AIV1: the task is left without func_ids); 1 tasks[] entry "
			    "without an integer task_id (tasks[3]; skipped); 4 of 7 edges[] entries "
			    "skipped (edges[1]: not an object)");
	sl_deps_free(&d);
	/* a task_id past 64 bits is an integer, too large: said so */
	assert_int_equal(deps_mem("{\"tasks\": [{\"task_id\": 1, \"kernel_ids\": [0, -1, -1]},"
				  "{\"task_id\": \"99999999999999999999999999\", \"kernel_ids\": "
				  "[0, -1, -1]}], \"edges\": []}", &d), 0);
	assert_int_equal(d.n_tasks, 1);
	assert_string_equal(d.quirks_warning,
			    "deps.json: 1 tasks[] entry without an integer task_id (tasks[1]: an "
			    "integer past 64 bits; skipped)");
	sl_deps_free(&d);
	/* kernel_ids that is not a list (a number, null, an object): the task
	 * is left out of the kernel map, and said so; one without kernel_ids
	 * is no quirk */
	assert_int_equal(deps_mem("{\"tasks\": [{\"task_id\": 1}, {\"task_id\": 2, \"kernel_ids\": -1},"
				  "{\"task_id\": 3, \"kernel_ids\": null}, {\"task_id\": 4, "
				  "\"kernel_ids\": {}}, {\"task_id\": 5, \"kernel_ids\": [1, 2, 3]}], "
				  "\"edges\": []}", &d), 0);
	assert_int_equal(d.n_tasks, 1);
	assert_int_equal(d.n_bad_kernel_ids, 3);
	assert_string_equal(d.quirks_warning, "deps.json: 3 kernel_ids lists not of 3 entries "
			    "(tasks[1]: not a list; expected AIC, AIV0, AIV1: the tasks are left "
			    "without func_ids)");
	sl_deps_free(&d);
	/* every edge without integer ids: all skipped, the first one's reason */
	assert_int_equal(deps_mem("{\"tasks\": [{\"task_id\": 1}], \"edges\": [{\"from\": 1, \"to\": 2},"
				  "{\"pred\": 1, \"succ\": null}]}", &d), 0);
	assert_int_equal(d.n_edges, 0);
	assert_string_equal(d.quirks_warning, "deps.json: 2 of 2 edges[] entries skipped (edges[0]: "
			    "no integer pred and succ)");
	sl_deps_free(&d);

	assert_int_equal(deps_mem("{\"tasks\": [], \"tensors\": [{\"x\": [[[]]]}]}", &d), 0);
	assert_false(d.has_edges);
	assert_string_equal(d.edges_warning, "deps.json has no 'edges' array");
	sl_deps_free(&d);

	assert_int_equal(deps_mem("{\"edges\": []}", &d), 0);
	assert_true(d.has_edges);
	assert_null(d.edges_warning);
	assert_int_equal(d.n_edges, 0);
	assert_int_equal(sl_deps_find_task(&d, 1), -1);
	sl_deps_free(&d);

	assert_int_equal(sl_read_deps(src_path(FIX "B_level4_nodeps/deps.json"), &d), -ENOENT);

	/* the reference's broken.json as --deps-json (spec §7.4) */
	assert_int_equal(sl_read_deps(src_path(FIX "err_inputs/broken.json"), &d), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "broken.json: line 1, column 25: invalid JSON"));
}

/* sl_deps_cover(): fixture A's own deps.json lists every row; one of
 * another case (ids shifted), an empty one and an edges-only one do not,
 * and the shared warning says which (taskprof decision, issue-b 1-2). */
static void test_deps_cover(void **state)
{
	(void)state;
	struct sl_perf_data pd;
	struct sl_deps d;
	struct sl_deps_cover c;
	assert_int_equal(sl_read_perf_data(src_path(FIX "A_level4_full/l2_swimlane_records.json"), &pd), 0);
	assert_int_equal(sl_read_deps(src_path(FIX "A_level4_full/deps.json"), &d), 0);
	sl_deps_cover(&d, &pd, &c);
	assert_int_equal(c.rows, 7);
	assert_int_equal(c.unlisted, 0);
	assert_false(c.no_tasks);
	sl_deps_free(&d);

	/* lists t1 only: the other 6 rows (t2, r1t3 x2, t4 x2, t6) are not */
	assert_int_equal(deps_mem("{\"tasks\": [{\"task_id\": \"1\", \"kernel_ids\": [0, -1, -1]}],"
				  "\"edges\": []}", &d), 0);
	sl_deps_cover(&d, &pd, &c);
	assert_int_equal(c.unlisted, 6);
	assert_false(c.no_tasks);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	sl_deps_cover_warn(f, &c, "r.json", "d.json", "what is lost");
	fclose(f);
	assert_string_equal(buf, "Warning: 6 of 7 task rows of r.json have a task_id that d.json does not "
				 "list (is it from another case or run?): what is lost.\n");
	free(buf);
	sl_deps_free(&d);

	/* no tasks at all: empty, and edges only */
	static const char *const none[] = {"{\"tasks\": [], \"edges\": []}",
					   "{\"edges\": [{\"pred\": \"1\", \"succ\": \"2\"}]}"};
	for (int i = 0; i < 2; i++) {
		assert_int_equal(deps_mem(none[i], &d), 0);
		sl_deps_cover(&d, &pd, &c);
		assert_int_equal(c.unlisted, 7);
		assert_true(c.no_tasks);
		buf = NULL;
		f = open_memstream(&buf, &len);
		sl_deps_cover_warn(f, &c, "r.json", "d.json", "x");
		fclose(f);
		assert_string_equal(buf, "Warning: 7 of 7 task rows of r.json have a task_id that d.json "
					 "does not list (it lists no tasks: is it a dep_gen deps.json?): x.\n");
		free(buf);
		sl_deps_free(&d);
	}

	/* nothing to say: all listed, or no rows */
	c = (struct sl_deps_cover){.rows = 0, .unlisted = 0, .no_tasks = true};
	buf = NULL;
	f = open_memstream(&buf, &len);
	sl_deps_cover_warn(f, &c, "r.json", "d.json", "x");
	fclose(f);
	assert_string_equal(buf, "");
	free(buf);
	sl_perf_data_free(&pd);
}

/* Many tasks and edges: hash growth and lookups stay right. */
static void test_deps_many(void **state)
{
	(void)state;
	const int n = 20000;
	size_t cap = (size_t)n * 160 + 64;
	char *j = malloc(cap);
	assert_non_null(j);
	size_t pos = (size_t)snprintf(j, cap, "{\"tasks\":[");
	for (int i = 0; i < n; i++)
		pos += (size_t)snprintf(j + pos, cap - pos,
					"%s{\"task_id\":\"%llu\",\"kernel_ids\":[%d,-1,-1],\"block_num\":%d}",
					i ? "," : "", (unsigned long long)i << 20, i % 50, 1 + i % 3);
	pos += (size_t)snprintf(j + pos, cap - pos, "],\"edges\":[");
	for (int i = 0; i < 2 * n; i++)
		pos += (size_t)snprintf(j + pos, cap - pos, "%s{\"pred\":\"%d\",\"succ\":\"%d\"}",
					i ? "," : "", (i % n) / 2, (i % n) / 2 + 1);
	snprintf(j + pos, cap - pos, "]}");
	struct sl_deps d;
	assert_int_equal(deps_mem(j, &d), 0);
	assert_int_equal(d.n_tasks, n);
	assert_int_equal(d.n_edges, n / 2);
	for (int i = 0; i < n; i += 997) {
		long k = sl_deps_find_task(&d, (uint64_t)i << 20);
		assert_int_equal(k, i);
		assert_int_equal(d.kernel_ids[k][0], i % 50);
		assert_int_equal(sl_deps_block_num(&d, (uint64_t)i << 20), 1 + i % 3);
	}
	assert_int_equal(sl_deps_find_task(&d, 1), -1);
	sl_deps_free(&d);
	free(j);
}

/* ---- name maps ---------------------------------------------------------- */

static void test_fixture_a_name_map(void **state)
{
	(void)state;
	struct sl_name_map m;
	assert_int_equal(sl_read_name_map(src_path(FIX "A_level4_full/name_map_TestProbe_case1.json"),
					  &m), 0);
	assert_int_equal(m.n, 4);
	assert_string_equal(sl_name_map_get(&m, 0), "QK");
	assert_string_equal(sl_name_map_get(&m, 1), "SF");
	assert_string_equal(sl_name_map_get(&m, 2), "PV");
	assert_string_equal(sl_name_map_get(&m, 3), "UP");
	assert_null(sl_name_map_get(&m, 4)); /* on purpose (spec §7.2) */
	assert_null(sl_name_map_get(&m, -1));
	assert_string_equal(m.orchestrator_name, "ProbeOrch");
	sl_name_map_free(&m);
}

static int nm_mem(const char *json, struct sl_name_map *m)
{
	return sl_read_name_map_mem("nm.json", (const uint8_t *)json, strlen(json), m);
}

static void test_name_map_variants(void **state)
{
	(void)state;
	struct sl_name_map m;
	/* a flat map yields no names */
	assert_int_equal(nm_mem("{\"0\": \"QK\", \"1\": \"SF\"}", &m), 0);
	assert_int_equal(m.n, 0);
	assert_null(m.orchestrator_name);
	sl_name_map_free(&m);
	/* only str(int) keys can match */
	assert_int_equal(nm_mem("{\"orchestrator_name\": null, \"callable_id_to_name\": "
				"{\"10\": \"F\", \"00\": \"B\", \"-3\": \"C\", \"+1\": \"D\", \"x\": \"E\","
				"\" 2\": \"G\", \"-0\": \"H\"}}", &m), 0);
	assert_int_equal(m.n, 2);
	assert_int_equal(m.func_id[0], -3);
	assert_string_equal(sl_name_map_get(&m, -3), "C");
	assert_string_equal(sl_name_map_get(&m, 10), "F");
	assert_null(sl_name_map_get(&m, 0));
	assert_null(m.orchestrator_name);
	sl_name_map_free(&m);

	/* lone surrogate escapes, high or low, become one '?' each; a pair
	 * stays the character it encodes (U+1F600: F0 9F 98 80) */
	assert_int_equal(nm_mem("{\"orchestrator_name\": \"o\\udc00\", \"callable_id_to_name\": "
				"{\"1\": \"\\ud800lone\", \"2\": \"\\udc00x\\udfffy\", "
				"\"3\": \"\\ud83d\\ude00\"}}", &m), 0);
	assert_string_equal(sl_name_map_get(&m, 1), "?lone");
	assert_string_equal(sl_name_map_get(&m, 2), "?x?y");
	assert_string_equal(sl_name_map_get(&m, 3), "\xF0\x9F\x98\x80");
	assert_string_equal(m.orchestrator_name, "o?");
	sl_name_map_free(&m);

	char missing[4096];
	snprintf(missing, sizeof(missing), "%s", src_path(FIX "B_level4_nodeps/name_map.json"));
	assert_int_equal(sl_read_name_map(missing, &m), -ENOENT);
	char want[8192];
	snprintf(want, sizeof(want), "Func names JSON not found: %s", missing);
	assert_string_equal(tp_last_error(), want);
}

/* ---- adversarial inputs (F2 F3 F9 F11 F12 F14 F15) ----------------------- */

/* @rc is -EINVAL and the message is exactly "<file>: <want>". */
static void expect_err(int rc, const char *file, const char *want)
{
	char full[1024];
	snprintf(full, sizeof(full), "%s: %s", file, want);
	printf("  %s\n", tp_last_error());
	assert_int_equal(rc, -EINVAL);
	assert_string_equal(tp_last_error(), full);
}

static void test_adversarial_values(void **state)
{
	(void)state;
	struct sl_perf_data d;
	struct sl_deps dp;
	struct sl_name_map m;
	/* F2: core_to_thread is an int8 thread index, -1..127 */
	expect_err(read_mem(HDR("4") "\"metadata\": {}}", &d), "mem.json",
		   "metadata: duplicate key");
	expect_err(read_mem("{\"l2_swimlane_level\": 4, \"metadata\": {\"clock_freq_hz\": 1000, "
			    "\"core_to_thread\": [0, -1, 2147483647]}}", &d), "mem.json",
		   "metadata.core_to_thread[2]: integer 2147483647 out of range (expected -1..127)");
	expect_err(read_mem("{\"l2_swimlane_level\": 4, \"metadata\": {\"clock_freq_hz\": 1000, "
			    "\"core_to_thread\": [-2]}}", &d), "mem.json",
		   "metadata.core_to_thread[0]: integer -2 out of range (expected -1..127)");
	assert_int_equal(read_mem("{\"l2_swimlane_level\": 4, \"metadata\": {\"clock_freq_hz\": 1000, "
				  "\"core_to_thread\": [-1, 127]}, \"aicore_tasks\": [], \"aicpu_tasks\": []}",
				  &d), 0);
	assert_int_equal(d.n_core_to_thread, 2);
	assert_int_equal(d.core_to_thread[1], 127);
	sl_perf_data_free(&d);
	/* F9: core_types strings are exactly "aic" or "aiv" */
	expect_err(read_mem("{\"l2_swimlane_level\": 1, \"metadata\": {\"clock_freq_hz\": 1000, "
			    "\"core_types\": [\"aic\", \"AIV\"]}}", &d), "mem.json",
		   "metadata.core_types[1]: expected \"aic\" or \"aiv\", got another string");
	/* F11: every repeated key is an error, at any depth */
	expect_err(read_mem("{\"l2_swimlane_level\": 1, \"metadata\": {\"clock_freq_hz\": 1000, "
			    "\"clock_freq_hz\": 2000}}", &d), "mem.json",
		   "metadata.clock_freq_hz: duplicate key");
	expect_err(read_mem(HDR("4") "\"aicpu_scheduler_phases\": [[{\"kind\": \"complete\", "
			    "\"kind\": \"fanout\"}]]}", &d), "mem.json",
		   "aicpu_scheduler_phases[0][0].kind: duplicate key");
	expect_err(deps_mem("{\"edges\": [{\"pred\": 1, \"succ\": 2, \"pred\": 3}]}", &dp),
		   "deps.json", "edges[0].pred: duplicate key");
	expect_err(nm_mem("{\"callable_id_to_name\": {\"10\": \"A\", \"10\": \"F\"}}", &m),
		   "nm.json", "callable_id_to_name.10: duplicate key");
	/* past the 8 keys of the plain scan: 200 distinct ids read, then a
	 * repeat of the 3rd and of the 150th is caught */
	for (int dup = -1; dup < 2; dup++) {
		char big[8192];
		size_t o = (size_t)snprintf(big, sizeof(big), "{\"callable_id_to_name\": {");
		for (int i = 0; i < 200; i++)
			o += (size_t)snprintf(big + o, sizeof(big) - o, "%s\"%d\": \"n%d\"", i ? ", " : "",
					      i, i);
		if (dup >= 0)
			o += (size_t)snprintf(big + o, sizeof(big) - o, ", \"%d\": \"again\"",
					      dup ? 150 : 2);
		snprintf(big + o, sizeof(big) - o, "}}");
		if (dup < 0) {
			assert_int_equal(nm_mem(big, &m), 0);
			assert_int_equal(m.n, 200);
			assert_string_equal(sl_name_map_get(&m, 199), "n199");
			sl_name_map_free(&m);
		} else {
			expect_err(nm_mem(big, &m), "nm.json",
				   dup ? "callable_id_to_name.150: duplicate key"
				       : "callable_id_to_name.2: duplicate key");
		}
	}
	/* F12: end before start, including end 0 after a start */
	expect_err(read_mem(HDR("1") "\"aicore_tasks\": [[0, 1, 1, 10, 20], [0, 2, 2, 7, 5]]}", &d),
		   "mem.json", "aicore_tasks[1]: end_cycles 5 < start_cycles 7");
	expect_err(read_mem(HDR("2") "\"aicore_tasks\": [[0, 1, 1, 10, 20]], "
			    "\"aicpu_tasks\": [[0, 1, 9, 0]]}", &d), "mem.json",
		   "aicpu_tasks[0]: finish_cycles 0 < dispatch_cycles 9");
	expect_err(read_mem(HDR("4") "\"aicpu_scheduler_phases\": [[{\"kind\": \"complete\", "
			    "\"start_cycles\": 7, \"end_cycles\": 5}]]}", &d), "mem.json",
		   "aicpu_scheduler_phases[0][0]: end_cycles 5 < start_cycles 7");
	expect_err(read_mem(HDR("4") "\"aicpu_orchestrator_phases\": [[{\"submit_idx\": 1, "
			    "\"start_cycles\": 7}]]}", &d), "mem.json",
		   "aicpu_orchestrator_phases[0][0]: end_cycles 0 < start_cycles 7");
	/* F14: a name with a NUL; a fractional block_num */
	expect_err(nm_mem("{\"callable_id_to_name\": {\"1\": \"a\\u0000b\"}}", &m), "nm.json",
		   "callable_id_to_name.1: expected a name, got a string with a NUL character");
	expect_err(deps_mem("{\"tasks\": [{\"task_id\": 1, \"block_num\": 2.5}], \"edges\": []}", &dp),
		   "deps.json", "tasks[0].block_num: expected an integer, got 2.5");
	/* F15: any level out of 1..4, however large, has the one message */
	expect_err(read_mem("{\"l2_swimlane_level\": 18446744073709551615}", &d), "mem.json",
		   "l2_swimlane_level: Unsupported l2_swimlane_level: 18446744073709551615 "
		   "(expected 1, 2, 3, or 4)");
	expect_err(read_mem("{\"l2_swimlane_level\": 5}", &d), "mem.json",
		   "l2_swimlane_level: Unsupported l2_swimlane_level: 5 (expected 1, 2, 3, or 4)");
}

/* F3: a FIFO (no writer) is refused at once, never waited on */
static void test_fifo_refused(void **state)
{
	(void)state;
	char dir[] = "/tmp/tp_reader_fifo_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof(path), "%s/in.json", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	char want[256];
	snprintf(want, sizeof(want), "%s: not a regular file (a FIFO)", path);
	struct sl_perf_data d;
	struct sl_deps dp;
	struct sl_name_map m;
	assert_int_equal(sl_read_perf_data(path, &d), -EINVAL);
	assert_string_equal(tp_last_error(), want);
	assert_int_equal(sl_read_deps(path, &dp), -EINVAL);
	assert_string_equal(tp_last_error(), want);
	assert_int_equal(sl_read_name_map(path, &m), -EINVAL);
	assert_string_equal(tp_last_error(), want);
	unlink(path);
	rmdir(dir);
}

/* ---- tdisp -------------------------------------------------------------- */

static void test_tdisp(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(sl_tdisp(5, b, sizeof(b)), "t5");
	assert_string_equal(sl_tdisp(4294967299ull, b, sizeof(b)), "r1t3");
	assert_string_equal(sl_tdisp(0, b, sizeof(b)), "t0");
	/* the display masks the ring with 0xFF */
	assert_string_equal(sl_tdisp((0x1ffull << 32) | 2, b, sizeof(b)), "r255t2");
	assert_string_equal(sl_tdisp((0x100ull << 32) | 2, b, sizeof(b)), "t2");
	char small[4];
	assert_string_equal(sl_tdisp(4294967299ull, small, sizeof(small)), "r1t");
}

/* ---- the malformed corpus ----------------------------------------------- */

static void test_malformed_corpus(void **state)
{
	(void)state;
	const char *dir = src_path("tests/conformance/malformed");
	char readme[4096];
	snprintf(readme, sizeof(readme), "%s/README.md", dir);
	FILE *f = fopen(readme, "r");
	assert_non_null(f);
	char line[1024];
	int checked = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "- `", 3) != 0)
			continue;
		char *name = line + 3;
		char *e = strchr(name, '`');
		char *k = strstr(line, "key: `");
		assert_non_null(e);
		assert_non_null(k);
		*e = '\0';
		k += 6;
		char *ke = strchr(k, '`');
		assert_non_null(ke);
		*ke = '\0';
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		int rc;
		if (strncmp(name, "records_", 8) == 0) {
			struct sl_perf_data d;
			rc = sl_read_perf_data(path, &d);
		} else if (strncmp(name, "deps_", 5) == 0) {
			struct sl_deps d;
			rc = sl_read_deps(path, &d);
		} else {
			assert_int_equal(strncmp(name, "name_map_", 9), 0);
			struct sl_name_map m;
			rc = sl_read_name_map(path, &m);
		}
		if (rc != -EINVAL)
			fail_msg("%s: rc %d, expected -EINVAL", name, rc);
		const char *msg = tp_last_error();
		char want[8192];
		snprintf(want, sizeof(want), "%s: %s: ", path, k);
		if (strncmp(msg, want, strlen(want)) != 0)
			fail_msg("%s: message \"%s\" does not start with \"%s\"", name, msg, want);
		assert_null(strchr(msg, '\n'));
		checked++;
	}
	fclose(f);
	/* every file in the folder is listed */
	DIR *dd = opendir(dir);
	assert_non_null(dd);
	int files = 0;
	struct dirent *de;
	while ((de = readdir(dd)))
		files += de->d_name[0] != '.' && strcmp(de->d_name, "README.md") != 0;
	closedir(dd);
	assert_int_equal(checked, files);
	assert_true(checked >= 30);
}

int main(void)
{
	snprintf(tree, sizeof(tree), "%s", __FILE__);
	for (int up = 0; up < 3; up++) {
		char *s = strrchr(tree, '/');
		if (s)
			*s = '\0';
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_a_records),
		cmocka_unit_test(test_fixture_b_same_records),
		cmocka_unit_test(test_fixture_c_level1),
		cmocka_unit_test(test_err_inputs),
		cmocka_unit_test(test_mem_u64_and_variants),
		cmocka_unit_test(test_far_timestamps),
		cmocka_unit_test(test_order_warning),
		cmocka_unit_test(test_mem_unmatched_top3),
		cmocka_unit_test(test_mem_errors),
		cmocka_unit_test(test_file_chunks),
		cmocka_unit_test(test_file_long_value),
		cmocka_unit_test(test_fixture_a_deps),
		cmocka_unit_test(test_deps_variants),
		cmocka_unit_test(test_deps_many),
		cmocka_unit_test(test_deps_cover),
		cmocka_unit_test(test_fixture_a_name_map),
		cmocka_unit_test(test_name_map_variants),
		cmocka_unit_test(test_tdisp),
		cmocka_unit_test(test_adversarial_values),
		cmocka_unit_test(test_fifo_refused),
		cmocka_unit_test(test_malformed_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
