// SPDX-License-Identifier: MIT
/*
 * tools/swimlane/json_writer.c — see json_writer.h.
 */
#include "tools/swimlane/json_writer.h"

#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/thread.h"
#include "tools/swimlane/fmt_double.h"

/* Flush threshold: large enough that fwrite sees few, big writes. */
#define JW_BUF_CAP (4u << 20)
/* The longest single token appended without a bounds check. */
#define JW_TOKEN_MAX 128

/* write(2) all of @p; on EINVAL under O_DIRECT (a file system that takes
 * the flag but not the write) turn O_DIRECT off and write normally. */
static int write_fd(int fd, const char *p, size_t n)
{
	bool retried = false;
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EINVAL && !retried) {
			int fl = fcntl(fd, F_GETFL);
			if (fl >= 0 && (fl & O_DIRECT) &&
			    fcntl(fd, F_SETFL, fl & ~O_DIRECT) == 0) {
				retried = true;
				continue;
			}
		}
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static void write_all(const struct jw *w, const char *p, size_t n, int *err)
{
	if (*err || !n)
		return;
	if (w->fd >= 0) {
		*err = write_fd(w->fd, p, n);
		return;
	}
	if (fwrite(p, 1, n, w->fp) != n)
		*err = errno ? -errno : -EIO;
}

/* The writer thread's stack, whatever ulimit -s says (base/thread.h).
 * Measured: 51 KiB touched, of which 47 KiB is the static TLS block
 * glibc puts on every thread's stack and 4 KiB write(2)'s frames (the
 * same under AddressSanitizer); 256 KiB leaves ample room. */
#define JW_THREAD_STACK (256u << 10)

/* The writer thread: waits for a handed-off buffer, writes it, reports. */
static void *jw_writer(void *arg)
{
	struct jw *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->busy && !w->stop)
			pthread_cond_wait(&w->cv_work, &w->mu);
		if (!w->busy)
			break; /* stop with nothing pending */
		/* The mutex orders the caller's stores into wbuf (made before it
		 * set busy under the lock) before these reads. */
		char *p = w->wbuf;
		size_t n = w->wlen;
		int err = w->werr;
		pthread_mutex_unlock(&w->mu);
		write_all(w, p, n, &err);
		pthread_mutex_lock(&w->mu);
		w->werr = err;
		w->busy = false;
		pthread_cond_signal(&w->cv_done);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int jw_init(struct jw *w, FILE *fp, enum jw_layout layout, bool threaded)
{
	memset(w, 0, sizeof(*w));
	w->fp = fp;
	/* Nothing may sit in the stream's own buffer once we write(2) past
	 * it; memory streams have no descriptor and keep using fwrite. */
	w->fd = fflush(fp) == 0 ? fileno(fp) : -1;
	w->layout = layout;
	w->cap = JW_BUF_CAP;
	/* Block-aligned buffers, as O_DIRECT writes need (jw_set_direct). */
	if (posix_memalign((void **)&w->buf, JW_DIRECT_ALIGN, w->cap))
		w->buf = NULL;
	if (!w->buf)
		return -ENOMEM;
	if (!threaded)
		return 0;
	if (posix_memalign((void **)&w->wbuf, JW_DIRECT_ALIGN, w->cap))
		w->wbuf = NULL;
	if (!w->wbuf) {
		free(w->buf);
		w->buf = NULL;
		return -ENOMEM;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv_work, NULL);
	pthread_cond_init(&w->cv_done, NULL);
	if (tp_thread_start(&w->thread, "tp-swl-writer", JW_THREAD_STACK, jw_writer, w)) {
		/* No thread (the thread limit, ulimit -u, reached: -EAGAIN):
		 * write on the calling thread instead. Slower, as formatting
		 * no longer overlaps the writes, but the same bytes; failing
		 * the conversion for want of an optimisation would not do. */
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv_work);
		pthread_cond_destroy(&w->cv_done);
		free(w->wbuf);
		w->wbuf = NULL;
		return 0;
	}
	w->threaded = true;
	return 0;
}

