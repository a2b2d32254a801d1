/* SPDX-License-Identifier: MIT */
/*
 * platform/pmu_model.h — the simulated per-core PMU (issue 5 scope 2;
 * ARCHITECTURE.md §1 "The PMU counts real work"; spec/pmu.md §1.5; seed
 * 000 §5, §5.1). docs/pmu.md lists, per event id, what is modelled.
 *
 * Every PMU register is a simulated register of the core's PMU window
 * (platform/regs.h, offsets from the platform's struct tp_pmu_regmap) and
 * is accessed with tp_reg_read() / tp_reg_write(), so a foreign writer can
 * clobber PMU_CTRL_0 at any access. The model adds behaviour on top:
 *
 *   counting    While a core's window is open — PMU_CTRL_0 carries its
 *               enable value 0x7 (a5: and PMU_CTRL_1 its 0x1) AND the
 *               AICore CTRL SPR bit 0 is set — every tile op's usage delta
 *               is added to the counter of every slot whose programmed
 *               event id (PMU_CNTi_IDX) that op produces.
 *   total       PMU_CNT_TOTAL0/1 grows by the window's length in core
 *               cycles at TP_CORE_FREQ_HZ (1.8 GHz) — see "Window rules".
 *   read-clear  tp_pmu_read() returns the counters and the total and
 *               clears them, as the hardware's read does.
 *
 * Window rules (exact):
 *   - The model samples the window (both CTRL registers enabled and the
 *     SPR gate set) at its open, after every op and at its close. An op
 *     counts iff the window is enabled at the sample right after it.
 *     Counted time runs from a sample that sees the window enabled (the
 *     open, or the first one after a disable) to the start of the op
 *     after which it is seen disabled, or to the close when the close
 *     sees it enabled; a disable seen only at the close leaves the time
 *     since the last change uncounted. Nothing after a close counts, and
 *     time is never counted past a reset that was seen.
 *   - At close the counted ops and time are added to the registers:
 *     counter i += its sum (32-bit, wrapping); total += max(round(counted
 *     ns × 1.8), Σ busy cycles of the counted ops on all pipes).
 *     The clock is read only at the open, the close and a change of
 *     state, so an op pays only the register reads. That clock is the
 *     core thread's CPU time (tp_thread_cpu_ns()): a simulated core does
 *     not run while the host has taken its thread away, and counting the
 *     wall time made a block's total depend on how many threads shared
 *     the host's CPUs (an operator-profiler block differed by up to 3400%
 *     between passes; 50-120% with the CPU time). A counting stretch
 *     counts its CPU time less one read of that clock, and at most the
 *     wall time between the reads (pmu_model.c). An op's busy cycles are
 *     its wall time (a CPU-time read per op would cost 0.8 µs per op), so
 *     an op the host interrupted counts the interruption, and the max
 *     takes the total up to the busy cycles then; it guarantees no pipe's
 *     busy cycles exceed the total.
 *   - Memory events count requests: the delta's per-operand requests,
 *     ceil(bytes / 32) (TP_REQ_BYTES, the same 32-byte granule on every
 *     path), so for tiles of whole 32-byte blocks requests = bytes / 32.
 *
 * Who calls what (a run; the runtime and collector wire it):
 *   host     tp_pmu_model_create() once per device, tp_pmu_attach() per
 *            AICore context (installs the usage hook).
 *   AICPU    tp_pmu_program() per core at run init → producer_note;
 *            a2a3: tp_pmu_read() after each FIN;
 *            tp_pmu_finalize() per core at finalize → producer_note_close,
 *            then the pre-run control word(s) are restored.
 *   AICore   tp_pmu_window_open() / _close() around each kernel body (or
 *            install tp_pmu_on_kernel_begin/_end as the device's kernel
 *            hooks); a5: tp_pmu_read() right after the close.
 *
 * Threading: the window functions and the usage hook run on the core's
 * thread and touch its private state; program / finalize / read may run on
 * any thread and touch only registers and atomics. Reading while the
 * core's window is open sees the counts of the kernels already closed.
 */
#ifndef TASKPROF_PLATFORM_PMU_MODEL_H
#define TASKPROF_PLATFORM_PMU_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "platform/platform.h"
#include "platform/pmu_events.h"

struct tp_device;
struct tp_aicore;
struct tp_core_ctx;
struct tp_pmu_model;

