/* SPDX-License-Identifier: MIT */
/*
 * args_write — a kernel that writes its own args struct, and args beside
 * memory another thread writes (docs/op.md "Limits").
 *
 * args = { device buffer out (16 floats, zero), calls = 0 } on the
 * stack. Block 0 of "aw_count" writes out[calls] = calls + 1, then
 * calls += 1 (byte +8 of the struct changes 0 -> 1); block 1 does
 * nothing. Run once, unprofiled: calls = 1, out = { 1, 0, 0, ... }. Kernel
 * replay does not undo the kernel's writes to host memory, so there each
 * execution writes the next element and calls ends at W + P + 1 (exit 1,
 * with taskprof op's warning).
 *
 * `args_write range` makes the launch between tp_rt_range_push("aw") and
 * tp_rt_range_pop(): range replay runs a captured copy of the args, so
 * calls is not checked there (docs/op.md: the struct never sees the
 * kernel's writes), only out.
 *
 * `args_write neighbor`: the args are a global followed by a counter a
 * second thread increments while the launch runs (calls = N: the kernel
 * writes nothing). Prints "args_write: the neighbour went back K times"
 * and exits 1 when K > 0: nothing may revert another thread's memory.
 *
 * Prints "args_write: calls after one launch = C (want 1)" and "out =
 * ..." (the first 8 elements). OP_OUT_FILE gets out's bytes. Exit 0 / 1
 * (wrong) / 2 (device error, bad usage), see op_app.h.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "op_app.h"

#define APP "args_write"
#define N 16u
#define BLOCKS 2u

struct aw_args {
	float *out;      /* device */
	uint32_t calls;  /* +8: the kernel's own counter */
	uint32_t pad;
};

static void aw_count(uint32_t block_idx, uint32_t block_dim, void *p)
{
	(void)block_dim;
	struct aw_args *a = p;
	if (block_idx != 0 || a->calls >= N)
		return;
	a->out[a->calls] = (float)(a->calls + 1);
	a->calls += 1;
}

/* neighbor: the args, then memory the bumping thread owns. */
static struct {
	struct aw_args a;
	volatile uint64_t counter;
} g_nb;
static atomic_bool g_stop;
static long g_back;

/* The neighbour's thread: increments its counter until stopped, counting
 * the times it found it other than it left it. */
static void *bump(void *u)
{
	(void)u;
	uint64_t mine = 0;
	/* Relaxed: a flag; the join orders the result. */
	while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
		g_back += g_nb.counter != mine;
		mine = g_nb.counter + 1;
		g_nb.counter = mine;
	}
	return NULL;
}

static int neighbor(void)
{
	float out[N] = { 0 };
	float *dout = NULL;
	int rc;
	if ((rc = op_app_upload(&dout, out, N)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	g_nb.a = (struct aw_args){ .out = dout, .calls = N };
	pthread_t t;
	if (pthread_create(&t, NULL, bump, NULL))
		return op_app_fail(APP, "pthread_create", -1);
	rc = op_app_launch(aw_count, "aw_count", BLOCKS, &g_nb.a);
	if (!rc)
		rc = tp_rt_synchronize();
	atomic_store_explicit(&g_stop, true, memory_order_relaxed);
	pthread_join(t, NULL);
	if (rc)
		return op_app_fail(APP, "aw_count", rc);
	printf("%s: the neighbour went back %ld times\n", APP, g_back);
	return g_back ? 1 : 0;
}

int main(int argc, char **argv)
{
	const int range = argc > 1 && !strcmp(argv[1], "range");
	if (argc > 1 && !strcmp(argv[1], "neighbor"))
		return neighbor();
	if (argc > 1 && !range) {
		fprintf(stderr, "usage: %s [range|neighbor]\n", APP);
		return 2;
	}
	float out[N] = { 0 };
	float *dout = NULL;
	int rc;
	if ((rc = op_app_upload(&dout, out, N)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	struct aw_args a = { .out = dout, .calls = 0 };
	if (range && (rc = tp_rt_range_push("aw")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	if ((rc = op_app_launch(aw_count, "aw_count", BLOCKS, &a)) != 0)
		return op_app_fail(APP, "aw_count", rc);
	if (range && (rc = tp_rt_range_pop()) != 0)
		return op_app_fail(APP, "tp_rt_range_pop", rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(out, dout, sizeof(out), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(dout)) != 0)
		return op_app_fail(APP, "download", rc);
	if ((rc = op_app_dump(APP, out, sizeof(out))) != 0)
		return rc;
	printf("%s: calls after one launch = %u (want 1)\n", APP, a.calls);
	printf("%s: out =", APP);
	for (uint32_t i = 0; i < 8; i++)
		printf(" %g", (double)out[i]);
	printf("\n");
	float want[N] = { 1.0f };
	uint32_t wrong = op_app_check(APP, out, want, N);
	if (!range && a.calls != 1)
		wrong++;
	return wrong ? 1 : 0;
}
