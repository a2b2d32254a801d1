/* SPDX-License-Identifier: MIT */
/* Unit tests of op/filter: the U4 list of spec/opprof.md §4.14 — launch
 * selection (skip-before-match counts every launch, --launch-skip counts
 * matches only, prefix / glob / a|b names, count cap, the --kill
 * condition), name sanitising and launch directory claims. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "op/filter.h"
#include "unit_helpers.h"

/* multi_kernel's launch sequence (tests/op_apps/multi_kernel.c). */
static const char *const seq[] = { "add_one", "scale_two", "add_one", "add_three",
				   "scale_two", "add_one", "add_three", "add_one" };
#define NSEQ (sizeof(seq) / sizeof(seq[0]))

/* Run the sequence through a filter; the profiled indices as "i,j,...". */
static void picks(const char *pat, uint32_t sbm, uint32_t skip, uint32_t count, char *out,
		  size_t n)
{
	struct tp_op_filter f;
	assert_int_equal(tp_op_filter_init(&f, pat, sbm, skip, count), 0);
	out[0] = '\0';
	for (size_t i = 0; i < NSEQ; i++)
		if (tp_op_filter_decide(&f, 0, seq[i], false))
			snprintf(out + strlen(out), n - strlen(out), "%s%zu", out[0] ? "," : "", i);
}

static void test_name_match(void **state)
{
	(void)state;
	assert_true(tp_op_name_match("", "anything"));
	assert_true(tp_op_name_match(NULL, "anything"));
	assert_true(tp_op_name_match("add", "add_one"));       /* prefix */
	assert_false(tp_op_name_match("one", "add_one"));      /* not a suffix match */
	assert_true(tp_op_name_match("*_one", "add_one"));     /* glob */
	assert_true(tp_op_name_match("a?d_[ot]*", "add_three"));
	assert_false(tp_op_name_match("*_two", "add_three"));
	assert_true(tp_op_name_match("*_two|add_three", "add_three")); /* alternatives */
	assert_true(tp_op_name_match("*_two|add_three", "scale_two"));
	assert_false(tp_op_name_match("*_two|add_three", "add_one"));
	assert_false(tp_op_name_match("add", NULL));
	assert_false(tp_op_name_match("add_one_more", "add_one"));
}

static void test_init_errors(void **state)
{
	(void)state;
	struct tp_op_filter f;
	assert_int_equal(tp_op_filter_init(&f, "a||b", 0, 0, 1), -EINVAL);
	assert_int_equal(tp_op_filter_init(&f, "|a", 0, 0, 1), -EINVAL);
	assert_int_equal(tp_op_filter_init(&f, "a|", 0, 0, 1), -EINVAL);
	assert_int_equal(tp_op_filter_init(&f, "a", 0, 0, 0), -EINVAL);
	char big[TP_OP_FILTER_PAT_MAX + 2];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(tp_op_filter_init(&f, big, 0, 0, 1), -EINVAL);
	big[TP_OP_FILTER_PAT_MAX] = '\0';
	assert_int_equal(tp_op_filter_init(&f, big, 0, 0, 1), 0);
	assert_int_equal(tp_op_filter_init(NULL, "a", 0, 0, 1), -EINVAL);
}

