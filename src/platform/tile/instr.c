/* SPDX-License-Identifier: MIT */
/*
 * platform/tile/instr.c — custom instrumentation points of kernels
 * (taskprof/kernel.h tp_mark, tp_mark_range_begin / _end; issue 6 scope 8).
 *
 * Without a hidden buffer a point costs the bound-context lookup and one
 * predictable branch on the context's region pointer: kernels keep their
 * marks in production code, so the unprofiled path must stay that cheap.
 */
#include <errno.h>

#include "base/error.h"
#include "platform/tile/core_ctx.h"
#include "platform/tile/instr.h"
#include "taskprof/kernel.h"

static int mark(const char *fn, uint32_t kind, uint32_t id)
{
	struct tp_core_ctx *ctx = tp_core_ctx_current();
	if (__builtin_expect(ctx == NULL, 0))
		return tp_set_error(-ENODEV, "%s(%u): no AICore context bound to this "
				    "thread", fn, id);
	/* The unprofiled path: no region bound. */
	if (__builtin_expect(ctx->instr == NULL, 1))
		return 0;
	tp_instr_put(ctx, kind, id, NULL, 0);
	return 0;
}

int tp_mark(uint32_t id)
{
	return mark("tp_mark", TP_INSTR_MARK, id);
}

int tp_mark_range_begin(uint32_t id)
{
	return mark("tp_mark_range_begin", TP_INSTR_RANGE_BEGIN, id);
}

int tp_mark_range_end(uint32_t id)
{
	return mark("tp_mark_range_end", TP_INSTR_RANGE_END, id);
}
