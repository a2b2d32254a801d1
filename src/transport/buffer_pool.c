/*
 * buffer_pool.c — the host data layer.  spec/framework.md §6.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/prefault.h"
#include "transport/buffer_pool.h"

#define BP_DEFAULT_RING 1024u

static struct bp_lane *lane(struct bp_pool *bp, int shard, int kind)
{
	return &bp->recycled[(size_t)shard * TP_MAX_KINDS + (size_t)kind];
}

static struct bp_retired *retired(struct bp_pool *bp, int shard, int kind)
{
	return &bp->retired[(size_t)shard * TP_MAX_KINDS + (size_t)kind];
}

static bool kind_ok(const struct bp_pool *bp, int kind)
{
	return kind >= 0 && kind < bp->m->kinds;
}

int bp_norm_shard(const struct bp_pool *bp, int shard)
{
	if (shard < 0)
		return 0;
	return shard % bp->shard_count;
}

int bp_init(struct bp_pool *bp, const struct tp_module *m)
{
	memset(bp, 0, sizeof(*bp));
	if (!m || m->kinds < 1 || m->kinds > TP_MAX_KINDS)
		return -EINVAL;
	bp->m = m;
	bp->max_shards = m->max_collector_threads > 0 ? m->max_collector_threads : 1;
	bp->shard_count = bp->max_shards;
	bp->ready_cap = m->ready_queue_size ? m->ready_queue_size : BP_DEFAULT_RING;
	bp->done_cap = m->host_pool_queue_size ? m->host_pool_queue_size : BP_DEFAULT_RING;
	bp->recycled_cap = m->host_recycled_queue_size ? m->host_recycled_queue_size : bp->done_cap;

	size_t n = (size_t)bp->max_shards;
	bp->ready = calloc(n, sizeof(*bp->ready));
	bp->done = calloc(n, sizeof(*bp->done));
	bp->recycled = calloc(n * TP_MAX_KINDS, sizeof(*bp->recycled));
	bp->retired = calloc(n * TP_MAX_KINDS, sizeof(*bp->retired));
	if (!bp->ready || !bp->done || !bp->recycled || !bp->retired)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		if (tp_spsc_init(&bp->ready[i].ring, bp->ready_cap, sizeof(struct tp_ready_info)) ||
		    tp_spsc_init(&bp->done[i], bp->done_cap, sizeof(struct bp_done)))
			goto fail;
		pthread_mutex_init(&bp->ready[i].mu, NULL);
		pthread_cond_init(&bp->ready[i].cv, NULL);
		for (int k = 0; k < TP_MAX_KINDS; k++) {
			struct bp_lane *l = lane(bp, (int)i, k);
			if (tp_spsc_init(&l->ring, bp->recycled_cap, sizeof(uint64_t)))
				goto fail;
			/* relaxed: initialisation; no other thread sees the
			 * pool yet (the host threads start later). */
			atomic_flag_clear_explicit(&l->consumer_busy, memory_order_relaxed);
			pthread_mutex_init(&retired(bp, (int)i, k)->mu, NULL);
		}
	}
	pthread_rwlock_init(&bp->map_lock, NULL);
	return 0;
fail:
	bp_fini(bp);
	return -ENOMEM;
}

void bp_fini(struct bp_pool *bp)
{
	if (!bp->m)
		return;
	for (int i = 0; i < bp->max_shards; i++) {
		if (bp->ready) {
			tp_spsc_fini(&bp->ready[i].ring);
			pthread_mutex_destroy(&bp->ready[i].mu);
			pthread_cond_destroy(&bp->ready[i].cv);
		}
		if (bp->done)
			tp_spsc_fini(&bp->done[i]);
		for (int k = 0; k < TP_MAX_KINDS; k++) {
			if (bp->recycled)
				tp_spsc_fini(&lane(bp, i, k)->ring);
			if (bp->retired) {
				free(retired(bp, i, k)->ptrs);
				pthread_mutex_destroy(&retired(bp, i, k)->mu);
			}
		}
	}
	free(bp->ready);
	free(bp->done);
	free(bp->recycled);
	free(bp->retired);
	free(bp->ranges);
	pthread_rwlock_destroy(&bp->map_lock);
	memset(bp, 0, sizeof(*bp));
}

