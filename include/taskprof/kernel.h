/* SPDX-License-Identifier: MIT */
/*
 * taskprof/kernel.h — the tile API used inside kernels on the simulated
 * AICore (ARCHITECTURE.md §1 "The PMU counts real work", issue 3 scope 3).
 *
 * A kernel runs on one AICore thread: an AIC (cube) core or an AIV (vector)
 * core. It moves and computes data through the ops below; each op does the
 * real arithmetic on real memory and records what it did (measured busy
 * cycles of its pipe, instructions, bytes per memory path, elements per data
 * type) in the core's usage record, from which the simulated PMU produces
 * its counters. docs/tile-api.md describes the model and shows a kernel.
 *
 * Memories (per core; capacities are the TP_*_BYTES constants):
 *
 *     GM   device memory, shared, plain pointers              (all cores)
 *     UB   unified buffer, 192 KiB                             (AIV)
 *     L1   cube input buffer, 512 KiB                          (AIC)
 *     L0A  cube left operand,  64 KiB                          (AIC)
 *     L0B  cube right operand, 64 KiB                          (AIC)
 *     L0C  cube accumulator,  128 KiB                          (AIC)
 *
 * Data flow and the pipe that executes each op:
 *
 *     GM --tp_copy_in (MTE2)--> UB | L1
 *     UB --tp_copy_out (MTE3)--> GM
 *     L1 --tp_load_l0 (MTE1, optional transpose)--> L0A | L0B
 *     L0A x L0B --tp_mmad (CUBE)--> L0C
 *     L0C --tp_fixpipe (FIXP, optional cast)--> GM | UB
 *     UB --tp_v* (VEC)--> UB
 *     tp_scalar_begin .. tp_scalar_end, tp_get_value / tp_set_value (SCALAR)
 *
 * Tiles. A struct tp_tile is a 2-D row-major view (rows x cols elements,
 * consecutive rows @stride elements apart) of one buffer: a GM tensor, or a
 * block of a core's local memory from tp_local_alloc(). It is a small value
 * type that kernels keep on the stack, so its layout is public (unlike the
 * rest of taskprof's objects); build and narrow it only with
 * tp_tile_init() / tp_local_tile() / tp_tile_view(), which check it.
 *
 * Errors. Every op checks, before it touches memory: that a core context is
 * bound to the thread, that each tile lies inside its buffer (and a local
 * tile inside the bound core's memory of its kind, allocated since the last
 * tp_local_reset()), that memories, shapes and data types match the op.
 * On a violation it writes nothing, records a message naming the op and the
 * shapes (tp_last_error() on this thread, and the core's sticky error, which
 * the runtime reports with the task id and function name), and returns:
 *
 *     -ENODEV     no core context is bound to the calling thread
 *     -EINVAL     wrong memory kind, shape or data type for the op; bad
 *                 argument (unsupported dtype, zero size, bad flag)
 *     -EFAULT     a tile does not lie inside its buffer, or a local tile's
 *                 buffer is not this core's memory of that kind, or a GM
 *                 pointer is not aligned to its element size
 *     -ESTALE     a local tile allocated before the last tp_local_reset()
 *     -ENOMEM     a local allocation exceeds the memory's remaining capacity
 *     -ECANCELED  the core already has a sticky error from an earlier op
 *                 of this task; the op did nothing (the first error stays)
 *
 * Every op returns 0 on success. Operands may alias exactly (in-place
 * dst == src); partially overlapping operands give unspecified values but
 * never access memory outside the tiles.
 *
 * Numerics. fp16 and bf16 elements are widened to fp32 exactly, computed in
 * fp32 and rounded once to the destination type with round-to-nearest-even
 * (overflow to ±inf, NaN stays NaN, subnormals kept). Cube matmul
 * accumulates in fp32 (int32 for int8), over k in ascending order.
 * Row reductions add/compare left to right in fp32.
 */
#ifndef TASKPROF_KERNEL_H
#define TASKPROF_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Local memory capacities per core, in bytes (Ascend 910B-class AICore). */
#define TP_UB_BYTES (192u * 1024u)
#define TP_L1_BYTES (512u * 1024u)
#define TP_L0A_BYTES (64u * 1024u)
#define TP_L0B_BYTES (64u * 1024u)
#define TP_L0C_BYTES (128u * 1024u)

