/*
 * buffer_pool.h — the host data layer (the seed's BufferPoolManager).
 *
 * Owns no threads.  It holds the hand-off rings between the host threads
 * and the dev<->host pointer map (seed 004 §3.1, spec/framework.md §6):
 *
 *   ready shard i   drain thread i  -> collector i      SPSC + condvar wakeup
 *   done shard i    collector i     -> replenish        SPSC
 *   recycled[i][k]  replenish       -> drain thread i   SPSC (consumer side
 *                   serialised by a per-lane flag, so startup and freeze
 *                   release may pop any lane without breaking SPSC; the
 *                   reference relies on timing here, spec §11.6)
 *   retired[i][k]   exceptional paths -> teardown       mutex
 *   pointer map     block ranges dev -> host            rwlock: the drain's
 *                   lookups are safe while the replenish thread inserts
 *                   (the reference reads it unlocked, spec §11.5)
 *
 * Shard indices are normalised: negative -> 0, else index % shard_count.
 */
#ifndef TP_TRANSPORT_BUFFER_POOL_H
#define TP_TRANSPORT_BUFFER_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/module.h"
#include "transport/spsc.h"

/* A buffer returned by a collector: device address and kind. */
struct bp_done {
	uint64_t dev_ptr;
	int32_t kind;
	uint32_t reserved;
};

struct bp_ready_shard {
	struct tp_spsc ring; /* struct tp_ready_info items */
	pthread_mutex_t mu;  /* only for the blocking wait */
	pthread_cond_t cv;
	_Atomic uint64_t epoch; /* bumped on every push */
};

struct bp_lane {
	struct tp_spsc ring;       /* uint64_t device addresses */
	atomic_flag consumer_busy; /* serialises consumers of this lane */
};

struct bp_retired {
	pthread_mutex_t mu;
	uint64_t *ptrs; /* LIFO */
	size_t n, cap;
};

/* One registered allocation: [dev_begin, dev_end) maps to host_base. */
struct bp_range {
	uint64_t dev_begin, dev_end;
	void *host_base;
	bool shadow_owned; /* host_base is a framework malloc shadow */
	bool claimed;      /* already handed to a release function */
	bool pooled;       /* counted in pool_bytes (allocated by the pool) */
};

struct bp_pool {
	const struct tp_module *m;
	int max_shards;  /* shard array capacity = module max_collector_threads */
	int shard_count; /* live shards, 1..max_shards */
	size_t ready_cap, done_cap, recycled_cap;
	struct bp_ready_shard *ready;  /* [max_shards] */
	struct tp_spsc *done;          /* [max_shards], struct bp_done items */
	struct bp_lane *recycled;      /* [max_shards * TP_MAX_KINDS] */
	struct bp_retired *retired;    /* [max_shards * TP_MAX_KINDS] */

	pthread_rwlock_t map_lock;
	struct bp_range *ranges; /* sorted by dev_begin, non-overlapping */
	size_t nranges, ranges_cap;

	/* Memory context: set once before threads start, read-only after. */
	struct tp_memops ops;
	bool shadow;      /* copy ops present: a5 host-shadow transport */
	void *shm_dev;    /* device address of the pool region */
	void *shm_host;   /* host view (== shm_dev on shared mapping) */
	size_t shm_size;
	size_t pool_cap_bytes; /* 0 = unlimited */
	/* Per kind: floor under the module's warm target (0 = none), set
	 * once before threads start (bp_set_warm_min). */
	uint32_t warm_min[TP_MAX_KINDS];

	_Atomic uint64_t pool_bytes;     /* bytes allocated through the pool */
	_Atomic uint64_t n_allocs;       /* ops.alloc calls */
	_Atomic uint64_t n_regs;         /* registrations (reg or shadow) */
	_Atomic uint64_t alloc_refused;  /* allocations refused by the cap */
	_Atomic bool warned_target;      /* warm-target clamp logged once */
};

/* Build the rings for module `m` (capacities from the module, defaults of
 * spec §6.2).  0 or -ENOMEM / -EINVAL. */
int bp_init(struct bp_pool *bp, const struct tp_module *m);
/* Free the rings and the map (not the device buffers: see the release
 * functions). */
void bp_fini(struct bp_pool *bp);
/* Set the live shard count, clamped to [1, max_shards] with an ERROR. */
void bp_set_shard_count(struct bp_pool *bp, int n);
/* Raise kind's warm target (recycled buffers kept per live shard) to at
 * least n; call before the threads start. */
void bp_set_warm_min(struct bp_pool *bp, int kind, uint32_t n);
int bp_norm_shard(const struct bp_pool *bp, int shard);
/* Stash the memory context (once, before threads start). */
void bp_set_memory_context(struct bp_pool *bp, const struct tp_memops *ops, void *shm_dev,
			   void *shm_host, size_t shm_size);
/* Bytes of one buffer of `kind` from the module's geometry. */
uint32_t bp_buffer_size(const struct bp_pool *bp, int kind);

/* ---- ready shards ---- */
bool bp_push_ready(struct bp_pool *bp, const struct tp_ready_info *info, int shard);
bool bp_try_pop_ready(struct bp_pool *bp, struct tp_ready_info *out, int shard);
/* Wake every waiter of shard (used at stop, so collectors notice the
 * completion flag without waiting out their tick). */
void bp_wake_ready(struct bp_pool *bp, int shard);
/* Pop, waiting up to timeout_ms for a push or a wake.  False on timeout. */
bool bp_wait_pop_ready(struct bp_pool *bp, struct tp_ready_info *out, int timeout_ms, int shard);

