/* SPDX-License-Identifier: MIT */
/*
 * op/report/report.c — one launch directory in, the CSV / JSON / trace
 * files of spec/opprof.md §4.12 out (formats: docs/op-internals.md,
 * docs/op-metrics.md).
 */
#include "op/report/report.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "base/error.h"
#include "base/file.h"
#include "base/log.h"
#include "op/groups.h"
#include "op/report/json_out.h"
#include "taskprof/kernel.h"

static const char *const cname[2] = { "AIC", "AIV" };
static const char *const cname_lc[2] = { "aic", "aiv" };

/* ---- launch.txt --------------------------------------------------------- */

struct launch_info {
	char name[256];
	uint32_t block_dim;
	char cores[16];
	int64_t pid;
	int device;
	char platform[32];
	char arch[16];
	uint64_t sys_cnt_freq;
	uint64_t core_freq_hz;
	char replay_mode[32];
	uint32_t warm_up;
	bool has_warm_up;
	uint32_t passes, passes_done;
	char status[32];
	char note[512];
	char snapshot_scope[16];
	uint64_t snapshot_bytes;
	char range[256];
};

static bool parse_u64(const char *v, uint64_t *out)
{
	if (!isdigit((unsigned char)*v))
		return false;
	errno = 0;
	char *end;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || *end)
		return false;
	*out = x;
	return true;
}

static int read_launch_txt(const char *path, struct launch_info *li)
{
	char *data = NULL;
	int rc = tp_read_file(path, &data, NULL);
	if (rc)
		return tp_set_error(rc, "%s: cannot read: %s", path, strerror(-rc));
	memset(li, 0, sizeof(*li));
	li->device = -1;
	snprintf(li->status, sizeof(li->status), "ok");
	bool have_name = false;
	int line = 0;
	char *p = data;
	char *s;
	while ((s = tp_op_text_next_line(&p, &line))) {
		char *k, *v;
		if ((rc = tp_op_text_kv(s, path, line, &k, &v)))
			goto out;
		uint64_t u = 0;
		const char *expect = NULL;
#define STR(key, field)                                                   \
	if (!strcmp(k, key)) {                                            \
		snprintf(li->field, sizeof(li->field), "%s", v);          \
		continue;                                                 \
	}
#define NUM(key, field, max)                                              \
	if (!strcmp(k, key)) {                                            \
		if (!parse_u64(v, &u) || u > (max))                       \
			expect = "a non-negative integer";                \
		else                                                      \
			li->field = (__typeof__(li->field))u;             \
		goto check;                                               \
	}
		if (!strcmp(k, "name")) {
			snprintf(li->name, sizeof(li->name), "%s", v);
			have_name = true;
			continue;
		}
		STR("cores", cores)
		STR("platform", platform)
		STR("arch", arch)
		STR("replay_mode", replay_mode)
		STR("status", status)
		STR("note", note)
		STR("snapshot_scope", snapshot_scope)
		STR("range", range)
		NUM("block_dim", block_dim, UINT32_MAX)
		NUM("pid", pid, INT64_MAX)
		NUM("device", device, INT_MAX)
		NUM("sys_cnt_freq", sys_cnt_freq, UINT64_MAX)
		NUM("core_freq_hz", core_freq_hz, UINT64_MAX)
		NUM("passes", passes, TP_OP_MAX_PASSES)
		NUM("passes_done", passes_done, TP_OP_MAX_PASSES)
		NUM("snapshot_bytes", snapshot_bytes, UINT64_MAX)
		if (!strcmp(k, "warm_up")) {
			if (!parse_u64(v, &u) || u > UINT32_MAX)
				expect = "a non-negative integer";
			li->warm_up = (uint32_t)u;
			li->has_warm_up = true;
		}
		/* Other keys: a newer injector's additions, not ours to refuse. */
check:
		if (expect) {
			rc = tp_set_error(-EINVAL, "%s:%d: %s: expected %s, got '%.80s'", path, line, k,
					  expect, v);
			goto out;
		}
#undef STR
#undef NUM
	}
	if (!have_name)
		rc = tp_set_error(-EINVAL, "%s: missing key 'name'", path);
	else if (li->device < 0)
		rc = tp_set_error(-EINVAL, "%s: missing key 'device'", path);
out:
	free(data);
	return rc;
}

/* ---- dump/replay.txt ------------------------------------------------------ */

struct replay_row {
	bool present;
	uint64_t restored_bytes;
	char hash[17];
	uint64_t wall_ns, kernel_ns;
};

