/* SPDX-License-Identifier: MIT */
/*
 * rt_vector_add — z = x + y on the simulated device, through the device API
 * of libtaskprof.so (include/taskprof/rt.h).
 *
 * Allocates three device vectors, copies x and y in, launches an SPMD
 * kernel on 8 blocks (each block adds one contiguous slice), copies z back
 * and checks every element. The platform comes from TASKPROF_PLATFORM
 * (a2a3sim by default, or a5sim).
 *
 * Exit status: 0 when every element matches, 1 on a wrong element, 2 when
 * a device call fails (the message of tp_last_error() is printed).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "taskprof/rt.h"

#define N 100003u    /* not a multiple of the block count: uneven slices */
#define BLOCKS 8u

struct add_args {
	const float *x; /* device */
	const float *y; /* device */
	float *z;       /* device */
	uint32_t n;
};

/* Block b of B handles [b·n/B, (b+1)·n/B). Runs on one AICore thread. */
static void vector_add(uint32_t block_idx, uint32_t block_dim, void *p)
{
	const struct add_args *a = p;
	uint32_t lo = (uint32_t)((uint64_t)a->n * block_idx / block_dim);
	uint32_t hi = (uint32_t)((uint64_t)a->n * (block_idx + 1) / block_dim);
	for (uint32_t i = lo; i < hi; i++)
		a->z[i] = a->x[i] + a->y[i];
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "rt_vector_add: %s failed (%d): %s\n", what, rc, tp_last_error());
	return 2;
}

int main(void)
{
	size_t bytes = N * sizeof(float);
	float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
	if (!x || !y || !z) {
		fprintf(stderr, "rt_vector_add: out of host memory\n");
		return 2;
	}
	for (uint32_t i = 0; i < N; i++) {
		x[i] = (float)i * 0.5f;
		y[i] = 1000.0f - (float)(i % 977);
		z[i] = -1.0f;
	}

	int rc;
	float *dx = NULL, *dy = NULL, *dz = NULL;
	if ((rc = tp_rt_set_device(0)) != 0)
		return fail("tp_rt_set_device", rc);
	if ((rc = tp_rt_malloc((void **)&dx, bytes)) != 0 ||
	    (rc = tp_rt_malloc((void **)&dy, bytes)) != 0 ||
	    (rc = tp_rt_malloc((void **)&dz, bytes)) != 0)
		return fail("tp_rt_malloc", rc);
	if ((rc = tp_rt_memcpy(dx, x, bytes, TP_RT_MEMCPY_HOST_TO_DEVICE)) != 0 ||
	    (rc = tp_rt_memcpy(dy, y, bytes, TP_RT_MEMCPY_HOST_TO_DEVICE)) != 0)
		return fail("tp_rt_memcpy H2D", rc);

	struct add_args args = { dx, dy, dz, N };
	if ((rc = tp_rt_launch(vector_add, BLOCKS, &args)) != 0)
		return fail("tp_rt_launch", rc);
	if ((rc = tp_rt_synchronize()) != 0)
		return fail("tp_rt_synchronize", rc);
	if ((rc = tp_rt_memcpy(z, dz, bytes, TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0)
		return fail("tp_rt_memcpy D2H", rc);

	int bad = 0;
	for (uint32_t i = 0; i < N; i++) {
		float want = x[i] + y[i];
		if (z[i] != want) {
			if (bad++ < 5)
				fprintf(stderr, "rt_vector_add: z[%u] = %g, expected %g\n", i,
					(double)z[i], (double)want);
		}
	}
	if ((rc = tp_rt_free(dx)) != 0 || (rc = tp_rt_free(dy)) != 0 ||
	    (rc = tp_rt_free(dz)) != 0)
		return fail("tp_rt_free", rc);
	free(x);
	free(y);
	free(z);
	if (bad) {
		fprintf(stderr, "rt_vector_add: %d of %u elements wrong\n", bad, N);
		return 1;
	}
	const char *plat = getenv("TASKPROF_PLATFORM");
	printf("rt_vector_add: %u elements on %u blocks (%s): ok\n", N, BLOCKS,
	       plat && *plat ? plat : "a2a3sim");
	return 0;
}
