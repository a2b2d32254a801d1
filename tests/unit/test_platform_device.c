/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of platform/device: open (platform, topology, system counter),
 * launch, the AICPU/AICore register handshake of spec/runtime-model.md
 * §2.7–§2.8 and §2.12, orderly and bounded teardown, kernel hooks and
 * kernel_ctx, idle threads that sleep, a launch that cannot create all its
 * threads (all or nothing, no hang), and the device arena as the
 * profiling transport's memory (tp_dev_memops) on both platforms.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/watchdog.h"
#include "platform/dev_memory.h"
#include "platform/device.h"
#include "platform/regs.h"
#include "transport/dev_engine.h"
#include "transport/profiler.h"
#include "unit_helpers.h"

#define MAXC 108
#define S_NS 1000000000ull

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static atomic_int error_lines;

static void count_errors(int level, const char *msg, void *ud)
{
	(void)msg;
	(void)ud;
	if (level >= TP_LOG_ERROR)
		atomic_fetch_add(&error_lines, 1);
}

static int setup(void **state)
{
	(void)state;
	atomic_store(&error_lines, 0);
	tp_log_set_threshold(TP_LOG_TIMING);
	tp_log_set_hook(count_errors, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tp_log_set_hook(NULL, NULL);
	return 0;
}

static struct tp_device *open_dev(const char *plat, int block_dim, int aicpu_threads)
{
	struct tp_device_config cfg = {
		.platform = plat,
		.block_dim = block_dim,
		.aicpu_threads = aicpu_threads,
		.mem_bytes = 16u << 20,
	};
	struct tp_device *dev = tp_device_open(&cfg);
	if (!dev)
		printf("open: %s\n", tp_last_error());
	assert_non_null(dev);
	return dev;
}

/* ---- open ------------------------------------------------------------------- */

static void test_open_defaults_and_topology(void **state)
{
	(void)state;
	/* The first test of this process: nothing has read the clock yet.
	 * Opening a device calibrates it, so that no launch pays for that. */
	assert_false(tp_sys_cnt_calibrated());
	struct tp_device *dev = tp_device_open(NULL);
	assert_non_null(dev);
	assert_true(tp_sys_cnt_calibrated());
	assert_string_equal(tp_device_platform(dev)->name, "a2a3sim");
	assert_int_equal(tp_device_id(dev), 0);
	assert_int_equal(tp_device_block_dim(dev), 8);
	assert_int_equal(tp_device_num_cores(dev), 24);
	assert_int_equal(tp_device_aicpu_threads(dev), 4);
	assert_int_equal(tp_device_aicpu_launched(dev), 6);
	assert_false(tp_device_running(dev));
	assert_int_equal(tp_sys_cnt_freq(), 50000000ULL);
	struct tp_dev_mem_stats st;
	tp_dev_mem_stats(tp_device_mem(dev), &st);
	assert_int_equal(st.reserved_bytes, TP_DEV_MEM_DEFAULT_BYTES);
	for (int c = 0; c < 24; c++) {
		struct tp_aicore *core = tp_device_core(dev, c);
		assert_non_null(core);
		assert_int_equal(tp_aicore_id(core), c);
		assert_ptr_equal(tp_aicore_device(core), dev);
		assert_int_equal(tp_aicore_type(core), c < 8 ? TP_CORE_AIC : TP_CORE_AIV);
		assert_int_equal(tp_aicore_cluster(core), c < 8 ? c : (c - 8) / 2);
		assert_int_equal(tp_aicore_slot(core),
				 c < 8 ? TP_SLOT_AIC : (c % 2 ? TP_SLOT_AIV1 : TP_SLOT_AIV0));
		assert_null(tp_aicore_kernel_ctx(core));
	}
	assert_null(tp_device_core(dev, 24));
	assert_null(tp_device_core(dev, -1));
	assert_null(tp_aicore_current());
	assert_null(tp_aicpu_current());
	tp_device_close(dev);
	tp_device_close(NULL);

	dev = open_dev("a5sim", 36, 7);
	assert_int_equal(tp_device_num_cores(dev), 108);
	assert_int_equal(tp_device_aicpu_launched(dev), 14);
	assert_int_equal(tp_sys_cnt_freq(), 1000000000ULL);
	assert_int_equal(tp_aicore_cluster(tp_device_core(dev, 107)), 35);
	tp_device_close(dev);
}

static void test_open_errors(void **state)
{
	(void)state;
	static const struct {
		struct tp_device_config cfg;
		int rc;
		const char *msg;
	} bad[] = {
		{ { .platform = "a6sim" }, -EINVAL, "unknown platform 'a6sim'" },
		{ { .block_dim = 25 }, -EINVAL, "block_dim 25 out of range 1..24" },
		{ { .platform = "a5sim", .block_dim = 37 }, -EINVAL, "block_dim 37 out of range 1..36" },
		{ { .block_dim = -1 }, -EINVAL, "block_dim -1 out of range" },
		{ { .aicpu_threads = 5 }, -EINVAL, "aicpu_threads 5 out of range 1..4" },
		{ { .platform = "a5sim", .aicpu_threads = 8 }, -EINVAL, "aicpu_threads 8 out of range 1..7" },
		{ { .device_id = -2 }, -EINVAL, "device id -2" },
		{ { .mem_bytes = 1000 }, -EINVAL, "below the minimum" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tp_device *dev = (struct tp_device *)(uintptr_t)1;
		tp_clear_error();
		assert_int_equal(tp_device_create(&bad[i].cfg, &dev), bad[i].rc);
		assert_null(dev);
		printf("open error: %s\n", tp_last_error());
		assert_non_null(strstr(tp_last_error(), bad[i].msg));
		assert_null(tp_device_open(&bad[i].cfg));
	}
	/* the system counter is process-wide: no a5sim while an a2a3sim is open */
	struct tp_device *a = open_dev("a2a3sim", 1, 1);
	struct tp_device *b = open_dev("a2a3sim", 2, 1);
	struct tp_device *c = NULL;
	struct tp_device_config c5 = { .platform = "a5sim", .mem_bytes = 1 << 20 };
	assert_int_equal(tp_device_create(&c5, &c), -EBUSY);
	printf("open error: %s\n", tp_last_error());
	assert_non_null(strstr(tp_last_error(), "close them first"));
	assert_int_equal(tp_sys_cnt_freq(), 50000000ULL);
	tp_device_close(a);
	assert_int_equal(tp_device_create(&c5, &c), -EBUSY);
	tp_device_close(b);
	assert_int_equal(tp_device_create(&c5, &c), 0);
	assert_int_equal(tp_sys_cnt_freq(), 1000000000ULL);
	tp_device_close(c);
}

/* ---- launch: the register protocol --------------------------------------- */

#define TOKENS 40

struct proto {
	struct tp_device *dev;
	int ctx[MAXC];
	atomic_int aicpu_calls;
	atomic_int aicpu_mask;
	atomic_int begin[MAXC], end[MAXC];
	atomic_int bad_thread, bad_ctx, proto_errors;
	atomic_int fin_seen;
};

static void on_begin(struct tp_aicore *core, void *ud)
{
	struct proto *p = ud;
	int id = tp_aicore_id(core);
	if (tp_aicore_current() != core)
		atomic_fetch_add(&p->bad_thread, 1);
	if (tp_aicore_kernel_ctx(core) != &p->ctx[id])
		atomic_fetch_add(&p->bad_ctx, 1);
	/* ACK precedes the kernel: COND holds the running token */
	uint32_t cond = tp_reg_read(p->dev, id, TP_REG_COND);
	uint32_t tok = tp_reg_read(p->dev, id, TP_REG_DATA_MAIN_BASE);
	if (cond != TP_COND_ACK(tok))
		atomic_fetch_add(&p->proto_errors, 1);
	atomic_fetch_add(&p->begin[id], 1);
}

static void on_end(struct tp_aicore *core, void *ud)
{
	struct proto *p = ud;
	atomic_fetch_add(&p->end[tp_aicore_id(core)], 1);
}

/* Each AICPU thread t owns clusters c with c % threads == t (spec §1.2),
 * opens its cores, sends TOKENS tokens to each, one at a time, waiting for
 * every FIN, and closes them. */
static void proto_aicpu(struct tp_aicpu *cpu, void *arg)
{
	struct proto *p = arg;
	struct tp_device *dev = tp_aicpu_device(cpu);
	int t = tp_aicpu_index(cpu), nt = tp_aicpu_count(cpu);
	int bd = tp_device_block_dim(dev);
	if (tp_aicpu_current() != cpu)
		atomic_fetch_add(&p->bad_thread, 1);
	atomic_fetch_add(&p->aicpu_calls, 1);
	atomic_fetch_or(&p->aicpu_mask, 1 << t);
	int cores[MAXC], n = 0;
	for (int c = 0; c < bd; c++) {
		if (tp_topo_cluster_owner(c, nt) != t)
			continue;
		for (int s = 0; s < 3; s++)
			cores[n++] = tp_topo_core_id(bd, c, (enum tp_subslot)s);
	}
	if (tp_aicpu_open_cores(dev, cores, n, 5 * S_NS) != 0) {
		atomic_fetch_add(&p->proto_errors, 1);
		return;
	}
	for (int i = 0; i < n; i++)
		if (tp_reg_read(dev, cores[i], TP_REG_COND) != TP_AICORE_IDLE_VALUE)
			atomic_fetch_add(&p->proto_errors, 1);
	for (int i = 0; i < n; i++) {
		uint32_t seq = 0;
		for (int k = 0; k < TOKENS; k++) {
			uint32_t tok = tp_reg_token_next(&seq);
			tp_aicpu_dispatch(dev, cores[i], tok);
			if (tp_reg_wait(dev, cores[i], TP_REG_COND, 0xFFFFFFFFu, TP_COND_FIN(tok),
					5 * S_NS) != 0)
				atomic_fetch_add(&p->proto_errors, 1);
			else
				atomic_fetch_add(&p->fin_seen, 1);
		}
	}
	if (tp_aicpu_close_cores(dev, cores, n, 5 * S_NS) != 0)
		atomic_fetch_add(&p->proto_errors, 1);
}

static void run_protocol(const char *plat, int bd, int nt)
{
	struct tp_device *dev = open_dev(plat, bd, nt);
	int ncores = tp_device_num_cores(dev);
	static struct proto p;
	memset(&p, 0, sizeof(p));
	p.dev = dev;
	for (int c = 0; c < ncores; c++)
		tp_aicore_set_kernel_ctx(tp_device_core(dev, c), &p.ctx[c]);
	struct tp_launch_config lc = {
		.aicpu_fn = proto_aicpu,
		.arg = &p,
		.hooks = { .on_kernel_begin = on_begin, .on_kernel_end = on_end, .ud = &p },
	};
	uint64_t t0 = tp_now_ns();
	assert_int_equal(tp_device_launch_ex(dev, &lc), 0);
	assert_true(tp_device_running(dev));
	assert_int_equal(tp_device_launch_ex(dev, &lc), -EBUSY);
	assert_int_equal(tp_device_wait(dev), 0);
	uint64_t took = tp_now_ns() - t0;
	assert_false(tp_device_running(dev));

	assert_int_equal(atomic_load(&p.aicpu_calls), nt);
	assert_int_equal(atomic_load(&p.aicpu_mask), (1 << nt) - 1);
	assert_int_equal(atomic_load(&p.bad_thread), 0);
	assert_int_equal(atomic_load(&p.bad_ctx), 0);
	assert_int_equal(atomic_load(&p.proto_errors), 0);
	assert_int_equal(atomic_load(&p.fin_seen), ncores * TOKENS);
	for (int c = 0; c < ncores; c++) {
		assert_int_equal(atomic_load(&p.begin[c]), TOKENS);
		assert_int_equal(atomic_load(&p.end[c]), TOKENS);
		assert_int_equal(tp_reg_read(dev, c, TP_REG_COND), TP_AICORE_EXITED_VALUE);
		assert_int_equal(tp_reg_read(dev, c, TP_REG_DATA_MAIN_BASE), TP_AICORE_EXIT_SIGNAL);
	}
	printf("%s: %d AICPU threads (%d launched), %d cores x %d tokens in %.1f ms\n", plat, nt,
	       tp_device_aicpu_launched(dev), ncores, TOKENS, (double)took / 1e6);
	tp_device_close(dev);
}

static void test_protocol_a2a3sim(void **state)
{
	(void)state;
	run_protocol("a2a3sim", 8, 4);
}

static void test_protocol_a5sim(void **state)
{
	(void)state;
	run_protocol("a5sim", 4, 7);
}

static void test_core_list_checked(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a2a3sim", 1, 1);
	int bad[] = { 0, 3 };
	assert_int_equal(tp_aicpu_open_cores(dev, bad, 2, S_NS), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "core id 3 out of range 0..2"));
	assert_int_equal(tp_aicpu_close_cores(dev, bad, 2, S_NS), -EINVAL);
	/* nothing was written */
	assert_int_equal(tp_reg_read(dev, 0, TP_REG_DATA_MAIN_BASE), 0);
	assert_int_equal(tp_device_launch_ex(dev, NULL), -EINVAL);
	assert_int_equal(tp_device_wait(dev), -EINVAL);
	tp_device_close(dev);
}

/* ---- launch: a thread that cannot be created ------------------------------ */

/* What the AICPU and AICore bodies of a launch did. */
struct partial {
	atomic_int aicpu_bodies, aicore_bodies;
	atomic_int checked_in; /* AICPU threads that reached the rendezvous */
	atomic_int errors;
};

/* An AICPU program with the shape of the runtime's: open its own cores,
 * wait with no time limit for every peer AICPU thread (the schedulers
 * waited so for an orchestrator that was never created, the rt
 * dispatcher for a job), close its cores. A launch that let it run
 * without all its peers would never return from its joins. */
static void partial_aicpu(struct tp_aicpu *cpu, void *arg)
{
	struct partial *p = arg;
	struct tp_device *dev = tp_aicpu_device(cpu);
	int t = tp_aicpu_index(cpu), nt = tp_aicpu_count(cpu);
	int bd = tp_device_block_dim(dev);
	atomic_fetch_add(&p->aicpu_bodies, 1);
	int cores[MAXC], n = 0;
	for (int c = 0; c < bd; c++) {
		if (tp_topo_cluster_owner(c, nt) != t)
			continue;
		for (int s = 0; s < 3; s++)
			cores[n++] = tp_topo_core_id(bd, c, (enum tp_subslot)s);
	}
	if (tp_aicpu_open_cores(dev, cores, n, 5 * S_NS) != 0)
		atomic_fetch_add(&p->errors, 1);
	atomic_fetch_add(&p->checked_in, 1);
	while (atomic_load(&p->checked_in) < nt)
		sleep_ms(1);
	if (tp_aicpu_close_cores(dev, cores, n, 5 * S_NS) != 0)
		atomic_fetch_add(&p->errors, 1);
}

static void partial_aicore(struct tp_aicore *core, void *arg)
{
	struct partial *p = arg;
	atomic_fetch_add(&p->aicore_bodies, 1);
	tp_aicore_loop_empty(core, NULL);
}

struct launch_call {
	struct tp_device *dev;
	struct tp_launch_config lc;
	int rc;
	char msg[TP_ERROR_MSG_MAX];
	uint64_t took_ns;
};

static void *launch_thread(void *arg)
{
	struct launch_call *c = arg;
	uint64_t t0 = tp_now_ns();
	c->rc = tp_device_launch_ex(c->dev, &c->lc);
	c->took_ns = tp_now_ns() - t0;
	snprintf(c->msg, sizeof(c->msg), "%s", tp_last_error());
	return NULL;
}

/* Launch on a helper thread and fail (instead of hanging) when it has not
 * returned within 10 s; the helper is then left behind, stuck. */
static void bounded_launch(struct launch_call *c)
{
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, launch_thread, c), 0);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	int jrc = pthread_timedjoin_np(th, NULL, &dl);
	if (jrc != 0)
		fail_msg("tp_device_launch_ex() did not return within 10 s (join: %d): "
			 "the started threads were not stopped", jrc);
}

