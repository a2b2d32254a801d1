/* SPDX-License-Identifier: MIT */
/* Unit tests of op/registry: the U2 list of spec/opprof.md §4.14 —
 * add / remove / lookup, generations (free + malloc at the same address
 * with another size never restores stale bytes), snapshot / restore round
 * trip, args scope, fatal restore errors, deferred frees, and the replay
 * lock with 8 threads allocating and freeing while a window is open (run
 * it under TSan: -DTASKPROF_SANITIZE=thread).
 *
 * "Device memory" here is host memory and the copy function is memcpy:
 * the registry only sees addresses and a copy function. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "op/registry.h"
#include "taskprof/taskprof.h"

static atomic_int g_copies;
static atomic_int g_fail_h2d; /* make H2D copies fail (restore error) */

static int host_copy(void *dst, const void *src, size_t n, enum tp_rt_memcpy_kind kind)
{
	if (kind == TP_RT_MEMCPY_HOST_TO_DEVICE && atomic_load(&g_fail_h2d))
		return -EFAULT;
	memcpy(dst, src, n);
	atomic_fetch_add(&g_copies, 1);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	tp_op_reg_clear();
	tp_op_reg_set_copy(host_copy);
	atomic_store(&g_fail_h2d, 0);
	return 0;
}

static void test_add_remove_lookup(void **state)
{
	(void)state;
	static char a[1000], b[500], c[64];
	uint64_t ga, gb, gc;
	assert_int_equal(tp_op_reg_add(a, sizeof(a), 0, &ga), 0);
	assert_int_equal(tp_op_reg_add(b, sizeof(b), 0, &gb), 0);
	assert_int_equal(tp_op_reg_add(c, sizeof(c), 1, &gc), 0);
	assert_true(gb > ga && gc > gb);
	assert_int_equal(tp_op_reg_count(), 3);
	assert_int_equal(tp_op_reg_footprint(0), 1500);
	assert_int_equal(tp_op_reg_footprint(1), 64);
	assert_int_equal(tp_op_reg_footprint(-1), 1564);
	struct tp_op_alloc al;
	/* Interior pointer → its allocation. */
	assert_int_equal(tp_op_reg_lookup(a + 999, &al), 0);
	assert_ptr_equal((void *)al.base, a);
	assert_int_equal(al.size, 1000);
	assert_int_equal(al.gen, ga);
	assert_int_equal(tp_op_reg_lookup(b + 10, &al), 0);
	assert_int_equal(al.device, 0);
	assert_ptr_equal((void *)al.base, b);
	assert_int_equal(tp_op_reg_lookup(c, &al), 0);
	assert_int_equal(al.device, 1);
	/* Interior is not a base: remove refuses it. */
	assert_int_equal(tp_op_reg_remove(a + 1), -ENOENT);
	assert_int_equal(tp_op_reg_remove(a), 0);
	assert_int_equal(tp_op_reg_lookup(a + 10, NULL), -ENOENT);
	assert_int_equal(tp_op_reg_remove(a), -ENOENT);
	assert_int_equal(tp_op_reg_count(), 2);
	tp_op_reg_drop_device(1);
	assert_int_equal(tp_op_reg_count(), 1);
	assert_int_equal(tp_op_reg_footprint(-1), 500);
	assert_int_equal(tp_op_reg_add(NULL, 10, 0, NULL), -EINVAL);
	assert_int_equal(tp_op_reg_add(a, 0, 0, NULL), -EINVAL);
}

