/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the driver profiling channels (taskprof/rt_tool.h,
 * platform/rt.c + platform/op_chan.c): BLOCK records of AICORE_PMU whose
 * values are the exact request / instruction counts of the tile ops each
 * block ran (docs/pmu.md), on a2a3sim and a5sim, AIV and AIC launches; the
 * LAUNCH record of TASK_TIME; END_OF_PASS after stop; the PMU selection
 * restored at stop; a small ring with a slow reader thread (nothing lost);
 * the 30 s backstop (shortened) dropping and counting; poll timeout, wake
 * and routing; a device reset while channels run; every error code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "platform/device.h"
#include "platform/op_chan.h"
#include "platform/regs.h"
#include "platform/rt_internal.h"
#include "taskprof/kernel.h"
#include "taskprof/rt.h"
#include "taskprof/rt_tool.h"

#define REC sizeof(struct tp_op_rec)

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void reset_all(void)
{
	for (int i = 0; i < TP_RT_MAX_DEVICES; i++)
		assert_int_equal(tp_rt_reset_device(i), 0);
}

/* Drain every channel of device 0 left readable by a failed test. */
static void drain_quiet(void)
{
	static struct tp_op_rec buf[64];
	for (int d = 0; d < TP_RT_MAX_DEVICES; d++)
		for (uint32_t ch = 1; ch <= 2; ch++) {
			(void)tp_drv_prof_stop(d, ch);
			while (tp_drv_prof_channel_read(d, ch, buf, sizeof(buf)) > 0)
				;
		}
}

