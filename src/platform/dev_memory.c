/* SPDX-License-Identifier: MIT */
/*
 * dev_memory.c — first-fit arena over one MAP_NORESERVE mapping.
 *
 * The segment table tiles the arena exactly: segments are sorted by offset,
 * each starts where the previous ends, the last ends at `reserved`, and no
 * two neighbouring free segments exist (free coalesces). Every offset and
 * size is a multiple of TP_DEV_MEM_ALIGN.
 */
#include "platform/dev_memory.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "platform/device.h"
#include "platform/platform.h"

#if defined(__SANITIZE_ADDRESS__)
#define DM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DM_ASAN 1
#endif
#endif
#ifdef DM_ASAN
#include <sanitizer/asan_interface.h>
#define DM_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define DM_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define DM_POISON(p, n) ((void)(p), (void)(n))
#define DM_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Frees of at least this many bytes return their whole pages to the OS. */
#define DM_RELEASE_MIN (1u << 20)

struct seg {
	size_t off;   /* from base, multiple of 64 */
	size_t size;  /* bytes, multiple of 64, > 0 */
	size_t req;   /* bytes asked for (used segments), else 0 */
	bool used;
};

struct tp_dev_mem {
	unsigned char *base;
	size_t reserved;
	int device_id;

	pthread_mutex_t lock;     /* guards everything below */
	struct seg *segs;
	size_t nsegs, cap;
	size_t live_requested, peak_bytes, live_allocs;
	uint64_t total_allocs, total_frees, failed_allocs, bad_frees;
	size_t poison_hi;         /* end of the highest range ever poisoned */
	/* Written under the lock, read lock-free by tp_dev_mem_live_bytes()
	 * (relaxed: a statistic, it orders nothing). */
	_Atomic size_t live_bytes;
};

static size_t round_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

struct tp_dev_mem *tp_dev_mem_create(size_t bytes, int device_id)
{
	if (bytes == 0)
		bytes = TP_DEV_MEM_DEFAULT_BYTES;
	if (bytes < TP_DEV_MEM_MIN_BYTES) {
		tp_set_error(-EINVAL, "device %d memory: arena of %zu bytes is below the "
			     "minimum of %llu bytes", device_id, bytes,
			     (unsigned long long)TP_DEV_MEM_MIN_BYTES);
		return NULL;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	bytes = round_up(bytes, page);

	struct tp_dev_mem *mem = calloc(1, sizeof(*mem));
	if (!mem) {
		tp_set_error(-ENOMEM, "device %d memory: out of host memory", device_id);
		return NULL;
	}
	void *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		int e = errno;
		free(mem);
		tp_set_error(-ENOMEM, "device %d memory: cannot reserve %zu bytes: %s",
			     device_id, bytes, strerror(e));
		return NULL;
	}
	mem->cap = 64;
	mem->segs = malloc(mem->cap * sizeof(*mem->segs));
	if (!mem->segs) {
		munmap(base, bytes);
		free(mem);
		tp_set_error(-ENOMEM, "device %d memory: out of host memory", device_id);
		return NULL;
	}
	mem->base = base;
	mem->reserved = bytes;
	mem->device_id = device_id;
	pthread_mutex_init(&mem->lock, NULL);
	mem->segs[0] = (struct seg){ .off = 0, .size = bytes };
	mem->nsegs = 1;
	atomic_init(&mem->live_bytes, 0);
	TP_DEBUG("device %d memory: %zu bytes reserved at %p", device_id, bytes, base);
	return mem;
}

void tp_dev_mem_destroy(struct tp_dev_mem *mem)
{
	if (!mem)
		return;
	size_t live = atomic_load_explicit(&mem->live_bytes, memory_order_relaxed);
	if (live)
		TP_DEBUG("device %d memory: %zu bytes in %zu allocations released "
			 "with the arena", mem->device_id, live, mem->live_allocs);
	/* Shadow memory outlives the mapping: clear what we poisoned, or a
	 * later mapping at the same address would read as poisoned. */
	DM_UNPOISON(mem->base, mem->poison_hi);
	munmap(mem->base, mem->reserved);
	pthread_mutex_destroy(&mem->lock);
	free(mem->segs);
	free(mem);
}