void bp_set_shard_count(struct bp_pool *bp, int n)
{
	if (n < 1 || n > bp->max_shards) {
		TP_ERROR("BufferPoolManager: shard_count %d out of range [1, %d]; clamping", n,
			 bp->max_shards);
		n = n < 1 ? 1 : bp->max_shards;
	}
	bp->shard_count = n;
}

void bp_set_memory_context(struct bp_pool *bp, const struct tp_memops *ops, void *shm_dev,
			   void *shm_host, size_t shm_size)
{
	bp->ops = *ops;
	bp->shadow = ops->copy_to_device && ops->copy_from_device;
	bp->shm_dev = shm_dev;
	bp->shm_host = shm_host;
	bp->shm_size = shm_size;
}

uint32_t bp_buffer_size(const struct bp_pool *bp, int kind)
{
	if (!kind_ok(bp, kind))
		return 0;
	return tp_buffer_bytes(bp->m->record_size[kind], bp->m->records_per_buffer[kind]);
}

/* ---------------------------------------------------------------- ready */

bool bp_push_ready(struct bp_pool *bp, const struct tp_ready_info *info, int shard)
{
	int s = bp_norm_shard(bp, shard);
	struct bp_ready_shard *r = &bp->ready[s];
	if (!tp_spsc_push(&r->ring, info)) {
		TP_ERROR("BufferPoolManager: ready queue full for shard=%d capacity=%zu", s,
			 bp->ready_cap);
		return false;
	}
	/* release: a waiter that sees the new epoch also sees the item. */
	atomic_fetch_add_explicit(&r->epoch, 1, memory_order_release);
	pthread_mutex_lock(&r->mu);
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return true;
}

void bp_wake_ready(struct bp_pool *bp, int shard)
{
	struct bp_ready_shard *r = &bp->ready[bp_norm_shard(bp, shard)];
	/* release: as in bp_push_ready, pairs with the waiter's acquire
	 * loads of the epoch in bp_wait_pop_ready: a waiter that sees the
	 * bump also sees the items pushed before this wake. */
	atomic_fetch_add_explicit(&r->epoch, 1, memory_order_release);
	pthread_mutex_lock(&r->mu);
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

bool bp_try_pop_ready(struct bp_pool *bp, struct tp_ready_info *out, int shard)
{
	return tp_spsc_pop(&bp->ready[bp_norm_shard(bp, shard)].ring, out);
}

bool bp_wait_pop_ready(struct bp_pool *bp, struct tp_ready_info *out, int timeout_ms, int shard)
{
	struct bp_ready_shard *r = &bp->ready[bp_norm_shard(bp, shard)];
	if (tp_spsc_pop(&r->ring, out))
		return true;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->mu);
	/* acquire: pairs with the pusher's release bump of the epoch. */
	uint64_t seen = atomic_load_explicit(&r->epoch, memory_order_acquire);
	int rc = 0;
	/* The pusher signals under the mutex after bumping the epoch, so a
	 * push between our pop attempt and the wait is never missed.
	 * acquire: as the load of `seen` above. */
	while (rc == 0 && tp_spsc_empty(&r->ring) &&
	       atomic_load_explicit(&r->epoch, memory_order_acquire) == seen)
		rc = pthread_cond_timedwait(&r->cv, &r->mu, &dl);
	pthread_mutex_unlock(&r->mu);
	return tp_spsc_pop(&r->ring, out);
}

/* ----------------------------------------------------------------- done */

