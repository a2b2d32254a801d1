/* SPDX-License-Identifier: MIT */
/* Unit tests of runtime/overlap, runtime/tensormap and runtime/fanin:
 * every overlap case of spec/runtime-model.md §2.3, INOUT COVERED removal,
 * stale-entry skip (Appendix A item 2), creator retention, dedup, explicit
 * deps, and the per-tag table. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "runtime/fanin.h"
#include "runtime/overlap.h"
#include "runtime/tensor.h"
#include "runtime/tensormap.h"

#define BUF_A 0x100000ull
#define BUF_B 0x200000ull

/* A 16 x 16 fp32 matrix over a whole buffer. */
static struct tp_tensor mat16(uint64_t addr)
{
	struct tp_tensor t;
	uint32_t shapes[2] = { 16, 16 };
	assert_int_equal(tp_tensor_make_contiguous(&t, addr, TP_FP32, 2, shapes), 0);
	return t;
}

static struct tp_tensor view2(const struct tp_tensor *t, uint32_t r0, uint32_t c0,
			      uint32_t rows, uint32_t cols)
{
	struct tp_tensor v;
	uint32_t shapes[2] = { rows, cols }, offs[2] = { r0, c0 };
	assert_int_equal(tp_tensor_view(t, shapes, offs, &v), 0);
	return v;
}

static void test_tensor_view_and_extent(void **state)
{
	(void)state;
	struct tp_tensor m = mat16(BUF_A);
	assert_int_equal(m.buffer_size, 16 * 16 * 4);
	assert_int_equal(m.strides[0], 16);
	assert_int_equal(m.strides[1], 1);
	assert_int_equal(tp_tensor_extent(&m), 256);
	struct tp_tensor v = view2(&m, 2, 3, 4, 5);
	assert_int_equal(v.start_offset, 2 * 16 + 3);
	/* last element (5, 7) at 5*16+7 = 87, minus start 35, plus 1 */
	assert_int_equal(tp_tensor_extent(&v), 87 - 35 + 1);
	assert_int_equal(v.buffer_addr, BUF_A);
	/* a view must stay inside its tensor */
	struct tp_tensor bad;
	uint32_t shapes[2] = { 4, 14 }, offs[2] = { 0, 3 };
	assert_int_equal(tp_tensor_view(&m, shapes, offs, &bad), -EINVAL);
}

static void test_overlap_disjoint(void **state)
{
	(void)state;
	struct tp_tensor m = mat16(BUF_A);
	/* rows 0-7 vs rows 8-15: element ranges disjoint */
	struct tp_tensor top = view2(&m, 0, 0, 8, 16), bottom = view2(&m, 8, 0, 8, 16);
	assert_int_equal(tp_overlap_check(&top, &bottom), TP_OVERLAP_NONE);
	assert_int_equal(tp_overlap_check(&bottom, &top), TP_OVERLAP_NONE);
	/* columns 0-7 vs 8-15: element ranges interleave, hyper-rectangles
	 * are disjoint along dim 1 */
	struct tp_tensor left = view2(&m, 0, 0, 16, 8), right = view2(&m, 0, 8, 16, 8);
	assert_true(tp_tensor_extent(&left) + left.start_offset > right.start_offset);
	assert_int_equal(tp_overlap_check(&left, &right), TP_OVERLAP_NONE);
	assert_int_equal(tp_overlap_check(&right, &left), TP_OVERLAP_NONE);
}

static void test_overlap_exact_and_covered(void **state)
{
	(void)state;
	struct tp_tensor m = mat16(BUF_A);
	struct tp_tensor blk = view2(&m, 4, 4, 4, 4);
	/* exact same view: the consumer contains the producer */
	assert_int_equal(tp_overlap_check(&blk, &blk), TP_OVERLAP_COVERED);
	assert_int_equal(tp_overlap_check(&m, &m), TP_OVERLAP_COVERED);
	/* consumer = whole matrix, producer = a block: COVERED */
	assert_int_equal(tp_overlap_check(&blk, &m), TP_OVERLAP_COVERED);
	/* consumer = block, producer = whole matrix: overlap, not covered */
	assert_int_equal(tp_overlap_check(&m, &blk), TP_OVERLAP_OTHER);
}

