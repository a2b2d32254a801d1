/* SPDX-License-Identifier: MIT */
/*
 * examples/gemm/gemm_kernels.c — the tile kernel of `gemm` on the tile API
 * (gemm_callable.h). Stops at the first failed op: the op has recorded the
 * core's sticky error, which fails the task with its id and name.
 */
#include <errno.h>
#include <stdint.h>

#include "examples/gemm/gemm_callable.h"
#include "platform/tile/core_ctx.h"

#define GEMM_TRY(x)                                                           \
	do {                                                                  \
		if ((x) != 0)                                                 \
			return;                                               \
	} while (0)

static inline const struct tp_tile *arg_tile(const int64_t *args, int i)
{
	return (const struct tp_tile *)(intptr_t)args[i];
}

/* c[tm, tn] = a[tm, K] · b[K, tn], K in chunks of tk (args[GEMM_K_TK]). */
void gemm_kernel_tile(int64_t *args)
{
	for (int i = 0; i < GEMM_K_TK; i++)
		if (!args[i]) {
			tp_core_ctx_fail(tp_core_ctx_current(), -EINVAL,
					 "GEMM_TILE: tensor args[%d] is NULL", i);
			return;
		}
	const struct tp_tile *a = arg_tile(args, GEMM_K_A);
	const struct tp_tile *b = arg_tile(args, GEMM_K_B);
	const struct tp_tile *c = arg_tile(args, GEMM_K_C);
	uint32_t tm = a->rows, K = a->cols, tn = b->cols;
	int64_t tk64 = args[GEMM_K_TK];
	if (tk64 < 1 || tk64 > (int64_t)K || b->rows != K) {
		tp_core_ctx_fail(tp_core_ctx_current(), -EINVAL,
				 "GEMM_TILE: bad shapes: a %ux%u, b %ux%u, tk %lld", a->rows,
				 a->cols, b->rows, b->cols, (long long)tk64);
		return;
	}
	uint32_t tk = (uint32_t)tk64;
	struct tp_tile a1, b1, a0, b0, c0;

	/* Allocated once, reused by every chunk (the last may use a view). */
	GEMM_TRY(tp_local_tile(&a1, TP_MEM_L1, TP_BF16, tm, tk));
	GEMM_TRY(tp_local_tile(&b1, TP_MEM_L1, TP_BF16, tk, tn));
	GEMM_TRY(tp_local_tile(&a0, TP_MEM_L0A, TP_BF16, tm, tk));
	GEMM_TRY(tp_local_tile(&b0, TP_MEM_L0B, TP_BF16, tk, tn));
	GEMM_TRY(tp_local_tile(&c0, TP_MEM_L0C, TP_FP32, tm, tn));
	for (uint32_t k0 = 0; k0 < K; k0 += tk) {
		uint32_t kk = K - k0 < tk ? K - k0 : tk;
		struct tp_tile ag, bg, al1, bl1, al0, bl0;
		GEMM_TRY(tp_tile_view(&ag, a, 0, k0, tm, kk));
		GEMM_TRY(tp_tile_view(&bg, b, k0, 0, kk, tn));
		GEMM_TRY(tp_tile_view(&al1, &a1, 0, 0, tm, kk));
		GEMM_TRY(tp_tile_view(&bl1, &b1, 0, 0, kk, tn));
		GEMM_TRY(tp_tile_view(&al0, &a0, 0, 0, tm, kk));
		GEMM_TRY(tp_tile_view(&bl0, &b0, 0, 0, kk, tn));
		GEMM_TRY(tp_copy_in(&al1, &ag));
		GEMM_TRY(tp_copy_in(&bl1, &bg));
		GEMM_TRY(tp_load_l0(&al0, &al1, 0));
		GEMM_TRY(tp_load_l0(&bl0, &bl1, 0));
		GEMM_TRY(tp_mmad(&c0, &al0, &bl0, k0 ? TP_MMAD_ACCUMULATE : 0));
	}
	GEMM_TRY(tp_fixpipe(c, &c0));
}
