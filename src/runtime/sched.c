/* SPDX-License-Identifier: MIT */
/*
 * runtime/sched.c — a scheduler thread: completion poll, resolve, dummy
 * drain, dispatch, deferred release, in the order of
 * spec/runtime-model.md §2.11; dispatch tokens and payloads of §2.7;
 * completion of §2.9; shutdown of §2.12. Single issue: a core gets a new
 * task only after it FINed the previous one.
 */
#include <errno.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "platform/regs.h"
#include "runtime/engine_internal.h"

#define HANDSHAKE_NS (10ull * 1000 * 1000 * 1000)
#define DUMMY_BATCH 8
#define DUMMY_THREADS 3
#define PARK_NS (100ull * 1000 * 1000)

static inline bool all_done(struct tp_engine *e)
{
	if (!atomic_load_explicit(&e->orch_done, memory_order_acquire))
		return false;
	return atomic_load_explicit(&e->completed_tasks, memory_order_acquire) >=
	       atomic_load_explicit(&e->total_tasks, memory_order_relaxed);
}

static inline void phase(struct tp_engine *e, struct tp_sched_thread *t,
			 enum tp_sched_phase ph, uint64_t start, uint64_t end, uint32_t n)
{
	if (e->hooks.on_phase)
		e->hooks.on_phase(e->hooks.ud, t->idx, ph, start, end, t->loop_iter, n);
}

/* on_task_complete + deferred release of a finished task (§2.9 step 3). */
static void complete_task(struct tp_engine *e, struct tp_sched_thread *t, struct tp_slot *s)
{
	const bool hooks = e->hooks_on;
	uint64_t r0 = hooks ? tp_sys_cnt() : 0;
	uint32_t visited = tp_slot_complete(s, tp_engine_route_ready, e);
	if (hooks) {
		uint64_t r1 = tp_sys_cnt();
		if (visited && tp_sys_cnt_to_ns(r1 - r0) >= 1000)
			phase(e, t, TP_PHASE_RESOLVE, r0, r1, visited);
	}
	tp_release_defer(&t->rel, s, tp_engine_on_consumed, e);
	atomic_fetch_add_explicit(&e->completed_tasks, 1, memory_order_release);
	if (all_done(e))
		tp_engine_wake_all(e);
}

/* check_running_cores_for_completion (§2.9), single issue. */
static uint32_t poll_completion(struct tp_engine *e, struct tp_sched_thread *t)
{
	uint32_t n = 0;
	for (int i = 0; i < t->n_cores && t->n_running; i++) {
		struct tp_core_exec *ce = &e->cores[t->core_ids[i]];
		if (!ce->running)
			continue;
		uint32_t cond = tp_reg_read(e->dev, ce->core_id, TP_REG_COND);
		if (cond != TP_COND_FIN(ce->running_token))
			continue;
		uint64_t fin_ts = e->hooks_on ? tp_sys_cnt() : 0;
		struct tp_slot *s = ce->running;
		ce->running = NULL;
		t->n_running--;
		t->idle_by_type[tp_topo_core_type(e->block_dim, ce->core_id)]++;
		if (e->hooks_on && e->hooks.on_fin)
			e->hooks.on_fin(e->hooks.ud, t->idx, ce->core_id, s->task_id,
					s->kernel_id[ce->subslot], ce->running_token,
					ce->dispatch_ts, fin_ts);
		if (tp_slot_on_subtask_complete(s))
			complete_task(e, t, s);
		n++;
	}
	return n;
}

/* publish_subtask_to_core (§2.7). */
static void dispatch_subtask(struct tp_engine *e, struct tp_sched_thread *t,
			     struct tp_core_exec *ce, struct tp_slot *s, enum tp_subslot ks)
{
	uint32_t tok = tp_reg_token_next(&ce->dispatch_seq);
	struct tp_dispatch_payload *pl = &ce->payload[tok & 1];
	int32_t func = s->kernel_id[ks];
	pl->task_id = s->task_id;
	pl->func_id = func;
	pl->fn = e->cfg.kernels[func].fn;
	pl->args = tp_engine_payload(e, s)->args;
	if (ce->running) {
		/* Never two tasks on one core under single issue. */
		atomic_store_explicit(&e->max_running, 2, memory_order_relaxed);
		TP_ERROR("runtime: core %d dispatched while busy", ce->core_id);
	} else if (atomic_load_explicit(&e->max_running, memory_order_relaxed) == 0) {
		atomic_store_explicit(&e->max_running, 1, memory_order_relaxed);
	}
	ce->running = s;
	ce->running_token = tok;
	t->n_running++;
	t->idle_by_type[tp_topo_core_type(e->block_dim, ce->core_id)]--;
	uint64_t ts = e->hooks_on ? tp_sys_cnt() : 0;
	ce->dispatch_ts = ts;
	if (e->hooks_on && e->hooks.on_dispatch)
		e->hooks.on_dispatch(e->hooks.ud, t->idx, ce->core_id, s->task_id, func, tok, ts);
	tp_aicpu_dispatch(e->dev, ce->core_id, tok);
	atomic_fetch_add_explicit(&e->dispatched, 1, memory_order_relaxed);
}

