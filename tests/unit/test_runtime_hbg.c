/* SPDX-License-Identifier: MIT */
/* Unit tests of the host_build_graph runtime mode of the engine
 * (runtime/engine.h, cfg.runtime = TP_RUNTIME_HOST_BUILD_GRAPH, spec
 * §3): the orchestration runs on the calling thread to completion before
 * the device launches, into one ring with no reclaim, then every AICPU
 * thread schedules. With 1 and 3 scheduler threads: a 3000-task chain in
 * one scope (more than a TRB window of 2048 could hold), a 1 → 512 → 1
 * wide graph, a dummy + alloc_tensors + predicated-skip graph (its
 * dummy_task / predicated_skip markers and dummy bar on a2a3sim, with the
 * right task ids; none on a5sim, seed 002 §2), paged
 * attention CaseSmall1 against its golden; proof that the build finished
 * before any dispatch (a flag set at the end of the orchestration and
 * checked by every kernel and every dispatch hook, the on_graph_built
 * timestamp before every dispatch timestamp, no dispatch during the
 * build); the graph-too-large (-E2BIG) and heap-full (-ENOSPC) errors; a
 * failing kernel; TRB still works beside it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "examples/paged_attention/pa_callable.h"
#include "examples/paged_attention/pa_golden.h"
#include "examples/paged_attention/pa_inputs.h"
#include "examples/paged_attention/pa_kernels.h"
#include "platform/device.h"
#include "platform/tile/core_ctx.h"
#include "runtime/engine.h"
#include "runtime/orch.h"
#include "taskprof/taskprof.h"

/* ---- build-before-dispatch evidence ----------------------------------- */

/* Set by the orchestrations when they return; every kernel and every
 * dispatch hook counts how often it ran while it was still clear. */
static _Atomic int g_built;
static _Atomic uint64_t g_early_kernels, g_early_dispatches;

static void note_kernel(void)
{
	if (!atomic_load(&g_built))
		atomic_fetch_add(&g_early_kernels, 1);
}

/* ---- test kernels ----------------------------------------------------- */

static uint32_t *tile_u32(int64_t arg)
{
	const struct tp_tile *t = (const struct tp_tile *)(intptr_t)arg;
	return (uint32_t *)(t->buf + t->offset);
}

/* args: INOUT x, scalar i. x = x * 31 + i. */
static void k_step(int64_t *args)
{
	note_kernel();
	uint32_t *x = tile_u32(args[0]);
	*x = *x * 31u + (uint32_t)args[1];
}

/* args: OUTPUT/INOUT y, scalar v. y = v. */
static void k_set(int64_t *args)
{
	note_kernel();
	*tile_u32(args[0]) = (uint32_t)args[1];
}

/* args: IN x, INOUT y, scalar i. y = x + i. */
static void k_add(int64_t *args)
{
	note_kernel();
	*tile_u32(args[1]) = *tile_u32(args[0]) + (uint32_t)args[2];
}

/* args: IN acc [n], OUT sum [1]. */
static void k_sum(int64_t *args)
{
	note_kernel();
	const struct tp_tile *t = (const struct tp_tile *)(intptr_t)args[0];
	uint32_t s = 0;
	for (uint32_t r = 0; r < t->rows; r++)
		s += ((uint32_t *)(t->buf + t->offset))[(size_t)r * t->stride];
	*tile_u32(args[1]) = s;
}

/* args: IN x. Copies a tile that leaves x's buffer: -EFAULT. */
static void k_oob(int64_t *args)
{
	struct tp_tile src = *(const struct tp_tile *)(intptr_t)args[0];
	struct tp_tile dst;
	src.rows = 1000;
	if (tp_local_tile(&dst, TP_MEM_UB, (enum tp_dtype)src.dtype, 1000, src.cols))
		return;
	tp_copy_in(&dst, &src);
}

enum { K_STEP_AIC, K_STEP_AIV, K_SET_AIC, K_ADD_AIV, K_SUM_AIC, K_OOB_AIV, K_COUNT };

