/* SPDX-License-Identifier: MIT */
/*
 * runtime/engine.h — one run of the tensormap_and_ringbuffer runtime on a
 * simulated device (spec/runtime-model.md §2, §7.1 items 1, 7-9).
 *
 *   tp_engine_run()  launches the device: AICPU thread N-1 runs the
 *                    orchestration (runtime/orch.h) inside an outer scope,
 *                    AICPU threads 0..N-2 are scheduler threads (cluster ci
 *                    is owned by thread ci % (N-1)), every AICore runs the
 *                    AICore loop (§2.8). It returns when orchestration is
 *                    done, every task is consumed, the cores have exited and
 *                    every thread is joined (§2.12).
 *
 * Kernel ABI (pa_kernels.h, spec §7.1 item 9): `void fn(int64_t *args)`;
 * args[] = one pointer to a GM `struct tp_tile` per tensor argument (the
 * 2-D row-major view of the tensor: [Π leading dims, last dim], 1-D
 * tensors as [n, 1]), in add order, then the raw 64-bit scalars.
 *
 * Failure: a kernel whose tile ops fail (sticky core error) fails the run:
 * tp_engine_run() returns -EIO and the result names the task id, the
 * function name and the core's message. Later kernels are skipped (their
 * tasks still complete) so the graph drains and nothing hangs.
 *
 * Profiling hook points: struct tp_sched_hooks, a struct of function
 * pointers, all NULL by default. The runtime tests one predictable flag
 * before stamping and calling; with no hooks nothing is stamped or called.
 * Collectors (layer above) fill it in; the runtime never includes them.
 *
 * Dual issue (spec §2.7, §2.9): per core one running task and at most one
 * pending task; the pending one is dispatched (its token written to
 * DATA_MAIN_BASE, payload buffer token & 1) only after the running one's
 * ACK was observed; the core picks it up after FINing the running one.
 * tp_engine_config.single_issue forces single issue (the PMU sets it).
 *
 * SPMD (spec §2.7, §2.10): a task submitted with block_num B > 1
 * (tp_args_set_block_num) runs B blocks, each a subtask on one core (AIC /
 * AIV) or one cluster (MIX). A scheduler that pops it claims as many blocks
 * as it has eligible cores (next_block_idx) and re-pushes the task while
 * blocks remain; the task completes when every block finished. A kernel
 * learns its block with tp_kernel_block_idx() / tp_kernel_block_num()
 * (below): the kernel args are shared by all blocks.
 *
 * Predicated skip (spec §2.5, §2.10): a predicate (tp_args_set_predicate)
 * is evaluated once, at the ready point; false → the task completes inline
 * on a scheduler thread without dispatch (hook on_predicated_skip), its
 * consumers still run.
 *
 * Runtimes (spec §3): cfg.runtime selects
 *   TP_RUNTIME_TENSORMAP_RINGBUFFER (default, TRB): as above.
 *   TP_RUNTIME_HOST_BUILD_GRAPH (HBG): tp_engine_run() first calls the
 *     orchestration on the calling (host) thread, inside the outer scope,
 *     to completion: the whole graph goes into ONE ring (ring 0 at every
 *     scope depth) whose window holds cfg.max_graph_tasks tasks (0 →
 *     TP_HBG_DEFAULT_MAX_TASKS) and whose heap holds every packed output
 *     (cfg.ring_heap, 0 → TP_HBG_DEFAULT_HEAP). Nothing is reclaimed (no
 *     ring advance, no window back-pressure): a graph of more tasks fails
 *     the submit at once with -E2BIG, outputs beyond the heap with
 *     -ENOSPC, and the device is never launched. Then the device launches
 *     with ALL N AICPU threads as schedulers (N >= 1) and runs the built
 *     graph to completion. Dispatch, dual issue, SPMD, predicates, MIX,
 *     completion are shared with TRB. Dependencies use TRB's fanout lists
 *     (the reference's fanin_local_ids + wake lists are not modelled).
 *     Hooks under HBG: on_graph_built (host) stamps the build; no
 *     on_orch_submit; no RESOLVE / RELEASE phases (spec §3 table: the
 *     reference's HBG reclaims nothing and readies consumers through
 *     wake lists, not the resolve walk). The DUMMY phase and the
 *     on_marker / on_dummy / on_predicated_skip markers only where the
 *     platform has the HBG dummy-task path (tp_platform.hbg_dummy_path:
 *     a2a3sim yes, a5sim no), as seed 002 §2 and §8 say ("dummy_task is
 *     emitted by both a2a3 runtimes ... a5 host_build_graph has no
 *     dummy-task phase path"); predicated_skip goes with it, since this
 *     HBG implements predicated dispatch. Decision for taskprof: the seed
 *     wins over spec Appendix A item 8, which follows the reference code
 *     (no dummy records under HBG). On a5sim HBG dummies and skipped
 *     tasks complete with no record and no bar. on_phase COMPLETE /
 *     DISPATCH, on_dispatch, on_fin,
 *     on_pending_dispatch and on_sched_window as under TRB (collectors must
 *     not turn on_sched_window into a SchedWindow record under HBG; the
 *     Worker uses it for the scheduler time).
 *
 * Async wait (spec §2.10, §7.3 Tier 2, simplified): a kernel registers
 * completion conditions "uint32 counter at addr >= value"
 * (tp_kernel_async_wait, below); its subtask's FIN then does not complete
 * the task. A simulated DMA engine thread, started with the engine and
 * parked on a condition variable while idle, executes delayed copies and
 * counter bumps (tp_kernel_dma_copy). The scheduler's async_poll step
 * (spec §2.11 step 2; phase TP_PHASE_ASYNC_POLL, emitted whenever the
 * async list is non-empty, even with 0 completions) completes a task once
 * every condition of every subtask holds; only then do its consumers
 * become ready. Waits that never become true stall the run (-ETIMEDOUT
 * after stall_timeout_ms), nothing hangs.
 *
 * Stall timeout: tp_engine_run() installs the process's SIGCONT handler
 * (tp_watchdog_install(), chaining any handler installed before it), so
 * that the time the process spends stopped (SIGTSTP / SIGSTOP until
 * SIGCONT) does not count toward cfg.stall_timeout_ms.
 *
 * Early dispatch (spec §2.10, §7.3 Tier 2, simplified):
 * cfg.early_dispatch (default off; forced off under single_issue). When
 * every unfinished producer of a task has all its subtasks published to
 * cores (flag TP_SLOT_DISPATCH_PROPAGATED), a plain AIC / AIV task
 * (block_num 1, no predicate) becomes a candidate. A scheduler with an
 * idle core of its type and empty ready queues stages it there with a
 * gated payload (token in DATA_MAIN_BASE, DATA_MAIN_BASE_HI != token;
 * phase TP_PHASE_EARLY_DISPATCH, hook on_early_dispatch); the AICore ACKs,
 * then parks until DATA_MAIN_BASE_HI == token. The thread that makes the
 * task ready (the last producer's completion) writes the doorbell
 * DATA_MAIN_BASE_HI = token (hook on_early_doorbell). The task never runs
 * before all its producers completed. No PENDING task is placed behind a
 * gated one. Hooks: a gated task's on_fin @dispatch_ts is its doorbell
 * write time and its on_aicore_task @receive is when the gate opened
 * (on_dispatch / on_early_dispatch keep the staging time).
 *
 * Not here yet: the MIX-residual rule of the placement order.
 */
