/* SPDX-License-Identifier: MIT */
/*
 * cmd_op.c — `taskprof op [options] [--] APP [ARGS...]`: the operator
 * profiler's launcher (spec/opprof.md §4.1, §4.2, §4.6, §4.7, §4.12,
 * §4.13; issue 6 scope 4-7; docs/op.md, docs/op-internals.md).
 *
 * It validates the options, plans the passes for the platform of
 * TASKPROF_PLATFORM, creates <output>/OPPROF_<YYYYmmddHHMMSS>_<16 A-Z>/
 * with config.txt and plan.txt, runs the application under
 * libtaskprof_inject.so once (kernel and range replay) or once per pass
 * (application replay, then matches the runs), writes the report of every
 * profiled launch and prints the summary.
 *
 * Exit codes: the application's (killed by signal S: 128 + S); 2 bad usage;
 * 1 when the profiler failed (injector missing, application not
 * executable, injector failure status 70, a file the injector could not
 * open or write (its status pipe), application-replay mismatch, report
 * error, stdout not written); 130 / 143 / 129 when SIGINT / SIGTERM /
 * SIGHUP ends the report phase (temporary files removed, one line).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/args.h"
#include "base/error.h"
#include "base/file.h"
#include "base/tmp_registry.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/op_launch.h"
#include "op/config.h"
#include "op/groups.h"
#include "op/plan.h"
#include "op/report/report.h"

#define OP_MAX_RAW_EVENTS 64

/* Launcher-only settings: config.txt has no key for them (the injector
 * does not need them); they are recorded as comment lines. */
struct op_opts {
	struct tp_op_config cfg;
	const char *platform;      /* a2a3sim | a5sim */
	const char *output_parent; /* --output, default "." */
	bool output_given;         /* --output was on the command line */
	const char *aic_metrics;   /* NULL = Default */
	uint32_t group_mask;
	uint16_t ev_aic[OP_MAX_RAW_EVENTS], ev_aiv[OP_MAX_RAW_EVENTS];
	size_t n_ev_aic, n_ev_aiv;
	bool cache_control_all;    /* --cache-control */
	bool cache_control_set;
	enum op_match match;
	enum op_app_mode app_mode;
	bool app_opts_set;         /* --app-replay-match / -mode given */
	bool warm_up_set;
	bool list_passes;
};

/* Why writing stdout failed (0: not known yet), for the "writing stdout"
 * message at the end of cmd_op(). */
static int g_stdout_errno;

/* After writing stdout: flush it and, when that or an earlier write
 * failed, keep the cause (a failed fprintf leaves it in errno; stdio then
 * drops the buffer, so a later fflush has nothing to fail with). */
static void flush_stdout(void)
{
	int before = errno;
	errno = 0;
	if (fflush(stdout) != 0 && !g_stdout_errno)
		g_stdout_errno = errno ? errno : EIO;
	if (ferror(stdout) && !g_stdout_errno)
		g_stdout_errno = before ? before : EIO;
}

static void help(FILE *f)
{
	fprintf(f,
		"usage: taskprof op [options] [--] APP [ARGS...]\n"
		"       taskprof op --list-passes [--aic-metrics LIST] [--events SPEC]\n\n"
		"Profiles the kernel launches of APP, a host program on the device API\n"
		"(taskprof/rt.h), on the simulated device: the PMU counts 8 (a2a3sim) or\n"
		"10 (a5sim) events at once, so every profiled launch is run once per pass\n"
		"of the plan, each time from the same inputs, and the passes are merged.\n"
		"APP runs with libtaskprof_inject.so preloaded (found beside taskprof).\n"
		"The platform is -p/--platform, else TASKPROF_PLATFORM (a2a3sim, the\n"
		"default, or a5sim); APP runs with TASKPROF_PLATFORM set to it.\n\n"
		"Writes OUTPUT/OPPROF_<YYYYmmddHHMMSS>_<16 A-Z>/: config.txt, plan.txt,\n"
		"taskprof.log and device<D>/<kernel>/<k>/ per profiled launch with\n"
		"OpBasicInfo.csv, <Group>.csv, RawEvents.csv, ReplayInfo.csv, summary.json,\n"
		"trace.json (+ Instrumentation.csv, ScalarSections.csv). See docs/op.md.\n\n"
		"launch selection (per process and device, in this order):\n"
		"      --launch-skip-before-match N\n"
		"                            skip the first N launches of any kernel\n"
		"                            [0..1000, default 0]\n"
		"  -k, --kernel-name PAT[|PAT...]\n"
		"                            profile launches whose kernel name starts with\n"
		"                            PAT or matches it as a glob (* ? [..]);\n"
		"                            default: any kernel (-c says how many)\n"
		"      --launch-skip N       skip the first N matching launches [0..1000,\n"
		"                            default 0]\n"
		"  -c, --launch-count N      profile at most N launches [1..5000, default 1]\n"
		"      --kill on|off         on: end APP once N launches are profiled (the\n"
		"                            injector exits the process) [default off]\n\n"
		"what to collect:\n"
		"      --aic-metrics LIST    comma list of metric groups: PipeUtilization,\n"
		"                            ArithmeticUtilization, Memory, MemoryL0,\n"
		"                            MemoryUB, ResourceConflictRatio, L2Cache,\n"
		"                            BasicInfo (no events: timing only), Default\n"
		"                            (the seven CSV groups) [default Default]\n"
		"      --events aic:ID,...;aiv:ID,...\n"
		"                            raw event ids (decimal or 0x hex, 0..0xfffe,\n"
		"                            at most %d per core type) added to the plan\n"
		"      --list-passes         print the pass plan for the platform (-p) and\n"
		"                            exit 0; runs nothing (APP not needed; one\n"
		"                            given is not run, a note on stderr says so)\n"
		"      --instr on|off        pass the hidden instrumentation buffer: tp_mark*\n"
		"                            and tp_scalar_* points of the kernel land in\n"
		"                            Instrumentation.csv, ScalarSections.csv,\n"
		"                            trace.json [default on]\n"
		"      --instr-cap N         instrumentation points kept per block; the\n"
		"                            rest are counted as not fitting [1..1048576,\n"
		"                            default 4096]\n\n"
		"replay:\n"
		"      --replay-mode kernel|application|range\n"
		"                            kernel: replay each profiled launch inside APP\n"
		"                            (memory saved and restored); application: run\n"
		"                            APP once per pass; range: replay whole\n"
		"                            tp_rt_range_push/pop ranges (needs\n"
		"                            --range-markers on) [default kernel]\n"
		"      --warm-up N           discarded executions before the measured passes\n"
		"                            (kernel and range replay) [0..500, default 1]\n"
		"      --cache-control all|none\n"
		"                            reset caches before each pass; the simulated\n"
		"                            L2 starts empty at every execution anyway, so\n"
		"                            both measure a cold L2 (recorded)\n"
		"                            [default all; none in application replay]\n"
		"      --replay-restore all  restore every tracked allocation before each\n"
		"                            execution (dirty is not implemented) [all]\n"
		"      --replay-mem-limit BYTES|N%%\n"
		"                            snapshot budget in host memory, bytes (K/M/G/T\n"
		"                            suffix, 1024-based) or N%% (1..100) of device\n"
		"                            memory; above it the snapshot goes to a file in\n"
		"                            dump/, and without room for that the replay\n"
		"                            degrades [default 50%%]\n"
		"      --pass-timeout SEC    an execution running longer is a hang: the\n"
		"                            application is ended and the profile fails\n"
		"                            (kernel and range replay: use application\n"
		"                            replay) [1..86400, default 60]\n"
		"      --app-replay-match name|grid\n"
		"                            application replay: a launch is the same in two\n"
		"                            runs when name (name) or name and block_dim\n"
		"                            (grid) agree, then by occurrence [default grid]\n"
		"      --app-replay-mode strict|balanced|relaxed\n"
		"                            strict: same launches in the same order;\n"
		"                            balanced: same launches in any order; relaxed:\n"
		"                            keep launches profiled in every run, warn about\n"
		"                            the rest [default balanced]\n"
		"      --range-markers on|off\n"
		"                            honour tp_rt_range_push/pop: in every replay\n"
		"                            mode only launches inside a range are profiled\n"
		"                            (needed by range replay) [default off]\n"
		"      --target-processes main|all\n"
		"                            main: only the process taskprof started; all:\n"
		"                            its child processes too, waited for when they\n"
		"                            outlive it [default main]\n\n"
		"output:\n"
		"  -o, --output DIR          parent folder of OPPROF_* [default: the current\n"
		"                            folder]; created when missing\n"
		"  -p, --platform NAME       a2a3sim or a5sim [default: TASKPROF_PLATFORM,\n"
		"                            else a2a3sim]; APP gets it in TASKPROF_PLATFORM\n"
		"  -h, --help                this text\n\n"
		"signals: while APP runs, SIGINT, SIGTERM and SIGHUP sent to taskprof are\n"
		"passed on to APP with a SIGCONT (a stopped APP gets them too; the second\n"
		"of them kills it) and what was collected is reported; once APP has\n"
		"ended, they stop the report: its temporary files are removed, one line\n"
		"says so, exit 130 / 143 / 129.\n\n"
		"exit status: APP's (killed by signal S: 128+S); 1 the profiler failed\n"
		"(injector missing, APP not executable, injector error, a profile file\n"
		"that could not be written, application-replay mismatch, report error,\n"
		"stdout not written); 2 bad usage (an --output that cannot be a folder,\n"
		"or longer than 768 bytes, included)\n",
		OP_MAX_RAW_EVENTS);
}

/* Bytes of the well-formed UTF-8 character at @p (RFC 3629: no overlong
 * form, no surrogate, nothing above U+10FFFF), 1 for an ASCII byte; 0
 * when @p starts no such character. */
