/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of platform/regs and platform/doorbell: per-core register
 * blocks, windows and bounds, PMU MMIO offsets per platform, the sentinels
 * and token sequence of spec/runtime-model.md §2.7–§2.8 / §7.1 item 2, the
 * foreign-writer hook, and the doorbell that parked waiters sleep on.
 *
 * The devices here are opened but not launched: the test thread plays
 * every agent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "platform/device.h"
#include "platform/doorbell.h"
#include "platform/regs.h"

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void quiet_hook(int level, const char *msg, void *ud)
{
	(void)level;
	(void)msg;
	(void)ud;
}

static int setup(void **state)
{
	(void)state;
	/* Faults log at ERROR by design; keep the test output readable. */
	tp_log_set_threshold(TP_LOG_ERROR + 1);
	tp_log_set_hook(quiet_hook, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tp_log_set_hook(NULL, NULL);
	tp_log_set_threshold(TP_LOG_TIMING);
	return 0;
}

static struct tp_device *open_dev(const char *plat)
{
	struct tp_device_config cfg = { .platform = plat, .mem_bytes = 1 << 20 };
	struct tp_device *dev = tp_device_open(&cfg);
	assert_non_null(dev);
	return dev;
}

static void test_sentinels(void **state)
{
	(void)state;
	assert_int_equal(TP_REG_BLOCK_BYTES, 0x1400);
	assert_int_equal(TP_REG_DATA_MAIN_BASE, 0xA0);
	assert_int_equal(TP_REG_COND, 0x4C8);
	assert_int_equal(TP_AICPU_IDLE_TASK_ID, 0x7FFFFFFD);
	assert_int_equal(TP_AICORE_EXIT_SIGNAL, 0x7FFFFFF0);
	assert_int_equal(TP_AICORE_IDLE_TASK_ID, 0x7FFFFFFF);
	assert_int_equal(TP_COND_ACK(5), 5);
	assert_int_equal(TP_COND_FIN(5), 0x80000005u);
	assert_int_equal(TP_COND_FIN(0x7FFFFFEF), 0xFFFFFFEFu);
	assert_int_equal(TP_AICORE_IDLE_VALUE, 0xFFFFFFFFu);
	assert_int_equal(TP_AICORE_EXITED_VALUE, 0xFFFFFFFEu);
	assert_int_equal(TP_AICORE_CTRL_PMU_GATE, 0x1);
}

/* spec §2.7: token = ++seq & 0x7FFFFFFF from 1; values >= EXIT_SIGNAL
 * skipped by an even amount so token & 1 keeps alternating. */
static void test_token_sequence(void **state)
{
	(void)state;
	uint32_t seq = 0;
	for (uint32_t want = 1; want <= 5; want++)
		assert_int_equal(tp_reg_token_next(&seq), want);

	seq = 0x7FFFFFED;
	uint32_t t1 = tp_reg_token_next(&seq);
	uint32_t t2 = tp_reg_token_next(&seq);
	uint32_t t3 = tp_reg_token_next(&seq);
	printf("tokens around the sentinels: %#x %#x %#x\n", t1, t2, t3);
	assert_int_equal(t1, 0x7FFFFFEE);
	assert_int_equal(t2, 0x7FFFFFEF);
	assert_true(t3 < TP_AICORE_EXIT_SIGNAL && t3 != 0);
	assert_int_equal(t3 & 1, (t2 & 1) ^ 1);

	/* a long run never yields a sentinel or 0, and parity alternates */
	seq = 0xFFFFFF00u;
	uint32_t prev = tp_reg_token_next(&seq);
	for (int i = 0; i < 100000; i++) {
		uint32_t t = tp_reg_token_next(&seq);
		assert_true(t != 0 && t < TP_AICORE_EXIT_SIGNAL);
		assert_int_equal(t & 1, (prev & 1) ^ 1);
		prev = t;
	}
}

static void test_read_write_windows(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a2a3sim");
	int n = tp_device_num_cores(dev);
	assert_int_equal(n, 24);
	/* zero after open */
	assert_int_equal(tp_reg_read(dev, 0, TP_REG_COND), 0);
	assert_int_equal(tp_reg_read(dev, 23, TP_REG_DATA_MAIN_BASE), 0);
	for (int c = 0; c < n; c++) {
		tp_reg_write(dev, c, TP_REG_DATA_MAIN_BASE, 100 + c);
		tp_reg_write(dev, c, TP_REG_DATA_MAIN_BASE_HI, 200 + c);
		tp_reg_write(dev, c, TP_REG_COND, TP_COND_FIN(300 + c));
		tp_reg_write(dev, c, TP_REG_AICORE_CTRL, c & 1);
		tp_reg_write(dev, c, TP_REG_BLOCK_BYTES - 4, 0xC0DE0000u + c);
	}
	for (int c = 0; c < n; c++) {
		assert_int_equal(tp_reg_read(dev, c, TP_REG_DATA_MAIN_BASE), 100 + c);
		assert_int_equal(tp_reg_read(dev, c, TP_REG_DATA_MAIN_BASE_HI), 200 + c);
		assert_int_equal(tp_reg_read(dev, c, TP_REG_COND), TP_COND_FIN(300 + c));
		assert_int_equal(tp_reg_read(dev, c, TP_REG_AICORE_CTRL), c & 1);
		assert_int_equal(tp_reg_read(dev, c, TP_REG_BLOCK_BYTES - 4), 0xC0DE0000u + c);
	}
	/* PMU window: every register of the a2a3 map, per core */
	const struct tp_pmu_regmap *pm = &tp_device_platform(dev)->pmu;
	for (int c = 0; c < n; c++) {
		for (int s = 0; s < 8; s++) {
			tp_reg_write(dev, c, TP_REG_PMU(pm->cnt[s]), (uint32_t)(c * 100 + s));
			tp_reg_write(dev, c, TP_REG_PMU(pm->cnt_idx[s]), (uint32_t)(0x40 + s));
		}
		tp_reg_write(dev, c, TP_REG_PMU(pm->ctrl0), pm->ctrl0_enable_val);
	}
	for (int c = 0; c < n; c++) {
		for (int s = 0; s < 8; s++) {
			assert_int_equal(tp_reg_read(dev, c, TP_REG_PMU(pm->cnt[s])), c * 100 + s);
			assert_int_equal(tp_reg_read(dev, c, TP_REG_PMU(pm->cnt_idx[s])), 0x40 + s);
		}
		assert_int_equal(tp_reg_read(dev, c, TP_REG_PMU(pm->ctrl0)), 0x7);
	}
	assert_int_equal(tp_reg_fault_count(dev), 0);
	tp_device_close(dev);
}

static void test_a5_pmu_window(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a5sim");
	const struct tp_pmu_regmap *pm = &tp_device_platform(dev)->pmu;
	tp_reg_write(dev, 3, TP_REG_PMU(pm->ctrl0), 0x7);
	tp_reg_write(dev, 3, TP_REG_PMU(pm->ctrl1), 0x1);
	tp_reg_write(dev, 3, TP_REG_PMU(pm->cnt[9]), 99);
	tp_reg_write(dev, 3, TP_REG_PMU(pm->cnt_idx[9]), 0x77);
	tp_reg_write(dev, 3, TP_REG_PMU(pm->stop_cyc1), 0xFFFFFFFF);
	assert_int_equal(tp_reg_read(dev, 3, TP_REG_PMU(0x4200)), 0x7);
	assert_int_equal(tp_reg_read(dev, 3, TP_REG_PMU(0x2400)), 0x1);
	assert_int_equal(tp_reg_read(dev, 3, TP_REG_PMU(0x4254)), 99);
	assert_int_equal(tp_reg_read(dev, 3, TP_REG_PMU(0x2524)), 0x77);
	assert_int_equal(tp_reg_read(dev, 3, TP_REG_PMU(0x42AC)), 0xFFFFFFFF);
	/* other cores untouched */
	assert_int_equal(tp_reg_read(dev, 2, TP_REG_PMU(0x4200)), 0);
	assert_int_equal(tp_reg_read(dev, 4, TP_REG_PMU(0x4254)), 0);
	assert_int_equal(tp_reg_fault_count(dev), 0);
	tp_device_close(dev);

	/* the a5 offsets lie outside the a2a3 PMU block */
	dev = open_dev("a2a3sim");
	tp_reg_write(dev, 0, TP_REG_PMU(0x4200), 1);
	assert_int_equal(tp_reg_read(dev, 0, TP_REG_PMU(0x4200)), TP_REG_FAULT_VALUE);
	assert_int_equal(tp_reg_fault_count(dev), 2);
	tp_device_close(dev);
}

static void test_bounds_reported(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a2a3sim");
	static const struct {
		int core;
		uint32_t off;
		const char *why;
	} bad[] = {
		{ -1, TP_REG_COND, "no such core" },
		{ 24, TP_REG_COND, "no such core" },
		{ 0, TP_REG_COND + 1, "not 4-byte aligned" },
		{ 0, TP_REG_BLOCK_BYTES, "outside the register windows" },
		{ 0, TP_REG_SPR(TP_REG_SPR_BYTES), "outside the register windows" },
		{ 0, TP_REG_PMU(0x1400), "outside the register windows" },
		{ 0, 0x00300000u, "outside the register windows" },
		{ 0, 0xFFFFFFFCu, "outside the register windows" },
	};
	uint64_t faults = 0;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tp_clear_error();
		assert_int_equal(tp_reg_read(dev, bad[i].core, bad[i].off), TP_REG_FAULT_VALUE);
		printf("read core %d off %#x: %s\n", bad[i].core, bad[i].off, tp_last_error());
		assert_non_null(strstr(tp_last_error(), bad[i].why));
		tp_clear_error();
		tp_reg_write(dev, bad[i].core, bad[i].off, 1);
		assert_non_null(strstr(tp_last_error(), bad[i].why));
		faults += 2;
		assert_int_equal(tp_reg_fault_count(dev), faults);
	}
	/* nothing landed anywhere */
	for (int c = 0; c < 24; c++)
		assert_int_equal(tp_reg_read(dev, c, TP_REG_COND), 0);
	assert_null(tp_reg_doorbell(dev, 24, TP_REG_COND));
	assert_null(tp_reg_doorbell(dev, 0, TP_REG_AICORE_CTRL));
	assert_non_null(tp_reg_doorbell(dev, 0, TP_REG_DATA_MAIN_BASE));
	assert_ptr_equal(tp_reg_doorbell(dev, 0, TP_REG_DATA_MAIN_BASE),
			 tp_reg_doorbell(dev, 0, TP_REG_DATA_MAIN_BASE_HI));
	tp_device_close(dev);
}

