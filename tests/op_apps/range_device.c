/* SPDX-License-Identifier: MIT */
/*
 * range_device — tp_rt_set_device inside a tp_rt_range_push/pop range
 * (spec/opprof.md §4.8: a range is on one stream, one device; §4.13: a
 * device switch must never corrupt the application).
 *
 * Each device gets its own `in` (all 1) and `out` (all 10); the
 * accumulating kernel (out += in) must leave every out element at 11.
 *
 *   range_device span       push on device 0; "rd_acc0" on device 0;
 *                           tp_rt_set_device(1); "rd_acc1" on device 1;
 *                           pop. The range spans two devices.
 *   range_device popswitch  push on device 0; a temporary buffer
 *                           allocated, filled from `in` (D2D), "rd_tmp0"
 *                           adds it into out, freed; tp_rt_set_device(1)
 *                           before the pop. Every operation of the range
 *                           is on device 0; the free is deferred to the
 *                           pop, where device 1 is current.
 *
 * Prints "range_device MODE: dev0 out[0]=A dev1 out[0]=B: ok|WRONG".
 * OP_OUT_FILE gets both devices' out (device 0's, then device 1's).
 * Exit 0 / 1 (wrong result) / 2 (device error, bad usage), see op_app.h.
 */
#include <stdbool.h>
#include <string.h>

#include "op_app.h"

#define APP "range_device"
#define N 4096u

static float in[N], out[2][N], want[N];

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	bool span = !strcmp(mode, "span");
	if (!span && strcmp(mode, "popswitch")) {
		fprintf(stderr, "usage: %s span|popswitch\n", APP);
		return 2;
	}
	for (uint32_t i = 0; i < N; i++) {
		in[i] = 1;
		out[0][i] = out[1][i] = 10;
		want[i] = 11;
	}
	float *din[2], *dout[2];
	int rc;
	for (int d = 0; d < 2; d++)
		if ((rc = tp_rt_set_device(d)) != 0 || (rc = op_app_upload(&din[d], in, N)) != 0 ||
		    (rc = op_app_upload(&dout[d], out[d], N)) != 0)
			return op_app_fail(APP, "set up a device", rc);
	if ((rc = tp_rt_set_device(0)) != 0)
		return op_app_fail(APP, "tp_rt_set_device(0)", rc);
	struct op_app_vec v0 = { .in = din[0], .out = dout[0], .n = N };
	struct op_app_vec v1 = { .in = din[1], .out = dout[1], .n = N };
	if ((rc = tp_rt_range_push("rdev")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	if (span) {
		if ((rc = op_app_launch(op_app_accumulate, "rd_acc0", 2, &v0)) != 0)
			return op_app_fail(APP, "launch rd_acc0", rc);
		if ((rc = tp_rt_set_device(1)) != 0)
			return op_app_fail(APP, "tp_rt_set_device(1) in the range", rc);
		if ((rc = op_app_launch(op_app_accumulate, "rd_acc1", 2, &v1)) != 0)
			return op_app_fail(APP, "launch rd_acc1", rc);
	} else {
		float *tmp = NULL;
		if ((rc = tp_rt_malloc((void **)&tmp, sizeof(in))) != 0 ||
		    (rc = tp_rt_memcpy(tmp, din[0], sizeof(in), TP_RT_MEMCPY_DEVICE_TO_DEVICE)) != 0)
			return op_app_fail(APP, "temporary buffer", rc);
		struct op_app_vec vt = { .in = tmp, .out = dout[0], .n = N };
		if ((rc = op_app_launch(op_app_accumulate, "rd_tmp0", 2, &vt)) != 0)
			return op_app_fail(APP, "launch rd_tmp0", rc);
		if ((rc = tp_rt_free(tmp)) != 0)
			return op_app_fail(APP, "free the temporary buffer", rc);
		if ((rc = tp_rt_set_device(1)) != 0)
			return op_app_fail(APP, "tp_rt_set_device(1) in the range", rc);
		/* Device 1's out gets its accumulation outside the range. */
	}
	if ((rc = tp_rt_range_pop()) != 0)
		return op_app_fail(APP, "tp_rt_range_pop", rc);
	if (!span && (rc = op_app_launch(op_app_accumulate, "rd_acc1", 2, &v1)) != 0)
		return op_app_fail(APP, "launch rd_acc1", rc);
	for (int d = 1; d >= 0; d--)
		if ((rc = tp_rt_set_device(d)) != 0 || (rc = tp_rt_synchronize()) != 0 ||
		    (rc = tp_rt_memcpy(out[d], dout[d], sizeof(out[d]),
				       TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
		    (rc = tp_rt_free(din[d])) != 0 || (rc = tp_rt_free(dout[d])) != 0)
			return op_app_fail(APP, "download", rc);
	uint32_t bad = op_app_check(APP, out[0], want, N) + op_app_check(APP, out[1], want, N);
	if ((rc = op_app_dump(APP, out, sizeof(out))) != 0)
		return rc;
	printf("%s %s: dev0 out[0]=%g dev1 out[0]=%g: %s\n", APP, mode, (double)out[0][0],
	       (double)out[1][0], bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
