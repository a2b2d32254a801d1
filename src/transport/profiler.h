/*
 * profiler.h — the host control layer (the seed's ProfilerBase together
 * with ProfilerAlgorithms).
 *
 * One `struct tp_profiler` is one collector's pool: the shared region in
 * device memory, the seeded record buffers, the host data layer and the
 * host threads (seed 004 §3.2, spec/framework.md §7–§8):
 *
 *   drain i      pops the ready queues q = i, i+n, ... (n = live shards),
 *                resolves each buffer, refills the producer's free queue
 *                from recycled lane i and hands the buffer to ready shard i;
 *                busy-polls 64 empty scans, then sleeps 10 µs per scan.
 *   replenish    routes done buffers to recycled lanes (largest same-kind
 *                deficit), keeps lanes at their warm target, runs the
 *                backpressure state machine; never writes free queues
 *                except while a freeze is open.
 *   collector i  waits on ready shard i (100 ms tick), calls the
 *                collector's on_buffer_collected, returns the buffer.
 *
 * A collector is a `const struct tp_module` plus an on_buffer_collected
 * callback; it never returns buffers itself.  Stop order is load-bearing:
 * drains (each with a final pass) are joined before collectors are told
 * execution is complete, so the final drain has a consumer.
 *
 * Loss accounting: the device counts every record (total) and every record
 * it drops (by cause, enum tp_drop_cause); the host counts every record it
 * delivers and every record it loses (by cause, enum tp_host_loss).
 * prof_reconcile checks collected + dropped + mismatch == total per pool.
 */
#ifndef TP_TRANSPORT_PROFILER_H
#define TP_TRANSPORT_PROFILER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "transport/buffer_pool.h"
#include "transport/module.h"

/**
 * enum tp_host_loss - why the host lost a buffer's records; counted in
 * records (tp_profiler.host_lost) and buffers (host_lost_buffers).
 */
enum tp_host_loss {
	TP_HOST_LOST_BAD_ENTRY = 0, /* entry names an unknown instance / kind, or bad count */
	TP_HOST_LOST_UNMAPPED,      /* buffer pointer has no host mapping */
	TP_HOST_LOST_COPY_FAILED,   /* a5: copying the buffer in failed */
	TP_HOST_LOST_SHARD_FULL,    /* host ready shard stayed full: buffer retired */
	TP_HOST_LOST_COLLECTOR,     /* the collector could not keep them (host out of
				     * memory, a failed write): its callback said so */
	TP_HOST_LOST_NCAUSES
};

/**
 * typedef tp_on_buffer_collected_fn - a collector's on_buffer_collected
 * (spec/framework.md §8.1; seed 004 §3.4).
 * @ud:    tp_profiler_config.ud.
 * @info:  the buffer; its host views are valid only during the call.
 * @shard: the collector shard whose thread calls it, 0 .. shards - 1.
 *
 * Called for every delivered buffer. Copy the records out; do not keep
 * @info->records after returning, and do not return the buffer (the
 * framework does).
 *
 * Return: true when the records were kept (or deliberately ignored),
 * false when the collector could not keep them (out of memory, a failed
 * write): reconcile then counts them as lost (TP_HOST_LOST_COLLECTOR), not
 * as collected.
 */
typedef bool (*tp_on_buffer_collected_fn)(void *ud, const struct tp_ready_info *info, int shard);

/**
 * struct tp_profiler_config - what prof_open() builds. Sizes are bytes,
 * times as named (ticks of the system counter, ns, µs, ms); a 0 field
 * takes the default given beside it.
 * @module: the collector's module; kept by pointer.
 * @ops:    device memory of the run, copied.
 * @on_buffer_collected, @ud: the collector's callback and its pointer.
 */
