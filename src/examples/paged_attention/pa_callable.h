/* SPDX-License-Identifier: MIT */
/*
 * examples/paged_attention/pa_callable.h — paged attention as a callable
 * of taskprof/case.h: the orchestration of spec/runtime-model.md §5.3
 * (pa_orchestration.c), the four kernels of pa_kernels.h and the cases of
 * pa_cases.c with their generated inputs (pa_inputs.h) and golden
 * (pa_golden.h).
 */
#ifndef TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_CALLABLE_H
#define TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_CALLABLE_H

#include "taskprof/case.h"

/* The built-in callable "paged_attention"; default case CaseSmall1. */
extern const struct tp_callable pa_callable;

/**
 * pa_orchestration() - the §5.3 task decomposition.
 * @o:    the orchestrator.
 * @args: the signature [query, key_cache, value_cache, block_table,
 *        context_lens, out] (enum pa_arg) with device addresses, then the
 *        scale scalar (float bits). Sizes come from the tensor shapes:
 *        query [B, H, D], key_cache [T, S, 1, D], block_table [B, max_blocks].
 *
 * Reads block_table and context_lens from device memory: it runs on the
 * orchestrator thread (AICPU), as get_tensor_data does.
 *
 * Return: 0; -EINVAL for arguments of the wrong shape or a block_table
 * entry outside [0, T); a submit's error.
 */
int pa_orchestration(struct tp_orch *o, const struct tp_case_args *args);

/**
 * pa_case_args() - describe generated inputs as the signature @args
 * (spec/runtime-model.md §5.2: [IN x 5, OUT] then the scale scalar).
 * @in:   inputs from pa_inputs_create(); kept in @args->priv.
 * @args: receives the six tensors (host addresses) and the scale bits;
 *        zeroed first.
 *
 * Return: 0, or pa_inputs_tensor()'s -EINVAL (tp_last_error() set).
 */
struct pa_inputs;
int pa_case_args(struct pa_inputs *in, struct tp_case_args *args);

#endif /* TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_CALLABLE_H */
