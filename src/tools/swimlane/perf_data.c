/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/perf_data.c — the reader of l2_swimlane_records.json and
 * its join (spec/swimlane-format.md §1, §2).
 *
 * One streaming pass with a key-path state machine (json_stream.h). Rows
 * are kept as compact structs; as soon as both aicore_tasks and a non-empty
 * aicpu_tasks have been read (the writer's key order, §1.2) the join runs
 * and the raw rows are freed, before the phase arrays (the bulk of a level-4
 * file) are read, so the peak holds the joined tasks plus the phases, not
 * the rows as well. Times need the base (§2.2), the minimum over the whole
 * file, so until the end every time field holds its raw cycle count (the
 * u64's bits stored in the double) and is converted once at the end.
 *
 * Strictness beyond the reference (issue 4), all -EINVAL with the key path:
 * negative or float values where an integer is expected (cycles, ids,
 * counts; a negative task_id of a phase record wraps modulo 2^64 instead,
 * and a negative orch task_id reads as absent), numbers where a row, list
 * or object is expected and the reverse, strings in rows (only
 * l2_swimlane_level and clock_freq_hz take numeric strings, §1.9), aicpu
 * rows of length != 4, aicore rows shorter than 5, core_id outside
 * 0..INT32_MAX, repeated (core_id, reg_task_id) keys within aicore_tasks or
 * within aicpu_tasks, a key repeated in any object, core_types strings other
 * than "aic" / "aiv", core_to_thread values outside -1..SL_C2T_MAX (an int8
 * thread index: 2^31 would mean 2^31 trace lanes), and records that end
 * before they start (aicore end < start, aicpu finish < dispatch, sched /
 * orch end_cycles < start_cycles; an end of 0 after a non-zero start too,
 * since 0 converts to 0.0, §2.3). Unknown keys are skipped.
 * Measured (1M tasks, 0.75 sched + 1 orch record per task, 335 MB): ~1.9 s,
 * 228 MB peak; the peak is the result itself (sl_task 88 B, sl_phase 96 B).
 */
#include "tools/swimlane/perf_data.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem.h"
#include "base/error.h"
#include "tools/swimlane/json_index.h"
#include "tools/swimlane/json_stream.h"

/* ---- raw cycles parked in double fields until the base is known -------- */

static inline double park(uint64_t c)
{
	double d;
	memcpy(&d, &c, sizeof(d));
	return d;
}

static inline uint64_t unpark(double d)
{
	uint64_t c;
	memcpy(&c, &d, sizeof(c));
	return c;
}

/*
 * to_us of spec §2.3: 0.0 for a zero timestamp, else (c - base) as an exact
 * integer subtraction, converted to double (correctly rounded, as Python's
 * int * float does), then one multiply by the factor.
 */
static inline double to_us(uint64_t c, uint64_t base, double factor)
{
	if (c == 0)
		return 0.0;
	double d = c >= base ? (double)(c - base) : -(double)(base - c);
	return d * factor;
}

/* ---- reader state ------------------------------------------------------ */

struct core_row {
	uint64_t token, reg, start, end, r2s;
	int32_t core;
	bool taken; /* an aicpu row joined it */
};

struct cpu_row {
	uint64_t reg, dispatch, finish;
	int32_t core;
};

/* Frame tags (json_stream.h): which container we are in. */
enum {
	T_TOP = 1,
	T_META,
	T_CORE_TYPES,
	T_C2T,
	T_AICORE,
	T_AICORE_ROW,
	T_AICPU,
	T_AICPU_ROW,
	T_SCHED,
	T_SCHED_THREAD,
	T_SCHED_REC,
	T_SHARED_START,
	T_SHARED_END,
	T_ORCH,
	T_ORCH_LANE,
	T_ORCH_REC,
};

/* Top-level keys we read; a second occurrence is an error (a JSON object
 * with a repeated key has no single meaning worth guessing). */
enum {
	K_LEVEL = 1u << 0,
	K_META = 1u << 1,
	K_AICORE = 1u << 2,
	K_AICPU = 1u << 3,
	K_SCHED = 1u << 4,
	K_ORCH = 1u << 5,
};

/* Private part of struct sl_perf_data: interned unknown kind strings,
 * with an open-addressing index over them (a file may hold a million
 * distinct ones: a linear search made reading it quadratic). */
struct pd_priv {
	char **names;
	size_t n_names, cap_names;
	uint32_t *index;   /* 0: empty, else names[] position + 1 */
	size_t index_cap;  /* a power of two, > 2 * n_names; 0 before the first */
};

struct rd {
	struct sl_perf_data *out;
	struct pd_priv *priv;
	const char *name;
	unsigned seen;
	bool have_level;
	bool seen_edges, seen_names; /* top-level keys of a deps.json / a name map */
	int64_t clock;
	bool have_clock;
	/* metadata keys seen (repeated metadata keys: later wins, like json) */
	size_t cap_core_types, cap_c2t;

	struct core_row *core;
	size_t n_core, cap_core;
	struct cpu_row *cpu;
	size_t n_cpu, cap_cpu;
	bool core_done, cpu_done, joined;
	struct jx_table core_ix;
	uint64_t base;

	size_t cap_tasks;
	size_t cap_sched_outer, cap_orch_outer;
	size_t *cap_sched, *cap_orch; /* per-thread capacities */

	/* the record being read */
	struct sl_phase ph;
	uint64_t ph_start, ph_end;
	unsigned ph_pop; /* 1 = pop_hit seen, 2 = pop_miss seen */
	struct sl_orch orch;
	uint64_t orch_start, orch_end;

	/* unmatched aicpu rows per core, in first-seen order (§2.4) */
	int32_t *miss_core;
	uint64_t *miss_count;
	size_t n_miss_cores, cap_miss;
	struct jx_table miss_ix;
};

static inline void base_cand(struct rd *r, uint64_t v)
{
	if (v > 0 && (r->base == 0 || v < r->base))
		r->base = v;
}

static int oom(struct js_parser *p)
{
	if (p->err == 0)
		p->err = tp_set_error(-ENOMEM, "%s: out of memory", p->name);
	return -ENOMEM;
}

/* ---- join indexes ------------------------------------------------------ */

struct join_key {
	int32_t core;
	uint64_t reg;
};

static inline uint64_t join_hash(int32_t core, uint64_t reg)
{
	return jx_mix(reg * 0x9e3779b97f4a7c15ull + (uint32_t)core);
}

static bool core_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct core_row *row = &((const struct core_row *)ctx)[idx];
	const struct join_key *k = key;
	return row->core == k->core && row->reg == k->reg;
}

static bool cpu_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct cpu_row *row = &((const struct cpu_row *)ctx)[idx];
	const struct join_key *k = key;
	return row->core == k->core && row->reg == k->reg;
}

/* Index the aicore rows by (core_id, reg_task_id); a repeated key is an
 * error naming both rows (issue 4: the reference silently keeps the later
 * row, which hides a broken writer). */
static int index_core_rows(struct rd *r, struct js_parser *p)
{
	if (jx_init(&r->core_ix, r->n_core))
		return oom(p);
	for (size_t i = 0; i < r->n_core; i++) {
		struct join_key k = { r->core[i].core, r->core[i].reg };
		uint32_t *s = jx_probe(&r->core_ix, join_hash(k.core, k.reg), core_eq,
				       r->core, &k);
		if (*s) {
			char place[64];
			snprintf(place, sizeof(place), "aicore_tasks[%zu]", i);
			return js_fail_at(p, place,
					  "duplicate join key (core_id, reg_task_id) = (%" PRId32
					  ", %" PRIu64 "), also in aicore_tasks[%" PRIu32 "]",
					  k.core, k.reg, *s - 1);
		}
		*s = (uint32_t)i + 1;
		r->core_ix.n++; /* sized for n_core up front: no growth needed */
	}
	return 0;
}

