/* SPDX-License-Identifier: MIT */
/*
 * deterministic — a fixed sequence of deterministic kernels, for comparing
 * kernel replay with application replay (spec/opprof.md §4.14 I6, I7;
 * issue 6 acceptance "for a deterministic kernel, application replay and
 * kernel replay give the same counter values").
 *
 *     deterministic           det_axpb (mid = 3 in - 2), det_acc (out +=
 *                             mid), det_acc again; always the same
 *     deterministic vary      the same, but when TASKPROF_PASS (set by
 *                             `taskprof op --replay-mode application` in
 *                             each run) is odd, a kernel "det_extra" runs
 *                             first: the launch sequence differs between
 *                             runs, which application replay must detect
 *
 * Every kernel uses tile ops only and fixed shapes, so everything the PMU
 * counts except cycles is the same in every execution.
 *
 * OP_OUT_FILE gets out's bytes. Exit 0 / 1 / 2, see op_app.h.
 */
#include <string.h>

#include "op_app.h"

#define APP "deterministic"
#define N 24576u

int main(int argc, char **argv)
{
	int vary = 0;
	if (argc == 2 && strcmp(argv[1], "vary") == 0) {
		vary = 1;
	} else if (argc != 1) {
		fprintf(stderr, "usage: deterministic [vary]\n");
		return 2;
	}
	const char *pass = getenv("TASKPROF_PASS");
	int extra = vary && pass && *pass && (atoi(pass) % 2) == 1;

	static float in[N], out[N], want[N];
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)((int)(i % 23u) - 11);
		out[i] = (float)(i % 6u);
		want[i] = out[i] + 2 * (3 * in[i] - 2);
	}
	float *din = NULL, *dmid = NULL, *dout = NULL, *dscratch = NULL;
	int rc;
	if ((rc = op_app_upload(&din, in, N)) != 0 || (rc = op_app_upload(&dmid, NULL, N)) != 0 ||
	    (rc = op_app_upload(&dout, out, N)) != 0 ||
	    (rc = op_app_upload(&dscratch, in, N)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	if (extra) {
		struct op_app_vec e = { .in = dscratch, .out = dscratch, .n = N, .a = 1, .b = 1 };
		if ((rc = op_app_launch(op_app_axpb, "det_extra", 2, &e)) != 0)
			return op_app_fail(APP, "launch det_extra", rc);
		printf("%s: launch det_extra (TASKPROF_PASS=%s)\n", APP, pass);
	}
	struct op_app_vec k1 = { .in = din, .out = dmid, .n = N, .a = 3, .b = -2 };
	struct op_app_vec k2 = { .in = dmid, .out = dout, .n = N };
	if ((rc = op_app_launch(op_app_axpb, "det_axpb", 4, &k1)) != 0)
		return op_app_fail(APP, "launch det_axpb", rc);
	for (int l = 0; l < 2; l++)
		if ((rc = op_app_launch(op_app_accumulate, "det_acc", 6, &k2)) != 0)
			return op_app_fail(APP, "launch det_acc", rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(out, dout, sizeof(out), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(din)) != 0 || (rc = tp_rt_free(dmid)) != 0 ||
	    (rc = tp_rt_free(dout)) != 0 || (rc = tp_rt_free(dscratch)) != 0)
		return op_app_fail(APP, "download", rc);
	uint32_t bad = op_app_check(APP, out, want, N);
	if ((rc = op_app_dump(APP, out, sizeof(out))) != 0)
		return rc;
	printf("%s: det_axpb, det_acc x2%s, checksum %016llx: %s\n", APP,
	       extra ? " after det_extra" : "", (unsigned long long)op_app_fnv(out, sizeof(out)),
	       bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
