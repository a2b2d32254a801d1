/* SPDX-License-Identifier: MIT */
/*
 * op_exec.c — run the application once under libtaskprof_inject.so
 * (spec/opprof.md §4.1; docs/op-internals.md "Environment between launcher
 * and injector").
 *
 * The environment of the child is built before fork(): after fork() the
 * child only fills in its own pid, restores signal state and execs, so
 * nothing in it allocates or takes a lock.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "cli/op_launch.h"
#include "op/config.h"
#include "op/procstat.h"

#if defined(__SANITIZE_ADDRESS__)
#define OP_ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OP_ASAN_BUILD 1
#endif
#endif
#ifndef OP_ASAN_BUILD
#define OP_ASAN_BUILD 0
#endif

extern char **environ;

int op_pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int op_inject_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return tp_set_error(-errno, "cannot find the taskprof binary (/proc/self/exe): %s",
				    strerror(errno));
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	if ((size_t)snprintf(buf, len, "%s/libtaskprof_inject.so", exe) >= len)
		return tp_set_error(-ENAMETOOLONG, "injector path too long: %s/...", exe);
	if (access(buf, R_OK) != 0) {
		int e = errno;
		return tp_set_error(-e, "injector library %s: %s (it is built beside taskprof: "
					"ninja -C <build> taskprof_inject)",
				    buf, strerror(e));
	}
	return 0;
}

/* The process that runs now, for the signal handler (0 when none). */
static volatile sig_atomic_t g_child;
/* SIGINT, SIGTERM and SIGHUP received while the application runs. */
static volatile sig_atomic_t g_interrupts;
/* The last of them (wait_leftovers(): the exit status it makes). */
static volatile sig_atomic_t g_last_sig;
/* The signal to pass on that arrived before the child was started (0 when
 * none): sent to it as soon as it exists (op_exec_app()). */
static volatile sig_atomic_t g_early;

/*
 * SIGINT typed at the terminal reaches the whole foreground process group,
 * the application included (si_code SI_KERNEL); one sent to taskprof alone
 * (kill(2): SI_USER, SI_QUEUE) is passed on. The first one lets the
 * injector finish the pass in progress. SIGTERM and SIGHUP (the terminal
 * closed; the kernel sends that one to the foreground group itself,
 * SI_KERNEL) are passed on the same way. At the second of any of the three
 * the application is killed, whatever it does with them; but a repeat of
 * the first one, not from the terminal, within REPEAT_WINDOW_NS of it is
 * the same request sent twice (GNU timeout signals taskprof and then its
 * process group; `taskprof run` ignores the same repeat, cli/interrupt.c)
 * and is ignored.
 *
 * A stopped application (SIGSTOP, a debugger, a cgroup freezer) would keep
 * the signal pending for good, and taskprof would wait for it for good:
 * it is sent SIGCONT after the signal, as a shell's `kill %job` does.
 * The three signals are blocked while this runs (sa_mask), so the count
 * is never updated by two handlers at once.
 */
#define REPEAT_WINDOW_NS 1000000000LL
/* When the first of the three came (CLOCK_MONOTONIC, ns). Only this
 * handler touches it, and never two at once (sa_mask). */
static volatile int64_t g_first_ns;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	pid_t child = (pid_t)g_child;
	int saved = errno;
	bool from_tty = si && si->si_code == SI_KERNEL;
	struct timespec ts; /* clock_gettime: async-signal-safe (POSIX.1-2008) */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	const int64_t now = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	if (g_interrupts == 1 && sig == g_last_sig && !from_tty &&
	    now - g_first_ns < REPEAT_WINDOW_NS) {
		errno = saved;
		return;
	}
	if (g_interrupts == 0)
		g_first_ns = now;
	g_interrupts = g_interrupts + 1;
	g_last_sig = sig;
	int pass = 0;
	if (g_interrupts >= 2)
		pass = SIGKILL;
	else if (!from_tty)
		pass = sig;
	if (child > 0) {
		if (pass)
			kill(child, pass);
		/* Also after a signal from the terminal: it reached a stopped
		 * application too, and stays pending there. SIGKILL needs
		 * none. */
		if (pass != SIGKILL)
			kill(child, SIGCONT);
	} else if (pass && g_early != SIGKILL) {
		g_early = pass;
	}
	errno = saved;
}

