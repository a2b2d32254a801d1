/*
 * profiler.c — host control layer: pool setup, the host algorithms and the
 * drain / replenish / collector threads.  spec/framework.md §2, §3, §5.3,
 * §7, §8; seed 004 §3.2, §5, §6.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/watchdog.h"
#include "transport/profiler.h"

#define DRAIN_BUSY_POLL_SCANS 64
#define BUSY_POLL_MIN_CPUS 4 /* busy-poll only with this many online CPUs */
#define IDLE_SLEEP_US 10
#define IDLE_SLEEP_MAX_US 160 /* default bound of the adaptive idle sleep */
#define STARVED_SLEEP_MAX_US 40 /* drain bound while an instance is starved */
#define REPLENISH_SLEEP_FACTOR 4 /* quiet replenish bound / drain bound: kicks cover urgency */
#define REPLENISH_BUSY_MAX_US 200 /* replenish bound while busy: it opens / releases freezes */
#define BUSY_WINDOW_NS (20ull * 1000 * 1000) /* busy mode lasts this long after pressure */
#define DRAIN_WAKE_BATCH 8 /* buffers a drain hands its collector before a wake at the latest */
#define STARVED_KICK_NS (100ull * 1000) /* drain: kicks while an instance stays starved */
/* ... backing off, doubling up to this, while the pool cap stops growth */
#define STARVED_KICK_CAPPED_MAX_NS (3200ull * 1000)
#define COLLECTOR_TICK_MS 100
#define NULL_ENTRY_PATIENCE 1000 /* scans before a zero-pointer entry is skipped */

static uint64_t align64(uint64_t n)
{
	return (n + 63u) & ~(uint64_t)63u;
}

static void sleep_us(unsigned us)
{
	struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000L};
	nanosleep(&ts, NULL);
}

static uint32_t rq_size(const struct tp_profiler *p)
{
	return p->rq_size;
}

/* Buffer state / ready queue of the host view, from host-held offsets. */
static struct tp_buffer_state *state_of(const struct tp_profiler *p, uint32_t i)
{
	return (struct tp_buffer_state *)((char *)p->hdr + p->states_off) + i;
}

static struct tp_ready_entry *queue_of(const struct tp_profiler *p, uint32_t q)
{
	return (struct tp_ready_entry *)((char *)p->hdr + p->queues_off) + (size_t)q * p->rq_size;
}

static void count_host_loss(struct tp_profiler *p, enum tp_host_loss cause, uint32_t instance,
			    uint64_t records)
{
	atomic_fetch_add_explicit(&p->host_lost[cause], records, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->host_lost_buffers[cause], 1, memory_order_relaxed);
	if (instance < p->num_instances)
		atomic_fetch_add_explicit(&p->inst_host_lost[instance], records,
					  memory_order_relaxed);
}

/* ------------------------------------------------------------ host pop */

bool prof_try_pop_entry(struct tp_profiler *p, uint32_t q, struct tp_ready_entry *out)
{
	struct tp_shm_header *h = p->hdr;
	const uint32_t size = rq_size(p);
	if (q >= p->num_threads)
		return false;
	/* The head is host-owned: the host's private copy is authoritative,
	 * only the device's tail is refreshed (narrow read, spec §9). */
	if (bp_read_range(&p->bp, &h->queue_tails[q], sizeof(h->queue_tails[q])) != 0) {
		TP_ERROR("%s: failed to refresh ready_queue indices for thread %u", p->m->name, q);
		return false;
	}
	/* acquire: pairs with the device's release store of the tail; the
	 * entry and the records of its buffer are visible after this load. */
	uint32_t tail = atomic_load_explicit(&h->queue_tails[q], memory_order_acquire);
	uint32_t head = atomic_load_explicit(&p->host_head[q], memory_order_relaxed);
	if (head >= size || tail >= size) {
		/* Never trust out-of-range indices: report and treat as empty. */
		atomic_fetch_add_explicit(&p->bad_index_events, 1, memory_order_relaxed);
		/* Once per queue, then every 100000th read of it: the drain
		 * polls a corrupted queue on every scan. */
		if (p->bad_index_streak[q]++ % 100000 == 0)
			TP_ERROR("%s: invalid queue indices for thread %u: head=%u tail=%u (max=%u)",
				 p->m->name, q, head, tail, size);
		return false;
	}
	if (head == tail)
		return false;
	struct tp_ready_entry *e = &queue_of(p, q)[head];
	if (bp_read_range(&p->bp, e, sizeof(*e)) != 0) {
		TP_ERROR("%s: failed to read ready entry %u of thread %u", p->m->name, head, q);
		return false;
	}
	/* relaxed loads: ordered after the acquire load of the tail above. */
	const uint32_t inst = atomic_load_explicit(&e->instance, memory_order_relaxed);
	const uint32_t kind = atomic_load_explicit(&e->kind, memory_order_relaxed);
	const uint64_t ptr = atomic_load_explicit(&e->buffer_ptr, memory_order_relaxed);
	const uint32_t seq = atomic_load_explicit(&e->buffer_seq, memory_order_relaxed);
	/* relaxed stores: *out is the caller's private copy, read by that
	 * thread only (a plain assignment to an _Atomic field would be a
	 * seq_cst store, an xchg on the drain's hot path). */
	atomic_store_explicit(&out->instance, inst, memory_order_relaxed);
	atomic_store_explicit(&out->kind, kind, memory_order_relaxed);
	atomic_store_explicit(&out->buffer_ptr, ptr, memory_order_relaxed);
	atomic_store_explicit(&out->buffer_seq, seq, memory_order_relaxed);
	atomic_store_explicit(&out->thread, q, memory_order_relaxed);
	if (ptr == 0) {
		/* The reference waits for a torn entry to complete.  With
		 * release/acquire publication a zero pointer is corruption, so
		 * wait a little, then report and skip it rather than stall. */
		if (++p->null_streak[q] < NULL_ENTRY_PATIENCE)
			return false;
		p->null_streak[q] = 0;
		atomic_fetch_add_explicit(&p->null_entry_events, 1, memory_order_relaxed);
		TP_ERROR("%s: ready entry %u of thread %u has a null buffer pointer; skipped",
			 p->m->name, head, q);
	}
	p->null_streak[q] = 0;
	/* release: our reads of the entry complete before the device, which
	 * acquires the head, may overwrite that slot. */
	atomic_store_explicit(&h->queue_heads[q], (head + 1) % size, memory_order_release);
	if (bp_write_range(&p->bp, &h->queue_heads[q], sizeof(h->queue_heads[q])) != 0) {
		atomic_store_explicit(&h->queue_heads[q], head, memory_order_relaxed);
		TP_ERROR("%s: failed to advance ready_queue head for thread %u", p->m->name, q);
		return false;
	}
	/* relaxed: read by this drain and by the replenish thread's freeze
	 * check, which only compares it with the device's tail. */
	atomic_store_explicit(&p->host_head[q], (head + 1) % size, memory_order_relaxed);
	return ptr != 0;
}

/* -------------------------------------------------------- free queues */

static uint64_t obtain_buffer(struct tp_profiler *p, int kind, int shard)
{
	if (shard >= 0)
		return bp_pop_recycled(&p->bp, kind, shard);
	uint64_t dev = bp_pop_recycled_for_startup(&p->bp, kind);
	if (dev)
		return dev;
	int batch = p->m->batch_size ? p->m->batch_size(kind) : 1;
	if (batch < 1)
		batch = 1;
	bp_allocate_recycled_batch(&p->bp, kind, bp_buffer_size(&p->bp, kind), batch, -1);
	return bp_pop_recycled_for_startup(&p->bp, kind);
}

/* Fill instance's free queue; *starved (may be NULL) tells whether it was
 * left short because no buffer was at hand. */
static size_t top_up_n(struct tp_profiler *p, uint32_t instance, int shard, bool *starved,
		       size_t max_push, uint32_t *had);

static size_t top_up(struct tp_profiler *p, uint32_t instance, int shard, bool *starved)
{
	return top_up_n(p, instance, shard, starved, SIZE_MAX, NULL);
}

/* Push at most max_push buffers into instance's free queue.  *had (may be
 * NULL): buffers the queue held before the push (slot_count when it could
 * not be read). */
