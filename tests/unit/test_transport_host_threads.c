/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the profiler's host-thread sizing and idle policy
 * (transport/profiler.h config fields max_shards and idle_sleep_max_us;
 * docs/transport.md hardening item 12): the shard cap, the busy-poll
 * window by CPU count, exact delivery through one drain that sleeps up
 * to 1 ms between buffers, and the kick that wakes the replenish thread
 * when a recycled lane runs dry.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "transport/dev_engine.h"
#include "transport/profiler.h"

#define RS 16u  /* record bytes */
#define CAP 8u  /* records per buffer */
#define NQ 4u   /* AICPU threads = ready queues = instances */

static const struct tp_module mod = {
	.name = "HOSTT", .kinds = 1, .ready_queue_size = 8, .slot_count = 4,
	.max_collector_threads = 4, .idle_timeout_sec = 2, .record_size = {RS},
	.records_per_buffer = {CAP},
};

/* Records delivered per instance, and the sum of their first bytes. */
struct sink {
	pthread_mutex_t mu;
	uint64_t n[NQ];
	uint64_t sum[NQ];
};

static bool on_collected(void *ud, const struct tp_ready_info *info, int shard)
{
	(void)shard;
	struct sink *s = ud;
	pthread_mutex_lock(&s->mu);
	for (uint32_t i = 0; i < info->count; i++)
		s->sum[info->instance] += ((const uint8_t *)info->records)[(size_t)i * RS];
	s->n[info->instance] += info->count;
	pthread_mutex_unlock(&s->mu);
	return true;
}

static struct tp_profiler *open_with(uint32_t max_shards, uint32_t sleep_max, struct sink *s)
{
	struct tp_profiler_config cfg = {
		.module = &mod,
		.ops = tp_memops_sim_svm(),
		.num_threads = NQ,
		.num_instances = NQ,
		.max_shards = max_shards,
		.idle_sleep_max_us = sleep_max,
		.on_buffer_collected = on_collected,
		.ud = s,
	};
	struct tp_profiler *p = prof_open(&cfg);
	assert_non_null(p);
	return p;
}

static void test_max_shards_caps_the_module(void **state)
{
	(void)state;
	const uint32_t cap[] = {0, 1, 2, 3, 4, 8};
	const int want[] = {4, 1, 2, 3, 4, 4};
	for (size_t i = 0; i < sizeof(cap) / sizeof(cap[0]); i++) {
		struct tp_profiler *p = open_with(cap[i], 0, NULL);
		assert_int_equal(p->shard_count, want[i]);
		assert_int_equal(p->bp.shard_count, want[i]);
		prof_close(p);
	}
}

