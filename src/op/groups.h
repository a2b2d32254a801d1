/* SPDX-License-Identifier: MIT */
/*
 * op/groups.h — the metric groups of `taskprof op --aic-metrics`
 * (spec/opprof.md §1.4, §1.5, §4.2; issue 6 scope 5, 7).
 *
 *   idx  name                   PMU event type (platform/pmu_events.h)
 *   0    PipeUtilization        PIPE_UTILIZATION = 2
 *   1    ArithmeticUtilization  ARITHMETIC_UTILIZATION = 1
 *   2    Memory                 MEMORY = 4
 *   3    MemoryL0               MEMORY_L0 = 5
 *   4    MemoryUB               MEMORY_UB = 7
 *   5    ResourceConflictRatio  RESOURCE_CONFLICT = 6
 *   6    L2Cache                L2_CACHE = 8
 *   7    BasicInfo              none (OpBasicInfo.csv only, no event)
 *
 * "Default" = groups 0..6 (TP_OP_GROUPS_DEFAULT). Occupancy and Roofline
 * (msprof views, not CSV groups) are refused with a message saying so.
 *
 * A group's events are the named slots of its platform table
 * (tp_pmu_event_group()) for the architecture, each assigned to the core
 * type(s) where it means something: cube / L0 / L1 / MTE1 / FIXPIPE → AIC,
 * vector / UB → AIV, MTE2 / MTE3 / scalar / GM / L2 / icache → both.
 *
 * Derived metrics (the CSV columns of §1.5 the simulator models) are
 * formulas over one core type's event values, that core's total cycles of
 * the block (PMU_CNT_TOTAL) in the same pass and the core frequency; the
 * events of one metric form a co-schedule set for the planner (op/plan.h),
 * which is what makes "the same pass" possible. docs/op-metrics.md lists
 * them.
 */
#ifndef TASKPROF_OP_GROUPS_H
#define TASKPROF_OP_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/pmu_events.h"

enum tp_op_group_idx {
	TP_OP_G_PIPE = 0,
	TP_OP_G_ARITH = 1,
	TP_OP_G_MEMORY = 2,
	TP_OP_G_MEMORY_L0 = 3,
	TP_OP_G_MEMORY_UB = 4,
	TP_OP_G_RESOURCE_CONFLICT = 5,
	TP_OP_G_L2CACHE = 6,
	TP_OP_G_BASIC_INFO = 7,
	TP_OP_NGROUPS = 8,
};

/* The seven CSV groups ("Default"). */
#define TP_OP_GROUPS_DEFAULT 0x7Fu
/* Core-type bits of struct tp_op_group_event.cores. */
#define TP_OP_CORE_BIT_AIC 0x1u
#define TP_OP_CORE_BIT_AIV 0x2u
/* Most events one derived metric reads. */
#define TP_OP_METRIC_MAX_EV 6
/* Bytes one memory request event stands for (docs/pmu.md "Requests"). */
#define TP_OP_REQ_BYTES 32u

/* How a derived metric is computed from S = the sum of its event values
 * on its core type, C = that core's total cycles of the block in the pass
 * that read them and F = the core frequency in Hz. The result is N/A when
 * any event is N/A, or when the denominator is 0. */
enum tp_op_formula {
	TP_OP_F_COUNT = 1,  /* S (an instruction / request count), integer */
	TP_OP_F_RATIO,      /* S / C, "%.6f" (busy share of the block's cycles) */
	TP_OP_F_TIME_US,    /* S / F * 1e6, "%.3f" (busy cycles as µs) */
	TP_OP_F_BW_GBS,     /* S * 32 B / (C / F) / 1e9, "%.3f" GB/s */
	TP_OP_F_KB,         /* S * 32 B / 1024, "%.3f" KB */
	TP_OP_F_HIT_PCT,    /* (sum of the first @n_num events) / S * 100, "%.3f"
			     * (an L2 hit rate: hits over hits and misses) */
};