#ifndef TASKPROF_RUNTIME_ENGINE_H
#define TASKPROF_RUNTIME_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "platform/device.h"
#include "platform/topology.h"
#include "runtime/task_id.h"

struct tp_orch;
struct tp_pmu_model;

/* The runtime variant of a run (spec §3). */
enum tp_runtime_mode {
	TP_RUNTIME_TENSORMAP_RINGBUFFER = 0, /* orchestration on AICPU N-1, 4 rings */
	TP_RUNTIME_HOST_BUILD_GRAPH,         /* graph built on the host first, 1 ring */
};

/* HBG: default cap on the tasks of one graph (the ring window is the next
 * power of 2 above it) and default packed-output heap (address space is
 * reserved; pages are touched only as outputs are placed). */
#define TP_HBG_DEFAULT_MAX_TASKS 131071u
#define TP_HBG_DEFAULT_HEAP (1ull << 30)

/**
 * struct tp_kernel_entry - one incore kernel, indexed by func_id
 * (spec/runtime-model.md §7.1 item 9).
 * @fn:        the kernel, `void fn(int64_t *args)` (tensors, then
 *             scalars); NULL: an empty kernel.
 * @core_type: the core type it runs on.
 * @name:      for messages; NULL → "func<id>".
 */
struct tp_kernel_entry {
	void (*fn)(int64_t *args);  /* NULL: an empty kernel */
	enum tp_core_type core_type;
	const char *name;           /* for messages; NULL → "func<id>" */
};