/* An owned cluster whose three cores are idle, or -1. */
static int idle_cluster(struct tp_engine *e, struct tp_sched_thread *t)
{
	for (int ci = t->idx; ci < e->block_dim; ci += e->num_sched) {
		bool idle = true;
		for (int sl = TP_SLOT_AIC; sl <= TP_SLOT_AIV1 && idle; sl++)
			idle = !e->cores[tp_topo_core_id(e->block_dim, ci, (enum tp_subslot)sl)]
					.running;
		if (idle)
			return ci;
	}
	return -1;
}

static uint32_t dispatch_shape(struct tp_engine *e, struct tp_sched_thread *t,
			       enum tp_shape shape)
{
	struct tp_ready_queue *q = &e->ready[shape];
	uint32_t n = 0;
	if (shape == TP_SHAPE_MIX) {
		int ci;
		while (tp_rq_size(q) && (ci = idle_cluster(e, t)) >= 0) {
			struct tp_slot *s = tp_rq_pop(q);
			if (!s)
				break;
			for (int sl = TP_SLOT_AIC; sl <= TP_SLOT_AIV1; sl++)
				if (s->active_mask & (1u << sl)) {
					int core = tp_topo_core_id(e->block_dim, ci,
								   (enum tp_subslot)sl);
					dispatch_subtask(e, t, &e->cores[core], s,
							 (enum tp_subslot)sl);
					n++;
				}
		}
		return n;
	}
	enum tp_core_type ct = shape == TP_SHAPE_AIC ? TP_CORE_AIC : TP_CORE_AIV;
	enum tp_subslot ks = shape == TP_SHAPE_AIC ? TP_SLOT_AIC : TP_SLOT_AIV0;
	for (int i = 0; i < t->n_cores && t->idle_by_type[ct] && tp_rq_size(q); i++) {
		struct tp_core_exec *ce = &e->cores[t->core_ids[i]];
		if (ce->running || tp_topo_core_type(e->block_dim, ce->core_id) != ct)
			continue;
		struct tp_slot *s = tp_rq_pop(q);
		if (!s)
			break;
		dispatch_subtask(e, t, ce, s, ks);
		n++;
	}
	return n;
}

/* dispatch_ready_tasks: MIX first, then AIC / AIV, order by parity. */
static uint32_t dispatch_ready(struct tp_engine *e, struct tp_sched_thread *t)
{
	uint32_t n = dispatch_shape(e, t, TP_SHAPE_MIX);
	if (t->idx & 1) {
		n += dispatch_shape(e, t, TP_SHAPE_AIV);
		n += dispatch_shape(e, t, TP_SHAPE_AIC);
	} else {
		n += dispatch_shape(e, t, TP_SHAPE_AIC);
		n += dispatch_shape(e, t, TP_SHAPE_AIV);
	}
	return n;
}

/* Dummy drain (§2.10): up to 8 per iteration, completed inline. */
static uint32_t drain_dummies(struct tp_engine *e, struct tp_sched_thread *t, uint64_t *start)
{
	uint32_t n = 0;
	struct tp_slot *s;
	while (n < DUMMY_BATCH && (s = tp_rq_pop(&e->dummy))) {
		if (n == 0 && e->hooks_on)
			*start = tp_sys_cnt();
		if (e->hooks_on && e->hooks.on_dummy)
			e->hooks.on_dummy(e->hooks.ud, t->idx, s->task_id, tp_sys_cnt());
		atomic_fetch_add_explicit(&e->dummy_done, 1, memory_order_relaxed);
		complete_task(e, t, s);
		n++;
	}
	return n;
}

struct park_ctx {
	struct tp_engine *e;
	struct tp_sched_thread *t;
};

/* Whether the loop has anything to do: a FIN, dispatchable work, a dummy,
 * termination, an abort. */
static bool has_work(void *arg)
{
	struct park_ctx *pc = arg;
	struct tp_engine *e = pc->e;
	struct tp_sched_thread *t = pc->t;
	if (atomic_load_explicit(&e->abort_all, memory_order_acquire))
		return true;
	if (t->n_running == 0 && all_done(e))
		return true;
	for (int i = 0; i < t->n_cores; i++) {
		struct tp_core_exec *ce = &e->cores[t->core_ids[i]];
		if (ce->running &&
		    tp_reg_read(e->dev, ce->core_id, TP_REG_COND) ==
			    TP_COND_FIN(ce->running_token))
			return true;
	}
	if (t->idx < DUMMY_THREADS && tp_rq_size(&e->dummy))
		return true;
	if (t->idle_by_type[TP_CORE_AIC] && tp_rq_size(&e->ready[TP_SHAPE_AIC]))
		return true;
	if (t->idle_by_type[TP_CORE_AIV] && tp_rq_size(&e->ready[TP_SHAPE_AIV]))
		return true;
	if (tp_rq_size(&e->ready[TP_SHAPE_MIX]) && idle_cluster(e, t) >= 0)
		return true;
	return false;
}

