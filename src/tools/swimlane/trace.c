// SPDX-License-Identifier: MIT
/*
 * tools/swimlane/trace.c — merged_swimlane.json from the joined swimlane
 * rows (spec/swimlane-format.md §4). The events come out in the generation
 * order of §4.4 with the two id counters of §4.4. The rows are sorted by
 * task id, so a task's rows are one contiguous group; every per-task lookup
 * is a hash (task id → group, deps ids) or a binary search over a sorted
 * array (complete phases, dispatch phases, AICPU anchors), never a scan.
 * Events are streamed through one json_writer buffer (a writer thread does
 * the fwrite); nothing is allocated per event.
 */
#include "tools/swimlane/trace.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem.h"
#include "base/error.h"
#include "base/file.h"
#include "base/thread.h"
#include "tools/swimlane/json_writer.h"
#include "tools/swimlane/overhead.h"

#define FLOW_EPS 0.01   /* µs; flow starts land inside their source bar (§4.6.10) */
#define MARKER_MIN 0.02 /* µs; minimum width of AICPU markers and alloc bars */

/* ------------------------------------------------------------------ */
/* small helpers                                                        */
/* ------------------------------------------------------------------ */

static const char digits2[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal digits of @v at @p; returns the end. Written in place, two
 * digits a step (a trace has tens of millions of integers; a variable
 * length memcpy per integer was a visible cost). */
static inline char *put_u(char *p, uint64_t v)
{
	int n = 1;
	for (uint64_t t = v; t >= 10 && n < 20; n++)
		t /= 10;
	char *e = p + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		e -= 2;
		e[0] = digits2[2 * r];
		e[1] = digits2[2 * r + 1];
	}
	if (v >= 10) {
		e[-2] = digits2[2 * v];
		e[-1] = digits2[2 * v + 1];
	} else {
		e[-1] = (char)('0' + v);
	}
	return p + n;
}

static inline char *put_i(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u(p, (uint64_t)v);
}

/*
 * Compact-layout event templates. In the default layout the frequent
 * events (bars, flows, counters) are formatted here in one go, key text
 * and all, into the space jw_ev_begin() hands out: the bytes are exactly
 * what the token calls of the pretty path would write in the compact
 * layout (same number and string formatting), just without a separator
 * decision and a bounds check per token.
 */
#define CPY(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

static inline char *put_d(char *p, double v)
{
	return p + tp_fmt_double_repr(v, p);
}

/* A JSON string ("..." escaped like jw_strn); room: 6 * @n + 2. */
static inline char *put_s(char *p, const char *s, size_t n)
{
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
	return p;
}

/* Task-id display (spec §2.9): "t<local>" for ring 0, else "r<ring>t<local>".
 * @buf needs 32 bytes; @len is only checked against that. */
static char *tdisp(uint64_t v, char *buf, size_t len)
{
	(void)len;
	unsigned ring = (unsigned)((v >> 32) & 0xFF);
	char *p = buf;
	if (ring) {
		*p++ = 'r';
		p = put_u(p, ring);
	}
	*p++ = 't';
	p = put_u(p, v & 0xFFFFFFFFu);
	*p = '\0';
	return buf;
}

char *sl_func_tag(int64_t n, char *buf)
{
	char letters[16];
	int k = 0;
	int len = (int)(put_i(buf, n) - buf);
	buf[len++] = '_';
	/* bijective base 26 of n + 1: 1 → a, 26 → z, 27 → aa */
	for (uint64_t m = (n >= 0) ? (uint64_t)n + 1 : 0; m > 0 && k < 15;) {
		m -= 1;
		letters[k++] = (char)('a' + m % 26);
		m /= 26;
	}
	while (k > 0)
		buf[len++] = letters[--k];
	buf[len] = '\0';
	return buf;
}

static bool contains_spmd_ci(const char *s, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++)
		if (tolower((unsigned char)s[i]) == 's' && tolower((unsigned char)s[i + 1]) == 'p' &&
		    tolower((unsigned char)s[i + 2]) == 'm' && tolower((unsigned char)s[i + 3]) == 'd')
			return true;
	return false;
}

size_t sl_task_label(char *buf, size_t len, int64_t func_id, const struct sl_name_map *names,
		     const char *td, bool spmd)
{
	const char *name = NULL;
	char tag[40];
	int n;
	if (func_id < 0) {
		n = snprintf(buf, len, "task(%s)", td);
	} else if (names && (name = sl_name_map_get(names, func_id))) {
		n = snprintf(buf, len, "%s(%s)", name, td);
	} else {
		n = snprintf(buf, len, "func_%s(%s)", sl_func_tag(func_id, tag), td);
	}
	if (n < 0)
		return 0;
	if (!spmd || (size_t)n + 6 > len)
		return (size_t)n;
	char *paren = memchr(buf, '(', (size_t)n);
	if (!paren || contains_spmd_ci(buf, (size_t)(paren - buf)))
		return (size_t)n;
	memmove(paren + 5, paren, (size_t)n - (size_t)(paren - buf) + 1);
	memcpy(paren, "_spmd", 5);
	return (size_t)n + 5;
}

/* Python's round(x, 3) for the overhead counter times: correctly rounded
 * decimal (glibc printf), read back. */
static double round3(double x)
{
	char b[64];
	snprintf(b, sizeof(b), "%.3f", x);
	return strtod(b, NULL);
}

/* u64 → u32 open-addressing hash map (ids of deps tasks). */
struct u64map {
	uint64_t *keys;
	uint32_t *vals; /* UINT32_MAX = empty */
	size_t cap;     /* power of two */
	size_t n;
};

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int u64map_init(struct u64map *m, size_t expect)
{
	size_t cap = 16;
	while (cap < expect * 2 + 16)
		cap <<= 1;
	m->keys = tp_malloc_huge(cap * sizeof(*m->keys));
	m->vals = tp_malloc_huge(cap * sizeof(*m->vals));
	m->cap = cap;
	m->n = 0;
	if (!m->keys || !m->vals)
		return -ENOMEM;
	memset(m->vals, 0xff, cap * sizeof(*m->vals));
	return 0;
}

static void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* Index of @k, or UINT32_MAX. */
static inline uint32_t u64map_get(const struct u64map *m, uint64_t k)
{
	if (!m->cap)
		return UINT32_MAX;
	size_t mask = m->cap - 1;
	for (size_t i = mix64(k) & mask;; i = (i + 1) & mask) {
		if (m->vals[i] == UINT32_MAX)
			return UINT32_MAX;
		if (m->keys[i] == k)
			return m->vals[i];
	}
}

/* Insert @k → @v unless present; returns the stored value. The map is sized
 * up front (u64map_init with the upper bound), so it never grows. */
static inline uint32_t u64map_put(struct u64map *m, uint64_t k, uint32_t v)
{
	size_t mask = m->cap - 1;
	for (size_t i = mix64(k) & mask;; i = (i + 1) & mask) {
		if (m->vals[i] == UINT32_MAX) {
			m->keys[i] = k;
			m->vals[i] = v;
			m->n++;
			return v;
		}
		if (m->keys[i] == k)
			return m->vals[i];
	}
}

/* Growable scratch string. */
struct sbuf {
	char *s;
	size_t len, cap;
};

static int sb_reserve(struct sbuf *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s)
		return -ENOMEM;
	b->s = s;
	b->cap = cap;
	return 0;
}

static int sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || sb_reserve(b, (size_t)n))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

/* ------------------------------------------------------------------ */
/* generator state                                                      */
/* ------------------------------------------------------------------ */

/* An AICPU worker anchor (§4.7): a dummy / predicated marker or alloc bar. */
struct anchor {
	uint64_t task_id;
	double start, end;
	int64_t tid;
	int64_t event_id;
	size_t seq;
};

/* Per scheduler thread: its complete and dispatch records in start order. */
struct thr {
	size_t n_comp;
	uint32_t *comp;     /* record indices, stable-sorted by start */
	double *comp_start, *comp_end;
	uint32_t *comp_finishes; /* rows attributed (finishes_processed) */
	int32_t *rec_slot;  /* record → complete slot or -1 */
	size_t n_disp;
	double *disp_start, *disp_maxend; /* prefix max of end */
};

struct gen {
	struct sl_perf_data *pd;
	const struct sl_deps *dp;
	const struct sl_name_map *nm;
	const struct sl_trace_opts *o;
	struct jw w;
	int err;

	uint64_t n_events;
	int64_t event_id, flow_id;

	struct sl_task *t;
	size_t n;

	/* task groups: the rows of one task id (contiguous, rows are sorted) */
	size_t ng;
	size_t *g_start;
	size_t *g_count;
	uint64_t *g_tid;
	uint8_t *g_spmd;
	size_t *row_group;
	struct u64map grp_map; /* task id → group */

	/* cores */
	size_t nc;
	int32_t *cores;       /* sorted unique core ids with rows */
	size_t *row_core;     /* row → index in cores */

	/* event ids / lanes per row */
	int64_t *wv_id, *wv_bind;          /* own id; (task, core) last-wins id */
	int64_t *sv_id, *sv_bind, *sv_tid; /* -1 when no pid-3 bar */

	/* view anchors per group (CSR over row indices) */
	size_t *wva_off, *wva;
	size_t *sva_off, *sva;

	/* deps: by_pred CSR (pred order of first appearance) and fanin CSR */
	bool has_edges;
	size_t np;
	uint64_t *p_key;
	size_t *p_off;
	uint64_t *p_succ;
	struct u64map p_map;
	size_t ns;
	size_t *s_off;
	uint64_t *s_pred;
	struct u64map s_map;
	bool has_kmap, has_bmap;

	/* AICPU lanes */
	int64_t S, O;
	struct anchor *anc;
	size_t n_anc, cap_anc;

	struct thr *thr;
	size_t n_thr;

	bool has_aicpu;
	uint64_t n_overhead_pts;
	bool have_c2s;
	int64_t *core_sched; /* per cores[] index: thread or -1 */

	/* emit_sched_phases(): the thread being written, and the event id of
	 * the first marker of each RP_CHUNK records of its list */
	size_t cur_ti;
	int64_t *chunk_mid;

	/* the flow formatter while §4.4 steps 8-12 run (NULL otherwise), and
	 * the flow events it wrote */
	struct flowq *fq;
	uint64_t n_flows_queued;

	struct sbuf sb, sb2;
	/* a task or phase label: room for the longest mapped name, its task
	 * id and decoration (a 5000-byte name lost its "(r2t0)" in 4096) */
	char *lbl;
	size_t lbl_cap;
};

static inline double row_slice_wv(const struct sl_task *r) { return r->receive_us; }

static inline double row_slice_sv(const struct sl_task *r)
{
	if (r->dispatch_us < 0 || r->finish_us <= 0)
		return INFINITY;
	return r->dispatch_us;
}

static inline bool row_sv_valid(const struct sl_task *r)
{
	return r->dispatch_us >= 0 && r->finish_us > 0;
}

static inline int64_t core_tid(int32_t core) { return 10000 + 10 * (int64_t)core; }
static inline int64_t sched_tid(int64_t thr) { return 30000 + 10 * thr; }

/* Group index of @task_id, or -1 (hash: called several times per edge). */
static long find_group(const struct gen *g, uint64_t task_id)
{
	uint32_t v = u64map_get(&g->grp_map, task_id);
	return v == UINT32_MAX ? -1 : (long)v;
}

static long find_core(const struct gen *g, int32_t core)
{
	size_t lo = 0, hi = g->nc;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->cores[mid] < core)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo < g->nc && g->cores[lo] == core) ? (long)lo : -1;
}

/* First anchor index of @task_id in the (sorted) anchor array, count in *n. */
static size_t find_anchors(const struct gen *g, uint64_t task_id, size_t *n)
{
	size_t lo = 0, hi = g->n_anc;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->anc[mid].task_id < task_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t e = lo;
	while (e < g->n_anc && g->anc[e].task_id == task_id)
		e++;
	*n = e - lo;
	return lo;
}

static bool task_spmd(const struct gen *g, uint64_t task_id)
{
	long gi = find_group(g, task_id);
	if (gi >= 0)
		return g->g_spmd[gi];
	return g->has_bmap && sl_deps_block_num(g->dp, task_id) > 1;
}

/* §4.6.9 fan count. */
static int64_t fan_count(const struct gen *g, uint64_t task_id)
{
	long gi = find_group(g, task_id);
	bool spmd = gi >= 0 ? g->g_spmd[gi] : (g->has_bmap && sl_deps_block_num(g->dp, task_id) > 1);
	if (!spmd)
		return 1;
	uint32_t b = g->has_bmap ? sl_deps_block_num(g->dp, task_id) : 0;
	if (b > 0)
		return b;
	return gi >= 0 ? (int64_t)g->g_count[gi] : 0;
}

/* The §4.5 task label into g->lbl. Fast path without snprintf for the
 * common names (no '(' in the mapped name); sl_task_label otherwise. */
static const char *label(struct gen *g, int64_t func_id, const char *td, bool spmd)
{
	const char *name = NULL;
	char base[64];
	size_t bl;
	if (func_id < 0) {
		memcpy(base, "task", 5);
		bl = 4;
		name = base;
	} else if (g->nm && (name = sl_name_map_get(g->nm, func_id))) {
		bl = strlen(name);
		if (bl > 256 || memchr(name, '(', bl)) {
			sl_task_label(g->lbl, g->lbl_cap, func_id, g->nm, td, spmd);
			return g->lbl;
		}
	} else {
		memcpy(base, "func_", 5);
		sl_func_tag(func_id, base + 5);
		bl = strlen(base);
		name = base;
	}
	char *p = g->lbl;
	memcpy(p, name, bl);
	p += bl;
	if (spmd && !contains_spmd_ci(name, bl)) {
		memcpy(p, "_spmd", 5);
		p += 5;
	}
	*p++ = '(';
	size_t tl = strlen(td);
	memcpy(p, td, tl);
	p += tl;
	*p++ = ')';
	*p = '\0';
	return g->lbl;
}

/* "Task:<tdisp>, FuncId:<f>, CoreId:<c>" into @out (>= 96 bytes);
 * returns its length. */
static size_t event_hint(char *out, const char *td, int32_t func_id, int32_t core)
{
	char *p = out;
	memcpy(p, "Task:", 5);
	p += 5;
	size_t tl = strlen(td);
	memcpy(p, td, tl);
	p += tl;
	memcpy(p, ", FuncId:", 9);
	p = put_i(p + 9, func_id);
	memcpy(p, ", CoreId:", 9);
	p = put_i(p + 9, core);
	*p = '\0';
	return (size_t)(p - out);
}

/* ------------------------------------------------------------------ */
/* event writers                                                        */
/* ------------------------------------------------------------------ */

static void ev_begin(struct gen *g)
{
	jw_obj_begin(&g->w);
	g->n_events++;
}

/* A metadata event ("ph": "M") named @what, for @pid (and @tid when >= 0):
 * meta_begin() opens it and its "args" object, which the caller fills;
 * meta_end() closes "args" and writes the rest in the keys' sorted order. */
static void meta_begin(struct gen *g)
{
	ev_begin(g);
	jw_key(&g->w, "args");
	jw_obj_begin(&g->w);
}

static void meta_end(struct gen *g, int pid, int64_t tid, const char *what)
{
	struct jw *w = &g->w;
	jw_obj_end(w);
	jw_key(w, "cat");
	jw_str(w, "__metadata");
	jw_key(w, "name");
	jw_str(w, what);
	jw_key(w, "ph");
	jw_str(w, "M");
	jw_key(w, "pid");
	jw_i64(w, pid);
	if (tid >= 0) {
		jw_key(w, "tid");
		jw_i64(w, tid);
	}
	jw_obj_end(w);
}

