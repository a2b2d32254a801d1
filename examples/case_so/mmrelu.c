/* SPDX-License-Identifier: MIT */
/*
 * examples/case_so/mmrelu.c — the worked example of docs/cases.md: a case
 * shared object with a cube kernel and a vector kernel chained through a
 * runtime-allocated intermediate.
 *
 *     Y = alpha · relu(A × B)     A fp32 [64, 32], B fp32 [32, 64],
 *                                 Y fp32 [64, 64], alpha a float scalar
 *
 * in 4 row blocks of 16 rows; per block, inside its own scope:
 *
 *     MM   (AIC)  IN A[16 rows], IN B        -> OUTPUT t fp32 [16, 64]
 *     RELU (AIV)  IN t, scalar alpha         -> OUTPUT_EXISTING Y[16 rows]
 *
 * RELU depends on MM through t (t's creator is the MM task); nothing
 * else orders the tasks. 8 tasks in all.
 *
 * Built by CMake into build/examples/libmmrelu.so (tests/cli/
 * test_cli_case_guide.sh runs it). By hand, from the repository's top
 * folder after `make` (docs/cases.md):
 *
 *     gcc -Wall -Wextra -shared -fPIC -I include -I src \
 *         examples/case_so/mmrelu.c -o libmmrelu.so \
 *         -L build -ltaskprof -Wl,-rpath,$PWD/build
 *     ./build/taskprof run ./libmmrelu.so
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/orch.h"     /* orchestrator API: not yet a stable header */
#include "taskprof/case.h"    /* tp_callable, tp_case, tp_case_kernel */
#include "taskprof/kernel.h"  /* tile API */

#define M 64u    /* rows of A and Y */
#define K 32u    /* cols of A, rows of B */
#define N 64u    /* cols of B and Y */
#define BM 16u   /* rows per block: M / BM blocks */
#define ALPHA 0.5f

enum { FUNC_MM = 0, FUNC_RELU = 1 };            /* func_ids: 0 .. n_kernels-1 */
enum { ARG_A = 0, ARG_B = 1, ARG_Y = 2, N_ARGS }; /* the case's tensors */

/* ---- kernels: void fn(int64_t *args) ------------------------------------
 * args[] = one GM struct tp_tile pointer per tensor argument, in the order
 * the orchestration added them, then the raw 64-bit scalars. A failing tile
 * op records the core's error, which fails the run naming the task and
 * kernel; the kernel only has to stop. */

static const struct tp_tile *arg_tile(const int64_t *args, int i)
{
	return (const struct tp_tile *)(intptr_t)args[i];
}

/* MM (AIC): args[0] a [BM, K], args[1] b [K, N], args[2] t [BM, N]. */
static void k_mm(int64_t *args)
{
	const struct tp_tile *a = arg_tile(args, 0), *b = arg_tile(args, 1);
	const struct tp_tile *t = arg_tile(args, 2);
	struct tp_tile a1, b1, a0, b0, c0;
	if (tp_local_tile(&a1, TP_MEM_L1, TP_FP32, a->rows, a->cols) ||
	    tp_local_tile(&b1, TP_MEM_L1, TP_FP32, b->rows, b->cols) ||
	    tp_local_tile(&a0, TP_MEM_L0A, TP_FP32, a->rows, a->cols) ||
	    tp_local_tile(&b0, TP_MEM_L0B, TP_FP32, b->rows, b->cols) ||
	    tp_local_tile(&c0, TP_MEM_L0C, TP_FP32, a->rows, b->cols) ||
	    tp_copy_in(&a1, a) || tp_copy_in(&b1, b) ||   /* GM -> L1   (MTE2) */
	    tp_load_l0(&a0, &a1, 0) || tp_load_l0(&b0, &b1, 0) || /* -> L0 (MTE1) */
	    tp_mmad(&c0, &a0, &b0, 0))                    /* L0C = A·B  (CUBE) */
		return;
	tp_fixpipe(t, &c0);                               /* L0C -> GM  (FIXP) */
}

/* RELU (AIV): args[0] t [BM, N], args[1] y [BM, N], args[2] alpha (binary32
 * bits in the low half). */
static void k_relu(int64_t *args)
{
	const struct tp_tile *t = arg_tile(args, 0), *y = arg_tile(args, 1);
	uint32_t bits = (uint32_t)args[2];
	float alpha;
	memcpy(&alpha, &bits, sizeof(alpha));
	struct tp_tile u;
	if (tp_local_tile(&u, TP_MEM_UB, TP_FP32, t->rows, t->cols) ||
	    tp_copy_in(&u, t) || tp_vrelu(&u, &u) || tp_vmuls(&u, &u, alpha))
		return;
	tp_copy_out(y, &u);
}

/* ---- orchestration: runs on the orchestrator thread (an AICPU) ----------
 * args->tensors[i].data are device addresses here. */

