/* SPDX-License-Identifier: MIT */
/*
 * collectors/pmu/pmu_dev.c — the device half (pmu_dev.h). All pointers
 * here are device addresses.
 */
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "collectors/pmu/pmu_dev.h"
#include "collectors/pmu/pmu_internal.h"

int pmu_dev_init_core(struct pmu_dev *d, int core)
{
	if (!d || core < 0 || core >= d->num_cores)
		return -EINVAL;
	struct pmu_core *c = &d->cores[core];
	struct tp_pmu_note n = {0};
	int rc = tp_pmu_program(d->model, core, d->event_type, &n);
	/* The note lives in device memory the host reads only after the
	 * device stopped (reconcile), so plain stores suffice. */
	d->notes[core].init = n;
	memset(&d->notes[core].close, 0, sizeof(d->notes[core].close));
	c->window = rc == 0 && n.code != TP_PMU_NOTE_NO_WINDOW;
	c->inited = rc == 0;
	c->finalized = false;
	return rc;
}

int pmu_dev_init(struct pmu_dev *d)
{
	int first = 0;
	for (int i = 0; d && i < d->num_cores; i++) {
		int rc = pmu_dev_init_core(d, i);
		if (rc && !first)
			first = rc;
	}
	return first;
}

void pmu_dev_aicore_stage(struct pmu_dev *d, int core, uint32_t reg_task_id)
{
	if (!d || !d->shadow || core < 0 || core >= d->num_cores)
		return;
	struct tp_pmu_sample s;
	if (tp_pmu_read(d->model, core, &s) != 0)
		return;
	struct pmu_stage_slot *slot = &d->rings[core].dual_issue_slots[reg_task_id & 1];
	memcpy(slot->pmu_counters, s.counters, sizeof(slot->pmu_counters));
	slot->pmu_total_cycles = s.total_cycles;
	/* release: orders the counter and total stores above before the token
	 * (the seed's store barrier before task_id); the AICPU's acquire load
	 * of the token on FIN then sees them. The FIN the AICore writes after
	 * this is a second release edge to the same reader. */
	atomic_store_explicit(&slot->task_id, PMU_SLOT_WRITTEN | reg_task_id,
			      memory_order_release);
}

/* switch_buffer could not publish a full buffer: the spec's ERROR
 * (spec/framework.md §4.6 step 3), one per failed switch as the other
 * PMU drop lines (the flush line, the reconcile's) are not rate-limited
 * either; after a backstop trip later publishes fail fast, so at most one
 * line per 512 records of a core. */
static void pmu_enqueue_failed(struct tp_dpe *w, uint32_t n)
{
	(void)n;
	TP_ERROR("Thread %d: Core %d failed to enqueue PMU buffer (ready_queue full), data lost!",
		 (int)w->q, (int)w->instance);
}

static const struct tp_dpe_hooks pmu_hooks = {
	.on_enqueue_failed = pmu_enqueue_failed,
};

/* The core's writer, attached on its first record to @thread's queue. */
static struct tp_dpe *core_writer(struct pmu_dev *d, struct pmu_core *c, int thread, int core)
{
	/* relaxed: only the owning thread stores attached; other threads'
	 * flushes only compare it (see pmu_dev_flush_thread). */
	int att = atomic_load_explicit(&c->attached, memory_order_relaxed);
	if (__builtin_expect(att == 1, 1))
		return &c->w;
	if (!att) {
		att = dpe_attach(&c->w, d->h, (uint32_t)core, (uint32_t)thread, &pmu_hooks, NULL)
			      ? -1
			      : 1;
		atomic_store_explicit(&c->thread, thread, memory_order_relaxed);
		/* release: publishes thread (and the writer) before attached, for
		 * the acquire load in pmu_dev_flush_thread. */
		atomic_store_explicit(&c->attached, att, memory_order_release);
		if (att != 1)
			TP_ERROR("PMU: core %d cannot attach to ready queue %d: its records are "
				 "not collected",
				 core, thread);
	}
	if (att == 1)
		return &c->w;
	c->lost++;
	return NULL;
}

static struct pmu_core *core_of(struct pmu_dev *d, int core)
{
	if (!d || core < 0 || core >= d->num_cores)
		return NULL;
	struct pmu_core *c = &d->cores[core];
	return c->inited ? c : NULL;
}

