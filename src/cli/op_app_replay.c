/* SPDX-License-Identifier: MIT */
/*
 * op_app_replay.c — application replay: match the launches of the P runs
 * of the application and move each matched launch's pass files into one
 * directory (spec/opprof.md §4.7; docs/op-internals.md "Application
 * replay").
 *
 * A launch is identified across runs by its key — device, name (the
 * folder name and the real name), and with
 * --app-replay-match grid also block_dim — and its occurrence: the j-th
 * launch with that key in a run matches the j-th in every other run. Run i
 * wrote its launch of pass i under raw/run_<i>/device<D>/<name>/<k_i>/; the
 * merged directory is device<D>/<name>/<k_0>/ (k as run 0 numbered it).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "cli/op_launch.h"

/* One line of launches.txt. */
struct op_launch {
	int device;
	char name[256];
	uint32_t block_dim;
	int k;
	int profiled;
	char real[512]; /* the real name (real=, %XX decoded), "": none given */
	int occ; /* occurrence of its key in the run, from 0 (computed) */
};

struct op_run {
	struct op_launch *v;
	size_t n;
};

/* Names become directory names as the injector makes them:
 * [A-Za-z0-9_.-], anything else '_' (docs/op-internals.md). */
static void sanitise(char *s)
{
	for (; *s; s++) {
		char c = *s;
		bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
		if (!ok)
			*s = '_';
	}
}

