// SPDX-License-Identifier: MIT
/*
 * tools/swimlane/stats.c — the converter's "Task Statistics by Function"
 * table (spec/swimlane-format.md §5.5). Rows are grouped by their resolved
 * func id, so this runs after sl_trace_generate() (spec §9 item 17).
 * Sums are accumulated in the reference's order (row order inside a func,
 * funcs ascending for Σexec, funcs by first appearance for Σlatency) so the
 * last printed digit matches.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/swimlane/trace.h"

struct fstat {
	int32_t func_id;
	size_t first;     /* first row index: the reference's dict order */
	size_t count;
	double sum_dur;
	double sum_head, sum_tail, sum_prop, sum_local, sum_lat;
	size_t n_head, n_prop, n_local;
	double total_exec;
};

static int cmp_fid(const void *a, const void *b)
{
	const struct fstat *x = a, *y = b;
	return (x->func_id > y->func_id) - (x->func_id < y->func_id);
}

static int cmp_first(const void *a, const void *b)
{
	const struct fstat *x = *(const struct fstat *const *)a, *y = *(const struct fstat *const *)b;
	return (x->first > y->first) - (x->first < y->first);
}

struct rk {
	int32_t f;
	size_t i;
};

static int cmp_rk(const void *a, const void *b)
{
	const struct rk *x = a, *y = b;
	if (x->f != y->f)
		return (x->f > y->f) - (x->f < y->f);
	return (x->i > y->i) - (x->i < y->i);
}

size_t sl_put_name(FILE *out, const char *s)
{
	size_t cps = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++, cps++) {
		if (*p < 0x20 || *p == 0x7f) {
			fputc('?', out);
		} else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			fputc('?', out); /* C1: a terminal may take U+009B as CSI */
			p++;
		} else {
			fputc(*p, out);
			for (; (p[1] & 0xC0) == 0x80; p++)
				fputc(p[1], out);
		}
	}
	return cps;
}

/* Python's f"{s:<width}" pads by code points, not bytes. */
static void put_left(FILE *out, const char *s, int width)
{
	for (size_t cps = sl_put_name(out, s); cps < (size_t)width; cps++)
		fputc(' ', out);
}

static const char *level_desc(int level)
{
	switch (level) {
	case 1: return "AICore timing only";
	case 2: return "AICore + AICPU timing";
	case 3: return "AICore + AICPU timing + scheduler phases";
	case 4: return "full collection with orchestrator phases";
	default: return "unknown";
	}
}

static void ruler(FILE *out, char c, int n)
{
	for (int i = 0; i < n; i++)
		fputc(c, out);
	fputc('\n', out);
}