/* Wait until the writer thread has finished its buffer; returns its error. */
static int jw_wait_idle(struct jw *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->busy)
		pthread_cond_wait(&w->cv_done, &w->mu);
	int err = w->werr;
	pthread_mutex_unlock(&w->mu);
	return err;
}

bool jw_set_direct(struct jw *w)
{
	if (!w->threaded || w->fd < 0 || w->len || w->direct)
		return w->direct;
	struct stat st; /* direct I/O only on regular files (not devices) */
	if (fstat(w->fd, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	off_t off = lseek(w->fd, 0, SEEK_CUR);
	int fl = fcntl(w->fd, F_GETFL);
	if (off < 0 || off % JW_DIRECT_ALIGN || fl < 0)
		return false;
	if (fcntl(w->fd, F_SETFL, fl | O_DIRECT) != 0)
		return false;
	w->direct = true;
	return true;
}

/* Hand the filled buffer to the writer (or write it here when not
 * threaded); the caller continues in an empty buffer. Under direct I/O
 * only whole blocks go; the partial block left over moves to the start
 * of the caller's next buffer. */
/* A fragment's buffer doubled (jw_handoff, jw_put); without memory its
 * contents are dropped and the error kept, so that room exists. */
static void frag_grow(struct jw *w, size_t need)
{
	size_t cap = w->cap;
	while (cap < w->len + need)
		cap *= 2;
	char *nb = cap > w->cap ? realloc(w->buf, cap) : w->buf;
	if (!nb) {
		if (!w->err)
			w->err = -ENOMEM;
		w->len = 0;
		return;
	}
	w->buf = nb;
	w->cap = cap;
}

static void jw_handoff(struct jw *w)
{
	if (w->frag)
		return; /* never handed off (jw__make_room grows it instead) */
	if (!w->len)
		return;
	size_t n = w->len, keep = 0;
	if (w->direct) {
		keep = n % JW_DIRECT_ALIGN;
		n -= keep;
		if (!n)
			return;
	}
	if (!w->threaded) {
		write_all(w, w->buf, n, &w->err);
		memmove(w->buf, w->buf + n, keep);
		w->len = keep;
		return;
	}
	pthread_mutex_lock(&w->mu);
	while (w->busy)
		pthread_cond_wait(&w->cv_done, &w->mu);
	char *t = w->wbuf;
	w->wbuf = w->buf;
	w->wlen = n;
	w->buf = t;
	/* The writer reads wbuf[0, n) only; the tail past it is ours. */
	memcpy(w->buf, w->wbuf + n, keep);
	w->len = keep;
	w->busy = true;
	pthread_cond_signal(&w->cv_work);
	pthread_mutex_unlock(&w->mu);
}

int jw_flush(struct jw *w)
{
	jw_handoff(w);
	int werr = w->threaded ? jw_wait_idle(w) : 0;
	if (w->direct && w->len) {
		/* The last partial block: an ordinary write at the (aligned)
		 * offset the direct writes left; the writer is idle. */
		int fl = fcntl(w->fd, F_GETFL);
		if (fl >= 0)
			fcntl(w->fd, F_SETFL, fl & ~O_DIRECT);
		w->direct = false;
		if (!werr)
			write_all(w, w->buf, w->len, &w->err);
		w->len = 0;
	}
	return w->err ? w->err : werr;
}

int jw_fini(struct jw *w)
{
	int rc = jw_flush(w);
	if (w->threaded) {
		pthread_mutex_lock(&w->mu);
		w->stop = true;
		pthread_cond_signal(&w->cv_work);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv_work);
		pthread_cond_destroy(&w->cv_done);
		w->threaded = false;
	}
	free(w->buf);
	free(w->wbuf);
	w->buf = w->wbuf = NULL;
	return rc;
}

/* Make room for @n more bytes (handing off a full buffer); the buffers
 * never grow, and no token is larger than half a buffer (longer strings
 * take jw__strn_slow). */
void jw__make_room(struct jw *w, size_t n)
{
	if (w->len + n > w->cap) {
		if (w->frag)
			frag_grow(w, n); /* a fragment keeps its bytes: grow by what is asked */
		else
			jw_handoff(w);
	}
}

static inline void jw_reserve(struct jw *w, size_t n)
{
	jw__reserve(w, n);
}

static inline void jw_put(struct jw *w, const char *s, size_t n)
{
	if (w->frag && w->len + n > w->cap) {
		frag_grow(w, n);
		if (w->len + n > w->cap)
			return; /* no memory: w->err is set */
	}
	if (n > w->cap / 2 && !w->frag) {
		/* a huge token: write it directly once everything before it
		 * is written (jw_flush also ends direct I/O's partial block) */
		int rc = jw_flush(w);
		if (rc && !w->err)
			w->err = rc;
		write_all(w, s, n, &w->err);
		return;
	}
	jw_reserve(w, n);
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static inline void jw_putc(struct jw *w, char c)
{
	jw_reserve(w, 1);
	w->buf[w->len++] = c;
}

static void jw_newline_indent(struct jw *w, int depth)
{
	jw_reserve(w, 1 + 2 * (size_t)depth);
	w->buf[w->len++] = '\n';
	memset(w->buf + w->len, ' ', 2 * (size_t)depth);
	w->len += 2 * (size_t)depth;
}

/* Separator before a value (or a key): the cases jw__before() does not
 * handle inline (pretty layout, the top levels of the compact layout). */
void jw__before_slow(struct jw *w)
{
	if (w->pending_key) {
		w->pending_key = false;
		return;
	}
	int d = w->depth;
	if (d == 0)
		return;
	bool first = !w->has_items[d];
	w->has_items[d] = true;
	if (w->layout == JW_PRETTY) {
		if (!first)
			jw_putc(w, ',');
		jw_newline_indent(w, d);
	} else if (d == 2) {
		/* Compact: the trace's events (depth 2: inside the traceEvents
		 * array inside the top object) go one per line. */
		if (!first)
			jw_putc(w, ',');
		jw_putc(w, '\n');
	} else if (!first) {
		jw_putc(w, ',');
	}
}

static void jw_open(struct jw *w, char c)
{
	jw__before(w);
	jw_putc(w, c);
	if (w->depth + 1 < JW_MAX_DEPTH)
		w->depth++;
	w->has_items[w->depth] = false;
}

static void jw_close(struct jw *w, char c)
{
	bool had = w->has_items[w->depth];
	w->depth--;
	if (had) {
		if (w->layout == JW_PRETTY)
			jw_newline_indent(w, w->depth);
		else if (w->depth + 1 == 2)
			jw_putc(w, '\n');
	}
	jw_putc(w, c);
}

void jw_obj_begin(struct jw *w) { jw_open(w, '{'); }
void jw_obj_end(struct jw *w) { jw_close(w, '}'); }
void jw_arr_begin(struct jw *w) { jw_open(w, '['); }
void jw_arr_end(struct jw *w) { jw_close(w, ']'); }

static const char hexd[] = "0123456789abcdef";

static char *put_u16(char *p, unsigned v)
{
	*p++ = '\\';
	*p++ = 'u';
	*p++ = hexd[(v >> 12) & 15];
	*p++ = hexd[(v >> 8) & 15];
	*p++ = hexd[(v >> 4) & 15];
	*p++ = hexd[v & 15];
	return p;
}

/* Decode one UTF-8 sequence at @s (@n bytes left); returns its length and
 * the code point in @cp, or 1 with U+FFFD for a malformed byte. */
static size_t utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
	unsigned c = s[0];
	size_t len;
	unsigned v;
	if (c < 0xC2) {
		*cp = 0xFFFD;
		return 1;
	} else if (c < 0xE0) {
		len = 2;
		v = c & 0x1F;
	} else if (c < 0xF0) {
		len = 3;
		v = c & 0x0F;
	} else if (c < 0xF5) {
		len = 4;
		v = c & 0x07;
	} else {
		*cp = 0xFFFD;
		return 1;
	}
	if (len > n) {
		*cp = 0xFFFD;
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			*cp = 0xFFFD;
			return 1;
		}
		v = (v << 6) | (s[i] & 0x3F);
	}
	if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10FFFF))) {
		*cp = 0xFFFD;
		return 1;
	}
	*cp = v;
	return len;
}

