/* SPDX-License-Identifier: MIT */
/* Unit tests of base/clock: the system counter's rate, monotonicity, its
 * agreement with CLOCK_MONOTONIC_RAW, conversions and the fallback source. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "unit_helpers.h"

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ULL),
			       (long)(ns % 1000000000ULL) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/*
 * Sleep @sleep_ns and check the counter advanced by sleep × freq ± @tol.
 * A sleep that overshoots by more than 1% (a loaded machine) says nothing
 * about the counter, so such tries are repeated, up to 10 times. The
 * ticks are compared with the span CLOCK_MONOTONIC_RAW measured around
 * them, not with the sleep asked for: under TSan beside the suite a
 * 100 ms sleep took up to 905 ms and 4 tries in a row overshot, so 10
 * can, and the last one's overshoot is no error of the counter's.
 * Returns 0 on pass, -1 on failure (with a line on stdout).
 */
static int check_rate(uint64_t hz, uint64_t sleep_for, double tol)
{
	tp_sys_cnt_set_freq(hz);
	(void)tp_sys_cnt();
	double got = 0, slept = 0;
	for (int attempt = 0; attempt < 10; attempt++) {
		uint64_t n0 = tp_now_ns();
		uint64_t t0 = tp_sys_cnt();
		sleep_ns(sleep_for);
		uint64_t t1 = tp_sys_cnt();
		uint64_t n1 = tp_now_ns();
		got = (double)(t1 - t0);
		slept = (double)(n1 - n0);
		if (slept <= (double)sleep_for * 1.01)
			break;
		printf("  sleep overshot (%.0f ns), retrying\n", slept);
	}
	double expected = slept * (double)hz / 1e9;
	double err = got / expected - 1.0;
	printf("freq %llu Hz, source %s: %.0f ticks in a %.3f ms sleep "
	       "(expected %.0f, error %+.3f%%)\n", (unsigned long long)hz,
	       tp_sys_cnt_source(), got, slept / 1e6, expected, err * 100);
	return fabs(err) <= tol ? 0 : -1;
}

static void test_rate_50mhz(void **state)
{
	(void)state;
	assert_int_equal(check_rate(TP_SYS_CNT_FREQ_A2A3, 100000000ULL, 0.03),
			 0);
	assert_int_equal(tp_sys_cnt_freq(), 50000000ULL);
}

static void test_rate_1ghz(void **state)
{
	(void)state;
	assert_int_equal(check_rate(TP_SYS_CNT_FREQ_A5, 100000000ULL, 0.03),
			 0);
	assert_int_equal(tp_sys_cnt_freq(), 1000000000ULL);
}

static int check_monotonic(uint64_t hz, int reads)
{
	tp_sys_cnt_set_freq(hz);
	uint64_t prev = tp_sys_cnt();
	uint64_t first = prev;
	for (int i = 0; i < reads; i++) {
		uint64_t now = tp_sys_cnt();
		if (now < prev) {
			printf("read %d went back: %llu < %llu\n", i,
			       (unsigned long long)now,
			       (unsigned long long)prev);
			return -1;
		}
		prev = now;
	}
	printf("%d reads at %llu Hz never decreased (advanced %llu ticks)\n",
	       reads, (unsigned long long)hz,
	       (unsigned long long)(prev - first));
	return prev > first ? 0 : -1;
}

static void test_monotonic(void **state)
{
	(void)state;
	assert_int_equal(check_monotonic(TP_SYS_CNT_FREQ_A5, 1000000), 0);
	assert_int_equal(check_monotonic(TP_SYS_CNT_FREQ_A2A3, 1000000), 0);
	/* tp_sys_cnt_after_loads() (rdtscp, or lfence + rdtsc) is the same
	 * clock: mixed with tp_sys_cnt() it never goes back, and it advances. */
	tp_sys_cnt_set_freq(TP_SYS_CNT_FREQ_A5);
	uint64_t first = tp_sys_cnt(), prev = first;
	for (int k = 0; k < 1000000; k++) {
		uint64_t now = k & 1 ? tp_sys_cnt_after_loads() : tp_sys_cnt();
		assert_true(now >= prev);
		prev = now;
	}
	assert_true(prev > first);
}