/**
 * struct tp_op_metric - one derived column.
 * @column:  CSV column name, e.g. "aic_cube_ratio", "aiv_ub_read_bw_vector(GB/s)".
 * @core:    TP_OP_AIC (0) or TP_OP_AIV (1): whose events and cycles.
 * @formula: enum tp_op_formula.
 * @n_ev:    events summed, 1 .. TP_OP_METRIC_MAX_EV.
 * @ev:      their ids (of the group's architecture).
 * @n_num:   TP_OP_F_HIT_PCT: the first @n_num of @ev are the numerator
 *           (1 .. @n_ev); unused by the other formulas.
 */
struct tp_op_metric {
	const char *column;
	uint8_t core;
	uint8_t formula;
	uint8_t n_ev;
	uint16_t ev[TP_OP_METRIC_MAX_EV];
	uint8_t n_num;
};

/**
 * struct tp_op_group_event - one event of a group on one architecture.
 * @id:    event id (DAV_2201 / DAV_3510).
 * @cores: TP_OP_CORE_BIT_AIC | TP_OP_CORE_BIT_AIV: core types it is
 *         programmed on.
 * @name:  the platform table's column name (e.g. "cube_busy_cycles");
 *         the group CSV's counter column is "aic_<name>" / "aiv_<name>".
 */
struct tp_op_group_event {
	uint16_t id;
	uint8_t cores;
	const char *name;
};

/**
 * struct tp_op_group_arch - a group on one architecture.
 * @n_ev:      events (the named slots of the platform table, in slot order).
 * @ev:        them.
 * @n_metrics: derived metrics.
 * @metrics:   them, in CSV column order.
 */
struct tp_op_group_arch {
	uint32_t n_ev;
	struct tp_op_group_event ev[TP_PMU_MAX_SLOTS];
	uint32_t n_metrics;
	const struct tp_op_metric *metrics;
};

/**
 * struct tp_op_group - one metric group.
 * @name:     canonical name ("PipeUtilization", ...), also the CSV's base
 *            name (<name>.csv).
 * @pmu_type: enum tp_pmu_event_type of its platform table; 0 for BasicInfo.
 * @arch:     [TP_PMU_ARCH_A2A3] and [TP_PMU_ARCH_A5].
 */
struct tp_op_group {
	const char *name;
	uint32_t pmu_type;
	struct tp_op_group_arch arch[2];
};

/**
 * tp_op_groups_parse() - parse an `--aic-metrics` list (config.txt
 * `groups=` uses the same syntax with canonical names).
 * @list:   comma-separated names, case-insensitive, blanks around names
 *          ignored; "Default" = the seven CSV groups; "BasicInfo" = no
 *          events. NULL or "" = Default.
 * @mask:   receives bit i for group i (enum tp_op_group_idx).
 * @err:    receives a one-line message on failure (may be NULL).
 * @errlen: its size.
 *
 * Return: 0; -EINVAL for an unknown or empty name ("--aic-metrics: unknown
 * metric group 'Foo'; valid: PipeUtilization, ..., Default"), or for
 * Occupancy / Roofline ("... is a view of msprof that taskprof op does not
 * produce; use Default"). tp_last_error() holds the same message.
 */
int tp_op_groups_parse(const char *list, uint32_t *mask, char *err, size_t errlen);

/**
 * tp_op_groups_format() - canonical comma list of @mask ("PipeUtilization,
 * Memory"; "BasicInfo" for a mask with no CSV group), as config.txt writes
 * (spec/opprof.md §4.2). BasicInfo beside a CSV group is left out.
 * @mask: bit i for group i (enum tp_op_group_idx); unknown bits ignored.
 * @buf:  output, NUL-terminated (truncated to @len - 1); may be NULL when
 *        @len is 0.
 * @len:  size of @buf in bytes.
 *
 * Return: the length in bytes it needed, NUL not counted (snprintf-style:
 * >= @len means it was cut).
 */
int tp_op_groups_format(uint32_t mask, char *buf, size_t len);

/**
 * tp_op_group_get() - the table of group @idx.
 * @idx: enum tp_op_group_idx, 0 .. TP_OP_NGROUPS - 1.
 *
 * Return: the group (static, built once, thread-safe), or NULL for an
 * @idx out of range.
 */
