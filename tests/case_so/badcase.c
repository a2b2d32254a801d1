/* SPDX-License-Identifier: MIT */
/*
 * tests/case_so/badcase.c — a case shared object that misbehaves on
 * purpose, for tests/cli/test_cli_badcase.sh (how `taskprof run` reports a
 * case's own faults). y = 2x + 1 on fp32 [8, 64], one AIV task per row.
 *
 * Environment BADCASE (read at load time and by the case's code):
 *   segv_kernel     the kernel writes through a NULL pointer
 *   exit_kernel     the kernel calls exit(3)
 *   exit0_kernel    the kernel calls exit(0)
 *   quick_exit_kernel the kernel calls quick_exit(0)
 *   fail_round2_orch the orchestration returns -EIO in its second round
 *   stack_kernel    the kernel recurses until its stack overflows
 *   abort_generate  generate() calls abort()
 *   stack_generate  generate() recurses until the main thread's stack
 *                   overflows (run it under a finite ulimit -s)
 *   segv_orch       the orchestration writes through a NULL pointer
 *   fail_orch       the orchestration returns -EINVAL before any submit
 *   fail_late_orch  the orchestration returns -EIO after its 8 submits
 *   null_data       generate() leaves the output tensor without data
 *   ndims           generate() gives the output tensor 60 dimensions
 *   bytes_small     generate() gives the output tensor 4 bytes for [8, 64] fp32
 *   loop_orch       the orchestration spins for ever after its 8 submits
 *   huge_input      generate() claims a 1 TiB input tensor (more than any
 *                   host here has: refused before it is copied)
 *   ret5            generate() returns 5 (not 0 or a negative errno)
 *   bad_func_id     the callable's one kernel has func_id 99
 *   newline_name    the callable's name has a newline
 *   neg_tol         the case's rtol is -1 (would pass any output)
 *   core_type7      the kernel's core_type is 7 (neither AIC nor AIV)
 *   abort_ctor      a constructor of the shared object calls abort()
 *   exit_entry      tp_case_callable() calls exit(3)
 *   wild_entry      tp_case_callable() returns a pointer to nothing
 *   unset or other  a correct case
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/orch.h"
#include "taskprof/case.h"
#include "taskprof/kernel.h"

#define ROWS 8u
#define COLS 64u

static bool mode(const char *m)
{
	const char *v = getenv("BADCASE");
	return v && !strcmp(v, m);
}

/* Recursion the compiler cannot turn into a loop: each frame keeps a
 * buffer it reads after the call. */
static int deep(volatile int n)
{
	volatile char pad[512];
	pad[n & 511] = (char)n;
	if (n > 1000000000) /* never: 512 MB of stack first */
		return 0;
	return deep(n + 1) + pad[(n * 7) & 511];
}

static void k_axpb(int64_t *args)
{
	if (mode("stack_kernel"))
		(void)deep(0);
	if (mode("exit0_kernel"))
		exit(0);
	if (mode("quick_exit_kernel"))
		quick_exit(0);
	if (mode("segv_kernel"))
		*(volatile int *)(uintptr_t)args[2] = 1; /* args[2] is 0: no third argument */
	if (mode("exit_kernel"))
		exit(3);
	const struct tp_tile *x = (const struct tp_tile *)(intptr_t)args[0];
	const struct tp_tile *y = (const struct tp_tile *)(intptr_t)args[1];
	struct tp_tile u;
	if (tp_local_tile(&u, TP_MEM_UB, TP_FP32, x->rows, x->cols) || tp_copy_in(&u, x) ||
	    tp_vmuls(&u, &u, 2.0f) || tp_vadds(&u, &u, 1.0f))
		return;
	tp_copy_out(y, &u);
}

