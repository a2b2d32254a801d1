/* SPDX-License-Identifier: MIT */
/* Unit tests of the swimlane input generator (tools/swimlane/gen_records.h):
 * a small generated capture is read back by the readers with the counts the
 * generator reports; its timestamps are consistent (dispatch < receive <
 * start < end < finish, dispatch / complete phases on the owning thread
 * contain their rows); the output depends on the seed only; bad arguments
 * are refused with a message. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "base/thread.h"
#include "taskprof/taskprof.h"
#include "tools/swimlane/gen_records.h"
#include "tools/swimlane/perf_data.h"
#include "tools/swimlane/trace.h"
#include "unit_helpers.h"

#define NTASKS 3000u

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = uh_mkdtemp();
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	uh_rm_rf(dir);
	dir = NULL;
	return 0;
}

static char *join(const char *d, const char *name)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", d, name) < 0)
		return NULL;
	return p;
}

static void gen(const char *d, uint64_t n, int a5, uint64_t seed,
		struct sl_gen_stats *st)
{
	int rc = sl_gen_inputs_stats(d, n, a5, seed, st);
	if (rc)
		printf("gen: %s\n", tp_last_error());
	assert_int_equal(rc, 0);
}

static void read_perf(const char *d, struct sl_perf_data *pd)
{
	char *p = join(d, "l2_swimlane_records.json");
	int rc = sl_read_perf_data(p, pd);
	if (rc)
		printf("read: %s\n", tp_last_error());
	assert_int_equal(rc, 0);
	free(p);
}

/* Every row of the records joins and the counts match what was written. */
static void test_records_read_back(void **state)
{
	(void)state;
	struct sl_gen_stats st;
	gen(dir, NTASKS, 0, 7, &st);
	assert_int_equal(st.n_tasks, NTASKS);
	assert_int_equal(st.n_orch, st.n_tasks + st.n_alloc);
	assert_int_equal(st.n_threads, 4);
	assert_int_equal(st.clock_freq_hz, 50000000);
	/* The mix the bench relies on is there. */
	assert_true(st.n_rows > st.n_tasks);
	assert_true(st.n_spmd > 0 && st.n_mix > 0 && st.n_dummy > 0);
	assert_true(st.n_alloc > 0 && st.n_predicated > 0);
	/* About 2 scheduler phase records and 2 edges per task. */
	assert_true(st.n_sched_total > 19 * NTASKS / 10);
	assert_true(st.n_sched_total < 26 * NTASKS / 10);
	assert_true(st.n_unique_edges > 17 * NTASKS / 10);
	assert_true(st.n_unique_edges < 23 * NTASKS / 10);
	assert_true(st.n_edges > st.n_unique_edges); /* some pairs twice */

	struct sl_perf_data pd;
	read_perf(dir, &pd);
	assert_int_equal(pd.level, 4);
	assert_int_equal(pd.clock_freq_hz, 50000000);
	assert_int_equal(pd.num_cores, 72);
	assert_int_equal(pd.n_core_types, 72);
	assert_int_equal(pd.core_types[23], SL_AIC);
	assert_int_equal(pd.core_types[24], SL_AIV);
	assert_int_equal(pd.n_core_to_thread, 72);
	assert_int_equal(pd.n_aicore_rows, st.n_rows);
	assert_int_equal(pd.n_aicpu_rows, st.n_rows);
	assert_int_equal(pd.n_unmatched, 0);
	assert_int_equal(pd.n_tasks, st.n_rows);
	assert_true(pd.has_sched);
	assert_int_equal(pd.n_sched, 4);
	for (int t = 0; t < 4; t++)
		assert_int_equal(pd.sched[t].n, st.n_sched[t]);
	assert_int_equal(pd.sched[3].n, 0); /* the orchestrator's slot */
	assert_true(pd.has_orch);
	assert_int_equal(pd.n_orch, 1);
	assert_int_equal(pd.orch[0].n, st.n_orch);
	/* The base is the first orch submit (1,000,000 cycles). */
	assert_int_equal(pd.base_cycles, 1000000);
	assert_true(pd.orch[0].v[0].start_us == 0.0);

	for (size_t i = 0; i < pd.n_tasks; i++) {
		const struct sl_task *t = &pd.tasks[i];
		if (i)
			assert_true(pd.tasks[i - 1].task_id <= t->task_id);
		assert_true(t->has_propagation);
		assert_true(t->dispatch_us > 0.0);
		assert_true(t->dispatch_us < t->receive_us);
		assert_true(t->receive_us < t->start_us);
		assert_true(t->start_us < t->end_us);
		assert_true(t->end_us < t->finish_us);
		assert_int_equal(t->core_type, t->core_id < 24 ? SL_AIC : SL_AIV);
	}
	sl_perf_data_free(&pd);
}

