/* SPDX-License-Identifier: MIT */
/* Unit tests of base/thread: the stack size asked for (not ulimit -s's),
 * the name, the alternate signal stack a stack overflow's handler runs
 * on, and the test point that fails thread creations. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/sanitizer.h"
#include "base/thread.h"
#include "unit_helpers.h"

/* What a thread saw of itself. */
struct seen {
	size_t stack;       /* bytes, pthread_getattr_np() */
	char name[16];
	bool altstack;      /* an alternate signal stack is set */
};

static void *look(void *arg)
{
	struct seen *s = arg;
	pthread_attr_t a;
	void *lo;
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		pthread_attr_getstack(&a, &lo, &s->stack);
		pthread_attr_destroy(&a);
	}
	pthread_getname_np(pthread_self(), s->name, sizeof(s->name));
	stack_t ss;
	s->altstack = sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE);
	return s;
}

/* The stack is the size asked for (glibc's default would be RLIMIT_STACK,
 * 8 MiB under the usual ulimit -s), the name the one given, cut to the
 * kernel's 15 bytes; the alternate stack is set (not checked in
 * sanitizer builds: their runtime sets its own, or none). */
static void test_stack_name_altstack(void **state)
{
	(void)state;
	static const size_t sizes[] = { 256u << 10, 1u << 20, 3u << 20 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct seen s = { 0 };
		pthread_t th;
		void *ret = NULL;
		assert_int_equal(tp_thread_start(&th, "tp-test-a-long-name", sizes[i], look, &s), 0);
		assert_int_equal(pthread_join(th, &ret), 0);
		assert_ptr_equal(ret, &s); /* the body's result comes back */
		assert_true(s.stack >= sizes[i]);
		/* ThreadSanitizer's pthread_create adds room of its own. */
		if (!TP_SANITIZED)
			assert_true(s.stack < sizes[i] + (64u << 10));
		assert_string_equal(s.name, "tp-test-a-long-");
		if (!TP_SANITIZED)
			assert_true(s.altstack);
	}
	/* a size below the minimum is raised to it, not refused */
	struct seen s = { 0 };
	pthread_t th;
	assert_int_equal(tp_thread_start(&th, NULL, 1, look, &s), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(s.stack >= (size_t)PTHREAD_STACK_MIN);
}

/* The test point: calls before the @nth succeed, the @nth and every later
 * one fail with the errno given and create no thread; 0 ends it. */
static void test_fail_point(void **state)
{
	(void)state;
	struct seen s = { 0 };
	pthread_t th;
	tp_thread_test_fail_start(2, EAGAIN);
	assert_int_equal(tp_thread_start(&th, "tp-test-ok", 1u << 20, look, &s), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tp_thread_start(&th, "tp-test-no", 1u << 20, look, &s), -EAGAIN);
	tp_thread_test_fail_start(0, 0);
	assert_int_equal(tp_thread_start(&th, "tp-test-ok", 1u << 20, look, &s), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
}

/* Teardown: a failed check must not leave the test point on. */
static int threads_back(void **state)
{
	(void)state;
	tp_thread_test_fail_start(0, 0);
	return 0;
}

static void on_segv(int sig)
{
	(void)sig;
	static const char msg[] = "handled\n";
	ssize_t n = write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(n == (ssize_t)sizeof(msg) - 1 ? 42 : 43);
}

/* @depth frames of about 256 bytes each, never optimised into a loop (the
 * frame is used after the call): 1 << 24 of them overflow any thread's
 * stack. Small frames: the first fault is in the guard page, where the
 * kernel cannot push the handler's frame either (a frame larger than the
 * guard could step over it into another mapping, and the handler would
 * run without an alternate stack). */
static int recurse(volatile char *up, unsigned depth)
{
	volatile char frame[256];
	frame[0] = up ? up[0] : 1;
	if (!depth)
		return frame[0];
	frame[sizeof(frame) - 1] = frame[0];
	return recurse(frame, depth - 1) + frame[sizeof(frame) - 1];
}

static void *overflow(void *arg)
{
	(void)arg;
	recurse(NULL, 1u << 24);
	return NULL;
}

/* A thread that overflows its stack still runs a SA_ONSTACK handler (as
 * cli/interrupt.c installs): without the alternate stack the handler's
 * own frame faults and the process dies by SIGSEGV without a word. In a
 * child; not in sanitizer builds, whose runtime takes the signal. */
static void test_overflow_reaches_handler(void **state)
{
	(void)state;
	if (TP_SANITIZED) {
		skip();
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, STDOUT_FILENO);
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_segv;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_ONSTACK;
		sigaction(SIGSEGV, &sa, NULL);
		pthread_t th;
		if (tp_thread_start(&th, "tp-test-deep", 128u << 10, overflow, NULL))
			_exit(2);
		pthread_join(th, NULL);
		_exit(3); /* not reached: the recursion never returns */
	}
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_name_altstack),
		cmocka_unit_test_teardown(test_fail_point, threads_back),
		cmocka_unit_test(test_overflow_reaches_handler),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