/* Scheduler phases with a swimlane bar (spec §2.11). */
enum tp_sched_phase {
	TP_PHASE_COMPLETE = 0,  /* completion poll incl. resolve */
	TP_PHASE_RESOLVE,       /* inner: one on_task_complete walk */
	TP_PHASE_DUMMY,         /* dummy drain */
	TP_PHASE_DISPATCH,      /* dispatch_ready_tasks */
	TP_PHASE_RELEASE,       /* deferred release drain */
	/* Added after the first version (append only). */
	TP_PHASE_ASYNC_POLL,    /* async wait list poll (§2.11 step 2) */
	TP_PHASE_EARLY_DISPATCH,/* try_early_dispatch (§2.11 step 4b): emitted
				 * when >= 1 task was staged gated */
	TP_PHASE_COUNT
};

/**
 * struct tp_phase_detail - extra figures of one scheduler phase record
 * (on_phase_detail; spec/swimlane-format.md §1.6).
 * @pop_hit, @pop_miss: ready-queue pops of this thread since its previous
 *                      DISPATCH record; DISPATCH only, 0 otherwise.
 * @depth_start, @depth_end: ready-queue depth (tasks) per shape [AIC, AIV,
 *                      MIX] at the phase's start and end.
 */
struct tp_phase_detail {
	uint32_t pop_hit, pop_miss;  /* DISPATCH only; 0 otherwise */
	int16_t depth_start[3];      /* ready-queue depth [AIC, AIV, MIX] */
	int16_t depth_end[3];
};

/**
 * struct tp_sched_hooks - optional collector hook points (NULL: not called).
 * Timestamps are tp_sys_cnt() ticks. All run on the scheduler thread
 * @thread (0..S-1) unless noted.
 *
 * @on_phase:    a phase bar [start, end] of loop iteration @loop_iter,
 *               @tasks = tasks processed (only emitted when > 0, §2.11).
 * @on_dispatch: a subtask published to @core with token @reg_task_id;
 *               @ts stamped before the register write.
 * @on_fin:      a subtask's FIN observed on @core; @finish_ts stamped right
 *               after the COND load, before any bookkeeping; @dispatch_ts
 *               is on_dispatch's @ts, or for a gated (early-dispatched)
 *               task the doorbell write time.
 * @on_dummy:    a dummy task completed inline at @ts (zero-width marker).
 * @on_sched_window: [start, end] of thread @thread's scheduler loop.
 * @on_orch_submit: orchestrator thread: one submit / alloc_tensors
 *               [start, end], @submit_idx counts submits from 0.
 * @ud:          passed to every hook.
 */
