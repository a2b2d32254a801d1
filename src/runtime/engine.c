/* SPDX-License-Identifier: MIT */
/*
 * runtime/engine.c — set-up, shared helpers and teardown of one run
 * (runtime/engine.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/clock.h"
#include "base/watchdog.h"
#include "platform/platform.h"
#include "platform/pmu_model.h"
#include "platform/regs.h"
#include "base/bigmem.h"
#include "runtime/engine_internal.h"

#define DEFAULT_HEAP (64ull << 20)

/* ---- ready queues ---------------------------------------------------- */

static int rq_init(struct tp_ready_queue *q, uint32_t cap)
{
	memset(q, 0, sizeof(*q));
	/* 512 KB at the default window: kept between runs (bigmem.h). */
	q->buf = tp_bigmem_zalloc(cap, sizeof(*q->buf), &q->buf_mapped);
	if (!q->buf)
		return -ENOMEM;
	q->cap = cap;
	pthread_mutex_init(&q->mu, NULL);
	return 0;
}

static void rq_fini(struct tp_ready_queue *q)
{
	if (!q->buf)
		return;
	pthread_mutex_destroy(&q->mu);
	/* A circular buffer: any entry may have been written. */
	tp_bigmem_recycle(q->buf, q->cap, sizeof(*q->buf), q->buf_mapped, q->cap);
	q->buf = NULL;
}

void tp_rq_push(struct tp_ready_queue *q, struct tp_slot *s)
{
	pthread_mutex_lock(&q->mu);
	/* Every queued task holds a live slot, so n < cap always. */
	if (q->n >= q->cap) {
		pthread_mutex_unlock(&q->mu);
		TP_ERROR("runtime: ready queue overflow (cap %u)", q->cap);
		abort();
	}
	q->buf[(q->head + q->n) % q->cap] = s;
	q->n++;
	/* release: pairs with the acquire load in tp_rq_size(), the lock-free
	 * peek of the schedulers' has_work / placement checks; the entries
	 * themselves are handed over under mu. The size is stored before
	 * the caller's tp_engine_wake_all(), whose fence orders it for a
	 * parked scheduler's re-check. */
	atomic_store_explicit(&q->size, q->n, memory_order_release);
	pthread_mutex_unlock(&q->mu);
}

bool tp_rq_try_push(struct tp_ready_queue *q, struct tp_slot *s)
{
	pthread_mutex_lock(&q->mu);
	bool ok = q->n < q->cap;
	if (ok) {
		q->buf[(q->head + q->n) % q->cap] = s;
		q->n++;
		/* release: as in tp_rq_push(). */
		atomic_store_explicit(&q->size, q->n, memory_order_release);
	}
	pthread_mutex_unlock(&q->mu);
	return ok;
}

struct tp_slot *tp_rq_pop(struct tp_ready_queue *q)
{
	if (tp_rq_size(q) == 0)
		return NULL;
	struct tp_slot *s = NULL;
	pthread_mutex_lock(&q->mu);
	if (q->n) {
		s = q->buf[q->head];
		q->head = (q->head + 1) % q->cap;
		q->n--;
		/* release: as in tp_rq_push() (pairs with tp_rq_size()). */
		atomic_store_explicit(&q->size, q->n, memory_order_release);
	}
	pthread_mutex_unlock(&q->mu);
	return s;
}

/* ---- shared helpers -------------------------------------------------- */

void tp_engine_fail(struct tp_engine *e, int rc, tp_task_id task, int func,
		    const char *fmt, ...)
{
	pthread_mutex_lock(&e->fail_mu);
	/* relaxed: under fail_mu, which every store of failed holds. */
	if (!atomic_load_explicit(&e->failed, memory_order_relaxed)) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->fail_msg, sizeof(e->fail_msg), fmt, ap);
		va_end(ap);
		e->fail_rc = rc;
		e->fail_task = task;
		e->fail_func = func;
		/* release: pairs with the acquire loads of failed (tp_engine_run,
		 * tp_orch_host_build read fail_rc / fail_msg after them; the
		 * orchestrator's and AICores' checks only decide to stop):
		 * the failure's fields are written before the flag, and never
		 * again once it is set. */
		atomic_store_explicit(&e->failed, true, memory_order_release);
		TP_ERROR("%s", e->fail_msg);
	}
	pthread_mutex_unlock(&e->fail_mu);
	tp_engine_wake_all(e);
}

