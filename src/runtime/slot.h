/* SPDX-License-Identifier: MIT */
/*
 * runtime/slot.h — per-task slot state and the fanin/fanout counter protocol
 * of the tensormap_and_ringbuffer runtime (spec/runtime-model.md §2.2
 * "PTO2TaskSlotState", §2.4 step 7, §2.5, §2.6, §2.9).
 *
 * Consumer side: fanin_count = live producers + 1. Each producer completion
 * adds 1 to fanin_refcount; the orchestrator adds completed-at-wiring + 1
 * when wiring ends (the "+1" keeps a racing completion from publishing the
 * task before wiring is finished). The task is ready when fanin_refcount
 * reaches fanin_count, routed once (READY_CLAIMED).
 *
 * Producer side: fanout_count = TP_FANOUT_SCOPE_BIT | consumers claimed.
 * fanout_refcount gains 1 per released consumer and SCOPE_BIT when the
 * task's scope ends. CONSUMED ⇔ state COMPLETED and fanout_refcount ==
 * fanout_count, decided under fanout_lock; a CONSUMED slot (and its heap
 * bytes) may be reclaimed once every older task of its ring is CONSUMED
 * too (runtime/ring.h).
 *
 * One addition to the reference, for safety: a task can become CONSUMED
 * only after its own fanin release (tp_slot_release) has run, flag
 * TP_SLOT_FANIN_RELEASED. With deferred release a consumer can release a
 * producer before the producer's own deferred release ran; without the flag
 * the producer's slot could be reclaimed and reused while its deferred
 * release still has to read its fanin edges.
 *
 * Threads: the orchestrator initialises, claims and wires; scheduler
 * threads complete and release; any thread may end up marking CONSUMED.
 * The fanout lock is a test-and-test-and-set spinlock held for a few
 * instructions (never across a callback).
 */
#ifndef TASKPROF_RUNTIME_SLOT_H
#define TASKPROF_RUNTIME_SLOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/task_id.h"

/* PTO2_FANOUT_SCOPE_BIT: the scope's reference in fanout_count. */
#define TP_FANOUT_SCOPE_BIT 0x80000000u
/* PTO2_FANIN_INLINE_CAP: fanin edges stored in the slot; more spill to the
 * heap (allocated by the orchestrator, freed when the slot is reused). */
#define TP_FANIN_INLINE_CAP 64

/* Task states (PTO2 task_state; CONSUMED is 2 as in the code, Appendix A
 * item 5). PENDING covers waiting, queued and running. */
enum tp_task_state {
	TP_TASK_PENDING = 0,
	TP_TASK_COMPLETED = 1,
	TP_TASK_CONSUMED = 2,
};

/* lifecycle_flags bits. */
enum tp_slot_flag {
	TP_SLOT_READY_CLAIMED = 1u << 0,       /* routed to a ready queue */
	TP_SLOT_COMPLETION_DONE = 1u << 1,     /* on_task_complete ran */
	TP_SLOT_SUBTASK_DEFERRED = 1u << 2,    /* async completion pending */
	TP_SLOT_DISPATCH_PROPAGATED = 1u << 3, /* early dispatch: every subtask
						* published to a core */
	TP_SLOT_FANIN_RELEASED = 1u << 4,      /* tp_slot_release ran */
	TP_SLOT_CONSUMED_DECIDED = 1u << 5,    /* one caller is making it CONSUMED */
};

struct tp_slot;

/**
 * struct tp_dep_node - one fanout-list link: lives in the consumer's
 * fanin edge, so it stays valid as long as the consumer's slot is not
 * reused, which is after the producer walked its list (the consumer
 * cannot complete before that).
 */
struct tp_dep_node {
	struct tp_slot *consumer;
	struct tp_dep_node *next;
};

/**
 * struct tp_fanin_edge - a fanin edge of a consumer: the claimed producer
 * (released at the consumer's release) and the node linked into its
 * fanout list.
 */
struct tp_fanin_edge {
	struct tp_slot *producer;
	struct tp_dep_node node;
};

/**
 * struct tp_slot - one task slot of a ring (PTO2TaskSlotState plus the
 * descriptor and fanin, spec/runtime-model.md §2.2, §2.5): counters in
 * tasks / subtasks, packed region in logical heap bytes. Fields are
 * changed only through the functions below.
 */
