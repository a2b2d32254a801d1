/* SPDX-License-Identifier: MIT */
/*
 * runtime/sched.c — a scheduler thread: completion poll, resolve, dummy
 * drain, dispatch, deferred release, in the order of
 * spec/runtime-model.md §2.11; dispatch tokens and payloads of §2.7;
 * completion of §2.9 (dual issue: running + one pending task per core, the
 * pending one published only after the running one's ACK; single issue
 * under cfg.single_issue); SPMD block claims with re-push; predicated
 * skips in the dummy drain (§2.10); shutdown of §2.12. Under
 * host_build_graph (spec §3) the same loop runs on every AICPU thread over
 * a graph that is complete before launch; it emits no resolve / dummy /
 * release bars or dummy markers and defers no releases (nothing is
 * reclaimed). Swimlane hooks (on_phase_detail, on_marker) additionally
 * get the ready-queue depths per shape at each bar's start and end and the
 * dispatch step's pop hits / misses; all of it only with hooks set.
 */
#include <errno.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/watchdog.h"
#include "platform/regs.h"
#include "runtime/engine_internal.h"

#define HANDSHAKE_NS (10ull * 1000 * 1000 * 1000)
/* Teardown after a stall left a core in its kernel: it will not answer
 * the exit signal, so the scheduler's exit handshake and the device's
 * teardown (twice: tp_device_wait() and tp_device_close()) wait about
 * 1 s in all instead of 10 s each. Idle cores answer within micro-
 * seconds. */
#define STUCK_EXIT_NS (500ull * 1000 * 1000)
#define STUCK_TEARDOWN_NS (250ull * 1000 * 1000)
#define DUMMY_BATCH 8
#define DUMMY_THREADS 3
#define PARK_NS (100ull * 1000 * 1000)
_Static_assert(PARK_NS <= TP_WATCHDOG_PERIOD_NS,
	       "the scheduler checks its watchdog after every park");

/* seq_cst (both loads): a Dekker-style handshake with complete_task()
 * and tp_orch_thread(). The completer of the last task stores
 * completed_tasks, then loads orch_done; the orchestrator stores
 * orch_done, then wakes the parked schedulers, which load orch_done, then
 * completed_tasks. With all four seq_cst, a completer that misses orch_done
 * comes before the orchestrator's store in the total order, so a scheduler
 * that sees orch_done also sees its count, and the run's end is never
 * left to a scheduler's PARK_NS timeout. Their acquire half pairs with the
 * release half of those stores: total_tasks (relaxed, stored before
 * orch_done) is final, and every completed task's writes are visible. */
static inline bool all_done(struct tp_engine *e)
{
	if (!atomic_load_explicit(&e->orch_done, memory_order_seq_cst))
		return false;
	return atomic_load_explicit(&e->completed_tasks, memory_order_seq_cst) >=
	       atomic_load_explicit(&e->total_tasks, memory_order_relaxed);
}

/* Ready-queue depths per shape [AIC, AIV, MIX] (swimlane records, int16
 * on the device like the reference's). Only called with hooks on. */
static inline void sample_depth(struct tp_engine *e, int16_t d[3])
{
	for (int sh = 0; sh < TP_NUM_SHAPES; sh++) {
		uint32_t n = tp_rq_size(&e->ready[sh]);
		d[sh] = n > INT16_MAX ? INT16_MAX : (int16_t)n;
	}
}

/* The phase anchor moved: remember the depths at the next phase's start. */
static inline void mark(struct tp_engine *e, struct tp_sched_thread *t)
{
	if (e->hooks.on_phase_detail)
		sample_depth(e, t->depth_mark);
}

/* The start of a bar that begins at an instant of its own, not at the
 * phase anchor (early_dispatch, release; §2.11): stamp now and, with
 * phase details on, the ready-queue depths into @d0. Return: the stamp
 * (system counter ticks), 0 when @phases is off (@d0 left as it is). */
static inline uint64_t own_start(struct tp_engine *e, bool phases, int16_t d0[3])
{
	if (!phases)
		return 0;
	const uint64_t t0 = tp_sys_cnt();
	if (e->hooks.on_phase_detail)
		sample_depth(e, d0);
	return t0;
}

/* Emit a phase bar; @d0: depths at its start (NULL: the anchor's).
 * @remark: the bar's end is the next phase's anchor: its end depths become
 * the anchor's (the same instant; saves mark()'s second sample of the
 * shared queue sizes, which other threads keep writing). */
static void phase_at_ex(struct tp_engine *e, struct tp_sched_thread *t, enum tp_sched_phase ph,
			uint64_t start, uint64_t end, uint32_t n, const int16_t *d0, bool remark)
{
	if (e->hooks.on_phase_detail) {
		struct tp_phase_detail d = { 0 };
		memcpy(d.depth_start, d0 ? d0 : t->depth_mark, sizeof(d.depth_start));
		sample_depth(e, d.depth_end);
		if (ph == TP_PHASE_DISPATCH) {
			d.pop_hit = t->pop_hit;
			d.pop_miss = t->pop_miss;
			t->pop_hit = t->pop_miss = 0;
		}
		if (remark)
			memcpy(t->depth_mark, d.depth_end, sizeof(t->depth_mark));
		e->hooks.on_phase_detail(e->hooks.ud, t->idx, ph, start, end, t->loop_iter, n, &d);
	} else if (e->hooks.on_phase) {
		e->hooks.on_phase(e->hooks.ud, t->idx, ph, start, end, t->loop_iter, n);
	}
}

static inline void phase_at(struct tp_engine *e, struct tp_sched_thread *t,
			    enum tp_sched_phase ph, uint64_t start, uint64_t end, uint32_t n,
			    const int16_t *d0)
{
	phase_at_ex(e, t, ph, start, end, n, d0, false);
}

static inline void phase(struct tp_engine *e, struct tp_sched_thread *t,
			 enum tp_sched_phase ph, uint64_t start, uint64_t end, uint32_t n)
{
	phase_at_ex(e, t, ph, start, end, n, NULL, false);
}

