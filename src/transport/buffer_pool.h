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

/**
 * struct bp_done - a buffer a collector returned (the seed's DoneInfo,
 * spec/framework.md §6.1).
 * @dev_ptr:  device address of the buffer.
 * @kind:     its buffer kind.
 * @reserved: 0.
 */
struct bp_done {
	uint64_t dev_ptr;
	int32_t kind;
	uint32_t reserved;
};

/**
 * struct bp_ready_shard - drain i -> collector i hand-off: an SPSC ring of
 * struct tp_ready_info plus a condvar for the collector's blocking wait.
 * @ring:  the items.
 * @mu:    only for the blocking wait.
 * @cv:    signalled on every push and wake.
 * @epoch: bumped on every push and wake.
 */
struct bp_ready_shard {
	struct tp_spsc ring; /* struct tp_ready_info items */
	pthread_mutex_t mu;  /* only for the blocking wait */
	pthread_cond_t cv;
	_Atomic uint64_t epoch; /* bumped on every push */
};

/**
 * struct bp_lane - one recycled lane (shard, kind): free device buffers.
 * @ring:          uint64_t device addresses.
 * @consumer_busy: serialises consumers of this lane.
 */
struct bp_lane {
	struct tp_spsc ring;       /* uint64_t device addresses */
	atomic_flag consumer_busy; /* serialises consumers of this lane */
};

/**
 * struct bp_retired - buffers taken off a queue that could not be placed
 * on the next one; released at teardown (the seed's RetiredPool).
 * @mu:   guards the rest.
 * @ptrs: device addresses, LIFO.
 * @n:    entries in use; @cap: entries allocated.
 */
struct bp_retired {
	pthread_mutex_t mu;
	uint64_t *ptrs; /* LIFO */
	size_t n, cap;
};

/**
 * struct bp_range - one registered allocation: device [@dev_begin,
 * @dev_end) is seen by the host at @host_base.
 * @shadow_owned: @host_base is a framework malloc shadow (freed with the
 *                mapping).
 * @claimed:      already handed to a release function.
 * @pooled:       allocated by the pool: counted in bp_pool.pool_bytes.
 */
struct bp_range {
	uint64_t dev_begin, dev_end;
	void *host_base;
	bool shadow_owned; /* host_base is a framework malloc shadow */
	bool claimed;      /* already handed to a release function */
	bool pooled;       /* counted in pool_bytes (allocated by the pool) */
};

/**
 * struct bp_pool - the host data layer of one collector (spec/framework.md
 * §6); set up with bp_init(). Ring capacities are in entries, sizes in
 * bytes; the fields below the memory context are statistics and the
 * allocation cap.
 */
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
	/* The cap refused an allocation and no pool memory was freed since:
	 * bp_allocate_recycled_batch then does not retry a block the cap must
	 * refuse (pool bytes only grow while the pool runs). */
	_Atomic bool cap_hit;
	_Atomic bool warned_target;      /* warm-target clamp logged once */
};

/*
 * Shard arguments (@shard) are normalised by bp_norm_shard() unless said
 * otherwise; @kind is 0 .. m->kinds - 1; @dev is a device address. None of
 * these functions sets a tp_last_error() message: failures are logged
 * (ERROR) where said, as the reference does.
 */

/**
 * bp_init() - build the rings for module @m (spec/framework.md §6.2).
 * @bp: the pool to fill in; its previous contents are ignored.
 * @m:  the module; kept by pointer. Ring capacities come from it, 0 ->
 *      1024 entries; the live shard count starts at the capacity.
 *
 * Return: 0; -EINVAL when @m is NULL or its kinds are out of [1,
 * TP_MAX_KINDS]; -ENOMEM (@bp is then zeroed).
 */
int bp_init(struct bp_pool *bp, const struct tp_module *m);

/**
 * bp_fini() - free the rings and the map, not the device buffers (see the
 * release functions); @bp is zeroed. Harmless on a zeroed pool.
 * @bp: the pool; no thread may use it any more.
 */
void bp_fini(struct bp_pool *bp);

/**
 * bp_set_shard_count() - set the live shard count (spec/framework.md §6.2).
 * @bp: the pool, before its threads start.
 * @n:  shards; outside [1, max_shards] it is clamped with an ERROR line
 *      ("BufferPoolManager: shard_count %d out of range").
 */
