/* SPDX-License-Identifier: MIT */
/* Unit tests of runtime/slot and runtime/release: the fanin/fanout counter
 * protocol of spec/runtime-model.md §2.4 step 7, §2.5, §2.6, §2.9, with the
 * scope bit, and concurrent completion from several scheduler threads. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/release.h"
#include "runtime/slot.h"

#define NS 16
static struct tp_slot slots[NS];

static int setup(void **state)
{
	(void)state;
	memset(slots, 0, sizeof(slots));
	for (uint32_t i = 0; i < NS; i++) {
		tp_slot_init(&slots[i], tp_task_id_make(0, i));
		tp_slot_set_work(&slots[i], 1, 1);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (uint32_t i = 0; i < NS; i++)
		tp_slot_fini(&slots[i]);
	return 0;
}

static int ready_calls;
static struct tp_slot *last_ready;
static void on_ready(struct tp_slot *s, void *ud)
{
	(void)ud;
	ready_calls++;
	last_ready = s;
}

static int consumed_calls;
static void on_consumed(struct tp_slot *s, void *ud)
{
	(void)s;
	(void)ud;
	consumed_calls++;
}

static uint32_t ld(_Atomic uint32_t *p)
{
	return atomic_load(p);
}

static void test_init_and_subtasks(void **state)
{
	(void)state;
	struct tp_slot *s = &slots[0];
	assert_int_equal(tp_slot_state(s), TP_TASK_PENDING);
	assert_int_equal(ld(&s->fanout_count), TP_FANOUT_SCOPE_BIT);
	assert_int_equal(s->kernel_id[0], -1);
	assert_int_equal(TP_TASK_CONSUMED, 2); /* Appendix A item 5 */
	/* block_num 3 on AIC + AIV0: 6 subtasks */
	tp_slot_set_work(s, 1 | 2, 3);
	assert_int_equal(s->total_required_subtasks, 6);
	for (int i = 0; i < 5; i++)
		assert_false(tp_slot_on_subtask_complete(s));
	assert_true(tp_slot_on_subtask_complete(s));
	/* MIX with all three slots, 1 block */
	tp_slot_set_work(s, 7, 1);
	assert_int_equal(s->total_required_subtasks, 3);
	tp_slot_set_work(s, 0, 1); /* DUMMY */
	assert_int_equal(s->total_required_subtasks, 0);
}

static void test_no_producers_ready_at_wire(void **state)
{
	(void)state;
	struct tp_slot *c = &slots[1];
	assert_true(tp_slot_wire_fanin(c));
	assert_int_equal(c->fanin_count, 1);
	assert_int_equal(ld(&c->fanin_refcount), 1);
	assert_false(tp_slot_claim_ready(c)); /* routed once */
}

/* spec §2.5: ready when fanin_refcount reaches fanin_count = N + 1, where
 * the +1 is added when wiring ends. Readiness does not wait for the scope
 * end: the scope bit is on the producer side (fanout) and decides CONSUMED. */
static void test_fanin_n_plus_one(void **state)
{
	(void)state;
	struct tp_slot *p0 = &slots[0], *p1 = &slots[1], *p2 = &slots[2], *c = &slots[3];
	assert_int_equal(tp_slot_add_producer(c, p0, p0->task_id), 1);
	assert_int_equal(tp_slot_add_producer(c, p1, p1->task_id), 1);
	assert_int_equal(tp_slot_add_producer(c, p2, p2->task_id), 1);
	assert_int_equal(ld(&p0->fanout_count), TP_FANOUT_SCOPE_BIT | 1);
	/* p0 completed before wiring: counted at wiring */
	assert_int_equal(tp_slot_complete(p0, on_ready, NULL), 0);
	assert_false(tp_slot_wire_fanin(c));
	assert_int_equal(c->fanin_count, 4);
	assert_int_equal(ld(&c->fanin_refcount), 2); /* p0 + the wiring's 1 */
	assert_ptr_equal(p1->fanout_head->consumer, c);
	assert_null(p0->fanout_head);
	assert_int_equal(tp_slot_complete(p1, on_ready, NULL), 1);
	assert_int_equal(ready_calls, 0);
	assert_int_equal(ld(&c->fanin_refcount), 3);
	assert_int_equal(tp_slot_complete(p2, on_ready, NULL), 1);
	assert_int_equal(ready_calls, 1);
	assert_ptr_equal(last_ready, c);
	assert_int_equal(ld(&c->fanin_refcount), 4);
	assert_true(ld(&c->lifecycle_flags) & TP_SLOT_READY_CLAIMED);
}

