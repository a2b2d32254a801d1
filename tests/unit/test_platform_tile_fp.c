/* SPDX-License-Identifier: MIT */
/* Unit tests of platform/tile/fp.h and tp_vcast: fp16 / bf16 / int32
 * conversions round to nearest even, overflow to inf, keep NaN NaN, keep
 * subnormals; checked on hand-picked bit patterns, exhaustively on 16-bit
 * round trips, and on random fp32 against independent references. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "platform/tile/core_ctx.h"
#include "platform/tile/fp.h"
#include "taskprof/kernel.h"

static float fb(uint32_t u)
{
	return tp_f32_from_bits(u);
}

struct case16 {
	uint32_t in;  /* fp32 bits */
	uint16_t out; /* expected 16-bit pattern */
};

static void test_f32_to_bf16_cases(void **state)
{
	(void)state;
	static const struct case16 c[] = {
		{ 0x3f800000, 0x3f80 }, /* 1.0 */
		{ 0x3f808000, 0x3f80 }, /* tie, low half even: down */
		{ 0x3f818000, 0x3f82 }, /* tie, low half odd: up */
		{ 0x3f808001, 0x3f81 }, /* above the tie: up */
		{ 0x3f807fff, 0x3f80 }, /* below the tie: down */
		{ 0xbf818000, 0xbf82 }, /* negative tie to even */
		{ 0x7f7f7fff, 0x7f7f }, /* largest that stays finite */
		{ 0x7f7f8000, 0x7f80 }, /* tie at the top, odd: to inf */
		{ 0x7f7fffff, 0x7f80 }, /* FLT_MAX: to inf */
		{ 0xff7fffff, 0xff80 }, /* -FLT_MAX: to -inf */
		{ 0x7f800000, 0x7f80 }, /* inf */
		{ 0xff800000, 0xff80 }, /* -inf */
		{ 0x7fc00000, 0x7fc0 }, /* qNaN */
		{ 0x7f800001, 0x7fc0 }, /* sNaN, payload only in the low bits:
					 * still NaN, quiet */
		{ 0xffc00001, 0xffc0 }, /* negative NaN */
		{ 0x7fa00000, 0x7fe0 }, /* sNaN with payload: payload kept */
		{ 0x00000000, 0x0000 }, /* +0 */
		{ 0x80000000, 0x8000 }, /* -0 */
		{ 0x00000001, 0x0000 }, /* tiniest subnormal: down to 0 */
		{ 0x00008000, 0x0000 }, /* subnormal tie, even: 0 */
		{ 0x00018000, 0x0002 }, /* subnormal tie, odd: up */
		{ 0x00010000, 0x0001 }, /* smallest bf16 subnormal */
		{ 0x007fffff, 0x0080 }, /* largest subnormal: to min normal */
		{ 0x00800000, 0x0080 }, /* min normal */
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint16_t got = tp_f32_to_bf16(fb(c[i].in));
		if (got != c[i].out)
			fail_msg("f32 0x%08x -> bf16 0x%04x, expected 0x%04x",
				 c[i].in, got, c[i].out);
	}
}

static void test_f32_to_f16_cases(void **state)
{
	(void)state;
	static const struct case16 c[] = {
		{ 0x3f800000, 0x3c00 }, /* 1.0 */
		{ 0x3f801000, 0x3c00 }, /* 1 + 2^-11: tie, even: down */
		{ 0x3f803000, 0x3c02 }, /* 1 + 3·2^-11: tie, odd: up */
		{ 0x3f801001, 0x3c01 }, /* just above the tie */
		{ 0x3f800fff, 0x3c00 }, /* just below the tie */
		{ 0x477fe000, 0x7bff }, /* 65504, the largest fp16 */
		{ 0x477fefff, 0x7bff }, /* just below 65520 */
		{ 0x477ff000, 0x7c00 }, /* 65520: tie above max, to inf */
		{ 0x47800000, 0x7c00 }, /* 65536 */
		{ 0x501502f9, 0x7c00 }, /* 1e10 */
		{ 0xc77ff000, 0xfc00 }, /* -65520 */
		{ 0x7f800000, 0x7c00 }, /* inf */
		{ 0xff800000, 0xfc00 }, /* -inf */
		{ 0x7fc00000, 0x7e00 }, /* qNaN */
		{ 0x7f800001, 0x7e00 }, /* sNaN: quiet NaN */
		{ 0xffc00000, 0xfe00 }, /* -NaN */
		{ 0x7fd00000, 0x7e80 }, /* NaN payload's top bits kept */
		{ 0x38800000, 0x0400 }, /* 2^-14, smallest normal */
		{ 0x33800000, 0x0001 }, /* 2^-24, smallest subnormal */
		{ 0x33000000, 0x0000 }, /* 2^-25: tie between 0 and 1: 0 */
		{ 0x33000001, 0x0001 }, /* just above: 1 */
		{ 0x33c00000, 0x0002 }, /* 3·2^-25 = 1.5 ulp: tie, up to 2 */
		{ 0x34200000, 0x0002 }, /* 5·2^-25 = 2.5 ulp: tie, down to 2 */
		{ 0x387fc000, 0x03ff }, /* 1023·2^-24, largest subnormal */
		{ 0x387fe000, 0x0400 }, /* 1023.5·2^-24: tie, to min normal */
		{ 0x32800000, 0x0000 }, /* 2^-26 */
		{ 0xb3c00000, 0x8002 }, /* negative subnormal tie */
		{ 0x80000000, 0x8000 }, /* -0 */
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint16_t got = tp_f32_to_f16(fb(c[i].in));
		if (got != c[i].out)
			fail_msg("f32 0x%08x -> f16 0x%04x, expected 0x%04x",
				 c[i].in, got, c[i].out);
	}
}

