/* SPDX-License-Identifier: MIT */
/*
 * examples/paged_attention/pa_kernels.c — QK, SF, PV, UP on the tile API
 * (spec/runtime-model.md §5.4). Argument layout: pa_kernels.h.
 *
 * The kernels stop at the first failed op: the op has already recorded the
 * core's sticky error (with a message naming the op and its operands),
 * which the runtime reads in tp_core_ctx_task_end(). Shapes are not
 * checked here beyond what the ops check, and the ops check them all: a
 * tensor of the wrong shape or dtype makes a copy, move or mmad fail.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "examples/paged_attention/pa_kernels.h"
#include "platform/tile/core_ctx.h"

#define PA_TRY(x)                                                             \
	do {                                                                  \
		if ((x) != 0)                                                 \
			return;                                               \
	} while (0)

/* A NULL tensor argument is the orchestration's bug; fail the task with
 * a message rather than crash the AICore thread (the only use of a
 * non-tile-API call here). */
static bool args_present(const int64_t *args, int n, const char *kernel)
{
	for (int i = 0; i < n; i++)
		if (!args[i]) {
			tp_core_ctx_fail(tp_core_ctx_current(), -EINVAL,
					 "%s: tensor args[%d] is NULL", kernel,
					 i);
			return false;
		}
	return true;
}

static inline const struct tp_tile *arg_tile(const int64_t *args, int i)
{
	return (const struct tp_tile *)(intptr_t)args[i];
}

