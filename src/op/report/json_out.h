/* SPDX-License-Identifier: MIT */
/*
 * op/report/json_out.h — the little JSON writing the report needs
 * (summary.json, trace.json): strings escaped per RFC 8259, numbers that
 * are always valid JSON (no NaN / inf).
 */
#ifndef TASKPROF_OP_REPORT_JSON_OUT_H
#define TASKPROF_OP_REPORT_JSON_OUT_H

#include <math.h>
#include <stdio.h>

/**
 * tp_json_utf8_len() - length of the UTF-8 sequence at @p.
 * @p: the first byte; up to 3 more are read only while they are
 *     continuation bytes (a NUL stops it).
 *
 * Return: bytes of the valid sequence, 1..4; 0 when it is not one
 * (overlong forms, surrogates and values past U+10FFFF are invalid).
 */
static inline int tp_json_utf8_len(const unsigned char *p)
{
	if (p[0] < 0x80)
		return 1;
	int n = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
	if (!n || p[0] > 0xF4)
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	if (n == 3 && ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0)))
		return 0;
	if (n == 4 && ((p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90)))
		return 0;
	return n;
}

/**
 * tp_json_str() - write @s as a JSON string (RFC 8259 §7).
 * @f: the stream; write errors are left in its error flag.
 * @s: NUL-terminated; NULL writes "".
 *
 * Quotes, \" \\ \n \r \t \b \f, other control characters as \u00XX;
 * valid UTF-8 passes through, an invalid byte becomes U+FFFD (a JSON text
 * must be UTF-8: free-text fields such as launch.txt's note are not
 * checked by anyone else).
 */
static inline void tp_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default:
			if (*p < 0x20) {
				fprintf(f, "\\u%04x", *p);
			} else {
				int n = tp_json_utf8_len(p);
				if (!n) {
					fputs("\\ufffd", f);
					p++;
					continue;
				}
				fwrite(p, 1, (size_t)n, f);
				p += n;
				continue;
			}
		}
		p++;
	}
	fputc('"', f);
}

/**
 * tp_json_num() - write @v with @prec decimals ("%.*f"), or null when it
 * is not finite (JSON has no NaN / inf).
 * @f:    the stream.
 * @v:    the value, in whatever unit the field has.
 * @prec: decimals.
 */
static inline void tp_json_num(FILE *f, double v, int prec)
{
	if (!isfinite(v))
		fputs("null", f);
	else
		fprintf(f, "%.*f", prec, v);
}

#endif /* TASKPROF_OP_REPORT_JSON_OUT_H */
