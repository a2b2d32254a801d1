/* SPDX-License-Identifier: MIT */
/*
 * examples/paged_attention/pa_golden.c — the §5.5 golden in plain C fp32,
 * and the allclose comparator.
 *
 * Written apart from the kernels on purpose: it reads the raw inputs
 * (block_table, context_lens) rather than the orchestration's views, walks
 * the blocks batch-vectorised as the reference golden does, and rounds
 * through bf16 with its own function (pa_bf16_from_f32), not the tile
 * API's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "examples/paged_attention/pa_golden.h"

/* §5.5: the row max is clamped here, so a fully masked row stays finite. */
#define PA_MIJ_FLOOR (-1e30f)

/* y[i] += a * x[i] for i < n. Eight lanes at a time through the
 * compiler's vector extension: still one multiply and one add per element
 * in the same order, so the result equals the scalar loop's; it only
 * makes Case1's golden a few times faster. memcpy keeps the loads and
 * stores free of alignment and aliasing assumptions. */
typedef float pa_v8f __attribute__((vector_size(32)));

static inline void axpy(float *y, float a, const float *x, uint32_t n)
{
	uint32_t i = 0;
	const pa_v8f av = { a, a, a, a, a, a, a, a };
	for (; i + 8 <= n; i += 8) {
		pa_v8f xv, yv;
		memcpy(&xv, x + i, sizeof(xv));
		memcpy(&yv, y + i, sizeof(yv));
		yv += av * xv;
		memcpy(y + i, &yv, sizeof(yv));
	}
	for (; i < n; i++)
		y[i] += a * x[i];
}

/* Per-(b, h) work of one block: scores, probabilities, the block's output.
 * kt is kj transposed (D x S) and vf is vj, both widened once per block,
 * so the inner loops run over contiguous fp32 and each s[j] still sums
 * over d, each o[k] over j, in ascending order. */
struct golden_scratch {
	float *kt; /* [D, S] */
	float *vf; /* [S, D]: vj widened */
	float *s;  /* [S] */
	float *p;  /* [S] */
	float *o;  /* [D] */
};

static void block_for_seq(const struct pa_inputs *in,
			  struct golden_scratch *w, uint32_t b, uint32_t bn,
			  uint32_t valid, float *mi, float *li, float *oi)
{
	const struct pa_dims *d = &in->d;
	const uint32_t H = d->H, D = d->D, S = d->S;
	const size_t blk = (size_t)in->block_table[(size_t)b * d->max_blocks +
						   bn];
	const uint16_t *kc = in->key_cache + blk * S * D;
	const uint16_t *vc = in->value_cache + blk * S * D;

	for (uint32_t j = 0; j < valid; j++)
		for (uint32_t k = 0; k < D; k++) {
			w->kt[(size_t)k * S + j] =
				pa_f32_from_bf16(kc[(size_t)j * D + k]);
			w->vf[(size_t)j * D + k] =
				pa_f32_from_bf16(vc[(size_t)j * D + k]);
		}

	for (uint32_t h = 0; h < H; h++) {
		const size_t row = (size_t)b * H + h;
		const uint16_t *q = in->query + row * D;
		float *s = w->s, *p = w->p, *o = w->o;

		/* sij = qi · kjᵀ · scale over the valid positions. */
		for (uint32_t j = 0; j < valid; j++)
			s[j] = 0.0f;
		for (uint32_t k = 0; k < D; k++)
			axpy(s, pa_f32_from_bf16(q[k]), w->kt + (size_t)k * S,
			     valid);
		float mij = -INFINITY;
		for (uint32_t j = 0; j < valid; j++) {
			s[j] *= in->scale;
			mij = s[j] > mij ? s[j] : mij;
		}
		mij = mij > PA_MIJ_FLOOR ? mij : PA_MIJ_FLOOR;

		/* pij through bf16; positions >= valid are exp(-inf) = 0 and
		 * add nothing to lij or oi_new. */
		float lij = 0.0f;
		for (uint32_t j = 0; j < valid; j++) {
			p[j] = pa_f32_from_bf16(
				pa_bf16_from_f32(expf(s[j] - mij)));
			lij += p[j];
		}
		for (uint32_t k = 0; k < D; k++)
			o[k] = 0.0f;
		for (uint32_t j = 0; j < valid; j++)
			axpy(o, p[j], w->vf + (size_t)j * D, D);

		/* Online update. */
		const float mn = mi[row] > mij ? mi[row] : mij;
		const float alpha = expf(mi[row] - mn);
		const float beta = expf(mij - mn);
		li[row] = alpha * li[row] + beta * lij;
		float *orow = oi + row * D;
		for (uint32_t k = 0; k < D; k++)
			orow[k] = alpha * orow[k] + beta * o[k];
		mi[row] = mn;
	}
}

