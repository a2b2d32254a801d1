/* SPDX-License-Identifier: MIT */
/*
 * bench_swimlane.c — what L2 swimlane collection costs per task (seed 002
 * §6): a wide graph of 100,000 independent empty-kernel tasks (AIC and
 * AIV alternating, in scopes of 1024) on a2a3sim and a5sim, run with
 * swimlane off and at level 4 in interleaved pairs (30 by default).
 * Prints
 *
 *   BENCH swimlane <platform> device_path_ns=... records=...
 *   BENCH swimlane <platform> off_ms=... level4_ms=... per_task_ns=...
 *         per_task_ns_q1=... per_task_ns_q3=... per_task_ns_best=...
 *         per_task_ns_p10=...
 *         pairs=... off_cpu_ms=... level4_cpu_ms=... per_task_cpu_ns=...
 *         per_task_run_cpu_ns=... off_csw=... level4_csw=...
 *         target_ns=150 tasks=... subtasks=... aicpu_slice_us=...
 *   BENCH swimlane <platform> reconcile runs=... total=... collected=...
 *         dropped=... aicpu_slice_us=... balanced|UNBALANCED
 *
 * per_task_ns (the figure of the 150 ns target, issue 4) is the median
 * over the pairs of (level-4 wall - off wall) / tasks, with its quartiles
 * beside it; a pair runs back to back (every other pair level 4 first),
 * so a slowdown of the whole machine mostly cancels. per_task_ns_best = (best level-4 wall - best off wall)
 * / tasks. The walls are the device's (the engine run: device threads
 * started, every task done, threads joined). per_task_cpu_ns is the
 * median pair difference of the process CPU time (every thread: AICPU,
 * AICore, host drains / collectors / replenish, and the calling thread's
 * pool setup and export of the records file); per_task_run_cpu_ns leaves
 * the calling thread out: the CPU of the threads the run started.
 * off_ms, level4_ms, *_cpu_ms and the context switches of a run
 * (off_csw / level4_csw) are medians. On the shared 2-core machine the
 * simulated device's 28 threads spin and yield, so walls are noisy and
 * CPU times grow with the wall: run it when the machine is quiet.
 * device_path_ns is the CPU time one thread spends in the device half per
 * task (dispatch + AICore record + FIN commit + two scheduler phase
 * records + one orch record, level 4) while the host collector drains
 * concurrently (device_path_wall_ns adds the waits at the transport's
 * gates when the host falls behind). The reconcile line sums every
 * level-4 run and says UNBALANCED if any lost a record.
 * Options (-h lists them; a bad value is an error, exit 2):
 * -n TASKS (default 100000), -r PAIRS (default 30, at most 64),
 * -p PLATFORM (default both), -D (device path only), -l LEVEL (default 4;
 * the "level4" figures are then that level's; -l 0 runs both halves of a
 * pair with swimlane off, an A/A run whose per_task_ns spread is the
 * noise floor of the figure on the machine as it is), -b BLOCK_DIM and
 * -t AICPU_THREADS (default: the platform's), -S SLICE_US (only that
 * AICPU slice, below), -v (also one line per pair: "BENCH swimlane
 * <platform> pair=I off_ms=... level4_ms=... off_csw=... level4_csw=...
 * aicpu_slice_us=..."), -F (each run in a child process forked for it:
 * the memory a run touches is new to its process, as in a `taskprof run`
 * of its own, instead of pages the bench's earlier runs freed; the
 * summary line then ends with "fresh_process=1").
 * Each platform's pairs run twice: under the host's default scheduling
 * (aicpu_slice_us=0: the headline figure) and with the AICPU threads on a
 * 100 µs slice (TASKPROF_SIM_AICPU_SLICE_US=100, platform/device.c), which
 * keeps the simulated device out of its slow state (docs/swimlane.md
 * "Cost"). Every line ends with the slice it ran under (asked for: a
 * kernel before 6.12 ignores it). The AICPU threads are placed as in any
 * run (TASKPROF_SIM_AICPU_PIN, platform/device.c: on one CPU of two by
 * default; TASKPROF_SIM_AICPU_PIN=off in the environment measures the
 * host's placement).
 * TASKPROF_LOG_LEVEL=debug
 * adds the pools' close lines (host thread sleeps and kicks) on stderr.
 * The runs write under a folder in $TMPDIR (else /tmp), removed at the end
 * and on SIGINT / SIGTERM / SIGHUP. Exit status: 0; 1 when a run failed or
 * a reconcile line says UNBALANCED (a record lost or dropped); 2 for bad
 * usage, -b / -t beyond a platform's limits included (checked before
 * anything runs).
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <ftw.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "collectors/swimlane/swl_host.h"
#include "base/log.h"
#include "runtime/orch.h"
#include "taskprof/worker.h"

static int wide_orch(struct tp_orch *o, const struct tp_case_args *args)
{
	const uint64_t n = args->scalars[0];
	int rc = 0;
	for (uint64_t i = 0; i < n && !rc; i += 1024) {
		if ((rc = tp_scope_begin(o)))
			break;
		for (uint64_t k = i; k < i + 1024 && k < n && !rc; k++) {
			struct tp_task_args a;
			tp_args_init(&a);
			rc = k & 1 ? tp_submit_aiv(o, 1, &a, NULL) : tp_submit_aic(o, 0, &a, NULL);
		}
		int erc = tp_scope_end(o);
		rc = rc ? rc : erc;
	}
	return rc;
}

static uint64_t g_tasks = 100000;
static int g_level = 4;
static bool g_device_only;
static bool g_verbose;
static bool g_fresh;        /* -F: each run in a child process of its own */
static int g_block_dim;     /* 0: the platform's */
static int g_aicpu_threads; /* 0: the platform's */

