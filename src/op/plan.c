/* SPDX-License-Identifier: MIT */
#include "op/plan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "op/groups.h"

__attribute__((format(printf, 4, 5))) static int fail(int rc, char *err, size_t errlen,
						       const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return tp_set_error(rc, "%s", msg);
}

/* One co-schedule set after de-duplication, or one planning item. */
struct pset {
	uint16_t *ev[2];
	uint32_t n[2];
	size_t first; /* request order: the index of its first set */
	bool dropped;
};

static bool contains(const uint16_t *v, uint32_t n, uint16_t id)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == id)
			return true;
	return false;
}

static int find_root(int *parent, int i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

static int cmp_items(const void *a, const void *b)
{
	const struct pset *x = a, *y = b;
	uint32_t mx = x->n[0] > x->n[1] ? x->n[0] : x->n[1];
	uint32_t my = y->n[0] > y->n[1] ? y->n[0] : y->n[1];
	if (mx != my)
		return mx > my ? -1 : 1;
	uint32_t sx = x->n[0] + x->n[1], sy = y->n[0] + y->n[1];
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static bool subset(const struct pset *s, const struct pset *t)
{
	for (int c = 0; c < 2; c++)
		for (uint32_t i = 0; i < s->n[c]; i++)
			if (!contains(t->ev[c], t->n[c], s->ev[c][i]))
				return false;
	return true;
}

int tp_op_plan_build(const struct tp_op_coset *sets, size_t nsets, uint32_t slots,
		     struct tp_op_plan *out, char *err, size_t errlen)
{
	static const char *cname[2] = { "AIC", "AIV" };
	if (!out || (nsets && !sets))
		return fail(-EINVAL, err, errlen, "pass plan: NULL argument");
	if (slots < 1 || slots > TP_DRV_PROF_MAX_EVENTS)
		return fail(-EINVAL, err, errlen, "pass plan: %u slots per core type, expected 1..%d",
			    slots, TP_DRV_PROF_MAX_EVENTS);

	int rc = 0;
	size_t total = 0;
	for (size_t i = 0; i < nsets; i++)
		total += (size_t)sets[i].n_aic + sets[i].n_aiv;
	struct pset *ps = calloc(nsets ? nsets : 1, sizeof(*ps));
	struct pset *items = calloc(nsets ? nsets : 1, sizeof(*items));
	uint16_t *pool = calloc(2 * total + 2, sizeof(uint16_t)); /* sets, then items */
	int *parent = calloc(nsets ? nsets : 1, sizeof(int));
	int *owner = malloc(2 * 65536 * sizeof(int)); /* (core, id) -> first set with it */
	if (!ps || !items || !pool || !parent || !owner) {
		rc = fail(-ENOMEM, err, errlen, "pass plan: out of memory");
		goto out;
	}
	memset(owner, 0xff, 2 * 65536 * sizeof(int));

	/* 1-3: de-duplicate each set, refuse the sentinel and oversize sets. */
	size_t used = 0;
	for (size_t i = 0; i < nsets; i++) {
		const uint16_t *src[2] = { sets[i].aic, sets[i].aiv };
		uint32_t nsrc[2] = { sets[i].n_aic, sets[i].n_aiv };
		parent[i] = (int)i;
		ps[i].first = i;
		for (int c = 0; c < 2; c++) {
			if (nsrc[c] && !src[c]) {
				rc = fail(-EINVAL, err, errlen,
					  "pass plan: co-schedule set %zu: NULL %s list", i, cname[c]);
				goto out;
			}
			ps[i].ev[c] = pool + used;
			for (uint32_t k = 0; k < nsrc[c]; k++) {
				if (src[c][k] == TP_EV_NONE) {
					rc = fail(-EINVAL, err, errlen,
						  "pass plan: co-schedule set %zu: %s event id 0xffff is "
						  "the empty-slot sentinel, not an event", i, cname[c]);
					goto out;
				}
				if (!contains(ps[i].ev[c], ps[i].n[c], src[c][k]))
					ps[i].ev[c][ps[i].n[c]++] = src[c][k];
			}
			used += ps[i].n[c];
			if (ps[i].n[c] > slots) {
				rc = fail(-EINVAL, err, errlen,
					  "pass plan: co-schedule set %zu needs %u %s events in one "
					  "pass, max %u", i, ps[i].n[c], cname[c], slots);
				goto out;
			}
		}
		if (!ps[i].n[0] && !ps[i].n[1])
			ps[i].dropped = true;
	}

	/* Union sets that share a (core, id). */
	for (size_t i = 0; i < nsets; i++) {
		for (int c = 0; c < 2; c++) {
			for (uint32_t k = 0; k < ps[i].n[c]; k++) {
				int *o = &owner[c * 65536 + ps[i].ev[c][k]];
				if (*o < 0) {
					*o = (int)i;
				} else {
					int a = find_root(parent, *o), b = find_root(parent, (int)i);
					if (a != b) /* the lower index stays the root: stable */
						parent[a > b ? a : b] = a < b ? a : b;
				}
			}
		}
	}

	/* Components -> items. */
	size_t nitems = 0;
	for (size_t r = 0; r < nsets; r++) {
		if (ps[r].dropped || find_root(parent, (int)r) != (int)r)
			continue;
		struct pset u = { .first = r };
		u.ev[0] = pool + used;
		for (size_t i = r; i < nsets; i++)
			if (!ps[i].dropped && find_root(parent, (int)i) == (int)r)
				for (uint32_t k = 0; k < ps[i].n[0]; k++)
					if (!contains(u.ev[0], u.n[0], ps[i].ev[0][k]))
						u.ev[0][u.n[0]++] = ps[i].ev[0][k];
		u.ev[1] = u.ev[0] + u.n[0];
		for (size_t i = r; i < nsets; i++)
			if (!ps[i].dropped && find_root(parent, (int)i) == (int)r)
				for (uint32_t k = 0; k < ps[i].n[1]; k++)
					if (!contains(u.ev[1], u.n[1], ps[i].ev[1][k]))
						u.ev[1][u.n[1]++] = ps[i].ev[1][k];
		if (u.n[0] <= slots && u.n[1] <= slots) {
			used += u.n[0] + u.n[1];
			items[nitems++] = u;
			continue;
		}
		/* Too big together: the sets go separately (shared events are
		 * then read in every pass that needs them); a set contained in
		 * another member adds nothing. */
		for (size_t i = r; i < nsets; i++) {
			if (ps[i].dropped || find_root(parent, (int)i) != (int)r)
				continue;
			bool covered = false;
			for (size_t j = r; j < nsets && !covered; j++) {
				if (j == i || ps[j].dropped || find_root(parent, (int)j) != (int)r)
					continue;
				if (subset(&ps[i], &ps[j]) && (!subset(&ps[j], &ps[i]) || j < i))
					covered = true;
			}
			if (!covered)
				items[nitems++] = ps[i];
		}
	}

	/* 4: first-fit decreasing. */
	qsort(items, nitems, sizeof(*items), cmp_items);
	enum tp_pmu_arch arch = out->arch;
	memset(out, 0, sizeof(*out));
	out->arch = arch;
	out->slots = slots;
	for (uint32_t p = 0; p < TP_OP_MAX_PASSES; p++)
		for (int c = 0; c < 2; c++)
			for (int s = 0; s < TP_DRV_PROF_MAX_EVENTS; s++)
				out->pass[p].ev[c][s] = TP_EV_NONE;
	uint32_t np = 0;
	bool after_multi[TP_OP_MAX_PASSES][2];
	memset(after_multi, 0, sizeof(after_multi));
	for (size_t it = 0; it < nitems; it++) {
		const struct pset *x = &items[it];
		int where = -1;
		/* A pass that already reads all of it costs nothing. */
		for (uint32_t p = 0; p < np && where < 0; p++) {
			bool all = true;
			for (int c = 0; c < 2 && all; c++)
				for (uint32_t k = 0; k < x->n[c] && all; k++)
					all = contains(out->pass[p].ev[c], out->pass[p].n[c], x->ev[c][k]);
			if (all)
				where = (int)p;
		}
		for (uint32_t p = 0; p < np && where < 0; p++) {
			bool fits = true;
			for (int c = 0; c < 2 && fits; c++) {
				uint32_t need = 0;
				for (uint32_t k = 0; k < x->n[c]; k++)
					if (!contains(out->pass[p].ev[c], out->pass[p].n[c], x->ev[c][k]))
						need++;
				fits = out->pass[p].n[c] + need <= slots;
			}
			if (fits)
				where = (int)p;
		}
		if (where < 0) {
			if (np == TP_OP_MAX_PASSES) {
				rc = fail(-E2BIG, err, errlen,
					  "pass plan: the events need more than %d passes",
					  TP_OP_MAX_PASSES);
				goto out;
			}
			where = (int)np++;
		}
		struct tp_op_pass *pp = &out->pass[where];
		for (int c = 0; c < 2; c++) {
			/* " | " only around sets of two or more: between plain
			 * events it would be noise. */
			bool multi = x->n[c] >= 2, started = false;
			for (uint32_t k = 0; k < x->n[c]; k++) {
				if (contains(pp->ev[c], pp->n[c], x->ev[c][k]))
					continue;
				if (!started && pp->n[c] && (multi || after_multi[where][c]))
					pp->item_mask[c] |= (uint16_t)(1u << pp->n[c]);
				started = true;
				pp->ev[c][pp->n[c]++] = x->ev[c][k];
			}
			if (started)
				after_multi[where][c] = multi;
		}
	}
	/* 5: no events still measures once (timing, duration). */
	out->npasses = np ? np : 1;
out:
	free(ps);
	free(items);
	free(pool);
	free(parent);
	free(owner);
	return rc;
}

int tp_op_plan_for_groups(enum tp_pmu_arch arch, uint32_t group_mask, const uint16_t *extra_aic,
			  size_t n_extra_aic, const uint16_t *extra_aiv, size_t n_extra_aiv,
			  struct tp_op_plan *out, char *err, size_t errlen)
{
	if (!out)
		return fail(-EINVAL, err, errlen, "pass plan: NULL plan");
	if (arch != TP_PMU_ARCH_A2A3 && arch != TP_PMU_ARCH_A5)
		return fail(-EINVAL, err, errlen, "pass plan: unknown architecture %d", (int)arch);
	if (group_mask >> TP_OP_NGROUPS)
		return fail(-EINVAL, err, errlen, "pass plan: group mask 0x%x has unknown bits",
			    group_mask);
	if ((n_extra_aic && !extra_aic) || (n_extra_aiv && !extra_aiv))
		return fail(-EINVAL, err, errlen, "pass plan: NULL extra event list");

	/* Every group contributes at most 2 x 10 events and its metrics. */
	size_t cap = n_extra_aic + n_extra_aiv + TP_OP_NGROUPS * 64;
	struct tp_op_coset *sets = calloc(cap, sizeof(*sets));
	uint16_t *store = calloc(TP_OP_NGROUPS * 2 * TP_PMU_MAX_SLOTS, sizeof(uint16_t));
	if (!sets || !store) {
		free(sets);
		free(store);
		return fail(-ENOMEM, err, errlen, "pass plan: out of memory");
	}
	size_t n = 0, su = 0;
	for (int g = 0; g < TP_OP_NGROUPS; g++) {
		if (!(group_mask & (1u << g)))
			continue;
		const struct tp_op_group_arch *ga = &tp_op_group_get(g)->arch[arch];
		for (uint32_t i = 0; i < ga->n_metrics; i++) {
			const struct tp_op_metric *m = &ga->metrics[i];
			if (m->core == TP_OP_AIC)
				sets[n++] = (struct tp_op_coset){ .n_aic = m->n_ev, .aic = m->ev };
			else
				sets[n++] = (struct tp_op_coset){ .n_aiv = m->n_ev, .aiv = m->ev };
		}
		for (int c = 0; c < 2; c++) {
			size_t k = tp_op_group_events(g, arch, c, store + su, TP_PMU_MAX_SLOTS);
			for (size_t i = 0; i < k; i++) {
				if (c == TP_OP_AIC)
					sets[n++] = (struct tp_op_coset){ .n_aic = 1, .aic = store + su + i };
				else
					sets[n++] = (struct tp_op_coset){ .n_aiv = 1, .aiv = store + su + i };
			}
			su += k;
		}
	}
	for (size_t i = 0; i < n_extra_aic; i++)
		sets[n++] = (struct tp_op_coset){ .n_aic = 1, .aic = extra_aic + i };
	for (size_t i = 0; i < n_extra_aiv; i++)
		sets[n++] = (struct tp_op_coset){ .n_aiv = 1, .aiv = extra_aiv + i };
	out->arch = arch;
	int rc = tp_op_plan_build(sets, n, (uint32_t)tp_pmu_arch_slots(arch), out, err, errlen);
	free(sets);
	free(store);
	return rc;
}

int tp_op_plan_find(const struct tp_op_plan *p, int core, uint16_t id)
{
	if (!p || core < 0 || core > 1)
		return -1;
	for (uint32_t i = 0; i < p->npasses && i < TP_OP_MAX_PASSES; i++)
		if (contains(p->pass[i].ev[core], p->pass[i].n[core], id))
			return (int)i;
	return -1;
}

uint32_t tp_op_plan_total_events(const struct tp_op_plan *p)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->npasses && i < TP_OP_MAX_PASSES; i++)
		for (int c = 0; c < 2; c++)
			for (uint32_t k = 0; k < p->pass[i].n[c]; k++)
				if (tp_op_plan_find(p, c, p->pass[i].ev[c][k]) == (int)i)
					n++;
	return n;
}

