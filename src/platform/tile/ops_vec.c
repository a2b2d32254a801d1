/* SPDX-License-Identifier: MIT */
/*
 * platform/tile/ops_vec.c — vector ops on UB tiles (VEC pipe): elementwise
 * binary / scalar / unary, dup, cast, row reductions, broadcast-row ops.
 *
 * fp32 and int32 tiles are computed in place on their rows; fp16 and bf16
 * rows are widened in chunks into fp32 buffers on the stack, computed in
 * fp32 and rounded back (round to nearest even), so every float type shares
 * one set of loops. A tile whose operands are all contiguous is one run;
 * otherwise the loops go row by row.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "platform/tile/fp.h"
#include "platform/tile/tile_op.h"
#include "taskprof/kernel.h"

enum ew_kind { EW_ADD, EW_SUB, EW_MUL, EW_DIV, EW_MAX, EW_MIN };
enum un_kind { UN_EXP, UN_SQRT, UN_ABS, UN_RELU };

/* Elements per widened chunk of a 16-bit float run (3 × 1 KiB of stack). */
#define CHUNK 256

static bool is_float(uint8_t dt)
{
	return dt == TP_FP32 || dt == TP_FP16 || dt == TP_BF16;
}

static uint8_t vclass_of(uint8_t dt)
{
	switch (dt) {
	case TP_FP32: return TP_VCLASS_FP32;
	case TP_FP16:
	case TP_BF16: return TP_VCLASS_FP16_128LANE;
	case TP_INT32: return TP_VCLASS_INT32;
	default: return TP_VCLASS_MISC;
	}
}

/* ---- fp32 / int32 kernels -------------------------------------------- */

/* max(a, b) = a > b ? a : b (so a NaN in a yields b): one compare and
 * select, which vectorises. */
static void f_bin(float *d, const float *a, const float *b, uint32_t n,
		  int k)
{
	switch (k) {
	case EW_ADD: for (uint32_t i = 0; i < n; i++) d[i] = a[i] + b[i]; break;
	case EW_SUB: for (uint32_t i = 0; i < n; i++) d[i] = a[i] - b[i]; break;
	case EW_MUL: for (uint32_t i = 0; i < n; i++) d[i] = a[i] * b[i]; break;
	case EW_DIV: for (uint32_t i = 0; i < n; i++) d[i] = a[i] / b[i]; break;
	case EW_MAX:
		for (uint32_t i = 0; i < n; i++)
			d[i] = a[i] > b[i] ? a[i] : b[i];
		break;
	default:
		for (uint32_t i = 0; i < n; i++)
			d[i] = a[i] < b[i] ? a[i] : b[i];
		break;
	}
}

static void f_bins(float *d, const float *a, float s, uint32_t n, int k)
{
	switch (k) {
	case EW_ADD: for (uint32_t i = 0; i < n; i++) d[i] = a[i] + s; break;
	case EW_SUB: for (uint32_t i = 0; i < n; i++) d[i] = a[i] - s; break;
	case EW_MUL: for (uint32_t i = 0; i < n; i++) d[i] = a[i] * s; break;
	case EW_DIV: for (uint32_t i = 0; i < n; i++) d[i] = a[i] / s; break;
	case EW_MAX:
		for (uint32_t i = 0; i < n; i++) d[i] = a[i] > s ? a[i] : s;
		break;
	default:
		for (uint32_t i = 0; i < n; i++) d[i] = a[i] < s ? a[i] : s;
		break;
	}
}

static void f_una(float *d, const float *a, uint32_t n, int k)
{
	switch (k) {
	case UN_EXP: for (uint32_t i = 0; i < n; i++) d[i] = expf(a[i]); break;
	case UN_SQRT: for (uint32_t i = 0; i < n; i++) d[i] = sqrtf(a[i]); break;
	case UN_ABS: for (uint32_t i = 0; i < n; i++) d[i] = fabsf(a[i]); break;
	default:
		for (uint32_t i = 0; i < n; i++)
			d[i] = a[i] > 0.0f ? a[i] : 0.0f;
		break;
	}
}

