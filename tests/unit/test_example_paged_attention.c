/* SPDX-License-Identifier: MIT */
/* The paged-attention example without the runtime (spec/runtime-model.md
 * §5): the case table and task counts of §5.2, deterministic inputs
 * (§5.1), the four kernels run by the sequential reference orchestration
 * (§5.3) against the §5.5 golden at rtol = atol = 1e-3, the golden against
 * plain double-precision attention, the comparator's verdict and worst
 * element on a perturbed output, and kernel failures reported as the
 * runtime would see them. Case1 is only sized here (bench/
 * bench_paged_attention_seq runs it). */
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

#include "examples/paged_attention/pa_golden.h"
#include "examples/paged_attention/pa_inputs.h"
#include "examples/paged_attention/pa_kernels.h"
#include "examples/paged_attention/pa_seq.h"
#include "platform/tile/core_ctx.h"
#include "taskprof/taskprof.h"

static const struct pa_case *must_find(const char *name)
{
	const struct pa_case *c = pa_case_find(name);
	if (!c)
		fail_msg("case %s not found", name);
	return c;
}

/* ---- §5.2 table ----------------------------------------------------------- */

static void test_case_table(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		uint32_t B, H, D, S, max_model_len;
		uint32_t ctx[4];
		uint64_t tasks;
	} want[] = {
		{ "CaseSmall1", 1, 16, 16, 16, 256, { 33 }, 13 },
		{ "CaseSmall2", 1, 16, 16, 16, 256, { 128 }, 33 },
		{ "CaseVarSeq2", 2, 16, 16, 16, 256, { 33, 17 }, 22 },
		{ "CaseVarSeq4", 4, 16, 16, 16, 256, { 33, 64, 128, 15 }, 68 },
		{ "Case1", 256, 16, 128, 128, 32768, { 8192 }, 65792 },
	};
	assert_int_equal(pa_case_count(), 5);
	assert_ptr_equal(pa_case_default(), must_find("CaseSmall1"));
	assert_null(pa_case_find("NoSuchCase"));
	assert_null(pa_case_at(5));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct pa_case *c = must_find(want[i].name);
		assert_int_equal(c->batch, want[i].B);
		assert_int_equal(c->num_heads, want[i].H);
		assert_int_equal(c->kv_head_num, 1);
		assert_int_equal(c->head_dim, want[i].D);
		assert_int_equal(c->block_size, want[i].S);
		assert_int_equal(c->max_model_len, want[i].max_model_len);
		assert_true(c->scale == 1.0f);
		for (uint32_t b = 0; b < c->batch; b++) {
			uint32_t w = want[i].ctx[1] ? want[i].ctx[b % 4]
						    : want[i].ctx[0];
			assert_int_equal(pa_case_context_len(c, b), w);
		}
		/* The closed form of §5.3 gives the spec's column. */
		assert_int_equal(c->spec_tasks, want[i].tasks);
		assert_int_equal(pa_case_task_count(c), want[i].tasks);
	}

	/* Case1's sizes: 64 blocks per sequence, T = 256·64. */
	struct pa_dims d;
	assert_int_equal(pa_case_dims(must_find("Case1"), &d), 0);
	assert_int_equal(d.max_bn, 64);
	assert_int_equal(d.T, 16384);
	assert_int_equal(d.max_blocks, 256);
	assert_int_equal(d.q_tile, 16);
	assert_int_equal(d.q_loop, 1);
	print_message("Case1: %u x (1 + 4 x %u) = %llu tasks (spec: 65792)\n",
		      d.B, d.max_bn,
		      (unsigned long long)pa_case_task_count(
			      must_find("Case1")));

	/* Invalid cases are refused with a message. */
	struct pa_case bad = *must_find("CaseSmall1");
	bad.kv_head_num = 2;
	assert_int_equal(pa_case_dims(&bad, &d), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "kv_head_num"));
	bad = *must_find("CaseSmall1");
	bad.context_len = 0;
	assert_int_equal(pa_case_dims(&bad, &d), -EINVAL);
	assert_int_equal(pa_case_task_count(&bad), 0);
	bad = *must_find("CaseSmall1");
	bad.max_model_len = 250;
	assert_int_equal(pa_case_dims(&bad, &d), -EINVAL);
}

/* ---- §5.1 inputs ------------------------------------------------------------ */