static const struct tp_kernel_entry kernels[K_COUNT] = {
	[K_STEP_AIC] = { k_step, TP_CORE_AIC, "STEP_C" },
	[K_STEP_AIV] = { k_step, TP_CORE_AIV, "STEP_V" },
	[K_SET_AIC] = { k_set, TP_CORE_AIC, "SET" },
	[K_ADD_AIV] = { k_add, TP_CORE_AIV, "ADD" },
	[K_SUM_AIC] = { k_sum, TP_CORE_AIC, "SUM" },
	[K_OOB_AIV] = { k_oob, TP_CORE_AIV, "OOB_KERNEL" },
};

/* ---- harness ---------------------------------------------------------- */

struct hook_counts {
	_Atomic uint64_t dispatch, fin, phases[TP_PHASE_COUNT], phase_tasks[TP_PHASE_COUNT],
		windows, submits, dummies, skips, built, ring_nonzero;
	_Atomic uint64_t dummy_id, skip_id; /* the last marker's task */
	_Atomic uint64_t built_tasks, built_end, min_dispatch_ts;
};

static void h_phase(void *ud, int thread, enum tp_sched_phase ph, uint64_t s, uint64_t e,
		    uint64_t it, uint32_t n)
{
	struct hook_counts *h = ud;
	(void)thread, (void)it;
	assert_true(e >= s);
	assert_true(n > 0);
	atomic_fetch_add(&h->phases[ph], 1);
	atomic_fetch_add(&h->phase_tasks[ph], n);
}
static void h_dispatch(void *ud, int th, int core, tp_task_id t, int f, uint32_t tok,
		       uint64_t ts)
{
	struct hook_counts *h = ud;
	(void)th, (void)core, (void)f, (void)tok;
	if (!atomic_load(&g_built))
		atomic_fetch_add(&g_early_dispatches, 1);
	if (tp_task_id_ring(t) != 0)
		atomic_fetch_add(&h->ring_nonzero, 1);
	uint64_t cur = atomic_load(&h->min_dispatch_ts);
	while (ts < cur && !atomic_compare_exchange_weak(&h->min_dispatch_ts, &cur, ts))
		;
	atomic_fetch_add(&h->dispatch, 1);
}
static void h_fin(void *ud, int th, int core, tp_task_id t, int f, uint32_t tok,
		  uint64_t d, uint64_t fin)
{
	(void)th, (void)core, (void)t, (void)f, (void)tok;
	assert_true(fin >= d);
	atomic_fetch_add(&((struct hook_counts *)ud)->fin, 1);
}
static void h_dummy(void *ud, int th, tp_task_id t, uint64_t ts)
{
	(void)th, (void)ts;
	atomic_store(&((struct hook_counts *)ud)->dummy_id, t);
	atomic_fetch_add(&((struct hook_counts *)ud)->dummies, 1);
}
static void h_skip(void *ud, int th, tp_task_id t, uint64_t ts)
{
	(void)th, (void)ts;
	atomic_store(&((struct hook_counts *)ud)->skip_id, t);
	atomic_fetch_add(&((struct hook_counts *)ud)->skips, 1);
}
static void h_window(void *ud, int th, uint64_t s, uint64_t e)
{
	(void)th;
	assert_true(e >= s);
	atomic_fetch_add(&((struct hook_counts *)ud)->windows, 1);
}
static void h_submit(void *ud, tp_task_id t, uint64_t idx, uint64_t s, uint64_t e)
{
	(void)t, (void)idx, (void)s, (void)e;
	atomic_fetch_add(&((struct hook_counts *)ud)->submits, 1);
}
static void h_built(void *ud, uint64_t tasks, uint64_t s, uint64_t e)
{
	struct hook_counts *h = ud;
	assert_true(e >= s);
	/* On the host thread, after the orchestration returned. */
	assert_true(atomic_load(&g_built));
	assert_int_equal(atomic_load(&h->dispatch), 0);
	atomic_store(&h->built_tasks, tasks);
	atomic_store(&h->built_end, e);
	atomic_fetch_add(&h->built, 1);
}

/* Run parameters, reset by each test. */
static uint32_t g_cap;              /* max_graph_tasks; 0 = default */
static uint64_t g_heap = 4u << 20;  /* ring_heap */
static enum tp_runtime_mode g_mode = TP_RUNTIME_HOST_BUILD_GRAPH;
static const char *g_platform;      /* NULL: a2a3sim */