static void test_f16_to_f32_cases(void **state)
{
	(void)state;
	assert_true(tp_f16_to_f32(0x3c00) == 1.0f);
	assert_true(tp_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
	assert_true(tp_f16_to_f32(0x03ff) == 1023.0f * ldexpf(1.0f, -24));
	assert_true(tp_f16_to_f32(0x0400) == ldexpf(1.0f, -14));
	assert_true(tp_f16_to_f32(0x7bff) == 65504.0f);
	assert_true(isinf(tp_f16_to_f32(0x7c00)) &&
		    tp_f16_to_f32(0x7c00) > 0);
	assert_true(isinf(tp_f16_to_f32(0xfc00)) &&
		    tp_f16_to_f32(0xfc00) < 0);
	assert_true(isnan(tp_f16_to_f32(0x7e00)));
	assert_true(isnan(tp_f16_to_f32(0x7c01)));
	assert_int_equal(tp_f32_bits(tp_f16_to_f32(0x8000)), 0x80000000u);
	assert_int_equal(tp_f32_bits(tp_f16_to_f32(0x8001)),
			 tp_f32_bits(-ldexpf(1.0f, -24)));
	assert_int_equal(tp_f32_bits(tp_bf16_to_f32(0x3f81)), 0x3f810000u);
}

/* Every non-NaN 16-bit pattern survives widen + narrow unchanged; NaNs stay
 * NaN (quiet). */
static void test_roundtrip_exhaustive(void **state)
{
	(void)state;
	for (uint32_t h = 0; h < 0x10000; h++) {
		float f16 = tp_f16_to_f32((uint16_t)h);
		uint16_t back16 = tp_f32_to_f16(f16);
		bool nan16 = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
		if (nan16) {
			if (!((back16 & 0x7c00) == 0x7c00 && (back16 & 0x3ff) &&
			      (back16 & 0x200) && (back16 & 0x8000) ==
							  (h & 0x8000)))
				fail_msg("f16 NaN 0x%04x -> 0x%04x", h, back16);
		} else if (back16 != h) {
			fail_msg("f16 0x%04x -> %g -> 0x%04x", h, f16, back16);
		}

		float fbf = tp_bf16_to_f32((uint16_t)h);
		uint16_t backbf = tp_f32_to_bf16(fbf);
		bool nanbf = (h & 0x7f80) == 0x7f80 && (h & 0x7f);
		if (nanbf) {
			if (!((backbf & 0x7f80) == 0x7f80 && (backbf & 0x40)))
				fail_msg("bf16 NaN 0x%04x -> 0x%04x", h, backbf);
		} else if (backbf != h) {
			fail_msg("bf16 0x%04x -> 0x%04x", h, backbf);
		}
	}
}

/* Independent bf16 reference: of the two bf16 values around x (truncation
 * and the next one up), the nearer in double; ties to the even one. */
static uint16_t ref_bf16(float x)
{
	uint32_t u = tp_f32_bits(x);
	if (isnan(x))
		return (uint16_t)((u >> 16) | 0x40);
	uint32_t lo = u & 0xffff0000u, hi = lo + 0x10000u;
	double dx = fabs((double)x);
	double dlo = fabs((double)fb(lo));
	double dhi = (hi & 0x7fffffffu) >= 0x7f800000u
			     ? ldexp(1.0, 128) /* the next value up is inf */
			     : fabs((double)fb(hi));
	double elo = dx - dlo, ehi = dhi - dx;
	if (elo < ehi)
		return (uint16_t)(lo >> 16);
	if (ehi < elo)
		return (uint16_t)(hi >> 16);
	return (uint16_t)(((lo >> 16) & 1) ? hi >> 16 : lo >> 16);
}

static uint32_t rng = 0x2545f491u;
static uint32_t next_u32(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static void test_random_against_references(void **state)
{
	(void)state;
	for (int i = 0; i < 2000000; i++) {
		uint32_t u = next_u32();
		/* Bias half the samples towards fp16's range and its edges. */
		if (i & 1)
			u = (u & 0x807fffffu) |
			    ((uint32_t)(100 + next_u32() % 45) << 23);
		float x = fb(u);
		uint16_t b = tp_f32_to_bf16(x);
		if (!isnan(x) && b != ref_bf16(x))
			fail_msg("bf16(0x%08x) = 0x%04x, reference 0x%04x", u,
				 b, ref_bf16(x));
#ifdef __FLT16_MAX__
		/* The compiler's _Float16 conversion (libgcc, round to
		 * nearest even) is the fp16 reference. */
		if (!isnan(x)) {
			_Float16 h = (_Float16)x;
			uint16_t hb;
			memcpy(&hb, &h, 2);
			uint16_t got = tp_f32_to_f16(x);
			if (got != hb)
				fail_msg("f16(0x%08x) = 0x%04x, _Float16 says "
					 "0x%04x", u, got, hb);
		}
#endif
	}
#ifndef __FLT16_MAX__
	print_message("no _Float16: fp16 random check used cases only\n");
#endif
}

/* ---- the same conversions through tp_vcast on UB tiles --------------- */

static struct tp_core_ctx aiv;

static int setup(void **state)
{
	(void)state;
	if (tp_core_ctx_init(&aiv, 16, TP_CORE_AIV))
		return -1;
	tp_core_ctx_bind(&aiv);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tp_core_ctx_bind(NULL);
	tp_core_ctx_fini(&aiv);
	return 0;
}

static void test_vcast_f32_to_16(void **state)
{
	(void)state;
	static const uint32_t in[] = {
		0x3f800000, 0x3f808000, 0x3f818000, 0x3f801000, 0x3f803000,
		0x477ff000, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7fc00000,
		0x7f800001, 0x33000000, 0x33c00000, 0x00018000, 0x80000000,
		0xc77ff000,
	};
	enum { N = sizeof(in) / sizeof(in[0]) };
	struct tp_tile src, dbf, dh, back;
	assert_int_equal(tp_local_tile(&src, TP_MEM_UB, TP_FP32, 2, N / 2), 0);
	assert_int_equal(tp_local_tile(&dbf, TP_MEM_UB, TP_BF16, 2, N / 2), 0);
	assert_int_equal(tp_local_tile(&dh, TP_MEM_UB, TP_FP16, 2, N / 2), 0);
	assert_int_equal(tp_local_tile(&back, TP_MEM_UB, TP_FP32, 2, N / 2), 0);
	memcpy(src.buf, in, sizeof(in));
	assert_int_equal(tp_vcast(&dbf, &src), 0);
	assert_int_equal(tp_vcast(&dh, &src), 0);
	const uint16_t *pb = (const uint16_t *)dbf.buf;
	const uint16_t *ph = (const uint16_t *)dh.buf;
	for (int i = 0; i < N; i++) {
		assert_int_equal(pb[i], tp_f32_to_bf16(fb(in[i])));
		assert_int_equal(ph[i], tp_f32_to_f16(fb(in[i])));
	}
	/* Spot values, so this does not only compare fp.h with itself. */
	assert_int_equal(pb[1], 0x3f80);
	assert_int_equal(pb[2], 0x3f82);
	assert_int_equal(ph[3], 0x3c00);
	assert_int_equal(ph[4], 0x3c02);
	assert_int_equal(ph[5], 0x7c00);
	assert_int_equal(pb[6], 0x7f80);
	assert_int_equal(pb[10], 0x7fc0);
	assert_int_equal(ph[10], 0x7e00);
	assert_int_equal(ph[11], 0x0000);
	assert_int_equal(ph[12], 0x0002);
	assert_int_equal(ph[15], 0xfc00);

	/* Widening back is exact. */
	assert_int_equal(tp_vcast(&back, &dh), 0);
	const float *pf = (const float *)back.buf;
	assert_true(pf[0] == 1.0f);
	assert_true(isinf(pf[5]));
	assert_true(isnan(pf[10]));
	assert_true(pf[12] == 2.0f * ldexpf(1.0f, -24));
}

static void test_vcast_16_to_16(void **state)
{
	(void)state;
	struct tp_tile h, b, h2;
	assert_int_equal(tp_local_tile(&h, TP_MEM_UB, TP_FP16, 1, 4), 0);
	assert_int_equal(tp_local_tile(&b, TP_MEM_UB, TP_BF16, 1, 4), 0);
	assert_int_equal(tp_local_tile(&h2, TP_MEM_UB, TP_FP16, 1, 4), 0);
	uint16_t *ph = (uint16_t *)h.buf, *pb = (uint16_t *)b.buf;
	ph[0] = 0x3c01; /* 1 + 2^-10: bf16 keeps 7 bits -> 1.0 */
	ph[1] = 0x7bff; /* 65504 -> rounds up to 65536 in bf16 */
	ph[2] = 0x0001; /* 2^-24: exact in bf16 */
	ph[3] = 0x7e00; /* NaN */
	assert_int_equal(tp_vcast(&b, &h), 0);
	assert_int_equal(pb[0], 0x3f80);
	assert_int_equal(pb[1], 0x4780);
	assert_int_equal(pb[2], 0x3380);
	assert_true((pb[3] & 0x7f80) == 0x7f80 && (pb[3] & 0x7f));
	/* And back: 65536 overflows fp16. */
	assert_int_equal(tp_vcast(&h2, &b), 0);
	const uint16_t *p2 = (const uint16_t *)h2.buf;
	assert_int_equal(p2[0], 0x3c00);
	assert_int_equal(p2[1], 0x7c00);
	assert_int_equal(p2[2], 0x0001);
	assert_true((p2[3] & 0x7c00) == 0x7c00 && (p2[3] & 0x3ff));
}

static void test_vcast_int32(void **state)
{
	(void)state;
	struct tp_tile f, i, f2;
	assert_int_equal(tp_local_tile(&f, TP_MEM_UB, TP_FP32, 1, 8), 0);
	assert_int_equal(tp_local_tile(&i, TP_MEM_UB, TP_INT32, 1, 8), 0);
	assert_int_equal(tp_local_tile(&f2, TP_MEM_UB, TP_FP32, 1, 8), 0);
	float *pf = (float *)f.buf;
	const float in[8] = { 2.5f, 3.5f, -2.5f, -0.5f, NAN, 1e10f, -1e10f,
			      7.25f };
	memcpy(pf, in, sizeof(in));
	assert_int_equal(tp_vcast(&i, &f), 0);
	const int32_t want[8] = { 2, 4, -2, 0, 0, INT32_MAX, INT32_MIN, 7 };
	assert_memory_equal(i.buf, want, sizeof(want));

	int32_t *pi = (int32_t *)i.buf;
	pi[0] = 16777217; /* tie between 2^24 and 2^24 + 2: even, down */
	pi[1] = 16777219; /* tie: even, up to 2^24 + 4 */
	pi[2] = -16777217;
	assert_int_equal(tp_vcast(&f2, &i), 0);
	const float *p2 = (const float *)f2.buf;
	assert_true(p2[0] == 16777216.0f);
	assert_true(p2[1] == 16777220.0f);
	assert_true(p2[2] == -16777216.0f);
}

static void test_vcast_rejects_pairs(void **state)
{
	(void)state;
	struct tp_tile f, f2, i8;
	assert_int_equal(tp_local_tile(&f, TP_MEM_UB, TP_FP32, 1, 8), 0);
	assert_int_equal(tp_local_tile(&f2, TP_MEM_UB, TP_FP32, 1, 8), 0);
	assert_int_equal(tp_local_tile(&i8, TP_MEM_UB, TP_INT8, 1, 8), 0);
	assert_int_equal(tp_vcast(&f2, &f), -EINVAL); /* same dtype */
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_vcast(&i8, &f), -EINVAL); /* int8 not a pair */
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv), "tp_vcast"));
	tp_core_ctx_clear_error(&aiv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f32_to_bf16_cases),
		cmocka_unit_test(test_f32_to_f16_cases),
		cmocka_unit_test(test_f16_to_f32_cases),
		cmocka_unit_test(test_roundtrip_exhaustive),
		cmocka_unit_test(test_random_against_references),
		cmocka_unit_test_setup_teardown(test_vcast_f32_to_16, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_vcast_16_to_16, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_vcast_int32, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_vcast_rejects_pairs, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
