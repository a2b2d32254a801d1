/* SPDX-License-Identifier: MIT */
/*
 * platform/tile/ops_cube.c — cube matrix multiply L0A x L0B -> L0C (CUBE).
 *
 * The right operand is widened once into the core's scratch (K x N fp32 or
 * int32), then each output row accumulates a[i][k] * b[k][:] for k in
 * ascending order: a contiguous axpy the compiler vectorises, and the same
 * summation order as a naive dot product, so references can match exactly.
 */
#include <errno.h>
#include <string.h>

#include "platform/tile/fp.h"
#include "platform/tile/tile_op.h"
#include "taskprof/kernel.h"

static float widen(const uint8_t *p, uint32_t k, uint8_t dt)
{
	switch (dt) {
	case TP_BF16: return tp_bf16_to_f32(((const uint16_t *)p)[k]);
	case TP_FP16: return tp_f16_to_f32(((const uint16_t *)p)[k]);
	default: return ((const float *)p)[k];
	}
}

/*
 * GCC -O2 does not vectorise loops of unknown trip count, and the build
 * flags are the project's, so the two hot loops spell out 8-lane vectors
 * with the compiler's vector extension. Lanes are independent: each c[j]
 * still gets exactly c[j] + a * b[j], rounded as the scalar code would (no
 * fused multiply-add: ISO C mode keeps contraction off).
 */
typedef float v8f __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));
typedef uint16_t v8h __attribute__((vector_size(16)));

static void axpy_f32(float *restrict c, const float *restrict b, float a,
		     uint32_t n)
{
	v8f va = { a, a, a, a, a, a, a, a };
	uint32_t j = 0;
	for (; j + 8 <= n; j += 8) {
		v8f vc, vb;
		memcpy(&vc, c + j, sizeof(vc));
		memcpy(&vb, b + j, sizeof(vb));
		vc += va * vb;
		memcpy(c + j, &vc, sizeof(vc));
	}
	for (; j < n; j++)
		c[j] += a * b[j];
}

/* int8 products fit in int32; the sum wraps (unsigned lanes, no UB). */
static void axpy_i32(int32_t *restrict c, const int32_t *restrict b,
		     int32_t a, uint32_t n)
{
	uint32_t ua = (uint32_t)a;
	v8u va = { ua, ua, ua, ua, ua, ua, ua, ua };
	uint32_t j = 0;
	for (; j + 8 <= n; j += 8) {
		v8u vc, vb;
		memcpy(&vc, c + j, sizeof(vc));
		memcpy(&vb, b + j, sizeof(vb));
		vc += va * vb;
		memcpy(c + j, &vc, sizeof(vc));
	}
	for (; j < n; j++)
		c[j] = (int32_t)((uint32_t)c[j] + ua * (uint32_t)b[j]);
}

/* bf16 -> fp32 is a 16-bit shift: 8 at a time. */
static void widen_bf16(float *restrict o, const uint16_t *restrict h,
		       uint32_t n)
{
	uint32_t j = 0;
	for (; j + 8 <= n; j += 8) {
		v8h vh;
		memcpy(&vh, h + j, sizeof(vh));
		v8u vu = __builtin_convertvector(vh, v8u) << 16;
		memcpy(o + j, &vu, sizeof(vu));
	}
	for (; j < n; j++)
		o[j] = tp_bf16_to_f32(h[j]);
}

static void mmad_float(const struct tp_tile *c, const struct tp_tile *a,
		       const struct tp_tile *b, bool acc, float *bs)
{
	uint32_t M = a->rows, K = a->cols, N = b->cols;
	size_t bstride = tile_row_bytes(b);
	for (uint32_t k = 0; k < K; k++) {
		const uint8_t *brow = tile_base(b) + k * bstride;
		float *o = bs + (size_t)k * N;
		if (b->dtype == TP_FP32)
			memcpy(o, brow, (size_t)N * sizeof(float));
		else if (b->dtype == TP_BF16)
			widen_bf16(o, (const uint16_t *)brow, N);
		else
			for (uint32_t j = 0; j < N; j++)
				o[j] = tp_f16_to_f32(
					((const uint16_t *)brow)[j]);
	}
	size_t astride = tile_row_bytes(a), cstride = tile_row_bytes(c);
	for (uint32_t i = 0; i < M; i++) {
		const uint8_t *arow = tile_base(a) + i * astride;
		float *crow = (float *)(tile_base(c) + i * cstride);
		if (!acc)
			memset(crow, 0, (size_t)N * sizeof(float));
		for (uint32_t k = 0; k < K; k++)
			axpy_f32(crow, bs + (size_t)k * N,
				 widen(arow, k, a->dtype), N);
	}
}

