/* SPDX-License-Identifier: MIT */
/*
 * platform/platform.h — descriptors of the two simulated platforms.
 *
 * A descriptor is a constant table of the numbers in which a2a3sim and
 * a5sim differ (ARCHITECTURE.md §1, spec/runtime-model.md §1.3,
 * spec/pmu.md §1.2–§1.5). Everything that depends on the platform reads it
 * from here; nothing else in taskprof tests a platform name.
 *
 *                         a2a3sim                a5sim
 *   PMU counter slots     8 (DAV_2201)           10 (DAV_3510)
 *   counters read by      AICPU after FIN        AICore, staged in a ring
 *   transport             shared mapping         host shadow (copy ops)
 *   system counter        50 MHz                 1 GHz
 *   AICPU threads         max 4, launch 6        max 7, launch 14
 *   block_dim (clusters)  max 24, default 8      max 36, default 8
 *   RUNTIME_MAX_WORKER    72                     108
 *   HBG dummy-task path   yes                    no
 */
#ifndef TASKPROF_PLATFORM_PLATFORM_H
#define TASKPROF_PLATFORM_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>

/* Most PMU counter slots of any platform (a5: 10). */
#define TP_PMU_MAX_SLOTS 10

/* Default topology of both sim platforms (runtime-model.md §1.3 and
 * issue 3): 8 clusters (8 AIC + 16 AIV), 4 AICPU threads (1 orchestrator
 * + 3 schedulers). */
#define TP_PLATFORM_DEFAULT_BLOCK_DIM 8
#define TP_PLATFORM_DEFAULT_AICPU_THREADS 4

/* Marks an absent PMU register in a tp_pmu_regmap (a2a3 has no
 * PMU_CTRL_1 and only 8 counters). */
#define TP_PMU_REG_ABSENT 0xFFFFFFFFu

/* How the host sees device memory (seed 004 §8, ARCHITECTURE.md §1). */
enum tp_transport_kind {
	/* a2a3: the host reads device buffers directly. */
	TP_TRANSPORT_SHARED_MAPPING = 0,
	/* a5: the host keeps malloc'd shadows and moves bytes only with
	 * copy_to_device / copy_from_device. */
	TP_TRANSPORT_HOST_SHADOW = 1,
};

/* Who reads the PMU counters at task end (spec/pmu.md §4.2, §6). */
enum tp_pmu_reader {
	/* a2a3: the AICPU reads the core's registers after FIN. */
	TP_PMU_READ_BY_AICPU = 0,
	/* a5: the AICore reads them into a 2-slot dual-issue ring. */
	TP_PMU_READ_BY_AICORE = 1,
};

/**
 * struct tp_pmu_regmap - byte offsets of the PMU MMIO registers inside a
 * core's PMU block (spec/pmu.md §1.5). Absent registers are
 * TP_PMU_REG_ABSENT. Use them with TP_REG_PMU() of platform/regs.h.
 */
struct tp_pmu_regmap {
	uint32_t ctrl0;                       /* PMU_CTRL_0 */
	uint32_t ctrl1;                       /* PMU_CTRL_1 (a5 only) */
	uint32_t cnt[TP_PMU_MAX_SLOTS];       /* PMU_CNT0..N-1 */
	uint32_t cnt_total0, cnt_total1;      /* PMU_CNT_TOTAL low / high 32 bits */
	uint32_t start_cyc0, start_cyc1;      /* PMU_START_CYC0/1 */
	uint32_t stop_cyc0, stop_cyc1;        /* PMU_STOP_CYC0/1 */
	uint32_t cnt_idx[TP_PMU_MAX_SLOTS];   /* PMU_CNT0_IDX..N-1_IDX (event selectors) */
	uint32_t ctrl0_enable_val;            /* REG_MMIO_PMU_CTRL_0_ENABLE_VAL (0x7) */
	uint32_t ctrl1_enable_val;            /* REG_MMIO_PMU_CTRL_1_ENABLE_VAL (a5: 0x1, a2a3: 0) */
	uint32_t block_bytes;                 /* size of the PMU block, bytes (multiple of 4) */
};

/**
 * struct tp_platform - one simulated platform (spec/framework.md §1.1,
 * spec/runtime-model.md §1.3). All fields are constants; the values
 * beside each field are a2a3sim / a5sim.
 */
struct tp_platform {
	const char *name;             /* "a2a3sim" / "a5sim" */
	const char *arch;             /* "a2a3" / "a5" */
	const char *pmu_event_space;  /* "DAV_2201" / "DAV_3510" */
	int pmu_slots;                /* PMU counter slots: 8 / 10 */
	enum tp_pmu_reader pmu_reader;
	enum tp_transport_kind transport;
	uint64_t sys_cnt_freq_hz;     /* PLATFORM_PROF_SYS_CNT_FREQ: 50e6 / 1e9 */
	int max_aicpu_threads;        /* PLATFORM_MAX_AICPU_THREADS: 4 / 7 */
	int aicpu_launch_threads;     /* ..._JUST_FOR_LAUNCH: 6 / 14 */
	int default_aicpu_threads;    /* 4 on both */
	int max_block_dim;            /* PLATFORM_MAX_BLOCKDIM: 24 / 36 clusters */
	int default_block_dim;        /* SIM_AUTO_BLOCKDIM: 8 clusters */
	int max_workers;              /* RUNTIME_MAX_WORKER: 72 / 108 cores */
	/* host_build_graph has the dummy-task phase path: its schedulers
	 * emit the dummy bar and the dummy_task / predicated_skip markers
	 * as tensormap_and_ringbuffer does (seed 002 §2, §8): a2a3 yes,
	 * a5 no. */
	bool hbg_dummy_path;
	struct tp_pmu_regmap pmu;     /* PMU MMIO offsets */
};

/**
 * tp_platform_a2a3sim() / tp_platform_a5sim() - the two descriptors.
 *
 * Return: a pointer to a static constant descriptor; never NULL.
 */
const struct tp_platform *tp_platform_a2a3sim(void);
const struct tp_platform *tp_platform_a5sim(void);

/**
 * tp_platform_find() - look a platform up by name.
 * @name: "a2a3sim" or "a5sim" (exact, case-sensitive, as on the command
 *        line: `-p a2a3sim|a5sim`, ARCHITECTURE.md §5).
 *
 * Return: the descriptor, or NULL when @name is NULL or unknown; then
 * tp_last_error() says "unknown platform 'NAME' (expected a2a3sim or
 * a5sim)" and the error code is -EINVAL.
 */
const struct tp_platform *tp_platform_find(const char *name);

/**
 * tp_platform_names() - the accepted names, for help texts.
 *
 * Return: "a2a3sim, a5sim" (a static string).
 */
const char *tp_platform_names(void);

#endif /* TASKPROF_PLATFORM_PLATFORM_H */
