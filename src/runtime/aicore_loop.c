/* SPDX-License-Identifier: MIT */
/*
 * runtime/aicore_loop.c — the AICore worker loop (aicore_execute,
 * spec/runtime-model.md §2.8) on a platform AICore thread: handshake, then
 * per token ACK, run the kernel on the bound tile context, FIN; exit on
 * AICORE_EXIT_SIGNAL. Waiting parks on the core's dispatch doorbell.
 * Dual issue: the scheduler may write the next token (payload token & 1)
 * once it saw this token's ACK; the core picks it up after the FIN.
 * Early dispatch: a gated payload is ACKed, then the core parks until its
 * doorbell DATA_MAIN_BASE_HI equals the token (spec §2.8 step 3).
 */
#include <errno.h>

#include "platform/regs.h"
#include "runtime/engine_internal.h"

/* local_context of the kernel running on this AICore thread. */
static _Thread_local uint32_t tl_block_idx, tl_block_num;

uint32_t tp_kernel_block_idx(void)
{
	return tl_block_idx;
}

uint32_t tp_kernel_block_num(void)
{
	return tl_block_num;
}

void tp_aicore_loop(struct tp_aicore *core, void *arg)
{
	struct tp_engine *e = arg;
	const int id = tp_aicore_id(core);
	struct tp_core_exec *ce = &e->cores[id];
	struct tp_core_ctx *ctx = &e->ctxs[id];

	if (tp_aicore_handshake(core) == TP_AICORE_EXITING)
		return;
	tp_core_ctx_bind(ctx);
	uint32_t last = TP_AICPU_IDLE_TASK_ID;
	for (;;) {
		uint32_t token = tp_aicore_wait_dispatch(core, last);
		if (token == TP_AICORE_EXIT_SIGNAL)
			break;
		last = token;
		/* The acquire of the token makes the payload visible. */
		const struct tp_dispatch_payload *pl = &ce->payload[token & 1];
		tp_aicore_ack(core, token);
		/* Early dispatch: staged before its producers finished; park
		 * until the doorbell DATA_MAIN_BASE_HI == token. */
		if (pl->gated && tp_aicore_wait_gate(core, token) == TP_AICORE_EXITING)
			break;
		if (!atomic_load_explicit(&e->failed, memory_order_acquire)) {
			tp_core_ctx_task_begin(ctx);
			tp_aicore_kernel_begin(core);
			tl_block_idx = pl->block_idx;
			tl_block_num = pl->block_num;
			tp_async_bind(e, &ce->slab[token & 1]);
			if (pl->fn)
				pl->fn(pl->args);
			tp_async_bind(e, NULL);
			tl_block_idx = 0;
			tl_block_num = 0;
			tp_aicore_kernel_end(core);
			int rc = tp_core_ctx_task_end(ctx);
			if (rc) {
				char nb[32];
				tp_engine_fail(e, -EIO, pl->task_id, pl->func_id,
					       "runtime: task 0x%llx (ring %u, local %u) "
					       "function %s (func_id %d) failed on core %d: %s",
					       (unsigned long long)pl->task_id,
					       tp_task_id_ring(pl->task_id),
					       tp_task_id_local(pl->task_id),
					       tp_engine_func_name(e, pl->func_id, nb, sizeof(nb)),
					       pl->func_id, id, tp_core_ctx_error_msg(ctx));
			}
		}
		tp_aicore_fin(core, token);
	}
	tp_core_ctx_bind(NULL);
	tp_aicore_exit_ack(core);
}