/* ---- foreign writer ----------------------------------------------------------- */

struct clobber {
	atomic_int calls;
	atomic_int reads;
	uint32_t pmu_ctrl0;
};

/* Another agent that turns the PMU off right after anyone enables it, and
 * FINs token 7 on core 2 just before anyone reads core 2's COND. */
static void clobber_hook(void *ud, struct tp_device *dev, int core, uint32_t off,
			 enum tp_reg_access access, uint32_t val)
{
	struct clobber *c = ud;
	atomic_fetch_add(&c->calls, 1);
	if (access == TP_REG_ACCESS_WRITE && off == TP_REG_PMU(c->pmu_ctrl0) && val == 0x7)
		tp_reg_write_foreign(dev, core, off, 0);
	if (access == TP_REG_ACCESS_READ && core == 2 && off == TP_REG_COND) {
		atomic_fetch_add(&c->reads, 1);
		tp_reg_write(dev, core, off, TP_COND_FIN(7)); /* no recursion */
		(void)tp_reg_read(dev, core, off);
	}
}

static void test_foreign_writer(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a2a3sim");
	struct clobber c = { .pmu_ctrl0 = tp_device_platform(dev)->pmu.ctrl0 };
	tp_reg_set_foreign_writer(dev, clobber_hook, &c);

	tp_reg_write(dev, 5, TP_REG_PMU(c.pmu_ctrl0), 0x7);
	assert_int_equal(tp_reg_read(dev, 5, TP_REG_PMU(c.pmu_ctrl0)), 0);
	tp_reg_write(dev, 5, TP_REG_PMU(c.pmu_ctrl0), 0x3);
	assert_int_equal(tp_reg_read(dev, 5, TP_REG_PMU(c.pmu_ctrl0)), 0x3);
	assert_int_equal(tp_reg_read(dev, 2, TP_REG_COND), TP_COND_FIN(7));
	assert_int_equal(tp_reg_read(dev, 3, TP_REG_COND), 0);
	assert_int_equal(atomic_load(&c.reads), 1);
	/* 2 writes + 4 reads of the test thread; accesses inside the hook
	 * did not call it again */
	assert_int_equal(atomic_load(&c.calls), 6);
	/* a foreign write never calls the hook */
	tp_reg_write_foreign(dev, 5, TP_REG_PMU(c.pmu_ctrl0), 0x7);
	assert_int_equal(atomic_load(&c.calls), 6);

	tp_reg_set_foreign_writer(dev, NULL, NULL);
	tp_reg_write(dev, 5, TP_REG_PMU(c.pmu_ctrl0), 0x7);
	assert_int_equal(tp_reg_read(dev, 5, TP_REG_PMU(c.pmu_ctrl0)), 0x7);
	assert_int_equal(atomic_load(&c.calls), 6);
	tp_device_close(dev);
}

