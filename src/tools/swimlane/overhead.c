/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/overhead.c — per-task folding of the joined rows and the
 * Part-1 overhead sweep (spec/swimlane-format.md §6.2, §4.6.13).
 *
 * The sweep sorts one 16-byte event per delta with an LSD radix sort on the
 * time's bit pattern: 1M tasks make ~4M events, which qsort() handles in
 * about a second and the radix sort in a tenth of that.
 */
#include "tools/swimlane/overhead.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* ------------------------------------------------------------------------ */
/* Sorting                                                                  */
/* ------------------------------------------------------------------------ */

/* An event of the sweep: @key orders like the event's time (key_of()),
 * @idx finds its delta descriptor. */
struct oh_ev {
	uint64_t key;
	uint64_t idx;
};

/* Monotonic map double -> u64: flip every bit of negatives, the sign bit of
 * the rest. -0.0 is folded to +0.0 first, because the reference's time set
 * treats them as one point. */
static uint64_t key_of(double d)
{
	uint64_t u;
	if (d == 0.0)
		d = 0.0;
	memcpy(&u, &d, sizeof(u));
	return (u >> 63) ? ~u : (u | (1ull << 63));
}

/* Stable LSD radix sort of @v by key, 8 bits a pass; passes where every key
 * has the same digit are skipped. @tmp has @n entries. */
static void radix_sort(struct oh_ev *v, struct oh_ev *tmp, size_t n)
{
	size_t count[256];
	for (int shift = 0; shift < 64; shift += 8) {
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(v[i].key >> shift) & 0xff]++;
		if (n == 0 || count[(v[0].key >> shift) & 0xff] == n)
			continue;
		size_t sum = 0;
		for (int b = 0; b < 256; b++) {
			size_t c = count[b];
			count[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(v[i].key >> shift) & 0xff]++] = v[i];
		memcpy(v, tmp, n * sizeof(*v));
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* ------------------------------------------------------------------------ */
/* Graph                                                                    */
/* ------------------------------------------------------------------------ */

long sl_oh_graph_find(const struct sl_oh_graph *g, uint64_t task_id)
{
	size_t lo = 0, hi = g->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->id[mid] < task_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo < g->n && g->id[lo] == task_id) ? (long)lo : -1;
}

void sl_oh_graph_free(struct sl_oh_graph *g)
{
	if (!g)
		return;
	free(g->id);
	free(g->row_task);
	free(g->first_row);
	free(g->disp);
	free(g->start);
	free(g->end);
	free(g->finish);
	free(g->ready);
	free(g->types);
	free(g->pred_off);
	free(g->pred);
	memset(g, 0, sizeof(*g));
}