/* The counter is CLOCK_MONOTONIC_RAW scaled: check the absolute value. */
static void test_agrees_with_monotonic_raw(void **state)
{
	(void)state;
	uint64_t freqs[] = { TP_SYS_CNT_FREQ_A2A3, TP_SYS_CNT_FREQ_A5 };
	for (size_t i = 0; i < 2; i++) {
		tp_sys_cnt_set_freq(freqs[i]);
		uint64_t a = tp_sys_cnt();
		uint64_t ns = tp_now_ns();
		uint64_t b = tp_sys_cnt();
		uint64_t want = tp_sys_cnt_from_ns(ns);
		/* Allow 1 ms of calibration error and scheduling. */
		uint64_t slack = tp_sys_cnt_from_ns(1000000);
		printf("%llu Hz: counter %llu..%llu, from ns %llu\n",
		       (unsigned long long)freqs[i], (unsigned long long)a,
		       (unsigned long long)b, (unsigned long long)want);
		assert_true(want + slack >= a);
		assert_true(want <= b + slack);
	}
}

static void test_conversions(void **state)
{
	(void)state;
	tp_sys_cnt_set_freq(TP_SYS_CNT_FREQ_A2A3);
	assert_int_equal(tp_sys_cnt_to_ns(1), 20);
	assert_int_equal(tp_sys_cnt_from_ns(20), 1);
	assert_int_equal(tp_sys_cnt_from_ns(1000000000ULL), 50000000ULL);
	assert_int_equal(tp_sys_cnt_to_ns(50000000ULL), 1000000000ULL);
	assert_int_equal(tp_sys_cnt_from_ns(29), 1);   /* rounds to nearest */
	assert_int_equal(tp_sys_cnt_from_ns(30), 2);
	assert_int_equal(tp_sys_cnt_to_ns(UINT64_MAX), UINT64_MAX);

	tp_sys_cnt_set_freq(TP_SYS_CNT_FREQ_A5);
	assert_int_equal(tp_sys_cnt_to_ns(123456789), 123456789);
	assert_int_equal(tp_sys_cnt_from_ns(UINT64_MAX), UINT64_MAX);

	/* Round trips at the platform rates and at an odd one. */
	uint64_t freqs[] = { TP_SYS_CNT_FREQ_A2A3, TP_SYS_CNT_FREQ_A5,
			     19200000ULL, 1000003ULL };
	for (size_t f = 0; f < 4; f++) {
		tp_sys_cnt_set_freq(freqs[f]);
		uint64_t half_tick_ns = 500000000ULL / freqs[f] + 1;
		uint64_t x = 1;
		for (int i = 0; i < 2000; i++) {
			uint64_t t = x % (1ULL << 50);
			assert_int_equal(tp_sys_cnt_from_ns(tp_sys_cnt_to_ns(t)),
					 t);
			uint64_t ns = (x >> 7) % (1ULL << 55);
			uint64_t back = tp_sys_cnt_to_ns(tp_sys_cnt_from_ns(ns));
			uint64_t diff = back > ns ? back - ns : ns - back;
			assert_true(diff <= half_tick_ns);
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		}
	}
	tp_sys_cnt_set_freq(TP_SYS_CNT_FREQ_A2A3);
}

static void test_set_freq_rejects_out_of_range(void **state)
{
	(void)state;
	tp_sys_cnt_set_freq(TP_SYS_CNT_FREQ_A5);
	tp_sys_cnt_set_freq(0);
	assert_int_equal(tp_sys_cnt_freq(), TP_SYS_CNT_FREQ_A5);
	tp_sys_cnt_set_freq(TP_SYS_CNT_FREQ_MAX + 1);
	assert_int_equal(tp_sys_cnt_freq(), TP_SYS_CNT_FREQ_A5);
	tp_sys_cnt_set_freq(TP_SYS_CNT_FREQ_MAX);
	assert_int_equal(tp_sys_cnt_freq(), TP_SYS_CNT_FREQ_MAX);
	/* Highest rate: still monotonic, no overflow in the multiply. */
	assert_int_equal(check_monotonic(TP_SYS_CNT_FREQ_MAX, 10000), 0);
	tp_sys_cnt_set_freq(TP_SYS_CNT_FREQ_A2A3);
}

