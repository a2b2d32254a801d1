/* SPDX-License-Identifier: MIT */
/* Unit tests of the Worker (taskprof/worker.h): paged attention CaseSmall1
 * passes its golden on a2a3sim and a5sim and gets its own output folder;
 * a golden mismatch is reported with its worst element; bad configurations
 * and unknown cases are refused with a message. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/orch.h"
#include "taskprof/case.h"
#include "taskprof/taskprof.h"
#include "taskprof/worker.h"

static char g_root[] = "/tmp/tp_test_worker_XXXXXX";

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void run_small1(const char *platform)
{
	struct tp_worker_config cfg = { .platform = platform, .output_root = g_root };
	struct tp_worker *w = tp_worker_open(&cfg);
	if (!w)
		printf("open: %s\n", tp_last_error());
	assert_non_null(w);
	struct tp_run_result r;
	alarm(60);
	int rc = tp_worker_run(w, tp_callable_find("paged_attention"), NULL, &r);
	alarm(0);
	if (rc)
		printf("run: %s\n", tp_last_error());
	assert_int_equal(rc, 0);
	printf("%s: %s, host %.3f ms device %.3f ms orch %.3f ms sched %.3f ms -> %s\n",
	       platform, r.golden_line, r.host_wall_s * 1e3, r.device_wall_s * 1e3,
	       r.orch_s * 1e3, r.sched_s * 1e3, r.output_dir);
	assert_true(r.pass);
	assert_string_equal(r.case_name, "CaseSmall1");
	assert_string_equal(r.platform, platform);
	assert_int_equal(r.tasks, 13);
	assert_int_equal(r.n_compared, 256);
	assert_int_equal(r.n_bad, 0);
	assert_true(r.host_wall_s >= r.device_wall_s);
	assert_true(r.device_wall_s > 0 && r.orch_s > 0 && r.sched_s > 0);
	assert_true(r.orch_s <= r.device_wall_s && r.sched_s <= r.device_wall_s);
	assert_non_null(strstr(r.output_dir, "/paged_attention_CaseSmall1_"));
	assert_true(is_dir(r.output_dir));
	char path[4200];
	snprintf(path, sizeof(path), "%s/result.txt", r.output_dir);
	assert_int_equal(access(path, R_OK), 0);

	/* A second run in the same second gets its own folder. */
	struct tp_run_result r2;
	assert_int_equal(tp_worker_run(w, tp_callable_find("paged_attention"), "CaseSmall1", &r2), 0);
	assert_true(r2.pass);
	assert_string_not_equal(r.output_dir, r2.output_dir);
	tp_worker_close(w);
}

static void test_small1_a2a3sim(void **s) { (void)s; run_small1("a2a3sim"); }
static void test_small1_a5sim(void **s) { (void)s; run_small1("a5sim"); }

/* ---- a callable whose golden disagrees at one element ------------------ */

#define BAD_N 8
#define BAD_AT 5

static int bad_generate(const struct tp_case *c, struct tp_case_args *a)
{
	(void)c;
	memset(a, 0, sizeof(*a));
	float *out = calloc(BAD_N, sizeof(float));
	if (!out)
		return -ENOMEM;
	a->tensors[0] = (struct tp_case_tensor){
		.name = "out", .data = out, .bytes = BAD_N * sizeof(float), .dtype = TP_FP32,
		.ndims = 2, .shape = { 2, BAD_N / 2 }, .is_out = true,
	};
	a->n_tensors = 1;
	return 0;
}

static int bad_golden(const struct tp_case *c, struct tp_case_args *e)
{
	(void)c;
	((float *)e->tensors[0].data)[BAD_AT] = 1.5f;
	return 0;
}

static void bad_release(const struct tp_case *c, struct tp_case_args *a)
{
	(void)c;
	free(a->tensors[0].data);
}

/* One AIV task with an empty kernel on the output: it stays all zeros. */
static int bad_orch(struct tp_orch *o, const struct tp_case_args *a)
{
	struct tp_tensor t;
	uint32_t shape[1] = { BAD_N };
	int rc = tp_tensor_make_contiguous(&t, (uintptr_t)a->tensors[0].data, TP_FP32, 1, shape);
	if (rc)
		return rc;
	struct tp_task_args ta;
	tp_args_init(&ta);
	tp_args_add_inout(&ta, &t);
	return tp_submit_aiv(o, 0, &ta, NULL);
}