/* A launch whose @nth thread creation fails returns -EAGAIN at once,
 * having run no body and left nothing running; the next launch on the
 * same device and a fresh device both work. */
static void run_thread_failure(const char *plat, int bd, int nt)
{
	struct tp_device *dev = open_dev(plat, bd, nt);
	const int ncores = tp_device_num_cores(dev);
	const int launched = tp_device_aicpu_launched(dev);
	/* first / second AICore, last AICore, first AICPU, last AICPU that
	 * runs the program, last AICPU launch thread (affinity gate) */
	const int nths[] = { 1, 2, ncores, ncores + 1, ncores + nt, ncores + launched };
	static struct partial p;
	for (size_t k = 0; k < sizeof(nths) / sizeof(nths[0]); k++) {
		const int nth = nths[k];
		memset(&p, 0, sizeof(p));
		atomic_store(&error_lines, 0);
		static struct launch_call c;
		memset(&c, 0, sizeof(c));
		c.dev = dev;
		c.lc = (struct tp_launch_config){ .aicpu_fn = partial_aicpu,
						  .aicore_fn = partial_aicore, .arg = &p };
		tp_device_test_fail_thread(nth, EAGAIN);
		bounded_launch(&c);
		printf("%s nth %d: rc %d in %.2f ms: %s\n", plat, nth, c.rc,
		       (double)c.took_ns / 1e6, c.msg);
		assert_int_equal(c.rc, -EAGAIN);
		assert_true(c.took_ns < 5 * S_NS);
		assert_false(tp_device_running(dev));
		assert_int_equal(tp_device_wait(dev), -EINVAL);
		/* all or nothing: no body ran */
		assert_int_equal(atomic_load(&p.aicpu_bodies), 0);
		assert_int_equal(atomic_load(&p.aicore_bodies), 0);
		/* the caller reports the error: no ERROR line of its own */
		assert_int_equal(atomic_load(&error_lines), 0);
		char want[256];
		if (nth <= ncores) {
			snprintf(want, sizeof(want), "cannot create AICore thread %d (", nth - 1);
			assert_non_null(strstr(c.msg, want));
			snprintf(want, sizeof(want), "%d of %d AICore and %d of %d AICPU threads "
				 "not created", ncores - nth + 1, ncores, launched, launched);
		} else {
			snprintf(want, sizeof(want), "cannot create AICPU thread %d: ",
				 nth - ncores - 1);
			assert_non_null(strstr(c.msg, want));
			snprintf(want, sizeof(want), "; %d of %d AICPU threads not created",
				 ncores + launched - nth + 1, launched);
		}
		assert_non_null(strstr(c.msg, want));
		assert_non_null(strstr(c.msg, strerror(EAGAIN)));
		if (nth > 1)
			snprintf(want, sizeof(want), "(the %d started threads were stopped",
				 nth - 1);
		else
			snprintf(want, sizeof(want), "(none had started)");
		assert_non_null(strstr(c.msg, want));

		/* The test point was one shot: the same device launches again. */
		memset(&p, 0, sizeof(p));
		c.rc = -1;
		bounded_launch(&c);
		assert_int_equal(c.rc, 0);
		assert_int_equal(tp_device_wait(dev), 0);
		assert_int_equal(atomic_load(&p.aicpu_bodies), nt);
		assert_int_equal(atomic_load(&p.aicore_bodies), ncores);
		assert_int_equal(atomic_load(&p.errors), 0);
		for (int cid = 0; cid < ncores; cid++)
			assert_int_equal(tp_reg_read(dev, cid, TP_REG_COND),
					 TP_AICORE_EXITED_VALUE);
	}
	/* An error other than EAGAIN comes back as it is, without the hint. */
	tp_device_test_fail_thread(ncores + 1, EPERM);
	assert_int_equal(tp_device_launch(dev, partial_aicpu, partial_aicore, &p), -EPERM);
	assert_non_null(strstr(tp_last_error(), strerror(EPERM)));
	assert_null(strstr(tp_last_error(), "ulimit"));
	/* Without an AICPU program only AICore threads are counted. */
	tp_device_test_fail_thread(ncores, EAGAIN);
	assert_int_equal(tp_device_launch(dev, NULL, NULL, NULL), -EAGAIN);
	char want[128];
	snprintf(want, sizeof(want), "; 1 of %d AICore threads not created", ncores);
	assert_non_null(strstr(tp_last_error(), want));
	/* Beyond the launch's threads: nothing fails, and the test point is
	 * used up all the same. */
	tp_device_test_fail_thread(ncores + launched + 1, EAGAIN);
	for (int round = 0; round < 2; round++) {
		assert_int_equal(tp_device_launch(dev, NULL, NULL, NULL), 0);
		assert_int_equal(tp_device_wait(dev), 0);
	}
	tp_device_close(dev);
	/* a fresh device */
	run_protocol(plat, bd, nt);
}