static int check_cpu_dups(struct rd *r, struct js_parser *p)
{
	struct jx_table ix;
	if (jx_init(&ix, r->n_cpu))
		return oom(p);
	int rc = 0;
	for (size_t i = 0; i < r->n_cpu; i++) {
		struct join_key k = { r->cpu[i].core, r->cpu[i].reg };
		uint32_t *s = jx_probe(&ix, join_hash(k.core, k.reg), cpu_eq, r->cpu, &k);
		if (*s) {
			char place[64];
			snprintf(place, sizeof(place), "aicpu_tasks[%zu]", i);
			rc = js_fail_at(p, place,
					"duplicate join key (core_id, reg_task_id) = (%" PRId32
					", %" PRIu64 "), also in aicpu_tasks[%" PRIu32 "]",
					k.core, k.reg, *s - 1);
			break;
		}
		*s = (uint32_t)i + 1;
		ix.n++;
	}
	jx_free(&ix);
	return rc;
}

static bool miss_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const int32_t *)ctx)[idx] == *(const int32_t *)key;
}

static uint64_t miss_hash(const void *ctx, uint32_t idx)
{
	return jx_mix((uint32_t)((const int32_t *)ctx)[idx]);
}

static int count_miss(struct rd *r, int32_t core)
{
	if (!r->miss_ix.slot && jx_init(&r->miss_ix, 16))
		return -ENOMEM;
	uint32_t *s = jx_probe(&r->miss_ix, jx_mix((uint32_t)core), miss_eq,
			       r->miss_core, &core);
	if (*s) {
		r->miss_count[*s - 1]++;
		return 0;
	}
	size_t cap = r->cap_miss;
	if (jx_reserve((void **)&r->miss_core, &cap, r->n_miss_cores, sizeof(int32_t)))
		return -ENOMEM;
	size_t cap2 = r->cap_miss;
	if (jx_reserve((void **)&r->miss_count, &cap2, r->n_miss_cores, sizeof(uint64_t)))
		return -ENOMEM;
	r->cap_miss = cap < cap2 ? cap : cap2;
	r->miss_core[r->n_miss_cores] = core;
	r->miss_count[r->n_miss_cores] = 1;
	*s = (uint32_t)r->n_miss_cores + 1;
	r->n_miss_cores++;
	return jx_added(&r->miss_ix, miss_hash, r->miss_core);
}

static int add_task(struct rd *r, struct js_parser *p, const struct core_row *c,
		    const struct cpu_row *a)
{
	struct sl_perf_data *o = r->out;
	if (jx_reserve((void **)&o->tasks, &r->cap_tasks, o->n_tasks, sizeof(*o->tasks)))
		return oom(p);
	struct sl_task *t = &o->tasks[o->n_tasks++];
	memset(t, 0, sizeof(*t));
	t->task_id = c->token;
	t->func_id = -1;
	t->core_id = c->core;
	t->has_propagation = a != NULL;
	t->start_us = park(c->start);
	t->end_us = park(c->end);
	t->receive_us = park(c->r2s);
	t->dispatch_us = park(a ? a->dispatch : 0);
	t->finish_us = park(a ? a->finish : 0);
	return 0;
}

/*
 * The join of spec §2.4 (aicpu rows present) or the level-1 path of §2.5;
 * frees the raw rows. @level is the file's level (0 if not known yet: only
 * allowed with aicpu rows, where the level does not matter).
 */
/* Append (@core, @row) to an unjoined-rows list of @r's output. */
static int add_unjoined(struct sl_row_at **v, size_t *n, size_t *cap, int32_t core, size_t row)
{
	if (jx_reserve((void **)v, cap, *n, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = (struct sl_row_at){ core, row };
	return 0;
}

static int join_rows(struct rd *r, struct js_parser *p, int level)
{
	int rc = 0;
	struct sl_perf_data *o = r->out;
	size_t cap_core = 0, cap_cpu = 0;
	if (r->n_cpu > 0) {
		for (size_t i = 0; i < r->n_cpu; i++) {
			const struct cpu_row *a = &r->cpu[i];
			struct join_key k = { a->core, a->reg };
			uint32_t s = 0;
			if (r->core_ix.slot)
				s = *jx_probe(&r->core_ix, join_hash(k.core, k.reg), core_eq,
					      r->core, &k);
			if (!s) {
				r->out->n_unmatched++;
				if (count_miss(r, a->core) ||
				    add_unjoined(&o->unjoined_aicpu, &o->n_unjoined_aicpu, &cap_cpu,
						 a->core, i)) {
					rc = oom(p);
					break;
				}
				continue;
			}
			r->core[s - 1].taken = true;
			rc = add_task(r, p, &r->core[s - 1], a);
			if (rc)
				break;
		}
	} else if (level == 1) {
		for (size_t i = 0; i < r->n_core && rc == 0; i++)
			rc = add_task(r, p, &r->core[i], NULL);
	}
	/* else: level >= 2 with no aicpu rows gives zero tasks (§2.5) */
	for (size_t i = 0; i < r->n_core && rc == 0 && (r->n_cpu > 0 || level != 1); i++)
		if (!r->core[i].taken &&
		    add_unjoined(&o->unjoined_aicore, &o->n_unjoined_aicore, &cap_core,
				 r->core[i].core, i))
			rc = oom(p);
	if (r->n_cpu > 0) {
		/* Join keys are unique on both sides (a repeat is an error), so
		 * each matched AICPU row took one AICore row. */
		uint64_t matched = r->n_cpu - r->out->n_unmatched;
		r->out->n_aicore_orphans = r->n_core > matched ? r->n_core - matched : 0;
	}
	free(r->core);
	r->core = NULL;
	free(r->cpu);
	r->cpu = NULL;
	jx_free(&r->core_ix);
	r->joined = true;
	return rc;
}

/* ---- phase kinds ------------------------------------------------------- */

static const struct {
	const char *s;
	uint8_t kind;
} kind_names[] = {
	{ "complete", SL_PH_COMPLETE },
	{ "dispatch", SL_PH_DISPATCH },
	{ "release", SL_PH_RELEASE },
	{ "dummy", SL_PH_DUMMY },
	{ "early_dispatch", SL_PH_EARLY_DISPATCH },
	{ "resolve", SL_PH_RESOLVE },
	{ "dummy_task", SL_PH_DUMMY_TASK },
	{ "drain", SL_PH_DRAIN },
	{ "drain_prepare", SL_PH_DRAIN_PREPARE },
	{ "drain_publish", SL_PH_DRAIN_PUBLISH },
	{ "async_poll", SL_PH_ASYNC_POLL },
	{ "predicated_skip", SL_PH_PREDICATED_SKIP },
	{ "scan", SL_PH_SCAN },
	{ "poll", SL_PH_POLL },
	{ "idle", SL_PH_IDLE },
	{ "fanout", SL_PH_FANOUT },
	{ "prestage", SL_PH_PRESTAGE },
};

/* A kind string's byte as interned: a NUL inside it (\u0000) as '?'. */
static inline unsigned char kind_byte(char c)
{
	return c ? (unsigned char)c : '?';
}

/* FNV-1a of @len bytes as interned. */
static uint64_t name_hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ kind_byte(s[i])) * 1099511628211ull;
	return h;
}

/* Rebuild the index with room for twice as many names. Return: 0 or
 * -ENOMEM. */
