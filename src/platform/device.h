/* SPDX-License-Identifier: MIT */
/*
 * platform/device.h — one simulated device: its threads, memory and
 * registers (ARCHITECTURE.md §1, spec/runtime-model.md §1.4).
 *
 *   tp_device_open()    platform descriptor, topology (block_dim clusters →
 *                       3·block_dim AICores), device memory arena, register
 *                       file; sets the system counter frequency.
 *   tp_device_launch()  starts the platform's AICPU launch threads (6 on
 *                       a2a3sim, 14 on a5sim; only aicpu_threads of them
 *                       pass the affinity gate and run the AICPU program)
 *                       and one thread per AICore; none runs its body
 *                       before all exist (a failed creation stops and
 *                       joins the started ones, and the launch fails).
 *   tp_device_wait()    joins them: AICPU threads first, then every AICore
 *                       still running is sent AICORE_EXIT_SIGNAL and joined
 *                       (bounded by the teardown budget). At DEBUG it logs
 *                       what the launch cost: each AICPU thread's CPU and
 *                       time runnable but waiting for a host CPU (ms) and
 *                       voluntary / involuntary context switches, and the
 *                       same summed over the AIC and over the AIV threads.
 *   tp_device_close()   frees everything.
 *
 * A device can be launched again after tp_device_wait() (rounds).
 *
 * Host scheduling: TASKPROF_SIM_AICPU_SLICE_US (read by tp_device_open();
 * 0 or 100..100000 µs, unset: the host's default) asks Linux >= 6.12 for
 * that scheduling slice for the AICPU threads, keeping their policy and
 * nice value: on a host with fewer CPUs than device threads they then get
 * a CPU back first (docs/swimlane-cost.md).
 *
 * Host placement: TASKPROF_SIM_AICPU_PIN ("auto", the default, or "off";
 * read by tp_device_open(), another value gets one WARN and "auto") keeps
 * each launch's AICPU threads on tp_device_aicpu_pin_count() of the CPUs
 * the launching thread may use (one on a 2-CPU host; none on a 1-CPU
 * host: no pinning); AICore threads may use all of them. Measured on the
 * 2-CPU CI machine: the 100,000-empty-task benchmark no longer falls into
 * its slow mode, workloads with real kernels unchanged (platform/device.c).
 *
 * The register protocol between AICPU and AICore (spec §2.7–§2.8) is
 * provided as small steps both sides compose: the runtime's scheduler and
 * AICore loops (src/runtime/) and the operator API (rt.c) use the same
 * ones. Every wait parks on a doorbell (platform/doorbell.h): an idle
 * AICore costs no CPU.
 *
 * Kernel hook: each AICore has a `kernel_ctx` pointer and the launch
 * configuration carries on_kernel_begin / on_kernel_end callbacks, called
 * by tp_aicore_kernel_begin() / _end() on the core's own thread around
 * every kernel body. The tile API binds its per-core execution context
 * there and the PMU model opens / closes its counting window there.
 */
#ifndef TASKPROF_PLATFORM_DEVICE_H
#define TASKPROF_PLATFORM_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/doorbell.h"
#include "platform/platform.h"
#include "platform/topology.h"

struct tp_device;
struct tp_aicore;
struct tp_aicpu;
struct tp_dev_mem;
struct tp_regs;

/* Teardown budget of tp_device_wait() and of the exit handshake, like the
 * sim's 10 s (spec §2.12 step 4). */
#define TP_DEVICE_TEARDOWN_TIMEOUT_MS 10000u

/**
 * struct tp_device_config - configuration of tp_device_open(); zero
 * fields take the defaults given beside them (ranges: tp_device_create()).
 */
struct tp_device_config {
	const char *platform;          /* "a2a3sim" (NULL) or "a5sim" */
	int device_id;                 /* >= 0; names threads and messages */
	int block_dim;                 /* clusters, 1..max_block_dim; 0 → 8 */
	int aicpu_threads;             /* 1..max_aicpu_threads; 0 → 4 */
	size_t mem_bytes;              /* arena reservation; 0 → 1 GiB */
	uint32_t teardown_timeout_ms;  /* 0 → TP_DEVICE_TEARDOWN_TIMEOUT_MS */
};

/* Body of an AICPU thread; @arg as given to the launch. */
typedef void (*tp_aicpu_fn)(struct tp_aicpu *cpu, void *arg);
/* Body of an AICore thread; @arg as given to the launch. */
typedef void (*tp_aicore_fn)(struct tp_aicore *core, void *arg);

