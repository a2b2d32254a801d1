/* SPDX-License-Identifier: MIT */
/*
 * taskprof/rt_tool.h — the simulated device's tool interface: what a
 * profiler uses and an application does not (issue 6 scope 2, 8;
 * spec/opprof.md §4.1, §4.10; seed 003 §4.3 "通过驱动采集profiling数据").
 *
 *   driver profiling channels   tp_drv_prof_start / _stop / _channel_read /
 *                               _channel_poll: per (device, channel) rings of
 *                               self-describing records (struct tp_op_rec)
 *   launch with a hidden buffer tp_rt_tool_launch(): the "dynamic
 *                               instrumentation" extra argument that
 *                               tp_mark* / tp_scalar_* (kernel.h) write to
 *   simulator statistics        tp_rt_tool_device_stats(): kernel
 *                               executions, blocks, device memory
 *
 * None of these is interposed by `taskprof op`'s injector, and none calls
 * an interposable tp_rt_* entry point through its exported name. Every
 * function is an exported symbol of libtaskprof.so and may be called from
 * any host thread (never from a kernel).
 *
 * Errors: 0 (or a byte count) on success, a negative errno otherwise;
 * tp_last_error() then says what was wrong, on the calling thread.
 */
#ifndef TASKPROF_RT_TOOL_H
#define TASKPROF_RT_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include "taskprof/rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- driver profiling channels ------------------------------------------ */

/* Channel ids of the simulated driver. */
#define TP_DRV_CH_AICORE_PMU 1u /* one TP_OP_REC_BLOCK record per executed block */
#define TP_DRV_CH_TASK_TIME 2u  /* one TP_OP_REC_LAUNCH record per launch */

/* Most events one core type can count at once (a5: 10, a2a3: 8). */
#define TP_DRV_PROF_MAX_EVENTS 10
/* An unused event slot (never 0: event id 0 is valid on a5). */
#define TP_EV_NONE 0xFFFFu

/**
 * struct tp_drv_prof_config - what a started channel collects (the
 * prof_start_para user data of seed 003).
 * @pass:       copied into every record of the channel (the replay pass).
 * @n_aic:      events programmed on every AIC core, 0 .. slots of the
 *              platform (8 on a2a3sim, 10 on a5sim).
 * @n_aiv:      the same for every AIV core.
 * @aic_events: event ids (DAV_2201 / DAV_3510 of platform/pmu_events.h),
 *              first @n_aic used; unused slots are programmed TP_EV_NONE
 *              and count nothing.
 * @aiv_events: the same for AIV cores.
 *
 * Only TP_DRV_CH_AICORE_PMU programs events; TP_DRV_CH_TASK_TIME ignores
 * them (pass is still copied).
 */
struct tp_drv_prof_config {
	uint32_t pass;
	uint32_t n_aic;
	uint32_t n_aiv;
	uint16_t aic_events[TP_DRV_PROF_MAX_EVENTS];
	uint16_t aiv_events[TP_DRV_PROF_MAX_EVENTS];
};

#define TP_OP_REC_MAGIC 0x504F5054u /* "TPOP" as little-endian bytes */
#define TP_OP_REC_VERSION 1u

enum tp_op_rec_kind {
	TP_OP_REC_BLOCK = 1,       /* one block of a launch ran (AICORE_PMU) */
	TP_OP_REC_LAUNCH = 2,      /* one launch ran (TASK_TIME) */
	TP_OP_REC_END_OF_PASS = 3, /* tp_drv_prof_stop(): nothing follows */
};

