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

/* One delivered buffer's records in a shard's log: log[shard].data + off,
 * n records of the instance's size. Offsets, not pointers: the log moves
 * as it grows. */
struct swl_seg {
	uint64_t off; /* bytes into the log */
	uint32_t n;   /* records */
	uint32_t shard;
};

/* Records of one instance, in collection order: its segments, all in the
 * log of the one shard that serves the instance's ready queue. */
struct swl_vec {
	struct swl_seg *seg;
	uint32_t nseg, segcap;
	size_t n; /* records, all segments */
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
	/* Per collector shard: the bytes of every buffer the shard delivered,
	 * back to back (see swl_collect). */
	struct tp_growbuf *log;
	uint32_t nlogs;
};

/* Longest sleep of the pool's drains, µs.  A buffer holds at least 1000
 * records; the fastest-filling instances (the orchestrator's, 4096 per
 * buffer, a record per task; the AICPU records of a core that takes a
 * fifth of the tasks) fill one in about 4 ms at 1 M tasks/s, with
 * SWL_SLOT_COUNT - 1 more waiting in the free queue.  A drain that finds
 * a free queue at a quarter or less shortens its sleep (profiler.c), and
 * one that finds a recycled lane dry wakes the replenish thread at once. */
#define SWL_IDLE_SLEEP_MAX_US 2000u

/* Init-seeded surplus (seed 002 §5.1): buffers each shard's recycled lane
 * holds at open beyond its warm target (swl_warm, raised for the task
 * kinds to the lane's share of the cores by warm_covers_instances), per
 * kind. Without it the replenish thread allocated and faulted in 3-8 MB
 * while the device ran a 100,000-task level-4 run, mostly phase buffers,
 * and a producer ran its free queue dry about once a run (bench_swimlane;
 * the "pool close" DEBUG line); with it nothing, and a freeze in about
 * one run in 20. One shard (the 2-CPU machine): 1.5 MB of each task
 * kind, 4 MB of sched-phase and 1.5 MB of orch-phase buffers; each
 * further shard (a host with more CPUs) as much again. */
#define SWL_SURPLUS_TASK 48u
#define SWL_SURPLUS_SCHED 16u
#define SWL_SURPLUS_ORCH 12u

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

/* The module of either platform: only the ready-queue size and the
 * number of AICPU threads (collector shards at most) differ. */
#define SWL_MODULE(ready_queue, max_collectors)                                              \
	{                                                                                    \
		.name = "L2Swimlane",                                                        \
		.kind_names = {"aicpu_task", "sched_phase", "orch_phase", "aicore_task"},    \
		.kinds = SWL_KINDS,                                                          \
		.ready_queue_size = (ready_queue),                                           \
		.slot_count = SWL_SLOT_COUNT,                                                \
		.host_pool_queue_size = 1024,                                                \
		.max_collector_threads = (max_collectors),                                   \
		.idle_timeout_sec = 30,                                                      \
		.record_size = {sizeof(struct swl_aicpu_rec), sizeof(struct swl_sched_rec),  \
				sizeof(struct swl_orch_rec), sizeof(struct swl_aicore_rec)}, \
		.records_per_buffer = {SWL_PROF_BUFFER_SIZE, SWL_PHASE_BUFFER_SIZE,          \
				       SWL_PHASE_BUFFER_SIZE, SWL_AICORE_BUFFER_SIZE},       \
		.batch_size = swl_batch,                                                     \
		.recycled_warm_target = swl_warm,                                            \
	}

/* PLATFORM_PROF_READYQUEUE_SIZE: 992 on a2a3, 1520 on a5. */
static const struct tp_module swl_module_a2a3 = SWL_MODULE(992, 4);
static const struct tp_module swl_module_a5 = SWL_MODULE(1520, 7);

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

/* Collector shard thread: copy the records out. Every buffer a shard
 * delivers is appended to that shard's one log, and the instance notes
 * where (a segment). One log per shard, not one store per instance: the
 * first touch of fresh memory is most of what the copy costs, and one
 * large store takes it in 2 MiB huge pages (base/growbuf.h) where 48
 * per-core stores of ~130 KB each would take it 4 KiB at a time. An
 * instance always publishes on the same ready queue, so one shard owns
 * its vector and its segments are in one log, in collection order. */
