/* SPDX-License-Identifier: MIT */
/*
 * platform/tile/core_ctx.h — one AICore's execution context: its local
 * memories, its usage record, the PMU's counting gate and usage hook, and
 * its sticky error (issue 3 scope 3; ARCHITECTURE.md §1).
 *
 * The runtime owns one context per simulated AICore and drives it from
 * that core's thread:
 *
 *     tp_core_ctx_init(&ctx, core_id, TP_CORE_AIV);   // once
 *     tp_core_ctx_bind(&ctx);                          // on the core thread
 *     for each task:
 *         tp_core_ctx_task_begin(&ctx);   // reset locals, clear error
 *         kernel(args);                   // tile ops use the bound ctx
 *         rc = tp_core_ctx_task_end(&ctx);
 *         if (rc) report task id, func name, tp_core_ctx_error_msg(&ctx)
 *     tp_core_ctx_bind(NULL);
 *     tp_core_ctx_fini(&ctx);
 *
 * The PMU model gates on the context: while tp_core_ctx_counting() is true
 * (the AICore sets it when it opens its CTRL bit-0 window and clears it
 * when it closes it) every successful op calls the usage hook with exactly
 * what that op did; the hook adds the delta to the counters of the slots
 * whose event ids the delta produces, after its own checks (PMU_CTRL_0).
 * The cumulative usage record is kept whether or not counting is on.
 *
 * Threading: a context belongs to its core's thread. Only the counting
 * flag may be written from another thread; everything else is read or
 * written by the core thread, or by others after synchronising with it
 * (the runtime's FIN protocol, a thread join).
 */
#ifndef TASKPROF_PLATFORM_TILE_CORE_CTX_H
#define TASKPROF_PLATFORM_TILE_CORE_CTX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "platform/tile/usage.h"
#include "platform/topology.h"
#include "taskprof/kernel.h"

struct tp_core_ctx;
struct tp_instr_block;

/**
 * typedef tp_usage_hook_fn - receives every op's delta while counting.
 * @ctx: the core the op ran on.
 * @d:   what the op did; valid only during the call.
 * @ud:  the pointer given to tp_core_ctx_set_usage_hook().
 *
 * Runs on the core's thread, after the op, outside the op's measured
 * time. It must not call tile ops.
 */
typedef void (*tp_usage_hook_fn)(struct tp_core_ctx *ctx,
				 const struct tp_usage_delta *d, void *ud);

/**
 * struct tp_local_mem - one local memory (L1, L0A/B/C, UB) of a core: a
 * bump allocator over [@base, @base + @cap).
 * @base: NULL when the core has no such memory.
 * @cap:  bytes.
 * @used: bytes handed out since the last reset.
 */
struct tp_local_mem {
	uint8_t *base; /* NULL when the core has no such memory */
	size_t cap;    /* bytes */
	size_t used;   /* bytes handed out since the last reset */
};

/**
 * struct tp_core_ctx - one AICore's execution context.
 *
 * Fields are private to platform/tile/ except where a function reads them.
 */
struct tp_core_ctx {
	int core_id;
	enum tp_core_type core_type;
	struct tp_local_mem mem[TP_MEM_COUNT]; /* mem[TP_MEM_GM] unused */
	uint32_t gen; /* local generation, never 0; bumped by each reset */

	struct tp_core_usage usage;
	atomic_bool counting;
	tp_usage_hook_fn on_usage;
	void *on_usage_ud;

	int error; /* sticky: first failure since the last clear, or 0 */
	char error_msg[TP_CORE_ERROR_MSG_MAX]; /* tp_error_fit() of the message */

	bool scalar_open;
	uint64_t scalar_t0_ns;
	uint64_t scalar_excl_ns; /* time of ops run inside the section */
	const char *scalar_name; /* the open section's name, or NULL */

	/* The running block's region of a hidden instrumentation buffer
	 * (taskprof/rt_tool.h), or NULL: tp_mark* and tp_scalar_* append
	 * there. Set by rt.c around one block body (tp_core_ctx_set_instr). */
	struct tp_instr_block *instr;
	uint32_t instr_cap; /* records the region has room for */

	/* tp_mmad's right operand widened to fp32 / int32, K x N. */
	void *mm_scratch;
	size_t mm_scratch_bytes;

