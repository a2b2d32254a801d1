/* SPDX-License-Identifier: MIT */
#include "runtime/ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/watchdog.h"
#include "base/bigmem.h"

/* While a progress hook is installed a blocked allocation sleeps at most
 * this long before calling it again (ns). */
#define RING_HOOK_PERIOD_NS (1000ull * 1000)

_Static_assert(TP_RING_DEADLOCK_NEVER == TP_WATCHDOG_NEVER, "one value for never");

int tp_ring_init(struct tp_ring *r, uint32_t ring_id, uint32_t window_size, void *heap,
		 uint64_t heap_size)
{
	memset(r, 0, sizeof(*r));
	if (ring_id >= TP_MAX_RING_DEPTH)
		return tp_set_error(-EINVAL, "ring %u: ring id must be < %d", ring_id,
				    TP_MAX_RING_DEPTH);
	if (window_size < 2 || (window_size & (window_size - 1)))
		return tp_set_error(-EINVAL, "ring %u: task window %u is not a power of 2 >= 2",
				    ring_id, window_size);
	if (heap_size % TP_PACKED_OUTPUT_ALIGN)
		return tp_set_error(-EINVAL, "ring %u: heap size %llu is not a multiple of %u",
				    ring_id, (unsigned long long)heap_size,
				    TP_PACKED_OUTPUT_ALIGN);
	bool mapped;
	r->slots = tp_bigmem_zalloc(window_size, sizeof(*r->slots), &mapped);
	if (!r->slots)
		return tp_set_error(-ENOMEM, "ring %u: no memory for %u slots", ring_id,
				    window_size);
	if (!heap && heap_size) {
		heap = aligned_alloc(TP_PACKED_OUTPUT_ALIGN, heap_size);
		if (!heap) {
			tp_bigmem_free(r->slots, window_size, sizeof(*r->slots), mapped);
			r->slots = NULL;
			return tp_set_error(-ENOMEM, "ring %u: no memory for a %llu-byte heap",
					    ring_id, (unsigned long long)heap_size);
		}
		r->heap_owned = 1;
	}
	r->slots_mapped = mapped;
	r->ring_id = ring_id;
	r->window_size = window_size;
	r->heap = heap;
	r->heap_size = heap_size;
	atomic_init(&r->current_task_index, 0);
	atomic_init(&r->last_task_alive, 0);
	atomic_init(&r->heap_tail, 0);
	atomic_init(&r->advance_lock, 0);
	atomic_init(&r->waits_window, 0);
	atomic_init(&r->waits_heap, 0);
	r->heap_top = 0;
	tp_doorbell_init(&r->reclaim_bell);
	return 0;
}

