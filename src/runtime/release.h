/* SPDX-License-Identifier: MIT */
/*
 * runtime/release.h — a scheduler thread's deferred-release array
 * (spec/runtime-model.md §2.9 step 3 and "Deferred release", §2.11 step 5).
 *
 * on_task_complete appends the finished slot here instead of releasing its
 * producers at once, to keep that work off the completion critical path;
 * the array is flushed on idle loop iterations, when full (cap 256), and
 * at exit. Thread-local: one per scheduler thread, no synchronisation.
 */
#ifndef TASKPROF_RUNTIME_RELEASE_H
#define TASKPROF_RUNTIME_RELEASE_H

#include <stdint.h>

#include "runtime/slot.h"

/* PTO2_DEFERRED_RELEASE_CAP */
#define TP_DEFERRED_RELEASE_CAP 256

/**
 * struct tp_release_list - one scheduler thread's deferred-release array:
 * @n COMPLETED slots waiting for tp_release_flush().
 */
struct tp_release_list {
	uint32_t n;
	struct tp_slot *slots[TP_DEFERRED_RELEASE_CAP];
};

/**
 * tp_release_defer() - queue @slot (a COMPLETED task) for release; when the
 * array is full it is flushed first (tp_release_flush()).
 * @list:        the scheduler thread's deferred-release array.
 * @slot:        the completed task's slot.
 * @on_consumed: as tp_slot_release(), used by that flush.
 * @ud:          passed to @on_consumed.
 *
 * Return: slots released by a flush this call forced (0 if none).
 */
uint32_t tp_release_defer(struct tp_release_list *list, struct tp_slot *slot,
			  tp_slot_fn on_consumed, void *ud);

/**
 * tp_release_flush() - tp_slot_release() every queued slot, oldest first,
 * and empty the array.
 * @list:        the deferred-release array.
 * @on_consumed: called for each slot made CONSUMED (advance its ring).
 * @ud:          passed to @on_consumed.
 *
 * Return: slots released (the release bar's tasks_processed).
 */
uint32_t tp_release_flush(struct tp_release_list *list, tp_slot_fn on_consumed, void *ud);

#endif /* TASKPROF_RUNTIME_RELEASE_H */