const char *tp_engine_func_name(const struct tp_engine *e, int func, char *buf, size_t len)
{
	if (func >= 0 && func < e->cfg.num_kernels && e->cfg.kernels[func].name)
		return e->cfg.kernels[func].name;
	snprintf(buf, len, "func%d", func);
	return buf;
}

void tp_engine_wake_all(struct tp_engine *e)
{
	/* Fence (seq_cst): tp_doorbell_ring()'s, once for every scheduler
	 * (tp_doorbell_ring_fenced). It also orders the caller's condition
	 * stores before the loads of the doorbell pointers, so a scheduler
	 * that publishes its doorbell and then (after the fence of its wait)
	 * re-checks either is seen here or sees the condition. */
	atomic_thread_fence(memory_order_seq_cst);
	for (int i = 0; i < e->num_sched; i++) {
		/* acquire: the doorbell was initialised before its pointer
		 * was published with a release store (tp_sched_thread_main);
		 * NULL until then. */
		struct tp_doorbell *db =
			atomic_load_explicit(&e->sched_bells[i], memory_order_acquire);
		if (db)
			tp_doorbell_ring_fenced(db);
	}
}

struct tp_task_payload *tp_engine_payload(struct tp_engine *e, struct tp_slot *s)
{
	struct tp_ring *r = &e->rings[s->ring_id];
	return &e->payloads[s->ring_id][s - r->slots];
}

struct tp_slot *tp_engine_slot_of(struct tp_engine *e, tp_task_id id)
{
	return tp_ring_slot(&e->rings[tp_task_id_ring(id)], tp_task_id_local(id));
}

bool tp_engine_pred_pass(const struct tp_task_payload *p)
{
	const void *a = (const void *)(uintptr_t)p->pred_addr;
	int64_t v;
	switch (p->pred_size) {
	case 1: v = *(const int8_t *)a; break;
	case 2: v = *(const int16_t *)a; break;
	case 4: v = *(const int32_t *)a; break;
	default: v = *(const int64_t *)a; break;
	}
	switch ((enum tp_pred_op)p->pred_op) {
	case TP_PRED_EQ: return v == p->pred_target;
	case TP_PRED_NE: return v != p->pred_target;
	case TP_PRED_GT: return v > p->pred_target;
	case TP_PRED_LT: return v < p->pred_target;
	case TP_PRED_GE: return v >= p->pred_target;
	default: return v <= p->pred_target;
	}
}

/* ---- early dispatch (simplified, spec §2.10, §7.3) -------------------- */

_Thread_local int tp_sched_cur_thread = -1;

/* acq_rel / acquire: every early_state transition hands the task from one
 * thread to the next (consider → stager → router, in either order):
 * release publishes what the mover wrote before it (the stager's
 * early_core / early_token before STAGED; the router's view of the
 * finished producers before RING_PENDING), acquire takes what the previous
 * mover published (the router that CASes STAGED → RUNG reads early_core /
 * early_token; the stager whose CAS finds RING_PENDING rings for the
 * router). Failure: acquire, the caller re-reads the state and retries. */
static inline bool early_cas(struct tp_task_payload *p, uint8_t from, uint8_t to)
{
	return atomic_compare_exchange_strong_explicit(&p->early_state, &from, to,
						       memory_order_acq_rel,
						       memory_order_acquire);
}