struct slow_hook {
	atomic_int entered;
	atomic_int left;
};

static void slow_hook_fn(void *ud, struct tp_device *dev, int core, uint32_t off,
			 enum tp_reg_access access, uint32_t val)
{
	(void)dev, (void)core, (void)off, (void)access, (void)val;
	struct slow_hook *h = ud;
	atomic_store(&h->entered, 1);
	sleep_ms(80);
	atomic_store(&h->left, 1);
}

static void *read_once(void *arg)
{
	(void)tp_reg_read(arg, 0, TP_REG_COND);
	return NULL;
}

/* Removing the hook waits for a call in flight on another thread. */
static void test_foreign_writer_removal_waits(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a2a3sim");
	struct slow_hook h = { 0 };
	tp_reg_set_foreign_writer(dev, slow_hook_fn, &h);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, read_once, dev), 0);
	while (!atomic_load(&h.entered))
		sleep_ms(1);
	uint64_t t0 = tp_now_ns();
	tp_reg_set_foreign_writer(dev, NULL, NULL);
	uint64_t waited = tp_now_ns() - t0;
	assert_int_equal(atomic_load(&h.left), 1);
	printf("removal waited %.1f ms for the hook in flight\n", (double)waited / 1e6);
	pthread_join(th, NULL);
	tp_device_close(dev);
}