/* int32 arithmetic wraps: computed in uint32, no signed overflow. */
static int32_t i_op(int32_t a, int32_t b, int k)
{
	switch (k) {
	case EW_ADD: return (int32_t)((uint32_t)a + (uint32_t)b);
	case EW_SUB: return (int32_t)((uint32_t)a - (uint32_t)b);
	case EW_MUL: return (int32_t)((uint32_t)a * (uint32_t)b);
	case EW_MAX: return a > b ? a : b;
	default: return a < b ? a : b;
	}
}

static void i_bin(int32_t *d, const int32_t *a, const int32_t *b, uint32_t n,
		  int k)
{
	for (uint32_t i = 0; i < n; i++)
		d[i] = i_op(a[i], b[i], k);
}

static void i_bins(int32_t *d, const int32_t *a, int32_t s, uint32_t n, int k)
{
	for (uint32_t i = 0; i < n; i++)
		d[i] = i_op(a[i], s, k);
}

static void i_una(int32_t *d, const int32_t *a, uint32_t n, int k)
{
	for (uint32_t i = 0; i < n; i++) {
		if (k == UN_ABS)
			d[i] = a[i] < 0 ? (int32_t)(0u - (uint32_t)a[i]) : a[i];
		else
			d[i] = a[i] > 0 ? a[i] : 0;
	}
}

/* ---- 16-bit float widening ------------------------------------------- */

static void widen_run(float *o, const void *p, uint8_t dt, uint32_t n)
{
	const uint16_t *h = p;
	if (dt == TP_BF16)
		for (uint32_t i = 0; i < n; i++)
			o[i] = tp_bf16_to_f32(h[i]);
	else
		for (uint32_t i = 0; i < n; i++)
			o[i] = tp_f16_to_f32(h[i]);
}

static void narrow_run(void *p, const float *v, uint8_t dt, uint32_t n)
{
	uint16_t *h = p;
	if (dt == TP_BF16)
		for (uint32_t i = 0; i < n; i++)
			h[i] = tp_f32_to_bf16(v[i]);
	else
		for (uint32_t i = 0; i < n; i++)
			h[i] = tp_f32_to_f16(v[i]);
}

/* One run of n elements: form 2 = binary (a, b), 1 = with scalar, 0 =
 * unary. Scalars come as float (float dtypes) and int32 (int32). */
struct ew_args {
	int form;
	int kind;
	float s;
	int32_t si;
};

static void ew_run(uint8_t dt, const struct ew_args *x, void *d,
		   const void *a, const void *b, uint32_t n)
{
	if (dt == TP_FP32) {
		if (x->form == 2)
			f_bin(d, a, b, n, x->kind);
		else if (x->form == 1)
			f_bins(d, a, x->s, n, x->kind);
		else
			f_una(d, a, n, x->kind);
		return;
	}
	if (dt == TP_INT32) {
		if (x->form == 2)
			i_bin(d, a, b, n, x->kind);
		else if (x->form == 1)
			i_bins(d, a, x->si, n, x->kind);
		else
			i_una(d, a, n, x->kind);
		return;
	}
	float fa[CHUNK], fb[CHUNK], fd[CHUNK];
	for (uint32_t i = 0; i < n; i += CHUNK) {
		uint32_t m = n - i < CHUNK ? n - i : CHUNK;
		widen_run(fa, (const uint16_t *)a + i, dt, m);
		if (x->form == 2) {
			widen_run(fb, (const uint16_t *)b + i, dt, m);
			f_bin(fd, fa, fb, m, x->kind);
		} else if (x->form == 1) {
			f_bins(fd, fa, x->s, m, x->kind);
		} else {
			f_una(fd, fa, m, x->kind);
		}
		narrow_run((uint16_t *)d + i, fd, dt, m);
	}
}

/* Apply a run function over the tiles: once when all are contiguous, else
 * row by row. b may be NULL. */
