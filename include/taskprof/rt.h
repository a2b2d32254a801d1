/* SPDX-License-Identifier: MIT */
/*
 * taskprof/rt.h — operator-level device API of the simulated device
 * (ARCHITECTURE.md §4, issue 3 §2).
 *
 * An application allocates device memory, copies inputs in, launches SPMD
 * kernels and copies results out, as with a real accelerator runtime:
 *
 *     float *d_x;
 *     tp_rt_malloc((void **)&d_x, n * sizeof(float));
 *     tp_rt_memcpy(d_x, x, n * sizeof(float), TP_RT_MEMCPY_HOST_TO_DEVICE);
 *     tp_rt_launch(my_kernel, 8, &args);
 *     tp_rt_synchronize();
 *     tp_rt_memcpy(x, d_x, n * sizeof(float), TP_RT_MEMCPY_DEVICE_TO_HOST);
 *     tp_rt_free(d_x);
 *
 * The device is simulated: kernels run on AICore threads, each block on
 * one core, dispatched by an AICPU thread through the cores' registers
 * (spec/runtime-model.md §2.7–§2.8). Device memory is the device's arena;
 * on a5sim the host must not dereference device pointers — move data with
 * tp_rt_memcpy.
 *
 * A device opens on first use (any call below that needs it) and stays
 * open, its idle threads asleep, until tp_rt_reset_device() or process
 * exit. Opening reads the environment:
 *
 *   TASKPROF_PLATFORM       "a2a3sim" (default when unset or empty) or
 *                           "a5sim"
 *   TASKPROF_DEVICE_MEM_MB  device memory per device, MiB, 1..1048576
 *                           (default 1024; address space is reserved, RAM
 *                           is used only as pages are touched)
 *
 * Threads: every function may be called from any host thread. Kernels
 * must not call tp_rt_launch, tp_rt_synchronize or tp_rt_reset_device
 * (-EPERM: the device would wait for itself).
 *
 * fork(): a device belongs to the process that opened it. In a child
 * forked after a device opened, every call on that device fails with
 * -ENODEV ("device D was opened by process P before it forked"), as its
 * threads stayed in the parent; tp_rt_reset_device(D) in the child forgets
 * it (the parent's device is untouched) and the next call opens a device
 * of the child's own, with memory of its own. Devices the parent had not
 * opened open in the child as usual.
 *
 * Every function is an exported symbol of libtaskprof.so, so that a tool
 * can interpose it with LD_PRELOAD (`taskprof op`, spec/opprof.md). None of
 * them calls another through its exported name.
 *
 * Errors: 0 on success or a negative errno; tp_last_error() (taskprof.h)
 * then says what was wrong, on the calling thread.
 */
#ifndef TASKPROF_RT_H
#define TASKPROF_RT_H

#include <stddef.h>
#include <stdint.h>

#include "taskprof/taskprof.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TP_RT_API __attribute__((visibility("default")))

/* Simulated devices per process (ids 0 .. TP_RT_MAX_DEVICES - 1). */
#define TP_RT_MAX_DEVICES 4
/* Largest block_dim of one launch (blocks beyond the core count run in
 * turn as cores become free). */
#define TP_RT_MAX_BLOCK_DIM 65535u

enum tp_rt_memcpy_kind {
	TP_RT_MEMCPY_HOST_TO_DEVICE = 1,
	TP_RT_MEMCPY_DEVICE_TO_HOST = 2,
	TP_RT_MEMCPY_DEVICE_TO_DEVICE = 3,
};

/**
 * typedef tp_rt_kernel_fn - an SPMD kernel body.
 * @block_idx: this block, 0 .. block_dim - 1.
 * @block_dim: blocks of the launch.
 * @args:      the pointer given to tp_rt_launch(), unchanged.
 */
typedef void (*tp_rt_kernel_fn)(uint32_t block_idx, uint32_t block_dim, void *args);

