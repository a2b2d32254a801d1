/* SPDX-License-Identifier: MIT */
/*
 * platform/dev_memory.h — the device memory arena of one simulated device.
 *
 * Device memory (GM) is one anonymous mapping per device, reserved with
 * MAP_NORESERVE (default 1 GiB: address space only; pages cost RAM when
 * first touched). Device addresses are ordinary process addresses inside
 * it, so kernels on AICore threads dereference them directly; the host
 * goes through tp_rt_memcpy or, for the profiling transport, through the
 * struct tp_memops of tp_dev_memops() (ARCHITECTURE.md §1).
 *
 * Allocator: first fit over an address-ordered table of segments kept
 * outside the arena (a kernel that overruns its buffer cannot corrupt the
 * bookkeeping), 64-byte alignment, neighbouring free segments coalesced on
 * free. One mutex; allocation is O(segments). Large frees give their whole
 * pages back to the kernel (MADV_DONTNEED).
 *
 * Errors are reported, never crashed on: double free, interior or foreign
 * pointers and exhaustion return -EINVAL / NULL with a message naming the
 * device, the address and what the arena holds there.
 *
 * Under AddressSanitizer freed blocks and the padding behind each
 * allocation are poisoned (blocks up to TP_DEV_MEM_ASAN_POISON_MAX), so a
 * kernel reading past its buffer or a use after tp_rt_free is reported.
 */
#ifndef TASKPROF_PLATFORM_DEV_MEMORY_H
#define TASKPROF_PLATFORM_DEV_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/module.h"

/* Alignment of every allocation, bytes (a cache line; PmuBuffer and the
 * transport's structs are aligned(64), spec/pmu.md §3). */
#define TP_DEV_MEM_ALIGN 64u

/* Default arena reservation, bytes. */
#define TP_DEV_MEM_DEFAULT_BYTES (1ull << 30)

/* Smallest arena, bytes. */
#define TP_DEV_MEM_MIN_BYTES (64ull << 10)

/* Largest block whose memory ASan poisoning covers, bytes. */
#define TP_DEV_MEM_ASAN_POISON_MAX (64ull << 20)

struct tp_dev_mem;

/**
 * struct tp_dev_mem_stats - counters of one arena, a snapshot taken under
 * the arena lock (tp_dev_mem_stats()); sizes in bytes, the rest counts.
 */
struct tp_dev_mem_stats {
	size_t reserved_bytes;     /* size of the mapping */
	size_t live_bytes;         /* bytes in live allocations, each rounded up to 64 */
	size_t live_requested;     /* bytes callers asked for, live allocations */
	size_t peak_bytes;         /* highest live_bytes seen */
	size_t largest_free;       /* largest free segment, bytes */
	size_t live_allocs;        /* live allocations */
	size_t free_segments;      /* free segments (1 when nothing is fragmented) */
	uint64_t total_allocs;     /* successful allocations since creation */
	uint64_t total_frees;      /* successful frees since creation */
	uint64_t failed_allocs;    /* allocations refused (size 0, too large, exhausted) */
	uint64_t bad_frees;        /* frees refused (double, interior, foreign) */
};

/**
 * tp_dev_mem_create() - reserve a device arena.
 * @bytes:     size to reserve, bytes; 0 means TP_DEV_MEM_DEFAULT_BYTES.
 *             Rounded up to the page size; at least TP_DEV_MEM_MIN_BYTES.
 * @device_id: id used in messages ("device 0 memory: ...").
 *
 * Return: the arena, or NULL with tp_last_error() set (-EINVAL for a size
 * below the minimum, -ENOMEM when mmap or malloc fails).
 */
struct tp_dev_mem *tp_dev_mem_create(size_t bytes, int device_id);

/**
 * tp_dev_mem_destroy() - unmap the arena.
 * @mem: an arena, or NULL (no-op).
 *
 * Live allocations are released with it; a DEBUG line says how many bytes
 * were still live. No thread may touch the arena afterwards.
 */
void tp_dev_mem_destroy(struct tp_dev_mem *mem);

/**
 * tp_dev_mem_alloc() - allocate device memory.
 * @mem:  the arena.
 * @size: bytes, > 0.
 * @zero: true to zero the block (the transport's alloc contract); false
 *        leaves whatever the memory held (fresh pages read as 0).
 *
 * Thread-safe.
 *
 * Return: a TP_DEV_MEM_ALIGN-aligned device address, or NULL with
 * tp_last_error() set: -EINVAL for size 0, -ENOMEM when no free segment is
 * large enough (the message gives free bytes and the largest free block).
 */
void *tp_dev_mem_alloc(struct tp_dev_mem *mem, size_t size, bool zero);

/**
 * tp_dev_mem_free() - release an allocation.
 * @mem: the arena.
 * @ptr: an address returned by tp_dev_mem_alloc() on @mem; NULL is a no-op
 *       returning 0.
 *
 * Thread-safe. Coalesces the block with free neighbours.
 *
 * Return: 0, or -EINVAL without touching anything when @ptr is not a live
 * allocation of @mem; the message (also logged at ERROR) says which:
 * "double free" (it lies in free space), "interior pointer" (inside a live
 * block, not at its start) or "foreign pointer" (outside the arena).
 */
