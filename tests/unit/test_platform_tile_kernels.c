/* SPDX-License-Identifier: MIT */
/* Whole kernels written with the tile API, against double-precision
 * references: a tiny masked softmax (AIV), a tiny bf16 matmul through
 * GM -> L1 -> L0A/L0B -> L0C -> GM (AIC), and the four paged-attention
 * kernels of spec/runtime-model.md §5.4 (QK and PV on AIC, SF and UP on
 * AIV) over a CaseSmall1-shaped problem and one Case1-shaped block, checked
 * at rtol = atol = 1e-3 (§5.2); plus what their usage records say per pipe
 * (the PMU acceptance of issue 5 relies on it). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "platform/tile/core_ctx.h"
#include "platform/tile/fp.h"
#include "platform/tile/usage.h"
#include "taskprof/kernel.h"

static struct tp_core_ctx aiv, aic;

static int setup(void **state)
{
	(void)state;
	if (tp_core_ctx_init(&aiv, 8, TP_CORE_AIV) ||
	    tp_core_ctx_init(&aic, 0, TP_CORE_AIC))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tp_core_ctx_bind(NULL);
	tp_core_ctx_fini(&aiv);
	tp_core_ctx_fini(&aic);
	return 0;
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

static uint32_t rng = 777u;
static float frand(float lo, float hi)
{
	rng = rng * 1664525u + 1013904223u;
	return lo + (hi - lo) * (float)(rng >> 8) / 16777216.0f;
}

/* A GM tensor of rows x cols, contiguous. */
static struct tp_tile gm(enum tp_dtype dt, uint32_t rows, uint32_t cols)
{
	size_t bytes = (size_t)rows * cols * tp_dtype_size(dt);
	void *p = calloc(1, bytes);
	assert_non_null(p);
	struct tp_tile t;
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, p, bytes, dt, rows, cols,
				      cols), 0);
	return t;
}

static float bf(const struct tp_tile *t, uint32_t r, uint32_t c)
{
	return tp_bf16_to_f32(*(const uint16_t *)tp_tile_at(t, r, c));
}

static float f32(const struct tp_tile *t, uint32_t r, uint32_t c)
{
	return *(const float *)tp_tile_at(t, r, c);
}

static void fill_bf16(const struct tp_tile *t, float lo, float hi)
{
	for (uint32_t r = 0; r < t->rows; r++)
		for (uint32_t c = 0; c < t->cols; c++)
			*(uint16_t *)tp_tile_at(t, r, c) =
				tp_f32_to_bf16(frand(lo, hi));
}

static bool close_enough(double got, double want, double rtol, double atol)
{
	return fabs(got - want) <= atol + rtol * fabs(want);
}

/* ---- the kernels (as a case would write them) ------------------------- */

/* Run a chain of tile calls; stop at the first failure. */
#define TRY(x)                                                                \
	do {                                                                  \
		int rc_ = (x);                                                \
		if (rc_)                                                      \
			return rc_;                                           \
	} while (0)

/* QK (func 0, AIC): sij[M, S] = qi[M, D] · kj[S, D]ᵀ, bf16 in, fp32 out. */
static int kernel_qk(const struct tp_tile *qi, const struct tp_tile *kj,
		     const struct tp_tile *sij)
{
	uint32_t M = qi->rows, D = qi->cols, S = kj->rows;
	struct tp_tile q1, k1, a, b, c;
	TRY(tp_local_tile(&q1, TP_MEM_L1, TP_BF16, M, D));
	TRY(tp_local_tile(&k1, TP_MEM_L1, TP_BF16, S, D));
	TRY(tp_local_tile(&a, TP_MEM_L0A, TP_BF16, M, D));
	TRY(tp_local_tile(&b, TP_MEM_L0B, TP_BF16, D, S));
	TRY(tp_local_tile(&c, TP_MEM_L0C, TP_FP32, M, S));
	TRY(tp_copy_in(&q1, qi));
	TRY(tp_copy_in(&k1, kj));
	TRY(tp_load_l0(&a, &q1, 0));
	TRY(tp_load_l0(&b, &k1, TP_LOAD_TRANSPOSE));
	TRY(tp_mmad(&c, &a, &b, 0));
	return tp_fixpipe(sij, &c);
}