static void ew_tiles(const struct ew_args *x, const struct tp_tile *dst,
		     const struct tp_tile *a, const struct tp_tile *b,
		     bool one_run)
{
	uint8_t dt = dst->dtype;
	if (one_run) {
		ew_run(dt, x, tile_base(dst), tile_base(a),
		       b ? tile_base(b) : NULL, dst->rows * dst->cols);
		return;
	}
	for (uint32_t r = 0; r < dst->rows; r++)
		ew_run(dt, x, tile_base(dst) + r * tile_row_bytes(dst),
		       tile_base(a) + r * tile_row_bytes(a),
		       b ? tile_base(b) + r * tile_row_bytes(b) : NULL,
		       dst->cols);
}

/* Convert a float scalar to @dt for the int types: an integer in range. */
static int scalar_int(struct tile_op *op, float s, uint8_t dt, int32_t *out)
{
	float lo = dt == TP_INT8 ? -128.0f : -2147483648.0f;
	float hi = dt == TP_INT8 ? 128.0f : 2147483648.0f;
	if (!(s == truncf(s) && s >= lo && s < hi))
		return tile_fail(op, -EINVAL, "scalar %g is not a %s value", s,
				 tp_dtype_name(dt));
	*out = (int32_t)s;
	return 0;
}

static int need_dtype(struct tile_op *op, const struct tp_tile *t,
		      bool int_ok)
{
	if (is_float(t->dtype) || (int_ok && t->dtype == TP_INT32))
		return 0;
	char d[96];
	return tile_fail(op, -EINVAL, "%s: dtype %s not supported (%s)",
			 tile_desc(t, d, sizeof(d)), tp_dtype_name(t->dtype),
			 int_ok ? "fp32, fp16, bf16 or int32"
				: "fp32, fp16 or bf16");
}

static void account_ew(struct tile_op *op, const struct tp_tile *dst,
		       const struct tp_tile *a, const struct tp_tile *b,
		       bool one_run)
{
	op->d.dtype = dst->dtype;
	op->d.vclass = vclass_of(dst->dtype);
	op->d.elems = tile_elems(dst);
	op->d.instr = tile_vec_repeats(dst->rows, dst->cols,
				       tile_dtype_size[dst->dtype], one_run);
	tile_op_access(op, TP_MEM_UB, TP_DIR_READ, tile_bytes(a));
	if (b)
		tile_op_access(op, TP_MEM_UB, TP_DIR_READ, tile_bytes(b));
	tile_op_access(op, TP_MEM_UB, TP_DIR_WRITE, tile_bytes(dst));
}

/* ---- elementwise ------------------------------------------------------ */

static int ew_binary(const char *name, enum tp_op id, int kind,
		     const struct tp_tile *dst, const struct tp_tile *a,
		     const struct tp_tile *b)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, name, id, TP_PIPE_VEC);
	if (rc || (rc = tile_check(&op, "dst", dst, TILE_M(UB))) ||
	    (rc = tile_check(&op, "a", a, TILE_M(UB))) ||
	    (rc = tile_check(&op, "b", b, TILE_M(UB))))
		return rc;
	if (!tile_same_shape(dst, a) || !tile_same_shape(dst, b) ||
	    dst->dtype != a->dtype || dst->dtype != b->dtype)
		return tile_mismatch(&op, "operands differ in shape or dtype",
				     "dst", dst, "a", a, "b", b);
	if ((rc = need_dtype(&op, dst, kind != EW_DIV)))
		return rc;
	bool one = tile_contig(dst) && tile_contig(a) && tile_contig(b);
	struct ew_args x = { .form = 2, .kind = kind };
	ew_tiles(&x, dst, a, b, one);
	account_ew(&op, dst, a, b, one);
	tile_op_end(&op);
	return 0;
}

int tp_vadd(const struct tp_tile *d, const struct tp_tile *a,
	    const struct tp_tile *b)
{
	return ew_binary("tp_vadd", TP_OP_VADD, EW_ADD, d, a, b);
}

int tp_vsub(const struct tp_tile *d, const struct tp_tile *a,
	    const struct tp_tile *b)
{
	return ew_binary("tp_vsub", TP_OP_VSUB, EW_SUB, d, a, b);
}

int tp_vmul(const struct tp_tile *d, const struct tp_tile *a,
	    const struct tp_tile *b)
{
	return ew_binary("tp_vmul", TP_OP_VMUL, EW_MUL, d, a, b);
}

