/* SPDX-License-Identifier: MIT */
/*
 * platform/l2_model.c — the L2 cache model (l2_model.h).
 *
 * A tag is ((line + 1) << 24) | (launch & 0xffffff), line = address /
 * TP_L2_LINE_BYTES; 0 is an empty way. A tag whose low 24 bits are not
 * this launch's is empty too (after 2^24 launches an old tag could read
 * as current again: a model's wrap, not worth a clear of 12 MiB). Lines
 * have 40 bits (addresses below 2^47, x86-64 Linux user space); a higher
 * line is folded into 40 bits and may alias another.
 *
 * A set's FIFO pointer carries the launch too: (launch << 8) | next, so
 * that a new launch, which refills the set from way 0, evicts from way 0.
 */
#include "platform/l2_model.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/prefault.h"

#define LAUNCH_BITS 24u
#define LAUNCH_MASK ((1ull << LAUNCH_BITS) - 1)

struct tp_l2 {
	uint64_t n_sets;
	_Atomic uint64_t *tags;     /* n_sets × TP_L2_WAYS */
	_Atomic uint32_t *next_out; /* per set: (launch << 8) | the way the next
				     * full miss evicts (mod TP_L2_WAYS) */
};

/* Largest capacity: 16 GiB, 128 times the default (its tags take 1 GiB of
 * host memory; a size beyond what the host can hold failed only after
 * minutes of faulting in the tags). */
#define MAX_BYTES (16ull << 30)

int tp_l2_env_bytes(uint64_t *bytes)
{
	const uint64_t set_bytes = (uint64_t)TP_L2_LINE_BYTES * TP_L2_WAYS;
	const char *env = getenv("TASKPROF_SIM_L2_BYTES");
	*bytes = TP_L2_DEFAULT_BYTES;
	if (!env || !*env)
		return 0;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(env, &end, 10);
	if (env[0] < '0' || env[0] > '9' || errno || *end || v < set_bytes || v > MAX_BYTES)
		return tp_set_error(-EINVAL, "TASKPROF_SIM_L2_BYTES=%.40s: expected a number of "
				    "bytes, %llu (one set of %u ways of %u bytes) to %llu", env,
				    (unsigned long long)set_bytes, TP_L2_WAYS, TP_L2_LINE_BYTES,
				    (unsigned long long)MAX_BYTES);
	*bytes = v;
	return 0;
}

int tp_l2_create(uint64_t bytes, struct tp_l2 **out)
{
	if (!out)
		return tp_set_error(-EINVAL, "l2 model: no result pointer");
	*out = NULL;
	const uint64_t set_bytes = (uint64_t)TP_L2_LINE_BYTES * TP_L2_WAYS;
	if (!bytes) {
		int rc = tp_l2_env_bytes(&bytes);
		if (rc)
			return rc;
	}
	if (bytes > MAX_BYTES)
		return tp_set_error(-EINVAL, "l2 model: %llu bytes is too large a cache",
				    (unsigned long long)bytes);
	uint64_t n_sets = bytes / set_bytes;
	if (!n_sets)
		n_sets = 1;
	struct tp_l2 *l2 = calloc(1, sizeof(*l2));
	if (!l2)
		return tp_set_error(-ENOMEM, "l2 model: out of memory");
	l2->n_sets = n_sets;
	/* Zero bits are empty tags and valid atomics on every target we
	 * build for (as in regs.c). Faulted in here (12 MiB of tags at the
	 * default size): left to the first lookups, the page faults landed
	 * in the first kernels' counting windows, up to 20 ms of them. */
	l2->tags = tp_alloc_prefaulted(n_sets * TP_L2_WAYS * sizeof(*l2->tags));
	l2->next_out = tp_alloc_prefaulted(n_sets * sizeof(*l2->next_out));
	if (!l2->tags || !l2->next_out) {
		tp_l2_destroy(l2);
		return tp_set_error(-ENOMEM, "l2 model: out of memory for %llu sets",
				    (unsigned long long)n_sets);
	}
	*out = l2;
	return 0;
}

void tp_l2_destroy(struct tp_l2 *l2)
{
	if (!l2)
		return;
	free(l2->tags);
	free(l2->next_out);
	free(l2);
}