/* SF (func 1, AIV): s = sij with columns >= valid at -inf, times scale;
 * mij = rowmax(s); pij = bf16(exp(s - mij)); lij = rowsum(float(pij)).
 * @sij_valid is the [M, valid] view of sij; @S the full tile width. */
static int kernel_sf(const struct tp_tile *sij_valid, uint32_t S, float scale,
		     const struct tp_tile *pij, const struct tp_tile *mij,
		     const struct tp_tile *lij)
{
	uint32_t M = sij_valid->rows, valid = sij_valid->cols;
	struct tp_tile s, sv, mask, m, p16, pf, l;
	TRY(tp_local_tile(&s, TP_MEM_UB, TP_FP32, M, S));
	TRY(tp_local_tile(&m, TP_MEM_UB, TP_FP32, M, 1));
	TRY(tp_local_tile(&l, TP_MEM_UB, TP_FP32, M, 1));
	TRY(tp_local_tile(&p16, TP_MEM_UB, TP_BF16, M, S));
	TRY(tp_local_tile(&pf, TP_MEM_UB, TP_FP32, M, S));
	TRY(tp_tile_view(&sv, &s, 0, 0, M, valid));
	TRY(tp_copy_in(&sv, sij_valid));
	if (valid < S) {
		TRY(tp_tile_view(&mask, &s, 0, valid, M, S - valid));
		TRY(tp_vdup(&mask, -INFINITY));
	}
	TRY(tp_vmuls(&s, &s, scale));
	TRY(tp_vrowmax(&m, &s));
	TRY(tp_vrowsub(&s, &s, &m));
	TRY(tp_vexp(&s, &s));
	TRY(tp_vcast(&p16, &s));
	TRY(tp_vcast(&pf, &p16));
	TRY(tp_vrowsum(&l, &pf));
	TRY(tp_copy_out(pij, &p16));
	TRY(tp_copy_out(mij, &m));
	return tp_copy_out(lij, &l);
}

/* PV (func 2, AIC): oi_new[M, D] = pij[M, S] · vj[S, D]. */
static int kernel_pv(const struct tp_tile *pij, const struct tp_tile *vj,
		     const struct tp_tile *oi_new)
{
	uint32_t M = pij->rows, S = pij->cols, D = vj->cols;
	struct tp_tile p1, v1, a, b, c;
	TRY(tp_local_tile(&p1, TP_MEM_L1, TP_BF16, M, S));
	TRY(tp_local_tile(&v1, TP_MEM_L1, TP_BF16, S, D));
	TRY(tp_local_tile(&a, TP_MEM_L0A, TP_BF16, M, S));
	TRY(tp_local_tile(&b, TP_MEM_L0B, TP_BF16, S, D));
	TRY(tp_local_tile(&c, TP_MEM_L0C, TP_FP32, M, D));
	TRY(tp_copy_in(&p1, pij));
	TRY(tp_copy_in(&v1, vj));
	TRY(tp_load_l0(&a, &p1, 0));
	TRY(tp_load_l0(&b, &v1, 0));
	TRY(tp_mmad(&c, &a, &b, 0));
	return tp_fixpipe(oi_new, &c);
}

/* UP (func 3, AIV): the online-softmax update; on the last block also
 * out = oi / li. mi, li are [M, 1] and oi, out [M, D], all fp32. */