/* ---- doorbells and waits -------------------------------------------------------- */

struct waiter {
	struct tp_device *dev;
	int core;
	uint32_t off, want;
	uint64_t timeout_ns;
	int rc;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	w->rc = tp_reg_wait(w->dev, w->core, w->off, 0xFFFFFFFFu, w->want, w->timeout_ns);
	return NULL;
}

static void test_reg_wait(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a2a3sim");
	/* doorbell register: the waiter parks, a write wakes it */
	struct waiter w = { dev, 4, TP_REG_COND, TP_COND_FIN(9), TP_DOORBELL_FOREVER, 1 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, wait_thread, &w), 0);
	sleep_ms(20);
	tp_reg_write(dev, 4, TP_REG_COND, TP_COND_ACK(9));
	sleep_ms(5);
	tp_reg_write(dev, 4, TP_REG_COND, TP_COND_FIN(9));
	pthread_join(th, NULL);
	assert_int_equal(w.rc, 0);

	/* polled register (no doorbell) */
	struct waiter p = { dev, 1, TP_REG_AICORE_CTRL, 1, TP_DOORBELL_FOREVER, 1 };
	assert_int_equal(pthread_create(&th, NULL, wait_thread, &p), 0);
	sleep_ms(10);
	tp_reg_write(dev, 1, TP_REG_AICORE_CTRL, 1);
	pthread_join(th, NULL);
	assert_int_equal(p.rc, 0);

	/* timeouts, both kinds */
	uint64_t t0 = tp_now_ns();
	assert_int_equal(tp_reg_wait(dev, 0, TP_REG_COND, 0xFFFFFFFFu, 1, 20000000), -ETIMEDOUT);
	assert_int_equal(tp_reg_wait(dev, 0, TP_REG_AICORE_CTRL, 1, 1, 20000000), -ETIMEDOUT);
	uint64_t took = tp_now_ns() - t0;
	assert_true(took >= 40000000);
	assert_true(took < 2000000000);
	/* already true: at once */
	assert_int_equal(tp_reg_wait(dev, 4, TP_REG_COND, TP_COND_FIN_BIT, TP_COND_FIN_BIT, 0), 0);
	tp_device_close(dev);
}