struct tp_sched_hooks {
	void (*on_phase)(void *ud, int thread, enum tp_sched_phase phase,
			 uint64_t start, uint64_t end, uint64_t loop_iter,
			 uint32_t tasks);
	void (*on_dispatch)(void *ud, int thread, int core, tp_task_id task,
			    int func_id, uint32_t reg_task_id, uint64_t ts);
	void (*on_fin)(void *ud, int thread, int core, tp_task_id task,
		       int func_id, uint32_t reg_task_id, uint64_t dispatch_ts,
		       uint64_t finish_ts);
	void (*on_dummy)(void *ud, int thread, tp_task_id task, uint64_t ts);
	void (*on_sched_window)(void *ud, int thread, uint64_t start, uint64_t end);
	void (*on_orch_submit)(void *ud, tp_task_id task, uint64_t submit_idx,
			       uint64_t start, uint64_t end);
	void *ud;
	/* Added after the first version (append only). */
	/* @on_pending_dispatch: a subtask published to @core as its PENDING
	 *               task (dual issue) while @running_token runs (its ACK
	 *               observed); called before the register write, after
	 *               on_dispatch. */
	void (*on_pending_dispatch)(void *ud, int thread, int core, tp_task_id task,
				    uint32_t reg_task_id, uint32_t running_token);
	/* @on_predicated_skip: a task whose predicate was false completed
	 *               inline at @ts (zero-width marker, spec §2.11 step 3). */
	void (*on_predicated_skip)(void *ud, int thread, tp_task_id task, uint64_t ts);
	/* @on_graph_built: HBG only, on the host thread before the device
	 *               launches: the orchestration built @tasks tasks in
	 *               [start, end] (tp_sys_cnt() ticks); every on_dispatch
	 *               ts is later than @end. */
	void (*on_graph_built)(void *ud, uint64_t tasks, uint64_t start, uint64_t end);
	/* @on_early_dispatch: a task staged gated on idle @core with token
	 *               @reg_task_id at @ts (after its on_dispatch). */
	void (*on_early_dispatch)(void *ud, int thread, int core, tp_task_id task,
				  uint32_t reg_task_id, uint64_t ts);
	/* @on_early_doorbell: the staged task became ready: its doorbell
	 *               (DATA_MAIN_BASE_HI = @reg_task_id) was written at
	 *               @ts, by scheduler @thread or, when -1, the
	 *               orchestrator. */
	void (*on_early_doorbell)(void *ud, int thread, int core, tp_task_id task,
				  uint32_t reg_task_id, uint64_t ts);
	/* Swimlane (seed 002 §5.1, spec/runtime-model.md §2.8, §2.11). */
	/* @on_aicore_task: on the AICore thread of @core, once per executed
	 *               subtask, BEFORE its FIN is written (so a FIN the
	 *               AICPU observes publishes what this hook stored; the
	 *               reference writes the record after the FIN and must
	 *               then defer buffer rotation to the next ACK).
	 *               @receive: the token was read (gated task: its gate
	 *               opened); @start: right before the kernel; @end:
	 *               right after it. */
	void (*on_aicore_task)(void *ud, int core, tp_task_id task, uint32_t reg_task_id,
			       uint64_t receive, uint64_t start, uint64_t end);
	/* @on_phase_detail: like on_phase (called instead of it when set),
	 *               with @d: ready-queue depths per shape [AIC, AIV, MIX]
	 *               at the phase's start and end, and for DISPATCH the
	 *               ready-queue pop hits / misses of this thread since
	 *               its previous DISPATCH record. A final DISPATCH record
	 *               with @tasks 0 and start == end carries residual pop
	 *               counts when the loop ends. */
	void (*on_phase_detail)(void *ud, int thread, enum tp_sched_phase phase,
				uint64_t start, uint64_t end, uint64_t loop_iter,
				uint32_t tasks, const struct tp_phase_detail *d);
	/* @on_marker:   a dummy task (@predicated false) or a predicated skip
	 *               (@predicated true) completed inline at @ts (zero-width
	 *               marker stamped at its resolve start); called instead
	 *               of on_dummy / on_predicated_skip when set. */
	void (*on_marker)(void *ud, int thread, bool predicated, tp_task_id task,
			  uint64_t ts, uint64_t loop_iter, const int16_t depth[3]);
	/* @on_sched_exit: scheduler @thread left its loop (after
	 *               on_sched_window): flush per-thread buffers. */
	void (*on_sched_exit)(void *ud, int thread);
	/* @on_aicore_receive: on the AICore thread of @core, right after it
	 *               read token @reg_task_id and before its ACK (so before
	 *               the AICPU may dispatch the next token): where this
	 *               task's on_aicore_task record will go is decided here
	 *               (swimlane buffer rotation, seed 002 §5.1). */
	void (*on_aicore_receive)(void *ud, int core, uint32_t reg_task_id);
	/* PMU (seed 000 §5.1-§5.3, spec/pmu.md §4, §6). */
	/* @on_sched_cores_up: scheduler @thread handshook its @n cores
	 *               @cores and has not dispatched to any of them yet
	 *               (AICPU run init: program the PMU). Not called when
	 *               the handshake failed. */
	void (*on_sched_cores_up)(void *ud, int thread, const int *cores, int n);
	/* @on_sched_cores_down: scheduler @thread left its loop (after
	 *               on_sched_exit) and is about to shut its cores down
	 *               (AICPU finalize: restore the PMU control words). */
	void (*on_sched_cores_down)(void *ud, int thread, const int *cores, int n);
	/* @on_aicore_done: on the AICore thread of @core, once per executed
	 *               (or, in a failed run, skipped) subtask, after the
	 *               kernel body and its kernel_hooks.on_kernel_end, before
	 *               its FIN (a5 PMU staging). */
	void (*on_aicore_done)(void *ud, int core, tp_task_id task, uint32_t reg_task_id);
	/* @task_times:  the hooks above use the times on_dispatch, on_fin and
	 *               on_early_doorbell pass (swimlane level 2 and up).
	 *               Without it those times are 0 and not stamped: a
	 *               PMU-only or level-1 run needs the calls, not the
	 *               times, and each stamp costs the AICPU threads. */
	bool task_times;
};