/* phase() whose end anchors the next phase (replaces phase() + mark()). */
static inline void phase_mark(struct tp_engine *e, struct tp_sched_thread *t,
			      enum tp_sched_phase ph, uint64_t start, uint64_t end, uint32_t n,
			      const int16_t *d0)
{
	phase_at_ex(e, t, ph, start, end, n, d0, true);
}

/* on_task_complete + deferred release of a finished task (§2.9 step 3). */
static void complete_task(struct tp_engine *e, struct tp_sched_thread *t, struct tp_slot *s)
{
	/* HBG emits no resolve bars and reclaims nothing (spec §3). */
	const bool hooks = e->stamp_phases && !e->hbg;
	int16_t d0[3] = { 0, 0, 0 };
	struct tp_dep_node *fanout = tp_slot_mark_completed(s);
	/* The bar times the fanout walk: a task without consumers (every
	 * leaf of a graph) has none, and takes no stamp or depth sample. */
	uint64_t r0 = 0;
	if (hooks && fanout) {
		if (e->hooks.on_phase_detail)
			sample_depth(e, d0);
		r0 = tp_sys_cnt();
	}
	uint32_t visited = tp_slot_walk_fanout(fanout, tp_engine_route_ready, e);
	if (hooks && visited) {
		uint64_t r1 = tp_sys_cnt();
		if (tp_sys_cnt_to_ns(r1 - r0) >= 1000)
			phase_at(e, t, TP_PHASE_RESOLVE, r0, r1, visited, d0);
	}
	if (!e->hbg)
		tp_release_defer(&t->rel, s, tp_engine_on_consumed, e);
	/* seq_cst: the store half of the handshake in all_done() (see
	 * there): ordered before our load of orch_done below. */
	atomic_fetch_add_explicit(&e->completed_tasks, 1, memory_order_seq_cst);
	if (all_done(e))
		tp_engine_wake_all(e);
}

/* Whether every core of cluster @ci is idle (the cluster's cores all
 * belong to one scheduler thread). */
static bool cluster_idle(struct tp_engine *e, int ci)
{
	for (int sl = TP_SLOT_AIC; sl <= TP_SLOT_AIV1; sl++)
		if (e->cores[tp_topo_core_id(e->block_dim, ci, (enum tp_subslot)sl)].running)
			return false;
	return true;
}

/* Set @ce's running task (NULL: idle) and keep the idle counters. */
static void set_running(struct tp_engine *e, struct tp_sched_thread *t,
			struct tp_core_exec *ce, struct tp_slot *s)
{
	bool was_idle = ce->running == NULL, now_idle = s == NULL;
	if (was_idle == now_idle) {
		ce->running = s;
		return;
	}
	int ci = tp_topo_cluster(e->block_dim, ce->core_id);
	bool cl_before = cluster_idle(e, ci);
	ce->running = s;
	bool cl_after = cluster_idle(e, ci);
	int ct = tp_topo_core_type(e->block_dim, ce->core_id);
	int d = now_idle ? 1 : -1;
	t->idle_by_type[ct] += d;
	/* relaxed (both counters): placement hints for the peers
	 * (peer_idle); nothing is published through them. */
	atomic_fetch_add_explicit(&e->idle_cores[ct], d, memory_order_relaxed);
	t->n_running -= d;
	if (cl_before != cl_after) {
		int dc = cl_after ? 1 : -1;
		t->idle_clusters += dc;
		atomic_fetch_add_explicit(&e->idle_clusters, dc, memory_order_relaxed);
	}
}

/* The running subtask of @ce finished: hooks, subtask count, completion. */
static void finish_running(struct tp_engine *e, struct tp_sched_thread *t,
			   struct tp_core_exec *ce, uint64_t fin_ts)
{
	struct tp_slot *s = ce->running;
	if (e->hooks_on && e->hooks.on_fin) {
		/* A gated (early-dispatched) task is dispatched, for the
		 * swimlane, when its doorbell was written: the staging write is
		 * not a dispatch of a runnable task (docs/swimlane.md "Early
		 * dispatch"). Plain read: the acquire load of COND that showed
		 * this FIN orders it after the ringer's store (see
		 * tp_engine_early_ring). */
		uint64_t disp = ce->gated ? tp_engine_payload(e, s)->early_ring_ts
					  : ce->dispatch_ts;
		/* The func_id the dispatch gave this token (an AIV task can run
		 * on either AIV core of a cluster, so the core's subslot does not
		 * name the task's kernel slot). Kept beside the token, not read
		 * back from the payload: that line is the AICore's too, and the
		 * read missed (engine_internal.h, struct tp_dispatch_payload). */
		e->hooks.on_fin(e->hooks.ud, t->idx, ce->core_id, s->task_id, ce->running_func,
				ce->running_token, disp, fin_ts);
	}
	struct tp_async_slab *sl = &ce->slab[ce->running_token & 1];
	if (sl->n)
		tp_async_take(e, s, sl); /* §2.9 step 1: deferred completions */
	if (tp_slot_on_subtask_complete(s) && !tp_async_defer(e, s))
		complete_task(e, t, s);
}

/* Promote @ce's pending task to running (its ACK was observed iff @acked),
 * or go idle when there is none. */
static void promote_pending(struct tp_engine *e, struct tp_sched_thread *t,
			    struct tp_core_exec *ce, bool acked)
{
	struct tp_slot *p = ce->pending;
	ce->pending = NULL;
	ce->gated = false; /* a gated task is never followed by a pending one */
	if (p) {
		ce->running_token = ce->pending_token;
		ce->running_func = ce->pending_func;
		ce->dispatch_ts = ce->pending_dispatch_ts;
		ce->running_acked = acked;
		ce->running = p; /* busy → busy: counters unchanged */
	} else {
		ce->running_acked = false;
		set_running(e, t, ce, NULL);
	}
}

/* decide_slot_transition + its application (spec §2.9 table). A gated
 * (early-dispatch) task is staged only on an idle core and never gets a
 * pending task behind it, so it is handled as a plain running task: its
 * ACK comes before the gate opens, its FIN after. Return: subtasks
 * finished. */