static void test_selection_order(void **state)
{
	(void)state;
	char got[64];
	/* Unset name: every launch matches, the count caps (default 1 =
	 * "the first launch only"). */
	picks("", 0, 0, 1, got, sizeof(got));
	assert_string_equal(got, "0");
	picks("", 0, 0, 3, got, sizeof(got));
	assert_string_equal(got, "0,1,2");
	picks("add_three", 0, 0, 1, got, sizeof(got));
	assert_string_equal(got, "3");
	picks("add", 0, 0, 10, got, sizeof(got));
	assert_string_equal(got, "0,2,3,5,6,7");
	/* skip-before-match counts EVERY launch: 0..2 skipped although only
	 * 0 and 2 match. */
	picks("add", 3, 0, 1, got, sizeof(got));
	assert_string_equal(got, "3");
	/* --launch-skip counts matches only: the adds at 0 and 2 skipped. */
	picks("add", 0, 2, 2, got, sizeof(got));
	assert_string_equal(got, "3,5");
	picks("*_two|add_three", 0, 0, 100, got, sizeof(got));
	assert_string_equal(got, "1,3,4,6");
	picks("scale", 0, 1, 1, got, sizeof(got));
	assert_string_equal(got, "4");
	picks("", 6, 0, 5, got, sizeof(got));
	assert_string_equal(got, "6,7");
	/* Both skips: launches 0 and 1 of anything, then the first matching
	 * add after them (at 2). */
	picks("add", 2, 1, 10, got, sizeof(got));
	assert_string_equal(got, "3,5,6,7");
	picks("no_such", 0, 0, 10, got, sizeof(got));
	assert_string_equal(got, "");
	/* Skips past the end: nothing. */
	picks("", 1000, 0, 5000, got, sizeof(got));
	assert_string_equal(got, "");
}

static void test_counters_per_device(void **state)
{
	(void)state;
	struct tp_op_filter f;
	assert_int_equal(tp_op_filter_init(&f, "k", 1, 1, 2), 0);
	/* Device 0: launch 0 skipped (before match), 1 skipped (first
	 * match), 2 and 3 profiled, 4 over the count. */
	bool want0[] = { false, false, true, true, false };
	for (int i = 0; i < 5; i++) {
		assert_int_equal(tp_op_filter_decide(&f, 0, "k", false), want0[i]);
		assert_int_equal(tp_op_filter_done(&f, 0), i >= 3);
	}
	/* Device 1 counts on its own. */
	assert_false(tp_op_filter_done(&f, 1));
	assert_false(tp_op_filter_decide(&f, 1, "k", false));
	assert_false(tp_op_filter_decide(&f, 1, "k", false));
	assert_true(tp_op_filter_decide(&f, 1, "k", false));
	assert_int_equal(f.seen[0], 5);
	assert_int_equal(f.matched[0], 4);
	assert_int_equal(f.profiled[0], 2);
	assert_int_equal(f.seen[1], 3);
	assert_int_equal(f.profiled[1], 1);
	/* Unknown devices are never profiled and never done. */
	assert_false(tp_op_filter_decide(&f, -1, "k", false));
	assert_false(tp_op_filter_decide(&f, TP_RT_MAX_DEVICES, "k", false));
	assert_false(tp_op_filter_done(&f, TP_RT_MAX_DEVICES));
}

/* Range markers on (spec §4.6): skip-before-match -> range -> name ->
 * skip -> count. multi_kernel's sequence with launches 2..5 inside a
 * range. */
static void range_picks(const char *pat, uint32_t sbm, uint32_t skip, uint32_t count,
			bool markers, char *out, size_t n, struct tp_op_filter *f)
{
	assert_int_equal(tp_op_filter_init(f, pat, sbm, skip, count), 0);
	tp_op_filter_set_ranges(f, markers);
	out[0] = '\0';
	for (size_t i = 0; i < NSEQ; i++)
		if (tp_op_filter_decide(f, 0, seq[i], i >= 2 && i <= 5))
			snprintf(out + strlen(out), n - strlen(out), "%s%zu", out[0] ? "," : "", i);
}