static void test_snapshot_round_trip(void **state)
{
	(void)state;
	enum { NA = 3 };
	size_t sizes[NA] = { 4096 * 3 + 17, 100, 65536 };
	unsigned char *buf[NA], *want[NA];
	for (int i = 0; i < NA; i++) {
		buf[i] = malloc(sizes[i]);
		want[i] = malloc(sizes[i]);
		for (size_t j = 0; j < sizes[i]; j++)
			want[i][j] = buf[i][j] = (unsigned char)(j * 7 + (size_t)i);
		assert_int_equal(tp_op_reg_add(buf[i], sizes[i], 0, NULL), 0);
	}
	static char other_dev[256];
	assert_int_equal(tp_op_reg_add(other_dev, sizeof(other_dev), 1, NULL), 0);
	struct tp_op_snap *s;
	assert_int_equal(tp_op_snap_take(0, TP_OP_SNAP_ALL, NULL, 0, &s), 0);
	assert_int_equal(tp_op_snap_entries(s), NA);
	assert_int_equal(tp_op_snap_bytes(s), sizes[0] + sizes[1] + sizes[2]);
	uint64_t h0, h1, h2;
	assert_int_equal(tp_op_snap_hash(s, &h0), 0);
	/* The "kernel" writes everything. */
	for (int i = 0; i < NA; i++)
		memset(buf[i], 0xEE, sizes[i]);
	assert_int_equal(tp_op_snap_hash(s, &h1), 0);
	assert_int_not_equal(h0, h1);
	uint64_t restored = 0;
	assert_int_equal(tp_op_snap_restore(s, &restored), 0);
	assert_int_equal(restored, sizes[0] + sizes[1] + sizes[2]);
	for (int i = 0; i < NA; i++)
		assert_memory_equal(buf[i], want[i], sizes[i]);
	assert_int_equal(tp_op_snap_hash(s, &h2), 0);
	assert_int_equal(h0, h2);
	/* Restoring twice gives the same bytes (every pass starts equal). */
	memset(buf[1], 1, sizes[1]);
	assert_int_equal(tp_op_snap_restore(s, NULL), 0);
	assert_memory_equal(buf[1], want[1], sizes[1]);
	tp_op_snap_release(s);
	for (int i = 0; i < NA; i++) {
		assert_int_equal(tp_op_reg_remove(buf[i]), 0);
		free(buf[i]);
		free(want[i]);
	}
}

/* Spill to a file (spec §4.9 step 3): the same round trip, entries larger
 * than the 4 MiB bounce buffer included; a removed allocation is skipped;
 * the file is gone after the release; no room (the file size limit) is
 * -EFBIG with nothing created. */
static void test_snapshot_spill_file(void **state)
{
	(void)state;
	enum { NA = 3 };
	size_t sizes[NA] = { (9u << 20) + 123, 100, 4096 * 5 };
	unsigned char *buf[NA], *want[NA];
	for (int i = 0; i < NA; i++) {
		buf[i] = malloc(sizes[i]);
		want[i] = malloc(sizes[i]);
		assert_non_null(buf[i]);
		assert_non_null(want[i]);
		for (size_t j = 0; j < sizes[i]; j++)
			want[i][j] = buf[i][j] = (unsigned char)(j * 13 + (size_t)i);
		assert_int_equal(tp_op_reg_add(buf[i], sizes[i], 0, NULL), 0);
	}
	char dir[] = "/tmp/tp_op_spill_XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/snapshot.bin", dir);
	struct tp_op_snap *s;
	assert_int_equal(tp_op_snap_take_file(0, path, &s), 0);
	assert_true(tp_op_snap_spilled(s));
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(tp_op_snap_bytes(s), sizes[0] + sizes[1] + sizes[2]);
	for (int i = 0; i < NA; i++)
		memset(buf[i], 0xEE, sizes[i]);
	uint64_t restored = 0;
	assert_int_equal(tp_op_snap_restore(s, &restored), 0);
	assert_int_equal(restored, sizes[0] + sizes[1] + sizes[2]);
	for (int i = 0; i < NA; i++)
		assert_memory_equal(buf[i], want[i], sizes[i]);
	/* A removed allocation is not restored any more. */
	assert_int_equal(tp_op_reg_remove(buf[1]), 0);
	memset(buf[1], 0xEE, sizes[1]);
	memset(buf[2], 0xEE, sizes[2]);
	assert_int_equal(tp_op_snap_restore(s, &restored), 0);
	assert_int_equal(restored, sizes[0] + sizes[2]);
	assert_int_equal(buf[1][0], 0xEE);
	assert_memory_equal(buf[2], want[2], sizes[2]);
	tp_op_snap_release(s);
	assert_int_equal(access(path, F_OK), -1);
	/* No room: the file size limit below the footprint. */
	struct rlimit old, small = { 1u << 20, 0 };
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	s = (struct tp_op_snap *)1;
	assert_int_equal(tp_op_snap_take_file(0, path, &s), -EFBIG);
	assert_null(s);
	assert_non_null(strstr(tp_last_error(), "file size limit"));
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(access(path, F_OK), -1);
	/* A folder that does not exist: an error naming the file. */
	char bad[96];
	snprintf(bad, sizeof(bad), "%s/no/such/snapshot.bin", dir);
	assert_int_not_equal(tp_op_snap_take_file(0, bad, &s), 0);
	assert_non_null(strstr(tp_last_error(), "no/such/snapshot.bin"));
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(tp_op_reg_remove(buf[0]), 0);
	assert_int_equal(tp_op_reg_remove(buf[2]), 0);
	for (int i = 0; i < NA; i++) {
		free(buf[i]);
		free(want[i]);
	}
}