static size_t utf8_char_len(const unsigned char *p)
{
	if (p[0] < 0x80)
		return 1;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, lo = p[0] == 0xe0 ? 0xa0 : 0x80, hi = p[0] == 0xed ? 0x9f : 0xbf;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, lo = p[0] == 0xf0 ? 0x90 : 0x80, hi = p[0] == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* Whether the well-formed UTF-8 character of @c bytes at @p is a blank
 * or a control character beyond ASCII: a C1 control (U+0080..U+009F) or a
 * Unicode space or separator (U+00A0, U+1680, U+2000..U+200A,
 * U+2028, U+2029, U+202F, U+205F, U+3000; Unicode's White_Space). */
static bool utf8_blank_or_control(const unsigned char *p, size_t c)
{
	uint32_t cp;
	if (c == 2)
		cp = (uint32_t)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
	else if (c == 3)
		cp = (uint32_t)(p[0] & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
	else
		return false; /* ASCII is checked by the caller; none in 4 bytes */
	return (cp >= 0x80 && cp <= 0xa0) || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
	       cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* At most @n bytes of @s, with control characters as C escapes (\n, \r,
 * \t, \xHH), the bytes of a blank or control character beyond ASCII
 * (utf8_blank_or_control()) and each byte that is not part of a well-formed
 * UTF-8 character as \xHH (a terminal would show it as garbage, or take it for
 * part of an escape sequence), so that a message quoting a value stays
 * one readable line. */
static void put_escaped(FILE *f, const char *s, size_t n)
{
	for (const unsigned char *p = (const unsigned char *)s; *p && n; p++, n--) {
		size_t c = utf8_char_len(p);
		if (c > 1 && c <= n && utf8_blank_or_control(p, c)) {
			/* shown by its bytes: it would look like an ASCII
			 * blank, or break or garble the line */
			for (size_t i = 0; i < c; i++)
				fprintf(f, "\\x%02x", p[i]);
			p += c - 1;
			n -= c - 1;
		} else if (c > 1 && c <= n) {
			fwrite(p, 1, c, f);
			p += c - 1;
			n -= c - 1;
		} else if (c != 1) {
			fprintf(f, "\\x%02x", *p);
		} else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\r')
			fputs("\\r", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < ' ' || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

/* Bytes of a value a usage error quotes; a longer one is cut there (a
 * -k of 100,000 bytes made a 100-kB error line). */
#define SHOWN_BYTES 80

/* @s as a usage error quotes it: escaped (put_escaped()), and past
 * SHOWN_BYTES cut between characters (never inside a UTF-8 sequence) and
 * followed by "... (N bytes)", N its whole length. */
static void put_value(FILE *f, const char *s)
{
	const size_t len = strlen(s);
	size_t n = len;
	if (len > SHOWN_BYTES) {
		n = SHOWN_BYTES;
		/* s[n], the first byte left out, continues a character */
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	put_escaped(f, s, n);
	if (n < len)
		fprintf(f, "... (%zu bytes)", len);
}

static int bad(const char *opt, const char *val, const char *expected)
{
	fprintf(stderr, "taskprof op: %s expects %s, got '", opt, expected);
	put_value(stderr, val);
	fputs("'\n", stderr);
	return -EINVAL;
}

/* Whether @s holds a line break: config.txt, which carries --output and
 * --kernel-name to the injector, is one key=value per line. */
static bool has_line_break(const char *s)
{
	return strpbrk(s, "\n\r") != NULL;
}

static int parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	errno = 0;
	/* strtoul accepts a sign; a value is digits only. */
	if (*s < '0' || *s > '9') {
		char exp[96];
		snprintf(exp, sizeof(exp), "an integer from %u to %u", lo, hi);
		return bad(opt, s, exp);
	}
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		char exp[96];
		snprintf(exp, sizeof(exp), "an integer from %u to %u", lo, hi);
		return bad(opt, s, exp);
	}
	*out = (uint32_t)v;
	return 0;
}

/* @s is one of the NULL-terminated @words: its index, else -1. */
static int pick(const char *opt, const char *s, const char *const *words, const char *expected)
{
	for (int i = 0; words[i]; i++)
		if (!strcmp(s, words[i]))
			return i;
	bad(opt, s, expected);
	return -1;
}

static int parse_on_off(const char *opt, const char *s, bool *out)
{
	static const char *const w[] = { "off", "on", NULL };
	int i = pick(opt, s, w, "on or off");
	if (i < 0)
		return -EINVAL;
	*out = i == 1;
	return 0;
}

/*
 * --events aic:ID,...;aiv:ID,... — either part may be left out, each at
 * most once per option; repeated options add up.
 */
static int parse_events(const char *s, struct op_opts *o)
{
	static const char *const expected =
		"aic:ID,...;aiv:ID,... (ids decimal or 0x hex, 0..0xfffe)";
	char buf[4096];
	if (!*s || strlen(s) >= sizeof(buf))
		return bad("--events", s, expected);
	snprintf(buf, sizeof(buf), "%s", s);
	bool seen[2] = { false, false };
	/* strsep, not strtok: an empty part or id ("aic:1,,2") is an error. */
	char *rest = buf, *part;
	while ((part = strsep(&rest, ";"))) {
		int core;
		if (!strncmp(part, "aic:", 4))
			core = TP_OP_AIC;
		else if (!strncmp(part, "aiv:", 4))
			core = TP_OP_AIV;
		else
			return bad("--events", s, expected);
		if (seen[core])
			return bad("--events", s, "aic: and aiv: at most once each");
		seen[core] = true;
		uint16_t *ev = core == TP_OP_AIC ? o->ev_aic : o->ev_aiv;
		size_t *n = core == TP_OP_AIC ? &o->n_ev_aic : &o->n_ev_aiv;
		char *ids = part + 4, *id;
		while ((id = strsep(&ids, ","))) {
			char *end;
			errno = 0;
			if (*id < '0' || *id > '9')
				return bad("--events", s, expected);
			/* decimal, or hex after 0x: a leading 0 is not octal
			 * (010 is ten, as the help says) */
			bool hex = id[0] == '0' && (id[1] == 'x' || id[1] == 'X');
			if (hex && (!id[2] || id[2 + strspn(id + 2, "0123456789abcdefABCDEF")]))
				return bad("--events", s, expected);
			unsigned long v = strtoul(hex ? id + 2 : id, &end, hex ? 16 : 10);
			if (errno || *end || v >= TP_EV_NONE)
				return bad("--events", s, expected);
			if (*n >= OP_MAX_RAW_EVENTS) {
				char exp[64];
				snprintf(exp, sizeof(exp), "at most %d ids per core type",
					 OP_MAX_RAW_EVENTS);
				return bad("--events", s, exp);
			}
			/* An id given twice (in this option or an earlier one)
			 * is one event: planned, and warned about, once. */
			bool dup = false;
			for (size_t k = 0; k < *n; k++)
				dup |= ev[k] == (uint16_t)v;
			if (!dup)
				ev[(*n)++] = (uint16_t)v;
		}
	}
	if (!seen[0] && !seen[1])
		return bad("--events", s, expected);
	return 0;
}

/* --kernel-name: PAT|PAT..., each non-empty, UTF-8 text (a kernel's
 * name may be any, "kéadd"), without blanks or control characters (ASCII
 * or not): the list goes to config.txt on one line. */
static int check_kernel_name(const char *s)
{
	static const char *const expected =
		"PAT[|PAT...], each a non-empty prefix or glob of UTF-8 text without blanks or "
		"control characters, at most 1024 bytes in all";
	size_t n = strlen(s);
	if (!n || n > TP_OP_KERNEL_NAME_MAX || s[0] == '|' || s[n - 1] == '|' || strstr(s, "||"))
		return bad("--kernel-name", s, expected);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t c = utf8_char_len(p);
		if (!c || *p <= ' ' || *p == 0x7f || utf8_blank_or_control(p, c))
			return bad("--kernel-name", s, expected);
		p += c;
	}
	return 0;
}

/* TASKPROF_PLATFORM (set by -p, or the environment's) → platform name
 * and event space; cli_platform_env() says what a bad value is. */
static int platform_of_env(struct op_opts *o)
{
	const char *p = NULL;
	if (cli_platform_env("op", &p))
		return -EINVAL;
	if (p && !strcmp(p, "a5sim")) {
		o->platform = "a5sim";
		o->cfg.arch = TP_PMU_ARCH_A5;
	} else {
		o->platform = "a2a3sim";
		o->cfg.arch = TP_PMU_ARCH_A2A3;
	}
	return 0;
}

/* Parse argv into @o. Return: 0, 1 (--help printed: exit 0), -EINVAL. */
static int parse_args(int argc, char **argv, struct op_opts *o, int *app_index)
{
	enum { OPT_SKIP_BEFORE = 256, OPT_SKIP, OPT_METRICS, OPT_EVENTS, OPT_MODE, OPT_WARM,
	       OPT_CACHE, OPT_RESTORE, OPT_MEMLIM, OPT_MATCH, OPT_APPMODE, OPT_MARKERS,
	       OPT_KILL, OPT_TIMEOUT, OPT_LIST, OPT_TARGET, OPT_INSTR, OPT_INSTR_CAP };
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"platform", required_argument, NULL, 'p'},
		{"kernel-name", required_argument, NULL, 'k'},
		{"launch-skip-before-match", required_argument, NULL, OPT_SKIP_BEFORE},
		{"launch-skip", required_argument, NULL, OPT_SKIP},
		{"launch-count", required_argument, NULL, 'c'},
		{"aic-metrics", required_argument, NULL, OPT_METRICS},
		{"events", required_argument, NULL, OPT_EVENTS},
		{"replay-mode", required_argument, NULL, OPT_MODE},
		{"warm-up", required_argument, NULL, OPT_WARM},
		{"cache-control", required_argument, NULL, OPT_CACHE},
		{"replay-restore", required_argument, NULL, OPT_RESTORE},
		{"replay-mem-limit", required_argument, NULL, OPT_MEMLIM},
		{"app-replay-match", required_argument, NULL, OPT_MATCH},
		{"app-replay-mode", required_argument, NULL, OPT_APPMODE},
		{"range-markers", required_argument, NULL, OPT_MARKERS},
		{"kill", required_argument, NULL, OPT_KILL},
		{"pass-timeout", required_argument, NULL, OPT_TIMEOUT},
		{"list-passes", no_argument, NULL, OPT_LIST},
		{"target-processes", required_argument, NULL, OPT_TARGET},
		{"instr", required_argument, NULL, OPT_INSTR},
		{"instr-cap", required_argument, NULL, OPT_INSTR_CAP},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	static const char *const modes[] = { "kernel", "application", "range", NULL };
	static const char *const all_none[] = { "none", "all", NULL };
	static const char *const matches[] = { "name", "grid", NULL };
	static const char *const app_modes[] = { "strict", "balanced", "relaxed", NULL };
	static const char *const targets[] = { "main", "all", NULL };
	struct tp_op_config *c = &o->cfg;
	int opt, i;
	optind = 1;
	opterr = 0;
	/* '+': stop at APP, whose own options are its business. */
	while ((opt = getopt_long(argc, argv, "+:o:p:k:c:h", opts, NULL)) != -1) {
		int rc = 0;
		optarg = tp_arg_short_eq(optarg, argc, argv); /* -o=DIR: DIR */
		/* A value given as the next word that reads as an option
		 * (`-o -k APP`): the value is missing. "--output=-x" and
		 * "-o-x" are attached on purpose and taken. */
		if (optarg && optind >= 2 && optarg == argv[optind - 1] &&
		    tp_arg_is_option(optarg)) {
			fprintf(stderr, "taskprof op: %s expects a value, got '",
				tp_shown(argv[optind - 2]));
			put_value(stderr, optarg);
			fputs("', which is an option (see taskprof op --help)\n", stderr);
			return -EINVAL;
		}
		switch (opt) {
		case 'o':
			if (!*optarg)
				return bad("--output", optarg, "a folder");
			/* Refused before anything is created: config.txt could
			 * not carry the folder's path. */
			if (has_line_break(optarg))
				return bad("--output", optarg, "a folder whose path has no line "
					   "break (config.txt holds one value per line)");
			o->output_parent = optarg;
			o->output_given = true;
			break;
		case 'p':
			/* APP reads the variable (taskprof/rt.h), and so does
			 * platform_of_env() below. */
			if (strcmp(optarg, "a2a3sim") && strcmp(optarg, "a5sim"))
				return bad("--platform", optarg, "a2a3sim or a5sim");
			if (setenv("TASKPROF_PLATFORM", optarg, 1)) {
				fprintf(stderr, "taskprof op: setting TASKPROF_PLATFORM: %s\n",
					strerror(errno));
				return -EINVAL;
			}
			break;
		case 'k':
			rc = check_kernel_name(optarg);
			if (!rc)
				snprintf(c->kernel_name, sizeof(c->kernel_name), "%s", optarg);
			break;
		case OPT_SKIP_BEFORE:
			rc = parse_u32("--launch-skip-before-match", optarg, 0, TP_OP_SKIP_MAX,
				       &c->launch_skip_before_match);
			break;
		case OPT_SKIP:
			rc = parse_u32("--launch-skip", optarg, 0, TP_OP_SKIP_MAX, &c->launch_skip);
			break;
		case 'c':
			rc = parse_u32("--launch-count", optarg, 1, TP_OP_LAUNCH_COUNT_MAX,
				       &c->launch_count);
			break;
		case OPT_METRICS:
			/* An empty list is a mistake (an unset shell variable), not
			 * a request for the default: say so. */
			if (!*optarg)
				rc = bad("--aic-metrics", optarg,
					 "a comma list of metric groups (Default for all)");
			o->aic_metrics = optarg;
			break;
		case OPT_EVENTS:
			rc = parse_events(optarg, o);
			break;
		case OPT_MODE:
			i = pick("--replay-mode", optarg, modes, "kernel, application or range");
			if (i < 0)
				return -EINVAL;
			c->replay_mode = (enum tp_op_replay_mode)i;
			break;
		case OPT_WARM:
			rc = parse_u32("--warm-up", optarg, 0, TP_OP_WARM_UP_MAX, &c->warm_up);
			o->warm_up_set = true;
			break;
		case OPT_CACHE:
			i = pick("--cache-control", optarg, all_none, "all or none");
			if (i < 0)
				return -EINVAL;
			o->cache_control_all = i == 1;
			o->cache_control_set = true;
			break;
		case OPT_RESTORE:
			if (!strcmp(optarg, "dirty")) {
				fprintf(stderr, "taskprof op: --replay-restore dirty is not implemented "
						"(restoring only the pages a kernel wrote); use "
						"--replay-restore all\n");
				return -EINVAL;
			}
			if (strcmp(optarg, "all"))
				return bad("--replay-restore", optarg,
					   "all (dirty is not implemented)");
			break;
		case OPT_MEMLIM:
			if (tp_op_parse_mem_limit(optarg, &c->mem_limit_bytes, &c->mem_limit_pct))
				return bad("--replay-mem-limit", optarg,
					   "a byte count > 0 (optional B, K, M, G or T suffix) or N% "
					   "with N from 1 to 100");
			break;
		case OPT_MATCH:
			i = pick("--app-replay-match", optarg, matches, "name or grid");
			if (i < 0)
				return -EINVAL;
			o->match = i ? OP_MATCH_GRID : OP_MATCH_NAME;
			o->app_opts_set = true;
			break;
		case OPT_APPMODE:
			i = pick("--app-replay-mode", optarg, app_modes,
				 "strict, balanced or relaxed");
			if (i < 0)
				return -EINVAL;
			o->app_mode = (enum op_app_mode)i;
			o->app_opts_set = true;
			break;
		case OPT_MARKERS:
			rc = parse_on_off("--range-markers", optarg, &c->range_markers);
			break;
		case OPT_KILL:
			rc = parse_on_off("--kill", optarg, &c->kill);
			break;
		case OPT_TIMEOUT:
			rc = parse_u32("--pass-timeout", optarg, 1, TP_OP_PASS_TIMEOUT_MAX,
				       &c->pass_timeout_s);
			break;
		case OPT_LIST:
			o->list_passes = true;
			break;
		case OPT_TARGET:
			i = pick("--target-processes", optarg, targets, "main or all");
			if (i < 0)
				return -EINVAL;
			c->target_all = i == 1;
			break;
		case OPT_INSTR:
			rc = parse_on_off("--instr", optarg, &c->instr);
			break;
		case OPT_INSTR_CAP:
			rc = parse_u32("--instr-cap", optarg, 1, TP_OP_INSTR_CAP_MAX, &c->instr_cap);
			break;
		case 'h':
			errno = 0;
			help(stdout);
			flush_stdout();
			return 1;
		case ':':
			fprintf(stderr, "taskprof op: %s expects a value (see taskprof op --help)\n",
				tp_shown(argv[optind - 1]));
			return -EINVAL;
		default:
			fprintf(stderr, "taskprof op: unknown option '");
			put_value(stderr, argv[optind - 1]);
			fputs("' (see taskprof op --help)\n", stderr);
			return -EINVAL;
		}
		if (rc)
			return -EINVAL;
	}
	*app_index = optind;
	return 0;
}

/* Combinations that cannot work (spec §4.2 "rejects unsupported
 * combinations"); warnings for the ones that are merely pointless. */
static int check_combinations(struct op_opts *o)
{
	struct tp_op_config *c = &o->cfg;
	if (c->replay_mode == TP_OP_REPLAY_RANGE && !c->range_markers) {
		fprintf(stderr, "taskprof op: --replay-mode range needs --range-markers on (the "
				"ranges are the application's tp_rt_range_push/pop)\n");
		return -EINVAL;
	}
	if (o->app_opts_set && c->replay_mode != TP_OP_REPLAY_APPLICATION) {
		fprintf(stderr, "taskprof op: --app-replay-match and --app-replay-mode apply to "
				"--replay-mode application only (the mode is %s)\n",
			tp_op_replay_mode_name(c->replay_mode));
		return -EINVAL;
	}
	if (c->replay_mode == TP_OP_REPLAY_APPLICATION && o->warm_up_set && c->warm_up)
		fprintf(stderr, "taskprof op: warning: --warm-up is not used in application "
				"replay (each run executes a profiled launch once)\n");
	if (c->replay_mode == TP_OP_REPLAY_APPLICATION && c->target_all)
		fprintf(stderr, "taskprof op: warning: --target-processes all does not apply to "
				"application replay: it matches the launches of the main process "
				"only, and the processes the application starts run unprofiled "
				"(kernel or range replay profiles them)\n");
	if (c->replay_mode == TP_OP_REPLAY_RANGE && c->kill)
		fprintf(stderr, "taskprof op: warning: --kill on with range replay ends the "
				"application after the range that reaches --launch-count\n");
	if (!o->cache_control_set)
		o->cache_control_all = c->replay_mode != TP_OP_REPLAY_APPLICATION;
	return 0;
}

/* Groups and raw events → o->cfg.groups and o->cfg.plan. */
static int make_plan(struct op_opts *o)
{
	char err[512];
	if (tp_op_groups_parse(o->aic_metrics, &o->group_mask, err, sizeof(err))) {
		fprintf(stderr, "taskprof op: %s\n", tp_shown(err));
		return -EINVAL;
	}
	tp_op_groups_format(o->group_mask, o->cfg.groups, sizeof(o->cfg.groups));
	if (tp_op_plan_for_groups(o->cfg.arch, o->group_mask, o->ev_aic, o->n_ev_aic, o->ev_aiv,
				  o->n_ev_aiv, &o->cfg.plan, err, sizeof(err))) {
		fprintf(stderr, "taskprof op: cannot plan the passes: %s\n", err);
		return -EINVAL;
	}
	for (size_t i = 0; i < o->n_ev_aic + o->n_ev_aiv; i++) {
		uint16_t id = i < o->n_ev_aic ? o->ev_aic[i] : o->ev_aiv[i - o->n_ev_aic];
		if (!tp_op_event_name(o->cfg.arch, id))
			fprintf(stderr, "taskprof op: warning: --events: 0x%x is not an event of "
					"any %s group table; it may count nothing\n",
				id, tp_op_arch_name(o->cfg.arch));
	}
	return 0;
}

static void print_plan_header(FILE *f, const struct op_opts *o)
{
	fprintf(f, "# taskprof op plan: platform %s (arch %s, %u slots per core type), "
		   "groups %s%s: %u pass%s\n",
		o->platform, tp_op_arch_name(o->cfg.arch), o->cfg.plan.slots, o->cfg.groups,
		o->n_ev_aic + o->n_ev_aiv ? " + raw events" : "", o->cfg.plan.npasses,
		o->cfg.plan.npasses == 1 ? "" : "es");
}

/* Longest absolute --output folder, bytes. */
#define OP_OUTPUT_MAX 768

/* The absolute length @parent will have once created: its longest existing
 * prefix resolved, plus the components still to create (which, not
 * existing, hold no links). 0 when not even "." resolves: the check after
 * the creation decides then. @line_break: set when the resolved prefix
 * holds a line break (the current folder's path, a link's target). */
static size_t output_abs_len(const char *parent, bool *line_break)
{
	*line_break = false;
	size_t n = strlen(parent);
	if (n >= PATH_MAX)
		return n;
	char buf[PATH_MAX];
	memcpy(buf, parent, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	size_t cut = n;
	for (;;) {
		char abs[PATH_MAX];
		const char *base = cut ? buf : parent[0] == '/' ? "/" : ".";
		if (realpath(base, abs)) {
			size_t a = strlen(abs), rest = n - cut;
			*line_break = has_line_break(abs);
			/* "/" + "/x", or "." + "x" (joined by one '/') */
			return (a == 1 ? 0 : a) + rest + (cut == 0 && parent[0] != '/');
		}
		if (cut == 0)
			return 0;
		while (cut > 0 && buf[cut - 1] != '/')
			cut--;
		if (cut > 0)
			cut--; /* drop the '/' too */
		buf[cut] = '\0';
	}
}

/* 0 when @path names an executable regular file, else the errno execve()
 * would give (ENOENT, EACCES). */
static int exec_errno_of(const char *path)
{
	struct stat st;
	if (stat(path, &st))
		return errno;
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? EISDIR : EACCES; /* execve(): EACCES for both */
	return access(path, X_OK) ? errno : 0;
}

/*
 * What the kernel would refuse, or execvp() would run with /bin/sh (its
 * fallback for an ENOEXEC file, which makes a corrupt binary look like an
 * application that printed "not found" and exited 127), said before the
 * run: a #! script whose interpreter is missing, a folder or not
 * executable (a CRLF #! line names one with a carriage return), a file
 * that starts like an ELF file but whose identification bytes are not
 * valid, a binary file (a NUL byte in its first 256 bytes) that is
 * neither. A binary the kernel still refuses fails in op_exec_app(),
 * which never hands a binary to /bin/sh. A text file without #! is left to execvp(),
 * which runs it with /bin/sh as a shell would. @path: the file found for
 * @app. Return: 0, or -errno with the message set.
 */
static int check_format(const char *path, const char *app)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* not readable (execute-only): the exec decides */
	unsigned char b[256];
	ssize_t n;
	do
		n = read(fd, b, sizeof(b));
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return 0;
	if (n >= 2 && b[0] == '#' && b[1] == '!') {
		ssize_t i = 2;
		while (i < n && (b[i] == ' ' || b[i] == '\t'))
			i++;
		ssize_t s0 = i;
		/* The kernel ends the name at a blank or the line's end; a
		 * carriage return (CRLF line ends) is part of it. */
		while (i < n && b[i] != ' ' && b[i] != '\t' && b[i] != '\n')
			i++;
		if (i == s0 || i == n)
			return 0; /* no interpreter, or a line too long: the exec decides */
		const bool cr = b[i - 1] == '\r';
		char interp[256];
		snprintf(interp, sizeof(interp), "%.*s", (int)(i - s0 - (cr ? 1 : 0)),
			 (const char *)b + s0);
		struct stat ist;
		int e = 0;
		if (cr)
			e = ENOENT;
		else if (stat(interp, &ist))
			e = errno;
		else if (S_ISDIR(ist.st_mode))
			e = EISDIR;
		else if (access(interp, X_OK))
			e = errno;
		if (!e)
			return 0;
		return tp_set_error(-(e == EISDIR ? EACCES : e),
				    "cannot execute '%s': its interpreter '%s%s' (line 1, #!): %s%s",
				    app, interp, cr ? "\\r" : "", strerror(e),
				    cr ? " (the line ends in a carriage return: a file with CRLF "
					 "line ends)" : "");
	}
	if (n >= 4 && !memcmp(b, "\x7f" "ELF", 4)) {
		/* e_ident: class 1|2, data 1|2, version 1 (anything deeper,
		 * such as a truncated file, the exec itself refuses, and
		 * op_exec_app() reports it without /bin/sh). */
		if (n < 7 || (b[4] != 1 && b[4] != 2) || (b[5] != 1 && b[5] != 2) || b[6] != 1)
			return tp_set_error(-ENOEXEC, "cannot execute '%s': %s (it starts like an "
					    "ELF file, but its header is not valid)", app,
					    strerror(ENOEXEC));
		/* The ELF header: 52 bytes (32-bit), 64 (64-bit). */
		if (n < (b[4] == 1 ? 52 : 64))
			return tp_set_error(-ENOEXEC, "cannot execute '%s': %s (an ELF file cut "
					    "short: %zd bytes, fewer than its header's %d)", app,
					    strerror(ENOEXEC), n, b[4] == 1 ? 52 : 64);
		return 0;
	}
	if (memchr(b, 0, (size_t)n))
		return tp_set_error(-ENOEXEC, "cannot execute '%s': %s (a binary file that is "
				    "neither an ELF executable nor a #! script)", app,
				    strerror(ENOEXEC));
	return 0;
}

/*
 * Checks before anything is created that APP can be executed, as
 * execvp() would find it: a name with a '/' as it is, else the first
 * executable file of that name in $PATH (unset: /bin:/usr/bin), and that
 * its format is one the exec can run (check_format()); @path (@len
 * bytes) receives the file found. The
 * application's own exec failing later (it changed in between) is still
 * reported by op_exec_app(). Return: 0; -errno with the message set
 * ("cannot execute 'APP': reason").
 */
struct app_find {
	const char *app;
	int e;  /* errno so far: ENOENT, or EACCES once a file was found */
	int rc; /* check_format() of the one found */
	char *path; /* receives the one found */
	size_t len;
};

/* op_path_each() step of check_app(): 1 at the first executable file. */
static int find_one(const char *cand, void *arg)
{
	struct app_find *f = arg;
	int ce = exec_errno_of(cand);
	if (!ce) {
		f->rc = check_format(cand, f->app);
		snprintf(f->path, f->len, "%s", cand);
		return 1;
	}
	if (ce == EACCES)
		f->e = EACCES; /* found, not executable: unless a later one is */
	return 0;
}

static int check_app(const char *app, char *path, size_t len)
{
	int e = ENOENT;
	if (!*app) {
		e = ENOENT;
	} else if (strchr(app, '/')) {
		e = exec_errno_of(app);
		snprintf(path, len, "%s", app);
		if (!e)
			return check_format(app, app);
	} else {
		struct app_find f = { app, ENOENT, 0, path, len };
		if (op_path_each(app, find_one, &f))
			return f.rc;
		e = f.e;
	}
	return tp_set_error(-e, "cannot execute '%s': %s%s", app, strerror(e),
			    strchr(app, '/') ? "" : " (searched $PATH)");
}

/* Removes what cmd_op wrote into @dir before the application ran
 * (config.txt, plan.txt) and @dir itself when nothing else is in it. */
static void remove_unused_dir(const char *dir)
{
	char p[PATH_MAX + 16];
	op_pathf(p, sizeof(p), "%s/config.txt", dir);
	unlink(p);
	op_pathf(p, sizeof(p), "%s/plan.txt", dir);
	unlink(p);
	if (rmdir(dir) == 0)
		fprintf(stderr, "taskprof op: removed the unused output %s\n", tp_shown(dir));
}

/* The folder @parent resolves to has a line break in its absolute path
 * (the current folder's, or a link's target: --output itself was checked
 * when parsed), which config.txt cannot carry. */
static int line_break_error(const char *parent)
{
	char abs[PATH_MAX], shown[4 * PATH_MAX];
	const char *which = parent[0] != '/' && realpath(".", abs) && has_line_break(abs)
				    ? "the current folder" : "its absolute path";
	FILE *f = fmemopen(shown, sizeof(shown), "w");
	if (f) {
		put_escaped(f, parent, SIZE_MAX);
		fclose(f);
	} else {
		snprintf(shown, sizeof(shown), "%s", parent);
	}
	return tp_set_error(-EINVAL, "--output %s: %s has a line break, which config.txt (one "
			    "value per line) cannot carry; choose an --output folder whose "
			    "absolute path has none", shown, which);
}

/* Bytes of @dir as a path names it: repeated and trailing slashes count
 * once and not at all, as in the folder's absolute path. */
static size_t own_len(const char *dir)
{
	size_t n = 0;
	for (const char *p = dir; *p; p++)
		if (*p != '/' || (p[1] && p[1] != '/'))
			n++;
	return n;
}

/* @parent/OPPROF_<YYYYmmddHHMMSS>_<16 A-Z>, created with mkdir (a name
 * that exists is drawn again); @given: @parent came from --output (else it
 * is the default, "."). */
static int make_output_dir(const char *parent, bool given, char *out, size_t len)
{
	if (parent[0] != '/' && tp_cwd_removed()) {
		if (!given)
			return tp_set_error(-ENOENT, "the default output folder, the working "
					    "directory (--output chooses another): cannot create "
					    "the folder: %s", TP_CWD_REMOVED_WHY);
		return tp_set_error(-ENOENT, "--output %s: cannot create the folder: %s", parent,
				    TP_CWD_REMOVED_WHY);
	}
	/* Refuse a folder too long before creating any of it, so a refusal
	 * leaves no empty directories; checked again once it exists. */
	bool line_break;
	size_t est = output_abs_len(parent, &line_break);
	if (est > OP_OUTPUT_MAX)
		return tp_set_error(-ENAMETOOLONG, "--output: the folder's absolute path is %zu "
				    "bytes long; at most %d are supported (the report's files "
				    "and messages must fit below it)", est, OP_OUTPUT_MAX);
	if (line_break)
		return line_break_error(parent);
	int rc = tp_mkdir_p(parent, 0755);
	char why[2 * PATH_MAX + 128];
	if (rc && (rc == -ENOTDIR || !tp_path_bad_link(parent, why, sizeof(why))))
		snprintf(why, sizeof(why), "%s", strerror(-rc));
	if (rc == -ENOTDIR) {
		/* tp_mkdir_p() names the file in the way ("...: cannot create
		 * directory: F exists and is not a directory"); copied out of
		 * the error buffer before it is written again. */
		static const char tag[] = ": cannot create directory: ";
		const char *w = strstr(tp_last_error(), tag);
		if (w)
			snprintf(why, sizeof(why), "%s", w + sizeof(tag) - 1);
	}
	if (rc)
		return tp_set_error(rc, "--output %s: cannot create the folder: %s", parent, why);
	char abs[PATH_MAX];
	/* A concurrent run that failed may remove the empty folders just
	 * made (base/file.h tp_mkdir_fresh()): made again, up to 8 times. */
	for (int tries = 1; !realpath(parent, abs); tries++) {
		const int e = errno;
		if (e != ENOENT || tries == 8)
			return tp_set_error(-e, "--output %s: %s", parent, strerror(e));
		if ((rc = tp_mkdir_p(parent, 0755)))
			return tp_set_error(rc, "--output %s: cannot create the folder: %s", parent,
					    strerror(-rc));
	}
	if (has_line_break(abs)) /* a link changed since the check above */
		return line_break_error(parent);
	/* Below the OPPROF folder come device<D>/<kernel>/<k>/dump/pass_<p>.bin
	 * and the injector's messages naming them: keep room for both. */
	if (strlen(abs) > OP_OUTPUT_MAX)
		return tp_set_error(-ENAMETOOLONG, "--output: the folder's absolute path is %zu "
				    "bytes long; at most %d are supported (the report's files "
				    "and messages must fit below it)", strlen(abs), OP_OUTPUT_MAX);
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	char ts[32];
	strftime(ts, sizeof(ts), "%Y%m%d%H%M%S", &tm);
	int vanished = 0;
	for (int attempt = 0; attempt < 16; attempt++) {
		unsigned char r[16];
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
			/* No entropy source: time and pid still make clashes rare,
			 * and mkdir() below refuses a name that exists. */
			for (size_t i = 0; i < sizeof(r); i++)
				r[i] = (unsigned char)(rand() ^ (int)getpid() ^ (int)(now >> i));
		}
		char suffix[17];
		for (int i = 0; i < 16; i++)
			suffix[i] = (char)('A' + r[i] % 26);
		suffix[16] = 0;
		if ((size_t)snprintf(out, len, "%s/OPPROF_%s_%s", abs, ts, suffix) >= len)
			return tp_set_error(-ENAMETOOLONG, "--output %s: path too long", abs);
		if (mkdir(out, 0755) == 0)
			return 0;
		const int err = errno;
		/* ENOENT: the folder was removed since it was made or found (a
		 * concurrent `taskprof run` that failed removes the empty
		 * folders it made): made again, as tp_mkdir_p() does, a few
		 * times (the name drawn again too, harmless). */
		if (err == ENOENT && vanished < 8 && !tp_mkdir_p(abs, 0755)) {
			vanished++;
			continue;
		}
		if (err != EEXIST)
			return tp_set_error(-err, "%s: cannot create: %s", out, strerror(err));
	}
	return tp_set_error(-EEXIST, "%s/OPPROF_%s_*: no free name", abs, ts);
}

/* config.txt (tp_op_config_write) plus the launcher-only settings as
 * comment lines, which the reader skips. */
static int write_config(const struct op_opts *o, const char *path)
{
	int rc = tp_op_config_write(path, &o->cfg);
	if (rc)
		return rc;
	char *data = NULL;
	size_t len;
	rc = tp_read_file(path, &data, &len);
	if (rc)
		return tp_set_error(rc, "%s: %s", path, strerror(-rc));
	struct tp_file_tx tx;
	rc = tp_file_tx_begin(&tx, path, NULL);
	if (rc) {
		free(data);
		return rc;
	}
	fwrite(data, 1, len, tx.fp);
	free(data);
	fprintf(tx.fp,
		"# launcher (taskprof op), not read by the injector:\n"
		"# platform=%s\n"
		"# cache_control=%s   (the simulated L2 starts empty at every execution: either value)\n"
		"# replay_restore=all\n",
		o->platform, o->cache_control_all ? "all" : "none");
	if (o->cfg.replay_mode == TP_OP_REPLAY_APPLICATION)
		fprintf(tx.fp, "# app_replay_match=%s\n# app_replay_mode=%s\n",
			o->match == OP_MATCH_GRID ? "grid" : "name",
			o->app_mode == OP_APP_STRICT ? "strict" :
			o->app_mode == OP_APP_BALANCED ? "balanced" : "relaxed");
	return tp_file_tx_commit(&tx);
}

static int write_plan(const struct op_opts *o, const char *path)
{
	struct tp_file_tx tx;
	int rc = tp_file_tx_begin(&tx, path, NULL);
	if (rc)
		return rc;
	print_plan_header(tx.fp, o);
	tp_op_plan_print(tx.fp, &o->cfg.plan);
	return tp_file_tx_commit(&tx);
}

/* A launch directory found under <out>/device<D>/<name>/<k>. */
struct op_dir {
	int device;
	char name[256];
	unsigned long k;
	char path[4096];
};

static int dir_cmp(const void *pa, const void *pb)
{
	const struct op_dir *a = pa, *b = pb;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	return a->k < b->k ? -1 : a->k > b->k;
}

/* Whether @s is a non-empty string of digits; its value in @v. */
static bool all_digits(const char *s, unsigned long *v)
{
	if (!*s)
		return false;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	*v = strtoul(s, NULL, 10);
	return true;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Every <out>/device<D>/<name>/<k>/ holding a launch.txt, sorted. */
static int list_launch_dirs(const char *out, struct op_dir **dirs, size_t *n)
{
	*dirs = NULL;
	*n = 0;
	size_t cap = 0;
	DIR *d0 = opendir(out);
	if (!d0)
		return tp_set_error(-errno, "%s: %s", out, strerror(errno));
	struct dirent *e0;
	int rc = 0;
	while (!rc && (e0 = readdir(d0))) {
		unsigned long dev;
		if (strncmp(e0->d_name, "device", 6) || !all_digits(e0->d_name + 6, &dev))
			continue;
		char p1[4096];
		if (op_pathf(p1, sizeof(p1), "%s/%s", out, e0->d_name))
			continue;
		DIR *d1 = opendir(p1);
		if (!d1)
			continue;
		struct dirent *e1;
		while (!rc && (e1 = readdir(d1))) {
			if (e1->d_name[0] == '.')
				continue;
			char p2[4096];
			if (op_pathf(p2, sizeof(p2), "%s/%s", p1, e1->d_name))
				continue;
			DIR *d2 = opendir(p2);
			if (!d2)
				continue;
			struct dirent *e2;
			while (!rc && (e2 = readdir(d2))) {
				unsigned long k;
				if (!all_digits(e2->d_name, &k))
					continue;
				if (*n == cap) {
					cap = cap ? 2 * cap : 16;
					struct op_dir *nd = realloc(*dirs, cap * sizeof(*nd));
					if (!nd) {
						rc = tp_set_error(-ENOMEM, "out of memory");
						break;
					}
					*dirs = nd;
				}
				struct op_dir *od = &(*dirs)[*n];
				od->device = (int)dev;
				snprintf(od->name, sizeof(od->name), "%s", e1->d_name);
				od->k = k;
				if (!op_pathf(od->path, sizeof(od->path), "%s/%s", p2,
					      e2->d_name) && is_dir(od->path))
					(*n)++;
			}
			closedir(d2);
		}
		closedir(d1);
	}
	closedir(d0);
	if (*n)
		qsort(*dirs, *n, sizeof(**dirs), dir_cmp);
	return rc;
}

/*
 * Call @fn(@path, @ud) for each launches file of the run in @out, the
 * files the injector appends one line per launch to (application replay:
 * raw/run_0/launches.txt; kernel and range replay: <out>/launches_<pid>.txt
 * per process), until it returns non-zero. Return: @fn's non-zero value,
 * -1 when the folder cannot be listed, else 0 (also with no file: no
 * launch reached libtaskprof.so's tp_rt_launch).
 */
static int for_each_launches_file(const char *out, bool app_replay,
				  int (*fn)(const char *path, void *ud), void *ud)
{
	char path[4096];
	if (app_replay) {
		if (op_pathf(path, sizeof(path), "%s/raw/run_0/launches.txt", out))
			return -1;
		return fn(path, ud);
	}
	DIR *d = opendir(out);
	if (!d)
		return -1;
	struct dirent *e;
	int rc = 0;
	while (!rc && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, "launches", 8) || len < 12 ||
		    strcmp(e->d_name + len - 4, ".txt"))
			continue;
		rc = op_pathf(path, sizeof(path), "%s/%s", out, e->d_name) ? -1 : fn(path, ud);
	}
	closedir(d);
	return rc;
}

/* for_each_launches_file(): add the file's launches to *(int *)@ud; a
 * missing file has none. */
static int add_launches(const char *path, void *ud)
{
	int n = 0, p = 0;
	int rc = op_count_launches(path, &n, &p);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return -1;
	*(int *)ud += n;
	return 0;
}

/* Launches the application made, for the "nothing profiled" note.
 * Return: the count, or -1 when a file could not be read. */
static int count_app_launches(const char *out, bool app_replay)
{
	int total = 0;
	return for_each_launches_file(out, app_replay, add_launches, &total) ? -1 : total;
}

/* Call @fn on each line of the file at @path (without its newline). A
 * file that cannot be read calls nothing: the callers gather figures for
 * a message. Return: 0. */
static int for_each_line(const char *path, void (*fn)(const char *line, void *ud), void *ud)
{
	char *data = NULL;
	size_t len = 0;
	if (tp_read_file(path, &data, &len))
		return 0;
	for (char *line = data; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		fn(line, ud);
		line = nl ? nl + 1 : NULL;
	}
	free(data);
	return 0;
}

/* Distinct kernel names of the launches files (their "name=" fields),
 * for the "nothing profiled" message: at most KNOWN_NAMES_MAX kept,
 * @more counts the others. */
#define KNOWN_NAMES_MAX 8
struct known_names {
	char name[KNOWN_NAMES_MAX][64];
	int n, more;
};

/* for_each_line(): a launch line's kernel name into @ud (a struct
 * known_names), if not there yet. */
static void add_name_line(const char *line, void *ud)
{
	struct known_names *k = ud;
	const char *f = line[0] == '#' ? NULL : strstr(line, " name=");
	if (!f)
		return;
	f += 6;
	size_t w = strcspn(f, " ");
	for (int i = 0; i < k->n; i++)
		if (strlen(k->name[i]) == w && !strncmp(k->name[i], f, w))
			return;
	if (k->n < KNOWN_NAMES_MAX && w < sizeof(k->name[0]))
		snprintf(k->name[k->n++], sizeof(k->name[0]), "%.*s", (int)w, f);
	else
		k->more++;
}

/* for_each_launches_file(): add the file's kernel names to @ud (a struct
 * known_names). */
static int add_names(const char *path, void *ud)
{
	return for_each_line(path, add_name_line, ud);
}

/* What the injector's '#' lines of the launches files say (lines every
 * launch reader skips): launch calls the runtime rejected, which were
 * passed through unprofiled and are no launches ("# rejected ..."), and
 * whether --kill on ended a process ("# killed ..."). */
struct launch_marks {
	int rejected;
	bool killed;
};

/* for_each_line(): one line's mark into @ud (a struct launch_marks). */
static void scan_mark_line(const char *line, void *ud)
{
	struct launch_marks *m = ud;
	if (!strncmp(line, "# rejected ", 11))
		m->rejected++;
	else if (!strncmp(line, "# killed ", 9))
		m->killed = true;
}

/* for_each_launches_file(): the marks of one file into @ud (a struct
 * launch_marks). */
static int scan_marks_file(const char *path, void *ud)
{
	return for_each_line(path, scan_mark_line, ud);
}

/* The marks of the same files count_app_launches() reads. */
static struct launch_marks scan_launch_marks(const char *out, bool app_replay)
{
	struct launch_marks m = { 0, false };
	(void)for_each_launches_file(out, app_replay, scan_marks_file, &m);
	return m;
}

/* The file(s) listing every launch of the run in @out, for a message:
 * raw/run_0/launches.txt (application replay), the one launches_<pid>.txt
 * by its name, or "the launches_*.txt files" when processes made several.
 * Return: whether that names several files (the verb's number). */
static bool launches_file(const char *out, bool app_replay, char *buf, size_t len)
{
	snprintf(buf, len, app_replay ? "raw/run_0/launches.txt" : "the launches_*.txt files");
	if (app_replay)
		return false;
	DIR *d = opendir(out);
	if (!d)
		return true;
	int n = 0;
	struct dirent *e;
	char one[256] = "";
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (!strncmp(e->d_name, "launches_", 9) && l > 13 &&
		    !strcmp(e->d_name + l - 4, ".txt") && n++ == 0)
			snprintf(one, sizeof(one), "%s", e->d_name);
	}
	closedir(d);
	if (n == 1)
		snprintf(buf, len, "%s", one);
	return n != 1;
}

/* Remove the injector's .selection_<pid> files (its launch selection kept
 * across exec, src/op/inject/engine.c) from @dir: a process that ended
 * without its exit handlers (_exit(), SIGKILL, an exec into a program
 * without the injector) leaves its file behind. Called once the
 * application has ended; best effort (a file that cannot be removed is
 * only hidden clutter). */
static void sweep_selection_in(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char path[PATH_MAX];
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, ".selection_", 11) &&
		    !op_pathf(path, sizeof(path), "%s/%s", dir, e->d_name))
			(void)unlink(path);
	closedir(d);
}

