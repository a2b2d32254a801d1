/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of transport/buffer_pool — the host data layer
 * (spec/framework.md §6).  Items 1-21 of the §12 CHECKLIST
 * (test_buffer_pool_manager.cpp) translated to the bp_* API, one test each,
 * plus: the pointer map under concurrent registration, the shadow
 * transport's range check, the pool cap, and the claim rule of
 * bp_free_buffer.  Item 18 (process_entry) runs through prof_process_entry,
 * which is where our drain implements it.
 *
 * Test modules use the checklist's numbers: 2 kinds, max_collector_threads
 * 4, ready_queue_size 4 unless noted.  Buffers of one record of 32 bytes are
 * 128 bytes (64-byte header + 32, rounded to 64).  Addresses that are never
 * dereferenced are "fake" device pointers far from any heap.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "transport/buffer_pool.h"
#include "transport/layout.h"
#include "transport/module.h"
#include "transport/profiler.h"
#include "transport/spsc.h"
#include "transport_fixtures.h"

#define REC 32u
#define BUF 128u /* tp_buffer_bytes(REC, 1) */
#define FAKE_BASE 0xF00D00000000ull
#define FAKE(i) (FAKE_BASE + (uint64_t)(i) * 0x100u)

/* ------------------------------------------------------------ logging */

#define MAX_LOG 512
static struct {
	int n;
	int level[MAX_LOG];
	char msg[MAX_LOG][256];
} logs;

static void log_hook(int level, const char *msg, void *ud)
{
	(void)ud;
	if (logs.n < MAX_LOG) {
		logs.level[logs.n] = level;
		snprintf(logs.msg[logs.n], sizeof(logs.msg[0]), "%s", msg);
	}
	logs.n++;
}

/* Messages at @level containing @needle. */
static int log_count(int level, const char *needle)
{
	int n = 0;
	for (int i = 0; i < logs.n && i < MAX_LOG; i++)
		n += logs.level[i] == level && strstr(logs.msg[i], needle) != NULL;
	return n;
}

static int setup(void **state)
{
	(void)state;
	memset(&logs, 0, sizeof(logs));
	tp_log_set_hook(log_hook, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tp_log_set_hook(NULL, NULL);
	return 0;
}

/* ------------------------------------------------------------ modules */

static const struct tp_module mod_std = {
	.name = "pooltest",
	.kinds = 2,
	.ready_queue_size = 4,
	.slot_count = 4,
	.max_collector_threads = 4,
	.record_size = { REC, REC },
	.records_per_buffer = { 1, 1 },
};

/* Item 10: ready 2, done 5, recycled defaults to done. */
static const struct tp_module mod_ready2 = {
	.name = "pooltest",
	.kinds = 2,
	.ready_queue_size = 2,
	.slot_count = 4,
	.host_pool_queue_size = 5,
	.max_collector_threads = 4,
	.record_size = { REC, REC },
	.records_per_buffer = { 1, 1 },
};

/* Item 11: done 5, recycled 3. */
static const struct tp_module mod_split = {
	.name = "pooltest",
	.kinds = 2,
	.ready_queue_size = 4,
	.slot_count = 4,
	.host_pool_queue_size = 5,
	.host_recycled_queue_size = 3,
	.max_collector_threads = 4,
	.record_size = { REC, REC },
	.records_per_buffer = { 1, 1 },
};

/* Items 12-13: kind 0's watermark is the live shard count; kind 1 none. */
static int wm_shards(int kind, int shard_count)
{
	return kind == 0 ? shard_count : 0;
}

static const struct tp_module mod_wm_shards = {
	.name = "pooltest",
	.kinds = 2,
	.ready_queue_size = 4,
	.slot_count = 1,
	.max_collector_threads = 4,
	.record_size = { REC, REC },
	.records_per_buffer = { 1, 1 },
	.recycled_warm_target = wm_shards,
};

/* Items 14-15: targets 2 (kind 0) and 3 (kind 1); slot_count 2 so a short
 * lane gets exactly its deficit; lanes deep enough for 9. */
static int wm_skew(int kind, int shard_count)
{
	(void)shard_count;
	return kind == 0 ? 2 : 3;
}

static const struct tp_module mod_wm_skew = {
	.name = "pooltest",
	.kinds = 2,
	.ready_queue_size = 4,
	.slot_count = 2,
	.host_pool_queue_size = 16,
	.max_collector_threads = 4,
	.record_size = { REC, REC },
	.records_per_buffer = { 1, 1 },
	.recycled_warm_target = wm_skew,
};

/* Item 16: a watermark so the global drain really routes across lanes. */
static int wm_four(int kind, int shard_count)
{
	(void)kind;
	(void)shard_count;
	return 4;
}

static const struct tp_module mod_wm_four = {
	.name = "pooltest",
	.kinds = 2,
	.ready_queue_size = 4,
	.slot_count = 4,
	.max_collector_threads = 4,
	.record_size = { REC, REC },
	.records_per_buffer = { 1, 1 },
	.recycled_warm_target = wm_four,
};

/* Item 17: target 6 for kind 0, slot_count 4. */
static int wm_six(int kind, int shard_count)
{
	(void)shard_count;
	return kind == 0 ? 6 : 0;
}

static const struct tp_module mod_wm_six = {
	.name = "pooltest",
	.kinds = 2,
	.ready_queue_size = 4,
	.slot_count = 4,
	.max_collector_threads = 4,
	.record_size = { REC, REC },
	.records_per_buffer = { 1, 1 },
	.recycled_warm_target = wm_six,
};

/* ------------------------------------------------------------ helpers */

static struct tp_ready_info ready_info(uint64_t dev, uint32_t seq)
{
	struct tp_ready_info ri = { .kind = 0, .seq = seq, .dev_ptr = dev };
	return ri;
}

/* Pop lane (kind, shard) empty into out[]; returns the count. */
static int pop_lane(struct bp_pool *bp, int kind, int shard, uint64_t *out, int max)
{
	int n = 0;
	uint64_t p;
	while ((p = bp_pop_recycled(bp, kind, shard)) != 0) {
		if (n < max)
			out[n] = p;
		n++;
	}
	return n;
}

/* A release callback that records each base and optionally frees it. */
struct rel {
	struct tf_mem *mem; /* non-NULL: also free through the fixture */
	uint64_t v[64];
	int n;
};

static void rel_fn(void *ud, uint64_t base)
{
	struct rel *r = ud;
	if (r->n < 64)
		r->v[r->n] = base;
	r->n++;
	if (r->mem)
		tf_free_dev(r->mem, base);
}

static int rel_times(const struct rel *r, uint64_t x)
{
	int n = 0;
	for (int i = 0; i < r->n && i < 64; i++)
		n += r->v[i] == x;
	return n;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* A pool with counting memops (reg set) and no shm region. */
static struct tf_mem *pool_with_mem(struct bp_pool *bp, const struct tp_module *m)
{
	assert_int_equal(bp_init(bp, m), 0);
	struct tf_mem *mem = tf_mem_new();
	assert_non_null(mem);
	struct tp_memops ops = tf_memops(mem, true, false);
	bp_set_memory_context(bp, &ops, NULL, NULL, 0);
	return mem;
}

/* Release every mapping through the fixture; nothing may be left live. */
static void pool_teardown(struct bp_pool *bp, struct tf_mem *mem)
{
	bp_release_all_owned(bp, tf_free_dev, mem);
	bp_fini(bp);
	assert_int_equal(tf_mem_delete(mem), 0);
}

/* ------------------------------------------------------------ checklist */

/* checklist 1 */
#define SPSC_CAP 1024
#define SPSC_ITEMS 100000u

static void *spsc_producer(void *arg)
{
	struct tp_spsc *r = arg;
	for (uint64_t i = 1; i <= SPSC_ITEMS;) {
		if (tp_spsc_push(r, &i))
			i++;
		else
			sched_yield(); /* full: retry */
	}
	return NULL;
}

static void test_spsc_concurrent_fifo(void **state)
{
	(void)state;
	struct tp_spsc r;
	assert_int_equal(tp_spsc_init(&r, SPSC_CAP, sizeof(uint64_t)), 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, spsc_producer, &r), 0);
	uint64_t expect = 1, bad = 0, first_bad = 0;
	for (uint64_t got_n = 0; got_n < SPSC_ITEMS;) {
		uint64_t v;
		if (!tp_spsc_pop(&r, &v)) {
			sched_yield();
			continue;
		}
		if (v != expect && bad++ == 0)
			first_bad = v;
		expect = v + 1;
		got_n++;
	}
	pthread_join(th, NULL);
	assert_int_equal(first_bad, 0);
	assert_int_equal(bad, 0);
	assert_int_equal(expect, SPSC_ITEMS + 1);
	uint64_t v;
	assert_false(tp_spsc_pop(&r, &v));
	assert_int_equal(tp_spsc_size(&r), 0);
	assert_true(tp_spsc_empty(&r));
	assert_int_equal(atomic_load(&r.head), SPSC_ITEMS);
	assert_int_equal(atomic_load(&r.tail), SPSC_ITEMS);
	tp_spsc_fini(&r);
}

/* checklist 2 */
static void test_shard_capacity(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_std), 0);
	assert_int_equal(bp.max_shards, 4);
	assert_int_equal(bp.shard_count, 4);
	/* Four distinct shards: each returns what was pushed to it. */
	for (int s = 0; s < 4; s++) {
		struct tp_ready_info ri = ready_info(FAKE(s), (uint32_t)s);
		assert_true(bp_push_ready(&bp, &ri, s));
	}
	for (int s = 3; s >= 0; s--) {
		struct tp_ready_info out;
		assert_true(bp_try_pop_ready(&bp, &out, s));
		assert_int_equal(out.dev_ptr, FAKE(s));
		assert_false(bp_try_pop_ready(&bp, &out, s));
	}
	/* The live count is clamped to the array's capacity. */
	bp_set_shard_count(&bp, 9);
	assert_int_equal(bp.shard_count, 4);
	assert_int_equal(log_count(TP_LOG_ERROR,
				   "BufferPoolManager: shard_count 9 out of range [1, 4]; clamping"),
			 1);
	bp_set_shard_count(&bp, 0);
	assert_int_equal(bp.shard_count, 1);
	bp_set_shard_count(&bp, 3);
	assert_int_equal(bp.shard_count, 3);
	/* Indices now fold over the 3 live shards, not the array. */
	assert_int_equal(bp_norm_shard(&bp, 5), 2);
	assert_int_equal(bp_norm_shard(&bp, 3), 0);
	struct tp_ready_info ri = ready_info(FAKE(8), 8), out;
	assert_true(bp_push_ready(&bp, &ri, 4)); /* -> shard 1 */
	assert_true(bp_try_pop_ready(&bp, &out, 1));
	assert_int_equal(out.dev_ptr, FAKE(8));
	bp_fini(&bp);

	/* max_collector_threads 0 -> one shard. */
	struct tp_module one = mod_std;
	one.max_collector_threads = 0;
	assert_int_equal(bp_init(&bp, &one), 0);
	assert_int_equal(bp.max_shards, 1);
	assert_int_equal(bp.shard_count, 1);
	bp_fini(&bp);
}

