/* SPDX-License-Identifier: MIT */
/*
 * op_softmax — y = softmax(x) along each row, on the AIV cores (issue 6
 * scope 9).
 *
 * x is ROWS x COLS fp32. Each block takes RB rows at a time into UB
 * (tp_copy_in) and computes, all on the VEC pipe:
 *
 *     m = rowmax(x)        tp_vrowmax   (RB x 1)
 *     e = exp(x - m)       tp_vrowsub, tp_vexp
 *     s = rowsum(e)        tp_vrowsum   (RB x 1)
 *     y = e / s            tp_vrowdiv
 *
 * and writes y back (tp_copy_out). Subtracting the row maximum keeps exp
 * from overflowing, as every softmax kernel does.
 *
 *     taskprof op --aic-metrics PipeUtilization,MemoryUB build/examples/op_softmax
 *
 * Exit status: 0 when y matches the host's softmax (relative error below
 * 1e-5 per element), 1 otherwise, 2 when a device call fails.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "taskprof/kernel.h"
#include "taskprof/rt.h"

#define ROWS 96u
#define COLS 512u
#define RB 8u      /* rows per step: 16 KiB of UB */
#define BLOCKS 6u

struct sm_args {
	const float *x; /* device, ROWS x COLS */
	float *y;
};

static void softmax_kernel(uint32_t block_idx, uint32_t block_dim, void *p)
{
	const struct sm_args *a = p;
	const size_t bytes = (size_t)ROWS * COLS * sizeof(float);
	struct tp_tile gx, gy, u, m, s;
	if (tp_tile_init(&gx, TP_MEM_GM, (void *)a->x, bytes, TP_FP32, ROWS, COLS, COLS) ||
	    tp_tile_init(&gy, TP_MEM_GM, a->y, bytes, TP_FP32, ROWS, COLS, COLS) ||
	    tp_local_tile(&u, TP_MEM_UB, TP_FP32, RB, COLS) ||
	    tp_local_tile(&m, TP_MEM_UB, TP_FP32, RB, 1) ||
	    tp_local_tile(&s, TP_MEM_UB, TP_FP32, RB, 1))
		return;
	/* Row groups of RB rows, dealt round-robin to the blocks. */
	for (uint32_t r0 = block_idx * RB; r0 < ROWS; r0 += block_dim * RB) {
		struct tp_tile vx, vy;
		if (tp_tile_view(&vx, &gx, r0, 0, RB, COLS) ||
		    tp_tile_view(&vy, &gy, r0, 0, RB, COLS) || tp_copy_in(&u, &vx) ||
		    tp_vrowmax(&m, &u) || tp_vrowsub(&u, &u, &m) || tp_vexp(&u, &u) ||
		    tp_vrowsum(&s, &u) || tp_vrowdiv(&u, &u, &s) || tp_copy_out(&vy, &u))
			return;
	}
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "op_softmax: %s failed (%d): %s\n", what, rc, tp_last_error());
	return 2;
}

int main(void)
{
	const size_t n = (size_t)ROWS * COLS, bytes = n * sizeof(float);
	float *x = malloc(bytes), *y = malloc(bytes);
	if (!x || !y) {
		fprintf(stderr, "op_softmax: out of host memory\n");
		return 2;
	}
	/* Values in [-8, 8), a different pattern on each row. */
	for (uint32_t r = 0; r < ROWS; r++)
		for (uint32_t c = 0; c < COLS; c++)
			x[r * COLS + c] = (float)((r * 131u + c * 17u) % 256u) / 16.0f - 8.0f;

	int rc;
	float *dx = NULL, *dy = NULL;
	if ((rc = tp_rt_malloc((void **)&dx, bytes)) != 0 ||
	    (rc = tp_rt_malloc((void **)&dy, bytes)) != 0)
		return fail("tp_rt_malloc", rc);
	if ((rc = tp_rt_memcpy(dx, x, bytes, TP_RT_MEMCPY_HOST_TO_DEVICE)) != 0)
		return fail("tp_rt_memcpy H2D", rc);

	struct sm_args args = { dx, dy };
	const struct tp_rt_launch_attr attr = { .name = "softmax", .cores = TP_RT_CORES_AIV };
	if ((rc = tp_rt_launch_ex(softmax_kernel, BLOCKS, &args, &attr)) != 0)
		return fail("tp_rt_launch_ex", rc);
	if ((rc = tp_rt_synchronize()) != 0)
		return fail("tp_rt_synchronize", rc);
	if ((rc = tp_rt_memcpy(y, dy, bytes, TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0)
		return fail("tp_rt_memcpy D2H", rc);
	if ((rc = tp_rt_free(dx)) != 0 || (rc = tp_rt_free(dy)) != 0)
		return fail("tp_rt_free", rc);

	/* Host reference in double; the device computes in fp32. */
	uint32_t bad = 0;
	double worst = 0;
	for (uint32_t r = 0; r < ROWS; r++) {
		const float *xr = x + (size_t)r * COLS;
		double mx = xr[0], sum = 0;
		for (uint32_t c = 1; c < COLS; c++)
			mx = xr[c] > mx ? xr[c] : mx;
		for (uint32_t c = 0; c < COLS; c++)
			sum += exp(xr[c] - mx);
		for (uint32_t c = 0; c < COLS; c++) {
			double want = exp(xr[c] - mx) / sum, got = y[(size_t)r * COLS + c];
			double rel = fabs(got - want) / want;
			worst = rel > worst ? rel : worst;
			if (!(rel < 1e-5) && bad++ < 5)
				fprintf(stderr, "op_softmax: y[%u][%u] = %.9g, expected %.9g\n", r,
					c, got, want);
		}
	}
	free(x);
	free(y);
	if (bad) {
		fprintf(stderr, "op_softmax: %u of %zu elements off by more than 1e-5\n", bad, n);
		return 1;
	}
	const char *plat = getenv("TASKPROF_PLATFORM");
	printf("op_softmax: %u x %u on %u AIV blocks (%s), max relative error %.2e: ok\n", ROWS,
	       COLS, BLOCKS, plat && *plat ? plat : "a2a3sim", worst);
	return 0;
}
