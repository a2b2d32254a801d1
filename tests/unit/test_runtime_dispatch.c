/* SPDX-License-Identifier: MIT */
/* Unit tests of dispatch in the runtime engine (runtime/engine.h), with 1
 * and 3 scheduler threads:
 *  - dual issue: a pending task is published only after the running one's
 *    ACK (checked in the hooks against the core's COND register), never two
 *    kernels executing on one core, results of a wide graph unchanged;
 *  - the single_issue switch: no pending task at all;
 *  - SPMD: 100 blocks on 24 cores (each block once, re-push observed), a
 *    MIX SPMD task with each block's AIC and AIV in one cluster;
 *  - predicated skip: predicate evaluated at the ready point, both values,
 *    consumers still run, on_predicated_skip called. */
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

#include "base/clock.h"
#include "base/error.h"
#include "platform/device.h"
#include "platform/regs.h"
#include "platform/tile/core_ctx.h"
#include "runtime/engine.h"
#include "runtime/orch.h"

#define MAX_CORES 64

/* ---- kernels ------------------------------------------------------------ */

static uint32_t *tile_u32(int64_t arg)
{
	const struct tp_tile *t = (const struct tp_tile *)(intptr_t)arg;
	return (uint32_t *)(t->buf + t->offset);
}

/* Kernels executing per core right now, and violations (> 1). */
static _Atomic int in_kernel[MAX_CORES];
static _Atomic int overlap_violations;

static void busy(uint64_t ns)
{
	int core = tp_core_ctx_current()->core_id;
	if (atomic_fetch_add(&in_kernel[core], 1) != 0)
		atomic_fetch_add(&overlap_violations, 1);
	/* Sleep, not spin: this machine has fewer CPUs than simulated
	 * cores, and the scheduler must get to see the ACKs. */
	usleep((useconds_t)(ns / 1000));
	atomic_fetch_sub(&in_kernel[core], 1);
}

/* Set by a test's orchestration once it submitted everything: SET waits
 * for it (bounded), so the consumers of SET become ready all at once. */
static _Atomic int g_gate = 1;

/* args: OUTPUT_EXISTING y, scalar v. y = v. */
static void k_set(int64_t *args)
{
	uint64_t t0 = tp_now_ns();
	while (!atomic_load(&g_gate) && tp_now_ns() - t0 < 5000000000ull)
		usleep(100);
	busy(1000);
	*tile_u32(args[0]) = (uint32_t)args[1];
}