/**
 * tp_rt_set_device() - make @device_id the current device, opening it.
 * @device_id: 0 .. TP_RT_MAX_DEVICES - 1.
 *
 * The current device is per thread, like aclrtSetDevice / cudaSetDevice:
 * device 0 is current on a thread until it calls this. Opening reads the
 * environment (above), reserves the device's memory and starts its
 * threads (the platform's AICPU launch threads, of which 1 runs the
 * dispatcher, and 24 AICore threads, idle ones asleep).
 *
 * Return: 0; -ENODEV for an id out of range; -EINVAL for an unknown
 * TASKPROF_PLATFORM or a bad TASKPROF_DEVICE_MEM_MB; -EBUSY when another
 * open device uses a platform with a different system counter; -ENOMEM /
 * -EAGAIN / -ETIMEDOUT when the device cannot be created or started.
 */
TP_RT_API int tp_rt_set_device(int device_id);

/**
 * tp_rt_get_device() - the current device id.
 * @device_id: receives the calling thread's current device id.
 *
 * Does not open the device.
 *
 * Return: 0, or -EINVAL when @device_id is NULL.
 */
TP_RT_API int tp_rt_get_device(int *device_id);

/**
 * tp_rt_reset_device() - stop device @device_id and release its memory.
 * @device_id: 0 .. TP_RT_MAX_DEVICES - 1.
 *
 * Every device pointer of that device becomes invalid. A later call that
 * uses the device opens it afresh. Resetting a device that is not open
 * does nothing.
 *
 * Waits for a launch in progress on the device to finish first.
 *
 * Return: 0; -ENODEV for an id out of range; -EPERM from a kernel;
 * -ETIMEDOUT when its AICore threads did not stop within 10 s (a kernel
 * that never returns): the device is then abandoned, its memory and
 * threads leaked, and a later call opens a new one.
 */
TP_RT_API int tp_rt_reset_device(int device_id);

/**
 * tp_rt_malloc() - allocate device memory on the current device.
 * @dev_ptr: receives the device address (64-byte aligned), or NULL on
 *           failure.
 * @size:    bytes, > 0. The memory is not cleared (memory never used
 *           before reads as zero; a reused block keeps old bytes).
 *
 * Return: 0; -EINVAL for a NULL @dev_ptr or @size 0; -ENOMEM when the
 * device memory is exhausted (the message gives what is free); the errors
 * of tp_rt_set_device() when the device cannot be opened.
 */
TP_RT_API int tp_rt_malloc(void **dev_ptr, size_t size);

/**
 * tp_rt_free() - release device memory.
 * @dev_ptr: an address from tp_rt_malloc() on the current device; NULL
 *           does nothing.
 *
 * Return: 0, or -EINVAL (nothing freed, logged at ERROR) for a double
 * free, an interior or a foreign pointer; the errors of
 * tp_rt_set_device() when the device cannot be opened.
 */
TP_RT_API int tp_rt_free(void *dev_ptr);

/**
 * tp_rt_memcpy() - copy bytes between host and device memory.
 * @dst:  destination.
 * @src:  source.
 * @size: bytes; 0 copies nothing.
 * @kind: HOST_TO_DEVICE (dst is device memory, src is not),
 *        DEVICE_TO_HOST (src is device memory, dst is not) or
 *        DEVICE_TO_DEVICE (both are; the ranges may overlap).
 *
 * Every device range must lie inside one live allocation of the current
 * device. Synchronous: returns when the bytes are in place.
 *
 * Return: 0; -EINVAL for NULL pointers (even with @size 0), an unknown
 * @kind, a range that wraps around the address space, or a host range
 * that overlaps device memory; -EFAULT for a device range that is not
 * inside one live allocation (the message says which allocation it
 * overruns, and by how much); the errors of tp_rt_set_device().
 */
TP_RT_API int tp_rt_memcpy(void *dst, const void *src, size_t size,
			   enum tp_rt_memcpy_kind kind);

