/* SPDX-License-Identifier: MIT */
/*
 * base/thread.c — see thread.h.
 */
#include "base/thread.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/sanitizer.h"

/* What the new thread needs before it runs its body; freed by it. */
struct start {
	void *(*fn)(void *);
	void *arg;
	char name[16]; /* "" : keep the creator's */
};

/* Test point (tp_thread_test_fail_start()): calls left before the first
 * that fails (0: none fail), and their errno. Relaxed: set by a test
 * before it starts what it checks; no other data hangs on them. */
static atomic_int g_fail_in;
static atomic_int g_fail_err;

void *tp_altstack_begin(void)
{
	if (TP_SANITIZED)
		return NULL;
	size_t n = 64u << 10;
	if (n < (size_t)SIGSTKSZ)
		n = (size_t)SIGSTKSZ;
	void *mem = malloc(n);
	if (!mem)
		return NULL;
	stack_t ss = { .ss_sp = mem, .ss_size = n, .ss_flags = 0 };
	if (sigaltstack(&ss, NULL) != 0) {
		free(mem);
		return NULL;
	}
	return mem;
}

void tp_altstack_end(void *mem)
{
	if (!mem)
		return;
	stack_t ss = { .ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE };
	sigaltstack(&ss, NULL);
	free(mem);
}

static void *start_main(void *p)
{
	struct start st = *(struct start *)p;
	free(p);
	/* Named here, not by the creator after pthread_create(): a crash
	 * at the body's first instruction already shows the name. */
	if (st.name[0])
		pthread_setname_np(pthread_self(), st.name);
	void *alt = tp_altstack_begin();
	void *ret = st.fn(st.arg);
	tp_altstack_end(alt);
	return ret;
}

/* Whether the test point makes this call fail; its errno in *@err. */
static bool test_fails(int *err)
{
	/* Relaxed: see g_fail_in. */
	int left = atomic_load_explicit(&g_fail_in, memory_order_relaxed);
	if (left <= 0)
		return false;
	if (left > 1) {
		atomic_store_explicit(&g_fail_in, left - 1, memory_order_relaxed);
		return false;
	}
	*err = atomic_load_explicit(&g_fail_err, memory_order_relaxed);
	return true; /* and every later call, until cleared */
}

int tp_thread_start(pthread_t *th, const char *name, size_t stack,
		    void *(*fn)(void *), void *arg)
{
	int err;
	if (test_fails(&err))
		return -err;
	struct start *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->fn = fn;
	st->arg = arg;
	if (name) {
		strncpy(st->name, name, sizeof(st->name) - 1);
		st->name[sizeof(st->name) - 1] = '\0';
	}
	if (stack < (size_t)PTHREAD_STACK_MIN)
		stack = (size_t)PTHREAD_STACK_MIN;
	pthread_attr_t attr;
	err = pthread_attr_init(&attr);
	if (!err) {
		err = pthread_attr_setstacksize(&attr, stack);
		if (!err)
			err = pthread_create(th, &attr, start_main, st);
		pthread_attr_destroy(&attr);
	}
	if (err) {
		free(st);
		return -err;
	}
	return 0;
}

void tp_thread_test_fail_start(int nth, int err)
{
	/* Relaxed: see g_fail_in. */
	atomic_store_explicit(&g_fail_err, err, memory_order_relaxed);
	atomic_store_explicit(&g_fail_in, nth > 0 ? nth : 0, memory_order_relaxed);
}
