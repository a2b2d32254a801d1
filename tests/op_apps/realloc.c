/* SPDX-License-Identifier: MIT */
/*
 * realloc — free and allocate again between two profiled launches, so the
 * second buffer likely lands at the first one's address with another size
 * (spec/opprof.md §3.3, §4.14 I9: the registry's generation must drop the
 * old snapshot; restoring the old, larger one would overwrite the new
 * buffer and its neighbour).
 *
 *     in1, out1 (N1 floats) → launch "re_acc": out1 += in1 → copy back
 *     free out1, in1
 *     out2, in2 (N2 < N1 floats) → launch "re_acc": out2 += in2 → copy back
 *
 * Prints whether out2 reused out1's address. OP_OUT_FILE gets out1's
 * bytes, then out2's. Exit 0 / 1 / 2, see op_app.h.
 */
#include "op_app.h"

#define APP "realloc"
#define N1 30000u
#define N2 20000u
#define BLOCKS 4u

/* One round: upload @n elements of in and out, accumulate, download into
 * @res. @addr receives out's device address. */
static int round_trip(uint32_t n, float seed, float *res, float *want, void **addr)
{
	float *in = malloc(n * sizeof(float));
	if (!in)
		return 2;
	for (uint32_t i = 0; i < n; i++) {
		in[i] = (float)((int)(i % 9u) - 4) + seed;
		res[i] = (float)(i % 7u);
		want[i] = res[i] + in[i];
	}
	float *din = NULL, *dout = NULL;
	int rc;
	if ((rc = op_app_upload(&dout, res, n)) != 0 || (rc = op_app_upload(&din, in, n)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	*addr = dout;
	struct op_app_vec v = { .in = din, .out = dout, .n = n };
	if ((rc = op_app_launch(op_app_accumulate, "re_acc", BLOCKS, &v)) != 0)
		return op_app_fail(APP, "launch re_acc", rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(res, dout, n * sizeof(float), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(dout)) != 0 || (rc = tp_rt_free(din)) != 0)
		return op_app_fail(APP, "download and free", rc);
	free(in);
	return 0;
}

int main(void)
{
	static float res[N1 + N2], want[N1 + N2];
	void *a1, *a2;
	int rc;
	if ((rc = round_trip(N1, 0, res, want, &a1)) != 0 ||
	    (rc = round_trip(N2, 10, res + N1, want + N1, &a2)) != 0)
		return rc;
	uint32_t bad = op_app_check(APP, res, want, N1 + N2);
	if ((rc = op_app_dump(APP, res, sizeof(res))) != 0)
		return rc;
	printf("%s: %u then %u elements, out2 %s out1's address, checksum %016llx: %s\n", APP, N1,
	       N2, a1 == a2 ? "reuses" : "does not reuse",
	       (unsigned long long)op_app_fnv(res, sizeof(res)), bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