/* Thread t's phases of @kind sorted by start: does one contain @us? */
static bool phase_contains(const struct sl_phase_list *l, int kind, double us)
{
	for (size_t k = 0; k < l->n; k++)
		if (l->v[k].kind == kind && l->v[k].start_us <= us &&
		    us <= l->v[k].end_us)
			return true;
	return false;
}

/* The scheduler records tell the same story as the rows: each row's
 * dispatch lies in a dispatch phase of its core's thread, each task's
 * last FIN in a complete phase; records are chronological per thread;
 * every dummy task has its dummy_task record. */
static void test_phases_consistent(void **state)
{
	(void)state;
	struct sl_gen_stats st;
	gen(dir, 600, 0, 3, &st);
	struct sl_perf_data pd;
	read_perf(dir, &pd);

	for (size_t t = 0; t < pd.n_sched; t++)
		for (size_t k = 1; k < pd.sched[t].n; k++)
			assert_true(pd.sched[t].v[k - 1].start_us <=
				    pd.sched[t].v[k].start_us);

	size_t i = 0;
	while (i < pd.n_tasks) {
		size_t j = i, last = i;
		for (; j < pd.n_tasks && pd.tasks[j].task_id == pd.tasks[i].task_id; j++) {
			const struct sl_task *r = &pd.tasks[j];
			int th = pd.core_to_thread[r->core_id];
			assert_true(th >= 0 && th < 3);
			assert_true(phase_contains(&pd.sched[th], SL_PH_DISPATCH,
						   r->dispatch_us));
			if (r->finish_us > pd.tasks[last].finish_us)
				last = j;
		}
		int th = pd.core_to_thread[pd.tasks[last].core_id];
		assert_true(phase_contains(&pd.sched[th], SL_PH_COMPLETE,
					   pd.tasks[last].finish_us));
		i = j;
	}

	uint64_t dummy_tasks = 0, pred_skips = 0;
	for (size_t t = 0; t < pd.n_sched; t++)
		for (size_t k = 0; k < pd.sched[t].n; k++) {
			const struct sl_phase *p = &pd.sched[t].v[k];
			dummy_tasks += p->kind == SL_PH_DUMMY_TASK;
			pred_skips += p->kind == SL_PH_PREDICATED_SKIP;
			if (p->kind == SL_PH_DUMMY_TASK || p->kind == SL_PH_PREDICATED_SKIP) {
				assert_true(p->flags & SL_PF_TASK_ID);
				assert_true(p->start_us == p->end_us);
			}
			if (p->kind == SL_PH_DISPATCH)
				assert_true(p->flags & SL_PF_POP);
		}
	assert_int_equal(dummy_tasks, st.n_dummy);
	assert_int_equal(pred_skips, st.n_predicated);
	sl_perf_data_free(&pd);
}

/* deps.json: the kernel map has every task, the block map the SPMD
 * ones, edges are unique pairs; the name map has the 8 kernels. */
