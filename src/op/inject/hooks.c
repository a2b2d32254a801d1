/* SPDX-License-Identifier: MIT */
/*
 * hooks.c — the interposed device API of libtaskprof_inject.so (spec/
 * opprof.md §3.1, §3.2, §4.3; issue 6 scope 1).
 *
 * Every hook starts with pthread_once(inj_init): a library constructor may
 * call tp_rt_malloc before ours runs (constructors of the application's
 * own libraries run first), and the once-init resolves the real entry
 * points with dlsym(RTLD_NEXT) — the next definition after this library,
 * libtaskprof.so's. A real symbol that is missing makes its hook return
 * -ENOSYS and log one line.
 *
 * Forward-only cases: no TASKPROF_CONFIG; a process other than
 * TASKPROF_TARGET_PID with target_processes=main (a child of the
 * application, an exec'd helper); a forked child unless target all; a
 * hook entered while the same thread is already inside one (a layered
 * entry point calling another: the per-thread depth counter); and every
 * device call the injector makes itself, which uses the real pointers
 * (and the unhooked tool API of rt_tool.h) directly.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "op/inject/inject.h"
#include "op/registry.h"
#include "platform/device.h"

#define HOOK_API __attribute__((visibility("default")))

struct inj_state g_inj;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static _Thread_local int tl_depth;
static int g_log_fd = -1;
/* Held around g_log_fd's use (a line's write, its reopening, its close
 * at exit): a thread still logging while the process exits (the
 * destructor closes it) never writes to a number the close freed. */
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
/* Identity (device, inode) of taskprof.log behind g_log_fd and of the
 * stderr the process started with: the application may close either and
 * open a file of its own under the same number, which must never receive
 * the injector's lines. */
static dev_t g_log_dev, g_err_dev;
static ino_t g_log_ino, g_err_ino;
static bool g_err_known;
static char g_log_path[4300];
/* The launcher's status pipe (TP_OP_STATUS_FD_ENV): its write end and
 * inode; -1 when there is none (the injector run by hand). */
static int g_status_fd = -1;
static unsigned long long g_status_ino;
/* A write to taskprof.log failed and was reported (relaxed: a lone flag). */
static atomic_bool g_log_failed;
static _Atomic unsigned g_missing_logged; /* bit per hook: logged once */
/* Lock-free atomics: async-signal-safe, and race-free between the
 * replaying thread and a handler running on any thread. relaxed: each is
 * a lone flag, ordering nothing else. */
static atomic_int g_replaying, g_sigint;

/* ---- status pipe --------------------------------------------------------------- */

/* "<fd>:<inode>" from the launcher; a descriptor that is not that pipe
 * (the variable came from somewhere else) is not used. */
static void status_open(void)
{
	const char *v = getenv(TP_OP_STATUS_FD_ENV);
	char *end;
	if (!v || !*v)
		return;
	errno = 0;
	long fd = strtol(v, &end, 10);
	if (errno || *end != ':' || fd < 0 || fd > 1 << 20)
		return;
	unsigned long long ino = strtoull(end + 1, &end, 10);
	struct stat st;
	if (*end || fstat((int)fd, &st) || !S_ISFIFO(st.st_mode) ||
	    (unsigned long long)st.st_ino != ino)
		return;
	g_status_fd = (int)fd;
	g_status_ino = ino;
}

/* TP_OP_STATUS_FILE's path, from TASKPROF_CONFIG as the process started
 * (set_mark_path()). */
static char g_status_file[4400];

/* One line to the launcher: "<pid> <msg>\n" in one write(2) (below
 * PIPE_BUF: atomic, so lines of several processes never mix; the pipe is
 * non-blocking: a full pipe drops the line, the launcher has others).
 * Async-signal-safe but for snprintf; no logging (vlog_line calls it). The
 * descriptor is checked again first: the application may have closed it
 * and opened a file of its own under that number; then the line goes to
 * TP_OP_STATUS_FILE instead (O_APPEND, one write: whole lines there too),
 * so that the failure still makes taskprof op fail. */