static int read_replay_txt(const char *path, struct replay_row *rows, uint32_t npasses)
{
	char *data = NULL;
	int rc = tp_read_file(path, &data, NULL);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return tp_set_error(rc, "%s: cannot read: %s", path, strerror(-rc));
	int line = 0;
	char *p = data;
	char *s;
	while ((s = tp_op_text_next_line(&p, &line))) {
		struct replay_row r = { .present = true };
		uint64_t pass = UINT64_MAX;
		char *save = NULL;
		for (char *tok = strtok_r(s, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
			char *eq = strchr(tok, '=');
			if (!eq) {
				rc = tp_set_error(-EINVAL, "%s:%d: expected key=value fields, got '%.40s'",
						  path, line, tok);
				goto out;
			}
			*eq = '\0';
			const char *v = eq + 1;
			bool ok = true;
			if (!strcmp(tok, "pass"))
				ok = parse_u64(v, &pass);
			else if (!strcmp(tok, "restored_bytes"))
				ok = parse_u64(v, &r.restored_bytes);
			else if (!strcmp(tok, "wall_ns"))
				ok = parse_u64(v, &r.wall_ns);
			else if (!strcmp(tok, "kernel_ns"))
				ok = parse_u64(v, &r.kernel_ns);
			else if (!strcmp(tok, "output_hash")) {
				ok = strlen(v) == 16;
				for (int i = 0; ok && i < 16; i++)
					ok = isxdigit((unsigned char)v[i]);
				if (ok)
					snprintf(r.hash, sizeof(r.hash), "%s", v);
			}
			if (!ok) {
				rc = tp_set_error(-EINVAL, "%s:%d: %s: expected %s, got '%.40s'", path,
						  line, tok,
						  strcmp(tok, "output_hash") ? "a non-negative integer"
									     : "16 hex digits",
						  v);
				goto out;
			}
		}
		if (pass == UINT64_MAX) {
			rc = tp_set_error(-EINVAL, "%s:%d: missing pass=", path, line);
			goto out;
		}
		if (pass >= npasses) {
			TP_WARN("%s:%d: pass %" PRIu64 " is not in the plan (%u passes); ignored",
				tp_shown(path), line, pass, npasses);
			continue;
		}
		rows[pass] = r;
	}
out:
	free(data);
	return rc;
}

/* ---- dump/instr.txt ------------------------------------------------------- */

static const char *const kind_names[] = {
	NULL, "block_begin", "block_end", "mark", "range_begin", "range_end", "scalar_begin",
	"scalar_end",
};

struct ipoint {
	uint32_t block;
	int32_t core;
	int kind;
	uint32_t id;
	char name[128];
	uint64_t t;
	uint64_t cycles;
};

struct instr {
	bool present;
	struct ipoint *pts;
	size_t n, cap;
	uint32_t *ovf_block;
	uint64_t *ovf_count;
	size_t novf;
};

static void instr_free(struct instr *in)
{
	free(in->pts);
	free(in->ovf_block);
	free(in->ovf_count);
	memset(in, 0, sizeof(*in));
}

static int read_instr_txt(const char *path, struct instr *in)
{
	char *data = NULL;
	memset(in, 0, sizeof(*in));
	int rc = tp_read_file(path, &data, NULL);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return tp_set_error(rc, "%s: cannot read: %s", path, strerror(-rc));
	in->present = true;
	int line = 0;
	char *p = data;
	char *s;
	while ((s = tp_op_text_next_line(&p, &line))) {
		unsigned long long a, b;
		int used = 0;
		if (!strncmp(s, "overflow", 8)) {
			if (sscanf(s, "overflow %llu %llu%n", &a, &b, &used) != 2 || s[used] ||
			    a > UINT32_MAX) {
				rc = tp_set_error(-EINVAL, "%s:%d: expected 'overflow <block> <count>', "
						  "got '%.80s'", path, line, s);
				goto out;
			}
			uint32_t *nb = realloc(in->ovf_block, (in->novf + 1) * sizeof(*nb));
			if (nb)
				in->ovf_block = nb;
			uint64_t *nc = realloc(in->ovf_count, (in->novf + 1) * sizeof(*nc));
			if (nc)
				in->ovf_count = nc;
			if (!nb || !nc) {
				rc = tp_set_error(-ENOMEM, "%s: out of memory", path);
				goto out;
			}
			in->ovf_block[in->novf] = (uint32_t)a;
			in->ovf_count[in->novf++] = b;
			continue;
		}
		struct ipoint pt = { 0 };
		char kind[32];
		unsigned long blk, id;
		long core;
		if (sscanf(s, "%lu %ld %31s %lu %127s %llu %llu%n", &blk, &core, kind, &id, pt.name,
			   &a, &b, &used) != 7 || s[used] || blk > UINT32_MAX || id > UINT32_MAX) {
			rc = tp_set_error(-EINVAL, "%s:%d: expected 'block core kind id name t_ticks "
					  "cycles', got '%.80s'", path, line, s);
			goto out;
		}
		for (int k = 1; k <= 7; k++)
			if (!strcmp(kind, kind_names[k]))
				pt.kind = k;
		if (!pt.kind) {
			rc = tp_set_error(-EINVAL, "%s:%d: kind: expected block_begin, block_end, mark, "
					  "range_begin, range_end, scalar_begin or scalar_end, got '%s'",
					  path, line, kind);
			goto out;
		}
		pt.block = (uint32_t)blk;
		pt.core = (int32_t)core;
		pt.id = (uint32_t)id;
		pt.t = a;
		pt.cycles = b;
		if (in->n == in->cap) {
			size_t cap = in->cap ? 2 * in->cap : 64;
			struct ipoint *np = realloc(in->pts, cap * sizeof(*np));
			if (!np) {
				rc = tp_set_error(-ENOMEM, "%s: out of memory", path);
				goto out;
			}
			in->pts = np;
			in->cap = cap;
		}
		in->pts[in->n++] = pt;
	}
out:
	free(data);
	return rc;
}

/* ---- helpers -------------------------------------------------------------- */

struct rep {
	const char *dir;
	const struct tp_op_config *cfg;
	const struct tp_op_plan *plan;
	struct launch_info li;
	uint32_t k;
	uint32_t groups;
	struct tp_op_merge m;
	struct replay_row *replay;
	struct instr in;
	double freq;        /* core Hz */
	double sys_freq;    /* ticks per second, 0 = unknown */
	uint32_t passes_present;
	int last_launch;    /* the last pass with a LAUNCH record, -1 none */
	double duration_us; /* < 0: unknown */
	bool consistent;
	uint32_t checked;   /* passes whose output hash was compared */
	const char *op_type;
	uint32_t blocks_on[2];
	double max_dev_pct; /* < 0: unknown */
	/* The report files begun so far: removed when a later one fails. */
	char made[24][40];
	unsigned n_made;
};

static void csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int open_out(struct rep *r, const char *file, struct tp_file_tx *tx)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s", r->dir, file) >= (int)sizeof(path))
		return tp_set_error(-ENAMETOOLONG, "%s/%s: path too long", r->dir, file);
	/* Every file begun is recorded whole, or the report does not begin
	 * it: remove_made() must not miss a file or unlink a cut name. A
	 * report writes at most 14 files of names up to 25 bytes. */
	if (r->n_made >= sizeof(r->made) / sizeof(r->made[0]) ||
	    strlen(file) >= sizeof(r->made[0]))
		return tp_set_error(-EOVERFLOW, "%s/%s: the report's list of its files is full "
				    "(%u of %zu names, at most %zu bytes each)", r->dir, file,
				    r->n_made, sizeof(r->made) / sizeof(r->made[0]),
				    sizeof(r->made[0]) - 1);
	memcpy(r->made[r->n_made++], file, strlen(file) + 1);
	return tp_file_tx_begin(tx, path, NULL);
}

/* A report that failed half-way: the files it had written are removed, so
 * that the launch folder (launch.txt status=ok, dump/) does not look like
 * one with a finished report; the message says so. */
static void remove_made(struct rep *r, int rc)
{
	char path[PATH_MAX];
	unsigned removed = 0;
	for (unsigned i = 0; i < r->n_made; i++)
		if (snprintf(path, sizeof(path), "%s/%s", r->dir, r->made[i]) < (int)sizeof(path) &&
		    unlink(path) == 0)
			removed++;
	if (removed)
		tp_set_error(rc, "%s; the report's files written before it were removed (%u: "
			     "launch.txt and dump/ stay)", tp_last_error(), removed);
}

/*
 * Publish @tx, or remove its temporary file and say why the write failed
 * (ENOSPC, EFBIG past `ulimit -f`, EIO), naming the file. The flush comes
 * first: it writes the rest of the buffer and fails with the cause again,
 * whereas the errno of an earlier failed fprintf is long gone.
 */
static int close_out(struct tp_file_tx *tx)
{
	errno = 0;
	if (fflush(tx->fp) != 0 || ferror(tx->fp)) {
		int err = errno ? errno : EIO;
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s", tx->path);
		tp_file_tx_abort(tx, false);
		return tp_set_error(-err, "%s: write failed: %s", p, strerror(err));
	}
	return tp_file_tx_commit(tx);
}

static double ticks_us(const struct rep *r, uint64_t ticks)
{
	return r->sys_freq > 0 ? (double)ticks * 1e6 / r->sys_freq : NAN;
}

/* Evaluate metric @mt of block @b: false when N/A. */
static bool eval_metric(const struct rep *r, const struct tp_op_mblock *b,
			const struct tp_op_metric *mt, double *out)
{
	uint64_t vals[TP_OP_METRIC_MAX_EV];
	bool have[TP_OP_METRIC_MAX_EV];
	if (!b->has_cycles[mt->core])
		return false;
	for (uint32_t i = 0; i < mt->n_ev; i++)
		have[i] = tp_op_merge_value(&r->m, b->block_id, b->sub_block, mt->core, mt->ev[i],
					    &vals[i]);
	/* The denominator comes from the pass that read the numerator: the
	 * planner put the metric's events in one pass so that numerator and
	 * cycles describe the same execution. The last pass's cycles (the
	 * reported ones) only when that pass has no record for the block. */
	uint64_t cycles = b->total_cycles[mt->core];
	for (size_t i = 0; i < b->nvals; i++) {
		const struct tp_op_mval *v = &b->vals[i];
		if (v->core != mt->core || v->id != mt->ev[0])
			continue;
		const struct tp_op_block_pass *bp = &b->per_pass[v->pass];
		if (bp->present && bp->core_type == mt->core)
			cycles = bp->total_cycles;
		break;
	}
	return tp_op_metric_eval(mt, vals, have, cycles, r->freq, out);
}