static void test_cond_listener(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a2a3sim");
	struct tp_doorbell db;
	tp_doorbell_init(&db);
	tp_reg_set_cond_listener(dev, 6, &db);
	/* A ring bumps seq only for an announced waiter: pose as one. */
	atomic_store(&db.waiters, 1);
	uint32_t s0 = atomic_load(&db.seq);
	tp_reg_write(dev, 6, TP_REG_COND, 1);
	tp_reg_write(dev, 7, TP_REG_COND, 1);                 /* other core */
	tp_reg_write(dev, 6, TP_REG_DATA_MAIN_BASE, 1);       /* other register */
	assert_int_equal(atomic_load(&db.seq), s0 + 1);
	tp_reg_set_cond_listener(dev, 6, NULL);
	tp_reg_write(dev, 6, TP_REG_COND, 2);
	assert_int_equal(atomic_load(&db.seq), s0 + 1);
	tp_device_close(dev);
}

/* A ring with nobody announced writes nothing; with a sleeper it bumps
 * seq and wakes it (here through the fenced variant). */
struct parked {
	struct tp_doorbell db;
	_Atomic bool go;
	_Atomic int rc;
	_Atomic pid_t tid;
};

/* Scheduler state letter of thread @tid of this process ('S': asleep),
 * or 0 when it cannot be read. */
static char thread_state(pid_t tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *rp = strrchr(buf, ')'); /* the name may hold spaces */
	return rp && rp[1] == ' ' ? rp[2] : 0;
}

static bool go_set(void *arg)
{
	struct parked *pk = arg;
	return atomic_load_explicit(&pk->go, memory_order_acquire);
}

static void *parker(void *arg)
{
	struct parked *pk = arg;
	atomic_store(&pk->tid, gettid());
	atomic_store(&pk->rc, tp_doorbell_wait(&pk->db, go_set, pk, 60000000000ull));
	return NULL;
}

static void test_doorbell_fast_path_and_sleeper(void **state)
{
	(void)state;
	struct parked pk;
	tp_doorbell_init(&pk.db);
	atomic_init(&pk.go, false);
	atomic_init(&pk.rc, 1);
	atomic_init(&pk.tid, 0);
	tp_doorbell_ring(&pk.db);
	atomic_thread_fence(memory_order_seq_cst);
	tp_doorbell_ring_fenced(&pk.db);
	assert_int_equal(atomic_load(&pk.db.seq), 0); /* nobody announced */

	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, parker, &pk), 0);
	/* Past its spins and yields, the waiter announces itself. */
	uint64_t t0 = tp_now_ns();
	while (atomic_load(&pk.db.waiters) == 0 && tp_now_ns() - t0 < 5000000000ull)
		usleep(1000);
	assert_int_equal(atomic_load(&pk.db.waiters), 1);
	/* Asleep in futex_wait (state S), not just announced. */
	while (thread_state(atomic_load(&pk.tid)) != 'S' && tp_now_ns() - t0 < 5000000000ull)
		usleep(1000);
	assert_int_equal(thread_state(atomic_load(&pk.tid)), 'S');
	assert_int_equal(atomic_load(&pk.rc), 1);
	atomic_store_explicit(&pk.go, true, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	tp_doorbell_ring_fenced(&pk.db);
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&pk.rc), 0);
	assert_true(atomic_load(&pk.db.seq) >= 1);
	assert_int_equal(atomic_load(&pk.db.waiters), 0);
}

