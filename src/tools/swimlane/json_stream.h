/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/json_stream.h — private helpers of the swimlane readers
 * (perf_data.c, deps.c, name_map.c): a yajl streaming driver that keeps the
 * JSON key path of the current value, and strict integer parsing.
 *
 * The driver owns the yajl callbacks. For every value it knows where it is
 * (a stack of frames: an object frame holds the current key, an array frame
 * the current index) and calls the reader's three hooks:
 *
 *   start(ctx, p, type)   an object or array begins at the current place.
 *                         Return > 0 to descend (the value becomes the new
 *                         frame's tag, which the reader switches on), 0 to
 *                         skip the container and everything inside it, or
 *                         a negative errno (after js_fail()).
 *   value(ctx, p, v)      a scalar at the current place.
 *   end(ctx, p, tag, n)   a container the reader descended into ended; it
 *                         has been popped already, so the current place is
 *                         the container itself; @n = number of elements.
 *
 * Everything is fed in 1 MiB chunks (files) or at once (memory), so memory
 * is bounded by what the reader keeps, never by the file size. Nothing here
 * is public API.
 */
#ifndef TASKPROF_TOOLS_SWIMLANE_JSON_STREAM_H
#define TASKPROF_TOOLS_SWIMLANE_JSON_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_parse.h>

enum js_type { JS_NULL, JS_BOOL, JS_NUMBER, JS_STRING, JS_OBJECT, JS_ARRAY };

/* Deeper nesting is rejected: no file of ours nests deeper than 6. */
#define JS_MAX_DEPTH 64
/* Keys are kept up to this many bytes (longer ones never match a known
 * key and are shown truncated in messages). */
#define JS_KEY_MAX 48

/**
 * struct js_value - one scalar as the hooks see it; @s / @len point into
 * the parser's buffer and are valid only during the value() call.
 */
struct js_value {
	enum js_type type;
	const char *s; /* number text or string bytes (not NUL-terminated) */
	size_t len;
	bool b;        /* JS_BOOL */
};

/**
 * struct js_frame - one open container on the parser's stack: its kind,
 * the reader's @tag, the current array index or object key, and the
 * object's key hashes (duplicate-key check).
 */
struct js_frame {
	bool is_array;
	int tag;          /* the reader's state for this container */
	int64_t idx;      /* array: index of the current element (-1 before) */
	uint32_t key_len; /* object: full length of the current key */
	char key[JS_KEY_MAX];
	/* object: hashes of the keys seen so far, so that a repeated key is
	 * an error instead of "last wins": the first 8 in @small
	 * (most objects: a plain scan), then all of them in @seen (open
	 * addressing, 0 = free) */
	uint64_t small[8];
	uint64_t *seen;
	uint32_t n_seen, cap_seen;
};

struct js_parser;

/**
 * struct js_ops - the reader's three hooks (see the top of this file);
 * each gets the reader's ctx and the parser, and returns 0 (start: > 0 to
 * descend, 0 to skip) or a negative errno after js_fail().
 */
struct js_ops {
	int (*start)(void *ctx, struct js_parser *p, enum js_type type);
	int (*value)(void *ctx, struct js_parser *p, const struct js_value *v);
	int (*end)(void *ctx, struct js_parser *p, int tag, int64_t n);
};

/**
 * struct js_parser - one parse in progress (set up by js_parse_file() /
 * js_parse_mem()); hooks read it through js_top(), js_key_is(), js_path().
 * Offsets and lengths in bytes, lines 0-based.
 */
struct js_parser {
	const char *name;  /* file name for messages */
	const struct js_ops *ops;
	void *ctx;
	int depth;         /* frames in use; st[1..depth] */
	int skip;          /* > 0: inside a skipped container (its nesting) */
	int err;           /* first error (negative errno), 0 if none */
	yajl_handle h;
	/* position tracking for syntax errors */
	uint64_t off;       /* bytes of the input before the current chunk */
	uint64_t line;      /* newlines before the current chunk */
	uint64_t line_start;/* offset just after the last newline seen */
	uint64_t key_seed;  /* per-parse seed of the key hashes */
	/* one value spanning chunks (js_feed's length guard) */
	uint64_t events;    /* parser callbacks so far */
	uint64_t run_bytes; /* bytes of the chunks since the last callback */
	uint64_t run_line;  /* line where that run began (0-based) */
	struct js_frame st[JS_MAX_DEPTH + 1];
};

/** js_top() - the frame of the container that holds the current value of
 *  @p (st[0], the empty bottom frame, at the top level). */
static inline const struct js_frame *js_top(const struct js_parser *p)
{
	return &p->st[p->depth];
}

/**
 * js_key_is() - whether the current key (the parent is an object) is the
 * @klen bytes at @k.
 * @p:    the parser.
 * @k:    the key's bytes.
 * @klen: their number (a key longer than JS_KEY_MAX never matches).
 *
 * Return: true on a match; false on another key or inside an array.
 */
static inline bool js_key_is(const struct js_parser *p, const char *k, size_t klen)
{
	const struct js_frame *f = &p->st[p->depth];
	return !f->is_array && f->key_len == klen && __builtin_memcmp(f->key, k, klen) == 0;
}
#define JS_KEY(p, lit) js_key_is((p), lit, sizeof(lit) - 1)

/**
 * js_parse_file() / js_parse_mem() - stream a JSON text through @ops.
 * @name: the file name used in messages (and opened by js_parse_file).
 * @buf:  js_parse_mem: the text, @len bytes (need not be NUL-terminated).
 * @ops:  the parser callbacks.
 * @ctx:  passed to @ops.
 *
 * Return: 0; -errno when the file cannot be opened or read (message
 * "<name>: cannot open: <strerror>"), -ENOENT for a missing file; -EISDIR
 * ("<name>: is a directory") or -EINVAL ("<name>: not a regular file") for
 * anything but a regular file (a FIFO is refused at once, never waited
 * on); -EINVAL for a repeated key in one object ("<key path>: duplicate
 * key"); -EINVAL
 * for a syntax error ("<name>: line L, column C: invalid JSON (<yajl>)")
 * or whatever a hook returned (its message set with js_fail()); -ENOMEM.
 */
int js_parse_file(const char *name, const struct js_ops *ops, void *ctx);
int js_parse_mem(const char *name, const uint8_t *buf, size_t len,
		 const struct js_ops *ops, void *ctx);

/**
 * js_fail() - record the error "<name>: <key path of the current place>:
 * <msg>" in p->err and tp_last_error() (the first error of the parse
 * only; later ones keep it); js_fail_at() takes the place as text @place.
 * @p:   the parser.
 * @fmt: printf format of <msg> (cut to 255 bytes).
 *
 * Return: -EINVAL.
 */
int js_fail(struct js_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int js_fail_at(struct js_parser *p, const char *place, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * js_path() - the key path of the current place ("aicore_tasks[3][2]"),
 * or "(top level)", into @buf; always NUL-terminated within @len bytes.
 * @p:   the parser.
 * @buf: receives the path (control bytes of keys shown as '?').
 * @len: size of @buf in bytes.
 */
void js_path(const struct js_parser *p, char *buf, size_t len);

/** js_type_name() - "a string", "an object", ... for messages.
 *  @t: the type.
 *  Return: "null", "a bool", "a number", "a string", "an object" or "an
 *  array" (static); "a value" outside the enum. */
const char *js_type_name(enum js_type t);

/* Integer parsing. */
enum js_int_status {
	JS_INT_OK = 0,
	JS_INT_FLOAT,    /* has a fraction or exponent */
	JS_INT_RANGE,    /* magnitude above 2^64 - 1 */
	JS_INT_SYNTAX,   /* not an integer at all (strings only) */
};
/**
 * js_parse_int() - parse an integer.
 * @s, @len: a JSON number's text (@str false) or a numeric string the way
 *           Python's int() takes it (@str true: surrounding whitespace, an
 *           optional sign, decimal digits, '_' between digits).
 * @neg:     receives the sign.
 * @mag:     receives the magnitude.
 *
 * Return: JS_INT_OK; JS_INT_FLOAT (fraction or exponent), JS_INT_RANGE
 * (magnitude above 2^64 - 1), JS_INT_SYNTAX (not an integer). Sets no
 * message.
 */
enum js_int_status js_parse_int(const char *s, size_t len, bool str,
				bool *neg, uint64_t *mag);

/**
 * js_get_u64() - read an unsigned value at the current place: a JSON
 * integer (or, with @allow_str, a numeric string).
 * @p:         the parser.
 * @v:         the value.
 * @allow_str: accept a numeric string (js_parse_int() rules).
 * @wrap_neg:  reduce a negative value modulo 2^64 instead of failing
 *             (spec/swimlane-format.md §3.1).
 * @out:       receives the value.
 *
 * Return: 0, or js_fail()'s -EINVAL naming the key path for a negative
 * value, a float, an out-of-range magnitude, a string (without
 * @allow_str), null or a bool.
 */
int js_get_u64(struct js_parser *p, const struct js_value *v, bool allow_str,
	       bool wrap_neg, uint64_t *out);
/**
 * js_get_i64() - js_get_u64() for a signed value in [@lo, @hi].
 * @p, @v, @allow_str: as js_get_u64().
 * @lo, @hi: the accepted range, inclusive.
 * @out:     receives the value; untouched on failure.
 *
 * Return: 0, or js_fail()'s -EINVAL (also for a value out of [@lo, @hi]).
 */
int js_get_i64(struct js_parser *p, const struct js_value *v, bool allow_str,
	       int64_t lo, int64_t hi, int64_t *out);

/**
 * js_strndup() - copy @len bytes of @s into a malloc'd NUL-terminated
 * string.
 *
 * Return: the copy (free it), or NULL when out of memory (no message).
 */
char *js_strndup(const char *s, size_t len);

#endif /* TASKPROF_TOOLS_SWIMLANE_JSON_STREAM_H */