static int metric_prec(const struct tp_op_metric *mt)
{
	return mt->formula == TP_OP_F_COUNT ? 0 : mt->formula == TP_OP_F_RATIO ? 6 : 3;
}

/*
 * The total cycles of block @b on core type @c in the pass that read the
 * first of group @ga's events of that core type: a group's counters come
 * from one pass (the planner keeps its metrics' events together), and its
 * time columns must describe the same execution, or a row could show a
 * pipe busier than the block's whole time (on a 2-CPU simulator a block's
 * wall time differs from pass to pass). Without such a pass (no event of
 * that core type, or no record) the last pass's cycles, as msprof.
 */
static uint64_t group_cycles(const struct tp_op_mblock *b, const struct tp_op_group_arch *ga,
			     int c)
{
	for (uint32_t e = 0; e < ga->n_ev; e++) {
		if (!(ga->ev[e].cores & (1u << c)))
			continue;
		for (size_t i = 0; i < b->nvals; i++) {
			const struct tp_op_mval *v = &b->vals[i];
			if (v->core != c || v->id != ga->ev[e].id)
				continue;
			const struct tp_op_block_pass *bp = &b->per_pass[v->pass];
			if (bp->present && (int)bp->core_type == c)
				return bp->total_cycles;
			return b->total_cycles[c];
		}
	}
	return b->total_cycles[c];
}

static void put_cycles_cols(FILE *f, const struct rep *r, const struct tp_op_mblock *b,
			    const struct tp_op_group_arch *ga)
{
	for (int c = 0; c < 2; c++) {
		if (b->has_cycles[c]) {
			uint64_t cyc = ga ? group_cycles(b, ga, c) : b->total_cycles[c];
			fprintf(f, ",%.3f,%" PRIu64, (double)cyc / r->freq * 1e6, cyc);
		} else {
			fputs(",N/A,N/A", f);
		}
	}
}

/* ---- the files ------------------------------------------------------------ */

static int write_basic_info(struct rep *r)
{
	struct tp_file_tx tx;
	int rc = open_out(r, "OpBasicInfo.csv", &tx);
	if (rc)
		return rc;
	FILE *f = tx.fp;
	fputs("Op Name,Op Type,Task Duration(us),Block Dim,Mix Block Dim,Device ID,PID,"
	      "Current Freq,Rated Freq,Replay Mode,Passes,Warm-up,Replay Consistent\n", f);
	csv_str(f, r->li.name);
	fprintf(f, ",%s,", r->op_type);
	if (r->duration_us >= 0)
		fprintf(f, "%.3f", r->duration_us);
	else
		fputs("N/A", f);
	fprintf(f, ",%u,", r->li.block_dim);
	if (!strcmp(r->op_type, "mix"))
		fprintf(f, "%u", r->blocks_on[TP_OP_AIV]);
	else
		fputs("N/A", f);
	fprintf(f, ",%d,%" PRId64 ",%.0f,%.0f,", r->li.device, r->li.pid, r->freq / 1e6,
		(double)TP_CORE_FREQ_HZ / 1e6);
	csv_str(f, r->li.replay_mode[0] ? r->li.replay_mode
					: tp_op_replay_mode_name(r->cfg->replay_mode));
	fprintf(f, ",%u,%u,%s\n", r->passes_present,
		r->li.has_warm_up ? r->li.warm_up : r->cfg->warm_up,
		r->checked < 2 ? "N/A" : r->consistent ? "Yes" : "No");
	return close_out(&tx);
}

static int write_group(struct rep *r, int gi)
{
	const struct tp_op_group *g = tp_op_group_get(gi);
	const struct tp_op_group_arch *ga = &g->arch[r->plan->arch];
	char file[64];
	snprintf(file, sizeof(file), "%s.csv", g->name);
	struct tp_file_tx tx;
	int rc = open_out(r, file, &tx);
	if (rc)
		return rc;
	FILE *f = tx.fp;
	fputs("block_id,sub_block_id,aic_time(us),aic_total_cycles,aiv_time(us),aiv_total_cycles", f);
	for (uint32_t e = 0; e < ga->n_ev; e++)
		for (int c = 0; c < 2; c++)
			if (ga->ev[e].cores & (1u << c))
				fprintf(f, ",%s_%s", cname_lc[c], ga->ev[e].name);
	for (uint32_t i = 0; i < ga->n_metrics; i++)
		fprintf(f, ",%s", ga->metrics[i].column);
	fputc('\n', f);
	for (size_t bi = 0; bi < r->m.nblocks; bi++) {
		const struct tp_op_mblock *b = &r->m.blocks[bi];
		fprintf(f, "%u,%u", b->block_id, b->sub_block);
		put_cycles_cols(f, r, b, ga);
		for (uint32_t e = 0; e < ga->n_ev; e++) {
			for (int c = 0; c < 2; c++) {
				if (!(ga->ev[e].cores & (1u << c)))
					continue;
				uint64_t v;
				if (b->has_cycles[c] &&
				    tp_op_merge_value(&r->m, b->block_id, b->sub_block, c, ga->ev[e].id, &v))
					fprintf(f, ",%" PRIu64, v);
				else
					fputs(",N/A", f);
			}
		}
		for (uint32_t i = 0; i < ga->n_metrics; i++) {
			double v = 0;
			char buf[64];
			bool ok = eval_metric(r, b, &ga->metrics[i], &v);
			fprintf(f, ",%s", tp_op_metric_format(&ga->metrics[i], ok, v, buf, sizeof(buf)));
		}
		fputc('\n', f);
	}
	return close_out(&tx);
}