static int kernel_up(const struct tp_tile *mij_g, const struct tp_tile *lij_g,
		     const struct tp_tile *oin_g, const struct tp_tile *mi_g,
		     const struct tp_tile *li_g, const struct tp_tile *oi_g,
		     const struct tp_tile *out_g, int is_first, int is_last)
{
	uint32_t M = oin_g->rows, D = oin_g->cols;
	struct tp_tile mij, lij, oin, mi, li, oi, mn, al, be, t;
	TRY(tp_local_tile(&mij, TP_MEM_UB, TP_FP32, M, 1));
	TRY(tp_local_tile(&lij, TP_MEM_UB, TP_FP32, M, 1));
	TRY(tp_local_tile(&oin, TP_MEM_UB, TP_FP32, M, D));
	TRY(tp_copy_in(&mij, mij_g));
	TRY(tp_copy_in(&lij, lij_g));
	TRY(tp_copy_in(&oin, oin_g));
	if (is_first) {
		mi = mij;
		li = lij;
		oi = oin;
	} else {
		TRY(tp_local_tile(&mi, TP_MEM_UB, TP_FP32, M, 1));
		TRY(tp_local_tile(&li, TP_MEM_UB, TP_FP32, M, 1));
		TRY(tp_local_tile(&oi, TP_MEM_UB, TP_FP32, M, D));
		TRY(tp_local_tile(&mn, TP_MEM_UB, TP_FP32, M, 1));
		TRY(tp_local_tile(&al, TP_MEM_UB, TP_FP32, M, 1));
		TRY(tp_local_tile(&be, TP_MEM_UB, TP_FP32, M, 1));
		TRY(tp_local_tile(&t, TP_MEM_UB, TP_FP32, M, 1));
		TRY(tp_copy_in(&mi, mi_g));
		TRY(tp_copy_in(&li, li_g));
		TRY(tp_copy_in(&oi, oi_g));
		TRY(tp_vmax(&mn, &mi, &mij));        /* m' = max(mi, mij) */
		TRY(tp_vsub(&al, &mi, &mn));
		TRY(tp_vexp(&al, &al));              /* α = exp(mi - m') */
		TRY(tp_vsub(&be, &mij, &mn));
		TRY(tp_vexp(&be, &be));              /* β = exp(mij - m') */
		TRY(tp_vmul(&li, &al, &li));
		TRY(tp_vmul(&t, &be, &lij));
		TRY(tp_vadd(&li, &li, &t));          /* li = α·li + β·lij */
		TRY(tp_vrowmul(&oi, &oi, &al));
		TRY(tp_vrowmul(&oin, &oin, &be));
		TRY(tp_vadd(&oi, &oi, &oin));        /* oi = α·oi + β·oi_new */
		TRY(tp_vcopy(&mi, &mn));
	}
	TRY(tp_copy_out(mi_g, &mi));
	TRY(tp_copy_out(li_g, &li));
	TRY(tp_copy_out(oi_g, &oi));
	if (is_last) {
		TRY(tp_vrowdiv(&oin, &oi, &li));
		TRY(tp_copy_out(out_g, &oin));
	}
	return 0;
}

/* ---- tiny softmax ------------------------------------------------------ */