/* producer_note / producer_note_close codes (seed §5.1). 0 in the close
 * field means no close observation was published. */
enum tp_pmu_note_code {
	TP_PMU_NOTE_NONE = 0,
	TP_PMU_NOTE_NO_WINDOW = 1, /* init: the core has no PMU register window */
	TP_PMU_NOTE_ENABLED = 2,   /* init: the read-back carried this run's enable */
	TP_PMU_NOTE_DISABLED = 3,  /* init: it did not; payload = observed word */
	TP_PMU_NOTE_HELD = 4,      /* close: the close read carried the enable */
	TP_PMU_NOTE_LOST = 5,      /* close: it did not; payload = close word */
};

/* One observation of a core's control window. */
struct tp_pmu_note {
	uint32_t code;            /* enum tp_pmu_note_code */
	int32_t physical_core_id; /* the core whose window was read */
	uint32_t ctrl0;           /* PMU_CTRL_0 as read */
	uint32_t ctrl1;           /* PMU_CTRL_1 as read (a5), 0 on a2a3 */
};

/* One read of a core's counters. */
struct tp_pmu_sample {
	uint64_t total_cycles;                /* PMU_CNT_TOTAL0 | TOTAL1 << 32 */
	uint32_t counters[TP_PMU_MAX_SLOTS];  /* PMU_CNT0..n_slots-1 */
	int n_slots;                          /* 8 (a2a3) or 10 (a5) */
};

/**
 * tp_pmu_note_name() - name of a producer note code (seed 000 §5.1).
 * @code: enum tp_pmu_note_code.
 *
 * Return: "none", "no_window", "enabled", "disabled", "held", "lost", or
 * "?" for another value (static strings).
 */
const char *tp_pmu_note_name(uint32_t code);

/**
 * tp_pmu_model_create() - the PMU model of every core of a device.
 * @dev: an open device; the model must be destroyed before it.
 * @out: receives the model.
 *
 * Every core starts with a register window (see tp_pmu_model_set_window()).
 *
 * Return: 0, -EINVAL (@dev or @out NULL, or a bad TASKPROF_SIM_L2_BYTES:
 * tp_l2_env_bytes()), -ENOMEM.
 */
int tp_pmu_model_create(struct tp_device *dev, struct tp_pmu_model **out);

/**
 * tp_pmu_model_need_l2() - make the L2 cache model now if any of @ids is
 * an L2_CACHE event.
 * @m:   the model.
 * @ids: @n event ids of the model's architecture (a group's slots, a
 *       pass's events); TP_PMU_EV_UNUSED and unknown ids are ignored.
 * @n:   ids at @ids, >= 0.
 *
 * For the host, before the device runs: a model that cannot be made (its
 * tags are 12 MiB at the default TASKPROF_SIM_L2_BYTES) fails the run or
 * the pass here, with its reason, instead of leaving every L2_CACHE
 * counter at 0 behind one WARN (which is what a window still does when
 * the selectors were written some other way). Thread-safe; the model is
 * made once per @m.
 *
 * Return: 0 (made, made already, or no L2 event among @ids), -ENOMEM
 * with a message naming the cache size ("pmu model: cannot make the L2
 * cache model the L2_CACHE events count on: l2 model: out of memory for
 * 98304 sets"); the same error on every later call.
 */
int tp_pmu_model_need_l2(struct tp_pmu_model *m, const uint32_t *ids, int n);

/** tp_pmu_model_destroy() - detach every core and free; NULL is a no-op.
 *  Call it while the attached contexts still exist (before
 *  tp_core_ctx_fini()) and after the device's threads stopped. */
void tp_pmu_model_destroy(struct tp_pmu_model *m);

struct tp_l2;

/**
 * tp_pmu_model_l2() - the device's L2 model (platform/l2_model.h), or NULL
 * while no core has been programmed with (nor opened a window on) an L2
 * event, or when it could not be made. For tests and diagnostics.
 * @m: the model (non-NULL).
 */
const struct tp_l2 *tp_pmu_model_l2(const struct tp_pmu_model *m);

/** tp_pmu_model_device() - the device @m models (@m non-NULL). */
struct tp_device *tp_pmu_model_device(const struct tp_pmu_model *m);
/** tp_pmu_model_arch() - its event-id space (tp_pmu_arch_of() of the
 *  device's platform). */
