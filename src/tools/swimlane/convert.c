// SPDX-License-Identifier: MIT
/*
 * tools/swimlane/convert.c — the `taskprof swimlane` command line
 * (spec/swimlane-format.md §5): argument parsing, input / names / deps
 * resolution (§5.3), the processing order of §5.4, the stdout blocks of
 * §5.5–§5.6 and the exit codes of §5.7. No static state: `taskprof run`
 * calls sl_convert_main() again after a swimlane run.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/args.h"
#include "base/error.h"
#include "base/file.h"
#include "base/thread.h"
#include "base/tmp_registry.h"
#include "tools/swimlane/trace.h"

#define PROG "taskprof swimlane"

static const char usage_text[] =
	"usage: " PROG " [-h] [-o OUTPUT] [-k KERNEL_CONFIG]\n"
	"                         [--func-names FUNC_NAMES] [--deps-json DEPS_JSON]\n"
	"                         [-v] [--overhead] [--pretty]\n"
	"                         [input]\n";

static const char help_text[] =
	"\n"
	"Convert an l2_swimlane_records.json (+ deps.json, name map) into a Perfetto\n"
	"trace (merged_swimlane.json, Chrome Trace Event format) and print the task\n"
	"statistics by function (docs/swimlane.md).\n"
	"\n"
	"positional arguments:\n"
	"  input                 l2_swimlane_records.json, or a run folder holding\n"
	"                        one; default: the newest\n"
	"                        ./outputs/*/l2_swimlane_records.json\n"
	"\n"
	"options:\n"
	"  -h, --help            show this help message and exit\n"
	"  -o, --output OUTPUT   output file (default: <input dir>/merged_swimlane.json);\n"
	"                        never one of its inputs, nor a run folder's own\n"
	"                        result.txt, pmu.csv, taskprof.log or deps.json\n"
	"                        (by name or through a symbolic link)\n"
	"  -k, --kernel-config KERNEL_CONFIG\n"
	"                        accepted for compatibility, but Python kernel_config.py\n"
	"                        files are not supported by taskprof (error, exit 1);\n"
	"                        use --func-names with a name map instead\n"
	"  --func-names FUNC_NAMES\n"
	"                        name_map*.json (default: the unique sibling\n"
	"                        name_map*.json next to the input)\n"
	"  --deps-json DEPS_JSON deps.json of a dep_gen run (default: sibling deps.json);\n"
	"                        it resolves func_ids and gives the dependency arrows;\n"
	"                        without one every task is labelled task(tN) and the\n"
	"                        trace has no arrows (a warning says so). A named file\n"
	"                        that is missing or malformed is an error (exit 1);\n"
	"                        one that does not list the records' tasks (another\n"
	"                        case, or no tasks at all) gets a warning\n"
	"  -v, --verbose         verbose output\n"
	"  --overhead            add the 8 overhead counter tracks (needs deps.json)\n"
	"  --pretty              write the trace exactly as the reference converter does\n"
	"                        (json.dump indent=2: one key per line, byte-identical);\n"
	"                        the default writes the same events one compact event\n"
	"                        per line, about 1.7x smaller and faster to write\n"
	"\n"
	"Labels: <name>(<id>) with the name from the name map (func_<id>_<tag> without\n"
	"one, task(...) without deps.json); ids print as t<local> on ring 0 and\n"
	"r<ring>t<local> otherwise. The closing hint keeps the reference's wording:\n"
	"its sched_overhead_analysis is `taskprof sched-overhead RECORDS`.\n"
	"\n"
	"Exit codes: 0 success, 1 error (\"Error: ...\" on stderr), 2 usage error.\n";

struct args {
	const char *input, *output, *kernel_config, *func_names, *deps_json;
	bool verbose, overhead, pretty, help;
};

static void usage_error(const char *fmt, const char *a, const char *b)
{
	fputs(usage_text, stderr);
	fprintf(stderr, "%s: error: ", PROG);
	fprintf(stderr, fmt, tp_shown(a), tp_shown(b));
	fputc('\n', stderr);
}

/* The short options: flags and those that take a value. */
static bool *short_flag(struct args *a, char c, const char **name)
{
	switch (c) {
	case 'h': *name = "-h/--help"; return &a->help;
	case 'v': *name = "-v/--verbose"; return &a->verbose;
	default: return NULL;
	}
}

static const char **short_value(struct args *a, char c, const char **name)
{
	switch (c) {
	case 'o': *name = "-o/--output"; return &a->output;
	case 'k': *name = "-k/--kernel-config"; return &a->kernel_config;
	default: return NULL;
	}
}

/* argv[*i], one dash and at least two letters, as argparse reads it:
 * "-o=F" and "-oF" give -o the value F; "-v..." sets -v, and the letters
 * after it are more short options ("-vo F", "-vof", "-vv"); a '=' right
 * after a flag ("-v=1") or a letter that is no option ("-vx") is
 * argparse's "ignored explicit argument". A value option last in a
 * cluster takes the next word (not one that reads as an option).
 * Return: 0 taken; 2 after the usage error; -1 the word starts with no
 * short option of ours (left for "unrecognized arguments"). */