static void test_tiny_softmax(void **state)
{
	(void)state;
	tp_core_ctx_bind(&aiv);
	enum { M = 16, S = 16, VALID = 11 };
	const float scale = 0.75f;
	struct tp_tile sij = gm(TP_FP32, M, S), sv;
	for (uint32_t r = 0; r < M; r++)
		for (uint32_t c = 0; c < S; c++)
			*(float *)tp_tile_at(&sij, r, c) = frand(-4, 4);
	assert_int_equal(tp_tile_view(&sv, &sij, 0, 0, M, VALID), 0);
	struct tp_tile pij = gm(TP_BF16, M, S), mij = gm(TP_FP32, M, 1),
		       lij = gm(TP_FP32, M, 1);
	tp_core_ctx_task_begin(&aiv);
	assert_int_equal(kernel_sf(&sv, S, scale, &pij, &mij, &lij), 0);
	assert_int_equal(tp_core_ctx_task_end(&aiv), 0);

	for (uint32_t r = 0; r < M; r++) {
		double m = -INFINITY, l = 0;
		for (uint32_t c = 0; c < VALID; c++)
			m = fmax(m, (double)f32(&sij, r, c) * scale);
		assert_true(close_enough(f32(&mij, r, 0), m, 1e-6, 1e-6));
		for (uint32_t c = 0; c < S; c++) {
			double p = c < VALID
					   ? exp((double)f32(&sij, r, c) * scale -
						 m)
					   : 0.0;
			/* bf16 keeps 8 significant bits: within 2^-8. */
			if (!close_enough(bf(&pij, r, c), p, 1.0 / 256, 0))
				fail_msg("p[%u][%u] = %g, expected %g", r, c,
					 bf(&pij, r, c), p);
			l += bf(&pij, r, c); /* the sum of the rounded values */
		}
		assert_true(close_enough(f32(&lij, r, 0), l, 1e-6, 1e-6));
		assert_true(bf(&pij, r, VALID) == 0.0f);
	}
	const struct tp_core_usage *u = tp_core_ctx_usage(&aiv);
	assert_int_equal(u->cycles[TP_PIPE_CUBE], 0);
	assert_true(u->cycles[TP_PIPE_VEC] > 0);
	/* GM traffic is exactly what the kernel moved. */
	assert_int_equal(tp_usage_bytes(u, TP_MEM_GM, TP_DIR_READ),
			 M * VALID * 4);
	assert_int_equal(tp_usage_bytes(u, TP_MEM_GM, TP_DIR_WRITE),
			 M * S * 2 + 2 * M * 4);
	free(sij.buf);
	free(pij.buf);
	free(mij.buf);
	free(lij.buf);
}

/* ---- tiny bf16 matmul ---------------------------------------------------- */

static void test_tiny_bf16_matmul(void **state)
{
	(void)state;
	tp_core_ctx_bind(&aic);
	enum { M = 16, K = 32, N = 24 };
	struct tp_tile A = gm(TP_BF16, M, K), B = gm(TP_BF16, N, K);
	struct tp_tile C = gm(TP_FP32, M, N);
	fill_bf16(&A, -1, 1);
	fill_bf16(&B, -1, 1);
	tp_core_ctx_task_begin(&aic);
	/* C = A · Bᵀ: the QK kernel is exactly that. */
	assert_int_equal(kernel_qk(&A, &B, &C), 0);
	assert_int_equal(tp_core_ctx_task_end(&aic), 0);
	double worst = 0;
	for (uint32_t i = 0; i < M; i++)
		for (uint32_t j = 0; j < N; j++) {
			double s = 0;
			for (uint32_t k = 0; k < K; k++)
				s += (double)bf(&A, i, k) * bf(&B, j, k);
			double e = fabs(f32(&C, i, j) - s);
			worst = e > worst ? e : worst;
			assert_true(close_enough(f32(&C, i, j), s, 1e-5, 1e-5));
		}
	print_message("bf16 matmul %dx%dx%d: worst |err| vs double %.3g\n", M,
		      K, N, worst);
	const struct tp_core_usage *u = tp_core_ctx_usage(&aic);
	assert_int_equal(u->cycles[TP_PIPE_VEC], 0);
	assert_true(u->cycles[TP_PIPE_CUBE] > 0 && u->cycles[TP_PIPE_MTE1] > 0 &&
		    u->cycles[TP_PIPE_MTE2] > 0 && u->cycles[TP_PIPE_FIXP] > 0);
	assert_int_equal(u->elems[TP_PIPE_CUBE][TP_BF16], M * K * N);
	assert_int_equal(tp_usage_bytes(u, TP_MEM_GM, TP_DIR_READ),
			 (M * K + N * K) * 2);
	assert_int_equal(tp_usage_bytes(u, TP_MEM_GM, TP_DIR_WRITE), M * N * 4);
	free(A.buf);
	free(B.buf);
	free(C.buf);
}

/* ---- paged attention ------------------------------------------------------ */

struct pa {
	uint32_t H, D, S, ctx_len, nblk;
	struct tp_tile q, kc, vc, out;
	int32_t *table;
	/* intermediates */
	struct tp_tile sij, pij, mij, lij, oin, mi, li, oi;
};

