/* SPDX-License-Identifier: MIT */
/* The synthetic example (examples/synthetic/syn_callable.h) through the
 * Worker API: it passes its golden on a2a3sim and a5sim with 1 and 3
 * scheduler threads and on host_build_graph; its outputs are byte-identical across runs, thread
 * counts, platforms and runtimes (captured on the device by one extra task that
 * reads every output after all their writers); a wrong golden is caught. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "examples/synthetic/syn_callable.h"
#include "runtime/orch.h"
#include "taskprof/case.h"
#include "taskprof/taskprof.h"
#include "taskprof/worker.h"

static char g_root[] = "/tmp/tp_test_synthetic_XXXXXX";

/* ---- a capturing copy of the callable ------------------------------------ */

#define CAP_FUNC SYN_FUNC_COUNT
#define CAP_MAX 2048u

static int32_t g_cap[SYN_ARG_COUNT][CAP_MAX];
static int g_cap_runs;

/* args: IN every signature tensor; copies them into g_cap. */
static void k_capture(int64_t *args)
{
	for (int i = 0; i < SYN_ARG_COUNT; i++) {
		const struct tp_tile *t = (const struct tp_tile *)(intptr_t)args[i];
		for (uint32_t r = 0; r < t->rows && r < CAP_MAX; r++)
			g_cap[i][r] = *(const int32_t *)tp_tile_at(t, r, 0);
	}
	g_cap_runs++;
}

static int orch_capture(struct tp_orch *o, const struct tp_case_args *args)
{
	int rc = syn_orchestration(o, args);
	if (rc)
		return rc;
	struct tp_task_args a;
	tp_args_init(&a);
	for (int i = 0; i < SYN_ARG_COUNT; i++) {
		struct tp_tensor t;
		uint32_t n = syn_tensor_len((enum syn_arg)i);
		assert_int_equal(tp_tensor_make_contiguous(&t, (uintptr_t)args->tensors[i].data,
							   TP_INT32, 1, &n), 0);
		tp_args_add_input(&a, &t);
	}
	return tp_submit_aiv(o, CAP_FUNC, &a, NULL);
}

static struct tp_case_kernel g_cap_kernels[SYN_FUNC_COUNT + 1];
static struct tp_callable g_cap_callable;

static void make_capture_callable(void)
{
	memcpy(g_cap_kernels, syn_kernels, sizeof(syn_kernels));
	g_cap_kernels[CAP_FUNC] =
		(struct tp_case_kernel){ CAP_FUNC, "CAPTURE", TP_CASE_AIV, k_capture };
	g_cap_callable = syn_callable;
	g_cap_callable.name = "synthetic_capture";
	g_cap_callable.orch = orch_capture;
	g_cap_callable.kernels = g_cap_kernels;
	g_cap_callable.n_kernels = SYN_FUNC_COUNT + 1;
}

/* ---- runs -------------------------------------------------------------------- */

static size_t total_elements(void)
{
	size_t n = 0;
	for (int i = 0; i < SYN_ARG_COUNT; i++)
		n += syn_tensor_len((enum syn_arg)i);
	return n;
}

static void run_rt(const struct tp_callable *cal, const char *platform, int threads,
		   const char *runtime, struct tp_run_result *r)
{
	struct tp_worker_config cfg = {
		.platform = platform, .runtime = runtime, .aicpu_threads = threads,
		.output_root = g_root,
	};
	struct tp_worker *w = tp_worker_open(&cfg);
	if (!w)
		printf("open: %s\n", tp_last_error());
	assert_non_null(w);
	alarm(120);
	int rc = tp_worker_run(w, cal, NULL, r);
	alarm(0);
	if (rc)
		printf("run: %s\n", tp_last_error());
	assert_int_equal(rc, 0);
	tp_worker_close(w);
	printf("%s %s %s, %d threads: %s, %llu tasks, device %.3f ms\n", cal->name, platform,
	       r->runtime, threads, r->golden_line, (unsigned long long)r->tasks, r->device_wall_s * 1e3);
}

static void run_one(const struct tp_callable *cal, const char *platform, int threads,
		    struct tp_run_result *r)
{
	run_rt(cal, platform, threads, NULL, r);
}

static void check_pass_rt(const char *platform, int threads, const char *runtime)
{
	struct tp_run_result r;
	run_rt(tp_callable_find("synthetic"), platform, threads, runtime, &r);
	assert_true(r.pass);
	assert_string_equal(r.case_name, "Default");
	assert_int_equal(r.tasks, SYN_TASKS);
	assert_int_equal(r.n_compared, total_elements());
	assert_int_equal(r.n_bad, 0);
}

static void check_pass(const char *platform, int threads)
{
	check_pass_rt(platform, threads, NULL);
}

static void test_hbg(void **s)
{
	(void)s;
	check_pass_rt("a2a3sim", 2, TP_RUNTIME_HBG);
	check_pass_rt("a5sim", 4, TP_RUNTIME_HBG);
}