struct tp_tensor;

/**
 * struct tp_orch_hooks - dep_gen hook points of the orchestrator
 * (spec/runtime-model.md §2.4 step 2, §7.1 item 11: edges are recorded at
 * submit time). NULL: not called; with cfg.orch_hooks NULL the submit path
 * tests one pointer and does nothing else. Called on the orchestrator
 * thread (the AICPU orchestrator under TRB, the host thread under HBG), in
 * submit order. alloc_tensors calls neither: its task is only ever a
 * creator edge's @pred.
 *
 * @on_dep_task: one submit / submit_dummy, before its outputs are
 *               materialised: @task, @manual (submitted inside a manual
 *               scope), @early_dispatch (the task may be staged early),
 *               @kernel_id [AIC, AIV0, AIV1] after normalisation (-1
 *               inactive), @block_num (>= 1), @n_args tensor arguments
 *               with @tags (enum tp_arg_tag) and @tensors (OUTPUT entries
 *               are create-infos: no buffer yet).
 * @on_dep_edge: one edge @pred -> @succ, emitted after @succ's
 *               on_dep_task: through consumer tensor argument @arg (-1 for
 *               an explicit dependency), @source (enum tp_dep_source),
 *               @overlap (enum tp_overlap, TENSORMAP only, else 0) and
 *               @producer_view (the producer's view, TENSORMAP only, else
 *               NULL). Every edge is reported, also when @pred already
 *               is a producer of @succ through another argument.
 * @ud:          passed to both.
 */
struct tp_orch_hooks {
	void (*on_dep_task)(void *ud, tp_task_id task, bool manual, bool early_dispatch,
			    const int32_t kernel_id[3], uint32_t block_num, uint32_t n_args,
			    const uint8_t *tags, const struct tp_tensor *tensors);
	void (*on_dep_edge)(void *ud, tp_task_id pred, tp_task_id succ, int32_t arg,
			    int source, int overlap, const struct tp_tensor *producer_view);
	void *ud;
};

