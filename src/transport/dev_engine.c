/*
 * dev_engine.c — slow paths of the device producer engine.
 * spec/framework.md §4 (engine), §5 (backpressure gates).
 */
#include <errno.h>
#include <sched.h>

#include "base/clock.h"
#include "base/watchdog.h"
#include "transport/dev_engine.h"

/* The seed's SPIN_WAIT_HINT: a no-op on a real AICPU, a yield in the
 * simulation so parked producers leave the 2 host cores to the host threads. */
static inline void spin_relax(void)
{
	sched_yield();
}

/*
 * The clock of a gate's grace and backstop, in ticks of tp_sys_cnt(). A
 * gap of over a second between two of the waiting producer's own looks at
 * it (it did not run: the process was stopped by Ctrl-Z, SIGSTOP or a
 * debugger) is not counted, so a stop longer than the 30 s backstop does
 * not turn into records dropped when the process continues. A producer
 * spinning on a real AICPU never sees such a gap; a simulated one that the
 * host starves for a whole second waits that much longer.
 */
struct gate_clock {
	bool started;
	uint64_t start, last;
};

/* A gate's clock goes out of scope: the wait it timed is over. Declared
 * with __attribute__((cleanup)), so every return of a gate ends the hold
 * its first look opened. */
static inline void gc_end(struct gate_clock *c)
{
	if (c->started)
		tp_watchdog_unhold();
}

/* A gate's clock: zero, and released by gc_end() on every return. */
#define GATE_CLOCK(name) struct gate_clock name __attribute__((cleanup(gc_end))) = { 0 }

/*
 * One look of a waiting gate at its clock (GATE_CLOCK). The first look
 * starts it, opens a watchdog hold (ended by gc_end()) and returns false:
 * nothing is due yet. Later looks return true with @waited, the ticks waited since the
 * first look, stops excluded.
 */
static inline bool gc_look(struct gate_clock *c, uint64_t *waited)
{
	uint64_t now = tp_sys_cnt();
	if (!c->started) {
		/* The producer waits for the host from here: the runtime's
		 * stall watchdogs do not count it (base/watchdog.h). */
		tp_watchdog_hold();
		c->started = true;
		c->start = c->last = now;
		return false;
	}
	uint64_t gap = now - c->last;
	if (gap > tp_sys_cnt_freq())
		c->start += gap;
	c->last = now;
	*waited = now - c->start;
	return true;
}

static bool pool_ok(const struct tp_shm_header *h)
{
	return h && h->magic == TP_SHM_MAGIC;
}

/* Whether ready queue q is usable (pool, live queue, indices in range):
 * tells a corrupted queue (TP_DROP_INVALID) from a full one after a failed
 * publish. */
static bool rq_ok(struct tp_shm_header *h, uint32_t q)
{
	/* relaxed: a diagnosis after the gate failed, nothing is published. */
	return pool_ok(h) && q < h->num_threads && q < TP_MAX_AICPU_THREADS &&
	       atomic_load_explicit(&h->queue_tails[q], memory_order_relaxed) < h->ready_queue_size &&
	       atomic_load_explicit(&h->queue_heads[q], memory_order_relaxed) < h->ready_queue_size;
}

void dpe_account_dropped(struct tp_dpe *w, enum tp_drop_cause cause, uint64_t n)
{
	struct tp_buffer_state *st = w->st;
	if (n == 0)
		return;
	/* relaxed: device-owned counters, read by the host after the join. */
	atomic_store_explicit(&st->dropped_record_count,
			      atomic_load_explicit(&st->dropped_record_count, memory_order_relaxed) + n,
			      memory_order_relaxed);
	atomic_store_explicit(&st->dropped_by_cause[cause],
			      atomic_load_explicit(&st->dropped_by_cause[cause], memory_order_relaxed) + n,
			      memory_order_relaxed);
}

