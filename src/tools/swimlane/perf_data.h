/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/perf_data.h — the offline readers of the L2 swimlane
 * files, shared by `taskprof swimlane` (the converter) and
 * `taskprof sched-overhead` (spec/swimlane-format.md §1–§3).
 *
 *   sl_read_perf_data()  l2_swimlane_records.json → joined rows in µs
 *                        (the reader's join, spec §2: key (core_id,
 *                        reg_task_id), base-subtracted cycles → µs, rows
 *                        sorted by task id, stable)
 *   sl_read_deps()       deps.json → unique edges, kernel map, block map
 *                        (spec §3.1, §3.3)
 *   sl_read_name_map()   name_map_<case>.json → func_id → name (spec §3.4)
 *
 * All three parse with yajl's streaming parser and never build a DOM, so
 * peak memory is the result, not the file (a 1M-task deps.json is ~1 GB).
 *
 * Errors: every reader returns 0 or a negative errno and on failure sets
 * tp_last_error() to ONE line naming the file, the place (the JSON key path,
 * e.g. "aicore_tasks[12][3]", or "line 4, column 25" for a syntax error)
 * and what was expected, e.g.
 *   "<path>: metadata.clock_freq_hz: metadata missing/zero clock_freq_hz: 0"
 *   "<path>: l2_swimlane_level: Unsupported l2_swimlane_level: 5 (expected 1, 2, 3, or 4)"
 * (the reference's message is kept after the key path, spec §1.9).
 * Decisions for taskprof beyond the reference (issue 4): negative cycle
 * values and duplicate (core_id, reg_task_id) join keys are errors, not
 * silently wrapped / "later row wins".
 */
#ifndef TASKPROF_TOOLS_SWIMLANE_PERF_DATA_H
#define TASKPROF_TOOLS_SWIMLANE_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Core types of metadata.core_types (anything else reads as AIV). */
enum sl_core_type { SL_AIC = 0, SL_AIV = 1 };

/**
 * struct sl_task - one joined row (one subtask execution on one core),
 * spec §2.6. Times are µs relative to the base time (spec §2.2, §2.3);
 * a zero / missing timestamp is 0.0.
 * @task_id:        raw task id (ring << 32 | local) from the AICore row.
 * @func_id:        -1 from the reader; the converter resolves it from the
 *                  deps kernel map and writes it back (spec §2.10).
 * @core_id:        physical core index.
 * @core_type:      from metadata.core_types[core_id], else SL_AIV.
 * @has_propagation: the row came from the join path (aicpu_tasks present);
 *                  false on the level-1 path (no propagation_us key).
 * @start_us, @end_us, @duration_us (end − start),
 * @dispatch_us, @finish_us (0.0 on the level-1 path),
 * @receive_us (start − local_setup), @local_setup_us (r2s × factor),
 * @propagation_us (receive − dispatch; valid iff @has_propagation).
 */
struct sl_task {
	uint64_t task_id;
	int32_t func_id;
	int32_t core_id;
	uint8_t core_type;
	bool has_propagation;
	double start_us, end_us, duration_us;
	double dispatch_us, finish_us;
	double receive_us, local_setup_us, propagation_us;
};

/* Scheduler phase kinds (spec §1.6 enum values where they exist; the
 * legacy strings and "unknown" after them). Order is not the file's. */
enum sl_phase_kind {
	SL_PH_COMPLETE = 0,
	SL_PH_DISPATCH = 1,
	SL_PH_RELEASE = 2,
	SL_PH_DUMMY = 4,
	SL_PH_EARLY_DISPATCH = 5,
	SL_PH_RESOLVE = 6,
	SL_PH_DUMMY_TASK = 7,
	SL_PH_DRAIN = 8,
	SL_PH_DRAIN_PREPARE = 9,
	SL_PH_DRAIN_PUBLISH = 10,
	SL_PH_ASYNC_POLL = 11,
	SL_PH_PREDICATED_SKIP = 12,
	/* legacy kinds: parsed, passed through, dropped by the renderer */
	SL_PH_SCAN = 20,
	SL_PH_POLL,
	SL_PH_IDLE,
	SL_PH_FANOUT,
	SL_PH_PRESTAGE,
	SL_PH_UNKNOWN,     /* no "kind", or a string not listed above */
};

/* Which optional keys a phase record carried. */
#define SL_PF_POP            0x01u /* pop_hit and pop_miss */
#define SL_PF_TASK_ID        0x02u /* task_id */
#define SL_PF_SHARED_START   0x04u /* shared_at_start: a list of length 3 */
#define SL_PF_SHARED_END     0x08u /* shared_at_end: a list of length 3 */
#define SL_PF_LOOP_ITER      0x10u /* loop_iter */
#define SL_PF_TASKS          0x20u /* tasks_processed */

/**
 * struct sl_phase - one scheduler phase record (spec §1.6, §2.8), times in
 * µs (to_us of start_cycles / end_cycles).
 * @kind:     enum sl_phase_kind.
 * @flags:    SL_PF_* of the keys present (absent numbers read 0).
 * @name:     the "kind" string when @kind is SL_PH_UNKNOWN and a string
 *            was given (NULL otherwise); owned by the perf data.
 */
struct sl_phase {
	uint8_t kind;
	uint8_t flags;
	double start_us, end_us;
	uint64_t loop_iter;
	uint64_t tasks_processed;
	uint64_t pop_hit, pop_miss;
	uint64_t task_id;
	int32_t shared_at_start[3];
	int32_t shared_at_end[3];
	const char *name;
};

/**
 * struct sl_orch - one orchestrator record (spec §1.7); its phase is
 * always "orch_submit" (spec §2.8).
 * @has_task_id: the record had a task_id (a negative one counts as
 *               absent for display: "(submit_idx)" instead, spec §4.5).
 */
struct sl_orch {
	uint64_t submit_idx;
	uint64_t task_id;
	bool has_task_id;
	double start_us, end_us;
};

/** struct sl_phase_list - one scheduler thread's @n phase records @v. */
struct sl_phase_list { struct sl_phase *v; size_t n; };
/** struct sl_orch_list - one orchestrator lane's @n records @v. */
struct sl_orch_list { struct sl_orch *v; size_t n; };

/* Largest metadata.core_to_thread value: the device keeps the scheduler
 * thread index of a core in an int8. */
#define SL_C2T_MAX 127

/* A row of aicore_tasks or aicpu_tasks: its core_id and index. */
struct sl_row_at {
	int32_t core;
	size_t row;
};

/**
 * struct sl_perf_data - what sl_read_perf_data() returns (spec §2.9).
 * @level:             l2_swimlane_level, 1..4.
 * @clock_freq_hz:     metadata.clock_freq_hz, Hz (ticks per second of the
 *                     records' *_cycles clock), > 0.
 * @factor:            1e6 / clock_freq_hz (µs per cycle).
 * @base_cycles:       base time (spec §2.2), in cycles of
 *                     @clock_freq_hz; 0 if nothing positive.
 * @num_cores:         metadata.num_cores (0 if absent).
 * @core_types:        metadata.core_types as SL_AIC / SL_AIV, @n_core_types.
 * @tasks, @n_tasks:   joined rows sorted by task id (stable, spec §2.7).
 * @has_sched:         the file had a non-empty aicpu_scheduler_phases outer
 *                     array ([[],[],[],[]] counts as non-empty).
 * @sched, @n_sched:   per scheduler thread (index = thread), empty arrays
 *                     kept.
 * @has_orch, @orch, @n_orch: the same for aicpu_orchestrator_phases.
 * @core_to_thread, @n_core_to_thread: metadata.core_to_thread (may be 0);
 *      each entry is -1 (none) or a scheduler thread index 0..SL_C2T_MAX.
 * @n_aicore_rows, @n_aicpu_rows: rows in the file.
 * @n_unmatched:       aicpu rows without an AICore partner (dropped).
 * @unmatched_warning: the §2.4 stderr warning text when @n_unmatched > 0
 *                     (without "Warning: "'s trailing newline), else NULL.
 *                     The reader does not print it; the caller does.
 */
struct sl_perf_data {
	int level;
	uint64_t clock_freq_hz;
	double factor;
	uint64_t base_cycles;
	int64_t num_cores;
	uint8_t *core_types;
	size_t n_core_types;
	struct sl_task *tasks;
	size_t n_tasks;
	bool has_sched;
	struct sl_phase_list *sched;
	size_t n_sched;
	bool has_orch;
	struct sl_orch_list *orch;
	size_t n_orch;
	int32_t *core_to_thread;
	size_t n_core_to_thread;
	uint64_t n_aicore_rows, n_aicpu_rows, n_unmatched;
	/* AICore rows no AICPU row joined (level >= 2 with aicpu rows): not in
	 * the tasks; the reference drops them silently, taskprof warns. */
	uint64_t n_aicore_orphans;
	/* The aicore_tasks / aicpu_tasks rows no row of the other array
	 * joined, in row order (all aicore rows when a level 2-4 file has no
	 * aicpu rows), for the warning of rows on cores beyond
	 * metadata.num_cores (sl_perf_metadata_warning()). */
	struct sl_row_at *unjoined_aicore, *unjoined_aicpu;
	size_t n_unjoined_aicore, n_unjoined_aicpu;
	/* Scheduler phase records whose kind string is none of spec §1.6's
	 * (their phase is "unknown": the converter does not draw them), and
	 * the first such string (owned by the perf data). */
	uint64_t n_unknown_phases;
	const char *first_unknown_phase;
	/* Scheduler phase records without a kind (or a null one): phase
	 * "unknown" too (§1.9), not drawn. */
	uint64_t n_kindless_phases;
	/* AICore rows whose receive_to_start_cycles exceeds start_cycles: the
	 * receive (start - r2s) is no base candidate (§2.2) and lands at a
	 * negative time. */
	uint64_t n_r2s_over;
	/* Records whose start (a phase's or submit's start_cycles, an AICore
	 * row's start, an AICPU row's dispatch) is missing or 0 while their
	 * end is not: taken as 0 µs (spec §2.3), so drawn from before the
	 * run; no device writes one. @first_zero_start names the first. */
	uint64_t n_zero_starts;
	char first_zero_start[96];
	char *unmatched_warning;
	/* private: string storage etc. */
	void *priv;
};

/**
 * sl_read_perf_data() - read and join an l2_swimlane_records.json.
 * @path: the file.
 * @out:  receives the data (zeroed first); free with sl_perf_data_free().
 *
 * Accepts schema v2 (5-column aicore rows, r2s = 0) and v3 (6 columns;
 * extra columns ignored), numeric strings for l2_swimlane_level and
 * clock_freq_hz, missing optional keys (spec §1.9).
 *
 * Return: 0; -ENOENT / -errno if the file cannot be opened or read;
 * -EISDIR or -EINVAL for something other than a regular file (as
 * js_parse_file()); -EINVAL for bad content (see the top of this file for
 * the message); -ENOMEM.
 */
int sl_read_perf_data(const char *path, struct sl_perf_data *out);

/**
 * sl_read_perf_data_mem() - sl_read_perf_data() from @len bytes at @buf
 * (for the fuzzers); @name is used in messages.
 *
 * Return: 0; -EINVAL for bad content; -ENOMEM.
 */
int sl_read_perf_data_mem(const char *name, const uint8_t *buf, size_t len,
			  struct sl_perf_data *out);

/** sl_perf_data_free() - free what @d holds and zero it (NULL: no-op). */
void sl_perf_data_free(struct sl_perf_data *d);

/**
 * struct sl_deps - what sl_read_deps() returns (spec §3.3).
 * @has_edges:   the file had an "edges" array (false: the converter's
 *               load_deps_json returned None; the reason is in
 *               @edges_warning).
 * @edges_warning: "failed to read <p>: <e>" or "<p> has no 'edges' array"
 *               when !has_edges and the file existed, else NULL.
 * @pred, @succ, @n_edges: unique (pred, succ) pairs in the order each pair
 *               first appears; self-loops kept.
 * @n_tasks, @task_id, @kernel_ids, @block_num: one entry per tasks[] entry
 *               that has a kernel_ids list of length 3 (kernel map), in
 *               file order; @block_num = max(int(block_num, default 1), 1).
 *               Lookups: sl_deps_find_task().
 * @n_block_tasks: entries of the block map (tasks[] entries with a task_id,
 *               with or without kernel_ids): @block_task_id / @block_value.
 * @quirks_warning: what the reader let pass as the reference does, for the
 *               tools to print: task ids listed twice (the later entry is
 *               used), kernel_ids lists not of 3 entries (left out of the
 *               kernel map), tasks[] entries without an integer task_id
 *               and edges[] entries that are not objects or lack an
 *               integer pred / succ (both skipped, §3.3); the first of each
 *               is named. NULL: none.
 */
struct sl_deps {
	bool has_edges;
	char *edges_warning;
	char *quirks_warning;
	uint64_t *pred, *succ;
	size_t n_edges;
	size_t n_tasks;
	uint64_t *task_id;
	int32_t (*kernel_ids)[3];
	uint32_t *block_num;
	size_t n_block_tasks;
	uint64_t *block_task_id;
	uint32_t *block_value;
	/* tasks[] entries left out of the kernel map: a kernel_ids that is
	 * not a list of 3 (said in @quirks_warning) */
	size_t n_bad_kernel_ids;
	void *priv; /* hash indexes */
};

/**
 * sl_read_deps() - read a deps.json (spec §3.1). u64 values may be JSON
 * strings or numbers; negative ones are reduced modulo 2^64.
 * @path: the file.
 * @out:  receives the data; free with sl_deps_free().
 *
 * Return: 0 (also when the file has no usable edges: @out->has_edges false);
 * -ENOENT when the file does not exist (nothing printed, spec §3.3);
 * -EINVAL for a file that is not valid JSON or whose tasks / edges have the
 * wrong shape (one-line message, see the top of this file).
 */
int sl_read_deps(const char *path, struct sl_deps *out);

/**
 * sl_read_deps_mem() - sl_read_deps() from @len bytes at @buf (for the
 * fuzzers); @name is used in messages.
 *
 * Return: 0; -EINVAL for bad content; -ENOMEM.
 */
int sl_read_deps_mem(const char *name, const uint8_t *buf, size_t len, struct sl_deps *out);

/** sl_deps_free() - free what @d holds and zero it (NULL: no-op). */
void sl_deps_free(struct sl_deps *d);

/**
 * sl_deps_find_task() - where @task_id is in the kernel map; O(1) on
 * average.
 * @d:       deps from sl_read_deps(), or NULL.
 * @task_id: raw task id (ring << 32 | local).
 *
 * Return: its index into @d->task_id / kernel_ids / block_num, or -1
 * (also for a NULL @d or an empty map).
 */
long sl_deps_find_task(const struct sl_deps *d, uint64_t task_id);

/**
 * sl_deps_block_num() - the block map value of @task_id (spec §3.3).
 * @d:       deps from sl_read_deps(), or NULL.
 * @task_id: raw task id (ring << 32 | local).
 *
 * Return: its block_num (>= 1), or 0 when it is not in the block map (or
 * @d is NULL or has no block map).
 */
uint32_t sl_deps_block_num(const struct sl_deps *d, uint64_t task_id);

/**
 * struct sl_deps_cover - whether a deps.json describes a records file's
 * tasks: what sl_deps_cover() counts.
 * @rows:     task rows of the records.
 * @unlisted: rows whose task_id the deps.json's tasks[] (kernel map) does
 *            not list; all @rows when it lists no tasks.
 * @no_tasks: the deps.json lists no tasks at all ("tasks" empty, missing,
 *            or no entry with kernel_ids): nothing can be named.
 * @off_edges: with @no_tasks, rows whose task_id is no endpoint (pred or
 *            succ) of any edge: what an edges-only file can be checked
 *            on; 0 otherwise.
 * @no_kernel: listed rows (without a func_id of their own) on a core type
 *            for which the task's kernel_ids has no kernel: an AIC row
 *            whose kernel_ids[0] is -1, an AIV row whose [1] and [2] are;
 *            the run that wrote the records could not have run them, so
 *            the deps.json is another case's or run's.
 * @nk_task, @nk_core, @nk_aic, @nk_ids: the first such row: its task_id,
 *            core_id, whether the core is AIC, and the task's kernel_ids.
 */
struct sl_deps_cover {
	size_t rows, unlisted, off_edges, no_kernel;
	bool no_tasks;
	bool bad_kernel_ids; /* some tasks[] entries were left out for it */
	uint64_t nk_task;
	int32_t nk_core;
	bool nk_aic;
	int32_t nk_ids[3];
};

/**
 * sl_deps_cover() - count @pd's task rows against @d's kernel map and,
 * when it lists no tasks, against its edges' endpoints; O((rows + edges)
 * log edges).
 * @d:   deps from sl_read_deps().
 * @pd:  the records' joined rows.
 * @out: receives the counts (row counts).
 */
void sl_deps_cover(const struct sl_deps *d, const struct sl_perf_data *pd,
		   struct sl_deps_cover *out);

/**
 * sl_deps_cover_warn() - the stderr warning of a deps.json that does not
 * list the records' tasks (taskprof decision, not in the reference: a
 * deps.json of another case or run is otherwise taken in silence), shared
 * by `taskprof swimlane` and `taskprof sched-overhead`. Prints nothing
 * when @c->unlisted is 0, else one line
 *   "Warning: U of N task rows of <records> have a task_id that <deps> does
 *    not list (is it from another case or run?): <consequence>."
 * with "(it lists no tasks: is it a dep_gen deps.json?)" as the
 * parenthesis when @c->no_tasks.
 * @err:          where the line goes (stderr).
 * @c:            counts from sl_deps_cover().
 * @records_path: the records file, as named in the line.
 * @deps_path:    the deps.json, as named in the line.
 * @consequence:  what the caller loses, without the final full stop.
 */
void sl_deps_cover_warn(FILE *err, const struct sl_deps_cover *c, const char *records_path,
			const char *deps_path, const char *consequence);

/**
 * sl_deps_cover_kernel_warn() - the stderr warning of a deps.json whose
 * kernel_ids contradict the records (taskprof decision, not in the
 * reference; @c->no_kernel > 0, else nothing): one line
 *   "Warning: K of N task rows of <records> ran on a core type for which
 *    <deps> gives their task no kernel (first: t3 on AIC core 0,
 *    kernel_ids [-1, 2, -1]): is it from another case or run? Those rows
 *    stay unnamed (func_-1)."
 * @err, @c, @records_path, @deps_path: as sl_deps_cover_warn().
 */
void sl_deps_cover_kernel_warn(FILE *err, const struct sl_deps_cover *c,
			       const char *records_path, const char *deps_path);

/**
 * sl_deps_cover_edges_foreign() - whether an edges-only deps.json (@c->
 * no_tasks, edges present) is another case's or run's: none of the
 * records' task rows is an endpoint of its edges. A partial match is
 * taken: a run's tasks may have no edge, and a hand-made file (a cycle
 * among a few tasks, tests/conformance) names only some.
 * @c: counts from sl_deps_cover().
 *
 * Return: true when @c->no_tasks, there are rows, and every row is off the
 * edges (@c->off_edges == @c->rows); false otherwise.
 */
bool sl_deps_cover_edges_foreign(const struct sl_deps_cover *c);

/**
 * sl_deps_cover_edges_warn() - the warning of sl_deps_cover_warn() for an
 * edges-only deps.json that sl_deps_cover_edges_foreign() rejects:
 *   "Warning: U of N task rows of <records> have a task_id that no edge of
 *    <deps> names (it lists no tasks, only edges: is it from another case
 *    or run?): <consequence>."
 * @err, @c, @records_path, @deps_path, @consequence: as for
 *       sl_deps_cover_warn().
 */
void sl_deps_cover_edges_warn(FILE *err, const struct sl_deps_cover *c,
			      const char *records_path, const char *deps_path,
			      const char *consequence);

/**
 * struct sl_name_map - a name map (spec §3.4): callable_id_to_name and
 * orchestrator_name. A flat {id: name} map yields no names.
 * @n, @func_id, @name: entries whose key parses as an integer, sorted by
 *                      func_id.
 * @orchestrator_name:  NULL when absent or null.
 */
struct sl_name_map {
	size_t n;
	int64_t *func_id;
	char **name;
	char *orchestrator_name;
	/* The file had a callable_id_to_name key (spec §3.4 omits it when
	 * there are no names; a file given as a name map without it is
	 * probably not one: sl_name_map_warn_unnamed()). */
	bool has_c2n;
	/* callable_id_to_name keys that are not str(func_id) of any id
	 * ("00", "+1", " 1", ""): never looked up; the first one, printable
	 * (sl_printable()). */
	size_t n_skipped;
	char first_skipped[48];
};

/**
 * sl_printable() - @s for a one-line message: control characters as '?',
 * cut to 40 bytes with "..." after.
 * @s:   the text; NULL gives "".
 * @buf: receives the NUL-terminated result.
 * @len: size of @buf in bytes, >= 48 (a smaller one cuts sooner, without
 *       "...").
 *
 * Return: @buf.
 */
const char *sl_printable(const char *s, char *buf, size_t len);

/**
 * sl_perf_why_no_tasks() - why @pd joined no task rows, for a warning:
 * "aicpu_tasks and aicore_tasks are empty", "aicpu_tasks is empty",
 * "aicore_tasks is empty" or "no aicpu_tasks row matches an aicore_tasks
 * row (core_id, reg_task_id)".
 * @pd: data from sl_read_perf_data() with no task rows.
 *
 * Return: one of those static strings.
 */
const char *sl_perf_why_no_tasks(const struct sl_perf_data *pd);

/**
 * sl_perf_metadata_warning() - what in @pd's metadata does not add up,
 * for a warning (the reference reads it as is, spec §1.9): task rows on
 * cores core_types does not list (typed AIV, so an AIC task's func_id
 * resolves from the wrong kernel_ids entry), num_cores not the number of
 * core_types, or a core_to_thread not one entry per core (cores without an
 * entry get no scheduler thread: their complete → ready arrows and
 * sched-overhead counts are left out).
 * @pd:  data from sl_read_perf_data().
 * @buf, @len: where the text is composed (@len bytes, cut to fit).
 * Return: @buf, or NULL when everything adds up (or there is nothing to
 * compare).
 */
const char *sl_perf_metadata_warning(const struct sl_perf_data *pd, char *buf, size_t len);

/**
 * sl_perf_far_warning() - the records' timestamps (a task's end or finish,
 * a phase's or a submit's end) more than a day after their first one: no
 * run lasts that long, so a sentinel (UINT64_MAX) or a corrupt value, which
 * the reference draws as is (a bar of 10^17 µs); for a warning.
 * @pd:        data from sl_read_perf_data().
 * @buf, @len: where the text is composed ("N timestamps more than a day
 *             after the records' first one (first: aicore_tasks: the end of
 *             task r2t0 on core 0, 3.69e+11 s after it): ...").
 * Return: @buf, or NULL when there is none.
 */
const char *sl_perf_far_warning(const struct sl_perf_data *pd, char *buf, size_t len);

/**
 * sl_perf_order_warning() - the tasks whose AICPU times cannot be those of
 * the AICore times they joined: the dispatch after the AICore's end, or
 * the finish before its start (both read the one system counter, and a
 * task is dispatched before it runs and finished after). Rows of two runs
 * put together give that; the latency, head and tail overheads of such a
 * task (seconds, the time between the runs) mean nothing. Absent AICPU
 * times (0: level 1) are not counted. For a warning.
 * @pd:        data from sl_read_perf_data().
 * @buf, @len: where the text is composed ("N of M tasks have AICPU times
 *             that cannot be their AICore's (first: task t1 on core 0,
 *             dispatched 1000.000 s after its AICore end): ...").
 * Return: @buf, or NULL when there is none.
 */
const char *sl_perf_order_warning(const struct sl_perf_data *pd, char *buf, size_t len);

/**
 * sl_perf_zero_start_warning() - the records' starts that are missing or
 * 0 while their end is not (@pd->n_zero_starts): the reference converts
 * them to 0 µs (spec §2.3), so their bars begin before the run and the
 * statistics' averages take them as they are; for a warning.
 * @pd:        data from sl_read_perf_data().
 * @buf, @len: where the text is composed ("N records with a missing or
 *             zero start ... (first: aicpu_scheduler_phases[0][3].
 *             start_cycles): ...").
 * Return: @buf, or NULL when there is none.
 */
const char *sl_perf_zero_start_warning(const struct sl_perf_data *pd, char *buf, size_t len);

/**
 * sl_name_map_warn_skipped() - warn on @err when @m, read from @path, had
 * callable_id_to_name keys no func_id prints as ("00", "+1"): their
 * names can never be used. Message prefix @prog ("taskprof swimlane").
 */
void sl_name_map_warn_skipped(const struct sl_name_map *m, const char *path, const char *prog,
			      FILE *err);

/**
 * sl_name_map_warn_unnamed() - warn on @err when @m, read from @path that
 * the user named (--func-names), has neither callable_id_to_name nor
 * orchestrator_name: a JSON object that is not a name map (deps.json, a
 * flat {id: name} map) reads as a valid map without names (spec §3.4).
 * @prog: the message's prefix ("taskprof swimlane").
 */
void sl_name_map_warn_unnamed(const struct sl_name_map *m, const char *path, const char *prog,
			      FILE *err);

/**
 * sl_read_name_map() - read a name map (spec §3.4).
 * @path: the file.
 * @out:  receives the map; free with sl_name_map_free().
 *
 * Return: 0; -ENOENT if the file does not exist (message
 * "Func names JSON not found: <p>", or naming the symbolic link that
 * leads nowhere), -ELOOP, or another -errno of opening / reading it;
 * -EISDIR / -EINVAL for something other than a regular file; -EINVAL for
 * invalid JSON or wrong types (one-line message naming the file and key);
 * -ENOMEM.
 */
int sl_read_name_map(const char *path, struct sl_name_map *out);
/**
 * sl_read_name_map_mem() - sl_read_name_map() from @len bytes at @buf
 * (for the fuzzers); @name is used in messages.
 *
 * Return: 0; -EINVAL for invalid JSON or wrong types; -ENOMEM.
 */
int sl_read_name_map_mem(const char *name, const uint8_t *buf, size_t len,
			 struct sl_name_map *out);

/** sl_name_map_free() - free what @m holds and zero it (NULL: no-op). */
void sl_name_map_free(struct sl_name_map *m);

/**
 * sl_put_name() - write name @s (valid UTF-8, as a name map holds it) for a
 * terminal: each control character (C0, DEL, C1 U+0080..U+009F: a
 * newline, an escape sequence) as one '?', so the name stays on its line
 * and cannot drive the terminal. The trace keeps names as they are.
 * @out: the stream; @s: the name.
 *
 * Return: code points written (for padding, as Python's f"{s:<width}").
 */
size_t sl_put_name(FILE *out, const char *s);

/** sl_name_map_get() - the name of @func_id in @m (owned by @m), or NULL
 *  when @m has none for it. */
const char *sl_name_map_get(const struct sl_name_map *m, int64_t func_id);

/**
 * sl_name_map_sibling() - the name-map discovery of `taskprof swimlane`
 * (spec §5.3), shared with `taskprof pmu`: the unique regular file
 * matching name_map*.json in @input's folder.
 * @input: the file the map belongs beside (records, pmu.csv).
 * @err:   where the warning goes (stderr).
 *
 * Return: its path (malloc'd, @input's folder + "/" + name, as pathlib
 * joins them), or NULL when there is none, or more than one — then one
 * line on @err: "Warning: multiple sibling name maps found next to
 * <input>: a.json, b.json; pass --func-names explicitly." (names sorted).
 * The file is not read: the caller reads it with sl_read_name_map().
 */
char *sl_name_map_sibling(const char *input, FILE *err);

/**
 * sl_path_sibling() - @path's folder joined with @name as pathlib does
 * ("a/b" + "n" → "a/n", "b" → "n", "/b" → "/n").
 *
 * Return: the path (free it), or NULL when out of memory.
 */
char *sl_path_sibling(const char *path, const char *name);

/**
 * sl_records_in_folder() - the records file of a run folder, for the tools
 * that take a records path (`taskprof swimlane`, `taskprof sched-overhead`)
 * and are given the run's folder instead, as `taskprof pmu` is.
 * @path: a path as the user gave it.
 *
 * Return: NULL when @path is not a folder (the caller reads it as a file);
 * else @path + "/l2_swimlane_records.json" (malloc'd), which may not exist:
 * the caller's "not found" error then names it. *@oom is set when the
 * allocation failed.
 */
char *sl_records_in_folder(const char *path, bool *oom);

/**
 * sl_say_failed_folder() - after a records file was not found: when the
 * result.txt of its folder says the run failed, one line on @err that
 * says so, with the run's error, and why there is no records file (a run
 * in which no task finished writes none, spec §1.1; nor does one cut short
 * before its outputs); when the folder holds the result.txt of a run that
 * did not fail and does not give a swimlane_level of 1..4, one line that
 * the run recorded no swimlane (it ran without --enable-l2-swimlane, or at
 * level 0); nothing otherwise (the caller's error says what is wrong with
 * the records file).
 * @records: the records path that was not found (a run folder's
 *           l2_swimlane_records.json).
 * @err:     where the line goes (stderr).
 */
void sl_say_failed_folder(const char *records, FILE *err);

/**
 * sl_tdisp() - task-id display (spec §2.9): "t<local>" for ring 0, else
 * "r<ring>t<local>".
 * @task_id: (ring << 32) | local.
 * @buf:     receives the text; at most @len bytes, always terminated.
 * @len:     size of @buf in bytes (24 holds any id).
 *
 * Return: @buf.
 */
char *sl_tdisp(uint64_t task_id, char *buf, size_t len);

#endif /* TASKPROF_TOOLS_SWIMLANE_PERF_DATA_H */