static void test_thread_failure_a2a3sim(void **state)
{
	(void)state;
	run_thread_failure("a2a3sim", 2, 3);
}

static void test_thread_failure_a5sim(void **state)
{
	(void)state;
	run_thread_failure("a5sim", 2, 4);
}

/* ---- teardown ---------------------------------------------------------------- */

/* With no AICPU program the cores sit in the start-up handshake; wait
 * sends them the exit signal. A device can be launched again (rounds). */
static void test_teardown_without_aicpu(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a2a3sim", 8, 4);
	for (int round = 0; round < 3; round++) {
		assert_int_equal(tp_device_launch(dev, NULL, NULL, NULL), 0);
		sleep_ms(5);
		assert_int_equal(tp_device_wait(dev), 0);
		for (int c = 0; c < 24; c++)
			assert_int_equal(tp_reg_read(dev, c, TP_REG_COND), TP_AICORE_EXITED_VALUE);
	}
	tp_device_close(dev);
}

static atomic_int release_core5;

/* Core 5 ignores the exit signal until released; the others behave. */
static void stubborn_core(struct tp_aicore *core, void *arg)
{
	(void)arg;
	if (tp_aicore_id(core) != 5) {
		tp_aicore_loop_empty(core, NULL);
		return;
	}
	while (!atomic_load(&release_core5))
		sleep_ms(1);
}