/* checklist 3 */
static void test_ready_shards_isolated(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_std), 0);
	assert_int_equal(bp_norm_shard(&bp, 5), 1);
	assert_int_equal(bp_norm_shard(&bp, -3), 0);
	assert_int_equal(bp_norm_shard(&bp, 4), 0);

	struct tp_ready_info a = ready_info(FAKE(1), 1), b = ready_info(FAKE(2), 2),
			     c = ready_info(FAKE(3), 3);
	assert_true(bp_push_ready(&bp, &a, 0));
	assert_true(bp_push_ready(&bp, &b, 1));
	assert_true(bp_push_ready(&bp, &c, 5)); /* folds to shard 1 */

	struct tp_ready_info out;
	assert_false(bp_try_pop_ready(&bp, &out, 2)); /* untouched */
	assert_false(bp_try_pop_ready(&bp, &out, 3));
	assert_true(bp_try_pop_ready(&bp, &out, 1));
	assert_int_equal(out.dev_ptr, FAKE(2)); /* FIFO within shard 1 */
	assert_int_equal(out.seq, 2);
	assert_true(bp_try_pop_ready(&bp, &out, 1));
	assert_int_equal(out.dev_ptr, FAKE(3));
	assert_false(bp_try_pop_ready(&bp, &out, 1));
	assert_true(bp_try_pop_ready(&bp, &out, 0));
	assert_int_equal(out.dev_ptr, FAKE(1));
	assert_false(bp_try_pop_ready(&bp, &out, 0));
	bp_fini(&bp);
}

/* checklist 4 */
static void test_ready_shard_capacity(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_std), 0);
	assert_int_equal(bp.ready_cap, 4);
	for (uint32_t i = 0; i < 4; i++) {
		struct tp_ready_info ri = ready_info(FAKE(10 + i), i);
		assert_true(bp_push_ready(&bp, &ri, 0));
	}
	struct tp_ready_info extra = ready_info(FAKE(99), 99);
	assert_false(bp_push_ready(&bp, &extra, 0));
	assert_int_equal(
		log_count(TP_LOG_ERROR, "BufferPoolManager: ready queue full for shard=0 capacity=4"),
		1);
	for (uint32_t i = 0; i < 4; i++) {
		struct tp_ready_info out;
		assert_true(bp_try_pop_ready(&bp, &out, 0));
		assert_int_equal(out.dev_ptr, FAKE(10 + i));
		assert_int_equal(out.seq, i);
	}
	struct tp_ready_info out;
	assert_false(bp_try_pop_ready(&bp, &out, 0));
	bp_fini(&bp);
}

/* checklist 5 */
struct delayed_push {
	struct bp_pool *bp;
	int shard, delay_ms;
	struct tp_ready_info info;
	bool ok;
};

static void *delayed_push_main(void *arg)
{
	struct delayed_push *d = arg;
	sleep_ms(d->delay_ms);
	d->ok = bp_push_ready(d->bp, &d->info, d->shard);
	return NULL;
}

static void test_wait_pop_ready_wakes(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_std), 0);
	struct tp_ready_info out;

	/* Nothing pushed: times out after about the timeout. */
	double t0 = now_ms();
	assert_false(bp_wait_pop_ready(&bp, &out, 30, 2));
	assert_true(now_ms() - t0 >= 25.0);

	/* The push comes 20 ms after the pusher starts, which under TSan on
	 * a loaded machine can be a few hundred ms after its creation; so
	 * the wait's timeout is 10 s, and waking on the push means returning
	 * within half of it. */
	struct delayed_push d = { .bp = &bp, .shard = 2, .delay_ms = 20,
				  .info = ready_info(FAKE(42), 42) };
	pthread_t th;
	t0 = now_ms();
	assert_int_equal(pthread_create(&th, NULL, delayed_push_main, &d), 0);
	bool got = bp_wait_pop_ready(&bp, &out, 10000, 2);
	double waited = now_ms() - t0;
	pthread_join(th, NULL);
	assert_true(d.ok);
	assert_true(got);
	assert_int_equal(out.dev_ptr, FAKE(42));
	assert_int_equal(out.seq, 42);
	assert_true(waited >= 15.0);   /* it slept until the push */
	assert_true(waited < 5000.0); /* and woke on it, not on the timeout */
	assert_false(bp_try_pop_ready(&bp, &out, 2));
	bp_fini(&bp);
}

/* checklist 6 */
static void test_done_drain_origin_without_watermark(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_std), 0);
	assert_true(bp_notify_copy_done(&bp, FAKE(1), 0, 0));
	assert_true(bp_notify_copy_done(&bp, FAKE(2), 1, 1));
	assert_true(bp_notify_copy_done(&bp, FAKE(3), 1, 5)); /* shard 1 */
	assert_int_equal(bp_drain_done_into_recycled(&bp), 3);
	assert_int_equal(bp_recycled_count_all(&bp, 0), 1);
	assert_int_equal(bp_recycled_count_all(&bp, 1), 2);
	assert_int_equal(bp_recycled_count(&bp, 1, 1), 2);
	assert_int_equal(bp_recycled_count(&bp, 0, 0), 1);
	assert_int_equal(bp_recycled_count(&bp, 0, 1), 0);
	assert_int_equal(bp_recycled_count(&bp, 1, 0), 0);
	assert_int_equal(bp_pop_recycled(&bp, 0, 0), FAKE(1));
	assert_int_equal(bp_pop_recycled(&bp, 1, 1), FAKE(2));
	assert_int_equal(bp_pop_recycled(&bp, 1, 1), FAKE(3));
	assert_int_equal(bp_pop_recycled(&bp, 1, 1), 0);
	assert_true(bp_recycled_empty(&bp));
	assert_int_equal(bp_drain_done_into_recycled(&bp), 0);
	bp_fini(&bp);
}

