/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the device API (taskprof/rt.h, platform/rt.c): SPMD
 * launches on both platforms (each block writes its block_idx into a
 * device buffer, copied back and checked), block placement, more blocks
 * than cores, kernel hooks, the per-thread current device, concurrent
 * launchers, idle devices that sleep, and every error path: bad pointers,
 * size overflow, block_dim 0 / too large, calls from device code, a bad
 * environment. Issue 6: tp_rt_launch_ex core placement (AIC-only /
 * AIV-only, more blocks than cores of the type), a cube kernel that
 * works on AIC and fails cleanly on AIV, tile errors naming kernel, block
 * and core, launch / block counters and the TASKPROF_SIM_STATS exit line,
 * range pairing; a device whose threads cannot all be created (the call
 * fails at once instead of hanging, the next one opens it).
 *
 * Devices persist between tests; each test that switches platform resets
 * them first (the system counter is process-wide).
 */
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
#include <unistd.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "platform/dev_memory.h"
#include "platform/device.h"
#include "platform/rt_internal.h"
#include "taskprof/kernel.h"
#include "taskprof/rt.h"
#include "taskprof/rt_tool.h"
#include "unit_helpers.h"

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void reset_all(void)
{
	for (int i = 0; i < TP_RT_MAX_DEVICES; i++)
		assert_int_equal(tp_rt_reset_device(i), 0);
}

static void use_platform(const char *plat)
{
	reset_all();
	setenv("TASKPROF_PLATFORM", plat, 1);
}

static void quiet(int level, const char *msg, void *ud)
{
	(void)level, (void)msg, (void)ud;
}

