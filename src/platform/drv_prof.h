/* SPDX-License-Identifier: MIT */
/*
 * platform/drv_prof.h — the simulated driver's channel leases (seed 000
 * §7.0, issue 5 scope 7): who holds a profiling channel of a device id.
 *
 * This is the ownership half only (tp_drv_lease_*). The public channels
 * that carry records — tp_drv_prof_start / _stop / _channel_read /
 * _channel_poll of include/taskprof/rt_tool.h — are rt.c and op_chan.c;
 * they share nothing with the leases but the idea of a channel.
 *
 * A profiling channel is started on a device by one owner at a time; the
 * exclusion is the driver's, below any one process, so two tp_device
 * objects opened with the same device id (two "processes" of a test)
 * share it. A second start by another owner fails with the driver's raw
 * code -10 (TP_DRV_PROF_EHELD).
 *
 * Channel 53 (CHANNEL_FFTS_PROFILE_BUFFER_TASK) matters to PMU: while it
 * is started on a device, the foreign writer of platform/pmu_foreign.h
 * cannot reset any core's PMU_CTRL_0 there. Starting the channel is what
 * protects; the configuration mode does not (the seed measured cfgMode 0
 * and 3 alike) and the simulated channel emits no data in either mode.
 *
 * Thread-safe; the state lives for the process.
 */
#ifndef TASKPROF_PLATFORM_DRV_PROF_H
#define TASKPROF_PLATFORM_DRV_PROF_H

#include <stdbool.h>
#include <stdint.h>

struct tp_device;

/* CHANNEL_FFTS_PROFILE_BUFFER_TASK: the channel whose lease holds off the
 * PMU_CTRL_0 reset (seed §7.0). */
#define TP_DRV_PROF_CHANNEL_FFTS 53u
/* Channels 0..TP_DRV_PROF_MAX_CHANNELS-1 exist. */
#define TP_DRV_PROF_MAX_CHANNELS 64u
/* Device ids 0..TP_DRV_PROF_MAX_DEVICES-1 have channels. */
#define TP_DRV_PROF_MAX_DEVICES 64
/* What the driver returns for a start while another owner holds the
 * channel (the seed's -10; not an errno). */
#define TP_DRV_PROF_EHELD (-10)

/**
 * tp_drv_lease_start() - start profiling channel @channel on @dev's device.
 * @dev:      the device (its tp_device_id() names the channel's device).
 * @channel:  0 .. TP_DRV_PROF_MAX_CHANNELS-1 (53 for the PMU lease).
 * @owner:    who starts it, non-zero (a process or collector token).
 * @cfg_mode: the channel's configuration mode, 0..3 (recorded only; the
 *            seed requires 0 for the PMU lease).
 *
 * Return: 0 when @owner now holds it; TP_DRV_PROF_EHELD (-10) when another
 * owner holds it; -EALREADY when @owner already holds it (the driver does
 * not count references: the lease above it does); -EINVAL for a bad
 * channel, device id, owner or mode (tp_last_error() says which).
 */
int tp_drv_lease_start(struct tp_device *dev, uint32_t channel, uint64_t owner,
		      uint32_t cfg_mode);

/**
 * tp_drv_lease_stop() - stop a channel @owner started.
 *
 * Return: 0; -ENOENT when the channel is not started; -EPERM when another
 * owner holds it; -EINVAL as for tp_drv_lease_start().
 */
int tp_drv_lease_stop(struct tp_device *dev, uint32_t channel, uint64_t owner);

/**
 * tp_drv_lease_holder() - owner of a channel of device id @device_id.
 *
 * Return: the owner token, or 0 when the channel is not started (or the
 * id / channel is out of range).
 */
uint64_t tp_drv_lease_holder(int device_id, uint32_t channel);

/** tp_drv_lease_held() - tp_drv_lease_holder() != 0. */
static inline bool tp_drv_lease_held(int device_id, uint32_t channel)
{
	return tp_drv_lease_holder(device_id, channel) != 0;
}

#endif /* TASKPROF_PLATFORM_DRV_PROF_H */
