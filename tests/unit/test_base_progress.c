/* SPDX-License-Identifier: MIT */
/* Unit tests of base/progress: a phase that outlasts the first delay gets
 * "<prefix>: <phase>..." and then lines with its age; a phase that ends
 * before the delay gets none; off, nothing is printed. The lines are read
 * from a pipe, so each check waits for the line it expects instead of
 * sleeping a guessed time. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/progress.h"

#define MS (1000ull * 1000)

struct pipe_stream {
	int rfd;
	FILE *w;
};

static void open_pipe(struct pipe_stream *p)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	p->rfd = fds[0];
	p->w = fdopen(fds[1], "w");
	assert_non_null(p->w);
}

/* One line from the pipe (without its '\n'), waiting at most 30 s; false
 * on timeout or end of file. */
static bool read_line(struct pipe_stream *p, char *buf, size_t len)
{
	size_t n = 0;
	while (n + 1 < len) {
		struct pollfd pf = { .fd = p->rfd, .events = POLLIN };
		if (poll(&pf, 1, 30000) <= 0)
			return false;
		char c;
		if (read(p->rfd, &c, 1) != 1)
			return false;
		if (c == '\n')
			break;
		buf[n++] = c;
	}
	buf[n] = '\0';
	return true;
}

/* Nothing is waiting in the pipe after @ms milliseconds. */
static bool quiet_for(struct pipe_stream *p, int ms)
{
	struct pollfd pf = { .fd = p->rfd, .events = POLLIN };
	return poll(&pf, 1, ms) == 0;
}

static void test_long_phase_gets_lines(void **state)
{
	(void)state;
	struct pipe_stream p;
	open_pipe(&p);
	tp_progress_set_timing(50 * MS, 1100 * MS);
	assert_int_equal(tp_progress_enable("taskprof test", p.w), 0);
	assert_int_equal(tp_progress_enable("again", p.w), 0); /* no second thread */
	tp_progress_phase("running %s on %s", "paged_attention Case1", "a2a3sim");
	char line[256];
	assert_true(read_line(&p, line, sizeof(line)));
	assert_string_equal(line, "taskprof test: running paged_attention Case1 on a2a3sim...");
	/* the next line carries the phase's age in whole seconds */
	assert_true(read_line(&p, line, sizeof(line)));
	assert_non_null(strstr(line, "taskprof test: running paged_attention Case1 on a2a3sim... ("));
	assert_non_null(strstr(line, " s)"));
	/* between phases: silent */
	tp_progress_phase(NULL);
	assert_true(quiet_for(&p, 300));
	/* a new phase starts its own clock and its own first line */
	tp_progress_phase("converting");
	assert_true(read_line(&p, line, sizeof(line)));
	assert_string_equal(line, "taskprof test: converting...");
	tp_progress_disable();
	tp_progress_disable(); /* twice: nothing */
	fclose(p.w);
	close(p.rfd);
}

static void test_short_phase_and_off_print_nothing(void **state)
{
	(void)state;
	struct pipe_stream p;
	open_pipe(&p);
	/* off: phases are only remembered */
	tp_progress_set_timing(10 * MS, 10 * MS);
	tp_progress_phase("while off");
	assert_true(quiet_for(&p, 100));
	/* on, with a first delay far longer than the phases */
	tp_progress_set_timing(5000 * MS, 0);
	assert_int_equal(tp_progress_enable("t", p.w), 0);
	for (int i = 0; i < 50; i++)
		tp_progress_phase("short %d", i);
	tp_progress_phase(NULL);
	assert_true(quiet_for(&p, 200));
	/* back to a short delay: only the phase current then is printed */
	tp_progress_set_timing(20 * MS, 0);
	tp_progress_phase("the last one");
	char line[256];
	assert_true(read_line(&p, line, sizeof(line)));
	assert_string_equal(line, "t: the last one...");
	tp_progress_disable();
	fclose(p.w);
	close(p.rfd);
	tp_progress_set_timing(0, 0);
}

/* The snapshot a signal handler reads: the phase as formatted, "" between
 * phases, cut to the buffer given; a phase longer than the limit is cut at
 * 191 bytes as the lines are. */
static void test_phase_snapshot(void **state)
{
	(void)state;
	char buf[256];
	tp_progress_phase("running %s (round %d of %d)", "gemm Small", 3, 10);
	assert_int_equal(tp_progress_phase_snapshot(buf, sizeof(buf)), 34);
	assert_string_equal(buf, "running gemm Small (round 3 of 10)");
	char small[8];
	assert_int_equal(tp_progress_phase_snapshot(small, sizeof(small)), 7);
	assert_string_equal(small, "running");
	tp_progress_phase("%s", "shorter");
	assert_int_equal(tp_progress_phase_snapshot(buf, sizeof(buf)), 7);
	assert_string_equal(buf, "shorter");
	char longer[300];
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	tp_progress_phase("%s", longer);
	assert_int_equal(tp_progress_phase_snapshot(buf, sizeof(buf)), 191);
	tp_progress_phase(NULL);
	assert_int_equal(tp_progress_phase_snapshot(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_phase_gets_lines),
		cmocka_unit_test(test_short_phase_and_off_print_nothing),
		cmocka_unit_test(test_phase_snapshot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
