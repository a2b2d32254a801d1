/*
 * module.h — the Module trait and MemoryOps of the profiling framework.
 *
 * A collector describes its pool to the framework with one `const struct
 * tp_module` (seed 004 §3.3: sizes, limits, a few callbacks; no state) and
 * gets device memory through one `struct tp_memops` (seed 004 §3.1 and §8:
 * alloc / reg / free, plus copy_to_device / copy_from_device for the a5
 * host-shadow transport).  Everything else — queues, pools, threads — lives
 * once in transport/.
 */
#ifndef TP_TRANSPORT_MODULE_H
#define TP_TRANSPORT_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/layout.h"

/**
 * struct tp_ready_info - one full buffer handed to a collector's
 * on_buffer_collected (seed 004 §3.4, the ReadyBufferInfo). The host
 * views are valid only during the callback.
 */
struct tp_ready_info {
	uint32_t kind;        /* buffer kind */
	uint32_t instance;    /* producer instance (core, thread, ...) */
	uint32_t thread;      /* ready queue / AICPU thread it arrived on */
	uint32_t seq;         /* producer's buffer sequence number */
	uint32_t count;       /* records in the buffer (validated <= capacity) */
	uint32_t record_size; /* bytes per record */
	uint64_t dev_ptr;     /* device address of the buffer */
	void *host_ptr;       /* host view of the whole buffer (header first) */
	const void *records;  /* host view of record 0 */
};

/**
 * struct tp_module - a collector's description of its pool (seed 004
 * §3.3, spec/framework.md §7 Module contract): sizes, limits, a few
 * callbacks; no state. Sizes are in bytes, depths and capacities in
 * entries / records; a 0 (or NULL) field takes the default given beside
 * it (spec/framework.md §6.2).
 */
struct tp_module {
	const char *name;          /* kSubsystemName: tag of every log line */
	const char *kind_names[TP_MAX_KINDS]; /* pool names for reconcile lines; NULL -> "kind<k>" */
	int kinds;                 /* kBufferKinds, 1..TP_MAX_KINDS */
	uint32_t ready_queue_size; /* kReadyQueueSize: entries per AICPU thread */
	uint32_t slot_count;       /* kSlotCount: free-queue depth, 1..TP_FQ_MAX_SLOTS */
	uint32_t host_pool_queue_size;     /* done ring depth; 0 -> 1024 */
	uint32_t host_recycled_queue_size; /* recycled lane depth; 0 -> done depth */
	int max_collector_threads;         /* shard array capacity; 0 -> 1 */
	int idle_timeout_sec;              /* collector hang detector; 0 -> 30 */
	uint32_t record_size[TP_MAX_KINDS];        /* bytes per record, per kind */
	uint32_t records_per_buffer[TP_MAX_KINDS]; /* records per buffer, per kind */
	/* Buffers per batch allocation of `kind`; NULL -> 1. */
	int (*batch_size)(int kind);
	/* Low-water mark of each recycled lane of `kind` with `shard_count`
	 * live shards; NULL -> 0 (no warm buffers). */
	int (*recycled_warm_target)(int kind, int shard_count);
	/* Optional extra check of a popped ready entry (after the framework's
	 * own range checks); return false to drop it. */
	bool (*accept_entry)(const struct tp_shm_header *h, uint32_t q,
			     const struct tp_ready_entry *e);
};

/**
 * struct tp_memops - device memory callbacks (seed 004 §3.1 MemoryOps, §8;
 * spec/framework.md §6.1). Device addresses are plain process addresses
 * in the simulated platforms, carried as uint64_t in shared memory. Every
 * callback gets @ud first.
 *
 * alloc:   device allocation of `size` bytes, zeroed, 64-aligned; NULL on failure.
 * reg:     give the host view of [dev, dev+size) in *host_out; 0 or -errno.
 *          NULL means: identity (a2a3 shared mapping) when no copy ops are set,
 *          a framework-owned malloc shadow when they are (a5).
 * free_:   release a device allocation made by alloc.
 * copy_to_device / copy_from_device: move `size` bytes between a host shadow
 *          and device memory; 0 or -errno.  NULL on shared-mapping transports.
 */
struct tp_memops {
	void *(*alloc)(void *ud, size_t size);
	int (*reg)(void *ud, void *dev, size_t size, void **host_out);
	void (*free_)(void *ud, void *dev);
	int (*copy_to_device)(void *ud, void *dev_dst, const void *host_src, size_t size);
	int (*copy_from_device)(void *ud, void *host_dst, const void *dev_src, size_t size);
	void *ud;
};

/**
 * tp_memops_sim_svm() - heap-backed device memory with a shared mapping
 * (a2a3sim): the host reads device memory directly.
 *
 * alloc gives zeroed, 64-byte-aligned blocks whose pages are already
 * present (tp_alloc_prefaulted(); a size of 0 allocates 1 byte) or NULL;
 * reg and the copy ops are NULL.
 *
 * Return: the callbacks (ud NULL).
 */
struct tp_memops tp_memops_sim_svm(void);

/**
 * tp_memops_sim_shadow() - heap-backed device memory with a host shadow
 * (a5sim, spec/framework.md §9): alloc / free_ as tp_memops_sim_svm(),
 * reg NULL (the framework's malloc shadow), copy ops tp_sim_dma_to_device()
 * / tp_sim_dma_from_device(), which always return 0.
 *
 * Return: the callbacks (ud NULL).
 */
struct tp_memops tp_memops_sim_shadow(void);

/**
 * tp_sim_dma_to_device() - the simulated DMA of the host-shadow
 * transport, host to device.
 * @dev_dst:  device address.
 * @host_src: host shadow address.
 * @size:     bytes.
 *
 * Field-sized copies (<= 256 bytes, both addresses and @size multiples of
 * 4) go word by word with release stores, because the device reads
 * neighbouring fields concurrently; larger or unaligned copies are memcpy
 * and must only cover memory the device does not use concurrently.
 */
void tp_sim_dma_to_device(void *dev_dst, const void *host_src, size_t size);

/**
 * tp_sim_dma_from_device() - the simulated DMA, device to host shadow.
 * @host_dst: host shadow address.
 * @dev_src:  device address.
 * @size:     bytes.
 *
 * As tp_sim_dma_to_device(), with acquire loads for field-sized copies
 * (pairing with the device's release store of a queue tail); larger
 * copies must only cover memory the device does not write concurrently
 * (a published buffer, or the region before launch / after the device
 * stopped).
 */
void tp_sim_dma_from_device(void *host_dst, const void *dev_src, size_t size);

/**
 * tp_memops_sim_live_bytes() - device memory currently allocated through
 * the sim memops, process-wide (for leak tests).
 *
 * Return: bytes (each block rounded up to 64).
 */
int64_t tp_memops_sim_live_bytes(void);

#endif
