/* SPDX-License-Identifier: MIT */
#include "platform/doorbell.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"

static long futex(_Atomic uint32_t *addr, int op, uint32_t val,
		  const struct timespec *timeout)
{
	/* The kernel reads the word as a plain u32: an _Atomic uint32_t has
	 * the same size and representation (lock-free, no hidden state). */
	return syscall(SYS_futex, (uint32_t *)addr, op, val, timeout, NULL, 0);
}

void tp_doorbell_init(struct tp_doorbell *db)
{
	atomic_init(&db->seq, 0);
	atomic_init(&db->waiters, 0);
}

void tp_doorbell_ring_fenced(struct tp_doorbell *db)
{
	/* relaxed: ordered by the caller's seq_cst fence (see
	 * tp_doorbell_ring()). */
	if (atomic_load_explicit(&db->waiters, memory_order_relaxed) == 0)
		return;
	/* release: a waiter whose futex_wait returns because seq changed,
	 * and which then acquires seq, sees the condition stores. */
	atomic_fetch_add_explicit(&db->seq, 1, memory_order_release);
	futex(&db->seq, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
}

void tp_doorbell_ring(struct tp_doorbell *db)
{
	/* Fence (seq_cst): orders the caller's stores of the condition
	 * before the load of `waiters` in tp_doorbell_ring_fenced(). Pairs
	 * with the seq_cst fence in tp_doorbell_wait() between its `waiters`
	 * increment and its re-check: either that re-check sees our
	 * condition stores, or our load sees the waiter (Dekker), so no
	 * sleeper is left behind. With no waiter announced, nothing else is
	 * needed: a thread that announces itself later re-checks after its
	 * fence and sees the condition, and a spinning waiter polls the
	 * condition itself. So the common case writes nothing shared: no seq
	 * bump (a locked RMW on a line every ringer of this doorbell would
	 * bounce). */
	atomic_thread_fence(memory_order_seq_cst);
	tp_doorbell_ring_fenced(db);
}

int tp_doorbell_wait(struct tp_doorbell *db, tp_doorbell_cond_fn ready, void *arg,
		     uint64_t timeout_ns)
{
	if (ready(arg))
		return 0;
	for (int i = 0; i < TP_DOORBELL_SPINS; i++) {
		tp_cpu_relax();
		if (ready(arg))
			return 0;
	}
	for (int i = 0; i < TP_DOORBELL_YIELDS; i++) {
		sched_yield();
		if (ready(arg))
			return 0;
	}

	uint64_t deadline = 0;
	if (timeout_ns != TP_DOORBELL_FOREVER) {
		uint64_t now = tp_now_ns();
		deadline = now + timeout_ns < now ? UINT64_MAX : now + timeout_ns;
	}
	for (;;) {
		/* acquire: pairs with the release increment in ring(). */
		uint32_t key = atomic_load_explicit(&db->seq, memory_order_acquire);
		/* relaxed: `waiters` is ordered by the fences (here and in
		 * ring()); the decrements below may be late, which costs a
		 * ring at most one needless futex wake. */
		atomic_fetch_add_explicit(&db->waiters, 1, memory_order_relaxed);
		/* Fence (seq_cst): orders the `waiters` increment before the
		 * re-check of the condition; pairs with the first fence of
		 * ring() (see there). */
		atomic_thread_fence(memory_order_seq_cst);
		if (ready(arg)) {
			atomic_fetch_sub_explicit(&db->waiters, 1, memory_order_relaxed);
			return 0;
		}
		struct timespec ts, *tsp = NULL;
		if (deadline) {
			uint64_t now = tp_now_ns();
			if (now >= deadline) {
				atomic_fetch_sub_explicit(&db->waiters, 1,
							  memory_order_relaxed);
				return ready(arg) ? 0 : -ETIMEDOUT;
			}
			uint64_t left = deadline - now;
			ts.tv_sec = (time_t)(left / 1000000000u);
			ts.tv_nsec = (long)(left % 1000000000u);
			tsp = &ts;
		}
		/* Sleeps only while seq == key: a ring after our load of key
		 * changed seq and makes this return at once (EAGAIN). */
		futex(&db->seq, FUTEX_WAIT_PRIVATE, key, tsp);
		atomic_fetch_sub_explicit(&db->waiters, 1, memory_order_relaxed);
		if (ready(arg))
			return 0;
	}
}
