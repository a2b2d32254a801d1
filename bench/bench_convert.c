/* SPDX-License-Identifier: MIT */
/*
 * bench_convert — the swimlane converter (`taskprof swimlane`) on generated
 * level-4 captures (tools/swimlane/gen_records.h) of 100,000 and 1,000,000
 * tasks (issue 4 acceptance).
 *
 *   bench_convert [TASKS ...]          (default: 100000 1000000)
 *
 * Every size runs two workload shapes (docs/converter-performance.md):
 *   shape=issue  the target check: inputs at the issue's scale (100,000
 *                tasks convert to about 0.5 GB of `--pretty` trace, as the
 *                reference converter's "such tasks" do);
 *   shape=heavy  for information only: the original, heavier mix (~1.6x
 *                the events per task), no target.
 *
 * Environment:
 *   TASKPROF_BENCH_SKIP_1M=1   drop the default 1,000,000-task case (quick
 *                              runs; `make bench` runs it)
 *   TASKPROF_BENCH_SHAPES=issue|heavy|issue,heavy  (default: both)
 *   TASKPROF_BENCH_PRETTY=0    skip the `--pretty` conversion that measures
 *                              the pretty-equivalent size (it runs for sizes
 *                              up to 300,000 tasks; larger ones report
 *                              events per task only)
 *   TASKPROF_BENCH_CONVERT_RUNS=N  conversions per size (1..15; default 5
 *                              up to 300,000 tasks, 3 above): the figures
 *                              are those of the run of the median wall
 *   TASKPROF_BENCH_TMPDIR=DIR  where the inputs and the trace go (default
 *                              $TMPDIR, else /tmp); they take ~0.6 GB per
 *                              100,000 tasks (~1.5 GB with the pretty
 *                              trace) and are removed afterwards.
 *
 * For each size and shape it prints
 *   BENCH convert-input shape=S tasks=N rows=.. sched_records=.. edges=..
 *         records_bytes=.. deps_bytes=.. in_bytes=.. gen_s=..
 *   BENCH convert-read shape=S tasks=N wall_s=.. peak_rss_mb=.. records_s=..
 *         deps_s=.. names_s=.. rss_after_records_mb=.. rows=..
 *         unique_edges=.. user_s=.. sys_s=..
 *   BENCH convert-phases shape=S tasks=N records_s=.. names_s=.. deps_s=..
 *         trace_s=.. stats_s=.. free_s=.. wall_s=.. peak_rss_mb=.. events=..
 *         flows=.. user_s=.. sys_s=..
 *   BENCH convert-pretty shape=S tasks=N wall_s=.. user_s=.. sys_s=..
 *         peak_rss_mb=.. pretty_bytes=..            (when measured)
 *   BENCH convert shape=S tasks=N runs=.. wall_s=.. wall_s_min=..
 *         wall_s_max=.. cpu_s=.. user_s=.. sys_s=..
 *         peak_rss_mb=.. out_bytes=.. in_bytes=.. events=.. events_per_task=..
 *         pretty_bytes=.. read_share=..% then, for shape=issue,
 *         "(target <= 1.0 s, <= 250 MB: met|MISSED [time] [memory])", for
 *         shape=heavy "(information only, no target)".
 * Each step runs in its own forked child: wall_s is the parent's clock
 * around fork..wait4 (so process start-up and exit, including unmapping,
 * count), cpu_s = user_s + sys_s the child's CPU time (the steadier figure
 * on a shared machine), peak_rss_mb the child's ru_maxrss. `convert` is
 * sl_convert_main({"taskprof swimlane", records, "-o", out}) with stdout
 * to /dev/null (name map and deps.json found next to the records, as the
 * CLI does); `convert-read` is the three readers alone; `convert-phases`
 * runs the converter's steps (readers, sl_trace_generate(),
 * sl_print_stats(), frees) in one child and times each from inside;
 * `convert-pretty` is `convert` with --pretty; read_share is
 * convert-read's wall over convert's.
 * Exits 0 (missed targets are reported, not failed), 2 on an error.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>

#include "bench_help.h"
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_fork.h"
#include "taskprof/taskprof.h"
#include "tools/swimlane/gen_records.h"
#include "tools/swimlane/perf_data.h"
#include "tools/swimlane/trace.h"

struct paths {
	char dir[512];
	char records[600], deps[600], names[600], out[600];
};

struct gen_arg {
	const struct paths *p;
	uint64_t ntasks;
	enum sl_gen_shape shape;
};

static int step_gen(void *arg, int fd)
{
	struct gen_arg *g = arg;
	struct sl_gen_stats st;
	int rc = sl_gen_inputs_shape(g->p->dir, g->ntasks, 0, 1, g->shape, &st);
	if (rc) {
		fprintf(stderr, "bench_convert: generate: %s\n", tp_last_error());
		return 2;
	}
	bf_send(fd, &st, sizeof(st));
	return 0;
}

struct read_times {
	double records_s, deps_s, names_s, rss_after_records_mb;
	uint64_t n_rows, n_edges;
};

static double self_rss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

static int step_read(void *arg, int fd)
{
	const struct paths *p = arg;
	struct read_times t = { 0 };
	struct sl_perf_data pd;
	struct sl_deps d;
	struct sl_name_map m;
	double t0 = bf_now();
	if (sl_read_perf_data(p->records, &pd)) {
		fprintf(stderr, "bench_convert: %s\n", tp_last_error());
		return 2;
	}
	double t1 = bf_now();
	t.rss_after_records_mb = self_rss_mb();
	if (sl_read_deps(p->deps, &d)) {
		fprintf(stderr, "bench_convert: %s\n", tp_last_error());
		return 2;
	}
	double t2 = bf_now();
	if (sl_read_name_map(p->names, &m)) {
		fprintf(stderr, "bench_convert: %s\n", tp_last_error());
		return 2;
	}
	double t3 = bf_now();
	t.records_s = t1 - t0;
	t.deps_s = t2 - t1;
	t.names_s = t3 - t2;
	t.n_rows = pd.n_tasks;
	t.n_edges = d.n_edges;
	bf_send(fd, &t, sizeof(t));
	/* No frees: the process exits, as the CLI's would. */
	return 0;
}