static void meta_name(struct gen *g, int pid, int64_t tid, const char *what, const char *name)
{
	meta_begin(g);
	jw_key(&g->w, "name");
	jw_str(&g->w, name);
	meta_end(g, pid, tid, what);
}

static void meta_sort(struct gen *g, int pid, int64_t tid, const char *what, int64_t idx)
{
	meta_begin(g);
	jw_key(&g->w, "sort_index");
	jw_i64(&g->w, idx);
	meta_end(g, pid, tid, what);
}

/* Start of a flow event: "cat", "id", "name", "ph", "pid", "tid", "ts". */
static void flow_head(struct gen *g, const char *name, const char *ph, int pid, int64_t tid,
		      double ts)
{
	struct jw *w = &g->w;
	ev_begin(g);
	jw_key(w, "cat");
	jw_str(w, "flow");
	jw_key(w, "id");
	jw_i64(w, g->flow_id);
	jw_key(w, "name");
	jw_str(w, name);
	jw_key(w, "ph");
	jw_str(w, ph);
	jw_key(w, "pid");
	jw_i64(w, pid);
	jw_key(w, "tid");
	jw_i64(w, tid);
	jw_key(w, "ts");
	jw_double(w, ts);
}

/*
 * One flow event (s or f) as the compact layout writes it; @in_cnt >= 0
 * adds the two fan counts, @bind >= 0 adds bind_id.
 */
struct flow_rec {
	double ts;
	int64_t tid, id, bind, in_cnt, out_cnt;
	const char *name; /* a string literal: it outlives the queue */
	int32_t pid;
	bool f;
};

/* Room put_flow() needs for a flow named @nl bytes. */
#define FLOW_ROOM(nl) (6 * (nl) + 320)

static char *put_flow(char *p, const struct flow_rec *e)
{
	p = CPY(p, "{\"cat\":\"flow\",\"id\":");
	p = put_i(p, e->id);
	p = CPY(p, ",\"name\":");
	p = put_s(p, e->name, strlen(e->name));
	p = e->f ? CPY(p, ",\"ph\":\"f\",\"pid\":") : CPY(p, ",\"ph\":\"s\",\"pid\":");
	p = put_i(p, e->pid);
	p = CPY(p, ",\"tid\":");
	p = put_i(p, e->tid);
	p = CPY(p, ",\"ts\":");
	p = put_d(p, e->ts);
	if (e->f)
		p = CPY(p, ",\"bp\":\"e\"");
	if (e->in_cnt >= 0) {
		p = CPY(p, ",\"input_task_count\":");
		p = put_i(p, e->in_cnt);
		p = CPY(p, ",\"output_task_count\":");
		p = put_i(p, e->out_cnt);
	}
	if (e->bind >= 0) {
		p = CPY(p, ",\"bind_id\":");
		p = put_i(p, e->bind);
	}
	*p++ = '}';
	return p;
}

/*
 * The flow formatter. §4.4 steps 8-12 write 14 flow events per task of
 * the workload (1.7 GB of the 3.3 GB trace of 1,000,000 tasks);
 * finding their ends (the lookups of the flows_*() functions) and
 * formatting them took about half of the time each, on one CPU. With the
 * queue, the generating thread records each flow event in a chunk, and a
 * second thread formats full chunks into the writer in the order they
 * were filled. It is on for the compact layout only (--pretty keeps the
 * token path), between flowq_start() and flowq_stop(); in between, only
 * the formatter touches g->w.
 *
 * A ring of FQ_NCHUNK chunks: the generator fills chunk [head % N] while
 * head - tail < N, the formatter formats chunk [tail % N] while
 * tail < head. head, tail and done are guarded by mu; a chunk's entries
 * are written before the head++ that hands it over and read after the
 * formatter saw that head under mu (the mutex orders them).
 */
#define FQ_CHUNK 4096 /* flow events per chunk (256 KiB: 64 bytes each) */
#define FQ_NCHUNK 8
/* The formatter's stack: put_flow() and the writer's buffer hand-over
 * (jw__reserve) take a few KiB; glibc's static TLS block (47 KiB,
 * base/error.c) sits on it too. */
#define FQ_THREAD_STACK (256u << 10)

struct flowq_chunk {
	size_t n;
	struct flow_rec ev[FQ_CHUNK];
};

struct flowq {
	struct jw *w;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* broadcast on every change of head, tail, done */
	struct flowq_chunk *chunk; /* FQ_NCHUNK */
	uint64_t head, tail;
	bool done;
	int err;      /* g->w's error after the formatter's last chunk (mu) */
	int err_seen; /* the generator's copy, taken at each hand-over */
	uint64_t n_formatted; /* flow events the formatter wrote (its own) */
};

static void *flowq_main(void *arg)
{
	struct flowq *q = arg;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->tail == q->head && !q->done)
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->tail == q->head)
			break; /* done and drained */
		struct flowq_chunk *c = &q->chunk[q->tail % FQ_NCHUNK];
		pthread_mutex_unlock(&q->mu);
		for (size_t i = 0; i < c->n; i++) {
			const struct flow_rec *e = &c->ev[i];
			char *p = jw_ev_begin(q->w, FLOW_ROOM(strlen(e->name)));
			jw_ev_end(q->w, put_flow(p, e));
		}
		q->n_formatted += c->n;
		pthread_mutex_lock(&q->mu);
		q->err = q->w->err;
		q->tail++;
		pthread_cond_broadcast(&q->cv);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* Start the formatter for the compact layout. Without one (--pretty, no
 * memory, no thread) the flows are formatted in place, as before. */
static void flowq_start(struct gen *g)
{
	if (g->o->pretty)
		return;
	struct flowq *q = calloc(1, sizeof(*q));
	if (!q)
		return;
	q->chunk = malloc(FQ_NCHUNK * sizeof(*q->chunk));
	if (!q->chunk || pthread_mutex_init(&q->mu, NULL)) {
		free(q->chunk);
		free(q);
		return;
	}
	if (pthread_cond_init(&q->cv, NULL)) {
		pthread_mutex_destroy(&q->mu);
		free(q->chunk);
		free(q);
		return;
	}
	q->w = &g->w;
	q->chunk[0].n = 0;
	/* pthread_create orders the generator's writes to g->w before the
	 * formatter's first use of it. */
	if (tp_thread_start(&q->th, "tp-swl-flows", FQ_THREAD_STACK, flowq_main, q)) {
		pthread_cond_destroy(&q->cv);
		pthread_mutex_destroy(&q->mu);
		free(q->chunk);
		free(q);
		return;
	}
	g->fq = q;
}

/* Hand the chunk being filled to the formatter and wait for a free one. */
static void flowq_submit(struct flowq *q)
{
	pthread_mutex_lock(&q->mu);
	q->head++;
	pthread_cond_broadcast(&q->cv);
	while (q->head - q->tail >= FQ_NCHUNK)
		pthread_cond_wait(&q->cv, &q->mu);
	q->err_seen = q->err;
	pthread_mutex_unlock(&q->mu);
	q->chunk[q->head % FQ_NCHUNK].n = 0;
}

/* Format what is queued and give g->w back to the generating thread
 * (pthread_join orders the formatter's writes before its next use). */
static void flowq_stop(struct gen *g)
{
	struct flowq *q = g->fq;
	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	if (q->chunk[q->head % FQ_NCHUNK].n)
		q->head++;
	q->done = true;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->th, NULL);
	g->n_flows_queued += q->n_formatted;
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q->chunk);
	free(q);
	g->fq = NULL;
}

/* The writer has failed (a write error, no memory): g->w's error, or while
 * the formatter owns g->w, what it reported at the last hand-over. */
static bool writer_failed(const struct gen *g)
{
	return g->fq ? g->fq->err_seen != 0 : g->w.err != 0;
}

/*
 * One flow event (s or f) with the current flow id: @f adds "bp":"e";
 * @in_cnt >= 0 adds the two fan counts; @bind >= 0 adds bind_id. @name
 * is a string literal.
 */
static void flow_ev(struct gen *g, const char *name, bool f, int pid, int64_t tid, double ts,
		    int64_t in_cnt, int64_t out_cnt, int64_t bind)
{
	struct jw *w = &g->w;
	struct flow_rec e = {
		.ts = ts, .tid = tid, .id = g->flow_id, .bind = bind, .in_cnt = in_cnt,
		.out_cnt = out_cnt, .name = name, .pid = pid, .f = f,
	};
	if (g->fq) {
		struct flowq *q = g->fq;
		struct flowq_chunk *c = &q->chunk[q->head % FQ_NCHUNK];
		g->n_events++;
		c->ev[c->n++] = e;
		if (c->n == FQ_CHUNK)
			flowq_submit(q);
		return;
	}
	size_t nl = strlen(name);
	if (!g->o->pretty && nl < 256) {
		g->n_events++;
		jw_ev_end(w, put_flow(jw_ev_begin(w, FLOW_ROOM(nl)), &e));
		return;
	}
	flow_head(g, name, f ? "f" : "s", pid, tid, ts);
	if (f) {
		jw_key(w, "bp");
		jw_str(w, "e");
	}
	if (in_cnt >= 0) {
		jw_key(w, "input_task_count");
		jw_i64(w, in_cnt);
		jw_key(w, "output_task_count");
		jw_i64(w, out_cnt);
	}
	if (bind >= 0) {
		jw_key(w, "bind_id");
		jw_i64(w, bind);
	}
	jw_obj_end(w);
}

/* A flow s/f without counts; @bind < 0 omits bind_id. */
static void flow_s(struct gen *g, const char *name, int pid, int64_t tid, double ts, int64_t bind)
{
	flow_ev(g, name, false, pid, tid, ts, -1, -1, bind);
}

static void flow_f(struct gen *g, const char *name, int pid, int64_t tid, double ts, int64_t bind)
{
	flow_ev(g, name, true, pid, tid, ts, -1, -1, bind);
}

/* A dependency / hb_violation arrow (§4.6.9), advances the flow id. The
 * fan counts are never negative (fan_count()). */
static void flow_dep(struct gen *g, const char *name, int pid, int64_t s_tid, double s_ts,
		     int64_t s_bind, int64_t f_tid, double f_ts, int64_t f_bind, int64_t in_cnt,
		     int64_t out_cnt)
{
	flow_ev(g, name, false, pid, s_tid, s_ts, in_cnt, out_cnt, s_bind);
	flow_ev(g, name, true, pid, f_tid, f_ts, in_cnt, out_cnt, f_bind);
	g->flow_id++;
}

/* ------------------------------------------------------------------ */
/* preparation                                                          */
/* ------------------------------------------------------------------ */

/* §2.10: func_id of each AICore row from deps.json's kernel_ids. An AIV
 * row takes kernel_ids[1] (else [2]): the records do not say which AIV
 * subslot a row ran, so a task with two different AIV kernels (a MIX task
 * [aic, aiv0, aiv1]) shows both halves under aiv0's kernel. That is the
 * format's rule; one warning on stderr says so, naming the first such
 * task, so the statistics table is not read as if aiv1's kernel never ran. */
