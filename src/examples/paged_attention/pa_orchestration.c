/* SPDX-License-Identifier: MIT */
/*
 * examples/paged_attention/pa_orchestration.c — the paged-attention
 * orchestration (spec/runtime-model.md §5.3):
 *
 *   for b in 0..B-1:  for q in 0..q_loop-1:
 *     scope {                                      ring 1
 *       (oi, li, mi) = alloc_tensors(...)          task A
 *       for bn in 0..bn_b-1:  scope {              ring 2
 *         QK (AIC) -> sij;  SF (AIV) -> pij, mij, lij;
 *         PV (AIC) -> oi_new;  UP (AIV) inout mi, li, oi, out_v
 *       }
 *     }
 */
#include <errno.h>
#include <stdint.h>

#include "base/error.h"
#include "examples/paged_attention/pa_callable.h"
#include "examples/paged_attention/pa_inputs.h"
#include "examples/paged_attention/pa_kernels.h"
#include "runtime/orch.h"

/* One (b, q) head tile: its scope, its accumulators and its blocks. */
struct pa_tile_ctx {
	const struct tp_tensor *kc, *vc;
	struct tp_tensor qi, out_v;
	uint32_t M, S, D;
	uint64_t scale;
};

static int submit_block(struct tp_orch *o, const struct pa_tile_ctx *t, struct tp_tensor *acc,
			uint32_t blk, uint32_t valid, int is_first, int is_last)
{
	const uint32_t M = t->M, S = t->S, D = t->D;
	uint32_t ksh[2] = { S, D }, koff[2] = { blk * S, 0 };
	uint32_t s_ms[2] = { M, S }, s_m[1] = { M }, s_md[2] = { M, D };
	struct tp_tensor kj, vj, sij_v;
	struct tp_task_args a;
	int rc;

	if ((rc = tp_tensor_view(t->kc, ksh, koff, &kj)) ||
	    (rc = tp_tensor_view(t->vc, ksh, koff, &vj)))
		return rc;

	tp_args_init(&a);
	tp_args_add_input(&a, &t->qi);
	tp_args_add_input(&a, &kj);
	tp_args_add_output(&a, TP_FP32, 2, s_ms);
	if ((rc = tp_submit_aic(o, PA_FUNC_QK, &a, NULL)))
		return rc;
	struct tp_tensor sij = a.tensors[PA_QK_SIJ];

	uint32_t vv[2] = { M, valid }, z[2] = { 0, 0 };
	if ((rc = tp_tensor_view(&sij, vv, z, &sij_v)))
		return rc;
	tp_args_init(&a);
	tp_args_add_input(&a, &sij_v);
	tp_args_add_output(&a, TP_BF16, 2, s_ms);
	tp_args_add_output(&a, TP_FP32, 1, s_m);
	tp_args_add_output(&a, TP_FP32, 1, s_m);
	tp_args_add_scalar(&a, t->scale);
	if ((rc = tp_submit_aiv(o, PA_FUNC_SF, &a, NULL)))
		return rc;
	struct tp_tensor pij = a.tensors[PA_SF_PIJ];
	struct tp_tensor mij = a.tensors[PA_SF_MIJ];
	struct tp_tensor lij = a.tensors[PA_SF_LIJ];

	tp_args_init(&a);
	tp_args_add_input(&a, &pij);
	tp_args_add_input(&a, &vj);
	tp_args_add_output(&a, TP_FP32, 2, s_md);
	if ((rc = tp_submit_aic(o, PA_FUNC_PV, &a, NULL)))
		return rc;
	struct tp_tensor oi_new = a.tensors[PA_PV_OI_NEW];

	/* acc = { oi, li, mi } as alloc_tensors created them. */
	tp_args_init(&a);
	tp_args_add_input(&a, &mij);
	tp_args_add_input(&a, &lij);
	tp_args_add_input(&a, &oi_new);
	tp_args_add_inout(&a, &acc[2]);
	tp_args_add_inout(&a, &acc[1]);
	tp_args_add_inout(&a, &acc[0]);
	tp_args_add_inout(&a, &t->out_v);
	tp_args_add_scalar(&a, (uint64_t)is_first);
	tp_args_add_scalar(&a, (uint64_t)is_last);
	return tp_submit_aiv(o, PA_FUNC_UP, &a, NULL);
}

