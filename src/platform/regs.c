/* SPDX-License-Identifier: MIT */
#include "platform/regs.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "platform/device.h"
#include "platform/platform.h"

/* Faults logged at ERROR per device; later ones are only counted. */
#define REG_FAULT_LOG_MAX 16
/* Poll interval of tp_reg_wait() on registers without a doorbell. */
#define REG_POLL_NS 50000

struct core_regs {
	_Atomic uint32_t dispatch[TP_REG_BLOCK_BYTES / 4];
	_Atomic uint32_t spr[TP_REG_SPR_BYTES / 4];
	/* Each doorbell on its own line: the core sleeps on one while the
	 * AICPU sleeps on the other. */
	_Alignas(64) struct tp_doorbell dispatch_db;
	_Alignas(64) struct tp_doorbell cond_db;
	_Atomic(struct tp_doorbell *) cond_listener;
};

struct tp_regs {
	int num_cores;
	int device_id;
	uint32_t pmu_bytes;
	struct core_regs *cores;          /* num_cores, 64-aligned */
	_Atomic uint32_t *pmu;            /* num_cores × pmu_bytes / 4 */
	_Atomic uint64_t faults;
	/* Foreign writer hook: fn published after ud (release); in-flight
	 * calls counted so that removal can wait for them. */
	_Atomic(tp_reg_foreign_writer_fn) hook_fn;
	_Atomic(void *) hook_ud;
	_Atomic uint32_t hook_inflight;
};

/* Set while this thread runs a foreign writer hook: its own register
 * accesses must not call the hook again. */
static _Thread_local bool in_hook;

struct tp_regs *tp_regs_create(const struct tp_platform *plat, int num_cores,
			       int device_id)
{
	struct tp_regs *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->num_cores = num_cores;
	r->device_id = device_id;
	r->pmu_bytes = plat->pmu.block_bytes;
	size_t cores_bytes = (size_t)num_cores * sizeof(struct core_regs);
	r->cores = aligned_alloc(64, (cores_bytes + 63) / 64 * 64);
	r->pmu = calloc((size_t)num_cores * (r->pmu_bytes / 4), sizeof(*r->pmu));
	if (!r->cores || !r->pmu) {
		free(r->cores);
		free(r->pmu);
		free(r);
		return NULL;
	}
	/* Zero bits are a valid state for atomic integers and pointers on
	 * every target we build for; atomic_init would only repeat it. */
	memset(r->cores, 0, cores_bytes);
	for (int c = 0; c < num_cores; c++) {
		tp_doorbell_init(&r->cores[c].dispatch_db);
		tp_doorbell_init(&r->cores[c].cond_db);
	}
	atomic_init(&r->faults, 0);
	atomic_init(&r->hook_fn, NULL);
	atomic_init(&r->hook_ud, NULL);
	atomic_init(&r->hook_inflight, 0);
	return r;
}

void tp_regs_destroy(struct tp_regs *regs)
{
	if (!regs)
		return;
	free(regs->cores);
	free(regs->pmu);
	free(regs);
}

void tp_regs_reset_dispatch(struct tp_regs *regs)
{
	for (int c = 0; c < regs->num_cores; c++)
		for (size_t i = 0; i < TP_REG_BLOCK_BYTES / 4; i++)
			/* relaxed: no device thread runs; thread creation
			 * publishes these stores to the threads started next. */
			atomic_store_explicit(&regs->cores[c].dispatch[i], 0,
					      memory_order_relaxed);
}

static void fault(struct tp_regs *r, int core, uint32_t off, const char *what)
{
	uint64_t n = atomic_fetch_add_explicit(&r->faults, 1, memory_order_relaxed);
	tp_set_error(-ERANGE, "device %d registers: %s of core %d offset 0x%08x refused: "
		     "%s", r->device_id, what, core, off,
		     core < 0 || core >= r->num_cores ? "no such core" :
		     (off & 3) ? "offset not 4-byte aligned" :
		     "offset outside the register windows");
	if (n < REG_FAULT_LOG_MAX)
		TP_ERROR("%s", tp_last_error());
}

