/* SPDX-License-Identifier: MIT */
/*
 * worker/run_pmu.c — the Worker's PMU glue (run_pmu.h): adapts the
 * runtime's hook signatures to the collector's device half, which takes
 * plain values only (ARCHITECTURE.md §2), and holds the channel-53 lease.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
	/* Retained runs (wk_pmu_retire): what the device said, and the verdict. */
	bool retired;
	int rrc;                  /* pmu_reconcile's */
	struct pmu_reconcile rec;
	enum wk_pmu_verdict verdict;
	char why[640]; /* an unknown verdict's reason, when not the reconcile's */
};

/* Test faults (wk_pmu_test_fault): written by a test before a run, read
 * once by the run's host thread. */
static _Atomic int g_fault;
static _Atomic uint64_t g_fault_n;
static _Atomic bool g_fault_write;

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
	int rc = tp_drv_lease_start(dev, TP_DRV_PROF_CHANNEL_FFTS, l->owner, 0);
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
	if (l->held && tp_drv_lease_stop(dev, TP_DRV_PROF_CHANNEL_FFTS, l->owner))
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
		/* WARN, as the reference's pytest path, word for word
		 * (spec/pmu.md §8.3): the user asked for PMU and gets none. */
		TP_WARN("PMU disabled: --rounds > 1");
		return false;
	}
	*type = wk_pmu_event_type(plat, requested);
	return true;
}

/* ---- open ---------------------------------------------------------------- */