void sl_print_stats(FILE *out, const struct sl_perf_data *pd, const struct sl_name_map *names)
{
	bool aicpu = pd->level >= 2;
	size_t n = pd->n_tasks;
	const struct sl_task *t = pd->tasks;
	struct rk *k = malloc((n + 1) * sizeof(*k));
	struct fstat *fs = calloc(n + 1, sizeof(*fs));
	struct fstat **byfirst = malloc((n + 1) * sizeof(*byfirst));
	if (!k || !fs || !byfirst) {
		free(k);
		free(fs);
		free(byfirst);
		fprintf(out, "(statistics skipped: out of memory)\n");
		return;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = (struct rk){t[i].func_id, i};
	qsort(k, n, sizeof(*k), cmp_rk);

	double min_disp = INFINITY, max_fin = -INFINITY;
	double min_core = INFINITY, max_core = -INFINITY;
	size_t nf = 0;
	for (size_t q = 0; q < n; q++) {
		if (q == 0 || k[q].f != k[q - 1].f) {
			fs[nf].func_id = k[q].f;
			fs[nf].first = k[q].i;
			nf++;
		}
		struct fstat *s = &fs[nf - 1];
		const struct sl_task *r = &t[k[q].i];
		s->count++;
		s->sum_dur += r->duration_us;
		s->sum_local += r->local_setup_us;
		s->n_local++;
		if (aicpu) {
			s->sum_head += r->start_us - r->dispatch_us;
			s->sum_tail += r->finish_us - r->end_us;
			s->n_head++;
			if (r->has_propagation) {
				s->sum_prop += r->propagation_us;
				s->n_prop++;
			}
			s->sum_lat += r->finish_us - r->dispatch_us;
			s->total_exec += r->duration_us;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct sl_task *r = &t[i];
		if (r->receive_us < min_core)
			min_core = r->receive_us;
		if (r->end_us > max_core)
			max_core = r->end_us;
		if (aicpu) {
			if (r->dispatch_us < min_disp)
				min_disp = r->dispatch_us;
			if (r->finish_us > max_fin)
				max_fin = r->finish_us;
		}
	}
	qsort(fs, nf, sizeof(*fs), cmp_fid);

	fputc('\n', out);
	ruler(out, '=', 140);
	fprintf(out, "Task Statistics by Function\n");
	fprintf(out, "  Source l2_swimlane_level: %d (%s; recorded in l2_swimlane_records.json)\n",
		pd->level, level_desc(pd->level));
	fprintf(out, "  Exec = kernel time on AICore; Latency = dispatch->finish (incl. head OH + "
		     "Exec + tail OH)\n");
	fprintf(out, "  Head OH split (v3): Prop = NoC propagation (dispatch_ts\xe2\x86\x92"
		     "AICore receive); Local = dcci+ack (receive\xe2\x86\x92start)\n");
	ruler(out, '=', 140);
	fprintf(out, "%-8s %-12s %5s   %12s  %15s  %6s   %15s  %15s  %12s  %13s\n", "Func_ID",
		"Func_Name", "Count", "Avg Exec(us)", "Avg Latency(us)", "Exec%",
		"Avg Head OH(us)", "Avg Tail OH(us)", "Avg Prop(us)", "Avg Local(us)");
	ruler(out, '-', 140);

	size_t total_count = 0;
	double total_dur = 0.0;
	char tag[48], cell[64];
	for (size_t i = 0; i < nf; i++) {
		struct fstat *s = &fs[i];
		total_count += s->count;
		total_dur += s->sum_dur;
		const char *nm = names ? sl_name_map_get(names, s->func_id) : NULL;
		char fname[64];
		if (!nm) {
			snprintf(fname, sizeof(fname), "func_%s", sl_func_tag(s->func_id, tag));
			nm = fname;
		}
		snprintf(cell, sizeof(cell), "%d", s->func_id);
		put_left(out, cell, 8);
		fputc(' ', out);
		put_left(out, nm, 12);
		fprintf(out, " %5zu   %12.2f  ", s->count, s->sum_dur / (double)s->count);
		if (aicpu) {
			double lat = s->sum_lat / (double)s->count;
			double ratio = s->sum_lat > 0 ? s->total_exec / s->sum_lat * 100 : 0;
			double head = s->n_head ? s->sum_head / (double)s->n_head : 0;
			double tail = s->n_head ? s->sum_tail / (double)s->n_head : 0;
			snprintf(cell, sizeof(cell), "%.1f%%", ratio);
			fprintf(out, "%15.2f  %6s   %15.2f  %15.2f  ", lat, cell, head, tail);
		} else {
			fprintf(out, "%15s  %6s   %15s  %15s  ", "-", "-", "-", "-");
		}
		if (s->n_prop)
			fprintf(out, "%12.2f  ", s->sum_prop / (double)s->n_prop);
		else
			fprintf(out, "%12s  ", "-");
		if (s->n_local)
			fprintf(out, "%13.2f\n", s->sum_local / (double)s->n_local);
		else
			fprintf(out, "%13s\n", "-");
	}
	ruler(out, '-', 140);

	/* Σlatency in the order funcs first appear in the rows */
	for (size_t i = 0; i < nf; i++)
		byfirst[i] = &fs[i];
	qsort(byfirst, nf, sizeof(*byfirst), cmp_first);
	double total_lat = 0.0;
	for (size_t i = 0; i < nf; i++)
		total_lat += byfirst[i]->sum_lat;
	if (aicpu)
		fprintf(out, "%-21s %5zu   %12.2f  %15.2f\n", "TOTAL", total_count, total_dur, total_lat);
	else
		fprintf(out, "%-21s %5zu   %12.2f  %15s\n", "TOTAL", total_count, total_dur, "-");

	if (aicpu && min_disp != INFINITY && max_fin != -INFINITY)
		fprintf(out, "\nTotal Test Time: %.2f us (from earliest dispatch to latest finish)\n",
			max_fin - min_disp);
	else if (pd->level == 1 && min_core != INFINITY && max_core != -INFINITY)
		fprintf(out, "\nAICore Observed Span: %.2f us (from earliest AICore receive to latest "
			     "AICore end)\n",
			max_core - min_core);
	if (aicpu && total_count > 0 && total_lat > 0) {
		fprintf(out, "\n--- Task execution vs Scheduler overhead ---\n");
		fprintf(out,
			"  Per-task (all):  Avg Exec = %.2f us,  Avg Latency (dispatch->finish) = "
			"%.2f us,  Exec/Latency = %.2f%%\n",
			total_dur / (double)total_count, total_lat / (double)total_count,
			total_dur / total_lat * 100);
		fprintf(out, "  (Latency = dispatch\xe2\x86\x92" "finish; Exec = AICore kernel time per task)\n");
	}
	ruler(out, '=', 110);
	free(k);
	free(fs);
	free(byfirst);
}
