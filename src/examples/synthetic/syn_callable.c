/* SPDX-License-Identifier: MIT */
/*
 * examples/synthetic/syn_callable.c — the synthetic graph declared as a
 * taskprof/case.h callable: its inputs (initial tensor values) and its
 * golden computed in plain C.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "examples/synthetic/syn_callable.h"

static const char *const syn_names[SYN_ARG_COUNT] = {
	"dummy", "pred", "spmd", "mix", "fanout", "chain", "async", "early", "alloc",
};

/* Initial values: the predicated task's output 7 (must stay), its flag 1
 * (the SET before it clears it), the chain's accumulator 1; the rest 0. */
#define SYN_PRED_SENTINEL 7
#define SYN_CHAIN_START 1

static int syn_generate(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	memset(args, 0, sizeof(*args));
	for (int i = 0; i < SYN_ARG_COUNT; i++) {
		const uint32_t n = syn_tensor_len((enum syn_arg)i);
		int32_t *d = calloc(n, sizeof(int32_t));
		if (!d) {
			for (int k = 0; k < i; k++)
				free(args->tensors[k].data);
			return tp_set_error(-ENOMEM, "synthetic: out of memory");
		}
		args->tensors[i] = (struct tp_case_tensor){
			.name = syn_names[i], .data = d, .bytes = n * sizeof(int32_t),
			.dtype = TP_INT32, .ndims = 1, .shape = { n }, .is_out = true,
		};
	}
	((int32_t *)args->tensors[SYN_ARG_PRED].data)[0] = 1;
	((int32_t *)args->tensors[SYN_ARG_PRED].data)[1] = SYN_PRED_SENTINEL;
	((int32_t *)args->tensors[SYN_ARG_CHAIN].data)[0] = SYN_CHAIN_START;
	args->n_tensors = SYN_ARG_COUNT;
	return 0;
}

static int syn_golden(const struct tp_case *c, struct tp_case_args *e)
{
	(void)c;
	int32_t *d = e->tensors[SYN_ARG_DUMMY].data;
	d[0] = 11;
	d[1] = 22;
	d[2] = 0;               /* the dummy never writes its join */
	d[3] = 11 + 22 + 0;

	int32_t *p = e->tensors[SYN_ARG_PRED].data;
	p[0] = 0;                 /* cleared by SET */
	p[1] = SYN_PRED_SENTINEL; /* predicate false: untouched */
	p[2] = SYN_PRED_SENTINEL + 3;

	int32_t *s = e->tensors[SYN_ARG_SPMD].data;
	for (uint32_t b = 0; b < SYN_SPMD_BLOCKS; b++) {
		s[b * SYN_SPMD_SLICE + 0] = (int32_t)b;
		s[b * SYN_SPMD_SLICE + 1] = (int32_t)(b * b);
		s[b * SYN_SPMD_SLICE + 2] = (int32_t)SYN_SPMD_BLOCKS;
		s[b * SYN_SPMD_SLICE + 3] = 1;
	}

	int32_t *m = e->tensors[SYN_ARG_MIX].data;
	int32_t sum = 0;
	for (int k = 0; k < 3; k++) {
		m[2 * k] = 1;
		m[2 * k + 1] = 101 * (k + 1);
		sum += m[2 * k] + m[2 * k + 1];
	}
	m[6] = sum;

	int32_t *f = e->tensors[SYN_ARG_FANOUT].data;
	f[0] = 12345;
	for (uint32_t i = 0; i < SYN_FANOUT; i++)
		f[1 + i] = (int32_t)(12345u + 7u * i);

	int32_t *ch = e->tensors[SYN_ARG_CHAIN].data;
	uint32_t v = SYN_CHAIN_START;
	for (uint32_t i = 0; i < SYN_CHAIN; i++) {
		v = v * 31u + i;
		ch[1 + i] = (int32_t)v;
	}
	ch[0] = (int32_t)v;

	int32_t *as = e->tensors[SYN_ARG_ASYNC].data;
	int32_t asum = 0;
	for (uint32_t i = 0; i < SYN_ASYNC_N; i++) {
		as[i] = as[SYN_ASYNC_N + i] = (int32_t)(500 + i);
		asum += as[i];
	}
	as[2 * SYN_ASYNC_N] = 1;         /* the DMA engine's one bump */
	as[2 * SYN_ASYNC_N + 1] = asum;  /* 2006 */

	int32_t *ea = e->tensors[SYN_ARG_EARLY].data;
	ea[0] = SYN_EARLY_VALUE;
	ea[1] = SYN_EARLY_VALUE + SYN_EARLY_ADD; /* 42 */

	int32_t *al = e->tensors[SYN_ARG_ALLOC].data;
	al[0] = SYN_ALLOC_VALUE + SYN_ALLOC_ADD; /* 35 */
	return 0;
}

static void syn_release(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	for (uint32_t i = 0; i < args->n_tensors; i++) {
		free(args->tensors[i].data);
		args->tensors[i].data = NULL;
	}
}

static const struct tp_case syn_cases[] = {
	{
		.name = "Default", .rtol = 0.0, .atol = 0.5, /* int32: exact */
		.generate = syn_generate, .golden = syn_golden, .release = syn_release,
	},
};

const struct tp_callable syn_callable = {
	.name = "synthetic",
	.orch_name = "synthetic_orchestration",
	.orch = syn_orchestration,
	.kernels = syn_kernels,
	.n_kernels = SYN_FUNC_COUNT,
	.cases = syn_cases,
	.n_cases = (int)(sizeof(syn_cases) / sizeof(syn_cases[0])),
	.default_case = "Default",
	.wants_early_dispatch = true, /* the "early" pair */
};