uint64_t tp_l2_bytes(const struct tp_l2 *l2)
{
	return l2->n_sets * TP_L2_LINE_BYTES * TP_L2_WAYS;
}

/* The set of @line: a multiplicative hash reduced to [0, n_sets) by a
 * 128-bit multiply, so that power-of-two strides spread over the sets. */
static inline uint64_t set_of(const struct tp_l2 *l2, uint64_t line)
{
	uint64_t h = line * 0x9E3779B97F4A7C15ull;
	return (uint64_t)(((unsigned __int128)h * l2->n_sets) >> 64);
}

/* One line: its outcome. */
static enum tp_l2_outcome lookup(struct tp_l2 *l2, uint64_t launch, uint64_t line)
{
	const uint64_t ep = launch & LAUNCH_MASK;
	if (line >= (1ull << (64 - LAUNCH_BITS)) - 1)
		line = (line ^ (line >> (64 - LAUNCH_BITS))) & ((1ull << (64 - LAUNCH_BITS)) - 2);
	const uint64_t want = ((line + 1) << LAUNCH_BITS) | ep;
	const uint64_t s = set_of(l2, line);
	_Atomic uint64_t *set = &l2->tags[s * TP_L2_WAYS];
	for (;;) {
		int empty = -1;
		uint64_t seen = 0;
		for (unsigned w = 0; w < TP_L2_WAYS; w++) {
			/* relaxed: the tags are the model's state, no data is
			 * published through them (l2_model.h "Concurrency"). */
			uint64_t v = atomic_load_explicit(&set[w], memory_order_relaxed);
			if (v == want)
				return TP_L2_HIT;
			if (empty < 0 && (v == 0 || (v & LAUNCH_MASK) != ep)) {
				empty = (int)w;
				seen = v;
			}
		}
		if (empty < 0)
			break;
		/* Fill the empty way unless another core took it meanwhile
		 * (then look again: it may hold this very line). relaxed: as
		 * above. */
		if (atomic_compare_exchange_strong_explicit(&set[empty], &seen, want,
							    memory_order_relaxed,
							    memory_order_relaxed))
			return TP_L2_MISS;
	}
	/* Full: the oldest fill of this launch goes (FIFO from way 0, the
	 * order the empty set was filled in). relaxed: as above. */
	_Atomic uint32_t *no = &l2->next_out[s];
	uint32_t cur = atomic_load_explicit(no, memory_order_relaxed), next;
	unsigned w;
	do {
		uint32_t at = (cur >> 8) == (uint32_t)ep ? cur & 0xff : 0;
		w = at % TP_L2_WAYS;
		next = ((uint32_t)ep << 8) | ((at + 1) & 0xff);
	} while (!atomic_compare_exchange_weak_explicit(no, &cur, next, memory_order_relaxed,
							memory_order_relaxed));
	uint64_t old = atomic_exchange_explicit(&set[w], want, memory_order_relaxed);
	return old != want && old != 0 && (old & LAUNCH_MASK) == ep ? TP_L2_VICTIM : TP_L2_MISS;
}

void tp_l2_access(struct tp_l2 *l2, uint64_t launch, const void *base, uint64_t row_bytes,
		  uint32_t rows, uint64_t stride, int dir, struct tp_l2_counts *c)
{
	if (!l2 || !row_bytes || dir < 0 || dir > 1)
		return;
	uint64_t *n = c->n[dir];
	uintptr_t a = (uintptr_t)base;
	/* Each line once per access: rows narrower than a line share it
	 * (a 16 x 32-byte tile is 4 lines, not 16 requests of them). Rows
	 * ascend, so a line at or below the last one looked up is done. */
	uint64_t done = 0;
	bool any = false;
	for (uint32_t r = 0; r < rows; r++, a += stride) {
		uint64_t first = a / TP_L2_LINE_BYTES;
		uint64_t last = (a + row_bytes - 1) / TP_L2_LINE_BYTES;
		if (any && first <= done)
			first = done + 1;
		if (first > last)
			continue;
		any = true;
		done = last;
		for (uint64_t line = first; line <= last; line++) {
			enum tp_l2_outcome o = lookup(l2, launch, line);
			if (o == TP_L2_VICTIM) {
				n[TP_L2_MISS]++;
				n[TP_L2_VICTIM]++;
			} else {
				n[o]++;
			}
		}
	}
}
