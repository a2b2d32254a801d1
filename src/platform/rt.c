/* SPDX-License-Identifier: MIT */
/*
 * rt.c — the operator-level device API (taskprof/rt.h) on the simulated
 * device (ARCHITECTURE.md §1 and §4, issue 3 §2).
 *
 * An rt device is one struct tp_device whose threads live as long as the
 * device is open: one AICPU thread running a dispatcher, one thread per
 * AICore, all parked on doorbells while idle. A launch is a job in a
 * one-slot mailbox and runs through the register protocol of
 * spec/runtime-model.md §2.7–§2.8:
 *
 *   host    tp_rt_launch: job fields, job_seq (release), ring aicpu_db,
 *           park on host_db until done_seq == job_seq
 *   AICPU   acquire job_seq; for each free core (AIV first, then AIC):
 *           payload[core][token & 1], DATA_MAIN_BASE = token (release);
 *           park on aicpu_db (every COND write rings it) until a core
 *           FINs; give the freed core the next block; ...; when every
 *           block has FINed: done_seq (release), ring host_db
 *   AICore  acquire token; read payload[token & 1]; COND = ACK; task
 *           begin of the core's tile context; kernel begin hook;
 *           kernel(block_idx, block_dim, args); end hook; task end (a
 *           tile op failure becomes the block's result); COND = FIN
 *           (release: the kernel's stores and the block's result are
 *           visible to whoever acquires the FIN, and from there to the
 *           host)
 *
 * Each AICore thread binds its own struct tp_core_ctx (platform/tile/
 * core_ctx.h) for its whole life, so rt kernels can use the tile API.
 *
 * Tool side (taskprof/rt_tool.h): the driver profiling channels are
 * rings of op_chan.c; the device's part is here. A channel starts and
 * stops under launch_lock, so a launch sees it started for all of its
 * blocks or for none: the launch copies the flags into the job. With
 * AICORE_PMU started every block opens the core's PMU counting window
 * (pmu_model.c) around its body and, before its FIN, reads the counters
 * and pushes a BLOCK record; with TASK_TIME the launching thread pushes
 * one LAUNCH record. A hidden instrumentation buffer is bound to the
 * block's tile context for its body (platform/tile/instr.h).
 *
 * Locks: g_lock (a rwlock) guards the device table. Every call holds it
 * for reading while it uses a device; opening and resetting hold it for
 * writing, so a device is never freed under a caller. A device's
 * launch_lock serialises its launches (the simulated stream has depth 1).
 *
 * LD_PRELOAD: no tp_rt_* function calls another tp_rt_* through its
 * exported name; they share static helpers, so an interposed function
 * sees exactly the application's calls (spec/opprof.md §3.2).
 */
#include "taskprof/rt.h"

#include "taskprof/rt_tool.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "platform/dev_memory.h"
#include "platform/device.h"
#include "platform/doorbell.h"
#include "platform/op_chan.h"
#include "platform/pmu_model.h"
#include "platform/regs.h"
#include "platform/rt_internal.h"
#include "platform/tile/core_ctx.h"
#include "platform/tile/instr.h"

_Static_assert(TP_EV_NONE == TP_PMU_EV_UNUSED, "an unused slot counts nothing");
_Static_assert(TP_DRV_PROF_MAX_EVENTS >= TP_PMU_MAX_SLOTS, "a record holds every slot");

/* Budget of the AICore start-up handshake when a device opens, ns. */
#define RT_HANDSHAKE_NS (10ull * 1000000000ull)
/* Budget of the exit handshake when a device resets, ns. */
#define RT_EXIT_NS ((uint64_t)TP_DEVICE_TEARDOWN_TIMEOUT_MS * 1000000ull)
/* Largest TASKPROF_DEVICE_MEM_MB: 1 TiB of address space. */
#define RT_MEM_MB_MAX (1u << 20)

/* What the AICPU hands one AICore for one block (PTO2DispatchPayload's
 * role: function, args, local_context.{block_idx, block_num}). */
struct rt_payload {
	tp_rt_kernel_fn kernel;
	void *args;
	uint32_t block_idx;
	uint32_t block_dim;
	void *instr;        /* hidden instrumentation buffer, or NULL */
	uint32_t instr_cap; /* its per_block_cap */
	bool pmu;           /* AICORE_PMU started: window + BLOCK record */
	uint64_t seq;       /* the launch's sequence number */
};

struct rt_job {
	tp_rt_kernel_fn kernel;
	void *args;
	uint32_t block_dim;
	const int *order;   /* cores the blocks may use, in dispatch order */
	int n_order;
	void *instr;
	uint32_t instr_cap;
	bool pmu;
	uint64_t seq;
};

/* One block's outcome: written by its AICore before its FIN (release),
 * read by the AICPU after acquiring the FIN. */
struct rt_block_result {
	int rc;             /* the core's sticky tile error, or 0 */
	uint32_t block;
	char msg[TP_CORE_ERROR_MSG_MAX];
};

/* A launch's outcome: written by the AICPU before its release store of
 * done_seq, read by the launching host thread after acquiring it. */
struct rt_outcome {
	int rc;             /* the failing block with the lowest index, or 0 */
	uint32_t block;
	int core;
	char msg[TP_CORE_ERROR_MSG_MAX]; /* a copy of a block's */
	uint64_t t_first;   /* first dispatch, system-counter ticks */
	uint64_t t_last;    /* last FIN seen */
};

enum rt_state {
	RT_STARTING = 0,
	RT_READY = 1,   /* every AICore answered the handshake */
	RT_FAILED = 2,  /* start_rc / start_msg say why */
};

struct rt_dev {
	struct tp_device *dev;
	int id;
	int num_cores;
	int block_dim;                   /* clusters: AIC ids 0..bd-1 */
	int *order;                      /* dispatch order: AIV ids, then AIC ids */
	struct rt_payload (*payload)[2]; /* per core, indexed token & 1 */
	struct tp_core_ctx *ctxs;        /* per core; bound on its thread */
	struct rt_block_result *result;  /* per core, see the struct */
	struct rt_outcome out;

	/* Counters of tp_rt_tool_device_stats(); launchers add under
	 * launch_lock, anyone reads (relaxed: plain statistics). */
	_Atomic uint64_t launches, blocks;

	/* Driver channels. Written under launch_lock while no launch runs;
	 * AICores read them after the job_seq → token release / acquire
	 * chain of the next launch. */
	bool pmu_on, tt_on;
	struct tp_pmu_model *pmu;        /* created at the first AICORE_PMU start */
	uint32_t pmu_n[2];               /* events per core type (AIC 0, AIV 1) */
	uint16_t pmu_ev[2][TP_DRV_PROF_MAX_EVENTS];

	pthread_mutex_t launch_lock;     /* one launch at a time */
	/* Written by the launching host thread under launch_lock before its
	 * release store of job_seq; read by the AICPU after acquiring it. */
	struct rt_job job;
	_Atomic uint64_t job_seq;        /* host: jobs posted */
	_Atomic uint64_t done_seq;       /* AICPU: jobs completed */
	_Atomic bool quit;               /* host: leave the dispatcher loop */
	_Atomic int state;               /* enum rt_state, AICPU → host */
	int start_rc;                    /* valid once state is RT_FAILED */
	char start_msg[TP_ERROR_MSG_MAX];

	/* Rung by the host (job, quit) and, as COND listener, by every
	 * AICore's ACK / FIN; the AICPU parks on it. */
	struct tp_doorbell aicpu_db;
	/* Rung by the AICPU (state change, job done); the host parks on it. */
	struct tp_doorbell host_db;

	/* AICPU-private dispatch state, per core (CoreExecState's role). */
	uint32_t *dispatch_seq;
	uint32_t *token;                 /* running token, 0 = idle */
};

/* Device table. g_hooks is applied to every device at open. */
static pthread_rwlock_t g_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct rt_dev *g_devs[TP_RT_MAX_DEVICES];
/* In a process forked from one that had opened devices: those devices,
 * whose threads stayed in the parent (rt_atfork_child). Never used, never
 * shut down; tp_rt_reset_device() forgets one so the child may open the
 * device afresh. Written only by the child's single thread at fork and
 * under g_lock for writing. */
