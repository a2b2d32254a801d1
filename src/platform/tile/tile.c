/* SPDX-License-Identifier: MIT */
/*
 * platform/tile/tile.c — tiles, local allocation, the op frame, names.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "platform/tile/core_ctx.h"
#include "platform/tile/tile_op.h"
#include "taskprof/kernel.h"

const uint8_t tile_dtype_size[TP_DTYPE_COUNT] = { 4, 2, 2, 1, 4 };

size_t tp_dtype_size(enum tp_dtype dt)
{
	return (unsigned)dt < TP_DTYPE_COUNT ? tile_dtype_size[dt] : 0;
}

const char *tp_dtype_name(enum tp_dtype dt)
{
	static const char *const n[TP_DTYPE_COUNT] = { "fp32", "fp16", "bf16",
						       "int8", "int32" };
	return (unsigned)dt < TP_DTYPE_COUNT ? n[dt] : "?";
}

const char *tp_mem_name(enum tp_mem mem)
{
	static const char *const n[TP_MEM_COUNT] = { "GM",  "UB",  "L1",
						     "L0A", "L0B", "L0C" };
	return (unsigned)mem < TP_MEM_COUNT ? n[mem] : "?";
}

const char *tp_pipe_name(enum tp_pipe pipe)
{
	static const char *const n[TP_PIPE_COUNT] = {
		"VEC", "CUBE", "SCALAR", "MTE1", "MTE2", "MTE3", "FIXP"
	};
	return (unsigned)pipe < TP_PIPE_COUNT ? n[pipe] : "?";
}

const char *tp_vclass_name(enum tp_vclass vc)
{
	static const char *const n[TP_VCLASS_COUNT] = {
		"fp32", "fp16_128lane", "fp16_64lane", "int32", "misc"
	};
	return (unsigned)vc < TP_VCLASS_COUNT ? n[vc] : "?";
}

const char *tp_op_name(enum tp_op op)
{
	static const char *const n[TP_OP_COUNT] = {
		[TP_OP_COPY_IN] = "tp_copy_in",
		[TP_OP_COPY_OUT] = "tp_copy_out",
		[TP_OP_LOAD_L0] = "tp_load_l0",
		[TP_OP_MMAD] = "tp_mmad",
		[TP_OP_FIXPIPE] = "tp_fixpipe",
		[TP_OP_VADD] = "tp_vadd",
		[TP_OP_VSUB] = "tp_vsub",
		[TP_OP_VMUL] = "tp_vmul",
		[TP_OP_VDIV] = "tp_vdiv",
		[TP_OP_VMAX] = "tp_vmax",
		[TP_OP_VMIN] = "tp_vmin",
		[TP_OP_VADDS] = "tp_vadds",
		[TP_OP_VMULS] = "tp_vmuls",
		[TP_OP_VMAXS] = "tp_vmaxs",
		[TP_OP_VMINS] = "tp_vmins",
		[TP_OP_VEXP] = "tp_vexp",
		[TP_OP_VSQRT] = "tp_vsqrt",
		[TP_OP_VABS] = "tp_vabs",
		[TP_OP_VRELU] = "tp_vrelu",
		[TP_OP_VDUP] = "tp_vdup",
		[TP_OP_VCOPY] = "tp_vcopy",
		[TP_OP_VCAST] = "tp_vcast",
		[TP_OP_VROWMAX] = "tp_vrowmax",
		[TP_OP_VROWSUM] = "tp_vrowsum",
		[TP_OP_VROWADD] = "tp_vrowadd",
		[TP_OP_VROWSUB] = "tp_vrowsub",
		[TP_OP_VROWMUL] = "tp_vrowmul",
		[TP_OP_VROWDIV] = "tp_vrowdiv",
		[TP_OP_SCALAR_SECTION] = "tp_scalar_end",
		[TP_OP_GET_VALUE] = "tp_get_value",
		[TP_OP_SET_VALUE] = "tp_set_value",
	};
	return (unsigned)op < TP_OP_COUNT ? n[op] : "?";
}

/* ---- tiles ------------------------------------------------------------ */

