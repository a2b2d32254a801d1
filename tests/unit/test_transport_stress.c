/* SPDX-License-Identifier: MIT */
/*
 * Stress / acceptance tests of the record transport (src/transport/), each
 * run on both transports: the a2a3-style shared mapping (svm) and the a5
 * host-shadow transport (spec/framework.md §9).
 *
 *   no_rollback      device threads keep storing their device-owned fields
 *                    while the host ticks; none may ever be rolled back.
 *   one_buffer       slot_count 1, one buffer per instance, no warm pool:
 *                    every switch waits for the host to recycle the buffer.
 *   throughput       4 producers x 10M 64-byte records through the whole
 *                    pipeline with a slow collector (backpressure engages).
 *   host_stalls      the drains stop popping, backstop 50 ms: producers
 *                    finish in bounded time and every record is accounted.
 *   two_kinds        two kinds with different record sizes under load.
 *
 * Records carry (producer = instance, sequence number, check word); the
 * collector callback checks every record is delivered exactly once, in
 * order per producer.  Threads never call cmocka asserts: they count
 * violations and the test thread asserts the counts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/watchdog.h"
#include "transport/dev_engine.h"
#include "transport/profiler.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TP_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TP_TEST_SANITIZED 1
#endif
#endif
#ifndef TP_TEST_SANITIZED
#define TP_TEST_SANITIZED 0
#endif

#define REC_MAGIC 0x52454331u /* "REC1" */
#define MAX_INST 16
#define MAX_PROD 8

enum transport { SVM, SHADOW };

static const char *tname(enum transport t)
{
	return t == SVM ? "svm" : "shadow";
}

static struct tp_memops ops_for(enum transport t)
{
	return t == SVM ? tp_memops_sim_svm() : tp_memops_sim_shadow();
}

static double now_s(void)
{
	return (double)tp_now_ns() / 1e9;
}

static void sleep_us(unsigned us)
{
	struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000L};
	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------- records */

/* Every record starts with this header and ends with a check word at
 * offset record_size - 8 (so a short copy of the record is caught). */
struct rec_hdr {
	uint32_t magic;
	uint32_t producer;
	uint64_t seq;
};

/* The 64-byte record of the single-kind tests. */
struct rec64 {
	struct rec_hdr h;
	uint64_t payload[5];
	uint64_t chk;
};
_Static_assert(sizeof(struct rec64) == 64, "64-byte record");

static inline uint64_t rec_chk(uint32_t producer, uint64_t seq)
{
	return (seq * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)producer << 56) ^ 0xA5A5A5A5u;
}

static inline void rec64_fill(struct rec64 *r, uint32_t producer, uint64_t seq)
{
	r->h.magic = REC_MAGIC;
	r->h.producer = producer;
	r->h.seq = seq;
	for (int i = 0; i < 5; i++)
		r->payload[i] = seq + (uint64_t)i;
	r->chk = rec_chk(producer, seq);
}

/* Write one record of any size >= 24 straight into the current buffer. */
static inline bool put_rec(struct tp_dpe *w, uint32_t producer, uint64_t seq)
{
	char *r = dpe_reserve(w);
	if (!r)
		return false;
	struct rec_hdr h = {REC_MAGIC, producer, seq};
	uint64_t c = rec_chk(producer, seq);
	memcpy(r, &h, sizeof(h));
	memcpy(r + w->rsize - 8, &c, 8);
	dpe_commit(w);
	return true;
}

/* --------------------------------------------------- collector checks */

/* Per producer (= instance) state, touched only by the collector thread of
 * the shard its ready queue folds to (read by the test after prof_stop). */
struct inst_chk {
	uint64_t next_seq;  /* strict mode: next expected record seq */
	uint64_t collected; /* records seen */
	uint64_t buffers;
	uint32_t next_buf_seq;
	bool any;
	char pad_[64 - 2 * 8 - 8 - 4 - 1];
} __attribute__((aligned(64)));

struct cctx {
	const struct tp_module *m;
	uint32_t n_inst;
	const uint8_t *inst_kind; /* NULL: all kind 0 */
	bool strict;              /* no drops: records / buffers contiguous */
	/* slow collector */
	unsigned spin_ns;         /* busy wait per buffer */
	unsigned sleep_every;     /* sleep every n-th buffer of a shard (0: never) */
	unsigned sleep_us;
	_Atomic uint64_t shard_bufs[8];

	struct inst_chk chk[MAX_INST];
	_Atomic uint64_t kind_collected[TP_MAX_KINDS];
	_Atomic uint64_t errors;
	_Atomic bool err_logged;
	char first_err[256];
};

/* struct cctx is 64-byte aligned (per-instance state on its own lines). */
static struct cctx *cctx_new(void)
{
	size_t size = (sizeof(struct cctx) + 63) & ~(size_t)63;
	struct cctx *c = aligned_alloc(64, size);
	if (c)
		memset(c, 0, size);
	return c;
}

static void cfail(struct cctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cfail(struct cctx *c, const char *fmt, ...)
{
	atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
	if (atomic_exchange_explicit(&c->err_logged, true, memory_order_acq_rel))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->first_err, sizeof(c->first_err), fmt, ap);
	va_end(ap);
	fprintf(stderr, "collector check failed: %s\n", c->first_err);
}