static void test_overlap_partial(void **state)
{
	(void)state;
	struct tp_tensor m = mat16(BUF_A);
	struct tp_tensor a = view2(&m, 0, 0, 8, 8), b = view2(&m, 4, 4, 8, 8);
	assert_int_equal(tp_overlap_check(&a, &b), TP_OVERLAP_OTHER);
	assert_int_equal(tp_overlap_check(&b, &a), TP_OVERLAP_OTHER);
	/* sharing one row only */
	struct tp_tensor r = view2(&m, 7, 0, 2, 16);
	assert_int_equal(tp_overlap_check(&a, &r), TP_OVERLAP_OTHER);
	/* 1-D: [0,100) vs [50,150) of a 256-element vector */
	struct tp_tensor v;
	uint32_t n = 256;
	assert_int_equal(tp_tensor_make_contiguous(&v, BUF_B, TP_FP16, 1, &n), 0);
	struct tp_tensor v1, v2;
	uint32_t s1 = 100, o1 = 0, s2 = 100, o2 = 50, s3 = 50, o3 = 150;
	assert_int_equal(tp_tensor_view(&v, &s1, &o1, &v1), 0);
	assert_int_equal(tp_tensor_view(&v, &s2, &o2, &v2), 0);
	assert_int_equal(tp_overlap_check(&v1, &v2), TP_OVERLAP_OTHER);
	struct tp_tensor v3;
	assert_int_equal(tp_tensor_view(&v, &s3, &o3, &v3), 0);
	assert_int_equal(tp_overlap_check(&v1, &v3), TP_OVERLAP_NONE);
	assert_int_equal(tp_overlap_check(&v2, &v3), TP_OVERLAP_NONE);
}

static void test_overlap_strided_views(void **state)
{
	(void)state;
	struct tp_tensor m = mat16(BUF_A);
	/* even columns: a step slice (strides {16, 2}) is not a clean
	 * row-major hyper-rectangle → conservative OTHER when ranges meet */
	struct tp_tensor even = m;
	even.shapes[1] = 8;
	even.strides[1] = 2;
	struct tp_tensor odd = even;
	odd.start_offset = 1;
	assert_int_equal(tp_overlap_check(&even, &odd), TP_OVERLAP_OTHER);
	assert_int_equal(tp_overlap_check(&even, &m), TP_OVERLAP_OTHER);
	assert_int_equal(tp_overlap_check(&m, &even), TP_OVERLAP_OTHER);
	/* ...but disjoint element ranges are NO_OVERLAP whatever the strides */
	struct tp_tensor even_top = even;
	even_top.shapes[0] = 4;           /* elements 0..62 */
	struct tp_tensor bottom = view2(&m, 8, 0, 8, 16); /* 128..255 */
	assert_int_equal(tp_overlap_check(&even_top, &bottom), TP_OVERLAP_NONE);
	/* a transposed view (strides {1, 16}) of the same elements: OTHER */
	struct tp_tensor tr = m;
	tr.strides[0] = 1;
	tr.strides[1] = 16;
	assert_int_equal(tp_overlap_check(&m, &tr), TP_OVERLAP_OTHER);
	/* a 3-D blocked layout: [2][8][16] over the same 256 elements; block
	 * 1 (rows 8..15) vs block 0 */
	struct tp_tensor t3;
	uint32_t sh3[3] = { 2, 8, 16 };
	assert_int_equal(tp_tensor_make_contiguous(&t3, BUF_A, TP_FP32, 3, sh3), 0);
	struct tp_tensor b0 = t3, b1 = t3;
	b0.shapes[0] = 1;
	b1.shapes[0] = 1;
	b1.start_offset = 128;
	assert_int_equal(tp_overlap_check(&b0, &b1), TP_OVERLAP_NONE);
	assert_int_equal(tp_overlap_check(&b0, &t3), TP_OVERLAP_COVERED);
	/* different ndims for the same elements: conservative OTHER */
	assert_int_equal(tp_overlap_check(&m, &t3), TP_OVERLAP_OTHER);
}