static int mmrelu_orch(struct tp_orch *o, const struct tp_case_args *args)
{
	if (args->n_tensors != N_ARGS || args->n_scalars != 1)
		return -EINVAL;
	const uint32_t sa[2] = { M, K }, sb[2] = { K, N }, sy[2] = { M, N };
	struct tp_tensor A, B, Y;
	int rc;
	if ((rc = tp_tensor_make_contiguous(&A, (uintptr_t)args->tensors[ARG_A].data, TP_FP32, 2, sa)) ||
	    (rc = tp_tensor_make_contiguous(&B, (uintptr_t)args->tensors[ARG_B].data, TP_FP32, 2, sb)) ||
	    (rc = tp_tensor_make_contiguous(&Y, (uintptr_t)args->tensors[ARG_Y].data, TP_FP32, 2, sy)))
		return rc;
	for (uint32_t m0 = 0; m0 < M; m0 += BM) {
		const uint32_t ash[2] = { BM, K }, ysh[2] = { BM, N }, off[2] = { m0, 0 };
		const uint32_t tsh[2] = { BM, N };
		struct tp_tensor a_blk, y_blk, t;
		struct tp_task_args a;
		if ((rc = tp_tensor_view(&A, ash, off, &a_blk)) ||
		    (rc = tp_tensor_view(&Y, ysh, off, &y_blk)))
			return rc;
		if ((rc = tp_scope_begin(o)))
			return rc;

		tp_args_init(&a);
		tp_args_add_input(&a, &a_blk);            /* args[0] */
		tp_args_add_input(&a, &B);                /* args[1] */
		tp_args_add_output(&a, TP_FP32, 2, tsh);  /* args[2]: runtime allocates */
		if ((rc = tp_submit_aic(o, FUNC_MM, &a, NULL)))
			return rc;
		t = a.tensors[2];                         /* the materialised output */

		tp_args_init(&a);
		tp_args_add_input(&a, &t);                /* waits for MM */
		tp_args_add_output_existing(&a, &y_blk);
		tp_args_add_scalar(&a, args->scalars[0]); /* alpha, as generated */
		if ((rc = tp_submit_aiv(o, FUNC_RELU, &a, NULL)))
			return rc;

		if ((rc = tp_scope_end(o)))
			return rc;
	}
	return 0;
}

/* ---- the case: generate, golden, release (host memory) ----------------- */

static int mmrelu_generate(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	float *buf = malloc((M * K + K * N + M * N) * sizeof(float));
	if (!buf)
		return -ENOMEM;
	float *a = buf, *b = a + M * K, *y = b + K * N;
	/* Multiples of 1/8 in [-1, 1): every product and sum is exact in fp32. */
	for (uint32_t i = 0; i < M * K; i++)
		a[i] = (float)((int)(i * 7u % 16u) - 8) / 8.0f;
	for (uint32_t i = 0; i < K * N; i++)
		b[i] = (float)((int)(i * 5u % 16u) - 8) / 8.0f;
	for (uint32_t i = 0; i < M * N; i++)
		y[i] = -1.0f; /* the device's Y starts so: a missed row shows */

	memset(args, 0, sizeof(*args));
	args->priv = buf;
	args->n_tensors = N_ARGS;
	args->tensors[ARG_A] = (struct tp_case_tensor){
		.name = "a", .data = a, .bytes = M * K * sizeof(float),
		.dtype = TP_FP32, .ndims = 2, .shape = { M, K },
	};
	args->tensors[ARG_B] = (struct tp_case_tensor){
		.name = "b", .data = b, .bytes = K * N * sizeof(float),
		.dtype = TP_FP32, .ndims = 2, .shape = { K, N },
	};
	args->tensors[ARG_Y] = (struct tp_case_tensor){
		.name = "y", .data = y, .bytes = M * N * sizeof(float),
		.dtype = TP_FP32, .ndims = 2, .shape = { M, N }, .is_out = true,
	};
	float alpha = ALPHA;
	uint32_t bits;
	memcpy(&bits, &alpha, sizeof(bits));
	args->n_scalars = 1;
	args->scalars[0] = bits; /* a float: its binary32 bits in the low half */
	return 0;
}

static int mmrelu_golden(const struct tp_case *c, struct tp_case_args *e)
{
	(void)c;
	const float *a = e->tensors[ARG_A].data, *b = e->tensors[ARG_B].data;
	float *y = e->tensors[ARG_Y].data;
	uint32_t bits = (uint32_t)e->scalars[0];
	float alpha;
	memcpy(&alpha, &bits, sizeof(alpha));
	for (uint32_t i = 0; i < M; i++)
		for (uint32_t j = 0; j < N; j++) {
			float s = 0.0f;
			for (uint32_t k = 0; k < K; k++)
				s += a[i * K + k] * b[k * N + j];
			y[i * N + j] = alpha * (s > 0.0f ? s : 0.0f);
		}
	return 0;
}

static void mmrelu_release(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	free(args->priv);
	args->priv = NULL;
}

/* ---- the callable and its entry point ----------------------------------- */

static const struct tp_case_kernel mmrelu_kernels[] = {
	{ FUNC_MM, "MM", TP_CASE_AIC, k_mm },
	{ FUNC_RELU, "RELU", TP_CASE_AIV, k_relu },
};

static const struct tp_case mmrelu_cases[] = {
	{ .name = "Default", .rtol = 1e-5, .atol = 1e-5, .generate = mmrelu_generate,
	  .golden = mmrelu_golden, .release = mmrelu_release },
};

static const struct tp_callable mmrelu_callable = {
	.name = "mmrelu",
	.orch_name = "mmrelu_orch",
	.orch = mmrelu_orch,
	.kernels = mmrelu_kernels,
	.n_kernels = 2,
	.cases = mmrelu_cases,
	.n_cases = 1,
	.default_case = "Default",
};

const struct tp_callable *tp_case_callable(void)
{
	return &mmrelu_callable;
}
