/* SPDX-License-Identifier: MIT */
/* Unit test of a retained PMU run (tp_worker_config.collect_across_runs)
 * whose run stalls (seed 000 §3.4: anything short of a proved-complete run
 * raises from tp_worker_flush_diagnostics(), and the failure is sticky):
 *  1. the stalled AICore still runs when the run returns: the collection
 *     stays with the leaked device, never read nor published, and is
 *     recorded as an unknown run at once;
 *  2. the AICore comes back while the stalled run waits for its exit: the
 *     collection is retired, its counts balance, but the graph did not
 *     complete, so it is judged unknown.
 * Its own binary: case 1 leaks a device thread on purpose (as
 * tests/cli/test_cli_stall.sh), which ThreadSanitizer must not report as
 * a thread leak (races still are), and no a5sim device opens beside the
 * leaked a2a3sim one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "platform/pmu_events.h"
#include "runtime/orch.h"
#include "taskprof/worker.h"
#include "unit_helpers.h"
#include "worker_pmu_helpers.h"
#include "worker/run_pmu.h"

#if defined(__SANITIZE_THREAD__)
#define STALL_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STALL_TEST_TSAN 1
#endif
#endif
#ifdef STALL_TEST_TSAN
/* The device thread a stall leaves running is leaked on purpose. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "report_thread_leaks=0";
}
#endif

/* A callable whose one AIV kernel busy-waits g_spin_ms (wall time): with a
 * short stall timeout the run stalls. A stalled run's scheduler waits 500
 * ms for its cores' exit (runtime/sched.c STUCK_EXIT_NS), so a kernel much
 * longer than that still runs when the run returns, a shorter one ended
 * during that wait. */
static _Atomic uint64_t g_spin_ms;

static void k_spin(int64_t *args)
{
	(void)args;
	for (uint64_t end = tp_now_ns() + g_spin_ms * 1000000u; tp_now_ns() < end;)
		;
}

static int spin_orch(struct tp_orch *o, const struct tp_case_args *a)
{
	(void)a;
	struct tp_task_args t;
	tp_args_init(&t);
	return tp_submit_aiv(o, 0, &t, NULL);
}

static int spin_gen(const struct tp_case *c, struct tp_case_args *a)
{
	(void)c;
	memset(a, 0, sizeof(*a));
	return 0;
}

static const struct tp_case_kernel SPIN_KERNELS[] = { { 0, "SPIN", TP_CASE_AIV, k_spin } };
static const struct tp_case SPIN_CASES[] = { { .name = "Spin", .generate = spin_gen } };
static const struct tp_callable SPIN = {
	.name = "spin", .orch_name = "spin", .orch = spin_orch,
	.kernels = SPIN_KERNELS, .n_kernels = 1,
	.cases = SPIN_CASES, .n_cases = 1, .default_case = "Spin",
};

/* ---- FAQ: a stalled run is not a proved-complete one ------------------------ */

static void test_faq_stalled_run_raises(void **state)
{
	(void)state;
	struct tp_run_result r, r2;
	struct tp_worker_config cfg = {
		.platform = "a2a3sim", .output_root = g_root, .pmu_event_type = 2,
		.block_dim = 2, .collect_across_runs = true, .stall_timeout_ms = 50,
	};
	/* 2. first (its device is not leaked): the kernel ends while the
	 * stalled run waits for its cores: the collection is retired, its
	 * counters balance (the stalled task never reached its FIN), but the
	 * graph did not complete: not proved. */
	g_spin_ms = 400;
	struct tp_worker *w = tp_worker_open(&cfg);
	assert_non_null(w);
	assert_int_equal(tp_worker_run(w, &SPIN, NULL, &r), -ETIMEDOUT);
	assert_true(r.pmu_retained);
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	const char *e = tp_last_error();
	assert_non_null(strstr(e, r.output_dir));
	assert_non_null(strstr(e, "unknown: the run failed before its graph completed ("));
	assert_non_null(strstr(e, "made no progress"));
	assert_int_equal(wp_run_pa(w, &r2), 0);
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	assert_non_null(strstr(tp_last_error(), "sticky for this Worker"));
	struct wp_logbuf lb = { .len = 0 };
	tp_log_set_hook(wp_log_errors, &lb);
	tp_worker_close(w);
	tp_log_set_hook(NULL, NULL);

	/* 1. The AICore still runs the kernel when the run returns: the run's
	 * PMU collection stays with the device, is never read nor published. */
	g_spin_ms = 3000;
	w = tp_worker_open(&cfg);
	assert_non_null(w);
	assert_int_equal(tp_worker_run(w, &SPIN, NULL, &r), -ETIMEDOUT);
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	e = tp_last_error();
	assert_non_null(strstr(e, "run_epoch "));
	assert_non_null(strstr(e, r.output_dir));
	assert_non_null(strstr(e, "unknown: the run stalled"));
	assert_non_null(strstr(e, "0 rows published"));
	/* Sticky: a later good run is published, yet the flush still fails. */
	assert_int_equal(wp_run_pa(w, &r2), 0);
	assert_true(r2.pmu_retained);
	assert_true(r2.pmu_reconcile_ok);
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	assert_non_null(strstr(tp_last_error(), "sticky for this Worker"));
	assert_non_null(strstr(tp_last_error(), "unknown: the run stalled"));
	assert_true(wp_csv_exists(&r2));
	memset(&lb, 0, sizeof(lb));
	tp_log_set_hook(wp_log_errors, &lb);
	tp_worker_close(w);
	tp_log_set_hook(NULL, NULL);
	assert_non_null(strstr(lb.text, "tp_worker_close: PMU flush_diagnostics: an earlier PMU "
					"run failed"));

	/* The collection left with the device gave back its share of the
	 * Worker's channel-53 lease: the next Worker on the device holds it. */
	struct tp_worker_config plain = cfg;
	plain.collect_across_runs = false;
	w = tp_worker_open(&plain);
	assert_non_null(w);
	assert_int_equal(wp_run_pa(w, &r2), 0);
	assert_true(r2.pmu_lease_held);
	/* The same for a stalled run that is not retained. */
	assert_int_equal(tp_worker_run(w, &SPIN, NULL, &r), -ETIMEDOUT);
	tp_worker_close(w);
	w = tp_worker_open(&plain);
	assert_non_null(w);
	assert_int_equal(wp_run_pa(w, &r2), 0);
	assert_true(r2.pmu_lease_held);
	tp_worker_close(w);
}

int main(void)
{
	tp_log_set_threshold(TP_LOG_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_faq_stalled_run_raises, wp_setup_root, wp_teardown_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