void bp_set_shard_count(struct bp_pool *bp, int n);

/**
 * bp_set_warm_min() - floor under @kind's warm target (recycled buffers
 * kept per live shard): the target becomes max(module target, @n).
 * @bp:   the pool, before its threads start.
 * @kind: buffer kind; an invalid one is ignored.
 * @n:    buffers per lane; 0 removes the floor.
 */
void bp_set_warm_min(struct bp_pool *bp, int kind, uint32_t n);

/**
 * bp_norm_shard() - normalise a shard index (spec/framework.md §6.2).
 * @bp:    the pool.
 * @shard: any int.
 *
 * Return: 0 for a negative @shard, else @shard % shard_count.
 */
int bp_norm_shard(const struct bp_pool *bp, int shard);

/**
 * bp_set_memory_context() - stash the memory context, once, before the
 * threads start (spec/framework.md §8.2 set_memory_context).
 * @bp:       the pool.
 * @ops:      memory callbacks, copied; both copy ops set selects the
 *            host-shadow transport.
 * @shm_dev:  device address of the pool region.
 * @shm_host: its host view (== @shm_dev on a shared mapping).
 * @shm_size: bytes of the region.
 */
void bp_set_memory_context(struct bp_pool *bp, const struct tp_memops *ops, void *shm_dev,
			   void *shm_host, size_t shm_size);

/**
 * bp_buffer_size() - bytes of one buffer of @kind from the module's
 * geometry (tp_buffer_bytes()).
 * @bp:   the pool.
 * @kind: buffer kind.
 *
 * Return: bytes; 0 for an invalid @kind.
 */
uint32_t bp_buffer_size(const struct bp_pool *bp, int kind);

/* ---- ready shards (spec/framework.md §6.4) ---- */

/**
 * bp_push_ready() - drain side: hand a buffer to ready shard @shard and
 * wake its collector.
 * @bp:    the pool.
 * @info:  the buffer, copied.
 * @shard: the drain's shard.
 *
 * Return: true; false when the shard is full (ERROR "BufferPoolManager:
 * ready queue full for shard=%d capacity=%zu").
 */
bool bp_push_ready(struct bp_pool *bp, const struct tp_ready_info *info, int shard);

/**
 * bp_try_pop_ready() - collector side: non-blocking pop of ready shard
 * @shard.
 * @bp:    the pool.
 * @out:   receives the buffer.
 * @shard: the collector's shard.
 *
 * Return: true with *@out filled; false when the shard is empty.
 */
bool bp_try_pop_ready(struct bp_pool *bp, struct tp_ready_info *out, int shard);

/**
 * bp_wake_ready() - wake every waiter of ready shard @shard (used at stop,
 * so collectors notice the completion flag without waiting out their
 * tick).
 * @bp:    the pool.
 * @shard: the shard.
 */
void bp_wake_ready(struct bp_pool *bp, int shard);

/**
 * bp_wait_pop_ready() - collector side: pop, waiting for a push or a wake
 * if the shard is empty.
 * @bp:         the pool.
 * @out:        receives the buffer.
 * @timeout_ms: longest wait, ms (CLOCK_REALTIME deadline).
 * @shard:      the collector's shard.
 *
 * Return: true with *@out filled; false on timeout, or when a wake found
 * the shard still empty.
 */
bool bp_wait_pop_ready(struct bp_pool *bp, struct tp_ready_info *out, int timeout_ms, int shard);

/* ---- done shards (collector i is the only producer of shard i) ---- */

/**
 * bp_notify_copy_done() - collector side: return a buffer after its
 * records were copied out (spec/framework.md §6.4 notify_copy_done).
 * @bp:    the pool.
 * @dev:   device address of the buffer.
 * @kind:  its kind (not checked here; an invalid one is retired later).
 * @shard: the collector's shard.
 *
 * Return: true; false when the done shard is full (ERROR
 * "BufferPoolManager: done queue full for shard=%d kind=%d capacity=%zu").
 */
bool bp_notify_copy_done(struct bp_pool *bp, uint64_t dev, int kind, int shard);

/**
 * bp_try_notify_copy_done() - bp_notify_copy_done() without the ERROR
 * line when the ring is full.
 *
 * Return: true when queued, false when the done shard is full.
 */