int dpe_attach(struct tp_dpe *w, struct tp_shm_header *h, uint32_t instance, uint32_t q,
	       const struct tp_dpe_hooks *hooks, void *hook_ud)
{
	if (!w || !pool_ok(h) || instance >= h->num_instances || q >= h->num_threads ||
	    q >= TP_MAX_AICPU_THREADS || h->slot_count == 0 || h->slot_count > TP_FQ_MAX_SLOTS ||
	    h->num_kinds == 0 || h->num_kinds > TP_MAX_KINDS)
		return -EINVAL;
	struct tp_buffer_state *st = tp_shm_state(h, instance);
	if (st->kind >= h->num_kinds || h->kinds[st->kind].record_size == 0)
		return -EINVAL;
	*w = (struct tp_dpe){
		.h = h,
		.st = st,
		.q = q,
		.instance = instance,
		.kind = st->kind,
		.cap = h->kinds[st->kind].records_per_buffer,
		.rsize = h->kinds[st->kind].record_size,
		.pf_records = (TP_DPE_PREFETCH_BYTES + h->kinds[st->kind].record_size - 1) /
			      h->kinds[st->kind].record_size,
		.hooks = hooks,
		.hook_ud = hook_ud,
	};
	w->total = atomic_load_explicit(&st->total_record_count, memory_order_relaxed);
	w->seq = atomic_load_explicit(&st->current_buf_seq, memory_order_relaxed);
	uint64_t cur = atomic_load_explicit(&st->current_buf_ptr, memory_order_relaxed);
	if (cur) {
		/* Re-attaching to an instance that still holds a buffer. */
		w->cur = (struct tp_buf_hdr *)(uintptr_t)cur;
		w->count = atomic_load_explicit(&w->cur->count, memory_order_relaxed);
		return 0;
	}
	dpe_try_pop_free(w, w->seq);
	return 0;
}

bool dpe_push_freeze_barrier(struct tp_shm_header *h, uint64_t timeout)
{
	if (!h)
		return true;
	GATE_CLOCK(gc);
	uint64_t waited;
	/* acquire: once the host's release of the freeze is seen, the queue
	 * heads it advanced before releasing are visible too. */
	while (atomic_load_explicit(&h->bp.rq_freeze_active, memory_order_acquire)) {
		uint32_t tick = atomic_load_explicit(&h->host_tick, memory_order_relaxed);
		if (atomic_load_explicit(&h->freeze_trip, memory_order_relaxed) == tick + 1)
			return false; /* host showed no life since the last timeout */
		if (gc_look(&gc, &waited) && waited >= timeout) {
			atomic_store_explicit(&h->freeze_trip, tick + 1, memory_order_relaxed);
			return false;
		}
		spin_relax();
	}
	return true;
}

bool dpe_pop_freeze_barrier(struct tp_shm_header *h, uint64_t timeout)
{
	if (!h)
		return true;
	GATE_CLOCK(gc);
	uint64_t waited;
	/* acquire: pairs with the host's release store clearing the freeze,
	 * which it makes after refilling free queues; the refilled slots and
	 * tails are then visible to the re-check that follows. */
	while (atomic_load_explicit(&h->bp.fq_freeze_active, memory_order_acquire)) {
		uint32_t tick = atomic_load_explicit(&h->host_tick, memory_order_relaxed);
		if (atomic_load_explicit(&h->freeze_trip, memory_order_relaxed) == tick + 1)
			return false;
		if (gc_look(&gc, &waited) && waited >= timeout) {
			atomic_store_explicit(&h->freeze_trip, tick + 1, memory_order_relaxed);
			return false;
		}
		spin_relax();
	}
	return true;
}

