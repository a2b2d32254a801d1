/* SPDX-License-Identifier: MIT */
/* Unit tests of the run's stall timeout (runtime/engine.h
 * stall_timeout_ms, base/watchdog.h):
 *  - a correct kernel slower than a short timeout fails the run with
 *    -ETIMEDOUT and a message naming the timeout and --stall-timeout; a
 *    longer timeout, or TP_ENGINE_STALL_NEVER, lets it pass;
 *  - SIGCONTs received while the kernel runs restart the budget (the
 *    process was stopped, that time is not the kernel's);
 *  - the orchestrator blocked on a full ring heap fails with -EDEADLK after
 *    the configured timeout, not the ring's 10 s default;
 *  - the ring's own wait restarts its deadlock budget on SIGCONT. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/watchdog.h"
#include "platform/device.h"
#include "runtime/engine.h"
#include "runtime/orch.h"
#include "runtime/ring.h"

#define MS (1000ull * 1000)

/* SLOW: scalar ms: busy-waits that long (wall time), then returns. */
static void k_slow(int64_t *args)
{
	uint64_t end = tp_now_ns() + (uint64_t)args[0] * MS;
	while (tp_now_ns() < end)
		;
}

/* NOP: OUT y (1 KiB of the ring heap): nothing to compute. */
static void k_nop(int64_t *args)
{
	(void)args;
}

enum { K_SLOW, K_NOP, K_COUNT };

static const struct tp_kernel_entry kernels[K_COUNT] = {
	[K_SLOW] = { k_slow, TP_CORE_AIV, "SLOW" },
	[K_NOP] = { k_nop, TP_CORE_AIV, "NOP" },
};

/* Run @fn(@arg) with @stall_ms; *ms receives the run's wall time. */
static int run(uint64_t stall_ms, uint64_t heap, tp_orch_fn fn, void *arg,
	       struct tp_engine_result *res, uint64_t *ms)
{
	struct tp_device_config dc = { .block_dim = 1, .aicpu_threads = 2,
				       .mem_bytes = 16u << 20 };
	struct tp_device *dev = tp_device_open(&dc);
	if (!dev)
		printf("open: %s\n", tp_last_error());
	assert_non_null(dev);
	struct tp_engine_config cfg = {
		.dev = dev,
		.kernels = kernels,
		.num_kernels = K_COUNT,
		.ring_window = 64,
		.ring_heap = heap,
		.stall_timeout_ms = stall_ms,
	};
	alarm(60);
	uint64_t t0 = tp_now_ns();
	int rc = tp_engine_run(&cfg, fn, arg, res);
	*ms = (tp_now_ns() - t0) / MS;
	alarm(0);
	tp_device_close(dev);
	printf("stall_timeout_ms %llu: rc %d after %llu ms%s%s\n",
	       (unsigned long long)stall_ms, rc, (unsigned long long)*ms, rc ? ": " : "",
	       rc ? res->msg : "");
	return rc;
}

static int orch_slow(struct tp_orch *o, void *arg)
{
	struct tp_task_args a;
	tp_args_init(&a);
	tp_args_add_scalar(&a, (uint64_t)(uintptr_t)arg);
	return tp_submit_aiv(o, K_SLOW, &a, NULL);
}

static void test_slow_kernel_short_timeout_fails(void **s)
{
	(void)s;
	struct tp_engine_result res;
	uint64_t ms;
	assert_int_equal(run(150, 0, orch_slow, (void *)(uintptr_t)800, &res, &ms), -ETIMEDOUT);
	assert_non_null(strstr(res.msg, "task 0x0 (SLOW)"));
	assert_non_null(strstr(res.msg, "(stall timeout 150 ms)"));
	assert_non_null(strstr(res.msg, "--stall-timeout"));
	assert_int_equal(res.completed_tasks, 0);
	/* The teardown waits for the kernel to return (800 ms). */
	assert_true(ms < 5000);
}

static void test_slow_kernel_long_timeout_passes(void **s)
{
	(void)s;
	struct tp_engine_result res;
	uint64_t ms;
	assert_int_equal(run(3000, 0, orch_slow, (void *)(uintptr_t)800, &res, &ms), 0);
	assert_int_equal(res.completed_tasks, 1);
	assert_true(ms >= 800);
}

static void test_never_passes(void **s)
{
	(void)s;
	struct tp_engine_result res;
	uint64_t ms;
	assert_int_equal(run(TP_ENGINE_STALL_NEVER, 0, orch_slow, (void *)(uintptr_t)400, &res,
			     &ms), 0);
	assert_int_equal(res.completed_tasks, 1);
}