const char *tile_desc(const struct tp_tile *t, char *buf, size_t len)
{
	if (!t)
		snprintf(buf, len, "(null)");
	else
		snprintf(buf, len, "%s %s[%ux%u stride %u]",
			 tp_mem_name(t->mem), tp_dtype_name(t->dtype), t->rows,
			 t->cols, t->stride);
	return buf;
}

int tile_validate(const struct tp_core_ctx *ctx, const struct tp_tile *t,
		  char *why, size_t why_len)
{
	if (t->mem >= TP_MEM_COUNT) {
		snprintf(why, why_len, "unknown memory kind %u", t->mem);
		return -EINVAL;
	}
	if (t->dtype >= TP_DTYPE_COUNT) {
		snprintf(why, why_len, "unknown dtype %u", t->dtype);
		return -EINVAL;
	}
	if (t->rows == 0 || t->cols == 0) {
		snprintf(why, why_len, "empty shape");
		return -EINVAL;
	}
	if (t->stride < t->cols) {
		snprintf(why, why_len, "row stride %u is less than cols %u",
			 t->stride, t->cols);
		return -EINVAL;
	}
	if (!t->buf) {
		snprintf(why, why_len, "NULL buffer");
		return -EFAULT;
	}
	size_t es = tile_dtype_size[t->dtype];
	/* rows, stride < 2^32, so the element span fits in 64 bits; the byte
	 * span and the end offset are checked for overflow. */
	uint64_t span = ((uint64_t)t->rows - 1) * t->stride + t->cols;
	uint64_t span_bytes, end;
	if (__builtin_mul_overflow(span, (uint64_t)es, &span_bytes) ||
	    __builtin_add_overflow(span_bytes, (uint64_t)t->offset, &end) ||
	    end > t->buf_bytes) {
		snprintf(why, why_len,
			 "view covers bytes [%zu, %zu + %llu) of a %zu-byte "
			 "buffer",
			 t->offset, t->offset,
			 (unsigned long long)(span * es), t->buf_bytes);
		return -EFAULT;
	}
	if ((uintptr_t)(t->buf + t->offset) % es) {
		snprintf(why, why_len,
			 "element (0,0) at %p is not aligned to its %zu-byte "
			 "element size",
			 (void *)(t->buf + t->offset), es);
		return -EFAULT;
	}
	if (t->mem == TP_MEM_GM)
		return 0;
	if (!ctx) {
		snprintf(why, why_len, "local tile with no core bound");
		return -ENODEV;
	}
	const struct tp_local_mem *m = &ctx->mem[t->mem];
	if (!m->base) {
		snprintf(why, why_len, "core %d (%s) has no %s", ctx->core_id,
			 ctx->core_type == TP_CORE_AIC ? "AIC" : "AIV",
			 tp_mem_name(t->mem));
		return -EFAULT;
	}
	if (t->gen != ctx->gen) {
		snprintf(why, why_len,
			 "stale tile: allocated before the last "
			 "tp_local_reset()");
		return -ESTALE;
	}
	uintptr_t lo = (uintptr_t)m->base, hi = lo + m->used;
	uintptr_t b = (uintptr_t)t->buf;
	if (b < lo || b > hi || t->buf_bytes > hi - b) {
		snprintf(why, why_len,
			 "buffer [%p, +%zu) is not inside the %zu allocated "
			 "bytes of the core's %s at %p",
			 (void *)t->buf, t->buf_bytes, m->used,
			 tp_mem_name(t->mem), (void *)m->base);
		return -EFAULT;
	}
	return 0;
}