/* sweep_selection_in() for the run in @out: @out itself, and each
 * raw/run_<i>/ of application replay. */
static void sweep_selection(const char *out, bool app_replay)
{
	sweep_selection_in(out);
	if (!app_replay)
		return;
	char raw[PATH_MAX], run[PATH_MAX];
	if (op_pathf(raw, sizeof(raw), "%s/raw", out))
		return;
	DIR *d = opendir(raw);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "run_", 4) &&
		    !op_pathf(run, sizeof(run), "%s/%s", raw, e->d_name))
			sweep_selection_in(run);
	closedir(d);
}

/* Whether a call of the application (its main process in application
 * replay) reached the injector: the injector creates the process's
 * launches file at its first device API call (inj_engine_api_called()),
 * whether it launches or not. */
static bool api_reached(const char *out, bool app_replay)
{
	char path[4096];
	if (app_replay)
		return !op_pathf(path, sizeof(path), "%s/raw/run_0/launches.txt", out) &&
		       access(path, F_OK) == 0;
	DIR *d = opendir(out);
	if (!d)
		return true; /* unknown: not said */
	bool any = false;
	struct dirent *e;
	while (!any && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		any = !strncmp(e->d_name, "launches_", 9) && l > 13 &&
		      !strcmp(e->d_name + l - 4, ".txt");
	}
	closedir(d);
	return any;
}

