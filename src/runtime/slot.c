/* SPDX-License-Identifier: MIT */
#include "runtime/slot.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "platform/doorbell.h" /* tp_cpu_relax() */

/* Busy checks of a held fanout lock before each sched_yield(): the holder
 * runs a handful of instructions, but on a 2-core machine it may have been
 * preempted, and spinning on would only delay it. */
#define SLOT_LOCK_SPINS 128

static void fanout_lock(struct tp_slot *s)
{
	for (;;) {
		/* acquire: pairs with the release in fanout_unlock(), so the
		 * previous holder's counter and list changes are visible. */
		if (!atomic_exchange_explicit(&s->fanout_lock, 1, memory_order_acquire))
			return;
		for (int i = 0; atomic_load_explicit(&s->fanout_lock, memory_order_relaxed);
		     i++) {
			if (i < SLOT_LOCK_SPINS) {
				tp_cpu_relax();
			} else {
				sched_yield();
				i = 0;
			}
		}
	}
}

static void fanout_unlock(struct tp_slot *s)
{
	/* release: publishes everything written under the lock. */
	atomic_store_explicit(&s->fanout_lock, 0, memory_order_release);
}

void tp_slot_init(struct tp_slot *s, tp_task_id task_id)
{
	/* Plain-ish stores (relaxed): the slot is not reachable by any other
	 * thread until the ring release-stores current_task_index. */
	atomic_store_explicit(&s->fanout_lock, 0, memory_order_relaxed);
	atomic_store_explicit(&s->fanout_count, TP_FANOUT_SCOPE_BIT, memory_order_relaxed);
	atomic_store_explicit(&s->fanout_refcount, 0, memory_order_relaxed);
	atomic_store_explicit(&s->task_state, TP_TASK_PENDING, memory_order_relaxed);
	s->fanout_head = NULL;
	s->fanin_count = 0;
	atomic_store_explicit(&s->fanin_refcount, 0, memory_order_relaxed);
	atomic_store_explicit(&s->lifecycle_flags, 0, memory_order_relaxed);
	atomic_store_explicit(&s->completed_subtasks, 0, memory_order_relaxed);
	s->total_required_subtasks = 0;
	s->logical_block_num = 1;
	atomic_store_explicit(&s->next_block_idx, 0, memory_order_relaxed);
	s->active_mask = 0;
	s->ring_id = (uint8_t)tp_task_id_ring(task_id);
	s->task_attrs = 0;
	s->task_id = task_id;
	s->kernel_id[0] = s->kernel_id[1] = s->kernel_id[2] = -1;
	s->fanin_n = 0;
}

void tp_slot_set_work(struct tp_slot *s, uint8_t active_mask, uint32_t block_num)
{
	s->active_mask = active_mask & 7u;
	s->logical_block_num = block_num;
	s->total_required_subtasks =
		block_num * (uint32_t)__builtin_popcount(s->active_mask);
}

