/* SPDX-License-Identifier: MIT */
/* Unit tests of runtime/task_id and runtime/ring: ids and ring selection
 * (spec/runtime-model.md §2.2), in-order reclaim of the task window and the
 * packed-output heap (§2.6, §7.1 item 4), window-full back-pressure with a
 * sleeping orchestrator, the progress hook, deadlock report, and a threaded
 * reclaim stress run. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "runtime/ring.h"
#include "taskprof/taskprof.h"

static void test_task_id(void **state)
{
	(void)state;
	tp_task_id id = tp_task_id_make(3, 0x12345678);
	assert_int_equal(id, 0x0000000312345678ull);
	assert_int_equal(tp_task_id_ring(id), 3);
	assert_int_equal(tp_task_id_local(id), 0x12345678);
	assert_true(tp_task_id_valid(id));
	assert_false(tp_task_id_valid(TP_TASK_ID_INVALID));
	/* ring = min(scope depth, 3) */
	assert_int_equal(tp_ring_for_scope_depth(0), 0);
	assert_int_equal(tp_ring_for_scope_depth(2), 2);
	assert_int_equal(tp_ring_for_scope_depth(3), 3);
	assert_int_equal(tp_ring_for_scope_depth(7), 3);
}

static void test_init_errors(void **state)
{
	(void)state;
	struct tp_ring r;
	assert_int_equal(tp_ring_init(&r, 4, 8, NULL, 0), -EINVAL);
	assert_int_equal(tp_ring_init(&r, 0, 6, NULL, 0), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "power of 2"));
	assert_int_equal(tp_ring_init(&r, 0, 8, NULL, 1000), -EINVAL);
}

/* Drive the slot of @a to CONSUMED through the real protocol (no
 * consumers: complete, own release, scope end) and advance its ring. */
static uint32_t consume(struct tp_ring *r, struct tp_slot *s)
{
	tp_slot_wire_fanin(s);
	tp_slot_complete(s, NULL, NULL);
	tp_slot_release(s, NULL, NULL);
	assert_true(tp_slot_scope_end(s));
	return tp_ring_advance(r);
}

static void test_in_order_reclaim(void **state)
{
	(void)state;
	struct tp_ring r;
	assert_int_equal(tp_ring_init(&r, 2, 8, NULL, 0), 0);
	struct tp_ring_alloc a[5];
	for (int i = 0; i < 5; i++) {
		assert_int_equal(tp_ring_try_alloc(&r, 0, &a[i]), 0);
		assert_int_equal(a[i].task_id, tp_task_id_make(2, (uint32_t)i));
		assert_ptr_equal(a[i].slot, &r.slots[i]);
		assert_null(a[i].packed);
	}
	assert_int_equal(tp_ring_current(&r), 5);
	/* out-of-order completion: 3, 1, 4 → nothing reclaimed */
	assert_int_equal(consume(&r, a[3].slot), 0);
	assert_int_equal(consume(&r, a[1].slot), 0);
	assert_int_equal(consume(&r, a[4].slot), 0);
	assert_int_equal(tp_ring_last_alive(&r), 0);
	/* 0 → 0 and 1 reclaimed; 2 blocks 3 and 4 */
	assert_int_equal(consume(&r, a[0].slot), 2);
	assert_int_equal(tp_ring_last_alive(&r), 2);
	assert_int_equal(consume(&r, a[2].slot), 3);
	assert_int_equal(tp_ring_last_alive(&r), 5);
	assert_int_equal(tp_ring_in_flight(&r), 0);
	/* slots are reused: local 8 lands in slot 0 */
	struct tp_ring_alloc b;
	for (int i = 5; i <= 8; i++)
		assert_int_equal(tp_ring_try_alloc(&r, 0, &b), 0);
	assert_int_equal(tp_task_id_local(b.task_id), 8);
	assert_ptr_equal(b.slot, &r.slots[0]);
	assert_int_equal(tp_slot_state(b.slot), TP_TASK_PENDING);
	tp_ring_fini(&r);
}