static int setup(void **state)
{
	(void)state;
	unsetenv("TASKPROF_DEVICE_MEM_MB");
	setenv("TASKPROF_PLATFORM", "a2a3sim", 1);
	tp_op_chan_set_capacity(0);
	tp_op_chan_set_backstop_ms(0);
	assert_int_equal(tp_rt_set_device(0), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	drain_quiet();
	tp_op_chan_set_capacity(0);
	tp_op_chan_set_backstop_ms(0);
	tp_log_set_threshold(TP_LOG_TIMING);
	return 0;
}

static void use_platform(const char *plat)
{
	reset_all();
	setenv("TASKPROF_PLATFORM", plat, 1);
	assert_int_equal(tp_rt_set_device(0), 0);
}

/* Read channel (@dev, @ch) until its END_OF_PASS into @out (at most @max
 * records, END_OF_PASS included); polls with a 5 s budget. */
static size_t drain(int dev, uint32_t ch, struct tp_op_rec *out, size_t max)
{
	size_t n = 0;
	uint64_t t0 = now_ms();
	for (;;) {
		int got = tp_drv_prof_channel_read(dev, ch, out + n, (max - n) * REC);
		assert_true(got >= 0);
		assert_int_equal(got % (int)REC, 0);
		n += (size_t)got / REC;
		if (n && out[n - 1].kind == TP_OP_REC_END_OF_PASS)
			return n;
		assert_true(n < max);
		assert_true(now_ms() - t0 < 5000);
		struct tp_drv_prof_poll_info pi[8];
		(void)tp_drv_prof_channel_poll(pi, 8, 50);
	}
}

/* ---- kernels ---------------------------------------------------------------- */

/* Each block adds an 8 x 64 fp32 slice (2048 bytes: 64 requests of 32
 * bytes): two copy_in (MTE2), reps vadd (VEC), one copy_out (MTE3). */
#define VR 8u
#define VC 64u
#define VBYTES (VR * VC * 4u)
#define VREQ (VBYTES / 32u)

struct vec_args {
	float *x, *y, *z; /* device */
	int reps;
};

static void vec_kernel(uint32_t b, uint32_t n, void *p)
{
	(void)n;
	const struct vec_args *a = p;
	size_t off = (size_t)b * VR * VC;
	struct tp_tile gx, gy, gz, ua, ub, uc;
	if (tp_tile_init(&gx, TP_MEM_GM, a->x + off, VBYTES, TP_FP32, VR, VC, VC) ||
	    tp_tile_init(&gy, TP_MEM_GM, a->y + off, VBYTES, TP_FP32, VR, VC, VC) ||
	    tp_tile_init(&gz, TP_MEM_GM, a->z + off, VBYTES, TP_FP32, VR, VC, VC))
		return;
	if (tp_local_tile(&ua, TP_MEM_UB, TP_FP32, VR, VC) ||
	    tp_local_tile(&ub, TP_MEM_UB, TP_FP32, VR, VC) ||
	    tp_local_tile(&uc, TP_MEM_UB, TP_FP32, VR, VC))
		return;
	tp_copy_in(&ua, &gx);
	tp_copy_in(&ub, &gy);
	for (int i = 0; i < a->reps; i++)
		tp_vadd(&uc, &ua, &ub);
	tp_copy_out(&gz, &uc);
}

/* C = A x B on the cube, 16 x 16 x 16 bf16: one fractal, one CUBE
 * instruction. A and B are all ones, so every C element is 16. */
#define MM 16u
struct mm_args {
	uint16_t *a, *b; /* device, bf16 */
	float *c;        /* device, fp32, per block MM x MM */
};

static void mm_kernel(uint32_t blk, uint32_t n, void *p)
{
	(void)n;
	const struct mm_args *m = p;
	struct tp_tile ga, gb, gc, l1a, l1b, a0, b0, c0;
	if (tp_tile_init(&ga, TP_MEM_GM, m->a, MM * MM * 2, TP_BF16, MM, MM, MM) ||
	    tp_tile_init(&gb, TP_MEM_GM, m->b, MM * MM * 2, TP_BF16, MM, MM, MM) ||
	    tp_tile_init(&gc, TP_MEM_GM, m->c + (size_t)blk * MM * MM, MM * MM * 4, TP_FP32,
			 MM, MM, MM))
		return;
	if (tp_local_tile(&l1a, TP_MEM_L1, TP_BF16, MM, MM) ||
	    tp_local_tile(&l1b, TP_MEM_L1, TP_BF16, MM, MM) ||
	    tp_local_tile(&a0, TP_MEM_L0A, TP_BF16, MM, MM) ||
	    tp_local_tile(&b0, TP_MEM_L0B, TP_BF16, MM, MM) ||
	    tp_local_tile(&c0, TP_MEM_L0C, TP_FP32, MM, MM))
		return;
	tp_copy_in(&l1a, &ga);
	tp_copy_in(&l1b, &gb);
	tp_load_l0(&a0, &l1a, 0);
	tp_load_l0(&b0, &l1b, 0);
	tp_mmad(&c0, &a0, &b0, 0);
	tp_fixpipe(&gc, &c0);
}

static void nop_kernel(uint32_t b, uint32_t n, void *p)
{
	(void)b, (void)n, (void)p;
}

/* ---- helpers --------------------------------------------------------------- */

struct vec_bufs {
	float *x, *y, *z; /* device */
	uint32_t blocks;
};

static void vec_alloc(struct vec_bufs *v, uint32_t blocks)
{
	size_t n = (size_t)blocks * VR * VC, bytes = n * sizeof(float);
	v->blocks = blocks;
	assert_int_equal(tp_rt_malloc((void **)&v->x, bytes), 0);
	assert_int_equal(tp_rt_malloc((void **)&v->y, bytes), 0);
	assert_int_equal(tp_rt_malloc((void **)&v->z, bytes), 0);
	float *h = malloc(bytes);
	for (size_t i = 0; i < n; i++)
		h[i] = (float)(i % 1000);
	assert_int_equal(tp_rt_memcpy(v->x, h, bytes, TP_RT_MEMCPY_HOST_TO_DEVICE), 0);
	for (size_t i = 0; i < n; i++)
		h[i] = 0.5f;
	assert_int_equal(tp_rt_memcpy(v->y, h, bytes, TP_RT_MEMCPY_HOST_TO_DEVICE), 0);
	free(h);
}

static void vec_check_free(struct vec_bufs *v)
{
	size_t n = (size_t)v->blocks * VR * VC, bytes = n * sizeof(float);
	float *h = malloc(bytes);
	assert_int_equal(tp_rt_memcpy(h, v->z, bytes, TP_RT_MEMCPY_DEVICE_TO_HOST), 0);
	for (size_t i = 0; i < n; i++)
		assert_true(h[i] == (float)(i % 1000) + 0.5f);
	free(h);
	assert_int_equal(tp_rt_free(v->x), 0);
	assert_int_equal(tp_rt_free(v->y), 0);
	assert_int_equal(tp_rt_free(v->z), 0);
}

static void check_header(const struct tp_op_rec *r, int dev, uint32_t ch, uint32_t pass)
{
	assert_int_equal(r->magic, TP_OP_REC_MAGIC);
	assert_int_equal(r->version, TP_OP_REC_VERSION);
	assert_int_equal(r->size, REC);
	assert_int_equal(r->device, dev);
	assert_int_equal(r->channel, ch);
	assert_int_equal(r->pass, pass);
}

static uint32_t pmu_idx(int core, int slot)
{
	struct tp_device *dev = tp_rt_internal_device(0);
	return tp_reg_read(dev, core, TP_REG_PMU(tp_device_platform(dev)->pmu.cnt_idx[slot]));
}

/* ---- AICORE_PMU + TASK_TIME with exact values -------------------------------- */

struct expect {
	uint16_t id;
	uint64_t value;   /* exact, unless at_least */
	bool at_least;
};

static void pmu_values_on(const char *plat)
{
	use_platform(plat);
	const bool a5 = strcmp(plat, "a5sim") == 0;
	const int reps = 3;
	/* a2a3 (DAV_2201) / a5 (DAV_3510) ids of docs/pmu.md. */
	const struct expect e2[] = {
		{ 0x0f, 2 * VREQ, false },            /* GM read reqs: two copy_in */
		{ 0x10, VREQ, false },                /* GM write reqs: one copy_out */
		{ 0x3e, 2 * VREQ, false },            /* UB written by MTE (MTE2) */
		{ 0x3d, VREQ, false },                /* UB read by MTE (MTE3) */
		{ 0x43, (uint64_t)reps * 2 * VREQ, false }, /* UB read by VEC */
		{ 0x44, (uint64_t)reps * VREQ, false },     /* UB written by VEC */
		{ 0x4b, (uint64_t)reps * (VBYTES / 256), false }, /* fp32 VEC instr */
		{ 0x08, 1, true },                    /* VEC busy cycles */
	};
	const struct expect e5[] = {
		{ 0x400, 2 * VREQ, false },
		{ 0x401, VREQ, false },
		{ 0x206, 2 * VREQ, false },
		{ 0x204, VREQ, false },
		{ 0x571, (uint64_t)reps * 2 * VREQ, false },
		{ 0x572, (uint64_t)reps * VREQ, false },
		/* every instruction: 2 copy_in + 1 copy_out + 8 per vadd */
		{ 0x3528, 3 + (uint64_t)reps * (VBYTES / 256), false },
		{ 0x501, 1, true },
		{ 0x000, 0, false },                  /* id 0 is valid, not modelled */
		{ 0x202, 1, true },                   /* MTE2 busy */
	};
	const struct expect *ex = a5 ? e5 : e2;
	const uint32_t nev = a5 ? 10 : 8;

	struct tp_drv_prof_config cfg = { .pass = 2, .n_aic = 2, .n_aiv = nev };
	cfg.aic_events[0] = a5 ? 0x301 : 0x0a; /* CUBE busy */
	cfg.aic_events[1] = a5 ? 0x202 : 0x0c; /* MTE2 busy */
	for (uint32_t i = 0; i < TP_DRV_PROF_MAX_EVENTS; i++)
		cfg.aiv_events[i] = i < nev ? ex[i].id : TP_EV_NONE;
	uint32_t before = pmu_idx(8, 0);

	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, &cfg), 0);
	struct tp_drv_prof_config tcfg = { .pass = 2 };
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_TASK_TIME, &tcfg), 0);
	/* the selection is programmed at start */
	for (uint32_t i = 0; i < nev; i++)
		assert_int_equal(pmu_idx(8, (int)i), ex[i].id);
	assert_int_equal(pmu_idx(0, 0), cfg.aic_events[0]);
	assert_int_equal(pmu_idx(0, 2), TP_EV_NONE);

	struct tp_rt_tool_stats st0;
	assert_int_equal(tp_rt_tool_device_stats(0, &st0), 0);
	const uint32_t blocks = 40; /* > 16 AIV cores: blocks wait for one */
	struct vec_bufs v;
	vec_alloc(&v, blocks);
	struct vec_args va = { v.x, v.y, v.z, reps };
	struct tp_rt_launch_attr attr = { "vec_add", TP_RT_CORES_AIV };
	assert_int_equal(tp_rt_launch_ex(vec_kernel, blocks, &va, &attr), 0);
	vec_check_free(&v);

	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_AICORE_PMU), 0);
	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_TASK_TIME), 0);
	/* the previous selection is back */
	assert_int_equal(pmu_idx(8, 0), before);
	assert_int_equal(pmu_idx(0, 0), before);

	static struct tp_op_rec r[128];
	size_t n = drain(0, TP_DRV_CH_AICORE_PMU, r, 128);
	assert_int_equal(n, blocks + 1);
	uint8_t seen[40] = { 0 };
	for (size_t i = 0; i < blocks; i++) {
		check_header(&r[i], 0, TP_DRV_CH_AICORE_PMU, 2);
		assert_int_equal(r[i].kind, TP_OP_REC_BLOCK);
		assert_true(r[i].block_id < blocks);
		seen[r[i].block_id]++;
		assert_int_equal(r[i].core_type, 1);
		assert_true(r[i].core_id >= 8 && r[i].core_id < 24);
		assert_int_equal(r[i].sub_block, 0);
		assert_int_equal(r[i].seq, st0.launches + 1);
		assert_true(r[i].t_end >= r[i].t_start && r[i].t_start > 0);
		assert_int_equal(r[i].n_events, nev);
		uint64_t busy = 0;
		for (uint32_t k = 0; k < TP_DRV_PROF_MAX_EVENTS; k++) {
			if (k >= nev) {
				assert_int_equal(r[i].event_id[k], TP_EV_NONE);
				assert_int_equal(r[i].value[k], 0);
				continue;
			}
			assert_int_equal(r[i].event_id[k], ex[k].id);
			if (ex[k].at_least) {
				assert_true(r[i].value[k] >= ex[k].value);
				busy += r[i].value[k];
			} else {
				assert_int_equal(r[i].value[k], ex[k].value);
			}
		}
		/* the window's total covers every busy cycle it counted */
		assert_true(r[i].total_cycles >= busy && r[i].total_cycles > 0);
	}
	for (uint32_t b = 0; b < blocks; b++)
		assert_int_equal(seen[b], 1);
	check_header(&r[blocks], 0, TP_DRV_CH_AICORE_PMU, 2);
	assert_int_equal(r[blocks].kind, TP_OP_REC_END_OF_PASS);
	assert_int_equal(r[blocks].seq, blocks);
	assert_int_equal(r[blocks].total_cycles, 0);
	assert_int_equal(r[blocks].core_id, -1);
	assert_int_equal(r[blocks].n_events, 0);
	/* drained: the channel is idle */
	assert_int_equal(tp_drv_prof_channel_read(0, TP_DRV_CH_AICORE_PMU, r, sizeof(r)),
			 -ENOENT);

	n = drain(0, TP_DRV_CH_TASK_TIME, r, 128);
	assert_int_equal(n, 2);
	check_header(&r[0], 0, TP_DRV_CH_TASK_TIME, 2);
	assert_int_equal(r[0].kind, TP_OP_REC_LAUNCH);
	assert_int_equal(r[0].block_id, blocks);
	assert_int_equal(r[0].core_id, -1);
	assert_int_equal(r[0].seq, st0.launches + 1);
	assert_true(r[0].t_end > r[0].t_start);
	assert_int_equal(r[1].kind, TP_OP_REC_END_OF_PASS);
	assert_int_equal(r[1].seq, 1);
	assert_true(r[1].t_start >= r[0].t_end);
	printf("%s: 40 AIV blocks, %u events each exact; LAUNCH %.1f us\n", plat, nev,
	       (double)tp_sys_cnt_to_ns(r[0].t_end - r[0].t_start) / 1e3);

	/* AIC: the cube kernel's records are AIC records with the AIC ids. */
	static uint16_t ones[MM * MM];
	for (size_t i = 0; i < MM * MM; i++)
		ones[i] = 0x3f80; /* bf16 1.0 */
	struct mm_args mm;
	assert_int_equal(tp_rt_malloc((void **)&mm.a, sizeof(ones)), 0);
	assert_int_equal(tp_rt_malloc((void **)&mm.b, sizeof(ones)), 0);
	assert_int_equal(tp_rt_malloc((void **)&mm.c, 12 * MM * MM * 4), 0);
	assert_int_equal(tp_rt_memcpy(mm.a, ones, sizeof(ones), TP_RT_MEMCPY_HOST_TO_DEVICE), 0);
	assert_int_equal(tp_rt_memcpy(mm.b, ones, sizeof(ones), TP_RT_MEMCPY_HOST_TO_DEVICE), 0);
	cfg.pass = 5;
	cfg.n_aic = 3;
	cfg.aic_events[2] = a5 ? 0x304 : 0x1b; /* L0A reads (a5: by CUBE) / L0A reads */
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, &cfg), 0);
	struct tp_rt_launch_attr aic = { "mm", TP_RT_CORES_AIC };
	assert_int_equal(tp_rt_launch_ex(mm_kernel, 12, &mm, &aic), 0);
	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_AICORE_PMU), 0);
	n = drain(0, TP_DRV_CH_AICORE_PMU, r, 128);
	assert_int_equal(n, 13);
	for (size_t i = 0; i < 12; i++) {
		assert_int_equal(r[i].core_type, 0);
		assert_true(r[i].core_id >= 0 && r[i].core_id < 8);
		assert_int_equal(r[i].pass, 5);
		assert_int_equal(r[i].n_events, 3);
		assert_int_equal(r[i].event_id[0], cfg.aic_events[0]);
		assert_int_equal(r[i].event_id[1], cfg.aic_events[1]);
		assert_int_equal(r[i].event_id[2], cfg.aic_events[2]);
		assert_true(r[i].value[0] > 0 && r[i].value[1] > 0);
		/* the cube read its 16 x 16 bf16 L0A operand once: 512 bytes */
		assert_int_equal(r[i].value[2], 512 / 32);
	}
	float c[MM * MM];
	assert_int_equal(tp_rt_memcpy(c, mm.c + 11 * MM * MM, sizeof(c),
				      TP_RT_MEMCPY_DEVICE_TO_HOST), 0);
	for (size_t i = 0; i < MM * MM; i++)
		assert_true(c[i] == 16.0f);
	assert_int_equal(tp_rt_free(mm.a), 0);
	assert_int_equal(tp_rt_free(mm.b), 0);
	assert_int_equal(tp_rt_free(mm.c), 0);
}

