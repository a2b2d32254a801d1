/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/sched_overhead.h — `taskprof sched-overhead`: the
 * scheduler-overhead report over l2_swimlane_records.json + deps.json
 * (spec/swimlane-format.md §6). Part 1 is the shared sweep of overhead.h;
 * this header exposes the other Parts' computations so tests can check
 * their numbers without parsing the text.
 *
 * All times are µs (the reader's joined rows, struct sl_task).
 */
#ifndef TASKPROF_TOOLS_SWIMLANE_SCHED_OVERHEAD_H
#define TASKPROF_TOOLS_SWIMLANE_SCHED_OVERHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/swimlane/overhead.h"
#include "tools/swimlane/perf_data.h"

/**
 * sl_so_pysum() - sum @n doubles in order the way the reference's Python
 * sum() does (Neumaier-compensated, CPython >= 3.12), so Mean / Total lines
 * round like the reference's.
 * @v: the values (µs here; any unit).
 * @n: entries at @v.
 *
 * Return: their sum (0.0 when @n is 0).
 */
double sl_so_pysum(const double *v, size_t n);

/**
 * struct sl_so_switch - Part 2, "aicore switch" (spec §6.2 Part 2).
 * Per core type T (index SL_AIC / SL_AIV):
 * @n_cores:   cores of type T with rows (0: no table row for T).
 * @min_core, @mean_core, @max_core: over those cores of the per-core switch
 *             totals (µs; a core without switches counts 0.0).
 * @n_events:  counted gaps; @per_event their mean (0.0 if none).
 * @split_overhead, @split_independent: µs of the gaps during which T had
 *             (had not) ready, undispatched work.
 * @lower:     min over all cores of the per-core totals.
 * @upper:     sum over types of the per-type minimum.
 */
struct sl_so_switch {
	size_t n_cores[SL_OH_NTYPES];
	double min_core[SL_OH_NTYPES], mean_core[SL_OH_NTYPES], max_core[SL_OH_NTYPES];
	size_t n_events[SL_OH_NTYPES];
	double per_event[SL_OH_NTYPES];
	double split_overhead[SL_OH_NTYPES], split_independent[SL_OH_NTYPES];
	double lower, upper;
};

/**
 * sl_so_switch_stats() - the Part 2 switch figures (spec §6.2) of @n rows.
 * @tasks, @n: the joined rows.
 * @sw:        the Part-1 sweep of the same rows.
 * @out:       receives the figures (µs).
 *
 * Return: 0 or -ENOMEM.
 */
int sl_so_switch_stats(const struct sl_task *tasks, size_t n, const struct sl_oh_sweep *sw,
		       struct sl_so_switch *out);

/**
 * sl_so_head_tail() - Part 3/4 per-row head and tail overhead (µs, >= 0):
 * head = start - dispatch, or min(that, start - previous row's end on the
 * same core in start order); tail = finish - end. Both arrays have @n
 * entries in the reference's order (cores by first appearance, rows by
 * start); the caller frees them.
 * @tasks, @n: the joined rows.
 * @heads:     receives the head array (µs); NULL on failure.
 * @tails:     receives the tail array (µs); NULL on failure.
 *
 * Return: 0 or -ENOMEM (tp_last_error() set).
 */
int sl_so_head_tail(const struct sl_task *tasks, size_t n, double **heads, double **tails);

/* The percentiles of a distribution (P10 .. P99), spec §6.2 Part 3/4. */
#define SL_SO_NPCT 7
extern const int sl_so_pcts[SL_SO_NPCT];

/**
 * struct sl_so_dist - a Part 3/4 distribution.
 * @n: values; @pct[i]: value at index min(n * sl_so_pcts[i] / 100, n - 1)
 * of the sorted values; @max, @mean, @total.
 */
struct sl_so_dist {
	size_t n;
	double pct[SL_SO_NPCT];
	double max, mean, total;
};

/**
 * sl_so_dist() - sort @n values of @vals in place and fill @out with
 * their distribution (all zero when @n is 0); values in µs.
 * @vals: the values; reordered (ascending).
 * @n:    entries at @vals.
 * @out:  receives the percentiles, max, mean and total (µs).
 */
void sl_so_dist(double *vals, size_t n, struct sl_so_dist *out);

/**
 * struct sl_so_thread - Part 5, one scheduler thread with work records
 * (complete / async_poll / dispatch; spec §6.2 Part 5).
 * @index: thread index; @loops: max loop_iter; @completed: Σ
 * tasks_processed of complete records; @pop_hit, @pop_miss: Σ over
 * dispatch records; @complete_us, @async_poll_us, @dispatch_us: Σ positive
 * durations; @idle_us: Σ gaps between work records; @total_us: the four
 * summed; @fanout_* / @fanin_*: unique deps edges of the distinct tasks
 * whose first row's core maps to this thread (core_to_thread).
 */
struct sl_so_thread {
	size_t index;
	uint64_t loops, completed, pop_hit, pop_miss;
	double complete_us, async_poll_us, dispatch_us, idle_us, total_us;
	uint64_t fanout_edges, fanout_max, fanin_edges, fanin_max;
};

/**
 * sl_so_sched_threads() - Part 5 per-thread figures.
 * @pd:        the perf data (sched phases, core_to_thread, rows).
 * @g:         the graph of @pd's rows.
 * @pred, @succ, @n_edges: the deps edges (duplicates are removed here;
 *             self-loops count, as in the reference).
 * @out, @n_out: receive a malloc'ed array of the threads that have work
 *             records, by index; *n_out == 0 means "no scheduler phases".
 *             Times in µs.
 *
 * Return: 0 or -ENOMEM.
 */
int sl_so_sched_threads(const struct sl_perf_data *pd, const struct sl_oh_graph *g,
			const uint64_t *pred, const uint64_t *succ, size_t n_edges,
			struct sl_so_thread **out, size_t *n_out);

/**
 * struct sl_so_cpath - Part 6, the makespan-determining path.
 * @found:  there are tasks (the walk ran).
 * @hops, @span, @exec, @sched: spec §6.2 Part 6 (µs).
 * @lead:   the part of @sched from the path's first task, dispatch to
 *          start (µs): it lies before the span's start.
 * @tail:   the path's last task (the latest finish), end to finish (µs):
 *          the AICPU's FIN detection, inside the span, in neither @exec
 *          nor @sched (what the reference prints as "Other" is about
 *          @tail - @lead).
 * @cycle:  the walk reached a task it had already visited (cyclic deps);
 *          it stopped there instead of looping forever like the reference.
 *          @cycle_task is that task's id.
 * @window: the makespan the path is set against: the latest end minus the
 *          earliest start over all tasks (Part 1's window, µs).
 * @first_task, @first_offset: the path's first task (the one with no
 *          predecessor that ran) and how long after the window's start it
 *          started (µs).
 * @submit_wait: the part of @sched in which a task of the path waited for
 *          its own submit: the gap from its gating predecessor's end to
 *          the end of the orchestrator's submit of it, when that submit
 *          ended later (µs; 0 without orchestrator records).
 * @core_wait: the part of @sched (its gaps between a gating predecessor's
 *          end and the task's start) during which some core type the task
 *          runs on had no idle core, by the Part-1 sweep (µs; 0 without
 *          the sweep).
 */
struct sl_so_cpath {
	bool found;
	size_t hops;
	double span, exec, sched, lead, tail;
	bool cycle;
	uint64_t cycle_task;
	double window;
	uint64_t first_task;
	double first_offset;
	double submit_wait;
	double core_wait;
};

/**
 * sl_so_critical_path() - Part 6's walk (spec §6.2) from the latest-
 * finishing task back along the gating predecessors.
 * @g:          the folded tasks and edges.
 * @sw:         NULL, or the Part-1 sweep of the same rows; feeds
 *              @out->core_wait.
 * @submit_end: NULL, or per task of @g (its index) the end of its
 *              orchestrator submit (µs; NaN when the records have none);
 *              feeds @out->submit_wait.
 * @out:        receives the path (zeroed first).
 *
 * Return: 0 or -ENOMEM.
 */
int sl_so_critical_path(const struct sl_oh_graph *g, const struct sl_oh_sweep *sw,
			const double *submit_end, struct sl_so_cpath *out);

/**
 * sl_so_submit_ends() - per task of @g, the end of its orchestrator submit
 * (the first orch_submit record naming its task id), for
 * sl_so_critical_path().
 * @g:  the folded tasks.
 * @pd: the perf data whose orchestrator records are searched.
 *
 * Return: a malloc'd array (µs) of @g->n values (NaN for a task no record
 * names), or NULL when @pd has no orchestrator record with a task id or
 * memory ran out (the caller then walks without it).
 */
double *sl_so_submit_ends(const struct sl_oh_graph *g, const struct sl_perf_data *pd);

/**
 * sl_so_print_part6() - print Part 6 of the report (spec §6.3) to @f.
 * @cp:  the path from sl_so_critical_path() (µs).
 * @dag: false when deps.json does not describe the records' tasks: the
 *       part says it was skipped.
 *
 * Beyond the reference's lines, one note when Compute and Scheduler
 * injected add up to more than 101% of the span (the reference's
 * arithmetic counts the first task's dispatch-to-start wait, @cp->lead,
 * which lies before the span).
 */
void sl_so_print_part6(FILE *f, const struct sl_so_cpath *cp, bool dag);

/**
 * sl_sched_overhead_main() - `taskprof sched-overhead [RECORDS]
 * [--l2-swimlane-records-json P] [--deps-json D]`: prints the report of
 * spec §6.3 on stdout, errors (one line each, spec §6.1, §7.4) on stderr.
 * @argc, @argv: argv[0] is the command name.
 *
 * Return: the exit code: 0, 1 (bad input / missing data), 2 (usage).
 */
int sl_sched_overhead_main(int argc, char **argv);

#endif /* TASKPROF_TOOLS_SWIMLANE_SCHED_OVERHEAD_H */
