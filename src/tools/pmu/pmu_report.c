/* SPDX-License-Identifier: MIT */
/*
 * tools/pmu/pmu_report.c — pmu.csv reader and per-function summary
 * (pmu_report.h).
 */
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/args.h"
#include "base/error.h"
#include "base/file.h"
#include "taskprof/taskprof.h"
#include "tools/pmu/pmu_report.h"
#include "tools/swimlane/perf_data.h"

#define NFIXED 6
static const char *const fixed_cols[NFIXED] = {"thread_id", "core_id",  "task_id",
					       "func_id",   "core_type", "pmu_total_cycles"};

struct pmu_row {
	uint32_t func_id;
	int32_t core_type;
	uint64_t total;
	uint64_t epoch; /* run_epoch (0 without the column) */
	uint64_t *cnt;  /* ncnt values */
};

struct pmu_csv {
	char *path;
	char **cols;   /* every header column */
	int ncols;
	int ncnt;      /* counter columns: cols[6 .. 6+ncnt) */
	bool has_epoch;
	uint32_t event_type;
	uint64_t *vals; /* rows x ncnt */
	struct pmu_row *rows;
	size_t nrows, cap;
	uint64_t epoch_min, epoch_max;
};

static const char *event_name(uint32_t t)
{
	switch (t) {
	case 1: return "ARITHMETIC_UTILIZATION";
	case 2: return "PIPE_UTILIZATION";
	case 4: return "MEMORY";
	case 5: return "MEMORY_L0";
	case 6: return "RESOURCE_CONFLICT";
	case 7: return "MEMORY_UB";
	case 8: return "L2_CACHE";
	default: return "unknown";
	}
}

/* Split @line in place on commas; returns the field count (<= max). */
static int split(char *line, char **f, int max)
{
	int n = 0;
	for (char *p = line;; p++) {
		if (n < max)
			f[n] = p;
		n++;
		p = strchr(p, ',');
		if (!p)
			break;
		*p = '\0';
	}
	return n;
}

static int parse_u64(const char *s, bool allow_hex, bool allow_sign, uint64_t *v)
{
	const char *p = s;
	bool neg = false;
	if (allow_sign && *p == '-') {
		neg = true;
		p++;
	}
	int base = 10;
	if (allow_hex && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!*p)
		return -1;
	for (const char *q = p; *q; q++)
		if (base == 10 ? (*q < '0' || *q > '9') : !strchr("0123456789abcdefABCDEF", *q))
			return -1;
	errno = 0;
	char *end;
	unsigned long long x = strtoull(p, &end, base);
	if (errno || *end)
		return -1;
	/* a signed column: INT64_MIN .. INT64_MAX (INT64_MIN's magnitude is
	 * INT64_MAX + 1), so that -1 and 2^64 - 1 are not the same value */
	if (allow_sign && x > (unsigned long long)INT64_MAX + (neg ? 1u : 0u))
		return -1;
	*v = neg ? 0 - (uint64_t)x : x;
	return 0;
}

static int bad(const struct pmu_csv *c, size_t line, const char *fmt, const char *a,
	       const char *b)
{
	char msg[512];
	snprintf(msg, sizeof(msg), fmt, a, b);
	return tp_set_error(-EINVAL, "%s:%zu: %s", c->path, line, msg);
}