static int run(int aicpu_threads, const struct tp_kernel_entry *k, int nk, tp_orch_fn fn,
	       void *arg, struct tp_engine_result *res, struct hook_counts *hc)
{
	struct tp_device_config dcfg = {
		.platform = g_platform,
		.block_dim = 8,
		.aicpu_threads = aicpu_threads,
		.mem_bytes = 16u << 20,
	};
	struct tp_device *dev = tp_device_open(&dcfg);
	if (!dev)
		printf("open: %s\n", tp_last_error());
	assert_non_null(dev);
	if (hc) {
		memset(hc, 0, sizeof(*hc));
		atomic_store(&hc->min_dispatch_ts, UINT64_MAX);
	}
	struct tp_sched_hooks hooks = {
		.on_phase = h_phase,
		.on_dispatch = h_dispatch,
		.on_fin = h_fin,
		.on_dummy = h_dummy,
		.on_sched_window = h_window,
		.on_orch_submit = h_submit,
		.on_predicated_skip = h_skip,
		.on_graph_built = h_built,
		.task_times = true, /* the checks below read the times */
		.ud = hc,
	};
	struct tp_engine_config cfg = {
		.dev = dev,
		.kernels = k,
		.num_kernels = nk,
		.ring_window = 2048,
		.ring_heap = g_heap,
		.hooks = hc ? &hooks : NULL,
		.runtime = g_mode,
		.max_graph_tasks = g_cap,
	};
	atomic_store(&g_built, 0);
	atomic_store(&g_early_kernels, 0);
	atomic_store(&g_early_dispatches, 0);
	alarm(60); /* a hang fails the test instead of blocking ctest */
	int rc = tp_engine_run(&cfg, fn, arg, res);
	alarm(0);
	tp_device_close(dev);
	g_cap = 0;
	g_heap = 4u << 20;
	g_mode = TP_RUNTIME_HOST_BUILD_GRAPH;
	g_platform = NULL;
	return rc;
}

/* What every successful HBG run with hooks must show; @a5: the run was
 * on a5sim (no dummy-task path). */
static void check_hbg_hooks_on(const struct tp_engine_result *res, const struct hook_counts *hc,
			       int scheds, bool a5)
{
	assert_int_equal(atomic_load(&g_early_kernels), 0);
	assert_int_equal(atomic_load(&g_early_dispatches), 0);
	assert_int_equal(hc->built, 1);
	assert_int_equal(hc->built_tasks, res->total_tasks);
	if (hc->dispatch)
		assert_true(hc->built_end < hc->min_dispatch_ts);
	assert_int_equal(hc->ring_nonzero, 0);
	/* Spec §3: no orch records; no resolve / release bars. */
	assert_int_equal(hc->submits, 0);
	assert_int_equal(hc->phases[TP_PHASE_RESOLVE], 0);
	assert_int_equal(hc->phases[TP_PHASE_RELEASE], 0);
	/* Seed 002 §2: a2a3 HBG has the dummy-task path (one marker per
	 * dummy and per predicated skip, dummy bars covering both), a5 HBG
	 * none. */
	uint64_t want_d = a5 ? 0 : res->dummy_tasks, want_s = a5 ? 0 : res->predicated_skips;
	assert_int_equal(hc->dummies, want_d);
	assert_int_equal(hc->skips, want_s);
	assert_int_equal(hc->phase_tasks[TP_PHASE_DUMMY], want_d + want_s);
	if (!want_d && !want_s)
		assert_int_equal(hc->phases[TP_PHASE_DUMMY], 0);
	assert_int_equal(hc->windows, scheds); /* every AICPU thread schedules */
	assert_int_equal(res->reclaimed_tasks, 0);
	assert_true(res->graph_build_ns > 0);
	assert_int_equal(res->completed_tasks, res->total_tasks);
}

static void check_hbg_hooks(const struct tp_engine_result *res, const struct hook_counts *hc,
			    int scheds)
{
	check_hbg_hooks_on(res, hc, scheds, false);
}