static int cmp_raw(const void *a, const void *b)
{
	const struct tp_op_raw *x = a, *y = b;
	if (x->block_id != y->block_id)
		return x->block_id < y->block_id ? -1 : 1;
	if (x->sub_block != y->sub_block)
		return x->sub_block < y->sub_block ? -1 : 1;
	if (x->pass != y->pass)
		return x->pass < y->pass ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int write_raw_events(struct rep *r)
{
	if (r->m.nraw) /* qsort(NULL, 0, ...) is undefined */
		qsort(r->m.raw, r->m.nraw, sizeof(*r->m.raw), cmp_raw);
	struct tp_file_tx tx;
	int rc = open_out(r, "RawEvents.csv", &tx);
	if (rc)
		return rc;
	FILE *f = tx.fp;
	fputs("block_id,sub_block_id,core_type,pass,event_id,value\n", f);
	for (size_t i = 0; i < r->m.nraw; i++) {
		const struct tp_op_raw *x = &r->m.raw[i];
		fprintf(f, "%u,%u,%s,%u,0x%02x,%" PRIu64 "\n", x->block_id, x->sub_block,
			cname[x->core], x->pass, x->id, x->value);
	}
	return close_out(&tx);
}

/* Per pass: the largest |cycles(p) - cycles(reported)| / cycles(reported)
 * over blocks that ran on the same core type in both, in %. */
static double pass_deviation(const struct rep *r, uint32_t p)
{
	double dev = -1;
	for (size_t bi = 0; bi < r->m.nblocks; bi++) {
		const struct tp_op_mblock *b = &r->m.blocks[bi];
		const struct tp_op_block_pass *bp = &b->per_pass[p];
		if (!bp->present || !b->has_cycles[bp->core_type])
			continue;
		uint64_t ref = b->total_cycles[bp->core_type];
		double d = ref ? fabs((double)bp->total_cycles - (double)ref) / (double)ref * 100.0
			       : (bp->total_cycles ? 100.0 : 0.0);
		if (d > dev)
			dev = d;
	}
	return dev;
}

static int write_replay_info(struct rep *r)
{
	struct tp_file_tx tx;
	int rc = open_out(r, "ReplayInfo.csv", &tx);
	if (rc)
		return rc;
	FILE *f = tx.fp;
	fputs("pass,aic_cycles_max,aiv_cycles_max,duration(us),restored_bytes,output_hash,"
	      "wall_ns,kernel_ns,cycle_deviation(%)\n", f);
	for (uint32_t p = 0; p < r->m.npasses; p++) {
		fprintf(f, "%u", p);
		for (int c = 0; c < 2; c++) {
			bool any = false;
			uint64_t mx = 0;
			for (size_t bi = 0; bi < r->m.nblocks; bi++) {
				const struct tp_op_block_pass *bp = &r->m.blocks[bi].per_pass[p];
				if (bp->present && bp->core_type == (uint32_t)c) {
					any = true;
					if (bp->total_cycles > mx)
						mx = bp->total_cycles;
				}
			}
			if (any)
				fprintf(f, ",%" PRIu64, mx);
			else
				fputs(",N/A", f);
		}
		const struct tp_op_pass_launch *l = &r->m.launch[p];
		if (l->present && r->sys_freq > 0 && l->t_end >= l->t_start)
			fprintf(f, ",%.3f", ticks_us(r, l->t_end - l->t_start));
		else
			fputs(",N/A", f);
		const struct replay_row *rr = &r->replay[p];
		if (rr->present)
			fprintf(f, ",%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64, rr->restored_bytes,
				rr->hash[0] ? rr->hash : "N/A", rr->wall_ns, rr->kernel_ns);
		else
			fputs(",N/A,N/A,N/A,N/A", f);
		double d = r->m.pass_present[p] ? pass_deviation(r, p) : -1;
		if (d >= 0)
			fprintf(f, ",%.3f\n", d);
		else
			fputs(",N/A\n", f);
	}
	return close_out(&tx);
}

static void json_u16_list(FILE *f, const uint16_t *v, uint32_t n)
{
	fputc('[', f);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s\"0x%02x\"", i ? "," : "", v[i]);
	fputc(']', f);
}

static int write_summary_json(struct rep *r)
{
	struct tp_file_tx tx;
	int rc = open_out(r, "summary.json", &tx);
	if (rc)
		return rc;
	FILE *f = tx.fp;
	fputs("{\n  \"format\": \"taskprof-op-summary\",\n  \"version\": 1,\n  \"launch\": {\"name\": ", f);
	tp_json_str(f, r->li.name);
	fprintf(f, ", \"device\": %d, \"k\": %u, \"block_dim\": %u, \"pid\": %" PRId64
		   ", \"platform\": ", r->li.device, r->k, r->li.block_dim, r->li.pid);
	tp_json_str(f, r->li.platform);
	fputs(", \"cores\": ", f);
	tp_json_str(f, r->li.cores);
	fputs(", \"replay_mode\": ", f);
	tp_json_str(f, r->li.replay_mode[0] ? r->li.replay_mode
					    : tp_op_replay_mode_name(r->cfg->replay_mode));
	fprintf(f, ", \"warm_up\": %u, \"status\": ",
		r->li.has_warm_up ? r->li.warm_up : r->cfg->warm_up);
	tp_json_str(f, r->li.status);
	fputs(", \"note\": ", f);
	tp_json_str(f, r->li.note);
	fputs(", \"snapshot_scope\": ", f);
	tp_json_str(f, r->li.snapshot_scope);
	fprintf(f, ", \"snapshot_bytes\": %" PRIu64 ", \"op_type\": ", r->li.snapshot_bytes);
	tp_json_str(f, r->op_type);
	fputs(", \"duration_us\": ", f);
	tp_json_num(f, r->duration_us >= 0 ? r->duration_us : NAN, 3);
	fprintf(f, ", \"core_freq_hz\": %.0f, \"sys_cnt_freq\": %.0f, \"replay_consistent\": %s},\n",
		r->freq, r->sys_freq,
		r->checked < 2 ? "null" : r->consistent ? "true" : "false");

	fprintf(f, "  \"plan\": {\"arch\": \"%s\", \"slots\": %u, \"passes\": [",
		tp_op_arch_name(r->plan->arch), r->plan->slots);
	for (uint32_t p = 0; p < r->m.npasses; p++) {
		fprintf(f, "%s\n    {\"pass\": %u, \"present\": %s, \"aic\": ", p ? "," : "", p,
			r->m.pass_present[p] ? "true" : "false");
		json_u16_list(f, r->plan->pass[p].ev[0], r->plan->pass[p].n[0]);
		fputs(", \"aiv\": ", f);
		json_u16_list(f, r->plan->pass[p].ev[1], r->plan->pass[p].n[1]);
		fputc('}', f);
	}
	fputs("]},\n  \"groups\": [", f);
	for (int g = 0, first = 1; g < TP_OP_NGROUPS; g++) {
		if (!(r->groups & (1u << g)))
			continue;
		fprintf(f, "%s\"%s\"", first ? "" : ", ", tp_op_group_name(g));
		first = 0;
	}
	fputs("],\n  \"blocks\": [", f);
	for (size_t bi = 0; bi < r->m.nblocks; bi++) {
		const struct tp_op_mblock *b = &r->m.blocks[bi];
		fprintf(f, "%s\n    {\"block_id\": %u, \"sub_block_id\": %u, \"core_type\": \"%s\", "
			   "\"core_id\": %d",
			bi ? "," : "", b->block_id, b->sub_block, cname[b->core_type], b->core_id);
		for (int c = 0; c < 2; c++) {
			fprintf(f, ", \"%s_total_cycles\": ", cname_lc[c]);
			if (b->has_cycles[c])
				fprintf(f, "%" PRIu64, b->total_cycles[c]);
			else
				fputs("null", f);
		}
		fputs(",\n     \"events\": [", f);
		for (size_t i = 0; i < b->nvals; i++) {
			const struct tp_op_mval *v = &b->vals[i];
			const char *nm = tp_op_event_name(r->plan->arch, v->id);
			fprintf(f, "%s{\"core\": \"%s\", \"id\": \"0x%02x\", \"name\": ", i ? ", " : "",
				cname[v->core], v->id);
			tp_json_str(f, nm ? nm : "");
			fprintf(f, ", \"value\": %" PRIu64 ", \"pass\": %u, \"mismatch\": %s", v->value,
				v->pass, v->mismatch ? "true" : "false");
			/* The block's cycles on that core type in the pass that read
			 * the value: the denominator that describes the same
			 * execution (the block's *_total_cycles are the last
			 * pass's; on this simulator a block's time varies from pass
			 * to pass). null when that pass has no record of it. */
			const struct tp_op_block_pass *bp = &b->per_pass[v->pass];
			if (bp->present && bp->core_type == v->core)
				fprintf(f, ", \"pass_total_cycles\": %" PRIu64 "}", bp->total_cycles);
			else
				fputs(", \"pass_total_cycles\": null}", f);
		}
		fputs("],\n     \"metrics\": {", f);
		for (int g = 0, firstg = 1; g < TP_OP_NGROUPS; g++) {
			if (!(r->groups & (1u << g)))
				continue;
			const struct tp_op_group_arch *ga = &tp_op_group_get(g)->arch[r->plan->arch];
			if (!ga->n_metrics)
				continue;
			fprintf(f, "%s\"%s\": {", firstg ? "" : ", ", tp_op_group_name(g));
			firstg = 0;
			for (uint32_t i = 0; i < ga->n_metrics; i++) {
				double v = 0;
				bool ok = eval_metric(r, b, &ga->metrics[i], &v);
				fprintf(f, "%s", i ? ", " : "");
				tp_json_str(f, ga->metrics[i].column);
				fputs(": ", f);
				tp_json_num(f, ok ? v : NAN, metric_prec(&ga->metrics[i]));
			}
			fputc('}', f);
		}
		fputs("}}", f);
	}
	fprintf(f, "],\n  \"replay\": {\"passes_planned\": %u, \"passes_present\": %u, "
		   "\"duplicate_mismatches\": %zu, \"max_cycle_deviation_pct\": ",
		r->m.npasses, r->passes_present, r->m.n_mismatch);
	tp_json_num(f, r->max_dev_pct >= 0 ? r->max_dev_pct : NAN, 3);
	fputs("},\n  \"warnings\": [", f);
	const char *w = r->m.warn;
	bool first = true;
	while (w && *w) {
		const char *nl = strchr(w, '\n');
		size_t n = nl ? (size_t)(nl - w) : strlen(w);
		char *line = strndup(w, n);
		if (line) {
			fputs(first ? "\n    " : ",\n    ", f);
			tp_json_str(f, line);
			free(line);
			first = false;
		}
		w = nl ? nl + 1 : w + n;
	}
	fputs("]\n}\n", f);
	return close_out(&tx);
}