static int setup(void **state)
{
	(void)state;
	unsetenv("TASKPROF_PLATFORM");
	unsetenv("TASKPROF_DEVICE_MEM_MB");
	assert_int_equal(tp_rt_set_device(0), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tp_log_set_hook(NULL, NULL);
	tp_log_set_threshold(TP_LOG_TIMING);
	return 0;
}

static bool has(const char *needle)
{
	if (!strstr(tp_last_error(), needle)) {
		printf("expected \"%s\" in \"%s\"\n", needle, tp_last_error());
		return false;
	}
	return true;
}

/* ---- SPMD --------------------------------------------------------------------- */

struct ids_args {
	uint32_t *out;      /* device: block_idx per block */
	int32_t *core;      /* host: AICore id that ran each block */
	int32_t *type;      /* host: its core type */
	uint32_t *dims;     /* host: block_dim seen by each block */
};

static void write_ids(uint32_t block_idx, uint32_t block_dim, void *p)
{
	struct ids_args *a = p;
	a->out[block_idx] = block_idx;
	struct tp_aicore *core = tp_aicore_current();
	a->core[block_idx] = core ? tp_aicore_id(core) : -1;
	a->type[block_idx] = core ? (int32_t)tp_aicore_type(core) : -1;
	a->dims[block_idx] = block_dim;
}

static void spmd_on(const char *plat, uint64_t freq)
{
	use_platform(plat);
	assert_int_equal(tp_rt_set_device(0), 0);
	struct tp_device *dev = tp_rt_internal_device(0);
	assert_non_null(dev);
	assert_string_equal(tp_device_platform(dev)->name, plat);
	assert_int_equal(tp_sys_cnt_freq(), freq);

	static const uint32_t dims[] = { 1, 8, 24, 100 };
	for (size_t k = 0; k < sizeof(dims) / sizeof(dims[0]); k++) {
		uint32_t bd = dims[k];
		size_t bytes = bd * sizeof(uint32_t);
		uint32_t *d_out = NULL;
		assert_int_equal(tp_rt_malloc((void **)&d_out, bytes), 0);
		assert_non_null(d_out);
		assert_int_equal((uintptr_t)d_out % 64, 0);
		uint32_t *h = malloc(bytes);
		memset(h, 0xFF, bytes);
		assert_int_equal(tp_rt_memcpy(d_out, h, bytes, TP_RT_MEMCPY_HOST_TO_DEVICE), 0);

		struct ids_args a = {
			.out = d_out,
			.core = calloc(bd, sizeof(int32_t)),
			.type = calloc(bd, sizeof(int32_t)),
			.dims = calloc(bd, sizeof(uint32_t)),
		};
		assert_int_equal(tp_rt_launch(write_ids, bd, &a), 0);
		assert_int_equal(tp_rt_synchronize(), 0);
		memset(h, 0, bytes);
		assert_int_equal(tp_rt_memcpy(h, d_out, bytes, TP_RT_MEMCPY_DEVICE_TO_HOST), 0);
		for (uint32_t b = 0; b < bd; b++) {
			assert_int_equal(h[b], b);
			assert_int_equal(a.dims[b], bd);
			assert_true(a.core[b] >= 0 && a.core[b] < 24);
		}
		/* the first wave: one block per core, AIV cores 8..23 first,
		 * then AIC 0..7 */
		for (uint32_t b = 0; b < bd && b < 24; b++) {
			int want = b < 16 ? 8 + (int)b : (int)b - 16;
			assert_int_equal(a.core[b], want);
			assert_int_equal(a.type[b], b < 16 ? TP_CORE_AIV : TP_CORE_AIC);
		}
		printf("%s: block_dim %3u: every block wrote its block_idx (first on core %d)\n",
		       plat, bd, a.core[0]);
		assert_int_equal(tp_rt_free(d_out), 0);
		free(h);
		free(a.core);
		free(a.type);
		free(a.dims);
	}
	struct tp_dev_mem_stats st;
	tp_dev_mem_stats(tp_device_mem(dev), &st);
	assert_int_equal(st.live_allocs, 0);
}

static void test_spmd_a2a3sim(void **state)
{
	(void)state;
	spmd_on("a2a3sim", 50000000ULL);
}

static void test_spmd_a5sim(void **state)
{
	(void)state;
	spmd_on("a5sim", 1000000000ULL);
	use_platform("a2a3sim");
}

/* ---- hooks --------------------------------------------------------------------- */

struct hook_count {
	atomic_int begin, end, wrong;
};

static void hb(struct tp_aicore *core, void *ud)
{
	struct hook_count *h = ud;
	if (tp_aicore_current() != core)
		atomic_fetch_add(&h->wrong, 1);
	atomic_fetch_add(&h->begin, 1);
}

static void he(struct tp_aicore *core, void *ud)
{
	(void)core;
	atomic_fetch_add(&((struct hook_count *)ud)->end, 1);
}

static void nop_kernel(uint32_t b, uint32_t n, void *p)
{
	(void)b, (void)n, (void)p;
}

static void test_kernel_hooks(void **state)
{
	(void)state;
	static struct hook_count h;
	memset(&h, 0, sizeof(h));
	struct tp_kernel_hooks hooks = { hb, he, &h };
	tp_rt_internal_set_kernel_hooks(&hooks);
	assert_int_equal(tp_rt_launch(nop_kernel, 37, NULL), 0);
	assert_int_equal(atomic_load(&h.begin), 37);
	assert_int_equal(atomic_load(&h.end), 37);
	assert_int_equal(atomic_load(&h.wrong), 0);
	/* a device opened later gets them too */
	assert_int_equal(tp_rt_set_device(1), 0);
	assert_int_equal(tp_rt_launch(nop_kernel, 5, NULL), 0);
	assert_int_equal(atomic_load(&h.begin), 42);
	tp_rt_internal_set_kernel_hooks(NULL);
	assert_int_equal(tp_rt_launch(nop_kernel, 5, NULL), 0);
	assert_int_equal(atomic_load(&h.begin), 42);
	assert_int_equal(tp_rt_set_device(0), 0);
	assert_int_equal(tp_rt_reset_device(1), 0);
	assert_null(tp_rt_internal_device(1));
	assert_null(tp_rt_internal_device(TP_RT_MAX_DEVICES));
}

/* ---- threads and devices -------------------------------------------------------- */

/* A kernel's memory calls act on the device it runs on (they took the
 * launching thread's default, device 0). */
struct kmem_on_dev {
	void *p;
	int rc, dev;
};

static void kmalloc_kernel(uint32_t b, uint32_t n, void *p)
{
	(void)n;
	struct kmem_on_dev *a = p;
	if (b == 0) {
		a->rc = tp_rt_malloc(&a->p, 4096);
		(void)tp_rt_get_device(&a->dev);
	}
}

static void test_kernel_memory_on_its_device(void **state)
{
	(void)state;
	struct kmem_on_dev a = { NULL, -1, -1 };
	assert_int_equal(tp_rt_set_device(2), 0);
	assert_int_equal(tp_rt_launch(kmalloc_kernel, 2, &a), 0);
	assert_int_equal(tp_rt_synchronize(), 0);
	assert_int_equal(a.rc, 0);
	assert_non_null(a.p);
	assert_int_equal(a.dev, 2);
	/* device 2's block: device 0 does not know it, device 2 frees it */
	assert_int_equal(tp_rt_set_device(0), 0);
	assert_int_not_equal(tp_rt_free(a.p), 0);
	assert_int_equal(tp_rt_set_device(2), 0);
	assert_int_equal(tp_rt_free(a.p), 0);
	assert_int_equal(tp_rt_set_device(0), 0);
	assert_int_equal(tp_rt_reset_device(2), 0);
}

static void *other_thread_device(void *arg)
{
	int *seen = arg;
	tp_rt_get_device(&seen[0]);          /* 0: default on a new thread */
	seen[1] = tp_rt_set_device(2);
	tp_rt_get_device(&seen[2]);          /* 2 */
	return NULL;
}

static void test_current_device_per_thread(void **state)
{
	(void)state;
	int id = -1;
	assert_int_equal(tp_rt_get_device(&id), 0);
	assert_int_equal(id, 0);
	assert_int_equal(tp_rt_get_device(NULL), -EINVAL);
	int seen[3] = { -1, -1, -1 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, other_thread_device, seen), 0);
	pthread_join(th, NULL);
	assert_int_equal(seen[0], 0);
	assert_int_equal(seen[1], 0);
	assert_int_equal(seen[2], 2);
	assert_int_equal(tp_rt_get_device(&id), 0);
	assert_int_equal(id, 0);

	/* device 2's memory is foreign to device 0 */
	assert_int_equal(tp_rt_set_device(2), 0);
	void *p2 = NULL;
	assert_int_equal(tp_rt_malloc(&p2, 128), 0);
	assert_int_equal(tp_rt_set_device(0), 0);
	tp_log_set_hook(quiet, NULL);
	tp_log_set_threshold(TP_LOG_ERROR + 1);
	assert_int_equal(tp_rt_free(p2), -EINVAL);
	assert_true(has("foreign pointer"));
	assert_int_equal(tp_rt_set_device(2), 0);
	assert_int_equal(tp_rt_free(p2), 0);
	assert_int_equal(tp_rt_set_device(0), 0);
	assert_int_equal(tp_rt_reset_device(2), 0);
	assert_int_equal(tp_rt_reset_device(2), 0); /* not open: nothing to do */
}

