/* SPDX-License-Identifier: MIT */
/*
 * platform/tile/fp.h — fp16 / bf16 <-> fp32 conversions.
 *
 * Inline because the vector, cube and fixpipe loops convert every element.
 * Narrowing rounds to nearest, ties to even; values beyond the target's
 * largest finite value round to ±inf as RNE says (fp16: |x| >= 65520);
 * NaN stays NaN (quiet, sign and top payload bits kept); subnormal results
 * are produced, not flushed. Widening is exact.
 */
#ifndef TASKPROF_PLATFORM_TILE_FP_H
#define TASKPROF_PLATFORM_TILE_FP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/** tp_f32_bits() - the IEEE binary32 bit pattern of @f. */
static inline uint32_t tp_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

/** tp_f32_from_bits() - the float whose binary32 bit pattern is @u. */
static inline float tp_f32_from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

/** tp_bf16_to_f32() - widen a bf16 bit pattern (exact). */
static inline float tp_bf16_to_f32(uint16_t h)
{
	return tp_f32_from_bits((uint32_t)h << 16);
}

/** tp_f32_to_bf16() - narrow to bf16, round to nearest even. */
static inline uint16_t tp_f32_to_bf16(float f)
{
	uint32_t u = tp_f32_bits(f);
	if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet */
		return (uint16_t)((u >> 16) | 0x0040u);
	/* Adding 0x7fff plus the lowest kept bit rounds ties to even; a carry
	 * out of the mantissa bumps the exponent, up to inf. */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

/** tp_f16_to_f32() - widen an IEEE binary16 bit pattern (exact). */
static inline float tp_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu;
	uint32_t mant = h & 0x3ffu;
	if (exp == 0x1f) /* inf / NaN, payload kept */
		return tp_f32_from_bits(sign | 0x7f800000u | (mant << 13));
	if (exp == 0) { /* zero / subnormal: mant × 2^-24, exact in fp32 */
		float v = (float)mant * 0x1p-24f;
		return sign ? -v : v;
	}
	return tp_f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

/** tp_f32_to_f16() - narrow to IEEE binary16, round to nearest even. */
static inline uint16_t tp_f32_to_f16(float f)
{
	uint32_t u = tp_f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u) /* NaN: quiet, top payload bits kept */
		return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
	if (a >= 0x477ff000u) /* >= 65520: the tie above 65504 goes to inf */
		return (uint16_t)(sign | 0x7c00u);
	if (a >= 0x38800000u) { /* normal fp16: >= 2^-14 */
		a += 0xfffu + ((a >> 13) & 1u);
		return (uint16_t)(sign | ((a - 0x38000000u) >> 13));
	}
	/* Subnormal or zero: the result is round(|f| × 2^24) × 2^-24; the
	 * product is exact and rintf rounds ties to even (default mode).
	 * 1024 encodes the smallest normal, which is right. */
	return (uint16_t)(sign |
			  (uint16_t)rintf(tp_f32_from_bits(a) * 0x1p24f));
}

#endif /* TASKPROF_PLATFORM_TILE_FP_H */