static int open_common(struct wk_pmu **out, struct tp_device *dev, int aicpu_threads, bool hbg,
		       uint32_t event_type, uint64_t run_epoch, const char *dir,
		       struct wk_pmu_lease *lease, bool retained)
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
	/* The L2 cache model now, where the run can still fail with its
	 * reason, not left to the device (whose L2_CACHE counters would all
	 * read 0 behind a WARN). An invalid type programs PIPE_UTILIZATION
	 * (spec §1.4), which counts no L2 event. */
	const struct tp_pmu_event_group *g =
		tp_pmu_event_group(tp_pmu_arch_of(tp_device_platform(dev)), event_type);
	if (g) {
		uint32_t ids[TP_PMU_MAX_SLOTS];
		for (int i = 0; i < g->n_slots; i++)
			ids[i] = g->slot[i].id;
		if ((rc = tp_pmu_model_need_l2(p->model, ids, g->n_slots))) {
			tp_pmu_model_destroy(p->model);
			free(p);
			return rc;
		}
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
		.retained = retained,
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

int wk_pmu_open(struct wk_pmu **out, struct tp_device *dev, int aicpu_threads, bool hbg,
		uint32_t event_type, uint64_t run_epoch, const char *dir,
		struct wk_pmu_lease *lease)
{
	return open_common(out, dev, aicpu_threads, hbg, event_type, run_epoch, dir, lease, false);
}

int wk_pmu_open_retained(struct wk_pmu **out, struct tp_device *dev, int aicpu_threads,
			 bool hbg, uint32_t event_type, uint64_t run_epoch, const char *dir,
			 struct wk_pmu_lease *lease)
{
	return open_common(out, dev, aicpu_threads, hbg, event_type, run_epoch, dir, lease, true);
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
		.task_times = h->task_times, /* the PMU uses none */
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
	/* relaxed: a one-shot switch; nothing else is published through it. */
	if (atomic_exchange_explicit(&g_fault_write, false, memory_order_relaxed) &&
	    mkdir(pmu_csv_path(p->c), 0755) != 0)
		TP_WARN("pmu: test fault: cannot create %s: %s",
			tp_shown(pmu_csv_path(p->c)), strerror(errno));
	int rc = pmu_export(p->c, &n);
	if (rows)
		*rows = n;
	if (!rc && n && path && path_len)
		snprintf(path, path_len, "%s", pmu_csv_path(p->c));
	/* A failed export keeps the shard files as evidence (docs/pmu.md "A
	 * failed write"); a retained run's flush message says so itself. */
	if (rc && path && pmu_shards_kept(p->c))
		tp_set_error(rc, "%s; the shard files are kept as evidence (%s.e%" PRIu64
			     ".p%d.shard*.failed.tmp)", tp_last_error(), pmu_csv_path(p->c),
			     pmu_run_epoch(p->c), (int)getpid());
	return rc;
}

/* ---- test fault (wk_pmu_test_fault) --------------------------------------- */


void wk_pmu_test_fault(enum wk_pmu_fault f, uint64_t n)
{
	if (f == WK_PMU_FAULT_WRITE) {
		atomic_store_explicit(&g_fault_write, true, memory_order_relaxed); /* a switch */
		return;
	}
	/* Release: a run reading the fault with acquire also sees @n. */
	atomic_store_explicit(&g_fault_n, n, memory_order_relaxed);
	atomic_store_explicit(&g_fault, (int)f, memory_order_release);
}

/* One shot: the next reconcile of any collection takes the fault. */
static void apply_fault(struct pmu_reconcile *r, int *rrc)
{
	/* acquire: pairs with the release store in wk_pmu_test_fault(), so the
	 * g_fault_n read below is the one stored with this fault. */
	int f = atomic_exchange_explicit(&g_fault, WK_PMU_FAULT_NONE, memory_order_acquire);
	uint64_t n = atomic_load_explicit(&g_fault_n, memory_order_relaxed);
	if (f == WK_PMU_FAULT_DROP) {
		/* As the device does when its pool runs dry: the records count
		 * in its total and in its dropped counter, the equality holds. */
		r->dropped += n;
		r->total += n;
		TP_WARN("PMU reconcile: %" PRIu64 " records dropped on device side (test fault)", n);
	} else if (f == WK_PMU_FAULT_UNREADABLE) {
		TP_ERROR("PmuModule reconcile: cannot read the device counters (test fault); the "
			 "run's records cannot be accounted for");
		*rrc = tp_set_error(-EIO, "PmuModule: cannot read the device counters for reconcile");
		/* What the real path reports: no figures at all. */
		memset(r, 0, sizeof(*r));
	}
}

static void copy_note(struct tp_worker_pmu_note *dst, const struct tp_pmu_note *src)
{
	dst->code = src->code;
	dst->physical_core_id = src->physical_core_id;
	dst->ctrl0 = src->ctrl0;
	dst->ctrl1 = src->ctrl1;
}

/* Stop, reconcile and copy the figures and notes into @res (no export). */
static int fill_result(struct wk_pmu *p, struct tp_run_result *res, struct pmu_reconcile *out)
{
	struct pmu_reconcile r;
	memset(&r, 0, sizeof(r));
	int rrc = wk_pmu_stop(p, &r);
	apply_fault(&r, &rrc);
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
	*out = r;
	return rrc;
}

int wk_pmu_finish(struct wk_pmu *p, struct tp_run_result *res)
{
	struct pmu_reconcile r;
	/* The merge first, then the counts (spec/pmu.md §2.4, §5 step 3: the
	 * merge runs inside reconcile, and a failed one counts 0 collected),
	 * so the reconcile line and res->pmu_reconcile_ok tell of it. */
	pmu_stop(p->c);
	int rc = wk_pmu_export(p, res->pmu_csv, sizeof(res->pmu_csv), &res->pmu_rows);
	char err[TP_ERROR_MSG_MAX] = "";
	if (rc)
		snprintf(err, sizeof(err), "%s", tp_last_error());
	fill_result(p, res, &r);
	if (rc)
		tp_set_error(rc, "%s", err); /* the export's error is the run's */
	return rc;
}

bool wk_pmu_lease_held(const struct wk_pmu *p)
{
	return p->lease_held;
}

struct tp_pmu_model *wk_pmu_model(struct wk_pmu *p)
{
	return p->model;
}

void wk_pmu_drop_lease(struct wk_pmu *p)
{
	if (!p || !p->lease)
		return;
	wk_pmu_lease_release(p->lease, p->dev);
	p->lease = NULL;
}

void wk_pmu_close(struct wk_pmu *p)
{
	if (!p)
		return;
	pmu_close(p->c);
	wk_pmu_drop_lease(p);
	tp_pmu_model_destroy(p->model);
	free(p);
}

/* ---- retained runs (seed 000 §3.4) ----------------------------------------- */

const char *wk_pmu_verdict_name(enum wk_pmu_verdict v)
{
	switch (v) {
	case WK_PMU_COMPLETE:
		return "complete";
	case WK_PMU_ZERO:
		return "proved-zero";
	case WK_PMU_INCOMPLETE:
		return "incomplete";
	default:
		return "unknown";
	}
}

/* Seed §3.4: complete only when the counters were read, the cut settled,
 * nothing was lost anywhere and collected + dropped (+ mismatch) matched
 * the device's total; empty only when all of that holds at zero. */
static enum wk_pmu_verdict judge(int rrc, const struct pmu_reconcile *r)
{
	if (rrc && rrc != -EPROTO)
		return WK_PMU_UNKNOWN; /* -EIO unreadable, -EBUSY cut not settled */
	if (rrc || !r->ok || r->io_failed || r->dropped || r->mismatch || r->unflushed ||
	    r->silent_loss)
		return WK_PMU_INCOMPLETE;
	return r->total ? WK_PMU_COMPLETE : WK_PMU_ZERO;
}

int wk_pmu_retire(struct wk_pmu *p, struct tp_run_result *res)
{
	p->rrc = fill_result(p, res, &p->rec);
	p->verdict = judge(p->rrc, &p->rec);
	p->retired = true;
	res->pmu_retained = true;
	res->pmu_csv[0] = 0;
	res->pmu_rows = 0;
	/* Everything tied to the device goes now: it closes after this run. */
	wk_pmu_drop_lease(p);
	tp_pmu_model_destroy(p->model);
	p->model = NULL;
	pmu_release_pool(p->c);
	p->dev = NULL;
	return p->rrc;
}

void wk_pmu_retire_failed(struct wk_pmu *p, const char *run_err)
{
	p->verdict = WK_PMU_UNKNOWN;
	int k = snprintf(p->why, sizeof(p->why), "the run failed before its graph completed (%.500s)",
			 run_err && *run_err ? run_err : "no message");
	(void)k; /* a long message truncates quietly */
}

enum wk_pmu_verdict wk_pmu_get_verdict(const struct wk_pmu *p)
{
	return p->verdict;
}

/* The directory of @p's pmu.csv. */
static void run_dir(const struct wk_pmu *p, char *out, size_t len)
{
	snprintf(out, len, "%s", pmu_csv_path(p->c));
	char *slash = strrchr(out, '/');
	if (slash)
		*slash = 0;
}

/* A failed write's evidence: pmu.csv.e<epoch>.*.tmp in @dir. */
static bool has_failed_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool found = false;
	struct dirent *e;
	const size_t pl = strlen(PMU_CSV_FILE ".e"), sl = strlen(".tmp");
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		found = n > pl + sl && !strncmp(e->d_name, PMU_CSV_FILE ".e", pl) &&
			!strcmp(e->d_name + n - sl, ".tmp");
	}
	closedir(d);
	return found;
}