/* Parse one "device=D name=N block_dim=B k=K profiled=P" line. */
static int parse_line(char *line, struct op_launch *l)
{
	int have = 0;
	memset(l, 0, sizeof(*l));
	for (char *save = NULL, *tok = strtok_r(line, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return -1;
		*eq = 0;
		const char *v = eq + 1;
		char *end;
		errno = 0;
		if (!strcmp(tok, "name")) {
			if (!*v || strlen(v) >= sizeof(l->name))
				return -1;
			snprintf(l->name, sizeof(l->name), "%s", v);
			have |= 1;
			continue;
		}
		if (!strcmp(tok, "real")) {
			/* %XX decoded; a malformed escape or a name too long
			 * is a malformed line */
			size_t o = 0;
			for (const char *c = v; *c; c++) {
				unsigned x;
				if (*c == '%') {
					/* two hex digits, not 00 (no NUL in a name) */
					if (!isxdigit((unsigned char)c[1]) ||
					    !isxdigit((unsigned char)c[2]) ||
					    sscanf(c + 1, "%2x", &x) != 1 || !x)
						return -1;
					c += 2;
				} else {
					x = (unsigned char)*c;
				}
				if (o + 1 >= sizeof(l->real))
					return -1;
				l->real[o++] = (char)x;
			}
			l->real[o] = '\0';
			continue;
		}
		long long x = strtoll(v, &end, 10);
		if (errno || end == v || *end || x < 0)
			return -1;
		if (!strcmp(tok, "device")) {
			l->device = (int)x;
			have |= 2;
		} else if (!strcmp(tok, "block_dim")) {
			l->block_dim = (uint32_t)x;
			have |= 4;
		} else if (!strcmp(tok, "k")) {
			l->k = (int)x;
			have |= 8;
		} else if (!strcmp(tok, "profiled")) {
			if (x > 1)
				return -1;
			l->profiled = (int)x;
			have |= 16;
		}
		/* Other keys: later additions of the injector, ignored. */
	}
	return have == 31 ? 0 : -1;
}

/* Read @path into @r. A missing file is a run that launched nothing. */
static int read_run(const char *path, struct op_run *r)
{
	char *data = NULL;
	size_t len;
	r->v = NULL;
	r->n = 0;
	int rc = tp_read_file(path, &data, &len);
	if (rc == -ENOENT)
		return -ENOENT;
	if (rc)
		return tp_set_error(rc, "%s: %s", path, strerror(-rc));
	size_t cap = 0;
	int lineno = 0;
	for (char *save = NULL, *line = strtok_r(data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (!*line || *line == '#')
			continue;
		if (r->n == cap) {
			cap = cap ? 2 * cap : 64;
			struct op_launch *nv = realloc(r->v, cap * sizeof(*nv));
			if (!nv) {
				free(data);
				return tp_set_error(-ENOMEM, "%s: out of memory", path);
			}
			r->v = nv;
		}
		if (parse_line(line, &r->v[r->n])) {
			free(data);
			return tp_set_error(-EINVAL, "%s: line %d: expected 'device=<D> name=<name> "
						     "block_dim=<n> k=<k> profiled=<0|1>' and optionally "
						     "'real=<name, %%XX escapes>'",
					    path, lineno);
		}
		sanitise(r->v[r->n].name);
		r->n++;
	}
	free(data);
	return 0;
}

int op_count_launches(const char *path, int *n_launches, int *n_profiled)
{
	struct op_run r;
	*n_launches = 0;
	*n_profiled = 0;
	int rc = read_run(path, &r);
	if (rc) {
		free(r.v);
		return rc;
	}
	*n_launches = (int)r.n;
	for (size_t i = 0; i < r.n; i++)
		*n_profiled += r.v[i].profiled;
	free(r.v);
	return 0;
}

static enum op_match g_match; /* for the qsort comparator */

static int key_cmp(const struct op_launch *a, const struct op_launch *b)
{
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	/* Two real names that sanitise alike are two kernels. */
	c = strcmp(a->real, b->real);
	if (c)
		return c;
	if (g_match == OP_MATCH_GRID && a->block_dim != b->block_dim)
		return a->block_dim < b->block_dim ? -1 : 1;
	return 0;
}

static int sort_cmp(const void *pa, const void *pb)
{
	const struct op_launch *a = pa, *b = pb;
	int c = key_cmp(a, b);
	if (c)
		return c;
	return a->occ < b->occ ? -1 : a->occ > b->occ;
}

/* Number each launch's occurrence of its key within its run. O(n^2) on
 * purpose: a run profiles at most a few thousand launches. */
static void number_occurrences(struct op_run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		int occ = 0;
		for (size_t j = 0; j < i; j++)
			occ += !key_cmp(&r->v[j], &r->v[i]);
		r->v[i].occ = occ;
	}
}

/* The name messages give @l: its real name, else (an older
 * launches.txt) its folder name; a control character in it (a newline,
 * an escape sequence) as '?', so it cannot forge a line or recolour the
 * terminal. Returns @buf (@n bytes). */
static const char *lname_in(const struct op_launch *l, char *buf, size_t n)
{
	snprintf(buf, n, "%s", l->real[0] ? l->real : l->name);
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return buf;
}
#define lname(l) lname_in((l), (char[sizeof((l)->real)]){ 0 }, sizeof((l)->real))

static void describe(const struct op_launch *l, char *buf, size_t len)
{
	if (!l)
		snprintf(buf, len, "no launch");
	else
		snprintf(buf, len, "device %d %s block_dim %" PRIu32 "%s", l->device,
			 lname(l), l->block_dim,
			 l->profiled ? " (profiled)" : "");
}

/* Find the launch of @r matching key and occurrence of @l, or NULL. */
static const struct op_launch *find(const struct op_run *r, const struct op_launch *l)
{
	for (size_t i = 0; i < r->n; i++)
		if (!key_cmp(&r->v[i], l) && r->v[i].occ == l->occ)
			return &r->v[i];
	return NULL;
}

/* Strict: run @i makes the same launches as run 0, in the same order. */
static int check_strict(const struct op_run *r0, const struct op_run *ri, int i)
{
	size_t n = r0->n > ri->n ? r0->n : ri->n;
	for (size_t j = 0; j < n; j++) {
		const struct op_launch *a = j < r0->n ? &r0->v[j] : NULL;
		const struct op_launch *b = j < ri->n ? &ri->v[j] : NULL;
		if (a && b && !key_cmp(a, b) && a->profiled == b->profiled)
			continue;
		char da[640], db[640];
		describe(a, da, sizeof(da));
		describe(b, db, sizeof(db));
		return tp_set_error(-EPROTO, "application replay (strict): launch #%zu differs: "
					     "run 1 (pass 0) made %s, run %d (pass %d) made %s "
					     "(the application must launch the same kernels in "
					     "the same order in every run; try "
					     "--app-replay-mode balanced or relaxed)",
				    j, da, i + 1, i, db);
	}
	return 0;
}

/* Balanced: the same launches as run 0, in any order; the profiled ones
 * the same. @s0, @si: the runs sorted by key and occurrence. */
static int check_balanced(const struct op_run *s0, const struct op_run *si, int i)
{
	size_t n = s0->n > si->n ? s0->n : si->n;
	for (size_t j = 0; j < n; j++) {
		const struct op_launch *a = j < s0->n ? &s0->v[j] : NULL;
		const struct op_launch *b = j < si->n ? &si->v[j] : NULL;
		if (a && b && !key_cmp(a, b) && a->occ == b->occ && a->profiled == b->profiled)
			continue;
		/* Name the launch that one run has and the other lacks: the
		 * smaller of the two in sort order. */
		const struct op_launch *x = a;
		int in = 0, out = i;
		if (!a || (b && sort_cmp(b, a) < 0)) {
			x = b;
			in = i;
			out = 0;
		}
		char dx[640];
		describe(x, dx, sizeof(dx));
		if (a && b && !key_cmp(a, b) && a->occ == b->occ)
			return tp_set_error(-EPROTO, "application replay (balanced): launch %d of "
						     "%s is profiled in run %d (pass %d) but not in "
						     "run %d (pass %d) (try --app-replay-mode relaxed)",
					    a->occ, lname(a), (a->profiled ? 0 : i) + 1,
					    a->profiled ? 0 : i, (a->profiled ? i : 0) + 1,
					    a->profiled ? i : 0);
		return tp_set_error(-EPROTO, "application replay (balanced): run %d (pass %d) "
					     "made %s (occurrence %d), run %d (pass %d) did not "
					     "(every run must make the same launches; try "
					     "--app-replay-mode relaxed)",
				    in + 1, in, dx, x->occ, out + 1, out);
	}
	return 0;
}

/* Copy @src to @dst whole (a small text file). */
static int copy_file(const char *src, const char *dst)
{
	char *data = NULL;
	size_t len;
	int rc = tp_read_file(src, &data, &len);
	if (rc)
		return rc;
	rc = tp_write_file_atomic(dst, data, len);
	free(data);
	return rc;
}

/*
 * launch.txt of the merged launch: run 0's with passes, passes_done and
 * replay_mode replaced (appended when absent), status degraded when a
 * pass is missing.
 */
/* Run 0's launch.txt @src as the merged launch's @dst: with @done of
 * @passes pass files, status ok becomes degraded when passes are missing
 * or @why is set (NULL: nothing else wrong), and an empty note says why. */
static int write_launch_txt(const char *src, const char *dst, int passes, int done,
			    const char *why)
{
	char *data = NULL;
	size_t len;
	int rc = tp_read_file(src, &data, &len);
	if (rc)
		return tp_set_error(rc, "%s: %s", src, strerror(-rc));
	struct tp_file_tx tx;
	rc = tp_file_tx_begin(&tx, dst, NULL);
	if (rc) {
		free(data);
		return rc;
	}
	bool have_status = false;
	for (char *save = NULL, *line = strtok_r(data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "passes=", 7) || !strncmp(line, "passes_done=", 12) ||
		    !strncmp(line, "replay_mode=", 12))
			continue;
		if (!strncmp(line, "status=", 7)) {
			have_status = true;
			if ((done < passes || why) && !strcmp(line + 7, "ok")) {
				fprintf(tx.fp, "status=degraded\n");
				continue;
			}
		}
		if (!strncmp(line, "note=", 5) && (done < passes || why) && !line[5]) {
			if (done < passes)
				fprintf(tx.fp, "note=application replay: %d of %d pass files found%s%s\n",
					done, passes, why ? "; " : "", why ? why : "");
			else
				fprintf(tx.fp, "note=%s\n", why);
			continue;
		}
		fprintf(tx.fp, "%s\n", line);
	}
	if (!have_status)
		fprintf(tx.fp, "status=%s\n", done < passes || why ? "degraded" : "ok");
	fprintf(tx.fp, "replay_mode=application\npasses=%d\npasses_done=%d\n", passes, done);
	free(data);
	return tp_file_tx_commit(&tx);
}