bool bp_try_notify_copy_done(struct bp_pool *bp, uint64_t dev, int kind, int shard);

/**
 * bp_try_pop_done() - replenish side: non-blocking pop of done shard
 * @shard.
 * @bp:    the pool.
 * @out:   receives the returned buffer.
 * @shard: the shard.
 *
 * Return: true with *@out filled; false when empty.
 */
bool bp_try_pop_done(struct bp_pool *bp, struct bp_done *out, int shard);

/* ---- recycled lanes ---- */

/**
 * bp_push_recycled() - producer side of recycled lane (@shard, @kind).
 * @bp:    the pool.
 * @kind:  buffer kind.
 * @dev:   device address of a free buffer.
 * @shard: the lane's shard.
 *
 * Return: true; false for an invalid @kind (no log) or a full lane (ERROR
 * "BufferPoolManager: recycled queue full for shard=%d kind=%d
 * capacity=%zu"). The caller keeps @dev on failure.
 */
bool bp_push_recycled(struct bp_pool *bp, int kind, uint64_t dev, int shard);

/**
 * bp_pop_recycled() - consumer side of recycled lane (@shard, @kind);
 * consumers of one lane are serialised, so any thread may call it.
 * @bp:    the pool.
 * @kind:  buffer kind.
 * @shard: the lane's shard.
 *
 * Return: a device address, or 0 when the lane is empty or @kind invalid.
 */
uint64_t bp_pop_recycled(struct bp_pool *bp, int kind, int shard);

/**
 * bp_pop_recycled_for_startup() - pop from the first non-empty live lane
 * of @kind, shards 0 .. shard_count - 1 (start-up and freeze release,
 * spec/framework.md §6.4).
 *
 * Return: a device address, or 0 when every live lane is empty.
 */
uint64_t bp_pop_recycled_for_startup(struct bp_pool *bp, int kind);

/**
 * bp_recycled_count() - buffers in lane (@shard, @kind), approximate while
 * its threads run.
 *
 * Return: buffers; 0 for an invalid @kind.
 */
size_t bp_recycled_count(struct bp_pool *bp, int kind, int shard);

/**
 * bp_recycled_count_all() - buffers of @kind summed over the live shards.
 *
 * Return: buffers; 0 for an invalid @kind.
 */
size_t bp_recycled_count_all(struct bp_pool *bp, int kind);

/**
 * bp_recycled_empty() - whether every live lane of every kind is empty.
 * @bp: the pool.
 *
 * Return: true when all are empty (approximate while threads run).
 */
bool bp_recycled_empty(struct bp_pool *bp);

/**
 * bp_warm_target() - buffers the replenish thread keeps in each live lane
 * of @kind: the module's recycled_warm_target(kind, shard_count) raised to
 * bp_set_warm_min(), at most a lane's capacity.
 *
 * Return: buffers; 0 for an invalid @kind.
 */
size_t bp_warm_target(struct bp_pool *bp, int kind);

/**
 * bp_select_recycled_shard() - the lane a returned buffer of @kind goes
 * to (spec/framework.md §6.4 select_recycled_shard).
 * @bp:     the pool.
 * @kind:   buffer kind.
 * @origin: the shard it was returned on.
 *
 * Return: the shard with the strictly largest deficit below the warm
 * target, scanning origin+1 .. origin+n (origin last); the normalised
 * @origin when the target is 0 or nothing is short.
 */
int bp_select_recycled_shard(struct bp_pool *bp, int kind, int origin);

/**
 * bp_drain_done_into_recycled_shard() - move done shard @shard's entries
 * into the same shard's lanes of their kind, retiring on overflow or an
 * invalid kind.
 *
 * Return: entries moved, retired ones included.
 */
size_t bp_drain_done_into_recycled_shard(struct bp_pool *bp, int shard);

/**
 * bp_drain_done_into_recycled() - replenish thread: route every done entry
 * of every live shard to bp_select_recycled_shard()'s lane, else its
 * origin's, else retire it (spec/framework.md §6.4).
 *
 * Return: entries handled, retired ones included.
 */
size_t bp_drain_done_into_recycled(struct bp_pool *bp);

