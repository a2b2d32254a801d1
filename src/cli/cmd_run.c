/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c — `taskprof run CASE`: run one case of a built-in callable, or
 * of the callable a case shared object declares (taskprof/case.h,
 * TP_CASE_ENTRY_SYMBOL), on the simulated device, check its golden and
 * print one result line (ARCHITECTURE.md §5, spec/runtime-model.md §4, §6).
 *
 * Exit codes: 0 golden pass, 1 golden failure or a failed run, 2 bad usage.
 */
#include <dlfcn.h>
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <getopt.h>
#include <inttypes.h>
#include <locale.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/args.h"
#include "base/error.h"
#include "base/file.h"
#include "base/progress.h"
#include "base/tmp_registry.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "platform/platform.h"
#include "taskprof/taskprof.h"
#include "taskprof/worker.h"
#include "tools/swimlane/trace.h"
#include "tools/pmu/pmu_report.h"
#include "platform/pmu_events.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: taskprof run CASE [options]\n\n"
		"Runs one case of CASE on the simulated device with the task runtime, checks\n"
		"its outputs against the golden and prints one result line: host wall,\n"
		"device wall, orchestrator and scheduler times, task count, tasks/s and\n"
		"PASS / FAIL. Each run writes OUTPUT_ROOT/<callable>_<case>_<YYYYMMDD_HHMMSS>/\n"
		"result.txt (<callable>: CASE's callable name, for a shared object the name\n"
		"its tp_case_callable() gives).\n\n"
		"CASE is a built-in callable or the path of a case shared object (a name with\n"
		"a '/' or ending in .so) that defines\n"
		"  const struct tp_callable *tp_case_callable(void);   (taskprof/case.h)\n\n"
		"CASE (built-in):\n");
	for (size_t i = 0; tp_callable_at(i); i++) {
		const struct tp_callable *c = tp_callable_at(i);
		fprintf(f, "  %-18s cases:", c->name);
		for (int k = 0; k < c->n_cases; k++)
			fprintf(f, " %s%s", c->cases[k].name,
				!strcmp(c->cases[k].name, c->default_case) ? " (default)" : "");
		fprintf(f, "\n");
	}
	fprintf(f,
		"\noptions:\n"
		"      --case NAME          the case to run; default: the callable's default\n"
		"  -p, --platform NAME      a2a3sim or a5sim (default: TASKPROF_PLATFORM if\n"
		"                           set, else a2a3sim)\n"
		"      --runtime NAME       tensormap_and_ringbuffer (default) or\n"
		"                           host_build_graph (graph built on the host first)\n"
		"      --block-dim N        clusters (1 AIC + 2 AIV each), 1..24 on a2a3sim,\n"
		"                           1..36 on a5sim; default 8\n"
		"      --aicpu-threads N    1 orchestrator + schedulers, 2..4 on a2a3sim,\n"
		"                           2..7 on a5sim; host_build_graph: all schedule,\n"
		"                           from 1; default 4\n"
		"      --rounds N           run the case N times (1..1000000), outputs reset\n"
		"                           and checked each round; figures of the last; default 1\n"
		"      --stall-timeout SECONDS\n"
		"                           fail the run after SECONDS without progress (no\n"
		"                           task finishing while tasks run or wait, or the\n"
		"                           orchestrator blocked on a full ring); 0.001..86400,\n"
		"                           decimals allowed, 0: never; default 10; time the\n"
		"                           process is stopped (Ctrl-Z until fg) does not count;\n"
		"                           checked with a resolution of about 150 ms (the\n"
		"                           message says how long there was no progress)\n"
		"      --early-dispatch     stage a consumer gated on an idle core before its\n"
		"                           producers finish (the runtime's early dispatch)\n"
		"      --no-early-dispatch  never; default: on when CASE asks for it\n"
		"                           (synthetic does)\n"
		"      --enable-dep-gen     record the task graph of the first round into\n"
		"                           deps.json (and the name map) in the run folder\n"
		"      --enable-l2-swimlane [LEVEL]\n"
		"                           L2 swimlane of the first round, LEVEL 0..4 (bare:\n"
		"                           4): 1 AICore timing, 2 + AICPU dispatch/finish,\n"
		"                           3 + scheduler phases, 4 + orchestrator submits;\n"
		"                           writes l2_swimlane_records.json and converts it to\n"
		"                           merged_swimlane.json (open in ui.perfetto.dev)\n"
		"      --enable-pmu [N]     per-task PMU counters, event group N (bare: 2):\n"
		"                           1 ARITHMETIC_UTILIZATION, 2 PIPE_UTILIZATION,\n"
		"                           4 MEMORY, 5 MEMORY_L0, 6 RESOURCE_CONFLICT,\n"
		"                           7 MEMORY_UB, 8 L2_CACHE (others: 2 with a warning;\n"
		"                           0 or negative: off, a negative N with the same\n"
		"                           warning); TASKPROF_PMU_EVENT_TYPE (or\n"
		"                           SIMPLER_PMU_EVENT_TYPE) overrides N; one task per\n"
		"                           core at a time (early dispatch off); off\n"
		"                           with --rounds > 1; writes pmu.csv and prints\n"
		"                           its summary (taskprof pmu); the simulator does not\n"
		"                           model bank conflicts: most of RESOURCE_CONFLICT\n"
		"                           reads 0\n"
		"  -o, --output DIR         output root; default ./outputs\n"
		"  -h, --help               this text\n\n"
		"environment:\n"
		"  TASKPROF_LOG_LEVEL       DEBUG, INFO, TIMING (default), WARN, ERROR or a\n"
		"                           number; DEBUG adds what the device threads and\n"
		"                           each profiling pool's host threads cost\n"
		"  TASKPROF_SIM_AICPU_SLICE_US\n"
		"                           100..100000: ask Linux >= 6.12 for that host\n"
		"                           scheduling slice (µs) for the AICPU threads;\n"
		"                           unset or 0: the host's default\n"
		"  TASKPROF_SIM_AICPU_PIN   auto (default): keep the AICPU threads on a\n"
		"                           share of the host's CPUs (one of 2); off: leave\n"
		"                           them to the host's scheduler\n\n"
		"exit status: 0 golden pass, 1 golden failure, failed run or stdout not\n"
		"written ('taskprof run: writing stdout: <reason>', e.g. a full device or\n"
		"a reader that went away: the run's files are still complete), 2 bad usage,\n"
		"130 / 143 / 129 interrupted by SIGINT / SIGTERM / SIGHUP (temporary files\n"
		"removed), 128 + signal when the process crashed (a kernel or the case's\n"
		"code: one line names the signal and the thread, temporary files removed;\n"
		"exit() called by the case's code during the run gives such a line and 1)\n");
}

