/* SPDX-License-Identifier: MIT */
/*
 * bench_op — costs of `taskprof op` kernel replay (spec/opprof.md §4.4,
 * §4.9; issue 6 scope 4).
 *
 *   BENCH op restore_bw_ratio=<R> restore_gbs=<G> memcpy_gbs=<M> bytes=268435456
 *     restore throughput of op/registry (the host snapshot copied back into
 *     256 MiB of device memory held in 8 allocations, through the real
 *     tp_rt_memcpy H2D) divided by plain memcpy of the same 256 MiB
 *     between two host buffers, both measured in this run, best of 5
 *     (target: R >= 0.8);
 *   BENCH op per_pass_overhead_us=<U> kernel_us=<K> passes=<P>
 *     what one measured pass costs beyond the kernel (restore + channel
 *     programming + launch + drain, wall_ns - kernel_ns of replay.txt,
 *     median over the passes) when the built `taskprof op` profiles
 *     op_accumulate (16 blocks, 512 KiB tracked) found beside this bench;
 *     "NA" when they are not built.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "op/registry.h"
#include "taskprof/rt.h"
#include "bench_help.h"

#define USAGE \
	"usage: bench_op\n\nCosts of taskprof op kernel replay:\n  BENCH op restore_bw_ratio=<R> restore_gbs=<G> memcpy_gbs=<M> bytes=<B>\n    device-memory restore throughput against plain memcpy (target R >= 0.8)\n  BENCH op per_pass_overhead_us=<U> kernel_us=<K> passes=<P>\n    what one replay pass costs beyond the kernel\n"

#define TOTAL (256u << 20)
#define NALLOC 8u
#define REPS 5

static int fail(const char *what, int rc)
{
	fprintf(stderr, "bench_op: %s failed (%d): %s\n", what, rc, tp_last_error());
	return 1;
}

static int bench_restore(void)
{
	const size_t each = TOTAL / NALLOC;
	void *dev[NALLOC];
	char *host = malloc(each);
	if (!host)
		return fail("malloc", -ENOMEM);
	memset(host, 0x5a, each);
	int rc;
	for (unsigned i = 0; i < NALLOC; i++) {
		if ((rc = tp_rt_malloc(&dev[i], each)) != 0)
			return fail("tp_rt_malloc", rc);
		/* Touch the device pages: the app's data is resident too. */
		if ((rc = tp_rt_memcpy(dev[i], host, each, TP_RT_MEMCPY_HOST_TO_DEVICE)) != 0)
			return fail("tp_rt_memcpy", rc);
		if ((rc = tp_op_reg_add(dev[i], each, 0, NULL)) != 0)
			return fail("tp_op_reg_add", rc);
	}
	free(host);
	tp_op_reg_set_copy(tp_rt_memcpy);
	struct tp_op_snap *s;
	if ((rc = tp_op_snap_take(0, TP_OP_SNAP_ALL, NULL, 0, &s)) != 0)
		return fail("tp_op_snap_take", rc);
	uint64_t best_restore = UINT64_MAX, restored = 0;
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = tp_now_ns();
		if ((rc = tp_op_snap_restore(s, &restored)) != 0)
			return fail("tp_op_snap_restore", rc);
		uint64_t dt = tp_now_ns() - t0;
		if (dt < best_restore)
			best_restore = dt;
	}
	tp_op_snap_release(s);
	for (unsigned i = 0; i < NALLOC; i++) {
		tp_op_reg_remove(dev[i]);
		tp_rt_free(dev[i]);
	}

	/* The reference: memcpy of the same bytes between two resident
	 * host buffers, in the same process, right after. */
	char *a = malloc(TOTAL), *b = malloc(TOTAL);
	if (!a || !b)
		return fail("malloc", -ENOMEM);
	memset(a, 1, TOTAL);
	memset(b, 2, TOTAL);
	uint64_t best_memcpy = UINT64_MAX;
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = tp_now_ns();
		memcpy(b, a, TOTAL);
		uint64_t dt = tp_now_ns() - t0;
		if (dt < best_memcpy)
			best_memcpy = dt;
		a[r] = b[TOTAL - 1 - (size_t)r]; /* keep the copies observable */
	}
	free(a);
	free(b);
	if (restored != TOTAL) {
		fprintf(stderr, "bench_op: restored %llu bytes, expected %u\n",
			(unsigned long long)restored, TOTAL);
		return 1;
	}
	double rg = (double)TOTAL / (double)best_restore;   /* bytes/ns = GB/s */
	double mg = (double)TOTAL / (double)best_memcpy;
	printf("BENCH op restore_bw_ratio=%.3f restore_gbs=%.2f memcpy_gbs=%.2f bytes=%u\n",
	       rg / mg, rg, mg, TOTAL);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Run `taskprof op` on op_accumulate and read dump/replay.txt. */
static int bench_pass_overhead(void)
{
	char self[PATH_MAX], dir[PATH_MAX], tp[PATH_MAX + 32], app[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		goto na;
	self[n] = '\0';
	snprintf(dir, sizeof(dir), "%s", self);
	char *slash = strrchr(dir, '/');
	if (!slash)
		goto na;
	*slash = '\0';
	snprintf(tp, sizeof(tp), "%s/../taskprof", dir);
	snprintf(app, sizeof(app), "%s/../examples/op_accumulate", dir);
	if (access(tp, X_OK) || access(app, X_OK))
		goto na;
	char tmpl[] = "/tmp/bench_op_XXXXXX";
	if (!mkdtemp(tmpl))
		goto na;
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
		 "'%s' op -o '%s' --warm-up 1 --aic-metrics PipeUtilization,Memory,MemoryUB "
		 "-- '%s' >/dev/null 2>&1 && cat '%s'/OPPROF_*/device0/accumulate/0/dump/replay.txt",
		 tp, tmpl, app, tmpl);
	FILE *p = popen(cmd, "r");
	uint64_t over[64], kern[64];
	int np = 0;
	char line[512];
	while (p && fgets(line, sizeof(line), p) && np < 64) {
		unsigned long long w, k;
		const char *ws = strstr(line, "wall_ns="), *ks = strstr(line, "kernel_ns=");
		if (!ws || !ks || sscanf(ws, "wall_ns=%llu", &w) != 1 ||
		    sscanf(ks, "kernel_ns=%llu", &k) != 1)
			continue;
		over[np] = w > k ? w - k : 0;
		kern[np++] = k;
	}
	int st = p ? pclose(p) : -1;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_op: could not remove %s\n", tmpl);
	if (st != 0 || np == 0)
		goto na;
	qsort(over, (size_t)np, sizeof(over[0]), cmp_u64);
	qsort(kern, (size_t)np, sizeof(kern[0]), cmp_u64);
	printf("BENCH op per_pass_overhead_us=%.1f kernel_us=%.1f passes=%d\n",
	       (double)over[np / 2] / 1e3, (double)kern[np / 2] / 1e3, np);
	return 0;
na:
	printf("BENCH op per_pass_overhead_us=NA kernel_us=NA passes=0 (taskprof or "
	       "examples/op_accumulate not built beside the bench)\n");
	return 0;
}

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	int rc = bench_restore();
	if (rc)
		return rc;
	return bench_pass_overhead();
}