static const struct tp_case_kernel bad_kernels[] = {
	{ 0, "NOP", TP_CASE_AIV, NULL },
};
static const struct tp_case bad_cases[] = {
	{ .name = "One", .rtol = 1e-3, .atol = 1e-3, .generate = bad_generate,
	  .golden = bad_golden, .release = bad_release },
};
static const struct tp_callable bad_callable = {
	.name = "mismatch", .orch_name = "bad_orch", .orch = bad_orch,
	.kernels = bad_kernels, .n_kernels = 1, .cases = bad_cases, .n_cases = 1,
	.default_case = "One",
};

static void test_golden_mismatch(void **s)
{
	(void)s;
	struct tp_worker_config cfg = { .output_root = g_root, .aicpu_threads = 2 };
	struct tp_worker *w = tp_worker_open(&cfg);
	assert_non_null(w);
	struct tp_run_result r;
	alarm(60);
	assert_int_equal(tp_worker_run(w, &bad_callable, NULL, &r), 0);
	alarm(0);
	printf("%s\n", r.golden_line);
	assert_false(r.pass);
	assert_int_equal(r.tasks, 1);
	assert_int_equal(r.n_compared, BAD_N);
	assert_int_equal(r.n_bad, 1);
	assert_int_equal(r.worst_index, BAD_AT);
	assert_true(r.worst_expected == 1.5 && r.worst_got == 0.0);
	assert_string_equal(r.worst_tensor, "out");
	assert_non_null(strstr(r.golden_line, "out[1][1] (index 5)"));
	tp_worker_close(w);
}

/* A tensor larger than its case buffer (4x), or at an address never
 * allocated: the submit refuses it (-EFAULT, naming the allocation); it
 * used to run, and the kernels' writes past the buffer landed in the
 * profilers' buffers. */
static int g_oob_mode;

static int oob_orch(struct tp_orch *o, const struct tp_case_args *a)
{
	struct tp_tensor t;
	uint32_t shape[1] = { BAD_N * 4 };
	uintptr_t addr = g_oob_mode ? (uintptr_t)0x1000 : (uintptr_t)a->tensors[0].data;
	int rc = tp_tensor_make_contiguous(&t, addr, TP_FP32, 1, shape);
	if (rc)
		return rc;
	struct tp_task_args ta;
	tp_args_init(&ta);
	tp_args_add_inout(&ta, &t);
	return tp_submit_aiv(o, 0, &ta, NULL);
}

static const struct tp_callable oob_callable = {
	.name = "oob", .orch_name = "oob_orch", .orch = oob_orch,
	.kernels = bad_kernels, .n_kernels = 1, .cases = bad_cases, .n_cases = 1,
	.default_case = "One",
};

static void test_tensor_outside_allocation(void **s)
{
	(void)s;
	const char *want[2] = { "tensor arg 0's buffer", "is not device memory" };
	for (g_oob_mode = 0; g_oob_mode < 2; g_oob_mode++) {
		struct tp_worker_config cfg = { .output_root = g_root, .aicpu_threads = 2 };
		struct tp_worker *w = tp_worker_open(&cfg);
		assert_non_null(w);
		struct tp_run_result r;
		alarm(60);
		int rc = tp_worker_run(w, &oob_callable, NULL, &r);
		alarm(0);
		printf("refused (%d): %s\n", rc, tp_last_error());
		assert_int_equal(rc, -EFAULT);
		assert_int_equal(r.tasks, 0);
		assert_non_null(strstr(tp_last_error(), want[g_oob_mode]));
		if (g_oob_mode == 0)
			assert_non_null(strstr(tp_last_error(), "overruns the allocation"));
		tp_worker_close(w);
	}
}

/* ---- bad input ---------------------------------------------------------- */

static void expect_open_fails(struct tp_worker_config cfg, const char *needle)
{
	assert_null(tp_worker_open(&cfg));
	printf("refused: %s\n", tp_last_error());
	assert_non_null(strstr(tp_last_error(), needle));
}