static int parse_int(const char *opt, const char *s, long lo, long hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	/* strtol skips leading blanks: " 8" is not a number here either. */
	if (errno || end == s || *end || v < lo || v > hi || isspace((unsigned char)*s)) {
		if (!strcmp(opt, "--block-dim"))
			fprintf(stderr, "taskprof run: --block-dim expects clusters, 1..24 on a2a3sim "
					"or 1..36 on a5sim, got '%s'\n", tp_shown(s));
		else if (!strcmp(opt, "--aicpu-threads"))
			fprintf(stderr, "taskprof run: --aicpu-threads expects 2..4 on a2a3sim or "
					"2..7 on a5sim (1 with host_build_graph), got '%s'\n",
				tp_shown(s));
		else
			fprintf(stderr, "taskprof run: %s expects an integer from %ld to %ld, got '%s'\n",
				opt, lo, hi, tp_shown(s));
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

/* Bounds of --stall-timeout, in ms. */
#define STALL_TIMEOUT_MAX_MS (86400ull * 1000)

/*
 * --stall-timeout SECONDS: decimal seconds with at most 3 decimals
 * ("2.5", "0.25", "10"), no sign or exponent; 0 means never
 * (TP_WORKER_STALL_NEVER), else 0.001 to 86400. On success *ms holds
 * the timeout in ms. Return: 0, or -EINVAL after one line on stderr.
 */
static int parse_stall_timeout(const char *s, uint64_t *ms)
{
	const char *p = s;
	uint64_t whole = 0, frac = 0;
	int ndig = 0, nfrac = 0;
	bool bad = false;
	for (; *p >= '0' && *p <= '9'; p++, ndig++)
		if (whole <= STALL_TIMEOUT_MAX_MS)
			whole = whole * 10 + (uint64_t)(*p - '0');
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, nfrac++) {
			if (nfrac < 3)
				frac = frac * 10 + (uint64_t)(*p - '0');
			else if (*p != '0')
				bad = true; /* finer than a millisecond */
		}
	}
	for (int i = nfrac; i < 3; i++)
		frac *= 10;
	uint64_t v = whole * 1000 + frac;
	if (bad || *p || ndig + nfrac == 0 || whole > STALL_TIMEOUT_MAX_MS / 1000 ||
	    v > STALL_TIMEOUT_MAX_MS) {
		fprintf(stderr, "taskprof run: --stall-timeout expects seconds, 0 (never) or "
				"0.001 to 86400 with at most 3 decimals, got '%s'\n", s);
		return -EINVAL;
	}
	*ms = v ? v : TP_WORKER_STALL_NEVER;
	return 0;
}

/*
 * Whether @n, the argument after an optional-value flag, is meant as its
 * value: it starts like a number (blanks, a sign, then a digit) or is
 * empty. It is then consumed and checked in full, so "2x" gets the flag's
 * own message instead of "unexpected argument"; a CASE never looks so.
 */
static bool looks_like_value(const char *n)
{
	while (*n == ' ' || *n == '\t')
		n++;
	if (*n == '-' || *n == '+')
		n++;
	if (*n == '.') /* "-.5": a number (argparse), an invalid int below */
		n++;
	return *n == 0 || (*n >= '0' && *n <= '9');
}

/*
 * --enable-l2-swimlane [LEVEL] (seed 002 §3.1): the level is the
 * "=LEVEL" value, or the next argument when it is an integer (then it is
 * consumed); a bare flag means 4. An integer outside 0..4 is an error.
 */
/* The word that followed a bare --enable-l2-swimlane / --enable-pmu and
 * was not taken as its value (not number-like), and that option: when it
 * turns out to be one positional argument too many, the error says it was
 * meant as the value ("--enable-pmu abc gemm"). */
static const char *g_after_bare, *g_bare_opt;

static void note_bare(const char *opt, int argc, char **argv)
{
	if (optind < argc && argv[optind][0] != '-') {
		g_after_bare = argv[optind];
		g_bare_opt = opt;
	}
}

