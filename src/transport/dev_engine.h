/*
 * dev_engine.h — the device producer engine (the seed's DeviceProfilerEngine).
 *
 * An AICPU thread writes fixed-size records into the current buffer of an
 * instance (a core, a thread).  When the buffer is full the engine
 * publishes it on the thread's ready queue and pops a replacement from the
 * instance's free queue.  Both waits are block-on-contention gates: the
 * writer raises a contended flag and parks until the host clears the
 * freeze, bounded by the backstop (spec/framework.md §4, §5).  A record is
 * lost only when a gate trips the backstop, and then it is counted by cause
 * in the instance's buffer state (enum tp_drop_cause).
 *
 * All pointers here are device addresses.  One `struct tp_dpe` is one
 * producer's cached view of one instance; it must be used by one thread at
 * a time.
 */
#ifndef TP_TRANSPORT_DEV_ENGINE_H
#define TP_TRANSPORT_DEV_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/layout.h"

struct tp_dpe;

/**
 * struct tp_dpe_hooks - optional per-writer hooks (seed 004 §3.5 table;
 * spec/framework.md §4), all may be NULL. They let a collector keep a
 * local cache (e.g. publish the new buffer address to an AICore) and log
 * its own lines. Called on the producer's thread; `buf` is a device
 * address (NULL: no replacement), `n` a record count. on_enqueue_failed:
 * a full buffer could not be published at a switch (its n records were
 * dropped, the buffer is reused); a failed dpe_flush does not call it
 * (dpe_flush returns -EAGAIN to its caller).
 */
struct tp_dpe_hooks {
	void (*on_pop_success)(struct tp_dpe *w, struct tp_buf_hdr *buf);
	void (*on_current_cleared)(struct tp_dpe *w);
	void (*on_null_free_slot)(struct tp_dpe *w);
	void (*on_no_replacement)(struct tp_dpe *w);
	void (*on_enqueue_failed)(struct tp_dpe *w, uint32_t n);
	void (*on_switch_complete)(struct tp_dpe *w, struct tp_buf_hdr *buf);
};

/*
 * How far ahead of the record being written dpe_reserve() asks for the
 * buffer's line, in bytes. A buffer comes back from the host after the
 * collector copied it on another CPU, long enough ago that its lines have
 * left the producer's caches; without the hint every new line is a store
 * miss that stalls the writer (an AICPU thread, on the critical path)
 * while the line arrives: about 100 ns per task at swimlane level 4
 * (docs/swimlane-cost.md, 2 Dec 2026). 256 bytes: four lines, a few
 * records of every kind, enough time for a line to arrive; 128 to 1,024
 * measured alike.
 */
#define TP_DPE_PREFETCH_BYTES 256u

/**
 * struct tp_dpe - one producer's cached view of one instance; filled by
 * dpe_attach(), used by one thread at a time. Pointers are device
 * addresses; @total and @count mirror the shared counters.
 */
struct tp_dpe {
	struct tp_shm_header *h;   /* device address of the pool header */
	struct tp_buffer_state *st;
	struct tp_buf_hdr *cur;    /* current buffer, NULL when none */
	uint32_t count;            /* records in cur (mirrors cur->count) */
	uint32_t cap;              /* records per buffer of this kind */
	uint32_t rsize;            /* bytes per record */
	uint32_t pf_records;       /* records spanning TP_DPE_PREFETCH_BYTES, rounded up */
	uint32_t seq;              /* current buffer sequence number */
	uint32_t q;                /* ready queue (AICPU thread) index */
	uint32_t instance;
	uint32_t kind;
	uint64_t total;            /* mirrors st->total_record_count */
	const struct tp_dpe_hooks *hooks;
	void *hook_ud;
};

/**
 * dpe_attach() - bind a writer to one instance of a pool.
 * @w:        the writer to fill in.
 * @h:        device address of the pool header (prof_shm_dev()).
 * @instance: buffer state index, < @h->num_instances.
 * @q:        ready queue (AICPU thread) to publish on, < @h->num_threads.
 * @hooks:    optional hooks (NULL: none); kept by pointer.
 * @hook_ud:  passed through in @w->hook_ud.
 *
 * Takes a first buffer without blocking (spec/framework.md §4.4
 * try_pop_free); with none at hand the first record retries through the
 * pop gate. An instance that still holds a current buffer (a re-attach)
 * keeps it, with its count, sequence number and total.
 *
 * Return: 0, or -EINVAL when @w is NULL, @h is not a pool header (magic),
 * @instance / @q is out of range, or the header's slot count, kind count,
 * the instance's kind or that kind's record size (0) is invalid. Sets no
 * tp_last_error() message.
 */
int dpe_attach(struct tp_dpe *w, struct tp_shm_header *h, uint32_t instance, uint32_t q,
	       const struct tp_dpe_hooks *hooks, void *hook_ud);

