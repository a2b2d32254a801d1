/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of tools/swimlane/overhead + sched_overhead: the Part-1 sweep
 * (overhead %, counter series), Part 2 switch gaps and split, Parts 3/4
 * head / tail and percentiles, Part 5 scheduler-thread figures, Part 6
 * critical path (hops, span, cycle guard), on small hand-built row lists
 * whose numbers are worked out in the comments, plus fixture A's numbers
 * (spec/swimlane-format.md §6, §7.3).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "tools/swimlane/overhead.h"
#include "tools/swimlane/perf_data.h"
#include "tools/swimlane/sched_overhead.h"
#include "taskprof/taskprof.h"

/* A row: task, core, type, dispatch, start, end, finish (µs). */
static struct sl_task row(uint64_t id, int core, int type, double disp, double start, double end,
			  double finish)
{
	struct sl_task t;
	memset(&t, 0, sizeof(t));
	t.task_id = id;
	t.func_id = -1;
	t.core_id = core;
	t.core_type = (uint8_t)type;
	t.has_propagation = true;
	t.dispatch_us = disp;
	t.start_us = start;
	t.end_us = end;
	t.duration_us = end - start;
	t.finish_us = finish;
	t.receive_us = start;
	return t;
}

static void build(const struct sl_task *t, size_t n, const uint64_t *p, const uint64_t *s,
		  size_t ne, struct sl_oh_graph *g, struct sl_oh_sweep *sw)
{
	assert_int_equal(sl_oh_graph_build(t, n, p, s, ne, g), 0);
	assert_int_equal(sl_oh_sweep_compute(g, t, n, sw), 0);
}

static void fmt(char *buf, size_t len, const char *f, double v)
{
	snprintf(buf, len, f, v);
}

/*
 * t1 AIC core 0 runs [1,5); t2 AIC core 0, pred t1, dispatched at 7, runs
 * [8,10); t3 AIV core 1 runs [0,2). Window [0,10]. t2 is ready at 5
 * (t1's end) and waits to 7: the AIC core is idle then, so AIC overhead =
 * 2 µs = 20%, has_overhead 20% (AIV has no ready work), all_overhead 0.
 */
static void test_sweep_basic(void **state)
{
	(void)state;
	struct sl_task t[] = {
		row(1, 0, SL_AIC, 0, 1, 5, 6),
		row(2, 0, SL_AIC, 7, 8, 10, 10.5),
		row(3, 1, SL_AIV, 0, 0, 2, 3),
	};
	uint64_t p[] = {1, 2}, s[] = {2, 2}; /* the self-loop 2->2 is dropped */
	struct sl_oh_graph g;
	struct sl_oh_sweep sw;
	build(t, 3, p, s, 2, &g, &sw);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.n_edges_used, 1);
	assert_true(g.ready[1] == 5.0);
	assert_true(g.ready[0] == 0.0); /* no preds: its own dispatch */
	assert_true(sw.w0 == 0.0 && sw.w1 == 10.0 && sw.window == 10.0);
	assert_true(sw.present[SL_AIC] && sw.present[SL_AIV]);
	assert_int_equal(sw.k[SL_AIC], 1);
	assert_int_equal(sw.k[SL_AIV], 1);
	double times[] = {0, 1, 2, 5, 7, 8, 10};
	assert_int_equal(sw.n_times, 7);
	for (size_t i = 0; i < 7; i++)
		assert_true(sw.times[i] == times[i]);
	int64_t aic_idle[] = {1, 0, 0, 1, 1, 0}, aic_ready[] = {0, 0, 0, 1, 0, 0};
	int64_t aiv_idle[] = {0, 0, 1, 1, 1, 1}, aic_ov[] = {0, 0, 0, 1, 0, 0};
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(sl_oh_value(&sw, SL_OH_AIC_IDLE, i), aic_idle[i]);
		assert_int_equal(sl_oh_value(&sw, SL_OH_AIC_READY, i), aic_ready[i]);
		assert_int_equal(sl_oh_value(&sw, SL_OH_AIV_IDLE, i), aiv_idle[i]);
		assert_int_equal(sl_oh_value(&sw, SL_OH_AIV_READY, i), 0);
		assert_int_equal(sl_oh_value(&sw, SL_OH_AIC_OVERHEAD, i), aic_ov[i]);
		assert_int_equal(sl_oh_value(&sw, SL_OH_HAS_OVERHEAD, i), aic_ov[i]);
		assert_int_equal(sl_oh_value(&sw, SL_OH_ALL_OVERHEAD, i), 0);
	}
	assert_true(sw.overhead_us[SL_AIC] == 2.0);
	assert_true(sw.overhead_us[SL_AIV] == 0.0);
	assert_true(sw.has_overhead_us == 2.0);
	assert_true(sw.all_overhead_us == 0.0);
	assert_int_equal(sl_oh_ready_at(&sw, SL_AIC, 5.0), 1);
	assert_int_equal(sl_oh_ready_at(&sw, SL_AIC, 6.99), 1);
	assert_int_equal(sl_oh_ready_at(&sw, SL_AIC, 7.0), 0);
	assert_int_equal(sl_oh_ready_at(&sw, SL_AIC, -1.0), 0);
	assert_string_equal(sl_oh_series_name(SL_OH_AIV_OVERHEAD), "oh_aiv_overhead");
	assert_int_equal(sl_oh_series_tid(SL_OH_HAS_OVERHEAD), 9122);
	assert_int_equal(sl_oh_series_tid(SL_OH_AIC_IDLE), 9101);
	assert_true(sl_oh_series_present(&sw, SL_OH_ALL_OVERHEAD));
	sl_oh_sweep_free(&sw);
	sl_oh_graph_free(&g);
}

