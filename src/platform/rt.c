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
 *   AICore  acquire token; read payload[token & 1]; COND = ACK; kernel
 *           begin hook; kernel(block_idx, block_dim, args); end hook;
 *           COND = FIN (release: the kernel's stores are visible to
 *           whoever acquires the FIN, and from there to the host)
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

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "platform/dev_memory.h"
#include "platform/device.h"
#include "platform/doorbell.h"
#include "platform/regs.h"
#include "platform/rt_internal.h"

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
};

struct rt_job {
	tp_rt_kernel_fn kernel;
	void *args;
	uint32_t block_dim;
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
	int *order;                      /* dispatch order: AIV ids, then AIC ids */
	struct rt_payload (*payload)[2]; /* per core, indexed token & 1 */

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
static struct tp_kernel_hooks g_hooks;

/* The calling thread's current device (aclrtSetDevice is per thread). */
static _Thread_local int tl_device;

/* ---- AICore side --------------------------------------------------------- */

static void rt_aicore_main(struct tp_aicore *core, void *arg)
{
	struct rt_dev *rd = arg;
	int id = tp_aicore_id(core);
	if (tp_aicore_handshake(core) == TP_AICORE_EXITING)
		return;
	uint32_t last = TP_AICPU_IDLE_TASK_ID;
	for (;;) {
		/* Parks on the dispatch doorbell; the acquire load of the token
		 * inside makes the AICPU's payload store visible. */
		uint32_t token = tp_aicore_wait_dispatch(core, last);
		if (token == TP_AICORE_EXIT_SIGNAL) {
			tp_aicore_exit_ack(core);
			return;
		}
		last = token;
		struct rt_payload p = rd->payload[id][token & 1];
		tp_aicore_ack(core, token);
		tp_aicore_kernel_begin(core);
		p.kernel(p.block_idx, p.block_dim, p.args);
		tp_aicore_kernel_end(core);
		tp_aicore_fin(core, token);
	}
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

/* One launch: every block once, a freed core takes the next block. */
static void run_job(struct rt_dev *rd)
{
	const struct rt_job job = rd->job;
	uint32_t next = 0, done = 0;
	for (int i = 0; i < rd->num_cores && next < job.block_dim; i++)
		dispatch_block(rd, rd->order[i], &job, next++);
	while (done < job.block_dim) {
		tp_doorbell_wait(&rd->aicpu_db, any_finished, rd, TP_DOORBELL_FOREVER);
		for (int i = 0; i < rd->num_cores; i++) {
			int c = rd->order[i];
			if (!core_finished(rd, c))
				continue;
			rd->token[c] = 0;
			done++;
			if (next < job.block_dim)
				dispatch_block(rd, c, &job, next++);
		}
	}
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
	}
	if (!rd || !rd->order || !rd->payload || !rd->dispatch_seq || !rd->token) {
		if (rd) {
			free(rd->order);
			free(rd->payload);
			free(rd->dispatch_seq);
			free(rd->token);
			free(rd);
		}
		tp_device_close(dev);
		return tp_set_error(-ENOMEM, "rt device %d: out of host memory", id);
	}
	rd->dev = dev;
	rd->id = id;
	rd->num_cores = n;
	/* AIV cores (ids bd..3bd-1) first, then AIC (0..bd-1). */
	for (int i = 0; i < n; i++)
		rd->order[i] = i < 2 * bd ? bd + i : i - 2 * bd;
	pthread_mutex_init(&rd->launch_lock, NULL);
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
	if (atomic_load_explicit(&rd->state, memory_order_acquire) == RT_FAILED) {
		rc = rd->start_rc;
		char msg[TP_ERROR_MSG_MAX];
		snprintf(msg, sizeof(msg), "%s", rd->start_msg);
		if (rt_shutdown(rd) == 0)
			tp_set_error(rc, "rt device %d: cannot start: %s", id, msg);
		return rc;
	}
	TP_DEBUG("rt device %d open: %s, %d AICores", id, pname, n);
	*out = rd;
	return 0;
}

/* ---- device table ----------------------------------------------------------- */

/* Device @id with g_lock held for reading (release with rt_put()), opened
 * on first use. */
static int rt_get(int id, struct rt_dev **out)
{
	for (;;) {
		pthread_rwlock_rdlock(&g_lock);
		if (g_devs[id]) {
			*out = g_devs[id];
			return 0;
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

static int check_id(const char *fn, int device_id)
{
	if (device_id < 0 || device_id >= TP_RT_MAX_DEVICES)
		return tp_set_error(-ENODEV, "%s: device id %d out of range 0..%d", fn,
				    device_id, TP_RT_MAX_DEVICES - 1);
	return 0;
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
	*device_id = tl_device;
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
	if (rd)
		rc = rt_shutdown(rd);
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
	int rc = rt_get(tl_device, &rd);
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
	int rc = rt_get(tl_device, &rd);
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
	int rc = rt_get(tl_device, &rd);
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

int tp_rt_launch(tp_rt_kernel_fn kernel, uint32_t block_dim, void *args)
{
	if (!kernel)
		return tp_set_error(-EINVAL, "tp_rt_launch: kernel is NULL");
	if (block_dim < 1 || block_dim > TP_RT_MAX_BLOCK_DIM)
		return tp_set_error(-EINVAL, "tp_rt_launch: block_dim %u out of range 1..%u",
				    block_dim, TP_RT_MAX_BLOCK_DIM);
	if (on_device_thread())
		return tp_set_error(-EPERM, "tp_rt_launch: called from device code (a kernel "
				    "cannot launch and wait for a kernel)");
	struct rt_dev *rd;
	int rc = rt_get(tl_device, &rd);
	if (rc)
		return rc;
	pthread_mutex_lock(&rd->launch_lock);
	rd->job = (struct rt_job){ .kernel = kernel, .args = args, .block_dim = block_dim };
	/* Only launchers (under launch_lock) write job_seq: relaxed read. */
	uint64_t seq = atomic_load_explicit(&rd->job_seq, memory_order_relaxed) + 1;
	/* release: publishes the job fields to the AICPU's acquire. */
	atomic_store_explicit(&rd->job_seq, seq, memory_order_release);
	tp_doorbell_ring(&rd->aicpu_db);
	struct job_wait w = { rd, seq };
	tp_doorbell_wait(&rd->host_db, job_done, &w, TP_DOORBELL_FOREVER);
	pthread_mutex_unlock(&rd->launch_lock);
	rt_put();
	return 0;
}

int tp_rt_synchronize(void)
{
	if (on_device_thread())
		return tp_set_error(-EPERM, "tp_rt_synchronize: called from device code");
	pthread_rwlock_rdlock(&g_lock);
	struct rt_dev *rd = g_devs[tl_device];
	if (rd) {
		/* Launches hold launch_lock until their last block FINs. */
		pthread_mutex_lock(&rd->launch_lock);
		pthread_mutex_unlock(&rd->launch_lock);
	}
	pthread_rwlock_unlock(&g_lock);
	return 0;
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
	if (on_device_thread())
		return;
	if (pthread_rwlock_trywrlock(&g_lock) != 0)
		return;
	for (int i = 0; i < TP_RT_MAX_DEVICES; i++) {
		struct rt_dev *rd = g_devs[i];
		g_devs[i] = NULL;
		if (rd)
			(void)rt_shutdown(rd);
	}
	pthread_rwlock_unlock(&g_lock);
}
