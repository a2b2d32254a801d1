/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/json_writer.h — a buffered, streaming JSON writer for the
 * converter's output (spec/swimlane-format.md §4.1).
 *
 * Two layouts of the same token stream:
 *   JW_COMPACT  the top-level array's items one per line, everything inside
 *               an item without whitespace (separators "," and ":").
 *   JW_PRETTY   byte-for-byte what Python's json.dump(obj, f, indent=2)
 *               writes: ", " never appears, every item on its own line
 *               indented by 2 × depth, ": " after keys, "[]" / "{}" for
 *               empty containers, no trailing newline.
 * Strings are escaped like json.dump with ensure_ascii=True (non-ASCII as
 * \uXXXX, astral code points as surrogate pairs).
 *
 * Output goes to a large memory buffer that is flushed with fwrite when it
 * fills, so writing never allocates per token. With @threaded (jw_init) a
 * writer thread does the fwrite of one full buffer while the caller fills
 * the other, so formatting overlaps the kernel's copy into the page cache.
 * The first write error is remembered and returned by jw_flush / jw_fini;
 * later writes are dropped.
 */
#ifndef TASKPROF_TOOLS_SWIMLANE_JSON_WRITER_H
#define TASKPROF_TOOLS_SWIMLANE_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum jw_layout { JW_COMPACT = 0, JW_PRETTY = 1 };

#define JW_MAX_DEPTH 16

/**
 * struct jw - one writer; set up with jw_init(). Fields are private
 * (buffer sizes in bytes, errors as negative errno).
 */
struct jw {
	FILE *fp;
	int fd;                /* fileno(@fp), or -1 (memory streams): with a
				* descriptor, writes go straight to write(2) */
	bool direct;           /* jw_set_direct() enabled O_DIRECT on @fd: only
				* whole JW_DIRECT_ALIGN blocks are handed off */
	char *buf;
	size_t len, cap;
	int err;               /* first -errno of the caller's side (ENOMEM) */
	/* writer thread (threaded mode only); all below guarded by @mu */
	bool threaded, busy, stop;
	char *wbuf;            /* the buffer being written by the thread */
	size_t wlen;
	int werr;              /* first -errno of fwrite in the thread */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv_work, cv_done;
	bool frag;             /* a fragment (jw_fragment_init): grows in memory */
	enum jw_layout layout;
	int depth;
	bool pending_key;      /* a key was written; the value follows inline */
	bool has_items[JW_MAX_DEPTH];
};

/**
 * jw_init() - start writing to @fp.
 * @w:        the writer (previous contents ignored).
 * @fp:       the stream (not owned; flushed first, then written through
 *            its descriptor when it has one).
 * @layout:   JW_COMPACT or JW_PRETTY.
 * @threaded: start the writer thread (double buffering). When it cannot
 *            be started (the thread limit, ulimit -u) the writer writes
 *            on the calling thread, as without @threaded.
 *
 * Return: 0 or -ENOMEM (no tp_last_error() message).
 */
int jw_init(struct jw *w, FILE *fp, enum jw_layout layout, bool threaded);
/**
 * jw_flush() - write out what is buffered (with direct I/O on, the last
 * partial block is written with direct I/O turned off, for the rest of
 * the stream).
 * @w: the writer.
 *
 * Return: 0, or the first error of the stream so far (-ENOMEM, or a
 * write's -errno).
 */
int jw_flush(struct jw *w);
/**
 * jw_set_direct() - write the stream's whole blocks with O_DIRECT
 * (threaded writers on a regular file's descriptor at a block-aligned
 * offset, nothing buffered yet, only). Why: the trace is written
 * once and not read back by us, and copying GBs into the page cache is
 * the largest single CPU cost of a big conversion (on the 2-core bench
 * machine about 1 s of system time per GB, against ~0.15 s with direct
 * I/O); the writer thread takes the device's time instead, overlapped
 * with formatting. Falls back to ordinary writes when the file system
 * refuses O_DIRECT (at fcntl or at the first write). Call right after
 * jw_init().
 * @w: the writer.
 *
 * Return: true when enabled (also when it already was); false when not
 * applicable or fcntl() refused it (ordinary writes then; no error).
 */
bool jw_set_direct(struct jw *w);
#define JW_DIRECT_ALIGN 4096u
/**
 * jw_fini() - flush, stop the writer thread, free the buffers (does not
 * close @fp). Must be called after a successful jw_init().
 * @w: the writer.
 *
 * Return: as jw_flush().
 */