bool dpe_wait_for_ready_queue_space(struct tp_shm_header *h, uint32_t q, uint32_t *tail_out,
				    uint32_t *head_out)
{
	if (!pool_ok(h) || q >= h->num_threads || q >= TP_MAX_AICPU_THREADS)
		return false;
	const uint32_t size = h->ready_queue_size;
	bool signalled = false;
	GATE_CLOCK(gc);
	uint64_t waited;
	for (;;) {
		/* relaxed: the device is the only writer of its tail. */
		uint32_t tail = atomic_load_explicit(&h->queue_tails[q], memory_order_relaxed);
		/* acquire: pairs with the host's release store of the head, made
		 * after it finished reading the entry we may now overwrite. */
		uint32_t head = atomic_load_explicit(&h->queue_heads[q], memory_order_acquire);
		if (tail >= size || head >= size)
			return false; /* corrupted indices: never write out of bounds */
		if ((tail + 1) % size != head) {
			if (atomic_load_explicit(&h->rq_trip[q], memory_order_relaxed))
				atomic_store_explicit(&h->rq_trip[q], 0, memory_order_relaxed);
			*tail_out = tail;
			*head_out = head;
			return true; /* even while rq_freeze_active: enforced after the push */
		}
		/* Host made no progress since this gate last timed out: the
		 * backstop already decided it is gone, so fail without waiting. */
		if (atomic_load_explicit(&h->rq_trip[q], memory_order_relaxed) == head + 1)
			return false;
		if (!gc_look(&gc, &waited)) {
			/* the clock starts at the first look: nothing is due */
		} else if (!signalled && waited >= h->grace_cycles) {
			/* relaxed: a sticky 0->1 flag; the host only tests it. */
			atomic_store_explicit(&h->bp.rq_contended, 1, memory_order_relaxed);
			signalled = true;
		} else if (signalled && waited >= h->backstop_cycles) {
			atomic_store_explicit(&h->rq_trip[q], head + 1, memory_order_relaxed);
			return false;
		}
		spin_relax();
	}
}

bool dpe_wait_for_free_queue_entry(struct tp_shm_header *h, struct tp_buffer_state *st,
				   uint32_t *head_out, uint32_t *tail_out)
{
	if (!pool_ok(h) || !st)
		return false;
	struct tp_free_queue *fq = &st->free_queue;
	bool signalled = false;
	GATE_CLOCK(gc);
	uint64_t waited;
	for (;;) {
		/* relaxed: the device is the only writer of head. */
		uint32_t head = atomic_load_explicit(&fq->head, memory_order_relaxed);
		/* acquire: pairs with the host's release store of tail, made after
		 * it stored buffer_ptrs[tail % slots]; the slot read is ordered
		 * after this load (the seed's rmb before reading buffer_ptrs). */
		uint32_t tail = atomic_load_explicit(&fq->tail, memory_order_acquire);
		if (tail - head > h->slot_count)
			return false; /* host wrote a tail the queue cannot hold */
		if (tail != head) {
			if (atomic_load_explicit(&st->fq_trip, memory_order_relaxed))
				atomic_store_explicit(&st->fq_trip, 0, memory_order_relaxed);
			*head_out = head;
			*tail_out = tail;
			return true;
		}
		if (atomic_load_explicit(&st->fq_trip, memory_order_relaxed) == tail + 1)
			return false;
		/* Still empty although the host consumed our signal (acquire:
		 * its freeze store precedes that clear) and has no freeze open:
		 * it released without refilling this queue, e.g. our only buffer
		 * was still with its collector and the pool could not grow.
		 * Only a freeze release takes a buffer from any lane for us;
		 * without a new signal none would come, so ask again. */
		if (signalled && !atomic_load_explicit(&h->bp.fq_contended, memory_order_acquire) &&
		    !atomic_load_explicit(&h->bp.fq_freeze_active, memory_order_acquire))
			atomic_store_explicit(&h->bp.fq_contended, 1, memory_order_relaxed);
		if (!gc_look(&gc, &waited)) {
			/* the clock starts at the first look: nothing is due */
		} else if (!signalled && waited >= h->grace_cycles) {
			/* relaxed: a sticky 0->1 flag; the host only tests it. */
			atomic_store_explicit(&h->bp.fq_contended, 1, memory_order_relaxed);
			signalled = true;
		} else if (signalled && waited >= h->backstop_cycles) {
			/* Unlike the reference (spec §11.3) the un-frozen re-check is
			 * bounded too, so a host that dies before its first tick
			 * cannot leave the producer spinning forever.  Tested only
			 * after the re-check above: a freeze released after a long
			 * park must hand over the buffers the host refilled. */
			atomic_store_explicit(&st->fq_trip, tail + 1, memory_order_relaxed);
			return false;
		}
		if (signalled && !dpe_pop_freeze_barrier(h, h->backstop_cycles)) {
			atomic_store_explicit(&st->fq_trip, tail + 1, memory_order_relaxed);
			return false;
		}
		spin_relax();
	}
}

