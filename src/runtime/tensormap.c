/* SPDX-License-Identifier: MIT */
#include "runtime/tensormap.h"
#include "base/bigmem.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

int tp_tensormap_init(struct tp_tensormap *tm, uint32_t num_buckets, uint32_t pool_size,
		      const uint32_t window_sizes[TP_MAX_RING_DEPTH])
{
	memset(tm, 0, sizeof(*tm));
	if (num_buckets < 2 || (num_buckets & (num_buckets - 1)))
		return tp_set_error(-EINVAL, "tensormap: %u buckets is not a power of 2 >= 2",
				    num_buckets);
	if (pool_size == 0 || pool_size > INT32_MAX)
		return tp_set_error(-EINVAL, "tensormap: pool size %u out of range", pool_size);
	for (int r = 0; r < TP_MAX_RING_DEPTH; r++)
		if (window_sizes[r] < 2 || (window_sizes[r] & (window_sizes[r] - 1)))
			return tp_set_error(-EINVAL,
					    "tensormap: ring %d window %u is not a power of 2",
					    r, window_sizes[r]);
	tm->num_buckets = num_buckets;
	tm->pool_size = pool_size;
	tm->buckets = calloc(num_buckets, sizeof(*tm->buckets));
	tm->pool = tp_bigmem_zalloc(pool_size, sizeof(*tm->pool), &tm->pool_mapped);
	tm->free_list = tp_bigmem_zalloc(pool_size, sizeof(*tm->free_list), &tm->free_list_mapped);
	bool ok = tm->buckets && tm->pool && tm->free_list;
	for (int r = 0; r < TP_MAX_RING_DEPTH && ok; r++) {
		tm->window_size[r] = window_sizes[r];
		tm->task_heads[r] = calloc(window_sizes[r], sizeof(*tm->task_heads[r]));
		ok = tm->task_heads[r] != NULL;
	}
	if (!ok) {
		tp_tensormap_fini(tm);
		return tp_set_error(-ENOMEM, "tensormap: no memory for %u entries", pool_size);
	}
	return 0;
}

void tp_tensormap_fini(struct tp_tensormap *tm)
{
	free(tm->buckets);
	/* Only entries below next_unused were ever handed out, and only
	 * free-list positions below the pool's size written (all, at most). */
	tp_bigmem_recycle(tm->pool, tm->pool_size, sizeof(*tm->pool), tm->pool_mapped,
			  tm->next_unused);
	tp_bigmem_recycle(tm->free_list, tm->pool_size, sizeof(*tm->free_list),
			  tm->free_list_mapped, tm->pool_size);
	for (int r = 0; r < TP_MAX_RING_DEPTH; r++)
		free(tm->task_heads[r]);
	memset(tm, 0, sizeof(*tm));
}

/* Fibonacci hashing of the buffer address: the top log2(num_buckets) bits
 * of addr · 2^64/φ; device addresses are aligned, so low bits carry
 * nothing. */
static uint32_t bucket_of(const struct tp_tensormap *tm, uint64_t addr)
{
	uint64_t h = addr * 0x9E3779B97F4A7C15ull;
	return (uint32_t)(h >> (64 - __builtin_ctz(tm->num_buckets)));
}

bool tp_tensormap_task_live(const struct tp_tensormap *tm, tp_task_id id)
{
	if (!tp_task_id_valid(id))
		return false;
	uint32_t ring = tp_task_id_ring(id);
	/* Signed distance: correct across a uint32 wrap of local ids. */
	return (int32_t)(tp_task_id_local(id) - tm->last_task_alive[ring]) >= 0;
}

static struct tp_tmap_entry **task_head(struct tp_tensormap *tm, tp_task_id id)
{
	uint32_t ring = tp_task_id_ring(id);
	return &tm->task_heads[ring][tp_task_id_local(id) & (tm->window_size[ring] - 1)];
}