static int parse_header(struct pmu_csv *c, char *line)
{
	/* A UTF-8 byte-order mark (a spreadsheet's "CSV UTF-8" export) is
	 * no part of the first column's name. */
	if (!strncmp(line, "\xEF\xBB\xBF", 3))
		line += 3;
	/* Another of the run's files given by mistake (deps.json, the
	 * swimlane records, a name map): say what it looks like, not what
	 * its first line's commas make of it. */
	const char *lead = line + strspn(line, " \t\r");
	if (*lead == '{' || *lead == '[')
		return tp_set_error(-EINVAL, "%s:1: not a pmu.csv: it starts with '%c', like a "
				    "JSON file (expected the CSV header '%s,...')",
				    c->path, *lead, fixed_cols[0]);
	char *f[256];
	int n = split(line, f, 256);
	if (n > 256)
		return tp_set_error(-EINVAL, "%s:1: too many columns (%d; at most 256)", c->path, n);
	for (int i = 0; i < NFIXED; i++)
		if (i >= n || strcmp(f[i], fixed_cols[i]))
			return tp_set_error(-EINVAL,
					    "%s:1: column %d: expected '%s', got '%s' (not a pmu.csv "
					    "header)",
					    c->path, i + 1, fixed_cols[i], i < n ? f[i] : "");
	for (int i = 0; i < n; i++) {
		if (!f[i][0])
			return tp_set_error(-EINVAL, "%s:1: column %d has an empty name", c->path,
					    i + 1);
		/* two columns of one name: which one a reader means is a guess */
		for (int j = 0; j < i; j++)
			if (!strcmp(f[i], f[j]))
				return tp_set_error(-EINVAL,
						    "%s:1: column %d (%s): duplicate column name "
						    "(also column %d)",
						    c->path, i + 1, f[i], j + 1);
	}
	int et = -1;
	for (int i = NFIXED; i < n; i++)
		if (!strcmp(f[i], "event_type"))
			et = i;
	c->has_epoch = et >= 0 && et == n - 2 && !strcmp(f[n - 1], "run_epoch");
	if (et < 0 || (et != n - 1 && !c->has_epoch))
		return tp_set_error(-EINVAL,
				    "%s:1: expected 'event_type' (optionally followed by 'run_epoch') "
				    "as the last column",
				    c->path);
	c->ncols = n;
	c->ncnt = et - NFIXED;
	c->cols = calloc((size_t)n, sizeof(*c->cols));
	if (!c->cols)
		return tp_set_error(-ENOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		if (!(c->cols[i] = strdup(f[i])))
			return tp_set_error(-ENOMEM, "out of memory");
	}
	return 0;
}

