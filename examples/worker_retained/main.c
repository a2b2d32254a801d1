/* SPDX-License-Identifier: MIT */
/*
 * worker_retained — retained PMU runs (seed 000 §3.4, docs/pmu.md
 * "Retained runs") from a harness that runs several cases in one process
 * through the Worker API of libtaskprof.so (include/taskprof/worker.h).
 *
 * One Worker with PMU on (event group 2, PIPE_UTILIZATION) and
 * collect_across_runs: gemm Small and gemm Medium run back to back, so the
 * Worker's background writer publishes the first run's pmu.csv while the
 * second executes; tp_worker_flush_diagnostics() is the barrier and the
 * success signal. Then the event group changes to 4 (MEMORY) for
 * paged_attention CaseSmall1 and the flush runs once more. After each
 * flush the example counts the data rows of every published pmu.csv and
 * checks them against the rows the run collected (tp_run_result
 * pmu_collected), and checks that each file's run_epoch column is the
 * run's.
 *
 * Usage: example_worker_retained [OUTPUT_ROOT]   (default ./outputs)
 * The platform comes from TASKPROF_PLATFORM (a2a3sim by default, or
 * a5sim).
 *
 * Exit status: 0 when every run passed its golden and every pmu.csv holds
 * exactly the run's rows; 1 when a check fails; 2 when a Worker call
 * fails (the message of tp_last_error() is printed).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskprof/worker.h"

struct job {
	const char *callable;
	const char *case_name;
	struct tp_run_result res;
};

static int fail(const char *what, int rc)
{
	fprintf(stderr, "worker_retained: %s failed (%d): %s\n", what, rc, tp_last_error());
	return 2;
}

/* Count the data rows of @path and check that each one's run_epoch
 * column holds @epoch. Return: rows, or -1 (message printed) when the
 * file cannot be read, has no run_epoch column or a row of another run. */
static long check_csv(const char *path, uint64_t epoch)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "worker_retained: %s: cannot open (the flush returned 0, so it "
				"should exist)\n", path);
		return -1;
	}
	char line[8192];
	int col = -1;
	long rows = 0, bad = 0;
	if (fgets(line, sizeof(line), f)) {
		int i = 0;
		for (char *save = NULL, *tok = strtok_r(line, ",\r\n", &save); tok;
		     tok = strtok_r(NULL, ",\r\n", &save), i++)
			if (!strcmp(tok, "run_epoch"))
				col = i;
	}
	if (col < 0) {
		fprintf(stderr, "worker_retained: %s: line 1: no run_epoch column\n", path);
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		int i = 0;
		char *save = NULL, *tok = strtok_r(line, ",\r\n", &save);
		while (tok && i < col) {
			tok = strtok_r(NULL, ",\r\n", &save);
			i++;
		}
		rows++;
		if (!tok || strtoull(tok, NULL, 10) != epoch)
			bad++;
	}
	fclose(f);
	if (bad) {
		fprintf(stderr, "worker_retained: %s: %ld of %ld rows do not have run_epoch %" PRIu64
				"\n", path, bad, rows, epoch);
		return -1;
	}
	return rows;
}

/* Run @j on @w and print its line. Return: 0, 1 (golden FAIL) or 2. */
static int run(struct tp_worker *w, struct job *j)
{
	const struct tp_callable *c = tp_callable_find(j->callable);
	if (!c) {
		fprintf(stderr, "worker_retained: no built-in callable %s\n", j->callable);
		return 2;
	}
	int rc = tp_worker_run(w, c, j->case_name, &j->res);
	if (rc)
		return fail(j->callable, rc);
	printf("run %s %s: %s, run_epoch %" PRIu64 ", %" PRIu64 " PMU rows collected, "
	       "pmu.csv %s\n", j->callable, j->case_name, j->res.pass ? "PASS" : "FAIL",
	       j->res.pmu_run_epoch, j->res.pmu_collected,
	       j->res.pmu_retained ? "awaits the flush" : "written");
	return j->res.pass ? 0 : 1;
}

/* After a flush: every job's pmu.csv holds exactly its collected rows. */
static int check_published(struct job *jobs, int n)
{
	int bad = 0;
	for (int i = 0; i < n; i++) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/pmu.csv", jobs[i].res.output_dir);
		long rows = check_csv(path, jobs[i].res.pmu_run_epoch);
		if (rows < 0 || (uint64_t)rows != jobs[i].res.pmu_collected) {
			if (rows >= 0)
				fprintf(stderr, "worker_retained: %s: %ld rows, the run collected %"
						PRIu64 "\n", path, rows, jobs[i].res.pmu_collected);
			bad = 1;
			continue;
		}
		printf("  %s: %ld rows, run_epoch %" PRIu64 "\n", path, rows,
		       jobs[i].res.pmu_run_epoch);
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))) {
		fprintf(argc > 2 ? stderr : stdout,
			"usage: %s [OUTPUT_ROOT]   (platform: TASKPROF_PLATFORM, default a2a3sim)\n",
			argv[0]);
		return argc > 2 ? 2 : 0;
	}
	const char *plat = getenv("TASKPROF_PLATFORM");
	struct tp_worker_config cfg = {
		.platform = plat && *plat ? plat : "a2a3sim",
		.output_root = argc == 2 ? argv[1] : "outputs",
		.pmu_event_type = 2,
		.collect_across_runs = true,
	};
	struct tp_worker *w = tp_worker_open(&cfg);
	if (!w)
		return fail("tp_worker_open", -1);

	struct job jobs[3] = {
		{ .callable = "gemm", .case_name = "Small" },
		{ .callable = "gemm", .case_name = "Medium" },
		{ .callable = "paged_attention", .case_name = "CaseSmall1" },
	};
	int status = 0, rc;
	/* Two runs retained at once (the most the Worker allows), then the
	 * barrier. */
	for (int i = 0; i < 2 && status < 2; i++)
		status |= run(w, &jobs[i]);
	if (status < 2) {
		if ((rc = tp_worker_flush_diagnostics(w)))
			status = fail("tp_worker_flush_diagnostics", rc);
		else
			status |= check_published(jobs, 2);
	}
	/* Another event group for the next run; retained runs keep theirs. */
	if (status < 2 && (rc = tp_worker_set_pmu_event_type(w, 4)))
		status = fail("tp_worker_set_pmu_event_type", rc);
	if (status < 2)
		status |= run(w, &jobs[2]);
	if (status < 2) {
		if ((rc = tp_worker_flush_diagnostics(w)))
			status = fail("tp_worker_flush_diagnostics", rc);
		else
			status |= check_published(jobs + 2, 1);
	}
	tp_worker_close(w);
	printf("worker_retained: %s\n", status ? "FAILED" : "every retained run published "
							     "and complete");
	return status > 1 ? 2 : status;
}
