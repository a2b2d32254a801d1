/* SPDX-License-Identifier: MIT */
#include "platform/pmu_model.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "platform/device.h"
#include "platform/l2_model.h"
#include "platform/regs.h"
#include "platform/tile/core_ctx.h"
#include "platform/tile/usage.h"

/* ---- what each event id produces (docs/pmu.md has the same table) ---- */

enum ev_kind {
	EV_BUSY = 1,      /* busy cycles of ops on @pipe */
	EV_BUSY_DT,       /* busy cycles of ops on @pipe with dtype in @mask */
	EV_INSTR_DT,      /* instructions of ops on @pipe with dtype in @mask */
	EV_INSTR_ALL,     /* instructions of every op */
	EV_VCLASS,        /* VEC instructions of vector class @vclass */
	EV_REQS,          /* requests on (@mem, @dir) by pipes in @mask */
	EV_L2,            /* L2 lines of outcome @mem (enum tp_l2_outcome) of
			   * GM accesses in direction @dir (l2_model.h) */
};

struct ev_prod {
	uint32_t id;
	uint8_t kind;
	uint8_t pipe;   /* EV_BUSY*, EV_INSTR_DT; EV_VCLASS: the class */
	uint8_t mem;
	uint8_t dir;
	uint32_t mask;  /* dtype mask (EV_*_DT) or pipe mask (EV_REQS) */
};

#define P(p) (1u << (p))
#define ALL_PIPES (P(TP_PIPE_COUNT) - 1u)
#define MTE_PIPES (P(TP_PIPE_MTE1) | P(TP_PIPE_MTE2) | P(TP_PIPE_MTE3))
#define NONVEC_PIPES (ALL_PIPES & ~P(TP_PIPE_VEC))
#define D(d) (1u << (d))
#define FLOAT16_DT (D(TP_FP16) | D(TP_BF16))
#define FLOAT_DT (D(TP_FP16) | D(TP_BF16) | D(TP_FP32))
#define INT_DT (D(TP_INT8) | D(TP_INT32))

#define BUSY(id, pipe) { id, EV_BUSY, pipe, 0, 0, 0 }
#define REQS(id, mem, dir, pipes) { id, EV_REQS, 0, mem, dir, pipes }
#define RD TP_DIR_READ
#define WR TP_DIR_WRITE
#define L2(id, outcome, dir) { id, EV_L2, 0, outcome, dir, 0 }

/* a2a3 (DAV_2201). Ids absent here (icache, bank / resource conflicts,
 * the L2's second read channel r1) read 0. The L2 events count 128-byte
 * lines of the L2 model (l2_model.h); the GM request events count every
 * request, whether the L2 holds its line or not. */
static const struct ev_prod prod_a2a3[] = {
	/* ARITHMETIC_UTILIZATION */
	{ 0x49, EV_INSTR_DT, TP_PIPE_CUBE, 0, 0, FLOAT16_DT },
	{ 0x4a, EV_INSTR_DT, TP_PIPE_CUBE, 0, 0, D(TP_INT8) },
	{ 0x4b, EV_VCLASS, TP_VCLASS_FP32, 0, 0, 0 },
	{ 0x4c, EV_VCLASS, TP_VCLASS_FP16_128LANE, 0, 0, 0 },
	{ 0x4d, EV_VCLASS, TP_VCLASS_FP16_64LANE, 0, 0, 0 },
	{ 0x4e, EV_VCLASS, TP_VCLASS_INT32, 0, 0, 0 },
	{ 0x4f, EV_VCLASS, TP_VCLASS_MISC, 0, 0, 0 },
	/* PIPE_UTILIZATION */
	BUSY(0x08, TP_PIPE_VEC), BUSY(0x0a, TP_PIPE_CUBE), BUSY(0x09, TP_PIPE_SCALAR),
	BUSY(0x0b, TP_PIPE_MTE1), BUSY(0x0c, TP_PIPE_MTE2), BUSY(0x0d, TP_PIPE_MTE3),
	/* MEMORY (0x10 and 0x13 are also MEMORY_UB's l2_write_bw and
	 * main_mem_write_bw: one id, one count) */
	REQS(0x15, TP_MEM_UB, RD, ALL_PIPES), REQS(0x16, TP_MEM_UB, WR, ALL_PIPES),
	REQS(0x31, TP_MEM_L1, RD, ALL_PIPES), REQS(0x32, TP_MEM_L1, WR, ALL_PIPES),
	REQS(0x0f, TP_MEM_GM, RD, ALL_PIPES), REQS(0x10, TP_MEM_GM, WR, ALL_PIPES),
	REQS(0x12, TP_MEM_GM, RD, ALL_PIPES), REQS(0x13, TP_MEM_GM, WR, ALL_PIPES),
	/* MEMORY_L0 */
	REQS(0x1b, TP_MEM_L0A, RD, ALL_PIPES), REQS(0x1c, TP_MEM_L0A, WR, ALL_PIPES),
	REQS(0x21, TP_MEM_L0B, RD, ALL_PIPES), REQS(0x22, TP_MEM_L0B, WR, ALL_PIPES),
	REQS(0x27, TP_MEM_L0C, RD, ALL_PIPES), REQS(0x28, TP_MEM_L0C, WR, ALL_PIPES),
	/* MEMORY_UB: UB traffic by requesting unit, in 32-byte requests */
	REQS(0x3d, TP_MEM_UB, RD, MTE_PIPES), REQS(0x3e, TP_MEM_UB, WR, MTE_PIPES),
	REQS(0x43, TP_MEM_UB, RD, P(TP_PIPE_VEC)), REQS(0x44, TP_MEM_UB, WR, P(TP_PIPE_VEC)),
	REQS(0x37, TP_MEM_UB, RD, P(TP_PIPE_SCALAR)),
	REQS(0x38, TP_MEM_UB, WR, P(TP_PIPE_SCALAR)),
	/* L2_CACHE: every GM read (tp_copy_in's MTE2) on channel r0 */
	L2(0x500, TP_L2_HIT, WR), L2(0x502, TP_L2_MISS, WR),
	L2(0x504, TP_L2_HIT, RD), L2(0x506, TP_L2_MISS, RD),
};

