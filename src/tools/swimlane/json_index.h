/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/json_index.h — the open-addressing hash index the swimlane
 * readers use for their joins and lookups ((core_id, reg_task_id) → row,
 * task_id → deps entry, (pred, succ) → edge). Private to the readers.
 *
 * A slot holds the index + 1 of an entry in the reader's own arrays (0 =
 * empty), so the table costs 4 bytes per slot and the keys are never copied:
 * the caller hashes its key and compares candidates against its arrays.
 * Linear probing, load kept at or below 1/2. Header-only: the probe loop is
 * on the per-row path of 1M-row files and must inline with its comparator.
 */
#ifndef TASKPROF_TOOLS_SWIMLANE_JSON_INDEX_H
#define TASKPROF_TOOLS_SWIMLANE_JSON_INDEX_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem.h"

/**
 * struct jx_table - the index: @mask + 1 slots (a power of two) of entry
 * index + 1 (0 = empty), @n entries.
 */
struct jx_table {
	uint32_t *slot;
	size_t mask; /* capacity - 1; capacity is a power of two */
	size_t n;    /* entries */
};

/**
 * jx_mix() - splitmix64's finalizer of @x: every input bit affects every
 * output bit; callers hash their keys with it.
 * @x: the key, or the keys packed into 64 bits.
 *
 * Return: the 64-bit hash.
 */
static inline uint64_t jx_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/**
 * jx_init() - an empty table sized for @expected entries (capacity: the
 * smallest power of two >= 16 and >= 2 × @expected slots).
 * @t:        the table to set up; its previous contents are ignored.
 * @expected: entries expected (a hint: jx_added() grows it).
 *
 * Return: 0 or -ENOMEM (no message).
 */
static inline int jx_init(struct jx_table *t, size_t expected)
{
	size_t cap = 16;
	while (cap < expected * 2)
		cap <<= 1;
	t->slot = calloc(cap, sizeof(*t->slot));
	t->mask = cap - 1;
	t->n = 0;
	return t->slot ? 0 : -ENOMEM;
}

/** jx_free() - free @t's slots; @t is empty (and freeable again)
 *  afterwards. */
static inline void jx_free(struct jx_table *t)
{
	free(t->slot);
	t->slot = NULL;
	t->mask = 0;
	t->n = 0;
}

/**
 * jx_probe() - find the slot of a key.
 * @t:   the table.
 * @h:   the key's hash (jx_mix() of it).
 * @eq:  whether entry @idx of the caller's arrays has @key.
 * @ctx: passed to @eq.
 * @key: the key.
 *
 * Return: the slot holding an entry for which @eq is true, or the empty
 * slot where it would go. Check *slot: 0 = not found (store idx + 1 there
 * and count it with jx_added()).
 */
static inline uint32_t *jx_probe(const struct jx_table *t, uint64_t h,
				 bool (*eq)(const void *ctx, uint32_t idx, const void *key),
				 const void *ctx, const void *key)
{
	for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
		uint32_t s = t->slot[i];
		if (s == 0 || eq(ctx, s - 1, key))
			return &t->slot[i];
	}
}

/**
 * jx_added() - count an insertion; when the table gets more than half
 * full, rebuild it twice as large, rehashing every entry with
 * @hash(@ctx, idx).
 * @t:    the table; call after storing idx + 1 in the slot jx_probe() gave.
 * @hash: the hash (jx_mix()) of entry idx's key, as given to jx_probe().
 * @ctx:  passed to @hash.
 *
 * Return: 0 or -ENOMEM (the entry stays counted and the table valid, only
 * fuller than half).
 */
static inline int jx_added(struct jx_table *t,
			   uint64_t (*hash)(const void *ctx, uint32_t idx),
			   const void *ctx)
{
	t->n++;
	if (t->n * 2 <= t->mask + 1)
		return 0;
	size_t cap = (t->mask + 1) * 2;
	uint32_t *ns = calloc(cap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i <= t->mask; i++) {
		uint32_t s = t->slot[i];
		if (!s)
			continue;
		size_t j = (size_t)hash(ctx, s - 1) & (cap - 1);
		while (ns[j])
			j = (j + 1) & (cap - 1);
		ns[j] = s;
	}
	free(t->slot);
	t->slot = ns;
	t->mask = cap - 1;
	return 0;
}

/**
 * jx_reserve() - geometric growth of a reader's array: make room for one
 * more element.
 * @v:    the array (realloc'd, or from 4 MiB on moved to a fresh block
 *        advised for huge pages; may move).
 * @cap:  its capacity in elements (64 first, then doubled).
 * @n:    elements in use.
 * @elem: bytes per element.
 *
 * Return: 0 or -ENOMEM (also past UINT32_MAX elements, the index's limit).
 */
static inline int jx_reserve(void **v, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	if (nc > SIZE_MAX / elem || nc > UINT32_MAX)
		return -ENOMEM;
	void *nv;
	if (nc * elem < TP_BIGMEM_ADVISE_MIN) {
		nv = realloc(*v, nc * elem);
	} else {
		/* A fresh block in huge pages rather than realloc: the copy
		 * (at most the final size over all doublings) is cheaper than
		 * faulting the array in 4 KiB pages (tp_bigmem_advise_huge()). */
		nv = tp_malloc_huge(nc * elem);
		if (nv && n)
			memcpy(nv, *v, n * elem);
		if (nv)
			free(*v);
	}
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = nc;
	return 0;
}

#endif /* TASKPROF_TOOLS_SWIMLANE_JSON_INDEX_H */
