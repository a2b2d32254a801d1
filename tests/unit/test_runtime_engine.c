/* SPDX-License-Identifier: MIT */
/* Unit tests of the runtime engine (runtime/engine.h, runtime/orch.h):
 * orchestrator + scheduler threads + AICore loop end to end on the
 * simulated device, with 1 and 3 scheduler threads: a 1000-task chain, a
 * 1 → 512 → 1 wide graph, AIC/AIV alternation, a dummy task, paged
 * attention CaseSmall1 against its golden, a failing kernel that fails the
 * run with task id + function name and does not hang, a device thread that
 * cannot be created (the run fails at once, in both runtime modes). */
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "examples/paged_attention/pa_golden.h"
#include "examples/paged_attention/pa_callable.h"
#include "examples/paged_attention/pa_inputs.h"
#include "examples/paged_attention/pa_kernels.h"
#include "platform/device.h"
#include "platform/tile/core_ctx.h"
#include "runtime/engine.h"
#include "runtime/orch.h"
#include "taskprof/taskprof.h"

/* ---- test kernels ----------------------------------------------------- */

static uint32_t *tile_u32(int64_t arg)
{
	const struct tp_tile *t = (const struct tp_tile *)(intptr_t)arg;
	return (uint32_t *)(t->buf + t->offset);
}

static enum tp_core_type current_type(void)
{
	return tp_core_ctx_current()->core_type;
}

/* Per-step record of the core type a chain step ran on. */
static _Atomic int step_type[4096];

/* args: INOUT x, scalar i. x = x * 31 + i; records its core type. */
static void k_step(int64_t *args)
{
	uint32_t *x = tile_u32(args[0]);
	uint32_t i = (uint32_t)args[1];
	*x = *x * 31u + i;
	if (i < 4096)
		atomic_store(&step_type[i], (int)current_type() + 1);
}

/* args: OUTPUT/INOUT y, scalar v. y = v. */
static void k_set(int64_t *args)
{
	*tile_u32(args[0]) = (uint32_t)args[1];
}

/* args: IN x, INOUT y (one element), scalar i. y = x + i. */
static void k_add(int64_t *args)
{
	*tile_u32(args[1]) = *tile_u32(args[0]) + (uint32_t)args[2];
}

/* args: IN acc [n], OUT sum [1]. */
static void k_sum(int64_t *args)
{
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
	src.rows = 1000; /* x holds 4 elements */
	if (tp_local_tile(&dst, TP_MEM_UB, (enum tp_dtype)src.dtype, 1000, src.cols))
		return;
	tp_copy_in(&dst, &src);
}

/* MIX parts: args INOUT x [4] (uint32), scalar v. Each part writes its
 * own element and the cluster it ran in. */
static void k_mix_c(int64_t *args)
{
	uint32_t *x = tile_u32(args[0]);
	x[0] = (uint32_t)args[1];
	x[2] = (uint32_t)tp_core_ctx_current()->core_id;
}
static void k_mix_v(int64_t *args)
{
	uint32_t *x = tile_u32(args[0]);
	x[1] = (uint32_t)args[1] + 1;
	x[3] = (uint32_t)tp_core_ctx_current()->core_id;
}

enum { K_STEP_AIC, K_STEP_AIV, K_SET_AIC, K_ADD_AIV, K_SUM_AIC, K_OOB_AIV, K_MIX_C, K_MIX_V, K_COUNT };

static const struct tp_kernel_entry kernels[K_COUNT] = {
	[K_STEP_AIC] = { k_step, TP_CORE_AIC, "STEP_C" },
	[K_STEP_AIV] = { k_step, TP_CORE_AIV, "STEP_V" },
	[K_SET_AIC] = { k_set, TP_CORE_AIC, "SET" },
	[K_ADD_AIV] = { k_add, TP_CORE_AIV, "ADD" },
	[K_SUM_AIC] = { k_sum, TP_CORE_AIC, "SUM" },
	[K_OOB_AIV] = { k_oob, TP_CORE_AIV, "OOB_KERNEL" },
	[K_MIX_C] = { k_mix_c, TP_CORE_AIC, "MIX_C" },
	[K_MIX_V] = { k_mix_v, TP_CORE_AIV, "MIX_V" },
};

/* ---- harness ---------------------------------------------------------- */

static struct tp_device *open_dev(int aicpu_threads)
{
	struct tp_device_config cfg = {
		.block_dim = 8,
		.aicpu_threads = aicpu_threads,
		.mem_bytes = 16u << 20,
	};
	struct tp_device *dev = tp_device_open(&cfg);
	if (!dev)
		printf("open: %s\n", tp_last_error());
	assert_non_null(dev);
	return dev;
}