static void test_pmu_values_a2a3sim(void **state)
{
	(void)state;
	pmu_values_on("a2a3sim");
}

static void test_pmu_values_a5sim(void **state)
{
	(void)state;
	pmu_values_on("a5sim");
	use_platform("a2a3sim");
}

/* ---- errors and the state machine ------------------------------------------ */

static void test_errors(void **state)
{
	(void)state;
	struct tp_drv_prof_config cfg = { .pass = 0, .n_aic = 1, .n_aiv = 1 };
	cfg.aic_events[0] = 0x0a;
	cfg.aiv_events[0] = 0x08;
	static struct tp_op_rec r[8];

	assert_int_equal(tp_drv_prof_start(0, 0, &cfg), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "channel 0 does not exist"));
	assert_int_equal(tp_drv_prof_start(0, 3, &cfg), -EINVAL);
	assert_int_equal(tp_drv_prof_start(-1, 1, &cfg), -ENODEV);
	assert_int_equal(tp_drv_prof_start(TP_RT_MAX_DEVICES, 1, &cfg), -ENODEV);
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, NULL), -EINVAL);
	cfg.n_aiv = 9; /* a2a3 has 8 slots */
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, &cfg), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "8 counter slots"));
	cfg.n_aiv = 1;

	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_AICORE_PMU), -ENOENT);
	assert_int_equal(tp_drv_prof_stop(2, TP_DRV_CH_TASK_TIME), -ENOENT); /* not open */
	assert_null(tp_rt_internal_device(2));
	assert_int_equal(tp_drv_prof_channel_read(0, 1, r, sizeof(r)), -ENOENT);
	assert_int_equal(tp_drv_prof_channel_read(0, 1, NULL, sizeof(r)), -EINVAL);
	assert_int_equal(tp_drv_prof_channel_read(0, 9, r, sizeof(r)), -EINVAL);
	assert_int_equal(tp_drv_prof_channel_read(7, 1, r, sizeof(r)), -ENODEV);

	/* TASK_TIME takes NULL (pass 0) */
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_TASK_TIME, NULL), 0);
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_TASK_TIME, NULL), -EBUSY);
	assert_non_null(strstr(tp_last_error(), "already started"));
	assert_int_equal(tp_drv_prof_channel_read(0, 2, r, REC - 1), -EINVAL);
	assert_int_equal(tp_drv_prof_channel_read(0, 2, r, sizeof(r)), 0); /* empty */
	assert_int_equal(tp_rt_launch(nop_kernel, 3, NULL), 0);
	assert_true(tp_op_chan_started(0, TP_DRV_CH_TASK_TIME));
	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_TASK_TIME), 0);
	assert_false(tp_op_chan_started(0, TP_DRV_CH_TASK_TIME));
	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_TASK_TIME), -ENOENT);
	/* stopped, END_OF_PASS not read yet */
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_TASK_TIME, NULL), -EBUSY);
	assert_non_null(strstr(tp_last_error(), "END_OF_PASS has not been read"));
	/* one record at a time: whole records only */
	assert_int_equal(tp_drv_prof_channel_read(0, 2, r, REC + REC / 2), (int)REC);
	assert_int_equal(r[0].kind, TP_OP_REC_LAUNCH);
	assert_int_equal(r[0].pass, 0);
	assert_int_equal(r[0].block_id, 3);
	assert_int_equal(tp_drv_prof_channel_read(0, 2, r, sizeof(r)), (int)REC);
	assert_int_equal(r[0].kind, TP_OP_REC_END_OF_PASS);
	assert_int_equal(r[0].seq, 1);
	assert_int_equal(tp_drv_prof_channel_read(0, 2, r, sizeof(r)), -ENOENT);
	/* restart after the END_OF_PASS was read */
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_TASK_TIME, NULL), 0);
	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_TASK_TIME), 0);
	assert_int_equal(drain(0, 2, r, 8), 1);
	assert_int_equal(r[0].seq, 0);

	/* poll argument errors */
	struct tp_drv_prof_poll_info pi[2];
	assert_int_equal(tp_drv_prof_channel_poll(NULL, 1, 0), -EINVAL);
	assert_int_equal(tp_drv_prof_channel_poll(pi, 0, 0), -EINVAL);
	assert_int_equal(tp_drv_prof_channel_poll(pi, 2, -1), -EINVAL);
	assert_int_equal(tp_drv_prof_channel_poll(pi, 2, 0), 0);

	/* a5sim has 10 slots */
	use_platform("a5sim");
	cfg.n_aiv = 10;
	cfg.n_aic = 11;
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, &cfg), -EINVAL);
	cfg.n_aic = 10;
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, &cfg), 0);
	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_AICORE_PMU), 0);
	assert_int_equal(drain(0, 1, r, 8), 1);
	use_platform("a2a3sim");
}

