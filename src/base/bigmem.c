/* SPDX-License-Identifier: MIT */
#include "base/bigmem.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The kept mappings: bytes of the mapping, and how many of its first
 * bytes may have been written (zeroed before reuse). Guarded by cache_mu,
 * which also orders the last user's writes (its threads joined before it
 * recycled) before the next user's memset. */
struct kept {
	void *p;
	size_t bytes;
	size_t dirty;
	uint64_t when; /* cache_clock at its recycle: the oldest goes first */
};

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct kept cache[TP_BIGMEM_CACHE_MAX];
/* Sum of resident_bound() over the kept mappings, and the count of
 * recycles so far (cache_mu). */
static size_t cache_bytes;
static uint64_t cache_clock;

/* At most how much of a kept mapping of @bytes is resident: recycling cut
 * anything past TP_BIGMEM_KEEP_MAX back. */
static size_t resident_bound(size_t bytes)
{
	return bytes < TP_BIGMEM_KEEP_MAX ? bytes : TP_BIGMEM_KEEP_MAX;
}

/* fork() while another thread holds cache_mu would leave the child's copy
 * locked for ever: hold it across the fork instead (the bench forks a
 * child per run with -F; an application under `taskprof op` may fork). */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void fork_prepare(void)
{
	pthread_mutex_lock(&cache_mu);
}
static void fork_release(void)
{
	pthread_mutex_unlock(&cache_mu);
}
static void install_atfork(void)
{
	(void)pthread_atfork(fork_prepare, fork_release, fork_release);
}

static void *take_kept(size_t bytes, size_t *dirty)
{
	void *p = NULL;
	pthread_once(&atfork_once, install_atfork);
	pthread_mutex_lock(&cache_mu);
	for (int i = 0; i < TP_BIGMEM_CACHE_MAX; i++) {
		if (cache[i].p && cache[i].bytes == bytes) {
			p = cache[i].p;
			*dirty = cache[i].dirty;
			cache[i].p = NULL;
			cache_bytes -= resident_bound(bytes);
			break;
		}
	}
	pthread_mutex_unlock(&cache_mu);
	return p;
}

#define HUGE_PAGE ((size_t)2 << 20)

/* A fresh anonymous mapping of @bytes, starting on a HUGE_PAGE boundary
 * when @bytes is at least that (else wherever mmap puts it): the first
 * and last huge pages of an unaligned mapping cannot be huge, and an
 * array of 2 MiB (the cores' local memories) would get none. Mapped
 * HUGE_PAGE longer, then the head and the tail past @bytes (rounded up to
 * a page) unmapped, so munmap(p, bytes) releases the rest. Return: the
 * mapping or NULL. */
static void *map_aligned(size_t bytes)
{
	const int prot = PROT_READ | PROT_WRITE;
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	if (bytes < HUGE_PAGE || bytes > SIZE_MAX - HUGE_PAGE) {
		void *p = mmap(NULL, bytes, prot, flags, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t len = (bytes + page - 1) / page * page;
	char *raw = mmap(NULL, len + HUGE_PAGE, prot, flags, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	char *p = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (p > raw)
		munmap(raw, (size_t)(p - raw));
	const size_t tail = (size_t)(raw + len + HUGE_PAGE - (p + len));
	if (tail)
		munmap(p + len, tail);
	return p;
}

void *tp_bigmem_zalloc(size_t n, size_t size, bool *mapped)
{
	*mapped = false;
	if (size && n > (size_t)-1 / size)
		return NULL;
	size_t bytes = n * size;
	if (bytes < TP_BIGMEM_MMAP_MIN)
		return calloc(n ? n : 1, size ? size : 1);
	size_t dirty = 0;
	void *p = take_kept(bytes, &dirty);
	if (p) {
		/* Resident and (mostly) in huge pages already: a memset of
		 * what the last user wrote is cheaper than the faults a fresh
		 * mapping takes on first touch, and it happens here, at set-up,
		 * not on the orchestrator's submit path. */
		memset(p, 0, dirty);
		*mapped = true;
		return p;
	}
	p = map_aligned(bytes);
	if (!p)
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

void tp_bigmem_free(void *p, size_t n, size_t size, bool mapped)
{
	if (!p)
		return;
	if (mapped)
		munmap(p, n * size);
	else
		free(p);
}

void tp_bigmem_recycle(void *p, size_t n, size_t size, bool mapped, size_t used)
{
	if (!p || !mapped) {
		tp_bigmem_free(p, n, size, mapped);
		return;
	}
	size_t bytes = n * size;
	size_t dirty = (used < n ? used : n) * size;
	if (dirty > TP_BIGMEM_KEEP_MAX) {
		/* The pages past the bound go back to the kernel and read as
		 * zero again: only the kept prefix stays resident, and only it
		 * needs the memset at reuse. Pages the prefix was zeroed into
		 * by an earlier reuse lie inside the bound already. The mapping
		 * is page-aligned and so is the bound. */
		const size_t page = (size_t)sysconf(_SC_PAGESIZE);
		const size_t end = (dirty + page - 1) / page * page;
		(void)madvise((char *)p + TP_BIGMEM_KEEP_MAX, end - TP_BIGMEM_KEEP_MAX,
			      MADV_DONTNEED);
		dirty = TP_BIGMEM_KEEP_MAX;
	}
	/* The mappings kept longest make room for this one, so the cache
	 * follows the sizes in use (a process that moved on to other
	 * graphs or core counts does not keep the old sizes for ever);
	 * unmapped after the lock is dropped. */
	struct kept gone[TP_BIGMEM_CACHE_MAX];
	int n_gone = 0, free_at = -1;
	pthread_once(&atfork_once, install_atfork);
	pthread_mutex_lock(&cache_mu);
	for (;;) {
		free_at = -1;
		int oldest = -1;
		for (int i = 0; i < TP_BIGMEM_CACHE_MAX; i++) {
			if (!cache[i].p) {
				if (free_at < 0)
					free_at = i;
			} else if (oldest < 0 || cache[i].when < cache[oldest].when) {
				oldest = i;
			}
		}
		if (free_at >= 0 && cache_bytes + resident_bound(bytes) <= TP_BIGMEM_CACHE_BYTES)
			break;
		if (oldest < 0) { /* empty, and still over: cannot happen */
			free_at = -1;
			break;
		}
		gone[n_gone++] = cache[oldest];
		cache_bytes -= resident_bound(cache[oldest].bytes);
		cache[oldest].p = NULL;
	}
	if (free_at >= 0) {
		cache[free_at] = (struct kept){ p, bytes, dirty, ++cache_clock };
		cache_bytes += resident_bound(bytes);
	}
	pthread_mutex_unlock(&cache_mu);
	for (int i = 0; i < n_gone; i++)
		munmap(gone[i].p, gone[i].bytes);
	if (free_at < 0)
		munmap(p, bytes);
}

void tp_bigmem_advise_huge(void *p, size_t bytes)
{
	if (!p || bytes < TP_BIGMEM_ADVISE_MIN)
		return;
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t hi = ((uintptr_t)p + bytes) & ~(huge - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

void *tp_malloc_huge(size_t bytes)
{
	void *p = malloc(bytes);
	tp_bigmem_advise_huge(p, bytes);
	return p;
}

void *tp_calloc_huge(size_t n, size_t size)
{
	/* checked here: a sanitizer's calloc aborts on the overflow */
	if (size && n > (size_t)-1 / size) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = calloc(n, size);
	tp_bigmem_advise_huge(p, n * size);
	return p;
}