/* Under rt->mu (wk_pmu_admit reads the list). */
static void note_failed_dir(struct wk_pmu_retention *rt, const char *dir)
{
	for (int i = 0; i < rt->n_failed_dirs; i++)
		if (!strcmp(rt->failed_dirs[i], dir))
			return;
	char **nd = realloc(rt->failed_dirs, (size_t)(rt->n_failed_dirs + 1) * sizeof(*nd));
	char *copy = strdup(dir);
	if (!nd || !copy) {
		free(copy);
		if (nd)
			rt->failed_dirs = nd;
		TP_ERROR("PMU: out of memory recording the failed directory %s", tp_shown(dir));
		return;
	}
	rt->failed_dirs = nd;
	rt->failed_dirs[rt->n_failed_dirs++] = copy;
}

/* Publish one run; describe its failure into @msg ("" when none). */
static void publish(struct wk_pmu *p, char *msg, size_t len, bool *write_failed)
{
	char dir[4096], err[1024];
	run_dir(p, dir, sizeof(dir));
	const uint64_t epoch = pmu_run_epoch(p->c);
	uint64_t rows = 0;
	msg[0] = 0;
	*write_failed = false;
	tp_clear_error();
	int rc = wk_pmu_export(p, NULL, 0, &rows);
	if (rc) {
		snprintf(err, sizeof(err), "%s", tp_last_error());
		*write_failed = true;
		int k = snprintf(msg, len,
			 "run_epoch %" PRIu64 " (%.1200s): write failed (%.400s); its temporary files are kept "
			 "as evidence",
			 epoch, dir, err);
		(void)k;
		return;
	}
	const struct pmu_reconcile *r = &p->rec;
	int k = 0; /* used, so a long folder name truncates quietly */
	if (p->verdict == WK_PMU_INCOMPLETE)
		k = snprintf(msg, len,
			 "run_epoch %" PRIu64 " (%.1200s): %s: collected=%" PRIu64 " dropped=%" PRIu64
			 " mismatch=%" PRIu64 " total=%" PRIu64 "; %" PRIu64 " rows published",
			 epoch, dir, wk_pmu_verdict_name(p->verdict), r->collected, r->dropped,
			 r->mismatch, r->total, rows);
	else if (p->verdict == WK_PMU_UNKNOWN && p->why[0])
		k = snprintf(msg, len,
			 "run_epoch %" PRIu64 " (%.1200s): %s: %s; %" PRIu64 " rows published", epoch,
			 dir, wk_pmu_verdict_name(p->verdict), p->why, rows);
	else if (p->verdict == WK_PMU_UNKNOWN)
		k = snprintf(msg, len,
			 "run_epoch %" PRIu64 " (%.1200s): %s: the device counters could not be read or "
			 "the transport cut never settled (%.100s); %" PRIu64 " rows published",
			 epoch, dir, wk_pmu_verdict_name(p->verdict), strerror(-p->rrc), rows);
	else
		TP_INFO("PMU: run_epoch %" PRIu64 " published (%s, %" PRIu64 " rows%s)", epoch,
			wk_pmu_verdict_name(p->verdict), rows, rows ? "" : ", no file");
	(void)k;
}