/* Whether process @pid runs with TASKPROF_CONFIG=@config (one of this
 * session's: the application and the processes it started inherit it;
 * anything else taskprof itself starts, such as a sanitizer's symbolizer,
 * does not). Reads /proc/PID/environ, the environment it started with.
 * A process whose environment cannot be read (it exited after it was
 * listed: a zombie reads empty, a reaped one is gone) counts as in the
 * session: its children may have just been handed to taskprof, and the
 * caller looks again after reaping it. */
static bool in_session(pid_t pid, const char *config)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	static const char key[] = "TASKPROF_CONFIG=";
	const size_t want = sizeof(key) - 1 + strlen(config);
	char buf[8192], ent[PATH_MAX + sizeof(key)];
	size_t el = 0;
	bool found = false, over = false, any = false;
	ssize_t n;
	while (!found && (n = read(fd, buf, sizeof(buf))) > 0) {
		any = true;
		for (ssize_t i = 0; i < n && !found; i++) {
			if (buf[i]) {
				if (el < sizeof(ent) - 1)
					ent[el++] = buf[i];
				else
					over = true;
				continue;
			}
			found = !over && el == want && !memcmp(ent, key, sizeof(key) - 1) &&
				!memcmp(ent + sizeof(key) - 1, config, want - (sizeof(key) - 1));
			el = 0;
			over = false;
		}
	}
	close(fd);
	return found || !any;
}

/* The living children of this process (every thread's, as the subreaper
 * got them) that run in this session; up to @max of their pids in @pids.
 * Return: how many. */
static int session_children(const char *config, pid_t *pids, int max)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[300];
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", de->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		long pid;
		while (fscanf(f, "%ld", &pid) == 1)
			if (in_session((pid_t)pid, config)) {
				if (n < max)
					pids[n] = (pid_t)pid;
				n++;
			}
		fclose(f);
	}
	closedir(d);
	return n;
}

/*
 * --target-processes all, after the application (@app) ended: wait for
 * the processes of this session (TASKPROF_CONFIG=@config) it left running,
 * which the subreaper made taskprof's children, so that their launches
 * are profiled before the report. Says so once, with their pids. A SIGINT
 * / SIGTERM / SIGHUP (on_signal counts it; g_child is 0, so nothing is
 * forwarded) lets them go on for up to LEFTOVER_GRACE_NS more, the time a
 * pass in progress gets after a Ctrl-C (a terminal's Ctrl-C reached them
 * too), then the wait stops; a second one stops it at once. A process
 * found stopped is named once per stop. Other children
 * that exit meanwhile are reaped (no zombies are left). Return: the
 * signal that stopped the wait, 0 when every process ended.
 */