static size_t top_up_n(struct tp_profiler *p, uint32_t instance, int shard, bool *starved,
		       size_t max_push, uint32_t *had)
{
	if (starved)
		*starved = false;
	if (had)
		*had = p->slot_count;
	if (instance >= p->num_instances)
		return 0;
	struct tp_free_queue *fq = &state_of(p, instance)->free_queue;
	const uint32_t slots = p->slot_count;
	const int kind = p->inst_kind[instance];
	size_t pushed = 0;
	/* One producer per free queue at a time: an instance's buffers may
	 * arrive on several ready queues, and the replenish thread produces
	 * too while a freeze is open.  acquire: pairs with the release clear
	 * at the end of the previous holder's push, so its slot and tail
	 * stores (and its host-side copies) are seen before ours. */
	while (atomic_flag_test_and_set_explicit(&p->fq_busy[instance], memory_order_acquire))
		;
	for (;;) {
		if (bp_read_range(&p->bp, &fq->head, sizeof(fq->head)) != 0) {
			TP_ERROR("%s: failed to refresh free_queue head", p->m->name);
			break;
		}
		/* acquire: pairs with the device's release of head after it read
		 * the slot, so overwriting that slot below is safe. */
		uint32_t head = atomic_load_explicit(&fq->head, memory_order_acquire);
		uint32_t tail = atomic_load_explicit(&fq->tail, memory_order_relaxed);
		if (had && pushed == 0)
			*had = tail - head;
		if (tail - head >= slots || pushed >= max_push)
			break;
		uint64_t dev = obtain_buffer(p, kind, shard);
		if (!dev) {
			if (starved)
				*starved = true;
			break;
		}
		uint32_t slot = tail % slots;
		uint64_t old = atomic_load_explicit(&fq->buffer_ptrs[slot], memory_order_relaxed);
		/* relaxed: published by the release store of the tail below. */
		atomic_store_explicit(&fq->buffer_ptrs[slot], dev, memory_order_relaxed);
		if (bp_write_range(&p->bp, &fq->buffer_ptrs[slot], sizeof(uint64_t)) != 0) {
			atomic_store_explicit(&fq->buffer_ptrs[slot], old, memory_order_relaxed);
			TP_ERROR("%s: failed to publish free_queue slot", p->m->name);
			bp_retire(&p->bp, kind, dev, shard);
			break;
		}
		/* release (the seed's wmb): the slot is visible before the tail
		 * that exposes it. */
		atomic_store_explicit(&fq->tail, tail + 1, memory_order_release);
		if (bp_write_range(&p->bp, &fq->tail, sizeof(fq->tail)) != 0) {
			atomic_store_explicit(&fq->tail, tail, memory_order_relaxed);
			atomic_store_explicit(&fq->buffer_ptrs[slot], old, memory_order_relaxed);
			bp_write_range(&p->bp, &fq->buffer_ptrs[slot], sizeof(uint64_t));
			TP_ERROR("%s: failed to publish free_queue tail", p->m->name);
			bp_retire(&p->bp, kind, dev, shard);
			break;
		}
		pushed++;
	}
	/* release: pairs with the acquire test-and-set above; our pushes
	 * happen before the next producer's read of head and tail. */
	atomic_flag_clear_explicit(&p->fq_busy[instance], memory_order_release);
	return pushed;
}

size_t prof_top_up_free_queue(struct tp_profiler *p, uint32_t instance, int shard)
{
	return top_up(p, instance, shard, NULL);
}

size_t prof_replenish_free_queues(struct tp_profiler *p)
{
	size_t pushed = 0;
	/* Fairness when buffers are scarce (pool cap reached): one buffer to
	 * every instance first, so a producer that is still writing is not
	 * starved by queues filled to the brim in instance order. */
	for (uint32_t i = 0; i < p->num_instances; i++)
		pushed += top_up_n(p, i, -1, NULL, 1, NULL);
	for (uint32_t i = 0; i < p->num_instances; i++)
		pushed += top_up_n(p, i, -1, NULL, SIZE_MAX, NULL);
	return pushed;
}

/* ------------------------------------------------------ process entry */

/* Drain-thread state: instances whose free queue a top-up left short
 * because recycled lane `shard` was empty; retried on every scan so a
 * buffer returned late reaches the device without waiting for the next
 * ready entry of that instance. */
struct drain_ctx {
	int shard;
	uint32_t *starved; /* instance ids */
	uint8_t *marked;   /* per instance: on the list */
	uint32_t nstarved;
	/* Set by a pass that found the device short of slack: a free queue
	 * at a quarter of its slots or less before the top-up, a starved
	 * instance, or a ready queue at least half full.  Only then (or in
	 * busy mode) does the drain shorten its sleep (drain_main). */
	bool pressure;
	/* Buffers handed to this drain's collector shard and not yet woken
	 * for: the collector is woken once per ready queue emptied (and every
	 * DRAIN_WAKE_BATCH buffers while one keeps coming), not per buffer:
	 * each wake of a sleeping collector is a futex call and two context
	 * switches on CPUs the device's threads run on (drain_pass). */
	uint32_t wake_pending;
};

static void kick_replenish(struct tp_profiler *p);

/* Distress (a starved instance, contention at a gate, a freeze): the host
 * threads run in busy mode for BUSY_WINDOW_NS (drain_main,
 * replenish_main; docs/transport.md hardening item 12). */
static void note_pressure(struct tp_profiler *p)
{
	/* relaxed: a hint for the sleep policy; nothing is ordered by it. */
	atomic_store_explicit(&p->busy_until_ns, tp_now_ns() + BUSY_WINDOW_NS,
			      memory_order_relaxed);
}

static bool host_busy(const struct tp_profiler *p)
{
	/* relaxed: see note_pressure. */
	return tp_now_ns() < atomic_load_explicit(&p->busy_until_ns, memory_order_relaxed);
}

static void note_starved(struct tp_profiler *p, struct drain_ctx *dc, uint32_t inst)
{
	if (dc && !dc->marked[inst]) {
		dc->marked[inst] = 1;
		dc->starved[dc->nstarved++] = inst;
		dc->pressure = true;
		/* The recycled lane ran dry: the replenish thread refills it
		 * from the done rings, or allocates; do not wait for its tick. */
		kick_replenish(p);
	}
}

static void process_entry(struct tp_profiler *p, uint32_t q, const struct tp_ready_entry *e,
			  struct drain_ctx *dc);

void prof_process_entry(struct tp_profiler *p, uint32_t q, const struct tp_ready_entry *e)
{
	process_entry(p, q, e, NULL);
}

static void process_entry(struct tp_profiler *p, uint32_t q, const struct tp_ready_entry *e,
			  struct drain_ctx *dc)
{
	const int shard = (int)(q % (uint32_t)p->shard_count);
	/* relaxed: *e is a private copy (prof_try_pop_entry's), nobody
	 * writes it concurrently; read once into plain locals. */
	const uint32_t inst = atomic_load_explicit(&e->instance, memory_order_relaxed);
	const uint32_t ekind = atomic_load_explicit(&e->kind, memory_order_relaxed);
	const uint64_t ptr = atomic_load_explicit(&e->buffer_ptr, memory_order_relaxed);
	const uint32_t seq = atomic_load_explicit(&e->buffer_seq, memory_order_relaxed);
	if (inst >= p->num_instances || ekind != p->inst_kind[inst] ||
	    (p->m->accept_entry && !p->m->accept_entry(p->hdr, q, e))) {
		TP_ERROR("%s: invalid ready entry on thread %u: instance=%u kind=%u "
			 "(instances=%u); buffer dropped",
			 p->m->name, q, inst, ekind, p->num_instances);
		if (bp_resolve_host_range(&p->bp, ptr, 1))
			bp_retire(&p->bp, 0, ptr, shard);
		count_host_loss(p, TP_HOST_LOST_BAD_ENTRY, UINT32_MAX, 0);
		return;
	}
	const int kind = (int)ekind;
	/* Geometry from the module, not from the region: on a shared mapping
	 * the device can overwrite the header. */
	const uint32_t bufsize = bp_buffer_size(&p->bp, kind);
	const uint32_t cap = p->m->records_per_buffer[kind];
	const uint32_t rsize = p->m->record_size[kind];
	/* A mapped address is not yet a buffer: the pool region, or a pointer
	 * into the middle of a buffer, would be recycled to the device and
	 * written over.  Every buffer block is carved at a stride of bufsize. */
	uint64_t base = bp_release_pointer_for(&p->bp, ptr);
	if (base == p->shm_dev || (ptr - base) % bufsize != 0) {
		TP_ERROR("%s: ready entry on thread %u names %#" PRIx64 ", which is not a buffer "
			 "of kind %d; dropped",
			 p->m->name, q, ptr, kind);
		count_host_loss(p, TP_HOST_LOST_BAD_ENTRY, inst, 0);
		return;
	}
	struct tp_buf_hdr *host = bp_resolve_host_range(&p->bp, ptr, bufsize);
	if (!host) {
		count_host_loss(p, TP_HOST_LOST_UNMAPPED, inst, 0);
		return;
	}
	/* a5: pull the header first, then only the records it holds. */
	if (bp_copy_buffer_from_device(&p->bp, host, ptr, TP_BUF_HDR_SIZE) != 0) {
		TP_ERROR("%s: failed to copy ready buffer from device (kind=%d, thread=%u)",
			 p->m->name, kind, q);
		bp_retire(&p->bp, kind, ptr, shard);
		count_host_loss(p, TP_HOST_LOST_COPY_FAILED, inst, 0);
		return;
	}
	uint32_t count = atomic_load_explicit(&host->count, memory_order_relaxed);
	if (count > cap) {
		TP_ERROR("%s: buffer %#" PRIx64 " of instance %u claims %u records (capacity %u); "
			 "dropped",
			 p->m->name, ptr, inst, count, cap);
		bp_retire(&p->bp, kind, ptr, shard);
		count_host_loss(p, TP_HOST_LOST_BAD_ENTRY, inst, 0);
		return;
	}
	if (count && bp_copy_buffer_from_device(&p->bp, (char *)host + TP_BUF_HDR_SIZE,
						ptr + TP_BUF_HDR_SIZE,
						(size_t)count * rsize) != 0) {
		TP_ERROR("%s: failed to copy ready buffer from device (kind=%d, thread=%u)",
			 p->m->name, kind, q);
		bp_retire(&p->bp, kind, ptr, shard);
		count_host_loss(p, TP_HOST_LOST_COPY_FAILED, inst, count);
		return;
	}
	/* seq_cst: pairs with the store in open_freeze; while a freeze is open
	 * the replenish thread is the only free-queue producer (spec §5.3). */
	if (!atomic_load_explicit(&p->host_freeze_open, memory_order_seq_cst)) {
		bool starved;
		uint32_t had;
		top_up_n(p, inst, shard, &starved, SIZE_MAX, &had);
		if (starved)
			note_starved(p, dc, inst);
		if (dc && had * 4 <= p->slot_count)
			dc->pressure = true;
	}

