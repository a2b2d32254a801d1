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
 * @err:   receives, on an ambiguous word, "ambiguous option: --o could
 *         match --output, --overhead" (argparse's wording), cut to @errlen
 *         bytes.
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
 * tp_shell_word() - @s as one shell word, for a command line a user
 * copies: @s itself when it holds only characters no shell treats
 * specially (letters, digits, "_./-+:,@%="), else @s in single quotes
 * (each ' as '\''), written to @buf and cut to fit @len bytes.
 * @s:   the word, NUL-terminated.
 * @buf: room for the quoted form.
 * @len: bytes at @buf, at least 8.
 * Return: @s or @buf.
 */
const char *tp_shell_word(const char *s, char *buf, size_t len);

#endif /* TP_BASE_ARGS_H */
