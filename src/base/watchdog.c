/* SPDX-License-Identifier: MIT */
/*
 * base/watchdog.c — stall deadlines that skip stopped time
 * (base/watchdog.h).
 */
#include "base/watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#define MIN_SLEEP_NS (1000ull * 1000)

/* Bumped from a signal handler: it must be lock-free to be
 * async-signal-safe. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the SIGCONT counter must be lock-free");
static atomic_uint sigconts;

/* Producers waiting at a profiler gate now, and holds ever opened (wraps;
 * compared for inequality only). Relaxed: they publish no data; a check
 * that sees a hold late only restarts its budget one check later, well
 * within TP_WATCHDOG_CONFIRM_NS of the hold. */
static atomic_uint holds_open;
static atomic_uint holds_opened;

void tp_watchdog_hold(void)
{
	atomic_fetch_add_explicit(&holds_opened, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&holds_open, 1, memory_order_relaxed);
}

void tp_watchdog_unhold(void)
{
	atomic_fetch_sub_explicit(&holds_open, 1, memory_order_relaxed);
}

/* The handler installed before ours; written once, before ours is
 * installed (the sigaction() call orders it before any delivery). */
static struct sigaction prev_cont;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_rc;

static void on_sigcont(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	/* relaxed: the counter publishes no data, a watchdog only compares
	 * it with the value it saw before; a late view is covered by the
	 * confirming check (TP_WATCHDOG_CONFIRM_NS). */
	atomic_fetch_add_explicit(&sigconts, 1, memory_order_relaxed);
	if (prev_cont.sa_flags & SA_SIGINFO) {
		if (prev_cont.sa_sigaction)
			prev_cont.sa_sigaction(sig, si, uc);
	} else if (prev_cont.sa_handler != SIG_DFL && prev_cont.sa_handler != SIG_IGN) {
		prev_cont.sa_handler(sig);
	}
	errno = saved;
}

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_sigcont;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	/* Read the previous action first, so that prev_cont is complete
	 * before our handler can run. */
	if (sigaction(SIGCONT, NULL, &prev_cont) != 0 || sigaction(SIGCONT, &sa, NULL) != 0)
		install_rc = -errno;
}

int tp_watchdog_install(void)
{
	pthread_once(&install_once, install);
	return install_rc;
}

uint32_t tp_watchdog_sigconts(void)
{
	/* relaxed: see on_sigcont(). */
	return atomic_load_explicit(&sigconts, memory_order_relaxed);
}

void tp_watchdog_start(struct tp_watchdog *w, uint64_t budget_ns, uint64_t now_ns)
{
	memset(w, 0, sizeof(*w));
	w->budget_ns = budget_ns;
	tp_watchdog_kick(w, now_ns);
}

void tp_watchdog_kick(struct tp_watchdog *w, uint64_t now_ns)
{
	w->since_ns = now_ns;
	w->last_ns = now_ns;
	w->out_ns = 0;
	w->conts = tp_watchdog_sigconts();
	/* relaxed: see holds_open. */
	w->holds = atomic_load_explicit(&holds_opened, memory_order_relaxed);
}

bool tp_watchdog_expired(struct tp_watchdog *w, uint64_t now_ns)
{
	if (w->budget_ns == TP_WATCHDOG_NEVER)
		return false;
	/* relaxed: see holds_open. */
	const bool held = atomic_load_explicit(&holds_open, memory_order_relaxed) ||
			  atomic_load_explicit(&holds_opened, memory_order_relaxed) != w->holds;
	if (held || tp_watchdog_sigconts() != w->conts ||
	    now_ns - w->last_ns > TP_WATCHDOG_GAP_NS) {
		/* Stopped (or not run), or waiting for the profiler's host,
		 * since the last look: the time is not the work's. */
		tp_watchdog_kick(w, now_ns);
		w->stops++;
		return false;
	}
	w->last_ns = now_ns;
	if (now_ns - w->since_ns < w->budget_ns)
		return false;
	if (!w->out_ns) {
		w->out_ns = now_ns;
		return false;
	}
	return now_ns - w->out_ns >= TP_WATCHDOG_CONFIRM_NS;
}

uint64_t tp_watchdog_idle_ns(const struct tp_watchdog *w, uint64_t now_ns)
{
	return now_ns - w->since_ns;
}

uint64_t tp_watchdog_sleep_ns(const struct tp_watchdog *w, uint64_t now_ns)
{
	uint64_t s = TP_WATCHDOG_PERIOD_NS;
	if (w->budget_ns != TP_WATCHDOG_NEVER) {
		uint64_t used = now_ns - w->since_ns;
		if (used < w->budget_ns) {
			if (w->budget_ns - used < s)
				s = w->budget_ns - used;
		} else if (w->out_ns) {
			uint64_t waited = now_ns - w->out_ns;
			s = waited < TP_WATCHDOG_CONFIRM_NS ? TP_WATCHDOG_CONFIRM_NS - waited : 0;
		} else {
			s = 0;
		}
	}
	return s < MIN_SLEEP_NS ? MIN_SLEEP_NS : s;
}
