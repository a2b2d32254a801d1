/* SPDX-License-Identifier: MIT */
/*
 * range_free — a temporary buffer allocated and freed inside a range
 * (spec/opprof.md §4.8, §4.14 I8; issue 6 acceptance "range replay handles
 * a free inside the range").
 *
 * ITERS times:
 *     tp_rt_range_push("step")
 *         tmp = tp_rt_malloc(N floats)
 *         launch "range_k1": tmp = 2 * in + 1
 *         launch "range_k2": out += tmp
 *         tp_rt_free(tmp)
 *     tp_rt_range_pop()
 *
 * With an argument K (1..1000, default 1), "range_k2" is launched K times
 * per range, under the names "range_k2" and "range_k3" in turn: a range
 * of more operations than the injector's first capture list holds.
 *
 * Under `--replay-mode range --range-markers on` the whole range is
 * replayed per pass: the free must be deferred until the last pass (else
 * the replay would use freed memory), `out` restored before each pass, and
 * the second iteration's tmp (likely at the same address) must not be
 * confused with the first's.
 *
 * OP_OUT_FILE gets out's bytes. Exit 0 / 1 / 2, see op_app.h.
 */
#include "op_app.h"

#define APP "range_free"
#define N 30000u
#define BLOCKS 4u
#define ITERS 2u

int main(int argc, char **argv)
{
	uint32_t reps = 1;
	if (argc > 1) {
		char *end;
		long v = strtol(argv[1], &end, 10);
		if (*end || v < 1 || v > 1000) {
			fprintf(stderr, "%s: usage: %s [K], K in 1..1000 (got '%s')\n", APP, APP,
				argv[1]);
			return 2;
		}
		reps = (uint32_t)v;
	}
	static float in[N], out[N], want[N];
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)((int)(i % 7u) - 3);
		want[i] = out[i] = (float)(i % 10u);
	}
	float *din = NULL, *dout = NULL;
	int rc;
	if ((rc = op_app_upload(&din, in, N)) != 0 || (rc = op_app_upload(&dout, out, N)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	for (uint32_t it = 0; it < ITERS; it++) {
		float *tmp = NULL;
		if ((rc = tp_rt_range_push("step")) != 0)
			return op_app_fail(APP, "tp_rt_range_push", rc);
		if ((rc = tp_rt_malloc((void **)&tmp, N * sizeof(float))) != 0)
			return op_app_fail(APP, "tp_rt_malloc tmp", rc);
		struct op_app_vec k1 = { .in = din, .out = tmp, .n = N, .a = 2, .b = 1 };
		struct op_app_vec k2 = { .in = tmp, .out = dout, .n = N };
		if ((rc = op_app_launch(op_app_axpb, "range_k1", BLOCKS, &k1)) != 0)
			return op_app_fail(APP, "launch range_k1", rc);
		for (uint32_t r = 0; r < reps; r++)
			if ((rc = op_app_launch(op_app_accumulate, r % 2 ? "range_k3" : "range_k2",
						BLOCKS, &k2)) != 0)
				return op_app_fail(APP, "launch range_k2", rc);
		if ((rc = tp_rt_free(tmp)) != 0)
			return op_app_fail(APP, "tp_rt_free tmp", rc);
		if ((rc = tp_rt_range_pop()) != 0)
			return op_app_fail(APP, "tp_rt_range_pop", rc);
		for (uint32_t i = 0; i < N; i++)
			want[i] += (float)reps * (2 * in[i] + 1);
	}
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(out, dout, sizeof(out), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(din)) != 0 || (rc = tp_rt_free(dout)) != 0)
		return op_app_fail(APP, "download", rc);
	uint32_t bad = op_app_check(APP, out, want, N);
	if ((rc = op_app_dump(APP, out, sizeof(out))) != 0)
		return rc;
	printf("%s: %u ranges of %u launches with a temporary buffer, checksum %016llx: %s\n",
	       APP, ITERS, reps + 1, (unsigned long long)op_app_fnv(out, sizeof(out)),
	       bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
