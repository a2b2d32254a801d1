/* SPDX-License-Identifier: MIT */
/*
 * taskprof/worker.h — one Worker: runs the cases of a callable
 * (taskprof/case.h) on a simulated device with a task runtime, checks
 * their golden and measures them (ARCHITECTURE.md §2, §4, §6;
 * spec/runtime-model.md §4, §6).
 *
 *     struct tp_worker_config cfg = { .platform = "a5sim" };
 *     struct tp_worker *w = tp_worker_open(&cfg);      // NULL: tp_last_error()
 *     struct tp_run_result r;
 *     int rc = tp_worker_run(w, tp_callable_find("paged_attention"),
 *                            "CaseSmall1", &r);       // rc 0: r.pass says
 *     tp_worker_close(w);
 *
 * Each run creates OUTPUT_ROOT/<callable>_<case>_<YYYYMMDD_HHMMSS>/ (a
 * _2, _3, ... suffix when it exists) before it starts and writes
 * result.txt (the run's configuration and figures) into it.
 *
 * Timing (spec §6), per round, reported for the last round:
 *   host_wall   host clock around the whole call: device allocation and
 *               H2D of every tensor, the launch and wait, D2H of the
 *               outputs and the device frees (input generation and the
 *               golden are not in it).
 *   device_wall host clock around the launch: device threads started
 *               until all are joined (init and teardown included).
 *   orch        the orchestration call on the orchestrator thread.
 *   sched       union of the scheduler threads' loops (first start to
 *               last end).
 * orch and sched overlap; never add them.
 */
#ifndef TASKPROF_WORKER_H
#define TASKPROF_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "taskprof/case.h"
#include "taskprof/taskprof.h" /* tp_last_error() */

