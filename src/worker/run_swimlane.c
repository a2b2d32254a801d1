/* SPDX-License-Identifier: MIT */
/*
 * worker/run_swimlane.c — the Worker's L2 swimlane glue (run_swimlane.h):
 * adapts the runtime's hook signatures to the collector's device half,
 * which takes plain values only (ARCHITECTURE.md §2).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "collectors/swimlane/swl_host.h"
#include "platform/topology.h"
#include "worker/run_swimlane.h"

struct wk_swimlane {
	struct swl_collector *c;
	struct swl_dev *d;
	int level;
	bool shadow;
	bool orch_flushed; /* wk_swimlane_orch_done() ran */
	struct tp_sched_hooks prev; /* the hooks the Worker had set */
};

int wk_swimlane_open(struct wk_swimlane **out, int level, const struct tp_platform *plat,
		     int block_dim, int aicpu_threads, bool hbg)
{
	*out = NULL;
	if (level < 1 || level > 4)
		return tp_set_error(-EINVAL, "swimlane: level %d outside 1..4", level);
	const int nc = tp_topo_num_cores(block_dim);
	const int nsched = hbg ? aicpu_threads : aicpu_threads - 1;
	int8_t *owner = malloc((size_t)nc);
	struct wk_swimlane *s = calloc(1, sizeof(*s));
	if (!owner || !s) {
		free(owner);
		free(s);
		return tp_set_error(-ENOMEM, "swimlane: out of memory");
	}
	/* core_to_thread: the cluster owner of the runtime (spec §1.2). */
	for (int i = 0; i < nc; i++)
		owner[i] = (int8_t)tp_topo_cluster_owner(tp_topo_cluster(block_dim, i), nsched);
	struct swl_config cfg = {
		.level = level,
		.shadow = plat->transport == TP_TRANSPORT_HOST_SHADOW,
		.clock_freq_hz = plat->sys_cnt_freq_hz,
		.max_threads = plat->max_aicpu_threads,
		.num_cores = nc,
		.block_dim = block_dim,
		.num_threads = aicpu_threads,
		.orch_thread = hbg ? -1 : aicpu_threads - 1,
		.core_owner = owner,
	};
	s->c = swl_open(&cfg);
	free(owner);
	if (!s->c) {
		free(s);
		return -ENOMEM;
	}
	s->d = swl_dev(s->c);
	s->level = level;
	s->shadow = cfg.shadow;
	int rc = swl_start(s->c);
	if (rc) {
		swl_close(s->c);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* ---- hook adapters (device side) ----------------------------------- */

static void h_dispatch(void *ud, int thread, int core, tp_task_id task, int func_id,
		       uint32_t reg_task_id, uint64_t ts)
{
	(void)task;
	(void)func_id;
	struct wk_swimlane *s = ud;
	swl_dev_on_dispatch(s->d, thread, core, reg_task_id, ts);
}

static void h_fin(void *ud, int thread, int core, tp_task_id task, int func_id,
		  uint32_t reg_task_id, uint64_t dispatch_ts, uint64_t finish_ts)
{
	(void)task;
	(void)func_id;
	struct wk_swimlane *s = ud;
	swl_dev_on_fin(s->d, thread, core, reg_task_id, dispatch_ts, finish_ts);
}

static void h_aicore(void *ud, int core, tp_task_id task, uint32_t reg_task_id,
		     uint64_t receive, uint64_t start, uint64_t end)
{
	struct wk_swimlane *s = ud;
	swl_dev_on_aicore_task(s->d, core, task, reg_task_id, receive, start, end);
}

static void h_aicore_receive(void *ud, int core, uint32_t reg_task_id)
{
	struct wk_swimlane *s = ud;
	swl_dev_on_aicore_receive(s->d, core, reg_task_id);
}

static uint32_t sched_kind(enum tp_sched_phase ph)
{
	switch (ph) {
	case TP_PHASE_COMPLETE: return SWL_SCHED_COMPLETE;
	case TP_PHASE_RESOLVE: return SWL_SCHED_RESOLVE;
	case TP_PHASE_DUMMY: return SWL_SCHED_DUMMY;
	case TP_PHASE_DISPATCH: return SWL_SCHED_DISPATCH;
	case TP_PHASE_RELEASE: return SWL_SCHED_RELEASE;
	case TP_PHASE_ASYNC_POLL: return SWL_SCHED_ASYNC_POLL;
	case TP_PHASE_EARLY_DISPATCH: return SWL_SCHED_EARLY_DISPATCH;
	default: return 3; /* unused value: exported as "unknown" */
	}
}

static void h_phase(void *ud, int thread, enum tp_sched_phase ph, uint64_t start,
		    uint64_t end, uint64_t loop_iter, uint32_t tasks,
		    const struct tp_phase_detail *dt)
{
	struct wk_swimlane *s = ud;
	swl_dev_on_sched_phase(s->d, thread, sched_kind(ph), start, end, loop_iter, tasks,
			       dt->pop_hit, dt->pop_miss, dt->depth_start, dt->depth_end);
}

static void h_marker(void *ud, int thread, bool predicated, tp_task_id task, uint64_t ts,
		     uint64_t loop_iter, const int16_t depth[3])
{
	struct wk_swimlane *s = ud;
	swl_dev_on_sched_phase(s->d, thread,
			       predicated ? SWL_SCHED_PREDICATED_SKIP : SWL_SCHED_DUMMY_TASK, ts,
			       ts, loop_iter, 1, tp_task_id_local(task), tp_task_id_ring(task),
			       depth, depth);
}

static void h_orch(void *ud, tp_task_id task, uint64_t submit_idx, uint64_t start,
		   uint64_t end)
{
	struct wk_swimlane *s = ud;
	swl_dev_on_orch_submit(s->d, task, (uint32_t)submit_idx, start, end);
}

static void h_sched_exit(void *ud, int thread)
{
	struct wk_swimlane *s = ud;
	if (s->prev.on_sched_exit)
		s->prev.on_sched_exit(s->prev.ud, thread);
	swl_dev_flush_thread(s->d, thread);
}

/* Forwarders for the hooks the Worker had set before (its own ud). */
static void f_sched_window(void *ud, int thread, uint64_t start, uint64_t end)
{
	struct wk_swimlane *s = ud;
	s->prev.on_sched_window(s->prev.ud, thread, start, end);
}

static void f_graph_built(void *ud, uint64_t tasks, uint64_t start, uint64_t end)
{
	struct wk_swimlane *s = ud;
	s->prev.on_graph_built(s->prev.ud, tasks, start, end);
}

void wk_swimlane_wire(struct wk_swimlane *s, struct tp_sched_hooks *h)
{
	s->prev = *h;
	/* The hooks this glue takes over must not have been set before; the
	 * two the Worker uses are forwarded. */
	struct tp_sched_hooks n = {
		.on_dispatch = h_dispatch,
		.on_fin = h_fin,
		.on_aicore_task = h_aicore,
		.on_sched_exit = h_sched_exit,
		.on_sched_window = h->on_sched_window ? f_sched_window : NULL,
		.on_graph_built = h->on_graph_built ? f_graph_built : NULL,
		.ud = s,
	};
	/* Shared mapping: the AICore fixes its record slot at receive time
	 * (rotation); on both it asks for the line it will write then. */
	n.on_aicore_receive = h_aicore_receive;
	if (s->level >= 3) {
		n.on_phase_detail = h_phase;
		n.on_marker = h_marker;
	}
	if (s->level >= 4)
		n.on_orch_submit = h_orch;
	/* The AICPU task records (level 2 and up) carry dispatch and finish. */
	n.task_times = h->task_times || s->level >= 2;
	*h = n;
}

void wk_swimlane_orch_done(struct wk_swimlane *s)
{
	swl_dev_flush_orch(s->d);
	s->orch_flushed = true;
}

int wk_swimlane_finish(struct wk_swimlane *s, const char *dir, char *path, size_t path_len,
		       struct tp_reconcile *rec)
{
	if (path && path_len)
		path[0] = 0;
	/* An orchestration the run abandoned (stuck in the case's code: the
	 * runtime's stall watch) never flushed its orch_phase buffer; its
	 * thread is outside every runtime call and any later call returns
	 * before it writes a record (the run failed), so, as dep_gen's
	 * (run_depgen.c), the host flushes it: its records are collected,
	 * not left unaccounted for. (No orchestration ran: nothing held.) */
	if (!s->orch_flushed)
		swl_dev_flush_orch(s->d);
	swl_stop(s->c);
	int rrc = swl_reconcile(s->c, rec);
	int rc = swl_export(s->c, dir);
	if (rc)
		return rc;
	if (path && path_len)
		snprintf(path, path_len, "%s/%s", dir, SWL_RECORDS_FILE);
	if (rrc)
		return tp_set_error(rrc, "swimlane: reconcile failed: records were lost (see the "
					 "L2Swimlane reconcile lines)");
	return 0;
}

void wk_swimlane_close(struct wk_swimlane *s)
{
	if (!s)
		return;
	swl_close(s->c);
	free(s);
}