/* Address of register @off of @core, or NULL when out of range. */
static _Atomic uint32_t *reg_ptr(struct tp_regs *r, int core, uint32_t off)
{
	if (core < 0 || core >= r->num_cores || (off & 3))
		return NULL;
	uint32_t o = off & ~TP_REG_WIN_MASK;
	switch (off & TP_REG_WIN_MASK) {
	case TP_REG_WIN_DISPATCH:
		return o < TP_REG_BLOCK_BYTES ? &r->cores[core].dispatch[o / 4] : NULL;
	case TP_REG_WIN_PMU:
		return o < r->pmu_bytes ?
			&r->pmu[(size_t)core * (r->pmu_bytes / 4) + o / 4] : NULL;
	case TP_REG_WIN_SPR:
		return o < TP_REG_SPR_BYTES ? &r->cores[core].spr[o / 4] : NULL;
	default:
		return NULL;
	}
}

static void call_hook(struct tp_device *dev, struct tp_regs *r, int core, uint32_t off,
		      enum tp_reg_access access, uint32_t val)
{
	/* relaxed: only a filter; the seq_cst load below decides. */
	if (__builtin_expect(atomic_load_explicit(&r->hook_fn, memory_order_relaxed) == NULL, 1))
		return;
	if (in_hook)
		return;
	/* seq_cst increment, then seq_cst load of fn: pairs with the seq_cst
	 * store of NULL and load of hook_inflight in
	 * tp_reg_set_foreign_writer(). Either we see NULL here, or the
	 * remover sees us in flight and waits until we leave. */
	atomic_fetch_add_explicit(&r->hook_inflight, 1, memory_order_seq_cst);
	tp_reg_foreign_writer_fn fn = atomic_load_explicit(&r->hook_fn, memory_order_seq_cst);
	if (fn) {
		/* relaxed: ud was stored before fn's release store, and the
		 * seq_cst load of fn above acquires it. */
		void *ud = atomic_load_explicit(&r->hook_ud, memory_order_relaxed);
		in_hook = true;
		fn(ud, dev, core, off, access, val);
		in_hook = false;
	}
	/* release: the hook's effects happen before the remover's return. */
	atomic_fetch_sub_explicit(&r->hook_inflight, 1, memory_order_release);
}

static void ring_for(struct tp_regs *r, int core, uint32_t off)
{
	struct core_regs *c = &r->cores[core];
	if (off == TP_REG_DATA_MAIN_BASE || off == TP_REG_DATA_MAIN_BASE_HI) {
		tp_doorbell_ring(&c->dispatch_db);
	} else if (off == TP_REG_COND) {
		/* The fence of this ring also serves the listener's below
		 * (tp_doorbell_ring_fenced): one fence for both. */
		tp_doorbell_ring(&c->cond_db);
		/* acquire: the listener doorbell was initialised before it
		 * was published with a release store. */
		struct tp_doorbell *l = atomic_load_explicit(&c->cond_listener,
							     memory_order_acquire);
		if (l)
			tp_doorbell_ring_fenced(l);
	}
}

uint32_t tp_reg_read(struct tp_device *dev, int core, uint32_t off)
{
	struct tp_regs *r = tp_device_regs(dev);
	_Atomic uint32_t *p = reg_ptr(r, core, off);
	if (!p) {
		fault(r, core, off, "read");
		return TP_REG_FAULT_VALUE;
	}
	call_hook(dev, r, core, off, TP_REG_ACCESS_READ, 0);
	/* acquire: pairs with the release store of tp_reg_write(). */
	return atomic_load_explicit(p, memory_order_acquire);
}

static void write_reg(struct tp_device *dev, int core, uint32_t off, uint32_t val,
		      bool foreign)
{
	struct tp_regs *r = tp_device_regs(dev);
	_Atomic uint32_t *p = reg_ptr(r, core, off);
	if (!p) {
		fault(r, core, off, "write");
		return;
	}
	/* release: everything the writer stored before (payload, record)
	 * is visible to a reader that acquires this value. */
	atomic_store_explicit(p, val, memory_order_release);
	if (!foreign)
		call_hook(dev, r, core, off, TP_REG_ACCESS_WRITE, val);
	ring_for(r, core, off);
}

