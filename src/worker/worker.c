/* SPDX-License-Identifier: MIT */
/*
 * worker/worker.c — the Worker (taskprof/worker.h): one case of a callable
 * on a simulated device with the tensormap_and_ringbuffer or the
 * host_build_graph runtime (spec §3: the orchestration then runs on the
 * calling thread before launch, its time is the orchestrator time), its
 * golden check and its timing (spec/runtime-model.md §4.3, §4.4, §6).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/file.h"
#include "base/log.h"
#include "base/progress.h"
#include "base/tmp_registry.h"
#include "platform/dev_memory.h"
#include "platform/device.h"
#include "platform/platform.h"
#include "runtime/engine.h"
#include "taskprof/worker.h"
#include "worker/run_depgen.h"
#include "worker/run_pmu.h"
#include "worker/run_swimlane.h"

_Static_assert(TP_WORKER_STALL_NEVER == TP_ENGINE_STALL_NEVER &&
		       TP_WORKER_DEFAULT_STALL_MS == TP_ENGINE_DEFAULT_STALL_MS,
	       "the Worker passes stall_timeout_ms to the engine as is");

struct tp_worker {
	const struct tp_platform *plat;
	const char *runtime;
	int block_dim;
	int aicpu_threads;
	int rounds;
	int early_dispatch; /* tp_worker_config.early_dispatch */
	char *output_root;
	/* tp_mkdir_missing_len() of output_root when a run of this Worker
	 * made it (0: it existed; the shallowest if made more than once,
	 * tp_mkdir_fresh()): removed at close if still empty. */
	size_t root_made_len;
	bool dep_gen;
	struct wk_depgen *dg; /* the running round's dep_gen, or NULL */
	int swimlane_level;
	struct wk_swimlane *swl; /* the running round's swimlane, or NULL */
	int pmu_event_type;      /* tp_worker_config.pmu_event_type */
	struct wk_pmu *pmu;      /* the running round's PMU collection, or NULL */
	/* run_epoch of pmu.csv for the current run: taken from the
	 * process-wide counter g_run_epoch, so unique in the process (seed
	 * 000 §3.2 "the process-unique run identity"). */
	uint64_t run_epoch;
	struct wk_pmu_lease pmu_lease; /* channel 53, across the Worker's runs */
	bool pmu_across;               /* tp_worker_config.collect_across_runs */
	uint64_t stall_timeout_ms;     /* tp_worker_config.stall_timeout_ms */
	struct wk_pmu_retention pmu_ret; /* retained runs, the sticky failure */
};

/* The last run identity handed out in this process (0: none yet). Every
 * tp_worker_run() that gets past its admission takes the next one, whatever
 * Worker it runs on, so two Workers never write the same run_epoch. */
static _Atomic uint64_t g_run_epoch;

struct tp_worker *tp_worker_open(const struct tp_worker_config *cfg)
{
	static const struct tp_worker_config defaults;
	if (!cfg)
		cfg = &defaults;
	const char *pname = cfg->platform ? cfg->platform : "a2a3sim";
	const struct tp_platform *plat = tp_platform_find(pname);
	if (!plat) {
		tp_set_error(-EINVAL, "unknown platform '%s' (expected %s)", pname,
			     tp_platform_names());
		return NULL;
	}
	const char *rt = cfg->runtime ? cfg->runtime : TP_RUNTIME_TRB;
	const bool hbg = !strcmp(rt, TP_RUNTIME_HBG);
	if (!hbg && strcmp(rt, TP_RUNTIME_TRB)) {
		tp_set_error(-EINVAL, "unknown runtime '%s' (expected %s or %s)", rt,
			     TP_RUNTIME_TRB, TP_RUNTIME_HBG);
		return NULL;
	}
	int bd = cfg->block_dim ? cfg->block_dim : TP_PLATFORM_DEFAULT_BLOCK_DIM;
	if (bd < 1 || bd > plat->max_block_dim) {
		tp_set_error(-EINVAL, "block_dim %d out of range: %s has 1..%d clusters",
			     cfg->block_dim, plat->name, plat->max_block_dim);
		return NULL;
	}
	int at = cfg->aicpu_threads ? cfg->aicpu_threads : TP_PLATFORM_DEFAULT_AICPU_THREADS;
	if (at < (hbg ? 1 : 2) || at > plat->max_aicpu_threads) {
		if (hbg)
			tp_set_error(-EINVAL,
				     "aicpu_threads %d out of range: %s runs 1..%d (all "
				     "schedulers under %s)",
				     cfg->aicpu_threads, plat->name, plat->max_aicpu_threads,
				     TP_RUNTIME_HBG);
		else
			tp_set_error(-EINVAL,
				     "aicpu_threads %d out of range: %s runs 2..%d (1 orchestrator "
				     "+ at least 1 scheduler)",
				     cfg->aicpu_threads, plat->name, plat->max_aicpu_threads);
		return NULL;
	}
	if (cfg->l2_swimlane_level < 0 || cfg->l2_swimlane_level > 4) {
		tp_set_error(-EINVAL, "l2_swimlane_level %d: expected 0..4",
			     cfg->l2_swimlane_level);
		return NULL;
	}
	if (cfg->rounds < 0) {
		tp_set_error(-EINVAL, "rounds %d: expected >= 1", cfg->rounds);
		return NULL;
	}
	const char *root = cfg->output_root ? cfg->output_root : TP_WORKER_DEFAULT_OUTPUT_ROOT;
	if (!*root) {
		tp_set_error(-EINVAL, "empty output root");
		return NULL;
	}
	struct tp_worker *w = calloc(1, sizeof(*w));
	if (!w || !(w->output_root = strdup(root))) {
		free(w);
		tp_set_error(-ENOMEM, "worker: out of memory");
		return NULL;
	}
	w->plat = plat;
	w->runtime = hbg ? TP_RUNTIME_HBG : TP_RUNTIME_TRB;
	w->block_dim = bd;
	w->aicpu_threads = at;
	w->rounds = cfg->rounds ? cfg->rounds : 1;
	w->early_dispatch = cfg->early_dispatch;
	w->stall_timeout_ms = cfg->stall_timeout_ms;
	w->dep_gen = cfg->dep_gen;
	w->swimlane_level = cfg->l2_swimlane_level;
	w->pmu_event_type = cfg->pmu_event_type;
	w->pmu_across = cfg->collect_across_runs;
	return w;
}

int tp_worker_flush_diagnostics(struct tp_worker *w)
{
	if (!w)
		return tp_set_error(-EINVAL, "worker: no worker");
	return w->pmu_across ? wk_pmu_flush(&w->pmu_ret) : 0;
}

int tp_worker_set_pmu_event_type(struct tp_worker *w, int pmu_event_type)
{
	if (!w)
		return tp_set_error(-EINVAL, "worker: no worker");
	w->pmu_event_type = pmu_event_type;
	return 0;
}

