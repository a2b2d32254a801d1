/* SPDX-License-Identifier: MIT */
/* Unit tests of base/log: levels, threshold, env parsing, hook, line format,
 * thread safety. */
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

#include "base/log.h"
#include "unit_helpers.h"

#define MAX_CAPTURED 4096

struct captured {
	int count;
	int levels[MAX_CAPTURED];
	char *msgs[MAX_CAPTURED];
};

static void capture_hook(int level, const char *msg, void *ud)
{
	struct captured *c = ud;
	if (c->count < MAX_CAPTURED) {
		c->levels[c->count] = level;
		c->msgs[c->count] = strdup(msg);
	}
	c->count++;
}

static void captured_free(struct captured *c)
{
	for (int i = 0; i < c->count && i < MAX_CAPTURED; i++)
		free(c->msgs[i]);
	memset(c, 0, sizeof(*c));
}

static struct captured cap;

static int setup(void **state)
{
	(void)state;
	memset(&cap, 0, sizeof(cap));
	tp_log_set_threshold(TP_LOG_TIMING);
	tp_log_set_hook(capture_hook, &cap);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tp_log_set_hook(NULL, NULL);
	captured_free(&cap);
	tp_log_set_threshold(TP_LOG_TIMING);
	return 0;
}

static void test_parse_level(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int rc;
		int level;
	} cases[] = {
		{ "debug", 0, 10 },   { "DEBUG", 0, 10 },  { "Info", 0, 20 },
		{ "timing", 0, 25 },  { "warn", 0, 30 },   { "WARNING", 0, 30 },
		{ "error", 0, 40 },   { "15", 0, 15 },     { "0", 0, 0 },
		{ " 30 ", 0, 30 },    { "1000", 0, 1000 }, { "", -EINVAL, -1 },
		{ "   ", -EINVAL, -1 }, { "bogus", -EINVAL, -1 },
		{ "12x", -EINVAL, -1 }, { "-5", -EINVAL, -1 },
		{ "99999999999", -EINVAL, -1 }, { "warnings", -EINVAL, -1 },
		{ "DEBU", -EINVAL, -1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int level = -1;
		int rc = tp_log_parse_level(cases[i].text, &level);
		printf("parse '%s' -> rc %d level %d\n", cases[i].text, rc,
		       level);
		assert_int_equal(rc, cases[i].rc);
		assert_int_equal(level, cases[i].level);
	}
	int level = 77;
	assert_int_equal(tp_log_parse_level(NULL, &level), -EINVAL);
	assert_int_equal(level, 77);
}

static void test_level_names(void **state)
{
	(void)state;
	assert_string_equal(tp_log_level_name(TP_LOG_DEBUG), "DEBUG");
	assert_string_equal(tp_log_level_name(TP_LOG_INFO), "INFO");
	assert_string_equal(tp_log_level_name(TP_LOG_TIMING), "TIMING");
	assert_string_equal(tp_log_level_name(TP_LOG_WARN), "WARN");
	assert_string_equal(tp_log_level_name(TP_LOG_ERROR), "ERROR");
	assert_null(tp_log_level_name(35));
}

static void test_hook_gets_exact_message_and_level(void **state)
{
	(void)state;
	tp_log(TP_LOG_WARN, "pmu.csv: line %d: expected %s", 7, "8 columns");
	TP_ERROR("boom %s", "now");
	assert_int_equal(cap.count, 2);
	assert_int_equal(cap.levels[0], TP_LOG_WARN);
	assert_string_equal(cap.msgs[0], "pmu.csv: line 7: expected 8 columns");
	assert_int_equal(cap.levels[1], TP_LOG_ERROR);
	assert_string_equal(cap.msgs[1], "boom now");
}

static void test_below_threshold_not_delivered(void **state)
{
	(void)state;
	assert_int_equal(tp_log_threshold(), TP_LOG_TIMING);
	tp_log(TP_LOG_INFO, "info direct");
	TP_INFO("info macro");
	TP_DEBUG("debug macro");
	tp_log(24, "just below");
	assert_int_equal(cap.count, 0);

	TP_TIMING("timing %d", 1);
	tp_log(25, "exactly at");
	assert_int_equal(cap.count, 2);
	assert_string_equal(cap.msgs[0], "timing 1");
	assert_int_equal(cap.levels[1], 25);
	assert_string_equal(cap.msgs[1], "exactly at");
}