#define LAUNCHERS 3
#define LAUNCHES 30

struct launcher {
	int id;
	int bad;
};

struct fill_args {
	uint32_t *out;
	uint32_t value;
};

static void fill_kernel(uint32_t b, uint32_t n, void *p)
{
	(void)n;
	struct fill_args *a = p;
	for (int i = 0; i < 64; i++)
		a->out[b * 64 + (uint32_t)i] = a->value + b;
}

static void *launch_loop(void *arg)
{
	struct launcher *l = arg;
	uint32_t *d = NULL, h[16 * 64];
	if (tp_rt_malloc((void **)&d, sizeof(h)) != 0) {
		l->bad++;
		return NULL;
	}
	for (int k = 0; k < LAUNCHES; k++) {
		struct fill_args a = { d, (uint32_t)(l->id * 100000 + k * 100) };
		if (tp_rt_launch(fill_kernel, 16, &a) != 0 ||
		    tp_rt_memcpy(h, d, sizeof(h), TP_RT_MEMCPY_DEVICE_TO_HOST) != 0) {
			l->bad++;
			continue;
		}
		for (uint32_t i = 0; i < 16 * 64; i++)
			l->bad += h[i] != a.value + i / 64;
	}
	tp_rt_free(d);
	return NULL;
}

static void test_concurrent_launchers(void **state)
{
	(void)state;
	pthread_t th[LAUNCHERS];
	struct launcher l[LAUNCHERS];
	for (int i = 0; i < LAUNCHERS; i++) {
		l[i] = (struct launcher){ i, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, launch_loop, &l[i]), 0);
	}
	for (int i = 0; i < LAUNCHERS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(l[i].bad, 0);
	}
	assert_int_equal(tp_rt_synchronize(), 0);
	printf("%d host threads x %d launches of 16 blocks: all results right\n", LAUNCHERS,
	       LAUNCHES);
}

/* ---- idle --------------------------------------------------------------------- */

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void test_idle_device_sleeps(void **state)
{
	(void)state;
	assert_int_equal(tp_rt_launch(nop_kernel, 24, NULL), 0);
	sleep_ms(20);
	double c0 = cpu_seconds();
	uint64_t t0 = tp_now_ns();
	sleep_ms(200);
	double used = cpu_seconds() - c0;
	double wall = (double)(tp_now_ns() - t0) / 1e9;
	printf("idle rt device (24 AICores + AICPU): %.2f ms CPU in %.0f ms = %.4f cores\n",
	       used * 1e3, wall * 1e3, used / wall);
	assert_true(used / wall < 0.05);
}

/* ---- errors -------------------------------------------------------------------- */

static void test_malloc_free_errors(void **state)
{
	(void)state;
	tp_log_set_hook(quiet, NULL);
	tp_log_set_threshold(TP_LOG_ERROR + 1);
	void *p = (void *)1;
	assert_int_equal(tp_rt_malloc(NULL, 64), -EINVAL);
	assert_true(has("dev_ptr is NULL"));
	assert_int_equal(tp_rt_malloc(&p, 0), -EINVAL);
	assert_null(p);
	assert_true(has("size 0"));
	assert_int_equal(tp_rt_malloc(&p, SIZE_MAX), -ENOMEM);
	assert_null(p);
	printf("malloc(SIZE_MAX): %s\n", tp_last_error());
	assert_true(has("tp_rt_malloc: device 0 memory: cannot allocate"));

	unsigned char *d = NULL;
	assert_int_equal(tp_rt_malloc((void **)&d, 1000), 0);
	assert_int_equal(tp_rt_free(d + 64), -EINVAL);
	assert_true(has("interior pointer"));
	int local;
	assert_int_equal(tp_rt_free(&local), -EINVAL);
	printf("free(stack): %s\n", tp_last_error());
	assert_true(has("tp_rt_free: device 0 memory"));
	assert_true(has("foreign pointer"));
	assert_int_equal(tp_rt_free(d), 0);
	assert_int_equal(tp_rt_free(d), -EINVAL);
	assert_true(has("double free"));
	assert_int_equal(tp_rt_free(NULL), 0);
}