struct tp_slot {
	/* --- hot state (PTO2TaskSlotState) --- */
	_Atomic uint32_t fanout_lock;     /* 0 free, 1 held */
	_Atomic uint32_t fanout_count;    /* SCOPE_BIT | consumers; under lock */
	_Atomic uint32_t fanout_refcount; /* changed under lock only */
	_Atomic uint32_t task_state;      /* enum tp_task_state; under lock */
	struct tp_dep_node *fanout_head;  /* consumers; under lock */
	uint32_t fanin_count;             /* N + 1; set before any link */
	_Atomic uint32_t fanin_refcount;
	_Atomic uint32_t lifecycle_flags; /* enum tp_slot_flag */
	_Atomic uint32_t completed_subtasks;
	uint32_t total_required_subtasks; /* block_num × popcount(active_mask) */
	uint32_t logical_block_num;
	_Atomic uint32_t next_block_idx;  /* SPMD block claims */
	uint8_t active_mask;              /* AIC=1, AIV0=2, AIV1=4; 0 = DUMMY */
	uint8_t ring_id;
	uint8_t task_attrs;
	/* --- descriptor --- */
	tp_task_id task_id;
	int32_t kernel_id[3];             /* per subslot, -1 = inactive */
	uint64_t packed_base;             /* ring heap, logical bytes [base,end) */
	uint64_t packed_end;
	/* --- fanin (payload side) --- */
	uint32_t fanin_n;                 /* claimed producers */
	uint32_t fanin_spill_cap;
	struct tp_fanin_edge *fanin_spill;
	struct tp_fanin_edge fanin_inline[TP_FANIN_INLINE_CAP];
};

/**
 * typedef tp_slot_fn - called with a slot that the calling function made
 * ready / CONSUMED.
 * @slot: the slot.
 * @ud:   the caller's pointer.
 */
typedef void (*tp_slot_fn)(struct tp_slot *slot, void *ud);

/**
 * tp_slot_init() - reset @slot for a new task (orchestrator, before the
 * ring publishes the slot; prepare_task of spec §2.4 step 1).
 * @slot:    the slot; its previous task must be CONSUMED and reclaimed.
 * @task_id: the new task's id.
 *
 * state PENDING, fanout_count = SCOPE_BIT, every counter 0, no consumers,
 * no fanin edges (a previous spill array is kept for reuse), kernel ids -1,
 * active_mask 0 and total_required_subtasks 0 until tp_slot_set_work().
 * packed_base/end are left to the ring.
 */
void tp_slot_init(struct tp_slot *slot, tp_task_id task_id);

/**
 * tp_slot_set_work() - what the task runs (orchestrator, before wiring).
 * @active_mask: subslots used, AIC=1 | AIV0=2 | AIV1=4; 0 for a DUMMY task.
 * @block_num:   SPMD blocks, >= 1.
 *
 * Sets total_required_subtasks = block_num × popcount(active_mask) and
 * logical_block_num = block_num.
 */
void tp_slot_set_work(struct tp_slot *slot, uint8_t active_mask, uint32_t block_num);

/**
 * tp_slot_add_producer() - claim @producer for consumer @slot (orchestrator,
 * spec §2.4 step 4: under the producer's fanout_lock, fanout_count++ so it
 * cannot become CONSUMED) and record the fanin edge.
 * @slot:        the consumer being submitted.
 * @producer:    the producer's slot.
 * @producer_id: the producer's task id; the claim fails if the slot now
 *               holds another task.
 *
 * The caller deduplicates producers (runtime/fanin.h).
 *
 * Return: 1 claimed; 0 not claimed because the producer is already
 * CONSUMED or its slot was reused (its data is final: no edge needed);
 * -ENOMEM when the spill array cannot grow.
 */
int tp_slot_add_producer(struct tp_slot *slot, struct tp_slot *producer,
			 tp_task_id producer_id);

/**
 * tp_slot_wire_fanin() - publish consumer @slot's fanin (orchestrator,
 * wire_fanin_task of spec §2.4 step 7).
 *
 * fanin_count = N + 1 (N = claimed producers); for each producer, under its
 * lock: COMPLETED or later counts as done, else this consumer is prepended
 * to its fanout list. Then fanin_refcount += done + 1.
 *
 * Return: true when the task became ready here (and was claimed for
 * routing): the caller pushes it to its ready queue. False when a producer
 * completion will make it ready (that thread gets true from
 * tp_slot_complete's callback).
 */
bool tp_slot_wire_fanin(struct tp_slot *slot);

/**
 * tp_slot_claim_ready() - route_ready_once: set READY_CLAIMED.
 * Return: true for the one caller that set it.
 */
bool tp_slot_claim_ready(struct tp_slot *slot);

/**
 * tp_slot_on_subtask_complete() - one dispatched subtask (one block on one
 * core) of @slot finished (spec §2.9 step 2).
 * Return: true for the call that brings completed_subtasks to
 * total_required_subtasks: the whole task is done.
 */
bool tp_slot_on_subtask_complete(struct tp_slot *slot);

