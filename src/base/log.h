/* SPDX-License-Identifier: MIT */
/*
 * base/log.h — leveled logging to stderr.
 *
 * Levels (ARCHITECTURE.md §4): DEBUG 10, INFO 20, TIMING 25, WARN 30,
 * ERROR 40. A line is written when its level is >= the threshold. The
 * threshold is TIMING (25) unless the environment variable
 * TASKPROF_LOG_LEVEL names another one (a number, or DEBUG / INFO / TIMING /
 * WARN / WARNING / ERROR in any case), read once on first use, or
 * tp_log_set_threshold() sets it.
 *
 * Lines look like "[taskprof] WARN  message\n" and are written with a single
 * write(2), so lines from different threads never interleave.
 *
 * Use the macros: they test the threshold (one relaxed atomic load) before
 * evaluating any argument.
 */
#ifndef TASKPROF_BASE_LOG_H
#define TASKPROF_BASE_LOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

enum tp_log_level {
	TP_LOG_DEBUG = 10,
	TP_LOG_INFO = 20,
	TP_LOG_TIMING = 25,
	TP_LOG_WARN = 30,
	TP_LOG_ERROR = 40,
};

/* Threshold used when TASKPROF_LOG_LEVEL is unset or invalid. */
#define TP_LOG_DEFAULT_THRESHOLD TP_LOG_TIMING

/**
 * tp_log() - write one log line if @level passes the threshold.
 * @level: a tp_log_level value, or any int (unnamed levels print as "L<n>").
 * @fmt:   printf format of the message, without trailing newline.
 *
 * Formats "[taskprof] <LEVEL> <message>\n" (level name padded to 6 columns)
 * and writes it to stderr with one write(2); the message is then also given
 * to the hook installed by tp_log_set_hook(), if any. Messages of any
 * length are written whole (longer ones are formatted on the heap; if that
 * allocation fails the message is cut to 1 KiB). Thread-safe; errno is
 * preserved. Write errors are ignored: logging never fails its caller.
 */
void tp_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * tp_log_threshold() - the current threshold.
 *
 * Return: the lowest level that is written. On first use this reads
 * TASKPROF_LOG_LEVEL (see tp_log_parse_level()); if the value is invalid
 * the threshold stays TP_LOG_DEFAULT_THRESHOLD and one WARN line says so.
 */
int tp_log_threshold(void);

/**
 * tp_log_set_threshold() - set the threshold for every thread.
 * @level: lowest level to write from now on (any int; 0 writes everything).
 *
 * Takes precedence over TASKPROF_LOG_LEVEL even when called before the
 * first log call.
 */
void tp_log_set_threshold(int level);

/* The longest first-ERROR text kept, NUL included (bytes). */
#define TP_LOG_FIRST_ERROR_MAX 512

/**
 * tp_log_first_error_reset() - forget the first ERROR message kept, so
 * that tp_log_first_error() reports the first one logged from now on
 * (a run's start: its interrupt path says the run's own first error).
 * Not to be called while another thread may log an ERROR.
 */
void tp_log_first_error_reset(void);

/**
 * tp_log_first_error() - the first message written at TP_LOG_ERROR since
 * the process started or tp_log_first_error_reset(), without prefix, its
 * newlines made blanks, cut to TP_LOG_FIRST_ERROR_MAX - 1 bytes.
 * Async-signal-safe (an atomic load and a byte copy): for an interrupt
 * handler's result.txt (cli/interrupt.c). A message being copied when
 * called is not reported.
 * @buf: receives it, NUL-terminated ("" when there is none).
 * @len: size of @buf in bytes; 0 writes nothing.
 * Return: its length in bytes (0: none).
 */
size_t tp_log_first_error(char *buf, size_t len);

/**
 * tp_log_parse_level() - parse a level as TASKPROF_LOG_LEVEL accepts it.
 * @text:      a decimal number (0..1000) or one of DEBUG, INFO, TIMING,
 *             WARN, WARNING, ERROR in any case; surrounding blanks allowed.
 * @level_out: receives the level on success; untouched on failure.
 *
 * Return: 0, or -EINVAL when @text is NULL, empty, or neither form.
 */
int tp_log_parse_level(const char *text, int *level_out);

/**
 * tp_log_level_name() - printable name of a level.
 * @level: any int.
 *
 * Return: "DEBUG", "INFO", "TIMING", "WARN" or "ERROR" for the named levels,
 * NULL for any other value.
 */
const char *tp_log_level_name(int level);

/**
 * typedef tp_log_hook_fn - receives each written message (tests, embedders).
 * @level: the message's level.
 * @msg:   the formatted message without prefix and newline; valid only
 *         during the call.
 * @ud:    the pointer given to tp_log_set_hook().
 */
typedef void (*tp_log_hook_fn)(int level, const char *msg, void *ud);

/**
 * tp_log_set_hook() - also give every written line to @hook.
 * @hook: called after the line is written to stderr, for every message that
 *        passes the threshold; NULL removes the current hook.
 * @ud:   passed to @hook unchanged.
 *
 * Calls to the hook are serialised by a mutex, and once this function
 * returns the previous hook is not running and will not be called again, so
 * @ud may then be freed. A hook may call tp_log(): such nested messages go
 * to stderr but not to the hook.
 */
void tp_log_set_hook(tp_log_hook_fn hook, void *ud);

/* Private state behind tp_log_enabled(); use the functions above. */
#define TP_LOG_THRESHOLD_UNSET (-2147483647 - 1)
extern atomic_int tp_log_threshold_state_;
int tp_log_threshold_init_slow_(void);

/**
 * tp_log_enabled() - whether a message of @level would be written.
 * @level: any int.
 *
 * Inline because every TP_* macro calls it on paths that must stay cheap
 * when the level is off: one relaxed atomic load and a compare (a relaxed
 * load suffices: the threshold guards no other data).
 *
 * Return: true when @level >= the current threshold.
 */
static inline bool tp_log_enabled(int level)
{
	int t = atomic_load_explicit(&tp_log_threshold_state_,
				     memory_order_relaxed);
	if (__builtin_expect(t == TP_LOG_THRESHOLD_UNSET, 0))
		t = tp_log_threshold_init_slow_();
	return level >= t;
}

#define TP_LOG_AT_(level, ...)                                        \
	do {                                                          \
		if (tp_log_enabled(level))                            \
			tp_log((level), __VA_ARGS__);                 \
	} while (0)

#define TP_DEBUG(...)  TP_LOG_AT_(TP_LOG_DEBUG, __VA_ARGS__)
#define TP_INFO(...)   TP_LOG_AT_(TP_LOG_INFO, __VA_ARGS__)
#define TP_TIMING(...) TP_LOG_AT_(TP_LOG_TIMING, __VA_ARGS__)
#define TP_WARN(...)   TP_LOG_AT_(TP_LOG_WARN, __VA_ARGS__)
/* Always formatted: below the threshold it is still kept as the first
 * error (tp_log_first_error()); errors are rare. */
#define TP_ERROR(...)  tp_log(TP_LOG_ERROR, __VA_ARGS__)

#endif /* TASKPROF_BASE_LOG_H */
