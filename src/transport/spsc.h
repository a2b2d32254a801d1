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

/**
 * struct tp_spsc - one ring; set up with tp_spsc_init().
 * @head:      producer index, free-running (items ever pushed).
 * @tail:      consumer index, free-running (items ever popped).
 * @capacity:  slots, in items.
 * @item_size: bytes per item.
 * @items:     @capacity × @item_size bytes (calloc).
 */
struct tp_spsc {
	alignas(64) _Atomic uint64_t head; /* producer-owned */
	alignas(64) _Atomic uint64_t tail; /* consumer-owned */
	alignas(64) size_t capacity;       /* items */
	size_t item_size;                  /* bytes */
	unsigned char *items;
};

/**
 * tp_spsc_init() - allocate an empty ring.
 * @r:         the ring (its previous contents are ignored).
 * @capacity:  slots, in items (> 0).
 * @item_size: bytes per item (> 0).
 *
 * Return: 0; -EINVAL for a zero @capacity or @item_size; -ENOMEM. Sets no
 * tp_last_error() message.
 */
int tp_spsc_init(struct tp_spsc *r, size_t capacity, size_t item_size);

/**
 * tp_spsc_fini() - free @r's slots (items still queued are discarded);
 * @r->items is NULL and @r->capacity 0 afterwards, so a second call is
 * harmless.
 * @r: the ring; no thread may use it any more.
 */
void tp_spsc_fini(struct tp_spsc *r);

/**
 * tp_spsc_push() - producer side: copy one item in.
 * @r:    the ring; one producer thread at a time.
 * @item: @r->item_size bytes to copy.
 *
 * Return: true when queued; false when the ring holds @r->capacity items.
 */
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

/**
 * tp_spsc_pop() - consumer side: copy the oldest item out.
 * @r:   the ring; one consumer thread at a time.
 * @out: receives @r->item_size bytes.
 *
 * Return: true with *@out filled; false when the ring is empty.
 */
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

/**
 * tp_spsc_size() - items currently queued.
 * @r: the ring; any thread.
 *
 * Return: items, clamped to @r->capacity (approximate while both sides
 * run).
 */
static inline size_t tp_spsc_size(struct tp_spsc *r)
{
	/* acquire tail: pairs with the consumer's release of tail, made after
	 * its acquire of a head >= that tail; so the head read next is never
	 * behind it and n does not wrap.  acquire head: pairs with the
	 * producer's release of head, as in tp_spsc_pop (a caller that sees
	 * items pops them through tp_spsc_pop, which acquires again). */
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t n = head - tail;
	return n > r->capacity ? r->capacity : (size_t)n;
}

/**
 * tp_spsc_empty() - whether tp_spsc_size() is 0 (approximate while both
 * sides run).
 * @r: the ring; any thread.
 */
static inline bool tp_spsc_empty(struct tp_spsc *r)
{
	return tp_spsc_size(r) == 0;
}

#endif