static void test_memcpy_errors(void **state)
{
	(void)state;
	unsigned char *d = NULL, *e = NULL, h[256];
	memset(h, 0x11, sizeof(h));
	assert_int_equal(tp_rt_malloc((void **)&d, 100), 0);
	assert_int_equal(tp_rt_malloc((void **)&e, 100), 0);

	assert_int_equal(tp_rt_memcpy(d, h, 100, (enum tp_rt_memcpy_kind)7), -EINVAL);
	assert_true(has("unknown kind 7"));
	assert_int_equal(tp_rt_memcpy(NULL, h, 1, TP_RT_MEMCPY_HOST_TO_DEVICE), -EINVAL);
	assert_true(has("dst is NULL"));
	assert_int_equal(tp_rt_memcpy(h, NULL, 0, TP_RT_MEMCPY_DEVICE_TO_HOST), -EINVAL);
	assert_true(has("src is NULL"));
	assert_int_equal(tp_rt_memcpy(d, h, 0, TP_RT_MEMCPY_HOST_TO_DEVICE), 0);

	/* one byte past the allocation */
	assert_int_equal(tp_rt_memcpy(d, h, 101, TP_RT_MEMCPY_HOST_TO_DEVICE), -EFAULT);
	printf("H2D 101 bytes into 100: %s\n", tp_last_error());
	assert_true(has("tp_rt_memcpy(HOST_TO_DEVICE)"));
	assert_true(has("overruns the allocation"));
	assert_true(has("by 1 bytes"));
	assert_int_equal(tp_rt_memcpy(h, d + 50, 51, TP_RT_MEMCPY_DEVICE_TO_HOST), -EFAULT);
	assert_int_equal(tp_rt_memcpy(e, d, 101, TP_RT_MEMCPY_DEVICE_TO_DEVICE), -EFAULT);
	/* size overflow: the range wraps the address space */
	assert_int_equal(tp_rt_memcpy(d, h, SIZE_MAX, TP_RT_MEMCPY_HOST_TO_DEVICE), -EINVAL);
	printf("H2D SIZE_MAX: %s\n", tp_last_error());
	assert_true(has("wraps around the address space"));
	assert_int_equal(tp_rt_memcpy(d, h, SIZE_MAX / 2, TP_RT_MEMCPY_HOST_TO_DEVICE),
			 -EFAULT);
	/* host pointers where device memory is expected and the reverse */
	assert_int_equal(tp_rt_memcpy(h, h + 128, 16, TP_RT_MEMCPY_DEVICE_TO_HOST), -EFAULT);
	assert_true(has("not device memory"));
	assert_int_equal(tp_rt_memcpy(d, e, 16, TP_RT_MEMCPY_HOST_TO_DEVICE), -EINVAL);
	printf("H2D from device memory: %s\n", tp_last_error());
	assert_true(has("src"));
	assert_true(has("is device memory, expected host memory"));
	assert_int_equal(tp_rt_memcpy(e, d, 16, TP_RT_MEMCPY_DEVICE_TO_HOST), -EINVAL);
	/* freed memory */
	assert_int_equal(tp_rt_free(e), 0);
	assert_int_equal(tp_rt_memcpy(e, h, 16, TP_RT_MEMCPY_HOST_TO_DEVICE), -EFAULT);
	assert_true(has("points into free device memory"));

	/* nothing was written by the refused copies */
	unsigned char back[100];
	memset(h, 0, sizeof(h));
	assert_int_equal(tp_rt_memcpy(d, h, 100, TP_RT_MEMCPY_HOST_TO_DEVICE), 0);
	assert_int_equal(tp_rt_memcpy(back, d, 100, TP_RT_MEMCPY_DEVICE_TO_HOST), 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(back[i], 0);
	/* D2D with overlap moves like memmove */
	for (int i = 0; i < 100; i++)
		h[i] = (unsigned char)i;
	assert_int_equal(tp_rt_memcpy(d, h, 100, TP_RT_MEMCPY_HOST_TO_DEVICE), 0);
	assert_int_equal(tp_rt_memcpy(d + 1, d, 99, TP_RT_MEMCPY_DEVICE_TO_DEVICE), 0);
	assert_int_equal(tp_rt_memcpy(back, d, 100, TP_RT_MEMCPY_DEVICE_TO_HOST), 0);
	assert_int_equal(back[0], 0);
	for (int i = 1; i < 100; i++)
		assert_int_equal(back[i], i - 1);
	assert_int_equal(tp_rt_free(d), 0);
}

struct nested {
	atomic_int launch_rc, sync_rc, reset_rc;
};

static void nested_kernel(uint32_t b, uint32_t n, void *p)
{
	(void)b, (void)n;
	struct nested *x = p;
	atomic_store(&x->launch_rc, tp_rt_launch(nop_kernel, 1, NULL));
	atomic_store(&x->sync_rc, tp_rt_synchronize());
	atomic_store(&x->reset_rc, tp_rt_reset_device(0));
}

static void test_launch_errors(void **state)
{
	(void)state;
	assert_int_equal(tp_rt_launch(NULL, 1, NULL), -EINVAL);
	assert_true(has("kernel is NULL"));
	assert_int_equal(tp_rt_launch(nop_kernel, 0, NULL), -EINVAL);
	printf("block_dim 0: %s\n", tp_last_error());
	assert_true(has("block_dim 0 out of range 1..65535"));
	assert_int_equal(tp_rt_launch(nop_kernel, TP_RT_MAX_BLOCK_DIM + 1, NULL), -EINVAL);
	assert_true(has("block_dim 65536 out of range"));
	assert_int_equal(tp_rt_launch(nop_kernel, UINT32_MAX, NULL), -EINVAL);

	struct nested x;
	atomic_init(&x.launch_rc, 1);
	atomic_init(&x.sync_rc, 1);
	atomic_init(&x.reset_rc, 1);
	assert_int_equal(tp_rt_launch(nested_kernel, 1, &x), 0);
	assert_int_equal(atomic_load(&x.launch_rc), -EPERM);
	assert_int_equal(atomic_load(&x.sync_rc), -EPERM);
	assert_int_equal(atomic_load(&x.reset_rc), -EPERM);
	/* the device still works */
	assert_int_equal(tp_rt_launch(nop_kernel, 3, NULL), 0);
}

static void *range_thread(void *arg)
{
	int *seen = arg;
	seen[0] = tp_rt_range_pop();
	seen[1] = tp_rt_range_push("t");
	seen[2] = tp_rt_range_pop();
	return NULL;
}

/* ---- issue 6: placement, tile context, counters, ranges -------------------- */

static void test_launch_ex_placement(void **state)
{
	(void)state;
	static const struct { enum tp_rt_cores cores; uint32_t bd; int lo, hi; int type; } c[] = {
		{ TP_RT_CORES_AIC, 20, 0, 8, TP_CORE_AIC },   /* 8 cores, blocks wait */
		{ TP_RT_CORES_AIV, 40, 8, 24, TP_CORE_AIV },
		{ TP_RT_CORES_ANY, 24, 0, 24, -1 },
	};
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		uint32_t bd = c[k].bd;
		uint32_t *d_out = NULL;
		assert_int_equal(tp_rt_malloc((void **)&d_out, bd * sizeof(uint32_t)), 0);
		struct ids_args a = {
			.out = d_out,
			.core = calloc(bd, sizeof(int32_t)),
			.type = calloc(bd, sizeof(int32_t)),
			.dims = calloc(bd, sizeof(uint32_t)),
		};
		struct tp_rt_launch_attr attr = { "ids", c[k].cores };
		assert_int_equal(tp_rt_launch_ex(write_ids, bd, &a, &attr), 0);
		uint32_t h[64];
		assert_int_equal(tp_rt_memcpy(h, d_out, bd * sizeof(uint32_t),
					      TP_RT_MEMCPY_DEVICE_TO_HOST), 0);
		int used[24] = { 0 };
		for (uint32_t b = 0; b < bd; b++) {
			assert_int_equal(h[b], b);
			assert_true(a.core[b] >= c[k].lo && a.core[b] < c[k].hi);
			if (c[k].type >= 0)
				assert_int_equal(a.type[b], c[k].type);
			used[a.core[b]]++;
		}
		/* the first wave uses every core of the set */
		for (int i = c[k].lo; i < c[k].hi; i++)
			assert_true(used[i] >= 1);
		printf("cores %d: %u blocks on cores %d..%d\n", (int)c[k].cores, bd, c[k].lo,
		       c[k].hi - 1);
		assert_int_equal(tp_rt_free(d_out), 0);
		free(a.core);
		free(a.type);
		free(a.dims);
	}
	/* NULL attr is tp_rt_launch */
	assert_int_equal(tp_rt_launch_ex(nop_kernel, 30, NULL, NULL), 0);
	struct tp_rt_launch_attr bad = { NULL, (enum tp_rt_cores)3 };
	assert_int_equal(tp_rt_launch_ex(nop_kernel, 1, NULL, &bad), -EINVAL);
	assert_true(has("attr->cores 3"));
	assert_int_equal(tp_rt_launch_ex(NULL, 1, NULL, NULL), -EINVAL);
	assert_true(has("tp_rt_launch_ex: kernel is NULL"));
}

