/* SPDX-License-Identifier: MIT */
/*
 * examples/paged_attention/pa_inputs.h — the paged-attention cases and
 * their inputs (spec/runtime-model.md §5.1, §5.2).
 *
 * A case is a row of parameters (pa_cases.c). Its inputs are the six
 * arguments of the orchestration signature [IN x 5, OUT] plus the scalar
 * scale, generated deterministically from a seed:
 *
 *     idx  name          shape                    dtype  content
 *     0    query         [B, H, D]                bf16   U(-0.5, 0.5)
 *     1    key_cache     [T, S, 1, D]             bf16   U(-0.5, 0.5)
 *     2    value_cache   [T, S, 1, D]             bf16   U(-1, 1)
 *     3    block_table   [B, max_model_len / S]   int32  randint[0, T)
 *     4    context_lens  [B]                      int32  context_len or the list
 *     5    out           [B, H, D]                fp32   zeros (the OUT)
 *          scale         scalar                   float  1.0
 *
 * with T = B x ceil(max(context_lens) / S).
 *
 * Determinism (a taskprof decision: the reference sets no RNG seed, §5.1):
 * every tensor draws from its own splitmix64 stream, seeded with
 * splitmix64(seed ^ tensor index), so one tensor's content depends only on
 * the seed and its own shape. U(lo, hi) is lo + (hi - lo) * u computed in
 * fp32 and then rounded to bf16 to nearest even (as torch's
 * rand(...).to(bfloat16)), with u = 24 bits x 2^-24: each draw gives two
 * elements, bits 63..40 then bits 39..16. randint[0, T) is (the draw's
 * top 32 bits x T) >> 32, one draw per entry. PA_DEFAULT_SEED is the seed every
 * taskprof run uses unless told otherwise.
 */
#ifndef TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_INPUTS_H
#define TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_INPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "taskprof/kernel.h"

#define PA_DEFAULT_SEED 20240531ull

/* §5.3: a head tile is at most 128 query rows. */
#define PA_MAX_Q_TILE 128u

/* RTOL = ATOL = 1e-3 for every paged-attention case (§5.2). */
#define PA_RTOL 1e-3
#define PA_ATOL 1e-3

/**
 * struct pa_case - one row of spec/runtime-model.md §5.2.
 * @name:            case name, as the reference spells it.
 * @manual:          the reference runs it only with --manual (§5.2).
 * @batch:           B.
 * @num_heads:       H (query heads).
 * @kv_head_num:     must be 1 (§5.1).
 * @head_dim:        D.
 * @block_size:      S, tokens per KV-cache block.
 * @context_len:     every sequence's length when @n_context_lens is 0.
 * @context_lens:    the context_lens_list, cycled / truncated to B.
 * @n_context_lens:  entries of @context_lens (0: use @context_len).
 * @max_model_len:   tokens; block_table has max_model_len / S columns.
 * @scale:           softmax scale.
 * @spec_tasks:      the task count the spec's table states.
 */
struct pa_case {
	const char *name;
	bool manual;
	uint32_t batch;
	uint32_t num_heads;
	uint32_t kv_head_num;
	uint32_t head_dim;
	uint32_t block_size;
	uint32_t context_len;
	const uint32_t *context_lens;
	uint32_t n_context_lens;
	uint32_t max_model_len;
	float scale;
	uint64_t spec_tasks;
};

/** pa_case_count() - number of built-in cases. */
size_t pa_case_count(void);

/** pa_case_at() - built-in case @i (0 <= i < pa_case_count()), or NULL
 *  for an @i out of range. */
const struct pa_case *pa_case_at(size_t i);

/** pa_case_find() - the built-in case named @name (exact, case-sensitive),
 *  or NULL when none is (or @name is NULL). */
const struct pa_case *pa_case_find(const char *name);

/** pa_case_default() - the case a run without --case uses (CaseSmall1). */
const struct pa_case *pa_case_default(void);

/**
 * pa_case_context_len() - context length of sequence @b of @c (§5.1).
 * @c: the case.
 * @b: the sequence index; the context_lens list is cycled past its end.
 *
 * Return: the length in tokens.
 */
uint32_t pa_case_context_len(const struct pa_case *c, uint32_t b);

/**
 * struct pa_dims - the derived sizes of a case (§5.1, §5.3).
 * @B, @H, @D, @S:   batch, heads, head_dim, block_size.
 * @max_blocks:      block_table columns: max_model_len / S.
 * @max_ctx:         max(context_lens), tokens.
 * @max_bn:          ceil(max_ctx / S): blocks of the longest sequence.
 * @T:               KV-cache blocks: B x max_bn.
 * @q_tile:          min(H, 128): query rows per task.
 * @q_loop:          H / q_tile head tiles per sequence.
 */
struct pa_dims {
	uint32_t B, H, D, S;
	uint32_t max_blocks;
	uint32_t max_ctx;
	uint32_t max_bn;
	uint32_t T;
	uint32_t q_tile;
	uint32_t q_loop;
};

