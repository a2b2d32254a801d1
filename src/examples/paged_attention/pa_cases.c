/* SPDX-License-Identifier: MIT */
/*
 * examples/paged_attention/pa_cases.c — the cases of spec/runtime-model.md
 * §5.2 and the sizes derived from them (§5.1, §5.3).
 *
 * Platforms: the reference lists Case1 for hardware only and the small
 * cases for a2a3sim (Appendix A.9); taskprof runs them all on both
 * simulated platforms (issue 3 asks for Case1 on the simulator), so the
 * table keeps no platform column.
 */
#include <errno.h>
#include <string.h>

#include "base/error.h"
#include "examples/paged_attention/pa_inputs.h"

static const uint32_t varseq2_lens[] = { 33, 17 };
static const uint32_t varseq4_lens[] = { 33, 64, 128, 15 };

#define N_OF(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* §5.2; Case2 and Case3 (H = 64, manual, hardware-only in the reference)
 * are not built in: issue 3 asks for these five. */
static const struct pa_case cases[] = {
	{
		.name = "CaseSmall1",
		.batch = 1, .num_heads = 16, .kv_head_num = 1,
		.head_dim = 16, .block_size = 16, .context_len = 33,
		.max_model_len = 256, .scale = 1.0f,
		.spec_tasks = 13,
	},
	{
		.name = "CaseSmall2", .manual = true,
		.batch = 1, .num_heads = 16, .kv_head_num = 1,
		.head_dim = 16, .block_size = 16, .context_len = 128,
		.max_model_len = 256, .scale = 1.0f,
		.spec_tasks = 33,
	},
	{
		.name = "CaseVarSeq2", .manual = true,
		.batch = 2, .num_heads = 16, .kv_head_num = 1,
		.head_dim = 16, .block_size = 16, .context_len = 33,
		.context_lens = varseq2_lens,
		.n_context_lens = N_OF(varseq2_lens),
		.max_model_len = 256, .scale = 1.0f,
		.spec_tasks = 22,
	},
	{
		.name = "CaseVarSeq4", .manual = true,
		.batch = 4, .num_heads = 16, .kv_head_num = 1,
		.head_dim = 16, .block_size = 16, .context_len = 33,
		.context_lens = varseq4_lens,
		.n_context_lens = N_OF(varseq4_lens),
		.max_model_len = 256, .scale = 1.0f,
		.spec_tasks = 68,
	},
	{
		.name = "Case1",
		.batch = 256, .num_heads = 16, .kv_head_num = 1,
		.head_dim = 128, .block_size = 128, .context_len = 8192,
		.max_model_len = 32768, .scale = 1.0f,
		.spec_tasks = 65792,
	},
};

size_t pa_case_count(void)
{
	return sizeof(cases) / sizeof(cases[0]);
}

const struct pa_case *pa_case_at(size_t i)
{
	return i < pa_case_count() ? &cases[i] : NULL;
}

const struct pa_case *pa_case_find(const char *name)
{
	for (size_t i = 0; name && i < pa_case_count(); i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	return NULL;
}

const struct pa_case *pa_case_default(void)
{
	return &cases[0];
}

uint32_t pa_case_context_len(const struct pa_case *c, uint32_t b)
{
	/* §5.1: the list is cycled (B larger) or truncated (B smaller). */
	return c->n_context_lens ? c->context_lens[b % c->n_context_lens]
				 : c->context_len;
}

int pa_case_dims(const struct pa_case *c, struct pa_dims *d)
{
	if (!c || !d)
		return tp_set_error(-EINVAL, "paged_attention: no case");
	const char *n = c->name ? c->name : "?";
	if (c->kv_head_num != 1)
		return tp_set_error(-EINVAL,
				    "paged_attention %s: kv_head_num %u, "
				    "expected 1",
				    n, c->kv_head_num);
	if (!c->batch || !c->num_heads || !c->head_dim || !c->block_size ||
	    !c->max_model_len)
		return tp_set_error(-EINVAL,
				    "paged_attention %s: batch, num_heads, "
				    "head_dim, block_size and max_model_len "
				    "must be >= 1",
				    n);
	if (c->max_model_len % c->block_size)
		return tp_set_error(-EINVAL,
				    "paged_attention %s: max_model_len %u is "
				    "not a multiple of block_size %u",
				    n, c->max_model_len, c->block_size);
	uint32_t max_ctx = 0;
	for (uint32_t b = 0; b < c->batch; b++) {
		uint32_t ctx = pa_case_context_len(c, b);
		if (ctx == 0 || ctx > c->max_model_len)
			return tp_set_error(-EINVAL,
					    "paged_attention %s: context_lens[%u] "
					    "= %u, expected 1..max_model_len %u",
					    n, b, ctx, c->max_model_len);
		max_ctx = ctx > max_ctx ? ctx : max_ctx;
	}
	uint32_t q_tile = c->num_heads < PA_MAX_Q_TILE ? c->num_heads
						       : PA_MAX_Q_TILE;
	if (c->num_heads % q_tile)
		return tp_set_error(-EINVAL,
				    "paged_attention %s: num_heads %u is not "
				    "a multiple of the head tile %u",
				    n, c->num_heads, q_tile);
	uint32_t max_bn = (max_ctx + c->block_size - 1) / c->block_size;
	uint64_t T = (uint64_t)c->batch * max_bn;
	uint64_t kv = T * c->block_size * c->head_dim;
	uint64_t q = (uint64_t)c->batch * c->num_heads * c->head_dim;
	if (kv > INT32_MAX || q > INT32_MAX)
		return tp_set_error(-EINVAL,
				    "paged_attention %s: tensors of %llu "
				    "elements, at most 2^31 - 1 supported",
				    n, (unsigned long long)(kv > q ? kv : q));
	*d = (struct pa_dims){
		.B = c->batch,
		.H = c->num_heads,
		.D = c->head_dim,
		.S = c->block_size,
		.max_blocks = c->max_model_len / c->block_size,
		.max_ctx = max_ctx,
		.max_bn = max_bn,
		.T = (uint32_t)T,
		.q_tile = q_tile,
		.q_loop = c->num_heads / q_tile,
	};
	return 0;
}

uint64_t pa_case_task_count(const struct pa_case *c)
{
	struct pa_dims d;
	if (pa_case_dims(c, &d))
		return 0;
	uint64_t n = 0;
	for (uint32_t b = 0; b < d.B; b++) {
		uint64_t bn = (pa_case_context_len(c, b) + d.S - 1) / d.S;
		n += (uint64_t)d.q_loop * (1 + 4 * bn);
	}
	return n;
}
