/* SPDX-License-Identifier: MIT */
/* Unit tests of base/error: the -errno + thread-local message convention. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/resource.h>

#include "base/error.h"
#include "taskprof/taskprof.h"

static int parse_line(int line)
{
	return tp_set_error(-EINVAL, "pmu.csv: line %d: expected %d columns",
			    line, 8);
}

static void test_returns_err_and_formats(void **state)
{
	(void)state;
	assert_int_equal(parse_line(12), -EINVAL);
	assert_string_equal(tp_last_error(),
			    "pmu.csv: line 12: expected 8 columns");

	assert_int_equal(tp_set_error(-ENOSPC, "pool full"), -ENOSPC);
	assert_string_equal(tp_last_error(), "pool full");
	/* The code is passed through whatever it is. */
	assert_int_equal(tp_set_error(0, "zero"), 0);
	assert_int_equal(tp_set_error(7, "seven"), 7);
	assert_string_equal(tp_last_error(), "seven");
}

static void test_clear(void **state)
{
	(void)state;
	tp_set_error(-EIO, "something");
	tp_clear_error();
	assert_string_equal(tp_last_error(), "");
	assert_non_null(tp_last_error());
}

static void test_truncated_to_buffer(void **state)
{
	(void)state;
	/* Two PATH_MAX paths and their text fit whole. */
	static char path[4096];
	memset(path, 'p', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	tp_set_error(-EXDEV, "%s: cannot rename %s into place: Invalid cross-device link",
		     path, path);
	assert_int_equal(strlen(tp_last_error()), 2 * 4095 + strlen(": cannot rename  into "
									"place: Invalid cross-device link"));

	/* Longer: the middle goes, the head and the reason stay. */
	static char big[3 * TP_ERROR_MSG_MAX];
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(tp_set_error(-E2BIG, "head %s: No space left on device", big), -E2BIG);
	const char *msg = tp_last_error();
	assert_int_equal(strlen(msg), TP_ERROR_MSG_MAX - 1);
	assert_memory_equal(msg, "head zz", 7);
	assert_non_null(strstr(msg, "z\xe2\x80\xa6z"));
	const char *why = ": No space left on device";
	assert_string_equal(msg + strlen(msg) - strlen(why), why);
}

static void test_fit_keeps_end_and_utf8(void **state)
{
	(void)state;
	char out[32];
	/* Fits: copied as is. */
	assert_int_equal(tp_error_fit(out, sizeof(out), "short"), 5);
	assert_string_equal(out, "short");
	/* 40 bytes into 32: 4 of the head, "…", 24 of the end. */
	const char *src = "/aaaa/bbbbbbbbbbbbbb/cccc: File exists!!";
	assert_int_equal(tp_error_fit(out, sizeof(out), src), 31);
	assert_string_equal(out, "/aaa\xe2\x80\xa6" "bbbb/cccc: File exists!!");
	/* Never half a UTF-8 sequence: "é" is 2 bytes, at every offset. */
	for (int shift = 0; shift < 4; shift++) {
		char in[64];
		int n = snprintf(in, sizeof(in), "%.*s", shift, "xxxx");
		for (int i = 0; i < 20; i++)
			n += snprintf(in + n, sizeof(in) - (size_t)n, "\xc3\xa9");
		tp_error_fit(out, 16, in);
		for (size_t i = 0; out[i]; i++) {
			unsigned char c = (unsigned char)out[i];
			if (c == 0xc3)
				assert_int_equal((unsigned char)out[i + 1], 0xa9);
			if (c == 0xa9)
				assert_int_equal((unsigned char)out[i - 1], 0xc3);
		}
	}
	/* In place, and a buffer too small for the ellipsis. */
	char same[64] = "0123456789abcdefghijklmnopqrstuvwxyz";
	tp_error_fit(same, 12, same);
	assert_string_equal(same, "0\xe2\x80\xa6tuvwxyz");
	assert_int_equal(tp_error_fit(out, 4, "abcdef"), 3);
	assert_string_equal(out, "abc");
}

static void test_wraps_previous_message(void **state)
{
	(void)state;
	tp_set_error(-ENOENT, "deps.json: cannot open");
	/* Arguments may include the current message itself. */
	assert_int_equal(tp_set_error(-ENOENT, "loading run: %s; %s",
				      tp_last_error(), tp_last_error()),
			 -ENOENT);
	assert_string_equal(tp_last_error(),
			    "loading run: deps.json: cannot open; "
			    "deps.json: cannot open");
}

/* A message is one line: control characters in what it quotes (a path
 * with a newline, a tab in an input line) come out as C escapes, and the
 * longer escaped message is still fitted into the buffer. */
static void test_control_characters_escaped(void **state)
{
	(void)state;
	assert_int_equal(tp_set_error(-ENOENT, "cannot open '%s': %s", "out\nput\tdir/\r\x01\x7f.json",
				      "No such file"),
			 -ENOENT);
	assert_string_equal(tp_last_error(),
			    "cannot open 'out\\nput\\tdir/\\r\\x01\\x7f.json': No such file");
	assert_null(strchr(tp_last_error(), '\n'));
	/* UTF-8 is left alone */
	tp_set_error(-EINVAL, "name '\xe6\xa0\xb8'");
	assert_string_equal(tp_last_error(), "name '\xe6\xa0\xb8'");
	/* a message of newlines only, 4 times longer escaped: fitted, its
	 * end kept */
	char *nl = malloc(TP_ERROR_MSG_MAX);
	assert_non_null(nl);
	memset(nl, '\n', TP_ERROR_MSG_MAX - 10);
	nl[TP_ERROR_MSG_MAX - 10] = '\0';
	tp_set_error(-EINVAL, "%s: end", nl);
	free(nl);
	const char *m = tp_last_error();
	assert_true(strlen(m) < TP_ERROR_MSG_MAX);
	assert_null(strchr(m, '\n'));
	assert_string_equal(m + strlen(m) - 7, "\\n: end");
	assert_non_null(strstr(m, "\xe2\x80\xa6"));
}

/* The allocation-free escaper behind them: sizes like snprintf, writes
 * an escape whole or not at all. */
static void test_escape_controls_into(void **state)
{
	(void)state;
	char b[16];
	assert_int_equal(tp_escape_controls(NULL, 0, "a\nb\x1b"), 8);
	assert_int_equal(tp_escape_controls(b, sizeof(b), "a\nb\x1b"), 8);
	assert_string_equal(b, "a\\nb\\x1b");
	/* room for "a\n" and "b" but not the 4 bytes of \x1b */
	assert_int_equal(tp_escape_controls(b, 6, "a\nb\x1b" "c"), 9);
	assert_string_equal(b, "a\\nb");
	/* nothing after a cut escape, even a byte that would fit */
	assert_int_equal(tp_escape_controls(b, 3, "a\nb"), 4);
	assert_string_equal(b, "a");
	assert_int_equal(tp_escape_controls(b, sizeof(b), "plain \xc3\xa9"), 8);
	assert_string_equal(b, "plain \xc3\xa9");
}

struct thread_result {
	char initial[64];
	char after[64];
};

static void *error_thread(void *arg)
{
	struct thread_result *r = arg;
	snprintf(r->initial, sizeof(r->initial), "%s", tp_last_error());
	tp_set_error(-EAGAIN, "thread message");
	snprintf(r->after, sizeof(r->after), "%s", tp_last_error());
	return NULL;
}

static void test_thread_local(void **state)
{
	(void)state;
	tp_set_error(-EINVAL, "main message");
	struct thread_result r;
	memset(&r, 0x55, sizeof(r));
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, error_thread, &r), 0);
	pthread_join(th, NULL);
	assert_string_equal(r.initial, "");
	assert_string_equal(r.after, "thread message");
	assert_string_equal(tp_last_error(), "main message");
}

