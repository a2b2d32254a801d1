/* SPDX-License-Identifier: MIT */
/*
 * collectors/swimlane/swl_dev.c — the device half: record writers
 * (swl_dev.h). All pointers here are device addresses.
 */
#include <string.h>

#include "base/cache.h"
#include "collectors/swimlane/swl_dev.h"
#include "collectors/swimlane/swl_internal.h"

/* Publish @core's active buffer (or none) to its AICore. Relaxed stores:
 * the AICore reads the head only after acquiring a token whose release
 * store (DATA_MAIN_BASE) the AICPU makes after these. */
static void publish_head(struct swl_dev *d, struct swl_core *c, int core)
{
	struct swl_active_head *hd = &d->heads[core];
	atomic_store_explicit(&hd->buf_ptr, (uint64_t)(uintptr_t)c->aicore_w.cur,
			      memory_order_relaxed);
	atomic_store_explicit(&hd->seq, ++c->head_seq, memory_order_relaxed);
}

/* Bind @core's writers to its owning thread's ready queue (cold path, on
 * the first dispatch). */
static void attach_core(struct swl_dev *d, struct swl_core *c, int thread, int core)
{
	int rc = 0;
	if (d->level >= SWL_LEVEL_AICPU_TIMING)
		rc = dpe_attach(&c->aicpu_w, d->h, swl_inst_aicpu(d, core), (uint32_t)thread,
				NULL, NULL);
	if (!rc)
		rc = dpe_attach(&c->aicore_w, d->h, swl_inst_aicore(d, core), (uint32_t)thread,
				NULL, NULL);
	c->attached = rc ? -1 : 1;
	if (!rc && !d->shadow)
		publish_head(d, c, core);
}

/* Put @c's retired AICore buffer on the ready queue. */
static void publish_retired(struct swl_core *c)
{
	struct tp_dpe *w = &c->aicore_w;
	if (dpe_enqueue_ready(w->h, w->q, w->instance, w->kind, (uint64_t)(uintptr_t)c->retire,
			      c->retire_seq) != 0)
		dpe_account_dropped(w, TP_DROP_READY_FULL, c->retire_n);
	c->retire = NULL;
}

/* a5: copy staging slot @slot of @core (its FIN was observed; its token
 * is staged_reg[@slot]) into the core's AICore-task buffer; a slot that
 * shows another reg_task_id is a mismatch (seed 002 §5.3). */
static void commit_staged(struct swl_dev *d, struct swl_core *c, int core, int slot)
{
	const struct swl_aicore_rec *s = &d->rings[core].dual_issue_slots[slot].rec;
	c->staged &= ~(1u << slot);
	if (s->reg_task_id == c->staged_reg[slot]) {
		/* the writer's record size is sizeof(*s): a fixed-size copy
		 * (two 16-byte moves), not a call to memcpy */
		struct swl_aicore_rec *r = dpe_reserve(&c->aicore_w);
		if (r) {
			*r = *s;
			dpe_commit(&c->aicore_w);
		}
	} else {
		struct tp_dpe *w = &c->aicore_w;
		w->total++;
		/* relaxed: device-only counters, read at reconcile. */
		atomic_store_explicit(&w->st->total_record_count, w->total, memory_order_relaxed);
		atomic_fetch_add_explicit(&w->st->mismatch_record_count, 1, memory_order_relaxed);
	}
}

void swl_dev_on_dispatch(struct swl_dev *d, int thread, int core, uint32_t reg_task_id,
			 uint64_t ts)
{
	(void)reg_task_id;
	(void)ts;
	struct swl_core *c = &d->cores[core];
	if (__builtin_expect(c->attached != 1, 0)) {
		if (!c->attached)
			attach_core(d, c, thread, core);
		if (c->attached != 1) {
			c->lost++;
			return;
		}
	}
	if (d->shadow) {
		/* a5: this token's AICore will write slot reg_task_id & 1:
		 * commit what the slot holds from the FIN two tokens back
		 * first. */
		if (c->staged & (1u << (reg_task_id & 1)))
			commit_staged(d, c, core, reg_task_id & 1);
		return;
	}
	/* a2a3: count the AICore record this dispatch will produce and make
	 * sure it has a slot (rotation, seed 002 §5.1). */
	struct tp_dpe *w = &c->aicore_w;
	w->total++;
	/* relaxed: the device is the only writer; the host reads it at
	 * reconcile, after the device threads were joined. */
	atomic_store_explicit(&w->st->total_record_count, w->total, memory_order_relaxed);
	if (w->cur && w->count >= w->cap) {
		/* Full: retire it until every task in it has FINed. At most two
		 * tasks per core are outstanding, so the previous retired buffer
		 * was published long ago; be safe anyway. */
		if (c->retire)
			publish_retired(c);
		c->retire = w->cur;
		c->retire_n = w->count;
		c->retire_seq = w->seq;
		c->retire_at = c->n_disp;
		w->cur = NULL;
		w->count = 0;
		w->seq++;
		if (c->n_fin >= c->retire_at)
			publish_retired(c);
	}
	if (!w->cur) {
		dpe_pop_free(w, w->seq);
		publish_head(d, c, core);
	}
	if (w->cur) {
		/* relaxed: published by the ready-queue release store. */
		atomic_store_explicit(&w->cur->count, ++w->count, memory_order_relaxed);
	} else {
		dpe_account_dropped(w, TP_DROP_NO_BUFFER, 1);
	}
	c->n_disp++;
}