static void pa_init(struct pa *p, uint32_t H, uint32_t D, uint32_t S,
		    uint32_t ctx_len)
{
	memset(p, 0, sizeof(*p));
	p->H = H;
	p->D = D;
	p->S = S;
	p->ctx_len = ctx_len;
	p->nblk = (ctx_len + S - 1) / S;
	uint32_t T = p->nblk; /* B = 1 */
	p->q = gm(TP_BF16, H, D);
	p->kc = gm(TP_BF16, T * S, D);
	p->vc = gm(TP_BF16, T * S, D);
	p->out = gm(TP_FP32, H, D);
	fill_bf16(&p->q, -0.5f, 0.5f);
	fill_bf16(&p->kc, -0.5f, 0.5f);
	fill_bf16(&p->vc, -1, 1);
	p->table = calloc(p->nblk, sizeof(int32_t));
	for (uint32_t i = 0; i < p->nblk; i++) /* repeats allowed */
		p->table[i] = (int32_t)(frand(0, (float)T - 0.001f));
	p->sij = gm(TP_FP32, H, S);
	p->pij = gm(TP_BF16, H, S);
	p->mij = gm(TP_FP32, H, 1);
	p->lij = gm(TP_FP32, H, 1);
	p->oin = gm(TP_FP32, H, D);
	p->mi = gm(TP_FP32, H, 1);
	p->li = gm(TP_FP32, H, 1);
	p->oi = gm(TP_FP32, H, D);
}

static void pa_free(struct pa *p)
{
	struct tp_tile *t[] = { &p->q,   &p->kc,  &p->vc,  &p->out,
				&p->sij, &p->pij, &p->mij, &p->lij,
				&p->oin, &p->mi,  &p->li,  &p->oi };
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		free(t[i]->buf);
	free(p->table);
}

/* One block's four tasks, each on its core with its own task bracket; the
 * usage deltas of each task land in @use[func]. */
static void pa_block(struct pa *p, uint32_t bn, struct tp_core_usage use[4])
{
	uint32_t S = p->S, valid = p->ctx_len - bn * S;
	if (valid > S)
		valid = S;
	struct tp_tile kj, vj, sv;
	assert_int_equal(tp_tile_view(&kj, &p->kc, p->table[bn] * S, 0, S,
				      p->D), 0);
	assert_int_equal(tp_tile_view(&vj, &p->vc, p->table[bn] * S, 0, S,
				      p->D), 0);
	assert_int_equal(tp_tile_view(&sv, &p->sij, 0, 0, p->H, valid), 0);

	struct tp_core_ctx *core[4] = { &aic, &aiv, &aic, &aiv };
	for (int f = 0; f < 4; f++) {
		struct tp_core_ctx *c = core[f];
		tp_core_ctx_bind(c);
		tp_core_ctx_task_begin(c);
		tp_core_ctx_usage_reset(c);
		int rc;
		switch (f) {
		case 0: rc = kernel_qk(&p->q, &kj, &p->sij); break;
		case 1:
			rc = kernel_sf(&sv, S, 1.0f, &p->pij, &p->mij, &p->lij);
			break;
		case 2: rc = kernel_pv(&p->pij, &vj, &p->oin); break;
		default:
			rc = kernel_up(&p->mij, &p->lij, &p->oin, &p->mi,
				       &p->li, &p->oi, &p->out, bn == 0,
				       bn == p->nblk - 1);
			break;
		}
		if (rc || tp_core_ctx_task_end(c))
			fail_msg("block %u func %d: %s", bn, f,
				 tp_core_ctx_error_msg(c));
		const struct tp_core_usage *u = tp_core_ctx_usage(c);
		for (int q = 0; q < TP_PIPE_COUNT; q++)
			use[f].cycles[q] += u->cycles[q];
		for (int m = 0; m < TP_MEM_COUNT; m++)
			for (int d = 0; d < TP_DIR_COUNT; d++)
				use[f].bytes[0][m][d] +=
					tp_usage_bytes(u, (enum tp_mem)m,
						       (enum tp_dir)d);
	}
}

