/*
 * layout.h — the shared-memory layout of one profiling pool.
 *
 * One pool region lives in device memory per collector (PMU, swimlane,
 * dep_gen): a header with the per-AICPU-thread ready queues and the
 * backpressure flags, then one buffer state per instance (a core, a
 * scheduler thread, the orchestrator), then the module's private bytes.
 * Record buffers are separate device allocations referenced by device
 * address from free queues, ready entries and `current_buf_ptr`.
 *
 * Spec: spec/framework.md §2 (ready queue), §3 (free queue), §5.1
 * (backpressure header); seed 004 §6 (ownership).  Every field names its
 * single writer: the host (drain / replenish threads) or the device (the
 * AICPU producer).  A field is only ever stored by its owner, which is what
 * lets the a5 host-shadow transport write back narrow host-owned fields
 * without rolling back device progress (spec/framework.md §9).
 *
 * All shared fields are C11 atomics; every access names its order.
 */
#ifndef TP_TRANSPORT_LAYOUT_H
#define TP_TRANSPORT_LAYOUT_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Capacity of the per-thread arrays in the header.  The simulated platforms
 * use at most 7 AICPU threads (a5); 16 leaves room for launch-only threads. */
#define TP_MAX_AICPU_THREADS 16
/* Buffer kinds per pool (swimlane has four: AICPU task, scheduler phase,
 * orchestrator phase, AICore task). */
#define TP_MAX_KINDS 4
/* Free-queue slot capacity; a module's slot_count is 1..TP_FQ_MAX_SLOTS. */
#define TP_FQ_MAX_SLOTS 8
/* Every record buffer starts with this header; records follow it. */
#define TP_BUF_HDR_SIZE 64u
#define TP_CACHE_LINE 64u

#define TP_SHM_MAGIC 0x54505348u /* "TPSH" */
#define TP_SHM_VERSION 1u

/* Why the device dropped records.  Counted per instance, in records. */
enum tp_drop_cause {
	/* A record arrived while no buffer could be obtained: the free queue
	 * stayed empty past the backstop (host presumed dead). */
	TP_DROP_NO_BUFFER = 0,
	/* A full buffer could not be published: the ready queue stayed full
	 * past the backstop.  Its records are counted and the buffer reused. */
	TP_DROP_READY_FULL,
	/* The end-of-run flush could not publish a partial buffer. */
	TP_DROP_FLUSH_FAILED,
	/* The pool was unusable (null header, thread index out of range,
	 * corrupted queue indices). */
	TP_DROP_INVALID,
	TP_DROP_NCAUSES
};

/* spec/framework.md §5.1: the four backpressure flags, all 0/1. */
struct tp_backpressure {
	_Atomic uint32_t rq_freeze_active; /* host -> device */
	_Atomic uint32_t rq_contended;     /* device -> host (sticky, host clears) */
	_Atomic uint32_t fq_freeze_active; /* host -> device */
	_Atomic uint32_t fq_contended;     /* device -> host (sticky, host clears) */
};

/* One ready-queue entry, 32 bytes: a full buffer handed to the host.
 * Written by the device before it advances the queue tail; never cleared. */
struct tp_ready_entry {
	_Atomic uint32_t instance;   /* buffer state index of the producer */
	_Atomic uint32_t kind;       /* buffer kind, 0..kinds-1 */
	_Atomic uint64_t buffer_ptr; /* device address of the full buffer */
	_Atomic uint32_t buffer_seq; /* producer's buffer sequence number */
	_Atomic uint32_t thread;     /* ready queue (AICPU thread) index */
	uint64_t reserved;
};

/* Per-instance free queue (spec/framework.md §3): host produces, device
 * consumes.  head and tail are free-running uint32 counters; slot =
 * counter % slot_count; occupancy = tail - head.  head lives on its own
 * cache line because the device writes it while the host writes tail. */
struct tp_free_queue {
	_Atomic uint64_t buffer_ptrs[TP_FQ_MAX_SLOTS]; /* host-owned */
	alignas(TP_CACHE_LINE) _Atomic uint32_t tail;  /* host-owned */
	alignas(TP_CACHE_LINE) _Atomic uint32_t head;  /* device-owned */
	uint32_t pad_[15];
};

/* Per-instance buffer state.  Everything after the free queue is written
 * by the device only, except kind / instance / aux_ptr which the host sets
 * once at init before the device starts. */
struct tp_buffer_state {
	struct tp_free_queue free_queue;
	alignas(TP_CACHE_LINE) _Atomic uint64_t current_buf_ptr; /* device */
	_Atomic uint32_t current_buf_seq;                        /* device */
	/* Pop-gate backstop latch: free-queue tail + 1 seen when the pop
	 * gate last timed out; while tail is unchanged the gate fails fast. */
	_Atomic uint32_t fq_trip;                    /* device */
	_Atomic uint64_t total_record_count;         /* device */
	_Atomic uint64_t dropped_record_count;        /* device, all causes */
	_Atomic uint64_t mismatch_record_count;       /* device (a5 token check) */
	_Atomic uint64_t dropped_by_cause[TP_DROP_NCAUSES]; /* device */
	/* Host-written at init, read-only afterwards. */
	uint64_t aux_ptr; /* module use, e.g. a5 AICore staging ring */
	uint32_t kind;
	uint32_t instance;
};