/**
 * struct tp_op_rec - one record of a profiling channel
 * (spec/opprof.md §4.10), 176
 * bytes, self-describing so a reader never relies on "file index ⇒ event
 * list". Fields by kind:
 *
 * @magic, @version: TP_OP_REC_MAGIC, TP_OP_REC_VERSION.
 * @kind:       enum tp_op_rec_kind.
 * @size:       sizeof(struct tp_op_rec).
 * @device:     device id; @channel: channel id; @pass: the config's pass.
 * @core_type:  BLOCK: 0 AIC, 1 AIV (platform/topology.h); else 0.
 * @core_id:    BLOCK: the core the block ran on; else -1.
 * @block_id:   BLOCK: the block index; LAUNCH: the launch's block_dim.
 * @sub_block:  BLOCK: 0 (one core runs one block); else 0.
 * @seq:        BLOCK and LAUNCH: the device's launch sequence number (1 for
 *              the device's first launch, counting every launch);
 *              END_OF_PASS: records delivered on the channel since start.
 * @total_cycles: BLOCK: PMU_CNT_TOTAL of the block's counting window, core
 *              cycles at TP_CORE_FREQ_HZ; END_OF_PASS: records dropped
 *              since start (the ring stayed full for 30 s); else 0.
 * @t_start, @t_end: BLOCK: the block's kernel body; LAUNCH: first dispatch
 *              to last FIN; system-counter ticks (tp_rt_tool_device_stats()
 *              gives their frequency); END_OF_PASS: the stop time in both.
 * @n_events:   BLOCK: events in @event_id / @value; else 0.
 * @event_id:   BLOCK: the programmed ids, TP_EV_NONE past @n_events.
 * @value:      BLOCK: each event's count over the block's window.
 */
struct tp_op_rec {
	uint32_t magic;
	uint16_t version;
	uint16_t kind;
	uint32_t size;
	int32_t device;
	uint32_t channel;
	uint32_t pass;
	uint32_t core_type;
	int32_t core_id;
	uint32_t block_id;
	uint32_t sub_block;
	uint64_t seq;
	uint64_t total_cycles;
	uint64_t t_start;
	uint64_t t_end;
	uint32_t n_events;
	uint16_t event_id[TP_DRV_PROF_MAX_EVENTS];
	uint64_t value[TP_DRV_PROF_MAX_EVENTS];
};
_Static_assert(sizeof(struct tp_op_rec) == 176, "tp_op_rec is a file format");

/**
 * tp_drv_prof_start() - start channel @channel on device @device_id
 * (prof_drv_start of seed 003 §4.3, spec/opprof.md §4.10). The device is
 * opened if it is not.
 * @device_id: 0 .. TP_RT_MAX_DEVICES - 1.
 * @channel:   TP_DRV_CH_AICORE_PMU or TP_DRV_CH_TASK_TIME.
 * @cfg: what to collect (copied); NULL for the task-time channel means
 *       pass 0.
 *
 * From the start on, every block (AICORE_PMU) or launch (TASK_TIME) that
 * runs on the device appends one record to the channel's ring. AICORE_PMU
 * programs the events on every core at start and restores the previous
 * selection at stop. When the ring is full the producing AICore waits for
 * a reader (tp_drv_prof_channel_read()); after 30 s it drops the record
 * and counts it (END_OF_PASS reports the count).
 *
 * Return: 0; -EINVAL for a bad channel id, a NULL @cfg on AICORE_PMU,
 * more events than the platform has slots; -ENODEV for a bad device id;
 * -EBUSY when the channel is started, or stopped but not drained to its
 * END_OF_PASS; the errors of tp_rt_set_device() opening the device.
 */
TP_RT_API int tp_drv_prof_start(int device_id, uint32_t channel,
				const struct tp_drv_prof_config *cfg);

/**
 * tp_drv_prof_stop() - stop a channel (prof_stop): no record is produced
 * after it; an END_OF_PASS record is appended after the last one
 * (spec/opprof.md §4.10). Waits for a launch in progress on the device to
 * finish first.
 * @device_id: as for tp_drv_prof_start().
 * @channel:   as for tp_drv_prof_start().
 *
 * Return: 0; -ENOENT when the channel is not started; -EINVAL / -ENODEV
 * as for tp_drv_prof_start().
 */
TP_RT_API int tp_drv_prof_stop(int device_id, uint32_t channel);