static void test_inputs_deterministic(void **state)
{
	(void)state;
	const struct pa_case *c = must_find("CaseVarSeq4");
	struct pa_inputs a, b, o;
	assert_int_equal(pa_inputs_create(c, PA_DEFAULT_SEED, &a), 0);
	assert_int_equal(pa_inputs_create(c, PA_DEFAULT_SEED, &b), 0);
	assert_int_equal(pa_inputs_create(c, PA_DEFAULT_SEED + 1, &o), 0);
	uint64_t ha = pa_inputs_hash(&a), hb = pa_inputs_hash(&b);
	assert_true(ha == hb);
	assert_true(pa_inputs_hash(&o) != ha);
	print_message("CaseVarSeq4 inputs hash %016llx (twice), seed+1 "
		      "%016llx\n",
		      (unsigned long long)ha,
		      (unsigned long long)pa_inputs_hash(&o));

	/* Shapes and contents of §5.1. */
	const struct pa_dims *d = &a.d;
	assert_int_equal(d->max_ctx, 128);
	assert_int_equal(d->T, 4 * 8);
	static const int32_t lens[] = { 33, 64, 128, 15 };
	for (uint32_t i = 0; i < d->B; i++)
		assert_int_equal(a.context_lens[i], lens[i]);
	struct pa_tensor t;
	size_t nq = 0, nkv = 0;
	assert_int_equal(pa_inputs_tensor(&a, PA_ARG_QUERY, &t), 0);
	assert_string_equal(t.name, "query");
	assert_int_equal(t.bytes, 4 * 16 * 16 * 2);
	nq = t.bytes / 2;
	assert_int_equal(pa_inputs_tensor(&a, PA_ARG_KEY_CACHE, &t), 0);
	assert_int_equal(t.ndims, 4);
	assert_int_equal(t.shape[0], 32);
	assert_int_equal(t.shape[2], 1);
	nkv = t.bytes / 2;
	assert_int_equal(pa_inputs_tensor(&a, PA_ARG_BLOCK_TABLE, &t), 0);
	assert_int_equal(t.shape[1], 256 / 16);
	assert_int_equal(pa_inputs_tensor(&a, PA_ARG_OUT, &t), 0);
	assert_true(t.is_out && t.dtype == TP_FP32);
	assert_int_equal(pa_inputs_tensor(&a, PA_ARG_COUNT, &t), -EINVAL);

	float qlo = 1, qhi = -1, vlo = 1, vhi = -1;
	for (size_t i = 0; i < nq; i++) {
		float v = pa_f32_from_bf16(a.query[i]);
		qlo = fminf(qlo, v);
		qhi = fmaxf(qhi, v);
	}
	for (size_t i = 0; i < nkv; i++) {
		float v = pa_f32_from_bf16(a.value_cache[i]);
		float k = pa_f32_from_bf16(a.key_cache[i]);
		assert_true(k >= -0.5f && k <= 0.5f);
		vlo = fminf(vlo, v);
		vhi = fmaxf(vhi, v);
	}
	/* U(-0.5, 0.5) and U(-1, 1), rounded to bf16: bounded and spread. */
	assert_true(qlo >= -0.5f && qlo < -0.4f && qhi <= 0.5f && qhi > 0.4f);
	assert_true(vlo >= -1.0f && vlo < -0.9f && vhi <= 1.0f && vhi > 0.9f);
	for (uint32_t i = 0; i < d->B * d->max_blocks; i++)
		assert_true(a.block_table[i] >= 0 &&
			    (uint32_t)a.block_table[i] < d->T);
	for (uint32_t i = 0; i < nq; i++)
		assert_true(a.out[i] == 0.0f);
	pa_inputs_destroy(&a);
	pa_inputs_destroy(&b);
	pa_inputs_destroy(&o);
}

/* ---- the whole pipeline ------------------------------------------------------ */

/* Plain attention in double over the whole context, no bf16 rounding of
 * p: the golden must agree with it to bf16-of-p accuracy. */
static void attention_double(const struct pa_inputs *in, double *out)
{
	const struct pa_dims *d = &in->d;
	double *s = calloc(d->max_ctx, sizeof(double));
	for (uint32_t b = 0; b < d->B; b++) {
		uint32_t ctx = (uint32_t)in->context_lens[b];
		for (uint32_t h = 0; h < d->H; h++) {
			const uint16_t *q =
				in->query + ((size_t)b * d->H + h) * d->D;
			double m = -INFINITY, l = 0;
			for (uint32_t t = 0; t < ctx; t++) {
				size_t blk = (size_t)in->block_table
					[(size_t)b * d->max_blocks + t / d->S];
				const uint16_t *k =
					in->key_cache +
					(blk * d->S + t % d->S) * d->D;
				double acc = 0;
				for (uint32_t x = 0; x < d->D; x++)
					acc += (double)pa_f32_from_bf16(q[x]) *
					       pa_f32_from_bf16(k[x]);
				s[t] = acc * in->scale;
				m = fmax(m, s[t]);
			}
			double *o = out + ((size_t)b * d->H + h) * d->D;
			for (uint32_t x = 0; x < d->D; x++)
				o[x] = 0;
			for (uint32_t t = 0; t < ctx; t++) {
				size_t blk = (size_t)in->block_table
					[(size_t)b * d->max_blocks + t / d->S];
				const uint16_t *v =
					in->value_cache +
					(blk * d->S + t % d->S) * d->D;
				double p = exp(s[t] - m);
				l += p;
				for (uint32_t x = 0; x < d->D; x++)
					o[x] += p * pa_f32_from_bf16(v[x]);
			}
			for (uint32_t x = 0; x < d->D; x++)
				o[x] /= l;
		}
	}
	free(s);
}

