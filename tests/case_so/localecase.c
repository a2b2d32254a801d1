/* SPDX-License-Identifier: MIT */
/*
 * tests/case_so/localecase.c — a case shared object that sets the process
 * locale from the environment, as a library it might use would, for the
 * locale test (tests/cli/test_cli_locale.sh): y = x * 1.5 on fp32 [1, 64],
 * one AIV task.
 *
 * setlocale(LC_ALL, "") is called in its entry point, generate(),
 * golden(), the orchestration and release(): every call into the case
 * the host makes (not in the kernel: the AICore threads run beside the
 * collector threads, and setlocale() is not safe against a concurrent
 * printf). Under LC_ALL=de_DE.UTF-8 the decimal point is then ','.
 *
 * Environment:
 *   LOCALECASE_PROBE  if set, generate() writes "decimal_point=<c>\n" into
 *                     this file: the decimal point right after its
 *                     setlocale(), so the test knows the locale took
 *                     effect (and skips when it did not)
 */
#include <errno.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/orch.h"
#include "taskprof/case.h"
#include "taskprof/kernel.h"

#define COLS 64u

static void set_user_locale(void)
{
	setlocale(LC_ALL, "");
}

/* AIV: IN x[1, COLS], OUT y[1, COLS]; y = x * 1.5. */
static void k_scale(int64_t *args)
{
	const struct tp_tile *x = (const struct tp_tile *)(intptr_t)args[0];
	const struct tp_tile *y = (const struct tp_tile *)(intptr_t)args[1];
	struct tp_tile u;
	if (!tp_local_tile(&u, TP_MEM_UB, TP_FP32, x->rows, x->cols) && !tp_copy_in(&u, x) &&
	    !tp_vmuls(&u, &u, 1.5f))
		tp_copy_out(y, &u);
}

static int locale_orch(struct tp_orch *o, const struct tp_case_args *args)
{
	uint32_t sh[2] = { 1, COLS };
	struct tp_tensor x, y;
	struct tp_task_args a;
	int rc;
	set_user_locale();
	if (args->n_tensors != 2)
		return -EINVAL;
	if ((rc = tp_tensor_make_contiguous(&x, (uintptr_t)args->tensors[0].data, TP_FP32, 2, sh)) ||
	    (rc = tp_tensor_make_contiguous(&y, (uintptr_t)args->tensors[1].data, TP_FP32, 2, sh)))
		return rc;
	tp_args_init(&a);
	tp_args_add_input(&a, &x);
	tp_args_add_output_existing(&a, &y);
	return tp_submit_aiv(o, 0, &a, NULL);
}

static int locale_generate(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	set_user_locale();
	const char *probe = getenv("LOCALECASE_PROBE");
	if (probe && *probe) {
		FILE *f = fopen(probe, "w");
		if (f) {
			fprintf(f, "decimal_point=%s\n", localeconv()->decimal_point);
			fclose(f);
		}
	}
	float *buf = calloc(2u * COLS, sizeof(float));
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < COLS; i++)
		buf[i] = (float)i * 0.5f;
	*args = (struct tp_case_args){ .n_tensors = 2, .priv = buf };
	args->tensors[0] = (struct tp_case_tensor){
		.name = "x", .data = buf, .bytes = COLS * sizeof(float),
		.dtype = TP_FP32, .ndims = 2, .shape = { 1, COLS },
	};
	args->tensors[1] = args->tensors[0];
	args->tensors[1].name = "y";
	args->tensors[1].data = buf + COLS;
	args->tensors[1].is_out = true;
	return 0;
}

static int locale_golden(const struct tp_case *c, struct tp_case_args *e)
{
	(void)c;
	set_user_locale();
	const float *x = e->tensors[0].data;
	float *y = e->tensors[1].data;
	for (uint32_t i = 0; i < COLS; i++)
		y[i] = x[i] * 1.5f;
	return 0;
}

static void locale_release(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	set_user_locale();
	free(args->priv);
	args->priv = NULL;
}

static const struct tp_case_kernel locale_kernels[] = {
	{ 0, "SCALE", TP_CASE_AIV, k_scale },
};

static const struct tp_case locale_cases[] = {
	{ .name = "Default", .rtol = 1e-6, .atol = 1e-6, .generate = locale_generate,
	  .golden = locale_golden, .release = locale_release },
};

static const struct tp_callable locale_callable = {
	.name = "localecase",
	.orch_name = "locale_orch",
	.orch = locale_orch,
	.kernels = locale_kernels,
	.n_kernels = 1,
	.cases = locale_cases,
	.n_cases = 1,
	.default_case = "Default",
};

const struct tp_callable *tp_case_callable(void)
{
	set_user_locale();
	return &locale_callable;
}