/* Ping-pong through two doorbells: a lost wake-up would hang this. */
#define PINGS 3000

struct pingpong {
	struct tp_doorbell a, b;
	_Atomic uint32_t ball;
};

struct want_ball {
	struct pingpong *pp;
	uint32_t v;
};

static bool ball_is(void *arg)
{
	struct want_ball *w = arg;
	return atomic_load_explicit(&w->pp->ball, memory_order_acquire) == w->v;
}

static void *ponger(void *arg)
{
	struct pingpong *pp = arg;
	for (uint32_t i = 1; i <= PINGS; i += 2) {
		struct want_ball w = { pp, i };
		tp_doorbell_wait(&pp->a, ball_is, &w, TP_DOORBELL_FOREVER);
		atomic_store_explicit(&pp->ball, i + 1, memory_order_release);
		tp_doorbell_ring(&pp->b);
	}
	return NULL;
}

static void test_doorbell_pingpong(void **state)
{
	(void)state;
	struct pingpong pp;
	tp_doorbell_init(&pp.a);
	tp_doorbell_init(&pp.b);
	atomic_init(&pp.ball, 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, ponger, &pp), 0);
	uint64_t t0 = tp_now_ns();
	for (uint32_t i = 0; i < PINGS; i += 2) {
		atomic_store_explicit(&pp.ball, i + 1, memory_order_release);
		tp_doorbell_ring(&pp.a);
		struct want_ball w = { &pp, i + 2 };
		assert_int_equal(tp_doorbell_wait(&pp.b, ball_is, &w, 5000000000ull), 0);
	}
	pthread_join(th, NULL);
	printf("%d hand-offs through doorbells in %.1f ms\n", PINGS,
	       (double)(tp_now_ns() - t0) / 1e6);
	assert_int_equal(atomic_load(&pp.a.waiters), 0);
	assert_int_equal(atomic_load(&pp.b.waiters), 0);

	/* timeout with nobody ringing */
	struct want_ball never = { &pp, 12345 };
	assert_int_equal(tp_doorbell_wait(&pp.a, ball_is, &never, 1000000), -ETIMEDOUT);
	assert_int_equal(atomic_load(&pp.a.waiters), 0);
}

static void test_reset_dispatch_keeps_pmu(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a2a3sim");
	tp_reg_write(dev, 0, TP_REG_DATA_MAIN_BASE, 5);
	tp_reg_write(dev, 0, TP_REG_COND, 5);
	tp_reg_write(dev, 0, TP_REG_PMU(0x200), 7);
	tp_reg_write(dev, 0, TP_REG_AICORE_CTRL, 1);
	tp_regs_reset_dispatch(tp_device_regs(dev));
	assert_int_equal(tp_reg_read(dev, 0, TP_REG_DATA_MAIN_BASE), 0);
	assert_int_equal(tp_reg_read(dev, 0, TP_REG_COND), 0);
	assert_int_equal(tp_reg_read(dev, 0, TP_REG_PMU(0x200)), 7);
	assert_int_equal(tp_reg_read(dev, 0, TP_REG_AICORE_CTRL), 1);
	tp_device_close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sentinels),
		cmocka_unit_test(test_token_sequence),
		cmocka_unit_test_setup_teardown(test_read_write_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a5_pmu_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_writer_removal_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reg_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cond_listener, setup, teardown),
		cmocka_unit_test(test_doorbell_pingpong),
		cmocka_unit_test(test_doorbell_fast_path_and_sleeper),
		cmocka_unit_test_setup_teardown(test_reset_dispatch_keeps_pmu, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