static int parse_row(struct pmu_csv *c, char *line, size_t lineno)
{
	/* JSON after a valid header (a file joined by hand with another of
	 * the run's files): this line is where it starts, not line 1, and
	 * the header was a pmu.csv's. */
	const char *lead = line + strspn(line, " \t\r");
	if (*lead == '{' || *lead == '[') {
		char ch[2] = { *lead, '\0' };
		return bad(c, lineno, "the line starts with '%s', like JSON; expected a data row "
			   "(%s,...: numbers separated by commas)", ch, fixed_cols[0]);
	}
	char *f[256];
	int n = split(line, f, 256);
	if (n != c->ncols) {
		char a[32], b[32];
		snprintf(a, sizeof(a), "%d", c->ncols);
		snprintf(b, sizeof(b), "%d", n);
		return bad(c, lineno, "expected %s columns, got %s", a, b);
	}
	if (c->nrows == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct pmu_row *nr = realloc(c->rows, cap * sizeof(*nr));
		if (!nr)
			return tp_set_error(-ENOMEM, "out of memory");
		c->rows = nr;
		uint64_t *nv = realloc(c->vals, cap * (size_t)(c->ncnt ? c->ncnt : 1) * sizeof(*nv));
		if (!nv)
			return tp_set_error(-ENOMEM, "out of memory");
		c->vals = nv;
		c->cap = cap;
	}
	uint64_t v[256];
	for (int i = 0; i < n; i++) {
		bool sign = i <= 1 || i == 4; /* thread_id, core_id, core_type: signed */
		if (parse_u64(f[i], i == 2, sign, &v[i])) {
			char col[300];
			snprintf(col, sizeof(col), "column %d (%s)", i + 1, c->cols[i]);
			return bad(c, lineno,
				   i == 2 ? "%s: expected a 0x-hex or decimal task id, got '%s'"
				   : sign ? "%s: expected an integer, got '%s'"
					  : "%s: expected an unsigned integer, got '%s'",
				   col, f[i]);
		}
	}
	/* Signed in the format (spec/pmu.md), but indices: a ready queue's
	 * (thread_id) and a logical core's (core_id). */
	for (int i = 0; i <= 1; i++)
		if ((int64_t)v[i] < 0) {
			char col[300];
			snprintf(col, sizeof(col), "column %d (%s)", i + 1, c->cols[i]);
			return bad(c, lineno, i == 0 ? "%s: expected an AICPU thread index >= 0, "
						       "got '%s'"
						     : "%s: expected a core index >= 0, got '%s'",
				   col, f[i]);
		}
	if (v[4] != 0 && v[4] != 1) {
		char col[32];
		snprintf(col, sizeof(col), "column 5 (%s)", c->cols[4]);
		return bad(c, lineno, "%s: expected 0 (AIC) or 1 (AIV), got '%s'", col, f[4]);
	}
	if (v[3] > UINT32_MAX)
		return bad(c, lineno, "column 4 (%s): func_id '%s' exceeds 32 bits", c->cols[3], f[3]);
	if (v[NFIXED + c->ncnt] > UINT32_MAX) {
		char col[300];
		snprintf(col, sizeof(col), "column %d (event_type)", NFIXED + c->ncnt + 1);
		return bad(c, lineno, "%s: '%s' exceeds 32 bits", col, f[NFIXED + c->ncnt]);
	}
	uint32_t et = (uint32_t)v[NFIXED + c->ncnt];
	if (c->nrows == 0) {
		c->event_type = et;
	} else if (et != c->event_type) {
		char want[32];
		snprintf(want, sizeof(want), "%" PRIu32, c->event_type);
		return bad(c, lineno,
			   "column event_type: mixed event types in one file (first rows %s, this "
			   "row %s)",
			   want, f[NFIXED + c->ncnt]);
	}
	if (c->has_epoch) {
		uint64_t e = v[n - 1];
		if (!c->nrows || e < c->epoch_min)
			c->epoch_min = e;
		if (!c->nrows || e > c->epoch_max)
			c->epoch_max = e;
	}
	struct pmu_row *r = &c->rows[c->nrows];
	r->func_id = (uint32_t)v[3];
	r->core_type = (int32_t)v[4];
	r->total = v[5];
	r->epoch = c->has_epoch ? v[n - 1] : 0;
	r->cnt = NULL;
	memcpy(c->vals + c->nrows * (size_t)c->ncnt, v + NFIXED, (size_t)c->ncnt * sizeof(*v));
	c->nrows++;
	return 0;
}