static int parse_swimlane_level(const char *val, int argc, char **argv, int *level)
{
	const char *s = val;
	if (!s && optind < argc && looks_like_value(argv[optind]))
		s = argv[optind++];
	else if (!s)
		note_bare("--enable-l2-swimlane", argc, argv);
	if (!s) {
		*level = 4;
		return 0;
	}
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 4) {
		fprintf(stderr, "taskprof run: --enable-l2-swimlane expects a level from 0 to 4 "
				"(or none for 4), got '%s'\n", s);
		return -EINVAL;
	}
	*level = (int)v;
	return 0;
}

/*
 * Whether stdout still works: 0, or the errno of the first failed write,
 * kept in *@err (a full device, a reader that went away: SIGPIPE is
 * ignored, main.c). Once stdout is gone the run still writes and
 * converts its files; only what is nothing but stdout (the PMU summary)
 * is skipped, and cmd_run() reports the failure once at the end.
 */
static int stdout_failed(int *err)
{
	if (!*err)
		*err = -tp_stream_flush(stdout);
	return *err;
}

/* Run the converter on @records: @dir/merged_swimlane.json. A failure to
 * write stdout is not the converter's: it goes to *@out_err (see
 * stdout_failed()). Return: the converter's exit code. */
static int convert_swimlane(const char *records, const char *dir, char *trace, size_t len,
			    int *out_err)
{
	snprintf(trace, len, "%s/merged_swimlane.json", dir);
	/* "--output=PATH" and "--" before the records: paths of an output
	 * root that starts with '-' are not taken for options. */
	char *oarg = NULL;
	if (asprintf(&oarg, "--output=%s", trace) < 0) {
		fprintf(stderr, "Error: out of memory\n");
		return 1;
	}
	char *args[] = { "swimlane", oarg, "--", (char *)records, NULL };
	stdout_failed(out_err);
	int serr = 0;
	int rc = sl_convert_run(4, args, &serr, true);
	free(oarg);
	if (serr && !*out_err)
		*out_err = serr;
	return rc;
}

/* Append @line (and a newline) to @dir/result.txt, which the Worker wrote:
 * a failure after the run (the trace conversion) is recorded where the
 * run's outcome is. Best effort: the caller has reported the failure. */
static void append_result_line(const char *dir, const char *line)
{
	char path[4200];
	if (snprintf(path, sizeof(path), "%s/result.txt", dir) >= (int)sizeof(path))
		return;
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "%s\n", line);
	if (fclose(f))
		fprintf(stderr, "taskprof run: warning: cannot note the failed trace in %s: %s\n",
			tp_shown(path), strerror(errno));
}

/* A one-line dlerror() (it never holds a newline today; be sure). */
static const char *dl_msg(void)
{
	static char buf[512];
	const char *e = dlerror();
	/* One line: a path in it shows a newline as \n (tp_shown()). */
	snprintf(buf, sizeof(buf), "%s", tp_shown(e ? e : "unknown error"));
	return buf;
}


/* Whether @s holds a control character (a newline, a tab, ...): names
 * are printed in one-line results, tables and folder names. */
static bool has_control(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* A name of @c (the callable, a case, a kernel) with a control character:
 * the message (in @buf), or NULL when there is none. */
static const char *bad_names(const struct tp_callable *c, char *buf, size_t len)
{
	if (has_control(c->name))
		return "returned a callable whose name has a control character";
	for (int k = 0; c->cases && k < c->n_cases; k++)
		if (has_control(c->cases[k].name)) {
			snprintf(buf, len, "returned a callable whose case %d has a control "
				 "character in its name", k);
			return buf;
		}
	for (int k = 0; c->kernels && k < c->n_kernels; k++)
		if (has_control(c->kernels[k].name)) {
			snprintf(buf, len, "returned a callable whose kernel %d (func_id %d) has a "
				 "control character in its name", k, c->kernels[k].func_id);
			return buf;
		}
	return NULL;
}

/* ELF symbol type names for the ABI check's message. */
static const char *sym_type_name(unsigned t)
{
	switch (t) {
	case STT_NOTYPE: return "an untyped symbol";
	case STT_OBJECT: return "an object";
	case STT_FUNC: return "a function";
	case STT_TLS: return "a thread-local variable";
	case STT_GNU_IFUNC: return "an indirect function";
	default: return "a symbol of another type";
	}
}

/*
 * Check the struct layouts case object @h (@path; @entry: its entry
 * symbol's address) was compiled against: its TP_CASE_ABI_SYMBOL, a
 * `const struct tp_case_abi` of its own (a lookup through the handle also
 * searches its dependencies, libtaskprof.so among them, which define one
 * too), must equal this taskprof's. Its type and size are checked before
 * it is read (a 1-byte symbol at the end of a page faulted).
 * Return: false when it matches; true after one line on stderr.
 */
static bool bad_abi(void *h, void *entry, const char *path)
{
	static const struct tp_case_abi mine = TP_CASE_ABI_INIT;
	void *abi = dlsym(h, TP_CASE_ABI_SYMBOL);
	Dl_info ei, ai;
	const ElfW(Sym) *es = NULL;
	if (!abi || !dladdr(entry, &ei) || !dladdr1(abi, &ai, (void **)&es, RTLD_DL_SYMENT) ||
	    ai.dli_fbase != ei.dli_fbase) {
		fprintf(stderr, "taskprof run: case shared object '%s' has no %s: it was built "
				"against a taskprof/case.h older than this taskprof's (ABI version "
				"%u); rebuild it against include/taskprof\n",
			tp_shown(path), TP_CASE_ABI_SYMBOL, TP_CASE_ABI_VERSION);
		return true;
	}
	if (!es || ELF64_ST_TYPE(es->st_info) != STT_OBJECT || es->st_size != sizeof(mine)) {
		fprintf(stderr, "taskprof run: case shared object '%s': %s is %s of %llu byte%s, "
				"not the const struct tp_case_abi of %zu bytes taskprof/case.h "
				"defines; rebuild it against include/taskprof without defining %s\n",
			tp_shown(path), TP_CASE_ABI_SYMBOL,
			es ? sym_type_name(ELF64_ST_TYPE(es->st_info)) : "a symbol",
			es ? (unsigned long long)es->st_size : 0ULL,
			es && es->st_size == 1 ? "" : "s", sizeof(mine),
			TP_CASE_ABI_SYMBOL);
		return true;
	}
	struct tp_case_abi its;
	memcpy(&its, abi, sizeof(its));
	if (its.version != mine.version) {
		fprintf(stderr, "taskprof run: case shared object '%s' was built against "
				"taskprof/case.h ABI version %u, this taskprof's is %u; rebuild it "
				"against include/taskprof\n",
			tp_shown(path), its.version, mine.version);
		return true;
	}
	static const struct {
		const char *name;
		size_t off;
	} sizes[] = {
		{ "struct tp_callable", offsetof(struct tp_case_abi, callable_bytes) },
		{ "struct tp_case", offsetof(struct tp_case_abi, case_bytes) },
		{ "struct tp_case_kernel", offsetof(struct tp_case_abi, case_kernel_bytes) },
		{ "struct tp_case_args", offsetof(struct tp_case_abi, case_args_bytes) },
		{ "struct tp_case_tensor", offsetof(struct tp_case_abi, case_tensor_bytes) },
		{ "struct tp_tile", offsetof(struct tp_case_abi, tile_bytes) },
	};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t a, b;
		memcpy(&a, (const char *)&its + sizes[i].off, sizeof(a));
		memcpy(&b, (const char *)&mine + sizes[i].off, sizeof(b));
		if (a != b) {
			fprintf(stderr, "taskprof run: case shared object '%s' was built with "
					"other struct layouts than this taskprof: its %s has %u "
					"bytes, this taskprof's %u (a layout-changing compiler "
					"option such as -fpack-struct, or an edited header); "
					"rebuild it against include/taskprof without them\n",
				tp_shown(path), sizes[i].name, a, b);
			return true;
		}
	}
	return false;
}