static uint32_t core_transition(struct tp_engine *e, struct tp_sched_thread *t,
				struct tp_core_exec *ce, uint32_t cond)
{
	const uint32_t tok = cond & TP_COND_TOKEN_MASK;
	const bool fin = (cond & TP_COND_FIN_BIT) != 0;
	if (ce->pending && tok == ce->pending_token) {
		/* Pending token, ACK or FIN: the core is serial, so the
		 * running task is done; the pending one too if FIN. */
		uint64_t fin_ts = e->stamp_tasks ? tp_sys_cnt_after_loads() : 0;
		finish_running(e, t, ce, fin_ts);
		promote_pending(e, t, ce, true);
		if (!fin)
			return 1;
		finish_running(e, t, ce, fin_ts);
		promote_pending(e, t, ce, true);
		return 2;
	}
	if (tok != ce->running_token)
		return 0; /* still the previous token's COND: not started */
	if (!fin) {
		/* Running token, ACK: only opens the PENDING stage. */
		ce->running_acked = true;
		return 0;
	}
	ce->running_acked = true;
	if (ce->pending)
		return 0; /* running FIN, normal pending: wait for its ACK */
	/* Running token, FIN, no pending: done, core → idle. */
	uint64_t fin_ts = e->stamp_tasks ? tp_sys_cnt_after_loads() : 0;
	finish_running(e, t, ce, fin_ts);
	promote_pending(e, t, ce, true);
	return 1;
}

/* Whether COND @cond on @ce means a transition core_transition() applies. */
static bool core_has_event(const struct tp_core_exec *ce, uint32_t cond)
{
	const uint32_t tok = cond & TP_COND_TOKEN_MASK;
	if (ce->pending && tok == ce->pending_token)
		return true;
	if (tok != ce->running_token)
		return false;
	if (!(cond & TP_COND_FIN_BIT))
		return !ce->running_acked;
	return !ce->pending || !ce->running_acked;
}

/* check_running_cores_for_completion (§2.9). */
static uint32_t poll_completion(struct tp_engine *e, struct tp_sched_thread *t)
{
	uint32_t n = 0;
	for (int i = 0; i < t->n_cores && t->n_running; i++) {
		struct tp_core_exec *ce = &e->cores[t->core_ids[i]];
		if (!ce->running)
			continue;
		uint32_t cond = tp_reg_read(e->dev, ce->core_id, TP_REG_COND);
		n += core_transition(e, t, ce, cond);
	}
	return n;
}

/* relaxed: a running maximum for the statistics (fill_result). */
/* The statistics of struct tp_sched_thread: single writer (the owning
 * thread), so a relaxed load and store, no read-modify-write; relaxed:
 * fill_result reads them after the join (or a stall's snapshot). */
static inline void stat_add(_Atomic uint64_t *a, uint64_t v)
{
	atomic_store_explicit(a, atomic_load_explicit(a, memory_order_relaxed) + v,
			      memory_order_relaxed);
}

static inline void stat_max(_Atomic uint64_t *a, uint64_t v)
{
	if (atomic_load_explicit(a, memory_order_relaxed) < v)
		atomic_store_explicit(a, v, memory_order_relaxed);
}

/* publish_subtask_to_core (§2.7): block @block of @s on @ce, as its running
 * task if the core is idle, else as its pending task (the running one must
 * have ACKed, and no pending may be there). */
static uint32_t dispatch_subtask_ex(struct tp_engine *e, struct tp_sched_thread *t,
				   struct tp_core_exec *ce, struct tp_slot *s,
				   enum tp_subslot ks, uint32_t block, bool gated)
{
	uint32_t tok = tp_reg_token_next(&ce->dispatch_seq);
	struct tp_dispatch_payload *pl = &ce->payload[tok & 1];
	ce->slab[tok & 1].n = 0;
	int32_t func = s->kernel_id[ks];
	pl->task_id = s->task_id;
	pl->func_id = func;
	pl->fn = e->cfg.kernels[func].fn;
	pl->args = tp_engine_payload(e, s)->args;
	pl->block_idx = block;
	pl->block_num = s->logical_block_num;
	pl->gated = gated;
	if (gated && tp_reg_read(e->dev, ce->core_id, TP_REG_DATA_MAIN_BASE_HI) == tok)
		tp_reg_write(e->dev, ce->core_id, TP_REG_DATA_MAIN_BASE_HI, 0);
	const bool as_pending = ce->running != NULL;
	uint64_t ts = e->stamp_tasks ? tp_sys_cnt() : 0;
	if (as_pending) {
		if (!ce->running_acked || ce->pending || e->cfg.single_issue) {
			/* A bug: the core could lose a token. */
			TP_ERROR("runtime: core %d: pending dispatch without ACK", ce->core_id);
			/* A statistic (flags the bug in the result). */
			stat_max(&t->max_outstanding, 3);
		}
		ce->pending = s;
		ce->pending_token = tok;
		ce->pending_func = func;
		ce->pending_dispatch_ts = ts;
		stat_add(&t->n_pending_dispatched, 1);
		stat_max(&t->max_outstanding, 2);
	} else {
		ce->running_token = tok;
		ce->running_func = func;
		ce->running_acked = false;
		ce->dispatch_ts = ts;
		ce->gated = gated;
		set_running(e, t, ce, s);
		stat_max(&t->max_outstanding, 1);
	}
	/* One thread executes per core: running means executing. */
	stat_max(&t->max_running, 1);
	if (e->hooks_on && e->hooks.on_dispatch)
		e->hooks.on_dispatch(e->hooks.ud, t->idx, ce->core_id, s->task_id, func, tok, ts);
	if (as_pending && e->hooks_on && e->hooks.on_pending_dispatch)
		e->hooks.on_pending_dispatch(e->hooks.ud, t->idx, ce->core_id, s->task_id, tok,
					     ce->running_token);
	tp_aicpu_dispatch(e->dev, ce->core_id, tok);
	stat_add(&t->n_dispatched, 1);
	/* Early dispatch: a producer whose every subtask is on a core may
	 * let its consumers be staged gated.  relaxed: the RMW picks the one
	 * thread that publishes the last subtask; it reads nothing the other
	 * dispatchers wrote (the flag it sets is seq_cst,
	 * tp_engine_early_propagate). */
	if (e->early && !gated &&
	    atomic_fetch_add_explicit(&tp_engine_payload(e, s)->published, 1,
				      memory_order_relaxed) + 1 == s->total_required_subtasks)
		tp_engine_early_propagate(e, s);
	return tok;
}