void tp_engine_early_consider(struct tp_engine *e, struct tp_slot *s)
{
	struct tp_task_payload *p = tp_engine_payload(e, s);
	/* acquire: a quick filter before the CAS below (which decides), as
	 * early_cas pairs with the other movers' release. */
	if ((p->shape != TP_SHAPE_AIC && p->shape != TP_SHAPE_AIV) || p->has_pred ||
	    s->logical_block_num != 1 || s->fanin_n == 0 ||
	    atomic_load_explicit(&p->early_state, memory_order_acquire) != TP_EARLY_NONE)
		return;
	uint32_t live = 0;
	for (uint32_t i = 0; i < s->fanin_n; i++) {
		struct tp_slot *pr = tp_slot_fanin_edge(s, i)->producer;
		/* seq_cst: pairs with the flag set in propagate, so of two
		 * producers flagged at once at least one sees the other. */
		if (atomic_load_explicit(&pr->task_state, memory_order_seq_cst) >= TP_TASK_COMPLETED)
			continue;
		if (!(atomic_load_explicit(&pr->lifecycle_flags, memory_order_seq_cst) &
		      TP_SLOT_DISPATCH_PROPAGATED))
			return;
		live++;
	}
	if (!live || !early_cas(p, TP_EARLY_NONE, TP_EARLY_CANDIDATE))
		return;
	if (!tp_rq_try_push(&e->early_q[p->shape], s)) {
		/* Full: only a hint lost; the task runs when ready. */
		early_cas(p, TP_EARLY_CANDIDATE, TP_EARLY_NONE);
		return;
	}
	tp_engine_wake_all(e);
}

static void consider_cb(struct tp_slot *s, void *ud)
{
	tp_engine_early_consider(ud, s);
}

void tp_engine_early_propagate(struct tp_engine *e, struct tp_slot *s)
{
	/* seq_cst: pairs with the seq_cst loads of tp_engine_early_consider()
	 * (see there). */
	atomic_fetch_or_explicit(&s->lifecycle_flags, TP_SLOT_DISPATCH_PROPAGATED,
				 memory_order_seq_cst);
	tp_slot_for_each_consumer(s, consider_cb, e);
}

void tp_engine_early_ring(struct tp_engine *e, struct tp_slot *s)
{
	struct tp_task_payload *p = tp_engine_payload(e, s);
	const int core = p->early_core;
	const uint32_t tok = p->early_token;
	uint64_t ts = 0;
	if (e->stamp_tasks) {
		/* Profiling decision (docs/swimlane.md "Early dispatch"): a gated
		 * task counts as dispatched when its doorbell is written, not when
		 * it was staged, so its swimlane dispatch never precedes its
		 * producers' finish. Plain store: the owning scheduler reads it
		 * only after the FIN of this token, and the chain below orders
		 * it: this thread's release store of DATA_MAIN_BASE_HI → the
		 * AICore's acquire load of it in its gate → the AICore's release
		 * store of the FIN (COND) → the scheduler's acquire load of COND
		 * (sched.c finish_running). */
		ts = tp_sys_cnt();
		p->early_ring_ts = ts;
	}
	if (e->hooks_on && e->hooks.on_early_doorbell)
		e->hooks.on_early_doorbell(e->hooks.ud, tp_sched_cur_thread, core, s->task_id,
					   tok, ts);
	/* relaxed: a statistic, read by fill_result. */
	atomic_fetch_add_explicit(&e->early_rung, 1, memory_order_relaxed);
	/* Release: the producers' outputs (seen by this thread through the
	 * fanin counter) and early_ring_ts are visible to the core that reads
	 * the doorbell, and through its FIN to the owning scheduler. */
	tp_reg_write(e->dev, core, TP_REG_DATA_MAIN_BASE_HI, tok);
}

/* push_ready_routed: DUMMY or a false predicate (evaluated here, at the
 * ready point, once) → dummy queue, else the shape's queue. Early
 * dispatch: a task staged gated gets its doorbell instead. */
