/* SPDX-License-Identifier: MIT */
#include "base/log.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/error.h"

#define LOG_PREFIX "[taskprof] "
#define LOG_NAME_WIDTH 6
#define LOG_STACK_LINE 1024
#define LOG_ENV "TASKPROF_LOG_LEVEL"

atomic_int tp_log_threshold_state_ = TP_LOG_THRESHOLD_UNSET;

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
/* Set by the once routine when TASKPROF_LOG_LEVEL was invalid; the warning
 * is printed after pthread_once returns, because tp_log() from inside the
 * once routine would re-enter pthread_once and deadlock. */
static atomic_bool env_warn_pending;
static char env_bad_value[64];

static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static tp_log_hook_fn hook_fn;      /* guarded by hook_lock */
static void *hook_ud;               /* guarded by hook_lock */
/* Lets tp_log() skip the mutex when no hook is installed. Relaxed: a line
 * racing with tp_log_set_hook() may or may not reach the new hook, and
 * hook_fn itself is read under hook_lock. */
static atomic_bool hook_installed;
static _Thread_local bool in_hook;

static const struct {
	const char *name;
	int level;
} level_names[] = {
	{ "DEBUG", TP_LOG_DEBUG },
	{ "INFO", TP_LOG_INFO },
	{ "TIMING", TP_LOG_TIMING },
	{ "WARN", TP_LOG_WARN },
	{ "WARNING", TP_LOG_WARN },
	{ "ERROR", TP_LOG_ERROR },
};

const char *tp_log_level_name(int level)
{
	switch (level) {
	case TP_LOG_DEBUG: return "DEBUG";
	case TP_LOG_INFO: return "INFO";
	case TP_LOG_TIMING: return "TIMING";
	case TP_LOG_WARN: return "WARN";
	case TP_LOG_ERROR: return "ERROR";
	default: return NULL;
	}
}

int tp_log_parse_level(const char *text, int *level_out)
{
	if (!text)
		return -EINVAL;
	while (isspace((unsigned char)*text))
		text++;
	size_t len = strlen(text);
	while (len > 0 && isspace((unsigned char)text[len - 1]))
		len--;
	if (len == 0)
		return -EINVAL;

	if (isdigit((unsigned char)text[0])) {
		long v = 0;
		for (size_t i = 0; i < len; i++) {
			if (!isdigit((unsigned char)text[i]))
				return -EINVAL;
			v = v * 10 + (text[i] - '0');
			if (v > 1000)
				return -EINVAL;
		}
		*level_out = (int)v;
		return 0;
	}

	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strlen(level_names[i].name) == len &&
		    strncasecmp(level_names[i].name, text, len) == 0) {
			*level_out = level_names[i].level;
			return 0;
		}
	}
	return -EINVAL;
}

static void env_init_once(void)
{
	const char *env = getenv(LOG_ENV);
	int level = TP_LOG_DEFAULT_THRESHOLD;

	/* An empty value counts as unset. */
	if (env && *env && tp_log_parse_level(env, &level) != 0) {
		level = TP_LOG_DEFAULT_THRESHOLD;
		snprintf(env_bad_value, sizeof(env_bad_value), "%s", env);
		atomic_store_explicit(&env_warn_pending, true,
				      memory_order_relaxed);
	}

	/* CAS, not store: an explicit tp_log_set_threshold() that ran first
	 * wins over the environment. */
	int expected = TP_LOG_THRESHOLD_UNSET;
	atomic_compare_exchange_strong_explicit(&tp_log_threshold_state_,
						&expected, level,
						memory_order_relaxed,
						memory_order_relaxed);
}

int tp_log_threshold_init_slow_(void)
{
	pthread_once(&env_once, env_init_once);
	if (atomic_exchange_explicit(&env_warn_pending, false,
				     memory_order_relaxed))
		tp_log(TP_LOG_WARN,
		       "%s='%s' is not a level (expected a number or "
		       "DEBUG/INFO/TIMING/WARN/ERROR); using %s (%d)",
		       LOG_ENV, tp_shown(env_bad_value),
		       tp_log_level_name(TP_LOG_DEFAULT_THRESHOLD),
		       TP_LOG_DEFAULT_THRESHOLD);
	return atomic_load_explicit(&tp_log_threshold_state_,
				    memory_order_relaxed);
}

int tp_log_threshold(void)
{
	int t = atomic_load_explicit(&tp_log_threshold_state_,
				     memory_order_relaxed);
	if (t == TP_LOG_THRESHOLD_UNSET)
		t = tp_log_threshold_init_slow_();
	return t;
}

void tp_log_set_threshold(int level)
{
	/* INT_MIN is the "not read yet" marker; it means "everything" anyway. */
	if (level == TP_LOG_THRESHOLD_UNSET)
		level++;
	atomic_store_explicit(&tp_log_threshold_state_, level,
			      memory_order_relaxed);
}

void tp_log_set_hook(tp_log_hook_fn hook, void *ud)
{
	pthread_mutex_lock(&hook_lock);
	hook_fn = hook;
	hook_ud = hook ? ud : NULL;
	atomic_store_explicit(&hook_installed, hook != NULL,
			      memory_order_relaxed);
	pthread_mutex_unlock(&hook_lock);
}

/* The first ERROR message since tp_log_first_error_reset(), for signal
 * handlers (tp_log_first_error()): first_err_state is FE_EMPTY, FE_WRITING
 * (one thread copies the text) or FE_SET (first_err is complete). */
