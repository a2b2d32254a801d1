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
 *     wk_pmu_finish()    pmu_stop, the merge into <dir>/pmu.csv
 *                        (wk_pmu_export), then pmu_reconcile (+ the notes)
 *     wk_pmu_close()     collector, lease reference, model
 *
 * A retained run (collect_across_runs) instead: wk_pmu_open_retained(),
 * wk_pmu_wire(), the run, wk_pmu_retire() (the device-side reads, the
 * verdict, then lease / model / pool released), wk_pmu_retain(); later
 * wk_pmu_flush() exports and closes it (see "retained runs" below).
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

#include <pthread.h>
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
 * line is logged and the collection proceeds unprotected (seed 000 §7.0).
 * @l:   the Worker's lease.
 * @dev: the run's device; the first reference starts the channel on it.
 *
 * Return: true when the channel is held by this lease.
 */
bool wk_pmu_lease_acquire(struct wk_pmu_lease *l, struct tp_device *dev);

/**
 * wk_pmu_lease_release() - drop one reference; the last stops the channel
 * when this lease started it (a failed stop is a WARN line). With no
 * reference held it does nothing.
 * @l:   the Worker's lease.
 * @dev: the device the lease was taken on.
 */
void wk_pmu_lease_release(struct wk_pmu_lease *l, struct tp_device *dev);

/**
 * wk_pmu_event_type() - the event type a run with --enable-pmu
 * @requested uses on @plat (spec/pmu.md §1.4 place 1, then the
 * TASKPROF_PMU_EVENT_TYPE / SIMPLER_PMU_EVENT_TYPE override of §8.2; both
 * log their WARN / INFO lines). Call only when PMU is on (@requested > 0).
 * @plat:      the run's platform (selects a2a3 or a5 event groups).
 * @requested: tp_worker_config.pmu_event_type.
 *
 * Return: the event type to program, a valid group of @plat.
 */
uint32_t wk_pmu_event_type(const struct tp_platform *plat, int requested);

struct tp_run_result;

/**
 * wk_pmu_decide() - whether a run collects PMU, and its event type.
 * @plat:      the run's platform.
 * @requested: tp_worker_config.pmu_event_type.
 * @rounds:    the Worker's rounds.
 * @type:      receives the event type when on.
 *
 * On iff @requested > 0 and @rounds == 1 (rounds > 1: one WARN line
 * `PMU disabled: --rounds > 1`, spec/pmu.md §8.3). A negative @requested is still resolved
 * (its WARN is logged) but leaves PMU off (spec §1.4 items 1, 4).
 *
 * Return: true when PMU is on (*@type set); false otherwise (*@type 0).
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

/**
 * wk_pmu_notes() - the producer notes of @core (after wk_pmu_stop);
 * pmu_notes() of the collector.
 * @p:     the collection.
 * @core:  logical core id.
 * @init:  receives producer_note (may be NULL).
 * @close: receives producer_note_close (may be NULL).
 *
 * Return: 0; -EINVAL for a bad @core or a released pool.
 */
int wk_pmu_notes(const struct wk_pmu *p, int core, struct tp_pmu_note *init,
		 struct tp_pmu_note *close);

/**
 * wk_pmu_cores() - logical cores the collection covers.
 * @p: the collection (non-NULL; not checked).
 *
 * Return: the core count.
 */
int wk_pmu_cores(const struct wk_pmu *p);

/**
 * wk_pmu_export() - write <dir>/pmu.csv (pmu_export, spec/pmu.md §2.4).
 * @p:        the collection, after wk_pmu_stop().
 * @path:     receives its path, "" when the run had no records (no file)
 *            or the export failed; may be NULL.
 * @path_len: bytes of @path; a longer path is truncated.
 * @rows:     receives the rows written (may be NULL).
 *
 * Return: pmu_export's.
 */
int wk_pmu_export(struct wk_pmu *p, char *path, size_t path_len, uint64_t *rows);

/**
 * wk_pmu_finish() - stop, wk_pmu_export, then the reconcile (the merge
 * is part of the reconcile, spec/pmu.md §2.4, §5 step 3: a failed merge
 * counts 0 collected, so the reconcile reports the mismatch), filling
 * @res's pmu_* fields (figures, per-producer notes, the path).
 * Return: wk_pmu_export's, with its error (a reconcile mismatch is only
 * reported).
 */
int wk_pmu_finish(struct wk_pmu *p, struct tp_run_result *res);

/**
 * wk_pmu_lease_held() - whether this collection runs under the lease.
 * @p: the collection (non-NULL; not checked).
 *
 * Return: true when the channel-53 lease was held at open (seed 000 §7.0).
 */