/**
 * bp_replenish_recycled_pools() - keep every live lane of every kind at
 * its warm target (spec/framework.md §7.5): one block of
 * max(slot_count, target - current) buffers (at most the lane's free room)
 * per short lane. A target above the lane capacity is clamped, with one
 * WARN per pool. Never touches device free queues.
 *
 * Return: buffers added (0 also when allocation failed or the pool cap
 * refused it).
 */
size_t bp_replenish_recycled_pools(struct bp_pool *bp);

/**
 * bp_replenish_recycled_pools_low() - bp_replenish_recycled_pools() that
 * also reports how short the lanes were.
 * @bp:  the pool.
 * @low: receives the number of lanes found below half their warm target
 *       before this call topped them up that allocation could still
 *       refill (a lane the pool cap keeps short is not counted: only
 *       returned buffers refill it, so looking sooner is no use); may be
 *       NULL.
 *
 * Return: buffers added.
 */
size_t bp_replenish_recycled_pools_low(struct bp_pool *bp, size_t *low);

/* ---- retired pools ---- */

/**
 * bp_retire() - park a buffer that could not be placed on a queue in the
 * retired pool (@shard, @kind; an invalid kind goes to kind 0) until
 * teardown.
 * @dev: device address; 0 does nothing.
 *
 * Without memory for the pool's array the buffer is only logged (ERROR)
 * and stays allocated until bp_release_all_owned().
 */
void bp_retire(struct bp_pool *bp, int kind, uint64_t dev, int shard);

/**
 * bp_retired_count() - buffers in retired pool (@shard, @kind).
 *
 * Return: buffers.
 */
size_t bp_retired_count(struct bp_pool *bp, int kind, int shard);

/* ---- allocation and the pointer map ---- */

/**
 * bp_alloc_and_register_block() - allocate one device block and register
 * its host view (spec/framework.md §6.4 alloc_and_register_block).
 * @bp:       the pool (memory context set).
 * @size:     bytes.
 * @host_out: receives the host view (NULL on failure): ops.reg's, else a
 *            prefaulted zeroed shadow pushed to the device (host-shadow
 *            transport), else the device address itself.
 *
 * Return: the device address; 0 when @size is 0 or there is no alloc op,
 * when the pool cap would be exceeded (counted in alloc_refused, no log;
 * sets cap_hit until pool memory is freed), when ops.alloc fails (no log),
 * or when registering or recording the mapping fails (ERROR logged, the
 * block freed).
 */
uint64_t bp_alloc_and_register_block(struct bp_pool *bp, size_t size, void **host_out);

/**
 * bp_allocate_recycled_batch() - one block carved into @count buffers
 * (spec/framework.md §6.4 allocate_recycled_batch).
 * @bp:    the pool.
 * @kind:  buffer kind.
 * @size:  bytes per buffer; the stride is @size rounded up to 64.
 * @count: buffers.
 * @shard: lane for every buffer (>= 0), or < 0: buffer i to lane i
 *         (normalised).
 *
 * Buffers that do not fit their lane are retired. Once the pool cap has
 * refused an allocation (cap_hit), a block it must refuse again is not
 * retried: 0 at once, not counted again (no busy retry at the ceiling).
 *
 * Return: buffers placed in lanes; 0 for @count <= 0, @size 0, an invalid
 * @kind, an overflowing size (ERROR), a failed or capped allocation; an
 * ERROR line when none of an allocated block could be placed.
 */
size_t bp_allocate_recycled_batch(struct bp_pool *bp, int kind, size_t size, int count,
				  int shard);

/**
 * bp_register_mapping() - record that device [@dev, @dev + @size) is seen
 * by the host at @host.
 * @bp:           the pool.
 * @dev:          device address (non-zero).
 * @host:         host view (non-NULL).
 * @size:         bytes (> 0).
 * @shadow_owned: @host is a framework malloc shadow, freed with the
 *                mapping.
 *
 * An entry with the same start is overwritten.
 *
 * Return: 0; -EINVAL for a zero @dev or @size or a NULL @host; -EEXIST
 * when the range overlaps another; -ENOMEM.
 */
int bp_register_mapping(struct bp_pool *bp, uint64_t dev, void *host, size_t size,
			bool shadow_owned);