/**
 * tp_drv_prof_channel_read() - take records from a channel, non-blocking
 * (prof_channel_read, spec/opprof.md §4.10).
 * @device_id: as for tp_drv_prof_start().
 * @channel:   as for tp_drv_prof_start().
 * @buf:  receives whole struct tp_op_rec records, oldest first.
 * @size: bytes of @buf, at least sizeof(struct tp_op_rec).
 *
 * After the END_OF_PASS record has been read the channel is idle and can
 * be started again.
 *
 * Return: bytes written (a multiple of sizeof(struct tp_op_rec)), 0 when
 * the ring is empty; -EINVAL for a NULL or too small @buf; -ENOENT for a
 * channel never started (or already drained to its END_OF_PASS).
 */
TP_RT_API int tp_drv_prof_channel_read(int device_id, uint32_t channel, void *buf,
				       size_t size);

/* One channel with records to read (prof_poll_info). */
struct tp_drv_prof_poll_info {
	int32_t device_id;
	uint32_t channel_id;
};

/**
 * tp_drv_prof_channel_poll() - wait until some channel has records
 * (prof_channel_poll).
 * @out:        receives up to @max channels that have unread records.
 * @max:        entries of @out, >= 1.
 * @timeout_ms: longest wait; 0 checks without waiting.
 *
 * Covers every device and channel of the process. Wakes on a new record,
 * on an END_OF_PASS, and on tp_drv_prof_poll_wake().
 *
 * Return: the number of entries filled (0 on timeout or wake); -EINVAL
 * for a NULL @out, @max < 1 or a negative @timeout_ms.
 */
TP_RT_API int tp_drv_prof_channel_poll(struct tp_drv_prof_poll_info *out, int max,
				       int timeout_ms);

/** tp_drv_prof_poll_wake() - make every waiting tp_drv_prof_channel_poll()
 *  return now (a reader thread told to exit). */
TP_RT_API void tp_drv_prof_poll_wake(void);

/* ---- launch with the hidden instrumentation buffer ----------------------- */

#define TP_INSTR_MAGIC 0x4E495054u /* "TPIN" */
#define TP_INSTR_VERSION 1u

enum tp_instr_kind {
	TP_INSTR_BLOCK_BEGIN = 1,  /* written by the device before the body */
	TP_INSTR_BLOCK_END = 2,    /* and after it */
	TP_INSTR_MARK = 3,         /* tp_mark(id) */
	TP_INSTR_RANGE_BEGIN = 4,  /* tp_mark_range_begin(id) */
	TP_INSTR_RANGE_END = 5,    /* tp_mark_range_end(id) */
	TP_INSTR_SCALAR_BEGIN = 6, /* tp_scalar_begin(name) */
	TP_INSTR_SCALAR_END = 7,   /* tp_scalar_end() */
};

/**
 * struct tp_instr_rec - one instrumentation point, 32 bytes.
 * @t:      system-counter ticks when the point ran.
 * @kind:   enum tp_instr_kind.
 * @id:     MARK / RANGE_*: the kernel's id; BLOCK_*: the core id; else 0.
 * @name:   SCALAR_*: the section name's address (a string with static
 *          storage in the launching process), else 0.
 * @cycles: SCALAR_END: the section's SCALAR-pipe busy cycles at
 *          TP_CORE_FREQ_HZ (its time minus tile ops run inside); else 0.
 */
struct tp_instr_rec {
	uint64_t t;
	uint32_t kind;
	uint32_t id;
	uint64_t name;
	uint64_t cycles;
};
_Static_assert(sizeof(struct tp_instr_rec) == 32, "tp_instr_rec is a layout");

/**
 * The hidden buffer: a header, then per block b (0 .. block_dim-1) a
 * struct tp_instr_block followed by @per_block_cap records. The device
 * writes block b's points in order; past @per_block_cap it counts
 * @overflow instead. tp_rt_instr_bytes() gives the size to allocate; the
 * tool fills the header and zeroes the rest before the launch.
 */
struct tp_instr_hdr {
	uint32_t magic;          /* TP_INSTR_MAGIC */
	uint32_t version;        /* TP_INSTR_VERSION */
	uint32_t block_dim;      /* blocks the buffer has room for */
	uint32_t per_block_cap;  /* records per block */
};
struct tp_instr_block {
	uint32_t count;          /* records written */
	uint32_t overflow;       /* points that did not fit */
	uint64_t reserved;
};

