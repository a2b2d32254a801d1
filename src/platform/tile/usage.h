/* SPDX-License-Identifier: MIT */
/*
 * platform/tile/usage.h — what a tile op did: the per-op usage delta and the
 * per-core cumulative usage record the simulated PMU counts from
 * (ARCHITECTURE.md §1 "The PMU counts real work"; issue 3 scope 3, issue 5
 * scope 2; the events they feed are spec/pmu.md §1).
 *
 * Everything here is exact and deterministic for a given op and shapes,
 * except cycles, which are measured. The definitions (docs/tile-api.md
 * "What each op records" has the full table):
 *
 * cycles   Wall time of the op (from after its context checks to the end
 *          of its data work, tp_now_ns()), converted to core cycles at
 *          TP_CORE_FREQ_HZ (1.8 GHz), rounded to nearest, at least 1. A
 *          scalar section counts its open time minus the time of the ops
 *          run inside it.
 *
 * instr    Instructions the op issued on its pipe:
 *          VEC    one per 256-byte repeat: for each contiguous run of
 *                 elements, ceil(run_elems × width / 256), width = the
 *                 widest element size among the op's operands. A run is
 *                 the whole tile when every operand is contiguous
 *                 (stride == cols, or one row), else one row; row
 *                 reductions and broadcast-row ops always run per row.
 *          CUBE   one per fractal: ceil(M/16) × ceil(N/16) × ceil(K/k0),
 *                 k0 = 32 bytes / input element size (16 for fp16/bf16,
 *                 8 for fp32, 32 for int8).
 *          MTE2, MTE3, FIXP  one per DMA burst: 1 when source and
 *                 destination are both contiguous, else one per row.
 *          MTE1   one per 512-byte fractal moved: ceil(bytes / 512).
 *          SCALAR one per scalar section, tp_get_value or tp_set_value.
 * elems    Elements the op processed, in its compute dtype: the tile
 *          dtype for moves and vector ops (the source dtype for casts and
 *          fixpipe), rows × cols of the result (of the input for row
 *          reductions); multiply-accumulates M × N × K for tp_mmad, in
 *          the input dtype; 1 for tp_get_value / tp_set_value; none for
 *          scalar sections (dtype TP_DTYPE_NONE).
 * bytes    Payload bytes (rows × cols × element size, strides excluded)
 *          read from / written to each memory, attributed to the pipe
 *          that accessed it.
 * reqs     Memory requests: per operand tile, ceil(bytes / TP_REQ_BYTES),
 *          summed over the operands on the same memory and direction.
 * vclass   Vector execution class of a VEC op (a2a3 ARITHMETIC events):
 *          FP32 / INT32 for 32-bit arithmetic, FP16_128LANE for 16-bit
 *          float arithmetic (fp16 and bf16) and fp16<->bf16 casts,
 *          FP16_64LANE for casts between a 16-bit float and fp32, MISC
 *          for dup, copy and the int32<->fp32 casts.
 */
#ifndef TASKPROF_PLATFORM_TILE_USAGE_H
#define TASKPROF_PLATFORM_TILE_USAGE_H

#include <stdint.h>

#include "taskprof/kernel.h"

/* Request granule of every memory path, in bytes (one 32-byte block). */
#define TP_REQ_BYTES 32u

/* Bytes per VEC repeat and per MTE1 fractal (see instr above). */
#define TP_VEC_REPEAT_BYTES 256u
#define TP_MTE1_FRACTAL_BYTES 512u

/* "No dtype" / "no vector class" in a delta (scalar sections, non-VEC). */
#define TP_DTYPE_NONE 0xffu
#define TP_VCLASS_NONE 0xffu

/** enum tp_pipe - the AICore pipes an op can keep busy. */
enum tp_pipe {
	TP_PIPE_VEC = 0, /* vector unit (AIV) */
	TP_PIPE_CUBE,    /* cube unit (AIC) */
	TP_PIPE_SCALAR,  /* scalar unit: scalar sections, get/set value */
	TP_PIPE_MTE1,    /* L1 -> L0A/L0B */
	TP_PIPE_MTE2,    /* GM -> UB/L1 */
	TP_PIPE_MTE3,    /* UB -> GM */
	TP_PIPE_FIXP,    /* fixpipe: L0C -> GM/UB (a5 pmu_fix_instr_busy) */
	TP_PIPE_COUNT
};