void tp_tensormap_remove(struct tp_tensormap *tm, struct tp_tmap_entry *e)
{
	if (e->prev_in_bucket)
		e->prev_in_bucket->next_in_bucket = e->next_in_bucket;
	else
		tm->buckets[e->bucket] = e->next_in_bucket;
	if (e->next_in_bucket)
		e->next_in_bucket->prev_in_bucket = e->prev_in_bucket;
	if (e->prev_in_task)
		e->prev_in_task->next_in_task = e->next_in_task;
	else
		*task_head(tm, e->producer) = e->next_in_task;
	if (e->next_in_task)
		e->next_in_task->prev_in_task = e->prev_in_task;
	e->bucket = -1;
	e->next_in_bucket = e->prev_in_bucket = e->next_in_task = e->prev_in_task = NULL;
	tm->free_list[tm->free_num++] = e;
	tm->live--;
}

uint32_t tp_tensormap_sync(struct tp_tensormap *tm, uint32_t ring, uint32_t lta)
{
	uint32_t freed = 0;
	uint32_t old = tm->last_task_alive[ring];
	for (uint32_t local = old; (int32_t)(lta - local) > 0; local++) {
		tp_task_id id = tp_task_id_make(ring, local);
		struct tp_tmap_entry **head = task_head(tm, id);
		while (*head) {
			/* A slot's list holds only its current task's entries:
			 * they are freed here before the slot's next task can
			 * insert (that task's id is >= old + window). */
			tp_tensormap_remove(tm, *head);
			freed++;
		}
	}
	if ((int32_t)(lta - old) > 0)
		tm->last_task_alive[ring] = lta;
	return freed;
}

uint32_t tp_tensormap_lookup(struct tp_tensormap *tm, const struct tp_tensor *t,
			     tp_tmap_match_fn fn, void *ud)
{
	uint32_t matches = 0;
	struct tp_tmap_entry *e = tm->buckets[bucket_of(tm, t->buffer_addr)];
	while (e) {
		/* Saved first: @fn may remove @e. */
		struct tp_tmap_entry *next = e->next_in_bucket;
		if (!tp_tensormap_task_live(tm, e->producer)) {
			tm->stale_skipped++;
		} else if (e->view.buffer_addr == t->buffer_addr) {
			enum tp_overlap ov = tp_overlap_check(&e->view, t);
			if (ov != TP_OVERLAP_NONE) {
				matches++;
				if (!fn(tm, e, ov, ud))
					break;
			}
		}
		e = next;
	}
	return matches;
}

int tp_tensormap_insert(struct tp_tensormap *tm, const struct tp_tensor *t, tp_task_id producer)
{
	if (!tp_task_id_valid(producer))
		return tp_set_error(-EINVAL, "tensormap: insert with invalid producer id %#llx",
				    (unsigned long long)producer);
	struct tp_tmap_entry *e;
	if (tm->free_num)
		e = tm->free_list[--tm->free_num];
	else if (tm->next_unused < tm->pool_size)
		e = &tm->pool[tm->next_unused++];
	else
		return tp_set_error(-ENOSPC, "tensormap: all %u entries in use", tm->pool_size);
	e->view = *t;
	e->producer = producer;
	uint32_t b = bucket_of(tm, t->buffer_addr);
	e->bucket = (int32_t)b;
	e->prev_in_bucket = NULL;
	e->next_in_bucket = tm->buckets[b];
	if (e->next_in_bucket)
		e->next_in_bucket->prev_in_bucket = e;
	tm->buckets[b] = e;
	struct tp_tmap_entry **head = task_head(tm, producer);
	/* The slot's list holds only @producer's entries: the previous task of
	 * the slot was freed by the sync that must precede inserts. */
	assert(!*head || (*head)->producer == producer);
	e->prev_in_task = NULL;
	e->next_in_task = *head;
	if (*head)
		(*head)->prev_in_task = e;
	*head = e;
	tm->live++;
	return 0;
}
