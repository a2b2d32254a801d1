/* SPDX-License-Identifier: MIT */
/*
 * examples/gemm/gemm_callable.h — the `gemm` callable: a tiled matrix
 * multiply C[M, N] = A[M, K] · B[K, N], bf16 inputs, fp32 output.
 *
 * The orchestration submits one AIC task per output tile of
 * GEMM_TILE_M × GEMM_TILE_N (edge tiles smaller): IN a view A[m0.., :]
 * (tm × K), IN a view B[:, n0..] (K × tn), OUTPUT_EXISTING a view
 * C[m0.., n0..] (tm × tn) and the scalar GEMM_TILE_K. The kernel walks K in
 * chunks of GEMM_TILE_K: GM → L1 (MTE2), L1 → L0A / L0B (MTE1), mmad into
 * one L0C accumulator (the first chunk overwrites, the rest accumulate),
 * and one fixpipe L0C → GM at the end. Tiles are independent: no edges.
 *
 * Golden: plain C, double accumulation over the bf16 inputs widened
 * exactly, rounded once to fp32; rtol = atol = 1e-3.
 */
#ifndef TASKPROF_EXAMPLES_GEMM_GEMM_CALLABLE_H
#define TASKPROF_EXAMPLES_GEMM_GEMM_CALLABLE_H

#include <stdint.h>

#include "taskprof/case.h"

#define GEMM_TILE_M 64u
#define GEMM_TILE_N 64u
#define GEMM_TILE_K 64u
#define GEMM_RTOL 1e-3
#define GEMM_ATOL 1e-3
/* C starts as this value so an output tile no task wrote fails the golden. */
#define GEMM_C_INIT (-12345.0f)

/* Signature tensors, in order. */
enum gemm_arg {
	GEMM_ARG_A = 0, /* bf16 [M, K] */
	GEMM_ARG_B,     /* bf16 [K, N] */
	GEMM_ARG_C,     /* fp32 [M, N], OUT */
	GEMM_ARG_COUNT
};

/* Kernels (func ids). */
enum gemm_func {
	GEMM_FUNC_TILE = 0, /* AIC: IN a[tm, K], IN b[K, tn], OUT c[tm, tn], scalar tk */
	GEMM_FUNC_COUNT
};

/* Kernel argument slots of GEMM_FUNC_TILE. */
enum { GEMM_K_A = 0, GEMM_K_B, GEMM_K_C, GEMM_K_TK, GEMM_K_NARGS };

/**
 * struct gemm_case - the shape of one case (tp_case.params): C[@M, @N] =
 * A[@M, @K] · B[@K, @N], sizes in elements.
 */
struct gemm_case {
	uint32_t M, N, K;
};

/**
 * gemm_tiles() - output tiles (= tasks) of an @M × @N product.
 * @M: rows of C; @N: columns of C (elements).
 *
 * Return: ceil(@M / GEMM_TILE_M) × ceil(@N / GEMM_TILE_N).
 */
static inline uint64_t gemm_tiles(uint32_t M, uint32_t N)
{
	return (uint64_t)((M + GEMM_TILE_M - 1) / GEMM_TILE_M) *
	       ((N + GEMM_TILE_N - 1) / GEMM_TILE_N);
}

/* The built-in callable "gemm"; cases Small (128×128×128, default),
 * Medium (512×512×256) and Ragged (100×72×80: edge tiles, a K tail). */
extern const struct tp_callable gemm_callable;

/**
 * gemm_kernel_tile() - the tile kernel (func GEMM_FUNC_TILE, AIC), on an
 * AICore thread with a bound AIC core context.
 * @args: [GEMM_K_A] a bf16 [tm, K] GM tile, [GEMM_K_B] b bf16 [K, tn],
 *        [GEMM_K_C] c fp32 [tm, tn] (struct tp_tile addresses), [GEMM_K_TK]
 *        the K chunk tk, 1..K.
 *
 * Failures (a NULL tile, bad shapes or tk, a tile op's error) go to the
 * core's sticky error (tp_core_ctx_fail()), not a return value.
 */
void gemm_kernel_tile(int64_t *args);

/**
 * gemm_orchestration() - submit one GEMM_FUNC_TILE task per output tile.
 * @o:    the orchestrator.
 * @args: the signature [a bf16 [M, K], b bf16 [K, N], c fp32 [M, N]] with
 *        device addresses.
 *
 * Return: 0; -EINVAL for a wrong signature; tp_tensor_make_contiguous() /
 * tp_tensor_view()'s error for shapes it refuses; a submit's error.
 * tp_last_error() says why.
 */
struct tp_orch;
int gemm_orchestration(struct tp_orch *o, const struct tp_case_args *args);

/**
 * gemm_golden_ref() - c[M, N] = a[M, K] · b[K, N] (bf16 bit patterns),
 * accumulated in double, rounded once to fp32.
 * @a: M × K bf16 bit patterns, row-major.
 * @b: K × N bf16 bit patterns, row-major.
 * @c: receives M × N floats, row-major.
 * @M, @N, @K: sizes in elements.
 */
void gemm_golden_ref(const uint16_t *a, const uint16_t *b, float *c, uint32_t M, uint32_t N,
		     uint32_t K);

#endif /* TASKPROF_EXAMPLES_GEMM_GEMM_CALLABLE_H */