static int grow_index(struct pd_priv *pv)
{
	size_t cap = pv->index_cap ? pv->index_cap * 2 : 64;
	uint32_t *ix = tp_calloc_huge(cap, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < pv->n_names; i++) {
		size_t j = name_hash(pv->names[i], strlen(pv->names[i])) & (cap - 1);
		while (ix[j])
			j = (j + 1) & (cap - 1);
		ix[j] = (uint32_t)(i + 1);
	}
	free(pv->index);
	pv->index = ix;
	pv->index_cap = cap;
	return 0;
}

/* Whether the interned @e is @len bytes of @s as interned. */
static bool same_kind(const char *e, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)e[i] != kind_byte(s[i]))
			return false; /* also at e's NUL: kind_byte() is never 0 */
	return e[len] == '\0';
}

/*
 * The interned copy of an unknown kind string (owned by the perf data):
 * one per distinct string, found through a hash index. A NUL inside the
 * JSON string (\u0000) is kept as '?', so the copy is one C string and
 * the warnings show where it was. NULL: out of memory.
 */
static const char *intern(struct rd *r, const char *s, size_t len)
{
	struct pd_priv *pv = r->priv;
	if ((pv->n_names + 1) * 2 >= pv->index_cap && grow_index(pv))
		return NULL;
	size_t j = name_hash(s, len) & (pv->index_cap - 1);
	for (; pv->index[j]; j = (j + 1) & (pv->index_cap - 1)) {
		const char *e = pv->names[pv->index[j] - 1];
		if (same_kind(e, s, len))
			return e;
	}
	if (pv->n_names >= UINT32_MAX - 1 ||
	    jx_reserve((void **)&pv->names, &pv->cap_names, pv->n_names, sizeof(char *)))
		return NULL;
	char *d = js_strndup(s, len);
	if (!d)
		return NULL;
	for (size_t i = 0; i < len; i++)
		d[i] = (char)kind_byte(d[i]);
	pv->names[pv->n_names++] = d;
	pv->index[j] = (uint32_t)pv->n_names;
	return d;
}

static int set_kind(struct rd *r, struct js_parser *p, const struct js_value *v)
{
	if (v->type == JS_NULL) {
		r->ph.kind = SL_PH_UNKNOWN;
		r->ph.name = NULL;
		return 0;
	}
	if (v->type != JS_STRING)
		return js_fail(p, "expected a phase kind string, got %s", js_type_name(v->type));
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		if (strlen(kind_names[i].s) == v->len &&
		    memcmp(kind_names[i].s, v->s, v->len) == 0) {
			r->ph.kind = kind_names[i].kind;
			r->ph.name = NULL;
			return 0;
		}
	}
	r->ph.kind = SL_PH_UNKNOWN;
	r->ph.name = intern(r, v->s, v->len);
	if (!r->ph.name)
		return oom(p);
	if (!r->out->n_unknown_phases++)
		r->out->first_unknown_phase = r->ph.name;
	return 0;
}

/* ---- hooks ------------------------------------------------------------- */

static int row_start(struct rd *r, struct js_parser *p, enum js_type t, int tag)
{
	if (t != JS_ARRAY)
		return js_fail(p, "expected a row (an array of integers), got %s",
			       js_type_name(t));
	if (tag == T_AICORE_ROW) {
		if (jx_reserve((void **)&r->core, &r->cap_core, r->n_core, sizeof(*r->core)))
			return oom(p);
		memset(&r->core[r->n_core], 0, sizeof(*r->core));
	} else {
		if (jx_reserve((void **)&r->cpu, &r->cap_cpu, r->n_cpu, sizeof(*r->cpu)))
			return oom(p);
		memset(&r->cpu[r->n_cpu], 0, sizeof(*r->cpu));
	}
	return tag;
}

static int list_start(struct rd *r, struct js_parser *p, enum js_type t, int tag)
{
	(void)r;
	if (t != JS_ARRAY)
		return js_fail(p, "expected an array, got %s", js_type_name(t));
	return tag;
}

static int top_key_once(struct rd *r, struct js_parser *p, unsigned bit)
{
	if (r->seen & bit)
		return js_fail(p, "duplicate key");
	r->seen |= bit;
	return 0;
}

static int new_list(struct rd *r, struct js_parser *p, bool sched)
{
	struct sl_perf_data *o = r->out;
	struct sl_phase_list **sv = &o->sched;
	struct sl_orch_list **ov = &o->orch;
	size_t *n = sched ? &o->n_sched : &o->n_orch;
	size_t *cap = sched ? &r->cap_sched_outer : &r->cap_orch_outer;
	size_t **caps = sched ? &r->cap_sched : &r->cap_orch;
	size_t c = *cap;
	int rc = sched ? jx_reserve((void **)sv, &c, *n, sizeof(**sv))
		       : jx_reserve((void **)ov, &c, *n, sizeof(**ov));
	if (rc)
		return oom(p);
	size_t c2 = *cap;
	if (jx_reserve((void **)caps, &c2, *n, sizeof(size_t)))
		return oom(p);
	*cap = c < c2 ? c : c2;
	if (sched) {
		(*sv)[*n].v = NULL;
		(*sv)[*n].n = 0;
	} else {
		(*ov)[*n].v = NULL;
		(*ov)[*n].n = 0;
	}
	(*caps)[*n] = 0;
	(*n)++;
	return 0;
}

static bool sched_scalar_key(const struct js_parser *p)
{
	return JS_KEY(p, "kind") || JS_KEY(p, "start_cycles") || JS_KEY(p, "end_cycles") ||
	       JS_KEY(p, "loop_iter") || JS_KEY(p, "tasks_processed") ||
	       JS_KEY(p, "pop_hit") || JS_KEY(p, "pop_miss") || JS_KEY(p, "task_id");
}

static bool orch_scalar_key(const struct js_parser *p)
{
	return JS_KEY(p, "submit_idx") || JS_KEY(p, "task_id") ||
	       JS_KEY(p, "start_cycles") || JS_KEY(p, "end_cycles");
}

