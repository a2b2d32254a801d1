/* SPDX-License-Identifier: MIT */
/*
 * tests/case_so/slowcase.c — a case shared object whose one kernel is
 * correct but slow, for the stall-timeout tests (tests/cli/
 * test_cli_stall.sh): y = x + 1 on fp32 [1, 64], one AIV task that first
 * busy-waits.
 *
 * Environment (read by the kernel):
 *   SLOWCASE_MS     how long the kernel busy-waits, ms (default 1500)
 *   SLOWCASE_CLOCK  "wall" (default): CLOCK_MONOTONIC time; "cpu": the
 *                   AICore thread's CPU time, which does not advance while
 *                   the process is stopped (so a stop delays the end)
 *   SLOWCASE_MARK   if set, the kernel creates MARK.start when it begins
 *                   and MARK.end when it is done
 *   SLOWCASE_BEFORE N (default 0): first submit N tasks of an empty AIV
 *                   kernel "FAST" that read x (they finish; the slow one
 *                   may still be running when a stall ends the run)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/orch.h"
#include "taskprof/case.h"
#include "taskprof/kernel.h"

#define COLS 64u

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void mark(const char *suffix)
{
	const char *m = getenv("SLOWCASE_MARK");
	char path[4096];
	if (!m || !*m)
		return;
	snprintf(path, sizeof(path), "%s.%s", m, suffix);
	FILE *f = fopen(path, "w");
	if (f)
		fclose(f);
}

static void busy_wait(void)
{
	const char *ms = getenv("SLOWCASE_MS"), *ck = getenv("SLOWCASE_CLOCK");
	clockid_t id = ck && !strcmp(ck, "cpu") ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
	uint64_t ns = (ms ? strtoull(ms, NULL, 10) : 1500u) * 1000000u;
	uint64_t t0 = clock_ns(id);
	while (clock_ns(id) - t0 < ns)
		;
}

/* AIV: IN x[1, COLS], OUT y[1, COLS]; y = x + 1 after the busy wait. */
static void k_slow(int64_t *args)
{
	const struct tp_tile *x = (const struct tp_tile *)(intptr_t)args[0];
	const struct tp_tile *y = (const struct tp_tile *)(intptr_t)args[1];
	struct tp_tile u;
	mark("start");
	busy_wait();
	if (!tp_local_tile(&u, TP_MEM_UB, TP_FP32, x->rows, x->cols) && !tp_copy_in(&u, x) &&
	    !tp_vadds(&u, &u, 1.0f))
		tp_copy_out(y, &u);
	mark("end");
}

static int slow_orch(struct tp_orch *o, const struct tp_case_args *args)
{
	uint32_t sh[2] = { 1, COLS };
	struct tp_tensor x, y;
	struct tp_task_args a;
	int rc;
	if (args->n_tensors != 2)
		return -EINVAL;
	if ((rc = tp_tensor_make_contiguous(&x, (uintptr_t)args->tensors[0].data, TP_FP32, 2, sh)) ||
	    (rc = tp_tensor_make_contiguous(&y, (uintptr_t)args->tensors[1].data, TP_FP32, 2, sh)))
		return rc;
	const char *nb = getenv("SLOWCASE_BEFORE");
	long before = nb ? strtol(nb, NULL, 10) : 0;
	for (long i = 0; i < before && i < 1000; i++) {
		tp_args_init(&a);
		tp_args_add_input(&a, &x);
		if ((rc = tp_submit_aiv(o, 1, &a, NULL)))
			return rc;
	}
	tp_args_init(&a);
	tp_args_add_input(&a, &x);
	tp_args_add_output_existing(&a, &y);
	return tp_submit_aiv(o, 0, &a, NULL);
}

static int slow_generate(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	float *buf = calloc(2u * COLS, sizeof(float));
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < COLS; i++)
		buf[i] = (float)i * 0.5f;
	*args = (struct tp_case_args){ .n_tensors = 2, .priv = buf };
	args->tensors[0] = (struct tp_case_tensor){
		.name = "x", .data = buf, .bytes = COLS * sizeof(float),
		.dtype = TP_FP32, .ndims = 2, .shape = { 1, COLS },
	};
	args->tensors[1] = args->tensors[0];
	args->tensors[1].name = "y";
	args->tensors[1].data = buf + COLS;
	args->tensors[1].is_out = true;
	return 0;
}

static int slow_golden(const struct tp_case *c, struct tp_case_args *e)
{
	(void)c;
	const float *x = e->tensors[0].data;
	float *y = e->tensors[1].data;
	for (uint32_t i = 0; i < COLS; i++)
		y[i] = x[i] + 1.0f;
	return 0;
}

static void slow_release(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	free(args->priv);
	args->priv = NULL;
}

static const struct tp_case_kernel slow_kernels[] = {
	{ 0, "SLOW", TP_CASE_AIV, k_slow },
	{ 1, "FAST", TP_CASE_AIV, NULL },
};

static const struct tp_case slow_cases[] = {
	{ .name = "Default", .rtol = 1e-6, .atol = 1e-6, .generate = slow_generate,
	  .golden = slow_golden, .release = slow_release },
};

static const struct tp_callable slow_callable = {
	.name = "slowcase",
	.orch_name = "slow_orch",
	.orch = slow_orch,
	.kernels = slow_kernels,
	.n_kernels = 2,
	.cases = slow_cases,
	.n_cases = 1,
	.default_case = "Default",
};

const struct tp_callable *tp_case_callable(void)
{
	return &slow_callable;
}
