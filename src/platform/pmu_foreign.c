/* SPDX-License-Identifier: MIT */
#include "platform/pmu_foreign.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "platform/device.h"
#include "platform/drv_prof.h"
#include "platform/regs.h"

struct tp_pmu_foreign {
	struct tp_device *dev;
	struct tp_pmu_foreign_config cfg;
	int n_cores;
	_Atomic uint32_t *gate_opens; /* per core; hook threads only */
	_Atomic uint64_t resets, refused;
	atomic_bool stop;
	bool has_thread, has_hook;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static bool leased(struct tp_device *dev)
{
	return tp_drv_lease_held(tp_device_id(dev), TP_DRV_PROF_CHANNEL_FFTS);
}

static void reset_core(struct tp_device *dev, int core)
{
	tp_reg_write_foreign(dev, core, TP_REG_PMU(tp_device_platform(dev)->pmu.ctrl0),
			     TP_PMU_CTRL_RESTING);
}

int tp_pmu_foreign_reset(struct tp_device *dev, int core)
{
	if (!dev)
		return tp_set_error(-EINVAL, "pmu foreign writer: no device");
	int n = tp_device_num_cores(dev);
	if (core < -1 || core >= n)
		return tp_set_error(-EINVAL, "pmu foreign writer: core %d does not exist "
				    "(expected -1 or 0..%d)", core, n - 1);
	if (leased(dev))
		return 0;
	int lo = core < 0 ? 0 : core, hi = core < 0 ? n : core + 1;
	for (int c = lo; c < hi; c++)
		reset_core(dev, c);
	return hi - lo;
}

/* Register hook: after a store that sets the AICore gate, count the open
 * and reset PMU_CTRL_0 from the configured one on. */
static void gate_hook(void *ud, struct tp_device *dev, int core, uint32_t off,
		      enum tp_reg_access access, uint32_t val)
{
	struct tp_pmu_foreign *f = ud;
	if (access != TP_REG_ACCESS_WRITE || off != TP_REG_AICORE_CTRL ||
	    !(val & TP_AICORE_CTRL_PMU_GATE) || core < 0 || core >= f->n_cores)
		return;
	/* relaxed: a per-core count, only its own core's thread adds. */
	uint32_t n = atomic_fetch_add_explicit(&f->gate_opens[core], 1,
					       memory_order_relaxed) + 1;
	if (n < f->cfg.after_gate_opens)
		return;
	if (leased(dev)) {
		/* relaxed: a statistic. */
		atomic_fetch_add_explicit(&f->refused, 1, memory_order_relaxed);
		return;
	}
	reset_core(dev, core);
	atomic_fetch_add_explicit(&f->resets, 1, memory_order_relaxed);
}

static void *periodic(void *arg)
{
	struct tp_pmu_foreign *f = arg;
	pthread_mutex_lock(&f->mu);
	/* relaxed: stop is also written under mu, which orders it. */
	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)f->cfg.period_us * 1000u;
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		pthread_cond_timedwait(&f->cv, &f->mu, &ts);
		if (atomic_load_explicit(&f->stop, memory_order_relaxed))
			break;
		pthread_mutex_unlock(&f->mu);
		/* relaxed counters: statistics read after stop()'s join or
		 * approximately while running. */
		if (leased(f->dev)) {
			atomic_fetch_add_explicit(&f->refused, (uint64_t)f->n_cores,
						  memory_order_relaxed);
		} else {
			for (int c = 0; c < f->n_cores; c++)
				reset_core(f->dev, c);
			atomic_fetch_add_explicit(&f->resets, (uint64_t)f->n_cores,
						  memory_order_relaxed);
		}
		pthread_mutex_lock(&f->mu);
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

int tp_pmu_foreign_start(struct tp_device *dev, const struct tp_pmu_foreign_config *cfg,
			 struct tp_pmu_foreign **out)
{
	if (!dev || !cfg || !out || (!cfg->period_us && !cfg->after_gate_opens))
		return tp_set_error(-EINVAL, "pmu foreign writer: expected a device and a "
				    "period_us or after_gate_opens above 0");
	*out = NULL;
	struct tp_pmu_foreign *f = calloc(1, sizeof(*f));
	if (!f)
		return tp_set_error(-ENOMEM, "pmu foreign writer: out of memory");
	f->dev = dev;
	f->cfg = *cfg;
	f->n_cores = tp_device_num_cores(dev);
	f->gate_opens = calloc((size_t)f->n_cores, sizeof(*f->gate_opens));
	if (!f->gate_opens) {
		free(f);
		return tp_set_error(-ENOMEM, "pmu foreign writer: out of memory");
	}
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	if (cfg->after_gate_opens) {
		tp_reg_set_foreign_writer(dev, gate_hook, f);
		f->has_hook = true;
	}
	if (cfg->period_us) {
		if (pthread_create(&f->thread, NULL, periodic, f) != 0) {
			tp_pmu_foreign_stop(f);
			return tp_set_error(-EAGAIN, "pmu foreign writer: cannot start its "
					    "thread");
		}
		f->has_thread = true;
	}
	*out = f;
	return 0;
}

void tp_pmu_foreign_stop(struct tp_pmu_foreign *f)
{
	if (!f)
		return;
	if (f->has_thread) {
		pthread_mutex_lock(&f->mu);
		atomic_store_explicit(&f->stop, true, memory_order_relaxed);
		pthread_cond_signal(&f->cv);
		pthread_mutex_unlock(&f->mu);
		pthread_join(f->thread, NULL);
	}
	if (f->has_hook)
		tp_reg_set_foreign_writer(f->dev, NULL, NULL);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f->gate_opens);
	free(f);
}

/* relaxed loads: see the counters' updates. */
uint64_t tp_pmu_foreign_resets(const struct tp_pmu_foreign *f)
{
	return atomic_load_explicit(&f->resets, memory_order_relaxed);
}

uint64_t tp_pmu_foreign_refused(const struct tp_pmu_foreign *f)
{
	return atomic_load_explicit(&f->refused, memory_order_relaxed);
}
