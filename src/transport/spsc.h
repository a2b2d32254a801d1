/*
 * spsc.h — fixed-capacity single-producer / single-consumer ring of
 * fixed-size items (spec/framework.md §6.1 SpscRing).
 *
 * `head` is the producer index and `tail` the consumer index, both
 * free-running uint64 on their own cache lines.  push fails when
 * head - tail >= capacity, pop fails when they are equal.  Items are copied
 * in and out, so one ring type serves ready infos, done entries and
 * recycled device pointers.  Inline: drain and collector hot paths.
 */
#ifndef TP_TRANSPORT_SPSC_H
#define TP_TRANSPORT_SPSC_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct tp_spsc {
	alignas(64) _Atomic uint64_t head; /* producer-owned */
	alignas(64) _Atomic uint64_t tail; /* consumer-owned */
	alignas(64) size_t capacity;       /* items */
	size_t item_size;                  /* bytes */
	unsigned char *items;
};

/* Allocate room for `capacity` items of `item_size` bytes.  0 or -ENOMEM /
 * -EINVAL (zero capacity or item size). */
int tp_spsc_init(struct tp_spsc *r, size_t capacity, size_t item_size);
void tp_spsc_fini(struct tp_spsc *r);

/* Producer side: copy one item in.  False when full. */
static inline bool tp_spsc_push(struct tp_spsc *r, const void *item)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	/* acquire: the consumer finished copying the item in this slot out
	 * before it released tail past it. */
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (head - tail >= r->capacity)
		return false;
	memcpy(r->items + (head % r->capacity) * r->item_size, item, r->item_size);
	/* release: the item bytes are visible before the consumer sees head. */
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
	return true;
}

/* Consumer side: copy one item out.  False when empty. */
static inline bool tp_spsc_pop(struct tp_spsc *r, void *out)
{
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	/* acquire: pairs with the producer's release of head. */
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	if (head == tail)
		return false;
	memcpy(out, r->items + (tail % r->capacity) * r->item_size, r->item_size);
	/* release: the slot has been read before the producer may reuse it. */
	atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
	return true;
}

/* Items currently queued, clamped to capacity (approximate while both
 * sides run). */
static inline size_t tp_spsc_size(struct tp_spsc *r)
{
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t n = head - tail;
	return n > r->capacity ? r->capacity : (size_t)n;
}

static inline bool tp_spsc_empty(struct tp_spsc *r)
{
	return tp_spsc_size(r) == 0;
}

#endif
