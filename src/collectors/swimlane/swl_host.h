/* SPDX-License-Identifier: MIT */
/*
 * collectors/swimlane/swl_host.h — the host half of the L2 swimlane
 * collector: one transport pool (`const struct tp_module` "L2Swimlane"
 * with four kinds: AICPU task records per core, scheduler phase records
 * per AICPU thread, orchestrator phase records, AICore task records per
 * core), its collection into per-core / per-thread arrays and the export
 * of l2_swimlane_records.json (spec/swimlane-format.md §1, §1.8).
 * Seed 002 §5.2–§5.3 (lifecycle: open → start → device runs → stop →
 * reconcile → export → close).
 *
 *     struct swl_config cfg = { .level = 4, ... };
 *     struct swl_collector *c = swl_open(&cfg);   // NULL: tp_last_error()
 *     swl_start(c);
 *     ... device run; hooks call swl_dev_*(swl_dev(c), ...) ...
 *     swl_stop(c);
 *     swl_reconcile(c, NULL);                    // one line per pool
 *     swl_export(c, "outputs/run_dir");         // l2_swimlane_records.json
 *     swl_close(c);
 */
#ifndef TASKPROF_COLLECTORS_SWIMLANE_HOST_H
#define TASKPROF_COLLECTORS_SWIMLANE_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "collectors/swimlane/swl_dev.h"
#include "collectors/swimlane/swl_records.h"
#include "transport/profiler.h"

#define SWL_RECORDS_FILE "l2_swimlane_records.json"

/**
 * struct swl_config - one collection.
 * @level:          1..4 (enum swl_level).
 * @shadow:         host-shadow transport with the AICore staging ring (a5sim);
 *                  false: shared mapping with AICore buffer rotation (a2a3sim).
 * @clock_freq_hz:  system counter frequency (metadata.clock_freq_hz).
 * @max_threads:    PLATFORM_MAX_AICPU_THREADS: inner arrays of
 *                  aicpu_scheduler_phases (4 a2a3sim, 7 a5sim).
 * @num_cores:      AICores (3 x block_dim), 1..255.
 * @block_dim:      clusters; cores [0, block_dim) are AIC, the rest AIV.
 * @num_threads:    AICPU threads (ready queues), 1..min(16, 127).
 * @orch_thread:    AICPU thread of the orchestrator (its ready queue), -1 none.
 * @core_owner:     @num_cores entries: the scheduler thread that owns each
 *                  core (metadata.core_to_thread); copied.
 * @backstop_cycles: gate backstop in system-counter ticks; 0: 30 s.
 * @max_shards:     collector shards (host threads per role) at most; 0: what
 *                  the machine can spare beside the simulated device (one on
 *                  a 2-CPU host). The pool runs min(this, @num_threads,
 *                  the module's bound 4 / 7).
 */
struct swl_config {
	int level;
	bool shadow;
	uint64_t clock_freq_hz;
	int max_threads;
	int num_cores;
	int block_dim;
	int num_threads;
	int orch_thread;
	const int8_t *core_owner;
	uint64_t backstop_cycles;
	uint32_t max_shards;
	/* swl_start() faults in the first extent of the collector's log (as
	 * many bytes as the pool's buffers at open) before the device starts,
	 * so that collecting takes no page faults while it runs. True: the
	 * log faults as it fills (tests of the host's out-of-memory path). */
	bool no_log_prefault;
};

struct swl_collector;

/**
 * swl_open() - allocate the pool (seed 002 §5.2) and the device state.
 * @cfg: the collection, copied (@cfg->core_owner too).
 *
 * Return: the collector, or NULL with tp_last_error() set: -EINVAL for a
 * bad configuration (level out of 1..4, cores out of 1..255, threads out
 * of 1..TP_MAX_AICPU_THREADS or above @cfg->max_threads, orch_thread >=
 * num_threads, no core_owner or clock_freq_hz), -ENOMEM, or what
 * prof_open() failed with.
 */
struct swl_collector *swl_open(const struct swl_config *cfg);

/**
 * swl_dev() - the device state the runtime hooks write through
 * (swl_dev.h).
 * @c: the collector (non-NULL; not checked).
 *
 * Return: a pointer into @c, valid until swl_close().
 */
struct swl_dev *swl_dev(struct swl_collector *c);

/**
 * swl_start() - fault in the collector's log ahead (unless
 * cfg->no_log_prefault; a failure only means it faults as it fills), then
 * start the host threads.
 * @c: the collector.
 *
 * Return: 0, or prof_start()'s -errno (tp_last_error() says why).
 */
int swl_start(struct swl_collector *c);

/**
 * swl_stop() - after the device stopped: drain and join the host threads;
 * idempotent. NULL does nothing.
 * @c: the collector.
 */
void swl_stop(struct swl_collector *c);

/**
 * swl_reconcile() - prof_reconcile() of the pool: one log line per kind
 * (spec/framework.md §4.7), plus a WARN for dispatches of cores that could
 * not attach and an ERROR per instance whose records the host lost to
 * out-of-memory.
 * @c:   the collector, after swl_stop().
 * @out: receives the figures; may be NULL.
 *
 * Return: 0 when every pool balances and no host memory ran out; else
 * prof_reconcile()'s -EPROTO / -EBUSY / -EIO, or -ENOMEM (host out of
 * memory; no tp_last_error() message) when it alone failed.
 */
int swl_reconcile(struct swl_collector *c, struct tp_reconcile *out);

/**
 * swl_counts() - records collected so far (after swl_stop()); any pointer
 * may be NULL.
 * @c:      the collector.
 * @aicore: receives the AICore rows with a non-zero start (written ones).
 * @aicpu:  receives the AICPU task rows.
 * @sched:  receives the scheduler phase records.
 * @orch:   receives the orchestrator phase records.
 */
void swl_counts(const struct swl_collector *c, uint64_t *aicore, uint64_t *aicpu,
		uint64_t *sched, uint64_t *orch);

/**
 * swl_export() - write @dir/l2_swimlane_records.json (temp + rename) in
 * the exact layout of spec/swimlane-format.md §1.8.
 * @c:   the collector, after swl_stop().
 * @dir: the run folder; created if missing.
 *
 * Return: 0; -ENODATA (WARN "No performance data to export", nothing
 * written) when both task streams are empty; -ENOMEM; or the -errno of
 * tp_mkdir_p() / the file transaction (base/file.h). tp_last_error() says
 * why on every failure (naming the file for file errors).
 */
int swl_export(struct swl_collector *c, const char *dir);

/**
 * swl_close() - stop if needed, free everything. NULL is a no-op.
 * @c: the collector.
 */
void swl_close(struct swl_collector *c);

#endif