/*
 * A MIX task (rows on AIC core 0 and AIV core 1, min dispatch 5) whose pred
 * ends at 4 waits [4,5) on both engines while both are idle: all_overhead
 * and has_overhead 1 µs of the 8 µs window (12.5%). Only-AIV rows leave
 * the AIC series absent.
 */
static void test_sweep_mix_all_overhead(void **state)
{
	(void)state;
	struct sl_task t[] = {
		row(2, 0, SL_AIC, 5, 6, 8, 8),
		row(1, 0, SL_AIC, 0, 0, 4, 4), /* unsorted on purpose */
		row(2, 1, SL_AIV, 5.5, 6, 8, 8),
	};
	uint64_t p[] = {1}, s[] = {2};
	struct sl_oh_graph g;
	struct sl_oh_sweep sw;
	build(t, 3, p, s, 1, &g, &sw);
	assert_int_equal(g.n, 2);
	assert_true(g.id[0] == 1 && g.id[1] == 2);
	assert_int_equal(g.first_row[1], 0);
	assert_int_equal(g.types[1], 3);
	assert_true(g.disp[1] == 5.0);
	assert_int_equal(sw.n_times, 5); /* 0 4 5 6 8 */
	assert_true(sw.all_overhead_us == 1.0);
	assert_true(sw.has_overhead_us == 1.0);
	assert_true(sw.overhead_us[SL_AIC] == 1.0 && sw.overhead_us[SL_AIV] == 1.0);
	assert_int_equal(sl_oh_value(&sw, SL_OH_ALL_OVERHEAD, 1), 1);
	assert_int_equal(sl_oh_value(&sw, SL_OH_AIV_READY, 1), 1);
	sl_oh_sweep_free(&sw);
	sl_oh_graph_free(&g);

	struct sl_task v[] = {row(7, 3, SL_AIV, 0, 1, 2, 2)};
	build(v, 1, NULL, NULL, 0, &g, &sw);
	assert_false(sl_oh_series_present(&sw, SL_OH_AIC_IDLE));
	assert_true(sl_oh_series_present(&sw, SL_OH_AIV_IDLE));
	assert_true(sl_oh_series_present(&sw, SL_OH_HAS_OVERHEAD));
	assert_int_equal(sw.n_times, 2);
	sl_oh_sweep_free(&sw);
	sl_oh_graph_free(&g);

	/* no rows: an empty sweep, not an error */
	build(NULL, 0, NULL, NULL, 0, &g, &sw);
	assert_int_equal(sw.n_times, 0);
	sl_oh_sweep_free(&sw);
	sl_oh_graph_free(&g);
}

/*
 * Core 0 (AIC): A [1,3), B dispatched at 2 (< A's end) runs [4,6): a 1 µs
 * switch gap [3,4); C dispatched at 7.5 (not < 6): no switch. Core 1 (AIC):
 * D, pred A, dispatched 3.5, runs [5,7): AIC has ready work on [3,3.5), so
 * the gap splits 0.5 overhead / 0.5 independent. Core 2 (AIV): E [1,2), F
 * dispatched 1.5 runs [2.25,3): a 0.25 gap, no AIV ready work.
 * AIC per core {1.0, 0.0}: min 0 mean 0.5 max 1; AIV {0.25}; bound
 * [0, 0 + 0.25].
 */
