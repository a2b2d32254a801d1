/* SPDX-License-Identifier: MIT */
/*
 * platform/tile/ops_move.c — data movement: GM -> UB/L1 (MTE2), UB -> GM
 * (MTE3), L1 -> L0A/L0B (MTE1), L0C -> GM/UB (FIXP).
 */
#include <errno.h>
#include <string.h>

#include "platform/tile/fp.h"
#include "platform/tile/tile_op.h"
#include "taskprof/kernel.h"

/* Copy same-shape, same-dtype tiles; memmove so that exactly aliased or
 * overlapping UB operands of tp_vcopy stay defined. */
static void copy_2d(const struct tp_tile *dst, const struct tp_tile *src)
{
	size_t es = tile_dtype_size[src->dtype];
	size_t row = (size_t)src->cols * es;
	uint8_t *d = tile_base(dst);
	const uint8_t *s = tile_base(src);
	if (tile_contig(dst) && tile_contig(src)) {
		memmove(d, s, row * src->rows);
		return;
	}
	size_t ds = tile_row_bytes(dst), ss = tile_row_bytes(src);
	for (uint32_t r = 0; r < src->rows; r++)
		memmove(d + r * ds, s + r * ss, row);
}

/* DMA bursts: one when both sides are contiguous, else one per row. */
static uint64_t bursts(const struct tp_tile *dst, const struct tp_tile *src)
{
	return tile_contig(dst) && tile_contig(src) ? 1 : src->rows;
}

static int check_same(struct tile_op *op, const struct tp_tile *dst,
		      const struct tp_tile *src)
{
	if (!tile_same_shape(dst, src) || dst->dtype != src->dtype)
		return tile_mismatch(op, "dst and src differ in shape or dtype",
				     "dst", dst, "src", src, NULL, NULL);
	return 0;
}

/* Shared body of the plain DMA copies. */
static int dma_copy(const char *name, enum tp_op id, enum tp_pipe pipe,
		    const struct tp_tile *dst, unsigned dst_mask,
		    const struct tp_tile *src, unsigned src_mask)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, name, id, pipe);
	if (rc || (rc = tile_check(&op, "dst", dst, dst_mask)) ||
	    (rc = tile_check(&op, "src", src, src_mask)) ||
	    (rc = check_same(&op, dst, src)))
		return rc;
	copy_2d(dst, src);
	uint64_t bytes = tile_bytes(src);
	op.d.dtype = src->dtype;
	op.d.elems = tile_elems(src);
	op.d.instr = bursts(dst, src);
	if (pipe == TP_PIPE_VEC) {
		op.d.vclass = TP_VCLASS_MISC;
		op.d.instr = tile_vec_repeats(src->rows, src->cols,
					      tile_dtype_size[src->dtype],
					      tile_contig(dst) &&
						      tile_contig(src));
	}
	tile_op_access(&op, src->mem, TP_DIR_READ, bytes);
	tile_op_access(&op, dst->mem, TP_DIR_WRITE, bytes);
	if (src->mem == TP_MEM_GM)
		tile_op_gm(&op, src, TP_DIR_READ);
	if (dst->mem == TP_MEM_GM)
		tile_op_gm(&op, dst, TP_DIR_WRITE);
	tile_op_end(&op);
	return 0;
}

int tp_copy_in(const struct tp_tile *dst, const struct tp_tile *src)
{
	return dma_copy("tp_copy_in", TP_OP_COPY_IN, TP_PIPE_MTE2, dst,
			TILE_M(UB) | TILE_M(L1), src, TILE_M(GM));
}

int tp_copy_out(const struct tp_tile *dst, const struct tp_tile *src)
{
	return dma_copy("tp_copy_out", TP_OP_COPY_OUT, TP_PIPE_MTE3, dst,
			TILE_M(GM), src, TILE_M(UB));
}

int tp_vcopy(const struct tp_tile *dst, const struct tp_tile *src)
{
	return dma_copy("tp_vcopy", TP_OP_VCOPY, TP_PIPE_VEC, dst, TILE_M(UB),
			src, TILE_M(UB));
}

#define TRANSPOSE_AS(T)                                                     \
	do {                                                                \
		for (uint32_t r = 0; r < src->rows; r++) {                  \
			const T *s = (const T *)(sb + r * ss);              \
			for (uint32_t c = 0; c < src->cols; c++)            \
				*(T *)(db + c * ds + r * sizeof(T)) = s[c]; \
		}                                                           \
	} while (0)