/* ---- poll ------------------------------------------------------------------ */

struct poller {
	int rc;
	uint64_t ms;
	atomic_int done;
};

static void *poll_thread(void *arg)
{
	struct poller *p = arg;
	struct tp_drv_prof_poll_info pi[4];
	uint64_t t0 = now_ms();
	p->rc = tp_drv_prof_channel_poll(pi, 4, 10000);
	p->ms = now_ms() - t0;
	atomic_store(&p->done, 1);
	return NULL;
}

static void test_poll(void **state)
{
	(void)state;
	struct tp_drv_prof_poll_info pi[8];
	/* timeout */
	uint64_t t0 = now_ms();
	assert_int_equal(tp_drv_prof_channel_poll(pi, 8, 120), 0);
	uint64_t el = now_ms() - t0;
	assert_true(el >= 110 && el < 2000);

	/* wake: a wake only reaches a poller already waiting (it is not
	 * latched), and under TSan on a loaded machine the thread may not
	 * have got there 100 ms after its creation; so the wake is repeated
	 * every 100 ms until the poller returns. Its own time in the poll
	 * (p.ms, from its call) stays far below the 10 s timeout only if a
	 * wake ended it. */
	struct poller p = { -99, 0, 0 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, poll_thread, &p), 0);
	uint64_t w0 = now_ms();
	int wakes = 0;
	do {
		sleep_ms(100);
		tp_drv_prof_poll_wake();
		wakes++;
	} while (!atomic_load(&p.done) && now_ms() - w0 < 30000);
	pthread_join(th, NULL);
	assert_int_equal(p.rc, 0);
	assert_true(p.ms < 5000);
	printf("poll: timeout after %llu ms, woken after %llu ms (%d wakes)\n",
	       (unsigned long long)el, (unsigned long long)p.ms, wakes);

	/* a record wakes a poller, routed by device and channel */
	assert_int_equal(tp_drv_prof_start(1, TP_DRV_CH_TASK_TIME, NULL), 0);
	p.rc = -99;
	assert_int_equal(pthread_create(&th, NULL, poll_thread, &p), 0);
	sleep_ms(50);
	assert_int_equal(tp_rt_set_device(1), 0);
	assert_int_equal(tp_rt_launch(nop_kernel, 2, NULL), 0);
	pthread_join(th, NULL);
	assert_int_equal(p.rc, 1);
	assert_int_equal(tp_drv_prof_channel_poll(pi, 8, 0), 1);
	assert_int_equal(pi[0].device_id, 1);
	assert_int_equal(pi[0].channel_id, TP_DRV_CH_TASK_TIME);
	/* launches on device 0 do not land in device 1's channel */
	assert_int_equal(tp_rt_set_device(0), 0);
	assert_int_equal(tp_rt_launch(nop_kernel, 2, NULL), 0);
	assert_int_equal(tp_drv_prof_stop(1, TP_DRV_CH_TASK_TIME), 0);
	static struct tp_op_rec r[8];
	assert_int_equal(drain(1, TP_DRV_CH_TASK_TIME, r, 8), 2);
	assert_int_equal(r[0].device, 1);
	assert_int_equal(r[1].seq, 1);
	assert_int_equal(tp_rt_reset_device(1), 0);
}

