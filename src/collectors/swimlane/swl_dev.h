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
 *                           a token, before its ACK
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
 * AICPU copies the slot into its own AICore-task buffer after the FIN (a
 * slot showing another reg_task_id is counted as a mismatch). It asks
 * for the slot's line at the FIN and copies it at the next dispatch to
 * the core whose token uses the same slot (two tokens on: dual issue
 * keeps at most two outstanding, so the AICore cannot have rewritten it)
 * or at the thread's flush: the FIN's completion does not wait for the
 * line to come over from the AICore's CPU.
 */
#ifndef TASKPROF_COLLECTORS_SWIMLANE_DEV_H
#define TASKPROF_COLLECTORS_SWIMLANE_DEV_H

#include <stdbool.h>
#include <stdint.h>

struct swl_dev;

/*
 * All timestamps are tp_sys_cnt() ticks of the platform's system counter
 * (tp_sys_cnt_freq()). @d is swl_dev(collector); @core a logical AICore
 * id (0 .. num_cores - 1, not checked); @thread an AICPU scheduler thread
 * (= ready queue). A record the transport cannot take is counted dropped
 * by cause (enum tp_drop_cause) and the call goes on: none of these
 * fails. Records of a core whose writers could not attach to their ready
 * queue are not written and not counted; swl_reconcile() warns about
 * them.
 */

/**
 * swl_dev_on_dispatch() - a task dispatched to @core (seed 002 §5.1).
 * @d:           the device state.
 * @thread:      the scheduler thread owning @core; its first dispatch
 *               attaches the core's writers to this thread's ready queue.
 * @core:        the AICore.
 * @reg_task_id: the token written to DATA_MAIN_BASE (unused here).
 * @ts:          dispatch time (unused here: on_fin carries it).
 *
 * a2a3 (shared mapping): counts the AICore record this dispatch will
 * produce and reserves its slot, rotating the core's AICore buffer when
 * it is full (the count is dropped, TP_DROP_NO_BUFFER, when no buffer
 * comes). a5: first commits the staging slot this token will reuse,
 * if a FIN left it staged.
 */
void swl_dev_on_dispatch(struct swl_dev *d, int thread, int core, uint32_t reg_task_id,
			 uint64_t ts);

/**
 * swl_dev_on_aicore_receive() - the AICore of @core read a token, before
 * its ACK. a2a3: it re-reads the core's active head and fixes the slot
 * of this task's record. Both: a write prefetch of the record's line (a5:
 * the staging slot), so that its transfer overlaps the kernel.
 * @d:           the device state.
 * @core:        the AICore.
 * @reg_task_id: the token read.
 */
void swl_dev_on_aicore_receive(struct swl_dev *d, int core, uint32_t reg_task_id);

/**
 * swl_dev_on_aicore_task() - the AICore of @core finished a task, before
 * its FIN: write its L2SwimlaneAicoreTaskRecord (spec/swimlane-format.md
 * §1.4, §1.10).
 * @d:           the device state.
 * @core:        the AICore.
 * @task_token:  (ring_id << 32) | local_id of the task.
 * @reg_task_id: the dispatch token: the join key with the AICPU record.
 * @receive:     ticks when the token was read (gated task: gate opened).
 * @start:       ticks right before the kernel.
 * @end:         ticks right after it.
 *
 * a2a3: into the slot fixed at receive (none: the dispatch already
 * counted it dropped). a5: into staging slot reg_task_id & 1, committed
 * after the FIN (see the top of this file). recv_to_start is @start -
 * @receive, saturated to 32 bits.
 */
void swl_dev_on_aicore_task(struct swl_dev *d, int core, uint64_t task_token,
			    uint32_t reg_task_id, uint64_t receive, uint64_t start, uint64_t end);

/**
 * swl_dev_on_fin() - the FIN of a task on @core was observed (seed 002
 * §5.1; spec/swimlane-format.md §1.5).
 * @d:           the device state.
 * @thread:      the scheduler thread owning @core (unused: the core's
 *               writers are bound at its first dispatch).
 * @core:        the AICore.
 * @reg_task_id: the task's dispatch token.
 * @dispatch_ts: ticks before the DATA_MAIN_BASE write (gated task: its
 *               doorbell write).
 * @finish_ts:   ticks right after the COND load that showed the FIN.
 *
 * a5: marks the staging slot for commit (as the AICore record, or one
 * mismatch when it carries another token) at the dispatch that reuses
 * it or the thread's flush, and asks for its line. a2a3: publishes a
 * retired AICore buffer once every task in it has FINed. At level >= 2
 * also writes the AICPU task record. Does nothing for a core not
 * attached.
 */
void swl_dev_on_fin(struct swl_dev *d, int thread, int core, uint32_t reg_task_id,
		    uint64_t dispatch_ts, uint64_t finish_ts);

/**
 * swl_dev_on_sched_phase() - one scheduler phase record (level >= 3;
 * spec/swimlane-format.md §1.6).
 * @d:           the device state.
 * @thread:      the scheduler thread; out of range does nothing.
 * @kind:        enum swl_sched_kind.
 * @start, @end: the phase, ticks (equal for a zero-width marker).
 * @loop_iter:   the scheduler loop iteration.
 * @tasks:       tasks processed in the phase.
 * @u0, @u1:     pop_hit / pop_miss for dispatch, local_id / ring_id for
 *               dummy_task and predicated_skip, 0 otherwise.
 * @depth_start, @depth_end: ready-queue depth [AIC, AIV, MIX] at the
 *               phase's start and end.
 */
void swl_dev_on_sched_phase(struct swl_dev *d, int thread, uint32_t kind, uint64_t start,
			    uint64_t end, uint64_t loop_iter, uint32_t tasks, uint32_t u0,
			    uint32_t u1, const int16_t depth_start[3], const int16_t depth_end[3]);

/**
 * swl_dev_on_orch_submit() - one orchestrator phase record (level 4;
 * spec/swimlane-format.md §1.7), on the orchestrator thread. Does nothing
 * below level 4 or without an orchestrator thread.
 * @d:           the device state.
 * @task_id:     the submitted task's id.
 * @submit_idx:  submits counted from 0.
 * @start, @end: the submit (or alloc_tensors), ticks.
 */
void swl_dev_on_orch_submit(struct swl_dev *d, uint64_t task_id, uint32_t submit_idx,
			    uint64_t start, uint64_t end);

/**
 * swl_dev_flush_thread() - scheduler @thread after its loop: publish the
 * partial buffers of the cores it owns and of its phase writer (a2a3: and
 * a retired AICore buffer; the core's head is then cleared so the AICore
 * writes no more into a buffer the host owns; a5: after committing the
 * staged slots, the older token first). Out of range does nothing.
 * @d:      the device state.
 * @thread: the scheduler thread.
 */
void swl_dev_flush_thread(struct swl_dev *d, int thread);

/**
 * swl_dev_flush_orch() - the orchestrator thread after orchestration:
 * publish its partial phase buffer.
 * @d: the device state.
 */
void swl_dev_flush_orch(struct swl_dev *d);

#endif