/* The notes added to out-of-memory and thread-start errors. */
static void test_limit_notes(void **state)
{
	(void)state;
	assert_string_equal(tp_thread_limit_note(EAGAIN),
			    " (the process's thread limit, ulimit -u, or the address space for "
			    "thread stacks, ulimit -v)");
	assert_string_equal(tp_thread_limit_note(EINVAL), "");
	assert_string_equal(tp_thread_limit_note(0), "");

	struct rlimit old;
	assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
	if (old.rlim_cur != RLIM_INFINITY || old.rlim_max != RLIM_INFINITY) {
		/* A limit set from outside, or a sanitizer's: only its form. */
		assert_non_null(strstr(tp_mem_limit_note(), " MiB: ulimit -v)"));
		return;
	}
	assert_string_equal(tp_mem_limit_note(), "");
	/* A soft limit far above what the process maps: nothing is refused
	 * while it is set, and it goes back after. */
	struct rlimit lim = { .rlim_cur = (rlim_t)3 << 40, .rlim_max = RLIM_INFINITY };
	assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
	char note[128];
	snprintf(note, sizeof(note), "%s", tp_mem_limit_note());
	assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
	assert_string_equal(note,
			    " (this process's address space is limited to 3145728 MiB: ulimit -v)");
	assert_string_equal(tp_mem_limit_note(), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_returns_err_and_formats),
		cmocka_unit_test(test_clear),
		cmocka_unit_test(test_control_characters_escaped),
		cmocka_unit_test(test_escape_controls_into),
		cmocka_unit_test(test_truncated_to_buffer),
		cmocka_unit_test(test_fit_keeps_end_and_utf8),
		cmocka_unit_test(test_wraps_previous_message),
		cmocka_unit_test(test_thread_local),
		cmocka_unit_test(test_limit_notes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