int tp_tile_init(struct tp_tile *t, enum tp_mem mem, void *buf,
		 size_t buf_bytes, enum tp_dtype dt, uint32_t rows,
		 uint32_t cols, uint32_t stride)
{
	struct tp_core_ctx *ctx = tp_core_ctx_current();
	if (!t)
		return tp_core_ctx_fail(ctx, -EINVAL,
					"tp_tile_init: NULL tile");
	struct tp_tile n = {
		.buf = buf,
		.buf_bytes = buf_bytes,
		.offset = 0,
		.rows = rows,
		.cols = cols,
		.stride = stride,
		.dtype = (uint8_t)((unsigned)dt < TP_DTYPE_COUNT ? dt : 0xff),
		.mem = (uint8_t)((unsigned)mem < TP_MEM_COUNT ? mem : 0xff),
		.gen = (mem != TP_MEM_GM && ctx) ? ctx->gen : 0,
	};
	char why[256];
	int rc = tile_validate(ctx, &n, why, sizeof(why));
	if (rc) {
		char d[96];
		return tp_core_ctx_fail(ctx, rc, "tp_tile_init: %s over %zu "
					"bytes at %p: %s",
					tile_desc(&n, d, sizeof(d)), buf_bytes,
					buf, why);
	}
	*t = n;
	return 0;
}

int tp_tile_view(struct tp_tile *out, const struct tp_tile *t, uint32_t row0,
		 uint32_t col0, uint32_t rows, uint32_t cols)
{
	struct tp_core_ctx *ctx = tp_core_ctx_current();
	if (!out || !t)
		return tp_core_ctx_fail(ctx, -EINVAL,
					"tp_tile_view: NULL tile");
	char d[96];
	if (rows == 0 || cols == 0 || row0 >= t->rows || col0 >= t->cols ||
	    rows > t->rows - row0 || cols > t->cols - col0)
		return tp_core_ctx_fail(ctx, -EINVAL,
					"tp_tile_view: rows [%u, +%u) x cols "
					"[%u, +%u) is not a non-empty part of "
					"%s",
					row0, rows, col0, cols,
					tile_desc(t, d, sizeof(d)));
	if (t->dtype >= TP_DTYPE_COUNT)
		return tp_core_ctx_fail(ctx, -EINVAL,
					"tp_tile_view: %s has an unknown dtype",
					tile_desc(t, d, sizeof(d)));
	struct tp_tile n = *t;
	n.offset += ((size_t)row0 * t->stride + col0) *
		    tile_dtype_size[t->dtype];
	n.rows = rows;
	n.cols = cols;
	*out = n;
	return 0;
}

/* ---- local memory ----------------------------------------------------- */

void *tp_local_alloc(enum tp_mem mem, size_t bytes)
{
	struct tp_core_ctx *ctx = tp_core_ctx_current();
	if (!ctx) {
		tp_set_error(-ENODEV, "tp_local_alloc: no AICore context "
				      "bound to this thread");
		return NULL;
	}
	if (ctx->error) {
		tp_set_error(-ECANCELED,
			     "tp_local_alloc: core %d already failed: %s",
			     ctx->core_id, ctx->error_msg);
		return NULL;
	}
	if ((unsigned)mem >= TP_MEM_COUNT || mem == TP_MEM_GM) {
		tp_core_ctx_fail(ctx, -EINVAL,
				 "tp_local_alloc: core %d: memory kind %d is "
				 "not a local memory (UB, L1, L0A, L0B, L0C)",
				 ctx->core_id, (int)mem);
		return NULL;
	}
	struct tp_local_mem *m = &ctx->mem[mem];
	if (!m->base) {
		tp_core_ctx_fail(ctx, -EINVAL,
				 "tp_local_alloc: core %d (%s) has no %s",
				 ctx->core_id,
				 ctx->core_type == TP_CORE_AIC ? "AIC" : "AIV",
				 tp_mem_name(mem));
		return NULL;
	}
	if (bytes == 0) {
		tp_core_ctx_fail(ctx, -EINVAL,
				 "tp_local_alloc: core %d: %s: 0 bytes "
				 "requested", ctx->core_id, tp_mem_name(mem));
		return NULL;
	}
	size_t free_bytes = m->cap - m->used;
	if (bytes > free_bytes) {
		tp_core_ctx_fail(ctx, -ENOMEM,
				 "tp_local_alloc: core %d: %s: %zu bytes "
				 "requested, %zu of %zu free",
				 ctx->core_id, tp_mem_name(mem), bytes,
				 free_bytes, m->cap);
		return NULL;
	}
	/* Round up to the block alignment; a capacity that is not a multiple
	 * of it leaves a short last block. */
	size_t need = (bytes + TP_LOCAL_ALIGN - 1) / TP_LOCAL_ALIGN *
		      TP_LOCAL_ALIGN;
	if (need > free_bytes)
		need = free_bytes;
	void *p = m->base + m->used;
	m->used += need;
	return p;
}