static struct rt_dev *g_inherited[TP_RT_MAX_DEVICES];
static pid_t g_inherited_from;
static struct tp_kernel_hooks g_hooks;

/* Per device id, over every device ever opened with that id (the
 * TASKPROF_SIM_STATS exit line); relaxed: counters read at exit. */
static _Atomic uint64_t g_id_launches[TP_RT_MAX_DEVICES];
static _Atomic uint64_t g_id_blocks[TP_RT_MAX_DEVICES];
static atomic_bool g_id_opened[TP_RT_MAX_DEVICES];

/* The calling thread's current device (aclrtSetDevice is per thread). */
static _Thread_local int tl_device;
/* The calling thread's open tp_rt_range_push() name, or NULL. */
static _Thread_local const char *tl_range;

/* ---- AICore side --------------------------------------------------------- */

/* Block @b's region of a hidden buffer whose header says @cap records per
 * block (tp_rt_instr_block() without reading the header again). */
static struct tp_instr_block *instr_region(void *buf, uint32_t b, uint32_t cap)
{
	return (struct tp_instr_block *)((char *)buf + sizeof(struct tp_instr_hdr) +
					 (size_t)b * (sizeof(struct tp_instr_block) +
						      (size_t)cap * sizeof(struct tp_instr_rec)));
}

/* AICORE_PMU: read (and clear) the counters the window just added and push
 * the block's record. Before the FIN, so stop (which waits for the launch)
 * finds every record of the launch in the ring. */
static void push_block_record(struct rt_dev *rd, int id, const struct tp_core_ctx *ctx,
			      const struct rt_payload *p, uint64_t t0, uint64_t t1)
{
	struct tp_pmu_sample s;
	tp_pmu_read(rd->pmu, id, &s);
	int ty = ctx->core_type == TP_CORE_AIC ? 0 : 1;
	uint32_t n = rd->pmu_n[ty];
	struct tp_op_rec r;
	memset(&r, 0, sizeof(r));
	r.kind = TP_OP_REC_BLOCK;
	r.core_type = (uint32_t)ty;
	r.core_id = id;
	r.block_id = p->block_idx;
	r.sub_block = 0;
	r.seq = p->seq;
	r.total_cycles = s.total_cycles;
	r.t_start = t0;
	r.t_end = t1;
	r.n_events = n;
	for (uint32_t i = 0; i < TP_DRV_PROF_MAX_EVENTS; i++) {
		r.event_id[i] = i < n ? rd->pmu_ev[ty][i] : TP_EV_NONE;
		r.value[i] = i < n && (int)i < s.n_slots ? s.counters[i] : 0;
	}
	tp_op_chan_push(rd->id, TP_DRV_CH_AICORE_PMU, &r);
}

/* One block on the calling AICore; its outcome goes to rd->result[id]. */
static void run_block(struct rt_dev *rd, struct tp_aicore *core, int id,
		      struct tp_core_ctx *ctx, const struct rt_payload *p)
{
	tp_core_ctx_task_begin(ctx);
	tp_aicore_kernel_begin(core);
	uint64_t t0 = 0, t1 = 0;
	if (p->pmu) {
		/* The L2 model starts empty at each kernel launch (and each
		 * replay execution: a launch of its own, a new seq). */
		tp_pmu_window_open_in(rd->pmu, id, p->seq);
		t0 = tp_sys_cnt();
	}
	/* The block's instrumentation points bracket the kernel call alone:
	 * opening the counting window reads the thread's CPU clock (a system
	 * call, 1-15 µs here), which is no time of the kernel's. */
	if (p->instr) {
		tp_core_ctx_set_instr(ctx, instr_region(p->instr, p->block_idx, p->instr_cap),
				      p->instr_cap);
		tp_instr_put(ctx, TP_INSTR_BLOCK_BEGIN, (uint32_t)id, NULL, 0);
	}
	p->kernel(p->block_idx, p->block_dim, p->args);
	if (p->instr) {
		tp_instr_put(ctx, TP_INSTR_BLOCK_END, (uint32_t)id, NULL, 0);
		tp_core_ctx_set_instr(ctx, NULL, 0);
	}
	if (p->pmu) {
		t1 = tp_sys_cnt();
		tp_pmu_window_close(rd->pmu, id);
	}
	tp_aicore_kernel_end(core);
	struct rt_block_result *res = &rd->result[id];
	res->rc = tp_core_ctx_task_end(ctx);
	res->block = p->block_idx;
	if (res->rc)
		tp_error_fit(res->msg, sizeof(res->msg), tp_core_ctx_error_msg(ctx));
	if (p->pmu)
		push_block_record(rd, id, ctx, p, t0, t1);
}

static void rt_aicore_main(struct tp_aicore *core, void *arg)
{
	struct rt_dev *rd = arg;
	int id = tp_aicore_id(core);
	struct tp_core_ctx *ctx = &rd->ctxs[id];
	if (tp_aicore_handshake(core) == TP_AICORE_EXITING)
		return;
	/* The tile API finds the core through the thread's bound context;
	 * kernel hooks through the core's kernel_ctx. */
	tp_core_ctx_bind(ctx);
	tp_aicore_set_kernel_ctx(core, ctx);
	uint32_t last = TP_AICPU_IDLE_TASK_ID;
	for (;;) {
		/* Parks on the dispatch doorbell; the acquire load of the token
		 * inside makes the AICPU's payload store visible. */
		uint32_t token = tp_aicore_wait_dispatch(core, last);
		if (token == TP_AICORE_EXIT_SIGNAL)
			break;
		last = token;
		struct rt_payload p = rd->payload[id][token & 1];
		tp_aicore_ack(core, token);
		run_block(rd, core, id, ctx, &p);
		tp_aicore_fin(core, token);
	}
	tp_aicore_set_kernel_ctx(core, NULL);
	tp_core_ctx_bind(NULL);
	tp_aicore_exit_ack(core);
}

/* ---- AICPU side ---------------------------------------------------------- */

static void dispatch_block(struct rt_dev *rd, int core, const struct rt_job *job,
			   uint32_t block_idx)
{
	uint32_t token = tp_reg_token_next(&rd->dispatch_seq[core]);
	rd->payload[core][token & 1] = (struct rt_payload){
		.kernel = job->kernel,
		.args = job->args,
		.block_idx = block_idx,
		.block_dim = job->block_dim,
		.instr = job->instr,
		.instr_cap = job->instr_cap,
		.pmu = job->pmu,
		.seq = job->seq,
	};
	rd->token[core] = token;
	/* Release store of DATA_MAIN_BASE: publishes the payload above. */
	tp_aicpu_dispatch(rd->dev, core, token);
}

static bool core_finished(struct rt_dev *rd, int core)
{
	/* Acquire (tp_reg_read): the kernel's stores happen before its FIN. */
	return rd->token[core] != 0 &&
	       tp_reg_read(rd->dev, core, TP_REG_COND) == TP_COND_FIN(rd->token[core]);
}

static bool any_finished(void *arg)
{
	struct rt_dev *rd = arg;
	for (int c = 0; c < rd->num_cores; c++)
		if (core_finished(rd, c))
			return true;
	return false;
}

/* The block that just FINed on @core: keep the failure of the lowest
 * block index (deterministic whatever the order of FINs). */
static void collect_result(struct rt_dev *rd, int core)
{
	const struct rt_block_result *r = &rd->result[core];
	struct rt_outcome *o = &rd->out;
	if (r->rc == 0 || (o->rc != 0 && o->block < r->block))
		return;
	o->rc = r->rc;
	o->block = r->block;
	o->core = core;
	_Static_assert(sizeof(o->msg) == sizeof(r->msg), "a block's message fits the outcome");
	memcpy(o->msg, r->msg, sizeof(o->msg));
}

/* One launch: every block once, a freed core of the launch's set takes
 * the next block. */
