/* SPDX-License-Identifier: MIT */
/*
 * base/args.c — argparse's abbreviated long options for the commands that
 * follow argparse (swimlane, sched-overhead, pmu); see base/args.h.
 */
#include "base/args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the option name in @w: up to an '=' or the end. */
static size_t name_len(const char *w)
{
	const char *eq = strchr(w, '=');
	return eq ? (size_t)(eq - w) : strlen(w);
}

int tp_args_expand_abbrev(int argc, char **argv, const char *const *longs, int n, char ***out,
			  char *err, size_t errlen)
{
	*out = NULL;
	if (errlen)
		err[0] = '\0';
	char **copy = calloc((size_t)argc + 1, sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	bool opts_done = false;
	for (int i = 0; i < argc; i++) {
		char *w = argv[i];
		copy[i] = w;
		if (i == 0 || opts_done)
			continue;
		if (!strcmp(w, "--")) {
			opts_done = true;
			continue;
		}
		if (w[0] != '-' || w[1] != '-' || !w[2])
			continue;
		const size_t nl = name_len(w);
		int hit = -1, hits = 0;
		bool exact = false;
		for (int k = 0; k < n; k++) {
			if (strlen(longs[k]) == nl && !strncmp(longs[k], w, nl)) {
				exact = true;
				break;
			}
			if (strlen(longs[k]) > nl && !strncmp(longs[k], w, nl)) {
				hit = k;
				hits++;
			}
		}
		if (exact || !hits)
			continue; /* the option itself, or unknown: the parser says so */
		if (hits > 1) {
			size_t o = (size_t)snprintf(err, errlen, "ambiguous option: %s could match", w);
			bool first = true;
			for (int k = 0; k < n && o < errlen; k++) {
				if (strlen(longs[k]) > nl && !strncmp(longs[k], w, nl)) {
					o += (size_t)snprintf(err + o, errlen - o, "%s %s",
							      first ? "" : ",", longs[k]);
					first = false;
				}
			}
			tp_args_free(argc, argv, copy);
			return -EINVAL;
		}
		const size_t fl = strlen(longs[hit]), rest = strlen(w + nl);
		char *full = malloc(fl + rest + 1);
		if (!full) {
			tp_args_free(argc, argv, copy);
			return -ENOMEM;
		}
		memcpy(full, longs[hit], fl);
		memcpy(full + fl, w + nl, rest + 1); /* "=value" and the NUL */
		copy[i] = full;
	}
	copy[argc] = NULL;
	*out = copy;
	return 0;
}

void tp_args_free(int argc, char **argv, char **copy)
{
	if (!copy)
		return;
	for (int i = 0; i < argc; i++)
		if (copy[i] && copy[i] != argv[i])
			free(copy[i]);
	free(copy);
}

char *tp_shell_quote(const char *s)
{
	static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				    "0123456789_./-+:,@%=";
	const char *pre = s[0] == '-' ? "./" : "";
	const size_t n = strlen(s);
	char *out;
	if (n && !s[strspn(s, plain)]) {
		out = malloc(n + 3);
		if (out)
			snprintf(out, n + 3, "%s%s", pre, s);
		return out;
	}
	/* worst case: every character a ' or a control character (4 bytes),
	 * the quotes and a '$', "./", NUL */
	out = malloc(4 * n + 6);
	if (!out)
		return NULL;
	size_t o = 0;
	bool ctl = false;
	for (const char *p = s; *p && !ctl; p++)
		ctl = (unsigned char)*p < 0x20 || *p == 0x7f;
	if (ctl) {
		/* A command on one line: $'...' with C escapes (bash, ksh,
		 * zsh; POSIX.1-2024 sh) for a word with a newline in it. */
		static const char hex[] = "0123456789abcdef";
		out[o++] = '$';
		out[o++] = '\'';
		for (const char *q = pre; *q; q++)
			out[o++] = *q;
		for (const char *p = s; *p; p++) {
			const unsigned char c = (unsigned char)*p;
			if (c == '\'' || c == '\\') {
				out[o++] = '\\';
				out[o++] = (char)c;
			} else if (c == '\n' || c == '\t' || c == '\r') {
				out[o++] = '\\';
				out[o++] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
			} else if (c < 0x20 || c == 0x7f) {
				out[o++] = '\\';
				out[o++] = 'x';
				out[o++] = hex[c >> 4];
				out[o++] = hex[c & 0xf];
			} else {
				out[o++] = (char)c;
			}
		}
		out[o++] = '\'';
		out[o] = '\0';
		return out;
	}
	out[o++] = '\'';
	for (const char *q = pre; *q; q++)
		out[o++] = *q;
	for (const char *p = s; *p; p++) {
		if (*p == '\'') {
			memcpy(out + o, "'\\''", 4);
			o += 4;
		} else {
			out[o++] = *p;
		}
	}
	out[o++] = '\'';
	out[o] = '\0';
	return out;
}

static const char *g_prog = "taskprof";

void tp_args_set_prog(const char *argv0)
{
	if (argv0 && *argv0)
		g_prog = argv0;
}

const char *tp_args_prog(void)
{
	return g_prog;
}