void tp_worker_close(struct tp_worker *w)
{
	if (!w)
		return;
	/* The last call that can report a retained run's failure (seed §3.4). */
	if (w->pmu_across && wk_pmu_flush(&w->pmu_ret))
		TP_ERROR("tp_worker_close: %s", tp_last_error());
	wk_pmu_retention_fini(&w->pmu_ret);
	if (w->root_made_len) {
		/* The folders a run made for the output root, if no run left
		 * anything there (runs that failed before writing remove their
		 * folders). */
		tp_tmpreg_set_made_dirs(NULL, 0);
		if (tp_rmdir_made(w->output_root, w->root_made_len))
			TP_DEBUG("worker: removed the empty output root %s", tp_shown(w->output_root));
	}
	free(w->output_root);
	free(w);
}

const struct tp_case *tp_callable_case(const struct tp_callable *c, const char *name)
{
	if (!c)
		return NULL;
	if (!name)
		name = c->default_case;
	for (int i = 0; name && i < c->n_cases; i++)
		if (c->cases[i].name && !strcmp(c->cases[i].name, name))
			return &c->cases[i];
	return NULL;
}

/* ---- output folder ---------------------------------------------------- */

static void sanitize(char *dst, size_t len, const char *src)
{
	size_t i = 0;
	for (; src[i] && i + 1 < len; i++) {
		char ch = src[i];
		bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
			  (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
		dst[i] = ok ? ch : '_';
	}
	dst[i] = 0;
}

/*
 * Checks that @dir is still the folder make_run_dir() created (@made: its
 * stat at creation). Deleted during a run, it would be recreated by a
 * collector's export and hold only what came after, the name map and
 * deps.json missing, while the run reported success.
 * Return: 0; -ENOENT / -ESTALE with the message set.
 */
static int check_run_dir(const char *dir, const struct stat *made)
{
	struct stat now;
	if (stat(dir, &now))
		return tp_set_error(-errno, "the run folder %s was removed or renamed during the "
				    "run (%s); its outputs are lost, or in the folder's new place",
				    dir, strerror(errno));
	if (now.st_dev != made->st_dev || now.st_ino != made->st_ino)
		return tp_set_error(-ESTALE, "the run folder %s was removed or replaced during "
				    "the run; what is there now is incomplete (the files written "
				    "before, such as the name map, are gone)", dir);
	return 0;
}

/* OUTPUT_ROOT/<label>_<YYYYMMDD_HHMMSS>[_N]: the folder is the uniqueness
 * boundary (ARCHITECTURE.md §6), so a run never reuses one. */
static int make_run_dir(const char *root, const char *label, char *dir, size_t len,
			size_t *root_made_len)
{
	char stamp[32], safe[160], name[sizeof(safe) + sizeof(stamp)];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &tm);
	sanitize(safe, sizeof(safe), label);
	snprintf(name, sizeof(name), "%s_%s", safe, stamp);
	/* The folders made for the root are removed again if nothing comes
	 * into them (at close, or by the interrupt handler after the run
	 * folder); another run's removal of them, as folders it made, before
	 * the run folder is in them is made up for by making them again.
	 * -EEXIST: all names taken. */
	int rc = tp_mkdir_fresh(root, name, dir, len, root_made_len);
	if (rc == -EEXIST)
		return tp_set_error(rc, "no free output folder name for %s under %s", safe, root);
	return rc;
}

/* ---- golden comparison (spec §4.4: allclose) -------------------------- */

static bool to_double(enum tp_dtype dt, const void *p, size_t i, double *v)
{
	switch (dt) {
	case TP_FP32:
		*v = ((const float *)p)[i];
		return true;
	case TP_BF16: {
		uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
		float f;
		memcpy(&f, &u, sizeof(f));
		*v = f;
		return true;
	}
	case TP_INT32:
		*v = ((const int32_t *)p)[i];
		return true;
	case TP_INT8:
		*v = ((const int8_t *)p)[i];
		return true;
	default:
		return false;
	}
}

struct cmp_state {
	size_t n, n_bad;
	double worst_ratio;
	int worst_t;
	size_t worst_i;
	double worst_exp, worst_got, max_abs;
};

static int compare_tensor(const struct tp_case_tensor *t, const void *want, const void *got,
			  double rtol, double atol, int ti, struct cmp_state *st)
{
	size_t es = tp_dtype_size(t->dtype);
	size_t n = es ? t->bytes / es : 0;
	double e, g;
	if (!to_double(t->dtype, want, 0, &e))
		return tp_set_error(-ENOTSUP, "golden: cannot compare %s tensor '%s'",
				    tp_dtype_name(t->dtype), t->name);
	for (size_t i = 0; i < n; i++) {
		to_double(t->dtype, want, i, &e);
		to_double(t->dtype, got, i, &g);
		double d = fabs(g - e), tol = atol + rtol * fabs(e), ratio;
		if (isnan(e) || isnan(g))
			ratio = INFINITY;
		else if (isinf(e) || isinf(g))
			ratio = e == g ? 0 : INFINITY;
		else if (d == 0)
			ratio = 0; /* 0 / 0 with a zero tolerance would be NaN */
		else
			ratio = d / tol; /* +inf when tol is 0 */
		if (!isnan(d) && !(isinf(e) && e == g) && d > st->max_abs)
			st->max_abs = d;
		if (ratio > 1.0)
			st->n_bad++;
		/* Worst: the largest ratio; among infinite ones (a zero
		 * tolerance, or a NaN / inf element) a NaN first, then the
		 * largest difference. */
		double wd = fabs(st->worst_got - st->worst_exp);
		bool tie_worse = isinf(ratio) && isinf(st->worst_ratio) && !isnan(wd) &&
				 (isnan(d) || d > wd);
		if (st->worst_t < 0 || ratio > st->worst_ratio || tie_worse) {
			st->worst_ratio = ratio;
			st->worst_t = ti;
			st->worst_i = i;
			st->worst_exp = e;
			st->worst_got = g;
		}
	}
	st->n += n;
	return 0;
}

static void format_index(char *buf, size_t len, const struct tp_case_tensor *t, size_t flat)
{
	size_t idx[TP_CASE_MAX_DIMS] = { 0 }, rest = flat;
	for (int k = (int)t->ndims - 1; k >= 0; k--) {
		size_t s = t->shape[k] ? t->shape[k] : 1;
		idx[k] = rest % s;
		rest /= s;
	}
	int o = snprintf(buf, len, "%s", t->name ? t->name : "out");
	for (uint32_t k = 0; k < t->ndims && o > 0 && (size_t)o < len; k++)
		o += snprintf(buf + o, len - (size_t)o, "[%zu]", idx[k]);
}

/* ---- the case's locale --------------------------------------------------- */

/*
 * Case code (its generate, golden and release, the orchestration and the
 * kernels) may change the process locale: a library it uses calls
 * setlocale(LC_ALL, ""), and under LC_ALL=de_DE.UTF-8 printf would then
 * write "host_wall_s 0,007036" into result.txt and "7,036 ms" into the
 * result line, and strtod would stop at the '.' of a JSON number the
 * converter reads. So each call into the case is bracketed: LC_NUMERIC
 * is read before and put back after (case_locale_enter / _leave), and the
 * case's change never reaches taskprof's numbers; its other categories
 * (LC_CTYPE, LC_MESSAGES, ...) stay as it set them. The process-wide
 * setting is what has to be right, rather than a thread's uselocale():
 * the collector, writer and converter threads that write the outputs
 * follow the global locale. The `taskprof` command itself never sets a
 * locale, so its LC_NUMERIC is "C" and stays so (cmd_run.c does the same
 * after loading a case shared object, whose constructors and entry point
 * run before the Worker); result.txt is also formatted under a C locale of
 * its own (write_result()), so it uses '.' even in a program that embeds
 * the Worker with another LC_NUMERIC of its own choosing.
 */
