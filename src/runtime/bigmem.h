/* SPDX-License-Identifier: MIT */
/*
 * runtime/bigmem.h — zeroed allocations that may be large but are touched
 * sparsely (the host_build_graph ring sized for a whole graph): above
 * TP_BIGMEM_MMAP_MIN bytes they are anonymous MAP_NORESERVE mappings, so
 * untouched pages cost nothing (calloc would be memset by some sanitizer
 * allocators), advised to transparent huge pages. Private to src/runtime/.
 */
#ifndef TASKPROF_RUNTIME_BIGMEM_H
#define TASKPROF_RUNTIME_BIGMEM_H

#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>

#define TP_BIGMEM_MMAP_MIN (16ull << 20)

/**
 * tp_bigmem_zalloc() - zeroed @n × @size bytes.
 * @n:      elements.
 * @size:   bytes per element.
 * @mapped: receives how it was allocated, for tp_bigmem_free().
 *
 * Below TP_BIGMEM_MMAP_MIN bytes: calloc (0 bytes still allocates one);
 * from it on: an anonymous MAP_NORESERVE mapping advised MADV_HUGEPAGE.
 *
 * Return: the memory, or NULL when out of memory or @n × @size overflows
 * (no tp_last_error() message).
 */
static inline void *tp_bigmem_zalloc(size_t n, size_t size, bool *mapped)
{
	*mapped = false;
	if (size && n > (size_t)-1 / size)
		return NULL;
	size_t bytes = n * size;
	if (bytes < TP_BIGMEM_MMAP_MIN)
		return calloc(n ? n : 1, size ? size : 1);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	*mapped = true;
	/* Advice only (without THP the pages are 4 KiB): a ring's slots and
	 * payloads are ~3.6 KB per task and first touched by the
	 * orchestrator while it submits, so in 4 KiB pages a run's first
	 * window of tasks took about one page fault per submit on the
	 * critical path; in 2 MiB pages a few dozen. Touch is sequential
	 * (the window is walked in order), so at most one huge page per
	 * array is touched but not used. */
	(void)madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

/**
 * tp_bigmem_free() - free what tp_bigmem_zalloc() returned (NULL: no-op).
 * @p:             the memory.
 * @n, @size:      as given to tp_bigmem_zalloc().
 * @mapped:        as it reported.
 */
static inline void tp_bigmem_free(void *p, size_t n, size_t size, bool mapped)
{
	if (!p)
		return;
	if (mapped)
		munmap(p, n * size);
	else
		free(p);
}

#endif /* TASKPROF_RUNTIME_BIGMEM_H */
