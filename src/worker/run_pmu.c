/* SPDX-License-Identifier: MIT */
/*
 * worker/run_pmu.c — the Worker's PMU glue (run_pmu.h): adapts the
 * runtime's hook signatures to the collector's device half, which takes
 * plain values only (ARCHITECTURE.md §2), and holds the channel-53 lease.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "platform/drv_prof.h"
#include "platform/pmu_events.h"
#include "platform/pmu_model.h"
#include "platform/topology.h"
#include "taskprof/worker.h"
#include "worker/run_pmu.h"

struct wk_pmu {
	struct tp_device *dev;
	struct tp_pmu_model *model;
	struct pmu_collector *c;
	struct pmu_dev *d;
	int block_dim;
	int num_cores;
	bool a5;
	struct wk_pmu_lease *lease; /* NULL: no lease taken */
	bool lease_held;
	struct tp_sched_hooks prev; /* hooks set before wk_pmu_wire(), chained */
};

/* ---- lease (seed 000 §7.0) ------------------------------------------- */

bool wk_pmu_lease_acquire(struct wk_pmu_lease *l, struct tp_device *dev)
{
	if (l->refs++ > 0)
		return l->held;
	/* A token unique to this lease within the process and across
	 * processes: the pid in the high bits, the lease's address below. */
	l->owner = ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)l;
	if (!l->owner)
		l->owner = 1;
	l->device_id = tp_device_id(dev);
	/* cfgMode 0: the channel emits nothing into an undrained ring (seed §7.0). */
	int rc = tp_drv_prof_start(dev, TP_DRV_PROF_CHANNEL_FFTS, l->owner, 0);
	l->held = rc == 0;
	if (rc == TP_DRV_PROF_EHELD)
		TP_WARN("PMU: driver profiling channel %u on device %d is held by another owner "
			"(-10); collecting without the counting-window lease",
			TP_DRV_PROF_CHANNEL_FFTS, l->device_id);
	else if (rc)
		TP_WARN("PMU: cannot start driver profiling channel %u on device %d (%d: %s); "
			"collecting without the counting-window lease",
			TP_DRV_PROF_CHANNEL_FFTS, l->device_id, rc, tp_last_error());
	return l->held;
}

void wk_pmu_lease_release(struct wk_pmu_lease *l, struct tp_device *dev)
{
	if (l->refs <= 0 || --l->refs > 0)
		return;
	if (l->held && tp_drv_prof_stop(dev, TP_DRV_PROF_CHANNEL_FFTS, l->owner))
		TP_WARN("PMU: cannot stop driver profiling channel %u on device %d: %s",
			TP_DRV_PROF_CHANNEL_FFTS, l->device_id, tp_last_error());
	l->held = false;
}

/* ---- event type ------------------------------------------------------- */

uint32_t wk_pmu_event_type(const struct tp_platform *plat, int requested)
{
	return tp_pmu_select_event_type(tp_pmu_arch_of(plat), requested);
}

bool wk_pmu_decide(const struct tp_platform *plat, int requested, int rounds, uint32_t *type)
{
	*type = 0;
	if (requested == 0)
		return false;
	if (requested < 0) {
		/* Resolved on every run like the reference (the WARN names the
		 * value); enablement is separate: PMU stays off. */
		(void)tp_pmu_resolve_event_type(tp_pmu_arch_of(plat), requested);
		return false;
	}
	if (rounds > 1) {
		TP_INFO("PMU disabled: --rounds > 1");
		return false;
	}
	*type = wk_pmu_event_type(plat, requested);
	return true;
}

/* ---- open ---------------------------------------------------------------- */

