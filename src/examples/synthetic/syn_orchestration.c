/* SPDX-License-Identifier: MIT */
/*
 * examples/synthetic/syn_orchestration.c — the synthetic graph
 * (syn_callable.h): every piece works on views of its own int32 tensor.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "examples/synthetic/syn_callable.h"
#include "runtime/orch.h"

static const uint32_t syn_len[SYN_ARG_COUNT] = {
	[SYN_ARG_DUMMY] = 4,
	[SYN_ARG_PRED] = 3,
	[SYN_ARG_SPMD] = SYN_SPMD_BLOCKS * SYN_SPMD_SLICE,
	[SYN_ARG_MIX] = 7,
	[SYN_ARG_FANOUT] = 1 + SYN_FANOUT,
	[SYN_ARG_CHAIN] = 1 + SYN_CHAIN,
	[SYN_ARG_ASYNC] = 2 * SYN_ASYNC_N + 2,
	[SYN_ARG_EARLY] = 2,
	[SYN_ARG_ALLOC] = 1,
};

/* Elements [off, off + n) of @t; the callers stay inside @t. */
static struct tp_tensor view(const struct tp_tensor *t, uint32_t off, uint32_t n)
{
	struct tp_tensor v = *t;
	if (tp_tensor_view(t, &n, &off, &v))
		v.shapes[0] = 0; /* makes the submit fail with -EINVAL */
	return v;
}

/* A single-core task of kernel @func (AIC or AIV by its declared type). */
static int submit1(struct tp_orch *o, enum syn_func func, struct tp_task_args *a)
{
	if (syn_kernels[func].core_type == TP_CASE_AIC)
		return tp_submit_aic(o, func, a, NULL);
	return tp_submit_aiv(o, func, a, NULL);
}

/* SET @x = v + i. */
static int submit_set(struct tp_orch *o, enum syn_func func, struct tp_tensor x, int64_t v)
{
	struct tp_task_args a;
	tp_args_init(&a);
	tp_args_add_output_existing(&a, &x);
	tp_args_add_scalar(&a, (uint64_t)v);
	return submit1(o, func, &a);
}

/* ADDS @y = x + s + i, optionally predicated on x != 0. */
static int submit_adds(struct tp_orch *o, struct tp_tensor x, struct tp_tensor y, bool inout,
		       int64_t s, bool pred)
{
	struct tp_task_args a;
	tp_args_init(&a);
	tp_args_add_input(&a, &x);
	if (inout)
		tp_args_add_inout(&a, &y);
	else
		tp_args_add_output_existing(&a, &y);
	tp_args_add_scalar(&a, (uint64_t)s);
	if (pred)
		tp_args_set_predicate(&a, &x, 0, TP_PRED_NE, 0);
	return submit1(o, SYN_FUNC_ADDS, &a);
}

static int piece_dummy(struct tp_orch *o, const struct tp_tensor *t)
{
	struct tp_tensor a = view(t, 0, 1), b = view(t, 1, 1), j = view(t, 2, 1),
			 out = view(t, 3, 1);
	struct tp_task_args ar;
	int rc;
	if ((rc = submit_set(o, SYN_FUNC_SET_C, a, 11)) ||
	    (rc = submit_set(o, SYN_FUNC_SET_V, b, 22)))
		return rc;
	/* The join: depends on both SETs, never dispatched. */
	tp_args_init(&ar);
	tp_args_add_input(&ar, &a);
	tp_args_add_input(&ar, &b);
	tp_args_add_inout(&ar, &j);
	if ((rc = tp_submit_dummy(o, &ar, NULL)))
		return rc;
	/* a and b without a dependency: only the dummy orders ADD2 after
	 * the SETs. */
	tp_args_init(&ar);
	tp_args_add_no_dep(&ar, &a);
	tp_args_add_no_dep(&ar, &b);
	tp_args_add_input(&ar, &j);
	tp_args_add_output_existing(&ar, &out);
	return submit1(o, SYN_FUNC_ADD2, &ar);
}

static int piece_pred(struct tp_orch *o, const struct tp_tensor *t)
{
	struct tp_tensor flag = view(t, 0, 1), pout = view(t, 1, 1), pres = view(t, 2, 1);
	int rc;
	/* flag starts at 1: the predicate must be read after SET ran. */
	if ((rc = submit_set(o, SYN_FUNC_SET_C, flag, 0)) ||
	    (rc = submit_adds(o, flag, pout, true, 1000, true)))
		return rc;
	return submit_adds(o, pout, pres, false, 3, false);
}

static int piece_spmd(struct tp_orch *o, const struct tp_tensor *t)
{
	struct tp_task_args a;
	tp_args_init(&a);
	tp_args_add_inout(&a, t);
	tp_args_set_block_num(&a, SYN_SPMD_BLOCKS);
	return submit1(o, SYN_FUNC_BLOCK, &a);
}

static int piece_mix(struct tp_orch *o, const struct tp_tensor *t)
{
	struct tp_tensor parts = view(t, 0, 6), sum = view(t, 6, 1);
	struct tp_task_args a;
	int rc;
	tp_args_init(&a);
	tp_args_add_inout(&a, &parts);
	const int32_t k[3] = { SYN_FUNC_MIX_C, SYN_FUNC_MIX_V0, SYN_FUNC_MIX_V1 };
	if ((rc = tp_submit(o, k, &a, NULL)))
		return rc;
	tp_args_init(&a);
	tp_args_add_input(&a, &parts);
	tp_args_add_output_existing(&a, &sum);
	return submit1(o, SYN_FUNC_SUM, &a);
}