int jw_fini(struct jw *w);

/**
 * jw_fragment_init() - a writer of trace events into memory, to be
 * appended to a trace writer with jw_fragment_move(): compact layout,
 * placed among the events of the "traceEvents" array after at least one
 * event (every event starts ",\n"), as jw_ev_begin() and the token calls
 * place them. Its buffer grows as needed (no file; no thread). Lets a
 * second thread format a run of events while the first writes the ones
 * before it (tools/swimlane/trace.c, struct rowpar).
 * @w: the fragment (previous contents ignored).
 *
 * Return: 0 or -ENOMEM.
 */
int jw_fragment_init(struct jw *w);
/**
 * jw_fragment_move() - append what @frag holds to @w, as raw bytes, and
 * empty @frag; an error of @frag's (-ENOMEM) becomes @w's.
 * @w:    a compact writer at depth 2 after at least one event.
 * @frag: a fragment from jw_fragment_init().
 */
void jw_fragment_move(struct jw *w, struct jw *frag);
/** jw_fragment_fini() - free a fragment's buffer. @w: the fragment. */
void jw_fragment_fini(struct jw *w);

/*
 * Token calls: each writes the separator its place needs (after a key:
 * none) and then the token. Errors (out of memory, a failed write) are
 * remembered in @w and returned by jw_flush() / jw_fini(); the calls
 * themselves never fail. Nesting deeper than JW_MAX_DEPTH is not tracked.
 */

/** jw_obj_begin() - "{"; jw_obj_end() closes it ("}"). */
void jw_obj_begin(struct jw *w);
void jw_obj_end(struct jw *w);
/** jw_arr_begin() - "["; jw_arr_end() closes it ("]"). */
void jw_arr_begin(struct jw *w);
void jw_arr_end(struct jw *w);
/** jw_bool() - "true" / "false". */
void jw_bool(struct jw *w, bool v);
/** jw_null() - "null". */
void jw_null(struct jw *w);
/** jw_raw() - @n bytes of @s written as they are (no separator logic). */
void jw_raw(struct jw *w, const char *s, size_t n);

/**
 * jw_escape() - escape @n bytes of @s as json.dump(ensure_ascii=True)
 * does, without the quotes.
 * @s:   the bytes (UTF-8; not NUL-terminated).
 * @n:   their number.
 * @out: room for 6 × @n + 1 bytes.
 *
 * Return: bytes written to @out.
 */
size_t jw_escape(const char *s, size_t n, char *out);

/*
 * The per-token calls below are inline: a trace has tens of millions of
 * tokens, and a call plus the separator logic per token is a measurable
 * part of the conversion. Slow paths (a full buffer, pretty layout, the
 * event-level separators, escapes) are out of line.
 */
/** jw__make_room() - slow path of jw__reserve(): hand the full buffer to
 *  the writer (or write it) so that @n more bytes fit.
 *  @w: the writer.
 *  @n: bytes needed, at most JW_EV_MAX + 2 (the buffer holds 4 MiB;
 *      longer tokens are written another way). A write error is
 *      remembered in @w. */
void jw__make_room(struct jw *w, size_t n);
/** jw__before_slow() - slow path of jw__before() (pretty layout, depth
 *  <= 2).
 *  @w: the writer. */
void jw__before_slow(struct jw *w);
/** jw__strn_slow() - jw_strn() for strings longer than 512 bytes.
 *  @w: the writer; @s, @n: the string and its length in bytes. */
void jw__strn_slow(struct jw *w, const char *s, size_t n);

#include "tools/swimlane/fmt_double.h"

/** jw__reserve() - room for @n bytes at the buffer's end (not yet
 *  counted in @w->len).
 *  @w: the writer.
 *  @n: bytes, as for jw__make_room().
 *  Return: where the bytes go; the caller adds what it wrote to
 *  @w->len. */
static inline __attribute__((always_inline)) char *jw__reserve(struct jw *w, size_t n)
{
	if (__builtin_expect(w->len + n > w->cap, 0))
		jw__make_room(w, n);
	return w->buf + w->len;
}

/** jw__before() - the separator before a value or key at the current
 *  depth. */
static inline __attribute__((always_inline)) void jw__before(struct jw *w)
{
	if (w->pending_key) {
		w->pending_key = false;
		return;
	}
	int d = w->depth;
	if (w->layout == JW_COMPACT && d > 2) {
		if (w->has_items[d]) {
			*jw__reserve(w, 1) = ',';
			w->len++;
		} else {
			w->has_items[d] = true;
		}
		return;
	}
	jw__before_slow(w);
}