/*
 * Load the callable of case shared object @path (taskprof/case.h). The
 * object stays loaded: its kernels and strings are used until exit.
 * Return: the callable, or NULL after one line on stderr.
 */
static const struct tp_callable *load_case_so(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "taskprof run: cannot load case shared object '%s': %s\n",
			tp_shown(path), strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "taskprof run: cannot load case shared object '%s': not a "
				"regular file\n", tp_shown(path));
		return NULL;
	}
	/* dlopen() searches the library path for a name without a '/'. */
	char buf[4096];
	const char *open_path = path;
	if (!strchr(path, '/')) {
		snprintf(buf, sizeof(buf), "./%s", path);
		open_path = buf;
	}
	if (access(open_path, R_OK) != 0) {
		fprintf(stderr, "taskprof run: cannot load case shared object '%s': %s\n",
			tp_shown(open_path), strerror(errno));
		return NULL;
	}
	/* The case's constructors and its entry point are the case's code
	 * like its kernels: a crash or an exit() there gets the same one
	 * line naming what ran (cli_crash_install(), before this call). */
	cli_exit_guard(true);
	tp_thread_activity_set("the case's constructors (dlopen)");
	void *h = dlopen(open_path, RTLD_NOW | RTLD_LOCAL);
	tp_thread_activity_set(NULL);
	cli_exit_guard(false);
	if (!h) {
		fprintf(stderr, "taskprof run: cannot load case shared object '%s': expected an "
				"ELF shared object built against libtaskprof.so: %s\n",
			tp_shown(open_path), dl_msg());
		return NULL;
	}
	dlerror();
	void *sym = dlsym(h, TP_CASE_ENTRY_SYMBOL);
	if (!sym) {
		fprintf(stderr, "taskprof run: case shared object '%s' has no symbol %s (expected "
				"'const struct tp_callable *%s(void)', see taskprof/case.h)\n",
			tp_shown(path), TP_CASE_ENTRY_SYMBOL, TP_CASE_ENTRY_SYMBOL);
		dlclose(h);
		return NULL;
	}
	/* A data symbol of that name (int tp_case_callable = 5;) would be
	 * called as code: refuse it by its ELF symbol type. */
	Dl_info di;
	const ElfW(Sym) *es = NULL;
	/* ELF64_ST_TYPE and ELF32_ST_TYPE are the same: the low 4 bits. */
	if (dladdr1(sym, &di, (void **)&es, RTLD_DL_SYMENT) && es &&
	    ELF64_ST_TYPE(es->st_info) != STT_FUNC && ELF64_ST_TYPE(es->st_info) != STT_GNU_IFUNC) {
		fprintf(stderr, "taskprof run: case shared object '%s': %s is not a function "
				"(expected 'const struct tp_callable *%s(void)', see "
				"taskprof/case.h)\n",
			tp_shown(path), TP_CASE_ENTRY_SYMBOL, TP_CASE_ENTRY_SYMBOL);
		dlclose(h);
		return NULL;
	}
	/* The struct layouts it was compiled against (taskprof/case.h,
	 * struct tp_case_abi), before its code runs. */
	if (bad_abi(h, sym, path)) {
		dlclose(h);
		return NULL;
	}
	tp_case_entry_fn entry;
	memcpy(&entry, &sym, sizeof(entry)); /* object → function pointer */
	cli_exit_guard(true);
	tp_thread_activity_set("the case's " TP_CASE_ENTRY_SYMBOL "()");
	const struct tp_callable *c = entry();
	cli_exit_guard(false);
	/* A pointer into nowhere faults in the checks below: say whose. */
	tp_thread_activity_set("reading the struct tp_callable the case's " TP_CASE_ENTRY_SYMBOL
			       "() returned");
	const char *bad = NULL;
	char badbuf[160];
	if (!c)
		bad = "returned NULL";
	else if (!c->name || !*c->name)
		bad = "returned a callable without a name";
	else if (!c->orch)
		bad = "returned a callable without an orchestration";
	else if (c->n_kernels < 0 || (c->n_kernels > 0 && !c->kernels))
		bad = "returned a callable with a bad kernel table";
	else if (c->n_cases < 1 || !c->cases)
		bad = "returned a callable without cases";
	else if (!c->default_case || !tp_callable_case(c, NULL))
		bad = "returned a callable whose default_case is not one of its cases";
	else
		bad = bad_names(c, badbuf, sizeof(badbuf)); /* after the table checks */
	tp_thread_activity_set(NULL);
	if (bad) {
		fprintf(stderr, "taskprof run: %s() in case shared object '%s' %s (expected a "
				"struct tp_callable, see taskprof/case.h)\n",
			TP_CASE_ENTRY_SYMBOL, tp_shown(path), bad);
		dlclose(h);
		return NULL;
	}
	return c;
}