/* Alignment of every tp_local_alloc() block, in bytes (one UB block). */
#define TP_LOCAL_ALIGN 32u

/* Nominal AICore clock: measured op durations become cycles at this rate. */
#define TP_CORE_FREQ_HZ 1800000000ULL

/** enum tp_mem - where a tile's buffer lives. */
enum tp_mem {
	TP_MEM_GM = 0, /* device (global) memory */
	TP_MEM_UB,     /* vector unified buffer (AIV) */
	TP_MEM_L1,     /* cube L1 buffer (AIC) */
	TP_MEM_L0A,    /* cube left-operand buffer (AIC) */
	TP_MEM_L0B,    /* cube right-operand buffer (AIC) */
	TP_MEM_L0C,    /* cube accumulator buffer (AIC) */
	TP_MEM_COUNT
};

/** enum tp_dtype - element type of a tile. */
enum tp_dtype {
	TP_FP32 = 0, /* IEEE binary32 */
	TP_FP16,     /* IEEE binary16 */
	TP_BF16,     /* bfloat16: the upper 16 bits of a binary32 */
	TP_INT8,
	TP_INT32,
	TP_DTYPE_COUNT
};

/**
 * struct tp_tile - a rows x cols view of one buffer, row-major.
 * @buf:       first byte of the buffer the view lives in.
 * @buf_bytes: size of that buffer, in bytes; every element of the view
 *             lies in [buf, buf + buf_bytes).
 * @offset:    bytes from @buf to element (0, 0).
 * @rows:      number of rows, >= 1.
 * @cols:      elements per row, >= 1.
 * @stride:    elements from one row's start to the next, >= @cols.
 * @dtype:     enum tp_dtype.
 * @mem:       enum tp_mem.
 * @gen:       local memory generation the buffer was allocated in (0 for
 *             GM); tp_local_reset() makes older local tiles stale.
 *
 * Read the fields freely; change them only through the functions below.
 */
struct tp_tile {
	uint8_t *buf;
	size_t buf_bytes;
	size_t offset;
	uint32_t rows;
	uint32_t cols;
	uint32_t stride;
	uint8_t dtype;
	uint8_t mem;
	uint16_t reserved;
	uint32_t gen;
};

/**
 * tp_dtype_size() - bytes per element of @dt.
 *
 * Return: 4, 2, 2, 1 or 4; 0 for a value that is not a tp_dtype.
 */
size_t tp_dtype_size(enum tp_dtype dt);

/** tp_dtype_name() - "fp32", "fp16", "bf16", "int8", "int32" or "?". */
const char *tp_dtype_name(enum tp_dtype dt);

/** tp_mem_name() - "GM", "UB", "L1", "L0A", "L0B", "L0C" or "?". */
const char *tp_mem_name(enum tp_mem mem);

/**
 * tp_tile_at() - address of element (@row, @col) of @t.
 * @t:   a tile.
 * @row: row index, in elements.
 * @col: column index, in elements.
 *
 * Inline because kernels index tiles in their scalar code. No bounds check:
 * pass 0 <= @row < rows and 0 <= @col < cols of a tile made by the
 * functions below.
 *
 * Return: a pointer into @t's buffer, @t->offset bytes plus
 * (row * stride + col) elements past @t->buf.
 */
static inline void *tp_tile_at(const struct tp_tile *t, uint32_t row,
			       uint32_t col)
{
	static const uint8_t size[TP_DTYPE_COUNT] = { 4, 2, 2, 1, 4 };
	return t->buf + t->offset +
	       ((size_t)row * t->stride + col) * size[t->dtype];
}

/**
 * tp_tile_init() - make a tile over a buffer.
 * @t:         receives the tile; untouched on failure.
 * @mem:       where @buf lives.
 * @buf:       the buffer: a GM tensor, or a block returned by
 *             tp_local_alloc() on the bound core for memory @mem.
 * @buf_bytes: size of the buffer in bytes.
 * @dt:        element type.
 * @rows, @cols: shape, each >= 1.
 * @stride:    elements between row starts, >= @cols.
 *
 * The view starts at @buf. GM tiles need no bound core (the runtime builds
 * kernel arguments with this); local tiles do, and must lie inside that
 * core's memory of kind @mem.
 *
 * Return: 0; -EINVAL (bad mem, dtype, shape or stride, NULL @buf), -EFAULT
 * (the view does not fit in @buf_bytes, @buf not aligned to the element
 * size, a local buffer outside the bound core's memory), -ENODEV (local
 * @mem with no bound core). With a bound core a failure is also its sticky
 * error.
 */
