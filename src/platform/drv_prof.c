/* SPDX-License-Identifier: MIT */
#include "platform/drv_prof.h"

#include <errno.h>
#include <stdatomic.h>

#include "base/error.h"
#include "platform/device.h"

/* Owner of each (device id, channel); 0 = not started. Static storage is
 * zero-initialised, which is a valid atomic 0. */
static _Atomic uint64_t holder[TP_DRV_PROF_MAX_DEVICES][TP_DRV_PROF_MAX_CHANNELS];

static int check(struct tp_device *dev, uint32_t channel, uint64_t owner, int *id)
{
	if (!dev)
		return tp_set_error(-EINVAL, "drv prof: no device");
	*id = tp_device_id(dev);
	if (*id < 0 || *id >= TP_DRV_PROF_MAX_DEVICES)
		return tp_set_error(-EINVAL, "drv prof: device %d has no profiling channels "
				    "(expected an id below %d)", *id, TP_DRV_PROF_MAX_DEVICES);
	if (channel >= TP_DRV_PROF_MAX_CHANNELS)
		return tp_set_error(-EINVAL, "drv prof: device %d: channel %u does not exist "
				    "(expected below %u)", *id, channel, TP_DRV_PROF_MAX_CHANNELS);
	if (owner == 0)
		return tp_set_error(-EINVAL, "drv prof: device %d channel %u: owner 0 is not "
				    "an owner", *id, channel);
	return 0;
}

int tp_drv_lease_start(struct tp_device *dev, uint32_t channel, uint64_t owner,
		      uint32_t cfg_mode)
{
	int id = -1, rc = check(dev, channel, owner, &id);
	if (rc)
		return rc;
	if (cfg_mode > 3)
		return tp_set_error(-EINVAL, "drv prof: device %d channel %u: cfgMode %u "
				    "(expected 0..3)", id, channel, cfg_mode);
	uint64_t expect = 0;
	/* acq_rel: the foreign writer's acquire load of the holder sees the
	 * channel started before anything the starter does next. */
	if (atomic_compare_exchange_strong_explicit(&holder[id][channel], &expect, owner,
						    memory_order_acq_rel, memory_order_acquire))
		return 0;
	if (expect == owner)
		return tp_set_error(-EALREADY, "drv prof: device %d channel %u is already "
				    "started by this owner", id, channel);
	tp_set_error(TP_DRV_PROF_EHELD, "drv prof: device %d channel %u is held by another "
		     "owner (driver code -10)", id, channel);
	return TP_DRV_PROF_EHELD;
}

int tp_drv_lease_stop(struct tp_device *dev, uint32_t channel, uint64_t owner)
{
	int id = -1, rc = check(dev, channel, owner, &id);
	if (rc)
		return rc;
	uint64_t expect = owner;
	/* release: what the owner did while holding happens before a later
	 * start's acquire. */
	if (atomic_compare_exchange_strong_explicit(&holder[id][channel], &expect, 0,
						    memory_order_release, memory_order_relaxed))
		return 0;
	if (expect == 0)
		return tp_set_error(-ENOENT, "drv prof: device %d channel %u is not started",
				    id, channel);
	return tp_set_error(-EPERM, "drv prof: device %d channel %u is held by another "
			    "owner", id, channel);
}

uint64_t tp_drv_lease_holder(int device_id, uint32_t channel)
{
	if (device_id < 0 || device_id >= TP_DRV_PROF_MAX_DEVICES ||
	    channel >= TP_DRV_PROF_MAX_CHANNELS)
		return 0;
	/* acquire: pairs with the start's release half. */
	return atomic_load_explicit(&holder[device_id][channel], memory_order_acquire);
}
