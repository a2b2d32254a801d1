/* SPDX-License-Identifier: MIT */
/*
 * test_collectors_swimlane.c — the L2 swimlane collector end to end
 * (seed 002 §3.1, §5; spec/swimlane-format.md §1):
 *
 *  - the exact text layout of spec §1.8: fixture A replayed through the
 *    device half and exported byte for byte;
 *  - levels 1..4 on paged_attention CaseSmall1 and synthetic, on a2a3sim
 *    and a5sim: exactly the level's keys, one row per executed subtask per
 *    (core_id, reg_task_id) in aicore_tasks and aicpu_tasks, as many rows
 *    as the engine dispatched subtasks, reconcile with 0 dropped;
 *  - synthetic level 4: dummy_task / predicated_skip markers with task
 *    ids, dispatch records with pop_hit / pop_miss, one orch record per
 *    submit;
 *  - AICore buffer rotation: > 1024 tasks on one core lose nothing, also
 *    when the rotating dispatch comes before the previous task's FIN;
 *  - host_build_graph, --rounds 2, and a run with no AICore task (no file).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <sys/resource.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "base/error.h"
#include "collectors/swimlane/swl_host.h"
#include "runtime/orch.h"
#include "taskprof/worker.h"
#include "unit_helpers.h"

/* ---- small helpers ---------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	if (b)
		b[n] = 0;
	fclose(f);
	if (len)
		*len = (size_t)n;
	return b;
}

static yajl_val load_json(const char *path)
{
	char *t = slurp(path, NULL);
	assert_non_null(t);
	char err[256];
	yajl_val v = yajl_tree_parse(t, err, sizeof(err));
	if (!v)
		fail_msg("%s: %s", path, err);
	free(t);
	return v;
}

static yajl_val key(yajl_val o, const char *k)
{
	const char *p[] = { k, NULL };
	return yajl_tree_get(o, p, yajl_t_any);
}

static long long ival(yajl_val v)
{
	assert_non_null(v);
	assert_true(YAJL_IS_INTEGER(v));
	return YAJL_GET_INTEGER(v);
}

static size_t alen(yajl_val v)
{
	assert_non_null(v);
	assert_true(YAJL_IS_ARRAY(v));
	return YAJL_GET_ARRAY(v)->len;
}

static yajl_val at(yajl_val v, size_t i)
{
	return YAJL_GET_ARRAY(v)->values[i];
}

static void fixture_path(char *buf, size_t len, const char *name)
{
	const char *f = __FILE__;
	const char *slash = strrchr(f, '/');
	int dl = slash ? (int)(slash - f) : 1;
	snprintf(buf, len, "%.*s/../conformance/fixtures/swimlane-probe/A_level4_full/%s", dl,
		 slash ? f : ".", name);
}

static uint32_t kind_of(const char *s)
{
	static const struct { const char *n; uint32_t k; } t[] = {
		{"complete", SWL_SCHED_COMPLETE}, {"dispatch", SWL_SCHED_DISPATCH},
		{"release", SWL_SCHED_RELEASE}, {"dummy", SWL_SCHED_DUMMY},
		{"early_dispatch", SWL_SCHED_EARLY_DISPATCH}, {"resolve", SWL_SCHED_RESOLVE},
		{"dummy_task", SWL_SCHED_DUMMY_TASK}, {"drain", SWL_SCHED_DRAIN},
		{"drain_prepare", SWL_SCHED_DRAIN_PREPARE},
		{"drain_publish", SWL_SCHED_DRAIN_PUBLISH}, {"async_poll", SWL_SCHED_ASYNC_POLL},
		{"predicated_skip", SWL_SCHED_PREDICATED_SKIP},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].n, s))
			return t[i].k;
	fail_msg("unknown kind %s", s);
	return 3;
}

/* ---- §1.8 layout: replay fixture A ------------------------------------ */

/* @shards: the pool's collector shards (0: the machine's default); with
 * 4, each AICPU thread's buffers go through their own shard and log. */
