/* SPDX-License-Identifier: MIT */
/*
 * base/args.h — one rule for the command-line parsers of every command.
 */
#ifndef TP_BASE_ARGS_H
#define TP_BASE_ARGS_H

#include <stdbool.h>

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

#endif /* TP_BASE_ARGS_H */