/* Free + malloc at the same address with another size: new generation,
 * the old snapshot entry gone, nothing stale written back. */
static void test_generation_reuse(void **state)
{
	(void)state;
	static unsigned char mem[8192];
	memset(mem, 0xAA, sizeof(mem));
	uint64_t g1, g2;
	assert_int_equal(tp_op_reg_add(mem, 8192, 0, &g1), 0);
	struct tp_op_snap *s;
	assert_int_equal(tp_op_snap_take(0, TP_OP_SNAP_ALL, NULL, 0, &s), 0);
	assert_int_equal(tp_op_snap_entries(s), 1);
	assert_int_equal(tp_op_reg_remove(mem), 0);
	/* The free dropped it from the snapshot at once. */
	assert_int_equal(tp_op_snap_entries(s), 0);
	assert_int_equal(tp_op_snap_bytes(s), 0);
	assert_int_equal(tp_op_reg_add(mem, 1024, 0, &g2), 0);
	assert_true(g2 > g1);
	memset(mem, 0x55, sizeof(mem));
	uint64_t restored = 123;
	assert_int_equal(tp_op_snap_restore(s, &restored), 0);
	assert_int_equal(restored, 0);
	for (size_t i = 0; i < sizeof(mem); i++)
		assert_int_equal(mem[i], 0x55);
	tp_op_snap_release(s);

	/* A free the hooks never saw (add over a live entry): the old
	 * generation is dropped as well. */
	assert_int_equal(tp_op_snap_take(0, TP_OP_SNAP_ALL, NULL, 0, &s), 0);
	assert_int_equal(tp_op_snap_entries(s), 1);
	assert_int_equal(tp_op_reg_add(mem, 2048, 0, NULL), 0);
	assert_int_equal(tp_op_reg_count(), 1);
	assert_int_equal(tp_op_snap_entries(s), 0);
	memset(mem, 0x11, sizeof(mem));
	assert_int_equal(tp_op_snap_restore(s, NULL), 0);
	assert_int_equal(mem[0], 0x11);
	tp_op_snap_release(s);
	assert_int_equal(tp_op_reg_remove(mem), 0);
}

struct args2 {
	void *x;
	uint32_t n;
	uint32_t pad;
	void *y_interior;
	uint64_t junk;
};