const struct tp_op_group *tp_op_group_get(int idx);

/**
 * tp_op_group_name() - canonical name of group @idx.
 * @idx: enum tp_op_group_idx, 0 .. TP_OP_NGROUPS - 1.
 *
 * Return: the name ("PipeUtilization", ...; a static string), or NULL for
 * an @idx out of range.
 */
const char *tp_op_group_name(int idx);

/**
 * tp_op_group_events() - the event ids of group @idx on @arch programmed
 * on core type @core (TP_OP_AIC / TP_OP_AIV), in slot order.
 * @idx:  enum tp_op_group_idx.
 * @arch: TP_PMU_ARCH_A2A3 or TP_PMU_ARCH_A5.
 * @core: TP_OP_AIC or TP_OP_AIV.
 * @out:  receives up to @max ids; may be NULL to count only.
 * @max:  entries at @out.
 *
 * Return: the number of ids (may exceed @max: only @max are written);
 * 0 for a bad @idx / @arch / @core.
 */
size_t tp_op_group_events(int idx, enum tp_pmu_arch arch, int core, uint16_t *out, size_t max);

/**
 * tp_op_groups_of_event() - the groups whose events, or whose derived
 * metrics on @core, include @id on core type @core of @arch.
 * @arch: TP_PMU_ARCH_A2A3 or TP_PMU_ARCH_A5.
 * @core: TP_OP_AIC or TP_OP_AIV.
 * @id:   event id of @arch.
 *
 * Return: a mask, bit i for group i (enum tp_op_group_idx); 0 when none (a
 * raw `--events` id) or for a bad @arch.
 */
uint32_t tp_op_groups_of_event(enum tp_pmu_arch arch, int core, uint16_t id);

/**
 * tp_op_event_name() - a name for event @id of @arch.
 * @arch: TP_PMU_ARCH_A2A3 or TP_PMU_ARCH_A5.
 * @id:   event id of @arch.
 *
 * Return: the column name of the first group table (in group-index order)
 * listing @id, e.g. "cube_busy_cycles" (a static string); NULL when no
 * group lists it, or for a bad @arch.
 */
const char *tp_op_event_name(enum tp_pmu_arch arch, uint16_t id);

/**
 * tp_op_metric_eval() - evaluate @m (spec/opprof.md §1.5, §4.11).
 * @m:        the metric.
 * @vals:     the values of @m->ev, in order (event counts).
 * @have:     whether each value exists (false = N/A: its pass is missing,
 *            or the block did not run on @m->core).
 * @cycles:   the block's total cycles on @m->core (the report passes those
 *            of the pass that read the events).
 * @freq_hz:  core frequency in Hz.
 * @out:      receives the value, in the unit of @m->formula (enum
 *            tp_op_formula: a count, a ratio 0..1, µs, GB/s or KB).
 *
 * Return: true with *@out set; false when the result is N/A (a missing
 * value, a zero @cycles for a ratio or bandwidth, a @freq_hz <= 0 for a
 * time or bandwidth, or an unknown formula).
 */
bool tp_op_metric_eval(const struct tp_op_metric *m, const uint64_t *vals, const bool *have,
		       uint64_t cycles, double freq_hz, double *out);

/**
 * tp_op_metric_format() - print a value of @m's formula into @buf with its
 * fixed format (see enum tp_op_formula), "N/A" when @ok is false.
 * @m:   the metric whose formula picks the format ("%.0f" for a count,
 *       "%.6f" for a ratio, "%.3f" otherwise).
 * @ok:  false: the value is N/A (tp_op_metric_eval() returned false).
 * @v:   the value from tp_op_metric_eval().
 * @buf: receives the text, NUL-terminated, cut to @len - 1 bytes.
 * @len: size of @buf in bytes.
 *
 * Return: @buf.
 */
const char *tp_op_metric_format(const struct tp_op_metric *m, bool ok, double v, char *buf,
				size_t len);

#endif /* TASKPROF_OP_GROUPS_H */