static bool on_collected(void *ud, const struct tp_ready_info *info, int shard)
{
	struct cctx *c = ud;
	if (shard < 0 || shard >= 8) {
		cfail(c, "bad shard %d", shard);
		return true;
	}
	uint64_t nb = atomic_fetch_add_explicit(&c->shard_bufs[shard], 1, memory_order_relaxed) + 1;
	if (info->instance >= c->n_inst) {
		cfail(c, "instance %u out of range", info->instance);
		return true;
	}
	uint32_t kind = c->inst_kind ? c->inst_kind[info->instance] : 0;
	if (info->kind != kind) {
		cfail(c, "instance %u: buffer kind %u, expected %u", info->instance, info->kind, kind);
		return true;
	}
	if (info->record_size != c->m->record_size[kind]) {
		cfail(c, "kind %u: record_size %u, expected %u", kind, info->record_size,
		      c->m->record_size[kind]);
		return true;
	}
	if (info->count == 0 || info->count > c->m->records_per_buffer[kind]) {
		cfail(c, "instance %u: buffer count %u (capacity %u)", info->instance, info->count,
		      c->m->records_per_buffer[kind]);
		return true;
	}
	if ((const char *)info->records != (const char *)info->host_ptr + TP_BUF_HDR_SIZE)
		cfail(c, "records pointer is not host_ptr + header");
	/* The header the host copied is the one the device wrote for this
	 * publication: the device stamps seq at claim and never touches the
	 * buffer again until the host hands it back. */
	const struct tp_buf_hdr *bh = info->host_ptr;
	if (bh->seq != info->seq || atomic_load_explicit(&bh->count, memory_order_relaxed) !=
					    info->count)
		cfail(c, "instance %u: buffer header seq %u count %u, entry seq %u count %u",
		      info->instance, bh->seq, atomic_load_explicit(&bh->count, memory_order_relaxed),
		      info->seq, info->count);
	struct inst_chk *ic = &c->chk[info->instance];
	if (c->strict && ic->any && info->seq != ic->next_buf_seq)
		cfail(c, "instance %u: buffer seq %u, expected %u", info->instance, info->seq,
		      ic->next_buf_seq);
	else if (!c->strict && ic->any && info->seq < ic->next_buf_seq)
		cfail(c, "instance %u: buffer seq %u went backwards (next %u)", info->instance,
		      info->seq, ic->next_buf_seq);
	ic->next_buf_seq = info->seq + 1;

	const uint32_t rsize = info->record_size;
	const char *r = info->records;
	for (uint32_t i = 0; i < info->count; i++, r += rsize) {
		struct rec_hdr h;
		uint64_t chk;
		memcpy(&h, r, sizeof(h));
		memcpy(&chk, r + rsize - 8, 8);
		if (h.magic != REC_MAGIC || h.producer != info->instance) {
			cfail(c, "instance %u: record %u has magic %#x producer %u", info->instance,
			      i, h.magic, h.producer);
			return true;
		}
		if (chk != rec_chk(h.producer, h.seq)) {
			cfail(c, "instance %u: record seq %llu has a bad check word", info->instance,
			      (unsigned long long)h.seq);
			return true;
		}
		if (c->strict ? h.seq != ic->next_seq : (ic->any && h.seq < ic->next_seq)) {
			cfail(c, "instance %u: record seq %llu, expected %s%llu", info->instance,
			      (unsigned long long)h.seq, c->strict ? "" : ">= ",
			      (unsigned long long)ic->next_seq);
			return true;
		}
		ic->next_seq = h.seq + 1;
		ic->any = true;
	}
	ic->any = true;
	ic->collected += info->count;
	ic->buffers++;
	atomic_fetch_add_explicit(&c->kind_collected[kind], info->count, memory_order_relaxed);

	if (c->spin_ns) {
		uint64_t t0 = tp_now_ns();
		while (tp_now_ns() - t0 < c->spin_ns)
			;
	}
	if (c->sleep_every && nb % c->sleep_every == 0)
		sleep_us(c->sleep_us);
	return true;
}

/* ------------------------------------------------------------ producers */

/* One device thread: writes `n` records to each of its instances
 * (round-robin in chunks of `chunk`), all on ready queue q. */
struct prod {
	struct tp_profiler *p;
	uint32_t q;
	uint32_t ninst;
	uint32_t inst[4];
	uint64_t n; /* records per instance */
	uint32_t chunk;
	bool use_write; /* dpe_write of a rec64 rather than reserve/commit */
	uint64_t slow_ns; /* count calls slower than this (0: do not time) */
	/* results */
	uint64_t written, refused;
	uint64_t slow_calls; /* record writes (or the flush) that took >= slow_ns */
	int attach_rc, flush_rc;
	double elapsed;
};

static void *prod_main(void *arg)
{
	struct prod *a = arg;
	struct tp_dpe w[4];
	double t0 = now_s();
	for (uint32_t k = 0; k < a->ninst; k++) {
		int rc = dpe_attach(&w[k], prof_shm_dev(a->p), a->inst[k], a->q, NULL, NULL);
		if (rc)
			a->attach_rc = rc;
	}
	if (a->attach_rc)
		return NULL;
	uint32_t chunk = a->chunk ? a->chunk : 1;
	struct rec64 r;
	for (uint64_t base = 0; base < a->n; base += chunk) {
		uint64_t end = base + chunk < a->n ? base + chunk : a->n;
		for (uint32_t k = 0; k < a->ninst; k++)
			for (uint64_t s = base; s < end; s++) {
				bool ok;
				uint64_t t = a->slow_ns ? tp_now_ns() : 0;
				if (a->use_write) {
					rec64_fill(&r, a->inst[k], s);
					ok = dpe_write(&w[k], &r);
				} else {
					ok = put_rec(&w[k], a->inst[k], s);
				}
				if (a->slow_ns && tp_now_ns() - t >= a->slow_ns)
					a->slow_calls++;
				if (ok)
					a->written++;
				else
					a->refused++;
			}
	}
	for (uint32_t k = 0; k < a->ninst; k++) {
		uint64_t t = a->slow_ns ? tp_now_ns() : 0;
		int rc = dpe_flush(&w[k]);
		if (rc)
			a->flush_rc = rc;
		if (a->slow_ns && tp_now_ns() - t >= a->slow_ns)
			a->slow_calls++;
	}
	a->elapsed = now_s() - t0;
	return NULL;
}

