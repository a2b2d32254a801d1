/* SPDX-License-Identifier: MIT */
/* base/growbuf.c — see growbuf.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mremap */
#endif
#include "base/growbuf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define HUGE_ALIGN ((size_t)2 << 20)

_Static_assert(SIZE_MAX > 0xffffffffu, "growbuf reserves more than 4 GiB of address space");

static size_t round_up(size_t n, size_t a)
{
	return (n + a - 1) & ~(a - 1);
}

/* An inaccessible reservation of `size` bytes (a multiple of HUGE_ALIGN)
 * starting on a 2 MiB boundary, so that every 2 MiB of it can be one huge
 * page; NULL when the kernel refuses it. PROT_NONE: address space only,
 * not charged to the commit limit even under strict overcommit; the
 * caller makes it writable as the store grows. */
static uint8_t *reserve_aligned(size_t size)
{
	size_t span = size + HUGE_ALIGN;
	uint8_t *raw = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			    -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	uint8_t *p = (uint8_t *)round_up((uintptr_t)raw, HUGE_ALIGN);
	size_t head = (size_t)(p - raw), tail = span - head - size;
	if (head)
		munmap(raw, head);
	if (tail)
		munmap(p + size, tail);
	/* Advice only: without THP the store still works, in 4 KiB pages. */
	(void)madvise(p, size, MADV_HUGEPAGE);
	return p;
}

static int grow_heap(struct tp_growbuf *b, size_t need)
{
	if (need > PTRDIFF_MAX)
		return -ENOMEM;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap *= 2; /* need <= PTRDIFF_MAX: cannot wrap */
	uint8_t *nd = realloc(b->data, cap);
	if (!nd)
		return -ENOMEM;
	b->data = nd;
	b->cap = cap;
	return 0;
}

/* Make [b->cap, want) of the reservation writable; want <= b->mapped. */
static int open_up(struct tp_growbuf *b, size_t want)
{
	if (mprotect(b->data + b->cap, want - b->cap, PROT_READ | PROT_WRITE) != 0)
		return -ENOMEM;
	b->cap = want;
	return 0;
}

int tp_growbuf_reserve(struct tp_growbuf *b, size_t need)
{
	if (need <= b->cap)
		return 0;
	if (need > PTRDIFF_MAX - HUGE_ALIGN)
		return -ENOMEM;
	if (!b->mapped && need < TP_GROWBUF_MAP_MIN)
		return grow_heap(b, need);
	/* Writable extent: doubled (in 2 MiB steps), so that a store filled
	 * a buffer at a time makes O(log) mprotect calls. */
	size_t want = round_up(need, HUGE_ALIGN);
	if (b->mapped && want < 2 * b->cap)
		want = 2 * b->cap;
	size_t size = b->mapped ? b->mapped : TP_GROWBUF_RESERVE;
	while (size < want)
		size *= 2; /* want <= PTRDIFF_MAX: cannot wrap */
	if (size == b->mapped)
		return open_up(b, want);

	uint8_t *p = reserve_aligned(size);
	if (!p) {
		/* Stay on the heap, but only for what the refused address space
		 * could have held: a heap block that large would be refused too. */
		if (b->mapped || need > TP_GROWBUF_RESERVE)
			return -ENOMEM;
		return grow_heap(b, need);
	}
	struct tp_growbuf nb = { .data = p, .len = b->len, .cap = 0, .mapped = size };
	if (b->mapped) {
		/* Move the writable pages (page tables, not bytes) to the start
		 * of the larger reservation: the store keeps its 2 MiB
		 * alignment. The old reservation's inaccessible tail goes
		 * first, so that the store is one mapping of b->cap bytes
		 * whatever happens next. */
		if (b->mapped > b->cap)
			munmap(b->data + b->cap, b->mapped - b->cap);
		b->mapped = b->cap;
		void *moved = mremap(b->data, b->cap, b->cap, MREMAP_MAYMOVE | MREMAP_FIXED, p);
		if (moved == MAP_FAILED) {
			munmap(p, size);
			return -ENOMEM;
		}
		nb.cap = b->cap;
		*b = nb;
		return open_up(b, want); /* on failure: moved, capacity unchanged */
	}
	if (open_up(&nb, want) != 0) {
		munmap(p, size);
		return need > TP_GROWBUF_RESERVE ? -ENOMEM : grow_heap(b, need);
	}
	if (b->len)
		memcpy(p, b->data, b->len);
	free(b->data);
	*b = nb;
	return 0;
}

int tp_growbuf_prefault(struct tp_growbuf *b, size_t bytes)
{
	if (tp_growbuf_reserve(b, bytes) != 0)
		return -ENOMEM;
	long pg = sysconf(_SC_PAGESIZE);
	const size_t page = pg > 0 ? (size_t)pg : 4096u;
	/* From the first page not yet written to the page holding the last
	 * byte asked for; a page partly written is already in. */
	size_t from = round_up(b->len, page), to = round_up(bytes, page);
	if (to > b->cap)
		to = b->cap; /* a heap store: its capacity is not page-rounded */
	if (from >= to)
		return 0;
	if (b->mapped && madvise(b->data + from, to - from, MADV_POPULATE_WRITE) == 0)
		return 0;
	if (b->mapped && errno != EINVAL)
		return -ENOMEM; /* ENOMEM / EFAULT: touching would only trade it for SIGBUS */
	/* A kernel before 5.14, or a heap store (not page-aligned, so not
	 * madvise-able): one write per page. The bytes read as zero either
	 * way (fresh mapping, or a heap block the caller will overwrite). */
	volatile uint8_t *v = b->data;
	for (size_t off = from; off < to; off += page)
		v[off] = 0;
	return 0;
}

void tp_growbuf_free(struct tp_growbuf *b)
{
	if (b->mapped)
		munmap(b->data, b->mapped);
	else
		free(b->data);
	*b = (struct tp_growbuf)TP_GROWBUF_INIT;
}
