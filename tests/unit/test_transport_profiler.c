/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of transport/profiler: the host control layer.
 *
 * spec/framework.md §2 (host pop), §5.3 (freeze state machine), §7 (host
 * algorithms), §8 (threads, start / stop), §9 (shadow transport), §12
 * checklist 22-26; plus corrupted ready queues (out-of-range indices, zero
 * buffer pointers, unknown instances, unmapped pointers: survived and
 * reported, not trusted), reconcile per kind, and a pool at its cap that
 * does not retry the refused allocation.
 *
 * Device writers run on the test thread or on pthreads playing AICPU
 * threads, through the device engine (dpe_*).  Corruption is written into
 * the region on the shared-mapping transport, where the host view p->hdr
 * is the device memory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "taskprof/taskprof.h"
#include "transport/dev_engine.h"
#include "transport/profiler.h"

#define RS0 16u /* kind 0: record bytes */
#define CAP0 8u /* kind 0: records per buffer */
#define RS1 32u
#define CAP1 4u

#define MOD(nm, maxc)                                                                           \
	{                                                                                       \
		.name = nm, .kinds = 1, .ready_queue_size = 8, .slot_count = 4,                 \
		.max_collector_threads = (maxc), .idle_timeout_sec = 2, .record_size = {RS0},   \
		.records_per_buffer = {CAP0},                                                   \
	}

static const struct tp_module mod_percpu = MOD("PROFT", 4);
static const struct tp_module mod_single = MOD("PROFT", 1);
static const struct tp_module mod_wide = MOD("PROFT", TP_MAX_AICPU_THREADS);
static const struct tp_module mod_2k = {
	.name = "PROF2",
	.kind_names = {"alpha", NULL},
	.kinds = 2,
	.ready_queue_size = 8,
	.slot_count = 4,
	.max_collector_threads = 4,
	.idle_timeout_sec = 2,
	.record_size = {RS0, RS1},
	.records_per_buffer = {CAP0, CAP1},
};

/* ------------------------------------------------------------ records */

/* Byte j of record `idx` of instance `inst`: every record is distinct. */
static uint8_t pat(uint32_t inst, uint64_t idx, uint32_t j)
{
	return (uint8_t)(idx * 131u + j * 7u + inst * 29u + (idx >> 8) * 3u + 1u);
}

static void fill(uint8_t *r, uint32_t rsize, uint32_t inst, uint64_t idx)
{
	for (uint32_t j = 0; j < rsize; j++)
		r[j] = pat(inst, idx, j);
}

/* ------------------------------------------------------------- sink */

#define MAXD 256
#define MAXB (CAP0 * RS0 > CAP1 * RS1 ? CAP0 * RS0 : CAP1 * RS1)

struct delivery {
	uint32_t kind, instance, thread, seq, count, rsize;
	int shard;
	uint64_t dev;
	uint8_t data[MAXB];
};

struct sink {
	pthread_mutex_t mu;
	int n;
	struct delivery d[MAXD];
};

static bool on_collected(void *ud, const struct tp_ready_info *info, int shard)
{
	struct sink *s = ud;
	pthread_mutex_lock(&s->mu);
	if (s->n < MAXD) {
		struct delivery *d = &s->d[s->n];
		*d = (struct delivery){
			.kind = info->kind,
			.instance = info->instance,
			.thread = info->thread,
			.seq = info->seq,
			.count = info->count,
			.rsize = info->record_size,
			.shard = shard,
			.dev = info->dev_ptr,
		};
		size_t n = (size_t)info->count * info->record_size;
		memcpy(d->data, info->records, n < MAXB ? n : MAXB);
	}
	s->n++;
	pthread_mutex_unlock(&s->mu);
	return true;
}