/**
 * bp_resolve_host_ptr() - host view of device address @dev (a block's
 * start or inside it); safe against concurrent registration.
 *
 * Return: the host address, or NULL with an ERROR line
 * ("BufferPoolManager: no host mapping for dev_ptr=...") when unmapped.
 */
void *bp_resolve_host_ptr(struct bp_pool *bp, uint64_t dev);

/**
 * bp_resolve_host_range() - bp_resolve_host_ptr() for @size bytes.
 *
 * Return: the host address of @dev, or NULL with an ERROR line when
 * [@dev, @dev + @size) is unmapped or leaves its block.
 */
void *bp_resolve_host_range(struct bp_pool *bp, uint64_t dev, size_t size);

/**
 * bp_release_pointer_for() - the address to release for @dev
 * (spec/framework.md §6.4 release_pointer_for).
 *
 * Return: the start of the registered block containing @dev, or @dev
 * itself when untracked.
 */
uint64_t bp_release_pointer_for(struct bp_pool *bp, uint64_t dev);

/**
 * bp_free_buffer() - free one tracked block: unmap it, ops.free_ its
 * start, free its shadow if framework-owned (spec/framework.md §6.4
 * free_buffer).
 * @dev: an address inside the block; 0, untracked, or a block already
 *       claimed by bp_release_owned_buffers() does nothing.
 */
void bp_free_buffer(struct bp_pool *bp, uint64_t dev);

/**
 * typedef bp_release_fn - releases one device block.
 * @ud:       the pointer given with it.
 * @dev_base: device address of the block's start (or an untracked
 *            address as queued).
 */
typedef void (*bp_release_fn)(void *ud, uint64_t dev_base);

/**
 * bp_release_owned_buffers() - after stop: empty the recycled, retired,
 * done and ready rings of every shard (live or not) and hand each distinct
 * block base to @fn once (spec/framework.md §6.4 release_owned_buffers).
 * @bp: the pool; its threads joined.
 * @fn: called once per base not claimed before (bases are claimed here);
 *      may be NULL (the bases are then only claimed).
 * @ud: passed to @fn.
 *
 * Free-queue contents and current buffers are not touched (the
 * collector's job).
 *
 * Return: the number of bases handed out (calls of a non-NULL @fn).
 */
size_t bp_release_owned_buffers(struct bp_pool *bp, bp_release_fn fn, void *ud);

/**
 * bp_release_all_owned() - init rollback and close (spec/framework.md §6.4
 * release_all_owned): discard the queues, call @fn on every mapped block
 * not already claimed, in ascending address order, free the
 * framework-owned shadows and clear the map.
 * @bp: the pool; its threads joined.
 * @fn: may be NULL (shadows are still freed).
 * @ud: passed to @fn.
 *
 * Return: the number of mappings dropped, claimed ones included (not the
 * number of @fn calls).
 */
size_t bp_release_all_owned(struct bp_pool *bp, bp_release_fn fn, void *ud);

/**
 * bp_clear_mappings() - free the framework-owned shadows, forget every
 * mapping and reset pool_bytes to 0 (spec/framework.md §6.4
 * clear_mappings). Device blocks are not freed.
 */
void bp_clear_mappings(struct bp_pool *bp);

/* ---- host-shadow transport (no-ops on a shared mapping) ---- */

/**
 * bp_read_range() - pull @size bytes of the pool region from the device
 * into the host shadow at @host_field (spec/framework.md §6.4
 * read_range_from_device); bp_write_range() pushes them the other way.
 * @bp:         the pool.
 * @host_field: host-view address inside the region; the device address is
 *              the same offset from the region's device start.
 * @size:       bytes.
 *
 * Return: 0, also doing nothing on a shared mapping or before the memory
 * context is set; -EINVAL with an ERROR line when the field is outside
 * the region; else the copy op's return.
 */
int bp_read_range(struct bp_pool *bp, void *host_field, size_t size);
int bp_write_range(struct bp_pool *bp, const void *host_field, size_t size);

/**
 * bp_copy_buffer_from_device() - pull @size bytes of buffer @dev into its
 * host view @host (spec/framework.md §7.2 step 3).
 *
 * Return: 0 (nothing to do on a shared mapping), or the copy op's return.
 */
int bp_copy_buffer_from_device(struct bp_pool *bp, void *host, uint64_t dev, size_t size);

#endif