void swl_dev_on_aicore_receive(struct swl_dev *d, int core, uint32_t reg_task_id)
{
	if (d->shadow) {
		/* Ask for the slot's line exclusive: its last reader, the
		 * AICPU (commit_staged, before this token's dispatch), holds
		 * a copy, and the store below must invalidate it. Asked now,
		 * the invalidation travels while the kernel runs instead of
		 * holding back the FIN's doorbell fence. A read prefetch
		 * (what __builtin_prefetch gives on plain x86-64) found the
		 * line already here, shared, and did nothing: under perf the
		 * AICore's doorbell ring and the AICPU's next locked counter
		 * took 5 times the samples (docs/swimlane-cost.md, 4 Dec). */
		tp_prefetch_w(&d->rings[core].dual_issue_slots[reg_task_id & 1]);
		return;
	}
	struct swl_active_head *hd = &d->heads[core];
	struct swl_aicore_local *lc = &d->local[core];
	/* relaxed: ordered after this token's acquire (see publish_head). */
	uint32_t seq = atomic_load_explicit(&hd->seq, memory_order_relaxed);
	if (seq != lc->seq) {
		lc->seq = seq;
		lc->buf_ptr = atomic_load_explicit(&hd->buf_ptr, memory_order_relaxed);
		lc->slot = 0;
	}
	/* A task without a slot was counted as dropped by the AICPU at its
	 * dispatch (no buffer). */
	lc->rec = lc->buf_ptr && lc->slot < SWL_AICORE_BUFFER_SIZE
			  ? tp_buf_record((struct tp_buf_hdr *)(uintptr_t)lc->buf_ptr,
					  sizeof(struct swl_aicore_rec), lc->slot++)
			  : NULL;
	/* A hint for the record's line (a recycled buffer's lines were last
	 * read by the host's collector). A read prefetch: PREFETCHW here
	 * (tp_prefetch_w, as on a5 above) measured 40-70 ns per task worse
	 * at level 4 in three alternating batches (docs/swimlane-cost.md,
	 * 4 Dec). */
	if (lc->rec)
		__builtin_prefetch(lc->rec, 1, 3);
}

void swl_dev_on_aicore_task(struct swl_dev *d, int core, uint64_t task_token,
			    uint32_t reg_task_id, uint64_t receive, uint64_t start, uint64_t end)
{
	uint64_t r2s = start > receive ? start - receive : 0;
	struct swl_aicore_rec rec = {
		.start = start,
		.end = end,
		.task_token = task_token,
		.reg_task_id = reg_task_id,
		.recv_to_start = r2s > UINT32_MAX ? UINT32_MAX : (uint32_t)r2s,
	};
	if (d->shadow) {
		d->rings[core].dual_issue_slots[reg_task_id & 1].rec = rec;
		return;
	}
	struct swl_aicore_local *lc = &d->local[core];
	if (lc->rec)
		memcpy(lc->rec, &rec, sizeof(rec));
	lc->rec = NULL;
}

