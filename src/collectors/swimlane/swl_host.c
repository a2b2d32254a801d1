/* SPDX-License-Identifier: MIT */
/*
 * collectors/swimlane/swl_host.c — the host half (swl_host.h): the pool's
 * module, collection into per-instance arrays, export.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "base/growbuf.h"
#include "base/log.h"
#include "collectors/swimlane/swl_host.h"
#include "collectors/swimlane/swl_internal.h"

/* Records of one instance, in collection order. */
struct swl_vec {
	struct tp_growbuf store; /* the records' bytes */
	size_t n;                /* records */
	bool oom;
};

struct swl_collector {
	struct swl_config cfg;
	int8_t *owner;
	struct tp_memops ops;
	struct tp_profiler *p;
	struct swl_dev dev;
	uint8_t *inst_kind;
	struct swl_vec *vec; /* per instance */
	uint32_t ninst;
};

/* Longest sleep of the pool's drains, µs.  A buffer holds at least 1000
 * records; the fastest-filling instances (the orchestrator's, 4096 per
 * buffer, a record per task; the AICPU records of a core that takes a
 * fifth of the tasks) fill one in about 4 ms at 1 M tasks/s, with
 * SWL_SLOT_COUNT - 1 more waiting in the free queue.  A drain that finds
 * a free queue at a quarter or less shortens its sleep (profiler.c), and
 * one that finds a recycled lane dry wakes the replenish thread at once. */
#define SWL_IDLE_SLEEP_MAX_US 2000u

static int swl_batch(int kind)
{
	(void)kind;
	return 4;
}

static int swl_warm(int kind, int shards)
{
	(void)shards;
	/* AICore buffers come back only after a rotation; keep a small
	 * reserve (seed 002 §5.1 sizing). */
	return kind == SWL_KIND_AICORE_TASK ? 2 : 4;
}

static const struct tp_module swl_module_a2a3 = {
	.name = "L2Swimlane",
	.kind_names = {"aicpu_task", "sched_phase", "orch_phase", "aicore_task"},
	.kinds = SWL_KINDS,
	.ready_queue_size = 992, /* PLATFORM_PROF_READYQUEUE_SIZE a2a3 */
	.slot_count = SWL_SLOT_COUNT,
	.host_pool_queue_size = 1024,
	.max_collector_threads = 4,
	.idle_timeout_sec = 30,
	.record_size = {sizeof(struct swl_aicpu_rec), sizeof(struct swl_sched_rec),
			sizeof(struct swl_orch_rec), sizeof(struct swl_aicore_rec)},
	.records_per_buffer = {SWL_PROF_BUFFER_SIZE, SWL_PHASE_BUFFER_SIZE, SWL_PHASE_BUFFER_SIZE,
			       SWL_AICORE_BUFFER_SIZE},
	.batch_size = swl_batch,
	.recycled_warm_target = swl_warm,
};

static const struct tp_module swl_module_a5 = {
	.name = "L2Swimlane",
	.kind_names = {"aicpu_task", "sched_phase", "orch_phase", "aicore_task"},
	.kinds = SWL_KINDS,
	.ready_queue_size = 1520, /* PLATFORM_PROF_READYQUEUE_SIZE a5 */
	.slot_count = SWL_SLOT_COUNT,
	.host_pool_queue_size = 1024,
	.max_collector_threads = 7,
	.idle_timeout_sec = 30,
	.record_size = {sizeof(struct swl_aicpu_rec), sizeof(struct swl_sched_rec),
			sizeof(struct swl_orch_rec), sizeof(struct swl_aicore_rec)},
	.records_per_buffer = {SWL_PROF_BUFFER_SIZE, SWL_PHASE_BUFFER_SIZE, SWL_PHASE_BUFFER_SIZE,
			       SWL_AICORE_BUFFER_SIZE},
	.batch_size = swl_batch,
	.recycled_warm_target = swl_warm,
};

