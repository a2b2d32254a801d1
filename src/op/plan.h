/* SPDX-License-Identifier: MIT */
/*
 * op/plan.h — pass planning of `taskprof op` (spec/opprof.md §4.5; issue 6
 * scope 5): which PMU events each measured pass programs on the AIC and on
 * the AIV cores.
 *
 * The plan is a pure, deterministic function of its input: the launcher
 * computes it once, writes it to config.txt, and every process (and every
 * application-replay run) programs exactly what the file says.
 *
 * Input is a list of co-schedule sets ("cosets"): events that must be read
 * in the same pass because one derived metric combines them. A plain event
 * is a set of one. Algorithm (§4.5):
 *
 *   1. every set is de-duplicated; an id of TP_EV_NONE is refused (it is
 *      the empty-slot sentinel: event id 0 is a real event on a5);
 *   2. a set with more than K events on one core type is refused;
 *   3. sets that share an event (same core type and id) are merged
 *      (union-find) into one item; a merged item over K on either core type
 *      is split back into its sets, and the shared event is then sampled in
 *      every pass that needs it;
 *   4. first-fit decreasing: items sorted by max(n_aic, n_aiv) desc, then
 *      n_aic + n_aiv desc, then first-request order; each goes to the
 *      first pass where both core types still have room (an event already
 *      in that pass costs no slot), else a new pass;
 *   5. no events at all still gives one pass (timing and duration only).
 *
 * Cycle counts, timestamps, block id and core type are always recorded per
 * block and never use a slot.
 */
#ifndef TASKPROF_OP_PLAN_H
#define TASKPROF_OP_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "platform/pmu_events.h"
#include "taskprof/rt_tool.h"

/* Most passes a plan may have (Default needs 4 on a2a3, 3 on a5). */
#define TP_OP_MAX_PASSES 64

/* Core types, the index of every [2] array of this module. */
enum tp_op_core {
	TP_OP_AIC = 0,
	TP_OP_AIV = 1,
	TP_OP_NCORE = 2,
};

/**
 * struct tp_op_pass - the events one measured pass programs.
 * @ev:        [TP_OP_AIC] / [TP_OP_AIV]: event ids in slot order, the first
 *             @n[c] used, the rest TP_EV_NONE.
 * @n:         events used per core type, 0 .. the plan's slots.
 * @item_mask: bit i set: slot i starts a new co-schedule item (bit 0 is
 *             implied). Only tp_op_plan_build() sets it, for the " | "
 *             separators of tp_op_plan_print(); config.txt does not carry
 *             it (a plan read back prints without separators).
 */
struct tp_op_pass {
	uint16_t ev[2][TP_DRV_PROF_MAX_EVENTS];
	uint32_t n[2];
	uint16_t item_mask[2];
};

/**
 * struct tp_op_plan - a whole pass plan.
 * @arch:    the event-id space (DAV_2201 for a2a3, DAV_3510 for a5); set by
 *           tp_op_plan_for_groups(), left as the caller set it by
 *           tp_op_plan_build().
 * @slots:   K, events per core type per pass (8 a2a3, 10 a5).
 * @npasses: passes used, 1 .. TP_OP_MAX_PASSES.
 * @pass:    the first @npasses are the plan.
 */
struct tp_op_plan {
	enum tp_pmu_arch arch;
	uint32_t slots;
	uint32_t npasses;
	struct tp_op_pass pass[TP_OP_MAX_PASSES];
};

/**
 * struct tp_op_coset - one co-schedule set (events read in the same pass).
 * @n_aic, @aic: AIC event ids (may repeat; repeats count once).
 * @n_aiv, @aiv: AIV event ids.
 * A set with no events is ignored.
 */
struct tp_op_coset {
	uint16_t n_aic, n_aiv;
	const uint16_t *aic, *aiv;
};

