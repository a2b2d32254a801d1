/* SPDX-License-Identifier: MIT */
/* Unit tests of the simplified async wait (runtime/engine.h,
 * runtime/async.c), with 1 and 3 scheduler threads, under both runtimes:
 *  - a kernel asks the simulated DMA engine for delayed copies that bump a
 *    counter and registers "counter >= value"; the task completes only
 *    after the poll saw the condition, so its consumer reads the copied
 *    data and the final counter (plain and SPMD tasks, two waits' worth
 *    of bumps per subtask);
 *  - the async_poll phase carries the completions, the result counts
 *    waits, completions and DMA requests exactly;
 *  - a wait that never becomes true fails the run with -ETIMEDOUT (no
 *    hang); the kernel API refuses calls outside a kernel. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "platform/device.h"
#include "runtime/engine.h"
#include "runtime/orch.h"

static uint32_t *tile_u32(int64_t arg)
{
	const struct tp_tile *t = (const struct tp_tile *)(intptr_t)arg;
	return (uint32_t *)(t->buf + t->offset);
}

static uint32_t tile_rows(int64_t arg)
{
	return ((const struct tp_tile *)(intptr_t)arg)->rows;
}

/* ASYNC: IN src[n], OUT dst[n], INOUT cnt[block_num], scalar delay_us.
 * Block b of B copies slice b of src to dst in two DMA requests (delay
 * and 2·delay), each bumping cnt[b], and waits for cnt[b] >= 2. */
static void k_async(int64_t *args)
{
	const uint32_t b = tp_kernel_block_idx(), nb = tp_kernel_block_num();
	const uint32_t n = tile_rows(args[0]) / nb, h = n / 2;
	uint32_t *src = tile_u32(args[0]) + b * n, *dst = tile_u32(args[1]) + b * n;
	uint32_t *cnt = tile_u32(args[2]) + b;
	const uint64_t d = (uint64_t)args[3] * 1000u;
	if (tp_kernel_dma_copy(dst, src, h * sizeof(uint32_t), cnt, d) ||
	    tp_kernel_dma_copy(dst + h, src + h, (n - h) * sizeof(uint32_t), cnt, 2 * d) ||
	    tp_kernel_async_wait(cnt, 2))
		abort();
}

/* CHECK: IN dst[n], IN cnt[k], OUT out[n + k]: out[i] = 2·dst[i], then the
 * counters as this kernel saw them. */
static void k_check(int64_t *args)
{
	const uint32_t n = tile_rows(args[0]), k = tile_rows(args[1]);
	uint32_t *out = tile_u32(args[2]);
	for (uint32_t i = 0; i < n; i++)
		out[i] = 2 * tile_u32(args[0])[i];
	for (uint32_t i = 0; i < k; i++)
		out[n + i] = __atomic_load_n(&tile_u32(args[1])[i], __ATOMIC_ACQUIRE);
}

/* NEVER: INOUT cnt[1]: waits for a counter nobody bumps. */
static void k_never(int64_t *args)
{
	if (tp_kernel_async_wait(tile_u32(args[0]), 1))
		abort();
}

enum { K_ASYNC, K_CHECK, K_NEVER, K_COUNT };

static const struct tp_kernel_entry kernels[K_COUNT] = {
	[K_ASYNC] = { k_async, TP_CORE_AIV, "ASYNC" },
	[K_CHECK] = { k_check, TP_CORE_AIC, "CHECK" },
	[K_NEVER] = { k_never, TP_CORE_AIV, "NEVER" },
};

/* ---- hooks --------------------------------------------------------------- */

struct probe {
	_Atomic uint64_t poll_bars, poll_tasks, fins, dispatches;
	_Atomic uint64_t other_bars[TP_PHASE_COUNT];
};

static void h_phase(void *ud, int th, enum tp_sched_phase ph, uint64_t s, uint64_t e,
		    uint64_t it, uint32_t n)
{
	struct probe *p = ud;
	(void)th, (void)it;
	assert_true(e >= s);
	if (ph == TP_PHASE_ASYNC_POLL) {
		atomic_fetch_add(&p->poll_bars, 1);
		atomic_fetch_add(&p->poll_tasks, n);
	}
	atomic_fetch_add(&p->other_bars[ph], 1);
}

