/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the hidden instrumentation buffer (taskprof/rt_tool.h
 * tp_rt_tool_launch; kernel.h tp_mark*, tp_scalar_begin(name) / _end) on
 * a2a3sim and a5sim: every block's points in order with the device's
 * BLOCK_BEGIN / BLOCK_END (id = core id), nondecreasing times, scalar
 * sections named and timed with exactly the cycles the PMU's SCALAR busy
 * event counted, overflow counted past the capacity, the same kernel
 * without a buffer giving identical output, and bad buffers refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "platform/tile/core_ctx.h"
#include "platform/op_chan.h"
#include "taskprof/kernel.h"
#include "taskprof/rt.h"
#include "taskprof/rt_tool.h"

static const char SEC_A[] = "sec_a";

struct k_args {
	int32_t *out;  /* device, one value per block */
	uint32_t spin; /* scalar-section loop count */
};

/* 6 points per block between the device's BLOCK_BEGIN and BLOCK_END. */
static void marked_kernel(uint32_t b, uint32_t n, void *p)
{
	(void)n;
	const struct k_args *a = p;
	tp_mark(100 + b);
	tp_mark_range_begin(7);
	tp_scalar_begin(SEC_A);
	volatile uint32_t acc = 0;
	for (uint32_t i = 0; i < a->spin; i++)
		acc += i ^ b;
	a->out[b] = (int32_t)(b * 3u + (acc & 0u));
	tp_scalar_end();
	tp_mark_range_end(7);
	tp_mark(200);
}

static int setup(void **state)
{
	(void)state;
	unsetenv("TASKPROF_DEVICE_MEM_MB");
	setenv("TASKPROF_PLATFORM", "a2a3sim", 1);
	assert_int_equal(tp_rt_set_device(0), 0);
	return 0;
}

static void use_platform(const char *plat)
{
	for (int i = 0; i < TP_RT_MAX_DEVICES; i++)
		assert_int_equal(tp_rt_reset_device(i), 0);
	setenv("TASKPROF_PLATFORM", plat, 1);
	assert_int_equal(tp_rt_set_device(0), 0);
}

/* A hidden buffer in device memory, header filled, rest zeroed (the
 * tool's job), through tp_rt_memcpy only: a5sim's host never touches it. */
static void *instr_alloc(uint32_t block_dim, uint32_t cap, size_t *bytes, void **host)
{
	*bytes = tp_rt_instr_bytes(block_dim, cap);
	void *d = NULL;
	assert_int_equal(tp_rt_malloc(&d, *bytes), 0);
	*host = calloc(1, *bytes);
	struct tp_instr_hdr *h = *host;
	*h = (struct tp_instr_hdr){ TP_INSTR_MAGIC, TP_INSTR_VERSION, block_dim, cap };
	assert_int_equal(tp_rt_memcpy(d, *host, *bytes, TP_RT_MEMCPY_HOST_TO_DEVICE), 0);
	return d;
}