/* Why no call reached the injector, on stderr and in NOTE.txt (@fp):
 * @app_path, the application's file, has the runtime linked in, or the
 * usual causes. */
static void say_no_api(FILE *fp, const struct op_opts *o, const char *app_path, bool note)
{
	const char *pre = note ? "" : "taskprof op: ";
	if (app_path && *app_path && op_app_defines_runtime(app_path)) {
		fprintf(fp, "%s%s has the device runtime linked in (it defines tp_rt_launch: "
			    "libtaskprof_core.a linked statically), so its calls never go through "
			    "libtaskprof.so, where taskprof op's injector (LD_PRELOAD) intercepts "
			    "them; link it with libtaskprof.so (-ltaskprof) to profile it\n", pre,
			note ? app_path : tp_shown(app_path));
		return;
	}
	fprintf(fp, "%sthe injector (LD_PRELOAD) sees the calls to the tp_rt_* functions of "
		    "libtaskprof.so only: the application does not use the device API, or it "
		    "has the runtime linked in statically (libtaskprof_core.a) or calls it "
		    "through dlsym on a dlopen handle of its own%s\n", pre,
		o->cfg.replay_mode == TP_OP_REPLAY_APPLICATION ?
			"; application replay profiles the main process only" :
		!o->cfg.target_all ? "; child processes of the application are profiled "
				     "only with --target-processes all" : "");
}