int sl_oh_graph_build(const struct sl_task *tasks, size_t n_tasks, const uint64_t *pred,
		      const uint64_t *succ, size_t n_edges, struct sl_oh_graph *out)
{
	memset(out, 0, sizeof(*out));
	if (n_tasks >= UINT32_MAX)
		return tp_set_error(-E2BIG, "sched-overhead: %zu rows (at most %u)", n_tasks,
				    UINT32_MAX - 1);
	out->n_rows = n_tasks;

	/* Unique ids: the reader sorts rows by task id, so usually one pass. */
	bool sorted = true;
	for (size_t i = 1; i < n_tasks && sorted; i++)
		sorted = tasks[i - 1].task_id <= tasks[i].task_id;
	out->id = malloc((n_tasks ? n_tasks : 1) * sizeof(*out->id));
	out->row_task = malloc((n_tasks ? n_tasks : 1) * sizeof(*out->row_task));
	if (!out->id || !out->row_task)
		goto nomem;
	size_t n = 0;
	if (sorted) {
		for (size_t i = 0; i < n_tasks; i++) {
			if (n == 0 || out->id[n - 1] != tasks[i].task_id)
				out->id[n++] = tasks[i].task_id;
			out->row_task[i] = (uint32_t)(n - 1);
		}
	} else {
		for (size_t i = 0; i < n_tasks; i++)
			out->id[i] = tasks[i].task_id;
		qsort(out->id, n_tasks, sizeof(*out->id), cmp_u64);
		for (size_t i = 0; i < n_tasks; i++)
			if (n == 0 || out->id[n - 1] != out->id[i])
				out->id[n++] = out->id[i];
	}
	out->n = n;
	if (!sorted)
		for (size_t i = 0; i < n_tasks; i++)
			out->row_task[i] = (uint32_t)sl_oh_graph_find(out, tasks[i].task_id);

	size_t nn = n ? n : 1;
	out->first_row = malloc(nn * sizeof(*out->first_row));
	out->disp = malloc(nn * sizeof(double));
	out->start = malloc(nn * sizeof(double));
	out->end = malloc(nn * sizeof(double));
	out->finish = malloc(nn * sizeof(double));
	out->ready = malloc(nn * sizeof(double));
	out->types = calloc(nn, 1);
	out->pred_off = calloc(nn + 1, sizeof(*out->pred_off));
	if (!out->first_row || !out->disp || !out->start || !out->end || !out->finish ||
	    !out->ready || !out->types || !out->pred_off)
		goto nomem;
	for (size_t t = 0; t < n; t++)
		out->first_row[t] = UINT32_MAX;
	for (size_t i = 0; i < n_tasks; i++) {
		const struct sl_task *r = &tasks[i];
		uint32_t t = out->row_task[i];
		if (out->first_row[t] == UINT32_MAX) {
			out->first_row[t] = (uint32_t)i;
			out->disp[t] = r->dispatch_us;
			out->start[t] = r->start_us;
			out->end[t] = r->end_us;
			out->finish[t] = r->finish_us;
		} else {
			if (r->dispatch_us < out->disp[t])
				out->disp[t] = r->dispatch_us;
			if (r->start_us < out->start[t])
				out->start[t] = r->start_us;
			if (r->end_us > out->end[t])
				out->end[t] = r->end_us;
			if (r->finish_us > out->finish[t])
				out->finish[t] = r->finish_us;
		}
		out->types[t] |= (uint8_t)(1u << (r->core_type & 7));
	}

	/* Pred lists (CSR): count, prefix-sum, fill. An edge lookup is two
	 * binary searches; done twice rather than storing 2 × E indexes. */
	for (size_t e = 0; e < n_edges; e++) {
		if (pred[e] == succ[e])
			continue;
		long s = sl_oh_graph_find(out, succ[e]);
		if (s < 0 || sl_oh_graph_find(out, pred[e]) < 0)
			continue;
		out->pred_off[s + 1]++;
	}
	for (size_t t = 0; t < n; t++)
		out->pred_off[t + 1] += out->pred_off[t];
	out->n_edges_used = out->pred_off[n];
	out->pred = malloc((out->n_edges_used ? out->n_edges_used : 1) * sizeof(*out->pred));
	size_t *fill = malloc(nn * sizeof(*fill));
	if (!out->pred || !fill) {
		free(fill);
		goto nomem;
	}
	memcpy(fill, out->pred_off, n * sizeof(*fill));
	for (size_t e = 0; e < n_edges; e++) {
		if (pred[e] == succ[e])
			continue;
		long s = sl_oh_graph_find(out, succ[e]);
		long p = s < 0 ? -1 : sl_oh_graph_find(out, pred[e]);
		if (p < 0)
			continue;
		out->pred[fill[s]++] = (uint32_t)p;
	}
	free(fill);

	/* ready = max end over preds with rows, else the task's own dispatch. */
	for (size_t t = 0; t < n; t++) {
		size_t a = out->pred_off[t], b = out->pred_off[t + 1];
		if (a == b) {
			out->ready[t] = out->disp[t];
			continue;
		}
		double m = out->end[out->pred[a]];
		for (size_t j = a + 1; j < b; j++)
			if (out->end[out->pred[j]] > m)
				m = out->end[out->pred[j]];
		out->ready[t] = m;
	}
	return 0;
nomem:
	sl_oh_graph_free(out);
	return tp_set_error(-ENOMEM, "sched-overhead: out of memory folding %zu rows", n_tasks);
}

/* ------------------------------------------------------------------------ */
/* Sweep                                                                    */
/* ------------------------------------------------------------------------ */

static const struct {
	const char *name;
	int tid;
} series_info[SL_OH_N_SERIES] = {
	{"oh_aic_idle", 9101},	   {"oh_aic_ready", 9102},    {"oh_aic_overhead", 9103},
	{"oh_aiv_idle", 9111},	   {"oh_aiv_ready", 9112},    {"oh_aiv_overhead", 9113},
	{"oh_all_overhead", 9121}, {"oh_has_overhead", 9122},
};

const char *sl_oh_series_name(enum sl_oh_series s)
{
	return (unsigned)s < SL_OH_N_SERIES ? series_info[s].name : "?";
}

int sl_oh_series_tid(enum sl_oh_series s)
{
	return (unsigned)s < SL_OH_N_SERIES ? series_info[s].tid : 0;
}