/* ---- a small ring and a slow reader --------------------------------------- */

struct reader {
	size_t blocks, eop, other;
	uint64_t eop_seq, eop_dropped;
	uint64_t waits0; /* tp_op_chan_full_waits() before the launch */
	uint8_t *seen;
	uint32_t n;
	bool bad;
};

static void *slow_reader(void *arg)
{
	struct reader *rd = arg;
	struct tp_op_rec buf[5];
	uint64_t t0 = now_ms();
	/* Nothing is read until a producer has waited on the full ring: the
	 * reader's pace alone did not make it fill under TSan on a loaded
	 * machine, where the device's blocks came slower than this reader
	 * took them (1 run in 5 of a stress run saw no wait). A ring that
	 * never makes its producers wait leaves this at the deadline (20 s,
	 * below the 30 s backstop, so nothing is dropped meanwhile). */
	while (tp_op_chan_full_waits() == rd->waits0 && now_ms() - t0 < 20000)
		sleep_ms(1);
	while (!rd->eop && now_ms() - t0 < 60000) {
		struct tp_drv_prof_poll_info pi[4];
		if (tp_drv_prof_channel_poll(pi, 4, 100) <= 0)
			continue;
		int got = tp_drv_prof_channel_read(0, TP_DRV_CH_AICORE_PMU, buf, sizeof(buf));
		if (got < 0) {
			rd->bad = true;
			return NULL;
		}
		for (int i = 0; i < got / (int)REC; i++) {
			if (buf[i].kind == TP_OP_REC_BLOCK && buf[i].block_id < rd->n) {
				rd->blocks++;
				rd->seen[buf[i].block_id]++;
			} else if (buf[i].kind == TP_OP_REC_END_OF_PASS) {
				rd->eop++;
				rd->eop_seq = buf[i].seq;
				rd->eop_dropped = buf[i].total_cycles;
			} else {
				rd->other++;
			}
		}
		/* slower than the device: the ring fills, producers wait */
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void test_slow_reader_loses_nothing(void **state)
{
	(void)state;
	tp_op_chan_set_capacity(16);
	struct tp_drv_prof_config cfg = { .pass = 1, .n_aic = 1, .n_aiv = 1 };
	cfg.aic_events[0] = 0x09;
	cfg.aiv_events[0] = 0x09;
	uint64_t waits0 = tp_op_chan_full_waits();
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, &cfg), 0);
	const uint32_t n = 2000;
	struct reader rd = { .seen = calloc(n, 1), .n = n, .waits0 = waits0 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, slow_reader, &rd), 0);
	assert_int_equal(tp_rt_launch(nop_kernel, n, NULL), 0);
	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_AICORE_PMU), 0);
	pthread_join(th, NULL);
	assert_false(rd.bad);
	assert_int_equal(rd.blocks, n);
	assert_int_equal(rd.other, 0);
	assert_int_equal(rd.eop, 1);
	assert_int_equal(rd.eop_seq, n);
	assert_int_equal(rd.eop_dropped, 0);
	for (uint32_t b = 0; b < n; b++)
		assert_int_equal(rd.seen[b], 1);
	uint64_t waits = tp_op_chan_full_waits() - waits0;
	assert_true(waits > 0);
	printf("ring of 16, 2000 blocks: 2000 BLOCK records, 0 dropped, %llu producer "
	       "waits on a full ring\n", (unsigned long long)waits);
	free(rd.seen);
}