/* checklist 7 */
static void test_done_drain_per_shard(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_std), 0);
	assert_true(bp_notify_copy_done(&bp, FAKE(1), 0, 0));
	assert_true(bp_notify_copy_done(&bp, FAKE(2), 1, 1));
	assert_true(bp_notify_copy_done(&bp, FAKE(3), 0, 1));

	assert_int_equal(bp_drain_done_into_recycled_shard(&bp, 1), 2);
	assert_int_equal(bp_recycled_count(&bp, 0, 1), 1);
	assert_int_equal(bp_recycled_count(&bp, 1, 1), 1);
	assert_int_equal(bp_recycled_count(&bp, 0, 0), 0); /* shard 0 untouched */
	assert_int_equal(bp_recycled_count(&bp, 1, 0), 0);
	assert_int_equal(bp_drain_done_into_recycled_shard(&bp, 1), 0);

	assert_int_equal(bp_drain_done_into_recycled_shard(&bp, 0), 1);
	assert_int_equal(bp_pop_recycled(&bp, 0, 0), FAKE(1));
	assert_int_equal(bp_pop_recycled(&bp, 0, 1), FAKE(3));
	assert_int_equal(bp_pop_recycled(&bp, 1, 1), FAKE(2));
	assert_true(bp_recycled_empty(&bp));
	for (int s = 0; s < 4; s++)
		for (int k = 0; k < 2; k++)
			assert_int_equal(bp_retired_count(&bp, k, s), 0);
	bp_fini(&bp);
}

/* checklist 8 */
static void test_done_entry_pointer_and_kind(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_std), 0);
	assert_true(bp_notify_copy_done(&bp, FAKE(7), 1, 2));
	struct bp_done d;
	for (int s = 0; s < 4; s++)
		if (s != 2)
			assert_false(bp_try_pop_done(&bp, &d, s));
	assert_true(bp_try_pop_done(&bp, &d, 2));
	assert_int_equal(d.dev_ptr, FAKE(7));
	assert_int_equal(d.kind, 1);
	assert_false(bp_try_pop_done(&bp, &d, 2));
	bp_fini(&bp);
}

/* checklist 9 */
static void test_startup_pop_any_live_shard(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_std), 0);
	assert_true(bp_push_recycled(&bp, 0, FAKE(3), 3));
	assert_true(bp_push_recycled(&bp, 0, FAKE(1), 1));
	assert_true(bp_push_recycled(&bp, 1, FAKE(9), 2)); /* other kind */
	/* Live shards are scanned 0..n-1: shard 1 first, then shard 3. */
	assert_int_equal(bp_pop_recycled_for_startup(&bp, 0), FAKE(1));
	assert_int_equal(bp_pop_recycled_for_startup(&bp, 0), FAKE(3));
	assert_int_equal(bp_pop_recycled_for_startup(&bp, 0), 0);
	assert_int_equal(bp_pop_recycled_for_startup(&bp, 1), FAKE(9));
	assert_int_equal(bp_pop_recycled_for_startup(&bp, 1), 0);
	assert_true(bp_recycled_empty(&bp));
	bp_fini(&bp);
}

/* checklist 10 */
static void test_ring_capacities_default(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_ready2), 0);
	assert_int_equal(bp.ready_cap, 2);
	assert_int_equal(bp.done_cap, 5);
	assert_int_equal(bp.recycled_cap, 5);
	struct tp_ready_info ri = ready_info(FAKE(1), 1);
	assert_true(bp_push_ready(&bp, &ri, 0));
	assert_true(bp_push_ready(&bp, &ri, 0));
	assert_false(bp_push_ready(&bp, &ri, 0));
	for (int i = 0; i < 5; i++) {
		assert_true(bp_push_recycled(&bp, 0, FAKE(10 + i), 0));
		assert_true(bp_notify_copy_done(&bp, FAKE(20 + i), 0, 0));
	}
	assert_false(bp_push_recycled(&bp, 0, FAKE(15), 0));
	assert_false(bp_notify_copy_done(&bp, FAKE(25), 0, 0));
	assert_int_equal(log_count(TP_LOG_ERROR,
				   "BufferPoolManager: recycled queue full for shard=0 kind=0 "
				   "capacity=5"),
			 1);
	assert_int_equal(log_count(TP_LOG_ERROR,
				   "BufferPoolManager: done queue full for shard=0 kind=0 capacity=5"),
			 1);
	assert_int_equal(bp_recycled_count(&bp, 0, 0), 5);
	bp_fini(&bp);
}

/* checklist 11 */
static void test_ring_capacities_independent(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_split), 0);
	assert_int_equal(bp.done_cap, 5);
	assert_int_equal(bp.recycled_cap, 3);
	for (int i = 0; i < 5; i++)
		assert_true(bp_notify_copy_done(&bp, FAKE(i), 1, 3));
	assert_false(bp_notify_copy_done(&bp, FAKE(5), 1, 3));
	for (int i = 0; i < 3; i++)
		assert_true(bp_push_recycled(&bp, 1, FAKE(10 + i), 3));
	assert_false(bp_push_recycled(&bp, 1, FAKE(13), 3));
	assert_int_equal(bp_recycled_count(&bp, 1, 3), 3);
	/* Shard 3's done ring drains into a lane of 3: 2 overflow, retired. */
	assert_int_equal(bp_pop_recycled(&bp, 1, 3), FAKE(10));
	assert_int_equal(bp_pop_recycled(&bp, 1, 3), FAKE(11));
	assert_int_equal(bp_pop_recycled(&bp, 1, 3), FAKE(12));
	assert_int_equal(bp_drain_done_into_recycled_shard(&bp, 3), 5);
	assert_int_equal(bp_recycled_count(&bp, 1, 3), 3);
	assert_int_equal(bp_retired_count(&bp, 1, 3), 2);
	/* The global drain retires at the origin too when its lane is full. */
	assert_true(bp_notify_copy_done(&bp, FAKE(6), 1, 3));
	assert_int_equal(bp_drain_done_into_recycled(&bp), 1);
	assert_int_equal(bp_recycled_count(&bp, 1, 3), 3);
	assert_int_equal(bp_retired_count(&bp, 1, 3), 3);
	assert_int_equal(bp_recycled_count_all(&bp, 1), 3);
	bp_fini(&bp);
}

/* checklist 12 */
static void test_watermark_follows_shard_count(void **state)
{
	(void)state;
	struct bp_pool bp;
	struct tf_mem *mem = pool_with_mem(&bp, &mod_wm_shards);
	bp_set_shard_count(&bp, 2);
	assert_int_equal(bp_replenish_recycled_pools(&bp), 4);
	assert_int_equal(bp_recycled_count(&bp, 0, 0), 2);
	assert_int_equal(bp_recycled_count(&bp, 0, 1), 2);
	assert_int_equal(bp_recycled_count_all(&bp, 1), 0); /* no target */
	assert_int_equal(mem->allocs, 2); /* one block per lane */
	assert_int_equal(mem->regs, 2);
	assert_int_equal(mem->alloc_bytes, 4 * BUF);
	assert_int_equal(bp_replenish_recycled_pools(&bp), 0);
	assert_int_equal(mem->allocs, 2);
	assert_int_equal(atomic_load(&bp.n_allocs), 2);
	assert_int_equal(atomic_load(&bp.n_regs), 2);
	/* Each lane got two consecutive buffers of one block. */
	for (int s = 0; s < 2; s++) {
		uint64_t p[4];
		assert_int_equal(pop_lane(&bp, 0, s, p, 4), 2);
		assert_true(tf_is_live(mem, p[0]));
		assert_int_equal(p[1], p[0] + BUF);
		assert_int_equal(bp_release_pointer_for(&bp, p[1]), p[0]);
	}
	pool_teardown(&bp, mem);
}

/* checklist 13 */
static void test_watermark_shrinks_with_shards(void **state)
{
	(void)state;
	struct bp_pool bp;
	struct tf_mem *mem = pool_with_mem(&bp, &mod_wm_shards);
	bp_set_shard_count(&bp, 1);
	assert_int_equal(bp_replenish_recycled_pools(&bp), 1);
	assert_int_equal(bp_recycled_count(&bp, 0, 0), 1);
	assert_int_equal(bp_recycled_count_all(&bp, 0), bp_recycled_count(&bp, 0, 0));
	assert_int_equal(mem->allocs, 1);
	assert_int_equal(mem->alloc_bytes, BUF);
	/* Lanes of the other shards stayed empty. */
	bp_set_shard_count(&bp, 4);
	for (int s = 1; s < 4; s++)
		assert_int_equal(bp_recycled_count(&bp, 0, s), 0);
	assert_int_equal(bp_recycled_count_all(&bp, 0), 1);
	/* Growing back to 2 raises the target to 2 again. */
	bp_set_shard_count(&bp, 2);
	assert_int_equal(bp_replenish_recycled_pools(&bp), 3);
	assert_int_equal(bp_recycled_count(&bp, 0, 0), 2);
	assert_int_equal(bp_recycled_count(&bp, 0, 1), 2);
	pool_teardown(&bp, mem);
}

