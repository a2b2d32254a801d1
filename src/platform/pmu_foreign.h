/* SPDX-License-Identifier: MIT */
/*
 * platform/pmu_foreign.h — the other writer of PMU_CTRL_0 (seed 000 §7.0,
 * issue 5 scope 7).
 *
 * On the device another agent (an AICore-utilisation query, an unknown
 * periodic source) resets a core's PMU_CTRL_0 to its resting value 0 from
 * outside the run; every counter stops from then on. The simulation plays
 * it in three ways:
 *
 *   tp_pmu_foreign_reset()     one reset, now (a test step);
 *   a source, trigger "gate"   a reset of a core's PMU_CTRL_0 right after
 *                              its AICore opens the CTRL bit-0 gate for
 *                              the after_gate_opens-th time, and at every
 *                              later open (a register hook: deterministic);
 *   a source, period_us > 0    a background thread that resets every
 *                              core's PMU_CTRL_0 every period_us µs.
 *
 * None of them resets anything while driver profiling channel 53 is
 * started on the device (platform/drv_prof.h): the attempt is counted as
 * refused instead.
 *
 * A source installs the device's foreign writer hook
 * (tp_reg_set_foreign_writer()) when it has a gate trigger; one such
 * source per device at a time.
 */
#ifndef TASKPROF_PLATFORM_PMU_FOREIGN_H
#define TASKPROF_PLATFORM_PMU_FOREIGN_H

#include <stdint.h>

struct tp_device;
struct tp_pmu_foreign;

/* The value the foreign writer leaves in PMU_CTRL_0. */
#define TP_PMU_CTRL_RESTING 0x0u

/**
 * tp_pmu_foreign_reset() - reset PMU_CTRL_0 of one core or all, now.
 * @dev:  the device.
 * @core: a core id, or -1 for every core.
 *
 * Uses tp_reg_write_foreign() (the device's hook is not called).
 *
 * Return: the number of cores reset (0 when channel 53 is held, the lease
 * refusing it); -EINVAL for a bad core.
 */
int tp_pmu_foreign_reset(struct tp_device *dev, int core);

/**
 * struct tp_pmu_foreign_config - what a foreign writer source does; zero
 * fields are off.
 * @period_us:        > 0: a background thread resets every core's PMU
 *                    control every @period_us µs.
 * @after_gate_opens: > 0: reset a core at its n-th and later openings of
 *                    the AICore CTRL SPR gate (window opens).
 */
struct tp_pmu_foreign_config {
	uint32_t period_us;        /* > 0: background resets of every core */
	uint32_t after_gate_opens; /* > 0: reset at the n-th and later gate opens */
};

/**
 * tp_pmu_foreign_start() - start a foreign writer source.
 * @dev: the device; it must outlive the source.
 * @cfg: what to do (at least one of the fields non-zero).
 * @out: receives the source.
 *
 * Return: 0; -EINVAL (bad arguments or nothing to do); -ENOMEM; -EAGAIN
 * when the background thread cannot be created.
 */
int tp_pmu_foreign_start(struct tp_device *dev, const struct tp_pmu_foreign_config *cfg,
			 struct tp_pmu_foreign **out);

/**
 * tp_pmu_foreign_stop() - stop a source: join its thread, remove its hook,
 * free it. NULL is a no-op.
 */
void tp_pmu_foreign_stop(struct tp_pmu_foreign *f);

/**
 * tp_pmu_foreign_resets() - resets the source made so far (a reset of
 * all cores by the periodic thread counts once per core);
 * tp_pmu_foreign_refused(): attempts the lease refused.
 * @f: the source (non-NULL).
 */
uint64_t tp_pmu_foreign_resets(const struct tp_pmu_foreign *f);
uint64_t tp_pmu_foreign_refused(const struct tp_pmu_foreign *f);

#endif /* TASKPROF_PLATFORM_PMU_FOREIGN_H */
