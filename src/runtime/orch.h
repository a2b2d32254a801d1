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

/**
 * struct tp_task_args - a submit's arguments (L0TaskArgs, spec/runtime-
 * model.md §2.1): @n_tensors tensors with their tags (enum tp_arg_tag),
 * then @n_scalars 64-bit scalars; @err is the first error an add or set
 * call recorded (the submit then fails with it). Fill it only through
 * tp_args_init() and the tp_args_* calls.
 */
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

/**
 * tp_args_init() - empty arguments: no tensors, scalars, dependencies or
 * predicate, block_num 1, err 0.
 * @a: the arguments (previous contents ignored).
 */
void tp_args_init(struct tp_task_args *a);

/**
 * tp_args_add_input() - add tensor @t (copied) tagged INPUT (spec/runtime-
 * model.md §2.3: looked up in the tensor map, never inserted);
 * tp_args_add_inout() (INOUT: looked up and inserted),
 * tp_args_add_output_existing() (OUTPUT_EXISTING: inserted, writes an
 * existing buffer) and tp_args_add_no_dep() (NO_DEP: passed to the kernel,
 * no dependency) likewise.
 * @a: the arguments.
 * @t: the tensor view; 1..TP_MAX_TENSOR_DIMS dims.
 *
 * Return: the argument's index, or -1 with a->err set (first error only,
 * with tp_last_error()): -E2BIG beyond TP_MAX_TENSOR_ARGS, -EINVAL for a
 * NULL @t or a bad ndims.
 */
int tp_args_add_input(struct tp_task_args *a, const struct tp_tensor *t);
int tp_args_add_inout(struct tp_task_args *a, const struct tp_tensor *t);
int tp_args_add_output_existing(struct tp_task_args *a, const struct tp_tensor *t);
int tp_args_add_no_dep(struct tp_task_args *a, const struct tp_tensor *t);

/**
 * tp_args_add_output() - add an OUTPUT (create-info): a new contiguous
 * tensor in the task's packed region, materialised by the submit (the
 * argument then holds its address, owner_task_id = the task).
 * @a:      the arguments.
 * @dtype:  element type.
 * @ndims:  1..TP_MAX_TENSOR_DIMS.
 * @shapes: @ndims sizes, in elements, outermost first.
 *
 * Return: the argument's index, or -1 with a->err set: -EINVAL for a shape
 * tp_tensor_make_contiguous() refuses, -E2BIG beyond TP_MAX_TENSOR_ARGS.
 */
int tp_args_add_output(struct tp_task_args *a, enum tp_dtype dtype, uint32_t ndims,
		       const uint32_t *shapes);

/**
 * tp_args_add_scalar() - add a 64-bit scalar (the kernel reads it after
 * the tensors in args[]).
 * @a: the arguments.
 * @v: its bits (a float: its binary32 bits in the low 32).
 *
 * Return: the scalar's index, or -1 with a->err = -E2BIG beyond
 * TP_MAX_SCALAR_ARGS.
 */
int tp_args_add_scalar(struct tp_task_args *a, uint64_t v);

/**
 * tp_args_set_block_num() - launch_spec.block_num: the task runs @n SPMD
 * blocks. Kernels read their block with tp_kernel_block_idx()
 * (runtime/engine.h).
 * @a: the arguments.
 * @n: blocks, 1..TP_MAX_BLOCK_NUM.
 *
 * Return: 0, or -EINVAL (also sets a->err) out of range.
 */
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
/**
 * tp_args_set_predicate_addr() - tp_args_set_predicate() on a raw operand.
 * @a:      the arguments.
 * @addr:   the operand (host address of device memory), non-NULL.
 * @size:   its bytes: 1, 2, 4 or 8; read sign-extended.
 * @op:     the comparison.
 * @target: the value compared with.
 *
 * Return: 0 or -EINVAL (also sets a->err): NULL @addr, bad @size or @op.
 */
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
 * Return: 0; -EINVAL (a func id below -1 or not below the kernel count,
 * a kernel slot whose core type differs
 * from the kernel's, a tensor a kernel cannot view as a tile, an args
 * error); -ENOSPC (outputs larger than the ring heap); -EDEADLK (ring
 * wedged); -ECANCELED when the run has already failed.
 */