void tp_engine_route_ready(struct tp_slot *s, void *ud)
{
	struct tp_engine *e = ud;
	struct tp_task_payload *p = tp_engine_payload(e, s);
	while (e->early) {
		/* acquire: as early_cas (pairs with the stager's release
		 * CASes); picks the transition, the CAS re-checks it. */
		uint8_t st = atomic_load_explicit(&p->early_state, memory_order_acquire);
		if (st == TP_EARLY_NONE || st == TP_EARLY_CANDIDATE) {
			if (early_cas(p, st, TP_EARLY_READY))
				break; /* normal routing below */
		} else if (st == TP_EARLY_STAGING) {
			if (early_cas(p, st, TP_EARLY_RING_PENDING))
				return; /* the stager rings */
		} else if (st == TP_EARLY_STAGED) {
			if (early_cas(p, st, TP_EARLY_RUNG)) {
				tp_engine_early_ring(e, s);
				return;
			}
		} else {
			break;
		}
	}
	if (p->shape != TP_SHAPE_DUMMY && p->has_pred && !tp_engine_pred_pass(p))
		p->pred_skip = 1;
	if (p->shape == TP_SHAPE_DUMMY || p->pred_skip)
		tp_rq_push(&e->dummy, s);
	else
		tp_rq_push(&e->ready[p->shape], s);
	tp_engine_wake_all(e);
}

void tp_engine_on_consumed(struct tp_slot *s, void *ud)
{
	struct tp_engine *e = ud;
	if (e->hbg)
		return; /* host_build_graph: the whole graph stays resident */
	/* Find the ring by the slot's address, never by reading the slot:
	 * once CONSUMED it may be reclaimed by another thread's advance and
	 * reinitialised by the orchestrator at any moment. */
	for (uint32_t r = 0; r < TP_MAX_RING_DEPTH; r++) {
		struct tp_ring *ring = &e->rings[r];
		if (ring->slots && s >= ring->slots && s < ring->slots + ring->window_size) {
			uint32_t n = tp_ring_advance(ring);
			if (n) /* relaxed: a statistic */
				atomic_fetch_add_explicit(&e->reclaimed, n, memory_order_relaxed);
			return;
		}
	}
}

/* ---- the run --------------------------------------------------------- */

static void aicpu_main(struct tp_aicpu *cpu, void *arg)
{
	struct tp_engine *e = arg;
	int idx = tp_aicpu_index(cpu);
	if (e->hbg)
		tp_sched_thread_main(e, cpu, idx); /* all N threads schedule */
	else if (idx == tp_aicpu_count(cpu) - 1)
		tp_orch_thread(e);
	else
		tp_sched_thread_main(e, cpu, idx);
}

static void engine_free(struct tp_engine *e)
{
	for (int r = 0; r < TP_MAX_RING_DEPTH; r++) {
		uint32_t win = e->rings[r].window_size;
		/* relaxed: teardown, every thread that touched the ring has
		 * been joined. A payload is written only for a taken slot, so
		 * the ring's task count bounds the payloads written too. */
		uint32_t cur = atomic_load_explicit(&e->rings[r].current_task_index,
						    memory_order_relaxed);
		if (e->rings[r].slots)
			tp_ring_fini(&e->rings[r]);
		tp_bigmem_recycle(e->payloads[r], win, sizeof(struct tp_task_payload),
				  e->payloads_mapped[r], cur);
	}
	tp_async_fini(e);
	tp_tensormap_fini(&e->tm);
	tp_orch_fini(&e->orch);
	for (int s = 0; s < TP_NUM_SHAPES; s++)
		rq_fini(&e->ready[s]);
	rq_fini(&e->early_q[0]);
	rq_fini(&e->early_q[1]);
	rq_fini(&e->dummy);
	if (e->ctxs) {
		/* PMU: the model must not keep a context being freed. */
		if (e->cfg.pmu_model)
			for (int c = 0; c < e->num_cores; c++)
				tp_pmu_detach(e->cfg.pmu_model, c);
		tp_core_ctxs_fini(e->ctxs, e->num_cores);
	}
	free(e->ctxs);
	free(e->cores);
	if (e->sched)
		for (int i = 0; i < e->num_sched; i++)
			free(e->sched[i].core_ids);
	free(e->sched);
	free(e->sched_bells);
	pthread_mutex_destroy(&e->fail_mu);
	free(e);
}

