/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/overhead.h — the scheduler-overhead time sweep shared by
 * `taskprof sched-overhead` (Part 1 of the report, spec/swimlane-format.md
 * §6.2) and the converter's `--overhead` counters (spec §4.6.13).
 *
 * Two steps:
 *
 *   sl_oh_graph_build()  fold the joined rows (struct sl_task, one per
 *                        subtask execution) to one entry per task id and
 *                        attach the deps edges (self-loops dropped, preds
 *                        without rows ignored).
 *   sl_oh_sweep_compute() the sweep over that graph: sorted unique time
 *                        points and, for every interval [times[i],
 *                        times[i+1]), the idle-core count, the ready-but-
 *                        undispatched task count and the overhead flags per
 *                        core type, plus the Part-1 totals in µs.
 *
 * Converter usage (§4.6.13, emit only when deps edges and tasks exist):
 *
 *     struct sl_oh_graph g;
 *     struct sl_oh_sweep sw;
 *     int rc = sl_oh_graph_build(pd.tasks, pd.n_tasks, deps.pred, deps.succ,
 *                                deps.n_edges, &g);
 *     if (!rc) rc = sl_oh_sweep_compute(&g, pd.tasks, pd.n_tasks, &sw);
 *     for (int s = 0; s < SL_OH_N_SERIES; s++) {
 *         if (!sl_oh_series_present(&sw, s)) continue;   // "core types present"
 *         ...
 *     }
 *     // sample loop, in time order then series order:
 *     for (size_t i = 0; i + 1 < sw.n_times; i++)         // last time excluded
 *         for (int s = 0; s < SL_OH_N_SERIES; s++)
 *             if present(s) and (i == 0 or sl_oh_value(&sw, s, i) !=
 *                                 sl_oh_value(&sw, s, i - 1)):
 *                 emit {"ph":"C","cat":"overhead","name":sl_oh_series_name(s),
 *                       "pid":2,"tid":sl_oh_series_tid(s),
 *                       "ts":round(sw.times[i], 3),"args":{name: value}}
 *     sl_oh_sweep_free(&sw);
 *     sl_oh_graph_free(&g);
 *
 * (The reference emits, per time point, the series in the order of the
 * enum below: aic idle/ready/overhead, aiv idle/ready/overhead, all, has.)
 *
 * Costs: O((R + E) log(R + E)) time for R rows and E edges, O(R + E) memory
 * (about 40 bytes per row and 24 per time point); 1M tasks take well under
 * a second.
 */
#ifndef TASKPROF_TOOLS_SWIMLANE_OVERHEAD_H
#define TASKPROF_TOOLS_SWIMLANE_OVERHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/swimlane/perf_data.h"

/* Number of core types the sweep knows (enum sl_core_type: AIC, AIV). */
#define SL_OH_NTYPES 2

/**
 * struct sl_oh_graph - rows folded per task id (spec §6.2 "Per-task
 * folding", Part 6 "Per-task folding") plus the pred lists.
 * @n:          distinct task ids that have rows.
 * @id:         those ids, sorted ascending (binary-search with
 *              sl_oh_graph_find()).
 * @n_rows:     rows the graph was built from.
 * @row_task:   per row: index of its task in @id (n_rows entries).
 * @first_row:  per task: index of its first row (the task's position in the
 *              reference's insertion-ordered dicts).
 * @disp:       per task: min dispatch_us over its rows (µs).
 * @start:      per task: min start_us (µs).
 * @end:        per task: max end_us (µs).
 * @finish:     per task: max finish_us (µs).
 * @types:      per task: bit (1 << core_type) of every row's core type, so a
 *              MIX task (rows on AIC and AIV) has both bits.
 * @ready:      per task: max @end over its preds with rows, or its own
 *              @disp when it has none (µs; spec §6.2 Readiness).
 * @pred_off, @pred: CSR pred lists: preds of task t (indexes into @id) are
 *              pred[pred_off[t] .. pred_off[t+1]). Self-loops are dropped,
 *              preds without rows are not listed; a duplicated input pair is
 *              listed twice (harmless for every use).
 * @n_edges_used: edges that made it into @pred.
 */