enum tp_pmu_arch tp_pmu_model_arch(const struct tp_pmu_model *m);
/** tp_pmu_model_slots() - counter slots per core: 8 (a2a3) / 10 (a5). */
int tp_pmu_model_slots(const struct tp_pmu_model *m);
/** tp_pmu_model_cores() - cores modelled: the device's AICores. */
int tp_pmu_model_cores(const struct tp_pmu_model *m);

/**
 * tp_pmu_model_set_window() - give a core a register window or not.
 * @m:       the model.
 * @core_id: logical core, 0 .. tp_pmu_model_cores() - 1.
 * @present: false plays a misconfigured table: tp_pmu_program() skips the
 *           core with a WARN and notes PMU_NOTE_NO_WINDOW.
 *
 * Only while no run uses the model. Return: 0, -EINVAL (bad core).
 */
int tp_pmu_model_set_window(struct tp_pmu_model *m, int core_id, bool present);

/**
 * tp_pmu_attach() - count @ctx's ops on core @core_id.
 * @m:       the model.
 * @core_id: logical core, 0 .. tp_pmu_model_cores() - 1.
 * @ctx: the AICore's tile context (platform/tile/core_ctx.h); its usage
 *       hook is replaced by the model's (tp_core_ctx_set_usage_hook()).
 *
 * Only while @ctx runs no kernel. Return: 0, -EINVAL.
 */
int tp_pmu_attach(struct tp_pmu_model *m, int core_id, struct tp_core_ctx *ctx);

/**
 * tp_pmu_detach() - remove the model's hook from the attached context.
 * @m:       the model.
 * @core_id: logical core; a bad one, or a core with nothing attached, is
 *           ignored.
 */
void tp_pmu_detach(struct tp_pmu_model *m, int core_id);

/**
 * tp_pmu_program() - AICPU run init of one core (spec §1.5, seed §5.1).
 * @m:          the model.
 * @core_id:    logical core (also the physical id in the simulation).
 * @event_type: the run's event type; one without a table programs
 *              PIPE_UTILIZATION with a WARN (fallback place 3).
 * @note:       receives producer_note (may be NULL).
 *
 * Writes every PMU_CNTi_IDX (all slots, unused ones with id 0), reads the
 * counters and the total once (clearing them), writes START_CYC0/1 = 0 and
 * STOP_CYC0/1 = 0xFFFFFFFF, saves PMU_CTRL_0 (a5: and PMU_CTRL_1), writes
 * the enable value(s), then reads the control word(s) back: ENABLED or
 * DISABLED with the observed word. A core without a window is skipped with
 * WARN `pmu_aicpu_init: core %d has no PMU reg_addr, skipping (sim or
 * misconfigured)` (a5: `... skipping MMIO programming`) → NO_WINDOW.
 *
 * Return: 0; -EINVAL for a bad core.
 */
int tp_pmu_program(struct tp_pmu_model *m, int core_id, uint32_t event_type,
		   struct tp_pmu_note *note);

/* An unused slot of tp_pmu_program_events() (TP_EV_NONE of rt_tool.h):
 * not an event of either table, so it counts nothing. */
#define TP_PMU_EV_UNUSED 0xFFFFu

/**
 * tp_pmu_program_events() - tp_pmu_program() with explicit event ids, for
 * the driver profiling channel AICORE_PMU (taskprof/rt_tool.h).
 * @m:    the model.
 * @core_id: logical core, as for tp_pmu_program().
 * @ids:  event ids of the core's arch (DAV_2201 / DAV_3510), slot order.
 * @n:    0 .. tp_pmu_model_slots(); slots past @n are programmed
 *        TP_PMU_EV_UNUSED.
 * @note: receives the init observation (may be NULL), as for
 *        tp_pmu_program().
 *
 * Does everything tp_pmu_program() does, and also saves the selectors it
 * replaces: the next tp_pmu_finalize() of the core restores them with the
 * control word(s).
 *
 * Return: 0; -EINVAL for a bad core, @n out of range or NULL @ids.
 */
int tp_pmu_program_events(struct tp_pmu_model *m, int core_id, const uint16_t *ids, int n,
			  struct tp_pmu_note *note);

/**
 * tp_pmu_finalize() - AICPU finalize of one core (spec §4.4, seed §5.1).
 * @m:          the model.
 * @core_id:    logical core.
 * @note_close: receives producer_note_close (may be NULL): HELD or LOST
 *              with the close word, decided by the close word alone;
 *              NONE for a core never programmed or without a window.
 *
 * Reads the control word(s) first, then writes the saved pre-run word(s)
 * back. Once per program.
 *
 * Return: 0; -EINVAL for a bad core.
 */