struct tp_profiler_config {
	const struct tp_module *module;
	struct tp_memops ops;
	uint32_t num_threads;    /* AICPU threads = ready queues, 1..TP_MAX_AICPU_THREADS */
	uint32_t num_instances;  /* buffer states (cores, threads, ...) >= 1 */
	const uint8_t *instance_kind; /* kind of each instance; NULL -> all kind 0 */
	uint32_t buffers_per_instance; /* seeded per instance; 0 -> slot_count */
	/* Per kind: buffers seeded at open into each live shard's recycled
	 * lane beyond the lane's warm target (what the replenish thread keeps
	 * there; the lane then holds target + surplus, at most its capacity):
	 * the init-seeded surplus of seed 002 §5.1. Demand can then draw a
	 * lane down by the surplus before the replenish thread allocates
	 * while the device runs. 0 -> none; at most the lane's capacity
	 * (host_recycled_queue_size, else host_pool_queue_size, else 1024). */
	uint32_t init_surplus[TP_MAX_KINDS];
	uint32_t priv_size;      /* bytes of module-private area in the region */
	uint64_t backstop_cycles; /* gate backstop, system-counter ticks; 0 -> 30 s */
	/* Gate re-check window before contention is raised, ns; 0 -> 20 µs,
	 * UINT32_MAX -> none (raise at once, as the reference does). */
	uint32_t grace_ns;
	/* Cap on all device bytes the pool allocates (region + buffers).
	 * 0 -> max(16 MiB, 8 x the bytes of the instances' seeds) + the
	 * init_surplus bytes; UINT64_MAX -> none. */
	uint64_t pool_cap_bytes;
	/* Non-zero: prof_start replaces the cap with this multiple of the
	 * bytes the pool holds once its start-up top-up (free queues to
	 * slot_count, recycled lanes to their warm target) is done, before
	 * any host thread runs: growth is then measured from what the run
	 * starts with (seed 000 §3.4 "twice the bytes it was seeded with":
	 * 2), never already spent by the top-up. The cap at open (above)
	 * bounds the top-up itself; pass UINT64_MAX for none. */
	uint32_t pool_cap_start_factor;
	/* How long a drain waits for room in a full host ready shard before it
	 * retires the buffer (counted as TP_HOST_LOST_SHARD_FULL).
	 * 0 -> the module's idle timeout; negative -> retire at once. */
	int ready_push_wait_ms;
	/* Cap on the collector shards (= drain threads), on top of the
	 * module's max_collector_threads and num_threads; 0 -> no extra cap.
	 * A collector whose host threads share the machine with the simulated
	 * device passes what the machine can spare (swl_host.c). */
	uint32_t max_shards;
	/* Longest idle sleep of a drain / the replenish thread, µs; 0 -> 160.
	 * The sleep adapts: halved after a pass that found work, doubled
	 * after an empty one, between 10 µs and this bound (10 µs while a
	 * freeze holds device lanes parked). */
	uint32_t idle_sleep_max_us;
	/* Keep at least one recycled buffer per instance a lane serves
	 * (ceil(instances of the kind / shards)) on top of the module's warm
	 * target, allocated at prof_start: a round in which every instance
	 * switches buffers (per-core writers filling in step) then needs no
	 * allocation and leaves no drain starved.  Costs that many buffers of
	 * memory per kind. */
	bool warm_covers_instances;
	tp_on_buffer_collected_fn on_buffer_collected;
	void *ud;
};

/**
 * struct tp_reconcile_pool - reconcile figures of one pool (kind), in
 * records (spec/framework.md §4.7). @host_lost_by_cause is filled in pool
 * 0 only, for every kind (a loss's instance may be unknown); @dropped
 * includes each kind's host losses of known instances.
 */
struct tp_reconcile_pool {
	uint64_t total;     /* counted by the device */
	uint64_t collected; /* delivered to on_buffer_collected */
	uint64_t dropped;   /* device drops + host losses */
	uint64_t mismatch;  /* device token mismatches (a5) */
	uint64_t unflushed; /* records left in current buffers (device bug) */
	uint64_t dropped_by_cause[TP_DROP_NCAUSES];
	uint64_t host_lost_by_cause[TP_HOST_LOST_NCAUSES];
	bool ok; /* collected + dropped + mismatch == total */
};

/**
 * struct tp_reconcile - what prof_reconcile() found.
 * @pool:  per kind, 0 .. @kinds - 1.
 * @kinds: the module's kinds.
 * @ok:    every pool balances.
 */
struct tp_reconcile {
	struct tp_reconcile_pool pool[TP_MAX_KINDS];
	int kinds;
	bool ok;
};

/**
 * struct tp_profiler - one collector's pool: the region in device memory,
 * the host data layer and the host threads. Made by prof_open(); fields
 * are the framework's (tests read the statistics); counters are records
 * unless named otherwise, times ns of tp_now_ns().
 */