static void run_producers(struct prod *pr, int n)
{
	pthread_t th[MAX_PROD];
	for (int i = 0; i < n; i++)
		assert_int_equal(pthread_create(&th[i], NULL, prod_main, &pr[i]), 0);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < n; i++)
		assert_int_equal(pr[i].attach_rc, 0);
}

static int warm_one(int kind, int shards)
{
	(void)kind;
	(void)shards;
	return 1;
}

static void print_reconcile(const char *what, const struct tp_reconcile *r)
{
	for (int k = 0; k < r->kinds; k++) {
		const struct tp_reconcile_pool *rp = &r->pool[k];
		printf("  %s kind%d: total=%llu collected=%llu dropped=%llu (no_buffer=%llu "
		       "ready_full=%llu flush_failed=%llu invalid=%llu) mismatch=%llu %s\n",
		       what, k, (unsigned long long)rp->total, (unsigned long long)rp->collected,
		       (unsigned long long)rp->dropped,
		       (unsigned long long)rp->dropped_by_cause[TP_DROP_NO_BUFFER],
		       (unsigned long long)rp->dropped_by_cause[TP_DROP_READY_FULL],
		       (unsigned long long)rp->dropped_by_cause[TP_DROP_FLUSH_FAILED],
		       (unsigned long long)rp->dropped_by_cause[TP_DROP_INVALID],
		       (unsigned long long)rp->mismatch, rp->ok ? "ok" : "UNBALANCED");
	}
}

static void assert_no_host_loss(const struct tp_profiler *p, const struct tp_reconcile *r)
{
	for (int c = 0; c < TP_HOST_LOST_NCAUSES; c++) {
		assert_int_equal(r->pool[0].host_lost_by_cause[c], 0);
		assert_int_equal(atomic_load(&p->host_lost_buffers[c]), 0);
	}
	assert_int_equal(atomic_load(&p->bad_index_events), 0);
	assert_int_equal(atomic_load(&p->null_entry_events), 0);
}

/* ============================================ 1. shadow no-rollback */

/* Device-side tracking of the fields the engine stores for the writer's
 * instance, kept exact through the engine's hooks. */
struct nr_track {
	uint32_t exp_tail; /* queue_tails[q] as last stored by this device thread */
	uint32_t exp_fq_head;
	uint32_t rq_size;
};

static void nr_on_claim(struct tp_dpe *w, struct tp_buf_hdr *buf)
{
	(void)buf;
	((struct nr_track *)w->hook_ud)->exp_fq_head++;
}

static void nr_on_null(struct tp_dpe *w)
{
	((struct nr_track *)w->hook_ud)->exp_fq_head++;
}

/* Called only after a successful publish in dpe_switch_buffer. */
static void nr_on_switch(struct tp_dpe *w, struct tp_buf_hdr *buf)
{
	(void)buf;
	struct nr_track *t = w->hook_ud;
	t->exp_tail = (t->exp_tail + 1) % t->rq_size;
}

static const struct tp_dpe_hooks nr_hooks = {
	.on_pop_success = nr_on_claim,
	.on_null_free_slot = nr_on_null,
	.on_switch_complete = nr_on_switch,
};

struct nr_dev {
	struct tp_profiler *p;
	uint32_t q;        /* ready queue == writer instance */
	uint32_t direct;   /* instance whose counters are stored directly */
	double run_s;
	_Atomic bool *stop;
	/* results */
	uint64_t iters, records, direct_n, refused;
	uint64_t violations;
	char first_violation[192];
	int attach_rc;
	_Atomic bool done;
};

static void nr_violation(struct nr_dev *d, const char *field, uint64_t got, uint64_t want)
{
	if (d->violations++ == 0)
		snprintf(d->first_violation, sizeof(d->first_violation),
			 "thread %u iter %llu: %s = %llu, last written %llu", d->q,
			 (unsigned long long)d->iters, field, (unsigned long long)got,
			 (unsigned long long)want);
}

static void nr_check(struct nr_dev *d, struct tp_shm_header *h, const struct tp_dpe *w,
		     const struct nr_track *t)
{
	struct tp_buffer_state *ws = tp_shm_state(h, d->q);
	struct tp_buffer_state *ds = tp_shm_state(h, d->direct);
	uint64_t v;
	/* The direct-store instance: four counters with known values. */
	if ((v = atomic_load_explicit(&ds->total_record_count, memory_order_relaxed)) != d->direct_n)
		nr_violation(d, "direct.total_record_count", v, d->direct_n);
	if ((v = atomic_load_explicit(&ds->dropped_record_count, memory_order_relaxed)) !=
	    d->direct_n)
		nr_violation(d, "direct.dropped_record_count", v, d->direct_n);
	if ((v = atomic_load_explicit(&ds->dropped_by_cause[TP_DROP_INVALID],
				      memory_order_relaxed)) != d->direct_n)
		nr_violation(d, "direct.dropped_by_cause[INVALID]", v, d->direct_n);
	if ((v = atomic_load_explicit(&ds->current_buf_seq, memory_order_relaxed)) !=
	    (uint32_t)d->direct_n)
		nr_violation(d, "direct.current_buf_seq", v, (uint32_t)d->direct_n);
	/* The engine-written instance. */
	if ((v = atomic_load_explicit(&ws->total_record_count, memory_order_relaxed)) != w->total)
		nr_violation(d, "writer.total_record_count", v, w->total);
	if ((v = atomic_load_explicit(&ws->dropped_record_count, memory_order_relaxed)) != 0)
		nr_violation(d, "writer.dropped_record_count", v, 0);
	if ((v = atomic_load_explicit(&ws->current_buf_seq, memory_order_relaxed)) != w->seq)
		nr_violation(d, "writer.current_buf_seq", v, w->seq);
	if ((v = atomic_load_explicit(&ws->current_buf_ptr, memory_order_relaxed)) !=
	    (uint64_t)(uintptr_t)w->cur)
		nr_violation(d, "writer.current_buf_ptr", v, (uint64_t)(uintptr_t)w->cur);
	if ((v = atomic_load_explicit(&ws->free_queue.head, memory_order_relaxed)) != t->exp_fq_head)
		nr_violation(d, "writer.free_queue.head", v, t->exp_fq_head);
	if (w->cur && (v = atomic_load_explicit(&w->cur->count, memory_order_relaxed)) != w->count)
		nr_violation(d, "writer.current buffer count", v, w->count);
	if ((v = atomic_load_explicit(&h->queue_tails[d->q], memory_order_relaxed)) != t->exp_tail)
		nr_violation(d, "queue_tails[q]", v, t->exp_tail);
}