static void run_case(const char *name)
{
	const struct pa_case *c = must_find(name);
	struct pa_inputs in;
	assert_int_equal(pa_inputs_create(c, PA_DEFAULT_SEED, &in), 0);
	const size_t n = (size_t)in.d.B * in.d.H * in.d.D;

	struct pa_seq_stats st;
	if (pa_seq_run(&in, &st) != 0)
		fail_msg("%s: %s", name, tp_last_error());
	/* The sequential orchestration submits what §5.2 / §5.3 count. */
	assert_int_equal(st.tasks, c->spec_tasks);
	assert_int_equal(st.tasks, pa_case_task_count(c));
	assert_int_equal(st.alloc_tasks, in.d.B * in.d.q_loop);
	uint64_t blocks = (st.tasks - st.alloc_tasks) / 4;
	for (int f = 0; f < PA_FUNC_COUNT; f++)
		assert_int_equal(st.by_func[f], blocks);

	float *want = malloc(n * sizeof(float));
	assert_int_equal(pa_golden(&in, want), 0);
	struct pa_cmp r;
	char line[512];
	bool ok = pa_compare(want, in.out, n, PA_RTOL, PA_ATOL, &r);
	pa_cmp_format(&r, &in.d, PA_RTOL, PA_ATOL, line, sizeof(line));
	if (!ok)
		fail_msg("%s: %s", name, line);

	/* The golden is attention: within bf16-of-p error of exact. */
	double *exact = malloc(n * sizeof(double));
	attention_double(&in, exact);
	double worst = 0;
	for (size_t i = 0; i < n; i++)
		worst = fmax(worst, fabs(want[i] - exact[i]));
	assert_true(worst < 1e-2);
	print_message("%s: %llu tasks (%llu alloc + 4 x %llu blocks), %s; "
		      "golden vs double attention %.3g\n",
		      name, (unsigned long long)st.tasks,
		      (unsigned long long)st.alloc_tasks,
		      (unsigned long long)blocks, line, worst);
	free(exact);
	free(want);
	pa_inputs_destroy(&in);
}

static void test_seq_small1(void **state)
{
	(void)state;
	run_case("CaseSmall1");
}

static void test_seq_small2(void **state)
{
	(void)state;
	run_case("CaseSmall2");
}

static void test_seq_varseq2(void **state)
{
	(void)state;
	run_case("CaseVarSeq2");
}

static void test_seq_varseq4(void **state)
{
	(void)state;
	run_case("CaseVarSeq4");
}

/* ---- the comparator ------------------------------------------------------------ */

static void test_perturbed_output_fails(void **state)
{
	(void)state;
	const struct pa_case *c = must_find("CaseSmall1");
	struct pa_inputs in;
	assert_int_equal(pa_inputs_create(c, PA_DEFAULT_SEED, &in), 0);
	assert_int_equal(pa_seq_run(&in, NULL), 0);
	const size_t n = (size_t)in.d.B * in.d.H * in.d.D;
	float *want = malloc(n * sizeof(float));
	assert_int_equal(pa_golden(&in, want), 0);
	struct pa_cmp r;
	char line[512];
	assert_true(pa_compare(want, in.out, n, PA_RTOL, PA_ATOL, &r));

	/* Within tolerance: still a pass. */
	const size_t small = 5, big = 71, other = 200; /* 71 = [0][4][7] */
	in.out[small] += 0.5e-3f;
	assert_true(pa_compare(want, in.out, n, PA_RTOL, PA_ATOL, &r));

	/* Two elements out: the larger excess is the worst. */
	in.out[big] += 0.25f;
	in.out[other] -= 0.01f;
	assert_false(pa_compare(want, in.out, n, PA_RTOL, PA_ATOL, &r));
	assert_int_equal(r.n_bad, 2);
	assert_int_equal(r.worst, big);
	assert_true(r.worst_expected == want[big]);
	assert_true(r.worst_got == in.out[big]);
	assert_true(r.worst_ratio > 1);
	pa_cmp_format(&r, &in.d, PA_RTOL, PA_ATOL, line, sizeof(line));
	print_message("%s\n", line);
	assert_non_null(strstr(line, "golden FAIL: 2 of 256"));
	assert_non_null(strstr(line, "worst out[0][4][7] (index 71)"));
	char exp_s[64];
	snprintf(exp_s, sizeof(exp_s), "expected %.9g, got %.9g",
		 (double)want[big], (double)in.out[big]);
	assert_non_null(strstr(line, exp_s));

	/* A NaN is worse than any finite difference. */
	in.out[other] = NAN;
	assert_false(pa_compare(want, in.out, n, PA_RTOL, PA_ATOL, &r));
	assert_int_equal(r.worst, other);
	assert_true(isnan(r.worst_got));
	assert_true(isinf(r.worst_ratio));
	/* Equal infinities are close (torch.allclose). */
	float inf_e = INFINITY, inf_g = INFINITY;
	assert_true(pa_compare(&inf_e, &inf_g, 1, PA_RTOL, PA_ATOL, &r));
	free(want);
	pa_inputs_destroy(&in);
}

