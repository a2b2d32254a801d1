/* SPDX-License-Identifier: MIT */
#include "platform/device.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/thread.h"
#include "base/watchdog.h"
#include "platform/dev_memory.h"
#include "platform/regs.h"

#define NS_PER_MS 1000000ull
/* AICPU threads the cost line shows. */
#define TP_DEVICE_MAX_AICPU_LOG 16

/* What one device thread cost in its last launch: CPU time and time spent
 * runnable but waiting for a CPU (ns), and context switches. Written by
 * the thread as it returns, read by tp_device_wait() after the join. */
struct thread_cost {
	uint64_t cpu_ns, wait_ns, vcsw, ivcsw;
};

struct tp_aicore {
	struct tp_device *dev;
	int id;
	enum tp_core_type type;
	int cluster;
	enum tp_subslot slot;
	void *kernel_ctx;
	pthread_t thread;
	bool started;
	/* Set by the thread as its last action (release); read by
	 * tp_device_wait() to find cores that are still running. */
	_Atomic bool done;
	struct thread_cost cost; /* of the last launch; read after the join */
};

struct tp_aicpu {
	struct tp_device *dev;
	int index;   /* 0 .. aicpu_launch_threads - 1 */
	int count;   /* threads past the affinity gate: aicpu_threads */
	pthread_t thread;
	bool started;
	struct tp_doorbell doorbell;
	struct thread_cost cost; /* of the last launch; read after the join */
};

struct tp_device {
	const struct tp_platform *plat;
	int id;
	/* Launches so far (tp_device_launch_seq()); the launching thread
	 * writes it before it creates the device threads, which publishes
	 * it to them. */
	uint64_t launch_seq;
	int block_dim;
	int num_cores;
	int aicpu_threads;    /* threads that run aicpu_fn */
	int aicpu_launched;   /* threads started per launch (platform's launch count) */
	uint64_t teardown_ns; /* configured budget */
	/* This launch's budget: teardown_ns at launch, lowered by
	 * tp_device_shorten_teardown() from any thread (relaxed: a single
	 * value, read by the host thread that tears down). */
	_Atomic uint64_t launch_teardown_ns;
	/* An AICPU thread of this launch may never return (an orchestration
	 * stuck in a case's code): tp_device_wait() joins the AICPU threads
	 * with the teardown budget and leaves a late one running. Set by
	 * tp_device_abandon_aicpu() from any thread (relaxed: a flag the
	 * tearing-down host thread reads after the device threads' stores it
	 * waits for). */
	_Atomic bool aicpu_may_hang;
	struct tp_dev_mem *mem;
	struct tp_regs *regs;
	struct tp_aicore *cores;
	struct tp_aicpu *cpus;
	/* Launch state: written by the host thread that launches / waits,
	 * published to device threads by pthread_create. */
	struct tp_launch_config launch;
	struct tp_kernel_hooks hooks;
	bool running;
	/* tp_device_wait() has logged this launch's late AICore threads at
	 * ERROR once; a later call (tp_device_close()) logs them at DEBUG. */
	bool late_logged;
	unsigned aicpu_slice_us; /* host scheduling slice of AICPU threads, 0: default */
	bool aicpu_pin_auto;     /* TASKPROF_SIM_AICPU_PIN is not "off" */
	/* This launch's placement of the AICPU threads (place_aicpus()):
	 * written before the threads are created, read by them after. */
	bool aicpu_pinned;
	cpu_set_t aicpu_cpus;
	/* AICore threads not yet returned; the last one rings exit_db. */
	_Atomic int cores_running;
	struct tp_doorbell exit_db;
	/* Start gate of the current launch (enum launch_gate): every device
	 * thread parks on gate_db until the launch has created all of them,
	 * then runs its body (GATE_OPEN) or returns at once (GATE_ABORTED). */
	_Atomic int gate;
	struct tp_doorbell gate_db;
};

/*
 * The start gate. A launch that could create only some of its threads
 * must not leave the others running: the AICPU program would wait for a
 * thread that does not exist (a scheduler for its orchestrator, the
 * dispatcher of an rt device for jobs) and no join would return. So no
 * device thread runs its body until the launch has created every thread;
 * a launch that fails aborts the gate instead, and the threads already
 * started return without having touched the workload. The runtime's own
 * waits (scheduler loop, handshakes, rt dispatcher) need no abort path
 * for this case: they never start.
 */
enum launch_gate {
	GATE_CLOSED = 0,  /* threads are still being created */
	GATE_OPEN = 1,    /* all created: run the bodies */
	GATE_ABORTED = 2, /* a creation failed: return at once */
};

/* Test point (tp_device_test_fail_thread): the thread creation, 1-based
 * and counted over the next launch, that fails, and with which error. */
static _Atomic int g_fail_nth;
static _Atomic int g_fail_err;

static _Thread_local struct tp_aicore *cur_core;
static _Thread_local struct tp_aicpu *cur_cpu;

/*
 * The AICPU threads' scheduling slice on the host, in µs, from
 * TASKPROF_SIM_AICPU_SLICE_US (unset or 0: the host's default). On a real
 * device every AICPU thread has a CPU of its own; on a host with fewer
 * CPUs than device threads (the 2-CPU CI machine runs 28) the orchestrator
 * and schedulers queue behind spinning AICores, and a run can settle in a
 * state where every thread is runnable and each gets the CPU once per
 * round of ~28, 3 to 5 times slower than usual. A short slice (EEVDF
 * custom slice, Linux >= 6.12; 100 µs is its minimum) lets the AICPU
 * threads run first when a CPU frees up: that state becomes rare and
 * timings are steadier, but the best runs are about 15% slower and a real
 * workload (paged_attention Case1) 13% slower, hence not the default
 * (docs/swimlane-cost.md). Older kernels ignore the request (a WARN
 * says so).
 */
#define AICPU_SLICE_US_MIN 100u /* the kernel's bounds for a custom slice */
#define AICPU_SLICE_US_MAX 100000u

/* struct sched_attr (linux/sched/types.h); glibc has no wrapper. */
#define HOST_SCHED_FLAG_RESET_ON_FORK 0x01u
struct host_sched_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};

/* The slice in µs for AICPU threads (0: the host's default); a bad value of
 * TASKPROF_SIM_AICPU_SLICE_US gets one WARN and the default. */
