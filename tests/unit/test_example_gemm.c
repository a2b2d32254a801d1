/* SPDX-License-Identifier: MIT */
/* The gemm example (examples/gemm/gemm_callable.h) through the Worker API:
 * it is registered with its cases; Small passes its golden on a2a3sim and
 * a5sim with both runtimes; Medium and Ragged (edge tiles, a K tail) pass;
 * one task per output tile; the reference golden is right on a hand-made
 * product; a wrong golden value is caught with its element. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "examples/gemm/gemm_callable.h"
#include "taskprof/case.h"
#include "taskprof/taskprof.h"
#include "taskprof/worker.h"

static char g_root[] = "/tmp/tp_test_gemm_XXXXXX";

static void run_case(const struct tp_callable *cal, const char *case_name,
		     const char *platform, const char *runtime, struct tp_run_result *r)
{
	struct tp_worker_config cfg = {
		.platform = platform, .runtime = runtime, .output_root = g_root,
	};
	struct tp_worker *w = tp_worker_open(&cfg);
	if (!w)
		printf("open: %s\n", tp_last_error());
	assert_non_null(w);
	alarm(120);
	int rc = tp_worker_run(w, cal, case_name, r);
	alarm(0);
	if (rc)
		printf("run: %s\n", tp_last_error());
	assert_int_equal(rc, 0);
	tp_worker_close(w);
	printf("%s %s %s %s: %s, %llu tasks\n", cal->name, r->case_name, platform, r->runtime,
	       r->golden_line, (unsigned long long)r->tasks);
}

static void check_pass(const char *case_name, const char *platform, const char *runtime,
		       uint32_t M, uint32_t N)
{
	struct tp_run_result r;
	run_case(tp_callable_find("gemm"), case_name, platform, runtime, &r);
	assert_true(r.pass);
	assert_int_equal(r.n_bad, 0);
	assert_int_equal(r.n_compared, (size_t)M * N);
	assert_int_equal(r.tasks, gemm_tiles(M, N));
}

static void test_registered(void **s)
{
	(void)s;
	const struct tp_callable *c = tp_callable_find("gemm");
	assert_ptr_equal(c, &gemm_callable);
	assert_string_equal(tp_callable_case(c, NULL)->name, "Small");
	assert_non_null(tp_callable_case(c, "Medium"));
	assert_non_null(tp_callable_case(c, "Ragged"));
	assert_null(tp_callable_case(c, "Nope"));
	assert_int_equal(c->n_kernels, GEMM_FUNC_COUNT);
	assert_int_equal(c->kernels[0].func_id, GEMM_FUNC_TILE);
	assert_int_equal(c->kernels[0].core_type, TP_CASE_AIC);
}

/* a = [[1, 2, 3], [4, 5, 6]], b = [[1, 0], [0, 1], [1, 1]] (bf16 bits). */
static void test_golden_ref(void **s)
{
	(void)s;
	const uint16_t one = 0x3f80, two = 0x4000, three = 0x4040, four = 0x4080,
		       five = 0x40a0, six = 0x40c0, zero = 0;
	const uint16_t a[6] = { one, two, three, four, five, six };
	const uint16_t b[6] = { one, zero, zero, one, one, one };
	float c[4];
	gemm_golden_ref(a, b, c, 2, 2, 3);
	assert_true(c[0] == 4.0f && c[1] == 5.0f && c[2] == 10.0f && c[3] == 11.0f);
}

static void test_small_a2a3(void **s) { (void)s; check_pass("Small", "a2a3sim", NULL, 128, 128); }
static void test_small_a5(void **s) { (void)s; check_pass("Small", "a5sim", NULL, 128, 128); }
static void test_small_hbg(void **s)
{
	(void)s;
	check_pass("Small", "a2a3sim", TP_RUNTIME_HBG, 128, 128);
	check_pass("Small", "a5sim", TP_RUNTIME_HBG, 128, 128);
}
static void test_medium(void **s) { (void)s; check_pass("Medium", "a2a3sim", NULL, 512, 512); }
static void test_ragged(void **s)
{
	(void)s;
	check_pass("Ragged", "a2a3sim", NULL, 100, 72);
	check_pass("Ragged", "a5sim", TP_RUNTIME_HBG, 100, 72);
}

/* A wrong golden value is caught with its element. */
static int bad_golden(const struct tp_case *c, struct tp_case_args *e)
{
	int rc = gemm_callable.cases[0].golden(c, e);
	((float *)e->tensors[GEMM_ARG_C].data)[130] += 1.0f;
	return rc;
}

/* Run gemm's first case, named @name, with its golden replaced by
 * @golden and tolerances @rtol / @atol (negative: the case's own), on
 * a2a3sim, into @r. */
static void run_modified(const char *name, int (*golden)(const struct tp_case *,
							  struct tp_case_args *),
			 double rtol, double atol, struct tp_run_result *r)
{
	struct tp_case mod = gemm_callable.cases[0];
	mod.golden = golden;
	if (rtol >= 0)
		mod.rtol = rtol;
	if (atol >= 0)
		mod.atol = atol;
	struct tp_callable cal = gemm_callable;
	cal.name = name;
	cal.cases = &mod;
	cal.n_cases = 1;
	run_case(&cal, NULL, "a2a3sim", NULL, r);
}

static void test_golden_catches(void **s)
{
	(void)s;
	struct tp_run_result r;
	run_modified("gemm_bad", bad_golden, -1, -1, &r);
	assert_false(r.pass);
	assert_int_equal(r.n_bad, 1);
	assert_string_equal(r.worst_tensor, "c");
	assert_int_equal(r.worst_index, 130);
	assert_non_null(strstr(r.golden_line, "FAIL"));
}

/* With rtol = atol = 0 every element must match exactly; the worst one
 * reported is the one furthest off (a matching element's 0 / 0 once
 * made it element 0, "expected 0, got 0"). */
static int far_golden(const struct tp_case *c, struct tp_case_args *e)
{
	int rc = gemm_callable.cases[0].golden(c, e);
	((float *)e->tensors[GEMM_ARG_C].data)[130] += 1000.0f;
	((float *)e->tensors[GEMM_ARG_C].data)[7] += 1.0f;
	return rc;
}

static void test_golden_zero_tolerance(void **s)
{
	(void)s;
	struct tp_run_result r;
	run_modified("gemm_exact", far_golden, 0, 0, &r);
	assert_false(r.pass);
	assert_true(r.n_bad >= 2);
	assert_string_equal(r.worst_tensor, "c");
	assert_int_equal(r.worst_index, 130);
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
		cmocka_unit_test(test_golden_ref),
		cmocka_unit_test(test_small_a2a3),
		cmocka_unit_test(test_small_a5),
		cmocka_unit_test(test_small_hbg),
		cmocka_unit_test(test_medium),
		cmocka_unit_test(test_ragged),
		cmocka_unit_test(test_golden_catches),
		cmocka_unit_test(test_golden_zero_tolerance),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