static void fixture_a_layout(uint32_t shards)
{
	char path[4096];
	fixture_path(path, sizeof(path), "l2_swimlane_records.json");
	size_t want_len;
	char *want = slurp(path, &want_len);
	assert_non_null(want);
	yajl_val j = load_json(path);
	yajl_val md = key(j, "metadata");
	yajl_val c2t = key(md, "core_to_thread");
	const int nc = (int)ival(key(md, "num_cores"));
	int8_t owner[8];
	for (int i = 0; i < nc; i++)
		owner[i] = (int8_t)ival(at(c2t, (size_t)i));
	struct swl_config cfg = {
		.level = 4, .shadow = false, .clock_freq_hz = 50000000, .max_threads = 4,
		.num_cores = nc, .block_dim = 2, .num_threads = 4, .orch_thread = 3,
		.core_owner = owner, .max_shards = shards,
	};
	struct swl_collector *c = swl_open(&cfg);
	assert_non_null(c);
	assert_int_equal(swl_start(c), 0);
	struct swl_dev *d = swl_dev(c);
	/* The host thread plays the device: dispatch, AICore record, FIN,
	 * in the fixture's per-core row order. */
	yajl_val ac = key(j, "aicore_tasks"), ap = key(j, "aicpu_tasks");
	assert_int_equal(alen(ac), alen(ap));
	for (size_t i = 0; i < alen(ac); i++) {
		yajl_val r = at(ac, i), p = at(ap, i);
		int core = (int)ival(at(r, 0));
		uint32_t reg = (uint32_t)ival(at(r, 2));
		assert_int_equal(ival(at(p, 0)), core);
		assert_int_equal(ival(at(p, 1)), reg);
		uint64_t s = (uint64_t)ival(at(r, 3)), e = (uint64_t)ival(at(r, 4));
		uint64_t r2s = (uint64_t)ival(at(r, 5));
		swl_dev_on_dispatch(d, owner[core], core, reg, (uint64_t)ival(at(p, 2)));
		swl_dev_on_aicore_receive(d, core, reg);
		swl_dev_on_aicore_task(d, core, (uint64_t)ival(at(r, 1)), reg, s - r2s, s, e);
		swl_dev_on_fin(d, owner[core], core, reg, (uint64_t)ival(at(p, 2)),
			       (uint64_t)ival(at(p, 3)));
	}
	yajl_val sp = key(j, "aicpu_scheduler_phases");
	for (size_t t = 0; t < alen(sp); t++) {
		yajl_val th = at(sp, t);
		for (size_t k = 0; k < alen(th); k++) {
			yajl_val r = at(th, k);
			uint32_t kind = kind_of(YAJL_GET_STRING(key(r, "kind")));
			uint32_t u0 = 0, u1 = 0;
			if (kind == SWL_SCHED_DISPATCH) {
				u0 = (uint32_t)ival(key(r, "pop_hit"));
				u1 = (uint32_t)ival(key(r, "pop_miss"));
			} else if (key(r, "task_id")) {
				uint64_t id = (uint64_t)ival(key(r, "task_id"));
				u0 = (uint32_t)id;
				u1 = (uint32_t)(id >> 32);
			}
			int16_t ds[3], de[3];
			for (int q = 0; q < 3; q++) {
				ds[q] = (int16_t)ival(at(key(r, "shared_at_start"), (size_t)q));
				de[q] = (int16_t)ival(at(key(r, "shared_at_end"), (size_t)q));
			}
			swl_dev_on_sched_phase(d, (int)t, kind, (uint64_t)ival(key(r, "start_cycles")),
					       (uint64_t)ival(key(r, "end_cycles")),
					       (uint64_t)ival(key(r, "loop_iter")),
					       (uint32_t)ival(key(r, "tasks_processed")), u0, u1, ds,
					       de);
		}
	}
	yajl_val op = at(key(j, "aicpu_orchestrator_phases"), 0);
	for (size_t k = 0; k < alen(op); k++) {
		yajl_val r = at(op, k);
		swl_dev_on_orch_submit(d, (uint64_t)ival(key(r, "task_id")),
				       (uint32_t)ival(key(r, "submit_idx")),
				       (uint64_t)ival(key(r, "start_cycles")),
				       (uint64_t)ival(key(r, "end_cycles")));
	}
	for (int t = 0; t < 4; t++)
		swl_dev_flush_thread(d, t);
	swl_dev_flush_orch(d);
	swl_stop(c);
	struct tp_reconcile rec;
	assert_int_equal(swl_reconcile(c, &rec), 0);
	assert_int_equal(rec.pool[SWL_KIND_AICORE_TASK].collected, alen(ac));
	assert_int_equal(rec.pool[SWL_KIND_AICPU_TASK].collected, alen(ap));
	char *dir = uh_mkdtemp();
	if (!dir)
		fail_msg("no temporary directory");
	assert_int_equal(swl_export(c, dir), 0);
	char out[4200];
	snprintf(out, sizeof(out), "%s/%s", dir ? dir : ".", SWL_RECORDS_FILE);
	size_t got_len;
	char *got = slurp(out, &got_len);
	assert_non_null(got);
	assert_int_equal(got_len, want_len);
	assert_string_equal(got, want);
	free(got);
	free(want);
	uh_rm_rf(dir);
	swl_close(c);
	yajl_tree_free(j);
}