int dpe_enqueue_ready(struct tp_shm_header *h, uint32_t q, uint32_t instance, uint32_t kind,
		      uint64_t buffer_ptr, uint32_t seq)
{
	uint32_t tail, head;
	if (!dpe_wait_for_ready_queue_space(h, q, &tail, &head))
		return -EAGAIN;
	struct tp_ready_entry *e = &tp_shm_queue(h, q)[tail];
	/* relaxed: the entry is published by the release store of the tail. */
	atomic_store_explicit(&e->instance, instance, memory_order_relaxed);
	atomic_store_explicit(&e->kind, kind, memory_order_relaxed);
	atomic_store_explicit(&e->buffer_seq, seq, memory_order_relaxed);
	atomic_store_explicit(&e->thread, q, memory_order_relaxed);
	atomic_store_explicit(&e->buffer_ptr, buffer_ptr, memory_order_relaxed);
	/* release (the seed's wmb): the entry fields above and every record of
	 * the buffer are visible to the host before it can observe the tail. */
	atomic_store_explicit(&h->queue_tails[q], (tail + 1) % h->ready_queue_size,
			      memory_order_release);
	/* The buffer is published whatever the barrier says: a barrier timeout
	 * is not a drop (the reference counts it as one, spec §11.4, which
	 * makes collected + dropped exceed total). */
	dpe_push_freeze_barrier(h, h->backstop_cycles);
	return 0;
}

struct tp_buf_hdr *dpe_claim_free(struct tp_dpe *w, uint32_t head, uint32_t next_seq)
{
	struct tp_free_queue *fq = &w->st->free_queue;
	/* relaxed: ordered after the acquire load of tail in the pop gate. */
	uint64_t ptr = atomic_load_explicit(&fq->buffer_ptrs[head % w->h->slot_count],
					    memory_order_relaxed);
	/* release: the slot has been read before the host may refill it. */
	atomic_store_explicit(&fq->head, head + 1, memory_order_release);
	if (ptr == 0) {
		if (w->hooks && w->hooks->on_null_free_slot)
			w->hooks->on_null_free_slot(w);
		return NULL;
	}
	struct tp_buf_hdr *buf = (struct tp_buf_hdr *)(uintptr_t)ptr;
	atomic_store_explicit(&buf->count, 0, memory_order_relaxed);
	buf->seq = next_seq;
	/* release (the seed's wmb): count = 0 is visible before the buffer is
	 * installed as current, for a reconcile that reads current_buf_ptr. */
	atomic_store_explicit(&w->st->current_buf_ptr, ptr, memory_order_release);
	atomic_store_explicit(&w->st->current_buf_seq, next_seq, memory_order_relaxed);
	w->cur = buf;
	w->count = 0;
	w->seq = next_seq;
	if (w->hooks && w->hooks->on_pop_success)
		w->hooks->on_pop_success(w, buf);
	return buf;
}

struct tp_buf_hdr *dpe_try_pop_free(struct tp_dpe *w, uint32_t next_seq)
{
	if (!w || !w->st)
		return NULL;
	struct tp_free_queue *fq = &w->st->free_queue;
	uint32_t head = atomic_load_explicit(&fq->head, memory_order_relaxed);
	/* acquire: as in the pop gate, orders the slot read after the tail. */
	uint32_t tail = atomic_load_explicit(&fq->tail, memory_order_acquire);
	if (tail == head || tail - head > w->h->slot_count)
		return NULL;
	return dpe_claim_free(w, head, next_seq);
}