/* What a run that profiled nothing saw, for write_note(). */
struct note_facts {
	int launched;         /* the application's launches (application replay:
			       * run 1's); -1: unknown */
	int rejected;         /* its launch calls the runtime rejected (no launches) */
	bool no_api;          /* none of its calls reached the injector (api_reached()) */
	const char *app_path; /* its file */
	int dropped;          /* application replay (relaxed): launches profiled in
			       * some runs, not in all, so dropped */
};

/* NOTE.txt and the stderr line when no launch was profiled, from @f. */
static void write_note(const struct op_opts *o, const char *out, const struct note_facts *f)
{
	const int launched = f->launched, rejected = f->rejected, dropped = f->dropped;
	const bool no_api = f->no_api;
	const char *app_path = f->app_path;
	char path[4096], what[512], sel[1400], rej[200] = "";
	op_pathf(path, sizeof(path), "%s/NOTE.txt", out);
	if (rejected > 0)
		snprintf(rej, sizeof(rej), " and made %d launch call%s the runtime rejected "
			 "(passed through unprofiled)", rejected, rejected == 1 ? "" : "s");
	/* Unknown when the injector left no launches.txt (it writes one per
	 * process): say nothing rather than guess. */
	if (no_api)
		snprintf(what, sizeof(what), "no call of the application reached the device API "
			 "through taskprof op's injector; ");
	else if (dropped > 0)
		snprintf(what, sizeof(what), "the runs did not launch the same kernels: application "
			 "replay (relaxed) dropped the %d launch%s profiled in some runs but not in "
			 "every run (see the warning%s above), and run 1 launched %d kernel%s%s; ",
			 dropped, dropped == 1 ? "" : "es", dropped == 1 ? "" : "s",
			 launched < 0 ? 0 : launched, launched == 1 ? "" : "s", rej);
	else if (launched < 0)
		what[0] = 0;
	else
		snprintf(what, sizeof(what), "the application launched %d kernel%s%s; ", launched,
			 launched == 1 ? "" : "s", rej);
	snprintf(sel, sizeof(sel), "--kernel-name %s, --launch-skip-before-match %u, "
				   "--launch-skip %u",
		 o->cfg.kernel_name[0] ? o->cfg.kernel_name : "(unset: any kernel)",
		 o->cfg.launch_skip_before_match, o->cfg.launch_skip);
	fprintf(stderr, "taskprof op: no kernel launch was profiled (%sselection: %s)\n", what,
		tp_shown(sel));
	if (no_api)
		say_no_api(stderr, o, app_path, false);
	/* A --kernel-name that matched nothing: the names it could have
	 * matched. */
	struct known_names kn = { .n = 0 };
	if (launched > 0 && o->cfg.kernel_name[0]) {
		(void)for_each_launches_file(out, o->cfg.replay_mode == TP_OP_REPLAY_APPLICATION,
					     add_names, &kn);
		if (kn.n) {
			fprintf(stderr, "taskprof op: the kernels it launched:");
			for (int i = 0; i < kn.n; i++)
				fprintf(stderr, "%s %s", i ? "," : "", tp_shown(kn.name[i]));
			if (kn.more)
				fprintf(stderr, " and %d more", kn.more);
			fprintf(stderr, "\n");
		}
	}
	bool range = o->cfg.range_markers;
	if (range)
		fprintf(stderr, "taskprof op: with --range-markers on only launches between "
				"tp_rt_range_push and tp_rt_range_pop are profiled; did the "
				"application open a range?\n");
	struct tp_file_tx tx;
	if (tp_file_tx_begin(&tx, path, NULL)) {
		fprintf(stderr, "taskprof op: warning: %s\n", tp_last_error());
		return;
	}
	fprintf(tx.fp, "No kernel launch was profiled, so this report is empty.\n");
	if (no_api) {
		fprintf(tx.fp, "No call of the application reached the device API (tp_rt_*) "
			       "through taskprof op's injector.\n");
		say_no_api(tx.fp, o, app_path, true);
	} else if (dropped > 0) {
		fprintf(tx.fp, "The runs did not launch the same kernels: application replay "
			       "(--app-replay-mode relaxed) dropped the %d launch%s profiled in some "
			       "runs but not in every run (the warnings on stderr name them).\n"
			       "Run 1 launched %d kernel%s.\n", dropped, dropped == 1 ? "" : "es",
			launched < 0 ? 0 : launched, launched == 1 ? "" : "s");
	} else if (launched >= 0) {
		fprintf(tx.fp, "The application launched %d kernel%s.\n", launched,
			launched == 1 ? "" : "s");
	}
	if (rejected > 0)
		fprintf(tx.fp, "It also made %d tp_rt_launch call%s that the runtime rejected (a "
			       "NULL kernel, a block_dim out of range, an unknown attr->cores, a "
			       "device that cannot be opened): passed through unprofiled, with the "
			       "runtime's error, and not counted as launches (the '# rejected' "
			       "lines of the launches files).\n", rejected,
			rejected == 1 ? "" : "s");
	fprintf(tx.fp, "Selection: %s, --replay-mode %s.\n%s", sel,
		tp_op_replay_mode_name(o->cfg.replay_mode),
		no_api ? "" :
		dropped > 0 ? "Application replay profiles a launch only when every run profiled "
			      "it: each run must make the same launches (a deterministic "
			      "application).\n" :
		launched == 0 && rejected > 0 ?
			"None of its tp_rt_launch calls was a kernel launch to profile.\n" :
		launched == 0 && o->cfg.replay_mode == TP_OP_REPLAY_APPLICATION ?
			"The main process made no tp_rt_launch call (or it did not use "
			"libtaskprof.so's device API). Application replay profiles the main "
			"process only; kernel or range replay with --target-processes all "
			"profiles the processes it starts.\n" :
		launched == 0 ? "The application made no tp_rt_launch call (or it did not use "
				"libtaskprof.so's device API). Child processes of the "
				"application are profiled only with --target-processes all.\n" :
				"Launches before the skips and launches whose name does not match "
				"--kernel-name are not profiled; a kernel that never reaches "
				"tp_rt_launch of libtaskprof.so cannot be.\n");
	if (range)
		fprintf(tx.fp, "With --range-markers on only launches between tp_rt_range_push "
			       "and tp_rt_range_pop are profiled.\n");
	if (tp_file_tx_commit(&tx))
		fprintf(stderr, "taskprof op: warning: %s\n", tp_last_error());
}