/**
 * tp_rt_instr_bytes() - size of a hidden buffer.
 * @block_dim:     blocks it has room for.
 * @per_block_cap: struct tp_instr_rec records per block.
 *
 * Return: bytes: the header plus, per block, a struct tp_instr_block and
 * @per_block_cap records (no overflow check).
 */
static inline size_t tp_rt_instr_bytes(uint32_t block_dim, uint32_t per_block_cap)
{
	return sizeof(struct tp_instr_hdr) +
	       (size_t)block_dim * (sizeof(struct tp_instr_block) +
				    (size_t)per_block_cap * sizeof(struct tp_instr_rec));
}

/**
 * tp_rt_instr_block() - block @b's struct tp_instr_block in a buffer, by
 * the geometry in its header (a buffer a kernel may have overwritten is
 * better walked with the geometry the tool wrote).
 * @buf: a host copy of the hidden buffer, starting with its header.
 * @b:   block index, < the header's block_dim (not checked).
 *
 * Return: a pointer into @buf; its records follow it.
 */
static inline struct tp_instr_block *tp_rt_instr_block(void *buf, uint32_t b)
{
	const struct tp_instr_hdr *h = (const struct tp_instr_hdr *)buf;
	return (struct tp_instr_block *)((char *)buf + sizeof(*h) +
					 (size_t)b * (sizeof(struct tp_instr_block) +
						      (size_t)h->per_block_cap *
							      sizeof(struct tp_instr_rec)));
}

/**
 * tp_rt_tool_launch() - tp_rt_launch_ex() with a hidden instrumentation
 * buffer (seed 003 §4.1 "动态插桩": the extra last argument).
 * @kernel, @block_dim, @args, @attr: as tp_rt_launch_ex().
 * @instr:       device memory (from the real tp_rt_malloc) holding a
 *               filled struct tp_instr_hdr whose block_dim >= @block_dim,
 *               or NULL for none. While the launch runs, tp_mark*,
 *               tp_scalar_* and the block begin/end points of each block
 *               land in its region; copy it back with tp_rt_memcpy().
 * @instr_bytes: its size, >= tp_rt_instr_bytes(hdr.block_dim, hdr.cap).
 *
 * Return: as tp_rt_launch_ex(); -EINVAL for a bad header or size.
 */
TP_RT_API int tp_rt_tool_launch(tp_rt_kernel_fn kernel, uint32_t block_dim, void *args,
				const struct tp_rt_launch_attr *attr, void *instr,
				size_t instr_bytes);

/* ---- simulator statistics ------------------------------------------------ */

/**
 * struct tp_rt_tool_stats - counters of one open device.
 * @launches:     kernel launches executed since the device opened (every
 *                tp_rt_launch / _launch_ex / tp_rt_tool_launch that ran).
 * @blocks:       blocks executed.
 * @mem_capacity: device memory, bytes.
 * @mem_used:     bytes in live allocations.
 * @sys_cnt_freq: system-counter ticks per second (t_* of the records).
 * @platform:     "a2a3sim" or "a5sim".
 * @pmu_slots:    counter slots per core: 8 or 10.
 */
struct tp_rt_tool_stats {
	uint64_t launches;
	uint64_t blocks;
	size_t mem_capacity;
	size_t mem_used;
	uint64_t sys_cnt_freq;
	const char *platform;
	int pmu_slots;
};

/**
 * tp_rt_tool_device_stats() - the counters of device @device_id.
 * @device_id: 0 .. TP_RT_MAX_DEVICES - 1.
 * @out:       receives the counters (units in struct tp_rt_tool_stats).
 *
 * Does not open the device. With TASKPROF_SIM_STATS=1 in the environment
 * the simulator also prints, at process exit, one line per device id ever
 * opened to stderr, counting every device opened with that id (a device
 * reset and opened again adds to the same line):
 *   taskprof-sim: device D: N kernel launches executed (B blocks)
 *
 * Return: 0; -ENODEV for a bad id or a device that is not open; -EINVAL
 * for a NULL @out.
 */
TP_RT_API int tp_rt_tool_device_stats(int device_id, struct tp_rt_tool_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* TASKPROF_RT_TOOL_H */