struct case_locale {
	char numeric[128]; /* LC_NUMERIC before the call ("" if unknown) */
};

static void case_locale_enter(struct case_locale *l)
{
	const char *cur = setlocale(LC_NUMERIC, NULL);
	snprintf(l->numeric, sizeof(l->numeric), "%s", cur ? cur : "");
}

static void case_locale_leave(const struct case_locale *l)
{
	const char *cur = setlocale(LC_NUMERIC, NULL);
	if (!l->numeric[0] || (cur && !strcmp(cur, l->numeric)))
		return;
	if (!setlocale(LC_NUMERIC, l->numeric))
		setlocale(LC_NUMERIC, "C");
	TP_DEBUG("worker: the case changed LC_NUMERIC to %s; put back to %s", cur ? tp_shown(cur) : "?",
		 l->numeric);
}

/* ---- one run ---------------------------------------------------------- */

/* Where the orchestration is (run_ctx.orch_state). */
enum { ORCH_RUNNING, ORCH_RETURNED, ORCH_ABANDONED };

/* One round's context, on the heap: an orchestration stuck in the case's
 * code (the runtime's stall watch failed the run and left its thread
 * running) still holds a pointer to it and to dev_args, which must outlive
 * run_round() then: such a context is leaked, never freed under it. */
struct run_ctx {
	const struct tp_callable *cal;
	struct tp_case_args *dev_args;
	struct tp_case_args dargs; /* what dev_args points to */
	struct wk_depgen *dg;
	struct wk_swimlane *swl;
	uint64_t orch_start, orch_end;          /* orchestrator thread; read after join */
	_Atomic uint64_t sched_start, sched_end; /* min start, max end */
	_Atomic int orch_state;
};

static int orch_entry(struct tp_orch *o, void *arg)
{
	struct run_ctx *x = arg;
	x->orch_start = tp_sys_cnt();
	tp_thread_activity_set("the case's orchestration");
	int rc = x->cal->orch(o, x->dev_args);
	tp_thread_activity_set(NULL);
	/* acq_rel: pairs with run_round()'s exchange; after an abandonment
	 * the Worker has gone on (its collectors may be closed): touch
	 * nothing of it. */
	if (atomic_exchange_explicit(&x->orch_state, ORCH_RETURNED, memory_order_acq_rel) ==
	    ORCH_ABANDONED)
		return rc;
	x->orch_end = tp_sys_cnt();
	wk_depgen_orch_done(x->dg); /* on the orchestrator thread */
	if (x->swl)
		wk_swimlane_orch_done(x->swl);
	return rc;
}

static void on_sched_window(void *ud, int thread, uint64_t start, uint64_t end)
{
	struct run_ctx *x = ud;
	(void)thread;
	uint64_t cur = atomic_load_explicit(&x->sched_start, memory_order_relaxed);
	while (start < cur && !atomic_compare_exchange_weak_explicit(
				      &x->sched_start, &cur, start, memory_order_relaxed,
				      memory_order_relaxed))
		;
	cur = atomic_load_explicit(&x->sched_end, memory_order_relaxed);
	while (end > cur && !atomic_compare_exchange_weak_explicit(
				    &x->sched_end, &cur, end, memory_order_relaxed,
				    memory_order_relaxed))
		;
}

static double ticks_s(uint64_t a, uint64_t b)
{
	return b > a ? (double)tp_sys_cnt_to_ns(b - a) * 1e-9 : 0.0;
}

/* One round: device copies, launch, D2H of the outputs into got[]. */
/* Bytes of memory the host can still give (MemAvailable of /proc/meminfo),
 * or 0 when unknown. */
static uint64_t host_mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	char line[128];
	unsigned long long kib = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024u;
}

/* The simulated device's memory is the host's: case tensors larger than
 * what the host has left are refused before they are copied (a 64 GiB
 * tensor grew the process until the kernel's OOM killer ended it, with
 * no message). */
static int fits_host_memory(const struct tp_case_args *host)
{
	uint64_t sum = 0, big = 0;
	const char *big_name = "?";
	for (uint32_t i = 0; i < host->n_tensors; i++) {
		sum += host->tensors[i].bytes;
		if (host->tensors[i].bytes > big) {
			big = host->tensors[i].bytes;
			big_name = host->tensors[i].name ? host->tensors[i].name : "?";
		}
	}
	const uint64_t avail = host_mem_available();
	if (!avail || sum <= avail)
		return 0;
	const double gib = 1024.0 * 1024.0 * 1024.0;
	return tp_set_error(-ENOMEM, "device memory: the case's %u tensors need %.2f GiB ('%s' "
			    "alone %.2f GiB), and the host has %.2f GiB available (MemAvailable): "
			    "the simulated device's memory is the host's",
			    host->n_tensors, (double)sum / gib, big_name, (double)big / gib,
			    (double)avail / gib);
}

