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

/**
 * tp_op_reg_set_copy() - the copy function of every later backup, restore
 * and hash (the real tp_rt_memcpy in the injector).
 * @fn: the copy function; until one is set, taking a snapshot fails with
 *      -ENOSYS.
 */
void tp_op_reg_set_copy(tp_op_copy_fn fn);

/**
 * tp_op_reg_add() - register @size bytes at @p on @device (malloc post-hook;
 * spec/opprof.md §3.3). An entry already at @p (a free the hooks did not
 * see) is replaced and dropped from every snapshot first.
 * @p:       the allocation's device address.
 * @size:    its size in bytes, > 0.
 * @device:  the device it was allocated on.
 * @gen_out: receives the new generation (may be NULL).
 *
 * Return: 0; -EINVAL for NULL @p or @size 0; -ENOMEM (registry full, out
 * of host memory). tp_last_error() says which.
 */
int tp_op_reg_add(void *p, size_t size, int device, uint64_t *gen_out);

/**
 * tp_op_reg_remove() - unregister the allocation at @p (free pre-hook),
 * dropping it from every live snapshot (spec/opprof.md §3.3).
 * @p: the allocation's device address (its base).
 *
 * Return: 0; -ENOENT when @p is not the base of a registered allocation
 * (no tp_last_error() message).
 */
int tp_op_reg_remove(void *p);

/**
 * tp_op_reg_lookup() - the registered allocation containing @addr.
 * @addr: a device address, anywhere in [base, base + size).
 * @out:  receives a copy of the entry (may be NULL).
 *
 * Return: 0 with @out filled; -ENOENT when none contains it (no
 * tp_last_error() message).
 */
int tp_op_reg_lookup(const void *addr, struct tp_op_alloc *out);

/** tp_op_reg_count() - number of registered allocations, all devices. */
size_t tp_op_reg_count(void);

/**
 * tp_op_reg_footprint() - bytes registered on @device (spec/opprof.md §4.9).
 * @device: a device id; any negative value: every device.
 *
 * Return: the sum of the sizes of its registered allocations, in bytes.
 */
uint64_t tp_op_reg_footprint(int device);

/**
 * tp_op_reg_args_footprint() - the allocations of @device that the
 * pointer-looking words of @args reach: every 8-byte-aligned 8-byte word
 * of [@args, @args + @window) that lies inside a registered allocation
 * (the args scope of spec §4.9).
 * @device: only allocations of this device count.
 * @args:   the launch's args blob (host memory); NULL: none found. The
 *          words are read from @args rounded down to 8 bytes, stopping at
 *          an unreadable page.
 * @window: bytes of @args to scan; at most TP_OP_ARGS_WINDOW are.
 * @bytes, @count: receive their total size in bytes and their number
 *          (each allocation counted once); either may be NULL.
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
 * change as their threads run) do not count (spec/opprof.md §4.13: a
 * kernel that writes memory not from tp_rt_malloc).
 * @device:   the launch's device.
 * @args:     the launch's args blob (host memory); NULL: none found.
 * @window:   bytes of @args to scan; at most TP_OP_ARGS_WINDOW are.
 * @stack_lo, @stack_hi: the part of a stack that counts (the caller's
 *            frames above the args, addresses [@stack_lo, @stack_hi)),
 *            or 0, 0.
 * @out, @max: receive the first @max of them (@out may be NULL when @max
 *            is 0).
 *
 * Return: how many words were found (may exceed @max).
 */
size_t tp_op_args_outside(int device, const void *args, size_t window, uintptr_t stack_lo,
			  uintptr_t stack_hi, struct tp_op_arg_ref *out, size_t max);

/**
 * tp_op_reg_drop_device() - forget every allocation of @device (its
 * reset freed them all), dropping them from every snapshot.
 * @device: the device id.
 */
void tp_op_reg_drop_device(int device);

/**
 * tp_op_safe_read() - copy up to @n bytes of this process's memory at @src
 * into @dst without faulting: page by page through process_vm_readv(2),
 * stopping at the first unreadable page (a host blob of unknown size, a
 * name pointer from a kernel). Invisible to ASan (the kernel copies).
 * @src: the address to read; NULL reads nothing.
 * @dst: receives the bytes, room for @n.
 * @n:   bytes to read.
 *
 * Return: bytes copied, 0 .. @n (less than @n when a page in the range is
 * unreadable).
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
 * tp_op_snap_take() - back up allocations of @device into host memory
 * (anonymous mmap; spec/opprof.md §4.4, §4.9 steps 1-2).
 * @device: whose allocations.
 * @scope:  TP_OP_SNAP_ALL, or TP_OP_SNAP_ARGS with @args / @window.
 * @args:   the launch's args blob, for TP_OP_SNAP_ARGS (as
 *          tp_op_reg_args_footprint()); ignored otherwise.
 * @window: bytes of @args to scan, for TP_OP_SNAP_ARGS.
 * @out:    receives the snapshot (tp_op_snap_release() it); NULL on
 *          failure.
 *
 * Return: 0; -ENOSYS when no copy function is set
 * (tp_op_reg_set_copy()); -ENOMEM (host memory); the copy function's
 * error, with a message naming the allocation.
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
 * @device: whose allocations.
 * @path:   the file to create; must not exist.
 * @out:    receives the snapshot (tp_op_snap_release() it); NULL on
 *          failure.
 *
 * Return: 0; -EINVAL for a NULL or empty @path; -ENOSYS when no copy
 * function is set; -ENOSPC / -EFBIG (no room: nothing created), -errno of
 * the file (the message names it and the reason), -ENOMEM (host memory
 * for the bounce buffer), the copy function's error.
 */
int tp_op_snap_take_file(int device, const char *path, struct tp_op_snap **out);

