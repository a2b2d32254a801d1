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

/* Optional per-writer hooks (seed 004 §3.5 table), all may be NULL.  They
 * let a collector keep a local cache (e.g. publish the new buffer address
 * to an AICore) and log its own lines.  `n` is a record count. */
struct tp_dpe_hooks {
	void (*on_pop_success)(struct tp_dpe *w, struct tp_buf_hdr *buf);
	void (*on_current_cleared)(struct tp_dpe *w);
	void (*on_null_free_slot)(struct tp_dpe *w);
	void (*on_no_replacement)(struct tp_dpe *w);
	void (*on_enqueue_failed)(struct tp_dpe *w, uint32_t n);
	void (*on_switch_complete)(struct tp_dpe *w, struct tp_buf_hdr *buf);
};

struct tp_dpe {
	struct tp_shm_header *h;   /* device address of the pool header */
	struct tp_buffer_state *st;
	struct tp_buf_hdr *cur;    /* current buffer, NULL when none */
	uint32_t count;            /* records in cur (mirrors cur->count) */
	uint32_t cap;              /* records per buffer of this kind */
	uint32_t rsize;            /* bytes per record */
	uint32_t seq;              /* current buffer sequence number */
	uint32_t q;                /* ready queue (AICPU thread) index */
	uint32_t instance;
	uint32_t kind;
	uint64_t total;            /* mirrors st->total_record_count */
	const struct tp_dpe_hooks *hooks;
	void *hook_ud;
};

/*
 * dpe_attach — bind a writer to instance `instance` of the pool at `h`,
 * publishing on ready queue `q`, and take a first buffer without blocking
 * (try_pop_free).  Returns 0, or -EINVAL when h is not a pool header or
 * instance / q is out of range.  spec/framework.md §4.4.
 */
int dpe_attach(struct tp_dpe *w, struct tp_shm_header *h, uint32_t instance, uint32_t q,
	       const struct tp_dpe_hooks *hooks, void *hook_ud);

/* Slow path of dpe_reserve: no current buffer.  Out of line. */
void *dpe_reserve_slow(struct tp_dpe *w);
/* Publish the full current buffer and install a replacement.  §4.6. */
void dpe_switch_buffer(struct tp_dpe *w);

/*
 * dpe_reserve — count one record (total first, spec/framework.md §4.7) and
 * return where to write its rsize bytes, or NULL when it was dropped
 * (counted as TP_DROP_NO_BUFFER).  Call dpe_commit after filling it.
 * Inline: this is the per-record hot path of every collector.
 */
static inline void *dpe_reserve(struct tp_dpe *w)
{
	w->total++;
	/* relaxed: the device is the only writer; the host reads the counter
	 * at reconcile, after the device threads have been joined. */
	atomic_store_explicit(&w->st->total_record_count, w->total, memory_order_relaxed);
	if (__builtin_expect(w->cur != NULL, 1))
		return tp_buf_record(w->cur, w->rsize, w->count);
	return dpe_reserve_slow(w);
}

/* dpe_commit — the record returned by dpe_reserve is complete; a full
 * buffer is published at once so the host can recycle it early. */
static inline void dpe_commit(struct tp_dpe *w)
{
	uint32_t n = ++w->count;
	/* relaxed: the host reads count only after acquiring the ready-queue
	 * tail that the release store in dpe_enqueue_ready publishes. */
	atomic_store_explicit(&w->cur->count, n, memory_order_relaxed);
	if (__builtin_expect(n >= w->cap, 0))
		dpe_switch_buffer(w);
}

/* dpe_write — reserve, copy rsize bytes from `rec`, commit.  Returns true
 * when the record was stored, false when it was dropped (and counted). */
static inline bool dpe_write(struct tp_dpe *w, const void *rec)
{
	void *p = dpe_reserve(w);
	if (!p)
		return false;
	__builtin_memcpy(p, rec, w->rsize);
	dpe_commit(w);
	return true;
}

/*
 * dpe_flush — end of run: publish the current buffer if it holds records.
 * Returns 0 (the writer then has no current buffer, or an empty one), or
 * -EAGAIN when the ready queue stayed full past the backstop: its records
 * are counted as TP_DROP_FLUSH_FAILED and the buffer stays current, empty.
 */
int dpe_flush(struct tp_dpe *w);

/* ---- The seed's engine primitives, exposed for collectors with local
 * protocols (swimlane AICore rotation) and for unit tests. ---- */

/* §4.1 push gate.  On true, *tail / *head hold the queue indices and the
 * slot at *tail is free.  False: invalid pool or q, corrupted indices, or
 * backstop tripped (then later calls fail fast until the host advances). */
bool dpe_wait_for_ready_queue_space(struct tp_shm_header *h, uint32_t q, uint32_t *tail,
				    uint32_t *head);
/* §4.2 pop gate for the free queue of `st`.  On true the queue is
 * non-empty and *head / *tail are its counters. */
bool dpe_wait_for_free_queue_entry(struct tp_shm_header *h, struct tp_buffer_state *st,
				   uint32_t *head, uint32_t *tail);
/* §2 device push: write the entry, release-publish the tail, park at the
 * push freeze barrier.  0, or -EAGAIN (not published). */
int dpe_enqueue_ready(struct tp_shm_header *h, uint32_t q, uint32_t instance, uint32_t kind,
		      uint64_t buffer_ptr, uint32_t seq);
/* §4.3: consume free-queue slot `head`; install it as current with
 * sequence `next_seq`.  NULL when the slot held 0. */
struct tp_buf_hdr *dpe_claim_free(struct tp_dpe *w, uint32_t head, uint32_t next_seq);
/* §4.4: non-blocking pop; NULL on an empty queue without raising contention. */
struct tp_buf_hdr *dpe_try_pop_free(struct tp_dpe *w, uint32_t next_seq);
/* §4.5: blocking pop through the pop gate. */
struct tp_buf_hdr *dpe_pop_free(struct tp_dpe *w, uint32_t next_seq);
/* §5.1 barriers: park while the freeze flag is set, at most `timeout`
 * system-counter ticks.  True when released (or no header), false on timeout. */
bool dpe_push_freeze_barrier(struct tp_shm_header *h, uint64_t timeout);
bool dpe_pop_freeze_barrier(struct tp_shm_header *h, uint64_t timeout);

/* Count `n` records of `w` as dropped for `cause`. */
void dpe_account_dropped(struct tp_dpe *w, enum tp_drop_cause cause, uint64_t n);

#endif
