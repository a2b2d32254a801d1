/* SPDX-License-Identifier: MIT */
/*
 * runtime/fanin.h — the producers of one submit (compute_task_fanin and
 * register_task_outputs, spec/runtime-model.md §2.3 table, §2.4 steps 4-5).
 *
 * For each tensor argument, by tag:
 *
 *   tag              creator edge (A)  tensormap lookup (B)     insert (step 5)
 *   INPUT            yes               yes, unless manual_dep   no
 *   INOUT            yes               yes, unless manual_dep   yes
 *   OUTPUT_EXISTING  yes               no                       yes
 *   NO_DEP           yes               no                       no
 *   OUTPUT           n/a (new buffer)  no                       no
 *
 * Explicit deps (set_dependencies) are added first, skipped when already
 * retired. The creator edge is the tensor's owner_task_id if it names a
 * live task. Every lookup hit that is not NO_OVERLAP is an edge; an INOUT
 * lookup hit that is COVERED also removes that entry (the new writer
 * supersedes it). WAR is not tracked. Producers are deduplicated; each
 * keeps the source and overlap of its first edge (for dep_gen).
 *
 * A MANUAL scope skips all of this except explicit deps: the caller then
 * calls only tp_fanin_add_explicit().
 *
 * Orchestrator thread only.
 */
#ifndef TASKPROF_RUNTIME_FANIN_H
#define TASKPROF_RUNTIME_FANIN_H

#include <stdint.h>

#include "runtime/overlap.h"
#include "runtime/tensormap.h"

/* Tensor argument tags (PTO2 TensorArgType). */
enum tp_arg_tag {
	TP_ARG_INPUT = 0,
	TP_ARG_OUTPUT,          /* create-info: the runtime allocates it */
	TP_ARG_INOUT,
	TP_ARG_OUTPUT_EXISTING,
	TP_ARG_NO_DEP,
};

/* Where an edge came from (dep_gen's edge source). */
enum tp_dep_source {
	TP_DEP_EXPLICIT = 0,
	TP_DEP_CREATOR,
	TP_DEP_TENSORMAP,
};

/**
 * struct tp_fanin_dep - one distinct producer of a submit (spec/runtime-
 * model.md §2.3): its id and the source / overlap of the first edge found
 * to it.
 */
struct tp_fanin_dep {
	tp_task_id producer;
	uint8_t source;   /* enum tp_dep_source of the first edge */
	uint8_t overlap;  /* enum tp_overlap of that edge (TENSORMAP only) */
};

/**
 * struct tp_fanin - a growable, reusable list of one submit's @n
 * producers (@cap allocated).
 */
struct tp_fanin {
	struct tp_fanin_dep *deps;
	uint32_t n;
	uint32_t cap;
};

/** tp_fanin_reset() - empty @f for the next submit (keeps its memory). */
static inline void tp_fanin_reset(struct tp_fanin *f)
{
	f->n = 0;
}

/** tp_fanin_fini() - free @f's memory. */
void tp_fanin_fini(struct tp_fanin *f);

/**
 * tp_fanin_add() - add producer @id unless already present.
 * @f:  the submit's producers.
 * @id: the producer's task id.
 * @src: how it was found (enum tp_dep_source).
 * @ov:  its overlap with the argument (enum tp_overlap).
 *
 * Return: 1 added, 0 duplicate, -ENOMEM.
 */
int tp_fanin_add(struct tp_fanin *f, tp_task_id id, enum tp_dep_source src,
		 enum tp_overlap ov);

/**
 * tp_fanin_add_explicit() - an explicit dependency (set_dependencies).
 * @f:  the submit's producers.
 * @tm: the tensor map, for its last sync of @id's ring.
 * @id: the producer's task id.
 *
 * Return: 1 added, 0 duplicate or already retired (per @tm's last sync) or
 * invalid id, -ENOMEM.
 */
int tp_fanin_add_explicit(struct tp_fanin *f, const struct tp_tensormap *tm, tp_task_id id);

/**
 * tp_fanin_collect_arg() - steps A and B for one tensor argument.
 * @f:   the submit's producers.
 * @tm:  the tensor map (an INOUT COVERED hit removes its entry).
 * @t:   the argument's tensor.
 * @tag: its tag.
 *
 * Return: producers added (after dedup), or -ENOMEM.
 */
int tp_fanin_collect_arg(struct tp_fanin *f, struct tp_tensormap *tm,
			 const struct tp_tensor *t, enum tp_arg_tag tag);

/**
 * tp_fanin_register_arg() - step 5 for one tensor argument: INOUT and
 * OUTPUT_EXISTING insert @t with producer @task; other tags do nothing
 * (OUTPUT buffers are found through owner_task_id, Appendix A item 1).
 * @tm:   the tensor map.
 * @t:    the argument's tensor.
 * @tag:  its tag.
 * @task: the submitting task.
 *
 * Return: 0, or tp_tensormap_insert()'s error.
 */
int tp_fanin_register_arg(struct tp_tensormap *tm, const struct tp_tensor *t,
			  enum tp_arg_tag tag, tp_task_id task);

#endif /* TASKPROF_RUNTIME_FANIN_H */
