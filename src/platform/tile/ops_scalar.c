/* SPDX-License-Identifier: MIT */
/*
 * platform/tile/ops_scalar.c — the SCALAR pipe: scalar sections and scalar
 * element access to local tiles.
 */
#include <errno.h>
#include <math.h>

#include "base/clock.h"
#include "base/error.h"
#include "platform/tile/fp.h"
#include "platform/tile/instr.h"
#include "platform/tile/tile_op.h"
#include "taskprof/kernel.h"

int tp_scalar_begin(const char *name)
{
	struct tp_core_ctx *ctx = tp_core_ctx_current();
	if (!ctx)
		return tp_set_error(-ENODEV, "tp_scalar_begin: no AICore "
					     "context bound to this thread");
	if (ctx->error)
		return tp_set_error(-ECANCELED,
				    "tp_scalar_begin: skipped: core %d already "
				    "failed: %s", ctx->core_id, ctx->error_msg);
	if (ctx->scalar_open)
		return tp_core_ctx_fail(ctx, -EINVAL,
					"tp_scalar_begin: core %d: a scalar "
					"section is already open (sections do "
					"not nest)", ctx->core_id);
	ctx->scalar_open = true;
	ctx->scalar_excl_ns = 0;
	ctx->scalar_name = name;
	/* Before the section's clock starts: the point is not its time. */
	if (__builtin_expect(ctx->instr != NULL, 0))
		tp_instr_put(ctx, TP_INSTR_SCALAR_BEGIN, 0, name, 0);
	ctx->scalar_t0_ns = tp_now_ns();
	return 0;
}

int tp_scalar_end(void)
{
	struct tp_core_ctx *ctx = tp_core_ctx_current();
	if (!ctx)
		return tp_set_error(-ENODEV, "tp_scalar_end: no AICore "
					     "context bound to this thread");
	if (ctx->error)
		return tp_set_error(-ECANCELED,
				    "tp_scalar_end: skipped: core %d already "
				    "failed: %s", ctx->core_id, ctx->error_msg);
	if (!ctx->scalar_open)
		return tp_core_ctx_fail(ctx, -EINVAL,
					"tp_scalar_end: core %d: no scalar "
					"section is open", ctx->core_id);
	const char *name = ctx->scalar_name;
	ctx->scalar_name = NULL;
	uint64_t cycles = tile_scalar_close(ctx);
	/* The same cycles the usage record (and the SCALAR busy events)
	 * accounted for the section. */
	if (__builtin_expect(ctx->instr != NULL, 0))
		tp_instr_put(ctx, TP_INSTR_SCALAR_END, 0, name, cycles);
	return 0;
}

static int scalar_access(struct tile_op *op, const struct tp_tile *t,
			 uint32_t row, uint32_t col)
{
	int rc = tile_check(op, "tile", t, TILE_M(UB) | TILE_M(L1));
	if (rc)
		return rc;
	if (row >= t->rows || col >= t->cols) {
		char d[96];
		return tile_fail(op, -EINVAL, "element (%u, %u) is outside %s",
				 row, col, tile_desc(t, d, sizeof(d)));
	}
	return 0;
}

static void account_scalar(struct tile_op *op, const struct tp_tile *t,
			   enum tp_dir dir)
{
	op->d.dtype = t->dtype;
	op->d.elems = 1;
	op->d.instr = 1;
	tile_op_access(op, t->mem, dir, tile_dtype_size[t->dtype]);
	tile_op_end(op);
}

int tp_get_value(const struct tp_tile *t, uint32_t row, uint32_t col,
		 float *out)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, "tp_get_value", TP_OP_GET_VALUE,
			       TP_PIPE_SCALAR);
	if (rc || (rc = scalar_access(&op, t, row, col)))
		return rc;
	if (!out)
		return tile_fail(&op, -EINVAL, "NULL out");
	const void *p = tp_tile_at(t, row, col);
	switch (t->dtype) {
	case TP_FP32: *out = *(const float *)p; break;
	case TP_FP16: *out = tp_f16_to_f32(*(const uint16_t *)p); break;
	case TP_BF16: *out = tp_bf16_to_f32(*(const uint16_t *)p); break;
	case TP_INT8: *out = *(const int8_t *)p; break;
	default: *out = (float)*(const int32_t *)p; break;
	}
	account_scalar(&op, t, TP_DIR_READ);
	return 0;
}

int tp_set_value(const struct tp_tile *t, uint32_t row, uint32_t col,
		 float v)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, "tp_set_value", TP_OP_SET_VALUE,
			       TP_PIPE_SCALAR);
	if (rc || (rc = scalar_access(&op, t, row, col)))
		return rc;
	void *p = tp_tile_at(t, row, col);
	if (t->dtype == TP_INT8 || t->dtype == TP_INT32) {
		float lo = t->dtype == TP_INT8 ? -128.0f : -2147483648.0f;
		float hi = t->dtype == TP_INT8 ? 128.0f : 2147483648.0f;
		if (!(v == truncf(v) && v >= lo && v < hi))
			return tile_fail(&op, -EINVAL,
					 "value %g is not a %s value", v,
					 tp_dtype_name(t->dtype));
	}
	switch (t->dtype) {
	case TP_FP32: *(float *)p = v; break;
	case TP_FP16: *(uint16_t *)p = tp_f32_to_f16(v); break;
	case TP_BF16: *(uint16_t *)p = tp_f32_to_bf16(v); break;
	case TP_INT8: *(int8_t *)p = (int8_t)v; break;
	default: *(int32_t *)p = (int32_t)v; break;
	}
	account_scalar(&op, t, TP_DIR_WRITE);
	return 0;
}
