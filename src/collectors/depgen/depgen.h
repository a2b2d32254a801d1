/* SPDX-License-Identifier: MIT */
/*
 * collectors/depgen/depgen.h — the dep_gen collector: the static task graph
 * of one run as deps.json (spec/swimlane-format.md §3.1; seed 002 §3.5;
 * spec/runtime-model.md §2.4 step 2, §7.1 item 11).
 *
 * Device half (the orchestrator, one producer): per submit one TASK record
 * (identity, scope, early_dispatch, kernel ids, block_num) followed by one
 * ARG record per tensor argument (tag, tensor identity and slice), then
 * one EDGE record per dependency edge (source, overlap, the producer's
 * slice). An edge's consumer tensor is the consumer's argument `arg`, so
 * it is not repeated: the host joins it at export. Records are fixed-size
 * (struct dg_record, 96 bytes) and travel through the profiling framework
 * (transport/): one buffer kind, one instance, one ready queue.
 *
 * Host half: one tp_module collector that copies every delivered buffer,
 * and, after prof_stop and prof_reconcile, writes <dir>/deps.json (temp +
 * rename). A run that lost a single record does not get a deps.json: a
 * silently partial graph would draw wrong arrows.
 *
 *     struct dg_collector *dg = dg_open(&cfg);   // prof_open + prof_start
 *     struct dg_writer w;  dg_writer_attach(dg, &w);
 *     ... orchestrator: dg_dev_task(&w, ...); dg_dev_arg(...); dg_dev_edge(...)
 *     dg_writer_flush(&w);                       // orchestrator, at its end
 *     dg_finish(dg, dir, &sum);                  // stop, reconcile, export
 *     dg_close(dg);
 *
 * Collectors never include runtime headers: everything arrives as plain
 * values (ARCHITECTURE.md §2).
 */
#ifndef TASKPROF_COLLECTORS_DEPGEN_H
#define TASKPROF_COLLECTORS_DEPGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "transport/dev_engine.h"
#include "transport/module.h"

/* Geometry (spec/framework.md §1.2: PLATFORM_DEP_GEN_*). */
#define DG_RECORDS_PER_BUFFER 1024u
#define DG_SLOT_COUNT 4u
#define DG_BUFFERS_PER_INSTANCE 4u
#define DG_READYQUEUE_SIZE 8u

#define DG_MAX_DIMS 5

/* Argument types of deps.json args[].type. */
enum dg_arg_type {
	DG_ARG_INPUT = 0,
	DG_ARG_OUTPUT,          /* create-info: no tensor info */
	DG_ARG_INOUT,
	DG_ARG_OUTPUT_EXISTING,
	DG_ARG_UNKNOWN,         /* any other tag (e.g. NO_DEP) */
};

/* Edge sources and overlaps (deps.json edges[].source / .overlap). */
enum dg_source { DG_SRC_EXPLICIT = 0, DG_SRC_CREATOR, DG_SRC_TENSORMAP };
enum dg_overlap { DG_OV_NONE = 0, DG_OV_COVERED, DG_OV_OTHER };

/* Element types, in the order of dg_dtype_name(). */
enum dg_dtype {
	DG_FLOAT32 = 0, DG_FLOAT16, DG_INT32, DG_INT16, DG_INT8, DG_UINT8, DG_BFLOAT16,
	DG_INT64, DG_UINT64, DG_UINT16, DG_UINT32, DG_BOOL, DG_FP8E4M3FN, DG_FP8E8M0,
	DG_FP4E2M1, DG_UNKNOWN, DG_DTYPE_COUNT
};

/**
 * dg_dtype_name() - the deps.json dtype string (spec/swimlane-format.md
 * §3.1).
 * @dtype: enum dg_dtype.
 *
 * Return: "FLOAT32", "FLOAT16", ... (a static string); "UNKNOWN" for
 * DG_UNKNOWN or any value >= DG_DTYPE_COUNT.
 */
const char *dg_dtype_name(unsigned dtype);

/**
 * struct dg_tensor - a tensor view as plain values (deps.json args[] /
 * edges[] slices, spec/swimlane-format.md §3.1). Offsets, shapes and
 * strides count elements; @buffer_addr is the buffer's device address.
 */
struct dg_tensor {
	uint64_t buffer_addr;
	uint64_t buffer_numel;  /* buffer bytes / element size; 0 if size 0 */
	uint64_t start_offset;
	uint32_t version;
	uint8_t dtype;          /* enum dg_dtype */
	uint8_t ndims;          /* 0 .. DG_MAX_DIMS */
	uint32_t shape[DG_MAX_DIMS];
	uint32_t strides[DG_MAX_DIMS];
};

/* ---- records (device -> host) ---------------------------------------- */

enum dg_rec_type { DG_REC_TASK = 1, DG_REC_ARG = 2, DG_REC_EDGE = 3 };

