/* SPDX-License-Identifier: MIT */
/*
 * base/bigmem.h — zeroed allocations that may be large but are touched
 * sparsely (a ring's slots and task payloads, 60 MB per ring at the
 * default window; the host_build_graph ring sized for a whole graph; the
 * tensor map's entry pool, 8.9 MB; the simulated cores' local memories,
 * 9 MB on a2a3sim): from TP_BIGMEM_MMAP_MIN bytes on they are anonymous
 * MAP_NORESERVE mappings, so untouched pages cost nothing (calloc would
 * be memset by some sanitizer allocators), advised to transparent huge
 * pages and, from 2 MiB on, aligned to one.
 *
 * A mapping given back with tp_bigmem_recycle() is kept for the process's
 * next allocation of the same size (a later run or round): a real
 * runtime allocates its task ring and tensor map once, not per launch,
 * and a device's local memories exist for good. On the simulated device
 * the first touch of a fresh ring cost the orchestrator 10-60 ms of page
 * faults per 100,000-task run, on the CPU the AICPU threads share; a table
 * left to calloc came, depending on what the process had freed before
 * (glibc moves its mmap threshold up to the largest block freed), either
 * from a fresh mapping or from heap memory it then zeroed and faulted in:
 * 25-30 ms more in the second run after any swimlane run; and the cores'
 * local memories, faulted in afresh by every launch, took 0.3-0.7 ms when
 * the pages came from the last run and about 22 ms when a swimlane pool
 * had taken those first (pages this VM's host had reclaimed)
 * (docs/swimlane-cost.md, 4 Dec 2026). Used by the runtime (src/runtime/)
 * and the cores' local memories (platform/tile/core_ctx.c).
 */
#ifndef TASKPROF_BASE_BIGMEM_H
#define TASKPROF_BASE_BIGMEM_H

#include <stdbool.h>
#include <stddef.h>

#define TP_BIGMEM_MMAP_MIN (256ull << 10)

/* Mappings the process keeps for reuse at most (an engine recycles up to
 * 19: four rings' slots and payloads, the tensor map's pool and free
 * list, 6-8 ready queues, the local memories), the bytes of each kept
 * resident (a written prefix longer than that is cut back to it,
 * MADV_DONTNEED, when the mapping is recycled), and the bound on the sum
 * over the kept mappings of their resident bytes (min(size,
 * TP_BIGMEM_KEEP_MAX)). A mapping recycled into a full cache, or one that
 * would take the sum past the bound, first unmaps the mappings kept
 * longest, so the cache follows the sizes in use. The default ring's
 * arrays (27 and 33 MB) are kept whole; the cache never holds more than
 * 512 MB resident, however large the graphs were. */
#define TP_BIGMEM_CACHE_MAX 24
#define TP_BIGMEM_KEEP_MAX (64ull << 20)
#define TP_BIGMEM_CACHE_BYTES (512ull << 20)

/**
 * tp_bigmem_zalloc() - zeroed @n × @size bytes.
 * @n:      elements.
 * @size:   bytes per element.
 * @mapped: receives how it was allocated, for tp_bigmem_free() /
 *          tp_bigmem_recycle().
 *
 * Below TP_BIGMEM_MMAP_MIN bytes: calloc (0 bytes still allocates one).
 * From it on: a kept mapping of exactly that many bytes if the process has
 * one (its written prefix zeroed here, in the caller's thread), else a new
 * anonymous MAP_NORESERVE mapping advised MADV_HUGEPAGE, starting on a
 * 2 MiB boundary when it is at least that long. Thread-safe.
 *
 * Return: the memory, or NULL when out of memory or @n × @size overflows
 * (no tp_last_error() message).
 */
void *tp_bigmem_zalloc(size_t n, size_t size, bool *mapped);

/**
 * tp_bigmem_free() - free what tp_bigmem_zalloc() returned, for good
 * (NULL: no-op).
 * @p:             the memory.
 * @n, @size:      as given to tp_bigmem_zalloc().
 * @mapped:        as it reported.
 */
void tp_bigmem_free(void *p, size_t n, size_t size, bool mapped);

/**
 * tp_bigmem_recycle() - give back what tp_bigmem_zalloc() returned, to be
 * reused by the next allocation of the same size (NULL: no-op).
 * @p:             the memory.
 * @n, @size:      as given to tp_bigmem_zalloc().
 * @mapped:        as it reported (calloc'd memory is freed).
 * @used:          elements [0, @used) are the only ones that may have been
 *                 written since the allocation; the rest must still be
 *                 zero (clamped to @n). The next user gets them zeroed.
 *
 * Keeps the mapping, unmapping first the mappings kept longest while the
 * cache holds TP_BIGMEM_CACHE_MAX or the kept resident bytes would pass
 * TP_BIGMEM_CACHE_BYTES. Of a written prefix longer
 * than TP_BIGMEM_KEEP_MAX bytes the rest is given back to the kernel (it
 * reads as zero again), so the next user zeroes at most that much and the
 * cache's resident memory stays bounded. Thread-safe.
 */
void tp_bigmem_recycle(void *p, size_t n, size_t size, bool mapped, size_t used);

/* Heap blocks from this many bytes on are worth tp_bigmem_advise_huge(). */
#define TP_BIGMEM_ADVISE_MIN ((size_t)4 << 20)

/**
 * tp_bigmem_advise_huge() - advise the 2 MiB-aligned interior of a large
 * heap block (malloc / realloc) MADV_HUGEPAGE, so that its pages not yet
 * touched fault in as 2 MiB pages (x86-64's huge page; the size is fixed
 * here) where the system's transparent huge pages are "madvise" (Debian's
 * default) rather than 4 KiB ones. Pages already touched (a calloc'd
 * block that glibc took from its heap and zeroed) stay as they are.
 * @p:     the block (NULL: no-op).
 * @bytes: its size in bytes; below TP_BIGMEM_ADVISE_MIN: no-op.
 *
 * For the converter's arrays, filled once and read a few times: its 1M-task
 * run wrote ~700 MB of them in 4 KiB pages, and the page faults were 11% of
 * its CPU samples (docs/converter-performance.md, 5 Dec 2026). glibc
 * serves such blocks from mappings of their own until a free() of one
 * raises its mmap threshold (to at most 32 MiB); a block from the heap
 * leaves its part of the heap advised after it is freed, so later blocks
 * there get huge pages too (memory the process already had). The advice
 * splits a block's mapping in up to three, so a later realloc() cannot
 * move the block by mremap and copies it instead (correct, but no faster
 * than malloc + memcpy + free with fresh advice, which is what
 * jx_reserve() does). Advice only: errors (no THP, an old kernel) are
 * ignored.
 */
void tp_bigmem_advise_huge(void *p, size_t bytes);

/**
 * tp_malloc_huge() / tp_calloc_huge() - malloc() and calloc() followed by
 * tp_bigmem_advise_huge() of the block; same arguments, results and errors
 * (NULL with errno ENOMEM). Free with free(); do not realloc() a large
 * one (see tp_bigmem_advise_huge()).
 */
void *tp_malloc_huge(size_t bytes);
void *tp_calloc_huge(size_t n, size_t size);

#endif /* TASKPROF_BASE_BIGMEM_H */