static int run_round(const struct tp_worker *w, struct tp_device *dev,
		     const struct tp_callable *cal, const struct tp_kernel_entry *kt, int nk,
		     const struct tp_case_args *host, void **got, struct tp_run_result *res)
{
	struct tp_dev_mem *mem = tp_device_mem(dev);
	struct run_ctx *x = calloc(1, sizeof(*x));
	if (!x)
		return tp_set_error(-ENOMEM, "worker: out of memory");
	*x = (struct run_ctx){ .cal = cal, .dargs = *host, .dg = w->dg, .swl = w->swl };
	x->dev_args = &x->dargs;
	struct tp_case_args *const dargs = &x->dargs;
	atomic_init(&x->sched_start, UINT64_MAX);
	atomic_init(&x->sched_end, 0);
	atomic_init(&x->orch_state, ORCH_RUNNING);
	bool abandoned = false;
	int rc = 0;

	uint64_t h0 = tp_now_ns();
	for (uint32_t i = 0; i < host->n_tensors; i++)
		dargs->tensors[i].data = NULL;
	/* (fits_host_memory() ran once, before the device was sized.) */
	for (uint32_t i = 0; i < host->n_tensors && !rc; i++) {
		const struct tp_case_tensor *t = &host->tensors[i];
		void *d = tp_dev_mem_alloc(mem, t->bytes ? t->bytes : 1, false);
		if (!d) {
			rc = tp_set_error(-ENOMEM, "device memory: cannot allocate %zu bytes for '%s'",
					  t->bytes, t->name);
			break;
		}
		dargs->tensors[i].data = d;
		rc = tp_dev_mem_copy_to_device(mem, d, t->data, t->bytes);
	}
	struct tp_engine_result er;
	if (!rc) {
		struct tp_sched_hooks hooks = { .on_sched_window = on_sched_window, .ud = x };
		if (w->swl)
			wk_swimlane_wire(w->swl, &hooks);
		struct tp_engine_config ec = {
			.dev = dev, .kernels = kt, .num_kernels = nk, .hooks = &hooks,
			.runtime = strcmp(w->runtime, TP_RUNTIME_HBG)
					   ? TP_RUNTIME_TENSORMAP_RINGBUFFER
					   : TP_RUNTIME_HOST_BUILD_GRAPH,
			.early_dispatch = w->early_dispatch > 0 ||
					  (w->early_dispatch == 0 && cal->wants_early_dispatch),
			.orch_hooks = wk_depgen_hooks(w->dg),
			.stall_timeout_ms = w->stall_timeout_ms,
			.check_tensor_memory = true,
		};
		/* PMU last: it chains the hooks set above. */
		if (w->pmu)
			wk_pmu_wire(w->pmu, &hooks, &ec);
		struct case_locale loc;
		case_locale_enter(&loc);
		uint64_t d0 = tp_now_ns();
		rc = tp_engine_run(&ec, orch_entry, x, &er);
		uint64_t d1 = tp_now_ns();
		case_locale_leave(&loc); /* the orchestration and kernels ran */
		res->device_wall_s = (double)(d1 - d0) * 1e-9;
		res->tasks = er.completed_tasks;
		if (w->swl || !w->swimlane_level)
			res->subtasks = er.dispatched_subtasks;
		res->early_dispatch = ec.early_dispatch && !ec.single_issue;
		res->max_outstanding_per_core = er.max_outstanding_per_core;
		res->pending_dispatches = er.pending_dispatches;
		res->early_staged = er.early_staged;
		if (rc && er.msg[0])
			tp_set_error(rc, "%s", er.msg);
	}
	for (uint32_t i = 0; i < host->n_tensors && !rc; i++)
		if (host->tensors[i].is_out)
			rc = tp_dev_mem_copy_from_device(mem, got[i], dargs->tensors[i].data,
							 host->tensors[i].bytes);
	/* AICores a stall left running (tp_device_running(): their exit was
	 * never answered) may still read and write these: they stay
	 * allocated, with the device that tp_device_close() keeps. */
	const bool cores_left = tp_device_running(dev);
	/* acq_rel: pairs with orch_entry()'s exchange: an orchestration that
	 * has not returned by now never will here (the run failed on it, its
	 * thread left running): it keeps x, which is leaked. */
	if (cores_left && atomic_exchange_explicit(&x->orch_state, ORCH_ABANDONED,
						   memory_order_acq_rel) == ORCH_RUNNING)
		abandoned = true;
	for (uint32_t i = 0; i < host->n_tensors && !cores_left; i++)
		if (dargs->tensors[i].data)
			tp_dev_mem_free(mem, dargs->tensors[i].data);
	uint64_t h1 = tp_now_ns();
	res->host_wall_s = (double)(h1 - h0) * 1e-9;
	res->orch_s = ticks_s(x->orch_start, x->orch_end);
	/* relaxed: a min / max the schedulers keep with relaxed CASes; read
	 * after tp_engine_run() (a stall may leave one still running: still a
	 * consistent value of each), nothing is published through them. */
	uint64_t ss = atomic_load_explicit(&x->sched_start, memory_order_relaxed);
	uint64_t se = atomic_load_explicit(&x->sched_end, memory_order_relaxed);
	res->sched_s = ss == UINT64_MAX ? 0.0 : ticks_s(ss, se);
	res->tasks_per_s = res->device_wall_s > 0 ? (double)res->tasks / res->device_wall_s : 0;
	if (!abandoned)
		free(x);
	return rc;
}

/*
 * Collect the run's failures in the order they happen: the first
 * (@nrc != 0 while *@rc is 0) becomes the run's, its message copied into
 * @err (@len bytes); a later collector failure is logged at ERROR, so
 * that a records file that could not be written is not hidden behind a
 * failed pmu.csv. After a failed round (@round_failed) the collectors'
 * own failures are its consequences and stay unlogged, as before.
 */
static void keep_first_error(int *rc, char *err, size_t len, int nrc, bool round_failed)
{
	if (!nrc)
		return;
	if (!*rc) {
		*rc = nrc;
		snprintf(err, len, "%s", tp_last_error());
	} else if (!round_failed) {
		TP_ERROR("worker: also failed: %s", tp_last_error());
	}
}

/* result.txt's stall_timeout value: "never" or "<seconds> s" (3
 * decimals, the C locale's '.': called under it). */
static void stall_text(const struct tp_worker *w, char *buf, size_t n)
{
	if (w->stall_timeout_ms == TP_WORKER_STALL_NEVER)
		snprintf(buf, n, "never");
	else
		snprintf(buf, n, "%.3f s",
			 (double)(w->stall_timeout_ms ? w->stall_timeout_ms
						      : TP_WORKER_DEFAULT_STALL_MS) / 1e3);
}