#define DG_TASK_MANUAL 0x1u  /* flags: submitted in a manual scope */
#define DG_TASK_EARLY 0x2u   /* flags: early_dispatch */

/**
 * struct dg_rec_task - TASK record: one submit. @block_num is at least 1.
 */
struct dg_rec_task {
	uint8_t type;           /* DG_REC_TASK */
	uint8_t flags;          /* DG_TASK_* */
	uint8_t n_args;         /* ARG records that follow */
	uint8_t pad0;
	uint32_t block_num;
	int32_t kernel_ids[3];  /* [aic, aiv0, aiv1], -1 inactive */
	uint32_t pad1;
	uint64_t task_id;
	uint64_t submit_idx;    /* 0, 1, ... in submit order */
};

/**
 * struct dg_rec_arg - ARG record: argument @idx of task @task_id; the
 * tensor fields are valid when @has_tensor (counts in elements).
 */
struct dg_rec_arg {
	uint8_t type;           /* DG_REC_ARG */
	uint8_t idx;
	uint8_t arg_type;       /* enum dg_arg_type */
	uint8_t has_tensor;
	uint8_t dtype;
	uint8_t ndims;
	uint16_t pad0;
	uint32_t version;
	uint32_t pad1;
	uint64_t task_id;
	uint64_t buffer_addr;
	uint64_t buffer_numel;
	uint64_t start_offset;
	uint32_t shape[DG_MAX_DIMS];
	uint32_t strides[DG_MAX_DIMS];
};

/**
 * struct dg_rec_edge - EDGE record: @pred -> @succ; the slice is the
 * producer's view (TENSORMAP edges), in elements.
 */
struct dg_rec_edge {
	uint8_t type;           /* DG_REC_EDGE */
	uint8_t source;         /* enum dg_source */
	uint8_t overlap;        /* enum dg_overlap (TENSORMAP) */
	uint8_t ndims;          /* producer view (TENSORMAP) */
	int32_t arg;            /* consumer arg slot; -1 for EXPLICIT */
	uint64_t pred;
	uint64_t succ;
	uint64_t start_offset;  /* producer view (TENSORMAP) */
	uint32_t shape[DG_MAX_DIMS];
	uint32_t strides[DG_MAX_DIMS];
};

#define DG_RECORD_SIZE 96u

/**
 * union dg_record - one fixed-size record (DG_RECORD_SIZE = 96 bytes);
 * `type` (enum dg_rec_type) is the first byte of every member.
 */
union dg_record {
	uint8_t type;
	struct dg_rec_task task;
	struct dg_rec_arg arg;
	struct dg_rec_edge edge;
	uint8_t bytes[DG_RECORD_SIZE];
};

_Static_assert(sizeof(union dg_record) == DG_RECORD_SIZE, "dg_record is 96 bytes");

/* ---- device half ----------------------------------------------------- */

/**
 * struct dg_writer - the orchestrator's writer: one producer, one
 * instance, ready queue 0; bound by dg_writer_attach().
 * @dpe:      the engine's writer.
 * @attached: dg_writer_attach() succeeded.
 */
struct dg_writer {
	struct tp_dpe dpe;
	bool attached;
};

/*
 * The device writers run on the orchestrator thread, one record each. A
 * record the transport cannot take is counted dropped by the engine
 * (enum tp_drop_cause) and the call returns normally; dg_finish() then
 * refuses to write deps.json. None of them checks @w->attached (use
 * dg_writer_attach() first).
 */

/**
 * dg_dev_task() - a submit: one TASK record (spec/runtime-model.md §2.4
 * step 2).
 * @w:              the writer.
 * @task_id:        the task's 64-bit id.
 * @submit_idx:     0, 1, ... in submit order.
 * @manual:         submitted in a manual scope.
 * @early_dispatch: the task may be early-dispatched.
 * @kernel_ids:     func_id per slot [aic, aiv0, aiv1]; negative: inactive
 *                  (stored as -1).
 * @block_num:      SPMD blocks; 0 is stored as 1.
 * @n_args:         ARG records that must follow (dg_dev_arg()); more than
 *                  255 is stored as 255.
 */
void dg_dev_task(struct dg_writer *w, uint64_t task_id, uint64_t submit_idx, bool manual,
		 bool early_dispatch, const int32_t kernel_ids[3], uint32_t block_num,
		 uint32_t n_args);
/**
 * dg_dev_arg() - one ARG record: argument @idx of task @task_id.
 * @w:       the writer.
 * @task_id: the task of the preceding dg_dev_task().
 * @idx:     argument index (stored as 8 bits).
 * @type:    its tag.
 * @t:       its tensor view; NULL for an OUTPUT (create-info) slot. More
 *           than DG_MAX_DIMS dims are cut to DG_MAX_DIMS.
 */
