/* SPDX-License-Identifier: MIT */
/*
 * base/args.h — one rule for the command-line parsers of every command.
 */
#ifndef TP_BASE_ARGS_H
#define TP_BASE_ARGS_H

#include <stdbool.h>
#include <stddef.h>

/**
 * tp_arg_is_option() - whether a command-line word reads as an option,
 * so that an option expecting a value must not take it (`-o --pretty`:
 * the value is missing), as Python's argparse decides: it starts with
 * '-', is not "-" alone (standard input / a file named so) and is not a
 * negative number ("-5", "-.5", "-1.5").
 * @v: the word, NUL-terminated.
 * Return: true when @v is option-like.
 */
static inline bool tp_arg_is_option(const char *v)
{
	if (v[0] != '-' || !v[1])
		return false;
	const char *p = v + 1;
	bool digits = false, dot = false;
	for (; *p; p++) {
		if (*p >= '0' && *p <= '9')
			digits = true;
		else if (*p == '.' && !dot)
			dot = true;
		else
			return true;
	}
	return !digits; /* "-." is an option-like word, "-5" a number */
}

/**
 * tp_arg_short_eq() - argparse's reading of a short option's value joined
 * by '=': "-o=DIR" is "DIR", as "--output=DIR" is; getopt gives "=DIR"
 * (`-o=out` used to write into a folder "./=out"). Only the word "-X=..."
 * itself: a separate word "=x" (`-o =x`) stays "=x", and so does a value
 * in a cluster of short options ("-vo=x": "=x", as argparse before Python
 * 3.12 has it; 3.12 strips that '=' too).
 * @v:    the value getopt gave (optarg), or NULL.
 * @argc: words in @argv.
 * @argv: the command's words (permuted by getopt or not: the same strings).
 * Return: @v past its '=' when @v starts at the third byte of a word "-X=",
 * else @v.
 */
static inline char *tp_arg_short_eq(char *v, int argc, char **argv)
{
	if (!v || v[0] != '=')
		return v;
	for (int i = 1; i < argc; i++) {
		const char *w = argv[i];
		if (w && v == w + 2 && w[0] == '-' && w[1] && w[1] != '-' && w[2] == '=')
			return v + 1;
	}
	return v;
}

/**
 * tp_args_expand_abbrev() - Python argparse's abbreviated long options
 * (allow_abbrev): a copy of @argv in which every word before a "--" that
 * starts with "--", is none of @longs, and whose name (the part before an
 * "=") is the prefix of exactly one of them, is that option, with the
 * word's "=value" kept ("--out=x" -> "--output=x"). Other words are kept
 * as they are (the same pointers). As argparse, words are classified
 * before any is taken as a value: a value that starts with "--" is an
 * option word anyway (tp_arg_is_option()).
 * @argc:  words in @argv (argv[0] the program).
 * @argv:  the command's words; not changed.
 * @longs: the command's long options, each "--name".
 * @n:     entries in @longs.
 * @out:   receives the copy (argc words and a NULL); free it with
 *         tp_args_free() also after an error (*@out is then NULL).
 * @err:   receives, on an ambiguous word, "ambiguous option: --o=x could
 *         match --output, --overhead" (argparse's wording: the whole
 *         word), cut to @errlen bytes.
 * @errlen: bytes at @err.
 * Return: 0; -EINVAL for an ambiguous word (*@err says which); -ENOMEM.
 */
int tp_args_expand_abbrev(int argc, char **argv, const char *const *longs, int n, char ***out,
			  char *err, size_t errlen);

/**
 * tp_args_free() - free a copy from tp_args_expand_abbrev().
 * @argc: as given to it.
 * @argv: the original words.
 * @copy: the copy, or NULL.
 */
void tp_args_free(int argc, char **argv, char **copy);

/**
 * tp_shell_quote() - @s as one shell word, for a command line a user
 * copies: @s itself when it holds only characters no shell treats
 * specially (letters, digits, "_./-+:,@%="), else in single quotes (each
 * ' as '\''), or, when it holds a control character (a newline in a
 * path), as $'...' with C escapes, so that the command stays one line; a
 * word that starts with '-' gets "./" in front, so that a command reads
 * it as a path, not an option. Never cut.
 * @s: the word (a path), NUL-terminated.
 *
 * Return: a malloc'd string the caller frees, or NULL when out of memory.
 */
char *tp_shell_quote(const char *s);

/**
 * tp_args_set_prog() - the path taskprof was started as (argv[0]), for
 * the commands a tool prints for the user to run; tp_args_prog() returns
 * it ("taskprof" until set).
 * @argv0: kept by pointer (argv lives as long as the process).
 */
void tp_args_set_prog(const char *argv0);
const char *tp_args_prog(void);

#endif /* TP_BASE_ARGS_H */
