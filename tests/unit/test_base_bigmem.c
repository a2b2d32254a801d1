/* SPDX-License-Identifier: MIT */
/* Unit tests of base/bigmem: small sizes from calloc, large ones from a
 * mapping, and a recycled mapping reused by the next allocation of its size
 * with its written prefix zeroed, not by other sizes; a mapping past
 * TP_BIGMEM_CACHE_MAX or past the byte budget (TP_BIGMEM_CACHE_BYTES)
 * making the one kept longest go; and a written prefix longer than
 * TP_BIGMEM_KEEP_MAX cut back to it; tp_malloc_huge() / tp_calloc_huge()
 * advising large heap blocks MADV_HUGEPAGE and leaving small ones alone. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/bigmem.h"

#define MB (1ull << 20)

/* True while [p, p + bytes) is mapped: msync fails ENOMEM on a hole. */
static bool is_mapped(void *p, size_t bytes)
{
	return msync(p, bytes, MS_ASYNC) == 0;
}

static bool all_zero(const unsigned char *p, size_t bytes)
{
	for (size_t i = 0; i < bytes; i++)
		if (p[i])
			return false;
	return true;
}

static void test_small_is_calloc(void **state)
{
	(void)state;
	bool mapped = true;
	unsigned char *p = tp_bigmem_zalloc(1000, 16, &mapped);
	assert_non_null(p);
	assert_false(mapped);
	assert_true(all_zero(p, 16000));
	/* calloc'd memory is freed, never kept (ASan would flag a leak). */
	tp_bigmem_recycle(p, 1000, 16, mapped, 1000);
	assert_null(tp_bigmem_zalloc((size_t)-1, 2, &mapped));
}

static void test_recycled_mapping_is_reused_zeroed(void **state)
{
	(void)state;
	const size_t n = 20 * MB / 64, size = 64;
	bool mapped = false;
	unsigned char *a = tp_bigmem_zalloc(n, size, &mapped);
	assert_non_null(a);
	assert_true(mapped);
	assert_int_equal((uintptr_t)a % (2 * MB), 0); /* on a huge page */
	/* The first 1000 elements written, as by a run of 1000 tasks. */
	memset(a, 0xa5, 1000 * size);
	tp_bigmem_recycle(a, n, size, mapped, 1000);
	assert_true(is_mapped(a, n * size)); /* kept */

	/* Another size does not take it: a fresh mapping. */
	bool m2 = false;
	unsigned char *b = tp_bigmem_zalloc(n + 1, size, &m2);
	assert_non_null(b);
	assert_true(m2);
	assert_ptr_not_equal(a, b);
	tp_bigmem_free(b, n + 1, size, m2);

	/* The same size does, with the written prefix zeroed. */
	bool m3 = false;
	unsigned char *c = tp_bigmem_zalloc(n, size, &m3);
	assert_ptr_equal(c, a);
	assert_true(m3);
	assert_true(all_zero(c, 1001 * size));
	assert_int_equal(c[n * size - 1], 0);
	tp_bigmem_free(c, n, size, m3);
	assert_false(is_mapped(a, n * size)); /* freed for good */
}

static void test_cache_bounds(void **state)
{
	(void)state;
	/* One more mapping than the cache keeps: the first recycled (kept
	 * longest) is unmapped to make room for the last, the others kept,
	 * then taken back one by one. */
	const size_t size = 17 * MB;
	void *p[TP_BIGMEM_CACHE_MAX + 1];
	bool m[TP_BIGMEM_CACHE_MAX + 1];
	for (int i = 0; i <= TP_BIGMEM_CACHE_MAX; i++) {
		p[i] = tp_bigmem_zalloc(1, size, &m[i]);
		assert_non_null(p[i]);
		assert_true(m[i]);
		((unsigned char *)p[i])[0] = 1;
	}
	for (int i = 0; i <= TP_BIGMEM_CACHE_MAX; i++)
		tp_bigmem_recycle(p[i], 1, size, m[i], 1);
	assert_false(is_mapped(p[0], size));
	for (int i = 1; i <= TP_BIGMEM_CACHE_MAX; i++)
		assert_true(is_mapped(p[i], size));
	for (int i = 0; i < TP_BIGMEM_CACHE_MAX; i++) {
		bool mm;
		unsigned char *q = tp_bigmem_zalloc(1, size, &mm);
		assert_non_null(q);
		assert_int_equal(q[0], 0); /* zeroed */
		tp_bigmem_free(q, 1, size, mm);
	}

}

