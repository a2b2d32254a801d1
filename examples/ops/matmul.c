/* SPDX-License-Identifier: MIT */
/*
 * op_matmul — C = A x B, tiled on the cube (AIC) cores (issue 6 scope 9).
 *
 * A is M x K, B is K x N, C is M x N, all fp32 row-major in device memory.
 * C is cut into BM x BN tiles; block b computes tiles b, b + block_dim, ...
 * For one tile it stages the BM rows of A and the BN columns of B in L1
 * (tp_copy_in, MTE2), then for each BK-wide step of K moves the A and B
 * slices to L0A / L0B (tp_load_l0, MTE1) and multiplies into L0C
 * (tp_mmad, CUBE; the first step overwrites, later ones accumulate), and
 * finally writes the tile to GM (tp_fixpipe, FIXP). The launch asks for
 * the AIC cores (TP_RT_CORES_AIC): only they have L1 / L0A / L0B / L0C.
 *
 *     taskprof op --aic-metrics PipeUtilization,MemoryL0 build/examples/op_matmul
 *
 * The inputs are small integers, so every product and sum is exact in
 * fp32 and the result must equal the host's exactly.
 *
 * Exit status: 0 when C matches, 1 on a wrong element, 2 when a device
 * call fails (tp_last_error() is printed).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "taskprof/kernel.h"
#include "taskprof/rt.h"

#define M 128u
#define N 256u
#define K 128u
#define BM 64u /* C tile rows */
#define BN 64u /* C tile columns */
#define BK 64u /* K step: L0A BM x BK, L0B BK x BN, 16 KiB each in fp32 */
#define BLOCKS 8u

struct mm_args {
	const float *a; /* device, M x K */
	const float *b; /* device, K x N */
	float *c;       /* device, M x N */
};

/* One C tile per iteration; on a failed op the core's sticky error fails
 * the launch, so the kernel just returns. */
static void matmul_kernel(uint32_t block_idx, uint32_t block_dim, void *p)
{
	const struct mm_args *g = p;
	struct tp_tile ga, gb, gc, l1a, l1b, l0a, l0b, l0c;
	if (tp_tile_init(&ga, TP_MEM_GM, (void *)g->a, M * K * sizeof(float), TP_FP32, M, K, K) ||
	    tp_tile_init(&gb, TP_MEM_GM, (void *)g->b, K * N * sizeof(float), TP_FP32, K, N, N) ||
	    tp_tile_init(&gc, TP_MEM_GM, g->c, M * N * sizeof(float), TP_FP32, M, N, N) ||
	    tp_local_tile(&l1a, TP_MEM_L1, TP_FP32, BM, K) ||
	    tp_local_tile(&l1b, TP_MEM_L1, TP_FP32, K, BN) ||
	    tp_local_tile(&l0a, TP_MEM_L0A, TP_FP32, BM, BK) ||
	    tp_local_tile(&l0b, TP_MEM_L0B, TP_FP32, BK, BN) ||
	    tp_local_tile(&l0c, TP_MEM_L0C, TP_FP32, BM, BN))
		return;
	const uint32_t tiles_n = N / BN, tiles = (M / BM) * tiles_n;
	for (uint32_t t = block_idx; t < tiles; t += block_dim) {
		uint32_t i0 = (t / tiles_n) * BM, j0 = (t % tiles_n) * BN;
		struct tp_tile va, vb, vc;
		if (tp_tile_view(&va, &ga, i0, 0, BM, K) || tp_tile_view(&vb, &gb, 0, j0, K, BN) ||
		    tp_copy_in(&l1a, &va) || tp_copy_in(&l1b, &vb))
			return;
		for (uint32_t k0 = 0; k0 < K; k0 += BK) {
			struct tp_tile sa, sb;
			if (tp_tile_view(&sa, &l1a, 0, k0, BM, BK) ||
			    tp_tile_view(&sb, &l1b, k0, 0, BK, BN) || tp_load_l0(&l0a, &sa, 0) ||
			    tp_load_l0(&l0b, &sb, 0) ||
			    tp_mmad(&l0c, &l0a, &l0b, k0 ? TP_MMAD_ACCUMULATE : 0))
				return;
		}
		if (tp_tile_view(&vc, &gc, i0, j0, BM, BN) || tp_fixpipe(&vc, &l0c))
			return;
	}
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "op_matmul: %s failed (%d): %s\n", what, rc, tp_last_error());
	return 2;
}

int main(void)
{
	float *a = malloc(M * K * sizeof(float)), *b = malloc(K * N * sizeof(float));
	float *c = malloc(M * N * sizeof(float));
	if (!a || !b || !c) {
		fprintf(stderr, "op_matmul: out of host memory\n");
		return 2;
	}
	for (uint32_t i = 0; i < M * K; i++)
		a[i] = (float)((int)((i * 5u + 3u) % 7u) - 3);
	for (uint32_t i = 0; i < K * N; i++)
		b[i] = (float)((int)((i * 3u + 1u) % 5u) - 2);

	int rc;
	float *da = NULL, *db = NULL, *dc = NULL;
	if ((rc = tp_rt_malloc((void **)&da, M * K * sizeof(float))) != 0 ||
	    (rc = tp_rt_malloc((void **)&db, K * N * sizeof(float))) != 0 ||
	    (rc = tp_rt_malloc((void **)&dc, M * N * sizeof(float))) != 0)
		return fail("tp_rt_malloc", rc);
	if ((rc = tp_rt_memcpy(da, a, M * K * sizeof(float), TP_RT_MEMCPY_HOST_TO_DEVICE)) ||
	    (rc = tp_rt_memcpy(db, b, K * N * sizeof(float), TP_RT_MEMCPY_HOST_TO_DEVICE)))
		return fail("tp_rt_memcpy H2D", rc);

	struct mm_args args = { da, db, dc };
	const struct tp_rt_launch_attr attr = { .name = "matmul", .cores = TP_RT_CORES_AIC };
	if ((rc = tp_rt_launch_ex(matmul_kernel, BLOCKS, &args, &attr)) != 0)
		return fail("tp_rt_launch_ex", rc);
	if ((rc = tp_rt_synchronize()) != 0)
		return fail("tp_rt_synchronize", rc);
	if ((rc = tp_rt_memcpy(c, dc, M * N * sizeof(float), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0)
		return fail("tp_rt_memcpy D2H", rc);
	if ((rc = tp_rt_free(da)) != 0 || (rc = tp_rt_free(db)) != 0 ||
	    (rc = tp_rt_free(dc)) != 0)
		return fail("tp_rt_free", rc);

	uint32_t bad = 0;
	double abs_sum = 0;
	for (uint32_t i = 0; i < M; i++) {
		for (uint32_t j = 0; j < N; j++) {
			float want = 0;
			for (uint32_t k = 0; k < K; k++)
				want += a[i * K + k] * b[k * N + j];
			float got = c[i * N + j];
			if (got != want && bad++ < 5)
				fprintf(stderr, "op_matmul: C[%u][%u] = %g, expected %g\n", i, j,
					(double)got, (double)want);
			abs_sum += got < 0 ? -got : got;
		}
	}
	free(a);
	free(b);
	free(c);
	if (bad) {
		fprintf(stderr, "op_matmul: %u of %u elements wrong\n", bad, M * N);
		return 1;
	}
	const char *plat = getenv("TASKPROF_PLATFORM");
	printf("op_matmul: [%ux%u] x [%ux%u] on %u AIC blocks (%s), sum |C| %.0f: ok\n", M, K, K,
	       N, BLOCKS, plat && *plat ? plat : "a2a3sim", abs_sum);
	return 0;
}