static void run_job(struct rt_dev *rd)
{
	const struct rt_job job = rd->job;
	struct rt_outcome *o = &rd->out;
	o->rc = 0;
	o->block = 0;
	o->core = -1;
	o->msg[0] = '\0';
	uint32_t next = 0, done = 0;
	o->t_first = tp_sys_cnt();
	for (int i = 0; i < job.n_order && next < job.block_dim; i++)
		dispatch_block(rd, job.order[i], &job, next++);
	while (done < job.block_dim) {
		tp_doorbell_wait(&rd->aicpu_db, any_finished, rd, TP_DOORBELL_FOREVER);
		for (int i = 0; i < job.n_order; i++) {
			int c = job.order[i];
			if (!core_finished(rd, c))
				continue;
			rd->token[c] = 0;
			done++;
			collect_result(rd, c);
			if (next < job.block_dim)
				dispatch_block(rd, c, &job, next++);
		}
	}
	o->t_last = tp_sys_cnt();
}

struct job_wait {
	struct rt_dev *rd;
	uint64_t seen;
};

static bool job_posted(void *arg)
{
	struct job_wait *w = arg;
	/* acquire: pairs with the host's release stores of quit / job_seq,
	 * which publish the job fields. */
	return atomic_load_explicit(&w->rd->quit, memory_order_acquire) ||
	       atomic_load_explicit(&w->rd->job_seq, memory_order_acquire) != w->seen;
}

static void rt_aicpu_main(struct tp_aicpu *cpu, void *arg)
{
	(void)cpu;
	struct rt_dev *rd = arg;
	struct tp_device *dev = rd->dev;
	for (int c = 0; c < rd->num_cores; c++)
		tp_reg_set_cond_listener(dev, c, &rd->aicpu_db);

	int rc = tp_aicpu_open_cores(dev, rd->order, rd->num_cores, RT_HANDSHAKE_NS);
	if (rc) {
		rd->start_rc = rc;
		snprintf(rd->start_msg, sizeof(rd->start_msg), "%s", tp_last_error());
	}
	/* release: start_rc / start_msg before the state the host acquires. */
	atomic_store_explicit(&rd->state, rc ? RT_FAILED : RT_READY, memory_order_release);
	tp_doorbell_ring(&rd->host_db);

	uint64_t seen = 0;
	while (rc == 0) {
		struct job_wait w = { rd, seen };
		tp_doorbell_wait(&rd->aicpu_db, job_posted, &w, TP_DOORBELL_FOREVER);
		/* acquire: as in job_posted(). */
		if (atomic_load_explicit(&rd->quit, memory_order_acquire))
			break;
		seen = atomic_load_explicit(&rd->job_seq, memory_order_acquire);
		run_job(rd);
		/* release: every block's FIN was acquired above, so the kernels'
		 * stores happen before the host's acquire of done_seq. */
		atomic_store_explicit(&rd->done_seq, seen, memory_order_release);
		tp_doorbell_ring(&rd->host_db);
	}

	/* platform_deinit_aicore_regs: exit signal, wait for the exit ACKs.
	 * tp_device_wait() sends the signal again to any core that did not
	 * answer and reports it. */
	tp_aicpu_close_cores(dev, rd->order, rd->num_cores, RT_EXIT_NS);
	for (int c = 0; c < rd->num_cores; c++)
		tp_reg_set_cond_listener(dev, c, NULL);
}

/* ---- open / shutdown (g_lock held for writing) ---------------------------- */

static void rt_dev_free(struct rt_dev *rd)
{
	/* The model detaches from the contexts, so it goes first. */
	tp_pmu_model_destroy(rd->pmu);
	if (rd->ctxs)
		tp_core_ctxs_fini(rd->ctxs, rd->num_cores);
	free(rd->ctxs);
	free(rd->result);
	pthread_mutex_destroy(&rd->launch_lock);
	free(rd->order);
	free(rd->payload);
	free(rd->dispatch_seq);
	free(rd->token);
	free(rd);
}

static bool state_known(void *arg)
{
	struct rt_dev *rd = arg;
	/* acquire: pairs with the AICPU's release store of state. */
	return atomic_load_explicit(&rd->state, memory_order_acquire) != RT_STARTING;
}

static bool job_done(void *arg)
{
	struct job_wait *w = arg;
	/* acquire: pairs with the AICPU's release store of done_seq. */
	return atomic_load_explicit(&w->rd->done_seq, memory_order_acquire) == w->seen;
}

/* Stop the dispatcher and the cores, free the device. On -ETIMEDOUT the
 * tp_device is leaked running (tp_device_close() keeps it) and the rest
 * of @rd with it: its threads may still read it. */
static int rt_shutdown(struct rt_dev *rd)
{
	/* release: pairs with the acquire in job_posted(). */
	atomic_store_explicit(&rd->quit, true, memory_order_release);
	tp_doorbell_ring(&rd->aicpu_db);
	int rc = tp_device_wait(rd->dev);
	if (rc) {
		TP_ERROR("rt device %d: abandoned: %s", rd->id, tp_last_error());
		tp_set_error(rc, "rt device %d: threads did not stop; device abandoned",
			     rd->id);
		return rc;
	}
	tp_device_close(rd->dev);
	rt_dev_free(rd);
	return 0;
}

static int parse_mem_mb(size_t *bytes)
{
	const char *v = getenv("TASKPROF_DEVICE_MEM_MB");
	*bytes = 0;
	if (!v || !*v)
		return 0;
	char *end = NULL;
	errno = 0;
	unsigned long long mb = strtoull(v, &end, 10);
	if (errno || end == v || *end || mb < 1 || mb > RT_MEM_MB_MAX || v[0] == '-')
		return tp_set_error(-EINVAL, "TASKPROF_DEVICE_MEM_MB='%s': expected a number "
				    "of MiB in 1..%u", v, RT_MEM_MB_MAX);
	*bytes = (size_t)mb << 20;
	return 0;
}

static int rt_open(int id, struct rt_dev **out)
{
	const char *pname = getenv("TASKPROF_PLATFORM");
	if (!pname || !*pname)
		pname = "a2a3sim";
	if (!tp_platform_find(pname))
		return tp_set_error(-EINVAL, "TASKPROF_PLATFORM='%s': unknown platform "
				    "(expected %s)", pname, tp_platform_names());
	size_t mem_bytes;
	int rc = parse_mem_mb(&mem_bytes);
	if (rc)
		return rc;

	struct tp_device_config cfg = {
		.platform = pname,
		.device_id = id,
		.aicpu_threads = 1,
		.mem_bytes = mem_bytes,
	};
	struct tp_device *dev;
	rc = tp_device_create(&cfg, &dev);
	if (rc)
		return tp_set_error(rc, "rt device %d: %s", id, tp_last_error());

	int n = tp_device_num_cores(dev), bd = tp_device_block_dim(dev);
	struct rt_dev *rd = calloc(1, sizeof(*rd));
	if (rd) {
		rd->order = calloc((size_t)n, sizeof(*rd->order));
		rd->payload = calloc((size_t)n, sizeof(*rd->payload));
		rd->dispatch_seq = calloc((size_t)n, sizeof(*rd->dispatch_seq));
		rd->token = calloc((size_t)n, sizeof(*rd->token));
		rd->ctxs = calloc((size_t)n, sizeof(*rd->ctxs));
		rd->result = calloc((size_t)n, sizeof(*rd->result));
	}
	if (!rd || !rd->order || !rd->payload || !rd->dispatch_seq || !rd->token ||
	    !rd->ctxs || !rd->result) {
		if (rd) {
			free(rd->order);
			free(rd->payload);
			free(rd->dispatch_seq);
			free(rd->token);
			free(rd->ctxs);
			free(rd->result);
			free(rd);
		}
		tp_device_close(dev);
		return tp_set_error(-ENOMEM, "rt device %d: out of host memory", id);
	}
	rd->dev = dev;
	rd->id = id;
	rd->num_cores = n;
	rd->block_dim = bd;
	/* AIV cores (ids bd..3bd-1) first, then AIC (0..bd-1). */
	for (int i = 0; i < n; i++)
		rd->order[i] = i < 2 * bd ? bd + i : i - 2 * bd;
	pthread_mutex_init(&rd->launch_lock, NULL);
	enum tp_core_type *types = malloc((size_t)n * sizeof(*types));
	if (types)
		for (int c = 0; c < n; c++)
			types[c] = tp_topo_core_type(bd, c);
	rc = types ? tp_core_ctxs_init(rd->ctxs, n, types)
		   : tp_set_error(-ENOMEM, "out of host memory");
	free(types);
	if (rc) {
		rc = tp_set_error(rc, "rt device %d: %s", id, tp_last_error());
		tp_device_close(dev);
		rt_dev_free(rd);
		return rc;
	}
	atomic_init(&rd->launches, 0);
	atomic_init(&rd->blocks, 0);
	atomic_init(&rd->job_seq, 0);
	atomic_init(&rd->done_seq, 0);
	atomic_init(&rd->quit, false);
	atomic_init(&rd->state, RT_STARTING);
	tp_doorbell_init(&rd->aicpu_db);
	tp_doorbell_init(&rd->host_db);

	struct tp_launch_config lc = {
		.aicpu_fn = rt_aicpu_main,
		.aicore_fn = rt_aicore_main,
		.arg = rd,
		.hooks = g_hooks,
	};
	rc = tp_device_launch_ex(dev, &lc);
	if (rc) {
		rc = tp_set_error(rc, "rt device %d: %s", id, tp_last_error());
		tp_device_close(dev);
		rt_dev_free(rd);
		return rc;
	}
	/* The handshake has its own budget; the AICPU always reports. */
	tp_doorbell_wait(&rd->host_db, state_known, rd, TP_DOORBELL_FOREVER);
	/* acquire: as in state_known(), pairs with the AICPU's release store
	 * of state, so start_rc / start_msg read below are its. */
	if (atomic_load_explicit(&rd->state, memory_order_acquire) == RT_FAILED) {
		rc = rd->start_rc;
		char msg[TP_ERROR_MSG_MAX];
		snprintf(msg, sizeof(msg), "%s", rd->start_msg);
		if (rt_shutdown(rd) == 0)
			tp_set_error(rc, "rt device %d: cannot start: %s", id, msg);
		return rc;
	}
	TP_DEBUG("rt device %d open: %s, %d AICores", id, pname, n);
	/* relaxed: read at exit for the TASKPROF_SIM_STATS line only. */
	atomic_store_explicit(&g_id_opened[id], true, memory_order_relaxed);
	*out = rd;
	return 0;
}