/* checklist 14 */
static bool contains(const uint64_t *v, int n, uint64_t x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static void skew_complete(struct bp_pool *bp)
{
	for (int i = 0; i < 6; i++)
		assert_true(bp_notify_copy_done(bp, FAKE(i), 0, 0));
	for (int i = 0; i < 9; i++)
		assert_true(bp_notify_copy_done(bp, FAKE(100 + i), 1, 2));
}

static void assert_lane_counts(struct bp_pool *bp, int kind, size_t c0, size_t c1, size_t c2)
{
	assert_int_equal(bp_recycled_count(bp, kind, 0), c0);
	assert_int_equal(bp_recycled_count(bp, kind, 1), c1);
	assert_int_equal(bp_recycled_count(bp, kind, 2), c2);
}

/* Pop every live lane of both kinds into all[]; check each kind holds only
 * its own completions (or new buffers) and nothing appears twice. */
static int collect_all(struct bp_pool *bp, uint64_t *all, int max)
{
	int n = 0;
	for (int k = 0; k < 2; k++)
		for (int s = 0; s < bp->shard_count; s++) {
			uint64_t p;
			while ((p = bp_pop_recycled(bp, k, s)) != 0) {
				assert_false(contains(all, n, p));
				if (p >= FAKE_BASE) {
					uint64_t i = (p - FAKE_BASE) / 0x100u;
					assert_int_equal(k, i >= 100 ? 1 : 0);
				}
				assert_true(n < max);
				all[n++] = p;
			}
		}
	return n;
}

static void test_skewed_rebalance_cheaper(void **state)
{
	(void)state;
	/* Origin-only: every shard drains into its own lanes. */
	struct bp_pool a;
	struct tf_mem *ma = pool_with_mem(&a, &mod_wm_skew);
	bp_set_shard_count(&a, 3);
	skew_complete(&a);
	size_t drained_a = 0;
	for (int s = 0; s < 3; s++)
		drained_a += bp_drain_done_into_recycled_shard(&a, s);
	assert_int_equal(drained_a, 15);
	assert_lane_counts(&a, 0, 6, 0, 0);
	assert_lane_counts(&a, 1, 0, 0, 9);
	assert_int_equal(bp_replenish_recycled_pools(&a), 10);
	assert_lane_counts(&a, 0, 6, 2, 2);
	assert_lane_counts(&a, 1, 3, 3, 9);
	assert_int_equal(ma->allocs, 4);
	assert_int_equal(ma->regs, 4);

	/* Largest-deficit routing. */
	struct bp_pool b;
	struct tf_mem *mb = pool_with_mem(&b, &mod_wm_skew);
	bp_set_shard_count(&b, 3);
	skew_complete(&b);
	assert_int_equal(bp_drain_done_into_recycled(&b), 15);
	assert_lane_counts(&b, 0, 2, 2, 2);
	assert_lane_counts(&b, 1, 3, 3, 3);
	assert_int_equal(bp_replenish_recycled_pools(&b), 0);
	assert_int_equal(mb->allocs, 0);
	assert_int_equal(mb->regs, 0);
	assert_true(mb->allocs < ma->allocs); /* strictly cheaper */

	/* Exact placement of the routing (origin+1 first, ties keep the first):
	 * kind 0 from origin 0 deals 1,2,0,1,2,0; kind 1 from origin 2 deals
	 * 0,1,2,0,1,2,... */
	uint64_t p[8];
	assert_int_equal(pop_lane(&b, 0, 0, p, 8), 2);
	assert_int_equal(p[0], FAKE(2));
	assert_int_equal(p[1], FAKE(5));
	assert_int_equal(pop_lane(&b, 0, 1, p, 8), 2);
	assert_int_equal(p[0], FAKE(0));
	assert_int_equal(p[1], FAKE(3));
	assert_int_equal(pop_lane(&b, 0, 2, p, 8), 2);
	assert_int_equal(p[0], FAKE(1));
	assert_int_equal(p[1], FAKE(4));
	for (int s = 0; s < 3; s++) {
		assert_int_equal(pop_lane(&b, 1, s, p, 8), 3);
		for (int j = 0; j < 3; j++)
			assert_int_equal(p[j], FAKE(100 + s + 3 * j));
	}

	/* Origin-only: no buffer lost or duplicated; observed = 15 + 10. */
	uint64_t all[32];
	int n = collect_all(&a, all, 32);
	assert_int_equal(n, 15 + 10);
	int fakes = 0, fresh = 0;
	for (int i = 0; i < n; i++) {
		if (all[i] >= FAKE_BASE) {
			fakes++;
		} else {
			fresh++;
			assert_true(tf_is_live(ma, bp_release_pointer_for(&a, all[i])));
		}
	}
	for (int i = 0; i < 6; i++)
		assert_true(contains(all, n, FAKE(i)));
	for (int i = 0; i < 9; i++)
		assert_true(contains(all, n, FAKE(100 + i)));
	assert_int_equal(fakes, 15);
	assert_int_equal(fresh, 10);

	pool_teardown(&a, ma);
	pool_teardown(&b, mb);
}

/* checklist 15 */
static void balanced_complete(struct bp_pool *bp)
{
	for (int s = 0; s < 3; s++) {
		for (int j = 0; j < 2; j++)
			assert_true(bp_notify_copy_done(bp, FAKE(10 * s + j), 0, s));
		for (int j = 0; j < 3; j++)
			assert_true(bp_notify_copy_done(bp, FAKE(100 + 10 * s + j), 1, s));
	}
}

static void test_balanced_no_alloc(void **state)
{
	(void)state;
	/* Origin-only: each buffer ends in its origin's lane, in order. */
	struct bp_pool a;
	struct tf_mem *ma = pool_with_mem(&a, &mod_wm_skew);
	bp_set_shard_count(&a, 3);
	balanced_complete(&a);
	size_t drained = 0;
	for (int s = 0; s < 3; s++)
		drained += bp_drain_done_into_recycled_shard(&a, s);
	assert_int_equal(drained, 15);
	assert_int_equal(bp_replenish_recycled_pools(&a), 0);
	assert_int_equal(ma->allocs, 0);
	assert_int_equal(ma->regs, 0);
	uint64_t p[8];
	for (int s = 0; s < 3; s++) {
		assert_int_equal(pop_lane(&a, 0, s, p, 8), 2);
		assert_int_equal(p[0], FAKE(10 * s));
		assert_int_equal(p[1], FAKE(10 * s + 1));
		assert_int_equal(pop_lane(&a, 1, s, p, 8), 3);
		for (int j = 0; j < 3; j++)
			assert_int_equal(p[j], FAKE(100 + 10 * s + j));
	}

	/* Routing: same totals, no allocation, every buffer kept once in a
	 * lane of its own kind; placement follows the deficit rule. */
	struct bp_pool b;
	struct tf_mem *mb = pool_with_mem(&b, &mod_wm_skew);
	bp_set_shard_count(&b, 3);
	balanced_complete(&b);
	assert_int_equal(bp_drain_done_into_recycled(&b), 15);
	assert_lane_counts(&b, 0, 2, 2, 2);
	assert_lane_counts(&b, 1, 3, 3, 3);
	assert_int_equal(bp_replenish_recycled_pools(&b), 0);
	assert_int_equal(mb->allocs, 0);
	assert_int_equal(mb->regs, 0);
	static const int k0[3][2] = { { 10, 20 }, { 0, 21 }, { 1, 11 } };
	static const int k1[3][3] = { { 102, 111, 120 }, { 100, 112, 121 }, { 101, 110, 122 } };
	for (int s = 0; s < 3; s++) {
		assert_int_equal(pop_lane(&b, 0, s, p, 8), 2);
		for (int j = 0; j < 2; j++)
			assert_int_equal(p[j], FAKE(k0[s][j]));
		assert_int_equal(pop_lane(&b, 1, s, p, 8), 3);
		for (int j = 0; j < 3; j++)
			assert_int_equal(p[j], FAKE(k1[s][j]));
	}
	assert_true(bp_recycled_empty(&a));
	assert_true(bp_recycled_empty(&b));
	pool_teardown(&a, ma);
	pool_teardown(&b, mb);
}

/* checklist 16 */
#define C16_SHARDS 3
#define C16_PER_KIND 64
#define C16_TOTAL (C16_SHARDS * 2 * C16_PER_KIND)
#define C16_FAKE(k, c, j) (FAKE_BASE + (uint64_t)(((k) * C16_SHARDS + (c)) * C16_PER_KIND + (j)) * 64u)

struct c16 {
	struct bp_pool *bp;
	_Atomic int notify_fail;
	_Atomic uint64_t drained, consumed;
	_Atomic bool timed_out;
	double deadline_ms;
	uint64_t got[C16_SHARDS][2][C16_TOTAL];
	int ngot[C16_SHARDS][2];
};

struct c16_arg {
	struct c16 *c;
	int idx;
};

static void *c16_collector(void *arg)
{
	struct c16_arg *a = arg;
	for (int j = 0; j < C16_PER_KIND; j++)
		for (int k = 0; k < 2; k++)
			if (!bp_notify_copy_done(a->c->bp, C16_FAKE(k, a->idx, j), k, a->idx))
				atomic_fetch_add(&a->c->notify_fail, 1);
	return NULL;
}

static void *c16_replenish(void *arg)
{
	struct c16 *c = arg;
	while (atomic_load(&c->drained) < C16_TOTAL) {
		size_t n = bp_drain_done_into_recycled(c->bp);
		atomic_fetch_add(&c->drained, n);
		if (!n) {
			if (now_ms() > c->deadline_ms) {
				atomic_store(&c->timed_out, true);
				break;
			}
			sched_yield();
		}
	}
	return NULL;
}

static void *c16_drain(void *arg)
{
	struct c16_arg *a = arg;
	struct c16 *c = a->c;
	while (atomic_load(&c->consumed) < C16_TOTAL) {
		bool any = false;
		for (int k = 0; k < 2; k++) {
			uint64_t p = bp_pop_recycled(c->bp, k, a->idx);
			if (!p)
				continue;
			any = true;
			if (c->ngot[a->idx][k] < C16_TOTAL)
				c->got[a->idx][k][c->ngot[a->idx][k]] = p;
			c->ngot[a->idx][k]++;
			atomic_fetch_add(&c->consumed, 1);
		}
		if (!any) {
			if (now_ms() > c->deadline_ms) {
				atomic_store(&c->timed_out, true);
				break;
			}
			sched_yield();
		}
	}
	return NULL;
}

static void test_concurrent_notify_drain_pop(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_wm_four), 0);
	bp_set_shard_count(&bp, C16_SHARDS);
	struct c16 *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	c->bp = &bp;
	c->deadline_ms = now_ms() + 20000.0;
	struct c16_arg args[C16_SHARDS];
	pthread_t coll[C16_SHARDS], drain[C16_SHARDS], repl;
	for (int i = 0; i < C16_SHARDS; i++) {
		args[i] = (struct c16_arg){ .c = c, .idx = i };
		assert_int_equal(pthread_create(&drain[i], NULL, c16_drain, &args[i]), 0);
	}
	assert_int_equal(pthread_create(&repl, NULL, c16_replenish, c), 0);
	for (int i = 0; i < C16_SHARDS; i++)
		assert_int_equal(pthread_create(&coll[i], NULL, c16_collector, &args[i]), 0);
	for (int i = 0; i < C16_SHARDS; i++)
		pthread_join(coll[i], NULL);
	pthread_join(repl, NULL);
	for (int i = 0; i < C16_SHARDS; i++)
		pthread_join(drain[i], NULL);

	assert_false(atomic_load(&c->timed_out));
	assert_int_equal(atomic_load(&c->notify_fail), 0);
	assert_int_equal(atomic_load(&c->drained), C16_TOTAL);
	assert_int_equal(atomic_load(&c->consumed), C16_TOTAL);
	for (int k = 0; k < 2; k++) {
		int seen[C16_SHARDS * C16_PER_KIND] = { 0 };
		int total = 0;
		for (int d = 0; d < C16_SHARDS; d++)
			for (int i = 0; i < c->ngot[d][k]; i++) {
				uint64_t idx = (c->got[d][k][i] - FAKE_BASE) / 64u;
				/* Only buffers of this kind reach a lane of this kind. */
				assert_int_equal(idx / (C16_SHARDS * C16_PER_KIND), (uint64_t)k);
				seen[idx % (C16_SHARDS * C16_PER_KIND)]++;
				total++;
			}
		assert_int_equal(total, C16_SHARDS * C16_PER_KIND);
		for (int i = 0; i < C16_SHARDS * C16_PER_KIND; i++)
			assert_int_equal(seen[i], 1); /* consumed set == produced set */
	}
	assert_true(bp_recycled_empty(&bp));
	struct bp_done d;
	for (int s = 0; s < 4; s++) {
		assert_false(bp_try_pop_done(&bp, &d, s));
		for (int k = 0; k < 2; k++)
			assert_int_equal(bp_retired_count(&bp, k, s), 0);
	}
	free(c);
	bp_fini(&bp);
}

