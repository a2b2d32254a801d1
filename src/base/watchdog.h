/* SPDX-License-Identifier: MIT */
/*
 * base/watchdog.h — a "no progress for T" deadline that does not count the
 * time the process spent stopped.
 *
 * The runtime fails a run whose work makes no progress for its stall
 * timeout (runtime/engine.h stall_timeout_ms: the scheduler's progress
 * watchdog and the orchestrator's ring back-pressure). Wall time alone
 * would also count the time the process was stopped (Ctrl-Z / SIGTSTP,
 * SIGSTOP, a debugger) and turn "fg" into a reported deadlock. A
 * tp_watchdog restarts its budget when either
 *
 *   - the process received a SIGCONT since the budget started: a
 *     process-wide counter bumped by a SIGCONT handler
 *     (tp_watchdog_install(), which chains any handler installed before);
 *   - the checking thread itself did not run for TP_WATCHDOG_GAP_NS
 *     between two checks: a stop without SIGCONT (ptrace), or a stop
 *     whose SIGCONT handler has not run yet when the thread resumes.
 *
 * and, once the budget ran out, it fires only at a later check, at least
 * TP_WATCHDOG_CONFIRM_NS after the first check that saw it run out, with
 * no SIGCONT in between: the thread that runs the SIGCONT handler may be
 * scheduled after the checking thread on resume.
 *
 * Time during which a profiler's producer waits for the host at a
 * backpressure gate (tp_watchdog_hold(), transport/dev_engine.c) is not
 * the work's either: a check that sees a hold open, or one opened since
 * the budget started, restarts the budget. A slow host makes the device
 * wait for buffers (up to the transport's 30 s backstop) and, through the
 * parked schedulers, the orchestrator for ring space; neither is a stall
 * of the run.
 *
 * A caller checks at least every TP_WATCHDOG_PERIOD_NS while it waits
 * (bounded sleeps), or a gap would be taken for a stop. One watchdog
 * belongs to one thread; only the SIGCONT counter is shared.
 */
#ifndef TASKPROF_BASE_WATCHDOG_H
#define TASKPROF_BASE_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>

/* A budget that never runs out. */
#define TP_WATCHDOG_NEVER UINT64_MAX
/* Longest sleep between two checks of a waiting caller (ns). */
#define TP_WATCHDOG_PERIOD_NS (100ull * 1000 * 1000)
/* A gap between two checks longer than this restarts the budget (ns). */
#define TP_WATCHDOG_GAP_NS (1000ull * 1000 * 1000)
/* Time between the first check that sees the budget run out and the
 * check that may fire (ns). */
#define TP_WATCHDOG_CONFIRM_NS (50ull * 1000 * 1000)

/**
 * struct tp_watchdog - one thread's deadline; fields are private.
 * @budget_ns:  ns without progress before it fires; TP_WATCHDOG_NEVER.
 * @since_ns:   start of the current budget (tp_now_ns() clock).
 * @last_ns:    the last check or kick (ns, tp_now_ns() clock).
 * @out_ns:     the first check that saw the budget run out (ns,
 *              tp_now_ns() clock); 0 if none.
 * @conts:      the SIGCONT count when the budget started.
 * @stops:      times a SIGCONT, a gap or a hold restarted the budget.
 * @holds:      the hold count (tp_watchdog_hold()) when the budget started.
 */
struct tp_watchdog {
	uint64_t budget_ns;
	uint64_t since_ns;
	uint64_t last_ns;
	uint64_t out_ns;
	uint32_t conts;
	uint32_t stops;
	uint32_t holds;
};

/**
 * tp_watchdog_install() - install the process's SIGCONT handler, once
 * (later calls do nothing). The handler counts SIGCONTs and then calls the
 * handler that was installed before it (a function; SIG_DFL and SIG_IGN
 * need no call: the continue action itself happens regardless). It is
 * installed with SA_RESTART, so interrupted system calls that can be
 * restarted are. Thread-safe; async-signal-safe handler.
 *
 * Return: 0; -errno when sigaction() failed (the gap rule still works).
 */
int tp_watchdog_install(void);

/**
 * tp_watchdog_sigconts() - SIGCONTs counted since tp_watchdog_install().
 *
 * Return: the count (wraps around; compare for inequality only); 0 before
 * the handler is installed.
 */
uint32_t tp_watchdog_sigconts(void);

/**
 * tp_watchdog_hold() - a profiler's producer starts waiting for the host
 * at a backpressure gate: until the matching tp_watchdog_unhold(), and for
 * every watchdog whose budget started before this call, no time counts as
 * lack of progress (the budgets restart at their next check).
 * Process-wide, lock-free (two relaxed atomic increments); calls nest.
 */
void tp_watchdog_hold(void);

/** tp_watchdog_unhold() - the producer of a tp_watchdog_hold() goes on. */
void tp_watchdog_unhold(void);

/**
 * tp_watchdog_start() - start (or restart) @w with a budget.
 * @w:         the watchdog.
 * @budget_ns: ns without progress before tp_watchdog_expired() is true;
 *             TP_WATCHDOG_NEVER: never.
 * @now_ns:    tp_now_ns() (ns of CLOCK_MONOTONIC_RAW).
 */
void tp_watchdog_start(struct tp_watchdog *w, uint64_t budget_ns, uint64_t now_ns);

/**
 * tp_watchdog_kick() - progress: the budget starts again.
 * @w:      the watchdog.
 * @now_ns: tp_now_ns() (ns of CLOCK_MONOTONIC_RAW).
 */
void tp_watchdog_kick(struct tp_watchdog *w, uint64_t now_ns);

/**
 * tp_watchdog_expired() - check @w at @now_ns.
 * @w:      the watchdog, started with tp_watchdog_start().
 * @now_ns: tp_now_ns() (ns of CLOCK_MONOTONIC_RAW), never less than the
 *          previous check's.
 *
 * Restarts the budget when a SIGCONT was counted since it started, when
 * this check comes more than TP_WATCHDOG_GAP_NS after the previous one, or
 * when a hold (tp_watchdog_hold()) is open or was opened since.
 *
 * Return: true when the budget ran out at a previous check at least
 * TP_WATCHDOG_CONFIRM_NS ago and is still out; false otherwise (always
 * for TP_WATCHDOG_NEVER).
 */
bool tp_watchdog_expired(struct tp_watchdog *w, uint64_t now_ns);

/**
 * tp_watchdog_idle_ns() - time without progress.
 * @w:      the watchdog.
 * @now_ns: tp_now_ns().
 *
 * Return: ns since the last kick or restart of the budget. What a stall
 * message reports: it exceeds the budget by up to TP_WATCHDOG_PERIOD_NS +
 * TP_WATCHDOG_CONFIRM_NS, the check's resolution.
 */
uint64_t tp_watchdog_idle_ns(const struct tp_watchdog *w, uint64_t now_ns);

/**
 * tp_watchdog_sleep_ns() - how long a caller may sleep before its next
 * check of @w.
 * @w:      the watchdog.
 * @now_ns: tp_now_ns().
 *
 * Return: ns: the time left of the budget, or once it ran out the time
 * left until the confirming check; at most TP_WATCHDOG_PERIOD_NS, never
 * less than 1 ms.
 */
uint64_t tp_watchdog_sleep_ns(const struct tp_watchdog *w, uint64_t now_ns);

#endif /* TASKPROF_BASE_WATCHDOG_H */