/**
 * typedef tp_orch_fn - the orchestration: runs on the orchestrator thread
 * inside the outer scope (spec/runtime-model.md §2.1).
 * @o:   the orchestrator, for the calls of runtime/orch.h.
 * @arg: tp_engine_run()'s @arg.
 *
 * Return: 0, or a negative errno, which fails the run (-ECANCELED: the
 * run had already failed).
 */
typedef int (*tp_orch_fn)(struct tp_orch *o, void *arg);

/* Default stall timeout (ms) and the value that turns it off
 * (tp_engine_config.stall_timeout_ms). */
#define TP_ENGINE_DEFAULT_STALL_MS 10000u
#define TP_ENGINE_STALL_NEVER UINT64_MAX
/* Where a user raises the stall timeout; the stall messages name it. */
#define TP_ENGINE_STALL_HINT \
	"raise the stall timeout with taskprof run --stall-timeout SECONDS (0: never)"

/**
 * struct tp_engine_config - one run of tp_engine_run(); zero fields take
 * the defaults given beside them (ring_heap in bytes, times in ms).
 */
struct tp_engine_config {
	struct tp_device *dev;          /* open, not running; aicpu_threads >= 2 */
	const struct tp_kernel_entry *kernels; /* indexed by func_id */
	int num_kernels;
	uint32_t ring_window;           /* task window per ring; 0 → 16384 */
	uint64_t ring_heap;             /* packed-output heap per ring, bytes;
					 * 0 → 64 MiB (HBG: TP_HBG_DEFAULT_HEAP) */
	uint64_t stall_timeout_ms;      /* ms without progress before a run
					 * fails: a scheduler with work
					 * outstanding (-ETIMEDOUT, spec §2.11
					 * step 5) or the orchestrator blocked
					 * on a full ring (-EDEADLK); 0 →
					 * TP_ENGINE_DEFAULT_STALL_MS,
					 * TP_ENGINE_STALL_NEVER: never. Time
					 * the process spends stopped does not
					 * count (base/watchdog.h). */
	const struct tp_sched_hooks *hooks;   /* NULL: none */
	struct tp_kernel_hooks kernel_hooks;  /* passed to the device launch */
	bool single_issue;              /* no PENDING stage (PMU enabled) */
	/* Added after the first version. */
	enum tp_runtime_mode runtime;   /* 0: tensormap_and_ringbuffer */
	uint32_t max_graph_tasks;       /* HBG: tasks the one ring holds (cap);
					 * 0 → TP_HBG_DEFAULT_MAX_TASKS; ignored
					 * under TRB (use ring_window) */
	bool early_dispatch;            /* simplified early dispatch (off by
					 * default; ignored under single_issue) */
	const struct tp_orch_hooks *orch_hooks; /* dep_gen; NULL: none */
	struct tp_pmu_model *pmu_model; /* PMU: every core's tile context is
					 * attached to it for the run
					 * (tp_pmu_attach); NULL: none */
	bool check_tensor_memory;       /* a kernel task's tensors must lie in
					 * one live allocation of @dev's memory
					 * or in a ring's packed-output heap
					 * (the Worker: case tensors; unit
					 * tests pass host arrays) */
};

/**
 * struct tp_engine_result - what a run did; counts are tasks / subtasks
 * unless named otherwise; @graph_build_ns is ns of CLOCK_MONOTONIC_RAW
 * (tp_now_ns()).
 */
