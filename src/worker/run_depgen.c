/* SPDX-License-Identifier: MIT */
/*
 * worker/run_depgen.c — the Worker's dep_gen glue (run_depgen.h): the
 * orchestrator hooks turn runtime values into the collector's plain
 * records, and the name map writer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "platform/dev_memory.h"
#include "runtime/fanin.h"
#include "runtime/tensor.h"
#include "worker/run_depgen.h"

struct wk_depgen {
	struct dg_collector *dg;
	struct dg_writer w;        /* used by the orchestrator thread only */
	struct tp_orch_hooks hooks;
	uint64_t submit_idx;       /* orchestrator thread only */
	bool flushed;
};

static uint8_t dtype_of(uint8_t dt)
{
	switch ((enum tp_dtype)dt) {
	case TP_FP32:
		return DG_FLOAT32;
	case TP_FP16:
		return DG_FLOAT16;
	case TP_BF16:
		return DG_BFLOAT16;
	case TP_INT8:
		return DG_INT8;
	case TP_INT32:
		return DG_INT32;
	default:
		return DG_UNKNOWN;
	}
}

static void tensor_of(const struct tp_tensor *t, struct dg_tensor *o)
{
	size_t es = tp_dtype_size((enum tp_dtype)t->dtype);
	uint32_t nd = t->ndims > DG_MAX_DIMS ? DG_MAX_DIMS : t->ndims;
	o->buffer_addr = t->buffer_addr;
	o->buffer_numel = es ? t->buffer_size / es : 0;
	o->start_offset = t->start_offset;
	o->version = t->version;
	o->dtype = dtype_of(t->dtype);
	o->ndims = (uint8_t)nd;
	memcpy(o->shape, t->shapes, nd * sizeof(uint32_t));
	memcpy(o->strides, t->strides, nd * sizeof(uint32_t));
}

static enum dg_arg_type arg_type_of(uint8_t tag)
{
	switch ((enum tp_arg_tag)tag) {
	case TP_ARG_INPUT:
		return DG_ARG_INPUT;
	case TP_ARG_OUTPUT:
		return DG_ARG_OUTPUT;
	case TP_ARG_INOUT:
		return DG_ARG_INOUT;
	case TP_ARG_OUTPUT_EXISTING:
		return DG_ARG_OUTPUT_EXISTING;
	default:
		return DG_ARG_UNKNOWN; /* NO_DEP has no deps.json name */
	}
}

static void on_dep_task(void *ud, tp_task_id task, bool manual, bool early_dispatch,
			const int32_t kernel_id[3], uint32_t block_num, uint32_t n_args,
			const uint8_t *tags, const struct tp_tensor *tensors)
{
	struct wk_depgen *d = ud;
	dg_dev_task(&d->w, task, d->submit_idx++, manual, early_dispatch, kernel_id, block_num,
		    n_args);
	for (uint32_t i = 0; i < n_args; i++) {
		enum dg_arg_type ty = arg_type_of(tags[i]);
		struct dg_tensor t;
		/* OUTPUT slots are create-infos: not materialised at step 2. */
		if (ty != DG_ARG_OUTPUT)
			tensor_of(&tensors[i], &t);
		dg_dev_arg(&d->w, task, i, ty, ty == DG_ARG_OUTPUT ? NULL : &t);
	}
}

static void on_dep_edge(void *ud, tp_task_id pred, tp_task_id succ, int32_t arg, int source,
			int overlap, const struct tp_tensor *producer_view)
{
	struct wk_depgen *d = ud;
	struct dg_tensor p;
	if (producer_view)
		tensor_of(producer_view, &p);
	enum dg_source s = source == TP_DEP_CREATOR     ? DG_SRC_CREATOR
			   : source == TP_DEP_TENSORMAP ? DG_SRC_TENSORMAP
							: DG_SRC_EXPLICIT;
	enum dg_overlap ov = overlap == TP_OVERLAP_COVERED ? DG_OV_COVERED
			     : overlap == TP_OVERLAP_OTHER ? DG_OV_OTHER
							   : DG_OV_NONE;
	dg_dev_edge(&d->w, pred, succ, arg, s, ov, producer_view ? &p : NULL);
}

int wk_depgen_open(struct wk_depgen **out, struct tp_device *dev, const char *label)
{
	*out = NULL;
	struct wk_depgen *d = calloc(1, sizeof(*d));
	if (!d)
		return tp_set_error(-ENOMEM, "dep_gen: out of memory");
	struct dg_config cfg = { .ops = tp_dev_memops(dev), .label = label };
	d->dg = dg_open(&cfg);
	if (!d->dg) {
		free(d);
		/* dg_open() said why, "dep_gen: ..." */
		return tp_set_error(-ENOMEM, "%s", tp_last_error()[0] ? tp_last_error()
						     : "dep_gen: cannot open the collector");
	}
	int rc = dg_writer_attach(d->dg, &d->w);
	if (rc) {
		dg_close(d->dg);
		free(d);
		return rc;
	}
	d->hooks = (struct tp_orch_hooks){ .on_dep_task = on_dep_task,
					   .on_dep_edge = on_dep_edge,
					   .ud = d };
	*out = d;
	return 0;
}

const struct tp_orch_hooks *wk_depgen_hooks(struct wk_depgen *d)
{
	return d ? &d->hooks : NULL;
}

void wk_depgen_orch_done(struct wk_depgen *d)
{
	if (!d || d->flushed)
		return;
	dg_writer_flush(&d->w);
	d->flushed = true;
}