struct phase_times {
	double records_s, names_s, deps_s, trace_s, stats_s, free_s;
	uint64_t n_events, n_flows;
};

/* The converter's steps one by one (as sl_convert_main runs them), timed
 * from inside: where the time of `convert` goes. */
static int step_phases(void *arg, int fd)
{
	const struct paths *p = arg;
	struct phase_times t = { 0 };
	struct sl_perf_data pd;
	struct sl_deps d;
	struct sl_name_map m;
	struct sl_trace_result res = { 0 };
	struct sl_trace_opts o = {
		.output_path = p->out, .out = stdout, .err = stderr,
	};
	double t0 = bf_now();
	if (sl_read_perf_data(p->records, &pd))
		goto fail;
	double t1 = bf_now();
	if (sl_read_name_map(p->names, &m))
		goto fail;
	double t2 = bf_now();
	if (sl_read_deps(p->deps, &d))
		goto fail;
	double t3 = bf_now();
	if (sl_trace_generate(&pd, &d, &m, &o, &res))
		goto fail;
	double t4 = bf_now();
	sl_print_stats(stdout, &pd, &m);
	fflush(stdout);
	double t5 = bf_now();
	sl_perf_data_free(&pd);
	sl_deps_free(&d);
	sl_name_map_free(&m);
	double t6 = bf_now();
	t.records_s = t1 - t0;
	t.names_s = t2 - t1;
	t.deps_s = t3 - t2;
	t.trace_s = t4 - t3;
	t.stats_s = t5 - t4;
	t.free_s = t6 - t5;
	t.n_events = res.n_events;
	t.n_flows = res.n_flows;
	bf_send(fd, &t, sizeof(t));
	return 0;
fail:
	fprintf(stderr, "bench_convert: %s\n", tp_last_error());
	return 2;
}