static int block_tid(const struct rep *r, uint32_t block_id)
{
	const struct tp_op_mblock *b = tp_op_merge_find(&r->m, block_id, 0);
	if (b)
		return (int)(b - r->m.blocks) + 1;
	return (int)(r->m.nblocks + block_id + 1); /* instr of a block no record saw */
}

/* The trace's time origin: the launch's first block begin (any pass, or
 * the instrumentation's). */
static uint64_t trace_t0(const struct rep *r)
{
	uint64_t t0 = UINT64_MAX;
	for (size_t bi = 0; bi < r->m.nblocks; bi++)
		for (uint32_t p = 0; p < r->m.npasses; p++)
			if (r->m.blocks[bi].per_pass[p].present &&
			    r->m.blocks[bi].per_pass[p].t_start < t0)
				t0 = r->m.blocks[bi].per_pass[p].t_start;
	for (size_t i = 0; i < r->in.n; i++)
		if (r->in.pts[i].kind == TP_INSTR_BLOCK_BEGIN && r->in.pts[i].t < t0)
			t0 = r->in.pts[i].t;
	return t0 == UINT64_MAX ? 0 : t0;
}

static double rel_us(const struct rep *r, uint64_t t, uint64_t t0)
{
	return t >= t0 ? ticks_us(r, t - t0) : -ticks_us(r, t0 - t);
}

static void trace_slice(FILE *f, bool *first, int64_t pid, int tid, const char *name,
			const char *cat, double ts, double dur, const char *args)
{
	fputs(*first ? "\n  " : ",\n  ", f);
	*first = false;
	fprintf(f, "{\"ph\": \"X\", \"pid\": %" PRId64 ", \"tid\": %d, \"name\": ", pid, tid);
	tp_json_str(f, name);
	fprintf(f, ", \"cat\": \"%s\", \"ts\": ", cat);
	tp_json_num(f, ts, 3);
	fputs(", \"dur\": ", f);
	tp_json_num(f, dur < 0 ? 0 : dur, 3);
	fprintf(f, ", \"args\": {%s}}", args ? args : "");
}

static int write_trace_json(struct rep *r)
{
	struct tp_file_tx tx;
	int rc = open_out(r, "trace.json", &tx);
	if (rc)
		return rc;
	FILE *f = tx.fp;
	int64_t pid = r->li.pid > 0 ? r->li.pid : 1;
	uint64_t t0 = trace_t0(r);
	bool first = true;
	char buf[512];
	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", f);
	snprintf(buf, sizeof(buf), "%s (device %d, launch %u)", r->li.name, r->li.device, r->k);
	fprintf(f, "\n  {\"ph\": \"M\", \"pid\": %" PRId64 ", \"name\": \"process_name\", "
		   "\"args\": {\"name\": ", pid);
	tp_json_str(f, buf);
	fputs("}}", f);
	first = false;
	for (size_t bi = 0; bi < r->m.nblocks; bi++) {
		const struct tp_op_mblock *b = &r->m.blocks[bi];
		if (b->sub_block)
			snprintf(buf, sizeof(buf), "block %u.%u (%s core %d)", b->block_id,
				 b->sub_block, cname[b->core_type], b->core_id);
		else
			snprintf(buf, sizeof(buf), "block %u (%s core %d)", b->block_id,
				 cname[b->core_type], b->core_id);
		fprintf(f, ",\n  {\"ph\": \"M\", \"pid\": %" PRId64 ", \"tid\": %zu, "
			   "\"name\": \"thread_name\", \"args\": {\"name\": ", pid, bi + 1);
		tp_json_str(f, buf);
		fprintf(f, "}},\n  {\"ph\": \"M\", \"pid\": %" PRId64 ", \"tid\": %zu, "
			   "\"name\": \"thread_sort_index\", \"args\": {\"sort_index\": %zu}}",
			pid, bi + 1, bi);
	}
	if (r->sys_freq > 0) {
		for (size_t bi = 0; bi < r->m.nblocks; bi++) {
			const struct tp_op_mblock *b = &r->m.blocks[bi];
			for (uint32_t p = 0; p < r->m.npasses; p++) {
				const struct tp_op_block_pass *bp = &b->per_pass[p];
				if (!bp->present)
					continue;
				char name[32], args[160];
				snprintf(name, sizeof(name), "pass %u", p);
				snprintf(args, sizeof(args),
					 "\"pass\": %u, \"core_type\": \"%s\", \"core_id\": %d, "
					 "\"total_cycles\": %" PRIu64, p, cname[bp->core_type], bp->core_id,
					 bp->total_cycles);
				double ts = rel_us(r, bp->t_start, t0);
				double dur = bp->t_end >= bp->t_start ? ticks_us(r, bp->t_end - bp->t_start) : 0;
				trace_slice(f, &first, pid, (int)bi + 1, name, "pass", ts, dur, args);
			}
		}
		/* Instrumentation of measured pass 0: marks are instants, ranges
		 * and scalar sections slices (matched innermost-first). */
		struct ipoint **stack = calloc(r->in.n ? r->in.n : 1, sizeof(*stack));
		size_t depth = 0;
		uint32_t cur_block = UINT32_MAX;
		for (size_t i = 0; stack && i < r->in.n; i++) {
			const struct ipoint *pt = &r->in.pts[i];
			if (pt->block != cur_block) {
				cur_block = pt->block;
				depth = 0;
			}
			int tid = block_tid(r, pt->block);
			double ts = rel_us(r, pt->t, t0);
			char name[160], args[256];
			switch (pt->kind) {
			case TP_INSTR_MARK:
				snprintf(name, sizeof(name), "mark %u", pt->id);
				fprintf(f, ",\n  {\"ph\": \"i\", \"s\": \"t\", \"pid\": %" PRId64
					   ", \"tid\": %d, \"cat\": \"mark\", \"name\": ", pid, tid);
				tp_json_str(f, name);
				fputs(", \"ts\": ", f);
				tp_json_num(f, ts, 3);
				fprintf(f, ", \"args\": {\"id\": %u, \"core_id\": %d}}", pt->id, pt->core);
				break;
			case TP_INSTR_RANGE_BEGIN:
			case TP_INSTR_SCALAR_BEGIN:
				stack[depth++] = &r->in.pts[i];
				break;
			case TP_INSTR_RANGE_END:
			case TP_INSTR_SCALAR_END: {
				int want = pt->kind == TP_INSTR_RANGE_END ? TP_INSTR_RANGE_BEGIN
									  : TP_INSTR_SCALAR_BEGIN;
				size_t j = depth;
				while (j > 0 && !(stack[j - 1]->kind == want &&
						  (want != TP_INSTR_RANGE_BEGIN || stack[j - 1]->id == pt->id)))
					j--;
				if (!j)
					break; /* an end without a begin: nothing to draw */
				const struct ipoint *bg = stack[j - 1];
				memmove(&stack[j - 1], &stack[j], (depth - j) * sizeof(*stack));
				depth--;
				double bts = rel_us(r, bg->t, t0);
				if (want == TP_INSTR_RANGE_BEGIN) {
					snprintf(name, sizeof(name), "range %u", pt->id);
					snprintf(args, sizeof(args), "\"id\": %u", pt->id);
					trace_slice(f, &first, pid, tid, name, "range", bts, ts - bts, args);
				} else {
					const char *nm = strcmp(pt->name, "-") ? pt->name : bg->name;
					snprintf(args, sizeof(args), "\"scalar_cycles\": %" PRIu64, pt->cycles);
					trace_slice(f, &first, pid, tid, nm, "scalar", bts, ts - bts, args);
				}
				break;
			}
			default:
				break;
			}
		}
		free(stack);
	}
	fputs("\n]}\n", f);
	return close_out(&tx);
}