static void h_fin(void *ud, int th, int core, tp_task_id t, int f, uint32_t tok, uint64_t d,
		  uint64_t fin)
{
	(void)th, (void)core, (void)t, (void)f, (void)tok, (void)d, (void)fin;
	atomic_fetch_add(&((struct probe *)ud)->fins, 1);
}

static void h_dispatch(void *ud, int th, int core, tp_task_id t, int f, uint32_t tok,
		       uint64_t ts)
{
	(void)th, (void)core, (void)t, (void)f, (void)tok, (void)ts;
	atomic_fetch_add(&((struct probe *)ud)->dispatches, 1);
}

static int run(int aicpu_threads, enum tp_runtime_mode mode, uint64_t stall_ms, tp_orch_fn fn,
	       void *arg, struct tp_engine_result *res, struct probe *p)
{
	struct tp_device_config dc = {
		.block_dim = 2,
		.aicpu_threads = aicpu_threads,
		.mem_bytes = 16u << 20,
	};
	struct tp_device *dev = tp_device_open(&dc);
	if (!dev)
		printf("open: %s\n", tp_last_error());
	assert_non_null(dev);
	memset(p, 0, sizeof(*p));
	struct tp_sched_hooks hooks = {
		.on_phase = h_phase,
		.on_fin = h_fin,
		.on_dispatch = h_dispatch,
		.task_times = true, /* the checks below read the times */
		.ud = p,
	};
	struct tp_engine_config cfg = {
		.dev = dev,
		.kernels = kernels,
		.num_kernels = K_COUNT,
		.ring_window = 1024,
		.ring_heap = 4u << 20,
		.hooks = &hooks,
		.runtime = mode,
		.stall_timeout_ms = stall_ms,
	};
	alarm(120);
	int rc = tp_engine_run(&cfg, fn, arg, res);
	alarm(0);
	tp_device_close(dev);
	if (rc)
		printf("run: %s\n", res->msg);
	return rc;
}

static void u32_tensor(struct tp_tensor *t, uint32_t *mem, uint32_t n)
{
	uint32_t shape[1] = { n };
	assert_int_equal(tp_tensor_make_contiguous(t, (uint64_t)(uintptr_t)mem, TP_INT32, 1,
						   shape), 0);
}

/* ---- async wait graph ------------------------------------------------------ */

#define GROUPS 6
#define N 16
#define SPMD_BLOCKS 4

struct group {
	uint32_t src[N], dst[N], cnt[SPMD_BLOCKS], out[N + SPMD_BLOCKS];
};

/* Group g: ASYNC (block_num 1 for even g, SPMD_BLOCKS for odd g) → CHECK. */
static uint32_t blocks_of(uint32_t g)
{
	return g % 2 ? SPMD_BLOCKS : 1;
}

static int orch_async(struct tp_orch *o, void *arg)
{
	struct group *gs = arg;
	for (uint32_t g = 0; g < GROUPS; g++) {
		struct group *G = &gs[g];
		struct tp_tensor src, dst, cnt, out;
		struct tp_task_args a;
		int rc;
		const uint32_t nb = blocks_of(g);
		u32_tensor(&src, G->src, N);
		u32_tensor(&dst, G->dst, N);
		u32_tensor(&cnt, G->cnt, nb);
		u32_tensor(&out, G->out, N + nb);
		tp_args_init(&a);
		tp_args_add_input(&a, &src);
		tp_args_add_output_existing(&a, &dst);
		tp_args_add_inout(&a, &cnt);
		tp_args_add_scalar(&a, 20000 + 5000 * g); /* 20..45 ms */
		tp_args_set_block_num(&a, nb);
		if ((rc = tp_submit_aiv(o, K_ASYNC, &a, NULL)))
			return rc;
		tp_args_init(&a);
		tp_args_add_input(&a, &dst);
		tp_args_add_input(&a, &cnt);
		tp_args_add_output_existing(&a, &out);
		if ((rc = tp_submit_aic(o, K_CHECK, &a, NULL)))
			return rc;
	}
	return 0;
}