/**
 * dpe_reserve_slow() - dpe_reserve() without a current buffer: pop one
 * through the pop gate (spec/framework.md §4.6 step 5, same sequence
 * number). Out of line.
 * @w: the writer (its total already counted the record).
 *
 * Return: where to write the record, or NULL when no buffer came before
 * the backstop: the record is counted dropped (TP_DROP_NO_BUFFER, or
 * TP_DROP_INVALID for a free queue whose tail it cannot hold).
 */
void *dpe_reserve_slow(struct tp_dpe *w);

/**
 * dpe_switch_buffer() - publish the full current buffer on the ready
 * queue, then pop a replacement (spec/framework.md §4.6).
 * @w: the writer; nothing happens without a current buffer.
 *
 * When the publish fails (ready queue full past the backstop) the
 * buffer's records are counted dropped (TP_DROP_READY_FULL, or
 * TP_DROP_INVALID for a corrupted queue) and it stays current, emptied.
 * When no replacement comes the writer is left without a current buffer.
 */
void dpe_switch_buffer(struct tp_dpe *w);

/**
 * dpe_reserve() - count one record and get where to write it.
 * @w: the writer.
 *
 * Counts the record in total first (spec/framework.md §4.7). Call
 * dpe_commit() after filling it. Inline: this is the per-record hot path
 * of every collector.
 *
 * Return: room for @w->rsize bytes in the current buffer, or NULL when
 * the record was dropped (counted as dpe_reserve_slow() says).
 */
static inline void *dpe_reserve(struct tp_dpe *w)
{
	w->total++;
	/* relaxed: the device is the only writer; the host reads the counter
	 * at reconcile, after the device threads have been joined. */
	atomic_store_explicit(&w->st->total_record_count, w->total, memory_order_relaxed);
	if (__builtin_expect(w->cur != NULL, 1)) {
		char *p = tp_buf_record(w->cur, w->rsize, w->count);
		/* A hint for the line TP_DPE_PREFETCH_BYTES ahead (it cannot
		 * fault); only inside this buffer's records, so that it never
		 * pulls a line of a buffer the host is reading. On plain
		 * x86-64 gcc makes it a read prefetch; PREFETCHW
		 * (base/cache.h) measured no better here (4 Dec 2026). */
		if (w->pf_records < w->cap - w->count)
			__builtin_prefetch(p + TP_DPE_PREFETCH_BYTES, 1, 3);
		return p;
	}
	return dpe_reserve_slow(w);
}

/**
 * dpe_commit() - the record dpe_reserve() returned is complete.
 * @w: the writer; only after a dpe_reserve() that returned non-NULL.
 *
 * A buffer that is now full is switched at once (dpe_switch_buffer()), so
 * the host can recycle it early; that may block at the gates.
 */
static inline void dpe_commit(struct tp_dpe *w)
{
	uint32_t n = ++w->count;
	/* relaxed: the host reads count only after acquiring the ready-queue
	 * tail that the release store in dpe_enqueue_ready publishes. */
	atomic_store_explicit(&w->cur->count, n, memory_order_relaxed);
	if (__builtin_expect(n >= w->cap, 0))
		dpe_switch_buffer(w);
}

/**
 * dpe_write() - dpe_reserve(), copy the record in, dpe_commit().
 * @w:   the writer.
 * @rec: @w->rsize bytes.
 *
 * Return: true when the record was stored; false when it was dropped (and
 * counted).
 */
static inline bool dpe_write(struct tp_dpe *w, const void *rec)
{
	void *p = dpe_reserve(w);
	if (!p)
		return false;
	__builtin_memcpy(p, rec, w->rsize);
	dpe_commit(w);
	return true;
}

/**
 * dpe_flush() - end of run: publish the current buffer if it holds
 * records.
 * @w: the writer (NULL, or one without records: nothing to do).
 *
 * Return: 0 (the writer then has no current buffer, or an empty one), or
 * -EAGAIN when the ready queue stayed full past the backstop: its records
 * are counted as TP_DROP_FLUSH_FAILED (TP_DROP_INVALID for a corrupted
 * queue) and the buffer stays current, empty. Sets no tp_last_error()
 * message.
 */
int dpe_flush(struct tp_dpe *w);

/* ---- The seed's engine primitives, exposed for collectors with local
 * protocols (swimlane AICore rotation) and for unit tests. ---- */

/**
 * dpe_wait_for_ready_queue_space() - the push gate (spec/framework.md
 * §4.1, §5.2): wait for a free slot in ready queue @q.
 * @h:    pool header.
 * @q:    ready queue index.
 * @tail: receives the queue's tail (the free slot) on success.
 * @head: receives the queue's head on success.
 *
 * Raises rq_contended once the queue stayed full for @h->grace_cycles,
 * then waits up to @h->backstop_cycles (system counter ticks; time the
 * process was stopped not counted). Succeeds even while rq_freeze_active
 * is set: the freeze is enforced after the push.
 *
 * Return: true with the slot at *@tail free. False: invalid pool or @q,
 * corrupted indices, or the backstop tripped (then later calls fail at
 * once until the host advances the head).
 */
