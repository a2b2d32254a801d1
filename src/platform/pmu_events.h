/* SPDX-License-Identifier: MIT */
/*
 * platform/pmu_events.h — the PMU event groups of both architectures and
 * the selection of one (spec/pmu.md §1, §2.2, §8; issue 5 scope 1).
 *
 *   event type   1 ARITHMETIC_UTILIZATION  2 PIPE_UTILIZATION (default)
 *                4 MEMORY  5 MEMORY_L0  6 RESOURCE_CONFLICT  7 MEMORY_UB
 *                8 L2_CACHE — nothing else has a table (0, 3, 9, < 0).
 *   a2a3         8 counter slots, DAV_2201 event ids (spec §1.2)
 *   a5           10 counter slots, DAV_3510 event ids (spec §1.3)
 *
 * A group gives, per counter slot, the event id programmed into
 * PMU_CNTi_IDX and the CSV column name; an unused slot is ("", 0x0): it is
 * still programmed and read, but has no CSV column.
 *
 * The fallback of an invalid type to PIPE_UTILIZATION happens in four
 * independent places (spec §1.4); each has its function here:
 *   1. host selection          tp_pmu_resolve_event_type()   WARN
 *      + environment override  tp_pmu_apply_env_override()   INFO / WARN
 *   2. CSV header / rows       tp_pmu_event_group_or_default() (silent)
 *   3. AICPU init              tp_pmu_event_group_for_init()   WARN
 *   4. enablement              tp_pmu_enabled(): on iff enable_pmu > 0
 */
#ifndef TASKPROF_PLATFORM_PMU_EVENTS_H
#define TASKPROF_PLATFORM_PMU_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"

/* PmuEventType values (spec §1.1). */
enum tp_pmu_event_type {
	TP_PMU_ARITHMETIC_UTILIZATION = 1,
	TP_PMU_PIPE_UTILIZATION = 2,
	TP_PMU_MEMORY = 4,
	TP_PMU_MEMORY_L0 = 5,
	TP_PMU_RESOURCE_CONFLICT = 6,
	TP_PMU_MEMORY_UB = 7,
	TP_PMU_L2_CACHE = 8,
};

/* PMU_EVENT_TYPE_DEFAULT: what a bare --enable-pmu and every fallback
 * select. */
#define TP_PMU_EVENT_TYPE_DEFAULT TP_PMU_PIPE_UTILIZATION

/* PMU_COUNTER_COUNT_A2A3 / _A5. */
#define TP_PMU_SLOTS_A2A3 8
#define TP_PMU_SLOTS_A5 10

/* Environment variables that override the CLI event type (spec §8.2);
 * the first is taskprof's name, the second the seed's, read when the
 * first is unset. */
#define TP_PMU_ENV_EVENT_TYPE "TASKPROF_PMU_EVENT_TYPE"
#define TP_PMU_ENV_EVENT_TYPE_ALIAS "SIMPLER_PMU_EVENT_TYPE"

/* The two event-id spaces. */
enum tp_pmu_arch {
	TP_PMU_ARCH_A2A3 = 0, /* DAV_2201, 8 slots */
	TP_PMU_ARCH_A5 = 1,   /* DAV_3510, 10 slots */
};

/**
 * struct tp_pmu_event_slot - one counter slot (spec/pmu.md §1.2, §1.3).
 * @id:   the event id programmed into its PMU_CNTn_IDX selector.
 * @name: its pmu.csv column; "" = unused slot.
 */
struct tp_pmu_event_slot {
	uint32_t id;
	const char *name;
};

/**
 * struct tp_pmu_event_group - one event group (event type) of one
 * architecture: its slot table (spec/pmu.md §1.2, §1.3).
 */
struct tp_pmu_event_group {
	uint32_t type;          /* enum tp_pmu_event_type */
	const char *type_name;  /* "PIPE_UTILIZATION", ... */
	enum tp_pmu_arch arch;
	int n_slots;            /* 8 (a2a3) or 10 (a5): every slot, named or not */
	int n_named;            /* slots with a CSV column */
	struct tp_pmu_event_slot slot[TP_PMU_MAX_SLOTS];
};

/**
 * tp_pmu_arch_of() - the event-id space of a platform.
 * @plat: a platform descriptor (platform/platform.h).
 *
 * Return: TP_PMU_ARCH_A5 for 10-slot platforms (a5sim), else
 * TP_PMU_ARCH_A2A3.
 */
enum tp_pmu_arch tp_pmu_arch_of(const struct tp_platform *plat);

/** tp_pmu_arch_slots() - 8 (a2a3) or 10 (a5). */
int tp_pmu_arch_slots(enum tp_pmu_arch arch);

/**
 * tp_pmu_event_type_name() - "ARITHMETIC_UTILIZATION", ... for a known
 * type, NULL for any other value.
 */
const char *tp_pmu_event_type_name(uint32_t type);

/**
 * tp_pmu_group_model_note() - what the simulated PMU does not count of the
 * group @type on @arch (docs/pmu.md "Per event id"): a phrase such as
 * "does not model bank or resource conflicts: every RESOURCE_CONFLICT
 * counter reads 0", or NULL when it models every named counter of the
 * group.
 */
const char *tp_pmu_group_model_note(enum tp_pmu_arch arch, uint32_t type);

/**
 * tp_pmu_event_type_valid() - whether @type has a table (1, 2, 4..8).
 */
bool tp_pmu_event_type_valid(int64_t type);