/* ---- device table ----------------------------------------------------------- */

/*
 * fork(): the child has the devices' memory but none of their threads, and
 * a call that waits for them would wait forever (a launch), or crash (the
 * shutdown at exit joined threads of the parent). The child's one thread
 * moves them aside before anything else runs; g_lock is made anew, as a
 * thread of the parent may have held it at the fork.
 */
static void rt_atfork_child(void)
{
	bool any = false;
	for (int i = 0; i < TP_RT_MAX_DEVICES; i++) {
		if (g_devs[i]) {
			g_inherited[i] = g_devs[i];
			g_devs[i] = NULL;
			any = true;
		}
		/* relaxed: the child is single-threaded here. Its own stats. */
		atomic_store_explicit(&g_id_opened[i], false, memory_order_relaxed);
	}
	if (any)
		g_inherited_from = getppid();
	g_lock = (pthread_rwlock_t)PTHREAD_RWLOCK_INITIALIZER;
}

__attribute__((constructor)) static void rt_init(void)
{
	(void)pthread_atfork(NULL, NULL, rt_atfork_child);
}

/* The error of a call on device @id in a forked child that inherited it
 * (g_lock held). */
static int inherited_error(const char *fn, int id)
{
	return tp_set_error(-ENODEV, "%s: device %d was opened by process %d before it forked; "
				     "its device threads do not exist in this process (%d): use "
				     "the device in one process only, or call "
				     "tp_rt_reset_device(%d) here first to open it afresh",
			    fn, id, (int)g_inherited_from, (int)getpid(), id);
}

/* Device @id with g_lock held for reading (release with rt_put()), opened
 * on first use; -ENODEV in a forked child that inherited it open. */
static int rt_get(int id, struct rt_dev **out)
{
	for (;;) {
		pthread_rwlock_rdlock(&g_lock);
		if (g_devs[id]) {
			*out = g_devs[id];
			return 0;
		}
		if (__builtin_expect(g_inherited[id] != NULL, 0)) {
			int rc = inherited_error("tp_rt", id);
			pthread_rwlock_unlock(&g_lock);
			return rc;
		}
		pthread_rwlock_unlock(&g_lock);
		pthread_rwlock_wrlock(&g_lock);
		int rc = g_devs[id] ? 0 : rt_open(id, &g_devs[id]);
		pthread_rwlock_unlock(&g_lock);
		if (rc)
			return rc;
	}
}

static void rt_put(void)
{
	pthread_rwlock_unlock(&g_lock);
}

static bool on_device_thread(void)
{
	return tp_aicore_current() != NULL || tp_aicpu_current() != NULL;
}

/* The device a memory call acts on: a kernel's (a device thread's) is the
 * device it runs on; a host thread's is its tp_rt_set_device() one. A
 * kernel of device 1 took the launching thread's default, device 0: it
 * allocated from the wrong device, or, device 0 never opened, deadlocked
 * opening it under the launch's hold of the device table. */
static int cur_device(void)
{
	const struct tp_aicore *core = tp_aicore_current();
	if (core)
		return tp_device_id(tp_aicore_device(core));
	const struct tp_aicpu *cpu = tp_aicpu_current();
	if (cpu)
		return tp_device_id(tp_aicpu_device(cpu));
	return tl_device;
}

static int check_id(const char *fn, int device_id)
{
	if (device_id < 0 || device_id >= TP_RT_MAX_DEVICES)
		return tp_set_error(-ENODEV, "%s: device id %d out of range 0..%d", fn,
				    device_id, TP_RT_MAX_DEVICES - 1);
	return 0;
}

/* Stop @rd's started channels (no launch runs: the caller holds g_lock
 * for writing or rd->launch_lock). The PMU selection is not restored:
 * the device is going away. */
static void stop_channels(struct rt_dev *rd)
{
	uint64_t now = tp_sys_cnt();
	if (rd->pmu_on)
		(void)tp_op_chan_stop(rd->id, TP_DRV_CH_AICORE_PMU, now);
	if (rd->tt_on)
		(void)tp_op_chan_stop(rd->id, TP_DRV_CH_TASK_TIME, now);
	rd->pmu_on = rd->tt_on = false;
}

/* ---- public API -------------------------------------------------------------- */

int tp_rt_set_device(int device_id)
{
	int rc = check_id("tp_rt_set_device", device_id);
	if (rc)
		return rc;
	struct rt_dev *rd;
	rc = rt_get(device_id, &rd);
	if (rc)
		return rc;
	rt_put();
	tl_device = device_id;
	return 0;
}

int tp_rt_get_device(int *device_id)
{
	if (!device_id)
		return tp_set_error(-EINVAL, "tp_rt_get_device: device_id is NULL");
	*device_id = cur_device();
	return 0;
}

int tp_rt_reset_device(int device_id)
{
	int rc = check_id("tp_rt_reset_device", device_id);
	if (rc)
		return rc;
	if (on_device_thread())
		return tp_set_error(-EPERM, "tp_rt_reset_device(%d): called from device "
				    "code", device_id);
	pthread_rwlock_wrlock(&g_lock);
	struct rt_dev *rd = g_devs[device_id];
	g_devs[device_id] = NULL;
	/* A device inherited through fork is forgotten, not shut down: its
	 * threads are the parent's. */
	g_inherited[device_id] = NULL;
	if (rd) {
		/* No launch runs (writer lock): stop the started channels so
		 * their readers still get an END_OF_PASS. */
		stop_channels(rd);
		rc = rt_shutdown(rd);
	}
	pthread_rwlock_unlock(&g_lock);
	return rc;
}

int tp_rt_malloc(void **dev_ptr, size_t size)
{
	if (!dev_ptr)
		return tp_set_error(-EINVAL, "tp_rt_malloc: dev_ptr is NULL");
	*dev_ptr = NULL;
	if (size == 0)
		return tp_set_error(-EINVAL, "tp_rt_malloc: size 0 (expected > 0 bytes)");
	struct rt_dev *rd;
	int rc = rt_get(cur_device(), &rd);
	if (rc)
		return rc;
	void *p = tp_dev_mem_alloc(tp_device_mem(rd->dev), size, false);
	rt_put();
	if (!p)
		return tp_set_error(-ENOMEM, "tp_rt_malloc: %s", tp_last_error());
	*dev_ptr = p;
	return 0;
}