int tp_vdiv(const struct tp_tile *d, const struct tp_tile *a,
	    const struct tp_tile *b)
{
	return ew_binary("tp_vdiv", TP_OP_VDIV, EW_DIV, d, a, b);
}

int tp_vmax(const struct tp_tile *d, const struct tp_tile *a,
	    const struct tp_tile *b)
{
	return ew_binary("tp_vmax", TP_OP_VMAX, EW_MAX, d, a, b);
}

int tp_vmin(const struct tp_tile *d, const struct tp_tile *a,
	    const struct tp_tile *b)
{
	return ew_binary("tp_vmin", TP_OP_VMIN, EW_MIN, d, a, b);
}

static int ew_scalar(const char *name, enum tp_op id, int kind,
		     const struct tp_tile *dst, const struct tp_tile *src,
		     float s)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, name, id, TP_PIPE_VEC);
	if (rc || (rc = tile_check(&op, "dst", dst, TILE_M(UB))) ||
	    (rc = tile_check(&op, "src", src, TILE_M(UB))))
		return rc;
	if (!tile_same_shape(dst, src) || dst->dtype != src->dtype)
		return tile_mismatch(&op, "dst and src differ in shape or dtype",
				     "dst", dst, "src", src, NULL, NULL);
	if ((rc = need_dtype(&op, dst, true)))
		return rc;
	struct ew_args x = { .form = 1, .kind = kind, .s = s };
	if (dst->dtype == TP_INT32 &&
	    (rc = scalar_int(&op, s, TP_INT32, &x.si)))
		return rc;
	bool one = tile_contig(dst) && tile_contig(src);
	ew_tiles(&x, dst, src, NULL, one);
	account_ew(&op, dst, src, NULL, one);
	tile_op_end(&op);
	return 0;
}

int tp_vadds(const struct tp_tile *d, const struct tp_tile *s, float v)
{
	return ew_scalar("tp_vadds", TP_OP_VADDS, EW_ADD, d, s, v);
}

int tp_vmuls(const struct tp_tile *d, const struct tp_tile *s, float v)
{
	return ew_scalar("tp_vmuls", TP_OP_VMULS, EW_MUL, d, s, v);
}

int tp_vmaxs(const struct tp_tile *d, const struct tp_tile *s, float v)
{
	return ew_scalar("tp_vmaxs", TP_OP_VMAXS, EW_MAX, d, s, v);
}

int tp_vmins(const struct tp_tile *d, const struct tp_tile *s, float v)
{
	return ew_scalar("tp_vmins", TP_OP_VMINS, EW_MIN, d, s, v);
}

static int ew_unary(const char *name, enum tp_op id, int kind,
		    const struct tp_tile *dst, const struct tp_tile *src)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, name, id, TP_PIPE_VEC);
	if (rc || (rc = tile_check(&op, "dst", dst, TILE_M(UB))) ||
	    (rc = tile_check(&op, "src", src, TILE_M(UB))))
		return rc;
	if (!tile_same_shape(dst, src) || dst->dtype != src->dtype)
		return tile_mismatch(&op, "dst and src differ in shape or dtype",
				     "dst", dst, "src", src, NULL, NULL);
	if ((rc = need_dtype(&op, dst, kind == UN_ABS || kind == UN_RELU)))
		return rc;
	bool one = tile_contig(dst) && tile_contig(src);
	struct ew_args x = { .form = 0, .kind = kind };
	ew_tiles(&x, dst, src, NULL, one);
	account_ew(&op, dst, src, NULL, one);
	tile_op_end(&op);
	return 0;
}

int tp_vexp(const struct tp_tile *d, const struct tp_tile *s)
{
	return ew_unary("tp_vexp", TP_OP_VEXP, UN_EXP, d, s);
}

int tp_vsqrt(const struct tp_tile *d, const struct tp_tile *s)
{
	return ew_unary("tp_vsqrt", TP_OP_VSQRT, UN_SQRT, d, s);
}

