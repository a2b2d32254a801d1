/* SPDX-License-Identifier: MIT */
/*
 * xthread — device buffers allocated on one thread, consumed by a kernel
 * launched from another (spec/opprof.md §4.14 I10: the registry must be
 * process-wide, not per thread as in msopcom's thread_local one).
 *
 * Thread B allocates `in` and `out` with tp_rt_malloc, fills them and
 * exits. Thread A then launches the accumulating kernel ("xthread_acc",
 * out += in) LAUNCHES times and copies `out` back. Under kernel replay the
 * first launch is replayed; if the registry missed B's allocations, `out`
 * is not restored between executions and the result is wrong.
 *
 * Output: one line with an FNV-1a checksum of `out`; OP_OUT_FILE gets out's
 * bytes. Exit 0 / 1 (wrong result) / 2 (device error), see op_app.h.
 */
#include <pthread.h>
#include <string.h>

#include "op_app.h"

#define APP "xthread"
#define N 40000u
#define BLOCKS 8u
#define LAUNCHES 2u

struct shared {
	float *din, *dout; /* device, allocated by thread B */
	float in[N], out0[N], out[N];
	int rc;            /* first failing call's error, or 0 */
	const char *what;
};

static void *thread_b(void *p)
{
	struct shared *s = p;
	int rc;
	if ((rc = op_app_upload(&s->din, s->in, N)) != 0 ||
	    (rc = op_app_upload(&s->dout, s->out0, N)) != 0) {
		s->rc = rc;
		s->what = "thread B: allocate and upload";
		fprintf(stderr, "%s: %s failed (%d): %s\n", APP, s->what, rc, tp_last_error());
	}
	return NULL;
}

static void *thread_a(void *p)
{
	struct shared *s = p;
	struct op_app_vec v = { .in = s->din, .out = s->dout, .n = N };
	int rc = 0;
	for (unsigned l = 0; l < LAUNCHES && rc == 0; l++)
		rc = op_app_launch(op_app_accumulate, "xthread_acc", BLOCKS, &v);
	if (rc == 0)
		rc = tp_rt_synchronize();
	if (rc == 0)
		rc = tp_rt_memcpy(s->out, s->dout, sizeof(s->out), TP_RT_MEMCPY_DEVICE_TO_HOST);
	if (rc) {
		s->rc = rc;
		s->what = "thread A: launch and download";
		fprintf(stderr, "%s: %s failed (%d): %s\n", APP, s->what, rc, tp_last_error());
	}
	return NULL;
}

int main(void)
{
	static struct shared s;
	for (uint32_t i = 0; i < N; i++) {
		s.in[i] = (float)((int)(i % 11u) - 5);
		s.out0[i] = (float)(i % 9u);
	}
	pthread_t t;
	if (pthread_create(&t, NULL, thread_b, &s) != 0 || pthread_join(t, NULL) != 0) {
		fprintf(stderr, "%s: cannot run thread B\n", APP);
		return 2;
	}
	if (s.rc)
		return 2;
	if (pthread_create(&t, NULL, thread_a, &s) != 0 || pthread_join(t, NULL) != 0) {
		fprintf(stderr, "%s: cannot run thread A\n", APP);
		return 2;
	}
	if (s.rc)
		return 2;
	int rc;
	if ((rc = tp_rt_free(s.din)) != 0 || (rc = tp_rt_free(s.dout)) != 0)
		return op_app_fail(APP, "tp_rt_free", rc);

	static float want[N];
	for (uint32_t i = 0; i < N; i++)
		want[i] = s.out0[i] + (float)LAUNCHES * s.in[i];
	uint32_t bad = op_app_check(APP, s.out, want, N);
	if ((rc = op_app_dump(APP, s.out, sizeof(s.out))) != 0)
		return rc;
	printf("%s: %u elements allocated on thread B, %u launches on thread A, checksum "
	       "%016llx: %s\n", APP, N, LAUNCHES,
	       (unsigned long long)op_app_fnv(s.out, sizeof(s.out)), bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