static int pd_start(void *ctx, struct js_parser *p, enum js_type t)
{
	struct rd *r = ctx;
	if (p->depth == 0) {
		if (t != JS_OBJECT)
			return js_fail(p, "expected a JSON object, got %s", js_type_name(t));
		return T_TOP;
	}
	switch (js_top(p)->tag) {
	case T_TOP:
		if (JS_KEY(p, "metadata")) {
			if (top_key_once(r, p, K_META))
				return -EINVAL;
			if (t != JS_OBJECT)
				return js_fail(p, "expected an object, got %s", js_type_name(t));
			return T_META;
		}
		if (JS_KEY(p, "aicore_tasks")) {
			if (top_key_once(r, p, K_AICORE))
				return -EINVAL;
			return list_start(r, p, t, T_AICORE);
		}
		if (JS_KEY(p, "aicpu_tasks")) {
			if (top_key_once(r, p, K_AICPU))
				return -EINVAL;
			return list_start(r, p, t, T_AICPU);
		}
		if (JS_KEY(p, "aicpu_scheduler_phases")) {
			if (top_key_once(r, p, K_SCHED))
				return -EINVAL;
			return list_start(r, p, t, T_SCHED);
		}
		if (JS_KEY(p, "aicpu_orchestrator_phases")) {
			if (top_key_once(r, p, K_ORCH))
				return -EINVAL;
			return list_start(r, p, t, T_ORCH);
		}
		if (JS_KEY(p, "l2_swimlane_level"))
			return js_fail(p, "expected an integer 1..4, got %s", js_type_name(t));
		/* unknown key (e.g. v1's "tasks"): skipped; remembered for
		 * the error of a file without l2_swimlane_level, which may
		 * be another of the run's files given by mistake */
		if (JS_KEY(p, "edges"))
			r->seen_edges = true;
		else if (JS_KEY(p, "callable_id_to_name"))
			r->seen_names = true;
		return 0;
	case T_META:
		if (JS_KEY(p, "core_types")) {
			r->out->n_core_types = 0;
			return list_start(r, p, t, T_CORE_TYPES);
		}
		if (JS_KEY(p, "core_to_thread")) {
			r->out->n_core_to_thread = 0;
			return list_start(r, p, t, T_C2T);
		}
		if (JS_KEY(p, "clock_freq_hz") || JS_KEY(p, "num_cores"))
			return js_fail(p, "expected an integer, got %s", js_type_name(t));
		return 0;
	case T_CORE_TYPES:
		return js_fail(p, "expected \"aic\" or \"aiv\", got %s", js_type_name(t));
	case T_C2T:
		return js_fail(p, "expected an integer (a thread index), got %s",
			       js_type_name(t));
	case T_AICORE:
		return row_start(r, p, t, T_AICORE_ROW);
	case T_AICPU:
		return row_start(r, p, t, T_AICPU_ROW);
	case T_AICORE_ROW:
		if (js_top(p)->idx >= 6)
			return 0; /* extra columns are ignored (§1.9) */
		return js_fail(p, "expected an integer, got %s", js_type_name(t));
	case T_AICPU_ROW:
		return js_fail(p, "expected an integer, got %s", js_type_name(t));
	case T_SCHED:
		if (t != JS_ARRAY)
			return js_fail(p, "expected an array (one per scheduler thread), got %s",
				       js_type_name(t));
		return new_list(r, p, true) ? -ENOMEM : T_SCHED_THREAD;
	case T_ORCH:
		if (t != JS_ARRAY)
			return js_fail(p, "expected an array (one per orchestrator lane), got %s",
				       js_type_name(t));
		return new_list(r, p, false) ? -ENOMEM : T_ORCH_LANE;
	case T_SCHED_THREAD:
		if (t != JS_OBJECT)
			return js_fail(p, "expected a phase record object, got %s",
				       js_type_name(t));
		memset(&r->ph, 0, sizeof(r->ph));
		r->ph.kind = SL_PH_UNKNOWN;
		r->ph_start = r->ph_end = 0;
		r->ph_pop = 0;
		return T_SCHED_REC;
	case T_ORCH_LANE:
		if (t != JS_OBJECT)
			return js_fail(p, "expected an orchestrator record object, got %s",
				       js_type_name(t));
		memset(&r->orch, 0, sizeof(r->orch));
		r->orch_start = r->orch_end = 0;
		return T_ORCH_REC;
	case T_SCHED_REC:
		if (JS_KEY(p, "shared_at_start") || JS_KEY(p, "shared_at_end")) {
			if (t != JS_ARRAY)
				return js_fail(p, "expected a list of 3 integers, got %s",
					       js_type_name(t));
			return JS_KEY(p, "shared_at_start") ? T_SHARED_START : T_SHARED_END;
		}
		if (sched_scalar_key(p))
			return js_fail(p, "expected %s, got %s",
				       JS_KEY(p, "kind") ? "a phase kind string" : "an integer",
				       js_type_name(t));
		return 0;
	case T_ORCH_REC:
		if (orch_scalar_key(p))
			return js_fail(p, "expected an integer, got %s", js_type_name(t));
		return 0;
	case T_SHARED_START:
	case T_SHARED_END:
		return js_fail(p, "expected an integer, got %s", js_type_name(t));
	}
	return 0;
}

static int meta_value(struct rd *r, struct js_parser *p, const struct js_value *v)
{
	struct sl_perf_data *o = r->out;
	if (JS_KEY(p, "clock_freq_hz")) {
		r->have_clock = true;
		if (v->type == JS_NULL) { /* `metadata.clock_freq_hz or 0` (§2.1) */
			r->clock = 0;
			return 0;
		}
		return js_get_i64(p, v, true, INT64_MIN, INT64_MAX, &r->clock);
	}
	if (JS_KEY(p, "num_cores")) {
		if (v->type == JS_NULL) {
			o->num_cores = 0;
			return 0;
		}
		return js_get_i64(p, v, false, INT64_MIN, INT64_MAX, &o->num_cores);
	}
	if (JS_KEY(p, "core_types") || JS_KEY(p, "core_to_thread"))
		return js_fail(p, "expected an array, got %s", js_type_name(v->type));
	return 0;
}

static int top_value(struct rd *r, struct js_parser *p, const struct js_value *v)
{
	if (JS_KEY(p, "l2_swimlane_level")) {
		if (top_key_once(r, p, K_LEVEL))
			return -EINVAL;
		int64_t lv;
		if (v->type == JS_NULL)
			return js_fail(p, "missing (expected an integer 1..4)");
		bool lneg;
		uint64_t lmag;
		int lk = v->type == JS_NUMBER ? js_parse_int(v->s, v->len, false, &lneg, &lmag)
					       : JS_INT_SYNTAX;
		/* any integer outside 1..4, however large, gets the one message */
		if (lk == JS_INT_RANGE || (lk == JS_INT_OK && (lneg || lmag < 1 || lmag > 4)))
			return js_fail(p, "Unsupported l2_swimlane_level: %.*s (expected 1, 2, 3, or 4)",
				       v->len > 40 ? 40 : (int)v->len, v->s);
		int rc = js_get_i64(p, v, true, INT64_MIN, INT64_MAX, &lv);
		if (rc)
			return rc;
		if (lv < 1 || lv > 4)
			return js_fail(p, "Unsupported l2_swimlane_level: %lld (expected 1, 2, 3, or 4)",
				       (long long)lv);
		r->out->level = (int)lv;
		r->have_level = true;
		return 0;
	}
	if (JS_KEY(p, "metadata"))
		return js_fail(p, "expected an object, got %s", js_type_name(v->type));
	if (JS_KEY(p, "aicore_tasks") || JS_KEY(p, "aicpu_tasks") ||
	    JS_KEY(p, "aicpu_scheduler_phases") || JS_KEY(p, "aicpu_orchestrator_phases"))
		return js_fail(p, "expected an array, got %s", js_type_name(v->type));
	return 0;
}

static int aicore_col(struct rd *r, struct js_parser *p, const struct js_value *v)
{
	int64_t col = js_top(p)->idx;
	struct core_row *row = &r->core[r->n_core];
	if (col >= 6)
		return 0; /* extra columns are ignored (§1.9) */
	if (col == 0) {
		int64_t c;
		int rc = js_get_i64(p, v, false, 0, INT32_MAX, &c);
		row->core = (int32_t)c;
		return rc;
	}
	if (col == 5) {
		/* uint32 on the device (§1.4): a larger value is not a
		 * receive-to-start time */
		int rc = js_get_u64(p, v, false, false, &row->r2s);
		if (!rc && row->r2s > UINT32_MAX)
			return js_fail(p, "receive_to_start_cycles %" PRIu64 " out of range "
				       "(a uint32: expected 0..4294967295)", row->r2s);
		return rc;
	}
	uint64_t *dst = col == 1 ? &row->token : col == 2 ? &row->reg : col == 3 ? &row->start
		      : &row->end;
	return js_get_u64(p, v, false, false, dst);
}

static int aicpu_col(struct rd *r, struct js_parser *p, const struct js_value *v)
{
	int64_t col = js_top(p)->idx;
	struct cpu_row *row = &r->cpu[r->n_cpu];
	if (col >= 4)
		return js_fail(p, "aicpu_tasks rows have exactly 4 columns "
				  "[core_id, reg_task_id, dispatch_cycles, finish_cycles]");
	if (col == 0) {
		int64_t c;
		int rc = js_get_i64(p, v, false, 0, INT32_MAX, &c);
		row->core = (int32_t)c;
		return rc;
	}
	uint64_t *dst = col == 1 ? &row->reg : col == 2 ? &row->dispatch : &row->finish;
	return js_get_u64(p, v, false, false, dst);
}

