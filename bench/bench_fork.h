/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_fork.h — run one measured step in a forked child (header
 * only, shared by bench_convert and bench_json_parse).
 *
 * Why a child: peak RSS is only meaningful per process (wait4()'s
 * ru_maxrss is the child's high-water mark), and a step's memory must not
 * be inflated by what an earlier step left in the heap. The parent must
 * stay small when it forks, because a forked child starts with the
 * parent's resident pages counted in its RSS.
 */
#ifndef TASKPROF_BENCH_FORK_H
#define TASKPROF_BENCH_FORK_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/**
 * struct bf_result - what the parent measured.
 * @exit_code:   the child's exit status, or 128 + signal.
 * @wall_s:      seconds from just before fork() to wait4() returning.
 * @user_s, @sys_s: the child's CPU seconds.
 * @peak_rss_mb: the child's ru_maxrss in MiB.
 */
struct bf_result {
	int exit_code;
	double wall_s, user_s, sys_s, peak_rss_mb;
};

/* The step: runs in the child, may write up to PIPE_BUF bytes of result
 * to @fd; its return value is the child's exit code. */
typedef int (*bf_step)(void *arg, int fd);

static inline double bf_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/**
 * bf_run() - run @step(@arg) in a child and measure it.
 * @quiet:   send the child's stdout to /dev/null.
 * @msg, @msg_len: receive what the child wrote to its fd (may be NULL).
 * Return: 0 when the child was run and reaped (look at @r->exit_code),
 * -errno when fork / pipe / wait failed.
 */
static inline int bf_run(bf_step step, void *arg, bool quiet, struct bf_result *r,
			 void *msg, size_t msg_len)
{
	int fds[2];
	memset(r, 0, sizeof(*r)); /* defined even when fork / pipe fail */
	if (pipe(fds))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	double t0 = bf_now();
	pid_t pid = fork();
	if (pid < 0) {
		int err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid == 0) {
		close(fds[0]);
		if (quiet) {
			int dn = open("/dev/null", O_WRONLY);
			if (dn >= 0) {
				dup2(dn, STDOUT_FILENO);
				close(dn);
			}
		}
		int rc = step(arg, fds[1]);
		fflush(stdout);
		fflush(stderr);
		_exit(rc & 0xff);
	}
	close(fds[1]);
	size_t got = 0;
	while (msg && got < msg_len) {
		ssize_t n = read(fds[0], (char *)msg + got, msg_len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			return -errno;
	r->wall_s = bf_now() - t0;
	r->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
	r->sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	r->peak_rss_mb = (double)ru.ru_maxrss / 1024.0; /* ru_maxrss is KiB */
	r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
		     : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	if (msg && got < msg_len)
		memset((char *)msg + got, 0, msg_len - got);
	return 0;
}

/* Write @len bytes of @p to @fd (the child's result pipe). */
static inline void bf_send(int fd, const void *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p = (const char *)p + n;
		len -= (size_t)n;
	}
}

static inline uint64_t bf_file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

#endif /* TASKPROF_BENCH_FORK_H */