bool wk_pmu_lease_held(const struct wk_pmu *p);

/**
 * wk_pmu_model() - the run's PMU model (tests: foreign writer, stats).
 * @p: the collection (non-NULL; not checked).
 *
 * Return: the model, owned by @p; NULL once it is released.
 */
struct tp_pmu_model *wk_pmu_model(struct wk_pmu *p);

/** wk_pmu_close() - close the collector, drop the lease reference,
 *  destroy the model. NULL is a no-op. */
void wk_pmu_close(struct wk_pmu *p);

/**
 * wk_pmu_drop_lease() - give back this collection's reference to the
 * Worker's channel-53 lease now (seed 000 §7.0), for a collection that is
 * never closed: one left with a device whose AICore threads a stall left
 * running (worker.c). The lease guards the counters of runs to come; the
 * stalled run's are abandoned. NULL, or a collection without a lease
 * reference (none taken, retired, dropped before), is a no-op.
 */
void wk_pmu_drop_lease(struct wk_pmu *p);

/* ---- retained runs (collect_across_runs, seed 000 §3.4, FAQ) -----------
 *
 * A retained run is opened with wk_pmu_open_retained() (its pool may grow
 * to twice its seeded bytes), and at the end of its run wk_pmu_retire()
 * takes the reads that need the device (stop, reconcile, notes), judges
 * the run and releases everything tied to the device (lease reference,
 * model, pool), so the collector outlives the run's device. Its pmu.csv
 * is written later, by wk_pmu_flush(). The Worker keeps the runs awaiting
 * publication and the sticky failure in a struct wk_pmu_retention.
 */

/* What a retained run proved (seed 000 §3.4). */
enum wk_pmu_verdict {
	WK_PMU_COMPLETE = 0, /* counters read, cut settled, collected == total, no loss */
	WK_PMU_ZERO,         /* proved empty: every device counter 0, cut settled */
	WK_PMU_INCOMPLETE,   /* drops, mismatches, unflushed records, shard I/O
			      * failure or an unbalanced count: rows published, raises */
	WK_PMU_UNKNOWN,      /* counters unreadable or the cut never settled */
};

/**
 * wk_pmu_verdict_name() - name of @v for log lines and messages.
 * @v: a verdict.
 *
 * Return: "complete", "proved-zero", "incomplete" or "unknown" (static
 * strings).
 */
const char *wk_pmu_verdict_name(enum wk_pmu_verdict v);

/**
 * wk_pmu_open_retained() - wk_pmu_open() for a retained run: the pool's
 * growth is capped at twice the bytes it was seeded with (pmu_config
 * .retained); beyond it the device drops and the flush raises.
 * @out, @dev, @aicpu_threads, @hbg, @event_type, @run_epoch, @dir, @lease:
 *       as wk_pmu_open().
 *
 * Return: as wk_pmu_open().
 */
int wk_pmu_open_retained(struct wk_pmu **out, struct tp_device *dev, int aicpu_threads,
			 bool hbg, uint32_t event_type, uint64_t run_epoch, const char *dir,
			 struct wk_pmu_lease *lease);

/**
 * wk_pmu_retire() - end of a retained run, before its device closes: the
 * wk_pmu_finish() figures into @res without the export (@res->pmu_csv
 * "", @res->pmu_retained true), the verdict, then the lease reference,
 * the model and the pool are released.
 * Return: the reconcile's (informative; the verdict is what counts).
 */
int wk_pmu_retire(struct wk_pmu *p, struct tp_run_result *res);

/**
 * wk_pmu_retire_failed() - after wk_pmu_retire(): the run itself failed
 * (@run_err: a stall whose AICores did exit, a kernel or orchestration
 * error), so it did not complete its graph and nothing proves its records
 * complete: the verdict becomes unknown ("the run failed before its graph
 * completed (@run_err)"); the rows that arrived are still published.
 */
void wk_pmu_retire_failed(struct wk_pmu *p, const char *run_err);

/**
 * wk_pmu_get_verdict() - the verdict of a retired run (seed 000 §3.4).
 * @p: the collection, after wk_pmu_retire() (non-NULL; not checked).
 *
 * Return: enum wk_pmu_verdict.
 */
enum wk_pmu_verdict wk_pmu_get_verdict(const struct wk_pmu *p);

/* Retained runs a Worker may hold unpublished (seed 000 §3.4). */
#define WK_PMU_MAX_RETAINED 2