static void test_deps_and_names_read_back(void **state)
{
	(void)state;
	struct sl_gen_stats st;
	gen(dir, NTASKS, 0, 11, &st);
	char *p = join(dir, "deps.json");
	struct sl_deps d;
	int rc = sl_read_deps(p, &d);
	if (rc)
		printf("deps: %s\n", tp_last_error());
	assert_int_equal(rc, 0);
	free(p);
	assert_true(d.has_edges);
	assert_int_equal(d.n_edges, st.n_unique_edges);
	assert_int_equal(d.n_tasks, st.n_tasks);
	uint64_t spmd = 0, dummy = 0, mix = 0;
	for (size_t i = 0; i < d.n_tasks; i++) {
		const int32_t *k = d.kernel_ids[i];
		spmd += d.block_num[i] > 1;
		dummy += k[0] < 0 && k[1] < 0 && k[2] < 0;
		mix += k[0] >= 0 && (k[1] >= 0 || k[2] >= 0);
		assert_int_equal(sl_deps_find_task(&d, d.task_id[i]), (long)i);
	}
	assert_int_equal(spmd, st.n_spmd);
	assert_int_equal(dummy, st.n_dummy);
	assert_int_equal(mix, st.n_mix);
	/* alloc tasks are preds only: some pred is not in the kernel map */
	size_t alloc_preds = 0;
	for (size_t e = 0; e < d.n_edges; e++)
		alloc_preds += sl_deps_find_task(&d, d.pred[e]) < 0;
	assert_true(alloc_preds >= st.n_alloc);
	sl_deps_free(&d);

	p = join(dir, "name_map_Bench_case.json");
	struct sl_name_map m;
	rc = sl_read_name_map(p, &m);
	if (rc)
		printf("names: %s\n", tp_last_error());
	assert_int_equal(rc, 0);
	free(p);
	assert_int_equal(m.n, 8);
	assert_string_equal(sl_name_map_get(&m, 0), "QK");
	assert_string_equal(sl_name_map_get(&m, 7), "ROPE");
	assert_string_equal(m.orchestrator_name, "BenchOrch");
	sl_name_map_free(&m);
}

/* a5: 1 GHz clock, 7 thread arrays, the 7th (orchestrator) empty. */
static void test_a5(void **state)
{
	(void)state;
	struct sl_gen_stats st;
	gen(dir, 500, 1, 5, &st);
	assert_int_equal(st.n_threads, 7);
	assert_int_equal(st.clock_freq_hz, 1000000000);
	struct sl_perf_data pd;
	read_perf(dir, &pd);
	assert_int_equal(pd.clock_freq_hz, 1000000000);
	assert_int_equal(pd.n_sched, 7);
	assert_int_equal(pd.sched[6].n, 0);
	for (int t = 0; t < 6; t++)
		assert_true(pd.sched[t].n > 0);
	assert_int_equal(pd.n_tasks, st.n_rows);
	sl_perf_data_free(&pd);
}

static char *slurp(const char *d, const char *name, size_t *len)
{
	char *p = join(d, name), *data = NULL;
	assert_int_equal(tp_read_file(p, &data, len), 0);
	free(p);
	return data;
}

/* Same arguments, same bytes; another seed, other bytes. */
static void test_deterministic(void **state)
{
	(void)state;
	char *d2 = uh_mkdtemp();
	assert_non_null(d2);
	gen(dir, 400, 0, 42, NULL);
	gen(d2, 400, 0, 42, NULL);
	static const char *const files[] = {
		"l2_swimlane_records.json", "deps.json", "name_map_Bench_case.json",
	};
	for (int f = 0; f < 3; f++) {
		size_t la, lb;
		char *a = slurp(dir, files[f], &la), *b = slurp(d2, files[f], &lb);
		assert_int_equal(la, lb);
		assert_memory_equal(a, b, la);
		free(a);
		free(b);
	}
	gen(d2, 400, 0, 43, NULL);
	size_t la, lb;
	char *a = slurp(dir, "deps.json", &la), *b = slurp(d2, "deps.json", &lb);
	assert_true(la != lb || memcmp(a, b, la) != 0);
	free(a);
	free(b);
	uh_rm_rf(d2);
}

