/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/name_map.c — the reader of name_map_<case>.json
 * (spec/swimlane-format.md §3.4): callable_id_to_name and
 * orchestrator_name, as the converter's load_func_names_json takes them.
 *
 * The converter looks names up with str(func_id), so only keys that are
 * the canonical decimal form of an integer ("0", "-3"; not "00", "+1",
 * " 1") can ever match; other keys are skipped. A repeated key resolves to
 * its later value (JSON object semantics). Other top-level keys ("level",
 * or the ids of a flat {id: name} map) are ignored: a flat map yields no
 * names. Errors: the top level, callable_id_to_name or a name of the wrong
 * type, orchestrator_name neither a string nor null.
 */
#include "tools/swimlane/perf_data.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/file.h"
#include "tools/swimlane/json_index.h"
#include "tools/swimlane/json_stream.h"

enum { T_TOP = 1, T_C2N };

struct nrd {
	struct sl_name_map *out;
	size_t cap;
	bool seen_c2n, seen_orch;
};

static int oom(struct js_parser *p)
{
	if (p->err == 0)
		p->err = tp_set_error(-ENOMEM, "%s: out of memory", p->name);
	return -ENOMEM;
}

/* The current key as str(int) would print it: true and *id if so. */
static bool canonical_id(const struct js_parser *p, int64_t *id)
{
	const struct js_frame *f = js_top(p);
	if (f->key_len == 0 || f->key_len > 20)
		return false;
	const char *k = f->key;
	size_t n = f->key_len, i = 0;
	bool neg = k[0] == '-';
	if (neg)
		i = 1;
	if (i >= n || (k[i] == '0' && (n - i > 1 || neg)))
		return false; /* "", "-", "00", "-0" */
	bool ng;
	uint64_t mag;
	if (js_parse_int(k + i, n - i, false, &ng, &mag) != JS_INT_OK)
		return false;
	if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX)
		return false;
	*id = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
	return true;
}

static int nm_start(void *ctx, struct js_parser *p, enum js_type t)
{
	struct nrd *r = ctx;
	if (p->depth == 0) {
		if (t != JS_OBJECT)
			return js_fail(p, "expected a JSON object, got %s", js_type_name(t));
		return T_TOP;
	}
	if (js_top(p)->tag == T_TOP) {
		if (JS_KEY(p, "callable_id_to_name")) {
			if (r->seen_c2n)
				return js_fail(p, "duplicate key");
			r->seen_c2n = true;
			if (t != JS_OBJECT)
				return js_fail(p, "expected an object {\"<func_id>\": \"<name>\"}, got %s",
					       js_type_name(t));
			return T_C2N;
		}
		if (JS_KEY(p, "orchestrator_name"))
			return js_fail(p, "expected a string or null, got %s", js_type_name(t));
		return 0;
	}
	return js_fail(p, "expected a name string, got %s", js_type_name(t));
}

/* A lone surrogate escape ("\udc00") reaches us UTF-8-encoded (ED A0..BF
 * xx: not valid UTF-8; the parser already turns a lone high one into '?'):
 * one '?' for it too, so names print and serialise as valid UTF-8. In
 * place; @s stays NUL-terminated. */
static void no_surrogates(char *s)
{
	char *w = s;
	for (const char *q = s; *q;) {
		const unsigned char *u = (const unsigned char *)q;
		if (u[0] == 0xED && u[1] >= 0xA0 && u[1] <= 0xBF && (u[2] & 0xC0) == 0x80) {
			*w++ = '?';
			q += 3;
		} else {
			*w++ = *q++;
		}
	}
	*w = '\0';
}

static int nm_value(void *ctx, struct js_parser *p, const struct js_value *v)
{
	struct nrd *r = ctx;
	struct sl_name_map *m = r->out;
	if (js_top(p)->tag == T_TOP) {
		if (JS_KEY(p, "orchestrator_name")) {
			if (r->seen_orch)
				return js_fail(p, "duplicate key");
			r->seen_orch = true;
			if (v->type == JS_NULL)
				return 0;
			if (v->type != JS_STRING)
				return js_fail(p, "expected a string or null, got %s",
					       js_type_name(v->type));
			if (memchr(v->s, '\0', v->len))
				return js_fail(p, "expected a name, got a string with a NUL character");
			m->orchestrator_name = js_strndup(v->s, v->len);
			if (!m->orchestrator_name)
				return oom(p);
			no_surrogates(m->orchestrator_name);
			return 0;
		}
		if (JS_KEY(p, "callable_id_to_name"))
			return js_fail(p, "expected an object {\"<func_id>\": \"<name>\"}, got %s",
				       js_type_name(v->type));
		return 0;
	}
	if (v->type != JS_STRING)
		return js_fail(p, "expected a name string, got %s", js_type_name(v->type));
	if (memchr(v->s, '\0', v->len))
		return js_fail(p, "expected a name, got a string with a NUL character");
	int64_t id;
	if (!canonical_id(p, &id)) {
		/* str(func_id) can never equal this key: counted for a warning */
		if (!m->n_skipped++) {
			const struct js_frame *f = js_top(p);
			char k[JS_KEY_MAX + 1];
			size_t kl = f->key_len < JS_KEY_MAX ? f->key_len : JS_KEY_MAX;
			memcpy(k, f->key, kl);
			k[kl] = '\0';
			sl_printable(k, m->first_skipped, sizeof(m->first_skipped));
		}
		return 0;
	}
	size_t c1 = r->cap, c2 = r->cap;
	if (jx_reserve((void **)&m->func_id, &c1, m->n, sizeof(int64_t)) ||
	    jx_reserve((void **)&m->name, &c2, m->n, sizeof(char *)))
		return oom(p);
	r->cap = c1 < c2 ? c1 : c2;
	char *s = js_strndup(v->s, v->len);
	if (!s)
		return oom(p);
	no_surrogates(s);
	m->func_id[m->n] = id;
	m->name[m->n] = s;
	m->n++;
	return 0;
}

