/* SPDX-License-Identifier: MIT */
/*
 * host_write — a kernel that writes host memory through its args (spec/
 * opprof.md §4.13 "kernel writes memory not from tp_rt_malloc": replay
 * cannot restore it, taskprof op must warn).
 *
 *   host_write global  args = { device buffer, &counter }, counter a
 *                      global: block 0 of "hw_global" adds 1 to it.
 *   host_write heap    args = { device buffer, heap array }: block b of
 *                      "hw_heap" adds 1 to element b (a malloc'd array).
 *   host_write none    args = { device buffer, heap array }: "hw_none"
 *                      only reads the array and writes the device buffer.
 *
 * `host_write MODE range` makes the launch between tp_rt_range_push("hw")
 * and tp_rt_range_pop().
 *
 * One launch; the host values must have been incremented exactly once
 * (which kernel replay, executing the kernel W + P + 1 times, breaks: it
 * is the case the warning is about). Prints "host_write MODE: host value
 * N (want 1)". Exit 0 / 1 (wrong value) / 2 (device error, bad usage),
 * see op_app.h.
 */
#include <stdbool.h>
#include <string.h>

#include "op_app.h"

#define APP "host_write"
#define BLOCKS 2u

struct hw_args {
	float *dev;
	int *host;
};

static int g_counter;

static void hw_global(uint32_t block_idx, uint32_t block_dim, void *p)
{
	(void)block_dim;
	const struct hw_args *a = p;
	if (block_idx == 0)
		__atomic_add_fetch(a->host, 1, __ATOMIC_SEQ_CST);
}

static void hw_heap(uint32_t block_idx, uint32_t block_dim, void *p)
{
	(void)block_dim;
	const struct hw_args *a = p;
	__atomic_add_fetch(&a->host[block_idx], 1, __ATOMIC_SEQ_CST);
}

static void hw_none(uint32_t block_idx, uint32_t block_dim, void *p)
{
	(void)block_dim;
	const struct hw_args *a = p;
	a->dev[block_idx] = (float)a->host[block_idx];
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	tp_rt_kernel_fn fn = !strcmp(mode, "global") ? hw_global :
			     !strcmp(mode, "heap")   ? hw_heap :
			     !strcmp(mode, "none")   ? hw_none : NULL;
	if (!fn) {
		fprintf(stderr, "usage: %s global|heap|none [range]\n", APP);
		return 2;
	}
	int *arr = calloc(BLOCKS, sizeof(int));
	if (!arr)
		return 2;
	if (fn == hw_none)
		arr[0] = arr[1] = 1;
	float *d = NULL;
	int rc;
	if ((rc = tp_rt_malloc((void **)&d, 4096)) != 0)
		return op_app_fail(APP, "tp_rt_malloc", rc);
	struct hw_args a = { d, fn == hw_global ? &g_counter : arr };
	char name[32];
	snprintf(name, sizeof(name), "hw_%s", mode);
	const bool range = argc > 2 && !strcmp(argv[2], "range");
	if (range && (rc = tp_rt_range_push("hw")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	if ((rc = op_app_launch(fn, name, BLOCKS, &a)) != 0)
		return op_app_fail(APP, name, rc);
	if (range && (rc = tp_rt_range_pop()) != 0)
		return op_app_fail(APP, "tp_rt_range_pop", rc);
	if ((rc = tp_rt_synchronize()) != 0)
		return op_app_fail(APP, "tp_rt_synchronize", rc);
	int got = fn == hw_global ? g_counter : arr[1];
	if (fn == hw_none) {
		float f[BLOCKS];
		if ((rc = tp_rt_memcpy(f, d, sizeof(f), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0)
			return op_app_fail(APP, "download", rc);
		got = (int)f[1];
	}
	printf("%s %s: host value %d (want 1)\n", APP, mode, got);
	free(arr);
	(void)tp_rt_free(d);
	return got == 1 ? 0 : 1;
}