static int bad_orch(struct tp_orch *o, const struct tp_case_args *args)
{
	uint32_t sh[2] = { ROWS, COLS }, row[2] = { 1, COLS };
	struct tp_tensor x, y;
	int rc;
	if (mode("segv_orch"))
		*(volatile int *)(uintptr_t)args->scalars[0] = 1; /* no scalars: 0 */
	if (mode("fail_orch"))
		return -EINVAL;
	static int calls;
	if (mode("fail_round2_orch") && ++calls == 2)
		return -EIO;
	if ((rc = tp_tensor_make_contiguous(&x, (uintptr_t)args->tensors[0].data, TP_FP32, 2, sh)) ||
	    (rc = tp_tensor_make_contiguous(&y, (uintptr_t)args->tensors[1].data, TP_FP32, 2, sh)))
		return rc;
	for (uint32_t r = 0; r < ROWS; r++) {
		uint32_t off[2] = { r, 0 };
		struct tp_tensor xv, yv;
		struct tp_task_args a;
		if ((rc = tp_tensor_view(&x, row, off, &xv)) || (rc = tp_tensor_view(&y, row, off, &yv)))
			return rc;
		tp_args_init(&a);
		tp_args_add_input(&a, &xv);
		tp_args_add_output_existing(&a, &yv);
		if ((rc = tp_submit_aiv(o, 0, &a, NULL)))
			return rc;
	}
	if (mode("loop_orch"))
		for (volatile unsigned long spin = 0;; spin++) /* never returns */
			;
	return mode("fail_late_orch") ? -EIO : 0;
}

static int bad_generate(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	if (mode("abort_generate"))
		abort();
	if (mode("stack_generate"))
		return deep(0);
	if (mode("ret5"))
		return 5;
	float *buf = calloc(2u * ROWS * COLS, sizeof(float));
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < ROWS * COLS; i++)
		buf[i] = (float)i * 0.5f;
	*args = (struct tp_case_args){ .n_tensors = 2, .priv = buf };
	args->tensors[0] = (struct tp_case_tensor){
		.name = "x", .data = buf, .bytes = ROWS * COLS * sizeof(float),
		.dtype = TP_FP32, .ndims = 2, .shape = { ROWS, COLS },
	};
	args->tensors[1] = args->tensors[0];
	args->tensors[1].name = "y";
	args->tensors[1].data = buf + ROWS * COLS;
	args->tensors[1].is_out = true;
	if (mode("null_data"))
		args->tensors[1].data = NULL;
	if (mode("ndims"))
		args->tensors[1].ndims = 60;
	if (mode("bytes_small"))
		args->tensors[1].bytes = 4;
	if (mode("huge_input")) {
		/* 1 TiB claimed (never read: refused before the copy) */
		args->tensors[0].shape[0] = 1u << 20;
		args->tensors[0].shape[1] = 1u << 18;
		args->tensors[0].bytes = (size_t)1 << 40;
	}
	return 0;
}

static int bad_golden(const struct tp_case *c, struct tp_case_args *e)
{
	(void)c;
	const float *x = e->tensors[0].data;
	float *y = e->tensors[1].data;
	for (uint32_t i = 0; i < ROWS * COLS; i++)
		y[i] = 2.0f * x[i] + 1.0f;
	return 0;
}

static void bad_release(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	free(args->priv);
	args->priv = NULL;
}

static const struct tp_case_kernel good_kernels[] = {
	{ 0, "AXPB", TP_CASE_AIV, k_axpb },
};
static const struct tp_case_kernel bad_kernels[] = {
	{ 99, "AXPB", TP_CASE_AIV, k_axpb },
};

static const struct tp_case_kernel type7_kernels[] = {
	{ 0, "AXPB", (enum tp_case_core)7, k_axpb },
};

static struct tp_case bad_cases[] = {
	{ .name = "Default", .rtol = 1e-6, .atol = 1e-6, .generate = bad_generate,
	  .golden = bad_golden, .release = bad_release },
};

__attribute__((constructor)) static void bad_ctor(void)
{
	if (mode("abort_ctor"))
		abort();
}

static struct tp_callable bad_callable = {
	.name = "badcase",
	.orch_name = "bad_orch",
	.orch = bad_orch,
	.kernels = good_kernels,
	.n_kernels = 1,
	.cases = bad_cases,
	.n_cases = 1,
	.default_case = "Default",
};

const struct tp_callable *tp_case_callable(void)
{
	if (mode("bad_func_id"))
		bad_callable.kernels = bad_kernels;
	if (mode("newline_name"))
		bad_callable.name = "bad\ncase";
	if (mode("neg_tol"))
		bad_cases[0].rtol = -1;
	if (mode("core_type7"))
		bad_callable.kernels = type7_kernels;
	if (mode("exit_entry"))
		exit(3);
	if (mode("wild_entry"))
		return (const struct tp_callable *)(uintptr_t)0x1234;
	return &bad_callable;
}
