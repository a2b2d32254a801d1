/* SPDX-License-Identifier: MIT */
/*
 * unit_helpers.h — small helpers shared by the unit tests (header-only).
 *
 * - uh_run_self(): re-run the test binary in a child with one environment
 *   variable set, to test "read once on first use" behaviour in a process
 *   where that first use has not happened yet.
 * - uh_capture_stderr_*(): redirect fd 2 into a file and read it back.
 * - uh_mkdtemp() / uh_rm_rf(): a scratch directory per test.
 * - uh_vm_size(): this process's address space, for tests that cap it.
 * - uh_rss(): this process's resident memory.
 * - UH_UNDER_SANITIZER: 1 in ASan / TSan builds (their shadow mappings
 *   need the address space such tests take away).
 * - uh_run_for_ms(): sleep for a span of the thread's own running time;
 *   uh_stop_self_later() / uh_reap(): stop this process for a while from
 *   a child (SIGSTOP ... SIGCONT), for budgets that must skip a stop.
 */
#ifndef TASKPROF_TESTS_UNIT_HELPERS_H
#define TASKPROF_TESTS_UNIT_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Run this test binary again as `self MODE` with @env_name set to
 * @env_value (or unset when @env_value is NULL). Its stdout is read into
 * @out (NUL-terminated, truncated to @out_len - 1); its stderr is
 * discarded. Returns the child's exit status, or -1 if it did not exit.
 */
static inline int uh_run_self(const char *mode, const char *env_name,
			      const char *env_value, char *out,
			      size_t out_len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return -1;
	self[n] = '\0';

	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(fds[1], STDOUT_FILENO);
		if (devnull >= 0)
			dup2(devnull, STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		if (env_value)
			setenv(env_name, env_value, 1);
		else
			unsetenv(env_name);
		char *args[] = { self, (char *)mode, NULL };
		execv(self, args);
		_exit(127);
	}
	close(fds[1]);
	size_t len = 0;
	for (;;) {
		ssize_t r = read(fds[0], out + len, out_len - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len == out_len - 1)
			break;
	}
	out[len] = '\0';
	close(fds[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct uh_capture {
	int saved_fd;
	char path[64];
};

/* Send fd 2 to a fresh temporary file until uh_capture_stderr_end(). */
static inline int uh_capture_stderr_begin(struct uh_capture *c)
{
	snprintf(c->path, sizeof(c->path), "/tmp/tp_stderr_XXXXXX");
	int fd = mkstemp(c->path);
	if (fd < 0)
		return -1;
	fflush(stderr);
	c->saved_fd = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
	return 0;
}

/* Restore fd 2; return what was written meanwhile (malloc'd). */
static inline char *uh_capture_stderr_end(struct uh_capture *c)
{
	fflush(stderr);
	dup2(c->saved_fd, STDERR_FILENO);
	close(c->saved_fd);
	FILE *f = fopen(c->path, "rb");
	char *text = NULL;
	size_t cap = 0;
	if (f) {
		ssize_t n = getdelim(&text, &cap, '\0', f);
		if (n < 0) {
			free(text);
			text = strdup("");
		}
		fclose(f);
	}
	unlink(c->path);
	return text;
}

/* A fresh directory under $TMPDIR or /tmp (malloc'd path). */
static inline char *uh_mkdtemp(void)
{
	const char *base = getenv("TMPDIR");
	char *path = NULL;
	if (asprintf(&path, "%s/taskprof_test_XXXXXX",
		     base && *base ? base : "/tmp") < 0)
		return NULL;
	if (!mkdtemp(path)) {
		free(path);
		return NULL;
	}
	return path;
}

static inline int uh_rm_one(const char *p, const struct stat *st, int flag,
			    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* Address space of this process now, bytes (VmSize), or 0. */
static inline size_t uh_vm_size(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages = 0;
	if (!f)
		return 0;
	if (fscanf(f, "%lu", &pages) != 1)
		pages = 0;
	fclose(f);
	return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* Resident memory of this process now, bytes (statm's second field), or 0. */
static inline size_t uh_rss(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, res = 0;
	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UH_UNDER_SANITIZER 1
#else
#define UH_UNDER_SANITIZER 0
#endif

/* rm -rf @path, then free it. */
static inline void uh_rm_rf(char *path)
{
	if (path)
		nftw(path, uh_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(path);
}

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t uh_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Returns after @ms ms of the calling thread's running time: 10 ms naps,
 * each counted at most 50 ms, so a stop of the process does not count and
 * a loaded machine shortens rather than lengthens the span. */
static inline void uh_run_for_ms(unsigned ms)
{
	uint64_t done = 0, prev = uh_now_ns();
	while (done < (uint64_t)ms * 1000000u) {
		struct timespec nap = { 0, 10000000L };
		nanosleep(&nap, NULL);
		uint64_t now = uh_now_ns(), dt = now - prev;
		done += dt < 50000000u ? dt : 50000000u;
		prev = now;
	}
}

/* Stops this process (SIGSTOP) @after_ms ms from now for @for_ms ms
 * (then SIGCONT), from a forked child. Returns the child's pid for
 * uh_reap(), or -1 when fork() failed. */
static inline pid_t uh_stop_self_later(unsigned after_ms, unsigned for_ms)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec a = { after_ms / 1000, (long)(after_ms % 1000) * 1000000L };
		struct timespec b = { for_ms / 1000, (long)(for_ms % 1000) * 1000000L };
		nanosleep(&a, NULL);
		kill(parent, SIGSTOP);
		nanosleep(&b, NULL);
		kill(parent, SIGCONT);
		_exit(0);
	}
	return pid;
}

/* Waits for the child of uh_stop_self_later(). Return: 0 when it exited
 * with status 0, -1 otherwise. */
static inline int uh_reap(pid_t pid)
{
	int st = 0;
	pid_t w;
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	return w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

#endif /* TASKPROF_TESTS_UNIT_HELPERS_H */