/* The §5.5 golden for one (b, q) tile, in double, pij through bf16. */
static void pa_golden(const struct pa *p, double *out)
{
	uint32_t H = p->H, D = p->D, S = p->S;
	double *mi = calloc(H, sizeof(double)), *li = calloc(H, sizeof(double));
	double *oi = calloc((size_t)H * D, sizeof(double));
	double *s = calloc(S, sizeof(double)), *pr = calloc(S, sizeof(double));
	for (uint32_t bn = 0; bn < p->nblk; bn++) {
		uint32_t valid = p->ctx_len - bn * S;
		valid = valid > S ? S : valid;
		uint32_t base = (uint32_t)p->table[bn] * S;
		for (uint32_t h = 0; h < H; h++) {
			double m = -1e30;
			for (uint32_t j = 0; j < S; j++) {
				s[j] = -INFINITY;
				if (j >= valid)
					continue;
				double acc = 0;
				for (uint32_t d = 0; d < D; d++)
					acc += (double)bf(&p->q, h, d) *
					       bf(&p->kc, base + j, d);
				s[j] = acc;
				m = fmax(m, acc);
			}
			double l = 0;
			for (uint32_t j = 0; j < S; j++) {
				pr[j] = j < valid ? tp_bf16_to_f32(tp_f32_to_bf16(
							    (float)exp(s[j] - m)))
						  : 0.0;
				l += pr[j];
			}
			double *o = oi + (size_t)h * D;
			double alpha = 1, beta = 1;
			if (bn == 0) {
				mi[h] = m;
				li[h] = l;
				for (uint32_t d = 0; d < D; d++)
					o[d] = 0;
			} else {
				double mn = fmax(mi[h], m);
				alpha = exp(mi[h] - mn);
				beta = exp(m - mn);
				li[h] = alpha * li[h] + beta * l;
				mi[h] = mn;
			}
			for (uint32_t d = 0; d < D; d++) {
				double pv = 0;
				for (uint32_t j = 0; j < valid; j++)
					pv += pr[j] * bf(&p->vc, base + j, d);
				o[d] = alpha * o[d] + beta * pv;
			}
		}
	}
	for (uint32_t h = 0; h < H; h++)
		for (uint32_t d = 0; d < D; d++)
			out[(size_t)h * D + d] = oi[(size_t)h * D + d] / li[h];
	free(mi);
	free(li);
	free(oi);
	free(s);
	free(pr);
}

static void pa_check(const struct pa *p)
{
	double *want = calloc((size_t)p->H * p->D, sizeof(double));
	pa_golden(p, want);
	double worst = 0;
	for (uint32_t h = 0; h < p->H; h++)
		for (uint32_t d = 0; d < p->D; d++) {
			double w = want[(size_t)h * p->D + d];
			double g = f32(&p->out, h, d);
			worst = fmax(worst, fabs(g - w));
			if (!close_enough(g, w, 1e-3, 1e-3))
				fail_msg("out[%u][%u] = %.6g, golden %.6g", h,
					 d, g, w);
		}
	print_message("paged attention H=%u D=%u S=%u ctx=%u (%u blocks): "
		      "worst |err| %.3g\n",
		      p->H, p->D, p->S, p->ctx_len, p->nblk, worst);
	free(want);
}