int pa_golden(const struct pa_inputs *in, float *out)
{
	const struct pa_dims *d = &in->d;
	const size_t rows = (size_t)d->B * d->H;
	struct golden_scratch w = {
		.kt = malloc((size_t)d->D * d->S * sizeof(float)),
		.vf = malloc((size_t)d->S * d->D * sizeof(float)),
		.s = malloc((size_t)d->S * sizeof(float)),
		.p = malloc((size_t)d->S * sizeof(float)),
		.o = malloc((size_t)d->D * sizeof(float)),
	};
	float *mi = malloc(rows * sizeof(float));
	float *li = calloc(rows, sizeof(float));
	float *oi = calloc(rows * d->D, sizeof(float));
	int rc = 0;
	if (!w.kt || !w.vf || !w.s || !w.p || !w.o || !mi || !li || !oi) {
		rc = tp_set_error(-ENOMEM, "paged_attention golden: out of "
					   "memory");
		goto out;
	}
	for (size_t r = 0; r < rows; r++)
		mi[r] = PA_MIJ_FLOOR;

	for (uint32_t bn = 0; bn < d->max_bn; bn++) {
		for (uint32_t b = 0; b < d->B; b++) {
			const uint32_t ctx = (uint32_t)in->context_lens[b];
			/* Inactive: every position masked, α = 1, β = 0 —
			 * the state is unchanged, so skip the work. */
			if ((uint64_t)bn * d->S >= ctx)
				continue;
			const int32_t blk = in->block_table
				[(size_t)b * d->max_blocks + bn];
			if (blk < 0 || (uint32_t)blk >= d->T) {
				rc = tp_set_error(-EINVAL,
						  "paged_attention golden: "
						  "block_table[%u][%u] = %d, "
						  "expected 0..%u",
						  b, bn, blk, d->T - 1);
				goto out;
			}
			uint32_t valid = ctx - bn * d->S;
			valid = valid < d->S ? valid : d->S;
			block_for_seq(in, &w, b, bn, valid, mi, li, oi);
		}
	}
	for (size_t r = 0; r < rows; r++)
		for (uint32_t k = 0; k < d->D; k++)
			out[r * d->D + k] = oi[r * d->D + k] / li[r];
out:
	free(w.kt);
	free(w.vf);
	free(w.s);
	free(w.p);
	free(w.o);
	free(mi);
	free(li);
	free(oi);
	return rc;
}

bool pa_compare(const float *expected, const float *got, size_t n,
		double rtol, double atol, struct pa_cmp *r)
{
	*r = (struct pa_cmp){ .n = n, .worst_ratio = -1.0 };
	for (size_t i = 0; i < n; i++) {
		const double e = expected[i], g = got[i];
		double ratio, diff;
		if (e == g) { /* also equal infinities */
			ratio = 0.0;
			diff = 0.0;
		} else {
			diff = fabs(g - e); /* NaN or inf when either is */
			ratio = isnan(diff) || isinf(diff)
					? INFINITY
					: diff / (atol + rtol * fabs(e));
		}
		if (!(diff <= atol + rtol * fabs(e)))
			r->n_bad++;
		if (!isnan(diff) && diff > r->max_abs_diff)
			r->max_abs_diff = diff;
		if (ratio > r->worst_ratio) {
			r->worst_ratio = ratio;
			r->worst = i;
			r->worst_expected = e;
			r->worst_got = g;
		}
	}
	if (r->worst_ratio < 0)
		r->worst_ratio = 0;
	r->pass = r->n_bad == 0;
	return r->pass;
}

int pa_cmp_format(const struct pa_cmp *r, const struct pa_dims *d,
		  double rtol, double atol, char *buf, size_t len)
{
	const size_t i = r->worst;
	const unsigned k = (unsigned)(i % d->D);
	const unsigned h = (unsigned)(i / d->D % d->H);
	const unsigned b = (unsigned)(i / d->D / d->H);
	if (r->pass)
		return snprintf(buf, len,
				"golden pass: %zu elements, max |diff| %.3g "
				"(rtol %g, atol %g)",
				r->n, r->max_abs_diff, rtol, atol);
	return snprintf(buf, len,
			"golden FAIL: %zu of %zu elements out of tolerance "
			"(rtol %g, atol %g); worst out[%u][%u][%u] (index "
			"%zu): expected %.9g, got %.9g",
			r->n_bad, r->n, rtol, atol, b, h, k, i,
			r->worst_expected, r->worst_got);
}
