/* SPDX-License-Identifier: MIT */
/* Unit tests of base/watchdog: the budget fires only at a confirming check
 * TP_WATCHDOG_CONFIRM_NS after it ran out; a kick restarts it; NEVER never
 * fires; a gap longer than TP_WATCHDOG_GAP_NS between two checks (the
 * checking thread did not run: stopped) restarts it, and so does a SIGCONT
 * counted by the handler, which chains the handler installed before it.
 * Times are given, so the rules are checked without sleeping. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/watchdog.h"

#define MS (1000ull * 1000)
#define T0 (1000ull * 1000 * MS) /* an arbitrary tp_now_ns() */

static volatile sig_atomic_t prev_calls;

static void prev_handler(int sig)
{
	(void)sig;
	prev_calls++;
}

/* First test of the binary: tp_watchdog_install() acts once per process. */
static void test_install_chains_previous_handler(void **state)
{
	(void)state;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = prev_handler;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGCONT, &sa, NULL), 0);
	assert_int_equal(tp_watchdog_install(), 0);
	assert_int_equal(tp_watchdog_install(), 0); /* once */
	uint32_t c0 = tp_watchdog_sigconts();
	assert_int_equal(raise(SIGCONT), 0);
	assert_int_equal(raise(SIGCONT), 0);
	assert_int_equal(tp_watchdog_sigconts() - c0, 2);
	assert_int_equal(prev_calls, 2);
	struct sigaction cur;
	assert_int_equal(sigaction(SIGCONT, NULL, &cur), 0);
	assert_true(cur.sa_flags & SA_RESTART);
	printf("SIGCONT counted twice, previous handler called twice\n");
}

static void test_budget_and_confirm(void **state)
{
	(void)state;
	struct tp_watchdog w;
	tp_watchdog_start(&w, 100 * MS, T0);
	assert_false(tp_watchdog_expired(&w, T0 + 50 * MS));
	assert_int_equal(tp_watchdog_sleep_ns(&w, T0 + 50 * MS), 50 * MS);
	/* Runs out: the first check that sees it only notes it. */
	assert_false(tp_watchdog_expired(&w, T0 + 100 * MS));
	assert_int_equal(tp_watchdog_sleep_ns(&w, T0 + 100 * MS), TP_WATCHDOG_CONFIRM_NS);
	assert_false(tp_watchdog_expired(&w, T0 + 100 * MS + TP_WATCHDOG_CONFIRM_NS - 1));
	assert_true(tp_watchdog_expired(&w, T0 + 100 * MS + TP_WATCHDOG_CONFIRM_NS));
	assert_int_equal(w.stops, 0);
	/* A kick (progress) restarts the budget. */
	tp_watchdog_kick(&w, T0 + 200 * MS);
	assert_false(tp_watchdog_expired(&w, T0 + 250 * MS));
	assert_false(tp_watchdog_expired(&w, T0 + 300 * MS));
	assert_true(tp_watchdog_expired(&w, T0 + 360 * MS));
	/* Sleeps are bounded by the period, whatever the budget. */
	tp_watchdog_start(&w, 60000 * MS, T0);
	assert_int_equal(tp_watchdog_sleep_ns(&w, T0), TP_WATCHDOG_PERIOD_NS);
}

static void test_never(void **state)
{
	(void)state;
	struct tp_watchdog w;
	tp_watchdog_start(&w, TP_WATCHDOG_NEVER, T0);
	for (uint64_t t = T0; t < T0 + 100000 * MS; t += 90 * MS)
		assert_false(tp_watchdog_expired(&w, t));
	assert_int_equal(tp_watchdog_sleep_ns(&w, T0), TP_WATCHDOG_PERIOD_NS);
}

