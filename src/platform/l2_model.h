/* SPDX-License-Identifier: MIT */
/*
 * platform/l2_model.h — the simulated device's L2 cache, as the PMU's
 * L2_CACHE events count it (spec/pmu.md §1.2 / §1.3 group 8; seed 000
 * "cache hit/miss tallies"; docs/pmu.md "The L2 cache").
 *
 * A set-associative cache of the device's global memory (GM) in front of
 * main memory, shared by every AICore of the device. Only the tags are
 * modelled: a GM access of the tile API (tp_copy_in reads, tp_copy_out
 * and tp_fixpipe writes) looks up each line it touches; a line found is a
 * hit, one not found a miss that allocates it (reads and writes alike:
 * write-allocate), evicting the set's oldest line (FIFO) when the set is
 * full, which counts as a victim.
 *
 * The cache starts empty at every launch: a tag carries the launch it was
 * filled in, and a tag of another launch counts as empty. A launch is a
 * run of the runtime (tp_device_launch_seq()) or one kernel launch of the
 * rt layer (its sequence number; each replay execution of the operator
 * profiler is one). So a kernel's counts do not depend on what ran before
 * it, and every pass of `taskprof op` sees the same cache, where real
 * hardware keeps lines across launches.
 *
 * Concurrency: every core looks up and fills at once, lock-free, with
 * relaxed atomics on the tags (a tag publishes no data: it is the model's
 * state only). A fill takes an empty way by compare-and-swap, so two
 * cores never overwrite each other's fill of an empty way. Two cores that
 * miss the same line at the same instant may both count a miss and both
 * fill it (two ways of the set), where hardware merges such misses; and
 * when a set is full, two cores' evictions are ordered by the set's FIFO
 * pointer, not by time.
 *
 * Geometry: TP_L2_LINE_BYTES lines, TP_L2_WAYS ways, TP_L2_DEFAULT_BYTES
 * (192 MiB, the Ascend 910B's L2) unless TASKPROF_SIM_L2_BYTES says
 * otherwise (bytes, at least one set; rounded down to whole sets).
 */
#ifndef TASKPROF_PLATFORM_L2_MODEL_H
#define TASKPROF_PLATFORM_L2_MODEL_H

#include <stdint.h>

#define TP_L2_LINE_BYTES 128u
#define TP_L2_WAYS 16u
#define TP_L2_DEFAULT_BYTES (192ull << 20)

struct tp_l2;

/** enum tp_l2_outcome - what a line's lookup found. */
enum tp_l2_outcome {
	TP_L2_HIT = 0,
	TP_L2_MISS,   /* not there: allocated */
	TP_L2_VICTIM, /* a miss that evicted a line of this launch */
	TP_L2_OUTCOMES
};

/**
 * struct tp_l2_counts - outcomes of some accesses, in lines: @n[dir][o]
 * with dir 0 read, 1 write (enum tp_dir) and o an enum tp_l2_outcome.
 * A victim is also a miss (both count).
 */
struct tp_l2_counts {
	uint64_t n[2][TP_L2_OUTCOMES];
};

/**
 * tp_l2_create() - an empty cache.
 * @bytes: capacity in bytes; 0 takes TASKPROF_SIM_L2_BYTES from the
 *         environment, else TP_L2_DEFAULT_BYTES. Rounded down to whole sets
 *         (TP_L2_LINE_BYTES × TP_L2_WAYS bytes), at least one.
 * @out:   receives the cache.
 *
 * The tag array (8 bytes per line: 12 MiB at 192 MiB) is calloc'd, so its
 * pages are touched only as sets are used.
 *
 * Return: 0, -EINVAL (@out NULL, or a TASKPROF_SIM_L2_BYTES that is not a
 * number of bytes), -ENOMEM.
 */
int tp_l2_create(uint64_t bytes, struct tp_l2 **out);

/**
 * tp_l2_env_bytes() - the capacity TASKPROF_SIM_L2_BYTES asks for.
 * @bytes: receives it in bytes, or TP_L2_DEFAULT_BYTES when unset or empty.
 *
 * Return: 0; -EINVAL for a value that is not decimal digits alone, or is
 * below one set (TP_L2_LINE_BYTES × TP_L2_WAYS = 2048) or above 2^32 sets
 * (tp_last_error() names the variable and the range).
 */
int tp_l2_env_bytes(uint64_t *bytes);

/** tp_l2_destroy() - free @l2; NULL is a no-op. */
void tp_l2_destroy(struct tp_l2 *l2);

/** tp_l2_bytes() - the capacity in bytes (whole sets). */
uint64_t tp_l2_bytes(const struct tp_l2 *l2);

/**
 * tp_l2_access() - look up and fill the lines of a 2-D region of GM.
 * @l2:        the cache.
 * @launch:    the device's launch number (tp_device_launch_seq()): tags of
 *             another launch count as empty.
 * @base:      the region's first byte (a host address of device memory).
 * @row_bytes: bytes per row, > 0.
 * @rows:      rows, > 0.
 * @stride:    bytes from one row's start to the next's.
 * @dir:       0 read, 1 write.
 * @c:         the outcomes are added to @c->n[@dir].
 *
 * Each line counts once per call: rows that share a line (narrower than
 * it) look it up once. @stride must not make rows go down in memory.
 */
void tp_l2_access(struct tp_l2 *l2, uint64_t launch, const void *base, uint64_t row_bytes,
		  uint32_t rows, uint64_t stride, int dir, struct tp_l2_counts *c);

#endif /* TASKPROF_PLATFORM_L2_MODEL_H */