static void resolve_func_ids(struct gen *g)
{
	if (!g->has_kmap)
		return;
	size_t split = 0;
	long first = -1;
	uint64_t last_split = UINT64_MAX;
	for (size_t i = 0; i < g->n; i++) {
		struct sl_task *r = &g->t[i];
		if (r->func_id >= 0)
			continue;
		long k = sl_deps_find_task(g->dp, r->task_id);
		if (k < 0)
			continue;
		const int32_t *ids = g->dp->kernel_ids[k];
		if (r->core_type == SL_AIC) {
			if (ids[0] >= 0)
				r->func_id = ids[0];
		} else if (ids[1] >= 0) {
			r->func_id = ids[1];
			/* rows of one task are adjacent in the common case; a
			 * task seen again later is counted again (a count of
			 * rows' runs, close enough for a warning). */
			if (ids[2] >= 0 && ids[2] != ids[1] && r->task_id != last_split) {
				split++;
				last_split = r->task_id;
				if (first < 0)
					first = k;
			}
		} else if (ids[2] >= 0) {
			r->func_id = ids[2];
		}
	}
	if (!split)
		return;
	const int32_t *ids = g->dp->kernel_ids[first];
	char td[32];
	const char *n1 = g->nm ? sl_name_map_get(g->nm, ids[1]) : NULL;
	const char *n2 = g->nm ? sl_name_map_get(g->nm, ids[2]) : NULL;
	FILE *e = g->o->err;
	fprintf(e,
		"note: %zu task%s two different AIV kernels (first: %s, kernel_ids [%d, %d, "
		"%d]); the records do not say which AIV core ran which, so every AIV row takes "
		"kernel_ids[1] (the records format's rule; docs/swimlane.md \"Limits\"): rows and "
		"statistics of func_id %d",
		split, split == 1 ? " runs" : "s run", tdisp(g->dp->task_id[first], td, sizeof(td)),
		ids[0], ids[1], ids[2], ids[2]);
	/* The names as a terminal may show them (control characters '?'). */
	if (n2) {
		fputs(" (", e);
		sl_put_name(e, n2);
		fputc(')', e);
	}
	fprintf(e, " appear under %d", ids[1]);
	if (n1) {
		fputs(" (", e);
		sl_put_name(e, n1);
		fputc(')', e);
	}
	fputc('\n', e);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Sort key for stable sorts of row / record indices by a double. */
struct dkey {
	double k;
	size_t i;
};

static int cmp_dkey(const void *a, const void *b)
{
	const struct dkey *x = a, *y = b;
	if (x->k < y->k)
		return -1;
	if (x->k > y->k)
		return 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* (core, index) pairs to find the (task, core) last-wins winners. */
struct ckey {
	int32_t core;
	size_t i;
};

static int cmp_ckey(const void *a, const void *b)
{
	const struct ckey *x = a, *y = b;
	if (x->core != y->core)
		return (x->core > y->core) - (x->core < y->core);
	return (x->i > y->i) - (x->i < y->i);
}

static int build_groups(struct gen *g)
{
	size_t n = g->n;
	g->g_start = tp_malloc_huge((n + 1) * sizeof(size_t));
	g->g_count = tp_malloc_huge((n + 1) * sizeof(size_t));
	g->g_tid = tp_malloc_huge((n + 1) * sizeof(uint64_t));
	g->g_spmd = tp_calloc_huge(n + 1, 1);
	g->row_group = tp_malloc_huge((n + 1) * sizeof(size_t));
	if (!g->g_start || !g->g_count || !g->g_tid || !g->g_spmd || !g->row_group)
		return -ENOMEM;
	g->ng = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || g->t[i].task_id != g->t[i - 1].task_id) {
			g->g_start[g->ng] = i;
			g->g_count[g->ng] = 0;
			g->g_tid[g->ng] = g->t[i].task_id;
			g->ng++;
		}
		g->g_count[g->ng - 1]++;
		g->row_group[i] = g->ng - 1;
	}
	if (g->ng >= UINT32_MAX || u64map_init(&g->grp_map, g->ng))
		return -ENOMEM;
	for (size_t gi = 0; gi < g->ng; gi++)
		u64map_put(&g->grp_map, g->g_tid[gi], (uint32_t)gi);
	/* §4.7 SPMD set: block_num > 1, else the multi-row single-core-type
	 * heuristic for tasks absent from the block map. */
	for (size_t gi = 0; gi < g->ng; gi++) {
		uint32_t b = g->has_bmap ? sl_deps_block_num(g->dp, g->g_tid[gi]) : 0;
		if (b > 1) {
			g->g_spmd[gi] = 1;
			continue;
		}
		if (g->g_count[gi] <= 1 || b > 0)
			continue;
		size_t s = g->g_start[gi];
		bool same = true;
		for (size_t k = 1; k < g->g_count[gi]; k++)
			if (g->t[s + k].core_type != g->t[s].core_type)
				same = false;
		g->g_spmd[gi] = same;
	}

	/* cores */
	int32_t *c = tp_malloc_huge((n + 1) * sizeof(int32_t));
	g->row_core = tp_malloc_huge((n + 1) * sizeof(size_t));
	if (!c || !g->row_core) {
		free(c);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		c[i] = g->t[i].core_id;
	qsort(c, n, sizeof(int32_t), cmp_i32);
	size_t nc = 0;
	for (size_t i = 0; i < n; i++)
		if (nc == 0 || c[nc - 1] != c[i])
			c[nc++] = c[i];
	g->cores = c;
	g->nc = nc;
	for (size_t i = 0; i < n; i++)
		g->row_core[i] = (size_t)find_core(g, g->t[i].core_id);
	return 0;
}

static int build_deps(struct gen *g)
{
	const struct sl_deps *d = g->dp;
	g->has_edges = d && d->has_edges;
	if (!g->has_edges)
		return 0;
	size_t ne = d->n_edges;
	int rc = u64map_init(&g->p_map, ne);
	if (rc)
		return rc;
	rc = u64map_init(&g->s_map, ne);
	if (rc)
		return rc;
	uint32_t *epi = tp_malloc_huge((ne + 1) * sizeof(uint32_t));
	g->p_key = tp_malloc_huge((ne + 1) * sizeof(uint64_t));
	g->p_off = tp_calloc_huge(ne + 2, sizeof(size_t));
	g->p_succ = tp_malloc_huge((ne + 1) * sizeof(uint64_t));
	if (!epi || !g->p_key || !g->p_off || !g->p_succ) {
		free(epi);
		return -ENOMEM;
	}
	g->np = 0;
	for (size_t e = 0; e < ne; e++) {
		uint32_t pi = u64map_put(&g->p_map, d->pred[e], (uint32_t)g->np);
		if (pi == g->np)
			g->p_key[g->np++] = d->pred[e];
		epi[e] = pi;
		g->p_off[pi + 1]++;
	}
	for (size_t i = 0; i < g->np; i++)
		g->p_off[i + 1] += g->p_off[i];
	size_t *fill = tp_malloc_huge((g->np + 1) * sizeof(size_t));
	if (!fill) {
		free(epi);
		return -ENOMEM;
	}
	memcpy(fill, g->p_off, (g->np + 1) * sizeof(size_t));
	for (size_t e = 0; e < ne; e++)
		g->p_succ[fill[epi[e]]++] = d->succ[e];
	free(fill);
	free(epi);

	/* fanin in by_pred iteration order (§4.6.2 fanin-hint order) */
	uint32_t *spi = tp_malloc_huge((ne + 1) * sizeof(uint32_t));
	g->s_off = tp_calloc_huge(ne + 2, sizeof(size_t));
	g->s_pred = tp_malloc_huge((ne + 1) * sizeof(uint64_t));
	if (!spi || !g->s_off || !g->s_pred) {
		free(spi);
		return -ENOMEM;
	}
	g->ns = 0;
	for (size_t k = 0; k < ne; k++) {
		uint32_t si = u64map_put(&g->s_map, g->p_succ[k], (uint32_t)g->ns);
		if (si == g->ns)
			g->ns++;
		spi[k] = si;
		g->s_off[si + 1]++;
	}
	for (size_t i = 0; i < g->ns; i++)
		g->s_off[i + 1] += g->s_off[i];
	fill = tp_malloc_huge((g->ns + 1) * sizeof(size_t));
	if (!fill) {
		free(spi);
		return -ENOMEM;
	}
	memcpy(fill, g->s_off, (g->ns + 1) * sizeof(size_t));
	for (size_t pi = 0; pi < g->np; pi++)
		for (size_t k = g->p_off[pi]; k < g->p_off[pi + 1]; k++)
			g->s_pred[fill[spi[k]]++] = g->p_key[pi];
	free(fill);
	free(spi);
	return 0;
}

/* Successors of @task_id (deps order); *n = 0 when none. */
static const uint64_t *succs_of(const struct gen *g, uint64_t task_id, size_t *n)
{
	*n = 0;
	if (!g->has_edges)
		return NULL;
	uint32_t pi = u64map_get(&g->p_map, task_id);
	if (pi == UINT32_MAX)
		return NULL;
	*n = g->p_off[pi + 1] - g->p_off[pi];
	return g->p_succ + g->p_off[pi];
}

static const uint64_t *preds_of(const struct gen *g, uint64_t task_id, size_t *n)
{
	*n = 0;
	if (!g->has_edges)
		return NULL;
	uint32_t si = u64map_get(&g->s_map, task_id);
	if (si == UINT32_MAX)
		return NULL;
	*n = g->s_off[si + 1] - g->s_off[si];
	return g->s_pred + g->s_off[si];
}

/* §4.7 anchors of every group for one view. @sv selects the Scheduler View
 * slice start. Non-SPMD: every row; SPMD: per func id (first-appearance
 * order) the row with the smallest (slice start, core id), first on ties. */
static int build_view_anchors(struct gen *g, bool sv, size_t **off_out, size_t **rows_out)
{
	size_t *off = tp_malloc_huge((g->ng + 1) * sizeof(size_t));
	size_t *rows = tp_malloc_huge((g->n + 1) * sizeof(size_t));
	if (!off || !rows) {
		free(off);
		free(rows);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t gi = 0; gi < g->ng; gi++) {
		off[gi] = k;
		size_t s = g->g_start[gi], c = g->g_count[gi];
		if (!g->g_spmd[gi]) {
			for (size_t j = 0; j < c; j++)
				rows[k++] = s + j;
			continue;
		}
		size_t first = k;
		for (size_t j = 0; j < c; j++) {
			const struct sl_task *r = &g->t[s + j];
			size_t q;
			for (q = first; q < k; q++)
				if (g->t[rows[q]].func_id == r->func_id)
					break;
			if (q == k) {
				rows[k++] = s + j;
				continue;
			}
			const struct sl_task *p = &g->t[rows[q]];
			double rs = sv ? row_slice_sv(r) : row_slice_wv(r);
			double ps = sv ? row_slice_sv(p) : row_slice_wv(p);
			if (rs < ps || (rs == ps && r->core_id < p->core_id))
				rows[q] = s + j;
		}
	}
	off[g->ng] = k;
	*off_out = off;
	*rows_out = rows;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Scheduler View lanes (§4.3): per core, rows by dispatch, first lane whose
 * last finish ≤ dispatch. A min segment tree over lanes finds that lane in
 * O(log n). */
/* ------------------------------------------------------------------ */

static size_t seg_first_le(const double *tree, size_t size, double d)
{
	if (!(tree[1] <= d))
		return SIZE_MAX;
	size_t i = 1;
	while (i < size)
		i = (tree[2 * i] <= d) ? 2 * i : 2 * i + 1;
	return i - size;
}

static void seg_set(double *tree, size_t size, size_t leaf, double v)
{
	size_t i = leaf + size;
	tree[i] = v;
	for (i /= 2; i >= 1; i /= 2)
		tree[i] = tree[2 * i] < tree[2 * i + 1] ? tree[2 * i] : tree[2 * i + 1];
}

static int assign_sv_lanes(struct gen *g, int64_t **lane_tids_out, size_t *n_lane_tids,
			   size_t **core_first_row)
{
	size_t n = g->n;
	/* rows with a pid-3 bar, ordered by (core, dispatch, row) */
	struct dkey *k = tp_malloc_huge((n + 1) * sizeof(*k));
	size_t *cnt = tp_calloc_huge(g->nc + 1, sizeof(size_t));
	int64_t *assigned = tp_malloc_huge((n + 1) * sizeof(int64_t));
	int64_t *tids = tp_malloc_huge((n + 1) * sizeof(int64_t));
	size_t *first = tp_malloc_huge((g->nc + 1) * sizeof(size_t));
	if (!k || !cnt || !assigned || !tids || !first)
		goto nomem;
	for (size_t c = 0; c < g->nc; c++)
		first[c] = SIZE_MAX;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		assigned[i] = -1;
		if (row_sv_valid(&g->t[i]))
			cnt[g->row_core[i]]++;
	}
	size_t *coff = tp_malloc_huge((g->nc + 1) * sizeof(size_t));
	if (!coff)
		goto nomem;
	size_t acc = 0;
	for (size_t c = 0; c < g->nc; c++) {
		coff[c] = acc;
		acc += cnt[c];
	}
	size_t *fill = cnt; /* reuse as fill pointer */
	for (size_t c = 0; c < g->nc; c++)
		fill[c] = coff[c];
	for (size_t i = 0; i < n; i++)
		if (row_sv_valid(&g->t[i])) {
			size_t c = g->row_core[i];
			k[fill[c]].k = g->t[i].dispatch_us;
			k[fill[c]].i = i;
			fill[c]++;
		}
	m = acc;
	size_t n_tids = 0;
	for (size_t c = 0; c < g->nc; c++) {
		size_t b = coff[c], e = fill[c];
		if (e == b)
			continue;
		qsort(k + b, e - b, sizeof(*k), cmp_dkey);
		first[c] = k[b].i;
		size_t size = 1;
		while (size < e - b + 1)
			size <<= 1;
		double *tree = tp_malloc_huge(2 * size * sizeof(double));
		if (!tree) {
			free(coff);
			goto nomem;
		}
		for (size_t j = 0; j < 2 * size; j++)
			tree[j] = INFINITY;
		size_t lanes = 1;
		seg_set(tree, size, 0, 0.0);
		int64_t base = core_tid(g->cores[c]);
		for (size_t j = b; j < e; j++) {
			size_t row = k[j].i;
			double d = g->t[row].dispatch_us;
			size_t lane = seg_first_le(tree, size, d);
			if (lane == SIZE_MAX || lane >= lanes)
				lane = lanes++;
			seg_set(tree, size, lane, g->t[row].finish_us);
			assigned[row] = base + (int64_t)lane;
			tids[n_tids++] = base + (int64_t)lane;
		}
		free(tree);
	}
	free(coff);
	(void)m;
	/* Bind ids of the Worker View: the (task, core) key's last row in
	 * task order (spec §4.6.9: "looked up by (task_id, core_id), last one
	 * wins"). The Scheduler View is per row: its bar, and the arrows that
	 * start or end on it, use the row's own sub-lane (§4.3, §4.6.3) and
	 * its own event id (§4.6.9, §4.6.12), so the several rows an SPMD
	 * task can have on one core keep their own lanes and never overlap.
	 * WV bar ids are the row indices (they are the first X events); SV
	 * bar ids follow in row order. */
	int64_t next = (int64_t)n;
	for (size_t i = 0; i < n; i++) {
		g->wv_id[i] = (int64_t)i;
		g->sv_id[i] = assigned[i] >= 0 ? next++ : -1;
		g->sv_bind[i] = g->sv_id[i];
		g->sv_tid[i] = assigned[i] >= 0 ? assigned[i] : core_tid(g->t[i].core_id);
	}
	size_t maxc = 1;
	for (size_t gi = 0; gi < g->ng; gi++)
		if (g->g_count[gi] > maxc)
			maxc = g->g_count[gi];
	struct ckey *ck = tp_malloc_huge(maxc * sizeof(*ck));
	if (!ck)
		goto nomem;
	for (size_t gi = 0; gi < g->ng; gi++) {
		size_t s = g->g_start[gi], c = g->g_count[gi];
		for (size_t j = 0; j < c; j++) {
			ck[j].core = g->t[s + j].core_id;
			ck[j].i = s + j;
		}
		if (c > 1)
			qsort(ck, c, sizeof(ck[0]), cmp_ckey);
		for (size_t a = 0; a < c;) {
			size_t b = a;
			int64_t wv_bind = -1;
			while (b < c && ck[b].core == ck[a].core)
				wv_bind = g->wv_id[ck[b++].i];
			for (size_t q = a; q < b; q++)
				g->wv_bind[ck[q].i] = wv_bind;
			a = b;
		}
	}
	free(ck);
	free(k);
	free(cnt);
	free(assigned);
	qsort(tids, n_tids, sizeof(int64_t), cmp_i64);
	*lane_tids_out = tids;
	*n_lane_tids = n_tids;
	*core_first_row = first;
	return 0;
nomem:
	free(k);
	free(cnt);
	free(assigned);
	free(tids);
	free(first);
	return -ENOMEM;
}

/* ------------------------------------------------------------------ */
/* scheduler threads                                                    */
/* ------------------------------------------------------------------ */

static const char *phase_str(const struct sl_phase *p)
{
	switch (p->kind) {
	case SL_PH_COMPLETE: return "complete";
	case SL_PH_DISPATCH: return "dispatch";
	case SL_PH_RELEASE: return "release";
	case SL_PH_DUMMY: return "dummy";
	case SL_PH_EARLY_DISPATCH: return "early_dispatch";
	case SL_PH_RESOLVE: return "resolve";
	case SL_PH_DUMMY_TASK: return "dummy_task";
	case SL_PH_DRAIN: return "drain";
	case SL_PH_DRAIN_PREPARE: return "drain_prepare";
	case SL_PH_DRAIN_PUBLISH: return "drain_publish";
	case SL_PH_ASYNC_POLL: return "async_poll";
	case SL_PH_PREDICATED_SKIP: return "predicated_skip";
	default: return p->name ? p->name : "unknown";
	}
}

/* Colour of a rendered pid-2 phase bar (§1.6), NULL when not rendered. */
static const char *phase_cname(uint8_t kind)
{
	switch (kind) {
	case SL_PH_COMPLETE: return "good";
	case SL_PH_DISPATCH: return "terrible";
	case SL_PH_ASYNC_POLL: return "yellow";
	case SL_PH_RELEASE: return "olive";
	case SL_PH_DUMMY: return "grey";
	case SL_PH_EARLY_DISPATCH: return "rail_animation";
	case SL_PH_DRAIN: return "cq_build_running";
	case SL_PH_DRAIN_PREPARE: return "cq_build_attempt_runnable";
	case SL_PH_DRAIN_PUBLISH: return "cq_build_attempt_passed";
	case SL_PH_RESOLVE: return "vsync_highlight_color";
	default: return NULL;
	}
}

static int build_threads(struct gen *g)
{
	const struct sl_perf_data *pd = g->pd;
	g->n_thr = pd->has_sched ? pd->n_sched : 0;
	if (!g->n_thr)
		return 0;
	g->thr = tp_calloc_huge(g->n_thr, sizeof(*g->thr));
	if (!g->thr)
		return -ENOMEM;
	for (size_t ti = 0; ti < g->n_thr; ti++) {
		const struct sl_phase_list *l = &pd->sched[ti];
		struct thr *t = &g->thr[ti];
		size_t nc = 0, nd = 0;
		for (size_t i = 0; i < l->n; i++) {
			nc += l->v[i].kind == SL_PH_COMPLETE;
			nd += l->v[i].kind == SL_PH_DISPATCH;
		}
		struct dkey *k = tp_malloc_huge((nc + nd + 1) * sizeof(*k));
		t->comp = tp_malloc_huge((nc + 1) * sizeof(uint32_t));
		t->comp_start = tp_malloc_huge((nc + 1) * sizeof(double));
		t->comp_end = tp_malloc_huge((nc + 1) * sizeof(double));
		t->comp_finishes = tp_calloc_huge(nc + 1, sizeof(uint32_t));
		t->rec_slot = tp_malloc_huge((l->n + 1) * sizeof(int32_t));
		t->disp_start = tp_malloc_huge((nd + 1) * sizeof(double));
		t->disp_maxend = tp_malloc_huge((nd + 1) * sizeof(double));
		if (!k || !t->comp || !t->comp_start || !t->comp_end || !t->comp_finishes ||
		    !t->rec_slot || !t->disp_start || !t->disp_maxend) {
			free(k);
			return -ENOMEM;
		}
		size_t m = 0;
		for (size_t i = 0; i < l->n; i++) {
			t->rec_slot[i] = -1;
			if (l->v[i].kind == SL_PH_COMPLETE) {
				k[m].k = l->v[i].start_us;
				k[m].i = i;
				m++;
			}
		}
		qsort(k, m, sizeof(*k), cmp_dkey);
		for (size_t j = 0; j < m; j++) {
			t->comp[j] = (uint32_t)k[j].i;
			t->comp_start[j] = l->v[k[j].i].start_us;
			t->comp_end[j] = l->v[k[j].i].end_us;
			t->rec_slot[k[j].i] = (int32_t)j;
		}
		t->n_comp = m;
		m = 0;
		for (size_t i = 0; i < l->n; i++)
			if (l->v[i].kind == SL_PH_DISPATCH) {
				k[m].k = l->v[i].start_us;
				k[m].i = i;
				m++;
			}
		qsort(k, m, sizeof(*k), cmp_dkey);
		double mx = -INFINITY;
		for (size_t j = 0; j < m; j++) {
			t->disp_start[j] = l->v[k[j].i].start_us;
			if (l->v[k[j].i].end_us > mx)
				mx = l->v[k[j].i].end_us;
			t->disp_maxend[j] = mx;
		}
		t->n_disp = m;
		free(k);
	}
	return 0;
}

static size_t bisect_right(const double *a, size_t n, double x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (x < a[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The thread's complete slot that contains @f, otherwise the next one to
 * start; -1 when none (§4.6.4 "containing, otherwise next"). */
static long find_complete(const struct thr *t, double f)
{
	if (!t->n_comp)
		return -1;
	size_t idx = bisect_right(t->comp_start, t->n_comp, f);
	if (idx > 0 && t->comp_start[idx - 1] <= f && f <= t->comp_end[idx - 1])
		return (long)idx - 1;
	if (idx < t->n_comp)
		return (long)idx;
	return -1;
}

/* Does any dispatch record of @t contain @d? */
static bool disp_contains(const struct thr *t, double d)
{
	size_t idx = bisect_right(t->disp_start, t->n_disp, d);
	return idx > 0 && t->disp_maxend[idx - 1] >= d;
}

/* core_to_thread[core] when in range and ≥ 0 (and, if @max_thr, < it). */
static int64_t c2t(const struct gen *g, int32_t core)
{
	if (core < 0 || (size_t)core >= g->pd->n_core_to_thread)
		return -1;
	int32_t t = g->pd->core_to_thread[core];
	return t <= SL_C2T_MAX ? t : -1;
}

static int add_anchor(struct gen *g, uint64_t task_id, double start, double end, int64_t tid,
		      int64_t id)
{
	if (g->n_anc == g->cap_anc) {
		size_t cap = g->cap_anc ? 2 * g->cap_anc : 64;
		struct anchor *a = realloc(g->anc, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		g->anc = a;
		g->cap_anc = cap;
	}
	g->anc[g->n_anc] = (struct anchor){task_id, start, end, tid, id, g->n_anc};
	g->n_anc++;
	return 0;
}

static int cmp_anchor(const void *a, const void *b)
{
	const struct anchor *x = a, *y = b;
	if (x->task_id != y->task_id)
		return (x->task_id > y->task_id) - (x->task_id < y->task_id);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* A sorted set of u64 (dummy / predicated ids named by sched records). */
struct u64set {
	uint64_t *v;
	size_t n, cap;
};

static int u64set_add(struct u64set *s, uint64_t x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static bool u64set_has(const struct u64set *s, uint64_t x)
{
	return s->n && bsearch(&x, s->v, s->n, sizeof(uint64_t), cmp_u64);
}

/* ------------------------------------------------------------------ */
/* §4.4 steps 1–5: Worker View and Scheduler View                       */
/* ------------------------------------------------------------------ */

static const char *type_upper(uint8_t t) { return t == SL_AIC ? "AIC" : "AIV"; }

/* "<n>: [<tdisp>, ...]" (fanout / fanin hints, §4.6.2) into @b. */
static int hint(struct gen *g, struct sbuf *b, const uint64_t *ids, size_t n)
{
	(void)g;
	b->len = 0;
	if (sb_reserve(b, 24 + n * 26))
		return -ENOMEM;
	char *p = put_u(b->s, n);
	*p++ = ':';
	*p++ = ' ';
	*p++ = '[';
	for (size_t i = 0; i < n; i++) {
		if (i) {
			*p++ = ',';
			*p++ = ' ';
		}
		tdisp(ids[i], p, 32);
		p += strlen(p);
	}
	*p++ = ']';
	*p = '\0';
	b->len = (size_t)(p - b->s);
	return 0;
}

/*
 * Rows formatted on two threads (§4.4 steps 4 and 5, the Worker and
 * Scheduler View bars: a bar depends only on its row and on tables that
 * are read-only by then). The rows go in chunks of RP_CHUNK: this thread
 * formats the even chunks straight into g->w; a second thread formats the
 * odd ones, with a copy of *g whose writer is a fragment (jw_fragment_init)
 * and whose scratch buffers (lbl, sb, sb2) are its own, and this thread
 * appends each odd chunk after the even one before it, so the bytes come
 * out in row order, exactly as one thread writes them. One fragment: the
 * second thread formats chunk 2k+3 while this thread formats chunk 2k+2.
 * At 1,000,000 tasks the two views were about 1.1 s on one thread
 * (docs/converter-performance.md). The compact layout only; --pretty, a
 * run of at most one chunk, or no second thread: one thread, as before.
 */
#define RP_CHUNK 2048
#define RP_THREAD_STACK (256u << 10) /* as FQ_THREAD_STACK */

typedef int (*rows_fn)(struct gen *g, size_t lo, size_t hi);

struct rowpar {
	struct gen hg; /* the second thread's copy of *g */
	rows_fn fn;
	size_t n;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* broadcast on every change of ready, stop */
	bool ready;        /* hg.w holds a formatted chunk (mu) */
	bool stop;         /* the first thread gives up (an error) (mu) */
	int rc;            /* the second thread's error, with ready (mu) */
};

static void *rowpar_main(void *arg)
{
	struct rowpar *p = arg;
	for (size_t lo = RP_CHUNK; lo < p->n; lo += 2 * RP_CHUNK) {
		size_t hi = lo + RP_CHUNK < p->n ? lo + RP_CHUNK : p->n;
		int rc = p->fn(&p->hg, lo, hi);
		pthread_mutex_lock(&p->mu);
		p->ready = true;
		p->rc = rc;
		pthread_cond_broadcast(&p->cv);
		/* the mutex orders the first thread's reads of hg.w after these
		 * writes, and its emptying of hg.w before the next chunk */
		while (p->ready && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		bool stop = p->stop || rc;
		pthread_mutex_unlock(&p->mu);
		if (stop)
			break;
	}
	return NULL;
}

static int rows_par(struct gen *g, rows_fn fn, size_t n)
{
	if (g->o->pretty || n <= RP_CHUNK)
		return fn(g, 0, n);
	struct rowpar *p = calloc(1, sizeof(*p));
	if (!p)
		return fn(g, 0, n);
	p->fn = fn;
	p->n = n;
	/* *g but its writer, whose threaded fields the writer thread
	 * changes under its mutex: the copy's writer is a fragment */
	size_t wo = offsetof(struct gen, w), we = wo + sizeof(g->w);
	memcpy(&p->hg, g, wo);
	memcpy((char *)&p->hg + we, (const char *)g + we, sizeof(*g) - we);
	p->hg.sb = (struct sbuf){ 0 };
	p->hg.sb2 = (struct sbuf){ 0 };
	p->hg.n_events = 0;
	p->hg.lbl = malloc(g->lbl_cap);
	bool ok = p->hg.lbl && jw_fragment_init(&p->hg.w) == 0;
	if (ok && pthread_mutex_init(&p->mu, NULL))
		ok = false;
	if (ok && pthread_cond_init(&p->cv, NULL)) {
		pthread_mutex_destroy(&p->mu);
		ok = false;
	}
	pthread_t th;
	if (ok && tp_thread_start(&th, "tp-swl-rows", RP_THREAD_STACK, rowpar_main, p)) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		ok = false;
	}
	if (!ok) {
		jw_fragment_fini(&p->hg.w);
		free(p->hg.lbl);
		free(p);
		return fn(g, 0, n);
	}
	int rc = 0;
	for (size_t lo = 0; lo < n; lo += 2 * RP_CHUNK) {
		size_t hi = lo + RP_CHUNK < n ? lo + RP_CHUNK : n;
		rc = fn(g, lo, hi);
		if (rc || hi == n)
			break;
		pthread_mutex_lock(&p->mu);
		while (!p->ready)
			pthread_cond_wait(&p->cv, &p->mu);
		rc = p->rc;
		if (!rc) {
			jw_fragment_move(&g->w, &p->hg.w);
			g->n_events += p->hg.n_events;
			p->hg.n_events = 0;
		}
		p->ready = false;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (rc)
			break;
	}
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(th, NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	jw_fragment_fini(&p->hg.w);
	free(p->hg.lbl);
	free(p->hg.sb.s);
	free(p->hg.sb2.s);
	free(p);
	return rc;
}

/* §4.4 step 4: the Worker View bars of rows [@lo, @hi), into g->w. */
static int wv_rows(struct gen *g, size_t lo, size_t hi)
{
	struct jw *w = &g->w;
	char td[32];
	size_t cur_group = SIZE_MAX;
	for (size_t i = lo; i < hi; i++) {
		const struct sl_task *r = &g->t[i];
		size_t gi = g->row_group[i];
		if (gi != cur_group) {
			size_t n;
			const uint64_t *ids = succs_of(g, r->task_id, &n);
			if (hint(g, &g->sb, ids, n))
				return -ENOMEM;
			ids = preds_of(g, r->task_id, &n);
			if (hint(g, &g->sb2, ids, n))
				return -ENOMEM;
			cur_group = gi;
		}
		tdisp(r->task_id, td, sizeof(td));
		double ts = row_slice_wv(r);
		double dur = r->end_us - ts;
		if (!g->o->pretty && g->sb.len + g->sb2.len < JW_EV_MAX / 8) {
			char eh[128];
			size_t ehl = event_hint(eh, td, r->func_id, r->core_id);
			const char *nm = label(g, r->func_id, td, g->g_spmd[gi]);
			size_t nml = strlen(nm);
			char *p = jw_ev_begin(w, 6 * (ehl + g->sb.len + g->sb2.len + nml) + 512);
			g->n_events++;
			p = CPY(p, "{\"args\":{\"event-hint\":");
			p = put_s(p, eh, ehl);
			p = CPY(p, ",\"fanout-hint\":");
			p = put_s(p, g->sb.s, g->sb.len);
			p = CPY(p, ",\"fanin-hint\":");
			p = put_s(p, g->sb2.s, g->sb2.len);
			p = CPY(p, ",\"duration-us\":");
			p = put_d(p, dur);
			p = CPY(p, ",\"kernel-duration-us\":");
			p = put_d(p, r->duration_us);
			p = CPY(p, ",\"local_setup_us\":");
			p = put_d(p, r->local_setup_us != 0.0 ? r->local_setup_us : 0.0);
			p = CPY(p, ",\"taskId\":");
			p = put_u(p, r->task_id);
			p = CPY(p, "},\"cat\":\"event\",\"id\":");
			p = put_i(p, g->wv_id[i]);
			p = CPY(p, ",\"name\":");
			p = put_s(p, nm, nml);
			p = CPY(p, ",\"ph\":\"X\",\"pid\":4,\"tid\":");
			p = put_i(p, core_tid(r->core_id));
			p = CPY(p, ",\"ts\":");
			p = put_d(p, ts);
			p = CPY(p, ",\"dur\":");
			p = put_d(p, dur);
			*p++ = '}';
			jw_ev_end(w, p);
			continue;
		}
		ev_begin(g);
		jw_key(w, "args");
		jw_obj_begin(w);
		jw_key(w, "event-hint");
		jw_strn(w, g->lbl, event_hint(g->lbl, td, r->func_id, r->core_id));
		jw_key(w, "fanout-hint");
		jw_strn(w, g->sb.s, g->sb.len);
		jw_key(w, "fanin-hint");
		jw_strn(w, g->sb2.s, g->sb2.len);
		jw_key(w, "duration-us");
		jw_double(w, dur);
		jw_key(w, "kernel-duration-us");
		jw_double(w, r->duration_us);
		jw_key(w, "local_setup_us");
		jw_double(w, r->local_setup_us != 0.0 ? r->local_setup_us : 0.0);
		jw_key(w, "taskId");
		jw_u64(w, r->task_id);
		jw_obj_end(w);
		jw_key(w, "cat");
		jw_str(w, "event");
		jw_key(w, "id");
		jw_i64(w, g->wv_id[i]);
		jw_key(w, "name");
		jw_str(w, label(g, r->func_id, td, g->g_spmd[gi]));
		jw_key(w, "ph");
		jw_str(w, "X");
		jw_key(w, "pid");
		jw_i64(w, 4);
		jw_key(w, "tid");
		jw_i64(w, core_tid(r->core_id));
		jw_key(w, "ts");
		jw_double(w, ts);
		jw_key(w, "dur");
		jw_double(w, dur);
		jw_obj_end(w);
	}
	return 0;
}

static int emit_worker_view(struct gen *g)
{
	char name[64];
	meta_name(g, 4, -1, "process_name", "Worker View");
	meta_sort(g, 4, -1, "process_sort_index", 4);
	if (g->has_aicpu) {
		meta_name(g, 3, -1, "process_name", "Scheduler View");
		meta_sort(g, 3, -1, "process_sort_index", 3);
	}
	uint8_t *first_type = tp_malloc_huge(g->nc + 1);
	if (!first_type)
		return -ENOMEM;
	memset(first_type, 0xff, g->nc + 1);
	for (size_t i = 0; i < g->n; i++)
		if (first_type[g->row_core[i]] == 0xff)
			first_type[g->row_core[i]] = g->t[i].core_type;
	for (size_t c = 0; c < g->nc; c++) {
		snprintf(name, sizeof(name), "%s_%d", type_upper(first_type[c]), g->cores[c]);
		meta_name(g, 4, core_tid(g->cores[c]), "thread_name", name);
	}
	free(first_type);
	for (int64_t k = 0; k < g->S + g->O; k++) {
		snprintf(name, sizeof(name), "AICPU_%lld", (long long)k);
		meta_name(g, 4, 19000 + k, "thread_name", name);
	}

	int rc = rows_par(g, wv_rows, g->n);
	if (rc)
		return rc;
	g->event_id = (int64_t)g->n;
	return 0;
}

static bool tid_used(const int64_t *tids, size_t n, int64_t tid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && tids[lo] == tid;
}

/* §4.4 step 5: the Scheduler View bars of rows [@lo, @hi), into g->w;
 * g->event_id ends one past the last bar's id. */
static int sv_rows(struct gen *g, size_t lo, size_t hi)
{
	struct jw *w = &g->w;
	char td[32];
	for (size_t i = lo; i < hi; i++) {
		const struct sl_task *r = &g->t[i];
		if (!row_sv_valid(r))
			continue;
		tdisp(r->task_id, td, sizeof(td));
		double dur = r->finish_us - r->dispatch_us;
		if (!g->o->pretty) {
			char eh[128];
			size_t ehl = event_hint(eh, td, r->func_id, r->core_id);
			const char *nm = label(g, r->func_id, td, g->g_spmd[g->row_group[i]]);
			size_t nml = strlen(nm);
			char *p = jw_ev_begin(w, 6 * (ehl + nml) + 512);
			g->n_events++;
			p = CPY(p, "{\"args\":{\"event-hint\":");
			p = put_s(p, eh, ehl);
			p = CPY(p, ",\"dispatch-time-us\":");
			p = put_d(p, r->dispatch_us);
			p = CPY(p, ",\"finish-time-us\":");
			p = put_d(p, r->finish_us);
			p = CPY(p, ",\"aicpu-duration-us\":");
			p = put_d(p, dur);
			p = CPY(p, ",\"taskId\":");
			p = put_u(p, r->task_id);
			p = CPY(p, "},\"cat\":\"event\",\"id\":");
			p = put_i(p, g->sv_id[i]);
			p = CPY(p, ",\"name\":");
			p = put_s(p, nm, nml);
			p = CPY(p, ",\"ph\":\"X\",\"pid\":3,\"tid\":");
			p = put_i(p, g->sv_tid[i]);
			p = CPY(p, ",\"ts\":");
			p = put_d(p, r->dispatch_us);
			p = CPY(p, ",\"dur\":");
			p = put_d(p, dur);
			*p++ = '}';
			jw_ev_end(w, p);
			g->event_id = g->sv_id[i] + 1;
			continue;
		}
		ev_begin(g);
		jw_key(w, "args");
		jw_obj_begin(w);
		jw_key(w, "event-hint");
		jw_strn(w, g->lbl, event_hint(g->lbl, td, r->func_id, r->core_id));
		jw_key(w, "dispatch-time-us");
		jw_double(w, r->dispatch_us);
		jw_key(w, "finish-time-us");
		jw_double(w, r->finish_us);
		jw_key(w, "aicpu-duration-us");
		jw_double(w, dur);
		jw_key(w, "taskId");
		jw_u64(w, r->task_id);
		jw_obj_end(w);
		jw_key(w, "cat");
		jw_str(w, "event");
		jw_key(w, "id");
		jw_i64(w, g->sv_id[i]);
		jw_key(w, "name");
		jw_str(w, label(g, r->func_id, td, g->g_spmd[g->row_group[i]]));
		jw_key(w, "ph");
		jw_str(w, "X");
		jw_key(w, "pid");
		jw_i64(w, 3);
		jw_key(w, "tid");
		jw_i64(w, g->sv_tid[i]);
		jw_key(w, "ts");
		jw_double(w, r->dispatch_us);
		jw_key(w, "dur");
		jw_double(w, dur);
		jw_obj_end(w);
		g->event_id = g->sv_id[i] + 1;
	}
	return 0;
}

static int emit_sched_view(struct gen *g, const int64_t *tids, size_t n_tids,
			   const size_t *first_row)
{
	char name[64];
	for (size_t c = 0; c < g->nc; c++) {
		int64_t base = core_tid(g->cores[c]);
		if (first_row[c] != SIZE_MAX)
			snprintf(name, sizeof(name), "%s_%d",
				 type_upper(g->t[first_row[c]].core_type), g->cores[c]);
		else
			snprintf(name, sizeof(name), "unknown_%d", g->cores[c]);
		if (tid_used(tids, n_tids, base) || n_tids == 0)
			meta_name(g, 3, base, "thread_name", name);
		if (tid_used(tids, n_tids, base + 1))
			meta_name(g, 3, base + 1, "thread_name", name);
	}
	int rc = rows_par(g, sv_rows, g->n);
	if (rc)
		return rc;
	/* g->event_id: one past the last bar's id, as sv_rows() leaves it */
	for (size_t i = g->n; i-- > 0;)
		if (row_sv_valid(&g->t[i])) {
			g->event_id = g->sv_id[i] + 1;
			break;
		}
	return 0;
}

/* ------------------------------------------------------------------ */
/* §4.4 step 6: scheduler phases                                        */
/* ------------------------------------------------------------------ */

static void int_arr3(struct jw *w, const int32_t v[3])
{
	jw_arr_begin(w);
	for (int i = 0; i < 3; i++)
		jw_i64(w, v[i]);
	jw_arr_end(w);
}

static char *put_arr3(char *p, const int32_t v[3])
{
	*p++ = '[';
	p = put_i(p, v[0]);
	*p++ = ',';
	p = put_i(p, v[1]);
	*p++ = ',';
	p = put_i(p, v[2]);
	*p++ = ']';
	return p;
}

/* The compact template of a rendered phase bar and its queue counter
 * (the token path of emit_sched_phases() writes the same); false when a
 * phase name is too long for it. */
static bool phase_compact(struct gen *g, const struct sl_phase *ph, const char *cname,
			  bool depths, size_t ti, size_t i, int64_t tid)
{
	struct jw *w = &g->w;
	const char *ps = phase_str(ph);
	size_t pl = strlen(ps);
	if (pl > 1024)
		return false;
	char *p = jw_ev_begin(w, 12 * pl + 640);
	g->n_events++;
	p = CPY(p, "{\"args\":{\"phase\":");
	p = put_s(p, ps, pl);
	p = CPY(p, ",\"loop_iter\":");
	p = put_u(p, ph->loop_iter);
	p = CPY(p, ",\"tasks_processed\":");
	p = put_u(p, ph->tasks_processed);
	if (depths) {
		p = CPY(p, ",\"shared_at_start (aic,aiv,mix)\":");
		p = put_arr3(p, ph->shared_at_start);
		p = CPY(p, ",\"shared_at_end (aic,aiv,mix)\":");
		p = put_arr3(p, ph->shared_at_end);
	}
	if (ph->kind == SL_PH_COMPLETE) {
		p = CPY(p, ",\"finishes_processed\":");
		p = put_u(p, g->thr[ti].comp_finishes[g->thr[ti].rec_slot[i]]);
	}
	p = CPY(p, "},\"cat\":\"scheduler\",\"cname\":");
	p = put_s(p, cname, strlen(cname));
	/* name: "<phase>(<tasks_processed>)" */
	char nm[1100];
	memcpy(nm, ps, pl);
	char *q = nm + pl;
	*q++ = '(';
	q = put_u(q, ph->tasks_processed);
	*q++ = ')';
	p = CPY(p, ",\"name\":");
	p = put_s(p, nm, (size_t)(q - nm));
	p = CPY(p, ",\"ph\":\"X\",\"pid\":2,\"tid\":");
	p = put_i(p, ph->kind == SL_PH_RESOLVE ? tid + 1 : tid);
	p = CPY(p, ",\"ts\":");
	p = put_d(p, ph->start_us);
	p = CPY(p, ",\"dur\":");
	p = put_d(p, ph->end_us - ph->start_us);
	*p++ = '}';
	jw_ev_end(w, p);
	if ((ph->kind == SL_PH_COMPLETE || ph->kind == SL_PH_DISPATCH) && depths) {
		p = jw_ev_begin(w, 256);
		g->n_events++;
		p = CPY(p, "{\"args\":{\"AIC\":");
		p = put_i(p, ph->shared_at_end[0]);
		p = CPY(p, ",\"AIV\":");
		p = put_i(p, ph->shared_at_end[1]);
		p = CPY(p, ",\"MIX\":");
		p = put_i(p, ph->shared_at_end[2]);
		p = CPY(p, "},\"cat\":\"queue\",\"name\":\"shared_ready_queue\",\"ph\":\"C\","
			   "\"pid\":2,\"tid\":3999,\"ts\":");
		p = put_d(p, ph->end_us);
		*p++ = '}';
		jw_ev_end(w, p);
	}
	return true;
}

/* §4.4 step 6: the bars (and markers, and queue samples) of scheduler
 * thread g->cur_ti's records [@lo, @hi), @lo a multiple of RP_CHUNK, into
 * g->w; a marker's event id counts on from g->chunk_mid[@lo / RP_CHUNK]
 * (sched_markers()). */
static int sp_rows(struct gen *g, size_t lo, size_t hi)
{
	struct jw *w = &g->w;
	char td[32];
	size_t ti = g->cur_ti;
	const struct sl_phase_list *l = &g->pd->sched[ti];
	int64_t tid = sched_tid((int64_t)ti);
	int64_t id = g->chunk_mid[lo / RP_CHUNK];
	for (size_t i = lo; i < hi; i++) {
		const struct sl_phase *p = &l->v[i];
		if (p->kind == SL_PH_DUMMY_TASK || p->kind == SL_PH_PREDICATED_SKIP) {
			bool has_id = p->flags & SL_PF_TASK_ID;
			double dur = p->end_us - p->start_us;
			if (!(dur >= MARKER_MIN))
				dur = MARKER_MIN;
			if (has_id)
				tdisp(p->task_id, td, sizeof(td));
			else
				snprintf(td, sizeof(td), "unknown");
			const char *nm;
			if (p->kind == SL_PH_DUMMY_TASK) {
				snprintf(g->lbl, g->lbl_cap, "dummy(%s)", td);
				nm = g->lbl;
			} else {
				int64_t fid = -1;
				long k = (has_id && g->has_kmap) ? sl_deps_find_task(g->dp, p->task_id) : -1;
				if (k >= 0)
					for (int s = 0; s < 3; s++)
						if (g->dp->kernel_ids[k][s] >= 0) {
							fid = g->dp->kernel_ids[k][s];
							break;
						}
				nm = label(g, fid, td, has_id && task_spmd(g, p->task_id));
			}
			ev_begin(g);
			jw_key(w, "args");
			jw_obj_begin(w);
			jw_key(w, "loop_iter");
			jw_u64(w, p->loop_iter);
			jw_key(w, "task_id");
			if (has_id)
				jw_u64(w, p->task_id);
			else
				jw_null(w);
			jw_key(w, "event-hint");
			jw_str(w, nm);
			if (p->kind == SL_PH_DUMMY_TASK) {
				jw_key(w, "phase");
				jw_str(w, "dummy_task");
			} else {
				jw_key(w, "predicated_pass");
				jw_bool(w, false);
			}
			jw_obj_end(w);
			jw_key(w, "cat");
			jw_str(w, "event");
			jw_key(w, "id");
			jw_i64(w, id);
			jw_key(w, "name");
			jw_str(w, nm);
			jw_key(w, "ph");
			jw_str(w, "X");
			jw_key(w, "pid");
			jw_i64(w, 4);
			jw_key(w, "tid");
			jw_i64(w, 19000 + (int64_t)ti);
			jw_key(w, "ts");
			jw_double(w, p->start_us);
			jw_key(w, "dur");
			jw_double(w, dur);
			jw_obj_end(w);
			id++;
			continue;
		}
		const char *cname = phase_cname(p->kind);
		if (!cname)
			continue;
		bool depths = (p->flags & SL_PF_SHARED_START) && (p->flags & SL_PF_SHARED_END);
		if (!g->o->pretty && phase_compact(g, p, cname, depths, ti, i, tid))
			continue;
		ev_begin(g);
		jw_key(w, "args");
		jw_obj_begin(w);
		jw_key(w, "phase");
		jw_str(w, phase_str(p));
		jw_key(w, "loop_iter");
		jw_u64(w, p->loop_iter);
		jw_key(w, "tasks_processed");
		jw_u64(w, p->tasks_processed);
		if (depths) {
			jw_key(w, "shared_at_start (aic,aiv,mix)");
			int_arr3(w, p->shared_at_start);
			jw_key(w, "shared_at_end (aic,aiv,mix)");
			int_arr3(w, p->shared_at_end);
		}
		if (p->kind == SL_PH_COMPLETE) {
			jw_key(w, "finishes_processed");
			jw_u64(w, g->thr[ti].comp_finishes[g->thr[ti].rec_slot[i]]);
		}
		jw_obj_end(w);
		jw_key(w, "cat");
		jw_str(w, "scheduler");
		jw_key(w, "cname");
		jw_str(w, cname);
		jw_key(w, "name");
		snprintf(g->lbl, g->lbl_cap, "%s(%llu)", phase_str(p),
			 (unsigned long long)p->tasks_processed);
		jw_str(w, g->lbl);
		jw_key(w, "ph");
		jw_str(w, "X");
		jw_key(w, "pid");
		jw_i64(w, 2);
		jw_key(w, "tid");
		jw_i64(w, p->kind == SL_PH_RESOLVE ? tid + 1 : tid);
		jw_key(w, "ts");
		jw_double(w, p->start_us);
		jw_key(w, "dur");
		jw_double(w, p->end_us - p->start_us);
		jw_obj_end(w);
		if ((p->kind == SL_PH_COMPLETE || p->kind == SL_PH_DISPATCH) && depths) {
			ev_begin(g);
			jw_key(w, "args");
			jw_obj_begin(w);
			jw_key(w, "AIC");
			jw_i64(w, p->shared_at_end[0]);
			jw_key(w, "AIV");
			jw_i64(w, p->shared_at_end[1]);
			jw_key(w, "MIX");
			jw_i64(w, p->shared_at_end[2]);
			jw_obj_end(w);
			jw_key(w, "cat");
			jw_str(w, "queue");
			jw_key(w, "name");
			jw_str(w, "shared_ready_queue");
			jw_key(w, "ph");
			jw_str(w, "C");
			jw_key(w, "pid");
			jw_i64(w, 2);
			jw_key(w, "tid");
			jw_i64(w, 3999);
			jw_key(w, "ts");
			jw_double(w, p->end_us);
			jw_obj_end(w);
		}
	}
	return 0;
}

/* The event ids of scheduler thread @ti's markers (dummy_task,
 * predicated_skip), in record order from g->event_id on, and their
 * anchors (§4.6.9); g->chunk_mid[c] is the id the first marker at or after
 * record c * RP_CHUNK takes. Done before the records are formatted, which
 * may be on two threads (rows_par()). */
static int sched_markers(struct gen *g, size_t ti)
{
	const struct sl_phase_list *l = &g->pd->sched[ti];
	free(g->chunk_mid);
	g->chunk_mid = tp_malloc_huge((l->n / RP_CHUNK + 1) * sizeof(int64_t));
	if (!g->chunk_mid)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		if (i % RP_CHUNK == 0)
			g->chunk_mid[i / RP_CHUNK] = g->event_id;
		const struct sl_phase *p = &l->v[i];
		if (p->kind != SL_PH_DUMMY_TASK && p->kind != SL_PH_PREDICATED_SKIP)
			continue;
		double dur = p->end_us - p->start_us;
		if (!(dur >= MARKER_MIN))
			dur = MARKER_MIN;
		if ((p->flags & SL_PF_TASK_ID) &&
		    add_anchor(g, p->task_id, p->start_us, p->start_us + dur, 19000 + (int64_t)ti,
			       g->event_id))
			return -ENOMEM;
		g->event_id++;
	}
	if (l->n % RP_CHUNK == 0)
		g->chunk_mid[l->n / RP_CHUNK] = g->event_id;
	return 0;
}

static int emit_sched_phases(struct gen *g)
{
	const struct sl_perf_data *pd = g->pd;
	char name[64];

	/* finishes_processed: rows attributed to each complete (§4.6.4) */
	if (pd->n_core_to_thread) {
		for (size_t i = 0; i < g->n; i++) {
			const struct sl_task *r = &g->t[i];
			if (r->finish_us < 0)
				continue;
			int64_t thr = c2t(g, r->core_id);
			if (thr < 0 || (size_t)thr >= g->n_thr)
				continue;
			long slot = find_complete(&g->thr[thr], r->finish_us);
			if (slot >= 0)
				g->thr[thr].comp_finishes[slot]++;
		}
	}

	meta_name(g, 2, -1, "process_name", "AICPU Scheduler");
	meta_sort(g, 2, -1, "process_sort_index", 2);
	for (size_t ti = 0; ti < g->n_thr; ti++) {
		const struct sl_phase_list *l = &pd->sched[ti];
		int64_t tid = sched_tid((int64_t)ti);
		snprintf(name, sizeof(name), "Sched_%zu", ti);
		meta_name(g, 2, tid, "thread_name", name);
		for (size_t i = 0; i < l->n; i++)
			if (l->v[i].kind == SL_PH_RESOLVE) {
				meta_name(g, 2, tid + 1, "thread_name", name);
				break;
			}
		g->cur_ti = ti;
		int rc = sched_markers(g, ti);
		if (!rc)
			rc = rows_par(g, sp_rows, l->n);
		if (rc)
			return rc;
	}
	meta_name(g, 2, 3999, "thread_name", "shared_ready_queue (global)");
	meta_sort(g, 2, 3999, "thread_sort_index", 100);
	return 0;
}

/* ------------------------------------------------------------------ */
/* §4.4 step 7: orchestrator                                            */
/* ------------------------------------------------------------------ */

static int emit_orch(struct gen *g)
{
	struct jw *w = &g->w;
	const struct sl_perf_data *pd = g->pd;
	char td[32], name[64];
	struct u64set dummy = {0}, pred = {0};
	struct u64map warned = {0};
	int rc = 0;

	const char *on = g->nm ? g->nm->orchestrator_name : NULL;
	if (on && *on) {
		g->sb.len = 0;
		if (sb_printf(&g->sb, "AICPU %s", on))
			return -ENOMEM;
		meta_name(g, 1, -1, "process_name", g->sb.s);
	} else {
		meta_name(g, 1, -1, "process_name", "AICPU Orchestrator");
	}
	meta_sort(g, 1, -1, "process_sort_index", 1);
	for (size_t j = 0; j < pd->n_orch; j++) {
		snprintf(name, sizeof(name), "Orch_%zu", j);
		meta_name(g, 1, 4000 + (int64_t)j, "thread_name", name);
	}
	for (size_t ti = 0; ti < g->n_thr; ti++) {
		const struct sl_phase_list *l = &pd->sched[ti];
		for (size_t i = 0; i < l->n; i++) {
			const struct sl_phase *p = &l->v[i];
			if (!(p->flags & SL_PF_TASK_ID))
				continue;
			if (p->kind == SL_PH_DUMMY_TASK && u64set_add(&dummy, p->task_id))
				goto nomem;
			if (p->kind == SL_PH_PREDICATED_SKIP && u64set_add(&pred, p->task_id))
				goto nomem;
		}
	}
	if (dummy.n)
		qsort(dummy.v, dummy.n, sizeof(uint64_t), cmp_u64);
	if (pred.n)
		qsort(pred.v, pred.n, sizeof(uint64_t), cmp_u64);

	for (size_t j = 0; j < pd->n_orch; j++) {
		const struct sl_orch_list *l = &pd->orch[j];
		int64_t tid = 4000 + (int64_t)j;
		int64_t lane = 19000 + g->S + (int64_t)j;
		for (size_t i = 0; i < l->n; i++) {
			const struct sl_orch *o = &l->v[i];
			double dur = o->end_us - o->start_us;
			if (!g->o->pretty) {
				char *p = jw_ev_begin(w, 512);
				g->n_events++;
				p = CPY(p, "{\"args\":{\"phase\":\"orch_submit\",\"submit_idx\":");
				p = put_u(p, o->submit_idx);
				p = CPY(p, ",\"task_id\":");
				p = o->has_task_id ? put_u(p, o->task_id) : CPY(p, "-1");
				p = CPY(p, "},\"cat\":\"orchestrator\",\"cname\":\"rail_animation\","
					   "\"name\":\"submit(");
				if (o->has_task_id) {
					size_t tl = strlen(tdisp(o->task_id, td, sizeof(td)));
					memcpy(p, td, tl);
					p += tl;
				} else {
					p = put_u(p, o->submit_idx);
				}
				p = CPY(p, ")\",\"ph\":\"X\",\"pid\":1,\"tid\":");
				p = put_i(p, tid);
				p = CPY(p, ",\"ts\":");
				p = put_d(p, o->start_us);
				p = CPY(p, ",\"dur\":");
				p = put_d(p, dur);
				*p++ = '}';
				jw_ev_end(w, p);
				goto classify;
			}
			ev_begin(g);
			jw_key(w, "args");
			jw_obj_begin(w);
			jw_key(w, "phase");
			jw_str(w, "orch_submit");
			jw_key(w, "submit_idx");
			jw_u64(w, o->submit_idx);
			jw_key(w, "task_id");
			if (o->has_task_id)
				jw_u64(w, o->task_id);
			else
				jw_i64(w, -1);
			jw_obj_end(w);
			jw_key(w, "cat");
			jw_str(w, "orchestrator");
			jw_key(w, "cname");
			jw_str(w, "rail_animation");
			jw_key(w, "name");
			if (o->has_task_id)
				snprintf(g->lbl, g->lbl_cap, "submit(%s)",
					 tdisp(o->task_id, td, sizeof(td)));
			else
				snprintf(g->lbl, g->lbl_cap, "submit(%llu)",
					 (unsigned long long)o->submit_idx);
			jw_str(w, g->lbl);
			jw_key(w, "ph");
			jw_str(w, "X");
			jw_key(w, "pid");
			jw_i64(w, 1);
			jw_key(w, "tid");
			jw_i64(w, tid);
			jw_key(w, "ts");
			jw_double(w, o->start_us);
			jw_key(w, "dur");
			jw_double(w, dur);
			jw_obj_end(w);
classify:
			if (!o->has_task_id)
				continue;

			/* §4.8 classification */
			bool regular, is_dummy;
			long k = g->has_kmap ? sl_deps_find_task(g->dp, o->task_id) : -1;
			if (k >= 0) {
				const int32_t *ids = g->dp->kernel_ids[k];
				is_dummy = ids[0] < 0 && ids[1] < 0 && ids[2] < 0;
				regular = !is_dummy;
				if (is_dummy && !u64set_has(&dummy, o->task_id)) {
					if (!warned.cap) {
						size_t tot = 0;
						for (size_t q = 0; q < pd->n_orch; q++)
							tot += pd->orch[q].n;
						if (u64map_init(&warned, tot))
							goto nomem;
					}
					if (u64map_get(&warned, o->task_id) == UINT32_MAX) {
						fprintf(g->o->err,
							"Warning: dummy(%s) has no dummy_task scheduler record; "
							"its Worker View bar cannot be rendered.\n",
							tdisp(o->task_id, td, sizeof(td)));
						u64map_put(&warned, o->task_id, 0);
					}
				}
			} else {
				regular = find_group(g, o->task_id) >= 0;
				is_dummy = u64set_has(&dummy, o->task_id);
			}
			bool is_pred = u64set_has(&pred, o->task_id);
			if (regular || is_dummy || is_pred)
				continue;
			double bd = dur >= MARKER_MIN ? dur : MARKER_MIN;
			tdisp(o->task_id, td, sizeof(td));
			snprintf(g->lbl, g->lbl_cap, "alloc(%s)", td);
			ev_begin(g);
			jw_key(w, "args");
			jw_obj_begin(w);
			jw_key(w, "phase");
			jw_str(w, "alloc");
			jw_key(w, "task_id");
			jw_u64(w, o->task_id);
			jw_key(w, "event-hint");
			jw_str(w, g->lbl);
			jw_obj_end(w);
			jw_key(w, "cat");
			jw_str(w, "event");
			jw_key(w, "cname");
			jw_str(w, "olive");
			jw_key(w, "id");
			jw_i64(w, g->event_id);
			jw_key(w, "name");
			jw_str(w, g->lbl);
			jw_key(w, "ph");
			jw_str(w, "X");
			jw_key(w, "pid");
			jw_i64(w, 4);
			jw_key(w, "tid");
			jw_i64(w, lane);
			jw_key(w, "ts");
			jw_double(w, o->start_us);
			jw_key(w, "dur");
			jw_double(w, bd);
			jw_obj_end(w);
			if (add_anchor(g, o->task_id, o->start_us, o->start_us + bd, lane, g->event_id))
				goto nomem;
			g->event_id++;
		}
	}
out:
	free(dummy.v);
	free(pred.v);
	u64map_free(&warned);
	return rc;
nomem:
	rc = -ENOMEM;
	goto out;
}

/* ------------------------------------------------------------------ */
/* §4.4 steps 8–12: flows                                               */
/* ------------------------------------------------------------------ */

/* One endpoint of a Worker View dependency arrow. */
struct wv_end {
	double start, end;
	int64_t tid, bind;
};

/* Grow @out to @k entries. */
static int wv_reserve(struct wv_end **out, size_t *cap, size_t k)
{
	if (k <= *cap)
		return 0;
	struct wv_end *p = realloc(*out, k * sizeof(*p));
	if (!p)
		return -ENOMEM;
	*out = p;
	*cap = k;
	return 0;
}

/* Worker View anchors of @task_id into @out (*n): its rows' view anchors,
 * else its AICPU worker anchors (§4.7). Return 1 when there are some, 0
 * when the task has neither, -ENOMEM. */
static int wv_anchors(struct gen *g, uint64_t task_id, struct wv_end **out, size_t *n,
		      size_t *cap)
{
	long gi = find_group(g, task_id);
	size_t k = 0;
	if (gi >= 0) {
		size_t a = g->wva_off[gi];
		k = g->wva_off[gi + 1] - a;
		if (wv_reserve(out, cap, k))
			return -ENOMEM;
		for (size_t q = 0; q < k; q++) {
			size_t r = g->wva[a + q];
			(*out)[q] = (struct wv_end){row_slice_wv(&g->t[r]), g->t[r].end_us,
						    core_tid(g->t[r].core_id), g->wv_bind[r]};
		}
	} else {
		size_t first = find_anchors(g, task_id, &k);
		if (wv_reserve(out, cap, k))
			return -ENOMEM;
		for (size_t q = 0; q < k; q++) {
			const struct anchor *a = &g->anc[first + q];
			(*out)[q] = (struct wv_end){a->start, a->end, a->tid, a->event_id};
		}
	}
	*n = k;
	return k > 0;
}

static int flows_wv(struct gen *g)
{
	char td1[32], td2[32];
	struct wv_end *pa = NULL, *sa = NULL;
	size_t pcap = 0, scap = 0, np_, ns_;
	uint64_t hb = 0, count = 0;
	int rc = 0;
	for (size_t pi = 0; pi < g->np; pi++) {
		uint64_t pred = g->p_key[pi];
		int got = wv_anchors(g, pred, &pa, &np_, &pcap);
		if (got < 0) {
			rc = got;
			break;
		}
		if (!got)
			continue;
		int64_t out_cnt = fan_count(g, pred);
		for (size_t k = g->p_off[pi]; k < g->p_off[pi + 1]; k++) {
			uint64_t succ = g->p_succ[k];
			got = wv_anchors(g, succ, &sa, &ns_, &scap);
			if (got < 0) {
				rc = got;
				break;
			}
			if (!got) {
				if (g->o->verbose)
					fprintf(g->o->out,
						"Warning: Task %s (raw %llu) references non-existent "
						"successor %s (raw %llu)\n",
						tdisp(pred, td1, sizeof(td1)), (unsigned long long)pred,
						tdisp(succ, td2, sizeof(td2)), (unsigned long long)succ);
				continue;
			}
			int64_t in_cnt = fan_count(g, succ);
			for (size_t a = 0; a < np_; a++)
				for (size_t b = 0; b < ns_; b++) {
					bool v = pa[a].end > sa[b].start;
					hb += v;
					flow_dep(g, v ? "hb_violation" : "dependency", 4, pa[a].tid,
						 pa[a].start, pa[a].bind, sa[b].tid, sa[b].start,
						 sa[b].bind, in_cnt, out_cnt);
					count++;
				}
		}
		if (rc || writer_failed(g))
			break;
	}
	free(pa);
	free(sa);
	if (rc)
		return rc;
	if (g->o->verbose) {
		FILE *o = g->o->out;
		if (g->has_edges) {
			fprintf(o, "  Dependency flow events: %llu edges (source: deps.json)\n",
				(unsigned long long)count);
			/* SPMD logical tasks: the block map's block_num > 1 ids plus
			 * the heuristic ones (§4.7) */
			size_t n_spmd = 0;
			for (size_t gi = 0; gi < g->ng; gi++)
				n_spmd += g->g_spmd[gi];
			if (g->has_bmap) {
				const struct sl_deps *d = g->dp;
				uint64_t *ids = tp_malloc_huge((d->n_block_tasks + 1) * sizeof(uint64_t));
				if (!ids)
					return -ENOMEM;
				size_t m = 0;
				for (size_t i = 0; i < d->n_block_tasks; i++)
					if (sl_deps_block_num(d, d->block_task_id[i]) > 1 &&
					    find_group(g, d->block_task_id[i]) < 0)
						ids[m++] = d->block_task_id[i];
				qsort(ids, m, sizeof(uint64_t), cmp_u64);
				for (size_t i = 0; i < m; i++)
					n_spmd += (i == 0 || ids[i] != ids[i - 1]);
				free(ids);
			}
			if (n_spmd)
				fprintf(o,
					"  SPMD tasks: %zu logical task(s); dependency arrows "
					"independently anchor on each view's earliest visible slice "
					"per function\n",
					n_spmd);
		} else {
			fprintf(o, "  Flow events: 0 (no deps.json \xe2\x80\x94 re-run dep_gen and pass "
				   "--deps-json to add arrows)\n");
		}
		if (hb)
			fprintf(o, "  Happens-before violations: %llu edge(s) flagged as 'hb_violation'\n",
				(unsigned long long)hb);
	}
	return rc;
}

/* Whether @task_id has a Worker View anchor (wv_anchors() finds some). */
static bool wv_has_anchor(const struct gen *g, uint64_t task_id)
{
	long gi = find_group(g, task_id);
	if (gi >= 0)
		return g->wva_off[gi + 1] > g->wva_off[gi];
	size_t k;
	find_anchors(g, task_id, &k);
	return k > 0;
}

/* The kinds of a deps.json task that has nothing to anchor on. */
enum { UA_DUMMY, UA_OTHER, UA_ALLOC, UA_KINDS };

/* Ids shown per kind in the warning; more are counted, not named. */
#define UA_SHOW 3

/*
 * Decision for taskprof (seed 002 §3.3: "If a dummy's scheduler record is
 * missing, it warns"; the reference warns only for a dummy's orch_submit
 * record at level 4 and drops every other arrow without an endpoint in
 * silence, on stdout under -v): one stderr line when producer-consumer
 * pairs of deps.json get no Worker View arrow because one of their tasks
 * has nothing to anchor on (no task row, no dummy_task / predicated_skip
 * marker, no alloc bar): the pairs, the tasks by kind with the first ids,
 * and what the records' level cannot hold.
 */
static int warn_unanchored(struct gen *g)
{
	struct u64set miss = {0};
	uint64_t pairs = 0, dropped = 0;
	int rc = 0;
	for (size_t pi = 0; pi < g->np; pi++) {
		uint64_t pred = g->p_key[pi];
		bool pa = wv_has_anchor(g, pred);
		if (!pa && u64set_add(&miss, pred))
			goto nomem;
		for (size_t k = g->p_off[pi]; k < g->p_off[pi + 1]; k++) {
			uint64_t succ = g->p_succ[k];
			bool sa = wv_has_anchor(g, succ);
			if (!sa && u64set_add(&miss, succ))
				goto nomem;
			pairs++;
			dropped += !pa || !sa;
		}
	}
	if (!dropped)
		goto out;
	qsort(miss.v, miss.n, sizeof(uint64_t), cmp_u64);
	size_t n_tasks = 0, n_kind[UA_KINDS] = {0};
	uint64_t shown[UA_KINDS][UA_SHOW];
	for (size_t i = 0; i < miss.n; i++) {
		if (i && miss.v[i] == miss.v[i - 1])
			continue;
		int kind = UA_OTHER;
		if (g->has_kmap) {
			long k = sl_deps_find_task(g->dp, miss.v[i]);
			if (k < 0)
				kind = UA_ALLOC;
			else if (g->dp->kernel_ids[k][0] < 0 && g->dp->kernel_ids[k][1] < 0 &&
				 g->dp->kernel_ids[k][2] < 0)
				kind = UA_DUMMY;
		}
		if (n_kind[kind] < UA_SHOW)
			shown[kind][n_kind[kind]] = miss.v[i];
		n_kind[kind]++;
		n_tasks++;
	}
	struct sbuf *b = &g->sb2;
	char td[32];
	b->len = 0;
	if (sb_printf(b, "%llu of %llu producer-consumer pairs of deps.json have no "
			 "dependency arrow, for %zu task%s with no record to anchor on: ",
		      (unsigned long long)dropped, (unsigned long long)pairs, n_tasks,
		      n_tasks == 1 ? "" : "s"))
		goto nomem;
	const char *sep = "";
	for (int kind = 0; kind < UA_KINDS; kind++) {
		size_t n = n_kind[kind];
		if (!n)
			continue;
		const char *pl = n == 1 ? "" : "s";
		int w = kind == UA_DUMMY
				? sb_printf(b, "%s%zu dummy task%s without a dummy_task record", sep,
					    n, pl)
			: kind == UA_OTHER
				? sb_printf(b, "%s%zu task%s without task rows or a predicated_skip "
					       "record", sep, n, pl)
				: sb_printf(b, "%s%zu alloc_tensors task%s (not in deps.json "
					       "tasks[]) without an orch_submit record", sep, n, pl);
		if (w)
			goto nomem;
		size_t show = n < UA_SHOW ? n : UA_SHOW;
		for (size_t i = 0; i < show; i++)
			if (sb_printf(b, "%s%s", i ? ", " : " (",
				      tdisp(shown[kind][i], td, sizeof(td))))
				goto nomem;
		if (sb_printf(b, n > show ? ", ...)" : ")"))
			goto nomem;
		sep = "; ";
	}
	const struct sl_perf_data *pd = g->pd;
	if (pd->level < 3 && (n_kind[UA_DUMMY] || n_kind[UA_OTHER]) &&
	    sb_printf(b, "; the records are level %d: dummy_task / predicated_skip markers "
			 "need level 3", pd->level))
		goto nomem;
	bool markers = false;
	for (size_t ti = 0; ti < pd->n_sched && !markers; ti++)
		for (size_t i = 0; i < pd->sched[ti].n && !markers; i++)
			markers = pd->sched[ti].v[i].kind == SL_PH_DUMMY_TASK ||
				  pd->sched[ti].v[i].kind == SL_PH_PREDICATED_SKIP;
	/* Orchestrator records mean the device orchestrated (not
	 * host_build_graph, whose a5sim runs write no markers): then the run
	 * had no such task, and deps.json is likely another run's. Level-4
	 * records without them are host_build_graph's; level 3 cannot tell. */
	const char *why = pd->level < 4 ? "(a5sim host_build_graph writes none; any other run "
					  "had no such task: is deps.json from another run?)"
			  : pd->has_orch && pd->n_orch
				  ? "(the run had no such task: is deps.json from another run?)"
				  : "(a5sim host_build_graph writes none)";
	if (pd->level >= 3 && (n_kind[UA_DUMMY] || n_kind[UA_OTHER]) && !markers &&
	    sb_printf(b, "; the records hold no dummy_task / predicated_skip marker at all %s",
		      why))
		goto nomem;
	if (n_kind[UA_ALLOC] && !(pd->has_orch && pd->n_orch) &&
	    (pd->level < 4 ? sb_printf(b, "; alloc bars need level-4 orchestrator records and "
					  "the records are level %d", pd->level)
			   : sb_printf(b, "; alloc bars need level-4 orchestrator records, which "
					  "host_build_graph does not write")))
		goto nomem;
	/* Every missing anchor the records' level or runtime explains (no
	 * orchestrator records: level < 4 or host_build_graph; no markers:
	 * level < 3, or a5sim host_build_graph, which writes neither) is
	 * what such a run gives, not a fault of this one: a note. Anything
	 * else (lost records, another run's deps.json) stays a warning. */
	const bool no_orch = !(pd->has_orch && pd->n_orch);
	/* a5sim host_build_graph: level 4 without orchestrator records or
	 * markers (level 3 cannot tell it from another run's deps.json) */
	const bool a5_hbg = !markers && pd->level >= 4 && no_orch;
	/* A task with kernels but no rows at level 1 or 2 may be a skipped
	 * one (no marker below level 3), or lost, or another run's: not
	 * explained. A dummy never has rows. */
	const bool explained = (!n_kind[UA_ALLOC] || no_orch) &&
			       (!n_kind[UA_DUMMY] || pd->level < 3 || a5_hbg) &&
			       (!n_kind[UA_OTHER] || a5_hbg);
	fprintf(g->o->err, "%s: %s\n", explained ? "note" : "Warning", b->s);
out:
	free(miss.v);
	return rc;
nomem:
	rc = -ENOMEM;
	goto out;
}

static void flows_sv(struct gen *g)
{
	for (size_t pi = 0; pi < g->np; pi++) {
		long pg = find_group(g, g->p_key[pi]);
		if (pg < 0)
			continue;
		int64_t out_cnt = -1;
		for (size_t k = g->p_off[pi]; k < g->p_off[pi + 1]; k++) {
			long sg = find_group(g, g->p_succ[k]);
			if (sg < 0)
				continue;
			int64_t in_cnt = -1;
			for (size_t a = g->sva_off[pg]; a < g->sva_off[pg + 1]; a++) {
				const struct sl_task *p = &g->t[g->sva[a]];
				if (!row_sv_valid(p))
					continue;
				for (size_t b = g->sva_off[sg]; b < g->sva_off[sg + 1]; b++) {
					const struct sl_task *s = &g->t[g->sva[b]];
					if (!row_sv_valid(s))
						continue;
					if (out_cnt < 0)
						out_cnt = fan_count(g, g->p_key[pi]);
					if (in_cnt < 0)
						in_cnt = fan_count(g, g->p_succ[k]);
					bool v = p->finish_us > s->dispatch_us;
					flow_dep(g, v ? "hb_violation" : "dependency", 3,
						 g->sv_tid[g->sva[a]], p->dispatch_us,
						 g->sv_bind[g->sva[a]], g->sv_tid[g->sva[b]],
						 s->dispatch_us, g->sv_bind[g->sva[b]], in_cnt, out_cnt);
				}
			}
		}
	}
}

static int cmp_comp(const void *a, const void *b, void *arg)
{
	const struct gen *g = arg;
	(void)g;
	const double *x = a, *y = b;
	/* entries are {end, thr, base} triples of doubles */
	for (int i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

static int flows_complete(struct gen *g)
{
	const struct sl_perf_data *pd = g->pd;
	if (!g->n_thr || !pd->n_core_to_thread)
		return 0;
	size_t ng = g->ng;
	int32_t *cthr = tp_malloc_huge((ng + 1) * sizeof(int32_t));
	long *cslot = tp_malloc_huge((ng + 1) * sizeof(long));
	double *lfin = tp_malloc_huge((ng + 1) * sizeof(double));
	if (!cthr || !cslot || !lfin) {
		free(cthr);
		free(cslot);
		free(lfin);
		return -ENOMEM;
	}
	for (size_t gi = 0; gi < ng; gi++) {
		cslot[gi] = -1;
		size_t s = g->g_start[gi], c = g->g_count[gi], best = SIZE_MAX;
		for (size_t j = 0; j < c; j++) {
			double f = g->t[s + j].finish_us;
			if (!(f >= 0))
				continue;
			if (best == SIZE_MAX || f > g->t[best].finish_us)
				best = s + j;
		}
		if (best == SIZE_MAX)
			continue;
		int64_t thr = c2t(g, g->t[best].core_id);
		if (thr < 0 || (size_t)thr >= g->n_thr)
			continue;
		long slot = find_complete(&g->thr[thr], g->t[best].finish_us);
		if (slot < 0)
			continue;
		cthr[gi] = (int32_t)thr;
		cslot[gi] = slot;
		lfin[gi] = g->t[best].finish_us;
	}
	for (size_t gi = 0; gi < ng; gi++) {
		if (cslot[gi] < 0)
			continue;
		const struct thr *t = &g->thr[cthr[gi]];
		int64_t dst = sched_tid(cthr[gi]);
		double cs = t->comp_start[cslot[gi]], ce = t->comp_end[cslot[gi]];
		double dts = (cs <= lfin[gi] && lfin[gi] <= ce) ? lfin[gi] : cs;
		for (size_t a = g->wva_off[gi]; a < g->wva_off[gi + 1]; a++) {
			size_t r = g->wva[a];
			flow_s(g, "complete", 4, core_tid(g->t[r].core_id), g->t[r].end_us - FLOW_EPS,
			       g->wv_bind[r]);
			flow_f(g, "complete", 2, dst, dts, -1);
			g->flow_id++;
		}
		for (size_t a = g->sva_off[gi]; a < g->sva_off[gi + 1]; a++) {
			size_t r = g->sva[a];
			if (!(g->t[r].finish_us > 0))
				continue;
			flow_s(g, "complete", 3, g->sv_tid[r], g->t[r].finish_us - FLOW_EPS,
			       g->sv_bind[r]);
			flow_f(g, "complete", 2, dst, dts, -1);
			g->flow_id++;
		}
	}

	int rc = 0;
	if (g->has_edges) {
		/* §4.6.11: walk completes by (end, thread), count satisfied fanin */
		size_t total = 0;
		size_t *toff = tp_malloc_huge((g->n_thr + 1) * sizeof(size_t));
		if (!toff)
			goto nomem;
		for (size_t ti = 0; ti < g->n_thr; ti++) {
			toff[ti] = total;
			total += g->thr[ti].n_comp;
		}
		toff[g->n_thr] = total;
		double *ord = tp_malloc_huge((total + 1) * 3 * sizeof(double));
		size_t *coff = tp_calloc_huge(total + 2, sizeof(size_t));
		size_t *ctask = tp_malloc_huge((ng + 1) * sizeof(size_t));
		uint32_t *sat = tp_calloc_huge(g->ns + 1, sizeof(uint32_t));
		uint64_t *trig = tp_malloc_huge((g->ns + 1) * sizeof(uint64_t));
		if (!ord || !coff || !ctask || !sat || !trig) {
			free(ord);
			free(coff);
			free(ctask);
			free(sat);
			free(trig);
			free(toff);
			goto nomem;
		}
		size_t m = 0;
		for (size_t ti = 0; ti < g->n_thr; ti++)
			for (size_t j = 0; j < g->thr[ti].n_comp; j++) {
				ord[3 * m] = g->thr[ti].comp_end[j];
				ord[3 * m + 1] = (double)ti;
				ord[3 * m + 2] = (double)m;
				m++;
			}
		qsort_r(ord, total, 3 * sizeof(double), cmp_comp, g);
		for (size_t gi = 0; gi < ng; gi++)
			if (cslot[gi] >= 0)
				coff[toff[cthr[gi]] + (size_t)cslot[gi] + 1]++;
		for (size_t i = 0; i < total; i++)
			coff[i + 1] += coff[i];
		size_t *fill = tp_malloc_huge((total + 1) * sizeof(size_t));
		if (!fill) {
			free(ord);
			free(coff);
			free(ctask);
			free(sat);
			free(trig);
			free(toff);
			goto nomem;
		}
		memcpy(fill, coff, (total + 1) * sizeof(size_t));
		for (size_t gi = 0; gi < ng; gi++)
			if (cslot[gi] >= 0)
				ctask[fill[toff[cthr[gi]] + (size_t)cslot[gi]]++] = gi;
		free(fill);
		for (size_t q = 0; q < total; q++) {
			size_t ci = (size_t)ord[3 * q + 2];
			size_t thr = (size_t)ord[3 * q + 1];
			double end = ord[3 * q];
			size_t nt = 0;
			for (size_t k = coff[ci]; k < coff[ci + 1]; k++) {
				size_t nsucc;
				const uint64_t *su = succs_of(g, g->g_tid[ctask[k]], &nsucc);
				for (size_t e = 0; e < nsucc; e++) {
					uint32_t si = u64map_get(&g->s_map, su[e]);
					if (si == UINT32_MAX)
						continue;
					sat[si]++;
					if (sat[si] == g->s_off[si + 1] - g->s_off[si])
						trig[nt++] = su[e];
				}
			}
			for (size_t k = 0; k < nt; k++) {
				long cg = find_group(g, trig[k]);
				if (cg < 0)
					continue;
				size_t s = g->g_start[cg], best = SIZE_MAX;
				for (size_t j = 0; j < g->g_count[cg]; j++) {
					double d = g->t[s + j].dispatch_us;
					if (!(d >= 0))
						continue;
					if (best == SIZE_MAX || d < g->t[best].dispatch_us)
						best = s + j;
				}
				if (best == SIZE_MAX)
					continue;
				int64_t dthr = c2t(g, g->t[best].core_id);
				if (dthr < 0)
					continue;
				double d = g->t[best].dispatch_us;
				if (d < end)
					continue;
				flow_s(g, "complete\xe2\x86\x92ready", 2, sched_tid((int64_t)thr),
				       end - FLOW_EPS, -1);
				flow_f(g, "complete\xe2\x86\x92ready", 2, sched_tid(dthr), d, -1);
				g->flow_id++;
			}
		}
		free(ord);
		free(coff);
		free(ctask);
		free(sat);
		free(trig);
		free(toff);
	}
out:
	free(cthr);
	free(cslot);
	free(lfin);
	return rc;
nomem:
	rc = -ENOMEM;
	goto out;
}

static int flows_dispatch(struct gen *g)
{
	const struct sl_perf_data *pd = g->pd;
	g->core_sched = tp_malloc_huge((g->nc + 1) * sizeof(int64_t));
	if (!g->core_sched)
		return -ENOMEM;
	for (size_t c = 0; c < g->nc; c++)
		g->core_sched[c] = -1;
	g->have_c2s = true;
	if (pd->n_core_to_thread) {
		size_t cnt = 0;
		for (size_t i = 0; i < pd->n_core_to_thread; i++)
			cnt += pd->core_to_thread[i] >= 0;
		for (size_t c = 0; c < g->nc; c++)
			g->core_sched[c] = c2t(g, g->cores[c]);
		if (g->o->verbose)
			fprintf(g->o->out, "  Core-to-thread mapping: %zu cores (from perf JSON)\n", cnt);
	} else {
		/* §4.6.12 voting: one vote per thread with a containing dispatch
		 * phase; most votes wins, ties go to the earliest first vote */
		size_t T = g->n_thr;
		uint64_t *votes = tp_calloc_huge(g->nc * T + 1, sizeof(uint64_t));
		uint64_t *firstv = tp_calloc_huge(g->nc * T + 1, sizeof(uint64_t));
		if (!votes || !firstv) {
			free(votes);
			free(firstv);
			return -ENOMEM;
		}
		uint64_t seq = 0;
		for (size_t i = 0; i < g->n; i++) {
			double d = g->t[i].dispatch_us;
			if (d < 0)
				continue;
			size_t c = g->row_core[i];
			for (size_t ti = 0; ti < T; ti++)
				if (g->thr[ti].n_disp && disp_contains(&g->thr[ti], d)) {
					if (!votes[c * T + ti])
						firstv[c * T + ti] = ++seq;
					votes[c * T + ti]++;
				}
		}
		size_t cnt = 0;
		for (size_t c = 0; c < g->nc; c++) {
			int64_t best = -1;
			for (size_t ti = 0; ti < T; ti++) {
				uint64_t v = votes[c * T + ti];
				if (!v)
					continue;
				if (best < 0 || v > votes[c * T + (size_t)best] ||
				    (v == votes[c * T + (size_t)best] &&
				     firstv[c * T + ti] < firstv[c * T + (size_t)best]))
					best = (int64_t)ti;
			}
			g->core_sched[c] = best;
			cnt += best >= 0;
		}
		free(votes);
		free(firstv);
		if (g->o->verbose)
			fprintf(g->o->out, "  Core-to-thread mapping: %zu cores (inferred via voting)\n",
				cnt);
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct sl_task *r = &g->t[i];
		if (r->dispatch_us < 0)
			continue;
		int64_t thr = g->core_sched[g->row_core[i]];
		if (thr < 0)
			continue;
		int64_t st = sched_tid(thr);
		flow_s(g, "dispatch", 2, st, r->dispatch_us, -1);
		flow_f(g, "dispatch", 4, core_tid(r->core_id), r->start_us, -1);
		g->flow_id++;
		flow_s(g, "dispatch", 2, st, r->dispatch_us, -1);
		flow_f(g, "dispatch", 3, g->sv_tid[i], r->dispatch_us, g->sv_bind[i]);
		g->flow_id++;
	}
	return 0;
}

struct oanchor {
	uint64_t task_id;
	size_t seq;
	int64_t lane;
	double end;
};

static int cmp_oanchor(const void *a, const void *b)
{
	const struct oanchor *x = a, *y = b;
	if (x->task_id != y->task_id)
		return (x->task_id > y->task_id) - (x->task_id < y->task_id);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int flows_submit(struct gen *g)
{
	const struct sl_perf_data *pd = g->pd;
	size_t tot = 0;
	for (size_t j = 0; j < pd->n_orch; j++)
		tot += pd->orch[j].n;
	struct oanchor *a = tp_malloc_huge((tot + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	size_t m = 0;
	for (size_t j = 0; j < pd->n_orch; j++)
		for (size_t i = 0; i < pd->orch[j].n; i++) {
			const struct sl_orch *o = &pd->orch[j].v[i];
			if (!o->has_task_id)
				continue;
			a[m] = (struct oanchor){o->task_id, m, (int64_t)j, o->end_us};
			m++;
		}
	qsort(a, m, sizeof(*a), cmp_oanchor);
	size_t u = 0;
	for (size_t i = 0; i < m; i++)
		if (u == 0 || a[u - 1].task_id != a[i].task_id)
			a[u++] = a[i];
	if (g->has_aicpu && u) {
		for (size_t i = 0; i < g->n; i++) {
			const struct sl_task *r = &g->t[i];
			if (r->dispatch_us < 0)
				continue;
			int64_t thr = g->core_sched[g->row_core[i]];
			if (thr < 0)
				continue;
			struct oanchor key = {.task_id = r->task_id};
			size_t lo = 0, hi = u;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (a[mid].task_id < key.task_id)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo >= u || a[lo].task_id != r->task_id)
				continue;
			flow_s(g, "submit\xe2\x86\x92" "dispatch", 1, 4000 + a[lo].lane, a[lo].end, -1);
			flow_f(g, "submit\xe2\x86\x92" "dispatch", 2, sched_tid(thr), r->dispatch_us, -1);
			g->flow_id++;
		}
	}
	free(a);
	return 0;
}

/* ------------------------------------------------------------------ */
/* §4.6.13 overhead counters (the §6.2 Part 1 sweep)                    */
/* ------------------------------------------------------------------ */

static int emit_overhead(struct gen *g)
{
	if (!g->has_edges || !g->dp->n_edges || !g->n)
		return 0;
	struct sl_oh_graph og;
	struct sl_oh_sweep sw;
	memset(&og, 0, sizeof(og));
	memset(&sw, 0, sizeof(sw));
	int rc = sl_oh_graph_build(g->t, g->n, g->dp->pred, g->dp->succ, g->dp->n_edges, &og);
	if (!rc)
		rc = sl_oh_sweep_compute(&og, g->t, g->n, &sw);
	struct jw *w = &g->w;
	/* One sample per series at the first time point, then on change; the
	 * last time point only closes the sweep (§4.6.13). */
	for (size_t i = 0; !rc && i + 1 < sw.n_times; i++) {
		double ts = round3(sw.times[i]);
		for (int s = 0; s < SL_OH_N_SERIES; s++) {
			if (!sl_oh_series_present(&sw, (enum sl_oh_series)s))
				continue;
			int64_t v = sl_oh_value(&sw, (enum sl_oh_series)s, i);
			if (i > 0 && v == sl_oh_value(&sw, (enum sl_oh_series)s, i - 1))
				continue;
			const char *name = sl_oh_series_name((enum sl_oh_series)s);
			jw_obj_begin(w);
			jw_key(w, "ph");
			jw_str(w, "C");
			jw_key(w, "cat");
			jw_str(w, "overhead");
			jw_key(w, "name");
			jw_str(w, name);
			jw_key(w, "pid");
			jw_i64(w, 2);
			jw_key(w, "tid");
			jw_i64(w, sl_oh_series_tid((enum sl_oh_series)s));
			jw_key(w, "ts");
			jw_double(w, ts);
			jw_key(w, "args");
			jw_obj_begin(w);
			jw_key(w, name);
			jw_i64(w, v);
			jw_obj_end(w);
			jw_obj_end(w);
			g->n_overhead_pts++;
		}
	}
	sl_oh_sweep_free(&sw);
	sl_oh_graph_free(&og);
	return rc;
}

/* ------------------------------------------------------------------ */
/* driver                                                               */
/* ------------------------------------------------------------------ */

static void gen_free(struct gen *g)
{
	free(g->chunk_mid);
	free(g->lbl);
	free(g->g_start);
	free(g->g_count);
	free(g->g_tid);
	free(g->g_spmd);
	free(g->row_group);
	u64map_free(&g->grp_map);
	free(g->cores);
	free(g->row_core);
	free(g->wv_id);
	free(g->wv_bind);
	free(g->sv_id);
	free(g->sv_bind);
	free(g->sv_tid);
	free(g->wva_off);
	free(g->wva);
	free(g->sva_off);
	free(g->sva);
	free(g->p_key);
	free(g->p_off);
	free(g->p_succ);
	u64map_free(&g->p_map);
	free(g->s_off);
	free(g->s_pred);
	u64map_free(&g->s_map);
	free(g->anc);
	for (size_t i = 0; i < g->n_thr; i++) {
		struct thr *t = &g->thr[i];
		free(t->comp);
		free(t->comp_start);
		free(t->comp_end);
		free(t->comp_finishes);
		free(t->rec_slot);
		free(t->disp_start);
		free(t->disp_maxend);
	}
	free(g->thr);
	free(g->core_sched);
	free(g->sb.s);
	free(g->sb2.s);
}

/* §4.3: S = 1 + max of core_to_thread values ≥ 0 and indices of non-empty
 * sched threads (else the sched array length); O = orch lanes. */
static void aicpu_lanes(struct gen *g)
{
	const struct sl_perf_data *pd = g->pd;
	int64_t mx = -1;
	/* values above SL_C2T_MAX never reach here from the reader; the bound
	 * is kept so that the lane count can never be driven by one number */
	for (size_t i = 0; i < pd->n_core_to_thread; i++)
		if (pd->core_to_thread[i] > mx && pd->core_to_thread[i] <= SL_C2T_MAX)
			mx = pd->core_to_thread[i];
	if (pd->has_sched)
		for (size_t i = 0; i < pd->n_sched; i++)
			if (pd->sched[i].n && (int64_t)i > mx)
				mx = (int64_t)i;
	g->S = mx >= 0 ? mx + 1 : (pd->has_sched ? (int64_t)pd->n_sched : 0);
	g->O = pd->has_orch ? (int64_t)pd->n_orch : 0;
}

/* build_deps() and build_threads(), for a thread of generate()'s: about
 * 0.6 s of the 1M-task run's 1.6 s of preparation, which took 1 s off its
 * median (docs/converter-performance.md). */
struct prep_job {
	struct gen *g;
	int rc;
};

/* The thread's stack: the two builders' frames and qsort's (its temporary
 * array is malloc'd), glibc's static TLS block (47 KiB, base/error.c). */
#define PREP_THREAD_STACK (256u << 10)

static void *prep_main(void *arg)
{
	struct prep_job *j = arg;
	j->rc = build_deps(j->g);
	if (!j->rc)
		j->rc = build_threads(j->g);
	return NULL;
}

static int generate(struct gen *g)
{
	int rc;
	struct sl_perf_data *pd = g->pd;
	const struct sl_trace_opts *o = g->o;
	g->t = pd->tasks;
	g->n = pd->n_tasks;
	g->has_kmap = g->dp && g->dp->n_tasks > 0;
	g->has_bmap = g->dp && g->dp->n_block_tasks > 0;

	if (o->verbose) {
		fprintf(o->out, "Generating Chrome Trace JSON...\n");
		fprintf(o->out, "  Tasks: %zu\n", g->n);
		if (g->nm && g->nm->n)
			fprintf(o->out, "  Function names: %zu entries\n", g->nm->n);
	}
	/* The deps.json index and the per-thread phase lists on a thread of
	 * their own, while this one groups the rows (disjoint fields of
	 * *g; both only read pd and dp). */
	struct prep_job pj = { .g = g };
	pthread_t prep_th;
	bool prep_async = tp_thread_start(&prep_th, "tp-swl-prep", PREP_THREAD_STACK,
					  prep_main, &pj) == 0;
	if (!prep_async)
		prep_main(&pj);
	resolve_func_ids(g);
	rc = build_groups(g);
	if (!rc && o->verbose)
		fprintf(o->out, "  Unique cores: %zu\n", g->nc);
	if (!rc)
		rc = build_view_anchors(g, false, &g->wva_off, &g->wva);
	if (!rc)
		rc = build_view_anchors(g, true, &g->sva_off, &g->sva);
	/* pthread_join orders the thread's writes to *g before what follows */
	if (prep_async)
		pthread_join(prep_th, NULL);
	if (!rc)
		rc = pj.rc;
	if (rc)
		return rc;
	aicpu_lanes(g);
	for (size_t i = 0; i < g->n; i++)
		if (row_sv_valid(&g->t[i]))
			g->has_aicpu = true;

	size_t n = g->n;
	g->wv_id = tp_malloc_huge((n + 1) * sizeof(int64_t));
	g->wv_bind = tp_malloc_huge((n + 1) * sizeof(int64_t));
	g->sv_id = tp_malloc_huge((n + 1) * sizeof(int64_t));
	g->sv_bind = tp_malloc_huge((n + 1) * sizeof(int64_t));
	g->sv_tid = tp_malloc_huge((n + 1) * sizeof(int64_t));
	if (!g->wv_id || !g->wv_bind || !g->sv_id || !g->sv_bind || !g->sv_tid)
		return -ENOMEM;
	int64_t *lane_tids = NULL;
	size_t n_lane_tids = 0, *first_row = NULL;
	if ((rc = assign_sv_lanes(g, &lane_tids, &n_lane_tids, &first_row)))
		return rc;

	jw_obj_begin(&g->w);
	jw_key(&g->w, "traceEvents");
	jw_arr_begin(&g->w);
	rc = emit_worker_view(g);
	if (!rc && g->has_aicpu)
		rc = emit_sched_view(g, lane_tids, n_lane_tids, first_row);
	free(lane_tids);
	free(first_row);
	if (!rc && g->n_thr)
		rc = emit_sched_phases(g);
	if (!rc && pd->has_orch && pd->n_orch)
		rc = emit_orch(g);
	if (!rc && g->n_anc)
		qsort(g->anc, g->n_anc, sizeof(*g->anc), cmp_anchor);
	if (!rc)
		flowq_start(g);
	if (!rc)
		rc = flows_wv(g);
	if (!rc && g->has_edges)
		rc = warn_unanchored(g);
	if (!rc && g->has_aicpu)
		flows_sv(g);
	if (!rc)
		rc = flows_complete(g);
	if (!rc && g->n_thr && g->has_aicpu)
		rc = flows_dispatch(g);
	if (!rc && g->n_thr && pd->has_orch && pd->n_orch && g->have_c2s)
		rc = flows_submit(g);
	flowq_stop(g);
	if (rc)
		return rc;
	if (o->verbose) {
		fprintf(o->out, "  Total events: %llu\n", (unsigned long long)g->n_events);
		fprintf(o->out, "  Flow events: %lld\n", (long long)g->flow_id);
	}
	if (o->overhead) {
		if ((rc = emit_overhead(g)))
			return rc;
		if (o->verbose)
			fprintf(o->out, "  Overhead Analysis: %llu counter points (8 tracks)\n",
				(unsigned long long)g->n_overhead_pts);
	}
	jw_arr_end(&g->w);
	jw_obj_end(&g->w);
	if (!o->pretty)
		jw_raw(&g->w, "\n", 1);
	return 0;
}

int sl_trace_generate(struct sl_perf_data *pd, const struct sl_deps *deps,
		      const struct sl_name_map *names, const struct sl_trace_opts *o,
		      struct sl_trace_result *res)
{
	struct gen g;
	memset(&g, 0, sizeof(g));
	g.pd = pd;
	g.dp = deps;
	g.nm = names;
	g.o = o;
	g.lbl_cap = 4096;
	for (size_t i = 0; names && i < names->n; i++) {
		size_t l = strlen(names->name[i]);
		if (l + 256 > g.lbl_cap)
			g.lbl_cap = l + 256;
	}
	g.lbl = tp_malloc_huge(g.lbl_cap);
	if (!g.lbl)
		return tp_set_error(-ENOMEM, "out of memory while converting to %s",
				    o->output_path);

	struct tp_file_tx tx;
	int rc = tp_file_tx_begin(&tx, o->output_path, NULL);
	if (rc) {
		free(g.lbl);
		return rc;
	}
	rc = jw_init(&g.w, tx.fp, o->pretty ? JW_PRETTY : JW_COMPACT, true);
	if (!rc) {
		/* GBs written once: skip the page-cache copy (json_writer.h) */
		jw_set_direct(&g.w);
		rc = generate(&g);
		flowq_stop(&g); /* no-op: generate() stopped it on every path */
	}
	int wrc = jw_fini(&g.w);
	if (rc == -ENOMEM)
		tp_set_error(rc, "out of memory while converting to %s", o->output_path);
	if (!rc && wrc)
		rc = tp_set_error(wrc, "%s: write failed: %s", o->output_path, strerror(-wrc));
	if (rc) {
		tp_file_tx_abort(&tx, false);
	} else {
		rc = tp_file_tx_commit(&tx);
	}
	if (!rc && o->verbose)
		fprintf(o->out, "JSON written to: %s\n", tp_shown(o->output_path));
	if (res) {
		res->n_events = g.n_events;
		res->n_flows = (uint64_t)g.flow_id;
		res->n_overhead = g.n_overhead_pts;
		res->n_flows_queued = g.n_flows_queued;
	}
	gen_free(&g);
	return rc;
}