	void *block; /* one allocation backing every local memory and the scratch */
	bool shared; /* block lies in an arena of tp_core_ctxs_init() */
	/* The arena, its bytes and how base/bigmem.h allocated it (the
	 * first context of a tp_core_ctxs_init() set only; NULL otherwise). */
	void *arena;
	size_t arena_len;
	bool arena_mapped;
};

/**
 * tp_core_ctx_init() - set up a core with the default memories of its type.
 * @ctx:       the context to initialise (caller-owned storage).
 * @core_id:   the core's logical id (in messages and for the runtime).
 * @core_type: TP_CORE_AIC: L1 512 KiB, L0A 64 KiB, L0B 64 KiB, L0C
 *             128 KiB; TP_CORE_AIV: UB 192 KiB.
 *
 * Return: 0, -EINVAL (bad @core_type), -ENOMEM.
 */
int tp_core_ctx_init(struct tp_core_ctx *ctx, int core_id,
		     enum tp_core_type core_type);

/**
 * tp_core_ctx_init_caps() - set up a core with explicit memory capacities.
 * @caps: bytes per tp_mem; 0 = the core has no such memory; caps[TP_MEM_GM]
 *        is ignored. Each at most 64 MiB.
 *
 * For tests and for platform models whose cores differ from the defaults
 * (for example an AIC that owns a UB for fixpipe output).
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int tp_core_ctx_init_caps(struct tp_core_ctx *ctx, int core_id,
			  enum tp_core_type core_type,
			  const size_t caps[TP_MEM_COUNT]);

/**
 * tp_core_ctxs_init() - set up the cores of a device, each with the default
 * memories of its type (tp_core_ctx_init()), core ids 0..@n - 1, every
 * local memory and matmul scratch in one zeroed arena whose pages are
 * faulted in here (advised to transparent huge pages): an AICore's SRAM
 * costs nothing on first use, so no core's first tile op, and so no first
 * task of a core, takes page faults that would count as its busy cycles.
 * The arena is the one the process's last set of this size gave back
 * (base/bigmem.h), zeroed, when there is one.
 * @ctxs:  @n contexts (caller-owned storage).
 * @n:     cores, > 0.
 * @types: @n core types.
 *
 * Return: 0; -EINVAL (bad type, @n <= 0), -ENOMEM (nothing set up).
 * Release with tp_core_ctxs_fini(), not tp_core_ctx_fini() alone.
 */
int tp_core_ctxs_init(struct tp_core_ctx *ctxs, int n, const enum tp_core_type *types);

/**
 * tp_core_ctxs_fini() - tp_core_ctx_fini() of each of the @n contexts of a
 * tp_core_ctxs_init() set, then give their arena back (kept for the next
 * set of its size, base/bigmem.h). Safe on zeroed contexts.
 */
void tp_core_ctxs_fini(struct tp_core_ctx *ctxs, int n);

/**
 * tp_core_ctx_fini() - free the core's memories. Unbinds it if it is the
 * calling thread's bound context. Safe on a zeroed context.
 */
void tp_core_ctx_fini(struct tp_core_ctx *ctx);

/**
 * tp_core_ctx_bind() - make @ctx the calling thread's core (NULL: none).
 */
void tp_core_ctx_bind(struct tp_core_ctx *ctx);

/**
 * tp_core_ctx_current() - the calling thread's bound core, or NULL.
 */
struct tp_core_ctx *tp_core_ctx_current(void);

/**
 * tp_core_ctx_set_usage_hook() - call @fn after every op while counting.
 * @fn: NULL removes the hook.
 */
void tp_core_ctx_set_usage_hook(struct tp_core_ctx *ctx, tp_usage_hook_fn fn,
				void *ud);

/**
 * tp_core_ctx_set_counting() - open (true) or close (false) the gate the
 * usage hook runs behind. May be called from any thread.
 */
static inline void tp_core_ctx_set_counting(struct tp_core_ctx *ctx, bool on)
{
	/* Relaxed: the flag guards no other data; an op that races with the
	 * change is counted or not, as on hardware. */
	atomic_store_explicit(&ctx->counting, on, memory_order_relaxed);
}

/** tp_core_ctx_counting() - whether the usage hook runs. */
static inline bool tp_core_ctx_counting(const struct tp_core_ctx *ctx)
{
	return atomic_load_explicit(&ctx->counting, memory_order_relaxed);
}

