/* SPDX-License-Identifier: MIT */
/*
 * collectors/swimlane/swl_records.h — the L2 swimlane device records and
 * the pool's buffer kinds, shared by the device half (swl_dev.h) and the
 * host half (swl_host.h). Seed 002 §5.1, spec/swimlane-format.md §1.10.
 *
 * Sizes are fixed (32 / 32 / 64 / 32 bytes) and checked at compile time.
 * Timestamps are tp_sys_cnt() ticks of the platform's system counter.
 */
#ifndef TASKPROF_COLLECTORS_SWIMLANE_RECORDS_H
#define TASKPROF_COLLECTORS_SWIMLANE_RECORDS_H

#include <stdint.h>

/* --enable-l2-swimlane levels (seed 002 §3.1). */
enum swl_level {
	SWL_LEVEL_OFF = 0,
	SWL_LEVEL_AICORE_TIMING = 1, /* AICore start / end / receive, task token */
	SWL_LEVEL_AICPU_TIMING = 2,  /* + AICPU dispatch / finish */
	SWL_LEVEL_SCHED_PHASES = 3,  /* + scheduler phases, core_to_thread */
	SWL_LEVEL_ORCH_PHASES = 4,   /* + orchestrator submits */
};

/* The four buffer kinds of the one swimlane pool (seed 002 §5.2). */
enum swl_kind {
	SWL_KIND_AICPU_TASK = 0,  /* per core, AICPU writes on FIN */
	SWL_KIND_SCHED_PHASE = 1, /* per AICPU thread */
	SWL_KIND_ORCH_PHASE = 2,  /* per orchestrator thread (one) */
	SWL_KIND_AICORE_TASK = 3, /* per core; AICore writes (a2a3), AICPU
				   * commits the staging slot (a5) */
	SWL_KINDS = 4,
};

/* Scheduler phase kinds, the device enum of spec §1.6 (value 3 unused). */
enum swl_sched_kind {
	SWL_SCHED_COMPLETE = 0,
	SWL_SCHED_DISPATCH = 1,
	SWL_SCHED_RELEASE = 2,
	SWL_SCHED_DUMMY = 4,
	SWL_SCHED_EARLY_DISPATCH = 5,
	SWL_SCHED_RESOLVE = 6,
	SWL_SCHED_DUMMY_TASK = 7,
	SWL_SCHED_DRAIN = 8,
	SWL_SCHED_DRAIN_PREPARE = 9,
	SWL_SCHED_DRAIN_PUBLISH = 10,
	SWL_SCHED_ASYNC_POLL = 11,
	SWL_SCHED_PREDICATED_SKIP = 12,
};

/* Geometry (spec/framework.md §1.2, seed 002 §5.1). */
#define SWL_PROF_BUFFER_SIZE 1000u    /* PLATFORM_PROF_BUFFER_SIZE, records */
#define SWL_AICORE_BUFFER_SIZE 1024u  /* PLATFORM_AICORE_BUFFER_SIZE, records */
/* Scheduler and orchestrator phase buffers, records: larger than the
 * reference's PLATFORM_PROF_BUFFER_SIZE. The orchestrator's one instance
 * takes a record per task, 24 times the rate of a per-core instance, and a
 * scheduler's a record per phase: with 1000-record buffers they switched
 * buffers every few hundred µs, and the orchestrator writer of
 * bench_swimlane -D parked at its pop gate while the host recycled
 * (docs/swimlane.md "How it is collected"). */
#define SWL_PHASE_BUFFER_SIZE 4096u
#define SWL_SLOT_COUNT 4u             /* PLATFORM_PROF_SLOT_COUNT */
#define SWL_BUFFERS_PER_INSTANCE 4u   /* PLATFORM_AICORE_BUFFERS_PER_CORE */

/**
 * struct swl_aicore_rec - L2SwimlaneAicoreTaskRecord, 32 bytes
 * (spec/swimlane-format.md §1.4, §1.10). Times in ticks.
 */
struct swl_aicore_rec {
	uint64_t start;          /* right before the kernel */
	uint64_t end;            /* right after the kernel */
	uint64_t task_token;     /* (ring_id << 32) | local_id */
	uint32_t reg_task_id;    /* per-core dispatch token: the join key */
	uint32_t recv_to_start;  /* start - receive, ticks (saturated) */
};

/**
 * struct swl_aicpu_rec - L2SwimlaneAicpuTaskRecord, 32 bytes
 * (spec/swimlane-format.md §1.5, §1.10). Times in ticks.
 */
struct swl_aicpu_rec {
	uint32_t reg_task_id;
	uint32_t core_id;
	uint64_t dispatch;       /* before the DATA_MAIN_BASE write */
	uint64_t finish;         /* right after the COND load showing FIN */
	uint64_t reserved;
};

/**
 * struct swl_sched_rec - L2SwimlaneAicpuSchedPhaseRecord, 64 bytes
 * (spec/swimlane-format.md §1.6, §1.10). @start / @end in ticks.
 */
struct swl_sched_rec {
	uint64_t start;
	uint64_t end;
	uint64_t loop_iter;
	uint32_t kind;           /* enum swl_sched_kind */
	uint32_t tasks_processed;
	union {
		struct {
			uint32_t pop_hit, pop_miss;  /* dispatch */
		} pop;
		struct {
			uint32_t local_id, ring_id;  /* dummy_task, predicated_skip */
		} task;
	} u;
	int16_t shared_at_start[3]; /* ready-queue depth [AIC, AIV, MIX] */
	int16_t shared_at_end[3];
	uint8_t reserved[12];
};

/**
 * struct swl_orch_rec - L2SwimlaneAicpuOrchPhaseRecord, 32 bytes
 * (spec/swimlane-format.md §1.7, §1.10). @start / @end in ticks.
 */
struct swl_orch_rec {
	uint32_t submit_idx;
	uint32_t reserved;
	uint64_t task_id;
	uint64_t start;
	uint64_t end;
};

_Static_assert(sizeof(struct swl_aicore_rec) == 32, "AICore record is 32 bytes");
_Static_assert(sizeof(struct swl_aicpu_rec) == 32, "AICPU task record is 32 bytes");
_Static_assert(sizeof(struct swl_sched_rec) == 64, "sched phase record is 64 bytes");
_Static_assert(sizeof(struct swl_orch_rec) == 32, "orch phase record is 32 bytes");

#endif