static void test_overlap_version_and_dtype(void **state)
{
	(void)state;
	struct tp_tensor m = mat16(BUF_A);
	struct tp_tensor m2 = m;
	m2.version = 1;
	assert_int_equal(tp_overlap_check(&m, &m2), TP_OVERLAP_OTHER);
	/* version differs even for disjoint views: OTHER (checked first) */
	struct tp_tensor top = view2(&m, 0, 0, 8, 16), bottom = view2(&m2, 8, 0, 8, 16);
	assert_int_equal(tp_overlap_check(&top, &bottom), TP_OVERLAP_OTHER);
	struct tp_tensor i32 = m;
	i32.dtype = TP_INT32;
	assert_int_equal(tp_overlap_check(&m, &i32), TP_OVERLAP_OTHER);
	assert_string_equal(tp_overlap_name(TP_OVERLAP_COVERED), "COVERED");
	assert_string_equal(tp_overlap_name(TP_OVERLAP_NONE), "NO_OVERLAP");
	assert_string_equal(tp_overlap_name(TP_OVERLAP_OTHER), "OTHER");
}

/* ---- tensor map ---- */

static struct tp_tensormap tm;

static int tm_setup(void **state)
{
	(void)state;
	uint32_t w[TP_MAX_RING_DEPTH] = { 16, 16, 16, 16 };
	return tp_tensormap_init(&tm, 64, 32, w);
}

static int tm_teardown(void **state)
{
	(void)state;
	tp_tensormap_fini(&tm);
	return 0;
}

#define MAXHIT 16
struct hits {
	int n;
	tp_task_id id[MAXHIT];
	enum tp_overlap ov[MAXHIT];
};

static bool record(struct tp_tensormap *m, struct tp_tmap_entry *e, enum tp_overlap ov,
		   void *ud)
{
	(void)m;
	struct hits *h = ud;
	if (h->n == MAXHIT)
		return false;
	h->id[h->n] = e->producer;
	h->ov[h->n] = ov;
	h->n++;
	return true;
}

static struct hits lookup(const struct tp_tensor *t)
{
	struct hits h = { 0 };
	tp_tensormap_lookup(&tm, t, record, &h);
	return h;
}

static void test_tmap_lookup_by_overlap(void **state)
{
	(void)state;
	struct tp_tensor m = mat16(BUF_A);
	tp_task_id p_left = tp_task_id_make(0, 1), p_right = tp_task_id_make(0, 2);
	assert_int_equal(tp_tensormap_insert(&tm, &(struct tp_tensor){ 0 }, TP_TASK_ID_INVALID),
			 -EINVAL);
	struct tp_tensor left = view2(&m, 0, 0, 16, 8), right = view2(&m, 0, 8, 16, 8);
	assert_int_equal(tp_tensormap_insert(&tm, &left, p_left), 0);
	assert_int_equal(tp_tensormap_insert(&tm, &right, p_right), 0);
	/* another buffer in the map never matches */
	struct tp_tensor other = mat16(BUF_B);
	assert_int_equal(tp_tensormap_insert(&tm, &other, tp_task_id_make(1, 0)), 0);
	assert_int_equal(tm.live, 3);

	struct hits h = lookup(&m); /* whole matrix covers both, newest first */
	assert_int_equal(h.n, 2);
	assert_int_equal(h.id[0], p_right);
	assert_int_equal(h.ov[0], TP_OVERLAP_COVERED);
	assert_int_equal(h.id[1], p_left);
	assert_int_equal(h.ov[1], TP_OVERLAP_COVERED);

	struct tp_tensor blk = view2(&m, 2, 2, 4, 4); /* inside left only */
	h = lookup(&blk);
	assert_int_equal(h.n, 1);
	assert_int_equal(h.id[0], p_left);
	assert_int_equal(h.ov[0], TP_OVERLAP_OTHER);

	struct tp_tensor straddle = view2(&m, 0, 4, 4, 8); /* both, partially */
	h = lookup(&straddle);
	assert_int_equal(h.n, 2);
	assert_int_equal(h.ov[0], TP_OVERLAP_OTHER);
	assert_int_equal(h.ov[1], TP_OVERLAP_OTHER);
}