static void test_backstop_drops_and_counts(void **state)
{
	(void)state;
	tp_op_chan_set_capacity(4);
	tp_op_chan_set_backstop_ms(50);
	struct tp_drv_prof_config cfg = { .pass = 9 };
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, &cfg), 0);
	uint64_t t0 = now_ms();
	tp_log_set_threshold(TP_LOG_ERROR); /* the dropped-records WARN */
	/* nobody reads: 4 records fit, the 5th waits 50 ms and is dropped,
	 * and the rest are dropped at once */
	assert_int_equal(tp_rt_launch(nop_kernel, 30, NULL), 0);
	uint64_t el = now_ms() - t0;
	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_AICORE_PMU), 0);
	tp_log_set_threshold(TP_LOG_TIMING);
	static struct tp_op_rec r[16];
	assert_int_equal(drain(0, TP_DRV_CH_AICORE_PMU, r, 16), 5);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(r[i].kind, TP_OP_REC_BLOCK);
		assert_int_equal(r[i].n_events, 0);
		assert_int_equal(r[i].event_id[0], TP_EV_NONE);
	}
	assert_int_equal(r[4].kind, TP_OP_REC_END_OF_PASS);
	assert_int_equal(r[4].seq, 4);
	assert_int_equal(r[4].total_cycles, 26);
	assert_true(el >= 45 && el < 3000);
	printf("backstop 50 ms: 4 delivered, 26 dropped, launch took %llu ms\n",
	       (unsigned long long)el);
}

