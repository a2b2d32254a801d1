/* SPDX-License-Identifier: MIT */
/*
 * op_app.h — shared pieces of the `taskprof op` test applications
 * (tests/op_apps/NAME.c; spec/opprof.md §4.14, driven by tests/cli/test_op_NAME.sh).
 *
 * Each application is a small host program on the device API (rt.h) whose
 * kernels use the tile API, so the simulated PMU counts real work. They
 * all follow one contract:
 *
 *   exit 0  the result matched the host reference
 *   exit 1  it did not (the message says which element)
 *   exit 2  a device call failed (tp_last_error() is printed), bad usage
 *
 * and, when OP_OUT_FILE is set, write the raw bytes of their device
 * output there so a test can cmp a profiled run with an unprofiled one.
 *
 * Everything here is static inline: each application is one .c file.
 */
#ifndef TASKPROF_TESTS_OP_APP_H
#define TASKPROF_TESTS_OP_APP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "taskprof/kernel.h"
#include "taskprof/rt.h"

/* Elements per UB tile of the elementwise kernels: 16 KiB of fp32. */
#define OP_APP_TILE 4096u

/* Print "APP: WHAT failed (RC): message" and return 2. */
static inline int op_app_fail(const char *app, const char *what, int rc)
{
	fprintf(stderr, "%s: %s failed (%d): %s\n", app, what, rc, tp_last_error());
	return 2;
}

/* FNV-1a, 64 bits, over @n bytes of @p. */
static inline uint64_t op_app_fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* With OP_OUT_FILE set, write @n bytes of @p there (replacing it).
 * Return: 0, or 2 after printing why the file could not be written. */
static inline int op_app_dump(const char *app, const void *p, size_t n)
{
	const char *path = getenv("OP_OUT_FILE");
	if (!path || !*path)
		return 0;
	FILE *f = fopen(path, "wb");
	if (!f) {
		fprintf(stderr, "%s: cannot open OP_OUT_FILE '%s'\n", app, path);
		return 2;
	}
	int bad = fwrite(p, 1, n, f) != n;
	bad |= fclose(f) != 0;
	if (bad) {
		fprintf(stderr, "%s: cannot write OP_OUT_FILE '%s'\n", app, path);
		return 2;
	}
	return 0;
}

/* Arguments of the elementwise kernels below: n fp32 elements each. */
struct op_app_vec {
	const float *in; /* device */
	float *out;      /* device */
	uint32_t n;
	float a, b;      /* op_app_axpb: out = a * in + b */
};

/* Block @b of @dim's slice [lo, hi) of @n elements. */
static inline void op_app_slice(uint32_t n, uint32_t b, uint32_t dim, uint32_t *lo,
				uint32_t *hi)
{
	*lo = (uint32_t)((uint64_t)n * b / dim);
	*hi = (uint32_t)((uint64_t)n * (b + 1) / dim);
}

/*
 * One elementwise pass over the block's slice in OP_APP_TILE steps:
 * copy in `in` (and `out` when @acc), then out = in + out (@acc) or
 * out = a * in + b, copy out. A tile op failure leaves the core's sticky
 * error, which fails the launch; the kernel then just returns.
 */