/**
 * tp_op_plan_build() - plan passes for @sets (first-fit decreasing, §4.5).
 * @sets:   @nsets co-schedule sets in request order (the order breaks ties,
 *          so it is part of the input); NULL allowed when @nsets is 0.
 * @slots:  K, 1 .. TP_DRV_PROF_MAX_EVENTS.
 * @out:    receives the plan (@out->arch is not touched, @out->slots =
 *          @slots); every unused slot is TP_EV_NONE.
 * @err:    receives a one-line message on failure (may be NULL).
 * @errlen: its size in bytes.
 *
 * Deterministic: the same input gives a byte-identical @out.
 *
 * Return: 0; -EINVAL for bad arguments, an id equal to TP_EV_NONE, or a set
 * needing more than @slots events on one core type ("co-schedule set 3
 * needs 9 AIC events, max 8"); -E2BIG when more than TP_OP_MAX_PASSES
 * passes would be needed. tp_last_error() holds the same message.
 */
int tp_op_plan_build(const struct tp_op_coset *sets, size_t nsets, uint32_t slots,
		     struct tp_op_plan *out, char *err, size_t errlen);

/**
 * tp_op_plan_for_groups() - the plan of a metric-group request
 * (`--aic-metrics` plus `--events`).
 * @arch:       event-id space; K = tp_pmu_arch_slots(@arch).
 * @group_mask: bit i = group i of op/groups.h (tp_op_groups_parse()).
 * @extra_aic:  @n_extra_aic raw AIC event ids (`--events aic:...`), each a
 *              set of one, after the groups' sets; may be NULL when 0.
 * @n_extra_aic: entries at @extra_aic.
 * @extra_aiv:  the same for AIV.
 * @n_extra_aiv: entries at @extra_aiv.
 * @out, @err, @errlen: as tp_op_plan_build(); @out->arch = @arch.
 *
 * The sets are, group by group in group-index order: every derived metric
 * with two or more events (tp_op_group_metric()), then every event of the
 * group on every core type it serves, in the group's slot order.
 *
 * Return: as tp_op_plan_build(); -EINVAL also for a bad @arch or a mask
 * bit past the last group.
 */
int tp_op_plan_for_groups(enum tp_pmu_arch arch, uint32_t group_mask, const uint16_t *extra_aic,
			  size_t n_extra_aic, const uint16_t *extra_aiv, size_t n_extra_aiv,
			  struct tp_op_plan *out, char *err, size_t errlen);

/**
 * tp_op_plan_print() - print @p in the `--list-passes` format of §4.5:
 * a summary line ("pass plan: arch a2a3, 8 slots per core type, 3 passes,
 * 20 AIC + 14 AIV events"), then
 *
 *   pass 0  AIC: 0x0a 0x09 0x0b | 0x49 0x4a - -   AIV: 0x08 0x09 ...
 *
 * one line per pass, every slot shown ("-" when unused, " | " between
 * co-schedule items when known), then one line per planned event naming
 * the pass, core type, id, the event's name and the metric groups of
 * @p->arch it serves ("-" for a raw event no group uses).
 * @f: output stream; write errors are left in its error flag.
 * @p: the plan.
 */
void tp_op_plan_print(FILE *f, const struct tp_op_plan *p);

/**
 * tp_op_plan_find() - where event @id of core type @core is programmed.
 * @p:    a plan.
 * @core: TP_OP_AIC or TP_OP_AIV.
 * @id:   event id.
 *
 * Return: the first pass that programs it, or -1 when none does.
 */
int tp_op_plan_find(const struct tp_op_plan *p, int core, uint16_t id);

/**
 * tp_op_plan_total_events() - distinct (core type, id) pairs in @p.
 * @p: a plan.
 *
 * Return: the number of pairs; an event sampled in several passes counts
 * once.
 */
uint32_t tp_op_plan_total_events(const struct tp_op_plan *p);

#endif /* TASKPROF_OP_PLAN_H */