static int engine_setup(struct tp_engine *e)
{
	const struct tp_engine_config *cfg = &e->cfg;
	uint32_t win = cfg->ring_window ? cfg->ring_window : TP_RING_DEFAULT_WINDOW;
	uint64_t heap = cfg->ring_heap ? cfg->ring_heap : DEFAULT_HEAP;
	uint32_t wins[TP_MAX_RING_DEPTH];
	uint32_t pool = TP_TENSORMAP_DEFAULT_POOL;
	int nrings = TP_MAX_RING_DEPTH;
	uint32_t rq_cap;
	int rc;

	if (e->hbg) {
		/* One ring holding the whole graph: window > cap (the ring
		 * keeps one slot free), every output in its heap. */
		win = 2;
		while (win <= e->hbg_cap)
			win <<= 1;
		heap = cfg->ring_heap ? cfg->ring_heap : TP_HBG_DEFAULT_HEAP;
		nrings = 1;
		/* Nothing is reclaimed, so no stale tensor-map entry is freed. */
		if (pool < win)
			pool = win;
		rq_cap = win;
	} else {
		rq_cap = win * TP_MAX_RING_DEPTH;
	}
	for (int r = 0; r < TP_MAX_RING_DEPTH; r++) {
		wins[r] = r < nrings ? win : 2;
		if (r >= nrings)
			continue;
		/* The ring's own message says what (the window, the heap size
		 * or the memory it could not get); ENOMEM: tp_engine_run()
		 * adds "out of memory". */
		if ((rc = tp_ring_init(&e->rings[r], (uint32_t)r, win, NULL, heap)))
			return rc;
		e->payloads[r] = tp_bigmem_zalloc(win, sizeof(struct tp_task_payload),
						  &e->payloads_mapped[r]);
		if (!e->payloads[r])
			return tp_set_error(-ENOMEM, "ring %d: no memory for %u task payloads",
					    r, win);
	}
	if ((rc = tp_tensormap_init(&e->tm, TP_TENSORMAP_DEFAULT_BUCKETS, pool, wins)))
		return rc;
	if ((rc = tp_orch_init(&e->orch, e)))
		return rc;
	if ((rc = tp_async_init(e)))
		return rc;
	for (int s = 0; s < TP_NUM_SHAPES; s++)
		if ((rc = rq_init(&e->ready[s], rq_cap)))
			return rc;
	if ((rc = rq_init(&e->dummy, rq_cap)))
		return rc;
	if (e->early)
		for (int s = 0; s < 2; s++)
			if ((rc = rq_init(&e->early_q[s], rq_cap)))
				return rc;

	/* Aligned as its payloads (one cache line each, engine_internal.h);
	 * calloc gives 16 bytes. sizeof is a multiple of the alignment. */
	e->cores = aligned_alloc(alignof(struct tp_core_exec),
				 (size_t)e->num_cores * sizeof(*e->cores));
	if (e->cores)
		memset(e->cores, 0, (size_t)e->num_cores * sizeof(*e->cores));
	e->ctxs = calloc((size_t)e->num_cores, sizeof(*e->ctxs));
	e->sched = aligned_alloc(alignof(struct tp_sched_thread),
				 (size_t)e->num_sched * sizeof(*e->sched));
	if (e->sched)
		memset(e->sched, 0, (size_t)e->num_sched * sizeof(*e->sched));
	e->sched_bells = calloc((size_t)e->num_sched, sizeof(*e->sched_bells));
	if (!e->cores || !e->ctxs || !e->sched || !e->sched_bells)
		return -ENOMEM;
	enum tp_core_type *types = malloc((size_t)e->num_cores * sizeof(*types));
	if (!types)
		return -ENOMEM;
	for (int c = 0; c < e->num_cores; c++)
		types[c] = tp_topo_core_type(e->block_dim, c);
	rc = tp_core_ctxs_init(e->ctxs, e->num_cores, types);
	free(types);
	if (rc)
		return rc;
	for (int c = 0; c < e->num_cores; c++) {
		e->cores[c].core_id = c;
		e->cores[c].subslot = tp_topo_slot(e->block_dim, c);
		/* PMU: the model counts this context's tile ops while the
		 * core's window is open (platform/pmu_model.h). */
		if (e->cfg.pmu_model && (rc = tp_pmu_attach(e->cfg.pmu_model, c, &e->ctxs[c])))
			return rc;
	}
	/* relaxed: before the device threads start (their start orders it). */
	atomic_store_explicit(&e->idle_cores[TP_CORE_AIC], 0, memory_order_relaxed);
	atomic_store_explicit(&e->idle_cores[TP_CORE_AIV], 0, memory_order_relaxed);
	atomic_store_explicit(&e->idle_clusters, 0, memory_order_relaxed);
	for (int i = 0; i < e->num_sched; i++) {
		struct tp_sched_thread *t = &e->sched[i];
		t->idx = i;
		t->core_ids = calloc((size_t)e->num_cores, sizeof(int));
		if (!t->core_ids)
			return -ENOMEM;
		/* AICs of the owned clusters first, then their AIVs. */
		for (int sl = TP_SLOT_AIC; sl <= TP_SLOT_AIV1; sl++)
			for (int ci = 0; ci < e->block_dim; ci++)
				if (tp_topo_cluster_owner(ci, e->num_sched) == i)
					t->core_ids[t->n_cores++] =
						tp_topo_core_id(e->block_dim, ci,
								(enum tp_subslot)sl);
	}
	return 0;
}

