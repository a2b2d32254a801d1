/* SPDX-License-Identifier: MIT */
/*
 * instr — a kernel with custom instrumentation points and named scalar
 * sections (issue 6 scope 8; acceptance: "shows them, per block and in
 * order, in the report and in trace.json; the same kernel run without
 * taskprof op gives identical output").
 *
 * The kernel "instr_kernel" runs on BLOCKS AIV blocks; block b does, in
 * this order:
 *
 *     tp_mark(100 + b)
 *     tp_mark_range_begin(7)
 *         out = 3 * in + 1 over its slice (tile ops)
 *     tp_mark_range_end(7)
 *     tp_scalar_begin("prep") stats[2b] = sum of its slice of in tp_scalar_end()
 *     tp_mark(200 + b)
 *     tp_scalar_begin("post") stats[2b+1] = max of its slice of out tp_scalar_end()
 *
 * so the points of block b are: block_begin, mark 100+b, range_begin 7,
 * range_end 7, scalar_begin prep, scalar_end prep, mark 200+b,
 * scalar_begin post, scalar_end post, block_end.
 *
 * `instr range` launches the kernel twice between tp_rt_range_push("ir")
 * and tp_rt_range_pop() (the second launch recomputes the same results),
 * for range replay.
 *
 * OP_OUT_FILE gets out's bytes followed by stats'. Exit 0 / 1 / 2, see
 * op_app.h (also 2 when an instrumentation call fails).
 */
#include <string.h>

#include "op_app.h"

#define APP "instr"
#define N 16384u
#define BLOCKS 4u

struct instr_args {
	struct op_app_vec v; /* in -> out, a = 3, b = 1 */
	float *stats;        /* device, 2 * BLOCKS */
};

static void instr_kernel(uint32_t block_idx, uint32_t block_dim, void *p)
{
	const struct instr_args *a = p;
	uint32_t lo, hi;
	op_app_slice(a->v.n, block_idx, block_dim, &lo, &hi);
	if (tp_mark(100 + block_idx) || tp_mark_range_begin(7))
		return;
	op_app_elementwise(&a->v, block_idx, block_dim, 0);
	if (tp_mark_range_end(7) || tp_scalar_begin("prep"))
		return;
	float sum = 0;
	for (uint32_t i = lo; i < hi; i++)
		sum += a->v.in[i];
	a->stats[2 * block_idx] = sum;
	if (tp_scalar_end() || tp_mark(200 + block_idx) || tp_scalar_begin("post"))
		return;
	float mx = a->v.out[lo];
	for (uint32_t i = lo + 1; i < hi; i++)
		mx = a->v.out[i] > mx ? a->v.out[i] : mx;
	a->stats[2 * block_idx + 1] = mx;
	tp_scalar_end();
}

int main(int argc, char **argv)
{
	const int range = argc > 1 && !strcmp(argv[1], "range");
	static float in[N], res[N + 2 * BLOCKS], want[N + 2 * BLOCKS];
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)((int)(i % 29u) - 14);
		want[i] = 3 * in[i] + 1;
	}
	for (uint32_t b = 0; b < BLOCKS; b++) {
		uint32_t lo, hi;
		op_app_slice(N, b, BLOCKS, &lo, &hi);
		float sum = 0, mx = want[lo];
		for (uint32_t i = lo; i < hi; i++) {
			sum += in[i];
			mx = want[i] > mx ? want[i] : mx;
		}
		want[N + 2 * b] = sum;
		want[N + 2 * b + 1] = mx;
	}
	float *din = NULL, *dout = NULL, *dstats = NULL;
	int rc;
	if ((rc = op_app_upload(&din, in, N)) != 0 || (rc = op_app_upload(&dout, NULL, N)) != 0 ||
	    (rc = op_app_upload(&dstats, NULL, 2 * BLOCKS)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	struct instr_args args = { { .in = din, .out = dout, .n = N, .a = 3, .b = 1 }, dstats };
	if (range && (rc = tp_rt_range_push("ir")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	for (int l = 0; l < 1 + range; l++)
		if ((rc = op_app_launch(instr_kernel, "instr_kernel", BLOCKS, &args)) != 0)
			return op_app_fail(APP, "launch instr_kernel", rc);
	if (range && (rc = tp_rt_range_pop()) != 0)
		return op_app_fail(APP, "tp_rt_range_pop", rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(res, dout, N * sizeof(float), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_memcpy(res + N, dstats, 2 * BLOCKS * sizeof(float),
			       TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(din)) != 0 || (rc = tp_rt_free(dout)) != 0 ||
	    (rc = tp_rt_free(dstats)) != 0)
		return op_app_fail(APP, "download", rc);
	uint32_t bad = op_app_check(APP, res, want, N + 2 * BLOCKS);
	if ((rc = op_app_dump(APP, res, sizeof(res))) != 0)
		return rc;
	printf("%s: %u blocks with marks 100+b, 200+b, range 7, scalar sections prep and post, "
	       "checksum %016llx: %s\n", APP, BLOCKS,
	       (unsigned long long)op_app_fnv(res, sizeof(res)), bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