/* Host threads per pool, sized to the machine: the simulated AICPU and
 * AICore threads run on the same CPUs, and every host thread that wakes
 * takes one from them. One CPU is left to the device; at least one shard.
 * (The module's max_collector_threads, 4 / 7, is the bound on a host with
 * CPUs to spare.) */
static uint32_t swl_host_shards(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 2 ? (uint32_t)(n - 1) : 1u;
}

/* Collector shard thread: copy the records out. An instance always
 * publishes on the same ready queue, so one shard owns its vector. */
static void swl_collect(void *ud, const struct tp_ready_info *info, int shard)
{
	(void)shard;
	struct swl_collector *c = ud;
	if (info->instance >= c->ninst || !info->count)
		return;
	struct swl_vec *v = &c->vec[info->instance];
	size_t rs = info->record_size, bytes = (size_t)info->count * rs;
	/* Huge-page backed once large (base/growbuf.h): the first touch of
	 * fresh memory is most of what a copy costs. */
	if (tp_growbuf_reserve(&v->store, v->store.len + bytes) != 0) {
		v->oom = true;
		return;
	}
	memcpy(v->store.data + v->store.len, info->records, bytes);
	v->store.len += bytes;
	v->n += info->count;
}

/* Zeroed, 64-byte aligned (the device-half state is laid out in cache
 * lines, swl_internal.h); free() releases it. */
static void *zalloc64(size_t n)
{
	n = (n + 63u) & ~(size_t)63u;
	void *p = aligned_alloc(64, n ? n : 64);
	if (p)
		memset(p, 0, n ? n : 64);
	return p;
}

struct swl_collector *swl_open(const struct swl_config *cfg)
{
	if (!cfg || cfg->level < 1 || cfg->level > 4 || cfg->num_cores < 1 ||
	    cfg->num_cores > 255 || cfg->num_threads < 1 ||
	    cfg->num_threads > TP_MAX_AICPU_THREADS || cfg->orch_thread >= cfg->num_threads ||
	    !cfg->core_owner || cfg->max_threads < cfg->num_threads || !cfg->clock_freq_hz) {
		tp_set_error(-EINVAL, "swimlane: bad configuration");
		return NULL;
	}
	struct swl_collector *c = zalloc64(sizeof(*c));
	if (!c) {
		tp_set_error(-ENOMEM, "swimlane: out of memory");
		return NULL;
	}
	c->cfg = *cfg;
	const int nc = cfg->num_cores, nt = cfg->num_threads;
	c->ninst = swl_num_instances(nc, nt);
	c->owner = calloc((size_t)nc, 1);
	c->inst_kind = calloc(c->ninst, 1);
	c->vec = calloc(c->ninst, sizeof(*c->vec));
	struct swl_dev *d = &c->dev;
	d->cores = zalloc64((size_t)nc * sizeof(*d->cores));
	d->sched = zalloc64((size_t)nt * sizeof(*d->sched));
	if (!c->owner || !c->inst_kind || !c->vec || !d->cores || !d->sched)
		goto oom;
	memcpy(c->owner, cfg->core_owner, (size_t)nc);
	c->cfg.core_owner = c->owner;
	d->level = cfg->level;
	d->shadow = cfg->shadow;
	d->num_cores = nc;
	d->num_threads = nt;
	d->orch_thread = cfg->level >= SWL_LEVEL_ORCH_PHASES ? cfg->orch_thread : -1;
	d->core_owner = c->owner;
	for (int i = 0; i < nc; i++) {
		c->inst_kind[swl_inst_aicpu(d, i)] = SWL_KIND_AICPU_TASK;
		c->inst_kind[swl_inst_aicore(d, i)] = SWL_KIND_AICORE_TASK;
	}
	for (int t = 0; t < nt; t++)
		c->inst_kind[swl_inst_sched(d, t)] = SWL_KIND_SCHED_PHASE;
	c->inst_kind[swl_inst_orch(d)] = SWL_KIND_ORCH_PHASE;

