/* SPDX-License-Identifier: MIT */
/*
 * bench_help.h — the -h / --help of the benchmark programs that take at
 * most positional arguments: prints @usage on stdout and exits 0; any
 * other option (a word starting with '-') is a usage error (exit 2).
 * bench_count() reads a count argument strictly.
 */
#ifndef TASKPROF_BENCH_HELP_H
#define TASKPROF_BENCH_HELP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void bench_help(int argc, char **argv, const char *usage)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			exit(0);
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "%s: unknown option '%s'\n%s", argv[0], argv[i], usage);
			exit(2);
		}
	}
}

/* @s ("WHAT", e.g. "TASKS" or "BENCH_RECORDS") as a decimal integer in
 * [@lo, @hi]; anything else (a sign, junk after the digits, out of range)
 * prints "PROG: WHAT expects an integer from LO to HI, got 'S'" and exits
 * 2. */
static inline unsigned long long bench_count(const char *prog, const char *what, const char *s,
					     unsigned long long lo, unsigned long long hi)
{
	char *end = NULL;
	unsigned long long v = 0;
	int ok = s && *s >= '0' && *s <= '9';
	if (ok) {
		errno = 0;
		v = strtoull(s, &end, 10);
		ok = !errno && !*end && v >= lo && v <= hi;
	}
	if (!ok) {
		fprintf(stderr, "%s: %s expects an integer from %llu to %llu, got '%s'\n", prog, what,
			lo, hi, s ? s : "");
		exit(2);
	}
	return v;
}

#endif /* TASKPROF_BENCH_HELP_H */
