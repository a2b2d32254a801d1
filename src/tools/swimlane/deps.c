/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/deps.c — the reader of dep_gen's deps.json
 * (spec/swimlane-format.md §3.1, §3.3): unique (pred, succ) edges in
 * first-appearance order, the kernel map and the block map.
 *
 * Streaming, no DOM: a 1M-task deps.json is about 1 GB, almost all of it
 * args / tensors / edge slices that no tool reads; those are skipped inside
 * the parser. Per task we keep 28 bytes (id, kernel ids, block count) plus
 * the hash slots, per unique edge 16 bytes plus its slot.
 *
 * What is an error and what is skipped:
 *   - not JSON, top level not an object, "tasks" or "edges" present but not
 *     an array, a tasks[] entry that is not an object, kernel_ids elements
 *     that are not integers: errors (-EINVAL, message naming the key path);
 *   - edges[] entries that are not objects, or whose pred / succ is missing
 *     or not an integer (number or numeric string): skipped (§3.3), and
 *     counted in sl_deps.quirks_warning;
 *   - tasks[] entries without a parsable task_id: skipped (counted there
 *     too); a block_num that
 *     cannot be parsed counts as 1 (§3.3), but a JSON number that is not an
 *     integer (2.5) is an error (taskprof decision: not a block count);
 *   - a key repeated in one object (edges[0].pred twice): an error;
 *   - no "edges" key (or null): has_edges false with the §3.3 warning text.
 * A task id listed twice resolves to its later entry (JSON dict semantics).
 * Both that and a kernel_ids not a list of 3 entries are said in
 * sl_deps.quirks_warning (the tools print it): they let the trace label
 * tasks wrongly or not at all without being errors of the format.
 */
#include "tools/swimlane/perf_data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem.h"
#include "base/error.h"
#include "tools/swimlane/json_index.h"
#include "tools/swimlane/json_stream.h"

enum { T_TOP = 1, T_TASKS, T_TASK, T_KIDS, T_EDGES, T_EDGE };

struct deps_priv {
	struct jx_table kix; /* task_id → kernel map entry */
	struct jx_table bix; /* task_id → block map entry */
	struct jx_table eix; /* (pred, succ) → edge, while reading */
};

struct drd {
	struct sl_deps *out;
	struct deps_priv *pv;
	bool seen_tasks, seen_edges;
	size_t cap_tasks, cap_block, cap_edges;
	/* the tasks[] entry being read */
	bool has_tid, kids_list, block_set;
	bool kids_key; /* a kernel_ids key, list or not */
	uint64_t tid;
	int32_t kids[3];
	int64_t n_kids;
	uint64_t block;
	/* the edges[] entry being read */
	bool has_pred, has_succ, edge_bad;
	uint64_t pred, succ;
	/* quirks let pass (sl_deps.quirks_warning): tasks[] index of the entry
	 * being read, repeated task ids, kernel_ids lists not of 3 entries */
	size_t task_idx;
	size_t n_dup, dup_idx, n_badkids, badkids_idx;
	uint64_t dup_tid;
	int64_t badkids_n;
	/* tasks[] entries without a parsable task_id; edges[] entries that are
	 * not objects or lack an integer pred / succ (skipped, §3.3): how
	 * many, and the first one's index (and why, for an edge) */
	size_t n_notid, notid_idx;
	bool tid_range;    /* this entry's task_id: an integer past 64 bits */
	bool notid_range;  /* so was the first entry without a task_id */
	size_t edge_idx, cur_edge_idx, n_edge_skip, edge_skip_idx;
	const char *edge_skip_why;
};

/* An edges[] entry skipped as the reference skips it (§3.3), counted for
 * sl_deps.quirks_warning. */
static void edge_skipped(struct drd *r, size_t idx, const char *why)
{
	if (!r->n_edge_skip++) {
		r->edge_skip_idx = idx;
		r->edge_skip_why = why;
	}
}

static int oom(struct js_parser *p)
{
	if (p->err == 0)
		p->err = tp_set_error(-ENOMEM, "%s: out of memory", p->name);
	return -ENOMEM;
}

static bool ktask_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct sl_deps *)ctx)->task_id[idx] == *(const uint64_t *)key;
}

static uint64_t ktask_hash(const void *ctx, uint32_t idx)
{
	return jx_mix(((const struct sl_deps *)ctx)->task_id[idx]);
}

static bool btask_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct sl_deps *)ctx)->block_task_id[idx] == *(const uint64_t *)key;
}