static void test_window_full(void **state)
{
	(void)state;
	struct tp_ring r;
	struct tp_ring_alloc a[4];
	assert_int_equal(tp_ring_init(&r, 0, 4, NULL, 0), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tp_ring_try_alloc(&r, 0, &a[i]), 0);
	/* window - 1 = 3 tasks in flight at most */
	assert_int_equal(tp_ring_try_alloc(&r, 0, &a[3]), -EAGAIN);
	consume(&r, a[1].slot);
	assert_int_equal(tp_ring_try_alloc(&r, 0, &a[3]), -EAGAIN);
	consume(&r, a[0].slot);
	assert_int_equal(tp_ring_last_alive(&r), 2);
	assert_int_equal(tp_ring_try_alloc(&r, 0, &a[3]), 0);
	tp_ring_fini(&r);
}

static void test_heap_reclaimed_with_window(void **state)
{
	(void)state;
	struct tp_ring r;
	struct tp_ring_alloc a, b, c, d;
	assert_int_equal(tp_ring_init(&r, 1, 16, NULL, 4096), 0);
	assert_int_equal(tp_ring_try_alloc(&r, 8192, &a), -ENOSPC);
	assert_int_equal(tp_ring_try_alloc(&r, 1000, &a), 0);
	assert_int_equal(a.packed_bytes, 1024);
	assert_ptr_equal(a.packed, r.heap);
	assert_int_equal(tp_ring_try_alloc(&r, 2048, &b), 0);
	assert_ptr_equal(b.packed, r.heap + 1024);
	/* 3072 used; 2048 more would straddle the end: skip to the next lap,
	 * which needs 1024 + 2048 + 3072 > 4096 reclaimed bytes */
	assert_int_equal(tp_ring_try_alloc(&r, 2048, &c), -EAGAIN);
	consume(&r, a.slot);
	assert_int_equal(atomic_load(&r.heap_tail), 1024);
	assert_int_equal(tp_ring_try_alloc(&r, 2048, &c), -EAGAIN);
	consume(&r, b.slot);
	assert_int_equal(atomic_load(&r.heap_tail), 3072);
	assert_int_equal(tp_ring_try_alloc(&r, 2048, &c), 0);
	assert_ptr_equal(c.packed, r.heap); /* wrapped */
	/* an output-less task takes no heap */
	assert_int_equal(tp_ring_try_alloc(&r, 0, &d), 0);
	assert_int_equal(d.slot->packed_base, d.slot->packed_end);
	consume(&r, c.slot);
	consume(&r, d.slot);
	assert_int_equal(atomic_load(&r.heap_tail), r.heap_top);
	tp_ring_fini(&r);
}

/* ---- back-pressure: the orchestrator sleeps until a task is consumed */

struct bp {
	struct tp_ring *r;
	_Atomic int done;
	int rc;
	struct tp_ring_alloc out;
};

static void *orchestrator(void *arg)
{
	struct bp *b = arg;
	b->rc = tp_ring_alloc(b->r, 0, NULL, &b->out);
	atomic_store(&b->done, 1);
	return NULL;
}

static void test_backpressure_releases_on_consume(void **state)
{
	(void)state;
	struct tp_ring r;
	struct tp_ring_alloc a[3];
	assert_int_equal(tp_ring_init(&r, 0, 4, NULL, 0), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tp_ring_try_alloc(&r, 0, &a[i]), 0);
	struct bp b = { .r = &r };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, orchestrator, &b), 0);
	usleep(50 * 1000);
	assert_int_equal(atomic_load(&b.done), 0); /* blocked */
	assert_int_equal(atomic_load(&r.waits_window), 1);
	assert_int_equal(atomic_load(&r.reclaim_bell.waiters), 1); /* asleep */
	consume(&r, a[1].slot); /* not the oldest: still blocked */
	usleep(20 * 1000);
	assert_int_equal(atomic_load(&b.done), 0);
	consume(&r, a[0].slot);
	pthread_join(th, NULL);
	assert_int_equal(b.rc, 0);
	assert_int_equal(tp_task_id_local(b.out.task_id), 3);
	tp_ring_fini(&r);
}

struct hook_ctx {
	struct tp_ring *r;
	struct tp_ring_alloc *a;
	int calls;
};

/* A scheduler step run by the blocked allocator: consumes the oldest. */
static int progress_hook(void *ud)
{
	struct hook_ctx *h = ud;
	h->calls++;
	consume(h->r, h->a[h->calls - 1].slot);
	return 1;
}

