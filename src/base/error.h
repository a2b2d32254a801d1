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
 * recording it never fails; callers read it back with tp_last_error()
 * (declared in the public taskprof/taskprof.h). The buffer holds two
 * PATH_MAX paths plus the text around them; a longer message is shortened
 * in the middle ("…"), so its end — the reason — always survives.
 */
#ifndef TASKPROF_BASE_ERROR_H
#define TASKPROF_BASE_ERROR_H

#include "taskprof/taskprof.h"

#include <stddef.h>

/* Size of the per-thread message buffer, terminating NUL included: two
 * PATH_MAX (4096) paths and 512 bytes of text, so that "<path>: cannot
 * rename <tmp> into place: <reason>" fits whole. */
#define TP_ERROR_MSG_MAX (2 * 4096 + 512)

/* Size of the message buffers kept per AICore (struct tp_core_ctx, the
 * runtime's per-core block results): a kernel's tile errors name ops,
 * cores and tiles, never paths, and there are up to 108 cores. Copies into
 * them go through tp_error_fit(). */
#define TP_CORE_ERROR_MSG_MAX 512

/**
 * tp_set_error() - record the calling thread's error message, pass @err on.
 * @err: the error code to return, by convention a negative errno (-EINVAL).
 *       It is not inspected or changed.
 * @fmt: printf format of the message; the message should name the file or
 *       object, the place, and what was expected. Arguments may include the
 *       current tp_last_error() string (it is formatted into a scratch
 *       buffer first), which lets a caller add context to a callee's error.
 *
 * The message replaces the thread's previous one. One longer than
 * TP_ERROR_MSG_MAX - 1 bytes is shortened as tp_error_fit() does (its
 * middle becomes "…"; this formats it twice and allocates it once; without
 * memory its end is cut instead). A message is one line: a control
 * character in it (a newline in a path it quotes) is stored as its C
 * escape: backslash-n, backslash-t, backslash-r, else backslash-x and two
 * hex digits. It is also logged at DEBUG level.
 *
 * Return: @err, unchanged.
 */
int tp_set_error(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * tp_escape_controls() - @src with each control character as its C escape.
 * @dst: where to write; may be NULL when @cap is 0 (to size the result).
 * @cap: bytes at @dst, the terminating NUL included.
 * @src: the string.
 *
 * A byte below 0x20 or 0x7f becomes backslash-n, backslash-t, backslash-r,
 * else backslash-x and two hex digits; other bytes (UTF-8 included) are
 * copied. An escape that does not fit whole is left out with all that
 * follows. No allocation, no locale, no errno: safe in a signal handler.
 *
 * Return: the length of the whole escaped string, without its NUL (as
 * snprintf: a result >= @cap means @dst holds a cut copy).
 */
size_t tp_escape_controls(char *dst, size_t cap, const char *src);

/**
 * tp_shown() - @s as a message shows it: on one line.
 * @s: a string a message quotes (a path, a name from an input); NULL
 *     shows as "(null)".
 *
 * For messages printed directly rather than through tp_set_error(),
 * which does this itself: a control character is shown as its C escape
 * (backslash-n, backslash-t, backslash-r, else backslash-x and two hex
 * digits); a string longer than TP_ERROR_MSG_MAX - 1 bytes is shortened
 * as tp_error_fit() does.
 *
 * Return: @s itself when it has no control character, else an escaped
 * copy in one of four thread-local buffers used in turn (valid until the
 * fourth call after this one on the same thread).
 */
const char *tp_shown(const char *s);

/**
 * tp_clear_error() - forget the calling thread's error message.
 *
 * Afterwards tp_last_error() returns "" on this thread. Other threads'
 * messages are not touched.
 */
void tp_clear_error(void);

/**
 * tp_error_fit() - copy message @src into @dst, shortening its middle.
 * @dst: destination, @cap bytes.
 * @cap: size of @dst in bytes, terminating NUL included; 0 writes nothing.
 * @src: NUL-terminated message.
 *
 * When @src does not fit, its first eighth of @cap and as much of its end
 * as fits are kept, joined by "…" (U+2026, 3 bytes): a message names the
 * file first and says why last, and the why is what must not be lost. The
 * cuts never split a UTF-8 sequence. Async-signal-safe (no locale, no
 * allocation).
 *
 * Return: the length of @dst's string in bytes.
 */
size_t tp_error_fit(char *dst, size_t cap, const char *src);

/**
 * tp_thread_activity_set() - say what the calling thread runs on behalf of
 * the user's case, for the crash report (cli/interrupt.c): e.g. "the
 * case's generate()". @what: a string that outlives the activity (a
 * literal), or NULL when the thread is back in taskprof's own code.
 */
void tp_thread_activity_set(const char *what);

/**
 * tp_thread_activity() - the calling thread's activity (NULL: none).
 * Async-signal-safe: one read of an initial-exec thread-local variable.
 */
const char *tp_thread_activity(void);

/**
 * tp_mem_limit_note() - what to add to an out-of-memory error when the
 * process's address space is limited (RLIMIT_AS, `ulimit -v`): the usual
 * cause on a machine with memory to spare.
 *
 * Return: " (this process's address space is limited to N MiB: ulimit
 * -v)" with N the soft limit in MiB, or "" when it is unlimited (or
 * unknown). A thread-local string, valid until the thread's next call.
 */
const char *tp_mem_limit_note(void);

/**
 * tp_thread_limit_note() - what to add to the error of a pthread_create()
 * that failed with @err (a positive errno).
 *
 * Return: " (the process's thread limit, ulimit -u, or the address space
 * for thread stacks, ulimit -v)" for EAGAIN, the usual cause, or, when the
 * stack size limit (ulimit -s) is 1 GiB or more, which every thread
 * created without a size takes as its stack, a note naming it; "" for any
 * other @err. A static or thread-local string, valid until the thread's
 * next call.
 */
const char *tp_thread_limit_note(int err);

#endif /* TASKPROF_BASE_ERROR_H */