static void test_tmap_inout_covered_removes(void **state)
{
	(void)state;
	struct tp_fanin f = { 0 };
	struct tp_tensor m = mat16(BUF_A);
	struct tp_tensor blk = view2(&m, 0, 0, 8, 8);
	tp_task_id p1 = tp_task_id_make(0, 1), p2 = tp_task_id_make(0, 2),
		   p3 = tp_task_id_make(0, 3);
	assert_int_equal(tp_tensormap_insert(&tm, &blk, p1), 0);
	assert_int_equal(tp_tensormap_insert(&tm, &m, p2), 0);
	/* INOUT of the block: p2 (whole) is OTHER → kept; p1 exact → COVERED
	 * → removed; both are producers. */
	assert_int_equal(tp_fanin_collect_arg(&f, &tm, &blk, TP_ARG_INOUT), 2);
	assert_int_equal(f.deps[0].producer, p2);
	assert_int_equal(f.deps[0].overlap, TP_OVERLAP_OTHER);
	assert_int_equal(f.deps[1].producer, p1);
	assert_int_equal(f.deps[1].overlap, TP_OVERLAP_COVERED);
	assert_int_equal(f.deps[1].source, TP_DEP_TENSORMAP);
	assert_int_equal(tm.covered_removed, 1);
	assert_int_equal(tm.live, 1);
	assert_int_equal(tp_fanin_register_arg(&tm, &blk, TP_ARG_INOUT, p3), 0);
	/* a later reader of the block sees p3 and p2, no longer p1 */
	tp_fanin_reset(&f);
	assert_int_equal(tp_fanin_collect_arg(&f, &tm, &blk, TP_ARG_INPUT), 2);
	assert_int_equal(f.deps[0].producer, p3);
	assert_int_equal(f.deps[1].producer, p2);
	/* an INPUT lookup that is COVERED does not remove */
	assert_int_equal(tm.live, 2);
	tp_fanin_reset(&f);
	assert_int_equal(tp_fanin_collect_arg(&f, &tm, &m, TP_ARG_INPUT), 2);
	assert_int_equal(tm.live, 2);
	tp_fanin_fini(&f);
}

static void test_tmap_stale_entries_skipped_not_truncated(void **state)
{
	(void)state;
	struct tp_tensor m = mat16(BUF_A);
	/* chain (newest first): A ring0#5 (live), B ring0#1 (stale),
	 * C ring1#0 (live). Truncating at B would lose C. */
	tp_task_id c = tp_task_id_make(1, 0), b = tp_task_id_make(0, 1),
		   a = tp_task_id_make(0, 5);
	assert_int_equal(tp_tensormap_insert(&tm, &m, c), 0);
	assert_int_equal(tp_tensormap_insert(&tm, &m, b), 0);
	assert_int_equal(tp_tensormap_insert(&tm, &m, a), 0);
	/* ring 0 reclaimed tasks 0..1; cleanup has not run yet (the
	 * reference cleans up periodically), so B is still in the chain */
	tm.last_task_alive[0] = 2;
	assert_false(tp_tensormap_task_live(&tm, b));
	assert_true(tp_tensormap_task_live(&tm, a));
	struct hits h = lookup(&m);
	assert_int_equal(h.n, 2);
	assert_int_equal(h.id[0], a);
	assert_int_equal(h.id[1], c);
	assert_int_equal(tm.stale_skipped, 1);
	assert_int_equal(tm.live, 3);
	/* cleanup_retired frees exactly B's entry */
	tm.last_task_alive[0] = 0;
	assert_int_equal(tp_tensormap_sync(&tm, 0, 2), 1);
	assert_int_equal(tm.live, 2);
	h = lookup(&m);
	assert_int_equal(h.n, 2);
	assert_int_equal(tm.stale_skipped, 1);
	/* retire A's ring up to 6: only C (ring 1) remains */
	assert_int_equal(tp_tensormap_sync(&tm, 0, 6), 1);
	h = lookup(&m);
	assert_int_equal(h.n, 1);
	assert_int_equal(h.id[0], c);
}