static inline float arg_f32(const int64_t *args, int i)
{
	uint32_t u = (uint32_t)(uint64_t)args[i];
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

/* QK (func 0, AIC): sij[M, S] = qi[M, D] · kj[S, D]ᵀ. kj goes to L0B
 * transposed (D x S), so the cube sums over D in ascending order. */
void pa_kernel_qk(int64_t *args)
{
	if (!args_present(args, PA_QK_NARGS, "QK"))
		return;
	const struct tp_tile *qi = arg_tile(args, PA_QK_QI);
	const struct tp_tile *kj = arg_tile(args, PA_QK_KJ);
	const struct tp_tile *sij = arg_tile(args, PA_QK_SIJ);
	uint32_t M = qi->rows, D = qi->cols, S = kj->rows;
	struct tp_tile q1, k1, a, b, c;

	PA_TRY(tp_local_tile(&q1, TP_MEM_L1, TP_BF16, M, D));
	PA_TRY(tp_local_tile(&k1, TP_MEM_L1, TP_BF16, S, kj->cols));
	PA_TRY(tp_local_tile(&a, TP_MEM_L0A, TP_BF16, M, D));
	PA_TRY(tp_local_tile(&b, TP_MEM_L0B, TP_BF16, kj->cols, S));
	PA_TRY(tp_local_tile(&c, TP_MEM_L0C, TP_FP32, M, S));
	PA_TRY(tp_copy_in(&q1, qi));
	PA_TRY(tp_copy_in(&k1, kj));
	PA_TRY(tp_load_l0(&a, &q1, 0));
	PA_TRY(tp_load_l0(&b, &k1, TP_LOAD_TRANSPOSE));
	PA_TRY(tp_mmad(&c, &a, &b, 0));
	PA_TRY(tp_fixpipe(sij, &c));
}

/* SF (func 1, AIV): s = sij with the columns >= valid at -inf, times
 * scale; mij = rowmax(s); p = exp(s - mij); pij = bf16(p);
 * lij = rowsum(float(pij)) — the sum of the rounded values, as §5.4 and
 * the golden say. The masked columns give exp(-inf) = 0 in pij. */
void pa_kernel_sf(int64_t *args)
{
	if (!args_present(args, PA_SF_SCALE, "SF"))
		return;
	const struct tp_tile *sij_v = arg_tile(args, PA_SF_SIJ);
	const struct tp_tile *pij = arg_tile(args, PA_SF_PIJ);
	const struct tp_tile *mij = arg_tile(args, PA_SF_MIJ);
	const struct tp_tile *lij = arg_tile(args, PA_SF_LIJ);
	float scale = arg_f32(args, PA_SF_SCALE);
	uint32_t M = sij_v->rows, valid = sij_v->cols, S = pij->cols;
	struct tp_tile s, sv, mask, m, l, p16, pf;

	PA_TRY(tp_local_tile(&s, TP_MEM_UB, TP_FP32, M, S));
	PA_TRY(tp_local_tile(&m, TP_MEM_UB, TP_FP32, M, 1));
	PA_TRY(tp_local_tile(&l, TP_MEM_UB, TP_FP32, M, 1));
	PA_TRY(tp_local_tile(&p16, TP_MEM_UB, TP_BF16, M, S));
	PA_TRY(tp_local_tile(&pf, TP_MEM_UB, TP_FP32, M, S));
	/* Fails (-EINVAL, sticky) when valid > S: the view leaves s. */
	PA_TRY(tp_tile_view(&sv, &s, 0, 0, M, valid));
	PA_TRY(tp_copy_in(&sv, sij_v));
	if (valid < S) {
		PA_TRY(tp_tile_view(&mask, &s, 0, valid, M, S - valid));
		PA_TRY(tp_vdup(&mask, -INFINITY));
	}
	PA_TRY(tp_vmuls(&s, &s, scale));
	PA_TRY(tp_vrowmax(&m, &s));
	PA_TRY(tp_vrowsub(&s, &s, &m));
	PA_TRY(tp_vexp(&s, &s));
	PA_TRY(tp_vcast(&p16, &s));
	PA_TRY(tp_vcast(&pf, &p16));
	PA_TRY(tp_vrowsum(&l, &pf));
	PA_TRY(tp_copy_out(pij, &p16));
	PA_TRY(tp_copy_out(mij, &m));
	PA_TRY(tp_copy_out(lij, &l));
}

/* PV (func 2, AIC): oi_new[M, D] = pij[M, S] · vj[S, D]. */
void pa_kernel_pv(int64_t *args)
{
	if (!args_present(args, PA_PV_NARGS, "PV"))
		return;
	const struct tp_tile *pij = arg_tile(args, PA_PV_PIJ);
	const struct tp_tile *vj = arg_tile(args, PA_PV_VJ);
	const struct tp_tile *oi_new = arg_tile(args, PA_PV_OI_NEW);
	uint32_t M = pij->rows, S = pij->cols, D = vj->cols;
	struct tp_tile p1, v1, a, b, c;

	PA_TRY(tp_local_tile(&p1, TP_MEM_L1, TP_BF16, M, S));
	PA_TRY(tp_local_tile(&v1, TP_MEM_L1, TP_BF16, vj->rows, D));
	PA_TRY(tp_local_tile(&a, TP_MEM_L0A, TP_BF16, M, S));
	PA_TRY(tp_local_tile(&b, TP_MEM_L0B, TP_BF16, vj->rows, D));
	PA_TRY(tp_local_tile(&c, TP_MEM_L0C, TP_FP32, M, D));
	PA_TRY(tp_copy_in(&p1, pij));
	PA_TRY(tp_copy_in(&v1, vj));
	PA_TRY(tp_load_l0(&a, &p1, 0));
	PA_TRY(tp_load_l0(&b, &v1, 0));
	PA_TRY(tp_mmad(&c, &a, &b, 0));
	PA_TRY(tp_fixpipe(oi_new, &c));
}

/* UP (func 3, AIV): the online-softmax update of §5.4.
 * First block: mi = mij, li = lij, oi = oi_new. Otherwise
 * m' = max(mi, mij), α = exp(mi - m'), β = exp(mij - m'),
 * li = α·li + β·lij, oi = α·oi + β·oi_new, mi = m'.
 * Last block: also out_v = oi / li, row-wise. */
void pa_kernel_up(int64_t *args)
{
	if (!args_present(args, PA_UP_IS_FIRST, "UP"))
		return;
	const struct tp_tile *mij_g = arg_tile(args, PA_UP_MIJ);
	const struct tp_tile *lij_g = arg_tile(args, PA_UP_LIJ);
	const struct tp_tile *oin_g = arg_tile(args, PA_UP_OI_NEW);
	const struct tp_tile *mi_g = arg_tile(args, PA_UP_MI);
	const struct tp_tile *li_g = arg_tile(args, PA_UP_LI);
	const struct tp_tile *oi_g = arg_tile(args, PA_UP_OI);
	const struct tp_tile *out_g = arg_tile(args, PA_UP_OUT);
	int is_first = args[PA_UP_IS_FIRST] != 0;
	int is_last = args[PA_UP_IS_LAST] != 0;
	uint32_t M = oin_g->rows, D = oin_g->cols;
	struct tp_tile mij, lij, oin, mi, li, oi, mn, al, be, t;

	PA_TRY(tp_local_tile(&mij, TP_MEM_UB, TP_FP32, M, 1));
	PA_TRY(tp_local_tile(&lij, TP_MEM_UB, TP_FP32, M, 1));
	PA_TRY(tp_local_tile(&oin, TP_MEM_UB, TP_FP32, M, D));
	PA_TRY(tp_copy_in(&mij, mij_g));
	PA_TRY(tp_copy_in(&lij, lij_g));
	PA_TRY(tp_copy_in(&oin, oin_g));
	if (is_first) {
		mi = mij;
		li = lij;
		oi = oin;
	} else {
		PA_TRY(tp_local_tile(&mi, TP_MEM_UB, TP_FP32, M, 1));
		PA_TRY(tp_local_tile(&li, TP_MEM_UB, TP_FP32, M, 1));
		PA_TRY(tp_local_tile(&oi, TP_MEM_UB, TP_FP32, M, D));
		PA_TRY(tp_local_tile(&mn, TP_MEM_UB, TP_FP32, M, 1));
		PA_TRY(tp_local_tile(&al, TP_MEM_UB, TP_FP32, M, 1));
		PA_TRY(tp_local_tile(&be, TP_MEM_UB, TP_FP32, M, 1));
		PA_TRY(tp_local_tile(&t, TP_MEM_UB, TP_FP32, M, 1));
		PA_TRY(tp_copy_in(&mi, mi_g));
		PA_TRY(tp_copy_in(&li, li_g));
		PA_TRY(tp_copy_in(&oi, oi_g));
		PA_TRY(tp_vmax(&mn, &mi, &mij));
		PA_TRY(tp_vsub(&al, &mi, &mn));
		PA_TRY(tp_vexp(&al, &al));
		PA_TRY(tp_vsub(&be, &mij, &mn));
		PA_TRY(tp_vexp(&be, &be));
		PA_TRY(tp_vmul(&li, &al, &li));
		PA_TRY(tp_vmul(&t, &be, &lij));
		PA_TRY(tp_vadd(&li, &li, &t));
		PA_TRY(tp_vrowmul(&oi, &oi, &al));
		PA_TRY(tp_vrowmul(&oin, &oin, &be));
		PA_TRY(tp_vadd(&oi, &oi, &oin));
		PA_TRY(tp_vcopy(&mi, &mn));
	}
	PA_TRY(tp_copy_out(mi_g, &mi));
	PA_TRY(tp_copy_out(li_g, &li));
	PA_TRY(tp_copy_out(oi_g, &oi));
	if (is_last) {
		/* oin is free again: reuse it for out = oi / li. */
		PA_TRY(tp_vrowdiv(&oin, &oi, &li));
		PA_TRY(tp_copy_out(out_g, &oin));
	}
}

const struct pa_kernel_info pa_kernels[PA_FUNC_COUNT] = {
	[PA_FUNC_QK] = { PA_FUNC_QK, "QK", TP_CORE_AIC, pa_kernel_qk,
			 PA_QK_NARGS, 0 },
	[PA_FUNC_SF] = { PA_FUNC_SF, "SF", TP_CORE_AIV, pa_kernel_sf,
			 PA_SF_NARGS - 1, 1 },
	[PA_FUNC_PV] = { PA_FUNC_PV, "PV", TP_CORE_AIC, pa_kernel_pv,
			 PA_PV_NARGS, 0 },
	[PA_FUNC_UP] = { PA_FUNC_UP, "UP", TP_CORE_AIV, pa_kernel_up,
			 PA_UP_NARGS - 2, 2 },
};
