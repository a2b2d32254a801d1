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
#include <sys/mman.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/bigmem.h"
#include "base/prefault.h"
#include "platform/tile/tile_op.h"

/* Largest capacity tp_core_ctx_init_caps() accepts for one memory. */
#define CTX_MAX_CAP (64u * 1024u * 1024u)

static _Thread_local struct tp_core_ctx *ctx_bound;

static size_t align_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

/* Bytes a core of @caps needs: its local memories, each 64-byte aligned,
 * then the matmul scratch (4 bytes per L0B byte: tp_mmad widens its right
 * operand, at most L0B / element size elements, int8 the most, to 4-byte
 * values). */
static size_t ctx_bytes(const size_t caps[TP_MEM_COUNT], size_t *scratch)
{
	size_t total = 0;
	for (int m = TP_MEM_GM + 1; m < TP_MEM_COUNT; m++)
		total += align_up(caps[m], 64);
	*scratch = caps[TP_MEM_L0B] * 4;
	return total + align_up(*scratch, 64);
}

static int ctx_check(int core_id, enum tp_core_type core_type, const size_t caps[TP_MEM_COUNT])
{
	if (core_type != TP_CORE_AIC && core_type != TP_CORE_AIV)
		return tp_set_error(-EINVAL,
				    "tp_core_ctx_init: core %d: core type %d "
				    "is neither AIC (0) nor AIV (1)",
				    core_id, (int)core_type);
	for (int m = TP_MEM_GM + 1; m < TP_MEM_COUNT; m++)
		if (caps[m] > CTX_MAX_CAP)
			return tp_set_error(-EINVAL,
					    "tp_core_ctx_init: core %d: %s "
					    "capacity %zu bytes exceeds %u",
					    core_id, tp_mem_name(m), caps[m],
					    CTX_MAX_CAP);
	return 0;
}

/* Lay out @ctx's memories over @mem (ctx_bytes() of @caps, zero-filled,
 * 64-byte aligned); @shared: @mem belongs to an arena of several cores. */
static void ctx_setup(struct tp_core_ctx *ctx, int core_id, enum tp_core_type core_type,
		      const size_t caps[TP_MEM_COUNT], uint8_t *mem, bool shared)
{
	size_t scratch;
	size_t total = ctx_bytes(caps, &scratch);
	memset(ctx, 0, sizeof(*ctx));
	ctx->core_id = core_id;
	ctx->core_type = core_type;
	ctx->gen = 1;
	atomic_init(&ctx->counting, false);
	ctx->block = total ? mem : NULL;
	ctx->shared = shared;
	uint8_t *p = mem;
	for (int m = TP_MEM_GM + 1; m < TP_MEM_COUNT; m++) {
		if (!caps[m])
			continue;
		ctx->mem[m].base = p;
		ctx->mem[m].cap = caps[m];
		p += align_up(caps[m], 64);
	}
	if (scratch) {
		ctx->mm_scratch = p;
		ctx->mm_scratch_bytes = scratch;
	}
}

int tp_core_ctx_init_caps(struct tp_core_ctx *ctx, int core_id,
			  enum tp_core_type core_type,
			  const size_t caps[TP_MEM_COUNT])
{
	if (!ctx || !caps)
		return tp_set_error(-EINVAL, "tp_core_ctx_init: NULL argument");
	int rc = ctx_check(core_id, core_type, caps);
	if (rc)
		return rc;
	size_t scratch;
	size_t total = ctx_bytes(caps, &scratch);
	uint8_t *mem = NULL;
	if (total && !(mem = tp_alloc_prefaulted(total)))
		return tp_set_error(-ENOMEM,
				    "tp_core_ctx_init: core %d: cannot "
				    "allocate %zu bytes of local memory",
				    core_id, total);
	ctx_setup(ctx, core_id, core_type, caps, mem, false);
	return 0;
}