static void test_all_producers_completed_before_wiring(void **state)
{
	(void)state;
	struct tp_slot *p0 = &slots[0], *p1 = &slots[1], *c = &slots[2];
	tp_slot_complete(p0, NULL, NULL);
	tp_slot_complete(p1, NULL, NULL);
	assert_int_equal(tp_slot_add_producer(c, p0, p0->task_id), 1);
	assert_int_equal(tp_slot_add_producer(c, p1, p1->task_id), 1);
	assert_true(tp_slot_wire_fanin(c));
	assert_int_equal(c->fanin_count, 3);
	assert_int_equal(ld(&c->fanin_refcount), 3);
}

/* The two halves of tp_slot_complete(), as the scheduler times the
 * resolve walk: no list for a task without consumers (no stamp taken),
 * the consumers' list otherwise, walked once. */
static void test_mark_completed_then_walk(void **state)
{
	(void)state;
	struct tp_slot *leaf = &slots[0], *p = &slots[1], *c0 = &slots[2], *c1 = &slots[3];
	assert_null(tp_slot_mark_completed(leaf));
	assert_int_equal(tp_slot_state(leaf), TP_TASK_COMPLETED);
	assert_true(ld(&leaf->lifecycle_flags) & TP_SLOT_COMPLETION_DONE);
	assert_int_equal(tp_slot_walk_fanout(NULL, on_ready, NULL), 0);
	assert_int_equal(tp_slot_add_producer(c0, p, p->task_id), 1);
	assert_int_equal(tp_slot_add_producer(c1, p, p->task_id), 1);
	assert_false(tp_slot_wire_fanin(c0));
	assert_false(tp_slot_wire_fanin(c1));
	struct tp_dep_node *head = tp_slot_mark_completed(p);
	assert_non_null(head);
	assert_int_equal(tp_slot_state(p), TP_TASK_COMPLETED);
	assert_int_equal(ready_calls, 0); /* nothing released before the walk */
	assert_int_equal(tp_slot_walk_fanout(head, on_ready, NULL), 2);
	assert_int_equal(ready_calls, 2);
	assert_true(ld(&c0->lifecycle_flags) & TP_SLOT_READY_CLAIMED);
	assert_true(ld(&c1->lifecycle_flags) & TP_SLOT_READY_CLAIMED);
}

/* Drive @s through complete + own release. */
static void finish(struct tp_slot *s)
{
	tp_slot_complete(s, on_ready, NULL);
	tp_slot_release(s, on_consumed, NULL);
}

/* spec §2.5/§2.6: CONSUMED ⇔ COMPLETED and fanout_refcount ==
 * fanout_count = SCOPE_BIT | consumers; the scope end adds SCOPE_BIT. */
static void test_scope_bit_and_consumed(void **state)
{
	(void)state;
	struct tp_slot *p = &slots[0], *c = &slots[1];
	assert_int_equal(tp_slot_add_producer(c, p, p->task_id), 1);
	tp_slot_wire_fanin(c);
	finish(p);
	assert_int_equal(ready_calls, 1);
	assert_int_equal(tp_slot_state(p), TP_TASK_COMPLETED);
	finish(c); /* consumer done, releases p: fanout_refcount 1 */
	assert_int_equal(ld(&p->fanout_refcount), 1);
	assert_int_equal(tp_slot_state(p), TP_TASK_COMPLETED); /* scope open */
	assert_int_equal(consumed_calls, 0);
	/* scope end: both become CONSUMED */
	assert_true(tp_slot_scope_end(p));
	assert_int_equal(ld(&p->fanout_refcount), TP_FANOUT_SCOPE_BIT | 1);
	assert_int_equal(tp_slot_state(p), TP_TASK_CONSUMED);
	assert_true(tp_slot_scope_end(c));
	assert_int_equal(tp_slot_state(c), TP_TASK_CONSUMED);
	/* a CONSUMED producer cannot be claimed */
	assert_int_equal(tp_slot_add_producer(&slots[2], p, p->task_id), 0);
	assert_int_equal(ld(&p->fanout_count), TP_FANOUT_SCOPE_BIT | 1);
	/* nor a slot that now holds another task */
	assert_int_equal(tp_slot_add_producer(&slots[2], &slots[3],
					      tp_task_id_make(1, 3)), 0);
}