/* checklist 17 */
static void test_small_gap_batching(void **state)
{
	(void)state;
	struct bp_pool bp;
	struct tf_mem *mem = pool_with_mem(&bp, &mod_wm_six);
	bp_set_shard_count(&bp, 1);
	assert_int_equal(bp_replenish_recycled_pools(&bp), 6);
	assert_int_equal(mem->allocs, 1);
	assert_int_equal(mem->alloc_bytes, 6 * BUF);
	assert_int_equal(bp_recycled_count(&bp, 0, 0), 6);
	uint64_t first = bp_pop_recycled(&bp, 0, 0);
	assert_true(tf_is_live(mem, first));
	assert_int_equal(bp_pop_recycled(&bp, 0, 0), first + BUF);
	assert_int_equal(bp_recycled_count(&bp, 0, 0), 4);
	/* Gap 2 < slot_count 4: a batch of max(4, 2) = 4. */
	assert_int_equal(bp_replenish_recycled_pools(&bp), 4);
	assert_int_equal(bp_recycled_count(&bp, 0, 0), 8);
	assert_int_equal(mem->allocs, 2);
	assert_int_equal(mem->alloc_bytes, 10 * BUF);
	assert_int_equal(bp_replenish_recycled_pools(&bp), 0);
	uint64_t p[8];
	assert_int_equal(pop_lane(&bp, 0, 0, p, 8), 8);
	for (int i = 0; i < 4; i++)
		assert_int_equal(p[i], first + (uint64_t)(2 + i) * BUF);
	assert_true(tf_is_live(mem, p[4]));
	assert_int_not_equal(bp_release_pointer_for(&bp, p[4]), first);
	for (int i = 5; i < 8; i++)
		assert_int_equal(p[i], p[4] + (uint64_t)(i - 4) * BUF);
	pool_teardown(&bp, mem);
}

/* checklist 18 */
static const struct tp_module mod_prof = {
	.name = "pooltest",
	.kinds = 2,
	.ready_queue_size = 2, /* the smallest ready ring prof_open accepts */
	.slot_count = 4,
	.max_collector_threads = 4,
	.record_size = { REC, REC },
	.records_per_buffer = { 1, 1 },
};

static void test_process_entry_full_shard_retires(void **state)
{
	(void)state;
	struct tf_mem *mem = tf_mem_new();
	assert_non_null(mem);
	struct tp_profiler_config cfg = {
		.module = &mod_prof,
		.ops = tf_memops(mem, true, false),
		.num_threads = 1,
		.num_instances = 1,
		.ready_push_wait_ms = -1, /* retire at once */
		.pool_cap_bytes = UINT64_MAX,
	};
	struct tp_profiler *p = prof_open(&cfg);
	assert_non_null(p);
	assert_int_equal(p->bp.ready_cap, 2);
	assert_int_equal(p->bp.shard_count, 1);

	/* Free queue already full (seeded with slot_count buffers). */
	struct tp_free_queue *fq = &tp_shm_state(p->hdr, 0)->free_queue;
	assert_int_equal(atomic_load(&fq->tail) - atomic_load(&fq->head), 4);
	uint64_t slots[4];
	for (int i = 0; i < 4; i++)
		slots[i] = atomic_load(&fq->buffer_ptrs[i]);
	/* Host ready shard already full with older buffers. */
	struct tp_ready_info old1 = ready_info(FAKE(1), 1), old2 = ready_info(FAKE(2), 2);
	assert_true(bp_push_ready(&p->bp, &old1, 0));
	assert_true(bp_push_ready(&p->bp, &old2, 0));

	void *host = NULL;
	uint64_t nb = bp_alloc_and_register_block(&p->bp, BUF, &host);
	assert_int_not_equal(nb, 0);
	struct tp_ready_entry e;
	memset(&e, 0, sizeof(e));
	atomic_store(&e.instance, 0);
	atomic_store(&e.kind, 0);
	atomic_store(&e.buffer_ptr, nb);
	atomic_store(&e.buffer_seq, 3);
	atomic_store(&e.thread, 0);
	prof_process_entry(p, 0, &e);

	/* Not published: the shard holds only the old items. */
	struct tp_ready_info out;
	assert_true(bp_try_pop_ready(&p->bp, &out, 0));
	assert_int_equal(out.dev_ptr, FAKE(1));
	assert_true(bp_try_pop_ready(&p->bp, &out, 0));
	assert_int_equal(out.dev_ptr, FAKE(2));
	assert_false(bp_try_pop_ready(&p->bp, &out, 0));
	/* Not on the done ring, but retired at (kind 0, shard 0). */
	struct bp_done d;
	assert_false(bp_try_pop_done(&p->bp, &d, 0));
	assert_int_equal(bp_retired_count(&p->bp, 0, 0), 1);
	assert_int_equal(atomic_load(&p->host_lost_buffers[TP_HOST_LOST_SHARD_FULL]), 1);
	assert_int_equal(
		log_count(TP_LOG_ERROR, "BufferPoolManager: ready queue full for shard=0 capacity=2"),
		1);
	/* The free queue was left alone. */
	assert_int_equal(atomic_load(&fq->tail), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(atomic_load(&fq->buffer_ptrs[i]), slots[i]);

	/* Teardown releases exactly the retired buffer. */
	struct rel r = { 0 };
	assert_int_equal(bp_release_owned_buffers(&p->bp, rel_fn, &r), 1);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.v[0], nb);
	assert_int_equal(bp_retired_count(&p->bp, 0, 0), 0);

	/* rel_fn only recorded it; a released (claimed) block is not released
	 * again by prof_close, so free it here as a real release fn would. */
	prof_close(p);
	assert_int_equal(tf_freed_times(mem, nb), 0);
	tf_free_dev(mem, nb);
	assert_int_equal(tf_freed_times(mem, nb), 1);
	assert_int_equal(mem->nlive, 0);
	assert_int_equal(tf_mem_delete(mem), 0);
}