static int sink_n(struct sink *s)
{
	pthread_mutex_lock(&s->mu);
	int n = s->n;
	pthread_mutex_unlock(&s->mu);
	return n;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Waits are bounded by wall-clock time, never by a count of sleeps: under
 * ThreadSanitizer on a loaded 2-core machine a 1 ms sleep can take far
 * longer, and a thread may not run for seconds.  The deadline is generous;
 * each wait returns as soon as its condition holds. */
#define WAIT_DEADLINE_MS 30000u

static bool before(uint64_t t0, unsigned ms)
{
	return tp_now_ns() - t0 < (uint64_t)ms * 1000000u;
}

static bool wait_sink(struct sink *s, int n)
{
	const uint64_t t0 = tp_now_ns();
	while (sink_n(s) < n && before(t0, WAIT_DEADLINE_MS))
		sleep_ms(1);
	return sink_n(s) >= n;
}

static struct sink *sink_new(void)
{
	struct sink *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	pthread_mutex_init(&s->mu, NULL);
	return s;
}

static void sink_free(struct sink *s)
{
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* Records idx0.. of instance inst are in d, in order. */
static void check_records(const struct delivery *d, uint64_t idx0)
{
	uint8_t want[MAXB];
	for (uint32_t i = 0; i < d->count; i++) {
		fill(want, d->rsize, d->instance, idx0 + i);
		assert_memory_equal(d->data + (size_t)i * d->rsize, want, d->rsize);
	}
}

/* -------------------------------------------------------------- logs */

#define MAXLOG 1024

static struct {
	pthread_mutex_t mu;
	int n;
	int level[MAXLOG];
	char *msg[MAXLOG];
} lc = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void log_hook(int level, const char *msg, void *ud)
{
	(void)ud;
	pthread_mutex_lock(&lc.mu);
	if (lc.n < MAXLOG) {
		lc.level[lc.n] = level;
		lc.msg[lc.n] = strdup(msg);
		lc.n++;
	}
	pthread_mutex_unlock(&lc.mu);
}

/* Lines at `level` (any level when < 0) containing every one of the
 * NULL-terminated substrings. */
static int count_logs(int level, ...)
{
	const char *subs[8];
	int ns = 0;
	va_list ap;
	va_start(ap, level);
	for (const char *s; ns < 8 && (s = va_arg(ap, const char *));)
		subs[ns++] = s;
	va_end(ap);
	int c = 0;
	pthread_mutex_lock(&lc.mu);
	for (int i = 0; i < lc.n; i++) {
		if (level >= 0 && lc.level[i] != level)
			continue;
		bool all = lc.msg[i] != NULL;
		for (int k = 0; all && k < ns; k++)
			all = strstr(lc.msg[i], subs[k]) != NULL;
		c += all;
	}
	pthread_mutex_unlock(&lc.mu);
	return c;
}

/* Lines at `level` equal to `msg`. */
static int count_exact(int level, const char *msg)
{
	int c = 0;
	pthread_mutex_lock(&lc.mu);
	for (int i = 0; i < lc.n; i++)
		c += lc.level[i] == level && lc.msg[i] && !strcmp(lc.msg[i], msg);
	pthread_mutex_unlock(&lc.mu);
	return c;
}

static void logs_clear(void)
{
	pthread_mutex_lock(&lc.mu);
	for (int i = 0; i < lc.n; i++)
		free(lc.msg[i]);
	lc.n = 0;
	pthread_mutex_unlock(&lc.mu);
}

static int setup(void **state)
{
	(void)state;
	tp_log_set_threshold(TP_LOG_TIMING);
	logs_clear();
	tp_log_set_hook(log_hook, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tp_log_set_hook(NULL, NULL);
	logs_clear();
	return 0;
}

/* ----------------------------------------------------------- helpers */

static struct tp_profiler *open_prof(const struct tp_module *m, struct tp_memops ops,
				     uint32_t threads, uint32_t instances, struct sink *s)
{
	struct tp_profiler_config cfg = {
		.module = m,
		.ops = ops,
		.num_threads = threads,
		.num_instances = instances,
		.ready_push_wait_ms = 0, /* the module idle timeout */
		.on_buffer_collected = on_collected,
		.ud = s,
	};
	struct tp_profiler *p = prof_open(&cfg);
	assert_non_null(p);
	return p;
}

/* A device writer of instance inst on ready queue q. */
static void writer(struct tp_dpe *w, struct tp_profiler *p, uint32_t inst, uint32_t q)
{
	assert_int_equal(dpe_attach(w, prof_shm_dev(p), inst, q, NULL, NULL), 0);
}

/* Write n records idx0..idx0+n-1 of w's instance; all must be stored. */
static void put(struct tp_dpe *w, uint32_t n, uint64_t idx0)
{
	uint8_t r[MAXB];
	for (uint32_t i = 0; i < n; i++) {
		fill(r, w->rsize, w->instance, idx0 + i);
		assert_true(dpe_write(w, r));
	}
}

/* Attach, write n records from idx0, flush. */
static void dev_write(struct tp_profiler *p, uint32_t inst, uint32_t q, uint32_t n, uint64_t idx0)
{
	struct tp_dpe w;
	writer(&w, p, inst, q);
	put(&w, n, idx0);
	assert_int_equal(dpe_flush(&w), 0);
}

static _Atomic uint32_t *tail_of(struct tp_profiler *p, uint32_t q)
{
	return &p->hdr->queue_tails[q];
}

static _Atomic uint32_t *head_of(struct tp_profiler *p, uint32_t q)
{
	return &p->hdr->queue_heads[q];
}

static struct tp_free_queue *fq_of(struct tp_profiler *p, uint32_t inst)
{
	return &tp_shm_state(p->hdr, inst)->free_queue;
}

/* A collector that waits while `hold` is set (a slow disk): the buffers
 * it has stay out of circulation. */
struct holder {
	_Atomic bool hold;
	_Atomic uint64_t records;
};

static bool on_collected_held(void *ud, const struct tp_ready_info *info, int shard)
{
	(void)shard;
	struct holder *h = ud;
	while (atomic_load(&h->hold))
		sleep_ms(1);
	atomic_fetch_add(&h->records, info->count);
	return true;
}

/* ------------------------------------------------- checklist 22-23 */

static void test_shard_count_follows_threads(void **state)
{
	(void)state;
	struct tp_profiler *p = open_prof(&mod_percpu, tp_memops_sim_svm(), 2, 2, NULL);
	assert_int_equal(p->shard_count, 2);
	assert_int_equal(p->bp.shard_count, 2);
	assert_int_equal(p->bp.max_shards, 4);
	assert_int_equal(p->hdr->num_threads, 2);
	prof_close(p);
	/* more AICPU threads than the module's capacity: clamped to 4 */
	p = open_prof(&mod_percpu, tp_memops_sim_svm(), 6, 1, NULL);
	assert_int_equal(p->shard_count, 4);
	assert_int_equal(p->bp.shard_count, 4);
	assert_int_equal(p->hdr->num_threads, 6);
	prof_close(p);
	/* bad thread counts are refused */
	struct tp_profiler_config cfg = {
		.module = &mod_percpu, .ops = tp_memops_sim_svm(), .num_threads = 0, .num_instances = 1};
	assert_null(prof_open(&cfg));
	cfg.num_threads = TP_MAX_AICPU_THREADS + 1;
	assert_null(prof_open(&cfg));
}

static void test_single_collector_module_keeps_one_shard(void **state)
{
	(void)state;
	struct sink *s = sink_new();
	struct tp_profiler *p =
		open_prof(&mod_single, tp_memops_sim_svm(), TP_MAX_AICPU_THREADS, 1, s);
	assert_int_equal(p->shard_count, 1);
	assert_int_equal(p->bp.shard_count, 1);
	/* the single drain scans every queue, the last one included */
	assert_int_equal(prof_start(p), 0);
	dev_write(p, 0, TP_MAX_AICPU_THREADS - 1, 3, 0);
	prof_stop(p);
	assert_int_equal(s->n, 1);
	assert_int_equal(s->d[0].thread, TP_MAX_AICPU_THREADS - 1);
	assert_int_equal(s->d[0].shard, 0);
	prof_close(p);
	sink_free(s);
}

/* ---------------------------------------------------- checklist 24-26 */

/* 24: one shard, three queues, a buffer published only on queue 2. */
static void test_single_drain_finds_queue_2(void **state)
{
	(void)state;
	struct sink *s = sink_new();
	struct tp_profiler *p = open_prof(&mod_single, tp_memops_sim_svm(), 3, 1, s);
	uint64_t first = atomic_load(&fq_of(p, 0)->buffer_ptrs[0]);
	assert_int_equal(prof_start(p), 0);
	struct tp_dpe w;
	writer(&w, p, 0, 2);
	put(&w, CAP0, 0); /* full: published at once, no flush */
	assert_true(wait_sink(s, 1));
	prof_stop(p);
	assert_int_equal(s->n, 1);
	struct delivery *d = &s->d[0];
	assert_int_equal(d->thread, 2);
	assert_int_equal(d->shard, 0);
	assert_int_equal(d->instance, 0);
	assert_int_equal(d->kind, 0);
	assert_int_equal(d->seq, 0);
	assert_int_equal(d->count, CAP0);
	assert_int_equal(d->rsize, RS0);
	assert_int_equal(d->dev, first);
	check_records(d, 0);
	assert_int_equal(atomic_load(head_of(p, 2)), 1);
	assert_int_equal(atomic_load(tail_of(p, 0)), 0);
	assert_int_equal(atomic_load(tail_of(p, 1)), 0);
	assert_int_equal(atomic_load(&p->buffers_collected), 1);
	struct tp_reconcile r;
	assert_int_equal(prof_reconcile(p, &r), 0);
	assert_int_equal(r.pool[0].total, CAP0);
	assert_int_equal(r.pool[0].collected, CAP0);
	prof_close(p);
	sink_free(s);
}

/* 25: shards = queues = the maximum; one buffer per queue, all delivered
 * by the time stop returns. */
static void test_all_queues_delivered_before_stop(void **state)
{
	(void)state;
	const uint32_t n = TP_MAX_AICPU_THREADS;
	struct sink *s = sink_new();
	struct tp_profiler *p = open_prof(&mod_wide, tp_memops_sim_svm(), n, n, s);
	assert_int_equal(p->shard_count, (int)n);
	assert_int_equal(prof_start(p), 0);
	for (uint32_t q = 0; q < n; q++)
		dev_write(p, q, q, 3, 0);
	prof_stop(p); /* no wait: stop itself must deliver everything */
	assert_int_equal(s->n, (int)n);
	uint32_t seen = 0;
	for (int i = 0; i < s->n; i++) {
		struct delivery *d = &s->d[i];
		assert_int_equal(d->thread, d->instance);
		assert_int_equal(d->shard, (int)d->thread);
		assert_int_equal(d->count, 3);
		check_records(d, 0);
		assert_false(seen & (1u << d->thread));
		seen |= 1u << d->thread;
	}
	assert_int_equal(seen, (1u << n) - 1);
	struct tp_reconcile r;
	assert_int_equal(prof_reconcile(p, &r), 0);
	assert_int_equal(r.pool[0].total, 3 * n);
	assert_int_equal(r.pool[0].collected, 3 * n);
	prof_close(p);
	sink_free(s);
}

/* 26: no traffic for longer than the idle timeout does not kill a shard
 * that never saw data; a late buffer is still delivered. */
static void test_idle_shard_never_times_out(void **state)
{
	(void)state;
	struct sink *s = sink_new();
	struct tp_profiler *p = open_prof(&mod_percpu, tp_memops_sim_svm(), 2, 2, s);
	assert_int_equal(prof_start(p), 0);
	sleep_ms(3000); /* > idle_timeout_sec = 2 */
	assert_int_equal(count_logs(TP_LOG_ERROR, "idle timeout", NULL), 0);
	assert_false(atomic_load(&p->coll_abandoned[0]));
	assert_false(atomic_load(&p->coll_abandoned[1]));
	dev_write(p, 1, 1, 2, 0);
	assert_true(wait_sink(s, 1)); /* delivered by the live collector */
	prof_stop(p);
	assert_int_equal(s->n, 1);
	assert_int_equal(s->d[0].thread, 1);
	assert_int_equal(s->d[0].shard, 1);
	assert_int_equal(s->d[0].count, 2);
	check_records(&s->d[0], 0);
	assert_int_equal(count_logs(TP_LOG_ERROR, "idle timeout", NULL), 0);
	prof_close(p);
	sink_free(s);
}

/* A shard that saw data and then idles past the timeout reports it with an
 * ERROR (the spec's hang detector) but does not give up: the spec's give-up
 * would lose every later buffer of that shard.  A late buffer is delivered
 * by the same live collector, which logs that it resumed. */
static void test_idle_timeout_reports_then_resumes(void **state)
{
	(void)state;
	struct sink *s = sink_new();
	struct tp_profiler *p = open_prof(&mod_percpu, tp_memops_sim_svm(), 2, 2, s);
	assert_int_equal(prof_start(p), 0);
	dev_write(p, 0, 0, 2, 0);
	assert_true(wait_sink(s, 1));
	for (uint64_t t0 = tp_now_ns();
	     !atomic_load(&p->coll_abandoned[0]) && before(t0, WAIT_DEADLINE_MS);)
		sleep_ms(1);
	assert_true(atomic_load(&p->coll_abandoned[0]));
	assert_false(atomic_load(&p->coll_abandoned[1]));
	assert_int_equal(count_logs(TP_LOG_ERROR,
				    "PROFT collector idle timeout after 2 seconds — no buffer on "
				    "shard 0 since; still waiting",
				    NULL),
			 1);
	dev_write(p, 0, 0, 3, 2); /* lands in the quiet shard */
	dev_write(p, 1, 1, 1, 0); /* and one in the other */
	assert_true(wait_sink(s, 3)); /* both delivered before any stop */
	assert_false(atomic_load(&p->coll_abandoned[0]));
	assert_int_equal(count_logs(TP_LOG_WARN,
				    "PROFT collector shard 0 resumed after its idle timeout", NULL),
			 1);
	prof_stop(p);
	assert_int_equal(s->n, 3);
	bool seen_late = false;
	for (int i = 1; i < 3; i++)
		if (s->d[i].shard == 0) {
			assert_int_equal(s->d[i].instance, 0);
			assert_int_equal(s->d[i].count, 3);
			check_records(&s->d[i], 2);
			seen_late = true;
		}
	assert_true(seen_late);
	assert_int_equal(prof_reconcile(p, NULL), 0);
	prof_close(p);
	sink_free(s);
}

/* ------------------------------------------------- start / stop */

static void test_start_stop_idempotent(void **state)
{
	(void)state;
	struct sink *s = sink_new();
	struct tp_profiler *p = open_prof(&mod_percpu, tp_memops_sim_svm(), 1, 1, s);
	assert_int_equal(prof_start(NULL), -EINVAL);
	prof_stop(NULL);
	prof_stop(p); /* before start: nothing to join */
	assert_false(p->started);
	assert_int_equal(prof_start(p), 0);
	assert_true(p->started);
	pthread_t drain = p->drain_th[0], coll = p->coll_th[0], repl = p->repl_th;
	assert_int_equal(prof_start(p), 0); /* no second set of threads */
	assert_true(pthread_equal(drain, p->drain_th[0]));
	assert_true(pthread_equal(coll, p->coll_th[0]));
	assert_true(pthread_equal(repl, p->repl_th));
	dev_write(p, 0, 0, 2, 0);
	prof_stop(p);
	assert_false(p->started);
	prof_stop(p);
	assert_int_equal(s->n, 1);
	/* a later run on the same pool works too */
	assert_int_equal(prof_start(p), 0);
	dev_write(p, 0, 0, 3, 2);
	prof_stop(p);
	prof_stop(p);
	assert_int_equal(s->n, 2);
	assert_int_equal(s->d[1].seq, 1);
	check_records(&s->d[1], 2);
	assert_int_equal(prof_reconcile(p, NULL), 0);
	prof_close(p);
	sink_free(s);
}

/* ------------------------------------- corrupted ready queues (item 5) */

static void test_bad_indices_not_trusted(void **state)
{
	(void)state;
	struct tp_profiler *p = open_prof(&mod_percpu, tp_memops_sim_svm(), 2, 1, NULL);
	struct tp_ready_entry e;
	/* device tail out of range on queue 1 */
	atomic_store(tail_of(p, 1), 8);
	assert_false(prof_try_pop_entry(p, 1, &e));
	assert_int_equal(atomic_load(head_of(p, 1)), 0);
	assert_int_equal(atomic_load(tail_of(p, 1)), 8);
	assert_int_equal(atomic_load(&p->bad_index_events), 1);
	assert_int_equal(count_logs(TP_LOG_ERROR,
				    "PROFT: invalid queue indices for thread 1: head=0 tail=8 (max=8)",
				    NULL),
			 1);
	assert_false(prof_try_pop_entry(p, 1, &e));
	assert_int_equal(atomic_load(&p->bad_index_events), 2);
	assert_int_equal(atomic_load(head_of(p, 1)), 0);
	atomic_store(tail_of(p, 1), 0);
	/* A device that overwrites the shared head is ignored: the host keeps
	 * its own head (0) and does not read the corrupted value back. */
	atomic_store(head_of(p, 0), 9);
	assert_false(prof_try_pop_entry(p, 0, &e)); /* host head 0 == tail 0: empty */
	assert_int_equal(atomic_load(&p->host_head[0]), 0);
	assert_int_equal(atomic_load(&p->bad_index_events), 2);
	atomic_store(head_of(p, 0), 0);
	/* a queue index the host cannot own is refused */
	assert_false(prof_try_pop_entry(p, 40, &e));
	/* healthy again: a published buffer pops normally */
	uint64_t first = atomic_load(&fq_of(p, 0)->buffer_ptrs[0]);
	struct tp_dpe w;
	writer(&w, p, 0, 0);
	put(&w, CAP0, 0);
	assert_true(prof_try_pop_entry(p, 0, &e));
	assert_int_equal(e.buffer_ptr, first);
	assert_int_equal(e.thread, 0);
	assert_int_equal(atomic_load(head_of(p, 0)), 1);
	assert_false(prof_try_pop_entry(p, 0, &e));
	prof_close(p);
}

static void test_bad_indices_survived_while_running(void **state)
{
	(void)state;
	struct sink *s = sink_new();
	struct tp_profiler *p = open_prof(&mod_percpu, tp_memops_sim_svm(), 1, 1, s);
	assert_int_equal(prof_start(p), 0);
	struct tp_dpe w;
	writer(&w, p, 0, 0);
	atomic_store(tail_of(p, 0), 0xFFFF0000u); /* a corrupted device tail */
	for (uint64_t t0 = tp_now_ns();
	     !atomic_load(&p->bad_index_events) && before(t0, WAIT_DEADLINE_MS);)
		sleep_ms(1);
	assert_true(atomic_load(&p->bad_index_events) >= 1);
	/* the device refuses to publish into it: counted as INVALID */
	put(&w, CAP0, 0);
	assert_int_equal(atomic_load(&tp_shm_state(p->hdr, 0)->dropped_by_cause[TP_DROP_INVALID]),
			 CAP0);
	assert_int_equal(atomic_load(tail_of(p, 0)), 0xFFFF0000u);
	atomic_store(tail_of(p, 0), 0); /* repaired */
	put(&w, CAP0, 100);
	assert_true(wait_sink(s, 1));
	prof_stop(p);
	assert_int_equal(s->n, 1);
	assert_int_equal(s->d[0].count, CAP0);
	check_records(&s->d[0], 100);
	assert_int_equal(count_logs(TP_LOG_ERROR,
				    "PROFT: invalid queue indices for thread 0: head=0 tail=4294901760 "
				    "(max=8)",
				    NULL),
			 1);
	struct tp_reconcile r;
	assert_int_equal(prof_reconcile(p, &r), 0);
	assert_int_equal(r.pool[0].total, 2 * CAP0);
	assert_int_equal(r.pool[0].collected, CAP0);
	assert_int_equal(r.pool[0].dropped, CAP0);
	assert_int_equal(r.pool[0].dropped_by_cause[TP_DROP_INVALID], CAP0);
	assert_int_equal(count_logs(TP_LOG_ERROR, "PROFT: ready queues were corrupted", NULL), 1);
	prof_close(p);
	sink_free(s);
}

/* The device publishes an entry with a zero buffer pointer at index `at`
 * of queue 0 (entry first, then the tail, as a real publish would). */
static void publish_null_entry(struct tp_profiler *p, uint32_t at)
{
	struct tp_ready_entry *e = &tp_shm_queue(p->hdr, 0)[at];
	atomic_store_explicit(&e->instance, 0, memory_order_relaxed);
	atomic_store_explicit(&e->kind, 0, memory_order_relaxed);
	atomic_store_explicit(&e->buffer_seq, 77, memory_order_relaxed);
	atomic_store_explicit(&e->buffer_ptr, 0, memory_order_relaxed);
	atomic_store_explicit(tail_of(p, 0), (at + 1) % 8, memory_order_release);
}

static void test_null_entry_skipped_after_patience(void **state)
{
	(void)state;
	struct tp_profiler *p = open_prof(&mod_percpu, tp_memops_sim_svm(), 1, 1, NULL);
	uint64_t first = atomic_load(&fq_of(p, 0)->buffer_ptrs[0]);
	publish_null_entry(p, 0);
	struct tp_dpe w;
	writer(&w, p, 0, 0);
	put(&w, CAP0, 0); /* a good entry behind it, at index 1 */
	assert_int_equal(atomic_load(tail_of(p, 0)), 2);
	struct tp_ready_entry e;
	assert_false(prof_try_pop_entry(p, 0, &e));
	assert_int_equal(atomic_load(head_of(p, 0)), 0); /* not advanced: waits a little */
	assert_int_equal(atomic_load(&p->null_entry_events), 0);
	assert_int_equal(count_logs(TP_LOG_ERROR, "null buffer pointer", NULL), 0);
	int calls = 1;
	while (atomic_load(head_of(p, 0)) == 0 && calls < 1000000) {
		assert_false(prof_try_pop_entry(p, 0, &e));
		calls++;
	}
	print_message("zero-pointer entry skipped after %d polls\n", calls);
	assert_true(calls > 10);
	assert_true(calls <= 100000);
	assert_int_equal(atomic_load(head_of(p, 0)), 1);
	assert_int_equal(atomic_load(&p->null_entry_events), 1);
	assert_int_equal(count_logs(TP_LOG_ERROR,
				    "PROFT: ready entry 0 of thread 0 has a null buffer pointer; skipped",
				    NULL),
			 1);
	/* the following good entry is delivered */
	assert_true(prof_try_pop_entry(p, 0, &e));
	assert_int_equal(e.buffer_ptr, first);
	assert_int_equal(e.instance, 0);
	assert_int_equal(e.buffer_seq, 0);
	assert_int_equal(atomic_load(head_of(p, 0)), 2);
	prof_process_entry(p, 0, &e);
	struct tp_ready_info info;
	assert_true(bp_try_pop_ready(&p->bp, &info, 0));
	assert_int_equal(info.count, CAP0);
	assert_int_equal(info.dev_ptr, first);
	uint8_t want[RS0];
	for (uint32_t i = 0; i < CAP0; i++) {
		fill(want, RS0, 0, i);
		assert_memory_equal((const uint8_t *)info.records + i * RS0, want, RS0);
	}
	prof_close(p);
}

static void test_null_entry_survived_while_running(void **state)
{
	(void)state;
	struct sink *s = sink_new();
	struct tp_profiler *p = open_prof(&mod_percpu, tp_memops_sim_svm(), 1, 1, s);
	assert_int_equal(prof_start(p), 0);
	publish_null_entry(p, 0);
	dev_write(p, 0, 0, 5, 0);
	assert_true(wait_sink(s, 1));
	prof_stop(p);
	assert_int_equal(s->n, 1);
	assert_int_equal(s->d[0].count, 5);
	check_records(&s->d[0], 0);
	assert_int_equal(atomic_load(&p->null_entry_events), 1);
	assert_int_equal(count_logs(TP_LOG_ERROR, "ready entry 0 of thread 0 has a null buffer "
						   "pointer; skipped",
				    NULL),
			 1);
	assert_int_equal(prof_reconcile(p, NULL), 0);
	assert_int_equal(count_logs(TP_LOG_ERROR, "0 out-of-range index reads, 1 null entries skipped",
				    NULL),
			 1);
	prof_close(p);
	sink_free(s);
}

static void test_unknown_instance_dropped_and_reconciled(void **state)
{
	(void)state;
	struct tp_profiler *p = open_prof(&mod_percpu, tp_memops_sim_svm(), 1, 1, NULL);
	struct tp_dpe w;
	writer(&w, p, 0, 0);
	put(&w, CAP0, 0);
	put(&w, CAP0, CAP0);
	struct tp_ready_entry *q0 = tp_shm_queue(p->hdr, 0);
	atomic_store(&q0[0].instance, 99); /* unknown instance */
	atomic_store(&q0[1].kind, 3);      /* kind that is not the instance's */
	struct tp_ready_entry e;
	assert_true(prof_try_pop_entry(p, 0, &e));
	assert_int_equal(e.instance, 99);
	prof_process_entry(p, 0, &e);
	assert_int_equal(count_logs(TP_LOG_ERROR,
				    "PROFT: invalid ready entry on thread 0: instance=99 kind=0 "
				    "(instances=1); buffer dropped",
				    NULL),
			 1);
	assert_int_equal(atomic_load(&p->host_lost_buffers[TP_HOST_LOST_BAD_ENTRY]), 1);
	assert_true(prof_try_pop_entry(p, 0, &e));
	prof_process_entry(p, 0, &e);
	assert_int_equal(count_logs(TP_LOG_ERROR, "instance=0 kind=3", NULL), 1);
	assert_int_equal(atomic_load(&p->host_lost_buffers[TP_HOST_LOST_BAD_ENTRY]), 2);
	struct tp_ready_info info;
	assert_false(bp_try_pop_ready(&p->bp, &info, 0)); /* nothing handed on */
	assert_int_equal(bp_retired_count(&p->bp, 0, 0), 2); /* out of circulation */
	struct tp_reconcile r;
	assert_int_equal(prof_reconcile(p, &r), -EPROTO);
	assert_false(r.ok);
	assert_false(r.pool[0].ok);
	assert_int_equal(r.pool[0].total, 2 * CAP0);
	assert_int_equal(r.pool[0].collected, 0);
	assert_int_equal(count_logs(TP_LOG_ERROR, "PROFT reconcile [kind0]", "!= total=16",
				    "records unaccounted for", NULL),
			 1);
	prof_close(p);
}

static void test_unmapped_pointer_dropped_and_reconciled(void **state)
{
	(void)state;
	struct tp_profiler *p = open_prof(&mod_percpu, tp_memops_sim_svm(), 1, 1, NULL);
	struct tp_dpe w;
	writer(&w, p, 0, 0);
	put(&w, CAP0, 0);
	struct tp_ready_entry *q0 = tp_shm_queue(p->hdr, 0);
	atomic_store(&q0[0].buffer_ptr, 0xdead0000u);
	struct tp_ready_entry e;
	assert_true(prof_try_pop_entry(p, 0, &e));
	assert_int_equal(e.buffer_ptr, 0xdead0000u);
	prof_process_entry(p, 0, &e);
	assert_int_equal(count_logs(TP_LOG_ERROR, "no host mapping for dev_ptr=0xdead0000", NULL), 1);
	assert_int_equal(atomic_load(&p->host_lost_buffers[TP_HOST_LOST_UNMAPPED]), 1);
	assert_int_equal(atomic_load(&p->host_lost_buffers[TP_HOST_LOST_BAD_ENTRY]), 0);
	struct tp_ready_info info;
	assert_false(bp_try_pop_ready(&p->bp, &info, 0));
	struct tp_reconcile r;
	assert_int_equal(prof_reconcile(p, &r), -EPROTO);
	assert_int_equal(r.pool[0].total, CAP0);
	assert_int_equal(r.pool[0].collected, 0);
	assert_false(r.pool[0].ok);
	assert_int_equal(count_logs(TP_LOG_ERROR, "PROFT reconcile [kind0]", "!= total=8", NULL), 1);
	prof_close(p);
}

/* A mapped address that is not the start of a buffer (the pool region
 * itself, the middle of a buffer) is dropped, never handed on or recycled
 * to the device; the header geometry is not taken from shared memory. */
static void test_mapped_non_buffer_pointer_dropped(void **state)
{
	(void)state;
	struct tp_profiler *p = open_prof(&mod_percpu, tp_memops_sim_svm(), 1, 1, NULL);
	uint64_t buf1 = atomic_load(&fq_of(p, 0)->buffer_ptrs[1]);
	struct tp_dpe w;
	writer(&w, p, 0, 0);
	put(&w, CAP0, 0);
	put(&w, CAP0, CAP0);
	put(&w, CAP0, 2 * CAP0);
	struct tp_ready_entry *q0 = tp_shm_queue(p->hdr, 0);
	/* an unused (zeroed) part of the region: reads as an empty buffer */
	uint64_t in_region = p->shm_dev + p->hdr->queues_off + 4 * sizeof(struct tp_ready_entry);
	atomic_store(&q0[0].buffer_ptr, in_region);
	atomic_store(&q0[1].buffer_ptr, buf1 + 64); /* inside a buffer */
	/* a device scribbling over the header geometry */
	p->hdr->kinds[0].record_size = 1u << 20;
	p->hdr->kinds[0].records_per_buffer = 1u << 30;
	p->hdr->kinds[0].buffer_size = 0;
	struct tp_ready_entry e;
	struct tp_ready_info info;
	for (int i = 0; i < 2; i++) {
		assert_true(prof_try_pop_entry(p, 0, &e));
		prof_process_entry(p, 0, &e);
		assert_false(bp_try_pop_ready(&p->bp, &info, 0));
	}
	assert_int_equal(count_logs(TP_LOG_ERROR, "PROFT: ready entry on thread 0 names",
				    "which is not a buffer of kind 0; dropped", NULL),
			 2);
	assert_int_equal(atomic_load(&p->host_lost_buffers[TP_HOST_LOST_BAD_ENTRY]), 2);
	assert_int_equal(bp_recycled_count(&p->bp, 0, 0), 0);
	assert_int_equal(bp_retired_count(&p->bp, 0, 0), 0);
	/* the third, genuine buffer is delivered with the module's geometry */
	assert_true(prof_try_pop_entry(p, 0, &e));
	prof_process_entry(p, 0, &e);
	assert_true(bp_try_pop_ready(&p->bp, &info, 0));
	assert_int_equal(info.record_size, RS0);
	assert_int_equal(info.count, CAP0);
	uint8_t want[RS0];
	for (uint32_t i = 0; i < CAP0; i++) {
		fill(want, RS0, 0, 2 * CAP0 + i);
		assert_memory_equal((const uint8_t *)info.records + i * RS0, want, RS0);
	}
	prof_close(p);
}

/* ------------------------------------------- backpressure state machine */

static void test_backpressure_state_machine(void **state)
{
	(void)state;
	struct tp_profiler *p = open_prof(&mod_percpu, tp_memops_sim_svm(), 2, 2, NULL);
	struct tp_backpressure *bpf = &p->hdr->bp;
	struct tp_ready_entry e;
	struct tp_ready_info info;

	/* The freeze lines are INFO (normal operation under load). */
	tp_log_set_threshold(TP_LOG_INFO);

	/* idle: nothing happens */
	prof_update_backpressure(p);
	assert_int_equal(atomic_load(&bpf->rq_freeze_active), 0);
	assert_int_equal(atomic_load(&bpf->fq_freeze_active), 0);
	assert_int_equal(atomic_load(&p->freeze_opened), 0);

	/* one full buffer on each queue; two spare buffers in recycled lane 0 */
	struct tp_dpe w0, w1;
	writer(&w0, p, 0, 0);
	writer(&w1, p, 1, 1);
	put(&w0, CAP0, 0);
	put(&w1, CAP0, 0);
	assert_int_equal(bp_allocate_recycled_batch(&p->bp, 0, bp_buffer_size(&p->bp, 0), 2, 0), 2);
	uint32_t t0 = atomic_load(&fq_of(p, 0)->tail), t1 = atomic_load(&fq_of(p, 1)->tail);
	assert_int_equal(t0 - atomic_load(&fq_of(p, 0)->head), 2);

	/* the device signals an empty free queue: the freeze opens, the flag
	 * is consumed */
	assert_int_equal(atomic_load(&p->freeze_ns), 0);
	const uint64_t t_open = tp_now_ns();
	atomic_store(&bpf->fq_contended, 1);
	prof_update_backpressure(p);
	assert_int_equal(atomic_load(&bpf->fq_freeze_active), 1);
	assert_int_equal(atomic_load(&bpf->fq_contended), 0);
	assert_int_equal(atomic_load(&bpf->rq_freeze_active), 0);
	assert_true(atomic_load(&p->host_freeze_open));
	assert_int_equal(atomic_load(&p->freeze_opened), 1);
	/* the first of the session: the spec's WARN, word for word */
	assert_int_equal(count_exact(TP_LOG_WARN, "PROFT DFX backpressure TRIGGERED: "
						  "free-queue-empty, pop-gate freeze OPENED — all "
						  "AICPU lanes parked at their pop gate"),
			 1);

	/* ready queues not drained: stays frozen, no refill */
	prof_update_backpressure(p);
	assert_int_equal(atomic_load(&bpf->fq_freeze_active), 1);
	assert_int_equal(atomic_load(&fq_of(p, 0)->tail), t0);

	/* drain queue 0: the drain does not top up during the freeze */
	assert_true(prof_try_pop_entry(p, 0, &e));
	prof_process_entry(p, 0, &e);
	assert_int_equal(atomic_load(&fq_of(p, 0)->tail), t0);
	assert_int_equal(bp_recycled_count(&p->bp, 0, 0), 2);
	assert_true(bp_try_pop_ready(&p->bp, &info, 0)); /* handed on all the same */
	/* queue 1 still holds an entry: every live queue must be drained */
	prof_update_backpressure(p);
	assert_int_equal(atomic_load(&bpf->fq_freeze_active), 1);
	assert_int_equal(atomic_load(&p->freeze_released), 0);

	/* all drained: this tick refills (lane buffers first, then new ones)
	 * and so does not release yet */
	assert_true(prof_try_pop_entry(p, 1, &e));
	prof_process_entry(p, 1, &e);
	assert_int_equal(atomic_load(&fq_of(p, 1)->tail), t1);
	prof_update_backpressure(p);
	assert_int_equal(atomic_load(&fq_of(p, 0)->tail), t0 + 2);
	assert_int_equal(atomic_load(&fq_of(p, 1)->tail), t1 + 2);
	assert_int_equal(bp_recycled_count(&p->bp, 0, 0), 0);
	assert_int_equal(atomic_load(&bpf->fq_freeze_active), 1);
	assert_true(atomic_load(&p->host_freeze_open));
	/* nothing more could be pushed: released; the producers were frozen
	 * from the open to this release (at least the 3 ms slept here) */
	struct timespec nap = { 0, 3000000 };
	nanosleep(&nap, NULL);
	prof_update_backpressure(p);
	const uint64_t frozen = atomic_load(&p->freeze_ns);
	assert_true(frozen >= 3000000u);
	assert_true(frozen <= tp_now_ns() - t_open);
	assert_int_equal(atomic_load(&bpf->fq_freeze_active), 0);
	assert_false(atomic_load(&p->host_freeze_open));
	assert_int_equal(atomic_load(&p->freeze_released), 1);
	assert_int_equal(count_exact(TP_LOG_WARN, "PROFT DFX backpressure RELEASED: ready-queue "
						  "drained AND free-queues refilled — AICPU lanes "
						  "resume"),
			 1);

	/* after release the drain tops up again, from its own lane */
	put(&w0, CAP0, CAP0);
	uint32_t t0b = atomic_load(&fq_of(p, 0)->tail);
	assert_int_equal(bp_allocate_recycled_batch(&p->bp, 0, bp_buffer_size(&p->bp, 0), 1, 0), 1);
	assert_true(prof_try_pop_entry(p, 0, &e));
	prof_process_entry(p, 0, &e);
	assert_int_equal(atomic_load(&fq_of(p, 0)->tail), t0b + 1);
	assert_int_equal(bp_recycled_count(&p->bp, 0, 0), 0);

	/* a full ready queue with nothing pending: opened and released in
	 * the same tick */
	atomic_store(&bpf->rq_contended, 1);
	prof_update_backpressure(p);
	assert_int_equal(atomic_load(&bpf->rq_contended), 0);
	assert_int_equal(atomic_load(&bpf->rq_freeze_active), 0);
	assert_int_equal(atomic_load(&p->freeze_opened), 2);
	assert_int_equal(atomic_load(&p->freeze_released), 2);
	/* later pairs are DEBUG (below this threshold): still one WARN each */
	assert_int_equal(count_logs(TP_LOG_WARN, "DFX backpressure", NULL), 2);
	assert_int_equal(count_logs(-1, "DFX backpressure", NULL), 2);

	/* both at once, with an entry pending on queue 1: both open; one
	 * release clears both once drained and refilled */
	put(&w1, CAP0, CAP0);
	atomic_store(&bpf->rq_contended, 1);
	atomic_store(&bpf->fq_contended, 1);
	prof_update_backpressure(p);
	assert_int_equal(atomic_load(&bpf->rq_freeze_active), 1);
	assert_int_equal(atomic_load(&bpf->fq_freeze_active), 1);
	assert_int_equal(atomic_load(&p->freeze_opened), 4);
	prof_update_backpressure(p);
	assert_int_equal(atomic_load(&bpf->rq_freeze_active), 1);
	assert_true(prof_try_pop_entry(p, 1, &e));
	prof_process_entry(p, 1, &e);
	prof_update_backpressure(p); /* refills instance 1 */
	assert_int_equal(atomic_load(&bpf->rq_freeze_active), 1);
	prof_update_backpressure(p);
	assert_int_equal(atomic_load(&bpf->rq_freeze_active), 0);
	assert_int_equal(atomic_load(&bpf->fq_freeze_active), 0);
	assert_int_equal(atomic_load(&p->freeze_released), 3);
	/* every freeze since adds its time, which stays within the time
	 * since the first opened */
	assert_true(atomic_load(&p->freeze_ns) > frozen);
	assert_true(atomic_load(&p->freeze_ns) <= tp_now_ns() - t_open);
	uint32_t f1 = atomic_load(&fq_of(p, 1)->tail) - atomic_load(&fq_of(p, 1)->head);
	assert_int_equal(f1, 4);
	prof_close(p);
}

/* The PMU module's shape (spec/pmu.md §7.1): warm target 1, batch 1. */
static int one_per_lane(int kind, int shards)
{
	(void)kind;
	(void)shards;
	return 1;
}

static int batch_one(int kind)
{
	(void)kind;
	return 1;
}

static const struct tp_module mod_warm = {
	.name = "PROFW", .kinds = 1, .ready_queue_size = 8, .slot_count = 4,
	.max_collector_threads = 4, .idle_timeout_sec = 2, .record_size = {RS0},
	.records_per_buffer = {CAP0}, .batch_size = batch_one,
	.recycled_warm_target = one_per_lane,
};

/* A pool at its cap while the collector holds every buffer: the replenish
 * thread's lane stays below its warm target and the device drops (short
 * backstop). The refused allocation is not retried on every tick: one
 * refusal stops growth (cap_hit) until memory is freed; before, the
 * replenish thread retried it (and shortened its sleep) thousands of
 * times a second. */
static void test_pool_cap_refusal_not_retried(void **state)
{
	(void)state;
	struct holder h = { .hold = false };
	struct tp_profiler_config cfg = {
		.module = &mod_warm,
		.ops = tp_memops_sim_svm(),
		.num_threads = 1,
		.num_instances = 2,
		.buffers_per_instance = 2,
		.backstop_cycles = tp_sys_cnt_freq() / 500, /* 2 ms */
		.pool_cap_bytes = UINT64_MAX,
		.on_buffer_collected = on_collected_held,
		.ud = &h,
	};
	/* The cap: exactly what the pool holds once started. */
	struct tp_profiler *p = prof_open(&cfg);
	assert_non_null(p);
	assert_int_equal(prof_start(p), 0);
	prof_stop(p);
	cfg.pool_cap_bytes = p->start_bytes;
	prof_close(p);
	p = prof_open(&cfg);
	assert_non_null(p);
	assert_int_equal(prof_start(p), 0);
	assert_int_equal(atomic_load(&p->bp.pool_bytes), cfg.pool_cap_bytes);
	assert_int_equal(atomic_load(&p->bp.alloc_refused), 0);
	atomic_store(&h.hold, true);
	struct tp_dpe w;
	writer(&w, p, 0, 0);
	uint8_t r[MAXB];
	uint64_t stored = 0;
	const uint64_t n = 40 * CAP0; /* more than the whole pool holds */
	for (uint64_t i = 0; i < n; i++) {
		fill(r, w.rsize, 0, i);
		stored += dpe_write(&w, r);
	}
	assert_true(stored < n); /* the device dropped at the ceiling */
	/* The replenish thread keeps running while the collector holds on. */
	const uint64_t s0 = atomic_load(&p->repl_sleeps);
	sleep_ms(200);
	const uint64_t refused = atomic_load(&p->bp.alloc_refused);
	printf("pool cap: %" PRIu64 " refused, %" PRIu64 " replenish sleeps in 200 ms held, "
	       "%" PRIu32 " kicks\n",
	       refused, atomic_load(&p->repl_sleeps) - s0, atomic_load(&p->repl_kicks));
	assert_true(refused >= 1);
	assert_true(refused <= 2);
	assert_int_equal(atomic_load(&p->bp.pool_bytes), cfg.pool_cap_bytes);
	atomic_store(&h.hold, false);
	(void)dpe_flush(&w);
	prof_stop(p);
	struct tp_reconcile rc;
	assert_int_equal(prof_reconcile(p, &rc), 0);
	assert_int_equal(rc.pool[0].total, n);
	assert_int_equal(rc.pool[0].collected, stored);
	assert_int_equal(rc.pool[0].dropped, n - stored);
	prof_close(p);
}

/* init_surplus: each shard's recycled lane of a kind is filled at open to
 * its warm target plus the surplus (at most the lane's capacity), one
 * block per lane; prof_start then has nothing to add; the default pool
 * cap grows by the surplus's bytes, not 8 times them; a surplus for a
 * kind the module lacks, or more than a lane holds, is refused. */
static void test_init_surplus_seeds_recycled_lanes(void **state)
{
	(void)state;
	static const uint8_t kinds[3] = {0, 1, 1};
	struct tp_profiler_config cfg = {
		.module = &mod_2k,
		.ops = tp_memops_sim_svm(),
		.num_threads = 2,
		.num_instances = 3,
		.instance_kind = kinds,
		.warm_covers_instances = true, /* warm target: kind 0 1, kind 1 1 per lane */
	};
	struct tp_profiler *p0 = prof_open(&cfg);
	assert_non_null(p0);
	assert_int_equal(p0->shard_count, 2);
	const uint64_t bytes0 = atomic_load(&p0->bp.pool_bytes);
	const uint64_t allocs0 = atomic_load(&p0->bp.n_allocs);
	for (int k = 0; k < 2; k++)
		for (int sh = 0; sh < 2; sh++)
			assert_int_equal(bp_recycled_count(&p0->bp, k, sh), 0);
	assert_int_equal(p0->bp.pool_cap_bytes, 16u << 20);
	const size_t stride0 = (bp_buffer_size(&p0->bp, 0) + 63u) & ~(size_t)63u;
	const size_t stride1 = (bp_buffer_size(&p0->bp, 1) + 63u) & ~(size_t)63u;
	prof_close(p0);

	cfg.init_surplus[0] = 5;
	cfg.init_surplus[1] = 2;
	struct tp_profiler *p = prof_open(&cfg);
	assert_non_null(p);
	for (int sh = 0; sh < 2; sh++) {
		assert_int_equal(bp_recycled_count(&p->bp, 0, sh), 1 + 5);
		assert_int_equal(bp_recycled_count(&p->bp, 1, sh), 1 + 2);
	}
	const uint64_t surplus_bytes = 2 * 6 * stride0 + 2 * 3 * stride1;
	assert_int_equal(atomic_load(&p->bp.pool_bytes) - bytes0, surplus_bytes);
	assert_int_equal(atomic_load(&p->bp.n_allocs) - allocs0, 4);
	assert_int_equal(p->bp.pool_cap_bytes, (16u << 20) + surplus_bytes);
	/* the free queues hold what they held without it */
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(atomic_load(&fq_of(p, i)->tail) - atomic_load(&fq_of(p, i)->head),
				 4);
	/* every lane is above its warm target: prof_start allocates nothing */
	assert_int_equal(prof_start(p), 0);
	assert_int_equal(atomic_load(&p->bp.n_allocs) - allocs0, 4);
	prof_stop(p);
	prof_close(p);

	/* target + surplus beyond a lane's 1024 entries: the lane is filled */
	cfg.init_surplus[0] = 1024;
	cfg.init_surplus[1] = 0;
	p = prof_open(&cfg);
	assert_non_null(p);
	assert_int_equal(bp_recycled_count(&p->bp, 0, 0), 1024);
	assert_int_equal(bp_recycled_count(&p->bp, 0, 1), 1024);
	prof_close(p);

	cfg.init_surplus[0] = 5;
	cfg.init_surplus[2] = 1; /* mod_2k has two kinds */
	assert_null(prof_open(&cfg));
	assert_non_null(strstr(tp_last_error(), "init_surplus[2] = 1"));
	cfg.init_surplus[2] = 0;
	cfg.init_surplus[0] = 5000; /* more than a 1024-entry lane */
	assert_null(prof_open(&cfg));
	assert_non_null(strstr(tp_last_error(), "init_surplus[0] = 5000"));
}

/* ------------------------------------------------------ reconcile */

static void test_reconcile_per_kind(void **state)
{
	(void)state;
	static const uint8_t kinds[3] = {0, 1, 1};
	struct sink *s = sink_new();
	struct tp_profiler_config cfg = {
		.module = &mod_2k,
		.ops = tp_memops_sim_svm(),
		.num_threads = 1,
		.num_instances = 3,
		.instance_kind = kinds,
		.backstop_cycles = 1000,
		.ready_push_wait_ms = 0, /* the module idle timeout */
		.on_buffer_collected = on_collected,
		.ud = s,
	};
	struct tp_profiler *p = prof_open(&cfg);
	assert_non_null(p);
	assert_int_equal(p->hdr->kinds[1].record_size, RS1);
	/* before the host runs, instance 2 uses up its free queue: 4 buffers
	 * published, then no replacement: 2 records dropped as NO_BUFFER */
	struct tp_dpe w2;
	writer(&w2, p, 2, 0);
	assert_int_equal(w2.rsize, RS1);
	put(&w2, 4 * CAP1, 0);
	assert_null(w2.cur);
	uint8_t r[RS1];
	for (int i = 0; i < 2; i++) {
		fill(r, RS1, 2, 1000 + i);
		assert_false(dpe_write(&w2, r));
	}
	assert_int_equal(prof_start(p), 0);
	dev_write(p, 0, 0, 5, 0);
	dev_write(p, 1, 0, 3, 0);
	/* instance 2 recovers once the host refilled its free queue */
	for (uint64_t t0 = tp_now_ns();
	     !dpe_try_pop_free(&w2, w2.seq) && before(t0, WAIT_DEADLINE_MS);)
		sleep_ms(1);
	assert_non_null(w2.cur);
	put(&w2, 1, 4 * CAP1);
	assert_int_equal(dpe_flush(&w2), 0);
	prof_stop(p);

	struct tp_reconcile rc;
	assert_int_equal(prof_reconcile(p, &rc), 0);
	assert_true(rc.ok);
	assert_int_equal(rc.kinds, 2);
	assert_int_equal(rc.pool[0].total, 5);
	assert_int_equal(rc.pool[0].collected, 5);
	assert_int_equal(rc.pool[0].dropped, 0);
	assert_int_equal(rc.pool[1].total, 3 + 4 * CAP1 + 2 + 1);
	assert_int_equal(rc.pool[1].collected, 3 + 4 * CAP1 + 1);
	assert_int_equal(rc.pool[1].dropped, 2);
	assert_int_equal(rc.pool[1].dropped_by_cause[TP_DROP_NO_BUFFER], 2);
	assert_true(rc.pool[0].ok && rc.pool[1].ok);
	assert_int_equal(count_logs(-1, " reconcile [", NULL), 2);
	assert_int_equal(count_logs(TP_LOG_TIMING, "PROF2 reconcile [alpha]: collected=5 + dropped=0 "
						    "+ mismatch=0 == total=5",
				    NULL),
			 1);
	assert_int_equal(count_logs(TP_LOG_WARN, "PROF2 reconcile [kind1]: collected=20 + dropped=2 "
						  "+ mismatch=0 == total=22",
				    "no_buffer=2", NULL),
			 1);
	/* every delivered buffer carries its kind's geometry and records */
	uint64_t next[3] = {0, 0, 0};
	for (int i = 0; i < s->n; i++) {
		struct delivery *d = &s->d[i];
		assert_int_equal(d->kind, kinds[d->instance]);
		assert_int_equal(d->rsize, d->kind ? RS1 : RS0);
		check_records(d, next[d->instance]);
		next[d->instance] += d->count;
	}
	assert_int_equal(next[0], 5);
	assert_int_equal(next[1], 3);
	assert_int_equal(next[2], 4 * CAP1 + 1);
	prof_close(p);
	sink_free(s);
}

/* ------------------------------------------------- shadow transport */

#define RUN_RECORDS 200u

struct prod_arg {
	struct tp_profiler *p;
	uint32_t inst;
	int stored;
};

static void *producer(void *arg)
{
	struct prod_arg *a = arg;
	struct tp_dpe w;
	if (dpe_attach(&w, prof_shm_dev(a->p), a->inst, a->inst, NULL, NULL) != 0)
		return NULL;
	uint8_t r[MAXB];
	for (uint32_t i = 0; i < RUN_RECORDS; i++) {
		fill(r, w.rsize, a->inst, i);
		a->stored += dpe_write(&w, r);
	}
	dpe_flush(&w);
	return NULL;
}

static int cmp_delivery(const void *a, const void *b)
{
	const struct delivery *x = a, *y = b;
	if (x->instance != y->instance)
		return x->instance < y->instance ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Two AICPU threads, one instance each, RUN_RECORDS records each.
 * Returns the deliveries sorted by (instance, seq). */
static struct sink *run_two_producers(struct tp_memops ops, bool shadow)
{
	struct sink *s = sink_new();
	struct tp_profiler *p = open_prof(&mod_percpu, ops, 2, 2, s);
	assert_int_equal(p->bp.shadow, shadow);
	if (shadow)
		assert_ptr_not_equal(prof_shm_dev(p), p->hdr);
	else
		assert_ptr_equal(prof_shm_dev(p), p->hdr);
	assert_int_equal(prof_start(p), 0);
	struct prod_arg a[2] = {{p, 0, 0}, {p, 1, 0}};
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, producer, &a[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	prof_stop(p);
	assert_int_equal(a[0].stored, RUN_RECORDS);
	assert_int_equal(a[1].stored, RUN_RECORDS);
	struct tp_reconcile r;
	assert_int_equal(prof_reconcile(p, &r), 0);
	assert_int_equal(r.pool[0].total, 2 * RUN_RECORDS);
	assert_int_equal(r.pool[0].collected, 2 * RUN_RECORDS);
	assert_int_equal(r.pool[0].dropped, 0);
	prof_close(p);
	qsort(s->d, (size_t)s->n, sizeof(s->d[0]), cmp_delivery);
	return s;
}

static void test_shadow_transport_matches_svm(void **state)
{
	(void)state;
	int64_t live0 = tp_memops_sim_live_bytes();
	struct sink *a = run_two_producers(tp_memops_sim_svm(), false);
	struct sink *b = run_two_producers(tp_memops_sim_shadow(), true);
	assert_int_equal(tp_memops_sim_live_bytes(), live0); /* everything freed */
	assert_int_equal(a->n, (int)(2 * RUN_RECORDS / CAP0));
	assert_int_equal(b->n, a->n);
	uint64_t next[2] = {0, 0};
	for (int i = 0; i < a->n; i++) {
		struct delivery *x = &a->d[i], *y = &b->d[i];
		assert_int_equal(x->instance, y->instance);
		assert_int_equal(x->seq, y->seq);
		assert_int_equal(x->count, y->count);
		assert_int_equal(x->thread, y->thread);
		assert_int_equal(x->shard, y->shard);
		assert_int_equal(x->thread, x->instance);
		assert_memory_equal(x->data, y->data, (size_t)x->count * x->rsize);
		/* seq runs 0, 1, 2, ... per instance and the records are in order */
		assert_int_equal(x->seq, next[x->instance] / CAP0);
		check_records(x, next[x->instance]);
		next[x->instance] += x->count;
	}
	assert_int_equal(next[0], RUN_RECORDS);
	assert_int_equal(next[1], RUN_RECORDS);
	sink_free(a);
	sink_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_shard_count_follows_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_single_collector_module_keeps_one_shard, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_single_drain_finds_queue_2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_queues_delivered_before_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_shard_never_times_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_timeout_reports_then_resumes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_start_stop_idempotent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_indices_not_trusted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_indices_survived_while_running, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_null_entry_skipped_after_patience, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_null_entry_survived_while_running, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unknown_instance_dropped_and_reconciled, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unmapped_pointer_dropped_and_reconciled, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mapped_non_buffer_pointer_dropped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_backpressure_state_machine, setup, teardown),
		cmocka_unit_test_setup_teardown(test_init_surplus_seeds_recycled_lanes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pool_cap_refusal_not_retried, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reconcile_per_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shadow_transport_matches_svm, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