static void test_scope_end_before_completion(void **state)
{
	(void)state;
	struct tp_slot *p = &slots[0], *c = &slots[1];
	assert_int_equal(tp_slot_add_producer(c, p, p->task_id), 1);
	tp_slot_wire_fanin(c);
	assert_false(tp_slot_scope_end(p)); /* not COMPLETED yet */
	assert_false(tp_slot_scope_end(c));
	finish(p);
	assert_int_equal(tp_slot_state(p), TP_TASK_COMPLETED); /* c holds it */
	finish(c); /* releases p (→ CONSUMED), then itself (→ CONSUMED) */
	assert_int_equal(consumed_calls, 2);
	assert_int_equal(tp_slot_state(p), TP_TASK_CONSUMED);
	assert_int_equal(tp_slot_state(c), TP_TASK_CONSUMED);
}

/* A consumer may release its producer before the producer's own deferred
 * release ran; the producer must not be CONSUMED (reclaimable) until then. */
static void test_deferred_release_keeps_producer(void **state)
{
	(void)state;
	struct tp_slot *g = &slots[0], *p = &slots[1], *c = &slots[2];
	struct tp_release_list rl = { 0 };
	assert_int_equal(tp_slot_add_producer(p, g, g->task_id), 1);
	tp_slot_wire_fanin(p);
	assert_int_equal(tp_slot_add_producer(c, p, p->task_id), 1);
	tp_slot_wire_fanin(c);
	tp_slot_scope_end(g);
	tp_slot_scope_end(p);
	tp_slot_scope_end(c);
	finish(g);
	tp_slot_complete(p, on_ready, NULL);
	assert_int_equal(tp_release_defer(&rl, p, on_consumed, NULL), 0);
	finish(c); /* releases p first */
	assert_int_equal(tp_slot_state(p), TP_TASK_COMPLETED);
	assert_int_equal(tp_slot_state(g), TP_TASK_COMPLETED); /* p holds g */
	assert_int_equal(tp_release_flush(&rl, on_consumed, NULL), 1);
	assert_int_equal(tp_slot_state(g), TP_TASK_CONSUMED);
	assert_int_equal(tp_slot_state(p), TP_TASK_CONSUMED);
	assert_int_equal(rl.n, 0);
}

static void test_release_list_flushes_when_full(void **state)
{
	(void)state;
	static struct tp_slot many[TP_DEFERRED_RELEASE_CAP + 1];
	struct tp_release_list rl = { 0 };
	for (uint32_t i = 0; i <= TP_DEFERRED_RELEASE_CAP; i++) {
		tp_slot_init(&many[i], tp_task_id_make(2, i));
		tp_slot_wire_fanin(&many[i]);
		tp_slot_scope_end(&many[i]);
		tp_slot_complete(&many[i], NULL, NULL);
		uint32_t f = tp_release_defer(&rl, &many[i], on_consumed, NULL);
		assert_int_equal(f, i == TP_DEFERRED_RELEASE_CAP ? TP_DEFERRED_RELEASE_CAP : 0);
	}
	assert_int_equal(consumed_calls, TP_DEFERRED_RELEASE_CAP);
	assert_int_equal(rl.n, 1);
	assert_int_equal(tp_release_flush(&rl, on_consumed, NULL), 1);
	assert_int_equal(consumed_calls, TP_DEFERRED_RELEASE_CAP + 1);
}

static void test_fanin_spill(void **state)
{
	(void)state;
	enum { N = TP_FANIN_INLINE_CAP + 70 };
	struct tp_slot *prod = calloc(N, sizeof(*prod));
	struct tp_slot *c = calloc(1, sizeof(*c));
	assert_non_null(prod);
	tp_slot_init(c, tp_task_id_make(1, 0));
	for (uint32_t i = 0; i < N; i++) {
		tp_slot_init(&prod[i], tp_task_id_make(0, i));
		assert_int_equal(tp_slot_add_producer(c, &prod[i], prod[i].task_id), 1);
	}
	assert_false(tp_slot_wire_fanin(c));
	assert_int_equal(c->fanin_count, N + 1);
	for (uint32_t i = 0; i < N; i++)
		tp_slot_complete(&prod[i], on_ready, NULL);
	assert_int_equal(ready_calls, 1);
	assert_ptr_equal(tp_slot_fanin_edge(c, N - 1)->producer, &prod[N - 1]);
	tp_slot_fini(c);
	free(c);
	free(prod);
}

/* ---- concurrency: several scheduler threads complete the producers of
 * one consumer while the orchestrator is still wiring it ---- */

#define THREADS 4
#define PRODUCERS 32
#define ROUNDS 300