int pmu_csv_load(const char *path, struct pmu_csv **out)
{
	*out = NULL;
	char *text = NULL;
	size_t len = 0;
	/* A pmu.csv is a regular file: a FIFO would block the open and a
	 * device (/dev/zero) never ends, so both are refused up front. stat()
	 * does not open, so it cannot block. */
	struct stat st;
	if (stat(path, &st) != 0) {
		int err = errno;
		return tp_set_error(-err, "%s: cannot read: %s%s", path, strerror(err),
				    err == ENOENT && !strcmp(path, "-")
					    ? " (taskprof reads no standard input: give the file's path)"
					    : "");
	}
	if (!S_ISREG(st.st_mode))
		return tp_set_error(-EINVAL, "%s: not a regular file; expected a pmu.csv", path);
	int rc = tp_read_file(path, &text, &len);
	if (rc)
		return tp_set_error(rc, "%s: cannot read: %s", path, strerror(-rc));
	struct pmu_csv *c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(path))) {
		free(c);
		free(text);
		return tp_set_error(-ENOMEM, "out of memory");
	}
	if (memchr(text, '\0', len)) {
		rc = tp_set_error(-EINVAL, "%s: binary data (a NUL byte); expected a pmu.csv", path);
		goto fail;
	}
	if (!len) {
		rc = tp_set_error(-EINVAL, "%s:1: empty file; expected the pmu.csv header", path);
		goto fail;
	}
	/* A CR not followed by LF: lines ended by CR alone (classic Mac OS),
	 * which would read as one long header line. */
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n')
			break;
		if (text[i] == '\r' && i + 1 < len && text[i + 1] != '\n') {
			rc = tp_set_error(-EINVAL, "%s:1: a line ends with CR alone; expected lines "
					  "ended by LF or CRLF", path);
			goto fail;
		}
	}
	size_t lineno = 0;
	char *p = text;
	while (*p) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		lineno++;
		size_t l = strlen(p);
		if (l && p[l - 1] == '\r')
			p[l - 1] = '\0';
		if (lineno == 1)
			rc = parse_header(c, p);
		else if (!*p && nl && !nl[strspn(nl + 1, "\r\n") + 1])
			break; /* only empty lines to the end: trailing blank lines */
		else if (!*p)
			rc = bad(c, lineno, "empty line; expected a data row%s", "", "");
		else
			rc = parse_row(c, p, lineno);
		if (rc)
			goto fail;
		if (!nl)
			break;
		p = nl + 1;
	}
	for (size_t i = 0; i < c->nrows; i++)
		c->rows[i].cnt = c->vals + i * (size_t)c->ncnt;
	free(text);
	*out = c;
	return 0;
fail:
	free(text);
	pmu_csv_free(c);
	return rc;
}

size_t pmu_csv_rows(const struct pmu_csv *c)
{
	return c->nrows;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The number of distinct run_epoch values among @c's rows (several when
 * the files of several runs were joined into one); 0 when out of memory. */
static size_t count_epochs(const struct pmu_csv *c)
{
	uint64_t *e = malloc((c->nrows ? c->nrows : 1) * sizeof(*e));
	if (!e)
		return 0;
	for (size_t i = 0; i < c->nrows; i++)
		e[i] = c->rows[i].epoch;
	qsort(e, c->nrows, sizeof(*e), cmp_u64);
	size_t n = 0;
	for (size_t i = 0; i < c->nrows; i++)
		n += !i || e[i] != e[i - 1];
	free(e);
	return n;
}

static int cmp_row(const void *a, const void *b)
{
	const struct pmu_row *x = a, *y = b;
	if (x->func_id != y->func_id)
		return x->func_id < y->func_id ? -1 : 1;
	return x->total < y->total ? -1 : x->total > y->total;
}

int pmu_report_print(const struct pmu_csv *c, FILE *out)
{
	return pmu_report_print_named(c, NULL, out);
}