static int reserve_edge(struct tp_slot *s)
{
	if (s->fanin_n < TP_FANIN_INLINE_CAP)
		return 0;
	uint32_t need = s->fanin_n - TP_FANIN_INLINE_CAP + 1;
	if (need <= s->fanin_spill_cap)
		return 0;
	uint32_t cap = s->fanin_spill_cap ? 2 * s->fanin_spill_cap : TP_FANIN_INLINE_CAP;
	struct tp_fanin_edge *p = realloc(s->fanin_spill, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->fanin_spill = p;
	s->fanin_spill_cap = cap;
	return 0;
}

int tp_slot_add_producer(struct tp_slot *s, struct tp_slot *producer, tp_task_id producer_id)
{
	int rc = reserve_edge(s);
	if (rc)
		return rc;
	fanout_lock(producer);
	/* The slot may have been reclaimed and even reused (only by this
	 * orchestrator thread, so task_id is stable here); a CONSUMED producer
	 * must not be claimed: its slot may be reclaimed at any moment. Nor one
	 * a releasing thread has decided to make CONSUMED (it stores the state
	 * after our lock is free: add_ref_check_consumed()).  relaxed (the
	 * loads and the count's update): under the producer's lock, whose
	 * acquire / release orders them with the other holders'. */
	bool live = producer->task_id == producer_id &&
		    atomic_load_explicit(&producer->task_state, memory_order_relaxed) !=
			    TP_TASK_CONSUMED &&
		    !(atomic_load_explicit(&producer->lifecycle_flags, memory_order_relaxed) &
		      TP_SLOT_CONSUMED_DECIDED);
	if (live)
		atomic_store_explicit(&producer->fanout_count,
				      atomic_load_explicit(&producer->fanout_count,
							   memory_order_relaxed) + 1,
				      memory_order_relaxed);
	fanout_unlock(producer);
	if (!live)
		return 0;
	struct tp_fanin_edge *e = tp_slot_fanin_edge(s, s->fanin_n++);
	e->producer = producer;
	e->node.consumer = s;
	e->node.next = NULL;
	return 1;
}

bool tp_slot_claim_ready(struct tp_slot *s)
{
	/* acq_rel: the winner sees the state published by every fanin
	 * release (they are all ordered before the last refcount add). */
	uint32_t old = atomic_fetch_or_explicit(&s->lifecycle_flags, TP_SLOT_READY_CLAIMED,
						memory_order_acq_rel);
	return !(old & TP_SLOT_READY_CLAIMED);
}

bool tp_slot_wire_fanin(struct tp_slot *s)
{
	uint32_t n = s->fanin_n;
	/* Written before any link below; a completer reaches this slot only
	 * through a link published under the producer's lock, so it sees it. */
	s->fanin_count = n + 1;
	uint32_t done = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct tp_fanin_edge *e = tp_slot_fanin_edge(s, i);
		struct tp_slot *p = e->producer;
		fanout_lock(p);
		/* relaxed: under p's lock, as the COMPLETED store it races with
		 * (tp_slot_mark_completed). */
		if (atomic_load_explicit(&p->task_state, memory_order_relaxed) >=
		    TP_TASK_COMPLETED) {
			done++;
		} else {
			e->node.next = p->fanout_head;
			p->fanout_head = &e->node;
		}
		fanout_unlock(p);
	}
	/* acq_rel: release publishes the payload the orchestrator wrote to
	 * whichever thread brings the count to fanin_count (they chain on this
	 * RMW); acquire, when that thread is us, sees the completers' writes. */
	uint32_t now = atomic_fetch_add_explicit(&s->fanin_refcount, done + 1,
						 memory_order_acq_rel) + done + 1;
	return now == s->fanin_count && tp_slot_claim_ready(s);
}

bool tp_slot_on_subtask_complete(struct tp_slot *s)
{
	/* acq_rel: the subtask that completes the task sees every other
	 * block's completion (and their outputs) before it resolves. */
	uint32_t now = atomic_fetch_add_explicit(&s->completed_subtasks, 1,
						 memory_order_acq_rel) + 1;
	return now == s->total_required_subtasks;
}

bool tp_slot_release_fanin(struct tp_slot *s)
{
	/* acq_rel: see tp_slot_wire_fanin(); our producer's outputs are
	 * published to the thread that routes the consumer. */
	uint32_t now = atomic_fetch_add_explicit(&s->fanin_refcount, 1,
						 memory_order_acq_rel) + 1;
	return now == s->fanin_count && tp_slot_claim_ready(s);
}

struct tp_dep_node *tp_slot_mark_completed(struct tp_slot *s)
{
	fanout_lock(s);
	/* Under the lock: a wiring orchestrator either linked before this
	 * (we walk it) or sees COMPLETED after (it counts us as done). The
	 * release store also lets lock-free readers of tp_slot_state() that
	 * see COMPLETED see the task's outputs. */
	atomic_store_explicit(&s->task_state, TP_TASK_COMPLETED, memory_order_release);
	struct tp_dep_node *head = s->fanout_head;
	fanout_unlock(s);
	/* relaxed: a record of the transition; no reader decides on it. */
	atomic_fetch_or_explicit(&s->lifecycle_flags, TP_SLOT_COMPLETION_DONE,
				 memory_order_relaxed);
	return head;
}