static void run_on(const char *plat)
{
	use_platform(plat);
	const uint32_t bd = 30, cap = 16;
	struct k_args a = { NULL, 20000 };
	assert_int_equal(tp_rt_malloc((void **)&a.out, bd * sizeof(int32_t)), 0);
	size_t bytes;
	void *host;
	void *d = instr_alloc(bd, cap, &bytes, &host);

	/* with AICORE_PMU counting SCALAR busy cycles on both core types */
	const bool a5 = strcmp(plat, "a5sim") == 0;
	struct tp_drv_prof_config cfg = { .pass = 0, .n_aic = 1, .n_aiv = 1 };
	cfg.aic_events[0] = cfg.aiv_events[0] = a5 ? 0x1 : 0x09;
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, &cfg), 0);
	struct tp_rt_launch_attr attr = { "marked", TP_RT_CORES_ANY };
	assert_int_equal(tp_rt_tool_launch(marked_kernel, bd, &a, &attr, d, bytes), 0);
	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_AICORE_PMU), 0);
	static struct tp_op_rec rec[64];
	int got = tp_drv_prof_channel_read(0, TP_DRV_CH_AICORE_PMU, rec, sizeof(rec));
	assert_int_equal(got, (int)((bd + 1) * sizeof(struct tp_op_rec)));
	uint64_t scalar_pmu[64] = { 0 };
	int32_t core_of[64];
	for (uint32_t i = 0; i < bd; i++) {
		scalar_pmu[rec[i].block_id] = rec[i].value[0];
		core_of[rec[i].block_id] = rec[i].core_id;
	}

	assert_int_equal(tp_rt_memcpy(host, d, bytes, TP_RT_MEMCPY_DEVICE_TO_HOST), 0);
	int32_t out1[64];
	assert_int_equal(tp_rt_memcpy(out1, a.out, bd * sizeof(int32_t),
				      TP_RT_MEMCPY_DEVICE_TO_HOST), 0);
	static const uint32_t kinds[] = {
		TP_INSTR_BLOCK_BEGIN, TP_INSTR_MARK, TP_INSTR_RANGE_BEGIN,
		TP_INSTR_SCALAR_BEGIN, TP_INSTR_SCALAR_END, TP_INSTR_RANGE_END,
		TP_INSTR_MARK, TP_INSTR_BLOCK_END,
	};
	uint64_t cyc_sum = 0;
	for (uint32_t b = 0; b < bd; b++) {
		const struct tp_instr_block *blk = tp_rt_instr_block(host, b);
		assert_int_equal(blk->count, 8);
		assert_int_equal(blk->overflow, 0);
		const struct tp_instr_rec *r = (const struct tp_instr_rec *)(blk + 1);
		for (int i = 0; i < 8; i++) {
			assert_int_equal(r[i].kind, kinds[i]);
			if (i)
				assert_true(r[i].t >= r[i - 1].t);
		}
		assert_int_equal(r[0].id, (uint32_t)core_of[b]);
		assert_int_equal(r[7].id, (uint32_t)core_of[b]);
		assert_int_equal(r[1].id, 100 + b);
		assert_int_equal(r[2].id, 7);
		assert_int_equal(r[5].id, 7);
		assert_int_equal(r[6].id, 200);
		assert_int_equal(r[3].name, (uint64_t)(uintptr_t)SEC_A);
		assert_int_equal(r[4].name, (uint64_t)(uintptr_t)SEC_A);
		assert_string_equal((const char *)(uintptr_t)r[4].name, "sec_a");
		assert_int_equal(r[3].cycles, 0);
		assert_true(r[4].cycles > 0);
		/* the SCALAR busy event counted exactly the section's cycles */
		assert_int_equal(r[4].cycles, scalar_pmu[b]);
		cyc_sum += r[4].cycles;
		assert_int_equal(out1[b], (int32_t)(b * 3));
	}
	printf("%s: 30 blocks x 8 points in order; scalar sections %.1f us on average, "
	       "equal to the PMU's SCALAR busy cycles\n", plat,
	       (double)cyc_sum / bd / 1800.0);

	/* overflow: 3 records fit, 5 are counted */
	free(host);
	assert_int_equal(tp_rt_free(d), 0);
	d = instr_alloc(bd, 3, &bytes, &host);
	assert_int_equal(tp_rt_tool_launch(marked_kernel, bd, &a, NULL, d, bytes), 0);
	assert_int_equal(tp_rt_memcpy(host, d, bytes, TP_RT_MEMCPY_DEVICE_TO_HOST), 0);
	for (uint32_t b = 0; b < bd; b++) {
		const struct tp_instr_block *blk = tp_rt_instr_block(host, b);
		assert_int_equal(blk->count, 3);
		assert_int_equal(blk->overflow, 5);
		const struct tp_instr_rec *r = (const struct tp_instr_rec *)(blk + 1);
		assert_int_equal(r[0].kind, TP_INSTR_BLOCK_BEGIN);
		assert_int_equal(r[2].kind, TP_INSTR_RANGE_BEGIN);
	}

	/* no buffer: the same output, the marks cost nothing and succeed */
	assert_int_equal(tp_rt_memcpy(a.out, (int32_t[64]){ 0 }, bd * sizeof(int32_t),
				      TP_RT_MEMCPY_HOST_TO_DEVICE), 0);
	assert_int_equal(tp_rt_launch(marked_kernel, bd, &a), 0);
	int32_t out2[64];
	assert_int_equal(tp_rt_memcpy(out2, a.out, bd * sizeof(int32_t),
				      TP_RT_MEMCPY_DEVICE_TO_HOST), 0);
	assert_memory_equal(out1, out2, bd * sizeof(int32_t));
	free(host);
	assert_int_equal(tp_rt_free(d), 0);
	assert_int_equal(tp_rt_free(a.out), 0);
}

static void test_instr_a2a3sim(void **state)
{
	(void)state;
	run_on("a2a3sim");
}

static void test_instr_a5sim(void **state)
{
	(void)state;
	run_on("a5sim");
	use_platform("a2a3sim");
}