static void dispatch_subtask(struct tp_engine *e, struct tp_sched_thread *t,
			     struct tp_core_exec *ce, struct tp_slot *s, enum tp_subslot ks,
			     uint32_t block)
{
	(void)dispatch_subtask_ex(e, t, ce, s, ks, block, false);
}

enum place_mode { PLACE_IDLE, PLACE_PENDING };

/* Whether @ce can take a subtask in @mode. */
static inline bool core_eligible(const struct tp_engine *e, const struct tp_core_exec *ce,
				 enum place_mode mode)
{
	if (mode == PLACE_IDLE)
		return !ce->running;
	return !e->cfg.single_issue && ce->running && ce->running_acked && !ce->pending &&
	       !ce->gated;
}

/* Whether owned cluster @ci can take a MIX block in @mode: IDLE, all three
 * cores idle; PENDING, each core idle or able to take a pending task, and
 * not all idle. */
static bool cluster_eligible(struct tp_engine *e, int ci, enum place_mode mode)
{
	if (mode == PLACE_IDLE)
		return cluster_idle(e, ci);
	if (e->cfg.single_issue || cluster_idle(e, ci))
		return false;
	for (int sl = TP_SLOT_AIC; sl <= TP_SLOT_AIV1; sl++) {
		const struct tp_core_exec *ce =
			&e->cores[tp_topo_core_id(e->block_dim, ci, (enum tp_subslot)sl)];
		if (ce->running && !core_eligible(e, ce, PLACE_PENDING))
			return false;
	}
	return true;
}

/* claim_block_range: up to @want blocks of @s from next_block_idx; re-push
 * @s to @q when blocks remain (other threads take the rest).
 * Return: blocks claimed, first in *first. */
static uint32_t claim_blocks(struct tp_engine *e, struct tp_ready_queue *q, struct tp_slot *s,
			     uint32_t want, uint32_t *first)
{
	/* relaxed: the CAS hands out disjoint block ranges; the task's payload
	 * was published by the ready queue's lock (tp_rq_pop). */
	uint32_t b = atomic_load_explicit(&s->next_block_idx, memory_order_relaxed), k;
	do {
		if (b >= s->logical_block_num)
			return 0;
		k = s->logical_block_num - b < want ? s->logical_block_num - b : want;
	} while (!atomic_compare_exchange_weak_explicit(&s->next_block_idx, &b, b + k,
							memory_order_relaxed,
							memory_order_relaxed));
	*first = b;
	if (b + k < s->logical_block_num) {
		/* relaxed: a statistic. */
		atomic_fetch_add_explicit(&e->spmd_repushes, 1, memory_order_relaxed);
		tp_rq_push(q, s);
		tp_engine_wake_all(e);
	}
	return k;
}

/* Swimlane pop_hit / pop_miss: every ready-queue pop of the dispatch step. */
static inline void count_pop(struct tp_sched_thread *t, const struct tp_slot *s)
{
	if (s)
		t->pop_hit++;
	else
		t->pop_miss++;
}

/* dispatch_shape: place ready tasks of @shape on this thread's cores in
 * @mode; SPMD tasks claim as many blocks as there are eligible places. */
static uint32_t dispatch_shape(struct tp_engine *e, struct tp_sched_thread *t,
			       enum tp_shape shape, enum place_mode mode)
{
	struct tp_ready_queue *q = &e->ready[shape];
	struct tp_slot *cur = NULL;
	uint32_t next = 0, left = 0, n = 0;
	if (shape == TP_SHAPE_MIX) {
		int places[64], np = 0;
		for (int ci = t->idx; ci < e->block_dim && np < 64; ci += e->num_sched)
			if (cluster_eligible(e, ci, mode))
				places[np++] = ci;
		for (int i = 0; i < np && tp_rq_size(q) + left; i++) {
			if (!left) {
				cur = tp_rq_pop(q);
				if (e->hooks_on)
					count_pop(t, cur);
				if (!cur)
					break;
				left = claim_blocks(e, q, cur, (uint32_t)(np - i), &next);
				if (!left) {
					i--;
					continue;
				}
			}
			for (int sl = TP_SLOT_AIC; sl <= TP_SLOT_AIV1; sl++)
				if (cur->active_mask & (1u << sl)) {
					int core = tp_topo_core_id(e->block_dim, places[i],
								   (enum tp_subslot)sl);
					dispatch_subtask(e, t, &e->cores[core], cur,
							 (enum tp_subslot)sl, next);
					n++;
				}
			next++;
			left--;
		}
		return n;
	}
	enum tp_core_type ct = shape == TP_SHAPE_AIC ? TP_CORE_AIC : TP_CORE_AIV;
	enum tp_subslot ks = shape == TP_SHAPE_AIC ? TP_SLOT_AIC : TP_SLOT_AIV0;
	if (mode == PLACE_IDLE && !t->idle_by_type[ct])
		return 0;
	for (int i = 0; i < t->n_cores && (left || tp_rq_size(q)); i++) {
		struct tp_core_exec *ce = &e->cores[t->core_ids[i]];
		if (tp_topo_core_type(e->block_dim, ce->core_id) != ct ||
		    !core_eligible(e, ce, mode))
			continue;
		if (!left) {
			cur = tp_rq_pop(q);
			if (e->hooks_on)
				count_pop(t, cur);
			if (!cur)
				break;
			uint32_t places = 0;
			for (int j = i; j < t->n_cores; j++) {
				const struct tp_core_exec *cj = &e->cores[t->core_ids[j]];
				places += tp_topo_core_type(e->block_dim, cj->core_id) == ct &&
					  core_eligible(e, cj, mode);
			}
			left = claim_blocks(e, q, cur, places, &next);
			if (!left) {
				i--;
				continue;
			}
		}
		dispatch_subtask(e, t, ce, cur, ks, next);
		next++;
		left--;
		n++;
	}
	return n;
}