int tp_tile_init(struct tp_tile *t, enum tp_mem mem, void *buf,
		 size_t buf_bytes, enum tp_dtype dt, uint32_t rows,
		 uint32_t cols, uint32_t stride);

/**
 * tp_tile_view() - a sub-rectangle of a tile.
 * @out:  receives the view (may be @t); untouched on failure.
 * @t:    the tile to narrow.
 * @row0, @col0: first row and column of the view, inside @t.
 * @rows, @cols: shape of the view, >= 1; row0 + rows <= t->rows and
 *        col0 + cols <= t->cols.
 *
 * The view shares @t's buffer, stride, dtype and memory.
 *
 * Return: 0, or -EINVAL when the rectangle is empty or leaves @t.
 */
int tp_tile_view(struct tp_tile *out, const struct tp_tile *t, uint32_t row0,
		 uint32_t col0, uint32_t rows, uint32_t cols);

/**
 * tp_local_alloc() - take @bytes of the bound core's local memory @mem.
 * @mem:   TP_MEM_UB, TP_MEM_L1, TP_MEM_L0A, TP_MEM_L0B or TP_MEM_L0C; the
 *         core must have it (AIV: UB; AIC: L1, L0A, L0B, L0C).
 * @bytes: >= 1; rounded up to TP_LOCAL_ALIGN.
 *
 * A bump allocator per memory: blocks are never freed one by one; the
 * runtime calls tp_local_reset() between tasks. Contents are not cleared.
 *
 * Return: a TP_LOCAL_ALIGN-aligned block, or NULL with the core's sticky
 * error set (-ENOMEM over capacity, -EINVAL bad @mem or @bytes, or the core
 * lacks @mem) or, without a bound core, tp_last_error() set (-ENODEV).
 */
void *tp_local_alloc(enum tp_mem mem, size_t bytes);

/**
 * tp_local_tile() - allocate a contiguous rows x cols local tile.
 * @t:   receives the tile (stride == cols); untouched on failure.
 * @mem: a local memory of the bound core.
 * @dt:  element type.
 * @rows, @cols: shape, each >= 1.
 *
 * Return: 0, or the errors of tp_local_alloc() / tp_tile_init().
 */
int tp_local_tile(struct tp_tile *t, enum tp_mem mem, enum tp_dtype dt,
		  uint32_t rows, uint32_t cols);

/**
 * tp_local_reset() - free every local block of the bound core.
 *
 * Tiles over the old blocks become stale: ops reject them with -ESTALE.
 * The runtime calls this before each task; kernels may call it too.
 *
 * Return: 0, or -ENODEV without a bound core.
 */
int tp_local_reset(void);

/* ---- data movement ---------------------------------------------------- */

/**
 * tp_copy_in() - GM -> UB or L1 copy (MTE2).
 * @dst: UB or L1 tile.
 * @src: GM tile of the same shape and dtype.
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_copy_in(const struct tp_tile *dst, const struct tp_tile *src);

/**
 * tp_copy_out() - UB -> GM copy (MTE3).
 * @dst: GM tile.
 * @src: UB tile of the same shape and dtype.
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_copy_out(const struct tp_tile *dst, const struct tp_tile *src);

/* tp_load_l0() flag: write the transpose of @src (dst is cols x rows). */
#define TP_LOAD_TRANSPOSE 0x1u

/**
 * tp_load_l0() - L1 -> L0A or L0B move (MTE1).
 * @dst:   L0A or L0B tile; the shape of @src, or its transpose with
 *         TP_LOAD_TRANSPOSE; same dtype.
 * @src:   L1 tile.
 * @flags: 0 or TP_LOAD_TRANSPOSE; any other bit is -EINVAL.
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_load_l0(const struct tp_tile *dst, const struct tp_tile *src,
	       unsigned flags);

/* tp_mmad() flag: C += A x B instead of C = A x B. */
#define TP_MMAD_ACCUMULATE 0x1u