bool sl_oh_series_present(const struct sl_oh_sweep *sw, enum sl_oh_series s)
{
	switch (s) {
	case SL_OH_AIC_IDLE:
	case SL_OH_AIC_READY:
	case SL_OH_AIC_OVERHEAD:
		return sw->present[SL_AIC];
	case SL_OH_AIV_IDLE:
	case SL_OH_AIV_READY:
	case SL_OH_AIV_OVERHEAD:
		return sw->present[SL_AIV];
	case SL_OH_ALL_OVERHEAD:
	case SL_OH_HAS_OVERHEAD:
		return sw->present[SL_AIC] || sw->present[SL_AIV];
	default:
		return false;
	}
}

void sl_oh_sweep_free(struct sl_oh_sweep *sw)
{
	if (!sw)
		return;
	free(sw->times);
	for (int ty = 0; ty < SL_OH_NTYPES; ty++) {
		free(sw->idle[ty]);
		free(sw->ready[ty]);
	}
	free(sw->flags);
	memset(sw, 0, sizeof(*sw));
}

int32_t sl_oh_ready_at(const struct sl_oh_sweep *sw, int type, double t)
{
	if ((unsigned)type >= SL_OH_NTYPES || !sw->ready[type] || sw->n_times < 2 ||
	    t < sw->times[0])
		return 0;
	/* last interval start <= t among times[0 .. n_times - 2] */
	size_t lo = 0, hi = sw->n_times - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sw->times[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return sw->ready[type][lo - 1];
}

static double clampd(double x, double lo, double hi)
{
	return x > hi ? (hi > lo ? hi : lo) : (x < lo ? lo : x);
}

/* Event descriptors (one byte per event): kind, sign and core type. */
#define EV_RUN 0x00u
#define EV_RW 0x10u   /* ready-wait count */
#define EV_NEG 0x20u  /* -1 instead of +1 */
#define EV_NONE 0x40u /* w0 / w1: a time point without a delta */

/* Inverse of key_of(). */
static double time_of(uint64_t key)
{
	uint64_t bits = (key >> 63) ? (key & ~(1ull << 63)) : ~key;
	double d;
	memcpy(&d, &bits, sizeof(d));
	return d;
}

int sl_oh_sweep_compute(const struct sl_oh_graph *g, const struct sl_task *tasks, size_t n_tasks,
			struct sl_oh_sweep *out)
{
	memset(out, 0, sizeof(*out));
	if (n_tasks == 0)
		return 0;

	/* Window, present types and k[T] (distinct core ids per type). */
	double w0 = tasks[0].start_us, w1 = tasks[0].end_us;
	for (size_t i = 1; i < n_tasks; i++) {
		if (tasks[i].start_us < w0)
			w0 = tasks[i].start_us;
		if (tasks[i].end_us > w1)
			w1 = tasks[i].end_us;
	}
	out->w0 = w0;
	out->w1 = w1;
	out->window = w1 - w0;
	uint64_t *cores = malloc(n_tasks * sizeof(*cores));
	if (!cores)
		goto nomem;
	for (size_t i = 0; i < n_tasks; i++) {
		int ty = tasks[i].core_type == SL_AIC ? SL_AIC : SL_AIV;
		out->present[ty] = true;
		cores[i] = ((uint64_t)ty << 32) | (uint32_t)tasks[i].core_id;
	}
	qsort(cores, n_tasks, sizeof(*cores), cmp_u64);
	for (size_t i = 0; i < n_tasks; i++)
		if (i == 0 || cores[i] != cores[i - 1])
			out->k[cores[i] >> 32]++;
	free(cores);

	/* Events: (time key, index into @desc). Deltas at one time are all
	 * applied before that time's interval is scored, so their order within
	 * a time does not matter. */
	size_t cap = 2 * n_tasks + 2 * SL_OH_NTYPES * g->n + 2;
	struct oh_ev *ev = malloc(cap * sizeof(*ev));
	struct oh_ev *tmp = malloc(cap * sizeof(*tmp));
	uint8_t *desc = malloc(cap);
	if (!ev || !tmp || !desc) {
		free(ev);
		free(tmp);
		free(desc);
		goto nomem;
	}
	size_t ne = 0;
#define PUSH(time, d)                                                                      \
	do {                                                                               \
		ev[ne].key = key_of(time);                                                 \
		ev[ne].idx = ne;                                                           \
		desc[ne] = (uint8_t)(d);                                                   \
		ne++;                                                                      \
	} while (0)
	PUSH(w0, EV_NONE);
	PUSH(w1, EV_NONE);
	for (size_t i = 0; i < n_tasks; i++) {
		double s = clampd(tasks[i].start_us, w0, w1), e = clampd(tasks[i].end_us, w0, w1);
		unsigned ty = tasks[i].core_type == SL_AIC ? SL_AIC : SL_AIV;
		if (e > s) {
			PUSH(s, EV_RUN | ty);
			PUSH(e, EV_RUN | EV_NEG | ty);
		}
	}
	for (size_t t = 0; t < g->n; t++) {
		double r = clampd(g->ready[t], w0, w1), d = clampd(g->disp[t], w0, w1);
		if (!(d > r))
			continue;
		for (unsigned ty = 0; ty < SL_OH_NTYPES; ty++) {
			if (!(g->types[t] & (1u << ty)))
				continue;
			PUSH(r, EV_RW | ty);
			PUSH(d, EV_RW | EV_NEG | ty);
		}
	}
#undef PUSH
	radix_sort(ev, tmp, ne);

	/* Unique times and their summed deltas. */
	size_t nu = 0;
	for (size_t i = 0; i < ne; i++)
		if (i == 0 || ev[i].key != ev[i - 1].key)
			nu++;
	out->n_times = nu;
	out->times = malloc(nu * sizeof(double));
	size_t ni = nu > 1 ? nu - 1 : 1;
	out->flags = calloc(ni, 1);
	for (int ty = 0; ty < SL_OH_NTYPES; ty++) {
		if (!out->present[ty])
			continue;
		out->idle[ty] = malloc(ni * sizeof(int32_t));
		out->ready[ty] = malloc(ni * sizeof(int32_t));
		if (!out->idle[ty] || !out->ready[ty])
			break;
	}
	bool ok = out->times && out->flags;
	for (int ty = 0; ty < SL_OH_NTYPES; ty++)
		if (out->present[ty] && (!out->idle[ty] || !out->ready[ty]))
			ok = false;
	if (!ok) {
		free(ev);
		free(tmp);
		free(desc);
		goto nomem;
	}

	int64_t rc[SL_OH_NTYPES] = {0}, wc[SL_OH_NTYPES] = {0};
	size_t i = 0, u = 0;
	while (i < ne) {
		uint64_t key = ev[i].key;
		out->times[u] = time_of(key);
		for (; i < ne && ev[i].key == key; i++) {
			uint8_t d = desc[ev[i].idx];
			if (d & EV_NONE)
				continue;
			int ty = d & 0x0f;
			int delta = (d & EV_NEG) ? -1 : 1;
			if (d & EV_RW)
				wc[ty] += delta;
			else
				rc[ty] += delta;
		}
		u++;
		if (u == nu)
			break; /* the last time only closes the window */
		uint8_t fl = 0;
		bool all = true, any_work = false, work_idle = true;
		for (int ty = 0; ty < SL_OH_NTYPES; ty++) {
			if (!out->present[ty])
				continue;
			int64_t idle = out->k[ty] - rc[ty];
			out->idle[ty][u - 1] = (int32_t)idle;
			out->ready[ty][u - 1] = (int32_t)wc[ty];
			bool ov = idle > 0 && wc[ty] > 0;
			if (ov)
				fl |= SL_OH_F_OVERHEAD(ty);
			else
				all = false;
			if (wc[ty] > 0) {
				any_work = true;
				if (!(idle > 0))
					work_idle = false;
			}
		}
		if (all)
			fl |= SL_OH_F_ALL;
		if (any_work && work_idle)
			fl |= SL_OH_F_HAS;
		out->flags[u - 1] = fl;
	}
	free(ev);
	free(tmp);
	free(desc);

	/* Totals, accumulated in time order like the reference. */
	for (size_t j = 0; j + 1 < nu; j++) {
		double len = out->times[j + 1] - out->times[j];
		uint8_t fl = out->flags[j];
		for (int ty = 0; ty < SL_OH_NTYPES; ty++)
			if (fl & SL_OH_F_OVERHEAD(ty))
				out->overhead_us[ty] += len;
		if (fl & SL_OH_F_ALL)
			out->all_overhead_us += len;
		if (fl & SL_OH_F_HAS)
			out->has_overhead_us += len;
	}
	return 0;
nomem:
	sl_oh_sweep_free(out);
	return tp_set_error(-ENOMEM, "sched-overhead: out of memory in the overhead sweep");
}