/**
 * struct tp_kernel_hooks - called on the AICore's own thread around each
 * kernel body (tp_aicore_kernel_begin() / _end()); either may be NULL.
 * @ud: passed to both.
 */
struct tp_kernel_hooks {
	void (*on_kernel_begin)(struct tp_aicore *core, void *ud);
	void (*on_kernel_end)(struct tp_aicore *core, void *ud);
	void *ud;
};

/**
 * struct tp_launch_config - what tp_device_launch_ex() starts.
 * @aicpu_fn:  body of each AICPU thread; NULL: no AICPU thread is started.
 * @aicore_fn: body of each AICore thread; NULL: tp_aicore_loop_empty().
 * @arg:       passed to both bodies.
 * @hooks:     kernel hooks of the launch (copied).
 */
struct tp_launch_config {
	tp_aicpu_fn aicpu_fn;   /* NULL: no AICPU thread is started */
	tp_aicore_fn aicore_fn; /* NULL: tp_aicore_loop_empty */
	void *arg;
	struct tp_kernel_hooks hooks;
};

/* ---- device ---------------------------------------------------------- */

/**
 * tp_device_open() - create a simulated device (threads not started).
 * @cfg: configuration; NULL means all defaults.
 *
 * Sets the system counter to the platform's frequency
 * (tp_sys_cnt_set_freq()).
 *
 * Return: the device, or NULL with tp_last_error() set (the reasons of
 * tp_device_create()).
 */
struct tp_device *tp_device_open(const struct tp_device_config *cfg);

/**
 * tp_device_create() - tp_device_open() that returns the error code.
 * @cfg: configuration; NULL means all defaults.
 * @out: receives the device, or NULL on failure.
 *
 * Return: 0; -EINVAL for an unknown platform, a negative device id,
 * block_dim or aicpu_threads out of the platform's range, mem_bytes below
 * TP_DEV_MEM_MIN_BYTES; -EBUSY when devices of a platform with another
 * system counter frequency are open (their timestamps would change unit);
 * -ENOMEM. tp_last_error() says which.
 */
int tp_device_create(const struct tp_device_config *cfg, struct tp_device **out);

/**
 * tp_device_launch() - start the device threads.
 * @dev:       an open device, not running.
 * @aicpu_fn:  body of each of the aicpu_threads AICPU threads (NULL: none;
 *             otherwise the platform's aicpu_launch_threads threads are
 *             started and those with index >= aicpu_threads return at the
 *             affinity gate, spec/runtime-model.md §1.4).
 * @aicore_fn: body of each of the 3·block_dim AICore threads (NULL:
 *             tp_aicore_loop_empty).
 * @arg:       passed to both.
 *
 * Same as tp_device_launch_ex() without kernel hooks. Resets the dispatch
 * registers (DATA_MAIN_BASE, COND) to 0 first. All or nothing: the
 * threads park at a start gate until every one of them exists, so either
 * all bodies run or none does.
 *
 * Return: 0; -EBUSY when already running; -EAGAIN (or another
 * pthread_create() error, negated) when a thread cannot be created: the
 * threads already started return from the gate without running their
 * bodies and are joined before this returns, the device is not running
 * (no tp_device_wait() needed) and can be launched again; the message
 * names the thread that failed, strerror(), and how many AICore / AICPU
 * threads were not created. Host thread only, like tp_device_wait() and
 * tp_device_close().
 */
int tp_device_launch(struct tp_device *dev, tp_aicpu_fn aicpu_fn,
		     tp_aicore_fn aicore_fn, void *arg);

/**
 * tp_device_launch_ex() - tp_device_launch() with a full configuration.
 * @dev: an open device, not running.
 * @lc:  threads' bodies, argument and kernel hooks (copied).
 *
 * Return: as tp_device_launch(); -EINVAL when @lc is NULL.
 */
int tp_device_launch_ex(struct tp_device *dev, const struct tp_launch_config *lc);

/**
 * tp_device_wait() - orderly teardown of a launch.
 * @dev: the device.
 *
 * Joins every AICPU thread (no time limit: they run the workload). Then
 * every AICore thread still running is sent AICORE_EXIT_SIGNAL (the
 * AICPU normally did that already) and all are joined, waiting at most
 * the teardown budget (the configured one, or less after
 * tp_device_shorten_teardown()).
 *
 * Return: 0; -EINVAL when not running; -ETIMEDOUT when AICore threads did
 * not return within the budget (their ids are logged at ERROR; the device
 * stays running and tp_device_close() will not free it).
 */