static void test_set_threshold_and_enabled(void **state)
{
	(void)state;
	tp_log_set_threshold(TP_LOG_WARN);
	assert_int_equal(tp_log_threshold(), 30);
	assert_true(tp_log_enabled(30));
	assert_true(tp_log_enabled(40));
	assert_false(tp_log_enabled(29));
	TP_TIMING("hidden");
	TP_WARN("shown");
	assert_int_equal(cap.count, 1);
	assert_string_equal(cap.msgs[0], "shown");

	tp_log_set_threshold(TP_LOG_DEBUG);
	assert_true(tp_log_enabled(TP_LOG_DEBUG));
	assert_false(tp_log_enabled(9));
	TP_DEBUG("debug now shown");
	assert_int_equal(cap.count, 2);
	assert_int_equal(cap.levels[1], TP_LOG_DEBUG);
}

static int side_effects;
static int count_side_effect(void)
{
	return ++side_effects;
}

static void test_macro_skips_arguments_when_disabled(void **state)
{
	(void)state;
	side_effects = 0;
	TP_DEBUG("value %d", count_side_effect());
	assert_int_equal(side_effects, 0);
	TP_WARN("value %d", count_side_effect());
	assert_int_equal(side_effects, 1);
	assert_string_equal(cap.msgs[0], "value 1");
}

static void test_hook_removed(void **state)
{
	(void)state;
	TP_WARN("one");
	tp_log_set_hook(NULL, NULL);
	TP_WARN("two (stderr only)");
	assert_int_equal(cap.count, 1);
}

static void test_line_format(void **state)
{
	(void)state;
	struct uh_capture c;
	assert_int_equal(uh_capture_stderr_begin(&c), 0);
	TP_WARN("abc");
	TP_TIMING("t %s", "x");
	TP_ERROR("e");
	tp_log(35, "unnamed");
	tp_log_set_threshold(0);
	TP_DEBUG("d");
	TP_INFO("i");
	char *out = uh_capture_stderr_end(&c);
	assert_non_null(out);
	printf("captured:\n%s", out);
	assert_string_equal(out,
			    "[taskprof] WARN  abc\n"
			    "[taskprof] TIMING t x\n"
			    "[taskprof] ERROR e\n"
			    "[taskprof] L35   unnamed\n"
			    "[taskprof] DEBUG d\n"
			    "[taskprof] INFO  i\n");
	free(out);
}

static void test_long_message_whole(void **state)
{
	(void)state;
	size_t n = 5000;
	char *big = malloc(n + 1);
	assert_non_null(big);
	memset(big, 'q', n);
	big[n] = '\0';

	struct uh_capture c;
	assert_int_equal(uh_capture_stderr_begin(&c), 0);
	TP_WARN("<%s>", big);
	char *out = uh_capture_stderr_end(&c);

	assert_int_equal(cap.count, 1);
	assert_int_equal(strlen(cap.msgs[0]), n + 2);
	assert_int_equal(cap.msgs[0][0], '<');
	assert_int_equal(cap.msgs[0][n + 1], '>');
	assert_int_equal(strlen(out), strlen("[taskprof] WARN  ") + n + 3);
	assert_int_equal(out[strlen(out) - 1], '\n');
	free(out);
	free(big);
}

static void test_errno_preserved(void **state)
{
	(void)state;
	errno = EBADF;
	TP_WARN("x");
	assert_int_equal(errno, EBADF);
}

static void nested_hook(int level, const char *msg, void *ud)
{
	capture_hook(level, msg, ud);
	tp_log(TP_LOG_ERROR, "nested from hook");
}

