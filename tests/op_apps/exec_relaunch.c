/* SPDX-License-Identifier: MIT */
/*
 * exec_relaunch — a process that execs itself between its launches
 * (docs/op.md "Which launches": the counts are per process, and an exec'd
 * image is the same process; tests/cli/test_op_process.sh I18).
 *
 * usage: exec_relaunch BEFORE AFTER
 *
 * Image 1 launches the accumulating kernel "exec_acc" BEFORE times, then
 * execs /proc/self/exe with the same arguments and an environment of its
 * own (execve with a copy of environ plus EXEC_RELAUNCH_IMAGE=2: the
 * variable stops the recursion); image 2, the same process (same pid),
 * launches it AFTER times (and ends with _exit() when EXEC_RELAUNCH_EXIT=1).
 * Each image prints "exec_relaunch: image I pid
 * P" first and checks every result (out += in per launch).
 *
 * Exit 0 / 1 / 2, see op_app.h.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "op_app.h"

#define APP "exec_relaunch"
#define N 4096u
#define BLOCKS 2u
#define MARK "EXEC_RELAUNCH_IMAGE=2"

extern char **environ;

/* @times accumulating launches on one pair of buffers, checked. */
static int launches(unsigned times)
{
	static float in[N], out[N], want[N];
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)((int)(i % 7u) - 3);
		out[i] = (float)(i % 5u);
		want[i] = out[i] + (float)times * in[i];
	}
	float *din = NULL, *dout = NULL;
	int rc;
	if ((rc = op_app_upload(&din, in, N)) != 0 || (rc = op_app_upload(&dout, out, N)) != 0)
		return op_app_fail(APP, "allocate and upload", rc);
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	for (unsigned t = 0; t < times; t++)
		if ((rc = op_app_launch(op_app_accumulate, "exec_acc", BLOCKS, &v)) != 0)
			return op_app_fail(APP, "exec_acc", rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(out, dout, sizeof(out), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(din)) != 0 || (rc = tp_rt_free(dout)) != 0)
		return op_app_fail(APP, "download", rc);
	return op_app_check(APP, out, want, N) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s BEFORE AFTER\n", APP);
		return 2;
	}
	const char *img = getenv("EXEC_RELAUNCH_IMAGE");
	const int second = img && !strcmp(img, "2");
	printf("%s: image %d pid %ld\n", APP, second ? 2 : 1, (long)getpid());
	fflush(stdout);
	int rc = launches((unsigned)strtoul(argv[second ? 2 : 1], NULL, 10));
	if (rc || second) {
		if (!rc)
			printf("%s: ok\n", APP);
		/* EXEC_RELAUNCH_EXIT=1: the new image ends with _exit(), so
		 * no exit handler of the injector runs (its selection state
		 * file stays for taskprof op to remove). */
		const char *ex = getenv("EXEC_RELAUNCH_EXIT");
		if (second && ex && !strcmp(ex, "1")) {
			fflush(stdout);
			_exit(rc);
		}
		return rc;
	}
	/* An environment of its own, as an application may pass to execve:
	 * a copy of environ and the mark. */
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof(*env));
	if (!env)
		return 2;
	memcpy(env, environ, n * sizeof(*env));
	env[n] = MARK;
	execve("/proc/self/exe", argv, env);
	perror(APP ": execve /proc/self/exe");
	return 2;
}
