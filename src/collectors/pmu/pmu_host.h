/* SPDX-License-Identifier: MIT */
/*
 * collectors/pmu/pmu_host.h — the host half of the PMU collector: one
 * transport pool (`const struct tp_module` "PmuModule": one buffer kind,
 * one instance per logical core, 512 x 64 B records per buffer, 4 free
 * slots), shard-local temp CSVs while the run executes, the reconcile
 * cross-check of spec/pmu.md §5 and the export of <output_prefix>/pmu.csv
 * (spec §2). Seed 000 §5.2–§5.3.
 *
 *     struct pmu_config cfg = { .model = m, .num_cores = 24, .num_threads = 3,
 *                               .event_type = t, .run_epoch = e,
 *                               .output_prefix = "outputs/case_dir" };
 *     struct pmu_collector *c = pmu_open(&cfg);  // NULL: tp_last_error()
 *     pmu_start(c);                               // stale temp files removed
 *     ... device run: pmu_dev_*(pmu_dev(c), ...) (pmu_dev.h) ...
 *     pmu_stop(c);                                // after the device stopped
 *     pmu_reconcile(c, &r);                       // the §5 log lines
 *     pmu_export(c);                              // pmu.csv (may run later)
 *     pmu_close(c);
 *
 * The run's event type, columns, epoch and destination are frozen at
 * pmu_open, so a stopped collector can be kept and exported later
 * (collect_across_runs) while another run uses the device.
 *
 * Files. While the run executes, collector shard i appends its rows to
 *   <prefix>/pmu.csv.e<run_epoch>.p<pid>.shard<i>.tmp
 * (opened on its first non-empty buffer). pmu_export merges them into
 * <prefix>/pmu.csv via <prefix>/pmu.csv.e<run_epoch>.p<pid>.merge.tmp and
 * rename. Row order: thread_id ascending, then core_id ascending, then
 * the core's record order (its buffer sequence, then the slot in the
 * buffer) — i.e. per core, the order its tasks were FINed. A run with no
 * rows writes no file (a pmu.csv already there is untouched). A failed
 * write removes the partial merge file and keeps the shard files,
 * renamed to ...shard<i>.failed.tmp, as evidence. pmu_start removes the
 * shard files of this epoch left by this process and those of processes
 * that no longer exist (an abrupt exit); .failed.tmp files are never
 * removed by taskprof.
 */
#ifndef TASKPROF_COLLECTORS_PMU_HOST_H
#define TASKPROF_COLLECTORS_PMU_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "collectors/pmu/pmu_dev.h"
#include "platform/pmu_model.h"

#define PMU_CSV_FILE "pmu.csv"

/**
 * struct pmu_config - one run's PMU collection.
 * @model:          the device's PMU model (tp_pmu_model_create); its
 *                  device's platform decides the arch: a2a3sim shared
 *                  mapping + AICPU read, a5sim host shadow + AICore staging.
 * @num_cores:      logical AICores in use, 1..min(model cores,
 *                  PLATFORM_MAX_CORES = 72 / 108).
 * @num_threads:    AICPU scheduler threads (ready queues = collector
 *                  shards), 1..PLATFORM_MAX_AICPU_THREADS (4 / 7).
 * @event_type:     the resolved event type (tp_pmu_select_event_type);
 *                  programmed on the cores and printed in every row. One
 *                  without a table gets PIPE_UTILIZATION columns (spec
 *                  §1.4 place 2).
 * @run_epoch:      the process-unique run identity, last CSV column.
 * @output_prefix:  directory of pmu.csv (created at start if missing).
 * @backstop_cycles: device gate backstop, system-counter ticks; 0: 30 s.
 * @retained:       a retained run (collect_across_runs, seed 000 §3.4):
 *                  the pool may grow to twice the bytes it was seeded
 *                  with — what it holds when the run starts, after
 *                  pmu_start's top-up — (device and host shadow grow
 *                  together, so the ratio is the same), after which the
 *                  device drops records. Otherwise the pool's growth is
 *                  unbounded.
 */