static uint64_t btask_hash(const void *ctx, uint32_t idx)
{
	return jx_mix(((const struct sl_deps *)ctx)->block_task_id[idx]);
}

struct edge_key {
	uint64_t pred, succ;
};

static inline uint64_t edge_hash_of(uint64_t pred, uint64_t succ)
{
	return jx_mix(pred * 0x9e3779b97f4a7c15ull ^ jx_mix(succ));
}

static bool edge_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sl_deps *d = ctx;
	const struct edge_key *k = key;
	return d->pred[idx] == k->pred && d->succ[idx] == k->succ;
}

static uint64_t edge_hash(const void *ctx, uint32_t idx)
{
	const struct sl_deps *d = ctx;
	return edge_hash_of(d->pred[idx], d->succ[idx]);
}

/* Parse an id or count the way Python's int() would take it (number or
 * numeric string); false if it cannot be parsed. Negatives wrap mod 2^64. */
static bool soft_u64(const struct js_value *v, uint64_t *out, bool *neg)
{
	bool n;
	uint64_t mag;
	if (v->type != JS_NUMBER && v->type != JS_STRING)
		return false;
	if (js_parse_int(v->s, v->len, v->type == JS_STRING, &n, &mag) != JS_INT_OK)
		return false;
	*out = n ? (uint64_t)0 - mag : mag;
	if (neg)
		*neg = n && mag != 0;
	return true;
}

static int task_end(struct drd *r, struct js_parser *p)
{
	struct sl_deps *d = r->out;
	if (!r->has_tid) {
		if (!r->n_notid++) {
			r->notid_idx = r->task_idx;
			r->notid_range = r->tid_range;
		}
		return 0;
	}
	/* block map: max(int(block_num, default 1), 1) */
	uint32_t bn = !r->block_set ? 1
		      : r->block == 0 ? 1
		      : r->block > UINT32_MAX ? UINT32_MAX : (uint32_t)r->block;
	uint64_t key = r->tid;
	uint32_t *s = jx_probe(&r->pv->bix, jx_mix(key), btask_eq, d, &key);
	if (*s) {
		d->block_value[*s - 1] = bn; /* later entry wins */
		if (!r->n_dup++) {
			r->dup_idx = r->task_idx;
			r->dup_tid = key;
		}
	} else {
		size_t c1 = r->cap_block, c2 = r->cap_block;
		if (jx_reserve((void **)&d->block_task_id, &c1, d->n_block_tasks, sizeof(uint64_t)) ||
		    jx_reserve((void **)&d->block_value, &c2, d->n_block_tasks, sizeof(uint32_t)))
			return oom(p);
		r->cap_block = c1 < c2 ? c1 : c2;
		d->block_task_id[d->n_block_tasks] = key;
		d->block_value[d->n_block_tasks] = bn;
		*s = (uint32_t)d->n_block_tasks + 1;
		d->n_block_tasks++;
		if (jx_added(&r->pv->bix, btask_hash, d))
			return oom(p);
	}
	/* kernel map: only entries with a kernel_ids list of length 3 */
	if (r->kids_key && (!r->kids_list || r->n_kids != 3) && !r->n_badkids++) {
		r->badkids_idx = r->task_idx;
		r->badkids_n = r->kids_list ? r->n_kids : -1; /* -1: not a list */
	}
	if (!r->kids_list || r->n_kids != 3)
		return 0;
	size_t c1 = r->cap_tasks, c2 = r->cap_tasks, c3 = r->cap_tasks;
	if (jx_reserve((void **)&d->task_id, &c1, d->n_tasks, sizeof(uint64_t)) ||
	    jx_reserve((void **)&d->kernel_ids, &c2, d->n_tasks, sizeof(*d->kernel_ids)) ||
	    jx_reserve((void **)&d->block_num, &c3, d->n_tasks, sizeof(uint32_t)))
		return oom(p);
	r->cap_tasks = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
	size_t i = d->n_tasks;
	d->task_id[i] = key;
	memcpy(d->kernel_ids[i], r->kids, sizeof(r->kids));
	d->block_num[i] = bn;
	d->n_tasks++;
	s = jx_probe(&r->pv->kix, jx_mix(key), ktask_eq, d, &key);
	if (*s) {
		*s = (uint32_t)i + 1; /* later entry wins */
		return 0;
	}
	*s = (uint32_t)i + 1;
	return jx_added(&r->pv->kix, ktask_hash, d) ? oom(p) : 0;
}

