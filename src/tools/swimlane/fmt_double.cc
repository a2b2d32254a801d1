// SPDX-License-Identifier: MIT
// tools/swimlane/fmt_double.cc — Python repr() of a double, on top of
// double-conversion's shortest-digit generator (spec/swimlane-format.md §4.1).
#include "tools/swimlane/fmt_double.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include <double-conversion/double-conversion.h>

// Fast path for values that are exactly the double nearest to k / 1000
// (timestamps in µs of a 50 MHz / 1 GHz clock often are): the decimal
// k / 1000 round-trips, and for 0.001 <= |v| < 2^40 no other decimal with
// at most as many significant digits is within half an ulp of v (ulp is
// below 0.0005 there), so it is the shortest repr; Python prints it in
// fixed notation. Returns 0 when the fast path does not apply.
static int fmt_millis(double v, char *buf)
{
	double a = v < 0 ? -v : v;
	if (!(a >= 0.001 && a < 1099511627776.0))
		return 0;
	double x = a * 1000.0;
	long long k = std::llround(x);
	if ((double)k / 1000.0 != a)
		return 0;
	char *p = buf;
	if (v < 0)
		*p++ = '-';
	long long ip = k / 1000;
	int frac = (int)(k % 1000);
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + ip % 10);
		ip /= 10;
	} while (ip);
	while (n)
		*p++ = tmp[--n];
	*p++ = '.';
	*p++ = (char)('0' + frac / 100);
	if (frac % 100) {
		*p++ = (char)('0' + frac / 10 % 10);
		if (frac % 10)
			*p++ = (char)('0' + frac % 10);
	}
	*p = '\0';
	return (int)(p - buf);
}

// Exact shortest digits with 128-bit integers, for 1e-4 <= |v| < 1e15
// (Python's fixed-notation range; the µs differences and flow times of a
// trace are there and mostly need 16 or 17 digits, which fmt_millis does
// not cover). With v = m * 2^-s exactly (m < 2^53, 0 < s <= 67) and R_n
// the n-significant-digit decimal nearest to v, R_n = round(m * 10^k /
// 2^s) with k = n - 1 - floor(log10 v), all in unsigned __int128. Then:
//  - a decimal of at most 15 significant digits that reads back as v is
//    R_15 (any such decimal is recovered by rounding its double to 15
//    digits: DBL_DIG), so if R_15 reads back, R_15 without trailing zeros
//    is the shortest repr;
//  - otherwise the shortest has 16 or 17 digits, and Python picks the one
//    nearest to v among them: R_16 if it reads back, else R_17 (which
//    always does).
// "Reads back" is decided exactly: |R * 2^s - m * 10^k| against half the
// gap to v's neighbours (10^k / 2, or 10^k / 4 below a power of two).
// Exact halfway cases (of the rounding or of the read-back) return 0 and
// go to the slow path, so no tie rule has to be matched here.
typedef unsigned __int128 u128;

static const uint64_t pow10_u64[20] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
	100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL,
	1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
	1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
	1000000000000000000ULL, 10000000000000000000ULL,
};

