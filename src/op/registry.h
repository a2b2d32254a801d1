/* SPDX-License-Identifier: MIT */
/*
 * op/registry.h — the process-wide registry of live device allocations,
 * host snapshots of them, and the replay lock of `taskprof op` (spec/
 * opprof.md §3.3, §4.4, §4.8, §4.9; issue 6 scope 4).
 *
 * Registry. ONE table for the whole process (msopcom keeps it per thread,
 * so a buffer allocated on thread B is never restored for a launch on
 * thread A): address → {size, device, generation}, added by the
 * tp_rt_malloc post-hook and removed by the tp_rt_free pre-hook. Every add
 * gets a new generation; a remove also drops the allocation from every
 * live snapshot (its host pages are returned), so free + malloc at the same
 * address with another size can never restore stale bytes: a snapshot
 * entry is restored only into the allocation of the same base AND
 * generation.
 *
 * Snapshots live in host memory from anonymous mmap (never tp_rt_malloc:
 * the snapshot does not cost device capacity and is not itself
 * registered). Backup and restore go through a copy function, the REAL
 * tp_rt_memcpy in the injector (D2H / H2D: the host must not touch a5sim
 * device memory), plain memcpy in unit tests. Copies are whole
 * allocations, memcpy-class: no per-byte work on the restore path.
 *
 * Replay lock ("gate"). Ordinary device calls (malloc, free, memcpy,
 * launch) enter the gate shared; a replay window enters it exclusive, so
 * while a window is open other threads' calls wait, and none is in flight
 * when it opens. The window's owner passes the gate freely (its own
 * nested calls). Frees the owner issues inside a range are queued
 * (tp_op_defer_free) and performed after the last pass; a malloc meanwhile
 * cannot return a queued address because the block is still allocated.
 *
 * Every function is thread-safe.
 */
#ifndef TASKPROF_OP_REGISTRY_H
#define TASKPROF_OP_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "taskprof/rt.h"

/* Bytes of a launch's args blob scanned for device pointers (args scope,
 * range capture): the args are an opaque host pointer of unknown size;
 * 256 bytes hold 32 pointer-sized words, more than any kernel argument
 * struct of the examples. Scanning stops early at an unmapped page. */
#define TP_OP_ARGS_WINDOW 256u

/** typedef tp_op_copy_fn - tp_rt_memcpy()'s signature: the device copy the
 *  registry uses for backup (D2H), restore (H2D) and hashing (D2H). */
typedef int (*tp_op_copy_fn)(void *dst, const void *src, size_t n,
			     enum tp_rt_memcpy_kind kind);

/**
 * struct tp_op_alloc - one live allocation.
 * @base:   its device address.
 * @size:   bytes.
 * @device: the device it was allocated on.
 * @gen:    generation, unique per add in the process (starts at 1).
 */
struct tp_op_alloc {
	uintptr_t base;
	size_t size;
	int device;
	uint64_t gen;
};

/** tp_op_reg_set_copy() - the copy function of every later backup, restore
 *  and hash (the real tp_rt_memcpy in the injector). */
void tp_op_reg_set_copy(tp_op_copy_fn fn);

/**
 * tp_op_reg_add() - register @size bytes at @p on @device (malloc post-hook).
 * An entry already at @p (a free the hooks did not see) is replaced and
 * dropped from every snapshot first.
 * @gen_out: receives the new generation (may be NULL).
 *
 * Return: 0; -EINVAL for NULL @p or @size 0; -ENOMEM.
 */
int tp_op_reg_add(void *p, size_t size, int device, uint64_t *gen_out);

/**
 * tp_op_reg_remove() - unregister the allocation at @p (free pre-hook),
 * dropping it from every live snapshot.
 *
 * Return: 0; -ENOENT when @p is not the base of a registered allocation.
 */
int tp_op_reg_remove(void *p);

/**
 * tp_op_reg_lookup() - the registered allocation containing @addr.
 * Return: 0 with @out filled; -ENOENT when none contains it.
 */
int tp_op_reg_lookup(const void *addr, struct tp_op_alloc *out);

/** tp_op_reg_count() - registered allocations. */
size_t tp_op_reg_count(void);

/** tp_op_reg_footprint() - bytes registered on @device (-1: every device). */
uint64_t tp_op_reg_footprint(int device);

/**
 * tp_op_reg_args_footprint() - the allocations of @device that the
 * pointer-looking words of @args reach: every 8-byte-aligned 8-byte word
 * of [@args, @args + @window) that lies inside a registered allocation
 * (the args scope of spec §4.9).
 * @bytes, @count: receive their total size and number (each counted once).
 */
