/* SPDX-License-Identifier: MIT */
/*
 * base/progress.c — progress lines for long work (base/progress.h).
 *
 * One mutex guards everything; the thread sleeps on a condition variable
 * (CLOCK_MONOTONIC) until the current phase's next line is due, a new
 * phase begins, or progress is turned off.
 */
#include "base/progress.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "base/error.h"

#define PHASE_MAX 192

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;
static pthread_t thread;
static bool on, stopping;
static const char *g_prefix;
static FILE *g_stream;
static char phase[PHASE_MAX]; /* "" between phases */
/* A copy of phase for signal handlers (tp_progress_phase_snapshot()),
 * published under a sequence count: odd while the copy is being written.
 * Written only under mu (one writer at a time). */
static _Atomic unsigned shown_seq;
static _Atomic char shown[PHASE_MAX];
static uint64_t first_ns = TP_PROGRESS_FIRST_NS, every_ns = TP_PROGRESS_EVERY_NS;
static uint64_t phase_start_ns, next_line_ns;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *progress_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	while (!stopping) {
		uint64_t now = mono_ns();
		if (phase[0] && now >= next_line_ns) {
			uint64_t s = (now - phase_start_ns) / 1000000000u;
			/* Printed under the lock: a phase mark waits at most for
			 * one short line. */
			if (now - phase_start_ns < every_ns)
				fprintf(g_stream, "%s: %s...\n", g_prefix, tp_shown(phase));
			else
				fprintf(g_stream, "%s: %s... (%llu s)\n", g_prefix, tp_shown(phase),
					(unsigned long long)s);
			fflush(g_stream);
			next_line_ns = now + every_ns;
			continue;
		}
		if (!phase[0]) {
			pthread_cond_wait(&cv, &mu);
			continue;
		}
		struct timespec dl = { (time_t)(next_line_ns / 1000000000u),
				       (long)(next_line_ns % 1000000000u) };
		pthread_cond_timedwait(&cv, &mu, &dl);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

int tp_progress_enable(const char *prefix, FILE *stream)
{
	pthread_mutex_lock(&mu);
	if (on) {
		pthread_mutex_unlock(&mu);
		return 0;
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cv, &ca);
	pthread_condattr_destroy(&ca);
	g_prefix = prefix;
	g_stream = stream;
	stopping = false;
	/* A phase marked while off gets its first line a full delay after
	 * progress came on, not at once. */
	next_line_ns = mono_ns() + first_ns;
	int rc = pthread_create(&thread, NULL, progress_main, NULL);
	if (rc) {
		pthread_cond_destroy(&cv);
		pthread_mutex_unlock(&mu);
		return -rc;
	}
	on = true;
	pthread_mutex_unlock(&mu);
	return 0;
}

/* Copy phase into shown. Caller holds mu. */
static void publish_phase(void)
{
	unsigned seq = atomic_load_explicit(&shown_seq, memory_order_relaxed);
	atomic_store_explicit(&shown_seq, seq + 1, memory_order_relaxed);
	/* Release fence: a reader that sees any byte written below also sees
	 * the odd count stored above (pairs with the reader's acquire fence
	 * before its second read of the count). */
	atomic_thread_fence(memory_order_release);
	size_t i = 0;
	do
		atomic_store_explicit(&shown[i], phase[i], memory_order_relaxed);
	while (phase[i++] && i < sizeof(phase));
	/* Release: the bytes above happen before the even count a reader
	 * acquires first. */
	atomic_store_explicit(&shown_seq, seq + 2, memory_order_release);
}

size_t tp_progress_phase_snapshot(char *buf, size_t len)
{
	if (!len)
		return 0;
	for (int attempt = 0; attempt < 64; attempt++) {
		/* Acquire: pairs with the writer's release store of the even
		 * count, so the bytes read below are at least that copy's. */
		unsigned s1 = atomic_load_explicit(&shown_seq, memory_order_acquire);
		if (s1 & 1)
			continue; /* being written (maybe by the thread this interrupted) */
		size_t n = 0;
		while (n + 1 < len && n < PHASE_MAX) {
			char c = atomic_load_explicit(&shown[n], memory_order_relaxed);
			if (!c)
				break;
			buf[n++] = c;
		}
		buf[n] = '\0';
		/* Acquire fence: the byte loads above are done before the count
		 * is read again (pairs with the writer's release fence). */
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&shown_seq, memory_order_relaxed) == s1)
			return n;
	}
	buf[0] = '\0';
	return 0;
}

void tp_progress_phase(const char *fmt, ...)
{
	pthread_mutex_lock(&mu);
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(phase, sizeof(phase), fmt, ap);
		va_end(ap);
	} else {
		phase[0] = '\0';
	}
	publish_phase();
	phase_start_ns = mono_ns();
	next_line_ns = phase_start_ns + first_ns;
	if (on)
		pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
}

void tp_progress_disable(void)
{
	pthread_mutex_lock(&mu);
	if (!on) {
		pthread_mutex_unlock(&mu);
		return;
	}
	stopping = true;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(thread, NULL);
	pthread_mutex_lock(&mu);
	pthread_cond_destroy(&cv);
	on = false;
	phase[0] = '\0';
	publish_phase();
	pthread_mutex_unlock(&mu);
}

void tp_progress_set_timing(uint64_t first, uint64_t every)
{
	pthread_mutex_lock(&mu);
	first_ns = first ? first : TP_PROGRESS_FIRST_NS;
	every_ns = every ? every : TP_PROGRESS_EVERY_NS;
	pthread_mutex_unlock(&mu);
}