#define LEFTOVER_GRACE_NS 4000000000ull
static bool is_stopped(pid_t pid);
static int wait_leftovers(pid_t app, const char *config)
{
	const int seen_at = g_interrupts;
	bool said = false, said_stop = false;
	uint64_t stop_at = 0;
	pid_t stopped_said = 0; /* the stopped process last named, 0: none */
	for (;;) {
		int st;
		while (waitpid(-1, &st, WNOHANG) > 0)
			;
		pid_t left[8];
		int n = session_children(config, left, 8);
		if (!n)
			return said_stop ? g_last_sig : 0;
		const int got = g_interrupts - seen_at;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		const uint64_t t = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
		if (got && !said_stop) {
			stop_at = t + LEFTOVER_GRACE_NS;
			said_stop = true;
			fprintf(stderr, "taskprof op: interrupted: giving the application's remaining "
					"process%s up to %llu s to write what %s measured (again to "
					"stop at once)\n", n == 1 ? "" : "es",
				LEFTOVER_GRACE_NS / 1000000000ull, n == 1 ? "it" : "they");
		}
		if (got >= 2 || (said_stop && t >= stop_at)) {
			fprintf(stderr, "taskprof op: stopped waiting for the application's %d "
					"remaining process%s; %s launches after this are not in "
					"the report\n", n, n == 1 ? "" : "es", n == 1 ? "its" : "their");
			return g_last_sig;
		}
		if (!said) {
			char list[160] = "";
			size_t l = 0;
			for (int i = 0; i < n && i < 8 && l < sizeof(list); i++)
				l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%d",
						      i ? ", " : "", (int)left[i]);
			fprintf(stderr, "taskprof op: the application (pid %d) ended; waiting for "
					"the %d process%s it left running (pid %s%s; "
					"--target-processes all profiles them; Ctrl-C stops the "
					"wait)\n", (int)app, n, n == 1 ? "" : "es", list,
				n > 8 ? ", ..." : "");
			said = true;
		}
		/* A stopped process (SIGSTOP, a debugger) ends only once it is
		 * continued: say so, once per process and stop, lest the wait be
		 * taken for a hang. */
		pid_t stopped = 0;
		for (int i = 0; i < n && i < 8 && !stopped; i++)
			if (is_stopped(left[i]))
				stopped = left[i];
		if (stopped && stopped != stopped_said)
			fprintf(stderr, "taskprof op: process %d, which the application left running, "
					"is stopped; the wait goes on until it continues (kill -CONT "
					"%d) or Ctrl-C stops the wait\n", (int)stopped, (int)stopped);
		stopped_said = stopped;
		/* Look again in 50 ms (a blocking waitpid would not see the
		 * interrupt count change, nor a process that is not ours to
		 * wait for). */
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* Whether the first 256 bytes of @path hold no NUL byte and do not start
 * as an ELF file (a text file: a shell script without #!). In the forked
 * child: no allocation. */
static bool looks_text(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char b[256];
	ssize_t n = read(fd, b, sizeof(b));
	close(fd);
	return n >= 0 && !memchr(b, 0, (size_t)n) && !(n >= 4 && !memcmp(b, "\x7f" "ELF", 4));
}

/* execve(@path); a text file the kernel does not run (ENOEXEC: no #!)
 * runs with /bin/sh, as execvp() does; a binary one fails with ENOEXEC
 * (execvp() would hand it to /bin/sh too, which prints "not found" and
 * exits 127: a corrupt executable would look like an application that
 * failed). Returns only on failure, errno set. */
static void exec_file(const char *path, char *const argv[], char *const envp[])
{
	execve(path, argv, envp);
	if (errno != ENOEXEC || !looks_text(path))
		return;
	size_t argc = 0;
	while (argv[argc])
		argc++;
	if (argc > 4096) {
		errno = E2BIG;
		return;
	}
	char *sh_argv[argc + 2];
	sh_argv[0] = (char *)"sh";
	sh_argv[1] = (char *)path;
	for (size_t i = 1; i <= argc; i++)
		sh_argv[i + 1] = argv[i];
	execve("/bin/sh", sh_argv, envp);
	errno = ENOEXEC;
}

int op_path_each(const char *file, int (*fn)(const char *cand, void *arg), void *arg)
{
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;;) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		char cand[PATH_MAX];
		int w = snprintf(cand, sizeof(cand), "%.*s%s%s", (int)n, p, n ? "/" : "", file);
		if (w > 0 && (size_t)w < sizeof(cand)) {
			int r = fn(cand, arg);
			if (r)
				return r;
		}
		if (!c)
			return 0;
		p = c + 1;
	}
}

struct exec_try {
	char *const *argv, *const *envp;
	int saved; /* errno to report when no candidate ran */
};

/* op_path_each() step of exec_app(): 1 (stop) when @cand was found but
 * failed with an error other than EACCES. */
static int exec_one(const char *cand, void *arg)
{
	struct exec_try *t = arg;
	exec_file(cand, t->argv, t->envp);
	if (errno == EACCES)
		t->saved = EACCES;
	else if (errno != ENOENT && errno != ENOTDIR) {
		t->saved = errno;
		return 1;
	}
	return 0;
}

/* execvpe() without its /bin/sh fallback for binary files (exec_file()):
 * @argv[0] as it is when it has a '/', else each candidate of $PATH
 * (op_path_each()) until one runs. Returns only on failure, errno set
 * (EACCES when a file was found but none could run, as execvp()). */