struct tp_profiler {
	struct tp_profiler_config cfg;
	const struct tp_module *m;
	struct bp_pool bp;
	struct tp_shm_header *hdr;  /* host view of the region */
	/* Host-private copies of the geometry and of the ready-queue heads: on
	 * a shared mapping the device can overwrite the header, so the host
	 * never reads its own layout or heads back from it. */
	uint32_t rq_size, slot_count, queues_off, states_off;
	_Atomic uint32_t host_head[TP_MAX_AICPU_THREADS];
	uint64_t shm_dev;           /* device address of the region */
	uint32_t shm_size;
	uint32_t num_threads, num_instances;
	int shard_count;
	unsigned busy_poll_scans;   /* drain: empty scans before it sleeps */
	uint8_t *inst_kind;         /* host copy: never trusted from shm */
	atomic_flag *fq_busy;       /* per instance: one free-queue producer at a time */
	uint32_t *null_streak;      /* per queue, drain-owned */
	uint32_t *bad_index_streak; /* per queue, drain-owned: log rate limit */

	pthread_t *drain_th, *coll_th, repl_th;
	bool started;
	_Atomic bool mgmt_running;
	_Atomic bool execution_complete;
	_Atomic bool host_freeze_open;  /* host mirror of "a freeze is open" */
	_Atomic bool *coll_abandoned;   /* per shard: idle timeout gave up */
	_Atomic bool test_pause_drain;  /* test point: drains stop popping */
	_Atomic uint32_t repl_kicks;    /* futex word: bumped to wake the replenish thread */
	_Atomic uint64_t busy_until_ns; /* host threads in busy mode until (tp_now_ns) */

	_Atomic uint64_t *inst_collected; /* per instance, records */
	_Atomic uint64_t *inst_host_lost; /* per instance, records */
	_Atomic uint64_t host_lost[TP_HOST_LOST_NCAUSES];        /* records */
	_Atomic uint64_t host_lost_buffers[TP_HOST_LOST_NCAUSES]; /* buffers */
	_Atomic uint64_t buffers_collected;
	_Atomic uint64_t bad_index_events;  /* ready-queue indices out of range */
	_Atomic uint64_t null_entry_events; /* ready entries with a zero pointer */
	_Atomic uint64_t freeze_opened, freeze_released;
	uint64_t freeze_t0_ns;          /* tp_now_ns when the open freeze began (replenish thread) */
	_Atomic uint64_t freeze_ns;     /* statistic: ns the producers were frozen, summed */
	_Atomic uint64_t drain_sleeps, repl_sleeps; /* statistics: host thread sleeps */
	_Atomic uint64_t host_cpu_ns[3]; /* statistics: CPU ns of the drains, replenish, collectors */
	uint64_t start_allocs, start_bytes; /* statistics: pool allocations / bytes when
					     * prof_start had seeded it */
};

/**
 * prof_open() - lay out and allocate one collector's pool; start nothing.
 * @cfg: the configuration, copied.
 *
 * Allocates the pool region in device memory, seeds buffers_per_instance
 * buffers per instance (up to slot_count straight into its free queue,
 * the rest into recycled lanes), fills the recycled lanes of kinds with an
 * init_surplus to their warm target plus it and, on the shadow transport,
 * pushes the initialised region to the device once. The default pool cap
 * (8 times the instances' seeds, at least 16 MiB) is raised by the
 * surplus's bytes, not scaled with them (spec/framework.md §3 init-time
 * fill, §7.6; pmu.md §7.2).
 *
 * Return: the profiler, or NULL with tp_last_error() saying why: -EINVAL
 * (bad configuration, or a region too large), -ENOMEM, -EIO (the region
 * could not be pushed to the device).
 */
struct tp_profiler *prof_open(const struct tp_profiler_config *cfg);
/**
 * prof_shm_dev() - device address of the region header, to hand to the
 * device writers (dpe_attach()).
 * @p: the profiler.
 */
static inline struct tp_shm_header *prof_shm_dev(const struct tp_profiler *p)
{
	return (struct tp_shm_header *)(uintptr_t)p->shm_dev;
}
/**
 * prof_priv_host() - host view of the module-private area (priv_size
 * bytes); on the shadow transport push it with prof_push_priv() before
 * the device starts.
 * @p: the profiler.
 */
void *prof_priv_host(struct tp_profiler *p);

/**
 * prof_push_priv() - push the module-private area to the device.
 * @p: the profiler, before the device starts.
 *
 * Return: 0 (also when there is no private area, or on a shared mapping);
 * -EINVAL or the copy op's error otherwise (logged, no tp_last_error()).
 */
int prof_push_priv(struct tp_profiler *p);

