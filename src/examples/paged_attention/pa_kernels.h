/* SPDX-License-Identifier: MIT */
/*
 * examples/paged_attention/pa_kernels.h — the four incore kernels of paged
 * attention (spec/runtime-model.md §5.3, §5.4), written with the tile API
 * only (include/taskprof/kernel.h).
 *
 *     func_id  name  core  computes
 *     0        QK    AIC   sij = qi · kjᵀ                  (bf16 in, fp32 acc)
 *     1        SF    AIV   mask, scale, rowmax, exp, bf16, rowsum
 *     2        PV    AIC   oi_new = pij · vj               (bf16 in, fp32 acc)
 *     3        UP    AIV   online-softmax update; out = oi / li on the last
 *
 * Calling convention (the runtime's, spec §7.1 item 9): `void fn(int64_t
 * *args)`, on an AICore thread with a bound core context of the kernel's
 * core type (tp_core_ctx_bind(), tp_core_ctx_task_begin() before,
 * tp_core_ctx_task_end() after: that is where a failure shows up — the
 * kernels return nothing, an op that fails sets the core's sticky error and
 * every later op of the task is a no-op).
 *
 * args[] holds the tensors in the order the orchestration adds them, then
 * the scalars (§5.3):
 *
 *   - a tensor argument is a pointer to a `struct tp_tile` GM tile,
 *     `args[i] = (int64_t)(intptr_t)&tile` (pa_arg_tile()): the 2-D
 *     row-major view of the tensor (or of the tensor view the orchestration
 *     passes) made with tp_tile_init() / tp_tile_view() over the tensor's
 *     device memory. 1-D tensors of n elements are [n, 1] tiles. The tile
 *     must stay valid until the kernel returns; the kernel only reads it.
 *   - a scalar is the uint64 bit pattern the orchestration added: an
 *     integer as is, a float as its IEEE binary32 bits in the low 32 bits
 *     (pa_arg_f32(); the high 32 bits are ignored).
 *
 * Shapes with M = q_tile (rows of the head tile), D = head_dim, S =
 * block_size, valid = min(S, ctx_b - bn·S) of block bn:
 *
 *   QK  args[0] qi      IN   bf16 [M, D]      query.view([q_tile,D],[row0,0])
 *       args[1] kj      IN   bf16 [S, D]      key_cache.view([S,D],[blk·S,0])
 *       args[2] sij     OUT  fp32 [M, S]
 *
 *   SF  args[0] sij_v   IN   fp32 [M, valid]  sij.view([q_tile,valid],[0,0])
 *       args[1] pij     OUT  bf16 [M, S]      (S is taken from its cols)
 *       args[2] mij     OUT  fp32 [M, 1]
 *       args[3] lij     OUT  fp32 [M, 1]
 *       args[4] scale   scalar float bits
 *
 *   PV  args[0] pij     IN   bf16 [M, S]
 *       args[1] vj      IN   bf16 [S, D]      value_cache.view([S,D],[blk·S,0])
 *       args[2] oi_new  OUT  fp32 [M, D]
 *
 *   UP  args[0] mij     IN    fp32 [M, 1]
 *       args[1] lij     IN    fp32 [M, 1]
 *       args[2] oi_new  IN    fp32 [M, D]
 *       args[3] mi      INOUT fp32 [M, 1]     alloc_tensors of the (b, q) scope
 *       args[4] li      INOUT fp32 [M, 1]
 *       args[5] oi      INOUT fp32 [M, D]
 *       args[6] out_v   INOUT fp32 [M, D]     out.view([q_tile,D],[row0,0])
 *       args[7] is_first scalar 0/1           bn == 0
 *       args[8] is_last  scalar 0/1           bn == bn_b - 1
 *
 * UP reads mi, li, oi only when is_first is 0 (the first block initialises
 * them, so alloc_tensors need not clear them), and writes out_v only when
 * is_last is 1.
 *
 * Local memory of a Case1 block (M 16, D 128, S 128): QK and PV use 36 KiB
 * of L1, 4 + 32 KiB of L0A / L0B and 8 KiB of L0C; SF and UP under 40 KiB
 * of UB. Any shape whose tiles fit the TP_*_BYTES capacities runs.
 */
#ifndef TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_KERNELS_H
#define TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_KERNELS_H

#include <stdint.h>
#include <string.h>

#include "platform/topology.h"
#include "taskprof/kernel.h"

/* func_ids (§5.3; the reference's CALLABLE "incores"). */
enum pa_func {
	PA_FUNC_QK = 0,
	PA_FUNC_SF = 1,
	PA_FUNC_PV = 2,
	PA_FUNC_UP = 3,
	PA_FUNC_COUNT
};

/* Argument indices, one enum per kernel (see the table above). */
enum { PA_QK_QI, PA_QK_KJ, PA_QK_SIJ, PA_QK_NARGS };
enum { PA_SF_SIJ, PA_SF_PIJ, PA_SF_MIJ, PA_SF_LIJ, PA_SF_SCALE, PA_SF_NARGS };
enum { PA_PV_PIJ, PA_PV_VJ, PA_PV_OI_NEW, PA_PV_NARGS };
enum {
	PA_UP_MIJ,
	PA_UP_LIJ,
	PA_UP_OI_NEW,
	PA_UP_MI,
	PA_UP_LI,
	PA_UP_OI,
	PA_UP_OUT,
	PA_UP_IS_FIRST,
	PA_UP_IS_LAST,
	PA_UP_NARGS
};

/**
 * pa_kernel_qk() - QK: sij = qi · kjᵀ (spec/runtime-model.md §5.4); SF,
 * PV and UP (pa_kernel_sf(), pa_kernel_pv(), pa_kernel_up()) as the table
 * above says.
 * @args: the tensors (pa_arg_tile()) then the scalars, in the order of
 *        the table above (PA_QK_* / PA_SF_* / PA_PV_* / PA_UP_*).
 *
 * They return nothing: a failure sets the core's sticky error, reported
 * at tp_core_ctx_task_end().
 */
void pa_kernel_qk(int64_t *args);
void pa_kernel_sf(int64_t *args);
void pa_kernel_pv(int64_t *args);
void pa_kernel_up(int64_t *args);

/**
 * struct pa_kernel_info - one incore of the callable.
 * @func_id:    enum pa_func, the id passed at submit.
 * @name:       "QK", "SF", "PV", "UP" (name_map, pmu.csv summaries).
 * @core_type:  TP_CORE_AIC or TP_CORE_AIV.
 * @fn:         the kernel.
 * @n_tensors:  tensor arguments, first in args[].
 * @n_scalars:  scalar arguments, after the tensors.
 */
struct pa_kernel_info {
	int func_id;
	const char *name;
	enum tp_core_type core_type;
	void (*fn)(int64_t *args);
	unsigned n_tensors;
	unsigned n_scalars;
};

/* Indexed by func_id. */
extern const struct pa_kernel_info pa_kernels[PA_FUNC_COUNT];

/**
 * pa_arg_tile() - a tensor argument: the address of its GM tile.
 * @t: the tile; must outlive the kernel call.
 *
 * Return: the tile's address as an args[] word.
 */
static inline int64_t pa_arg_tile(const struct tp_tile *t)
{
	return (int64_t)(intptr_t)t;
}

/**
 * pa_arg_f32() - a float scalar argument.
 * @f: the value.
 *
 * Return: its binary32 bits in the low 32 bits (high 32 bits 0).
 */
static inline int64_t pa_arg_f32(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return (int64_t)u;
}

#endif /* TASKPROF_EXAMPLES_PAGED_ATTENTION_PA_KERNELS_H */