bool dpe_wait_for_ready_queue_space(struct tp_shm_header *h, uint32_t q, uint32_t *tail,
				    uint32_t *head);
/**
 * dpe_wait_for_free_queue_entry() - the pop gate (spec/framework.md §4.2,
 * §5.2): wait for the free queue of @st to hold a buffer.
 * @h:    pool header.
 * @st:   the instance's buffer state.
 * @head: receives the queue's head counter on success.
 * @tail: receives the queue's tail counter on success.
 *
 * Raises fq_contended once the queue stayed empty for @h->grace_cycles
 * and parks at the pop freeze barrier. Unlike the reference (spec §11.3)
 * the un-frozen re-check is bounded by @h->backstop_cycles too.
 *
 * Return: true when the queue is non-empty. False: invalid pool, NULL
 * @st, a tail the queue cannot hold, or the backstop tripped (then later
 * calls fail at once until the host pushes).
 */
bool dpe_wait_for_free_queue_entry(struct tp_shm_header *h, struct tp_buffer_state *st,
				   uint32_t *head, uint32_t *tail);
/**
 * dpe_enqueue_ready() - device push of one full buffer (spec/framework.md
 * §2): pass the push gate, write the entry, release-publish the tail, park
 * at the push freeze barrier.
 * @h:          pool header.
 * @q:          ready queue index.
 * @instance:   producer instance, for the entry.
 * @kind:       buffer kind, for the entry.
 * @buffer_ptr: device address of the full buffer.
 * @seq:        its buffer sequence number.
 *
 * Return: 0 when published, also when the freeze barrier afterwards timed
 * out (the reference returns failure then, spec §11.4); -EAGAIN when the
 * push gate failed (not published).
 */
int dpe_enqueue_ready(struct tp_shm_header *h, uint32_t q, uint32_t instance, uint32_t kind,
		      uint64_t buffer_ptr, uint32_t seq);
/**
 * dpe_claim_free() - consume free-queue slot @head and install its buffer
 * as current (spec/framework.md §4.3).
 * @w:        the writer.
 * @head:     the free queue's head counter, from a gate that saw it
 *            non-empty.
 * @next_seq: sequence number of the new buffer.
 *
 * Return: the buffer (count reset to 0), or NULL when the slot held 0 (the
 * slot is consumed all the same; on_null_free_slot is called).
 */
struct tp_buf_hdr *dpe_claim_free(struct tp_dpe *w, uint32_t head, uint32_t next_seq);
/**
 * dpe_try_pop_free() - non-blocking pop for start-up (spec/framework.md
 * §4.4).
 * @w:        the writer.
 * @next_seq: sequence number of the new buffer.
 *
 * Return: the new current buffer; NULL (without raising contention) on an
 * empty or corrupted queue, a NULL @w, or a null slot.
 */
struct tp_buf_hdr *dpe_try_pop_free(struct tp_dpe *w, uint32_t next_seq);
/**
 * dpe_pop_free() - blocking pop through the pop gate (spec/framework.md
 * §4.5).
 * @w:        the writer.
 * @next_seq: sequence number of the new buffer.
 *
 * Return: the new current buffer, or NULL when the gate failed (see
 * dpe_wait_for_free_queue_entry()) or the slot held 0.
 */
struct tp_buf_hdr *dpe_pop_free(struct tp_dpe *w, uint32_t next_seq);
/**
 * dpe_push_freeze_barrier() - park while rq_freeze_active is set
 * (spec/framework.md §5.1 push_freeze_barrier); dpe_pop_freeze_barrier()
 * does the same for fq_freeze_active.
 * @h:       pool header; NULL passes at once.
 * @timeout: longest park, in system counter ticks (tp_sys_cnt()); time the
 *           process was stopped is not counted.
 *
 * Return: true when the freeze is (or was) clear; false on timeout, or at
 * once when a barrier already timed out and the host has not ticked since.
 */
bool dpe_push_freeze_barrier(struct tp_shm_header *h, uint64_t timeout);
bool dpe_pop_freeze_barrier(struct tp_shm_header *h, uint64_t timeout);

/**
 * dpe_account_dropped() - count records as dropped (spec/framework.md
 * §4.7).
 * @w:     the writer whose instance lost them.
 * @cause: why; added to dropped_by_cause[@cause] and dropped_record_count.
 * @n:     records; 0 does nothing.
 */
void dpe_account_dropped(struct tp_dpe *w, enum tp_drop_cause cause, uint64_t n);

#endif
