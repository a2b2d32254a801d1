/* SPDX-License-Identifier: MIT */
/* Unit tests of the simplified early dispatch (runtime/engine.h,
 * cfg.early_dispatch), with 1 and 3 scheduler threads:
 *  - producers sleep, their consumer is staged gated on an idle core
 *    before they finished (on_early_dispatch earlier than the producers'
 *    FIN), runs only after its doorbell, which comes after every producer
 *    FIN, and computes from their final outputs; the early_dispatch phase
 *    carries the staged tasks;
 *  - forced off under single_issue;
 *  - a chain (read, sleep, write of one counter) and a wide graph give the
 *    same results with early dispatch on. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "platform/device.h"
#include "runtime/engine.h"
#include "runtime/orch.h"

static uint32_t *tile_u32(int64_t arg)
{
	const struct tp_tile *t = (const struct tp_tile *)(intptr_t)arg;
	return (uint32_t *)(t->buf + t->offset);
}

static uint32_t tile_rows(int64_t arg)
{
	return ((const struct tp_tile *)(intptr_t)arg)->rows;
}

/* PROD: OUT o[n], scalar ms, scalar base: sleep, then o[i] = base + i. */
static void k_prod(int64_t *args)
{
	usleep((useconds_t)args[1] * 1000u);
	uint32_t *o = tile_u32(args[0]);
	for (uint32_t i = 0; i < tile_rows(args[0]); i++)
		o[i] = (uint32_t)args[2] + i;
}

/* SUM: IN a[n], IN b[n], OUT c[n]: c = a + b. */
static void k_sum(int64_t *args)
{
	uint32_t *a = tile_u32(args[0]), *b = tile_u32(args[1]), *c = tile_u32(args[2]);
	for (uint32_t i = 0; i < tile_rows(args[0]); i++)
		c[i] = a[i] + b[i];
}

/* INC: INOUT v[1]: read, sleep 100 µs, write + 1 (overlap loses updates). */
static void k_inc(int64_t *args)
{
	uint32_t *v = tile_u32(args[0]);
	uint32_t x = *v;
	usleep(100);
	*v = x + 1;
}

/* SET: OUT w[1], scalar x: w = x. */
static void k_set(int64_t *args)
{
	*tile_u32(args[0]) = (uint32_t)args[1];
}



enum { K_PROD, K_SUM, K_INC_AIC, K_INC_AIV, K_SET, K_COUNT };

static const struct tp_kernel_entry kernels[K_COUNT] = {
	[K_PROD] = { k_prod, TP_CORE_AIV, "PROD" },
	[K_SUM] = { k_sum, TP_CORE_AIC, "SUM" },
	[K_INC_AIC] = { k_inc, TP_CORE_AIC, "INC_AIC" },
	[K_INC_AIV] = { k_inc, TP_CORE_AIV, "INC_AIV" },
	[K_SET] = { k_set, TP_CORE_AIV, "SET" },
};

/* ---- hooks --------------------------------------------------------------- */

#define MAX_REC 64

struct probe {
	pthread_mutex_t mu;
	uint32_t n_fin, n_staged, n_bell;
	struct { tp_task_id t; uint64_t ts; } fin[MAX_REC], staged[MAX_REC], bell[MAX_REC];
	_Atomic uint64_t early_bars, early_tasks;
};

static void h_phase(void *ud, int th, enum tp_sched_phase ph, uint64_t s, uint64_t e,
		    uint64_t it, uint32_t n)
{
	struct probe *p = ud;
	(void)th, (void)it;
	assert_true(e >= s);
	if (ph == TP_PHASE_EARLY_DISPATCH) {
		atomic_fetch_add(&p->early_bars, 1);
		atomic_fetch_add(&p->early_tasks, n);
	}
}