static void fill_result(struct tp_engine *e, int rc, struct tp_engine_result *res)
{
	if (!res)
		return;
	res->rc = rc;
	/* relaxed: counters read after the device threads were joined, or
	 * (a stall, -ETIMEDOUT) a snapshot of counters still moving. */
	res->total_tasks = atomic_load_explicit(&e->total_tasks, memory_order_relaxed);
	res->completed_tasks = atomic_load_explicit(&e->completed_tasks, memory_order_relaxed);
	res->dispatched_subtasks = res->dummy_tasks = res->pending_dispatches = 0;
	res->predicated_skips = res->early_staged = 0;
	res->max_running_per_core = res->max_outstanding_per_core = 0;
	for (int i = 0; e->sched && i < e->num_sched; i++) {
		const struct tp_sched_thread *t = &e->sched[i];
		res->dispatched_subtasks +=
			atomic_load_explicit(&t->n_dispatched, memory_order_relaxed);
		res->dummy_tasks += atomic_load_explicit(&t->n_dummy, memory_order_relaxed);
		res->pending_dispatches +=
			atomic_load_explicit(&t->n_pending_dispatched, memory_order_relaxed);
		res->predicated_skips +=
			atomic_load_explicit(&t->n_pred_skips, memory_order_relaxed);
		res->early_staged += atomic_load_explicit(&t->n_early_staged, memory_order_relaxed);
		uint64_t mr = atomic_load_explicit(&t->max_running, memory_order_relaxed);
		uint64_t mo = atomic_load_explicit(&t->max_outstanding, memory_order_relaxed);
		if (mr > res->max_running_per_core)
			res->max_running_per_core = mr;
		if (mo > res->max_outstanding_per_core)
			res->max_outstanding_per_core = mo;
	}
	res->inline_tasks = atomic_load_explicit(&e->inline_done, memory_order_relaxed);
	res->spmd_repushes = atomic_load_explicit(&e->spmd_repushes, memory_order_relaxed);
	res->graph_build_ns = e->graph_build_ns;
	res->reclaimed_tasks = atomic_load_explicit(&e->reclaimed, memory_order_relaxed);
	res->async_waits = atomic_load_explicit(&e->async_waits, memory_order_relaxed);
	res->async_completions = atomic_load_explicit(&e->async_done, memory_order_relaxed);
	res->dma_requests = atomic_load_explicit(&e->dma.done, memory_order_relaxed);
	res->early_doorbells = atomic_load_explicit(&e->early_rung, memory_order_relaxed);
	/* Under fail_mu: after a stall device threads may still be in
	 * tp_engine_fail(). */
	pthread_mutex_lock(&e->fail_mu);
	res->failed_task = e->fail_task;
	res->failed_func = e->fail_func;
	snprintf(res->msg, sizeof(res->msg), "%s", e->fail_msg);
	pthread_mutex_unlock(&e->fail_mu);
}

