/* SPDX-License-Identifier: MIT */
/*
 * tests/case_so/abi999.c — a case shared object built against a
 * taskprof/case.h of another ABI version (999; tests/cli/test_cli_badcase.sh):
 * taskprof run must refuse it before calling its entry.
 */
#include <stdlib.h>

#define TP_CASE_NO_ABI_SYMBOL
#include "taskprof/case.h"

const struct tp_case_abi tp_case_abi = {
	999, sizeof(struct tp_callable), sizeof(struct tp_case), sizeof(struct tp_case_kernel),
	sizeof(struct tp_case_args), sizeof(struct tp_case_tensor), sizeof(struct tp_tile),
};

const struct tp_callable *tp_case_callable(void)
{
	abort(); /* never called */
}