/* checklist 19 */
static void test_batch_carving_and_ranges(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_std), 0);
	struct tf_mem *mem = tf_mem_new();
	assert_non_null(mem);
	mem->distinct_host = true; /* host view != device address */
	struct tp_memops ops = tf_memops(mem, true, false);
	bp_set_memory_context(&bp, &ops, NULL, NULL, 0);

	assert_int_equal(bp_allocate_recycled_batch(&bp, 0, 32, 3, 1), 3);
	assert_int_equal(mem->allocs, 1);
	assert_int_equal(mem->alloc_bytes, 3 * 64);
	assert_int_equal(bp_recycled_count(&bp, 0, 1), 3);
	for (int s = 0; s < 4; s++)
		if (s != 1)
			assert_int_equal(bp_recycled_count(&bp, 0, s), 0);
	uint64_t p[3];
	assert_int_equal(pop_lane(&bp, 0, 1, p, 3), 3);
	assert_int_equal(p[1] - p[0], 64);
	assert_int_equal(p[2] - p[1], 64);

	uint64_t base = p[0];
	char *host = tf_host_of(mem, base);
	assert_non_null(host);
	assert_true((uint64_t)(uintptr_t)host != base);
	assert_ptr_equal(bp_resolve_host_ptr(&bp, base), host);
	assert_ptr_equal(bp_resolve_host_ptr(&bp, p[1] + 7), host + 64 + 7);
	assert_int_equal(bp_release_pointer_for(&bp, p[1] + 7), base);
	assert_ptr_equal(bp_resolve_host_range(&bp, p[2], 64), host + 128);
	assert_null(bp_resolve_host_range(&bp, p[2], 65)); /* leaves the block */
	assert_int_equal(bp_release_pointer_for(&bp, FAKE(0)), FAKE(0));

	/* Return them (lanes and a done ring): one release of the base. */
	assert_true(bp_push_recycled(&bp, 0, p[0], 1));
	assert_true(bp_push_recycled(&bp, 0, p[1], 1));
	assert_true(bp_notify_copy_done(&bp, p[2], 0, 3));
	struct rel r = { .mem = mem };
	assert_int_equal(bp_release_owned_buffers(&bp, rel_fn, &r), 1);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.v[0], base);
	assert_int_equal(tf_freed_times(mem, base), 1);
	assert_true(bp_recycled_empty(&bp));
	assert_int_equal(bp_drain_done_into_recycled(&bp), 0);

	/* shard < 0: buffer i goes to lane i (folded over the live shards). */
	bp_set_shard_count(&bp, 2);
	assert_int_equal(bp_allocate_recycled_batch(&bp, 1, 100, 3, -1), 3);
	assert_int_equal(mem->alloc_bytes, 3 * 64 + 3 * 128);
	assert_int_equal(pop_lane(&bp, 1, 0, p, 3), 2);
	assert_int_equal(p[1], p[0] + 2 * 128);
	uint64_t mid = bp_pop_recycled(&bp, 1, 1);
	assert_int_equal(mid, p[0] + 128);
	assert_int_equal(bp_pop_recycled(&bp, 1, 1), 0);
	assert_true(tf_is_live(mem, p[0]));
	bp_release_all_owned(&bp, tf_free_dev, mem);
	bp_fini(&bp);
	assert_int_equal(tf_mem_delete(mem), 0);
}

/* checklist 20 */
static _Alignas(64) unsigned char ext_block[256];

static void test_free_buffer_claim_reset(void **state)
{
	(void)state;
	struct bp_pool bp;
	struct tf_mem *mem = pool_with_mem(&bp, &mod_std);
	uint64_t x = (uint64_t)(uintptr_t)ext_block;

	assert_int_equal(bp_register_mapping(&bp, x, ext_block, sizeof(ext_block), false), 0);
	assert_ptr_equal(bp_resolve_host_ptr(&bp, x + 5), ext_block + 5);
	bp_free_buffer(&bp, x);
	assert_int_equal(tf_freed_times(mem, x), 1);
	assert_int_equal(mem->frees, 1);
	bp_free_buffer(&bp, x); /* untracked now: no-op */
	assert_int_equal(tf_freed_times(mem, x), 1);
	assert_null(bp_resolve_host_ptr(&bp, x));
	assert_int_equal(log_count(TP_LOG_ERROR, "BufferPoolManager: no host mapping for dev_ptr="),
			 1);

	/* Registered again, it is freed again: the claim was dropped. */
	assert_int_equal(bp_register_mapping(&bp, x, ext_block, sizeof(ext_block), false), 0);
	bp_free_buffer(&bp, x);
	assert_int_equal(tf_freed_times(mem, x), 2);
	/* An interior address frees its block's base. */
	assert_int_equal(bp_register_mapping(&bp, x, ext_block, sizeof(ext_block), false), 0);
	bp_free_buffer(&bp, x + 64);
	assert_int_equal(tf_freed_times(mem, x), 3);
	assert_int_equal(mem->frees, 3);

	/* A pooled allocation is really freed, once. */
	void *host;
	uint64_t a = bp_alloc_and_register_block(&bp, 256, &host);
	assert_int_not_equal(a, 0);
	assert_int_equal(atomic_load(&bp.pool_bytes), 256);
	bp_free_buffer(&bp, a);
	assert_int_equal(tf_freed_times(mem, a), 1);
	assert_false(tf_is_live(mem, a));
	assert_int_equal(atomic_load(&bp.pool_bytes), 0);
	pool_teardown(&bp, mem);
}

/* checklist 21 */
static void test_release_owned_reaches_everything(void **state)
{
	(void)state;
	struct bp_pool bp;
	struct tf_mem *mem = pool_with_mem(&bp, &mod_std);
	void *host;
	uint64_t a = bp_alloc_and_register_block(&bp, 2 * BUF, &host);
	uint64_t b = bp_alloc_and_register_block(&bp, BUF, &host);
	uint64_t c = bp_alloc_and_register_block(&bp, BUF, &host);
	assert_true(a && b && c);
	uint64_t u = FAKE(7); /* untracked */

	assert_true(bp_push_recycled(&bp, 0, a, 0));
	struct tp_ready_info ri = ready_info(b, 1);
	assert_true(bp_push_ready(&bp, &ri, 2));
	assert_true(bp_notify_copy_done(&bp, c, 1, 3));
	assert_true(bp_notify_copy_done(&bp, a + BUF, 0, 3)); /* same block as a */
	bp_retire(&bp, 1, u, 2);
	assert_int_equal(bp_retired_count(&bp, 1, 2), 1);

	/* Teardown covers the whole arrays, not only the live shards. */
	bp_set_shard_count(&bp, 1);
	struct rel r = { .mem = mem };
	assert_int_equal(bp_release_owned_buffers(&bp, rel_fn, &r), 4);
	bp_set_shard_count(&bp, 4);
	assert_int_equal(r.n, 4);
	assert_int_equal(rel_times(&r, a), 1);
	assert_int_equal(rel_times(&r, b), 1);
	assert_int_equal(rel_times(&r, c), 1);
	assert_int_equal(rel_times(&r, u), 1);
	assert_int_equal(tf_freed_times(mem, a), 1);
	assert_int_equal(tf_freed_times(mem, u), 1);

	assert_true(bp_recycled_empty(&bp));
	struct tp_ready_info out;
	assert_false(bp_try_pop_ready(&bp, &out, 2));
	assert_int_equal(bp_retired_count(&bp, 1, 2), 0);
	assert_int_equal(bp_drain_done_into_recycled(&bp), 0);

	/* A base already released is not handed out again. */
	assert_true(bp_push_recycled(&bp, 0, a + BUF, 1));
	r.n = 0;
	assert_int_equal(bp_release_owned_buffers(&bp, rel_fn, &r), 0);
	assert_int_equal(r.n, 0);
	assert_true(bp_recycled_empty(&bp));

	bp_fini(&bp);
	assert_int_equal(mem->nlive, 0);
	assert_int_equal(tf_mem_delete(mem), 0);
}

