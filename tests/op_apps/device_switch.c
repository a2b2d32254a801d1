/* SPDX-License-Identifier: MIT */
/*
 * device_switch — launches on device 0, then device 1, then device 0 again
 * (spec/opprof.md §4.10, §4.14 I12; issue 6 acceptance "a device switch in
 * the middle of the application reopens the channels ... leaves no thread
 * behind").
 *
 * Each device gets its own `in` and `out`; the kernel "dev_acc" (out +=
 * in) runs on device 0, 1, 0. At the end both devices are reset, which
 * stops their threads, and the application counts the threads left in the
 * process (/proc/self/task): it must be 1, the main thread, also under
 * `taskprof op` (the profiler's reader threads must be gone too). The
 * line "device_switch: threads after reset: N" reports it.
 *
 * OP_OUT_FILE gets both devices' `out` (device 0's, then device 1's).
 * Exit 0 / 1 (wrong result) / 2 (device error), see op_app.h; a thread
 * count above 1 is only reported (the test checks it).
 */
#include <dirent.h>
#include <string.h>

#include "op_app.h"

#define APP "device_switch"
#define N 20000u
#define BLOCKS 4u

static float in[2][N], out[2][N], want[2][N];
static float *din[2], *dout[2];

static int launch_on(int dev)
{
	int rc;
	if ((rc = tp_rt_set_device(dev)) != 0)
		return op_app_fail(APP, "tp_rt_set_device", rc);
	struct op_app_vec v = { .in = din[dev], .out = dout[dev], .n = N };
	if ((rc = op_app_launch(op_app_accumulate, "dev_acc", BLOCKS, &v)) != 0)
		return op_app_fail(APP, "launch dev_acc", rc);
	for (uint32_t i = 0; i < N; i++)
		want[dev][i] += in[dev][i];
	printf("%s: launched dev_acc on device %d\n", APP, dev);
	return 0;
}

/* Entries of /proc/self/task, or -1. */
static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

int main(void)
{
	int rc;
	for (int d = 0; d < 2; d++) {
		for (uint32_t i = 0; i < N; i++) {
			in[d][i] = (float)((int)((i + (uint32_t)d * 7u) % 13u) - 6);
			want[d][i] = out[d][i] = (float)(d * 100) + (float)(i % 3u);
		}
		if ((rc = tp_rt_set_device(d)) != 0)
			return op_app_fail(APP, "tp_rt_set_device", rc);
		if ((rc = op_app_upload(&din[d], in[d], N)) != 0 ||
		    (rc = op_app_upload(&dout[d], out[d], N)) != 0)
			return op_app_fail(APP, "allocate and upload", rc);
	}
	if ((rc = launch_on(0)) || (rc = launch_on(1)) || (rc = launch_on(0)))
		return rc;
	for (int d = 1; d >= 0; d--) {
		if ((rc = tp_rt_set_device(d)) != 0 || (rc = tp_rt_synchronize()) != 0 ||
		    (rc = tp_rt_memcpy(out[d], dout[d], sizeof(out[d]),
				       TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
		    (rc = tp_rt_free(din[d])) != 0 || (rc = tp_rt_free(dout[d])) != 0)
			return op_app_fail(APP, "download", rc);
	}
	uint32_t bad = op_app_check(APP, out[0], want[0], N) + op_app_check(APP, out[1], want[1], N);
	if ((rc = tp_rt_reset_device(0)) != 0 || (rc = tp_rt_reset_device(1)) != 0)
		return op_app_fail(APP, "tp_rt_reset_device", rc);
	if ((rc = op_app_dump(APP, out, sizeof(out))) != 0)
		return rc;
	printf("%s: threads after reset: %d\n", APP, count_threads());
	printf("%s: 3 launches on devices 0, 1, 0, checksum %016llx: %s\n", APP,
	       (unsigned long long)op_app_fnv(out, sizeof(out)), bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