static void test_tmap_pool_full_and_reuse(void **state)
{
	(void)state;
	struct tp_tensor m = mat16(BUF_A);
	for (uint32_t i = 0; i < 32; i++)
		assert_int_equal(tp_tensormap_insert(&tm, &m, tp_task_id_make(2, i / 4)), 0);
	assert_int_equal(tp_tensormap_free_entries(&tm), 0);
	assert_int_equal(tp_tensormap_insert(&tm, &m, tp_task_id_make(2, 9)), -ENOSPC);
	/* reclaiming tasks 0..3 of ring 2 frees their 16 entries */
	assert_int_equal(tp_tensormap_sync(&tm, 2, 4), 16);
	assert_int_equal(tp_tensormap_free_entries(&tm), 16);
	assert_int_equal(tp_tensormap_insert(&tm, &m, tp_task_id_make(2, 9)), 0);
	struct hits h = lookup(&m);
	assert_int_equal(h.n, MAXHIT); /* capped by record(): stop early */
}

static bool stop_first(struct tp_tensormap *m, struct tp_tmap_entry *e, enum tp_overlap ov,
		       void *ud)
{
	(void)m;
	(void)e;
	(void)ov;
	(*(int *)ud)++;
	return false;
}

static void test_tmap_lookup_stops(void **state)
{
	(void)state;
	struct tp_tensor m = mat16(BUF_A);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(tp_tensormap_insert(&tm, &m, tp_task_id_make(0, i)), 0);
	int calls = 0;
	assert_int_equal(tp_tensormap_lookup(&tm, &m, stop_first, &calls), 1);
	assert_int_equal(calls, 1);
}

/* ---- fanin: the per-tag table, creator retention, dedup, explicit ---- */

