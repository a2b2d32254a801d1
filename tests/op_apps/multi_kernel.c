/* SPDX-License-Identifier: MIT */
/*
 * multi_kernel — several named kernels in a known order, for the launch
 * selection of `taskprof op` (spec/opprof.md §4.6, §4.14 I5: -k,
 * --launch-skip-before-match, --launch-skip, -c).
 *
 * One vector x is updated in place by 8 launches (index: name, blocks):
 *
 *     0 add_one 1   1 scale_two 2   2 add_one 3   3 add_three 4
 *     4 scale_two 5 5 add_one 6     6 add_three 7 7 add_one 8
 *
 * Launch i runs on i + 1 blocks, so a profiled launch's launch.txt
 * (block_dim) says which launch it was. add_one is x += 1, add_three
 * x += 3, scale_two x *= 2: the launches do not commute, so a replay that
 * forgets to restore x, or runs a launch twice, gives a wrong x.
 *
 * Prints the sequence and a checksum; OP_OUT_FILE gets x's bytes.
 * Exit 0 / 1 (wrong result) / 2 (device error), see op_app.h.
 */
#include "op_app.h"

#define APP "multi_kernel"
#define N 8192u

static const struct {
	const char *name;
	float a, b; /* x = a * x + b */
} seq[] = {
	{ "add_one", 1, 1 },   { "scale_two", 2, 0 }, { "add_one", 1, 1 },
	{ "add_three", 1, 3 }, { "scale_two", 2, 0 }, { "add_one", 1, 1 },
	{ "add_three", 1, 3 }, { "add_one", 1, 1 },
};
#define NSEQ (sizeof(seq) / sizeof(seq[0]))

int main(void)
{
	static float x[N], want[N];
	for (uint32_t i = 0; i < N; i++)
		want[i] = x[i] = (float)(i % 17u);
	float *dx = NULL;
	int rc;
	if ((rc = op_app_upload(&dx, x, N)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	for (uint32_t l = 0; l < NSEQ; l++) {
		struct op_app_vec v = { .in = dx, .out = dx, .n = N, .a = seq[l].a, .b = seq[l].b };
		if ((rc = op_app_launch(op_app_axpb, seq[l].name, l + 1, &v)) != 0)
			return op_app_fail(APP, seq[l].name, rc);
		for (uint32_t i = 0; i < N; i++)
			want[i] = seq[l].a * want[i] + seq[l].b;
		printf("%s: launch %u: %s on %u block%s\n", APP, l, seq[l].name, l + 1, l ? "s" : "");
	}
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(x, dx, sizeof(x), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(dx)) != 0)
		return op_app_fail(APP, "download", rc);
	uint32_t bad = op_app_check(APP, x, want, N);
	if ((rc = op_app_dump(APP, x, sizeof(x))) != 0)
		return rc;
	printf("%s: %zu launches, checksum %016llx: %s\n", APP, NSEQ,
	       (unsigned long long)op_app_fnv(x, sizeof(x)), bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