static void u32_tensor(struct tp_tensor *t, uint32_t *mem, uint32_t n)
{
	uint32_t shape[1] = { n };
	assert_int_equal(tp_tensor_make_contiguous(t, (uint64_t)(uintptr_t)mem, TP_INT32, 1,
						   shape), 0);
}

/* ---- chain ------------------------------------------------------------- */

struct chain {
	uint32_t n;
	uint32_t x;
	uint32_t bad_ids; /* ids not (ring 0, local i); checked on the test thread */
};

/* A chain in one inner scope, alternating AIC / AIV. */
static int orch_chain(struct tp_orch *o, void *arg)
{
	struct chain *c = arg;
	struct tp_tensor x;
	int rc;
	u32_tensor(&x, &c->x, 1);
	if ((rc = tp_scope_begin(o)))
		return rc;
	for (uint32_t i = 0; i < c->n; i++) {
		struct tp_task_args a;
		tp_args_init(&a);
		tp_args_add_inout(&a, &x);
		tp_args_add_scalar(&a, i);
		tp_task_id id;
		rc = i & 1 ? tp_submit_aiv(o, K_STEP_AIV, &a, &id)
			   : tp_submit_aic(o, K_STEP_AIC, &a, &id);
		if (rc)
			return rc;
		/* One ring whatever the scope depth, ids in submit order. */
		c->bad_ids += tp_task_id_ring(id) != 0 || tp_task_id_local(id) != i;
	}
	if ((rc = tp_scope_end(o)))
		return rc;
	atomic_store(&g_built, 1);
	return 0;
}

static void check_chain(int threads, uint32_t n)
{
	struct chain c = { .n = n, .x = 7 };
	struct tp_engine_result res;
	struct hook_counts hc;
	int rc = run(threads, kernels, K_COUNT, orch_chain, &c, &res, &hc);
	if (rc)
		printf("run: %s\n", res.msg);
	assert_int_equal(rc, 0);
	uint32_t want = 7;
	for (uint32_t i = 0; i < n; i++)
		want = want * 31u + i;
	assert_int_equal(c.x, want);
	assert_int_equal(c.bad_ids, 0);
	assert_int_equal(res.total_tasks, n);
	assert_int_equal(res.dispatched_subtasks, n);
	assert_int_equal(res.max_running_per_core, 1);
	assert_true(res.max_outstanding_per_core <= 2);
	assert_int_equal(hc.dispatch, n);
	assert_int_equal(hc.fin, n);
	assert_true(hc.phases[TP_PHASE_DISPATCH] > 0);
	assert_true(hc.phases[TP_PHASE_COMPLETE] > 0);
	check_hbg_hooks(&res, &hc, threads);
}

/* 3000 tasks in one scope: a TRB ring of 2048 would report -EDEADLK. */
static void test_chain_1sched(void **s) { (void)s; check_chain(1, 3000); }
static void test_chain_3sched(void **s) { (void)s; check_chain(3, 3000); }

static void test_chain_trb_deadlocks(void **s)
{
	(void)s;
	struct chain c = { .n = 3000, .x = 7 };
	struct tp_engine_result res;
	g_mode = TP_RUNTIME_TENSORMAP_RINGBUFFER;
	assert_int_equal(run(2, kernels, K_COUNT, orch_chain, &c, &res, NULL), -EDEADLK);
}

/* ---- wide graph: 1 producer → 512 consumers → 1 join ------------------- */

#define WIDE 512

struct wide {
	uint32_t acc[WIDE];
	uint32_t x, sum;
};