/* Whether a peer thread has an idle place for @shape (then this thread
 * leaves the task to it instead of queueing it behind a running one). */
static bool peer_idle(struct tp_engine *e, struct tp_sched_thread *t, enum tp_shape shape)
{
	/* relaxed: hints (see set_running); a stale value only changes
	 * which thread places the task. */
	if (shape == TP_SHAPE_MIX)
		return atomic_load_explicit(&e->idle_clusters, memory_order_relaxed) >
		       t->idle_clusters;
	int ct = shape == TP_SHAPE_AIC ? TP_CORE_AIC : TP_CORE_AIV;
	return atomic_load_explicit(&e->idle_cores[ct], memory_order_relaxed) >
	       t->idle_by_type[ct];
}

/* dispatch_ready_tasks, placement order of §2.7: MIX/IDLE, AIC/AIV IDLE
 * (order by thread parity), then (not under single issue) MIX/PENDING and
 * AIC/AIV PENDING, each skipped while a peer has an idle place. */
static uint32_t dispatch_ready(struct tp_engine *e, struct tp_sched_thread *t)
{
	const enum tp_shape first = t->idx & 1 ? TP_SHAPE_AIV : TP_SHAPE_AIC;
	const enum tp_shape second = t->idx & 1 ? TP_SHAPE_AIC : TP_SHAPE_AIV;
	uint32_t n = dispatch_shape(e, t, TP_SHAPE_MIX, PLACE_IDLE);
	n += dispatch_shape(e, t, first, PLACE_IDLE);
	n += dispatch_shape(e, t, second, PLACE_IDLE);
	if (e->cfg.single_issue)
		return n;
	const enum tp_shape order[3] = { TP_SHAPE_MIX, first, second };
	for (int i = 0; i < 3; i++)
		if (tp_rq_size(&e->ready[order[i]]) && !peer_idle(e, t, order[i]))
			n += dispatch_shape(e, t, order[i], PLACE_PENDING);
	return n;
}

/* Whether try_early_dispatch may run: early dispatch on, every ready
 * queue empty (spec §2.10), a candidate of a type this thread has idle. */
static bool early_possible(struct tp_engine *e, struct tp_sched_thread *t)
{
	if (!e->early)
		return false;
	for (int sh = 0; sh < TP_NUM_SHAPES; sh++)
		if (tp_rq_size(&e->ready[sh]))
			return false;
	return (t->idle_by_type[TP_CORE_AIC] && tp_rq_size(&e->early_q[TP_SHAPE_AIC])) ||
	       (t->idle_by_type[TP_CORE_AIV] && tp_rq_size(&e->early_q[TP_SHAPE_AIV]));
}

/* try_early_dispatch (spec §2.10, simplified): stage candidates gated on
 * this thread's idle cores. Return: tasks staged. */
static uint32_t try_early_dispatch(struct tp_engine *e, struct tp_sched_thread *t)
{
	uint32_t n = 0;
	for (int sh = TP_SHAPE_AIC; sh <= TP_SHAPE_AIV; sh++) {
		enum tp_core_type ct = sh == TP_SHAPE_AIC ? TP_CORE_AIC : TP_CORE_AIV;
		enum tp_subslot ks = sh == TP_SHAPE_AIC ? TP_SLOT_AIC : TP_SLOT_AIV0;
		for (int i = 0; i < t->n_cores && t->idle_by_type[ct]; i++) {
			struct tp_core_exec *ce = &e->cores[t->core_ids[i]];
			if (tp_topo_core_type(e->block_dim, ce->core_id) != ct || ce->running)
				continue;
			struct tp_slot *s;
			struct tp_task_payload *p = NULL;
			while ((s = tp_rq_pop(&e->early_q[sh]))) {
				p = tp_engine_payload(e, s);
				uint8_t from = TP_EARLY_CANDIDATE;
				/* acq_rel / acquire: as engine.c early_cas (a
				 * handover between consider, stager and router);
				 * failure: the router took it (READY). */
				if (atomic_compare_exchange_strong_explicit(
					    &p->early_state, &from, TP_EARLY_STAGING,
					    memory_order_acq_rel, memory_order_acquire))
					break; /* else stale: routed normally */
			}
			if (!s)
				break;
			uint32_t tok = dispatch_subtask_ex(e, t, ce, s, ks, 0, true);
			p->early_core = ce->core_id;
			p->early_token = tok;
			stat_add(&t->n_early_staged, 1);
			if (e->hooks_on && e->hooks.on_early_dispatch)
				e->hooks.on_early_dispatch(e->hooks.ud, t->idx, ce->core_id,
							   s->task_id, tok, tp_sys_cnt());
			uint8_t from = TP_EARLY_STAGING;
			/* acq_rel: the release half publishes early_core /
			 * early_token (and the staged payload) to the router,
			 * whose CAS STAGED -> RUNG acquires them before it rings
			 * (tp_engine_route_ready). Failure acquire: the router
			 * CASed STAGING -> RING_PENDING; we take its view of the
			 * finished producers, which our doorbell write (a
			 * release) passes on to the core. */
			if (!atomic_compare_exchange_strong_explicit(
				    &p->early_state, &from, TP_EARLY_STAGED,
				    memory_order_acq_rel, memory_order_acquire)) {
				/* It became ready while staging: ring it here.
				 * release: RUNG is terminal; only the != NONE
				 * filter of tp_engine_early_consider() reads it
				 * again, so this orders nothing anyone needs (a
				 * plain store would do; kept release like every
				 * other transition, on a rare path). */
				atomic_store_explicit(&p->early_state, TP_EARLY_RUNG,
						      memory_order_release);
				tp_engine_early_ring(e, s);
			}
			n++;
		}
	}
	return n;
}