/* ---- failures ------------------------------------------------------------------- */

/* A kernel given a wrong shape fails its task the way the runtime sees it:
 * the core's sticky error after tp_core_ctx_task_end(). */
static void test_kernel_failure(void **state)
{
	(void)state;
	struct tp_core_ctx aiv;
	assert_int_equal(tp_core_ctx_init(&aiv, 9, TP_CORE_AIV), 0);
	static float sij[16 * 16], mij[16], lij[16];
	static uint16_t pij[16 * 8];
	struct tp_tile ts, tsv, tp, tm, tl;
	assert_int_equal(tp_tile_init(&ts, TP_MEM_GM, sij, sizeof(sij),
				      TP_FP32, 16, 16, 16), 0);
	assert_int_equal(tp_tile_view(&tsv, &ts, 0, 0, 16, 16), 0);
	/* pij is 8 wide, narrower than the 16 valid columns. */
	assert_int_equal(tp_tile_init(&tp, TP_MEM_GM, pij, sizeof(pij),
				      TP_BF16, 16, 8, 8), 0);
	assert_int_equal(tp_tile_init(&tm, TP_MEM_GM, mij, sizeof(mij),
				      TP_FP32, 16, 1, 1), 0);
	assert_int_equal(tp_tile_init(&tl, TP_MEM_GM, lij, sizeof(lij),
				      TP_FP32, 16, 1, 1), 0);
	int64_t args[PA_SF_NARGS] = {
		pa_arg_tile(&tsv), pa_arg_tile(&tp), pa_arg_tile(&tm),
		pa_arg_tile(&tl),  pa_arg_f32(1.0f),
	};
	tp_core_ctx_bind(&aiv);
	tp_core_ctx_task_begin(&aiv);
	pa_kernels[PA_FUNC_SF].fn(args);
	assert_int_equal(tp_core_ctx_task_end(&aiv), -EINVAL);
	print_message("SF with pij [16x8]: %s\n", tp_core_ctx_error_msg(&aiv));
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv), "tp_tile_view"));
	for (int i = 0; i < 16; i++)
		assert_true(mij[i] == 0.0f && lij[i] == 0.0f);
	tp_core_ctx_bind(NULL);
	tp_core_ctx_fini(&aiv);

	/* The sequential run names a bad block_table entry. */
	struct pa_inputs in;
	assert_int_equal(pa_inputs_create(must_find("CaseSmall1"),
					  PA_DEFAULT_SEED, &in),
			 0);
	in.block_table[1] = (int32_t)in.d.T;
	assert_int_equal(pa_seq_run(&in, NULL), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "block_table[0][1]"));
	float gold[16 * 16];
	assert_int_equal(pa_golden(&in, gold), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "block_table[0][1]"));
	pa_inputs_destroy(&in);

	/* The kernel table: func ids, names, core types, arg counts. */
	static const char *names[] = { "QK", "SF", "PV", "UP" };
	for (int f = 0; f < PA_FUNC_COUNT; f++) {
		assert_int_equal(pa_kernels[f].func_id, f);
		assert_string_equal(pa_kernels[f].name, names[f]);
		assert_int_equal(pa_kernels[f].core_type,
				 f % 2 ? TP_CORE_AIV : TP_CORE_AIC);
	}
	assert_int_equal(pa_kernels[PA_FUNC_UP].n_tensors, 7);
	assert_int_equal(pa_kernels[PA_FUNC_UP].n_scalars, 2);
	assert_int_equal(pa_kernels[PA_FUNC_SF].n_scalars, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_case_table),
		cmocka_unit_test(test_inputs_deterministic),
		cmocka_unit_test(test_seq_small1),
		cmocka_unit_test(test_seq_small2),
		cmocka_unit_test(test_seq_varseq2),
		cmocka_unit_test(test_seq_varseq4),
		cmocka_unit_test(test_perturbed_output_fails),
		cmocka_unit_test(test_kernel_failure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