static void test_teardown_bounded(void **state)
{
	(void)state;
	struct tp_device_config cfg = {
		.block_dim = 2, .mem_bytes = 1 << 20, .teardown_timeout_ms = 100,
	};
	struct tp_device *dev = tp_device_open(&cfg);
	assert_non_null(dev);
	atomic_store(&release_core5, 0);
	assert_int_equal(tp_device_launch(dev, NULL, stubborn_core, NULL), 0);
	uint64_t t0 = tp_now_ns();
	assert_int_equal(tp_device_wait(dev), -ETIMEDOUT);
	uint64_t took = tp_now_ns() - t0;
	printf("teardown: %s (after %.0f ms)\n", tp_last_error(), (double)took / 1e6);
	assert_non_null(strstr(tp_last_error(), "1 AICore thread did not exit within 100 ms "
						"(cores 5)"));
	assert_true(took >= 100000000ull && took < 5 * S_NS);
	assert_int_equal(atomic_load(&error_lines), 1);
	assert_true(tp_device_running(dev));
	/* the same late thread again (tp_device_close() waits once more):
	 * the error, but no second ERROR line */
	assert_int_equal(tp_device_wait(dev), -ETIMEDOUT);
	assert_non_null(strstr(tp_last_error(), "(cores 5)"));
	assert_int_equal(atomic_load(&error_lines), 1);
	atomic_store(&release_core5, 1);
	assert_int_equal(tp_device_wait(dev), 0);
	assert_false(tp_device_running(dev));
	tp_device_close(dev);
}

/* @cores[0..n) = every core id of @dev; returns n (at most MAXC). */
static int all_cores(struct tp_device *dev, int cores[MAXC])
{
	int n = tp_device_num_cores(dev);
	for (int c = 0; c < n; c++)
		cores[c] = c;
	return n;
}

/* Core 5 answers the start-up handshake but acknowledges the exit signal
 * only once released; the others behave. */
static void deaf_core5(struct tp_aicore *core, void *arg)
{
	if (tp_aicore_id(core) != 5) {
		tp_aicore_loop_empty(core, arg);
		return;
	}
	if (tp_aicore_handshake(core) == TP_AICORE_EXITING)
		return;
	while (!atomic_load(&release_core5))
		sleep_ms(1);
	tp_aicore_exit_ack(core);
}

struct close_prog {
	atomic_int open_rc;    /* open_cores' result */
	atomic_int rc, errors; /* close_cores' result, ERROR lines it logged */
	char msg[512];
};

static void close_late_aicpu(struct tp_aicpu *cpu, void *arg)
{
	struct close_prog *cp = arg;
	struct tp_device *dev = tp_aicpu_device(cpu);
	if (tp_aicpu_index(cpu) != 0)
		return;
	int cores[MAXC], n = all_cores(dev, cores);
	atomic_store(&cp->open_rc, tp_aicpu_open_cores(dev, cores, n, 5 * S_NS));
	sleep_ms(20); /* every core idle, waiting for a token */
	int before = atomic_load(&error_lines);
	int rc = tp_aicpu_close_cores(dev, cores, n, 100u * 1000000u);
	atomic_store(&cp->errors, atomic_load(&error_lines) - before);
	snprintf(cp->msg, sizeof(cp->msg), "%s", tp_last_error());
	atomic_store(&cp->rc, rc);
	atomic_store(&release_core5, 1);
}

/* The exit ACKs share one budget: once core 5 spent it, the cores after it
 * (6..8), which answered in time, are not reported late. */
static void test_close_cores_names_only_late(void **state)
{
	(void)state;
	atomic_store(&release_core5, 0);
	struct tp_device *dev = open_dev("a2a3sim", 3, 2);
	assert_int_equal(tp_device_num_cores(dev), 9);
	static struct close_prog cp;
	atomic_store(&cp.rc, 1);
	assert_int_equal(tp_device_launch(dev, close_late_aicpu, deaf_core5, &cp), 0);
	assert_int_equal(tp_device_wait(dev), 0);
	printf("close_cores: rc %d, %d ERROR lines, last: %s\n", atomic_load(&cp.rc),
	       atomic_load(&cp.errors), cp.msg);
	assert_int_equal(atomic_load(&cp.open_rc), 0);
	assert_int_equal(atomic_load(&cp.rc), -ETIMEDOUT);
	assert_int_equal(atomic_load(&cp.errors), 1);
	assert_non_null(strstr(cp.msg, "timed out waiting for the exit ACK of core 5 "));
	tp_device_close(dev);
	atomic_store(&error_lines, 0);
}

/* ---- budgets do not count stopped time ----------------------------------------- */

/* Core 0 answers the start-up handshake @late_handshake_ms late, and its
 * thread ends @late_exit_ms after its exit ACK; the others behave. The
 * delays are time the thread ran (10 ms naps, each counted at most 50 ms):
 * they do not go on while the process is stopped, and a loaded machine
 * shortens rather than lengthens them. */
static atomic_int late_handshake_ms, late_exit_ms;

static void late_core(struct tp_aicore *core, void *arg)
{
	const bool late = tp_aicore_id(core) == 0;
	if (late)
		uh_run_for_ms((unsigned)atomic_load(&late_handshake_ms));
	tp_aicore_loop_empty(core, arg);
	if (late)
		uh_run_for_ms((unsigned)atomic_load(&late_exit_ms));
}

