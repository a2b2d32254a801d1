/* SPDX-License-Identifier: MIT */
/*
 * collectors/pmu/pmu_dev.h — the device half of the PMU collector: the
 * AICPU and AICore calls of one run, in plain values (no runtime header).
 * Seed 000 §5.1–§5.3, spec/pmu.md §4 and §6.1. Get the state with
 * pmu_dev(collector) (pmu_host.h).
 *
 * Who calls what, and on which thread (one run):
 *
 *   pmu_dev_init            AICPU leader, after the cores are up and
 *                           before the first dispatch: programs every
 *                           core's event group and starts its counters
 *                           (tp_pmu_program), storing producer_note.
 *                           pmu_dev_init_core does one core.
 *   (AICore)                opens / closes its counting window around
 *                           each kernel body: tp_pmu_window_open/_close
 *                           (platform/pmu_model.h), or the device's
 *                           kernel hooks tp_pmu_on_kernel_begin/_end.
 *   pmu_dev_aicore_stage    a5 only: the AICore of @core right after it
 *                           closed its window and before it writes FIN:
 *                           reads its counters (tp_pmu_read) into
 *                           dual-issue slot reg_task_id & 1. A no-op on
 *                           a2a3.
 *   pmu_dev_on_fin          the scheduler thread owning @core, when it
 *                           observes the FIN of a task: a2a3 reads the
 *                           core's counters (tp_pmu_read) and writes the
 *                           record; a5 validates the slot against the
 *                           register token and commits it (a stale slot
 *                           counts one mismatch). Call it once per task
 *                           that ran on an AICore — never for a task the
 *                           AICore did not execute.
 *   pmu_dev_flush_thread    each scheduler thread after its loop: publish
 *                           the partial buffers of the cores it wrote.
 *   pmu_dev_finalize        AICPU, after every flush and before AICore
 *                           shutdown: per core read the control word(s)
 *                           (producer_note_close) and restore the pre-run
 *                           word(s). pmu_dev_finalize_core does one core.
 *
 * Ready queue q is the thread that wrote the record; a core's records
 * all go to the queue of the thread that FINed its first task (the
 * core's owner: one thread per core for the run).
 *
 * Accounting (spec §4.5): every pmu_dev_on_fin on an initialised core
 * with a PMU window adds 1 to the core's total; a record that finds no
 * buffer past the backstop, or whose buffer could not be published, is
 * counted dropped (by cause); an a5 slot whose token is not this task's
 * counts mismatch.
 */
#ifndef TASKPROF_COLLECTORS_PMU_DEV_H
#define TASKPROF_COLLECTORS_PMU_DEV_H

#include <stdint.h>

#include "platform/pmu_model.h"

struct pmu_dev;

/**
 * pmu_dev_init() - AICPU run init of every core (spec/pmu.md §4.1, seed
 * 000 §5.1): pmu_dev_init_core() for cores 0 .. num_cores - 1.
 * @d: the device state (pmu_dev()); NULL does nothing.
 *
 * Return: 0, or the first -errno of tp_pmu_program() (cores after a
 * failure are still programmed). Sets no tp_last_error() message.
 */
int pmu_dev_init(struct pmu_dev *d);

/**
 * pmu_dev_init_core() - program one core's event group, start its
 * counters and store its producer_note (seed 000 §5.1).
 * @d:    the device state.
 * @core: logical core id, 0 .. num_cores - 1.
 *
 * A core whose programming failed stays uninitialised: its FINs then
 * write and count nothing.
 *
 * Return: 0; -EINVAL for a NULL @d or a bad @core, or tp_pmu_program()'s
 * -EINVAL.
 */
int pmu_dev_init_core(struct pmu_dev *d, int core);

/**
 * pmu_dev_aicore_stage() - a5: stage @core's counters for @reg_task_id
 * (spec/pmu.md §6.1; seed 000 §5.3).
 * @d:           the device state.
 * @core:        logical core id (the AICore's own).
 * @reg_task_id: the 32-bit token the AICore read from DATA_MAIN_BASE.
 *
 * Reads (and so clears) the counters and the total, stores them in
 * dual_issue_slots[reg_task_id & 1], then publishes the token with a
 * release store. On a2a3, for a bad core, or when the counters cannot be
 * read, does nothing.
 */
void pmu_dev_aicore_stage(struct pmu_dev *d, int core, uint32_t reg_task_id);

/**
 * pmu_dev_on_fin() - write the PMU record of one finished task
 * (spec/pmu.md §4.2; a5 slot check §6.1).
 * @d:           the device state.
 * @thread:      the AICPU scheduler thread (= ready queue) calling.
 * @core:        logical core the task ran on.
 * @task_id:     the logical 64-bit task id (CSV task_id).
 * @func_id:     kernel function id.
 * @core_type:   0 AIC, 1 AIV.
 * @reg_task_id: the register token of the dispatch (a5 slot key; a2a3
 *               ignores it).
 *
 * Counts the record in the core's total, then drops (by cause) or writes
 * it; on a5 a slot that does not carry @reg_task_id counts one mismatch
 * instead. Silent (nothing counted) when @core is out of range, was not
 * initialised this run, or (a2a3) has no PMU window or cannot be read;
 * also when the core's writer could not attach to @thread's ready queue
 * (the record is then only counted in the "records not counted" WARN of
 * pmu_reconcile()). A full buffer that cannot be published past the
 * backstop (spec/framework.md §4.6) has its records counted dropped and is
 * reused, with ERROR
 * `Thread %d: Core %d failed to enqueue PMU buffer (ready_queue full), data lost!`.
 */
void pmu_dev_on_fin(struct pmu_dev *d, int thread, int core, uint64_t task_id,
		    uint32_t func_id, int32_t core_type, uint32_t reg_task_id);

/**
 * pmu_dev_record() - write one record from counters already read: the
 * a2a3 record path after its register read, exposed for runtimes that
 * read the PMU themselves. Same guards and accounting as pmu_dev_on_fin;
 * also silent for a NULL @s.
 * @d, @thread, @core, @task_id, @func_id, @core_type: as pmu_dev_on_fin().
 * @s: the counters and the total cycles (s->n_slots values used, clamped
 *     to 0 .. TP_PMU_MAX_SLOTS; the rest written 0).
 */
void pmu_dev_record(struct pmu_dev *d, int thread, int core, uint64_t task_id,
		    uint32_t func_id, int32_t core_type, const struct tp_pmu_sample *s);

/**
 * pmu_dev_flush_thread() - publish the partial current buffer of every
 * core @thread wrote (spec/pmu.md §4.3).
 * @d:      the device state; NULL does nothing.
 * @thread: the scheduler thread (ready queue) calling.
 *
 * A buffer that cannot be published past
 * the backstop has its records counted dropped, with ERROR
 * `Thread %d: Core %d failed to flush PMU buffer (ready_queue full), %u records lost!`.
 */
void pmu_dev_flush_thread(struct pmu_dev *d, int thread);

/**
 * pmu_dev_finalize() - AICPU finalize of every core (spec/pmu.md §4.4,
 * seed 000 §5.1): pmu_dev_finalize_core() for each.
 * @d: the device state; NULL does nothing.
 */
void pmu_dev_finalize(struct pmu_dev *d);

/**
 * pmu_dev_finalize_core() - one core's finalize: producer_note_close
 * (stored when tp_pmu_finalize() succeeds), then the saved control
 * word(s) restored. Once per init: a core never initialised, already
 * finalised, or out of range is skipped.
 * @d:    the device state.
 * @core: logical core id.
 */
void pmu_dev_finalize_core(struct pmu_dev *d, int core);

#endif
