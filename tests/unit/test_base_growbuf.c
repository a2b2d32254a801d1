/* SPDX-License-Identifier: MIT */
/* Unit tests of base/growbuf: heap stores, the move into a huge-page
 * reservation, growth past it, refusal of impossible sizes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "base/growbuf.h"

/* Appends `n` bytes of the pattern byte(i) = (i * 7 + 3) & 0xff, i the
 * offset in the store, as a collector appends a buffer of records. */
static void append(struct tp_growbuf *b, size_t n)
{
	assert_int_equal(tp_growbuf_reserve(b, b->len + n), 0);
	assert_true(b->cap >= b->len + n);
	for (size_t i = 0; i < n; i++)
		b->data[b->len + i] = (uint8_t)(((b->len + i) * 7 + 3) & 0xff);
	b->len += n;
}

/* Index of the first byte that lost the pattern, or len when none did. */
static size_t first_bad(const struct tp_growbuf *b)
{
	for (size_t i = 0; i < b->len; i++)
		if (b->data[i] != (uint8_t)((i * 7 + 3) & 0xff))
			return i;
	return b->len;
}

static void test_small_store_stays_on_the_heap(void **state)
{
	(void)state;
	struct tp_growbuf b = TP_GROWBUF_INIT;
	for (int i = 0; i < 20; i++)
		append(&b, 1000);
	assert_int_equal(b.len, 20000);
	assert_int_equal(b.mapped, 0);
	assert_true(b.cap >= 20000 && b.cap < TP_GROWBUF_MAP_MIN);
	assert_int_equal(first_bad(&b), b.len);
	tp_growbuf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
}

static void test_large_store_moves_into_an_aligned_reservation(void **state)
{
	(void)state;
	struct tp_growbuf b = TP_GROWBUF_INIT;
	/* 32 KB buffers, as a 1000-record buffer of 32-byte records. */
	while (b.len < 3 * TP_GROWBUF_MAP_MIN)
		append(&b, 32000);
	assert_int_equal(b.mapped, TP_GROWBUF_RESERVE);
	assert_int_equal(b.cap, TP_GROWBUF_RESERVE);
	assert_int_equal((uintptr_t)b.data % ((size_t)2 << 20), 0);
	/* The move kept every byte written on the heap before it. */
	assert_int_equal(first_bad(&b), b.len);
	uint8_t *before = b.data;
	append(&b, 1 << 20);
	assert_ptr_equal(b.data, before); /* growing inside: no move */
	assert_int_equal(first_bad(&b), b.len);
	tp_growbuf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.mapped, 0);
}

static void test_first_reserve_larger_than_the_heap_limit(void **state)
{
	(void)state;
	struct tp_growbuf b = TP_GROWBUF_INIT;
	append(&b, 5u << 20);
	assert_int_equal(b.mapped, TP_GROWBUF_RESERVE);
	assert_int_equal(first_bad(&b), b.len);
	tp_growbuf_free(&b);
}

static void test_growth_past_the_reservation_keeps_the_bytes(void **state)
{
	(void)state;
	struct tp_growbuf b = TP_GROWBUF_INIT;
	append(&b, 2u << 20);
	assert_int_equal(b.mapped, TP_GROWBUF_RESERVE);
	/* Past the reservation: only address space, nothing written there. */
	assert_int_equal(tp_growbuf_reserve(&b, TP_GROWBUF_RESERVE + 1), 0);
	assert_int_equal(b.mapped, 2 * TP_GROWBUF_RESERVE);
	assert_int_equal(b.cap, 2 * TP_GROWBUF_RESERVE);
	assert_int_equal(b.len, 2u << 20);
	assert_int_equal(first_bad(&b), b.len);
	b.data[TP_GROWBUF_RESERVE] = 0x5a; /* the new range is writable */
	assert_int_equal(b.data[TP_GROWBUF_RESERVE], 0x5a);
	tp_growbuf_free(&b);
}

static void test_impossible_size_is_refused_and_leaves_the_store(void **state)
{
	(void)state;
	struct tp_growbuf b = TP_GROWBUF_INIT;
	append(&b, 4096);
	uint8_t *d = b.data;
	size_t cap = b.cap;
	assert_int_equal(tp_growbuf_reserve(&b, SIZE_MAX), -ENOMEM);
	assert_ptr_equal(b.data, d);
	assert_int_equal(b.cap, cap);
	assert_int_equal(first_bad(&b), 4096);
	append(&b, 2u << 20);
	assert_int_equal(tp_growbuf_reserve(&b, SIZE_MAX), -ENOMEM);
	assert_int_equal(b.mapped, TP_GROWBUF_RESERVE);
	assert_int_equal(first_bad(&b), b.len);
	tp_growbuf_free(&b);
	tp_growbuf_free(&b); /* freeing an empty store is a no-op */
	assert_null(b.data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_store_stays_on_the_heap),
		cmocka_unit_test(test_large_store_moves_into_an_aligned_reservation),
		cmocka_unit_test(test_first_reserve_larger_than_the_heap_limit),
		cmocka_unit_test(test_growth_past_the_reservation_keeps_the_bytes),
		cmocka_unit_test(test_impossible_size_is_refused_and_leaves_the_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
