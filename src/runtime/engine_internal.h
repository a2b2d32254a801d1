/* SPDX-License-Identifier: MIT */
/*
 * runtime/engine_internal.h — shared state of one engine run (orchestrator,
 * scheduler threads, AICore loop). Private to src/runtime/.
 */
#ifndef TASKPROF_RUNTIME_ENGINE_INTERNAL_H
#define TASKPROF_RUNTIME_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "platform/device.h"
#include "platform/doorbell.h"
#include "platform/tile/core_ctx.h"
#include "runtime/engine.h"
#include "runtime/fanin.h"
#include "runtime/orch.h"
#include "runtime/release.h"
#include "runtime/ring.h"
#include "runtime/slot.h"
#include "runtime/tensormap.h"

/* Dispatchable resource shapes (PTO2ResourceShape) + DUMMY. */
enum tp_shape {
	TP_SHAPE_AIC = 0,
	TP_SHAPE_AIV,
	TP_SHAPE_MIX,
	TP_NUM_SHAPES,
	TP_SHAPE_DUMMY = TP_NUM_SHAPES,
};

/**
 * struct tp_task_payload - cold per-slot payload (PTO2TaskPayload,
 * spec/runtime-model.md §2.2): the kernel args (tensors as GM tiles, then
 * scalars), the shape, the predicate, and the async-wait and
 * early-dispatch state. Reset at submit.
 */
struct tp_task_payload {
	uint32_t n_tensors, n_scalars;
	struct tp_tile tiles[TP_MAX_TENSOR_ARGS];
	int64_t args[TP_MAX_TENSOR_ARGS + TP_MAX_SCALAR_ARGS];
	uint8_t shape;  /* enum tp_shape */
	/* DispatchPredicate (resolved to an absolute address at submit). */
	uint8_t has_pred, pred_op, pred_size;
	uint8_t pred_skip;  /* set at the ready point: predicate was false */
	uint64_t pred_addr;
	int64_t pred_target;
	/* Async wait (runtime/async.c), reset at submit. has_async: a
	 * subtask registered conditions (set before its subtask count);
	 * async_outstanding / async_deferred under engine async_mu. */
	_Atomic uint8_t has_async;
	uint8_t async_deferred;     /* every subtask finished, conditions left */
	uint32_t async_outstanding; /* conditions not yet seen true */
	/* Early dispatch (engine.c), reset at submit. published: subtasks
	 * published to cores; early_state: enum tp_early_state; early_core /
	 * early_token: where the task is staged (written before STAGED).
	 * early_ring_ts: tp_sys_cnt() of the doorbell write (hooks on only),
	 * stored by the ringing thread before its release store of
	 * DATA_MAIN_BASE_HI and read by the owning scheduler at the FIN: the
	 * task's swimlane dispatch time (see tp_engine_early_ring). */
	_Atomic uint32_t published;
	_Atomic uint8_t early_state;
	int32_t early_core;
	uint32_t early_token;
	uint64_t early_ring_ts;
};

/* Early-dispatch state of a task (payload early_state). */
enum tp_early_state {
	TP_EARLY_NONE = 0,
	TP_EARLY_CANDIDATE,    /* in an early queue */
	TP_EARLY_STAGING,      /* a scheduler is staging it gated */
	TP_EARLY_STAGED,       /* gated on early_core, doorbell not rung */
	TP_EARLY_READY,        /* routed normally (never staged) */
	TP_EARLY_RING_PENDING, /* became ready while STAGING: stager rings */
	TP_EARLY_RUNG,         /* doorbell written */
};

/**
 * struct tp_async_slab - conditions registered by one subtask while it
 * runs (per core, per payload buffer token & 1): written by the AICore,
 * read by the owning scheduler after the FIN (the COND acquire publishes
 * them). @n entries of (uint32 counter address, value).
 */
struct tp_async_slab {
	uint32_t n;
	struct {
		const uint32_t *addr;
		uint32_t value;
	} c[TP_MAX_ASYNC_WAITS];
};

/**
 * struct tp_async_entry - one registered condition of a task on the async
 * wait list (spec/runtime-model.md §2.10): @slot completes once *@addr >=
 * @value.
 */
struct tp_async_entry {
	struct tp_slot *slot;
	const uint32_t *addr;
	uint32_t value;
};

/**
 * struct tp_dma_req - a delayed copy of @bytes from @src to @dst, then a
 * release +1 of *@counter (may be NULL), due at @due_ns (tp_now_ns(), ns
 * of CLOCK_MONOTONIC_RAW).
 */