static inline void op_app_elementwise(const struct op_app_vec *v, uint32_t block_idx,
				      uint32_t block_dim, int acc)
{
	uint32_t lo, hi;
	op_app_slice(v->n, block_idx, block_dim, &lo, &hi);
	size_t bytes = (size_t)v->n * sizeof(float);
	struct tp_tile gi, go, ui, uo;
	if (tp_tile_init(&gi, TP_MEM_GM, (void *)v->in, bytes, TP_FP32, 1, v->n, v->n) ||
	    tp_tile_init(&go, TP_MEM_GM, v->out, bytes, TP_FP32, 1, v->n, v->n) ||
	    tp_local_tile(&ui, TP_MEM_UB, TP_FP32, 1, OP_APP_TILE) ||
	    tp_local_tile(&uo, TP_MEM_UB, TP_FP32, 1, OP_APP_TILE))
		return;
	for (uint32_t off = lo; off < hi; off += OP_APP_TILE) {
		uint32_t len = hi - off < OP_APP_TILE ? hi - off : OP_APP_TILE;
		struct tp_tile vi, vo, si, so;
		if (tp_tile_view(&vi, &gi, 0, off, 1, len) || tp_tile_view(&vo, &go, 0, off, 1, len) ||
		    tp_tile_view(&si, &ui, 0, 0, 1, len) || tp_tile_view(&so, &uo, 0, 0, 1, len) ||
		    tp_copy_in(&si, &vi))
			return;
		if (acc) {
			if (tp_copy_in(&so, &vo) || tp_vadd(&so, &so, &si))
				return;
		} else {
			if (tp_vmuls(&so, &si, v->a) || tp_vadds(&so, &so, v->b))
				return;
		}
		if (tp_copy_out(&vo, &so))
			return;
	}
}

/* out += in (not idempotent: a replay must restore out). */
static inline void op_app_accumulate(uint32_t block_idx, uint32_t block_dim, void *p)
{
	op_app_elementwise(p, block_idx, block_dim, 1);
}

/* out = a * in + b (in place when in == out). */
static inline void op_app_axpb(uint32_t block_idx, uint32_t block_dim, void *p)
{
	op_app_elementwise(p, block_idx, block_dim, 0);
}

/* Launch @fn on the AIV cores under @name. */
static inline int op_app_launch(tp_rt_kernel_fn fn, const char *name, uint32_t blocks,
				void *args)
{
	const struct tp_rt_launch_attr attr = { .name = name, .cores = TP_RT_CORES_AIV };
	return tp_rt_launch_ex(fn, blocks, args, &attr);
}

/* Allocate @n floats on the current device and copy @host there (when not
 * NULL). Return 0 or the failing call's error. */
static inline int op_app_upload(float **dev, const float *host, uint32_t n)
{
	int rc = tp_rt_malloc((void **)dev, (size_t)n * sizeof(float));
	if (rc == 0 && host)
		rc = tp_rt_memcpy(*dev, host, (size_t)n * sizeof(float),
				  TP_RT_MEMCPY_HOST_TO_DEVICE);
	return rc;
}

/* Compare @n floats with @want; print the first few differences.
 * Return: the number of differing elements. */
static inline uint32_t op_app_check(const char *app, const float *got, const float *want,
				    uint32_t n)
{
	uint32_t bad = 0;
	for (uint32_t i = 0; i < n; i++)
		if (got[i] != want[i] && bad++ < 5)
			fprintf(stderr, "%s: element %u = %g, expected %g\n", app, i,
				(double)got[i], (double)want[i]);
	if (bad)
		fprintf(stderr, "%s: %u of %u elements wrong\n", app, bad, n);
	return bad;
}

/*
 * One out += in launch: upload @in and @out (@n floats each), launch @fn
 * under @name on @blocks AIV blocks, wait, download the result into @out
 * and free both buffers.
 * Return: 0, or the exit status of op_app_fail() naming the failed step.
 */
static inline int op_app_run_vec(const char *app, tp_rt_kernel_fn fn, const char *name,
				 uint32_t blocks, const float *in, float *out, uint32_t n)
{
	float *din = NULL, *dout = NULL;
	int rc;
	if ((rc = op_app_upload(&din, in, n)) != 0 || (rc = op_app_upload(&dout, out, n)) != 0)
		return op_app_fail(app, "allocate and upload", rc);
	struct op_app_vec v = { .in = din, .out = dout, .n = n };
	if ((rc = op_app_launch(fn, name, blocks, &v)) != 0)
		return op_app_fail(app, name, rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(out, dout, (size_t)n * sizeof(float),
			       TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(din)) != 0 || (rc = tp_rt_free(dout)) != 0)
		return op_app_fail(app, "download", rc);
	return 0;
}

#endif /* TASKPROF_TESTS_OP_APP_H */