static int edge_end(struct drd *r, struct js_parser *p)
{
	struct sl_deps *d = r->out;
	if (r->edge_bad || !r->has_pred || !r->has_succ) {
		/* skipped, like the reference (§3.3) */
		edge_skipped(r, r->cur_edge_idx, "no integer pred and succ");
		return 0;
	}
	struct edge_key k = { r->pred, r->succ };
	uint32_t *s = jx_probe(&r->pv->eix, edge_hash_of(k.pred, k.succ), edge_eq, d, &k);
	if (*s)
		return 0; /* a repeated (pred, succ): keep the first */
	size_t c1 = r->cap_edges, c2 = r->cap_edges;
	if (jx_reserve((void **)&d->pred, &c1, d->n_edges, sizeof(uint64_t)) ||
	    jx_reserve((void **)&d->succ, &c2, d->n_edges, sizeof(uint64_t)))
		return oom(p);
	r->cap_edges = c1 < c2 ? c1 : c2;
	d->pred[d->n_edges] = k.pred;
	d->succ[d->n_edges] = k.succ;
	*s = (uint32_t)d->n_edges + 1;
	d->n_edges++;
	return jx_added(&r->pv->eix, edge_hash, d) ? oom(p) : 0;
}

static int dp_start(void *ctx, struct js_parser *p, enum js_type t)
{
	struct drd *r = ctx;
	if (p->depth == 0) {
		if (t != JS_OBJECT)
			return js_fail(p, "expected a JSON object, got %s", js_type_name(t));
		return T_TOP;
	}
	switch (js_top(p)->tag) {
	case T_TOP:
		if (JS_KEY(p, "tasks")) {
			if (r->seen_tasks)
				return js_fail(p, "duplicate key");
			r->seen_tasks = true;
			if (t != JS_ARRAY)
				return js_fail(p, "expected an array of task objects, got %s",
					       js_type_name(t));
			return T_TASKS;
		}
		if (JS_KEY(p, "edges")) {
			if (r->seen_edges)
				return js_fail(p, "duplicate key");
			r->seen_edges = true;
			if (t != JS_ARRAY)
				return js_fail(p, "expected an array of edge objects, got %s",
					       js_type_name(t));
			r->out->has_edges = true;
			return T_EDGES;
		}
		return 0; /* "tensors" and anything else */
	case T_TASKS:
		if (t != JS_OBJECT)
			return js_fail(p, "expected a task object, got %s", js_type_name(t));
		r->has_tid = r->kids_list = r->block_set = r->kids_key = r->tid_range = false;
		r->n_kids = 0;
		memset(r->kids, 0, sizeof(r->kids));
		return T_TASK;
	case T_TASK:
		if (JS_KEY(p, "kernel_ids") && t == JS_ARRAY) {
			r->kids_list = r->kids_key = true;
			r->n_kids = 0;
			return T_KIDS;
		}
		if (JS_KEY(p, "task_id"))
			r->has_tid = r->tid_range = false; /* a container is no id */
		else if (JS_KEY(p, "kernel_ids"))
			r->kids_list = false, r->kids_key = true;
		else if (JS_KEY(p, "block_num"))
			r->block_set = false;
		return 0;
	case T_KIDS:
		return js_fail(p, "expected an integer kernel id, got %s", js_type_name(t));
	case T_EDGES:
		if (t != JS_OBJECT) {
			/* not a dict: skipped (§3.3) */
			edge_skipped(r, r->edge_idx++, "not an object");
			return 0;
		}
		r->has_pred = r->has_succ = r->edge_bad = false;
		r->cur_edge_idx = r->edge_idx++;
		return T_EDGE;
	case T_EDGE:
		if (JS_KEY(p, "pred") || JS_KEY(p, "succ"))
			r->edge_bad = true;
		return 0;
	}
	return 0;
}