static int wide_gen(const struct tp_case *c, struct tp_case_args *a)
{
	(void)c;
	memset(a, 0, sizeof(*a));
	a->n_scalars = 1;
	a->scalars[0] = g_tasks;
	return 0;
}

static const struct tp_case wide_cases[] = { { .name = "Wide", .generate = wide_gen } };
static const struct tp_case_kernel wide_kernels[] = {
	{ .func_id = 0, .name = "nop_c", .core_type = TP_CASE_AIC },
	{ .func_id = 1, .name = "nop_v", .core_type = TP_CASE_AIV },
};
static const struct tp_callable wide_callable = {
	.name = "bench_wide", .orch = wide_orch, .kernels = wide_kernels, .n_kernels = 2,
	.cases = wide_cases, .n_cases = 1, .default_case = "Wide",
};

static double cpu_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The device half alone: one thread plays dispatch, AICore, FIN and the
 * scheduler / orchestrator writers for g_tasks tasks over 24 cores. */
static int device_path(const char *plat)
{
	const bool shadow = !strcmp(plat, "a5sim");
	int8_t owner[24];
	for (int i = 0; i < 24; i++)
		owner[i] = (int8_t)((i < 8 ? i : (i - 8) / 2) % 3);
	struct swl_config cfg = {
		.level = 4, .shadow = shadow, .clock_freq_hz = tp_sys_cnt_freq(),
		.max_threads = shadow ? 7 : 4, .num_cores = 24, .block_dim = 8, .num_threads = 4,
		.orch_thread = 3, .core_owner = owner,
	};
	struct swl_collector *c = swl_open(&cfg);
	if (!c || swl_start(c)) {
		fprintf(stderr, "bench_swimlane: %s\n", tp_last_error());
		swl_close(c);
		return 1;
	}
	struct swl_dev *d = swl_dev(c);
	uint32_t reg[24] = { 0 };
	const int16_t z[3] = { 0, 0, 0 };
	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	uint64_t t0 = tp_now_ns();
	for (uint64_t i = 0; i < g_tasks; i++) {
		int core = (int)(i % 24);
		uint32_t tok = ++reg[core];
		uint64_t ts = tp_sys_cnt();
		swl_dev_on_orch_submit(d, i, (uint32_t)i, ts, ts + 1);
		swl_dev_on_dispatch(d, owner[core], core, tok, ts);
		swl_dev_on_sched_phase(d, owner[core], SWL_SCHED_DISPATCH, ts, ts + 1, i, 1, 1, 0, z,
				       z);
		swl_dev_on_aicore_receive(d, core, tok);
		swl_dev_on_aicore_task(d, core, i, tok, ts + 2, ts + 3, ts + 4);
		swl_dev_on_fin(d, owner[core], core, tok, ts, ts + 5);
		swl_dev_on_sched_phase(d, owner[core], SWL_SCHED_COMPLETE, ts + 5, ts + 6, i, 1, 0, 0,
				       z, z);
	}
	uint64_t t1 = tp_now_ns();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	double cpu_ns = (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
	for (int t = 0; t < 3; t++)
		swl_dev_flush_thread(d, t);
	swl_dev_flush_orch(d);
	swl_stop(c);
	struct tp_reconcile rec;
	int rrc = swl_reconcile(c, &rec);
	uint64_t total = 0;
	for (int k = 0; k < rec.kinds; k++)
		total += rec.pool[k].collected;
	printf("BENCH swimlane %s device_path_ns=%.1f device_path_wall_ns=%.1f target_ns=150 "
	       "records=%llu reconcile=%s\n",
	       plat, cpu_ns / (double)g_tasks, (double)(t1 - t0) / (double)g_tasks,
	       (unsigned long long)total, rrc ? "UNBALANCED" : "balanced");
	swl_close(c);
	return rrc ? 1 : 0;
}

/* *cpu: the process CPU time of the run; *thr: that of every thread but
 * the calling one, i.e. of the threads the run started (AICPU, AICore,
 * the transport's host threads) without the pool setup and the export of
 * the records file, which run on the calling thread. */
/* Context switches of the process so far (every thread, live or joined). */
static double csw(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_nvcsw + (double)ru.ru_nivcsw;
}

static int run_here(const char *plat, int level, const char *root, struct tp_run_result *r,
		    double *cpu, double *thr, double *sw)
{
	struct tp_worker_config cfg = {
		.platform = plat, .output_root = root, .l2_swimlane_level = level,
		.block_dim = g_block_dim, .aicpu_threads = g_aicpu_threads,
	};
	struct tp_worker *w = tp_worker_open(&cfg);
	if (!w) {
		fprintf(stderr, "bench_swimlane: %s: %s\n", plat, tp_last_error());
		return -1;
	}
	double c0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID), m0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
	double s0 = csw();
	int rc = tp_worker_run(w, &wide_callable, NULL, r);
	*sw = csw() - s0;
	*cpu = cpu_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	*thr = *cpu - (cpu_s(CLOCK_THREAD_CPUTIME_ID) - m0);
	tp_worker_close(w);
	if (rc)
		fprintf(stderr, "bench_swimlane: %s level %d: %s\n", plat, level, tp_last_error());
	return rc;
}