	struct tp_ready_info info = {
		.kind = (uint32_t)kind,
		.instance = inst,
		.thread = q,
		.seq = seq,
		.count = count,
		.record_size = rsize,
		.dev_ptr = ptr,
		.host_ptr = host,
		.records = (char *)host + TP_BUF_HDR_SIZE,
	};
	if (tp_spsc_push(&p->bp.ready[bp_norm_shard(&p->bp, shard)].ring, &info)) {
		if (dc && ++dc->wake_pending < DRAIN_WAKE_BATCH)
			return; /* drain_pass wakes the collector */
		if (dc)
			dc->wake_pending = 0;
		bp_wake_ready(&p->bp, shard);
		return;
	}
	/* The collector is behind: wait for room (backpressure reaches the
	 * device through the ready queue) rather than lose the buffer. Wake
	 * it first: a wake deferred to the end of the pass would come only
	 * after this wait. */
	bp_wake_ready(&p->bp, shard);
	int wait_ms = p->cfg.ready_push_wait_ms;
	/* A watchdog, not a deadline: time the process spent stopped does
	 * not count (base/watchdog.h), so Ctrl-Z then fg loses nothing. */
	struct tp_watchdog wd;
	tp_watchdog_start(&wd, (uint64_t)(wait_ms > 0 ? wait_ms : 0) * 1000000u, tp_now_ns());
	while (wait_ms > 0 && !tp_watchdog_expired(&wd, tp_now_ns())) {
		sleep_us(50);
		if (tp_spsc_push(&p->bp.ready[bp_norm_shard(&p->bp, shard)].ring, &info)) {
			bp_wake_ready(&p->bp, shard);
			return;
		}
	}
	TP_ERROR("BufferPoolManager: ready queue full for shard=%d capacity=%zu", shard,
		 p->bp.ready_cap);
	bp_retire(&p->bp, kind, ptr, shard);
	count_host_loss(p, TP_HOST_LOST_SHARD_FULL, inst, count);
}

/* --------------------------------------------------------- backpressure */

static void log_freeze(struct tp_profiler *p, bool open, const char *what)
{
	uint64_t n = atomic_fetch_add_explicit(open ? &p->freeze_opened : &p->freeze_released, 1,
					       memory_order_relaxed) + 1;
	/* The first TRIGGERED / RELEASED pair of a profiler session is the
	 * spec's WARN, word for word (spec/framework.md §5.3). Later ones are
	 * quieter than the reference (which logs each at WARN): backpressure
	 * is normal operation under load, so every 1000th is an INFO line and
	 * the rest DEBUG, numbered; reconcile reports the count at TIMING. */
	if (n == 1) {
		if (open)
			TP_WARN("%s DFX backpressure TRIGGERED: %s", p->m->name, what);
		else
			TP_WARN("%s DFX backpressure RELEASED: ready-queue drained AND free-queues "
				"refilled — AICPU lanes resume",
				p->m->name);
		return;
	}
	int level = n % 1000 == 0 ? TP_LOG_INFO : TP_LOG_DEBUG;
	if (!tp_log_enabled(level))
		return;
	if (open)
		tp_log(level, "%s DFX backpressure TRIGGERED: %s (occurrence %" PRIu64 ")",
		       p->m->name, what, n);
	else
		tp_log(level,
		       "%s DFX backpressure RELEASED: ready-queue drained AND free-queues "
		       "refilled — AICPU lanes resume (occurrence %" PRIu64 ")",
		       p->m->name, n);
}

static void open_freeze(struct tp_profiler *p, _Atomic uint32_t *freeze, _Atomic uint32_t *contended,
			const char *what)
{
	/* seq_cst: drains test this flag before topping up a free queue, so
	 * after this store no new drain-side top-up starts. */
	atomic_store_explicit(&p->host_freeze_open, true, memory_order_seq_cst);
	/* Both freezes can open on one tick; the time runs from the first.
	 * relaxed: only this (replenish) thread writes the freeze flags. */
	if (!atomic_load_explicit(&p->hdr->bp.rq_freeze_active, memory_order_relaxed) &&
	    !atomic_load_explicit(&p->hdr->bp.fq_freeze_active, memory_order_relaxed))
		p->freeze_t0_ns = tp_now_ns();
	note_pressure(p);
	/* release: pairs with the device's acquire loads of the freeze flag
	 * at its gates (dev_engine.c); the freeze is visible with everything
	 * before it. */
	atomic_store_explicit(freeze, 1, memory_order_release);
	bp_write_range(&p->bp, freeze, sizeof(*freeze));
	/* release: orders the freeze store above before this clear, so a
	 * device that acquires contended == 0 (dev_engine.c, the free-queue
	 * wait) also sees the freeze: there is no instant where it could see
	 * both at 0. */
	atomic_store_explicit(contended, 0, memory_order_release);
	bp_write_range(&p->bp, contended, sizeof(*contended));
	log_freeze(p, true, what);
}

void prof_update_backpressure(struct tp_profiler *p)
{
	struct tp_backpressure *bpf = &p->hdr->bp;
	if (!atomic_load_explicit(&bpf->rq_freeze_active, memory_order_relaxed)) {
		bp_read_range(&p->bp, &bpf->rq_contended, sizeof(bpf->rq_contended));
		if (atomic_load_explicit(&bpf->rq_contended, memory_order_relaxed))
			open_freeze(p, &bpf->rq_freeze_active, &bpf->rq_contended,
				    "ready-queue-full, push-gate freeze OPENED — all AICPU lanes "
				    "parked at their push gate");
	}
	if (!atomic_load_explicit(&bpf->fq_freeze_active, memory_order_relaxed)) {
		bp_read_range(&p->bp, &bpf->fq_contended, sizeof(bpf->fq_contended));
		if (atomic_load_explicit(&bpf->fq_contended, memory_order_relaxed))
			open_freeze(p, &bpf->fq_freeze_active, &bpf->fq_contended,
				    "free-queue-empty, pop-gate freeze OPENED — all AICPU lanes "
				    "parked at their pop gate");
	}
	bool rq = atomic_load_explicit(&bpf->rq_freeze_active, memory_order_relaxed);
	bool fq = atomic_load_explicit(&bpf->fq_freeze_active, memory_order_relaxed);
	if (!rq && !fq)
		return; /* zero cost when idle */
	/* Pull the device tails into a local copy, never into the shadow:
	 * each shadow tail is its drain's, which must acquire exactly the
	 * value it copied (that copy pairs with the device's release of the
	 * tail); a newer tail stored here would reach the drain without that
	 * synchronisation, before the entry and buffer behind it. */
	_Atomic uint32_t local_tails[TP_MAX_AICPU_THREADS];
	_Atomic uint32_t *tails = p->hdr->queue_tails; /* shared mapping: the device's */
	if (p->bp.shadow) {
		if (p->cfg.ops.copy_from_device(p->cfg.ops.ud, local_tails,
						(char *)(uintptr_t)p->shm_dev +
							offsetof(struct tp_shm_header, queue_tails),
						sizeof(uint32_t) * p->num_threads) != 0)
			return;
		tails = local_tails;
	}
	/* Only the live queues: unused ones are 0/0 anyway (spec §11.8).
	 * relaxed host_head: written by the drains, only compared here.
	 * acquire tail: pairs with the device's release store of the tail
	 * (dev_engine.c); a comparison only, nothing behind it is read here. */
	for (uint32_t q = 0; q < p->num_threads; q++)
		if (atomic_load_explicit(&p->host_head[q], memory_order_relaxed) !=
		    atomic_load_explicit(&tails[q], memory_order_acquire))
			return; /* ready queues not drained yet; drains keep running */
	if (prof_replenish_free_queues(p) != 0)
		return; /* release on a tick where nothing more could be pushed */
	/* release (both stores): pairs with the device's acquire loads of the
	 * freeze flags at its gates (dev_engine.c); the refilled slots and
	 * tails are visible before a device that acquires the cleared freeze
	 * flag re-checks its free queue. */
	if (rq) {
		atomic_store_explicit(&bpf->rq_freeze_active, 0, memory_order_release);
		bp_write_range(&p->bp, &bpf->rq_freeze_active, sizeof(uint32_t));
	}
	if (fq) {
		atomic_store_explicit(&bpf->fq_freeze_active, 0, memory_order_release);
		bp_write_range(&p->bp, &bpf->fq_freeze_active, sizeof(uint32_t));
	}
	/* seq_cst: the same total order as open_freeze's store and the
	 * drains' seq_cst loads (process_entry, retry_starved): a drain that
	 * sees false again may top up free queues itself. */
	atomic_store_explicit(&p->host_freeze_open, false, memory_order_seq_cst);
	/* relaxed: a statistic, read after the replenish thread's join. */
	atomic_fetch_add_explicit(&p->freeze_ns, tp_now_ns() - p->freeze_t0_ns,
				  memory_order_relaxed);
	log_freeze(p, false, NULL);
}

/* -------------------------------------------------------------- threads */

struct thread_arg {
	struct tp_profiler *p;
	int index;
};

/* Adaptive sleep of a drain. *us is the next sleep: it doubles after
 * every sleep, up to the pool's bound (cfg.idle_sleep_max_us, 160 µs by
 * default), and idle_found_work halves it after a pass that found the
 * device short of slack, or any work in busy mode.  In quiet mode work
 * alone does not shorten it, so a steady stream costs one wake-up per
 * bound, not one per buffer.  While a freeze holds AICPU lanes parked it
 * sleeps the minimum, 10 µs, whatever *us says.  On 2 cores shared with
 * the simulated AICPU and AICore threads every wake-up is a context
 * switch on a producer's core, and costs the device far more than the few
 * µs the host thread runs. */
