/* SPDX-License-Identifier: MIT */
/*
 * base/error.h — per-thread error messages behind the -errno convention.
 *
 * Code that fails records why and returns the code in one statement:
 *
 *     return tp_set_error(-EINVAL, "pmu.csv: line %d: expected %d columns",
 *                         line, want);
 *
 * The message lives in a thread-local buffer of TP_ERROR_MSG_MAX bytes, so
 * recording it never allocates and never fails; callers read it back with
 * tp_last_error() (declared in the public taskprof/taskprof.h).
 */
#ifndef TASKPROF_BASE_ERROR_H
#define TASKPROF_BASE_ERROR_H

#include "taskprof/taskprof.h"

/* Size of the per-thread message buffer, terminating NUL included. */
#define TP_ERROR_MSG_MAX 512

/**
 * tp_set_error() - record the calling thread's error message, pass @err on.
 * @err: the error code to return, by convention a negative errno (-EINVAL).
 *       It is not inspected or changed.
 * @fmt: printf format of the message; the message should name the file or
 *       object, the place, and what was expected. Arguments may include the
 *       current tp_last_error() string (it is formatted into a scratch
 *       buffer first), which lets a caller add context to a callee's error.
 *
 * The message replaces the thread's previous one and is truncated to
 * TP_ERROR_MSG_MAX - 1 bytes. It is also logged at DEBUG level.
 *
 * Return: @err, unchanged.
 */
int tp_set_error(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * tp_clear_error() - forget the calling thread's error message.
 *
 * Afterwards tp_last_error() returns "" on this thread. Other threads'
 * messages are not touched.
 */
void tp_clear_error(void);

#endif /* TASKPROF_BASE_ERROR_H */