static unsigned aicpu_slice_us(void)
{
	const char *v = getenv("TASKPROF_SIM_AICPU_SLICE_US");
	if (!v || !*v)
		return 0;
	char *end;
	unsigned long us = strtoul(v, &end, 10);
	if (*end || *v == '-' || (us && (us < AICPU_SLICE_US_MIN || us > AICPU_SLICE_US_MAX))) {
		/* relaxed: only says whether the WARN was given, once per process. */
		static atomic_flag warned = ATOMIC_FLAG_INIT;
		if (!atomic_flag_test_and_set_explicit(&warned, memory_order_relaxed))
			TP_WARN("TASKPROF_SIM_AICPU_SLICE_US=%s: expected 0 or %u..%u (µs); "
				"using the host's default slice", tp_shown(v), AICPU_SLICE_US_MIN,
				AICPU_SLICE_US_MAX);
		return 0;
	}
	return (unsigned)us;
}

/* Ask the host scheduler for a @us µs slice for the calling thread,
 * keeping its policy (SCHED_OTHER or SCHED_BATCH: others have no slice and
 * are left alone), nice value and reset-on-fork flag. Best effort: a
 * failure, or a kernel without custom slices, changes nothing; the first
 * call of the process says which (DEBUG when applied, WARN when not). */
static void set_slice(unsigned us)
{
	if (!us)
		return;
	struct host_sched_attr a;
	memset(&a, 0, sizeof(a));
	if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0u) != 0)
		return;
	if (a.policy != SCHED_OTHER && a.policy != SCHED_BATCH)
		return;
	a.size = sizeof(a);
	a.flags &= HOST_SCHED_FLAG_RESET_ON_FORK;
	a.runtime = (uint64_t)us * 1000u;
	a.deadline = a.period = 0;
	bool applied = syscall(SYS_sched_setattr, 0, &a, 0u) == 0;
	struct host_sched_attr b;
	memset(&b, 0, sizeof(b));
	applied = applied && syscall(SYS_sched_getattr, 0, &b, sizeof(b), 0u) == 0 &&
		  b.runtime == a.runtime;
	/* Said once per process. relaxed: only whether it was said. */
	static atomic_flag said = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set_explicit(&said, memory_order_relaxed))
		return;
	if (applied)
		TP_DEBUG("AICPU threads run on a %u µs host scheduling slice "
			 "(TASKPROF_SIM_AICPU_SLICE_US)", us);
	else
		TP_WARN("TASKPROF_SIM_AICPU_SLICE_US=%u: the kernel did not apply the slice "
			"(custom slices need Linux 6.12 or later); the host's default is used", us);
}

/* The system counter is process-wide: devices open at the same time must
 * agree on its frequency. */
static pthread_mutex_t freq_lock = PTHREAD_MUTEX_INITIALIZER;
static int freq_users;
static uint64_t freq_hz;

static int freq_acquire(const struct tp_platform *plat, int device_id)
{
	int rc = 0;
	pthread_mutex_lock(&freq_lock);
	if (freq_users > 0 && freq_hz != plat->sys_cnt_freq_hz) {
		rc = tp_set_error(-EBUSY, "device %d (%s): its system counter runs at %llu Hz "
				  "but %d open device(s) use %llu Hz; close them first",
				  device_id, plat->name,
				  (unsigned long long)plat->sys_cnt_freq_hz, freq_users,
				  (unsigned long long)freq_hz);
	} else {
		freq_users++;
		freq_hz = plat->sys_cnt_freq_hz;
		tp_sys_cnt_set_freq(freq_hz);
	}
	pthread_mutex_unlock(&freq_lock);
	/* Calibrate the counter now (about 20 ms, once per process), not at
	 * its first read, which in a run without profiling is inside the
	 * launch: the device time `taskprof run` reports for it was 20 ms
	 * too long. */
	if (!rc)
		(void)tp_sys_cnt();
	return rc;
}

static void freq_release(void)
{
	pthread_mutex_lock(&freq_lock);
	freq_users--;
	pthread_mutex_unlock(&freq_lock);
}

static bool aicpu_pin_auto(void);

/* ---- open / close ---------------------------------------------------- */

struct tp_device *tp_device_open(const struct tp_device_config *cfg)
{
	struct tp_device *dev = NULL;
	return tp_device_create(cfg, &dev) == 0 ? dev : NULL;
}

int tp_device_create(const struct tp_device_config *cfg, struct tp_device **out)
{
	static const struct tp_device_config defaults;
	*out = NULL;
	if (!cfg)
		cfg = &defaults;
	const char *pname = cfg->platform ? cfg->platform : "a2a3sim";
	const struct tp_platform *plat = tp_platform_find(pname);
	if (!plat)
		return tp_set_error(-EINVAL, "device %d: unknown platform '%s' (expected %s)",
				    cfg->device_id, pname, tp_platform_names());
	if (cfg->device_id < 0)
		return tp_set_error(-EINVAL, "device id %d: expected >= 0", cfg->device_id);
	int bd = cfg->block_dim ? cfg->block_dim : plat->default_block_dim;
	if (bd < 1 || bd > plat->max_block_dim)
		return tp_set_error(-EINVAL, "device %d (%s): block_dim %d out of range 1..%d",
				    cfg->device_id, plat->name, cfg->block_dim,
				    plat->max_block_dim);
	int nt = cfg->aicpu_threads ? cfg->aicpu_threads : plat->default_aicpu_threads;
	if (nt < 1 || nt > plat->max_aicpu_threads)
		return tp_set_error(-EINVAL, "device %d (%s): aicpu_threads %d out of range "
				    "1..%d", cfg->device_id, plat->name, cfg->aicpu_threads,
				    plat->max_aicpu_threads);
	int rc = freq_acquire(plat, cfg->device_id);
	if (rc)
		return rc;

	struct tp_device *dev = calloc(1, sizeof(*dev));
	if (!dev)
		goto nomem;
	dev->plat = plat;
	dev->id = cfg->device_id;
	dev->block_dim = bd;
	dev->num_cores = tp_topo_num_cores(bd);
	dev->aicpu_threads = nt;
	dev->aicpu_slice_us = aicpu_slice_us();
	dev->aicpu_pin_auto = aicpu_pin_auto();
	dev->teardown_ns = (uint64_t)(cfg->teardown_timeout_ms ? cfg->teardown_timeout_ms :
				      TP_DEVICE_TEARDOWN_TIMEOUT_MS) * NS_PER_MS;
	dev->mem = tp_dev_mem_create(cfg->mem_bytes, dev->id);
	if (!dev->mem) {
		/* Keep the arena's message; its code is -EINVAL only for a size
		 * below the minimum. */
		rc = cfg->mem_bytes && cfg->mem_bytes < TP_DEV_MEM_MIN_BYTES ? -EINVAL : -ENOMEM;
		free(dev);
		freq_release();
		return rc;
	}
	dev->regs = tp_regs_create(plat, dev->num_cores, dev->id);
	dev->cores = calloc((size_t)dev->num_cores, sizeof(*dev->cores));
	dev->aicpu_launched = plat->aicpu_launch_threads;
	dev->cpus = calloc((size_t)dev->aicpu_launched, sizeof(*dev->cpus));
	if (!dev->regs || !dev->cores || !dev->cpus) {
		tp_regs_destroy(dev->regs);
		tp_dev_mem_destroy(dev->mem);
		free(dev->cores);
		free(dev->cpus);
		free(dev);
		goto nomem;
	}
	for (int c = 0; c < dev->num_cores; c++) {
		struct tp_aicore *core = &dev->cores[c];
		core->dev = dev;
		core->id = c;
		core->type = tp_topo_core_type(bd, c);
		core->cluster = tp_topo_cluster(bd, c);
		core->slot = tp_topo_slot(bd, c);
		atomic_init(&core->done, false);
	}
	for (int i = 0; i < dev->aicpu_launched; i++) {
		dev->cpus[i].dev = dev;
		dev->cpus[i].index = i;
		dev->cpus[i].count = nt;
		tp_doorbell_init(&dev->cpus[i].doorbell);
	}
	atomic_init(&dev->cores_running, 0);
	atomic_init(&dev->launch_teardown_ns, dev->teardown_ns);
	atomic_init(&dev->aicpu_may_hang, false);
	tp_doorbell_init(&dev->exit_db);
	atomic_init(&dev->gate, GATE_CLOSED);
	tp_doorbell_init(&dev->gate_db);
	TP_DEBUG("device %d open: %s, %d clusters (%d AIC + %d AIV), %d AICPU threads, "
		 "system counter %llu Hz", dev->id, plat->name, bd, bd, 2 * bd, nt,
		 (unsigned long long)plat->sys_cnt_freq_hz);
	*out = dev;
	return 0;

nomem:
	freq_release();
	return tp_set_error(-ENOMEM, "device %d: out of host memory", cfg->device_id);
}