static int write_result(const char *dir, const struct tp_worker *w,
			const struct tp_run_result *r)
{
	char path[4200], buf[2048];
	snprintf(path, sizeof(path), "%s/result.txt", dir);
	/* '.' whatever the process's LC_NUMERIC (see case_locale_enter);
	 * this thread only, and put back before returning. */
	locale_t c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	locale_t prev = c_loc ? uselocale(c_loc) : (locale_t)0;
	char stall[32];
	stall_text(w, stall, sizeof(stall));
	/* The settings that shape the data come after the figures: what
	 * was collected (0 / off: not) and how the run was scheduled. */
	int n = snprintf(buf, sizeof(buf),
			 "callable %s\ncase %s\nplatform %s\nruntime %s\nblock_dim %d\n"
			 "aicpu_threads %d\nrounds %d\ntasks %" PRIu64 "\nhost_wall_s %.6f\n"
			 "device_wall_s %.6f\norch_s %.6f\nsched_s %.6f\ntasks_per_s %.6g\n"
			 "swimlane_level %d\npmu_event_type %u\ndep_gen %s\nearly_dispatch %s\n"
			 "stall_timeout %s\ngolden %s\n%s\n",
			 r->callable, r->case_name, r->platform, r->runtime, w->block_dim,
			 w->aicpu_threads, r->rounds, r->tasks, r->host_wall_s, r->device_wall_s,
			 r->orch_s, r->sched_s, r->tasks_per_s, w->swimlane_level,
			 r->pmu ? r->pmu_event_type : 0u, w->dep_gen ? "on" : "off",
			 r->early_dispatch ? "on" : "off", stall,
			 r->pass ? "PASS" : "FAIL", r->golden_line);
	if (c_loc) {
		uselocale(prev);
		freelocale(c_loc);
	}
	return tp_write_file_atomic(path, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* result.txt of a run that failed after it wrote outputs: what ran, the
 * settings that shaped what it wrote (as write_result() names them;
 * @pmu_type: the PMU event type collected, 0: none), and "status FAILED"
 * with the error, so that the folder says what it is (tp_run_failed()
 * reads it back for the tools). Best effort: the run's own error is
 * what the caller reports. Return: whether it was written (a WARN says
 * why not). */
/* Collectors left with a device whose AICores a stall left running (see
 * tp_worker_run()): kept reachable from here, so that a leak check (the
 * sanitizer builds) does not report what is kept on purpose. One process
 * stalls a handful of times at most; beyond the array they are just kept. */
static void *g_left_with_device[16];
static atomic_uint g_n_left_with_device;

static void leave_with_device(void *collector)
{
	/* relaxed: a slot index; the pointer is read by no one but the leak
	 * check at exit. */
	unsigned i = atomic_fetch_add_explicit(&g_n_left_with_device, 1, memory_order_relaxed);
	if (i < sizeof(g_left_with_device) / sizeof(g_left_with_device[0]))
		g_left_with_device[i] = collector;
}

/* The settings lines of a result.txt that is not a finished run's (a
 * failed run's, or the one an interrupt leaves): what ran and the
 * settings that shaped what it wrote, as write_result() names them
 * (@pmu_type: the PMU event type collected, 0: none), each line ended by
 * '\n', '.' as the decimal point. Return: the length written to @buf (cut
 * at @cap - 1). */
static size_t settings_text(char *buf, size_t cap, const struct tp_worker *w,
			    const struct tp_run_result *r, uint32_t pmu_type)
{
	locale_t c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	locale_t prev = c_loc ? uselocale(c_loc) : (locale_t)0;
	char stall[32];
	stall_text(w, stall, sizeof(stall));
	int n = snprintf(buf, cap,
			 "callable %s\ncase %s\nplatform %s\nruntime %s\nblock_dim %d\n"
			 "aicpu_threads %d\nrounds %d\nswimlane_level %d\npmu_event_type %u\n"
			 "dep_gen %s\nearly_dispatch %s\nstall_timeout %s\n",
			 r->callable, r->case_name, r->platform, r->runtime, w->block_dim,
			 w->aicpu_threads, w->rounds, w->swimlane_level, pmu_type,
			 w->dep_gen ? "on" : "off", r->early_dispatch ? "on" : "off", stall);
	if (c_loc) {
		uselocale(prev);
		freelocale(c_loc);
	}
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

static bool write_failed_result(const char *dir, const struct tp_worker *w,
				const struct tp_run_result *r, uint32_t pmu_type, const char *err)
{
	char path[4200], buf[TP_ERROR_MSG_MAX + 1024], one[TP_ERROR_MSG_MAX];
	snprintf(path, sizeof(path), "%s/result.txt", dir);
	/* one line: the error as it was reported, newlines made blanks */
	snprintf(one, sizeof(one), "%s", err);
	for (char *c = one; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	size_t n = settings_text(buf, sizeof(buf), w, r, pmu_type);
	int m = snprintf(buf + n, sizeof(buf) - n, "status FAILED\nerror %s\n", one);
	n += m < 0 ? 0 : (size_t)m < sizeof(buf) - n ? (size_t)m : sizeof(buf) - n - 1;
	if (tp_write_file_atomic(path, buf, n)) {
		TP_WARN("worker: cannot mark the failed run's folder: %s", tp_last_error());
		return false;
	}
	return true;
}

static int check_callable(const struct tp_callable *cal, struct tp_kernel_entry **kt_out,
			  int *nk_out)
{
	if (!cal || !cal->name || !cal->orch || cal->n_kernels < 0 ||
	    (cal->n_kernels && !cal->kernels))
		return tp_set_error(-EINVAL, "worker: bad callable");
	int nk = 0;
	for (int i = 0; i < cal->n_kernels; i++) {
		int f = cal->kernels[i].func_id;
		if (f < 0 || f >= cal->n_kernels)
			return tp_set_error(-EINVAL, "callable %s: func_id %d of '%s' outside 0..%d",
					    cal->name, f, cal->kernels[i].name, cal->n_kernels - 1);
		nk = f + 1 > nk ? f + 1 : nk;
	}
	struct tp_kernel_entry *kt = calloc((size_t)(nk ? nk : 1), sizeof(*kt));
	bool *seen = calloc((size_t)(nk ? nk : 1), sizeof(*seen));
	if (!kt || !seen) {
		free(kt);
		free(seen);
		return tp_set_error(-ENOMEM, "worker: out of memory");
	}
	for (int i = 0; i < cal->n_kernels; i++) {
		const struct tp_case_kernel *k = &cal->kernels[i];
		if (seen[k->func_id]) {
			free(kt);
			free(seen);
			return tp_set_error(-EINVAL, "callable %s: func_id %d declared twice",
					    cal->name, k->func_id);
		}
		if (k->core_type != TP_CASE_AIC && k->core_type != TP_CASE_AIV) {
			free(kt);
			free(seen);
			return tp_set_error(-EINVAL, "callable %s: kernel '%s' (func_id %d) has "
					    "core_type %d (expected TP_CASE_AIC (0) or TP_CASE_AIV (1))",
					    cal->name, k->name ? k->name : "", k->func_id,
					    (int)k->core_type);
		}
		seen[k->func_id] = true;
		kt[k->func_id] = (struct tp_kernel_entry){
			.fn = k->fn,
			.core_type = k->core_type == TP_CASE_AIC ? TP_CORE_AIC : TP_CORE_AIV,
			.name = k->name,
		};
	}
	free(seen);
	*kt_out = kt;
	*nk_out = nk;
	return 0;
}

/* What generate() filled in, checked before anything uses it
 * (taskprof/case.h): at most TP_CASE_MAX_TENSORS tensors and
 * TP_CASE_MAX_SCALARS scalars; each tensor named (no control
 * characters), with a buffer when it has bytes, 1..TP_CASE_MAX_DIMS
 * dimensions, a known dtype, and bytes = the product of its shape times
 * the element size. Return: 0 or -EINVAL with a message
 * naming the case, the tensor and the field. */
static int check_case_args(const char *case_name, const struct tp_case_args *a)
{
	if (a->n_tensors > TP_CASE_MAX_TENSORS || a->n_scalars > TP_CASE_MAX_SCALARS)
		return tp_set_error(-EINVAL, "case %s: generate() gave %u tensors and %u scalars "
				    "(at most %d and %d)", case_name, a->n_tensors, a->n_scalars,
				    TP_CASE_MAX_TENSORS, TP_CASE_MAX_SCALARS);
	for (uint32_t i = 0; i < a->n_tensors; i++) {
		const struct tp_case_tensor *t = &a->tensors[i];
		if (!t->name || !*t->name)
			return tp_set_error(-EINVAL, "case %s: tensor %u has no name", case_name, i);
		for (const char *c = t->name; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				return tp_set_error(-EINVAL, "case %s: tensor %u: a control character "
						    "in its name", case_name, i);
		if (!t->data && t->bytes)
			return tp_set_error(-EINVAL, "case %s: tensor '%s' has no data (%zu bytes)",
					    case_name, t->name, t->bytes);
		if (t->ndims < 1 || t->ndims > TP_CASE_MAX_DIMS)
			return tp_set_error(-EINVAL, "case %s: tensor '%s': ndims %u (expected 1..%d)",
					    case_name, t->name, t->ndims, TP_CASE_MAX_DIMS);
		size_t es = tp_dtype_size(t->dtype);
		if (!es)
			return tp_set_error(-EINVAL, "case %s: tensor '%s': unknown dtype %d",
					    case_name, t->name, (int)t->dtype);
		if (t->bytes % es)
			return tp_set_error(-EINVAL, "case %s: tensor '%s': %zu bytes is not a whole "
					    "number of %zu-byte elements", case_name, t->name, t->bytes,
					    es);
		/* The golden's and the device's buffers are sized from bytes; a
		 * kernel or golden that follows the shape must stay inside. */
		size_t need = es;
		char shp[64];
		int o = 0;
		for (uint32_t d = 0; d < t->ndims; d++) {
			need = t->shape[d] && need > SIZE_MAX / t->shape[d] ? SIZE_MAX
									     : need * t->shape[d];
			if (o >= 0 && (size_t)o < sizeof(shp))
				o += snprintf(shp + o, sizeof(shp) - (size_t)o, "%s%u", d ? "," : "",
					      t->shape[d]);
		}
		if (need != t->bytes)
			return tp_set_error(-EINVAL, "case %s: tensor '%s': %zu bytes, but shape [%s] "
					    "of %s needs %zu", case_name, t->name, t->bytes, shp,
					    tp_dtype_name(t->dtype), need);
	}
	return 0;
}

/* Whether folder @dir holds exactly one entry, the file @path (a path in
 * @dir). */
static bool only_entry_is(const char *dir, const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	DIR *d = opendir(dir);
	if (!d)
		return false;
	int n = 0;
	bool found = false;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		found |= !strcmp(e->d_name, base);
	}
	closedir(d);
	return n == 1 && found;
}

int tp_worker_run(struct tp_worker *w, const struct tp_callable *cal, const char *case_name,
		  struct tp_run_result *res)
{
	memset(res, 0, sizeof(*res));
	if (!w)
		return tp_set_error(-EINVAL, "worker: no worker");
	/* An interrupt during this run reports this run's first error
	 * (cli/interrupt.c), not an earlier run's. */
	tp_log_first_error_reset();
	struct tp_kernel_entry *kt = NULL;
	int nk = 0;
	int rc = check_callable(cal, &kt, &nk);
	if (rc)
		return rc;
	const struct tp_case *cs = tp_callable_case(cal, case_name);
	if (!cs) {
		free(kt);
		return tp_set_error(-ENOENT, "%s has no case '%s'", cal->name,
				    case_name ? case_name : "(default)");
	}
	/* The golden comparison passes an element when |got - expected| <=
	 * atol + rtol * |expected|: a NaN or negative tolerance would pass
	 * every element or none, whatever the kernels computed. */
	if (!cs->generate || !isfinite(cs->rtol) || !isfinite(cs->atol) || cs->rtol < 0 ||
	    cs->atol < 0) {
		free(kt);
		char what[128];
		if (!cs->generate)
			snprintf(what, sizeof(what), "no generate()");
		else
			snprintf(what, sizeof(what), "rtol %g, atol %g (expected finite values >= 0)",
				 cs->rtol, cs->atol);
		return tp_set_error(-EINVAL, "callable %s: case %s: %s (taskprof/case.h)", cal->name,
				    cs->name, what);
	}
	snprintf(res->callable, sizeof(res->callable), "%s", cal->name);
	snprintf(res->case_name, sizeof(res->case_name), "%s", cs->name);
	snprintf(res->platform, sizeof(res->platform), "%s", w->plat->name);
	snprintf(res->runtime, sizeof(res->runtime), "%s", w->runtime);
	/* As each round's engine takes it (set again after the round). */
	res->early_dispatch = w->early_dispatch > 0 ||
			      (w->early_dispatch == 0 && cal->wants_early_dispatch);
	uint32_t pmu_type = 0;
	const bool pmu_on = wk_pmu_decide(w->plat, w->pmu_event_type, w->rounds, &pmu_type);
	/* Retained PMU runs: refused before anything is submitted when two
	 * await publication or a failed write's temp files remain (seed §3.4). */
	if (pmu_on && w->pmu_across && (rc = wk_pmu_admit(&w->pmu_ret))) {
		free(kt);
		return rc;
	}
	/* relaxed: only uniqueness is needed; nothing is published through it. */
	w->run_epoch = atomic_fetch_add_explicit(&g_run_epoch, 1, memory_order_relaxed) + 1;

	struct tp_case_args host, expected;
	void *got[TP_CASE_MAX_TENSORS] = { 0 };
	struct tp_device *dev = NULL;
	bool generated = false, made_dir = false;
	bool round_ran = false; /* a round's device run succeeded: outputs were due */
	memset(&host, 0, sizeof(host));
	memset(&expected, 0, sizeof(expected));
	tp_clear_error();
	tp_progress_phase("generating the inputs of %s %s", cal->name, cs->name);
	struct case_locale loc;
	case_locale_enter(&loc);
	tp_thread_activity_set("the case's generate()");
	rc = cs->generate(cs, &host);
	tp_thread_activity_set(NULL);
	case_locale_leave(&loc);
	if (rc) {
		/* A case that fails without a message still gets a named reason;
		 * the contract is 0 or a negative errno (taskprof/case.h). */
		if (rc > 0)
			rc = tp_set_error(-EINVAL, "case %s: generate() returned %d (expected 0 or a "
					  "negative errno)", cs->name, rc);
		else if (!*tp_last_error())
			tp_set_error(rc, "case %s: generate() failed: %s", cs->name, strerror(-rc));
		goto out;
	}
	generated = true;
	if ((rc = check_case_args(cs->name, &host)))
		goto out;

	/* The golden works on a clone whose OUT tensors are fresh buffers. */
	expected = host;
	size_t arena = 0;
	for (uint32_t i = 0; i < host.n_tensors; i++) {
		const struct tp_case_tensor *t = &host.tensors[i];
		arena += (t->bytes + TP_DEV_MEM_ALIGN - 1) / TP_DEV_MEM_ALIGN * TP_DEV_MEM_ALIGN;
		if (!t->is_out)
			continue;
		expected.tensors[i].data = malloc(t->bytes ? t->bytes : 1);
		got[i] = malloc(t->bytes ? t->bytes : 1);
		if (!expected.tensors[i].data || !got[i]) {
			rc = tp_set_error(-ENOMEM, "worker: out of memory for output '%s'", t->name);
			goto out;
		}
		memcpy(expected.tensors[i].data, t->data, t->bytes);
	}
	tp_clear_error();
	tp_progress_phase("computing the golden of %s %s", cal->name, cs->name);
	if (cs->golden) {
		case_locale_enter(&loc);
		tp_thread_activity_set("the case's golden()");
		rc = cs->golden(cs, &expected);
		tp_thread_activity_set(NULL);
		case_locale_leave(&loc);
	}
	if (rc) {
		if (rc > 0)
			rc = tp_set_error(-EINVAL, "case %s: golden() returned %d (expected 0 or a "
					  "negative errno)", cs->name, rc);
		else if (!*tp_last_error())
			tp_set_error(rc, "case %s: golden() failed: %s", cs->name, strerror(-rc));
		goto out;
	}

	tp_progress_phase("preparing the run of %s %s on %s (device, run folder, profilers)",
			  cal->name, cs->name, w->plat->name);
	/* Tensors larger than the host's memory: refused before the device's
	 * arena is sized for them (reserving 1 TiB of address space could
	 * fail first, under a sanitizer's smaller address space, with a
	 * message about the arena, not the case). */
	if ((rc = fits_host_memory(&host)))
		goto out;
	/* The arena reserves address space only (MAP_NORESERVE); size it for
	 * the case (Case1 holds 1 GiB of KV cache) with room to spare. */
	arena += 64ull << 20;
	if (arena < TP_DEV_MEM_DEFAULT_BYTES)
		arena = TP_DEV_MEM_DEFAULT_BYTES;
	struct tp_device_config dc = {
		.platform = w->plat->name,
		.block_dim = w->block_dim,
		.aicpu_threads = w->aicpu_threads,
		.mem_bytes = arena,
	};
	if ((rc = tp_device_create(&dc, &dev)))
		goto out;

	char label[160];
	snprintf(label, sizeof(label), "%s_%s", cal->name, cs->name);
	if ((rc = make_run_dir(w->output_root, label, res->output_dir, sizeof(res->output_dir),
				 &w->root_made_len)))
		goto out;
	made_dir = true;
	/* Its longest file: the name map (name_map_<label>.json), or a PMU
	 * shard (pmu.csv.e<epoch>.p<pid>.shard<N>.failed.tmp, at most 64
	 * bytes), while written under a temporary name (12 bytes more). A
	 * folder that leaves no room for it fails now, before the case runs,
	 * not when the file is written at the end. */
	const size_t file_max = (strlen(label) + 14 > 64 ? strlen(label) + 14 : 64) + 12;
	if (strlen(res->output_dir) + 1 + file_max > PATH_MAX - 1) {
		rc = tp_set_error(-ENAMETOOLONG, "the run folder %s is %zu bytes long: the paths of "
				  "its files would pass the %d bytes a path may have; choose a "
				  "shorter -o/--output", res->output_dir, strlen(res->output_dir),
				  PATH_MAX - 1);
		goto out;
	}
	struct stat dir_st;
	if (stat(res->output_dir, &dir_st)) {
		rc = tp_set_error(-errno, "%s: %s", res->output_dir, strerror(errno));
		goto out;
	}
	/* Named by an interrupted `taskprof run` (base/tmp_registry.h), whose
	 * result.txt then starts with the run's settings. */
	tp_tmpreg_set_dir(res->output_dir);
	{
		char head[1024];
		settings_text(head, sizeof(head), w, res, pmu_on ? pmu_type : 0u);
		tp_tmpreg_set_unfinished_head(head);
	}

	/* The name map goes with swimlane, dep_gen or PMU (spec §3.4): the
	 * converter and `taskprof pmu` find it beside their inputs. Not for a
	 * PMU that --rounds > 1 turned off: no pmu.csv to name. */
	if ((w->dep_gen || w->swimlane_level || pmu_on) &&
	    (rc = wk_write_name_map(res->output_dir, cal, cs->name, res->name_map,
				    sizeof(res->name_map))))
		goto out;

	res->pass = true;
	for (int r = 0; r < w->rounds; r++) {
		/* dep_gen records the first round only: later rounds stay
		 * uninstrumented (ARCHITECTURE.md §5). */
		if (r == 0 && w->dep_gen && (rc = wk_depgen_open(&w->dg, dev, label)))
			goto out;
		/* Swimlane too records the first round only (seed 002 §3.1). */
		if (r == 0 && w->swimlane_level &&
		    (rc = wk_swimlane_open(&w->swl, w->swimlane_level, w->plat, w->block_dim,
					   w->aicpu_threads, !strcmp(w->runtime, TP_RUNTIME_HBG))))
			goto out;
		/* PMU too (rounds > 1 turned it off, wk_pmu_decide). */
		if (r == 0 && pmu_on &&
		    (rc = (w->pmu_across ? wk_pmu_open_retained : wk_pmu_open)(
			     &w->pmu, dev, w->aicpu_threads, !strcmp(w->runtime, TP_RUNTIME_HBG),
			     pmu_type, w->run_epoch, res->output_dir, &w->pmu_lease)))
			goto out;
		if (w->rounds > 1)
			tp_progress_phase("running %s %s on %s (round %d of %d)", cal->name,
					  cs->name, w->plat->name, r + 1, w->rounds);
		else
			tp_progress_phase("running %s %s on %s", cal->name, cs->name,
					  w->plat->name);
		rc = run_round(w, dev, cal, kt, nk, &host, got, res);
		tp_progress_phase("collecting the profiles and writing the outputs");
		/* A failed round is the error to report: closing the collectors
		 * below may record their own ("no performance data"). */
		char run_err[TP_ERROR_MSG_MAX] = "";
		const bool round_failed = rc != 0;
		round_ran |= !round_failed;
		if (rc && w->rounds > 1) {
			/* Task ids restart each round: say which round failed
			 * (the golden check's message does too). */
			snprintf(run_err, sizeof(run_err), "round %d of %d: %s", r + 1, w->rounds,
				 tp_last_error());
			tp_set_error(rc, "%s", run_err);
		} else if (rc) {
			snprintf(run_err, sizeof(run_err), "%s", tp_last_error());
		}
		/* A run folder removed or replaced while the round ran is the
		 * error to report (the collectors' exports would fail on it,
		 * or recreate it holding part of the outputs): nothing more is
		 * written into it. */
		const int dir_gone = round_failed ? 0 : check_run_dir(res->output_dir, &dir_st);
		if (dir_gone) {
			rc = dir_gone;
			snprintf(run_err, sizeof(run_err), "%s", tp_last_error());
		}
		/* AICores that never answered their exit (a stall: the engine
		 * left its state to them, runtime/engine.c) may still run a
		 * kernel whose hooks write into the collectors' device-side
		 * memory and PMU model: those are then left with the device
		 * (tp_device_close() keeps it), never freed under them. */
		const bool cores_left = tp_device_running(dev);
		if (w->pmu && w->pmu_across && cores_left) {
			TP_WARN("PMU: run_epoch %" PRIu64 " is not retained: AICore threads of the "
				"stalled run still run, so its records stay unpublished",
				w->run_epoch);
			wk_pmu_drop_lease(w->pmu);
			leave_with_device(w->pmu);
			w->pmu = NULL;
			/* Not a proved-complete run: the flush reports it, and the
			 * failure is sticky (seed 000 §3.4). */
			wk_pmu_fail_unretained(&w->pmu_ret, w->run_epoch, res->output_dir,
					       "the run stalled and its AICore threads still "
					       "run, so its device counters were not read and "
					       "its records stay unpublished");
		}
		if (w->pmu && w->pmu_across) {
			/* Retained: the device-side reads now; the background
			 * writer publishes pmu.csv while the next run executes, and
			 * the flush, not this run's return, reports the verdict. */
			wk_pmu_retire(w->pmu, res);
			/* A failed round did not complete its graph: its records
			 * are not proved complete, so the flush raises (seed 000
			 * §3.4), whatever the counters balance to. */
			if (round_failed)
				wk_pmu_retire_failed(w->pmu, run_err);
			wk_pmu_retain(&w->pmu_ret, w->pmu);
			w->pmu = NULL;
		}
		if (w->pmu) {
			int prc = dir_gone ? 0 : wk_pmu_finish(w->pmu, res);
			if (cores_left) {
				wk_pmu_drop_lease(w->pmu);
				leave_with_device(w->pmu);
			} else {
				wk_pmu_close(w->pmu);
			}
			w->pmu = NULL;
			/* A failed pmu.csv write fails the run; a reconcile
			 * mismatch is logged and reported (res->pmu_reconcile_ok). */
			keep_first_error(&rc, run_err, sizeof(run_err), prc, round_failed);
		}
		if (w->swl) {
			struct tp_reconcile sr;
			memset(&sr, 0, sizeof(sr));
			int src = dir_gone ? 0
					   : wk_swimlane_finish(w->swl, res->output_dir,
								res->swimlane_records,
								sizeof(res->swimlane_records), &sr);
			for (int k = 0; k < sr.kinds; k++) {
				res->swimlane_total += sr.pool[k].total;
				res->swimlane_collected += sr.pool[k].collected;
				res->swimlane_dropped += sr.pool[k].dropped;
			}
			if (cores_left)
				leave_with_device(w->swl);
			else
				wk_swimlane_close(w->swl);
			w->swl = NULL;
			/* No data is a warning, not a failed run (spec §1.1). */
			if (src != -ENODATA)
				keep_first_error(&rc, run_err, sizeof(run_err), src, round_failed);
		}
		if (w->dg) {
			struct dg_summary ds;
			/* Written also when the round failed, if the records or
			 * pmu.csv of what ran were, tasks completed (a stall after
			 * them), or tasks were submitted (a stall on the first
			 * ones: what was submitted is what a user needs to see
			 * why). A run that failed before it submitted a task and
			 * wrote nothing leaves no folder. */
			const bool beside = !dir_gone &&
					    (!rc || res->swimlane_records[0] || res->pmu_csv[0] ||
					     res->tasks > 0 || wk_depgen_submitted(w->dg));
			int drc = wk_depgen_close(w->dg, beside ? res->output_dir : NULL, &ds);
			w->dg = NULL;
			keep_first_error(&rc, run_err, sizeof(run_err), drc, round_failed);
			res->dep_gen = !rc;
			res->dep_tasks = ds.tasks;
			res->dep_edges = ds.edges;
			res->dep_pairs = ds.pairs;
		}
		if (rc) {
			if (run_err[0])
				tp_set_error(rc, "%s", run_err);
			goto out;
		}
		res->rounds = r + 1;
		tp_progress_phase("comparing the outputs with the golden");
		struct cmp_state st = { .worst_t = -1 };
		for (uint32_t i = 0; i < host.n_tensors && !rc; i++)
			if (host.tensors[i].is_out)
				rc = compare_tensor(&host.tensors[i], expected.tensors[i].data,
						    got[i], cs->rtol, cs->atol, (int)i, &st);
		if (rc)
			goto out;
		bool pass = st.n_bad == 0;
		/* Keep the worst round's mismatch, or the last round's figures. */
		if (!pass || res->pass) {
			res->n_compared = st.n;
			res->n_bad = st.n_bad > res->n_bad ? st.n_bad : res->n_bad;
			res->max_abs_diff = st.max_abs;
			if (st.worst_t >= 0) {
				const struct tp_case_tensor *t = &host.tensors[st.worst_t];
				char where[96];
				format_index(where, sizeof(where), t, st.worst_i);
				snprintf(res->worst_tensor, sizeof(res->worst_tensor), "%s",
					 t->name ? t->name : "out");
				res->worst_index = st.worst_i;
				res->worst_expected = st.worst_exp;
				res->worst_got = st.worst_got;
				if (pass)
					snprintf(res->golden_line, sizeof(res->golden_line),
						 "golden pass: %zu elements, max |diff| %.3g", st.n,
						 st.max_abs);
				else
					snprintf(res->golden_line, sizeof(res->golden_line),
						 "golden FAIL (round %d): %zu of %zu elements out of "
						 "tolerance (rtol %g, atol %g); worst %s (index %zu): "
						 "expected %.9g, got %.9g",
						 r + 1, st.n_bad, st.n, cs->rtol, cs->atol, where,
						 st.worst_i, st.worst_exp, st.worst_got);
			} else {
				snprintf(res->golden_line, sizeof(res->golden_line),
					 "golden: no output elements");
			}
		}
		res->pass = res->pass && pass;
	}
	if (!(rc = check_run_dir(res->output_dir, &dir_st)))
		rc = write_result(res->output_dir, w, res);

out:
	if (w->dg) { /* a later collector failed to open: no export */
		wk_depgen_close(w->dg, NULL, NULL);
		w->dg = NULL;
	}
	if (w->pmu) { /* a later collector failed to open: no export */
		wk_pmu_close(w->pmu);
		w->pmu = NULL;
	}
	/* The run's error is the one to report: closing a device whose
	 * teardown failed logs its own (secondary) errors and sets
	 * tp_last_error(). */
	char err[TP_ERROR_MSG_MAX] = "";
	if (rc)
		snprintf(err, sizeof(err), "%s", tp_last_error());
	tp_progress_phase("closing the simulated device");
	tp_device_close(dev);
	if (rc)
		tp_set_error(rc, "%s", err);
	for (uint32_t i = 0; i < TP_CASE_MAX_TENSORS; i++) {
		free(got[i]);
		if (expected.tensors[i].is_out && expected.tensors[i].data != host.tensors[i].data)
			free(expected.tensors[i].data);
	}
	if (generated && cs->release) {
		struct case_locale rloc;
		case_locale_enter(&rloc);
		tp_thread_activity_set("the case's release()");
		cs->release(cs, &host);
		tp_thread_activity_set(NULL);
		case_locale_leave(&rloc);
	}
	free(kt);
	/* A run that failed before writing anything leaves no empty folder
	 * behind (rmdir removes only an empty one); the name map written at
	 * its start does not count as output when the device run itself
	 * failed (once it ran, a failed write of an output is reported with
	 * its path, in the folder that stays). A retained PMU run may still
	 * publish pmu.csv into it, so its folder stays. */
	const bool keep = !rc || !made_dir || (pmu_on && w->pmu_across);
	if (!keep && !round_ran && res->name_map[0] &&
	    only_entry_is(res->output_dir, res->name_map) &&
	    unlink(res->name_map) == 0)
		res->name_map[0] = '\0';
	if (!keep && rmdir(res->output_dir) == 0) {
		tp_tmpreg_set_dir(NULL);
		TP_DEBUG("worker: removed the empty run folder %s", tp_shown(res->output_dir));
	} else if (rc && made_dir && access(res->output_dir, F_OK) == 0) {
		/* A failed run that wrote outputs: the folder says so. */
		char err2[TP_ERROR_MSG_MAX];
		snprintf(err2, sizeof(err2), "%s", tp_last_error());
		res->failed_marked = write_failed_result(res->output_dir, w, res,
							 pmu_on ? pmu_type : 0u, err2);
		tp_set_error(rc, "%s", err2);
		res->failed_dir_kept = true;
	}
	if (rc)
		res->pass = false;
	/* result.txt is written (or could not be): the next run has its own. */
	tp_tmpreg_set_unfinished_head(NULL);
	tp_progress_phase(NULL);
	return rc;
}
