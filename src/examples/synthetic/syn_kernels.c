/* SPDX-License-Identifier: MIT */
/*
 * examples/synthetic/syn_kernels.c — the synthetic kernels: scalar code on
 * 1-D int32 GM tiles ([n, 1] views, runtime/engine.h), inside a scalar
 * section so the core's usage record sees them.
 */
#include <stdint.h>
#include <time.h>

#include "examples/synthetic/syn_callable.h"
#include "platform/tile/core_ctx.h"
#include "runtime/engine.h"

static const struct tp_tile *arg_tile(const int64_t *args, int i)
{
	return (const struct tp_tile *)(intptr_t)args[i];
}

/* Element @i of a 1-D tile. */
static int32_t *el(const struct tp_tile *t, uint32_t i)
{
	return (int32_t *)tp_tile_at(t, i, 0);
}

static void k_set(int64_t *args)
{
	const struct tp_tile *x = arg_tile(args, 0);
	tp_scalar_begin(NULL);
	for (uint32_t i = 0; i < x->rows; i++)
		*el(x, i) = (int32_t)((uint32_t)args[1] + i);
	tp_scalar_end();
}

static void k_add2(int64_t *args)
{
	tp_scalar_begin(NULL);
	*el(arg_tile(args, 3), 0) = *el(arg_tile(args, 0), 0) + *el(arg_tile(args, 1), 0) +
				    *el(arg_tile(args, 2), 0);
	tp_scalar_end();
}

static void k_adds(int64_t *args)
{
	const struct tp_tile *y = arg_tile(args, 1);
	tp_scalar_begin(NULL);
	int32_t x = *el(arg_tile(args, 0), 0);
	for (uint32_t i = 0; i < y->rows; i++)
		*el(y, i) = (int32_t)((uint32_t)x + (uint32_t)args[2] + i);
	tp_scalar_end();
}

static void k_block(int64_t *args)
{
	const struct tp_tile *x = arg_tile(args, 0);
	const uint32_t b = tp_kernel_block_idx(), s = b * SYN_SPMD_SLICE;
	tp_scalar_begin(NULL);
	*el(x, s + 0) = (int32_t)b;
	*el(x, s + 1) = (int32_t)(b * b);
	*el(x, s + 2) = (int32_t)tp_kernel_block_num();
	*el(x, s + 3) += 1; /* a block run twice shows as 2 */
	tp_scalar_end();
}

/* MIX part at @slot (0 AIC, 1 AIV0, 2 AIV1): x[2·slot] = 1 when it runs
 * on a core of the expected type, x[2·slot + 1] = 101·(slot + 1). */
static void mix_part(int64_t *args, int slot, enum tp_core_type want)
{
	const struct tp_tile *x = arg_tile(args, 0);
	const struct tp_core_ctx *ctx = tp_core_ctx_current();
	tp_scalar_begin(NULL);
	*el(x, 2u * (uint32_t)slot) = ctx && ctx->core_type == want ? 1 : -1;
	*el(x, 2u * (uint32_t)slot + 1) = 101 * (slot + 1);
	tp_scalar_end();
}

static void k_mix_c(int64_t *args) { mix_part(args, 0, TP_CORE_AIC); }
static void k_mix_v0(int64_t *args) { mix_part(args, 1, TP_CORE_AIV); }
static void k_mix_v1(int64_t *args) { mix_part(args, 2, TP_CORE_AIV); }

static void k_sum(int64_t *args)
{
	const struct tp_tile *x = arg_tile(args, 0);
	tp_scalar_begin(NULL);
	uint32_t s = 0;
	for (uint32_t i = 0; i < x->rows; i++)
		s += (uint32_t)*el(x, i);
	*el(arg_tile(args, 1), 0) = (int32_t)s;
	tp_scalar_end();
}

static void k_step(int64_t *args)
{
	int32_t *c = el(arg_tile(args, 0), 0);
	tp_scalar_begin(NULL);
	uint32_t v = (uint32_t)*c * 31u + (uint32_t)args[2];
	*c = (int32_t)v;
	*el(arg_tile(args, 1), 0) = (int32_t)v;
	tp_scalar_end();
}

/* The copy runs on the DMA engine thread after the kernel returned; the
 * task completes when the async poll sees cnt >= 1. */
static void k_async_copy(int64_t *args)
{
	const struct tp_tile *src = arg_tile(args, 0), *dst = arg_tile(args, 1);
	uint32_t *cnt = (uint32_t *)el(arg_tile(args, 2), 0);
	tp_scalar_begin(NULL);
	if (tp_kernel_dma_copy(el(dst, 0), el(src, 0), src->rows * sizeof(int32_t), cnt,
			       (uint64_t)args[3] * 1000u) == 0)
		tp_kernel_async_wait(cnt, 1);
	tp_scalar_end();
}

/* The early-dispatch producer: sleeps, then writes like SET. */
static void k_slow_set(int64_t *args)
{
	const uint64_t us = (uint64_t)args[2];
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000u),
			       .tv_nsec = (long)(us % 1000000u) * 1000L };
	while (nanosleep(&ts, &ts) != 0)
		;
	k_set(args);
}

const struct tp_case_kernel syn_kernels[SYN_FUNC_COUNT] = {
	{ SYN_FUNC_SET_C, "SET_C", TP_CASE_AIC, k_set },
	{ SYN_FUNC_SET_V, "SET_V", TP_CASE_AIV, k_set },
	{ SYN_FUNC_ADD2, "ADD2", TP_CASE_AIV, k_add2 },
	{ SYN_FUNC_ADDS, "ADDS", TP_CASE_AIV, k_adds },
	{ SYN_FUNC_BLOCK, "BLOCK", TP_CASE_AIV, k_block },
	{ SYN_FUNC_MIX_C, "MIX_C", TP_CASE_AIC, k_mix_c },
	{ SYN_FUNC_MIX_V0, "MIX_V0", TP_CASE_AIV, k_mix_v0 },
	{ SYN_FUNC_MIX_V1, "MIX_V1", TP_CASE_AIV, k_mix_v1 },
	{ SYN_FUNC_SUM, "SUM", TP_CASE_AIV, k_sum },
	{ SYN_FUNC_STEP_C, "STEP_C", TP_CASE_AIC, k_step },
	{ SYN_FUNC_STEP_V, "STEP_V", TP_CASE_AIV, k_step },
	{ SYN_FUNC_ASYNC_COPY, "ASYNC_COPY", TP_CASE_AIV, k_async_copy },
	{ SYN_FUNC_SLOW_SET, "SLOW_SET", TP_CASE_AIV, k_slow_set },
};