static void test_fixture_a_layout(void **state)
{
	(void)state;
	fixture_a_layout(0);
}

/* Four collector shards, each with its own log: the file is the same. */
static void test_fixture_a_layout_4_shards(void **state)
{
	(void)state;
	fixture_a_layout(4);
}

/* ---- rotation under dual issue, step by step ----------------------------- */

/* The AICPU dispatches task 1025 (as the pending task) while task 1024,
 * the last of the first AICore buffer, still runs: the rotation at 1025
 * must neither move 1024's record into the new buffer nor publish the old
 * buffer before 1024's FIN. The host thread plays both sides. */
/* Export @c's records into a new temporary folder (*@dir, for
 * uh_rm_rf) and parse the records file. */
static yajl_val export_records(struct swl_collector *c, char **dir)
{
	*dir = uh_mkdtemp();
	if (!*dir)
		fail_msg("no temporary directory");
	assert_int_equal(swl_export(c, *dir), 0);
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", *dir ? *dir : ".", SWL_RECORDS_FILE);
	return load_json(path);
}

/* Play @n tasks on @core (owned by thread 0) under dual issue: task k is
 * dispatched and received, and its record and FIN come after the dispatch
 * of k + 1. Task @skipped (0: none) writes no AICore record. The thread
 * is flushed at the end. */
static void play_dual_issue(struct swl_dev *d, int core, uint32_t n, uint32_t skipped)
{
	uint64_t ts = 1000;
	swl_dev_on_dispatch(d, 0, core, 1, ts);
	swl_dev_on_aicore_receive(d, core, 1);
	for (uint32_t k = 1; k <= n; k++) {
		if (k < n)
			swl_dev_on_dispatch(d, 0, core, k + 1, ts + 1);
		if (k != skipped)
			swl_dev_on_aicore_task(d, core, 100 + k, k, ts + 2, ts + 3, ts + 4);
		swl_dev_on_fin(d, 0, core, k, ts + 1, ts + 5);
		if (k < n)
			swl_dev_on_aicore_receive(d, core, k + 1);
		ts += 10;
	}
	swl_dev_flush_thread(d, 0);
}

static void test_rotation_dual_issue(void **state)
{
	(void)state;
	int8_t owner[3] = { 0, 0, 0 };
	struct swl_config cfg = {
		.level = 2, .clock_freq_hz = 50000000, .max_threads = 4, .num_cores = 3,
		.block_dim = 1, .num_threads = 2, .orch_thread = 1, .core_owner = owner,
	};
	struct swl_collector *c = swl_open(&cfg);
	assert_non_null(c);
	assert_int_equal(swl_start(c), 0);
	struct swl_dev *d = swl_dev(c);
	const uint32_t n = 2 * SWL_AICORE_BUFFER_SIZE + 3;
	play_dual_issue(d, 0, n, 0);
	swl_stop(c);
	struct tp_reconcile rec;
	assert_int_equal(swl_reconcile(c, &rec), 0);
	assert_int_equal(rec.pool[SWL_KIND_AICORE_TASK].total, n);
	assert_int_equal(rec.pool[SWL_KIND_AICORE_TASK].collected, n);
	uint64_t na = 0, np = 0;
	swl_counts(c, &na, &np, NULL, NULL);
	assert_int_equal(na, n); /* every slot written: no row lost or empty */
	assert_int_equal(np, n);
	char *dir = NULL;
	yajl_val j = export_records(c, &dir);
	yajl_val ac = key(j, "aicore_tasks");
	assert_int_equal(alen(ac), n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(ival(at(at(ac, i), 2)), (long long)i + 1);
		assert_int_equal(ival(at(at(ac, i), 1)), 101 + (long long)i);
	}
	yajl_tree_free(j);
	uh_rm_rf(dir);
	swl_close(c);
}

/* a5 staging ring under dual issue: each FIN's slot is committed at the
 * dispatch that reuses it (two tokens on) or at the thread's flush, the
 * older token first; a slot the AICore did not write for its token (it
 * still holds the token two before) is one mismatch, not a record. */