static int orch_wide(struct tp_orch *o, void *arg)
{
	struct wide *w = arg;
	struct tp_tensor x, acc, sum;
	struct tp_task_args a;
	int rc;
	u32_tensor(&x, &w->x, 1);
	u32_tensor(&acc, w->acc, WIDE);
	u32_tensor(&sum, &w->sum, 1);

	tp_args_init(&a);
	tp_args_add_output_existing(&a, &x);
	tp_args_add_scalar(&a, 1000);
	if ((rc = tp_submit_aic(o, K_SET_AIC, &a, NULL)))
		return rc;
	for (uint32_t i = 0; i < WIDE; i++) {
		struct tp_tensor v;
		uint32_t sh[1] = { 1 }, off[1] = { i };
		assert_int_equal(tp_tensor_view(&acc, sh, off, &v), 0);
		tp_args_init(&a);
		tp_args_add_input(&a, &x);
		tp_args_add_inout(&a, &v);
		tp_args_add_scalar(&a, i);
		if ((rc = tp_submit_aiv(o, K_ADD_AIV, &a, NULL)))
			return rc;
	}
	tp_args_init(&a);
	tp_args_add_input(&a, &acc);
	tp_args_add_output_existing(&a, &sum);
	if ((rc = tp_submit_aic(o, K_SUM_AIC, &a, NULL)))
		return rc;
	atomic_store(&g_built, 1);
	return 0;
}

static void check_wide(int threads)
{
	struct wide *w = calloc(1, sizeof(*w));
	struct tp_engine_result res;
	struct hook_counts hc;
	assert_non_null(w);
	int rc = run(threads, kernels, K_COUNT, orch_wide, w, &res, &hc);
	if (rc)
		printf("run: %s\n", res.msg);
	assert_int_equal(rc, 0);
	uint32_t want = 0;
	for (uint32_t i = 0; i < WIDE; i++) {
		assert_int_equal(w->acc[i], 1000 + i);
		want += 1000 + i;
	}
	assert_int_equal(w->sum, want);
	assert_int_equal(res.total_tasks, WIDE + 2);
	assert_int_equal(hc.dispatch, WIDE + 2);
	check_hbg_hooks(&res, &hc, threads);
	free(w);
}

static void test_wide_1sched(void **s) { (void)s; check_wide(1); }
static void test_wide_3sched(void **s) { (void)s; check_wide(3); }

/* ---- dummy, predicated skip and alloc_tensors ------------------------- */

struct dummy_case {
	uint32_t out, skipped;
	uint32_t zero;
	tp_task_id dummy_id, skip_id;
};

/* alloc t → SET t = 5 → DUMMY (INOUT t) → ADD out = t + 3; a task whose
 * predicate (zero != 0) is false would set skipped. */
static int orch_dummy(struct tp_orch *o, void *arg)
{
	struct dummy_case *d = arg;
	struct tp_tensor t, out, sk;
	struct tp_tensor_create ci = { .dtype = TP_INT32, .ndims = 1, .shapes = { 1 } };
	struct tp_task_args a;
	int rc;
	u32_tensor(&out, &d->out, 1);
	u32_tensor(&sk, &d->skipped, 1);
	if ((rc = tp_scope_begin(o)))
		return rc;
	if ((rc = tp_alloc_tensors(o, 1, &ci, &t, NULL)))
		return rc;
	tp_args_init(&a);
	tp_args_add_inout(&a, &t);
	tp_args_add_scalar(&a, 5);
	if ((rc = tp_submit_aic(o, K_SET_AIC, &a, NULL)))
		return rc;
	tp_args_init(&a);
	tp_args_add_inout(&a, &t);
	if ((rc = tp_submit_dummy(o, &a, &d->dummy_id)))
		return rc;
	tp_args_init(&a);
	tp_args_add_input(&a, &t);
	tp_args_add_inout(&a, &out);
	tp_args_add_scalar(&a, 3);
	if ((rc = tp_submit_aiv(o, K_ADD_AIV, &a, NULL)))
		return rc;
	tp_args_init(&a);
	tp_args_add_inout(&a, &sk);
	tp_args_add_scalar(&a, 99);
	tp_args_set_predicate_addr(&a, &d->zero, 4, TP_PRED_NE, 0);
	if ((rc = tp_submit_aic(o, K_SET_AIC, &a, &d->skip_id)))
		return rc;
	if ((rc = tp_scope_end(o)))
		return rc;
	atomic_store(&g_built, 1);
	return 0;
}

