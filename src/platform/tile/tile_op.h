/* SPDX-License-Identifier: MIT */
/*
 * platform/tile/tile_op.h — the frame every tile op runs in (private to
 * platform/tile/).
 *
 *     struct tile_op op;
 *     int rc = tile_op_begin(&op, "tp_vadd", TP_OP_VADD, TP_PIPE_VEC);
 *     if (rc) return rc;                            // no ctx / sticky error
 *     if ((rc = tile_check(&op, "dst", dst, TILE_M(UB)))) return rc;
 *     ... shape / dtype checks: return tile_mismatch(&op, ...) ...
 *     ... the data work ...
 *     tile_op_access(&op, TP_MEM_UB, TP_DIR_READ, bytes);
 *     op.d.instr = ...; op.d.elems = ...; op.d.dtype = ...;
 *     tile_op_end(&op);                             // measure + account
 *     return 0;
 *
 * Checks happen before any write, so a failed op leaves memory untouched.
 */
#ifndef TASKPROF_PLATFORM_TILE_TILE_OP_H
#define TASKPROF_PLATFORM_TILE_TILE_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/tile/core_ctx.h"
#include "platform/tile/usage.h"
#include "taskprof/kernel.h"

/* Memory-kind masks for tile_check(). */
#define TILE_M(m) (1u << TP_MEM_##m)

/* Element sizes, indexed by tp_dtype (valid dtypes only). */
extern const uint8_t tile_dtype_size[TP_DTYPE_COUNT];

/**
 * struct tile_op - one tile op in progress, between tile_op_begin() and
 * tile_op_end().
 * @ctx:   the bound core context.
 * @name:  the op's name, for messages.
 * @t0_ns: tp_now_ns() at begin (ns of CLOCK_MONOTONIC_RAW).
 * @d:     the usage delta being built (cycles set at end).
 */
struct tile_op {
	struct tp_core_ctx *ctx;
	const char *name;
	uint64_t t0_ns;
	struct tp_usage_delta d;
};

/**
 * tile_op_begin() - find the bound core, refuse if it already failed, start
 * the op's clock and its delta (dtype / vclass NONE, no accesses).
 *
 * Return: 0, -ENODEV (no bound core), -ECANCELED (sticky error).
 */
int tile_op_begin(struct tile_op *op, const char *name, enum tp_op id,
		  enum tp_pipe pipe);

/**
 * tile_check() - validate operand @arg of the op (see tile_validate()) and
 * that its memory is one of @mem_mask.
 *
 * Return: 0 or the failure, recorded as the core's sticky error.
 */
int tile_check(struct tile_op *op, const char *arg, const struct tp_tile *t,
	       unsigned mem_mask);

/**
 * tile_validate() - whether @t is a well-formed view inside its buffer and,
 * for a local memory, inside @ctx's current allocations of that kind.
 * @why: receives the reason on failure.
 *
 * Return: 0, -EINVAL, -EFAULT, -ESTALE or -ENODEV (local tile, no ctx).
 */
int tile_validate(const struct tp_core_ctx *ctx, const struct tp_tile *t,
		  char *why, size_t why_len);

/**
 * tile_fail() - fail the op with a message "<op>: core <id>: <fmt...>".
 *
 * Return: @err.
 */
int tile_fail(struct tile_op *op, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * tile_mismatch() - fail the op with -EINVAL: "<op>: core <id>: <why>:"
 * followed by each named operand's memory, dtype and shape. Pass NULL for
 * unused operands.
 */
int tile_mismatch(struct tile_op *op, const char *why, const char *n1,
		  const struct tp_tile *t1, const char *n2,
		  const struct tp_tile *t2, const char *n3,
		  const struct tp_tile *t3);

/**
 * tile_desc() - "UB fp32[16x128 stride 128]" into @buf (>= 64 bytes).
 */
const char *tile_desc(const struct tp_tile *t, char *buf, size_t len);

/**
 * tile_op_access() - add @bytes on (@mem, @dir) to the op's delta, with
 * ceil(@bytes / TP_REQ_BYTES) requests; merges with an existing entry for
 * the same (mem, dir).
 */
void tile_op_access(struct tile_op *op, enum tp_mem mem, enum tp_dir dir,
		    uint64_t bytes);

/**
 * tile_op_gm() - record GM tile @t, read or written (@dir), in the op's
 * delta for the L2 model (struct tp_gm_span). At most TP_USAGE_MAX_GM per
 * op; more are ignored.
 */
void tile_op_gm(struct tile_op *op, const struct tp_tile *t, enum tp_dir dir);

/**
 * tile_op_end() - stop the op's clock, set its cycles (>= 1), add the
 * delta to the core's record and call the usage hook if counting; inside
 * a scalar section, exclude the op's time from the section.
 */
void tile_op_end(struct tile_op *op);

/**
 * tile_scalar_close() - close the open scalar section of @ctx and account
 * it as one TP_OP_SCALAR_SECTION op (core_ctx.c): its time since it
 * opened minus the tile ops run inside, in AICore cycles.
 * @ctx: a core context with a scalar section open.
 *
 * Return: the SCALAR-pipe cycles accounted, at TP_CORE_FREQ_HZ (>= 1).
 */
uint64_t tile_scalar_close(struct tp_core_ctx *ctx);

/** tile_base() - address of element (0, 0) of @t: buf + offset. */
static inline uint8_t *tile_base(const struct tp_tile *t)
{
	return t->buf + t->offset;
}

/** tile_row_bytes() - bytes between row starts of @t: stride × element
 *  size. */
static inline size_t tile_row_bytes(const struct tp_tile *t)
{
	return (size_t)t->stride * tile_dtype_size[t->dtype];
}

/** tile_bytes() - payload bytes of @t: rows × cols × element size. */
static inline uint64_t tile_bytes(const struct tp_tile *t)
{
	return (uint64_t)t->rows * t->cols * tile_dtype_size[t->dtype];
}

/** tile_elems() - elements of @t: rows × cols. */
static inline uint64_t tile_elems(const struct tp_tile *t)
{
	return (uint64_t)t->rows * t->cols;
}

/** tile_contig() - whether the elements of @t form one contiguous run
 *  (one row, or stride == cols). */
static inline bool tile_contig(const struct tp_tile *t)
{
	return t->rows == 1 || t->stride == t->cols;
}

/** tile_same_shape() - whether @a and @b have the same rows and cols. */
static inline bool tile_same_shape(const struct tp_tile *a,
				   const struct tp_tile *b)
{
	return a->rows == b->rows && a->cols == b->cols;
}

/** tile_ceil_div() - ceil(@a / @b); @b > 0. */
static inline uint64_t tile_ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/**
 * tile_vec_repeats() - VEC instructions of an op over @rows × @cols
 * elements of @width bytes: TP_VEC_REPEAT_BYTES (256-byte) repeats over
 * one run when @one_run (contiguous), else per row (usage.h).
 *
 * Return: the repeat count.
 */
static inline uint64_t tile_vec_repeats(uint32_t rows, uint32_t cols,
					size_t width, bool one_run)
{
	if (one_run)
		return tile_ceil_div((uint64_t)rows * cols * width,
				     TP_VEC_REPEAT_BYTES);
	return (uint64_t)rows *
	       tile_ceil_div((uint64_t)cols * width, TP_VEC_REPEAT_BYTES);
}

#endif /* TASKPROF_PLATFORM_TILE_TILE_OP_H */
