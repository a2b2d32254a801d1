/* SPDX-License-Identifier: MIT */
/*
 * markers — launches outside and inside a tp_rt_range_push/pop range, for
 * `--range-markers on` in every replay mode (spec/opprof.md §4.2, §4.6:
 * skip-before-match → range filter → name → skip → count).
 *
 * Four accumulating launches (y += x, x = 1, y starts at 0), in order:
 *
 *     0 outside_k   (before the range)
 *     1 in_a        inside range "mr"
 *     2 in_b        inside range "mr"
 *     3 after_k     (after the range)
 *
 * Launch i runs on i + 1 blocks. With range markers on only in_a and in_b
 * may be profiled; the launches outside still count for
 * --launch-skip-before-match. y must end at 4 wherever it was profiled.
 *
 * MARKERS_RANGE in the environment names the range instead of "mr" (a
 * name with control characters: launch.txt must keep one line per key).
 *
 * OP_OUT_FILE gets y's bytes. Exit 0 / 1 (wrong result) / 2 (device
 * error), see op_app.h.
 */
#include <stdlib.h>

#include "op_app.h"

#define APP "markers"
#define N 8192u

int main(void)
{
	static float x[N], y[N], want[N];
	for (uint32_t i = 0; i < N; i++) {
		x[i] = 1;
		y[i] = (float)(i % 5u);
		want[i] = y[i] + 4;
	}
	float *dx = NULL, *dy = NULL;
	int rc;
	if ((rc = op_app_upload(&dx, x, N)) != 0 || (rc = op_app_upload(&dy, y, N)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	struct op_app_vec v = { .in = dx, .out = dy, .n = N };
	if ((rc = op_app_launch(op_app_accumulate, "outside_k", 1, &v)) != 0)
		return op_app_fail(APP, "launch outside_k", rc);
	const char *range = getenv("MARKERS_RANGE");
	if ((rc = tp_rt_range_push(range ? range : "mr")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	if ((rc = op_app_launch(op_app_accumulate, "in_a", 2, &v)) != 0)
		return op_app_fail(APP, "launch in_a", rc);
	if ((rc = op_app_launch(op_app_accumulate, "in_b", 3, &v)) != 0)
		return op_app_fail(APP, "launch in_b", rc);
	if ((rc = tp_rt_range_pop()) != 0)
		return op_app_fail(APP, "tp_rt_range_pop", rc);
	if ((rc = op_app_launch(op_app_accumulate, "after_k", 4, &v)) != 0)
		return op_app_fail(APP, "launch after_k", rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(y, dy, sizeof(y), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(dx)) != 0 || (rc = tp_rt_free(dy)) != 0)
		return op_app_fail(APP, "download", rc);
	uint32_t bad = op_app_check(APP, y, want, N);
	if ((rc = op_app_dump(APP, y, sizeof(y))) != 0)
		return rc;
	printf("%s: 4 launches (2 in range mr), checksum %016llx: %s\n", APP,
	       (unsigned long long)op_app_fnv(y, sizeof(y)), bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
