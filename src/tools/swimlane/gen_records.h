/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/gen_records.h — a generator of realistic L2 swimlane
 * inputs (level 4) for the converter's benches and tests.
 *
 *   sl_gen_inputs()        write <dir>/l2_swimlane_records.json,
 *                          <dir>/deps.json and <dir>/name_map_Bench_case.json
 *   sl_gen_inputs_stats()  the same, and report what was written
 *
 * The files follow the exact text layouts of spec/swimlane-format.md §1.8
 * (records), §3.1 (deps.json, compact) and §3.4 (name map). The run they
 * describe is a simulated schedule, so the timestamps are consistent:
 * orch submit < dispatch < receive < start < end < finish on every row, a
 * consumer is dispatched after the `complete` phase of each of its
 * producers ends (except the ~1/256 tasks flagged early_dispatch, which
 * give hb_violation arrows), `dispatch` phases contain their rows'
 * dispatch time and `complete` phases the task's last FIN, on the thread
 * metadata.core_to_thread names. Every converter flow kind is exercised:
 * dependency, hb_violation, complete, complete→ready, dispatch and
 * submit→dispatch; and every node kind of spec §3.2: kernel tasks on AIC
 * and AIV, MIX tasks (one AIC + one or two AIV rows), SPMD tasks
 * (block_num 2..8, one row per block), dummy tasks (a `dummy_task`
 * record), predicated skips and alloc_tensors tasks (orch record and
 * `creator` edges only).
 *
 * Two workload shapes (enum sl_gen_shape): the default "heavy" one
 * (about 1.27 rows and 2 edges per task, SPMD tasks of 2..8 blocks) and
 * the lighter "issue" one calibrated to the issue 4 acceptance scale
 * (about 1.04 rows and 0.76 edges per task, SPMD tasks of 2..3 blocks,
 * scheduler passes that take several tasks): 100,000 of its tasks convert
 * to 0.54 GB (0.50 GiB) of `--pretty` trace, the size the reference
 * converter writes for 100,000 tasks (docs/converter-performance.md). Both
 * exercise every node, event and flow kind.
 *
 * The output is a function of (ntasks, platform, seed, shape) only.
 */
#ifndef TASKPROF_TOOLS_SWIMLANE_GEN_RECORDS_H
#define TASKPROF_TOOLS_SWIMLANE_GEN_RECORDS_H

#include <stdint.h>

/**
 * enum sl_gen_shape - the workload mix per task.
 * @SL_GEN_HEAVY: 1..3 preds per task (~2 edges), 5% SPMD tasks of 2..8
 *                blocks, 5% MIX: ~31 trace events, ~7.9 KB of `--pretty`
 *                trace per task.
 * @SL_GEN_ISSUE: 0..2 preds (40% none, mostly 1: ~0.76 edges), 2% SPMD of
 *                2..3 blocks, 2% MIX, a dispatch / complete record takes
 *                every task that starts within 40 ticks of the previous
 *                one on its thread: ~21 events, ~5.35 KB of `--pretty`
 *                trace per task (the issue 4 scale).
 */
enum sl_gen_shape { SL_GEN_HEAVY = 0, SL_GEN_ISSUE = 1 };

/* Sched thread slots written on each platform (spec §1.6): 4 on a2a3,
 * 7 on a5; the last slot is the orchestrator's and stays empty. */
#define SL_GEN_MAX_THREADS 7

