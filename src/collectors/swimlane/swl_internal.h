/* SPDX-License-Identifier: MIT */
/*
 * collectors/swimlane/swl_internal.h — state shared by the device half
 * (swl_dev.c) and the host half (swl_host.c). Private to the collector.
 */
#ifndef TASKPROF_COLLECTORS_SWIMLANE_INTERNAL_H
#define TASKPROF_COLLECTORS_SWIMLANE_INTERNAL_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "collectors/swimlane/swl_records.h"
#include "transport/dev_engine.h"

/**
 * struct swl_active_head - a core's active AICore buffer (device memory,
 * a2a3): the AICPU writes it before the token release that makes the
 * AICore look; the AICore reads it at receive.
 * @buf_ptr: device address of the active buffer, 0: none.
 * @seq:     bumped on every change.
 */
struct swl_active_head {
	_Atomic uint64_t buf_ptr; /* device address of the active buffer, 0: none */
	_Atomic uint32_t seq;     /* bumped on every change */
	uint32_t pad_[13];
};

/**
 * struct swl_aicore_local - the AICore's private cache of its head
 * (device memory, AICore thread only, a2a3).
 * @buf_ptr: the buffer it writes into; @seq: the head sequence it saw.
 * @slot:    next record index in @buf_ptr.
 * @rec:     the running task's record slot, NULL: none.
 */
struct swl_aicore_local {
	uint64_t buf_ptr;
	uint32_t seq;
	uint32_t slot;
	void *rec;        /* the running task's record slot, NULL: none */
	uint32_t pad_[10];
};

/**
 * struct swl_stage_slot - one slot of a staging ring, on a cache line of
 * its own: the AICore writes one slot while the AICPU reads the other
 * (dual issue), and each slot's line goes back and forth once per task.
 */
struct swl_stage_slot {
	alignas(64) struct swl_aicore_rec rec;
};

/**
 * struct swl_stage_ring - a core's staging ring (device memory, a5),
 * indexed by reg_task_id & 1: the AICore writes, the AICPU reads after
 * the FIN (swl_dev.h); the FIN's release/acquire pair publishes the slot.
 */
struct swl_stage_ring {
	struct swl_stage_slot dual_issue_slots[2];
};

/**
 * struct swl_core - AICPU-side state of one core, touched only by its
 * owning scheduler. Cache-line aligned: neighbouring cores may belong to
 * other scheduler threads, which write their own entries on every
 * dispatch and FIN. Counts are tasks / records.
 */
struct swl_core {
	alignas(64) struct tp_dpe aicpu_w; /* kind 0 */
	struct tp_dpe aicore_w; /* kind 3: a2a3 active buffer / a5 commit writer */
	int attached;           /* 0 not yet, 1 ok, -1 failed */
	uint32_t head_seq;      /* a2a3: last sequence published in the head */
	uint64_t n_disp, n_fin; /* a2a3: dispatches / FINs on this core */
	/* a2a3: a full buffer waiting for the FINs of its tasks. */
	struct tp_buf_hdr *retire;
	uint32_t retire_n, retire_seq;
	uint64_t retire_at;     /* publish once n_fin >= retire_at */
	uint64_t lost;          /* records lost because the core could not attach */
	/* a5: FINed tasks whose staged record is still to be committed, by
	 * slot (reg_task_id & 1): bit set, its reg_task_id in staged_reg. */
	uint32_t staged_reg[2];
	uint32_t staged;
};

/**
 * struct swl_thread_w - one thread's phase writer: cache-line aligned, as
 * each thread writes its own on every record.
 * @w:        the writer.
 * @attached: 0 not yet, 1 ok, -1 failed.
 */
struct swl_thread_w {
	alignas(64) struct tp_dpe w;
	int attached;
};

/**
 * struct swl_dev - the device half's state of one run (swl_dev.h); set up
 * by swl_open(). Pointers are device addresses.
 */
struct swl_dev {
	int level;
	bool shadow;            /* a5: staging ring instead of rotation */
	int num_cores;
	int num_threads;        /* AICPU threads = ready queues */
	int orch_thread;        /* ready queue of the orchestrator, -1: none */
	struct tp_shm_header *h; /* device address of the pool header */
	const int8_t *core_owner; /* scheduler thread of each core */
	struct swl_core *cores;
	struct swl_active_head *heads;   /* device, per core (a2a3) */
	struct swl_aicore_local *local;  /* device, per core (a2a3) */
	struct swl_stage_ring *rings;    /* device, per core (a5) */
	struct swl_thread_w *sched;      /* per AICPU thread */
	/* Written by the orchestrator on every submit: its own cache line,
	 * apart from the read-mostly fields above that every hook reads. */
	struct swl_thread_w orch;
};

/*
 * swl_inst_aicpu() / swl_inst_sched() / swl_inst_orch() /
 * swl_inst_aicore() / swl_num_instances() - instance layout of the pool
 * (buffer state indices): AICPU task instances 0 .. C-1 (one per core),
 * scheduler phases C .. C+T-1 (one per AICPU thread), the orchestrator
 * C+T, AICore task instances C+T+1 .. 2C+T; C cores, T threads
 * (@d->num_cores, @d->num_threads). @core: logical core id, 0 .. C-1;
 * @thread: AICPU thread index, 0 .. T-1; neither is checked.
 *
 * Return: the buffer state index of that instance; swl_num_instances():
 * their count, 2C+T+1.
 */
static inline uint32_t swl_inst_aicpu(const struct swl_dev *d, int core)
{
	(void)d;
	return (uint32_t)core;
}
static inline uint32_t swl_inst_sched(const struct swl_dev *d, int thread)
{
	return (uint32_t)(d->num_cores + thread);
}
static inline uint32_t swl_inst_orch(const struct swl_dev *d)
{
	return (uint32_t)(d->num_cores + d->num_threads);
}
static inline uint32_t swl_inst_aicore(const struct swl_dev *d, int core)
{
	return (uint32_t)(d->num_cores + d->num_threads + 1 + core);
}
static inline uint32_t swl_num_instances(int num_cores, int num_threads)
{
	return (uint32_t)(2 * num_cores + num_threads + 1);
}

#endif