static void test_source_name(void **state)
{
	(void)state;
	const char *src = tp_sys_cnt_source();
	printf("source: %s\n", src);
	assert_true(strcmp(src, "tsc") == 0 || strcmp(src, "monotonic") == 0);
}

/* ---- child process: first use under a chosen TASKPROF_CLOCK ---------- */

#define CHILD_THREADS 4
static uint64_t child_first[CHILD_THREADS];

/* All threads make the very first call at once: one calibration, and every
 * thread must get a sensible value out of it. */
static void *first_use_thread(void *arg)
{
	int i = (int)(intptr_t)arg;
	/* Odd threads make their first call, which calibrates, through
	 * tp_sys_cnt_after_loads(); every thread mixes the two reads. */
	child_first[i] = i & 1 ? tp_sys_cnt_after_loads() : tp_sys_cnt();
	uint64_t prev = child_first[i];
	for (int k = 0; k < 100000; k++) {
		uint64_t now = k & 1 ? tp_sys_cnt_after_loads() : tp_sys_cnt();
		if (now < prev)
			child_first[i] = 0;
		prev = now;
	}
	return NULL;
}

static int child_main(void)
{
	tp_sys_cnt_set_freq(TP_SYS_CNT_FREQ_A5);
	pthread_t th[CHILD_THREADS];
	for (int i = 0; i < CHILD_THREADS; i++)
		pthread_create(&th[i], NULL, first_use_thread,
			       (void *)(intptr_t)i);
	for (int i = 0; i < CHILD_THREADS; i++)
		pthread_join(th[i], NULL);
	int ok = 1;
	for (int i = 0; i < CHILD_THREADS; i++)
		ok &= child_first[i] != 0;
	int rate = check_rate(TP_SYS_CNT_FREQ_A5, 50000000ULL, 0.03);
	printf("\nsource=%s threads_ok=%d rate_ok=%d\n", tp_sys_cnt_source(),
	       ok, rate == 0);
	return 0;
}

static void expect_child(const char *env, const char *want_source)
{
	char out[4096];
	int status = uh_run_self("--child", "TASKPROF_CLOCK", env, out,
				 sizeof(out));
	printf("TASKPROF_CLOCK=%s:\n%s", env ? env : "(unset)", out);
	assert_int_equal(status, 0);
	char *line = strstr(out, "\nsource=");
	assert_non_null(line);
	char source[32] = "";
	int threads_ok = 0, rate_ok = 0;
	assert_int_equal(sscanf(line, "\nsource=%31s threads_ok=%d rate_ok=%d",
				source, &threads_ok, &rate_ok), 3);
	if (want_source)
		assert_string_equal(source, want_source);
	assert_int_equal(threads_ok, 1);
	assert_int_equal(rate_ok, 1);
}

static void test_env_monotonic(void **state)
{
	(void)state;
	expect_child("monotonic", "monotonic");
	expect_child("MONOTONIC", "monotonic");
}

static void test_env_auto_and_invalid(void **state)
{
	(void)state;
	/* Whatever auto picks on this machine, an unknown value picks the
	 * same, and both pass. */
	expect_child(NULL, tp_sys_cnt_source());
	expect_child("auto", tp_sys_cnt_source());
	expect_child("sundial", tp_sys_cnt_source());
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--child") == 0)
		return child_main();

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_source_name),
		cmocka_unit_test(test_rate_50mhz),
		cmocka_unit_test(test_rate_1ghz),
		cmocka_unit_test(test_monotonic),
		cmocka_unit_test(test_agrees_with_monotonic_raw),
		cmocka_unit_test(test_conversions),
		cmocka_unit_test(test_set_freq_rejects_out_of_range),
		cmocka_unit_test(test_env_monotonic),
		cmocka_unit_test(test_env_auto_and_invalid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