/* args: IN x, INOUT y, scalar i. y = x + i (after ~50 us). */
static void k_add(int64_t *args)
{
	busy(300000);
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

/* SPMD: args INOUT hits [block_num], INOUT seen_num [1].
 * hits[block_idx] += 1; seen_num = block_num. */
static void k_block(int64_t *args)
{
	busy(20000);
	uint32_t b = tp_kernel_block_idx();
	__atomic_fetch_add(&tile_u32(args[0])[b], 1, __ATOMIC_RELAXED);
	__atomic_store_n(tile_u32(args[1]), tp_kernel_block_num(), __ATOMIC_RELAXED);
}

/* MIX SPMD parts: args INOUT x [blocks * 4]. Block b: AIC writes x[4b]
 * (count) and x[4b+2] (core), AIV x[4b+1] and x[4b+3]. */
static void k_mix_c(int64_t *args)
{
	busy(20000);
	uint32_t *x = tile_u32(args[0]) + 4 * tp_kernel_block_idx();
	x[0]++;
	x[2] = (uint32_t)tp_core_ctx_current()->core_id;
}
static void k_mix_v(int64_t *args)
{
	busy(20000);
	uint32_t *x = tile_u32(args[0]) + 4 * tp_kernel_block_idx();
	x[1]++;
	x[3] = (uint32_t)tp_core_ctx_current()->core_id;
}

enum { K_SET_AIC, K_ADD_AIV, K_SUM_AIC, K_BLOCK_AIV, K_BLOCK_AIC, K_MIX_C, K_MIX_V,
       K_COUNT };

static const struct tp_kernel_entry kernels[K_COUNT] = {
	[K_SET_AIC] = { k_set, TP_CORE_AIC, "SET" },
	[K_ADD_AIV] = { k_add, TP_CORE_AIV, "ADD" },
	[K_SUM_AIC] = { k_sum, TP_CORE_AIC, "SUM" },
	[K_BLOCK_AIV] = { k_block, TP_CORE_AIV, "BLOCK_V" },
	[K_BLOCK_AIC] = { k_block, TP_CORE_AIC, "BLOCK_C" },
	[K_MIX_C] = { k_mix_c, TP_CORE_AIC, "MIX_C" },
	[K_MIX_V] = { k_mix_v, TP_CORE_AIV, "MIX_V" },
};

/* ---- hooks: the token protocol as the device sees it ---------------------- */

static struct tp_device *g_dev;

struct probe {
	/* Per core: the last token published (0: none yet). Each core is
	 * owned by one scheduler thread, so only that thread touches it. */
	uint32_t last_tok[MAX_CORES];
	uint32_t last_fin[MAX_CORES];
	_Atomic uint64_t dispatch, fin, pending, skips, dummies;
	_Atomic uint64_t token_violations;   /* token written before the core
					      * took the previous one */
	_Atomic uint64_t pending_violations; /* pending without running ACK */
	_Atomic uint64_t fin_order_violations;
	_Atomic uint64_t per_task_dispatch;  /* dispatches of probe_task */
	tp_task_id probe_task;
};

static void h_dispatch(void *ud, int th, int core, tp_task_id t, int f, uint32_t tok,
		       uint64_t ts)
{
	struct probe *p = ud;
	(void)th, (void)f, (void)ts;
	uint32_t cond = tp_reg_read(g_dev, core, TP_REG_COND);
	/* The core must have ACKed (or FINed) every earlier token: COND
	 * carries the previous token, else DATA_MAIN_BASE would lose it. */
	if (p->last_tok[core] && (cond & TP_COND_TOKEN_MASK) != p->last_tok[core])
		atomic_fetch_add(&p->token_violations, 1);
	p->last_tok[core] = tok;
	if (t == p->probe_task)
		atomic_fetch_add(&p->per_task_dispatch, 1);
	atomic_fetch_add(&p->dispatch, 1);
}

static void h_pending(void *ud, int th, int core, tp_task_id t, uint32_t tok,
		      uint32_t running_token)
{
	struct probe *p = ud;
	(void)th, (void)t, (void)tok;
	uint32_t cond = tp_reg_read(g_dev, core, TP_REG_COND);
	if ((cond & TP_COND_TOKEN_MASK) != running_token)
		atomic_fetch_add(&p->pending_violations, 1);
	atomic_fetch_add(&p->pending, 1);
}

static void h_fin(void *ud, int th, int core, tp_task_id t, int f, uint32_t tok,
		  uint64_t d, uint64_t fin)
{
	struct probe *p = ud;
	(void)th, (void)t, (void)f, (void)d, (void)fin;
	if (p->last_fin[core] && tok <= p->last_fin[core])
		atomic_fetch_add(&p->fin_order_violations, 1);
	p->last_fin[core] = tok;
	atomic_fetch_add(&p->fin, 1);
}

static void h_skip(void *ud, int th, tp_task_id t, uint64_t ts)
{
	(void)th, (void)t, (void)ts;
	atomic_fetch_add(&((struct probe *)ud)->skips, 1);
}

static void h_dummy(void *ud, int th, tp_task_id t, uint64_t ts)
{
	(void)th, (void)t, (void)ts;
	atomic_fetch_add(&((struct probe *)ud)->dummies, 1);
}

static int run(int aicpu_threads, int block_dim, bool single_issue, tp_orch_fn fn, void *arg,
	       struct tp_engine_result *res, struct probe *p)
{
	struct tp_device_config dc = {
		.block_dim = block_dim,
		.aicpu_threads = aicpu_threads,
		.mem_bytes = 16u << 20,
	};
	g_dev = tp_device_open(&dc);
	if (!g_dev)
		printf("open: %s\n", tp_last_error());
	assert_non_null(g_dev);
	memset(p, 0, sizeof(*p));
	p->probe_task = TP_TASK_ID_INVALID;
	atomic_store(&overlap_violations, 0);
	struct tp_sched_hooks hooks = {
		.on_dispatch = h_dispatch,
		.on_fin = h_fin,
		.on_dummy = h_dummy,
		.on_pending_dispatch = h_pending,
		.on_predicated_skip = h_skip,
		.task_times = true, /* the checks below read the times */
		.ud = p,
	};
	struct tp_engine_config cfg = {
		.dev = g_dev,
		.kernels = kernels,
		.num_kernels = K_COUNT,
		.ring_window = 1024,
		.ring_heap = 4u << 20,
		.hooks = &hooks,
		.single_issue = single_issue,
	};
	alarm(120);
	int rc = tp_engine_run(&cfg, fn, arg, res);
	alarm(0);
	tp_device_close(g_dev);
	g_dev = NULL;
	if (rc)
		printf("run: %s\n", res->msg);
	assert_int_equal(atomic_load(&overlap_violations), 0);
	assert_int_equal(p->token_violations, 0);
	assert_int_equal(p->pending_violations, 0);
	assert_int_equal(p->fin_order_violations, 0);
	assert_true(res->max_running_per_core <= 1);
	return rc;
}

static void u32_tensor(struct tp_tensor *t, uint32_t *mem, uint32_t n)
{
	uint32_t shape[1] = { n };
	assert_int_equal(tp_tensor_make_contiguous(t, (uint64_t)(uintptr_t)mem, TP_INT32, 1,
						   shape), 0);
}

/* ---- dual issue / single issue on a wide graph ----------------------------- */

#define WIDE 96

struct wide {
	uint32_t acc[WIDE];
	uint32_t x, sum;
};

/* SET x = 1000 → WIDE × (acc[i] = x + i, ~50 us each) → SUM. */
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
	rc = tp_submit_aic(o, K_SUM_AIC, &a, NULL);
	atomic_store(&g_gate, 1);
	return rc;
}

