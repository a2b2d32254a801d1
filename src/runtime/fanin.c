/* SPDX-License-Identifier: MIT */
#include "runtime/fanin.h"

#include <errno.h>
#include <stdlib.h>

#include "base/error.h"

void tp_fanin_fini(struct tp_fanin *f)
{
	free(f->deps);
	f->deps = NULL;
	f->n = f->cap = 0;
}

int tp_fanin_add(struct tp_fanin *f, tp_task_id id, enum tp_dep_source src, enum tp_overlap ov)
{
	/* Linear dedup: fanins are small (tens), and order is kept for
	 * deterministic wiring and dep_gen output. */
	for (uint32_t i = 0; i < f->n; i++)
		if (f->deps[i].producer == id)
			return 0;
	if (f->n == f->cap) {
		uint32_t cap = f->cap ? 2 * f->cap : 16;
		struct tp_fanin_dep *p = realloc(f->deps, cap * sizeof(*p));
		if (!p)
			return tp_set_error(-ENOMEM, "fanin: no memory for %u producers", cap);
		f->deps = p;
		f->cap = cap;
	}
	f->deps[f->n++] = (struct tp_fanin_dep){ id, (uint8_t)src, (uint8_t)ov };
	return 1;
}

int tp_fanin_add_explicit(struct tp_fanin *f, const struct tp_tensormap *tm, tp_task_id id)
{
	if (!tp_tensormap_task_live(tm, id))
		return 0;
	return tp_fanin_add(f, id, TP_DEP_EXPLICIT, TP_OVERLAP_NONE);
}

struct collect {
	struct tp_fanin *f;
	bool inout;
	int added;
	int err;
};

static bool on_match(struct tp_tensormap *tm, struct tp_tmap_entry *e, enum tp_overlap ov,
		     void *ud)
{
	struct collect *c = ud;
	int rc = tp_fanin_add(c->f, e->producer, TP_DEP_TENSORMAP, ov);
	if (rc < 0) {
		c->err = rc;
		return false;
	}
	c->added += rc;
	if (c->inout && ov == TP_OVERLAP_COVERED) {
		tm->covered_removed++;
		tp_tensormap_remove(tm, e);
	}
	return true;
}

int tp_fanin_collect_arg(struct tp_fanin *f, struct tp_tensormap *tm, const struct tp_tensor *t,
			 enum tp_arg_tag tag)
{
	if (tag == TP_ARG_OUTPUT)
		return 0;
	int added = 0;
	/* Step A: creator retention. A live creator is a producer even when
	 * the tensor map has no entry for the buffer (OUTPUT and
	 * alloc_tensors buffers are never inserted). */
	if (tp_tensormap_task_live(tm, t->owner_task_id)) {
		int rc = tp_fanin_add(f, t->owner_task_id, TP_DEP_CREATOR, TP_OVERLAP_NONE);
		if (rc < 0)
			return rc;
		added += rc;
	}
	/* Step B. */
	if ((tag == TP_ARG_INPUT || tag == TP_ARG_INOUT) && !t->manual_dep) {
		struct collect c = { f, tag == TP_ARG_INOUT, 0, 0 };
		tp_tensormap_lookup(tm, t, on_match, &c);
		if (c.err)
			return c.err;
		added += c.added;
	}
	return added;
}

int tp_fanin_register_arg(struct tp_tensormap *tm, const struct tp_tensor *t,
			  enum tp_arg_tag tag, tp_task_id task)
{
	if (tag != TP_ARG_INOUT && tag != TP_ARG_OUTPUT_EXISTING)
		return 0;
	return tp_tensormap_insert(tm, t, task);
}