/**
 * tp_pmu_event_group() - the table of @type on @arch
 * (pmu_resolve_event_config_a2a3 / _a5, spec §1.2–§1.3).
 *
 * Return: a static group, or NULL when @type has no table (0, 3, 9, ...).
 */
const struct tp_pmu_event_group *tp_pmu_event_group(enum tp_pmu_arch arch,
						    uint32_t type);

/**
 * tp_pmu_event_group_or_default() - fallback place 2 (CSV header/rows,
 * spec §1.4 item 2): the table of @type, or silently PIPE_UTILIZATION's
 * when @type has none. The rows still print the stored @type.
 *
 * Return: a static group; never NULL.
 */
const struct tp_pmu_event_group *
tp_pmu_event_group_or_default(enum tp_pmu_arch arch, uint32_t type);

/**
 * tp_pmu_event_group_for_init() - fallback place 3 (AICPU init, spec §1.4
 * item 3): the table of @type, or PIPE_UTILIZATION's with one WARN line
 * `pmu_aicpu_init: invalid event type %u, programming PIPE_UTILIZATION=2`.
 *
 * Return: a static group; never NULL.
 */
const struct tp_pmu_event_group *
tp_pmu_event_group_for_init(enum tp_pmu_arch arch, uint32_t type);

/**
 * tp_pmu_resolve_event_type() - fallback place 1 (host selection,
 * resolve_pmu_event_type, spec §1.4 item 1).
 * @arch:      the platform's event space.
 * @requested: the --enable-pmu value / run configuration's enable_pmu.
 *
 * A known @requested is returned. 0 returns 2 silently (PMU is off then).
 * Any other value returns 2 after the WARN line
 * `Invalid PMU event type %u, using default (PIPE_UTILIZATION=2)`, where
 * a negative value is printed as its unsigned 32-bit pattern (spec: %u).
 *
 * Return: a valid event type.
 */
uint32_t tp_pmu_resolve_event_type(enum tp_pmu_arch arch, int64_t requested);

/**
 * tp_pmu_apply_env_override() - the environment override (spec §8.2).
 * @arch:     the platform's event space.
 * @cli_type: the type tp_pmu_resolve_event_type() returned.
 *
 * Reads TASKPROF_PMU_EVENT_TYPE, or SIMPLER_PMU_EVENT_TYPE when the first
 * is unset, on every call. Unset → @cli_type. Parsed like atoi()
 * (tp_pmu_parse_env_value()). A known type replaces @cli_type, with INFO
 * `PMU event type set to %u from <VAR>`; anything else (0, 3, 9, -1,
 * empty, garbage) keeps @cli_type with WARN
 * `Invalid <VAR>=%s, using default (PIPE_UTILIZATION=2)` — the text says
 * "default" but the CLI choice is kept, as the reference does (spec §10
 * item 6); when @cli_type is not 2 a second WARN says so:
 * `(taskprof: not the default here: the value is ignored and the
 * --enable-pmu choice is kept, <NAME>=<cli_type>)`. The variable never enables PMU by itself: call this only when
 * PMU is on.
 *
 * Return: the event type to use.
 */
uint32_t tp_pmu_apply_env_override(enum tp_pmu_arch arch, uint32_t cli_type);

/**
 * tp_pmu_select_event_type() - place 1 then the override: what a run with
 * enable_pmu = @requested (> 0) uses.
 */
uint32_t tp_pmu_select_event_type(enum tp_pmu_arch arch, int64_t requested);

/**
 * tp_pmu_enabled() - fallback place 4: PMU is on iff @enable_pmu > 0.
 */
static inline bool tp_pmu_enabled(int64_t enable_pmu)
{
	return enable_pmu > 0;
}

/**
 * tp_pmu_parse_env_value() - the environment variable's value as atoi()
 * reads it: leading blanks, an optional sign, then decimal digits up to
 * the first other character; no digits → 0. Values beyond int32 clamp to
 * INT32_MIN / INT32_MAX (atoi's overflow is undefined; a clamped value is
 * invalid either way).
 * @s: the text, or NULL (→ 0).
 */
int32_t tp_pmu_parse_env_value(const char *s);

/**
 * tp_pmu_parse_event_arg() - strict parse of a command-line event type
 * (the `--enable-pmu N` value, argparse type=int, spec §8.1).
 * @s:   the argument: optional blanks, optional sign, decimal digits,
 *       optional blanks; nothing else.
 * @out: receives the value (any int; validity is decided by
 *       tp_pmu_resolve_event_type()).
 *
 * Return: 0; -EINVAL when @s is NULL, empty or not a decimal integer,
 * -ERANGE when it does not fit in int32. tp_last_error() says
 * "--enable-pmu: expected an integer event type (1, 2, 4, 5, 6, 7 or 8),
 * got 'TEXT'".
 */
int tp_pmu_parse_event_arg(const char *s, int32_t *out);

/**
 * tp_pmu_csv_header() - the pmu.csv header line of a group (spec §2.2):
 * the six fixed columns, one per named slot in slot order, event_type,
 * then taskprof's run_epoch, then "\n".
 * @g:   the group (tp_pmu_event_group_or_default()).
 * @buf: output buffer.
 * @len: its size in bytes.
 *
 * Return: the header's length in bytes (without the NUL), or -ENOSPC when
 * it does not fit in @len (then @buf holds nothing useful).
 */
int tp_pmu_csv_header(const struct tp_pmu_event_group *g, char *buf, size_t len);

#endif /* TASKPROF_PLATFORM_PMU_EVENTS_H */
