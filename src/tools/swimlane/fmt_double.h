/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/fmt_double.h — doubles printed as Python's repr() prints
 * them (shortest round-trip digits), which is how the reference converter's
 * json.dump writes every float of merged_swimlane.json (spec/swimlane-format.md
 * §4.1).
 */
#ifndef TASKPROF_TOOLS_SWIMLANE_FMT_DOUBLE_H
#define TASKPROF_TOOLS_SWIMLANE_FMT_DOUBLE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Room for any output of tp_fmt_double_repr(), NUL included. */
#define TP_FMT_DOUBLE_MAX 32

/**
 * tp_fmt_double_repr() - format @v like Python's repr(float).
 * @v:   any double.
 * @buf: at least TP_FMT_DOUBLE_MAX bytes; receives a NUL-terminated string.
 *
 * Shortest digits that round-trip (double-conversion SHORTEST mode), then
 * Python's layout: scientific when the decimal exponent is < -4 or >= 16
 * (decimal point position < -3 or > 16), mantissa without a trailing ".0",
 * exponent signed with at least two digits ("1e-05", "1e+16"); otherwise
 * fixed notation that always has a '.' and at least one digit after it
 * ("26.0", "0.0001"). Non-finite values print as JSON's Python spelling:
 * "Infinity", "-Infinity", "NaN".
 *
 * Return: the string length (never more than TP_FMT_DOUBLE_MAX - 1).
 */
int tp_fmt_double_repr(double v, char *buf);

/**
 * tp_fmt_double_repr_slow() - tp_fmt_double_repr() without the fast paths
 * (always double-conversion); for tests that check the fast paths
 * against it.
 * @v, @buf: as tp_fmt_double_repr().
 *
 * Return: the string length.
 */
int tp_fmt_double_repr_slow(double v, char *buf);

/**
 * tp_fmt_double_repr_exact() - the exact 128-bit integer fast path alone
 * (1e-4 <= |v| < 1e15, where Python prints fixed notation); for tests.
 * @v:   the value.
 * @buf: at least TP_FMT_DOUBLE_MAX bytes.
 *
 * Return: the repr's length, or 0 when it does not apply (out of range,
 * or a halfway case it leaves to the slow path).
 */
int tp_fmt_double_repr_exact(double v, char *buf);

#ifdef __cplusplus
}
#endif

#endif /* TASKPROF_TOOLS_SWIMLANE_FMT_DOUBLE_H */