size_t jw_escape(const char *s, size_t n, char *out)
{
	const unsigned char *u = (const unsigned char *)s;
	char *p = out;
	for (size_t i = 0; i < n;) {
		unsigned c = u[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*p++ = (char)c;
			i++;
			continue;
		}
		if (c < 0x80) {
			i++;
			switch (c) {
			case '"': *p++ = '\\'; *p++ = '"'; break;
			case '\\': *p++ = '\\'; *p++ = '\\'; break;
			case '\n': *p++ = '\\'; *p++ = 'n'; break;
			case '\r': *p++ = '\\'; *p++ = 'r'; break;
			case '\t': *p++ = '\\'; *p++ = 't'; break;
			case '\b': *p++ = '\\'; *p++ = 'b'; break;
			case '\f': *p++ = '\\'; *p++ = 'f'; break;
			default: p = put_u16(p, c); break;
			}
			continue;
		}
		unsigned cp;
		i += utf8_decode(u + i, n - i, &cp);
		if (cp >= 0x10000) {
			cp -= 0x10000;
			p = put_u16(p, 0xD800 + (cp >> 10));
			p = put_u16(p, 0xDC00 + (cp & 0x3FF));
		} else {
			p = put_u16(p, cp);
		}
	}
	return (size_t)(p - out);
}

