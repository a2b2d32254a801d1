/* SPDX-License-Identifier: MIT */
/*
 * bench_runtime — scheduling throughput of the task runtime: 100,000 empty
 * tasks (a NULL kernel, runtime/engine.h) on a default a2a3sim device
 * (8 clusters, 1 orchestrator + 3 schedulers):
 *
 *   chain  100,000 tasks, each INOUT on one tensor (a dependency chain)
 *   wide   one root writing a tensor + 99,999 independent consumers of it
 *
 * Tasks after the first go into inner scopes of 1,000 so that rings
 * reclaim (a scope holding more than the ring window can never drain).
 *
 *   bench_runtime [TASKS]                    (default 100000)
 *
 * Prints per runtime and shape
 *   BENCH runtime runtime=<name> shape=chain|wide tasks=<n> tasks_per_s=<x> seconds=<s>
 * seconds: wall time of tp_engine_run() (device launch to join).
 * Runtimes: tensormap_and_ringbuffer (orchestration on AICPU N-1 while
 * the 3 schedulers run) and host_build_graph (the graph is built on the
 * host first, then all 4 AICPU threads schedule; the figure includes the
 * build). Exits 0, or 2 on an error.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/clock.h"
#include "base/error.h"
#include "platform/device.h"
#include "runtime/engine.h"
#include "runtime/orch.h"
#include "bench_help.h"

#define USAGE \
	"usage: bench_runtime [TASKS]   (default 100000, 2..10000000)\n\nScheduling throughput of the task runtime: TASKS empty tasks as a chain\nand as a wide graph, on each runtime:\n  BENCH runtime runtime=<r> shape=chain|wide ...\n"

#define SCOPE_TASKS 1000u

static const struct tp_kernel_entry kernels[1] = {
	{ NULL, TP_CORE_AIV, "EMPTY" },
};

struct shape {
	const char *name;
	uint32_t tasks;
	int32_t buf;
};

static int submit_scoped(struct tp_orch *o, uint32_t i, struct tp_task_args *a)
{
	int rc;
	if (i % SCOPE_TASKS == 0 && (rc = tp_scope_begin(o)))
		return rc;
	if ((rc = tp_submit_aiv(o, 0, a, NULL)))
		return rc;
	if (i % SCOPE_TASKS == SCOPE_TASKS - 1)
		return tp_scope_end(o);
	return 0;
}

static int orch_chain(struct tp_orch *o, void *arg)
{
	struct shape *s = arg;
	struct tp_tensor x;
	uint32_t one = 1;
	int rc = tp_tensor_make_contiguous(&x, (uintptr_t)&s->buf, TP_INT32, 1, &one);
	for (uint32_t i = 0; i < s->tasks && !rc; i++) {
		struct tp_task_args a;
		tp_args_init(&a);
		tp_args_add_inout(&a, &x);
		rc = submit_scoped(o, i, &a);
	}
	if (!rc && s->tasks % SCOPE_TASKS)
		rc = tp_scope_end(o);
	return rc;
}

static int orch_wide(struct tp_orch *o, void *arg)
{
	struct shape *s = arg;
	struct tp_tensor x;
	struct tp_task_args a;
	uint32_t one = 1;
	int rc = tp_tensor_make_contiguous(&x, (uintptr_t)&s->buf, TP_INT32, 1, &one);
	if (rc)
		return rc;
	tp_args_init(&a);
	tp_args_add_output_existing(&a, &x);
	if ((rc = tp_submit_aiv(o, 0, &a, NULL)))
		return rc;
	const uint32_t n = s->tasks - 1;
	for (uint32_t i = 0; i < n && !rc; i++) {
		tp_args_init(&a);
		tp_args_add_input(&a, &x);
		rc = submit_scoped(o, i, &a);
	}
	if (!rc && n % SCOPE_TASKS)
		rc = tp_scope_end(o);
	return rc;
}

static int bench(enum tp_runtime_mode mode, const char *shape, tp_orch_fn fn, uint32_t tasks)
{
	const char *runtime = mode == TP_RUNTIME_HOST_BUILD_GRAPH ? "host_build_graph"
								    : "tensormap_and_ringbuffer";
	struct tp_device *dev;
	int rc = tp_device_create(NULL, &dev);
	if (rc) {
		fprintf(stderr, "bench_runtime: %s\n", tp_last_error());
		return rc;
	}
	struct shape s = { .name = shape, .tasks = tasks };
	struct tp_engine_config cfg = { .dev = dev, .kernels = kernels, .num_kernels = 1,
					.runtime = mode };
	struct tp_engine_result res;
	uint64_t t0 = tp_now_ns();
	rc = tp_engine_run(&cfg, fn, &s, &res);
	uint64_t t1 = tp_now_ns();
	tp_device_close(dev);
	if (rc) {
		fprintf(stderr, "bench_runtime: %s %s: %s\n", runtime, shape,
			res.msg[0] ? res.msg : tp_last_error());
		return rc;
	}
	if (res.completed_tasks != tasks) {
		fprintf(stderr, "bench_runtime: %s %s: %llu tasks completed, expected %u\n",
			runtime, shape, (unsigned long long)res.completed_tasks, tasks);
		return -1;
	}
	double sec = (double)(t1 - t0) * 1e-9;
	printf("BENCH runtime runtime=%s shape=%s tasks=%u tasks_per_s=%.0f seconds=%.3f\n",
	       runtime, shape, tasks, sec > 0 ? tasks / sec : 0.0, sec);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	long n = argc > 1 ? (long)bench_count("bench_runtime", "TASKS", argv[1], 2, 10000000) : 100000;
	static const enum tp_runtime_mode modes[] = {
		TP_RUNTIME_TENSORMAP_RINGBUFFER, TP_RUNTIME_HOST_BUILD_GRAPH,
	};
	int failed = 0;
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		failed |= bench(modes[m], "chain", orch_chain, (uint32_t)n) != 0;
		failed |= bench(modes[m], "wide", orch_wide, (uint32_t)n) != 0;
	}
	return failed ? 2 : 0;
}