static void test_args_scope(void **state)
{
	(void)state;
	static char x[300], y[700], z[5000], other[64];
	assert_int_equal(tp_op_reg_add(x, sizeof(x), 0, NULL), 0);
	assert_int_equal(tp_op_reg_add(y, sizeof(y), 0, NULL), 0);
	assert_int_equal(tp_op_reg_add(z, sizeof(z), 0, NULL), 0);
	assert_int_equal(tp_op_reg_add(other, sizeof(other), 1, NULL), 0);
	struct args2 a = { x, 7, 0, y + 350, 12345 };
	uint64_t bytes;
	size_t n;
	tp_op_reg_args_footprint(0, &a, sizeof(a), &bytes, &n);
	assert_int_equal(n, 2);
	assert_int_equal(bytes, 1000);
	/* The same allocation twice counts once; other devices never. */
	struct args2 b = { x, 1, 0, x + 5, (uint64_t)(uintptr_t)other };
	tp_op_reg_args_footprint(0, &b, sizeof(b), &bytes, &n);
	assert_int_equal(n, 1);
	assert_int_equal(bytes, 300);
	tp_op_reg_args_footprint(0, NULL, 256, &bytes, &n);
	assert_int_equal(n, 0);
	struct tp_op_snap *s;
	assert_int_equal(tp_op_snap_take(0, TP_OP_SNAP_ARGS, &a, sizeof(a), &s), 0);
	assert_int_equal(tp_op_snap_entries(s), 2);
	assert_int_equal(tp_op_snap_bytes(s), 1000);
	memset(x, 9, sizeof(x));
	memset(z, 9, sizeof(z));
	assert_int_equal(tp_op_snap_restore(s, NULL), 0);
	assert_int_equal(x[0], 0);
	assert_int_equal(z[0], 9); /* not in the args scope */
	tp_op_snap_release(s);
}

static void test_safe_read_stops_at_unmapped(void **state)
{
	(void)state;
	long ps = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)ps * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	assert_true(m != MAP_FAILED);
	memset(m, 'r', (size_t)ps);
	assert_int_equal(munmap(m + ps, (size_t)ps), 0);
	char out[256];
	size_t got = tp_op_safe_read(m + ps - 40, out, sizeof(out));
	assert_int_equal(got, 40);
	assert_int_equal(out[39], 'r');
	assert_int_equal(tp_op_safe_read(m + ps, out, 8), 0);
	/* An args blob at the end of a page: the scan sees 40 bytes. */
	uint64_t *w = (uint64_t *)(m + ps - 16);
	static char t[64];
	assert_int_equal(tp_op_reg_add(t, sizeof(t), 0, NULL), 0);
	w[0] = (uint64_t)(uintptr_t)t;
	w[1] = 0;
	uint64_t bytes;
	size_t n;
	tp_op_reg_args_footprint(0, w, TP_OP_ARGS_WINDOW, &bytes, &n);
	assert_int_equal(n, 1);
	assert_int_equal(bytes, 64);
	munmap(m, (size_t)ps);
}

/* The words tp_op_args_outside() reports (spec §4.13): pointers to
 * writable memory outside the launch device's registered allocations; not
 * small integers, read-only or unmapped memory, shared libraries' data or
 * non-address values. The blob ends at an unmapped page, so the scan sees
 * exactly its words. */
static int g_host_word;

static void test_args_outside(void **state)
{
	(void)state;
	long ps = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)ps * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(munmap(m + ps, (size_t)ps), 0);
	static char dev0[64], dev1[64];
	assert_int_equal(tp_op_reg_add(dev0, sizeof(dev0), 0, NULL), 0);
	assert_int_equal(tp_op_reg_add(dev1, sizeof(dev1), 1, NULL), 0);
	static const char rodata[] = "read-only";
	uint64_t *w = (uint64_t *)(m + ps - 9 * 8);
	w[0] = (uint64_t)(uintptr_t)(dev0 + 8);            /* the launch's device */
	w[1] = 42;                                          /* a small integer */
	w[2] = (uint64_t)(uintptr_t)&g_host_word;          /* the program's data */
	w[3] = (uint64_t)(uintptr_t)(dev1 + 4);            /* another device's */
	w[4] = (uint64_t)(uintptr_t)rodata;                /* read-only */
	w[5] = (uint64_t)(uintptr_t)test_args_outside;     /* code */
	w[6] = (uint64_t)(uintptr_t)(m + ps);              /* unmapped */
	w[7] = (uint64_t)(uintptr_t)stdout;                /* the C library's data */
	w[8] = 0x3f8000003f800000ull;                       /* two floats */
	struct tp_op_arg_ref ref[9];
	size_t n = tp_op_args_outside(0, w, TP_OP_ARGS_WINDOW, 0, 0, ref, 9);
	assert_int_equal(n, 2);
	assert_int_equal(ref[0].offset, 16);
	assert_int_equal(ref[0].value, (uintptr_t)&g_host_word);
	assert_int_equal(ref[0].device, -1);
	assert_int_equal(ref[1].offset, 24);
	assert_int_equal(ref[1].value, (uintptr_t)(dev1 + 4));
	assert_int_equal(ref[1].device, 1);
	/* From device 1's side, dev0 is the other device's. */
	n = tp_op_args_outside(1, w, TP_OP_ARGS_WINDOW, 0, 0, ref, 1);
	assert_int_equal(n, 2);
	assert_int_equal(ref[0].offset, 0);
	assert_int_equal(ref[0].device, 0);
	/* A stack: counted only inside the window the caller allows. */
	volatile int local = 1;
	w[4] = (uint64_t)(uintptr_t)&local;
	assert_int_equal(tp_op_args_outside(0, w, TP_OP_ARGS_WINDOW, 0, 0, ref, 9), 2);
	n = tp_op_args_outside(0, w, TP_OP_ARGS_WINDOW, (uintptr_t)&local,
			       (uintptr_t)&local + sizeof(local), ref, 9);
	assert_int_equal(n, 3);
	assert_int_equal(ref[2].offset, 32);
	assert_int_equal(ref[2].device, -1);
	/* NULL args, nothing. */
	assert_int_equal(tp_op_args_outside(0, NULL, TP_OP_ARGS_WINDOW, 0, 0, ref, 9), 0);
	munmap(m, (size_t)ps);
}

