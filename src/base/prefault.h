/* SPDX-License-Identifier: MIT */
/*
 * base/prefault.h — zero-filled memory whose pages are already present.
 *
 * calloc (and malloc + memset 0, which the compiler turns into calloc)
 * returns large blocks as fresh mappings whose pages appear on first
 * touch. A host thread on the record path that touches them first pays
 * for each 4 KiB page there: a fault, and, if the page was read before it
 * was written (the zero page mapped first), a copy-on-write fault with a
 * TLB shootdown to the other CPUs — about 2 µs a page on this VM, while
 * the device waits for the buffer back. Memory from tp_alloc_prefaulted()
 * has had its faults taken by the allocating thread.
 */
#ifndef TASKPROF_BASE_PREFAULT_H
#define TASKPROF_BASE_PREFAULT_H

#include <stddef.h>

/**
 * tp_alloc_prefaulted() - zero-filled memory with every page present.
 * @size: bytes to allocate, > 0; rounded up to whole pages.
 *
 * The pages are populated writable by the calling thread
 * (MADV_POPULATE_WRITE; where the kernel lacks it, one write per page).
 *
 * Return: a page-aligned block, released with free(); NULL when @size is
 * 0 or out of memory, including when the kernel cannot populate the pages.
 * Sets no tp_last_error() message.
 */
void *tp_alloc_prefaulted(size_t size);

/**
 * tp_prefault_range() - make every page of a mapping present and writable.
 * @p:   page-aligned start of an anonymous private mapping of the caller's.
 * @len: bytes, a multiple of the page size.
 *
 * MADV_POPULATE_WRITE; where the kernel lacks it, one write per page (of
 * the byte already there: contents are kept).
 *
 * Return: 0, or -1 when the kernel cannot populate the pages (ENOMEM,
 * EFAULT; errno says which). Sets no tp_last_error() message.
 */
int tp_prefault_range(void *p, size_t len);

#endif
