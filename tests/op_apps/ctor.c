/* SPDX-License-Identifier: MIT */
/*
 * ctor — device memory allocated by a constructor, before main (spec/
 * opprof.md §3.2, §4.14 I13: every hook initialises the injector, so an
 * allocation made before main is registered and restored).
 *
 * The constructor allocates and fills `in` and `out`; main launches the
 * accumulating kernel "ctor_acc" (out += in) and copies out back. Under
 * kernel replay an unregistered `out` would not be restored between the
 * executions and the result would be wrong.
 *
 * OP_OUT_FILE gets out's bytes. Exit 0 / 1 / 2, see op_app.h.
 */
#include "op_app.h"

#define APP "ctor"
#define N 12000u
#define BLOCKS 4u

static float in[N], out[N];
static float *din, *dout;
static int ctor_rc = -1;

__attribute__((constructor)) static void allocate_early(void)
{
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)((int)(i % 6u) - 3);
		out[i] = (float)(i % 4u);
	}
	ctor_rc = op_app_upload(&din, in, N);
	if (ctor_rc == 0)
		ctor_rc = op_app_upload(&dout, out, N);
	if (ctor_rc)
		fprintf(stderr, "%s: constructor: allocate and upload failed (%d): %s\n", APP,
			ctor_rc, tp_last_error());
}

int main(void)
{
	if (ctor_rc)
		return 2;
	static float want[N];
	for (uint32_t i = 0; i < N; i++)
		want[i] = out[i] + in[i];
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	int rc;
	if ((rc = op_app_launch(op_app_accumulate, "ctor_acc", BLOCKS, &v)) != 0)
		return op_app_fail(APP, "launch ctor_acc", rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(out, dout, sizeof(out), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(din)) != 0 || (rc = tp_rt_free(dout)) != 0)
		return op_app_fail(APP, "download", rc);
	uint32_t bad = op_app_check(APP, out, want, N);
	if ((rc = op_app_dump(APP, out, sizeof(out))) != 0)
		return rc;
	printf("%s: buffers allocated before main, checksum %016llx: %s\n", APP,
	       (unsigned long long)op_app_fnv(out, sizeof(out)), bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