static void test_fanin_tags_creator_dedup_explicit(void **state)
{
	(void)state;
	struct tp_fanin f = { 0 };
	struct tp_tensor m = mat16(BUF_A);
	tp_task_id creator = tp_task_id_make(0, 3), writer = tp_task_id_make(0, 4);
	m.owner_task_id = creator;
	assert_int_equal(tp_fanin_register_arg(&tm, &m, TP_ARG_OUTPUT_EXISTING, writer), 0);
	/* INPUT, OUTPUT and NO_DEP never insert */
	assert_int_equal(tp_fanin_register_arg(&tm, &m, TP_ARG_INPUT, writer), 0);
	assert_int_equal(tp_fanin_register_arg(&tm, &m, TP_ARG_OUTPUT, writer), 0);
	assert_int_equal(tp_fanin_register_arg(&tm, &m, TP_ARG_NO_DEP, writer), 0);
	assert_int_equal(tm.live, 1);

	/* explicit deps first; a retired one is skipped */
	tm.last_task_alive[1] = 2;
	assert_int_equal(tp_fanin_add_explicit(&f, &tm, tp_task_id_make(1, 1)), 0);
	assert_int_equal(tp_fanin_add_explicit(&f, &tm, tp_task_id_make(1, 2)), 1);
	assert_int_equal(tp_fanin_add_explicit(&f, &tm, tp_task_id_make(1, 2)), 0);
	assert_int_equal(tp_fanin_add_explicit(&f, &tm, TP_TASK_ID_INVALID), 0);
	/* INPUT: creator edge + tensormap edge */
	assert_int_equal(tp_fanin_collect_arg(&f, &tm, &m, TP_ARG_INPUT), 2);
	assert_int_equal(f.n, 3);
	assert_int_equal(f.deps[0].source, TP_DEP_EXPLICIT);
	assert_int_equal(f.deps[1].producer, creator);
	assert_int_equal(f.deps[1].source, TP_DEP_CREATOR);
	assert_int_equal(f.deps[2].producer, writer);
	assert_int_equal(f.deps[2].overlap, TP_OVERLAP_COVERED);
	/* the same tensor again (another arg): all duplicates */
	assert_int_equal(tp_fanin_collect_arg(&f, &tm, &m, TP_ARG_INPUT), 0);
	assert_int_equal(f.n, 3);

	/* NO_DEP and OUTPUT_EXISTING: creator only, no lookup */
	tp_fanin_reset(&f);
	assert_int_equal(tp_fanin_collect_arg(&f, &tm, &m, TP_ARG_NO_DEP), 1);
	assert_int_equal(tp_fanin_collect_arg(&f, &tm, &m, TP_ARG_OUTPUT_EXISTING), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.deps[0].producer, creator);
	/* OUTPUT (create-info): nothing at all */
	tp_fanin_reset(&f);
	assert_int_equal(tp_fanin_collect_arg(&f, &tm, &m, TP_ARG_OUTPUT), 0);
	/* manual_dep: creator edge, no lookup */
	struct tp_tensor md = m;
	md.manual_dep = true;
	assert_int_equal(tp_fanin_collect_arg(&f, &tm, &md, TP_ARG_INPUT), 1);
	assert_int_equal(f.deps[0].source, TP_DEP_CREATOR);
	/* a retired creator is not an edge; an external tensor has none */
	tp_fanin_reset(&f);
	tm.last_task_alive[0] = 4; /* creator 0#3 retired, writer 0#4 live */
	assert_int_equal(tp_fanin_collect_arg(&f, &tm, &m, TP_ARG_INPUT), 1);
	assert_int_equal(f.deps[0].producer, writer);
	tp_fanin_fini(&f);
}

static void test_fanin_many_producers(void **state)
{
	(void)state;
	struct tp_fanin f = { 0 };
	for (uint32_t i = 0; i < 300; i++)
		assert_int_equal(tp_fanin_add(&f, tp_task_id_make(i % 4, i), TP_DEP_EXPLICIT,
					      TP_OVERLAP_NONE), 1);
	for (uint32_t i = 0; i < 300; i += 7)
		assert_int_equal(tp_fanin_add(&f, tp_task_id_make(i % 4, i), TP_DEP_CREATOR,
					      TP_OVERLAP_NONE), 0);
	assert_int_equal(f.n, 300);
	assert_int_equal(f.deps[299].producer, tp_task_id_make(3, 299));
	tp_fanin_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tensor_view_and_extent),
		cmocka_unit_test(test_overlap_disjoint),
		cmocka_unit_test(test_overlap_exact_and_covered),
		cmocka_unit_test(test_overlap_partial),
		cmocka_unit_test(test_overlap_strided_views),
		cmocka_unit_test(test_overlap_version_and_dtype),
		cmocka_unit_test_setup_teardown(test_tmap_lookup_by_overlap, tm_setup,
						tm_teardown),
		cmocka_unit_test_setup_teardown(test_tmap_inout_covered_removes, tm_setup,
						tm_teardown),
		cmocka_unit_test_setup_teardown(test_tmap_stale_entries_skipped_not_truncated,
						tm_setup, tm_teardown),
		cmocka_unit_test_setup_teardown(test_tmap_pool_full_and_reuse, tm_setup,
						tm_teardown),
		cmocka_unit_test_setup_teardown(test_tmap_lookup_stops, tm_setup, tm_teardown),
		cmocka_unit_test_setup_teardown(test_fanin_tags_creator_dedup_explicit,
						tm_setup, tm_teardown),
		cmocka_unit_test(test_fanin_many_producers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