void jw__strn_slow(struct jw *w, const char *s, size_t n)
{
	jw__before(w);
	/* Worst case 6 output bytes per input byte (\u00XX), plus quotes. */
	size_t need = 6 * n + 2;
	if (need > w->cap / 2) {
		char *tmp = malloc(need);
		if (!tmp) {
			w->err = w->err ? w->err : -ENOMEM;
			return;
		}
		tmp[0] = '"';
		size_t k = 1 + jw_escape(s, n, tmp + 1);
		tmp[k++] = '"';
		jw_put(w, tmp, k);
		free(tmp);
		return;
	}
	char *p = jw__reserve(w, need), *p0 = p;
	*p++ = '"';
	p += jw_escape(s, n, p);
	*p++ = '"';
	w->len += (size_t)(p - p0);
}

void jw_bool(struct jw *w, bool v)
{
	jw__before(w);
	if (v)
		jw_put(w, "true", 4);
	else
		jw_put(w, "false", 5);
}

void jw_null(struct jw *w)
{
	jw__before(w);
	jw_put(w, "null", 4);
}

void jw_raw(struct jw *w, const char *s, size_t n) { jw_put(w, s, n); }

int jw_fragment_init(struct jw *w)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->frag = true;
	w->layout = JW_COMPACT;
	w->cap = JW_BUF_CAP;
	w->buf = malloc(w->cap);
	if (!w->buf)
		return -ENOMEM;
	/* inside {"traceEvents": [ ... after an event: depth 2, items seen */
	w->depth = 2;
	w->has_items[1] = true;
	w->has_items[2] = true;
	return 0;
}

void jw_fragment_move(struct jw *w, struct jw *frag)
{
	if (frag->err && !w->err)
		w->err = frag->err;
	/* in pieces of at most a quarter of @w's buffer: jw_put() writes a
	 * longer piece past the buffer, which ends direct I/O (jw_flush) */
	size_t piece = w->cap / 4;
	for (size_t off = 0; off < frag->len; off += piece) {
		size_t n = frag->len - off < piece ? frag->len - off : piece;
		jw_put(w, frag->buf + off, n);
	}
	frag->len = 0;
	frag->err = 0;
}

void jw_fragment_fini(struct jw *w)
{
	free(w->buf);
	w->buf = NULL;
}