int tp_rt_free(void *dev_ptr)
{
	if (!dev_ptr)
		return 0;
	struct rt_dev *rd;
	int rc = rt_get(cur_device(), &rd);
	if (rc)
		return rc;
	rc = tp_dev_mem_free(tp_device_mem(rd->dev), dev_ptr);
	rt_put();
	if (rc)
		return tp_set_error(rc, "tp_rt_free: %s", tp_last_error());
	return 0;
}

static const char *kind_name(enum tp_rt_memcpy_kind kind)
{
	switch (kind) {
	case TP_RT_MEMCPY_HOST_TO_DEVICE: return "HOST_TO_DEVICE";
	case TP_RT_MEMCPY_DEVICE_TO_HOST: return "DEVICE_TO_HOST";
	case TP_RT_MEMCPY_DEVICE_TO_DEVICE: return "DEVICE_TO_DEVICE";
	}
	return "?";
}

/* -EINVAL when a "host" range is device memory. */
static int check_host(struct tp_dev_mem *mem, const void *p, size_t size, const char *what,
		      enum tp_rt_memcpy_kind kind)
{
	if (tp_dev_mem_overlaps(mem, p, size))
		return tp_set_error(-EINVAL, "tp_rt_memcpy(%s): %s %p (+%zu bytes) is device "
				    "memory, expected host memory", kind_name(kind), what, p,
				    size);
	return 0;
}

static int check_dev(struct tp_dev_mem *mem, const void *p, size_t size, const char *what,
		     enum tp_rt_memcpy_kind kind)
{
	int rc = tp_dev_mem_check(mem, p, size, what);
	if (rc)
		return tp_set_error(rc, "tp_rt_memcpy(%s): %s", kind_name(kind),
				    tp_last_error());
	return 0;
}

int tp_rt_memcpy(void *dst, const void *src, size_t size, enum tp_rt_memcpy_kind kind)
{
	if (kind != TP_RT_MEMCPY_HOST_TO_DEVICE && kind != TP_RT_MEMCPY_DEVICE_TO_HOST &&
	    kind != TP_RT_MEMCPY_DEVICE_TO_DEVICE)
		return tp_set_error(-EINVAL, "tp_rt_memcpy: unknown kind %d (expected "
				    "HOST_TO_DEVICE 1, DEVICE_TO_HOST 2 or DEVICE_TO_DEVICE 3)",
				    (int)kind);
	if (!dst || !src)
		return tp_set_error(-EINVAL, "tp_rt_memcpy(%s): %s is NULL", kind_name(kind),
				    !dst ? "dst" : "src");
	if (size > UINTPTR_MAX - (uintptr_t)dst || size > UINTPTR_MAX - (uintptr_t)src)
		return tp_set_error(-EINVAL, "tp_rt_memcpy(%s): size %zu wraps around the "
				    "address space (dst %p, src %p)", kind_name(kind), size,
				    dst, src);
	if (size == 0)
		return 0;
	struct rt_dev *rd;
	int rc = rt_get(cur_device(), &rd);
	if (rc)
		return rc;
	struct tp_dev_mem *mem = tp_device_mem(rd->dev);
	switch (kind) {
	case TP_RT_MEMCPY_HOST_TO_DEVICE:
		rc = check_host(mem, src, size, "src", kind);
		if (!rc)
			rc = check_dev(mem, dst, size, "dst", kind);
		if (!rc)
			rc = tp_dev_mem_copy_to_device(mem, dst, src, size);
		break;
	case TP_RT_MEMCPY_DEVICE_TO_HOST:
		rc = check_host(mem, dst, size, "dst", kind);
		if (!rc)
			rc = check_dev(mem, src, size, "src", kind);
		if (!rc)
			rc = tp_dev_mem_copy_from_device(mem, dst, src, size);
		break;
	case TP_RT_MEMCPY_DEVICE_TO_DEVICE:
		rc = check_dev(mem, src, size, "src", kind);
		if (!rc)
			rc = check_dev(mem, dst, size, "dst", kind);
		if (!rc)
			memmove(dst, src, size);
		break;
	}
	rt_put();
	return rc;
}

/*
 * Open the file mapped at @addr in this process, as it is mapped: the
 * mapping's path in /proc/self/maps when that file is still the one
 * mapped (same device and inode: not a binary replaced since, not a
 * relative argv[0] seen from another directory), else the mapping
 * itself through /proc/self/map_files (a deleted or replaced file, where
 * the kernel lets us). Return: a read-only descriptor, or -1.
 */
static int open_mapped_file(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	char line[PATH_MAX + 128];
	int fd = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, ino;
		unsigned maj, min;
		int n = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu %n", &lo, &hi, &off, &maj, &min, &ino,
			   &n) < 6 || addr < lo || addr >= hi)
			continue;
		char *path = line + n;
		path[strcspn(path, "\n")] = '\0';
		const char *del = strstr(path, " (deleted)");
		struct stat st;
		if (path[0] == '/' && !del && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 &&
		    (fstat(fd, &st) || st.st_ino != ino || st.st_dev != makedev(maj, min))) {
			close(fd);
			fd = -1;
		}
		if (fd < 0 && ino) {
			char mf[64];
			snprintf(mf, sizeof(mf), "/proc/self/map_files/%lx-%lx", lo, hi);
			fd = open(mf, O_RDONLY | O_CLOEXEC);
		}
		break;
	}
	fclose(f);
	return fd;
}

/* __cxa_demangle of the C++ runtime, once one is loaded (NULL: none yet;
 * looked up again on the next name, as a C program may dlopen a C++
 * library later). */
typedef char *(*cxa_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);
static _Atomic(cxa_demangle_fn) g_demangle;

/*
 * A C++ symbol ("_Z..." of the Itanium ABI) as c++filt prints it, e.g.
 * "_ZN4demoL5scaleEjjPv" as "demo::scale(unsigned int, unsigned int,
 * void*)", by the __cxa_demangle of the C++ runtime: the one the process
 * has, else libstdc++ loaded for it (a C++ kernel's object may not link
 * one), so that a kernel is named alike from its first launch on.
 * @name: the symbol; @buf, @n: as tp_rt_internal_kernel_name's.
 * Return: whether @buf got the demangled name (false: not a C++ symbol,
 * no C++ runtime to be had, a symbol it cannot demangle, or a demangled
 * name of @n bytes or more, which, cut, could be another kernel's too:
 * the symbol itself is then the name; @buf untouched).
 */
static bool demangle(const char *name, char *buf, size_t n)
{
	if (strncmp(name, "_Z", 2) != 0)
		return false;
	/* relaxed: the pointer is all that is shared; the library it
	 * points into stays loaded (held by the handle below). */
	cxa_demangle_fn fn = atomic_load_explicit(&g_demangle, memory_order_relaxed);
	if (!fn) {
		void *sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!sym) {
			/* A C++ library loaded RTLD_LOCAL: its runtime is not in
			 * the global scope. The handle is kept, so the runtime
			 * is never unloaded under the pointer. */
			void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
			if (!h) /* none loaded (a library built as C++ without it) */
				h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
			sym = h ? dlsym(h, "__cxa_demangle") : NULL;
			if (h && !sym)
				dlclose(h);
		}
		if (!sym)
			return false;
		memcpy(&fn, &sym, sizeof(fn)); /* POSIX: dlsym's result is callable */
		atomic_store_explicit(&g_demangle, fn, memory_order_relaxed);
	}
	int status = -1;
	char *d = fn(name, NULL, NULL, &status);
	bool ok = d && status == 0 && strlen(d) < n;
	if (ok)
		snprintf(buf, n, "%s", d);
	free(d);
	return ok;
}

/*
 * The name of the function that starts at @addr in the symbol table
 * (.symtab) of the ELF object mapped there, loaded at @fbase (dladdr's
 * dli_fbase: the start of its first segment): a static function of an
 * object that was not stripped. A symbol's value is an address of the
 * object's link-time layout, so the address looked up is @addr minus the
 * load bias (@fbase less the first PT_LOAD address, page-aligned: 0 for
 * an executable linked at a fixed address). Only a name that one
 * function of the table has (two static functions of one name in two
 * files are not told apart).
 * Return: whether @buf (@n bytes) got a name.
 */
