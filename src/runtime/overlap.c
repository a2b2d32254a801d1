/* SPDX-License-Identifier: MIT */
#include "runtime/overlap.h"

static bool segments_intersect(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	return a0 < b1 && b0 < a1;
}

/*
 * Split @start_offset into per-dim offsets of the row-major layout whose
 * strides are @strides. False when it does not decompose (a remainder is
 * left), which means the view is not a hyper-rectangle of that layout.
 */
static bool decompose(uint64_t start_offset, const uint32_t *strides, uint32_t ndims,
		      uint64_t *offs)
{
	uint64_t rem = start_offset;
	for (uint32_t k = 0; k < ndims; k++) {
		offs[k] = rem / strides[k];
		rem %= strides[k];
	}
	return rem == 0;
}

enum tp_overlap tp_overlap_check(const struct tp_tensor *entry,
				 const struct tp_tensor *input)
{
	if (input->version != entry->version)
		return TP_OVERLAP_OTHER;

	uint64_t in0 = input->start_offset, in1 = in0 + tp_tensor_extent(input);
	uint64_t en0 = entry->start_offset, en1 = en0 + tp_tensor_extent(entry);
	if (!segments_intersect(in0, in1, en0, en1))
		return TP_OVERLAP_NONE;

	uint32_t n = entry->ndims;
	if (input->dtype != entry->dtype || input->ndims != n || n == 0 ||
	    n > TP_MAX_TENSOR_DIMS)
		return TP_OVERLAP_OTHER;
	for (uint32_t k = 0; k < n; k++)
		if (input->strides[k] != entry->strides[k])
			return TP_OVERLAP_OTHER;

	/* Clean row-major layout: innermost stride 1 and each stride an
	 * integer multiple of the next one. Then the layout's dim sizes are
	 * ref[k] = strides[k-1] / strides[k], and ref[0] follows from the
	 * buffer size. */
	const uint32_t *s = entry->strides;
	if (s[n - 1] != 1)
		return TP_OVERLAP_OTHER;
	uint64_t ref[TP_MAX_TENSOR_DIMS];
	for (uint32_t k = 1; k < n; k++) {
		if (s[k - 1] % s[k] != 0)
			return TP_OVERLAP_OTHER;
		ref[k] = s[k - 1] / s[k];
	}
	size_t esize = tp_dtype_size((enum tp_dtype)entry->dtype);
	uint64_t buf_size = input->buffer_size > entry->buffer_size ? input->buffer_size
								     : entry->buffer_size;
	if (esize == 0 || (buf_size / esize) % s[0] != 0)
		return TP_OVERLAP_OTHER;
	ref[0] = buf_size / esize / s[0];

	uint64_t io[TP_MAX_TENSOR_DIMS], eo[TP_MAX_TENSOR_DIMS];
	if (!decompose(input->start_offset, s, n, io) ||
	    !decompose(entry->start_offset, s, n, eo))
		return TP_OVERLAP_OTHER;
	/* A view that leaves the layout along some dim (it wraps into the
	 * next row) is not a hyper-rectangle of it. */
	for (uint32_t k = 0; k < n; k++)
		if (io[k] + input->shapes[k] > ref[k] || eo[k] + entry->shapes[k] > ref[k])
			return TP_OVERLAP_OTHER;

	bool covered = true;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t a0 = io[k], a1 = io[k] + input->shapes[k];
		uint64_t b0 = eo[k], b1 = eo[k] + entry->shapes[k];
		if (!segments_intersect(a0, a1, b0, b1))
			return TP_OVERLAP_NONE;
		if (!(a0 <= b0 && b1 <= a1))
			covered = false;
	}
	return covered ? TP_OVERLAP_COVERED : TP_OVERLAP_OTHER;
}

const char *tp_overlap_name(enum tp_overlap o)
{
	switch (o) {
	case TP_OVERLAP_NONE:
		return "NO_OVERLAP";
	case TP_OVERLAP_COVERED:
		return "COVERED";
	case TP_OVERLAP_OTHER:
		return "OTHER";
	}
	return "?";
}
