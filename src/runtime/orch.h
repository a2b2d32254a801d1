/* SPDX-License-Identifier: MIT */
/*
 * runtime/orch.h — the orchestrator API of the tensormap_and_ringbuffer
 * runtime (spec/runtime-model.md §2.1, §2.4, §7.1 item 7). Internal for
 * now; include/taskprof/orch.h will wrap it.
 *
 * Called only from the orchestration function on the orchestrator thread
 * (tp_engine_run(), runtime/engine.h). A submit:
 *
 *     struct tp_task_args a;
 *     tp_args_init(&a);
 *     tp_args_add_input(&a, &q);
 *     tp_args_add_output(&a, TP_FP32, 2, shape);   // runtime allocates
 *     tp_args_add_inout(&a, &acc);
 *     tp_args_add_scalar(&a, 42);
 *     tp_submit_aic(o, FUNC_QK, &a, &id);
 *     // a.tensors[1] is now the materialised output (owner = id)
 *
 * Dependencies: creator edges through owner_task_id and tensor-map edges
 * (runtime/fanin.h); rings by scope depth (runtime/ring.h).
 */
#ifndef TASKPROF_RUNTIME_ORCH_H
#define TASKPROF_RUNTIME_ORCH_H

#include <stdint.h>

#include "runtime/fanin.h"
#include "runtime/task_id.h"
#include "runtime/tensor.h"
#include "taskprof/kernel.h"

/* MAX_TENSOR_ARGS / MAX_SCALAR_ARGS (Appendix A item 4). */
#define TP_MAX_TENSOR_ARGS 32
#define TP_MAX_SCALAR_ARGS 16

/* set_dependencies: explicit producers of one submit, at most. */
#define TP_MAX_EXPLICIT_DEPS 16

/* Kernel id of an inactive subtask slot. */
#define TP_KERNEL_NONE (-1)

struct tp_orch;

/* A submit's arguments (L0TaskArgs). */
struct tp_task_args {
	uint32_t n_tensors;
	uint32_t n_scalars;
	int err;                                /* sticky: first add error */
	uint8_t tags[TP_MAX_TENSOR_ARGS];       /* enum tp_arg_tag */
	struct tp_tensor tensors[TP_MAX_TENSOR_ARGS];
	uint64_t scalars[TP_MAX_SCALAR_ARGS];
	/* Added after the first version; set by tp_args_init(). */
	uint32_t block_num;                     /* SPMD blocks; 0 counts as 1 */
	uint8_t has_pred;                       /* predicate below is set */
	uint8_t pred_op;                        /* enum tp_pred_op */
	uint8_t pred_size;                      /* 1, 2, 4 or 8 bytes */
	uint64_t pred_addr;                     /* operand (host address) */
	int64_t pred_target;
	/* Added after the second version; set by tp_args_init(). */
	uint32_t n_deps;                        /* explicit dependencies */
	tp_task_id deps[TP_MAX_EXPLICIT_DEPS];
};

/**
 * tp_args_set_dependencies() - set_dependencies (spec §2.1, §2.3): the task
 * also waits for each of the @n tasks @ids (explicit edges, added before
 * the tensor edges; a producer already retired is skipped). Replaces any
 * earlier list. Return: 0, or -E2BIG beyond TP_MAX_EXPLICIT_DEPS / -EINVAL
 * for an invalid id (both also set a->err).
 */
int tp_args_set_dependencies(struct tp_task_args *a, const tp_task_id *ids, uint32_t n);

/* DispatchPredicate comparison: operand OP target. */
enum tp_pred_op {
	TP_PRED_EQ = 0,
	TP_PRED_NE,
	TP_PRED_GT,
	TP_PRED_LT,
	TP_PRED_GE,
	TP_PRED_LE,
};

/* Max SPMD blocks of one task. */
#define TP_MAX_BLOCK_NUM 65536u

void tp_args_init(struct tp_task_args *a);
/* Tensor arguments; an overflow or bad shape sets a->err (-E2BIG, -EINVAL)
 * and the submit fails with it. Return: the argument's index or -1. */
int tp_args_add_input(struct tp_task_args *a, const struct tp_tensor *t);
int tp_args_add_inout(struct tp_task_args *a, const struct tp_tensor *t);
int tp_args_add_output_existing(struct tp_task_args *a, const struct tp_tensor *t);
int tp_args_add_no_dep(struct tp_task_args *a, const struct tp_tensor *t);
/* OUTPUT (create-info): a new contiguous tensor in the task's packed
 * region; materialised by the submit. */
int tp_args_add_output(struct tp_task_args *a, enum tp_dtype dtype, uint32_t ndims,
		       const uint32_t *shapes);
int tp_args_add_scalar(struct tp_task_args *a, uint64_t v);