/* ---- done shards (collector i is the only producer of shard i) ---- */
bool bp_notify_copy_done(struct bp_pool *bp, uint64_t dev, int kind, int shard);
/* As bp_notify_copy_done, without the ERROR line when the ring is full. */
bool bp_try_notify_copy_done(struct bp_pool *bp, uint64_t dev, int kind, int shard);
bool bp_try_pop_done(struct bp_pool *bp, struct bp_done *out, int shard);

/* ---- recycled lanes ---- */
bool bp_push_recycled(struct bp_pool *bp, int kind, uint64_t dev, int shard);
uint64_t bp_pop_recycled(struct bp_pool *bp, int kind, int shard); /* 0 when empty */
uint64_t bp_pop_recycled_for_startup(struct bp_pool *bp, int kind); /* any live lane */
size_t bp_recycled_count(struct bp_pool *bp, int kind, int shard);
size_t bp_recycled_count_all(struct bp_pool *bp, int kind); /* sum over live shards */
bool bp_recycled_empty(struct bp_pool *bp);
/* Buffers the replenish thread keeps in each live lane of kind (the
 * module's warm target raised to warm_min, at most a lane's capacity);
 * 0 for a kind the module lacks. */
size_t bp_warm_target(struct bp_pool *bp, int kind);
/* Lane with the strictly largest deficit below the warm target, scanning
 * origin+1 .. origin+n (origin last); origin when nothing is short. */
int bp_select_recycled_shard(struct bp_pool *bp, int kind, int origin);
/* Move shard's done entries into the same shard's lanes.  Returns count. */
size_t bp_drain_done_into_recycled_shard(struct bp_pool *bp, int shard);
/* Replenish thread: route every done entry to the largest same-kind
 * deficit (origin if none), retiring on overflow.  Returns count. */
size_t bp_drain_done_into_recycled(struct bp_pool *bp);
/* Keep every live lane of every kind at its warm target: one block of
 * max(slot_count, target - current) buffers per short lane.  Returns the
 * number of buffers added.  Never touches device free queues. */
size_t bp_replenish_recycled_pools(struct bp_pool *bp);
/* As bp_replenish_recycled_pools; *low (may be NULL) counts the lanes found
 * below half their warm target, before this call topped them up. */
size_t bp_replenish_recycled_pools_low(struct bp_pool *bp, size_t *low);

/* ---- retired pools ---- */
void bp_retire(struct bp_pool *bp, int kind, uint64_t dev, int shard);
size_t bp_retired_count(struct bp_pool *bp, int kind, int shard);

/* ---- allocation and the pointer map ---- */
/* Allocate and register one block of `size` bytes; *host_out gets its host
 * view.  Returns the device address, 0 on failure (ERROR logged) or when the
 * pool cap would be exceeded (counted in alloc_refused, no log). */
uint64_t bp_alloc_and_register_block(struct bp_pool *bp, size_t size, void **host_out);
/* One block carved into `count` buffers of `size` bytes (stride rounded up
 * to 64) pushed to lane `shard` (>= 0) or to lane i % shard_count (< 0);
 * overflow is retired.  Returns buffers placed. */
size_t bp_allocate_recycled_batch(struct bp_pool *bp, int kind, size_t size, int count,
				  int shard);
/* Record that [dev, dev+size) is seen by the host at `host`.  Overwrites an
 * entry with the same start.  0 or -ENOMEM / -EEXIST (overlaps another). */
int bp_register_mapping(struct bp_pool *bp, uint64_t dev, void *host, size_t size,
			bool shadow_owned);
/* Host view of device address `dev` (exact or interior), NULL with an
 * ERROR when unmapped.  Safe against concurrent registration. */
void *bp_resolve_host_ptr(struct bp_pool *bp, uint64_t dev);
/* As above, but also NULL when [dev, dev+size) leaves its block. */
void *bp_resolve_host_range(struct bp_pool *bp, uint64_t dev, size_t size);
/* Base of the block containing dev, or dev itself when untracked. */
uint64_t bp_release_pointer_for(struct bp_pool *bp, uint64_t dev);
/* Free one tracked allocation (claim, unmap, free shadow, ops.free_). */
void bp_free_buffer(struct bp_pool *bp, uint64_t dev);

typedef void (*bp_release_fn)(void *ud, uint64_t dev_base);
/* After stop: empty recycled, retired, done and ready rings (all shards),
 * canonicalise every pointer to its block base and call fn once per
 * distinct base not released before.  Returns the number of calls. */
size_t bp_release_owned_buffers(struct bp_pool *bp, bp_release_fn fn, void *ud);
/* Init rollback and close: discard the queues and call fn on every mapped
 * base not already released (claimed), in
 * ascending address order, then free shadows and clear the map. */
size_t bp_release_all_owned(struct bp_pool *bp, bp_release_fn fn, void *ud);
/* Free framework-owned shadows and forget every mapping. */
void bp_clear_mappings(struct bp_pool *bp);

/* ---- host-shadow transport (no-ops on a shared mapping) ---- */
/* Pull / push `size` bytes of the pool region at host-view address
 * `host_field` from / to the same offset in device memory.  0, or -EINVAL
 * (field outside the region) / the copy op's error. */
int bp_read_range(struct bp_pool *bp, void *host_field, size_t size);
int bp_write_range(struct bp_pool *bp, const void *host_field, size_t size);
/* Pull a whole buffer into its host view. */
int bp_copy_buffer_from_device(struct bp_pool *bp, void *host, uint64_t dev, size_t size);

#endif