/**
 * pa_case_dims() - check @c and derive its sizes (§5.1, §5.3).
 * @c: the case.
 * @d: receives the sizes.
 *
 * Return: 0; -EINVAL (with tp_last_error() naming the case and the field)
 * for a NULL @c or @d, when kv_head_num != 1, a size is 0, max_model_len is not a multiple of
 * S, a context length is 0 or above max_model_len, H is above 128 and not
 * a multiple of 128, or a tensor would exceed 2^31 elements.
 */
int pa_case_dims(const struct pa_case *c, struct pa_dims *d);

/**
 * pa_case_task_count() - tasks the §5.3 orchestration submits for @c:
 * per sequence b and head tile, one alloc_tensors task plus 4 per block
 * (QK, SF, PV, UP): sum over b of q_loop x (1 + 4 x ceil(ctx_b / S)).
 * @c: the case.
 *
 * Return: the task count; 0 when @c is invalid (pa_case_dims() fails, and
 * sets tp_last_error()).
 */
uint64_t pa_case_task_count(const struct pa_case *c);

/* Argument indices of the orchestration signature [IN x 5, OUT]. */
enum pa_arg {
	PA_ARG_QUERY = 0,
	PA_ARG_KEY_CACHE,
	PA_ARG_VALUE_CACHE,
	PA_ARG_BLOCK_TABLE,
	PA_ARG_CONTEXT_LENS,
	PA_ARG_OUT,
	PA_ARG_COUNT
};

/**
 * struct pa_tensor - one orchestration argument, as the harness declares it.
 * @name:   "query", "key_cache", ...
 * @data:   host memory of the tensor (contiguous, row-major).
 * @bytes:  its size in bytes (element size x the shape's product).
 * @dtype:  element type.
 * @ndims:  number of dimensions (1..4).
 * @shape:  sizes, outermost first.
 * @is_out: the signature's OUT (checked against the golden).
 */
struct pa_tensor {
	const char *name;
	void *data;
	size_t bytes;
	enum tp_dtype dtype;
	uint32_t ndims;
	uint32_t shape[4];
	bool is_out;
};

/**
 * struct pa_inputs - a case's generated arguments, in host memory.
 * @c:            the case.
 * @d:            its sizes.
 * @seed:         the seed they were generated from.
 * @query..@out:  the six tensors (see the table at the top).
 * @scale:        the scalar argument.
 *
 * Each tensor is its own 64-byte-aligned allocation.
 */
struct pa_inputs {
	const struct pa_case *c;
	struct pa_dims d;
	uint64_t seed;
	uint16_t *query;
	uint16_t *key_cache;
	uint16_t *value_cache;
	int32_t *block_table;
	int32_t *context_lens;
	float *out;
	float scale;
};

/**
 * pa_inputs_create() - allocate and generate the inputs of @c from @seed
 * (§5.1; the generation rules at the top of this file).
 * @c:    the case.
 * @seed: the generator's seed (PA_DEFAULT_SEED unless told otherwise).
 * @in:   receives the inputs; zeroed on failure.
 *
 * Return: 0; -EINVAL (bad case, see pa_case_dims()), -ENOMEM; with
 * tp_last_error() set.
 */
int pa_inputs_create(const struct pa_case *c, uint64_t seed,
		     struct pa_inputs *in);

/** pa_inputs_destroy() - free what pa_inputs_create() allocated and zero
 *  @in (NULL: no-op). */
void pa_inputs_destroy(struct pa_inputs *in);

/**
 * pa_inputs_tensor() - describe argument @idx (enum pa_arg) of @in.
 * @in:  inputs from pa_inputs_create().
 * @idx: the argument, PA_ARG_QUERY .. PA_ARG_OUT.
 * @t:   receives the description; zeroed on failure.
 *
 * Return: 0, or -EINVAL for an index out of range (tp_last_error() set).
 */
int pa_inputs_tensor(const struct pa_inputs *in, enum pa_arg idx,
		     struct pa_tensor *t);

/**
 * pa_inputs_hash() - FNV-1a 64 of the case sizes, the scale and the bytes
 * of all six tensors (out included), in argument order.
 * @in: inputs from pa_inputs_create().
 *
 * Return: the 64-bit hash.
 */
uint64_t pa_inputs_hash(const struct pa_inputs *in);

/**
 * pa_bf16_from_f32() - round a float to bf16 to nearest, ties to even
 * (NaN stays a quiet NaN). The golden's and the generator's rounding,
 * written apart from the tile API's on purpose.
 * @f: the value.
 *
 * Return: the bf16 bit pattern.
 */
static inline uint16_t pa_bf16_from_f32(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40u);
	uint32_t lsb = (u >> 16) & 1u;
	return (uint16_t)((u + 0x7fffu + lsb) >> 16);
}

/** pa_f32_from_bf16() - widen the bf16 bit pattern @h to float (exact). */
static inline float pa_f32_from_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

#endif /* TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_INPUTS_H */