struct open_prog {
	uint64_t budget_ns;
	atomic_int rc;
	char msg[512]; /* the AICPU thread's tp_last_error() when rc != 0 */
};

static void open_all_aicpu(struct tp_aicpu *cpu, void *arg)
{
	struct open_prog *op = arg;
	struct tp_device *dev = tp_aicpu_device(cpu);
	if (tp_aicpu_index(cpu) != 0)
		return;
	int cores[MAXC], n = all_cores(dev, cores);
	int rc = tp_aicpu_open_cores(dev, cores, n, op->budget_ns);
	if (rc)
		snprintf(op->msg, sizeof(op->msg), "%s", tp_last_error());
	atomic_store(&op->rc, rc); /* seq_cst: tp_device_wait() joins this thread anyway */
	tp_aicpu_close_cores(dev, cores, n, 5 * S_NS);
}

/* The start-up handshake's budget (2 s) is not spent by the 1.5 s the
 * process is stopped: a core answering after 2.5 s of its own time, about
 * 1 s of it before the stop, passes; without the stop it times out (the
 * control). Margins of about 0.5 s or more everywhere: the stop comes 1 s
 * before the budget would run out, and the 1.5 s left after it fit the
 * restarted 2 s budget, also on a loaded machine. */
static void test_handshake_budget_excludes_stop(void **state)
{
	(void)state;
	assert_int_equal(tp_watchdog_install(), 0);
	atomic_store(&late_handshake_ms, 2500);
	atomic_store(&late_exit_ms, 0);
	for (int stopped = 0; stopped < 2; stopped++) {
		struct tp_device *dev = open_dev("a2a3sim", 1, 1);
		static struct open_prog op;
		op.budget_ns = 2000ull * 1000000u;
		atomic_store(&op.rc, 1);
		op.msg[0] = '\0';
		pid_t child = stopped ? uh_stop_self_later(1000, 1500) : 0;
		uint64_t t0 = tp_now_ns();
		assert_int_equal(tp_device_launch(dev, open_all_aicpu, late_core, &op), 0);
		assert_int_equal(tp_device_wait(dev), 0);
		uint64_t took = tp_now_ns() - t0;
		if (child)
			assert_int_equal(uh_reap(child), 0);
		printf("stopped=%d: open_cores rc %d after %.0f ms\n", stopped, atomic_load(&op.rc),
		       (double)took / 1e6);
		if (stopped) {
			assert_int_equal(atomic_load(&op.rc), 0);
			assert_true(took >= 1500ull * 1000000u); /* the stop fell inside */
		} else {
			assert_int_equal(atomic_load(&op.rc), -ETIMEDOUT);
			assert_non_null(strstr(op.msg, "core 0 did not answer the start-up "
							 "handshake"));
		}
		tp_device_close(dev);
	}
}

/* Same for the device's teardown budget (2 s): core 0's thread ends 2.5 s
 * of its own time after its exit ACK. */
static void test_teardown_budget_excludes_stop(void **state)
{
	(void)state;
	assert_int_equal(tp_watchdog_install(), 0);
	atomic_store(&late_handshake_ms, 0);
	atomic_store(&late_exit_ms, 2500);
	for (int stopped = 0; stopped < 2; stopped++) {
		struct tp_device_config cfg = {
			.block_dim = 1, .aicpu_threads = 1, .mem_bytes = 1 << 20,
			.teardown_timeout_ms = 2000,
		};
		struct tp_device *dev = tp_device_open(&cfg);
		assert_non_null(dev);
		assert_int_equal(tp_device_launch(dev, NULL, late_core, NULL), 0);
		sleep_ms(5);
		pid_t child = stopped ? uh_stop_self_later(1000, 1500) : 0;
		int rc = tp_device_wait(dev);
		if (child)
			assert_int_equal(uh_reap(child), 0);
		printf("stopped=%d: teardown rc %d\n", stopped, rc);
		if (stopped) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, -ETIMEDOUT);
			assert_non_null(strstr(tp_last_error(), "1 AICore thread did not exit "
								"within 2000 ms (cores 0)"));
			assert_int_equal(tp_device_wait(dev), 0); /* it ends 0.5 s later */
		}
		tp_device_close(dev);
	}
	atomic_store(&error_lines, 0); /* the control's timeout was logged */
}

/* ---- idle threads sleep ------------------------------------------------------- */

struct idle_prog {
	atomic_int opened;
	atomic_int release;
	struct tp_doorbell db;
};

static bool released(void *arg)
{
	struct idle_prog *ip = arg;
	return atomic_load_explicit(&ip->release, memory_order_acquire) != 0;
}

static void idle_aicpu(struct tp_aicpu *cpu, void *arg)
{
	struct idle_prog *ip = arg;
	struct tp_device *dev = tp_aicpu_device(cpu);
	int cores[MAXC], n = all_cores(dev, cores);
	if (tp_aicpu_index(cpu) == 0) {
		if (tp_aicpu_open_cores(dev, cores, n, 5 * S_NS) == 0)
			atomic_store(&ip->opened, 1);
	}
	/* every AICPU thread parks until released, like an idle scheduler */
	tp_doorbell_wait(&ip->db, released, ip, TP_DOORBELL_FOREVER);
	if (tp_aicpu_index(cpu) == 0)
		tp_aicpu_close_cores(dev, cores, n, 5 * S_NS);
}

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* 24 AICores waiting for a token and 4 AICPU threads waiting for work,
 * after the handshake: together they must use a small fraction of one CPU
 * (they would use both CPUs of this machine if they spun). */
static void test_idle_cores_sleep(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a2a3sim", 8, 4);
	static struct idle_prog ip;
	memset(&ip, 0, sizeof(ip));
	tp_doorbell_init(&ip.db);
	assert_int_equal(tp_device_launch(dev, idle_aicpu, NULL, &ip), 0);
	while (!atomic_load(&ip.opened))
		sleep_ms(1);
	sleep_ms(20); /* let every thread finish its spin and park */
	double c0 = cpu_seconds();
	uint64_t t0 = tp_now_ns();
	sleep_ms(200);
	double used = cpu_seconds() - c0;
	double wall = (double)(tp_now_ns() - t0) / 1e9;
	double cores = used / wall;
	printf("idle: 24 AICores + 4 AICPU threads used %.2f ms CPU in %.0f ms = %.4f cores\n",
	       used * 1e3, wall * 1e3, cores);
	assert_true(cores < 0.05);
	atomic_store_explicit(&ip.release, 1, memory_order_release);
	tp_doorbell_ring(&ip.db);
	assert_int_equal(tp_device_wait(dev), 0);
	tp_device_close(dev);
}

/* ---- host scheduling of the device threads --------------------------------- */

/* struct sched_attr, for reading a thread's slice back (sched_runtime). */
struct slice_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};

