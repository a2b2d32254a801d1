/* SPDX-License-Identifier: MIT */
/*
 * tests/case_so/abipacked.c — a case shared object built with packed
 * structs (CMake builds it with -fpack-struct; tests/cli/test_cli_badcase.sh):
 * its struct tp_callable is smaller than taskprof's, and taskprof run must
 * say so instead of reading its callable with the wrong layout.
 */
#include <stdlib.h>

#include "taskprof/case.h"

const struct tp_callable *tp_case_callable(void)
{
	abort(); /* never called */
}