struct sl_oh_graph {
	size_t n;
	uint64_t *id;
	size_t n_rows;
	uint32_t *row_task;
	uint32_t *first_row;
	double *disp, *start, *end, *finish, *ready;
	uint8_t *types;
	size_t *pred_off;
	uint32_t *pred;
	size_t n_edges_used;
};

/**
 * sl_oh_graph_build() - fold rows per task id and attach the edges.
 * @tasks, @n_tasks: joined rows (any order; the reader's task-id order is
 *              the fast path). At most UINT32_MAX - 1 rows.
 * @pred, @succ, @n_edges: deps edges (struct sl_deps pred/succ; may be
 *              NULL when @n_edges is 0). Self-loops are dropped here.
 * @out:        receives the graph (zeroed first); free with
 *              sl_oh_graph_free(), also after an error.
 *
 * Return: 0; -ENOMEM; -E2BIG when there are too many rows.
 */
int sl_oh_graph_build(const struct sl_task *tasks, size_t n_tasks, const uint64_t *pred,
		      const uint64_t *succ, size_t n_edges, struct sl_oh_graph *out);

/**
 * sl_oh_graph_find() - where @task_id is in @g (binary search, O(log n)).
 * @g:       a graph from sl_oh_graph_build().
 * @task_id: the task id.
 *
 * Return: its index in @g->id, or -1 when the task has no rows.
 */
long sl_oh_graph_find(const struct sl_oh_graph *g, uint64_t task_id);

/** sl_oh_graph_free() - free what @g holds (also after a failed build). */
void sl_oh_graph_free(struct sl_oh_graph *g);

/* The eight counter series of spec §4.6.13, in the reference's emit order. */
enum sl_oh_series {
	SL_OH_AIC_IDLE = 0,  /* oh_aic_idle, tid 9101: k[AIC] - running AIC rows */
	SL_OH_AIC_READY,     /* oh_aic_ready, 9102: ready, undispatched AIC tasks */
	SL_OH_AIC_OVERHEAD,  /* oh_aic_overhead, 9103: 1 iff idle > 0 && ready > 0 */
	SL_OH_AIV_IDLE,      /* oh_aiv_idle, 9111 */
	SL_OH_AIV_READY,     /* oh_aiv_ready, 9112 */
	SL_OH_AIV_OVERHEAD,  /* oh_aiv_overhead, 9113 */
	SL_OH_ALL_OVERHEAD,  /* oh_all_overhead, 9121: 1 iff every present type overhead */
	SL_OH_HAS_OVERHEAD,  /* oh_has_overhead, 9122: 1 iff some type has ready work
			      * and every such type has an idle core */
	SL_OH_N_SERIES
};

/* Bits of struct sl_oh_sweep.flags[i]. */
#define SL_OH_F_OVERHEAD(type) (1u << (type)) /* type: SL_AIC / SL_AIV */
#define SL_OH_F_ALL            0x10u
#define SL_OH_F_HAS            0x20u

/**
 * struct sl_oh_sweep - the Part-1 sweep (spec §6.2).
 * @w0, @w1:    window: min start_us and max end_us over all rows (µs).
 * @window:     w1 - w0 (µs).
 * @present:    per core type: some row has that type. Series of a type
 *              that is absent are not written (§4.6.13); the all/has series
 *              are written when any type is present.
 * @k:          per core type: distinct core_ids of that type with rows.
 * @n_times:    sorted unique time points (µs), w0 and w1 included (1 when
 *              w0 == w1; 0 when there are no rows).
 * @times:      the time points, ascending.
 * @idle, @ready: per type, n_times - 1 entries (NULL for an absent type):
 *              the value on [times[i], times[i+1]) after the deltas at
 *              times[i] were applied.
 * @flags:      n_times - 1 entries of SL_OH_F_* for the same intervals.
 * @overhead_us: per type: total length of intervals where it is overhead.
 * @all_overhead_us, @has_overhead_us: the system totals (µs). Divide by
 *              @window for the report's percentages.
 */
struct sl_oh_sweep {
	double w0, w1, window;
	bool present[SL_OH_NTYPES];
	int64_t k[SL_OH_NTYPES];
	size_t n_times;
	double *times;
	int32_t *idle[SL_OH_NTYPES];
	int32_t *ready[SL_OH_NTYPES];
	uint8_t *flags;
	double overhead_us[SL_OH_NTYPES];
	double all_overhead_us, has_overhead_us;
};

