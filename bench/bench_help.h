/* SPDX-License-Identifier: MIT */
/*
 * bench_help.h — the -h / --help of the benchmark programs that take at
 * most positional arguments: prints @usage on stdout and exits 0; any
 * other option (a word starting with '-') is a usage error (exit 2).
 */
#ifndef TASKPROF_BENCH_HELP_H
#define TASKPROF_BENCH_HELP_H

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

#endif /* TASKPROF_BENCH_HELP_H */