/* The issue-scale shape: fewer edges and rows per task than the heavy
 * one on the same seed, every node and phase kind still present, the
 * merged dispatch / complete records still hold their rows (and then
 * process several tasks), same bytes for the same arguments. */
static void test_issue_shape(void **state)
{
	(void)state;
	struct sl_gen_stats hv, st;
	gen(dir, NTASKS, 0, 7, &hv);
	int rc = sl_gen_inputs_shape(dir, NTASKS, 0, 7, SL_GEN_ISSUE, &st);
	if (rc)
		printf("gen: %s\n", tp_last_error());
	assert_int_equal(rc, 0);
	assert_string_equal(sl_gen_shape_name(SL_GEN_ISSUE), "issue");
	assert_string_equal(sl_gen_shape_name(SL_GEN_HEAVY), "heavy");
	assert_int_equal(st.n_tasks, NTASKS);
	/* ~0.75 edges and ~1.04 rows per task (heavy: ~2 and ~1.26) */
	assert_true(st.n_unique_edges > 6 * NTASKS / 10);
	assert_true(st.n_unique_edges < 9 * NTASKS / 10);
	assert_true(st.n_rows > NTASKS && st.n_rows < 11 * NTASKS / 10);
	assert_true(st.n_rows < hv.n_rows && st.n_edges < hv.n_edges);
	assert_true(st.n_sched_total < hv.n_sched_total);
	assert_true(st.n_spmd > 0 && st.n_mix > 0 && st.n_dummy > 0);
	assert_true(st.n_alloc > 0 && st.n_predicated > 0);
	assert_true(st.n_edges > st.n_unique_edges);

	struct sl_perf_data pd;
	read_perf(dir, &pd);
	assert_int_equal(pd.n_tasks, st.n_rows);
	assert_int_equal(pd.n_unmatched, 0);
	uint64_t multi = 0, early = 0, resolve = 0;
	for (size_t t = 0; t < pd.n_sched; t++)
		for (size_t k = 0; k < pd.sched[t].n; k++) {
			const struct sl_phase *p = &pd.sched[t].v[k];
			if (k)
				assert_true(pd.sched[t].v[k - 1].start_us <= p->start_us);
			multi += (p->kind == SL_PH_DISPATCH || p->kind == SL_PH_COMPLETE) &&
				 p->tasks_processed > 1;
			early += p->kind == SL_PH_EARLY_DISPATCH;
			resolve += p->kind == SL_PH_RESOLVE;
		}
	assert_true(multi > 0 && early > 0 && resolve > 0);
	for (size_t i = 0; i < pd.n_tasks; i++) {
		const struct sl_task *r = &pd.tasks[i];
		int th = pd.core_to_thread[r->core_id];
		assert_true(phase_contains(&pd.sched[th], SL_PH_DISPATCH, r->dispatch_us));
	}
	sl_perf_data_free(&pd);

	/* deterministic */
	char *d2 = uh_mkdtemp();
	assert_non_null(d2);
	assert_int_equal(sl_gen_inputs_shape(d2, NTASKS, 0, 7, SL_GEN_ISSUE, NULL), 0);
	size_t la, lb;
	char *a = slurp(dir, "l2_swimlane_records.json", &la);
	char *b = slurp(d2, "l2_swimlane_records.json", &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	free(a);
	free(b);
	uh_rm_rf(d2);

	tp_clear_error();
	assert_int_equal(sl_gen_inputs_shape(dir, 10, 0, 1, (enum sl_gen_shape)7, NULL),
			 -EINVAL);
	assert_non_null(strstr(tp_last_error(), "shape"));
	assert_null(sl_gen_shape_name((enum sl_gen_shape)7));
}

static void test_errors(void **state)
{
	(void)state;
	tp_clear_error();
	assert_int_equal(sl_gen_inputs(dir, 0, 0, 1), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "ntasks 0"));
	char *missing = join(dir, "no/such/dir");
	int rc = sl_gen_inputs(missing, 10, 0, 1);
	assert_int_equal(rc, -ENOENT);
	assert_non_null(strstr(tp_last_error(), "l2_swimlane_records.json"));
	free(missing);
}