struct tp_engine_result {
	int rc;                         /* as tp_engine_run()'s return */
	uint64_t total_tasks;           /* submitted, inline ones included */
	uint64_t completed_tasks;
	uint64_t dispatched_subtasks;
	uint64_t dummy_tasks;           /* completed inline by schedulers */
	uint64_t inline_tasks;          /* alloc_tensors */
	uint64_t max_running_per_core;  /* executing at once on a core: 1 */
	tp_task_id failed_task;         /* TP_TASK_ID_INVALID if none */
	int failed_func;                /* -1 if none */
	char msg[TP_ERROR_MSG_MAX];     /* first failure, "" if none */
	/* Added after the first version. */
	uint64_t pending_dispatches;    /* subtasks published as PENDING; 0
					 * under single_issue */
	uint64_t max_outstanding_per_core; /* running + pending: <= 2, 1 under
					 * single_issue */
	uint64_t predicated_skips;      /* tasks skipped by a false predicate */
	uint64_t spmd_repushes;         /* SPMD tasks re-pushed with blocks left */
	uint64_t graph_build_ns;        /* HBG: host orchestration time; 0 under TRB */
	uint64_t reclaimed_tasks;       /* ring slots reclaimed (0 under HBG) */
	uint64_t async_waits;           /* conditions registered by kernels */
	uint64_t async_completions;     /* tasks completed by the async poll */
	uint64_t dma_requests;          /* DMA engine requests executed */
	uint64_t early_staged;          /* tasks staged gated (early dispatch) */
	uint64_t early_doorbells;       /* gated tasks whose doorbell was rung */
};

/**
 * tp_engine_run() - run @orch on the device of @cfg to completion.
 * @cfg:  configuration.
 * @orch: the orchestration.
 * @arg:  passed to @orch.
 * @res:  receives the result (may be NULL).
 *
 * Return: 0; -EINVAL for a bad configuration; -ENOMEM; -EIO when a kernel
 * failed (res->msg: task id, function name, the core's message); the
 * orchestration's own error (-EDEADLK when a ring stayed full for the
 * stall timeout); -ETIMEDOUT on a scheduler stall; under HBG
 * -E2BIG when the graph exceeds max_graph_tasks and -ENOSPC when its
 * outputs exceed ring_heap (unless the orchestration mapped them to
 * another error).
 * tp_last_error() is set on failure.
 */
int tp_engine_run(const struct tp_engine_config *cfg, tp_orch_fn orch, void *arg,
		  struct tp_engine_result *res);

/**
 * tp_kernel_block_idx() - inside a kernel: the SPMD block this core runs,
 * 0 .. block_num - 1. Thread-local to the AICore thread; 0 outside a
 * kernel.
 */
uint32_t tp_kernel_block_idx(void);

/**
 * tp_kernel_block_num() - inside a kernel: the task's block_num (1 for a
 * plain task); 0 outside a kernel.
 */
uint32_t tp_kernel_block_num(void);

/* Conditions one subtask may register (MAX_ASYNC_WAITS). */
#define TP_MAX_ASYNC_WAITS 64

/**
 * tp_kernel_async_wait() - inside a kernel: the task completes only once
 * the uint32 at @counter (read atomically, acquire) is >= @value. Any
 * number of the task's subtasks may register conditions; the task
 * completes after its last FIN when all of them hold.
 *
 * Return: 0; -EPERM outside a kernel; -EINVAL for a NULL or misaligned
 * @counter; -E2BIG beyond TP_MAX_ASYNC_WAITS conditions in one subtask.
 */
int tp_kernel_async_wait(const uint32_t *counter, uint32_t value);

/**
 * tp_kernel_dma_copy() - inside a kernel: ask the engine's simulated DMA
 * engine to copy @bytes from @src to @dst (may be 0 bytes) no earlier than
 * @delay_ns from now, then atomically add 1 (release) to the uint32 at
 * @counter (may be NULL). Returns at once; the copy runs on the DMA
 * thread. @src must stay unchanged and @dst unread until the counter
 * shows the copy (wait on it with tp_kernel_async_wait()).
 *
 * Return: 0; -EPERM outside a kernel; -EINVAL for a bad argument; -ENOMEM.
 */
int tp_kernel_dma_copy(void *dst, const void *src, size_t bytes, uint32_t *counter,
		       uint64_t delay_ns);

#endif /* TASKPROF_RUNTIME_ENGINE_H */