static void check_issue(int threads, bool single)
{
	struct wide *w = calloc(1, sizeof(*w));
	struct tp_engine_result res;
	struct probe *p = calloc(1, sizeof(*p));
	assert_non_null(w);
	assert_non_null(p);
	/* 2 clusters: 4 AIV cores for 96 AIV tasks, all ready at once (the
	 * gate), so cores queue up. */
	atomic_store(&g_gate, 0);
	assert_int_equal(run(threads, 2, single, orch_wide, w, &res, p), 0);
	uint32_t want = 0;
	for (uint32_t i = 0; i < WIDE; i++) {
		assert_int_equal(w->acc[i], 1000 + i);
		want += 1000 + i;
	}
	assert_int_equal(w->sum, want);
	assert_int_equal(res.total_tasks, WIDE + 2);
	assert_int_equal(res.completed_tasks, WIDE + 2);
	assert_int_equal(res.dispatched_subtasks, WIDE + 2);
	assert_int_equal(p->dispatch, WIDE + 2);
	assert_int_equal(p->fin, WIDE + 2);
	assert_int_equal(res.pending_dispatches, p->pending);
	printf("%s issue, %d sched: %llu pending dispatches, max outstanding %llu\n",
	       single ? "single" : "dual", threads - 1,
	       (unsigned long long)res.pending_dispatches,
	       (unsigned long long)res.max_outstanding_per_core);
	if (single) {
		assert_int_equal(res.pending_dispatches, 0);
		assert_int_equal(res.max_outstanding_per_core, 1);
	} else {
		assert_true(res.pending_dispatches > 0);
		assert_int_equal(res.max_outstanding_per_core, 2);
	}
	free(w);
	free(p);
}

static void test_dual_issue_1sched(void **s) { (void)s; check_issue(2, false); }
static void test_dual_issue_3sched(void **s) { (void)s; check_issue(4, false); }
static void test_single_issue_1sched(void **s) { (void)s; check_issue(2, true); }
static void test_single_issue_3sched(void **s) { (void)s; check_issue(4, true); }

/* ---- SPMD ------------------------------------------------------------------ */

#define NBLK 100

struct spmd {
	uint32_t hits[NBLK];
	uint32_t seen_num, sum;
	int func;
	tp_task_id id;
};

/* One SPMD task of NBLK blocks, then SUM over its hits. */
static int orch_spmd(struct tp_orch *o, void *arg)
{
	struct spmd *c = arg;
	struct tp_tensor hits, seen, sum;
	struct tp_task_args a;
	int rc;
	u32_tensor(&hits, c->hits, NBLK);
	u32_tensor(&seen, &c->seen_num, 1);
	u32_tensor(&sum, &c->sum, 1);
	tp_args_init(&a);
	tp_args_add_inout(&a, &hits);
	tp_args_add_inout(&a, &seen);
	assert_int_equal(tp_args_set_block_num(&a, NBLK), 0);
	rc = c->func == K_BLOCK_AIC ? tp_submit_aic(o, K_BLOCK_AIC, &a, &c->id)
				    : tp_submit_aiv(o, K_BLOCK_AIV, &a, &c->id);
	if (rc)
		return rc;
	tp_args_init(&a);
	tp_args_add_input(&a, &hits);
	tp_args_add_output_existing(&a, &sum);
	return tp_submit_aic(o, K_SUM_AIC, &a, NULL);
}

/* The probe counts dispatches of the SPMD task: its id is the first
 * task of ring 0. */