static int dp_value(void *ctx, struct js_parser *p, const struct js_value *v)
{
	struct drd *r = ctx;
	switch (js_top(p)->tag) {
	case T_TOP:
		if (JS_KEY(p, "tasks")) {
			if (r->seen_tasks)
				return js_fail(p, "duplicate key");
			r->seen_tasks = true;
			if (v->type == JS_NULL)
				return 0;
			return js_fail(p, "expected an array of task objects, got %s",
				       js_type_name(v->type));
		}
		if (JS_KEY(p, "edges")) {
			if (r->seen_edges)
				return js_fail(p, "duplicate key");
			r->seen_edges = true;
			if (v->type == JS_NULL)
				return 0; /* "has no 'edges' array" */
			return js_fail(p, "expected an array of edge objects, got %s",
				       js_type_name(v->type));
		}
		return 0;
	case T_TASKS:
		return js_fail(p, "expected a task object, got %s", js_type_name(v->type));
	case T_TASK:
		if (JS_KEY(p, "task_id")) {
			r->has_tid = soft_u64(v, &r->tid, NULL);
			bool n3;
			uint64_t m3;
			r->tid_range = !r->has_tid &&
				       (v->type == JS_NUMBER || v->type == JS_STRING) &&
				       js_parse_int(v->s, v->len, v->type == JS_STRING, &n3, &m3) ==
					       JS_INT_RANGE;
		} else if (JS_KEY(p, "block_num")) {
			bool neg = false, n2;
			uint64_t m2;
			/* a JSON number must be an integer (2.5 is not a block
			 * count); other unparsable values count as 1 (§3.3) */
			int ir = v->type == JS_NUMBER
					 ? js_parse_int(v->s, v->len, false, &n2, &m2)
					 : JS_INT_OK;
			if (ir == JS_INT_RANGE)
				return js_fail(p, "expected a block count, got %.*s (out of range: "
					       "more than 2^64 - 1)",
					       v->len > 32 ? 32 : (int)v->len, v->s);
			if (ir != JS_INT_OK)
				return js_fail(p, "expected an integer, got %.*s",
					       v->len > 32 ? 32 : (int)v->len, v->s);
			r->block_set = soft_u64(v, &r->block, &neg);
			if (r->block_set && neg)
				r->block = 1; /* max(int(...), 1) */
		} else if (JS_KEY(p, "kernel_ids")) {
			r->kids_list = false;
			r->kids_key = true;
		}
		return 0;
	case T_KIDS: {
		int64_t k;
		int rc = js_get_i64(p, v, false, INT32_MIN, INT32_MAX, &k);
		if (rc == 0 && js_top(p)->idx < 3)
			r->kids[js_top(p)->idx] = (int32_t)k;
		return rc;
	}
	case T_EDGES:
		edge_skipped(r, r->edge_idx++, "not an object"); /* skipped (§3.3) */
		return 0;
	case T_EDGE:
		if (JS_KEY(p, "pred")) {
			r->has_pred = soft_u64(v, &r->pred, NULL);
			r->edge_bad |= !r->has_pred;
		} else if (JS_KEY(p, "succ")) {
			r->has_succ = soft_u64(v, &r->succ, NULL);
			r->edge_bad |= !r->has_succ;
		}
		return 0;
	}
	return 0;
}

static int dp_end(void *ctx, struct js_parser *p, int tag, int64_t n)
{
	struct drd *r = ctx;
	switch (tag) {
	case T_TASK: {
		int rc = task_end(r, p);
		r->task_idx++;
		return rc;
	}
	case T_KIDS:
		r->n_kids = n;
		return 0;
	case T_EDGE:
		return edge_end(r, p);
	}
	return 0;
}

static const struct js_ops dp_ops = {
	.start = dp_start,
	.value = dp_value,
	.end = dp_end,
};

