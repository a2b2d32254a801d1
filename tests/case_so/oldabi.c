/* SPDX-License-Identifier: MIT */
/*
 * tests/case_so/oldabi.c — a case shared object built as before the ABI
 * check: it does not include taskprof/case.h, so it defines no
 * tp_case_abi (tests/cli/test_cli_badcase.sh). It links
 * libtaskprof.so, which does define one: taskprof run must not take that
 * one for the object's, and must refuse the object before calling it.
 */
#include <stdlib.h>

const void *tp_case_callable(void);
const void *tp_case_callable(void)
{
	abort(); /* never called */
}