static void check_spmd(int threads, int func, bool single)
{
	struct spmd c;
	memset(&c, 0, sizeof(c));
	c.func = func;
	struct tp_engine_result res;
	struct probe *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	/* 8 clusters: 8 AIC + 16 AIV = 24 cores for 100 blocks. */
	assert_int_equal(run(threads, 8, single, orch_spmd, &c, &res, p), 0);
	for (int b = 0; b < NBLK; b++)
		assert_int_equal(c.hits[b], 1);
	assert_int_equal(c.seen_num, NBLK);
	assert_int_equal(c.sum, NBLK);
	assert_int_equal(res.total_tasks, 2);
	assert_int_equal(res.completed_tasks, 2);
	assert_int_equal(res.dispatched_subtasks, NBLK + 1);
	assert_int_equal(p->fin, NBLK + 1);
	assert_true(res.spmd_repushes >= 1);
	printf("SPMD %s x%d, %d sched: %llu re-pushes, %llu pending\n",
	       func == K_BLOCK_AIC ? "AIC" : "AIV", NBLK, threads - 1,
	       (unsigned long long)res.spmd_repushes,
	       (unsigned long long)res.pending_dispatches);
	free(p);
}

static void test_spmd_aiv_1sched(void **s) { (void)s; check_spmd(2, K_BLOCK_AIV, false); }
static void test_spmd_aiv_3sched(void **s) { (void)s; check_spmd(4, K_BLOCK_AIV, false); }
static void test_spmd_aic_3sched(void **s) { (void)s; check_spmd(4, K_BLOCK_AIC, false); }
static void test_spmd_single_3sched(void **s) { (void)s; check_spmd(4, K_BLOCK_AIV, true); }

#define NMIXBLK 20

static int orch_mix_spmd(struct tp_orch *o, void *arg)
{
	uint32_t *x = arg;
	struct tp_tensor t;
	struct tp_task_args a;
	u32_tensor(&t, x, 4 * NMIXBLK);
	tp_args_init(&a);
	tp_args_add_inout(&a, &t);
	assert_int_equal(tp_args_set_block_num(&a, NMIXBLK), 0);
	const int32_t k[3] = { K_MIX_C, K_MIX_V, TP_KERNEL_NONE };
	return tp_submit(o, k, &a, NULL);
}

static void check_mix_spmd(int threads)
{
	uint32_t x[4 * NMIXBLK];
	memset(x, 0, sizeof(x));
	struct tp_engine_result res;
	struct probe *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	assert_int_equal(run(threads, 8, false, orch_mix_spmd, x, &res, p), 0);
	assert_int_equal(res.completed_tasks, 1);
	assert_int_equal(res.dispatched_subtasks, 2 * NMIXBLK);
	for (int b = 0; b < NMIXBLK; b++) {
		assert_int_equal(x[4 * b], 1);
		assert_int_equal(x[4 * b + 1], 1);
		assert_int_equal(tp_topo_core_type(8, (int)x[4 * b + 2]), TP_CORE_AIC);
		assert_int_equal(tp_topo_slot(8, (int)x[4 * b + 3]), TP_SLOT_AIV0);
		assert_int_equal(tp_topo_cluster(8, (int)x[4 * b + 2]),
				 tp_topo_cluster(8, (int)x[4 * b + 3]));
	}
	free(p);
}

static void test_mix_spmd_1sched(void **s) { (void)s; check_mix_spmd(2); }
static void test_mix_spmd_3sched(void **s) { (void)s; check_mix_spmd(4); }

static int orch_bad_blocks(struct tp_orch *o, void *arg)
{
	(void)arg;
	struct tp_task_args a;
	tp_args_init(&a);
	assert_int_equal(tp_args_set_block_num(&a, 0), -EINVAL);
	return tp_submit_aiv(o, K_ADD_AIV, &a, NULL);
}

static void test_spmd_bad_block_num(void **s)
{
	(void)s;
	struct tp_engine_result res;
	struct probe *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	assert_int_equal(run(2, 1, false, orch_bad_blocks, NULL, &res, p), -EINVAL);
	assert_non_null(strstr(res.msg, "block_num"));
	free(p);
}

/* ---- predicated skip -------------------------------------------------------- */

struct pred_case {
	uint32_t flag_init, flag_set;
	uint32_t flag, out, out2;
};

/* SET flag = flag_set → Q: out = flag + 41 if flag != 0 (predicate on
 * flag, flag also an input: the declared dependency) → R: out2 = out + 3. */