static void test_restore_failure_names_allocation(void **state)
{
	(void)state;
	static char a[128];
	assert_int_equal(tp_op_reg_add(a, sizeof(a), 2, NULL), 0);
	struct tp_op_snap *s;
	assert_int_equal(tp_op_snap_take(2, TP_OP_SNAP_ALL, NULL, 0, &s), 0);
	atomic_store(&g_fail_h2d, 1);
	assert_int_equal(tp_op_snap_restore(s, NULL), -EFAULT);
	const char *msg = tp_last_error();
	assert_non_null(strstr(msg, "restore of allocation"));
	assert_non_null(strstr(msg, "128 bytes, device 2"));
	atomic_store(&g_fail_h2d, 0);
	tp_op_snap_release(s);
}

static int g_freed[8], g_freed_dev[8], g_nfreed;
static int fake_free(void *p, int device)
{
	g_freed_dev[g_nfreed] = device;
	g_freed[g_nfreed++] = *(int *)p;
	return *(int *)p == 2 ? -EINVAL : 0;
}

static void test_deferred_frees(void **state)
{
	(void)state;
	static int v[3] = { 1, 2, 3 };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(tp_op_reg_add(&v[i], sizeof(int), i, NULL), 0);
		assert_int_equal(tp_op_defer_free(&v[i], i), 0);
	}
	/* Queued, not performed: still registered. */
	assert_int_equal(tp_op_deferred_count(), 3);
	assert_int_equal(tp_op_reg_count(), 3);
	g_nfreed = 0;
	assert_int_equal(tp_op_deferred_flush(fake_free), -EINVAL);
	assert_int_equal(g_nfreed, 3);
	assert_int_equal(g_freed[0], 1);
	assert_int_equal(g_freed[1], 2);
	assert_int_equal(g_freed[2], 3);
	/* Each on the device it was queued with. */
	assert_int_equal(g_freed_dev[0], 0);
	assert_int_equal(g_freed_dev[1], 1);
	assert_int_equal(g_freed_dev[2], 2);
	assert_int_equal(tp_op_deferred_count(), 0);
	assert_int_equal(tp_op_reg_count(), 0);
}

/* Another thread's queued free (its range still open) survives this
 * thread's flush, and goes at that thread's own flush. */
static int g_other_val = 7;

/* Thread bodies report through *@arg (cmocka's asserts belong to the
 * test's thread). */
static void *other_thread_defers(void *arg)
{
	*(int *)arg = tp_op_reg_add(&g_other_val, sizeof(int), 0, NULL) ||
		      tp_op_defer_free(&g_other_val, 0);
	return NULL;
}