int pa_orchestration(struct tp_orch *o, const struct tp_case_args *args)
{
	if (args->n_tensors != PA_ARG_COUNT || args->n_scalars < 1)
		return tp_set_error(-EINVAL, "paged_attention: expected %d tensors and a scale, "
				    "got %u tensors and %u scalars",
				    PA_ARG_COUNT, args->n_tensors, args->n_scalars);
	const struct tp_case_tensor *tq = &args->tensors[PA_ARG_QUERY];
	const struct tp_case_tensor *tk = &args->tensors[PA_ARG_KEY_CACHE];
	const struct tp_case_tensor *tbt = &args->tensors[PA_ARG_BLOCK_TABLE];
	if (tq->ndims != 3 || tk->ndims != 4 || tbt->ndims != 2 || tk->shape[2] != 1 ||
	    tk->shape[3] != tq->shape[2])
		return tp_set_error(-EINVAL, "paged_attention: query must be [B, H, D] and "
				    "key_cache [T, S, 1, D]");
	const uint32_t B = tq->shape[0], H = tq->shape[1], D = tq->shape[2];
	const uint32_t T = tk->shape[0], S = tk->shape[1], max_blocks = tbt->shape[1];
	const uint32_t M = H < PA_MAX_Q_TILE ? H : PA_MAX_Q_TILE;
	const uint32_t q_loop = H / M;
	const int32_t *block_table = args->tensors[PA_ARG_BLOCK_TABLE].data;
	const int32_t *context_lens = args->tensors[PA_ARG_CONTEXT_LENS].data;

	struct tp_tensor query, kc, vc, out;
	uint32_t qs[2] = { B * H, D }, ks[2] = { T * S, D };
	int rc;
	if ((rc = tp_tensor_make_contiguous(&query, (uintptr_t)tq->data, TP_BF16, 2, qs)) ||
	    (rc = tp_tensor_make_contiguous(&kc, (uintptr_t)tk->data, TP_BF16, 2, ks)) ||
	    (rc = tp_tensor_make_contiguous(&vc, (uintptr_t)args->tensors[PA_ARG_VALUE_CACHE].data,
					    TP_BF16, 2, ks)) ||
	    (rc = tp_tensor_make_contiguous(&out, (uintptr_t)args->tensors[PA_ARG_OUT].data,
					    TP_FP32, 2, qs)))
		return tp_set_error(rc, "paged_attention: bad tensor shapes");

	struct pa_tile_ctx t = {
		.kc = &kc, .vc = &vc, .M = M, .S = S, .D = D, .scale = args->scalars[0],
	};
	for (uint32_t b = 0; b < B; b++) {
		const uint32_t ctx = (uint32_t)context_lens[b];
		const uint32_t bn_b = (ctx + S - 1) / S;
		if (bn_b > max_blocks)
			return tp_set_error(-EINVAL, "paged_attention: context_lens[%u] = %u needs "
					    "%u blocks, block_table has %u", b, ctx, bn_b, max_blocks);
		for (uint32_t q = 0; q < q_loop; q++) {
			if ((rc = tp_scope_begin(o)))
				return rc;
			uint32_t vsh[2] = { M, D }, voff[2] = { b * H + q * M, 0 };
			if ((rc = tp_tensor_view(&query, vsh, voff, &t.qi)) ||
			    (rc = tp_tensor_view(&out, vsh, voff, &t.out_v)))
				return rc;
			const struct tp_tensor_create ci[3] = {
				{ TP_FP32, 2, { M, D } }, /* oi */
				{ TP_FP32, 1, { M } },    /* li */
				{ TP_FP32, 1, { M } },    /* mi */
			};
			struct tp_tensor acc[3];
			if ((rc = tp_alloc_tensors(o, 3, ci, acc, NULL)))
				return rc;
			for (uint32_t bn = 0; bn < bn_b; bn++) {
				int32_t blk = block_table[(size_t)b * max_blocks + bn];
				if (blk < 0 || (uint32_t)blk >= T)
					return tp_set_error(-EINVAL, "paged_attention: block_table"
							    "[%u][%u] = %d, expected 0..%u",
							    b, bn, blk, T - 1);
				uint32_t valid = ctx - bn * S < S ? ctx - bn * S : S;
				if ((rc = tp_scope_begin(o)) ||
				    (rc = submit_block(o, &t, acc, (uint32_t)blk, valid, bn == 0,
						       bn == bn_b - 1)) ||
				    (rc = tp_scope_end(o)))
					return rc;
			}
			if ((rc = tp_scope_end(o)))
				return rc;
		}
	}
	return 0;
}