static void test_busy_poll_only_with_spare_cpus(void **state)
{
	(void)state;
	struct tp_profiler *p = open_with(0, 0, NULL);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	assert_int_equal(p->busy_poll_scans, ncpu >= 4 ? 64u : 0u);
	prof_close(p);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* One drain for four queues, sleeping up to 1 ms: buffers published in
 * bursts with idle gaps (so the sleep grows to its bound) all arrive,
 * byte for byte, and reconcile balances with nothing dropped. */
static void test_one_slow_drain_delivers_everything(void **state)
{
	(void)state;
	struct sink s = {.mu = PTHREAD_MUTEX_INITIALIZER};
	struct tp_profiler *p = open_with(1, 1000, &s);
	assert_int_equal(p->shard_count, 1);
	assert_int_equal(prof_start(p), 0);
	struct tp_dpe w[NQ];
	for (uint32_t q = 0; q < NQ; q++)
		assert_int_equal(dpe_attach(&w[q], prof_shm_dev(p), q, q, NULL, NULL), 0);
	uint64_t sum[NQ] = {0};
	const uint32_t per_burst = 3 * CAP + 5, bursts = 6;
	uint8_t r[RS];
	for (uint32_t b = 0; b < bursts; b++) {
		for (uint32_t q = 0; q < NQ; q++)
			for (uint32_t i = 0; i < per_burst; i++) {
				memset(r, 0, sizeof(r));
				r[0] = (uint8_t)(q * 31u + b * 7u + i);
				sum[q] += r[0];
				assert_true(dpe_write(&w[q], r));
			}
		sleep_ms(b % 2 ? 5 : 1); /* idle gaps: the drain's sleep grows */
	}
	for (uint32_t q = 0; q < NQ; q++)
		assert_int_equal(dpe_flush(&w[q]), 0);
	prof_stop(p);
	struct tp_reconcile rec;
	assert_int_equal(prof_reconcile(p, &rec), 0);
	assert_true(rec.ok);
	assert_int_equal(rec.pool[0].total, (uint64_t)NQ * per_burst * bursts);
	assert_int_equal(rec.pool[0].collected, rec.pool[0].total);
	assert_int_equal(rec.pool[0].dropped, 0);
	for (uint32_t q = 0; q < NQ; q++) {
		assert_int_equal(s.n[q], (uint64_t)per_burst * bursts);
		assert_int_equal(s.sum[q], sum[q]);
	}
	prof_close(p);
}

/* Every buffer starts in a free queue and the module keeps no warm
 * reserve, so the drain's first top-up (made before it hands the buffer
 * to the collector) finds the recycled lane dry: it must wake the
 * replenish thread (a kick) to move the buffers the collector returns
 * back into the lane, rather than wait out its sleep.  The gate's grace
 * is 4 s, so no freeze refills the queues behind the drain's back.
 * Writing eight buffers' worth per instance needs every buffer twice; all
 * records arrive, none dropped. */
static void test_dry_lane_kicks_the_replenish_thread(void **state)
{
	(void)state;
	static const struct tp_module dry = {
		.name = "HOSTDRY", .kinds = 1, .ready_queue_size = 8, .slot_count = 4,
		.max_collector_threads = 1, .idle_timeout_sec = 2, .record_size = {RS},
		.records_per_buffer = {CAP},
	};
	struct sink s = {.mu = PTHREAD_MUTEX_INITIALIZER};
	struct tp_profiler_config cfg = {
		.module = &dry, .ops = tp_memops_sim_svm(), .num_threads = NQ,
		.num_instances = NQ, .buffers_per_instance = 4, .max_shards = 1,
		.grace_ns = 4000000000u,
		.idle_sleep_max_us = 1000, .pool_cap_bytes = UINT64_MAX,
		.on_buffer_collected = on_collected, .ud = &s,
	};
	struct tp_profiler *p = prof_open(&cfg);
	assert_non_null(p);
	assert_int_equal(prof_start(p), 0);
	struct tp_dpe w[NQ];
	for (uint32_t q = 0; q < NQ; q++)
		assert_int_equal(dpe_attach(&w[q], prof_shm_dev(p), q, q, NULL, NULL), 0);
	const uint32_t per_q = 8 * CAP;
	uint64_t sum[NQ] = {0};
	uint8_t r[RS];
	for (uint32_t i = 0; i < per_q; i++)
		for (uint32_t q = 0; q < NQ; q++) {
			memset(r, 0, sizeof(r));
			r[0] = (uint8_t)(q * 13u + i);
			sum[q] += r[0];
			assert_true(dpe_write(&w[q], r));
		}
	for (uint32_t q = 0; q < NQ; q++)
		assert_int_equal(dpe_flush(&w[q]), 0);
	/* Before prof_stop, which kicks the replenish thread too (to end its
	 * nap). relaxed: a counter; the writes above needed the refills. */
	assert_true(atomic_load_explicit(&p->repl_kicks, memory_order_relaxed) >= 1);
	prof_stop(p);
	struct tp_reconcile rec;
	assert_int_equal(prof_reconcile(p, &rec), 0);
	assert_int_equal(rec.pool[0].total, (uint64_t)NQ * per_q);
	assert_int_equal(rec.pool[0].collected, rec.pool[0].total);
	assert_int_equal(rec.pool[0].dropped, 0);
	for (uint32_t q = 0; q < NQ; q++) {
		assert_int_equal(s.n[q], per_q);
		assert_int_equal(s.sum[q], sum[q]);
	}
	prof_close(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_max_shards_caps_the_module),
		cmocka_unit_test(test_busy_poll_only_with_spare_cpus),
		cmocka_unit_test(test_one_slow_drain_delivers_everything),
		cmocka_unit_test(test_dry_lane_kicks_the_replenish_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