void dg_dev_arg(struct dg_writer *w, uint64_t task_id, uint32_t idx, enum dg_arg_type type,
		const struct dg_tensor *t);
/**
 * dg_dev_edge() - one EDGE record: @pred must complete before @succ.
 * @w:        the writer.
 * @pred:     producer task id.
 * @succ:     consumer task id.
 * @arg:      the consumer's argument slot the edge comes through; stored
 *            as -1 for DG_SRC_EXPLICIT.
 * @source:   how the dependency was found.
 * @overlap:  how the producer's view overlaps the consumer's (TENSORMAP).
 * @producer: the producer's view (TENSORMAP), or NULL.
 */
void dg_dev_edge(struct dg_writer *w, uint64_t pred, uint64_t succ, int32_t arg,
		 enum dg_source source, enum dg_overlap overlap, const struct dg_tensor *producer);
/**
 * dg_writer_flush() - end of orchestration: publish the partial buffer
 * (dpe_flush()).
 * @w: the writer; one never attached does nothing.
 *
 * Return: 0, or -EAGAIN when the ready queue stayed full past the
 * backstop (its records are then counted as dropped). Sets no
 * tp_last_error() message.
 */
int dg_writer_flush(struct dg_writer *w);

/* ---- host half ------------------------------------------------------- */

struct dg_collector;

/**
 * struct dg_config - one dep_gen collection.
 * @ops:             device memory of the run (tp_dev_memops()).
 * @backstop_cycles: gate backstop in system-counter ticks; 0 -> 30 s.
 * @label:           log tag detail (e.g. the case); may be NULL.
 */
struct dg_config {
	struct tp_memops ops;
	uint64_t backstop_cycles;
	const char *label;
};

/**
 * struct dg_summary - what dg_finish() found.
 * @total, @collected, @dropped: records, from prof_reconcile.
 * @tasks, @args, @edges, @tensors: entries written to deps.json.
 * @path: the deps.json written ("" when none).
 */
struct dg_summary {
	uint64_t total, collected, dropped;
	uint64_t tasks, args, edges, tensors;
	uint64_t pairs; /* distinct (pred, succ) among edges; 0 if not counted */
	char path[4200];
};

/**
 * dg_open() - open the pool (prof_open(): one kind, one instance, one
 * ready queue, DG_BUFFERS_PER_INSTANCE buffers) and start the host
 * threads (prof_start()).
 * @cfg: the collection; @cfg->label is copied.
 *
 * Return: the collector, or NULL with tp_last_error() set: -ENOMEM, or
 * what prof_open() / prof_start() failed with.
 */
struct dg_collector *dg_open(const struct dg_config *cfg);

/**
 * dg_writer_attach() - bind @w to the collector's one instance, ready
 * queue 0.
 * @dg: the collector.
 * @w:  the writer; zeroed first.
 *
 * Return: 0, or dpe_attach()'s -EINVAL with tp_last_error() set.
 */
int dg_writer_attach(struct dg_collector *dg, struct dg_writer *w);

/**
 * dg_finish() - after the orchestrator flushed its writer and stopped:
 * prof_stop, prof_reconcile (one log line: collected + dropped == total)
 * and, when @dir is not NULL, write @dir/deps.json in the format of
 * spec/swimlane-format.md §3.1.
 * @dg:  the collector.
 * @dir: an existing run folder, or NULL (reconcile only).
 * @sum: receives the figures (may be NULL); zeroed first.
 *
 * Return: 0; -EPROTO when a record was dropped, the pool does not balance
 * or the reconcile itself failed (no deps.json is written; the message
 * names the counts); -EBADMSG when the records do not form a graph (an
 * ARG or EDGE without its task, an edge naming an argument the task does
 * not have); -ENOMEM; -ENAMETOOLONG; the file errors of base/file.h.
 * tp_last_error() says why on every failure.
 */
int dg_finish(struct dg_collector *dg, const char *dir, struct dg_summary *sum);

/**
 * dg_close() - stop and free everything (NULL is a no-op).
 * @dg: the collector.
 */
void dg_close(struct dg_collector *dg);

/**
 * dg_tensor_id() - deps.json tensor_id (spec/swimlane-format.md §3.1).
 * @buffer_addr: the tensor's buffer address.
 * @version:     its version.
 *
 * Return: FNV-1a 64 of the 8 bytes of @buffer_addr then the 4 bytes of
 * @version, little-endian.
 */
uint64_t dg_tensor_id(uint64_t buffer_addr, uint32_t version);

/**
 * dg_profiler() - test point: the collector's profiler (e.g. to pause its
 * drains).
 * @dg: the collector.
 */
struct tp_profiler *dg_profiler(struct dg_collector *dg);

/* The module (for tests and the reconcile line). */
extern const struct tp_module dg_module;

#endif /* TASKPROF_COLLECTORS_DEPGEN_H */