static void test_a2a3_1sched(void **s) { (void)s; check_pass("a2a3sim", 2); }
static void test_a2a3_3sched(void **s) { (void)s; check_pass("a2a3sim", 4); }
static void test_a5_1sched(void **s) { (void)s; check_pass("a5sim", 2); }
static void test_a5_3sched(void **s) { (void)s; check_pass("a5sim", 4); }

static void test_registered(void **s)
{
	(void)s;
	const struct tp_callable *c = tp_callable_find("synthetic");
	assert_ptr_equal(c, &syn_callable);
	assert_non_null(tp_callable_case(c, NULL));
	assert_string_equal(tp_callable_case(c, NULL)->name, "Default");
	assert_null(tp_callable_case(c, "Nope"));
	for (int i = 0; i < c->n_kernels; i++)
		assert_int_equal(c->kernels[i].func_id, i);
}

/* Byte-identical outputs: twice with 3 schedulers, once with 1, once on
 * a5sim; every capture equals the first. */
static void test_identical_outputs(void **s)
{
	(void)s;
	static int32_t first[SYN_ARG_COUNT][CAP_MAX];
	static const struct { const char *p; int th; const char *rt; } runs[] = {
		{ "a2a3sim", 4, NULL }, { "a2a3sim", 4, NULL }, { "a2a3sim", 2, NULL },
		{ "a5sim", 4, NULL }, { "a2a3sim", 4, TP_RUNTIME_HBG },
	};
	make_capture_callable();
	for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		struct tp_run_result r;
		memset(g_cap, 0x5a, sizeof(g_cap));
		g_cap_runs = 0;
		run_rt(&g_cap_callable, runs[k].p, runs[k].th, runs[k].rt, &r);
		assert_true(r.pass);
		assert_int_equal(r.tasks, SYN_TASKS + 1);
		assert_int_equal(g_cap_runs, 1);
		assert_true(r.early_dispatch); /* syn_callable asks for it */
		assert_true(r.early_staged > 0);
		if (k == 0) {
			memcpy(first, g_cap, sizeof(first));
			/* Spot checks of the captured values. */
			assert_int_equal(g_cap[SYN_ARG_PRED][1], 7);
			assert_int_equal(g_cap[SYN_ARG_PRED][2], 10);
			assert_int_equal(g_cap[SYN_ARG_DUMMY][3], 33);
			assert_int_equal(g_cap[SYN_ARG_SPMD][4 * 99 + 0], 99);
			assert_int_equal(g_cap[SYN_ARG_FANOUT][SYN_FANOUT],
					 12345 + 7 * (SYN_FANOUT - 1));
			/* Async wait: the DMA copy landed, one bump, the SUM
			 * after it saw the copied data. */
			assert_int_equal(g_cap[SYN_ARG_ASYNC][SYN_ASYNC_N + 3], 503);
			assert_int_equal(g_cap[SYN_ARG_ASYNC][2 * SYN_ASYNC_N], 1);
			assert_int_equal(g_cap[SYN_ARG_ASYNC][2 * SYN_ASYNC_N + 1], 2006);
			/* Early dispatch: the consumer saw the producer's value. */
			assert_int_equal(g_cap[SYN_ARG_EARLY][0], SYN_EARLY_VALUE);
			assert_int_equal(g_cap[SYN_ARG_EARLY][1], 42);
			/* alloc_tensors: SET wrote the allocated scratch, ADDS
			 * read it back into the signature tensor. */
			assert_int_equal(g_cap[SYN_ARG_ALLOC][0],
					 SYN_ALLOC_VALUE + SYN_ALLOC_ADD);
		} else {
			assert_memory_equal(first, g_cap, sizeof(first));
		}
	}
}

/* A wrong golden value is caught with its element. */
static int bad_golden(const struct tp_case *c, struct tp_case_args *e)
{
	int rc = syn_callable.cases[0].golden(c, e);
	((int32_t *)e->tensors[SYN_ARG_PRED].data)[1] = 1000; /* "predicate ran" */
	return rc;
}

static void test_golden_catches(void **s)
{
	(void)s;
	struct tp_case bad_case = syn_callable.cases[0];
	bad_case.golden = bad_golden;
	struct tp_callable bad = syn_callable;
	bad.cases = &bad_case;
	struct tp_run_result r;
	run_one(&bad, "a2a3sim", 4, &r);
	assert_false(r.pass);
	assert_int_equal(r.n_bad, 1);
	assert_string_equal(r.worst_tensor, "pred");
	assert_int_equal(r.worst_index, 1);
	assert_true(r.worst_expected == 1000.0 && r.worst_got == 7.0);
}

static int setup(void **s)
{
	(void)s;
	return mkdtemp(g_root) ? 0 : -1;
}

static int teardown(void **s)
{
	(void)s;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_root);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registered),
		cmocka_unit_test(test_a2a3_1sched),
		cmocka_unit_test(test_a2a3_3sched),
		cmocka_unit_test(test_a5_1sched),
		cmocka_unit_test(test_a5_3sched),
		cmocka_unit_test(test_hbg),
		cmocka_unit_test(test_identical_outputs),
		cmocka_unit_test(test_golden_catches),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