struct tp_dma_req {
	void *dst;
	const void *src;
	size_t bytes;
	uint32_t *counter;
	uint64_t due_ns;  /* tp_now_ns() */
};

/**
 * struct tp_dma - the simulated DMA engine: one thread, parked on a
 * condvar when idle; @n pending requests of @cap; @done executed so far.
 */
struct tp_dma {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool inited, started, stop;
	pthread_t th;
	struct tp_dma_req *reqs;
	uint32_t n, cap;
	_Atomic uint64_t done;
};

/* Bytes of a host cache line: the unit of false sharing between the
 * scheduler and AICore threads (struct tp_dispatch_payload). */
#define TP_ENGINE_LINE 64

/**
 * struct tp_dispatch_payload - what an AICore reads for a token
 * (PTO2DispatchPayload, spec/runtime-model.md §2.7); two per core,
 * indexed token & 1. @block_idx / @block_num: the SPMD block; @gated:
 * early dispatch, wait for DATA_MAIN_BASE_HI == token.
 *
 * One cache line each (48 bytes of fields, aligned to 64): the scheduler
 * writes one payload while the AICore, on another CPU, reads the other,
 * and the scheduler's own fields of struct tp_core_exec stay on lines the
 * AICore never reads. Packed in with them, every dispatch invalidated a
 * line the AICore had just read (a5sim's 100,000-empty-task run, profiling
 * off, took ~131 ms against ~110 now), and the FIN hooks' read of func_id
 * from the payload waited for its line: about 150 ns of scheduler stall
 * per task under perf (docs/swimlane-cost.md, 4 Dec 2026); the hooks now
 * take it from struct tp_core_exec.
 */
struct tp_dispatch_payload {
	alignas(TP_ENGINE_LINE) tp_task_id task_id;
	int32_t func_id;
	void (*fn)(int64_t *args);
	int64_t *args;
	uint32_t block_idx, block_num;  /* local_context */
	uint8_t gated;  /* early dispatch: wait for DATA_MAIN_BASE_HI == token */
};

/**
 * struct tp_ready_queue - bounded MPMC ready queue of slots (a mutex; cap
 * >= the tasks that can be alive, so a push never finds it full); @size
 * mirrors @n for lock-free reads.
 */
struct tp_ready_queue {
	/* One line (two, at 72 bytes) per queue: every push and pop takes @mu,
	 * and the AIC, AIV, mixed and dummy queues are pushed and popped by
	 * different threads at once. */
	alignas(TP_ENGINE_LINE) pthread_mutex_t mu;
	struct tp_slot **buf;
	bool buf_mapped;        /* base/bigmem.h */
	uint32_t cap, head, n;
	_Atomic uint32_t size;  /* n, readable without the lock */
};

/**
 * struct tp_core_exec - scheduler-side state of one core (CoreExecState,
 * spec/runtime-model.md §2.7): running and pending (dual issue) tasks
 * with their tokens and dispatch times (tp_sys_cnt() ticks). Touched only
 * by the owning scheduler thread (and the AICore, for payload[] and
 * slab[]).
 */
struct tp_core_exec {
	int core_id;
	enum tp_subslot subslot;
	uint32_t dispatch_seq;
	int32_t running_func;      /* func_id of running's subtask (FIN hooks) */
	struct tp_slot *running;   /* NULL: idle */
	uint32_t running_token;
	bool running_acked;        /* ACK (or FIN) of running_token observed:
				    * a pending task may be published */
	uint64_t dispatch_ts;
	struct tp_slot *pending;   /* dual issue: the pre-loaded task, or NULL */
	uint32_t pending_token;
	int32_t pending_func;
	uint64_t pending_dispatch_ts;
	bool gated;                /* running task staged gated (early
				    * dispatch): no pending behind it */
	struct tp_dispatch_payload payload[2];
	struct tp_async_slab slab[2];  /* indexed token & 1, like payload */
};

/**
 * struct tp_sched_thread - one scheduler (AICPU) thread's state: the
 * cores it owns, idle counts, its doorbell, its deferred release list and
 * loop iteration, and the swimlane pop / depth figures.
 */
