/* SPDX-License-Identifier: MIT */
/*
 * examples/synthetic/syn_callable.h — the `synthetic` callable: one small
 * graph that exercises every task kind of the runtime (spec/runtime-model.md
 * §7.5), each piece with a result the golden checks exactly:
 *
 *   dummy    SET a (AIC), SET b (AIV) → DUMMY (in a, b; inout join) →
 *            ADD2 out = a + b + join (a, b as NO_DEP: ordered only by the
 *            dummy)                                           tensor "dummy"
 *   pred     SET flag = 0 → ADDS pout = flag + 1000, predicated on
 *            flag != 0 (false: skipped, pout keeps its initial 7) →
 *            ADDS pres = pout + 3 = 10                        tensor "pred"
 *   spmd     BLOCK (AIV) with block_num SYN_SPMD_BLOCKS (128, more than the
 *            cores of any platform): block b writes [b, b·b, block_num]
 *            into its slice and increments a run counter      tensor "spmd"
 *   mix      one MIX task (AIC + AIV0 + AIV1 in one cluster), each part
 *            writes its core type check and a value; SUM adds them
 *                                                             tensor "mix"
 *   fanout   SET src = 12345 (AIC) → SYN_FANOUT (512) ADDS consumers
 *            out[i] = src + 7·i                               tensor "fanout"
 *   chain    SYN_CHAIN (1000) STEP tasks alternating AIC / AIV, each
 *            c = c·31 + i (uint32 wrap) with trace[i] = c     tensor "chain"
 *   async    SET src[4] = 500 + i (AIC) → ASYNC_COPY (AIV): asks the DMA
 *            engine to copy src to dst after SYN_ASYNC_DELAY_US, bumping
 *            cnt, and waits for cnt >= 1 (async wait: its FIN does not
 *            complete it) → SUM sum = Σ dst = 2006 (only right if SUM ran
 *            after the copy)                                  tensor "async"
 *   early    SLOW_SET (AIV) sleeps SYN_EARLY_DELAY_US, then writes
 *            val = 40 → ADDS out = val + 2 = 42. The callable asks for
 *            early dispatch (wants_early_dispatch): ADDS is staged gated
 *            on an idle core while SLOW_SET still sleeps and runs only
 *            after its doorbell (0 + 2 = 2 would show it ran too early)
 *                                                             tensor "early"
 *   alloc    alloc_tensors scratch[1] (an inline task on the orchestrator;
 *            the creator of scratch) → SET scratch = 30 (AIV) → ADDS
 *            out = scratch + SYN_ALLOC_ADD = 35               tensor "alloc"
 *
 * All tensors are int32, compared exactly (atol 0.5).
 */
#ifndef TASKPROF_EXAMPLES_SYNTHETIC_SYN_CALLABLE_H
#define TASKPROF_EXAMPLES_SYNTHETIC_SYN_CALLABLE_H

#include <stdint.h>

#include "taskprof/case.h"

#define SYN_SPMD_BLOCKS 128u
#define SYN_SPMD_SLICE 4u
#define SYN_FANOUT 512u
#define SYN_CHAIN 1000u
#define SYN_ASYNC_N 4u
#define SYN_ASYNC_DELAY_US 2000u
#define SYN_EARLY_DELAY_US 5000u
#define SYN_EARLY_VALUE 40
#define SYN_EARLY_ADD 2
#define SYN_ALLOC_VALUE 30
#define SYN_ALLOC_ADD 5

/* Signature tensors, in order. */
enum syn_arg {
	SYN_ARG_DUMMY = 0, /* [4]: a, b, join, out */
	SYN_ARG_PRED,      /* [3]: flag, pout, pres */
	SYN_ARG_SPMD,      /* [SYN_SPMD_BLOCKS · SYN_SPMD_SLICE] */
	SYN_ARG_MIX,       /* [7]: aic_ok, 101, aiv0_ok, 202, aiv1_ok, 303, sum */
	SYN_ARG_FANOUT,    /* [1 + SYN_FANOUT]: src, out[i] */
	SYN_ARG_CHAIN,     /* [1 + SYN_CHAIN]: c, trace[i] */
	SYN_ARG_ASYNC,     /* [2·SYN_ASYNC_N + 2]: src, dst, cnt, sum */
	SYN_ARG_EARLY,     /* [2]: val, out */
	SYN_ARG_ALLOC,     /* [1]: out */
	SYN_ARG_COUNT
};

/* Kernels (func ids). */
enum syn_func {
	SYN_FUNC_SET_C = 0, /* AIC: OUT x[n], scalar v: x[i] = v + i */
	SYN_FUNC_SET_V,     /* AIV: the same */
	SYN_FUNC_ADD2,      /* AIV: NO_DEP a, NO_DEP b, IN j, OUT y: y = a + b + j */
	SYN_FUNC_ADDS,      /* AIV: IN x, OUT y[n], scalar s: y[i] = x + s + i */
	SYN_FUNC_BLOCK,     /* AIV SPMD: INOUT x [blocks · slice] */
	SYN_FUNC_MIX_C,     /* AIC part of MIX: INOUT x[6] */
	SYN_FUNC_MIX_V0,    /* AIV0 part */
	SYN_FUNC_MIX_V1,    /* AIV1 part */
	SYN_FUNC_SUM,       /* AIV: IN x[n], OUT y[1]: y = Σ x */
	SYN_FUNC_STEP_C,    /* AIC: INOUT c, OUT t, scalar i: c = c·31 + i; t = c */
	SYN_FUNC_STEP_V,    /* AIV: the same */
	SYN_FUNC_ASYNC_COPY,/* AIV: IN src[n], OUT dst[n], INOUT cnt[1], scalar
			     * delay_us: DMA copy src → dst bumping cnt, async
			     * wait cnt >= 1 */
	SYN_FUNC_SLOW_SET,  /* AIV: OUT x[n], scalar v, scalar delay_us: sleep,
			     * then x[i] = v + i */
	SYN_FUNC_COUNT
};

/* Tasks of one run (alloc_tensors counts as one):
 * 4 + 3 + 1 + 2 + (1 + SYN_FANOUT) + SYN_CHAIN + 3 + 2 + 3. */
#define SYN_TASKS (4u + 3u + 1u + 2u + 1u + SYN_FANOUT + SYN_CHAIN + 3u + 2u + 3u)

/* The built-in callable "synthetic"; one case, "Default". */
extern const struct tp_callable syn_callable;

/* The kernels of syn_callable (indexed by enum syn_func). */
extern const struct tp_case_kernel syn_kernels[SYN_FUNC_COUNT];

/**
 * syn_orchestration() - submit the graph above.
 * @o:    the orchestrator.
 * @args: the SYN_ARG_COUNT tensors with device addresses.
 *
 * Exercises every task kind of spec/runtime-model.md §7.5.
 *
 * Return: 0; -EINVAL for a wrong signature (count, or a tensor not int32
 * of syn_tensor_len() elements; tp_last_error() says which); a submit's
 * error.
 */
struct tp_orch;
int syn_orchestration(struct tp_orch *o, const struct tp_case_args *args);

/**
 * syn_tensor_len() - elements (int32) of signature tensor @i.
 * @i: enum syn_arg.
 *
 * Return: elements; 0 for an index out of range.
 */
uint32_t syn_tensor_len(enum syn_arg i);

#endif /* TASKPROF_EXAMPLES_SYNTHETIC_SYN_CALLABLE_H */
