/* SPDX-License-Identifier: MIT */
/*
 * runtime/task_id.h — 64-bit task ids and ring selection
 * (spec/runtime-model.md §2.2, §7.1 item 4).
 *
 * A task id is PTO2TaskId.raw = (ring_id << 32) | local_id: local_id is the
 * ring's monotonic current_task_index at submit, so ids of one ring compare
 * in submit order, and the slot of a task is local_id & (window - 1).
 * The ring of a submit is min(scope depth, TP_MAX_RING_DEPTH - 1): the outer
 * scope the executor opens around the orchestration is depth 0 → ring 0,
 * each nested scope goes one ring deeper, depth 3 and below share ring 3.
 *
 * Pure arithmetic, inline: every submit and every tensor-map probe calls
 * these.
 */
#ifndef TASKPROF_RUNTIME_TASK_ID_H
#define TASKPROF_RUNTIME_TASK_ID_H

#include <stdbool.h>
#include <stdint.h>

/* PTO2_MAX_RING_DEPTH: rings of the TRB runtime (HBG uses 1, spec §3). */
#define TP_MAX_RING_DEPTH 4

/* "No task": the value of an unset owner_task_id. Its ring (0xFFFFFFFF) is
 * never a valid ring, so it cannot collide with a real id. */
#define TP_TASK_ID_INVALID UINT64_MAX

typedef uint64_t tp_task_id;

/**
 * tp_task_id_make() - the id of task @local_id of ring @ring_id.
 * @ring_id:  0 .. TP_MAX_RING_DEPTH-1.
 * @local_id: the ring's current_task_index at submit.
 */
static inline tp_task_id tp_task_id_make(uint32_t ring_id, uint32_t local_id)
{
	return ((uint64_t)ring_id << 32) | local_id;
}

/** tp_task_id_ring() - ring of @id (the high 32 bits). */
static inline uint32_t tp_task_id_ring(tp_task_id id)
{
	return (uint32_t)(id >> 32);
}

/** tp_task_id_local() - per-ring local id of @id (the low 32 bits). */
static inline uint32_t tp_task_id_local(tp_task_id id)
{
	return (uint32_t)id;
}

/**
 * tp_task_id_valid() - true if @id names a task of some ring (its ring is
 * < TP_MAX_RING_DEPTH); false for TP_TASK_ID_INVALID.
 */
static inline bool tp_task_id_valid(tp_task_id id)
{
	return tp_task_id_ring(id) < TP_MAX_RING_DEPTH;
}

/**
 * tp_ring_for_scope_depth() - ring of a task submitted at scope depth
 * @depth (0 = the executor's outer scope): min(depth, TP_MAX_RING_DEPTH-1),
 * spec §2.2 "Ring selection by scope depth".
 */
static inline uint32_t tp_ring_for_scope_depth(uint32_t depth)
{
	return depth < TP_MAX_RING_DEPTH - 1 ? depth : TP_MAX_RING_DEPTH - 1;
}

#endif /* TASKPROF_RUNTIME_TASK_ID_H */
