/* SPDX-License-Identifier: MIT */
/*
 * examples/paged_attention/pa_golden.h — the paged-attention golden
 * (spec/runtime-model.md §5.5) and the output comparator (§4.4: allclose
 * with rtol = atol = 1e-3, §5.2).
 */
#ifndef TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_GOLDEN_H
#define TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_GOLDEN_H

#include <stdbool.h>
#include <stddef.h>

#include "examples/paged_attention/pa_inputs.h"

/**
 * pa_golden() - the expected out [B, H, D] of @in, in fp32.
 * @in:  generated inputs (only read; in->out is not touched).
 * @out: receives B·H·D floats.
 *
 * Batch-vectorised online softmax in fp32 over max_bn blocks, as §5.5:
 * for each block bn and sequence b, gather kj, vj through
 * block_table[b, bn]; sij = (qi · kjᵀ) · scale; positions >= valid are
 * -inf; mij = rowmax clamped at -1e30; pij = exp(sij - mij), masked
 * entries 0, rounded through bf16 (nearest even); lij = rowsum(pij);
 * oi_new = pij · vj; m' = max(mi, mij), α = exp(mi - m'),
 * β = exp(mij - m') (inactive sequences: α = 1, β = 0), li = α·li + β·lij,
 * oi = α·oi + β·oi_new; out = oi / li. The state starts at mi = -1e30,
 * li = 0, oi = 0. Dot products and sums run in fp32 in ascending index
 * order; bf16 inputs are widened exactly.
 *
 * Return: 0; -ENOMEM; -EINVAL when a block_table entry in use is outside
 * [0, T) (tp_last_error() names it).
 */
int pa_golden(const struct pa_inputs *in, float *out);

/**
 * struct pa_cmp - result of pa_compare().
 * @n:            elements compared.
 * @n_bad:        elements with |got - expected| > atol + rtol·|expected|
 *                (NaN on either side counts as bad; equal infinities are
 *                close, as torch.allclose says).
 * @pass:         n_bad == 0.
 * @worst:        index of the worst element: the largest
 *                |got - expected| / (atol + rtol·|expected|), a NaN or
 *                infinite difference being worst (first one wins ties).
 * @worst_expected, @worst_got: its two values.
 * @worst_ratio:  that ratio (> 1 means out of tolerance; inf for NaN).
 * @max_abs_diff: the largest |got - expected| over all elements (NaN
 *                differences excluded).
 */
struct pa_cmp {
	size_t n;
	size_t n_bad;
	bool pass;
	size_t worst;
	double worst_expected;
	double worst_got;
	double worst_ratio;
	double max_abs_diff;
};

/**
 * pa_compare() - compare @got against @expected, @n floats each, as
 * torch.allclose does (spec/runtime-model.md §4.4).
 * @expected: the golden values (pa_golden()).
 * @got:      the values to check.
 * @n:        floats at each.
 * @rtol: relative tolerance; @atol: absolute tolerance.
 * @r:    receives the details.
 *
 * Return: true when every element is within tolerance (r->pass).
 */
bool pa_compare(const float *expected, const float *got, size_t n,
		double rtol, double atol, struct pa_cmp *r);

/**
 * pa_cmp_format() - one line describing @r for an out of shape [B, H, D]
 * (@d): "golden pass: 256 elements, max |diff| 1.2e-07" or "golden FAIL:
 * 3 of 256 elements out of tolerance (rtol 0.001, atol 0.001); worst
 * out[0][4][7] (index 71): expected 0.125, got 0.5".
 *
 * @r:          the comparison.
 * @d:          the case's sizes, for the [b][h][d] index.
 * @rtol, @atol: the tolerances used.
 * @buf, @len:  receive the line (@len bytes, NUL-terminated).
 *
 * Return: snprintf's result: the line's length, which may be >= @len when
 * it was cut.
 */
int pa_cmp_format(const struct pa_cmp *r, const struct pa_dims *d,
		  double rtol, double atol, char *buf, size_t len);

#endif /* TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_GOLDEN_H */