int tp_device_wait(struct tp_device *dev);

/**
 * tp_device_shorten_teardown() - lower the teardown budget of the current
 * launch (tp_device_wait(), and tp_device_close()'s wait after a failed
 * one) to @budget_ns, ns, when it is higher; the next launch starts again
 * from the configured budget.
 * @dev:       the device.
 * @budget_ns: the new budget, ns.
 *
 * For a caller that knows a core is stuck in its kernel (a failed run's
 * stall): waiting the full budget for it would only delay the report.
 * Any thread, device threads included.
 */
void tp_device_shorten_teardown(struct tp_device *dev, uint64_t budget_ns);

/**
 * tp_device_close() - free the device.
 * @dev: a device or NULL.
 *
 * Waits first if running. If its threads cannot be joined the device is
 * deliberately leaked (with an ERROR line), since they may still use it.
 */
void tp_device_close(struct tp_device *dev);

/**
 * tp_device_set_kernel_hooks() - replace the kernel hooks.
 * @dev:   the device.
 * @hooks: new hooks (copied), or NULL for none.
 *
 * Only while no kernel runs; AICore threads see the change through the
 * acquire of their next dispatch token.
 */
void tp_device_set_kernel_hooks(struct tp_device *dev, const struct tp_kernel_hooks *hooks);

/*
 * Accessors of an open device (@dev non-NULL; not checked). The values are
 * fixed at tp_device_open().
 */

/** tp_device_platform() - the device's platform descriptor (static). */
const struct tp_platform *tp_device_platform(const struct tp_device *dev);
/** tp_device_id() - the configured device id (>= 0). */
int tp_device_id(const struct tp_device *dev);
/** tp_device_block_dim() - clusters (1 AIC + 2 AIV each). */
int tp_device_block_dim(const struct tp_device *dev);
/** tp_device_num_cores() - AICores: 3 · block_dim. */
int tp_device_num_cores(const struct tp_device *dev);
/** tp_device_aicpu_threads() - AICPU threads that run the AICPU program
 *  (past the affinity gate). */
int tp_device_aicpu_threads(const struct tp_device *dev);
/** tp_device_aicpu_launched() - AICPU threads started per launch: the
 *  platform's aicpu_launch_threads. */
int tp_device_aicpu_launched(const struct tp_device *dev);
/** tp_device_running() - between a successful launch and the wait that
 *  ends it; read it on the host thread. */
bool tp_device_running(const struct tp_device *dev);
/**
 * tp_device_abandon_aicpu() - let tp_device_wait() give up on AICPU threads
 * of the current launch that do not return within the teardown budget
 * (tp_device_shorten_teardown()): they are left running, the wait returns
 * -ETIMEDOUT and tp_device_close() leaks the device. For a run that failed
 * because its orchestration is stuck in a case's code. Any thread.
 */
void tp_device_abandon_aicpu(struct tp_device *dev);

/** tp_device_mem() - the device memory arena (platform/dev_memory.h). */
struct tp_dev_mem *tp_device_mem(struct tp_device *dev);
/** tp_device_regs() - the register file (platform/regs.h). */
struct tp_regs *tp_device_regs(struct tp_device *dev);
/**
 * tp_device_core() - AICore @core_id (0 .. num_cores - 1).
 *
 * Return: the core, or NULL when @core_id is out of range.
 */
struct tp_aicore *tp_device_core(struct tp_device *dev, int core_id);

/* ---- test point ------------------------------------------------------ */

/**
 * tp_device_test_fail_thread() - make a thread creation of the next
 * launch fail (fault injection for tests; production code never calls it).
 * @nth: 1-based creation of the next tp_device_launch() / _ex() of any
 *       device in the process: AICore threads in id order count first
 *       (1..3·block_dim), then the platform's AICPU launch threads; 0
 *       disarms.
 * @err: the errno value that creation returns instead of calling
 *       pthread_create(), e.g. EAGAIN.
 *
 * One shot: the next launch disarms it, whether or not it reaches @nth.
 * Any thread; the launch that takes it sees @err.
 */
void tp_device_test_fail_thread(int nth, int err);

/* ---- AICore side ----------------------------------------------------- */

/*
 * Accessors of an AICore (@core non-NULL), fixed at tp_device_open(); the
 * id layout is platform/topology.h's: AICs 0 .. block_dim - 1, then the
 * AIVs in pairs.
 */