int tp_vabs(const struct tp_tile *d, const struct tp_tile *s)
{
	return ew_unary("tp_vabs", TP_OP_VABS, UN_ABS, d, s);
}

int tp_vrelu(const struct tp_tile *d, const struct tp_tile *s)
{
	return ew_unary("tp_vrelu", TP_OP_VRELU, UN_RELU, d, s);
}

/* ---- dup -------------------------------------------------------------- */

int tp_vdup(const struct tp_tile *dst, float s)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, "tp_vdup", TP_OP_VDUP, TP_PIPE_VEC);
	if (rc || (rc = tile_check(&op, "dst", dst, TILE_M(UB))))
		return rc;
	uint8_t dt = dst->dtype;
	uint32_t v32 = 0;
	uint16_t v16 = 0;
	int32_t vi = 0;
	switch (dt) {
	case TP_FP32: v32 = tp_f32_bits(s); break;
	case TP_FP16: v16 = tp_f32_to_f16(s); break;
	case TP_BF16: v16 = tp_f32_to_bf16(s); break;
	default:
		if ((rc = scalar_int(&op, s, dt, &vi)))
			return rc;
		v32 = (uint32_t)vi;
		break;
	}
	bool one = tile_contig(dst);
	uint32_t n = one ? dst->rows * dst->cols : dst->cols;
	uint32_t runs = one ? 1 : dst->rows;
	for (uint32_t r = 0; r < runs; r++) {
		uint8_t *p = tile_base(dst) + r * tile_row_bytes(dst);
		if (dt == TP_INT8)
			memset(p, (int8_t)vi, n);
		else if (dt == TP_FP16 || dt == TP_BF16)
			for (uint32_t i = 0; i < n; i++)
				((uint16_t *)p)[i] = v16;
		else
			for (uint32_t i = 0; i < n; i++)
				((uint32_t *)p)[i] = v32;
	}
	op.d.dtype = dt;
	op.d.vclass = TP_VCLASS_MISC;
	op.d.elems = tile_elems(dst);
	op.d.instr = tile_vec_repeats(dst->rows, dst->cols,
				      tile_dtype_size[dt], one);
	tile_op_access(&op, TP_MEM_UB, TP_DIR_WRITE, tile_bytes(dst));
	tile_op_end(&op);
	return 0;
}

/* ---- cast ------------------------------------------------------------- */

static int32_t f32_to_i32_rne(float f)
{
	if (f != f)
		return 0;
	if (f >= 2147483648.0f)
		return INT32_MAX;
	if (f < -2147483648.0f)
		return INT32_MIN;
	return (int32_t)rintf(f);
}

static void cast_run(uint8_t dd, void *d, uint8_t sd, const void *s,
		     uint32_t n)
{
	if (sd == TP_INT32) { /* -> fp32: the conversion rounds to nearest */
		for (uint32_t i = 0; i < n; i++)
			((float *)d)[i] = (float)((const int32_t *)s)[i];
		return;
	}
	if (dd == TP_INT32) { /* fp32 -> int32 */
		for (uint32_t i = 0; i < n; i++)
			((int32_t *)d)[i] = f32_to_i32_rne(((const float *)s)[i]);
		return;
	}
	float buf[CHUNK];
	for (uint32_t i = 0; i < n; i += CHUNK) {
		uint32_t m = n - i < CHUNK ? n - i : CHUNK;
		const float *f;
		if (sd == TP_FP32) {
			f = (const float *)s + i;
		} else {
			widen_run(buf, (const uint16_t *)s + i, sd, m);
			f = buf;
		}
		if (dd == TP_FP32)
			memcpy((float *)d + i, f, m * sizeof(float));
		else
			narrow_run((uint16_t *)d + i, f, dd, m);
	}
}