static void test_switch_stats(void **state)
{
	(void)state;
	struct sl_task t[] = {
		row(1, 0, SL_AIC, 0, 1, 3, 3.5),   row(2, 0, SL_AIC, 2, 4, 6, 6.2),
		row(3, 0, SL_AIC, 7.5, 8, 9, 9.1), row(4, 1, SL_AIC, 3.5, 5, 7, 7),
		row(5, 2, SL_AIV, 0, 1, 2, 2),	   row(6, 2, SL_AIV, 1.5, 2.25, 3, 3),
	};
	uint64_t p[] = {1}, s[] = {4};
	struct sl_oh_graph g;
	struct sl_oh_sweep sw;
	struct sl_so_switch st;
	build(t, 6, p, s, 1, &g, &sw);
	assert_int_equal(sl_so_switch_stats(t, 6, &sw, &st), 0);
	assert_int_equal(st.n_cores[SL_AIC], 2);
	assert_int_equal(st.n_cores[SL_AIV], 1);
	assert_true(st.min_core[SL_AIC] == 0.0);
	assert_true(st.mean_core[SL_AIC] == 0.5);
	assert_true(st.max_core[SL_AIC] == 1.0);
	assert_int_equal(st.n_events[SL_AIC], 1);
	assert_true(st.per_event[SL_AIC] == 1.0);
	assert_true(st.split_overhead[SL_AIC] == 0.5);
	assert_true(st.split_independent[SL_AIC] == 0.5);
	assert_int_equal(st.n_events[SL_AIV], 1);
	assert_true(st.per_event[SL_AIV] == 0.25);
	assert_true(st.split_overhead[SL_AIV] == 0.0);
	assert_true(st.split_independent[SL_AIV] == 0.25);
	assert_true(st.lower == 0.0);
	assert_true(st.upper == 0.25);

	/* heads: A 1-0=1; B min(4-2, 4-3)=1; C min(8-7.5, 8-6)=0.5; D 1.5;
	 * E 1; F min(0.75, 0.25)=0.25. tails: .5 .2 .1 0 0 0 */
	double *h, *tl;
	assert_int_equal(sl_so_head_tail(t, 6, &h, &tl), 0);
	double eh[] = {1, 1, 0.5, 1.5, 1, 0.25};
	for (int i = 0; i < 6; i++)
		assert_true(h[i] == eh[i]);
	char b[32];
	fmt(b, sizeof(b), "%.2f", tl[0]);
	assert_string_equal(b, "0.50");
	fmt(b, sizeof(b), "%.2f", tl[1]);
	assert_string_equal(b, "0.20");
	assert_true(tl[3] == 0.0 && tl[5] == 0.0);
	struct sl_so_dist d;
	sl_so_dist(h, 6, &d); /* sorted: .25 .5 1 1 1 1.5 */
	assert_true(d.pct[0] == 0.25); /* P10: index 0 */
	assert_true(d.pct[1] == 0.5);  /* P25: int(1.5) = 1 */
	assert_true(d.pct[2] == 1.0);  /* P50: 3 */
	assert_true(d.pct[6] == 1.5);  /* P99: 5 */
	assert_true(d.max == 1.5);
	assert_true(d.total == 5.25);
	assert_true(d.mean == 0.875);
	free(h);
	free(tl);
	sl_oh_sweep_free(&sw);
	sl_oh_graph_free(&g);
}

/* Percentile indexes min(int(n*p/100), n-1) on 0..9 and an empty set. */
static void test_dist_percentiles(void **state)
{
	(void)state;
	double v[10];
	for (int i = 0; i < 10; i++)
		v[i] = 9 - i;
	struct sl_so_dist d;
	sl_so_dist(v, 10, &d);
	double want[] = {1, 2, 5, 7, 9, 9, 9};
	for (int i = 0; i < SL_SO_NPCT; i++)
		assert_true(d.pct[i] == want[i]);
	assert_true(d.total == 45.0 && d.mean == 4.5 && d.max == 9.0);
	sl_so_dist(NULL, 0, &d);
	assert_int_equal(d.n, 0);
	/* compensated sum like Python's: 0.1 * 10 is exactly 1.0 */
	double t[10];
	for (int i = 0; i < 10; i++)
		t[i] = 0.1;
	assert_true(sl_so_pysum(t, 10) == 1.0);
}

/*
 * t4 (finish 11) has preds t2 (end 7) and t3 (end 5): the walk takes t2
 * (sched 8-7 = 1), then t1 (sched 4-3 = 1), root t1 adds 1-0 = 1.
 * hops 2, exec 2+3+2 = 7, sched 3, span 11 - 1 = 10.
 */