static uint64_t my_slice_ns(void)
{
	struct slice_attr a = { 0 };
	if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0u) != 0)
		return 0;
	return a.runtime;
}

static uint32_t my_policy(void)
{
	struct slice_attr a = { 0 };
	if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0u) != 0)
		return UINT32_MAX;
	return a.policy;
}

static void *probe_slice(void *arg)
{
	uint64_t *out = arg;
	out[0] = my_slice_ns();
	struct slice_attr a = { .size = sizeof(a), .nice = getpriority(PRIO_PROCESS, 0),
				.runtime = 200000 };
	out[1] = syscall(SYS_sched_setattr, 0, &a, 0u) == 0 ? my_slice_ns() : 0;
	return NULL;
}

/* What each AICPU thread of the last launch saw of itself. */
static _Atomic uint64_t aicpu_slice[4];
static _Atomic uint32_t aicpu_policy[4];
static atomic_int aicpu_nice[4];

static void record_slice(struct tp_aicpu *cpu, void *arg)
{
	(void)arg;
	int i = tp_aicpu_index(cpu);
	atomic_store(&aicpu_slice[i], my_slice_ns());
	atomic_store(&aicpu_policy[i], my_policy());
	atomic_store(&aicpu_nice[i], getpriority(PRIO_PROCESS, 0));
}

static atomic_int slice_warnings;

static void count_slice_warnings(int level, const char *msg, void *ud)
{
	(void)ud;
	if (level == TP_LOG_WARN && strstr(msg, "TASKPROF_SIM_AICPU_SLICE_US=50: expected 0 or "
						 "100..100000"))
		atomic_fetch_add(&slice_warnings, 1);
}

/* Slices of the AICPU threads of one launch of a fresh device, with
 * TASKPROF_SIM_AICPU_SLICE_US = @env (NULL: unset). */
static void launch_slices(const char *env, uint64_t out[2])
{
	if (env)
		setenv("TASKPROF_SIM_AICPU_SLICE_US", env, 1);
	else
		unsetenv("TASKPROF_SIM_AICPU_SLICE_US");
	struct tp_device *dev = open_dev("a2a3sim", 1, 2);
	assert_int_equal(tp_device_launch(dev, record_slice, NULL, NULL), 0);
	assert_int_equal(tp_device_wait(dev), 0);
	tp_device_close(dev);
	unsetenv("TASKPROF_SIM_AICPU_SLICE_US");
	out[0] = atomic_load(&aicpu_slice[0]);
	out[1] = atomic_load(&aicpu_slice[1]);
}

/* A launch with a 200 µs slice from a SCHED_BATCH thread at nice 3: the
 * AICPU threads (which inherit both) keep them. */
static void *launch_from_batch(void *arg)
{
	uint64_t *got = arg;
	struct slice_attr a = { .size = sizeof(a), .policy = SCHED_BATCH, .nice = 3 };
	if (syscall(SYS_sched_setattr, 0, &a, 0u) != 0) {
		got[2] = 1; /* could not become SCHED_BATCH: nothing to check */
		return NULL;
	}
	launch_slices("200", got);
	return NULL;
}

/* TASKPROF_SIM_AICPU_SLICE_US sets the AICPU threads' host slice, keeping
 * their policy and nice value; unset or 0 they keep the host's default; a
 * bad value gets one WARN and the default. Where the kernel has no custom
 * slices (before 6.12: the probe thread cannot read back what it set),
 * only that nothing fails and nothing else changes. The WARN is given
 * once per process (platform/device.c): no other test may provoke it. */
static void test_aicpu_slice_from_env(void **state)
{
	(void)state;
	uint64_t probe[2] = { 0, 0 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, probe_slice, probe), 0);
	pthread_join(th, NULL);
	const bool custom = probe[1] == 200000;
	const uint64_t dflt = probe[0];
	printf("host default slice %llu ns; custom slices %s\n", (unsigned long long)dflt,
	       custom ? "supported" : "not supported: values not checked");

	const uint32_t policy = my_policy();
	const int nice = getpriority(PRIO_PROCESS, 0);
	uint64_t got[3] = { 0, 0, 0 };
	launch_slices("200", got);
	if (custom) {
		assert_int_equal(got[0], 200000);
		assert_int_equal(got[1], 200000);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(atomic_load(&aicpu_policy[i]), policy);
		assert_int_equal(atomic_load(&aicpu_nice[i]), nice);
	}
	got[0] = got[1] = 0;
	assert_int_equal(pthread_create(&th, NULL, launch_from_batch, got), 0);
	pthread_join(th, NULL);
	printf("launch from a SCHED_BATCH thread at nice 3: %s\n",
	       got[2] ? "not possible here, not checked" : "checked");
	if (!got[2]) {
		for (int i = 0; i < 2; i++) {
			assert_int_equal(atomic_load(&aicpu_policy[i]), SCHED_BATCH);
			assert_int_equal(atomic_load(&aicpu_nice[i]), 3);
		}
		if (custom)
			assert_int_equal(got[0], 200000);
	}
	launch_slices(NULL, got);
	if (custom) {
		assert_int_equal(got[0], dflt);
		assert_int_equal(got[1], dflt);
	}
	launch_slices("0", got);
	if (custom)
		assert_int_equal(got[0], dflt);
	atomic_store(&slice_warnings, 0);
	tp_log_set_hook(count_slice_warnings, NULL);
	launch_slices("50", got); /* below the kernel's 100 µs minimum */
	launch_slices("50", got);
	tp_log_set_hook(count_errors, NULL);
	assert_int_equal(atomic_load(&slice_warnings), 1);
	if (custom)
		assert_int_equal(got[0], dflt);
}

/* ---- AICPU placement (TASKPROF_SIM_AICPU_PIN) ------------------------------ */

/* CPU masks the device threads of the last launch saw (written by them,
 * read after tp_device_wait() joined them). */
static cpu_set_t aicpu_mask[2];
static cpu_set_t aicore_mask[3];

static void record_aicpu_mask(struct tp_aicpu *cpu, void *arg)
{
	(void)arg;
	int i = tp_aicpu_index(cpu);
	if (i < 2)
		assert_int_equal(sched_getaffinity(0, sizeof(cpu_set_t), &aicpu_mask[i]), 0);
}

static void record_aicore_mask(struct tp_aicore *core, void *arg)
{
	(void)arg;
	int id = tp_aicore_id(core);
	if (id < 3)
		assert_int_equal(sched_getaffinity(0, sizeof(cpu_set_t), &aicore_mask[id]), 0);
}

/* One launch of a fresh a2a3sim device (1 cluster: 3 AICores, 2 AICPU
 * threads) with TASKPROF_SIM_AICPU_PIN = @env (NULL: unset). */