void tp_op_reg_args_footprint(int device, const void *args, size_t window, uint64_t *bytes,
			      size_t *count);

/**
 * struct tp_op_arg_ref - a pointer-looking word of a launch's args that
 * replay of a @device launch cannot restore what it points to (see
 * tp_op_args_outside()).
 * @offset: the word's byte offset from the args pointer.
 * @value:  the word.
 * @device: the device of the registered allocation it points into (not
 *          the launch's), or -1: no registered allocation — host memory
 *          (globals, heap, stack) or device memory the registry does not
 *          track.
 */
struct tp_op_arg_ref {
	size_t offset;
	uintptr_t value;
	int device;
};

/**
 * tp_op_args_outside() - the words of @args (the 8-byte-aligned words of
 * [@args, @args + @window), the read stopping at an unreadable page) that
 * look like pointers to memory a kernel of @device could write but a
 * replay of @device does not restore: a value that is not a small integer
 * (below 64 KiB) nor outside the user address space, and that is either
 * inside a registered allocation of another device (with that device) or
 * in no registered allocation but in [@stack_lo, @stack_hi) or in a
 * writable mapping of the process that only the kernel would write while
 * it runs (/proc/self/maps, read once per call): the executable's data,
 * [heap], anonymous memory. Code and read-only data (a kernel cannot
 * write them), shared libraries' data (the loader and the C library
 * change theirs), glibc thread arenas and the stacks of threads (they
 * change as their threads run) do not count.
 * @stack_lo, @stack_hi: the part of a stack that counts (the caller's
 *            frames above the args), or 0, 0.
 * @out, @max: receive the first @max of them.
 *
 * Return: how many words were found (may exceed @max).
 */
size_t tp_op_args_outside(int device, const void *args, size_t window, uintptr_t stack_lo,
			  uintptr_t stack_hi, struct tp_op_arg_ref *out, size_t max);

/** tp_op_reg_drop_device() - forget every allocation of @device (its
 *  reset freed them all), dropping them from every snapshot. */
void tp_op_reg_drop_device(int device);

/**
 * tp_op_safe_read() - copy up to @n bytes of this process's memory at @src
 * into @dst without faulting: page by page through process_vm_readv(2),
 * stopping at the first unreadable page (a host blob of unknown size, a
 * name pointer from a kernel). Invisible to ASan (the kernel copies).
 * Return: bytes copied.
 */
size_t tp_op_safe_read(const void *src, void *dst, size_t n);

/** tp_op_reg_clear() - forget every allocation and snapshot entry (tests). */
void tp_op_reg_clear(void);

/* ---- snapshots ----------------------------------------------------------- */

enum tp_op_snap_scope {
	TP_OP_SNAP_ALL = 0,  /* every allocation of the device */
	TP_OP_SNAP_ARGS = 1, /* those tp_op_reg_args_footprint() finds */
};

struct tp_op_snap;

/**
 * tp_op_snap_take() - back up allocations of @device into host memory.
 * @scope: TP_OP_SNAP_ALL, or TP_OP_SNAP_ARGS with @args / @window.
 * @out:   receives the snapshot (tp_op_snap_release() it).
 *
 * Return: 0; -ENOMEM (host memory); the copy function's error, with a
 * message naming the allocation.
 */
int tp_op_snap_take(int device, enum tp_op_snap_scope scope, const void *args, size_t window,
		    struct tp_op_snap **out);

/**
 * tp_op_snap_take_file() - tp_op_snap_take(@device, TP_OP_SNAP_ALL), the
 * bytes kept in the file @path instead of host memory (spec §4.9 step 3:
 * a footprint over the host budget). The file is created (O_EXCL, 0600)
 * only when its file system has the room (statvfs, with a 16 MiB margin)
 * and the file size limit allows it, its blocks reserved
 * (posix_fallocate), written and later read through a 4 MiB bounce
 * buffer (pwrite / pread: a full disk is an error, never a SIGBUS).
 * tp_op_snap_release() closes and removes it; every other function works
 * on it as on a host snapshot.
 *
 * Return: 0; -ENOSPC / -EFBIG (no room: nothing created), -errno of the
 * file (the message names it and the reason), the copy function's error.
 */
int tp_op_snap_take_file(int device, const char *path, struct tp_op_snap **out);