/*
 * --enable-pmu [N] (spec/pmu.md §8.1, argparse nargs="?", const=2,
 * type=int): N is the "=N" value, or the next argument when it looks like
 * an integer (optional sign, digits; then it is consumed); a bare flag
 * means 2. The value is passed on as is: 0 and negatives leave PMU off,
 * numbers without a table (3, 9, ...) fall back to 2 with a WARN (§1.4).
 * "=N" that is not an integer is a usage error, as argparse's type=int.
 */
static int parse_pmu_event_type(const char *val, int argc, char **argv, int *type)
{
	const char *s = val;
	if (!s && optind < argc && looks_like_value(argv[optind]))
		s = argv[optind++];
	else if (!s)
		note_bare("--enable-pmu", argc, argv);
	if (!s) {
		*type = TP_PMU_EVENT_TYPE_DEFAULT;
		return 0;
	}
	int32_t v;
	if (tp_pmu_parse_event_arg(s, &v)) {
		fprintf(stderr, "taskprof run: %s\n", tp_last_error());
		return -EINVAL;
	}
	*type = v;
	return 0;
}

/* Print the `taskprof pmu` summary of @csv; a failure to write stdout
 * goes to *@out_err (see stdout_failed()). Return: 0 or -EIO (the
 * summary's message is on stderr). */
static int print_pmu_summary(const char *csv, int *out_err)
{
	/* As `taskprof pmu CSV`: it also names the functions from the run
	 * folder's name map. */
	char *argv[] = { "taskprof pmu", (char *)csv, NULL };
	int serr = 0;
	int rc = cmd_pmu_run(2, argv, &serr);
	if (serr && !*out_err)
		*out_err = serr;
	return rc ? -EIO : 0;
}

/* A value that is an option (`--case -p a5sim`: getopt took "-p" as the
 * case): say so, instead of a later "unexpected argument 'a5sim'". A value
 * that really starts with '-' can be written as --opt=./-x for a folder.
 * Return: 0, or 2 with the message. */
static int not_an_option(const char *opt, const char *v, char **argv)
{
	/* Only a value given as the next argument: "--output=-x" and "-o-x"
	 * are attached on purpose. */
	if (!tp_arg_is_option(v) || optind < 1 || v != argv[optind - 1])
		return 0;
	fprintf(stderr, "taskprof run: %s expects a value, got '%s', which is an option (see "
			"taskprof run --help)\n", opt, tp_shown(v));
	return 2;
}