/**
 * tp_core_ctx_set_instr() - bind (or with NULL unbind) the running block's
 * region of a hidden instrumentation buffer (taskprof/rt_tool.h).
 * @blk: block b's struct tp_instr_block (tp_rt_instr_block()), in device
 *       memory the core may write; its records follow it.
 * @cap: records after @blk (the header's per_block_cap).
 *
 * On the core's own thread, between tp_core_ctx_task_begin() and _end().
 */
static inline void tp_core_ctx_set_instr(struct tp_core_ctx *ctx,
					 struct tp_instr_block *blk, uint32_t cap)
{
	ctx->instr = blk;
	ctx->instr_cap = blk ? cap : 0;
}

/**
 * tp_core_ctx_error() - the core's sticky error: the code of the first op
 * that failed since the last clear (negative errno), or 0.
 */
static inline int tp_core_ctx_error(const struct tp_core_ctx *ctx)
{
	return ctx->error;
}

/**
 * tp_core_ctx_error_msg() - message of the sticky error ("" when none):
 * names the op, the operands' memories, dtypes and shapes, and what was
 * expected.
 */
static inline const char *tp_core_ctx_error_msg(const struct tp_core_ctx *ctx)
{
	return ctx->error_msg;
}

/** tp_core_ctx_clear_error() - forget the sticky error. */
void tp_core_ctx_clear_error(struct tp_core_ctx *ctx);

/**
 * tp_core_ctx_fail() - record a sticky error for @ctx (first one wins) and
 * in tp_last_error(). For the tile ops and the runtime.
 *
 * Return: @err.
 */
int tp_core_ctx_fail(struct tp_core_ctx *ctx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * tp_core_ctx_local_reset() - free every local block (tp_local_reset() for
 * a context that need not be bound); older local tiles become stale.
 */
void tp_core_ctx_local_reset(struct tp_core_ctx *ctx);

/**
 * tp_core_ctx_local_free() - bytes of memory @mem still available.
 */
size_t tp_core_ctx_local_free(const struct tp_core_ctx *ctx, enum tp_mem mem);

/**
 * tp_core_ctx_task_begin() - prepare the core for the next task: reset the
 * local memories, clear the sticky error, drop an open scalar section.
 */
void tp_core_ctx_task_begin(struct tp_core_ctx *ctx);

/**
 * tp_core_ctx_task_end() - check the task that just ran.
 *
 * A scalar section left open is closed, accounted, and is an error.
 *
 * Return: tp_core_ctx_error(@ctx) afterwards (0 = the task's tile ops all
 * succeeded).
 */
int tp_core_ctx_task_end(struct tp_core_ctx *ctx);

/**
 * tp_core_ctx_usage() - the cumulative usage record of @ctx (cycles at
 * TP_CORE_FREQ_HZ, bytes, requests, instructions; usage.h), since it was
 * created or last reset. Valid while @ctx lives.
 */
static inline const struct tp_core_usage *
tp_core_ctx_usage(const struct tp_core_ctx *ctx)
{
	return &ctx->usage;
}

/** tp_core_ctx_usage_reset() - zero the cumulative usage record. */
void tp_core_ctx_usage_reset(struct tp_core_ctx *ctx);

/**
 * tp_core_cycles_from_ns() - nanoseconds to core cycles at
 * TP_CORE_FREQ_HZ, rounded to nearest.
 */
static inline uint64_t tp_core_cycles_from_ns(uint64_t ns)
{
	return (uint64_t)(((unsigned __int128)ns * TP_CORE_FREQ_HZ +
			   500000000u) / 1000000000u);
}

/**
 * tp_core_ctx_commit() - account one op: add @d (cycles already set) to the
 * usage record, then call the usage hook if counting. For the tile ops.
 */
static inline void tp_core_ctx_commit(struct tp_core_ctx *ctx,
				      const struct tp_usage_delta *d)
{
	tp_usage_add(&ctx->usage, d);
	if (ctx->on_usage && tp_core_ctx_counting(ctx))
		ctx->on_usage(ctx, d, ctx->on_usage_ud);
}

#endif /* TASKPROF_PLATFORM_TILE_CORE_CTX_H */