static void test_hook_may_log(void **state)
{
	(void)state;
	tp_log_set_hook(nested_hook, &cap);
	struct uh_capture c;
	assert_int_equal(uh_capture_stderr_begin(&c), 0);
	TP_WARN("outer");
	char *out = uh_capture_stderr_end(&c);
	assert_int_equal(cap.count, 1);
	assert_string_equal(cap.msgs[0], "outer");
	assert_string_equal(out, "[taskprof] WARN  outer\n"
				 "[taskprof] ERROR nested from hook\n");
	free(out);
}

#define THREADS 4
#define LINES_PER_THREAD 500
#define PAYLOAD 300

static void *log_thread(void *arg)
{
	int id = (int)(intptr_t)arg;
	char payload[PAYLOAD + 1];
	memset(payload, 'a' + id, PAYLOAD);
	payload[PAYLOAD] = '\0';
	for (int i = 0; i < LINES_PER_THREAD; i++)
		TP_WARN("T%d-%04d-%s", id, i, payload);
	return NULL;
}

static void test_threads_do_not_interleave(void **state)
{
	(void)state;
	struct uh_capture c;
	assert_int_equal(uh_capture_stderr_begin(&c), 0);
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, log_thread,
						(void *)(intptr_t)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	char *out = uh_capture_stderr_end(&c);
	assert_non_null(out);

	assert_int_equal(cap.count, THREADS * LINES_PER_THREAD);
	int seen[THREADS] = { 0 };
	int lines = 0;
	char *save = NULL;
	for (char *line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		int id = -1, idx = -1, off = 0;
		assert_int_equal(sscanf(line, "[taskprof] WARN  T%d-%d-%n", &id,
					&idx, &off), 2);
		assert_true(id >= 0 && id < THREADS);
		/* Lines of one thread arrive in order and are whole. */
		assert_int_equal(idx, seen[id]);
		seen[id]++;
		assert_int_equal(strlen(line + off), PAYLOAD);
		assert_int_equal(strspn(line + off, (char[]){ (char)('a' + id), 0 }),
				 PAYLOAD);
		lines++;
	}
	assert_int_equal(lines, THREADS * LINES_PER_THREAD);
	printf("%d lines from %d threads, none interleaved\n", lines, THREADS);
	free(out);
}

/* ---- TASKPROF_LOG_LEVEL on first use, checked in a fresh child process */

static int child_warnings;
static char child_last[512];
static void child_hook(int level, const char *msg, void *ud)
{
	(void)ud;
	if (level == TP_LOG_WARN) {
		child_warnings++;
		snprintf(child_last, sizeof(child_last), "%s", msg);
	}
}

/* Child side: first use of the threshold, then report it. */
static int child_main(const char *mode)
{
	tp_log_set_hook(child_hook, NULL);
	if (strcmp(mode, "--child-set-first") == 0)
		tp_log_set_threshold(TP_LOG_ERROR);
	int first = tp_log_threshold();
	int again = tp_log_threshold();
	bool enabled = tp_log_enabled(first);
	printf("%d %d %d %d|%s", first, again, enabled, child_warnings,
	       child_last);
	return 0;
}

static void expect_child(const char *mode, const char *env, int level,
			 int warnings, const char *warn_substring)
{
	char out[1024];
	int status = uh_run_self(mode, "TASKPROF_LOG_LEVEL", env, out,
				 sizeof(out));
	printf("TASKPROF_LOG_LEVEL=%s %s -> '%s'\n", env ? env : "(unset)",
	       mode, out);
	assert_int_equal(status, 0);
	int first = -1, again = -1, enabled = -1, warns = -1;
	assert_int_equal(sscanf(out, "%d %d %d %d|", &first, &again, &enabled,
				&warns), 4);
	assert_int_equal(first, level);
	assert_int_equal(again, level);
	assert_int_equal(enabled, 1);
	assert_int_equal(warns, warnings);
	if (warn_substring)
		assert_non_null(strstr(out, warn_substring));
}