/**
 * jw_keyn() - an object key of @n bytes; @key must be plain ASCII needing
 * no escapes. The next token is its value.
 */
static inline __attribute__((always_inline)) void jw_keyn(struct jw *w, const char *key, size_t n)
{
	jw__before(w);
	char *p = jw__reserve(w, n + 4), *p0 = p;
	*p++ = '"';
	memcpy(p, key, n);
	p += n;
	*p++ = '"';
	*p++ = ':';
	if (w->layout == JW_PRETTY || w->depth == 1)
		*p++ = ' ';
	w->len += (size_t)(p - p0);
	w->pending_key = true;
}
#define jw_key(w, k) jw_keyn((w), (k), strlen(k))

/** jw_u64() - an unsigned integer in decimal. */
static inline __attribute__((always_inline)) void jw_u64(struct jw *w, uint64_t v)
{
	jw__before(w);
	char tmp[24];
	char *e = tmp + sizeof(tmp), *q = e;
	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	size_t n = (size_t)(e - q);
	memcpy(jw__reserve(w, n), q, n);
	w->len += n;
}

/** jw_i64() - a signed integer in decimal. */
static inline __attribute__((always_inline)) void jw_i64(struct jw *w, int64_t v)
{
	if (v >= 0) {
		jw_u64(w, (uint64_t)v);
		return;
	}
	jw__before(w);
	char tmp[24];
	char *e = tmp + sizeof(tmp), *q = e;
	uint64_t u = (uint64_t)0 - (uint64_t)v;
	do {
		*--q = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	*--q = '-';
	size_t n = (size_t)(e - q);
	memcpy(jw__reserve(w, n), q, n);
	w->len += n;
}

/** jw_double() - a double as Python's repr(float) writes it
 *  (tp_fmt_double_repr()). */
static inline __attribute__((always_inline)) void jw_double(struct jw *w, double v)
{
	jw__before(w);
	char *p = jw__reserve(w, TP_FMT_DOUBLE_MAX);
	w->len += (size_t)tp_fmt_double_repr(v, p);
}

/** jw_strn() - a string value of @n bytes, escaped like
 *  json.dump(ensure_ascii=True). */
static inline __attribute__((always_inline)) void jw_strn(struct jw *w, const char *s, size_t n)
{
	if (n > 512) {
		jw__strn_slow(w, s, n);
		return;
	}
	jw__before(w);
	char *p = jw__reserve(w, 6 * n + 2), *p0 = p;
	*p++ = '"';
	size_t i = 0;
	for (; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
			break;
		p[i] = (char)c;
	}
	p += i;
	if (i < n)
		p += jw_escape(s + i, n - i, p);
	*p++ = '"';
	w->len += (size_t)(p - p0);
}
#define jw_str(w, s) jw_strn((w), (s), strlen(s))

/*
 * Whole compact events: the converter formats its frequent events itself
 * (fixed key text, no per-token separator logic) and hands the bytes over
 * here. Valid only in JW_COMPACT at depth 2 (directly inside the
 * top-level object's traceEvents array, no key pending), where the token
 * calls would write exactly the same bytes: "," (after the first item)
 * and "\n" before the event. jw_ev_begin() returns where the event's
 * "{...}" goes, with room for @max bytes (@max <= JW_EV_MAX);
 * jw_ev_end() takes the end of what was written.
 */
#define JW_EV_MAX (256u << 10)

/**
 * jw_ev_begin() - start one whole compact event (see above).
 * @w:   the writer, in JW_COMPACT at depth 2, no key pending.
 * @max: bytes the event may take, <= JW_EV_MAX.
 *
 * Return: where to write the event's "{...}".
 */
static inline __attribute__((always_inline)) char *jw_ev_begin(struct jw *w, size_t max)
{
	char *p = jw__reserve(w, max + 2);
	if (w->has_items[2])
		*p++ = ',';
	else
		w->has_items[2] = true;
	*p++ = '\n';
	return p;
}

/**
 * jw_ev_end() - the event started by jw_ev_begin() ends at @end.
 * @w:   the writer.
 * @end: one past the event's last byte, at most @max bytes after what
 *       jw_ev_begin() returned.
 */
static inline __attribute__((always_inline)) void jw_ev_end(struct jw *w, char *end)
{
	w->len = (size_t)(end - w->buf);
}

#endif /* TASKPROF_TOOLS_SWIMLANE_JSON_WRITER_H */