void tp_device_close(struct tp_device *dev)
{
	if (!dev)
		return;
	if (dev->running && tp_device_wait(dev) != 0) {
		/* the late threads were named at ERROR by the first wait */
		TP_WARN("device %d: threads still running at close; the device is "
			"leaked on purpose", dev->id);
		return;
	}
	tp_regs_destroy(dev->regs);
	tp_dev_mem_destroy(dev->mem);
	free(dev->cores);
	free(dev->cpus);
	free(dev);
	freq_release();
}

/* ---- accessors ------------------------------------------------------- */

void tp_device_shorten_teardown(struct tp_device *dev, uint64_t budget_ns)
{
	/* relaxed: see launch_teardown_ns; only ever lowered, so racing
	 * callers leave the smallest budget. */
	uint64_t cur = atomic_load_explicit(&dev->launch_teardown_ns, memory_order_relaxed);
	while (budget_ns < cur &&
	       !atomic_compare_exchange_weak_explicit(&dev->launch_teardown_ns, &cur, budget_ns,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

void tp_device_abandon_aicpu(struct tp_device *dev)
{
	/* relaxed: see aicpu_may_hang. */
	atomic_store_explicit(&dev->aicpu_may_hang, true, memory_order_relaxed);
}

const struct tp_platform *tp_device_platform(const struct tp_device *dev) { return dev->plat; }
int tp_device_id(const struct tp_device *dev) { return dev->id; }
int tp_device_block_dim(const struct tp_device *dev) { return dev->block_dim; }
int tp_device_num_cores(const struct tp_device *dev) { return dev->num_cores; }
int tp_device_aicpu_threads(const struct tp_device *dev) { return dev->aicpu_threads; }
int tp_device_aicpu_launched(const struct tp_device *dev) { return dev->aicpu_launched; }
bool tp_device_running(const struct tp_device *dev) { return dev->running; }
struct tp_dev_mem *tp_device_mem(struct tp_device *dev) { return dev->mem; }
struct tp_regs *tp_device_regs(struct tp_device *dev) { return dev->regs; }

struct tp_aicore *tp_device_core(struct tp_device *dev, int core_id)
{
	if (core_id < 0 || core_id >= dev->num_cores)
		return NULL;
	return &dev->cores[core_id];
}

void tp_device_set_kernel_hooks(struct tp_device *dev, const struct tp_kernel_hooks *hooks)
{
	if (hooks)
		dev->hooks = *hooks;
	else
		memset(&dev->hooks, 0, sizeof(dev->hooks));
}

int tp_aicore_id(const struct tp_aicore *core) { return core->id; }
enum tp_core_type tp_aicore_type(const struct tp_aicore *core) { return core->type; }
int tp_aicore_cluster(const struct tp_aicore *core) { return core->cluster; }
enum tp_subslot tp_aicore_slot(const struct tp_aicore *core) { return core->slot; }
struct tp_device *tp_aicore_device(const struct tp_aicore *core) { return core->dev; }
void *tp_aicore_kernel_ctx(const struct tp_aicore *core) { return core->kernel_ctx; }
void tp_aicore_set_kernel_ctx(struct tp_aicore *core, void *ctx) { core->kernel_ctx = ctx; }
struct tp_aicore *tp_aicore_current(void) { return cur_core; }

int tp_aicpu_index(const struct tp_aicpu *cpu) { return cpu->index; }
int tp_aicpu_count(const struct tp_aicpu *cpu) { return cpu->count; }
struct tp_device *tp_aicpu_device(const struct tp_aicpu *cpu) { return cpu->dev; }
struct tp_doorbell *tp_aicpu_doorbell(struct tp_aicpu *cpu) { return &cpu->doorbell; }
struct tp_aicpu *tp_aicpu_current(void) { return cur_cpu; }

/* ---- threads --------------------------------------------------------- */

/* Name the calling thread (shown by top -H, gdb); Linux keeps 15 bytes. */
__attribute__((format(printf, 1, 2))) static void set_thread_name(const char *fmt, ...)
{
	char name[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	name[15] = '\0';
	pthread_setname_np(pthread_self(), name);
}

/* The calling thread's cost so far (it started with the launch). The
 * run-queue wait comes from /proc/thread-self/schedstat, read only when
 * the DEBUG line that shows it is enabled (an open and a read per
 * thread); 0 otherwise. */
static void note_cost(struct thread_cost *c)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	c->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	c->vcsw = (uint64_t)ru.ru_nvcsw;
	c->ivcsw = (uint64_t)ru.ru_nivcsw;
	c->wait_ns = 0;
	if (!tp_log_enabled(TP_LOG_DEBUG))
		return;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	unsigned long long run, wait;
	if (f && fscanf(f, "%llu %llu", &run, &wait) == 2)
		c->wait_ns = wait;
	if (f)
		fclose(f);
}

static bool gate_decided(void *arg)
{
	struct tp_device *dev = arg;
	/* acquire: pairs with the release store in open_gate() /
	 * abort_launch(). */
	return atomic_load_explicit(&dev->gate, memory_order_acquire) != GATE_CLOSED;
}

/* Parks the calling device thread until its launch decided (see enum
 * launch_gate). Return: true to run the body, false to return at once. */
static bool pass_gate(struct tp_device *dev)
{
	tp_doorbell_wait(&dev->gate_db, gate_decided, dev, TP_DOORBELL_FOREVER);
	/* acquire: as in gate_decided(). */
	return atomic_load_explicit(&dev->gate, memory_order_acquire) == GATE_OPEN;
}

/*
 * AICPU thread placement, from TASKPROF_SIM_AICPU_PIN ("auto", the
 * default, or "off": the host's placement). A real AICPU thread has a CPU
 * of its own; here the 4..7 AICPU threads share the host with 24+ AICore
 * threads. Left to the host's load balancer on the 2-CPU CI machine, the
 * 100,000-empty-task benchmark (bench_swimlane) fell into the slow mode
 * (every device thread runnable, 30,000+ context switches, 2-5 times the
 * usual wall; docs/swimlane-cost.md) in 21 of 60 runs with profiling
 * off and 40 of 60 at swimlane level 4; with the AICPU threads kept on one
 * CPU, the AICores still free to use every CPU, in none of 120, and the
 * level-4 cost per task (median pair difference) went from 356 to 155 ns
 * (a2a3sim) and 620 to 194 ns (a5sim). Workloads with real kernels did
 * not change (paged_attention Case1, gemm Medium, synthetic: within
 * noise). So "auto" gives the AICPU threads a share of the CPUs the
 * launching thread may use in proportion to their number among the
 * device's threads, rounded, at least one and at most the AICPU thread
 * count, always leaving one CPU outside it: on 2 CPUs, one. A host with
 * one CPU is left as it is. The share starts at a CPU chosen by process id
 * and device id, so the devices of concurrent runs spread over the host.
 */
static bool aicpu_pin_auto(void)
{
	const char *v = getenv("TASKPROF_SIM_AICPU_PIN");
	if (!v || !*v || !strcasecmp(v, "auto"))
		return true;
	if (!strcasecmp(v, "off"))
		return false;
	/* relaxed: only says whether the WARN was given, once per process. */
	static atomic_flag warned = ATOMIC_FLAG_INIT;
	if (!atomic_flag_test_and_set_explicit(&warned, memory_order_relaxed))
		TP_WARN("TASKPROF_SIM_AICPU_PIN=%s: expected auto or off (any case); using auto",
			tp_shown(v));
	return true;
}

int tp_device_aicpu_pin_count(int host_cpus, int aicpu_threads, int num_cores)
{
	if (host_cpus < 2 || aicpu_threads < 1 || num_cores < 0)
		return 0;
	const long total = (long)aicpu_threads + num_cores;
	long k = ((long)host_cpus * aicpu_threads + total / 2) / total;
	if (k < 1)
		k = 1;
	if (k > aicpu_threads)
		k = aicpu_threads;
	if (k > host_cpus - 1)
		k = host_cpus - 1;
	return (int)k;
}

/* Choose this launch's CPUs for the AICPU threads (see aicpu_pin_auto());
 * called by the launching thread, whose CPU mask the device threads
 * inherit. Return: whether the AICPU threads are to be pinned. */
static bool place_aicpus(struct tp_device *dev)
{
	cpu_set_t mask;
	/* Said once per process. relaxed: only whether it was said. */
	static atomic_flag said = ATOMIC_FLAG_INIT;
	if (!dev->aicpu_pin_auto) {
		if (!atomic_flag_test_and_set_explicit(&said, memory_order_relaxed))
			TP_DEBUG("device %d: AICPU threads left to the host's placement "
				 "(TASKPROF_SIM_AICPU_PIN=off)", dev->id);
		return false;
	}
	if (sched_getaffinity(0, sizeof(mask), &mask) != 0)
		return false;
	const int n = CPU_COUNT(&mask);
	const int k = tp_device_aicpu_pin_count(n, dev->aicpu_threads, dev->num_cores);
	if (!k) {
		if (!atomic_flag_test_and_set_explicit(&said, memory_order_relaxed))
			TP_DEBUG("device %d: AICPU threads not pinned: this process may use %d "
				 "CPU", dev->id, n);
		return false;
	}
	int cpus[CPU_SETSIZE], m = 0;
	for (int c = 0; c < CPU_SETSIZE && m < n; c++)
		if (CPU_ISSET(c, &mask))
			cpus[m++] = c;
	const int start = (int)(((unsigned)getpid() + (unsigned)dev->id) % (unsigned)m);
	CPU_ZERO(&dev->aicpu_cpus);
	char list[128] = "";
	size_t len = 0;
	for (int i = 0; i < k; i++) {
		int c = cpus[(start + i) % m];
		CPU_SET(c, &dev->aicpu_cpus);
		if (len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d",
						i ? "," : "", c);
	}
	if (!atomic_flag_test_and_set_explicit(&said, memory_order_relaxed))
		TP_DEBUG("device %d: AICPU threads on host CPU %s of the %d this process may "
			 "use, AICore threads on all of them (TASKPROF_SIM_AICPU_PIN=auto; "
			 "=off leaves them to the host)", dev->id, list, n);
	return true;
}

/* Move the calling AICPU thread onto this launch's AICPU CPUs. Best
 * effort: a refusal (the CPUs were taken from the process since the
 * launch) leaves it where it is, with one DEBUG line per process. */
static void pin_aicpu(struct tp_device *dev)
{
	if (!dev->aicpu_pinned)
		return;
	int err = pthread_setaffinity_np(pthread_self(), sizeof(dev->aicpu_cpus),
					 &dev->aicpu_cpus);
	/* relaxed: only whether it was said. */
	static atomic_flag said = ATOMIC_FLAG_INIT;
	if (err && !atomic_flag_test_and_set_explicit(&said, memory_order_relaxed))
		TP_DEBUG("device %d: AICPU thread not pinned: %s", dev->id, strerror(err));
}

static void *aicore_main(void *p)
{
	struct tp_aicore *core = p;
	struct tp_device *dev = core->dev;
	if (pass_gate(dev)) {
		set_thread_name("tp%d-%s%d", dev->id,
				core->type == TP_CORE_AIC ? "aic" : "aiv", core->id);
		cur_core = core;
		/* a crash handler installed with SA_ONSTACK (`taskprof run`,
		 * cli/interrupt.h) still runs after a kernel overflowed its
		 * stack */
		void *alt = tp_altstack_begin();
		dev->launch.aicore_fn(core, dev->launch.arg);
		tp_altstack_end(alt);
		cur_core = NULL;
		note_cost(&core->cost);
	}
	/* release: the core's last stores happen before tp_device_wait()
	 * sees it done. */
	atomic_store_explicit(&core->done, true, memory_order_release);
	/* acq_rel: release pairs with the acquire in all_cores_done(); the
	 * acquire makes the last core out, which rings, see the others. */
	if (atomic_fetch_sub_explicit(&dev->cores_running, 1, memory_order_acq_rel) == 1)
		tp_doorbell_ring(&dev->exit_db);
	return NULL;
}

static void *aicpu_main(void *p)
{
	struct tp_aicpu *cpu = p;
	/* platform_aicpu_affinity_gate (spec §1.4): the platform launches
	 * aicpu_launch_threads threads; only the first aicpu_threads run the
	 * AICPU program, the rest return at once. */
	if (cpu->index >= cpu->count)
		return NULL;
	if (!pass_gate(cpu->dev))
		return NULL;
	set_thread_name("tp%d-aicpu%d", cpu->dev->id, cpu->index);
	set_slice(cpu->dev->aicpu_slice_us);
	pin_aicpu(cpu->dev);
	cur_cpu = cpu;
	void *alt = tp_altstack_begin(); /* as in aicore_main() */
	cpu->dev->launch.aicpu_fn(cpu, cpu->dev->launch.arg);
	tp_altstack_end(alt);
	cur_cpu = NULL;
	note_cost(&cpu->cost);
	return NULL;
}

int tp_device_launch(struct tp_device *dev, tp_aicpu_fn aicpu_fn,
		     tp_aicore_fn aicore_fn, void *arg)
{
	struct tp_launch_config lc = {
		.aicpu_fn = aicpu_fn,
		.aicore_fn = aicore_fn,
		.arg = arg,
	};
	return tp_device_launch_ex(dev, &lc);
}

/* Starts @wd for a budget given as a tp_reg_wait() timeout. */
static void start_budget(struct tp_watchdog *wd, uint64_t timeout_ns)
{
	_Static_assert(TP_DOORBELL_FOREVER == TP_WATCHDOG_NEVER,
		       "one value means no budget for both");
	tp_watchdog_start(wd, timeout_ns, tp_now_ns());
}

static bool all_cores_done(void *arg)
{
	struct tp_device *dev = arg;
	/* acquire: pairs with the acq_rel decrement in aicore_main(). */
	return atomic_load_explicit(&dev->cores_running, memory_order_acquire) == 0;
}

/* Send exit to every started core that has not returned, wait (bounded)
 * until all returned, join them. Return 0 or -ETIMEDOUT. */
/* Waits until every started AICore thread is done, within @budget_ns
 * (TP_DOORBELL_FOREVER: no limit) not counting time the process spent
 * stopped: as wait_cond(). Return: 0; -ETIMEDOUT. */
static int wait_all_exited(struct tp_device *dev, uint64_t budget_ns)
{
	if (budget_ns == TP_DOORBELL_FOREVER)
		return tp_doorbell_wait(&dev->exit_db, all_cores_done, dev, budget_ns);
	struct tp_watchdog wd;
	start_budget(&wd, budget_ns);
	for (uint64_t now = tp_now_ns();; now = tp_now_ns()) {
		if (tp_watchdog_expired(&wd, now))
			return -ETIMEDOUT;
		if (tp_doorbell_wait(&dev->exit_db, all_cores_done, dev,
				     tp_watchdog_sleep_ns(&wd, now)) == 0)
			return 0;
	}
}

static int stop_cores(struct tp_device *dev)
{
	int pending = 0;
	for (int c = 0; c < dev->num_cores; c++) {
		struct tp_aicore *core = &dev->cores[c];
		/* acquire: pairs with the release store at thread end. */
		if (core->started && !atomic_load_explicit(&core->done, memory_order_acquire)) {
			tp_reg_write(dev, c, TP_REG_DATA_MAIN_BASE, TP_AICORE_EXIT_SIGNAL);
			pending++;
		}
	}
	if (pending)
		TP_DEBUG("device %d: %d AICore threads still running after the AICPU "
			 "threads returned; sent AICORE_EXIT_SIGNAL", dev->id, pending);
	/* relaxed: see launch_teardown_ns. */
	uint64_t budget = atomic_load_explicit(&dev->launch_teardown_ns, memory_order_relaxed);
	if (wait_all_exited(dev, budget) != 0) {
		char ids[256];
		size_t len = 0;
		int late = 0;
		ids[0] = '\0';
		for (int c = 0; c < dev->num_cores; c++) {
			/* acquire: as in stop_cores, pairs with the core
			 * thread's release store of done at its end. */
			if (!dev->cores[c].started ||
			    atomic_load_explicit(&dev->cores[c].done, memory_order_acquire))
				continue;
			late++;
			if (len < sizeof(ids) - 8)
				len += (size_t)snprintf(ids + len, sizeof(ids) - len, "%s%d",
							late > 1 ? "," : "", c);
		}
		int rc = tp_set_error(-ETIMEDOUT, "device %d: %d AICore thread%s did not exit "
				      "within %llu ms (cores %s)", dev->id, late, late == 1 ? "" : "s",
				      (unsigned long long)(budget / NS_PER_MS), ids);
		if (dev->late_logged)
			TP_DEBUG("%s", tp_last_error());
		else
			TP_ERROR("%s", tp_last_error());
		dev->late_logged = true;
		return rc;
	}
	for (int c = 0; c < dev->num_cores; c++) {
		if (dev->cores[c].started) {
			pthread_join(dev->cores[c].thread, NULL);
			dev->cores[c].started = false;
		}
	}
	return 0;
}

void tp_device_test_fail_thread(int nth, int err)
{
	/* relaxed: published by the release store of g_fail_nth below. */
	atomic_store_explicit(&g_fail_err, err, memory_order_relaxed);
	/* release: pairs with the acquire exchange in tp_device_launch_ex(),
	 * which then reads g_fail_err. */
	atomic_store_explicit(&g_fail_nth, nth > 0 ? nth : 0, memory_order_release);
}

/* Thread creations of one launch, with the test point's failure. */
struct spawner {
	int n;        /* creations tried so far */
	int fail_nth; /* tp_device_test_fail_thread(): 1-based, 0: none */
	int fail_err;
};

/* Tries of a thread creation that fails with EAGAIN, 1 ms apart: the
 * threads of the launch before (a round of --rounds) still count against
 * the thread limit (ulimit -u) for a moment after their join, until the
 * kernel has reaped them. */
#define SPAWN_TRIES 50

/* pthread_create(), or the test point's error on its chosen creation.
 * Return: 0 or an errno value, as pthread_create(). */
static int spawn(struct spawner *sp, pthread_t *th, void *(*fn)(void *), void *arg)
{
	if (++sp->n == sp->fail_nth)
		return sp->fail_err;
	int rc = pthread_create(th, NULL, fn, arg);
	for (int i = 1; rc == EAGAIN && i < SPAWN_TRIES; i++) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
		rc = pthread_create(th, NULL, fn, arg);
	}
	return rc;
}

/* Every thread of the launch exists: let them run their bodies. */
static void open_gate(struct tp_device *dev)
{
	/* release: pairs with the acquire in gate_decided(); the threads
	 * created first see the launch state the host wrote before creating
	 * the later ones. The ring's fence orders the store before its load
	 * of the waiters (platform/doorbell.h). */
	atomic_store_explicit(&dev->gate, GATE_OPEN, memory_order_release);
	tp_doorbell_ring(&dev->gate_db);
}

/* A thread could not be created: make the started ones return without
 * running their bodies, join them. They wait for nothing but the gate, so
 * the joins return at once. */
static void abort_launch(struct tp_device *dev)
{
	/* release: pairs with the acquire in gate_decided(); the ring as in
	 * open_gate(). */
	atomic_store_explicit(&dev->gate, GATE_ABORTED, memory_order_release);
	tp_doorbell_ring(&dev->gate_db);
	for (int i = 0; i < dev->aicpu_launched; i++) {
		if (dev->cpus[i].started) {
			pthread_join(dev->cpus[i].thread, NULL);
			dev->cpus[i].started = false;
		}
	}
	for (int c = 0; c < dev->num_cores; c++) {
		if (dev->cores[c].started) {
			pthread_join(dev->cores[c].thread, NULL);
			dev->cores[c].started = false;
		}
	}
	dev->running = false;
}

int tp_device_launch_ex(struct tp_device *dev, const struct tp_launch_config *lc)
{
	if (!lc)
		return tp_set_error(-EINVAL, "device %d: launch without a configuration",
				    dev->id);
	if (dev->running)
		return tp_set_error(-EBUSY, "device %d: already running; call "
				    "tp_device_wait() first", dev->id);
	dev->launch = *lc;
	dev->launch_seq++; /* no device thread runs; pthread_create publishes it */
	/* relaxed: no device thread runs; pthread_create publishes it. */
	atomic_store_explicit(&dev->launch_teardown_ns, dev->teardown_ns, memory_order_relaxed);
	atomic_store_explicit(&dev->aicpu_may_hang, false, memory_order_relaxed);
	if (!dev->launch.aicore_fn)
		dev->launch.aicore_fn = tp_aicore_loop_empty;
	dev->hooks = lc->hooks;
	tp_regs_reset_dispatch(dev->regs);
	/* relaxed: no device thread runs; pthread_create publishes it. */
	atomic_store_explicit(&dev->cores_running, dev->num_cores, memory_order_relaxed);
	atomic_store_explicit(&dev->gate, GATE_CLOSED, memory_order_relaxed);
	for (int c = 0; c < dev->num_cores; c++) {
		struct tp_aicore *core = &dev->cores[c];
		/* relaxed: as cores_running above. */
		atomic_store_explicit(&core->done, false, memory_order_relaxed);
		core->started = false;
	}
	dev->running = true;
	dev->late_logged = false;

	struct spawner sp = { 0 };
	/* acquire: pairs with the release store in
	 * tp_device_test_fail_thread(); one shot, this launch takes it. */
	sp.fail_nth = atomic_exchange_explicit(&g_fail_nth, 0, memory_order_acquire);
	/* relaxed: ordered by the exchange above. */
	sp.fail_err = atomic_load_explicit(&g_fail_err, memory_order_relaxed);

	int err = 0, cores = 0, cpus = 0;
	const int want_cpus = lc->aicpu_fn ? dev->aicpu_launched : 0;
	/* Before the threads exist: pthread_create publishes it. */
	dev->aicpu_pinned = want_cpus && place_aicpus(dev);
	for (; cores < dev->num_cores; cores++) {
		struct tp_aicore *core = &dev->cores[cores];
		if ((err = spawn(&sp, &core->thread, aicore_main, core)))
			break;
		core->started = true;
	}
	for (; !err && cpus < want_cpus; cpus++) {
		struct tp_aicpu *cpu = &dev->cpus[cpus];
		if ((err = spawn(&sp, &cpu->thread, aicpu_main, cpu)))
			break;
		cpu->started = true;
	}
	if (!err) {
		open_gate(dev);
		return 0;
	}

	abort_launch(dev);
	/* Names the thread that failed, what was not created and why. */
	char what[64], missing[96];
	if (cores < dev->num_cores)
		snprintf(what, sizeof(what), "AICore thread %d (%s)", cores,
			 dev->cores[cores].type == TP_CORE_AIC ? "AIC" : "AIV");
	else
		snprintf(what, sizeof(what), "AICPU thread %d", cpus);
	if (cores < dev->num_cores && want_cpus)
		snprintf(missing, sizeof(missing), "%d of %d AICore and %d of %d AICPU threads",
			 dev->num_cores - cores, dev->num_cores, want_cpus, want_cpus);
	else if (cores < dev->num_cores)
		snprintf(missing, sizeof(missing), "%d of %d AICore threads",
			 dev->num_cores - cores, dev->num_cores);
	else
		snprintf(missing, sizeof(missing), "%d of %d AICPU threads", want_cpus - cpus,
			 want_cpus);
	char started[64] = "none had started";
	if (cores + cpus)
		snprintf(started, sizeof(started), "the %d started threads were stopped "
			 "before running", cores + cpus);
	return tp_set_error(-err, "device %d: cannot create %s: %s%s; %s not created, "
			    "launch aborted (%s)", dev->id, what, strerror(err),
			    tp_thread_limit_note(err),
			    missing, started);
}

/* One DEBUG line: what each AICPU thread and the AICores (AIC, AIV
 * summed) cost in the launch just joined: CPU / run-queue wait in ms,
 * voluntary / involuntary context switches. */
static void log_costs(const struct tp_device *dev, const bool *ran)
{
	if (!tp_log_enabled(TP_LOG_DEBUG))
		return;
	char line[1024];
	size_t len = 0;
	struct thread_cost sum[2] = { { 0 } };
	for (int c = 0; c < dev->num_cores; c++) {
		const struct thread_cost *k = &dev->cores[c].cost;
		struct thread_cost *s = &sum[dev->cores[c].type == TP_CORE_AIC ? 0 : 1];
		s->cpu_ns += k->cpu_ns;
		s->wait_ns += k->wait_ns;
		s->vcsw += k->vcsw;
		s->ivcsw += k->ivcsw;
	}
	for (int i = 0; i < dev->aicpu_threads && i < TP_DEVICE_MAX_AICPU_LOG; i++) {
		if (!ran[i])
			continue;
		const struct thread_cost *k = &dev->cpus[i].cost;
		int w = snprintf(line + len, sizeof(line) - len, "aicpu%d %.3f/%.3f ms %llu/%llu csw, ",
				 i, (double)k->cpu_ns * 1e-6, (double)k->wait_ns * 1e-6,
				 (unsigned long long)k->vcsw, (unsigned long long)k->ivcsw);
		if (w < 0 || (size_t)w >= sizeof(line) - len)
			break; /* truncated: the line ends here */
		len += (size_t)w;
	}
	for (int t = 0; t < 2; t++) {
		int w = snprintf(line + len, sizeof(line) - len, "%s %.3f/%.3f ms %llu/%llu csw%s",
				 t ? "AIV" : "AIC", (double)sum[t].cpu_ns * 1e-6,
				 (double)sum[t].wait_ns * 1e-6, (unsigned long long)sum[t].vcsw,
				 (unsigned long long)sum[t].ivcsw, t ? "" : ", ");
		if (w < 0 || (size_t)w >= sizeof(line) - len)
			break;
		len += (size_t)w;
	}
	TP_DEBUG("device %d launch cost (CPU / run-queue wait, voluntary / involuntary "
		 "switches): %s", dev->id, line);
}

int tp_device_wait(struct tp_device *dev)
{
	if (!dev->running)
		return tp_set_error(-EINVAL, "device %d: not running", dev->id);
	bool ran[TP_DEVICE_MAX_AICPU_LOG] = { false };
	int aicpu_late = 0, late_id = -1;
	for (int i = 0; i < dev->aicpu_launched; i++) {
		if (!dev->cpus[i].started)
			continue;
		/* relaxed: see aicpu_may_hang. */
		if (atomic_load_explicit(&dev->aicpu_may_hang, memory_order_relaxed)) {
			/* relaxed: see launch_teardown_ns. */
			uint64_t budget = atomic_load_explicit(&dev->launch_teardown_ns,
							       memory_order_relaxed);
			struct timespec dl;
			clock_gettime(CLOCK_REALTIME, &dl);
			dl.tv_sec += (time_t)(budget / 1000000000u);
			dl.tv_nsec += (long)(budget % 1000000000u);
			if (dl.tv_nsec >= 1000000000L) {
				dl.tv_sec++;
				dl.tv_nsec -= 1000000000L;
			}
			if (pthread_timedjoin_np(dev->cpus[i].thread, NULL, &dl) != 0) {
				aicpu_late++;
				late_id = i;
				continue; /* still started: tp_device_close() leaks the device */
			}
		} else {
			pthread_join(dev->cpus[i].thread, NULL);
		}
		dev->cpus[i].started = false;
		if (i < TP_DEVICE_MAX_AICPU_LOG)
			ran[i] = true;
	}
	bool cores_started = dev->num_cores > 0 && dev->cores[0].started;
	int rc = stop_cores(dev);
	if (aicpu_late) {
		rc = tp_set_error(-ETIMEDOUT, "device %d: %d AICPU thread%s did not return (thread "
				  "%d: an orchestration stuck in a case's code)", dev->id, aicpu_late,
				  aicpu_late == 1 ? "" : "s", late_id);
		if (dev->late_logged)
			TP_DEBUG("%s", tp_last_error());
		else
			TP_ERROR("%s", tp_last_error());
		dev->late_logged = true;
		return rc;
	}
	if (rc == 0) {
		dev->running = false;
		if (cores_started)
			log_costs(dev, ran);
	}
	return rc;
}

/* ---- AICore protocol ---------------------------------------------------- */

void tp_aicore_kernel_begin(struct tp_aicore *core)
{
	const struct tp_kernel_hooks *h = &core->dev->hooks;
	if (h->on_kernel_begin)
		h->on_kernel_begin(core, h->ud);
}

void tp_aicore_kernel_end(struct tp_aicore *core)
{
	const struct tp_kernel_hooks *h = &core->dev->hooks;
	if (h->on_kernel_end)
		h->on_kernel_end(core, h->ud);
}

struct dispatch_cond {
	struct tp_aicore *core;
	uint32_t last;
	uint32_t value;
};

static bool window_open(void *arg)
{
	struct dispatch_cond *c = arg;
	c->value = tp_reg_read(c->core->dev, c->core->id, TP_REG_DATA_MAIN_BASE);
	return c->value == TP_AICPU_IDLE_TASK_ID || c->value == TP_AICORE_EXIT_SIGNAL;
}

int tp_aicore_handshake(struct tp_aicore *core)
{
	struct dispatch_cond c = { .core = core };
	struct tp_doorbell *db = tp_reg_doorbell(core->dev, core->id, TP_REG_DATA_MAIN_BASE);
	tp_doorbell_wait(db, window_open, &c, TP_DOORBELL_FOREVER);
	if (c.value == TP_AICORE_EXIT_SIGNAL) {
		tp_aicore_exit_ack(core);
		return TP_AICORE_EXITING;
	}
	tp_reg_write(core->dev, core->id, TP_REG_COND, TP_AICORE_IDLE_VALUE);
	return 0;
}

static bool new_token(void *arg)
{
	struct dispatch_cond *c = arg;
	c->value = tp_reg_read(c->core->dev, c->core->id, TP_REG_DATA_MAIN_BASE);
	return c->value != 0 && c->value != TP_AICPU_IDLE_TASK_ID && c->value != c->last;
}

uint32_t tp_aicore_wait_dispatch(struct tp_aicore *core, uint32_t last_token)
{
	struct dispatch_cond c = { .core = core, .last = last_token };
	struct tp_doorbell *db = tp_reg_doorbell(core->dev, core->id, TP_REG_DATA_MAIN_BASE);
	tp_doorbell_wait(db, new_token, &c, TP_DOORBELL_FOREVER);
	return c.value;
}

static bool gate_open(void *arg)
{
	struct dispatch_cond *c = arg;
	struct tp_device *dev = c->core->dev;
	if (tp_reg_read(dev, c->core->id, TP_REG_DATA_MAIN_BASE_HI) == c->last) {
		c->value = 0;
		return true;
	}
	c->value = tp_reg_read(dev, c->core->id, TP_REG_DATA_MAIN_BASE);
	return c->value == TP_AICORE_EXIT_SIGNAL;
}

int tp_aicore_wait_gate(struct tp_aicore *core, uint32_t token)
{
	struct dispatch_cond c = { .core = core, .last = token };
	struct tp_doorbell *db = tp_reg_doorbell(core->dev, core->id, TP_REG_DATA_MAIN_BASE);
	tp_doorbell_wait(db, gate_open, &c, TP_DOORBELL_FOREVER);
	return c.value == TP_AICORE_EXIT_SIGNAL ? TP_AICORE_EXITING : 0;
}

void tp_aicore_ack(struct tp_aicore *core, uint32_t token)
{
	tp_reg_write(core->dev, core->id, TP_REG_COND, TP_COND_ACK(token));
}

void tp_aicore_fin(struct tp_aicore *core, uint32_t token)
{
	tp_reg_write(core->dev, core->id, TP_REG_COND, TP_COND_FIN(token));
}

void tp_aicore_exit_ack(struct tp_aicore *core)
{
	tp_reg_write(core->dev, core->id, TP_REG_COND, TP_AICORE_EXITED_VALUE);
}

void tp_aicore_loop_empty(struct tp_aicore *core, void *arg)
{
	(void)arg;
	if (tp_aicore_handshake(core) == TP_AICORE_EXITING)
		return;
	uint32_t last = TP_AICPU_IDLE_TASK_ID;
	for (;;) {
		uint32_t token = tp_aicore_wait_dispatch(core, last);
		if (token == TP_AICORE_EXIT_SIGNAL) {
			tp_aicore_exit_ack(core);
			return;
		}
		last = token;
		tp_aicore_ack(core, token);
		tp_aicore_kernel_begin(core);
		tp_aicore_kernel_end(core);
		tp_aicore_fin(core, token);
	}
}

/* ---- AICPU protocol ----------------------------------------------------- */

/* Waits for COND of @core to read @want, within what is left of @wd's
 * budget: in slices of at most TP_WATCHDOG_PERIOD_NS, so time the process
 * spent stopped (Ctrl-Z, a debugger) does not count against a handshake
 * (base/watchdog.h). TP_DOORBELL_FOREVER budgets wait in one piece.
 * Return: 0 once it reads @want; -ETIMEDOUT when @wd expired. */
static int wait_cond(struct tp_device *dev, int core, uint32_t want, struct tp_watchdog *wd)
{
	if (wd->budget_ns == TP_WATCHDOG_NEVER)
		return tp_reg_wait(dev, core, TP_REG_COND, 0xFFFFFFFFu, want,
				   TP_DOORBELL_FOREVER);
	for (uint64_t now = tp_now_ns();; now = tp_now_ns()) {
		/* A budget shared by several cores may have run out on an
		 * earlier one: a core that already answered is not late. */
		if (tp_watchdog_expired(wd, now))
			return tp_reg_read(dev, core, TP_REG_COND) == want ? 0 : -ETIMEDOUT;
		if (tp_reg_wait(dev, core, TP_REG_COND, 0xFFFFFFFFu, want,
				tp_watchdog_sleep_ns(wd, now)) == 0)
			return 0;
	}
}

/* -EINVAL unless every id of @cores is a core of @dev: a register access
 * to a bad core reads TP_REG_FAULT_VALUE, which equals AICORE_IDLE_VALUE
 * and would pass for a handshake. */
static int check_cores(struct tp_device *dev, const int *cores, int n, const char *what)
{
	if (n < 0 || (n > 0 && !cores))
		return tp_set_error(-EINVAL, "device %d: %s: bad core list (%d ids)",
				    dev->id, what, n);
	for (int i = 0; i < n; i++)
		if (cores[i] < 0 || cores[i] >= dev->num_cores)
			return tp_set_error(-EINVAL, "device %d: %s: core id %d out of "
					    "range 0..%d", dev->id, what, cores[i],
					    dev->num_cores - 1);
	return 0;
}

int tp_aicpu_open_cores(struct tp_device *dev, const int *cores, int n,
			uint64_t timeout_ns)
{
	int rc = check_cores(dev, cores, n, "open_cores");
	if (rc)
		return rc;
	for (int i = 0; i < n; i++)
		tp_reg_write(dev, cores[i], TP_REG_DATA_MAIN_BASE, TP_AICPU_IDLE_TASK_ID);
	struct tp_watchdog wd;
	start_budget(&wd, timeout_ns);
	for (int i = 0; i < n; i++) {
		if (wait_cond(dev, cores[i], TP_AICORE_IDLE_VALUE, &wd) != 0)
			return tp_set_error(-ETIMEDOUT, "device %d: core %d did not answer the "
					    "start-up handshake (COND=0x%08x, want 0x%08x)",
					    dev->id, cores[i],
					    tp_reg_read(dev, cores[i], TP_REG_COND),
					    TP_AICORE_IDLE_VALUE);
	}
	return 0;
}

void tp_aicpu_dispatch(struct tp_device *dev, int core, uint32_t token)
{
	tp_reg_write(dev, core, TP_REG_DATA_MAIN_BASE, token);
}

int tp_aicpu_close_cores(struct tp_device *dev, const int *cores, int n,
			 uint64_t timeout_ns)
{
	int rc = check_cores(dev, cores, n, "close_cores");
	if (rc)
		return rc;
	for (int i = 0; i < n; i++)
		tp_reg_write(dev, cores[i], TP_REG_DATA_MAIN_BASE, TP_AICORE_EXIT_SIGNAL);
	struct tp_watchdog wd;
	start_budget(&wd, timeout_ns);
	for (int i = 0; i < n; i++) {
		if (wait_cond(dev, cores[i], TP_AICORE_EXITED_VALUE, &wd) != 0) {
			rc = tp_set_error(-ETIMEDOUT, "device %d: timed out waiting for the exit "
					  "ACK of core %d (COND=0x%08x)", dev->id, cores[i],
					  tp_reg_read(dev, cores[i], TP_REG_COND));
			TP_ERROR("%s", tp_last_error());
		}
	}
	return rc;
}

uint64_t tp_device_launch_seq(const struct tp_device *dev)
{
	return dev->launch_seq;
}