int tp_local_tile(struct tp_tile *t, enum tp_mem mem, enum tp_dtype dt,
		  uint32_t rows, uint32_t cols)
{
	struct tp_core_ctx *ctx = tp_core_ctx_current();
	if (!ctx)
		return tp_set_error(-ENODEV, "tp_local_tile: no AICore "
					     "context bound to this thread");
	if (ctx->error)
		return tp_set_error(-ECANCELED,
				    "tp_local_tile: skipped: core %d already "
				    "failed: %s", ctx->core_id, ctx->error_msg);
	if ((unsigned)dt >= TP_DTYPE_COUNT || rows == 0 || cols == 0 || !t)
		return tp_core_ctx_fail(ctx, -EINVAL,
					"tp_local_tile: core %d: %s %s[%ux%u]: "
					"bad dtype, shape or NULL tile",
					ctx->core_id, tp_mem_name(mem),
					tp_dtype_name(dt), rows, cols);
	uint64_t bytes = (uint64_t)rows * cols * tile_dtype_size[dt];
	if ((unsigned)mem < TP_MEM_COUNT && mem != TP_MEM_GM &&
	    ctx->mem[mem].base &&
	    bytes > ctx->mem[mem].cap - ctx->mem[mem].used)
		return tp_core_ctx_fail(ctx, -ENOMEM,
					"tp_local_tile: core %d: %s %s[%ux%u] "
					"needs %llu bytes, %zu of %zu free",
					ctx->core_id, tp_mem_name(mem),
					tp_dtype_name(dt), rows, cols,
					(unsigned long long)bytes,
					ctx->mem[mem].cap - ctx->mem[mem].used,
					ctx->mem[mem].cap);
	void *p = tp_local_alloc(mem, (size_t)bytes);
	if (!p)
		return ctx->error; /* tp_local_alloc set it */
	return tp_tile_init(t, mem, p, (size_t)bytes, dt, rows, cols, cols);
}

int tp_local_reset(void)
{
	struct tp_core_ctx *ctx = tp_core_ctx_current();
	if (!ctx)
		return tp_set_error(-ENODEV, "tp_local_reset: no AICore "
					     "context bound to this thread");
	tp_core_ctx_local_reset(ctx);
	return 0;
}

/* ---- the op frame ----------------------------------------------------- */

int tile_op_begin(struct tile_op *op, const char *name, enum tp_op id,
		  enum tp_pipe pipe)
{
	struct tp_core_ctx *ctx = tp_core_ctx_current();
	if (__builtin_expect(!ctx, 0))
		return tp_set_error(-ENODEV, "%s: no AICore context bound to "
					     "this thread", name);
	if (__builtin_expect(ctx->error != 0, 0))
		return tp_set_error(-ECANCELED,
				    "%s: skipped: core %d already failed: %s",
				    name, ctx->core_id, ctx->error_msg);
	op->ctx = ctx;
	op->name = name;
	op->d.op = (uint8_t)id;
	op->d.pipe = (uint8_t)pipe;
	op->d.dtype = TP_DTYPE_NONE;
	op->d.vclass = TP_VCLASS_NONE;
	op->d.n_access = 0;
	op->d.n_gm = 0;
	op->d.cycles = 0;
	op->d.instr = 0;
	op->d.elems = 0;
	op->t0_ns = tp_now_ns();
	return 0;
}

