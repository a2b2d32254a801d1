/* SPDX-License-Identifier: MIT */
/*
 * many_blocks — one launch of 5000 blocks: far more than the device's
 * cores, than one read of a profiling channel returns and than a channel's
 * ring holds (4096 records), so the producing cores wait for the reader
 * (spec/opprof.md §4.10, §4.14 I16: the reader drains every record up to
 * the end-of-pass marker; BLOCK records per pass = blocks).
 *
 * The kernel "many_acc" adds `in` to `out` over 8 elements per block.
 * OP_OUT_FILE gets out's bytes. Exit 0 / 1 / 2, see op_app.h.
 */
#include "op_app.h"

#define APP "many_blocks"
#define BLOCKS 5000u
#define N (BLOCKS * 8u)

int main(void)
{
	static float in[N], out[N], want[N];
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)((int)(i % 5u) - 2);
		out[i] = (float)(i % 3u);
		want[i] = out[i] + in[i];
	}
	int rc = op_app_run_vec(APP, op_app_accumulate, "many_acc", BLOCKS, in, out, N);
	if (rc)
		return rc;
	uint32_t bad = op_app_check(APP, out, want, N);
	if ((rc = op_app_dump(APP, out, sizeof(out))) != 0)
		return rc;
	printf("%s: %u blocks, checksum %016llx: %s\n", APP, BLOCKS,
	       (unsigned long long)op_app_fnv(out, sizeof(out)), bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