static int short_cluster(int argc, char **argv, int *i, struct args *a)
{
	const char *s = argv[*i], *name = NULL;
	const char **val = short_value(a, s[1], &name);
	if (val) {
		*val = s[2] == '=' ? s + 3 : s + 2;
		return 0;
	}
	bool *flag = short_flag(a, s[1], &name);
	if (!flag)
		return -1;
	*flag = true;
	const char *rest = s + 2;
	if (*rest == '=') {
		usage_error("argument %s: ignored explicit argument '%s'", name, rest + 1);
		return 2;
	}
	while (*rest) {
		const char *n2 = NULL;
		bool *f = short_flag(a, *rest, &n2);
		if (f) {
			*f = true;
			name = n2;
			rest++;
			continue;
		}
		const char **v = short_value(a, *rest, &n2);
		if (!v) {
			usage_error("argument %s: ignored explicit argument '%s'", name, rest);
			return 2;
		}
		if (rest[1]) {
			*v = rest + 1;
		} else if (*i + 1 >= argc || tp_arg_is_option(argv[*i + 1])) {
			usage_error("argument %s: expected one argument%s", n2, "");
			return 2;
		} else {
			*v = argv[++*i];
		}
		return 0;
	}
	return 0;
}

/* Return 0, or the exit code (2) after printing usage + error. */
static int parse_args(int argc, char **argv, struct args *a)
{
	memset(a, 0, sizeof(*a));
	char extras[1024] = "";
	size_t el = 0;
	bool only_pos = false;
	static const struct {
		const char *s, *l, *dest;
	} valopts[] = {
		{"-o", "--output", "OUTPUT"},
		{"-k", "--kernel-config", "KERNEL_CONFIG"},
		{NULL, "--func-names", "FUNC_NAMES"},
		{NULL, "--deps-json", "DEPS_JSON"},
	};
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		/* argparse: "-" and a negative number ("-1") are positionals. */
		if (only_pos || !tp_arg_is_option(s)) {
			if (!a->input)
				a->input = s;
			else
				el += (size_t)snprintf(extras + el, el < sizeof(extras) ? sizeof(extras) - el : 0,
						       "%s%s", el ? " " : "", s);
			continue;
		}
		if (!strcmp(s, "--")) {
			only_pos = true;
			continue;
		}
		/* One dash and more than one letter: "-o=F" / "-oF" (the value
		 * F), or argparse's cluster of short options ("-vo F", "-vof":
		 * -v, then -o F). */
		if (s[1] != '-' && s[2]) {
			int r = short_cluster(argc, argv, &i, a);
			if (r > 0)
				return r;
			if (r == 0)
				continue;
			/* not one of ours ("-x1"): unrecognized, below */
		}
		/* A flag given a value ("--verbose=1"): argparse's message. */
		static const struct {
			const char *s, *l;
		} flags[] = { { "-h", "--help" }, { "-v", "--verbose" }, { NULL, "--overhead" },
			      { NULL, "--pretty" } };
		for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
			size_t ll = strlen(flags[k].l);
			if (!strncmp(s, flags[k].l, ll) && s[ll] == '=') {
				char name[32];
				snprintf(name, sizeof(name), "%s%s%s", flags[k].s ? flags[k].s : "",
					 flags[k].s ? "/" : "", flags[k].l);
				usage_error("argument %s: ignored explicit argument '%s'", name,
					    s + ll + 1);
				return 2;
			}
		}
		if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			a->help = true;
			continue;
		}
		if (!strcmp(s, "-v") || !strcmp(s, "--verbose")) {
			a->verbose = true;
			continue;
		}
		if (!strcmp(s, "--overhead")) {
			a->overhead = true;
			continue;
		}
		if (!strcmp(s, "--pretty")) {
			a->pretty = true;
			continue;
		}
		bool matched = false;
		for (size_t k = 0; k < sizeof(valopts) / sizeof(valopts[0]); k++) {
			const char *val = NULL;
			size_t ll = strlen(valopts[k].l);
			if (!strcmp(s, valopts[k].l) || (valopts[k].s && !strcmp(s, valopts[k].s))) {
				/* argparse: a next word that reads as an option
				 * is not the value (`-o --pretty`). */
				if (i + 1 >= argc || tp_arg_is_option(argv[i + 1])) {
					char name[64];
					snprintf(name, sizeof(name), "%s%s%s", valopts[k].s ? valopts[k].s : "",
						 valopts[k].s ? "/" : "", valopts[k].l);
					usage_error("argument %s: expected one argument%s", name, "");
					return 2;
				}
				val = argv[++i];
			} else if (!strncmp(s, valopts[k].l, ll) && s[ll] == '=') {
				val = s + ll + 1;
			} else if (valopts[k].s && !strncmp(s, valopts[k].s, 2) && s[2]) {
				val = s + 2;
			} else {
				continue;
			}
			matched = true;
			switch (k) {
			case 0: a->output = val; break;
			case 1: a->kernel_config = val; break;
			case 2: a->func_names = val; break;
			default: a->deps_json = val; break;
			}
			break;
		}
		if (!matched)
			el += (size_t)snprintf(extras + el, el < sizeof(extras) ? sizeof(extras) - el : 0,
					       "%s%s", el ? " " : "", s);
	}
	if (a->help)
		return 0;
	if (el) {
		usage_error("unrecognized arguments: %s%s", extras, "");
		return 2;
	}
	return 0;
}