struct tp_sched_thread {
	/* The threads' structs sit side by side in one array: a line each. */
	alignas(TP_ENGINE_LINE) int idx;
	/* Scheduler 0's watch of the orchestration (sched.c orch_stuck()):
	 * the orch_calls value last seen changing and when (ns of
	 * tp_now_ns()). */
	uint64_t orch_seen, orch_seen_ns;
	int n_cores;
	int *core_ids;
	int n_running;
	int idle_by_type[2];       /* idle owned cores per tp_core_type */
	int idle_clusters;         /* owned clusters with 3 idle cores */
	struct tp_doorbell *bell;  /* the AICPU thread's doorbell */
	struct tp_release_list rel;
	uint64_t loop_iter;
	/* Swimlane (hooks on only): ready-queue pops of the dispatch step
	 * since the last DISPATCH record, and the depths at the phase anchor. */
	uint32_t pop_hit, pop_miss;
	int16_t depth_mark[3];
	/* The run's statistics this scheduler counted, summed by
	 * fill_result (engine.c). Per thread, not in struct tp_engine: one
	 * shared counter was a line every dispatch moved between the AICPU
	 * threads. Single writer (this thread): relaxed load and store; a
	 * stall's result reads them while the thread may still run. */
	_Atomic uint64_t n_dispatched, n_pending_dispatched, n_dummy, n_pred_skips;
	_Atomic uint64_t n_early_staged;
	_Atomic uint64_t max_running, max_outstanding;
};

/**
 * struct tp_scope - one open PTO2 scope: the @n tasks submitted in it
 * (their scope reference is dropped at scope end).
 */
struct tp_scope {
	struct tp_slot **tasks;
	uint32_t n, cap;
	bool manual;  /* MANUAL mode: only explicit dependencies (orch.c) */
};

#define TP_ORCH_MAX_SCOPES 64

/**
 * struct tp_orch - the orchestrator of a run (runtime/orch.h): open
 * scopes, the fanin builder, and the submit counter.
 */
struct tp_orch {
	struct tp_engine *e;
	uint32_t depth;  /* open scopes; the outer scope is depth 0 */
	struct tp_scope scopes[TP_ORCH_MAX_SCOPES];
	struct tp_fanin fanin;
	uint64_t submit_idx;
	bool closing; /* the orchestration returned: its scopes, outer one too, end */
};

/**
 * struct tp_engine - shared state of one tp_engine_run(): configuration,
 * rings and payloads, tensor map, ready queues, per-core and per-thread
 * state, counters (tasks), async list and DMA engine, and the first
 * failure. Private to src/runtime/.
 */
struct tp_engine {
	struct tp_engine_config cfg;
	/* cfg.stall_timeout_ms in ns, TP_WATCHDOG_NEVER for "never": the
	 * budget of the scheduler and ring watchdogs. */
	uint64_t stall_ns;
	struct tp_device *dev;
	int block_dim, num_cores, num_sched;
	bool hooks_on;  /* the one predictable branch */
	/* Per-task dispatch / finish stamps wanted (hooks.task_times: a hook
	 * uses the times on_dispatch, on_fin, on_early_doorbell pass). A run
	 * with only the Worker's on_sched_window (profiling off), PMU only or
	 * swimlane level 1 takes none. */
	bool stamp_tasks;
	/* The scheduler's phase bars are recorded (on_phase or
	 * on_phase_detail: swimlane level 3 and up): only then does its loop
	 * stamp its phases. Every stamp is an rdtsc on the AICPU threads'
	 * CPU, which swimlane levels 1-2, PMU-only and unprofiled runs do
	 * not pay for bars nobody writes. */
	bool stamp_phases;
	struct tp_sched_hooks hooks;

	struct tp_ring rings[TP_MAX_RING_DEPTH];
	struct tp_task_payload *payloads[TP_MAX_RING_DEPTH]; /* per slot */
	bool payloads_mapped[TP_MAX_RING_DEPTH];             /* bigmem */
	/* host_build_graph (cfg.runtime): the graph is built on the host
	 * before launch into ring 0 only; no reclaim; every AICPU thread
	 * schedules. hbg_cap: tasks ring 0 may hold. */
	bool hbg;
	uint32_t hbg_cap;
	/* The dummy drain emits its phase bar and its dummy_task /
	 * predicated_skip markers: under TRB, and under HBG where the
	 * platform has the dummy-task path (tp_platform.hbg_dummy_path:
	 * a2a3). The seed (002 §2) wins over spec Appendix A item 8, which
	 * follows the reference code (no dummy records under HBG). */
	bool dummy_path;
	uint64_t graph_build_ns;
	struct tp_tensormap tm;
	struct tp_orch orch;
	tp_orch_fn orch_fn;
	void *orch_arg;

