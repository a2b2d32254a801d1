/* SPDX-License-Identifier: MIT */
/*
 * range_threads — ranges on several threads at once, each freeing a
 * temporary buffer inside its range (tests/cli/test_op_modes.sh; hostile
 * finding of 2 Dec: one thread's pop freed the buffers another thread's
 * still-open range used).
 *
 * THREADS threads, each ITERS times:
 *     tp_rt_range_push("even" / "odd")
 *         tmp = tp_rt_malloc(N floats)
 *         tp_rt_memcpy(tmp, in, DEVICE_TO_DEVICE)
 *         launch "racc": out_t += tmp
 *         tp_rt_free(tmp)
 *     tp_rt_range_pop()
 * then each thread's out_t must be ITERS * in.
 *
 * Exit 0 / 1 / 2, see op_app.h.
 */
#include <pthread.h>

#include "op_app.h"

#define APP "range_threads"
#define N 8192u
#define THREADS 4
#define ITERS 10u

static float g_in[N];
static float *g_din;

static void *worker(void *arg)
{
	intptr_t id = (intptr_t)arg;
	static float zero[N];
	float *dout = NULL;
	intptr_t rc;
	if ((rc = op_app_upload(&dout, zero, N)) != 0)
		return (void *)(intptr_t)op_app_fail(APP, "upload out", (int)rc);
	for (uint32_t it = 0; it < ITERS; it++) {
		float *tmp = NULL;
		if ((rc = tp_rt_range_push(id % 2 ? "odd" : "even")) != 0 ||
		    (rc = tp_rt_malloc((void **)&tmp, N * sizeof(float))) != 0 ||
		    (rc = tp_rt_memcpy(tmp, g_din, N * sizeof(float),
				       TP_RT_MEMCPY_DEVICE_TO_DEVICE)) != 0)
			return (void *)(intptr_t)op_app_fail(APP, "range start", (int)rc);
		struct op_app_vec v = { .in = tmp, .out = dout, .n = N };
		if ((rc = op_app_launch(op_app_accumulate, "racc", 2, &v)) != 0 ||
		    (rc = tp_rt_free(tmp)) != 0 || (rc = tp_rt_range_pop()) != 0)
			return (void *)(intptr_t)op_app_fail(APP, "range", (int)rc);
	}
	/* one row per thread: no two threads write the same element */
	static float got[THREADS][N], want[THREADS][N];
	for (uint32_t i = 0; i < N; i++)
		want[id][i] = (float)ITERS * g_in[i];
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(got[id], dout, sizeof(got[id]), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0)
		return (void *)(intptr_t)op_app_fail(APP, "download", (int)rc);
	return (void *)(intptr_t)(op_app_check(APP, got[id], want[id], N) ? 1 : 0);
}

int main(void)
{
	for (uint32_t i = 0; i < N; i++)
		g_in[i] = (float)(i % 13u) - 6.0f;
	int rc = op_app_upload(&g_din, g_in, N);
	if (rc)
		return op_app_fail(APP, "upload in", rc);
	pthread_t t[THREADS];
	for (intptr_t i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) {
			fprintf(stderr, "%s: pthread_create failed\n", APP);
			return 2;
		}
	int worst = 0;
	for (int i = 0; i < THREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		if ((int)(intptr_t)r > worst)
			worst = (int)(intptr_t)r;
	}
	printf("%s: %d threads x %u ranges with a temporary buffer: %s\n", APP, THREADS, ITERS,
	       worst ? "WRONG" : "ok");
	return worst;
}