static void *nr_dev_main(void *arg)
{
	struct nr_dev *d = arg;
	struct tp_shm_header *h = prof_shm_dev(d->p);
	struct nr_track t = {.rq_size = h->ready_queue_size};
	struct tp_dpe w;
	d->attach_rc = dpe_attach(&w, h, d->q, d->q, &nr_hooks, &t);
	if (d->attach_rc) {
		atomic_store(&d->done, true);
		return NULL;
	}
	struct tp_buffer_state *ds = tp_shm_state(h, d->direct);
	struct rec64 r;
	double t_end = now_s() + d->run_s;
	while (!atomic_load_explicit(d->stop, memory_order_relaxed)) {
		nr_check(d, h, &w, &t);
		/* Real traffic: advances queue_tails, current_buf_*, fq head. */
		for (int i = 0; i < 4; i++) {
			rec64_fill(&r, d->q, d->records);
			if (dpe_write(&w, &r))
				d->records++;
			else
				d->refused++;
		}
		nr_check(d, h, &w, &t);
		/* Direct stores of device-owned counters of another instance. */
		d->direct_n++;
		atomic_store_explicit(&ds->total_record_count, d->direct_n, memory_order_relaxed);
		atomic_store_explicit(&ds->dropped_record_count, d->direct_n, memory_order_relaxed);
		atomic_store_explicit(&ds->dropped_by_cause[TP_DROP_INVALID], d->direct_n,
				      memory_order_relaxed);
		atomic_store_explicit(&ds->current_buf_seq, (uint32_t)d->direct_n,
				      memory_order_relaxed);
		nr_check(d, h, &w, &t);
		d->iters++;
		if ((d->iters & 63) == 0) {
			sched_yield();
			if (now_s() >= t_end)
				break;
		}
	}
	bool pending = w.cur && w.count;
	if (dpe_flush(&w) == 0 && pending)
		t.exp_tail = (t.exp_tail + 1) % t.rq_size;
	nr_check(d, h, &w, &t);
	atomic_store(&d->done, true);
	return NULL;
}

static void no_rollback(enum transport tr)
{
	static const struct tp_module m = {
		.name = "STRESS-NR",
		.kinds = 1,
		.ready_queue_size = 8,
		.slot_count = 2,
		.max_collector_threads = 2,
		.idle_timeout_sec = 30,
		.record_size = {64},
		.records_per_buffer = {16},
		.recycled_warm_target = warm_one,
	};
	enum { NDEV = 2 };
	struct cctx *c = cctx_new();
	assert_non_null(c);
	c->m = &m;
	c->n_inst = 2 * NDEV;
	c->strict = true;
	struct tp_profiler_config cfg = {
		.module = &m,
		.ops = ops_for(tr),
		.num_threads = NDEV,
		.num_instances = 2 * NDEV,
		.on_buffer_collected = on_collected,
		.ud = c,
		.ready_push_wait_ms = 0, /* the module idle timeout */
	};
	struct tp_profiler *p = prof_open(&cfg);
	assert_non_null(p);
	assert_int_equal(prof_start(p), 0);
	struct tp_shm_header *hdev = prof_shm_dev(p);
	uint32_t tick0 = atomic_load(&hdev->host_tick);

	_Atomic bool stop = false;
	struct nr_dev d[NDEV];
	pthread_t th[NDEV];
	for (int i = 0; i < NDEV; i++) {
		d[i] = (struct nr_dev){.p = p, .q = (uint32_t)i, .direct = (uint32_t)(NDEV + i),
				       .run_s = TP_TEST_SANITIZED ? 1.5 : 0.8, .stop = &stop};
		assert_int_equal(pthread_create(&th[i], NULL, nr_dev_main, &d[i]), 0);
	}
	/* The test thread is one more host-side free-queue producer (the
	 * per-instance flag serialises it with the drains and the replenish
	 * thread); it only pops recycled lanes, never allocates. */
	uint64_t topped = 0, rounds = 0;
	double t_end = now_s() + (TP_TEST_SANITIZED ? 1.5 : 0.8) + 5.0;
	for (;;) {
		bool alive = false;
		for (int i = 0; i < NDEV; i++)
			alive |= !atomic_load(&d[i].done);
		if (!alive || now_s() > t_end)
			break;
		for (uint32_t i = 0; i < NDEV; i++)
			topped += prof_top_up_free_queue(p, i, (int)(i % (uint32_t)p->shard_count));
		rounds++;
		sleep_us(20);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < NDEV; i++)
		pthread_join(th[i], NULL);
	uint32_t tick1 = atomic_load(&hdev->host_tick);
	prof_stop(p);

	struct tp_reconcile r;
	int rc = prof_reconcile(p, &r);
	print_reconcile(tname(tr), &r);
	uint64_t recs = 0, direct = 0, iters = 0, viol = 0;
	for (int i = 0; i < NDEV; i++) {
		assert_int_equal(d[i].attach_rc, 0);
		recs += d[i].records;
		direct += d[i].direct_n;
		iters += d[i].iters;
		viol += d[i].violations;
		if (d[i].violations)
			printf("  rollback: %s (%llu violations)\n", d[i].first_violation,
			       (unsigned long long)d[i].violations);
		assert_int_equal(d[i].refused, 0);
	}
	printf("no_rollback[%s]: %llu device iterations, %llu records, %llu buffers collected, "
	       "host ticks %u, test top-ups %llu in %llu rounds, freezes %llu\n",
	       tname(tr), (unsigned long long)iters, (unsigned long long)recs,
	       (unsigned long long)atomic_load(&p->buffers_collected), tick1 - tick0,
	       (unsigned long long)topped, (unsigned long long)rounds,
	       (unsigned long long)atomic_load(&p->freeze_opened));
	assert_int_equal(viol, 0);
	assert_int_equal(atomic_load(&c->errors), 0);
	/* The host really ran concurrently with the device stores. */
	assert_true(tick1 - tick0 >= 100);
	assert_true(atomic_load(&p->buffers_collected) >= 50);
	assert_true(iters >= 1000);
	/* Reconcile: the direct counters read back exactly (total == dropped),
	 * the written records all arrived. */
	assert_int_equal(rc, 0);
	assert_true(r.ok);
	assert_int_equal(r.pool[0].total, recs + direct);
	assert_int_equal(r.pool[0].dropped, direct);
	assert_int_equal(r.pool[0].dropped_by_cause[TP_DROP_INVALID], direct);
	assert_int_equal(r.pool[0].collected, recs);
	for (int i = 0; i < NDEV; i++) {
		assert_int_equal(c->chk[i].collected, d[i].records);
		assert_int_equal(c->chk[i].next_seq, d[i].records);
		assert_int_equal(c->chk[NDEV + i].collected, 0);
	}
	assert_no_host_loss(p, &r);
	prof_close(p);
	free(c);
}