static int nm_end(void *ctx, struct js_parser *p, int tag, int64_t n)
{
	(void)ctx;
	(void)p;
	(void)tag;
	(void)n;
	return 0;
}

static const struct js_ops nm_ops = {
	.start = nm_start,
	.value = nm_value,
	.end = nm_end,
};

struct ent {
	int64_t id;
	size_t pos;
	char *name;
};

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Sort by func_id; of repeated ids keep the last one (later key wins). */
static int sort_unique(struct sl_name_map *m)
{
	if (m->n < 2)
		return 0;
	struct ent *e = malloc(m->n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++)
		e[i] = (struct ent){ m->func_id[i], i, m->name[i] };
	qsort(e, m->n, sizeof(*e), cmp_ent);
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (i + 1 < m->n && e[i + 1].id == e[i].id) {
			free(e[i].name);
			continue;
		}
		m->func_id[k] = e[i].id;
		m->name[k] = e[i].name;
		k++;
	}
	m->n = k;
	free(e);
	return 0;
}

static int read_common(const char *name, const uint8_t *buf, size_t len, bool mem,
		       struct sl_name_map *out)
{
	memset(out, 0, sizeof(*out));
	struct nrd r = { .out = out };
	int rc = mem ? js_parse_mem(name, buf, len, &nm_ops, &r)
		     : js_parse_file(name, &nm_ops, &r);
	if (rc == 0 && sort_unique(out))
		rc = tp_set_error(-ENOMEM, "%s: out of memory", name);
	out->has_c2n = rc == 0 && r.seen_c2n;
	if (rc) {
		sl_name_map_free(out);
		char why[2 * PATH_MAX + 128];
		if ((rc == -ENOENT || rc == -ELOOP) && !mem &&
		    tp_path_bad_link(name, why, sizeof(why)))
			return tp_set_error(rc, "Func names JSON %s: %s", name, why);
		if (rc == -ENOENT && !mem)
			return tp_set_error(-ENOENT, "Func names JSON not found: %s", name);
	}
	return rc;
}

int sl_read_name_map(const char *path, struct sl_name_map *out)
{
	return read_common(path, NULL, 0, false, out);
}

int sl_read_name_map_mem(const char *name, const uint8_t *buf, size_t len,
			 struct sl_name_map *out)
{
	return read_common(name, buf, len, true, out);
}

void sl_name_map_warn_unnamed(const struct sl_name_map *m, const char *path, const char *prog,
			      FILE *err)
{
	if (m->has_c2n || m->orchestrator_name)
		return;
	fprintf(err, "%s: warning: %s: no callable_id_to_name key, so no function names from it "
		"(a name map looks like {\"callable_id_to_name\": {\"0\": \"QK\"}}, as `taskprof "
		"run` writes name_map_<case>.json)\n", prog, tp_shown(path));
}

void sl_name_map_warn_skipped(const struct sl_name_map *m, const char *path, const char *prog,
			      FILE *err)
{
	if (!m->n_skipped)
		return;
	fprintf(err, "%s: warning: %s: %zu callable_id_to_name key%s not a func_id as a "
		"decimal integer (first: '%s'; a key is written like \"0\" or \"12\"): %s never "
		"used\n", prog, tp_shown(path), m->n_skipped, m->n_skipped == 1 ? "" : "s",
		m->first_skipped,
		m->n_skipped == 1 ? "its name is" : "their names are");
}

void sl_name_map_free(struct sl_name_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->name[i]);
	free(m->name);
	free(m->func_id);
	free(m->orchestrator_name);
	memset(m, 0, sizeof(*m));
}

const char *sl_name_map_get(const struct sl_name_map *m, int64_t func_id)
{
	size_t lo = 0, hi = m ? m->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->func_id[mid] < func_id)
			lo = mid + 1;
		else if (m->func_id[mid] > func_id)
			hi = mid;
		else
			return m->name[mid];
	}
	return NULL;
}