int pmu_report_print_named(const struct pmu_csv *c, const struct sl_name_map *names,
			   FILE *out)
{
	/* Sorted by (func_id, total): each function is a run, its median is
	 * its middle. */
	struct pmu_row *rows = malloc((c->nrows ? c->nrows : 1) * sizeof(*rows));
	if (!rows)
		return tp_set_error(-ENOMEM, "out of memory");
	if (c->nrows)
		memcpy(rows, c->rows, c->nrows * sizeof(*rows));
	qsort(rows, c->nrows, sizeof(*rows), cmp_row);
	size_t nfunc = 0;
	for (size_t i = 0; i < c->nrows; i++)
		nfunc += !i || rows[i].func_id != rows[i - 1].func_id;
	fprintf(out, "%s: %zu row%s, %zu function%s, event_type %" PRIu32 " (%s)",
		tp_shown(c->path), c->nrows, c->nrows == 1 ? "" : "s", nfunc, nfunc == 1 ? "" : "s",
		c->event_type, c->nrows ? event_name(c->event_type) : "no rows");
	if (c->has_epoch && c->nrows) {
		if (c->epoch_min == c->epoch_max)
			fprintf(out, ", run_epoch %" PRIu64, c->epoch_min);
		else {
			/* Rows of several runs (files joined by hand: taskprof
			 * writes one run per pmu.csv); the figures below pool
			 * them, and the line says so. */
			const size_t runs = count_epochs(c);
			if (!runs) {
				free(rows);
				return tp_set_error(-ENOMEM, "out of memory");
			}
			fprintf(out, ", %zu runs (run_epoch %" PRIu64 "..%" PRIu64 ", pooled below)",
				runs, c->epoch_min, c->epoch_max);
		}
	}
	fputc('\n', out);
	const bool pipe = c->event_type == 2;
	if (pipe) {
		/* A pipe busy for more cycles than the row counted in all is not
		 * what the device reports: its share goes past 100%. Said on
		 * stderr, once, the first such row named. */
		size_t over = 0, first = 0;
		int first_k = 0;
		for (size_t r = 0; r < c->nrows; r++)
			for (int k = 0; k < c->ncnt; k++)
				if (strstr(c->cols[NFIXED + k], "busy") &&
				    c->rows[r].cnt[k] > c->rows[r].total) {
					if (!over++) {
						first = r;
						first_k = k;
					}
					break;
				}
		if (over) {
			fflush(out);
			fprintf(stderr, "taskprof pmu: warning: %s: %zu row%s count%s more busy cycles "
					"than pmu_total_cycles (the first: data row %zu, %s %" PRIu64
					" > %" PRIu64 "): the shares of total go past 100%%\n",
				tp_shown(c->path), over, over == 1 ? "" : "s", over == 1 ? "s" : "",
				first + 1, tp_shown(c->cols[NFIXED + first_k]),
				c->rows[first].cnt[first_k],
				c->rows[first].total);
		}
	}
	int w = 16;
	for (int k = 0; k < c->ncnt; k++) {
		int l = (int)strlen(c->cols[NFIXED + k]);
		w = l > w ? l : w;
	}
	for (size_t i = 0; i < c->nrows;) {
		size_t j = i;
		uint64_t aic = 0;
		long double sum_total = 0;
		while (j < c->nrows && rows[j].func_id == rows[i].func_id) {
			aic += rows[j].core_type == 0;
			sum_total += rows[j].total;
			j++;
		}
		size_t n = j - i;
		long double median = n % 2 ? rows[i + n / 2].total
					   : ((long double)rows[i + n / 2 - 1].total +
					      rows[i + n / 2].total) / 2;
		const char *fname = names ? sl_name_map_get(names, rows[i].func_id) : NULL;
		fprintf(out, "\nfunc_id %" PRIu32, rows[i].func_id);
		if (fname) {
			fputs(" (", out);
			sl_put_name(out, fname);
			fputc(')', out);
		}
		fprintf(out,
			": %zu row%s (AIC %" PRIu64 ", AIV %" PRIu64
			"), pmu_total_cycles mean %.1Lf median %.1Lf\n",
			n, n == 1 ? "" : "s", aic, (uint64_t)n - aic, sum_total / n, median);
		if (c->ncnt)
			fprintf(out, "  %-*s %14s%s\n", w, "counter", "mean", pipe ? "   share of total" : "");
		for (int k = 0; k < c->ncnt; k++) {
			long double s = 0;
			for (size_t r = i; r < j; r++)
				s += rows[r].cnt[k];
			const char *name = c->cols[NFIXED + k];
			fprintf(out, "  %-*s %14.1Lf", w, tp_shown(name), s / n);
			if (pipe && strstr(name, "busy")) {
				if (sum_total > 0)
					fprintf(out, "  %14.1Lf%%", 100 * s / sum_total);
				else
					fprintf(out, "  %15s", "-");
			}
			fputc('\n', out);
		}
		i = j;
	}
	free(rows);
	int err = -tp_stream_flush(out);
	if (err)
		return tp_set_error(-err, "writing %s: %s", out == stdout ? "stdout" : "the report",
				    strerror(err));
	return 0;
}