/** tp_op_snap_spilled() - whether @s keeps its bytes in a file. */
bool tp_op_snap_spilled(const struct tp_op_snap *s);

/**
 * tp_op_snap_restore() - copy every live entry of @s back into its
 * allocation (entries whose allocation was freed, or replaced by another
 * generation, are skipped: they were dropped at the free).
 * @restored: receives the bytes copied (may be NULL).
 *
 * Return: 0; the copy function's error with tp_last_error() naming the
 * allocation (address, size, device): the caller must treat it as fatal.
 */
int tp_op_snap_restore(struct tp_op_snap *s, uint64_t *restored);

/**
 * tp_op_snap_hash() - a 64-bit hash of the CURRENT device contents of every
 * live entry of @s (read back in 4 MiB chunks through the copy function):
 * the per-pass output hash of replay.txt.
 * Return: 0; the copy function's error.
 */
int tp_op_snap_hash(const struct tp_op_snap *s, uint64_t *hash);

/**
 * tp_op_snap_bytes() - bytes still live in @s (entries whose allocation
 * was freed no longer count).
 */
uint64_t tp_op_snap_bytes(const struct tp_op_snap *s);

/** tp_op_snap_entries() - entries (allocations) still live in @s. */
size_t tp_op_snap_entries(const struct tp_op_snap *s);

/** tp_op_snap_release() - unmap @s's host memory (or close and remove its
 *  file) and free it (NULL: no-op). */
void tp_op_snap_release(struct tp_op_snap *s);

/** tp_op_hash64() - the output hash over @n bytes of host memory (4 lanes
 *  of FNV-1a on 8-byte words, then the tail bytes, then mixed), chained
 *  from @h (start with TP_OP_HASH_SEED). */
#define TP_OP_HASH_SEED 0xcbf29ce484222325ull
uint64_t tp_op_hash64(uint64_t h, const void *p, size_t n);

/* ---- replay lock and deferred frees ------------------------------------- */

/**
 * tp_op_gate_enter() - hold the gate shared around one ordinary device
 * call (spec/opprof.md §4.8); waits while another thread's window is open
 * or waiting to open (windows are preferred: a stream of calls cannot
 * starve a replay). The window owner passes at once.
 *
 * Return: the token to give to tp_op_gate_exit().
 */
int tp_op_gate_enter(void);

/**
 * tp_op_gate_exit() - leave the gate entered with tp_op_gate_enter().
 * @token: what tp_op_gate_enter() returned.
 */
void tp_op_gate_exit(int token);

/**
 * tp_op_window_begin() - open the replay window (the gate held
 * exclusive): waits until no other thread is inside the gate. Not
 * recursive; the caller must not hold a gate token.
 */
void tp_op_window_begin(void);

/** tp_op_window_end() - close the window the calling thread opened. */
void tp_op_window_end(void);

/** tp_op_window_owned() - whether the calling thread owns the open window. */
bool tp_op_window_owned(void);

/**
 * tp_op_defer_free() - queue a free of @p, an allocation of @device, for
 * the calling thread (a range's free, performed after its last pass by
 * tp_op_deferred_flush() on the same thread). Return: 0; -ENOMEM; -EINVAL
 * when @p of @device is queued already (a double free: refused at the
 * call, as the runtime refuses it; nothing queued).
 */
int tp_op_defer_free(void *p, int device);

/**
 * tp_op_deferred_refuse() - check a free of @p on @device made outside any
 * range against the queued frees.
 * Return: 0 when @p is not queued; -EINVAL (the runtime's double-free
 * error, tp_last_error() set) when a range already freed it: the queued
 * free stands and this one must not reach the runtime (the range's replay
 * still uses the block).
 */
int tp_op_deferred_refuse(void *p, int device);

/** tp_op_deferred_count() - frees the calling thread has queued. */
size_t tp_op_deferred_count(void);

/**
 * tp_op_deferred_flush() - unregister and free every address the calling
 * thread queued, with @free_fn (the real tp_rt_free on @device: the
 * thread's current device may have changed since), in queue order; the
 * other threads' stay queued (their ranges are still open).
 * Return: the first error of @free_fn, or 0; -ENOMEM (nothing freed).
 */
int tp_op_deferred_flush(int (*free_fn)(void *p, int device));

/**
 * tp_op_registry_atfork_child() - in a forked child: re-initialise every
 * lock (another thread of the parent may have held one) and forget any
 * open window and queued frees.
 */
void tp_op_registry_atfork_child(void);

#endif /* TASKPROF_OP_REGISTRY_H */