static void exec_app(char *const argv[], char *const envp[])
{
	const char *file = argv[0];
	if (!*file) {
		errno = ENOENT;
		return;
	}
	if (strchr(file, '/')) {
		exec_file(file, argv, envp);
		return;
	}
	struct exec_try t = { argv, envp, ENOENT };
	(void)op_path_each(file, exec_one, &t);
	errno = t.saved;
}

/* A "NAME=value" string on the heap, or NULL. */
static char *env_entry(const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 2;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s=%s", name, value);
	return s;
}

/* Whether environ entry @e is variable @name. */
static bool env_is(const char *e, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(e, name, n) && e[n] == '=';
}

/* Room for "TASKPROF_TARGET_PID=" and a pid, filled in by the child. */
#define PID_VAR "TASKPROF_TARGET_PID="
static char g_pid_entry[sizeof(PID_VAR) + 24];

/*
 * The child's environment: environ without the variables we set, then
 * ours; @status is the value of TP_OP_STATUS_FD_ENV ("<fd>:<inode>").
 * Return: a NULL-terminated array (entries of environ are shared, the
 * others on the heap: free_env()), or NULL (out of memory).
 */
static char **build_env(const struct op_exec *x, const char *status, char ***owned,
			size_t *n_owned)
{
	static const char *const ours[] = { "LD_PRELOAD", "TASKPROF_CONFIG",
					    "TASKPROF_PASS", "TASKPROF_TARGET_PID",
					    "ASAN_OPTIONS", TP_OP_STATUS_FD_ENV };
	size_t n_env = 0;
	while (environ && environ[n_env])
		n_env++;
	char **env = calloc(n_env + 8, sizeof(*env));
	char **mine = calloc(8, sizeof(*mine));
	if (!env || !mine) {
		free(env);
		free(mine);
		return NULL;
	}
	size_t k = 0, m = 0;
	const char *old_preload = getenv("LD_PRELOAD");
	const char *old_asan = getenv("ASAN_OPTIONS");
	for (size_t i = 0; i < n_env; i++) {
		bool skip = false;
		for (size_t j = 0; j < sizeof(ours) / sizeof(ours[0]); j++)
			if (env_is(environ[i], ours[j]))
				skip = true;
		if (!skip)
			env[k++] = environ[i];
	}
	/* The injector first, so its tp_rt_* come before libtaskprof.so's;
	 * ld.so splits LD_PRELOAD at blanks and colons. */
	char *pre;
	if (old_preload && *old_preload) {
		size_t n = strlen(x->inject_lib) + strlen(old_preload) + 2;
		char *v = malloc(n);
		if (v)
			snprintf(v, n, "%s %s", x->inject_lib, old_preload);
		pre = v ? env_entry("LD_PRELOAD", v) : NULL;
		free(v);
	} else {
		pre = env_entry("LD_PRELOAD", x->inject_lib);
	}
	mine[m++] = pre;
	mine[m++] = env_entry("TASKPROF_CONFIG", x->config_path);
	mine[m++] = env_entry(TP_OP_STATUS_FD_ENV, status);
	if (x->pass >= 0) {
		char num[16];
		snprintf(num, sizeof(num), "%d", x->pass);
		mine[m++] = env_entry("TASKPROF_PASS", num);
	}
	/* An ASan application refuses to start when its runtime is not the
	 * first library loaded; the preloaded injector is. */
	if (OP_ASAN_BUILD) {
		const char *add = "verify_asan_link_order=0";
		size_t n = (old_asan ? strlen(old_asan) : 0) + strlen(add) + 2;
		char *v = malloc(n);
		if (v)
			snprintf(v, n, "%s%s%s", old_asan && *old_asan ? old_asan : "",
				 old_asan && *old_asan ? ":" : "", add);
		mine[m++] = v ? env_entry("ASAN_OPTIONS", v) : NULL;
		free(v);
	} else if (old_asan) {
		mine[m++] = env_entry("ASAN_OPTIONS", old_asan);
	}
	for (size_t i = 0; i < m; i++) {
		if (!mine[i]) {
			for (size_t j = 0; j < m; j++)
				free(mine[j]);
			free(mine);
			free(env);
			return NULL;
		}
		env[k++] = mine[i];
	}
	memcpy(g_pid_entry, PID_VAR, sizeof(PID_VAR));
	env[k++] = g_pid_entry;
	env[k] = NULL;
	*owned = mine;
	*n_owned = m;
	return env;
}