/* Append the lines of @src (if it exists) to @fp. */
static void append_file(const char *src, FILE *fp)
{
	char *data = NULL;
	size_t len;
	if (tp_read_file(src, &data, &len))
		return;
	fwrite(data, 1, len, fp);
	if (len && data[len - 1] != '\n')
		fputc('\n', fp);
	free(data);
}

/* Assemble one matched launch @l0 (of run 0) from the @runs runs. */
static int merge_launch(const char *out, const struct op_run *runs, int n_runs, int passes,
			const struct op_launch *l0)
{
	char dst[4096], path[4096], src[4096];
	if (op_pathf(dst, sizeof(dst), "%s/device%d/%s/%d", out, l0->device, l0->name, l0->k))
		return tp_set_error(-ENAMETOOLONG, "%s: path too long", dst);
	op_pathf(path, sizeof(path), "%s/dump", dst);
	int rc = tp_mkdir_p(path, 0755);
	if (rc)
		return tp_set_error(rc, "%s: cannot create: %s", path, strerror(-rc));
	op_pathf(path, sizeof(path), "%s/dump/replay.txt", dst);
	struct tp_file_tx replay;
	rc = tp_file_tx_begin(&replay, path, NULL);
	if (rc)
		return rc;
	int done = 0;
	/* --app-replay-match name: a run whose launch had another block_dim
	 * (the first such run): the merged blocks lack its pass's counters
	 * where the grids differ. */
	const struct op_launch *grid = NULL;
	int grid_run = 0;
	for (int i = 0; i < n_runs; i++) {
		const struct op_launch *li = find(&runs[i], l0);
		if (!li)
			continue; /* relaxed: not kept unless in every run */
		if (li->block_dim != l0->block_dim && !grid) {
			grid = li;
			grid_run = i;
		}
		char rdir[4096];
		op_pathf(rdir, sizeof(rdir), "%s/raw/run_%d/device%d/%s/%d", out, i, li->device,
			 li->name, li->k);
		op_pathf(src, sizeof(src), "%s/dump/pass_%d.bin", rdir, i);
		op_pathf(path, sizeof(path), "%s/dump/pass_%d.bin", dst, i);
		if (rename(src, path) == 0)
			done++;
		else
			fprintf(stderr, "taskprof op: warning: %s: %s (pass %d of %s is missing)\n",
				tp_shown(src), strerror(errno), i, tp_shown(l0->name));
		op_pathf(src, sizeof(src), "%s/dump/replay.txt", rdir);
		append_file(src, replay.fp);
		if (i == 0) {
			op_pathf(src, sizeof(src), "%s/dump/instr.txt", rdir);
			op_pathf(path, sizeof(path), "%s/dump/instr.txt", dst);
			if (access(src, F_OK) == 0 && copy_file(src, path))
				fprintf(stderr, "taskprof op: warning: %s\n", tp_last_error());
		}
	}
	rc = tp_file_tx_commit(&replay);
	if (rc)
		return rc;
	char rdir0[4096];
	op_pathf(rdir0, sizeof(rdir0), "%s/raw/run_0/device%d/%s/%d/launch.txt", out, l0->device,
		 l0->name, l0->k);
	op_pathf(path, sizeof(path), "%s/launch.txt", dst);
	char why[200];
	if (grid) {
		snprintf(why, sizeof(why),
			 "block_dim %" PRIu32 " in run 1 but %" PRIu32 " in run %d (pass %d): "
			 "the blocks they do not share lack that pass's counters",
			 l0->block_dim, grid->block_dim, grid_run + 1, grid_run);
		fprintf(stderr, "taskprof op: warning: application replay: launch %d of %s: %s "
				"(N/A; --app-replay-match grid keeps such launches apart)\n",
			l0->occ, lname(l0), why);
	}
	return write_launch_txt(rdir0, path, passes, done, grid ? why : NULL);
}