bool wk_depgen_submitted(const struct wk_depgen *d)
{
	/* The orchestrator thread's count, read after its join. */
	return d && d->w.dpe.total > 0;
}

int wk_depgen_close(struct wk_depgen *d, const char *dir, struct dg_summary *sum)
{
	if (!d)
		return 0;
	/* An orchestrator that never ran (the launch failed) flushes nothing;
	 * one that ran flushed on its own thread. The device threads are
	 * joined here, so the writer is free to touch. */
	if (!d->flushed)
		dg_writer_flush(&d->w);
	int rc = dg_finish(d->dg, dir, sum);
	dg_close(d->dg);
	free(d);
	return rc;
}

/* ---- name map (spec/swimlane-format.md §3.4) ------------------------- */

struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (b->n + n + 1 > cap)
			cap *= 2;
		char *q = realloc(b->p, cap);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void sb_puts(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

/* Decode one UTF-8 sequence at @s; invalid bytes read as U+FFFD. */
static uint32_t utf8_next(const unsigned char **s)
{
	const unsigned char *p = *s;
	uint32_t c = p[0];
	int n = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2
		 : (c & 0xf8) == 0xf0 ? 3 : -1;
	if (n < 0) {
		*s = p + 1;
		return 0xfffd;
	}
	c &= n ? (0x3fu >> n) : 0x7fu;
	for (int i = 1; i <= n; i++) {
		if ((p[i] & 0xc0) != 0x80) {
			*s = p + 1;
			return 0xfffd;
		}
		c = (c << 6) | (p[i] & 0x3fu);
	}
	*s = p + 1 + n;
	return c > 0x10ffff ? 0xfffd : c;
}

/* A JSON string as Python's json.dumps writes it (ensure_ascii). */
static void sb_json_str(struct sbuf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char u[16];
	sb_put(b, "\"", 1);
	while (*p) {
		uint32_t c = utf8_next(&p);
		switch (c) {
		case '"':
			sb_puts(b, "\\\"");
			continue;
		case '\\':
			sb_puts(b, "\\\\");
			continue;
		case '\n':
			sb_puts(b, "\\n");
			continue;
		case '\r':
			sb_puts(b, "\\r");
			continue;
		case '\t':
			sb_puts(b, "\\t");
			continue;
		case '\b':
			sb_puts(b, "\\b");
			continue;
		case '\f':
			sb_puts(b, "\\f");
			continue;
		}
		if (c >= 0x20 && c < 0x7f) {
			char ch = (char)c;
			sb_put(b, &ch, 1);
		} else if (c == 0x7f) {
			sb_put(b, "\x7f", 1);
		} else if (c < 0x10000) {
			snprintf(u, sizeof(u), "\\u%04x", c);
			sb_puts(b, u);
		} else {
			c -= 0x10000;
			snprintf(u, sizeof(u), "\\u%04x\\u%04x", 0xd800 + (c >> 10),
				 0xdc00 + (c & 0x3ff));
			sb_puts(b, u);
		}
	}
	sb_put(b, "\"", 1);
}

int wk_write_name_map(const char *dir, const struct tp_callable *cal, const char *case_name,
		      char *path, size_t path_len)
{
	if (path && path_len)
		path[0] = 0;
	bool any = cal->orch_name != NULL;
	for (int i = 0; i < cal->n_kernels; i++)
		any = any || cal->kernels[i].name != NULL;
	if (!any)
		return 0;

	/* safe_label: "<callable>_<case>", anything but [A-Za-z0-9._-] -> '_',
	 * cut to 159 bytes as the run folder's name is (worker.c
	 * make_run_dir): "name_map_" + 255 would pass a file name's 255. */
	char label[160], file[4200];
	snprintf(label, sizeof(label), "%s_%s", cal->name, case_name);
	for (char *c = label; *c; c++) {
		bool ok = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
			  (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-';
		if (!ok)
			*c = '_';
	}
	int k = snprintf(file, sizeof(file), "%s/name_map_%s.json", dir, label);
	if (k < 0 || (size_t)k >= sizeof(file))
		return tp_set_error(-ENAMETOOLONG, "name map: output folder name too long");

	/* json.dump(indent=2): ", " never appears (item separator "," at the
	 * end of a line), key separator ": ", no trailing newline. */
	struct sbuf b = { 0 };
	sb_puts(&b, "{\n  \"level\": 2,\n  \"orchestrator_name\": ");
	if (cal->orch_name)
		sb_json_str(&b, cal->orch_name);
	else
		sb_puts(&b, "null");
	bool first = true;
	for (int i = 0; i < cal->n_kernels; i++) {
		const struct tp_case_kernel *kn = &cal->kernels[i];
		if (!kn->name)
			continue;
		char key[32];
		snprintf(key, sizeof(key), "%d", kn->func_id);
		sb_puts(&b, first ? ",\n  \"callable_id_to_name\": {\n    " : ",\n    ");
		sb_json_str(&b, key);
		sb_puts(&b, ": ");
		sb_json_str(&b, kn->name);
		first = false;
	}
	if (!first)
		sb_puts(&b, "\n  }");
	sb_puts(&b, "\n}");
	if (b.oom) {
		free(b.p);
		return tp_set_error(-ENOMEM, "name map: out of memory");
	}
	int rc = tp_write_file_atomic(file, b.p, b.n);
	free(b.p);
	if (!rc && path && path_len)
		snprintf(path, path_len, "%s", file);
	return rc;
}