static void test_stage_ring_dual_issue_a5(void **state)
{
	(void)state;
	int8_t owner[3] = { 0, 0, 0 };
	struct swl_config cfg = {
		.level = 2, .shadow = true, .clock_freq_hz = 50000000, .max_threads = 7,
		.num_cores = 3, .block_dim = 1, .num_threads = 2, .orch_thread = 1,
		.core_owner = owner,
	};
	struct swl_collector *c = swl_open(&cfg);
	assert_non_null(c);
	assert_int_equal(swl_start(c), 0);
	struct swl_dev *d = swl_dev(c);
	const uint32_t n = 2 * SWL_AICORE_BUFFER_SIZE + 3, skipped = 700;
	/* FINs n - 1 and n are still staged at the end: the flush commits
	 * them. */
	play_dual_issue(d, 1, n, skipped);
	swl_stop(c);
	struct tp_reconcile rec;
	assert_int_equal(swl_reconcile(c, &rec), 0);
	assert_int_equal(rec.pool[SWL_KIND_AICORE_TASK].total, n);
	assert_int_equal(rec.pool[SWL_KIND_AICORE_TASK].collected, n - 1);
	assert_int_equal(rec.pool[SWL_KIND_AICORE_TASK].mismatch, 1);
	assert_int_equal(rec.pool[SWL_KIND_AICPU_TASK].collected, n);
	char *dir = NULL;
	yajl_val j = export_records(c, &dir);
	yajl_val ac = key(j, "aicore_tasks");
	assert_int_equal(alen(ac), n - 1);
	for (size_t i = 0; i < n - 1; i++) {
		long long want = (long long)i + 1 + (i + 1 >= skipped);
		assert_int_equal(ival(at(at(ac, i), 0)), 1);
		assert_int_equal(ival(at(at(ac, i), 2)), want);
		assert_int_equal(ival(at(at(ac, i), 1)), 100 + want);
	}
	yajl_tree_free(j);
	uh_rm_rf(dir);
	swl_close(c);
}

/* ---- host out of memory: lost records are counted, not collected ------- */

/* In a child whose address space is capped just above its size once the
 * pool runs, the collector cannot make room for the records it receives:
 * reconcile must count them as lost by the host (TP_HOST_LOST_COLLECTOR),
 * still balance, and swl_reconcile must fail. Exit status 0: pass; other:
 * the check that failed. */
static int host_oom_child(void)
{
	/* One malloc arena with a fixed mmap threshold (before any thread
	 * exists): a thread arena's reserved heap, or a threshold raised by
	 * frees, would serve the collector's 1 MiB from address space the
	 * process already has. */
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	int8_t owner[3] = { 0, 0, 0 };
	struct swl_config cfg = {
		.level = 2, .clock_freq_hz = 50000000, .max_threads = 4, .num_cores = 3,
		.block_dim = 1, .num_threads = 2, .orch_thread = 1, .core_owner = owner,
		.no_log_prefault = true, /* the log must grow after the cap */
	};
	struct swl_collector *c = swl_open(&cfg);
	if (!c || swl_start(c) != 0)
		return 3;
	malloc_trim(0);
	size_t now = uh_vm_size();
	if (!now)
		return 4;
	/* Less than the collector's first 1 MiB log, whether it asks for its
	 * 256 MiB reservation or falls back to the heap. */
	struct rlimit rl = { .rlim_cur = now + 256 * 1024, .rlim_max = now + 256 * 1024 };
	if (setrlimit(RLIMIT_AS, &rl) != 0)
		return 5;
	struct swl_dev *d = swl_dev(c);
	const uint32_t n = 2 * SWL_AICORE_BUFFER_SIZE + 5; /* three AICore buffers */
	for (uint32_t k = 1; k <= n; k++) {
		swl_dev_on_dispatch(d, 0, 0, k, 10 * k);
		swl_dev_on_aicore_receive(d, 0, k);
		swl_dev_on_aicore_task(d, 0, k, k, 10 * k + 1, 10 * k + 2, 10 * k + 3);
		swl_dev_on_fin(d, 0, 0, k, 10 * k, 10 * k + 4);
	}
	swl_dev_flush_thread(d, 0);
	swl_stop(c);
	struct tp_reconcile rec;
	int rc = swl_reconcile(c, &rec);
	if (rc == 0)
		return 6; /* the loss must fail the collection */
	uint64_t lost = 0, total = 0;
	for (int k = 0; k < rec.kinds; k++) {
		if (!rec.pool[k].ok)
			return 7; /* every record collected or counted as lost */
		lost += rec.pool[k].dropped;
		total += rec.pool[k].total;
	}
	if (total != 2 * (uint64_t)n)
		return 8;
	if (!rec.pool[0].host_lost_by_cause[TP_HOST_LOST_COLLECTOR] ||
	    rec.pool[0].host_lost_by_cause[TP_HOST_LOST_COLLECTOR] > lost)
		return 9;
	swl_close(c);
	return 0;
}

/* swl_start() faults in the collector's log before the device runs (as
 * many bytes as the pool holds at open); with no_log_prefault it does
 * not. Measured as the growth of this process's resident memory across
 * swl_start() (the pool itself is faulted in by swl_open()). */
