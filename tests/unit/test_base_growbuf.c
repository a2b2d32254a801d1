/* SPDX-License-Identifier: MIT */
/* Unit tests of base/growbuf: heap stores, the move into a huge-page
 * reservation, growth past it, the heap fallback when the reservation is
 * refused, refusal of impossible sizes. */
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
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/growbuf.h"
#include "unit_helpers.h"

#define MIB ((size_t)1 << 20)

/* The store under test; teardown frees it even when an assert failed. */
static struct tp_growbuf b = TP_GROWBUF_INIT;

static int teardown(void **state)
{
	(void)state;
	tp_growbuf_free(&b);
	return 0;
}

/* Appends `n` bytes of the pattern byte(i) = (i * 7 + 3) & 0xff, i the
 * offset in the store, as a collector appends a buffer of records.
 * Returns tp_growbuf_reserve's result. */
static int append(size_t n)
{
	int rc = tp_growbuf_reserve(&b, b.len + n);
	if (rc)
		return rc;
	if (b.cap < b.len + n)
		return -ERANGE;
	for (size_t i = 0; i < n; i++)
		b.data[b.len + i] = (uint8_t)(((b.len + i) * 7 + 3) & 0xff);
	b.len += n;
	return 0;
}

/* Index of the first byte that lost the pattern, or len when none did. */
static size_t first_bad(void)
{
	for (size_t i = 0; i < b.len; i++)
		if (b.data[i] != (uint8_t)((i * 7 + 3) & 0xff))
			return i;
	return b.len;
}

static void test_small_store_stays_on_the_heap(void **state)
{
	(void)state;
	for (int i = 0; i < 20; i++)
		assert_int_equal(append(1000), 0);
	assert_int_equal(b.len, 20000);
	assert_int_equal(b.mapped, 0);
	assert_true(b.cap >= 20000 && b.cap < TP_GROWBUF_MAP_MIN);
	assert_int_equal(first_bad(), b.len);
	tp_growbuf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
}

static void test_large_store_moves_into_an_aligned_reservation(void **state)
{
	(void)state;
	/* 32 KB buffers, as a 1000-record buffer of 32-byte records. */
	while (b.len < 3 * TP_GROWBUF_MAP_MIN)
		assert_int_equal(append(32000), 0);
	assert_int_equal(b.mapped, TP_GROWBUF_RESERVE);
	assert_int_equal((uintptr_t)b.data % (2 * MIB), 0);
	/* Writable in whole 2 MiB pages, within the reservation. */
	assert_int_equal(b.cap % (2 * MIB), 0);
	assert_true(b.cap >= b.len && b.cap <= b.mapped);
	/* The move kept every byte written on the heap before it. */
	assert_int_equal(first_bad(), b.len);
	uint8_t *before = b.data;
	for (int i = 0; i < 10; i++)
		assert_int_equal(append(MIB), 0);
	assert_ptr_equal(b.data, before); /* growing inside: no move */
	assert_int_equal(first_bad(), b.len);
	tp_growbuf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.mapped, 0);
}

static void test_first_reserve_larger_than_the_heap_limit(void **state)
{
	(void)state;
	assert_int_equal(append(5 * MIB), 0);
	assert_int_equal(b.mapped, TP_GROWBUF_RESERVE);
	assert_int_equal(first_bad(), b.len);
}

static void test_growth_past_the_reservation_keeps_the_bytes(void **state)
{
	(void)state;
	assert_int_equal(append(2 * MIB + 100), 0);
	assert_int_equal(b.mapped, TP_GROWBUF_RESERVE);
	assert_int_equal(tp_growbuf_reserve(&b, TP_GROWBUF_RESERVE + 1), 0);
	assert_int_equal(b.mapped, 2 * TP_GROWBUF_RESERVE);
	assert_true(b.cap >= TP_GROWBUF_RESERVE + 1 && b.cap <= b.mapped);
	assert_int_equal((uintptr_t)b.data % (2 * MIB), 0); /* still aligned */
	assert_int_equal(b.len, 2 * MIB + 100);
	assert_int_equal(first_bad(), b.len);
	b.data[TP_GROWBUF_RESERVE] = 0x5a; /* the new range is writable */
	assert_int_equal(b.data[TP_GROWBUF_RESERVE], 0x5a);
	/* And it keeps growing from the moved store. */
	b.len = 2 * MIB + 100;
	assert_int_equal(append(3 * MIB), 0);
	assert_int_equal(first_bad(), b.len);
}