static const char digits2[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

// R_n from N = m * 10^k exactly (k = n - 1 - floor(log10 v), p10 = 10^k)
// into *@Rout. Return -1 on an exact tie (slow path), else 0 with *@ok
// saying whether R_n reads back as v.
static int round_digits(uint64_t m, int s, u128 N, u128 p10, uint64_t *Rout, bool *ok)
{
	u128 R = N >> s;
	u128 rem = N - (R << s);
	u128 half = (u128)1 << (s - 1);
	if (rem > half)
		R++;
	else if (rem == half)
		return -1; // tie: leave it to the slow path
	// read back: D = R * 2^s - N, exactly
	u128 Rs = R << s;
	bool below = Rs < N;
	u128 D = below ? N - Rs : Rs - N;
	// 2|D| against 10^k (4|D| below v = 2^52 * 2^-s, where the gap to
	// the lower neighbour is half as wide)
	u128 twoD = below && m == (1ULL << 52) ? 4 * D : 2 * D;
	if (twoD == p10)
		return -1; // read-back tie
	*ok = twoD < p10;
	*Rout = (uint64_t)R;
	return 0;
}

static int fmt_exact(double v, char *buf)
{
	double a = v < 0 ? -v : v;
	if (!(a >= 1e-4 && a < 1e15))
		return 0;
	uint64_t bits;
	std::memcpy(&bits, &a, sizeof(bits));
	int be = (int)(bits >> 52); // biased exponent, normal here
	uint64_t m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
	int s = 1075 - be; // a = m * 2^-s, 3 <= s <= 66 here
	if (s <= 0 || s > 100)
		return 0;
	// d = floor(log10 a): a guess from the binary exponent (never above,
	// at most one below), fixed by the digit count of floor(a * 10^k).
	int e2 = be - 1023;
	int d = (e2 * 1233) >> 12; // floor(e2 * log10(2)), e2 in [-14, 49]
	u128 N15 = 0, p15 = 0;
	for (int guard = 0;; guard++) {
		int k = 14 - d; // 0 <= k <= 19 (a guess one below d = -4)
		if (k < 0 || k > 19 || guard > 3)
			return 0;
		p15 = pow10_u64[k];
		N15 = (u128)m * (uint64_t)p15; // < 2^53 * 10^19 < 2^117
		u128 T = N15 >> s;
		if (T >= pow10_u64[15])
			d++;
		else if (T < pow10_u64[14])
			d--;
		else
			break;
	}
	// R_15, R_16, R_17 from N15 * 1, 10, 100 (< 2^124)
	uint64_t R = 0;
	int n = 15;
	bool ok = false;
	u128 N = N15, p10 = p15;
	for (; n <= 17; n++, N *= 10, p10 *= 10) {
		if (round_digits(m, s, N, p10, &R, &ok))
			return 0;
		if (ok)
			break;
	}
	if (!ok)
		return 0;
	if (R == pow10_u64[n]) { // 9.99..95 rounded up to 10.0..0
		R = pow10_u64[n - 1];
		d++;
	}
	// strip trailing zeros (only an R_15 can have them)
	while (n > 1 && R % 10 == 0) {
		R /= 10;
		n--;
	}
	char dig[20];
	int i = n;
	while (i >= 2) {
		unsigned r = (unsigned)(R % 100);
		R /= 100;
		i -= 2;
		dig[i] = digits2[2 * r];
		dig[i + 1] = digits2[2 * r + 1];
	}
	if (i)
		dig[0] = (char)('0' + R);
	char *p = buf;
	if (v < 0)
		*p++ = '-';
	int point = d + 1; // digits before the decimal point
	if (point <= 0) {
		*p++ = '0';
		*p++ = '.';
		for (int i = 0; i < -point; i++)
			*p++ = '0';
		std::memcpy(p, dig, (size_t)n);
		p += n;
	} else if (point < n) {
		std::memcpy(p, dig, (size_t)point);
		p += point;
		*p++ = '.';
		std::memcpy(p, dig + point, (size_t)(n - point));
		p += n - point;
	} else {
		std::memcpy(p, dig, (size_t)n);
		p += n;
		for (int i = n; i < point; i++)
			*p++ = '0';
		*p++ = '.';
		*p++ = '0';
	}
	*p = '\0';
	return (int)(p - buf);
}

extern "C" int tp_fmt_double_repr_slow(double v, char *buf);

extern "C" int tp_fmt_double_repr(double v, char *buf)
{
	int n = fmt_millis(v, buf);
	if (!n)
		n = fmt_exact(v, buf);
	return n ? n : tp_fmt_double_repr_slow(v, buf);
}

extern "C" int tp_fmt_double_repr_exact(double v, char *buf)
{
	return fmt_exact(v, buf);
}

extern "C" int tp_fmt_double_repr_slow(double v, char *buf)
{
	using double_conversion::DoubleToStringConverter;

	if (std::isnan(v)) {
		std::memcpy(buf, "NaN", 4);
		return 3;
	}
	if (std::isinf(v)) {
		const char *s = v < 0 ? "-Infinity" : "Infinity";
		size_t n = std::strlen(s);
		std::memcpy(buf, s, n + 1);
		return (int)n;
	}

	// 17 significant digits at most for SHORTEST; keep room for the NUL.
	char digits[DoubleToStringConverter::kBase10MaximalLength + 1];
	bool sign = false;
	int len = 0, point = 0;
	DoubleToStringConverter::DoubleToAscii(v, DoubleToStringConverter::SHORTEST, 0, digits,
					       sizeof(digits), &sign, &len, &point);

	char *p = buf;
	if (sign)
		*p++ = '-';
	if (point < -3 || point > 16) {
		// d[.ddd]e±XX: Python drops the ".0" in exponent form.
		*p++ = digits[0];
		if (len > 1) {
			*p++ = '.';
			std::memcpy(p, digits + 1, (size_t)(len - 1));
			p += len - 1;
		}
		int exp = point - 1;
		*p++ = 'e';
		*p++ = exp < 0 ? '-' : '+';
		if (exp < 0)
			exp = -exp;
		if (exp >= 100) {
			*p++ = (char)('0' + exp / 100);
			exp %= 100;
		}
		*p++ = (char)('0' + exp / 10);
		*p++ = (char)('0' + exp % 10);
	} else if (point <= 0) {
		*p++ = '0';
		*p++ = '.';
		for (int i = 0; i < -point; i++)
			*p++ = '0';
		std::memcpy(p, digits, (size_t)len);
		p += len;
	} else if (point < len) {
		std::memcpy(p, digits, (size_t)point);
		p += point;
		*p++ = '.';
		std::memcpy(p, digits + point, (size_t)(len - point));
		p += len - point;
	} else {
		std::memcpy(p, digits, (size_t)len);
		p += len;
		for (int i = len; i < point; i++)
			*p++ = '0';
		*p++ = '.';
		*p++ = '0';
	}
	*p = '\0';
	return (int)(p - buf);
}
