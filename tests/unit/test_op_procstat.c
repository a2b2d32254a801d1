/* SPDX-License-Identifier: MIT */
/* Unit tests of op/procstat: the fields of a /proc/<pid>/stat line by
 * proc(5)'s numbers, counted from the last ')' (a comm may hold blanks and
 * parentheses); the process's start time the injector's exec resume
 * compares (field 22: an earlier parser read field 23, the address space
 * size, which an exec'd image need not share). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "op/procstat.h"

/* A stat line whose field i (i >= 3, state aside) holds i * 10, after a
 * comm of @comm; 52 fields as on Linux 6. */
static void line(char *buf, size_t n, const char *comm)
{
	int o = snprintf(buf, n, "4242 (%s) S", comm);
	for (int f = 4; f <= 52; f++)
		o += snprintf(buf + o, n - (size_t)o, " %d", f * 10);
	snprintf(buf + o, n - (size_t)o, "\n");
}

static void test_fields(void **state)
{
	(void)state;
	static const char *const comms[] = { "app", "a b", "x) (y", "))", "(", "" };
	char buf[1024];
	for (size_t i = 0; i < sizeof(comms) / sizeof(comms[0]); i++) {
		line(buf, sizeof(buf), comms[i]);
		const char *st = tp_proc_stat_field(buf, TP_PROC_STAT_STATE);
		assert_non_null(st);
		assert_int_equal(*st, 'S');
		uint64_t v = 0;
		assert_int_equal(tp_proc_stat_u64(buf, TP_PROC_STAT_STARTTIME, &v), 0);
		assert_int_equal(v, 220);
		assert_int_equal(tp_proc_stat_u64(buf, 4, &v), 0);
		assert_int_equal(v, 40);
		assert_int_equal(tp_proc_stat_u64(buf, 52, &v), 0); /* the last, before '\n' */
		assert_int_equal(v, 520);
		v = 7;
		assert_int_equal(tp_proc_stat_u64(buf, 53, &v), -1); /* past the end */
		assert_int_equal(v, 7);
		/* The state letter is not a number. */
		assert_int_equal(tp_proc_stat_u64(buf, TP_PROC_STAT_STATE, &v), -1);
	}
}

static void test_bad_lines(void **state)
{
	(void)state;
	uint64_t v = 9;
	assert_null(tp_proc_stat_field(NULL, 3));
	assert_null(tp_proc_stat_field("1 (a) S 2", 2));      /* comm is not counted */
	assert_null(tp_proc_stat_field("1 a S 2 3", 3));      /* no ')' */
	assert_null(tp_proc_stat_field("1 (a)", 3));          /* nothing after the comm */
	assert_null(tp_proc_stat_field("1 (a)S 2", 3));       /* no blank after ')' */
	assert_null(tp_proc_stat_field("1 (a) S 2", 5));      /* too few fields */
	assert_int_equal(tp_proc_stat_u64("1 (a) S x 3", 4, &v), -1);
	assert_int_equal(v, 9);
	assert_int_equal(tp_proc_stat_u64("1 (a) S 18446744073709551615", 4, &v), 0);
	assert_true(v == UINT64_MAX);
}

/* Now, in seconds after boot (CLOCK_BOOTTIME: the clock of starttime). */
static double boot_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_self_start_time(void **state)
{
	(void)state;
	char buf[1024];
	assert_int_equal(tp_proc_stat_read(0, buf, sizeof(buf)), 0);
	uint64_t self = 0;
	assert_int_equal(tp_proc_stat_u64(buf, TP_PROC_STAT_STARTTIME, &self), 0);
	const double hz = (double)sysconf(_SC_CLK_TCK);
	const double now = boot_s();
	/* This test process started before now and not an hour ago. */
	assert_true((double)self / hz <= now + 0.02);
	assert_true((double)self / hz >= now - 3600.0);
	/* A child forked now started now, not before this process. */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		usleep(100000);
		_exit(0);
	}
	char cbuf[1024];
	uint64_t child = 0;
	assert_int_equal(tp_proc_stat_read(pid, cbuf, sizeof(cbuf)), 0);
	assert_int_equal(tp_proc_stat_u64(cbuf, TP_PROC_STAT_STARTTIME, &child), 0);
	assert_true(child >= self);
	assert_true((double)child / hz >= now - 1.0);
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	/* Reaped: its file is gone. */
	errno = 0;
	assert_int_equal(tp_proc_stat_read(pid, cbuf, sizeof(cbuf)), -1);
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_self_start_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