int cmd_run(int argc, char **argv)
{
	enum { OPT_CASE = 256, OPT_RUNTIME, OPT_BLOCK_DIM, OPT_AICPU, OPT_ROUNDS,
	       OPT_EARLY, OPT_NO_EARLY, OPT_DEP_GEN, OPT_SWIMLANE, OPT_PMU, OPT_STALL };
	static const struct option opts[] = {
		{"case", required_argument, NULL, OPT_CASE},
		{"platform", required_argument, NULL, 'p'},
		{"runtime", required_argument, NULL, OPT_RUNTIME},
		{"block-dim", required_argument, NULL, OPT_BLOCK_DIM},
		{"aicpu-threads", required_argument, NULL, OPT_AICPU},
		{"rounds", required_argument, NULL, OPT_ROUNDS},
		{"stall-timeout", required_argument, NULL, OPT_STALL},
		{"early-dispatch", no_argument, NULL, OPT_EARLY},
		{"no-early-dispatch", no_argument, NULL, OPT_NO_EARLY},
		{"enable-dep-gen", no_argument, NULL, OPT_DEP_GEN},
		{"enable-l2-swimlane", optional_argument, NULL, OPT_SWIMLANE},
		{"enable-pmu", optional_argument, NULL, OPT_PMU},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct tp_worker_config cfg = { 0 };
	const char *case_name = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:o:h", opts, NULL)) != -1) {
		int rc = 0;
		optarg = tp_arg_short_eq(optarg, argc, argv); /* -o=DIR: DIR */
		switch (c) {
		case OPT_CASE:
			case_name = optarg;
			rc = not_an_option("--case", optarg, argv);
			break;
		case 'p':
			cfg.platform = optarg;
			rc = not_an_option("-p/--platform", optarg, argv);
			break;
		case OPT_RUNTIME:
			cfg.runtime = optarg;
			rc = not_an_option("--runtime", optarg, argv);
			break;
		case OPT_BLOCK_DIM:
			/* The platform's own bound is checked by tp_worker_open(). */
			rc = parse_int("--block-dim", optarg, 1, 1024, &cfg.block_dim);
			break;
		case OPT_AICPU:
			rc = parse_int("--aicpu-threads", optarg, 1, 1024, &cfg.aicpu_threads);
			break;
		case OPT_ROUNDS:
			rc = parse_int("--rounds", optarg, 1, 1000000, &cfg.rounds);
			break;
		case OPT_STALL:
			rc = parse_stall_timeout(optarg, &cfg.stall_timeout_ms);
			break;
		case OPT_EARLY:
			cfg.early_dispatch = 1;
			break;
		case OPT_NO_EARLY:
			cfg.early_dispatch = -1;
			break;
		case OPT_DEP_GEN:
			cfg.dep_gen = true;
			break;
		case OPT_SWIMLANE:
			rc = parse_swimlane_level(optarg, argc, argv, &cfg.l2_swimlane_level);
			break;
		case OPT_PMU:
			rc = parse_pmu_event_type(optarg, argc, argv, &cfg.pmu_event_type);
			break;
		case 'o':
			if (!*optarg) {
				fprintf(stderr, "taskprof run: -o/--output expects a folder, got an "
						"empty string\n");
				return 2;
			}
			cfg.output_root = optarg;
			rc = not_an_option("-o/--output", optarg, argv);
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			fprintf(stderr,
				"taskprof run: unknown option or missing value: '%s' (see taskprof "
				"run --help)\n",
				tp_shown(argv[optind - 1]));
			return 2;
		}
		if (rc)
			return 2;
	}
	if (!cfg.platform && cli_platform_env("run", &cfg.platform))
		return 2;
	if (optind >= argc) {
		fprintf(stderr, "taskprof run: missing CASE (see taskprof run --help)\n");
		return 2;
	}
	if (optind + 1 < argc) {
		if (g_after_bare &&
		    (argv[optind] == g_after_bare || argv[optind + 1] == g_after_bare))
			fprintf(stderr, "taskprof run: two CASE arguments, '%s' and '%s': '%s' "
					"after %s is not its value (a number: %s 2 or %s=2)\n",
				tp_shown(argv[optind]), tp_shown(argv[optind + 1]),
				tp_shown(g_after_bare), g_bare_opt, g_bare_opt, g_bare_opt);
		else
			fprintf(stderr, "taskprof run: unexpected argument '%s'\n",
				tp_shown(argv[optind + 1]));
		return 2;
	}
	if (cfg.pmu_event_type < 0)
		/* The worker still resolves the value and logs the reference's
		 * "Invalid PMU event type ..., using default" WARN (spec/pmu.md
		 * §1.4, §8.1), which reads as if PMU were on. */
		fprintf(stderr,
			"taskprof run: --enable-pmu %d turns PMU profiling off (0 or negative: "
			"off); the 'Invalid PMU event type' warning that follows changes nothing\n",
			cfg.pmu_event_type);
	if (cfg.early_dispatch > 0 && cfg.pmu_event_type > 0 && cfg.rounds <= 1)
		/* PMU runs single issue (run_pmu.c), which turns it off. */
		fprintf(stderr,
			"taskprof run: --early-dispatch has no effect with --enable-pmu: a PMU "
			"run issues one task per core at a time (docs/pmu.md \"Single issue\"), "
			"so its result.txt says early_dispatch off\n");
	/* An output root that cannot be a folder fails now, not after the
	 * inputs were generated (seconds for a large case). */
	if (tp_dir_blocked(cfg.output_root ? cfg.output_root : TP_WORKER_DEFAULT_OUTPUT_ROOT)) {
		fprintf(stderr, "taskprof run: %s: %s\n",
			cfg.output_root ? "-o/--output" : "the default output root (-o chooses another)",
			tp_last_error());
		return 2;
	}
	const char *name = argv[optind];
	const struct tp_callable *cal = tp_callable_find(name);
	if (!cal) {
		size_t n = strlen(name);
		if (strchr(name, '/') || (n > 3 && !strcmp(name + n - 3, ".so")) ||
		    strstr(name, ".so.")) {
			/* Crash and exit() reports cover the case's own code
			 * from its constructors on. */
			cli_crash_install("taskprof run", true);
			cal = load_case_so(name);
			/* Its constructors and entry point may have set a locale
			 * (setlocale(LC_ALL, "")): taskprof's numbers keep '.'
			 * (the Worker does the same around each later call into
			 * the case, worker.c case_locale_enter()). */
			setlocale(LC_NUMERIC, "C");
			if (!cal)
				return 2;
		} else {
			fprintf(stderr, "taskprof run: unknown CASE '%s' (built-in:",
				tp_shown(name));
			for (size_t i = 0; tp_callable_at(i); i++)
				fprintf(stderr, " %s", tp_callable_at(i)->name);
			fprintf(stderr, "; or a path to a case shared object)\n");
			return 2;
		}
	}
	if (!tp_callable_case(cal, case_name)) {
		fprintf(stderr, "taskprof run: %s has no case '%s' (cases:", cal->name,
			tp_shown(case_name));
		for (int k = 0; k < cal->n_cases; k++)
			fprintf(stderr, " %s", cal->cases[k].name);
		fprintf(stderr, ")\n");
		return 2;
	}
	/* SIGINT / SIGTERM / SIGHUP from here on: temporary files removed, one line. */
	cli_interrupt_install("taskprof run");
	/* A crash or an exit() of the case's code: one line, temporary files removed. */
	cli_crash_install("taskprof run", true);
	struct tp_worker *w = tp_worker_open(&cfg);
	if (!w) {
		fprintf(stderr, "taskprof run: %s\n", tp_last_error());
		return 2;
	}
	struct tp_run_result *r = malloc(sizeof(*r));
	if (!r) {
		tp_worker_close(w);
		fprintf(stderr, "taskprof run: out of memory\n");
		return 1;
	}
	/* Large cases take a while to prepare and run (Case1: about 10 s):
	 * a phase still going after 2 s gets a line on stderr. */
	tp_progress_enable("taskprof run", stderr);
	cli_exit_guard(true);
	/* Interrupted (or crashed) before the worker wrote result.txt: a
	 * folder left with outputs in it gets one saying so (the tools then
	 * warn that the run did not finish). Interrupted after it, while a
	 * trace is still due (the worker ends, then the conversion below):
	 * its result.txt says the trace was not made, unless the trace was
	 * already in place. */
	tp_tmpreg_set_unfinished("result.txt",
				 "status FAILED\nerror the run was cut short (interrupted, crashed or "
				 "ended by the case's exit(): taskprof's last line on stderr said "
				 "which); the files here are what it had written by then\n");
	if (cfg.l2_swimlane_level)
		tp_tmpreg_set_note("result.txt",
				   "trace INTERRUPTED (merged_swimlane.json was not written; "
				   "taskprof swimlane on this folder makes it)\n",
				   "merged_swimlane.json");
	int rc = tp_worker_run(w, cal, case_name, r);
	tp_tmpreg_set_unfinished(NULL, NULL);
	if (rc || !r->swimlane_records[0])
		tp_tmpreg_set_note(NULL, NULL, NULL); /* no trace is due */
	cli_exit_guard(false);
	tp_progress_phase("closing the worker");
	tp_worker_close(w);
	tp_progress_phase(NULL);
	if (rc) {
		/* Before the run had a case (the callable's kernel table is
		 * checked first): bad input, like the other callable checks. */
		const bool no_case = !r->callable[0];
		if (no_case)
			fprintf(stderr, "taskprof run: %s\n", tp_last_error());
		else
			fprintf(stderr, "taskprof run: %s %s on %s failed: %s%s\n", r->callable,
				r->case_name, r->platform, tp_last_error(),
				rc == -ENOMEM ? tp_mem_limit_note() : "");
		if (!no_case && r->failed_dir_kept) {
			fprintf(stderr, "taskprof run: what was written before the failure is in "
					"%s (%s)\n", tp_shown(r->output_dir),
				r->failed_marked ? "its result.txt says the run failed"
						 : "it has no result.txt saying the run failed: that "
						   "could not be written either, so its files may "
						   "look like a finished run's");
			if (r->swimlane_records[0]) {
				char *self = tp_shell_quote(cli_argv0);
				char *dir = tp_shell_quote(r->output_dir);
				fprintf(stderr, "taskprof run: no trace is made for a failed run; "
						"`%s swimlane %s` draws what ran\n",
					self ? self : tp_shown(cli_argv0),
					dir ? dir : tp_shown(r->output_dir));
				free(self);
				free(dir);
			}
		}
		free(r);
		return no_case ? 2 : 1;
	}
	char last[48] = "";
	if (r->rounds > 1)
		snprintf(last, sizeof(last), "  (the last of %d rounds)", r->rounds);
	printf("%s %s %s %s: %s  host %.3f ms  device %.3f ms  orch %.3f ms  sched %.3f ms  "
	       "tasks %" PRIu64 "  %.0f tasks/s%s\n",
	       r->callable, r->case_name, r->platform, r->runtime, r->pass ? "PASS" : "FAIL",
	       r->host_wall_s * 1e3, r->device_wall_s * 1e3, r->orch_s * 1e3, r->sched_s * 1e3,
	       r->tasks, r->tasks_per_s, last);
	printf("%s\n", tp_shown(r->golden_line));
	printf("outputs: %s/result.txt\n", tp_shown(r->output_dir));
	/* Seed 002 §3.1: the collectors record the first round only, while
	 * the result line gives the last round's figures. A line of its own,
	 * so that the paths below stay whole lines to a script. */
	if (r->rounds > 1 && (r->dep_gen || r->swimlane_records[0]))
		printf("  (%s%s%s below: round 1 of %d only; the result line gives the last "
		       "round's figures)\n",
		       r->dep_gen ? "deps.json" : "",
		       r->dep_gen && r->swimlane_records[0] ? " and " : "",
		       r->swimlane_records[0] ? "the swimlane records" : "", r->rounds);
	if (r->dep_gen) {
		/* Edges are per argument; the trace draws one arrow per pair. */
		char pairs[48] = "";
		if (r->dep_pairs && r->dep_pairs != r->dep_edges)
			snprintf(pairs, sizeof(pairs), ", %" PRIu64 " producer-consumer pairs",
				 r->dep_pairs);
		printf("dep_gen: %s/deps.json (%" PRIu64 " tasks, %" PRIu64 " edges%s)\n",
		       tp_shown(r->output_dir), r->dep_tasks, r->dep_edges, pairs);
	}
	if (r->name_map[0])
		printf("name map: %s\n", tp_shown(r->name_map));
	int code = r->pass ? 0 : 1;
	int out_err = 0; /* stdout_failed() */
	if (r->swimlane_records[0]) {
		char trace[4300];
		printf("swimlane records: %s\n", tp_shown(r->swimlane_records));
		/* Dropped records are counted (the reconcile lines), not lost;
		 * but the trace misses them: say so where the trace is named. */
		if (r->swimlane_dropped)
			fprintf(stderr, "taskprof run: warning: swimlane: %" PRIu64 " of %" PRIu64
					" records were dropped (the reconcile lines above say "
					"which and why): the trace is incomplete\n",
				r->swimlane_dropped, r->swimlane_total);
		tp_progress_phase("converting the swimlane records into a Perfetto trace");
		/* Interrupted (or crashed) until the trace is in place:
		 * result.txt says the trace was not made, as it does when the
		 * converter fails (the note published before the run). */
		int crc = convert_swimlane(r->swimlane_records, r->output_dir, trace, sizeof(trace),
					   &out_err);
		tp_tmpreg_set_note(NULL, NULL, NULL);
		tp_progress_phase(NULL);
		if (crc) {
			fprintf(stderr, "taskprof run: the swimlane converter failed on %s\n",
				tp_shown(r->swimlane_records));
			/* The run passed, the trace did not come: result.txt says
			 * both (the records stay good for a later conversion). */
			append_result_line(r->output_dir,
					   "trace FAILED (merged_swimlane.json was not written; "
					   "taskprof swimlane on this folder makes it)");
			code = 1;
		} else {
			printf("swimlane trace: %s (open it in https://ui.perfetto.dev/)\n",
			       tp_shown(trace));
			/* In place of the converter's closing hint (the reference's
			 * wording, left out here): the command, when it can run on
			 * this run's files, else what it needs. */
			char *selfq = tp_shell_quote(cli_argv0);
			const char *self = selfq ? selfq : cli_argv0;
			if (r->dep_gen && cfg.l2_swimlane_level >= 3) {
				char *dir = tp_shell_quote(r->output_dir);
				printf("scheduler overhead: %s sched-overhead %s\n", self,
				       dir ? dir : tp_shown(r->output_dir));
				free(dir);
			} else if (cfg.l2_swimlane_level >= 3) {
				printf("scheduler overhead: %s sched-overhead needs a deps.json: run "
				       "with --enable-dep-gen too, or pass --deps-json with one from "
				       "a run of the same case\n", self);
			} else {
				printf("scheduler overhead: %s sched-overhead needs records of "
				       "level 3 or 4 (this run: --enable-l2-swimlane %d)%s\n",
				       self, cfg.l2_swimlane_level,
				       r->dep_gen ? "" : " and a deps.json (--enable-dep-gen)");
			}
			free(selfq);
			/* PMU profiling changes the schedule the trace shows. */
			if (r->pmu)
				printf("note: with --enable-pmu the schedulers issue one task "
				       "per core at a time and do not dispatch early "
				       "(docs/pmu.md \"Single issue\"): the trace shows that "
				       "schedule, not the default one\n");
		}
	} else if (cfg.l2_swimlane_level) {
		printf("swimlane: no records written (no task ran on an AICore)\n");
	}
	if (r->pmu_csv[0]) {
		printf("pmu: %s (%" PRIu64 " rows, event type %u)\n", tp_shown(r->pmu_csv),
		       r->pmu_rows, r->pmu_event_type);
		/* The summary is stdout only: nothing to do once stdout is gone. */
		if (!stdout_failed(&out_err)) {
			tp_progress_phase("summarising pmu.csv");
			if (print_pmu_summary(r->pmu_csv, &out_err))
				code = 1;
			tp_progress_phase(NULL);
		}
		const struct tp_platform *plat = tp_platform_find(r->platform);
		const char *unmodelled =
			plat ? tp_pmu_group_model_note(tp_pmu_arch_of(plat), r->pmu_event_type)
			     : NULL;
		if (unmodelled)
			printf("note: the simulated PMU %s (docs/pmu.md \"Per event id\")\n",
			       unmodelled);
	} else if (r->pmu) {
		printf("pmu: no records written (no task ran on an AICore)\n");
	} else if (cfg.pmu_event_type > 0 && cfg.rounds > 1) {
		/* spec/pmu.md §8.3: said on stderr too, but easily missed */
		printf("pmu: none: PMU profiling is off with --rounds > 1; run with --rounds 1 "
		       "for pmu.csv\n");
	}
	/* Every file is written by now; a lost result line still fails the
	 * run, once, with the reason (not blamed on a step). */
	if (stdout_failed(&out_err)) {
		fprintf(stderr, "taskprof run: writing stdout: %s\n", strerror(out_err));
		code = 1;
	}
	free(r);
	tp_progress_disable();
	return code;
}