static void check_async(int threads, enum tp_runtime_mode mode)
{
	struct group *gs = calloc(GROUPS, sizeof(*gs));
	struct probe *p = calloc(1, sizeof(*p));
	struct tp_engine_result res;
	assert_non_null(gs);
	assert_non_null(p);
	uint32_t subtasks = 0;
	for (uint32_t g = 0; g < GROUPS; g++) {
		for (uint32_t i = 0; i < N; i++)
			gs[g].src[i] = 1000 * (g + 1) + i;
		subtasks += blocks_of(g);
	}
	assert_int_equal(run(threads, mode, 0, orch_async, gs, &res, p), 0);
	for (uint32_t g = 0; g < GROUPS; g++) {
		const uint32_t nb = blocks_of(g);
		for (uint32_t i = 0; i < N; i++) {
			assert_int_equal(gs[g].dst[i], 1000 * (g + 1) + i);
			/* The consumer ran after the copy landed. */
			assert_int_equal(gs[g].out[i], 2 * (1000 * (g + 1) + i));
		}
		for (uint32_t b = 0; b < nb; b++) {
			assert_int_equal(gs[g].cnt[b], 2);
			/* ... and after both bumps of every block. */
			assert_int_equal(gs[g].out[N + b], 2);
		}
	}
	assert_int_equal(res.total_tasks, 2 * GROUPS);
	assert_int_equal(res.completed_tasks, 2 * GROUPS);
	assert_int_equal(res.dispatched_subtasks, subtasks + GROUPS);
	assert_int_equal(p->fins, subtasks + GROUPS);
	assert_int_equal(res.async_waits, subtasks);
	assert_int_equal(res.async_completions, GROUPS);
	assert_int_equal(res.dma_requests, 2 * subtasks);
	assert_int_equal(p->poll_tasks, GROUPS);
	assert_true(p->poll_bars >= 1);
	printf("%s, %d sched: %llu async_poll bars, %llu completions\n",
	       mode == TP_RUNTIME_HOST_BUILD_GRAPH ? "hbg" : "trb", threads,
	       (unsigned long long)p->poll_bars, (unsigned long long)p->poll_tasks);
	free(gs);
	free(p);
}

static void test_async_trb_1sched(void **s) { (void)s; check_async(2, TP_RUNTIME_TENSORMAP_RINGBUFFER); }
static void test_async_trb_3sched(void **s) { (void)s; check_async(4, TP_RUNTIME_TENSORMAP_RINGBUFFER); }
static void test_async_hbg_1sched(void **s) { (void)s; check_async(1, TP_RUNTIME_HOST_BUILD_GRAPH); }
static void test_async_hbg_3sched(void **s) { (void)s; check_async(3, TP_RUNTIME_HOST_BUILD_GRAPH); }

/* ---- a wait that never holds ------------------------------------------------ */

static int orch_never(struct tp_orch *o, void *arg)
{
	struct tp_tensor cnt;
	struct tp_task_args a;
	u32_tensor(&cnt, arg, 1);
	tp_args_init(&a);
	tp_args_add_inout(&a, &cnt);
	return tp_submit_aiv(o, K_NEVER, &a, NULL);
}

static void check_never(int threads)
{
	uint32_t cnt = 0;
	struct probe *p = calloc(1, sizeof(*p));
	struct tp_engine_result res;
	assert_non_null(p);
	uint64_t t0 = tp_now_ns();
	int rc = run(threads, TP_RUNTIME_TENSORMAP_RINGBUFFER, 300, orch_never, &cnt, &res, p);
	uint64_t ms = (tp_now_ns() - t0) / 1000000u;
	assert_int_equal(rc, -ETIMEDOUT);
	assert_non_null(strstr(res.msg, "waits for counter"));
	assert_int_equal(res.completed_tasks, 0);
	assert_int_equal(res.async_waits, 1);
	assert_int_equal(res.async_completions, 0);
	assert_int_equal(p->fins, 1);
	assert_true(ms < 10000);
	free(p);
}

static void test_never_1sched(void **s) { (void)s; check_never(2); }
static void test_never_3sched(void **s) { (void)s; check_never(4); }

static void test_outside_kernel(void **s)
{
	(void)s;
	uint32_t c = 0, x = 1, y = 0;
	assert_int_equal(tp_kernel_async_wait(&c, 1), -EPERM);
	assert_int_equal(tp_kernel_dma_copy(&y, &x, sizeof(x), &c, 0), -EPERM);
	assert_int_equal(y, 0);
	assert_int_equal(c, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_async_trb_1sched),
		cmocka_unit_test(test_async_trb_3sched),
		cmocka_unit_test(test_async_hbg_1sched),
		cmocka_unit_test(test_async_hbg_3sched),
		cmocka_unit_test(test_never_1sched),
		cmocka_unit_test(test_never_3sched),
		cmocka_unit_test(test_outside_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