int wk_pmu_open(struct wk_pmu **out, struct tp_device *dev, int aicpu_threads, bool hbg,
		uint32_t event_type, uint64_t run_epoch, const char *dir,
		struct wk_pmu_lease *lease)
{
	*out = NULL;
	struct wk_pmu *p = calloc(1, sizeof(*p));
	if (!p)
		return tp_set_error(-ENOMEM, "pmu: out of memory");
	p->dev = dev;
	p->block_dim = tp_device_block_dim(dev);
	p->num_cores = tp_topo_num_cores(p->block_dim);
	p->a5 = tp_pmu_arch_of(tp_device_platform(dev)) == TP_PMU_ARCH_A5;
	int rc = tp_pmu_model_create(dev, &p->model);
	if (rc) {
		free(p);
		return rc;
	}
	if (lease) {
		p->lease = lease;
		p->lease_held = wk_pmu_lease_acquire(lease, dev);
	}
	struct pmu_config cfg = {
		.model = p->model,
		.num_cores = p->num_cores,
		.num_threads = hbg ? aicpu_threads : aicpu_threads - 1,
		.event_type = event_type,
		.run_epoch = run_epoch,
		.output_prefix = dir,
	};
	p->c = pmu_open(&cfg);
	if (!p->c) {
		rc = -EINVAL;
		goto fail;
	}
	p->d = pmu_dev(p->c);
	if ((rc = pmu_start(p->c)))
		goto fail;
	*out = p;
	return 0;
fail:
	wk_pmu_close(p);
	return rc;
}

/* ---- PMU hook adapters (device side) ----------------------------------- */

static void h_cores_up(void *ud, int thread, const int *cores, int n)
{
	struct wk_pmu *p = ud;
	if (p->prev.on_sched_cores_up)
		p->prev.on_sched_cores_up(p->prev.ud, thread, cores, n);
	for (int i = 0; i < n; i++)
		pmu_dev_init_core(p->d, cores[i]);
}

static void h_fin(void *ud, int thread, int core, tp_task_id task, int func_id,
		  uint32_t reg_task_id, uint64_t dispatch_ts, uint64_t finish_ts)
{
	struct wk_pmu *p = ud;
	if (p->prev.on_fin)
		p->prev.on_fin(p->prev.ud, thread, core, task, func_id, reg_task_id, dispatch_ts,
			       finish_ts);
	pmu_dev_on_fin(p->d, thread, core, task, (uint32_t)func_id,
		       (int32_t)tp_topo_core_type(p->block_dim, core), reg_task_id);
}

static void h_aicore_done(void *ud, int core, tp_task_id task, uint32_t reg_task_id)
{
	struct wk_pmu *p = ud;
	if (p->prev.on_aicore_done)
		p->prev.on_aicore_done(p->prev.ud, core, task, reg_task_id);
	pmu_dev_aicore_stage(p->d, core, reg_task_id);
}

static void h_sched_exit(void *ud, int thread)
{
	struct wk_pmu *p = ud;
	if (p->prev.on_sched_exit)
		p->prev.on_sched_exit(p->prev.ud, thread);
	pmu_dev_flush_thread(p->d, thread);
}

static void h_cores_down(void *ud, int thread, const int *cores, int n)
{
	struct wk_pmu *p = ud;
	if (p->prev.on_sched_cores_down)
		p->prev.on_sched_cores_down(p->prev.ud, thread, cores, n);
	for (int i = 0; i < n; i++)
		pmu_dev_finalize_core(p->d, cores[i]);
}

/* ---- forwarders of the hooks set before (swimlane, the Worker) --------- */

#define PREV(ud) (&((struct wk_pmu *)(ud))->prev)

static void f_phase(void *ud, int thread, enum tp_sched_phase ph, uint64_t s, uint64_t e,
		    uint64_t it, uint32_t n)
{
	PREV(ud)->on_phase(PREV(ud)->ud, thread, ph, s, e, it, n);
}

static void f_dispatch(void *ud, int thread, int core, tp_task_id task, int func_id,
		       uint32_t tok, uint64_t ts)
{
	PREV(ud)->on_dispatch(PREV(ud)->ud, thread, core, task, func_id, tok, ts);
}

