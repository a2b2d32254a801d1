/* SPDX-License-Identifier: MIT */
/*
 * collectors/depgen/depgen_dev.c — the device half of dep_gen: the
 * orchestrator's record writers (depgen.h).
 *
 * Each writer fills the record in place in the current device buffer
 * (dpe_reserve / dpe_commit): no staging copy. A record the transport
 * could not take is counted by the engine (dropped, by cause); the host
 * then refuses to export.
 */
#include <string.h>

#include "collectors/depgen/depgen.h"

static inline union dg_record *dg_reserve(struct dg_writer *w)
{
	union dg_record *r = dpe_reserve(&w->dpe);
	/* Unused bytes are zeroed so a record's bytes never depend on what the
	 * buffer held before (recycled buffers are not cleared). */
	if (r)
		memset(r, 0, sizeof(*r));
	return r;
}

void dg_dev_task(struct dg_writer *w, uint64_t task_id, uint64_t submit_idx, bool manual,
		 bool early_dispatch, const int32_t kernel_ids[3], uint32_t block_num,
		 uint32_t n_args)
{
	union dg_record *r = dg_reserve(w);
	if (!r)
		return;
	r->task.type = DG_REC_TASK;
	r->task.flags = (uint8_t)((manual ? DG_TASK_MANUAL : 0) |
				  (early_dispatch ? DG_TASK_EARLY : 0));
	r->task.n_args = (uint8_t)(n_args > 255 ? 255 : n_args);
	r->task.block_num = block_num ? block_num : 1;
	for (int i = 0; i < 3; i++)
		r->task.kernel_ids[i] = kernel_ids[i] < 0 ? -1 : kernel_ids[i];
	r->task.task_id = task_id;
	r->task.submit_idx = submit_idx;
	dpe_commit(&w->dpe);
}

void dg_dev_arg(struct dg_writer *w, uint64_t task_id, uint32_t idx, enum dg_arg_type type,
		const struct dg_tensor *t)
{
	union dg_record *r = dg_reserve(w);
	if (!r)
		return;
	r->arg.type = DG_REC_ARG;
	r->arg.idx = (uint8_t)idx;
	r->arg.arg_type = (uint8_t)type;
	r->arg.task_id = task_id;
	if (t) {
		uint32_t nd = t->ndims > DG_MAX_DIMS ? DG_MAX_DIMS : t->ndims;
		r->arg.has_tensor = 1;
		r->arg.dtype = t->dtype;
		r->arg.ndims = (uint8_t)nd;
		r->arg.version = t->version;
		r->arg.buffer_addr = t->buffer_addr;
		r->arg.buffer_numel = t->buffer_numel;
		r->arg.start_offset = t->start_offset;
		memcpy(r->arg.shape, t->shape, nd * sizeof(uint32_t));
		memcpy(r->arg.strides, t->strides, nd * sizeof(uint32_t));
	}
	dpe_commit(&w->dpe);
}

void dg_dev_edge(struct dg_writer *w, uint64_t pred, uint64_t succ, int32_t arg,
		 enum dg_source source, enum dg_overlap overlap, const struct dg_tensor *producer)
{
	union dg_record *r = dg_reserve(w);
	if (!r)
		return;
	r->edge.type = DG_REC_EDGE;
	r->edge.source = (uint8_t)source;
	r->edge.overlap = (uint8_t)overlap;
	r->edge.arg = source == DG_SRC_EXPLICIT ? -1 : arg;
	r->edge.pred = pred;
	r->edge.succ = succ;
	if (producer) {
		uint32_t nd = producer->ndims > DG_MAX_DIMS ? DG_MAX_DIMS : producer->ndims;
		r->edge.ndims = (uint8_t)nd;
		r->edge.start_offset = producer->start_offset;
		memcpy(r->edge.shape, producer->shape, nd * sizeof(uint32_t));
		memcpy(r->edge.strides, producer->strides, nd * sizeof(uint32_t));
	}
	dpe_commit(&w->dpe);
}

int dg_writer_flush(struct dg_writer *w)
{
	if (!w->attached)
		return 0;
	return dpe_flush(&w->dpe);
}