static void status_send(const char *msg)
{
	struct stat st;
	if (g_status_fd < 0 && !g_status_ino)
		return; /* run by hand: no launcher to tell */
	int fd = g_status_fd;
	bool own = false;
	if (fd < 0 || fstat(fd, &st) || !S_ISFIFO(st.st_mode) ||
	    (unsigned long long)st.st_ino != g_status_ino) {
		if (!g_status_file[0])
			return;
		fd = open(g_status_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return; /* nowhere left: stderr and the log have it */
		own = true;
	}
	char line[TP_OP_STATUS_LINE_MAX];
	int n = snprintf(line, sizeof(line), "%ld %s\n", (long)getpid(), msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	for (char *p = line; p < line + n - 1; p++)
		if (*p == '\n')
			*p = ' ';
	if (write(fd, line, (size_t)n) < 0) {
		/* Full, or the launcher is gone: nothing more to do. */
	}
	if (own)
		close(fd);
}

/* ---- log ------------------------------------------------------------------- */

/* Whether descriptor @fd is still the file (@dev, @ino). */
static bool fd_is(int fd, dev_t dev, ino_t ino)
{
	struct stat st;
	return fd >= 0 && !fstat(fd, &st) && st.st_dev == dev && st.st_ino == ino;
}

/* The stderr the process started with, if @fd 2 still is it. */
static bool stderr_ours(void)
{
	return g_err_known && fd_is(STDERR_FILENO, g_err_dev, g_err_ino);
}

/* g_log_fd, checked: when the application closed it (and maybe reused the
 * number), taskprof.log is opened again by name; -1 when it cannot be.
 * g_log_mu held. */
static int log_fd(void)
{
	if (g_log_fd < 0 || fd_is(g_log_fd, g_log_dev, g_log_ino))
		return g_log_fd;
	/* Not ours any more: never write (or close) it. */
	g_log_fd = open(g_log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	struct stat st;
	if (g_log_fd >= 0 && !fstat(g_log_fd, &st)) {
		g_log_dev = st.st_dev;
		g_log_ino = st.st_ino;
	}
	return g_log_fd;
}

static void vlog_line(int level, const char *fmt, va_list ap)
{
	char raw[1024], msg[1024], line[1200];
	vsnprintf(raw, sizeof(raw), fmt, ap);
	/* One line per message, whatever the strings it quotes hold (a
	 * newline in a path, in a range name the application pushed). Not
	 * tp_shown(), which allocates: this also runs in a signal handler
	 * (engine.c, args_guard_fault()). */
	tp_escape_controls(msg, sizeof(msg), raw);
	const char *lv = tp_log_level_name(level);
	int n = snprintf(line, sizeof(line), "[%ld] %-5s %s\n", (long)getpid(), lv ? lv : "?",
			 msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	pthread_mutex_lock(&g_log_mu);
	const int lfd = log_fd();
	ssize_t w = lfd >= 0 ? write(lfd, line, (size_t)n) : n;
	const int werr = errno;
	pthread_mutex_unlock(&g_log_mu);
	errno = werr;
	if (w != n && !atomic_exchange_explicit(&g_log_failed, true, memory_order_relaxed)) {
		/* stderr still gets WARN and up; the launcher learns that the
		 * log is incomplete (once: every later line would fail too). */
		char what[TP_OP_STATUS_LINE_MAX - 32];
		snprintf(what, sizeof(what), "%.800s/taskprof.log: write failed: %s", g_inj.cfg.output,
			 w < 0 ? strerror(errno) : "short write (file system full?)");
		status_send(what);
		char err[TP_OP_STATUS_LINE_MAX + 32];
		int m = snprintf(err, sizeof(err), "taskprof op: error: %s\n", what);
		if (m > 0 && stderr_ours() &&
		    write(STDERR_FILENO, err, (size_t)m < sizeof(err) ? (size_t)m :
			  sizeof(err) - 1) < 0) {
			/* Nowhere left to report it. */
		}
	}
	if ((level >= TP_LOG_WARN || lfd < 0) && stderr_ours()) {
		n = snprintf(line, sizeof(line), "taskprof op: %s%s\n",
			     level >= TP_LOG_ERROR ? "error: " :
			     level >= TP_LOG_WARN ? "warning: " : "", msg);
		if (n > 0 && write(STDERR_FILENO, line,
				   (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0) {
			/* Nowhere left to report it. */
		}
	}
}

void inj_log(int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog_line(level, fmt, ap);
	va_end(ap);
}

void inj_fail(const char *fmt, ...)
{
	char msg[TP_OP_STATUS_LINE_MAX - 32];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	inj_log(TP_LOG_ERROR, "%s", msg);
	char shown[sizeof(msg)];
	tp_escape_controls(shown, sizeof(shown), msg);
	status_send(shown);
}

void inj_progress(const char *fmt, ...)
{
	char raw[512], msg[512], line[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	tp_escape_controls(msg, sizeof(msg), raw);
	int n = snprintf(line, sizeof(line), "taskprof op: %s\n", msg);
	if (n > 0 && stderr_ours() &&
	    write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0) {
		/* Progress is cosmetic. */
	}
	inj_log(TP_LOG_INFO, "%s", msg);
}

/* ---- signals --------------------------------------------------------------- */

/* SIGINT: during a replay only note it (the current pass finishes, the
 * launch is written as interrupted, the application's launch runs) and
 * say so; a second SIGINT during the same replay, or a pass that does not
 * end within INJ_SIGINT_GRACE_NS of the first (the reader thread checks,
 * inj_sigint_ns()), ends the process as SIGINT would. A second one within
 * INJ_SIGINT_REPEAT_NS of the first is the same interrupt delivered twice
 * (GNU timeout signals the process group, which holds the application,
 * and taskprof op forwards its own) and is ignored, as the launcher
 * ignores it. Otherwise behave as the default action. Async-signal-safe
 * (write, fstat, clock_gettime). */
#define INJ_SIGINT_REPEAT_NS 1000000000ull
static _Atomic uint64_t g_sigint_ns;
static void on_sigint(int sig)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	const uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	/* relaxed: flags of this handler and the launching thread, which
	 * only look at them; no data is published through them. */
	if (atomic_load_explicit(&g_sigint, memory_order_relaxed) &&
	    now - atomic_load_explicit(&g_sigint_ns, memory_order_relaxed) < INJ_SIGINT_REPEAT_NS)
		return;
	if (atomic_load_explicit(&g_replaying, memory_order_relaxed) &&
	    !atomic_load_explicit(&g_sigint, memory_order_relaxed)) {
		/* relaxed: read by the reader thread's watchdog only, which
		 * is late by a poll at worst. */
		atomic_store_explicit(&g_sigint_ns, now, memory_order_relaxed);
		atomic_store_explicit(&g_sigint, sig, memory_order_relaxed);
		static const char msg_int[] = "taskprof op: interrupt: finishing the pass in "
					      "progress (Ctrl-C again to stop at once)\n";
		static const char msg_other[] = "taskprof op: interrupt: finishing the pass in "
						"progress (the signal again stops at once)\n";
		const char *msg = sig == SIGINT ? msg_int : msg_other;
		size_t len = sig == SIGINT ? sizeof(msg_int) - 1 : sizeof(msg_other) - 1;
		if (stderr_ours() && write(STDERR_FILENO, msg, len) < 0) {
			/* The note is cosmetic. */
		}
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

uint64_t inj_sigint_ns(void)
{
	if (!atomic_load_explicit(&g_sigint, memory_order_relaxed))
		return 0;
	return atomic_load_explicit(&g_sigint_ns, memory_order_relaxed);
}

/* The interrupting signal (SIGINT, SIGTERM or SIGHUP); SIGINT before any. */
static int interrupt_sig(void)
{
	int sig = atomic_load_explicit(&g_sigint, memory_order_relaxed);
	return sig ? sig : SIGINT;
}

const char *inj_interrupt_name(void)
{
	int sig = interrupt_sig();
	return sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGINT";
}

void inj_sigint_now(void)
{
	const int sig = interrupt_sig();
	signal(sig, SIG_DFL);
	/* Other threads may have it blocked: send it to the process. */
	kill(getpid(), sig);
	/* Delivered to some thread by now or soon; never come back. */
	for (;;)
		pause();
}

bool inj_interrupted(void)
{
	return atomic_load_explicit(&g_sigint, memory_order_relaxed) != 0;
}

void inj_set_replaying(bool on)
{
	atomic_store_explicit(&g_replaying, on, memory_order_relaxed);
	if (!on && atomic_load_explicit(&g_sigint, memory_order_relaxed)) {
		/* The interrupted launch is written: now end as the signal
		 * would. */
		const int sig = interrupt_sig();
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

const char *inj_timeout_advice(void)
{
	if (g_inj.cfg.replay_mode == TP_OP_REPLAY_APPLICATION)
		return "raise --pass-timeout (application replay already executes the kernel "
		       "once per run, as the application does: it is slower than the timeout, "
		       "or never ends)";
	return "use --replay-mode application (a kernel that waits for the host or another "
	       "kernel hangs when replayed), or raise --pass-timeout if it is only slow";
}

int inj_device(void)
{
	int d = 0;
	(void)tp_rt_get_device(&d);
	return d;
}

/* ---- init ------------------------------------------------------------------ */

static void *resolve(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void atfork_child(void)
{
	pthread_mutex_init(&g_log_mu, NULL);
	tp_op_registry_atfork_child();
	inj_reader_atfork_child();
	inj_engine_atfork_child();
	atomic_store_explicit(&g_replaying, 0, memory_order_relaxed);
	/* target_processes=main, or application replay (which matches the
	 * main process's launches only, docs/op.md): a child forwards
	 * everything. */
	if (g_inj.active && (!g_inj.cfg.target_all ||
			     g_inj.cfg.replay_mode == TP_OP_REPLAY_APPLICATION))
		g_inj.active = false;
	else if (g_inj.active && g_inj.cfg.replay_mode != TP_OP_REPLAY_APPLICATION)
		snprintf(g_inj.launches_path + strlen(g_inj.base),
			 sizeof(g_inj.launches_path) - strlen(g_inj.base), "/launches_%ld.txt",
			 (long)getpid());
}

/* INJ_FATAL_MARK's path, from TASKPROF_CONFIG as the process started
 * (the application may change its environment later). */
static char g_mark[4400];

static void set_mark_path(const char *cfg)
{
	const char *slash = cfg ? strrchr(cfg, '/') : NULL;
	if (slash && (size_t)(slash - cfg) + sizeof(INJ_FATAL_MARK) + 1 < sizeof(g_mark))
		snprintf(g_mark, sizeof(g_mark), "%.*s/%s", (int)(slash - cfg), cfg,
			 INJ_FATAL_MARK);
	if (slash && (size_t)(slash - cfg) + sizeof(TP_OP_STATUS_FILE) + 1 <
	    sizeof(g_status_file))
		snprintf(g_status_file, sizeof(g_status_file), "%.*s/%s", (int)(slash - cfg),
			 cfg, TP_OP_STATUS_FILE);
}

/* At load, before the application's main() can change its environment. */
__attribute__((constructor)) static void capture_mark_path(void)
{
	set_mark_path(getenv("TASKPROF_CONFIG"));
}

void inj_exit_fatal(const char *why)
{
	char line[700];
	if (g_mark[0]) {
		int fd = open(g_mark, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0) {
			int n = snprintf(line, sizeof(line), "pid %ld: %.600s\n", (long)getpid(),
					 why ? why : "fatal injector error");
			if (n > (int)sizeof(line) - 1)
				n = (int)sizeof(line) - 1;
			(void)!write(fd, line, (size_t)n);
			close(fd);
		}
	}
	_exit(INJ_EXIT_FATAL);
}

static void fatal_config(const char *what)
{
	fprintf(stderr, "taskprof op: injector: %s\n", what);
	inj_exit_fatal(what);
}

static void inj_init(void)
{
	struct inj_real *r = &g_inj.real;
	r->set_device = (int (*)(int))resolve("tp_rt_set_device");
	r->reset_device = (int (*)(int))resolve("tp_rt_reset_device");
	r->malloc = (int (*)(void **, size_t))resolve("tp_rt_malloc");
	r->free = (int (*)(void *))resolve("tp_rt_free");
	r->memcpy = (int (*)(void *, const void *, size_t, enum tp_rt_memcpy_kind))resolve(
		"tp_rt_memcpy");
	r->launch = (int (*)(tp_rt_kernel_fn, uint32_t, void *))resolve("tp_rt_launch");
	r->launch_ex = (int (*)(tp_rt_kernel_fn, uint32_t, void *,
				const struct tp_rt_launch_attr *))resolve("tp_rt_launch_ex");
	r->synchronize = (int (*)(void))resolve("tp_rt_synchronize");
	r->range_push = (int (*)(const char *))resolve("tp_rt_range_push");
	r->range_pop = (int (*)(void))resolve("tp_rt_range_pop");
	tp_op_reg_set_copy(r->memcpy);

	const char *cfg = getenv("TASKPROF_CONFIG");
	if (!cfg || !*cfg)
		return;
	if (!g_mark[0]) /* the constructor did not run first */
		set_mark_path(cfg);
	if (tp_op_config_read(cfg, &g_inj.cfg))
		fatal_config(tp_last_error());
	const struct tp_op_config *c = &g_inj.cfg;
	const char *tp = getenv("TASKPROF_TARGET_PID");
	if (tp && *tp && (!c->target_all || c->replay_mode == TP_OP_REPLAY_APPLICATION) &&
	    atol(tp) != (long)getpid())
		return;
	status_open();
	char path[4300];
	snprintf(path, sizeof(path), "%s/taskprof.log", c->output);
	snprintf(g_log_path, sizeof(g_log_path), "%s", path);
	struct stat est;
	if (!fstat(STDERR_FILENO, &est)) {
		g_err_dev = est.st_dev;
		g_err_ino = est.st_ino;
		g_err_known = true;
	}
	g_log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	struct stat lst;
	if (g_log_fd >= 0 && !fstat(g_log_fd, &lst)) {
		g_log_dev = lst.st_dev;
		g_log_ino = lst.st_ino;
	}
	if (g_log_fd < 0)
		inj_fail("%s: cannot open for writing: %s", path, strerror(errno));
	if (c->replay_mode == TP_OP_REPLAY_APPLICATION) {
		const char *ps = getenv("TASKPROF_PASS");
		char *end = NULL;
		long p = ps ? strtol(ps, &end, 10) : -1;
		if (!ps || !*ps || *end || p < 0 || p >= (long)c->plan.npasses) {
			char msg[200];
			snprintf(msg, sizeof(msg), "TASKPROF_PASS '%s': expected 0..%u in "
				 "application replay", ps ? ps : "(unset)", c->plan.npasses - 1);
			fatal_config(msg);
		}
		g_inj.app_pass = (int)p;
		snprintf(g_inj.base, sizeof(g_inj.base), "%s/raw/run_%ld", c->output, p);
		snprintf(g_inj.launches_path, sizeof(g_inj.launches_path), "%s/launches.txt",
			 g_inj.base);
	} else {
		snprintf(g_inj.base, sizeof(g_inj.base), "%s", c->output);
		snprintf(g_inj.launches_path, sizeof(g_inj.launches_path), "%s/launches_%ld.txt",
			 g_inj.base, (long)getpid());
	}
	const char *nr = getenv("TASKPROF_DEBUG_NO_RESTORE");
	g_inj.no_restore = nr && !strcmp(nr, "1");
	if (inj_engine_init())
		fatal_config(tp_last_error());
	inj_engine_resume();
	pthread_atfork(NULL, NULL, atfork_child);
	/* SIGTERM and SIGHUP as SIGINT: taskprof op passes each of them on
	 * to the application and reports what was collected, so a pass in
	 * progress finishes and the launch is written first. */
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue; /* ignored, or the application's own handler */
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigint;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		sigaction(sigs[i], &sa, NULL);
	}
	g_inj.active = true;
	inj_log(TP_LOG_INFO, "injector active: %s replay, %u passes, warm-up %u%s",
		tp_op_replay_mode_name(c->replay_mode), c->plan.npasses, c->warm_up,
		g_inj.no_restore ? ", TASKPROF_DEBUG_NO_RESTORE=1 (restores skipped)" : "");
}

static inline void init(void)
{
	pthread_once(&g_once, inj_init);
}

/* ---- exit -------------------------------------------------------------------- */

/* The process is exiting: main() returned or exit() was called (set
 * before the exit stops the channel reader; inj_exiting()). */
static atomic_bool g_exiting;

extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso);
extern void *__dso_handle;

/* Runs at exit() for the main thread (glibc calls thread-local destructors
 * first), before other libraries' destructors may tear the runtime down. */
static void main_thread_exit(void *arg)
{
	(void)arg;
	/* relaxed: a lone flag, read by launching threads after their
	 * reader wait failed (the join orders nothing they need). */
	atomic_store_explicit(&g_exiting, true, memory_order_relaxed);
	inj_reader_stop(-1);
}

bool inj_exiting(void)
{
	return atomic_load_explicit(&g_exiting, memory_order_relaxed);
}

__attribute__((constructor)) static void inj_ctor(void)
{
	init();
	if (g_inj.active)
		(void)__cxa_thread_atexit_impl(main_thread_exit, NULL, &__dso_handle);
}

__attribute__((destructor)) static void inj_dtor(void)
{
	/* relaxed: see main_thread_exit(). */
	atomic_store_explicit(&g_exiting, true, memory_order_relaxed);
	if (g_inj.active)
		inj_engine_exit();
	inj_reader_stop(-1);
	/* Closed only if it is still taskprof.log: never the application's
	 * file that took its number. */
	pthread_mutex_lock(&g_log_mu);
	if (g_log_fd >= 0 && fd_is(g_log_fd, g_log_dev, g_log_ino))
		close(g_log_fd);
	g_log_fd = -1;
	pthread_mutex_unlock(&g_log_mu);
}

/* ---- hooks ------------------------------------------------------------------- */

enum { H_SET, H_RESET, H_MALLOC, H_FREE, H_MEMCPY, H_LAUNCH, H_LAUNCH_EX, H_SYNC, H_PUSH, H_POP };

static int missing(int bit, const char *name)
{
	unsigned m = 1u << bit;
	/* relaxed: only decides whether this line was logged before. */
	if (!(atomic_fetch_or_explicit(&g_missing_logged, m, memory_order_relaxed) & m))
		inj_log(TP_LOG_ERROR, "%s: the real function was not found (dlsym RTLD_NEXT): "
			"is libtaskprof.so loaded?", name);
	return tp_set_error(-ENOSYS, "%s: not available (the runtime does not export it)", name);
}

/* A kernel (AICore) or scheduler (AICPU) thread of the simulator: the
 * same test the runtime uses. Kernels may call tp_rt_malloc / tp_rt_free;
 * during a replay the window holds the gate exclusive while the replaying
 * thread waits for that very kernel, so such a call must never wait on
 * the gate (or touch the registry, whose lock a snapshot holds across
 * device copies): it goes straight to the real function, and its
 * allocation is not tracked (not snapshotted, not restored). */
static inline bool on_device_thread(void)
{
	return tp_aicore_current() != NULL || tp_aicpu_current() != NULL;
}

/* Every hook's first step: the once-init, and in a profiled process the
 * note that the application reached the interposer (a host thread's
 * call: a device thread's comes after a launch). */
static inline void hook_enter(void)
{
	init();
	if (g_inj.active && !on_device_thread())
		inj_engine_api_called();
}

/* Forward straight through: inactive, nested inside another hook, or
 * called from a device thread. */
static inline bool passthrough(void)
{
	return !g_inj.active || tl_depth > 0 || on_device_thread();
}

HOOK_API int tp_rt_set_device(int device_id)
{
	hook_enter();
	if (!g_inj.real.set_device)
		return missing(H_SET, "tp_rt_set_device");
	if (passthrough())
		return g_inj.real.set_device(device_id);
	tl_depth++;
	int t = tp_op_gate_enter();
	int before = inj_device();
	int rc = g_inj.real.set_device(device_id);
	/* A device switch stops and joins the old device's reader; the next
	 * profiled launch starts one for its device. Inside the gate: no
	 * replay (of another thread) is using the reader now. */
	if (!rc && before != device_id)
		inj_reader_stop(before);
	tp_op_gate_exit(t);
	tl_depth--;
	return rc;
}

HOOK_API int tp_rt_reset_device(int device_id)
{
	hook_enter();
	if (!g_inj.real.reset_device)
		return missing(H_RESET, "tp_rt_reset_device");
	if (passthrough())
		return g_inj.real.reset_device(device_id);
	/* Range replay: the range's launches run at the pop, on allocations
	 * a reset would free now (as for a D2H copy: refused, not faked). */
	if (inj_range_open())
		return tp_set_error(-EBUSY, "tp_rt_reset_device(%d) inside range \"%s\": "
				    "unsupported in range (`taskprof op --replay-mode range` "
				    "runs the range's launches at tp_rt_range_pop, on memory the "
				    "reset would free)", device_id, inj_range_name());
	tl_depth++;
	int t = tp_op_gate_enter();
	/* Inside the gate, as for a device switch. */
	inj_reader_stop(device_id);
	int rc = g_inj.real.reset_device(device_id);
	/* The reset freed every allocation of the device. */
	if (!rc)
		tp_op_reg_drop_device(device_id);
	tp_op_gate_exit(t);
	tl_depth--;
	return rc;
}

/* Allocations kernels made in the application's own executions. */
static _Atomic uint64_t g_kernel_own_allocs;

uint64_t inj_kernel_own_allocs(void)
{
	/* relaxed: see tp_rt_malloc. */
	return atomic_load_explicit(&g_kernel_own_allocs, memory_order_relaxed);
}

HOOK_API int tp_rt_malloc(void **dev_ptr, size_t size)
{
	hook_enter();
	if (!g_inj.real.malloc)
		return missing(H_MALLOC, "tp_rt_malloc");
	if (g_inj.active && inj_kreplay_call()) {
		/* A kernel of a replayed execution (a device thread, which
		 * passthrough() lets by): freed when the execution ends. */
		int rc = g_inj.real.malloc(dev_ptr, size);
		if (!rc)
			inj_kreplay_alloc(*dev_ptr);
		return rc;
	}
	if (g_inj.active && on_device_thread()) {
		/* A kernel of the application's own execution allocates:
		 * registered like a host allocation (not through the gate: see
		 * tp_rt_free), so a later launch that uses the block has it in
		 * its snapshot, and a replayed execution's free of it is
		 * skipped like any older block's. */
		int rc = g_inj.real.malloc(dev_ptr, size);
		if (!rc) {
			/* relaxed: a count the range replay compares around a
			 * pass on the launching thread, which the launch orders. */
			atomic_fetch_add_explicit(&g_kernel_own_allocs, 1, memory_order_relaxed);
			if (tp_op_reg_add(*dev_ptr, size, inj_device(), NULL))
				inj_log(TP_LOG_WARN, "kernel allocation %p (%zu bytes) not "
					"registered: %s", *dev_ptr, size, tp_last_error());
		}
		return rc;
	}
	if (passthrough())
		return g_inj.real.malloc(dev_ptr, size);
	tl_depth++;
	int t = tp_op_gate_enter();
	int rc = g_inj.real.malloc(dev_ptr, size);
	/* Post-hook, still inside the gate: a window that opens next sees it. */
	if (!rc && tp_op_reg_add(*dev_ptr, size, inj_device(), NULL))
		inj_log(TP_LOG_WARN, "allocation %p (%zu bytes) not registered: %s", *dev_ptr,
			size, tp_last_error());
	tp_op_gate_exit(t);
	tl_depth--;
	return rc;
}

HOOK_API int tp_rt_free(void *dev_ptr)
{
	hook_enter();
	if (!g_inj.real.free)
		return missing(H_FREE, "tp_rt_free");
	if (dev_ptr && g_inj.active && inj_kreplay_call()) {
		/* A kernel of a replayed execution frees: its own block of
		 * that execution now; any other, never (the next restore
		 * needs it): the application's own execution frees it. */
		int k = inj_kreplay_free(dev_ptr);
		return k == 1 ? g_inj.real.free(dev_ptr) : k;
	}
	if (dev_ptr && g_inj.active && on_device_thread()) {
		/* A kernel of the application's own execution frees a block
		 * the registry holds: the entry goes first, as for the host's
		 * free below, so no later snapshot reads the freed block or
		 * restores it. Not through the gate: this launch's thread
		 * waits for its kernel inside it, and a replay of another
		 * thread waiting for it would wait for us. */
		struct tp_op_alloc a;
		if (tp_op_reg_lookup(dev_ptr, &a) == 0 && a.base == (uintptr_t)dev_ptr)
			(void)tp_op_reg_remove(dev_ptr);
		return g_inj.real.free(dev_ptr);
	}
	if (passthrough())
		return g_inj.real.free(dev_ptr);
	tl_depth++;
	int rc;
	if (inj_range_open()) {
		rc = inj_range_free(dev_ptr);
	} else {
		int t = tp_op_gate_enter();
		/* A block another thread's open range freed is a double free
		 * (that free stands; its replay still uses the block). */
		rc = dev_ptr ? tp_op_deferred_refuse(dev_ptr, inj_device()) : 0;
		if (!rc) {
			/* Pre-hook: the entry and its snapshot go first, so the
			 * address can never be restored once it is reused. */
			if (dev_ptr)
				(void)tp_op_reg_remove(dev_ptr);
			rc = g_inj.real.free(dev_ptr);
		}
		tp_op_gate_exit(t);
	}
	tl_depth--;
	return rc;
}

HOOK_API int tp_rt_memcpy(void *dst, const void *src, size_t size, enum tp_rt_memcpy_kind kind)
{
	hook_enter();
	if (!g_inj.real.memcpy)
		return missing(H_MEMCPY, "tp_rt_memcpy");
	if (passthrough())
		return g_inj.real.memcpy(dst, src, size, kind);
	tl_depth++;
	int rc;
	if (inj_range_open()) {
		rc = inj_range_memcpy(dst, src, size, kind);
	} else {
		int t = tp_op_gate_enter();
		rc = g_inj.real.memcpy(dst, src, size, kind);
		tp_op_gate_exit(t);
	}
	tl_depth--;
	return rc;
}

static int launch_common(tp_rt_kernel_fn kernel, uint32_t block_dim, void *args,
			 const struct tp_rt_launch_attr *attr, bool ex)
{
	struct inj_launch l = { .kernel = kernel, .block_dim = block_dim, .args = args,
				.attr = attr, .ex = ex, .device = inj_device() };
	inj_launch_name(&l);
	tl_depth++;
	int rc = inj_range_open() ? inj_range_launch(&l) : inj_engine_launch(&l);
	tl_depth--;
	return rc;
}

HOOK_API int tp_rt_launch(tp_rt_kernel_fn kernel, uint32_t block_dim, void *args)
{
	hook_enter();
	if (!g_inj.real.launch)
		return missing(H_LAUNCH, "tp_rt_launch");
	if (passthrough())
		return g_inj.real.launch(kernel, block_dim, args);
	return launch_common(kernel, block_dim, args, NULL, false);
}

HOOK_API int tp_rt_launch_ex(tp_rt_kernel_fn kernel, uint32_t block_dim, void *args,
			     const struct tp_rt_launch_attr *attr)
{
	hook_enter();
	if (!g_inj.real.launch_ex)
		return missing(H_LAUNCH_EX, "tp_rt_launch_ex");
	if (passthrough())
		return g_inj.real.launch_ex(kernel, block_dim, args, attr);
	return launch_common(kernel, block_dim, args, attr, true);
}

HOOK_API int tp_rt_synchronize(void)
{
	hook_enter();
	if (!g_inj.real.synchronize)
		return missing(H_SYNC, "tp_rt_synchronize");
	if (passthrough())
		return g_inj.real.synchronize();
	/* Inside a range nothing has run yet: nothing to wait for. */
	if (inj_range_open())
		return 0;
	return g_inj.real.synchronize();
}

static bool range_mode(void)
{
	return g_inj.cfg.replay_mode == TP_OP_REPLAY_RANGE && g_inj.cfg.range_markers;
}

/* Range markers in kernel and application replay: the name of the range
 * open on this thread (NULL: none). Launches run as usual; the launch
 * selection passes only those made inside a range (spec §4.6). */
static _Thread_local const char *tl_marker;
static _Thread_local char tl_marker_buf[INJ_RANGE_NAME_BUF]; /* inj_range_name_copy() */

const char *inj_marker_range(void)
{
	if (!g_inj.cfg.range_markers)
		return NULL;
	if (range_mode())
		return inj_range_open() ? inj_range_name() : NULL;
	return tl_marker;
}

HOOK_API int tp_rt_range_push(const char *name)
{
	hook_enter();
	if (!g_inj.real.range_push)
		return missing(H_PUSH, "tp_rt_range_push");
	if (passthrough() || !g_inj.cfg.range_markers)
		return g_inj.real.range_push(name);
	tl_depth++;
	int rc;
	if (range_mode()) {
		rc = inj_range_push(name);
	} else {
		/* The runtime checks the pairing; only a push it accepted
		 * opens a range. */
		rc = g_inj.real.range_push(name);
		if (!rc)
			tl_marker = inj_range_name_copy(tl_marker_buf, name);
	}
	tl_depth--;
	return rc;
}

HOOK_API int tp_rt_range_pop(void)
{
	hook_enter();
	if (!g_inj.real.range_pop)
		return missing(H_POP, "tp_rt_range_pop");
	if (passthrough() || !g_inj.cfg.range_markers)
		return g_inj.real.range_pop();
	if (!range_mode()) {
		int rc = g_inj.real.range_pop();
		if (!rc)
			tl_marker = NULL;
		return rc;
	}
	if (!inj_range_open())
		return g_inj.real.range_pop();
	tl_depth++;
	int rc = inj_range_pop();
	tl_depth--;
	return rc;
}