int tp_load_l0(const struct tp_tile *dst, const struct tp_tile *src,
	       unsigned flags)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, "tp_load_l0", TP_OP_LOAD_L0, TP_PIPE_MTE1);
	if (rc || (rc = tile_check(&op, "dst", dst, TILE_M(L0A) | TILE_M(L0B))) ||
	    (rc = tile_check(&op, "src", src, TILE_M(L1))))
		return rc;
	if (flags & ~TP_LOAD_TRANSPOSE)
		return tile_fail(&op, -EINVAL, "unknown flags 0x%x", flags);
	bool tr = flags & TP_LOAD_TRANSPOSE;
	if (dst->dtype != src->dtype ||
	    (tr ? (dst->rows != src->cols || dst->cols != src->rows)
		: !tile_same_shape(dst, src)))
		return tile_mismatch(&op,
				     tr ? "dst must be the transpose of src, "
					  "same dtype"
					: "dst and src differ in shape or dtype",
				     "dst", dst, "src", src, NULL, NULL);
	if (!tr) {
		copy_2d(dst, src);
	} else {
		uint8_t *db = tile_base(dst);
		const uint8_t *sb = tile_base(src);
		size_t ds = tile_row_bytes(dst), ss = tile_row_bytes(src);
		switch (tile_dtype_size[src->dtype]) {
		case 1: TRANSPOSE_AS(uint8_t); break;
		case 2: TRANSPOSE_AS(uint16_t); break;
		default: TRANSPOSE_AS(uint32_t); break;
		}
	}
	uint64_t bytes = tile_bytes(src);
	op.d.dtype = src->dtype;
	op.d.elems = tile_elems(src);
	op.d.instr = tile_ceil_div(bytes, TP_MTE1_FRACTAL_BYTES);
	tile_op_access(&op, TP_MEM_L1, TP_DIR_READ, bytes);
	tile_op_access(&op, dst->mem, TP_DIR_WRITE, bytes);
	tile_op_end(&op);
	return 0;
}

int tp_fixpipe(const struct tp_tile *dst, const struct tp_tile *src)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, "tp_fixpipe", TP_OP_FIXPIPE, TP_PIPE_FIXP);
	if (rc || (rc = tile_check(&op, "dst", dst, TILE_M(GM) | TILE_M(UB))) ||
	    (rc = tile_check(&op, "src", src, TILE_M(L0C))))
		return rc;
	bool ok = tile_same_shape(dst, src) &&
		  ((src->dtype == TP_FP32 &&
		    (dst->dtype == TP_FP32 || dst->dtype == TP_FP16 ||
		     dst->dtype == TP_BF16)) ||
		   (src->dtype == TP_INT32 && dst->dtype == TP_INT32));
	if (!ok)
		return tile_mismatch(&op,
				     "expected the same shape, src fp32 with "
				     "dst fp32/fp16/bf16, or int32 to int32",
				     "dst", dst, "src", src, NULL, NULL);
	if (dst->dtype == src->dtype) {
		copy_2d(dst, src);
	} else {
		size_t ds = tile_row_bytes(dst), ss = tile_row_bytes(src);
		for (uint32_t r = 0; r < src->rows; r++) {
			const float *s =
				(const float *)(tile_base(src) + r * ss);
			uint16_t *d = (uint16_t *)(tile_base(dst) + r * ds);
			if (dst->dtype == TP_BF16)
				for (uint32_t c = 0; c < src->cols; c++)
					d[c] = tp_f32_to_bf16(s[c]);
			else
				for (uint32_t c = 0; c < src->cols; c++)
					d[c] = tp_f32_to_f16(s[c]);
		}
	}
	op.d.dtype = src->dtype;
	op.d.elems = tile_elems(src);
	op.d.instr = bursts(dst, src);
	tile_op_access(&op, TP_MEM_L0C, TP_DIR_READ, tile_bytes(src));
	tile_op_access(&op, dst->mem, TP_DIR_WRITE, tile_bytes(dst));
	if (dst->mem == TP_MEM_GM)
		tile_op_gm(&op, dst, TP_DIR_WRITE);
	tile_op_end(&op);
	return 0;
}