/* launch_spec.block_num: the task runs @n SPMD blocks (1..TP_MAX_BLOCK_NUM,
 * else a->err = -EINVAL). Kernels read their block with
 * tp_kernel_block_idx() (runtime/engine.h). Return: 0 or -EINVAL. */
int tp_args_set_block_num(struct tp_task_args *a, uint32_t n);

/**
 * tp_args_set_predicate() - set_predicate: dispatch the task only if
 * element @elem (in elements from the view's start_offset, row-major
 * contiguous) of @t, sign-extended, compares @op to @target. Evaluated once
 * at the ready point (spec §2.5): the operand's producer must be a
 * dependency of the task (e.g. @t also added as an input); the predicate
 * adds no edge. False → the task completes without running.
 * Return: 0 or -EINVAL (also sets a->err): bad op, dtype size not 1/2/4/8.
 */
int tp_args_set_predicate(struct tp_task_args *a, const struct tp_tensor *t, uint64_t elem,
			  enum tp_pred_op op, int64_t target);
/* The same on a raw operand of @size bytes (1, 2, 4, 8) at @addr. */
int tp_args_set_predicate_addr(struct tp_task_args *a, const void *addr, uint32_t size,
			       enum tp_pred_op op, int64_t target);

/**
 * tp_submit() - submit a task (rt_submit_task, spec §2.4).
 * @o:         the orchestrator.
 * @kernel_id: func ids per subtask slot AIC, AIV0, AIV1 (TP_KERNEL_NONE =
 *             inactive). One slot: AIC or AIV shape (aiv1-only is
 *             normalised to aiv0); two or more: MIX (one cluster); none:
 *             DUMMY.
 * @args:      arguments; OUTPUT entries are replaced by the materialised
 *             tensors (owner_task_id = the new task).
 * @out_id:    receives the task id (may be NULL).
 *
 * May block while the ring is full.
 *
 * Return: 0; -EINVAL (bad func id, a kernel slot whose core type differs
 * from the kernel's, a tensor a kernel cannot view as a tile, an args
 * error); -ENOSPC (outputs larger than the ring heap); -EDEADLK (ring
 * wedged); -ECANCELED when the run has already failed.
 */
int tp_submit(struct tp_orch *o, const int32_t kernel_id[3], struct tp_task_args *args,
	      tp_task_id *out_id);
/* rt_submit_aic_task / rt_submit_aiv_task. */
int tp_submit_aic(struct tp_orch *o, int32_t func_id, struct tp_task_args *args,
		  tp_task_id *out_id);
int tp_submit_aiv(struct tp_orch *o, int32_t func_id, struct tp_task_args *args,
		  tp_task_id *out_id);
/* rt_submit_dummy_task: a dependency-only node, never dispatched. */
int tp_submit_dummy(struct tp_orch *o, struct tp_task_args *args, tp_task_id *out_id);

/* One tensor alloc_tensors creates. */
struct tp_tensor_create {
	enum tp_dtype dtype;
	uint32_t ndims;
	uint32_t shapes[TP_MAX_TENSOR_DIMS];
};

/**
 * tp_alloc_tensors() - allocate @n intermediate tensors as one kernel-less
 * task completed inline on the orchestrator thread (spec §2.4).
 * @out: receives @n contiguous tensors, owner_task_id = the task.
 * Return: 0 or as tp_submit().
 */
int tp_alloc_tensors(struct tp_orch *o, uint32_t n, const struct tp_tensor_create *ci,
		     struct tp_tensor *out, tp_task_id *out_id);

/* PTO2_SCOPE: tasks submitted inside go one ring deeper; scope end drops
 * the scope's reference on each of them. Return: 0, -EINVAL (end without
 * begin / too deep), -ENOMEM. */
int tp_scope_begin(struct tp_orch *o);
int tp_scope_end(struct tp_orch *o);

/**
 * tp_scope_begin_manual() - a PTO2 scope in MANUAL mode (spec §2.1): a
 * task submitted directly inside it does no tensor-map lookup or insert
 * and gets no creator edge; only its explicit dependencies
 * (tp_args_set_dependencies) order it. Its OUTPUT tensors still name it
 * as their creator for later consumers. A scope opened inside it is
 * automatic again unless opened with this call. Close it with
 * tp_scope_end(). Return: as tp_scope_begin().
 */
int tp_scope_begin_manual(struct tp_orch *o);

/* get_tensor_data-lite: the host pointer of element 0 of @t (device memory
 * is host-addressable on the simulated a2a3 platform). Reads only external
 * tensors safely (no wait for a producer yet). */
static inline void *tp_tensor_data(const struct tp_tensor *t)
{
	return (void *)(uintptr_t)(t->buffer_addr +
				   t->start_offset * tp_dtype_size((enum tp_dtype)t->dtype));
}

#endif /* TASKPROF_RUNTIME_ORCH_H */
