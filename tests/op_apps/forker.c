/* SPDX-License-Identifier: MIT */
/*
 * forker — a child process that launches a kernel (spec/opprof.md §4.13,
 * §4.14 I15: child processes are ignored by default and profiled under
 * `--target-processes all`).
 *
 * Before touching the device (a forked child does not inherit the
 * device's threads), the process forks. The child launches the
 * accumulating kernel "child_acc", checks its result and exits 0 / 1 / 2;
 * then the parent launches "parent_acc" the same way. The parent exits
 * with the first non-zero status of the two.
 *
 * With the argument "after" the parent launches "parent_acc" on device 0
 * first and keeps the device open (the profiler's reader thread is then
 * polling its channels) while it forks; the child launches "child_acc" on
 * device 1, which the parent never opened, and must be profiled there.
 *
 * With the argument "orphan" the parent forks and exits 0 at once, without
 * touching the device; the child, left running, waits 500 ms and then
 * launches "child_acc" (`--target-processes all` must wait for it).
 *
 * OP_OUT_FILE gets the parent's out bytes. Exit 0 / 1 / 2, see op_app.h.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "op_app.h"

#define APP "forker"
#define N 10000u
#define BLOCKS 4u

/* Accumulate once under @name on device @dev; check; dump when @dump;
 * close the device when @reset. */
static int work(const char *name, float seed, int dump, int dev, int reset)
{
	static float in[N], out[N], want[N];
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)((int)(i % 8u) - 4) + seed;
		out[i] = (float)(i % 5u);
		want[i] = out[i] + in[i];
	}
	float *din = NULL, *dout = NULL;
	int rc;
	if ((rc = tp_rt_set_device(dev)) != 0)
		return op_app_fail(APP, "tp_rt_set_device", rc);
	if ((rc = op_app_upload(&din, in, N)) != 0 || (rc = op_app_upload(&dout, out, N)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	if ((rc = op_app_launch(op_app_accumulate, name, BLOCKS, &v)) != 0)
		return op_app_fail(APP, name, rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(out, dout, sizeof(out), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(din)) != 0 || (rc = tp_rt_free(dout)) != 0)
		return op_app_fail(APP, "download", rc);
	/* Stop the device's threads: the child leaves with _exit(). */
	if (reset && (rc = tp_rt_reset_device(dev)) != 0)
		return op_app_fail(APP, "tp_rt_reset_device", rc);
	uint32_t bad = op_app_check(APP, out, want, N);
	if (dump && (rc = op_app_dump(APP, out, sizeof(out))) != 0)
		return rc;
	printf("%s: %s (pid %d), checksum %016llx: %s\n", APP, name, (int)getpid(),
	       (unsigned long long)op_app_fnv(out, sizeof(out)), bad ? "WRONG" : "ok");
	fflush(stdout);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	int after = argc > 1 && !strcmp(argv[1], "after");
	int orphan = argc > 1 && !strcmp(argv[1], "orphan");
	if (argc > 1 && !after && !orphan) {
		fprintf(stderr, "%s: usage: %s [after|orphan] (got '%s')\n", APP, APP, argv[1]);
		return 2;
	}
	if (orphan) {
		fflush(stdout);
		pid_t o = fork();
		if (o < 0) {
			perror("forker: fork");
			return 2;
		}
		if (o == 0) {
			usleep(500 * 1000);
			_exit(work("child_acc", 10, 0, 0, 1));
		}
		printf("%s: parent (pid %d) exits, child %d left running\n", APP, (int)getpid(),
		       (int)o);
		return 0;
	}
	int parent = 0;
	if (after && (parent = work("parent_acc", 0, 1, 0, 0)) != 0)
		return parent;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("forker: fork");
		return 2;
	}
	if (pid == 0)
		_exit(work("child_acc", 10, 0, after, 1));
	int st;
	if (waitpid(pid, &st, 0) != pid) {
		perror("forker: waitpid");
		return 2;
	}
	int child = WIFEXITED(st) ? WEXITSTATUS(st) : 2;
	if (!after)
		parent = work("parent_acc", 0, 1, 0, 1);
	else if (tp_rt_reset_device(0) != 0)
		parent = op_app_fail(APP, "tp_rt_reset_device", -1);
	if (child)
		fprintf(stderr, "%s: the child exited %d\n", APP, child);
	return child ? child : parent;
}
