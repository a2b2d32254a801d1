/* SPDX-License-Identifier: MIT */
/*
 * platform/op_chan.h — the record rings behind the driver profiling
 * channels of taskprof/rt_tool.h (seed 003 §4.3; spec/opprof.md §4.10).
 *
 * One channel per (rt device id, channel id), in a process-wide table that
 * outlives the devices: a channel stopped by a device reset keeps its
 * records and its END_OF_PASS until a reader takes them.
 *
 *   IDLE ──start──▶ STARTED ──stop──▶ STOPPED ──read END_OF_PASS──▶ IDLE
 *
 * A STARTED channel takes records from producers (AICore threads for
 * BLOCK, the launching host thread for LAUNCH) into a bounded ring of
 * `capacity` records plus one slot kept for the END_OF_PASS, so stop never
 * waits. A producer that finds the ring full waits for a reader; after the
 * backstop (30 s) it drops the record and counts it, and until a reader
 * makes room further records of that channel are dropped at once (counted
 * too) — a reader that went away must not cost 30 s per block.
 *
 * Locking: one mutex guards every channel (records are produced per block,
 * not per op, so it is not contended enough to matter), a condition
 * variable per channel wakes blocked producers and one wakes pollers.
 * Every function is thread-safe.
 */
#ifndef TASKPROF_PLATFORM_OP_CHAN_H
#define TASKPROF_PLATFORM_OP_CHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "taskprof/rt_tool.h"

/* Records a channel's ring holds (END_OF_PASS excluded). */
#define TP_OP_CHAN_DEFAULT_CAP 4096u
/* How long a producer waits on a full ring before it drops, ms. */
#define TP_OP_CHAN_BACKSTOP_MS 30000u

/** tp_op_chan_valid() - whether @channel is a channel id of rt_tool.h. */
static inline bool tp_op_chan_valid(uint32_t channel)
{
	return channel == TP_DRV_CH_AICORE_PMU || channel == TP_DRV_CH_TASK_TIME;
}

/**
 * tp_op_chan_start() - IDLE → STARTED, an empty ring of the capacity set
 * (TP_OP_CHAN_DEFAULT_CAP records by default).
 * @device:  0 .. TP_RT_MAX_DEVICES - 1; @channel: a valid channel id
 *           (neither is checked here).
 * @pass:    copied into every record.
 *
 * Return: 0; -EBUSY (started, or stopped and not drained); -ENOMEM; with
 * tp_last_error() set.
 */
int tp_op_chan_start(int device, uint32_t channel, uint32_t pass);

/**
 * tp_op_chan_stop() - STARTED → STOPPED and append the END_OF_PASS
 * record: seq = records delivered since start, total_cycles = records
 * dropped, t_start = t_end = @t_stop (system-counter ticks).
 *
 * Return: 0; -ENOENT when the channel is not started.
 */
int tp_op_chan_stop(int device, uint32_t channel, uint64_t t_stop);

/** tp_op_chan_started() - whether the channel is STARTED. */
bool tp_op_chan_started(int device, uint32_t channel);

/**
 * tp_op_chan_push() - append one record to a STARTED channel.
 * @rec: a BLOCK or LAUNCH record; magic, version, size, device, channel
 *       and pass are filled in here.
 *
 * Waits while the ring is full (see the header comment for the backstop).
 * A record for a channel that is not started is ignored.
 */
void tp_op_chan_push(int device, uint32_t channel, struct tp_op_rec *rec);

/**
 * tp_op_chan_read() - take whole records, oldest first, non-blocking.
 *
 * Stops after an END_OF_PASS, which makes the channel IDLE (its ring is
 * freed). Wakes producers waiting for room.
 *
 * Return: bytes written (a multiple of sizeof(struct tp_op_rec)), 0 when
 * empty; -EINVAL when @size is below one record; -ENOENT when IDLE.
 */
int tp_op_chan_read(int device, uint32_t channel, void *buf, size_t size);

/**
 * tp_op_chan_poll() - wait up to @timeout_ms for channels with unread
 * records; fills up to @max entries of @out (device order, then channel).
 *
 * Return: entries filled; 0 on timeout or after tp_op_chan_wake().
 */
int tp_op_chan_poll(struct tp_drv_prof_poll_info *out, int max, int timeout_ms);

/** tp_op_chan_wake() - make every waiting tp_op_chan_poll() return. */
void tp_op_chan_wake(void);

/**
 * tp_op_chan_set_capacity() - tests: the ring capacity of the channels
 * started from now on, process-wide.
 * @records: records per ring (END_OF_PASS slot excluded); 0 =
 *           TP_OP_CHAN_DEFAULT_CAP.
 */
void tp_op_chan_set_capacity(uint32_t records);

/**
 * tp_op_chan_set_backstop_ms() - tests: how long a producer waits on a
 * full ring before it drops, process-wide.
 * @ms: milliseconds; 0 = TP_OP_CHAN_BACKSTOP_MS.
 */
void tp_op_chan_set_backstop_ms(uint32_t ms);

/**
 * tp_op_chan_full_waits() - producers that waited on a full ring since
 * process start (a test point proving the slow-reader path was exercised).
 */
uint64_t tp_op_chan_full_waits(void);

/**
 * tp_op_chan_release_all() - free the rings of every channel that is not
 * STARTED (process exit): a started channel's ring is kept, since a
 * device thread may still produce into it; the others become IDLE, their
 * unread records discarded.
 */
void tp_op_chan_release_all(void);

#endif /* TASKPROF_PLATFORM_OP_CHAN_H */