/** enum tp_dir - direction of a memory access. */
enum tp_dir {
	TP_DIR_READ = 0,
	TP_DIR_WRITE,
	TP_DIR_COUNT
};

/** enum tp_vclass - vector execution class (see the header comment). */
enum tp_vclass {
	TP_VCLASS_FP32 = 0,
	TP_VCLASS_FP16_128LANE,
	TP_VCLASS_FP16_64LANE,
	TP_VCLASS_INT32,
	TP_VCLASS_MISC,
	TP_VCLASS_COUNT
};

/** enum tp_op - which op a delta comes from. */
enum tp_op {
	TP_OP_COPY_IN = 0,
	TP_OP_COPY_OUT,
	TP_OP_LOAD_L0,
	TP_OP_MMAD,
	TP_OP_FIXPIPE,
	TP_OP_VADD,
	TP_OP_VSUB,
	TP_OP_VMUL,
	TP_OP_VDIV,
	TP_OP_VMAX,
	TP_OP_VMIN,
	TP_OP_VADDS,
	TP_OP_VMULS,
	TP_OP_VMAXS,
	TP_OP_VMINS,
	TP_OP_VEXP,
	TP_OP_VSQRT,
	TP_OP_VABS,
	TP_OP_VRELU,
	TP_OP_VDUP,
	TP_OP_VCOPY,
	TP_OP_VCAST,
	TP_OP_VROWMAX,
	TP_OP_VROWSUM,
	TP_OP_VROWADD,
	TP_OP_VROWSUB,
	TP_OP_VROWMUL,
	TP_OP_VROWDIV,
	TP_OP_SCALAR_SECTION,
	TP_OP_GET_VALUE,
	TP_OP_SET_VALUE,
	TP_OP_COUNT
};

/* At most four memory accesses per op (tp_mmad with accumulate). */
#define TP_USAGE_MAX_ACCESS 4

/**
 * struct tp_mem_access - one memory path an op used.
 * @mem:   enum tp_mem.
 * @dir:   enum tp_dir.
 * @bytes: payload bytes.
 * @reqs:  requests (ceil(bytes / TP_REQ_BYTES) per operand tile).
 */
struct tp_mem_access {
	uint8_t mem;
	uint8_t dir;
	uint64_t bytes;
	uint64_t reqs;
};

/* At most two GM regions per op (today one: tp_copy_in's source, or
 * tp_copy_out's / tp_fixpipe's destination). */
#define TP_USAGE_MAX_GM 2

/**
 * struct tp_gm_span - a GM tile an op read or wrote, for the L2 model
 * (platform/l2_model.h): @rows rows of @row_bytes bytes, @stride bytes
 * apart, from @base (a host address of device memory); @dir enum tp_dir.
 */
struct tp_gm_span {
	const void *base;
	uint64_t row_bytes;
	uint64_t stride;
	uint32_t rows;
	uint8_t dir;
};

/**
 * struct tp_usage_delta - exactly what one op did.
 * @op:       enum tp_op.
 * @pipe:     enum tp_pipe that executed it; every access below is
 *            attributed to this pipe.
 * @dtype:    compute dtype (enum tp_dtype) or TP_DTYPE_NONE.
 * @vclass:   enum tp_vclass for VEC ops, TP_VCLASS_NONE otherwise.
 * @n_access: entries used in @access.
 * @cycles:   busy cycles of @pipe, >= 1 (measured).
 * @instr:    instructions issued on @pipe.
 * @elems:    elements processed, in @dtype.
 * @access:   memory paths used; one entry per (mem, dir).
 * @n_gm:     entries used in @gm.
 * @gm:       the GM tiles behind the GM entries of @access.
 */
struct tp_usage_delta {
	uint8_t op;
	uint8_t pipe;
	uint8_t dtype;
	uint8_t vclass;
	uint32_t n_access;
	uint64_t cycles;
	uint64_t instr;
	uint64_t elems;
	struct tp_mem_access access[TP_USAGE_MAX_ACCESS];
	uint32_t n_gm;
	struct tp_gm_span gm[TP_USAGE_MAX_GM];
};

/**
 * struct tp_core_usage - one core's cumulative usage: the sum of every
 * delta since the last reset (tp_core_ctx_usage_reset()).
 * @ops:         ops per pipe.
 * @cycles:      busy cycles per pipe.
 * @instr:       instructions per pipe.
 * @instr_dtype: instructions per pipe and compute dtype (ops with a
 *               dtype; so for SCALAR it omits sections).
 * @vec_instr:   VEC instructions per vector class.
 * @elems:       elements per pipe and compute dtype.
 * @bytes:       payload bytes per requesting pipe, memory and direction.
 * @reqs:        requests per requesting pipe, memory and direction.
 */