static bool symtab_name(uintptr_t addr, uintptr_t fbase, char *buf, size_t n)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return false;
	int fd = open_mapped_file(addr);
	if (fd < 0)
		return false;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t nph = 0;
	bool got = false;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &nph) == 0) {
		uint64_t first = UINT64_MAX;
		for (size_t i = 0; i < nph && i <= INT32_MAX; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < first)
				first = ph.p_vaddr;
		}
		const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
		const uint64_t want = first == UINT64_MAX ? 0 : addr - (fbase - first / page * page);
		const char *name = NULL;
		int same = 0; /* functions named so */
		for (int pass = 0; first != UINT64_MAX && pass < 2; pass++) {
			Elf_Scn *scn = NULL;
			while ((scn = elf_nextscn(e, scn))) {
				GElf_Shdr sh;
				if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
				    !sh.sh_entsize)
					continue;
				Elf_Data *d = elf_getdata(scn, NULL);
				const size_t cnt = sh.sh_size / sh.sh_entsize;
				for (size_t i = 0; d && i < cnt && i <= INT32_MAX; i++) {
					GElf_Sym sym;
					if (!gelf_getsym(d, (int)i, &sym) ||
					    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
						continue;
					const char *nm = elf_strptr(e, sh.sh_link, sym.st_name);
					if (!nm || !*nm)
						continue;
					if (!pass && sym.st_value == want && !name)
						name = nm;
					else if (pass && !strcmp(nm, name))
						same++;
				}
			}
			if (!name)
				break;
		}
		if (name && same == 1) {
			if (!demangle(name, buf, n))
				snprintf(buf, n, "%s", name);
			got = true;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return got;
}

/* The names of kernels that have no attr name and no exported symbol, by
 * address and object (its path and load address: a library dlclose'd
 * and another loaded at its addresses is another key): a launch of the
 * same kernel does not read its object's symbol table again (the
 * operator profiler names every launch). Replaced in turn when full. */
#define KNAME_CACHE 256
static struct {
	uintptr_t addr, fbase;
	char obj[128];
	char name[512];
} g_kname[KNAME_CACHE];
static unsigned g_kname_n, g_kname_next;
static pthread_mutex_t g_kname_lock = PTHREAD_MUTEX_INITIALIZER;

void tp_rt_internal_kernel_name(tp_rt_kernel_fn kernel, const struct tp_rt_launch_attr *attr,
				char *buf, size_t n)
{
	Dl_info di;
	void *addr = (void *)(uintptr_t)kernel;
	if (attr && attr->name) {
		snprintf(buf, n, "%s", attr->name);
		return;
	}
	if (!dladdr(addr, &di)) {
		snprintf(buf, n, "kernel_%p", addr); /* no object maps it */
		return;
	}
	if (di.dli_sname && di.dli_saddr == addr) {
		if (!demangle(di.dli_sname, buf, n))
			snprintf(buf, n, "%s", di.dli_sname);
		return;
	}
	const char *obj = di.dli_fname && di.dli_fname[0] ? di.dli_fname : "kernel";
	const uintptr_t fbase = (uintptr_t)di.dli_fbase;
	pthread_mutex_lock(&g_kname_lock);
	for (unsigned i = 0; i < g_kname_n; i++)
		if (g_kname[i].addr == (uintptr_t)addr && g_kname[i].fbase == fbase &&
		    !strncmp(g_kname[i].obj, obj, sizeof(g_kname[i].obj) - 1)) {
			snprintf(buf, n, "%s", g_kname[i].name);
			pthread_mutex_unlock(&g_kname_lock);
			return;
		}
	pthread_mutex_unlock(&g_kname_lock);
	char name[sizeof(g_kname[0].name)];
	if (!symtab_name((uintptr_t)addr, fbase, name, sizeof(name))) {
		/* No exported symbol (a static function, an executable built
		 * without -rdynamic) and none in a symbol table: name it by its
		 * object and its offset in it, which address randomisation
		 * does not change, so the runs of an application replay agree
		 * on it. */
		const char *slash = strrchr(obj, '/');
		snprintf(name, sizeof(name), "%s+0x%" PRIxPTR, slash ? slash + 1 : obj,
			 (uintptr_t)addr - fbase);
	}
	snprintf(buf, n, "%s", name);
	pthread_mutex_lock(&g_kname_lock);
	unsigned slot = g_kname_n < KNAME_CACHE ? g_kname_n++ : g_kname_next++ % KNAME_CACHE;
	g_kname[slot].addr = (uintptr_t)addr;
	g_kname[slot].fbase = fbase;
	snprintf(g_kname[slot].obj, sizeof(g_kname[slot].obj), "%s", obj);
	memcpy(g_kname[slot].name, name, sizeof(name));
	pthread_mutex_unlock(&g_kname_lock);
}

/* Check a hidden buffer from the host side: its range is one live
 * allocation of the device and its header (read with the device copy, so
 * a5sim's host never dereferences device memory) fits the launch. */
static int check_instr(struct rt_dev *rd, const char *fn, void *instr, size_t bytes,
		       uint32_t block_dim, uint32_t *cap)
{
	struct tp_dev_mem *mem = tp_device_mem(rd->dev);
	struct tp_instr_hdr h;
	if ((uintptr_t)instr % 8 || bytes < sizeof(h))
		return tp_set_error(-EINVAL, "%s: instrumentation buffer %p (%zu bytes): "
				    "expected 8-byte aligned device memory of at least %zu bytes",
				    fn, instr, bytes, sizeof(h));
	if (tp_dev_mem_check(mem, instr, bytes, "instr"))
		return tp_set_error(-EINVAL, "%s: instrumentation buffer: %s", fn,
				    tp_last_error());
	int rc = tp_dev_mem_copy_from_device(mem, &h, instr, sizeof(h));
	if (rc)
		return tp_set_error(-EINVAL, "%s: instrumentation buffer: %s", fn,
				    tp_last_error());
	if (h.magic != TP_INSTR_MAGIC || h.version != TP_INSTR_VERSION)
		return tp_set_error(-EINVAL, "%s: instrumentation buffer header: magic 0x%08x "
				    "version %u (expected 0x%08x version %u)", fn, h.magic,
				    h.version, TP_INSTR_MAGIC, TP_INSTR_VERSION);
	if (h.block_dim < block_dim)
		return tp_set_error(-EINVAL, "%s: instrumentation buffer has room for %u "
				    "blocks, the launch has %u", fn, h.block_dim, block_dim);
	size_t need = tp_rt_instr_bytes(h.block_dim, h.per_block_cap);
	if (bytes < need)
		return tp_set_error(-EINVAL, "%s: instrumentation buffer of %zu bytes; its "
				    "header (%u blocks x %u records) needs %zu", fn, bytes,
				    h.block_dim, h.per_block_cap, need);
	*cap = h.per_block_cap;
	return 0;
}

