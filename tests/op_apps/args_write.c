/* SPDX-License-Identifier: MIT */
/*
 * args_write — a kernel that writes its own args struct (docs/op.md
 * "Limits": replay must hand every execution the application's args and
 * leave the application the writes of one execution).
 *
 * args = { device buffer out (16 floats, zero), calls = 0 } on the
 * stack. Block 0 of "aw_count" writes out[calls] = calls + 1, then
 * calls += 1 (byte +8 of the struct changes 0 -> 1); block 1 does
 * nothing. Run once, unprofiled: calls = 1, out = { 1, 0, 0, ... }. A
 * replay that let one execution's calls reach the next would write
 * another element of out in each pass (output hashes differ) and leave
 * calls = W + P + 1.
 *
 * `args_write range` makes the launch between tp_rt_range_push("aw") and
 * tp_rt_range_pop(): range replay runs a captured copy of the args, so
 * calls is not checked there (docs/op.md: the struct never sees the
 * kernel's writes), only out.
 *
 * Prints "args_write: calls after one launch = C (want 1)" and "out =
 * ..." (the first 8 elements). OP_OUT_FILE gets out's bytes. Exit 0 / 1
 * (wrong) / 2 (device error, bad usage), see op_app.h.
 */
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

int main(int argc, char **argv)
{
	const int range = argc > 1 && !strcmp(argv[1], "range");
	if (argc > 1 && !range) {
		fprintf(stderr, "usage: %s [range]\n", APP);
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