	c->ops = cfg->shadow ? tp_memops_sim_shadow() : tp_memops_sim_svm();
	/* Device memory the AICore side uses; the host never reads it. */
	if (cfg->shadow) {
		d->rings = c->ops.alloc(c->ops.ud, (size_t)nc * sizeof(*d->rings));
		if (!d->rings)
			goto oom;
	} else {
		d->heads = c->ops.alloc(c->ops.ud, (size_t)nc * sizeof(*d->heads));
		d->local = c->ops.alloc(c->ops.ud, (size_t)nc * sizeof(*d->local));
		if (!d->heads || !d->local)
			goto oom;
	}
	struct tp_profiler_config pc = {
		.module = cfg->shadow ? &swl_module_a5 : &swl_module_a2a3,
		.ops = c->ops,
		.num_threads = (uint32_t)nt,
		.num_instances = c->ninst,
		.instance_kind = c->inst_kind,
		.buffers_per_instance = SWL_BUFFERS_PER_INSTANCE,
		.backstop_cycles = cfg->backstop_cycles,
		.max_shards = swl_host_shards(),
		.idle_sleep_max_us = SWL_IDLE_SLEEP_MAX_US,
		.warm_covers_instances = true,
		.on_buffer_collected = swl_collect,
		.ud = c,
	};
	c->p = prof_open(&pc);
	if (!c->p) {
		swl_close(c);
		return NULL;
	}
	d->h = prof_shm_dev(c->p);
	return c;
oom:
	swl_close(c);
	tp_set_error(-ENOMEM, "swimlane: out of memory");
	return NULL;
}

struct swl_dev *swl_dev(struct swl_collector *c)
{
	return &c->dev;
}

int swl_start(struct swl_collector *c)
{
	return prof_start(c->p);
}

void swl_stop(struct swl_collector *c)
{
	if (c && c->p)
		prof_stop(c->p);
}

int swl_reconcile(struct swl_collector *c, struct tp_reconcile *out)
{
	int rc = prof_reconcile(c->p, out);
	uint64_t lost = 0;
	for (int i = 0; i < c->dev.num_cores; i++)
		lost += c->dev.cores[i].lost;
	if (lost)
		TP_WARN("L2Swimlane: %" PRIu64 " dispatches not recorded (a core's writers "
			"could not attach)", lost);
	for (uint32_t i = 0; i < c->ninst; i++)
		if (c->vec[i].oom) {
			TP_ERROR("L2Swimlane: host out of memory: records of instance %u lost", i);
			rc = rc ? rc : -ENOMEM;
		}
	return rc;
}

static const struct swl_vec *vec_of(const struct swl_collector *c, uint32_t inst)
{
	return &c->vec[inst];
}

void swl_counts(const struct swl_collector *c, uint64_t *aicore, uint64_t *aicpu,
		uint64_t *sched, uint64_t *orch)
{
	uint64_t a = 0, b = 0, s = 0, o = 0;
	const struct swl_dev *d = &c->dev;
	for (int i = 0; i < d->num_cores; i++) {
		const struct swl_vec *v = vec_of(c, swl_inst_aicore(d, i));
		const struct swl_aicore_rec *r = (const void *)v->store.data;
		for (size_t k = 0; k < v->n; k++)
			a += r[k].start != 0;
		b += vec_of(c, swl_inst_aicpu(d, i))->n;
	}
	for (int t = 0; t < d->num_threads; t++)
		s += vec_of(c, swl_inst_sched(d, t))->n;
	o = vec_of(c, swl_inst_orch(d))->n;
	if (aicore)
		*aicore = a;
	if (aicpu)
		*aicpu = b;
	if (sched)
		*sched = s;
	if (orch)
		*orch = o;
}

static const char *sched_kind_name(uint32_t k)
{
	switch (k) {
	case SWL_SCHED_COMPLETE: return "complete";
	case SWL_SCHED_DISPATCH: return "dispatch";
	case SWL_SCHED_RELEASE: return "release";
	case SWL_SCHED_DUMMY: return "dummy";
	case SWL_SCHED_EARLY_DISPATCH: return "early_dispatch";
	case SWL_SCHED_RESOLVE: return "resolve";
	case SWL_SCHED_DUMMY_TASK: return "dummy_task";
	case SWL_SCHED_DRAIN: return "drain";
	case SWL_SCHED_DRAIN_PREPARE: return "drain_prepare";
	case SWL_SCHED_DRAIN_PUBLISH: return "drain_publish";
	case SWL_SCHED_ASYNC_POLL: return "async_poll";
	case SWL_SCHED_PREDICATED_SKIP: return "predicated_skip";
	default: return "unknown";
	}
}

