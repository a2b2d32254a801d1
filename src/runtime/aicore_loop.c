/* SPDX-License-Identifier: MIT */
/*
 * runtime/aicore_loop.c — the AICore worker loop (aicore_execute,
 * spec/runtime-model.md §2.8) on a platform AICore thread: handshake, then
 * per token ACK, run the kernel on the bound tile context, FIN; exit on
 * AICORE_EXIT_SIGNAL. Waiting parks on the core's dispatch doorbell.
 * Dual issue: the scheduler may write the next token (payload token & 1)
 * once it saw this token's ACK; the core picks it up after the FIN.
 * Early dispatch: a gated payload is ACKed, then the core parks until its
 * doorbell DATA_MAIN_BASE_HI equals the token (spec §2.8 step 3); its
 * swimlane receive time is when the gate opened.
 */
#include <errno.h>

#include "base/clock.h"
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
	/* Swimlane: the one predictable branch; nothing is stamped without it. */
	const bool swl = e->hooks_on && e->hooks.on_aicore_task;
	/* PMU a5 staging: one predictable branch, like swl. */
	const bool done_hook = e->hooks_on && e->hooks.on_aicore_done;
	for (;;) {
		uint32_t token = tp_aicore_wait_dispatch(core, last);
		if (token == TP_AICORE_EXIT_SIGNAL)
			break;
		uint64_t t_recv = 0, t_start = 0, t_end = 0;
		if (swl) {
			/* After the token's load (the dispatch was stamped
			 * before the token's store). */
			t_recv = tp_sys_cnt_after_loads();
			if (e->hooks.on_aicore_receive)
				e->hooks.on_aicore_receive(e->hooks.ud, id, token);
		}
		last = token;
		/* The acquire of the token makes the payload visible. */
		const struct tp_dispatch_payload *pl = &ce->payload[token & 1];
		/* Read while the line is here; the hooks after the kernel use it. */
		const tp_task_id task_id = pl->task_id;
		tp_aicore_ack(core, token);
		/* Early dispatch: staged before its producers finished; park
		 * until the doorbell DATA_MAIN_BASE_HI == token. */
		if (pl->gated) {
			if (tp_aicore_wait_gate(core, token) == TP_AICORE_EXITING)
				break;
			/* Swimlane: a gated task is received when its gate opens
			 * (after its producers completed), not when its token was
			 * read: the wait is not the task's (docs/swimlane.md
			 * "Early dispatch"). */
			if (swl)
				t_recv = tp_sys_cnt_after_loads();
		}
		/* acquire: pairs with tp_engine_fail()'s release store; only
		 * a skip decision (a failed run's kernels need not run). */
		if (!atomic_load_explicit(&e->failed, memory_order_acquire)) {
			tp_core_ctx_task_begin(ctx);
			tl_block_idx = pl->block_idx;
			tl_block_num = pl->block_num;
			tp_async_bind(e, &ce->slab[token & 1]);
			/* The PMU window (kernel hooks) and the swimlane stamps
			 * right around the kernel: what the window holds beyond
			 * the bar is its own clock reads only. */
			tp_aicore_kernel_begin(core);
			if (swl)
				t_start = tp_sys_cnt();
			if (pl->fn)
				pl->fn(pl->args);
			if (swl)
				t_end = tp_sys_cnt();
			tp_aicore_kernel_end(core);
			tp_async_bind(e, NULL);
			tl_block_idx = 0;
			tl_block_num = 0;
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
		/* After the window's close (on_kernel_end), before the FIN:
		 * the FIN's release store publishes what the hook staged. */
		if (done_hook)
			e->hooks.on_aicore_done(e->hooks.ud, id, task_id, token);
		if (swl) {
			/* A skipped kernel (failed run) still gets its row. */
			if (!t_start)
				t_start = t_end = tp_sys_cnt();
			/* Before the FIN: its release store publishes the record
			 * to the AICPU that observes it (see on_aicore_task). */
			e->hooks.on_aicore_task(e->hooks.ud, id, task_id, token, t_recv,
						t_start, t_end);
		}
		tp_aicore_fin(core, token);
	}
	tp_core_ctx_bind(NULL);
	tp_aicore_exit_ack(core);
}