static bool swl_collect(void *ud, const struct tp_ready_info *info, int shard)
{
	struct swl_collector *c = ud;
	if (!info->count)
		return true;
	if (info->instance >= c->ninst)
		return false; /* cannot happen: the transport checked it; lost if it did */
	struct swl_vec *v = &c->vec[info->instance];
	if (shard < 0 || (uint32_t)shard >= c->nlogs) {
		v->oom = true; /* cannot happen: nlogs bounds the pool's shards */
		return false;
	}
	struct tp_growbuf *log = &c->log[shard];
	size_t bytes = (size_t)info->count * info->record_size;
	if (v->nseg == v->segcap) {
		uint32_t cap = v->segcap ? 2 * v->segcap : 16;
		struct swl_seg *ns = realloc(v->seg, (size_t)cap * sizeof(*ns));
		if (!ns) {
			v->oom = true;
			return false;
		}
		v->seg = ns;
		v->segcap = cap;
	}
	/* A log starts in its huge-page reservation: its first touch is one
	 * 2 MiB fault, not 512 of 4 KiB. */
	size_t need = log->len + bytes;
	if (need < TP_GROWBUF_MAP_MIN)
		need = TP_GROWBUF_MAP_MIN;
	if (tp_growbuf_reserve(log, need) != 0) {
		v->oom = true;
		return false;
	}
	memcpy(log->data + log->len, info->records, bytes);
	v->seg[v->nseg++] = (struct swl_seg){
		.off = log->len, .n = info->count, .shard = (uint32_t)shard};
	log->len += bytes;
	v->n += info->count;
	return true;
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
	const struct tp_module *mod = cfg->shadow ? &swl_module_a5 : &swl_module_a2a3;
	/* The pool runs at most max_collector_threads shards (profiler.c). */
	c->nlogs = (uint32_t)mod->max_collector_threads;
	c->log = calloc(c->nlogs, sizeof(*c->log));
	struct swl_dev *d = &c->dev;
	d->cores = zalloc64((size_t)nc * sizeof(*d->cores));
	d->sched = zalloc64((size_t)nt * sizeof(*d->sched));
	if (!c->owner || !c->inst_kind || !c->vec || !c->log || !d->cores || !d->sched)
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
		.module = mod,
		.ops = c->ops,
		.num_threads = (uint32_t)nt,
		.num_instances = c->ninst,
		.instance_kind = c->inst_kind,
		.buffers_per_instance = SWL_BUFFERS_PER_INSTANCE,
		.init_surplus = { [SWL_KIND_AICPU_TASK] = SWL_SURPLUS_TASK,
				  [SWL_KIND_SCHED_PHASE] = SWL_SURPLUS_SCHED,
				  [SWL_KIND_ORCH_PHASE] = SWL_SURPLUS_ORCH,
				  [SWL_KIND_AICORE_TASK] = SWL_SURPLUS_TASK },
		.backstop_cycles = cfg->backstop_cycles,
		.max_shards = cfg->max_shards ? cfg->max_shards : swl_host_shards(),
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

/* Fault in the first extent of each live shard's log before the device
 * starts: as many bytes as the pool's buffers at open (23 MB on a2a3sim
 * at its default geometry), shared among the shards. A log's first touch
 * of fresh memory is most of what the collector's copy costs (the kernel
 * zeroes every page; here, under a hypervisor that hands back freed guest
 * memory, 4-60 ms per 32 MB), and while the device runs that CPU is taken
 * from its threads: on bench_swimlane's 100,000-task level-4 run the
 * collector's CPU went from 8-25 to 4-6 ms. A run with fewer records
 * keeps the memory unused until the collector closes; one whose memory
 * cannot be populated just faults as it fills (not an error). */
static void prefault_logs(struct swl_collector *c)
{
	const int shards = c->p->shard_count;
	if (c->cfg.no_log_prefault || shards < 1 || (uint32_t)shards > c->nlogs)
		return;
	/* relaxed: the pool is not running yet; prof_open wrote it. */
	uint64_t pool = atomic_load_explicit(&c->p->bp.pool_bytes, memory_order_relaxed);
	size_t each = (size_t)(pool / (uint64_t)shards);
	if (each < TP_GROWBUF_MAP_MIN)
		return; /* a small pool: its logs stay small, on the heap */
	for (int i = 0; i < shards; i++)
		if (tp_growbuf_prefault(&c->log[i], each) != 0)
			TP_DEBUG("L2Swimlane: collector log %d: %zu bytes could not be faulted in "
				 "ahead (it will fault as it fills)", i, each);
}

int swl_start(struct swl_collector *c)
{
	prefault_logs(c);
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

/* The records of segment @s of an instance (after swl_stop). */
static const void *seg_records(const struct swl_collector *c, const struct swl_seg *s)
{
	return c->log[s->shard].data + s->off;
}

/* Iterate the records of @v, of type T, in collection order: @r points at
 * the current one. */
#define FOR_EACH_REC(c, v, T, r)                                                         \
	for (uint32_t seg_i_ = 0; seg_i_ < (v)->nseg; seg_i_++)                          \
		for (const T *r = seg_records((c), &(v)->seg[seg_i_]),                   \
			     *end_##r = r + (v)->seg[seg_i_].n;                              \
		     r < end_##r; r++)

void swl_counts(const struct swl_collector *c, uint64_t *aicore, uint64_t *aicpu,
		uint64_t *sched, uint64_t *orch)
{
	uint64_t a = 0, b = 0, s = 0, o = 0;
	const struct swl_dev *d = &c->dev;
	for (int i = 0; i < d->num_cores; i++) {
		const struct swl_vec *v = vec_of(c, swl_inst_aicore(d, i));
		FOR_EACH_REC(c, v, struct swl_aicore_rec, r)
			a += r->start != 0;
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
 * file lists each thread's records chronologically (spec §1.6). Ties keep
 * collection order, which is address order: a thread's segments are in
 * one log, at increasing offsets. */
static int cmp_sched(const void *a, const void *b)
{
	const struct swl_sched_rec *x = *(const struct swl_sched_rec *const *)a;
	const struct swl_sched_rec *y = *(const struct swl_sched_rec *const *)b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* One scheduler phase record, spec §1.6 / §1.8. */
static void write_sched_rec(FILE *f, const struct swl_sched_rec *r, bool first)
{
	fprintf(f,
		"%s\n      {\"kind\": \"%s\", \"start_cycles\": %" PRIu64
		", \"end_cycles\": %" PRIu64 ", \"loop_iter\": %" PRIu64
		", \"tasks_processed\": %" PRIu32,
		first ? "" : ",", sched_kind_name(r->kind), r->start, r->end, r->loop_iter,
		r->tasks_processed);
	if (r->kind == SWL_SCHED_DISPATCH)
		fprintf(f, ", \"pop_hit\": %" PRIu32 ", \"pop_miss\": %" PRIu32,
			r->u.pop.pop_hit, r->u.pop.pop_miss);
	else if (r->kind == SWL_SCHED_DUMMY_TASK || r->kind == SWL_SCHED_PREDICATED_SKIP)
		fprintf(f, ", \"task_id\": %" PRIu64,
			((uint64_t)r->u.task.ring_id << 32) | r->u.task.local_id);
	fprintf(f, ", \"shared_at_start\": [%d,%d,%d], \"shared_at_end\": [%d,%d,%d]}",
		r->shared_at_start[0], r->shared_at_start[1], r->shared_at_start[2],
		r->shared_at_end[0], r->shared_at_end[1], r->shared_at_end[2]);
}

/* The text layout of spec §1.8, byte for byte. *@unwritten: AICore slots
 * left out because their AICore never wrote them. 0, or -ENOMEM (the file
 * is then incomplete). */
static int write_records(const struct swl_collector *c, FILE *f, uint64_t *unwritten)
{
	*unwritten = 0;
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
		FOR_EACH_REC(c, v, struct swl_aicore_rec, r) {
			if (!r->start) {
				/* Never written (spec §1.4): a2a3 reserves the
				 * slot at dispatch, so a task that never ran to
				 * its end (a failed run) leaves it empty. */
				(*unwritten)++;
				continue;
			}
			fprintf(f, "%s\n    [%d, %" PRIu64 ", %" PRIu32 ", %" PRIu64 ", %" PRIu64
				   ", %" PRIu32 "]",
				any ? "," : "", i, r->task_token, r->reg_task_id, r->start,
				r->end, r->recv_to_start);
			any = true;
		}
	}
	fputs(any ? "\n  ]" : "]", f);
	fputs(",\n  \"aicpu_tasks\": [", f);
	any = false;
	for (int i = 0; i < d->num_cores; i++) {
		const struct swl_vec *v = vec_of(c, swl_inst_aicpu(d, i));
		FOR_EACH_REC(c, v, struct swl_aicpu_rec, r) {
			fprintf(f, "%s\n    [%d, %" PRIu32 ", %" PRIu64 ", %" PRIu64 "]",
				any ? "," : "", i, r->reg_task_id, r->dispatch, r->finish);
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
				n = v->n;
				const struct swl_sched_rec **ord = malloc((n ? n : 1) * sizeof(*ord));
				if (!ord)
					return tp_set_error(-ENOMEM, "swimlane: out of memory sorting "
								     "the scheduler phases of thread %d", t);
				size_t k = 0;
				FOR_EACH_REC(c, v, struct swl_sched_rec, r)
					ord[k++] = r;
				qsort(ord, n, sizeof(*ord), cmp_sched);
				for (size_t i = 0; i < n; i++)
					write_sched_rec(f, ord[i], i == 0);
				free(ord);
			}
			fprintf(f, "%s]%s\n", n ? "\n    " : "", t < cfg->max_threads - 1 ? "," : "");
		}
		fputs("  ]", f);
		const struct swl_vec *ov = vec_of(c, swl_inst_orch(d));
		if (cfg->level >= SWL_LEVEL_ORCH_PHASES && ov->n) {
			fputs(",\n  \"aicpu_orchestrator_phases\": [\n    [", f);
			const char *sep = "";
			FOR_EACH_REC(c, ov, struct swl_orch_rec, r) {
				fprintf(f,
					"%s\n      {\"submit_idx\": %" PRIu32 ", \"task_id\": %" PRIu64
					", \"start_cycles\": %" PRIu64 ", \"end_cycles\": %" PRIu64 "}",
					sep, r->submit_idx, r->task_id, r->start, r->end);
				sep = ",";
			}
			fputs("\n    ]\n  ]", f);
		}
	}
	fputs("\n}\n", f);
	return 0;
}

int swl_export(struct swl_collector *c, const char *dir)
{
	uint64_t na = 0, nb = 0, ns = 0, no = 0;
	swl_counts(c, &na, &nb, &ns, &no);
	if (!na && !nb) {
		TP_WARN("L2Swimlane: Warning: No performance data to export.");
		/* No task row, so no file (spec §1.1); what was collected all
		 * the same (a run that stalled on its first tasks) is said, not
		 * silently gone. */
		uint64_t reserved = 0;
		for (int i = 0; i < c->dev.num_cores; i++)
			reserved += vec_of(c, swl_inst_aicore(&c->dev, i))->n;
		if (reserved || ns || no)
			TP_WARN("L2Swimlane: no task finished, so %s is not written (it needs a task "
				"row): %" PRIu64 " aicore_task record%s reserved at dispatch %s never "
				"written (the task%s did not finish: the run failed); %" PRIu64
				" sched_phase and %" PRIu64 " orch_phase records collected are left "
				"out; deps.json, when written, lists the tasks that were submitted",
				SWL_RECORDS_FILE, reserved, reserved == 1 ? "" : "s",
				reserved == 1 ? "was" : "were", reserved == 1 ? "" : "s", ns, no);
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
	uint64_t unwritten = 0;
	if ((rc = write_records(c, tx.fp, &unwritten))) {
		tp_file_tx_abort(&tx, false);
		return rc;
	}
	/* The reconcile line counted those slots as collected (the transport
	 * delivered them): say why the file has fewer aicore_tasks rows. */
	if (unwritten)
		TP_WARN("L2Swimlane: %" PRIu64 " aicore_task record%s reserved at dispatch %s never "
			"written by %s AICore (the task did not finish: the run failed); "
			"left out of %s, so it has %" PRIu64 " fewer aicore_tasks rows than "
			"collected",
			unwritten, unwritten == 1 ? "" : "s", unwritten == 1 ? "was" : "were",
			unwritten == 1 ? "its" : "their", SWL_RECORDS_FILE, unwritten);
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
			free(c->vec[i].seg);
	free(c->vec);
	if (c->log)
		for (uint32_t i = 0; i < c->nlogs; i++)
			tp_growbuf_free(&c->log[i]);
	free(c->log);
	free(c->dev.cores);
	free(c->dev.sched);
	free(c->inst_kind);
	free(c->owner);
	free(c);
}
