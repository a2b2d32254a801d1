/* SPDX-License-Identifier: MIT */
/*
 * runtime/tensormap.h — the TensorMap: which task last wrote which view of a
 * buffer (spec/runtime-model.md §2.3, §7.1 item 6, Appendix A items 1-2).
 *
 * A hash map keyed by buffer_addr (all views of one buffer share a bucket,
 * newest entry first). An entry holds a copy of the producer's view
 * (start_offset, shapes, strides, dtype, version, buffer size) and the
 * producer's task id. Entries come from a fixed pool with a free list.
 *
 * Stale entries — producer local id < last_task_alive of its ring — are
 * skipped by lookups, never used to truncate a chain (rings interleave in
 * one chain, Appendix A item 2), and freed in batch by tp_tensormap_sync()
 * through per-task entry lists (cleanup_retired).
 *
 * Orchestrator thread only: no locking. last_task_alive values come in
 * through tp_tensormap_sync() (the orchestrator reads them from the rings).
 */
#ifndef TASKPROF_RUNTIME_TENSORMAP_H
#define TASKPROF_RUNTIME_TENSORMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/overlap.h"
#include "runtime/task_id.h"
#include "runtime/tensor.h"

/* PTO2_TENSORMAP_POOL_SIZE and a bucket count for it. */
#define TP_TENSORMAP_DEFAULT_POOL 65536u
#define TP_TENSORMAP_DEFAULT_BUCKETS 16384u

/**
 * struct tp_tmap_entry - one tensor-map entry (spec/runtime-model.md
 * §2.3): the view a producer wrote, linked in its hash bucket and in its
 * producer's per-task list.
 */
struct tp_tmap_entry {
	struct tp_tensor view;      /* the producer's view (owner_task_id as given) */
	tp_task_id producer;        /* producer_task_id */
	int32_t bucket;             /* -1 while free */
	struct tp_tmap_entry *next_in_bucket, *prev_in_bucket;
	struct tp_tmap_entry *next_in_task, *prev_in_task;
};

/**
 * struct tp_tensormap - the tensor map (TensorMap, spec/runtime-model.md
 * §2.3): hash buckets over a fixed entry pool, per-ring task lists for
 * stale cleanup; counts are entries.
 */
struct tp_tensormap {
	uint32_t num_buckets;                 /* power of 2 */
	uint32_t pool_size;
	struct tp_tmap_entry **buckets;
	struct tp_tmap_entry *pool;
	struct tp_tmap_entry **free_list;
	bool pool_mapped, free_list_mapped;   /* base/bigmem.h */
	uint32_t next_unused;                 /* pool entries never used yet */
	uint32_t free_num;
	uint32_t live;                        /* entries in buckets */
	uint32_t window_size[TP_MAX_RING_DEPTH];
	struct tp_tmap_entry **task_heads[TP_MAX_RING_DEPTH]; /* per slot */
	uint32_t last_task_alive[TP_MAX_RING_DEPTH];
	/* Statistics. */
	uint64_t stale_skipped;               /* stale entries passed by lookups */
	uint64_t covered_removed;             /* entries removed by COVERED INOUT */
};

/**
 * tp_tensormap_init() - an empty map (spec/runtime-model.md §2.3).
 * @tm:           the map to fill in.
 * @num_buckets:  hash buckets, a power of 2.
 * @pool_size:    entries at most (PTO2_TENSORMAP_POOL_SIZE).
 * @window_sizes: task window of each ring (powers of 2), for the per-task
 *                entry lists.
 *
 * Return: 0, -EINVAL (bad bucket count, pool size or window), -ENOMEM.
 */
int tp_tensormap_init(struct tp_tensormap *tm, uint32_t num_buckets, uint32_t pool_size,
		      const uint32_t window_sizes[TP_MAX_RING_DEPTH]);

/**
 * tp_tensormap_fini() - free the map's memory.
 * @tm: a map from tp_tensormap_init().
 */
void tp_tensormap_fini(struct tp_tensormap *tm);

/**
 * tp_tensormap_sync() - sync_tensormap (spec §2.4 step 3): ring @ring_id's
 * last_task_alive is now @last_task_alive. Entries of tasks below it turn
 * stale (lookups skip them) and are freed here (cleanup_retired).
 * @tm:              the map.
 * @ring_id:         ring index, < TP_MAX_RING_DEPTH (not checked).
 * @last_task_alive: the ring's new last_task_alive (a local task id).
 *
 * Return: entries freed.
 */
uint32_t tp_tensormap_sync(struct tp_tensormap *tm, uint32_t ring_id, uint32_t last_task_alive);

/**
 * tp_tensormap_task_live() - true if @id's task is not yet reclaimed
 * according to the last sync (local >= last_task_alive of its ring);
 * false for an invalid id.
 * @tm: the map.
 * @id: a task id.
 *
 * Return: true when live, else false.
 */
bool tp_tensormap_task_live(const struct tp_tensormap *tm, tp_task_id id);

/**
 * typedef tp_tmap_match_fn - one live, overlapping entry found by a lookup.
 * @e:  the entry; the callback may tp_tensormap_remove() it.
 * @ov: TP_OVERLAP_COVERED or TP_OVERLAP_OTHER.
 * Return: true to continue the lookup, false to stop it.
 */
typedef bool (*tp_tmap_match_fn)(struct tp_tensormap *tm, struct tp_tmap_entry *e,
				 enum tp_overlap ov, void *ud);

/**
 * tp_tensormap_lookup() - call @fn for every live entry of @t's buffer that
 * overlaps @t (not NO_OVERLAP), newest first. Stale entries are skipped
 * (and counted in stale_skipped). spec/runtime-model.md §2.3.
 * @tm: the map.
 * @t:  the view looked up.
 * @fn: called per match; returning false stops the lookup.
 * @ud: passed to @fn.
 *
 * Return: matches reported.
 */
uint32_t tp_tensormap_lookup(struct tp_tensormap *tm, const struct tp_tensor *t,
			     tp_tmap_match_fn fn, void *ud);

/**
 * tp_tensormap_insert() - record that task @producer writes view @t
 * (INOUT / OUTPUT_EXISTING, spec §2.4 step 5).
 * @tm:       the map.
 * @t:        the view written.
 * @producer: the writing task.
 *
 * Call tp_tensormap_sync() for @producer's ring after allocating @producer
 * and before inserting for it (spec §2.4 step 3 precedes step 5): that
 * frees the entries of the slot's previous task.
 *
 * Return: 0; -ENOSPC when the pool is full (the caller syncs with the rings
 * and retries: capacity back-pressure); -EINVAL for an invalid id.
 */
int tp_tensormap_insert(struct tp_tensormap *tm, const struct tp_tensor *t, tp_task_id producer);

/**
 * tp_tensormap_remove() - unlink @e and return it to the pool.
 * @tm: the map.
 * @e:  a live entry of @tm (from a lookup callback).
 */
void tp_tensormap_remove(struct tp_tensormap *tm, struct tp_tmap_entry *e);

/**
 * tp_tensormap_free_entries() - entries an insert can still take.
 * @tm: the map.
 *
 * Return: pool size less live entries.
 */
static inline uint32_t tp_tensormap_free_entries(const struct tp_tensormap *tm)
{
	return tm->pool_size - tm->live;
}

#endif /* TASKPROF_RUNTIME_TENSORMAP_H */