static void h_fin(void *ud, int th, int core, tp_task_id t, int f, uint32_t tok, uint64_t d,
		  uint64_t fin)
{
	struct probe *p = ud;
	(void)th, (void)core, (void)tok, (void)d, (void)f;
	pthread_mutex_lock(&p->mu);
	if (p->n_fin < MAX_REC) {
		p->fin[p->n_fin].t = t;
		p->fin[p->n_fin++].ts = fin;
	}
	pthread_mutex_unlock(&p->mu);
}

static void h_staged(void *ud, int th, int core, tp_task_id t, uint32_t tok, uint64_t ts)
{
	struct probe *p = ud;
	(void)th, (void)core, (void)tok;
	pthread_mutex_lock(&p->mu);
	if (p->n_staged < MAX_REC) {
		p->staged[p->n_staged].t = t;
		p->staged[p->n_staged++].ts = ts;
	}
	pthread_mutex_unlock(&p->mu);
}

static void h_bell(void *ud, int th, int core, tp_task_id t, uint32_t tok, uint64_t ts)
{
	struct probe *p = ud;
	(void)th, (void)core, (void)tok;
	pthread_mutex_lock(&p->mu);
	if (p->n_bell < MAX_REC) {
		p->bell[p->n_bell].t = t;
		p->bell[p->n_bell++].ts = ts;
	}
	pthread_mutex_unlock(&p->mu);
}

static int run(int aicpu_threads, bool early, bool single, tp_orch_fn fn, void *arg,
	       struct tp_engine_result *res, struct probe *p)
{
	struct tp_device_config dc = {
		.block_dim = 3,
		.aicpu_threads = aicpu_threads,
		.mem_bytes = 16u << 20,
	};
	struct tp_device *dev = tp_device_open(&dc);
	if (!dev)
		printf("open: %s\n", tp_last_error());
	assert_non_null(dev);
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->mu, NULL);
	struct tp_sched_hooks hooks = {
		.on_phase = h_phase,
		.on_fin = h_fin,
		.on_early_dispatch = h_staged,
		.on_early_doorbell = h_bell,
		.task_times = true, /* the checks below read the times */
		.ud = p,
	};
	struct tp_engine_config cfg = {
		.dev = dev,
		.kernels = kernels,
		.num_kernels = K_COUNT,
		.ring_window = 1024,
		.ring_heap = 4u << 20,
		.hooks = &hooks,
		.early_dispatch = early,
		.single_issue = single,
	};
	alarm(120);
	int rc = tp_engine_run(&cfg, fn, arg, res);
	alarm(0);
	tp_device_close(dev);
	if (rc)
		printf("run: %s\n", res->msg);
	return rc;
}

static void u32_tensor(struct tp_tensor *t, uint32_t *mem, uint32_t n)
{
	uint32_t shape[1] = { n };
	assert_int_equal(tp_tensor_make_contiguous(t, (uint64_t)(uintptr_t)mem, TP_INT32, 1,
						   shape), 0);
}

/* ---- the early-dispatch pair ------------------------------------------------ */

#define GROUPS 3
#define N 16

struct group {
	uint32_t a[N], b[N], c[N];
	tp_task_id pa, pb, sum;
};

static int orch_pair(struct tp_orch *o, void *arg)
{
	struct group *gs = arg;
	for (uint32_t g = 0; g < GROUPS; g++) {
		struct group *G = &gs[g];
		struct tp_tensor a, b, c;
		struct tp_task_args x;
		int rc;
		u32_tensor(&a, G->a, N);
		u32_tensor(&b, G->b, N);
		u32_tensor(&c, G->c, N);
		tp_args_init(&x);
		tp_args_add_output_existing(&x, &a);
		tp_args_add_scalar(&x, 30);
		tp_args_add_scalar(&x, 100 * (g + 1));
		if ((rc = tp_submit_aiv(o, K_PROD, &x, &G->pa)))
			return rc;
		tp_args_init(&x);
		tp_args_add_output_existing(&x, &b);
		tp_args_add_scalar(&x, 40);
		tp_args_add_scalar(&x, 1000 * (g + 1));
		if ((rc = tp_submit_aiv(o, K_PROD, &x, &G->pb)))
			return rc;
		tp_args_init(&x);
		tp_args_add_input(&x, &a);
		tp_args_add_input(&x, &b);
		tp_args_add_output_existing(&x, &c);
		if ((rc = tp_submit_aic(o, K_SUM, &x, &G->sum)))
			return rc;
	}
	return 0;
}

