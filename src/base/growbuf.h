/* SPDX-License-Identifier: MIT */
/*
 * base/growbuf.h — a growable byte buffer for the host halves' record
 * stores, cheap to fill with fresh memory.
 *
 * A collector copies every record it receives into host memory that was
 * never touched before: for L2 swimlane at level 4 about 250 bytes per
 * task, 25 MB per 100,000 tasks. The first touch of a 4 KiB page costs
 * about 2 µs here (fault, memcg charge, zeroing), on the CPUs the
 * simulated device runs on. A growbuf therefore keeps small stores on the
 * heap (realloc, doubling) and moves a store that outgrows
 * TP_GROWBUF_MAP_MIN bytes into an address-space reservation aligned to
 * 2 MiB and advised MADV_HUGEPAGE: one fault then brings in 2 MiB, and
 * growing inside the reservation never copies. Measured on the
 * 100,000-task level-4 run of bench_swimlane (median of 12 runs), the
 * collector's CPU went from 15.7 to 11.1 ms (a2a3sim) and 15.6 to 11.2 ms
 * (a5sim). A huge page is zeroed whole, so small stores stay on the heap:
 * with the limit at 128 KiB, 48 per-core stores of ~130 KB each cost 96 MB
 * of zeroing and doubled the collector's CPU.
 *
 * The reservation (TP_GROWBUF_RESERVE bytes, then doubled as needed) is
 * PROT_NONE address space: the store makes it writable as it grows
 * (mprotect, doubling the writable extent), so only what is writable is
 * charged to the commit limit, even under strict overcommit, and memory
 * is used only as it is written. A store that outgrows its reservation
 * moves into one twice as large (mremap of the page tables, no copy of
 * the bytes; the 2 MiB alignment is kept). Where the kernel refuses the
 * first reservation (a low `ulimit -v`), the store stays on the heap;
 * without transparent huge pages it works in 4 KiB pages; only slower
 * either way.
 *
 *     struct tp_growbuf b = TP_GROWBUF_INIT;
 *     if (tp_growbuf_reserve(&b, b.len + n) != 0)
 *             return -ENOMEM;
 *     memcpy(b.data + b.len, src, n);
 *     b.len += n;
 *     ...
 *     tp_growbuf_free(&b);
 *
 * Not thread-safe: one writer, readers after it is done.
 */
#ifndef TASKPROF_BASE_GROWBUF_H
#define TASKPROF_BASE_GROWBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Store size (bytes) from which a growbuf leaves the heap for a
 * huge-page-advised reservation. Below it a store costs no more than its
 * bytes (a run with few tasks per instance stays small). */
#define TP_GROWBUF_MAP_MIN ((size_t)1 << 20)
/* Address space (bytes) reserved when a store leaves the heap. A store
 * that outgrows it moves into a reservation twice as large (mremap, no
 * copy of the bytes). */
#define TP_GROWBUF_RESERVE ((size_t)256 << 20)

/**
 * struct tp_growbuf - one growable store; start it as TP_GROWBUF_INIT.
 * @data:   the bytes; NULL until the first reserve; may move on a reserve.
 * @len:    bytes in use; the caller advances it after writing.
 * @cap:    bytes writable at @data (>= @len).
 * @mapped: 0 when @data is from malloc; else bytes of address space
 *          reserved at @data (a multiple of 2 MiB).
 */
struct tp_growbuf {
	uint8_t *data; /* NULL until the first reserve */
	size_t len;    /* bytes in use: the caller advances it */
	size_t cap;    /* bytes writable at data */
	size_t mapped; /* 0: data is from malloc; else bytes reserved at data */
};

#define TP_GROWBUF_INIT { NULL, 0, 0, 0 }

/**
 * tp_growbuf_reserve() - make at least @need bytes writable at @b->data.
 * @b:    the store.
 * @need: bytes that must be writable, counted from @b->data (not from
 *        @b->len).
 *
 * Existing bytes [0, @b->len) are kept; @b->data may move. Below
 * TP_GROWBUF_MAP_MIN bytes a heap store doubles (from 4 KiB); above it the
 * store moves into a 2 MiB-aligned reservation whose writable extent
 * doubles in 2 MiB steps. This is the host store a collector's
 * on_buffer_collected copies records into (spec/framework.md §8.1).
 *
 * Return: 0, or -ENOMEM when @need bytes cannot be made writable (@b is
 * still valid with its bytes; @b->data may have moved, @b->cap is
 * unchanged). Sets no tp_last_error() message.
 */
int tp_growbuf_reserve(struct tp_growbuf *b, size_t need);

/**
 * tp_growbuf_prefault() - reserve @bytes and fault them in now.
 * @b:     the store.
 * @bytes: bytes from @b->data to make writable (as tp_growbuf_reserve())
 *         and present.
 *
 * Filling them later then takes no page fault: for a collector's store,
 * before the device starts rather than while it runs. Already written
 * bytes [0, @b->len) are kept and not touched again. Uses
 * MADV_POPULATE_WRITE (Linux 5.14), else one write per page.
 *
 * Return: 0, or -ENOMEM when the bytes cannot be made writable or
 * populated (the store is then as tp_growbuf_reserve() leaves it: usable,
 * faulting as it is filled). Sets no tp_last_error() message.
 */
int tp_growbuf_prefault(struct tp_growbuf *b, size_t bytes);

/**
 * tp_growbuf_free() - release @b's memory (heap block or reservation).
 * @b: the store; it is TP_GROWBUF_INIT afterwards, ready for reuse.
 */
void tp_growbuf_free(struct tp_growbuf *b);

#endif
