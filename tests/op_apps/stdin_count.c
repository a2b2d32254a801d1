/* SPDX-License-Identifier: MIT */
/*
 * stdin_count — reads a count N from stdin and launches the accumulating
 * kernel "stdin_acc" N times (tests/cli/test_op_modes.sh): under
 * application replay every run must read the same N (a stdin that is a
 * file is put back before each run; hostile finding of 2 Dec).
 *
 * Exit 0 / 1 / 2, see op_app.h.
 */
#include "op_app.h"

#define APP "stdin_count"
#define N 4096u

int main(void)
{
	int n = 0;
	if (scanf("%d", &n) != 1 || n < 0 || n > 100) {
		fprintf(stderr, "%s: expected a count 0..100 on stdin\n", APP);
		return 2;
	}
	static float in[N], out[N], want[N];
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)(i % 5u);
		want[i] = (float)n * in[i];
	}
	float *din = NULL, *dout = NULL;
	int rc;
	if ((rc = op_app_upload(&din, in, N)) != 0 || (rc = op_app_upload(&dout, out, N)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	for (int i = 0; i < n; i++)
		if ((rc = op_app_launch(op_app_accumulate, "stdin_acc", 2, &v)) != 0)
			return op_app_fail(APP, "launch", rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(out, dout, sizeof(out), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0)
		return op_app_fail(APP, "download", rc);
	uint32_t bad = op_app_check(APP, out, want, N);
	printf("%s: %d launches: %s\n", APP, n, bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
