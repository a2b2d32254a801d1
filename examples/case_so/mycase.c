/* SPDX-License-Identifier: MIT */
/*
 * examples/case_so/mycase.c — a minimal case shared object
 * (taskprof/case.h, TP_CASE_ENTRY_SYMBOL):
 *
 *     taskprof run build/examples/libmycase.so [--case Default]
 *
 * y[r, :] = 2·x[r, :] + 1 on fp32 [MY_ROWS, MY_COLS], one AIV task per row.
 * Built by CMake into build/examples/libmycase.so and linked against
 * libtaskprof.so, which provides the orchestrator API (tp_args_*,
 * tp_submit_*; runtime/orch.h until include/taskprof/orch.h exists) and
 * the tile API (taskprof/kernel.h). By hand, from the repository's top
 * folder (taskprof/case.h):
 *
 *     gcc -shared -fPIC -Iinclude -Isrc examples/case_so/mycase.c \
 *         -o libmycase.so -Lbuild -ltaskprof -Wl,-rpath,$PWD/build
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/orch.h"
#include "taskprof/case.h"
#include "taskprof/kernel.h"

#define MY_ROWS 8u
#define MY_COLS 64u

/* AIV: IN x[1, MY_COLS], OUT y[1, MY_COLS]. */
static void k_axpb(int64_t *args)
{
	const struct tp_tile *x = (const struct tp_tile *)(intptr_t)args[0];
	const struct tp_tile *y = (const struct tp_tile *)(intptr_t)args[1];
	struct tp_tile u;
	if (tp_local_tile(&u, TP_MEM_UB, TP_FP32, x->rows, x->cols) || tp_copy_in(&u, x) ||
	    tp_vmuls(&u, &u, 2.0f) || tp_vadds(&u, &u, 1.0f))
		return;
	tp_copy_out(y, &u);
}

static int my_orch(struct tp_orch *o, const struct tp_case_args *args)
{
	uint32_t sh[2] = { MY_ROWS, MY_COLS }, row[2] = { 1, MY_COLS };
	struct tp_tensor x, y;
	int rc;
	if (args->n_tensors != 2)
		return -EINVAL;
	if ((rc = tp_tensor_make_contiguous(&x, (uintptr_t)args->tensors[0].data, TP_FP32, 2, sh)) ||
	    (rc = tp_tensor_make_contiguous(&y, (uintptr_t)args->tensors[1].data, TP_FP32, 2, sh)))
		return rc;
	for (uint32_t r = 0; r < MY_ROWS; r++) {
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
	return 0;
}

static int my_generate(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	float *buf = calloc(2u * MY_ROWS * MY_COLS, sizeof(float));
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < MY_ROWS * MY_COLS; i++)
		buf[i] = (float)i * 0.25f - 3.0f;
	*args = (struct tp_case_args){ .n_tensors = 2, .priv = buf };
	args->tensors[0] = (struct tp_case_tensor){
		.name = "x", .data = buf, .bytes = MY_ROWS * MY_COLS * sizeof(float),
		.dtype = TP_FP32, .ndims = 2, .shape = { MY_ROWS, MY_COLS },
	};
	args->tensors[1] = args->tensors[0];
	args->tensors[1].name = "y";
	args->tensors[1].data = buf + MY_ROWS * MY_COLS;
	args->tensors[1].is_out = true;
	return 0;
}

static int my_golden(const struct tp_case *c, struct tp_case_args *e)
{
	(void)c;
	const float *x = e->tensors[0].data;
	float *y = e->tensors[1].data;
	for (uint32_t i = 0; i < MY_ROWS * MY_COLS; i++)
		y[i] = 2.0f * x[i] + 1.0f;
	return 0;
}

static void my_release(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	free(args->priv);
	args->priv = NULL;
}

static const struct tp_case_kernel my_kernels[] = {
	{ 0, "AXPB", TP_CASE_AIV, k_axpb },
};

static const struct tp_case my_cases[] = {
	{ .name = "Default", .rtol = 1e-6, .atol = 1e-6, .generate = my_generate,
	  .golden = my_golden, .release = my_release },
};

static const struct tp_callable my_callable = {
	.name = "mycase",
	.orch_name = "my_orch",
	.orch = my_orch,
	.kernels = my_kernels,
	.n_kernels = 1,
	.cases = my_cases,
	.n_cases = 1,
	.default_case = "Default",
};

const struct tp_callable *tp_case_callable(void)
{
	return &my_callable;
}
