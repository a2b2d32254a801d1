/* SPDX-License-Identifier: MIT */
/*
 * worker/run_swimlane.h — the Worker's L2 swimlane glue (private to
 * worker/): opens the swimlane collector (collectors/swimlane/) for the
 * first round of a run, wires the scheduler / AICore / orchestrator hooks
 * of struct tp_sched_hooks to its device half, and after the run stops,
 * reconciles and exports l2_swimlane_records.json (seed 002 §3.1, §5.2).
 */
#ifndef TASKPROF_WORKER_RUN_SWIMLANE_H
#define TASKPROF_WORKER_RUN_SWIMLANE_H

#include <stdbool.h>
#include <stddef.h>

#include "platform/platform.h"
#include "runtime/engine.h"
#include "transport/profiler.h"

struct wk_swimlane;

/**
 * wk_swimlane_open() - open and start a swimlane collection.
 * @out:           receives the collection.
 * @level:         1..4 (seed 002 §3.1).
 * @plat:          the platform (transport, clock, PLATFORM_MAX_AICPU_THREADS).
 * @block_dim:     clusters of the run.
 * @aicpu_threads: AICPU threads of the run.
 * @hbg:           host_build_graph: every AICPU thread schedules, no
 *                 orchestrator thread.
 *
 * Return: 0 or a negative errno (tp_last_error() set).
 */
int wk_swimlane_open(struct wk_swimlane **out, int level, const struct tp_platform *plat,
		     int block_dim, int aicpu_threads, bool hbg);

/**
 * wk_swimlane_wire() - route @h's hook points to the collector. Hooks
 * already set in @h (e.g. the Worker's on_sched_window) keep being called
 * with their own ud. Call before tp_engine_run(); @h must stay valid
 * until wk_swimlane_close().
 */
void wk_swimlane_wire(struct wk_swimlane *s, struct tp_sched_hooks *h);

/** wk_swimlane_orch_done() - on the orchestrator thread after the
 * orchestration returned: publish its partial orch-phase buffer. */
void wk_swimlane_orch_done(struct wk_swimlane *s);

/**
 * wk_swimlane_finish() - after the device stopped: stop the collector,
 * reconcile (one log line per pool), write @dir/l2_swimlane_records.json.
 * @s:        the collection.
 * @dir:      the run folder (created if missing).
 * @path:     receives the file written ("" when none; may be NULL).
 * @path_len: bytes of @path.
 * @rec:      receives the reconcile figures (may be NULL).
 *
 * Return: 0; -ENODATA when both task streams are empty (warning logged,
 * nothing written); the file errors of swl_export(); else
 * swl_reconcile()'s error when it failed: -EPROTO when a pool does not
 * balance, -ENOMEM when the host lost records to out-of-memory (the file
 * is still written in both cases). tp_last_error() says why.
 */
int wk_swimlane_finish(struct wk_swimlane *s, const char *dir, char *path, size_t path_len,
		       struct tp_reconcile *rec);

/** wk_swimlane_close() - free (NULL: no-op). */
void wk_swimlane_close(struct wk_swimlane *s);

#endif /* TASKPROF_WORKER_RUN_SWIMLANE_H */