struct round {
	struct tp_slot prod[PRODUCERS];
	struct tp_slot cons;
	_Atomic uint32_t next;    /* next producer to complete */
	_Atomic uint32_t ready;   /* ready callbacks for cons */
	_Atomic uint32_t consumed;
};

static struct round *rounds;
static _Atomic uint32_t go_round;

static void mt_ready(struct tp_slot *s, void *ud)
{
	struct round *r = ud;
	assert_ptr_equal(s, &r->cons);
	atomic_fetch_add(&r->ready, 1);
}

static void mt_consumed(struct tp_slot *s, void *ud)
{
	(void)s;
	struct round *r = ud;
	atomic_fetch_add(&r->consumed, 1);
}

static void *scheduler(void *arg)
{
	(void)arg;
	struct tp_release_list rl = { 0 };
	for (uint32_t k = 0; k < ROUNDS; k++) {
		while (atomic_load_explicit(&go_round, memory_order_acquire) <= k)
			sched_yield(); /* 2-core machines: let the orchestrator run */
		struct round *r = &rounds[k];
		for (;;) {
			uint32_t i = atomic_fetch_add(&r->next, 1);
			if (i >= PRODUCERS)
				break;
			tp_slot_complete(&r->prod[i], mt_ready, r);
			tp_release_defer(&rl, &r->prod[i], mt_consumed, r);
			tp_release_flush(&rl, mt_consumed, r);
		}
	}
	return NULL;
}

static void test_concurrent_completion(void **state)
{
	(void)state;
	rounds = calloc(ROUNDS, sizeof(*rounds));
	assert_non_null(rounds);
	atomic_store(&go_round, 0);
	pthread_t th[THREADS];
	for (int t = 0; t < THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, scheduler, NULL), 0);
	for (uint32_t k = 0; k < ROUNDS; k++) {
		struct round *r = &rounds[k];
		tp_slot_init(&r->cons, tp_task_id_make(1, k));
		for (uint32_t i = 0; i < PRODUCERS; i++) {
			tp_slot_init(&r->prod[i], tp_task_id_make(0, k * PRODUCERS + i));
			tp_slot_set_work(&r->prod[i], 2, 1);
		}
		/* claim all, then let the schedulers complete them while we
		 * wire: the +1 keeps the consumer from going ready early */
		for (uint32_t i = 0; i < PRODUCERS; i++)
			assert_int_equal(tp_slot_add_producer(&r->cons, &r->prod[i],
							      r->prod[i].task_id), 1);
		atomic_store_explicit(&go_round, k + 1, memory_order_release);
		if (tp_slot_wire_fanin(&r->cons))
			mt_ready(&r->cons, r);
		/* the scope of the producers ends concurrently too */
		for (uint32_t i = 0; i < PRODUCERS; i++)
			if (tp_slot_scope_end(&r->prod[i]))
				mt_consumed(&r->prod[i], r);
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	for (uint32_t k = 0; k < ROUNDS; k++) {
		struct round *r = &rounds[k];
		assert_int_equal(atomic_load(&r->ready), 1);
		assert_int_equal(ld(&r->cons.fanin_refcount), PRODUCERS + 1);
		assert_int_equal(r->cons.fanin_count, PRODUCERS + 1);
		/* the consumer has not released its producers: none CONSUMED */
		assert_int_equal(atomic_load(&r->consumed), 0);
		tp_slot_complete(&r->cons, NULL, NULL);
		tp_slot_release(&r->cons, mt_consumed, r);
		assert_int_equal(atomic_load(&r->consumed), PRODUCERS);
		for (uint32_t i = 0; i < PRODUCERS; i++) {
			assert_int_equal(tp_slot_state(&r->prod[i]), TP_TASK_CONSUMED);
			assert_int_equal(ld(&r->prod[i].fanout_refcount),
					 TP_FANOUT_SCOPE_BIT | 1);
		}
	}
	free(rounds);
}

static int reset_counts(void **state)
{
	ready_calls = consumed_calls = 0;
	last_ready = NULL;
	return setup(state);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, reset_counts, teardown)
	const struct CMUnitTest tests[] = {
		T(test_init_and_subtasks),
		T(test_no_producers_ready_at_wire),
		T(test_fanin_n_plus_one),
		T(test_all_producers_completed_before_wiring),
		T(test_mark_completed_then_walk),
		T(test_scope_bit_and_consumed),
		T(test_scope_end_before_completion),
		T(test_deferred_release_keeps_producer),
		T(test_release_list_flushes_when_full),
		T(test_fanin_spill),
		T(test_concurrent_completion),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