static void test_impossible_size_is_refused_and_leaves_the_store(void **state)
{
	(void)state;
	assert_int_equal(append(4096), 0);
	uint8_t *d = b.data;
	size_t cap = b.cap;
	assert_int_equal(tp_growbuf_reserve(&b, SIZE_MAX), -ENOMEM);
	assert_int_equal(tp_growbuf_reserve(&b, (size_t)1 << 62), -ENOMEM);
	assert_ptr_equal(b.data, d);
	assert_int_equal(b.cap, cap);
	assert_int_equal(first_bad(), 4096);
	assert_int_equal(append(2 * MIB), 0);
	assert_int_equal(tp_growbuf_reserve(&b, SIZE_MAX), -ENOMEM);
	assert_int_equal(b.mapped, TP_GROWBUF_RESERVE);
	assert_int_equal(first_bad(), b.len);
	tp_growbuf_free(&b);
	tp_growbuf_free(&b); /* freeing an empty store is a no-op */
	assert_null(b.data);
}

/* Pages of [p, p + n) not resident (mincore), or SIZE_MAX when mincore
 * fails. @p page-aligned. */
static size_t pages_not_resident(const uint8_t *p, size_t n)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t np = (n + page - 1) / page, missing = 0;
	unsigned char *vec = malloc(np);
	if (!vec || mincore((void *)(uintptr_t)p, n, vec) != 0) {
		free(vec);
		return SIZE_MAX;
	}
	for (size_t i = 0; i < np; i++)
		missing += !(vec[i] & 1);
	free(vec);
	return missing;
}

static void test_prefault_makes_the_bytes_resident_and_keeps_the_store(void **state)
{
	(void)state;
	assert_int_equal(append(3 * MIB + 5), 0); /* in the reservation, partly written */
	const size_t len = b.len;
	assert_int_equal(tp_growbuf_prefault(&b, 24 * MIB), 0);
	assert_true(b.cap >= 24 * MIB);
	assert_int_equal(b.len, len); /* only made room: nothing appended */
	assert_int_equal(first_bad(), len);
	/* Every page up to the 24 MiB asked for is in memory already. */
	assert_int_equal(pages_not_resident(b.data, 24 * MIB), 0);
	/* Asking for less than is in is a no-op. */
	uint8_t *d = b.data;
	assert_int_equal(tp_growbuf_prefault(&b, MIB), 0);
	assert_ptr_equal(b.data, d);
	assert_int_equal(append(20 * MIB), 0);
	assert_int_equal(first_bad(), b.len);
}

static void test_prefault_of_an_empty_or_heap_store(void **state)
{
	(void)state;
	/* An empty store goes straight into its reservation. */
	assert_int_equal(tp_growbuf_prefault(&b, 4 * MIB), 0);
	assert_int_equal(b.mapped, TP_GROWBUF_RESERVE);
	assert_int_equal(b.len, 0);
	assert_int_equal(pages_not_resident(b.data, 4 * MIB), 0);
	tp_growbuf_free(&b);
	/* A small one stays on the heap, with its bytes. */
	assert_int_equal(append(1000), 0);
	assert_int_equal(tp_growbuf_prefault(&b, 64 * 1024), 0);
	assert_int_equal(b.mapped, 0);
	assert_true(b.cap >= 64 * 1024);
	assert_int_equal(first_bad(), 1000);
	/* An impossible size is refused and leaves the store. */
	assert_int_equal(tp_growbuf_prefault(&b, SIZE_MAX), -ENOMEM);
	assert_int_equal(first_bad(), 1000);
}

/* In a child whose address space is capped 64 MiB above its size, the
 * 256 MiB reservation is refused: the store must stay on the heap with
 * every byte. Exit status 0: pass; 2: the cap did not refuse it; other:
 * a check failed. */
static int fallback_child(void)
{
	size_t now = uh_vm_size();
	if (!now)
		return 3;
	struct rlimit rl = { .rlim_cur = now + 64 * MIB, .rlim_max = now + 64 * MIB };
	if (setrlimit(RLIMIT_AS, &rl) != 0)
		return 4;
	for (int i = 0; i < 200; i++)
		if (append(32000) != 0)
			return 5;
	if (b.mapped)
		return 2;
	if (b.len != 6400000 || first_bad() != b.len)
		return 6;
	return 0;
}

static void test_refused_reservation_stays_on_the_heap(void **state)
{
	(void)state;
	if (UH_UNDER_SANITIZER)
		skip(); /* the sanitizers' shadow mappings need the address space */
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fallback_child());
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_small_store_stays_on_the_heap, teardown),
		cmocka_unit_test_teardown(test_large_store_moves_into_an_aligned_reservation,
					  teardown),
		cmocka_unit_test_teardown(test_first_reserve_larger_than_the_heap_limit, teardown),
		cmocka_unit_test_teardown(test_growth_past_the_reservation_keeps_the_bytes,
					  teardown),
		cmocka_unit_test_teardown(test_impossible_size_is_refused_and_leaves_the_store,
					  teardown),
		cmocka_unit_test_teardown(test_refused_reservation_stays_on_the_heap, teardown),
		cmocka_unit_test_teardown(test_prefault_makes_the_bytes_resident_and_keeps_the_store,
					  teardown),
		cmocka_unit_test_teardown(test_prefault_of_an_empty_or_heap_store, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