static int write_instrumentation(struct rep *r)
{
	struct tp_file_tx tx;
	int rc = open_out(r, "Instrumentation.csv", &tx);
	if (rc)
		return rc;
	FILE *f = tx.fp;
	fputs("block_id,core_id,seq,kind,id,name,time(us)\n", f);
	uint32_t cur = UINT32_MAX, seq = 0;
	uint64_t base = 0;
	for (size_t i = 0; i < r->in.n; i++) {
		const struct ipoint *pt = &r->in.pts[i];
		if (pt->block != cur) {
			cur = pt->block;
			seq = 0;
			base = pt->t; /* the first point, normally block_begin */
			for (size_t j = i; j < r->in.n && r->in.pts[j].block == cur; j++)
				if (r->in.pts[j].kind == TP_INSTR_BLOCK_BEGIN) {
					base = r->in.pts[j].t;
					break;
				}
		}
		fprintf(f, "%u,%d,%u,%s,%u,", pt->block, pt->core, seq++, kind_names[pt->kind], pt->id);
		csv_str(f, pt->name);
		double us = rel_us(r, pt->t, base);
		if (r->sys_freq > 0)
			fprintf(f, ",%.3f\n", us);
		else
			fputs(",N/A\n", f);
	}
	return close_out(&tx);
}

static int write_scalar_sections(struct rep *r)
{
	struct tp_file_tx tx;
	int rc = open_out(r, "ScalarSections.csv", &tx);
	if (rc)
		return rc;
	FILE *f = tx.fp;
	fputs("block_id,section,executions,cycles,share(%)\n", f);
	size_t i = 0;
	while (i < r->in.n) {
		uint32_t blk = r->in.pts[i].block;
		size_t end = i;
		while (end < r->in.n && r->in.pts[end].block == blk)
			end++;
		/* The block's kernel time in cycles: its pass-0 record (the PMU
		 * window is the kernel body), else the instrumented begin..end. */
		double kcycles = -1;
		const struct tp_op_mblock *b = tp_op_merge_find(&r->m, blk, 0);
		if (b && b->per_pass[0].present)
			kcycles = (double)b->per_pass[0].total_cycles;
		if (kcycles < 0 && r->sys_freq > 0) {
			uint64_t tb = 0, te = 0;
			for (size_t j = i; j < end; j++) {
				if (r->in.pts[j].kind == TP_INSTR_BLOCK_BEGIN)
					tb = r->in.pts[j].t;
				if (r->in.pts[j].kind == TP_INSTR_BLOCK_END)
					te = r->in.pts[j].t;
			}
			if (te > tb)
				kcycles = (double)(te - tb) / r->sys_freq * r->freq;
		}
		/* Sections in first-appearance order; a scalar_end closes the
		 * innermost open scalar_begin. One walk: a block holds up to
		 * instr_cap points but few distinct sections. */
		struct sec {
			const char *name;
			uint64_t execs, cycles;
		} *secs = NULL;
		size_t nsecs = 0;
		const struct ipoint **open = calloc(end - i, sizeof(*open));
		size_t depth = 0;
		bool oom = !open;
		for (size_t j = i; !oom && j < end; j++) {
			const struct ipoint *x = &r->in.pts[j];
			if (x->kind == TP_INSTR_SCALAR_BEGIN) {
				open[depth++] = x;
				size_t q = 0;
				while (q < nsecs && strcmp(secs[q].name, x->name))
					q++;
				if (q == nsecs) {
					struct sec *ns = realloc(secs, (nsecs + 1) * sizeof(*ns));
					if (!ns) {
						oom = true;
						break;
					}
					secs = ns;
					secs[nsecs++] = (struct sec){ x->name, 0, 0 };
				}
			} else if (x->kind == TP_INSTR_SCALAR_END && depth) {
				const struct ipoint *bg = open[--depth];
				for (size_t q = 0; q < nsecs; q++) {
					if (!strcmp(secs[q].name, bg->name)) {
						secs[q].execs++;
						secs[q].cycles += x->cycles;
						break;
					}
				}
			}
		}
		for (size_t q = 0; q < nsecs; q++) {
			fprintf(f, "%u,", blk);
			csv_str(f, secs[q].name);
			fprintf(f, ",%" PRIu64 ",%" PRIu64 ",", secs[q].execs, secs[q].cycles);
			if (kcycles > 0)
				fprintf(f, "%.2f\n", (double)secs[q].cycles / kcycles * 100.0);
			else
				fputs("N/A\n", f);
		}
		free(secs);
		free(open);
		if (oom) {
			tp_file_tx_abort(&tx, false);
			return tp_set_error(-ENOMEM, "ScalarSections.csv: out of memory");
		}
		i = end;
	}
	return close_out(&tx);
}