static void test_paged_attention_small(void **state)
{
	(void)state;
	struct pa p;
	pa_init(&p, 16, 16, 16, 33); /* CaseSmall1: 3 blocks, the last 1 row */
	struct tp_core_usage use[4];
	memset(use, 0, sizeof(use));
	for (uint32_t bn = 0; bn < p.nblk; bn++)
		pa_block(&p, bn, use);
	pa_check(&p);

	/* Per kernel: cube-only on AIC, vector-only on AIV; every kernel
	 * loads (MTE2); AIC kernels store through the fixpipe. */
	for (int f = 0; f < 4; f++) {
		bool cube = f == 0 || f == 2;
		assert_true(use[f].cycles[TP_PIPE_MTE2] > 0);
		if (cube) {
			assert_true(use[f].cycles[TP_PIPE_CUBE] > 0);
			assert_true(use[f].cycles[TP_PIPE_MTE1] > 0);
			assert_true(use[f].cycles[TP_PIPE_FIXP] > 0);
			assert_int_equal(use[f].cycles[TP_PIPE_VEC], 0);
			assert_int_equal(use[f].cycles[TP_PIPE_MTE3], 0);
		} else {
			assert_true(use[f].cycles[TP_PIPE_VEC] > 0);
			assert_true(use[f].cycles[TP_PIPE_MTE3] > 0);
			assert_int_equal(use[f].cycles[TP_PIPE_CUBE], 0);
			assert_int_equal(use[f].cycles[TP_PIPE_MTE1], 0);
			assert_int_equal(use[f].cycles[TP_PIPE_FIXP], 0);
		}
		assert_int_equal(use[f].cycles[TP_PIPE_SCALAR], 0);
	}
	/* Exact GM traffic of QK over 3 blocks: q and kj in, sij out. */
	assert_int_equal(use[0].bytes[0][TP_MEM_GM][TP_DIR_READ],
			 3 * (16 * 16 * 2 + 16 * 16 * 2));
	assert_int_equal(use[0].bytes[0][TP_MEM_GM][TP_DIR_WRITE],
			 3 * 16 * 16 * 4);
	/* SF reads only the valid columns: 16 + 16 + 1. */
	assert_int_equal(use[1].bytes[0][TP_MEM_GM][TP_DIR_READ],
			 16 * (16 + 16 + 1) * 4);
	pa_free(&p);
}

static void test_paged_attention_case1_block(void **state)
{
	(void)state;
	/* Case1's tile: q_tile 16, D 128, S 128; 4 blocks, a partial last. */
	struct pa p;
	pa_init(&p, 16, 128, 128, 3 * 128 + 77);
	struct tp_core_usage use[4];
	memset(use, 0, sizeof(use));
	uint64_t t0 = tp_now_ns();
	for (uint32_t bn = 0; bn < p.nblk; bn++)
		pa_block(&p, bn, use);
	uint64_t ns = tp_now_ns() - t0;
	pa_check(&p);
	print_message("Case1-shaped tasks: %.1f us per task (4 x %u tasks, "
		      "one thread, counting off)\n",
		      ns / 1e3 / (4.0 * p.nblk), p.nblk);
	/* The local memories hold Case1's tiles. */
	assert_true(use[0].cycles[TP_PIPE_CUBE] > 0);
	pa_free(&p);
}

/* A kernel that violates a bound: the op fails, the task's end reports
 * it, nothing else runs, and the next task starts clean. */
static void test_failing_kernel(void **state)
{
	(void)state;
	tp_core_ctx_bind(&aiv);
	struct tp_tile sij = gm(TP_FP32, 16, 16), sv;
	struct tp_tile pij = gm(TP_BF16, 16, 8); /* too narrow */
	struct tp_tile mij = gm(TP_FP32, 16, 1), lij = gm(TP_FP32, 16, 1);
	assert_int_equal(tp_tile_view(&sv, &sij, 0, 0, 16, 16), 0);
	tp_core_ctx_task_begin(&aiv);
	assert_int_equal(kernel_sf(&sv, 16, 1.0f, &pij, &mij, &lij), -EINVAL);
	assert_int_equal(tp_core_ctx_task_end(&aiv), -EINVAL);
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv),
			       "tp_copy_out: core 8: dst and src differ"));
	for (int i = 0; i < 16; i++)
		assert_true(*(float *)tp_tile_at(&mij, i, 0) == 0.0f);
	tp_core_ctx_task_begin(&aiv);
	assert_int_equal(tp_core_ctx_task_end(&aiv), 0);
	free(sij.buf);
	free(pij.buf);
	free(mij.buf);
	free(lij.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_tiny_softmax),
		T(test_tiny_bf16_matmul),
		T(test_paged_attention_small),
		T(test_paged_attention_case1_block),
		T(test_failing_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