static void test_progress_hook(void **state)
{
	(void)state;
	struct tp_ring r;
	struct tp_ring_alloc a[3], out;
	assert_int_equal(tp_ring_init(&r, 0, 4, NULL, 0), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tp_ring_try_alloc(&r, 0, &a[i]), 0);
	struct hook_ctx h = { &r, a, 0 };
	struct tp_ring_wait w = { progress_hook, &h, 0 };
	assert_int_equal(tp_ring_alloc(&r, 0, &w, &out), 0);
	assert_int_equal(h.calls, 1);
	tp_ring_fini(&r);
}

static void test_deadlock_reported(void **state)
{
	(void)state;
	struct tp_ring r;
	struct tp_ring_alloc a, b;
	assert_int_equal(tp_ring_init(&r, 1, 2, NULL, 0), 0);
	assert_int_equal(tp_ring_try_alloc(&r, 0, &a), 0);
	struct tp_ring_wait w = { NULL, NULL, 30ull * 1000 * 1000 };
	uint64_t t0 = tp_now_ns();
	assert_int_equal(tp_ring_alloc(&r, 0, &w, &b), -EDEADLK);
	assert_true(tp_now_ns() - t0 >= 30ull * 1000 * 1000);
	assert_non_null(strstr(tp_last_error(), "ring 1: task window full"));
	tp_ring_fini(&r);
}

/* ---- stress: an orchestrator allocates through a small window while
 * scheduler threads consume tasks in whatever order they grab them ---- */

#define STRESS_TASKS 20000u
#define STRESS_THREADS 3

static struct tp_ring sr;
static _Atomic uint32_t published; /* tasks the orchestrator handed out */
static _Atomic uint32_t grabbed;

static void *stress_sched(void *arg)
{
	(void)arg;
	for (;;) {
		uint32_t i = atomic_load_explicit(&grabbed, memory_order_relaxed);
		if (i >= STRESS_TASKS)
			return NULL;
		if (i >= atomic_load_explicit(&published, memory_order_acquire)) {
			sched_yield();
			continue;
		}
		if (!atomic_compare_exchange_weak(&grabbed, &i, i + 1))
			continue;
		struct tp_slot *s = tp_ring_slot(&sr, i);
		assert_int_equal(tp_task_id_local(s->task_id), i);
		tp_slot_complete(s, NULL, NULL);
		tp_slot_release(s, NULL, NULL);
		if (tp_slot_scope_end(s))
			tp_ring_advance(&sr);
	}
}

static void test_reclaim_stress(void **state)
{
	(void)state;
	assert_int_equal(tp_ring_init(&sr, 0, 16, NULL, 16 * 1024), 0);
	atomic_store(&published, 0);
	atomic_store(&grabbed, 0);
	pthread_t th[STRESS_THREADS];
	for (int t = 0; t < STRESS_THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, stress_sched, NULL), 0);
	for (uint32_t i = 0; i < STRESS_TASKS; i++) {
		struct tp_ring_alloc a;
		assert_int_equal(tp_ring_alloc(&sr, (i % 3) * 1024, NULL, &a), 0);
		assert_int_equal(tp_task_id_local(a.task_id), i);
		if (a.packed)
			memset(a.packed, (int)i, a.packed_bytes); /* we own it now */
		tp_slot_wire_fanin(a.slot);
		atomic_store_explicit(&published, i + 1, memory_order_release);
	}
	for (int t = 0; t < STRESS_THREADS; t++)
		pthread_join(th[t], NULL);
	assert_int_equal(tp_ring_last_alive(&sr), STRESS_TASKS);
	assert_int_equal(atomic_load(&sr.heap_tail), sr.heap_top);
	tp_ring_fini(&sr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_task_id),
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_in_order_reclaim),
		cmocka_unit_test(test_window_full),
		cmocka_unit_test(test_heap_reclaimed_with_window),
		cmocka_unit_test(test_backpressure_releases_on_consume),
		cmocka_unit_test(test_progress_hook),
		cmocka_unit_test(test_deadlock_reported),
		cmocka_unit_test(test_reclaim_stress),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