static int step_convert(void *arg, int fd)
{
	const struct paths *p = arg;
	(void)fd;
	char *argv[] = { "taskprof swimlane", (char *)p->records, "-o",
			 (char *)p->out, NULL };
	return sl_convert_main(4, argv);
}

static int step_pretty(void *arg, int fd)
{
	const struct paths *p = arg;
	(void)fd;
	char *argv[] = { "taskprof swimlane", (char *)p->records, "-o",
			 (char *)p->out, "--pretty", NULL };
	return sl_convert_main(5, argv);
}

static void cleanup(const struct paths *p)
{
	unlink(p->records);
	unlink(p->deps);
	unlink(p->names);
	unlink(p->out);
	rmdir(p->dir);
}

static bool env_off(const char *name)
{
	const char *v = getenv(name);
	return v && (!strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "off"));
}

/* One size and shape; @target_s / @target_mb apply when @check. */
/* Conversions per size: TASKPROF_BENCH_CONVERT_RUNS, else 5 up to 300,000
 * tasks and 3 above (1 to CONVERT_RUNS_MAX). */
#define CONVERT_RUNS_MAX 15

static int convert_runs(uint64_t ntasks)
{
	const char *e = getenv("TASKPROF_BENCH_CONVERT_RUNS");
	if (e && *e) {
		char *end;
		long v = strtol(e, &end, 10);
		if (!*end && v >= 1 && v <= CONVERT_RUNS_MAX)
			return (int)v;
		fprintf(stderr, "bench_convert: TASKPROF_BENCH_CONVERT_RUNS=%s is not 1..%d; "
			"using the default\n", e, CONVERT_RUNS_MAX);
	}
	return ntasks <= 300000 ? 5 : 3;
}

static int cmp_wall(const void *a, const void *b)
{
	double x = ((const struct bf_result *)a)->wall_s, y = ((const struct bf_result *)b)->wall_s;
	return x < y ? -1 : x > y;
}