static uint64_t find_ts(const struct probe *p, int which, tp_task_id t)
{
	uint32_t n = which == 0 ? p->n_fin : which == 1 ? p->n_staged : p->n_bell;
	for (uint32_t i = 0; i < n; i++) {
		tp_task_id id = which == 0 ? p->fin[i].t : which == 1 ? p->staged[i].t
								  : p->bell[i].t;
		if (id == t)
			return which == 0 ? p->fin[i].ts : which == 1 ? p->staged[i].ts
								  : p->bell[i].ts;
	}
	return 0;
}

/* Whether every group's consumer was staged early, before its last
 * producer's FIN, and rung after both FINs (@p of one run). */
static bool pair_staged(const struct group *gs, const struct probe *p,
			const struct tp_engine_result *res)
{
	if (res->early_staged != GROUPS || res->early_doorbells != GROUPS ||
	    p->n_staged != GROUPS || p->n_bell != GROUPS || p->early_tasks != GROUPS ||
	    p->early_bars < 1)
		return false;
	for (uint32_t g = 0; g < GROUPS; g++) {
		uint64_t fa = find_ts(p, 0, gs[g].pa), fb = find_ts(p, 0, gs[g].pb);
		uint64_t st = find_ts(p, 1, gs[g].sum), bell = find_ts(p, 2, gs[g].sum);
		uint64_t last = fa > fb ? fa : fb;
		if (!(fa && fb && st && bell))
			return false;
		/* Staged before its last producer finished ... */
		if (!(st < last))
			return false;
		/* ... its doorbell after every producer's FIN. */
		if (!(bell >= fa && bell >= fb))
			return false;
	}
	return true;
}

/*
 * Every group's consumer is staged while its producers sleep (30/40 ms):
 * that needs the orchestrator and a scheduler to get to it within those
 * 30 ms, which a sanitized run beside the suite on a loaded 2-CPU
 * machine need not. So the run is made up to 3 times and staging holds
 * when one run shows it; every run's results must be right. An engine
 * that never stages (or rings before a FIN) fails every run.
 */
static void check_pair(int threads, bool single)
{
	struct group *gs = calloc(GROUPS, sizeof(*gs));
	struct probe *p = calloc(1, sizeof(*p));
	struct tp_engine_result res;
	assert_non_null(gs);
	assert_non_null(p);
	bool staged = false;
	for (int round = 0; round < 3 && !staged; round++) {
		if (round)
			pthread_mutex_destroy(&p->mu);
		memset(gs, 0, GROUPS * sizeof(*gs));
		assert_int_equal(run(threads, true, single, orch_pair, gs, &res, p), 0);
		for (uint32_t g = 0; g < GROUPS; g++)
			for (uint32_t i = 0; i < N; i++)
				/* The consumer saw both producers' final outputs. */
				assert_int_equal(gs[g].c[i], 100 * (g + 1) + 1000 * (g + 1) + 2 * i);
		assert_int_equal(res.completed_tasks, 3 * GROUPS);
		assert_int_equal(res.dispatched_subtasks, 3 * GROUPS);
		assert_int_equal(p->n_fin, 3 * GROUPS);
		if (single) {
			assert_int_equal(res.early_staged, 0);
			assert_int_equal(res.early_doorbells, 0);
			assert_int_equal(p->early_bars, 0);
			assert_int_equal(res.max_outstanding_per_core, 1);
			goto out;
		}
		/* A consumer is never rung without being staged. */
		assert_int_equal(res.early_doorbells, res.early_staged);
		staged = pair_staged(gs, p, &res);
		printf("%d sched, run %d: %llu staged, %llu early_dispatch bars%s\n", threads - 1,
		       round + 1, (unsigned long long)res.early_staged,
		       (unsigned long long)p->early_bars, staged ? "" : " (not every group)");
	}
	assert_true(staged);
out:
	pthread_mutex_destroy(&p->mu);
	free(gs);
	free(p);
}