uint32_t tp_slot_walk_fanout(struct tp_dep_node *head, tp_slot_fn on_ready, void *ud)
{
	/* No lock for the walk: once COMPLETED nobody links to this list. */
	uint32_t visited = 0;
	for (struct tp_dep_node *n = head; n; n = n->next) {
		visited++;
		if (tp_slot_release_fanin(n->consumer) && on_ready)
			on_ready(n->consumer, ud);
	}
	return visited;
}

uint32_t tp_slot_complete(struct tp_slot *s, tp_slot_fn on_ready, void *ud)
{
	return tp_slot_walk_fanout(tp_slot_mark_completed(s), on_ready, ud);
}

/* Add @add to fanout_refcount (and @flags to lifecycle_flags) and decide
 * CONSUMED, under the lock so that count, refcount and state are read as
 * one. Returns true for the call that made the slot CONSUMED.
 *
 * The decision is taken under the lock (TP_SLOT_CONSUMED_DECIDED: one
 * caller only), the CONSUMED store comes after the unlock: a CONSUMED slot
 * may be reclaimed and reinitialised by the orchestrator at once, so no
 * store of ours (the unlock) may follow it, or it would release the lock
 * of the slot's next task while another thread holds it. */
static bool add_ref_check_consumed(struct tp_slot *s, uint32_t add, uint32_t flags)
{
	fanout_lock(s);
	/* relaxed (refcount, flags, state, count): read and written under the
	 * lock, whose acquire / release orders them with the other holders'. */
	uint32_t ref = atomic_load_explicit(&s->fanout_refcount, memory_order_relaxed) + add;
	atomic_store_explicit(&s->fanout_refcount, ref, memory_order_relaxed);
	uint32_t f = atomic_fetch_or_explicit(&s->lifecycle_flags, flags,
					      memory_order_relaxed) | flags;
	bool consumed =
		!(f & TP_SLOT_CONSUMED_DECIDED) &&
		atomic_load_explicit(&s->task_state, memory_order_relaxed) ==
			TP_TASK_COMPLETED &&
		(f & TP_SLOT_FANIN_RELEASED) &&
		ref == atomic_load_explicit(&s->fanout_count, memory_order_relaxed);
	if (consumed)
		/* relaxed: under the lock, read by the next holder only. */
		atomic_fetch_or_explicit(&s->lifecycle_flags, TP_SLOT_CONSUMED_DECIDED,
					 memory_order_relaxed);
	fanout_unlock(s);
	if (consumed)
		/* release: the ring's reclaim walk (acquire) and the
		 * orchestrator that reuses the slot see every write done
		 * while the task was alive, the unlock above included. */
		atomic_store_explicit(&s->task_state, TP_TASK_CONSUMED, memory_order_release);
	return consumed;
}

uint32_t tp_slot_release(struct tp_slot *s, tp_slot_fn on_consumed, void *ud)
{
	uint32_t made = 0;
	for (uint32_t i = 0; i < s->fanin_n; i++) {
		struct tp_slot *p = tp_slot_fanin_edge(s, i)->producer;
		if (add_ref_check_consumed(p, 1, 0)) {
			made++;
			if (on_consumed)
				on_consumed(p, ud);
		}
	}
	if (add_ref_check_consumed(s, 0, TP_SLOT_FANIN_RELEASED)) {
		made++;
		if (on_consumed)
			on_consumed(s, ud);
	}
	return made;
}

bool tp_slot_scope_end(struct tp_slot *s)
{
	return add_ref_check_consumed(s, TP_FANOUT_SCOPE_BIT, 0);
}

uint32_t tp_slot_for_each_consumer(struct tp_slot *s, tp_slot_fn fn, void *ud)
{
	uint32_t n = 0;
	fanout_lock(s);
	/* relaxed: under the lock, as the COMPLETED store. */
	if (atomic_load_explicit(&s->task_state, memory_order_relaxed) == TP_TASK_PENDING)
		for (struct tp_dep_node *d = s->fanout_head; d; d = d->next, n++)
			fn(d->consumer, ud);
	fanout_unlock(s);
	return n;
}

void tp_slot_fini(struct tp_slot *s)
{
	free(s->fanin_spill);
	s->fanin_spill = NULL;
	s->fanin_spill_cap = 0;
}
