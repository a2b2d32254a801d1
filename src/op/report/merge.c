/* SPDX-License-Identifier: MIT */
/*
 * op/report/merge.c — read the pass files of one launch and merge them per
 * (block_id, sub_block) (spec/opprof.md §4.10, §4.11).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "base/log.h"
#include "op/groups.h"
#include "op/report/report.h"

static const char *const cname[2] = { "AIC", "AIV" };

/* Keep @line in @m's warnings (one line each, '\n'-separated). */
static void keep_warning(struct tp_op_merge *m, const char *line)
{
	size_t n = strlen(line);
	char *w = realloc(m->warn, m->warn_len + n + 2);
	if (!w)
		return; /* the log has it; the summary loses one warning */
	m->warn = w;
	memcpy(m->warn + m->warn_len, line, n);
	m->warn_len += n;
	m->warn[m->warn_len++] = '\n';
	m->warn[m->warn_len] = '\0';
}

void tp_op_merge_warn(struct tp_op_merge *m, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	TP_WARN("%s", tp_shown(line));
	keep_warning(m, line);
}

int tp_op_merge_init(struct tp_op_merge *m, uint32_t npasses)
{
	if (!m || !npasses || npasses > TP_OP_MAX_PASSES)
		return tp_set_error(-EINVAL, "merge: %u passes, expected 1..%d", npasses,
				    TP_OP_MAX_PASSES);
	memset(m, 0, sizeof(*m));
	m->npasses = npasses;
	m->pass_present = calloc(npasses, sizeof(bool));
	m->launch = calloc(npasses, sizeof(*m->launch));
	m->eop_dropped = calloc(npasses, sizeof(uint64_t));
	m->warn = calloc(1, 1);
	if (!m->pass_present || !m->launch || !m->eop_dropped || !m->warn) {
		tp_op_merge_fini(m);
		return tp_set_error(-ENOMEM, "merge: out of memory");
	}
	return 0;
}

void tp_op_merge_fini(struct tp_op_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nblocks; i++) {
		free(m->blocks[i].vals);
		free(m->blocks[i].per_pass);
	}
	free(m->blocks);
	free(m->pass_present);
	free(m->launch);
	free(m->eop_dropped);
	free(m->warn);
	free(m->raw);
	memset(m, 0, sizeof(*m));
}

/* Binary search: index of (b, s) or where it would go. */
static size_t block_pos(const struct tp_op_merge *m, uint32_t b, uint32_t s, bool *found)
{
	size_t lo = 0, hi = m->nblocks;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct tp_op_mblock *x = &m->blocks[mid];
		if (x->block_id < b || (x->block_id == b && x->sub_block < s))
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < m->nblocks && m->blocks[lo].block_id == b && m->blocks[lo].sub_block == s;
	return lo;
}

const struct tp_op_mblock *tp_op_merge_find(const struct tp_op_merge *m, uint32_t block_id,
					    uint32_t sub_block)
{
	bool found;
	size_t i = block_pos(m, block_id, sub_block, &found);
	return found ? &m->blocks[i] : NULL;
}

static struct tp_op_mblock *block_get(struct tp_op_merge *m, uint32_t b, uint32_t s)
{
	bool found;
	size_t i = block_pos(m, b, s, &found);
	if (found)
		return &m->blocks[i];
	if (m->nblocks == m->capblocks) {
		size_t cap = m->capblocks ? 2 * m->capblocks : 16;
		struct tp_op_mblock *nb = realloc(m->blocks, cap * sizeof(*nb));
		if (!nb)
			return NULL;
		m->blocks = nb;
		m->capblocks = cap;
	}
	struct tp_op_block_pass *pp = calloc(m->npasses, sizeof(*pp));
	if (!pp)
		return NULL;
	memmove(&m->blocks[i + 1], &m->blocks[i], (m->nblocks - i) * sizeof(m->blocks[0]));
	m->nblocks++;
	struct tp_op_mblock *x = &m->blocks[i];
	memset(x, 0, sizeof(*x));
	x->block_id = b;
	x->sub_block = s;
	x->cycles_pass[0] = x->cycles_pass[1] = -1;
	x->last_pass = -1;
	x->per_pass = pp;
	return x;
}