static void test_critical_path(void **state)
{
	(void)state;
	struct sl_task t[] = {
		row(1, 0, SL_AIC, 0, 1, 3, 3.5),
		row(2, 0, SL_AIC, 2, 4, 7, 7.5),
		row(3, 1, SL_AIC, 2, 3.5, 5, 5.5),
		row(4, 0, SL_AIC, 6, 8, 10, 11),
	};
	uint64_t p[] = {1, 1, 2, 3}, s[] = {2, 3, 4, 4};
	struct sl_oh_graph g;
	struct sl_oh_sweep sw;
	struct sl_so_cpath cp;
	build(t, 4, p, s, 4, &g, &sw);
	assert_int_equal(sl_so_critical_path(&g, NULL, NULL, &cp), 0);
	assert_true(cp.found);
	assert_false(cp.cycle);
	assert_int_equal(cp.hops, 2);
	assert_true(cp.exec == 7.0);
	assert_true(cp.sched == 3.0);
	assert_true(cp.span == 10.0);
	assert_true(cp.tail == 1.0); /* t4: end 10, finish 11 */
	sl_oh_sweep_free(&sw);
	sl_oh_graph_free(&g);

	/* equal pred ends: the larger task id gates */
	struct sl_task u[] = {
		row(5, 0, SL_AIC, 0, 0, 2, 2),
		row(6, 1, SL_AIC, 0, 1, 2, 2),
		row(7, 0, SL_AIC, 3, 4, 5, 6),
	};
	uint64_t p2[] = {5, 6}, s2[] = {7, 7};
	build(u, 3, p2, s2, 2, &g, &sw);
	assert_int_equal(sl_so_critical_path(&g, NULL, NULL, &cp), 0);
	assert_int_equal(cp.hops, 1);
	/* via t6: exec 1 + 1, sched (4-2) + (1-0), span 6 - 1 */
	assert_true(cp.exec == 2.0 && cp.sched == 3.0 && cp.span == 5.0);
	assert_true(cp.lead == 1.0); /* t6: dispatch 0, start 1 */
	sl_oh_sweep_free(&sw);
	sl_oh_graph_free(&g);
}

/*
 * Two AIC cores. t2 (core 0) waits for t1 (end 2) and starts at 5.5; from
 * 2 to 5 both cores are busy (t8 on core 0, t9 on core 1), from 5 on core
 * 0 is free. Its submit ended at 4: Scheduler injected 3.5, of which 3.0
 * with every AIC core busy and 2.0 before the submit.
 */
