/* SPDX-License-Identifier: MIT */
/* Unit tests of base/prefault: the memory is zero-filled even where the
 * heap reuses a dirty block, every page is resident before the first
 * touch (mincore), and impossible sizes are refused. And of base/cache's
 * write prefetch: a hint that never faults, never faults a page in and
 * never changes memory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cache.h"
#include "base/prefault.h"

static size_t page_size(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	return pg > 0 ? (size_t)pg : 4096u;
}

/* Pages of [p, p + n) that are not resident; p page-aligned. */
static size_t absent_pages(void *p, size_t n)
{
	size_t pg = page_size(), np = (n + pg - 1) / pg, absent = 0;
	unsigned char *vec = malloc(np);
	assert_non_null(vec);
	assert_int_equal(mincore(p, n, vec), 0);
	for (size_t i = 0; i < np; i++)
		absent += !(vec[i] & 1);
	free(vec);
	return absent;
}

static void test_large_block_is_resident_and_zero(void **state)
{
	(void)state;
	const size_t n = (size_t)4 << 20; /* above every malloc mmap threshold */
	unsigned char *p = tp_alloc_prefaulted(n);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % page_size(), 0);
	/* Resident before this test has touched a byte. */
	assert_int_equal(absent_pages(p, n), 0);
	for (size_t i = 0; i < n; i += 4093)
		assert_int_equal(p[i], 0);
	assert_int_equal(p[n - 1], 0);
	free(p);
}

/* A fresh mapping of the same size (what calloc returns for it): its
 * pages are not there yet, which is what tp_alloc_prefaulted exists to
 * avoid, and what makes the test above able to fail. */
static void test_fresh_mapping_leaves_pages_absent(void **state)
{
	(void)state;
	const size_t n = (size_t)4 << 20;
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(absent_pages(p, n), n / page_size());
	munmap(p, n);
}

/* A small block the heap hands out again after it was dirtied reads zero. */
static void test_reused_heap_block_is_zeroed(void **state)
{
	(void)state;
	const size_t n = 3 * page_size() + 17;
	for (int round = 0; round < 8; round++) {
		unsigned char *p = tp_alloc_prefaulted(n);
		assert_non_null(p);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(p[i], 0);
		memset(p, 0xa5, n);
		free(p);
	}
}

static void test_impossible_sizes_are_refused(void **state)
{
	(void)state;
	assert_null(tp_alloc_prefaulted(0));
	assert_null(tp_alloc_prefaulted(SIZE_MAX));
	assert_null(tp_alloc_prefaulted(SIZE_MAX - 1));
}

/* tp_prefetch_w() is only a hint: on NULL, on a PROT_NONE page and on
 * pages never touched it neither faults (the test would die of SIGSEGV)
 * nor makes a page resident (mincore), and what it points at reads the
 * same afterwards. */
static void test_prefetch_w_never_faults(void **state)
{
	(void)state;
	const size_t pg = page_size(), n = 4 * pg;
	tp_prefetch_w(NULL);
	unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	assert_true(p != MAP_FAILED);
	for (size_t off = 0; off < n; off += 64)
		tp_prefetch_w(p + off);
	assert_int_equal(absent_pages(p, n), 4);
	p[0] = 0x5a;
	assert_int_equal(mprotect(p + pg, pg, PROT_NONE), 0);
	tp_prefetch_w(p + pg);
	tp_prefetch_w(p);
	assert_int_equal(p[0], 0x5a);
	assert_int_equal(p[1], 0);
	assert_int_equal(absent_pages(p + 2 * pg, 2 * pg), 2);
	munmap(p, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_large_block_is_resident_and_zero),
		cmocka_unit_test(test_fresh_mapping_leaves_pages_absent),
		cmocka_unit_test(test_reused_heap_block_is_zeroed),
		cmocka_unit_test(test_impossible_sizes_are_refused),
		cmocka_unit_test(test_prefetch_w_never_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