/* Whether launch.txt @path says the launch was interrupted before its
 * first measured pass (a SIGINT in the warm-up): status=interrupted,
 * passes_done=0. Such a launch has nothing to report. */
static bool interrupted_before_pass(const char *path)
{
	char *data = NULL;
	if (tp_read_file(path, &data, NULL))
		return false;
	/* name= is the first line: both keys follow a newline */
	bool r = strstr(data, "\nstatus=interrupted\n") && strstr(data, "\npasses_done=0\n");
	free(data);
	return r;
}

/* Report every launch directory; print the summary table. @inj_failed: the
 * injector reported files it could not write (a launch.txt missing is then
 * its doing, not the application's). Return: the number of launch
 * directories; *@complete set to how many of them hold a whole profile
 * (launch.txt and a measured pass; the others were skipped with a
 * message), *@unmeasured to how many were skipped because a SIGINT came
 * before their first pass, *@notreplayed to how many of the reported ones
 * the injector did not replay (status=skipped: a range that spans a device
 * switch; they have a table row); *@failed set when one failed
 * (reported). */

/* Whether @name is one of the comma-separated @groups. */
static bool has_group(const char *groups, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = groups; *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return true;
		if (!c)
			break;
		p = c + 1;
	}
	return false;
}

/* A plan with ResourceConflictRatio, whose counters the simulated PMU
 * does not model (platform/pmu_events.c tp_pmu_group_model_note()): said
 * after the table, so that its zeros are not read as measurements. */
static void print_unmodelled_note(const struct tp_op_config *cfg)
{
	if (!has_group(cfg->groups, "ResourceConflictRatio"))
		return;
	printf("note: the simulated PMU does not model bank conflicts: the ResourceConflictRatio "
	       "counters read 0%s (docs/pmu.md \"Per event id\")\n",
	       cfg->arch == TP_PMU_ARCH_A5 ? ", except a5's idu_pmu_ins_iss_cnt" : "");
}

static int report_all(const struct op_opts *o, const char *out, bool inj_failed, int *complete,
		      int *unmeasured, int *notreplayed, int *lfailed, bool *failed)
{
	*complete = 0;
	*unmeasured = 0;
	*notreplayed = 0;
	*lfailed = 0;
	struct op_dir *dirs;
	size_t n;
	if (list_launch_dirs(out, &dirs, &n)) {
		fprintf(stderr, "taskprof op: %s\n", tp_last_error());
		*failed = true;
		return 0;
	}
	struct tp_op_launch_summary *sum = calloc(n ? n : 1, sizeof(*sum));
	if (!sum) {
		free(dirs);
		fprintf(stderr, "taskprof op: out of memory\n");
		*failed = true;
		return 0;
	}
	size_t done = 0;
	for (size_t i = 0; i < n; i++) {
		/* The injector writes launch.txt last; without it the process
		 * ended while that launch was being profiled (it exited or was
		 * killed from inside a pass). That is the application's outcome,
		 * reported by its exit status, not a failure of the profiler. */
		char lt[4200];
		struct stat st;
		/* A snapshot spilled to disk (docs/op.md "Limits") that the
		 * application did not live to remove: it is no result. */
		if (!op_pathf(lt, sizeof(lt), "%s/dump/snapshot.bin", dirs[i].path) &&
		    unlink(lt) == 0)
			fprintf(stderr, "taskprof op: removed %s (the replay's spilled snapshot: the "
					"application ended during the replay)\n", tp_shown(lt));
		if (!op_pathf(lt, sizeof(lt), "%s/launch.txt", dirs[i].path) &&
		    stat(lt, &st) != 0 && errno == ENOENT) {
			if (inj_failed)
				fprintf(stderr, "taskprof op: %s: incomplete profile, no launch.txt "
						"(the profiler could not write its files, see "
						"above); skipped\n", tp_shown(dirs[i].path));
			else
				fprintf(stderr, "taskprof op: warning: %s: incomplete profile, no "
						"launch.txt (the application ended while this "
						"launch was being profiled); skipped\n",
					tp_shown(dirs[i].path));
			continue;
		}
		/* Written, but with no pass: the SIGINT came during the
		 * warm-up. Not a profiled launch (no table row, not counted). */
		if (interrupted_before_pass(lt)) {
			fprintf(stderr, "taskprof op: %s: interrupted before its first pass (no "
					"pass measured); skipped\n", tp_shown(dirs[i].path));
			(*unmeasured)++;
			continue;
		}
		if (tp_op_report_launch(dirs[i].path, &o->cfg, &sum[done])) {
			fprintf(stderr, "taskprof op: report of %s failed: %s\n",
				tp_shown(dirs[i].path), tp_last_error());
			*failed = true;
			continue;
		}
		if (!strcmp(sum[done].status, "skipped"))
			(*notreplayed)++;
		else if (!strcmp(sum[done].status, "failed"))
			(*lfailed)++;
		done++;
	}
	if (done) {
		fflush(stderr);
		errno = 0;
		tp_op_report_print_summary(stdout, sum, done);
		print_unmodelled_note(&o->cfg);
		flush_stdout();
	}
	free(sum);
	free(dirs);
	*complete = (int)done;
	return (int)n;
}

