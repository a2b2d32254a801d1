/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/json_stream.c — the yajl streaming driver with key-path
 * tracking and the strict integer parsing shared by the swimlane readers
 * (see json_stream.h).
 */
#include "tools/swimlane/json_stream.h"

#include "base/file.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"

/* Read size of js_parse_file(): big enough that syscalls do not matter,
 * small enough not to matter for memory. */
#define JS_CHUNK (1u << 20)

/* Longest single value (number, string or key) the readers take: yajl
 * lexes a token that spans chunks again from its start at every chunk, so
 * one value of N bytes costs O(N^2 / JS_CHUNK) (a 200 MB number ran for
 * minutes); no file taskprof reads holds a value near this. */
#define JS_VALUE_MAX (4u << 20)

const char *js_type_name(enum js_type t)
{
	switch (t) {
	case JS_NULL: return "null";
	case JS_BOOL: return "a bool";
	case JS_NUMBER: return "a number";
	case JS_STRING: return "a string";
	case JS_OBJECT: return "an object";
	case JS_ARRAY: return "an array";
	}
	return "a value";
}

/* Append @s (n bytes) to buf at *pos, replacing bytes a terminal or a log
 * line should not see; keeps buf terminated. */
static void put_clean(char *buf, size_t len, size_t *pos, const char *s, size_t n)
{
	for (size_t i = 0; i < n && *pos + 1 < len; i++) {
		unsigned char c = (unsigned char)s[i];
		buf[(*pos)++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	buf[*pos] = '\0';
}

void js_path(const struct js_parser *p, char *buf, size_t len)
{
	size_t pos = 0;
	if (len == 0)
		return;
	buf[0] = '\0';
	for (int d = 1; d <= p->depth; d++) {
		const struct js_frame *f = &p->st[d];
		char tmp[32];
		if (f->is_array) {
			int n = snprintf(tmp, sizeof(tmp), "[%lld]", (long long)f->idx);
			put_clean(buf, len, &pos, tmp, (size_t)n);
		} else {
			if (d > 1)
				put_clean(buf, len, &pos, ".", 1);
			size_t kl = f->key_len < JS_KEY_MAX ? f->key_len : JS_KEY_MAX;
			put_clean(buf, len, &pos, f->key, kl);
			if (f->key_len > JS_KEY_MAX)
				put_clean(buf, len, &pos, "...", 3);
		}
	}
	if (pos == 0)
		snprintf(buf, len, "(top level)");
}

static int vfail(struct js_parser *p, const char *place, const char *fmt, va_list ap)
{
	char msg[256];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (p->err == 0)
		p->err = tp_set_error(-EINVAL, "%s: %s: %s", p->name, place, msg);
	return -EINVAL;
}

int js_fail(struct js_parser *p, const char *fmt, ...)
{
	char place[256];
	js_path(p, place, sizeof(place));
	va_list ap;
	va_start(ap, fmt);
	int rc = vfail(p, place, fmt, ap);
	va_end(ap);
	return rc;
}

int js_fail_at(struct js_parser *p, const char *place, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vfail(p, place, fmt, ap);
	va_end(ap);
	return rc;
}

char *js_strndup(const char *s, size_t len)
{
	char *d = malloc(len + 1);
	if (d) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

/* ---- integers ----------------------------------------------------------- */

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

enum js_int_status js_parse_int(const char *s, size_t len, bool str,
				bool *neg, uint64_t *mag)
{
	size_t i = 0, end = len;
	*neg = false;
	*mag = 0;
	if (str) {
		while (i < end && is_space(s[i]))
			i++;
		while (end > i && is_space(s[end - 1]))
			end--;
	}
	if (i < end && (s[i] == '-' || (str && s[i] == '+'))) {
		*neg = s[i] == '-';
		i++;
	}
	if (i >= end || s[i] < '0' || s[i] > '9')
		return JS_INT_SYNTAX;
	uint64_t v = 0;
	bool range = false, prev_digit = false;
	for (; i < end; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9') {
			unsigned d = (unsigned)(c - '0');
			if (v > (UINT64_MAX - d) / 10)
				range = true;
			else
				v = v * 10 + d;
			prev_digit = true;
		} else if (str && c == '_' && prev_digit && i + 1 < end &&
			   s[i + 1] >= '0' && s[i + 1] <= '9') {
			prev_digit = false;
		} else if (!str && (c == '.' || c == 'e' || c == 'E')) {
			return JS_INT_FLOAT;
		} else {
			return JS_INT_SYNTAX;
		}
	}
	*mag = v;
	return range ? JS_INT_RANGE : JS_INT_OK;
}

/* Common part of js_get_u64 / js_get_i64: type checks and parsing. */
static int get_int(struct js_parser *p, const struct js_value *v, bool allow_str,
		   bool *neg, uint64_t *mag)
{
	if (v->type != JS_NUMBER && !(allow_str && v->type == JS_STRING))
		return js_fail(p, "expected an integer, got %s", js_type_name(v->type));
	enum js_int_status st = js_parse_int(v->s, v->len, v->type == JS_STRING, neg, mag);
	if (st == JS_INT_OK)
		return 0;
	char txt[40];
	size_t tl = v->len < sizeof(txt) - 4 ? v->len : sizeof(txt) - 4;
	size_t pos = 0;
	put_clean(txt, sizeof(txt), &pos, v->s, tl);
	if (tl < v->len)
		put_clean(txt, sizeof(txt), &pos, "...", 3);
	switch (st) {
	case JS_INT_OK:
		return 0;
	case JS_INT_FLOAT:
		return js_fail(p, "expected an integer, got the float %s", txt);
	case JS_INT_RANGE:
		return js_fail(p, "integer %s out of range (expected at most 2^64 - 1)", txt);
	case JS_INT_SYNTAX:
		break;
	}
	return js_fail(p, "expected an integer, got the string \"%s\"", txt);
}

int js_get_u64(struct js_parser *p, const struct js_value *v, bool allow_str,
	       bool wrap_neg, uint64_t *out)
{
	bool neg;
	uint64_t mag;
	int rc = get_int(p, v, allow_str, &neg, &mag);
	if (rc)
		return rc;
	if (neg && mag != 0) {
		if (!wrap_neg)
			return js_fail(p, "negative value -%llu (expected an integer >= 0)",
				       (unsigned long long)mag);
		/* int() then modulo 2^64 (spec §3.1): two's complement of the
		 * magnitude, valid for magnitudes up to 2^64 - 1 */
		mag = (uint64_t)0 - mag;
	}
	*out = mag;
	return 0;
}

int js_get_i64(struct js_parser *p, const struct js_value *v, bool allow_str,
	       int64_t lo, int64_t hi, int64_t *out)
{
	bool neg;
	uint64_t mag;
	int rc = get_int(p, v, allow_str, &neg, &mag);
	if (rc)
		return rc;
	int64_t val;
	if (neg) {
		if (mag > (uint64_t)INT64_MAX + 1)
			goto range;
		val = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	} else {
		if (mag > (uint64_t)INT64_MAX)
			goto range;
		val = (int64_t)mag;
	}
	if (val < lo || val > hi)
		goto range;
	*out = val;
	return 0;
range:
	return js_fail(p, "integer %s%llu out of range (expected %lld..%lld)",
		       neg ? "-" : "", (unsigned long long)mag, (long long)lo,
		       (long long)hi);
}

/* ---- yajl callbacks ----------------------------------------------------- */

/* Advance the parent's place for a new element (arrays count them). */
static inline void next_elem(struct js_parser *p)
{
	struct js_frame *f = &p->st[p->depth];
	if (f->is_array)
		f->idx++;
}

static int on_scalar(struct js_parser *p, const struct js_value *v)
{
	p->events++;
	if (p->skip)
		return 1;
	next_elem(p);
	if (p->depth == 0) {
		js_fail(p, "expected a JSON object, got %s", js_type_name(v->type));
		return 0;
	}
	return p->ops->value(p->ctx, p, v) < 0 ? 0 : 1;
}

static int cb_null(void *ctx)
{
	struct js_value v = { .type = JS_NULL };
	return on_scalar(ctx, &v);
}

static int cb_bool(void *ctx, int b)
{
	struct js_value v = { .type = JS_BOOL, .b = b != 0 };
	return on_scalar(ctx, &v);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	struct js_value v = { .type = JS_NUMBER, .s = s, .len = len };
	return on_scalar(ctx, &v);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	struct js_value v = { .type = JS_STRING, .s = (const char *)s, .len = len };
	return on_scalar(ctx, &v);
}

static int on_start(struct js_parser *p, enum js_type t)
{
	p->events++;
	if (p->skip) {
		p->skip++;
		return 1;
	}
	next_elem(p);
	int tag = p->ops->start(p->ctx, p, t);
	if (tag < 0)
		return 0;
	if (tag == 0) {
		p->skip = 1;
		return 1;
	}
	if (p->depth >= JS_MAX_DEPTH) {
		js_fail(p, "nested deeper than %d levels", JS_MAX_DEPTH);
		return 0;
	}
	struct js_frame *f = &p->st[++p->depth];
	f->is_array = t == JS_ARRAY;
	f->tag = tag;
	f->idx = -1;
	f->key_len = 0;
	f->key[0] = '\0';
	if (f->seen) { /* only objects of more than 8 keys had a table */
		free(f->seen);
		f->seen = NULL;
		f->cap_seen = 0;
	}
	f->n_seen = 0;
	return 1;
}

static int on_end(struct js_parser *p)
{
	p->events++;
	if (p->skip) {
		p->skip--;
		return 1;
	}
	struct js_frame *f = &p->st[p->depth];
	int tag = f->tag;
	/* objects count keys as they come; idx then is the last key's number */
	int64_t n = f->idx + 1;
	p->depth--;
	return p->ops->end(p->ctx, p, tag, n) < 0 ? 0 : 1;
}

static int cb_start_map(void *ctx)
{
	return on_start(ctx, JS_OBJECT);
}

static int cb_start_array(void *ctx)
{
	return on_start(ctx, JS_ARRAY);
}

static int cb_end(void *ctx)
{
	return on_end(ctx);
}

/* 64-bit hash of a key under the parse's random seed (a collision, which
 * would report a false duplicate, cannot be crafted without the seed). */
static uint64_t key_hash(uint64_t seed, const unsigned char *k, size_t len)
{
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ull);
	for (size_t i = 0; i < len; i++) {
		h ^= k[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h ? h : 1;
}

#define JS_SMALL_KEYS (sizeof(((struct js_frame *)0)->small) / sizeof(uint64_t))

/* Add @h to @f's key set; 1 if new, 0 if already there, -1 out of memory. */
static int key_add(struct js_frame *f, uint64_t h)
{
	if (!f->seen) {
		for (uint32_t i = 0; i < f->n_seen; i++)
			if (f->small[i] == h)
				return 0;
		if (f->n_seen < JS_SMALL_KEYS) {
			f->small[f->n_seen++] = h;
			return 1;
		}
		/* the object outgrew the scan: move its keys into a table */
		uint32_t cap = 64;
		f->seen = calloc(cap, sizeof(*f->seen));
		if (!f->seen)
			return -1;
		f->cap_seen = cap;
		for (uint32_t i = 0; i < f->n_seen; i++) {
			uint32_t j = (uint32_t)f->small[i] & (cap - 1);
			while (f->seen[j])
				j = (j + 1) & (cap - 1);
			f->seen[j] = f->small[i];
		}
	}
	if ((f->n_seen + 1) * 2 > f->cap_seen) {
		uint32_t ncap = f->cap_seen ? f->cap_seen * 2 : 16;
		uint64_t *nt = calloc(ncap, sizeof(*nt));
		if (!nt)
			return -1;
		for (uint32_t i = 0; i < f->cap_seen; i++) {
			if (!f->seen[i])
				continue;
			uint32_t j = (uint32_t)f->seen[i] & (ncap - 1);
			while (nt[j])
				j = (j + 1) & (ncap - 1);
			nt[j] = f->seen[i];
		}
		free(f->seen);
		f->seen = nt;
		f->cap_seen = ncap;
	}
	uint32_t j = (uint32_t)h & (f->cap_seen - 1);
	while (f->seen[j]) {
		if (f->seen[j] == h)
			return 0;
		j = (j + 1) & (f->cap_seen - 1);
	}
	f->seen[j] = h;
	f->n_seen++;
	return 1;
}

static int cb_key(void *ctx, const unsigned char *k, size_t len)
{
	struct js_parser *p = ctx;
	p->events++;
	if (p->skip)
		return 1;
	struct js_frame *f = &p->st[p->depth];
	f->idx++; /* keys counted so that end() gets the member count */
	f->key_len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	memcpy(f->key, k, len < JS_KEY_MAX ? len : JS_KEY_MAX);
	int added = key_add(f, key_hash(p->key_seed, k, len));
	if (added < 0) {
		p->err = tp_set_error(-ENOMEM, "%s: out of memory", p->name);
		return 0;
	}
	if (added == 0) {
		js_fail(p, "duplicate key");
		return 0;
	}
	return 1;
}

static void js_free_keys(struct js_parser *p)
{
	for (int d = 0; d <= JS_MAX_DEPTH; d++)
		free(p->st[d].seen);
}

static const yajl_callbacks js_callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_bool,
	.yajl_integer = NULL,
	.yajl_double = NULL,
	/* raw text: u64 values above INT64_MAX must survive, and a float
	 * where an integer is expected must be an error, not a truncation */
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_key,
	.yajl_end_map = cb_end,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end,
};

static int js_begin(struct js_parser *p, const char *name,
		    const struct js_ops *ops, void *ctx)
{
	memset(p, 0, sizeof(*p));
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	p->key_seed = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)p;
	p->st[0].is_array = false;
	p->st[0].idx = -1;
	p->st[0].key_len = 0;
	p->name = name;
	p->ops = ops;
	p->ctx = ctx;
	p->h = yajl_alloc(&js_callbacks, NULL, p);
	if (!p->h)
		return tp_set_error(-ENOMEM, "%s: out of memory", name);
	return 0;
}

/* Line/column of byte @consumed of the current chunk @buf, for messages. */
static void js_where(const struct js_parser *p, const uint8_t *buf, size_t consumed,
		     uint64_t *line, uint64_t *col)
{
	uint64_t l = p->line, ls = p->line_start;
	for (size_t i = 0; i < consumed; i++) {
		if (buf[i] == '\n') {
			l++;
			ls = p->off + i + 1;
		}
	}
	*line = l + 1;
	*col = p->off + consumed - ls + 1;
}

static void js_count_lines(struct js_parser *p, const uint8_t *buf, size_t len)
{
	const uint8_t *s = buf, *e = buf + len;
	while (s < e) {
		const uint8_t *nl = memchr(s, '\n', (size_t)(e - s));
		if (!nl)
			break;
		p->line++;
		p->line_start = p->off + (uint64_t)(nl - buf) + 1;
		s = nl + 1;
	}
	p->off += len;
}

static int js_syntax_error(struct js_parser *p, const uint8_t *buf, size_t len,
			   bool at_end)
{
	size_t consumed = at_end ? 0 : yajl_get_bytes_consumed(p->h);
	if (consumed > len)
		consumed = len;
	/* yajl has consumed the offending byte; point at it (at the end of
	 * the input, the position is just past the last byte) */
	if (consumed > 0)
		consumed--;
	uint64_t line, col;
	js_where(p, buf, consumed, &line, &col);
	unsigned char *e = yajl_get_error(p->h, 0, NULL, 0);
	char msg[160];
	size_t pos = 0;
	const char *es = e ? (const char *)e : "parse error";
	size_t el = strlen(es);
	while (el > 0 && is_space(es[el - 1]))
		el--;
	put_clean(msg, sizeof(msg), &pos, es, el);
	if (e)
		yajl_free_error(p->h, e);
	char place[64];
	snprintf(place, sizeof(place), "line %llu, column %llu",
		 (unsigned long long)line, (unsigned long long)col);
	return js_fail_at(p, place, "invalid JSON (%s)", msg);
}

/* Whether @buf holds a byte other than JSON whitespace. */
static bool has_non_ws(const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\r' && buf[i] != '\t')
			return true;
	return false;
}

/* Feed one chunk; 0 or a negative errno. */
static int js_feed(struct js_parser *p, const uint8_t *buf, size_t len)
{
	uint64_t ev0 = p->events;
	yajl_status st = yajl_parse(p->h, buf, len);
	if (st == yajl_status_ok) {
		/* A chunk without a callback that is not all whitespace is
		 * inside one value: refuse a value past JS_VALUE_MAX before
		 * its re-lexing costs minutes. Checked only for such chunks
		 * (a records file has thousands of callbacks per chunk). */
		if (p->events != ev0) {
			p->run_bytes = 0;
		} else if (has_non_ws(buf, len)) {
			if (!p->run_bytes)
				p->run_line = p->line;
			p->run_bytes += len;
			if (p->run_bytes > JS_VALUE_MAX) {
				char place[48];
				snprintf(place, sizeof(place), "line %llu",
					 (unsigned long long)p->run_line + 1);
				return js_fail_at(p, place, "one JSON value (a number, string or "
							    "key) longer than %u MiB: no file "
							    "taskprof reads holds one",
						  JS_VALUE_MAX >> 20);
			}
		}
		js_count_lines(p, buf, len);
		return 0;
	}
	if (p->err)
		return p->err;
	return js_syntax_error(p, buf, len, false);
}

static int js_finish(struct js_parser *p)
{
	yajl_status st = yajl_complete_parse(p->h);
	if (st == yajl_status_ok)
		return p->err;
	if (p->err)
		return p->err;
	return js_syntax_error(p, NULL, 0, true);
}

int js_parse_mem(const char *name, const uint8_t *buf, size_t len,
		 const struct js_ops *ops, void *ctx)
{
	struct js_parser *p = calloc(1, sizeof(*p));
	if (!p)
		return tp_set_error(-ENOMEM, "%s: out of memory", name);
	int rc = js_begin(p, name, ops, ctx);
	if (rc == 0)
		rc = js_feed(p, buf, len);
	if (rc == 0)
		rc = js_finish(p);
	if (p->h)
		yajl_free(p->h);
	if (p)
		js_free_keys(p);
	free(p);
	return rc;
}

int js_parse_file(const char *name, const struct js_ops *ops, void *ctx)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; anything
	 * but a regular file is refused (a FIFO or device would block or
	 * never end), then reads block normally again. */
	int fd = open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		char why[2 * PATH_MAX + 128];
		if ((e == ENOENT || e == ELOOP) && tp_path_bad_link(name, why, sizeof(why)))
			return tp_set_error(-e, "%s: %s", name, why);
		return tp_set_error(-e, "%s: cannot open: %s", name, strerror(e));
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return tp_set_error(-e, "%s: cannot stat: %s", name, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		if (S_ISDIR(st.st_mode))
			return tp_set_error(-EISDIR, "%s: is a directory", name);
		return tp_set_error(-EINVAL, "%s: not a regular file (%s)", name,
				    S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket");
	}
	/* O_NONBLOCK is kept: no effect on a real file, but a /proc file
	 * that stats as regular and blocks on read (/proc/kmsg) fails with
	 * EAGAIN ("cannot read: Resource temporarily unavailable") instead
	 * of hanging. */
	uint8_t *buf = malloc(JS_CHUNK);
	struct js_parser *p = calloc(1, sizeof(*p));
	int rc = 0;
	if (!buf || !p) {
		rc = tp_set_error(-ENOMEM, "%s: out of memory", name);
		goto out;
	}
	rc = js_begin(p, name, ops, ctx);
	if (rc)
		goto out;
	for (;;) {
		ssize_t n = read(fd, buf, JS_CHUNK);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			rc = tp_set_error(-e, "%s: cannot read: %s", name, strerror(e));
			break;
		}
		if (n == 0) {
			rc = js_finish(p);
			break;
		}
		rc = js_feed(p, buf, (size_t)n);
		if (rc)
			break;
	}
out:
	if (p && p->h)
		yajl_free(p->h);
	if (p)
		js_free_keys(p);
	free(p);
	free(buf);
	close(fd);
	return rc;
}