/* 16 x 16 bf16 ones times ones on the cube: every element 16. */
struct mm_args {
	uint16_t *a; /* device */
	float *c;    /* device, 16 x 16 per block */
};

static void mm_kernel(uint32_t blk, uint32_t n, void *p)
{
	(void)n;
	const struct mm_args *m = p;
	struct tp_tile ga, gc, l1, a0, b0, c0;
	/* each block its own C: blocks run at the same time */
	if (tp_tile_init(&ga, TP_MEM_GM, m->a, 512, TP_BF16, 16, 16, 16) ||
	    tp_tile_init(&gc, TP_MEM_GM, m->c + (size_t)blk * 256, 1024, TP_FP32, 16, 16, 16))
		return;
	if (tp_local_tile(&l1, TP_MEM_L1, TP_BF16, 16, 16) ||
	    tp_local_tile(&a0, TP_MEM_L0A, TP_BF16, 16, 16) ||
	    tp_local_tile(&b0, TP_MEM_L0B, TP_BF16, 16, 16) ||
	    tp_local_tile(&c0, TP_MEM_L0C, TP_FP32, 16, 16))
		return;
	tp_copy_in(&l1, &ga);
	tp_load_l0(&a0, &l1, 0);
	tp_load_l0(&b0, &l1, 0);
	tp_mmad(&c0, &a0, &b0, 0);
	tp_fixpipe(&gc, &c0);
}

/* Plain C on the device, then one tile op that fails on block 5 only. */
static void bad_op_kernel(uint32_t blk, uint32_t n, void *p)
{
	(void)n;
	uint32_t *out = p;
	out[blk] = blk + 1;
	if (blk == 5 || blk == 9)
		tp_vdup(&(struct tp_tile){ 0 }, 1.0f); /* not a tile: fails */
}