bool bp_notify_copy_done(struct bp_pool *bp, uint64_t dev, int kind, int shard)
{
	int s = bp_norm_shard(bp, shard);
	struct bp_done d = {.dev_ptr = dev, .kind = kind};
	if (!tp_spsc_push(&bp->done[s], &d)) {
		TP_ERROR("BufferPoolManager: done queue full for shard=%d kind=%d capacity=%zu", s,
			 kind, bp->done_cap);
		return false;
	}
	return true;
}

bool bp_try_notify_copy_done(struct bp_pool *bp, uint64_t dev, int kind, int shard)
{
	struct bp_done d = {.dev_ptr = dev, .kind = kind};
	return tp_spsc_push(&bp->done[bp_norm_shard(bp, shard)], &d);
}

bool bp_try_pop_done(struct bp_pool *bp, struct bp_done *out, int shard)
{
	return tp_spsc_pop(&bp->done[bp_norm_shard(bp, shard)], out);
}

/* ------------------------------------------------------------- recycled */

bool bp_push_recycled(struct bp_pool *bp, int kind, uint64_t dev, int shard)
{
	int s = bp_norm_shard(bp, shard);
	if (!kind_ok(bp, kind))
		return false;
	if (!tp_spsc_push(&lane(bp, s, kind)->ring, &dev)) {
		TP_ERROR("BufferPoolManager: recycled queue full for shard=%d kind=%d capacity=%zu",
			 s, kind, bp->recycled_cap);
		return false;
	}
	return true;
}

uint64_t bp_pop_recycled(struct bp_pool *bp, int kind, int shard)
{
	if (!kind_ok(bp, kind))
		return 0;
	struct bp_lane *l = lane(bp, bp_norm_shard(bp, shard), kind);
	uint64_t dev = 0;
	/* acquire/release flag: one consumer at a time; the ring's own
	 * acquire/release orders the items. */
	while (atomic_flag_test_and_set_explicit(&l->consumer_busy, memory_order_acquire))
		;
	if (!tp_spsc_pop(&l->ring, &dev))
		dev = 0;
	atomic_flag_clear_explicit(&l->consumer_busy, memory_order_release);
	return dev;
}

uint64_t bp_pop_recycled_for_startup(struct bp_pool *bp, int kind)
{
	for (int s = 0; s < bp->shard_count; s++) {
		uint64_t dev = bp_pop_recycled(bp, kind, s);
		if (dev)
			return dev;
	}
	return 0;
}

size_t bp_recycled_count(struct bp_pool *bp, int kind, int shard)
{
	if (!kind_ok(bp, kind))
		return 0;
	return tp_spsc_size(&lane(bp, bp_norm_shard(bp, shard), kind)->ring);
}

size_t bp_recycled_count_all(struct bp_pool *bp, int kind)
{
	size_t n = 0;
	for (int s = 0; s < bp->shard_count; s++)
		n += bp_recycled_count(bp, kind, s);
	return n;
}

bool bp_recycled_empty(struct bp_pool *bp)
{
	for (int k = 0; k < bp->m->kinds; k++)
		if (bp_recycled_count_all(bp, k))
			return false;
	return true;
}

void bp_set_warm_min(struct bp_pool *bp, int kind, uint32_t n)
{
	if (kind_ok(bp, kind))
		bp->warm_min[kind] = n;
}

/* The module's warm target for kind, raised to bp->warm_min; unclamped. */
static size_t warm_target_raw(struct bp_pool *bp, int kind)
{
	int t = bp->m->recycled_warm_target ? bp->m->recycled_warm_target(kind, bp->shard_count)
					    : 0;
	size_t n = t > 0 ? (size_t)t : 0;
	return n > bp->warm_min[kind] ? n : bp->warm_min[kind];
}

static size_t warm_target(struct bp_pool *bp, int kind)
{
	size_t t = warm_target_raw(bp, kind);
	return t > bp->recycled_cap ? bp->recycled_cap : t;
}

size_t bp_warm_target(struct bp_pool *bp, int kind)
{
	return kind_ok(bp, kind) ? warm_target(bp, kind) : 0;
}

