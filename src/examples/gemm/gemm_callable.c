/* SPDX-License-Identifier: MIT */
/*
 * examples/gemm/gemm_callable.c — `gemm` declared as a taskprof/case.h
 * callable: its cases, generator and golden (gemm_callable.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "examples/gemm/gemm_callable.h"
#include "platform/tile/fp.h"

#define GEMM_SEED 0x6e6d6d5eed5eedull

/* The buffers of one generated case (tp_case_args.priv). */
struct gemm_host {
	uint16_t *a, *b;
	float *c;
};

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi), rounded to bf16. */
static void fill_bf16(uint16_t *d, size_t n, float lo, float hi, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		float u = (float)(splitmix64(&seed) >> 40) * 0x1p-24f;
		d[i] = tp_f32_to_bf16(lo + (hi - lo) * u);
	}
}

void gemm_golden_ref(const uint16_t *a, const uint16_t *b, float *c, uint32_t M, uint32_t N,
		     uint32_t K)
{
	for (uint32_t i = 0; i < M; i++)
		for (uint32_t j = 0; j < N; j++) {
			double s = 0.0;
			for (uint32_t k = 0; k < K; k++) {
				/* bf16 → fp32 is exact: the top half of the bits. */
				uint32_t ua = (uint32_t)a[(size_t)i * K + k] << 16;
				uint32_t ub = (uint32_t)b[(size_t)k * N + j] << 16;
				float fa, fb;
				memcpy(&fa, &ua, sizeof(fa));
				memcpy(&fb, &ub, sizeof(fb));
				s += (double)fa * (double)fb;
			}
			c[(size_t)i * N + j] = (float)s;
		}
}

static void set_tensor(struct tp_case_tensor *t, const char *name, void *data,
		       enum tp_dtype dt, uint32_t r, uint32_t c, bool is_out)
{
	*t = (struct tp_case_tensor){
		.name = name, .data = data, .bytes = (size_t)r * c * tp_dtype_size(dt),
		.dtype = dt, .ndims = 2, .shape = { r, c }, .is_out = is_out,
	};
}

static void gemm_release(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	struct gemm_host *h = args->priv;
	if (h) {
		free(h->a);
		free(h->b);
		free(h->c);
		free(h);
	}
	args->priv = NULL;
}

static int gemm_generate(const struct tp_case *c, struct tp_case_args *args)
{
	const struct gemm_case *p = c->params;
	memset(args, 0, sizeof(*args));
	if (!p || !p->M || !p->N || !p->K)
		return tp_set_error(-EINVAL, "gemm: case '%s' has no shape", c->name);
	struct gemm_host *h = calloc(1, sizeof(*h));
	if (h) {
		h->a = malloc((size_t)p->M * p->K * sizeof(uint16_t));
		h->b = malloc((size_t)p->K * p->N * sizeof(uint16_t));
		h->c = malloc((size_t)p->M * p->N * sizeof(float));
	}
	args->priv = h;
	if (!h || !h->a || !h->b || !h->c) {
		gemm_release(c, args);
		return tp_set_error(-ENOMEM, "gemm: out of memory");
	}
	fill_bf16(h->a, (size_t)p->M * p->K, -0.5f, 0.5f, GEMM_SEED ^ 1);
	fill_bf16(h->b, (size_t)p->K * p->N, -1.0f, 1.0f, GEMM_SEED ^ 2);
	for (size_t i = 0; i < (size_t)p->M * p->N; i++)
		h->c[i] = GEMM_C_INIT;
	set_tensor(&args->tensors[GEMM_ARG_A], "a", h->a, TP_BF16, p->M, p->K, false);
	set_tensor(&args->tensors[GEMM_ARG_B], "b", h->b, TP_BF16, p->K, p->N, false);
	set_tensor(&args->tensors[GEMM_ARG_C], "c", h->c, TP_FP32, p->M, p->N, true);
	args->n_tensors = GEMM_ARG_COUNT;
	return 0;
}

static int gemm_golden(const struct tp_case *c, struct tp_case_args *e)
{
	const struct gemm_case *p = c->params;
	gemm_golden_ref(e->tensors[GEMM_ARG_A].data, e->tensors[GEMM_ARG_B].data,
			e->tensors[GEMM_ARG_C].data, p->M, p->N, p->K);
	return 0;
}

static const struct gemm_case gemm_small = { 128, 128, 128 };
static const struct gemm_case gemm_medium = { 512, 512, 256 };
static const struct gemm_case gemm_ragged = { 100, 72, 80 };

static const struct tp_case_kernel gemm_incores[GEMM_FUNC_COUNT] = {
	{ GEMM_FUNC_TILE, "GEMM_TILE", TP_CASE_AIC, gemm_kernel_tile },
};

#define GEMM_CASE(n, p)                                                        \
	{                                                                      \
		.name = n, .params = p, .rtol = GEMM_RTOL, .atol = GEMM_ATOL,  \
		.generate = gemm_generate, .golden = gemm_golden,              \
		.release = gemm_release,                                       \
	}

static const struct tp_case gemm_case_table[] = {
	GEMM_CASE("Small", &gemm_small),
	GEMM_CASE("Medium", &gemm_medium),
	GEMM_CASE("Ragged", &gemm_ragged),
};

const struct tp_callable gemm_callable = {
	.name = "gemm",
	.orch_name = "gemm_orchestration",
	.orch = gemm_orchestration,
	.kernels = gemm_incores,
	.n_kernels = GEMM_FUNC_COUNT,
	.cases = gemm_case_table,
	.n_cases = (int)(sizeof(gemm_case_table) / sizeof(gemm_case_table[0])),
	.default_case = "Small",
};