/* A count of a phase record: an integer in [0, @max], else the reader's
 * error naming the key. */
static int get_count(struct js_parser *p, const struct js_value *v, uint64_t max, uint64_t *out)
{
	uint64_t x;
	int rc = js_get_u64(p, v, false, false, &x);
	if (rc)
		return rc;
	if (x > max)
		return js_fail(p, "%" PRIu64 " out of range 0..%" PRIu64, x, max);
	*out = x;
	return 0;
}

/* A record whose start is missing or 0 but whose end is not: counted
 * for the tools' warning, the first one named (@where, @i, @j: its
 * place; @j < 0 for a row). */
static void note_zero_start(struct rd *r, const char *where, size_t i, long long j,
			    const char *key)
{
	struct sl_perf_data *o = r->out;
	if (!o->n_zero_starts++) {
		if (j < 0)
			snprintf(o->first_zero_start, sizeof(o->first_zero_start), "%s[%zu] %s",
				 where, i, key);
		else
			snprintf(o->first_zero_start, sizeof(o->first_zero_start), "%s[%zu][%lld].%s",
				 where, i, j, key);
	}
}

static int sched_value(struct rd *r, struct js_parser *p, const struct js_value *v)
{
	struct sl_phase *ph = &r->ph;
	if (JS_KEY(p, "kind"))
		return set_kind(r, p, v);
	if (JS_KEY(p, "start_cycles"))
		return js_get_u64(p, v, false, false, &r->ph_start);
	if (JS_KEY(p, "end_cycles"))
		return js_get_u64(p, v, false, false, &r->ph_end);
	/* Counts: 32-bit fields of the device record (swl_records.h) but
	 * loop_iter, 64-bit there; bounded at 2^53 (exact in a double, some
	 * 100 days of 1 ns iterations) so that the tools' per-thread sums
	 * cannot wrap. */
	if (JS_KEY(p, "loop_iter")) {
		ph->flags |= SL_PF_LOOP_ITER;
		return get_count(p, v, 1ull << 53, &ph->loop_iter);
	}
	if (JS_KEY(p, "tasks_processed")) {
		ph->flags |= SL_PF_TASKS;
		return get_count(p, v, UINT32_MAX, &ph->tasks_processed);
	}
	if (JS_KEY(p, "pop_hit")) {
		r->ph_pop |= 1;
		return get_count(p, v, UINT32_MAX, &ph->pop_hit);
	}
	if (JS_KEY(p, "pop_miss")) {
		r->ph_pop |= 2;
		return get_count(p, v, UINT32_MAX, &ph->pop_miss);
	}
	if (JS_KEY(p, "task_id")) {
		ph->flags |= SL_PF_TASK_ID;
		/* a raw id; negatives are shown modulo 2^64 (§2.9) */
		return js_get_u64(p, v, false, true, &ph->task_id);
	}
	if (JS_KEY(p, "shared_at_start") || JS_KEY(p, "shared_at_end"))
		return js_fail(p, "expected a list of 3 integers, got %s", js_type_name(v->type));
	return 0;
}

static int orch_value(struct rd *r, struct js_parser *p, const struct js_value *v)
{
	if (JS_KEY(p, "submit_idx"))
		return js_get_u64(p, v, false, false, &r->orch.submit_idx);
	if (JS_KEY(p, "task_id")) {
		if (v->type == JS_NULL)
			return 0;
		int rc = js_get_u64(p, v, false, true, &r->orch.task_id);
		/* a negative id counts as absent for display (§4.5) */
		r->orch.has_task_id = rc == 0 && !(v->len > 0 && v->s[0] == '-' &&
						   r->orch.task_id != 0);
		return rc;
	}
	if (JS_KEY(p, "start_cycles"))
		return js_get_u64(p, v, false, false, &r->orch_start);
	if (JS_KEY(p, "end_cycles"))
		return js_get_u64(p, v, false, false, &r->orch_end);
	return 0;
}

static int pd_value(void *ctx, struct js_parser *p, const struct js_value *v)
{
	struct rd *r = ctx;
	struct sl_perf_data *o = r->out;
	switch (js_top(p)->tag) {
	case T_AICORE_ROW:
		return aicore_col(r, p, v);
	case T_AICPU_ROW:
		return aicpu_col(r, p, v);
	case T_SCHED_REC:
		return sched_value(r, p, v);
	case T_ORCH_REC:
		return orch_value(r, p, v);
	case T_SHARED_START:
	case T_SHARED_END: {
		int64_t x;
		int rc = js_get_i64(p, v, false, INT32_MIN, INT32_MAX, &x);
		int64_t i = js_top(p)->idx;
		if (rc == 0 && i < 3) {
			if (js_top(p)->tag == T_SHARED_START)
				r->ph.shared_at_start[i] = (int32_t)x;
			else
				r->ph.shared_at_end[i] = (int32_t)x;
		}
		return rc;
	}
	case T_TOP:
		return top_value(r, p, v);
	case T_META:
		return meta_value(r, p, v);
	case T_CORE_TYPES:
		if (v->type != JS_STRING)
			return js_fail(p, "expected \"aic\" or \"aiv\", got %s",
				       js_type_name(v->type));
		if (!(v->len == 3 && (!memcmp(v->s, "aic", 3) || !memcmp(v->s, "aiv", 3))))
			return js_fail(p, "expected \"aic\" or \"aiv\", got another string");
		if (jx_reserve((void **)&o->core_types, &r->cap_core_types, o->n_core_types, 1))
			return oom(p);
		o->core_types[o->n_core_types++] = v->s[2] == 'c' ? SL_AIC : SL_AIV;
		return 0;
	case T_C2T: {
		int64_t x;
		/* an int8 scheduler thread index on the device, -1 = none */
		int rc = js_get_i64(p, v, false, -1, SL_C2T_MAX, &x);
		if (rc)
			return rc;
		if (jx_reserve((void **)&o->core_to_thread, &r->cap_c2t, o->n_core_to_thread,
			       sizeof(int32_t)))
			return oom(p);
		o->core_to_thread[o->n_core_to_thread++] = (int32_t)x;
		return 0;
	}
	case T_AICORE:
	case T_AICPU:
		return js_fail(p, "expected a row (an array of integers), got %s",
			       js_type_name(v->type));
	case T_SCHED:
		return js_fail(p, "expected an array (one per scheduler thread), got %s",
			       js_type_name(v->type));
	case T_ORCH:
		return js_fail(p, "expected an array (one per orchestrator lane), got %s",
			       js_type_name(v->type));
	case T_SCHED_THREAD:
		return js_fail(p, "expected a phase record object, got %s",
			       js_type_name(v->type));
	case T_ORCH_LANE:
		return js_fail(p, "expected an orchestrator record object, got %s",
			       js_type_name(v->type));
	}
	return 0;
}

static int sched_rec_end(struct rd *r, struct js_parser *p)
{
	struct sl_perf_data *o = r->out;
	size_t t = o->n_sched - 1;
	struct sl_phase_list *l = &o->sched[t];
	if (jx_reserve((void **)&l->v, &r->cap_sched[t], l->n, sizeof(*l->v)))
		return oom(p);
	if (r->ph_pop == 3)
		r->ph.flags |= SL_PF_POP;
	/* no "kind" (or null): phase "unknown" (§1.9), not drawn: counted
	 * for the tools' warning like an unknown kind string */
	if (r->ph.kind == SL_PH_UNKNOWN && !r->ph.name)
		o->n_kindless_phases++;
	/* a negative duration (also end 0 after a start: a zero timestamp
	 * converts to 0.0, §2.3) would draw a slice running backwards */
	if (r->ph_end < r->ph_start)
		return js_fail(p, "end_cycles %" PRIu64 " < start_cycles %" PRIu64, r->ph_end,
			       r->ph_start);
	if (!r->ph_start && r->ph_end)
		note_zero_start(r, "aicpu_scheduler_phases", t, (long long)l->n, "start_cycles");
	r->ph.start_us = park(r->ph_start);
	r->ph.end_us = park(r->ph_end);
	base_cand(r, r->ph_start);
	base_cand(r, r->ph_end);
	l->v[l->n++] = r->ph;
	return 0;
}

