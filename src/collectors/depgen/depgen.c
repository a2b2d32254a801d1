/* SPDX-License-Identifier: MIT */
/*
 * collectors/depgen/depgen.c — the host half of dep_gen: the framework
 * collector and the deps.json writer (depgen.h; spec/swimlane-format.md
 * §3.1; seed 004: DepGen has one kind and one instance).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "base/growbuf.h"
#include "base/log.h"
#include "collectors/depgen/depgen.h"
#include "transport/profiler.h"

/* ---- module ------------------------------------------------------------ */

static int dg_batch(int kind)
{
	(void)kind;
	return (int)DG_BUFFERS_PER_INSTANCE;
}

static int dg_warm(int kind, int shards)
{
	(void)kind;
	(void)shards;
	/* One free queue's worth in reserve: the orchestrator is the only
	 * producer and writes in bursts (a submit with many edges). */
	return (int)DG_SLOT_COUNT;
}

const struct tp_module dg_module = {
	.name = "DepGen",
	.kind_names = { "records" },
	.kinds = 1,
	.ready_queue_size = DG_READYQUEUE_SIZE,
	.slot_count = DG_SLOT_COUNT,
	.max_collector_threads = 1,
	.idle_timeout_sec = 30,
	.record_size = { DG_RECORD_SIZE },
	.records_per_buffer = { DG_RECORDS_PER_BUFFER },
	.batch_size = dg_batch,
	.recycled_warm_target = dg_warm,
};

static const char *const dg_dtype_names[DG_DTYPE_COUNT] = {
	"FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT8", "BFLOAT16", "INT64",
	"UINT64", "UINT16", "UINT32", "BOOL", "FP8E4M3FN", "FP8E8M0", "FP4E2M1", "UNKNOWN",
};

const char *dg_dtype_name(unsigned dtype)
{
	return dtype < DG_DTYPE_COUNT ? dg_dtype_names[dtype] : "UNKNOWN";
}

uint64_t dg_tensor_id(uint64_t buffer_addr, uint32_t version)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < 8; i++) {
		h ^= (uint8_t)(buffer_addr >> (8 * i));
		h *= 0x100000001b3ull;
	}
	for (int i = 0; i < 4; i++) {
		h ^= (uint8_t)(version >> (8 * i));
		h *= 0x100000001b3ull;
	}
	return h;
}

/* ---- collector --------------------------------------------------------- */

/* One delivered buffer's records, copied out into the log. */
struct dg_chunk {
	uint32_t seq;
	uint32_t count;
	uint64_t off;           /* bytes into dg->log */
	union dg_record *recs;  /* log.data + off; set by dg_build (the log
				 * moves while it grows) */
};

struct dg_collector {
	struct tp_profiler *p;
	char label[64];
	/* Written by the one collector shard; read by dg_finish after
	 * prof_stop joined that thread (the join orders the accesses). */
	struct dg_chunk *chunks;
	size_t n_chunks, cap_chunks;
	/* Every delivered buffer's records, back to back (base/growbuf.h:
	 * huge pages from the first byte, one fault per 2 MiB). */
	struct tp_growbuf log;
};

static bool dg_collect(void *ud, const struct tp_ready_info *info, int shard)
{
	(void)shard;
	struct dg_collector *dg = ud;
	if (!info->count)
		return true;
	if (info->record_size != DG_RECORD_SIZE)
		return false; /* cannot happen (one kind of this size); lost if it did */
	if (dg->n_chunks == dg->cap_chunks) {
		size_t cap = dg->cap_chunks ? dg->cap_chunks * 2 : 64;
		struct dg_chunk *c = realloc(dg->chunks, cap * sizeof(*c));
		if (!c)
			return false; /* counted as lost by the transport */
		dg->chunks = c;
		dg->cap_chunks = cap;
	}
	size_t bytes = (size_t)info->count * DG_RECORD_SIZE;
	size_t need = dg->log.len + bytes;
	if (tp_growbuf_reserve(&dg->log, need < TP_GROWBUF_MAP_MIN ? TP_GROWBUF_MAP_MIN : need))
		return false; /* counted as lost by the transport */
	memcpy(dg->log.data + dg->log.len, info->records, bytes);
	dg->chunks[dg->n_chunks++] = (struct dg_chunk){ info->seq, info->count, dg->log.len, NULL };
	dg->log.len += bytes;
	return true;
}