/* a5 (DAV_3510). Absent: icache, the two UB conflict events and the
 * vector-function busy event (0x3502), which the tile API has no notion
 * of. */
static const struct ev_prod prod_a5[] = {
	/* ARITHMETIC_UTILIZATION */
	{ 0x323, EV_BUSY_DT, TP_PIPE_CUBE, 0, 0, FLOAT_DT },
	{ 0x324, EV_BUSY_DT, TP_PIPE_CUBE, 0, 0, INT_DT },
	/* PIPE_UTILIZATION */
	BUSY(0x501, TP_PIPE_VEC), BUSY(0x301, TP_PIPE_CUBE), BUSY(0x1, TP_PIPE_SCALAR),
	BUSY(0x701, TP_PIPE_MTE1), BUSY(0x202, TP_PIPE_MTE2), BUSY(0x203, TP_PIPE_MTE3),
	BUSY(0x714, TP_PIPE_FIXP),
	/* MEMORY */
	REQS(0x400, TP_MEM_GM, RD, ALL_PIPES), REQS(0x401, TP_MEM_GM, WR, ALL_PIPES),
	REQS(0x56f, TP_MEM_UB, RD, NONVEC_PIPES), REQS(0x570, TP_MEM_UB, WR, NONVEC_PIPES),
	REQS(0x571, TP_MEM_UB, RD, P(TP_PIPE_VEC)), REQS(0x572, TP_MEM_UB, WR, P(TP_PIPE_VEC)),
	REQS(0x707, TP_MEM_L1, RD, ALL_PIPES), REQS(0x709, TP_MEM_L1, WR, ALL_PIPES),
	/* MEMORY_L0 */
	REQS(0x304, TP_MEM_L0A, RD, P(TP_PIPE_CUBE)), REQS(0x703, TP_MEM_L0A, WR, ALL_PIPES),
	REQS(0x306, TP_MEM_L0B, RD, P(TP_PIPE_CUBE)), REQS(0x705, TP_MEM_L0B, WR, ALL_PIPES),
	REQS(0x712, TP_MEM_L0C, RD, P(TP_PIPE_FIXP)), REQS(0x30a, TP_MEM_L0C, RD, P(TP_PIPE_CUBE)),
	REQS(0x308, TP_MEM_L0C, WR, P(TP_PIPE_CUBE)),
	/* RESOURCE_CONFLICT: instructions issued, every pipe */
	{ 0x3528, EV_INSTR_ALL, 0, 0, 0, 0 },
	/* MEMORY_UB */
	REQS(0x3, TP_MEM_UB, RD, ALL_PIPES), REQS(0x5, TP_MEM_UB, WR, ALL_PIPES),
	REQS(0x70c, TP_MEM_UB, WR, P(TP_PIPE_FIXP)),
	REQS(0x206, TP_MEM_UB, WR, MTE_PIPES), REQS(0x204, TP_MEM_UB, RD, MTE_PIPES),
	/* L2_CACHE: ar (reads) and aw (writes), hit / miss / victim */
	L2(0x424, TP_L2_HIT, RD), L2(0x425, TP_L2_MISS, RD), L2(0x426, TP_L2_VICTIM, RD),
	L2(0x42a, TP_L2_HIT, WR), L2(0x42b, TP_L2_MISS, WR), L2(0x42c, TP_L2_VICTIM, WR),
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const struct ev_prod *prod_find(enum tp_pmu_arch arch, uint32_t id)
{
	const struct ev_prod *t = arch == TP_PMU_ARCH_A5 ? prod_a5 : prod_a2a3;
	size_t n = arch == TP_PMU_ARCH_A5 ? ARRAY_LEN(prod_a5) : ARRAY_LEN(prod_a2a3);
	if (id == 0)
		return NULL; /* unused slot */
	for (size_t i = 0; i < n; i++)
		if (t[i].id == id)
			return &t[i];
	return NULL;
}

bool tp_pmu_event_modelled(enum tp_pmu_arch arch, uint32_t id)
{
	return prod_find(arch, id) != NULL;
}

/* What op @d adds to an event that @p describes. */
static uint64_t prod_value(const struct ev_prod *p, const struct tp_usage_delta *d)
{
	switch (p->kind) {
	case EV_BUSY:
		return d->pipe == p->pipe ? d->cycles : 0;
	case EV_BUSY_DT:
		return d->pipe == p->pipe && d->dtype < TP_DTYPE_COUNT &&
		       (p->mask & D(d->dtype)) ? d->cycles : 0;
	case EV_INSTR_DT:
		return d->pipe == p->pipe && d->dtype < TP_DTYPE_COUNT &&
		       (p->mask & D(d->dtype)) ? d->instr : 0;
	case EV_INSTR_ALL:
		return d->instr;
	case EV_VCLASS:
		return d->vclass == p->pipe ? d->instr : 0;
	case EV_REQS:
		if (!(p->mask & P(d->pipe)))
			return 0;
		return tp_usage_delta_reqs(d, (enum tp_mem)p->mem, (enum tp_dir)p->dir);
	default:
		return 0;
	}
}

/* ---- per-core state ---------------------------------------------------- */

struct pmu_core {
	struct tp_pmu_model *m;
	int core_id;
	bool has_window;        /* set only while no run uses the model */

	/* AICPU side: written by program, read by finalize (possibly another
	 * AICPU thread; the runtime orders them, the atomics keep it clean). */
	_Atomic uint32_t saved_ctrl0, saved_ctrl1;
	atomic_bool programmed;
	/* Selectors before tp_pmu_program_events(), restored by finalize. */
	_Atomic uint32_t saved_idx[TP_PMU_MAX_SLOTS];
	atomic_bool idx_saved;

	/* AICore side: the core's thread only. */
	struct tp_core_ctx *ctx;
	bool open;
	bool was_enabled;       /* enabled at the last sample */
	uint64_t last_ns;       /* since when it has been enabled (core thread CPU ns) */
	uint64_t last_wall_ns;  /* the same moment on tp_now_ns(), after the CPU read */
	uint64_t win_ns;        /* counted CPU ns of this window */
	uint64_t busy_sum;      /* counted busy cycles, all pipes */
	const struct ev_prod *prod[TP_PMU_MAX_SLOTS];
	uint64_t acc[TP_PMU_MAX_SLOTS];
	bool l2_on;             /* a slot counts an L2 event (set at open) */
	/* Wall ns the L2 model's lookups took since the segment began: the
	 * model's cost, not the kernel's, left out of the window by
	 * add_segment(). */
	uint64_t model_ns;
	uint64_t launch;        /* tp_device_launch_seq() at the open */

	/* stats: written by the core thread, read by anyone */
	_Atomic uint64_t ops_counted, ops_refused;
} __attribute__((aligned(64)));

struct tp_pmu_model {
	struct tp_device *dev;
	const struct tp_platform *plat;
	enum tp_pmu_arch arch;
	int n_slots;
	int n_cores;
	/* CPU ns one tp_thread_cpu_ns() call adds to a window (calibrated
	 * at create): the part of the open's read after its sample and of
	 * the close's read before its sample are the model's own cost, not
	 * the kernel's. */
	uint64_t read_ns;
	struct pmu_core *cores;
	/* The device's L2 model, made when a core is first programmed with
	 * an L2 event (else by the first window that counts one; NULL until
	 * then, or when it could not be made), under l2_mu: one model is
	 * made and faulted in, while the other cores wait. */
	_Atomic(struct tp_l2 *) l2;
	atomic_bool l2_failed;
	char l2_error[240]; /* why it could not be made (under l2_mu) */
	pthread_mutex_t l2_mu;
};

/* The CPU time one tp_thread_cpu_ns() call takes, ns: the smallest gap
 * between two back-to-back reads of 64 (a system call on most hosts,
 * 0.2-0.6 µs under a hypervisor; the smallest leaves out interrupts). */
static uint64_t calibrate_read_ns(void)
{
	uint64_t best = UINT64_MAX, prev = tp_thread_cpu_ns();
	for (int i = 0; i < 64; i++) {
		uint64_t now = tp_thread_cpu_ns();
		if (now - prev < best)
			best = now - prev;
		prev = now;
	}
	return best == UINT64_MAX ? 0 : best;
}

const char *tp_pmu_note_name(uint32_t code)
{
	static const char *const names[] = { "none", "no_window", "enabled",
					     "disabled", "held", "lost" };
	return code < ARRAY_LEN(names) ? names[code] : "?";
}

bool tp_pmu_ctrl_enabled(const struct tp_platform *plat, uint32_t ctrl0, uint32_t ctrl1)
{
	const struct tp_pmu_regmap *r = &plat->pmu;
	if ((ctrl0 & r->ctrl0_enable_val) != r->ctrl0_enable_val)
		return false;
	if (r->ctrl1 != TP_PMU_REG_ABSENT && (ctrl1 & r->ctrl1_enable_val) != r->ctrl1_enable_val)
		return false;
	return true;
}

int tp_pmu_model_create(struct tp_device *dev, struct tp_pmu_model **out)
{
	if (!dev || !out)
		return tp_set_error(-EINVAL, "pmu model: no device");
	*out = NULL;
	/* A bad L2 size fails here, where the run can still say so, not in a
	 * kernel's window, which could only leave its counters at 0. */
	uint64_t l2_bytes;
	int rc = tp_l2_env_bytes(&l2_bytes);
	if (rc)
		return rc;
	struct tp_pmu_model *m = calloc(1, sizeof(*m));
	if (!m)
		return tp_set_error(-ENOMEM, "pmu model: out of memory");
	m->dev = dev;
	pthread_mutex_init(&m->l2_mu, NULL);
	m->plat = tp_device_platform(dev);
	m->arch = tp_pmu_arch_of(m->plat);
	m->n_slots = m->plat->pmu_slots;
	m->n_cores = tp_device_num_cores(dev);
	m->read_ns = calibrate_read_ns();
	size_t bytes = (size_t)m->n_cores * sizeof(struct pmu_core);
	m->cores = aligned_alloc(64, (bytes + 63) / 64 * 64);
	if (!m->cores) {
		int n = m->n_cores;
		pthread_mutex_destroy(&m->l2_mu);
		free(m);
		return tp_set_error(-ENOMEM, "pmu model: out of memory for %d cores", n);
	}
	/* Zero bits are valid atomics and pointers on every target we build
	 * for (as in regs.c). */
	memset(m->cores, 0, bytes);
	for (int c = 0; c < m->n_cores; c++) {
		m->cores[c].m = m;
		m->cores[c].core_id = c;
		m->cores[c].has_window = true;
	}
	*out = m;
	return 0;
}

void tp_pmu_model_destroy(struct tp_pmu_model *m)
{
	if (!m)
		return;
	for (int c = 0; c < m->n_cores; c++)
		tp_pmu_detach(m, c);
	/* relaxed: the device threads are joined (the caller's contract). */
	tp_l2_destroy(atomic_load_explicit(&m->l2, memory_order_relaxed));
	pthread_mutex_destroy(&m->l2_mu);
	free(m->cores);
	free(m);
}

struct tp_device *tp_pmu_model_device(const struct tp_pmu_model *m) { return m->dev; }

const struct tp_l2 *tp_pmu_model_l2(const struct tp_pmu_model *m)
{
	/* acquire: as get_l2()'s load (the caller may look inside). */
	return atomic_load_explicit(&((struct tp_pmu_model *)m)->l2, memory_order_acquire);
}
enum tp_pmu_arch tp_pmu_model_arch(const struct tp_pmu_model *m) { return m->arch; }
int tp_pmu_model_slots(const struct tp_pmu_model *m) { return m->n_slots; }
int tp_pmu_model_cores(const struct tp_pmu_model *m) { return m->n_cores; }

static struct pmu_core *core_of(const struct tp_pmu_model *m, int core_id)
{
	if (!m || core_id < 0 || core_id >= m->n_cores)
		return NULL;
	return &m->cores[core_id];
}

static int bad_core(const struct tp_pmu_model *m, int core_id)
{
	return tp_set_error(-EINVAL, "pmu model: core %d does not exist (expected 0..%d)",
			    core_id, m ? m->n_cores - 1 : -1);
}

int tp_pmu_model_set_window(struct tp_pmu_model *m, int core_id, bool present)
{
	struct pmu_core *pc = core_of(m, core_id);
	if (!pc)
		return bad_core(m, core_id);
	pc->has_window = present;
	return 0;
}

static uint32_t rd(struct tp_pmu_model *m, int core, uint32_t off)
{
	return tp_reg_read(m->dev, core, TP_REG_PMU(off));
}

static void wr(struct tp_pmu_model *m, int core, uint32_t off, uint32_t v)
{
	tp_reg_write(m->dev, core, TP_REG_PMU(off), v);
}

static bool has_ctrl1(const struct tp_pmu_model *m)
{
	return m->plat->pmu.ctrl1 != TP_PMU_REG_ABSENT;
}

static void read_ctrl(struct tp_pmu_model *m, int core, uint32_t *c0, uint32_t *c1)
{
	*c0 = rd(m, core, m->plat->pmu.ctrl0);
	*c1 = has_ctrl1(m) ? rd(m, core, m->plat->pmu.ctrl1) : 0;
}

int tp_pmu_read(struct tp_pmu_model *m, int core_id, struct tp_pmu_sample *out)
{
	if (!core_of(m, core_id))
		return bad_core(m, core_id);
	if (!out)
		return tp_set_error(-EINVAL, "pmu model: core %d: no sample to read into",
				    core_id);
	const struct tp_pmu_regmap *r = &m->plat->pmu;
	memset(out, 0, sizeof(*out));
	out->n_slots = m->n_slots;
	/* Read, then clear: the hardware's read-clear. The core's own adds
	 * happen at its close, before the FIN (a2a3) or on this same thread
	 * (a5), so no add lands between the read and the clear. */
	for (int i = 0; i < m->n_slots; i++) {
		out->counters[i] = rd(m, core_id, r->cnt[i]);
		wr(m, core_id, r->cnt[i], 0);
	}
	uint32_t lo = rd(m, core_id, r->cnt_total0);
	uint32_t hi = rd(m, core_id, r->cnt_total1);
	wr(m, core_id, r->cnt_total0, 0);
	wr(m, core_id, r->cnt_total1, 0);
	out->total_cycles = (uint64_t)lo | ((uint64_t)hi << 32);
	return 0;
}

/* Run init of one core with explicit selectors @ids (all n_slots). With
 * @save_idx the previous selectors are kept for finalize to restore. */
static struct tp_l2 *get_l2(struct tp_pmu_model *m, bool warn);

static int program_ids(struct tp_pmu_model *m, struct pmu_core *pc, const uint32_t *ids,
		       bool save_idx, struct tp_pmu_note *note)
{
	int core_id = pc->core_id;
	struct tp_pmu_note n = { TP_PMU_NOTE_NO_WINDOW, core_id, 0, 0 };
	if (!pc->has_window) {
		if (m->arch == TP_PMU_ARCH_A5)
			TP_WARN("pmu_aicpu_init: core %d has no PMU reg_addr, skipping MMIO "
				"programming", core_id);
		else
			TP_WARN("pmu_aicpu_init: core %d has no PMU reg_addr, skipping (sim or "
				"misconfigured)", core_id);
		if (note)
			*note = n;
		return 0;
	}
	const struct tp_pmu_regmap *r = &m->plat->pmu;
	for (int i = 0; i < m->n_slots; i++) {
		const struct ev_prod *ev = prod_find(m->arch, ids[i]);
		if (ev && ev->kind == EV_L2) {
			(void)get_l2(m, true); /* now, not in a kernel's window */
			break;
		}
	}
	for (int i = 0; i < m->n_slots; i++) {
		/* relaxed: program and finalize are ordered by their caller
		 * (run init / end, or the rt device's launch lock). */
		if (save_idx)
			atomic_store_explicit(&pc->saved_idx[i], rd(m, core_id, r->cnt_idx[i]),
					      memory_order_relaxed);
		wr(m, core_id, r->cnt_idx[i], ids[i]);
	}
	atomic_store_explicit(&pc->idx_saved, save_idx, memory_order_relaxed);
	struct tp_pmu_sample discard;
	tp_pmu_read(m, core_id, &discard);
	wr(m, core_id, r->start_cyc0, 0);
	wr(m, core_id, r->start_cyc1, 0);
	wr(m, core_id, r->stop_cyc0, 0xFFFFFFFFu);
	wr(m, core_id, r->stop_cyc1, 0xFFFFFFFFu);
	uint32_t c0, c1;
	read_ctrl(m, core_id, &c0, &c1);
	/* relaxed: finalize runs after the runtime's own run-end
	 * synchronisation; the atomics only make a racing misuse benign. */
	atomic_store_explicit(&pc->saved_ctrl0, c0, memory_order_relaxed);
	atomic_store_explicit(&pc->saved_ctrl1, c1, memory_order_relaxed);
	atomic_store_explicit(&pc->programmed, true, memory_order_relaxed);
	if (has_ctrl1(m))
		wr(m, core_id, r->ctrl1, r->ctrl1_enable_val);
	wr(m, core_id, r->ctrl0, r->ctrl0_enable_val);
	read_ctrl(m, core_id, &n.ctrl0, &n.ctrl1);
	n.code = tp_pmu_ctrl_enabled(m->plat, n.ctrl0, n.ctrl1) ? TP_PMU_NOTE_ENABLED :
								  TP_PMU_NOTE_DISABLED;
	if (note)
		*note = n;
	return 0;
}

int tp_pmu_program(struct tp_pmu_model *m, int core_id, uint32_t event_type,
		   struct tp_pmu_note *note)
{
	struct pmu_core *pc = core_of(m, core_id);
	if (!pc)
		return bad_core(m, core_id);
	if (!pc->has_window) /* skipped before the group lookup and its WARNs */
		return program_ids(m, pc, NULL, false, note);
	const struct tp_pmu_event_group *g = tp_pmu_event_group_for_init(m->arch, event_type);
	uint32_t ids[TP_PMU_MAX_SLOTS];
	for (int i = 0; i < m->n_slots; i++)
		ids[i] = g->slot[i].id;
	return program_ids(m, pc, ids, false, note);
}

int tp_pmu_program_events(struct tp_pmu_model *m, int core_id, const uint16_t *ids, int n,
			  struct tp_pmu_note *note)
{
	struct pmu_core *pc = core_of(m, core_id);
	if (!pc)
		return bad_core(m, core_id);
	if (n < 0 || n > m->n_slots || (n > 0 && !ids))
		return tp_set_error(-EINVAL, "pmu model: core %d: %d events (expected 0..%d "
				    "for the platform's counter slots)", core_id, n, m->n_slots);
	uint32_t sel[TP_PMU_MAX_SLOTS];
	for (int i = 0; i < m->n_slots; i++)
		sel[i] = i < n ? ids[i] : TP_PMU_EV_UNUSED;
	return program_ids(m, pc, sel, true, note);
}

int tp_pmu_finalize(struct tp_pmu_model *m, int core_id, struct tp_pmu_note *note_close)
{
	struct pmu_core *pc = core_of(m, core_id);
	if (!pc)
		return bad_core(m, core_id);
	struct tp_pmu_note n = { TP_PMU_NOTE_NONE, core_id, 0, 0 };
	if (pc->has_window && atomic_exchange_explicit(&pc->programmed, false,
						       memory_order_relaxed)) {
		/* The close read comes before the restore, so it observes the
		 * window at close, not the state teardown leaves (seed §5.1). */
		read_ctrl(m, core_id, &n.ctrl0, &n.ctrl1);
		n.code = tp_pmu_ctrl_enabled(m->plat, n.ctrl0, n.ctrl1) ? TP_PMU_NOTE_HELD :
									  TP_PMU_NOTE_LOST;
		const struct tp_pmu_regmap *r = &m->plat->pmu;
		/* Selectors only after tp_pmu_program_events(): a run's
		 * tp_pmu_program() leaves its events selected, as before. */
		if (atomic_exchange_explicit(&pc->idx_saved, false, memory_order_relaxed))
			for (int i = 0; i < m->n_slots; i++)
				wr(m, core_id, r->cnt_idx[i],
				   atomic_load_explicit(&pc->saved_idx[i], memory_order_relaxed));
		wr(m, core_id, r->ctrl0, atomic_load_explicit(&pc->saved_ctrl0,
							      memory_order_relaxed));
		if (has_ctrl1(m))
			wr(m, core_id, r->ctrl1, atomic_load_explicit(&pc->saved_ctrl1,
								      memory_order_relaxed));
	}
	if (note_close)
		*note_close = n;
	return 0;
}

/* ---- the AICore window ------------------------------------------------- */

/* Whether the window counts right now: both CTRL registers and the SPR
 * gate. Reads go through tp_reg_read(), so a foreign writer hook runs. */
static bool window_enabled(struct tp_pmu_model *m, int core)
{
	if (!m->cores[core].has_window)
		return false; /* no window address: nothing to count through */
	uint32_t c0, c1;
	read_ctrl(m, core, &c0, &c1);
	if (!tp_pmu_ctrl_enabled(m->plat, c0, c1))
		return false;
	return tp_reg_read(m->dev, core, TP_REG_AICORE_CTRL) & TP_AICORE_CTRL_PMU_GATE;
}

/* End the counting segment that began at last_ns / last_wall_ns, less
 * the @op_ns of an op that is not counted: add its CPU time to the window.
 * The CPU clock is a system call (1-1.5 µs under this hypervisor, some
 * reads much longer), and what the two reads take around their samples is
 * the model's cost, not the kernel's: the segment counts its CPU time less
 * one read (read_ns), and never more than the wall time between the reads
 * (tp_now_ns() after the start's CPU read and before the end's), which a
 * thread's CPU time cannot exceed. @wall_end: tp_now_ns() at the end, read
 * as early as the caller can (the close: first thing), so that the
 * model's own work there, and whatever the host does meanwhile, stays
 * out. So a kernel that kept its CPU counts its wall time, and one that
 * lost it counts the CPU it had. */
static void add_segment(struct pmu_core *pc, uint64_t op_ns, uint64_t wall_end)
{
	const uint64_t now = tp_thread_cpu_ns();
	/* The L2 model's lookups in the segment are the model's cost too;
	 * timed on the wall clock, they come off the wall term only: a
	 * lookup preempted midway would take kernel CPU time off the CPU
	 * term. Unpreempted, CPU and wall agree and the minimum below is the
	 * wall term; preempted elsewhere, the CPU term can keep the lookups'
	 * own CPU time, a few µs at most. */
	const uint64_t model_ns = pc->model_ns;
	pc->model_ns = 0;
	uint64_t cpu = now - pc->last_ns > op_ns ? now - pc->last_ns - op_ns : 0;
	uint64_t wall = wall_end - pc->last_wall_ns > op_ns + model_ns
				? wall_end - pc->last_wall_ns - op_ns - model_ns
				: 0;
	cpu = cpu > pc->m->read_ns ? cpu - pc->m->read_ns : 0;
	pc->win_ns += cpu < wall ? cpu : wall;
}

/* Sample the window after an op that took @op_cycles (0 at open/close):
 * keep the counted time up to date on a change of state only, so the
 * per-op cost is the register reads and no clock read. A window seen
 * disabled stops counting time at the start of the op after which it was
 * seen (that op is not counted either); one seen enabled again counts from
 * now. Return whether it counts now. */
static bool sample(struct pmu_core *pc, uint64_t op_cycles)
{
	bool en = window_enabled(pc->m, pc->core_id);
	if (en == pc->was_enabled)
		return en;
	if (en) {
		pc->model_ns = 0;
		pc->last_ns = tp_thread_cpu_ns();
		pc->last_wall_ns = tp_now_ns();
	} else {
		/* cycles at 1.8 GHz back to ns: × 5 / 9 */
		add_segment(pc, op_cycles * 5 / 9, tp_now_ns());
	}
	pc->was_enabled = en;
	return en;
}

static void usage_hook(struct tp_core_ctx *ctx, const struct tp_usage_delta *d, void *ud)
{
	(void)ctx;
	struct pmu_core *pc = ud;
	if (!pc->open)
		return;
	if (!sample(pc, d->cycles)) {
		/* relaxed: a statistic; nothing is ordered by it. */
		atomic_fetch_add_explicit(&pc->ops_refused, 1, memory_order_relaxed);
		return;
	}
	int n = pc->m->n_slots;
	for (int i = 0; i < n; i++)
		if (pc->prod[i])
			pc->acc[i] += prod_value(pc->prod[i], d);
	if (pc->l2_on && d->n_gm) {
		/* acquire: pairs with the release of the CAS that published
		 * the cache (get_l2()); set before the open read it. */
		struct tp_l2 *l2 = atomic_load_explicit(&pc->m->l2, memory_order_acquire);
		struct tp_l2_counts c;
		memset(&c, 0, sizeof(c));
		/* The lookups are the model's work, not the kernel's: timed and
		 * left out of the window (add_segment()). */
		const uint64_t t0 = tp_now_ns();
		for (uint32_t g = 0; g < d->n_gm; g++)
			tp_l2_access(l2, pc->launch, d->gm[g].base, d->gm[g].row_bytes,
				     d->gm[g].rows, d->gm[g].stride, d->gm[g].dir, &c);
		pc->model_ns += tp_now_ns() - t0;
		for (int i = 0; i < n; i++)
			if (pc->prod[i] && pc->prod[i]->kind == EV_L2)
				pc->acc[i] += c.n[pc->prod[i]->dir][pc->prod[i]->mem];
	}
	pc->busy_sum += d->cycles;
	/* relaxed: a statistic, as above. */
	atomic_fetch_add_explicit(&pc->ops_counted, 1, memory_order_relaxed);
}

int tp_pmu_attach(struct tp_pmu_model *m, int core_id, struct tp_core_ctx *ctx)
{
	struct pmu_core *pc = core_of(m, core_id);
	if (!pc || !ctx)
		return bad_core(m, core_id);
	pc->ctx = ctx;
	tp_core_ctx_set_usage_hook(ctx, usage_hook, pc);
	return 0;
}

void tp_pmu_detach(struct tp_pmu_model *m, int core_id)
{
	struct pmu_core *pc = core_of(m, core_id);
	if (!pc || !pc->ctx)
		return;
	if (pc->ctx->on_usage == usage_hook && pc->ctx->on_usage_ud == pc)
		tp_core_ctx_set_usage_hook(pc->ctx, NULL, NULL);
	tp_core_ctx_set_counting(pc->ctx, false);
	pc->ctx = NULL;
}

/* The device's L2 model, made on first use (one thread makes it, under
 * l2_mu, the others wait for it); NULL (with one WARN if @warn: the host's
 * tp_pmu_model_need_l2() reports the error itself) when it cannot be
 * made: the L2 events then read 0. Called when a core is programmed with
 * an L2 event, before any kernel runs (program_ids()), so that making it
 * and faulting in its tags (12 MiB at the default size) happens outside
 * every kernel and counting window; a window that finds it missing (its
 * selectors written some other way) makes it before its time starts. */
static struct tp_l2 *get_l2(struct tp_pmu_model *m, bool warn)
{
	/* acquire: pairs with the release store below (the tags, zeroed
	 * and faulted in, before the pointer). */
	struct tp_l2 *l2 = atomic_load_explicit(&m->l2, memory_order_acquire);
	if (l2 || atomic_load_explicit(&m->l2_failed, memory_order_relaxed))
		return l2;
	pthread_mutex_lock(&m->l2_mu);
	/* relaxed: under l2_mu, which every store of l2 holds. */
	l2 = atomic_load_explicit(&m->l2, memory_order_relaxed);
	if (!l2 && !atomic_load_explicit(&m->l2_failed, memory_order_relaxed)) {
		if (tp_l2_create(0, &l2)) {
			snprintf(m->l2_error, sizeof(m->l2_error), "%s", tp_last_error());
			/* relaxed: under l2_mu; it only says the WARN was given. */
			atomic_store_explicit(&m->l2_failed, true, memory_order_relaxed);
			if (warn)
				TP_WARN("pmu model: no L2 model, the L2_CACHE events read 0: %s",
					tp_last_error());
			l2 = NULL;
		} else {
			/* release: the model's zeroed tags before the pointer, for
			 * the lock-free loads above and in usage_hook(). */
			atomic_store_explicit(&m->l2, l2, memory_order_release);
		}
	}
	pthread_mutex_unlock(&m->l2_mu);
	return l2;
}

int tp_pmu_model_need_l2(struct tp_pmu_model *m, const uint32_t *ids, int n)
{
	bool l2 = false;
	for (int i = 0; i < n && !l2; i++) {
		const struct ev_prod *ev = prod_find(m->arch, ids[i]);
		l2 = ev && ev->kind == EV_L2;
	}
	if (!l2 || get_l2(m, false))
		return 0;
	char why[sizeof(m->l2_error)];
	pthread_mutex_lock(&m->l2_mu);
	snprintf(why, sizeof(why), "%s", m->l2_error);
	pthread_mutex_unlock(&m->l2_mu);
	return tp_set_error(-ENOMEM, "pmu model: cannot make the L2 cache model the L2_CACHE "
			    "events count on: %s", why);
}

void tp_pmu_window_open(struct tp_pmu_model *m, int core_id)
{
	tp_pmu_window_open_in(m, core_id, tp_device_launch_seq(m->dev));
}

void tp_pmu_window_open_in(struct tp_pmu_model *m, int core_id, uint64_t l2_launch)
{
	struct pmu_core *pc = core_of(m, core_id);
	if (!pc || pc->open)
		return;
	const struct tp_pmu_regmap *r = &m->plat->pmu;
	/* The selectors are what PMU_CNTi_IDX holds now; they are fixed for
	 * the window (the AICPU programs them once per run). */
	pc->l2_on = false;
	for (int i = 0; i < m->n_slots; i++) {
		pc->prod[i] = prod_find(m->arch, rd(m, core_id, r->cnt_idx[i]));
		pc->acc[i] = 0;
		pc->l2_on |= pc->prod[i] && pc->prod[i]->kind == EV_L2;
	}
	if (pc->l2_on) {
		pc->l2_on = get_l2(m, true) != NULL;
		pc->launch = l2_launch;
	}
	pc->win_ns = 0;
	pc->busy_sum = 0;
	uint32_t spr = tp_reg_read(m->dev, core_id, TP_REG_AICORE_CTRL);
	tp_reg_write(m->dev, core_id, TP_REG_AICORE_CTRL, spr | TP_AICORE_CTRL_PMU_GATE);
	pc->open = true;
	pc->was_enabled = false;
	if (pc->ctx)
		tp_core_ctx_set_counting(pc->ctx, true);
	/* Last: the window's time starts at its clock reads, right before the
	 * kernel (no op runs in between). */
	sample(pc, 0);
}

static void add32(struct tp_pmu_model *m, int core, uint32_t off, uint64_t v)
{
	if (v)
		wr(m, core, off, rd(m, core, off) + (uint32_t)v); /* 32-bit, wrapping */
}

void tp_pmu_window_close(struct tp_pmu_model *m, int core_id)
{
	/* First: the kernel's end, before the model's own work below. */
	const uint64_t wall_end = tp_now_ns();
	struct pmu_core *pc = core_of(m, core_id);
	if (!pc || !pc->open)
		return;
	if (pc->ctx)
		tp_core_ctx_set_counting(pc->ctx, false);
	if (pc->was_enabled) {
		/* Enabled at the close: the time since the last change
		 * counts. A reset seen only here leaves that time out
		 * (never over-count); the busy floor below keeps the
		 * counted ops. */
		if (window_enabled(m, core_id))
			add_segment(pc, 0, wall_end);
		pc->was_enabled = false;
	}
	pc->open = false;
	uint32_t spr = tp_reg_read(m->dev, core_id, TP_REG_AICORE_CTRL);
	tp_reg_write(m->dev, core_id, TP_REG_AICORE_CTRL, spr & ~TP_AICORE_CTRL_PMU_GATE);

	const struct tp_pmu_regmap *r = &m->plat->pmu;
	for (int i = 0; i < m->n_slots; i++)
		add32(m, core_id, r->cnt[i], pc->acc[i]);
	/* The reads of the clock are out already (add_segment); the ops'
	 * busy floor below still holds. */
	uint64_t cyc = tp_core_cycles_from_ns(pc->win_ns);
	if (cyc < pc->busy_sum)
		cyc = pc->busy_sum;
	if (cyc) {
		uint64_t t = (uint64_t)rd(m, core_id, r->cnt_total0) |
			     ((uint64_t)rd(m, core_id, r->cnt_total1) << 32);
		t += cyc;
		wr(m, core_id, r->cnt_total0, (uint32_t)t);
		wr(m, core_id, r->cnt_total1, (uint32_t)(t >> 32));
	}
}

void tp_pmu_on_kernel_begin(struct tp_aicore *core, void *ud)
{
	tp_pmu_window_open(ud, tp_aicore_id(core));
}

void tp_pmu_on_kernel_end(struct tp_aicore *core, void *ud)
{
	tp_pmu_window_close(ud, tp_aicore_id(core));
}

uint64_t tp_pmu_ops_counted(const struct tp_pmu_model *m, int core_id)
{
	struct pmu_core *pc = core_of(m, core_id);
	/* relaxed: statistics; a reader that needs them exact synchronises
	 * with the core first (FIN, join). */
	return pc ? atomic_load_explicit(&pc->ops_counted, memory_order_relaxed) : 0;
}

uint64_t tp_pmu_ops_refused(const struct tp_pmu_model *m, int core_id)
{
	struct pmu_core *pc = core_of(m, core_id);
	return pc ? atomic_load_explicit(&pc->ops_refused, memory_order_relaxed) : 0;
}