void pmu_csv_free(struct pmu_csv *c)
{
	if (!c)
		return;
	for (int i = 0; c->cols && i < c->ncols; i++)
		free(c->cols[i]);
	free(c->cols);
	free(c->rows);
	free(c->vals);
	free(c->path);
	free(c);
}

static int set_has(const struct pmu_counter_set *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return 1;
	return 0;
}

static int csv_has_counter(const struct pmu_csv *c, const char *name)
{
	for (int k = 0; k < c->ncnt; k++)
		if (!strcmp(c->cols[NFIXED + k], name))
			return 1;
	return 0;
}

int pmu_csv_check_counters(const struct pmu_csv *c, const struct pmu_counter_set *sets,
			   size_t n_sets, FILE *err)
{
	if (!n_sets)
		return 0;
	/* the candidate sharing the most columns; the first on a tie */
	const struct pmu_counter_set *best = NULL;
	int best_common = -1;
	for (size_t i = 0; i < n_sets; i++) {
		const struct pmu_counter_set *s = &sets[i];
		if (c->nrows && s->event_type != c->event_type)
			continue;
		int common = 0;
		for (int k = 0; k < c->ncnt; k++)
			common += set_has(s, c->cols[NFIXED + k]);
		if (common == c->ncnt && common == s->n)
			return 0; /* exactly this group's columns */
		if (common > best_common) {
			best = s;
			best_common = common;
		}
	}
	fflush(stdout);
	if (!best) {
		fprintf(err, "Warning: %s: event_type %" PRIu32 " is not a known event group (",
			tp_shown(c->path), c->event_type);
		bool first = true;
		for (size_t i = 0; i < n_sets; i++) {
			bool seen = false;
			for (size_t j = 0; j < i; j++)
				seen |= sets[j].event_type == sets[i].event_type;
			if (seen)
				continue;
			fprintf(err, "%s%" PRIu32, first ? "" : ", ", sets[i].event_type);
			first = false;
		}
		fprintf(err, "); its counter columns are not checked\n");
		return 1;
	}
	int warned = 0;
	for (int k = 0; k < c->ncnt; k++) {
		const char *name = c->cols[NFIXED + k];
		if (set_has(best, name))
			continue;
		fprintf(err,
			"Warning: %s:1: column %d (%s): not a counter of %s (event_type %" PRIu32
			"); expected the %s columns ",
			tp_shown(c->path), NFIXED + k + 1, tp_shown(name), best->type_name,
			best->event_type, best->arch);
		for (int i = 0; i < best->n; i++)
			fprintf(err, "%s%s", i ? ", " : "", best->names[i]);
		fputc('\n', err);
		warned++;
	}
	bool missing = false;
	for (int i = 0; i < best->n; i++) {
		if (csv_has_counter(c, best->names[i]))
			continue;
		if (!missing)
			fprintf(err, "Warning: %s:1: no column for the %s %s counter(s) ",
				tp_shown(c->path), best->arch, best->type_name);
		fprintf(err, "%s%s", missing ? ", " : "", best->names[i]);
		missing = true;
	}
	if (missing) {
		fprintf(err, " (event_type %" PRIu32 ")\n", best->event_type);
		warned++;
	}
	return warned;
}

/* The newest ./outputs/<run>/pmu.csv, as `taskprof swimlane` picks its
 * input; NULL with a message when there is none. The caller frees it. */