static int orch_pred(struct tp_orch *o, void *arg)
{
	struct pred_case *c = arg;
	struct tp_tensor flag, out, out2;
	struct tp_task_args a;
	int rc;
	u32_tensor(&flag, &c->flag, 1);
	u32_tensor(&out, &c->out, 1);
	u32_tensor(&out2, &c->out2, 1);
	tp_args_init(&a);
	tp_args_add_output_existing(&a, &flag);
	tp_args_add_scalar(&a, c->flag_set);
	if ((rc = tp_submit_aic(o, K_SET_AIC, &a, NULL)))
		return rc;
	tp_args_init(&a);
	tp_args_add_input(&a, &flag);
	tp_args_add_inout(&a, &out);
	tp_args_add_scalar(&a, 41);
	assert_int_equal(tp_args_set_predicate(&a, &flag, 0, TP_PRED_NE, 0), 0);
	if ((rc = tp_submit_aiv(o, K_ADD_AIV, &a, NULL)))
		return rc;
	tp_args_init(&a);
	tp_args_add_input(&a, &out);
	tp_args_add_inout(&a, &out2);
	tp_args_add_scalar(&a, 3);
	return tp_submit_aiv(o, K_ADD_AIV, &a, NULL);
}

static void check_pred(int threads, uint32_t flag_set)
{
	/* The flag's initial value is the opposite: the predicate must be
	 * read at the ready point, after SET ran, not at submit. */
	struct pred_case c = { .flag_init = !flag_set, .flag_set = flag_set };
	c.flag = c.flag_init;
	c.out = 7;
	struct tp_engine_result res;
	struct probe *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	assert_int_equal(run(threads, 2, false, orch_pred, &c, &res, p), 0);
	assert_int_equal(c.flag, flag_set);
	assert_int_equal(res.total_tasks, 3);
	assert_int_equal(res.completed_tasks, 3);
	assert_int_equal(res.dummy_tasks, 0);
	assert_int_equal(p->dummies, 0);
	if (flag_set) {
		assert_int_equal(c.out, 42);
		assert_int_equal(c.out2, 45);
		assert_int_equal(res.predicated_skips, 0);
		assert_int_equal(p->skips, 0);
		assert_int_equal(res.dispatched_subtasks, 3);
	} else {
		assert_int_equal(c.out, 7);
		assert_int_equal(c.out2, 10);
		assert_int_equal(res.predicated_skips, 1);
		assert_int_equal(p->skips, 1);
		assert_int_equal(res.dispatched_subtasks, 2);
	}
	free(p);
}

static void test_pred_true_1sched(void **s) { (void)s; check_pred(2, 1); }
static void test_pred_true_3sched(void **s) { (void)s; check_pred(4, 1); }
static void test_pred_false_1sched(void **s) { (void)s; check_pred(2, 0); }
static void test_pred_false_3sched(void **s) { (void)s; check_pred(4, 0); }

static void test_pred_bad_args(void **s)
{
	(void)s;
	struct tp_task_args a;
	uint32_t v = 0;
	tp_args_init(&a);
	assert_int_equal(a.block_num, 1);
	assert_int_equal(a.has_pred, 0);
	assert_int_equal(tp_args_set_predicate_addr(&a, &v, 3, TP_PRED_EQ, 0), -EINVAL);
	assert_int_equal(a.err, -EINVAL);
	tp_args_init(&a);
	assert_int_equal(tp_args_set_predicate_addr(&a, &v, 4, (enum tp_pred_op)9, 0),
			 -EINVAL);
	tp_args_init(&a);
	assert_int_equal(tp_args_set_predicate_addr(&a, &v, 4, TP_PRED_LE, -1), 0);
	assert_int_equal(a.err, 0);
	assert_int_equal(a.has_pred, 1);
	assert_int_equal(a.pred_size, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dual_issue_1sched),
		cmocka_unit_test(test_dual_issue_3sched),
		cmocka_unit_test(test_single_issue_1sched),
		cmocka_unit_test(test_single_issue_3sched),
		cmocka_unit_test(test_spmd_aiv_1sched),
		cmocka_unit_test(test_spmd_aiv_3sched),
		cmocka_unit_test(test_spmd_aic_3sched),
		cmocka_unit_test(test_spmd_single_3sched),
		cmocka_unit_test(test_mix_spmd_1sched),
		cmocka_unit_test(test_mix_spmd_3sched),
		cmocka_unit_test(test_spmd_bad_block_num),
		cmocka_unit_test(test_pred_true_1sched),
		cmocka_unit_test(test_pred_true_3sched),
		cmocka_unit_test(test_pred_false_1sched),
		cmocka_unit_test(test_pred_false_3sched),
		cmocka_unit_test(test_pred_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