static void test_cache_byte_budget(void **state)
{
	(void)state;
	/* Mappings of TP_BIGMEM_KEEP_MAX bytes each: the cache keeps as many
	 * as TP_BIGMEM_CACHE_BYTES holds (fewer than TP_BIGMEM_CACHE_MAX);
	 * one more makes the one kept longest go. */
	enum { N = TP_BIGMEM_CACHE_BYTES / TP_BIGMEM_KEEP_MAX };
	_Static_assert(N < TP_BIGMEM_CACHE_MAX, "the byte budget binds first");
	const size_t size = TP_BIGMEM_KEEP_MAX;
	void *p[N + 1];
	bool m[N + 1];
	for (int i = 0; i <= N; i++) {
		p[i] = tp_bigmem_zalloc(1, size, &m[i]);
		assert_non_null(p[i]);
		assert_true(m[i]);
		((unsigned char *)p[i])[size - 1] = 7;
	}
	for (int i = 0; i <= N; i++)
		tp_bigmem_recycle(p[i], 1, size, m[i], 1);
	assert_false(is_mapped(p[0], size));
	for (int i = 1; i <= N; i++)
		assert_true(is_mapped(p[i], size));
	/* Taking one back frees its share of the budget: recycled again, it
	 * is kept again, and nothing else goes. */
	bool mm;
	unsigned char *q = tp_bigmem_zalloc(1, size, &mm);
	assert_non_null(q);
	assert_int_equal(q[size - 1], 0); /* the whole element was zeroed */
	tp_bigmem_recycle(q, 1, size, mm, 1);
	assert_true(is_mapped(q, size));
	for (int i = 1; i <= N; i++)
		assert_true(is_mapped(p[i], size));
	/* A mapping of another size evicts the one kept longest, not the
	 * newest: the cache follows the sizes in use. */
	bool mo;
	unsigned char *o = tp_bigmem_zalloc(1, 2 * MB, &mo);
	assert_non_null(o);
	tp_bigmem_recycle(o, 1, 2 * MB, mo, 1);
	assert_true(is_mapped(o, 2 * MB));
	void *longest = q == p[1] ? p[2] : p[1]; /* q was recycled last */
	assert_false(is_mapped(longest, size));
	assert_true(is_mapped(q, size));
	o = tp_bigmem_zalloc(1, 2 * MB, &mo);
	tp_bigmem_free(o, 1, 2 * MB, mo);
	for (int i = 1; i < N; i++) {
		q = tp_bigmem_zalloc(1, size, &mm);
		assert_non_null(q);
		tp_bigmem_free(q, 1, size, mm);
	}
}

/* Resident 4 KiB pages of [p, p + bytes). */
static size_t resident_pages(void *p, size_t bytes)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (bytes + page - 1) / page;
	unsigned char *v = malloc(n);
	assert_non_null(v);
	assert_int_equal(mincore(p, bytes, v), 0);
	size_t r = 0;
	for (size_t i = 0; i < n; i++)
		r += v[i] & 1;
	free(v);
	return r;
}

static void test_keep_bound(void **state)
{
	(void)state;
	/* A big graph's array written whole: recycled, only its first
	 * TP_BIGMEM_KEEP_MAX bytes stay resident, and the next user of the
	 * size finds all of it zero. */
	const size_t size = 64, n = (TP_BIGMEM_KEEP_MAX + 40 * MB) / size;
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	bool m;
	unsigned char *p = tp_bigmem_zalloc(n, size, &m);
	assert_non_null(p);
	memset(p, 0x5a, n * size);
	assert_int_equal(resident_pages(p, n * size), n * size / page);
	tp_bigmem_recycle(p, n, size, m, n);
	assert_int_equal(resident_pages(p + TP_BIGMEM_KEEP_MAX, n * size - TP_BIGMEM_KEEP_MAX), 0);
	assert_int_equal(resident_pages(p, TP_BIGMEM_KEEP_MAX), TP_BIGMEM_KEEP_MAX / page);
	unsigned char *q = tp_bigmem_zalloc(n, size, &m);
	assert_ptr_equal(q, p);
	assert_true(all_zero(q, TP_BIGMEM_KEEP_MAX));
	/* A small run after it: nothing past the bound came back. (Reading
	 * past it would map the zero page, which mincore counts: the last
	 * check reads there, after this one.) */
	memset(q, 1, 100 * size);
	tp_bigmem_recycle(q, n, size, m, 100);
	assert_int_equal(resident_pages(q + TP_BIGMEM_KEEP_MAX, n * size - TP_BIGMEM_KEEP_MAX), 0);
	q = tp_bigmem_zalloc(n, size, &m);
	assert_ptr_equal(q, p);
	assert_true(all_zero(q, n * size)); /* the part given back reads as zero */
	tp_bigmem_free(q, n, size, m);
}