struct hook_counts {
	_Atomic uint64_t dispatch, fin, phases[TP_PHASE_COUNT], windows, submits, dummies;
};

static void h_phase(void *ud, int thread, enum tp_sched_phase ph, uint64_t s, uint64_t e,
		    uint64_t it, uint32_t n)
{
	struct hook_counts *h = ud;
	(void)thread, (void)it;
	assert_true(e >= s);
	assert_true(n > 0);
	atomic_fetch_add(&h->phases[ph], 1);
}
static void h_dispatch(void *ud, int th, int core, tp_task_id t, int f, uint32_t tok,
		       uint64_t ts)
{
	(void)th, (void)core, (void)t, (void)f, (void)tok, (void)ts;
	atomic_fetch_add(&((struct hook_counts *)ud)->dispatch, 1);
}
/* Whether run() asks for the dispatch / finish times (hooks.task_times). */
static bool g_task_times = true;

static void h_fin(void *ud, int th, int core, tp_task_id t, int f, uint32_t tok,
		  uint64_t d, uint64_t fin)
{
	(void)th, (void)core, (void)t, (void)f, (void)tok;
	if (g_task_times) {
		assert_true(d > 0);
		assert_true(fin >= d);
	} else {
		/* not asked for: neither stamped */
		assert_int_equal(d, 0);
		assert_int_equal(fin, 0);
	}
	atomic_fetch_add(&((struct hook_counts *)ud)->fin, 1);
}
static void h_dummy(void *ud, int th, tp_task_id t, uint64_t ts)
{
	(void)th, (void)t, (void)ts;
	atomic_fetch_add(&((struct hook_counts *)ud)->dummies, 1);
}
static void h_window(void *ud, int th, uint64_t s, uint64_t e)
{
	(void)th;
	assert_true(e >= s);
	atomic_fetch_add(&((struct hook_counts *)ud)->windows, 1);
}
static void h_submit(void *ud, tp_task_id t, uint64_t idx, uint64_t s, uint64_t e)
{
	(void)t, (void)idx;
	assert_true(e >= s);
	atomic_fetch_add(&((struct hook_counts *)ud)->submits, 1);
}

static uint32_t g_window = 2048;
static enum tp_runtime_mode g_runtime = TP_RUNTIME_TENSORMAP_RINGBUFFER;

static int run(int aicpu_threads, const struct tp_kernel_entry *k, int nk, tp_orch_fn fn,
	       void *arg, struct tp_engine_result *res, struct hook_counts *hc)
{
	struct tp_device *dev = open_dev(aicpu_threads);
	struct tp_sched_hooks hooks = {
		.on_phase = h_phase,
		.on_dispatch = h_dispatch,
		.on_fin = h_fin,
		.on_dummy = h_dummy,
		.on_sched_window = h_window,
		.on_orch_submit = h_submit,
		.task_times = g_task_times,
		.ud = hc,
	};
	struct tp_engine_config cfg = {
		.dev = dev,
		.kernels = k,
		.num_kernels = nk,
		.ring_window = g_window,
		.ring_heap = 4u << 20,
		.hooks = hc ? &hooks : NULL,
		.runtime = g_runtime,
	};
	alarm(60); /* a hang fails the test instead of blocking ctest */
	int rc = tp_engine_run(&cfg, fn, arg, res);
	alarm(0);
	tp_device_close(dev);
	return rc;
}

static void u32_tensor(struct tp_tensor *t, uint32_t *mem, uint32_t n)
{
	uint32_t shape[1] = { n };
	assert_int_equal(tp_tensor_make_contiguous(t, (uint64_t)(uintptr_t)mem, TP_INT32, 1,
						   shape), 0);
}

/* ---- chain and alternation --------------------------------------------- */

struct chain {
	uint32_t n;
	int mode; /* 0: AIV only, 1: alternate AIC/AIV */
	uint32_t x;
};

static int orch_chain(struct tp_orch *o, void *arg)
{
	struct chain *c = arg;
	struct tp_tensor x;
	u32_tensor(&x, &c->x, 1);
	for (uint32_t i = 0; i < c->n; i++) {
		struct tp_task_args a;
		tp_args_init(&a);
		tp_args_add_inout(&a, &x);
		tp_args_add_scalar(&a, i);
		int f = c->mode == 1 && (i & 1) == 0 ? K_STEP_AIC : K_STEP_AIV;
		/* mode 2: every task in its own scope (ring 1), so slots are
		 * reclaimed and reused through a small window. */
		if (c->mode == 2 && tp_scope_begin(o))
			return -EINVAL;
		int rc = f == K_STEP_AIC ? tp_submit_aic(o, f, &a, NULL)
					 : tp_submit_aiv(o, f, &a, NULL);
		if (rc)
			return rc;
		if (c->mode == 2 && tp_scope_end(o))
			return -EINVAL;
	}
	return 0;
}