static int piece_fanout(struct tp_orch *o, const struct tp_tensor *t)
{
	struct tp_tensor src = view(t, 0, 1);
	int rc;
	if ((rc = submit_set(o, SYN_FUNC_SET_C, src, 12345)))
		return rc;
	for (uint32_t i = 0; i < SYN_FANOUT; i++)
		if ((rc = submit_adds(o, src, view(t, 1 + i, 1), false, 7 * (int64_t)i, false)))
			return rc;
	return 0;
}

static int piece_chain(struct tp_orch *o, const struct tp_tensor *t)
{
	struct tp_tensor c = view(t, 0, 1);
	for (uint32_t i = 0; i < SYN_CHAIN; i++) {
		struct tp_tensor tr = view(t, 1 + i, 1);
		struct tp_task_args a;
		tp_args_init(&a);
		tp_args_add_inout(&a, &c);
		tp_args_add_output_existing(&a, &tr);
		tp_args_add_scalar(&a, i);
		int rc = submit1(o, i % 2 ? SYN_FUNC_STEP_V : SYN_FUNC_STEP_C, &a);
		if (rc)
			return rc;
	}
	return 0;
}

static int piece_async(struct tp_orch *o, const struct tp_tensor *t)
{
	struct tp_tensor src = view(t, 0, SYN_ASYNC_N), dst = view(t, SYN_ASYNC_N, SYN_ASYNC_N),
			 cnt = view(t, 2 * SYN_ASYNC_N, 1), sum = view(t, 2 * SYN_ASYNC_N + 1, 1);
	struct tp_task_args a;
	int rc;
	if ((rc = submit_set(o, SYN_FUNC_SET_C, src, 500)))
		return rc;
	tp_args_init(&a);
	tp_args_add_input(&a, &src);
	tp_args_add_output_existing(&a, &dst);
	tp_args_add_inout(&a, &cnt);
	tp_args_add_scalar(&a, SYN_ASYNC_DELAY_US);
	if ((rc = submit1(o, SYN_FUNC_ASYNC_COPY, &a)))
		return rc;
	tp_args_init(&a);
	tp_args_add_input(&a, &dst);
	tp_args_add_output_existing(&a, &sum);
	return submit1(o, SYN_FUNC_SUM, &a);
}

/* The early-dispatch pair: ADDS is submitted while SLOW_SET sleeps on
 * its core, so with early dispatch on it is staged gated. */
static int piece_early(struct tp_orch *o, const struct tp_tensor *t)
{
	struct tp_tensor val = view(t, 0, 1), out = view(t, 1, 1);
	struct tp_task_args a;
	int rc;
	tp_args_init(&a);
	tp_args_add_output_existing(&a, &val);
	tp_args_add_scalar(&a, SYN_EARLY_VALUE);
	tp_args_add_scalar(&a, SYN_EARLY_DELAY_US);
	if ((rc = submit1(o, SYN_FUNC_SLOW_SET, &a)))
		return rc;
	return submit_adds(o, val, out, false, SYN_EARLY_ADD, false);
}

/* The alloc piece: an intermediate tensor from alloc_tensors, written by
 * SET (a creator edge alloc → SET) and read by ADDS into the signature
 * tensor, so the golden sees that the allocation was usable. */
static int piece_alloc(struct tp_orch *o, const struct tp_tensor *t)
{
	const struct tp_tensor_create ci = { .dtype = TP_INT32, .ndims = 1, .shapes = { 1 } };
	struct tp_tensor scratch;
	int rc;
	if ((rc = tp_alloc_tensors(o, 1, &ci, &scratch, NULL)) ||
	    (rc = submit_set(o, SYN_FUNC_SET_V, scratch, SYN_ALLOC_VALUE)))
		return rc;
	return submit_adds(o, scratch, *t, false, SYN_ALLOC_ADD, false);
}

int syn_orchestration(struct tp_orch *o, const struct tp_case_args *args)
{
	static int (*const pieces[SYN_ARG_COUNT])(struct tp_orch *, const struct tp_tensor *) = {
		[SYN_ARG_DUMMY] = piece_dummy, [SYN_ARG_PRED] = piece_pred,
		[SYN_ARG_SPMD] = piece_spmd,   [SYN_ARG_MIX] = piece_mix,
		[SYN_ARG_FANOUT] = piece_fanout, [SYN_ARG_CHAIN] = piece_chain,
		[SYN_ARG_ASYNC] = piece_async, [SYN_ARG_EARLY] = piece_early,
		[SYN_ARG_ALLOC] = piece_alloc,
	};
	if (args->n_tensors != SYN_ARG_COUNT)
		return tp_set_error(-EINVAL, "synthetic: expected %d tensors, got %u",
				    SYN_ARG_COUNT, args->n_tensors);
	for (int i = 0; i < SYN_ARG_COUNT; i++) {
		const struct tp_case_tensor *ct = &args->tensors[i];
		struct tp_tensor t;
		if (ct->dtype != TP_INT32 || ct->bytes != syn_len[i] * sizeof(int32_t) ||
		    tp_tensor_make_contiguous(&t, (uintptr_t)ct->data, TP_INT32, 1, &syn_len[i]))
			return tp_set_error(-EINVAL, "synthetic: tensor %d ('%s') must be "
					    "int32 [%u]", i, ct->name ? ct->name : "?",
					    syn_len[i]);
		int rc = pieces[i](o, &t);
		if (rc)
			return rc;
	}
	return 0;
}

uint32_t syn_tensor_len(enum syn_arg i)
{
	return (unsigned)i < SYN_ARG_COUNT ? syn_len[i] : 0;
}