/* VmFlags of the mapping that holds @addr contains "hg" (MADV_HUGEPAGE),
 * from /proc/self/smaps: 1 yes, 0 no, -1 no such mapping. */
static int advised_huge(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	assert_non_null(f);
	char line[512];
	bool in = false;
	int found = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			found = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

static void test_advise_huge(void **state)
{
	(void)state;
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0)
		skip(); /* a kernel without THP refuses the advice */
	/* a mapping of our own, so that no earlier advice of the heap shows,
	 * used from its first 2 MiB boundary on (kernels before 6.7 place it
	 * anywhere): a "block" at 1 MiB + 4 KiB into that, of 8 MiB */
	const size_t len = 14 * MB;
	unsigned char *map = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	unsigned char *m =
		(unsigned char *)(((uintptr_t)map + 2 * MB - 1) & ~(uintptr_t)(2 * MB - 1));
	unsigned char *p = m + MB + 4096;
	tp_bigmem_advise_huge(p, 8 * MB);
	uintptr_t first = ((uintptr_t)p + 2 * MB - 1) & ~(uintptr_t)(2 * MB - 1);
	uintptr_t last = ((uintptr_t)p + 8 * MB) & ~(uintptr_t)(2 * MB - 1);
	/* the 2 MiB-aligned interior is advised; the block's head and what
	 * follows its last whole huge page are not (a huge page there would
	 * reach outside the block) */
	assert_int_equal(advised_huge((void *)first), 1);
	assert_int_equal(advised_huge((void *)(last - 1)), 1);
	assert_int_equal(advised_huge(p), 0);
	assert_int_equal(advised_huge((void *)last), 0);
	/* below TP_BIGMEM_ADVISE_MIN: left alone */
	unsigned char *t = m + 10 * MB;
	tp_bigmem_advise_huge(t - (TP_BIGMEM_ADVISE_MIN - 1), TP_BIGMEM_ADVISE_MIN - 1);
	assert_int_equal(advised_huge(t - 2 * MB), 0);
	tp_bigmem_advise_huge(NULL, 8 * MB); /* no-op */
	assert_int_equal(munmap(map, len), 0);
}

static void test_malloc_huge(void **state)
{
	(void)state;
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0)
		skip();
	const size_t big = 16 * MB;
	unsigned char *p = tp_calloc_huge(big / 8, 8);
	assert_non_null(p);
	assert_true(all_zero(p, big));
	uintptr_t mid = ((uintptr_t)p + 4 * MB) & ~(uintptr_t)(2 * MB - 1);
	assert_int_equal(advised_huge((void *)mid), 1);
	memset(p, 7, big);
	free(p);
	unsigned char *q = tp_malloc_huge(big);
	assert_non_null(q);
	mid = ((uintptr_t)q + 4 * MB) & ~(uintptr_t)(2 * MB - 1);
	assert_int_equal(advised_huge((void *)mid), 1);
	free(q);
	assert_null(tp_calloc_huge((size_t)-1, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_is_calloc),
		cmocka_unit_test(test_recycled_mapping_is_reused_zeroed),
		cmocka_unit_test(test_cache_bounds),
		cmocka_unit_test(test_cache_byte_budget),
		cmocka_unit_test(test_keep_bound),
		cmocka_unit_test(test_advise_huge),
		cmocka_unit_test(test_malloc_huge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