static void test_gap_restarts(void **state)
{
	(void)state;
	struct tp_watchdog w;
	tp_watchdog_start(&w, 500 * MS, T0);
	assert_false(tp_watchdog_expired(&w, T0 + 100 * MS));
	/* Not checked for 14 s: the thread was stopped; a new budget. */
	uint64_t t = T0 + 100 * MS + 14000 * MS;
	assert_false(tp_watchdog_expired(&w, t));
	assert_int_equal(w.stops, 1);
	for (uint64_t k = 1; k <= 4; k++)
		assert_false(tp_watchdog_expired(&w, t + k * 100 * MS));
	assert_false(tp_watchdog_expired(&w, t + 500 * MS)); /* ran out: noted */
	assert_true(tp_watchdog_expired(&w, t + 500 * MS + TP_WATCHDOG_CONFIRM_NS));
	/* A gap of exactly TP_WATCHDOG_GAP_NS is still a check. */
	tp_watchdog_start(&w, 500 * MS, T0);
	assert_false(tp_watchdog_expired(&w, T0 + TP_WATCHDOG_GAP_NS));
	assert_int_equal(w.stops, 0);
	assert_true(tp_watchdog_expired(&w, T0 + TP_WATCHDOG_GAP_NS + TP_WATCHDOG_CONFIRM_NS));
}

static void test_sigcont_restarts(void **state)
{
	(void)state;
	struct tp_watchdog w;
	tp_watchdog_start(&w, 100 * MS, T0);
	assert_false(tp_watchdog_expired(&w, T0 + 90 * MS));
	/* A SIGCONT between two regular checks: the budget starts again. */
	assert_int_equal(raise(SIGCONT), 0);
	assert_false(tp_watchdog_expired(&w, T0 + 180 * MS));
	assert_int_equal(w.stops, 1);
	assert_false(tp_watchdog_expired(&w, T0 + 270 * MS));
	/* Also between the check that saw the budget out and the
	 * confirming one (a handler that ran late). */
	assert_false(tp_watchdog_expired(&w, T0 + 280 * MS));
	assert_int_equal(raise(SIGCONT), 0);
	assert_false(tp_watchdog_expired(&w, T0 + 280 * MS + TP_WATCHDOG_CONFIRM_NS));
	assert_int_equal(w.stops, 2);
	assert_false(tp_watchdog_expired(&w, T0 + 280 * MS + TP_WATCHDOG_CONFIRM_NS + 99 * MS));
	printf("SIGCONT restarted the budget twice\n");
}

/* A producer parked at a profiler gate (tp_watchdog_hold) is not lack of
 * progress: an open hold keeps restarting the budget; one opened and
 * closed between two checks restarts it once; after it the budget runs
 * as usual. */
static void test_hold_restarts(void **state)
{
	(void)state;
	struct tp_watchdog w;
	tp_watchdog_start(&w, 100 * MS, T0);
	tp_watchdog_hold();
	for (uint64_t t = T0 + 90 * MS; t < T0 + 3000 * MS; t += 90 * MS)
		assert_false(tp_watchdog_expired(&w, t));
	assert_true(w.stops >= 30);
	tp_watchdog_hold(); /* nested */
	tp_watchdog_unhold();
	assert_false(tp_watchdog_expired(&w, T0 + 3060 * MS)); /* one still open */
	tp_watchdog_unhold();
	/* Closed: the budget runs from the last check that saw it open. */
	uint32_t stops = w.stops;
	assert_false(tp_watchdog_expired(&w, T0 + 3100 * MS));
	assert_false(tp_watchdog_expired(&w, T0 + 3160 * MS)); /* ran out: noted */
	assert_true(tp_watchdog_expired(&w, T0 + 3160 * MS + TP_WATCHDOG_CONFIRM_NS));
	assert_int_equal(w.stops, stops);
	/* A hold opened and closed between two regular checks. */
	tp_watchdog_start(&w, 100 * MS, T0);
	assert_false(tp_watchdog_expired(&w, T0 + 90 * MS));
	tp_watchdog_hold();
	tp_watchdog_unhold();
	assert_false(tp_watchdog_expired(&w, T0 + 180 * MS));
	assert_int_equal(w.stops, 1);
	assert_false(tp_watchdog_expired(&w, T0 + 280 * MS)); /* 100 ms after: noted */
	assert_true(tp_watchdog_expired(&w, T0 + 280 * MS + TP_WATCHDOG_CONFIRM_NS));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_install_chains_previous_handler),
		cmocka_unit_test(test_budget_and_confirm),
		cmocka_unit_test(test_never),
		cmocka_unit_test(test_gap_restarts),
		cmocka_unit_test(test_sigcont_restarts),
		cmocka_unit_test(test_hold_restarts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
