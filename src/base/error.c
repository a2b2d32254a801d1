/* SPDX-License-Identifier: MIT */
#include "base/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/resource.h>

#include "base/log.h"

static _Thread_local char tp_error_msg[TP_ERROR_MSG_MAX];

static const char ellipsis[] = "\xe2\x80\xa6"; /* U+2026 in UTF-8 */
#define ELLIPSIS_LEN (sizeof(ellipsis) - 1)

static bool utf8_cont(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

size_t tp_error_fit(char *dst, size_t cap, const char *src)
{
	if (!cap)
		return 0;
	size_t len = strlen(src);
	if (len < cap) {
		memmove(dst, src, len + 1);
		return len;
	}
	if (cap <= ELLIPSIS_LEN + 2) { /* no room for an ellipsis: plain cut */
		size_t n = cap - 1;
		while (n && utf8_cont(src[n]))
			n--;
		memmove(dst, src, n);
		dst[n] = '\0';
		return n;
	}
	size_t room = cap - 1 - ELLIPSIS_LEN;
	size_t head = cap / 8 ? cap / 8 : 1;
	if (head > room - 1)
		head = room - 1;
	/* The head ends before a character, the tail starts on one. */
	while (head && utf8_cont(src[head]))
		head--;
	size_t tail = len - (room - head);
	while (tail < len && utf8_cont(src[tail]))
		tail++;
	size_t tlen = len - tail;
	/* src may be dst (shortening in place): move the tail first, it goes
	 * left and lands beyond the head. */
	memmove(dst + head + ELLIPSIS_LEN, src + tail, tlen + 1);
	if (dst != src)
		memmove(dst, src, head);
	memcpy(dst + head, ellipsis, ELLIPSIS_LEN);
	return head + ELLIPSIS_LEN + tlen;
}

size_t tp_escape_controls(char *dst, size_t cap, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	size_t need = 0, o = 0;
	bool full = cap == 0;
	for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
		char e[4] = { (char)*p };
		size_t n = 1;
		if (*p < 0x20 || *p == 0x7f) {
			e[0] = '\\';
			e[1] = *p == '\n' ? 'n' : *p == '\t' ? 't' : *p == '\r' ? 'r' : 'x';
			n = 2;
			if (e[1] == 'x') {
				e[2] = hex[*p >> 4];
				e[3] = hex[*p & 0xf];
				n = 4;
			}
		}
		need += n;
		/* an escape is written whole or not at all */
		if (!full && o + n < cap) {
			memcpy(dst + o, e, n);
			o += n;
		} else {
			full = true;
		}
	}
	if (cap)
		dst[o] = '\0';
	return need;
}

/* A message is one line: a control character in it (a newline in a path
 * or a name the message quotes, a tab in the input it shows) is written
 * as its C escape. The escaped message can be up to 4 times longer; it is
 * fitted back into @cap bytes as any long message is. Without memory for
 * that, each becomes '?'. */
static void escape_controls(char *msg, size_t cap)
{
	const size_t len = strlen(msg);
	const size_t need = tp_escape_controls(NULL, 0, msg);
	if (need == len)
		return;
	char *esc = malloc(need + 1);
	if (!esc) {
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
				msg[i] = '?';
		return;
	}
	tp_escape_controls(esc, need + 1, msg);
	tp_error_fit(msg, cap, esc);
	free(esc);
}

const char *tp_shown(const char *s)
{
	/* Four in turn: a message may show a few strings. */
	static _Thread_local char ring[4][TP_ERROR_MSG_MAX];
	static _Thread_local unsigned next;
	if (!s)
		return "(null)";
	const char *c = s;
	while (*c && (unsigned char)*c >= 0x20 && *c != 0x7f)
		c++;
	if (!*c)
		return s;
	char *out = ring[next++ % 4];
	tp_error_fit(out, TP_ERROR_MSG_MAX, s);
	escape_controls(out, TP_ERROR_MSG_MAX);
	return out;
}

int tp_set_error(int err, const char *fmt, ...)
{
	/* Format into scratch first: the arguments may point at tp_error_msg
	 * itself (a caller wrapping tp_last_error() with context), and
	 * vsnprintf with overlapping source and destination is undefined. */
	char scratch[TP_ERROR_MSG_MAX];
	va_list ap, again;

	va_start(ap, fmt);
	va_copy(again, ap);
	int n = vsnprintf(scratch, sizeof(scratch), fmt, ap);
	va_end(ap);
	if (n < 0) {
		snprintf(scratch, sizeof(scratch), "(unformattable error message)");
	} else if ((size_t)n >= sizeof(scratch)) {
		/* Too long: format it whole once more and keep its end (the
		 * reason) rather than its head. */
		char *full = malloc((size_t)n + 1);
		if (full && vsnprintf(full, (size_t)n + 1, fmt, again) == n) {
			tp_error_fit(scratch, sizeof(scratch), full);
		} else {
			size_t cut = sizeof(scratch) - 1 - ELLIPSIS_LEN;
			while (cut && utf8_cont(scratch[cut]))
				cut--;
			memcpy(scratch + cut, ellipsis, ELLIPSIS_LEN + 1);
		}
		free(full);
	}
	va_end(again);
	escape_controls(scratch, sizeof(scratch));

	memcpy(tp_error_msg, scratch, strlen(scratch) + 1);
	TP_DEBUG("error %d: %s", err, tp_error_msg);
	return err;
}

const char *tp_last_error(void)
{
	return tp_error_msg;
}

void tp_clear_error(void)
{
	tp_error_msg[0] = '\0';
}

/* Read by the taskprof command's crash handler. initial-exec: an offset
 * from the thread pointer, no __tls_get_addr (which may allocate), so the
 * read is async-signal-safe; libtaskprof is loaded with the program (a
 * case shared object that needs it finds it loaded already). */
static __thread const char *tl_activity __attribute__((tls_model("initial-exec")));

void tp_thread_activity_set(const char *what)
{
	tl_activity = what;
}

const char *tp_thread_activity(void)
{
	return tl_activity;
}

const char *tp_mem_limit_note(void)
{
	static _Thread_local char note[96];
	struct rlimit rl;
	note[0] = '\0';
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		snprintf(note, sizeof(note),
			 " (this process's address space is limited to %llu MiB: ulimit -v)",
			 (unsigned long long)(rl.rlim_cur >> 20));
	return note;
}

const char *tp_thread_limit_note(int err)
{
	if (err != EAGAIN)
		return "";
	/* A thread created without a stack size gets RLIMIT_STACK bytes of
	 * address space: a huge ulimit -s runs out of it after a few. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur >= (rlim_t)1 << 30) {
		static _Thread_local char note[200];
		snprintf(note, sizeof(note), " (each thread's stack takes the stack size limit, "
			 "ulimit -s, now %llu MiB: lower it; or the thread limit, ulimit -u)",
			 (unsigned long long)(rl.rlim_cur >> 20));
		return note;
	}
	return " (the process's thread limit, ulimit -u, or the address space for thread "
	       "stacks, ulimit -v)";
}
