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

/* Allocate the pool and the device state. NULL with tp_last_error() set
 * (-EINVAL for a bad config, -ENOMEM). */
struct swl_collector *swl_open(const struct swl_config *cfg);
/* Device state the runtime hooks write through. */
struct swl_dev *swl_dev(struct swl_collector *c);
/* Fault in the collector's log ahead (unless cfg->no_log_prefault), then
 * start the host threads. 0 or -errno. */
int swl_start(struct swl_collector *c);
/* After the device stopped: drain and join; idempotent. */
void swl_stop(struct swl_collector *c);
/* prof_reconcile: one log line per pool; 0 when every pool balances,
 * -EPROTO otherwise. @out may be NULL. */
int swl_reconcile(struct swl_collector *c, struct tp_reconcile *out);
/* Records collected so far (after swl_stop): AICore rows with a non-zero
 * start, AICPU rows, sched records, orch records. */
void swl_counts(const struct swl_collector *c, uint64_t *aicore, uint64_t *aicpu,
		uint64_t *sched, uint64_t *orch);
/*
 * swl_export — write DIR/l2_swimlane_records.json (temp + rename; DIR is
 * created if missing) in the exact layout of spec §1.8. When both task
 * streams are empty nothing is written, a warning is logged and -ENODATA
 * is returned. 0 or -errno (tp_last_error() names the file).
 */
int swl_export(struct swl_collector *c, const char *dir);
/* Stop if needed, free everything (NULL is a no-op). */
void swl_close(struct swl_collector *c);

#endif