static int orch_rec_end(struct rd *r, struct js_parser *p)
{
	struct sl_perf_data *o = r->out;
	size_t t = o->n_orch - 1;
	struct sl_orch_list *l = &o->orch[t];
	if (jx_reserve((void **)&l->v, &r->cap_orch[t], l->n, sizeof(*l->v)))
		return oom(p);
	if (r->orch_end < r->orch_start)
		return js_fail(p, "end_cycles %" PRIu64 " < start_cycles %" PRIu64, r->orch_end,
			       r->orch_start);
	if (!r->orch_start && r->orch_end)
		note_zero_start(r, "aicpu_orchestrator_phases", t, (long long)l->n,
				"start_cycles");
	r->orch.start_us = park(r->orch_start);
	r->orch.end_us = park(r->orch_end);
	base_cand(r, r->orch_start);
	base_cand(r, r->orch_end);
	l->v[l->n++] = r->orch;
	return 0;
}

static int pd_end(void *ctx, struct js_parser *p, int tag, int64_t n)
{
	struct rd *r = ctx;
	switch (tag) {
	case T_AICORE_ROW: {
		if (n < 5)
			return js_fail(p, "aicore_tasks rows need at least 5 columns "
					  "[core_id, task_token_raw, reg_task_id, start_cycles, "
					  "end_cycles], got %lld", (long long)n);
		const struct core_row *c = &r->core[r->n_core++];
		if (c->end < c->start)
			return js_fail(p, "end_cycles %" PRIu64 " < start_cycles %" PRIu64, c->end,
				       c->start);
		if (!c->start && c->end)
			note_zero_start(r, "aicore_tasks", r->n_core - 1, -1, "start_cycles");
		/* The receive time, start - r2s (§2.2): a receive at or before
		 * the counter's zero is no base candidate, as the spec has it,
		 * and lands at a negative time; the caller warns. */
		if (c->r2s > c->start)
			r->out->n_r2s_over++;
		if (c->start > c->r2s)
			base_cand(r, c->start - c->r2s);
		base_cand(r, c->end);
		return 0;
	}
	case T_AICPU_ROW: {
		if (n != 4)
			return js_fail(p, "aicpu_tasks rows have exactly 4 columns "
					  "[core_id, reg_task_id, dispatch_cycles, finish_cycles], "
					  "got %lld", (long long)n);
		const struct cpu_row *a = &r->cpu[r->n_cpu++];
		if (a->finish < a->dispatch)
			return js_fail(p, "finish_cycles %" PRIu64 " < dispatch_cycles %" PRIu64,
				       a->finish, a->dispatch);
		if (!a->dispatch && a->finish)
			note_zero_start(r, "aicpu_tasks", r->n_cpu - 1, -1, "dispatch_cycles");
		base_cand(r, a->dispatch);
		base_cand(r, a->finish);
		return 0;
	}
	case T_AICORE:
		r->core_done = true;
		r->out->n_aicore_rows = r->n_core;
		if (index_core_rows(r, p))
			return -EINVAL;
		break;
	case T_AICPU:
		r->cpu_done = true;
		r->out->n_aicpu_rows = r->n_cpu;
		if (check_cpu_dups(r, p))
			return -EINVAL;
		break;
	case T_SCHED_REC:
		return sched_rec_end(r, p);
	case T_ORCH_REC:
		return orch_rec_end(r, p);
	case T_SHARED_START:
		/* another length is kept out of the trace's args, as the
		 * reference does (spec §4.6) */
		if (n == 3)
			r->ph.flags |= SL_PF_SHARED_START;
		return 0;
	case T_SHARED_END:
		if (n == 3)
			r->ph.flags |= SL_PF_SHARED_END;
		return 0;
	default:
		return 0;
	}
	/* Both row arrays read and aicpu rows present: join now, so the rows
	 * are gone before the phase arrays are read (see the top of file). */
	if (r->core_done && r->cpu_done && r->n_cpu > 0 && !r->joined)
		return join_rows(r, p, 0);
	return 0;
}

static const struct js_ops pd_ops = {
	.start = pd_start,
	.value = pd_value,
	.end = pd_end,
};

/* ---- finishing --------------------------------------------------------- */

struct sort_key {
	uint64_t id;
	uint32_t idx;
};