static void test_pair_1sched(void **s) { (void)s; check_pair(2, false); }
static void test_pair_3sched(void **s) { (void)s; check_pair(4, false); }
static void test_single_issue_1sched(void **s) { (void)s; check_pair(2, true); }
static void test_single_issue_3sched(void **s) { (void)s; check_pair(4, true); }

/* ---- chain and wide graph ------------------------------------------------------ */

#define CHAIN 300
#define WIDE 256

struct graphs {
	uint32_t v;
	uint32_t w[WIDE];
};

static int orch_chain_wide(struct tp_orch *o, void *arg)
{
	struct graphs *G = arg;
	struct tp_tensor v;
	struct tp_task_args x;
	int rc;
	u32_tensor(&v, &G->v, 1);
	for (uint32_t i = 0; i < CHAIN; i++) {
		tp_args_init(&x);
		tp_args_add_inout(&x, &v);
		if ((rc = (i & 1 ? tp_submit_aic(o, K_INC_AIC, &x, NULL)
				 : tp_submit_aiv(o, K_INC_AIV, &x, NULL))))
			return rc;
	}
	for (uint32_t i = 0; i < WIDE; i++) {
		struct tp_tensor w;
		u32_tensor(&w, &G->w[i], 1);
		tp_args_init(&x);
		tp_args_add_output_existing(&x, &w);
		tp_args_add_scalar(&x, 7 * i + 1);
		if ((rc = tp_submit_aiv(o, K_SET, &x, NULL)))
			return rc;
	}
	return 0;
}

static void check_chain_wide(int threads, bool early)
{
	struct graphs *G = calloc(1, sizeof(*G));
	struct probe *p = calloc(1, sizeof(*p));
	struct tp_engine_result res;
	assert_non_null(G);
	assert_non_null(p);
	assert_int_equal(run(threads, early, false, orch_chain_wide, G, &res, p), 0);
	assert_int_equal(G->v, CHAIN);
	for (uint32_t i = 0; i < WIDE; i++)
		assert_int_equal(G->w[i], 7 * i + 1);
	assert_int_equal(res.completed_tasks, CHAIN + WIDE);
	assert_int_equal(res.dispatched_subtasks, CHAIN + WIDE);
	assert_int_equal(res.max_running_per_core, 1);
	assert_true(res.max_outstanding_per_core <= 2);
	assert_int_equal(res.early_doorbells, res.early_staged);
	if (!early)
		assert_int_equal(res.early_staged, 0);
	printf("%s, %d sched: %llu of %u chain tasks staged early\n", early ? "on" : "off",
	       threads - 1, (unsigned long long)res.early_staged, CHAIN);
	pthread_mutex_destroy(&p->mu);
	free(G);
	free(p);
}

static void test_chain_wide_off(void **s) { (void)s; check_chain_wide(4, false); }
static void test_chain_wide_1sched(void **s) { (void)s; check_chain_wide(2, true); }
static void test_chain_wide_3sched(void **s) { (void)s; check_chain_wide(4, true); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pair_1sched),
		cmocka_unit_test(test_pair_3sched),
		cmocka_unit_test(test_single_issue_1sched),
		cmocka_unit_test(test_single_issue_3sched),
		cmocka_unit_test(test_chain_wide_off),
		cmocka_unit_test(test_chain_wide_1sched),
		cmocka_unit_test(test_chain_wide_3sched),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