int tp_pmu_finalize(struct tp_pmu_model *m, int core_id, struct tp_pmu_note *note_close);

/**
 * tp_pmu_window_open() - open the AICore's counting window around a
 * kernel body: set CTRL SPR bit 0 (read-modify-write of
 * TP_REG_AICORE_CTRL) and turn the attached context's counting on. On the
 * core's own thread. A second open, or a bad @core_id, is ignored.
 * @m:       the model.
 * @core_id: the calling thread's core.
 */
void tp_pmu_window_open(struct tp_pmu_model *m, int core_id);

/**
 * tp_pmu_window_open_in() - tp_pmu_window_open() inside launch @l2_launch
 * of the L2 model (l2_model.h: the lines a window finds are those of its
 * launch). tp_pmu_window_open() passes tp_device_launch_seq(): one launch
 * per run of the runtime. The rt layer, whose device is launched once,
 * passes each kernel launch's sequence number (every replay execution has
 * its own), so that each starts with an empty L2.
 * @m:         the model.
 * @core_id:   the calling thread's core.
 * @l2_launch: a number of the launch, unique on the device.
 */
void tp_pmu_window_open_in(struct tp_pmu_model *m, int core_id, uint64_t l2_launch);

/**
 * tp_pmu_window_close() - close it: clear the SPR bit, stop counting and
 * add the window's counts and its length (AICore cycles at
 * TP_CORE_FREQ_HZ, from the thread's CPU time) to the registers (see
 * "Window rules"). A close without an open, or a bad @core_id, is
 * ignored.
 * @m:       the model.
 * @core_id: the calling thread's core.
 */
void tp_pmu_window_close(struct tp_pmu_model *m, int core_id);

/**
 * tp_pmu_on_kernel_begin() - tp_pmu_window_open() in the shape of struct
 * tp_kernel_hooks (platform/device.h); tp_pmu_on_kernel_end() is
 * tp_pmu_window_close() likewise.
 * @core: the AICore whose kernel begins / ends.
 * @ud:   the model.
 */
void tp_pmu_on_kernel_begin(struct tp_aicore *core, void *ud);
void tp_pmu_on_kernel_end(struct tp_aicore *core, void *ud);

/**
 * tp_pmu_read() - read and clear a core's counters and total (spec
 * §1.5, §4.2).
 * @m:       the model.
 * @core_id: logical core.
 * @out: receives PMU_CNT0..n-1 (32-bit each) and the 64-bit total.
 *
 * a2a3: the AICPU after FIN; a5: the AICore after its close.
 *
 * Return: 0; -EINVAL for a bad core or NULL @out.
 */
int tp_pmu_read(struct tp_pmu_model *m, int core_id, struct tp_pmu_sample *out);

/**
 * tp_pmu_ctrl_enabled() - whether control words enable counting:
 * (ctrl0 & 0x7) == 0x7, and on a5 (ctrl1 & 0x1) == 0x1 (spec §1.5).
 * @plat:  the platform (a2a3 ignores @ctrl1).
 * @ctrl0: PMU_CTRL_0 as read.
 * @ctrl1: PMU_CTRL_1 as read (a5).
 *
 * Return: true when counting is enabled.
 */
bool tp_pmu_ctrl_enabled(const struct tp_platform *plat, uint32_t ctrl0, uint32_t ctrl1);

/**
 * tp_pmu_event_modelled() - whether the model produces event @id of @arch
 * (false: it always reads 0). For docs/pmu.md and tests.
 * @arch: the event-id space.
 * @id:   an event id of @arch.
 *
 * Return: true when modelled.
 */
bool tp_pmu_event_modelled(enum tp_pmu_arch arch, uint32_t id);

/**
 * tp_pmu_ops_counted() - statistics of core @core_id since create: tile
 * ops counted; tp_pmu_ops_refused(): ops seen with the window disabled.
 *
 * Return: ops; 0 for a NULL @m or a bad @core_id.
 */
uint64_t tp_pmu_ops_counted(const struct tp_pmu_model *m, int core_id);
uint64_t tp_pmu_ops_refused(const struct tp_pmu_model *m, int core_id);

#endif /* TASKPROF_PLATFORM_PMU_MODEL_H */
