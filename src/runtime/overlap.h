/* SPDX-License-Identifier: MIT */
/*
 * runtime/overlap.h — how a consumer's tensor overlaps a producer's view
 * (PTO2TensorMapEntry::check_overlap, spec/runtime-model.md §2.3).
 */
#ifndef TASKPROF_RUNTIME_OVERLAP_H
#define TASKPROF_RUNTIME_OVERLAP_H

#include "runtime/tensor.h"

enum tp_overlap {
	TP_OVERLAP_NONE = 0,  /* NO_OVERLAP: no element in common, no edge */
	TP_OVERLAP_COVERED,   /* the consumer's view contains the producer's */
	TP_OVERLAP_OTHER,     /* partial, or not provably either: an edge */
};

/**
 * tp_overlap_check() - classify @input (the consumer's tensor) against
 * @entry (a producer's view of the same buffer).
 * @entry: the producer's view as stored in the tensor map.
 * @input: the consumer's tensor; same buffer_addr as @entry.
 *
 * In the order of spec §2.3:
 *  1. versions differ → OTHER;
 *  2. element ranges [start_offset, start_offset + extent) disjoint →
 *     NO_OVERLAP;
 *  3. both sides share dtype, ndims and strides and form a clean row-major
 *     hyper-rectangle of the buffer (innermost stride 1, each stride an
 *     integer multiple of the next, start_offsets decompose into per-dim
 *     offsets, every dim inside the buffer) → per-dim segment test:
 *     some dim disjoint → NO_OVERLAP, every dim of @input contains the
 *     one of @entry → COVERED, else OTHER;
 *  4. anything else (other strides, a step slice, a transpose) → OTHER
 *     (conservative: an edge that may not be needed, never a missed one).
 *
 * Return: the classification. Pure; never fails.
 */
enum tp_overlap tp_overlap_check(const struct tp_tensor *entry,
				 const struct tp_tensor *input);

/** tp_overlap_name() - "NO_OVERLAP", "COVERED", "OTHER" or "?". */
const char *tp_overlap_name(enum tp_overlap o);

#endif /* TASKPROF_RUNTIME_OVERLAP_H */
