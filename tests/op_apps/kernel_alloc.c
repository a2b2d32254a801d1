/* SPDX-License-Identifier: MIT */
/*
 * kernel_alloc — kernels that allocate device memory which later launches
 * use (tests/cli/test_op_robust.sh R19k). One mode per run, optionally
 * with every launch inside one range ("ka", argument "range"):
 *
 *   use   "ka_alloc": block 0 allocates 64 KiB, fills it with 1.0 and
 *         stores its address in a device slot; "ka_add": out += block;
 *         "ka_inc": block += 1 (not idempotent); "ka_add" again. out =
 *         out0 + 1 + 2. Kernel replay of ka_inc must restore the block
 *         (a kernel's allocation in the application's own execution is
 *         registered like a host one).
 *   free  "ka_alloc", "ka_add", then "ka_free": block 0 frees the block
 *         and stores what tp_rt_free returned (0, as without the
 *         profiler, in every execution: the replays skip the free of an
 *         older block). out = out0 + 1.
 *
 * Prints "kernel_alloc MODE: free rc R, checksum C: ok|WRONG" and the
 * number of 1 MiB blocks the device still has room for ("N MiB free").
 * Exit 0 / 1 (wrong result) / 2 (device error).
 */
#include <string.h>

#include "op_app.h"

#define APP "kernel_alloc"
#define N 16384u
#define BLOCKS 4u

struct ka_args {
	struct op_app_vec v;
	float **slot; /* device: the kernel's block */
	int *rc;      /* device: what ka_free's tp_rt_free returned */
};

static void ka_alloc(uint32_t block_idx, uint32_t block_dim, void *p)
{
	(void)block_dim;
	struct ka_args *a = p;
	if (block_idx != 0)
		return;
	float *t = NULL;
	if (tp_rt_malloc((void **)&t, N * sizeof(float)) != 0)
		return;
	for (uint32_t i = 0; i < N; i++)
		t[i] = 1.0f;
	*a->slot = t;
}

static void ka_add(uint32_t block_idx, uint32_t block_dim, void *p)
{
	struct ka_args *a = p;
	struct op_app_vec v = { .in = *a->slot, .out = a->v.out, .n = N };
	op_app_elementwise(&v, block_idx, block_dim, 1);
}

static void ka_inc(uint32_t block_idx, uint32_t block_dim, void *p)
{
	struct ka_args *a = p;
	uint32_t lo, hi;
	op_app_slice(N, block_idx, block_dim, &lo, &hi);
	float *t = *a->slot;
	for (uint32_t i = lo; i < hi; i++)
		t[i] += 1.0f;
}

static void ka_free(uint32_t block_idx, uint32_t block_dim, void *p)
{
	(void)block_dim;
	struct ka_args *a = p;
	if (block_idx == 0)
		*a->rc = tp_rt_free(*a->slot);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	const int use = !strcmp(m, "use");
	const int range = argc > 2 && !strcmp(argv[2], "range");
	if (!use && strcmp(m, "free")) {
		fprintf(stderr, "usage: %s use|free [range]\n", APP);
		return 2;
	}
	static float in[N], out[N], want[N];
	for (uint32_t i = 0; i < N; i++) {
		in[i] = 0.0f;
		out[i] = (float)(i % 5u);
		want[i] = out[i] + (use ? 3.0f : 1.0f);
	}
	float *din = NULL, *dout = NULL;
	float **slot = NULL;
	int *drc = NULL;
	int rc, minus1 = -1;
	if ((rc = op_app_upload(&din, in, N)) || (rc = op_app_upload(&dout, out, N)) ||
	    (rc = tp_rt_malloc((void **)&slot, sizeof(*slot))) ||
	    (rc = tp_rt_malloc((void **)&drc, sizeof(*drc))) ||
	    (rc = tp_rt_memcpy(drc, &minus1, sizeof(minus1), TP_RT_MEMCPY_HOST_TO_DEVICE)))
		return op_app_fail(APP, "allocate", rc);
	struct ka_args a = { { .in = din, .out = dout, .n = N }, slot, drc };
	if (range && (rc = tp_rt_range_push("ka")))
		return op_app_fail(APP, "tp_rt_range_push", rc);
	if ((rc = op_app_launch(ka_alloc, "ka_alloc", BLOCKS, &a)) ||
	    (rc = op_app_launch(ka_add, "ka_add", BLOCKS, &a)) ||
	    (use && (rc = op_app_launch(ka_inc, "ka_inc", BLOCKS, &a))) ||
	    (use && (rc = op_app_launch(ka_add, "ka_add", BLOCKS, &a))) ||
	    (!use && (rc = op_app_launch(ka_free, "ka_free", BLOCKS, &a))))
		return op_app_fail(APP, "launch", rc);
	if ((range && (rc = tp_rt_range_pop())) || (rc = tp_rt_synchronize()))
		return op_app_fail(APP, "run", rc);
	int frc = 0;
	if ((rc = tp_rt_memcpy(out, dout, sizeof(out), TP_RT_MEMCPY_DEVICE_TO_HOST)) ||
	    (rc = tp_rt_memcpy(&frc, drc, sizeof(frc), TP_RT_MEMCPY_DEVICE_TO_HOST)))
		return op_app_fail(APP, "download", rc);
	uint32_t bad = op_app_check(APP, out, want, N);
	/* What the device still has room for: a replay that leaked, or freed
	 * the application's block for real, shows here. */
	int mib = 0;
	void *p;
	while (tp_rt_malloc(&p, 1u << 20) == 0)
		mib++;
	printf("%s %s%s: free rc %d, checksum %016llx: %s, %d MiB free\n", APP, m,
	       range ? " range" : "", use ? 0 : frc, (unsigned long long)op_app_fnv(out, sizeof(out)),
	       bad ? "WRONG" : "ok", mib);
	return bad ? 1 : 0;
}
