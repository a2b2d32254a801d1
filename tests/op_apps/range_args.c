/* SPDX-License-Identifier: MIT */
/*
 * range_args — launch arguments that range replay must not copy, or can
 * copy only in part (docs/op.md "Limits": range replay, launch
 * arguments; tests/cli/test_op_launch_args.sh R1-R4).
 *
 * Each mode makes one launch of 2 blocks between tp_rt_range_push("ra")
 * and tp_rt_range_pop(), then reads the result back:
 *
 *   dev    the args ARE a device allocation (4 ints, 0): block b does
 *          args[b] += 1 through them. Want "d = 1 1": range replay once
 *          ran the kernel on a host copy of the args, so the writes never
 *          reached device memory and the application read 0 0.
 *   value  the args are a number, not a pointer ((void *)0x2a, which
 *          no page holds): block b writes it to out[b]. Want "d = 42 42"
 *          (the runtime passes args unchanged; range replay once passed a
 *          pointer to a zeroed copy instead).
 *   big    the args struct is 1 pointer + 201 ints (816 bytes): block 0
 *          writes its last field, magic = 12345, to out[0]. Want "d =
 *          12345 0". Range replay copies 256 bytes of a launch's args: the
 *          kernel once read the magic from past the copy and the
 *          application got garbage with status ok; now the read faults in
 *          the guard after the copy and taskprof op fails, naming it.
 *
 * Prints "range_args: MODE d = X Y" and exits 0 when right, 1 when wrong,
 * 2 on a device error or bad usage (op_app.h).
 */
#include <string.h>

#include "op_app.h"

#define APP "range_args"

static void ra_dev(uint32_t block_idx, uint32_t block_dim, void *args)
{
	(void)block_dim;
	((int *)args)[block_idx] += 1;
}

static int *g_out; /* device: value mode's output */

static void ra_value(uint32_t block_idx, uint32_t block_dim, void *args)
{
	(void)block_dim;
	g_out[block_idx] = (int)(uintptr_t)args;
}

struct ra_big {
	int *out;      /* device */
	int pad[200];
	int magic;     /* +808: past the 256 bytes range replay copies */
};

static void ra_big(uint32_t block_idx, uint32_t block_dim, void *args)
{
	(void)block_dim;
	const struct ra_big *a = args;
	if (block_idx == 0)
		a->out[0] = a->magic;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const int want[2][3] = { { 1, 42, 12345 }, { 1, 42, 0 } };
	int m = !strcmp(mode, "dev") ? 0 : !strcmp(mode, "value") ? 1 : !strcmp(mode, "big") ? 2 : -1;
	if (m < 0) {
		fprintf(stderr, "usage: %s dev|value|big\n", APP);
		return 2;
	}
	int *dev = NULL, rc;
	const int zero[4] = { 0 };
	if ((rc = tp_rt_malloc((void **)&dev, sizeof(zero))) != 0 ||
	    (rc = tp_rt_memcpy(dev, zero, sizeof(zero), TP_RT_MEMCPY_HOST_TO_DEVICE)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	static struct ra_big big;
	big.out = dev;
	big.magic = 12345;
	g_out = dev;
	if ((rc = tp_rt_range_push("ra")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	if (m == 0)
		rc = op_app_launch(ra_dev, "ra_dev", 2, dev);
	else if (m == 1)
		rc = op_app_launch(ra_value, "ra_value", 2, (void *)(uintptr_t)42);
	else
		rc = op_app_launch(ra_big, "ra_big", 2, &big);
	if (rc)
		return op_app_fail(APP, "launch", rc);
	if ((rc = tp_rt_range_pop()) != 0)
		return op_app_fail(APP, "tp_rt_range_pop", rc);
	int got[4] = { -1, -1, -1, -1 };
	if ((rc = tp_rt_memcpy(got, dev, sizeof(got), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(dev)) != 0)
		return op_app_fail(APP, "download", rc);
	printf("%s: %s d = %d %d\n", APP, mode, got[0], got[1]);
	return got[0] == want[0][m] && got[1] == want[1][m] ? 0 : 1;
}