static size_t start_growth(bool no_prefault, size_t *pool_rss)
{
	int8_t owner[24];
	for (int i = 0; i < 24; i++)
		owner[i] = (int8_t)(i % 3);
	struct swl_config cfg = {
		.level = 4, .clock_freq_hz = 50000000, .max_threads = 4, .num_cores = 24,
		.block_dim = 8, .num_threads = 4, .orch_thread = 3, .core_owner = owner,
		.max_shards = 1, .no_log_prefault = no_prefault,
	};
	size_t r0 = uh_rss();
	struct swl_collector *c = swl_open(&cfg);
	assert_non_null(c);
	size_t r1 = uh_rss();
	assert_int_equal(swl_start(c), 0);
	size_t r2 = uh_rss();
	swl_stop(c);
	swl_close(c);
	*pool_rss = r1 - r0;
	return r2 - r1;
}

static void test_log_prefault_before_start(void **state)
{
	(void)state;
	size_t pool = 0, pool2 = 0;
	size_t with = start_growth(false, &pool);
	size_t without = start_growth(true, &pool2);
	/* The pool: 24 cores' buffers, 23.4 MB, faulted in at open (more
	 * resident memory under a sanitizer: its shadow of what was written). */
	assert_true(pool > 16u << 20);
	/* The log: the pool's size more (25 MB, in 2 MiB pages), resident
	 * before any record; populated by the kernel, so no shadow. */
	assert_true(with > 16u << 20);
	assert_true(without < (2u << 20));
}

static void test_host_oom_counts_lost(void **state)
{
	(void)state;
	if (UH_UNDER_SANITIZER)
		skip(); /* the sanitizers' shadow mappings need the address space */
	/* A fresh process (not a fork of this one): only the main malloc
	 * arena, no reserved thread-arena heap for the cap to miss. */
	char out[64];
	assert_int_equal(uh_run_self("--host-oom-child", "TASKPROF_LOG_LEVEL", "error", out,
				     sizeof(out)),
			 0);
}

/* ---- callables of this test ------------------------------------------- */

enum { WIDE_FUNC_AIC = 0, WIDE_FUNC_AIV = 1 };

/* @scalars[0] independent AIC tasks (empty kernel), @scalars[1] dummy
 * tasks, in scopes of 512 so rings are reclaimed. */
static int wide_orch(struct tp_orch *o, const struct tp_case_args *args)
{
	uint64_t n = args->scalars[0], nd = args->scalars[1];
	int rc = 0;
	for (uint64_t i = 0; i < n + nd && !rc; i += 512) {
		if ((rc = tp_scope_begin(o)))
			break;
		for (uint64_t k = i; k < i + 512 && k < n + nd && !rc; k++) {
			struct tp_task_args a;
			tp_args_init(&a);
			rc = k < n ? tp_submit_aic(o, WIDE_FUNC_AIC, &a, NULL)
				   : tp_submit_dummy(o, &a, NULL);
		}
		int erc = tp_scope_end(o);
		rc = rc ? rc : erc;
	}
	return rc;
}

static int wide_gen(const struct tp_case *c, struct tp_case_args *a)
{
	const uint64_t *p = c->params;
	memset(a, 0, sizeof(*a));
	a->n_scalars = 2;
	a->scalars[0] = p[0];
	a->scalars[1] = p[1];
	return 0;
}

static const uint64_t p_rot[2] = { 5000, 0 };
static const uint64_t p_dummy[2] = { 0, 20 };
static const struct tp_case wide_cases[] = {
	{ .name = "Rotation", .params = p_rot, .generate = wide_gen },
	{ .name = "OnlyDummies", .params = p_dummy, .generate = wide_gen },
};
static const struct tp_case_kernel wide_kernels[] = {
	{ .func_id = WIDE_FUNC_AIC, .name = "nop_c", .core_type = TP_CASE_AIC, .fn = NULL },
	{ .func_id = WIDE_FUNC_AIV, .name = "nop_v", .core_type = TP_CASE_AIV, .fn = NULL },
};
static const struct tp_callable wide_callable = {
	.name = "wide", .orch = wide_orch, .kernels = wide_kernels, .n_kernels = 2,
	.cases = wide_cases, .n_cases = 2, .default_case = "Rotation",
};

/* ---- one run + checks ------------------------------------------------- */

struct run_out {
	struct tp_run_result r;
	yajl_val j;      /* NULL when no records file */
	char *log;       /* stderr of the run */
	char *dir;
};