void tp_reg_write(struct tp_device *dev, int core, uint32_t off, uint32_t val)
{
	write_reg(dev, core, off, val, false);
}

void tp_reg_write_foreign(struct tp_device *dev, int core, uint32_t off, uint32_t val)
{
	write_reg(dev, core, off, val, true);
}

void tp_reg_set_foreign_writer(struct tp_device *dev, tp_reg_foreign_writer_fn fn,
			       void *ud)
{
	struct tp_regs *r = tp_device_regs(dev);
	/* seq_cst store of NULL, then seq_cst loads of hook_inflight: the
	 * other half of the Dekker pair in call_hook() (seq_cst increment,
	 * then seq_cst load of fn). In the single total order either a caller
	 * loads fn after our NULL (and does not call), or its increment comes
	 * before our load and we wait for it. An acquire load here would not
	 * be in that order and could miss the increment. The seq_cst load
	 * also acquires the release decrement, so the hook's effects happen
	 * before we return. */
	atomic_store_explicit(&r->hook_fn, NULL, memory_order_seq_cst);
	/* A hook that removes itself is one of the calls in flight. */
	uint32_t self = in_hook ? 1 : 0;
	while (atomic_load_explicit(&r->hook_inflight, memory_order_seq_cst) > self)
		sched_yield();
	if (!fn)
		return;
	atomic_store_explicit(&r->hook_ud, ud, memory_order_relaxed);
	/* release (seq_cst includes it): publishes ud with fn. */
	atomic_store_explicit(&r->hook_fn, fn, memory_order_seq_cst);
}

struct tp_doorbell *tp_reg_doorbell(struct tp_device *dev, int core, uint32_t off)
{
	struct tp_regs *r = tp_device_regs(dev);
	if (core < 0 || core >= r->num_cores)
		return NULL;
	if (off == TP_REG_DATA_MAIN_BASE || off == TP_REG_DATA_MAIN_BASE_HI)
		return &r->cores[core].dispatch_db;
	if (off == TP_REG_COND)
		return &r->cores[core].cond_db;
	return NULL;
}

void tp_reg_set_cond_listener(struct tp_device *dev, int core, struct tp_doorbell *db)
{
	struct tp_regs *r = tp_device_regs(dev);
	if (core < 0 || core >= r->num_cores) {
		fault(r, core, TP_REG_COND, "set_cond_listener");
		return;
	}
	/* release: pairs with the acquire load in ring_for(). */
	atomic_store_explicit(&r->cores[core].cond_listener, db, memory_order_release);
}

uint64_t tp_reg_fault_count(struct tp_device *dev)
{
	return atomic_load_explicit(&tp_device_regs(dev)->faults, memory_order_relaxed);
}

struct reg_cond {
	struct tp_device *dev;
	int core;
	uint32_t off, mask, want;
};

static bool reg_cond_ready(void *arg)
{
	struct reg_cond *c = arg;
	return (tp_reg_read(c->dev, c->core, c->off) & c->mask) == c->want;
}

int tp_reg_wait(struct tp_device *dev, int core, uint32_t off, uint32_t mask,
		uint32_t want, uint64_t timeout_ns)
{
	struct reg_cond c = { dev, core, off, mask, want };
	struct tp_doorbell *db = tp_reg_doorbell(dev, core, off);
	if (db)
		return tp_doorbell_wait(db, reg_cond_ready, &c, timeout_ns);

	uint64_t start = tp_now_ns();
	for (;;) {
		if (reg_cond_ready(&c))
			return 0;
		if (timeout_ns != TP_DOORBELL_FOREVER && tp_now_ns() - start >= timeout_ns)
			return -ETIMEDOUT;
		struct timespec ts = { 0, REG_POLL_NS };
		nanosleep(&ts, NULL);
	}
}