/* Stable order by start: an inner resolve record and a zero-width marker
 * are written while their outer phase runs, before it is emitted; the
 * file lists each thread's records chronologically (spec §1.6). */
static int cmp_sched(const void *a, const void *b, void *ud)
{
	const struct swl_sched_rec *r = ud;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	if (r[x].start != r[y].start)
		return r[x].start < r[y].start ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The text layout of spec §1.8, byte for byte. */
static void write_records(const struct swl_collector *c, FILE *f)
{
	const struct swl_dev *d = &c->dev;
	const struct swl_config *cfg = &c->cfg;
	fprintf(f, "{\n  \"l2_swimlane_level\": %d,\n  \"metadata\": {\n", cfg->level);
	fprintf(f, "    \"clock_freq_hz\": %" PRIu64 ",\n    \"num_cores\": %d,\n",
		cfg->clock_freq_hz, cfg->num_cores);
	fputs("    \"core_types\": [", f);
	for (int i = 0; i < cfg->num_cores; i++)
		fprintf(f, "%s\"%s\"", i ? ", " : "", i < cfg->block_dim ? "aic" : "aiv");
	fputc(']', f);
	if (cfg->level >= SWL_LEVEL_SCHED_PHASES) {
		fputs(",\n    \"core_to_thread\": [", f);
		for (int i = 0; i < cfg->num_cores; i++)
			fprintf(f, "%s%d", i ? ", " : "", (int)c->owner[i]);
		fputc(']', f);
	}
	fputs("\n  },\n  \"aicore_tasks\": [", f);
	bool any = false;
	for (int i = 0; i < d->num_cores; i++) {
		const struct swl_vec *v = vec_of(c, swl_inst_aicore(d, i));
		const struct swl_aicore_rec *r = (const void *)v->store.data;
		for (size_t k = 0; k < v->n; k++) {
			if (!r[k].start)
				continue; /* never written (spec §1.4) */
			fprintf(f, "%s\n    [%d, %" PRIu64 ", %" PRIu32 ", %" PRIu64 ", %" PRIu64
				   ", %" PRIu32 "]",
				any ? "," : "", i, r[k].task_token, r[k].reg_task_id, r[k].start,
				r[k].end, r[k].recv_to_start);
			any = true;
		}
	}
	fputs(any ? "\n  ]" : "]", f);
	fputs(",\n  \"aicpu_tasks\": [", f);
	any = false;
	for (int i = 0; i < d->num_cores; i++) {
		const struct swl_vec *v = vec_of(c, swl_inst_aicpu(d, i));
		const struct swl_aicpu_rec *r = (const void *)v->store.data;
		for (size_t k = 0; k < v->n; k++) {
			fprintf(f, "%s\n    [%d, %" PRIu32 ", %" PRIu64 ", %" PRIu64 "]",
				any ? "," : "", i, r[k].reg_task_id, r[k].dispatch, r[k].finish);
			any = true;
		}
	}
	fputs(any ? "\n  ]" : "]", f);
	if (cfg->level >= SWL_LEVEL_SCHED_PHASES) {
		fputs(",\n  \"aicpu_scheduler_phases\": [\n", f);
		for (int t = 0; t < cfg->max_threads; t++) {
			fputs("    [", f);
			size_t n = 0;
			if (t < d->num_threads) {
				const struct swl_vec *v = vec_of(c, swl_inst_sched(d, t));
				const struct swl_sched_rec *r = (const void *)v->store.data;
				n = v->n;
				size_t *ord = malloc((n ? n : 1) * sizeof(*ord));
				for (size_t k = 0; ord && k < n; k++)
					ord[k] = k;
				if (ord)
					qsort_r(ord, n, sizeof(*ord), cmp_sched, (void *)r);
				for (size_t i = 0; i < n; i++) {
					size_t k = ord ? ord[i] : i;
					fprintf(f,
						"%s\n      {\"kind\": \"%s\", \"start_cycles\": %" PRIu64
						", \"end_cycles\": %" PRIu64 ", \"loop_iter\": %" PRIu64
						", \"tasks_processed\": %" PRIu32,
						i ? "," : "", sched_kind_name(r[k].kind), r[k].start,
						r[k].end, r[k].loop_iter, r[k].tasks_processed);
					if (r[k].kind == SWL_SCHED_DISPATCH)
						fprintf(f, ", \"pop_hit\": %" PRIu32 ", \"pop_miss\": %" PRIu32,
							r[k].u.pop.pop_hit, r[k].u.pop.pop_miss);
					else if (r[k].kind == SWL_SCHED_DUMMY_TASK ||
						 r[k].kind == SWL_SCHED_PREDICATED_SKIP)
						fprintf(f, ", \"task_id\": %" PRIu64,
							((uint64_t)r[k].u.task.ring_id << 32) |
								r[k].u.task.local_id);
					fprintf(f,
						", \"shared_at_start\": [%d,%d,%d], \"shared_at_end\": "
						"[%d,%d,%d]}",
						r[k].shared_at_start[0], r[k].shared_at_start[1],
						r[k].shared_at_start[2], r[k].shared_at_end[0],
						r[k].shared_at_end[1], r[k].shared_at_end[2]);
				}
				free(ord);
			}
			fprintf(f, "%s]%s\n", n ? "\n    " : "", t < cfg->max_threads - 1 ? "," : "");
		}
		fputs("  ]", f);
		const struct swl_vec *ov = vec_of(c, swl_inst_orch(d));
		if (cfg->level >= SWL_LEVEL_ORCH_PHASES && ov->n) {
			fputs(",\n  \"aicpu_orchestrator_phases\": [\n    [", f);
			const struct swl_orch_rec *r = (const void *)ov->store.data;
			for (size_t k = 0; k < ov->n; k++)
				fprintf(f,
					"%s\n      {\"submit_idx\": %" PRIu32 ", \"task_id\": %" PRIu64
					", \"start_cycles\": %" PRIu64 ", \"end_cycles\": %" PRIu64 "}",
					k ? "," : "", r[k].submit_idx, r[k].task_id, r[k].start, r[k].end);
			fputs("\n    ]\n  ]", f);
		}
	}
	fputs("\n}\n", f);
}

int swl_export(struct swl_collector *c, const char *dir)
{
	uint64_t na = 0, nb = 0;
	swl_counts(c, &na, &nb, NULL, NULL);
	if (!na && !nb) {
		TP_WARN("L2Swimlane: Warning: No performance data to export.");
		return tp_set_error(-ENODATA, "swimlane: no performance data to export");
	}
	int rc = tp_mkdir_p(dir, 0755);
	if (rc)
		return rc;
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, SWL_RECORDS_FILE);
	struct tp_file_tx tx;
	if ((rc = tp_file_tx_begin(&tx, path, NULL)))
		return rc;
	write_records(c, tx.fp);
	return tp_file_tx_commit(&tx);
}

void swl_close(struct swl_collector *c)
{
	if (!c)
		return;
	if (c->p)
		prof_close(c->p);
	if (c->dev.rings)
		c->ops.free_(c->ops.ud, c->dev.rings);
	if (c->dev.heads)
		c->ops.free_(c->ops.ud, c->dev.heads);
	if (c->dev.local)
		c->ops.free_(c->ops.ud, c->dev.local);
	if (c->vec)
		for (uint32_t i = 0; i < c->ninst; i++)
			tp_growbuf_free(&c->vec[i].store);
	free(c->vec);
	free(c->dev.cores);
	free(c->dev.sched);
	free(c->inst_kind);
	free(c->owner);
	free(c);
}