static void run_case(struct run_out *o, const char *plat, const struct tp_callable *cal,
		     const char *case_name, int level, int block_dim, const char *runtime,
		     int rounds)
{
	memset(o, 0, sizeof(*o));
	o->dir = uh_mkdtemp();
	if (!o->dir)
		fail_msg("no temporary directory");
	struct tp_worker_config cfg = {
		.platform = plat, .runtime = runtime, .block_dim = block_dim, .rounds = rounds,
		.output_root = o->dir, .l2_swimlane_level = level,
	};
	struct tp_worker *w = tp_worker_open(&cfg);
	assert_non_null(w);
	struct uh_capture cap;
	assert_int_equal(uh_capture_stderr_begin(&cap), 0);
	int rc = tp_worker_run(w, cal, case_name, &o->r);
	o->log = uh_capture_stderr_end(&cap);
	tp_worker_close(w);
	if (rc)
		fail_msg("%s %s on %s level %d: %s", cal->name, case_name, plat, level,
			 tp_last_error());
	assert_true(o->r.pass);
	if (o->r.swimlane_records[0])
		o->j = load_json(o->r.swimlane_records);
}

static void run_free(struct run_out *o)
{
	if (o->j)
		yajl_tree_free(o->j);
	free(o->log);
	uh_rm_rf(o->dir);
}

/* Every pool's reconcile line shows 0 dropped and 0 mismatches. */
static void check_reconcile(const struct run_out *o)
{
	static const char *pools[] = { "aicpu_task", "sched_phase", "orch_phase", "aicore_task" };
	for (int k = 0; k < 4; k++) {
		char pat[96];
		snprintf(pat, sizeof(pat), "L2Swimlane reconcile [%s]: collected=", pools[k]);
		const char *l = strstr(o->log, pat);
		if (!l)
			fail_msg("no reconcile line for %s in:\n%s", pools[k], o->log);
		const char *eol = strchr(l, '\n');
		char line[512];
		snprintf(line, sizeof(line), "%.*s", eol ? (int)(eol - l) : (int)strlen(l), l);
		if (!strstr(line, "+ dropped=0 + mismatch=0 =="))
			fail_msg("records lost: %s", line);
	}
}

/* (core, reg) pairs of a task stream: unique, sorted copy in *out. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t *pairs(yajl_val rows, int reg_col, size_t *n)
{
	*n = alen(rows);
	uint64_t *p = calloc(*n + 1, sizeof(*p));
	for (size_t i = 0; i < *n; i++) {
		yajl_val r = at(rows, i);
		p[i] = (uint64_t)ival(at(r, 0)) << 32 | (uint64_t)ival(at(r, (size_t)reg_col));
	}
	qsort(p, *n, sizeof(*p), cmp_u64);
	for (size_t i = 1; i < *n; i++)
		if (p[i] == p[i - 1])
			fail_msg("(core %llu, reg_task_id %llu) appears twice",
				 (unsigned long long)(p[i] >> 32),
				 (unsigned long long)(p[i] & 0xffffffffu));
	return p;
}

/* The level's keys (spec §1.2), the row counts and the join. */
static void check_level(const struct run_out *o, int level, int max_threads, int orch_slot,
			bool has_orch)
{
	yajl_val j = o->j;
	assert_non_null(j);
	assert_int_equal(ival(key(j, "l2_swimlane_level")), level);
	const char *keys[] = { "l2_swimlane_level", "metadata", "aicore_tasks", "aicpu_tasks",
			       "aicpu_scheduler_phases", "aicpu_orchestrator_phases" };
	size_t nkeys = level >= 4 && has_orch ? 6 : level >= 3 ? 5 : 4;
	assert_int_equal(YAJL_GET_OBJECT(j)->len, nkeys);
	for (size_t k = 0; k < nkeys; k++)
		assert_string_equal(YAJL_GET_OBJECT(j)->keys[k], keys[k]);
	yajl_val md = key(j, "metadata");
	assert_int_equal(YAJL_GET_OBJECT(md)->len, level >= 3 ? 4 : 3);
	assert_int_equal(alen(key(md, "core_types")), ival(key(md, "num_cores")));

	size_t na, np;
	uint64_t *a = pairs(key(j, "aicore_tasks"), 2, &na);
	assert_int_equal(na, o->r.subtasks);
	for (size_t i = 0; i < alen(key(j, "aicore_tasks")); i++) {
		yajl_val r = at(key(j, "aicore_tasks"), i);
		assert_int_equal(alen(r), 6);
		assert_true(ival(at(r, 3)) > 0 && ival(at(r, 4)) >= ival(at(r, 3)));
	}
	uint64_t *p = pairs(key(j, "aicpu_tasks"), 1, &np);
	if (level == 1) {
		assert_int_equal(np, 0);
	} else {
		assert_int_equal(np, na);
		assert_memory_equal(a, p, na * sizeof(*a)); /* the join is complete */
	}
	free(a);
	free(p);
	if (level >= 3) {
		yajl_val sp = key(j, "aicpu_scheduler_phases");
		assert_int_equal(alen(sp), max_threads);
		if (orch_slot >= 0)
			assert_int_equal(alen(at(sp, (size_t)orch_slot)), 0);
		assert_int_equal(alen(key(md, "core_to_thread")), ival(key(md, "num_cores")));
	}
	if (level >= 4 && has_orch) {
		yajl_val op = key(j, "aicpu_orchestrator_phases");
		assert_int_equal(alen(op), 1);
		/* One record per submit: every task of the run was submitted. */
		assert_int_equal(alen(at(op, 0)), o->r.tasks);
	}
	check_reconcile(o);
}