struct pmu_config {
	struct tp_pmu_model *model;
	int num_cores;
	int num_threads;
	uint32_t event_type;
	uint64_t run_epoch;
	const char *output_prefix;
	uint64_t backstop_cycles;
	bool retained;
};

/**
 * struct pmu_reconcile - what pmu_reconcile() found, in records
 * (spec/pmu.md §5; seed 000 §5.1). @note_init / @note_close count the
 * run's cores per producer-note code (enum tp_pmu_note_code).
 */
struct pmu_reconcile {
	uint64_t total;     /* Σ device total_record_count */
	uint64_t collected; /* rows written to the shard files (0 on an I/O failure,
			     * and 0 when a pmu_export before it failed to merge) */
	uint64_t dropped;   /* Σ device dropped + host losses */
	uint64_t mismatch;  /* Σ a5 slot token mismatches */
	uint64_t unflushed; /* records left in current buffers (device flush bug) */
	int64_t silent_loss; /* total - (collected + dropped + mismatch) */
	bool io_failed;     /* a shard file could not be written */
	bool ok;            /* counters readable and the equality holds */
	/* Notes per code (enum tp_pmu_note_code), over the run's cores. */
	uint32_t note_init[6];
	uint32_t note_close[6];
};

struct pmu_collector;

/**
 * pmu_open() - allocate the pool (region + 4 buffers per core + a5
 * staging rings) and the device state (spec/pmu.md §7.2; seed 000 §7.2
 * PLATFORM_PMU_BUFFERS_PER_CORE).
 * @cfg: the run's collection, copied (the strings too).
 *
 * Logs INFO `PMU collector initialized: ...`.
 *
 * Return: the collector, or NULL with tp_last_error() set: -EINVAL (bad
 * config: the message names the field), -ENOMEM, or what prof_open()
 * failed with.
 */
struct pmu_collector *pmu_open(const struct pmu_config *cfg);

/**
 * pmu_dev() - the device state the runtime's hooks write through
 * (pmu_dev.h).
 * @c: the collector; NULL gives NULL.
 *
 * Return: a pointer into @c, valid until pmu_close(); NULL for a NULL @c.
 */
struct pmu_dev *pmu_dev(struct pmu_collector *c);

/**
 * pmu_start() - create the output directory (WARN `Failed to create PMU
 * output directory %s: %s` on failure, continues), remove stale shard
 * files, start the drain / replenish / collector threads (spec/pmu.md
 * §7.3).
 * @c: the collector; a second call does nothing.
 *
 * Return: 0; -EINVAL for a NULL @c; prof_start()'s -errno (tp_last_error()
 * says why).
 */
int pmu_start(struct pmu_collector *c);

/**
 * pmu_stop() - after the device stopped (every flush done): drain and
 * join the host threads (prof_stop()); idempotent.
 * @c: the collector; NULL or a released pool does nothing.
 */
void pmu_stop(struct pmu_collector *c);
/**
 * pmu_reconcile() - after pmu_stop: close the shard files, read the
 * device counters and log spec §5's lines (un-flushed buffers, drops,
 * mismatches, the equality) plus one TIMING line of the producer notes.
 * @c:   the collector.
 * @out: receives the figures; may be NULL.
 *
 * The reference merges the shard files inside its reconcile (spec §2.4,
 * §5 step 3) and a failed merge counts 0 collected: call pmu_export()
 * first for that order (the Worker does, wk_pmu_finish); a failed merge
 * then makes collected 0 and the mismatch line names it. A retained run
 * reconciles before its deferred merge (seed 000 §3.4).
 *
 * Return: 0 when collected + dropped + mismatch (a5) == total and no
 * shard I/O failed; -EPROTO otherwise (the log lines say why; no
 * tp_last_error() message); -EINVAL for a NULL @c or a released pool;
 * -EBUSY before pmu_stop and -EIO when the device counters cannot be read
 * (both with tp_last_error() set).
 */