static int read_common(const char *name, const uint8_t *buf, size_t len, bool mem,
		       struct sl_deps *out)
{
	memset(out, 0, sizeof(*out));
	struct deps_priv *pv = calloc(1, sizeof(*pv));
	if (!pv)
		return tp_set_error(-ENOMEM, "%s: out of memory", name);
	out->priv = pv;
	if (jx_init(&pv->kix, 16) || jx_init(&pv->bix, 16) || jx_init(&pv->eix, 16)) {
		sl_deps_free(out);
		return tp_set_error(-ENOMEM, "%s: out of memory", name);
	}
	struct drd r;
	memset(&r, 0, sizeof(r));
	r.out = out;
	r.pv = pv;
	int rc = mem ? js_parse_mem(name, buf, len, &dp_ops, &r)
		     : js_parse_file(name, &dp_ops, &r);
	/* the edge index is only needed for de-duplication while reading */
	jx_free(&pv->eix);
	if (rc == -ENOENT && !mem) {
		sl_deps_free(out);
		return tp_set_error(-ENOENT, "%s: not found", name);
	}
	if (rc) {
		sl_deps_free(out);
		return rc;
	}
	if (!out->has_edges && asprintf(&out->edges_warning, "%s has no 'edges' array", name) < 0) {
		out->edges_warning = NULL;
		sl_deps_free(out);
		return tp_set_error(-ENOMEM, "%s: out of memory", name);
	}
	out->n_bad_kernel_ids = r.n_badkids;
	if (r.n_dup || r.n_badkids || r.n_notid || r.n_edge_skip) {
		char dup[160] = "", kids[200] = "", notid[160] = "", eskip[200] = "";
		if (r.n_dup)
			snprintf(dup, sizeof(dup), "%zu task id%s listed twice (tasks[%zu]: task_id "
				 "%llu again; the later entry is used)", r.n_dup,
				 r.n_dup == 1 ? "" : "s", r.dup_idx,
				 (unsigned long long)r.dup_tid);
		char first[48];
		if (r.badkids_n < 0)
			snprintf(first, sizeof(first), "not a list");
		else
			snprintf(first, sizeof(first), "%lld", (long long)r.badkids_n);
		if (r.n_badkids)
			snprintf(kids, sizeof(kids), "%s%zu kernel_ids list%s not of 3 entries "
				 "(tasks[%zu]: %s; expected AIC, AIV0, AIV1: the task%s left "
				 "without func_ids)", r.n_dup ? "; " : "", r.n_badkids,
				 r.n_badkids == 1 ? "" : "s", r.badkids_idx, first,
				 r.n_badkids == 1 ? " is" : "s are");
		if (r.n_notid)
			snprintf(notid, sizeof(notid), "%s%zu tasks[] entr%s without an integer "
				 "task_id (tasks[%zu]%s; skipped)", r.n_dup || r.n_badkids ? "; " : "",
				 r.n_notid, r.n_notid == 1 ? "y" : "ies", r.notid_idx,
				 r.notid_range ? ": an integer past 64 bits" : "");
		if (r.n_edge_skip)
			snprintf(eskip, sizeof(eskip), "%s%zu of %zu edges[] entr%s skipped (edges[%zu]: "
				 "%s)", r.n_dup || r.n_badkids || r.n_notid ? "; " : "",
				 r.n_edge_skip, r.edge_idx, r.n_edge_skip == 1 ? "y" : "ies",
				 r.edge_skip_idx, r.edge_skip_why);
		if (asprintf(&out->quirks_warning, "%s: %s%s%s%s", name, dup, kids, notid, eskip) < 0) {
			out->quirks_warning = NULL;
			sl_deps_free(out);
			return tp_set_error(-ENOMEM, "%s: out of memory", name);
		}
	}
	return 0;
}

int sl_read_deps(const char *path, struct sl_deps *out)
{
	return read_common(path, NULL, 0, false, out);
}

int sl_read_deps_mem(const char *name, const uint8_t *buf, size_t len, struct sl_deps *out)
{
	return read_common(name, buf, len, true, out);
}

void sl_deps_free(struct sl_deps *d)
{
	if (!d)
		return;
	free(d->edges_warning);
	free(d->quirks_warning);
	free(d->pred);
	free(d->succ);
	free(d->task_id);
	free(d->kernel_ids);
	free(d->block_num);
	free(d->block_task_id);
	free(d->block_value);
	struct deps_priv *pv = d->priv;
	if (pv) {
		jx_free(&pv->kix);
		jx_free(&pv->bix);
		jx_free(&pv->eix);
		free(pv);
	}
	memset(d, 0, sizeof(*d));
}

long sl_deps_find_task(const struct sl_deps *d, uint64_t task_id)
{
	const struct deps_priv *pv = d ? d->priv : NULL;
	if (!pv || !pv->kix.slot || d->n_tasks == 0)
		return -1;
	uint32_t s = *jx_probe(&pv->kix, jx_mix(task_id), ktask_eq, d, &task_id);
	return s ? (long)s - 1 : -1;
}