static char *newest_pmu_csv(void)
{
	char *outputs = NULL, *skipped = NULL;
	char *best = tp_newest_run_file("pmu.csv", &outputs, &skipped);
	if (!best && outputs)
		fprintf(stderr, "taskprof pmu: no PMU_CSV given and no outputs/*/pmu.csv under %s "
				"(run with --enable-pmu first, or name the file)%s%s%s\n",
			tp_shown(outputs), skipped ? "; left out " : "",
			skipped ? tp_shown(skipped) : "", "");
	else if (!best)
		fprintf(stderr, "taskprof pmu: out of memory\n");
	else
		fprintf(stderr, "taskprof pmu: using %s (the newest outputs/*/pmu.csv)\n",
			tp_shown(best));
	free(outputs);
	free(skipped);
	return best;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: taskprof pmu [-h] [--func-names NAME_MAP] [PMU_CSV]\n\n"
		   "Summarise a pmu.csv per function: rows (AIC / AIV), mean and median\n"
		   "pmu_total_cycles, and each counter's mean per row; for PIPE_UTILIZATION\n"
		   "(event_type 2) each pipe's busy cycles as a share of the total cycles.\n\n"
		   "arguments:\n"
		   "  PMU_CSV      the pmu.csv of a run with --enable-pmu, or its run\n"
		   "               folder (default: the newest outputs/*/pmu.csv under\n"
		   "               the current folder, as taskprof swimlane picks its\n"
		   "               input)\n\n"
		   "options:\n"
		   "  --func-names NAME_MAP\n"
		   "               func_id -> name map (default: the unique sibling\n"
		   "               name_map*.json next to PMU_CSV, written by runs with\n"
		   "               PMU, swimlane or dep_gen on); names follow the ids.\n"
		   "               A name map that cannot be read is an error; with\n"
		   "               several siblings a warning says so and no names\n"
		   "               are used (as in taskprof swimlane)\n"
		   "  -h, --help   this text\n\n"
		   "The header's counter columns are checked against the event group's\n"
		   "(docs/pmu.md \"Outputs\"): a column it does not write, or one of its\n"
		   "columns missing, is a warning; a column name given twice is an error.\n\n"
		   "exit status: 0 ok, 1 unreadable or malformed CSV or name map, 2 usage\n"
		   "error\n");
}

int pmu_report_main(int argc, char **argv, const struct pmu_counter_set *sets,
		    size_t n_sets)
{
	return pmu_report_run(argc, argv, sets, n_sets, NULL);
}

static int report_run(int argc, char **argv, const struct pmu_counter_set *sets, size_t n_sets,
		      int *stdout_err);

int pmu_report_run(int argc, char **argv, const struct pmu_counter_set *sets, size_t n_sets,
		   int *stdout_err)
{
	if (stdout_err)
		*stdout_err = 0;
	/* argparse's abbreviations: "--func" for --func-names. */
	static const char *const longs[] = { "--help", "--func-names" };
	char **words, err[256];
	int rc = tp_args_expand_abbrev(argc, argv, longs, 2, &words, err, sizeof(err));
	if (rc == -ENOMEM) {
		fprintf(stderr, "taskprof pmu: out of memory\n");
		return 1;
	}
	if (rc) {
		fprintf(stderr, "taskprof pmu: %s (see --help)\n", tp_shown(err));
		return 2;
	}
	rc = report_run(argc, words, sets, n_sets, stdout_err);
	tp_args_free(argc, argv, words);
	return rc;
}

