/* SPDX-License-Identifier: MIT */
/* Unit tests of base/args: argparse's option-like words and its
 * abbreviated long options (tp_args_expand_abbrev). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/args.h"

static const char *const longs[] = { "--help", "--output", "--overhead", "--deps",
				     "--deps-json" };
#define NLONGS 5

static void option_like_words(void **state)
{
	(void)state;
	assert_true(tp_arg_is_option("-o"));
	assert_true(tp_arg_is_option("--pretty"));
	assert_true(tp_arg_is_option("-."));
	assert_true(tp_arg_is_option("-5x"));
	assert_false(tp_arg_is_option("-"));
	assert_false(tp_arg_is_option("-5"));
	assert_false(tp_arg_is_option("-.5"));
	assert_false(tp_arg_is_option("-1.5"));
	assert_false(tp_arg_is_option("out.json"));
}

static void unique_prefixes_expand(void **state)
{
	(void)state;
	char *argv[] = { "prog", "--out", "a.json", "--ove", "--out=b", "--he", "in", NULL };
	char **w, err[128];
	assert_int_equal(tp_args_expand_abbrev(7, argv, longs, NLONGS, &w, err, sizeof(err)), 0);
	assert_string_equal(w[1], "--output");
	assert_ptr_equal(w[2], argv[2]); /* a value is the same word */
	assert_string_equal(w[3], "--overhead");
	assert_string_equal(w[4], "--output=b");
	assert_string_equal(w[5], "--help");
	assert_ptr_equal(w[6], argv[6]);
	assert_null(w[7]);
	tp_args_free(7, argv, w);
}

static void exact_unknown_and_after_dashes_kept(void **state)
{
	(void)state;
	/* "--deps" is an option and a prefix of another: the option itself;
	 * "--x" matches nothing: left for the parser's "unknown option"; after
	 * "--" every word is a path. */
	char *argv[] = { "prog", "--deps", "--deps-j=f", "--x", "--", "--out", NULL };
	char **w, err[128];
	assert_int_equal(tp_args_expand_abbrev(6, argv, longs, NLONGS, &w, err, sizeof(err)), 0);
	assert_ptr_equal(w[1], argv[1]);
	assert_string_equal(w[2], "--deps-json=f");
	assert_ptr_equal(w[3], argv[3]);
	assert_ptr_equal(w[4], argv[4]);
	assert_ptr_equal(w[5], argv[5]);
	tp_args_free(6, argv, w);
}

static void ambiguous_prefix_names_its_matches(void **state)
{
	(void)state;
	char *argv[] = { "prog", "in", "--o=x", NULL };
	char **w = (char **)1, err[128];
	assert_int_equal(tp_args_expand_abbrev(3, argv, longs, NLONGS, &w, err, sizeof(err)),
			 -EINVAL);
	assert_null(w);
	assert_string_equal(err, "ambiguous option: --o=x could match --output, --overhead");
	/* A short buffer gets a cut, terminated message. */
	char small[12];
	assert_int_equal(tp_args_expand_abbrev(3, argv, longs, NLONGS, &w, small, sizeof(small)),
			 -EINVAL);
	assert_string_equal(small, "ambiguous o");
	tp_args_free(3, argv, NULL);
}

static void shell_words(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "outputs/run_1/x.json", "outputs/run_1/x.json" },
		{ "a b", "'a b'" },
		{ "it's", "'it'\\''s'" },
		{ "$HOME`x`", "'$HOME`x`'" },
		{ "-run/x", "./-run/x" },     /* a path, not an option */
		{ "--dep=x", "./--dep=x" },
		{ "-a b", "'./-a b'" },
		{ "", "''" },
		/* a control character: $'...', one line */
		{ "a\nb", "$'a\\nb'" },
		{ "it's\t\\\x1b", "$'it\\'s\\t\\\\\\x1b'" },
		{ "-a\nb", "$'./-a\\nb'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *q = tp_shell_quote(cases[i].in);
		assert_non_null(q);
		assert_string_equal(q, cases[i].out);
		free(q);
	}
	/* never cut: 5000 quotes become 20,002 bytes */
	char *many = malloc(5001);
	assert_non_null(many);
	memset(many, '\'', 5000);
	many[5000] = '\0';
	char *q = tp_shell_quote(many);
	assert_non_null(q);
	assert_int_equal(strlen(q), 4 * 5000 + 2);
	free(q);
	free(many);
}

/* "-o=DIR" is DIR (argparse), only for the word "-X=..." itself. */
static void short_value_after_equals(void **state)
{
	(void)state;
	char w0[] = "taskprof", w1[] = "-o=/out", w2[] = "=x", w3[] = "-vo=y", w4[] = "--output==z";
	char *argv[] = { w0, w1, w2, w3, w4, NULL };
	assert_string_equal(tp_arg_short_eq(w1 + 2, 5, argv), "/out");
	assert_ptr_equal(tp_arg_short_eq(w2, 5, argv), w2);      /* -o =x: "=x" */
	assert_ptr_equal(tp_arg_short_eq(w3 + 3, 5, argv), w3 + 3); /* a cluster */
	assert_ptr_equal(tp_arg_short_eq(w4 + 9, 5, argv), w4 + 9); /* long: "=z" */
	assert_null(tp_arg_short_eq(NULL, 5, argv));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(option_like_words),
		cmocka_unit_test(unique_prefixes_expand),
		cmocka_unit_test(exact_unknown_and_after_dashes_kept),
		cmocka_unit_test(ambiguous_prefix_names_its_matches),
		cmocka_unit_test(shell_words),
		cmocka_unit_test(short_value_after_equals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