int tp_engine_run(const struct tp_engine_config *cfg, tp_orch_fn orch, void *arg,
		  struct tp_engine_result *res)
{
	if (res) {
		memset(res, 0, sizeof(*res));
		res->failed_task = TP_TASK_ID_INVALID;
		res->failed_func = -1;
	}
	if (!cfg || !cfg->dev || !orch || (cfg->num_kernels && !cfg->kernels) ||
	    cfg->num_kernels < 0)
		return tp_set_error(-EINVAL, "runtime: bad engine configuration");
	const bool hbg = cfg->runtime == TP_RUNTIME_HOST_BUILD_GRAPH;
	if (cfg->runtime != TP_RUNTIME_TENSORMAP_RINGBUFFER && !hbg)
		return tp_set_error(-EINVAL, "runtime: unknown runtime mode %d",
				    (int)cfg->runtime);
	if (!hbg && tp_device_aicpu_threads(cfg->dev) < 2)
		return tp_set_error(-EINVAL,
				    "runtime: %d AICPU thread(s): need 1 orchestrator + "
				    ">= 1 scheduler", tp_device_aicpu_threads(cfg->dev));
	if (hbg && tp_device_aicpu_threads(cfg->dev) < 1)
		return tp_set_error(-EINVAL, "runtime: host_build_graph needs >= 1 AICPU thread");
	uint32_t cap = cfg->max_graph_tasks ? cfg->max_graph_tasks : TP_HBG_DEFAULT_MAX_TASKS;
	if (hbg && cap > (1u << 30))
		return tp_set_error(-EINVAL, "runtime: max_graph_tasks %u above %u", cap,
				    1u << 30);

	/* Aligned: its hot counters have a cache line each
	 * (engine_internal.h); calloc gives 16 bytes. */
	size_t e_bytes = (sizeof(struct tp_engine) + alignof(struct tp_engine) - 1) /
			 alignof(struct tp_engine) * alignof(struct tp_engine);
	struct tp_engine *e = aligned_alloc(alignof(struct tp_engine), e_bytes);
	if (!e)
		return tp_set_error(-ENOMEM, "runtime: out of memory");
	memset(e, 0, e_bytes);
	pthread_mutex_init(&e->fail_mu, NULL);
	e->cfg = *cfg;
	if (!e->cfg.stall_timeout_ms)
		e->cfg.stall_timeout_ms = TP_ENGINE_DEFAULT_STALL_MS;
	e->stall_ns = e->cfg.stall_timeout_ms >= TP_WATCHDOG_NEVER / 1000000u
			      ? TP_WATCHDOG_NEVER
			      : e->cfg.stall_timeout_ms * 1000000u;
	/* Stopped time must not count toward a stall (base/watchdog.h);
	 * without the handler the watchdogs' gap rule still catches stops
	 * longer than TP_WATCHDOG_GAP_NS. */
	int hrc = tp_watchdog_install();
	if (hrc)
		TP_DEBUG("runtime: no SIGCONT handler (%d): stops shorter than %llu ms count "
			 "toward the stall timeout", hrc,
			 (unsigned long long)(TP_WATCHDOG_GAP_NS / 1000000u));
	e->dev = cfg->dev;
	e->block_dim = tp_device_block_dim(cfg->dev);
	e->num_cores = tp_device_num_cores(cfg->dev);
	e->hbg = hbg;
	e->hbg_cap = cap;
	e->dummy_path = !hbg || tp_device_platform(cfg->dev)->hbg_dummy_path;
	e->early = cfg->early_dispatch && !cfg->single_issue;
	e->num_sched = tp_device_aicpu_threads(cfg->dev) - (hbg ? 0 : 1);
	e->orch_fn = orch;
	e->orch_arg = arg;
	e->fail_task = TP_TASK_ID_INVALID;
	e->fail_func = -1;
	if (cfg->hooks) {
		e->hooks = *cfg->hooks;
		e->hooks_on = true;
		e->stamp_tasks = e->hooks.task_times;
		e->stamp_phases = e->hooks.on_phase || e->hooks.on_phase_detail;
	}