/* In the child: PID_VAR + getpid() in g_pid_entry, without stdio. */
static void fill_pid(void)
{
	char digits[24];
	int n = 0;
	for (unsigned long p = (unsigned long)getpid(); p || !n; p /= 10)
		digits[n++] = (char)('0' + p % 10);
	char *o = g_pid_entry + sizeof(PID_VAR) - 1;
	while (n)
		*o++ = digits[--n];
	*o = 0;
}

/*
 * Whether SIGPIPE / SIGXFSZ were ignored when taskprof started. main()
 * ignores SIGPIPE, and SIGXFSZ is ignored for taskprof's own writes (see
 * cmd_op()), so that a closed reader or `ulimit -f` makes a write fail with
 * a message instead of killing taskprof; the application must not inherit
 * that (an ignored signal stays ignored across exec) unless it was given
 * to taskprof so. A constructor runs before main() changes anything.
 */
static bool g_pipe_ign_at_start, g_xfsz_ign_at_start;

static bool ignored_now(int sig)
{
	struct sigaction old;
	return sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
	       old.sa_handler == SIG_IGN;
}

__attribute__((constructor)) static void record_start_signals(void)
{
	g_pipe_ign_at_start = ignored_now(SIGPIPE);
	g_xfsz_ign_at_start = ignored_now(SIGXFSZ);
}

/* pipe2(), with "ulimit -n" named when taskprof has no descriptor left. */
static int make_pipe(int fds[2], int flags, const char *what)
{
	if (pipe2(fds, flags) == 0)
		return 0;
	int e = errno;
	struct rlimit rl;
	if (e == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		return tp_set_error(-e, "cannot create %s: %s (the limit of open files, "
				    "ulimit -n, is %llu: too few for the application and the "
				    "profiler)", what, strerror(e), (unsigned long long)rl.rlim_cur);
	return tp_set_error(-e, "cannot create %s: %s", what, strerror(e));
}

/* After the application ended: the injector's lines on the status pipe
 * (@fd, non-blocking; descendants of the application may still hold the
 * write end, so the end of the data is EAGAIN, not only EOF). */
static void read_status(int fd, struct op_exec_result *res)
{
	char buf[4096], line[sizeof(res->failure)];
	size_t used = 0;
	bool skipping = false; /* inside a line too long for @line */
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (used < sizeof(line) - 1)
					line[used++] = buf[i];
				else
					skipping = true;
				continue;
			}
			line[used] = 0;
			if (used || skipping) {
				if (!res->n_failures)
					snprintf(res->failure, sizeof(res->failure), "%s", line);
				res->n_failures++;
			}
			used = 0;
			skipping = false;
		}
	}
	if (used) { /* a last line without its newline: still a failure */
		line[used] = 0;
		if (!res->n_failures)
			snprintf(res->failure, sizeof(res->failure), "%s", line);
		res->n_failures++;
	}
}

/* TP_OP_STATUS_FILE (the status pipe's stand-in) beside @config_path
 * into @buf; false when the path does not fit. */
static bool status_file_path(const char *config_path, char *buf, size_t len)
{
	const char *slash = strrchr(config_path, '/');
	int dir = slash ? (int)(slash - config_path) : 1;
	int n = snprintf(buf, len, "%.*s/%s", dir, slash ? config_path : ".", TP_OP_STATUS_FILE);
	return n > 0 && (size_t)n < len;
}

/* The bytes TP_OP_STATUS_FILE holds now (0 when it does not exist): the
 * lines a run adds come after them. */
static off_t status_file_size(const char *path)
{
	struct stat st;
	return path[0] && !stat(path, &st) ? st.st_size : 0;
}

/* The lines the injector added to TP_OP_STATUS_FILE (@path) after byte
 * @from, when the application had closed the status pipe: failures, as
 * the pipe's lines. */
static void read_status_file(const char *path, off_t from, struct op_exec_result *res)
{
	if (!path[0])
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (lseek(fd, from, SEEK_SET) == from)
		read_status(fd, res);
	close(fd);
}