uint32_t sl_deps_block_num(const struct sl_deps *d, uint64_t task_id)
{
	const struct deps_priv *pv = d ? d->priv : NULL;
	if (!pv || !pv->bix.slot || d->n_block_tasks == 0)
		return 0;
	uint32_t s = *jx_probe(&pv->bix, jx_mix(task_id), btask_eq, d, &task_id);
	return s ? d->block_value[s - 1] : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

void sl_deps_cover(const struct sl_deps *d, const struct sl_perf_data *pd,
		   struct sl_deps_cover *out)
{
	out->rows = pd->n_tasks;
	out->no_tasks = d->n_tasks == 0;
	out->bad_kernel_ids = d->n_bad_kernel_ids > 0;
	out->unlisted = 0;
	out->off_edges = 0;
	out->no_kernel = 0;
	for (size_t i = 0; i < pd->n_tasks; i++) {
		const struct sl_task *t = &pd->tasks[i];
		long k = out->no_tasks ? -1 : sl_deps_find_task(d, t->task_id);
		if (k < 0) {
			out->unlisted++;
			continue;
		}
		/* The row ran on its core type: the task must have a kernel
		 * for it (the func_id resolution of spec §2.10 looks there). */
		const int32_t *ids = d->kernel_ids[k];
		bool aic = t->core_type == SL_AIC;
		/* A core metadata.core_types does not list is typed AIV by
		 * default (spec §1.9), which says nothing of deps.json: the
		 * metadata warning covers those rows. */
		if (t->core_id < 0 || (size_t)t->core_id >= pd->n_core_types)
			continue;
		if (t->func_id >= 0 || (aic ? ids[0] >= 0 : ids[1] >= 0 || ids[2] >= 0))
			continue;
		if (!out->no_kernel++) {
			out->nk_task = t->task_id;
			out->nk_core = t->core_id;
			out->nk_aic = aic;
			memcpy(out->nk_ids, ids, sizeof(out->nk_ids));
		}
	}
	if (!out->no_tasks || !d->n_edges)
		return;
	/* Edges only: the endpoints, sorted, are what the rows can be
	 * checked against. */
	uint64_t *ep = tp_malloc_huge(2 * d->n_edges * sizeof(*ep));
	if (!ep) {
		/* Out of memory: no check rather than a false warning. */
		return;
	}
	for (size_t k = 0; k < d->n_edges; k++) {
		ep[2 * k] = d->pred[k];
		ep[2 * k + 1] = d->succ[k];
	}
	qsort(ep, 2 * d->n_edges, sizeof(*ep), cmp_u64);
	for (size_t i = 0; i < pd->n_tasks; i++)
		out->off_edges += !bsearch(&pd->tasks[i].task_id, ep, 2 * d->n_edges,
					   sizeof(*ep), cmp_u64);
	free(ep);
}

bool sl_deps_cover_edges_foreign(const struct sl_deps_cover *c)
{
	return c->no_tasks && c->rows && c->off_edges == c->rows;
}

void sl_deps_cover_edges_warn(FILE *err, const struct sl_deps_cover *c,
			      const char *records_path, const char *deps_path,
			      const char *consequence)
{
	fprintf(err,
		"Warning: %zu of %zu task rows of %s have a task_id that no edge of %s names "
		"(it lists no tasks, only edges: is it from another case or run?): %s.\n",
		c->off_edges, c->rows, tp_shown(records_path), tp_shown(deps_path), consequence);
}

void sl_deps_cover_kernel_warn(FILE *err, const struct sl_deps_cover *c,
			       const char *records_path, const char *deps_path)
{
	if (!c->no_kernel)
		return;
	char td[32];
	fprintf(err,
		"Warning: %zu of %zu task rows of %s ran on a core type for which %s gives their "
		"task no kernel (first: %s on %s core %d, kernel_ids [%d, %d, %d]): is it from "
		"another case or run? Those rows stay unnamed (func_-1).\n",
		c->no_kernel, c->rows, tp_shown(records_path), tp_shown(deps_path),
		sl_tdisp(c->nk_task, td, sizeof(td)), c->nk_aic ? "AIC" : "AIV", c->nk_core,
		c->nk_ids[0], c->nk_ids[1], c->nk_ids[2]);
}

void sl_deps_cover_warn(FILE *err, const struct sl_deps_cover *c, const char *records_path,
			const char *deps_path, const char *consequence)
{
	if (!c->unlisted)
		return;
	fprintf(err,
		"Warning: %zu of %zu task rows of %s have a task_id that %s does not list (%s): "
		"%s.\n",
		c->unlisted, c->rows, tp_shown(records_path), tp_shown(deps_path),
		c->bad_kernel_ids ? "is it from another case or run? Or are they among its "
				    "entries whose kernel_ids is not a list of 3, left out as "
				    "said above?"
		: c->no_tasks	  ? "it lists no tasks: is it a dep_gen deps.json?"
				  : "is it from another case or run?",
		consequence);
}