	tp_clear_error();
	int rc = engine_setup(e);
	if (rc) {
		/* What could not be had, where a step said so ("ring 3: no
		 * memory for a 67108864-byte heap"). */
		char what[TP_ERROR_MSG_MAX];
		tp_error_fit(what, sizeof(what), tp_last_error());
		if (rc == -ENOMEM && what[0])
			tp_set_error(rc, "runtime: out of memory (%s)", what);
		else if (rc == -ENOMEM)
			tp_set_error(rc, "runtime: out of memory");
		else if (what[0] && strncmp(what, "runtime: ", 9))
			tp_set_error(rc, "runtime: %s", what);
		engine_free(e);
		return rc;
	}

	if (hbg) {
		/* host_build_graph: the whole graph before launch (spec §3). */
		uint64_t b0 = tp_sys_cnt(), n0 = tp_now_ns();
		int brc = tp_orch_host_build(e);
		uint64_t b1 = tp_sys_cnt();
		e->graph_build_ns = tp_now_ns() - n0;
		if (brc) {
			fill_result(e, brc, res);
			if (e->fail_msg[0])
				tp_set_error(brc, "%s", e->fail_msg);
			engine_free(e);
			return brc;
		}
		/* relaxed: stored on this thread (the host build). */
		if (e->hooks_on && e->hooks.on_graph_built)
			e->hooks.on_graph_built(e->hooks.ud,
						atomic_load_explicit(&e->total_tasks,
								     memory_order_relaxed),
						b0, b1);
	}

	struct tp_launch_config lc = {
		.aicpu_fn = aicpu_main,
		.aicore_fn = tp_aicore_loop,
		.arg = e,
		.hooks = cfg->kernel_hooks,
	};
	if ((rc = tp_dma_start(e))) {
		fill_result(e, rc, res);
		engine_free(e);
		return rc;
	}
	/* A launch that cannot create all its threads runs none of them
	 * (platform/device.h): no scheduler or orchestrator is waiting. */
	rc = tp_device_launch_ex(cfg->dev, &lc);
	if (rc) {
		fill_result(e, rc, res);
		engine_free(e);
		return rc;
	}
	int wrc = tp_device_wait(cfg->dev);
	tp_dma_stop(e);

	rc = 0;
	/* Under fail_mu: a stalled run's threads may still be in
	 * tp_engine_fail(), writing fail_rc and fail_msg. relaxed: the lock
	 * orders the load after their stores. */
	pthread_mutex_lock(&e->fail_mu);
	if (atomic_load_explicit(&e->failed, memory_order_relaxed)) {
		rc = e->fail_rc;
		if (e->fail_msg[0])
			tp_set_error(rc, "%s", e->fail_msg);
	}
	pthread_mutex_unlock(&e->fail_mu);
	if (!rc && wrc)
		rc = tp_set_error(wrc, "runtime: device teardown failed");
	fill_result(e, rc, res);
	if (wrc == -ETIMEDOUT) {
		/* Threads may still run: leak rather than free under them;
		 * kept reachable, so a leak check (the sanitizer builds) does
		 * not report it once they ended. */
		static struct tp_engine *left[16];
		static atomic_uint n_left;
		/* relaxed: a slot index; only the leak check reads the slots. */
		unsigned i = atomic_fetch_add_explicit(&n_left, 1, memory_order_relaxed);
		if (i < sizeof(left) / sizeof(left[0]))
			left[i] = e;
		TP_WARN("runtime: engine state leaked (device threads still running)");
		return rc;
	}
	engine_free(e);
	return rc;
}
