/* SPDX-License-Identifier: MIT */
/*
 * worker/run_pmu.h — the Worker's PMU glue (private to worker/; issue 5
 * scope 1, 3, 4, 6, 7): the simulated PMU model of the run's device, the
 * collector (collectors/pmu/), the runtime hooks that call its device half
 * and the counting-window lease on driver profiling channel 53.
 *
 * One run, in order (each step is its own call, so a retained run can
 * defer its export and close):
 *
 *     wk_pmu_open()      model + lease + pmu_open + pmu_start
 *     wk_pmu_wire()      hooks, kernel window hooks, single issue
 *     tp_engine_run()
 *     wk_pmu_stop()      pmu_stop + pmu_reconcile (+ the notes)
 *     wk_pmu_export()    <dir>/pmu.csv
 *     wk_pmu_close()     collector, lease reference, model
 *
 * Device-side calls (pmu_dev.h) and where the runtime makes them:
 *   on_sched_cores_up    pmu_dev_init_core for each core of the thread
 *                        (after the handshake, before its first dispatch)
 *   kernel_hooks         tp_pmu_on_kernel_begin/_end: the AICore's window
 *                        around the kernel body
 *   on_aicore_done       a5: pmu_dev_aicore_stage (after the close, before FIN)
 *   on_fin               pmu_dev_on_fin on the owning scheduler thread
 *   on_sched_exit        pmu_dev_flush_thread
 *   on_sched_cores_down  pmu_dev_finalize_core (after the flush, before
 *                        the cores shut down)
 */
#ifndef TASKPROF_WORKER_RUN_PMU_H
#define TASKPROF_WORKER_RUN_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/pmu/pmu_host.h"
#include "platform/device.h"
#include "runtime/engine.h"

/**
 * struct wk_pmu_lease - the counting-window lease of one Worker (seed 000
 * §7.0, issue 5 scope 7): driver profiling channel 53 held while any of
 * the Worker's PMU collections is open, reference-counted so a run that
 * closes does not drop it under a run still collecting. Zero-initialise.
 * @refs:  open collections using it.
 * @held:  this Worker started the channel (false: another owner had it,
 *         collection runs unprotected).
 * @owner: the token the channel was started with (non-zero).
 * @device_id: the device id the channel was started on.
 */
struct wk_pmu_lease {
	int refs;
	bool held;
	uint64_t owner;
	int device_id;
};

/**
 * wk_pmu_lease_acquire() - take one reference; the first starts channel
 * 53 on @dev with cfgMode 0. When another owner holds it (-10) one WARN
 * line is logged and the collection proceeds unprotected.
 * Return: true when the channel is held by this lease.
 */
bool wk_pmu_lease_acquire(struct wk_pmu_lease *l, struct tp_device *dev);

/** wk_pmu_lease_release() - drop one reference; the last stops the
 *  channel when this lease started it. */
void wk_pmu_lease_release(struct wk_pmu_lease *l, struct tp_device *dev);

/**
 * wk_pmu_event_type() - the event type a run with --enable-pmu
 * @requested uses on @plat (spec/pmu.md §1.4 place 1, then the
 * TASKPROF_PMU_EVENT_TYPE / SIMPLER_PMU_EVENT_TYPE override of §8.2; both
 * log their WARN / INFO lines). Call only when PMU is on (@requested > 0).
 */
uint32_t wk_pmu_event_type(const struct tp_platform *plat, int requested);

struct tp_run_result;

/**
 * wk_pmu_decide() - whether a run collects PMU, and its event type.
 * @requested: tp_worker_config.pmu_event_type.
 * @rounds:    the Worker's rounds.
 * @type:      receives the event type when on.
 *
 * On iff @requested > 0 and @rounds == 1 (rounds > 1: one INFO line
 * `PMU disabled: --rounds > 1`). A negative @requested is still resolved
 * (its WARN is logged) but leaves PMU off (spec §1.4 items 1, 4).
 */
bool wk_pmu_decide(const struct tp_platform *plat, int requested, int rounds, uint32_t *type);

struct wk_pmu;

/**
 * wk_pmu_open() - start one run's PMU collection on @dev.
 * @out:           receives the collection.
 * @dev:           the run's open device (not running).
 * @aicpu_threads: AICPU threads of the run.
 * @hbg:           host_build_graph (every AICPU thread schedules).
 * @event_type:    the resolved type (wk_pmu_event_type()).
 * @run_epoch:     the run identity printed in the run_epoch column.
 * @dir:           folder of pmu.csv.
 * @lease:         the Worker's lease, or NULL to collect without one
 *                 (tests of the unprotected window).
 *
 * Return: 0 or a negative errno (tp_last_error() set).
 */
int wk_pmu_open(struct wk_pmu **out, struct tp_device *dev, int aicpu_threads, bool hbg,
		uint32_t event_type, uint64_t run_epoch, const char *dir,
		struct wk_pmu_lease *lease);

/**
 * wk_pmu_wire() - route @h's hook points to the collector (hooks already
 * in @h, e.g. the swimlane's, keep being called first, with their own
 * ud), install the AICore window as @ec's kernel hooks, attach the model
 * (@ec->pmu_model) and force single issue (spec §6.2). Call before
 * tp_engine_run(); @h must stay valid until wk_pmu_close().
 */
void wk_pmu_wire(struct wk_pmu *p, struct tp_sched_hooks *h, struct tp_engine_config *ec);

/**
 * wk_pmu_stop() - after the device stopped: pmu_stop, then pmu_reconcile
 * (spec §5 log lines and the TIMING line of the producer notes).
 * @r: receives the figures (may be NULL).
 * Return: pmu_reconcile's.
 */
int wk_pmu_stop(struct wk_pmu *p, struct pmu_reconcile *r);

/** wk_pmu_notes() - the producer notes of @core (after wk_pmu_stop). */
int wk_pmu_notes(const struct wk_pmu *p, int core, struct tp_pmu_note *init,
		 struct tp_pmu_note *close);

/** wk_pmu_cores() - logical cores the collection covers. */
int wk_pmu_cores(const struct wk_pmu *p);

/**
 * wk_pmu_export() - write <dir>/pmu.csv (pmu_export).
 * @path: receives its path, "" when the run had no records (no file).
 * @rows: receives the rows written (may be NULL).
 * Return: pmu_export's.
 */
int wk_pmu_export(struct wk_pmu *p, char *path, size_t path_len, uint64_t *rows);

/**
 * wk_pmu_finish() - wk_pmu_stop then wk_pmu_export, filling @res's pmu_*
 * fields (figures, per-producer notes, the path).
 * Return: wk_pmu_export's (a reconcile mismatch is only reported).
 */
int wk_pmu_finish(struct wk_pmu *p, struct tp_run_result *res);

/** wk_pmu_lease_held() - whether this collection runs under the lease. */
bool wk_pmu_lease_held(const struct wk_pmu *p);

/** wk_pmu_model() - the run's PMU model (tests: foreign writer, stats). */
struct tp_pmu_model *wk_pmu_model(struct wk_pmu *p);

/** wk_pmu_close() - close the collector, drop the lease reference,
 *  destroy the model. NULL is a no-op. */
void wk_pmu_close(struct wk_pmu *p);

#endif /* TASKPROF_WORKER_RUN_PMU_H */
