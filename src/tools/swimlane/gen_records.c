/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/gen_records.c — generated level-4 swimlane captures
 * (records, deps.json, name map) for benches and tests; see gen_records.h.
 *
 * How: the items (kernel / dummy / predicated / alloc tasks) are created in
 * submit order and scheduled at once on a simulated machine — one
 * orchestrator cursor, 72 cores that each run one row at a time, a
 * scheduler thread per core group (core_to_thread). That gives every
 * timestamp; the scheduler phase records are then sorted per thread by
 * start time (the writer's files are chronological per thread) and the
 * three files are streamed out through one buffer each.
 */
#include "tools/swimlane/gen_records.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/file.h"

#define GEN_CORES 72
#define GEN_AIC 24
#define GEN_NKERNELS 8
#define GEN_WB_CAP (1u << 20)
#define GEN_T0 1000000u /* first orch submit, in 50 MHz ticks */
#define GEN_MERGE_GAP 40u /* issue shape: one scheduler loop pass, ticks */

enum gen_kind { GK_AIC, GK_AIV, GK_MIX, GK_SPMD, GK_DUMMY, GK_PRED, GK_ALLOC };
enum gen_src { GS_TENSORMAP, GS_CREATOR, GS_EXPLICIT };

/* The phase kinds the generator writes (spec §1.6 strings). */
enum gen_phase {
	GP_DISPATCH, GP_COMPLETE, GP_RESOLVE, GP_RELEASE, GP_DUMMY,
	GP_DUMMY_TASK, GP_PRED_SKIP, GP_EARLY,
};
static const char *const gen_phase_str[] = {
	"dispatch", "complete", "resolve", "release", "dummy",
	"dummy_task", "predicated_skip", "early_dispatch",
};

static const char *const gen_dtype_str[] = {
	"FLOAT16", "FLOAT32", "BFLOAT16", "INT32", "INT8",
};
static const unsigned gen_dtype_size[] = { 2, 4, 2, 4, 1 };

static const char *const gen_kernel_names[GEN_NKERNELS] = {
	"QK", "SF", "PV", "UP", "MM", "ADD", "RMS", "ROPE",
};

/* One submitted item, in submit order. */
struct gen_item {
	uint64_t id;            /* raw task id */
	uint64_t orch_s, orch_e;
	uint64_t done;          /* consumers may be dispatched after this */
	uint32_t pred[3];       /* item indices */
	uint32_t row0;          /* first row in rows[] */
	uint8_t kind, nrows, npred;
	uint8_t src[3];         /* enum gen_src per pred */
	uint8_t other;          /* bit p: pred p's overlap is "other" */
	uint8_t dup;            /* first tensor edge written twice */
	uint8_t early;          /* early_dispatch flag */
	uint8_t out_existing;   /* last arg OUTPUT_EXISTING, else OUTPUT */
	uint8_t dtype;
	int8_t k[3];
	uint8_t block_num;
};

struct gen_row {
	uint64_t disp, start, end, fin;
	uint32_t item;
	uint32_t reg;
	uint16_t r2s;
	uint8_t core;
};

struct gen_ph {
	uint64_t s, e, task_id;
	uint32_t tasks;
	uint8_t kind, th, pop_hit, pop_miss;
	int8_t ss[3], se[3];
};

struct gen {
	uint64_t rng;
	unsigned pred_extra;    /* preds per task: 1 + u(pred_extra) */
	unsigned spmd_span;     /* SPMD block_num: 2 + u(spmd_span) */
	unsigned spmd_end, mix_end; /* per-mille rolls: SPMD [15, spmd_end),
				     * MIX [spmd_end, mix_end) */
	bool light_preds;       /* issue shape: 0 preds 4 times in 10, a
				 * 2nd pred 1 time in 4 */
	bool merge_phases;      /* issue shape: see gen_merge_phases() */
	uint64_t sc;            /* cycles per 50 MHz tick (1 or 20) */
	int nthreads, nsched;
	int8_t c2t[GEN_CORES];
	uint64_t core_free[GEN_CORES];
	uint32_t core_reg[GEN_CORES];
	struct gen_item *it;
	size_t nit, capit;
	struct gen_row *rows;
	size_t nrows, caprows;
	struct gen_ph *ph;
	size_t nph, capph;
	struct sl_gen_stats st;
};

/* xorshift64*: fast, and the files only need to look varied. */
static uint64_t gen_next(struct gen *g)
{
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [lo, hi] (ticks scaled to the platform's clock). */
static uint64_t gen_r(struct gen *g, uint64_t lo, uint64_t hi)
{
	return (lo + gen_next(g) % (hi - lo + 1)) * g->sc;
}

static unsigned gen_u(struct gen *g, unsigned n)
{
	return (unsigned)(gen_next(g) % n);
}

static int gen_grow(void **v, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 1024;
	while (nc < need)
		nc *= 2;
	void *p = realloc(*v, nc * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = nc;
	return 0;
}

static struct gen_ph *gen_add_ph(struct gen *g, int kind, int th, uint64_t s,
				 uint64_t e, uint32_t tasks)
{
	if (gen_grow((void **)&g->ph, &g->capph, g->nph + 1, sizeof(*g->ph)))
		return NULL;
	struct gen_ph *p = &g->ph[g->nph++];
	memset(p, 0, sizeof(*p));
	p->kind = (uint8_t)kind;
	p->th = (uint8_t)th;
	p->s = s;
	p->e = e;
	p->tasks = tasks;
	for (int i = 0; i < 3; i++)
		p->ss[i] = (int8_t)gen_u(g, 4);
	if (kind == GP_DISPATCH) {
		p->pop_hit = (uint8_t)(tasks > 255 ? 255 : tasks);
		p->pop_miss = (uint8_t)gen_u(g, 3);
		p->ss[gen_u(g, 3)] += 1; /* the popped entry was queued */
	}
	return p;
}

/* The core of @type (AIC: 0..23, AIV: 24..71) that frees up first. */
static int gen_pick_core(const struct gen *g, bool aic)
{
	int lo = aic ? 0 : GEN_AIC, hi = aic ? GEN_AIC : GEN_CORES, best = lo;
	for (int c = lo + 1; c < hi; c++)
		if (g->core_free[c] < g->core_free[best])
			best = c;
	return best;
}

static int gen_add_row(struct gen *g, uint32_t item, bool aic, uint64_t ready)
{
	if (gen_grow((void **)&g->rows, &g->caprows, g->nrows + 1, sizeof(*g->rows)))
		return -ENOMEM;
	int c = gen_pick_core(g, aic);
	struct gen_row *r = &g->rows[g->nrows++];
	uint64_t t = ready > g->core_free[c] ? ready : g->core_free[c];
	r->item = item;
	r->core = (uint8_t)c;
	r->reg = ++g->core_reg[c];
	r->disp = t + gen_r(g, 2, 8);
	uint64_t recv = r->disp + gen_r(g, 4, 12);
	r->r2s = (uint16_t)gen_r(g, 3, 12);
	r->start = recv + r->r2s;
	r->end = r->start + gen_r(g, 100, 600);
	r->fin = r->end + gen_r(g, 8, 25);
	g->core_free[c] = r->fin + gen_r(g, 1, 4);
	return 0;
}

/* Kind, kernels, preds and flags of item @i (times come later). */
static void gen_shape_item(struct gen *g, uint32_t i, uint32_t last_alloc,
			   bool have_alloc)
{
	struct gen_item *x = &g->it[i];
	unsigned roll = gen_u(g, 1000);
	x->k[0] = x->k[1] = x->k[2] = -1;
	x->block_num = 1;
	if (roll < 10) {
		x->kind = GK_DUMMY;
	} else if (roll < 15) {
		x->kind = GK_PRED;
		x->k[1] = (int8_t)(1 + 2 * gen_u(g, 4));
	} else if (roll < g->spmd_end) {
		x->kind = GK_SPMD;
		x->block_num = (uint8_t)(2 + gen_u(g, g->spmd_span));
		x->k[1] = (int8_t)(1 + 2 * gen_u(g, 4));
		if (gen_u(g, 2))
			x->k[2] = x->k[1];
	} else if (roll < g->mix_end) {
		x->kind = GK_MIX;
		x->k[0] = (int8_t)(2 * gen_u(g, 4));
		x->k[1] = (int8_t)(1 + 2 * gen_u(g, 4));
		if (gen_u(g, 2))
			x->k[2] = (int8_t)(1 + 2 * gen_u(g, 4));
	} else if (roll < 500) {
		x->kind = GK_AIC;
		x->k[0] = (int8_t)(2 * gen_u(g, 4));
	} else {
		x->kind = GK_AIV;
		x->k[1] = (int8_t)(1 + 2 * gen_u(g, 4));
	}
	x->dtype = (uint8_t)gen_u(g, 5);
	x->out_existing = gen_u(g, 4) == 0;

	/* ~2 preds on average, mostly recent (a chain-like graph), the first
	 * consumer after an alloc_tensors takes the alloc as a creator pred. */
	unsigned want = i == 0 ? 0 : 1 + gen_u(g, g->pred_extra);
	if (g->light_preds && want > 1 && gen_u(g, 2))
		want = 1;
	if (g->light_preds && gen_u(g, 10) < 4)
		want = 0; /* an independent task (loads, first layers) */
	x->npred = 0;
	if (have_alloc && last_alloc + 1 == i)
		x->pred[x->npred++] = last_alloc;
	for (unsigned tries = 0; x->npred < want && tries < 8; tries++) {
		uint32_t win = gen_u(g, 10) < 7 ? 8 : 64;
		if (win > i)
			win = i;
		uint32_t j = i - 1 - gen_u(g, win);
		bool seen = false;
		for (unsigned p = 0; p < x->npred; p++)
			seen |= x->pred[p] == j;
		if (!seen)
			x->pred[x->npred++] = j;
	}
	for (unsigned p = 0; p < x->npred; p++) {
		const struct gen_item *pr = &g->it[x->pred[p]];
		if (pr->kind == GK_ALLOC)
			x->src[p] = GS_CREATOR;
		else if (pr->kind == GK_DUMMY || x->kind == GK_DUMMY ||
			 gen_u(g, 10) == 0)
			x->src[p] = GS_EXPLICIT;
		else
			x->src[p] = GS_TENSORMAP;
		if (gen_u(g, 100) < 15)
			x->other |= (uint8_t)(1u << p);
	}
	x->dup = x->npred > 0 && x->src[0] != GS_EXPLICIT && gen_u(g, 50) == 0;
	x->early = x->kind != GK_DUMMY && x->kind != GK_PRED && x->npred > 0 &&
		   gen_u(g, 256) == 0;
}

/* Times and phase records of item @i; orchestration already placed. */
static int gen_schedule_item(struct gen *g, uint32_t i)
{
	struct gen_item *x = &g->it[i];
	uint64_t ready = x->orch_e;
	for (unsigned p = x->early ? 1 : 0; p < x->npred; p++)
		if (g->it[x->pred[p]].done > ready)
			ready = g->it[x->pred[p]].done;
	ready += gen_r(g, 2, 6);

	if (x->kind == GK_ALLOC) {
		x->done = x->orch_e;
		return 0;
	}
	if (x->kind == GK_DUMMY || x->kind == GK_PRED) {
		int th = (int)gen_u(g, (unsigned)g->nsched);
		uint64_t t = ready + gen_r(g, 3, 10);
		if (x->kind == GK_PRED) {
			struct gen_ph *p = gen_add_ph(g, GP_PRED_SKIP, th, t, t, 1);
			if (!p)
				return -ENOMEM;
			p->task_id = x->id;
			x->done = t + g->sc;
			return 0;
		}
		uint64_t e = t + gen_r(g, 8, 16);
		struct gen_ph *p = gen_add_ph(g, GP_DUMMY, th, t - 2 * g->sc, e, 1);
		if (!p || !(p = gen_add_ph(g, GP_DUMMY_TASK, th, t, t, 1)))
			return -ENOMEM;
		p->task_id = x->id;
		if (!gen_add_ph(g, GP_RESOLVE, th, t + 3 * g->sc, t + 6 * g->sc,
				x->npred ? x->npred : 1))
			return -ENOMEM;
		x->done = e;
		return 0;
	}

	x->row0 = (uint32_t)g->nrows;
	int rc = 0;
	switch (x->kind) {
	case GK_AIC:
		rc = gen_add_row(g, i, true, ready);
		break;
	case GK_AIV:
		rc = gen_add_row(g, i, false, ready);
		break;
	case GK_MIX:
		rc = gen_add_row(g, i, true, ready);
		for (int s = 1; s < 3 && !rc; s++)
			if (x->k[s] >= 0)
				rc = gen_add_row(g, i, false, ready);
		break;
	default: /* GK_SPMD: one row per block, all AIV */
		for (unsigned b = 0; b < x->block_num && !rc; b++)
			rc = gen_add_row(g, i, false, ready);
		break;
	}
	if (rc)
		return rc;
	x->nrows = (uint8_t)(g->nrows - x->row0);

	/* One dispatch record per scheduler thread that owns one of the
	 * rows' cores, spanning those rows' dispatch times. */
	const struct gen_row *rw = &g->rows[x->row0];
	for (int th = 0; th < g->nsched; th++) {
		uint64_t lo = UINT64_MAX, hi = 0;
		uint32_t n = 0;
		for (unsigned r = 0; r < x->nrows; r++) {
			if (g->c2t[rw[r].core] != th)
				continue;
			n++;
			lo = rw[r].disp < lo ? rw[r].disp : lo;
			hi = rw[r].disp > hi ? rw[r].disp : hi;
		}
		if (!n)
			continue;
		if (x->early && !gen_add_ph(g, GP_EARLY, th, lo - 8 * g->sc,
					    lo - 3 * g->sc, n))
			return -ENOMEM;
		if (!gen_add_ph(g, GP_DISPATCH, th, lo - 2 * g->sc,
				hi + 3 * g->sc, n))
			return -ENOMEM;
	}

	/* The complete phase that saw the last FIN (first on a tie). */
	unsigned last = 0;
	for (unsigned r = 1; r < x->nrows; r++)
		if (rw[r].fin > rw[last].fin)
			last = r;
	int th = g->c2t[rw[last].core];
	uint64_t cs = rw[last].fin - gen_r(g, 1, 4);
	uint64_t ce = rw[last].fin + gen_r(g, 6, 20);
	if (!gen_add_ph(g, GP_COMPLETE, th, cs, ce, x->nrows))
		return -ENOMEM;
	if (gen_u(g, 4) == 0 &&
	    !gen_add_ph(g, GP_RESOLVE, th, cs + 2 * g->sc, ce - 2 * g->sc, 2))
		return -ENOMEM;
	if (i % 64 == 63 &&
	    !gen_add_ph(g, GP_RELEASE, th, ce + g->sc, ce + gen_r(g, 4, 10),
			1 + gen_u(g, 8)))
		return -ENOMEM;
	x->done = ce;
	return 0;
}

static int gen_build(struct gen *g, uint64_t ntasks)
{
	size_t cap = (size_t)ntasks + (size_t)ntasks / 100 + 64;
	g->it = calloc(cap, sizeof(*g->it));
	if (!g->it)
		return -ENOMEM;
	g->capit = cap;

	uint64_t orch = (uint64_t)GEN_T0 * g->sc;
	uint32_t last_alloc = 0;
	bool have_alloc = false;
	uint64_t ntask_items = 0;
	while (ntask_items < ntasks) {
		uint32_t i = (uint32_t)g->nit;
		struct gen_item *x = &g->it[i];
		/* Tasks in every 4th block of 4096 ids come from a manual scope
		 * on ring 1; the local id stays unique across rings. */
		uint64_t ring = ((i >> 12) & 3) == 3 ? 1 : 0;
		x->id = (ring << 32) | i;
		if (i > 0 && g->nit + 1 < g->capit && gen_u(g, 200) == 0) {
			x->kind = GK_ALLOC;
			x->k[0] = x->k[1] = x->k[2] = -1;
			x->dtype = (uint8_t)gen_u(g, 5);
			last_alloc = i;
			have_alloc = true;
			g->st.n_alloc++;
		} else {
			gen_shape_item(g, i, last_alloc, have_alloc);
			ntask_items++;
			g->st.n_dummy += x->kind == GK_DUMMY;
			g->st.n_predicated += x->kind == GK_PRED;
			g->st.n_spmd += x->kind == GK_SPMD;
			g->st.n_mix += x->kind == GK_MIX;
		}
		x->orch_s = orch;
		orch += x->kind == GK_ALLOC ? gen_r(g, 15, 30) : gen_r(g, 30, 70);
		x->orch_e = orch;
		g->nit++;
		int rc = gen_schedule_item(g, i);
		if (rc)
			return rc;
	}
	g->st.n_tasks = ntask_items;
	g->st.n_orch = g->nit;
	g->st.n_rows = g->nrows;
	return 0;
}

/* Per thread, by start; an outer phase before the inner ones it holds. */
static int gen_ph_cmp(const void *a, const void *b)
{
	const struct gen_ph *x = a, *y = b;
	if (x->th != y->th)
		return x->th < y->th ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->e != y->e)
		return x->e > y->e ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

/* Issue shape: a scheduler loop iteration handles every task whose
 * dispatch (or completion) it reaches, so a dispatch / complete record
 * that starts less than GEN_MERGE_GAP ticks after the previous one of its
 * kind on the same thread ended is folded into it (start kept, end and
 * tasks_processed merged; the merged record still contains every row it
 * holds).
 * Inner records (resolve, dummy_task) between them do not break the run;
 * any other kind does. Runs on the sorted records; keeps the order. */
static void gen_merge_phases(struct gen *g)
{
	size_t out = 0, last = SIZE_MAX;
	for (size_t k = 0; k < g->nph; k++) {
		struct gen_ph *p = &g->ph[k];
		if (out && g->ph[out - 1].th != p->th)
			last = SIZE_MAX;
		if (p->kind == GP_DISPATCH || p->kind == GP_COMPLETE) {
			struct gen_ph *l = last != SIZE_MAX ? &g->ph[last] : NULL;
			if (l && l->kind == p->kind && p->s <= l->e + GEN_MERGE_GAP * g->sc) {
				if (p->e > l->e)
					l->e = p->e;
				l->tasks += p->tasks;
				if (l->kind == GP_DISPATCH)
					l->pop_hit = (uint8_t)(l->tasks > 255 ? 255 : l->tasks);
				continue;
			}
			g->ph[out] = *p;
			last = out++;
			continue;
		}
		if (p->kind != GP_RESOLVE && p->kind != GP_DUMMY_TASK)
			last = SIZE_MAX;
		g->ph[out++] = *p;
	}
	g->nph = out;
}

/* ---- buffered writer ---- */

struct wb {
	struct tp_file_tx tx;
	char *b;
	size_t n;
	uint64_t total;
	int err;
};

static void wb_flush(struct wb *w)
{
	if (w->n && !w->err && fwrite(w->b, 1, w->n, w->tx.fp) != w->n)
		w->err = errno ? -errno : -EIO;
	w->total += w->n;
	w->n = 0;
}

static inline void wb_need(struct wb *w, size_t k)
{
	if (w->n + k > GEN_WB_CAP)
		wb_flush(w);
}

static void wb_s(struct wb *w, const char *s)
{
	size_t k = strlen(s);
	wb_need(w, k);
	memcpy(w->b + w->n, s, k);
	w->n += k;
}

static void wb_u(struct wb *w, uint64_t v)
{
	char t[24];
	int k = 0;
	do {
		t[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	wb_need(w, 24);
	while (k)
		w->b[w->n++] = t[--k];
}

static void wb_i(struct wb *w, int64_t v)
{
	if (v < 0) {
		wb_s(w, "-");
		wb_u(w, (uint64_t)0 - (uint64_t)v);
	} else {
		wb_u(w, (uint64_t)v);
	}
}

/* "<u64>" — deps.json writes every u64 as a JSON string (spec §3.1). */
static void wb_qu(struct wb *w, uint64_t v)
{
	wb_s(w, "\"");
	wb_u(w, v);
	wb_s(w, "\"");
}

static int wb_open(struct wb *w, const char *dir, const char *name)
{
	char path[4096];
	memset(w, 0, sizeof(*w));
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return tp_set_error(-ENAMETOOLONG, "%s/%s: path too long", dir, name);
	w->b = malloc(GEN_WB_CAP);
	if (!w->b)
		return tp_set_error(-ENOMEM, "%s: out of memory", path);
	int rc = tp_file_tx_begin(&w->tx, path, NULL);
	if (rc) {
		free(w->b);
		w->b = NULL;
		return tp_set_error(rc, "%s: cannot create: %s", path, strerror(-rc));
	}
	return 0;
}

static int wb_close(struct wb *w, uint64_t *bytes)
{
	wb_flush(w);
	free(w->b);
	w->b = NULL;
	if (w->err) {
		int err = w->err;
		char *p = w->tx.path ? strdup(w->tx.path) : NULL;
		tp_file_tx_abort(&w->tx, false);
		tp_set_error(err, "%s: write failed: %s", p ? p : "?", strerror(-err));
		free(p);
		return err;
	}
	char *p = strdup(w->tx.path);
	int rc = tp_file_tx_commit(&w->tx);
	if (rc)
		tp_set_error(rc, "%s: cannot publish: %s", p ? p : "?", strerror(-rc));
	free(p);
	if (bytes)
		*bytes = w->total;
	return rc;
}

/* ---- l2_swimlane_records.json (spec §1.8) ---- */

static void gen_write_phase(struct wb *w, const struct gen_ph *p, uint64_t iter)
{
	wb_s(w, "\n      {\"kind\": \"");
	wb_s(w, gen_phase_str[p->kind]);
	wb_s(w, "\", \"start_cycles\": ");
	wb_u(w, p->s);
	wb_s(w, ", \"end_cycles\": ");
	wb_u(w, p->e);
	wb_s(w, ", \"loop_iter\": ");
	wb_u(w, iter);
	wb_s(w, ", \"tasks_processed\": ");
	wb_u(w, p->tasks);
	if (p->kind == GP_DISPATCH) {
		wb_s(w, ", \"pop_hit\": ");
		wb_u(w, p->pop_hit);
		wb_s(w, ", \"pop_miss\": ");
		wb_u(w, p->pop_miss);
	}
	if (p->kind == GP_DUMMY_TASK || p->kind == GP_PRED_SKIP) {
		wb_s(w, ", \"task_id\": ");
		wb_u(w, p->task_id);
	}
	/* shared_at_end: what the phase left queued (dispatch pops). */
	int8_t se[3];
	uint32_t left = p->kind == GP_DISPATCH ? p->tasks : 0;
	for (int k = 0; k < 3; k++) {
		uint32_t take = left < (uint32_t)p->ss[k] ? left : (uint32_t)p->ss[k];
		se[k] = (int8_t)(p->ss[k] - (int8_t)take);
		left -= take;
	}
	wb_s(w, ", \"shared_at_start\": [");
	for (int k = 0; k < 3; k++) {
		if (k)
			wb_s(w, ",");
		wb_i(w, p->ss[k]);
	}
	wb_s(w, "], \"shared_at_end\": [");
	for (int k = 0; k < 3; k++) {
		if (k)
			wb_s(w, ",");
		wb_i(w, se[k]);
	}
	wb_s(w, "]}");
}

static int gen_write_records(struct gen *g, const char *dir)
{
	struct wb w;
	int rc = wb_open(&w, dir, "l2_swimlane_records.json");
	if (rc)
		return rc;
	wb_s(&w, "{\n  \"l2_swimlane_level\": 4,\n  \"metadata\": {\n    \"clock_freq_hz\": ");
	wb_u(&w, g->st.clock_freq_hz);
	wb_s(&w, ",\n    \"num_cores\": ");
	wb_u(&w, GEN_CORES);
	wb_s(&w, ",\n    \"core_types\": [");
	for (int c = 0; c < GEN_CORES; c++)
		wb_s(&w, c == 0 ? "\"aic\"" : c < GEN_AIC ? ", \"aic\"" : ", \"aiv\"");
	wb_s(&w, "],\n    \"core_to_thread\": [");
	for (int c = 0; c < GEN_CORES; c++) {
		if (c)
			wb_s(&w, ", ");
		wb_i(&w, g->c2t[c]);
	}
	wb_s(&w, "]\n  },\n");

	/* Rows grouped by core ascending, each core's rows in time order
	 * (their creation order): a counting sort by core. */
	size_t start[GEN_CORES + 1] = { 0 };
	for (size_t r = 0; r < g->nrows; r++)
		start[g->rows[r].core + 1]++;
	for (int c = 0; c < GEN_CORES; c++)
		start[c + 1] += start[c];
	uint32_t *order = malloc((g->nrows ? g->nrows : 1) * sizeof(*order));
	if (!order) {
		tp_file_tx_abort(&w.tx, false);
		free(w.b);
		return tp_set_error(-ENOMEM, "generator: out of memory");
	}
	size_t pos[GEN_CORES];
	memcpy(pos, start, sizeof(pos));
	for (size_t r = 0; r < g->nrows; r++)
		order[pos[g->rows[r].core]++] = (uint32_t)r;

	wb_s(&w, "  \"aicore_tasks\": [");
	for (size_t k = 0; k < g->nrows; k++) {
		const struct gen_row *r = &g->rows[order[k]];
		wb_s(&w, k ? ",\n    [" : "\n    [");
		wb_u(&w, r->core);
		wb_s(&w, ", ");
		wb_u(&w, g->it[r->item].id);
		wb_s(&w, ", ");
		wb_u(&w, r->reg);
		wb_s(&w, ", ");
		wb_u(&w, r->start);
		wb_s(&w, ", ");
		wb_u(&w, r->end);
		wb_s(&w, ", ");
		wb_u(&w, r->r2s);
		wb_s(&w, "]");
	}
	wb_s(&w, g->nrows ? "\n  ]" : "]");
	wb_s(&w, ",\n  \"aicpu_tasks\": [");
	for (size_t k = 0; k < g->nrows; k++) {
		const struct gen_row *r = &g->rows[order[k]];
		wb_s(&w, k ? ",\n    [" : "\n    [");
		wb_u(&w, r->core);
		wb_s(&w, ", ");
		wb_u(&w, r->reg);
		wb_s(&w, ", ");
		wb_u(&w, r->disp);
		wb_s(&w, ", ");
		wb_u(&w, r->fin);
		wb_s(&w, "]");
	}
	wb_s(&w, g->nrows ? "\n  ]" : "]");
	free(order);

	wb_s(&w, ",\n  \"aicpu_scheduler_phases\": [\n");
	size_t k = 0;
	for (int th = 0; th < g->nthreads; th++) {
		uint64_t iter = 0, n = 0;
		wb_s(&w, "    [");
		for (; k < g->nph && g->ph[k].th == th; k++, n++) {
			const struct gen_ph *p = &g->ph[k];
			/* resolve and dummy_task run inside the outer phase's
			 * loop iteration. */
			if (p->kind != GP_RESOLVE && p->kind != GP_DUMMY_TASK)
				iter++;
			if (n)
				wb_s(&w, ",");
			gen_write_phase(&w, p, iter);
		}
		g->st.n_sched[th] = n;
		g->st.n_sched_total += n;
		wb_s(&w, n ? "\n    ]" : "]");
		wb_s(&w, th + 1 < g->nthreads ? ",\n" : "\n");
	}
	wb_s(&w, "  ]");

	wb_s(&w, ",\n  \"aicpu_orchestrator_phases\": [\n    [");
	for (size_t i = 0; i < g->nit; i++) {
		const struct gen_item *x = &g->it[i];
		wb_s(&w, i ? ",\n      {\"submit_idx\": " : "\n      {\"submit_idx\": ");
		wb_u(&w, i);
		wb_s(&w, ", \"task_id\": ");
		wb_u(&w, x->id);
		wb_s(&w, ", \"start_cycles\": ");
		wb_u(&w, x->orch_s);
		wb_s(&w, ", \"end_cycles\": ");
		wb_u(&w, x->orch_e);
		wb_s(&w, "}");
	}
	wb_s(&w, g->nit ? "\n    ]\n  ]" : "]\n  ]");
	wb_s(&w, "\n}\n");
	return wb_close(&w, &g->st.records_bytes);
}

/* ---- deps.json (spec §3.1, compact) ---- */

/* FNV-1a 64 of the 8 little-endian bytes of @addr, then 4 of @version. */
static uint64_t gen_tensor_id(uint64_t addr, uint32_t version)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (int i = 0; i < 8; i++) {
		h ^= (addr >> (8 * i)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	for (int i = 0; i < 4; i++) {
		h ^= (version >> (8 * i)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Item @i's output tensor: a 64 KiB buffer, versions when the address
 * range wraps. */
static uint64_t gen_taddr(uint32_t i)
{
	return 0x6c8000000ULL + (uint64_t)(i & 0xffff) * 0x10000;
}

static uint32_t gen_tversion(uint32_t i)
{
	return i >> 16;
}

/* ,"tensor_id":..,"dtype":..,"shape":..,"start_offset":..,"strides":..
 * with an optional @prefix on the key names (edges: "consumer_"). */
static void gen_write_tinfo(struct wb *w, const char *prefix, uint32_t item,
			    uint8_t dtype, bool half, bool with_id, bool with_dtype)
{
	if (with_id) {
		wb_s(w, ",\"tensor_id\":");
		wb_qu(w, gen_tensor_id(gen_taddr(item), gen_tversion(item)));
	}
	if (with_dtype) {
		wb_s(w, ",\"");
		wb_s(w, prefix);
		wb_s(w, "dtype\":\"");
		wb_s(w, gen_dtype_str[dtype]);
		wb_s(w, "\"");
	}
	wb_s(w, ",\"");
	wb_s(w, prefix);
	wb_s(w, half ? "shape\":[32,128]" : "shape\":[64,128]");
	wb_s(w, ",\"");
	wb_s(w, prefix);
	wb_s(w, "start_offset\":");
	wb_qu(w, half ? 32 * 128 : 0);
	wb_s(w, ",\"");
	wb_s(w, prefix);
	wb_s(w, "strides\":[128,1]");
}

static void gen_write_arg(struct wb *w, unsigned idx, const char *type)
{
	wb_s(w, "{\"idx\":");
	wb_u(w, idx);
	wb_s(w, ",\"type\":\"");
	wb_s(w, type);
	wb_s(w, "\"");
}

static void gen_write_task(struct gen *g, struct wb *w, uint32_t i, bool first)
{
	const struct gen_item *x = &g->it[i];
	wb_s(w, first ? "{\"task_id\":" : ",{\"task_id\":");
	wb_qu(w, x->id);
	wb_s(w, x->id >> 32 ? ",\"scope\":\"manual\"" : ",\"scope\":\"auto\"");
	wb_s(w, x->early ? ",\"early_dispatch\":true" : ",\"early_dispatch\":false");
	wb_s(w, ",\"kernel_ids\":[");
	for (int s = 0; s < 3; s++) {
		if (s)
			wb_s(w, ",");
		wb_i(w, x->k[s]);
	}
	wb_s(w, "],\"block_num\":");
	wb_u(w, x->block_num);
	wb_s(w, ",\"args\":[");
	if (x->kind != GK_DUMMY) {
		/* One INPUT per tensor pred (the duplicated one twice), then
		 * the task's output. */
		unsigned a = 0;
		for (unsigned p = 0; p < x->npred; p++) {
			if (x->src[p] == GS_EXPLICIT)
				continue;
			for (unsigned rep = 0; rep < (p == 0 && x->dup ? 2u : 1u); rep++) {
				const struct gen_item *pr = &g->it[x->pred[p]];
				if (a)
					wb_s(w, ",");
				gen_write_arg(w, a++, "INPUT");
				gen_write_tinfo(w, "", x->pred[p], pr->dtype,
						(x->other >> p) & 1, true, true);
				wb_s(w, "}");
			}
		}
		if (a)
			wb_s(w, ",");
		if (x->out_existing) {
			gen_write_arg(w, a, "OUTPUT_EXISTING");
			gen_write_tinfo(w, "", i, x->dtype, false, true, true);
		} else {
			gen_write_arg(w, a, "OUTPUT");
		}
		wb_s(w, "}");
	}
	wb_s(w, "]}");
}

static void gen_write_edge(struct gen *g, struct wb *w, uint32_t i, unsigned p,
			   int arg, bool *first)
{
	const struct gen_item *x = &g->it[i];
	const struct gen_item *pr = &g->it[x->pred[p]];
	static const char *const src[] = { "tensormap", "creator", "explicit" };
	wb_s(w, *first ? "{\"pred\":" : ",{\"pred\":");
	*first = false;
	wb_qu(w, pr->id);
	wb_s(w, ",\"succ\":");
	wb_qu(w, x->id);
	wb_s(w, ",\"arg\":");
	wb_i(w, x->src[p] == GS_EXPLICIT ? -1 : arg);
	wb_s(w, ",\"source\":\"");
	wb_s(w, src[x->src[p]]);
	wb_s(w, "\"");
	bool half = (x->other >> p) & 1;
	if (x->src[p] == GS_TENSORMAP)
		wb_s(w, half ? ",\"overlap\":\"other\"" : ",\"overlap\":\"covered\"");
	if (x->src[p] != GS_EXPLICIT)
		gen_write_tinfo(w, "consumer_", x->pred[p], pr->dtype, half, true, true);
	if (x->src[p] == GS_TENSORMAP)
		gen_write_tinfo(w, "producer_", x->pred[p], pr->dtype, false,
				false, false);
	wb_s(w, "}");
	g->st.n_edges++;
}

static int gen_write_deps(struct gen *g, const char *dir)
{
	struct wb w;
	int rc = wb_open(&w, dir, "deps.json");
	if (rc)
		return rc;
	wb_s(&w, "{\"tasks\":[");
	bool first = true;
	for (uint32_t i = 0; i < g->nit; i++) {
		if (g->it[i].kind == GK_ALLOC)
			continue;
		gen_write_task(g, &w, i, first);
		first = false;
	}
	wb_s(&w, "],\"tensors\":[");
	first = true;
	for (uint32_t i = 0; i < g->nit; i++) {
		const struct gen_item *x = &g->it[i];
		if (x->kind == GK_DUMMY)
			continue;
		uint64_t addr = gen_taddr(i);
		uint32_t ver = gen_tversion(i);
		wb_s(&w, first ? "{\"tensor_id\":" : ",{\"tensor_id\":");
		first = false;
		wb_qu(&w, gen_tensor_id(addr, ver));
		wb_s(&w, ",\"buffer_addr\":");
		wb_qu(&w, addr);
		wb_s(&w, ",\"version\":");
		wb_u(&w, ver);
		wb_s(&w, ",\"dtype\":\"");
		wb_s(&w, gen_dtype_str[x->dtype]);
		wb_s(&w, "\",\"buffer_numel\":");
		wb_qu(&w, 0x10000 / gen_dtype_size[x->dtype]);
		wb_s(&w, "}");
		g->st.n_tensors++;
	}
	wb_s(&w, "],\"edges\":[");
	first = true;
	for (uint32_t i = 0; i < g->nit; i++) {
		const struct gen_item *x = &g->it[i];
		int a = 0;
		for (unsigned p = 0; p < x->npred; p++) {
			int arg = x->src[p] == GS_EXPLICIT ? -1 : a++;
			gen_write_edge(g, &w, i, p, arg, &first);
			if (p == 0 && x->dup)
				gen_write_edge(g, &w, i, p, a++, &first);
			g->st.n_unique_edges++;
		}
	}
	wb_s(&w, "]}\n");
	return wb_close(&w, &g->st.deps_bytes);
}

/* ---- name_map_Bench_case.json (spec §3.4, json.dump indent=2) ---- */

static int gen_write_name_map(struct gen *g, const char *dir)
{
	struct wb w;
	int rc = wb_open(&w, dir, "name_map_Bench_case.json");
	if (rc)
		return rc;
	wb_s(&w, "{\n  \"level\": 2,\n  \"orchestrator_name\": \"BenchOrch\",\n"
		 "  \"callable_id_to_name\": {\n");
	for (int k = 0; k < GEN_NKERNELS; k++) {
		wb_s(&w, "    \"");
		wb_u(&w, (uint64_t)k);
		wb_s(&w, "\": \"");
		wb_s(&w, gen_kernel_names[k]);
		wb_s(&w, k + 1 < GEN_NKERNELS ? "\",\n" : "\"\n");
	}
	wb_s(&w, "  }\n}");
	return wb_close(&w, &g->st.name_map_bytes);
}

const char *sl_gen_shape_name(enum sl_gen_shape shape)
{
	switch (shape) {
	case SL_GEN_HEAVY: return "heavy";
	case SL_GEN_ISSUE: return "issue";
	default: return NULL;
	}
}

int sl_gen_inputs_shape(const char *dir, uint64_t ntasks, int platform_a5,
			uint64_t seed, enum sl_gen_shape shape,
			struct sl_gen_stats *st)
{
	if (!dir || ntasks == 0 || ntasks > (1ULL << 31))
		return tp_set_error(-EINVAL, "generator: ntasks %llu out of range "
				    "(expected 1..2^31) or no directory",
				    (unsigned long long)ntasks);
	if (!sl_gen_shape_name(shape))
		return tp_set_error(-EINVAL, "generator: unknown workload shape %d "
				    "(expected heavy or issue)", (int)shape);
	struct gen g;
	memset(&g, 0, sizeof(g));
	/* heavy keeps the original mix (and its exact byte stream); issue
	 * has fewer edges and smaller SPMD tasks (gen_records.h). */
	g.pred_extra = 3;
	g.spmd_span = 7;
	g.spmd_end = 65;
	g.mix_end = 115;
	if (shape == SL_GEN_ISSUE) {
		g.pred_extra = 2;
		g.spmd_span = 2;
		g.spmd_end = 35;
		g.mix_end = 55;
		g.light_preds = true;
		g.merge_phases = true;
	}
	g.rng = seed * 0x9E3779B97F4A7C15ULL + 0x243F6A8885A308D3ULL;
	if (!g.rng)
		g.rng = 1;
	g.sc = platform_a5 ? 20 : 1;
	g.st.clock_freq_hz = platform_a5 ? 1000000000ULL : 50000000ULL;
	g.nthreads = platform_a5 ? 7 : 4;
	g.nsched = g.nthreads - 1; /* the last slot is the orchestrator's */
	g.st.n_threads = g.nthreads;
	/* AIC core c and AIV cores 24+2c, 25+2c form cluster c; a cluster
	 * belongs to one scheduler thread, round robin. */
	for (int c = 0; c < GEN_AIC; c++) {
		int8_t th = (int8_t)(c % g.nsched);
		g.c2t[c] = th;
		g.c2t[GEN_AIC + 2 * c] = th;
		g.c2t[GEN_AIC + 2 * c + 1] = th;
	}

	int rc = gen_build(&g, ntasks);
	if (rc == -ENOMEM)
		rc = tp_set_error(rc, "generator: out of memory for %llu tasks",
				  (unsigned long long)ntasks);
	if (!rc && g.nph)
		qsort(g.ph, g.nph, sizeof(*g.ph), gen_ph_cmp);
	if (!rc && g.merge_phases)
		gen_merge_phases(&g);
	if (!rc)
		rc = gen_write_records(&g, dir);
	free(g.ph);
	g.ph = NULL;
	free(g.rows);
	g.rows = NULL;
	if (!rc)
		rc = gen_write_deps(&g, dir);
	if (!rc)
		rc = gen_write_name_map(&g, dir);
	free(g.it);
	if (!rc && st)
		*st = g.st;
	return rc;
}

int sl_gen_inputs_stats(const char *dir, uint64_t ntasks, int platform_a5,
			uint64_t seed, struct sl_gen_stats *st)
{
	return sl_gen_inputs_shape(dir, ntasks, platform_a5, seed, SL_GEN_HEAVY, st);
}

int sl_gen_inputs(const char *dir, uint64_t ntasks, int platform_a5, uint64_t seed)
{
	return sl_gen_inputs_stats(dir, ntasks, platform_a5, seed, NULL);
}