/* ---- the launch ----------------------------------------------------------- */

static void derive(struct rep *r)
{
	r->passes_present = 0;
	r->last_launch = -1;
	for (uint32_t p = 0; p < r->m.npasses; p++) {
		if (r->m.pass_present[p])
			r->passes_present++;
		if (r->m.launch[p].present)
			r->last_launch = (int)p;
	}
	r->duration_us = -1;
	if (r->last_launch >= 0 && r->sys_freq > 0) {
		const struct tp_op_pass_launch *l = &r->m.launch[r->last_launch];
		if (l->t_end >= l->t_start)
			r->duration_us = ticks_us(r, l->t_end - l->t_start);
	}
	r->blocks_on[0] = r->blocks_on[1] = 0;
	for (size_t bi = 0; bi < r->m.nblocks; bi++)
		r->blocks_on[r->m.blocks[bi].core_type]++;
	bool on[2] = { false, false };
	for (size_t bi = 0; bi < r->m.nblocks; bi++)
		for (int c = 0; c < 2; c++)
			on[c] |= r->m.blocks[bi].has_cycles[c];
	r->op_type = on[0] && on[1] ? "mix" : on[0] ? "cube" : on[1] ? "vector" : "N/A";
	/* Consistency is known only when two passes hashed the restored
	 * memory: a hash of 0 means nothing was snapshotted (application
	 * replay, a launch over the memory budget). */
	r->consistent = true;
	r->checked = 0;
	const char *h0 = NULL;
	for (uint32_t p = 0; p < r->m.npasses; p++) {
		const char *h = r->replay[p].hash;
		if (!r->replay[p].present || !h[0] || strspn(h, "0") == strlen(h))
			continue;
		r->checked++;
		if (!h0)
			h0 = h;
		else if (strcasecmp(h0, h))
			r->consistent = false;
	}
	r->max_dev_pct = -1;
	for (uint32_t p = 0; p < r->m.npasses; p++) {
		double d = r->m.pass_present[p] ? pass_deviation(r, p) : -1;
		if (d > r->max_dev_pct)
			r->max_dev_pct = d;
	}
}

static uint32_t dir_k(const char *dir)
{
	size_t n = strlen(dir);
	while (n && dir[n - 1] == '/')
		n--;
	size_t s = n;
	while (s && dir[s - 1] != '/')
		s--;
	uint32_t k = 0;
	for (size_t i = s; i < n; i++) {
		if (!isdigit((unsigned char)dir[i]))
			return 0;
		k = k * 10 + (uint32_t)(dir[i] - '0');
	}
	return k;
}


/* @in for the summary table, into @out (@cap bytes, always terminated):
 * valid UTF-8 kept, every byte of an invalid sequence and every control
 * character (C0, DEL, C1) as one '?' (a kernel name is the application's: raw bytes would
 * garble the terminal; the launch folder's name is sanitised likewise). */
static void printable_name(const char *in, char *out, size_t cap)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0;
	while (*p && o + 1 < cap) {
		unsigned c = *p;
		size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3
			 : (c >> 3) == 0x1e ? 4 : 0;
		bool ok = n > 0 && !(n == 2 && c < 0xc2) && !(n == 4 && c > 0xf4);
		for (size_t k = 1; ok && k < n; k++)
			ok = (p[k] & 0xc0) == 0x80;
		if (ok && n == 3)
			ok = !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xed && p[1] >= 0xa0);
		if (ok && n == 4)
			ok = !(c == 0xf0 && p[1] < 0x90) && !(c == 0xf4 && p[1] >= 0x90);
		/* C0 controls, DEL, and the C1 controls U+0080..U+009F (0xC2
		 * 0x80..0x9F: a terminal may take U+009B as CSI) */
		if (!ok || (n == 1 && (c < 0x20 || c == 0x7f)) || (n == 2 && c == 0xc2 && p[1] < 0xa0)) {
			out[o++] = '?';
			p += ok ? n : 1; /* a control character: one '?' */
			continue;
		}
		if (o + n >= cap)
			break;
		memcpy(out + o, p, n);
		o += n;
		p += n;
	}
	out[o] = '\0';
}

int tp_op_report_launch(const char *launch_dir, const struct tp_op_config *cfg,
			struct tp_op_launch_summary *out)
{
	if (!launch_dir)
		return tp_set_error(-EINVAL, "report: NULL launch directory");
	struct rep *r = calloc(1, sizeof(*r));
	struct tp_op_config *own = NULL;
	char path[PATH_MAX];
	int rc = 0;
	if (!r)
		return tp_set_error(-ENOMEM, "report: out of memory");
	r->dir = launch_dir;
	if (!cfg) {
		own = malloc(sizeof(*own));
		if (!own) {
			rc = tp_set_error(-ENOMEM, "report: out of memory");
			goto out;
		}
		snprintf(path, sizeof(path), "%s/../../../config.txt", launch_dir);
		rc = tp_op_config_read(path, own);
		if (rc)
			goto out;
		cfg = own;
	}
	r->cfg = cfg;
	r->plan = &cfg->plan;
	if ((cfg->plan.arch != TP_PMU_ARCH_A2A3 && cfg->plan.arch != TP_PMU_ARCH_A5) ||
	    !cfg->plan.npasses || cfg->plan.npasses > TP_OP_MAX_PASSES) {
		rc = tp_set_error(-EINVAL, "report: %s: the configuration's plan is not valid "
				  "(arch %d, %u passes)", launch_dir, (int)cfg->plan.arch,
				  cfg->plan.npasses);
		goto out;
	}
	r->k = dir_k(launch_dir);
	if (tp_op_groups_parse(cfg->groups, &r->groups, NULL, 0)) {
		rc = tp_set_error(-EINVAL, "report: config groups '%s': %s", cfg->groups,
				  tp_last_error());
		goto out;
	}
	snprintf(path, sizeof(path), "%s/launch.txt", launch_dir);
	rc = read_launch_txt(path, &r->li);
	if (rc)
		goto out;
	r->freq = r->li.core_freq_hz ? (double)r->li.core_freq_hz : (double)TP_CORE_FREQ_HZ;
	r->sys_freq = (double)r->li.sys_cnt_freq;
	uint32_t np = cfg->plan.npasses;
	if (r->li.passes && r->li.passes != np)
		TP_WARN("%s: launch.txt plans %u passes, config.txt %u; using config.txt's",
			tp_shown(launch_dir), r->li.passes, np);
	rc = tp_op_merge_init(&r->m, np);
	if (rc)
		goto out;
	r->replay = calloc(np, sizeof(*r->replay));
	if (!r->replay) {
		rc = tp_set_error(-ENOMEM, "report: out of memory");
		goto out;
	}
	/* A skipped launch, or one that failed before its first pass (in its
	 * warm-up), has no pass files: one note below, not one per pass. */
	const bool skipped = !strcmp(r->li.status, "skipped") ||
			     (!strcmp(r->li.status, "failed") && r->li.passes_done == 0);
	for (uint32_t p = 0; p < np; p++) {
		snprintf(path, sizeof(path), "%s/dump/pass_%u.bin", launch_dir, p);
		rc = tp_op_merge_add_file(&r->m, path, p, &cfg->plan);
		if (rc == -ENOENT) {
			if (!skipped)
				tp_op_merge_missing(&r->m, p, &cfg->plan, path);
			rc = 0;
		}
		if (rc)
			goto out;
	}
	if (skipped)
		tp_op_merge_unmeasured(&r->m, &cfg->plan, r->li.status);
	snprintf(path, sizeof(path), "%s/dump/replay.txt", launch_dir);
	rc = read_replay_txt(path, r->replay, np);
	if (rc)
		goto out;
	snprintf(path, sizeof(path), "%s/dump/instr.txt", launch_dir);
	rc = read_instr_txt(path, &r->in);
	if (rc)
		goto out;
	for (size_t i = 0; i < r->in.novf; i++)
		tp_op_merge_warn(&r->m, "%s: block %u: %" PRIu64 " instrumentation points did "
				 "not fit (taskprof op --instr-cap N keeps more per block)", path,
				 r->in.ovf_block[i], r->in.ovf_count[i]);
	derive(r);
	if (!r->consistent)
		tp_op_merge_warn(&r->m, "%s: output hashes differ across passes: the kernel is not "
				 "replay-consistent", launch_dir);