int tp_vcast(const struct tp_tile *dst, const struct tp_tile *src)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, "tp_vcast", TP_OP_VCAST, TP_PIPE_VEC);
	if (rc || (rc = tile_check(&op, "dst", dst, TILE_M(UB))) ||
	    (rc = tile_check(&op, "src", src, TILE_M(UB))))
		return rc;
	uint8_t sd = src->dtype, dd = dst->dtype;
	bool ok = (is_float(sd) && is_float(dd) && sd != dd) ||
		  (sd == TP_INT32 && dd == TP_FP32) ||
		  (sd == TP_FP32 && dd == TP_INT32);
	if (!tile_same_shape(dst, src) || !ok)
		return tile_mismatch(&op,
				     "expected the same shape and a cast "
				     "between two of fp32/fp16/bf16, or "
				     "int32<->fp32",
				     "dst", dst, "src", src, NULL, NULL);
	bool one = tile_contig(dst) && tile_contig(src);
	if (one) {
		cast_run(dd, tile_base(dst), sd, tile_base(src),
			 src->rows * src->cols);
	} else {
		for (uint32_t r = 0; r < src->rows; r++)
			cast_run(dd, tile_base(dst) + r * tile_row_bytes(dst),
				 sd, tile_base(src) + r * tile_row_bytes(src),
				 src->cols);
	}
	size_t ss = tile_dtype_size[sd], ds = tile_dtype_size[dd];
	op.d.dtype = sd;
	if (ss == 4 && ds == 4)
		op.d.vclass = TP_VCLASS_MISC;
	else if (ss == 4 || ds == 4)
		op.d.vclass = TP_VCLASS_FP16_64LANE;
	else
		op.d.vclass = TP_VCLASS_FP16_128LANE;
	op.d.elems = tile_elems(src);
	op.d.instr = tile_vec_repeats(src->rows, src->cols, ss > ds ? ss : ds,
				      one);
	tile_op_access(&op, TP_MEM_UB, TP_DIR_READ, tile_bytes(src));
	tile_op_access(&op, TP_MEM_UB, TP_DIR_WRITE, tile_bytes(dst));
	tile_op_end(&op);
	return 0;
}

/* ---- row reductions --------------------------------------------------- */

static float elem_f(const uint8_t *row, uint32_t j, uint8_t dt)
{
	switch (dt) {
	case TP_FP32: return ((const float *)row)[j];
	case TP_BF16: return tp_bf16_to_f32(((const uint16_t *)row)[j]);
	default: return tp_f16_to_f32(((const uint16_t *)row)[j]);
	}
}

static void store_f(uint8_t *p, float v, uint8_t dt)
{
	switch (dt) {
	case TP_FP32: *(float *)p = v; break;
	case TP_BF16: *(uint16_t *)p = tp_f32_to_bf16(v); break;
	default: *(uint16_t *)p = tp_f32_to_f16(v); break;
	}
}

static int row_reduce(const char *name, enum tp_op id, bool is_max,
		      const struct tp_tile *dst, const struct tp_tile *src)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, name, id, TP_PIPE_VEC);
	if (rc || (rc = tile_check(&op, "dst", dst, TILE_M(UB))) ||
	    (rc = tile_check(&op, "src", src, TILE_M(UB))))
		return rc;
	if (dst->rows != src->rows || dst->cols != 1 ||
	    dst->dtype != src->dtype)
		return tile_mismatch(&op,
				     "expected dst rows x 1 with src's rows "
				     "and dtype",
				     "dst", dst, "src", src, NULL, NULL);
	if ((rc = need_dtype(&op, src, false)))
		return rc;
	uint8_t dt = src->dtype;
	size_t es = tile_dtype_size[dt];
	for (uint32_t r = 0; r < src->rows; r++) {
		const uint8_t *row = tile_base(src) + r * tile_row_bytes(src);
		float acc;
		if (dt == TP_FP32) {
			const float *f = (const float *)row;
			acc = f[0];
			if (is_max) {
				for (uint32_t j = 1; j < src->cols; j++)
					acc = f[j] > acc ? f[j] : acc;
			} else {
				for (uint32_t j = 1; j < src->cols; j++)
					acc += f[j];
			}
		} else {
			acc = elem_f(row, 0, dt);
			for (uint32_t j = 1; j < src->cols; j++) {
				float v = elem_f(row, j, dt);
				acc = is_max ? (v > acc ? v : acc) : acc + v;
			}
		}
		store_f(tile_base(dst) + r * tile_row_bytes(dst), acc, dt);
	}
	op.d.dtype = dt;
	op.d.vclass = vclass_of(dt);
	op.d.elems = tile_elems(src);
	op.d.instr = tile_vec_repeats(src->rows, src->cols, es, false);
	tile_op_access(&op, TP_MEM_UB, TP_DIR_READ, tile_bytes(src));
	tile_op_access(&op, TP_MEM_UB, TP_DIR_WRITE, tile_bytes(dst));
	tile_op_end(&op);
	return 0;
}