/*
 * Whether the injector ended the application with a fatal error: its exit
 * status is OP_INJECT_FAILURE_STATUS and the injector left its mark
 * (OP_INJECT_FAILURE_MARK) in @out. Without the mark, status
 * 70 is the application's own (EX_SOFTWARE is a common exit status).
 */
static bool injector_failed(const char *out, int code)
{
	char mark[4200];
	return code == OP_INJECT_FAILURE_STATUS &&
	       !op_pathf(mark, sizeof(mark), "%s/%s", out, OP_INJECT_FAILURE_MARK) &&
	       access(mark, F_OK) == 0;
}

/*
 * The injector left its mark in @out although the application did not end
 * with OP_INJECT_FAILURE_STATUS: the failure was in another process of
 * the application (--target-processes all), which exited 70 while the
 * application went on. Says so with the mark's lines. Return: whether
 * there was a mark.
 */
static bool report_other_injector_failure(const char *out)
{
	char mark[4200], *data = NULL;
	if (op_pathf(mark, sizeof(mark), "%s/%s", out, OP_INJECT_FAILURE_MARK) ||
	    tp_read_file(mark, &data, NULL))
		return false;
	for (char *save = NULL, *l = strtok_r(data, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		fprintf(stderr, "taskprof op: the profiler failed inside a process of the "
				"application (%.600s); see %s/taskprof.log\n", tp_shown(l),
				tp_shown(out));
	free(data);
	return true;
}

/*
 * The injector failed (exit status 70): say so, and name each launch it
 * marked status=failed with its note (a restore that failed, a pass that
 * timed out), from the launch.txt of every <out>/device<D>/<name>/<k>/
 * (in application replay: under raw/run_<i>/).
 */
static void report_injector_failure(const char *out, int run)
{
	if (run >= 0)
		fprintf(stderr, "taskprof op: the profiler failed inside the application in run "
				"%d (injector exit status %d); see %s/taskprof.log\n",
			run, OP_INJECT_FAILURE_STATUS, tp_shown(out));
	else
		fprintf(stderr, "taskprof op: the profiler failed inside the application "
				"(injector exit status %d); see %s/taskprof.log\n",
			OP_INJECT_FAILURE_STATUS, tp_shown(out));
	char base[4200];
	if (run >= 0)
		op_pathf(base, sizeof(base), "%s/raw/run_%d", out, run);
	else
		op_pathf(base, sizeof(base), "%s", out);
	struct op_dir *dirs;
	size_t n;
	if (list_launch_dirs(base, &dirs, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		char path[4200], *data = NULL;
		if (op_pathf(path, sizeof(path), "%s/launch.txt", dirs[i].path) ||
		    tp_read_file(path, &data, NULL))
			continue;
		if (strstr(data, "\nstatus=failed\n")) {
			char *note = strstr(data, "\nnote=");
			if (note) {
				note += 6;
				note[strcspn(note, "\n")] = '\0';
			}
			fprintf(stderr, "taskprof op: %s: failed: %s\n", tp_shown(dirs[i].path),
				note ? tp_shown(note) : "");
		}
		free(data);
	}
	free(dirs);
}

/*
 * An application killed by a signal may have died while its injector wrote
 * a file (SIGXFSZ past ulimit -f, a SIGKILL): remove the temporary files it
 * left under @dir, the run's output folder, where nothing else writes
 * while the application is gone, and say how many.
 */
static void sweep_after_kill(const struct op_exec_result *r, const char *dir)
{
	if (!r->term_sig)
		return;
	unsigned n = 0;
	int rc = tp_file_tx_sweep(dir, &n);
	if (n)
		fprintf(stderr, "taskprof op: removed %u temporary file%s the application left "
				"in %s\n", n, n == 1 ? "" : "s", tp_shown(dir));
	if (rc)
		fprintf(stderr, "taskprof op: %s: looking for temporary files the application "
				"left: %s\n", tp_shown(dir), strerror(-rc));
}

/*
 * What one run of the application (@run: its index in application replay,
 * -1 otherwise) leaves to say: the signal that killed it, unless taskprof
 * was interrupted itself; the files the injector could not open or write,
 * a profiler failure; the temporary files a killed application left in
 * @dir are removed. Return: whether there were such files.
 */
static bool report_run(const struct op_exec_result *r, int run, const char *dir)
{
	char which[64] = "";
	if (run >= 0)
		snprintf(which, sizeof(which), " (run %d, pass %d)", run + 1, run);
	if (r->term_sig && !r->interrupted) {
		const char *abbrev = sigabbrev_np(r->term_sig);
		char name[32];
		if (abbrev)
			snprintf(name, sizeof(name), "SIG%s", abbrev);
		else
			snprintf(name, sizeof(name), "signal %d", r->term_sig);
		fprintf(stderr, "taskprof op: the application%s was killed by %s (%s)%s\n", which,
			name, strsignal(r->term_sig),
			r->term_sig == SIGXFSZ ? ": a file it wrote (the profiler's files inside "
						 "it included) passed the file size limit, "
						 "ulimit -f" : "");
	}
	sweep_after_kill(r, dir);
	if (!r->n_failures)
		return false;
	/* "<pid> <message>" (op/config.h TP_OP_STATUS_FD_ENV) */
	char *end;
	long pid = strtol(r->failure, &end, 10);
	const char *msg = r->failure;
	char where[64] = "";
	if (pid > 0 && *end == ' ') {
		msg = end + 1;
		if (run >= 0)
			snprintf(where, sizeof(where), " (run %d, pass %d, pid %ld)", run + 1, run,
				 pid);
		else
			snprintf(where, sizeof(where), " (pid %ld)", pid);
	} else {
		snprintf(where, sizeof(where), "%s", which);
	}
	fprintf(stderr, "taskprof op: the profiler failed inside the application%s: %s", where,
		tp_shown(msg));
	if (r->n_failures > 1)
		fprintf(stderr, " (and %u more: see above and taskprof.log)", r->n_failures - 1);
	fputc('\n', stderr);
	return true;
}

/*
 * TASKPROF_DEBUG_NO_RESTORE=1 (docs/op-internals.md) is a switch for
 * taskprof's own tests: kernel and range replay then restore nothing, so a
 * kernel that changes its inputs leaves the application wrong results and
 * its passes differ. Left set by mistake it would only show in
 * taskprof.log (the injector reads it, not the launcher): said here,
 * before the run. Application replay restores nothing anyway.
 */
static void warn_debug_env(const struct op_opts *o)
{
	const char *v = getenv("TASKPROF_DEBUG_NO_RESTORE");
	if (!v || strcmp(v, "1") || o->cfg.replay_mode == TP_OP_REPLAY_APPLICATION)
		return;
	fprintf(stderr, "taskprof op: warning: TASKPROF_DEBUG_NO_RESTORE=1 is set: the replay "
			"restores no device memory before an execution (a switch for "
			"taskprof's own tests), so a kernel that changes its inputs gives the "
			"application wrong results and differs between passes; unset it to "
			"profile\n");
}

/* The application is gone: from here on SIGINT / SIGTERM / SIGHUP stop
 * the report as they stop `taskprof run` (cli/interrupt.h): the report's
 * temporary files are removed, one line names @dir, exit 128 + S. */
static void report_phase_signals(const char *dir)
{
	tp_tmpreg_set_dir(dir);
	cli_interrupt_install("taskprof op");
}

/* Application replay: one run per pass, then match them. @stopped: set
 * when a run failed, or an interrupt came before any run completed, and
 * nothing is to be reported. Return: the
 * application's exit code, or -1 (profiler failure, reported). */
static int run_application_replay(const struct op_opts *o, struct op_exec *x, const char *out,
				  bool *stopped, int *dropped)
{
	int passes = (int)o->cfg.plan.npasses;
	int runs = 0, code = 0;
	/* Where stdin stands now (-1: not a file): each run starts there. */
	const off_t stdin_at = lseek(STDIN_FILENO, 0, SEEK_CUR);
	for (int i = 0; i < passes; i++) {
		char raw[4200];
		op_pathf(raw, sizeof(raw), "%s/raw/run_%d", out, i);
		int rc = tp_mkdir_p(raw, 0755);
		if (rc) {
			fprintf(stderr, "taskprof op: %s: cannot create: %s\n", tp_shown(raw),
				strerror(-rc));
			return -1;
		}
		fprintf(stderr, "taskprof op: application replay: run %d of %d (pass %d)\n", i + 1,
			passes, i);
		struct op_exec_result res;
		x->pass = i;
		/* Every run reads the same input: a stdin that is a file starts
		 * again where the first run started (a pipe cannot; docs/op.md). */
		if (i > 0 && stdin_at >= 0)
			(void)lseek(STDIN_FILENO, stdin_at, SEEK_SET);
		code = op_exec_app(x, &res);
		if (code < 0) {
			fprintf(stderr, "taskprof op: %s\n", tp_last_error());
			return -1;
		}
		if (injector_failed(out, code)) {
			report_injector_failure(out, i);
			return -1;
		}
		if (report_run(&res, i, out)) {
			fprintf(stderr, "taskprof op: application replay stopped after run %d of %d "
					"(pass %d); no report (the runs in %s/raw/)\n", i + 1, passes, i,
				tp_shown(out));
			return -1;
		}
		if (res.interrupted) {
			if (!runs) {
				fprintf(stderr, "taskprof op: interrupted during run 1 of %d (pass "
						"0), before any run completed: no report (what it "
						"wrote is in %s/raw/run_0/)\n", passes,
						tp_shown(out));
				*stopped = true;
				return code;
			}
			fprintf(stderr, "taskprof op: interrupted during run %d of %d (pass %d); the "
					"report uses the %d run%s completed before it\n",
				i + 1, passes, i, runs, runs == 1 ? "" : "s");
			break;
		}
		if (code != 0) {
			fprintf(stderr, "taskprof op: application replay stopped: run %d of %d "
					"(pass %d) exited with status %d; no report (the runs in "
					"%s/raw/)\n", i + 1, passes, i, code, tp_shown(out));
			*stopped = true;
			return code;
		}
		runs++;
		/* The selection is the same in every run: when the first one
		 * launched kernels but profiled none, the others would not
		 * either (the application must be deterministic). */
		if (i == 0 && passes > 1) {
			char lf[4300];
			int n = 0, p = 0;
			op_pathf(lf, sizeof(lf), "%s/launches.txt", raw);
			if (op_count_launches(lf, &n, &p) == 0 && n > 0 && p == 0) {
				fprintf(stderr, "taskprof op: application replay: run 1 profiled no "
						"launch (%d made), so the other %d run%s would not "
						"either: skipped\n",
					n, passes - 1, passes - 1 == 1 ? "" : "s");
				break;
			}
		}
	}
	report_phase_signals(out);
	if (runs == 0)
		return code;
	int n_launches = 0, n_merged = 0;
	if (op_app_replay_merge(out, runs, passes, o->match, o->app_mode, &n_launches,
				&n_merged, dropped)) {
		fprintf(stderr, "taskprof op: %s\n", tp_last_error());
		return -1;
	}
	fprintf(stderr, "taskprof op: application replay: %d run%s matched, %d launch%s "
			"profiled\n",
		runs, runs == 1 ? "" : "s", n_merged, n_merged == 1 ? "" : "es");
	return code;
}

int cmd_op(int argc, char **argv)
{
	struct op_opts *o = calloc(1, sizeof(*o));
	if (!o) {
		fprintf(stderr, "taskprof op: out of memory\n");
		return 1;
	}
	tp_op_config_defaults(&o->cfg);
	o->output_parent = ".";
	o->match = OP_MATCH_GRID;
	o->app_mode = OP_APP_BALANCED;
	int app = 0, ret = 2;
	/* A write past `ulimit -f` must fail with EFBIG, reported naming the
	 * file, rather than kill taskprof half way and leave *.tmp files.
	 * main() may ignore SIGXFSZ for every command too; this is then a
	 * no-op. The application still gets the disposition taskprof started
	 * with (op_exec.c). */
	struct sigaction xfsz;
	if (sigaction(SIGXFSZ, NULL, &xfsz) == 0 && xfsz.sa_handler != SIG_IGN)
		signal(SIGXFSZ, SIG_IGN);
	int rc = parse_args(argc, argv, o, &app);
	if (rc) {
		ret = rc > 0 ? 0 : 2;
		goto out;
	}
	if (platform_of_env(o) || check_combinations(o) || make_plan(o))
		goto out;
	if (o->list_passes) {
		/* Said, not refused: the plan is what was asked for, and the
		 * help has APP as not needed. */
		if (app < argc) {
			fprintf(stderr, "taskprof op: --list-passes prints the plan and runs nothing: "
					"'");
			put_value(stderr, argv[app]);
			fputs("' is not run (without --list-passes it is profiled)\n", stderr);
		}
		errno = 0;
		print_plan_header(stdout, o);
		tp_op_plan_print(stdout, &o->cfg.plan);
		flush_stdout();
		ret = 0; /* a failed write of stdout: 1 at out */
		goto out;
	}
	if (app >= argc) {
		fprintf(stderr, "taskprof op: missing APP: taskprof op [options] [--] APP "
				"[ARGS...] (see taskprof op --help)\n");
		goto out;
	}
	ret = 1;
	char inject[PATH_MAX];
	if (op_inject_path(inject, sizeof(inject))) {
		fprintf(stderr, "taskprof op: %s\n", tp_last_error());
		goto out;
	}
	/* ld.so splits LD_PRELOAD at blanks and colons: such a path would
	 * preload nothing and the application would run unprofiled. */
	if (strpbrk(inject, " \t:")) {
		fprintf(stderr, "taskprof op: the injector's path '%s' contains a blank or a "
				"colon, which LD_PRELOAD cannot carry; install taskprof in a "
				"folder whose path has neither\n", tp_shown(inject));
		goto out;
	}
	char app_path[PATH_MAX] = "";
	if (check_app(argv[app], app_path, sizeof(app_path))) {
		fprintf(stderr, "taskprof op: %s\n", tp_last_error());
		goto out;
	}
	char dir[PATH_MAX];
	int mrc = make_output_dir(o->output_parent, o->output_given, dir, sizeof(dir));
	if (mrc) {
		fprintf(stderr, "taskprof op: %s\n", tp_last_error());
		/* A file (or a link to nothing) in the way of --output, or a
		 * DIR too long by itself, is bad usage, as for `taskprof run`;
		 * other failures (permissions, a full disk, a current folder
		 * too deep for a relative DIR) are the profiler's. */
		if ((mrc == -ENAMETOOLONG && own_len(o->output_parent) > OP_OUTPUT_MAX) ||
		    tp_dir_blocked(o->output_parent))
			ret = 2;
		goto out;
	}
	snprintf(o->cfg.output, sizeof(o->cfg.output), "%s", dir);
	char config[PATH_MAX + 16], plan[PATH_MAX + 16];
	op_pathf(config, sizeof(config), "%s/config.txt", dir);
	op_pathf(plan, sizeof(plan), "%s/plan.txt", dir);
	if (write_config(o, config) || write_plan(o, plan)) {
		fprintf(stderr, "taskprof op: %s\n", tp_last_error());
		remove_unused_dir(dir);
		goto out;
	}
	fprintf(stderr, "taskprof op: output %s\n", tp_shown(dir));
	fprintf(stderr, "taskprof op: %s replay on %s, groups %s: %u pass%s (plan.txt)\n",
		tp_op_replay_mode_name(o->cfg.replay_mode), o->platform, o->cfg.groups,
		o->cfg.plan.npasses, o->cfg.plan.npasses == 1 ? "" : "es");
	warn_debug_env(o);

	struct op_exec x = { .inject_lib = inject, .config_path = config, .pass = -1,
			     .argv = argv + app, .wait_all = o->cfg.target_all };
	int code;
	bool app_replay = o->cfg.replay_mode == TP_OP_REPLAY_APPLICATION, inj_failed = false;
	/* The application's own non-zero exit status (it ended by exit()),
	 * said at the end: taskprof op passes it on, and 1 or 2 from the
	 * application would otherwise read as taskprof op's own failure. */
	int app_status = 0;
	/* Application replay (relaxed): launches dropped, not profiled in
	 * every run. */
	int app_dropped = 0;
	if (app_replay) {
		bool stopped = false;
		code = run_application_replay(o, &x, dir, &stopped, &app_dropped);
		if (code < 0)
			goto out;
		if (stopped) {
			ret = code;
			goto out;
		}
	} else {
		struct op_exec_result res;
		code = op_exec_app(&x, &res);
		if (code < 0) {
			fprintf(stderr, "taskprof op: %s\n", tp_last_error());
			remove_unused_dir(dir);
			goto out;
		}
		if (injector_failed(dir, code)) {
			report_injector_failure(dir, -1);
			goto out;
		}
		report_phase_signals(dir);
		inj_failed = report_run(&res, -1, dir);
		/* A child's injector failed while the application went on. */
		if (report_other_injector_failure(dir))
			inj_failed = true;
		if (res.interrupted)
			fprintf(stderr, "taskprof op: interrupted; reporting what was collected\n");
		else if (!res.term_sig)
			app_status = code;
	}
	/* The application has ended: no image of its processes resumes a
	 * selection any more. */
	sweep_selection(dir, app_replay);
	/* An injector failure is reported, and blames neither the selection
	 * (NOTE.txt) nor the application (a launch.txt it could not write). */
	bool failed = inj_failed;
	int complete = 0, unmeasured = 0, notreplayed = 0, lfailed = 0;
	int n = report_all(o, dir, inj_failed, &complete, &unmeasured, &notreplayed, &lfailed,
			   &failed);
	const struct launch_marks mk = scan_launch_marks(dir, app_replay);
	if (n == 0 && !failed) {
		const struct note_facts f = { .launched = count_app_launches(dir, app_replay),
					      .rejected = mk.rejected,
					      /* launches dropped: later runs reached it */
					      .no_api = !app_dropped && !api_reached(dir, app_replay),
					      .app_path = app_path, .dropped = app_dropped };
		write_note(o, dir, &f);
	}
	if (n > 0) {
		/* How many were profiled, of how many: the default profiles one
		 * launch only, which a user may not expect (in range replay
		 * too, where -c counts launches, not ranges). */
		int m = count_app_launches(dir, app_replay);
		char list[300];
		const char *verb = launches_file(dir, app_replay, list, sizeof(list)) ? "list"
										      : "lists";
		/* Launches whose profile is incomplete, or that were
		 * interrupted before their first pass, were skipped above: not
		 * counted as profiled, but said, so the count matches the table. */
		char inc[400] = "";
		int incomplete = n - complete - unmeasured;
		const char *its = unmeasured == 1 ? "its" : "their";
		if (incomplete && unmeasured)
			snprintf(inc, sizeof(inc), "; %d incomplete and %d interrupted before "
				 "%s first pass, skipped (see above)", incomplete, unmeasured, its);
		else if (incomplete)
			snprintf(inc, sizeof(inc), "; %d incomplete, skipped (see above)",
				 incomplete);
		else if (unmeasured)
			snprintf(inc, sizeof(inc), "; %d interrupted before %s first pass, "
				 "skipped (see above)", unmeasured, its);
		/* Reported (a table row, status skipped) but not measured. */
		if (notreplayed) {
			size_t l = strlen(inc);
			snprintf(inc + l, sizeof(inc) - l, "; %d not replayed (status skipped, see "
				 "above)", notreplayed);
			complete -= notreplayed;
		}
		/* Reported (a table row, status failed: a kernel that failed,
		 * a range never popped) with no measured pass to show. */
		if (lfailed) {
			size_t l = strlen(inc);
			snprintf(inc + l, sizeof(inc) - l, "; %d failed (status failed, see above)",
				 lfailed);
			complete -= lfailed;
		}
		/* Calls the runtime rejected: no launches, not in m. */
		if (mk.rejected) {
			size_t l = strlen(inc);
			snprintf(inc + l, sizeof(inc) - l, "; %d launch call%s the runtime "
				 "rejected (passed through unprofiled, not counted as launches)",
				 mk.rejected, mk.rejected == 1 ? "" : "s");
		}
		/* With --kill on, m is what the application made before the
		 * injector ended it, not what it would have made. */
		if (m > n && mk.killed)
			fprintf(stderr, "taskprof op: profiled %d of the %d kernel launches the "
					"application made before --kill on ended it "
					"(--launch-count %u, the selection and the skips decide "
					"which; %s %s them all)%s; output %s\n",
				complete, m, o->cfg.launch_count, list, verb, inc, tp_shown(dir));
		else if (m > n)
			fprintf(stderr, "taskprof op: profiled %d of the application's %d kernel "
					"launches (--launch-count %u, the selection and the skips "
					"decide which; %s %s them all)%s; output %s\n",
				complete, m, o->cfg.launch_count, list, verb, inc, tp_shown(dir));
		else
			fprintf(stderr, "taskprof op: profiled %d kernel launch%s%s%s; output %s\n",
				complete, complete == 1 ? "" : "es",
				mk.killed ? ", then --kill on ended the application" : "", inc,
				tp_shown(dir));
	} else {
		fprintf(stderr, "taskprof op: output %s\n", tp_shown(dir));
	}
	if (failed) {
		fprintf(stderr, "taskprof op: the profiler failed (see above); the application "
				"exited with status %d\n",
			code);
		goto out;
	}
	if (app_status)
		fprintf(stderr, "taskprof op: the application exited with status %d (passed on as "
				"taskprof op's)\n", app_status);
	ret = code;
out:
	/* The summary table, the plan or the help text: a stdout that could
	 * not be written (a full disk, a closed pipe) fails the command. */
	if (ret != 2) {
		flush_stdout();
		if (g_stdout_errno) {
			fprintf(stderr, "taskprof op: writing stdout: %s\n",
				strerror(g_stdout_errno));
			ret = 1;
		}
	}
	free(o);
	return ret;
}