void tp_ring_fini(struct tp_ring *r)
{
	/* Slots past the highest task index were never initialised (a big
	 * window is mostly untouched): skip them.  relaxed: teardown, every
	 * thread that touched the ring has been joined. */
	uint32_t cur = atomic_load_explicit(&r->current_task_index, memory_order_relaxed);
	uint32_t used = cur < r->window_size ? cur : r->window_size;
	if (r->slots)
		for (uint32_t i = 0; i < used; i++)
			tp_slot_fini(&r->slots[i]);
	/* Only the slots below the highest task index were written; the
	 * next ring of this size gets them zeroed (bigmem.h). */
	tp_bigmem_recycle(r->slots, r->window_size, sizeof(*r->slots), r->slots_mapped, used);
	if (r->heap_owned)
		free(r->heap);
	memset(r, 0, sizeof(*r));
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* Where a region of @bytes would start (logical); a region never straddles
 * the physical end of the heap: it skips to the next lap instead, and the
 * skipped bytes belong to it (they come back when it is reclaimed). */
static uint64_t heap_base_for(const struct tp_ring *r, uint64_t bytes)
{
	uint64_t top = r->heap_top;
	if (bytes && top % r->heap_size + bytes > r->heap_size)
		top = align_up(top, r->heap_size);
	return top;
}

enum fit { FIT_OK, FIT_WINDOW, FIT_HEAP };

static enum fit ring_fits(struct tp_ring *r, uint64_t bytes)
{
	/* relaxed: the orchestrator (this thread) is its only writer. */
	uint32_t cur = atomic_load_explicit(&r->current_task_index, memory_order_relaxed);
	/* acquire: pairs with the release stores in tp_ring_advance(); once we
	 * see a task reclaimed, its slot and heap bytes are no longer touched
	 * by any scheduler or AICore thread. */
	uint32_t lta = atomic_load_explicit(&r->last_task_alive, memory_order_acquire);
	if (cur - lta >= r->window_size - 1)
		return FIT_WINDOW;
	if (bytes) {
		/* acquire: as last_task_alive, pairs with the release store of
		 * heap_tail in tp_ring_advance(): the reclaimed bytes are no
		 * longer read or written by any other thread. */
		uint64_t tail = atomic_load_explicit(&r->heap_tail, memory_order_acquire);
		if (heap_base_for(r, bytes) + bytes - tail > r->heap_size)
			return FIT_HEAP;
	}
	return FIT_OK;
}

struct fit_arg {
	struct tp_ring *r;
	uint64_t bytes;
};

static bool fit_ready(void *arg)
{
	struct fit_arg *a = arg;
	return ring_fits(a->r, a->bytes) == FIT_OK;
}

static void take(struct tp_ring *r, uint64_t bytes, struct tp_ring_alloc *out)
{
	/* relaxed: the orchestrator (this thread) is its only writer. */
	uint32_t local = atomic_load_explicit(&r->current_task_index, memory_order_relaxed);
	tp_task_id id = tp_task_id_make(r->ring_id, local);
	struct tp_slot *s = tp_ring_slot(r, local);
	tp_slot_init(s, id);
	uint64_t base = heap_base_for(r, bytes);
	/* A region that skipped to the next lap starts where the skip began,
	 * so that reclaiming it returns the skipped bytes too; the usable
	 * memory is [base', end) with base' the lap start. */
	s->packed_base = r->heap_top;
	s->packed_end = base + bytes;
	r->heap_top = base + bytes;
	out->slot = s;
	out->task_id = id;
	out->packed = bytes ? r->heap + base % r->heap_size : NULL;
	out->packed_bytes = bytes;
	/* release: the slot reset above (state PENDING, counters) happens
	 * before a reclaimer that acquires current_task_index walks it; a
	 * stale CONSUMED state of the slot's previous task is never seen. */
	atomic_store_explicit(&r->current_task_index, local + 1, memory_order_release);
}

int tp_ring_try_alloc(struct tp_ring *r, uint64_t packed_bytes, struct tp_ring_alloc *out)
{
	uint64_t bytes = align_up(packed_bytes, TP_PACKED_OUTPUT_ALIGN);
	if (bytes > r->heap_size)
		return tp_set_error(-ENOSPC,
				    "ring %u: packed outputs of %llu bytes exceed the %llu-byte heap",
				    r->ring_id, (unsigned long long)packed_bytes,
				    (unsigned long long)r->heap_size);
	if (ring_fits(r, bytes) != FIT_OK)
		return -EAGAIN;
	take(r, bytes, out);
	return 0;
}

int tp_ring_alloc(struct tp_ring *r, uint64_t packed_bytes, const struct tp_ring_wait *wait,
		  struct tp_ring_alloc *out)
{
	int rc = tp_ring_try_alloc(r, packed_bytes, out);
	if (rc != -EAGAIN)
		return rc;

	uint64_t bytes = align_up(packed_bytes, TP_PACKED_OUTPUT_ALIGN);
	enum fit why = ring_fits(r, bytes);
	/* relaxed: statistics. */
	atomic_fetch_add_explicit(why == FIT_HEAP ? &r->waits_heap : &r->waits_window, 1,
				  memory_order_relaxed);
	uint64_t deadlock_ns = wait && wait->deadlock_ns ? wait->deadlock_ns
							 : TP_RING_DEFAULT_DEADLOCK_NS;
	bool hook = wait && wait->progress;
	uint32_t seen = tp_ring_last_alive(r);
	/* TP_RING_DEADLOCK_NEVER is TP_WATCHDOG_NEVER. */
	struct tp_watchdog wd;
	tp_watchdog_start(&wd, deadlock_ns, tp_now_ns());
	struct fit_arg fa = { r, bytes };
	for (;;) {
		if (ring_fits(r, bytes) == FIT_OK)
			break;
		if (hook && wait->progress(wait->ud) > 0)
			continue;
		/* At most TP_WATCHDOG_PERIOD_NS: the watchdog must see this
		 * thread check regularly. */
		uint64_t left = tp_watchdog_sleep_ns(&wd, tp_now_ns());
		if (hook && left > RING_HOOK_PERIOD_NS)
			left = RING_HOOK_PERIOD_NS;
		tp_doorbell_wait(&r->reclaim_bell, fit_ready, &fa, left);
		uint32_t lta = tp_ring_last_alive(r);
		if (lta != seen) {
			seen = lta;
			tp_watchdog_kick(&wd, tp_now_ns());
		} else if (tp_watchdog_expired(&wd, tp_now_ns()) &&
			   ring_fits(r, bytes) != FIT_OK) {
			uint32_t cur = tp_ring_current(r);
			/* relaxed heap_tail below: for the message only. */
			return tp_set_error(
				-EDEADLK,
				"ring %u: %s full for %llu ms: current_task_index %u, "
				"last_task_alive %u, window %u, heap %llu/%llu bytes used "
				"(%s)",
				r->ring_id, ring_fits(r, bytes) == FIT_HEAP ? "heap" : "task window",
				(unsigned long long)(deadlock_ns / 1000000), cur, lta,
				r->window_size,
				(unsigned long long)(r->heap_top -
						     atomic_load_explicit(&r->heap_tail,
									  memory_order_relaxed)),
				(unsigned long long)r->heap_size,
				ring_fits(r, bytes) == FIT_HEAP
					? "the outputs of the tasks an open scope holds fill the "
					  "heap: end the scope (tp_scope_end) before more outputs, "
					  "or make them smaller"
					: "a scope holding >= window-1 tasks cannot drain");
		}
	}
	take(r, bytes, out);
	return 0;
}

/* True when the oldest live task of the ring is CONSUMED. */
static bool head_consumed(struct tp_ring *r)
{
	/* acquire lta: pairs with the release store of another holder of
	 * advance_lock (below), so the head we look at is the one it left.
	 * acquire cur: pairs with take()'s release store, so the head slot,
	 * if allocated, is initialised (no stale CONSUMED of its previous
	 * task). */
	uint32_t lta = atomic_load_explicit(&r->last_task_alive, memory_order_acquire);
	uint32_t cur = atomic_load_explicit(&r->current_task_index, memory_order_acquire);
	return lta != cur && tp_slot_state(tp_ring_slot(r, lta)) == TP_TASK_CONSUMED;
}

uint32_t tp_ring_advance(struct tp_ring *r)
{
	uint32_t total = 0;
	/* Fence (seq_cst): orders the caller's CONSUMED store (a release
	 * store after the slot's unlock, slot.c add_ref_check_consumed)
	 * before our try-lock below. Pairs with the fence after
	 * the unlock: either the holder's re-check sees our CONSUMED state, or
	 * we see the lock free and walk ourselves (Dekker), so a CONSUMED
	 * task at the head is never left unreclaimed. */
	atomic_thread_fence(memory_order_seq_cst);
	for (;;) {
		/* acquire: pairs with the release unlock below; we continue
		 * from the previous holder's last_task_alive and heap_tail. */
		if (atomic_exchange_explicit(&r->advance_lock, 1, memory_order_acquire))
			return total;
		/* relaxed: only lock holders store it; the acquire above
		 * ordered the previous holder's store before this load. */
		uint32_t lta = atomic_load_explicit(&r->last_task_alive, memory_order_relaxed);
		/* acquire: pairs with take()'s release store; slots below
		 * current_task_index are initialised. */
		uint32_t cur = atomic_load_explicit(&r->current_task_index, memory_order_acquire);
		uint32_t end = lta;
		uint64_t tail = 0;
		while (end != cur) {
			struct tp_slot *s = tp_ring_slot(r, end);
			if (tp_slot_state(s) != TP_TASK_CONSUMED)
				break;
			tail = s->packed_end;
			end++;
		}
		if (end != lta) {
			/* release (both): the orchestrator that acquires either
			 * sees every access to the reclaimed slots and bytes
			 * as finished. heap_tail first, so a reader that sees
			 * the new last_task_alive sees its tail too. */
			atomic_store_explicit(&r->heap_tail, tail, memory_order_release);
			atomic_store_explicit(&r->last_task_alive, end, memory_order_release);
			total += end - lta;
		}
		/* release: publishes last_task_alive / heap_tail to the next
		 * holder. */
		atomic_store_explicit(&r->advance_lock, 0, memory_order_release);
		/* Fence (seq_cst): orders the unlock before the re-check; pairs
		 * with the fence at entry (see there). */
		atomic_thread_fence(memory_order_seq_cst);
		if (!head_consumed(r))
			break;
	}
	if (total)
		tp_doorbell_ring(&r->reclaim_bell);
	return total;
}
