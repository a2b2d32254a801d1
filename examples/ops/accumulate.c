/* SPDX-License-Identifier: MIT */
/*
 * op_accumulate — out += in on the AIV cores, LAUNCHES times (issue 6
 * scope 9; the kernel of spec/opprof.md §4.14 test I1).
 *
 *     op_accumulate [LAUNCHES]        1 .. 1000, default 1
 *
 * The kernel is not idempotent: running it twice adds `in` twice. A
 * profiler that replays it once per pass must therefore restore `out`
 * before every execution, or the application sees a wrong result:
 *
 *     taskprof op --aic-metrics PipeUtilization,Memory,MemoryUB build/examples/op_accumulate
 *
 * The kernel is launched with the name "accumulate" (struct
 * tp_rt_launch_attr), so `taskprof op -k accumulate` selects it.
 *
 * Prints the element count, the launches and an FNV-1a 64 checksum of
 * out's bytes. With OP_OUT_FILE set, also writes out's raw bytes to that
 * file, for byte-identical comparisons between a profiled and an
 * unprofiled run.
 *
 * Exit status: 0 when out = out0 + LAUNCHES * in exactly (small integers:
 * exact in fp32), 1 when it does not, 2 on a device error or bad
 * argument.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskprof/kernel.h"
#include "taskprof/rt.h"

#define N 65552u     /* 16 x 4097 elements: not a multiple of the tile */
#define BLOCKS 16u
#define TILE 4096u

struct acc_args {
	const float *in; /* device, n elements */
	float *out;      /* device, n elements, accumulated into */
	uint32_t n;
};

/* out[i] += in[i] over the block's slice, TILE elements at a time. */
static void accumulate_kernel(uint32_t block_idx, uint32_t block_dim, void *p)
{
	const struct acc_args *a = p;
	uint32_t lo = (uint32_t)((uint64_t)a->n * block_idx / block_dim);
	uint32_t hi = (uint32_t)((uint64_t)a->n * (block_idx + 1) / block_dim);
	size_t bytes = (size_t)a->n * sizeof(float);
	struct tp_tile gi, go, ui, uo;
	if (tp_tile_init(&gi, TP_MEM_GM, (void *)a->in, bytes, TP_FP32, 1, a->n, a->n) ||
	    tp_tile_init(&go, TP_MEM_GM, a->out, bytes, TP_FP32, 1, a->n, a->n) ||
	    tp_local_tile(&ui, TP_MEM_UB, TP_FP32, 1, TILE) ||
	    tp_local_tile(&uo, TP_MEM_UB, TP_FP32, 1, TILE))
		return;
	for (uint32_t off = lo; off < hi; off += TILE) {
		uint32_t len = hi - off < TILE ? hi - off : TILE;
		struct tp_tile vi, vo, si, so;
		if (tp_tile_view(&vi, &gi, 0, off, 1, len) || tp_tile_view(&vo, &go, 0, off, 1, len) ||
		    tp_tile_view(&si, &ui, 0, 0, 1, len) || tp_tile_view(&so, &uo, 0, 0, 1, len) ||
		    tp_copy_in(&si, &vi) || tp_copy_in(&so, &vo) || tp_vadd(&so, &so, &si) ||
		    tp_copy_out(&vo, &so))
			return;
	}
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "op_accumulate: %s failed (%d): %s\n", what, rc, tp_last_error());
	return 2;
}

/* FNV-1a, 64 bits, over @n bytes. */
static uint64_t fnv1a64(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* OP_OUT_FILE set: write @n bytes of @p there. Return 0 or 2. */
static int dump_out(const void *p, size_t n)
{
	const char *path = getenv("OP_OUT_FILE");
	if (!path || !*path)
		return 0;
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
		fprintf(stderr, "op_accumulate: cannot write OP_OUT_FILE '%s'\n", path);
		if (f)
			fclose(f);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long launches = 1;
	if (argc > 2) {
		fprintf(stderr, "usage: op_accumulate [LAUNCHES]\n");
		return 2;
	}
	if (argc == 2) {
		char *end;
		launches = strtoul(argv[1], &end, 10);
		if (*argv[1] < '0' || *argv[1] > '9' || *end || launches < 1 || launches > 1000) {
			fprintf(stderr, "op_accumulate: LAUNCHES '%s': expected 1..1000\n",
				argv[1]);
			return 2;
		}
	}

	const size_t bytes = N * sizeof(float);
	float *in = malloc(bytes), *out0 = malloc(bytes), *out = malloc(bytes);
	if (!in || !out0 || !out) {
		fprintf(stderr, "op_accumulate: out of host memory\n");
		return 2;
	}
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)((int)(i % 13u) - 6);
		out0[i] = (float)(i % 5u);
	}

	int rc;
	float *din = NULL, *dout = NULL;
	if ((rc = tp_rt_malloc((void **)&din, bytes)) != 0 ||
	    (rc = tp_rt_malloc((void **)&dout, bytes)) != 0)
		return fail("tp_rt_malloc", rc);
	if ((rc = tp_rt_memcpy(din, in, bytes, TP_RT_MEMCPY_HOST_TO_DEVICE)) != 0 ||
	    (rc = tp_rt_memcpy(dout, out0, bytes, TP_RT_MEMCPY_HOST_TO_DEVICE)) != 0)
		return fail("tp_rt_memcpy H2D", rc);

	struct acc_args args = { din, dout, N };
	const struct tp_rt_launch_attr attr = { .name = "accumulate", .cores = TP_RT_CORES_AIV };
	for (unsigned long l = 0; l < launches; l++)
		if ((rc = tp_rt_launch_ex(accumulate_kernel, BLOCKS, &args, &attr)) != 0)
			return fail("tp_rt_launch_ex", rc);
	if ((rc = tp_rt_synchronize()) != 0)
		return fail("tp_rt_synchronize", rc);
	if ((rc = tp_rt_memcpy(out, dout, bytes, TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0)
		return fail("tp_rt_memcpy D2H", rc);
	if ((rc = tp_rt_free(din)) != 0 || (rc = tp_rt_free(dout)) != 0)
		return fail("tp_rt_free", rc);

	uint32_t bad = 0;
	for (uint32_t i = 0; i < N; i++) {
		float want = out0[i] + (float)launches * in[i];
		if (out[i] != want && bad++ < 5)
			fprintf(stderr, "op_accumulate: out[%u] = %g, expected %g\n", i,
				(double)out[i], (double)want);
	}
	uint64_t sum = fnv1a64(out, bytes);
	rc = dump_out(out, bytes);
	free(in);
	free(out0);
	free(out);
	if (rc)
		return rc;
	printf("op_accumulate: %u elements, %lu launch%s, checksum %016llx: %s\n", N, launches,
	       launches == 1 ? "" : "es", (unsigned long long)sum, bad ? "WRONG" : "ok");
	if (bad) {
		fprintf(stderr, "op_accumulate: %u of %u elements wrong\n", bad, N);
		return 1;
	}
	return 0;
}