int tile_fail(struct tile_op *op, int err, const char *fmt, ...)
{
	char msg[TP_ERROR_MSG_MAX - 64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tp_core_ctx_fail(op->ctx, err, "%s: core %d: %s", op->name,
				op->ctx->core_id, msg);
}

int tile_check(struct tile_op *op, const char *arg, const struct tp_tile *t,
	       unsigned mem_mask)
{
	if (__builtin_expect(!t, 0))
		return tile_fail(op, -EINVAL, "%s is NULL", arg);
	char why[256], d[96];
	if (t->mem >= TP_MEM_COUNT || !(mem_mask & (1u << t->mem))) {
		char want[64] = "";
		size_t n = 0;
		for (int m = 0; m < TP_MEM_COUNT; m++)
			if (mem_mask & (1u << m))
				n += (size_t)snprintf(want + n,
						      sizeof(want) - n, "%s%s",
						      n ? " or " : "",
						      tp_mem_name(m));
		return tile_fail(op, -EINVAL, "%s %s: expected a %s tile",
				 arg, tile_desc(t, d, sizeof(d)), want);
	}
	int rc = tile_validate(op->ctx, t, why, sizeof(why));
	if (__builtin_expect(rc != 0, 0))
		return tile_fail(op, rc, "%s %s: %s", arg,
				 tile_desc(t, d, sizeof(d)), why);
	return 0;
}

int tile_mismatch(struct tile_op *op, const char *why, const char *n1,
		  const struct tp_tile *t1, const char *n2,
		  const struct tp_tile *t2, const char *n3,
		  const struct tp_tile *t3)
{
	const char *names[3] = { n1, n2, n3 };
	const struct tp_tile *tiles[3] = { t1, t2, t3 };
	char list[320], d[96];
	size_t n = 0;
	for (int i = 0; i < 3 && names[i] && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s %s",
				      i ? ", " : "", names[i],
				      tile_desc(tiles[i], d, sizeof(d)));
	return tile_fail(op, -EINVAL, "%s: %s", why, n ? list : "");
}

void tile_op_access(struct tile_op *op, enum tp_mem mem, enum tp_dir dir,
		    uint64_t bytes)
{
	uint64_t reqs = tile_ceil_div(bytes, TP_REQ_BYTES);
	struct tp_usage_delta *d = &op->d;
	for (uint32_t i = 0; i < d->n_access; i++) {
		if (d->access[i].mem == mem && d->access[i].dir == dir) {
			d->access[i].bytes += bytes;
			d->access[i].reqs += reqs;
			return;
		}
	}
	/* Ops add at most TP_USAGE_MAX_ACCESS distinct paths. */
	struct tp_mem_access *a = &d->access[d->n_access++];
	a->mem = (uint8_t)mem;
	a->dir = (uint8_t)dir;
	a->bytes = bytes;
	a->reqs = reqs;
}

void tile_op_gm(struct tile_op *op, const struct tp_tile *t, enum tp_dir dir)
{
	struct tp_usage_delta *d = &op->d;
	if (d->n_gm >= TP_USAGE_MAX_GM)
		return;
	struct tp_gm_span *g = &d->gm[d->n_gm++];
	g->base = tile_base(t);
	g->row_bytes = (uint64_t)t->cols * tile_dtype_size[t->dtype];
	g->stride = tile_row_bytes(t);
	g->rows = t->rows;
	g->dir = (uint8_t)dir;
}

void tile_op_end(struct tile_op *op)
{
	struct tp_core_ctx *ctx = op->ctx;
	uint64_t cycles = tp_core_cycles_from_ns(tp_now_ns() - op->t0_ns);
	op->d.cycles = cycles ? cycles : 1;
	tp_core_ctx_commit(ctx, &op->d);
	if (ctx->scalar_open)
		ctx->scalar_excl_ns += tp_now_ns() - op->t0_ns;
}
