/* SPDX-License-Identifier: MIT */
/*
 * collectors/swimlane/swl_dev.h — the device half of the L2 swimlane
 * collector: record writers the runtime's hooks call (through the Worker's
 * glue) on AICPU and AICore threads. Plain values only; no runtime header.
 * Seed 002 §5.1–§5.3, spec/swimlane-format.md §1.
 *
 * Who calls what, and on which thread:
 *
 *   swl_dev_on_dispatch     scheduler thread owning @core, before the
 *                           DATA_MAIN_BASE write of reg_task_id
 *   swl_dev_on_aicore_receive  the AICore thread of @core, after it read
 *                           a token, before its ACK (a2a3 only)
 *   swl_dev_on_aicore_task  the AICore thread of @core, before its FIN
 *   swl_dev_on_fin          scheduler thread owning @core, after the FIN
 *   swl_dev_on_sched_phase  scheduler thread @thread (level >= 3)
 *   swl_dev_on_orch_submit  the orchestrator thread (level 4)
 *   swl_dev_flush_thread    scheduler thread @thread after its loop
 *   swl_dev_flush_orch      the orchestrator thread after orchestration
 *
 * AICore records, shared mapping (a2a3sim): the AICore writes its record
 * into its core's active buffer at the next slot. The AICPU owns
 * rotation: at the dispatch that finds the active buffer full (every
 * SWL_AICORE_BUFFER_SIZE dispatches) it installs a fresh buffer from the
 * core's free queue, publishes it in the core's active head (pointer +
 * sequence) and retires the old one. The AICore re-reads the head when it
 * receives a token, before its ACK, and restarts at slot 0 when the
 * sequence moved: the slot of task K is fixed before the AICPU can
 * dispatch K+1 (which needs K's ACK), so a rotation at K+1 never moves
 * K's record into the new buffer.
 * Because dual issue lets dispatch K happen before task K-1 has FINed,
 * the retired buffer is published on the ready queue only once the FIN
 * of every task it holds has been observed; the AICore stores its record
 * before its FIN, so that FIN publishes it (the seed's race argument,
 * kept true under dual issue).
 *
 * AICore records, host shadow (a5sim): the AICore writes its record into
 * a stable per-core staging ring, dual_issue_slots[reg_task_id & 1]; the
 * AICPU copies the slot into its own AICore-task buffer on FIN (a slot
 * showing another reg_task_id is counted as a mismatch).
 */
#ifndef TASKPROF_COLLECTORS_SWIMLANE_DEV_H
#define TASKPROF_COLLECTORS_SWIMLANE_DEV_H

#include <stdbool.h>
#include <stdint.h>

struct swl_dev;

void swl_dev_on_dispatch(struct swl_dev *d, int thread, int core, uint32_t reg_task_id,
			 uint64_t ts);
void swl_dev_on_aicore_receive(struct swl_dev *d, int core, uint32_t reg_task_id);
void swl_dev_on_aicore_task(struct swl_dev *d, int core, uint64_t task_token,
			    uint32_t reg_task_id, uint64_t receive, uint64_t start, uint64_t end);
void swl_dev_on_fin(struct swl_dev *d, int thread, int core, uint32_t reg_task_id,
		    uint64_t dispatch_ts, uint64_t finish_ts);
/* @u0 / @u1: pop_hit / pop_miss for dispatch, local_id / ring_id for
 * dummy_task and predicated_skip, 0 otherwise. */
void swl_dev_on_sched_phase(struct swl_dev *d, int thread, uint32_t kind, uint64_t start,
			    uint64_t end, uint64_t loop_iter, uint32_t tasks, uint32_t u0,
			    uint32_t u1, const int16_t depth_start[3], const int16_t depth_end[3]);
void swl_dev_on_orch_submit(struct swl_dev *d, uint64_t task_id, uint32_t submit_idx,
			    uint64_t start, uint64_t end);
void swl_dev_flush_thread(struct swl_dev *d, int thread);
void swl_dev_flush_orch(struct swl_dev *d);

#endif
