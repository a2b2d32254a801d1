/* SPDX-License-Identifier: MIT */
/*
 * platform/doorbell.h — park / wake for simulated device threads.
 *
 * The simulated device has 24+ threads (AICPU + one per AICore) on a
 * 2-core machine (issue 3 §1). A real AICore spins on its DATA_MAIN_BASE
 * register for free; a thread that spins here steals a CPU from the thread
 * that has work. So every device-side wait is: check, spin briefly with
 * the seed's relax hint, yield a few times, then sleep on a futex until a
 * writer rings the doorbell.
 *
 * A doorbell is an event count: a waiter announces itself in `waiters`,
 * reads `seq`, re-checks its condition, and sleeps only while `seq` still
 * holds the value it read; ring() bumps `seq` and wakes sleepers when it
 * sees an announced waiter, so a ring between the check and the sleep is
 * never lost. When nobody is announced, which is the common case on the
 * hot path, ring() is one fence and one load: it writes nothing shared.
 *
 * Protocol for writers: store the data the waiter checks (any memory
 * order; the ring's seq_cst fence orders it), then tp_doorbell_ring().
 * Register writes through tp_reg_write() ring the right doorbell
 * themselves (platform/regs.h).
 */
#ifndef TASKPROF_PLATFORM_DOORBELL_H
#define TASKPROF_PLATFORM_DOORBELL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Busy checks before the first yield (each with a pause hint). */
#define TP_DOORBELL_SPINS 64
/* sched_yield() rounds before sleeping on the futex. */
#define TP_DOORBELL_YIELDS 4
/* Timeout meaning "wait forever". */
#define TP_DOORBELL_FOREVER UINT64_MAX

/**
 * struct tp_doorbell - a futex-backed wake-up point; fields are private
 * (set up with tp_doorbell_init(), or zero-filled).
 * @seq:     the futex word; bumped by a ring that sees waiters.
 * @waiters: threads between announce and wake-up.
 */
struct tp_doorbell {
	_Atomic uint32_t seq;      /* the futex word; bumped by a ring that sees waiters */
	_Atomic uint32_t waiters;  /* threads between announce and wake-up */
};

/* Condition a waiter waits for; must be cheap and side-effect free. */
typedef bool (*tp_doorbell_cond_fn)(void *arg);

/**
 * tp_doorbell_init() - make @db ready (seq 0, no waiters).
 * @db: storage of the doorbell; a zero-filled doorbell is also ready.
 */
void tp_doorbell_init(struct tp_doorbell *db);

/**
 * tp_doorbell_ring() - wake every thread sleeping on @db.
 * @db: the doorbell.
 *
 * Call after storing what the waiters check. Costs one fence and one load
 * when no waiter has announced itself (then `seq` is left as it is); an
 * atomic increment of `seq` and a futex wake otherwise.
 */
void tp_doorbell_ring(struct tp_doorbell *db);

/**
 * tp_doorbell_ring_fenced() - tp_doorbell_ring() without its fence.
 * @db: the doorbell.
 *
 * For a caller that rings several doorbells: it issues
 * atomic_thread_fence(memory_order_seq_cst) once, after its condition
 * stores, then calls this for each doorbell. Without that fence a
 * sleeper can be missed.
 */
void tp_doorbell_ring_fenced(struct tp_doorbell *db);

/**
 * tp_doorbell_wait() - wait until @ready(@arg) is true.
 * @db:         the doorbell that writers of the condition ring.
 * @ready:      the condition.
 * @arg:        passed to @ready.
 * @timeout_ns: nanoseconds to wait at most (a duration), or
 *              TP_DOORBELL_FOREVER.
 *
 * Checks @ready first and returns at once if it holds; otherwise spins
 * TP_DOORBELL_SPINS checks, yields TP_DOORBELL_YIELDS times, then sleeps
 * on the futex between rings, re-checking after each.
 *
 * Return: 0 when @ready returned true, -ETIMEDOUT when the timeout passed
 * first.
 */
int tp_doorbell_wait(struct tp_doorbell *db, tp_doorbell_cond_fn ready, void *arg,
		     uint64_t timeout_ns);

/**
 * tp_cpu_relax() - the seed's SPIN_WAIT_HINT for one busy-wait iteration.
 *
 * Inline: it sits inside spin loops. A pause instruction where there is
 * one (lets the sibling hyper-thread run, saves power), else a compiler
 * barrier.
 */
static inline void tp_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* TASKPROF_PLATFORM_DOORBELL_H */