int bp_select_recycled_shard(struct bp_pool *bp, int kind, int origin)
{
	int o = bp_norm_shard(bp, origin);
	size_t target = warm_target(bp, kind);
	if (target == 0)
		return o;
	int best = o;
	size_t best_deficit = 0;
	for (int i = 1; i <= bp->shard_count; i++) {
		int s = (o + i) % bp->shard_count;
		size_t cur = bp_recycled_count(bp, kind, s);
		size_t deficit = cur < target ? target - cur : 0;
		if (deficit > best_deficit) {
			best = s;
			best_deficit = deficit;
		}
	}
	return best;
}

size_t bp_drain_done_into_recycled_shard(struct bp_pool *bp, int shard)
{
	int s = bp_norm_shard(bp, shard);
	struct bp_done d;
	size_t n = 0;
	while (tp_spsc_pop(&bp->done[s], &d)) {
		if (!kind_ok(bp, d.kind) || !tp_spsc_push(&lane(bp, s, d.kind)->ring, &d.dev_ptr))
			bp_retire(bp, kind_ok(bp, d.kind) ? d.kind : 0, d.dev_ptr, s);
		n++;
	}
	return n;
}

size_t bp_drain_done_into_recycled(struct bp_pool *bp)
{
	size_t n = 0;
	struct bp_done d;
	for (int origin = 0; origin < bp->shard_count; origin++) {
		while (tp_spsc_pop(&bp->done[origin], &d)) {
			n++;
			if (!kind_ok(bp, d.kind)) {
				bp_retire(bp, 0, d.dev_ptr, origin);
				continue;
			}
			int target = bp_select_recycled_shard(bp, d.kind, origin);
			if (tp_spsc_push(&lane(bp, target, d.kind)->ring, &d.dev_ptr))
				continue;
			if (target != origin &&
			    tp_spsc_push(&lane(bp, origin, d.kind)->ring, &d.dev_ptr))
				continue;
			bp_retire(bp, d.kind, d.dev_ptr, origin);
		}
	}
	return n;
}

size_t bp_replenish_recycled_pools(struct bp_pool *bp)
{
	return bp_replenish_recycled_pools_low(bp, NULL);
}

size_t bp_replenish_recycled_pools_low(struct bp_pool *bp, size_t *low)
{
	size_t added = 0;
	if (low)
		*low = 0;
	for (int k = 0; k < bp->m->kinds; k++) {
		uint32_t size = bp_buffer_size(bp, k);
		size_t target = warm_target_raw(bp, k);
		if (size == 0 || target == 0)
			continue;
		if (target > bp->recycled_cap) {
			if (!atomic_exchange_explicit(&bp->warned_target, true, memory_order_relaxed))
				TP_WARN("%s: recycled warm target too large for every shard, kind=%d: "
				"target=%zu capacity=%zu; clamping",
				bp->m->name, k, target, bp->recycled_cap);
			target = bp->recycled_cap;
		}
		for (int s = 0; s < bp->shard_count; s++) {
			size_t cur = bp_recycled_count(bp, k, s);
			if (cur >= target)
				continue;
			size_t want = target - cur;
			if (want < bp->m->slot_count)
				want = bp->m->slot_count;
			if (want > bp->recycled_cap - cur)
				want = bp->recycled_cap - cur;
			size_t got = bp_allocate_recycled_batch(bp, k, size, (int)want, s);
			added += got;
			/* A lane the cap keeps short is refilled only by returned
			 * buffers, which every tick routes anyway: it is no reason
			 * to look again sooner (that was a busy retry). relaxed: a
			 * hint, set by the refusal on this thread. */
			if (low && cur * 2 < target &&
			    (got || !atomic_load_explicit(&bp->cap_hit, memory_order_relaxed)))
				++*low;
		}
	}
	return added;
}

/* -------------------------------------------------------------- retired */