/* Every launch entry point: tp_rt_launch, tp_rt_launch_ex, tp_rt_tool_launch. */
static int rt_launch(const char *fn, tp_rt_kernel_fn kernel, uint32_t block_dim, void *args,
		     const struct tp_rt_launch_attr *attr, void *instr, size_t instr_bytes)
{
	if (!kernel)
		return tp_set_error(-EINVAL, "%s: kernel is NULL", fn);
	if (block_dim < 1 || block_dim > TP_RT_MAX_BLOCK_DIM)
		return tp_set_error(-EINVAL, "%s: block_dim %u out of range 1..%u", fn,
				    block_dim, TP_RT_MAX_BLOCK_DIM);
	enum tp_rt_cores cores = attr ? attr->cores : TP_RT_CORES_ANY;
	if (cores != TP_RT_CORES_ANY && cores != TP_RT_CORES_AIV && cores != TP_RT_CORES_AIC)
		return tp_set_error(-EINVAL, "%s: attr->cores %d (expected ANY 0, AIV 1 or "
				    "AIC 2)", fn, (int)cores);
	if (on_device_thread())
		return tp_set_error(-EPERM, "%s: called from device code (a kernel cannot "
				    "launch and wait for a kernel)", fn);
	struct rt_dev *rd;
	int rc = rt_get(tl_device, &rd);
	if (rc)
		return rc;
	uint32_t icap = 0;
	if (instr && (rc = check_instr(rd, fn, instr, instr_bytes, block_dim, &icap))) {
		rt_put();
		return rc;
	}
	/* order[] holds the AIV ids first, then the AIC ids. */
	const int bd = rd->block_dim;
	const int *order = rd->order;
	int n_order = rd->num_cores;
	if (cores == TP_RT_CORES_AIV) {
		n_order = 2 * bd;
	} else if (cores == TP_RT_CORES_AIC) {
		order += 2 * bd;
		n_order = bd;
	}

	pthread_mutex_lock(&rd->launch_lock);
	/* Only launchers (under launch_lock) write job_seq: relaxed read. */
	uint64_t seq = atomic_load_explicit(&rd->job_seq, memory_order_relaxed) + 1;
	rd->job = (struct rt_job){
		.kernel = kernel,
		.args = args,
		.block_dim = block_dim,
		.order = order,
		.n_order = n_order,
		.instr = instr,
		.instr_cap = icap,
		.pmu = rd->pmu_on,
		.seq = seq,
	};
	/* release: publishes the job fields (and the channel state and PMU
	 * model they refer to) to the AICPU's acquire. */
	atomic_store_explicit(&rd->job_seq, seq, memory_order_release);
	tp_doorbell_ring(&rd->aicpu_db);
	struct job_wait w = { rd, seq };
	tp_doorbell_wait(&rd->host_db, job_done, &w, TP_DOORBELL_FOREVER);
	/* done_seq was acquired in job_done(): rd->out is the AICPU's. */
	const struct rt_outcome *o = &rd->out;
	int fail = o->rc, fail_core = o->core;
	uint32_t fail_block = o->block;
	char msg[TP_ERROR_MSG_MAX];
	if (fail)
		snprintf(msg, sizeof(msg), "%s", o->msg);
	/* relaxed: statistics, read by anyone, ordered by nothing. */
	atomic_fetch_add_explicit(&rd->launches, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&rd->blocks, block_dim, memory_order_relaxed);
	atomic_fetch_add_explicit(&g_id_launches[rd->id], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&g_id_blocks[rd->id], block_dim, memory_order_relaxed);
	if (rd->tt_on) {
		/* Under launch_lock: stop (which takes it) finds this record
		 * in the ring before its END_OF_PASS. */
		struct tp_op_rec r;
		memset(&r, 0, sizeof(r));
		r.kind = TP_OP_REC_LAUNCH;
		r.core_id = -1;
		r.block_id = block_dim;
		r.seq = seq;
		r.t_start = o->t_first;
		r.t_end = o->t_last;
		tp_op_chan_push(rd->id, TP_DRV_CH_TASK_TIME, &r);
	}
	pthread_mutex_unlock(&rd->launch_lock);
	rt_put();
	if (fail) {
		char name[256];
		tp_rt_internal_kernel_name(kernel, attr, name, sizeof(name));
		return tp_set_error(fail, "%s: kernel %s: block %u of %u on core %d (%s) "
				    "failed: %s", fn, name, fail_block, block_dim, fail_core,
				    tp_core_type_name(tp_topo_core_type(bd, fail_core)), msg);
	}
	return 0;
}

int tp_rt_launch(tp_rt_kernel_fn kernel, uint32_t block_dim, void *args)
{
	return rt_launch("tp_rt_launch", kernel, block_dim, args, NULL, NULL, 0);
}

int tp_rt_launch_ex(tp_rt_kernel_fn kernel, uint32_t block_dim, void *args,
		    const struct tp_rt_launch_attr *attr)
{
	return rt_launch("tp_rt_launch_ex", kernel, block_dim, args, attr, NULL, 0);
}

int tp_rt_tool_launch(tp_rt_kernel_fn kernel, uint32_t block_dim, void *args,
		      const struct tp_rt_launch_attr *attr, void *instr, size_t instr_bytes)
{
	return rt_launch("tp_rt_tool_launch", kernel, block_dim, args, attr, instr,
			 instr_bytes);
}

int tp_rt_range_push(const char *name)
{
	if (!name)
		return tp_set_error(-EINVAL, "tp_rt_range_push: name is NULL");
	if (tl_range)
		return tp_set_error(-EINVAL, "tp_rt_range_push(\"%s\"): range \"%s\" is still "
				    "open on this thread (ranges do not nest)", name, tl_range);
	tl_range = name;
	return 0;
}

int tp_rt_range_pop(void)
{
	if (!tl_range)
		return tp_set_error(-EINVAL, "tp_rt_range_pop: no range is open on this "
				    "thread");
	tl_range = NULL;
	return 0;
}

int tp_rt_synchronize(void)
{
	if (on_device_thread())
		return tp_set_error(-EPERM, "tp_rt_synchronize: called from device code");
	pthread_rwlock_rdlock(&g_lock);
	struct rt_dev *rd = g_devs[tl_device];
	int rc = 0;
	if (rd) {
		/* Launches hold launch_lock until their last block FINs. */
		pthread_mutex_lock(&rd->launch_lock);
		pthread_mutex_unlock(&rd->launch_lock);
	} else if (g_inherited[tl_device]) {
		rc = inherited_error("tp_rt_synchronize", tl_device);
	}
	pthread_rwlock_unlock(&g_lock);
	return rc;
}

/* ---- tool API: driver profiling channels (taskprof/rt_tool.h) ----------------- */

static int check_channel(const char *fn, int device_id, uint32_t channel)
{
	if (!tp_op_chan_valid(channel))
		return tp_set_error(-EINVAL, "%s: channel %u does not exist (expected "
				    "AICORE_PMU %u or TASK_TIME %u)", fn, channel,
				    TP_DRV_CH_AICORE_PMU, TP_DRV_CH_TASK_TIME);
	return check_id(fn, device_id);
}

/* The PMU model of @rd's cores, created and attached on first use (under
 * launch_lock: no block runs, so no context's usage hook is in use). */
static int ensure_pmu(struct rt_dev *rd)
{
	if (rd->pmu)
		return 0;
	struct tp_pmu_model *m;
	int rc = tp_pmu_model_create(rd->dev, &m);
	if (rc)
		return rc;
	for (int c = 0; c < rd->num_cores; c++)
		if ((rc = tp_pmu_attach(m, c, &rd->ctxs[c]))) {
			tp_pmu_model_destroy(m);
			return rc;
		}
	rd->pmu = m;
	return 0;
}

int tp_drv_prof_start(int device_id, uint32_t channel, const struct tp_drv_prof_config *cfg)
{
	const char *fn = "tp_drv_prof_start";
	int rc = check_channel(fn, device_id, channel);
	if (rc)
		return rc;
	if (channel == TP_DRV_CH_AICORE_PMU && !cfg)
		return tp_set_error(-EINVAL, "%s: device %d AICORE_PMU: cfg is NULL (expected "
				    "the events to program)", fn, device_id);
	if (on_device_thread())
		return tp_set_error(-EPERM, "%s: called from device code", fn);
	struct rt_dev *rd;
	if ((rc = rt_get(device_id, &rd)))
		return rc;
	pthread_mutex_lock(&rd->launch_lock);
	if (channel == TP_DRV_CH_AICORE_PMU) {
		uint32_t slots = (uint32_t)tp_device_platform(rd->dev)->pmu_slots;
		if (cfg->n_aic > slots || cfg->n_aiv > slots) {
			rc = tp_set_error(-EINVAL, "%s: device %d: %u AIC / %u AIV events; %s "
					  "has %u counter slots per core", fn, device_id,
					  cfg->n_aic, cfg->n_aiv,
					  tp_device_platform(rd->dev)->name, slots);
			goto out;
		}
		if ((rc = ensure_pmu(rd)))
			goto out;
		/* The L2 cache model before the pass: one that cannot be made
		 * fails the pass here, with its reason (the L2_CACHE counters
		 * would read 0 otherwise). */
		uint32_t ids[2 * TP_PMU_MAX_SLOTS];
		int n = 0;
		for (uint32_t i = 0; i < cfg->n_aic; i++)
			ids[n++] = cfg->aic_events[i];
		for (uint32_t i = 0; i < cfg->n_aiv; i++)
			ids[n++] = cfg->aiv_events[i];
		if ((rc = tp_pmu_model_need_l2(rd->pmu, ids, n)))
			goto out;
	}
	if ((rc = tp_op_chan_start(device_id, channel, cfg ? cfg->pass : 0)))
		goto out;
	if (channel == TP_DRV_CH_TASK_TIME) {
		rd->tt_on = true;
		goto out;
	}
	rd->pmu_n[0] = cfg->n_aic;
	rd->pmu_n[1] = cfg->n_aiv;
	memcpy(rd->pmu_ev[0], cfg->aic_events, sizeof(rd->pmu_ev[0]));
	memcpy(rd->pmu_ev[1], cfg->aiv_events, sizeof(rd->pmu_ev[1]));
	for (int c = 0; c < rd->num_cores; c++) {
		int ty = tp_topo_core_type(rd->block_dim, c) == TP_CORE_AIC ? 0 : 1;
		/* Cannot fail: the core exists and n was checked above. */
		(void)tp_pmu_program_events(rd->pmu, c, rd->pmu_ev[ty], (int)rd->pmu_n[ty], NULL);
	}
	rd->pmu_on = true;
out:
	pthread_mutex_unlock(&rd->launch_lock);
	rt_put();
	return rc;
}

