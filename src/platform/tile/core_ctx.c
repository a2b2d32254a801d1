/* SPDX-License-Identifier: MIT */
/*
 * platform/tile/core_ctx.c — AICore execution context: memories, binding,
 * sticky error, task bracket.
 */
#include "platform/tile/core_ctx.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "platform/tile/tile_op.h"

/* Largest capacity tp_core_ctx_init_caps() accepts for one memory. */
#define CTX_MAX_CAP (64u * 1024u * 1024u)

static _Thread_local struct tp_core_ctx *ctx_bound;

static size_t align_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

int tp_core_ctx_init_caps(struct tp_core_ctx *ctx, int core_id,
			  enum tp_core_type core_type,
			  const size_t caps[TP_MEM_COUNT])
{
	if (!ctx || !caps)
		return tp_set_error(-EINVAL, "tp_core_ctx_init: NULL argument");
	if (core_type != TP_CORE_AIC && core_type != TP_CORE_AIV)
		return tp_set_error(-EINVAL,
				    "tp_core_ctx_init: core %d: core type %d "
				    "is neither AIC (0) nor AIV (1)",
				    core_id, (int)core_type);
	size_t total = 0;
	for (int m = TP_MEM_GM + 1; m < TP_MEM_COUNT; m++) {
		if (caps[m] > CTX_MAX_CAP)
			return tp_set_error(-EINVAL,
					    "tp_core_ctx_init: core %d: %s "
					    "capacity %zu bytes exceeds %u",
					    core_id, tp_mem_name(m), caps[m],
					    CTX_MAX_CAP);
		total += align_up(caps[m], 64);
	}

	memset(ctx, 0, sizeof(*ctx));
	ctx->core_id = core_id;
	ctx->core_type = core_type;
	ctx->gen = 1;
	atomic_init(&ctx->counting, false);
	if (total) {
		ctx->block = aligned_alloc(64, total);
		if (!ctx->block)
			return tp_set_error(-ENOMEM,
					    "tp_core_ctx_init: core %d: cannot "
					    "allocate %zu bytes of local memory",
					    core_id, total);
	}
	uint8_t *p = ctx->block;
	for (int m = TP_MEM_GM + 1; m < TP_MEM_COUNT; m++) {
		if (!caps[m])
			continue;
		ctx->mem[m].base = p;
		ctx->mem[m].cap = caps[m];
		p += align_up(caps[m], 64);
	}
	/* tp_mmad widens its right operand (at most L0B / element size
	 * elements, int8 the most) to 4-byte values. */
	if (caps[TP_MEM_L0B]) {
		ctx->mm_scratch_bytes = caps[TP_MEM_L0B] * 4;
		ctx->mm_scratch = aligned_alloc(64,
						align_up(ctx->mm_scratch_bytes, 64));
		if (!ctx->mm_scratch) {
			free(ctx->block);
			memset(ctx, 0, sizeof(*ctx));
			return tp_set_error(-ENOMEM,
					    "tp_core_ctx_init: core %d: cannot "
					    "allocate the matmul scratch",
					    core_id);
		}
	}
	return 0;
}

int tp_core_ctx_init(struct tp_core_ctx *ctx, int core_id,
		     enum tp_core_type core_type)
{
	size_t caps[TP_MEM_COUNT] = { 0 };
	if (core_type == TP_CORE_AIC) {
		caps[TP_MEM_L1] = TP_L1_BYTES;
		caps[TP_MEM_L0A] = TP_L0A_BYTES;
		caps[TP_MEM_L0B] = TP_L0B_BYTES;
		caps[TP_MEM_L0C] = TP_L0C_BYTES;
	} else if (core_type == TP_CORE_AIV) {
		caps[TP_MEM_UB] = TP_UB_BYTES;
	}
	return tp_core_ctx_init_caps(ctx, core_id, core_type, caps);
}

void tp_core_ctx_fini(struct tp_core_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx_bound == ctx)
		ctx_bound = NULL;
	free(ctx->block);
	free(ctx->mm_scratch);
	memset(ctx, 0, sizeof(*ctx));
}

void tp_core_ctx_bind(struct tp_core_ctx *ctx)
{
	ctx_bound = ctx;
}

struct tp_core_ctx *tp_core_ctx_current(void)
{
	return ctx_bound;
}

void tp_core_ctx_set_usage_hook(struct tp_core_ctx *ctx, tp_usage_hook_fn fn,
				void *ud)
{
	ctx->on_usage = fn;
	ctx->on_usage_ud = ud;
}

void tp_core_ctx_clear_error(struct tp_core_ctx *ctx)
{
	ctx->error = 0;
	ctx->error_msg[0] = '\0';
}

int tp_core_ctx_fail(struct tp_core_ctx *ctx, int err, const char *fmt, ...)
{
	char msg[TP_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tp_set_error(err, "%s", msg);
	if (ctx && ctx->error == 0) {
		ctx->error = err;
		tp_error_fit(ctx->error_msg, sizeof(ctx->error_msg), msg);
	}
	return err;
}

void tp_core_ctx_local_reset(struct tp_core_ctx *ctx)
{
	for (int m = 0; m < TP_MEM_COUNT; m++)
		ctx->mem[m].used = 0;
	/* 0 is the generation of GM tiles; a local tile must never match it
	 * even after 2^32 resets. */
	if (++ctx->gen == 0)
		ctx->gen = 1;
}

size_t tp_core_ctx_local_free(const struct tp_core_ctx *ctx, enum tp_mem mem)
{
	if ((unsigned)mem >= TP_MEM_COUNT || mem == TP_MEM_GM)
		return 0;
	return ctx->mem[mem].cap - ctx->mem[mem].used;
}

void tp_core_ctx_task_begin(struct tp_core_ctx *ctx)
{
	tp_core_ctx_local_reset(ctx);
	tp_core_ctx_clear_error(ctx);
	ctx->scalar_open = false;
	ctx->scalar_excl_ns = 0;
	ctx->scalar_name = NULL;
}

int tp_core_ctx_task_end(struct tp_core_ctx *ctx)
{
	if (ctx->scalar_open) {
		tile_scalar_close(ctx);
		tp_core_ctx_fail(ctx, -EINVAL,
				 "tp_scalar_begin: core %d: scalar section "
				 "still open at the end of the task",
				 ctx->core_id);
	}
	return ctx->error;
}

void tp_core_ctx_usage_reset(struct tp_core_ctx *ctx)
{
	memset(&ctx->usage, 0, sizeof(ctx->usage));
}

/* Here rather than in ops_scalar.c so that task_end can close a forgotten
 * section. */
uint64_t tile_scalar_close(struct tp_core_ctx *ctx)
{
	uint64_t now = tp_now_ns();
	uint64_t open = now - ctx->scalar_t0_ns;
	uint64_t ns = open > ctx->scalar_excl_ns ? open - ctx->scalar_excl_ns
						 : 0;
	uint64_t cycles = tp_core_cycles_from_ns(ns);
	struct tp_usage_delta d = {
		.op = TP_OP_SCALAR_SECTION,
		.pipe = TP_PIPE_SCALAR,
		.dtype = TP_DTYPE_NONE,
		.vclass = TP_VCLASS_NONE,
		.n_access = 0,
		.cycles = cycles ? cycles : 1,
		.instr = 1,
		.elems = 0,
	};
	ctx->scalar_open = false;
	ctx->scalar_excl_ns = 0;
	tp_core_ctx_commit(ctx, &d);
	return d.cycles;
}
