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

/**
 * enum tp_drop_cause - why the device dropped records; counted per
 * instance, in records, in tp_buffer_state.dropped_by_cause[]
 * (spec/framework.md §4.7).
 */
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

/**
 * struct tp_backpressure - the four backpressure flags, all 0/1, 16 bytes
 * (spec/framework.md §5.1 DfxBackpressureHeader).
 * @rq_freeze_active: host -> device: push gates park.
 * @rq_contended:     device -> host: a push gate found its ready queue full
 *                    (sticky; the host clears it).
 * @fq_freeze_active: host -> device: pop gates park.
 * @fq_contended:     device -> host: a pop gate found its free queue empty
 *                    (sticky; the host clears it).
 */
struct tp_backpressure {
	_Atomic uint32_t rq_freeze_active; /* host -> device */
	_Atomic uint32_t rq_contended;     /* device -> host (sticky, host clears) */
	_Atomic uint32_t fq_freeze_active; /* host -> device */
	_Atomic uint32_t fq_contended;     /* device -> host (sticky, host clears) */
};

/**
 * struct tp_ready_entry - one ready-queue entry, 32 bytes: a full buffer
 * handed to the host (spec/framework.md §2). Written by the device before
 * it advances the queue tail; never cleared by the host.
 * @instance:   buffer state index of the producer.
 * @kind:       buffer kind, 0 .. num_kinds - 1.
 * @buffer_ptr: device address of the full buffer; 0 never published.
 * @buffer_seq: the producer's buffer sequence number.
 * @thread:     ready queue (AICPU thread) index.
 * @reserved:   0.
 */
struct tp_ready_entry {
	_Atomic uint32_t instance;   /* buffer state index of the producer */
	_Atomic uint32_t kind;       /* buffer kind, 0..kinds-1 */
	_Atomic uint64_t buffer_ptr; /* device address of the full buffer */
	_Atomic uint32_t buffer_seq; /* producer's buffer sequence number */
	_Atomic uint32_t thread;     /* ready queue (AICPU thread) index */
	uint64_t reserved;
};

/**
 * struct tp_free_queue - one instance's free queue (spec/framework.md §3):
 * host produces, device consumes.
 * @buffer_ptrs: device addresses of free buffers; slot = counter %
 *               slot_count (host-owned).
 * @tail:        free-running uint32 count of buffers pushed (host-owned).
 * @head:        free-running uint32 count of slots consumed (device-owned).
 *
 * Occupancy = tail - head (unsigned); full at slot_count. @head lives on
 * its own cache line because the device writes it while the host writes
 * @tail.
 */
struct tp_free_queue {
	_Atomic uint64_t buffer_ptrs[TP_FQ_MAX_SLOTS]; /* host-owned */
	alignas(TP_CACHE_LINE) _Atomic uint32_t tail;  /* host-owned */
	alignas(TP_CACHE_LINE) _Atomic uint32_t head;  /* device-owned */
	uint32_t pad_[15];
};

/**
 * struct tp_buffer_state - one instance's (core's, thread's) producer
 * state in the pool region (spec/framework.md §4; pmu.md §3.4).
 *
 * Everything after @free_queue is written by the device only, except
 * @kind / @instance / @aux_ptr, which the host sets once at init before
 * the device starts. Counters are in records; @current_buf_ptr is a
 * device address (0: none).
 */
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

/**
 * struct tp_kind_geom - geometry of one buffer kind (host-written at
 * init).
 * @record_size:        bytes per record.
 * @records_per_buffer: capacity of one buffer, in records.
 * @buffer_size:        bytes of one buffer: the 64-byte tp_buf_hdr plus
 *                      the records, rounded up to 64 (tp_buffer_bytes()).
 * @reserved:           0.
 */
struct tp_kind_geom {
	uint32_t record_size;        /* bytes per record */
	uint32_t records_per_buffer; /* capacity of one buffer, records */
	uint32_t buffer_size;        /* bytes: header + records, 64-aligned */
	uint32_t reserved;
};

/**
 * struct tp_shm_header - the pool header at the start of the region
 * (spec/framework.md §2, §5.1). Geometry fields are host-written at init
 * and constant while the device runs; the queue indices and flags carry
 * the protocol. Offsets and sizes are in bytes from the header; cycle
 * fields are ticks of the system counter (tp_sys_cnt(), at
 * @clock_freq_hz).
 */
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

/**
 * tp_shm_queue() - ready queue @q of the pool at @h.
 * @h: pool header, host or device view (same layout).
 * @q: ready queue (AICPU thread) index, < @h->num_threads; not checked.
 *
 * Return: its first of @h->ready_queue_size entries.
 */
static inline struct tp_ready_entry *tp_shm_queue(struct tp_shm_header *h, uint32_t q)
{
	return (struct tp_ready_entry *)((char *)h + h->queues_off) +
	       (size_t)q * h->ready_queue_size;
}

/**
 * tp_shm_state() - buffer state of instance @i of the pool at @h.
 * @h: pool header.
 * @i: instance index, < @h->num_instances; not checked.
 */
static inline struct tp_buffer_state *tp_shm_state(struct tp_shm_header *h, uint32_t i)
{
	return (struct tp_buffer_state *)((char *)h + h->states_off) + i;
}

/**
 * tp_shm_priv() - the module's private area (@h->priv_size bytes) of the
 * pool at @h.
 * @h: pool header.
 */
static inline void *tp_shm_priv(struct tp_shm_header *h)
{
	return (char *)h + h->priv_off;
}

/**
 * struct tp_buf_hdr - 64 bytes at the start of every record buffer;
 * records follow it.
 * @count: records written so far; the AICPU is its only writer.
 * @seq:   the producer's buffer sequence number when it claimed the buffer.
 */
struct tp_buf_hdr {
	_Atomic uint32_t count; /* records written; the AICPU is its only writer */
	uint32_t seq;           /* buffer sequence number at claim (device) */
	uint32_t pad_[14];
};

/**
 * tp_buf_record() - where record @i of buffer @b starts.
 * @b:     the buffer.
 * @rsize: bytes per record.
 * @i:     record index (not checked against the capacity).
 *
 * Return: @b + TP_BUF_HDR_SIZE + @i × @rsize bytes.
 */
static inline void *tp_buf_record(struct tp_buf_hdr *b, uint32_t rsize, uint32_t i)
{
	return (char *)b + TP_BUF_HDR_SIZE + (size_t)i * rsize;
}

/**
 * tp_buffer_bytes() - size of one buffer.
 * @rsize:   bytes per record.
 * @records: records per buffer.
 *
 * Return: bytes: TP_BUF_HDR_SIZE + @rsize × @records rounded up to 64; 0
 * when that exceeds UINT32_MAX.
 */
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