static void launch_masks(const char *env)
{
	if (env)
		setenv("TASKPROF_SIM_AICPU_PIN", env, 1);
	else
		unsetenv("TASKPROF_SIM_AICPU_PIN");
	memset(aicpu_mask, 0, sizeof(aicpu_mask));
	memset(aicore_mask, 0, sizeof(aicore_mask));
	struct tp_device *dev = open_dev("a2a3sim", 1, 2);
	unsetenv("TASKPROF_SIM_AICPU_PIN");
	assert_int_equal(tp_device_launch(dev, record_aicpu_mask, record_aicore_mask, NULL), 0);
	assert_int_equal(tp_device_wait(dev), 0);
	tp_device_close(dev);
}

static void *launch_masks_thread(void *arg)
{
	launch_masks(arg);
	return NULL;
}

static atomic_int pin_warnings;

static void count_pin_warnings(int level, const char *msg, void *ud)
{
	(void)ud;
	if (level == TP_LOG_WARN &&
	    strstr(msg, "TASKPROF_SIM_AICPU_PIN=bogus: expected auto or off (any case); using "
			"auto"))
		atomic_fetch_add(&pin_warnings, 1);
}

/* "auto" (unset, "auto" or a bad value, which WARNs once) keeps the AICPU
 * threads on tp_device_aicpu_pin_count() CPUs of the launching thread's
 * mask, the same for each, and leaves the AICores on the whole mask; "off"
 * and a one-CPU mask leave everything as inherited. */
static void test_aicpu_pin(void **state)
{
	(void)state;
	/* The share: proportional, rounded, 1 .. min(AICPU threads, CPUs - 1). */
	assert_int_equal(tp_device_aicpu_pin_count(1, 4, 24), 0);
	assert_int_equal(tp_device_aicpu_pin_count(0, 4, 24), 0);
	assert_int_equal(tp_device_aicpu_pin_count(2, 0, 24), 0);
	assert_int_equal(tp_device_aicpu_pin_count(2, 4, 24), 1);
	assert_int_equal(tp_device_aicpu_pin_count(2, 7, 36), 1);
	assert_int_equal(tp_device_aicpu_pin_count(4, 4, 24), 1);
	assert_int_equal(tp_device_aicpu_pin_count(16, 4, 24), 2);  /* 2.29 */
	assert_int_equal(tp_device_aicpu_pin_count(18, 4, 24), 3);  /* 2.57 */
	assert_int_equal(tp_device_aicpu_pin_count(64, 4, 24), 4);  /* 9.1, capped */
	assert_int_equal(tp_device_aicpu_pin_count(3, 2, 3), 1);    /* 1.2 */
	assert_int_equal(tp_device_aicpu_pin_count(3, 3, 0), 2);    /* CPUs - 1 */

	cpu_set_t proc;
	assert_int_equal(sched_getaffinity(0, sizeof(proc), &proc), 0);
	const int n = CPU_COUNT(&proc);
	const int k = tp_device_aicpu_pin_count(n, 2, 3);
	printf("process may use %d CPUs: AICPU threads expected on %d\n", n, k);

	const char *autos[] = { NULL, "auto", "AUTO", "bogus", "bogus" };
	atomic_store(&pin_warnings, 0);
	tp_log_set_hook(count_pin_warnings, NULL);
	for (size_t v = 0; v < sizeof(autos) / sizeof(autos[0]); v++) {
		launch_masks(autos[v]);
		cpu_set_t inter;
		for (int i = 0; i < 2; i++) {
			assert_int_equal(CPU_COUNT(&aicpu_mask[i]), k ? k : n);
			CPU_AND(&inter, &aicpu_mask[i], &proc);
			assert_true(CPU_EQUAL(&inter, &aicpu_mask[i])); /* a subset */
		}
		assert_true(CPU_EQUAL(&aicpu_mask[0], &aicpu_mask[1]));
		for (int c = 0; c < 3; c++)
			assert_true(CPU_EQUAL(&aicore_mask[c], &proc));
	}
	tp_log_set_hook(count_errors, NULL);
	assert_int_equal(atomic_load(&pin_warnings), 1);

	launch_masks("off");
	for (int i = 0; i < 2; i++)
		assert_true(CPU_EQUAL(&aicpu_mask[i], &proc));
	launch_masks("Off");
	for (int i = 0; i < 2; i++)
		assert_true(CPU_EQUAL(&aicpu_mask[i], &proc));

	/* A launch from a thread allowed one CPU: nothing to place. */
	int first = 0;
	while (!CPU_ISSET(first, &proc))
		first++;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	pthread_attr_t at;
	pthread_attr_init(&at);
	assert_int_equal(pthread_attr_setaffinity_np(&at, sizeof(one), &one), 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, &at, launch_masks_thread, NULL), 0);
	pthread_join(th, NULL);
	pthread_attr_destroy(&at);
	for (int i = 0; i < 2; i++)
		assert_true(CPU_EQUAL(&aicpu_mask[i], &one));
	for (int c = 0; c < 3; c++)
		assert_true(CPU_EQUAL(&aicore_mask[c], &one));
}

static char cost_line[1024];

static void keep_cost_line(int level, const char *msg, void *ud)
{
	(void)ud;
	if (level == TP_LOG_DEBUG && strstr(msg, "launch cost"))
		snprintf(cost_line, sizeof(cost_line), "%s", msg);
}

static void burn_aicpu0(struct tp_aicpu *cpu, void *arg)
{
	(void)arg;
	if (tp_aicpu_index(cpu) != 0)
		return;
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 3000000L);
}

/* At DEBUG, tp_device_wait() logs what each AICPU thread and the AICores
 * cost: AICPU thread 0 burned at least 3 ms of CPU here. */
static void test_launch_cost_line(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a2a3sim", 8, 2);
	cost_line[0] = '\0';
	tp_log_set_threshold(TP_LOG_DEBUG);
	tp_log_set_hook(keep_cost_line, NULL);
	assert_int_equal(tp_device_launch(dev, burn_aicpu0, NULL, NULL), 0);
	assert_int_equal(tp_device_wait(dev), 0);
	tp_log_set_hook(count_errors, NULL);
	tp_log_set_threshold(TP_LOG_TIMING);
	tp_device_close(dev);
	printf("%s\n", cost_line);
	double cpu0 = 0, wait0 = -1;
	const char *a = strstr(cost_line, "aicpu0 ");
	assert_non_null(a);
	assert_int_equal(sscanf(a, "aicpu0 %lf/%lf ms", &cpu0, &wait0), 2);
	assert_true(cpu0 >= 3.0);
	assert_true(wait0 >= 0.0);
	assert_non_null(strstr(cost_line, "aicpu1 "));
	assert_null(strstr(cost_line, "aicpu2 "));
	assert_non_null(strstr(cost_line, ", AIC "));
	assert_non_null(strstr(cost_line, ", AIV "));
}

/* ---- device memory for the profiling transport ------------------------------- */