/* Longest sleep of the pool's drain, µs. The orchestrator writes at most
 * about one record per µs, so a buffer of DG_RECORDS_PER_BUFFER records
 * lasts 1 ms or more and a full free queue (DG_BUFFERS_PER_INSTANCE) 4 ms;
 * a drain that finds the free queue at a quarter sleeps shorter
 * (profiler.c). Measured on paged_attention Case1 (65,000 tasks, 540,000
 * records), 3 runs each: with the transport's default bound (160 µs) the
 * drain woke 9,700-18,700 times and took 100-230 ms of CPU from the CPUs
 * the device runs on; with 1 ms, 1,000-2,000 times and 11-30 ms, at the
 * price of a few more freezes (3-7 against 0-5 per run; at 2 ms, 11-19). */
#define DG_IDLE_SLEEP_MAX_US 1000u

struct dg_collector *dg_open(const struct dg_config *cfg)
{
	struct dg_collector *dg = calloc(1, sizeof(*dg));
	if (!dg) {
		tp_set_error(-ENOMEM, "dep_gen: out of memory");
		return NULL;
	}
	snprintf(dg->label, sizeof(dg->label), "%s", cfg->label ? cfg->label : "");
	struct tp_profiler_config pc = {
		.module = &dg_module,
		.ops = cfg->ops,
		.num_threads = 1,
		.num_instances = 1,
		.buffers_per_instance = DG_BUFFERS_PER_INSTANCE,
		.backstop_cycles = cfg->backstop_cycles,
		.idle_sleep_max_us = DG_IDLE_SLEEP_MAX_US,
		.on_buffer_collected = dg_collect,
		.ud = dg,
	};
	dg->p = prof_open(&pc);
	if (!dg->p) {
		free(dg);
		return NULL;
	}
	int rc = prof_start(dg->p);
	if (rc) {
		prof_close(dg->p);
		free(dg);
		tp_set_error(rc, "dep_gen: cannot start the collector threads: %s%s", strerror(-rc),
			     tp_thread_limit_note(-rc));
		return NULL;
	}
	return dg;
}

int dg_writer_attach(struct dg_collector *dg, struct dg_writer *w)
{
	memset(w, 0, sizeof(*w));
	int rc = dpe_attach(&w->dpe, prof_shm_dev(dg->p), 0, 0, NULL, NULL);
	if (rc)
		return tp_set_error(rc, "dep_gen: cannot attach the orchestrator's writer");
	w->attached = true;
	return 0;
}

struct tp_profiler *dg_profiler(struct dg_collector *dg)
{
	return dg->p;
}

void dg_close(struct dg_collector *dg)
{
	if (!dg)
		return;
	if (dg->p)
		prof_close(dg->p);
	tp_growbuf_free(&dg->log);
	free(dg->chunks);
	free(dg);
}

/* ---- export ------------------------------------------------------------ */

/* Open-addressing map from a 64-bit key to an index (keys never repeat
 * for tasks; tensors compare (addr, version) through the caller). */
struct dg_map {
	uint64_t *keys;
	uint32_t *vals; /* index + 1; 0 = empty */
	size_t mask;
};

static int dg_map_init(struct dg_map *m, size_t n)
{
	size_t cap = 64;
	while (cap < 2 * n + 1)
		cap <<= 1;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = calloc(cap, sizeof(*m->vals));
	m->mask = cap - 1;
	if (!m->keys || !m->vals) {
		free(m->keys);
		free(m->vals);
		return -ENOMEM;
	}
	return 0;
}