static void f_dummy(void *ud, int thread, tp_task_id task, uint64_t ts)
{
	PREV(ud)->on_dummy(PREV(ud)->ud, thread, task, ts);
}

static void f_sched_window(void *ud, int thread, uint64_t s, uint64_t e)
{
	PREV(ud)->on_sched_window(PREV(ud)->ud, thread, s, e);
}

static void f_orch_submit(void *ud, tp_task_id task, uint64_t idx, uint64_t s, uint64_t e)
{
	PREV(ud)->on_orch_submit(PREV(ud)->ud, task, idx, s, e);
}

static void f_pending(void *ud, int thread, int core, tp_task_id task, uint32_t tok,
		      uint32_t running)
{
	PREV(ud)->on_pending_dispatch(PREV(ud)->ud, thread, core, task, tok, running);
}

static void f_pred_skip(void *ud, int thread, tp_task_id task, uint64_t ts)
{
	PREV(ud)->on_predicated_skip(PREV(ud)->ud, thread, task, ts);
}

static void f_graph_built(void *ud, uint64_t tasks, uint64_t s, uint64_t e)
{
	PREV(ud)->on_graph_built(PREV(ud)->ud, tasks, s, e);
}

static void f_early_dispatch(void *ud, int thread, int core, tp_task_id task, uint32_t tok,
			     uint64_t ts)
{
	PREV(ud)->on_early_dispatch(PREV(ud)->ud, thread, core, task, tok, ts);
}

static void f_early_doorbell(void *ud, int thread, int core, tp_task_id task, uint32_t tok,
			     uint64_t ts)
{
	PREV(ud)->on_early_doorbell(PREV(ud)->ud, thread, core, task, tok, ts);
}

static void f_aicore_task(void *ud, int core, tp_task_id task, uint32_t tok, uint64_t r,
			  uint64_t s, uint64_t e)
{
	PREV(ud)->on_aicore_task(PREV(ud)->ud, core, task, tok, r, s, e);
}

static void f_phase_detail(void *ud, int thread, enum tp_sched_phase ph, uint64_t s,
			   uint64_t e, uint64_t it, uint32_t n, const struct tp_phase_detail *d)
{
	PREV(ud)->on_phase_detail(PREV(ud)->ud, thread, ph, s, e, it, n, d);
}

static void f_marker(void *ud, int thread, bool pred, tp_task_id task, uint64_t ts,
		     uint64_t it, const int16_t depth[3])
{
	PREV(ud)->on_marker(PREV(ud)->ud, thread, pred, task, ts, it, depth);
}

static void f_aicore_receive(void *ud, int core, uint32_t tok)
{
	PREV(ud)->on_aicore_receive(PREV(ud)->ud, core, tok);
}

#define FWD(field, fn) .field = h->field ? fn : NULL

void wk_pmu_wire(struct wk_pmu *p, struct tp_sched_hooks *h, struct tp_engine_config *ec)
{
	p->prev = *h;
	struct tp_sched_hooks n = {
		FWD(on_phase, f_phase),
		FWD(on_dispatch, f_dispatch),
		FWD(on_dummy, f_dummy),
		FWD(on_sched_window, f_sched_window),
		FWD(on_orch_submit, f_orch_submit),
		FWD(on_pending_dispatch, f_pending),
		FWD(on_predicated_skip, f_pred_skip),
		FWD(on_graph_built, f_graph_built),
		FWD(on_early_dispatch, f_early_dispatch),
		FWD(on_early_doorbell, f_early_doorbell),
		FWD(on_aicore_task, f_aicore_task),
		FWD(on_phase_detail, f_phase_detail),
		FWD(on_marker, f_marker),
		FWD(on_aicore_receive, f_aicore_receive),
		.on_fin = h_fin,
		.on_sched_exit = h_sched_exit,
		.on_sched_cores_up = h_cores_up,
		.on_sched_cores_down = h_cores_down,
		/* a2a3 reads at FIN on the AICPU: no AICore staging step. */
		.on_aicore_done = p->a5 || h->on_aicore_done ? h_aicore_done : NULL,
		.ud = p,
	};
	*h = n;
	ec->hooks = h;
	ec->kernel_hooks = (struct tp_kernel_hooks){
		.on_kernel_begin = tp_pmu_on_kernel_begin,
		.on_kernel_end = tp_pmu_on_kernel_end,
		.ud = p->model,
	};
	ec->pmu_model = p->model;
	/* One task per core at a time (spec §6.2): the counters of a core
	 * then belong to one task; the engine also turns early dispatch off. */
	ec->single_issue = true;
}

