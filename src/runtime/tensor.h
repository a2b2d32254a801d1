/* SPDX-License-Identifier: MIT */
/*
 * runtime/tensor.h — the runtime's tensor descriptor and views
 * (spec/runtime-model.md §2.1 "Tensor", §2.3).
 *
 * A tensor names a window of elements inside one device buffer:
 * element (i0, .., i{n-1}) lives at element index
 *     start_offset + Σ i_k · strides[k]          (0 <= i_k < shapes[k])
 * of the buffer, i.e. at byte buffer_addr + that · tp_dtype_size(dtype).
 * start_offset, shapes and strides count elements, never bytes; strides are
 * > 0. A view keeps buffer, strides, dtype, version and owner_task_id and
 * moves start_offset. All views of one buffer share buffer_addr, which is
 * what the tensor map hashes.
 *
 * Inline helpers: the orchestrator calls them per tensor argument.
 */
#ifndef TASKPROF_RUNTIME_TENSOR_H
#define TASKPROF_RUNTIME_TENSOR_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/task_id.h"
#include "taskprof/kernel.h" /* enum tp_dtype, tp_dtype_size() */

/* RUNTIME_MAX_TENSOR_DIMS of the reference. */
#define TP_MAX_TENSOR_DIMS 5

/**
 * struct tp_tensor - a tensor view (spec/runtime-model.md §2.3): a buffer
 * (device address, bytes), the creating task, and a strided view into it
 * in elements.
 */
struct tp_tensor {
	uint64_t buffer_addr;     /* device address of the whole buffer */
	uint64_t buffer_size;     /* bytes of the whole buffer */
	tp_task_id owner_task_id; /* creator (alloc_tensors / OUTPUT task) or
				   * TP_TASK_ID_INVALID for external tensors */
	uint64_t start_offset;    /* elements from buffer_addr to element 0 */
	uint32_t version;         /* bumped when a buffer is re-purposed; entries
				   * of another version never compare exactly */
	uint32_t ndims;           /* 1 .. TP_MAX_TENSOR_DIMS */
	uint8_t dtype;            /* enum tp_dtype */
	bool manual_dep;          /* no tensor-map lookup for this tensor */
	uint32_t shapes[TP_MAX_TENSOR_DIMS];  /* elements per dimension */
	uint32_t strides[TP_MAX_TENSOR_DIMS]; /* elements, > 0 */
};

/**
 * tp_tensor_extent() - elements spanned by @t from start_offset: one past
 * the highest element index it touches minus start_offset,
 * 1 + Σ (shapes[k]-1)·strides[k]; 0 if any shape is 0.
 */
static inline uint64_t tp_tensor_extent(const struct tp_tensor *t)
{
	uint64_t last = 0;
	for (uint32_t k = 0; k < t->ndims; k++) {
		if (t->shapes[k] == 0)
			return 0;
		last += (uint64_t)(t->shapes[k] - 1) * t->strides[k];
	}
	return last + 1;
}

/**
 * tp_tensor_make_contiguous() - a row-major tensor over a whole buffer.
 * @t:       receives the tensor (owner_task_id = TP_TASK_ID_INVALID,
 *           start_offset 0, version 0).
 * @addr:    buffer device address.
 * @dtype:   element type.
 * @ndims:   1 .. TP_MAX_TENSOR_DIMS.
 * @shapes:  elements per dimension, each > 0.
 *
 * buffer_size = Π shapes · tp_dtype_size(dtype) bytes; strides row-major.
 *
 * Return: 0, or -EINVAL for a bad ndims, dtype or zero shape.
 */
static inline int tp_tensor_make_contiguous(struct tp_tensor *t, uint64_t addr,
					    enum tp_dtype dtype, uint32_t ndims,
					    const uint32_t *shapes)
{
	size_t esize = tp_dtype_size(dtype);
	if (ndims == 0 || ndims > TP_MAX_TENSOR_DIMS || esize == 0)
		return -EINVAL;
	uint64_t stride = 1;
	for (int k = (int)ndims - 1; k >= 0; k--) {
		if (shapes[k] == 0 || stride > UINT32_MAX)
			return -EINVAL;
		t->shapes[k] = shapes[k];
		t->strides[k] = (uint32_t)stride;
		stride *= shapes[k];
	}
	for (uint32_t k = ndims; k < TP_MAX_TENSOR_DIMS; k++)
		t->shapes[k] = t->strides[k] = 0;
	t->buffer_addr = addr;
	t->buffer_size = stride * esize;
	t->owner_task_id = TP_TASK_ID_INVALID;
	t->start_offset = 0;
	t->version = 0;
	t->ndims = ndims;
	t->dtype = (uint8_t)dtype;
	t->manual_dep = false;
	return 0;
}

/**
 * tp_tensor_view() - Tensor::view(shapes, offsets) of spec §2.1.
 * @t:       the tensor viewed.
 * @shapes:  elements per dimension of the view (@t->ndims values, > 0).
 * @offsets: element offset of the view's origin along each dimension.
 * @out:     receives the view; may alias @t.
 *
 * The view keeps buffer, strides, dtype, version and owner_task_id and
 * adds Σ offsets[k]·strides[k] to start_offset.
 *
 * Return: 0, or -EINVAL when a shape is 0 or offsets[k] + shapes[k]
 * exceeds @t->shapes[k] (the view must stay inside @t).
 */
static inline int tp_tensor_view(const struct tp_tensor *t, const uint32_t *shapes,
				 const uint32_t *offsets, struct tp_tensor *out)
{
	uint64_t add = 0;
	for (uint32_t k = 0; k < t->ndims; k++) {
		if (shapes[k] == 0 || (uint64_t)offsets[k] + shapes[k] > t->shapes[k])
			return -EINVAL;
		add += (uint64_t)offsets[k] * t->strides[k];
	}
	struct tp_tensor v = *t;
	for (uint32_t k = 0; k < t->ndims; k++)
		v.shapes[k] = shapes[k];
	v.start_offset += add;
	*out = v;
	return 0;
}

#endif /* TASKPROF_RUNTIME_TENSOR_H */