static void check_chain(int threads, uint32_t n, int mode)
{
	struct chain c = { .n = n, .mode = mode, .x = 7 };
	struct tp_engine_result res;
	struct hook_counts hc;
	memset(&hc, 0, sizeof(hc));
	for (uint32_t i = 0; i < n && i < 4096; i++)
		atomic_store(&step_type[i], 0);
	int rc = run(threads, kernels, K_COUNT, orch_chain, &c, &res, &hc);
	g_window = 2048;
	if (rc)
		printf("run: %s\n", res.msg);
	assert_int_equal(rc, 0);
	uint32_t want = 7;
	for (uint32_t i = 0; i < n; i++)
		want = want * 31u + i;
	assert_int_equal(c.x, want);
	assert_int_equal(res.total_tasks, n);
	assert_int_equal(res.completed_tasks, n);
	assert_int_equal(res.dispatched_subtasks, n);
	assert_int_equal(res.max_running_per_core, 1);
	assert_int_equal(hc.dispatch, n);
	assert_int_equal(hc.fin, n);
	assert_int_equal(hc.submits, n);
	assert_int_equal(hc.windows, threads - 1);
	assert_true(hc.phases[TP_PHASE_DISPATCH] > 0);
	assert_true(hc.phases[TP_PHASE_COMPLETE] > 0);
	for (uint32_t i = 0; i < n && i < 4096; i++) {
		int want_t = (mode == 1 && (i & 1) == 0 ? TP_CORE_AIC : TP_CORE_AIV) + 1;
		assert_int_equal(atomic_load(&step_type[i]), want_t);
	}
}

static void test_chain_1000_1sched(void **s) { (void)s; check_chain(2, 1000, 0); }
static void test_chain_1000_3sched(void **s) { (void)s; check_chain(4, 1000, 0); }
/* 3000 tasks through a 64-slot window: reclaim, reuse, back-pressure. */
static void test_ring_reuse_1sched(void **s) { (void)s; g_window = 64; check_chain(2, 3000, 2); }
static void test_ring_reuse_3sched(void **s) { (void)s; g_window = 64; check_chain(4, 3000, 2); }
static void test_alternate_1sched(void **s) { (void)s; check_chain(2, 300, 1); }
static void test_alternate_3sched(void **s) { (void)s; check_chain(4, 300, 1); }

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
	return tp_submit_aic(o, K_SUM_AIC, &a, NULL);
}

static void check_wide(int threads)
{
	struct wide *w = calloc(1, sizeof(*w));
	struct tp_engine_result res;
	assert_non_null(w);
	int rc = run(threads, kernels, K_COUNT, orch_wide, w, &res, NULL);
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
	assert_int_equal(res.completed_tasks, WIDE + 2);
	free(w);
}

static void test_wide_1sched(void **s) { (void)s; check_wide(2); }
/* A run whose hooks do not ask for task times gets none (a PMU-only or
 * swimlane level-1 run stamps no dispatch / finish). */
static void test_wide_no_task_times(void **s)
{
	(void)s;
	g_task_times = false;
	check_wide(4);
	g_task_times = true;
}
static void test_wide_3sched(void **s) { (void)s; check_wide(4); }

/* ---- dummy task and alloc_tensors -------------------------------------- */

struct dummy_case {
	uint32_t out;
};

/* A (alloc_tensors t) → SET t = 5 → DUMMY (INOUT t) → ADD out = t + 3. */
static int orch_dummy(struct tp_orch *o, void *arg)
{
	struct dummy_case *d = arg;
	struct tp_tensor t, out;
	struct tp_tensor_create ci = { .dtype = TP_INT32, .ndims = 1, .shapes = { 1 } };
	struct tp_task_args a;
	int rc;
	u32_tensor(&out, &d->out, 1);
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
	tp_task_id did;
	if ((rc = tp_submit_dummy(o, &a, &did)))
		return rc;
	assert_int_equal(tp_task_id_ring(did), 1);
	tp_args_init(&a);
	tp_args_add_input(&a, &t);
	tp_args_add_inout(&a, &out);
	tp_args_add_scalar(&a, 3);
	if ((rc = tp_submit_aiv(o, K_ADD_AIV, &a, NULL)))
		return rc;
	return tp_scope_end(o);
}