/**
 * tp_op_snap_spilled() - whether @s keeps its bytes in a file.
 * @s: a snapshot, or NULL.
 *
 * Return: true for a snapshot from tp_op_snap_take_file(); false for a
 * host snapshot or NULL.
 */
bool tp_op_snap_spilled(const struct tp_op_snap *s);

/**
 * tp_op_snap_restore() - copy every live entry of @s back into its
 * allocation (entries whose allocation was freed, or replaced by another
 * generation, are skipped: they were dropped at the free) (spec/opprof.md
 * §4.4).
 * @s:        the snapshot.
 * @restored: receives the bytes copied, also after an error (may be NULL).
 *
 * Return: 0; -ENOMEM when the bounce buffer of a spilled snapshot cannot
 * be mapped; the error of reading its file or of the copy function, with
 * tp_last_error() naming the allocation (address, size, device): the
 * caller must treat it as fatal.
 */
int tp_op_snap_restore(struct tp_op_snap *s, uint64_t *restored);

/**
 * tp_op_snap_hash() - a 64-bit hash of the CURRENT device contents of every
 * live entry of @s (read back in 4 MiB chunks through the copy function):
 * the per-pass output hash of replay.txt (spec/opprof.md §4.12
 * ReplayInfo.csv output_hash, §4.13).
 * @s:    the snapshot.
 * @hash: receives the hash (tp_op_hash64() chained from TP_OP_HASH_SEED);
 *        0 when no entry of @s is live.
 *
 * Return: 0; -ENOMEM when the 4 MiB read buffer cannot be mapped; the copy
 * function's error (tp_last_error() names the allocation).
 */
int tp_op_snap_hash(const struct tp_op_snap *s, uint64_t *hash);

/**
 * tp_op_snap_bytes() - bytes still live in @s (entries whose allocation
 * was freed no longer count).
 * @s: the snapshot.
 *
 * Return: the sum of the live entries' sizes, in bytes (not rounded to
 * pages).
 */
uint64_t tp_op_snap_bytes(const struct tp_op_snap *s);

/**
 * tp_op_snap_entries() - entries (allocations) still live in @s.
 * @s: the snapshot.
 *
 * Return: their number.
 */
size_t tp_op_snap_entries(const struct tp_op_snap *s);

/**
 * tp_op_snap_release() - unmap @s's host memory (or close and remove its
 * file) and free it.
 * @s: the snapshot, or NULL (no-op).
 */
void tp_op_snap_release(struct tp_op_snap *s);

/**
 * tp_op_hash64() - the output hash over @n bytes of host memory (4 lanes
 * of FNV-1a on 8-byte words, then the tail bytes, then mixed).
 * @h: the hash so far; start with TP_OP_HASH_SEED.
 * @p: the bytes.
 * @n: their number.
 *
 * Return: the 64-bit hash; pass it as @h to hash the next chunk (the
 * result depends on where the chunks are split).
 */
#define TP_OP_HASH_SEED 0xcbf29ce484222325ull
uint64_t tp_op_hash64(uint64_t h, const void *p, size_t n);

/* ---- replay lock and deferred frees ------------------------------------- */

/**
 * tp_op_gate_enter() - hold the gate shared around one ordinary device
 * call (spec/opprof.md §4.8); waits while another thread's window is open
 * or waiting to open (windows are preferred: a stream of calls cannot
 * starve a replay). The window owner passes at once.
 *
 * Return: the token to give to tp_op_gate_exit(): 1 when the gate is held
 * shared, 0 for the window owner (nothing held).
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

/**
 * tp_op_window_owned() - whether the calling thread owns the open window.
 *
 * Return: true between its tp_op_window_begin() and tp_op_window_end().
 */
bool tp_op_window_owned(void);

/**
 * tp_op_defer_free() - queue a free of @p, an allocation of @device, for
 * the calling thread (a range's free, performed after its last pass by
 * tp_op_deferred_flush() on the same thread; spec/opprof.md §4.8).
 * @p:      the allocation's device address.
 * @device: its device.
 *
 * Return: 0; -ENOMEM; -EINVAL when @p of @device is queued already (a
 * double free: refused at the call, as the runtime refuses it; nothing
 * queued). tp_last_error() is set on failure.
 */
int tp_op_defer_free(void *p, int device);

/**
 * tp_op_deferred_refuse() - check a free of @p on @device made outside any
 * range against the queued frees.
 * @p:      the address being freed.
 * @device: its device.
 *
 * Return: 0 when @p is not queued; -EINVAL (the runtime's double-free
 * error, tp_last_error() set) when a range already freed it: the queued
 * free stands and this one must not reach the runtime (the range's replay
 * still uses the block).
 */
int tp_op_deferred_refuse(void *p, int device);

/**
 * tp_op_deferred_count() - frees the calling thread has queued.
 *
 * Return: their number (other threads' queued frees not counted).
 */
size_t tp_op_deferred_count(void);

/**
 * tp_op_deferred_flush() - unregister and free every address the calling
 * thread queued, with @free_fn (the real tp_rt_free on @device: the
 * thread's current device may have changed since), in queue order; the
 * other threads' stay queued (their ranges are still open); spec/opprof.md
 * §4.8.
 * @free_fn: frees one address on its device; returns 0 or a negative
 *           errno. Called for every queued free, also after an error.
 *
 * Return: the first error of @free_fn, or 0; -ENOMEM (nothing freed, the
 * queue unchanged).
 */
int tp_op_deferred_flush(int (*free_fn)(void *p, int device));

/**
 * tp_op_registry_atfork_child() - in a forked child: re-initialise every
 * lock (another thread of the parent may have held one) and forget any
 * open window and queued frees.
 */
void tp_op_registry_atfork_child(void);

#endif /* TASKPROF_OP_REGISTRY_H */
