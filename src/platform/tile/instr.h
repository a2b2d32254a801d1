/* SPDX-License-Identifier: MIT */
/*
 * platform/tile/instr.h — appending one point to the running block's
 * region of a hidden instrumentation buffer (taskprof/rt_tool.h "launch
 * with a hidden buffer"; seed 003 "动态插桩"; issue 6 scope 8).
 *
 * The region belongs to one block, and one block runs on one core thread
 * from start to end, so the appends are plain stores; the core's FIN
 * (a release store the AICPU acquires, then done_seq to the host)
 * publishes them before the host copies the buffer back.
 */
#ifndef TASKPROF_PLATFORM_TILE_INSTR_H
#define TASKPROF_PLATFORM_TILE_INSTR_H

#include <stdint.h>

#include "base/clock.h"
#include "platform/tile/core_ctx.h"
#include "taskprof/rt_tool.h"

/**
 * tp_instr_put() - append one point to @ctx's bound region.
 * @kind:   enum tp_instr_kind.
 * @id:     MARK / RANGE_*: the kernel's id; BLOCK_*: the core id; else 0.
 * @name:   SCALAR_*: the section's name (or NULL), else NULL.
 * @cycles: SCALAR_END: the section's SCALAR cycles, else 0.
 *
 * The caller checked that a region is bound (ctx->instr != NULL). Past
 * the region's capacity the point is counted in its overflow field
 * (saturating) instead of written.
 */
static inline void tp_instr_put(struct tp_core_ctx *ctx, uint32_t kind, uint32_t id,
				const char *name, uint64_t cycles)
{
	struct tp_instr_block *b = ctx->instr;
	if (b->count >= ctx->instr_cap) {
		if (b->overflow != UINT32_MAX)
			b->overflow++;
		return;
	}
	/* The records follow the block's struct tp_instr_block. */
	struct tp_instr_rec *r = (struct tp_instr_rec *)(b + 1) + b->count;
	r->t = tp_sys_cnt();
	r->kind = kind;
	r->id = id;
	r->name = (uint64_t)(uintptr_t)name;
	r->cycles = cycles;
	b->count++;
}

#endif /* TASKPROF_PLATFORM_TILE_INSTR_H */