static void check_dummy(int threads)
{
	struct dummy_case d = { 0 };
	struct tp_engine_result res;
	struct hook_counts hc;
	memset(&hc, 0, sizeof(hc));
	int rc = run(threads, kernels, K_COUNT, orch_dummy, &d, &res, &hc);
	if (rc)
		printf("run: %s\n", res.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(d.out, 8);
	assert_int_equal(res.total_tasks, 4);
	assert_int_equal(res.completed_tasks, 4);
	assert_int_equal(res.dummy_tasks, 1);
	assert_int_equal(res.inline_tasks, 1);
	assert_int_equal(res.dispatched_subtasks, 2);
	assert_int_equal(hc.dummies, 1);
	assert_int_equal(hc.phases[TP_PHASE_DUMMY], 1);
}

static void test_dummy_1sched(void **s) { (void)s; check_dummy(2); }
static void test_dummy_3sched(void **s) { (void)s; check_dummy(4); }

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

static void check_pa(int threads)
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
	int rc = run(threads, pa_table, PA_FUNC_COUNT, orch_pa, &in, &res, NULL);
	if (rc)
		printf("run: %s\n", res.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(res.total_tasks, pa_case_task_count(c));
	assert_int_equal(res.total_tasks, 13);
	assert_int_equal(res.inline_tasks, 1);
	assert_int_equal(res.completed_tasks, 13);
	struct pa_cmp cmp;
	char line[256];
	bool ok = pa_compare(want, in.out, n, PA_RTOL, PA_ATOL, &cmp);
	pa_cmp_format(&cmp, &in.d, PA_RTOL, PA_ATOL, line, sizeof(line));
	printf("CaseSmall1 (%d sched): %s\n", threads - 1, line);
	assert_true(ok);
	free(want);
	pa_inputs_destroy(&in);
}

static void test_pa_small1_1sched(void **s) { (void)s; check_pa(2); }
static void test_pa_small1_3sched(void **s) { (void)s; check_pa(4); }

/* ---- MIX: AIC + AIV0 of one task in one cluster ------------------------ */

#define NMIX 16

static int orch_mix(struct tp_orch *o, void *arg)
{
	uint32_t (*x)[4] = arg;
	for (uint32_t i = 0; i < NMIX; i++) {
		struct tp_tensor t;
		struct tp_task_args a;
		u32_tensor(&t, x[i], 4);
		tp_args_init(&a);
		tp_args_add_inout(&a, &t);
		tp_args_add_scalar(&a, 100 + i);
		const int32_t k[3] = { K_MIX_C, K_MIX_V, TP_KERNEL_NONE };
		int rc = tp_submit(o, k, &a, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

static void check_mix(int threads)
{
	uint32_t x[NMIX][4];
	memset(x, 0xff, sizeof(x));
	struct tp_engine_result res;
	int rc = run(threads, kernels, K_COUNT, orch_mix, x, &res, NULL);
	if (rc)
		printf("run: %s\n", res.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(res.dispatched_subtasks, 2 * NMIX);
	for (int i = 0; i < NMIX; i++) {
		assert_int_equal(x[i][0], 100 + i);
		assert_int_equal(x[i][1], 101 + i);
		assert_int_equal(tp_topo_core_type(8, (int)x[i][2]), TP_CORE_AIC);
		assert_int_equal(tp_topo_slot(8, (int)x[i][3]), TP_SLOT_AIV0);
		assert_int_equal(tp_topo_cluster(8, (int)x[i][2]),
				 tp_topo_cluster(8, (int)x[i][3]));
	}
}

static void test_mix_1sched(void **s) { (void)s; check_mix(2); }
static void test_mix_3sched(void **s) { (void)s; check_mix(4); }

/* ---- a failing kernel --------------------------------------------------- */

struct oob_case {
	uint32_t x[4];
	tp_task_id bad;
	uint32_t after;
};

/* 20-step chain on x[0]; step 10 is followed by the OOB kernel reading x;
 * everything after it still has to drain. */
static int orch_oob(struct tp_orch *o, void *arg)
{
	struct oob_case *c = arg;
	struct tp_tensor x;
	int rc;
	u32_tensor(&x, c->x, 4);
	for (uint32_t i = 0; i < 20; i++) {
		struct tp_task_args a;
		tp_args_init(&a);
		tp_args_add_inout(&a, &x);
		tp_args_add_scalar(&a, i);
		rc = tp_submit_aic(o, K_STEP_AIC, &a, NULL);
		if (rc == 0 && i == 10) {
			tp_args_init(&a);
			tp_args_add_input(&a, &x);
			rc = tp_submit_aiv(o, K_OOB_AIV, &a, &c->bad);
		}
		if (rc)
			return rc; /* -ECANCELED once the run failed */
		c->after = i;
	}
	return 0;
}

static void check_oob(int threads)
{
	struct oob_case c;
	memset(&c, 0, sizeof(c));
	struct tp_engine_result res;
	int rc = run(threads, kernels, K_COUNT, orch_oob, &c, &res, NULL);
	printf("failure (%d sched): %s\n", threads - 1, res.msg);
	assert_int_equal(rc, -EIO);
	assert_int_equal(res.failed_task, c.bad);
	assert_int_equal(res.failed_func, K_OOB_AIV);
	assert_non_null(strstr(res.msg, "OOB_KERNEL"));
	char idbuf[32];
	snprintf(idbuf, sizeof(idbuf), "0x%llx", (unsigned long long)c.bad);
	assert_non_null(strstr(res.msg, idbuf));
	assert_non_null(strstr(tp_last_error(), "OOB_KERNEL"));
	assert_int_equal(res.completed_tasks, res.total_tasks);
}

static void test_oob_fails_1sched(void **s) { (void)s; check_oob(2); }
static void test_oob_fails_3sched(void **s) { (void)s; check_oob(4); }

/* ---- a submit that fails names its reason -------------------------------- */

/* An explicit dependency on a task not yet submitted: the submit fails and
 * the run's message carries the step's reason, not only its code. */
static int orch_future_dep(struct tp_orch *o, void *arg)
{
	(void)arg;
	struct tp_task_args a;
	tp_args_init(&a);
	tp_task_id later = 5;
	int rc = tp_args_set_dependencies(&a, &later, 1);
	if (rc)
		return rc;
	return tp_submit_aiv(o, K_ADD_AIV, &a, NULL);
}

static void test_submit_failure_reason(void **s)
{
	(void)s;
	struct tp_engine_result res;
	int rc = run(2, kernels, K_COUNT, orch_future_dep, NULL, &res, NULL);
	printf("failure: %s\n", res.msg);
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(res.msg, "runtime: submit of task 0x0 failed: runtime: explicit "
					"dependency 0x5 of task 0x0 names no earlier task"));
}

/* A tensor whose owner_task_id names a task never submitted in the run
 * (a zero-filled struct names task 0 of ring 0 while ring 0 is idle; under
 * host_build_graph a ring the runtime lacks): the submit fails with the
 * reason. It used to wait for ever on a producer that never ran (nothing
 * running, so the stall watchdog never timed it), or, with a ring
 * without slots, to crash. */
static int orch_phantom_owner(struct tp_orch *o, void *arg)
{
	tp_task_id owner = *(const tp_task_id *)arg;
	uint32_t x[4] = { 0 };
	struct tp_tensor t;
	u32_tensor(&t, x, 4);
	t.owner_task_id = owner;
	struct tp_task_args a;
	tp_args_init(&a);
	tp_args_add_input(&a, &t);
	/* the scope puts the task in ring 1, so ring 0 stays idle */
	int rc = tp_scope_begin(o);
	if (rc)
		return rc;
	rc = tp_submit_aiv(o, K_ADD_AIV, &a, NULL);
	int erc = tp_scope_end(o);
	return rc ? rc : erc;
}

static void test_phantom_owner(void **s)
{
	(void)s;
	const struct {
		enum tp_runtime_mode mode;
		tp_task_id owner;
		const char *want;
	} cases[] = {
		{ TP_RUNTIME_TENSORMAP_RINGBUFFER, 0,
		  "tensor arg 0: its owner_task_id 0x0 (ring 0, local 0) names no task "
		  "submitted in this run" },
		{ TP_RUNTIME_TENSORMAP_RINGBUFFER, tp_task_id_make(1, 50),
		  "its owner_task_id 0x100000032 (ring 1, local 50) names no task" },
		{ TP_RUNTIME_HOST_BUILD_GRAPH, tp_task_id_make(1, 0),
		  "its owner_task_id 0x100000000 (ring 1, local 0) names no task" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		g_runtime = cases[i].mode;
		struct tp_engine_result res;
		uint64_t t0 = tp_now_ns();
		int rc = run(4, kernels, K_COUNT, orch_phantom_owner, (void *)&cases[i].owner,
			     &res, NULL);
		printf("phantom owner 0x%llx: rc %d in %.1f ms: %s\n",
		       (unsigned long long)cases[i].owner, rc, (double)(tp_now_ns() - t0) / 1e6,
		       res.msg);
		assert_int_equal(rc, -EINVAL);
		assert_non_null(strstr(res.msg, cases[i].want));
		assert_int_equal(res.completed_tasks, 0);
	}
	g_runtime = TP_RUNTIME_TENSORMAP_RINGBUFFER;
}

/* ---- the API belongs to the orchestrator thread --------------------------- */

/* A thread the orchestration starts calls the API: each call is refused
 * with -EPERM (two threads' submits once corrupted the orchestrator's
 * state: lost tasks, crashes); the orchestration's own submit works. An
 * extra tp_scope_end is refused too (it once closed the executor's outer
 * scope and returned 0). After the run, a call on the saved orchestrator
 * is refused without touching it. */
struct side_call {
	struct tp_orch *o;
	int submit_rc, scope_rc, alloc_rc;
	char msg[300];
};

static void *side_thread(void *arg)
{
	struct side_call *c = arg;
	struct tp_task_args a;
	tp_args_init(&a);
	c->submit_rc = tp_submit_aiv(c->o, K_ADD_AIV, &a, NULL);
	snprintf(c->msg, sizeof(c->msg), "%s", tp_last_error());
	c->scope_rc = tp_scope_begin(c->o);
	struct tp_tensor_create ci = { .dtype = TP_FP32, .ndims = 1, .shapes = { 16 } };
	struct tp_tensor t;
	c->alloc_rc = tp_alloc_tensors(c->o, 1, &ci, &t, NULL);
	return NULL;
}

static struct tp_orch *g_saved_orch;
static int g_extra_end_rc;

static int orch_side_thread(struct tp_orch *o, void *arg)
{
	struct side_call *c = arg;
	c->o = o;
	g_saved_orch = o;
	pthread_t th;
	if (pthread_create(&th, NULL, side_thread, c))
		return -EAGAIN;
	pthread_join(th, NULL);
	g_extra_end_rc = tp_scope_end(o); /* no scope of ours is open */
	struct tp_task_args a;
	tp_args_init(&a);
	return tp_submit_dummy(o, &a, NULL);
}

static void test_api_other_thread(void **s)
{
	(void)s;
	struct side_call c = { 0 };
	struct tp_engine_result res;
	int rc = run(2, kernels, K_COUNT, orch_side_thread, &c, &res, NULL);
	printf("side thread: submit %d scope %d alloc %d (%s); extra scope end %d\n",
	       c.submit_rc, c.scope_rc, c.alloc_rc, c.msg, g_extra_end_rc);
	assert_int_equal(rc, 0);
	assert_int_equal(c.submit_rc, -EPERM);
	assert_int_equal(c.scope_rc, -EPERM);
	assert_int_equal(c.alloc_rc, -EPERM);
	assert_non_null(strstr(c.msg, "tp_submit called from a thread that is not the "
				      "orchestrator's"));
	assert_int_equal(g_extra_end_rc, -EINVAL);
	assert_int_equal(res.completed_tasks, 1);
	/* After the run: refused, nothing dereferenced. */
	struct tp_task_args a;
	tp_args_init(&a);
	assert_int_equal(tp_submit_dummy(g_saved_orch, &a, NULL), -EPERM);
}

/* Task args never passed through tp_args_init() (their error field holds
 * a fill pattern) are refused with a message that says so, not "Unknown
 * error -1515870811"; a predicate element outside its view (the next row
 * of a one-row view) is refused, not read. */
static uint32_t g_pred_mem[4 * 8];
static int g_uninit_rc, g_pred_rc, g_col_out_rc;
static char g_uninit_msg[300], g_pred_msg[300];

static int orch_bad_args(struct tp_orch *o, void *arg)
{
	(void)arg;
	struct tp_task_args a;
	memset(&a, 0xA5, sizeof(a));
	g_uninit_rc = tp_submit_dummy(o, &a, NULL);
	snprintf(g_uninit_msg, sizeof(g_uninit_msg), "%s", tp_last_error());
	struct tp_tensor m, row;
	uint32_t sh[2] = { 4, 8 }, one[2] = { 1, 8 }, off[2] = { 1, 0 };
	int rc = tp_tensor_make_contiguous(&m, (uint64_t)(uintptr_t)g_pred_mem, TP_INT32, 2, sh);
	if (rc || (rc = tp_tensor_view(&m, one, off, &row)))
		return rc;
	tp_args_init(&a);
	g_pred_rc = tp_args_set_predicate(&a, &row, 8, TP_PRED_EQ, 0);
	snprintf(g_pred_msg, sizeof(g_pred_msg), "%s", tp_last_error());
	tp_args_init(&a);
	if ((rc = tp_args_set_predicate(&a, &row, 7, TP_PRED_EQ, 0))) /* the last: fine */
		return rc;
	/* A column view [4, 1] at column 5: elements count buffer elements
	 * from its start, so 8 is its second row (inside), 1 is column 6. */
	struct tp_tensor col;
	uint32_t csh[2] = { 4, 1 }, coff[2] = { 0, 5 };
	if ((rc = tp_tensor_view(&m, csh, coff, &col)))
		return rc;
	tp_args_init(&a);
	if ((rc = tp_args_set_predicate(&a, &col, 8, TP_PRED_EQ, 0)))
		return rc;
	tp_args_init(&a);
	g_col_out_rc = tp_args_set_predicate(&a, &col, 1, TP_PRED_EQ, 0);
	return 0;
}

static void test_bad_task_args(void **s)
{
	(void)s;
	struct tp_engine_result res;
	int rc = run(2, kernels, K_COUNT, orch_bad_args, NULL, &res, NULL);
	printf("uninit: %d %s\npredicate: %d %s\n", g_uninit_rc, g_uninit_msg, g_pred_rc,
	       g_pred_msg);
	assert_int_equal(rc, 0);
	assert_int_equal(g_uninit_rc, -EINVAL);
	assert_non_null(strstr(g_uninit_msg, "task args not initialised"));
	assert_int_equal(g_pred_rc, -EINVAL);
	assert_non_null(strstr(g_pred_msg, "predicate element 8 is outside its tensor view of "
					   "8 elements"));
	assert_int_equal(g_col_out_rc, -EINVAL);
}

/* ---- a device thread that cannot be created ----------------------------- */

/* The launch's nth thread creation fails (tp_device_test_fail_thread):
 * the first and the last AICore, the first scheduler, the last AICPU that
 * runs the program (the orchestrator under tensormap_and_ringbuffer), an
 * AICPU launch thread past the affinity gate. The run used to hang: the
 * started schedulers waited for an orchestrator (or peers) that was never
 * created. Now it fails with -EAGAIN at once, nothing ran, and the next
 * run works; the same under host_build_graph. */
static void test_thread_failure(void **s)
{
	(void)s;
	/* block_dim 8: 24 AICores; a2a3sim launches 6 AICPU threads, 4 run */
	const int nths[] = { 1, 24, 25, 28, 30 };
	const enum tp_runtime_mode modes[] = { TP_RUNTIME_TENSORMAP_RINGBUFFER,
					       TP_RUNTIME_HOST_BUILD_GRAPH };
	for (size_t m = 0; m < 2; m++) {
		g_runtime = modes[m];
		for (size_t k = 0; k < sizeof(nths) / sizeof(nths[0]); k++) {
			struct chain c = { .n = 50, .mode = 0, .x = 7 };
			struct tp_engine_result res;
			tp_device_test_fail_thread(nths[k], EAGAIN);
			uint64_t t0 = tp_now_ns();
			int rc = run(4, kernels, K_COUNT, orch_chain, &c, &res, NULL);
			uint64_t took = tp_now_ns() - t0;
			printf("%s, creation %d fails: rc %d in %.1f ms: %s\n",
			       m ? "host_build_graph" : "tensormap_and_ringbuffer", nths[k], rc,
			       (double)took / 1e6, tp_last_error());
			assert_int_equal(rc, -EAGAIN);
			assert_int_equal(res.rc, -EAGAIN);
			assert_true(took < 10ull * 1000000000ull);
			assert_non_null(strstr(tp_last_error(), "cannot create"));
			assert_non_null(strstr(tp_last_error(), "launch aborted"));
			/* no task ran; host_build_graph built its graph before */
			assert_int_equal(c.x, 7);
			assert_int_equal(res.completed_tasks, 0);
			assert_int_equal(res.dispatched_subtasks, 0);
			assert_int_equal(res.total_tasks, m ? c.n : 0);
			/* the next run (a new device) works */
			c.x = 7;
			memset(&res, 0, sizeof(res));
			rc = run(4, kernels, K_COUNT, orch_chain, &c, &res, NULL);
			assert_int_equal(rc, 0);
			assert_int_equal(res.completed_tasks, c.n);
			uint32_t want = 7;
			for (uint32_t i = 0; i < c.n; i++)
				want = want * 31u + i;
			assert_int_equal(c.x, want);
		}
	}
	g_runtime = TP_RUNTIME_TENSORMAP_RINGBUFFER;
}

/* ---- configuration errors ----------------------------------------------- */

static int orch_nop(struct tp_orch *o, void *arg)
{
	(void)o, (void)arg;
	return 0;
}

static int orch_bad_func(struct tp_orch *o, void *arg)
{
	(void)arg;
	struct tp_task_args a;
	tp_args_init(&a);
	/* An AIV kernel in the AIC slot. */
	return tp_submit_aic(o, K_ADD_AIV, &a, NULL);
}

/* Negative func_ids: arg selects the submit; each must fail with
 * -EINVAL before any task exists (a -5 once made a dummy task). */
static int orch_negative_func(struct tp_orch *o, void *arg)
{
	struct tp_task_args a;
	tp_args_init(&a);
	switch ((int)(intptr_t)arg) {
	case 0:
		return tp_submit_aiv(o, -5, &a, NULL);
	case 1:
		return tp_submit_aic(o, TP_KERNEL_NONE, &a, NULL);
	default: {
		const int32_t k[3] = { TP_KERNEL_NONE, -7, TP_KERNEL_NONE };
		return tp_submit(o, k, &a, NULL);
	}
	}
}

static int orch_positive(struct tp_orch *o, void *arg)
{
	(void)o;
	return arg ? (int)(intptr_t)arg : 7;
}

static void test_config_errors(void **s)
{
	(void)s;
	struct tp_device *dev = open_dev(1);
	struct tp_engine_config cfg = { .dev = dev, .kernels = kernels, .num_kernels = K_COUNT };
	assert_int_equal(tp_engine_run(&cfg, orch_nop, NULL, NULL), -EINVAL);
	tp_device_close(dev);

	struct tp_engine_result res;
	assert_int_equal(run(2, kernels, K_COUNT, orch_nop, NULL, &res, NULL), 0);
	assert_int_equal(res.total_tasks, 0);
	assert_int_equal(run(2, kernels, K_COUNT, orch_bad_func, NULL, &res, NULL), -EINVAL);
	assert_non_null(strstr(res.msg, "AIV kernel"));
	static const char *const want[] = {
		"func_id -5 out of range (8 kernels; tp_submit_aiv names a kernel",
		"func_id -1 out of range (8 kernels; tp_submit_aic names a kernel",
		"func_id -7 out of range",
	};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(run(2, kernels, K_COUNT, orch_negative_func, (void *)(intptr_t)i,
				     &res, NULL),
				 -EINVAL);
		assert_non_null(strstr(res.msg, want[i]));
		assert_int_equal(res.total_tasks, 0);
	}
	/* A positive return fails the run, and is not read as an errno. */
	assert_int_equal(run(2, kernels, K_COUNT, orch_positive, NULL, &res, NULL), -EINVAL);
	assert_string_equal(res.msg, "runtime: orchestration returned 7 (expected 0 or a "
				     "negative errno)");
	/* -ECANCELED of its own (no submit failed): a failure, not a pass. */
	assert_int_equal(run(2, kernels, K_COUNT, orch_positive, (void *)(intptr_t)-ECANCELED,
			     &res, NULL),
			 -ECANCELED);
	assert_string_equal(res.msg, "runtime: orchestration failed (-125, -ECANCELED, though "
				     "the run had not failed)");
	assert_int_equal(run(2, kernels, K_COUNT, orch_positive, (void *)(intptr_t)INT_MIN,
			     &res, NULL),
			 INT_MIN);
	assert_string_equal(res.msg, "runtime: orchestration failed (-2147483648): not an errno");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_1000_1sched),
		cmocka_unit_test(test_chain_1000_3sched),
		cmocka_unit_test(test_ring_reuse_1sched),
		cmocka_unit_test(test_ring_reuse_3sched),
		cmocka_unit_test(test_alternate_1sched),
		cmocka_unit_test(test_alternate_3sched),
		cmocka_unit_test(test_wide_1sched),
		cmocka_unit_test(test_wide_3sched),
		cmocka_unit_test(test_wide_no_task_times),
		cmocka_unit_test(test_dummy_1sched),
		cmocka_unit_test(test_dummy_3sched),
		cmocka_unit_test(test_pa_small1_1sched),
		cmocka_unit_test(test_pa_small1_3sched),
		cmocka_unit_test(test_mix_1sched),
		cmocka_unit_test(test_mix_3sched),
		cmocka_unit_test(test_oob_fails_1sched),
		cmocka_unit_test(test_oob_fails_3sched),
		cmocka_unit_test(test_submit_failure_reason),
		cmocka_unit_test(test_phantom_owner),
		cmocka_unit_test(test_api_other_thread),
		cmocka_unit_test(test_bad_task_args),
		cmocka_unit_test(test_thread_failure),
		cmocka_unit_test(test_config_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