	struct tp_ready_queue ready[TP_NUM_SHAPES];
	struct tp_ready_queue dummy;
	/* Early dispatch: on (cfg.early_dispatch && !single_issue), candidate
	 * queues per AIC / AIV shape (hints: entries are validated by a CAS
	 * of early_state); the counters are with the statistics below. */
	bool early;
	struct tp_ready_queue early_q[2];

	struct tp_core_exec *cores;     /* per core id */
	struct tp_core_ctx *ctxs;       /* per core id */
	struct tp_sched_thread *sched;  /* num_sched */
	_Atomic(struct tp_doorbell *) *sched_bells; /* set by each scheduler at start */

	/* The counters below are written per task or per runtime call by
	 * different threads, so each group has a line of its own (aligned;
	 * the engine is allocated so): sharing one, the orchestrator's
	 * per-call stores, every completion's increment and the idle
	 * counts' increments moved one line between all the AICPU threads
	 * (5 Dec 2026: the idle-count increment was the hottest instruction
	 * of the schedulers' profile).
	 *
	 * The completion handshake (sched.c all_done()): completed_tasks,
	 * incremented per task by the completer, then orch_done read on the
	 * line the increment just took; total_tasks, stored once, before
	 * orch_done. */
	alignas(TP_ENGINE_LINE) _Atomic uint64_t completed_tasks;
	_Atomic bool orch_done;
	_Atomic uint64_t total_tasks;
	/* The orchestration's runtime calls that returned, and whether one is
	 * in progress (single writer, the orchestrator; relaxed: a heuristic
	 * of scheduler 0's stall watch, which waits a whole stall timeout). */
	alignas(TP_ENGINE_LINE) _Atomic uint64_t orch_calls;
	_Atomic bool orch_in_call;
	/* Idle cores per tp_core_type / idle clusters over all threads (the
	 * placement order skips PENDING placement when a peer has idle ones). */
	alignas(TP_ENGINE_LINE) _Atomic int idle_cores[2];
	_Atomic int idle_clusters;
	/* Statistics more than one thread counts (the schedulers' own are in
	 * struct tp_sched_thread): rare, or per task but on one thread. */
	alignas(TP_ENGINE_LINE) _Atomic uint64_t inline_done; /* the orchestrator */
	_Atomic uint64_t spmd_repushes;
	_Atomic uint64_t reclaimed;
	_Atomic uint64_t early_rung;  /* early-dispatch doorbells rung */

	/* Async wait list (a locked list, spec §7.3) and the DMA engine. */
	alignas(TP_ENGINE_LINE) pthread_mutex_t async_mu;
	struct tp_async_entry *async_list;
	uint32_t async_n, async_cap;
	_Atomic uint32_t async_size;  /* async_n, readable without the lock */
	_Atomic uint64_t async_waits;
	_Atomic uint64_t async_done;
	struct tp_dma dma;

	alignas(TP_ENGINE_LINE) _Atomic bool abort_all; /* stall: every scheduler leaves at once */
	/* A stall found a core still in its kernel: teardown waits for it
	 * only briefly (sched.c STUCK_*_NS). Set before abort_all's release
	 * store, so a scheduler that acquires abort_all sees it. */
	_Atomic bool core_stuck;
	/* First failure wins (fail_mu). */
	_Atomic bool failed;
	pthread_mutex_t fail_mu;
	int fail_rc;
	tp_task_id fail_task;
	int fail_func;
	char fail_msg[TP_ERROR_MSG_MAX];
};

/* ---- engine.c ---- */

/**
 * tp_engine_fail() - record the run's failure; the first one wins (later
 * calls only wake the schedulers). Logs the message at ERROR.
 * @e:    the engine.
 * @rc:   negative errno the run returns.
 * @task: the failed task, or TP_TASK_ID_INVALID.
 * @func: its func_id, or -1.
 * @fmt:  printf format of the message (tp_engine_result.msg).
 */