static void test_no_rollback_svm(void **state)
{
	(void)state;
	no_rollback(SVM);
}

static void test_no_rollback_shadow(void **state)
{
	(void)state;
	no_rollback(SHADOW);
}

/* ====================================== 2. one buffer per instance */

static void one_buffer(enum transport tr)
{
	static const struct tp_module m = {
		.name = "STRESS-1BUF",
		.kinds = 1,
		.ready_queue_size = 8,
		.slot_count = 1,
		.max_collector_threads = 4,
		.idle_timeout_sec = 30,
		.record_size = {64},
		.records_per_buffer = {128},
		/* no recycled_warm_target: warm target 0 */
	};
	enum { NPROD = 4 };
	const uint64_t n = 200000;
	struct cctx *c = cctx_new();
	assert_non_null(c);
	c->m = &m;
	c->n_inst = NPROD;
	c->strict = true;
	struct tp_profiler_config cfg = {
		.module = &m,
		.ops = ops_for(tr),
		.num_threads = NPROD,
		.num_instances = NPROD,
		.buffers_per_instance = 1,
		.on_buffer_collected = on_collected,
		.ud = c,
		.ready_push_wait_ms = 0, /* the module idle timeout */
	};
	/* Cap the pool at exactly what prof_open seeds (region + one buffer
	 * per instance): the freeze release may not add buffers, so the only
	 * buffer of an instance must really travel the whole recycle loop. */
	struct tp_profiler *p = prof_open(&cfg);
	assert_non_null(p);
	cfg.pool_cap_bytes = atomic_load(&p->bp.pool_bytes);
	prof_close(p);
	p = prof_open(&cfg);
	assert_non_null(p);
	assert_int_equal(atomic_load(&p->bp.pool_bytes), cfg.pool_cap_bytes);
	assert_int_equal(prof_start(p), 0);
	struct prod pr[NPROD];
	for (int i = 0; i < NPROD; i++)
		pr[i] = (struct prod){.p = p, .q = (uint32_t)i, .ninst = 1, .inst = {(uint32_t)i},
				      .n = n, .chunk = 1024, .use_write = true};
	double t0 = now_s();
	run_producers(pr, NPROD);
	double dt = now_s() - t0;
	prof_stop(p);
	struct tp_reconcile r;
	int rc = prof_reconcile(p, &r);
	print_reconcile(tname(tr), &r);
	printf("one_buffer[%s]: %d x %llu records in %.3f s, %llu buffers, freezes opened %llu "
	       "released %llu, pool allocations %llu (refused %llu)\n",
	       tname(tr), NPROD, (unsigned long long)n, dt,
	       (unsigned long long)atomic_load(&p->buffers_collected),
	       (unsigned long long)atomic_load(&p->freeze_opened),
	       (unsigned long long)atomic_load(&p->freeze_released),
	       (unsigned long long)atomic_load(&p->bp.n_allocs),
	       (unsigned long long)atomic_load(&p->bp.alloc_refused));
	assert_int_equal(atomic_load(&c->errors), 0);
	for (int i = 0; i < NPROD; i++) {
		assert_int_equal(pr[i].written, n);
		assert_int_equal(pr[i].refused, 0);
		assert_int_equal(pr[i].flush_rc, 0);
		assert_int_equal(c->chk[i].collected, n);
		assert_int_equal(c->chk[i].next_seq, n);
		assert_int_equal(c->chk[i].buffers, (n + 127) / 128);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(r.pool[0].total, NPROD * n);
	assert_int_equal(r.pool[0].collected, NPROD * n);
	assert_int_equal(r.pool[0].dropped, 0);
	assert_int_equal(r.pool[0].unflushed, 0);
	assert_no_host_loss(p, &r);
	/* One buffer per instance really was the whole pool: the region plus
	 * one seed block per instance, nothing allocated at run time. */
	assert_int_equal(atomic_load(&p->bp.n_allocs), 1 + NPROD);
	/* Every switch had to wait for the host: the pop gate engaged. */
	assert_true(atomic_load(&p->freeze_opened) > 0);
	prof_close(p);
	free(c);
}

static void test_one_buffer_svm(void **state)
{
	(void)state;
	one_buffer(SVM);
}

static void test_one_buffer_shadow(void **state)
{
	(void)state;
	one_buffer(SHADOW);
}

/* ================================ 3. 4 x 10M records, slow collector */

static void throughput(enum transport tr)
{
	static const struct tp_module m = {
		.name = "STRESS-TPUT",
		.kinds = 1,
		.ready_queue_size = 16,
		.slot_count = 4,
		.max_collector_threads = 4,
		.idle_timeout_sec = 30,
		.record_size = {64},
		.records_per_buffer = {512},
		.recycled_warm_target = warm_one,
	};
	enum { NPROD = 4 };
	const uint64_t n = TP_TEST_SANITIZED ? 500000 : 10000000;
	struct cctx *c = cctx_new();
	assert_non_null(c);
	c->m = &m;
	c->n_inst = NPROD;
	c->strict = true;
	c->spin_ns = 2000;     /* ~2 us per buffer */
	c->sleep_every = 2000; /* and a 1 ms nap now and then */
	c->sleep_us = 1000;
	struct tp_profiler_config cfg = {
		.module = &m,
		.ops = ops_for(tr),
		.num_threads = NPROD,
		.num_instances = NPROD,
		.on_buffer_collected = on_collected,
		.ud = c,
		.ready_push_wait_ms = 0, /* the module idle timeout */
	};
	struct tp_profiler *p = prof_open(&cfg);
	assert_non_null(p);
	assert_int_equal(prof_start(p), 0);
	struct prod pr[NPROD];
	for (int i = 0; i < NPROD; i++)
		pr[i] = (struct prod){.p = p, .q = (uint32_t)i, .ninst = 1, .inst = {(uint32_t)i},
				      .n = n, .chunk = 1u << 20, .use_write = true};
	double t0 = now_s();
	run_producers(pr, NPROD);
	prof_stop(p);
	double dt = now_s() - t0;
	struct tp_reconcile r;
	int rc = prof_reconcile(p, &r);
	print_reconcile(tname(tr), &r);
	uint64_t total = NPROD * n;
	printf("throughput[%s]: %d x %llu 64-byte records in %.3f s = %.2f M records/s "
	       "(%.0f MB/s), %llu buffers, freezes opened %llu released %llu, allocations %llu\n",
	       tname(tr), NPROD, (unsigned long long)n, dt, (double)total / dt / 1e6,
	       (double)total * 64 / dt / 1e6,
	       (unsigned long long)atomic_load(&p->buffers_collected),
	       (unsigned long long)atomic_load(&p->freeze_opened),
	       (unsigned long long)atomic_load(&p->freeze_released),
	       (unsigned long long)atomic_load(&p->bp.n_allocs));
	assert_int_equal(atomic_load(&c->errors), 0);
	for (int i = 0; i < NPROD; i++) {
		assert_int_equal(pr[i].written, n);
		assert_int_equal(pr[i].refused, 0);
		assert_int_equal(pr[i].flush_rc, 0);
		assert_int_equal(c->chk[i].collected, n);
		assert_int_equal(c->chk[i].next_seq, n);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(r.pool[0].total, total);
	assert_int_equal(r.pool[0].collected, total);
	assert_int_equal(r.pool[0].dropped, 0);
	assert_int_equal(r.pool[0].unflushed, 0);
	assert_no_host_loss(p, &r);
	/* The slow collector really pushed back on the device. */
	assert_true(atomic_load(&p->freeze_opened) > 0);
	if (!TP_TEST_SANITIZED)
		assert_true(dt < 45.0);
	prof_close(p);
	free(c);
}

static void test_throughput_svm(void **state)
{
	(void)state;
	throughput(SVM);
}

static void test_throughput_shadow(void **state)
{
	(void)state;
	throughput(SHADOW);
}

/* ================================= 4. host stops draining, 50 ms backstop */

/* Variant NO_BUFFER: free queues run dry (2 buffers each, no warm pool).
 * Variant READY_FULL: ready queues (3 usable entries) fill before the
 * 4 free buffers are used up. */
/* While the producers wait for the stalled host, a runtime watchdog (a
 * 20 ms budget, checked every 2 ms) sees its budget restarted: every gate
 * wait opens a hold (base/watchdog.h). Counts the restarts. */
struct hold_watch {
	_Atomic bool stop;
	uint32_t restarts;
};

static void *hold_watch_main(void *arg)
{
	struct hold_watch *hw = arg;
	struct tp_watchdog w;
	tp_watchdog_start(&w, 20 * 1000000ull, tp_now_ns());
	while (!atomic_load(&hw->stop)) {
		(void)tp_watchdog_expired(&w, tp_now_ns());
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	hw->restarts = w.stops;
	return NULL;
}

static void host_stalls(enum transport tr, bool ready_full)
{
	static const struct tp_module m_nobuf = {
		.name = "STRESS-STALL-FQ",
		.kinds = 1,
		.ready_queue_size = 16,
		.slot_count = 2,
		.max_collector_threads = 4,
		.idle_timeout_sec = 30,
		.record_size = {64},
		.records_per_buffer = {256},
	};
	static const struct tp_module m_rqfull = {
		.name = "STRESS-STALL-RQ",
		.kinds = 1,
		.ready_queue_size = 4,
		.slot_count = 4,
		.max_collector_threads = 4,
		.idle_timeout_sec = 30,
		.record_size = {64},
		.records_per_buffer = {256},
	};
	const struct tp_module *m = ready_full ? &m_rqfull : &m_nobuf;
	enum { NPROD = 4 };
	const uint64_t n = 200000;
	struct cctx *c = cctx_new();
	assert_non_null(c);
	c->m = m;
	c->n_inst = NPROD;
	c->strict = false; /* drops leave gaps; order must still hold */
	struct tp_profiler_config cfg = {
		.module = m,
		.ops = ops_for(tr),
		.num_threads = NPROD,
		.num_instances = NPROD,
		.backstop_cycles = tp_sys_cnt_freq() / 20, /* 50 ms */
		.on_buffer_collected = on_collected,
		.ud = c,
		.ready_push_wait_ms = 0, /* the module idle timeout */
	};
	struct tp_profiler *p = prof_open(&cfg);
	assert_non_null(p);
	assert_int_equal(prof_start(p), 0);
	/* The host "hangs": drains stop popping (the replenish thread keeps
	 * ticking, so only the device's fail-fast latches bound the run). */
	atomic_store(&p->test_pause_drain, true);
	struct prod pr[NPROD];
	for (int i = 0; i < NPROD; i++)
		pr[i] = (struct prod){.p = p, .q = (uint32_t)i, .ninst = 1, .inst = {(uint32_t)i},
				      .n = n, .chunk = 1u << 20, .use_write = true,
				      .slow_ns = 40000000 /* 40 ms: a backstop wait */};
	struct hold_watch hw = { 0 };
	pthread_t hwt;
	assert_int_equal(pthread_create(&hwt, NULL, hold_watch_main, &hw), 0);
	double t0 = now_s();
	run_producers(pr, NPROD);
	double dt = now_s() - t0;
	atomic_store(&hw.stop, true);
	pthread_join(hwt, NULL);
	uint64_t slow = 0;
	for (int i = 0; i < NPROD; i++)
		slow += pr[i].slow_calls;
	uint64_t buffers_before_stop = atomic_load(&p->buffers_collected);
	prof_stop(p); /* the drains' final pass collects what was published */
	struct tp_reconcile r;
	int rc = prof_reconcile(p, &r);
	print_reconcile(tname(tr), &r);
	const struct tp_reconcile_pool *rp = &r.pool[0];
	printf("host_stalls[%s, %s]: producers done in %.3f s, %llu writes waited >= 40 ms, "
	       "collected %llu, dropped %llu of %llu, freezes opened %llu\n",
	       tname(tr), ready_full ? "ready-full" : "no-buffer", dt, (unsigned long long)slow,
	       (unsigned long long)rp->collected, (unsigned long long)rp->dropped,
	       (unsigned long long)rp->total, (unsigned long long)atomic_load(&p->freeze_opened));
	assert_int_equal(atomic_load(&c->errors), 0);
	/* Bounded: a 50 ms wait per buffer would take 780 buffers x 50 ms per
	 * producer (about 3,000 slow writes in all).  With the fail-fast
	 * latches a producer waits out the backstop about once per gate (plus
	 * at most one push-barrier park per published buffer): 4-8 slow
	 * writes per run on a quiet machine. A write also takes 40 ms when
	 * its thread waits that long for a CPU (29-33 were seen at a load
	 * average of 13-16 under TSan), so the bound leaves room for that and
	 * still fails by two orders of magnitude without the latches. */
	assert_true(slow <= NPROD * 50);
	/* The producers' waits (40 ms and more each) held the watchdog. */
	assert_true(hw.restarts > 0);
	/* Every hold was closed: a fresh budget runs out as usual. */
	struct tp_watchdog fresh;
	uint64_t t = tp_now_ns();
	tp_watchdog_start(&fresh, 1000000, t);
	assert_false(tp_watchdog_expired(&fresh, t + 2000000));
	assert_true(tp_watchdog_expired(&fresh, t + 2000000 + TP_WATCHDOG_CONFIRM_NS));
	assert_true(dt < (TP_TEST_SANITIZED ? 60.0 : 10.0));
	assert_int_equal(buffers_before_stop, 0);
	assert_int_equal(rc, 0);
	assert_true(rp->ok);
	assert_int_equal(rp->total, NPROD * n);
	assert_int_equal(rp->collected + rp->dropped, NPROD * n);
	assert_true(rp->dropped > 0);
	assert_true(rp->collected > 0);
	uint64_t by_cause = 0;
	for (int k = 0; k < TP_DROP_NCAUSES; k++)
		by_cause += rp->dropped_by_cause[k];
	assert_int_equal(by_cause, rp->dropped);
	assert_int_equal(rp->dropped_by_cause[TP_DROP_INVALID], 0);
	assert_no_host_loss(p, &r);
	uint64_t coll = 0, written = 0;
	for (int i = 0; i < NPROD; i++) {
		coll += c->chk[i].collected;
		written += pr[i].written;
		assert_int_equal(pr[i].written + pr[i].refused, n);
	}
	assert_int_equal(coll, rp->collected);
	if (ready_full) {
		/* 3 buffers per queue fit the ready queue; later full buffers
		 * and the final flush could not be published. */
		assert_true(rp->dropped_by_cause[TP_DROP_READY_FULL] > 0);
		assert_int_equal(rp->collected, NPROD * 3 * 256);
		assert_int_equal(rp->dropped_by_cause[TP_DROP_NO_BUFFER], 0);
		for (int i = 0; i < NPROD; i++)
			assert_int_equal(pr[i].refused, 0);
	} else {
		/* The 2 seeded buffers per instance were published, then no
		 * replacement came: per-record NO_BUFFER drops. */
		assert_true(rp->dropped_by_cause[TP_DROP_NO_BUFFER] > 0);
		assert_int_equal(rp->collected, NPROD * 2 * 256);
		assert_int_equal(rp->dropped_by_cause[TP_DROP_NO_BUFFER], NPROD * n - written);
	}
	prof_close(p);
	free(c);
}

static void test_host_stalls_no_buffer_svm(void **state)
{
	(void)state;
	host_stalls(SVM, false);
}

static void test_host_stalls_no_buffer_shadow(void **state)
{
	(void)state;
	host_stalls(SHADOW, false);
}

static void test_host_stalls_ready_full_svm(void **state)
{
	(void)state;
	host_stalls(SVM, true);
}

static void test_host_stalls_ready_full_shadow(void **state)
{
	(void)state;
	host_stalls(SHADOW, true);
}

/* ========================================================= 5. two kinds */

static int warm_two_kinds(int kind, int shards)
{
	(void)shards;
	return kind == 0 ? 1 : 2;
}

static int batch_two_kinds(int kind)
{
	return kind == 0 ? 2 : 1;
}

static void two_kinds(enum transport tr)
{
	static const struct tp_module m = {
		.name = "STRESS-2K",
		.kind_names = {"small", "large"},
		.kinds = 2,
		.ready_queue_size = 16,
		.slot_count = 4,
		.max_collector_threads = 2,
		.idle_timeout_sec = 30,
		.record_size = {32, 96},
		.records_per_buffer = {256, 100},
		.batch_size = batch_two_kinds,
		.recycled_warm_target = warm_two_kinds,
	};
	enum { NDEV = 4, NINST = 2 * NDEV };
	/* Instance 2t is kind 0, 2t+1 kind 1; device thread t drives both on
	 * ready queue t; 4 queues fold onto 2 collector shards. */
	static const uint8_t kinds[NINST] = {0, 1, 0, 1, 0, 1, 0, 1};
	const uint64_t n = TP_TEST_SANITIZED ? 60000 : 600000; /* per instance */
	struct cctx *c = cctx_new();
	assert_non_null(c);
	c->m = &m;
	c->n_inst = NINST;
	c->inst_kind = kinds;
	c->strict = true;
	c->spin_ns = 500;
	struct tp_profiler_config cfg = {
		.module = &m,
		.ops = ops_for(tr),
		.num_threads = NDEV,
		.num_instances = NINST,
		.instance_kind = kinds,
		.buffers_per_instance = 2,
		.on_buffer_collected = on_collected,
		.ud = c,
		.ready_push_wait_ms = 0, /* the module idle timeout */
	};
	struct tp_profiler *p = prof_open(&cfg);
	assert_non_null(p);
	assert_int_equal(p->shard_count, 2);
	assert_int_equal(prof_start(p), 0);
	struct prod pr[NDEV];
	for (int t = 0; t < NDEV; t++)
		pr[t] = (struct prod){.p = p, .q = (uint32_t)t, .ninst = 2,
				      .inst = {(uint32_t)(2 * t), (uint32_t)(2 * t + 1)}, .n = n,
				      .chunk = 37 + (uint32_t)t * 11, .use_write = false};
	double t0 = now_s();
	run_producers(pr, NDEV);
	prof_stop(p);
	double dt = now_s() - t0;
	struct tp_reconcile r;
	int rc = prof_reconcile(p, &r);
	print_reconcile(tname(tr), &r);
	printf("two_kinds[%s]: %d instances x %llu records in %.3f s, %llu buffers, freezes %llu\n",
	       tname(tr), NINST, (unsigned long long)n, dt,
	       (unsigned long long)atomic_load(&p->buffers_collected),
	       (unsigned long long)atomic_load(&p->freeze_opened));
	assert_int_equal(atomic_load(&c->errors), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(r.kinds, 2);
	for (int k = 0; k < 2; k++) {
		assert_true(r.pool[k].ok);
		assert_int_equal(r.pool[k].total, NDEV * n);
		assert_int_equal(r.pool[k].collected, NDEV * n);
		assert_int_equal(r.pool[k].dropped, 0);
		assert_int_equal(atomic_load(&c->kind_collected[k]), NDEV * n);
	}
	for (int i = 0; i < NINST; i++) {
		assert_int_equal(c->chk[i].collected, n);
		assert_int_equal(c->chk[i].next_seq, n);
		assert_int_equal(c->chk[i].buffers, (n + m.records_per_buffer[kinds[i]] - 1) /
							    m.records_per_buffer[kinds[i]]);
	}
	for (int t = 0; t < NDEV; t++) {
		assert_int_equal(pr[t].written, 2 * n);
		assert_int_equal(pr[t].flush_rc, 0);
	}
	/* Both collector shards carried traffic. */
	assert_true(atomic_load(&c->shard_bufs[0]) > 0);
	assert_true(atomic_load(&c->shard_bufs[1]) > 0);
	assert_no_host_loss(p, &r);
	prof_close(p);
	free(c);
}

static void test_two_kinds_svm(void **state)
{
	(void)state;
	two_kinds(SVM);
}

static void test_two_kinds_shadow(void **state)
{
	(void)state;
	two_kinds(SHADOW);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* e.g. "*one_buffer*" */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_rollback_svm),
		cmocka_unit_test(test_no_rollback_shadow),
		cmocka_unit_test(test_one_buffer_svm),
		cmocka_unit_test(test_one_buffer_shadow),
		cmocka_unit_test(test_throughput_svm),
		cmocka_unit_test(test_throughput_shadow),
		cmocka_unit_test(test_host_stalls_no_buffer_svm),
		cmocka_unit_test(test_host_stalls_no_buffer_shadow),
		cmocka_unit_test(test_host_stalls_ready_full_svm),
		cmocka_unit_test(test_host_stalls_ready_full_shadow),
		cmocka_unit_test(test_two_kinds_svm),
		cmocka_unit_test(test_two_kinds_shadow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