void swl_dev_on_fin(struct swl_dev *d, int thread, int core, uint32_t reg_task_id,
		    uint64_t dispatch_ts, uint64_t finish_ts)
{
	(void)thread;
	struct swl_core *c = &d->cores[core];
	if (c->attached != 1)
		return;
	if (d->shadow) {
		/* The slot is committed later, at the dispatch that reuses it
		 * (or the thread's flush): its line is on the AICore's CPU,
		 * and reading it now would hold this FIN's completion for the
		 * transfer. Ask for it now; it is here by then. */
		const uint32_t bit = 1u << (reg_task_id & 1);
		if (c->staged & bit) /* not reused since: cannot happen */
			commit_staged(d, c, core, reg_task_id & 1);
		__builtin_prefetch(&d->rings[core].dual_issue_slots[reg_task_id & 1], 0, 3);
		c->staged_reg[reg_task_id & 1] = reg_task_id;
		c->staged |= bit;
	} else {
		c->n_fin++;
		if (c->retire && c->n_fin >= c->retire_at)
			publish_retired(c);
	}
	if (d->level >= SWL_LEVEL_AICPU_TIMING) {
		struct swl_aicpu_rec *r = dpe_reserve(&c->aicpu_w);
		if (r) {
			r->reg_task_id = reg_task_id;
			r->core_id = (uint32_t)core;
			r->dispatch = dispatch_ts;
			r->finish = finish_ts;
			r->reserved = 0;
			dpe_commit(&c->aicpu_w);
		}
	}
}

static struct tp_dpe *thread_writer(struct swl_dev *d, struct swl_thread_w *t, uint32_t inst,
				    int q)
{
	if (__builtin_expect(t->attached != 1, 0)) {
		if (!t->attached)
			t->attached = dpe_attach(&t->w, d->h, inst, (uint32_t)q, NULL, NULL) ? -1 : 1;
		if (t->attached != 1)
			return NULL;
	}
	return &t->w;
}

void swl_dev_on_sched_phase(struct swl_dev *d, int thread, uint32_t kind, uint64_t start,
			    uint64_t end, uint64_t loop_iter, uint32_t tasks, uint32_t u0,
			    uint32_t u1, const int16_t depth_start[3], const int16_t depth_end[3])
{
	if (thread < 0 || thread >= d->num_threads)
		return;
	struct tp_dpe *w = thread_writer(d, &d->sched[thread], swl_inst_sched(d, thread), thread);
	if (!w)
		return;
	struct swl_sched_rec *r = dpe_reserve(w);
	if (!r)
		return;
	r->start = start;
	r->end = end;
	r->loop_iter = loop_iter;
	r->kind = kind;
	r->tasks_processed = tasks;
	r->u.pop.pop_hit = u0;
	r->u.pop.pop_miss = u1;
	memcpy(r->shared_at_start, depth_start, sizeof(r->shared_at_start));
	memcpy(r->shared_at_end, depth_end, sizeof(r->shared_at_end));
	dpe_commit(w);
}

void swl_dev_on_orch_submit(struct swl_dev *d, uint64_t task_id, uint32_t submit_idx,
			    uint64_t start, uint64_t end)
{
	if (d->orch_thread < 0)
		return;
	struct tp_dpe *w = thread_writer(d, &d->orch, swl_inst_orch(d), d->orch_thread);
	if (!w)
		return;
	struct swl_orch_rec *r = dpe_reserve(w);
	if (!r)
		return;
	r->submit_idx = submit_idx;
	r->reserved = 0;
	r->task_id = task_id;
	r->start = start;
	r->end = end;
	dpe_commit(w);
}

void swl_dev_flush_thread(struct swl_dev *d, int thread)
{
	if (thread < 0 || thread >= d->num_threads)
		return;
	for (int core = 0; core < d->num_cores; core++) {
		if (d->core_owner[core] != thread)
			continue;
		struct swl_core *c = &d->cores[core];
		if (c->attached != 1)
			continue;
		if (d->level >= SWL_LEVEL_AICPU_TIMING)
			dpe_flush(&c->aicpu_w);
		if (d->shadow && c->staged) {
			/* Every task has FINed: commit what is staged, the
			 * older token first. */
			int first = (c->staged & 1u) && (c->staged & 2u)
					    ? (int32_t)(c->staged_reg[1] - c->staged_reg[0]) < 0
					    : !(c->staged & 1u);
			commit_staged(d, c, core, first);
			if (c->staged)
				commit_staged(d, c, core, !first);
		}
		if (!d->shadow && c->retire)
			publish_retired(c); /* every task has FINed by now */
		dpe_flush(&c->aicore_w);
		if (!d->shadow) {
			/* The AICore must not write into a buffer the host owns now. */
			publish_head(d, c, core);
		}
	}
	if (d->sched[thread].attached == 1)
		dpe_flush(&d->sched[thread].w);
}

void swl_dev_flush_orch(struct swl_dev *d)
{
	if (d->orch.attached == 1)
		dpe_flush(&d->orch.w);
}