static void levels_on(const char *plat, int max_threads)
{
	for (int level = 1; level <= 4; level++) {
		struct run_out o;
		run_case(&o, plat, tp_callable_find("paged_attention"), "CaseSmall1", level, 0, NULL,
			 1);
		check_level(&o, level, max_threads, 3, true);
		run_free(&o);
		run_case(&o, plat, tp_callable_find("synthetic"), "Default", level, 0, NULL, 1);
		check_level(&o, level, max_threads, 3, true);
		run_free(&o);
	}
}

static void test_levels_a2a3sim(void **state)
{
	(void)state;
	levels_on("a2a3sim", 4);
}

static void test_levels_a5sim(void **state)
{
	(void)state;
	levels_on("a5sim", 7);
}

/* Synthetic level 4: markers with task ids, pop counts, dispatch totals. */
/* A busy iteration starts where the previous one ended (the anchor it
 * carries, sched.c): a complete bar that opens iteration i + 1 after an
 * iteration i that made progress starts at the end of i's last bar, no
 * fresh stamp between (any other first bar may follow a poll that found
 * nothing and took a stamp of its own). Checks every such pair of @sp (the
 * records' aicpu_scheduler_phases); returns how many there were. */
static int count_carried(yajl_val sp)
{
	int carried = 0;
	for (size_t t = 0; t < alen(sp); t++) {
		long long iter = -1, last_end = 0;
		bool progress = false;
		for (size_t k = 0; k < alen(at(sp, t)); k++) {
			yajl_val r = at(at(sp, t), k);
			const char *kind = YAJL_GET_STRING(key(r, "kind"));
			if (!strcmp(kind, "dummy_task") || !strcmp(kind, "predicated_skip") ||
			    !strcmp(kind, "resolve"))
				continue; /* inside a bar of their iteration */
			long long it = ival(key(r, "loop_iter"));
			if (it != iter) {
				if (progress && it == iter + 1 && !strcmp(kind, "complete")) {
					assert_int_equal(ival(key(r, "start_cycles")), last_end);
					carried++;
				}
				iter = it;
				progress = false;
			}
			/* Bars of work done; release and an empty async poll
			 * are not progress (the loop then takes a fresh stamp). */
			if (strcmp(kind, "release") &&
			    (strcmp(kind, "async_poll") || ival(key(r, "tasks_processed")) > 0))
				progress = true;
			last_end = ival(key(r, "end_cycles"));
		}
	}
	return carried;
}

static void synthetic_l4(const char *plat)
{
	struct run_out o;
	run_case(&o, plat, tp_callable_find("synthetic"), "Default", 4, 0, NULL, 1);
	yajl_val sp = key(o.j, "aicpu_scheduler_phases");
	int dummies = 0, skips = 0, dispatch_recs = 0;
	long long published = 0, hits = 0;
	for (size_t t = 0; t < alen(sp); t++)
		for (size_t k = 0; k < alen(at(sp, t)); k++) {
			yajl_val r = at(at(sp, t), k);
			const char *kind = YAJL_GET_STRING(key(r, "kind"));
			/* Chronological per thread (spec §1.6). */
			if (k)
				assert_true(ival(key(r, "start_cycles")) >=
					    ival(key(at(at(sp, t), k - 1), "start_cycles")));
			assert_non_null(key(r, "shared_at_start"));
			assert_int_equal(alen(key(r, "shared_at_end")), 3);
			if (!strcmp(kind, "dummy_task") || !strcmp(kind, "predicated_skip")) {
				assert_non_null(key(r, "task_id"));
				assert_int_equal(ival(key(r, "start_cycles")),
						 ival(key(r, "end_cycles")));
				assert_int_equal(ival(key(r, "tasks_processed")), 1);
				assert_null(key(r, "pop_hit"));
				*(kind[0] == 'd' ? &dummies : &skips) += 1;
			} else {
				assert_null(key(r, "task_id"));
			}
			if (!strcmp(kind, "dispatch")) {
				dispatch_recs++;
				hits += ival(key(r, "pop_hit"));
				assert_non_null(key(r, "pop_miss"));
				published += ival(key(r, "tasks_processed"));
			} else {
				assert_null(key(r, "pop_hit"));
			}
			if (!strcmp(kind, "early_dispatch"))
				published += ival(key(r, "tasks_processed"));
		}
	/* A busy iteration starts where the previous one ended (sched.c
	 * carry). Whether a run has such a pair is up to its schedule: a
	 * loaded machine can delay every FIN past the next poll, so up to
	 * three more runs are tried (CI once saw none in a run). */
	int carried = count_carried(sp);
	for (int again = 0; again < 3 && !carried; again++) {
		struct run_out o2;
		run_case(&o2, plat, tp_callable_find("synthetic"), "Default", 4, 0, NULL, 1);
		carried = count_carried(key(o2.j, "aicpu_scheduler_phases"));
		run_free(&o2);
	}
	assert_true(carried >= 1);
	assert_true(dummies >= 1);
	assert_true(skips >= 1);
	assert_true(dispatch_recs >= 1);
	assert_true(hits >= 1);
	/* Every published subtask is in a dispatch or early_dispatch bar. */
	assert_int_equal(published, o.r.subtasks);
	run_free(&o);
}

