/* SPDX-License-Identifier: MIT */
/*
 * examples/paged_attention/pa_seq.h — the paged-attention orchestration of
 * spec/runtime-model.md §5.3 run sequentially, without the runtime.
 *
 * A reference for tests and benches: it walks the same task decomposition
 * the real orchestration submits (per sequence b and head tile q: one
 * alloc_tensors task, then QK, SF, PV, UP per block), in dependency order
 * on the calling thread, and runs each kernel exactly as an AICore would:
 * on a bound core context of the kernel's type (an AIC for QK / PV, an
 * AIV for SF / UP), between tp_core_ctx_task_begin() and
 * tp_core_ctx_task_end(), with the argument layout of pa_kernels.h.
 *
 * Intermediate tensors come from malloc and are filled with NaN whenever
 * the real runtime would hand out fresh memory (alloc_tensors, and each
 * task's OUTPUT), so a kernel that reads what it should not shows up in
 * the golden check.
 */
#ifndef TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_SEQ_H
#define TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_SEQ_H

#include <stdint.h>

#include "examples/paged_attention/pa_inputs.h"
#include "examples/paged_attention/pa_kernels.h"

/**
 * struct pa_seq_stats - what pa_seq_run() did.
 * @tasks:        tasks run, alloc_tensors tasks included.
 * @alloc_tasks:  alloc_tensors tasks (one per (b, q) scope).
 * @by_func:      kernel tasks per func_id.
 * @ns:           wall time of the run, ns (CLOCK_MONOTONIC_RAW).
 */
struct pa_seq_stats {
	uint64_t tasks;
	uint64_t alloc_tasks;
	uint64_t by_func[PA_FUNC_COUNT];
	uint64_t ns;
};

/**
 * pa_seq_run() - run the case of @in, writing in->out.
 * @in: inputs from pa_inputs_create(); in->out receives the result.
 * @st: receives the counts (may be NULL).
 *
 * Binds its own two core contexts (AIC core 0, AIV core 1) to the calling
 * thread for the duration and restores the previous binding.
 *
 * Return: 0; -ENOMEM; -EIO when a kernel failed (tp_last_error() names the
 * task: func name, b, q, bn, and the core's error message); -EINVAL when
 * a block_table entry is outside [0, T).
 */
int pa_seq_run(struct pa_inputs *in, struct pa_seq_stats *st);

#endif /* TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_SEQ_H */