/* ---- a device reset while channels run -------------------------------------- */

static void test_reset_stops_channels(void **state)
{
	(void)state;
	struct tp_drv_prof_config cfg = { .pass = 4, .n_aic = 1, .n_aiv = 1 };
	cfg.aic_events[0] = 0x0a;
	cfg.aiv_events[0] = 0x08;
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, &cfg), 0);
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_TASK_TIME, &cfg), 0);
	assert_int_equal(tp_rt_launch(nop_kernel, 24, NULL), 0);
	assert_int_equal(tp_rt_reset_device(0), 0);
	assert_null(tp_rt_internal_device(0));
	static struct tp_op_rec r[32];
	assert_int_equal(drain(0, TP_DRV_CH_AICORE_PMU, r, 32), 25);
	assert_int_equal(r[24].kind, TP_OP_REC_END_OF_PASS);
	assert_int_equal(r[24].seq, 24);
	assert_int_equal(drain(0, TP_DRV_CH_TASK_TIME, r, 32), 2);
	assert_int_equal(r[1].seq, 1);
	assert_int_equal(r[1].pass, 4);
	/* the device reopens; the channels start again on it */
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, &cfg), 0);
	assert_non_null(tp_rt_internal_device(0));
	assert_int_equal(tp_rt_launch(nop_kernel, 5, NULL), 0);
	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_AICORE_PMU), 0);
	assert_int_equal(drain(0, TP_DRV_CH_AICORE_PMU, r, 32), 6);
	assert_int_equal(r[0].seq, 1); /* a new device counts from 1 */
	/* a reset with undrained records, never read: freed at exit (ASan) */
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_TASK_TIME, NULL), 0);
	assert_int_equal(tp_rt_launch(nop_kernel, 5, NULL), 0);
	assert_int_equal(tp_rt_reset_device(0), 0);
	assert_int_equal(tp_rt_set_device(0), 0);
}