static void check_dummy(int threads, const char *platform)
{
	struct dummy_case d = { 0 };
	struct tp_engine_result res;
	struct hook_counts hc;
	const bool a5 = platform && !strcmp(platform, "a5sim");
	g_platform = platform;
	int rc = run(threads, kernels, K_COUNT, orch_dummy, &d, &res, &hc);
	if (rc)
		printf("run: %s\n", res.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(d.out, 8);
	assert_int_equal(d.skipped, 0);
	assert_int_equal(res.total_tasks, 5);
	assert_int_equal(res.dummy_tasks, 1);
	assert_int_equal(res.predicated_skips, 1);
	assert_int_equal(res.inline_tasks, 1);
	assert_int_equal(res.dispatched_subtasks, 2);
	check_hbg_hooks_on(&res, &hc, threads, a5);
	/* alloc t0, SET t1, DUMMY t2, ADD t3, predicated SET t4 */
	assert_int_equal(d.dummy_id, 2);
	assert_int_equal(d.skip_id, 4);
	if (a5) {
		assert_int_equal(hc.phases[TP_PHASE_DUMMY], 0);
	} else {
		assert_int_equal(hc.dummy_id, d.dummy_id);
		assert_int_equal(hc.skip_id, d.skip_id);
		assert_true(hc.phases[TP_PHASE_DUMMY] >= 1 && hc.phases[TP_PHASE_DUMMY] <= 2);
	}
}

static void test_dummy_1sched(void **s) { (void)s; check_dummy(1, NULL); }
static void test_dummy_3sched(void **s) { (void)s; check_dummy(3, NULL); }
static void test_dummy_a5_1sched(void **s) { (void)s; check_dummy(1, "a5sim"); }
static void test_dummy_a5_3sched(void **s) { (void)s; check_dummy(3, "a5sim"); }

/* ---- paged attention CaseSmall1 ---------------------------------------- */

static struct tp_kernel_entry pa_table[PA_FUNC_COUNT];

/* The example's own orchestration (spec/runtime-model.md §5.3) on the
 * signature view of @arg (a struct pa_inputs). */
static int orch_pa(struct tp_orch *o, void *arg)
{
	struct tp_case_args ca;
	int rc = pa_case_args(arg, &ca);
	return rc ? rc : pa_orchestration(o, &ca);
}

static int orch_pa_hbg(struct tp_orch *o, void *arg)
{
	int rc = orch_pa(o, arg);
	atomic_store(&g_built, 1);
	return rc;
}

static void check_pa(int threads, enum tp_runtime_mode mode)
{
	const struct pa_case *c = pa_case_find("CaseSmall1");
	struct pa_inputs in;
	assert_non_null(c);
	assert_int_equal(pa_inputs_create(c, PA_DEFAULT_SEED, &in), 0);
	for (int f = 0; f < PA_FUNC_COUNT; f++)
		pa_table[pa_kernels[f].func_id] = (struct tp_kernel_entry){
			pa_kernels[f].fn, pa_kernels[f].core_type, pa_kernels[f].name
		};
	size_t n = (size_t)in.d.B * in.d.H * in.d.D;
	float *want = calloc(n, sizeof(float));
	assert_non_null(want);
	assert_int_equal(pa_golden(&in, want), 0);

	struct tp_engine_result res;
	struct hook_counts hc;
	g_mode = mode;
	int rc = run(threads, pa_table, PA_FUNC_COUNT, orch_pa_hbg, &in, &res, &hc);
	if (rc)
		printf("run: %s\n", res.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(res.total_tasks, pa_case_task_count(c));
	assert_int_equal(res.total_tasks, 13);
	assert_int_equal(res.inline_tasks, 1);
	assert_int_equal(res.completed_tasks, 13);
	if (mode == TP_RUNTIME_HOST_BUILD_GRAPH)
		check_hbg_hooks(&res, &hc, threads);
	else
		assert_int_equal(hc.built, 0);
	struct pa_cmp cmp;
	char line[256];
	bool ok = pa_compare(want, in.out, n, PA_RTOL, PA_ATOL, &cmp);
	pa_cmp_format(&cmp, &in.d, PA_RTOL, PA_ATOL, line, sizeof(line));
	printf("CaseSmall1 (%d sched, %s): %s\n", threads,
	       mode == TP_RUNTIME_HOST_BUILD_GRAPH ? "hbg" : "trb", line);
	assert_true(ok);
	free(want);
	pa_inputs_destroy(&in);
}

static void test_pa_small1_1sched(void **s) { (void)s; check_pa(1, TP_RUNTIME_HOST_BUILD_GRAPH); }
static void test_pa_small1_3sched(void **s) { (void)s; check_pa(3, TP_RUNTIME_HOST_BUILD_GRAPH); }
/* TRB beside it: same orchestration, 1 orchestrator + 3 schedulers. */
static void test_pa_small1_trb(void **s) { (void)s; check_pa(4, TP_RUNTIME_TENSORMAP_RINGBUFFER); }

/* ---- errors ------------------------------------------------------------- */

struct big {
	uint32_t n, x, submitted;
	int last_rc;
};

/* n chain steps; keeps submitting after a failure to show that later
 * submits are refused too. Returns the first error. */
static int orch_big(struct tp_orch *o, void *arg)
{
	struct big *b = arg;
	struct tp_tensor x;
	int first = 0;
	u32_tensor(&x, &b->x, 1);
	for (uint32_t i = 0; i < b->n; i++) {
		struct tp_task_args a;
		tp_args_init(&a);
		tp_args_add_inout(&a, &x);
		tp_args_add_scalar(&a, i);
		int rc = tp_submit_aiv(o, K_STEP_AIV, &a, NULL);
		b->last_rc = rc;
		if (rc && !first)
			first = rc;
		if (!rc)
			b->submitted++;
	}
	atomic_store(&g_built, 1);
	return first;
}

static void check_too_large(int threads)
{
	struct big b = { .n = 200 };
	struct tp_engine_result res;
	struct hook_counts hc;
	g_cap = 100;
	int rc = run(threads, kernels, K_COUNT, orch_big, &b, &res, &hc);
	printf("too large (%d sched): %s\n", threads, res.msg);
	assert_int_equal(rc, -E2BIG);
	assert_int_equal(b.submitted, 100);
	assert_int_equal(b.last_rc, -ECANCELED);
	assert_non_null(strstr(res.msg, "exceeds 100 tasks"));
	assert_non_null(strstr(tp_last_error(), "max_graph_tasks"));
	/* Never launched: nothing ran. */
	assert_int_equal(b.x, 0);
	assert_int_equal(hc.dispatch, 0);
	assert_int_equal(hc.built, 0);
	assert_int_equal(hc.windows, 0);
	assert_int_equal(res.dispatched_subtasks, 0);

	/* Exactly at the cap it runs. */
	struct big ok = { .n = 100 };
	g_cap = 100;
	assert_int_equal(run(threads, kernels, K_COUNT, orch_big, &ok, &res, NULL), 0);
	assert_int_equal(ok.submitted, 100);
	assert_int_equal(res.completed_tasks, 100);
}

static void test_too_large_1sched(void **s) { (void)s; check_too_large(1); }
static void test_too_large_3sched(void **s) { (void)s; check_too_large(3); }

/* Outputs beyond the one ring heap: -ENOSPC at once (no reclaim to wait
 * for), not a 10 s deadlock. */
static int orch_outputs(struct tp_orch *o, void *arg)
{
	(void)arg;
	for (int i = 0; i < 64; i++) {
		struct tp_task_args a;
		uint32_t sh[1] = { 1024 }; /* 4 KiB each */
		tp_args_init(&a);
		tp_args_add_output(&a, TP_INT32, 1, sh);
		tp_args_add_scalar(&a, 1);
		int rc = tp_submit_aic(o, K_SET_AIC, &a, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

static void test_heap_full(void **s)
{
	(void)s;
	struct tp_engine_result res;
	g_heap = 64u << 10; /* 16 outputs */
	int rc = run(2, kernels, K_COUNT, orch_outputs, NULL, &res, NULL);
	printf("heap full: %s\n", res.msg);
	assert_int_equal(rc, -ENOSPC);
	assert_non_null(strstr(res.msg, "ring_heap"));
	assert_int_equal(res.dispatched_subtasks, 0);
}

/* A failing kernel fails the run with its task id and name; no hang. */
static int orch_oob(struct tp_orch *o, void *arg)
{
	tp_task_id *bad = arg;
	static uint32_t x[4];
	struct tp_tensor t;
	u32_tensor(&t, x, 4);
	for (uint32_t i = 0; i < 20; i++) {
		struct tp_task_args a;
		tp_args_init(&a);
		tp_args_add_inout(&a, &t);
		tp_args_add_scalar(&a, i);
		int rc = tp_submit_aic(o, K_STEP_AIC, &a, NULL);
		if (rc == 0 && i == 10) {
			tp_args_init(&a);
			tp_args_add_input(&a, &t);
			rc = tp_submit_aiv(o, K_OOB_AIV, &a, bad);
		}
		if (rc)
			return rc;
	}
	atomic_store(&g_built, 1);
	return 0;
}

static void check_oob(int threads)
{
	tp_task_id bad = TP_TASK_ID_INVALID;
	struct tp_engine_result res;
	int rc = run(threads, kernels, K_COUNT, orch_oob, &bad, &res, NULL);
	printf("failure (%d sched): %s\n", threads, res.msg);
	assert_int_equal(rc, -EIO);
	assert_int_equal(res.failed_task, bad);
	assert_int_equal(res.failed_func, K_OOB_AIV);
	assert_non_null(strstr(res.msg, "OOB_KERNEL"));
	assert_int_equal(res.completed_tasks, res.total_tasks);
	assert_int_equal(res.total_tasks, 21);
}

static void test_oob_1sched(void **s) { (void)s; check_oob(1); }
static void test_oob_3sched(void **s) { (void)s; check_oob(3); }

static int orch_nop(struct tp_orch *o, void *arg)
{
	(void)o, (void)arg;
	atomic_store(&g_built, 1);
	return 0;
}

static void test_config(void **s)
{
	(void)s;
	struct tp_engine_result res;
	struct hook_counts hc;
	/* An empty graph launches and ends at once. */
	assert_int_equal(run(1, kernels, K_COUNT, orch_nop, NULL, &res, &hc), 0);
	assert_int_equal(res.total_tasks, 0);
	assert_int_equal(hc.built, 1);
	/* A bad mode and an absurd cap are configuration errors. */
	struct tp_device_config dcfg = { .block_dim = 2, .aicpu_threads = 1, .mem_bytes = 1u << 20 };
	struct tp_device *dev = tp_device_open(&dcfg);
	assert_non_null(dev);
	struct tp_engine_config cfg = { .dev = dev, .kernels = kernels, .num_kernels = K_COUNT,
					.runtime = (enum tp_runtime_mode)7 };
	assert_int_equal(tp_engine_run(&cfg, orch_nop, NULL, NULL), -EINVAL);
	cfg.runtime = TP_RUNTIME_HOST_BUILD_GRAPH;
	cfg.max_graph_tasks = 0x80000000u;
	assert_int_equal(tp_engine_run(&cfg, orch_nop, NULL, NULL), -EINVAL);
	/* TRB still needs an orchestrator thread. */
	cfg.runtime = TP_RUNTIME_TENSORMAP_RINGBUFFER;
	cfg.max_graph_tasks = 0;
	assert_int_equal(tp_engine_run(&cfg, orch_nop, NULL, NULL), -EINVAL);
	tp_device_close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_1sched),
		cmocka_unit_test(test_chain_3sched),
		cmocka_unit_test(test_chain_trb_deadlocks),
		cmocka_unit_test(test_wide_1sched),
		cmocka_unit_test(test_wide_3sched),
		cmocka_unit_test(test_dummy_1sched),
		cmocka_unit_test(test_dummy_3sched),
		cmocka_unit_test(test_dummy_a5_1sched),
		cmocka_unit_test(test_dummy_a5_3sched),
		cmocka_unit_test(test_pa_small1_1sched),
		cmocka_unit_test(test_pa_small1_3sched),
		cmocka_unit_test(test_pa_small1_trb),
		cmocka_unit_test(test_too_large_1sched),
		cmocka_unit_test(test_too_large_3sched),
		cmocka_unit_test(test_heap_full),
		cmocka_unit_test(test_oob_1sched),
		cmocka_unit_test(test_oob_3sched),
		cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