/* ---- segment table (lock held) ------------------------------------- */

/* Index of the segment containing offset @off (< reserved). */
static size_t seg_find(const struct tp_dev_mem *mem, size_t off)
{
	size_t lo = 0, hi = mem->nsegs;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (mem->segs[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int seg_insert(struct tp_dev_mem *mem, size_t at, struct seg s)
{
	if (mem->nsegs == mem->cap) {
		size_t cap = mem->cap * 2;
		struct seg *n = realloc(mem->segs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		mem->segs = n;
		mem->cap = cap;
	}
	memmove(&mem->segs[at + 1], &mem->segs[at],
		(mem->nsegs - at) * sizeof(*mem->segs));
	mem->segs[at] = s;
	mem->nsegs++;
	return 0;
}

static void seg_erase(struct tp_dev_mem *mem, size_t at)
{
	memmove(&mem->segs[at], &mem->segs[at + 1],
		(mem->nsegs - at - 1) * sizeof(*mem->segs));
	mem->nsegs--;
}

static void free_space(const struct tp_dev_mem *mem, size_t *total, size_t *largest,
		       size_t *count)
{
	*total = *largest = *count = 0;
	for (size_t i = 0; i < mem->nsegs; i++) {
		if (mem->segs[i].used)
			continue;
		*total += mem->segs[i].size;
		(*count)++;
		if (mem->segs[i].size > *largest)
			*largest = mem->segs[i].size;
	}
}

static void poison(struct tp_dev_mem *mem, size_t off, size_t n)
{
	if (n == 0 || n > TP_DEV_MEM_ASAN_POISON_MAX)
		return;
	DM_POISON(mem->base + off, n);
	if (off + n > mem->poison_hi)
		mem->poison_hi = off + n;
}

static void unpoison(struct tp_dev_mem *mem, size_t off, size_t n)
{
	/* Only ranges below poison_hi can carry poison. */
	if (off >= mem->poison_hi || n == 0)
		return;
	if (off + n > mem->poison_hi)
		n = mem->poison_hi - off;
	DM_UNPOISON(mem->base + off, n);
}

/* ---- allocation ----------------------------------------------------- */

void *tp_dev_mem_alloc(struct tp_dev_mem *mem, size_t size, bool zero)
{
	if (size == 0 || size > mem->reserved) {
		pthread_mutex_lock(&mem->lock);
		mem->failed_allocs++;
		pthread_mutex_unlock(&mem->lock);
		if (size == 0)
			tp_set_error(-EINVAL, "device %d memory: allocation of 0 bytes",
				     mem->device_id);
		else
			tp_set_error(-ENOMEM, "device %d memory: cannot allocate %zu bytes: "
				     "larger than the whole arena (%zu bytes)",
				     mem->device_id, size, mem->reserved);
		return NULL;
	}
	size_t need = round_up(size, TP_DEV_MEM_ALIGN);

	pthread_mutex_lock(&mem->lock);
	size_t i = 0;
	while (i < mem->nsegs && (mem->segs[i].used || mem->segs[i].size < need))
		i++;
	if (i == mem->nsegs) {
		size_t total, largest, count;
		free_space(mem, &total, &largest, &count);
		mem->failed_allocs++;
		pthread_mutex_unlock(&mem->lock);
		tp_set_error(-ENOMEM, "device %d memory: cannot allocate %zu bytes: %zu "
			     "bytes free in %zu segments, largest free block %zu bytes "
			     "(arena %zu bytes)", mem->device_id, size, total, count,
			     largest, mem->reserved);
		return NULL;
	}
	struct seg *s = &mem->segs[i];
	if (s->size > need) {
		struct seg rest = { .off = s->off + need, .size = s->size - need };
		if (seg_insert(mem, i + 1, rest) != 0) {
			mem->failed_allocs++;
			pthread_mutex_unlock(&mem->lock);
			tp_set_error(-ENOMEM, "device %d memory: out of host memory for "
				     "the segment table", mem->device_id);
			return NULL;
		}
		s = &mem->segs[i];  /* the table may have moved */
		s->size = need;
	}
	s->used = true;
	s->req = size;
	size_t off = s->off;
	size_t live = atomic_load_explicit(&mem->live_bytes, memory_order_relaxed) + need;
	atomic_store_explicit(&mem->live_bytes, live, memory_order_relaxed);
	if (live > mem->peak_bytes)
		mem->peak_bytes = live;
	mem->live_requested += size;
	mem->live_allocs++;
	mem->total_allocs++;
	unpoison(mem, off, need);
	if (zero)
		memset(mem->base + off, 0, size);
	poison(mem, off + size, need - size);
	pthread_mutex_unlock(&mem->lock);
	return mem->base + off;
}

/* Describe where @ptr points, for messages; lock held. */
static const char *classify(const struct tp_dev_mem *mem, uintptr_t p, size_t *seg_out)
{
	uintptr_t b = (uintptr_t)mem->base;
	if (p < b || p >= b + mem->reserved)
		return "foreign pointer (outside the device arena)";
	size_t i = seg_find(mem, p - b);
	*seg_out = i;
	if (!mem->segs[i].used)
		return "double free or never allocated (it lies in free device memory)";
	if (mem->segs[i].off != p - b)
		return "interior pointer (inside a live allocation, not at its start)";
	return NULL;
}

int tp_dev_mem_free(struct tp_dev_mem *mem, void *ptr)
{
	if (!ptr)
		return 0;
	size_t i = 0;
	pthread_mutex_lock(&mem->lock);
	const char *why = classify(mem, (uintptr_t)ptr, &i);
	if (why) {
		mem->bad_frees++;
		pthread_mutex_unlock(&mem->lock);
		int rc = tp_set_error(-EINVAL, "device %d memory: free of %p refused: %s",
				      mem->device_id, ptr, why);
		TP_ERROR("%s", tp_last_error());
		return rc;
	}
	struct seg *s = &mem->segs[i];
	size_t live = atomic_load_explicit(&mem->live_bytes, memory_order_relaxed) - s->size;
	atomic_store_explicit(&mem->live_bytes, live, memory_order_relaxed);
	mem->live_requested -= s->req;
	mem->live_allocs--;
	mem->total_frees++;
	s->used = false;
	s->req = 0;
	poison(mem, s->off, s->size);
	if (s->size >= DM_RELEASE_MIN) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		uintptr_t a = round_up((uintptr_t)mem->base + s->off, page);
		uintptr_t e = ((uintptr_t)mem->base + s->off + s->size) / page * page;
		if (e > a)
			madvise((void *)a, e - a, MADV_DONTNEED);
	}
	/* Coalesce: next first, so that index i stays valid. */
	if (i + 1 < mem->nsegs && !mem->segs[i + 1].used) {
		mem->segs[i].size += mem->segs[i + 1].size;
		seg_erase(mem, i + 1);
	}
	if (i > 0 && !mem->segs[i - 1].used) {
		mem->segs[i - 1].size += mem->segs[i].size;
		seg_erase(mem, i);
	}
	pthread_mutex_unlock(&mem->lock);
	return 0;
}

/* ---- ownership ------------------------------------------------------ */

bool tp_dev_mem_in_arena(const struct tp_dev_mem *mem, const void *ptr)
{
	uintptr_t p = (uintptr_t)ptr, b = (uintptr_t)mem->base;
	return p >= b && p < b + mem->reserved;
}

bool tp_dev_mem_overlaps(const struct tp_dev_mem *mem, const void *ptr, size_t size)
{
	uintptr_t p = (uintptr_t)ptr, b = (uintptr_t)mem->base;
	if (size == 0)
		return tp_dev_mem_in_arena(mem, ptr);
	uintptr_t last = size - 1 > UINTPTR_MAX - p ? UINTPTR_MAX : p + (size - 1);
	return p < b + mem->reserved && last >= b;
}

/* Lock held. */
static bool owns_locked(const struct tp_dev_mem *mem, uintptr_t p, size_t size,
			size_t *seg_out)
{
	uintptr_t b = (uintptr_t)mem->base;
	if (p < b || p >= b + mem->reserved)
		return false;
	size_t i = seg_find(mem, p - b);
	const struct seg *s = &mem->segs[i];
	/* A 0-byte range may sit just past the last byte of the block before. */
	if (size == 0 && !s->used && i > 0 && mem->segs[i - 1].used &&
	    p - b == mem->segs[i - 1].off + mem->segs[i - 1].req)
		return true;
	*seg_out = i;
	if (!s->used)
		return false;
	size_t rel = p - b - s->off;
	return rel <= s->req && size <= s->req - rel;
}

bool tp_dev_mem_owns(struct tp_dev_mem *mem, const void *ptr, size_t size)
{
	size_t i = 0;
	pthread_mutex_lock(&mem->lock);
	bool ok = owns_locked(mem, (uintptr_t)ptr, size, &i);
	pthread_mutex_unlock(&mem->lock);
	return ok;
}

int tp_dev_mem_check(struct tp_dev_mem *mem, const void *ptr, size_t size,
		     const char *what)
{
	uintptr_t p = (uintptr_t)ptr, b = (uintptr_t)mem->base;
	size_t i = 0;
	pthread_mutex_lock(&mem->lock);
	if (owns_locked(mem, p, size, &i)) {
		pthread_mutex_unlock(&mem->lock);
		return 0;
	}
	if (p < b || p >= b + mem->reserved) {
		pthread_mutex_unlock(&mem->lock);
		return tp_set_error(-EFAULT, "device %d memory: %s %p (+%zu bytes) is not "
				    "device memory (outside the arena)", mem->device_id,
				    what, ptr, size);
	}
	struct seg s = mem->segs[i];
	pthread_mutex_unlock(&mem->lock);
	if (!s.used)
		return tp_set_error(-EFAULT, "device %d memory: %s %p (+%zu bytes) points "
				    "into free device memory (freed or never allocated)",
				    mem->device_id, what, ptr, size);
	/* A range whose end wraps the address space has no "bytes past the
	 * end" worth printing. */
	size_t rel = (size_t)(p - b - s.off);
	if (size > UINTPTR_MAX - p)
		return tp_set_error(-EFAULT, "device %d memory: %s %p + %zu bytes overruns "
				    "the allocation %p of %zu bytes (size overflows the "
				    "address space)",
				    mem->device_id, what, ptr, size,
				    (void *)(mem->base + s.off), s.req);
	return tp_set_error(-EFAULT, "device %d memory: %s %p + %zu bytes overruns the "
			    "allocation %p of %zu bytes by %zu bytes", mem->device_id,
			    what, ptr, size, (void *)(mem->base + s.off), s.req,
			    rel + size - s.req);
}

/* ---- statistics ----------------------------------------------------- */

void tp_dev_mem_stats(struct tp_dev_mem *mem, struct tp_dev_mem_stats *out)
{
	pthread_mutex_lock(&mem->lock);
	size_t total, largest, count;
	free_space(mem, &total, &largest, &count);
	*out = (struct tp_dev_mem_stats){
		.reserved_bytes = mem->reserved,
		.live_bytes = atomic_load_explicit(&mem->live_bytes, memory_order_relaxed),
		.live_requested = mem->live_requested,
		.peak_bytes = mem->peak_bytes,
		.largest_free = largest,
		.live_allocs = mem->live_allocs,
		.free_segments = count,
		.total_allocs = mem->total_allocs,
		.total_frees = mem->total_frees,
		.failed_allocs = mem->failed_allocs,
		.bad_frees = mem->bad_frees,
	};
	pthread_mutex_unlock(&mem->lock);
}

size_t tp_dev_mem_live_bytes(const struct tp_dev_mem *mem)
{
	return atomic_load_explicit(&mem->live_bytes, memory_order_relaxed);
}

/* ---- simulated DMA --------------------------------------------------- */

/* The DMA itself is the transport's simulated DMA (word-atomic for
 * field-sized copies); the arena adds the ownership check. */
/*
 * Transparent huge pages (where the host grants them on request, THP
 * "madvise") under a host copy of @size bytes at @dst: the copy writes
 * every byte, so 2 MB pages cost no memory it would not take anyway, and
 * a large case's inputs fault in 512 times less often. paged_attention
 * Case1 (1 GiB of KV cache): 546,000 page faults per run -> 284,000, host
 * time 7.5-7.8 s -> 3.2-5.4 s on a paravirtualised 2-CPU VM where a fault
 * costs several µs. Only the whole 2 MB pages inside the range, only for
 * copies of DM_HUGE_MIN and more: memory a kernel touches sparsely keeps
 * 4 KiB pages (one touch per buffer must not take 2 MB each). Advice
 * only: refused, it changes nothing.
 */
#define DM_HUGE_PAGE (2u << 20)
#define DM_HUGE_MIN (4u << 20)
static void advise_huge(void *dst, size_t size)
{
	if (size < DM_HUGE_MIN)
		return;
	uintptr_t a = round_up((uintptr_t)dst, DM_HUGE_PAGE);
	uintptr_t e = ((uintptr_t)dst + size) / DM_HUGE_PAGE * DM_HUGE_PAGE;
	if (e > a)
		(void)madvise((void *)a, e - a, MADV_HUGEPAGE);
}

int tp_dev_mem_copy_to_device(struct tp_dev_mem *mem, void *dst, const void *src,
			      size_t size)
{
	int rc = tp_dev_mem_check(mem, dst, size, "copy_to_device dst");
	if (rc)
		return rc;
	advise_huge(dst, size);
	tp_sim_dma_to_device(dst, src, size);
	return 0;
}

int tp_dev_mem_copy_from_device(struct tp_dev_mem *mem, void *dst, const void *src,
				size_t size)
{
	int rc = tp_dev_mem_check(mem, src, size, "copy_from_device src");
	if (rc)
		return rc;
	tp_sim_dma_from_device(dst, src, size);
	return 0;
}

/* ---- transport memops ------------------------------------------------ */

static void *memops_alloc(void *ud, size_t size)
{
	return tp_dev_mem_alloc(ud, size ? size : 1, true);
}

static void memops_free(void *ud, void *dev)
{
	(void)tp_dev_mem_free(ud, dev);  /* logged by tp_dev_mem_free */
}

static int memops_copy_to(void *ud, void *dev_dst, const void *host_src, size_t size)
{
	return tp_dev_mem_copy_to_device(ud, dev_dst, host_src, size);
}

static int memops_copy_from(void *ud, void *host_dst, const void *dev_src, size_t size)
{
	return tp_dev_mem_copy_from_device(ud, host_dst, dev_src, size);
}

struct tp_memops tp_dev_memops(struct tp_device *dev)
{
	struct tp_memops ops = {
		.alloc = memops_alloc,
		.free_ = memops_free,
		.ud = tp_device_mem(dev),
	};
	if (tp_device_platform(dev)->transport == TP_TRANSPORT_HOST_SHADOW) {
		ops.copy_to_device = memops_copy_to;
		ops.copy_from_device = memops_copy_from;
	}
	return ops;
}
