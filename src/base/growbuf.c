/* SPDX-License-Identifier: MIT */
/* base/growbuf.c — see growbuf.h. */
#include "base/growbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_ALIGN ((size_t)2 << 20)

/* A reservation of `size` bytes (a multiple of HUGE_ALIGN) starting on a
 * 2 MiB boundary, so that every 2 MiB of it can be one huge page; NULL
 * when the kernel refuses it. */
static uint8_t *map_aligned(size_t size)
{
	size_t span = size + HUGE_ALIGN;
	uint8_t *raw = mmap(NULL, span, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	uintptr_t a = ((uintptr_t)raw + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1);
	uint8_t *p = (uint8_t *)a;
	size_t head = (size_t)(p - raw), tail = span - head - size;
	if (head)
		munmap(raw, head);
	if (tail)
		munmap(p + size, tail);
	/* Advice only: without THP the reservation still works, in 4 KiB
	 * pages. */
	(void)madvise(p, size, MADV_HUGEPAGE);
	return p;
}

static int grow_heap(struct tp_growbuf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap *= 2;
	uint8_t *nd = realloc(b->data, cap);
	if (!nd)
		return -ENOMEM;
	b->data = nd;
	b->cap = cap;
	return 0;
}

int tp_growbuf_reserve(struct tp_growbuf *b, size_t need)
{
	if (need <= b->cap)
		return 0;
	if (b->mapped) {
		/* Past the reservation: move the mapping (page tables, not
		 * bytes) to one twice the size. */
		size_t size = b->mapped;
		while (size < need) {
			if (size > SIZE_MAX / 2)
				return -ENOMEM;
			size *= 2;
		}
		void *nd = mremap(b->data, b->mapped, size, MREMAP_MAYMOVE);
		if (nd == MAP_FAILED)
			return -ENOMEM;
		(void)madvise(nd, size, MADV_HUGEPAGE);
		b->data = nd;
		b->cap = b->mapped = size;
		return 0;
	}
	if (need < TP_GROWBUF_MAP_MIN)
		return grow_heap(b, need);
	size_t size = TP_GROWBUF_RESERVE;
	while (size < need) {
		if (size > SIZE_MAX / 2)
			return -ENOMEM;
		size *= 2;
	}
	uint8_t *p = map_aligned(size);
	if (!p)
		return grow_heap(b, need); /* no reservation: stay on the heap */
	if (b->len)
		memcpy(p, b->data, b->len);
	free(b->data);
	b->data = p;
	b->cap = b->mapped = size;
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