struct tp_core_usage {
	uint64_t ops[TP_PIPE_COUNT];
	uint64_t cycles[TP_PIPE_COUNT];
	uint64_t instr[TP_PIPE_COUNT];
	uint64_t instr_dtype[TP_PIPE_COUNT][TP_DTYPE_COUNT];
	uint64_t vec_instr[TP_VCLASS_COUNT];
	uint64_t elems[TP_PIPE_COUNT][TP_DTYPE_COUNT];
	uint64_t bytes[TP_PIPE_COUNT][TP_MEM_COUNT][TP_DIR_COUNT];
	uint64_t reqs[TP_PIPE_COUNT][TP_MEM_COUNT][TP_DIR_COUNT];
};

/**
 * tp_usage_add() - add one op's delta to a usage record.
 *
 * Inline: it runs after every tile op.
 */
static inline void tp_usage_add(struct tp_core_usage *u,
				const struct tp_usage_delta *d)
{
	u->ops[d->pipe]++;
	u->cycles[d->pipe] += d->cycles;
	u->instr[d->pipe] += d->instr;
	if (d->dtype < TP_DTYPE_COUNT) {
		u->instr_dtype[d->pipe][d->dtype] += d->instr;
		u->elems[d->pipe][d->dtype] += d->elems;
	}
	if (d->vclass < TP_VCLASS_COUNT)
		u->vec_instr[d->vclass] += d->instr;
	for (uint32_t i = 0; i < d->n_access; i++) {
		const struct tp_mem_access *a = &d->access[i];
		u->bytes[d->pipe][a->mem][a->dir] += a->bytes;
		u->reqs[d->pipe][a->mem][a->dir] += a->reqs;
	}
}

/**
 * tp_usage_bytes() - bytes moved on (@mem, @dir) by all pipes together.
 */
static inline uint64_t tp_usage_bytes(const struct tp_core_usage *u,
				      enum tp_mem mem, enum tp_dir dir)
{
	uint64_t s = 0;
	for (int p = 0; p < TP_PIPE_COUNT; p++)
		s += u->bytes[p][mem][dir];
	return s;
}

/**
 * tp_usage_reqs() - requests on (@mem, @dir) by all pipes together.
 */
static inline uint64_t tp_usage_reqs(const struct tp_core_usage *u,
				     enum tp_mem mem, enum tp_dir dir)
{
	uint64_t s = 0;
	for (int p = 0; p < TP_PIPE_COUNT; p++)
		s += u->reqs[p][mem][dir];
	return s;
}

/**
 * tp_usage_delta_bytes() - bytes of one delta on (@mem, @dir), 0 if the
 * op did not use that path.
 */
static inline uint64_t tp_usage_delta_bytes(const struct tp_usage_delta *d,
					    enum tp_mem mem, enum tp_dir dir)
{
	for (uint32_t i = 0; i < d->n_access; i++)
		if (d->access[i].mem == mem && d->access[i].dir == dir)
			return d->access[i].bytes;
	return 0;
}

/**
 * tp_usage_delta_reqs() - requests of one delta on (@mem, @dir).
 */
static inline uint64_t tp_usage_delta_reqs(const struct tp_usage_delta *d,
					   enum tp_mem mem, enum tp_dir dir)
{
	for (uint32_t i = 0; i < d->n_access; i++)
		if (d->access[i].mem == mem && d->access[i].dir == dir)
			return d->access[i].reqs;
	return 0;
}

/** tp_pipe_name() - "VEC", "CUBE", "SCALAR", "MTE1", "MTE2", "MTE3",
 *  "FIXP" or "?". */
const char *tp_pipe_name(enum tp_pipe pipe);

/** tp_op_name() - the public function name of an op ("tp_vadd", ...;
 *  "tp_scalar_end" for a scalar section) or "?". */
const char *tp_op_name(enum tp_op op);

/** tp_vclass_name() - "fp32", "fp16_128lane", "fp16_64lane", "int32",
 *  "misc" or "?". */
const char *tp_vclass_name(enum tp_vclass vc);

#endif /* TASKPROF_PLATFORM_TILE_USAGE_H */