/**
 * tp_mmad() - cube matrix multiply (CUBE).
 * @c:     L0C tile, M x N: fp32 for bf16/fp16/fp32 inputs, int32 for int8.
 * @a:     L0A tile, M x K.
 * @b:     L0B tile, K x N, same dtype as @a (bf16, fp16, fp32 or int8).
 * @flags: 0 or TP_MMAD_ACCUMULATE; any other bit is -EINVAL.
 *
 * c[i][j] (+)= sum over k ascending of a[i][k] * b[k][j], in fp32 (int32,
 * wrapping, for int8).
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_mmad(const struct tp_tile *c, const struct tp_tile *a,
	    const struct tp_tile *b, unsigned flags);

/**
 * tp_fixpipe() - L0C -> GM or UB move with optional cast (FIXP).
 * @dst: GM or UB tile, same shape; dtype fp32, fp16 or bf16 for an fp32
 *       @src (rounded to nearest even), int32 for an int32 @src.
 * @src: L0C tile.
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_fixpipe(const struct tp_tile *dst, const struct tp_tile *src);

/* ---- vector (UB only; fp32, fp16, bf16, and int32 where noted) -------- */

/*
 * tp_vadd() / tp_vsub() / tp_vmul() / tp_vdiv() / tp_vmax() / tp_vmin() -
 * elementwise dst = a op b (VEC); @dst, @a, @b UB tiles of the same shape
 * and dtype. add/sub/mul/max/min also take int32 (wrapping); div is float
 * only (-EINVAL for int32).
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_vadd(const struct tp_tile *dst, const struct tp_tile *a,
	    const struct tp_tile *b);
int tp_vsub(const struct tp_tile *dst, const struct tp_tile *a,
	    const struct tp_tile *b);
int tp_vmul(const struct tp_tile *dst, const struct tp_tile *a,
	    const struct tp_tile *b);
int tp_vdiv(const struct tp_tile *dst, const struct tp_tile *a,
	    const struct tp_tile *b);
int tp_vmax(const struct tp_tile *dst, const struct tp_tile *a,
	    const struct tp_tile *b);
int tp_vmin(const struct tp_tile *dst, const struct tp_tile *a,
	    const struct tp_tile *b);

/*
 * tp_vadds() / tp_vmuls() / tp_vmaxs() / tp_vmins() - elementwise
 * dst = src op s (VEC); @dst and @src UB tiles of the same shape and dtype.
 * @s is converted to the tile's dtype; for int32 tiles it must be an
 * integer in range.
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_vadds(const struct tp_tile *dst, const struct tp_tile *src, float s);
int tp_vmuls(const struct tp_tile *dst, const struct tp_tile *src, float s);
int tp_vmaxs(const struct tp_tile *dst, const struct tp_tile *src, float s);
int tp_vmins(const struct tp_tile *dst, const struct tp_tile *src, float s);

/*
 * tp_vexp() / tp_vsqrt() / tp_vabs() / tp_vrelu() - elementwise unary
 * dst = op(src) (VEC); @dst and @src UB tiles of the same shape and dtype.
 * exp and sqrt are float only; abs and relu also take int32.
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_vexp(const struct tp_tile *dst, const struct tp_tile *src);
int tp_vsqrt(const struct tp_tile *dst, const struct tp_tile *src);
int tp_vabs(const struct tp_tile *dst, const struct tp_tile *src);
int tp_vrelu(const struct tp_tile *dst, const struct tp_tile *src);

/**
 * tp_vdup() - fill @dst (a UB tile of any dtype) with @s converted to its
 * dtype (VEC).
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_vdup(const struct tp_tile *dst, float s);

/**
 * tp_vcopy() - UB -> UB copy (VEC).
 * @dst: UB tile.
 * @src: UB tile of the same shape and dtype (any dtype).
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_vcopy(const struct tp_tile *dst, const struct tp_tile *src);

/**
 * tp_vcast() - dst = src converted elementwise, same shape.
 *
 * Pairs: any of fp32, fp16, bf16 to another (round to nearest even,
 * overflow to ±inf, NaN stays NaN); int32 -> fp32 (nearest even);
 * fp32 -> int32 (nearest even, saturating, NaN -> 0). Both UB tiles; VEC.
 *
 * Return: 0; -EINVAL for a pair not listed; or another error of the list
 * at the top of this file.
 */