/** tp_aicore_id() - logical core id, 0 .. num_cores - 1. */
int tp_aicore_id(const struct tp_aicore *core);
/** tp_aicore_type() - TP_CORE_AIC or TP_CORE_AIV. */
enum tp_core_type tp_aicore_type(const struct tp_aicore *core);
/** tp_aicore_cluster() - its cluster, 0 .. block_dim - 1. */
int tp_aicore_cluster(const struct tp_aicore *core);
/** tp_aicore_slot() - its place in the cluster: AIC, AIV0 or AIV1. */
enum tp_subslot tp_aicore_slot(const struct tp_aicore *core);
/** tp_aicore_device() - the device it belongs to. */
struct tp_device *tp_aicore_device(const struct tp_aicore *core);

/**
 * tp_aicore_kernel_ctx() - the core's kernel execution context pointer
 * (owned by whoever set it, e.g. the tile API); NULL until set.
 */
void *tp_aicore_kernel_ctx(const struct tp_aicore *core);

/**
 * tp_aicore_set_kernel_ctx() - set the core's kernel context pointer.
 * @core: the core.
 * @ctx:  the context, or NULL; not owned by the device.
 *
 * Set it from the core's own thread, or while the core runs no kernel.
 */
void tp_aicore_set_kernel_ctx(struct tp_aicore *core, void *ctx);

/**
 * tp_aicore_current() - the AICore the calling thread plays.
 *
 * Return: the core, or NULL on any other thread (host, AICPU).
 */
struct tp_aicore *tp_aicore_current(void);

/**
 * tp_aicore_kernel_begin() - open a kernel body on the core's thread:
 * calls the launch hooks' on_kernel_begin (if set) with @core.
 * @core: the calling thread's core.
 */
void tp_aicore_kernel_begin(struct tp_aicore *core);

/**
 * tp_aicore_kernel_end() - close it: calls on_kernel_end (if set).
 * @core: the calling thread's core.
 */
void tp_aicore_kernel_end(struct tp_aicore *core);

/* Returned by tp_aicore_handshake() when the AICPU sent exit instead. */
#define TP_AICORE_EXITING 1

/**
 * tp_aicore_handshake() - AICore start-up (spec §2.8).
 * @core: the calling thread's core.
 *
 * Parks until the AICPU opens the window (DATA_MAIN_BASE ==
 * AICPU_IDLE_TASK_ID), then writes COND = AICORE_IDLE_VALUE. If
 * AICORE_EXIT_SIGNAL arrives instead it writes COND =
 * AICORE_EXITED_VALUE.
 *
 * Return: 0, or TP_AICORE_EXITING (the core must return).
 */
int tp_aicore_handshake(struct tp_aicore *core);

/**
 * tp_aicore_wait_dispatch() - park until a new dispatch token arrives.
 * @core:       the calling thread's core.
 * @last_token: the token of the previous task (AICPU_IDLE_TASK_ID at first).
 *
 * Return: the DATA_MAIN_BASE value that differs from 0, from
 * AICPU_IDLE_TASK_ID and from @last_token: a token, or
 * AICORE_EXIT_SIGNAL.
 */
uint32_t tp_aicore_wait_dispatch(struct tp_aicore *core, uint32_t last_token);

/**
 * tp_aicore_wait_gate() - park until the early-dispatch doorbell
 * (DATA_MAIN_BASE_HI) equals @token, or exit is signalled.
 * @core:  the calling thread's core.
 * @token: the staged task's token.
 *
 * Return: 0, or TP_AICORE_EXITING.
 */
int tp_aicore_wait_gate(struct tp_aicore *core, uint32_t token);

/**
 * tp_aicore_ack() - write COND = @token (low 31 bits): the ACK
 * (spec/runtime-model.md §2.8). Rings the doorbell of the COND listener.
 * @core:  the calling thread's core.
 * @token: the dispatch token received.
 */
void tp_aicore_ack(struct tp_aicore *core, uint32_t token);
/**
 * tp_aicore_fin() - write COND = @token | bit 31: the FIN (spec §2.8,
 * §2.9).
 * @core:  the calling thread's core.
 * @token: the dispatch token of the finished task.
 */
void tp_aicore_fin(struct tp_aicore *core, uint32_t token);
/**
 * tp_aicore_exit_ack() - write COND = AICORE_EXITED_VALUE: the core
 * leaves its loop (spec §2.12).
 * @core: the calling thread's core.
 */