int op_app_replay_merge(const char *out, int n_runs, int passes, enum op_match match,
			enum op_app_mode mode, int *n_launches, int *n_merged, int *n_dropped)
{
	g_match = match;
	*n_launches = 0;
	*n_merged = 0;
	*n_dropped = 0;
	struct op_run *runs = calloc((size_t)n_runs, sizeof(*runs));
	struct op_run *sorted = calloc((size_t)n_runs, sizeof(*sorted));
	int rc = 0;
	if (!runs || !sorted) {
		rc = tp_set_error(-ENOMEM, "out of memory matching %d runs", n_runs);
		goto done;
	}
	for (int i = 0; i < n_runs && !rc; i++) {
		char path[4096];
		op_pathf(path, sizeof(path), "%s/raw/run_%d/launches.txt", out, i);
		rc = read_run(path, &runs[i]);
		if (rc == -ENOENT)
			rc = 0;
		if (rc)
			break;
		number_occurrences(&runs[i]);
		sorted[i].n = runs[i].n;
		sorted[i].v = malloc((runs[i].n ? runs[i].n : 1) * sizeof(*sorted[i].v));
		if (!sorted[i].v) {
			rc = tp_set_error(-ENOMEM, "out of memory matching run %d", i);
			break;
		}
		if (runs[i].n) /* memcpy / qsort of NULL are undefined even for 0 */
			memcpy(sorted[i].v, runs[i].v, runs[i].n * sizeof(*runs[i].v));
		if (sorted[i].n)
			qsort(sorted[i].v, sorted[i].n, sizeof(*sorted[i].v), sort_cmp);
	}
	if (rc)
		goto done;
	*n_launches = (int)runs[0].n;
	for (int i = 1; i < n_runs && !rc; i++) {
		if (mode == OP_APP_STRICT)
			rc = check_strict(&runs[0], &runs[i], i);
		else if (mode == OP_APP_BALANCED)
			rc = check_balanced(&sorted[0], &sorted[i], i);
	}
	if (rc)
		goto done;
	/* Relaxed: a profiled launch of any run that some run lacks (or did
	 * not profile) is dropped with a warning; launches only the other
	 * runs profiled are named once, from the first run that has them. */
	for (int i = 0; i < n_runs; i++) {
		for (size_t j = 0; j < runs[i].n; j++) {
			const struct op_launch *l = &runs[i].v[j];
			if (!l->profiled)
				continue;
			int missing = -1;
			bool seen_before = false;
			for (int m = 0; m < n_runs; m++) {
				const struct op_launch *o = find(&runs[m], l);
				if (m < i && o && o->profiled)
					seen_before = true;
				if ((!o || !o->profiled) && missing < 0)
					missing = m;
			}
			if (missing < 0 || seen_before)
				continue;
			(*n_dropped)++;
			fprintf(stderr, "taskprof op: warning: application replay (relaxed): "
					"launch %d of %s on device %d (block_dim %" PRIu32 ") "
					"is not profiled in run %d (pass %d); dropped\n",
				l->occ, lname(l), l->device, l->block_dim, missing + 1, missing);
		}
	}
	for (size_t j = 0; j < runs[0].n && !rc; j++) {
		const struct op_launch *l = &runs[0].v[j];
		if (!l->profiled)
			continue;
		bool everywhere = true;
		for (int m = 1; m < n_runs; m++) {
			const struct op_launch *o = find(&runs[m], l);
			if (!o || !o->profiled)
				everywhere = false;
		}
		if (!everywhere)
			continue;
		/* A launch without its launch.txt in some run was cut short
		 * there (the application exited while it was profiled: its
		 * pass never completed), as kernel replay skips such a launch
		 * as incomplete: nothing to merge. */
		int cut = -1;
		for (int m = 0; m < n_runs && cut < 0; m++) {
			const struct op_launch *o = m ? find(&runs[m], l) : l;
			char lt[4096];
			if (op_pathf(lt, sizeof(lt), "%s/raw/run_%d/device%d/%s/%d/launch.txt", out, m,
				     o->device, o->name, o->k) || access(lt, F_OK))
				cut = m;
		}
		if (cut >= 0) {
			fprintf(stderr, "taskprof op: warning: application replay: launch %d of %s "
					"on device %d is incomplete in run %d (pass %d: no launch.txt, "
					"the application ended during it?); skipped\n",
				l->occ, lname(l), l->device, cut + 1, cut);
			continue;
		}
		rc = merge_launch(out, runs, n_runs, passes, l);
		if (!rc)
			(*n_merged)++;
	}
done:
	for (int i = 0; runs && i < n_runs; i++)
		free(runs[i].v);
	for (int i = 0; sorted && i < n_runs; i++)
		free(sorted[i].v);
	free(runs);
	free(sorted);
	return rc;
}
