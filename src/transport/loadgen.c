/*
 * loadgen.c — synthetic producers through the full transport pipeline.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "transport/dev_engine.h"
#include "transport/loadgen.h"

static int lg_batch(int kind)
{
	(void)kind;
	return 8;
}

static int lg_warm(int kind, int shards)
{
	(void)kind;
	(void)shards;
	return 16;
}

struct lg_shared {
	const struct tp_loadgen_config *cfg;
	struct tp_profiler *p;
	uint64_t *next_seq;      /* per instance; written by its one collector shard */
	uint64_t *out_of_order;  /* per instance */
	_Atomic uint64_t written;
	_Atomic int ready;
	_Atomic int go;
	/* Producers that finished, under `mu`, so the main thread wakes as soon
	 * as the last one ends (elapsed times are not rounded to the progress
	 * tick). */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int finished;
};

struct lg_producer {
	struct lg_shared *s;
	int index;
	uint64_t ns;
	uint64_t cpu_ns;
	int rc;
};

static bool lg_collect(void *ud, const struct tp_ready_info *info, int shard)
{
	(void)shard;
	struct lg_shared *s = ud;
	const struct tp_loadgen_record *r = info->records;
	uint64_t expect = s->next_seq[info->instance];
	for (uint32_t i = 0; i < info->count; i++) {
		if (r[i].seq != expect || r[i].instance != info->instance)
			s->out_of_order[info->instance]++;
		expect = r[i].seq + 1;
	}
	s->next_seq[info->instance] = expect;
	if (s->cfg->collector_delay_ns) {
		uint64_t until = tp_now_ns() + s->cfg->collector_delay_ns;
		while (tp_now_ns() < until)
			;
	}
	return true;
}