static int bench_one(const char *tmp, uint64_t ntasks, enum sl_gen_shape shape,
		     bool check, double target_s, double target_mb)
{
	const char *sn = sl_gen_shape_name(shape);
	struct paths p;
	snprintf(p.dir, sizeof(p.dir), "%s/tp_bench_convert_XXXXXX", tmp);
	if (!mkdtemp(p.dir)) {
		fprintf(stderr, "bench_convert: mkdtemp %s: %s\n", p.dir, strerror(errno));
		return 2;
	}
	snprintf(p.records, sizeof(p.records), "%s/l2_swimlane_records.json", p.dir);
	snprintf(p.deps, sizeof(p.deps), "%s/deps.json", p.dir);
	snprintf(p.names, sizeof(p.names), "%s/name_map_Bench_case.json", p.dir);
	snprintf(p.out, sizeof(p.out), "%s/merged_swimlane.json", p.dir);

	int ret = 2;
	struct bf_result r = { 0 };
	struct sl_gen_stats st;
	struct gen_arg ga = { &p, ntasks, shape };
	if (bf_run(step_gen, &ga, false, &r, &st, sizeof(st)) || r.exit_code) {
		fprintf(stderr, "bench_convert: generating %" PRIu64 " tasks failed\n", ntasks);
		goto out;
	}
	uint64_t in_bytes = st.records_bytes + st.deps_bytes + st.name_map_bytes;
	printf("BENCH convert-input shape=%s tasks=%" PRIu64 " rows=%" PRIu64
	       " sched_records=%" PRIu64 " edges=%" PRIu64 " records_bytes=%" PRIu64
	       " deps_bytes=%" PRIu64 " in_bytes=%" PRIu64 " gen_s=%.2f\n",
	       sn, ntasks, st.n_rows, st.n_sched_total, st.n_edges, st.records_bytes,
	       st.deps_bytes, in_bytes, r.wall_s);

	struct read_times rt;
	if (bf_run(step_read, &p, false, &r, &rt, sizeof(rt)) || r.exit_code) {
		fprintf(stderr, "bench_convert: reading %" PRIu64 " tasks failed\n", ntasks);
		goto out;
	}
	printf("BENCH convert-read shape=%s tasks=%" PRIu64 " wall_s=%.3f peak_rss_mb=%.1f"
	       " records_s=%.3f deps_s=%.3f names_s=%.4f rss_after_records_mb=%.1f"
	       " rows=%" PRIu64 " unique_edges=%" PRIu64 " user_s=%.3f sys_s=%.3f\n",
	       sn, ntasks, r.wall_s, r.peak_rss_mb, rt.records_s, rt.deps_s, rt.names_s,
	       rt.rss_after_records_mb, rt.n_rows, rt.n_edges, r.user_s, r.sys_s);
	double read_s = r.wall_s;

	/* The conversion itself, several times: the run of the median wall
	 * gives the figures (one run on this shared machine can take 1.5x
	 * another), the peak RSS is the largest of all. */
	int runs = convert_runs(ntasks);
	struct bf_result conv[CONVERT_RUNS_MAX];
	uint64_t out_bytes = 0;
	double peak_mb = 0;
	for (int k = 0; k < runs; k++) {
		unlink(p.out);
		if (bf_run(step_convert, &p, true, &conv[k], NULL, 0)) {
			fprintf(stderr, "bench_convert: fork: %s\n", strerror(errno));
			goto out;
		}
		if (conv[k].exit_code) {
			fprintf(stderr, "bench_convert: taskprof swimlane exited %d on %" PRIu64
				" tasks\n", conv[k].exit_code, ntasks);
			goto out;
		}
		out_bytes = bf_file_size(p.out);
		if (conv[k].peak_rss_mb > peak_mb)
			peak_mb = conv[k].peak_rss_mb;
	}
	qsort(conv, (size_t)runs, sizeof(conv[0]), cmp_wall);
	struct bf_result rc_conv = conv[runs / 2];
	rc_conv.peak_rss_mb = peak_mb;
	double wall_min = conv[0].wall_s, wall_max = conv[runs - 1].wall_s;

	struct phase_times pt;
	unlink(p.out);
	if (bf_run(step_phases, &p, true, &r, &pt, sizeof(pt)) || r.exit_code) {
		fprintf(stderr, "bench_convert: phases of %" PRIu64 " tasks failed\n", ntasks);
		goto out;
	}
	printf("BENCH convert-phases shape=%s tasks=%" PRIu64 " records_s=%.3f names_s=%.4f"
	       " deps_s=%.3f trace_s=%.3f stats_s=%.3f free_s=%.3f wall_s=%.3f"
	       " peak_rss_mb=%.1f events=%" PRIu64 " flows=%" PRIu64
	       " user_s=%.3f sys_s=%.3f\n",
	       sn, ntasks, pt.records_s, pt.names_s, pt.deps_s, pt.trace_s, pt.stats_s,
	       pt.free_s, r.wall_s, r.peak_rss_mb, pt.n_events, pt.n_flows,
	       r.user_s, r.sys_s);
	unlink(p.out);

	/* The pretty-equivalent size: what the reference layout would write
	 * for the same events (the issue quotes the reference's size). */
	char pretty[32] = "unmeasured";
	if (ntasks <= 300000 && !env_off("TASKPROF_BENCH_PRETTY")) {
		if (bf_run(step_pretty, &p, true, &r, NULL, 0) || r.exit_code) {
			fprintf(stderr, "bench_convert: --pretty of %" PRIu64 " tasks failed\n",
				ntasks);
			goto out;
		}
		uint64_t pb = bf_file_size(p.out);
		unlink(p.out);
		printf("BENCH convert-pretty shape=%s tasks=%" PRIu64 " wall_s=%.3f"
		       " user_s=%.3f sys_s=%.3f peak_rss_mb=%.1f pretty_bytes=%" PRIu64 "\n",
		       sn, ntasks, r.wall_s, r.user_s, r.sys_s, r.peak_rss_mb, pb);
		snprintf(pretty, sizeof(pretty), "%" PRIu64, pb);
	}

	r = rc_conv;
	bool met_s = r.wall_s <= target_s, met_mb = r.peak_rss_mb <= target_mb;
	char verdict[128];
	if (check)
		snprintf(verdict, sizeof(verdict), "target <= %.1f s, <= %.0f MB: %s%s%s",
			 target_s, target_mb, met_s && met_mb ? "met" : "MISSED",
			 met_s ? "" : " time", met_mb ? "" : " memory");
	else
		snprintf(verdict, sizeof(verdict), "information only, no target");
	printf("BENCH convert shape=%s tasks=%" PRIu64 " runs=%d wall_s=%.3f wall_s_min=%.3f"
	       " wall_s_max=%.3f cpu_s=%.3f"
	       " user_s=%.3f sys_s=%.3f peak_rss_mb=%.1f out_bytes=%" PRIu64
	       " in_bytes=%" PRIu64 " events=%" PRIu64 " events_per_task=%.1f"
	       " pretty_bytes=%s read_share=%.0f%% (%s)\n",
	       sn, ntasks, runs, r.wall_s, wall_min, wall_max, r.user_s + r.sys_s, r.user_s,
	       r.sys_s,
	       r.peak_rss_mb, out_bytes, in_bytes, pt.n_events,
	       (double)pt.n_events / (double)ntasks, pretty,
	       r.wall_s > 0 ? 100.0 * read_s / r.wall_s : 0.0, verdict);
	ret = 0;
out:
	cleanup(&p);
	return ret;
}