/* Whether this thread could place a task of @shape now. */
static bool can_place(struct tp_engine *e, struct tp_sched_thread *t, enum tp_shape shape)
{
	if (!tp_rq_size(&e->ready[shape]))
		return false;
	if (shape == TP_SHAPE_MIX) {
		for (int ci = t->idx; ci < e->block_dim; ci += e->num_sched)
			if (cluster_eligible(e, ci, PLACE_IDLE))
				return true;
	} else if (t->idle_by_type[shape == TP_SHAPE_AIC ? TP_CORE_AIC : TP_CORE_AIV]) {
		return true;
	}
	if (e->cfg.single_issue || peer_idle(e, t, shape))
		return false;
	if (shape == TP_SHAPE_MIX) {
		for (int ci = t->idx; ci < e->block_dim; ci += e->num_sched)
			if (cluster_eligible(e, ci, PLACE_PENDING))
				return true;
		return false;
	}
	enum tp_core_type ct = shape == TP_SHAPE_AIC ? TP_CORE_AIC : TP_CORE_AIV;
	for (int i = 0; i < t->n_cores; i++) {
		const struct tp_core_exec *ce = &e->cores[t->core_ids[i]];
		if (tp_topo_core_type(e->block_dim, ce->core_id) == ct &&
		    core_eligible(e, ce, PLACE_PENDING))
			return true;
	}
	return false;
}

/* Dummy drain (§2.10): up to 8 per iteration, completed inline; dummy
 * tasks and predicated skips (predicate false at the ready point). */
