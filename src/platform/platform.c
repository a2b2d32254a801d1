/* SPDX-License-Identifier: MIT */
#include "platform/platform.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"

/* PMU MMIO offsets: spec/pmu.md §1.5, a2a3. Counters have a stride of 8,
 * selectors (CNTi_IDX) a stride of 4. The block covers up to CNT7_IDX
 * (0x129C); 0x1400 keeps it the size of the dispatch block. */
#define A2A3_PMU_BLOCK_BYTES 0x1400u

/* a5: counters 0..7 at 0x4210 + 8i, then CNT8/CNT9 at 0x4250/0x4254;
 * selectors at 0x2500 + 4i; highest register STOP_CYC1 at 0x42AC. */
#define A5_PMU_BLOCK_BYTES 0x4400u

static const struct tp_platform a2a3sim = {
	.name = "a2a3sim",
	.arch = "a2a3",
	.pmu_event_space = "DAV_2201",
	.pmu_slots = 8,
	.pmu_reader = TP_PMU_READ_BY_AICPU,
	.transport = TP_TRANSPORT_SHARED_MAPPING,
	.sys_cnt_freq_hz = TP_SYS_CNT_FREQ_A2A3,
	.max_aicpu_threads = 4,
	.aicpu_launch_threads = 6,
	.default_aicpu_threads = TP_PLATFORM_DEFAULT_AICPU_THREADS,
	.max_block_dim = 24,
	.default_block_dim = TP_PLATFORM_DEFAULT_BLOCK_DIM,
	.max_workers = 72,
	.hbg_dummy_path = true,
	.pmu = {
		.ctrl0 = 0x200,
		.ctrl1 = TP_PMU_REG_ABSENT,
		.cnt = { 0x210, 0x218, 0x220, 0x228, 0x230, 0x238, 0x240, 0x248,
			 TP_PMU_REG_ABSENT, TP_PMU_REG_ABSENT },
		.cnt_total0 = 0x250,
		.cnt_total1 = 0x254,
		.start_cyc0 = 0x2A0,
		.start_cyc1 = 0x2A4,
		.stop_cyc0 = 0x2A8,
		.stop_cyc1 = 0x2AC,
		.cnt_idx = { 0x1280, 0x1284, 0x1288, 0x128C, 0x1290, 0x1294,
			     0x1298, 0x129C, TP_PMU_REG_ABSENT, TP_PMU_REG_ABSENT },
		.ctrl0_enable_val = 0x7,
		.ctrl1_enable_val = 0,
		.block_bytes = A2A3_PMU_BLOCK_BYTES,
	},
};

static const struct tp_platform a5sim = {
	.name = "a5sim",
	.arch = "a5",
	.pmu_event_space = "DAV_3510",
	.pmu_slots = 10,
	.pmu_reader = TP_PMU_READ_BY_AICORE,
	.transport = TP_TRANSPORT_HOST_SHADOW,
	.sys_cnt_freq_hz = TP_SYS_CNT_FREQ_A5,
	.max_aicpu_threads = 7,
	.aicpu_launch_threads = 14,
	.default_aicpu_threads = TP_PLATFORM_DEFAULT_AICPU_THREADS,
	.max_block_dim = 36,
	.default_block_dim = TP_PLATFORM_DEFAULT_BLOCK_DIM,
	.max_workers = 108,
	.hbg_dummy_path = false,
	.pmu = {
		.ctrl0 = 0x4200,
		.ctrl1 = 0x2400,
		.cnt = { 0x4210, 0x4218, 0x4220, 0x4228, 0x4230, 0x4238, 0x4240,
			 0x4248, 0x4250, 0x4254 },
		.cnt_total0 = 0x4260,
		.cnt_total1 = 0x4264,
		.start_cyc0 = 0x42A0,
		.start_cyc1 = 0x42A4,
		.stop_cyc0 = 0x42A8,
		.stop_cyc1 = 0x42AC,
		.cnt_idx = { 0x2500, 0x2504, 0x2508, 0x250C, 0x2510, 0x2514,
			     0x2518, 0x251C, 0x2520, 0x2524 },
		.ctrl0_enable_val = 0x7,
		.ctrl1_enable_val = 0x1,
		.block_bytes = A5_PMU_BLOCK_BYTES,
	},
};

const struct tp_platform *tp_platform_a2a3sim(void)
{
	return &a2a3sim;
}

const struct tp_platform *tp_platform_a5sim(void)
{
	return &a5sim;
}

const char *tp_platform_names(void)
{
	return "a2a3sim, a5sim";
}

const struct tp_platform *tp_platform_find(const char *name)
{
	if (!name) {
		tp_set_error(-EINVAL, "platform name missing (expected a2a3sim or a5sim)");
		return NULL;
	}
	if (strcmp(name, a2a3sim.name) == 0)
		return &a2a3sim;
	if (strcmp(name, a5sim.name) == 0)
		return &a5sim;
	tp_set_error(-EINVAL, "unknown platform '%s' (expected a2a3sim or a5sim)", name);
	return NULL;
}