int tp_dev_mem_free(struct tp_dev_mem *mem, void *ptr);

/**
 * tp_dev_mem_owns() - whether a range lies inside one live allocation.
 * @mem:  the arena.
 * @ptr:  first byte of the range.
 * @size: bytes; 0 checks only that @ptr is inside or at the end of a live
 *        allocation.
 *
 * The bound is the size the caller asked for, not the 64-byte rounding.
 *
 * Return: true when [ptr, ptr + size) is inside one live allocation.
 */
bool tp_dev_mem_owns(struct tp_dev_mem *mem, const void *ptr, size_t size);

/**
 * tp_dev_mem_in_arena() - whether an address lies inside the mapping.
 * @mem: the arena.
 * @ptr: any address.
 *
 * Lock-free (the mapping never moves). Return: true when @ptr is inside
 * [base, base + reserved), allocated or not.
 */
bool tp_dev_mem_in_arena(const struct tp_dev_mem *mem, const void *ptr);

/**
 * tp_dev_mem_overlaps() - whether a range touches the mapping at all.
 * @mem:  the arena.
 * @ptr:  first byte of the range.
 * @size: bytes (a range that would wrap the address space is clamped at
 *        its top).
 *
 * Lock-free. For checking that a "host" buffer is not device memory.
 *
 * Return: true when [ptr, ptr + size) and the mapping share a byte (for
 * @size 0: when @ptr is inside the mapping).
 */
bool tp_dev_mem_overlaps(const struct tp_dev_mem *mem, const void *ptr, size_t size);

/**
 * tp_dev_mem_check() - explain why a range is not device memory.
 * @mem:  the arena.
 * @ptr:  first byte of the range.
 * @size: bytes.
 * @what: name of the argument for the message ("dst", "src").
 *
 * Return: 0 when tp_dev_mem_owns(); otherwise -EFAULT with tp_last_error()
 * naming the range and the allocation it overruns or the free space /
 * foreign memory it points to.
 */
int tp_dev_mem_check(struct tp_dev_mem *mem, const void *ptr, size_t size,
		     const char *what);

/**
 * tp_dev_mem_stats() - snapshot of the arena's counters.
 * @mem: the arena.
 * @out: receives the snapshot.
 */
void tp_dev_mem_stats(struct tp_dev_mem *mem, struct tp_dev_mem_stats *out);

/**
 * tp_dev_mem_live_bytes() - bytes in live allocations (64-byte rounded).
 * @mem: the arena.
 *
 * Lock-free relaxed read; exact when no allocation runs concurrently.
 */
size_t tp_dev_mem_live_bytes(const struct tp_dev_mem *mem);

/**
 * tp_dev_mem_copy_to_device() - the simulated DMA from host memory to
 * device memory; tp_dev_mem_copy_from_device() is the other direction
 * (spec/framework.md §9).
 * @mem:  the arena (the device side of the copy must be owned by it).
 * @dst, @src: destination and source (the device one is @dst for
 *        _to_device, @src for _from_device).
 * @size: bytes.
 *
 * The a5 host-shadow rule of transport/memops_sim.c: copies of at most 256
 * bytes whose addresses and size are 4-byte aligned run word by word with
 * atomic accesses (release stores to the device, acquire loads from it),
 * because the device writes neighbouring fields concurrently; larger
 * copies use memcpy and are issued only for memory the device has handed
 * over or does not run on.
 *
 * Return: 0, or -EFAULT (message set) when the device range is not inside
 * one live allocation; nothing is copied then.
 */
int tp_dev_mem_copy_to_device(struct tp_dev_mem *mem, void *dst, const void *src,
			      size_t size);
int tp_dev_mem_copy_from_device(struct tp_dev_mem *mem, void *dst, const void *src,
				size_t size);

struct tp_device;

/**
 * tp_dev_memops() - device memory callbacks for the profiling transport.
 * @dev: an open device; the callbacks use its arena and must not be called
 *       after tp_device_close().
 *
 * alloc returns zeroed, 64-aligned blocks of the arena (NULL when it is
 * exhausted); free_ releases them (a bad pointer is logged at ERROR, not
 * crashed on); reg is NULL. On a shared-mapping platform (a2a3sim) the copy
 * callbacks are NULL, so the transport reads device buffers in place; on a
 * host-shadow platform (a5sim) they are tp_dev_mem_copy_to_device() /
 * tp_dev_mem_copy_from_device(), and the transport keeps malloc shadows
 * (transport/module.h, seed 004 §8).
 *
 * Return: the callbacks, ud = the device's arena.
 */
struct tp_memops tp_dev_memops(struct tp_device *dev);

#endif /* TASKPROF_PLATFORM_DEV_MEMORY_H */
