/* SPDX-License-Identifier: MIT */
/*
 * inplace — a kernel that overwrites its own input: x = 2x + 1 (spec/
 * opprof.md §4.14 I2). Replaying it without restoring x between
 * executions compounds the update.
 *
 * The kernel "inplace" runs once on 8 AIV blocks. OP_OUT_FILE gets x's
 * bytes. Exit 0 / 1 / 2, see op_app.h.
 */
#include "op_app.h"

#define APP "inplace"
#define N 50000u
#define BLOCKS 8u

int main(void)
{
	static float x[N], want[N];
	for (uint32_t i = 0; i < N; i++) {
		x[i] = (float)((int)(i % 21u) - 10);
		want[i] = 2 * x[i] + 1;
	}
	float *dx = NULL;
	int rc;
	if ((rc = op_app_upload(&dx, x, N)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	struct op_app_vec v = { .in = dx, .out = dx, .n = N, .a = 2, .b = 1 };
	if ((rc = op_app_launch(op_app_axpb, "inplace", BLOCKS, &v)) != 0)
		return op_app_fail(APP, "launch inplace", rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(x, dx, sizeof(x), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(dx)) != 0)
		return op_app_fail(APP, "download", rc);
	uint32_t bad = op_app_check(APP, x, want, N);
	if ((rc = op_app_dump(APP, x, sizeof(x))) != 0)
		return rc;
	printf("%s: x = 2x + 1 over %u elements, checksum %016llx: %s\n", APP, N,
	       (unsigned long long)op_app_fnv(x, sizeof(x)), bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