static struct tp_op_mval *val_find(const struct tp_op_mblock *x, int core, uint16_t id,
				   size_t *pos)
{
	size_t lo = 0, hi = x->nvals;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct tp_op_mval *v = &x->vals[mid];
		if (v->core < core || (v->core == core && v->id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos)
		*pos = lo;
	if (lo < x->nvals && x->vals[lo].core == core && x->vals[lo].id == id)
		return &x->vals[lo];
	return NULL;
}

bool tp_op_merge_value(const struct tp_op_merge *m, uint32_t block_id, uint32_t sub_block,
		       int core, uint16_t id, uint64_t *v)
{
	const struct tp_op_mblock *x = tp_op_merge_find(m, block_id, sub_block);
	if (!x)
		return false;
	const struct tp_op_mval *mv = val_find(x, core, id, NULL);
	if (!mv)
		return false;
	*v = mv->value;
	return true;
}

static const char *kind_ok(const struct tp_op_rec *r, uint32_t pass, char *why, size_t len)
{
	if (r->magic != TP_OP_REC_MAGIC)
		snprintf(why, len, "bad magic 0x%08x (expected 0x%08x)", r->magic, TP_OP_REC_MAGIC);
	else if (r->version != TP_OP_REC_VERSION)
		snprintf(why, len, "version %u, expected %u", r->version, TP_OP_REC_VERSION);
	else if (r->size != sizeof(struct tp_op_rec))
		snprintf(why, len, "size %u, expected %zu", r->size, sizeof(struct tp_op_rec));
	else if (r->kind < TP_OP_REC_BLOCK || r->kind > TP_OP_REC_END_OF_PASS)
		snprintf(why, len, "kind %u, expected 1 (block), 2 (launch) or 3 (end of pass)",
			 r->kind);
	else if (r->pass != pass)
		snprintf(why, len, "pass %u in the record, expected %u (the file's pass)", r->pass,
			 pass);
	else if (r->kind == TP_OP_REC_BLOCK && r->n_events > TP_DRV_PROF_MAX_EVENTS)
		snprintf(why, len, "%u events, max %d", r->n_events, TP_DRV_PROF_MAX_EVENTS);
	else if (r->kind == TP_OP_REC_BLOCK && r->core_type > 1)
		snprintf(why, len, "core_type %u, expected 0 (AIC) or 1 (AIV)", r->core_type);
	else
		return NULL;
	return why;
}

static int raw_push(struct tp_op_merge *m, const struct tp_op_raw *r)
{
	if (m->nraw == m->capraw) {
		size_t cap = m->capraw ? 2 * m->capraw : 64;
		struct tp_op_raw *n = realloc(m->raw, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		m->raw = n;
		m->capraw = cap;
	}
	m->raw[m->nraw] = *r;
	m->raw[m->nraw].seq = (uint32_t)m->nraw;
	m->nraw++;
	return 0;
}

/* Do the records' events equal the plan's row for their core type? */
static bool matches_plan(const struct tp_op_rec *r, const struct tp_op_plan *plan, uint32_t pass)
{
	const struct tp_op_pass *pp = &plan->pass[pass];
	uint32_t c = r->core_type;
	if (r->n_events != pp->n[c])
		return false;
	for (uint32_t k = 0; k < r->n_events; k++)
		if (r->event_id[k] != pp->ev[c][k])
			return false;
	return true;
}

int tp_op_merge_add_records(struct tp_op_merge *m, const struct tp_op_rec *recs, size_t n,
			    uint32_t pass, const struct tp_op_plan *plan, const char *what)
{
	char why[160];
	if (!m || (n && !recs))
		return tp_set_error(-EINVAL, "merge: NULL argument");
	if (pass >= m->npasses)
		return tp_set_error(-EINVAL, "%s: pass %u, but the plan has %u passes", what, pass,
				    m->npasses);
	/* Validate everything first: a bad file leaves the merge as it was. */
	for (size_t i = 0; i < n; i++)
		if (kind_ok(&recs[i], pass, why, sizeof(why)))
			return tp_set_error(-EINVAL, "%s: record %zu: %s", what, i, why);

	bool plan_warned[2] = { false, false };
	m->pass_present[pass] = true;
	for (size_t i = 0; i < n; i++) {
		const struct tp_op_rec *r = &recs[i];
		if (r->kind == TP_OP_REC_LAUNCH) {
			m->launch[pass] = (struct tp_op_pass_launch){ true, r->t_start, r->t_end,
								      r->block_id, r->seq };
			continue;
		}
		if (r->kind == TP_OP_REC_END_OF_PASS) {
			m->eop_dropped[pass] = r->total_cycles;
			if (r->total_cycles)
				tp_op_merge_warn(m, "%s: the driver dropped %" PRIu64 " records in pass %u "
					 "(the ring stayed full): their blocks lack this pass's events",
				      what, r->total_cycles, pass);
			continue;
		}
		m->records++;
		uint32_t c = r->core_type;
		if (plan && pass < plan->npasses && !plan_warned[c] && !matches_plan(r, plan, pass)) {
			plan_warned[c] = true;
			tp_op_merge_warn(m, "%s: record %zu (block %u, %s): its events are not the plan's "
				 "pass %u row; the record's own event ids are used",
			      what, i, r->block_id, cname[c], pass);
		}
		struct tp_op_mblock *x = block_get(m, r->block_id, r->sub_block);
		if (!x)
			return tp_set_error(-ENOMEM, "merge: out of memory");
		if (x->per_pass[pass].present)
			tp_op_merge_warn(m, "%s: record %zu: block %u sub-block %u appears twice in pass %u; "
				 "the later record's cycles are used",
			      what, i, r->block_id, r->sub_block, pass);
		x->per_pass[pass] = (struct tp_op_block_pass){ true, c, r->core_id, r->total_cycles,
							       r->t_start, r->t_end };
		/* total_cycles and timing: the last pass wins (msprof, §4.11). */
		if ((int32_t)pass >= x->cycles_pass[c]) {
			x->cycles_pass[c] = (int32_t)pass;
			x->total_cycles[c] = r->total_cycles;
			x->has_cycles[c] = true;
		}
		if ((int32_t)pass >= x->last_pass) {
			x->last_pass = (int32_t)pass;
			x->core_type = c;
			x->core_id = r->core_id;
			x->t_start = r->t_start;
			x->t_end = r->t_end;
		}
		for (uint32_t k = 0; k < r->n_events; k++) {
			uint16_t id = r->event_id[k];
			if (id == TP_EV_NONE)
				continue;
			struct tp_op_raw raw = { r->block_id, r->sub_block, (uint16_t)c, id, pass, 0,
						 r->value[k] };
			if (raw_push(m, &raw))
				return tp_set_error(-ENOMEM, "merge: out of memory");
			size_t pos;
			struct tp_op_mval *v = val_find(x, (int)c, id, &pos);
			if (v) {
				if (v->value == r->value[k])
					continue;
				/* Keep the value of the earliest pass. */
				uint32_t kept = v->pass < pass ? v->pass : pass;
				uint64_t kv = v->pass < pass ? v->value : r->value[k];
				uint64_t ov = v->pass < pass ? r->value[k] : v->value;
				uint32_t other = v->pass < pass ? pass : v->pass;
				if (!v->mismatch)
					m->n_mismatch++;
				v->mismatch = true;
				tp_op_merge_warn(m, "block %u sub-block %u %s event 0x%02x: pass %u read %" PRIu64
					 ", pass %u read %" PRIu64 "; kept pass %u's value (the kernel "
					 "is not deterministic or restore missed memory)",
				      r->block_id, r->sub_block, cname[c], id, other, ov, kept, kv,
				      kept);
				v->pass = kept;
				v->value = kv;
				continue;
			}
			if (x->nvals == x->capvals) {
				size_t cap = x->capvals ? 2 * x->capvals : 16;
				struct tp_op_mval *nv = realloc(x->vals, cap * sizeof(*nv));
				if (!nv)
					return tp_set_error(-ENOMEM, "merge: out of memory");
				x->vals = nv;
				x->capvals = cap;
			}
			memmove(&x->vals[pos + 1], &x->vals[pos], (x->nvals - pos) * sizeof(*v));
			x->vals[pos] = (struct tp_op_mval){ (uint16_t)c, id, pass, r->value[k], false };
			x->nvals++;
		}
	}
	return 0;
}

int tp_op_merge_add_file(struct tp_op_merge *m, const char *path, uint32_t pass,
			 const struct tp_op_plan *plan)
{
	char *data = NULL;
	size_t len = 0;
	int rc = tp_read_file(path, &data, &len);
	if (rc == -ENOENT)
		return tp_set_error(rc, "%s: missing", path);
	if (rc)
		return tp_set_error(rc, "%s: cannot read: %s", path, strerror(-rc));
	if (len % sizeof(struct tp_op_rec)) {
		free(data);
		return tp_set_error(-EINVAL,
				    "%s: truncated: %zu bytes is not a whole number of %zu-byte "
				    "records (record %zu is incomplete)",
				    path, len, sizeof(struct tp_op_rec), len / sizeof(struct tp_op_rec));
	}
	/* tp_read_file's buffer comes from malloc: aligned for the records. */
	rc = tp_op_merge_add_records(m, (const struct tp_op_rec *)data,
				     len / sizeof(struct tp_op_rec), pass, plan, path);
	free(data);
	return rc;
}

/* The groups of @plan's arch with an event in pass @pass (0 without a
 * plan or past its passes); *@nev gets the pass's AIC and AIV event counts. */
static uint32_t pass_groups(const struct tp_op_plan *plan, uint32_t pass, uint32_t nev[2])
{
	uint32_t groups = 0;
	nev[0] = nev[1] = 0;
	if (plan && pass < plan->npasses) {
		for (int c = 0; c < 2; c++) {
			nev[c] = plan->pass[pass].n[c];
			for (uint32_t k = 0; k < nev[c]; k++)
				groups |= tp_op_groups_of_event(plan->arch, c, plan->pass[pass].ev[c][k]);
		}
	}
	return groups;
}

void tp_op_merge_unmeasured(struct tp_op_merge *m, const struct tp_op_plan *plan,
			    const char *status)
{
	uint32_t nev[2];
	for (uint32_t p = 0; p < m->npasses; p++)
		if (!m->pass_present[p])
			m->missing_groups |= pass_groups(plan, p, nev);
	char line[512];
	snprintf(line, sizeof(line), "not measured (status %s): every event is N/A", status);
	keep_warning(m, line);
}

void tp_op_merge_missing(struct tp_op_merge *m, uint32_t pass, const struct tp_op_plan *plan,
			 const char *path)
{
	uint32_t nev[2];
	uint32_t groups = pass_groups(plan, pass, nev);
	m->missing_groups |= groups;
	char list[256] = "";
	size_t off = 0;
	for (int g = 0; g < TP_OP_NGROUPS; g++) {
		if (!(groups & (1u << g)))
			continue;
		int w = snprintf(list + off, sizeof(list) - off, "%s%s", off ? ", " : "",
				 tp_op_group_name(g));
		if (w > 0 && off + (size_t)w < sizeof(list))
			off += (size_t)w;
	}
	tp_op_merge_warn(m, "pass %u missing (%s): its %u AIC and %u AIV events are N/A; groups affected: %s",
	      pass, path ? path : "no file", nev[0], nev[1], off ? list : "none");
}
