/* SPDX-License-Identifier: MIT */
/*
 * rejected — launch calls the runtime rejects, around two real launches
 * (docs/op.md "Which launches": such a call is no kernel launch; taskprof
 * op passes it to the runtime unprofiled, and the selection never sees
 * it).
 *
 * In order, on device 0, each call's result printed as
 * "rejected: call N -> RC MESSAGE":
 *
 *   call 1  tp_rt_launch(NULL, 4, &v)                    -EINVAL
 *   call 2  tp_rt_launch(acc, 0, &v)                     -EINVAL
 *   call 3  tp_rt_launch(acc, TP_RT_MAX_BLOCK_DIM + 1, &v) -EINVAL
 *   call 4  tp_rt_launch_ex(acc, 4, &v, cores 99)        -EINVAL
 *   "first_acc"   out += in on 4 AIV blocks
 *   call 5  tp_rt_launch(NULL, 4, &v)                    -EINVAL
 *   "second_acc"  out += in again
 *
 * `rejected range` makes all of them between tp_rt_range_push("rj") and
 * tp_rt_range_pop(): a refused call must fail at the call there too (the
 * runtime's error), not be captured.
 *
 * `rejected fork` then forks: the child's tp_rt_launch on device 0, which
 * the parent opened, is refused with -ENODEV (rt.h "fork()"); it prints
 * "rejected: child call -> RC MESSAGE" and exits 0 when RC is -ENODEV.
 *
 * out must be out0 + 2 * in; OP_OUT_FILE gets its bytes. Exit 0 / 1 (a
 * wrong result, or a rejected call that returned something else than
 * -EINVAL) / 2 (a device call failed, bad usage), see op_app.h.
 */
#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "op_app.h"

#define APP "rejected"
#define N 8192u
#define BLOCKS 4u

static int g_wrong;

/* Print one rejected call's result; it must be -EINVAL. */
static void said(int call, int rc)
{
	printf("%s: call %d -> %d %s\n", APP, call, rc, rc ? tp_last_error() : "");
	if (rc != -EINVAL)
		g_wrong = 1;
}

int main(int argc, char **argv)
{
	const int range = argc > 1 && !strcmp(argv[1], "range");
	const int forks = argc > 1 && !strcmp(argv[1], "fork");
	if (argc > 1 && !range && !forks) {
		fprintf(stderr, "usage: %s [range|fork]\n", APP);
		return 2;
	}
	static float in[N], out[N], want[N];
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)(i % 7u) - 3.0f;
		out[i] = (float)(i % 5u);
		want[i] = out[i] + 2.0f * in[i];
	}
	float *din = NULL, *dout = NULL;
	int rc;
	if ((rc = op_app_upload(&din, in, N)) != 0 || (rc = op_app_upload(&dout, out, N)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	if (range && (rc = tp_rt_range_push("rj")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	said(1, tp_rt_launch(NULL, BLOCKS, &v));
	said(2, tp_rt_launch(op_app_accumulate, 0, &v));
	said(3, tp_rt_launch(op_app_accumulate, TP_RT_MAX_BLOCK_DIM + 1, &v));
	const struct tp_rt_launch_attr bad = { .name = "bad_cores", .cores = (enum tp_rt_cores)99 };
	said(4, tp_rt_launch_ex(op_app_accumulate, BLOCKS, &v, &bad));
	if ((rc = op_app_launch(op_app_accumulate, "first_acc", BLOCKS, &v)) != 0)
		return op_app_fail(APP, "first_acc", rc);
	said(5, tp_rt_launch(NULL, BLOCKS, &v));
	if ((rc = op_app_launch(op_app_accumulate, "second_acc", BLOCKS, &v)) != 0)
		return op_app_fail(APP, "second_acc", rc);
	if (range && (rc = tp_rt_range_pop()) != 0)
		return op_app_fail(APP, "tp_rt_range_pop", rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(out, dout, sizeof(out), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(din)) != 0 || (rc = tp_rt_free(dout)) != 0)
		return op_app_fail(APP, "download", rc);
	if ((rc = op_app_dump(APP, out, sizeof(out))) != 0)
		return rc;
	uint32_t wrong = op_app_check(APP, out, want, N);
	if (forks) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			return op_app_fail(APP, "fork", -errno);
		if (pid == 0) {
			rc = tp_rt_launch(op_app_accumulate, BLOCKS, &v);
			printf("%s: child call -> %d %s\n", APP, rc, rc ? tp_last_error() : "");
			fflush(stdout);
			_exit(rc == -ENODEV ? 0 : 1);
		}
		int st = 0;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			g_wrong = 1;
	}
	printf("%s%s: %s\n", APP, range ? " range" : "",
	       wrong || g_wrong ? "WRONG" : "ok");
	return wrong || g_wrong ? 1 : 0;
}
