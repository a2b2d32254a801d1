/* SPDX-License-Identifier: MIT */
/*
 * examples/paged_attention/pa_inputs.c — deterministic generation of the
 * paged-attention arguments (spec/runtime-model.md §5.1).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "examples/paged_attention/pa_inputs.h"

/* splitmix64 (Steele, Lea, Flood 2014): one 64-bit state, full period,
 * good enough for test data and trivially reproducible anywhere. */
static inline uint64_t sm64_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The stream of tensor @idx: seeded apart from the other tensors. */
static uint64_t stream_seed(uint64_t seed, unsigned idx)
{
	uint64_t s = seed ^ ((uint64_t)idx * 0xd1b54a32d192ed03ull);
	return sm64_next(&s);
}

static void fill_uniform_bf16(uint16_t *dst, size_t n, float lo, float hi,
			      uint64_t state)
{
	/* Two elements per draw (bits 63..40, then 39..16): Case1 has half
	 * a billion of them. */
	for (size_t i = 0; i < n; i += 2) {
		uint64_t z = sm64_next(&state);
		float u0 = (float)(z >> 40) * 0x1p-24f;
		float u1 = (float)((z >> 16) & 0xffffffu) * 0x1p-24f;
		dst[i] = pa_bf16_from_f32(lo + (hi - lo) * u0);
		if (i + 1 < n)
			dst[i + 1] = pa_bf16_from_f32(lo + (hi - lo) * u1);
	}
}

static void *alloc_tensor(size_t bytes)
{
	/* 64-byte aligned, rounded up as aligned_alloc requires. */
	size_t sz = (bytes + 63) & ~(size_t)63;
	return aligned_alloc(64, sz ? sz : 64);
}

int pa_inputs_create(const struct pa_case *c, uint64_t seed,
		     struct pa_inputs *in)
{
	memset(in, 0, sizeof(*in));
	struct pa_dims d;
	int rc = pa_case_dims(c, &d);
	if (rc)
		return rc;
	size_t nq = (size_t)d.B * d.H * d.D;
	size_t nkv = (size_t)d.T * d.S * d.D;
	size_t nbt = (size_t)d.B * d.max_blocks;

	in->c = c;
	in->d = d;
	in->seed = seed;
	in->scale = c->scale;
	in->query = alloc_tensor(nq * 2);
	in->key_cache = alloc_tensor(nkv * 2);
	in->value_cache = alloc_tensor(nkv * 2);
	in->block_table = alloc_tensor(nbt * 4);
	in->context_lens = alloc_tensor((size_t)d.B * 4);
	in->out = alloc_tensor(nq * 4);
	if (!in->query || !in->key_cache || !in->value_cache ||
	    !in->block_table || !in->context_lens || !in->out) {
		pa_inputs_destroy(in);
		return tp_set_error(-ENOMEM,
				    "paged_attention %s: cannot allocate "
				    "%zu bytes of inputs",
				    c->name, nq * 6 + nkv * 4 + nbt * 4);
	}

	fill_uniform_bf16(in->query, nq, -0.5f, 0.5f,
			  stream_seed(seed, PA_ARG_QUERY));
	fill_uniform_bf16(in->key_cache, nkv, -0.5f, 0.5f,
			  stream_seed(seed, PA_ARG_KEY_CACHE));
	fill_uniform_bf16(in->value_cache, nkv, -1.0f, 1.0f,
			  stream_seed(seed, PA_ARG_VALUE_CACHE));
	uint64_t st = stream_seed(seed, PA_ARG_BLOCK_TABLE);
	for (size_t i = 0; i < nbt; i++) /* repeats allowed (§5.1) */
		in->block_table[i] =
			(int32_t)(((sm64_next(&st) >> 32) * d.T) >> 32);
	for (uint32_t b = 0; b < d.B; b++)
		in->context_lens[b] = (int32_t)pa_case_context_len(c, b);
	memset(in->out, 0, nq * 4);
	return 0;
}

void pa_inputs_destroy(struct pa_inputs *in)
{
	if (!in)
		return;
	free(in->query);
	free(in->key_cache);
	free(in->value_cache);
	free(in->block_table);
	free(in->context_lens);
	free(in->out);
	memset(in, 0, sizeof(*in));
}

int pa_inputs_tensor(const struct pa_inputs *in, enum pa_arg idx,
		     struct pa_tensor *t)
{
	const struct pa_dims *d = &in->d;
	memset(t, 0, sizeof(*t));
	switch (idx) {
	case PA_ARG_QUERY:
	case PA_ARG_OUT:
		*t = (struct pa_tensor){
			.name = idx == PA_ARG_OUT ? "out" : "query",
			.data = idx == PA_ARG_OUT ? (void *)in->out
						  : (void *)in->query,
			.dtype = idx == PA_ARG_OUT ? TP_FP32 : TP_BF16,
			.ndims = 3,
			.shape = { d->B, d->H, d->D },
			.is_out = idx == PA_ARG_OUT,
		};
		break;
	case PA_ARG_KEY_CACHE:
	case PA_ARG_VALUE_CACHE:
		*t = (struct pa_tensor){
			.name = idx == PA_ARG_KEY_CACHE ? "key_cache"
							: "value_cache",
			.data = idx == PA_ARG_KEY_CACHE ? in->key_cache
							: in->value_cache,
			.dtype = TP_BF16,
			.ndims = 4,
			.shape = { d->T, d->S, 1, d->D },
		};
		break;
	case PA_ARG_BLOCK_TABLE:
		*t = (struct pa_tensor){
			.name = "block_table",
			.data = in->block_table,
			.dtype = TP_INT32,
			.ndims = 2,
			.shape = { d->B, d->max_blocks },
		};
		break;
	case PA_ARG_CONTEXT_LENS:
		*t = (struct pa_tensor){
			.name = "context_lens",
			.data = in->context_lens,
			.dtype = TP_INT32,
			.ndims = 1,
			.shape = { d->B },
		};
		break;
	default:
		return tp_set_error(-EINVAL,
				    "paged_attention: argument index %d, "
				    "expected 0..%d",
				    (int)idx, PA_ARG_COUNT - 1);
	}
	size_t n = tp_dtype_size(t->dtype);
	for (uint32_t i = 0; i < t->ndims; i++)
		n *= t->shape[i];
	t->bytes = n;
	return 0;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint64_t pa_inputs_hash(const struct pa_inputs *in)
{
	uint64_t h = 0xcbf29ce484222325ull;
	h = fnv1a(h, &in->d, sizeof(in->d));
	h = fnv1a(h, &in->scale, sizeof(in->scale));
	for (int i = 0; i < PA_ARG_COUNT; i++) {
		struct pa_tensor t;
		if (pa_inputs_tensor(in, (enum pa_arg)i, &t) == 0)
			h = fnv1a(h, t.data, t.bytes);
	}
	return h;
}