/**
 * prof_start() - proactive replenish, then spawn the drains, the
 * replenish thread and the collectors, in that order (spec/framework.md
 * §8.3).
 * @p: the profiler; a second call does nothing.
 *
 * Return: 0; -EINVAL for a NULL @p; the -errno of a failed thread start
 * (the threads already started are joined again), with tp_last_error()
 * saying why.
 */
int prof_start(struct tp_profiler *p);

/**
 * prof_stop() - join the threads in the load-bearing order
 * (spec/framework.md §8.5): drains (each with a final pass) and
 * replenish, then collectors. Idempotent; NULL or a profiler not started
 * does nothing. Every buffer that reached a host ready shard has been
 * delivered on return (a shard whose collector gave up is delivered on
 * this thread, with a WARN).
 * @p: the profiler.
 */
void prof_stop(struct tp_profiler *p);

/**
 * prof_reconcile() - check collected + dropped + mismatch == total per
 * pool (spec/framework.md §4.7; pmu.md §5), after the device stopped and
 * prof_stop().
 * @p:   the profiler.
 * @out: receives the figures; may be NULL.
 *
 * Reads the device counters (the whole region on the shadow transport)
 * and logs one line per pool: TIMING when it balances without drops,
 * WARN with drops, ERROR when it does not balance.
 *
 * Return: 0 when every pool balances; -EPROTO otherwise (no
 * tp_last_error() message: the log lines say it); -EBUSY when @p is still
 * started; -EIO when the device counters could not be read (both with
 * tp_last_error() set).
 */
int prof_reconcile(struct tp_profiler *p, struct tp_reconcile *out);

/**
 * prof_close() - prof_stop(), then free every device allocation (region,
 * seeds, batches; queued or still with the device) and host shadow, and
 * @p itself. NULL does nothing.
 * @p: the profiler.
 */
void prof_close(struct tp_profiler *p);

/* ---- algorithms, one step each (used by the threads and by tests) ---- */
/**
 * prof_try_pop_entry() - the host pop of ready queue @q
 * (spec/framework.md §2, §7.1).
 * @p:   the profiler.
 * @q:   ready queue index.
 * @out: receives the entry.
 *
 * Return: true with *@out filled and the head advanced. False: empty
 * queue, @q out of range, out-of-range indices (ERROR, treated as empty),
 * a failed shadow read or write-back (ERROR), or a null entry (skipped
 * with an ERROR, head advanced, after a few polls).
 */
bool prof_try_pop_entry(struct tp_profiler *p, uint32_t q, struct tp_ready_entry *out);
/**
 * prof_process_entry() - the drain's handling of one popped entry
 * (spec/framework.md §7.2): check it, resolve and (a5) copy the buffer,
 * top up the producer's free queue from lane q % shards unless a freeze
 * is open, and hand the buffer to ready shard q % shards.
 * @p: the profiler.
 * @q: the ready queue it came from.
 * @e: the entry.
 *
 * A full ready shard is waited on up to ready_push_wait_ms; then the
 * buffer is retired. Every lost buffer is counted by cause (enum
 * tp_host_loss) and logged (ERROR).
 */
void prof_process_entry(struct tp_profiler *p, uint32_t q, const struct tp_ready_entry *e);
/**
 * prof_top_up_free_queue() - fill one instance's free queue to slot_count
 * (spec/framework.md §7.3).
 * @p:        the profiler.
 * @instance: buffer state index; out of range does nothing.
 * @shard:    >= 0: pop only recycled lane @shard (runtime); < 0: pop any
 *            live lane and allocate a batch when all are empty (start-up,
 *            freeze release).
 *
 * Return: buffers pushed.
 */
size_t prof_top_up_free_queue(struct tp_profiler *p, uint32_t instance, int shard);
/**
 * prof_replenish_free_queues() - top up every instance's free queue on
 * the start-up path (spec/framework.md §7.4): one buffer to each first,
 * then to the brim.
 * @p: the profiler.
 *
 * Return: buffers pushed.
 */
size_t prof_replenish_free_queues(struct tp_profiler *p);
/**
 * prof_update_backpressure() - one tick of the freeze state machine
 * (spec/framework.md §5.3), on the replenish thread: open a freeze on a
 * contended flag; release both once every live ready queue is drained and
 * nothing more could be pushed to the free queues.
 * @p: the profiler.
 */
void prof_update_backpressure(struct tp_profiler *p);

#endif