static void default_caps(enum tp_core_type core_type, size_t caps[TP_MEM_COUNT])
{
	memset(caps, 0, TP_MEM_COUNT * sizeof(caps[0]));
	if (core_type == TP_CORE_AIC) {
		caps[TP_MEM_L1] = TP_L1_BYTES;
		caps[TP_MEM_L0A] = TP_L0A_BYTES;
		caps[TP_MEM_L0B] = TP_L0B_BYTES;
		caps[TP_MEM_L0C] = TP_L0C_BYTES;
	} else if (core_type == TP_CORE_AIV) {
		caps[TP_MEM_UB] = TP_UB_BYTES;
	}
}

int tp_core_ctx_init(struct tp_core_ctx *ctx, int core_id,
		     enum tp_core_type core_type)
{
	size_t caps[TP_MEM_COUNT];
	default_caps(core_type, caps);
	return tp_core_ctx_init_caps(ctx, core_id, core_type, caps);
}

#define ARENA_ALIGN ((size_t)2 << 20) /* a transparent huge page */

int tp_core_ctxs_init(struct tp_core_ctx *ctxs, int n, const enum tp_core_type *types)
{
	if (!ctxs || !types || n <= 0)
		return tp_set_error(-EINVAL, "tp_core_ctxs_init: no cores");
	size_t total = 0, scratch;
	for (int i = 0; i < n; i++) {
		size_t caps[TP_MEM_COUNT];
		default_caps(types[i], caps);
		int rc = ctx_check(i, types[i], caps);
		if (rc)
			return rc;
		total += ctx_bytes(caps, &scratch);
	}
	/* One arena of whole huge pages (base/bigmem.h: from 2 MiB on, a
	 * mapping aligned to one and advised to them): faulting it in is
	 * then one fault per 2 MiB instead of per 4 KiB (a first touch of a
	 * 4 KiB page costs 8-30 µs on the VMs this runs on: 50 MB took 100
	 * ms that way, 15 ms in huge pages). The arena is kept for the
	 * process's next set of this size (tp_core_ctxs_fini()): a device's
	 * local memories exist for good, and a launch that faulted them in
	 * afresh took 0.3-0.7 ms when the pages came from the last launch and
	 * about 22 ms when a swimlane pool had taken those (docs/
	 * swimlane-cost.md, 4 Dec 2026). Reused, it is zeroed whole, as a
	 * fresh one reads: what a kernel reads before it writes does not
	 * depend on the launch before. */
	size_t len = (total + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
	bool mapped;
	uint8_t *arena = tp_bigmem_zalloc(1, len, &mapped);
	if (!arena)
		return tp_set_error(-ENOMEM,
				    "tp_core_ctxs_init: cannot map %zu bytes of local memory "
				    "for %d cores",
				    len, n);
	/* Present already when the arena was kept (the zeroing touched every
	 * page): then this only walks the page tables. */
	if (tp_prefault_range(arena, len) != 0) {
		tp_bigmem_free(arena, 1, len, mapped);
		return tp_set_error(-ENOMEM,
				    "tp_core_ctxs_init: cannot fault in %zu bytes of local "
				    "memory for %d cores",
				    len, n);
	}
	uint8_t *p = arena;
	for (int i = 0; i < n; i++) {
		size_t caps[TP_MEM_COUNT];
		default_caps(types[i], caps);
		ctx_setup(&ctxs[i], i, types[i], caps, p, true);
		p += ctx_bytes(caps, &scratch);
	}
	ctxs[0].arena = arena;
	ctxs[0].arena_len = len;
	ctxs[0].arena_mapped = mapped;
	return 0;
}

void tp_core_ctxs_fini(struct tp_core_ctx *ctxs, int n)
{
	if (!ctxs || n <= 0)
		return;
	void *arena = ctxs[0].arena;
	size_t len = ctxs[0].arena_len;
	bool mapped = ctxs[0].arena_mapped;
	for (int i = 0; i < n; i++)
		tp_core_ctx_fini(&ctxs[i]);
	/* Any byte of it may have been written: the next user zeroes all. */
	tp_bigmem_recycle(arena, 1, len, mapped, 1);
}

void tp_core_ctx_fini(struct tp_core_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx_bound == ctx)
		ctx_bound = NULL;
	/* A context of an arena (tp_core_ctxs_init) owns neither: the
	 * arena goes with tp_core_ctxs_fini(). */
	if (!ctx->shared)
		free(ctx->block);
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
