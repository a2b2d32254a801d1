/*
 * memops_sim.c — heap-backed device memory for the simulated platforms.
 *
 * The shadow copies model a DMA engine: field-sized copies (the narrow
 * index/flag reads and write-backs of spec/framework.md §9) run word by word
 * with atomic accesses, because the device writes neighbouring fields
 * concurrently; bulk copies use memcpy and are only issued for memory the
 * device has handed over (a published buffer, acquired through the ready
 * queue tail) or does not run on yet / any more.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/prefault.h"
#include "transport/module.h"

#define SIM_ATOMIC_COPY_MAX 256u

static _Atomic int64_t g_live_bytes;

struct sim_block_hdr {
	size_t size;
	uint64_t pad_[7];
};

static void *sim_alloc(void *ud, size_t size)
{
	(void)ud;
	if (size == 0)
		size = 1;
	if (size > SIZE_MAX - 63u - sizeof(struct sim_block_hdr))
		return NULL;
	size_t rounded = (size + 63u) & ~(size_t)63u;
	/* Zeroed with its pages present (base/prefault.h), faulted in by the
	 * allocating thread in one call rather than page by page. */
	struct sim_block_hdr *b = tp_alloc_prefaulted(sizeof(*b) + rounded);
	if (!b)
		return NULL;
	b->size = rounded;
	atomic_fetch_add_explicit(&g_live_bytes, (int64_t)rounded, memory_order_relaxed);
	return b + 1;
}

static void sim_free(void *ud, void *dev)
{
	(void)ud;
	if (!dev)
		return;
	struct sim_block_hdr *b = (struct sim_block_hdr *)dev - 1;
	atomic_fetch_sub_explicit(&g_live_bytes, (int64_t)b->size, memory_order_relaxed);
	free(b);
}

int64_t tp_memops_sim_live_bytes(void)
{
	return atomic_load_explicit(&g_live_bytes, memory_order_relaxed);
}

static bool words_aligned(const void *a, const void *b, size_t n)
{
	return ((uintptr_t)a % 4 == 0) && ((uintptr_t)b % 4 == 0) && (n % 4 == 0);
}

void tp_sim_dma_to_device(void *dev_dst, const void *host_src, size_t size)
{
	if (size > SIM_ATOMIC_COPY_MAX || !words_aligned(dev_dst, host_src, size)) {
		memcpy(dev_dst, host_src, size);
		return;
	}
	_Atomic uint32_t *d = dev_dst;
	const _Atomic uint32_t *s = host_src;
	for (size_t i = 0; i < size / 4; i++) {
		uint32_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
		/* release: a device reader that acquires this word also sees
		 * every earlier host write (the slot before the tail). */
		atomic_store_explicit(&d[i], v, memory_order_release);
	}
}

void tp_sim_dma_from_device(void *host_dst, const void *dev_src, size_t size)
{
	if (size > SIM_ATOMIC_COPY_MAX || !words_aligned(host_dst, dev_src, size)) {
		memcpy(host_dst, dev_src, size);
		return;
	}
	_Atomic uint32_t *d = host_dst;
	const _Atomic uint32_t *s = dev_src;
	for (size_t i = 0; i < size / 4; i++) {
		/* acquire: pairs with the device's release store of a queue
		 * tail, so the entry and buffer behind it are visible next. */
		uint32_t v = atomic_load_explicit(&s[i], memory_order_acquire);
		atomic_store_explicit(&d[i], v, memory_order_relaxed);
	}
}

static int sim_copy_to_device(void *ud, void *dev_dst, const void *host_src, size_t size)
{
	(void)ud;
	tp_sim_dma_to_device(dev_dst, host_src, size);
	return 0;
}

static int sim_copy_from_device(void *ud, void *host_dst, const void *dev_src, size_t size)
{
	(void)ud;
	tp_sim_dma_from_device(host_dst, dev_src, size);
	return 0;
}

struct tp_memops tp_memops_sim_svm(void)
{
	struct tp_memops ops = {
		.alloc = sim_alloc,
		.free_ = sim_free,
	};
	return ops;
}

struct tp_memops tp_memops_sim_shadow(void)
{
	struct tp_memops ops = {
		.alloc = sim_alloc,
		.free_ = sim_free,
		.copy_to_device = sim_copy_to_device,
		.copy_from_device = sim_copy_from_device,
	};
	return ops;
}
