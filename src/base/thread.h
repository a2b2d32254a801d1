/* SPDX-License-Identifier: MIT */
/*
 * base/thread.h — threads of taskprof's own code whose stack does not
 * depend on the user's stack limit, and alternate signal stacks.
 *
 * glibc gives a thread created without attributes a stack of
 * RLIMIT_STACK (ulimit -s) bytes: a limit meant for the main thread
 * becomes every thread's, so `ulimit -s 40` made a 40 KiB stack for the
 * swimlane converter's deps.json reader, which needs more. A thread that
 * overflows its stack without an alternate signal stack cannot run the
 * crash handler (cli/interrupt.h) either: the second fault kills the
 * process without a word.
 */
#ifndef TASKPROF_BASE_THREAD_H
#define TASKPROF_BASE_THREAD_H

#include <pthread.h>
#include <stddef.h>

/**
 * tp_thread_start() - pthread_create() with a stack of a fixed size and
 * an alternate signal stack.
 * @th:    where the thread's id goes, for pthread_join().
 * @name:  the thread's name as top -H, gdb and the crash line show it,
 *         e.g. "tp-swl-deps" (the kernel keeps 15 bytes); NULL: the
 *         creator's name.
 * @stack: bytes of stack, whatever ulimit -s says; raised to
 *         PTHREAD_STACK_MIN, rounded up to whole pages by glibc. Only the
 *         pages the thread touches take memory.
 * @fn:    the thread's body, as for pthread_create().
 * @arg:   its argument.
 *
 * @fn runs with a 64 KiB alternate signal stack (tp_altstack_begin()),
 * so that an overflow of @stack is reported by a handler installed with
 * SA_ONSTACK (best effort: none when its memory cannot be had). Not in
 * sanitizer builds, whose runtime sets its own.
 *
 * Return: 0, or a negative errno: that of pthread_create() (-EAGAIN: the
 * thread limit, ulimit -u, or no address space left for the stack) or
 * -ENOMEM (no memory for the thread's start block). Sets no tp_last_error()
 * message; tp_thread_limit_note() (base/error.h) names the usual cause.
 */
int tp_thread_start(pthread_t *th, const char *name, size_t stack,
		    void *(*fn)(void *), void *arg);

/**
 * tp_altstack_begin() - give the calling thread a 64 KiB alternate
 * signal stack (at least SIGSTKSZ), for a crash handler installed with
 * SA_ONSTACK (cli/interrupt.h) to run after a stack overflow.
 *
 * Return: the memory to pass to tp_altstack_end(), or NULL (none set: no
 * memory, or a sanitizer build, whose runtime sets its own).
 */
void *tp_altstack_begin(void);

/**
 * tp_altstack_end() - remove the calling thread's alternate signal stack
 * set by tp_altstack_begin() and free it.
 * @mem: what tp_altstack_begin() returned (NULL: nothing to do).
 */
void tp_altstack_end(void *mem);

/**
 * tp_thread_test_fail_start() - test point: make the @nth next call of
 * tp_thread_start() (1-based) and every later one fail with -@err (a
 * positive errno, e.g. EAGAIN) without creating a thread, as once the
 * thread limit (ulimit -u) is reached; @nth 0 ends it. For unit tests of
 * the callers' fallbacks.
 */
void tp_thread_test_fail_start(int nth, int err);

#endif /* TASKPROF_BASE_THREAD_H */