/* Whether process @pid is stopped now (state T, or t: a tracer stopped
 * it), from /proc/<pid>/stat. */
static bool is_stopped(pid_t pid)
{
	char buf[1024];
	if (tp_proc_stat_read(pid, buf, sizeof(buf)))
		return false;
	const char *st = tp_proc_stat_field(buf, TP_PROC_STAT_STATE);
	return st && (*st == 'T' || *st == 't');
}

/*
 * The application stopped (waitpid WUNTRACED): say so once per stop, so a
 * taskprof that waits for it is not taken for a hang. The injector's
 * --pass-timeout runs inside the application, stopped too; nothing here
 * ends a stopped application (a debugger may hold it for as long as it
 * likes). A stop that is already over (Ctrl-Z stopped taskprof with it,
 * and `fg` continued both) is not reported.
 */
static void say_stopped(pid_t pid, int sig)
{
	if (!is_stopped(pid))
		return;
	const char *abbrev = sigabbrev_np(sig);
	char name[32];
	if (abbrev)
		snprintf(name, sizeof(name), "SIG%s", abbrev);
	else
		snprintf(name, sizeof(name), "signal %d", sig);
	fprintf(stderr, "taskprof op: the application (pid %d) is stopped by %s; waiting "
			"until it continues (SIGCONT): a stop does not count in --pass-timeout; "
			"SIGINT, SIGTERM or SIGHUP to taskprof op is passed on with a SIGCONT\n",
		(int)pid, name);
	fflush(stderr);
}