/* Test hold of every writer (wk_pmu_test_hold_writer). */
static _Atomic bool g_hold_writer;

void wk_pmu_test_hold_writer(bool hold)
{
	/* relaxed: a switch; the writer re-reads it under its mutex's timed
	 * wait, and nothing else is published through it. */
	atomic_store_explicit(&g_hold_writer, hold, memory_order_relaxed);
}

/* Add @one to the failures not yet reported by a flush. Under rt->mu. */
static void record_failure(struct wk_pmu_retention *rt, const char *one)
{
	TP_ERROR("PMU flush_diagnostics: %s", tp_shown(one));
	if (!rt->failed) {
		rt->failed = true;
		/* Truncated to fit; the precision says so to the compiler too
		 * (gcc -O3 -Werror=format-truncation). */
		snprintf(rt->first, sizeof(rt->first), "%.*s", (int)sizeof(rt->first) - 1, one);
	}
	size_t used = strlen(rt->pending);
	int k = snprintf(rt->pending + used, sizeof(rt->pending) - used, "%s%s",
			 used ? "; " : "", one);
	(void)k; /* a very long list is truncated; the log has every line */
}

/* The background writer: publishes queued runs oldest first while the
 * Worker's next run executes (seed §3.4). Run i stays counted in rt->n
 * until its publication ended, so capacity covers the run being written. */