static void print_row(FILE *f, const struct tp_op_plan *p, const struct tp_op_pass *ps, int c)
{
	for (uint32_t s = 0; s < p->slots && s < TP_DRV_PROF_MAX_EVENTS; s++) {
		if (s && s < ps->n[c] && (ps->item_mask[c] & (1u << s)))
			fputs(" |", f);
		if (s < ps->n[c])
			fprintf(f, " 0x%02x", ps->ev[c][s]);
		else
			fputs(" -", f);
	}
}

void tp_op_plan_print(FILE *f, const struct tp_op_plan *p)
{
	static const char *cname[2] = { "AIC", "AIV" };
	uint32_t ev[2] = { 0, 0 };
	for (uint32_t i = 0; i < p->npasses; i++)
		for (int c = 0; c < 2; c++)
			ev[c] += p->pass[i].n[c];
	fprintf(f, "pass plan: arch %s, %u slots per core type, %u pass%s, %u AIC + %u AIV events\n",
		p->arch == TP_PMU_ARCH_A5 ? "a5" : "a2a3", p->slots, p->npasses,
		p->npasses == 1 ? "" : "es", ev[0], ev[1]);
	for (uint32_t i = 0; i < p->npasses; i++) {
		fprintf(f, "pass %-2u AIC:", i);
		print_row(f, p, &p->pass[i], 0);
		fputs("    AIV:", f);
		print_row(f, p, &p->pass[i], 1);
		fputc('\n', f);
	}
	fputs("events:\n", f);
	for (uint32_t i = 0; i < p->npasses; i++) {
		for (int c = 0; c < 2; c++) {
			for (uint32_t k = 0; k < p->pass[i].n[c]; k++) {
				uint16_t id = p->pass[i].ev[c][k];
				const char *name = tp_op_event_name(p->arch, id);
				uint32_t gm = tp_op_groups_of_event(p->arch, c, id);
				/* ids of 2 and 3 hex digits (0x49, 0x500): one column */
				char hex[8];
				snprintf(hex, sizeof(hex), "0x%02x", id);
				fprintf(f, "  pass %u %s %-5s %-34s ", i, cname[c], hex,
					name ? name : "(raw event)");
				if (!gm)
					fputs("-", f);
				for (int g = 0, first = 1; g < TP_OP_NGROUPS; g++) {
					if (!(gm & (1u << g)))
						continue;
					fprintf(f, "%s%s", first ? "" : ",", tp_op_group_name(g));
					first = 0;
				}
				fputc('\n', f);
			}
		}
	}
}