int op_exec_app(const struct op_exec *x, struct op_exec_result *res)
{
	struct op_exec_result dummy;
	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	/* The status pipe first: its number goes into the environment.
	 * Non-blocking: the injector never waits for the launcher, and the
	 * launcher reads what is there once the application has ended. */
	int sfd[2];
	int rc = make_pipe(sfd, O_CLOEXEC | O_NONBLOCK, "the injector's status pipe");
	if (rc)
		return rc;
	struct stat sst;
	char status[64];
	if (fstat(sfd[1], &sst) != 0) {
		rc = tp_set_error(-errno, "status pipe: fstat: %s", strerror(errno));
		close(sfd[0]);
		close(sfd[1]);
		return rc;
	}
	snprintf(status, sizeof(status), "%d:%llu", sfd[1], (unsigned long long)sst.st_ino);
	char status_file[PATH_MAX + 64] = "";
	if (!status_file_path(x->config_path, status_file, sizeof(status_file)))
		status_file[0] = '\0';
	const off_t status_file_at = status_file_size(status_file);
	char **owned = NULL;
	size_t n_owned = 0;
	char **env = build_env(x, status, &owned, &n_owned);
	if (!env) {
		close(sfd[0]);
		close(sfd[1]);
		return tp_set_error(-ENOMEM, "out of memory building the environment of '%s'",
				    x->argv[0]);
	}
	int pfd[2];
	if ((rc = make_pipe(pfd, O_CLOEXEC, "a pipe to start the application"))) {
		close(sfd[1]);
		goto out;
	}
	struct sigaction sa = { 0 }, old_int, old_term, old_hup;
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: waitpid returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	g_interrupts = 0;
	g_early = 0;
	/* A signal ignored at entry stays ignored (nohup ignores SIGHUP; a
	 * background job of a non-interactive shell, or `trap '' INT`, SIGINT):
	 * neither forwarded nor counted as an interrupt, as `taskprof run`
	 * does (cli/interrupt.h). */
	sigaction(SIGINT, NULL, &old_int);
	sigaction(SIGTERM, NULL, &old_term);
	sigaction(SIGHUP, NULL, &old_hup);
	if (old_int.sa_handler != SIG_IGN || (old_int.sa_flags & SA_SIGINFO))
		sigaction(SIGINT, &sa, NULL);
	if (old_term.sa_handler != SIG_IGN || (old_term.sa_flags & SA_SIGINFO))
		sigaction(SIGTERM, &sa, NULL);
	if (old_hup.sa_handler != SIG_IGN || (old_hup.sa_flags & SA_SIGINFO))
		sigaction(SIGHUP, &sa, NULL);
	fflush(stdout);
	fflush(stderr);
	/* SIGINT / SIGTERM / SIGHUP blocked from before fork() until g_child
	 * is set: one arriving in between (the child may exec and the
	 * application signal readiness before the parent runs again) waits,
	 * then finds the child to pass it on to. The child unblocks them
	 * before exec. */
	/* --target-processes all: the application's processes that outlive
	 * it are reparented to taskprof, which waits for them (below). */
	if (x->wait_all)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	sigset_t fwd, old_mask;
	sigemptyset(&fwd);
	sigaddset(&fwd, SIGINT);
	sigaddset(&fwd, SIGTERM);
	sigaddset(&fwd, SIGHUP);
	sigprocmask(SIG_BLOCK, &fwd, &old_mask);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		rc = tp_set_error(-errno, "fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		close(pfd[0]);
		close(pfd[1]);
		close(sfd[1]);
		goto restore;
	}
	if (pid == 0) {
		/* The child: undo what taskprof changed, then exec. SIGPIPE
		 * and SIGXFSZ, which taskprof ignores for itself, and SIGINT /
		 * SIGTERM / SIGHUP get what taskprof itself was given (ignored
		 * in a background job of a script, or under nohup, stays
		 * ignored). */
		/* Die with taskprof: a SIGKILL'ed launcher must not leave the
		 * application running, unprofiled and unreported. The check
		 * after it closes the race with a parent that died first. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() != parent)
			_exit(127);
		signal(SIGPIPE, g_pipe_ign_at_start ? SIG_IGN : SIG_DFL);
		signal(SIGXFSZ, g_xfsz_ign_at_start ? SIG_IGN : SIG_DFL);
		signal(SIGINT, old_int.sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL);
		signal(SIGTERM, old_term.sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL);
		signal(SIGHUP, old_hup.sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		fill_pid();
		close(pfd[0]);
		close(sfd[0]);
		/* The status pipe's write end is the one descriptor the
		 * application inherits (its number is in the environment). */
		int keep = fcntl(sfd[1], F_SETFD, 0);
		(void)keep;
		exec_app(x->argv, env);
		int e = errno;
		ssize_t w = write(pfd[1], &e, sizeof(e));
		(void)w;
		_exit(127);
	}
	g_child = pid;
	/* Handlers cannot run here (blocked): no race on g_early. */
	if (g_early) {
		kill(pid, g_early);
		g_early = 0;
	}
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	close(pfd[1]);
	close(sfd[1]);
	int exec_errno = 0;
	ssize_t got;
	do
		got = read(pfd[0], &exec_errno, sizeof(exec_errno));
	while (got < 0 && errno == EINTR);
	close(pfd[0]);
	int st = 0;
	pid_t w;
	for (;;) {
		w = waitpid(pid, &st, WUNTRACED);
		if (w < 0 && errno == EINTR)
			continue;
		if (w > 0 && WIFSTOPPED(st)) {
			say_stopped(pid, WSTOPSIG(st));
			continue;
		}
		break;
	}
	g_child = 0;
	if (w < 0) {
		rc = tp_set_error(-errno, "waitpid %d: %s", (int)pid, strerror(errno));
		goto restore;
	}
	int left_sig = x->wait_all ? wait_leftovers(pid, x->config_path) : 0;
	if (got == (ssize_t)sizeof(exec_errno)) {
		rc = tp_set_error(-exec_errno, "cannot execute '%s': %s", x->argv[0],
				  strerror(exec_errno));
		goto restore;
	}
	read_status(sfd[0], res);
	read_status_file(status_file, status_file_at, res);
	if (WIFEXITED(st)) {
		rc = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		rc = 128 + WTERMSIG(st);
		res->term_sig = WTERMSIG(st);
	} else {
		rc = 1;
	}
	/* Interrupted while waiting for the processes the application left:
	 * as an interrupt after the application's end (docs/op.md). */
	if (left_sig)
		rc = 128 + left_sig;
restore:
	if (x->wait_all)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 0);
	res->interrupted = g_interrupts > 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
out:
	close(sfd[0]);
	for (size_t i = 0; i < n_owned; i++)
		free(owned[i]);
	free(owned);
	free(env);
	return rc;
}