/* Convert @dir's capture to @out (compact layout) as the CLI does: the
 * three readers, then sl_trace_generate(). */
static void convert(const char *out, struct sl_trace_result *res)
{
	char *rec = join(dir, "l2_swimlane_records.json");
	char *deps = join(dir, "deps.json");
	char *names = join(dir, "name_map_Bench_case.json");
	struct sl_perf_data pd;
	struct sl_deps d;
	struct sl_name_map m;
	assert_int_equal(sl_read_perf_data(rec, &pd), 0);
	assert_int_equal(sl_read_deps(deps, &d), 0);
	assert_int_equal(sl_read_name_map(names, &m), 0);
	FILE *devnull = fopen("/dev/null", "w");
	assert_non_null(devnull);
	struct sl_trace_opts o = { .output_path = out, .out = devnull, .err = devnull };
	int rc = sl_trace_generate(&pd, &d, &m, &o, res);
	if (rc)
		printf("convert: %s\n", tp_last_error());
	assert_int_equal(rc, 0);
	fclose(devnull);
	sl_perf_data_free(&pd);
	sl_deps_free(&d);
	sl_name_map_free(&m);
	free(rec);
	free(deps);
	free(names);
}

/* The flow events of §4.4 steps 8-12 go through the formatter thread
 * (trace.c, struct flowq), and the Worker and Scheduler View bars are
 * formatted on two threads in chunks of 2048 rows (struct rowpar):
 * 5,000 tasks (6,246 rows: four chunks per view, the last one
 * short) and enough flow events to go round the formatter's ring of 8
 * chunks of 4096 three times, and the trace is byte for byte the one
 * written without the thread (tp_thread_start() failing: the flows, the
 * deps.json reader, the preparation's second half and the writes are then
 * done on the calling thread). */
static void test_flow_formatter(void **state)
{
	(void)state;
	struct sl_gen_stats st;
	gen(dir, 5000, 0, 5, &st);
	assert_true(st.n_rows > 3 * 2048); /* 6,246: four chunks of rows */
	char *a_path = join(dir, "a.json"), *b_path = join(dir, "b.json");
	struct sl_trace_result ra, rb;
	convert(a_path, &ra);
	tp_thread_test_fail_start(1, EAGAIN);
	convert(b_path, &rb);
	tp_thread_test_fail_start(0, 0);
	/* the thread formatted every flow event of the first; none of the
	 * second (no thread) */
	assert_int_equal(ra.n_flows_queued, 2 * ra.n_flows);
	assert_int_equal(rb.n_flows_queued, 0);
	assert_int_equal(ra.n_events, rb.n_events);
	size_t la, lb;
	char *a = slurp(dir, "a.json", &la);
	char *b = slurp(dir, "b.json", &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	/* a plain loop: strstr from each hit on is quadratic under the
	 * sanitizers, whose interceptor checks the whole rest of the text */
	static const char pat[] = "{\"cat\":\"flow\",\"id\":";
	size_t flows = 0;
	for (size_t i = 0; i + sizeof(pat) - 1 <= la; i++)
		if (a[i] == '{' && !memcmp(a + i, pat, sizeof(pat) - 1))
			flows++;
	assert_true(flows > 3 * 8 * 4096); /* 113,146 */
	assert_int_equal(flows, ra.n_flows_queued);
	free(a);
	free(b);
	free(a_path);
	free(b_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_records_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_phases_consistent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deps_and_names_read_back, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a5, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deterministic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_issue_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flow_formatter, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
