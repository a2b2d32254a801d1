/* SPDX-License-Identifier: MIT */
/*
 * bench_json_parse — the measurement behind the choice of JSON parser for
 * the swimlane readers (docs/json-parser-choice.md): load a generated
 * level-4 capture's l2_swimlane_records.json and deps.json
 * (tools/swimlane/gen_records.h) with
 *
 *   yajl-null     yajl's streaming parser with no callbacks (tokenise and
 *                 validate only: the floor for any yajl reader)
 *   yajl-stream   the product readers, sl_read_perf_data() /
 *                 sl_read_deps() (yajl callbacks, join, sort, indexes)
 *   yajl-tree     yajl_tree_parse() on the whole file in memory (DOM)
 *   jansson-dom   jansson's json_load_file() (DOM; load only, no walk)
 *
 *   bench_json_parse [TASKS]        (default 100000)
 *
 * Environment: TASKPROF_BENCH_TMPDIR=DIR for the inputs (default $TMPDIR,
 * else /tmp); they are removed afterwards.
 *
 * Prints per file and parser
 *   BENCH json parser=<p> file=records|deps tasks=N bytes=.. wall_s=..
 *         cpu_s=.. peak_rss_mb=.. mb_per_s=.. rss_per_file_byte=..
 * Each load runs in its own forked child (wall_s around fork..wait4,
 * cpu_s = the child's user + system time, peak_rss_mb = its ru_maxrss;
 * mb_per_s is bytes / wall_s). On a shared machine cpu_s is the steadier
 * figure. Exits 0, or 2 on an error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "bench_help.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "base/file.h"
#include "bench_fork.h"
#include "taskprof/taskprof.h"
#include "tools/swimlane/gen_records.h"
#include "tools/swimlane/perf_data.h"

struct job {
	const char *path;
	bool deps;
};

static int load_yajl_null(void *arg, int fd)
{
	const struct job *j = arg;
	(void)fd;
	FILE *f = fopen(j->path, "rb");
	if (!f)
		return 2;
	static const yajl_callbacks none;
	yajl_handle h = yajl_alloc(&none, NULL, NULL);
	static unsigned char buf[1 << 16];
	size_t n;
	yajl_status s = yajl_status_ok;
	while (s == yajl_status_ok && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		s = yajl_parse(h, buf, n);
	if (s == yajl_status_ok)
		s = yajl_complete_parse(h);
	fclose(f);
	yajl_free(h);
	return s == yajl_status_ok ? 0 : 2;
}

static int load_yajl_stream(void *arg, int fd)
{
	const struct job *j = arg;
	(void)fd;
	int rc;
	if (j->deps) {
		struct sl_deps d;
		rc = sl_read_deps(j->path, &d);
	} else {
		struct sl_perf_data pd;
		rc = sl_read_perf_data(j->path, &pd);
	}
	if (rc)
		fprintf(stderr, "bench_json_parse: %s\n", tp_last_error());
	return rc ? 2 : 0; /* the process exit frees it */
}

static int load_yajl_tree(void *arg, int fd)
{
	const struct job *j = arg;
	(void)fd;
	char *data;
	size_t len;
	if (tp_read_file(j->path, &data, &len))
		return 2;
	char err[256];
	yajl_val v = yajl_tree_parse(data, err, sizeof(err));
	if (!v)
		fprintf(stderr, "bench_json_parse: yajl_tree: %s\n", err);
	return v ? 0 : 2;
}

static int load_jansson(void *arg, int fd)
{
	const struct job *j = arg;
	(void)fd;
	json_error_t err;
	json_t *v = json_load_file(j->path, 0, &err);
	if (!v)
		fprintf(stderr, "bench_json_parse: jansson: %s:%d: %s\n", j->path,
			err.line, err.text);
	return v ? 0 : 2;
}

static int step_gen(void *arg, int fd)
{
	const char **a = arg;
	struct sl_gen_stats st;
	if (sl_gen_inputs_stats(a[0], strtoull(a[1], NULL, 10), 0, 1, &st)) {
		fprintf(stderr, "bench_json_parse: %s\n", tp_last_error());
		return 2;
	}
	bf_send(fd, &st, sizeof(st));
	return 0;
}

static const char USAGE[] =
	"usage: bench_json_parse [TASKS]   (default 100000)\n"
	"\n"
	"Loads a generated level-4 capture's l2_swimlane_records.json and deps.json\n"
	"with yajl (null, stream, tree) and jansson; prints BENCH json lines.\n"
	"\n"
	"Environment: TASKPROF_BENCH_TMPDIR=DIR for the inputs (default $TMPDIR, else\n"
	"/tmp); they are removed afterwards.\n";

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	const char *tmp = getenv("TASKPROF_BENCH_TMPDIR");
	if (!tmp || !*tmp)
		tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	const char *ntasks = argc > 1 ? argv[1] : "100000";
	(void)bench_count("bench_json_parse", "TASKS", ntasks, 1, 100000000);

	char dir[512], rec[600], deps[600], names[600];
	snprintf(dir, sizeof(dir), "%s/tp_bench_json_XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "bench_json_parse: mkdtemp: %s\n", strerror(errno));
		return 2;
	}
	snprintf(rec, sizeof(rec), "%s/l2_swimlane_records.json", dir);
	snprintf(deps, sizeof(deps), "%s/deps.json", dir);
	snprintf(names, sizeof(names), "%s/name_map_Bench_case.json", dir);

	int ret = 0;
	struct bf_result r;
	struct sl_gen_stats st;
	const char *ga[2] = { dir, ntasks };
	if (bf_run(step_gen, ga, false, &r, &st, sizeof(st)) || r.exit_code) {
		ret = 2;
		goto out;
	}

	static const struct {
		const char *name;
		bf_step fn;
	} parsers[] = {
		{ "yajl-null", load_yajl_null },
		{ "yajl-stream", load_yajl_stream },
		{ "yajl-tree", load_yajl_tree },
		{ "jansson-dom", load_jansson },
	};
	const struct job jobs[2] = { { rec, false }, { deps, true } };
	for (int f = 0; f < 2 && !ret; f++) {
		uint64_t bytes = bf_file_size(jobs[f].path);
		for (size_t p = 0; p < sizeof(parsers) / sizeof(parsers[0]); p++) {
			if (bf_run(parsers[p].fn, (void *)&jobs[f], false, &r, NULL, 0) ||
			    r.exit_code) {
				fprintf(stderr, "bench_json_parse: %s on %s failed (exit %d)\n",
					parsers[p].name, jobs[f].path, r.exit_code);
				ret = 2;
				break;
			}
			printf("BENCH json parser=%s file=%s tasks=%s bytes=%" PRIu64
			       " wall_s=%.3f cpu_s=%.3f peak_rss_mb=%.1f mb_per_s=%.0f"
			       " rss_per_file_byte=%.2f\n",
			       parsers[p].name, f ? "deps" : "records", ntasks, bytes,
			       r.wall_s, r.user_s + r.sys_s, r.peak_rss_mb,
			       r.wall_s > 0 ? (double)bytes / 1048576.0 / r.wall_s : 0.0,
			       bytes ? r.peak_rss_mb * 1048576.0 / (double)bytes : 0.0);
		}
	}
out:
	unlink(rec);
	unlink(deps);
	unlink(names);
	rmdir(dir);
	return ret;
}