static void *lg_producer_main(void *arg)
{
	struct lg_producer *pr = arg;
	struct lg_shared *s = pr->s;
	const uint32_t per = s->cfg->instances_per_producer;
	struct tp_dpe w[TP_MAX_AICPU_THREADS * 4];
	uint64_t seq[TP_MAX_AICPU_THREADS * 4] = {0};
	for (uint32_t i = 0; i < per; i++) {
		pr->rc = dpe_attach(&w[i], prof_shm_dev(s->p), (uint32_t)pr->index * per + i,
				    (uint32_t)pr->index, NULL, NULL);
		if (pr->rc)
			break;
	}
	if (pr->rc) {
		/* Count as ready and finished so the main thread never waits on us.
		 * release: as below (pairs with the main thread's acquire). */
		atomic_fetch_add_explicit(&s->ready, 1, memory_order_release);
		pthread_mutex_lock(&s->mu);
		s->finished++;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		return NULL;
	}
	/* release: pairs with the main thread's acquire load of ready (the
	 * increments form one release sequence): our attach (pr->rc, the
	 * writer state in the region) happens before it starts the clock. */
	atomic_fetch_add_explicit(&s->ready, 1, memory_order_release);
	/* acquire: start together once every producer is attached. */
	while (!atomic_load_explicit(&s->go, memory_order_acquire))
		;
	const uint64_t n = s->cfg->records_per_producer;
	/* The wall span encloses the CPU-time span, so that the CPU time
	 * (which includes its own clock reads) cannot exceed the wall. */
	struct timespec c0, c1;
	uint64_t t0 = tp_now_ns();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	uint32_t k = 0;
	for (uint64_t j = 0; j < n; j++) {
		struct tp_dpe *wi = &w[k];
		struct tp_loadgen_record *r = dpe_reserve(wi);
		if (r) {
			r->seq = seq[k];
			r->instance = wi->instance;
			r->producer = (uint32_t)pr->index;
			r->timestamp = tp_sys_cnt();
			dpe_commit(wi);
		}
		seq[k]++;
		if (++k == per)
			k = 0;
		if ((j & 0xffff) == 0xffff)
			atomic_fetch_add_explicit(&s->written, 0x10000, memory_order_relaxed);
	}
	for (uint32_t i = 0; i < per; i++)
		dpe_flush(&w[i]);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	pr->ns = tp_now_ns() - t0;
	pr->cpu_ns = (uint64_t)(c1.tv_sec - c0.tv_sec) * 1000000000u + (uint64_t)c1.tv_nsec -
		     (uint64_t)c0.tv_nsec;
	pthread_mutex_lock(&s->mu);
	s->finished++;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int tp_loadgen_run(const struct tp_loadgen_config *cfg_in, struct tp_loadgen_result *out)
{
	struct tp_loadgen_config cfg = *cfg_in;
	memset(out, 0, sizeof(*out));
	if (cfg.producers < 1 || cfg.producers > TP_MAX_AICPU_THREADS)
		return tp_set_error(-EINVAL, "transport-demo: producers must be in [1, %d], got %d",
				    TP_MAX_AICPU_THREADS, cfg.producers);
	if (!cfg.instances_per_producer)
		cfg.instances_per_producer = 1;
	if (cfg.instances_per_producer > 4)
		return tp_set_error(-EINVAL, "transport-demo: at most 4 instances per producer, got %u",
				    cfg.instances_per_producer);
	if (!cfg.records_per_buffer)
		cfg.records_per_buffer = 512;

	static struct tp_module mod; /* per run; the demo runs one load at a time */
	mod = (struct tp_module){
		.name = "LoadGen",
		.kind_names = {"records"},
		.kinds = 1,
		.ready_queue_size = 64,
		.slot_count = 8,
		.host_pool_queue_size = 1024,
		.max_collector_threads = 4,
		.idle_timeout_sec = 30,
		.record_size = {sizeof(struct tp_loadgen_record)},
		.records_per_buffer = {cfg.records_per_buffer},
		.batch_size = lg_batch,
		.recycled_warm_target = lg_warm,
	};
	uint32_t ninst = (uint32_t)cfg.producers * cfg.instances_per_producer;
	struct lg_shared s = {.cfg = &cfg};
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	s.next_seq = calloc(ninst, sizeof(uint64_t));
	s.out_of_order = calloc(ninst, sizeof(uint64_t));
	struct lg_producer *prs = calloc((size_t)cfg.producers, sizeof(*prs));
	pthread_t *th = calloc((size_t)cfg.producers, sizeof(*th));
	if (!s.next_seq || !s.out_of_order || !prs || !th) {
		free(s.next_seq);
		free(s.out_of_order);
		free(prs);
		free(th);
		return tp_set_error(-ENOMEM, "transport-demo: out of memory");
	}
	struct tp_profiler_config pc = {
		.module = &mod,
		.ops = cfg.shadow ? tp_memops_sim_shadow() : tp_memops_sim_svm(),
		.num_threads = (uint32_t)cfg.producers,
		.num_instances = ninst,
		.buffers_per_instance = 8,
		.backstop_cycles = cfg.backstop_cycles,
		.ready_push_wait_ms = 0, /* the module idle timeout */
		.on_buffer_collected = lg_collect,
		.ud = &s,
	};
	int rc = 0;
	s.p = prof_open(&pc);
	if (!s.p) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = prof_start(s.p)) != 0)
		goto out_close;
	int started = 0;
	char start_err[256] = "";
	for (; started < cfg.producers; started++) {
		prs[started] = (struct lg_producer){.s = &s, .index = started};
		int err = pthread_create(&th[started], NULL, lg_producer_main, &prs[started]);
		if (err != 0) {
			/* The producers already started still run and are
			 * joined below; the error stays the one reported. */
			rc = -err;
			snprintf(start_err, sizeof(start_err),
				 "LoadGen: cannot start producer thread %d of %d: %s%s",
				 started + 1, cfg.producers, strerror(err),
				 tp_thread_limit_note(err));
			break;
		}
	}
	/* acquire: pairs with each producer's release increment of ready;
	 * every started producer has attached (or failed to) by now. */
	while (atomic_load_explicit(&s.ready, memory_order_acquire) < started)
		sched_yield();
	uint64_t t0 = tp_now_ns();
	/* release: producers acquire it before their first record. */
	atomic_store_explicit(&s.go, 1, memory_order_release);
	/* Wait for the producers, reporting progress every 100 ms. */
	pthread_mutex_lock(&s.mu);
	while (s.finished < started) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += 100 * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&s.cv, &s.mu, &dl) != 0 && cfg.progress)
			cfg.progress(cfg.progress_ud,
				     atomic_load_explicit(&s.written, memory_order_relaxed),
				     cfg.records_per_producer * (uint64_t)cfg.producers);
	}
	pthread_mutex_unlock(&s.mu);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	prof_stop(s.p);
	uint64_t t1 = tp_now_ns();
	struct tp_reconcile r;
	out->reconcile_ok = prof_reconcile(s.p, &r) == 0;
	out->rec = r.pool[0];
	out->total = r.pool[0].total;
	out->collected = r.pool[0].collected;
	out->dropped = r.pool[0].dropped;
	out->elapsed_s = (double)(t1 - t0) / 1e9;
	out->records_per_s = out->elapsed_s > 0 ? (double)out->collected / out->elapsed_s : 0;
	/* relaxed: statistics of the host threads, joined by prof_stop. */
	out->freeze_opened = atomic_load_explicit(&s.p->freeze_opened, memory_order_relaxed);
	out->buffers = atomic_load_explicit(&s.p->buffers_collected, memory_order_relaxed);
	out->instances = ninst;
	double ns = 0, cpu_ns = 0;
	for (int i = 0; i < started; i++) {
		if (prs[i].rc && !rc)
			rc = tp_set_error(prs[i].rc, "LoadGen: producer %d could not attach: %s", i,
					  strerror(-prs[i].rc));
		ns += (double)prs[i].ns;
		cpu_ns += (double)prs[i].cpu_ns;
	}
	if (started && cfg.records_per_producer) {
		out->producer_ns_per_record = ns / started / (double)cfg.records_per_producer;
		out->producer_cpu_ns_per_record = cpu_ns / started / (double)cfg.records_per_producer;
	}
	out->per_instance = calloc(ninst, sizeof(uint64_t));
	for (uint32_t i = 0; i < ninst; i++) {
		out->out_of_order += s.out_of_order[i];
		if (out->per_instance)
			/* relaxed: as above, after prof_stop. */
			out->per_instance[i] =
				atomic_load_explicit(&s.p->inst_collected[i], memory_order_relaxed);
	}
	if (start_err[0])
		tp_set_error(rc, "%s", start_err);
out_close:
	prof_close(s.p);
out:
	pthread_mutex_destroy(&s.mu);
	pthread_cond_destroy(&s.cv);
	free(s.next_seq);
	free(s.out_of_order);
	free(prs);
	free(th);
	return rc;
}