static void idle_sleep_upto(struct tp_profiler *p, unsigned *us, unsigned max)
{
	unsigned cur = *us < IDLE_SLEEP_US ? IDLE_SLEEP_US : *us > max ? max : *us;
	/* relaxed: a hint; the freeze itself is ordered elsewhere. */
	if (atomic_load_explicit(&p->host_freeze_open, memory_order_relaxed)) {
		sleep_us(IDLE_SLEEP_US);
		return;
	}
	sleep_us(cur);
	*us = cur * 2 > max ? max : cur * 2;
}

static long futex_word(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	/* The kernel reads the word as a plain u32: an _Atomic uint32_t has
	 * the same size and representation (lock-free, no hidden state). */
	return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

/* Wake the replenish thread now (a drain found a recycled lane empty or
 * the device raised contention; a collector found its done ring full).
 * Costs a futex syscall, so callers kick on a change, or rate-limited
 * (STARVED_KICK_NS), not on every pass. */
static void kick_replenish(struct tp_profiler *p)
{
	/* release: the state the kicker saw (an empty lane, a raised flag)
	 * happens before the replenisher's acquire of the new count; it
	 * re-reads that state on its next pass anyway. */
	atomic_fetch_add_explicit(&p->repl_kicks, 1, memory_order_release);
	futex_word(&p->repl_kicks, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* The replenish thread's sleep: as idle_sleep_upto, but a kick made since
 * it loaded `seen` (before its last pass) ends it at once, and resets the
 * next sleep to the minimum. */
static void replenish_nap(struct tp_profiler *p, unsigned *us, unsigned max, uint32_t seen)
{
	unsigned cur = *us < IDLE_SLEEP_US ? IDLE_SLEEP_US : *us > max ? max : *us;
	/* relaxed: a hint; the freeze itself is ordered elsewhere. */
	if (atomic_load_explicit(&p->host_freeze_open, memory_order_relaxed)) {
		sleep_us(IDLE_SLEEP_US);
		return;
	}
	struct timespec ts = {.tv_sec = cur / 1000000u, .tv_nsec = (long)(cur % 1000000u) * 1000L};
	/* Sleeps only while repl_kicks == seen: a kick in between changed it
	 * and makes this return at once (EAGAIN). */
	futex_word(&p->repl_kicks, FUTEX_WAIT_PRIVATE, seen, &ts);
	/* acquire: pairs with the release increment in kick_replenish. */
	if (atomic_load_explicit(&p->repl_kicks, memory_order_acquire) != seen)
		*us = IDLE_SLEEP_US;
	else
		*us = cur * 2 > max ? max : cur * 2;
}

/* Whether the device has raised contention at a gate (it waits there for
 * the replenish thread to open a freeze).  Read into locals on the shadow
 * transport: the host copy of the header belongs to the replenish thread. */
static bool contention_raised(struct tp_profiler *p)
{
	struct tp_backpressure *bpf = &p->hdr->bp;
	if (!p->bp.shadow)
		/* relaxed: a hint for a kick; the replenisher re-reads them. */
		return atomic_load_explicit(&bpf->rq_contended, memory_order_relaxed) ||
		       atomic_load_explicit(&bpf->fq_contended, memory_order_relaxed);
	/* One copy of the 16-byte block: both flags in a single transfer. */
	uint32_t v[4] = { 0, 0, 0, 0 };
	_Static_assert(sizeof(struct tp_backpressure) == sizeof(v), "4 flags of 32 bits");
	const char *dev = (const char *)(uintptr_t)p->shm_dev + offsetof(struct tp_shm_header, bp);
	if (p->cfg.ops.copy_from_device(p->cfg.ops.ud, v, dev, sizeof(v)) != 0)
		return false;
	return v[offsetof(struct tp_backpressure, rq_contended) / sizeof(uint32_t)] ||
	       v[offsetof(struct tp_backpressure, fq_contended) / sizeof(uint32_t)];
}

static unsigned idle_sleep_max(const struct tp_profiler *p)
{
	return p->cfg.idle_sleep_max_us ? p->cfg.idle_sleep_max_us : IDLE_SLEEP_MAX_US;
}

static void idle_found_work(unsigned *us)
{
	*us /= 2;
}

/* Host threads sleep from 10 µs up; the default 50 µs timer slack would
 * stretch a 10 µs sleep to ~60 µs and leave parked AICPU lanes waiting. */
static void host_thread_init(const char *role, int index)
{
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	/* Named for perf / top: "tp-drain0", "tp-coll1", "tp-repl". */
	char name[32];
	if (index >= 0)
		snprintf(name, sizeof(name), "tp-%s%d", role, index);
	else
		snprintf(name, sizeof(name), "tp-%s", role);
	name[15] = '\0'; /* the kernel keeps 15 bytes of a thread name */
	pthread_setname_np(pthread_self(), name);
}

enum { CPU_DRAIN, CPU_REPL, CPU_COLL };

/* Add the calling host thread's CPU time (ns) to the pool's statistic of
 * its role; called as the thread ends. */
static void note_thread_cpu(struct tp_profiler *p, int role)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return;
	/* relaxed: a statistic, read after the join. */
	atomic_fetch_add_explicit(&p->host_cpu_ns[role],
				  (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
				  memory_order_relaxed);
}

/* Retry the starved instances while recycled lane dc->shard has buffers. */
static bool retry_starved(struct tp_profiler *p, struct drain_ctx *dc)
{
	/* seq_cst: as in process_entry, pairs with the store in open_freeze;
	 * while a freeze is open the replenish thread alone tops up. */
	if (!dc->nstarved ||
	    atomic_load_explicit(&p->host_freeze_open, memory_order_seq_cst))
		return false;
	bool pushed = false;
	uint32_t keep = 0;
	for (uint32_t k = 0; k < dc->nstarved; k++) {
		uint32_t inst = dc->starved[k];
		bool starved;
		pushed |= top_up(p, inst, dc->shard, &starved) != 0;
		if (starved)
			dc->starved[keep++] = inst;
		else
			dc->marked[inst] = 0;
	}
	dc->nstarved = keep;
	return pushed;
}

static bool drain_pass(struct tp_profiler *p, struct drain_ctx *dc, uint32_t first, uint32_t n)
{
	bool hit = false;
	struct tp_ready_entry e;
	for (uint32_t q = first; q < p->num_threads; q += n) {
		uint32_t popped = 0;
		while (prof_try_pop_entry(p, q, &e)) {
			process_entry(p, q, &e, dc);
			popped++;
		}
		hit |= popped > 0;
		if (dc && popped * 2 >= rq_size(p))
			dc->pressure = true;
		if (dc && dc->wake_pending) {
			dc->wake_pending = 0;
			bp_wake_ready(&p->bp, dc->shard);
		}
	}
	return hit;
}

/* The pool cap has refused growth (and no memory was freed since): only
 * buffers coming back from the collectors can refill a starved lane, so
 * a starved drain need not look, nor wake the replenish thread, as often. */
static bool pool_capped(struct tp_profiler *p)
{
	/* relaxed: a hint for the sleep policy. */
	return p->bp.pool_cap_bytes && atomic_load_explicit(&p->bp.cap_hit, memory_order_relaxed);
}

static void *drain_main(void *arg)
{
	struct thread_arg *a = arg;
	host_thread_init("drain", a->index);
	struct tp_profiler *p = a->p;
	const uint32_t n = (uint32_t)p->shard_count;
	const uint32_t first = (uint32_t)a->index;
	free(a);
	struct drain_ctx dc = {
		.shard = (int)first,
		.starved = calloc(p->num_instances, sizeof(uint32_t)),
		.marked = calloc(p->num_instances, 1),
	};
	struct drain_ctx *dcp = dc.starved && dc.marked ? &dc : NULL;
	unsigned empty_scans = 0, nap = 0;
	bool contended = false;
	uint64_t last_kick = 0, kick_gap = STARVED_KICK_NS;
	/* acquire: pairs with the release store in prof_stop. */
	while (atomic_load_explicit(&p->mgmt_running, memory_order_acquire)) {
		if (atomic_load_explicit(&p->test_pause_drain, memory_order_relaxed)) {
			sleep_us(100);
			continue;
		}
		if (dcp)
			dcp->pressure = false;
		bool hit = drain_pass(p, dcp, first, n);
		if (dcp) {
			hit |= retry_starved(p, dcp);
			/* Still short after the retry: the replenish thread has not
			 * refilled the lane yet; keep it awake, at most one kick per
			 * STARVED_KICK_NS (the drain passes every 40 µs or less
			 * while starved, and a kick is a futex syscall), backing
			 * off while the pool cap stops growth. */
			if (dcp->nstarved) {
				uint64_t now = tp_now_ns();
				if (now - last_kick >= kick_gap) {
					kick_replenish(p);
					last_kick = now;
					/* At the cap the replenish thread can only route
					 * returned buffers, which it does on every tick:
					 * back off instead of waking it every 100 µs. */
					if (!pool_capped(p))
						kick_gap = STARVED_KICK_NS;
					else if (kick_gap < STARVED_KICK_CAPPED_MAX_NS)
						kick_gap *= 2;
				}
			} else {
				kick_gap = STARVED_KICK_NS;
			}
		}
		/* Lanes waiting at a gate: the replenish thread opens the
		 * freeze; wake it on the rising edge rather than at its tick. */
		bool c = contention_raised(p);
		if (c && !contended)
			kick_replenish(p);
		contended = c;
		/* Distress, not mere pressure, puts the host in busy mode: a
		 * lane found dry or a producer waiting at a gate. */
		if (c || !dcp || dcp->nstarved)
			note_pressure(p);
		if (hit) {
			empty_scans = 0;
			/* Quiet: work alone does not shorten the sleep.  Busy (the
			 * device was short of slack within BUSY_WINDOW_NS): every
			 * pass that found work does, as buffers arrive faster than
			 * the slack lasts. */
			if (!dcp || dcp->pressure || host_busy(p))
				idle_found_work(&nap);
		} else if (++empty_scans > p->busy_poll_scans) {
			/* A starved instance's producer is about to park at its
			 * pop gate: look again soon for the buffers the
			 * replenish thread recycles. */
			unsigned max = idle_sleep_max(p);
			if (dcp && dcp->nstarved && max > STARVED_SLEEP_MAX_US && !pool_capped(p))
				max = STARVED_SLEEP_MAX_US;
			idle_sleep_upto(p, &nap, max);
			/* relaxed: a statistic, read after the join. */
			atomic_fetch_add_explicit(&p->drain_sleeps, 1, memory_order_relaxed);
		}
	}
	/* Final pass: everything the device published before it stopped. */
	while (drain_pass(p, NULL, first, n))
		;
	free(dc.starved);
	free(dc.marked);
	note_thread_cpu(p, CPU_DRAIN);
	return NULL;
}

static void *replenish_main(void *arg)
{
	host_thread_init("repl", -1);
	struct tp_profiler *p = arg;
	unsigned nap = 0;
	for (;;) {
		/* acquire: pairs with kick_replenish; a kick after this load
		 * ends the nap below at once.  Loaded before mgmt_running, so
		 * prof_stop's store-then-kick cannot fall between the two and
		 * leave this thread in a full nap. */
		uint32_t seen = atomic_load_explicit(&p->repl_kicks, memory_order_acquire);
		/* acquire: pairs with the release store in prof_stop. */
		if (!atomic_load_explicit(&p->mgmt_running, memory_order_acquire))
			break;
		size_t drained = bp_drain_done_into_recycled(&p->bp);
		size_t low = 0;
		size_t added = bp_replenish_recycled_pools_low(&p->bp, &low);
		prof_update_backpressure(p);
		uint32_t tick = atomic_load_explicit(&p->hdr->host_tick, memory_order_relaxed);
		/* relaxed: a heartbeat; the device only compares it. */
		atomic_store_explicit(&p->hdr->host_tick, tick + 1, memory_order_relaxed);
		bp_write_range(&p->bp, &p->hdr->host_tick, sizeof(uint32_t));
		/* Quiet, nothing here is urgent by itself: returned buffers
		 * reach the recycled lanes, and allocation keeps each lane at
		 * its warm target, ahead of need.  What is urgent wakes this
		 * thread: a drain kicks it when a lane runs dry or the device
		 * raises contention, a collector when its done ring is full,
		 * and while a freeze is open it naps the minimum.  So it may
		 * sleep REPLENISH_SLEEP_FACTOR times the drains' bound.  Busy,
		 * it keeps up with the flow: any work halves its sleep, which
		 * is bounded by REPLENISH_BUSY_MAX_US. */
		unsigned max = idle_sleep_max(p);
		if (host_busy(p)) {
			if (max > REPLENISH_BUSY_MAX_US)
				max = REPLENISH_BUSY_MAX_US;
			if (drained || added) {
				idle_found_work(&nap);
				continue;
			}
		} else {
			max *= REPLENISH_SLEEP_FACTOR;
			/* A lane found below half its warm target was drawn down
			 * faster than this thread's sleep: look again sooner. */
			if (low)
				idle_found_work(&nap);
		}
		replenish_nap(p, &nap, max, seen);
		/* relaxed: a statistic, read after the join. */
		atomic_fetch_add_explicit(&p->repl_sleeps, 1, memory_order_relaxed);
	}
	note_thread_cpu(p, CPU_REPL);
	return NULL;
}

static void consume(struct tp_profiler *p, const struct tp_ready_info *info, int shard)
{
	bool kept = !p->cfg.on_buffer_collected ||
		    p->cfg.on_buffer_collected(p->cfg.ud, info, shard);
	if (kept)
		atomic_fetch_add_explicit(&p->inst_collected[info->instance], info->count,
					  memory_order_relaxed);
	else
		count_host_loss(p, TP_HOST_LOST_COLLECTOR, info->instance, info->count);
	atomic_fetch_add_explicit(&p->buffers_collected, 1, memory_order_relaxed);
	/* Return the buffer through the done ring.  When the ring is full the
	 * replenish thread is behind: wait for it (it drains every ring on
	 * each tick) rather than take the buffer out of circulation, unless it
	 * has already been joined (stop), when teardown releases it. */
	for (unsigned tries = 0;; tries++) {
		if (bp_try_notify_copy_done(&p->bp, info->dev_ptr, (int)info->kind, shard))
			break;
		/* acquire: pairs with the release store in prof_stop. */
		if (!atomic_load_explicit(&p->mgmt_running, memory_order_acquire)) {
			bp_retire(&p->bp, (int)info->kind, info->dev_ptr, shard);
			break;
		}
		if (tries == 0)
			kick_replenish(p);
		if (tries == 2000)
			TP_WARN("%s: done ring of shard %d full for 100 ms: the replenish thread is "
				"behind; the collector waits",
				p->m->name, shard);
		sleep_us(50);
	}
}

static void *collector_main(void *arg)
{
	struct thread_arg *a = arg;
	struct tp_profiler *p = a->p;
	const int shard = a->index;
	free(a);
	host_thread_init("coll", shard);
	const int timeout_s = p->m->idle_timeout_sec > 0 ? p->m->idle_timeout_sec : 30;
	bool seen = false, stalled = false, idle = false;
	/* The idle timeout skips time the process spent stopped (a gap
	 * between two ticks, or a SIGCONT: base/watchdog.h). */
	struct tp_watchdog idle_wd;
	struct tp_ready_info info;
	for (;;) {
		if (bp_wait_pop_ready(&p->bp, &info, COLLECTOR_TICK_MS, shard)) {
			/* The shard is live again from the moment it has a buffer:
			 * cleared before the buffer is delivered, so whoever sees the
			 * delivery (through the sink's own synchronisation) also sees
			 * the flag cleared. */
			if (stalled) {
				TP_WARN("%s collector shard %d resumed after its idle timeout",
					p->m->name, shard);
				atomic_store_explicit(&p->coll_abandoned[shard], false,
						      memory_order_relaxed);
				stalled = false;
			}
			consume(p, &info, shard);
			seen = true;
			idle = false;
			continue;
		}
		/* acquire: pairs with the release store in prof_stop, made after
		 * the drains (the only producers) were joined. */
		if (atomic_load_explicit(&p->execution_complete, memory_order_acquire)) {
			while (bp_try_pop_ready(&p->bp, &info, shard))
				consume(p, &info, shard);
			note_thread_cpu(p, CPU_COLL);
			return NULL;
		}
		if (!seen)
			continue; /* an empty shard is a valid shape: never times out */
		uint64_t now = tp_now_ns();
		if (!idle) {
			tp_watchdog_start(&idle_wd, (uint64_t)timeout_s * 1000000000u, now);
			idle = true;
		} else if (!stalled && tp_watchdog_expired(&idle_wd, now)) {
			/* The hang detector of the spec, without its give-up: a run
			 * may be quiet for a while, and a shard that stopped
			 * consuming would lose every later buffer. */
			TP_ERROR("%s collector idle timeout after %d seconds — no buffer on shard %d "
				 "since; still waiting",
				 p->m->name, timeout_s, shard);
			atomic_store_explicit(&p->coll_abandoned[shard], true, memory_order_relaxed);
			stalled = true;
		}
	}
}

/* ----------------------------------------------------------- lifecycle */

static bool validate(const struct tp_profiler_config *c)
{
	const struct tp_module *m = c->module;
	if (!m || !m->name || m->kinds < 1 || m->kinds > TP_MAX_KINDS) {
		tp_set_error(-EINVAL, "profiler: module missing or kinds out of [1, %d]", TP_MAX_KINDS);
		return false;
	}
	if (m->ready_queue_size < 2 || m->slot_count < 1 || m->slot_count > TP_FQ_MAX_SLOTS) {
		tp_set_error(-EINVAL,
			     "%s: ready_queue_size %u must be >= 2 and slot_count %u in [1, %d]",
			     m->name, m->ready_queue_size, m->slot_count, TP_FQ_MAX_SLOTS);
		return false;
	}
	for (int k = 0; k < m->kinds; k++)
		if (!m->record_size[k] || !m->records_per_buffer[k] ||
		    !tp_buffer_bytes(m->record_size[k], m->records_per_buffer[k])) {
			tp_set_error(-EINVAL, "%s: kind %d has no record size or capacity", m->name, k);
			return false;
		}
	if (c->num_threads < 1 || c->num_threads > TP_MAX_AICPU_THREADS) {
		tp_set_error(-EINVAL, "%s: num_threads %u out of [1, %d]", m->name, c->num_threads,
			     TP_MAX_AICPU_THREADS);
		return false;
	}
	size_t lane = m->host_recycled_queue_size   ? m->host_recycled_queue_size
		      : m->host_pool_queue_size     ? m->host_pool_queue_size
						    : 1024;
	if (c->buffers_per_instance > m->slot_count + lane) {
		tp_set_error(-EINVAL,
			     "%s: buffers_per_instance %u exceeds what an instance can hold "
			     "(slot_count %u + recycled lane %zu)",
			     m->name, c->buffers_per_instance, m->slot_count, lane);
		return false;
	}
	for (int k = 0; k < TP_MAX_KINDS; k++)
		if (c->init_surplus[k] && (k >= m->kinds || c->init_surplus[k] > lane)) {
			tp_set_error(-EINVAL,
				     "%s: init_surplus[%d] = %u: expected 0 for a kind the module "
				     "lacks, at most the recycled lane's %zu otherwise",
				     m->name, k, c->init_surplus[k], lane);
			return false;
		}
	if (m->idle_timeout_sec < 0 || m->idle_timeout_sec > 86400) {
		tp_set_error(-EINVAL, "%s: idle_timeout_sec %d out of [0, 86400]", m->name,
			     m->idle_timeout_sec);
		return false;
	}
	if (c->num_instances < 1) {
		tp_set_error(-EINVAL, "%s: num_instances must be >= 1", m->name);
		return false;
	}
	if (!c->ops.alloc || !c->ops.free_) {
		tp_set_error(-EINVAL, "%s: memory ops need alloc and free", m->name);
		return false;
	}
	if (c->instance_kind)
		for (uint32_t i = 0; i < c->num_instances; i++)
			if (c->instance_kind[i] >= m->kinds) {
				tp_set_error(-EINVAL, "%s: instance %u has kind %u (kinds=%d)", m->name,
					     i, c->instance_kind[i], m->kinds);
				return false;
			}
	return true;
}

static void free_dev(void *ud, uint64_t dev)
{
	struct tp_profiler *p = ud;
	p->cfg.ops.free_(p->cfg.ops.ud, (void *)(uintptr_t)dev);
}

static void free_host_state(struct tp_profiler *p)
{
	free(p->inst_kind);
	free(p->fq_busy);
	free(p->null_streak);
	free(p->bad_index_streak);
	free(p->drain_th);
	free(p->coll_th);
	free((void *)p->coll_abandoned);
	free((void *)p->inst_collected);
	free((void *)p->inst_host_lost);
	free(p);
}

/* Seed one instance: one block carved into n buffers; up to slot_count go
 * straight into its free queue, the rest to a recycled lane. */
static int seed_instance(struct tp_profiler *p, uint32_t i, uint32_t n)
{
	const int kind = p->inst_kind[i];
	const size_t size = bp_buffer_size(&p->bp, kind);
	void *host;
	uint64_t base = bp_alloc_and_register_block(&p->bp, size * n, &host);
	if (!base)
		return -ENOMEM;
	struct tp_free_queue *fq = &state_of(p, i)->free_queue;
	for (uint32_t b = 0; b < n; b++) {
		uint64_t dev = base + (uint64_t)b * size;
		uint32_t tail = atomic_load_explicit(&fq->tail, memory_order_relaxed);
		if (b < p->slot_count) {
			/* Device not running yet: plain order suffices; the whole
			 * region is pushed (a5) or the launch orders it (a2a3). */
			atomic_store_explicit(&fq->buffer_ptrs[tail % p->slot_count], dev,
					      memory_order_relaxed);
			atomic_store_explicit(&fq->tail, tail + 1, memory_order_relaxed);
		} else if (!bp_push_recycled(&p->bp, kind, dev, (int)(i % (uint32_t)p->shard_count))) {
			bp_retire(&p->bp, kind, dev, (int)(i % (uint32_t)p->shard_count));
		}
	}
	return 0;
}

/* Fill every live shard's recycled lane of each kind k with a non-zero
 * cfg->init_surplus[k] up to its warm target plus that surplus (clamped to
 * the lane's capacity, with a DEBUG line): one block per lane short of it.
 * Returns 0, or -ENOMEM with tp_last_error() set. */
static int seed_surplus(struct tp_profiler *p, const struct tp_profiler_config *cfg)
{
	for (int k = 0; k < p->m->kinds; k++) {
		if (!cfg->init_surplus[k])
			continue;
		const size_t target = bp_warm_target(&p->bp, k) + cfg->init_surplus[k];
		const size_t want = target > p->bp.recycled_cap ? p->bp.recycled_cap : target;
		if (want < target)
			TP_DEBUG("%s: surplus of kind %d clamped to the recycled lane's %zu buffers",
				 p->m->name, k, p->bp.recycled_cap);
		for (int s = 0; s < p->shard_count; s++) {
			size_t cur = bp_recycled_count(&p->bp, k, s);
			if (cur >= want)
				continue;
			size_t n = want - cur;
			if (bp_allocate_recycled_batch(&p->bp, k, bp_buffer_size(&p->bp, k), (int)n,
						       s) != n)
				return tp_set_error(-ENOMEM, "%s: cannot seed the %zu surplus "
						    "buffers of kind %d", p->m->name, n, k);
		}
	}
	return 0;
}

struct tp_profiler *prof_open(const struct tp_profiler_config *cfg)
{
	if (!cfg || !validate(cfg))
		return NULL;
	const struct tp_module *m = cfg->module;
	struct tp_profiler *p = calloc(1, sizeof(*p));
	if (!p) {
		tp_set_error(-ENOMEM, "profiler: out of memory");
		return NULL;
	}
	p->cfg = *cfg;
	p->m = m;
	p->num_threads = cfg->num_threads;
	p->num_instances = cfg->num_instances;
	int max_shards = m->max_collector_threads > 0 ? m->max_collector_threads : 1;
	if (cfg->max_shards && (int)cfg->max_shards < max_shards)
		max_shards = (int)cfg->max_shards;
	p->shard_count = (int)cfg->num_threads < max_shards ? (int)cfg->num_threads : max_shards;
	/* Busy polling wins latency only on spare CPUs; with fewer it takes
	 * the CPU from the producers it is waiting for. */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	p->busy_poll_scans = ncpu >= BUSY_POLL_MIN_CPUS ? DRAIN_BUSY_POLL_SCANS : 0;
	if (p->cfg.ready_push_wait_ms == 0)
		p->cfg.ready_push_wait_ms = (m->idle_timeout_sec > 0 ? m->idle_timeout_sec : 30) * 1000;

	p->inst_kind = calloc(p->num_instances, 1);
	p->fq_busy = calloc(p->num_instances, sizeof(*p->fq_busy));
	p->null_streak = calloc(TP_MAX_AICPU_THREADS, sizeof(*p->null_streak));
	p->bad_index_streak = calloc(TP_MAX_AICPU_THREADS, sizeof(*p->bad_index_streak));
	p->drain_th = calloc((size_t)p->shard_count, sizeof(pthread_t));
	p->coll_th = calloc((size_t)p->shard_count, sizeof(pthread_t));
	p->coll_abandoned = calloc((size_t)p->shard_count, sizeof(*p->coll_abandoned));
	p->inst_collected = calloc(p->num_instances, sizeof(*p->inst_collected));
	p->inst_host_lost = calloc(p->num_instances, sizeof(*p->inst_host_lost));
	if (!p->inst_kind || !p->fq_busy || !p->null_streak || !p->bad_index_streak || !p->drain_th || !p->coll_th ||
	    !p->coll_abandoned || !p->inst_collected || !p->inst_host_lost ||
	    bp_init(&p->bp, m) != 0) {
		free_host_state(p);
		tp_set_error(-ENOMEM, "%s: out of memory", m->name);
		return NULL;
	}
	for (uint32_t i = 0; i < p->num_instances; i++) {
		p->inst_kind[i] = cfg->instance_kind ? cfg->instance_kind[i] : 0;
		/* relaxed: initialisation; no host thread runs yet (prof_start's
		 * pthread_create publishes it). */
		atomic_flag_clear_explicit(&p->fq_busy[i], memory_order_relaxed);
	}
	bp_set_shard_count(&p->bp, p->shard_count);
	if (cfg->warm_covers_instances) {
		uint32_t per_kind[TP_MAX_KINDS] = { 0 };
		for (uint32_t i = 0; i < p->num_instances; i++)
			per_kind[p->inst_kind[i]]++;
		for (int k = 0; k < m->kinds; k++)
			bp_set_warm_min(&p->bp, k,
					(per_kind[k] + (uint32_t)p->shard_count - 1) /
						(uint32_t)p->shard_count);
	}
	bp_set_memory_context(&p->bp, &cfg->ops, NULL, NULL, 0);

	/* Lay out the region. */
	uint64_t queues_off = align64(sizeof(struct tp_shm_header));
	uint64_t states_off =
		align64(queues_off + (uint64_t)p->num_threads * m->ready_queue_size *
					     sizeof(struct tp_ready_entry));
	uint64_t priv_off =
		align64(states_off + (uint64_t)p->num_instances * sizeof(struct tp_buffer_state));
	uint64_t total = align64(priv_off + cfg->priv_size);
	if (total > UINT32_MAX) {
		bp_fini(&p->bp);
		free_host_state(p);
		tp_set_error(-EINVAL, "%s: pool region of %" PRIu64 " bytes is too large", m->name,
			     total);
		return NULL;
	}
	void *host;
	p->shm_dev = bp_alloc_and_register_block(&p->bp, total, &host);
	if (!p->shm_dev) {
		bp_fini(&p->bp);
		free_host_state(p);
		tp_set_error(-ENOMEM, "%s: cannot allocate the %" PRIu64 "-byte pool region",
			     m->name, total);
		return NULL;
	}
	p->hdr = host;
	p->shm_size = (uint32_t)total;
	p->rq_size = m->ready_queue_size;
	p->slot_count = m->slot_count;
	p->queues_off = (uint32_t)queues_off;
	p->states_off = (uint32_t)states_off;
	memset(host, 0, total);
	struct tp_shm_header *h = p->hdr;
	h->magic = TP_SHM_MAGIC;
	h->version = TP_SHM_VERSION;
	h->total_size = (uint32_t)total;
	h->num_threads = p->num_threads;
	h->ready_queue_size = m->ready_queue_size;
	h->slot_count = m->slot_count;
	h->num_instances = p->num_instances;
	h->num_kinds = (uint32_t)m->kinds;
	h->queues_off = (uint32_t)queues_off;
	h->states_off = (uint32_t)states_off;
	h->priv_off = (uint32_t)priv_off;
	h->priv_size = cfg->priv_size;
	h->clock_freq_hz = tp_sys_cnt_freq();
	h->backstop_cycles = cfg->backstop_cycles ? cfg->backstop_cycles : tp_sys_cnt_freq() * 30u;
	h->grace_cycles = cfg->grace_ns == UINT32_MAX
				  ? 0
				  : tp_sys_cnt_from_ns(cfg->grace_ns ? cfg->grace_ns : 20000u);
	for (int k = 0; k < m->kinds; k++)
		h->kinds[k] = (struct tp_kind_geom){
			.record_size = m->record_size[k],
			.records_per_buffer = m->records_per_buffer[k],
			.buffer_size = bp_buffer_size(&p->bp, k),
		};
	for (uint32_t i = 0; i < p->num_instances; i++) {
		struct tp_buffer_state *st = tp_shm_state(h, i);
		st->kind = p->inst_kind[i];
		st->instance = i;
	}
	bp_set_memory_context(&p->bp, &cfg->ops, (void *)(uintptr_t)p->shm_dev, host, total);

	uint32_t per_inst = cfg->buffers_per_instance ? cfg->buffers_per_instance : m->slot_count;
	for (uint32_t i = 0; i < p->num_instances; i++)
		if (seed_instance(p, i, per_inst) != 0) {
			const uint32_t bsize = bp_buffer_size(&p->bp, p->inst_kind[i]);
			bp_release_all_owned(&p->bp, free_dev, p);
			bp_fini(&p->bp);
			free_host_state(p);
			tp_set_error(-ENOMEM, "%s: cannot allocate the seed buffers of instance %u "
				     "(%u buffers of %u bytes): out of memory%s", m->name, i, per_inst, bsize,
				     tp_mem_limit_note());
			return NULL;
		}
	/* The pool cap (below) scales what the instances' seeds take, not the
	 * surplus: a larger surplus must not let the pool grow more in-run. */
	const uint64_t seeded_base = atomic_load_explicit(&p->bp.pool_bytes, memory_order_relaxed);
	if (seed_surplus(p, cfg) != 0) {
		bp_release_all_owned(&p->bp, free_dev, p);
		bp_fini(&p->bp);
		free_host_state(p);
		return NULL;
	}
	uint64_t seeded = atomic_load_explicit(&p->bp.pool_bytes, memory_order_relaxed);
	if (cfg->pool_cap_bytes == 0) {
		uint64_t cap = seeded_base * 8u;
		cap = cap < (16u << 20) ? (16u << 20) : cap;
		p->bp.pool_cap_bytes = cap + (seeded - seeded_base);
	} else {
		p->bp.pool_cap_bytes = cfg->pool_cap_bytes == UINT64_MAX ? 0 : cfg->pool_cap_bytes;
		if (p->bp.pool_cap_bytes && p->bp.pool_cap_bytes < seeded)
			TP_WARN("%s: pool cap of %" PRIu64 " bytes is below the %" PRIu64
				" bytes seeded at open: the pool will not grow",
				m->name, cfg->pool_cap_bytes, seeded);
	}
	if (p->bp.shadow && cfg->ops.copy_to_device(cfg->ops.ud, (void *)(uintptr_t)p->shm_dev,
						    host, total) != 0) {
		bp_release_all_owned(&p->bp, free_dev, p);
		bp_fini(&p->bp);
		free_host_state(p);
		tp_set_error(-EIO, "%s: cannot push the pool region to the device", m->name);
		return NULL;
	}
	TP_DEBUG("%s: pool open: %u threads, %u instances, %d shards, region %u B, seeded %" PRIu64
		 " B",
		 m->name, p->num_threads, p->num_instances, p->shard_count, p->shm_size, seeded);
	return p;
}

void *prof_priv_host(struct tp_profiler *p)
{
	return tp_shm_priv(p->hdr);
}

int prof_push_priv(struct tp_profiler *p)
{
	if (!p->hdr->priv_size)
		return 0;
	return bp_write_range(&p->bp, tp_shm_priv(p->hdr), p->hdr->priv_size);
}

int prof_start(struct tp_profiler *p)
{
	if (!p)
		return -EINVAL;
	if (p->started)
		return 0;
	atomic_store_explicit(&p->execution_complete, false, memory_order_relaxed);
	(void)tp_sys_cnt(); /* calibrate the clock here, not on a producer */
	prof_replenish_free_queues(p);
	bp_replenish_recycled_pools(&p->bp);
	p->start_allocs = atomic_load_explicit(&p->bp.n_allocs, memory_order_relaxed);
	p->start_bytes = atomic_load_explicit(&p->bp.pool_bytes, memory_order_relaxed);
	/* Set before the threads exist: they read it only after their creation. */
	if (p->cfg.pool_cap_start_factor) {
		p->bp.pool_cap_bytes = (size_t)p->start_bytes * p->cfg.pool_cap_start_factor;
		/* relaxed: no thread runs yet. */
		atomic_store_explicit(&p->bp.cap_hit, false, memory_order_relaxed);
		TP_DEBUG("%s: pool cap %zu bytes (%u x the %" PRIu64 " bytes held at start)",
			 p->m->name, p->bp.pool_cap_bytes, p->cfg.pool_cap_start_factor,
			 p->start_bytes);
	}
	/* release: pairs with the host threads' acquire loads of
	 * mgmt_running (drain_main, replenish_main, consume).  They start
	 * after this store, so pthread_create orders it already; release
	 * like the flag's other stores (prof_stop). */
	atomic_store_explicit(&p->mgmt_running, true, memory_order_release);
	int rc = 0, nd = 0, nc = 0;
	bool repl = false;
	/* Management threads first: they produce what collectors consume. */
	for (; nd < p->shard_count && rc == 0; nd++) {
		struct thread_arg *a = malloc(sizeof(*a));
		if (!a) {
			rc = ENOMEM;
			break;
		}
		*a = (struct thread_arg){p, nd};
		rc = pthread_create(&p->drain_th[nd], NULL, drain_main, a);
		if (rc) {
			free(a);
			break;
		}
	}
	if (rc == 0) {
		rc = pthread_create(&p->repl_th, NULL, replenish_main, p);
		repl = rc == 0;
	}
	for (; rc == 0 && nc < p->shard_count; nc++) {
		struct thread_arg *a = malloc(sizeof(*a));
		if (!a) {
			rc = ENOMEM;
			break;
		}
		*a = (struct thread_arg){p, nc};
		rc = pthread_create(&p->coll_th[nc], NULL, collector_main, a);
		if (rc) {
			free(a);
			break;
		}
	}
	if (rc != 0) {
		/* release: as in prof_stop (pairs with the host threads'
		 * acquire loads of mgmt_running). */
		atomic_store_explicit(&p->mgmt_running, false, memory_order_release);
		kick_replenish(p); /* end its nap now, as prof_stop does */
		for (int i = 0; i < nd; i++)
			pthread_join(p->drain_th[i], NULL);
		if (repl)
			pthread_join(p->repl_th, NULL);
		/* release: as in prof_stop (pairs with the collectors' acquire
		 * load), after every drain was joined. */
		atomic_store_explicit(&p->execution_complete, true, memory_order_release);
		for (int i = 0; i < nc; i++) {
			bp_wake_ready(&p->bp, i);
			pthread_join(p->coll_th[i], NULL);
		}
		return tp_set_error(-rc, "%s: cannot start profiler threads: %s%s", p->m->name,
				    strerror(rc), tp_thread_limit_note(rc));
	}
	p->started = true;
	return 0;
}

void prof_stop(struct tp_profiler *p)
{
	if (!p || !p->started)
		return;
	/* release: pairs with the host threads' acquire loads of
	 * mgmt_running; the drains' final pass starts after this store. */
	atomic_store_explicit(&p->mgmt_running, false, memory_order_release);
	/* The replenish thread may be in a nap of several ms: end it now. */
	kick_replenish(p);
	for (int i = 0; i < p->shard_count; i++)
		pthread_join(p->drain_th[i], NULL);
	pthread_join(p->repl_th, NULL);
	/* A freeze still open at stop counts up to now. relaxed: the replenish
	 * thread, the only writer of these, has been joined. */
	if (atomic_load_explicit(&p->host_freeze_open, memory_order_relaxed))
		atomic_fetch_add_explicit(&p->freeze_ns, tp_now_ns() - p->freeze_t0_ns,
					  memory_order_relaxed);
	/* release: only now, with every drain joined, may collectors treat an
	 * empty shard as final. */
	atomic_store_explicit(&p->execution_complete, true, memory_order_release);
	for (int i = 0; i < p->shard_count; i++)
		bp_wake_ready(&p->bp, i);
	for (int i = 0; i < p->shard_count; i++)
		pthread_join(p->coll_th[i], NULL);
	/* A shard whose collector gave up on its idle timeout may have
	 * received buffers since: deliver them here, on this thread. */
	struct tp_ready_info info;
	for (int i = 0; i < p->shard_count; i++) {
		size_t late = 0;
		while (bp_try_pop_ready(&p->bp, &info, i)) {
			consume(p, &info, i);
			late++;
		}
		if (late)
			TP_WARN("%s: delivered %zu late buffers of abandoned collector shard %d at stop",
				p->m->name, late, i);
	}
	p->started = false;
}

static const char *kind_name(const struct tp_module *m, int k, char *buf, size_t n)
{
	if (m->kind_names[k])
		return m->kind_names[k];
	snprintf(buf, n, "kind%d", k);
	return buf;
}

int prof_reconcile(struct tp_profiler *p, struct tp_reconcile *out)
{
	struct tp_reconcile r = {.kinds = p->m->kinds, .ok = true};
	if (p->started)
		return tp_set_error(-EBUSY, "%s: reconcile needs a stopped profiler (call prof_stop "
					    "after the device finished)",
				    p->m->name);
	/* The device has stopped: pull the whole region once.  Without the
	 * device's counters there is nothing to reconcile against: an error,
	 * never a balanced-looking line of zeros. */
	if (p->bp.shadow) {
		int rc = p->cfg.ops.copy_from_device(p->cfg.ops.ud, p->hdr,
						     (void *)(uintptr_t)p->shm_dev, p->shm_size);
		if (rc != 0) {
			TP_ERROR("%s reconcile: cannot read the device counters (copy_from_device "
				 "failed: %d); the run's records cannot be accounted for",
				 p->m->name, rc);
			if (out)
				*out = (struct tp_reconcile){.kinds = p->m->kinds, .ok = false};
			return tp_set_error(-EIO, "%s: cannot read the device counters for reconcile",
					    p->m->name);
		}
	}
	for (uint32_t i = 0; i < p->num_instances; i++) {
		struct tp_buffer_state *st = state_of(p, i);
		struct tp_reconcile_pool *rp = &r.pool[p->inst_kind[i]];
		rp->total += atomic_load_explicit(&st->total_record_count, memory_order_relaxed);
		rp->dropped += atomic_load_explicit(&st->dropped_record_count, memory_order_relaxed);
		rp->mismatch += atomic_load_explicit(&st->mismatch_record_count, memory_order_relaxed);
		for (int c = 0; c < TP_DROP_NCAUSES; c++)
			rp->dropped_by_cause[c] +=
				atomic_load_explicit(&st->dropped_by_cause[c], memory_order_relaxed);
		rp->collected += atomic_load_explicit(&p->inst_collected[i], memory_order_relaxed);
		rp->dropped += atomic_load_explicit(&p->inst_host_lost[i], memory_order_relaxed);
		uint64_t cur = atomic_load_explicit(&st->current_buf_ptr, memory_order_relaxed);
		if (cur) {
			struct tp_buf_hdr *b = bp_resolve_host_range(&p->bp, cur, TP_BUF_HDR_SIZE);
			if (b && bp_copy_buffer_from_device(&p->bp, b, cur, TP_BUF_HDR_SIZE) == 0) {
				uint32_t n = atomic_load_explicit(&b->count, memory_order_relaxed);
				if (n) {
					TP_ERROR("%s: instance %u still holds %u unflushed records in "
						 "its current buffer (device flush missing)",
						 p->m->name, i, n);
					rp->unflushed += n;
				}
			}
		}
	}
	/* Host losses whose instance is unknown go to kind 0. */
	for (int c = 0; c < TP_HOST_LOST_NCAUSES; c++)
		r.pool[0].host_lost_by_cause[c] =
			atomic_load_explicit(&p->host_lost[c], memory_order_relaxed);
	for (int k = 0; k < r.kinds; k++) {
		struct tp_reconcile_pool *rp = &r.pool[k];
		rp->ok = rp->collected + rp->dropped + rp->mismatch == rp->total;
		r.ok = r.ok && rp->ok;
		char nb[16];
		const char *name = kind_name(p->m, k, nb, sizeof(nb));
		int level = !rp->ok ? TP_LOG_ERROR : rp->dropped ? TP_LOG_WARN : TP_LOG_TIMING;
		tp_log(level,
		       "%s reconcile [%s]: collected=%" PRIu64 " + dropped=%" PRIu64
		       " + mismatch=%" PRIu64 " %s total=%" PRIu64
		       " (dropped by cause: no_buffer=%" PRIu64 " ready_full=%" PRIu64
		       " flush_failed=%" PRIu64 " invalid=%" PRIu64 "; host lost=%" PRIu64 ")%s",
		       p->m->name, name, rp->collected, rp->dropped, rp->mismatch,
		       rp->ok ? "==" : "!=", rp->total, rp->dropped_by_cause[TP_DROP_NO_BUFFER],
		       rp->dropped_by_cause[TP_DROP_READY_FULL],
		       rp->dropped_by_cause[TP_DROP_FLUSH_FAILED],
		       rp->dropped_by_cause[TP_DROP_INVALID],
		       rp->dropped - (rp->dropped_by_cause[0] + rp->dropped_by_cause[1] +
				      rp->dropped_by_cause[2] + rp->dropped_by_cause[3]),
		       rp->ok ? "" : " — records unaccounted for");
	}
	uint64_t freezes = atomic_load_explicit(&p->freeze_opened, memory_order_relaxed);
	uint64_t gave_up = 0; /* records dropped after a producer waited at a gate */
	for (int k = 0; k < r.kinds; k++)
		gave_up += r.pool[k].dropped_by_cause[TP_DROP_NO_BUFFER] +
			   r.pool[k].dropped_by_cause[TP_DROP_READY_FULL];
	const double freeze_ms =
		(double)atomic_load_explicit(&p->freeze_ns, memory_order_relaxed) * 1e-6;
	if (gave_up)
		/* The freezes' time does not include a producer's own wait at
		 * its gate, which is what ran out: say what happened instead. */
		TP_WARN("%s: the host fell behind: producers waited up to the %.0f s backstop "
			"for buffers and then dropped %" PRIu64 " records (no_buffer and "
			"ready_full above); backpressure parked them %" PRIu64 " time%s besides, "
			"%.3f ms in all",
			p->m->name,
			(double)(p->cfg.backstop_cycles ? p->cfg.backstop_cycles
							: tp_sys_cnt_freq() * 30u) /
				(double)tp_sys_cnt_freq(),
			gave_up, freezes, freezes == 1 ? "" : "s", freeze_ms);
	else if (freezes)
		TP_TIMING("%s: backpressure parked the producers %" PRIu64 " time%s this run, "
			  "%.3f ms in all (normal under load: a producer waits for the host "
			  "instead of dropping)",
			  p->m->name, freezes, freezes == 1 ? "" : "s", freeze_ms);
	/* relaxed: statistics of the drains, joined by prof_stop. */
	if (atomic_load_explicit(&p->bad_index_events, memory_order_relaxed) ||
	    atomic_load_explicit(&p->null_entry_events, memory_order_relaxed))
		TP_ERROR("%s: ready queues were corrupted: %" PRIu64 " out-of-range index reads, %" PRIu64
			 " null entries skipped",
			 p->m->name,
			 atomic_load_explicit(&p->bad_index_events, memory_order_relaxed),
			 atomic_load_explicit(&p->null_entry_events, memory_order_relaxed));
	if (out)
		*out = r;
	return r.ok ? 0 : -EPROTO;
}

void prof_close(struct tp_profiler *p)
{
	if (!p)
		return;
	prof_stop(p);
	/* relaxed: statistics; every host thread that writes them has been
	 * joined (prof_stop). */
	uint64_t na = atomic_load_explicit(&p->bp.n_allocs, memory_order_relaxed);
	uint64_t nb = atomic_load_explicit(&p->bp.pool_bytes, memory_order_relaxed);
	double cpu_ms[CPU_COLL + 1];
	for (int r = CPU_DRAIN; r <= CPU_COLL; r++)
		cpu_ms[r] = (double)atomic_load_explicit(&p->host_cpu_ns[r], memory_order_relaxed) *
			    1e-6;
	TP_DEBUG("%s: pool close: %" PRIu64 " allocations, %" PRIu64 " bytes (%" PRIu64
		 " allocations, %" PRIu64 " bytes after start), %" PRIu64
		 " refused by the cap, %" PRIu64 " freezes, %" PRIu64 " buffers delivered; "
		 "host sleeps: %" PRIu64 " drain, %" PRIu64 " replenish, %" PRIu32 " kicks; "
		 "host CPU: drain %.3f ms, replenish %.3f ms, collect %.3f ms",
		 p->m->name, na, nb, p->start_bytes ? na - p->start_allocs : 0,
		 p->start_bytes ? nb - p->start_bytes : 0,
		 atomic_load_explicit(&p->bp.alloc_refused, memory_order_relaxed),
		 atomic_load_explicit(&p->freeze_opened, memory_order_relaxed),
		 atomic_load_explicit(&p->buffers_collected, memory_order_relaxed),
		 atomic_load_explicit(&p->drain_sleeps, memory_order_relaxed),
		 atomic_load_explicit(&p->repl_sleeps, memory_order_relaxed),
		 atomic_load_explicit(&p->repl_kicks, memory_order_relaxed),
		 cpu_ms[CPU_DRAIN], cpu_ms[CPU_REPL], cpu_ms[CPU_COLL]);
	/* Everything the pool ever allocated is a mapped block: free each
	 * exactly once (region, seeds, batches; queued or still with the
	 * device), plus the host shadows. */
	bp_release_all_owned(&p->bp, free_dev, p);
	bp_fini(&p->bp);
	free_host_state(p);
}