void tp_aicore_exit_ack(struct tp_aicore *core);

/**
 * tp_aicore_loop_empty() - the AICore loop with an empty kernel.
 *
 * Handshake, then for every token: ACK, kernel begin/end hooks, FIN; on
 * exit signal: exit ACK and return. The default aicore_fn (spec
 * §2.8).
 * @core: the calling thread's core.
 * @arg:  unused.
 */
void tp_aicore_loop_empty(struct tp_aicore *core, void *arg);

/* ---- AICPU side ------------------------------------------------------ */

/**
 * tp_device_aicpu_pin_count() - how many host CPUs "auto" placement gives
 * the AICPU threads (TASKPROF_SIM_AICPU_PIN above).
 * @host_cpus:     CPUs the launching thread may use.
 * @aicpu_threads: the device's AICPU threads (running the AICPU program).
 * @num_cores:     its AICore threads.
 *
 * Return: @host_cpus · @aicpu_threads / (@aicpu_threads + @num_cores),
 * rounded, clamped to 1 .. min(@aicpu_threads, @host_cpus - 1); 0 (no
 * pinning) when @host_cpus < 2 or an argument is out of range.
 */
int tp_device_aicpu_pin_count(int host_cpus, int aicpu_threads, int num_cores);

/** tp_aicpu_index() - the thread's index, 0 .. tp_aicpu_count() - 1 for
 *  those that run the AICPU program. */
int tp_aicpu_index(const struct tp_aicpu *cpu);
/** tp_aicpu_count() - AICPU threads that run the AICPU program
 *  (tp_device_aicpu_threads()). */
int tp_aicpu_count(const struct tp_aicpu *cpu);
/** tp_aicpu_device() - the device it belongs to. */
struct tp_device *tp_aicpu_device(const struct tp_aicpu *cpu);
/** tp_aicpu_doorbell() - this thread's own doorbell, e.g. for
 *  tp_reg_set_cond_listener(). */
struct tp_doorbell *tp_aicpu_doorbell(struct tp_aicpu *cpu);
/** tp_aicpu_current() - the AICPU the calling thread plays, or NULL on
 *  any other thread. */
struct tp_aicpu *tp_aicpu_current(void);

/**
 * tp_aicpu_open_cores() - open the register window of cores and wait for
 * their handshake (platform_init_aicore_regs).
 * @dev:        the device.
 * @cores:      core ids.
 * @n:          number of ids.
 * @timeout_ns: budget for all handshakes together.
 *
 * Writes DATA_MAIN_BASE = AICPU_IDLE_TASK_ID to every core, then waits
 * for each COND == AICORE_IDLE_VALUE (parked on the COND doorbell).
 *
 * Return: 0; -EINVAL for an id that is not a core of @dev (nothing
 * written); -ETIMEDOUT (message names the first late core).
 */
int tp_aicpu_open_cores(struct tp_device *dev, const int *cores, int n,
			uint64_t timeout_ns);

/**
 * tp_aicpu_dispatch() - publish @token to @core (DATA_MAIN_BASE = token;
 * spec/runtime-model.md §2.7).
 * @dev:   the device.
 * @core:  logical core id.
 * @token: the dispatch token (reg_task_id) or a sentinel.
 *
 * Release store: whatever the AICPU wrote before (the payload the token
 * selects) is visible to the core once it reads the token. Rings the
 * core's doorbell.
 */
void tp_aicpu_dispatch(struct tp_device *dev, int core, uint32_t token);

/**
 * tp_aicpu_close_cores() - send exit and wait for the exit ACK
 * (platform_deinit_aicore_regs).
 * @dev, @cores, @n: as tp_aicpu_open_cores().
 * @timeout_ns: budget for all exit ACKs together.
 *
 * Return: 0; -EINVAL for an id that is not a core of @dev (nothing
 * written); -ETIMEDOUT (each late core logged at ERROR).
 */
int tp_aicpu_close_cores(struct tp_device *dev, const int *cores, int n,
			 uint64_t timeout_ns);

/**
 * tp_device_launch_seq() - the number of the current (or last) launch of
 * @dev: 1 for the first tp_device_launch_ex(), one more for each after;
 * 0 before any. Read it on a device thread of the launch, or on the host
 * between launches (the L2 model tags its lines with it, l2_model.h).
 */
uint64_t tp_device_launch_seq(const struct tp_device *dev);

#endif /* TASKPROF_PLATFORM_DEVICE_H */