void bp_retire(struct bp_pool *bp, int kind, uint64_t dev, int shard)
{
	if (!dev)
		return;
	struct bp_retired *r = retired(bp, bp_norm_shard(bp, shard), kind_ok(bp, kind) ? kind : 0);
	pthread_mutex_lock(&r->mu);
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		uint64_t *p = realloc(r->ptrs, cap * sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&r->mu);
			TP_ERROR("BufferPoolManager: cannot retire buffer %#llx: out of memory",
				 (unsigned long long)dev);
			return;
		}
		r->ptrs = p;
		r->cap = cap;
	}
	r->ptrs[r->n++] = dev;
	pthread_mutex_unlock(&r->mu);
}

size_t bp_retired_count(struct bp_pool *bp, int kind, int shard)
{
	struct bp_retired *r = retired(bp, bp_norm_shard(bp, shard), kind_ok(bp, kind) ? kind : 0);
	pthread_mutex_lock(&r->mu);
	size_t n = r->n;
	pthread_mutex_unlock(&r->mu);
	return n;
}

/* ---------------------------------------------------------- pointer map */

/* Index of the range containing dev, or -1.  Caller holds map_lock. */
static ptrdiff_t find_range(const struct bp_pool *bp, uint64_t dev)
{
	size_t lo = 0, hi = bp->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (bp->ranges[mid].dev_begin <= dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	const struct bp_range *r = &bp->ranges[lo - 1];
	return dev < r->dev_end ? (ptrdiff_t)(lo - 1) : -1;
}

int bp_register_mapping(struct bp_pool *bp, uint64_t dev, void *host, size_t size,
			bool shadow_owned)
{
	if (!dev || !host || size == 0)
		return -EINVAL;
	int rc = 0;
	pthread_rwlock_wrlock(&bp->map_lock);
	size_t lo = 0;
	while (lo < bp->nranges && bp->ranges[lo].dev_begin < dev)
		lo++;
	if (lo < bp->nranges && bp->ranges[lo].dev_begin == dev) {
		bp->ranges[lo] = (struct bp_range){dev, dev + size, host, shadow_owned, false, false};
		goto out;
	}
	if ((lo > 0 && bp->ranges[lo - 1].dev_end > dev) ||
	    (lo < bp->nranges && bp->ranges[lo].dev_begin < dev + size)) {
		rc = -EEXIST;
		goto out;
	}
	if (bp->nranges == bp->ranges_cap) {
		size_t cap = bp->ranges_cap ? bp->ranges_cap * 2 : 64;
		struct bp_range *p = realloc(bp->ranges, cap * sizeof(*p));
		if (!p) {
			rc = -ENOMEM;
			goto out;
		}
		bp->ranges = p;
		bp->ranges_cap = cap;
	}
	memmove(&bp->ranges[lo + 1], &bp->ranges[lo], (bp->nranges - lo) * sizeof(*bp->ranges));
	bp->ranges[lo] = (struct bp_range){dev, dev + size, host, shadow_owned, false, false};
	bp->nranges++;
out:
	pthread_rwlock_unlock(&bp->map_lock);
	return rc;
}

void *bp_resolve_host_range(struct bp_pool *bp, uint64_t dev, size_t size)
{
	void *host = NULL;
	pthread_rwlock_rdlock(&bp->map_lock);
	ptrdiff_t i = find_range(bp, dev);
	if (i >= 0 && dev + size <= bp->ranges[i].dev_end)
		host = (char *)bp->ranges[i].host_base + (dev - bp->ranges[i].dev_begin);
	pthread_rwlock_unlock(&bp->map_lock);
	if (!host)
		TP_ERROR("BufferPoolManager: no host mapping for dev_ptr=%#llx (size %zu)",
			 (unsigned long long)dev, size);
	return host;
}

void *bp_resolve_host_ptr(struct bp_pool *bp, uint64_t dev)
{
	return bp_resolve_host_range(bp, dev, 1);
}

uint64_t bp_release_pointer_for(struct bp_pool *bp, uint64_t dev)
{
	pthread_rwlock_rdlock(&bp->map_lock);
	ptrdiff_t i = find_range(bp, dev);
	uint64_t base = i >= 0 ? bp->ranges[i].dev_begin : dev;
	pthread_rwlock_unlock(&bp->map_lock);
	return base;
}

uint64_t bp_alloc_and_register_block(struct bp_pool *bp, size_t size, void **host_out)
{
	*host_out = NULL;
	if (!bp->ops.alloc || size == 0)
		return 0;
	if (bp->pool_cap_bytes &&
	    atomic_load_explicit(&bp->pool_bytes, memory_order_relaxed) + size > bp->pool_cap_bytes) {
		atomic_fetch_add_explicit(&bp->alloc_refused, 1, memory_order_relaxed);
		/* relaxed: a hint against retrying; the cap check is the rule. */
		atomic_store_explicit(&bp->cap_hit, true, memory_order_relaxed);
		return 0;
	}
	void *dev = bp->ops.alloc(bp->ops.ud, size);
	if (!dev)
		return 0;
	atomic_fetch_add_explicit(&bp->n_allocs, 1, memory_order_relaxed);
	void *host = NULL;
	bool shadow_owned = false;
	int rc = 0;
	if (bp->ops.reg) {
		rc = bp->ops.reg(bp->ops.ud, dev, size, &host);
	} else if (bp->shadow) {
		/* a5: a zeroed shadow, pushed so both sides agree. Its pages are
		 * faulted in here (base/prefault.h), by prof_open / prof_start for
		 * the seeded buffers and the replenish thread for later ones, not
		 * by the drain that first copies a buffer in while the device
		 * waits for it back. */
		host = tp_alloc_prefaulted(size);
		shadow_owned = host != NULL;
		rc = host ? bp->ops.copy_to_device(bp->ops.ud, dev, host, size) : -ENOMEM;
	} else {
		host = dev; /* a2a3 shared mapping: the host reads device memory */
	}
	if (rc != 0 || !host) {
		TP_ERROR("BufferPoolManager: register failed: %d", rc ? rc : -ENOMEM);
		if (shadow_owned)
			free(host);
		bp->ops.free_(bp->ops.ud, dev);
		return 0;
	}
	atomic_fetch_add_explicit(&bp->n_regs, 1, memory_order_relaxed);
	if (bp_register_mapping(bp, (uint64_t)(uintptr_t)dev, host, size, shadow_owned) != 0) {
		TP_ERROR("BufferPoolManager: cannot record mapping for %p", dev);
		if (shadow_owned)
			free(host);
		bp->ops.free_(bp->ops.ud, dev);
		return 0;
	}
	pthread_rwlock_wrlock(&bp->map_lock);
	bp->ranges[find_range(bp, (uint64_t)(uintptr_t)dev)].pooled = true;
	pthread_rwlock_unlock(&bp->map_lock);
	atomic_fetch_add_explicit(&bp->pool_bytes, size, memory_order_relaxed);
	*host_out = host;
	return (uint64_t)(uintptr_t)dev;
}

size_t bp_allocate_recycled_batch(struct bp_pool *bp, int kind, size_t size, int count, int shard)
{
	if (count <= 0 || size == 0 || !kind_ok(bp, kind))
		return 0;
	size_t stride = (size + 63u) & ~(size_t)63u;
	if (stride < size || stride > SIZE_MAX / (size_t)count) {
		TP_ERROR("%s: batch allocation overflows (size=%zu count=%d)", bp->m->name, size,
			 count);
		return 0;
	}
	/* At the ceiling: a block the cap refused before is refused again
	 * (the pool does not shrink while it runs), so do not retry it.
	 * relaxed: a hint; the cap check in the allocation is the rule. */
	if (bp->pool_cap_bytes && atomic_load_explicit(&bp->cap_hit, memory_order_relaxed) &&
	    atomic_load_explicit(&bp->pool_bytes, memory_order_relaxed) + stride * (size_t)count >
		    bp->pool_cap_bytes)
		return 0;
	void *host;
	uint64_t base = bp_alloc_and_register_block(bp, stride * (size_t)count, &host);
	if (!base)
		return 0;
	size_t placed = 0;
	for (int i = 0; i < count; i++) {
		uint64_t dev = base + (uint64_t)i * stride;
		int s = shard >= 0 ? shard : i;
		if (bp_push_recycled(bp, kind, dev, s))
			placed++;
		else
			bp_retire(bp, kind, dev, s);
	}
	if (placed == 0)
		TP_ERROR("%s: batch of %d buffers could not be placed (kind=%d shard=%d)",
			 bp->m->name, count, kind, shard);
	return placed;
}

void bp_free_buffer(struct bp_pool *bp, uint64_t dev)
{
	if (!dev)
		return;
	pthread_rwlock_wrlock(&bp->map_lock);
	ptrdiff_t i = find_range(bp, dev);
	/* Untracked, or already handed to a release function by
	 * bp_release_owned_buffers (the claim): freeing it again would be a
	 * double free (spec §6.4 free_buffer claims first). */
	if (i < 0 || bp->ranges[i].claimed) {
		pthread_rwlock_unlock(&bp->map_lock);
		return;
	}
	struct bp_range r = bp->ranges[i];
	memmove(&bp->ranges[i], &bp->ranges[i + 1],
		(bp->nranges - (size_t)i - 1) * sizeof(*bp->ranges));
	bp->nranges--;
	pthread_rwlock_unlock(&bp->map_lock);
	if (r.pooled) {
		atomic_fetch_sub_explicit(&bp->pool_bytes, r.dev_end - r.dev_begin,
					  memory_order_relaxed);
		/* Room again below the cap: allocations may be tried again. */
		atomic_store_explicit(&bp->cap_hit, false, memory_order_relaxed);
	}
	if (bp->ops.free_)
		bp->ops.free_(bp->ops.ud, (void *)(uintptr_t)r.dev_begin);
	if (r.shadow_owned)
		free(r.host_base);
}

/* ------------------------------------------------------------- teardown */

struct ptr_vec {
	uint64_t *v;
	size_t n, cap;
};

static void vec_push(struct ptr_vec *p, uint64_t x)
{
	if (!x)
		return;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		uint64_t *nv = realloc(p->v, cap * sizeof(*nv));
		if (!nv) {
			TP_ERROR("BufferPoolManager: out of memory while releasing buffers");
			return;
		}
		p->v = nv;
		p->cap = cap;
	}
	p->v[p->n++] = x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Empty every ring and retired pool (all shards, not only live ones). */
static void collect_queued(struct bp_pool *bp, struct ptr_vec *out)
{
	for (int s = 0; s < bp->max_shards; s++) {
		struct tp_ready_info ri;
		while (tp_spsc_pop(&bp->ready[s].ring, &ri))
			vec_push(out, ri.dev_ptr);
		struct bp_done d;
		while (tp_spsc_pop(&bp->done[s], &d))
			vec_push(out, d.dev_ptr);
		for (int k = 0; k < TP_MAX_KINDS; k++) {
			uint64_t dev;
			while (tp_spsc_pop(&lane(bp, s, k)->ring, &dev))
				vec_push(out, dev);
			struct bp_retired *r = retired(bp, s, k);
			pthread_mutex_lock(&r->mu);
			for (size_t i = 0; i < r->n; i++)
				vec_push(out, r->ptrs[i]);
			r->n = 0;
			pthread_mutex_unlock(&r->mu);
		}
	}
}

size_t bp_release_owned_buffers(struct bp_pool *bp, bp_release_fn fn, void *ud)
{
	struct ptr_vec all = {0};
	collect_queued(bp, &all);
	size_t calls = 0;
	pthread_rwlock_wrlock(&bp->map_lock);
	for (size_t i = 0; i < all.n; i++) {
		ptrdiff_t r = find_range(bp, all.v[i]);
		all.v[i] = r >= 0 ? bp->ranges[r].dev_begin : all.v[i];
	}
	qsort(all.v, all.n, sizeof(*all.v), cmp_u64);
	for (size_t i = 0; i < all.n; i++) {
		if (i > 0 && all.v[i] == all.v[i - 1])
			continue;
		ptrdiff_t r = find_range(bp, all.v[i]);
		if (r >= 0) {
			if (bp->ranges[r].claimed)
				continue;
			bp->ranges[r].claimed = true;
		}
		all.v[calls++] = all.v[i];
	}
	pthread_rwlock_unlock(&bp->map_lock);
	for (size_t i = 0; i < calls; i++)
		if (fn)
			fn(ud, all.v[i]);
	free(all.v);
	return calls;
}

size_t bp_release_all_owned(struct bp_pool *bp, bp_release_fn fn, void *ud)
{
	struct ptr_vec discard = {0};
	collect_queued(bp, &discard);
	free(discard.v);
	pthread_rwlock_wrlock(&bp->map_lock);
	size_t n = bp->nranges;
	struct bp_range *ranges = bp->ranges;
	bp->ranges = NULL;
	bp->nranges = bp->ranges_cap = 0;
	pthread_rwlock_unlock(&bp->map_lock);
	/* ranges are kept sorted by address: ascending order for free. */
	for (size_t i = 0; i < n; i++) {
		/* A block already handed out by bp_release_owned_buffers is not
		 * released twice. */
		if (fn && !ranges[i].claimed)
			fn(ud, ranges[i].dev_begin);
		if (ranges[i].shadow_owned)
			free(ranges[i].host_base);
	}
	free(ranges);
	atomic_store_explicit(&bp->pool_bytes, 0, memory_order_relaxed);
	return n;
}

void bp_clear_mappings(struct bp_pool *bp)
{
	pthread_rwlock_wrlock(&bp->map_lock);
	for (size_t i = 0; i < bp->nranges; i++)
		if (bp->ranges[i].shadow_owned)
			free(bp->ranges[i].host_base);
	bp->nranges = 0;
	pthread_rwlock_unlock(&bp->map_lock);
	atomic_store_explicit(&bp->pool_bytes, 0, memory_order_relaxed);
}

/* ------------------------------------------------------------ transport */

static int field_offset(struct bp_pool *bp, const void *host_field, size_t size, size_t *off,
			const char *who)
{
	const char *f = host_field, *base = bp->shm_host;
	if (f < base || f + size > base + bp->shm_size) {
		TP_ERROR("BufferPoolManager::%s: field [%p, %p) outside shm [%p, %p)", who,
			 (const void *)f, (const void *)(f + size), (void *)base,
			 (void *)(base + bp->shm_size));
		return -EINVAL;
	}
	*off = (size_t)(f - base);
	return 0;
}

int bp_read_range(struct bp_pool *bp, void *host_field, size_t size)
{
	if (!bp->shadow || !bp->shm_host || !bp->shm_dev || !bp->shm_size)
		return 0;
	size_t off;
	int rc = field_offset(bp, host_field, size, &off, "read_range_from_device");
	if (rc)
		return rc;
	return bp->ops.copy_from_device(bp->ops.ud, host_field, (char *)bp->shm_dev + off, size);
}

int bp_write_range(struct bp_pool *bp, const void *host_field, size_t size)
{
	if (!bp->shadow || !bp->shm_host || !bp->shm_dev || !bp->shm_size)
		return 0;
	size_t off;
	int rc = field_offset(bp, host_field, size, &off, "write_range_to_device");
	if (rc)
		return rc;
	return bp->ops.copy_to_device(bp->ops.ud, (char *)bp->shm_dev + off, host_field, size);
}

int bp_copy_buffer_from_device(struct bp_pool *bp, void *host, uint64_t dev, size_t size)
{
	if (!bp->shadow)
		return 0;
	return bp->ops.copy_from_device(bp->ops.ud, host, (void *)(uintptr_t)dev, size);
}