int pmu_reconcile(struct pmu_collector *c, struct pmu_reconcile *out);
/**
 * pmu_export() - after pmu_stop: merge the shard files into
 * <prefix>/pmu.csv (order and files: see the top of this header).
 * Idempotent once it succeeded.
 * Implements spec/pmu.md §2.4 (temp shard files and merge).
 * @c:    the collector (its pool may have been released).
 * @rows: receives the rows published (0: no records, no file); may be NULL.
 *
 * Return: 0 (also for a run without records); -EINVAL for a NULL @c;
 * -EBUSY before pmu_stop; -EIO (ERROR `PmuCollector: CSV shard output
 * failed; preserving shard files for diagnosis`), or the -errno of a
 * failed open / read / write / rename with the spec's ERROR line; shard
 * files are then kept. tp_last_error() says why on every failure except
 * -EINVAL.
 */
int pmu_export(struct pmu_collector *c, uint64_t *rows);
/**
 * pmu_notes() - the run's producer notes of @core (seed 000 §5.1), after
 * pmu_reconcile().
 * @c:     the collector.
 * @core:  logical core id.
 * @init:  receives producer_note (may be NULL).
 * @close: receives producer_note_close (may be NULL).
 *
 * Return: 0; -EINVAL for a NULL @c, a bad @core or a released pool.
 */
int pmu_notes(const struct pmu_collector *c, int core, struct tp_pmu_note *init,
	      struct tp_pmu_note *close);

/**
 * pmu_event_type() - the run's event type, frozen at pmu_open().
 * pmu_run_epoch() and pmu_csv_path() give its run_epoch and
 * "<output_prefix>/pmu.csv" (owned by @c) likewise.
 * @c: the collector (non-NULL; not checked).
 *
 * Return: the event type (spec/pmu.md §1.1, after the fallback of §1.4);
 * the run_epoch column value (spec/pmu.md §2.2); the path, valid until
 * pmu_close().
 */
uint32_t pmu_event_type(const struct pmu_collector *c);
uint64_t pmu_run_epoch(const struct pmu_collector *c);
const char *pmu_csv_path(const struct pmu_collector *c);

/**
 * pmu_shards_kept() - whether a failed pmu_export() kept shard files as
 * evidence (renamed pmu.csv.e<epoch>.p<pid>.shard<i>.failed.tmp,
 * docs/pmu.md "A failed write"): at least one was there to rename (none is
 * when no shard file could be opened, e.g. the run folder was removed).
 * @c: the collector (non-NULL; not checked).
 *
 * Return: true when at least one shard file was kept.
 */
bool pmu_shards_kept(const struct pmu_collector *c);
/**
 * pmu_release_pool() - after pmu_reconcile: free the pool, the device
 * state and the staging rings, keeping only what pmu_export needs (the
 * shard files, their index, the frozen header), so a retained run's
 * collector can outlive its device. pmu_notes must not be called after.
 * Idempotent; NULL is a no-op.
 */
void pmu_release_pool(struct pmu_collector *c);
/**
 * pmu_pool_bytes() - device bytes of the pool.
 * @c:      the collector.
 * @seeded: receives the bytes seeded: at open; once pmu_start() ran, what
 *          the pool held when the run started, its start-up top-up
 *          included.
 * @cap:    receives the growth ceiling (0: unbounded; for a retained run
 *          pmu_start() sets it to twice @seeded).
 * @now:    receives the bytes allocated at present.
 *
 * Any pointer may be NULL.
 *
 * Return: 0; -EINVAL for a NULL @c or after pmu_release_pool.
 */
int pmu_pool_bytes(const struct pmu_collector *c, uint64_t *seeded, uint64_t *cap,
		   uint64_t *now);
/**
 * pmu_test_hold_collect() - test point: while @hold, collector shards wait
 * before writing a buffer (a slow disk), so full buffers stay out of
 * circulation and the pool grows.
 * @c:    the collector (non-NULL).
 * @hold: true to hold, false to let the shards go on.
 */
void pmu_test_hold_collect(struct pmu_collector *c, bool hold);

/**
 * pmu_close() - stop if needed and free everything; shard files of a run
 * never exported successfully are kept (for the next pmu_start()'s stale
 * sweep, or as evidence). NULL is a no-op.
 * @c: the collector.
 */
void pmu_close(struct pmu_collector *c);

#endif