static void write_record(struct tp_dpe *w, uint64_t task_id, uint32_t func_id,
			 int32_t core_type, uint64_t total, const uint32_t *counters, int n)
{
	struct pmu_record *r = dpe_reserve(w);
	if (!r)
		return; /* counted as dropped (no buffer) by the engine */
	r->task_id = task_id;
	r->func_id = func_id;
	r->core_type = core_type;
	r->pmu_total_cycles = total;
	memset(r->pmu_counters, 0, sizeof(r->pmu_counters));
	memcpy(r->pmu_counters, counters, (size_t)n * sizeof(uint32_t));
	dpe_commit(w);
}

void pmu_dev_record(struct pmu_dev *d, int thread, int core, uint64_t task_id,
		    uint32_t func_id, int32_t core_type, const struct tp_pmu_sample *s)
{
	struct pmu_core *c = core_of(d, core);
	if (!c || !c->window || !s)
		return;
	struct tp_dpe *w = core_writer(d, c, thread, core);
	if (!w)
		return;
	int n = s->n_slots < 0 ? 0 : s->n_slots > TP_PMU_MAX_SLOTS ? TP_PMU_MAX_SLOTS : s->n_slots;
	write_record(w, task_id, func_id, core_type, s->total_cycles, s->counters, n);
}

void pmu_dev_on_fin(struct pmu_dev *d, int thread, int core, uint64_t task_id,
		    uint32_t func_id, int32_t core_type, uint32_t reg_task_id)
{
	struct pmu_core *c = core_of(d, core);
	if (!c)
		return;
	if (!d->shadow) {
		if (!c->window)
			return;
		/* Read even if the record is then dropped: the read clears, so
		 * the next task's row never carries this task's counts. */
		struct tp_pmu_sample s;
		if (tp_pmu_read(d->model, core, &s) != 0)
			return;
		pmu_dev_record(d, thread, core, task_id, func_id, core_type, &s);
		return;
	}
	struct tp_dpe *w = core_writer(d, c, thread, core);
	if (!w)
		return;
	const struct pmu_stage_slot *slot = &d->rings[core].dual_issue_slots[reg_task_id & 1];
	/* acquire: pairs with the release store of the token in
	 * pmu_dev_aicore_stage, so the counters read below are that
	 * staging's. */
	uint64_t tok = atomic_load_explicit(&slot->task_id, memory_order_acquire);
	if (!(tok & PMU_SLOT_WRITTEN) || (uint32_t)tok != reg_task_id) {
		w->total++;
		/* relaxed: device-only counters, read by the host at reconcile
		 * after the device threads were joined. */
		atomic_store_explicit(&w->st->total_record_count, w->total, memory_order_relaxed);
		atomic_fetch_add_explicit(&w->st->mismatch_record_count, 1, memory_order_relaxed);
		return;
	}
	write_record(w, task_id, func_id, core_type, slot->pmu_total_cycles, slot->pmu_counters,
		     TP_PMU_MAX_SLOTS);
}

void pmu_dev_flush_thread(struct pmu_dev *d, int thread)
{
	if (!d)
		return;
	for (int i = 0; i < d->num_cores; i++) {
		struct pmu_core *c = &d->cores[i];
		/* acquire: pairs with the release in core_writer; a core attached
		 * by this thread was attached on this thread, so its writer state
		 * is ours to touch. */
		if (atomic_load_explicit(&c->attached, memory_order_acquire) != 1 ||
		    atomic_load_explicit(&c->thread, memory_order_relaxed) != thread)
			continue;
		uint32_t n = c->w.count;
		if (dpe_flush(&c->w) != 0)
			TP_ERROR("Thread %d: Core %d failed to flush PMU buffer (ready_queue full), "
				 "%u records lost!",
				 thread, i, n);
	}
}

void pmu_dev_finalize_core(struct pmu_dev *d, int core)
{
	if (!d || core < 0 || core >= d->num_cores)
		return;
	struct pmu_core *c = &d->cores[core];
	if (!c->inited || c->finalized)
		return;
	struct tp_pmu_note n = {0};
	if (tp_pmu_finalize(d->model, core, &n) == 0)
		d->notes[core].close = n;
	c->finalized = true;
}

void pmu_dev_finalize(struct pmu_dev *d)
{
	for (int i = 0; d && i < d->num_cores; i++)
		pmu_dev_finalize_core(d, i);
}