void tp_engine_fail(struct tp_engine *e, int rc, tp_task_id task, int func,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/**
 * tp_engine_func_name() - a kernel's name for messages.
 * @e:         the engine.
 * @func:      func_id.
 * @buf, @len: room for "func<id>" when the kernel has no name or @func is
 *             out of range.
 *
 * Return: the kernel's name, or @buf.
 */
const char *tp_engine_func_name(const struct tp_engine *e, int func, char *buf,
				size_t len);

/**
 * tp_engine_wake_all() - ring every scheduler's doorbell (after a store
 * they wait for; a seq_cst fence orders it before the rings).
 */
void tp_engine_wake_all(struct tp_engine *e);

/** tp_engine_payload() - the payload of slot @s (same ring and index). */
struct tp_task_payload *tp_engine_payload(struct tp_engine *e, struct tp_slot *s);

/**
 * tp_engine_route_ready() - a tp_slot_fn (@ud = the engine): slot @s
 * became ready (spec/runtime-model.md §2.5): settle its early-dispatch
 * state (ring a staged task's doorbell instead of queueing it), evaluate
 * its predicate, push it to the dummy queue (dummy or skipped) or its
 * shape's ready queue, and wake the schedulers.
 */
void tp_engine_route_ready(struct tp_slot *s, void *ud);

/**
 * tp_engine_on_consumed() - a tp_slot_fn (@ud = the engine): slot @s is
 * CONSUMED; advance its ring's reclaim point (spec §2.6). Nothing under
 * host_build_graph.
 */
void tp_engine_on_consumed(struct tp_slot *s, void *ud);

/** tp_engine_slot_of() - the slot of task @id (its ring, local id modulo
 *  the window); not checked against the ring's live range. */
struct tp_slot *tp_engine_slot_of(struct tp_engine *e, tp_task_id id);

/**
 * tp_rq_push() - push @s; the queue is sized never to be full: overflow
 * logs an ERROR and aborts the process.
 */
void tp_rq_push(struct tp_ready_queue *q, struct tp_slot *s);

/**
 * tp_rq_try_push() - push @s unless the queue is full.
 *
 * Return: true if pushed.
 */
bool tp_rq_try_push(struct tp_ready_queue *q, struct tp_slot *s);

/** tp_rq_pop() - the oldest slot, or NULL when empty. */
struct tp_slot *tp_rq_pop(struct tp_ready_queue *q);

/** tp_rq_size() - slots queued (acquire load, no lock; approximate). */
static inline uint32_t tp_rq_size(struct tp_ready_queue *q)
{
	/* acquire: pairs with the release stores of size under mu (engine.c
	 * tp_rq_push / tp_rq_try_push / tp_rq_pop). A peek: the entries are
	 * taken under mu by tp_rq_pop. */
	return atomic_load_explicit(&q->size, memory_order_acquire);
}

/*
 * Early dispatch (engine.c; spec/runtime-model.md §2.10, §7.3,
 * simplified: see engine.h).
 */

/**
 * tp_engine_early_consider() - make @s (linked to its producers) an
 * early-dispatch candidate if it is eligible (a plain AIC / AIV task,
 * block_num 1, no predicate, not yet considered) and every unfinished
 * producer is flagged DISPATCH_PROPAGATED; a full candidate queue only
 * loses the hint.
 */
void tp_engine_early_consider(struct tp_engine *e, struct tp_slot *s);

/**
 * tp_engine_early_propagate() - every subtask of producer @s is
 * published: flag it DISPATCH_PROPAGATED and consider its consumers.
 */
void tp_engine_early_propagate(struct tp_engine *e, struct tp_slot *s);

/**
 * tp_engine_early_ring() - write the doorbell (DATA_MAIN_BASE_HI = token)
 * of staged @s, with a release store; with hooks on, stamp the task's
 * dispatch time (tp_sys_cnt() ticks) first and call on_early_doorbell
 * (thread: tp_sched_cur_thread, -1 off a scheduler).
 */
void tp_engine_early_ring(struct tp_engine *e, struct tp_slot *s);
/* The scheduler index of the calling thread, -1 elsewhere. */
extern _Thread_local int tp_sched_cur_thread;

/* ---- orch.c ---- */

/**
 * tp_orch_init() - zero @o and bind it to @e.
 *
 * Return: 0.
 */
int tp_orch_init(struct tp_orch *o, struct tp_engine *e);

/** tp_orch_fini() - free @o's scope lists and fanin builder; @o is zeroed. */
void tp_orch_fini(struct tp_orch *o);

/**
 * tp_orch_thread() - the orchestrator (TRB: on AICPU thread N-1): open
 * the outer scope, run cfg's orchestration (its error fails the run, with
 * the message of tp_last_error()), close every scope still open, publish
 * total_tasks and orch_done, wake the schedulers.
 */
void tp_orch_thread(struct tp_engine *e);

/**
 * tp_orch_host_build() - host_build_graph: tp_orch_thread() on the calling
 * (host) thread before launch (spec/runtime-model.md §3).
 *
 * Return: 0, or the run's failure code (-EIO when it has none); the graph
 * is not launched then.
 */
int tp_orch_host_build(struct tp_engine *e);

/* ---- sched.c ---- */

/**
 * tp_sched_thread_main() - scheduler thread @idx on AICPU @cpu: the
 * scheduler loop of spec/runtime-model.md §2.11 over the cores it owns,
 * until every task completed, the run failed or a stall aborted it.
 */
void tp_sched_thread_main(struct tp_engine *e, struct tp_aicpu *cpu, int idx);

/**
 * tp_engine_pred_pass() - DispatchPredicate::pass: read the operand
 * (pred_size bytes, sign-extended) and compare it with pred_target.
 *
 * Return: true when the task is to run.
 */
bool tp_engine_pred_pass(const struct tp_task_payload *p);

/* ---- async.c (spec/runtime-model.md §2.10, §7.3 Tier 2) ---- */

/**
 * tp_async_init() - initialise the wait list's and the DMA engine's
 * locks (the DMA condvar on CLOCK_MONOTONIC).
 *
 * Return: 0.
 */
int tp_async_init(struct tp_engine *e);

/** tp_async_fini() - stop the DMA engine and free the wait list; harmless
 *  when never initialised. */
void tp_async_fini(struct tp_engine *e);

/**
 * tp_dma_start() - start the DMA engine thread, before the device
 * launches.
 *
 * Return: 0, or the -errno of pthread_create() with tp_last_error() set.
 */
int tp_dma_start(struct tp_engine *e);

/** tp_dma_stop() - stop and join the DMA engine thread after the device
 *  finished (WARN when requests were left); harmless when not started. */
void tp_dma_stop(struct tp_engine *e);

/**
 * tp_async_bind() - AICore side: the slab the running kernel's
 * tp_kernel_async_wait() calls register into (thread-local); NULL after
 * the kernel.
 */
void tp_async_bind(struct tp_engine *e, struct tp_async_slab *slab);

/**
 * tp_async_take() - scheduler side, after the FIN: move @slab's
 * conditions (registered by a subtask of @s) to the wait list; empties
 * @slab. Out of memory fails the run (the task then completes without
 * waiting).
 */
void tp_async_take(struct tp_engine *e, struct tp_slot *s, struct tp_async_slab *slab);

/**
 * tp_async_defer() - every subtask of @s finished: whether it must wait.
 *
 * Return: true if conditions are left (the task is deferred; the poll
 * completes it), false to complete it now.
 */
bool tp_async_defer(struct tp_engine *e, struct tp_slot *s);

/**
 * tp_async_poll() - poll_and_complete: drop satisfied conditions;
 * deferred tasks whose last condition held go to @out.
 * @out: room for @max slots.
 *
 * Return: tasks written to @out.
 */
uint32_t tp_async_poll(struct tp_engine *e, struct tp_slot **out, uint32_t max);

/** tp_async_any_ready() - whether any listed condition holds now. */
bool tp_async_any_ready(struct tp_engine *e);

/** tp_async_count() - conditions on the wait list (acquire load, no
 *  lock). */
static inline uint32_t tp_async_count(struct tp_engine *e)
{
	/* acquire: pairs with the release stores of async_size under
	 * async_mu (async.c); a peek, the list is read under async_mu. */
	return atomic_load_explicit(&e->async_size, memory_order_acquire);
}

/**
 * tp_async_first_task() - the first listed condition, for the stall
 * message.
 * @addr, @value: receive its counter address and awaited value (untouched
 *                when the list is empty).
 *
 * Return: its task, or TP_TASK_ID_INVALID when the list is empty.
 */
tp_task_id tp_async_first_task(struct tp_engine *e, const uint32_t **addr,
			       uint32_t *value);

/* ---- aicore_loop.c ---- */

/**
 * tp_aicore_loop() - the runtime's AICore body (tp_aicore_fn, @arg = the
 * engine; spec/runtime-model.md §2.8): handshake, then per token ACK, run
 * the kernel (SPMD block, gated wait, swimlane and PMU hooks), FIN; exit
 * ACK on the exit signal.
 */
void tp_aicore_loop(struct tp_aicore *core, void *arg);

#endif /* TASKPROF_RUNTIME_ENGINE_INTERNAL_H */