static void test_bad_buffers(void **state)
{
	(void)state;
	struct k_args a = { NULL, 10 };
	assert_int_equal(tp_rt_malloc((void **)&a.out, 64 * sizeof(int32_t)), 0);
	size_t bytes;
	void *host;
	void *d = instr_alloc(8, 4, &bytes, &host);
	/* the launch has more blocks than the buffer */
	assert_int_equal(tp_rt_tool_launch(marked_kernel, 9, &a, NULL, d, bytes), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "room for 8 blocks, the launch has 9"));
	/* too small for its own header */
	assert_int_equal(tp_rt_tool_launch(marked_kernel, 8, &a, NULL, d, bytes - 1), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "needs"));
	assert_int_equal(tp_rt_tool_launch(marked_kernel, 8, &a, NULL, d, 8), -EINVAL);
	/* host memory is not a device buffer */
	assert_int_equal(tp_rt_tool_launch(marked_kernel, 8, &a, NULL, host, bytes), -EINVAL);
	/* past the allocation */
	assert_int_equal(tp_rt_tool_launch(marked_kernel, 8, &a, NULL, d, bytes + 4096),
			 -EINVAL);
	/* a bad magic */
	((struct tp_instr_hdr *)host)->magic = 0x12345678;
	assert_int_equal(tp_rt_memcpy(d, host, 16, TP_RT_MEMCPY_HOST_TO_DEVICE), 0);
	assert_int_equal(tp_rt_tool_launch(marked_kernel, 8, &a, NULL, d, bytes), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "magic 0x12345678"));
	/* NULL: no buffer, a plain launch */
	assert_int_equal(tp_rt_tool_launch(marked_kernel, 8, &a, NULL, NULL, 0), 0);
	/* off the device, the points have no core */
	assert_int_equal(tp_mark(1), -ENODEV);
	assert_int_equal(tp_mark_range_begin(1), -ENODEV);
	assert_int_equal(tp_mark_range_end(1), -ENODEV);
	assert_non_null(strstr(tp_last_error(), "no AICore context"));
	free(host);
	assert_int_equal(tp_rt_free(d), 0);
	assert_int_equal(tp_rt_free(a.out), 0);
}

/* The context side on its own: a region bound by hand on this thread. */
static void test_ctx_direct(void **state)
{
	(void)state;
	struct tp_core_ctx ctx;
	assert_int_equal(tp_core_ctx_init(&ctx, 11, TP_CORE_AIV), 0);
	tp_core_ctx_bind(&ctx);
	tp_core_ctx_task_begin(&ctx);
	/* bound, no region: every point succeeds and writes nothing */
	assert_int_equal(tp_mark(1), 0);
	assert_int_equal(tp_mark_range_begin(1), 0);
	assert_int_equal(tp_mark_range_end(1), 0);
	assert_int_equal(tp_scalar_begin("x"), 0);
	assert_int_equal(tp_scalar_end(), 0);
	const uint64_t n = 2000000;
	uint64_t t0 = tp_now_ns();
	for (uint64_t i = 0; i < n; i++)
		tp_mark((uint32_t)i);
	double ns = (double)(tp_now_ns() - t0) / (double)n;
	printf("tp_mark without a buffer: %.2f ns per call\n", ns);

	/* a region of 4 records */
	static union {
		struct tp_instr_block b;
		char bytes[sizeof(struct tp_instr_block) + 4 * sizeof(struct tp_instr_rec)];
	} reg;
	memset(&reg, 0, sizeof(reg));
	tp_core_ctx_set_instr(&ctx, &reg.b, 4);
	static const char nm[] = "loop";
	assert_int_equal(tp_scalar_begin(nm), 0);
	assert_int_equal(tp_mark(5), 0);
	assert_int_equal(tp_scalar_end(), 0);
	assert_int_equal(tp_scalar_begin(NULL), 0);
	assert_int_equal(tp_scalar_end(), 0);
	assert_int_equal(tp_mark(6), 0);
	tp_core_ctx_set_instr(&ctx, NULL, 0);
	assert_int_equal(tp_mark(7), 0); /* unbound again: not written */
	assert_int_equal(reg.b.count, 4);
	assert_int_equal(reg.b.overflow, 2); /* SCALAR_END of the 2nd, mark 6 */
	const struct tp_instr_rec *r = (const struct tp_instr_rec *)(&reg.b + 1);
	assert_int_equal(r[0].kind, TP_INSTR_SCALAR_BEGIN);
	assert_int_equal(r[0].name, (uint64_t)(uintptr_t)nm);
	assert_int_equal(r[1].kind, TP_INSTR_MARK);
	assert_int_equal(r[1].id, 5);
	assert_int_equal(r[2].kind, TP_INSTR_SCALAR_END);
	assert_int_equal(r[2].name, (uint64_t)(uintptr_t)nm);
	assert_true(r[2].cycles >= 1);
	assert_int_equal(r[3].kind, TP_INSTR_SCALAR_BEGIN);
	assert_int_equal(r[3].name, 0);
	/* the usage record has the same SCALAR cycles */
	assert_true(tp_core_ctx_usage(&ctx)->cycles[TP_PIPE_SCALAR] >= r[2].cycles);
	/* a failed core skips its sections, and writes no point for them */
	tp_core_ctx_fail(&ctx, -EINVAL, "test failure");
	tp_core_ctx_set_instr(&ctx, &reg.b, 8);
	assert_int_equal(tp_scalar_begin(nm), -ECANCELED);
	assert_int_equal(reg.b.count, 4);
	tp_core_ctx_set_instr(&ctx, NULL, 0);
	tp_core_ctx_bind(NULL);
	tp_core_ctx_fini(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_instr_a2a3sim, setup),
		cmocka_unit_test_setup(test_instr_a5sim, setup),
		cmocka_unit_test_setup(test_bad_buffers, setup),
		cmocka_unit_test(test_ctx_direct),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	for (int i = 0; i < TP_RT_MAX_DEVICES; i++)
		tp_rt_reset_device(i);
	return rc;
}