static uint32_t drain_dummies(struct tp_engine *e, struct tp_sched_thread *t, uint64_t *start,
			      int16_t d0[3])
{
	uint32_t n = 0;
	struct tp_slot *s;
	/* Markers and the dummy bar where the runtime has the dummy-task
	 * path (e->dummy_path: not on a5 HBG, seed 002 §2); elsewhere the
	 * dummies complete without a record. */
	const bool hooks = e->hooks_on && e->dummy_path;
	while (n < DUMMY_BATCH && (s = tp_rq_pop(&e->dummy))) {
		if (n == 0 && hooks && e->stamp_phases) { /* the dummy bar's start */
			*start = tp_sys_cnt();
			if (e->hooks.on_phase_detail)
				sample_depth(e, d0);
		}
		const bool pred = tp_engine_payload(e, s)->pred_skip;
		if (hooks && e->hooks.on_marker) {
			int16_t dm[3];
			sample_depth(e, dm);
			e->hooks.on_marker(e->hooks.ud, t->idx, pred, s->task_id, tp_sys_cnt(),
					   t->loop_iter, dm);
		}
		if (pred) {
			if (hooks && !e->hooks.on_marker && e->hooks.on_predicated_skip)
				e->hooks.on_predicated_skip(e->hooks.ud, t->idx, s->task_id,
							    tp_sys_cnt());
			stat_add(&t->n_pred_skips, 1);
		} else {
			if (hooks && !e->hooks.on_marker && e->hooks.on_dummy)
				e->hooks.on_dummy(e->hooks.ud, t->idx, s->task_id,
						  tp_sys_cnt());
			stat_add(&t->n_dummy, 1);
		}
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
	/* acquire: pairs with the release stores of abort_all (stall(), a
	 * failed handshake), which publish core_stuck. */
	if (atomic_load_explicit(&e->abort_all, memory_order_acquire))
		return true;
	if (t->n_running == 0 && all_done(e))
		return true;
	for (int i = 0; i < t->n_cores; i++) {
		struct tp_core_exec *ce = &e->cores[t->core_ids[i]];
		if (ce->running &&
		    core_has_event(ce, tp_reg_read(e->dev, ce->core_id, TP_REG_COND)))
			return true;
	}
	if (t->idx < DUMMY_THREADS && tp_rq_size(&e->dummy))
		return true;
	if (tp_async_count(e) && tp_async_any_ready(e))
		return true;
	for (int sh = 0; sh < TP_NUM_SHAPES; sh++)
		if (can_place(e, t, (enum tp_shape)sh))
			return true;
	return early_possible(e, t);
}

/* The watchdog fired after @idle_ns without progress (the stall timeout
 * plus up to the check's resolution, base/watchdog.h): fail the run,
 * naming the first task still on one of our cores, or else an async
 * wait, and abort every scheduler. */
static void stall(struct tp_engine *e, struct tp_sched_thread *t, uint64_t idle_ns)
{
	char nb[32];
	const unsigned long long idle_ms = idle_ns / 1000000u;
	for (int i = 0; i < t->n_cores; i++) {
		struct tp_core_exec *ce = &e->cores[t->core_ids[i]];
		if (!ce->running)
			continue;
		int func = ce->running_func;
		tp_engine_fail(e, -ETIMEDOUT, ce->running->task_id, func,
			       "runtime: scheduler thread %d: task 0x%llx (%s) on core %d "
			       "made no progress for %llu ms (stall timeout %llu ms); %s",
			       t->idx, (unsigned long long)ce->running->task_id,
			       tp_engine_func_name(e, func, nb, sizeof(nb)), ce->core_id, idle_ms,
			       (unsigned long long)e->cfg.stall_timeout_ms, TP_ENGINE_STALL_HINT);
		/* relaxed: published by the release store of abort_all below. */
		atomic_store_explicit(&e->core_stuck, true, memory_order_relaxed);
		tp_device_shorten_teardown(e->dev, STUCK_TEARDOWN_NS);
		break;
	}
	const uint32_t *addr = NULL;
	uint32_t value = 0;
	tp_task_id aid = tp_async_first_task(e, &addr, &value);
	/* acquire (the counter load below): as async.c counter_load(); here
	 * only the message's "now" value. */
	if (aid != TP_TASK_ID_INVALID)
		tp_engine_fail(e, -ETIMEDOUT, aid, -1,
			       "runtime: scheduler thread %d: task 0x%llx waits for counter "
			       "%p >= %u (now %u): no progress for %llu ms (stall timeout "
			       "%llu ms); %s", t->idx,
			       (unsigned long long)aid, (const void *)addr, value,
			       __atomic_load_n(addr, __ATOMIC_ACQUIRE), idle_ms,
			       (unsigned long long)e->cfg.stall_timeout_ms, TP_ENGINE_STALL_HINT);
	/* release: pairs with the acquire loads of abort_all (the loop
	 * condition, has_work, the exit path), publishing core_stuck; the
	 * wake's fence orders it for parked schedulers' re-checks. */
	atomic_store_explicit(&e->abort_all, true, memory_order_release);
	tp_engine_wake_all(e);
}

/* Scheduler 0, idle: whether the orchestration has been stuck in the
 * case's code for a whole stall timeout: no runtime call returned or in
 * progress, not done, and every task it submitted finished (the device
 * has nothing to do; a stuck kernel is stall()'s). An orchestration that
 * looped for ever hung the run with no message. */
static bool orch_stuck(struct tp_engine *e, struct tp_sched_thread *t, uint64_t now)
{
	/* relaxed: see orch_calls. */
	uint64_t calls = atomic_load_explicit(&e->orch_calls, memory_order_relaxed);
	bool in_call = atomic_load_explicit(&e->orch_in_call, memory_order_relaxed);
	/* acquire: pairs with the orchestrator's seq_cst store of orch_done. */
	bool busy = in_call || calls != t->orch_seen ||
		    atomic_load_explicit(&e->orch_done, memory_order_acquire);
	if (!busy) {
		uint64_t submitted = 0;
		for (int r = 0; r < TP_MAX_RING_DEPTH; r++)
			submitted += tp_ring_current(&e->rings[r]);
		/* acquire: pairs with the completers' release increments. */
		busy = atomic_load_explicit(&e->completed_tasks, memory_order_acquire) < submitted;
	}
	if (busy) {
		t->orch_seen = calls;
		t->orch_seen_ns = now;
		return false;
	}
	return now - t->orch_seen_ns >= e->stall_ns;
}

/* The run fails on a stuck orchestration: its AICPU thread is left
 * running (tp_device_abandon_aicpu: the teardown does not wait for it). */
static void orch_stall(struct tp_engine *e, uint64_t idle_ns)
{
	tp_engine_fail(e, -ETIMEDOUT, TP_TASK_ID_INVALID, -1,
		       "runtime: the orchestration made no runtime call for %llu ms (stall "
		       "timeout %llu ms) after every task it had submitted finished: it is stuck "
		       "in the case's orchestration function (a loop or a wait that does not "
		       "end); %s",
		       (unsigned long long)(idle_ns / 1000000u),
		       (unsigned long long)e->cfg.stall_timeout_ms, TP_ENGINE_STALL_HINT);
	tp_device_abandon_aicpu(e->dev);
	tp_device_shorten_teardown(e->dev, STUCK_TEARDOWN_NS);
	/* release: as in stall(). */
	atomic_store_explicit(&e->abort_all, true, memory_order_release);
	tp_engine_wake_all(e);
}

void tp_sched_thread_main(struct tp_engine *e, struct tp_aicpu *cpu, int idx)
{
	struct tp_sched_thread *t = &e->sched[idx];
	const bool hooks = e->hooks_on;
	const bool phases = e->stamp_phases;
	t->bell = tp_aicpu_doorbell(cpu);
	tp_sched_cur_thread = idx;
	t->rel.n = 0;
	/* release: pairs with the acquire load in tp_engine_wake_all(); the
	 * doorbell was initialised (tp_aicpu_doorbell) before its pointer is
	 * seen. */
	atomic_store_explicit(&e->sched_bells[idx], t->bell, memory_order_release);

	/* Preamble: handshake our own cores (§2.12 step 1). */
	int rc = tp_aicpu_open_cores(e->dev, t->core_ids, t->n_cores, HANDSHAKE_NS);
	if (rc) {
		tp_engine_fail(e, rc, TP_TASK_ID_INVALID, -1,
			       "runtime: scheduler thread %d: core handshake failed: %s",
			       idx, tp_last_error());
		/* release: as in stall() (pairs with the acquire loads of
		 * abort_all). */
		atomic_store_explicit(&e->abort_all, true, memory_order_release);
		tp_engine_wake_all(e);
	}
	for (int i = 0; i < t->n_cores; i++) {
		int ct = tp_topo_core_type(e->block_dim, t->core_ids[i]);
		tp_reg_set_cond_listener(e->dev, t->core_ids[i], t->bell);
		t->idle_by_type[ct]++;
		/* relaxed: a placement hint, as in set_running. */
		atomic_fetch_add_explicit(&e->idle_cores[ct], 1, memory_order_relaxed);
	}
	for (int ci = idx; ci < e->block_dim; ci += e->num_sched)
		t->idle_clusters++;
	/* relaxed: as above. */
	atomic_fetch_add_explicit(&e->idle_clusters, t->idle_clusters, memory_order_relaxed);
	/* PMU run init of our cores: after their handshake, before any
	 * dispatch to them (only this thread dispatches to them). */
	if (!rc && hooks && e->hooks.on_sched_cores_up)
		e->hooks.on_sched_cores_up(e->hooks.ud, idx, t->core_ids, t->n_cores);

	uint64_t sched_start = hooks ? tp_sys_cnt() : 0;
	t->orch_seen = 0;
	t->orch_seen_ns = tp_now_ns();
	/* Progress watchdog (§2.11 step 5): the park below sleeps at most
	 * PARK_NS <= TP_WATCHDOG_PERIOD_NS between its checks. */
	struct tp_watchdog wd;
	tp_watchdog_start(&wd, e->stall_ns, tp_now_ns());
	struct park_ctx pc = { e, t };

	/* Swimlane: the anchor (stamp + depth_mark) an iteration that made
	 * progress ends with; 0: none. The next iteration starts from it
	 * instead of taking a stamp and a depth sample of its own: its first
	 * bar then begins where the last one ended (the loop's few instructions
	 * between them included), and a busy iteration takes one stamp and
	 * one sample of the shared queue sizes fewer. */
	uint64_t carry = 0;
	/* acquire: pairs with the release stores of abort_all (stall(), a
	 * failed handshake). */
	while (!atomic_load_explicit(&e->abort_all, memory_order_acquire)) {
		t->loop_iter++;
		uint64_t t_phase = 0;
		if (phases) {
			if (carry) {
				t_phase = carry; /* depth_mark is that instant's */
				carry = 0;
			} else {
				t_phase = tp_sys_cnt();
				mark(e, t);
			}
		}
		bool progress = false;

		/* 0: termination. */
		if (t->n_running == 0 && all_done(e))
			break;
		/* 1: completion poll (+ resolve). A bar only when it completed
		 * something, but the anchor moves to the poll's end whenever a
		 * poll ran (spec/runtime-model.md §2.11 step 1): the next bar
		 * of the iteration (dispatch, say) does not hold the time of
		 * a poll that found nothing. */
		if (t->n_running) {
			uint32_t n = poll_completion(e, t);
			if (phases) {
				uint64_t now = tp_sys_cnt();
				if (n)
					phase_mark(e, t, TP_PHASE_COMPLETE, t_phase, now, n, NULL);
				else
					mark(e, t);
				t_phase = now;
			}
			progress |= n > 0;
		}
		/* 2: async poll (bar even with 0 completions, §2.11). */
		if (tp_async_count(e)) {
			struct tp_slot *done[TP_MAX_ASYNC_WAITS];
			uint32_t n = tp_async_poll(e, done, TP_MAX_ASYNC_WAITS);
			for (uint32_t i = 0; i < n; i++)
				complete_task(e, t, done[i]);
			if (phases) {
				uint64_t now = tp_sys_cnt();
				phase_mark(e, t, TP_PHASE_ASYNC_POLL, t_phase, now, n, NULL);
				t_phase = now;
			}
			progress |= n > 0;
		}
		/* 3: dummy drain. */
		if (t->idx < DUMMY_THREADS) {
			uint64_t d0 = 0;
			int16_t dd0[3] = { 0, 0, 0 };
			uint32_t n = drain_dummies(e, t, &d0, dd0);
			if (n && phases && e->dummy_path) {
				t_phase = tp_sys_cnt();
				phase_mark(e, t, TP_PHASE_DUMMY, d0, t_phase, n, dd0);
			}
			progress |= n > 0;
		}
		/* 4: dispatch. */
		uint32_t nd = dispatch_ready(e, t);
		if (nd && phases) {
			uint64_t now = tp_sys_cnt();
			phase_mark(e, t, TP_PHASE_DISPATCH, t_phase, now, nd, NULL);
			t_phase = now;
		}
		progress |= nd > 0;
		/* 4b: early dispatch. */
		if (early_possible(e, t)) {
			int16_t de0[3] = { 0, 0, 0 };
			const uint64_t e0 = own_start(e, phases, de0);
			uint32_t ne = try_early_dispatch(e, t);
			if (ne && phases) {
				t_phase = tp_sys_cnt();
				phase_mark(e, t, TP_PHASE_EARLY_DISPATCH, e0, t_phase, ne, de0);
			}
			progress |= ne > 0;
		}
		/* 5: no progress → deferred releases, then park. */
		if (progress) {
			/* Every step above leaves (t_phase, depth_mark) at one
			 * instant: the end of its bar, or the anchor it took. */
			carry = t_phase;
			tp_watchdog_kick(&wd, tp_now_ns());
			continue;
		}
		if (t->rel.n) {
			/* The release bar is [start, end] of the drain itself
			 * (§2.11 step 5), not the iteration's empty steps before
			 * it; its end is the next iteration's anchor. */
			int16_t dr0[3] = { 0, 0, 0 };
			const uint64_t r0 = own_start(e, phases, dr0);
			uint32_t n = tp_release_flush(&t->rel, tp_engine_on_consumed, e);
			if (n && phases) {
				uint64_t now = tp_sys_cnt();
				phase_mark(e, t, TP_PHASE_RELEASE, r0, now, n, dr0);
				carry = now;
			}
			continue;
		}
		/* The budget runs only while work is outstanding: a thread
		 * idle for long must not fail at once when work appears
		 * without a progress step of its own (an async wait of
		 * another thread's task). */
		if (!t->n_running && !tp_async_count(e)) {
			uint64_t now = tp_now_ns();
			tp_watchdog_kick(&wd, now);
			if (t->idx == 0 && !e->hbg && e->stall_ns != TP_WATCHDOG_NEVER &&
			    orch_stuck(e, t, now)) {
				orch_stall(e, now - t->orch_seen_ns);
				break;
			}
		} else {
			uint64_t now = tp_now_ns();
			if (tp_watchdog_expired(&wd, now)) {
				stall(e, t, tp_watchdog_idle_ns(&wd, now));
				break;
			}
		}
		tp_doorbell_wait(t->bell, has_work, &pc, PARK_NS);
	}

	/* After the loop: leftover releases, shutdown of our cores. */
	tp_release_flush(&t->rel, tp_engine_on_consumed, e);
	tp_sched_cur_thread = -1;
	if (hooks && e->hooks.on_phase_detail && (t->pop_hit || t->pop_miss)) {
		/* Residual pop counts since the last dispatch record (§2.11). */
		uint64_t now = tp_sys_cnt();
		mark(e, t);
		phase(e, t, TP_PHASE_DISPATCH, now, now, 0);
	}
	if (hooks && e->hooks.on_sched_window)
		e->hooks.on_sched_window(e->hooks.ud, idx, sched_start, tp_sys_cnt());
	if (hooks && e->hooks.on_sched_exit)
		e->hooks.on_sched_exit(e->hooks.ud, idx);
	/* PMU finalize of our cores: after the flush, before their shutdown. */
	if (!rc && hooks && e->hooks.on_sched_cores_down)
		e->hooks.on_sched_cores_down(e->hooks.ud, idx, t->core_ids, t->n_cores);
	for (int i = 0; i < t->n_cores; i++)
		tp_reg_set_cond_listener(e->dev, t->core_ids[i], NULL);
	/* acquire: pairs with stall()'s release store of abort_all, which
	 * publishes core_stuck (a thread that never saw the abort has only
	 * idle cores left, answering at once). */
	(void)atomic_load_explicit(&e->abort_all, memory_order_acquire);
	const uint64_t exit_ns =
		atomic_load_explicit(&e->core_stuck, memory_order_relaxed) ? STUCK_EXIT_NS
									  : HANDSHAKE_NS;
	/* tp_aicpu_close_cores() names each late core at ERROR itself */
	if (!rc && tp_aicpu_close_cores(e->dev, t->core_ids, t->n_cores, exit_ns))
		TP_DEBUG("runtime: scheduler thread %d: cores did not exit", idx);
}