static void test_env_first_use(void **state)
{
	(void)state;
	expect_child("--child", NULL, 25, 0, NULL);
	expect_child("--child", "debug", 10, 0, NULL);
	expect_child("--child", "INFO", 20, 0, NULL);
	expect_child("--child", "Warning", 30, 0, NULL);
	expect_child("--child", "error", 40, 0, NULL);
	expect_child("--child", "12", 12, 0, NULL);
	/* Invalid: default kept, exactly one warning naming the value. */
	expect_child("--child", "bogus", 25, 1, "TASKPROF_LOG_LEVEL='bogus'");
	/* An empty value is treated as unset: default threshold, no warning. */
	expect_child("--child", "", 25, 0, NULL);
	/* An explicit threshold set before first use wins over the env. */
	expect_child("--child-set-first", "debug", 40, 0, NULL);
}

/* The first ERROR since the reset is kept (newlines made blanks, cut to
 * the buffer), later ones and other levels are not; a reset forgets it. */
static void test_first_error(void **state)
{
	(void)state;
	char buf[TP_LOG_FIRST_ERROR_MAX];
	tp_log_first_error_reset();
	assert_int_equal(tp_log_first_error(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	TP_WARN("a warning is not an error");
	assert_int_equal(tp_log_first_error(buf, sizeof(buf)), 0);
	TP_ERROR("stalled on core %d\nfor 600 ms", 8);
	TP_ERROR("the teardown timed out");
	assert_int_equal(tp_log_first_error(buf, sizeof(buf)), 28);
	assert_string_equal(buf, "stalled on core 8 for 600 ms");
	char small[8];
	assert_int_equal(tp_log_first_error(small, sizeof(small)), 7);
	assert_string_equal(small, "stalled");
	assert_int_equal(tp_log_first_error(small, 0), 0);
	tp_log_first_error_reset();
	assert_int_equal(tp_log_first_error(buf, sizeof(buf)), 0);
	TP_ERROR("the next run's");
	assert_int_equal(tp_log_first_error(buf, sizeof(buf)), 14);
	assert_string_equal(buf, "the next run's");

	/* Too long: the middle gives way (" ... "), the end stays, and the
	 * cut falls between UTF-8 characters. */
	char big[1400];
	size_t k = 0;
	for (int i = 0; i < 300; i++) {
		big[k++] = (char)0xc3; /* "é" */
		big[k++] = (char)0xa9;
	}
	memcpy(big + k, "END", 4);
	tp_log_first_error_reset();
	TP_ERROR("%s", big);
	size_t n = tp_log_first_error(buf, sizeof(buf));
	assert_true(n <= TP_LOG_FIRST_ERROR_MAX - 1);
	assert_true(n > 400);
	assert_non_null(strstr(buf, " ... "));
	assert_string_equal(buf + n - 3, "END");
	for (size_t i = 0; i < n; i++) { /* every é whole: c3 a9 pairs */
		unsigned char c = (unsigned char)buf[i];
		if (c == 0xc3)
			assert_int_equal((unsigned char)buf[++i], 0xa9);
		else
			assert_true(c < 0x80);
	}

	/* An ERROR below the threshold (TASKPROF_LOG_LEVEL above ERROR) is
	 * kept all the same. */
	tp_log_first_error_reset();
	tp_log_set_threshold(TP_LOG_ERROR + 10);
	TP_ERROR("stall %d, not shown", 7);
	tp_log_set_threshold(TP_LOG_TIMING);
	assert_int_equal(tp_log_first_error(buf, sizeof(buf)), 18);
	assert_string_equal(buf, "stall 7, not shown");
	tp_log_first_error_reset();
}

int main(int argc, char **argv)
{
	if (argc > 1 && strncmp(argv[1], "--child", 7) == 0)
		return child_main(argv[1]);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_level),
		cmocka_unit_test(test_level_names),
		cmocka_unit_test_setup_teardown(
			test_hook_gets_exact_message_and_level, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_below_threshold_not_delivered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_threshold_and_enabled,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_macro_skips_arguments_when_disabled, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_hook_removed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_line_format, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_long_message_whole, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_errno_preserved, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hook_may_log, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_threads_do_not_interleave,
						setup, teardown),
		cmocka_unit_test(test_env_first_use),
		cmocka_unit_test_setup_teardown(test_first_error, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