static void test_memops_basics(void **state)
{
	(void)state;
	struct tp_device *dev = open_dev("a2a3sim", 1, 1);
	struct tp_memops ops = tp_dev_memops(dev);
	assert_null(ops.reg);
	assert_null(ops.copy_to_device);
	assert_null(ops.copy_from_device);
	assert_ptr_equal(ops.ud, tp_device_mem(dev));
	unsigned char *p = ops.alloc(ops.ud, 100);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 64, 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(p[i], 0);
	assert_true(tp_dev_mem_owns(tp_device_mem(dev), p, 100));
	assert_non_null(ops.alloc(ops.ud, 0));
	ops.free_(ops.ud, p);
	ops.free_(ops.ud, p); /* double: logged, not crashed on */
	assert_int_equal(atomic_load(&error_lines), 1);
	/* exhaustion: NULL */
	assert_null(ops.alloc(ops.ud, 32u << 20));
	tp_device_close(dev);

	dev = open_dev("a5sim", 1, 1);
	ops = tp_dev_memops(dev);
	assert_null(ops.reg);
	assert_non_null(ops.copy_to_device);
	assert_non_null(ops.copy_from_device);
	uint32_t *d = ops.alloc(ops.ud, 64);
	uint32_t h[16], back[16];
	for (int i = 0; i < 16; i++)
		h[i] = 0x1000u + (uint32_t)i;
	assert_int_equal(ops.copy_to_device(ops.ud, d, h, sizeof(h)), 0);
	assert_int_equal(ops.copy_from_device(ops.ud, back, d, sizeof(back)), 0);
	assert_memory_equal(back, h, sizeof(h));
	assert_int_equal(ops.copy_to_device(ops.ud, d + 1, h, sizeof(h)), -EFAULT);
	assert_int_equal(ops.copy_from_device(ops.ud, back, h, sizeof(h)), -EFAULT);
	ops.free_(ops.ud, d);
	tp_device_close(dev);
}

#define REC 16u
#define CAP 8u
#define RECORDS 300u

static const struct tp_module mod_dev = {
	.name = "PLATT",
	.kinds = 1,
	.ready_queue_size = 8,
	.slot_count = 4,
	.max_collector_threads = 4,
	.idle_timeout_sec = 2,
	.record_size = { REC },
	.records_per_buffer = { CAP },
};

struct xport {
	struct tp_profiler *p;
	atomic_uint stored[2];
	pthread_mutex_t mu;
	uint64_t collected[2];
	int bad;
};

static void fill(uint8_t *r, uint32_t inst, uint32_t idx)
{
	for (uint32_t j = 0; j < REC; j++)
		r[j] = (uint8_t)(idx * 31u + j * 7u + inst * 101u + 1u);
}

static bool xport_collected(void *ud, const struct tp_ready_info *info, int shard)
{
	(void)shard;
	struct xport *x = ud;
	pthread_mutex_lock(&x->mu);
	const uint8_t *rec = info->records;
	uint32_t inst = info->instance;
	if (inst > 1 || info->record_size != REC) {
		x->bad++;
	} else {
		/* buffer seq s of an instance holds its records s·CAP.. in
		 * write order (every buffer but the last is full) */
		for (uint32_t i = 0; i < info->count; i++) {
			uint8_t want[REC];
			fill(want, inst, info->seq * CAP + i);
			if (memcmp(rec + (size_t)i * REC, want, REC) != 0)
				x->bad++;
		}
		x->collected[inst] += info->count;
	}
	pthread_mutex_unlock(&x->mu);
	return true;
}

/* AICPU threads 0 and 1 each write RECORDS records of their own instance. */
static void xport_aicpu(struct tp_aicpu *cpu, void *arg)
{
	struct xport *x = arg;
	uint32_t t = (uint32_t)tp_aicpu_index(cpu);
	struct tp_dpe w;
	if (dpe_attach(&w, prof_shm_dev(x->p), t, t, NULL, NULL) != 0)
		return;
	uint8_t r[REC];
	for (uint32_t i = 0; i < RECORDS; i++) {
		fill(r, t, i);
		atomic_fetch_add(&x->stored[t], dpe_write(&w, r));
	}
	dpe_flush(&w);
}

static void run_transport(const char *plat)
{
	struct tp_device *dev = open_dev(plat, 1, 2);
	struct tp_dev_mem *mem = tp_device_mem(dev);
	static struct xport x;
	memset(&x, 0, sizeof(x));
	pthread_mutex_init(&x.mu, NULL);
	struct tp_profiler_config cfg = {
		.module = &mod_dev,
		.ops = tp_dev_memops(dev),
		.num_threads = 2,
		.num_instances = 2,
		.on_buffer_collected = xport_collected,
		.ud = &x,
	};
	x.p = prof_open(&cfg);
	if (!x.p)
		printf("prof_open: %s\n", tp_last_error());
	assert_non_null(x.p);
	bool shadow = tp_device_platform(dev)->transport == TP_TRANSPORT_HOST_SHADOW;
	/* a5sim: the host works on a malloc shadow; a2a3sim: on device memory */
	assert_int_equal(tp_dev_mem_owns(mem, x.p->hdr, 1), !shadow);
	assert_true(tp_dev_mem_owns(mem, prof_shm_dev(x.p), 1));
	size_t live_open = tp_dev_mem_live_bytes(mem);
	assert_true(live_open > 0);
	assert_int_equal(prof_start(x.p), 0);
	assert_int_equal(tp_device_launch(dev, xport_aicpu, NULL, &x), 0);
	assert_int_equal(tp_device_wait(dev), 0);
	prof_stop(x.p);
	struct tp_reconcile r;
	assert_int_equal(prof_reconcile(x.p, &r), 0);
	assert_true(r.ok);
	assert_int_equal(r.pool[0].total, 2 * RECORDS);
	assert_int_equal(r.pool[0].collected, 2 * RECORDS);
	assert_int_equal(r.pool[0].dropped, 0);
	assert_int_equal(atomic_load(&x.stored[0]), RECORDS);
	assert_int_equal(atomic_load(&x.stored[1]), RECORDS);
	assert_int_equal(x.collected[0], RECORDS);
	assert_int_equal(x.collected[1], RECORDS);
	assert_int_equal(x.bad, 0);
	prof_close(x.p);
	assert_int_equal(tp_dev_mem_live_bytes(mem), 0);
	printf("%s: transport over device memory: %u records from 2 AICPU threads, "
	       "%zu device bytes at open, all freed\n", plat, 2 * RECORDS, live_open);
	pthread_mutex_destroy(&x.mu);
	tp_device_close(dev);
}

static void test_transport_on_device_memory(void **state)
{
	(void)state;
	run_transport("a2a3sim");
	run_transport("a5sim");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_defaults_and_topology, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_protocol_a2a3sim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_protocol_a5sim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_core_list_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_failure_a2a3sim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_failure_a5sim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_teardown_without_aicpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_teardown_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_cores_names_only_late, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handshake_budget_excludes_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_teardown_budget_excludes_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_cores_sleep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aicpu_slice_from_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aicpu_pin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launch_cost_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memops_basics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transport_on_device_memory, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
