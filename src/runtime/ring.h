/* SPDX-License-Identifier: MIT */
/*
 * runtime/ring.h — one ring of the tensormap_and_ringbuffer runtime: its
 * task window, its packed-output heap, in-order reclaim and back-pressure
 * (spec/runtime-model.md §2.2 "Each ring owns", "Flow control", §2.6,
 * §7.1 item 4).
 *
 * Task local ids are the ring's monotonic current_task_index; task L lives
 * in slot L & (window_size - 1). The orchestrator (one thread) allocates;
 * scheduler threads mark tasks CONSUMED (runtime/slot.h) and call
 * tp_ring_advance(), which moves last_task_alive over the longest run of
 * CONSUMED tasks starting at it — a slot is reclaimed only when it and all
 * older tasks of the ring are CONSUMED. The heap tail follows: each task
 * records its packed region [packed_base, packed_end) as logical byte
 * offsets (monotonic; physical = logical mod heap_size), and reclaiming a
 * task moves heap_tail to its packed_end.
 *
 * Allocation blocks while current - last_task_alive >= window_size - 1
 * or the heap lacks room: it calls the caller's progress hook, spins
 * briefly, then sleeps on a futex doorbell that tp_ring_advance() rings
 * (issue 3 §1: an idle waiter must not burn a CPU). If last_task_alive does
 * not move for the deadlock timeout it fails with -EDEADLK (a scope holding
 * >= window-1 tasks can never drain, spec §2.6: reported, not avoided);
 * time the process spends stopped does not count (base/watchdog.h).
 */
#ifndef TASKPROF_RUNTIME_RING_H
#define TASKPROF_RUNTIME_RING_H

#include <stdatomic.h>
#include <stdint.h>

#include "platform/doorbell.h"
#include "runtime/slot.h"
#include "runtime/task_id.h"

/* Defaults of the reference (PTO2_TASK_WINDOW_SIZE, PTO2_HEAP_SIZE). */
#define TP_RING_DEFAULT_WINDOW 16384u
#define TP_RING_DEFAULT_HEAP (256ull << 20)
/* PTO2_PACKED_OUTPUT_ALIGN: every packed output region is 1024-B aligned. */
#define TP_PACKED_OUTPUT_ALIGN 1024u
/* Default time without reclaim progress before a blocked alloc reports a
 * deadlock (ns), and the value that never reports one. */
#define TP_RING_DEFAULT_DEADLOCK_NS (10ull * 1000 * 1000 * 1000)
#define TP_RING_DEADLOCK_NEVER UINT64_MAX

/**
 * struct tp_ring - one ring (spec/runtime-model.md §2.2): task window,
 * packed-output heap (byte offsets are logical, monotonic), reclaim point
 * and its doorbell, wait statistics. Fields are the ring's; use the
 * functions below.
 */
struct tp_ring {
	uint32_t ring_id;
	uint32_t window_size;          /* power of 2, >= 2 */
	struct tp_slot *slots;         /* window_size slots */
	uint8_t *heap;                 /* heap_size bytes (may be NULL if 0) */
	uint64_t heap_size;            /* bytes, multiple of the alignment */
	int heap_owned;                /* heap malloc'd by tp_ring_init */

	/* Orchestrator-written, read by reclaimers (release/acquire). */
	_Atomic uint32_t current_task_index;
	uint64_t heap_top;             /* logical; orchestrator only */

	/* Reclaimer-written (the advance_lock holder), read by the
	 * orchestrator (release/acquire). */
	_Atomic uint32_t last_task_alive;
	_Atomic uint64_t heap_tail;    /* logical */
	_Atomic uint32_t advance_lock; /* try-lock of advance_ring_pointers */

	struct tp_doorbell reclaim_bell; /* rung when last_task_alive moves */

	/* Statistics (relaxed): allocations that had to wait, and why. */
	_Atomic uint64_t waits_window;
	_Atomic uint64_t waits_heap;
	/* Added after the first version. */
	_Bool slots_mapped;            /* slots[] is a bigmem mapping */
};

/**
 * struct tp_ring_wait - how a blocked allocation waits.
 * @progress:    called repeatedly while the ring is full (from the
 *               allocating thread) so that it can help reclaim, e.g. run
 *               deferred releases or a scheduler step; returns > 0 if it
 *               made progress (the allocation re-checks at once), else 0.
 *               NULL: just sleep until a reclaim rings the doorbell.
 * @ud:          passed to @progress.
 * @deadlock_ns: ns without any last_task_alive movement before failing
 *               with -EDEADLK; 0 means TP_RING_DEFAULT_DEADLOCK_NS,
 *               TP_RING_DEADLOCK_NEVER never fails. Time the process
 *               spends stopped does not count (base/watchdog.h).
 */
struct tp_ring_wait {
	int (*progress)(void *ud);
	void *ud;
	uint64_t deadlock_ns;
};