/**
 * struct wk_pmu_retention - a Worker's retained runs and their background
 * writer. Zero-initialise; wk_pmu_retention_fini() frees it. Every field
 * below @mu is guarded by it once @inited.
 * @inited:      @mu / @cv made (lazily, on the first admission).
 * @th_started:  the writer thread runs (started with the first retained run).
 * @run:         runs awaiting publication, oldest first; the one being
 *               written stays here (and counted) until it is done.
 * @n:           how many.
 * @flushing:    a flush waits: the writer ignores the test hold.
 * @stop:        fini: the writer publishes what is queued and exits.
 * @failed:      a run failed (sticky for the Worker's life).
 * @first:       the first failure's description (the sticky message).
 * @pending:     failures not yet reported by a flush, "; "-separated.
 * @failed_dirs: directories where a failed write left its temp files.
 */
struct wk_pmu_retention {
	bool inited, th_started;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct wk_pmu *run[WK_PMU_MAX_RETAINED];
	int n;
	bool flushing, stop;
	bool failed;
	char first[1024];
	char pending[4096];
	char **failed_dirs;
	int n_failed_dirs;
};

/**
 * wk_pmu_admit() - whether a new PMU run may start (before anything is
 * submitted). Refused with -EBUSY when WK_PMU_MAX_RETAINED runs are
 * unpublished ("both retained PMU runs are still unpublished ..."), with
 * -EEXIST while a directory of a failed write still holds its
 * pmu.csv.e<epoch>.*.tmp files ("... still holds a failed run's temporary
 * files ..."); a directory whose files were removed is forgotten.
 * Return: 0 or the negative errno (tp_last_error() set).
 */
int wk_pmu_admit(struct wk_pmu_retention *rt);

/** wk_pmu_retain() - queue retired @p for publication by the background
 *  writer, started on first use (wk_pmu_admit said yes, so there is room).
 *  The writer publishes it while the Worker's next run executes. */
void wk_pmu_retain(struct wk_pmu_retention *rt, struct wk_pmu *p);

/**
 * wk_pmu_fail_unretained() - a retained-mode run of @rt's Worker whose
 * PMU collection could not be retained at all (a stall whose AICores
 * still run: its counters are never read, its records never published).
 * It counts as failed like a retained run judged unknown: the failure is
 * recorded at once (ERROR line) and is sticky, so the next flush, and
 * every later one, fails naming "run_epoch @epoch (@dir): unknown: @why;
 * 0 rows published".
 */
void wk_pmu_fail_unretained(struct wk_pmu_retention *rt, uint64_t epoch, const char *dir,
			    const char *why);

/**
 * wk_pmu_flush() - wait until the writer has published every queued run
 * (pmu.csv of each, none for a proved-zero run; it overrides the test
 * hold) and report: any run not proved complete or whose write failed
 * makes the failure sticky. A failed write keeps the temp files and
 * records the directory (wk_pmu_admit).
 * Return: 0 when no run of this retention ever failed; -EIO otherwise,
 * tp_last_error() naming each newly failed run (run_epoch, directory,
 * verdict, counts) or, with none new, the first (sticky) failure.
 */
int wk_pmu_flush(struct wk_pmu_retention *rt);

/** wk_pmu_retention_fini() - let the writer publish what is queued,
 *  join it and free @rt. Call wk_pmu_flush() first to hear of failures. */
void wk_pmu_retention_fini(struct wk_pmu_retention *rt);

/* Test faults (one shot, process-wide). For the next reconcile: DROP
 * counts @n more records as dropped by the device (in its total too),
 * UNREADABLE makes the device counters unreadable. For the next export
 * of pmu.csv: WRITE puts a directory where pmu.csv goes, so the final
 * rename fails as a full or broken disk would (EISDIR). */
enum wk_pmu_fault {
	WK_PMU_FAULT_NONE = 0,
	WK_PMU_FAULT_DROP,
	WK_PMU_FAULT_UNREADABLE,
	WK_PMU_FAULT_WRITE,
};
/**
 * wk_pmu_test_fault() - arm one test fault (one shot, process-wide).
 * @f: the fault; WK_PMU_FAULT_NONE disarms an armed DROP / UNREADABLE
 *     (not an armed WRITE).
 * @n: records for WK_PMU_FAULT_DROP; ignored otherwise.
 */
void wk_pmu_test_fault(enum wk_pmu_fault f, uint64_t n);

/**
 * wk_pmu_test_hold_writer() - test point: while @hold, every background
 * writer waits before its next publication (a slow disk); a flush or fini
 * overrides it.
 */
void wk_pmu_test_hold_writer(bool hold);

#endif /* TASKPROF_WORKER_RUN_PMU_H */