/* Path text as Python's pathlib prints it: no "." segments, no doubled or
 * trailing slashes. Returns a malloc'd string. */
static char *norm_path(const char *p)
{
	size_t n = strlen(p);
	char *out = malloc(n + 2);
	if (!out)
		return NULL;
	size_t o = 0;
	bool abs = p[0] == '/';
	if (abs)
		out[o++] = '/';
	const char *s = p;
	while (*s) {
		while (*s == '/')
			s++;
		const char *e = s;
		while (*e && *e != '/')
			e++;
		size_t len = (size_t)(e - s);
		if (len && !(len == 1 && s[0] == '.')) {
			if (o && out[o - 1] != '/')
				out[o++] = '/';
			memcpy(out + o, s, len);
			o += len;
		}
		s = e;
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = '\0';
	return out;
}

/* §5.3 auto-detection: newest ./outputs/<*>/l2_swimlane_records.json. */
static char *auto_input(bool verbose)
{
	char *outputs = NULL, *skipped = NULL;
	char *best = tp_newest_run_file("l2_swimlane_records.json", &outputs, &skipped);
	if (!best && outputs) {
		fprintf(stderr, "Error: No outputs/*/l2_swimlane_records.json found under %s\n",
			tp_shown(outputs));
		if (skipped)
			fprintf(stderr, "(left out: %s)\n", tp_shown(skipped));
		fprintf(stderr, "Run a test with --enable-l2-swimlane first, or specify an explicit "
				"input.\n");
	} else if (best && verbose) {
		printf("Auto-selected latest file: %s\n", tp_shown(best));
	}
	char *failed = best ? tp_newer_failed_run(best, "l2_swimlane_records.json") : NULL;
	if (failed)
		fprintf(stderr, "Note: the newer run %s failed and wrote no l2_swimlane_records.json "
				"(its result.txt says why); this converts %s\n", tp_shown(failed),
				tp_shown(best));
	free(failed);
	free(outputs);
	free(skipped);
	return best;
}

static void print_data_info(const struct sl_perf_data *pd)
{
	printf("\n=== Performance Data ===\n");
	printf("  L2 perf level: %d\n", pd->level);
	printf("  Task Count: %zu\n", pd->n_tasks);
	if (pd->n_tasks) {
		double mn = pd->tasks[0].start_us, mx = pd->tasks[0].end_us;
		for (size_t i = 1; i < pd->n_tasks; i++) {
			if (pd->tasks[i].start_us < mn)
				mn = pd->tasks[i].start_us;
			if (pd->tasks[i].end_us > mx)
				mx = pd->tasks[i].end_us;
		}
		printf("  Time Range: %.3f us - %.3f us (span: %.3f us)\n", mn, mx, mx - mn);
	}
	printf("\n");
	if (pd->has_sched && pd->n_sched) {
		size_t tot = 0;
		for (size_t i = 0; i < pd->n_sched; i++)
			tot += pd->sched[i].n;
		printf("  Scheduler threads: %zu\n", pd->n_sched);
		printf("  Total phase records: %zu\n", tot);
	}
	if (pd->has_orch && pd->n_orch) {
		size_t tot = 0;
		for (size_t i = 0; i < pd->n_orch; i++)
			tot += pd->orch[i].n;
		printf("  Orchestrator threads: %zu\n", pd->n_orch);
		printf("  Total orchestrator phase records: %zu\n", tot);
		/* every orch record is an orch_submit (spec §2.8) */
		if (tot)
			printf("  Orchestrator: %zu tasks submitted\n", tot);
	}
	if (pd->n_core_to_thread)
		printf("  Core-to-thread mapping: %zu cores\n", pd->n_core_to_thread);
}

/* The deps reader's stack, whatever ulimit -s says (glibc would give it
 * RLIMIT_STACK bytes: `ulimit -s 40` overflowed it). Measured: at most
 * 73 KiB touched (a deps.json error naming a dangling symbolic link;
 * 62 KiB on a 20,000-task capture; the same under AddressSanitizer), of
 * which 47 KiB is the static TLS block glibc puts on every thread's stack
 * (base/error.c's message buffers) and about 26 KiB the parse's frames.
 * 1 MiB leaves over ten times that; untouched pages cost no memory. */
#define DEPS_THREAD_STACK (1u << 20)

/* deps.json is read on its own thread while the records are parsed (the
 * two files are independent until step 6 of §5.4); the thread's error
 * message is copied out because tp_last_error() is per thread. */
struct deps_job {
	const char *path;
	struct sl_deps *out;
	int rc;
	char err[512];
};

static void *deps_thread(void *arg)
{
	struct deps_job *j = arg;
	j->rc = sl_read_deps(j->path, j->out);
	if (j->rc)
		snprintf(j->err, sizeof(j->err), "%s", tp_last_error());
	return NULL;
}

int sl_stdout_finish(void)
{
	int err = -tp_stream_flush(stdout);
	if (!err)
		return 0;
	fprintf(stderr, "Error: writing stdout: %s\n", strerror(err));
	return 1;
}

static bool file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* After @p (a @what file) was found unreachable with @err: the reference's
 * "Error: <what> not found: <p>" for a plain ENOENT, the real reason when
 * a symbolic link is the cause or the error is another (a loop, a name
 * too long, no permission). */
static void say_unreachable(const char *what, const char *p, int err)
{
	char why[2 * PATH_MAX + 128];
	fflush(stdout);
	if (tp_path_bad_link(p, why, sizeof(why)))
		fprintf(stderr, "Error: %s %s: %s\n", what, tp_shown(p), tp_shown(why));
	else if (err == ENOENT)
		fprintf(stderr, "Error: %s not found: %s%s\n", what, tp_shown(p),
			strcmp(p, "-") ? "" : " (taskprof reads no standard input: give the file's "
					     "path)");
	else
		fprintf(stderr, "Error: %s %s: %s\n", what, tp_shown(p), strerror(err));
}

/* Whether @path names one of a run's own files by name (result.txt,
 * pmu.csv, taskprof.log, the records, deps.json, name_map_*) in a folder
 * holding result.txt (a run folder). Return: its base name, or NULL. */
static const char *own_name(const char *path)
{
	static const char *const own[] = { "result.txt", "pmu.csv", "taskprof.log",
					   "l2_swimlane_records.json", "deps.json" };
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	bool named = !strncmp(base, "name_map_", 9);
	for (size_t i = 0; !named && i < sizeof(own) / sizeof(own[0]); i++)
		named = !strcmp(base, own[i]);
	if (!named)
		return NULL;
	char res[PATH_MAX];
	int n = slash ? snprintf(res, sizeof(res), "%.*s/result.txt",
				 (int)(slash - path + (slash == path)), path)
		      : snprintf(res, sizeof(res), "result.txt");
	if (n < 0 || (size_t)n >= sizeof(res) || access(res, F_OK) != 0)
		return NULL;
	return base;
}

/* Whether @output, an existing file, is one of a run's own files (a
 * folder's result.txt, pmu.csv, taskprof.log, ..., when the folder holds
 * result.txt): writing the trace there would destroy it. By its name, or
 * by the name its symbolic links lead to (the trace is written through
 * them, base/file.h). A hard link is not: the trace replaces that name
 * only. The trace's own name, merged_swimlane.json, is the conversion's
 * to rewrite. Return: the own file's base name (NULL: not one); when it
 * is one through links, its resolved path in @real (PATH_MAX bytes),
 * else @real empty. */
static const char *run_own_file(const char *output, char *real)
{
	real[0] = '\0';
	if (access(output, F_OK) != 0)
		return NULL;
	const char *own = own_name(output);
	if (own)
		return own;
	char r[PATH_MAX];
	if (!realpath(output, r) || !(own = own_name(r)))
		return NULL;
	memcpy(real, r, strlen(r) + 1);
	return strrchr(real, '/') + 1; /* realpath() is absolute */
}

/* True when @a and @b name the same existing file (st_dev + st_ino, links
 * followed). */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* The end of the stdout output: with @stdout_err the caller reports a
 * failed stdout (*@stdout_err: its errno, 0 if none) and it fails
 * nothing here; without, sl_stdout_finish(). Return: 0 or 1. */
static int finish_stdout(int *stdout_err)
{
	if (!stdout_err)
		return sl_stdout_finish();
	*stdout_err = -tp_stream_flush(stdout);
	return 0;
}

int sl_convert_main(int argc, char **argv)
{
	return sl_convert_run(argc, argv, NULL, false);
}

static int convert_run(int argc, char **argv, int *stdout_err, bool in_run);

int sl_convert_run(int argc, char **argv, int *stdout_err, bool in_run)
{
	/* argparse's abbreviations: "--out" for --output. */
	static const char *const longs[] = {
		"--help", "--output", "--kernel-config", "--func-names",
		"--deps-json", "--verbose", "--overhead", "--pretty",
	};
	char **words, err[256];
	int rc = tp_args_expand_abbrev(argc, argv, longs, (int)(sizeof(longs) / sizeof(longs[0])),
				       &words, err, sizeof(err));
	if (rc == -ENOMEM) {
		fprintf(stderr, "Error: out of memory\n");
		return 1;
	}
	if (rc) {
		if (stdout_err)
			*stdout_err = 0;
		usage_error("%s%s", err, "");
		return 2;
	}
	rc = convert_run(argc, words, stdout_err, in_run);
	tp_args_free(argc, argv, words);
	return rc;
}

static int convert_run(int argc, char **argv, int *stdout_err, bool in_run)
{
	struct args a;
	if (stdout_err)
		*stdout_err = 0;
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	if (a.help) {
		fputs(usage_text, stdout);
		fputs(help_text, stdout);
		return finish_stdout(stdout_err);
	}

	struct sl_perf_data pd;
	struct sl_deps deps;
	struct sl_name_map nm;
	bool have_pd = false, have_deps = false, have_nm = false;
	bool deps_started = false, deps_done = false;
	pthread_t deps_tid;
	struct deps_job job = {0};
	char *input = NULL, *output = NULL, *deps_path = NULL, *names_path = NULL;
	int exit_code = 1;
	char *made_dir = NULL; /* -o's folder, made here; made_top: see tp_rmdir_made() */
	size_t made_top = 0;
	memset(&pd, 0, sizeof(pd));
	memset(&deps, 0, sizeof(deps));
	memset(&nm, 0, sizeof(nm));

	if (a.output && !*a.output) {
		fprintf(stderr, "Error: empty output path\n");
		return 2;
	}
	/* "-o out/" or "-o DIR" of an existing folder names a folder: the
	 * trace is one file, and writing it as "out" (the slash dropped) is
	 * not what was asked, nor is replacing the folder. */
	struct stat ost;
	const bool slash = a.output && a.output[strlen(a.output) - 1] == '/';
	/* So does one whose last segment is "." or ".." ("out/.", "f/.."):
	 * the path is normalised below, which would drop it. */
	bool dots = false;
	if (a.output) {
		const char *last = strrchr(a.output, '/');
		last = last ? last + 1 : a.output;
		dots = !strcmp(last, ".") || !strcmp(last, "..");
	}
	if (slash || dots || (a.output && stat(a.output, &ost) == 0 && S_ISDIR(ost.st_mode))) {
		fprintf(stderr, "Error: %s: -o takes the trace's file name, not a folder (e.g. "
				"%s%smerged_swimlane.json)\n", tp_shown(a.output), tp_shown(a.output),
			slash ? "" : "/");
		return 2;
	}
	if (a.deps_json && !*a.deps_json) {
		fprintf(stderr, "Error: empty path for --deps-json\n");
		return 2;
	}
	if (a.func_names && !*a.func_names) {
		fprintf(stderr, "Error: empty path for --func-names\n");
		return 2;
	}
	if (a.input && !*a.input) {
		fprintf(stderr, "Error: empty input path\n");
		return 2;
	}
	if (a.kernel_config && !*a.kernel_config) {
		fprintf(stderr, "Error: empty path for -k\n");
		return 2;
	}

	/* 1. input */
	if (a.input) {
		input = norm_path(a.input);
		if (!input)
			goto oom;
		/* A run's folder stands for the records file in it. */
		bool oom_dir;
		char *in_dir = sl_records_in_folder(input, &oom_dir);
		if (oom_dir)
			goto oom;
		if (in_dir) {
			free(input);
			input = in_dir;
		}
		if (!file_exists(input)) {
			say_unreachable("Input file", input, errno);
			sl_say_failed_folder(input, stderr);
			goto out;
		}
	} else {
		input = auto_input(a.verbose);
		if (!input)
			goto out;
	}

	/* The default output, beside the input, checked before the records
	 * are read: /dev/stdin, /proc/self/fd/N (a file redirected there)
	 * have a system folder there, not where the records came from. A
	 * FIFO gets the reader's error instead, which -o would not cure. */
	if (!a.output) {
		output = sl_path_sibling(input, "merged_swimlane.json");
		if (!output)
			goto oom;
		struct stat ist;
		if ((!strncmp(output, "/dev/", 5) || !strncmp(output, "/proc/", 6)) &&
		    stat(input, &ist) == 0 && S_ISREG(ist.st_mode)) {
			fflush(stdout);
			fprintf(stderr, "Error: %s: give -o/--output for the trace (its default, "
					"beside the input, would be %s)\n", tp_shown(input),
				tp_shown(output));
			goto out;
		}
	}

	/* deps.json in parallel with the records (joined at step 6) */
	deps_path = a.deps_json ? norm_path(a.deps_json) : sl_path_sibling(input, "deps.json");
	if (!deps_path)
		goto oom;
	job.path = deps_path;
	job.out = &deps;
	struct stat dst;
	if (!a.deps_json && stat(deps_path, &dst) == 0 && !S_ISREG(dst.st_mode)) {
		/* a sibling deps.json that is a directory, FIFO or device is
		 * not opened (a FIFO would block) but refused as a named one
		 * is by the reader: the trace would silently lack its arrows */
		job.rc = -EINVAL;
		/* worded as the reader words a named one (json_stream.c) */
		if (S_ISDIR(dst.st_mode))
			snprintf(job.err, sizeof(job.err), "%s: is a directory", deps_path);
		else
			snprintf(job.err, sizeof(job.err), "%s: not a regular file (%s)", deps_path,
				 S_ISFIFO(dst.st_mode) ? "a FIFO" : "a device or socket");
		deps_done = true;
	} else if (tp_thread_start(&deps_tid, "tp-swl-deps", DEPS_THREAD_STACK, deps_thread,
				   &job) == 0) {
		deps_started = true;
	} else {
		deps_thread(&job); /* no thread: read it here */
		deps_done = true;
	}

	/* 2–3. records */
	if (a.verbose)
		printf("Reading performance data from: %s\n", tp_shown(input));
	rc = sl_read_perf_data(input, &pd);
	if (rc) {
		fflush(stdout);
		fprintf(stderr, "Error: %s\n", tp_last_error());
		goto out;
	}
	have_pd = true;
	{
		char why[400];
		if (tp_run_failed(input, why, sizeof(why))) {
			fflush(stdout);
			fprintf(stderr, "Warning: %s is from a run that failed (its result.txt: "
					"%s): the records stop where it failed, and tasks dispatched after "
					"the failure ran no kernel (zero-length rows)\n",
				tp_shown(input), why[0] ? tp_shown(why) : "status FAILED");
		}
	}
	if (pd.unmatched_warning) {
		fflush(stdout);
		fprintf(stderr, "Warning: %s\n", pd.unmatched_warning);
	}
	if (a.verbose)
		print_data_info(&pd);

	/* 4. names: --func-names, else -k, else the unique sibling name map */
	if (a.func_names) {
		names_path = norm_path(a.func_names);
		if (!names_path)
			goto oom;
	} else if (a.kernel_config) {
		char *k = norm_path(a.kernel_config);
		if (!k)
			goto oom;
		if (a.verbose)
			printf("Loading kernel config from: %s\n", tp_shown(k));
		fflush(stdout);
		if (!file_exists(k))
			fprintf(stderr,
				"Error: Kernel config file not found: %s (taskprof does not read "
				"Python kernel configs either; pass a name map with --func-names)\n",
				tp_shown(k));
		else
			fprintf(stderr,
				"Error: %s: Python kernel configs (-k) are not supported by taskprof; "
				"pass a name map with --func-names\n",
				tp_shown(k));
		free(k);
		goto out;
	} else {
		names_path = sl_name_map_sibling(input, stderr);
	}
	if (names_path) {
		if (a.verbose)
			printf("%s func names from: %s\n", a.func_names ? "Loading" : "Auto-discovered",
			       tp_shown(names_path));
		rc = sl_read_name_map(names_path, &nm);
		if (rc) {
			fflush(stdout);
			if (rc == -ENOENT || rc == -ELOOP)
				say_unreachable("Func names JSON", names_path, -rc);
			else
				fprintf(stderr, "Error: %s\n", tp_last_error());
			goto out;
		}
		have_nm = true;
		fflush(stdout);
		if (a.func_names)
			sl_name_map_warn_unnamed(&nm, names_path, "taskprof swimlane", stderr);
		sl_name_map_warn_skipped(&nm, names_path, "taskprof swimlane", stderr);
		if (a.verbose) {
			printf("  Loaded %zu function name mappings:\n", nm.n);
			/* Names as a terminal may show them (sl_put_name()). */
			for (size_t i = 0; i < nm.n; i++) {
				printf("    func_id=%lld: ", (long long)nm.func_id[i]);
				sl_put_name(stdout, nm.name[i]);
				putchar('\n');
			}
			if (nm.orchestrator_name && *nm.orchestrator_name) {
				fputs("  Orchestrator: ", stdout);
				sl_put_name(stdout, nm.orchestrator_name);
				putchar('\n');
			}
			printf("\n");
		}
	}

	/* 5. output (the default one was checked at step 1) */
	if (!output)
		output = norm_path(a.output);
	if (!output)
		goto oom;

	/* 6. deps: edges, kernel map, block map */
	if (deps_started) {
		pthread_join(deps_tid, NULL);
		deps_started = false;
		deps_done = true;
	}
	rc = job.rc;
	if (rc == 0) {
		have_deps = true;
		if (!deps.has_edges && deps.edges_warning) {
			fflush(stdout);
			fprintf(stderr, "Warning: %s\n", tp_shown(deps.edges_warning));
		}
		if (deps.quirks_warning) {
			fflush(stdout);
			fprintf(stderr, "Warning: %s\n", tp_shown(deps.quirks_warning));
		}
	} else if ((rc == -ENOENT || rc == -ELOOP) && (a.deps_json || lstat(deps_path, &dst) == 0)) {
		/* A path the user named and that does not exist is a usage
		 * error (taskprof decision; the reference only warns), and so
		 * is a sibling deps.json that is a link to nothing. A missing
		 * sibling deps.json stays the warning below. */
		say_unreachable("deps.json", deps_path, -rc);
		goto out;
	} else if (rc != -ENOENT) {
		/* Decision for taskprof (issue 4, "Bad input"): a deps.json that
		 * exists but cannot be parsed is an error, not the reference's
		 * "Warning: failed to read" followed by a trace without arrows —
		 * the user would otherwise get a silently degraded trace. */
		fflush(stdout);
		fprintf(stderr, "Error: %s\n", tp_shown(job.err));
		goto out;
	}
	if (have_deps && deps.has_edges) {
		if (a.verbose) {
			printf("  Using deps.json edges (%zu total) from %s\n", deps.n_edges,
			       tp_shown(deps_path));
			if (deps.n_tasks)
				printf("  Using deps.json kernel_ids for %zu tasks (level=1 name "
				       "recovery)\n",
				       deps.n_tasks);
		}
	} else if (in_run && !have_deps) {
		/* The run's own conversion: the run had no --enable-dep-gen. */
		printf("note: no deps.json (the run had no --enable-dep-gen): the trace has no "
		       "dependency arrows and names no kernel (the table's func_-1_ row); run "
		       "with --enable-l2-swimlane --enable-dep-gen for both\n");
	} else {
		fflush(stdout);
		fprintf(stderr,
			"Warning: no usable deps.json at %s; Perfetto trace will have no dependency "
			"arrows. Run a dep_gen capture (--enable-dep-gen) and pass --deps-json <path> "
			"to add them.\n",
			tp_shown(deps_path));
	}
	/* Decision for taskprof (not in the reference): a deps.json from
	 * another case or run, or one that lists no tasks at all (an empty or
	 * edges-only file), is otherwise taken in silence, leaving kernels
	 * unnamed (func_-1) and arrows missing. Rows whose task the deps.json
	 * does not list say so (the check sched-overhead shares). */
	if (have_deps && have_pd) {
		struct sl_deps_cover cov;
		sl_deps_cover(&deps, &pd, &cov);
		fflush(stdout);
		sl_deps_cover_warn(stderr, &cov, input, deps_path,
				   cov.no_tasks ? "their kernels stay unnamed (func_-1)"
						: "their kernels stay unnamed and their dependency "
						  "arrows are missing");
		sl_deps_cover_kernel_warn(stderr, &cov, input, deps_path);
	}

	/* 7. the trace: never over one of its own inputs */
	{
		const char *ins[3] = {input, have_deps ? deps_path : NULL, have_nm ? names_path : NULL};
		for (int i = 0; i < 3; i++) {
			if (same_file(output, ins[i])) {
				fflush(stdout);
				if (strcmp(output, ins[i]))
					fprintf(stderr, "Error: output %s is the input file %s\n",
						tp_shown(output), tp_shown(ins[i]));
				else
					fprintf(stderr, "Error: output %s is the input file\n",
						tp_shown(output));
				goto out;
			}
		}
		char real[PATH_MAX];
		const char *own = run_own_file(output, real);
		if (own) {
			fflush(stdout);
			if (!real[0])
				fprintf(stderr, "Error: output %s is the run's own %s (its folder "
						"holds result.txt): writing the trace there would "
						"destroy it; name another file, e.g. "
						"merged_swimlane.json\n", tp_shown(output), own);
			else
				fprintf(stderr, "Error: output %s is a link to %s, a run's own %s "
						"(its folder holds result.txt): writing the trace "
						"there would destroy it; name another file, e.g. "
						"merged_swimlane.json\n", tp_shown(output),
						tp_shown(real), own);
			goto out;
		}
	}
	if (pd.level >= 2 && pd.n_tasks == 0) {
		fflush(stdout);
		fprintf(stderr, "Warning: %s: no tasks (%s); the trace has no task slices\n",
			tp_shown(input), sl_perf_why_no_tasks(&pd));
	}
	{
		char mw[1024];
		if (sl_perf_metadata_warning(&pd, mw, sizeof(mw))) {
			fflush(stdout);
			fprintf(stderr, "Warning: %s: %s\n", tp_shown(input), mw);
		}
		if (sl_perf_far_warning(&pd, mw, sizeof(mw))) {
			fflush(stdout);
			fprintf(stderr, "Warning: %s: %s\n", tp_shown(input), mw);
		}
		if (sl_perf_zero_start_warning(&pd, mw, sizeof(mw))) {
			fflush(stdout);
			fprintf(stderr, "Warning: %s: %s\n", tp_shown(input), mw);
		}
		if (sl_perf_order_warning(&pd, mw, sizeof(mw))) {
			fflush(stdout);
			fprintf(stderr, "Warning: %s: %s\n", tp_shown(input), mw);
		}
	}
	if (pd.n_kindless_phases) {
		fflush(stdout);
		fprintf(stderr, "Warning: %s: %" PRIu64 " aicpu_scheduler_phases record(s) "
				"without a kind: not drawn\n", tp_shown(input),
				pd.n_kindless_phases);
	}
	if (pd.n_unknown_phases) {
		char kb[64];
		fflush(stdout);
		fprintf(stderr, "Warning: %s: %" PRIu64 " aicpu_scheduler_phases record(s) of an "
				"unknown kind (first: '%s'; spec kinds: complete, dispatch, release, "
				"dummy, early_dispatch, resolve, ...): not drawn\n",
			tp_shown(input), pd.n_unknown_phases,
			sl_printable(pd.first_unknown_phase, kb, sizeof(kb)));
	}
	if (pd.n_r2s_over) {
		fflush(stdout);
		fprintf(stderr, "Warning: %s: %" PRIu64 " aicore_tasks row(s) have a "
				"receive_to_start_cycles larger than their start_cycles: their "
				"receive comes before the counter's zero, drawn at a negative time\n",
			tp_shown(input), pd.n_r2s_over);
	}
	if (pd.n_aicore_orphans) {
		fflush(stdout);
		fprintf(stderr, "Warning: %s: %" PRIu64 " aicore_tasks row(s) have no matching "
				"aicpu_tasks row (core_id, reg_task_id): they are not in the trace or "
				"the statistics\n", tp_shown(input), pd.n_aicore_orphans);
	}
	struct sl_trace_opts o = {
		.output_path = output,
		.verbose = a.verbose,
		.overhead = a.overhead,
		.pretty = a.pretty,
		.out = stdout,
		.err = stderr,
	};
	fflush(stdout);
	/* -o into a folder that does not exist yet: made, as `run -o` and
	 * `op --output` make theirs. */
	if (a.output) {
		const char *slash = strrchr(output, '/');
		if (slash && slash != output) {
			char *parent = strndup(output, (size_t)(slash - output));
			if (!parent)
				goto oom;
			/* What it makes goes again if no trace comes (an error
			 * below, or an interrupt: base/tmp_registry.h). */
			made_top = tp_mkdir_missing_len(parent);
			int mrc = made_top ? tp_mkdir_p(parent, 0755) : 0;
			if (!mrc && made_top) {
				made_dir = parent;
				tp_tmpreg_set_made_dirs(made_dir, made_top);
			} else {
				free(parent);
			}
			if (mrc) {
				fprintf(stderr, "Error: %s: cannot create its folder: %s\n",
					tp_shown(output), tp_last_error());
				goto out;
			}
		}
	}
	rc = sl_trace_generate(&pd, have_deps ? &deps : NULL, have_nm ? &nm : NULL, &o, NULL);
	if (rc) {
		fflush(stdout);
		fprintf(stderr, "Error: %s\n", tp_last_error());
		goto out;
	}

	/* 8. */
	if (a.overhead && !(have_deps && deps.has_edges)) {
		fflush(stdout);
		fprintf(stderr, "Warning: --overhead needs deps.json for task readiness; no deps "
				"found, Overhead Analysis track skipped.\n");
	}

	/* 9–10. */
	printf("\n\xe2\x9c\x93 Conversion complete\n");
	printf("  Input:  %s\n", tp_shown(input));
	printf("  Output: %s\n", tp_shown(output));
	printf("\nTo visualize: Open https://ui.perfetto.dev/ and drag in %s\n",
	       tp_shown(output));
	sl_print_stats(stdout, &pd, have_nm ? &nm : NULL);
	if (!in_run)
		printf("\nScheduler-overhead deep-dive: run sched_overhead_analysis manually with "
		       "a separately-captured deps.json (--enable-dep-gen).\n");
	if (finish_stdout(stdout_err))
		goto out;
	if (!in_run && isatty(STDERR_FILENO)) {
		/* The hint above is the reference's wording (stdout, as the
		 * fixtures); what it means here goes to a terminal's stderr
		 * (the spec fixes stderr too: not into a file or pipe): the
		 * command, when it can run on these files, else what it
		 * lacks. */
		char *prog = tp_shell_quote(tp_args_prog());
		char *in = tp_shell_quote(input);
		char *dj = a.deps_json ? tp_shell_quote(a.deps_json) : NULL;
		if (!prog || !in || (a.deps_json && !dj))
			; /* out of memory: no hint */
		else if (pd.level < 3)
			fprintf(stderr, "(taskprof: that is `%s sched-overhead`; it needs records of "
					"--enable-l2-swimlane 3 or 4, these are level %d)\n",
				prog, pd.level);
		else if (have_deps && dj)
			fprintf(stderr, "(taskprof: that is `%s sched-overhead %s --deps-json %s`)\n",
				prog, in, dj);
		else if (have_deps)
			fprintf(stderr, "(taskprof: that is `%s sched-overhead %s`; it finds the "
					"deps.json beside the records)\n", prog, in);
		else
			fprintf(stderr, "(taskprof: that is `%s sched-overhead %s --deps-json DEPS`, "
					"with the deps.json of a run of this case with "
					"--enable-dep-gen)\n", prog, in);
		free(prog);
		free(in);
		free(dj);
	}
	exit_code = 0;
	goto out;
oom:
	fprintf(stderr, "Error: out of memory\n");
out:
	if (deps_started) {
		pthread_join(deps_tid, NULL);
		deps_done = true;
	}
	if (deps_done && job.rc == 0 && !have_deps)
		sl_deps_free(&deps);
	if (have_pd)
		sl_perf_data_free(&pd);
	if (have_deps)
		sl_deps_free(&deps);
	if (have_nm)
		sl_name_map_free(&nm);
	if (made_dir) {
		tp_tmpreg_set_made_dirs(NULL, 0);
		if (exit_code && !tp_rmdir_made(made_dir, made_top))
			fprintf(stderr, "Warning: %s: left in place (not empty)\n",
				tp_shown(made_dir));
		free(made_dir);
	}
	free(input);
	free(output);
	free(deps_path);
	free(names_path);
	return exit_code;
}
