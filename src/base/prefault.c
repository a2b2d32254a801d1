/* SPDX-License-Identifier: MIT */
/* base/prefault.c — see prefault.h. */
#include "base/prefault.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

void *tp_alloc_prefaulted(size_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096u;
	if (size == 0 || size > SIZE_MAX - page)
		return NULL;
	size_t span = (size + page - 1) & ~(page - 1);
	/* Fresh heap memory reads as zero only if it came from a new mapping;
	 * a reused heap block does not, so it is zeroed explicitly below. */
	unsigned char *p = aligned_alloc(page, span);
	if (!p)
		return NULL;
	if (madvise(p, span, MADV_POPULATE_WRITE) != 0) {
		if (errno != EINVAL) {
			/* ENOMEM / EFAULT: the pages could not be populated;
			 * touching them would only trade this error for the OOM
			 * killer or SIGBUS. */
			free(p);
			return NULL;
		}
		/* Kernel before 5.14: one write per page faults it in. */
		volatile unsigned char *v = p;
		for (size_t off = 0; off < span; off += page)
			v[off] = 0;
	}
	/* aligned_alloc + memset is not turned into calloc (there is no
	 * aligned calloc), and the pages are present now: this is a plain
	 * pass over cached memory. */
	memset(p, 0, span);
	return p;
}

int tp_prefault_range(void *p, size_t len)
{
	if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	/* Kernel before 5.14: a write per page (the byte it holds). */
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096u;
	volatile unsigned char *v = p;
	for (size_t off = 0; off < len; off += page)
		v[off] = v[off];
	return 0;
}
