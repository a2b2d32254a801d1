/* SPDX-License-Identifier: MIT */
/*
 * op_vector_add — z = x + y with the tile API on the AIV cores, the
 * smallest operator `taskprof op` profiles (issue 6 scope 9).
 *
 * Each of 8 blocks takes one contiguous slice of the vectors and walks it
 * in tiles of TILE elements: tp_copy_in (GM -> UB, MTE2) of x and y,
 * tp_vadd (VEC), tp_copy_out (UB -> GM, MTE3). Every op does the real work
 * and is counted by the simulated PMU, so
 *
 *     taskprof op --aic-metrics PipeUtilization,Memory build/examples/op_vector_add
 *
 * shows MTE2 / VEC / MTE3 busy time and the GM and UB traffic per block.
 *
 * Exit status: 0 when every element matches the host sum, 1 on a wrong
 * element, 2 when a device call fails (tp_last_error() is printed).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "taskprof/kernel.h"
#include "taskprof/rt.h"

#define N 262221u    /* 1 MiB of fp32 and a ragged tail */
#define BLOCKS 8u
#define TILE 4096u   /* elements per tile: 3 x 16 KiB of UB */

struct add_args {
	const float *x; /* device, N elements */
	const float *y;
	float *z;
	uint32_t n;
};

/* Block b of B handles [b·n/B, (b+1)·n/B) in TILE-element steps. A failed
 * tile op sets the core's sticky error, which fails the launch, so the
 * kernel just stops at the first error. */
static void vector_add_kernel(uint32_t block_idx, uint32_t block_dim, void *p)
{
	const struct add_args *a = p;
	uint32_t lo = (uint32_t)((uint64_t)a->n * block_idx / block_dim);
	uint32_t hi = (uint32_t)((uint64_t)a->n * (block_idx + 1) / block_dim);
	size_t bytes = (size_t)a->n * sizeof(float);
	struct tp_tile gx, gy, gz, ux, uy, uz;
	if (tp_tile_init(&gx, TP_MEM_GM, (void *)a->x, bytes, TP_FP32, 1, a->n, a->n) ||
	    tp_tile_init(&gy, TP_MEM_GM, (void *)a->y, bytes, TP_FP32, 1, a->n, a->n) ||
	    tp_tile_init(&gz, TP_MEM_GM, a->z, bytes, TP_FP32, 1, a->n, a->n) ||
	    tp_local_tile(&ux, TP_MEM_UB, TP_FP32, 1, TILE) ||
	    tp_local_tile(&uy, TP_MEM_UB, TP_FP32, 1, TILE) ||
	    tp_local_tile(&uz, TP_MEM_UB, TP_FP32, 1, TILE))
		return;
	for (uint32_t off = lo; off < hi; off += TILE) {
		uint32_t len = hi - off < TILE ? hi - off : TILE;
		struct tp_tile vx, vy, vz, sx, sy, sz;
		if (tp_tile_view(&vx, &gx, 0, off, 1, len) || tp_tile_view(&vy, &gy, 0, off, 1, len) ||
		    tp_tile_view(&vz, &gz, 0, off, 1, len) || tp_tile_view(&sx, &ux, 0, 0, 1, len) ||
		    tp_tile_view(&sy, &uy, 0, 0, 1, len) || tp_tile_view(&sz, &uz, 0, 0, 1, len) ||
		    tp_copy_in(&sx, &vx) || tp_copy_in(&sy, &vy) || tp_vadd(&sz, &sx, &sy) ||
		    tp_copy_out(&vz, &sz))
			return;
	}
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "op_vector_add: %s failed (%d): %s\n", what, rc, tp_last_error());
	return 2;
}

int main(void)
{
	size_t bytes = N * sizeof(float);
	float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
	if (!x || !y || !z) {
		fprintf(stderr, "op_vector_add: out of host memory\n");
		return 2;
	}
	for (uint32_t i = 0; i < N; i++) {
		x[i] = (float)(i % 1000) * 0.25f;
		y[i] = 500.0f - (float)(i % 977);
		z[i] = -1.0f;
	}

	int rc;
	float *dx = NULL, *dy = NULL, *dz = NULL;
	if ((rc = tp_rt_malloc((void **)&dx, bytes)) != 0 ||
	    (rc = tp_rt_malloc((void **)&dy, bytes)) != 0 ||
	    (rc = tp_rt_malloc((void **)&dz, bytes)) != 0)
		return fail("tp_rt_malloc", rc);
	if ((rc = tp_rt_memcpy(dx, x, bytes, TP_RT_MEMCPY_HOST_TO_DEVICE)) != 0 ||
	    (rc = tp_rt_memcpy(dy, y, bytes, TP_RT_MEMCPY_HOST_TO_DEVICE)) != 0)
		return fail("tp_rt_memcpy H2D", rc);

	struct add_args args = { dx, dy, dz, N };
	const struct tp_rt_launch_attr attr = { .name = "vector_add", .cores = TP_RT_CORES_AIV };
	if ((rc = tp_rt_launch_ex(vector_add_kernel, BLOCKS, &args, &attr)) != 0)
		return fail("tp_rt_launch_ex", rc);
	if ((rc = tp_rt_synchronize()) != 0)
		return fail("tp_rt_synchronize", rc);
	if ((rc = tp_rt_memcpy(z, dz, bytes, TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0)
		return fail("tp_rt_memcpy D2H", rc);
	if ((rc = tp_rt_free(dx)) != 0 || (rc = tp_rt_free(dy)) != 0 ||
	    (rc = tp_rt_free(dz)) != 0)
		return fail("tp_rt_free", rc);

	/* x and y hold multiples of 0.25 below 1000: every sum is exact. */
	uint32_t bad = 0;
	for (uint32_t i = 0; i < N; i++) {
		float want = x[i] + y[i];
		if (z[i] != want && bad++ < 5)
			fprintf(stderr, "op_vector_add: z[%u] = %g, expected %g\n", i,
				(double)z[i], (double)want);
	}
	free(x);
	free(y);
	free(z);
	if (bad) {
		fprintf(stderr, "op_vector_add: %u of %u elements wrong\n", bad, N);
		return 1;
	}
	const char *plat = getenv("TASKPROF_PLATFORM");
	printf("op_vector_add: %u elements on %u AIV blocks (%s): ok\n", N, BLOCKS,
	       plat && *plat ? plat : "a2a3sim");
	return 0;
}