/* ------------------------------------------------------------ extras */

/* The pointer map under concurrency: one thread allocates and registers
 * 2000 blocks (sorted inserts in random address order, array growth)
 * while another resolves addresses already registered. */
#define MAP_BLOCKS 2000
#define MAP_BLOCK_SIZE 256
#define MAP_MIN_LOOKUPS 20000

struct map_arg {
	struct bp_pool *bp;
	uint64_t dev[MAP_BLOCKS];
	char *host[MAP_BLOCKS];
	_Atomic int published;
	_Atomic bool resolver_started, done;
	_Atomic uint64_t lookups, wrong, during;
	int alloc_failed;
};

static void *map_registrar(void *arg)
{
	struct map_arg *a = arg;
	while (!atomic_load(&a->resolver_started))
		sched_yield();
	for (int i = 0; i < MAP_BLOCKS; i++) {
		void *host = NULL;
		uint64_t dev = bp_alloc_and_register_block(a->bp, MAP_BLOCK_SIZE, &host);
		if (!dev) {
			a->alloc_failed++;
			break;
		}
		a->dev[i] = dev;
		a->host[i] = host;
		/* release: dev[i] / host[i] are written before they are published. */
		atomic_store_explicit(&a->published, i + 1, memory_order_release);
		if (i % 64 == 0)
			sched_yield();
	}
	atomic_store(&a->done, true);
	return NULL;
}

static void *map_resolver(void *arg)
{
	struct map_arg *a = arg;
	uint32_t rng = 12345;
	atomic_store(&a->resolver_started, true);
	for (;;) {
		bool done = atomic_load(&a->done);
		uint64_t n_lookups = atomic_load_explicit(&a->lookups, memory_order_relaxed);
		if (done && n_lookups >= MAP_MIN_LOOKUPS)
			break;
		int n = atomic_load_explicit(&a->published, memory_order_acquire);
		if (n == 0) {
			sched_yield();
			continue;
		}
		rng = rng * 1103515245u + 12345u;
		int j = (int)((rng >> 8) % (uint32_t)n);
		uint64_t off = (rng >> 20) % MAP_BLOCK_SIZE;
		char *h = bp_resolve_host_ptr(a->bp, a->dev[j] + off);
		if (h != a->host[j] + off)
			atomic_fetch_add(&a->wrong, 1);
		if (bp_release_pointer_for(a->bp, a->dev[j] + off) != a->dev[j])
			atomic_fetch_add(&a->wrong, 1);
		uint64_t l = atomic_fetch_add_explicit(&a->lookups, 1, memory_order_relaxed);
		if (!done)
			atomic_fetch_add_explicit(&a->during, 1, memory_order_relaxed);
		/* A drain resolves once per buffer, not in a tight loop: let the
		 * registrar's write lock in (glibc rwlocks prefer readers). */
		if (l % 32 == 31)
			sched_yield();
	}
	return NULL;
}

struct order_check {
	struct tf_mem *mem;
	uint64_t last;
	int n, unordered;
};

static void order_fn(void *ud, uint64_t base)
{
	struct order_check *o = ud;
	if (o->n > 0 && base <= o->last)
		o->unordered++;
	o->last = base;
	o->n++;
	tf_free_dev(o->mem, base);
}

static void test_pointer_map_concurrent(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_std), 0);
	struct tf_mem *mem = tf_mem_new();
	assert_non_null(mem);
	mem->distinct_host = true; /* a wrong range would give a wrong host */
	struct tp_memops ops = tf_memops(mem, true, false);
	bp_set_memory_context(&bp, &ops, NULL, NULL, 0);

	struct map_arg *a = calloc(1, sizeof(*a));
	assert_non_null(a);
	a->bp = &bp;
	pthread_t reg, res;
	assert_int_equal(pthread_create(&res, NULL, map_resolver, a), 0);
	assert_int_equal(pthread_create(&reg, NULL, map_registrar, a), 0);
	pthread_join(reg, NULL);
	pthread_join(res, NULL);

	assert_int_equal(a->alloc_failed, 0);
	assert_int_equal(atomic_load(&a->published), MAP_BLOCKS);
	assert_int_equal(atomic_load(&a->wrong), 0);
	assert_true(atomic_load(&a->lookups) >= MAP_MIN_LOOKUPS);
	assert_int_equal(log_count(TP_LOG_ERROR, "no host mapping"), 0);
	assert_int_equal(bp.nranges, MAP_BLOCKS);
	assert_int_equal(mem->allocs, MAP_BLOCKS);
	assert_int_equal(mem->regs, MAP_BLOCKS);
	assert_int_equal(atomic_load(&bp.pool_bytes), (uint64_t)MAP_BLOCKS * MAP_BLOCK_SIZE);
	/* Every block still resolves exactly afterwards. */
	for (int i = 0; i < MAP_BLOCKS; i++)
		assert_ptr_equal(bp_resolve_host_ptr(&bp, a->dev[i] + MAP_BLOCK_SIZE - 1),
				 a->host[i] + MAP_BLOCK_SIZE - 1);
	print_message("pointer map: %llu lookups, %llu during registration\n",
		      (unsigned long long)atomic_load(&a->lookups),
		      (unsigned long long)atomic_load(&a->during));

	/* Init rollback hands every base out once, in ascending order. */
	struct order_check o = { .mem = mem };
	assert_int_equal(bp_release_all_owned(&bp, order_fn, &o), MAP_BLOCKS);
	assert_int_equal(o.n, MAP_BLOCKS);
	assert_int_equal(o.unordered, 0);
	assert_int_equal(bp.nranges, 0);
	assert_int_equal(atomic_load(&bp.pool_bytes), 0);
	free(a);
	bp_fini(&bp);
	assert_int_equal(tf_mem_delete(mem), 0);
}

/* bp_read_range / bp_write_range: same offset on the device, -EINVAL for
 * a field outside the region, no copy then; no-ops on a shared mapping. */
static void test_range_transport(void **state)
{
	(void)state;
	enum { SZ = 4096 };
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_std), 0);
	struct tf_mem *mem = tf_mem_new();
	assert_non_null(mem);
	struct tp_memops ops = tf_memops(mem, false, true);
	unsigned char *dev = aligned_alloc(64, SZ), *host = aligned_alloc(64, SZ);
	assert_true(dev && host);
	memset(dev, 0xAA, SZ);
	memset(host, 0, SZ);

	/* No region yet: no-op even with copy ops. */
	bp_set_memory_context(&bp, &ops, NULL, NULL, 0);
	assert_true(bp.shadow);
	uint64_t outside = 0;
	assert_int_equal(bp_write_range(&bp, &outside, sizeof(outside)), 0);
	assert_int_equal(mem->copies_to, 0);

	bp_set_memory_context(&bp, &ops, dev, host, SZ);
	memcpy(host + 100, "ABCDEFGH", 8);
	assert_int_equal(bp_write_range(&bp, host + 100, 8), 0);
	assert_memory_equal(dev + 100, "ABCDEFGH", 8);
	assert_int_equal(dev[99], 0xAA);
	assert_int_equal(dev[108], 0xAA);
	assert_int_equal(mem->copies_to, 1);
	memcpy(dev + 200, "wxyz", 4);
	assert_int_equal(bp_read_range(&bp, host + 200, 4), 0);
	assert_memory_equal(host + 200, "wxyz", 4);
	assert_int_equal(host[204], 0);
	assert_int_equal(mem->copies_from, 1);
	/* The whole region is inside. */
	assert_int_equal(bp_read_range(&bp, host, SZ), 0);
	assert_int_equal(mem->copies_from, 2);
	assert_int_equal(bp_write_range(&bp, host + SZ - 8, 8), 0);
	assert_int_equal(mem->copies_to, 2);

	/* Outside: an unrelated field, and one straddling the end. */
	memset(dev + SZ - 4, 0x11, 4);
	memset(host + SZ - 4, 0x22, 4);
	assert_int_equal(bp_write_range(&bp, &outside, sizeof(outside)), -EINVAL);
	assert_int_equal(bp_read_range(&bp, &outside, sizeof(outside)), -EINVAL);
	assert_int_equal(bp_write_range(&bp, host + SZ - 4, 8), -EINVAL);
	assert_int_equal(bp_read_range(&bp, host + SZ - 4, 8), -EINVAL);
	assert_int_equal(bp_write_range(&bp, host, SZ + 1), -EINVAL);
	assert_int_equal(mem->copies_to, 2);
	assert_int_equal(mem->copies_from, 2);
	assert_int_equal(dev[SZ - 1], 0x11);
	assert_int_equal(host[SZ - 1], 0x22);
	assert_int_equal(outside, 0);
	assert_int_equal(log_count(TP_LOG_ERROR, "BufferPoolManager::write_range_to_device: field ["),
			 3);
	assert_int_equal(
		log_count(TP_LOG_ERROR, "BufferPoolManager::read_range_from_device: field ["), 2);
	assert_int_equal(log_count(TP_LOG_ERROR, "outside shm"), 5);

	/* Buffers come in whole. */
	memset(dev + 512, 0x5C, 64);
	assert_int_equal(bp_copy_buffer_from_device(&bp, host + 1024, (uint64_t)(uintptr_t)(dev + 512),
						    64),
			 0);
	assert_int_equal(host[1024], 0x5C);
	assert_int_equal(host[1087], 0x5C);
	assert_int_equal(mem->copies_from, 3);

	/* Shared mapping: the helpers do nothing at all. */
	struct tp_memops svm = tf_memops(mem, false, false);
	bp_set_memory_context(&bp, &svm, dev, dev, SZ);
	assert_false(bp.shadow);
	assert_int_equal(bp_read_range(&bp, &outside, sizeof(outside)), 0);
	assert_int_equal(bp_write_range(&bp, dev + 8, 8), 0);
	assert_int_equal(bp_copy_buffer_from_device(&bp, host, (uint64_t)(uintptr_t)dev, 64), 0);
	assert_int_equal(mem->copies_to, 2);
	assert_int_equal(mem->copies_from, 3);
	assert_int_equal(log_count(TP_LOG_ERROR, "outside shm"), 5);

	free(dev);
	free(host);
	bp_fini(&bp);
	assert_int_equal(tf_mem_delete(mem), 0);
}