/* What a forked run sends back to the bench (-F). */
struct fresh_reply {
	int rc;
	struct tp_run_result r;
	double cpu, thr, sw;
};

/* Read exactly @n bytes of @fd (retrying short reads); 0 or -1. */
static int read_all(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n) {
		ssize_t k = read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* One run as in run_here(), in the calling process (default) or, with -F,
 * in a child forked for it: every page the run touches is then new to its
 * process, as in a `taskprof run` of its own, instead of pages the
 * bench's previous runs freed and the allocator hands out again. The
 * child sends its figures back through a pipe. The bench has no other
 * thread at this point (every run joins its own). Return as run_here(). */
static int run_once(const char *plat, int level, const char *root, struct tp_run_result *r,
		    double *cpu, double *thr, double *sw)
{
	if (!g_fresh)
		return run_here(plat, level, root, r, cpu, thr, sw);
	int fd[2];
	if (pipe(fd)) {
		fprintf(stderr, "bench_swimlane: pipe: %s\n", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench_swimlane: fork: %s\n", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		close(fd[0]);
		static struct fresh_reply out;
		out.rc = run_here(plat, level, root, &out.r, &out.cpu, &out.thr, &out.sw);
		const char *p = (const char *)&out;
		size_t n = sizeof(out);
		while (n) {
			ssize_t k = write(fd[1], p, n);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				_exit(1);
			p += k;
			n -= (size_t)k;
		}
		_exit(0);
	}
	close(fd[1]);
	static struct fresh_reply in;
	const int got = read_all(fd[0], &in, sizeof(in));
	close(fd[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bench_swimlane: %s level %d: the run's child process %s\n", plat,
			level, WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "failed");
		return -1;
	}
	*r = in.r;
	*cpu = in.cpu;
	*thr = in.thr;
	*sw = in.sw;
	return in.rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Quantile q (0..1) of n values (sorted in place), linear between ranks. */
static double quantile(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	double pos = q * (double)(n - 1);
	int lo = (int)pos;
	if (lo >= n - 1)
		return v[n - 1];
	return v[lo] + (v[lo + 1] - v[lo]) * (pos - (double)lo);
}

#define MAX_REPEATS 64

static char g_root[4096];

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)f;
	return (type == FTW_DP ? rmdir(path) : unlink(path)) ? -1 : 0;
}

/* Remove a run's folder (@dir, under g_root) as soon as the run is done
 * (after its walls were read): the bench holds one run's files at a time
 * instead of every run's (a level-4 records file is about 60 MB: 120
 * level-4 runs by default), and they leave the page cache before the
 * kernel writes them to disk. Return: 0, or -1 with errno. */
static int remove_run(const char *dir)
{
	size_t n = strlen(g_root);
	if (!dir[0] || strncmp(dir, g_root, n) || dir[n] != '/')
		return 0; /* not one of ours: the run wrote nothing */
	return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* `repeats` interleaved pairs (off, then level g_level) on one platform.
 * Per task: the median and quartiles of the pairs' wall differences (a
 * pair runs back to back, so machine-wide slowdowns mostly cancel), and
 * the difference of the best walls; the other figures are medians. */
static int bench(const char *plat, int repeats, const char *root, unsigned slice_us)
{
	/* Read by tp_device_open(), i.e. by each run's tp_worker_open(). */
	char sv[16];
	snprintf(sv, sizeof(sv), "%u", slice_us);
	setenv("TASKPROF_SIM_AICPU_SLICE_US", sv, 1);
	static struct tp_run_result r;
	double wall[2][MAX_REPEATS] = { { 0 } }, cpu[2][MAX_REPEATS] = { { 0 } };
	double thr[2][MAX_REPEATS] = { { 0 } }, sw[2][MAX_REPEATS] = { { 0 } };
	double diff[MAX_REPEATS] = { 0 }, dcpu[MAX_REPEATS] = { 0 }, dthr[MAX_REPEATS] = { 0 };
	uint64_t subtasks = 0, total = 0, collected = 0, dropped = 0;
	int unbalanced = 0;
	for (int i = 0; i < repeats; i++) {
		/* Every other pair runs the profiled run first: a machine that
		 * speeds up or slows down during a pair favours neither side
		 * over the pairs (on this 2-CPU host a run's speed drifts with
		 * the cost of moving a cache line between the CPUs). */
		for (int k = 0; k < 2; k++) {
			const int on = i & 1 ? 1 - k : k;
			if (run_once(plat, on ? g_level : 0, root, &r, &cpu[on][i], &thr[on][i],
				     &sw[on][i]))
				return 1;
			wall[on][i] = r.device_wall_s;
			if (remove_run(r.output_dir) != 0) {
				fprintf(stderr, "bench_swimlane: removing %s: %s\n", r.output_dir,
					strerror(errno));
				return 1;
			}
			if (on) {
				subtasks = r.subtasks;
				total += r.swimlane_total;
				collected += r.swimlane_collected;
				dropped += r.swimlane_dropped;
				if (r.swimlane_collected + r.swimlane_dropped != r.swimlane_total)
					unbalanced++;
			}
		}
		diff[i] = (wall[1][i] - wall[0][i]) * 1e9 / (double)g_tasks;
		if (g_verbose)
			printf("BENCH swimlane %s pair=%d off_ms=%.3f level4_ms=%.3f off_csw=%.0f "
			       "level4_csw=%.0f aicpu_slice_us=%u\n", plat, i, wall[0][i] * 1e3,
			       wall[1][i] * 1e3, sw[0][i], sw[1][i], slice_us);
		dcpu[i] = (cpu[1][i] - cpu[0][i]) * 1e9 / (double)g_tasks;
		dthr[i] = (thr[1][i] - thr[0][i]) * 1e9 / (double)g_tasks;
	}
	const int n = repeats;
	double best[2];
	for (int on = 0; on < 2; on++) {
		best[on] = wall[on][0];
		for (int i = 1; i < n; i++)
			best[on] = wall[on][i] < best[on] ? wall[on][i] : best[on];
	}
	double q1 = quantile(diff, n, 0.25), med = quantile(diff, n, 0.5);
	double q3 = quantile(diff, n, 0.75);
	/* Unpaired from here: quantile() sorts each array in place. */
	double p10 = (quantile(wall[1], n, 0.1) - quantile(wall[0], n, 0.1)) * 1e9 / (double)g_tasks;
	printf("BENCH swimlane %s off_ms=%.3f level4_ms=%.3f per_task_ns=%.1f per_task_ns_q1=%.1f "
	       "per_task_ns_q3=%.1f per_task_ns_best=%.1f per_task_ns_p10=%.1f pairs=%d "
	       "off_cpu_ms=%.3f "
	       "level4_cpu_ms=%.3f per_task_cpu_ns=%.1f per_task_run_cpu_ns=%.1f "
	       "off_csw=%.0f level4_csw=%.0f target_ns=150 tasks=%llu subtasks=%llu "
	       "aicpu_slice_us=%u%s\n",
	       plat, quantile(wall[0], n, 0.5) * 1e3, quantile(wall[1], n, 0.5) * 1e3, med, q1, q3,
	       (best[1] - best[0]) * 1e9 / (double)g_tasks, p10, n, quantile(cpu[0], n, 0.5) * 1e3,
	       quantile(cpu[1], n, 0.5) * 1e3, quantile(dcpu, n, 0.5), quantile(dthr, n, 0.5),
	       quantile(sw[0], n, 0.5), quantile(sw[1], n, 0.5), (unsigned long long)g_tasks,
	       (unsigned long long)subtasks, slice_us, g_fresh ? " fresh_process=1" : "");
	printf("BENCH swimlane %s reconcile runs=%d total=%llu collected=%llu dropped=%llu "
	       "aicpu_slice_us=%u %s\n",
	       plat, n, (unsigned long long)total, (unsigned long long)collected,
	       (unsigned long long)dropped, slice_us,
	       !unbalanced && !dropped ? "balanced" : "UNBALANCED");
	return unbalanced || dropped ? 1 : 0;
}

/* The pairs under the host's default scheduling, then (unless -S gave one
 * slice) with the AICPU threads on a 100 µs slice. */
static int g_slice = -1; /* -S: only this slice (µs); -1: 0 then 100 */

static int bench_slices(const char *plat, int repeats, const char *root)
{
	/* bench() sets TASKPROF_SIM_AICPU_SLICE_US for its runs; the caller's
	 * value comes back afterwards. */
	const char *env = getenv("TASKPROF_SIM_AICPU_SLICE_US");
	char *saved = env ? strdup(env) : NULL;
	int rc = bench(plat, repeats, root, g_slice >= 0 ? (unsigned)g_slice : 0);
	if (!rc && g_slice < 0)
		rc = bench(plat, repeats, root, 100);
	if (saved)
		setenv("TASKPROF_SIM_AICPU_SLICE_US", saved, 1);
	else
		unsetenv("TASKPROF_SIM_AICPU_SLICE_US");
	free(saved);
	return rc;
}

/* The runs' output folder g_root (above; under $TMPDIR, else /tmp) and
 * the process that made it: an interrupt removes it (a level-4 run leaves
 * about 60 MB there until remove_run()), in that process only (a -F child
 * inherits the handler). */
static pid_t g_main_pid;

/* Remove g_root with rm -rf in a child: only fork, execve and waitpid,
 * which are async-signal-safe (the interrupt handler calls it too).
 * Return: 0 when rm succeeded, -1 otherwise. */
static int remove_root(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		char *const argv[] = { "rm", "-rf", "--", g_root, NULL };
		char *const envp[] = { NULL };
		execve("/bin/rm", argv, envp);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* SIGINT / SIGTERM / SIGHUP: remove g_root, then end by the signal. */
static void on_interrupt(int sig)
{
	if (getpid() == g_main_pid && g_root[0])
		(void)remove_root();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench_swimlane [options]\n"
		"  -n TASKS     tasks per run, 1..10000000 (default 100000)\n"
		"  -r PAIRS     off / level pairs per slice, 1..%d (default 30)\n"
		"  -p PLATFORM  a2a3sim or a5sim (default: both)\n"
		"  -l LEVEL     swimlane level of the profiled runs, 0..4 (default 4;\n"
		"               0: both runs off, the noise floor of per_task_ns)\n"
		"  -b BLOCK_DIM clusters, 0 (the platform's) or 1..36\n"
		"  -t THREADS   AICPU threads, 0 (the platform's) or 2..7\n"
		"  -S SLICE_US  only this AICPU slice: 0 (host default) or 100..100000\n"
		"               (default: both 0 and 100)\n"
		"  -D           the device half only (device_path_ns)\n"
		"  -F           each run in a fresh child process (cold memory, as a\n"
		"               taskprof run of its own)\n"
		"  -v           one line per pair too\n"
		"  -h, --help   this text\n",
		MAX_REPEATS);
}

/* @s as an integer in [@lo, @hi], else a message naming -@opt and exit 2. */
static long int_arg(int opt, const char *s, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	/* strtol skips leading blanks; a value must not start with one */
	if (errno || end == s || *end || isspace((unsigned char)*s) || v < lo || v > hi) {
		fprintf(stderr, "bench_swimlane: -%c %s: expected an integer from %ld to %ld\n", opt,
			s, lo, hi);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	int repeats = 30, c;
	const char *plat = NULL;
	static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
						 {NULL, 0, NULL, 0}};
	while ((c = getopt_long(argc, argv, "n:r:p:l:b:t:S:DFvh", longopts, NULL)) != -1) {
		if (c == 'n')
			g_tasks = (uint64_t)int_arg(c, optarg, 1, 10000000);
		else if (c == 'r')
			repeats = (int)int_arg(c, optarg, 1, MAX_REPEATS);
		else if (c == 'p') {
			plat = optarg;
			if (strcmp(plat, "a2a3sim") && strcmp(plat, "a5sim")) {
				fprintf(stderr, "bench_swimlane: -p %s: expected a2a3sim or a5sim\n",
					plat);
				return 2;
			}
		} else if (c == 'l')
			g_level = (int)int_arg(c, optarg, 0, 4);
		else if (c == 'b')
			g_block_dim = (int)int_arg(c, optarg, 0, 36);
		else if (c == 't') {
			g_aicpu_threads = (int)int_arg(c, optarg, 0, 7);
			if (g_aicpu_threads == 1) {
				fprintf(stderr, "bench_swimlane: -t 1: expected 0 (the platform's) "
					"or 2..7 (one orchestrator and at least one scheduler)\n");
				return 2;
			}
		}
		else if (c == 'S') {
			long v = int_arg(c, optarg, 0, 100000);
			if (v != 0 && v < 100) {
				fprintf(stderr, "bench_swimlane: -S %s: expected 0 or 100..100000 "
					"(µs)\n", optarg);
				return 2;
			}
			g_slice = (int)v;
		} else if (c == 'D')
			g_device_only = true;
		else if (c == 'F')
			g_fresh = true;
		else if (c == 'v')
			g_verbose = true;
		else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bench_swimlane: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (g_fresh && g_device_only) {
		fprintf(stderr, "bench_swimlane: -F forks the off / level runs, and -D runs none: "
			"use one of them\n");
		return 2;
	}
	/* -b / -t against each platform's limits, before anything runs. */
	for (int k = 0; k < 2; k++) {
		const char *pn = k ? "a5sim" : "a2a3sim";
		if (plat && strcmp(plat, pn))
			continue;
		struct tp_worker_config cfg = {
			.platform = pn, .output_root = "/nonexistent", .l2_swimlane_level = g_level,
			.block_dim = g_block_dim, .aicpu_threads = g_aicpu_threads,
		};
		struct tp_worker *w = tp_worker_open(&cfg);
		if (!w) {
			fprintf(stderr, "bench_swimlane: -b %d -t %d: %s\n", g_block_dim,
				g_aicpu_threads, tp_last_error());
			return 2;
		}
		tp_worker_close(w);
	}
	/* Reconcile lines are TIMING level; keep the bench output to BENCH
	 * lines unless TASKPROF_LOG_LEVEL asks for more (e.g. "debug": the
	 * pool-close line counts the host threads' sleeps and kicks). */
	if (!getenv("TASKPROF_LOG_LEVEL"))
		tp_log_set_threshold(TP_LOG_WARN);
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (snprintf(g_root, sizeof(g_root), "%s/taskprof_bench_swimlane_XXXXXX", tmp) >=
	    (int)sizeof(g_root)) {
		fprintf(stderr, "bench_swimlane: TMPDIR %s: too long\n", tmp);
		return 1;
	}
	char *root = g_root;
	if (!mkdtemp(root)) {
		fprintf(stderr, "bench_swimlane: mkdtemp %s: %s\n", root, strerror(errno));
		return 1;
	}
	g_main_pid = getpid();
	struct sigaction sa = { .sa_handler = on_interrupt };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	int rc = 0;
	if (!plat || !strcmp(plat, "a2a3sim"))
		rc |= device_path("a2a3sim") | (g_device_only ? 0 : bench_slices("a2a3sim", repeats, root));
	if (!plat || !strcmp(plat, "a5sim"))
		rc |= device_path("a5sim") | (g_device_only ? 0 : bench_slices("a5sim", repeats, root));
	if (remove_root() != 0) {
		fprintf(stderr, "bench_swimlane: could not remove %s\n", root);
		rc = 1;
	}
	return rc;
}