/**
 * tp_slot_complete() - on_task_complete (spec §2.9 step 3, the Resolve
 * work): under fanout_lock set COMPLETED and take the fanout list; then
 * release one fanin reference of each consumer.
 * @slot:     the task that finished (all subtasks, not deferred).
 * @on_ready: called for each consumer that became ready (claimed); may be
 *            NULL in tests.
 * @ud:       passed to @on_ready.
 *
 * The caller must later call tp_slot_release() on @slot (deferred release).
 *
 * Return: consumers visited (the resolve bar's tasks_processed).
 */
uint32_t tp_slot_complete(struct tp_slot *slot, tp_slot_fn on_ready, void *ud);

/**
 * tp_slot_mark_completed() - the first half of tp_slot_complete(): under
 * fanout_lock set COMPLETED and take the fanout list.
 * Return: the list's head for tp_slot_walk_fanout(); NULL when @slot has
 * no consumers (the walk then visits none: a scheduler stamps the resolve
 * bar's start only when there is a walk to time).
 */
struct tp_dep_node *tp_slot_mark_completed(struct tp_slot *slot);

/**
 * tp_slot_walk_fanout() - the second half of tp_slot_complete(): release
 * one fanin reference of each consumer on the list @head from
 * tp_slot_mark_completed(), calling @on_ready (may be NULL) for each that
 * became ready.
 * @head:     the list tp_slot_mark_completed() returned (NULL: empty).
 * @on_ready: called for each consumer made ready, or NULL.
 * @ud:       passed to @on_ready.
 *
 * Return: consumers visited.
 */
uint32_t tp_slot_walk_fanout(struct tp_dep_node *head, tp_slot_fn on_ready, void *ud);

/**
 * tp_slot_release_fanin() - one producer of consumer @slot completed:
 * fanin_refcount += 1 (release_fanin_and_check_ready).
 * Return: true when this made the task ready and claimed it.
 */
bool tp_slot_release_fanin(struct tp_slot *slot);

/**
 * tp_slot_release() - on_task_release (spec §2.9 "Deferred release"): for
 * each claimed producer fanout_refcount += 1 and CONSUMED check, then set
 * TP_SLOT_FANIN_RELEASED and check @slot itself.
 * @slot:        a COMPLETED task; called exactly once per task (also for
 *               dummy, predicated-skip and alloc_tensors tasks).
 * @on_consumed: called for every slot (producers or @slot) that this call
 *               made CONSUMED; the runtime advances that slot's ring.
 * @ud:          passed to @on_consumed.
 *
 * Return: slots made CONSUMED.
 */
uint32_t tp_slot_release(struct tp_slot *slot, tp_slot_fn on_consumed, void *ud);

/**
 * tp_slot_scope_end() - on_scope_end for one task of the ending scope
 * (spec §2.6): fanout_refcount += SCOPE_BIT, CONSUMED check. Non-blocking.
 * Return: true when this made @slot CONSUMED (advance its ring).
 */
bool tp_slot_scope_end(struct tp_slot *slot);

/**
 * tp_slot_state() - current task_state (acquire, pairing with the release
 * stores of COMPLETED and CONSUMED in slot.c: a caller that sees COMPLETED
 * also sees the task's outputs; CONSUMED, that its buffers are no longer
 * read).
 */
static inline enum tp_task_state tp_slot_state(const struct tp_slot *slot)
{
	return (enum tp_task_state)atomic_load_explicit(
		(_Atomic uint32_t *)&slot->task_state, memory_order_acquire);
}

/** tp_slot_fanin_edge() - fanin edge @i (0 <= i < fanin_n) of @slot. */
static inline struct tp_fanin_edge *tp_slot_fanin_edge(struct tp_slot *slot, uint32_t i)
{
	return i < TP_FANIN_INLINE_CAP ? &slot->fanin_inline[i]
				       : &slot->fanin_spill[i - TP_FANIN_INLINE_CAP];
}

/**
 * tp_slot_for_each_consumer() - call @fn on each consumer in @slot's fanout
 * list, under its fanout_lock, while @slot is not yet COMPLETED (so every
 * consumer is alive). @fn must not take a fanout lock.
 * @slot: the producer.
 * @fn:   called once per consumer.
 * @ud:   passed to @fn.
 *
 * Return: consumers visited (0 when @slot is already COMPLETED).
 */
uint32_t tp_slot_for_each_consumer(struct tp_slot *slot, tp_slot_fn fn, void *ud);

/** tp_slot_fini() - free @slot's spill array (ring teardown). */
void tp_slot_fini(struct tp_slot *slot);

#endif /* TASKPROF_RUNTIME_SLOT_H */