	rc = write_basic_info(r);
	for (int g = 0; !rc && g < TP_OP_G_BASIC_INFO; g++)
		if (r->groups & (1u << g))
			rc = write_group(r, g);
	if (!rc)
		rc = write_raw_events(r);
	if (!rc)
		rc = write_replay_info(r);
	if (!rc)
		rc = write_summary_json(r);
	if (!rc)
		rc = write_trace_json(r);
	if (!rc && r->in.present)
		rc = write_instrumentation(r);
	if (!rc && r->in.present)
		rc = write_scalar_sections(r);
	if (rc) {
		remove_made(r, rc);
		goto out;
	}

	if (out) {
		memset(out, 0, sizeof(*out));
		printable_name(r->li.name, out->name, sizeof(out->name));
		out->device = r->li.device;
		out->k = r->k;
		out->block_dim = r->li.block_dim;
		out->duration_us = r->duration_us;
		out->passes = r->passes_present;
		out->replay_consistent = r->consistent;
		out->max_dev_pct = r->max_dev_pct;
		out->replay_checked = r->checked >= 2;
		snprintf(out->status, sizeof(out->status), "%s",
			 r->passes_present < np && !strcmp(r->li.status, "ok") ? "degraded"
										: r->li.status);
		snprintf(out->dir, sizeof(out->dir), "%s", launch_dir);
	}
out:
	if (r->m.pass_present)
		tp_op_merge_fini(&r->m);
	free(r->replay);
	instr_free(&r->in);
	free(r);
	free(own);
	return rc;
}

/* The code point of the UTF-8 sequence at @s (valid: printable_name()),
 * its length in bytes in *@len. */
static uint32_t utf8_decode(const unsigned char *s, size_t *len)
{
	unsigned c = s[0];
	size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : 4;
	uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
	for (size_t k = 1; k < n; k++) {
		if (!s[k]) { /* cannot happen after printable_name(): stop here */
			n = k;
			break;
		}
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	*len = n;
	return cp;
}

/* The C.UTF-8 locale, made once (NULL when the system has none: every
 * code point then takes one column). */
static locale_t utf8;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;
static void make_utf8(void)
{
	utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* Terminal columns of code point @cp: wcwidth() under C.UTF-8 (wide East
 * Asian characters 2, combining marks 0), whatever the process's locale;
 * 1 when that locale is missing or @cp has no width. */
static int cp_cols(uint32_t cp)
{
	if (cp < 0x80)
		return 1;
	pthread_once(&utf8_once, make_utf8);
	if (!utf8)
		return 1;
	locale_t old = uselocale(utf8);
	int w = wcwidth((wchar_t)cp);
	uselocale(old);
	return w < 0 ? 1 : w;
}

/* Terminal columns of @s (valid UTF-8). */
static size_t utf8_cols(const char *s)
{
	size_t cols = 0, n;
	for (const unsigned char *p = (const unsigned char *)s; *p; p += n)
		cols += (size_t)cp_cols(utf8_decode(p, &n));
	return cols;
}

/* Bytes of the longest prefix of @s that fits in @cols columns (a wide
 * character is never split); its width in *@used. */
static size_t utf8_prefix(const char *s, size_t cols, size_t *used)
{
	size_t b = 0, c = 0, n;
	const unsigned char *p = (const unsigned char *)s;
	while (p[b]) {
		size_t w = (size_t)cp_cols(utf8_decode(p + b, &n));
		if (c + w > cols)
			break;
		c += w;
		b += n;
	}
	*used = c;
	return b;
}

/* cycle_deviation(%) above which the summary adds its note. */
#define TP_OP_DEV_NOTE_PCT 25.0

void tp_op_report_print_summary(FILE *f, const struct tp_op_launch_summary *s, size_t n)
{
	if (!n) {
		fputs("taskprof op: no kernel launch was profiled\n", f);
		return;
	}
	/* Widths in terminal columns (the names are valid UTF-8,
	 * printable_name()): accented names take one column a character,
	 * wide East Asian characters two, so every row lines up. */
	size_t w = 6;
	for (size_t i = 0; i < n; i++)
		if (utf8_cols(s[i].name) > w)
			w = utf8_cols(s[i].name);
	if (w > 40)
		w = 40;
	fprintf(f, "%-*s %6s %4s %7s %14s %6s %10s %-11s %s\n", (int)w, "kernel", "device", "k",
		"blocks", "duration(us)", "passes", "consistent", "status", "dir");
	for (size_t i = 0; i < n; i++) {
		char dur[32];
		if (s[i].duration_us >= 0)
			snprintf(dur, sizeof(dur), "%.3f", s[i].duration_us);
		else
			snprintf(dur, sizeof(dur), "N/A");
		/* A longer name (a C++ signature) is cut visibly: as many
		 * characters as fit in w - 3 columns and "...", padded to w
		 * columns. */
		size_t cols = utf8_cols(s[i].name), used;
		bool cut = cols > w;
		size_t bytes = utf8_prefix(s[i].name, cut ? w - 3 : cols, &used);
		size_t shown = used + (cut ? 3 : 0);
		fprintf(f, "%.*s%s%*s", (int)bytes, s[i].name, cut ? "..." : "",
			(int)(w - shown), "");
		fprintf(f, " %6d %4u %7u %14s %6u %10s %-11s %s\n",
			s[i].device, s[i].k, s[i].block_dim, dur, s[i].passes,
			!s[i].replay_checked ? "N/A" : s[i].replay_consistent ? "yes" : "NO",
			tp_shown(s[i].status), tp_shown(s[i].dir));
	}
	/* "consistent" is about the outputs; the passes' timings can still
	 * differ a lot on a busy host: say so when they do. */
	double dev = -1;
	for (size_t i = 0; i < n; i++)
		if (s[i].max_dev_pct > dev)
			dev = s[i].max_dev_pct;
	if (dev > TP_OP_DEV_NOTE_PCT)
		fprintf(f, "note: a block's cycles differ by up to %.0f%% between passes "
			   "(ReplayInfo.csv cycle_deviation(%%)): each pass runs the kernel again, "
			   "and the simulated cores share the host's CPUs; every metric divides by "
			   "the cycles of the pass that read its counters (docs/op-metrics.md). "
			   "\"consistent\" compares the passes' outputs, not their timings\n",
			dev);
}