int tp_vrowmax(const struct tp_tile *dst, const struct tp_tile *src)
{
	return row_reduce("tp_vrowmax", TP_OP_VROWMAX, true, dst, src);
}

int tp_vrowsum(const struct tp_tile *dst, const struct tp_tile *src)
{
	return row_reduce("tp_vrowsum", TP_OP_VROWSUM, false, dst, src);
}

/* ---- broadcast-row ops ------------------------------------------------ */

static int row_bcast(const char *name, enum tp_op id, int kind,
		     const struct tp_tile *dst, const struct tp_tile *src,
		     const struct tp_tile *v)
{
	struct tile_op op;
	int rc = tile_op_begin(&op, name, id, TP_PIPE_VEC);
	if (rc || (rc = tile_check(&op, "dst", dst, TILE_M(UB))) ||
	    (rc = tile_check(&op, "src", src, TILE_M(UB))) ||
	    (rc = tile_check(&op, "v", v, TILE_M(UB))))
		return rc;
	if (!tile_same_shape(dst, src) || v->rows != src->rows ||
	    v->cols != 1 || dst->dtype != src->dtype ||
	    v->dtype != src->dtype)
		return tile_mismatch(&op,
				     "expected dst and src the same shape, v "
				     "rows x 1, one dtype",
				     "dst", dst, "src", src, "v", v);
	if ((rc = need_dtype(&op, src, kind != EW_DIV)))
		return rc;
	uint8_t dt = src->dtype;
	/* v[r] is read before row r is written, so v may be a column of
	 * dst (or src). */
	for (uint32_t r = 0; r < src->rows; r++) {
		const uint8_t *vp = tile_base(v) + r * tile_row_bytes(v);
		struct ew_args x = { .form = 1, .kind = kind };
		if (dt == TP_INT32)
			x.si = *(const int32_t *)vp;
		else
			x.s = elem_f(vp, 0, dt);
		ew_run(dt, &x, tile_base(dst) + r * tile_row_bytes(dst),
		       tile_base(src) + r * tile_row_bytes(src), NULL,
		       src->cols);
	}
	op.d.dtype = dt;
	op.d.vclass = vclass_of(dt);
	op.d.elems = tile_elems(dst);
	op.d.instr = tile_vec_repeats(src->rows, src->cols,
				      tile_dtype_size[dt], false);
	tile_op_access(&op, TP_MEM_UB, TP_DIR_READ, tile_bytes(src));
	tile_op_access(&op, TP_MEM_UB, TP_DIR_READ, tile_bytes(v));
	tile_op_access(&op, TP_MEM_UB, TP_DIR_WRITE, tile_bytes(dst));
	tile_op_end(&op);
	return 0;
}

int tp_vrowadd(const struct tp_tile *d, const struct tp_tile *s,
	       const struct tp_tile *v)
{
	return row_bcast("tp_vrowadd", TP_OP_VROWADD, EW_ADD, d, s, v);
}

int tp_vrowsub(const struct tp_tile *d, const struct tp_tile *s,
	       const struct tp_tile *v)
{
	return row_bcast("tp_vrowsub", TP_OP_VROWSUB, EW_SUB, d, s, v);
}

int tp_vrowmul(const struct tp_tile *d, const struct tp_tile *s,
	       const struct tp_tile *v)
{
	return row_bcast("tp_vrowmul", TP_OP_VROWMUL, EW_MUL, d, s, v);
}

int tp_vrowdiv(const struct tp_tile *d, const struct tp_tile *s,
	       const struct tp_tile *v)
{
	return row_bcast("tp_vrowdiv", TP_OP_VROWDIV, EW_DIV, d, s, v);
}