int tp_drv_prof_stop(int device_id, uint32_t channel)
{
	const char *fn = "tp_drv_prof_stop";
	int rc = check_channel(fn, device_id, channel);
	if (rc)
		return rc;
	if (on_device_thread())
		return tp_set_error(-EPERM, "%s: called from device code", fn);
	/* A device that is not open has no started channel (a reset stops
	 * them): do not open one just to say so. */
	pthread_rwlock_rdlock(&g_lock);
	struct rt_dev *rd = g_devs[device_id];
	if (!rd) {
		rc = g_inherited[device_id]
			     ? inherited_error(fn, device_id)
			     : tp_set_error(-ENOENT, "%s: device %d channel %u is not started", fn,
					    device_id, channel);
		pthread_rwlock_unlock(&g_lock);
		return rc;
	}
	/* Waits for a launch in progress: its records precede END_OF_PASS. */
	pthread_mutex_lock(&rd->launch_lock);
	if (channel == TP_DRV_CH_AICORE_PMU && rd->pmu_on) {
		for (int c = 0; c < rd->num_cores; c++)
			(void)tp_pmu_finalize(rd->pmu, c, NULL); /* restores the selection */
		rd->pmu_on = false;
	} else if (channel == TP_DRV_CH_TASK_TIME) {
		rd->tt_on = false;
	}
	rc = tp_op_chan_stop(device_id, channel, tp_sys_cnt());
	pthread_mutex_unlock(&rd->launch_lock);
	pthread_rwlock_unlock(&g_lock);
	return rc;
}

int tp_drv_prof_channel_read(int device_id, uint32_t channel, void *buf, size_t size)
{
	const char *fn = "tp_drv_prof_channel_read";
	int rc = check_channel(fn, device_id, channel);
	if (rc)
		return rc;
	if (!buf)
		return tp_set_error(-EINVAL, "%s: buf is NULL", fn);
	/* Results are ints: never more than INT_MAX bytes at once. */
	if (size > (size_t)INT32_MAX)
		size = (size_t)INT32_MAX;
	return tp_op_chan_read(device_id, channel, buf, size);
}

int tp_drv_prof_channel_poll(struct tp_drv_prof_poll_info *out, int max, int timeout_ms)
{
	if (!out || max < 1)
		return tp_set_error(-EINVAL, "tp_drv_prof_channel_poll: %s",
				    !out ? "out is NULL" : "max < 1");
	if (timeout_ms < 0)
		return tp_set_error(-EINVAL, "tp_drv_prof_channel_poll: timeout_ms %d "
				    "(expected >= 0)", timeout_ms);
	return tp_op_chan_poll(out, max, timeout_ms);
}

void tp_drv_prof_poll_wake(void)
{
	tp_op_chan_wake();
}

int tp_rt_tool_device_stats(int device_id, struct tp_rt_tool_stats *out)
{
	if (!out)
		return tp_set_error(-EINVAL, "tp_rt_tool_device_stats: out is NULL");
	int rc = check_id("tp_rt_tool_device_stats", device_id);
	if (rc)
		return rc;
	pthread_rwlock_rdlock(&g_lock);
	struct rt_dev *rd = g_devs[device_id];
	if (!rd) {
		rc = g_inherited[device_id]
			     ? inherited_error("tp_rt_tool_device_stats", device_id)
			     : tp_set_error(-ENODEV, "tp_rt_tool_device_stats: device %d is not open",
					    device_id);
		pthread_rwlock_unlock(&g_lock);
		return rc;
	}
	const struct tp_platform *plat = tp_device_platform(rd->dev);
	struct tp_dev_mem_stats ms;
	tp_dev_mem_stats(tp_device_mem(rd->dev), &ms);
	*out = (struct tp_rt_tool_stats){
		/* relaxed: statistics (see struct rt_dev). */
		.launches = atomic_load_explicit(&rd->launches, memory_order_relaxed),
		.blocks = atomic_load_explicit(&rd->blocks, memory_order_relaxed),
		.mem_capacity = ms.reserved_bytes,
		.mem_used = ms.live_bytes,
		.sys_cnt_freq = plat->sys_cnt_freq_hz,
		.platform = plat->name,
		.pmu_slots = plat->pmu_slots,
	};
	pthread_rwlock_unlock(&g_lock);
	return 0;
}

/* TASKPROF_SIM_STATS=1: one line per device id ever opened, counting every
 * device opened with that id (resets included). */
static void print_sim_stats(void)
{
	const char *v = getenv("TASKPROF_SIM_STATS");
	if (!v || strcmp(v, "1") != 0)
		return;
	for (int i = 0; i < TP_RT_MAX_DEVICES; i++) {
		/* relaxed: see g_id_launches. */
		if (!atomic_load_explicit(&g_id_opened[i], memory_order_relaxed))
			continue;
		fprintf(stderr, "taskprof-sim: device %d: %llu kernel launches executed "
			"(%llu blocks)\n", i,
			(unsigned long long)atomic_load_explicit(&g_id_launches[i],
								 memory_order_relaxed),
			(unsigned long long)atomic_load_explicit(&g_id_blocks[i],
								 memory_order_relaxed));
	}
}

/* ---- internal API ------------------------------------------------------------ */

void tp_rt_internal_set_kernel_hooks(const struct tp_kernel_hooks *hooks)
{
	/* Writer lock: no launch runs, so no AICore reads the hooks now; the
	 * next launch's job / token release-acquire chain publishes them. */
	pthread_rwlock_wrlock(&g_lock);
	if (hooks)
		g_hooks = *hooks;
	else
		memset(&g_hooks, 0, sizeof(g_hooks));
	for (int i = 0; i < TP_RT_MAX_DEVICES; i++)
		if (g_devs[i])
			tp_device_set_kernel_hooks(g_devs[i]->dev, &g_hooks);
	pthread_rwlock_unlock(&g_lock);
}

struct tp_device *tp_rt_internal_device(int device_id)
{
	if (device_id < 0 || device_id >= TP_RT_MAX_DEVICES)
		return NULL;
	pthread_rwlock_rdlock(&g_lock);
	struct rt_dev *rd = g_devs[device_id];
	pthread_rwlock_unlock(&g_lock);
	return rd ? rd->dev : NULL;
}

/*
 * At exit (or dlclose), stop the devices so their threads are joined and
 * sanitizers see an orderly end. Skipped when another thread is inside an
 * rt call (it holds g_lock) or when exit runs on a device thread: waiting
 * would deadlock, and the process is ending anyway.
 */
__attribute__((destructor)) static void rt_fini(void)
{
	print_sim_stats();
	if (on_device_thread())
		return;
	if (pthread_rwlock_trywrlock(&g_lock) != 0)
		return;
	for (int i = 0; i < TP_RT_MAX_DEVICES; i++) {
		struct rt_dev *rd = g_devs[i];
		g_devs[i] = NULL;
		if (rd) {
			stop_channels(rd);
			(void)rt_shutdown(rd);
		}
	}
	/* Nobody reads after exit: free every ring the devices no longer
	 * feed. */
	tp_op_chan_release_all();
	pthread_rwlock_unlock(&g_lock);
}