static void mmad_int8(const struct tp_tile *c, const struct tp_tile *a,
		      const struct tp_tile *b, bool acc, int32_t *bs)
{
	uint32_t M = a->rows, K = a->cols, N = b->cols;
	size_t bstride = tile_row_bytes(b);
	for (uint32_t k = 0; k < K; k++) {
		const int8_t *brow = (const int8_t *)(tile_base(b) +
						      k * bstride);
		for (uint32_t j = 0; j < N; j++)
			bs[(size_t)k * N + j] = brow[j];
	}
	size_t astride = tile_row_bytes(a), cstride = tile_row_bytes(c);
	for (uint32_t i = 0; i < M; i++) {
		const int8_t *arow = (const int8_t *)(tile_base(a) +
						      i * astride);
		int32_t *crow = (int32_t *)(tile_base(c) + i * cstride);
		if (!acc)
			memset(crow, 0, (size_t)N * sizeof(int32_t));
		for (uint32_t k = 0; k < K; k++)
			axpy_i32(crow, bs + (size_t)k * N, arow[k], N);
	}
}

int tp_mmad(const struct tp_tile *c, const struct tp_tile *a,
	    const struct tp_tile *b, unsigned flags)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, "tp_mmad", TP_OP_MMAD, TP_PIPE_CUBE);
	if (rc || (rc = tile_check(&op, "c", c, TILE_M(L0C))) ||
	    (rc = tile_check(&op, "a", a, TILE_M(L0A))) ||
	    (rc = tile_check(&op, "b", b, TILE_M(L0B))))
		return rc;
	if (flags & ~TP_MMAD_ACCUMULATE)
		return tile_fail(&op, -EINVAL, "unknown flags 0x%x", flags);
	uint8_t in = a->dtype;
	if (b->dtype != in || in == TP_INT32 ||
	    c->dtype != (in == TP_INT8 ? TP_INT32 : TP_FP32))
		return tile_mismatch(&op,
				     "expected a and b both bf16/fp16/fp32 "
				     "with c fp32, or both int8 with c int32",
				     "c", c, "a", a, "b", b);
	if (a->cols != b->rows || c->rows != a->rows || c->cols != b->cols)
		return tile_mismatch(&op,
				     "expected c MxN = a MxK times b KxN",
				     "c", c, "a", a, "b", b);
	uint32_t M = a->rows, K = a->cols, N = b->cols;
	/* b fits in L0B, so K x N 4-byte values fit the scratch (4 x L0B). */
	if ((uint64_t)K * N * 4 > op.ctx->mm_scratch_bytes)
		return tile_fail(&op, -EFAULT,
				 "b %ux%u exceeds the matmul scratch", K, N);
	bool acc = flags & TP_MMAD_ACCUMULATE;
	if (in == TP_INT8)
		mmad_int8(c, a, b, acc, op.ctx->mm_scratch);
	else
		mmad_float(c, a, b, acc, op.ctx->mm_scratch);

	size_t es = tile_dtype_size[in];
	op.d.dtype = in;
	op.d.elems = (uint64_t)M * N * K;
	op.d.instr = tile_ceil_div(M, 16) * tile_ceil_div(N, 16) *
		     tile_ceil_div(K, 32 / es);
	tile_op_access(&op, TP_MEM_L0A, TP_DIR_READ, tile_bytes(a));
	tile_op_access(&op, TP_MEM_L0B, TP_DIR_READ, tile_bytes(b));
	if (acc)
		tile_op_access(&op, TP_MEM_L0C, TP_DIR_READ, tile_bytes(c));
	tile_op_access(&op, TP_MEM_L0C, TP_DIR_WRITE, tile_bytes(c));
	tile_op_end(&op);
	return 0;
}