char *sl_path_sibling(const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');
	char *r = NULL;
	if (!slash) {
		r = strdup(name);
	} else if (slash == path) {
		if (asprintf(&r, "/%s", name) < 0)
			r = NULL;
	} else if (asprintf(&r, "%.*s/%s", (int)(slash - path), path, name) < 0) {
		r = NULL;
	}
	return r;
}

char *sl_records_in_folder(const char *path, bool *oom)
{
	struct stat st;
	*oom = false;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return NULL;
	size_t n = strlen(path);
	char *r = NULL;
	if (asprintf(&r, "%s%sl2_swimlane_records.json", path,
		     n && path[n - 1] == '/' ? "" : "/") < 0) {
		*oom = true;
		r = NULL;
	}
	return r;
}

/* The swimlane_level line of result.txt @res (a run folder's): its value
 * 0..4, or -1 when the file cannot be read or has no such line. */
static int result_swimlane_level(const char *res)
{
	char *text = NULL;
	size_t n = 0;
	if (tp_read_file_max(res, 1 << 20, &text, &n))
		return -1;
	int level = -1;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (!strncmp(line, "swimlane_level ", 15) && line[15] >= '0' && line[15] <= '4' &&
		    (line[16] == '\n' || line[16] == '\r' || line[16] == '\0'))
			level = line[15] - '0';
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	return level;
}

void sl_say_failed_folder(const char *records, FILE *err)
{
	char why[400];
	const char *slash = strrchr(records, '/');
	int dir_len = slash ? (int)(slash - records) : 1;
	char dir[PATH_MAX + 32];
	snprintf(dir, sizeof(dir), "%.*s", dir_len, slash ? records : ".");
	if (!tp_run_failed(records, why, sizeof(why))) {
		/* A run folder (its result.txt is there) of a run without
		 * swimlane, or at level 0. */
		char *res = sl_path_sibling(records, "result.txt");
		struct stat st;
		/* Not when it says the run recorded one (level 1..4): the
		 * records file was then moved or broken, as the error says. */
		if (res && stat(res, &st) == 0 && S_ISREG(st.st_mode) &&
		    result_swimlane_level(res) <= 0)
			fprintf(err, "Note: the run in %s recorded no L2 swimlane (a run with "
				     "--enable-l2-swimlane 1..4 writes l2_swimlane_records.json "
				     "there)\n",
				tp_shown(dir));
		free(res);
		return;
	}
	fprintf(err, "Note: the run in %s failed (its result.txt: %s); a run that fails before "
		     "any task finished, or is cut short before its outputs, writes no "
		     "l2_swimlane_records.json\n",
		tp_shown(dir), why[0] ? tp_shown(why) : "status FAILED");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *sl_name_map_sibling(const char *input, FILE *err)
{
	const char *slash = strrchr(input, '/');
	char *dir = !slash ? strdup(".") : slash == input ? strdup("/")
				       : strndup(input, (size_t)(slash - input));
	if (!dir)
		return NULL;
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (fnmatch("name_map*.json", e->d_name, FNM_PERIOD))
				continue;
			/* only regular files: a FIFO would block the reader. The
			 * others are named, so a broken run folder is not
			 * silently a summary without names. */
			char *p = sl_path_sibling(input, e->d_name);
			if (!p)
				continue;
			struct stat st;
			int sr = stat(p, &st), se = errno;
			if (sr || !S_ISREG(st.st_mode)) {
				char why[2 * PATH_MAX + 128];
				fflush(stdout);
				if (sr && tp_path_bad_link(p, why, sizeof(why)))
					fprintf(err, "Warning: sibling name map skipped: %s\n",
						tp_shown(why));
				else
					fprintf(err, "Warning: sibling name map %s skipped: %s\n",
						tp_shown(p),
						sr ? strerror(se)
						   : S_ISDIR(st.st_mode) ? "it is a directory"
									 : "not a regular file");
				free(p);
				continue;
			}
			free(p);
			if (n == cap) {
				cap = cap ? 2 * cap : 8;
				char **nn = realloc(names, cap * sizeof(*nn));
				if (!nn)
					break;
				names = nn;
			}
			if (!(names[n] = strdup(e->d_name)))
				break;
			n++;
		}
		closedir(d);
	}
	free(dir);
	char *r = NULL;
	if (n > 1) {
		qsort(names, n, sizeof(*names), cmp_str);
		fflush(stdout);
		fprintf(err, "Warning: multiple sibling name maps found next to %s: ",
			tp_shown(input));
		for (size_t i = 0; i < n; i++)
			fprintf(err, "%s%s", i ? ", " : "", tp_shown(names[i]));
		fprintf(err, "; pass --func-names explicitly.\n");
	} else if (n == 1) {
		r = sl_path_sibling(input, names[0]);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}