static void *writer_main(void *arg)
{
	struct wk_pmu_retention *rt = arg;
	char msg[2048];
	pthread_mutex_lock(&rt->mu);
	for (;;) {
		bool held = atomic_load_explicit(&g_hold_writer, memory_order_relaxed) &&
			    !rt->flushing && !rt->stop;
		if (rt->n == 0 || held) {
			if (rt->stop && rt->n == 0)
				break;
			if (held) {
				/* Poll the test hold; a flush or stop wakes us at once. */
				struct timespec ts;
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += 1000000;
				if (ts.tv_nsec >= 1000000000L) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000L;
				}
				pthread_cond_timedwait(&rt->cv, &rt->mu, &ts);
			} else {
				pthread_cond_wait(&rt->cv, &rt->mu);
			}
			continue;
		}
		struct wk_pmu *p = rt->run[0];
		pthread_mutex_unlock(&rt->mu);
		/* Only this thread touches a queued run once it is queued. */
		bool wf;
		char dir[4096];
		run_dir(p, dir, sizeof(dir));
		publish(p, msg, sizeof(msg), &wf);
		wk_pmu_close(p);
		pthread_mutex_lock(&rt->mu);
		if (wf)
			note_failed_dir(rt, dir);
		if (msg[0])
			record_failure(rt, msg);
		for (int i = 1; i < rt->n; i++)
			rt->run[i - 1] = rt->run[i];
		rt->run[--rt->n] = NULL;
		pthread_cond_broadcast(&rt->cv);
	}
	pthread_mutex_unlock(&rt->mu);
	return NULL;
}

/* Lazily: a Worker that never retains a run starts no thread. */
static int ensure_init(struct wk_pmu_retention *rt)
{
	if (rt->inited)
		return 0;
	if (pthread_mutex_init(&rt->mu, NULL))
		return tp_set_error(-ENOMEM, "PMU: cannot create the retained-run lock");
	if (pthread_cond_init(&rt->cv, NULL)) {
		pthread_mutex_destroy(&rt->mu);
		return tp_set_error(-ENOMEM, "PMU: cannot create the retained-run condition");
	}
	rt->inited = true;
	return 0;
}

int wk_pmu_admit(struct wk_pmu_retention *rt)
{
	int rc = ensure_init(rt);
	if (rc)
		return rc;
	pthread_mutex_lock(&rt->mu);
	for (int i = 0; i < rt->n_failed_dirs;) {
		if (has_failed_tmp(rt->failed_dirs[i])) {
			rc = tp_set_error(-EEXIST,
					  "PMU: output directory %s still holds a failed run's "
					  "temporary files (" PMU_CSV_FILE ".e<epoch>.*.tmp); read "
					  "and remove them before the next run",
					  rt->failed_dirs[i]);
			goto out;
		}
		/* Removed by the user: the destination is usable again. */
		free(rt->failed_dirs[i]);
		rt->failed_dirs[i] = rt->failed_dirs[--rt->n_failed_dirs];
	}
	if (rt->n >= WK_PMU_MAX_RETAINED) {
		char a[4096], b[4096];
		run_dir(rt->run[0], a, sizeof(a));
		run_dir(rt->run[1], b, sizeof(b));
		rc = tp_set_error(-EBUSY,
				  "PMU: both retained PMU runs are still unpublished (run_epoch "
				  "%" PRIu64 " in %s, run_epoch %" PRIu64 " in %s); call "
				  "tp_worker_flush_diagnostics() before the next run",
				  pmu_run_epoch(rt->run[0]->c), a, pmu_run_epoch(rt->run[1]->c), b);
	}
out:
	pthread_mutex_unlock(&rt->mu);
	return rc;
}

