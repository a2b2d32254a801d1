/* SPDX-License-Identifier: MIT */
/*
 * bench_paged_attention_seq — paged attention (spec/runtime-model.md §5)
 * through the sequential reference orchestration, no runtime: every task
 * of the case runs its tile-API kernel on one thread, then the output is
 * checked against the §5.5 golden (rtol = atol = 1e-3).
 *
 * The figure is the floor the runtime's wall time is compared with: the
 * kernels' own cost with zero scheduling.
 *
 *   bench_paged_attention_seq [CASE]        (default Case1)
 *
 * Prints
 *   BENCH paged_attention_seq case=<c> tasks=<n> seconds=<s> golden=pass|fail
 * plus one info line (the run's CPU time — the machine may be shared —,
 * input generation and golden times, the comparator's verdict).
 * Exits 0 on a pass, 1 on a golden failure, 2 on bad input or an error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/clock.h"
#include "examples/paged_attention/pa_golden.h"
#include "examples/paged_attention/pa_inputs.h"
#include "examples/paged_attention/pa_seq.h"
#include "taskprof/taskprof.h"
#include "bench_help.h"

#define USAGE \
	"usage: bench_paged_attention_seq [CASE]   (default Case1)\n\nPaged attention run task by task on one thread, no runtime (the floor the\nruntime is compared with), checked against its golden:\n  BENCH paged_attention_seq case=<c> tasks=<n> seconds=<s> golden=pass|fail\n"

/* This thread's CPU time, ns: the machine may be shared, and the CPU time
 * of the single-threaded run is the figure that does not depend on it. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	const char *name = argc > 1 ? argv[1] : "Case1";
	const struct pa_case *c = pa_case_find(name);
	if (!c) {
		fprintf(stderr, "bench_paged_attention_seq: unknown case '%s'; "
				"expected one of:",
			name);
		for (size_t i = 0; i < pa_case_count(); i++)
			fprintf(stderr, " %s", pa_case_at(i)->name);
		fprintf(stderr, "\n");
		return 2;
	}

	struct pa_inputs in;
	uint64_t t0 = tp_now_ns();
	if (pa_inputs_create(c, PA_DEFAULT_SEED, &in)) {
		fprintf(stderr, "bench_paged_attention_seq: %s\n",
			tp_last_error());
		return 2;
	}
	uint64_t t1 = tp_now_ns();

	struct pa_seq_stats st;
	uint64_t c0 = cpu_ns();
	int rc = pa_seq_run(&in, &st);
	uint64_t c1 = cpu_ns();
	if (rc) {
		fprintf(stderr, "bench_paged_attention_seq: %s\n",
			tp_last_error());
		pa_inputs_destroy(&in);
		return 2;
	}

	const size_t n = (size_t)in.d.B * in.d.H * in.d.D;
	float *want = malloc(n * sizeof(float));
	uint64_t t2 = tp_now_ns();
	if (!want || pa_golden(&in, want)) {
		fprintf(stderr, "bench_paged_attention_seq: golden: out of "
				"memory\n");
		free(want);
		pa_inputs_destroy(&in);
		return 2;
	}
	uint64_t t3 = tp_now_ns();
	struct pa_cmp r;
	char line[512];
	bool ok = pa_compare(want, in.out, n, PA_RTOL, PA_ATOL, &r);
	pa_cmp_format(&r, &in.d, PA_RTOL, PA_ATOL, line, sizeof(line));

	printf("BENCH paged_attention_seq case=%s tasks=%llu seconds=%.3f "
	       "golden=%s\n",
	       c->name, (unsigned long long)st.tasks, st.ns / 1e9,
	       ok ? "pass" : "fail");
	printf("info: %.2f us/task wall, %.3f s CPU (%.2f us/task); inputs "
	       "%.3f s, golden %.3f s; %s\n",
	       st.ns / 1e3 / (double)st.tasks, (c1 - c0) / 1e9,
	       (c1 - c0) / 1e3 / (double)st.tasks, (t1 - t0) / 1e9,
	       (t3 - t2) / 1e9, line);
	free(want);
	pa_inputs_destroy(&in);
	return ok ? 0 : 1;
}