static void test_tile_context(void **state)
{
	(void)state;
	uint16_t ones[256];
	for (int i = 0; i < 256; i++)
		ones[i] = 0x3f80;
	struct mm_args m;
	assert_int_equal(tp_rt_malloc((void **)&m.a, sizeof(ones)), 0);
	assert_int_equal(tp_rt_malloc((void **)&m.c, 4 * 1024), 0);
	assert_int_equal(tp_rt_memcpy(m.a, ones, sizeof(ones), TP_RT_MEMCPY_HOST_TO_DEVICE), 0);
	struct tp_rt_launch_attr aic = { "mm_kernel", TP_RT_CORES_AIC };
	assert_int_equal(tp_rt_launch_ex(mm_kernel, 4, &m, &aic), 0);
	float c[4 * 256];
	assert_int_equal(tp_rt_memcpy(c, m.c, sizeof(c), TP_RT_MEMCPY_DEVICE_TO_HOST), 0);
	for (int i = 0; i < 4 * 256; i++)
		assert_true(c[i] == 16.0f);
	/* AIV cores have no L1 / L0: a clean error naming kernel, block, core */
	struct tp_rt_launch_attr aiv = { "mm_kernel", TP_RT_CORES_AIV };
	int rc = tp_rt_launch_ex(mm_kernel, 4, &m, &aiv);
	printf("mmad on AIV: %d: %s\n", rc, tp_last_error());
	assert_true(rc < 0);
	assert_true(has("tp_rt_launch_ex: kernel mm_kernel: block 0 of 4 on core"));
	assert_true(has("(AIV) failed: "));
	assert_true(has("L1"));
	/* the device is fine afterwards */
	assert_int_equal(tp_rt_launch_ex(mm_kernel, 1, &m, &aic), 0);
	assert_int_equal(tp_rt_free(m.a), 0);
	assert_int_equal(tp_rt_free(m.c), 0);

	/* the lowest failing block is reported; plain C blocks all ran */
	uint32_t *d = NULL, h[24];
	assert_int_equal(tp_rt_malloc((void **)&d, sizeof(h)), 0);
	rc = tp_rt_launch(bad_op_kernel, 24, d);
	assert_int_equal(rc, -EINVAL);
	printf("bad op: %s\n", tp_last_error());
	/* bad_op_kernel is static: named from the test's symbol table */
	assert_true(has("tp_rt_launch: kernel bad_op_kernel: block 5"));
	assert_true(has("block 5 of 24 on core 13 (AIV) failed: tp_vdup"));
	assert_int_equal(tp_rt_memcpy(h, d, sizeof(h), TP_RT_MEMCPY_DEVICE_TO_HOST), 0);
	for (uint32_t b = 0; b < 24; b++)
		assert_int_equal(h[b], b + 1);
	/* the next launch starts clean */
	assert_int_equal(tp_rt_launch(nop_kernel, 24, NULL), 0);
	assert_int_equal(tp_rt_free(d), 0);
}

static void test_counters(void **state)
{
	(void)state;
	struct tp_rt_tool_stats s0, s1;
	assert_int_equal(tp_rt_tool_device_stats(0, &s0), 0);
	assert_string_equal(s0.platform, "a2a3sim");
	assert_int_equal(s0.pmu_slots, 8);
	assert_int_equal(s0.sys_cnt_freq, 50000000ULL);
	assert_int_equal(s0.mem_capacity, 1024ull << 20);
	void *p = NULL;
	assert_int_equal(tp_rt_malloc(&p, 1000), 0);
	assert_int_equal(tp_rt_launch(nop_kernel, 7, NULL), 0);
	struct tp_rt_launch_attr attr = { NULL, TP_RT_CORES_AIC };
	assert_int_equal(tp_rt_launch_ex(nop_kernel, 30, NULL, &attr), 0);
	assert_int_equal(tp_rt_tool_launch(nop_kernel, 2, NULL, NULL, NULL, 0), 0);
	assert_int_equal(tp_rt_launch(nop_kernel, 0, NULL), -EINVAL); /* not run */
	assert_int_equal(tp_rt_tool_device_stats(0, &s1), 0);
	assert_int_equal(s1.launches - s0.launches, 3);
	assert_int_equal(s1.blocks - s0.blocks, 39);
	assert_int_equal(s1.mem_used - s0.mem_used, 1024); /* 64-byte rounded */
	assert_int_equal(tp_rt_free(p), 0);
	assert_int_equal(tp_rt_tool_device_stats(0, NULL), -EINVAL);
	assert_int_equal(tp_rt_tool_device_stats(2, &s1), -ENODEV); /* not open */
	assert_true(has("device 2 is not open"));
	assert_int_equal(tp_rt_tool_device_stats(-1, &s1), -ENODEV);
	assert_null(tp_rt_internal_device(2));

	/* TASKPROF_SIM_STATS=1: the exit line of a fresh process */
	char out[1024];
	int st = uh_run_self("simstats", "TASKPROF_SIM_STATS", "1", out, sizeof(out));
	printf("child: %s", out);
	assert_int_equal(st, 0);
	assert_string_equal(out, "taskprof-sim: device 2: 3 kernel launches executed "
				 "(11 blocks)\n");
	st = uh_run_self("simstats", "TASKPROF_SIM_STATS", NULL, out, sizeof(out));
	assert_int_equal(st, 0);
	assert_string_equal(out, "");
}