static void test_critical_path_waits(void **state)
{
	(void)state;
	struct sl_task t[] = {
		row(1, 0, SL_AIC, 0, 0, 2, 2),
		row(9, 1, SL_AIC, 0, 0, 6, 6),
		row(8, 0, SL_AIC, 2, 2, 5, 5),
		row(2, 0, SL_AIC, 5, 5.5, 8, 8),
	};
	uint64_t p[] = {1}, s[] = {2};
	struct sl_oh_graph g;
	struct sl_oh_sweep sw;
	struct sl_so_cpath cp;
	build(t, 4, p, s, 1, &g, &sw);
	double se[4] = {NAN, NAN, NAN, NAN};
	long i2 = sl_oh_graph_find(&g, 2);
	assert_true(i2 >= 0);
	se[i2] = 4.0;
	assert_int_equal(sl_so_critical_path(&g, &sw, se, &cp), 0);
	assert_int_equal(cp.hops, 1);
	assert_true(cp.sched == 3.5);
	assert_true(cp.core_wait == 3.0);
	assert_true(cp.submit_wait == 2.0);
	assert_true(cp.window == 8.0 && cp.span == 8.0);
	assert_true(cp.first_task == 1 && cp.first_offset == 0.0);
	/* without the sweep and the submits: neither */
	assert_int_equal(sl_so_critical_path(&g, NULL, NULL, &cp), 0);
	assert_true(cp.core_wait == 0.0 && cp.submit_wait == 0.0 && cp.sched == 3.5);

	/* the lines: both shares above 10%, the path covering all the window */
	assert_int_equal(sl_so_critical_path(&g, &sw, se, &cp), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	sl_so_print_part6(f, &cp, true);
	fclose(f);
	assert_non_null(strstr(buf, "    (of Scheduler injected, 2.0 us (57.1%) is tasks on the path "
				    "waiting for their own submit: the predecessor had ended before "
				    "the orchestrator submitted them)\n"));
	assert_non_null(strstr(buf, "    (of Scheduler injected, 3.0 us (85.7%) is tasks on the path "
				    "waiting while every core of their type was busy: they waited for "
				    "a core, not for the scheduler)\n"));
	assert_null(strstr(buf, "the path covers"));
	free(buf);
	sl_oh_sweep_free(&sw);
	sl_oh_graph_free(&g);

	/* a path that starts late in the window says so */
	struct sl_so_cpath late = {.found = true, .hops = 2, .span = 20, .exec = 5, .sched = 15,
				   .window = 100, .first_task = (2ULL << 32) | 7,
				   .first_offset = 80};
	f = open_memstream(&buf, &len);
	sl_so_print_part6(f, &late, true);
	fclose(f);
	assert_non_null(strstr(buf, "    (the path covers 20.0% of the 100.0 us window: it begins "
				    "at task r2t7, which started 80.0 us into the window and has no "
				    "predecessor that ran)\n"));
	assert_null(strstr(buf, "of Scheduler injected"));
	free(buf);

	/* a path whose span (to the last task's AICPU finish) ends past the
	 * window (first start -> last AICore end): only the overlap counts,
	 * 100 - 60 = 40 us of the 100 */
	struct sl_so_cpath past = {.found = true, .hops = 0, .span = 50, .exec = 2, .sched = 40,
				   .window = 100, .first_task = 4, .first_offset = 60};
	f = open_memstream(&buf, &len);
	sl_so_print_part6(f, &past, true);
	fclose(f);
	assert_non_null(strstr(buf, "    (the path covers 40.0% of the 100.0 us window: it begins "
				    "at task t4, which started 60.0 us into the window and has no "
				    "predecessor that ran; the span goes on past the window's last "
				    "end to the AICPU's finish of the path's last task)\n"));
	free(buf);
}

/* Part 6's note: only when Compute + Scheduler injected pass 101% of the
 * span (fixture A's 32.1% + 68.6% = 100.7% keeps the reference's lines). */
static void test_part6_note(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct sl_so_cpath over = {.found = true, .hops = 3, .span = 100, .exec = 30,
				   .sched = 80, .lead = 15};
	sl_so_print_part6(f, &over, true);
	fclose(f);
	assert_non_null(strstr(buf, "    Scheduler injected     : 80.0 us (80.0%)\n"
				    "    Other (dep wait on path): 0.0 us\n"
				    "    (Compute + Scheduler exceed the span by 10.0 us: Scheduler "
				    "injected includes the 15.0 us the path's first task waited from "
				    "dispatch to start, before the span begins)\n"
				    "  -> scheduler adds ~80.0% "));
	free(buf);
	/* more over than the lead explains: overlapping tasks named too */
	f = open_memstream(&buf, &len);
	over.lead = 4;
	sl_so_print_part6(f, &over, true);
	fclose(f);
	assert_non_null(strstr(buf, "before the span begins; tasks on the path that overlap "
				    "their predecessor count the overlap twice)\n"));
	free(buf);
	f = open_memstream(&buf, &len);
	struct sl_so_cpath a = {.found = true, .hops = 1, .span = 27.4, .exec = 8.8,
				.sched = 18.8, .lead = 0.4};
	sl_so_print_part6(f, &a, true);
	fclose(f);
	assert_null(strstr(buf, "exceed"));
	assert_non_null(strstr(buf, "    Scheduler injected     : 18.8 us (68.6%)\n"));
	assert_null(strstr(buf, "Other is no"));
	free(buf);
	/* Other shown nonzero: said to be the last task's FIN detection less
	 * the lead (100 - 50 - 30 = 20 = 30 - 10) */
	struct sl_so_cpath oth = {.found = true, .hops = 2, .span = 100, .exec = 50,
				  .sched = 30, .lead = 10, .tail = 30};
	f = open_memstream(&buf, &len);
	sl_so_print_part6(f, &oth, true);
	fclose(f);
	assert_non_null(strstr(buf, "    Other (dep wait on path): 20.0 us\n"
				    "    (Other is no dependency wait: those are in Scheduler "
				    "injected. The span ends at the AICPU's finish of the path's last "
				    "task, 30.0 us after its end (FIN detection), less the 10.0 us "
				    "Scheduler injected counts before the span's start (the first "
				    "task's dispatch to start))\n"));
	free(buf);
	oth.lead = 0;
	oth.sched = 20;
	f = open_memstream(&buf, &len);
	sl_so_print_part6(f, &oth, true);
	fclose(f);
	assert_non_null(strstr(buf, "    Other (dep wait on path): 30.0 us\n"
				    "    (Other is no dependency wait: those are in Scheduler "
				    "injected. The span ends at the AICPU's finish of the path's last "
				    "task, 30.0 us after its end (FIN detection))\n"));
	free(buf);
}

/* t1 <-> t2: the reference loops forever; the walk stops at t1's pred t2,
 * already on the path. */
static void test_critical_path_cycle(void **state)
{
	(void)state;
	struct sl_task t[] = {
		row(1, 0, SL_AIC, 0, 0, 1, 1),
		row(2, 0, SL_AIC, 0, 2, 3, 3),
	};
	uint64_t p[] = {1, 2}, s[] = {2, 1};
	struct sl_oh_graph g;
	struct sl_oh_sweep sw;
	struct sl_so_cpath cp;
	build(t, 2, p, s, 2, &g, &sw);
	assert_int_equal(sl_so_critical_path(&g, NULL, NULL, &cp), 0);
	assert_true(cp.cycle);
	assert_true(cp.cycle_task == 2);
	assert_int_equal(cp.hops, 1);
	assert_true(cp.exec == 2.0 && cp.sched == 1.0 && cp.span == 3.0);
	sl_oh_sweep_free(&sw);
	sl_oh_graph_free(&g);
}

/*
 * Thread 0: dispatch [0,1] (hit 1, miss 2, loop 1), complete [2,4] (3
 * tasks, loop 2), resolve [4,5] (not a work phase), async_poll [5,5.5]
 * (loop 3): idle 1 + 1, total 5.5. Thread 1 has only a release: skipped.
 * Thread 2: complete [10,11]. Fanout over unique pairs (1,1) (1,2) (2,9):
 * task 1 (core 0 -> thread 0) out 2 in 1; task 2 (core 1 -> thread 2)
 * out 1 in 1.
 */
static void test_sched_threads(void **state)
{
	(void)state;
	struct sl_phase t0[4], t1[1], t2[1];
	memset(t0, 0, sizeof(t0));
	memset(t1, 0, sizeof(t1));
	memset(t2, 0, sizeof(t2));
	/* out of start order on purpose */
	t0[0] = (struct sl_phase){.kind = SL_PH_COMPLETE, .start_us = 2, .end_us = 4,
				  .loop_iter = 2, .tasks_processed = 3};
	t0[1] = (struct sl_phase){.kind = SL_PH_DISPATCH, .start_us = 0, .end_us = 1,
				  .loop_iter = 1, .pop_hit = 1, .pop_miss = 2};
	t0[2] = (struct sl_phase){.kind = SL_PH_RESOLVE, .start_us = 4, .end_us = 5,
				  .loop_iter = 9};
	t0[3] = (struct sl_phase){.kind = SL_PH_ASYNC_POLL, .start_us = 5, .end_us = 5.5,
				  .loop_iter = 3};
	t1[0] = (struct sl_phase){.kind = SL_PH_RELEASE, .start_us = 0, .end_us = 1};
	t2[0] = (struct sl_phase){.kind = SL_PH_COMPLETE, .start_us = 10, .end_us = 11,
				  .loop_iter = 7, .tasks_processed = 1};
	struct sl_phase_list lists[3] = {{t0, 4}, {t1, 1}, {t2, 1}};
	struct sl_task rows[] = {row(1, 0, SL_AIC, 0, 1, 2, 2), row(2, 1, SL_AIC, 0, 1, 2, 2)};
	int32_t c2t[] = {0, 2};
	struct sl_perf_data pd;
	memset(&pd, 0, sizeof(pd));
	pd.tasks = rows;
	pd.n_tasks = 2;
	pd.has_sched = true;
	pd.sched = lists;
	pd.n_sched = 3;
	pd.core_to_thread = c2t;
	pd.n_core_to_thread = 2;
	uint64_t p[] = {1, 1, 1, 2}, s[] = {2, 2, 1, 9};
	struct sl_oh_graph g;
	assert_int_equal(sl_oh_graph_build(rows, 2, p, s, 4, &g), 0);
	struct sl_so_thread *th;
	size_t m;
	assert_int_equal(sl_so_sched_threads(&pd, &g, p, s, 4, &th, &m), 0);
	assert_int_equal(m, 2);
	assert_int_equal(th[0].index, 0);
	assert_int_equal(th[0].loops, 3);
	assert_int_equal(th[0].completed, 3);
	assert_int_equal(th[0].pop_hit, 1);
	assert_int_equal(th[0].pop_miss, 2);
	assert_true(th[0].complete_us == 2.0 && th[0].dispatch_us == 1.0);
	assert_true(th[0].async_poll_us == 0.5 && th[0].idle_us == 2.0);
	assert_true(th[0].total_us == 5.5);
	assert_int_equal(th[0].fanout_edges, 2);
	assert_int_equal(th[0].fanout_max, 2);
	assert_int_equal(th[0].fanin_edges, 1);
	assert_int_equal(th[1].index, 2);
	assert_int_equal(th[1].loops, 7);
	assert_int_equal(th[1].fanout_edges, 1);
	assert_int_equal(th[1].fanin_edges, 1);
	free(th);

	/* no work phases at all: zero threads (the "no phases" error) */
	pd.n_sched = 2;
	lists[0].n = 0;
	assert_int_equal(sl_so_sched_threads(&pd, &g, p, s, 4, &th, &m), 0);
	assert_int_equal(m, 0);
	free(th);
	sl_oh_graph_free(&g);
}

/* The fixture folder, found from this file's path (CMake compiles it by
 * absolute path). */
static void fixture_path(char *buf, size_t len, const char *name)
{
	const char *f = __FILE__;
	const char *slash = strrchr(f, '/');
	int dl = slash ? (int)(slash - f) : 1;
	snprintf(buf, len, "%.*s/../conformance/fixtures/swimlane-probe/A_level4_full/%s", dl,
		 slash ? f : ".", name);
}

/* Fixture A (spec §7.3, sched_overhead_stdout.txt): the report's numbers. */
static void test_fixture_a_numbers(void **state)
{
	(void)state;
	char path[4096], b[64];
	fixture_path(path, sizeof(path), "l2_swimlane_records.json");
	struct sl_perf_data pd;
	int rc = sl_read_perf_data(path, &pd);
	if (rc)
		fail_msg("reading %s: %s", path, tp_last_error());
	/* deps.json's unique pairs, in file order */
	uint64_t p[] = {0, 1, 2, 4294967299ull, 4, 5, 1, 6};
	uint64_t s[] = {1, 2, 4294967299ull, 4, 5, 6, 6, 7};
	struct sl_oh_graph g;
	struct sl_oh_sweep sw;
	build(pd.tasks, pd.n_tasks, p, s, 8, &g, &sw);
	assert_int_equal(pd.n_tasks, 7);
	fmt(b, sizeof(b), "%.1f", sw.window);
	assert_string_equal(b, "27.2");
	fmt(b, sizeof(b), "%.1f", sw.overhead_us[SL_AIC] / sw.window * 100);
	assert_string_equal(b, "66.2");
	fmt(b, sizeof(b), "%.1f", sw.overhead_us[SL_AIV] / sw.window * 100);
	assert_string_equal(b, "4.8");
	fmt(b, sizeof(b), "%.1f", sw.all_overhead_us / sw.window * 100);
	assert_string_equal(b, "4.8");
	fmt(b, sizeof(b), "%.1f", sw.has_overhead_us / sw.window * 100);
	assert_string_equal(b, "66.2");
	/* 40 counter samples in merged_swimlane_overhead.json (spec §7.3) */
	size_t samples = 0;
	for (size_t i = 0; i + 1 < sw.n_times; i++)
		for (int k = 0; k < SL_OH_N_SERIES; k++)
			if (sl_oh_series_present(&sw, k) &&
			    (i == 0 || sl_oh_value(&sw, k, i) != sl_oh_value(&sw, k, i - 1)))
				samples++;
	assert_int_equal(samples, 40);

	struct sl_so_switch st;
	assert_int_equal(sl_so_switch_stats(pd.tasks, pd.n_tasks, &sw, &st), 0);
	assert_int_equal(st.n_cores[SL_AIC], 2);
	assert_int_equal(st.n_events[SL_AIC] + st.n_events[SL_AIV], 0);

	double *h, *tl;
	assert_int_equal(sl_so_head_tail(pd.tasks, pd.n_tasks, &h, &tl), 0);
	struct sl_so_dist d;
	sl_so_dist(h, pd.n_tasks, &d);
	fmt(b, sizeof(b), "%.2f", d.pct[1]);
	assert_string_equal(b, "0.34");
	fmt(b, sizeof(b), "%.1f", d.total);
	assert_string_equal(b, "2.6");
	sl_so_dist(tl, pd.n_tasks, &d);
	fmt(b, sizeof(b), "%.2f", d.pct[4]);
	assert_string_equal(b, "0.50");
	free(h);
	free(tl);

	struct sl_so_thread *th;
	size_t m;
	assert_int_equal(sl_so_sched_threads(&pd, &g, p, s, 8, &th, &m), 0);
	assert_int_equal(m, 2);
	assert_int_equal(th[0].loops, 18);
	assert_int_equal(th[0].completed, 4);
	assert_int_equal(th[1].loops, 12);
	assert_int_equal(th[1].completed, 3);
	assert_int_equal(th[0].fanout_edges + th[1].fanout_edges, 6);
	assert_int_equal(th[0].pop_hit + th[1].pop_hit, 5);
	assert_int_equal(th[0].pop_miss + th[1].pop_miss, 3);
	fmt(b, sizeof(b), "%.1f", th[0].total_us);
	assert_string_equal(b, "28.2");
	free(th);

	struct sl_so_cpath cp;
	assert_int_equal(sl_so_critical_path(&g, NULL, NULL, &cp), 0);
	assert_int_equal(cp.hops, 1);
	fmt(b, sizeof(b), "%.1f", cp.span);
	assert_string_equal(b, "27.4");
	fmt(b, sizeof(b), "%.1f", cp.exec);
	assert_string_equal(b, "8.8");
	fmt(b, sizeof(b), "%.1f", cp.sched);
	assert_string_equal(b, "18.8");
	sl_oh_sweep_free(&sw);
	sl_oh_graph_free(&g);
	sl_perf_data_free(&pd);
}

/*
 * 200,000 tasks (a chain per core, 64 AIC + 64 AIV cores, 400k edges): the
 * whole analysis runs on a large graph. The time is printed for the reader,
 * never asserted (speed is measured by bench/, not by tests).
 */
static void test_large_graph(void **state)
{
	(void)state;
	const size_t n = 200000;
	struct sl_task *t = malloc(n * sizeof(*t));
	uint64_t *p = malloc(2 * n * sizeof(*p)), *s = malloc(2 * n * sizeof(*s));
	assert_non_null(t);
	assert_non_null(p);
	assert_non_null(s);
	size_t ne = 0;
	for (size_t i = 0; i < n; i++) {
		int core = (int)(i % 128);
		double base = (double)(i / 128) * 3.0 + (double)core * 0.01;
		t[i] = row(i, core, core < 64 ? SL_AIC : SL_AIV, base, base + 0.5, base + 2.5,
			   base + 2.7);
		if (i >= 128) {
			p[ne] = i - 128;
			s[ne++] = i;
		}
		if (i >= 1) {
			p[ne] = i - 1;
			s[ne++] = i;
		}
	}
	struct timespec a, z;
	clock_gettime(CLOCK_MONOTONIC, &a);
	struct sl_oh_graph g;
	struct sl_oh_sweep sw;
	struct sl_so_switch st;
	struct sl_so_cpath cp;
	double *h, *tl;
	build(t, n, p, s, ne, &g, &sw);
	assert_int_equal(sl_so_switch_stats(t, n, &sw, &st), 0);
	assert_int_equal(sl_so_head_tail(t, n, &h, &tl), 0);
	struct sl_so_dist d;
	sl_so_dist(h, n, &d);
	assert_int_equal(sl_so_critical_path(&g, NULL, NULL, &cp), 0);
	clock_gettime(CLOCK_MONOTONIC, &z);
	double sec = (double)(z.tv_sec - a.tv_sec) + (double)(z.tv_nsec - a.tv_nsec) * 1e-9;
	printf("%zu tasks, %zu edges: sweep %zu time points, analysis %.2f s\n", n, ne, sw.n_times,
	       sec);
	assert_int_equal(g.n, n);
	assert_false(cp.cycle);
	assert_true(cp.hops > 0);
	free(h);
	free(tl);
	sl_oh_sweep_free(&sw);
	sl_oh_graph_free(&g);
	free(t);
	free(p);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep_basic),
		cmocka_unit_test(test_sweep_mix_all_overhead),
		cmocka_unit_test(test_switch_stats),
		cmocka_unit_test(test_dist_percentiles),
		cmocka_unit_test(test_critical_path),
		cmocka_unit_test(test_critical_path_waits),
		cmocka_unit_test(test_critical_path_cycle),
		cmocka_unit_test(test_part6_note),
		cmocka_unit_test(test_sched_threads),
		cmocka_unit_test(test_fixture_a_numbers),
		cmocka_unit_test(test_large_graph),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