static void test_bad_config(void **s)
{
	(void)s;
	expect_open_fails((struct tp_worker_config){ .platform = "a9sim" }, "unknown platform");
	expect_open_fails((struct tp_worker_config){ .runtime = "host_build_graph",
						     .aicpu_threads = 99 },
			  "all schedulers under host_build_graph");
	expect_open_fails((struct tp_worker_config){ .runtime = "foo" }, "unknown runtime");
	expect_open_fails((struct tp_worker_config){ .block_dim = -1 }, "block_dim");
	expect_open_fails((struct tp_worker_config){ .block_dim = 25 }, "1..24");
	expect_open_fails((struct tp_worker_config){ .platform = "a5sim", .block_dim = 37 },
			  "1..36");
	expect_open_fails((struct tp_worker_config){ .aicpu_threads = 1 }, "aicpu_threads");
	expect_open_fails((struct tp_worker_config){ .aicpu_threads = 5 }, "2..4");
	expect_open_fails((struct tp_worker_config){ .rounds = -1 }, "rounds");
	expect_open_fails((struct tp_worker_config){ .output_root = "" }, "output root");

	struct tp_worker *w = tp_worker_open(&(struct tp_worker_config){
		.platform = "a5sim", .block_dim = 36, .aicpu_threads = 7, .output_root = g_root });
	assert_non_null(w);
	struct tp_run_result r;
	assert_int_equal(tp_worker_run(w, tp_callable_find("paged_attention"), "NoSuchCase", &r),
			 -ENOENT);
	assert_non_null(strstr(tp_last_error(), "NoSuchCase"));
	assert_int_equal(tp_worker_run(w, NULL, NULL, &r), -EINVAL);
	tp_worker_close(w);
	assert_null(tp_callable_find("nope"));
	assert_non_null(tp_callable_at(0));
	assert_null(tp_callable_case(tp_callable_find("paged_attention"), "nope"));
}

/* A callable like bad_callable with case @cs and kernel core type @ct:
 * tp_worker_run() must refuse it before anything runs, naming @needle. */
static void expect_run_refused(struct tp_worker *w, struct tp_case cs, int ct,
			       const char *needle)
{
	const struct tp_case_kernel k[] = { { 0, "NOP", (enum tp_case_core)ct, NULL } };
	const struct tp_callable c = {
		.name = "refused", .orch = bad_orch, .kernels = k, .n_kernels = 1, .cases = &cs,
		.n_cases = 1, .default_case = cs.name,
	};
	struct tp_run_result r;
	assert_int_equal(tp_worker_run(w, &c, NULL, &r), -EINVAL);
	printf("refused: %s\n", tp_last_error());
	assert_non_null(strstr(tp_last_error(), needle));
	assert_int_equal(r.tasks, 0);
	assert_string_equal(r.output_dir, "");
}

/* Tolerances that would pass any output (NaN, negative), a case without
 * generate(), a kernel neither AIC nor AIV: refused. */
static void test_bad_case_fields(void **s)
{
	(void)s;
	struct tp_worker_config cfg = { .output_root = g_root, .aicpu_threads = 2 };
	struct tp_worker *w = tp_worker_open(&cfg);
	assert_non_null(w);
	const struct tp_case ok = bad_cases[0];
	struct tp_case c = ok;
	c.rtol = -1;
	expect_run_refused(w, c, TP_CASE_AIV, "case One: rtol -1, atol 0.001 (expected finite");
	c = ok;
	c.atol = NAN;
	expect_run_refused(w, c, TP_CASE_AIV, "atol nan (expected finite values >= 0)");
	c = ok;
	c.rtol = INFINITY;
	expect_run_refused(w, c, TP_CASE_AIV, "rtol inf");
	c = ok;
	c.generate = NULL;
	expect_run_refused(w, c, TP_CASE_AIV, "case One: no generate()");
	expect_run_refused(w, ok, 7, "kernel 'NOP' (func_id 0) has core_type 7");
	/* the same callable with sane fields runs (and fails its golden) */
	struct tp_run_result r;
	alarm(60);
	assert_int_equal(tp_worker_run(w, &bad_callable, NULL, &r), 0);
	alarm(0);
	assert_false(r.pass);
	tp_worker_close(w);
}

int main(void)
{
	assert_non_null(mkdtemp(g_root));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small1_a2a3sim),
		cmocka_unit_test(test_small1_a5sim),
		cmocka_unit_test(test_golden_mismatch),
		cmocka_unit_test(test_tensor_outside_allocation),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_bad_case_fields),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_root);
	if (system(cmd) != 0)
		printf("could not remove %s\n", g_root);
	return rc;
}