static void test_range_step(void **state)
{
	(void)state;
	struct tp_op_filter f;
	char got[64];
	/* Markers off: the range flag is ignored. */
	range_picks("", 0, 0, 1, false, got, sizeof(got), &f);
	assert_string_equal(got, "0");
	/* On: the first launch INSIDE a range. */
	range_picks("", 0, 0, 1, true, got, sizeof(got), &f);
	assert_string_equal(got, "2");
	range_picks("", 0, 0, 100, true, got, sizeof(got), &f);
	assert_string_equal(got, "2,3,4,5");
	range_picks("add", 0, 0, 100, true, got, sizeof(got), &f);
	assert_string_equal(got, "2,3,5");
	/* skip-before-match counts the launches outside ranges too. */
	range_picks("", 3, 0, 100, true, got, sizeof(got), &f);
	assert_string_equal(got, "3,4,5");
	assert_int_equal(f.seen[0], NSEQ);
	/* --launch-skip counts matches inside ranges only: add_one at 0
	 * (outside) is not one of them; 2 is skipped. */
	range_picks("add", 0, 1, 100, true, got, sizeof(got), &f);
	assert_string_equal(got, "3,5");
	assert_int_equal(f.matched[0], 3);
	/* Nothing in a range matches. */
	range_picks("add_one", 6, 0, 100, true, got, sizeof(got), &f);
	assert_string_equal(got, "");
	assert_int_equal(f.profiled[0], 0);
}

static void test_sanitise(void **state)
{
	(void)state;
	char out[TP_OP_NAME_MAX + 16];
	tp_op_name_sanitise("add_one-v2.0", out, sizeof(out));
	assert_string_equal(out, "add_one-v2.0");
	tp_op_name_sanitise("a b/c:d<e>", out, sizeof(out));
	assert_string_equal(out, "a_b_c_d_e_");
	tp_op_name_sanitise("", out, sizeof(out));
	assert_string_equal(out, "_");
	tp_op_name_sanitise("..", out, sizeof(out));
	assert_string_equal(out, "_.");
	tp_op_name_sanitise(".", out, sizeof(out));
	assert_string_equal(out, "_");
	tp_op_name_sanitise(".hidden", out, sizeof(out));
	assert_string_equal(out, "_hidden");
	tp_op_name_sanitise("../x", out, sizeof(out));
	assert_string_equal(out, "_._x");
	tp_op_name_sanitise("a.b.", out, sizeof(out));
	assert_string_equal(out, "a.b.");
	char big[400];
	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	tp_op_name_sanitise(big, out, sizeof(out));
	assert_int_equal(strlen(out), TP_OP_NAME_MAX);
	char tiny[4];
	tp_op_name_sanitise("abcdef", tiny, sizeof(tiny));
	assert_string_equal(tiny, "abc");
}

static void test_claim_dir(void **state)
{
	(void)state;
	char *tmp = uh_mkdtemp();
	assert_non_null(tmp);
	char dir[4300], want[4300];
	int k = 0;
	assert_int_equal(tp_op_claim_dir(tmp, 1, "acc", dir, sizeof(dir), &k), 0);
	assert_int_equal(k, 0);
	snprintf(want, sizeof(want), "%s/device1/acc/0", tmp);
	assert_string_equal(dir, want);
	struct stat st;
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* Index 2 taken by someone else (another process): 1, then 3. */
	snprintf(want, sizeof(want), "%s/device1/acc/2", tmp);
	assert_int_equal(mkdir(want, 0755), 0);
	k = 0;
	assert_int_equal(tp_op_claim_dir(tmp, 1, "acc", dir, sizeof(dir), &k), 0);
	assert_int_equal(k, 1);
	k = 0;
	assert_int_equal(tp_op_claim_dir(tmp, 1, "acc", dir, sizeof(dir), &k), 0);
	assert_int_equal(k, 3);
	/* The hint skips the taken prefix. */
	k = 7;
	assert_int_equal(tp_op_claim_dir(tmp, 1, "acc", dir, sizeof(dir), &k), 0);
	assert_int_equal(k, 7);
	char small[16];
	k = 0;
	assert_int_equal(tp_op_claim_dir(tmp, 0, "x", small, sizeof(small), &k), -ENAMETOOLONG);
	uh_rm_rf(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_match),
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_selection_order),
		cmocka_unit_test(test_counters_per_device),
		cmocka_unit_test(test_range_step),
		cmocka_unit_test(test_sanitise),
		cmocka_unit_test(test_claim_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
