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
#include <string.h>

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
	char big[2000];
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(tp_set_error(-E2BIG, "%s", big), -E2BIG);
	const char *msg = tp_last_error();
	assert_int_equal(strlen(msg), TP_ERROR_MSG_MAX - 1);
	assert_int_equal(strspn(msg, "z"), TP_ERROR_MSG_MAX - 1);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_returns_err_and_formats),
		cmocka_unit_test(test_clear),
		cmocka_unit_test(test_truncated_to_buffer),
		cmocka_unit_test(test_wraps_previous_message),
		cmocka_unit_test(test_thread_local),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