static void dg_map_fini(struct dg_map *m)
{
	free(m->keys);
	free(m->vals);
}

static inline size_t dg_mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

/* The slot of @key: its own or the empty one where it would go. */
static inline size_t dg_map_slot(const struct dg_map *m, uint64_t key)
{
	size_t i = dg_mix(key) & m->mask;
	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & m->mask;
	return i;
}

struct dg_task {
	const struct dg_rec_task *rec;
	const struct dg_rec_arg **args; /* rec->n_args entries, in idx order */
};

struct dg_tensor_ent {
	uint64_t id, addr, numel;
	uint32_t version;
	uint8_t dtype;
};

struct dg_graph {
	struct dg_task *tasks;
	size_t n_tasks;
	const struct dg_rec_arg **args; /* all, grouped by task */
	size_t n_args;
	const struct dg_rec_edge **edges;
	size_t n_edges;
	struct dg_tensor_ent *tensors;
	size_t n_tensors;
	struct dg_map task_map;
};

static void dg_graph_free(struct dg_graph *g)
{
	free(g->tasks);
	free(g->args);
	free(g->edges);
	free(g->tensors);
	dg_map_fini(&g->task_map);
}

static int cmp_chunk(const void *a, const void *b)
{
	const struct dg_chunk *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const char *arg_type_name(unsigned t)
{
	static const char *const n[] = { "INPUT", "OUTPUT", "INOUT", "OUTPUT_EXISTING", "UNKNOWN" };
	return t < 5 ? n[t] : "UNKNOWN";
}

/* Rebuild the graph from the records in buffer order; every ARG must
 * follow its TASK, in idx order. */
static int dg_build(struct dg_collector *dg, struct dg_graph *g)
{
	size_t nrec = 0, ntask = 0, nedge = 0;
	qsort(dg->chunks, dg->n_chunks, sizeof(*dg->chunks), cmp_chunk);
	for (size_t c = 0; c < dg->n_chunks; c++)
		dg->chunks[c].recs = (union dg_record *)(dg->log.data + dg->chunks[c].off);
	for (size_t c = 0; c < dg->n_chunks; c++)
		for (uint32_t i = 0; i < dg->chunks[c].count; i++) {
			uint8_t t = dg->chunks[c].recs[i].type;
			ntask += t == DG_REC_TASK;
			nedge += t == DG_REC_EDGE;
			nrec++;
		}
	g->tasks = calloc(ntask ? ntask : 1, sizeof(*g->tasks));
	g->args = calloc(nrec - ntask - nedge + 1, sizeof(*g->args));
	g->edges = calloc(nedge ? nedge : 1, sizeof(*g->edges));
	g->tensors = calloc(nrec - ntask - nedge + 1, sizeof(*g->tensors));
	if (!g->tasks || !g->args || !g->edges || !g->tensors || dg_map_init(&g->task_map, ntask))
		return tp_set_error(-ENOMEM, "dep_gen: out of memory for %zu records", nrec);

	struct dg_task *cur = NULL;
	uint32_t seen = 0;
	for (size_t c = 0; c < dg->n_chunks; c++)
		for (uint32_t i = 0; i < dg->chunks[c].count; i++) {
			const union dg_record *r = &dg->chunks[c].recs[i];
			switch (r->type) {
			case DG_REC_TASK: {
				if (cur && seen != cur->rec->n_args)
					goto short_args;
				size_t s = dg_map_slot(&g->task_map, r->task.task_id);
				if (g->task_map.vals[s])
					return tp_set_error(-EBADMSG, "dep_gen: task %" PRIu64
							    " submitted twice", r->task.task_id);
				g->task_map.keys[s] = r->task.task_id;
				g->task_map.vals[s] = (uint32_t)(g->n_tasks + 1);
				cur = &g->tasks[g->n_tasks++];
				cur->rec = &r->task;
				cur->args = &g->args[g->n_args];
				seen = 0;
				break;
			}
			case DG_REC_ARG:
				if (!cur || r->arg.task_id != cur->rec->task_id ||
				    r->arg.idx != seen || seen >= cur->rec->n_args)
					return tp_set_error(-EBADMSG, "dep_gen: argument record "
							    "%u of task %" PRIu64 " out of place",
							    r->arg.idx, r->arg.task_id);
				g->args[g->n_args++] = &r->arg;
				seen++;
				break;
			case DG_REC_EDGE:
				g->edges[g->n_edges++] = &r->edge;
				break;
			default:
				return tp_set_error(-EBADMSG, "dep_gen: record of unknown type %u",
						    r->type);
			}
		}
	if (cur && seen != cur->rec->n_args)
		goto short_args;

	/* tensors[]: unique (buffer_addr, version), in first-use order. */
	struct dg_map tm;
	if (dg_map_init(&tm, g->n_args))
		return tp_set_error(-ENOMEM, "dep_gen: out of memory");
	for (size_t i = 0; i < g->n_args; i++) {
		const struct dg_rec_arg *a = g->args[i];
		if (!a->has_tensor)
			continue;
		uint64_t id = dg_tensor_id(a->buffer_addr, a->version);
		size_t s = dg_mix(id) & tm.mask;
		bool found = false;
		while (tm.vals[s]) {
			const struct dg_tensor_ent *t = &g->tensors[tm.vals[s] - 1];
			if (t->addr == a->buffer_addr && t->version == a->version) {
				found = true;
				break;
			}
			s = (s + 1) & tm.mask;
		}
		if (found)
			continue;
		tm.keys[s] = id;
		tm.vals[s] = (uint32_t)(g->n_tensors + 1);
		g->tensors[g->n_tensors++] = (struct dg_tensor_ent){
			id, a->buffer_addr, a->buffer_numel, a->version, a->dtype,
		};
	}
	dg_map_fini(&tm);
	return 0;
short_args:
	return tp_set_error(-EBADMSG, "dep_gen: task %" PRIu64 " has %u of its %u argument "
			    "records", cur->rec->task_id, seen, cur->rec->n_args);
}

static void put_dims(FILE *f, const uint32_t *v, unsigned n)
{
	fputc('[', f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, i ? ",%" PRIu32 : "%" PRIu32, v[i]);
	fputc(']', f);
}

static void put_slice(FILE *f, const char *pfx, const uint32_t *shape, uint64_t off,
		      const uint32_t *strides, unsigned nd)
{
	fprintf(f, ",\"%sshape\":", pfx);
	put_dims(f, shape, nd);
	fprintf(f, ",\"%sstart_offset\":\"%" PRIu64 "\",\"%sstrides\":", pfx, off, pfx);
	put_dims(f, strides, nd);
}

static const struct dg_task *find_task(const struct dg_graph *g, uint64_t id)
{
	size_t s = dg_map_slot(&g->task_map, id);
	return g->task_map.vals[s] ? &g->tasks[g->task_map.vals[s] - 1] : NULL;
}

/* Edges first checked, so a half-written file is never committed. */
static int dg_check_edges(const struct dg_graph *g)
{
	for (size_t i = 0; i < g->n_edges; i++) {
		const struct dg_rec_edge *e = g->edges[i];
		if (e->source == DG_SRC_EXPLICIT)
			continue;
		const struct dg_task *t = find_task(g, e->succ);
		if (!t)
			return tp_set_error(-EBADMSG, "dep_gen: edge %zu names task %" PRIu64
					    " that was never submitted", i, e->succ);
		if (e->arg < 0 || (uint32_t)e->arg >= t->rec->n_args ||
		    !t->args[e->arg]->has_tensor)
			return tp_set_error(-EBADMSG, "dep_gen: edge %zu names argument %d of "
					    "task %" PRIu64 ", which has no tensor there", i,
					    e->arg, e->succ);
	}
	return 0;
}

static void dg_write(FILE *f, const struct dg_graph *g)
{
	fputs("{\"tasks\":[", f);
	for (size_t i = 0; i < g->n_tasks; i++) {
		const struct dg_rec_task *t = g->tasks[i].rec;
		fprintf(f,
			"%s{\"task_id\":\"%" PRIu64 "\",\"scope\":\"%s\",\"early_dispatch\":%s,"
			"\"kernel_ids\":[%" PRId32 ",%" PRId32 ",%" PRId32 "],\"block_num\":%" PRIu32
			",\"args\":[",
			i ? "," : "", t->task_id, (t->flags & DG_TASK_MANUAL) ? "manual" : "auto",
			(t->flags & DG_TASK_EARLY) ? "true" : "false", t->kernel_ids[0],
			t->kernel_ids[1], t->kernel_ids[2], t->block_num);
		for (uint32_t k = 0; k < t->n_args; k++) {
			const struct dg_rec_arg *a = g->tasks[i].args[k];
			fprintf(f, "%s{\"idx\":%u,\"type\":\"%s\"", k ? "," : "", a->idx,
				arg_type_name(a->arg_type));
			if (a->has_tensor) {
				fprintf(f, ",\"tensor_id\":\"%" PRIu64 "\",\"dtype\":\"%s\"",
					dg_tensor_id(a->buffer_addr, a->version),
					dg_dtype_name(a->dtype));
				put_slice(f, "", a->shape, a->start_offset, a->strides, a->ndims);
			}
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputs("],\"tensors\":[", f);
	for (size_t i = 0; i < g->n_tensors; i++) {
		const struct dg_tensor_ent *t = &g->tensors[i];
		fprintf(f,
			"%s{\"tensor_id\":\"%" PRIu64 "\",\"buffer_addr\":\"%" PRIu64
			"\",\"version\":%" PRId32 ",\"dtype\":\"%s\",\"buffer_numel\":\"%" PRIu64
			"\"}",
			i ? "," : "", t->id, t->addr, (int32_t)t->version, dg_dtype_name(t->dtype),
			t->numel);
	}
	fputs("],\"edges\":[", f);
	static const char *const src[] = { "explicit", "creator", "tensormap" };
	for (size_t i = 0; i < g->n_edges; i++) {
		const struct dg_rec_edge *e = g->edges[i];
		unsigned s = e->source < 3 ? e->source : 0;
		fprintf(f, "%s{\"pred\":\"%" PRIu64 "\",\"succ\":\"%" PRIu64
			"\",\"arg\":%" PRId32 ",\"source\":\"%s\"",
			i ? "," : "", e->pred, e->succ, s == DG_SRC_EXPLICIT ? -1 : e->arg, src[s]);
		if (s == DG_SRC_TENSORMAP)
			fprintf(f, ",\"overlap\":\"%s\"",
				e->overlap == DG_OV_COVERED ? "covered" : "other");
		if (s != DG_SRC_EXPLICIT) {
			const struct dg_rec_arg *a = find_task(g, e->succ)->args[e->arg];
			fprintf(f, ",\"tensor_id\":\"%" PRIu64 "\",\"consumer_dtype\":\"%s\"",
				dg_tensor_id(a->buffer_addr, a->version), dg_dtype_name(a->dtype));
			put_slice(f, "consumer_", a->shape, a->start_offset, a->strides, a->ndims);
		}
		if (s == DG_SRC_TENSORMAP)
			put_slice(f, "producer_", e->shape, e->start_offset, e->strides, e->ndims);
		fputc('}', f);
	}
	fputs("]}\n", f);
}


struct dg_pair {
	uint64_t pred, succ;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct dg_pair *x = a, *y = b;
	if (x->pred != y->pred)
		return x->pred < y->pred ? -1 : 1;
	return x->succ < y->succ ? -1 : x->succ > y->succ;
}

/* Distinct (pred, succ) pairs among @g's edges: what readers draw and
 * count (edges are per argument, several can join one pair). 0 when the
 * count cannot be made (out of memory): the run line then omits it. */
static uint64_t distinct_pairs(const struct dg_graph *g)
{
	if (!g->n_edges)
		return 0;
	struct dg_pair *v = malloc(g->n_edges * sizeof(*v));
	if (!v)
		return 0;
	for (size_t i = 0; i < g->n_edges; i++)
		v[i] = (struct dg_pair){ g->edges[i]->pred, g->edges[i]->succ };
	qsort(v, g->n_edges, sizeof(*v), cmp_pair);
	uint64_t n = 1;
	for (size_t i = 1; i < g->n_edges; i++)
		n += cmp_pair(&v[i - 1], &v[i]) != 0;
	free(v);
	return n;
}

int dg_finish(struct dg_collector *dg, const char *dir, struct dg_summary *sum)
{
	struct dg_summary tmp;
	if (!sum)
		sum = &tmp;
	memset(sum, 0, sizeof(*sum));
	prof_stop(dg->p);
	struct tp_reconcile rec;
	int rc = prof_reconcile(dg->p, &rec);
	/* prof_reconcile logged the one line: collected + dropped == total. */
	const struct tp_reconcile_pool *pl = &rec.pool[0];
	sum->total = pl->total;
	sum->collected = pl->collected;
	sum->dropped = pl->dropped; /* host out-of-memory losses included */
	/* One pool: every host loss is this collector's. */
	const uint64_t oom = pl->host_lost_by_cause[TP_HOST_LOST_COLLECTOR];
	if (rc || pl->dropped || pl->collected != pl->total)
		return tp_set_error(-EPROTO,
				    "dep_gen%s%s: %" PRIu64 " of %" PRIu64 " graph records lost "
				    "(collected %" PRIu64 "; dropped on the device: no buffer "
				    "%" PRIu64 ", ready queue full %" PRIu64 ", flush failed %"
				    PRIu64 "; host out of memory %" PRIu64 "); deps.json not "
				    "written: a partial graph would be wrong",
				    dg->label[0] ? " " : "", dg->label,
				    pl->total - (pl->collected < pl->total ? pl->collected
									   : pl->total),
				    pl->total, pl->collected,
				    pl->dropped_by_cause[TP_DROP_NO_BUFFER],
				    pl->dropped_by_cause[TP_DROP_READY_FULL],
				    pl->dropped_by_cause[TP_DROP_FLUSH_FAILED], oom);
	if (!dir)
		return 0;

	struct dg_graph g;
	memset(&g, 0, sizeof(g));
	rc = dg_build(dg, &g);
	if (!rc)
		rc = dg_check_edges(&g);
	if (rc) {
		dg_graph_free(&g);
		return rc;
	}
	char path[4200];
	int n = snprintf(path, sizeof(path), "%s/deps.json", dir);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		dg_graph_free(&g);
		return tp_set_error(-ENAMETOOLONG, "dep_gen: output folder name too long");
	}
	struct tp_file_tx tx;
	if ((rc = tp_file_tx_begin(&tx, path, NULL))) {
		dg_graph_free(&g);
		return rc;
	}
	/* Many small fprintf calls: a large stream buffer keeps them cheap. */
	char *iobuf = malloc(1 << 16);
	if (iobuf)
		setvbuf(tx.fp, iobuf, _IOFBF, 1 << 16);
	dg_write(tx.fp, &g);
	rc = tp_file_tx_commit(&tx);
	free(iobuf);
	if (!rc) {
		sum->tasks = g.n_tasks;
		sum->args = g.n_args;
		sum->edges = g.n_edges;
		sum->pairs = distinct_pairs(&g);
		sum->tensors = g.n_tensors;
		snprintf(sum->path, sizeof(sum->path), "%s", path);
	}
	dg_graph_free(&g);
	return rc;
}