/**
 * sl_oh_sweep_compute() - run the sweep of spec §6.2 Part 1.
 * @g:          graph built from the same @tasks.
 * @tasks, @n_tasks: the rows.
 * @out:        receives the sweep (zeroed first); free with
 *              sl_oh_sweep_free(), also after an error.
 *
 * Return: 0 (also for 0 rows: n_times 0); -ENOMEM.
 */
int sl_oh_sweep_compute(const struct sl_oh_graph *g, const struct sl_task *tasks, size_t n_tasks,
			struct sl_oh_sweep *out);

/** sl_oh_sweep_free() - free what @sw holds (also after a failed
 *  compute). */
void sl_oh_sweep_free(struct sl_oh_sweep *sw);

/** sl_oh_series_name() - the counter name of series @s: "oh_aic_idle" ...
 *  "oh_has_overhead" (spec §4.6.13; static); "?" outside the enum. */
const char *sl_oh_series_name(enum sl_oh_series s);
/** sl_oh_series_tid() - the tid of series @s's counter, 9101 ... 9122
 *  (the table of spec §4.6.13); 0 outside the enum. */
int sl_oh_series_tid(enum sl_oh_series s);
/** sl_oh_series_present() - whether the converter writes series @s of
 *  sweep @sw at all (§4.6.13 "only for the core types present").
 *  Return: true when @s's core type has rows (all / has: when any type
 *  has); false outside the enum. */
bool sl_oh_series_present(const struct sl_oh_sweep *sw, enum sl_oh_series s);

/**
 * sl_oh_value() - value of series @s on interval @i (0 <= i < n_times - 1)
 * of a sweep, as the counter's args value (a count, or 0/1 for the
 * overhead flags). Series of an absent type read 0.
 * @sw: the sweep.
 * @s:  the series.
 * @i:  the interval, 0 <= @i < @sw->n_times - 1 (not checked).
 *
 * Return: the value; 0 for a series outside the enum.
 */
static inline int64_t sl_oh_value(const struct sl_oh_sweep *sw, enum sl_oh_series s, size_t i)
{
	switch (s) {
	case SL_OH_AIC_IDLE:
		return sw->idle[SL_AIC] ? sw->idle[SL_AIC][i] : 0;
	case SL_OH_AIC_READY:
		return sw->ready[SL_AIC] ? sw->ready[SL_AIC][i] : 0;
	case SL_OH_AIC_OVERHEAD:
		return !!(sw->flags[i] & SL_OH_F_OVERHEAD(SL_AIC));
	case SL_OH_AIV_IDLE:
		return sw->idle[SL_AIV] ? sw->idle[SL_AIV][i] : 0;
	case SL_OH_AIV_READY:
		return sw->ready[SL_AIV] ? sw->ready[SL_AIV][i] : 0;
	case SL_OH_AIV_OVERHEAD:
		return !!(sw->flags[i] & SL_OH_F_OVERHEAD(SL_AIV));
	case SL_OH_ALL_OVERHEAD:
		return !!(sw->flags[i] & SL_OH_F_ALL);
	case SL_OH_HAS_OVERHEAD:
		return !!(sw->flags[i] & SL_OH_F_HAS);
	default:
		return 0;
	}
}

/**
 * sl_oh_ready_at() - the ready step function of @type at time @t (µs):
 * the ready count of the last interval starting at or before @t (0 before
 * w0), as used by the Part-2 switch split (spec §6.2 Part 2). O(log n).
 * @sw:   the sweep.
 * @type: the core type, SL_AIC or SL_AIV.
 * @t:    the time, µs (the clock of the rows' *_us fields).
 *
 * Return: the ready task count; at and past the last time point, that of
 * the last interval; 0 for an absent or unknown @type, or a sweep of fewer
 * than two time points.
 */
int32_t sl_oh_ready_at(const struct sl_oh_sweep *sw, int type, double t);

#endif /* TASKPROF_TOOLS_SWIMLANE_OVERHEAD_H */
