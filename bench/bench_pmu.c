/* SPDX-License-Identifier: MIT */
/*
 * bench_pmu — the per-task cost of PMU collection (issue 5 acceptance):
 * 100,000 independent empty AIV tasks (a NULL kernel) on a default device
 * (8 clusters, 1 orchestrator + 3 schedulers), once with PMU off (dual
 * issue) and once with PMU_PIPE_UTILIZATION on (single issue, the AICore
 * window, the AICPU record, the host collector and the pmu.csv export),
 * on a2a3sim and a5sim. Tasks go into inner scopes of 1,000 so rings
 * reclaim.
 *
 *   bench_pmu [TASKS]                    (default 100000)
 *
 * Prints per platform and mode
 *   BENCH pmu platform=<p> mode=off|on tasks=<n> seconds=<s> ns_per_task=<x>
 *             rows=<pmu.csv rows> dropped=<n>
 * and per platform
 *   BENCH pmu platform=<p> overhead_ns_per_task=<on - off>
 * seconds: the best of REPS runs of tp_engine_run() plus, when on, the
 * collector's stop, reconcile and export (the best, because the shared
 * machine's scheduling noise only ever adds time). PMU-on throughput is not comparable with
 * PMU-off throughput as a measure of the runtime (single issue, spec/pmu.md
 * §6.2); the difference is the price of collecting. Exits 0, or 2 on an
 * error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "platform/device.h"
#include "runtime/engine.h"
#include "runtime/orch.h"
#include "taskprof/worker.h"
#include "worker/run_pmu.h"
#include "bench_help.h"

#define USAGE \
	"usage: bench_pmu [TASKS]   (default 100000)\n\nPer-task cost of PMU collection: TASKS empty AIV tasks with PMU off and\non, on a2a3sim and a5sim:\n  BENCH pmu platform=<p> mode=off|on tasks=<n> seconds=<s> ns_per_task=<x>\n"

#define SCOPE_TASKS 1000u
#define REPS 3

static const struct tp_kernel_entry kernels[1] = {
	{ NULL, TP_CORE_AIV, "EMPTY" },
};

static int orch_wide(struct tp_orch *o, void *arg)
{
	uint32_t n = *(const uint32_t *)arg;
	int rc;
	for (uint32_t i = 0; i < n; i++) {
		if (i % SCOPE_TASKS == 0 && (rc = tp_scope_begin(o)))
			return rc;
		struct tp_task_args a;
		tp_args_init(&a);
		if ((rc = tp_submit_aiv(o, 0, &a, NULL)))
			return rc;
		if ((i % SCOPE_TASKS == SCOPE_TASKS - 1 || i == n - 1) && (rc = tp_scope_end(o)))
			return rc;
	}
	return 0;
}

/* One run; returns seconds, or < 0 on an error. */
static double run(const char *plat, uint32_t tasks, bool pmu, const char *dir,
		  struct tp_run_result *res)
{
	struct tp_device_config dc = { .platform = plat };
	struct tp_device *dev = NULL;
	if (tp_device_create(&dc, &dev))
		return -1;
	struct tp_sched_hooks h = { 0 };
	struct tp_engine_config ec = { .dev = dev, .kernels = kernels, .num_kernels = 1,
				       .hooks = &h };
	struct wk_pmu *p = NULL;
	struct wk_pmu_lease lease = { 0 };
	double secs = -1;
	if (pmu) {
		if (wk_pmu_open(&p, dev, tp_device_aicpu_threads(dev), false, 2, 1, dir, &lease))
			goto out;
		wk_pmu_wire(p, &h, &ec);
	}
	struct tp_engine_result er;
	uint64_t t0 = tp_now_ns();
	int rc = tp_engine_run(&ec, orch_wide, &tasks, &er);
	if (!rc && p)
		rc = wk_pmu_finish(p, res);
	uint64_t t1 = tp_now_ns();
	if (!rc && er.completed_tasks == tasks)
		secs = (double)(t1 - t0) * 1e-9;
out:
	wk_pmu_close(p);
	tp_device_close(dev);
	return secs;
}

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	uint32_t tasks = argc > 1 ? (uint32_t)bench_count("bench_pmu", "TASKS", argv[1], 1, 10000000)
				  : 100000u;
	char dir[] = "/tmp/bench_pmu_XXXXXX";
	if (!mkdtemp(dir)) {
		perror("bench_pmu: mkdtemp");
		return 2;
	}
	static const char *const plats[2] = { "a2a3sim", "a5sim" };
	struct tp_run_result *res = calloc(1, sizeof(*res));
	int code = 0;
	for (int i = 0; i < 2 && res; i++) {
		double ns[2];
		for (int on = 0; on < 2; on++) {
			double s = -1;
			for (int k = 0; k < REPS; k++) {
				memset(res, 0, sizeof(*res));
				double sk = run(plats[i], tasks, on, dir, res);
				if (sk < 0) {
					fprintf(stderr, "bench_pmu: %s %s: %s\n", plats[i],
						on ? "on" : "off", tp_last_error());
					code = 2;
					goto done;
				}
				if (res->pmu_csv[0])
					unlink(res->pmu_csv);
				if (s < 0 || sk < s)
					s = sk;
			}
			ns[on] = s * 1e9 / tasks;
			printf("BENCH pmu platform=%s mode=%s tasks=%u seconds=%.3f ns_per_task=%.0f "
			       "rows=%" PRIu64 " dropped=%" PRIu64 "\n",
			       plats[i], on ? "on" : "off", tasks, s, ns[on], res->pmu_rows,
			       res->pmu_dropped);
			fflush(stdout);
		}
		printf("BENCH pmu platform=%s overhead_ns_per_task=%.0f\n", plats[i],
		       ns[1] - ns[0]);
	}
done:
	free(res);
	rmdir(dir);
	return code;
}