/**
 * struct sl_gen_stats - what sl_gen_inputs_stats() wrote.
 * @n_tasks:        entries of deps.json tasks[] (= @ntasks asked for).
 * @n_alloc:        alloc_tensors tasks (orch records and creator edges
 *                  only, absent from tasks[]).
 * @n_dummy:        tasks[] entries with kernel_ids [-1,-1,-1].
 * @n_predicated:   real tasks skipped by a false predicate (no rows, one
 *                  predicated_skip record).
 * @n_spmd, @n_mix: tasks[] entries with block_num > 1 / MIX kernel_ids.
 * @n_rows:         rows of aicore_tasks (= rows of aicpu_tasks; every row
 *                  joins).
 * @n_threads:      sched thread arrays written (4 or 7).
 * @n_sched:        records per sched thread array.
 * @n_sched_total:  their sum.
 * @n_orch:         orch records (n_tasks + n_alloc).
 * @n_edges:        edges[] entries written (with duplicated pairs).
 * @n_unique_edges: distinct (pred, succ) pairs among them.
 * @n_tensors:      tensors[] entries.
 * @clock_freq_hz:  metadata.clock_freq_hz (50 MHz a2a3, 1 GHz a5).
 * @records_bytes, @deps_bytes, @name_map_bytes: file sizes.
 */
struct sl_gen_stats {
	uint64_t n_tasks, n_alloc, n_dummy, n_predicated, n_spmd, n_mix;
	uint64_t n_rows;
	int n_threads;
	uint64_t n_sched[SL_GEN_MAX_THREADS];
	uint64_t n_sched_total;
	uint64_t n_orch;
	uint64_t n_edges, n_unique_edges;
	uint64_t n_tensors;
	uint64_t clock_freq_hz;
	uint64_t records_bytes, deps_bytes, name_map_bytes;
};

/**
 * sl_gen_inputs() - write a generated level-4 capture into @dir.
 * @dir:         existing directory; the three files are written into it
 *               (each via a temporary name and rename).
 * @ntasks:      entries of deps.json tasks[], >= 1 (alloc tasks come on
 *               top, about 1 per 200).
 * @platform_a5: 0: a2a3 (clock 50 MHz, 4 sched thread arrays);
 *               1: a5 (clock 1 GHz, 7 arrays). Both have 72 cores,
 *               24 AIC then 48 AIV.
 * @seed:        PRNG seed; equal arguments give byte-equal files.
 *
 * Sizes: about 0.66 KB of records and 1.07 KB of deps.json per task in
 * the heavy shape, 0.54 KB and 0.58 KB in the issue shape; the generator
 * holds about 260 B per task in memory while it runs (26 MB and
 * 0.3 s for 100,000 tasks).
 *
 * Return: 0; -EINVAL for ntasks 0 or above 2^31; -ENOMEM; or the -errno
 * of creating / writing a file (message in tp_last_error()).
 */
int sl_gen_inputs(const char *dir, uint64_t ntasks, int platform_a5,
		  uint64_t seed);

/**
 * sl_gen_inputs_stats() - sl_gen_inputs(), and fill @st (may be NULL) on
 * success; file sizes in bytes.
 * @dir, @ntasks, @platform_a5, @seed: as sl_gen_inputs().
 * @st:  receives the counts (struct sl_gen_stats), or NULL.
 *
 * Return: as sl_gen_inputs().
 */
int sl_gen_inputs_stats(const char *dir, uint64_t ntasks, int platform_a5,
			uint64_t seed, struct sl_gen_stats *st);

/**
 * sl_gen_inputs_shape() - sl_gen_inputs_stats() with the workload @shape
 * (the two above are SL_GEN_HEAVY).
 * @dir, @ntasks, @platform_a5, @seed, @st: as sl_gen_inputs_stats().
 * @shape: SL_GEN_HEAVY or SL_GEN_ISSUE.
 *
 * Return: as sl_gen_inputs(); -EINVAL also for an unknown shape.
 */
int sl_gen_inputs_shape(const char *dir, uint64_t ntasks, int platform_a5,
			uint64_t seed, enum sl_gen_shape shape,
			struct sl_gen_stats *st);

/** sl_gen_shape_name() - "heavy" / "issue" (static); NULL for an unknown
 *  shape. */
const char *sl_gen_shape_name(enum sl_gen_shape shape);

#endif /* TASKPROF_TOOLS_SWIMLANE_GEN_RECORDS_H */
