/* SPDX-License-Identifier: MIT */
/*
 * slow — an accumulating kernel that takes about 200 ms per execution, so
 * a test can interrupt `taskprof op` in the middle of a replay (spec/
 * opprof.md §4.13 "Ctrl-C", §4.14 I17).
 *
 * The kernel "slow_acc" (out += in, 2 blocks) sleeps 200 ms in a scalar
 * section after its tile work; `slow MS` makes it MS milliseconds (1..
 * 60000). OP_OUT_FILE gets out's bytes.
 * Exit 0 / 1 / 2, see op_app.h.
 */
#include <time.h>

#include "op_app.h"

#define APP "slow"
#define N 4096u
#define BLOCKS 2u

static long g_nap_ms = 200;

static void slow_kernel(uint32_t block_idx, uint32_t block_dim, void *p)
{
	op_app_accumulate(block_idx, block_dim, p);
	if (tp_scalar_begin("nap"))
		return;
	struct timespec ts = { g_nap_ms / 1000, (g_nap_ms % 1000) * 1000 * 1000 };
	while (nanosleep(&ts, &ts) != 0)
		;
	tp_scalar_end();
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		g_nap_ms = atol(argv[1]);
		if (g_nap_ms < 1 || g_nap_ms > 60000) {
			fprintf(stderr, "usage: %s [MS 1..60000]\n", APP);
			return 2;
		}
	}
	static float in[N], out[N], want[N];
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)((int)(i % 3u) - 1);
		out[i] = (float)(i % 11u);
		want[i] = out[i] + in[i];
	}
	int rc = op_app_run_vec(APP, slow_kernel, "slow_acc", BLOCKS, in, out, N);
	if (rc)
		return rc;
	uint32_t bad = op_app_check(APP, out, want, N);
	if ((rc = op_app_dump(APP, out, sizeof(out))) != 0)
		return rc;
	printf("%s: checksum %016llx: %s\n", APP, (unsigned long long)op_app_fnv(out, sizeof(out)),
	       bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