/* The child of test_counters: device 2 opened twice (reset between);
 * stderr goes to the pipe the parent reads. */
static int simstats_child(void)
{
	dup2(STDOUT_FILENO, STDERR_FILENO);
	if (tp_rt_set_device(2) || tp_rt_launch(nop_kernel, 5, NULL) ||
	    tp_rt_launch(nop_kernel, 5, NULL) || tp_rt_reset_device(2) ||
	    tp_rt_launch(nop_kernel, 1, NULL))
		return 1;
	exit(0); /* the line is printed by the library's exit-time destructor */
}

static void test_ranges(void **state)
{
	(void)state;
	assert_int_equal(tp_rt_range_pop(), -EINVAL);
	assert_true(has("no range is open"));
	assert_int_equal(tp_rt_range_push(NULL), -EINVAL);
	assert_int_equal(tp_rt_range_push("r1"), 0);
	assert_int_equal(tp_rt_range_push("r2"), -EINVAL);
	assert_true(has("range \"r1\" is still open"));
	/* per thread: another thread has none open */
	int seen[4];
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, range_thread, seen), 0);
	pthread_join(th, NULL);
	assert_int_equal(seen[0], -EINVAL);
	assert_int_equal(seen[1], 0);
	assert_int_equal(seen[2], 0);
	assert_int_equal(tp_rt_launch(nop_kernel, 2, NULL), 0);
	assert_int_equal(tp_rt_range_pop(), 0);
	assert_int_equal(tp_rt_range_pop(), -EINVAL);
	assert_int_equal(tp_rt_range_push("r3"), 0);
	assert_int_equal(tp_rt_range_pop(), 0);
}

/* ---- a device thread that cannot be created ------------------------------ */

struct open_call {
	int rc;
	void *ptr;
	uint64_t took_ns;
	char msg[TP_ERROR_MSG_MAX];
};

/* tp_rt_malloc() on device 0 (a new thread's current device), which opens
 * it. */
static void *malloc_thread(void *arg)
{
	struct open_call *c = arg;
	uint64_t t0 = tp_now_ns();
	c->rc = tp_rt_malloc(&c->ptr, 4096);
	c->took_ns = tp_now_ns() - t0;
	snprintf(c->msg, sizeof(c->msg), "%s", tp_last_error());
	return NULL;
}

/* The launch of the device's threads, at open, fails at its nth creation
 * (tp_device_test_fail_thread): the call that opens the device returns
 * the error at once (it used to hang: the started dispatcher waited for
 * jobs and the joins never returned) and the next call opens it. */
static void rt_thread_failure_on(const char *plat)
{
	use_platform(plat);
	const struct tp_platform *pf = tp_platform_find(plat);
	assert_non_null(pf);
	const int ncores = tp_topo_num_cores(pf->default_block_dim);
	const int launched = pf->aicpu_launch_threads;
	/* first AICore, last AICore, the dispatcher (AICPU 0), the first and
	 * the last AICPU launch thread past the affinity gate */
	const int nths[] = { 1, ncores, ncores + 1, ncores + 2, ncores + launched };
	for (size_t k = 0; k < sizeof(nths) / sizeof(nths[0]); k++) {
		static struct open_call c;
		memset(&c, 0, sizeof(c));
		tp_device_test_fail_thread(nths[k], EAGAIN);
		pthread_t th;
		assert_int_equal(pthread_create(&th, NULL, malloc_thread, &c), 0);
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 10;
		int jrc = pthread_timedjoin_np(th, NULL, &dl);
		if (jrc != 0)
			fail_msg("%s: tp_rt_malloc() did not return within 10 s with thread "
				 "creation %d failing (join: %d)", plat, nths[k], jrc);
		printf("%s, creation %d fails: rc %d in %.1f ms: %s\n", plat, nths[k], c.rc,
		       (double)c.took_ns / 1e6, c.msg);
		assert_int_equal(c.rc, -EAGAIN);
		assert_null(c.ptr);
		assert_non_null(strstr(c.msg, "rt device 0: device 0: cannot create"));
		assert_non_null(strstr(c.msg, strerror(EAGAIN)));
		assert_non_null(strstr(c.msg, "launch aborted"));
		assert_null(tp_rt_internal_device(0));
		/* the next call opens the device, which works */
		void *d = NULL;
		assert_int_equal(tp_rt_malloc(&d, 4096), 0);
		assert_non_null(tp_rt_internal_device(0));
		assert_int_equal(tp_rt_launch(nop_kernel, 30, NULL), 0);
		assert_int_equal(tp_rt_synchronize(), 0);
		assert_int_equal(tp_rt_free(d), 0);
		assert_int_equal(tp_rt_reset_device(0), 0);
	}
}

static void test_device_thread_failure(void **state)
{
	(void)state;
	rt_thread_failure_on("a2a3sim");
	rt_thread_failure_on("a5sim");
	use_platform("a2a3sim");
}