static void stall(struct tp_engine *e, struct tp_sched_thread *t)
{
	char nb[32];
	for (int i = 0; i < t->n_cores; i++) {
		struct tp_core_exec *ce = &e->cores[t->core_ids[i]];
		if (!ce->running)
			continue;
		int func = ce->running->kernel_id[ce->subslot];
		tp_engine_fail(e, -ETIMEDOUT, ce->running->task_id, func,
			       "runtime: scheduler thread %d: task 0x%llx (%s) on core %d "
			       "made no progress for %llu ms",
			       t->idx, (unsigned long long)ce->running->task_id,
			       tp_engine_func_name(e, func, nb, sizeof(nb)), ce->core_id,
			       (unsigned long long)e->cfg.stall_timeout_ms);
		break;
	}
	atomic_store_explicit(&e->abort_all, true, memory_order_release);
	tp_engine_wake_all(e);
}

void tp_sched_thread_main(struct tp_engine *e, struct tp_aicpu *cpu, int idx)
{
	struct tp_sched_thread *t = &e->sched[idx];
	const bool hooks = e->hooks_on;
	t->bell = tp_aicpu_doorbell(cpu);
	t->rel.n = 0;
	atomic_store_explicit(&e->sched_bells[idx], t->bell, memory_order_release);

	/* Preamble: handshake our own cores (§2.12 step 1). */
	int rc = tp_aicpu_open_cores(e->dev, t->core_ids, t->n_cores, HANDSHAKE_NS);
	if (rc) {
		tp_engine_fail(e, rc, TP_TASK_ID_INVALID, -1,
			       "runtime: scheduler thread %d: core handshake failed: %s",
			       idx, tp_last_error());
		atomic_store_explicit(&e->abort_all, true, memory_order_release);
		tp_engine_wake_all(e);
	}
	for (int i = 0; i < t->n_cores; i++) {
		tp_reg_set_cond_listener(e->dev, t->core_ids[i], t->bell);
		t->idle_by_type[tp_topo_core_type(e->block_dim, t->core_ids[i])]++;
	}

	const uint64_t stall_ns = e->cfg.stall_timeout_ms * 1000000ull;
	uint64_t sched_start = hooks ? tp_sys_cnt() : 0;
	uint64_t last_progress = tp_now_ns();
	struct park_ctx pc = { e, t };

	while (!atomic_load_explicit(&e->abort_all, memory_order_acquire)) {
		t->loop_iter++;
		uint64_t t_phase = hooks ? tp_sys_cnt() : 0;
		bool progress = false;

		/* 0: termination. */
		if (t->n_running == 0 && all_done(e))
			break;
		/* 1: completion poll (+ resolve). */
		if (t->n_running) {
			uint32_t n = poll_completion(e, t);
			if (hooks) {
				uint64_t now = tp_sys_cnt();
				if (n)
					phase(e, t, TP_PHASE_COMPLETE, t_phase, now, n);
				t_phase = now;
			}
			progress |= n > 0;
		}
		/* 3: dummy drain. */
		if (t->idx < DUMMY_THREADS) {
			uint64_t d0 = 0;
			uint32_t n = drain_dummies(e, t, &d0);
			if (n && hooks) {
				t_phase = tp_sys_cnt();
				phase(e, t, TP_PHASE_DUMMY, d0, t_phase, n);
			}
			progress |= n > 0;
		}
		/* 4: dispatch. */
		uint32_t nd = dispatch_ready(e, t);
		if (nd && hooks) {
			uint64_t now = tp_sys_cnt();
			phase(e, t, TP_PHASE_DISPATCH, t_phase, now, nd);
			t_phase = now;
		}
		progress |= nd > 0;
		/* 5: no progress → deferred releases, then park. */
		if (progress) {
			last_progress = tp_now_ns();
			continue;
		}
		if (t->rel.n) {
			uint64_t r0 = hooks ? tp_sys_cnt() : 0;
			uint32_t n = tp_release_flush(&t->rel, tp_engine_on_consumed, e);
			if (n && hooks)
				phase(e, t, TP_PHASE_RELEASE, r0, tp_sys_cnt(), n);
			continue;
		}
		uint64_t now = tp_now_ns();
		if (t->n_running && now - last_progress >= stall_ns) {
			stall(e, t);
			break;
		}
		tp_doorbell_wait(t->bell, has_work, &pc, PARK_NS);
	}

	/* After the loop: leftover releases, shutdown of our cores. */
	tp_release_flush(&t->rel, tp_engine_on_consumed, e);
	if (hooks && e->hooks.on_sched_window)
		e->hooks.on_sched_window(e->hooks.ud, idx, sched_start, tp_sys_cnt());
	for (int i = 0; i < t->n_cores; i++)
		tp_reg_set_cond_listener(e->dev, t->core_ids[i], NULL);
	if (!rc && tp_aicpu_close_cores(e->dev, t->core_ids, t->n_cores, HANDSHAKE_NS))
		TP_ERROR("runtime: scheduler thread %d: cores did not exit: %s", idx,
			 tp_last_error());
}
