/* SPDX-License-Identifier: MIT */
/*
 * big_mem — 40 MiB of device memory in use on a 64 MiB device (spec/
 * opprof.md §4.9, §4.14 I11: more than half the capacity, so a snapshot
 * in device memory could not fit; it must live in host memory).
 *
 * The test sets TASKPROF_DEVICE_MEM_MB=64. The application allocates `in`
 * and `out`, 20 MiB each, and runs the accumulating kernel "big_acc"
 * (out += in) once over all of it.
 *
 * OP_OUT_FILE gets out's bytes. Exit 0 / 1 / 2, see op_app.h.
 */
#include "op_app.h"

#define APP "big_mem"
#define N (5u * 1024u * 1024u) /* 20 MiB of fp32 */
#define BLOCKS 16u

int main(void)
{
	float *in = malloc((size_t)N * sizeof(float)), *out = malloc((size_t)N * sizeof(float));
	float *want = malloc((size_t)N * sizeof(float));
	if (!in || !out || !want) {
		fprintf(stderr, "%s: out of host memory\n", APP);
		return 2;
	}
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)((int)(i % 19u) - 9);
		out[i] = (float)(i % 4u);
		want[i] = out[i] + in[i];
	}
	float *din = NULL, *dout = NULL;
	int rc;
	if ((rc = op_app_upload(&din, in, N)) != 0 || (rc = op_app_upload(&dout, out, N)) != 0)
		return op_app_fail(APP, "allocate and upload 2 x 20 MiB", rc);
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	if ((rc = op_app_launch(op_app_accumulate, "big_acc", BLOCKS, &v)) != 0)
		return op_app_fail(APP, "launch big_acc", rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(out, dout, (size_t)N * sizeof(float),
			       TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(din)) != 0 || (rc = tp_rt_free(dout)) != 0)
		return op_app_fail(APP, "download", rc);
	uint32_t bad = op_app_check(APP, out, want, N);
	if ((rc = op_app_dump(APP, out, (size_t)N * sizeof(float))) != 0)
		return rc;
	printf("%s: 40 MiB in use, checksum %016llx: %s\n", APP,
	       (unsigned long long)op_app_fnv(out, (size_t)N * sizeof(float)),
	       bad ? "WRONG" : "ok");
	free(in);
	free(out);
	free(want);
	return bad ? 1 : 0;
}