/* ---- concurrent launchers, both channels, one reader ---------------------- */

#define CL_THREADS 2
#define CL_LAUNCHES 20
#define CL_BLOCKS 30

static void *launcher(void *arg)
{
	int *rc = arg;
	for (int i = 0; i < CL_LAUNCHES && *rc == 0; i++)
		*rc = tp_rt_launch(nop_kernel, CL_BLOCKS, NULL);
	return NULL;
}

struct both_reader {
	uint32_t blocks_of[CL_THREADS * CL_LAUNCHES + 2]; /* by seq */
	uint64_t launch_mask;                              /* seqs of LAUNCH records */
	int eop, bad;
};

static void *both_reader_main(void *arg)
{
	struct both_reader *br = arg;
	struct tp_op_rec buf[7];
	uint64_t t0 = now_ms();
	while (br->eop < 2 && now_ms() - t0 < 60000) {
		struct tp_drv_prof_poll_info pi[4];
		int n = tp_drv_prof_channel_poll(pi, 4, 100);
		for (int k = 0; k < n; k++) {
			int got = tp_drv_prof_channel_read(pi[k].device_id, pi[k].channel_id, buf,
							   sizeof(buf));
			for (int i = 0; i < got / (int)REC; i++) {
				const struct tp_op_rec *r = &buf[i];
				if (r->kind == TP_OP_REC_END_OF_PASS)
					br->eop++;
				else if (r->seq < 1 || r->seq > CL_THREADS * CL_LAUNCHES)
					br->bad++;
				else if (r->kind == TP_OP_REC_BLOCK)
					br->blocks_of[r->seq]++;
				else
					br->launch_mask |= 1ull << r->seq;
			}
		}
	}
	return NULL;
}

static void test_concurrent_launchers(void **state)
{
	(void)state;
	tp_op_chan_set_capacity(32);
	assert_int_equal(tp_rt_reset_device(0), 0); /* launch seqs from 1 */
	struct tp_drv_prof_config cfg = { .pass = 1, .n_aic = 1, .n_aiv = 1 };
	cfg.aic_events[0] = 0x0a;
	cfg.aiv_events[0] = 0x08;
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, &cfg), 0);
	assert_int_equal(tp_drv_prof_start(0, TP_DRV_CH_TASK_TIME, &cfg), 0);
	static struct both_reader br;
	memset(&br, 0, sizeof(br));
	pthread_t rt, lt[CL_THREADS];
	int rc[CL_THREADS] = { 0 };
	assert_int_equal(pthread_create(&rt, NULL, both_reader_main, &br), 0);
	for (int i = 0; i < CL_THREADS; i++)
		assert_int_equal(pthread_create(&lt[i], NULL, launcher, &rc[i]), 0);
	for (int i = 0; i < CL_THREADS; i++) {
		pthread_join(lt[i], NULL);
		assert_int_equal(rc[i], 0);
	}
	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_AICORE_PMU), 0);
	assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_TASK_TIME), 0);
	pthread_join(rt, NULL);
	assert_int_equal(br.eop, 2);
	assert_int_equal(br.bad, 0);
	for (int s = 1; s <= CL_THREADS * CL_LAUNCHES; s++) {
		assert_int_equal(br.blocks_of[s], CL_BLOCKS);
		assert_true(br.launch_mask & (1ull << s));
	}
	struct tp_rt_tool_stats st;
	assert_int_equal(tp_rt_tool_device_stats(0, &st), 0);
	assert_int_equal(st.launches, CL_THREADS * CL_LAUNCHES);
	assert_int_equal(st.blocks, CL_THREADS * CL_LAUNCHES * CL_BLOCKS);
	printf("2 launcher threads x 20 launches x 30 blocks: every seq has its 30 BLOCK "
	       "records and its LAUNCH record\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pmu_values_a2a3sim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pmu_values_a5sim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slow_reader_loses_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backstop_drops_and_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_stops_channels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_launchers, setup, teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	for (int i = 0; i < TP_RT_MAX_DEVICES; i++)
		tp_rt_reset_device(i);
	return rc;
}