/**
 * tp_rt_launch() - run an SPMD kernel on the current device.
 * @kernel:    the kernel.
 * @block_dim: blocks, 1 .. TP_RT_MAX_BLOCK_DIM. Each block runs once, on
 *             one AICore thread; with more blocks than cores, a core takes
 *             the next block when it finishes one. The first wave goes
 *             to the AIV cores, then the AIC cores: on the device's 8
 *             clusters, blocks 0..15 run on AIV cores 8..23 and blocks
 *             16..23 on AIC cores 0..7 (core ids of runtime-model.md §1.2).
 * @args:      passed to every block unchanged (it may point to host
 *             memory holding device pointers).
 *
 * The kernel has run to completion on every block when this returns (the
 * simulated stream has depth 1), so @args may live on the caller's stack.
 * Launches on one device from several threads run one after another.
 *
 * Kernels may use the tile API (taskprof/kernel.h): each AICore thread
 * has its core's context bound, reset before every block. When a tile op
 * of a block fails, every block still runs to its end and the launch
 * returns that op's error (the failing block with the lowest index); the
 * message names the kernel (tp_rt_launch_attr's name, its symbol, or
 * "<object>+0x<offset>" when it has none), the block, the core and the op's own message.
 *
 * Return: 0; -EINVAL for a NULL @kernel or @block_dim out of range;
 * -EPERM from a kernel; a tile op's negative errno (above); the errors of
 * tp_rt_set_device() when the device cannot be opened.
 */
TP_RT_API int tp_rt_launch(tp_rt_kernel_fn kernel, uint32_t block_dim, void *args);

/**
 * tp_rt_synchronize() - wait until the current device is idle.
 *
 * Returns once every launch issued on the calling thread's current device
 * before it (by any thread) has completed. Does not open the device: with
 * nothing opened there is nothing to wait for.
 *
 * Return: 0, or -EPERM from a kernel.
 */
TP_RT_API int tp_rt_synchronize(void);

/**
 * enum tp_rt_cores - which AICores a launch's blocks run on.
 * @TP_RT_CORES_ANY: the order of tp_rt_launch(): AIV cores first, then AIC.
 * @TP_RT_CORES_AIV: vector cores only (16 per device); blocks beyond them
 *                   wait for a free AIV core.
 * @TP_RT_CORES_AIC: cube cores only (8 per device); needed by kernels that
 *                   use L1 / L0A / L0B / L0C and tp_mmad.
 */
enum tp_rt_cores {
	TP_RT_CORES_ANY = 0,
	TP_RT_CORES_AIV = 1,
	TP_RT_CORES_AIC = 2,
};

/**
 * struct tp_rt_launch_attr - optional attributes of a launch.
 * @name:  the kernel's name as tools report it (`taskprof op -k` matches
 *         it); NULL: the kernel function's exported symbol name
 *         (dladdr), or "<object>+0x<offset>" when it has none: the file
 *         name of the executable or library that holds it and the
 *         function's offset in it, the same in every run. A string with static storage.
 * @cores: where the blocks run (enum tp_rt_cores).
 */
struct tp_rt_launch_attr {
	const char *name;
	enum tp_rt_cores cores;
};

/**
 * tp_rt_launch_ex() - tp_rt_launch() with attributes.
 * @kernel, @block_dim, @args: as tp_rt_launch().
 * @attr: NULL behaves exactly as tp_rt_launch().
 *
 * Return: as tp_rt_launch(); -EINVAL also for an unknown @attr->cores.
 */
TP_RT_API int tp_rt_launch_ex(tp_rt_kernel_fn kernel, uint32_t block_dim, void *args,
			      const struct tp_rt_launch_attr *attr);

/**
 * tp_rt_range_push() / tp_rt_range_pop() - mark a range of device API
 * calls (the mstx range markers' role). On their own they do nothing but
 * check pairing; `taskprof op --replay-mode range` replays every launch
 * between them as one unit (spec/opprof.md §4.8).
 * @name: the range's name, a string with static storage, not NULL.
 *
 * Ranges do not nest and are per thread.
 *
 * Return: 0; -EINVAL for a NULL @name, a push while a range is open on
 * the thread, or a pop with none open.
 */
TP_RT_API int tp_rt_range_push(const char *name);
TP_RT_API int tp_rt_range_pop(void);

#ifdef __cplusplus
}
#endif

#endif /* TASKPROF_RT_H */