static void test_synthetic_level4(void **state)
{
	(void)state;
	synthetic_l4("a2a3sim");
	synthetic_l4("a5sim");
}

/* > 1024 tasks on one core: the AICore buffer rotates (a2a3) or the AICPU
 * commit buffer switches (a5); nothing is lost. */
static void rotation_on(const char *plat)
{
	struct run_out o;
	run_case(&o, plat, &wide_callable, "Rotation", 2, 1, NULL, 1);
	check_level(&o, 2, 0, -1, false);
	assert_int_equal(o.r.subtasks, p_rot[0]);
	/* Block dim 1: one AIC, core 0 ran every task with tokens 1..N. */
	yajl_val ac = key(o.j, "aicore_tasks");
	for (size_t i = 0; i < alen(ac); i++) {
		assert_int_equal(ival(at(at(ac, i), 0)), 0);
		assert_int_equal(ival(at(at(ac, i), 2)), (long long)i + 1);
	}
	run_free(&o);
}

static void test_rotation(void **state)
{
	(void)state;
	rotation_on("a2a3sim");
	rotation_on("a5sim");
}

/* host_build_graph: every AICPU thread schedules, no orchestrator lane. */
static void test_hbg(void **state)
{
	(void)state;
	struct run_out o;
	run_case(&o, "a2a3sim", tp_callable_find("synthetic"), "Default", 4, 0, TP_RUNTIME_HBG, 1);
	/* Level 4 without orchestrator records: the key is left out (§1.2). */
	check_level(&o, 4, 4, -1, false);
	run_free(&o);
}

/* --rounds 2: only the first round records. */
static void test_rounds(void **state)
{
	(void)state;
	struct run_out o;
	run_case(&o, "a5sim", tp_callable_find("paged_attention"), "CaseSmall1", 2, 0, NULL, 2);
	assert_int_equal(o.r.rounds, 2);
	check_level(&o, 2, 0, -1, false);
	run_free(&o);
}

/* No AICore task: nothing written, a warning, the run still passes. */
static void test_no_data(void **state)
{
	(void)state;
	struct run_out o;
	run_case(&o, "a2a3sim", &wide_callable, "OnlyDummies", 4, 0, NULL, 1);
	assert_null(o.j);
	assert_string_equal(o.r.swimlane_records, "");
	assert_non_null(strstr(o.log, "No performance data to export."));
	char p[4300];
	snprintf(p, sizeof(p), "%s/%s", o.r.output_dir, SWL_RECORDS_FILE);
	assert_int_not_equal(access(p, F_OK), 0);
	run_free(&o);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--host-oom-child") == 0)
		return host_oom_child();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_a_layout),
		cmocka_unit_test(test_fixture_a_layout_4_shards),
		cmocka_unit_test(test_host_oom_counts_lost),
		cmocka_unit_test(test_log_prefault_before_start),
		cmocka_unit_test(test_levels_a2a3sim),
		cmocka_unit_test(test_levels_a5sim),
		cmocka_unit_test(test_synthetic_level4),
		cmocka_unit_test(test_rotation_dual_issue),
		cmocka_unit_test(test_stage_ring_dual_issue_a5),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_hbg),
		cmocka_unit_test(test_rounds),
		cmocka_unit_test(test_no_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
