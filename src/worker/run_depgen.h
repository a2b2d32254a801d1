/* SPDX-License-Identifier: MIT */
/*
 * worker/run_depgen.h — the Worker's dep_gen glue (private to worker/):
 * wires the dep_gen collector (collectors/depgen/) to the orchestrator's
 * hooks (struct tp_orch_hooks, runtime/engine.h) for the first round of a
 * run, and writes the name map (spec/swimlane-format.md §3.4).
 */
#ifndef TASKPROF_WORKER_RUN_DEPGEN_H
#define TASKPROF_WORKER_RUN_DEPGEN_H

#include <stdbool.h>

#include "collectors/depgen/depgen.h"
#include "platform/device.h"
#include "runtime/engine.h"
#include "taskprof/case.h"

struct wk_depgen;

/**
 * wk_depgen_open() - open and start a dep_gen collection on @dev's memory.
 * @out:   receives the collection.
 * @dev:   the run's device (open, not running).
 * @label: log label (e.g. "paged_attention CaseSmall1").
 *
 * Return: 0 or a negative errno (tp_last_error() set).
 */
int wk_depgen_open(struct wk_depgen **out, struct tp_device *dev, const char *label);

/**
 * wk_depgen_hooks() - the hooks to put in tp_engine_config.orch_hooks.
 * @d: the collection, or NULL.
 *
 * Return: a pointer into @d, valid until wk_depgen_close(); NULL for a
 * NULL @d.
 */
const struct tp_orch_hooks *wk_depgen_hooks(struct wk_depgen *d);

/**
 * wk_depgen_orch_done() - on the orchestrator thread, after the
 * orchestration returned: publish the writer's partial buffer.
 */
void wk_depgen_orch_done(struct wk_depgen *d);

/**
 * wk_depgen_submitted() - whether the orchestrator wrote a record (a
 * submitted task or an edge): @d holds a graph, whole or in part, whether
 * or not its tasks then ran. Call after the AICPU threads were joined.
 * @d: the collection, or NULL.
 *
 * Return: true when at least one record was written; false for NULL.
 */
bool wk_depgen_submitted(const struct wk_depgen *d);

/**
 * wk_depgen_close() - stop, reconcile and, when @dir is not NULL, write
 * @dir/deps.json; then free @d (NULL: no-op, returns 0).
 * @d:   the collection, or NULL.
 * @dir: the run folder, or NULL to write nothing.
 * @sum: receives the figures (may be NULL).
 *
 * Return: dg_finish()'s result (-EPROTO when a record was lost).
 */
int wk_depgen_close(struct wk_depgen *d, const char *dir, struct dg_summary *sum);

/**
 * wk_write_name_map() - write @dir/name_map_<safe(callable_case)>.json
 * (spec/swimlane-format.md §3.4, level 2: func_id -> kernel name, and the
 * orchestrator name) in Python's json.dump(indent=2) layout. Nothing is
 * written when the callable has neither a kernel name nor an orch name.
 * @dir:       the run folder (must exist).
 * @cal:       the callable (non-NULL).
 * @case_name: the case's name; "<callable>_<case>" is made file-safe
 *             (any byte but [A-Za-z0-9._-] -> '_') and cut to 159 bytes.
 * @path:      receives the path written ("" when none; may be NULL).
 * @path_len:  bytes of @path; a longer path is truncated.
 *
 * Return: 0 (also when nothing is written); -ENAMETOOLONG when the file
 * name passes 4,199 bytes; -ENOMEM; or the file errors of base/file.h
 * (tp_write_file_atomic()). tp_last_error() is set on failure.
 */
int wk_write_name_map(const char *dir, const struct tp_callable *cal, const char *case_name,
		      char *path, size_t path_len);

#endif /* TASKPROF_WORKER_RUN_DEPGEN_H */