static int report_run(int argc, char **argv, const struct pmu_counter_set *sets, size_t n_sets,
		      int *stdout_err)
{
	const char *path = NULL, *names_arg = NULL;
	bool opts_done = false;
	for (int i = 1; i < argc; i++) {
		if (!opts_done && !strcmp(argv[i], "--")) {
			opts_done = true; /* what follows is a path, even "-x" */
			continue;
		}
		if (opts_done)
			goto positional;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--func-names") || !strncmp(argv[i], "--func-names=", 13)) {
			if (argv[i][12] == '=') {
				names_arg = argv[i] + 13;
			} else if (i + 1 < argc && tp_arg_is_option(argv[i + 1])) {
				fprintf(stderr, "taskprof pmu: --func-names needs a file, got '%s', "
						"which is an option (see --help)\n",
						tp_shown(argv[i + 1]));
				return 2;
			} else if (i + 1 < argc) {
				names_arg = argv[++i];
			}
			if (!names_arg || !*names_arg) {
				fprintf(stderr, "taskprof pmu: --func-names needs a file\n");
				return 2;
			}
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "taskprof pmu: unknown option '%s' (see --help)\n",
				tp_shown(argv[i]));
			return 2;
		}
	positional:
		if (path) {
			fprintf(stderr, "taskprof pmu: expected one PMU_CSV, got '%s' and '%s'\n",
				tp_shown(path), tp_shown(argv[i]));
			return 2;
		}
		if (!argv[i][0]) {
			fprintf(stderr, "taskprof pmu: empty path for PMU_CSV (a pmu.csv or a run "
					"folder)\n");
			return 2;
		}
		path = argv[i];
	}
	/* No file: the newest run's; a run folder: its pmu.csv. */
	char *found = NULL;
	struct stat st;
	if (!path) {
		if (!(found = newest_pmu_csv()))
			return 1;
		path = found;
	} else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (asprintf(&found, "%s%spmu.csv", path,
			     path[strlen(path) - 1] == '/' ? "" : "/") < 0) {
			fprintf(stderr, "taskprof pmu: out of memory\n");
			return 1;
		}
		if (stat(found, &st) != 0) {
			char why[400];
			const bool failed = tp_run_failed(found, why, sizeof(why));
			fprintf(stderr, "taskprof pmu: %s: a folder without a pmu.csv (a run with "
					"--enable-pmu writes one when a task ran on an AICore)%s%s%s\n",
				tp_shown(path), failed ? "; the run failed (its result.txt: " : "",
				failed ? (why[0] ? tp_shown(why) : "status FAILED") : "",
				failed ? ")" : "");
			free(found);
			return 1;
		}
		path = found;
	}
	struct pmu_csv *c;
	if (pmu_csv_load(path, &c)) {
		fprintf(stderr, "taskprof pmu: %s\n", tp_last_error());
		free(found);
		return 1;
	}
	pmu_csv_check_counters(c, sets, n_sets, stderr);
	{
		char why[400];
		if (tp_run_failed(path, why, sizeof(why)))
			fprintf(stderr, "taskprof pmu: warning: %s is from a run that failed (its "
					"result.txt: %s): its rows stop where it failed, and tasks "
					"dispatched after the failure ran no kernel (rows of 0 "
					"cycles)\n",
				tp_shown(path), why[0] ? tp_shown(why) : "status FAILED");
	}
	/* Names as `taskprof swimlane` finds them: --func-names, else the
	 * unique sibling name map (several: the swimlane's warning, no names).
	 * Either one unreadable or malformed is an error naming the file and
	 * the place, as in the swimlane: a summary silently without names
	 * would hide a broken run folder. */
	struct sl_name_map nm;
	bool have_nm = false;
	char *names_path = names_arg ? strdup(names_arg) : sl_name_map_sibling(path, stderr);
	if (names_arg && !names_path) {
		fprintf(stderr, "taskprof pmu: out of memory\n");
		pmu_csv_free(c);
		free(found);
		return 1;
	}
	if (names_path) {
		if (sl_read_name_map(names_path, &nm)) {
			fprintf(stderr, "taskprof pmu: %s\n", tp_last_error());
			free(names_path);
			pmu_csv_free(c);
			free(found);
			return 1;
		}
		have_nm = true;
		if (names_arg)
			sl_name_map_warn_unnamed(&nm, names_path, "taskprof pmu", stderr);
		sl_name_map_warn_skipped(&nm, names_path, "taskprof pmu", stderr);
		free(names_path);
	}
	int rc = pmu_report_print_named(c, have_nm ? &nm : NULL, stdout);
	if (have_nm)
		sl_name_map_free(&nm);
	pmu_csv_free(c);
	free(found);
	if (rc && stdout_err && rc != -ENOMEM) {
		*stdout_err = -rc; /* the caller reports it */
		return 0;
	}
	if (rc) {
		fprintf(stderr, "taskprof pmu: %s\n", tp_last_error());
		return 1;
	}
	return 0;
}
