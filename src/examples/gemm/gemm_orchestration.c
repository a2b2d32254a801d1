/* SPDX-License-Identifier: MIT */
/*
 * examples/gemm/gemm_orchestration.c — one AIC task per output tile
 * (gemm_callable.h).
 */
#include <errno.h>
#include <stdint.h>

#include "base/error.h"
#include "examples/gemm/gemm_callable.h"
#include "runtime/orch.h"

int gemm_orchestration(struct tp_orch *o, const struct tp_case_args *args)
{
	if (args->n_tensors != GEMM_ARG_COUNT)
		return tp_set_error(-EINVAL, "gemm: expected %d tensors (a, b, c), got %u",
				    GEMM_ARG_COUNT, args->n_tensors);
	const struct tp_case_tensor *ta = &args->tensors[GEMM_ARG_A];
	const struct tp_case_tensor *tb = &args->tensors[GEMM_ARG_B];
	const struct tp_case_tensor *tc = &args->tensors[GEMM_ARG_C];
	if (ta->ndims != 2 || tb->ndims != 2 || tc->ndims != 2 || ta->dtype != TP_BF16 ||
	    tb->dtype != TP_BF16 || tc->dtype != TP_FP32 || ta->shape[1] != tb->shape[0] ||
	    tc->shape[0] != ta->shape[0] || tc->shape[1] != tb->shape[1])
		return tp_set_error(-EINVAL, "gemm: expected a bf16 [M, K], b bf16 [K, N] "
				    "and c fp32 [M, N]");
	const uint32_t M = ta->shape[0], K = ta->shape[1], N = tb->shape[1];
	struct tp_tensor A, B, C;
	int rc;
	if ((rc = tp_tensor_make_contiguous(&A, (uintptr_t)ta->data, TP_BF16, 2, ta->shape)) ||
	    (rc = tp_tensor_make_contiguous(&B, (uintptr_t)tb->data, TP_BF16, 2, tb->shape)) ||
	    (rc = tp_tensor_make_contiguous(&C, (uintptr_t)tc->data, TP_FP32, 2, tc->shape)))
		return tp_set_error(rc, "gemm: bad tensor shapes");

	for (uint32_t m0 = 0; m0 < M; m0 += GEMM_TILE_M) {
		uint32_t tm = M - m0 < GEMM_TILE_M ? M - m0 : GEMM_TILE_M;
		for (uint32_t n0 = 0; n0 < N; n0 += GEMM_TILE_N) {
			uint32_t tn = N - n0 < GEMM_TILE_N ? N - n0 : GEMM_TILE_N;
			uint32_t ash[2] = { tm, K }, aoff[2] = { m0, 0 };
			uint32_t bsh[2] = { K, tn }, boff[2] = { 0, n0 };
			uint32_t csh[2] = { tm, tn }, coff[2] = { m0, n0 };
			struct tp_tensor av, bv, cv;
			if ((rc = tp_tensor_view(&A, ash, aoff, &av)) ||
			    (rc = tp_tensor_view(&B, bsh, boff, &bv)) ||
			    (rc = tp_tensor_view(&C, csh, coff, &cv)))
				return tp_set_error(rc, "gemm: bad tile view");
			struct tp_task_args a;
			tp_args_init(&a);
			tp_args_add_input(&a, &av);
			tp_args_add_input(&a, &bv);
			tp_args_add_output_existing(&a, &cv);
			tp_args_add_scalar(&a, GEMM_TILE_K < K ? GEMM_TILE_K : K);
			if ((rc = tp_submit_aic(o, GEMM_FUNC_TILE, &a, NULL)))
				return rc;
		}
	}
	return 0;
}