static int cmp_key(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	/* ties keep the join order: the sort is stable (§2.7) */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int sort_tasks(struct sl_perf_data *o)
{
	size_t n = o->n_tasks;
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = o->tasks[i - 1].task_id <= o->tasks[i].task_id;
	if (sorted)
		return 0;
	struct sort_key *k = tp_malloc_huge(n * sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		k[i].id = o->tasks[i].task_id;
		k[i].idx = (uint32_t)i;
	}
	qsort(k, n, sizeof(*k), cmp_key);
	/* Apply the permutation in place, cycle by cycle (a second task array
	 * would double the peak): slot i receives task k[i].idx; a finished
	 * slot is marked with idx = i. */
	for (size_t i = 0; i < n; i++) {
		if (k[i].idx == i)
			continue;
		struct sl_task tmp = o->tasks[i];
		size_t j = i;
		for (;;) {
			size_t src = k[j].idx;
			k[j].idx = (uint32_t)j;
			if (src == i) {
				o->tasks[j] = tmp;
				break;
			}
			o->tasks[j] = o->tasks[src];
			j = src;
		}
	}
	free(k);
	return 0;
}

static int build_warning(struct rd *r)
{
	struct sl_perf_data *o = r->out;
	char off[256];
	size_t pos = 0;
	size_t pick[3];
	size_t np = 0;
	off[0] = '\0';
	/* at most 3 offenders, count descending, ties in first-seen order */
	for (; np < 3 && np < r->n_miss_cores; np++) {
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < r->n_miss_cores; i++) {
			bool taken = false;
			for (size_t j = 0; j < np; j++)
				taken |= pick[j] == i;
			if (taken)
				continue;
			if (best == SIZE_MAX || r->miss_count[i] > r->miss_count[best])
				best = i;
		}
		pick[np] = best;
	}
	for (size_t j = 0; j < np; j++) {
		int w = snprintf(off + pos, sizeof(off) - pos, "%score %" PRId32 ": %" PRIu64,
				 j ? ", " : "", r->miss_core[pick[j]], r->miss_count[pick[j]]);
		if (w > 0 && (size_t)w < sizeof(off) - pos)
			pos += (size_t)w;
	}
	if (asprintf(&o->unmatched_warning,
		     "%" PRIu64 " aicpu_task(s) had no matching AICore record (top offenders: %s); "
		     "the missing AICore buffer(s) were dropped on rotation. Bump "
		     "PLATFORM_AICORE_BUFFERS_PER_CORE if you see this regularly.",
		     o->n_unmatched, off) < 0) {
		o->unmatched_warning = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int finish(struct rd *r, struct js_parser *p)
{
	struct sl_perf_data *o = r->out;
	if (!r->have_level)
		return tp_set_error(-EINVAL, "%s: l2_swimlane_level: missing (expected an integer 1..4)%s",
				    r->name,
				    r->seen_edges ? ": it has \"edges\", like a deps.json; expected "
						    "an l2_swimlane_records.json"
				    : r->seen_names ? ": it has \"callable_id_to_name\", like a name "
						      "map; expected an l2_swimlane_records.json"
						    : "");
	if (r->clock <= 0)
		return tp_set_error(-EINVAL,
				    "%s: metadata.clock_freq_hz: metadata missing/zero clock_freq_hz: %lld",
				    r->name, (long long)r->clock);
	o->clock_freq_hz = (uint64_t)r->clock;
	o->factor = 1000000.0 / (double)o->clock_freq_hz;
	o->base_cycles = r->base;
	if (!r->joined && join_rows(r, p, o->level))
		return p->err ? p->err : -ENOMEM;

	const uint64_t base = r->base;
	const double f = o->factor;
	for (size_t i = 0; i < o->n_tasks; i++) {
		struct sl_task *t = &o->tasks[i];
		t->core_type = t->core_id >= 0 && (size_t)t->core_id < o->n_core_types
				       ? o->core_types[t->core_id] : SL_AIV;
		uint64_t r2s = unpark(t->receive_us);
		t->start_us = to_us(unpark(t->start_us), base, f);
		t->end_us = to_us(unpark(t->end_us), base, f);
		t->duration_us = t->end_us - t->start_us;
		t->dispatch_us = to_us(unpark(t->dispatch_us), base, f);
		t->finish_us = to_us(unpark(t->finish_us), base, f);
		t->local_setup_us = (double)r2s * f;
		t->receive_us = t->start_us - t->local_setup_us;
		t->propagation_us = t->has_propagation ? t->receive_us - t->dispatch_us : 0.0;
	}
	if (sort_tasks(o))
		return tp_set_error(-ENOMEM, "%s: out of memory", r->name);
	for (size_t t = 0; t < o->n_sched; t++) {
		for (size_t i = 0; i < o->sched[t].n; i++) {
			struct sl_phase *ph = &o->sched[t].v[i];
			ph->start_us = to_us(unpark(ph->start_us), base, f);
			ph->end_us = to_us(unpark(ph->end_us), base, f);
		}
	}
	for (size_t t = 0; t < o->n_orch; t++) {
		for (size_t i = 0; i < o->orch[t].n; i++) {
			struct sl_orch *oc = &o->orch[t].v[i];
			oc->start_us = to_us(unpark(oc->start_us), base, f);
			oc->end_us = to_us(unpark(oc->end_us), base, f);
		}
	}
	o->has_sched = o->n_sched > 0;
	o->has_orch = o->n_orch > 0;
	if (o->n_unmatched > 0 && build_warning(r))
		return tp_set_error(-ENOMEM, "%s: out of memory", r->name);
	return 0;
}

static void rd_free(struct rd *r)
{
	free(r->core);
	free(r->cpu);
	jx_free(&r->core_ix);
	jx_free(&r->miss_ix);
	free(r->miss_core);
	free(r->miss_count);
	free(r->cap_sched);
	free(r->cap_orch);
}

/* The hooks' errors land in the parser; finish() needs it for messages
 * about the join, so the read is: parse, then finish with a fresh parser
 * state that only carries the name. */
static int read_common(const char *name, const uint8_t *buf, size_t len, bool mem,
		       struct sl_perf_data *out)
{
	memset(out, 0, sizeof(*out));
	struct pd_priv *pv = calloc(1, sizeof(*pv));
	if (!pv)
		return tp_set_error(-ENOMEM, "%s: out of memory", name);
	out->priv = pv;
	struct rd r;
	memset(&r, 0, sizeof(r));
	r.out = out;
	r.priv = pv;
	r.name = name;
	int rc = mem ? js_parse_mem(name, buf, len, &pd_ops, &r)
		     : js_parse_file(name, &pd_ops, &r);
	if (rc == 0) {
		struct js_parser *p = calloc(1, sizeof(*p));
		if (!p) {
			rc = tp_set_error(-ENOMEM, "%s: out of memory", name);
		} else {
			p->name = name;
			rc = finish(&r, p);
			free(p);
		}
	}
	rd_free(&r);
	if (rc)
		sl_perf_data_free(out);
	return rc;
}

int sl_read_perf_data(const char *path, struct sl_perf_data *out)
{
	return read_common(path, NULL, 0, false, out);
}

int sl_read_perf_data_mem(const char *name, const uint8_t *buf, size_t len,
			  struct sl_perf_data *out)
{
	return read_common(name, buf, len, true, out);
}

void sl_perf_data_free(struct sl_perf_data *d)
{
	if (!d)
		return;
	free(d->core_types);
	free(d->tasks);
	for (size_t i = 0; i < d->n_sched; i++)
		free(d->sched[i].v);
	free(d->sched);
	for (size_t i = 0; i < d->n_orch; i++)
		free(d->orch[i].v);
	free(d->orch);
	free(d->core_to_thread);
	free(d->unmatched_warning);
	free(d->unjoined_aicore);
	free(d->unjoined_aicpu);
	struct pd_priv *pv = d->priv;
	if (pv) {
		for (size_t i = 0; i < pv->n_names; i++)
			free(pv->names[i]);
		free(pv->names);
		free(pv->index);
		free(pv);
	}
	memset(d, 0, sizeof(*d));
}

char *sl_tdisp(uint64_t task_id, char *buf, size_t len)
{
	unsigned ring = (unsigned)((task_id >> 32) & 0xFF);
	unsigned long local = (unsigned long)(task_id & 0xFFFFFFFFu);
	if (len == 0)
		return buf;
	if (ring == 0)
		snprintf(buf, len, "t%lu", local);
	else
		snprintf(buf, len, "r%ut%lu", ring, local);
	return buf;
}

const char *sl_perf_why_no_tasks(const struct sl_perf_data *pd)
{
	if (!pd->n_aicpu_rows && !pd->n_aicore_rows)
		return "aicpu_tasks and aicore_tasks are empty";
	if (!pd->n_aicpu_rows)
		return "aicpu_tasks is empty";
	if (!pd->n_aicore_rows)
		return "aicore_tasks is empty";
	return "no aicpu_tasks row matches an aicore_tasks row (core_id, reg_task_id)";
}

const char *sl_printable(const char *s, char *buf, size_t len)
{
	size_t o = 0;
	for (; s && *s && o + 4 < len; s++) {
		if (o == 40) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		buf[o++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
	}
	buf[o] = '\0';
	return buf;
}

const char *sl_perf_metadata_warning(const struct sl_perf_data *pd, char *buf, size_t len)
{
	if (!len)
		return NULL;
	buf[0] = '\0';
	size_t o = 0;
	/* Task rows on cores core_types does not list: the reference types
	 * them AIV (spec §1.9), which resolves an AIC task's func_id from the
	 * wrong kernel_ids entry and counts it as AIV in sched-overhead. */
	uint64_t beyond = 0;
	int64_t first = -1;
	for (size_t i = 0; i < pd->n_tasks; i++) {
		int64_t c = pd->tasks[i].core_id;
		if (c < 0 || (uint64_t)c >= pd->n_core_types) {
			if (!beyond++)
				first = c;
		}
	}
	if (beyond && !pd->n_core_types)
		o += (size_t)snprintf(buf, len, "metadata.core_types is missing or empty: all %llu "
				      "task rows count as AIV cores (an AIC task's func_id then "
				      "comes from the wrong deps.json kernel_ids entry)",
				      (unsigned long long)beyond);
	else if (beyond)
		o += (size_t)snprintf(buf, len, "%llu task rows are on cores metadata.core_types (%zu "
				      "entries) does not list (the first on core %lld): they "
				      "count as AIV cores (an AIC task's func_id then comes from "
				      "the wrong deps.json kernel_ids entry)",
				      (unsigned long long)beyond, pd->n_core_types, (long long)first);
	if (o >= len)
		return buf;
	if (!pd->n_core_types)
		return buf[0] ? buf : NULL;
	if (pd->num_cores != (int64_t)pd->n_core_types)
		o += (size_t)snprintf(buf + o, len - o, "%smetadata.num_cores is %lld but core_types "
				      "lists %zu cores", o ? "; " : "", (long long)pd->num_cores,
				      pd->n_core_types);
	if (pd->n_core_to_thread && pd->n_core_to_thread != pd->n_core_types && o < len)
		snprintf(buf + o, len - o, "%smetadata.core_to_thread has %zu entries for the %zu "
			 "cores of core_types: %s", o ? "; " : "", pd->n_core_to_thread,
			 pd->n_core_types,
			 pd->n_core_to_thread < pd->n_core_types
				 ? "the cores without one get no scheduler thread (no complete "
				   "-> ready arrows, left out of sched-overhead's counts)"
				 : "the extra entries name no core");
	/* A thread no scheduler array stands for (level 3 and 4 records
	 * hold one per thread): an empty AICPU lane in the trace. */
	/* A row on a core the run does not have (metadata.num_cores): it
	 * joins nothing, and the unmatched / orphan lines would blame the
	 * buffers' rotation. */
	const struct {
		const char *arr, *other;
		const struct sl_row_at *v;
		size_t n;
	} sides[2] = {
		{ "aicore_tasks", "aicpu_tasks", pd->unjoined_aicore, pd->n_unjoined_aicore },
		{ "aicpu_tasks", "aicore_tasks", pd->unjoined_aicpu, pd->n_unjoined_aicpu },
	};
	for (int k = 0; k < 2 && pd->num_cores > 0; k++) {
		o = strlen(buf);
		uint64_t n = 0;
		const struct sl_row_at *first = NULL;
		for (size_t i = 0; i < sides[k].n; i++)
			if (sides[k].v[i].core >= pd->num_cores && !n++)
				first = &sides[k].v[i];
		if (!n || o >= len)
			continue;
		if (n == 1)
			snprintf(buf + o, len - o, "%s%s[%zu] is on core %lld, and metadata.num_cores "
				 "is %lld: no core of the run (damaged records?); it joins no %s "
				 "row", o ? "; " : "", sides[k].arr, first->row,
				 (long long)first->core, (long long)pd->num_cores, sides[k].other);
		else
			snprintf(buf + o, len - o, "%s%llu %s rows are on cores metadata.num_cores "
				 "(%lld) does not cover, the first %s[%zu] on core %lld: no core of "
				 "the run (damaged records?); they join no %s row",
				 o ? "; " : "", (unsigned long long)n, sides[k].arr,
				 (long long)pd->num_cores, sides[k].arr, first->row,
				 (long long)first->core, sides[k].other);
	}
	if (pd->has_sched && o < len) {
		o = strlen(buf);
		int64_t mx = -1;
		size_t first_core = 0;
		for (size_t i = 0; i < pd->n_core_to_thread; i++)
			if (pd->core_to_thread[i] > mx) {
				mx = pd->core_to_thread[i];
				first_core = i;
			}
		if (mx >= 0 && (uint64_t)mx >= pd->n_sched && o < len)
			snprintf(buf + o, len - o, "%smetadata.core_to_thread names scheduler thread "
				 "%lld (core %zu) but the records hold %zu scheduler thread "
				 "arrays: its cores' tasks get no complete -> ready arrows and are "
				 "left out of sched-overhead's per-thread counts",
				 o ? "; " : "", (long long)mx, first_core, pd->n_sched);
	}
	return buf[0] ? buf : NULL;
}

const char *sl_perf_zero_start_warning(const struct sl_perf_data *pd, char *buf, size_t len)
{
	if (!len || !pd->n_zero_starts)
		return NULL;
	snprintf(buf, len, "%" PRIu64 " record%s with a missing or zero start but an end "
		 "(first: %s): taken as 0 µs (spec §2.3), so drawn from before the run and "
		 "counted so in the averages; no device writes one: damaged records?",
		 pd->n_zero_starts, pd->n_zero_starts == 1 ? "" : "s", pd->first_zero_start);
	return buf;
}

/* "1.00 us" below a second, "1000.000 s" from there on. */
static void fmt_span(char *b, size_t n, double us)
{
	if (us < 1e6)
		snprintf(b, n, "%.2f us", us);
	else
		snprintf(b, n, "%.3f s", us / 1e6);
}

const char *sl_perf_order_warning(const struct sl_perf_data *pd, char *buf, size_t len)
{
	if (!len)
		return NULL;
	uint64_t n = 0;
	char first[200] = "";
	for (size_t i = 0; i < pd->n_tasks; i++) {
		const struct sl_task *t = &pd->tasks[i];
		const bool late = t->dispatch_us > t->end_us;
		const bool early = t->finish_us > 0 && t->finish_us < t->start_us;
		if (!late && !early)
			continue;
		if (!n++) {
			char td[48], sp[32];
			fmt_span(sp, sizeof(sp), late ? t->dispatch_us - t->end_us
						      : t->start_us - t->finish_us);
			snprintf(first, sizeof(first), "task %s on core %d, %s %s %s its AICore %s",
				 sl_tdisp(t->task_id, td, sizeof(td)), (int)t->core_id,
				 late ? "dispatched" : "finished", sp, late ? "after" : "before",
				 late ? "end" : "start");
		}
	}
	if (!n)
		return NULL;
	snprintf(buf, len, "%" PRIu64 " of %zu tasks have AICPU times that cannot be their "
		 "AICore's (first: %s): aicpu_tasks and aicore_tasks of different runs? Their "
		 "latency, head and tail overheads are meaningless", n, pd->n_tasks, first);
	return buf;
}

/* Further from the first timestamp than any run lasts: one day, in µs. */
#define SL_FAR_US (86400.0 * 1e6)

const char *sl_perf_far_warning(const struct sl_perf_data *pd, char *buf, size_t len)
{
	if (!len)
		return NULL;
	uint64_t n = 0;
	char first[160] = "";
	double far = 0;
	for (size_t i = 0; i < pd->n_tasks; i++) {
		const struct sl_task *t = &pd->tasks[i];
		bool e = t->end_us > SL_FAR_US, fin = t->finish_us > SL_FAR_US;
		if (!e && !fin)
			continue;
		if (!n++) {
			char td[48];
			far = e ? t->end_us : t->finish_us;
			snprintf(first, sizeof(first), "%s of task %s on core %d",
				 e ? "aicore_tasks: the end" : "aicpu_tasks: the finish",
				 sl_tdisp(t->task_id, td, sizeof(td)), (int)t->core_id);
		}
	}
	for (size_t th = 0; th < pd->n_sched; th++)
		for (size_t i = 0; i < pd->sched[th].n; i++)
			if (pd->sched[th].v[i].end_us > SL_FAR_US && !n++) {
				far = pd->sched[th].v[i].end_us;
				snprintf(first, sizeof(first), "aicpu_scheduler_phases[%zu][%zu]: the end",
					 th, i);
			}
	for (size_t th = 0; th < pd->n_orch; th++)
		for (size_t i = 0; i < pd->orch[th].n; i++)
			if (pd->orch[th].v[i].end_us > SL_FAR_US && !n++) {
				far = pd->orch[th].v[i].end_us;
				snprintf(first, sizeof(first),
					 "aicpu_orchestrator_phases[%zu][%zu]: the end", th, i);
			}
	if (!n)
		return NULL;
	snprintf(buf, len, "%" PRIu64 " timestamp%s more than a day after the records' first one "
		 "(first: %s, %.3g s after it): a sentinel or corrupt value? Taken as is",
		 n, n == 1 ? "" : "s", first, far / 1e6);
	return buf;
}
