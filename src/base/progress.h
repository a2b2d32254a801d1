/* SPDX-License-Identifier: MIT */
/*
 * base/progress.h — "still working on X" lines for long work.
 *
 * A command that may run for long turns it on (tp_progress_enable()); the
 * code it calls marks what it is doing (tp_progress_phase()). A phase that
 * is still running TP_PROGRESS_FIRST_NS after it began gets one line on
 * the stream, and another every TP_PROGRESS_EVERY_NS while it goes on:
 *
 *   taskprof run: generating the inputs of paged_attention Case1...
 *   taskprof run: running paged_attention Case1 on a2a3sim... (12 s)
 *
 * so short runs print nothing more, and a long one never sits silent for
 * more than 2 s. The lines come from one background thread; when progress
 * is off (the default, and in library use) a phase mark only formats its
 * text into a buffer under a mutex.
 */
#ifndef TASKPROF_BASE_PROGRESS_H
#define TASKPROF_BASE_PROGRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A phase gets its first line after this long (ns). */
#define TP_PROGRESS_FIRST_NS (2ull * 1000 * 1000 * 1000)
/* ... and one more every this long while it lasts (ns). */
#define TP_PROGRESS_EVERY_NS (10ull * 1000 * 1000 * 1000)

/**
 * tp_progress_enable() - start printing progress lines.
 * @prefix: put before each line ("taskprof run"); the pointer is kept, so
 *          it must outlive tp_progress_disable() (a string literal).
 * @stream: where the lines go (stderr); written and flushed by the
 *          background thread.
 *
 * A second call while on does nothing. A phase marked before this call
 * gets its first line a full delay after it.
 *
 * Return: 0; -errno when the thread could not be started (progress stays
 * off; nothing else changes).
 */
int tp_progress_enable(const char *prefix, FILE *stream);

/**
 * tp_progress_phase() - what the process is doing from now on.
 * @fmt: printf format of the phase ("running %s on %s"), at most 191
 *       bytes once formatted (longer is cut); NULL: nothing worth a line
 *       (between phases).
 *
 * Restarts the phase clock. Thread-safe; cheap. Not async-signal-safe.
 */
void tp_progress_phase(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * tp_progress_phase_snapshot() - the current phase's text, for a signal
 * handler ("running synthetic Default on a2a3sim (round 38 of 1000)").
 * @buf: receives the text, NUL-terminated ("" between phases)
 * @len: size of @buf in bytes
 *
 * Async-signal-safe (atomic loads only). When the phase is being changed
 * at that moment and stays so over a few attempts (a handler that
 * interrupted tp_progress_phase() itself), gives "".
 *
 * Return: the text's length in bytes (0: no phase, or none readable).
 */
size_t tp_progress_phase_snapshot(char *buf, size_t len);

/**
 * tp_progress_disable() - stop the lines and join the thread. A phase that
 * was announced is not closed with a line. Safe when progress is off.
 */
void tp_progress_disable(void);

/**
 * tp_progress_set_timing() - for tests: the delay of a phase's first line
 * and the period of the next ones. Applies from the next
 * tp_progress_phase().
 * @first_ns: delay of the first line, in ns; 0: TP_PROGRESS_FIRST_NS.
 * @every_ns: period of the next lines, in ns; 0: TP_PROGRESS_EVERY_NS.
 */
void tp_progress_set_timing(uint64_t first_ns, uint64_t every_ns);

#endif /* TASKPROF_BASE_PROGRESS_H */