#ifdef __cplusplus
extern "C" {
#endif

/* The runtimes (spec/runtime-model.md §3). */
#define TP_RUNTIME_TRB "tensormap_and_ringbuffer"
#define TP_RUNTIME_HBG "host_build_graph"
#define TP_WORKER_DEFAULT_OUTPUT_ROOT "outputs"
/* tp_worker_config.stall_timeout_ms: the default (ms) and "never". */
#define TP_WORKER_DEFAULT_STALL_MS 10000u
#define TP_WORKER_STALL_NEVER UINT64_MAX

/**
 * struct tp_worker_config - what every run of a Worker uses; zero fields
 * take the defaults.
 * @platform:      "a2a3sim" (NULL) or "a5sim".
 * @runtime:       "tensormap_and_ringbuffer" (NULL) or "host_build_graph"
 *                 (the graph is built on the calling thread before launch;
 *                 every AICPU thread schedules, so aicpu_threads may be 1).
 * @block_dim:     clusters (1 AIC + 2 AIV each), 1..platform max; 0 → 8.
 * @aicpu_threads: 1 orchestrator + schedulers, 2..platform max; 0 → 4.
 * @rounds:        runs of each case, >= 1; 0 → 1. Outputs are reset and
 *                 checked every round.
 * @output_root:   folder of the run folders; NULL → "outputs".
 * @early_dispatch: simplified early dispatch of the runtime (a consumer
 *                 staged gated on an idle core before its producers
 *                 finished, runtime/engine.h): 0 → on when the callable
 *                 asks for it (tp_callable.wants_early_dispatch), > 0 →
 *                 on, < 0 → off. The engine keeps it off under
 *                 single_issue.
 * @dep_gen:       record the task graph of the first round into
 *                 deps.json in the run folder, and write the name map
 *                 (docs/dep_gen.md; spec/swimlane-format.md §3).
 * @l2_swimlane_level: L2 swimlane collection of the first round, 0 (off)
 *                 to 4 (seed 002 §3.1; docs/swimlane.md): 1 AICore
 *                 timing, 2 + AICPU dispatch/finish, 3 + scheduler
 *                 phases, 4 + orchestrator submits. Writes
 *                 l2_swimlane_records.json into the run folder.
 * @pmu_event_type: per-task PMU counters (docs/pmu.md "Using it";
 *                 spec/pmu.md §1, §8): 0 → off; N > 0 → on with event
 *                 group N (1, 2, 4..8; others fall back to 2 with a
 *                 WARN); < 0 → off (its value is still resolved, so the
 *                 WARN is logged). TASKPROF_PMU_EVENT_TYPE (alias
 *                 SIMPLER_PMU_EVENT_TYPE) picks the group when PMU is on.
 *                 rounds > 1 turns it off (one WARN line). On: the
 *                 runtime issues one task per core at a time and the run
 *                 folder gets pmu.csv.
 * @collect_across_runs: retained PMU runs (seed 000 §3.4; docs/pmu.md
 *                 "Retained runs"): a PMU run's pmu.csv may not exist
 *                 when tp_worker_run() returns; a background writer
 *                 publishes it while the next run executes, and
 *                 tp_worker_flush_diagnostics() (also run by
 *                 tp_worker_close()) waits for it and is the success
 *                 signal. At most two runs await publication; a third
 *                 is refused before it is submitted. No effect while PMU
 *                 is off.
 * @stall_timeout_ms: ms a run may go without progress (no task finishing
 *                 while tasks run or wait, or the orchestrator blocked on
 *                 a full ring) before it fails (runtime/engine.h); 0 →
 *                 TP_WORKER_DEFAULT_STALL_MS, TP_WORKER_STALL_NEVER →
 *                 never. Time the process spends stopped (SIGTSTP /
 *                 SIGSTOP until SIGCONT) does not count.
 */
struct tp_worker_config {
	const char *platform;
	const char *runtime;
	int block_dim;
	int aicpu_threads;
	int rounds;
	const char *output_root;
	int early_dispatch;
	bool dep_gen;
	int l2_swimlane_level;
	int pmu_event_type;
	bool collect_across_runs; /* appended */
	uint64_t stall_timeout_ms; /* appended */
};

/* PMU terminal bank: one producer's observation of its control window
 * (seed 000 §5.1). @code: 0 none, 1 no_window, 2 enabled, 3 disabled
 * (init field); 4 held, 5 lost (close field; 0: no close observation).
 * @physical_core_id: the core whose window was read; @ctrl0 / @ctrl1:
 * PMU_CTRL_0 / PMU_CTRL_1 (a5; 0 on a2a3) as read. */
struct tp_worker_pmu_note {
	uint32_t code;
	int32_t physical_core_id;
	uint32_t ctrl0, ctrl1;
};

/* Cores of the largest platform (a5sim: 36 clusters x 3). */
#define TP_WORKER_PMU_MAX_CORES 108

/**
 * struct tp_run_result - what tp_worker_run() did.
 * @callable, @case_name, @platform, @runtime: what ran.
 * @output_dir:     the run folder; a run that fails before writing anything
 *                  into it removes it again (only when empty).
 * @rounds:         rounds run.
 * @tasks:          tasks the runtime ran in the last round (inline ones
 *                  included).
 * @host_wall_s, @device_wall_s, @orch_s, @sched_s: last round, seconds
 *                  (see the top of this file).
 * @tasks_per_s:    tasks / device_wall_s.
 * @early_dispatch: early dispatch was asked of the runtime.
 * @early_staged:   tasks staged gated by early dispatch (last round).
 * @pass:           every round's every OUT tensor within tolerance.
 * @n_compared:     elements compared (last round).
 * @n_bad:          elements out of tolerance (worst round).
 * @worst_tensor:   name of the OUT tensor holding the worst element.
 * @worst_index:    its flat index in that tensor.
 * @worst_expected, @worst_got: its two values.
 * @max_abs_diff:   largest |got - expected| (NaN differences excluded).
 * @golden_line:    one line: "golden pass: ..." or "golden FAIL: ... worst
 *                  out[0][4][7] (index 71): expected 0.125, got 0.5".
 * @dep_gen:        deps.json was written (output_dir/deps.json).
 * @dep_tasks, @dep_edges: its tasks[] and edges[] entries.
 * @dep_pairs: distinct (pred, succ) pairs among those edges (edges are per
 *             argument; readers draw one arrow per pair), 0 if not counted.
 * @name_map:       the name map written, "" if none.
 * @swimlane_records: the l2_swimlane_records.json written, "" if none.
 * @subtasks:       subtasks dispatched to AICores (first round when
 *                  swimlane is on, else the last round).
 * @swimlane_total, @swimlane_collected, @swimlane_dropped: the swimlane
 *                  reconcile summed over its four pools (records counted
 *                  by the device, delivered to the host, lost).
 * @max_outstanding_per_core: running + pending tasks a core ever held
 *                  (1 under single issue, <= 2 with dual issue).
 * @pending_dispatches: subtasks published as PENDING (0 under single issue).
 * @pmu:            PMU collection ran (pmu_event_type > 0, rounds 1).
 * @pmu_event_type: the resolved event type (after the fallback and the
 *                  environment override).
 * @pmu_run_epoch:  the run_epoch column: the process-unique run identity
 *                  (a process-wide counter from 1, whatever the Worker).
 * @pmu_csv:        the pmu.csv written, "" if none (no records).
 * @pmu_rows:       its data rows.
 * @pmu_total, @pmu_collected, @pmu_dropped, @pmu_mismatch: the reconcile
 *                  (spec/pmu.md §5): device records, rows collected,
 *                  dropped, a5 slot mismatches.
 * @pmu_reconcile_ok: collected + dropped + mismatch == total, no I/O failure.
 * @pmu_lease_held: driver channel 53 was held for the collection.
 * @pmu_cores:      producers (logical cores) in the terminal bank.
 * @pmu_note, @pmu_note_close: per producer, producer_note (run init) and
 *                  producer_note_close (its close), seed 000 §5.1.
 * @pmu_note_counts, @pmu_note_close_counts: the same counted per code.
 * @pmu_retained:   collect_across_runs: the run awaits publication by
 *                  tp_worker_flush_diagnostics() (@pmu_csv "" and
 *                  @pmu_rows 0 until then).
 * @failed_dir_kept: the run failed after writing outputs: @output_dir
 *                  stays, holding what was written (records, pmu.csv,
 *                  deps.json of what ran) and a result.txt with
 *                  "status FAILED" and the error.
 * @failed_marked:  with @failed_dir_kept: that result.txt was written
 *                  (false: it could not be, e.g. the disk is full, and
 *                  the folder's files may look like a finished run's).
 */
struct tp_run_result {
	char callable[64];
	char case_name[64];
	char platform[16];
	char runtime[32];
	char output_dir[4096];
	int rounds;
	uint64_t tasks;
	double host_wall_s, device_wall_s, orch_s, sched_s;
	double tasks_per_s;
	bool early_dispatch;
	uint64_t early_staged;
	bool pass;
	size_t n_compared;
	size_t n_bad;
	char worst_tensor[32];
	size_t worst_index;
	double worst_expected, worst_got;
	double max_abs_diff;
	char golden_line[512];
	bool dep_gen;
	uint64_t dep_tasks, dep_edges;
	uint64_t dep_pairs; /* distinct (pred, succ) among the edges; 0: not counted */
	char name_map[4200];
	char swimlane_records[4200];
	uint64_t subtasks;
	uint64_t swimlane_total, swimlane_collected, swimlane_dropped;
	/* PMU (appended). */
	uint64_t max_outstanding_per_core;
	uint64_t pending_dispatches;
	bool pmu;
	uint32_t pmu_event_type;
	uint64_t pmu_run_epoch;
	char pmu_csv[4200];
	uint64_t pmu_rows;
	uint64_t pmu_total, pmu_collected, pmu_dropped, pmu_mismatch;
	bool pmu_reconcile_ok;
	bool pmu_lease_held;
	int pmu_cores;
	struct tp_worker_pmu_note pmu_note[TP_WORKER_PMU_MAX_CORES];
	struct tp_worker_pmu_note pmu_note_close[TP_WORKER_PMU_MAX_CORES];
	uint32_t pmu_note_counts[6], pmu_note_close_counts[6];
	bool pmu_retained; /* appended */
	bool failed_dir_kept; /* appended */
	bool failed_marked;   /* appended */
};

struct tp_worker;

/**
 * tp_worker_open() - check @cfg and make a Worker.
 * @cfg: configuration; NULL means all defaults.
 *
 * Return: the Worker, or NULL with tp_last_error() set: an unknown
 * platform or runtime, block_dim
 * or aicpu_threads out of the platform's range, rounds < 0, an empty
 * output root, out of memory. Nothing is created on disk yet.
 */
struct tp_worker *tp_worker_open(const struct tp_worker_config *cfg);

/**
 * tp_worker_run() - run case @case_name of @callable.
 * @w:         the Worker.
 * @callable:  a callable (tp_callable_find() or the caller's own).
 * @case_name: a case of @callable; NULL → its default case.
 * @res:       receives the result (also on failure: what is known).
 *
 * Opens a device whose memory arena holds the case's tensors, runs
 * @rounds rounds, closes it. A golden mismatch is not an error: the call
 * returns 0 and @res->pass is false.
 *
 * Return: 0 when every round ran; -ENOENT for an unknown case name;
 * -EINVAL for a bad callable; -EIO when a kernel failed (tp_last_error()
 * names the task id and function); -ENOMEM; the generator's, golden's,
 * orchestration's or runtime's error; -EEXIST/-errno when the output
 * folder cannot be made. tp_last_error() is set on failure.
 */
int tp_worker_run(struct tp_worker *w, const struct tp_callable *callable,
		  const char *case_name, struct tp_run_result *res);

/**
 * tp_worker_flush_diagnostics() - wait until the background writer has
 * published every retained PMU run (collect_across_runs) and report
 * whether every PMU run of @w so far was proved complete; the barrier of
 * seed 000 §3.4.
 * @w: the Worker.
 *
 * Every run closed before the call has, on return, its
 * <run folder>/pmu.csv (header + every row collected) — except a run
 * proved to have produced no records (every device counter 0, transport
 * cut settled), which has no file and is a success. The presence of a
 * pmu.csv is not the success signal; this return is. A failure is sticky
 * for the Worker's life: every later call fails too (there is no
 * acknowledgement), across PMU being turned off and on and across new
 * collectors; tp_worker_close() reports it once more in a log line. A
 * failed write keeps the run's pmu.csv.e<epoch>.*.tmp files as evidence,
 * and the next PMU run of @w is refused (-EEXIST) until they are removed.
 * Without collect_across_runs there is nothing to publish and the call
 * returns 0.
 *
 * Return: 0; -EINVAL for a NULL @w; -EIO when any run failed:
 * tp_last_error() names each newly failed run (run_epoch, its folder, its
 * verdict "incomplete" / "unknown" / "write failed" and its counts
 * collected, dropped, mismatch, total, rows published), or the first
 * failure when no new run failed ("... sticky for this Worker: ...").
 */
int tp_worker_flush_diagnostics(struct tp_worker *w);

/**
 * tp_worker_set_pmu_event_type() - change tp_worker_config.pmu_event_type
 * for @w's later runs (same values and rules; 0 turns PMU off). Runs
 * already retained keep their own event type and columns.
 * @w:              the Worker.
 * @pmu_event_type: as tp_worker_config.pmu_event_type (spec/pmu.md §8).
 *
 * Return: 0, or -EINVAL for a NULL @w.
 */
int tp_worker_set_pmu_event_type(struct tp_worker *w, int pmu_event_type);

/** tp_worker_close() - free @w (NULL is a no-op). With
 *  collect_across_runs it first runs tp_worker_flush_diagnostics() once
 *  more, logging an ERROR line `tp_worker_close: ...` when it fails. */
void tp_worker_close(struct tp_worker *w);

/**
 * tp_callable_find() - a built-in callable by name.
 * @name: "paged_attention", "synthetic" or "gemm"; NULL finds nothing.
 *
 * Return: the callable (static storage), or NULL when none has @name.
 */
const struct tp_callable *tp_callable_find(const char *name);

/**
 * tp_callable_at() - enumerate the built-in callables.
 * @i: index, from 0.
 *
 * Return: built-in callable @i (static storage), or NULL past the last.
 */
const struct tp_callable *tp_callable_at(size_t i);

/**
 * tp_callable_case() - case @name of @c.
 * @c:    a callable.
 * @name: a case name; NULL: @c's default case.
 *
 * Return: the case, or NULL for a NULL @c or an unknown name.
 */
const struct tp_case *tp_callable_case(const struct tp_callable *c, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* TASKPROF_WORKER_H */