static void *other_thread_counts(void *arg)
{
	*(size_t *)arg = tp_op_deferred_count();
	return NULL;
}

static void test_deferred_frees_per_thread(void **state)
{
	(void)state;
	static int mine = 4;
	pthread_t t;
	assert_int_equal(tp_op_reg_add(&mine, sizeof(int), 0, NULL), 0);
	assert_int_equal(tp_op_defer_free(&mine, 0), 0);
	int drc = -1;
	assert_int_equal(pthread_create(&t, NULL, other_thread_defers, &drc), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(drc, 0);
	assert_int_equal(tp_op_deferred_count(), 1); /* this thread's only */
	g_nfreed = 0;
	assert_int_equal(tp_op_deferred_flush(fake_free), 0);
	assert_int_equal(g_nfreed, 1);
	assert_int_equal(g_freed[0], 4);
	/* the other thread's free is still queued and registered */
	assert_int_equal(tp_op_reg_count(), 1);
	size_t n_other = 99;
	assert_int_equal(pthread_create(&t, NULL, other_thread_counts, &n_other), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(n_other, 0); /* a new thread has queued none */
	assert_int_equal(tp_op_reg_remove(&g_other_val), 0);
}

/* ---- replay lock ----------------------------------------------------------- */

#define NTHREADS 8
#define ITERS 2000

static atomic_long g_ops;
static atomic_bool g_in_window;
static atomic_int g_violations;

static void *churn(void *arg)
{
	char *mine = arg;
	for (int i = 0; i < ITERS; i++) {
		int t = tp_op_gate_enter();
		/* Inside the gate a window is never open. */
		if (atomic_load(&g_in_window))
			atomic_fetch_add(&g_violations, 1);
		uint64_t gen;
		if (tp_op_reg_add(mine + (i % 16) * 64, 64, 0, &gen) ||
		    tp_op_reg_remove(mine + (i % 16) * 64))
			atomic_fetch_add(&g_violations, 1);
		/* Counted inside the gate: a count seen to move while the
		 * window is open means a call got through it. */
		atomic_fetch_add(&g_ops, 1);
		tp_op_gate_exit(t);
	}
	return NULL;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

static void test_window_blocks_other_threads(void **state)
{
	(void)state;
	static char arenas[NTHREADS][1024];
	static char replayed[4096];
	memset(replayed, 3, sizeof(replayed));
	assert_int_equal(tp_op_reg_add(replayed, sizeof(replayed), 0, NULL), 0);
	atomic_store(&g_ops, 0);
	atomic_store(&g_violations, 0);
	pthread_t th[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, churn, arenas[i]), 0);
	while (atomic_load(&g_ops) < NTHREADS * 10)
		sleep_ms(1);

	for (int round = 0; round < 3; round++) {
		tp_op_window_begin();
		atomic_store(&g_in_window, true);
		assert_true(tp_op_window_owned());
		/* The owner passes its own gate (nested calls) at once. */
		int t = tp_op_gate_enter();
		assert_int_equal(t, 0);
		tp_op_gate_exit(t);
		struct tp_op_snap *s;
		assert_int_equal(tp_op_snap_take(0, TP_OP_SNAP_ALL, NULL, 0, &s), 0);
		/* Only the replayed buffer: the churn threads are outside. */
		assert_int_equal(tp_op_snap_entries(s), 1);
		long before = atomic_load(&g_ops);
		for (int p = 0; p < 5; p++) {
			memset(replayed, p, sizeof(replayed));
			assert_int_equal(tp_op_snap_restore(s, NULL), 0);
			assert_int_equal(replayed[100], 3);
			sleep_ms(4);
		}
		/* Nobody got through while the window was open. */
		assert_int_equal(atomic_load(&g_ops), before);
		tp_op_snap_release(s);
		atomic_store(&g_in_window, false);
		tp_op_window_end();
		assert_false(tp_op_window_owned());
		long resume = atomic_load(&g_ops);
		while (atomic_load(&g_ops) == resume && resume < NTHREADS * ITERS)
			sleep_ms(1);
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(atomic_load(&g_ops), NTHREADS * ITERS);
	assert_int_equal(atomic_load(&g_violations), 0);
	assert_int_equal(tp_op_reg_count(), 1);
}

static atomic_bool g_opened;
static void *open_window(void *arg)
{
	(void)arg;
	tp_op_window_begin();
	atomic_store(&g_opened, true);
	tp_op_window_end();
	return NULL;
}

/* A window waits for a call already inside the gate. */
static void test_window_waits_for_inflight(void **state)
{
	(void)state;
	atomic_store(&g_opened, false);
	int t = tp_op_gate_enter();
	assert_int_equal(t, 1);
	pthread_t w;
	assert_int_equal(pthread_create(&w, NULL, open_window, NULL), 0);
	sleep_ms(30);
	assert_false(atomic_load(&g_opened));
	tp_op_gate_exit(t);
	pthread_join(w, NULL);
	assert_true(atomic_load(&g_opened));
}

static void test_hash(void **state)
{
	(void)state;
	char a[100], b[100];
	memset(a, 1, sizeof(a));
	memset(b, 1, sizeof(b));
	assert_int_equal(tp_op_hash64(TP_OP_HASH_SEED, a, 100), tp_op_hash64(TP_OP_HASH_SEED, b, 100));
	b[99] = 2; /* tail byte */
	assert_int_not_equal(tp_op_hash64(TP_OP_HASH_SEED, a, 100),
			     tp_op_hash64(TP_OP_HASH_SEED, b, 100));
	b[99] = 1;
	b[40] = 2; /* lane word */
	assert_int_not_equal(tp_op_hash64(TP_OP_HASH_SEED, a, 100),
			     tp_op_hash64(TP_OP_HASH_SEED, b, 100));
	assert_int_not_equal(tp_op_hash64(TP_OP_HASH_SEED, a, 99),
			     tp_op_hash64(TP_OP_HASH_SEED, a, 100));
}

/* No bytes snapshotted (nothing registered, or every entry freed since):
 * the output hash is 0, not the hash of zero bytes. */
static void test_empty_hash_is_zero(void **state)
{
	(void)state;
	struct tp_op_snap *s;
	uint64_t h = 1;
	assert_int_equal(tp_op_snap_take(0, TP_OP_SNAP_ALL, NULL, 0, &s), 0);
	assert_int_equal(tp_op_snap_bytes(s), 0);
	assert_int_equal(tp_op_snap_hash(s, &h), 0);
	assert_int_equal(h, 0);
	tp_op_snap_release(s);
	static char a[300];
	memset(a, 7, sizeof(a));
	assert_int_equal(tp_op_reg_add(a, sizeof(a), 0, NULL), 0);
	assert_int_equal(tp_op_snap_take(0, TP_OP_SNAP_ALL, NULL, 0, &s), 0);
	assert_int_equal(tp_op_snap_hash(s, &h), 0);
	assert_int_not_equal(h, 0);
	/* Freed: dropped from the snapshot, nothing left to hash. */
	assert_int_equal(tp_op_reg_remove(a), 0);
	assert_int_equal(tp_op_snap_hash(s, &h), 0);
	assert_int_equal(h, 0);
	tp_op_snap_release(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_add_remove_lookup, setup),
		cmocka_unit_test_setup(test_snapshot_round_trip, setup),
		cmocka_unit_test_setup(test_snapshot_spill_file, setup),
		cmocka_unit_test_setup(test_generation_reuse, setup),
		cmocka_unit_test_setup(test_args_scope, setup),
		cmocka_unit_test_setup(test_safe_read_stops_at_unmapped, setup),
		cmocka_unit_test_setup(test_args_outside, setup),
		cmocka_unit_test_setup(test_restore_failure_names_allocation, setup),
		cmocka_unit_test_setup(test_deferred_frees, setup),
		cmocka_unit_test_setup(test_deferred_frees_per_thread, setup),
		cmocka_unit_test_setup(test_window_blocks_other_threads, setup),
		cmocka_unit_test_setup(test_window_waits_for_inflight, setup),
		cmocka_unit_test_setup(test_hash, setup),
		cmocka_unit_test_setup(test_empty_hash_is_zero, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