struct tp_buf_hdr *dpe_pop_free(struct tp_dpe *w, uint32_t next_seq)
{
	uint32_t head, tail;
	if (!w || !w->st)
		return NULL;
	if (!dpe_wait_for_free_queue_entry(w->h, w->st, &head, &tail))
		return NULL;
	return dpe_claim_free(w, head, next_seq);
}

static void clear_current(struct tp_dpe *w, uint32_t next_seq)
{
	w->cur = NULL;
	w->count = 0;
	w->seq = next_seq;
	atomic_store_explicit(&w->st->current_buf_ptr, 0, memory_order_relaxed);
	atomic_store_explicit(&w->st->current_buf_seq, next_seq, memory_order_relaxed);
	if (w->hooks && w->hooks->on_current_cleared)
		w->hooks->on_current_cleared(w);
}

/* Publish the current buffer.  On failure its records are counted as
 * dropped for `cause` (or TP_DROP_INVALID when the queue is corrupted) and
 * the buffer stays current, emptied, so the workload keeps moving; on
 * success the writer has no current buffer.  0 or -EAGAIN. */
static int publish_current(struct tp_dpe *w, enum tp_drop_cause cause)
{
	uint32_t seq = w->seq;
	uint32_t n = w->count;
	if (dpe_enqueue_ready(w->h, w->q, w->instance, w->kind, (uint64_t)(uintptr_t)w->cur,
			      seq) != 0) {
		dpe_account_dropped(w, rq_ok(w->h, w->q) ? cause : TP_DROP_INVALID, n);
		/* The switch's hook (spec §4.6 step 3); a failed flush is the
		 * caller's to report (dpe_flush returns -EAGAIN). */
		if (cause != TP_DROP_FLUSH_FAILED && w->hooks && w->hooks->on_enqueue_failed)
			w->hooks->on_enqueue_failed(w, n);
		w->count = 0;
		atomic_store_explicit(&w->cur->count, 0, memory_order_relaxed);
		return -EAGAIN;
	}
	clear_current(w, seq + 1);
	return 0;
}

void dpe_switch_buffer(struct tp_dpe *w)
{
	if (!w || !w->cur)
		return;
	if (publish_current(w, TP_DROP_READY_FULL) != 0)
		return;
	/* Published before a replacement is sought, so even a one-buffer pool
	 * makes progress: the host can only return a buffer it has seen. */
	struct tp_buf_hdr *buf = dpe_pop_free(w, w->seq);
	if (!buf && w->hooks && w->hooks->on_no_replacement)
		w->hooks->on_no_replacement(w);
	if (w->hooks && w->hooks->on_switch_complete)
		w->hooks->on_switch_complete(w, buf);
}

void *dpe_reserve_slow(struct tp_dpe *w)
{
	/* No replacement was visible at the last switch: try again with the
	 * current sequence number before counting a per-record drop. */
	if (!dpe_pop_free(w, w->seq)) {
		/* relaxed: a diagnosis; a tail the queue cannot hold is corruption. */
		uint32_t fh = atomic_load_explicit(&w->st->free_queue.head, memory_order_relaxed);
		uint32_t ft = atomic_load_explicit(&w->st->free_queue.tail, memory_order_relaxed);
		dpe_account_dropped(w, ft - fh > w->h->slot_count ? TP_DROP_INVALID : TP_DROP_NO_BUFFER,
				    1);
		return NULL;
	}
	return tp_buf_record(w->cur, w->rsize, w->count);
}

int dpe_flush(struct tp_dpe *w)
{
	if (!w || !w->cur || w->count == 0)
		return 0;
	return publish_current(w, TP_DROP_FLUSH_FAILED);
}