/* Geometry of one buffer kind (host-written at init). */
struct tp_kind_geom {
	uint32_t record_size;        /* bytes per record */
	uint32_t records_per_buffer; /* capacity of one buffer, records */
	uint32_t buffer_size;        /* bytes: header + records, 64-aligned */
	uint32_t reserved;
};

/* The pool header.  Geometry fields are host-written at init and constant
 * while the device runs; the queue indices and flags carry the protocol. */
struct tp_shm_header {
	uint32_t magic;
	uint32_t version;
	uint32_t total_size;       /* bytes of the whole region */
	uint32_t num_threads;      /* ready queues in use (AICPU threads) */
	uint32_t ready_queue_size; /* entries per ready queue (one kept empty) */
	uint32_t slot_count;       /* free-queue depth */
	uint32_t num_instances;
	uint32_t num_kinds;
	uint32_t queues_off;       /* byte offset of the ready-queue array */
	uint32_t states_off;       /* byte offset of the buffer-state array */
	uint32_t priv_off;         /* byte offset of the module's private area */
	uint32_t priv_size;
	uint64_t backstop_cycles;  /* gate backstop, ticks of the system counter */
	uint64_t clock_freq_hz;    /* frequency of those ticks */
	/* Re-check window of a gate before it raises its contended flag: the
	 * host usually refills within microseconds, and a freeze costs a few
	 * replenish ticks.  Ticks of the system counter. */
	uint64_t grace_cycles;
	struct tp_kind_geom kinds[TP_MAX_KINDS];

	alignas(TP_CACHE_LINE) struct tp_backpressure bp;
	/* Host heartbeat, bumped every replenish tick: lets a device gate that
	 * already timed out once fail fast while the host shows no life. */
	_Atomic uint32_t host_tick; /* host */
	/* host_tick + 1 seen when a freeze barrier last timed out. */
	_Atomic uint32_t freeze_trip; /* device */

	/* Wrapped indices in [0, ready_queue_size). */
	alignas(TP_CACHE_LINE) _Atomic uint32_t queue_heads[TP_MAX_AICPU_THREADS]; /* host */
	alignas(TP_CACHE_LINE) _Atomic uint32_t queue_tails[TP_MAX_AICPU_THREADS]; /* device */
	/* Push-gate backstop latch per queue: head + 1 seen at the last
	 * timeout; cleared by the device when it next finds space. */
	alignas(TP_CACHE_LINE) _Atomic uint32_t rq_trip[TP_MAX_AICPU_THREADS]; /* device */
};

static inline struct tp_ready_entry *tp_shm_queue(struct tp_shm_header *h, uint32_t q)
{
	return (struct tp_ready_entry *)((char *)h + h->queues_off) +
	       (size_t)q * h->ready_queue_size;
}

static inline struct tp_buffer_state *tp_shm_state(struct tp_shm_header *h, uint32_t i)
{
	return (struct tp_buffer_state *)((char *)h + h->states_off) + i;
}

static inline void *tp_shm_priv(struct tp_shm_header *h)
{
	return (char *)h + h->priv_off;
}

/* Device buffer header: 64 bytes at the start of every record buffer. */
struct tp_buf_hdr {
	_Atomic uint32_t count; /* records written; the AICPU is its only writer */
	uint32_t seq;           /* buffer sequence number at claim (device) */
	uint32_t pad_[14];
};

static inline void *tp_buf_record(struct tp_buf_hdr *b, uint32_t rsize, uint32_t i)
{
	return (char *)b + TP_BUF_HDR_SIZE + (size_t)i * rsize;
}

/* Bytes of one buffer of `records` records of `rsize` bytes, 64-aligned. */
static inline uint32_t tp_buffer_bytes(uint32_t rsize, uint32_t records)
{
	uint64_t n = TP_BUF_HDR_SIZE + (uint64_t)rsize * records;
	n = (n + TP_CACHE_LINE - 1) & ~(uint64_t)(TP_CACHE_LINE - 1);
	return n > UINT32_MAX ? 0 : (uint32_t)n;
}

_Static_assert(sizeof(struct tp_ready_entry) == 32, "ready entry is 32 bytes");
_Static_assert(sizeof(struct tp_backpressure) == 16, "backpressure header is 16 bytes");
_Static_assert(sizeof(struct tp_buf_hdr) == TP_BUF_HDR_SIZE, "buffer header size");
_Static_assert(sizeof(_Atomic uint64_t) == 8 && sizeof(_Atomic uint32_t) == 4,
	       "atomics must have the size of the plain types (shared layout)");

#endif