/* ---- after the run ------------------------------------------------------- */

int wk_pmu_stop(struct wk_pmu *p, struct pmu_reconcile *r)
{
	pmu_stop(p->c);
	return pmu_reconcile(p->c, r);
}

int wk_pmu_notes(const struct wk_pmu *p, int core, struct tp_pmu_note *init,
		 struct tp_pmu_note *close)
{
	return pmu_notes(p->c, core, init, close);
}

int wk_pmu_cores(const struct wk_pmu *p)
{
	return p->num_cores;
}

int wk_pmu_export(struct wk_pmu *p, char *path, size_t path_len, uint64_t *rows)
{
	uint64_t n = 0;
	if (path && path_len)
		path[0] = 0;
	int rc = pmu_export(p->c, &n);
	if (rows)
		*rows = n;
	if (!rc && n && path && path_len)
		snprintf(path, path_len, "%s", pmu_csv_path(p->c));
	return rc;
}

static void copy_note(struct tp_worker_pmu_note *dst, const struct tp_pmu_note *src)
{
	dst->code = src->code;
	dst->physical_core_id = src->physical_core_id;
	dst->ctrl0 = src->ctrl0;
	dst->ctrl1 = src->ctrl1;
}

int wk_pmu_finish(struct wk_pmu *p, struct tp_run_result *res)
{
	struct pmu_reconcile r;
	memset(&r, 0, sizeof(r));
	int rrc = wk_pmu_stop(p, &r);
	res->pmu = true;
	res->pmu_event_type = pmu_event_type(p->c);
	res->pmu_run_epoch = pmu_run_epoch(p->c);
	res->pmu_total = r.total;
	res->pmu_collected = r.collected;
	res->pmu_dropped = r.dropped;
	res->pmu_mismatch = r.mismatch;
	res->pmu_reconcile_ok = rrc == 0 && r.ok;
	res->pmu_lease_held = p->lease_held;
	res->pmu_cores = p->num_cores < TP_WORKER_PMU_MAX_CORES ? p->num_cores
								 : TP_WORKER_PMU_MAX_CORES;
	for (int k = 0; k < 6; k++) {
		res->pmu_note_counts[k] = r.note_init[k];
		res->pmu_note_close_counts[k] = r.note_close[k];
	}
	for (int c = 0; c < res->pmu_cores; c++) {
		struct tp_pmu_note ni, nc;
		memset(&ni, 0, sizeof(ni));
		memset(&nc, 0, sizeof(nc));
		if (pmu_notes(p->c, c, &ni, &nc) == 0) {
			copy_note(&res->pmu_note[c], &ni);
			copy_note(&res->pmu_note_close[c], &nc);
		}
	}
	return wk_pmu_export(p, res->pmu_csv, sizeof(res->pmu_csv), &res->pmu_rows);
}

bool wk_pmu_lease_held(const struct wk_pmu *p)
{
	return p->lease_held;
}

struct tp_pmu_model *wk_pmu_model(struct wk_pmu *p)
{
	return p->model;
}

void wk_pmu_close(struct wk_pmu *p)
{
	if (!p)
		return;
	pmu_close(p->c);
	if (p->lease)
		wk_pmu_lease_release(p->lease, p->dev);
	tp_pmu_model_destroy(p->model);
	free(p);
}