enum { FE_EMPTY, FE_WRITING, FE_SET };
static _Atomic int first_err_state;
static char first_err[TP_LOG_FIRST_ERROR_MAX];

static void keep_first_error(const char *msg)
{
	int want = FE_EMPTY;
	/* relaxed: the CAS only elects the one writer; what it writes is
	 * published by the release store below. */
	if (!atomic_compare_exchange_strong_explicit(&first_err_state, &want, FE_WRITING,
						     memory_order_relaxed, memory_order_relaxed))
		return;
	/* Too long: its middle gives way, not its end (where a message
	 * says why), cut between UTF-8 characters. */
	const size_t len = strlen(msg), cap = sizeof(first_err) - 1;
	size_t head = len, tail = len;
	if (len > cap) {
		head = (cap - 5) / 2;
		while (head && ((unsigned char)msg[head] & 0xC0) == 0x80)
			head--;
		tail = len - (cap - 5 - head);
		while (tail < len && ((unsigned char)msg[tail] & 0xC0) == 0x80)
			tail++;
	}
	size_t n = 0;
	for (size_t i = 0; i < head; i++)
		first_err[n++] = msg[i];
	if (head < len) {
		memcpy(first_err + n, " ... ", 5);
		n += 5;
		for (size_t i = tail; i < len; i++)
			first_err[n++] = msg[i];
	}
	first_err[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (first_err[i] == '\n' || first_err[i] == '\r')
			first_err[i] = ' ';
	/* release: the text above happens before a reader's acquire load
	 * that sees FE_SET. */
	atomic_store_explicit(&first_err_state, FE_SET, memory_order_release);
}

void tp_log_first_error_reset(void)
{
	/* relaxed: the caller guarantees no ERROR is being logged now. */
	atomic_store_explicit(&first_err_state, FE_EMPTY, memory_order_relaxed);
}

size_t tp_log_first_error(char *buf, size_t len)
{
	if (!len)
		return 0;
	size_t n = 0;
	/* acquire: pairs with keep_first_error()'s release store. */
	if (atomic_load_explicit(&first_err_state, memory_order_acquire) == FE_SET)
		for (; first_err[n] && n + 1 < len; n++)
			buf[n] = first_err[n];
	buf[n] = '\0';
	return n;
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		buf += n;
		len -= (size_t)n;
	}
}

static void call_hook(int level, const char *msg)
{
	if (!atomic_load_explicit(&hook_installed, memory_order_relaxed) ||
	    in_hook)
		return;
	pthread_mutex_lock(&hook_lock);
	if (hook_fn) {
		in_hook = true;
		hook_fn(level, msg, hook_ud);
		in_hook = false;
	}
	pthread_mutex_unlock(&hook_lock);
}

void tp_log(int level, const char *fmt, ...)
{
	if (!tp_log_enabled(level)) {
		/* An ERROR below the threshold is still the run's first error
		 * for the interrupt path (tp_log_first_error()). */
		/* relaxed: only spares the formatting once one is kept; the
		 * CAS in keep_first_error() decides. */
		if (level == TP_LOG_ERROR &&
		    atomic_load_explicit(&first_err_state, memory_order_relaxed) == FE_EMPTY) {
			char msg[TP_LOG_FIRST_ERROR_MAX * 2];
			va_list ap;
			va_start(ap, fmt);
			int saved_errno = errno;
			vsnprintf(msg, sizeof(msg), fmt, ap);
			errno = saved_errno;
			va_end(ap);
			keep_first_error(msg);
		}
		return;
	}

	int saved_errno = errno;
	char stack_line[LOG_STACK_LINE];
	char unnamed[16];
	const char *name = tp_log_level_name(level);
	if (!name) {
		snprintf(unnamed, sizeof(unnamed), "L%d", level);
		name = unnamed;
	}

	/* Name padded to LOG_NAME_WIDTH, but always followed by a blank. */
	int name_len = (int)strlen(name);
	int pad = name_len < LOG_NAME_WIDTH ? LOG_NAME_WIDTH - name_len : 1;
	int plen = snprintf(stack_line, sizeof(stack_line), LOG_PREFIX "%s%*s",
			    name, pad, "");

	/* Room for the message, its newline and vsnprintf's NUL. */
	size_t room = sizeof(stack_line) - (size_t)plen - 1;
	va_list ap;
	va_start(ap, fmt);
	int mlen = vsnprintf(stack_line + plen, room, fmt, ap);
	va_end(ap);
	if (mlen < 0) {
		mlen = 0;
		stack_line[plen] = '\0';
	}

	char *line = stack_line;
	char *heap_line = NULL;
	if ((size_t)mlen >= room) {
		heap_line = malloc((size_t)plen + (size_t)mlen + 2);
		if (heap_line) {
			memcpy(heap_line, stack_line, (size_t)plen);
			va_start(ap, fmt);
			vsnprintf(heap_line + plen, (size_t)mlen + 1, fmt, ap);
			va_end(ap);
			line = heap_line;
		} else {
			mlen = (int)room - 1;
		}
	}

	size_t end = (size_t)plen + (size_t)mlen;
	line[end] = '\n';
	write_all(STDERR_FILENO, line, end + 1);
	line[end] = '\0';
	if (level == TP_LOG_ERROR)
		keep_first_error(line + plen);
	call_hook(level, line + plen);

	free(heap_line);
	errno = saved_errno;
}