int tp_vcast(const struct tp_tile *dst, const struct tp_tile *src);

/*
 * tp_vrowmax() / tp_vrowsum() - row reductions (VEC): @dst is a rows x 1
 * UB tile, dst[i] = max / sum of @src row i (left to right, in fp32).
 * Same dtype; float only.
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_vrowmax(const struct tp_tile *dst, const struct tp_tile *src);
int tp_vrowsum(const struct tp_tile *dst, const struct tp_tile *src);

/*
 * tp_vrowadd() / tp_vrowsub() / tp_vrowmul() / tp_vrowdiv() - broadcast-row
 * ops (VEC): dst[i][j] = src[i][j] op v[i]; @v is rows x 1, @dst and @src
 * the same shape, all UB tiles of the same dtype. add/sub/mul also take
 * int32; div is float only.
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_vrowadd(const struct tp_tile *dst, const struct tp_tile *src,
	       const struct tp_tile *v);
int tp_vrowsub(const struct tp_tile *dst, const struct tp_tile *src,
	       const struct tp_tile *v);
int tp_vrowmul(const struct tp_tile *dst, const struct tp_tile *src,
	       const struct tp_tile *v);
int tp_vrowdiv(const struct tp_tile *dst, const struct tp_tile *src,
	       const struct tp_tile *v);

/* ---- scalar ------------------------------------------------------------ */

/**
 * tp_scalar_begin() - open a scalar section: the kernel's own C code until
 * tp_scalar_end() counts as SCALAR pipe busy time (minus the time of any
 * tile op run inside it). Sections do not nest.
 * @name: the section's name for `taskprof op`'s fine-grained scalar
 *        analysis (executions, cycles and share of the kernel's time per
 *        named section and block), a string with static storage; NULL
 *        for an unnamed section.
 *
 * Return: 0; -EINVAL if a section is already open; -ENODEV; -ECANCELED.
 */
int tp_scalar_begin(const char *name);

/**
 * tp_scalar_end() - close the open scalar section and account it.
 *
 * Return: 0; -EINVAL if no section is open; -ENODEV; -ECANCELED.
 */
int tp_scalar_end(void);

/**
 * tp_get_value() - scalar read of element (@row, @col) of a UB or L1 tile,
 * widened to float (int8/int32 converted). SCALAR pipe.
 * @t:   UB or L1 tile.
 * @row, @col: element index, inside @t (else -EINVAL).
 * @out: receives the value; untouched on failure.
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_get_value(const struct tp_tile *t, uint32_t row, uint32_t col,
		 float *out);

/**
 * tp_set_value() - scalar write of element (@row, @col) of a UB or L1 tile,
 * @v converted to its dtype as tp_vdup() does. SCALAR pipe.
 * @t:   UB or L1 tile.
 * @row, @col: element index, inside @t (else -EINVAL).
 * @v:   the value.
 *
 * Return: 0, or an error of the list at the top of this file.
 */
int tp_set_value(const struct tp_tile *t, uint32_t row, uint32_t col,
		 float v);

/* ---- custom instrumentation points ------------------------------------ */

/*
 * tp_mark() / tp_mark_range_begin() / tp_mark_range_end() - custom
 * instrumentation points (seed 003 §1.2 b, issue 6
 * scope 8). @id: the caller's number for the point, any value. Under `taskprof op` a
 * launch carries a hidden buffer (taskprof/rt_tool.h) and each call
 * appends one point — its system-counter time, kind and @id — to the
 * calling block's region; the report lists them per block in order and
 * trace.json draws marks as instants and ranges as slices. Otherwise the
 * call costs one predictable branch and does nothing. Like every tile op
 * they act on the core bound to the calling thread, so they take no core
 * argument. Ranges with the same id may follow each other but not nest.
 *
 * Return: 0; -ENODEV when no core context is bound to the thread.
 */
int tp_mark(uint32_t id);
int tp_mark_range_begin(uint32_t id);
int tp_mark_range_end(uint32_t id);

#ifdef __cplusplus
}
#endif

#endif /* TASKPROF_KERNEL_H */