void wk_pmu_retain(struct wk_pmu_retention *rt, struct wk_pmu *p)
{
	if (ensure_init(rt)) {
		TP_ERROR("PMU: run_epoch %" PRIu64 " cannot be retained: %s; its shard files are "
			 "kept unpublished",
			 pmu_run_epoch(p->c), tp_last_error());
		wk_pmu_close(p);
		return;
	}
	pthread_mutex_lock(&rt->mu);
	if (!rt->th_started) {
		if (pthread_create(&rt->th, NULL, writer_main, rt) == 0)
			rt->th_started = true;
		else
			TP_WARN("PMU: cannot start the background writer; retained runs are "
				"published by tp_worker_flush_diagnostics()");
	}
	if (rt->n < WK_PMU_MAX_RETAINED) {
		rt->run[rt->n++] = p;
		pthread_cond_broadcast(&rt->cv);
		pthread_mutex_unlock(&rt->mu);
		return;
	}
	pthread_mutex_unlock(&rt->mu);
	/* wk_pmu_admit() refused this case; never lose a run silently. */
	TP_ERROR("PMU: run_epoch %" PRIu64 " exceeded the retained-run capacity; its shard files "
		 "are kept unpublished",
		 pmu_run_epoch(p->c));
	wk_pmu_close(p);
}

void wk_pmu_fail_unretained(struct wk_pmu_retention *rt, uint64_t epoch, const char *dir,
			    const char *why)
{
	char msg[2048];
	int k = snprintf(msg, sizeof(msg),
			 "run_epoch %" PRIu64 " (%.1200s): %s: %.600s; 0 rows published", epoch,
			 dir ? dir : "", wk_pmu_verdict_name(WK_PMU_UNKNOWN), why);
	(void)k; /* a long folder name truncates quietly */
	if (ensure_init(rt)) {
		/* Nowhere to keep it: the log line is all that is left. */
		TP_ERROR("PMU flush_diagnostics: %s (%s)", tp_shown(msg), tp_last_error());
		return;
	}
	pthread_mutex_lock(&rt->mu);
	record_failure(rt, msg);
	pthread_mutex_unlock(&rt->mu);
}

int wk_pmu_flush(struct wk_pmu_retention *rt)
{
	if (!rt->inited)
		return 0; /* nothing was ever retained */
	char msg[2048];
	pthread_mutex_lock(&rt->mu);
	rt->flushing = true;
	pthread_cond_broadcast(&rt->cv);
	while (rt->n > 0) {
		if (rt->th_started) {
			pthread_cond_wait(&rt->cv, &rt->mu);
			continue;
		}
		/* No writer thread: publish here, oldest first. */
		struct wk_pmu *p = rt->run[0];
		bool wf;
		char dir[4096];
		run_dir(p, dir, sizeof(dir));
		publish(p, msg, sizeof(msg), &wf);
		wk_pmu_close(p);
		if (wf)
			note_failed_dir(rt, dir);
		if (msg[0])
			record_failure(rt, msg);
		for (int i = 1; i < rt->n; i++)
			rt->run[i - 1] = rt->run[i];
		rt->run[--rt->n] = NULL;
	}
	rt->flushing = false;
	int rc = 0;
	if (rt->pending[0])
		rc = tp_set_error(-EIO, "PMU flush_diagnostics: %s", rt->pending);
	else if (rt->failed)
		rc = tp_set_error(-EIO,
				  "PMU flush_diagnostics: an earlier PMU run failed and the "
				  "failure is sticky for this Worker: %s",
				  rt->first);
	rt->pending[0] = 0;
	pthread_mutex_unlock(&rt->mu);
	return rc;
}

void wk_pmu_retention_fini(struct wk_pmu_retention *rt)
{
	if (rt->inited) {
		pthread_mutex_lock(&rt->mu);
		rt->stop = true;
		pthread_cond_broadcast(&rt->cv);
		pthread_mutex_unlock(&rt->mu);
		/* The writer publishes what is still queued, then exits. */
		if (rt->th_started)
			pthread_join(rt->th, NULL);
		rt->th_started = false;
		for (int i = 0; i < rt->n; i++)
			wk_pmu_close(rt->run[i]);
		rt->n = 0;
		pthread_cond_destroy(&rt->cv);
		pthread_mutex_destroy(&rt->mu);
		rt->inited = false;
	}
	for (int i = 0; i < rt->n_failed_dirs; i++)
		free(rt->failed_dirs[i]);
	free(rt->failed_dirs);
	rt->failed_dirs = NULL;
	rt->n_failed_dirs = 0;
}