#if defined(__SANITIZE_THREAD__)
#define RT_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RT_TEST_TSAN 1
#endif
#endif
#ifndef RT_TEST_TSAN
#define RT_TEST_TSAN 0
#endif

/*
 * fork() after the device opened: the child has none of its threads. A
 * launch or synchronize there fails at once with -ENODEV and says why
 * (it used to wait forever), exit() does not touch the parent's threads
 * (it crashed), and tp_rt_reset_device() lets the child open the device
 * afresh. The parent's device is unaffected.
 */
static void test_fork_child(void **state)
{
	(void)state;
	assert_int_equal(tp_rt_launch(nop_kernel, 2, NULL), 0);
	assert_int_equal(tp_rt_synchronize(), 0);
	fflush(NULL);
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		int code = 0;
		if (tp_rt_launch(nop_kernel, 2, NULL) != -ENODEV ||
		    !strstr(tp_last_error(), "was opened by process") ||
		    !strstr(tp_last_error(), "before it forked"))
			code |= 1;
		if (tp_rt_synchronize() != -ENODEV)
			code |= 2;
		struct tp_rt_tool_stats st;
		if (tp_rt_tool_device_stats(0, &st) != -ENODEV ||
		    !strstr(tp_last_error(), "before it forked"))
			code |= 32;
		void *d = NULL;
		if (tp_rt_malloc(&d, 64) != -ENODEV)
			code |= 4;
		/* forget it, then the child has a device of its own (not under
		 * ThreadSanitizer, which ends a child of a multi-threaded
		 * process that starts threads) */
		if (tp_rt_reset_device(0) != 0)
			code |= 8;
		else if (!RT_TEST_TSAN &&
			 (tp_rt_launch(nop_kernel, 2, NULL) != 0 || tp_rt_synchronize() != 0))
			code |= 16;
		exit(code); /* runs the library's destructor */
	}
	int st = 0;
	assert_int_equal(waitpid(c, &st, 0), c);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* a child that exits without touching the device */
	fflush(NULL);
	c = fork();
	assert_true(c >= 0);
	if (c == 0)
		exit(0);
	assert_int_equal(waitpid(c, &st, 0), c);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(tp_rt_launch(nop_kernel, 2, NULL), 0);
	assert_int_equal(tp_rt_synchronize(), 0);
}

static void test_device_errors(void **state)
{
	(void)state;
	assert_int_equal(tp_rt_set_device(-1), -ENODEV);
	assert_true(has("device id -1 out of range 0..3"));
	assert_int_equal(tp_rt_set_device(TP_RT_MAX_DEVICES), -ENODEV);
	assert_int_equal(tp_rt_reset_device(TP_RT_MAX_DEVICES), -ENODEV);

	/* the environment is read when a device opens */
	setenv("TASKPROF_PLATFORM", "a7sim", 1);
	assert_int_equal(tp_rt_set_device(3), -EINVAL);
	printf("bad platform: %s\n", tp_last_error());
	assert_true(has("TASKPROF_PLATFORM='a7sim': unknown platform (expected a2a3sim, a5sim)"));
	assert_null(tp_rt_internal_device(3));
	setenv("TASKPROF_PLATFORM", "a5sim", 1); /* device 0 runs a2a3sim */
	assert_int_equal(tp_rt_set_device(3), -EBUSY);
	printf("other counter: %s\n", tp_last_error());
	assert_true(has("close them first"));
	unsetenv("TASKPROF_PLATFORM");
	static const char *bad_mem[] = { "0", "-5", "12x", "99999999" };
	for (size_t i = 0; i < sizeof(bad_mem) / sizeof(bad_mem[0]); i++) {
		setenv("TASKPROF_DEVICE_MEM_MB", bad_mem[i], 1);
		assert_int_equal(tp_rt_set_device(3), -EINVAL);
		assert_true(has("TASKPROF_DEVICE_MEM_MB"));
	}
	/* a small device runs out of memory */
	setenv("TASKPROF_DEVICE_MEM_MB", "1", 1);
	assert_int_equal(tp_rt_set_device(3), 0);
	void *a = NULL, *b = NULL;
	assert_int_equal(tp_rt_malloc(&a, 768 * 1024), 0);
	assert_int_equal(tp_rt_malloc(&b, 512 * 1024), -ENOMEM);
	printf("1 MiB device: %s\n", tp_last_error());
	assert_true(has("device 3 memory: cannot allocate 524288 bytes"));
	assert_int_equal(tp_rt_free(a), 0);
	assert_int_equal(tp_rt_malloc(&b, 512 * 1024), 0);
	assert_int_equal(tp_rt_free(b), 0);
	unsetenv("TASKPROF_DEVICE_MEM_MB");
	assert_int_equal(tp_rt_set_device(0), 0);
	assert_int_equal(tp_rt_reset_device(3), 0);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "simstats") == 0)
		return simstats_child();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_spmd_a2a3sim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spmd_a5sim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_hooks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_current_device_per_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_memory_on_its_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_launchers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_device_sleeps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malloc_free_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memcpy_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launch_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_child, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_thread_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launch_ex_placement, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tile_context, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ranges, setup, teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	for (int i = 0; i < TP_RT_MAX_DEVICES; i++)
		tp_rt_reset_device(i);
	return rc;
}