static const char USAGE[] =
	"usage: bench_convert [TASKS ...]   (default: 100000 1000000)\n"
	"\n"
	"The swimlane converter on generated level-4 captures of TASKS tasks, in two\n"
	"shapes (issue: the target check; heavy: information only); prints BENCH\n"
	"convert-input / convert-read / convert-phases / convert-pretty / convert lines.\n"
	"\n"
	"Environment:\n"
	"  TASKPROF_BENCH_SKIP_1M=1   drop the default 1,000,000-task case\n"
	"  TASKPROF_BENCH_SHAPES=issue|heavy|issue,heavy   (default: both)\n"
	"  TASKPROF_BENCH_PRETTY=0    skip the --pretty conversion\n"
	"  TASKPROF_BENCH_CONVERT_RUNS=N  conversions per size, 1..15 (default 5 up to\n"
	"                             300,000 tasks, 3 above); the convert line gives\n"
	"                             the run of the median wall\n"
	"  TASKPROF_BENCH_TMPDIR=DIR  where inputs and traces go (default $TMPDIR, /tmp;\n"
	"                             ~0.6 GB per 100,000 tasks, removed afterwards)\n";

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	const char *tmp = getenv("TASKPROF_BENCH_TMPDIR");
	if (!tmp || !*tmp)
		tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	uint64_t sizes[16];
	int n = 0;
	for (int i = 1; i < argc && n < 16; i++) {
		sizes[n++] = bench_count("bench_convert", "TASKS", argv[i], 1, 100000000);
	}
	if (n == 0) {
		const char *skip = getenv("TASKPROF_BENCH_SKIP_1M");
		sizes[n++] = 100000;
		if (!skip || !*skip || !strcmp(skip, "0"))
			sizes[n++] = 1000000;
	}
	const char *shapes = getenv("TASKPROF_BENCH_SHAPES");
	bool do_issue = !shapes || !*shapes || strstr(shapes, "issue");
	bool do_heavy = !shapes || !*shapes || strstr(shapes, "heavy");
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		/* Issue 4 targets: 100,000 tasks <= 1.0 s and 250 MB; 1,000,000
		 * <= 12 s and 1.5 GB, checked on the issue-scale shape. Other
		 * sizes are measured against the nearest. */
		bool big = sizes[i] > 300000;
		double ts = big ? 12.0 : 1.0, tm = big ? 1536.0 : 250.0;
		if (do_issue)
			rc = bench_one(tmp, sizes[i], SL_GEN_ISSUE, true, ts, tm);
		if (!rc && do_heavy)
			rc = bench_one(tmp, sizes[i], SL_GEN_HEAVY, false, ts, tm);
	}
	return rc;
}