int tp_submit(struct tp_orch *o, const int32_t kernel_id[3], struct tp_task_args *args,
	      tp_task_id *out_id);
/**
 * tp_submit_aic() - rt_submit_aic_task: tp_submit() with @func_id in the
 * AIC slot only; tp_submit_aiv() (rt_submit_aiv_task) with it in the AIV0
 * slot only. @func_id names a kernel: -1 (TP_KERNEL_NONE) is -EINVAL here
 * (tp_submit_dummy() submits a task without one). spec/runtime-model.md
 * §2.1, §2.4.
 * @o, @args, @out_id: as tp_submit().
 * @func_id: the kernel's func_id, >= 0.
 *
 * Return: as tp_submit().
 */
int tp_submit_aic(struct tp_orch *o, int32_t func_id, struct tp_task_args *args,
		  tp_task_id *out_id);
int tp_submit_aiv(struct tp_orch *o, int32_t func_id, struct tp_task_args *args,
		  tp_task_id *out_id);

/**
 * tp_submit_dummy() - rt_submit_dummy_task (spec/runtime-model.md §2.10):
 * a dependency-only node, never dispatched; tp_submit() with no kernel.
 * @o, @args, @out_id: as tp_submit().
 *
 * Return: as tp_submit().
 */
int tp_submit_dummy(struct tp_orch *o, struct tp_task_args *args, tp_task_id *out_id);

/**
 * struct tp_tensor_create - one tensor tp_alloc_tensors() creates:
 * contiguous, @ndims sizes in elements.
 */
struct tp_tensor_create {
	enum tp_dtype dtype;
	uint32_t ndims;
	uint32_t shapes[TP_MAX_TENSOR_DIMS];
};

/**
 * tp_alloc_tensors() - allocate @n intermediate tensors as one kernel-less
 * task completed inline on the orchestrator thread (spec §2.4).
 * @o:      the orchestrator.
 * @n:      tensors, 1..TP_MAX_TENSOR_ARGS.
 * @ci:     @n shapes.
 * @out:    receives @n contiguous tensors, owner_task_id = the task.
 * @out_id: receives the task id (may be NULL).
 *
 * Return: 0; -EINVAL for @n out of range or a bad shape; otherwise as
 * tp_submit().
 */
int tp_alloc_tensors(struct tp_orch *o, uint32_t n, const struct tp_tensor_create *ci,
		     struct tp_tensor *out, tp_task_id *out_id);

/**
 * tp_scope_begin() - PTO2_SCOPE begin (spec/runtime-model.md §2.1, §2.6):
 * tasks submitted inside go one ring deeper.
 * @o: the orchestrator.
 *
 * Return: 0; -EINVAL beyond TP_ORCH_MAX_SCOPES nested scopes (with
 * tp_last_error()).
 */
int tp_scope_begin(struct tp_orch *o);

/**
 * tp_scope_end() - PTO2_SCOPE end: drop the scope's reference on each task
 * submitted in it (a task whose consumers are done is reclaimed).
 * @o: the orchestrator.
 *
 * Return: 0; -EINVAL without an open scope (with tp_last_error()).
 */
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

/**
 * tp_tensor_data() - get_tensor_data-lite: the host pointer of element 0
 * of @t's view: buffer_addr + start_offset × element size (device memory
 * is host-addressable on the simulated platforms). Reads only external
 * tensors safely (no wait for a producer yet).
 * @t: the tensor.
 *
 * Return: the address of element 0 of the view (start_offset is in
 * elements); no check.
 */
static inline void *tp_tensor_data(const struct tp_tensor *t)
{
	return (void *)(uintptr_t)(t->buffer_addr +
				   t->start_offset * tp_dtype_size((enum tp_dtype)t->dtype));
}

#endif /* TASKPROF_RUNTIME_ORCH_H */