/**
 * tp_ring_init() - set up ring @ring_id.
 * @ring:        storage.
 * @ring_id:     0 .. TP_MAX_RING_DEPTH-1.
 * @window_size: task slots, a power of 2 >= 2 (PTO2_TASK_WINDOW_SIZE).
 * @heap:        memory for packed outputs (device memory), or NULL to have
 *               the ring allocate @heap_size bytes itself.
 * @heap_size:   bytes, a multiple of TP_PACKED_OUTPUT_ALIGN (0: no heap).
 *
 * Return: 0; -EINVAL for a bad ring id, window or heap size; -ENOMEM.
 */
int tp_ring_init(struct tp_ring *ring, uint32_t ring_id, uint32_t window_size,
		 void *heap, uint64_t heap_size);

/** tp_ring_fini() - free what tp_ring_init() allocated. */
void tp_ring_fini(struct tp_ring *ring);

/**
 * struct tp_ring_alloc - result of tp_ring_alloc().
 * @slot:        the task's slot, initialised by tp_slot_init() (PENDING).
 * @task_id:     (ring_id << 32) | local_id.
 * @packed:      start of the packed output region in the heap (NULL when
 *               @packed_bytes was 0).
 * @packed_bytes: bytes reserved (the request rounded up to 1024).
 */
struct tp_ring_alloc {
	struct tp_slot *slot;
	tp_task_id task_id;
	void *packed;
	uint64_t packed_bytes;
};

/**
 * tp_ring_alloc() - unified alloc of a task slot and one packed heap region
 * (spec §2.4 step 1; orchestrator thread only).
 * @ring:         the ring of the submit's scope depth.
 * @packed_bytes: bytes for all OUTPUT args of the task (0 for none).
 * @wait:         how to wait when the ring is full; NULL = no hook and the
 *                default deadlock timeout.
 * @out:          receives the slot, id and region.
 *
 * Blocks while the window is full (current - last_task_alive >=
 * window_size - 1) or the heap lacks room. The slot is reset to PENDING and
 * then published (current_task_index++).
 *
 * Return: 0; -ENOSPC when @packed_bytes can never fit the heap; -EDEADLK
 * when nothing was reclaimed for the deadlock timeout (message names the
 * ring, the window and the watermark).
 */
int tp_ring_alloc(struct tp_ring *ring, uint64_t packed_bytes,
		  const struct tp_ring_wait *wait, struct tp_ring_alloc *out);

/**
 * tp_ring_try_alloc() - tp_ring_alloc() without waiting.
 * @ring, @packed_bytes, @out: as tp_ring_alloc().
 *
 * Return: 0, -EAGAIN when it would block, -ENOSPC as tp_ring_alloc().
 */
int tp_ring_try_alloc(struct tp_ring *ring, uint64_t packed_bytes,
		      struct tp_ring_alloc *out);

/**
 * tp_ring_advance() - advance_ring_pointers (spec §2.6): call after making
 * a task of this ring CONSUMED (any thread).
 *
 * The thread that wins the advance try-lock walks last_task_alive forward
 * over consecutive CONSUMED slots, moves heap_tail to the last one's
 * packed_end, release-stores both and rings the doorbell. A thread that
 * loses the try-lock returns at once: the holder re-checks after unlocking,
 * so no CONSUMED task is left behind.
 *
 * Return: tasks reclaimed by this call.
 */
uint32_t tp_ring_advance(struct tp_ring *ring);

/** tp_ring_slot() - slot of local id @local_id. */
static inline struct tp_slot *tp_ring_slot(struct tp_ring *ring, uint32_t local_id)
{
	return &ring->slots[local_id & (ring->window_size - 1)];
}

/** tp_ring_last_alive() - last_task_alive (acquire, pairing with the
 * release store in tp_ring_advance()): every older task of the ring is
 * reclaimed, its slot and heap bytes reusable. */
static inline uint32_t tp_ring_last_alive(struct tp_ring *ring)
{
	return atomic_load_explicit(&ring->last_task_alive, memory_order_acquire);
}

/** tp_ring_current() - current_task_index: tasks allocated so far.
 * acquire: pairs with the orchestrator's release store (ring.c take()),
 * so slots below it are initialised; the orchestrator, its only writer,
 * reads its own value. */
static inline uint32_t tp_ring_current(struct tp_ring *ring)
{
	return atomic_load_explicit(&ring->current_task_index, memory_order_acquire);
}

/** tp_ring_in_flight() - allocated and not yet reclaimed tasks. */
static inline uint32_t tp_ring_in_flight(struct tp_ring *ring)
{
	/* last_task_alive first: it never passes current_task_index, so a
	 * later read of current cannot make the difference negative. */
	uint32_t lta = tp_ring_last_alive(ring);
	return tp_ring_current(ring) - lta;
}

#endif /* TASKPROF_RUNTIME_RING_H */