/* Sends SIGCONT to the process every 100 ms for @for_ms ms (0: until
 * conter_stop()). */
struct conter {
	pthread_t th;
	atomic_bool stop;
	uint64_t until_ns;
	unsigned sent;
};

static void *conter_main(void *arg)
{
	struct conter *c = arg;
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	while (!atomic_load(&c->stop) && (!c->until_ns || tp_now_ns() < c->until_ns)) {
		nanosleep(&ts, NULL);
		kill(getpid(), SIGCONT);
		c->sent++;
	}
	return NULL;
}

static void conter_start(struct conter *c, uint64_t for_ms)
{
	memset(c, 0, sizeof(*c));
	atomic_init(&c->stop, false);
	c->until_ns = for_ms ? tp_now_ns() + for_ms * MS : 0;
	assert_int_equal(pthread_create(&c->th, NULL, conter_main, c), 0);
}

static void conter_stop(struct conter *c)
{
	atomic_store(&c->stop, true);
	pthread_join(c->th, NULL);
	printf("%u SIGCONTs sent\n", c->sent);
}

static void test_sigcont_restarts_the_budget(void **s)
{
	(void)s;
	struct tp_engine_result res;
	uint64_t ms;
	struct conter c;
	conter_start(&c, 0);
	/* 900 ms of kernel against 300 ms: only the SIGCONTs (the process
	 * was "continued" every 100 ms) keep the run alive. */
	int rc = run(300, 0, orch_slow, (void *)(uintptr_t)900, &res, &ms);
	conter_stop(&c);
	assert_int_equal(rc, 0);
	assert_int_equal(res.completed_tasks, 1);
}

/* In the outer scope (never released before the orchestration returns)
 * more 1 KiB outputs than the 4 KiB heap holds: the fifth submit blocks
 * with nothing to reclaim and no task running. */
static int orch_heap_full(struct tp_orch *o, void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++) {
		uint32_t shape[2] = { 1, 256 };
		struct tp_task_args a;
		tp_args_init(&a);
		tp_args_add_output(&a, TP_FP32, 2, shape);
		int rc = tp_submit_aiv(o, K_NOP, &a, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

static void test_heap_full_uses_the_stall_timeout(void **s)
{
	(void)s;
	struct tp_engine_result res;
	uint64_t ms;
	assert_int_equal(run(200, 4096, orch_heap_full, NULL, &res, &ms), -EDEADLK);
	assert_non_null(strstr(res.msg, "ring 0: heap full for 200 ms"));
	assert_non_null(strstr(res.msg, "--stall-timeout"));
	assert_int_equal(res.completed_tasks, 4);
	assert_true(ms >= 200 && ms < 5000); /* not the ring's 10 s default */
}

static void test_ring_wait_restarts_on_sigcont(void **s)
{
	(void)s;
	struct tp_ring r;
	struct tp_ring_alloc a, b;
	/* The engine installs the handler; this test may run alone. */
	assert_int_equal(tp_watchdog_install(), 0);
	assert_int_equal(tp_ring_init(&r, 1, 2, NULL, 0), 0);
	assert_int_equal(tp_ring_try_alloc(&r, 0, &a), 0);
	struct tp_ring_wait w = { NULL, NULL, 250 * MS };
	struct conter c;
	/* SIGCONTs for 800 ms: the 250 ms budget can run out only after. */
	uint64_t t0 = tp_now_ns();
	conter_start(&c, 800);
	assert_int_equal(tp_ring_alloc(&r, 0, &w, &b), -EDEADLK);
	uint64_t ms = (tp_now_ns() - t0) / MS;
	conter_stop(&c);
	printf("blocked alloc failed after %llu ms: %s\n", (unsigned long long)ms,
	       tp_last_error());
	assert_non_null(strstr(tp_last_error(), "ring 1: task window full for 250 ms"));
	assert_true(c.sent >= 5);
	assert_true(ms >= 800 + 250 && ms < 5000);
	tp_ring_fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slow_kernel_short_timeout_fails),
		cmocka_unit_test(test_slow_kernel_long_timeout_passes),
		cmocka_unit_test(test_never_passes),
		cmocka_unit_test(test_sigcont_restarts_the_budget),
		cmocka_unit_test(test_heap_full_uses_the_stall_timeout),
		cmocka_unit_test(test_ring_wait_restarts_on_sigcont),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
