/* SPDX-License-Identifier: MIT */
/*
 * collectors/pmu/pmu_internal.h — state shared by the device half
 * (pmu_dev.c) and the host half (pmu_host.c). Private to the collector.
 *
 * Geometry (spec/framework.md §1.1, spec/pmu.md §3) mapped onto the
 * framework's generic layout (transport/layout.h):
 *   PmuRecord         struct pmu_record, 64 B on both arches
 *   PmuBuffer         one framework buffer of kind 0: the 64 B tp_buf_hdr
 *                     (its count is PmuBuffer::count) + 512 records
 *   PmuFreeQueue      tp_free_queue of the core's buffer state, 4 slots
 *   PmuBufferState    tp_buffer_state, instance = logical core
 *                     (total / dropped / mismatch counters live there)
 *   PmuReadyQueueEntry tp_ready_entry: instance = core_index, thread = q
 *   PmuAicoreRing     struct pmu_aicore_ring, a separate device allocation
 *   producer notes    struct pmu_core_note[num_cores] in the pool's
 *                     private area (device-written, read at reconcile)
 */
#ifndef TASKPROF_COLLECTORS_PMU_INTERNAL_H
#define TASKPROF_COLLECTORS_PMU_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "platform/pmu_events.h"
#include "platform/pmu_model.h"
#include "transport/dev_engine.h"

#define PMU_RECORDS_PER_BUFFER 512 /* PLATFORM_PMU_RECORDS_PER_BUFFER */
#define PMU_SLOT_COUNT 4           /* PLATFORM_PMU_SLOT_COUNT */
/* PLATFORM_PMU_BUFFERS_PER_CORE: the seed's default 4 (seed 000 §7.2),
 * not the reference code's 2 (spec/framework.md §1.1): the seed wins, and
 * the spec does not override it for the simulated platforms. With 4 the
 * free queue (4 slots) is full from open, as the reference's start-up
 * top-up made it anyway; the ready queues (MAX_CORES x this) grow to
 * 288 / 432 entries. */
#define PMU_BUFFERS_PER_CORE 4
#define PMU_AICORE_RING_SIZE 2     /* PLATFORM_PMU_AICORE_RING_SIZE */
#define PMU_TIMEOUT_SECONDS 30     /* PLATFORM_PMU_TIMEOUT_SECONDS */

/**
 * struct pmu_record - PmuRecord, 64 bytes (spec/pmu.md §3.1).
 * @task_id:          the logical 64-bit task id.
 * @func_id:          kernel function id.
 * @core_type:        0 AIC, 1 AIV.
 * @pmu_total_cycles: the core's PMU_CNT_TOTAL over the task's counting
 *                    window, in AICore cycles (TP_CORE_FREQ_HZ).
 * @pmu_counters:     event counts; a2a3 uses 0..7 (8, 9 stay 0, the
 *                    reference's 8-byte tail pad), a5 all 10.
 */
struct pmu_record {
	uint64_t task_id;
	uint32_t func_id;
	int32_t core_type; /* 0 AIC, 1 AIV */
	uint64_t pmu_total_cycles;
	uint32_t pmu_counters[TP_PMU_MAX_SLOTS];
};
_Static_assert(sizeof(struct pmu_record) == 64, "PmuRecord is 64 bytes");

/* Set in a staging slot's token word once an AICore wrote it: the ring
 * starts zeroed, so without it a first task with reg_task_id 0 would
 * match a slot nobody wrote. The low 32 bits are the register token. */
#define PMU_SLOT_WRITTEN (1ull << 63)

/**
 * struct pmu_stage_slot - one a5 dual-issue staging slot, 64 bytes
 * (spec/pmu.md §6.1): written by the AICore of the core, read by the
 * owning AICPU thread on FIN. Fields as struct pmu_record; @task_id holds
 * PMU_SLOT_WRITTEN | reg_task_id, published last.
 */
struct pmu_stage_slot {
	_Atomic uint64_t task_id; /* PMU_SLOT_WRITTEN | reg_task_id, published last */
	uint32_t reserved[2];     /* func_id / core_type are AICPU-owned */
	uint64_t pmu_total_cycles;
	uint32_t pmu_counters[TP_PMU_MAX_SLOTS];
};
_Static_assert(sizeof(struct pmu_stage_slot) == 64, "a staging slot is one record");

/**
 * struct pmu_aicore_ring - PmuAicoreRing: a core's PMU_AICORE_RING_SIZE
 * staging slots, indexed by reg_task_id & 1 (spec/pmu.md §6.1).
 */
struct pmu_aicore_ring {
	struct pmu_stage_slot dual_issue_slots[PMU_AICORE_RING_SIZE];
};

/**
 * struct pmu_core_note - seed 000 §5.1 per-core control read-back.
 * @init:  producer_note at init.
 * @close: producer_note_close at the core's finalize (code 0: none
 *         published).
 */
struct pmu_core_note {
	struct tp_pmu_note init;
	struct tp_pmu_note close;
};

/**
 * struct pmu_core - AICPU-side state of one core, touched only by its
 * owning thread (init and finalize run while no record is written) —
 * except @attached and @thread, which every thread's flush reads to find
 * its own cores. @lost counts records (FINs) not counted because the
 * writer could not attach.
 */
struct pmu_core {
	struct tp_dpe w;
	_Atomic int attached; /* 0 not yet, 1 ok, -1 failed */
	_Atomic int thread;   /* ready queue the writer publishes on */
	bool inited;   /* pmu_dev_init_core ran this run */
	bool window;   /* the core has a PMU register window */
	bool finalized;
	uint64_t lost; /* records that could not be counted (attach failed) */
};

/**
 * struct pmu_dev - the device half's state of one run (pmu_dev.h); set
 * up by pmu_open(). Pointers are device addresses.
 */
struct pmu_dev {
	enum tp_pmu_arch arch;
	bool shadow;                /* a5: AICore stages, AICPU commits */
	int num_cores;
	int num_threads;
	uint32_t event_type;
	struct tp_pmu_model *model;
	struct tp_shm_header *h;    /* device address of the pool header */
	struct pmu_core *cores;
	struct pmu_aicore_ring *rings; /* device, per core (a5) */
	struct pmu_core_note *notes;   /* device, per core (pool private area) */
};

#endif
