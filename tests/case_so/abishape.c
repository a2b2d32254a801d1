/* SPDX-License-Identifier: MIT */
/*
 * tests/case_so/abishape.c — a case shared object whose tp_case_abi is a
 * 1-byte object, not the struct taskprof/case.h defines
 * (tests/cli/test_cli_badcase.sh): taskprof run must refuse it by its
 * symbol's type and size, not read 28 bytes past it.
 */
#include <stdlib.h>

const unsigned char tp_case_abi = 1;

const void *tp_case_callable(void);
const void *tp_case_callable(void)
{
	abort(); /* never called */
}