/* pool_cap_bytes: an allocation that would pass the cap is refused without
 * calling alloc, counted in alloc_refused; a batch the cap must refuse
 * after that is not even tried (no busy retry at the ceiling) until
 * freeing makes room again. */
static void test_pool_cap(void **state)
{
	(void)state;
	struct bp_pool bp;
	struct tf_mem *mem = pool_with_mem(&bp, &mod_std);
	bp.pool_cap_bytes = 8192;
	void *host = NULL;
	uint64_t a = bp_alloc_and_register_block(&bp, 4096, &host);
	assert_int_not_equal(a, 0);
	uint64_t b = bp_alloc_and_register_block(&bp, 4096, &host);
	assert_int_not_equal(b, 0);
	assert_int_equal(atomic_load(&bp.pool_bytes), 8192); /* exactly the cap is fine */
	assert_int_equal(atomic_load(&bp.alloc_refused), 0);

	host = (void *)&host;
	assert_int_equal(bp_alloc_and_register_block(&bp, 64, &host), 0);
	assert_null(host);
	assert_int_equal(atomic_load(&bp.alloc_refused), 1);
	assert_int_equal(mem->allocs, 2); /* alloc was not even called */
	assert_int_equal(atomic_load(&bp.n_allocs), 2);
	assert_true(atomic_load(&bp.cap_hit));
	assert_int_equal(bp_allocate_recycled_batch(&bp, 0, BUF, 2, 0), 0);
	assert_int_equal(atomic_load(&bp.alloc_refused), 1); /* not retried */
	assert_int_equal(bp_recycled_count(&bp, 0, 0), 0);
	assert_int_equal(mem->allocs, 2);
	assert_int_equal(log_count(TP_LOG_ERROR, "register failed"), 0);

	/* A foreign mapping does not count against the cap. */
	uint64_t x = (uint64_t)(uintptr_t)ext_block;
	assert_int_equal(bp_register_mapping(&bp, x, ext_block, sizeof(ext_block), false), 0);
	assert_int_equal(atomic_load(&bp.pool_bytes), 8192);
	bp_free_buffer(&bp, x);
	assert_int_equal(atomic_load(&bp.pool_bytes), 8192);

	bp_free_buffer(&bp, a);
	assert_int_equal(atomic_load(&bp.pool_bytes), 4096);
	assert_false(atomic_load(&bp.cap_hit)); /* room again: tried again */
	uint64_t c = bp_alloc_and_register_block(&bp, 4096, &host);
	assert_int_not_equal(c, 0);
	assert_non_null(host);
	assert_int_equal(mem->allocs, 3);
	assert_int_equal(atomic_load(&bp.alloc_refused), 1);
	assert_int_equal(atomic_load(&bp.pool_bytes), 8192);
	assert_int_equal(bp_allocate_recycled_batch(&bp, 0, BUF, 2, 0), 0);
	assert_int_equal(atomic_load(&bp.alloc_refused), 2);

	/* Without a cap the same request succeeds. */
	bp.pool_cap_bytes = 0;
	uint64_t d = bp_alloc_and_register_block(&bp, 64, &host);
	assert_int_not_equal(d, 0);
	assert_int_equal(atomic_load(&bp.alloc_refused), 2);
	pool_teardown(&bp, mem);
}

/* bp_free_buffer claims the block like the release functions do: a base
 * already handed to a release function is not freed a second time. */
static void test_free_buffer_after_release(void **state)
{
	(void)state;
	struct bp_pool bp;
	struct tf_mem *mem = pool_with_mem(&bp, &mod_std);
	void *host;
	uint64_t a = bp_alloc_and_register_block(&bp, 2 * BUF, &host);
	assert_int_not_equal(a, 0);
	assert_true(bp_push_recycled(&bp, 0, a, 0));
	struct rel r = { .mem = mem };
	assert_int_equal(bp_release_owned_buffers(&bp, rel_fn, &r), 1);
	assert_int_equal(tf_freed_times(mem, a), 1);
	/* e.g. a collector freeing its free-queue buffers afterwards */
	bp_free_buffer(&bp, a + BUF);
	bp_free_buffer(&bp, a);
	assert_int_equal(tf_freed_times(mem, a), 1);
	assert_int_equal(mem->frees, 1);
	bp_fini(&bp);
	assert_int_equal(tf_mem_delete(mem), 0);
}

/* bp_register_mapping refuses overlaps and overwrites a same-start entry. */
static void test_register_mapping_rules(void **state)
{
	(void)state;
	struct bp_pool bp;
	assert_int_equal(bp_init(&bp, &mod_std), 0);
	char *h1 = (char *)(uintptr_t)0x1000, *h2 = (char *)(uintptr_t)0x9000;
	uint64_t x = FAKE(0);
	assert_int_equal(bp_register_mapping(&bp, x, h1, 0x100, false), 0);
	assert_int_equal(bp_register_mapping(&bp, x + 0x80, h2, 0x100, false), -EEXIST);
	assert_int_equal(bp_register_mapping(&bp, x - 0x80, h2, 0x100, false), -EEXIST);
	assert_int_equal(bp_register_mapping(&bp, x + 0x100, h2, 0x100, false), 0); /* adjacent */
	assert_int_equal(bp_register_mapping(&bp, 0, h2, 0x100, false), -EINVAL);
	assert_ptr_equal(bp_resolve_host_ptr(&bp, x + 0xFF), h1 + 0xFF);
	assert_ptr_equal(bp_resolve_host_ptr(&bp, x + 0x100), h2);
	assert_int_equal(bp_register_mapping(&bp, x, h2, 0x40, false), 0); /* overwrite */
	assert_ptr_equal(bp_resolve_host_ptr(&bp, x + 0x10), h2 + 0x10);
	assert_null(bp_resolve_host_ptr(&bp, x + 0x40));
	assert_int_equal(bp.nranges, 2);
	bp_clear_mappings(&bp);
	assert_int_equal(bp.nranges, 0);
	assert_null(bp_resolve_host_ptr(&bp, x));
	bp_fini(&bp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_spsc_concurrent_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shard_capacity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ready_shards_isolated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ready_shard_capacity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_pop_ready_wakes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_done_drain_origin_without_watermark, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_done_drain_per_shard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_done_entry_pointer_and_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_startup_pop_any_live_shard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ring_capacities_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ring_capacities_independent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watermark_follows_shard_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watermark_shrinks_with_shards, setup, teardown),
		cmocka_unit_test_setup_teardown(test_skewed_rebalance_cheaper, setup, teardown),
		cmocka_unit_test_setup_teardown(test_balanced_no_alloc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_notify_drain_pop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_gap_batching, setup, teardown),
		cmocka_unit_test_setup_teardown(test_process_entry_full_shard_retires, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_carving_and_ranges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_buffer_claim_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_owned_reaches_everything, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pointer_map_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_transport, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_buffer_after_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register_mapping_rules, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
