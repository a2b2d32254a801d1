/* SPDX-License-Identifier: MIT */
/*
 * tests/case_so/datasym.c — a case shared object whose tp_case_callable is
 * a variable, not a function (tests/cli/test_cli_badcase.sh): taskprof run
 * must refuse it by its symbol type instead of calling data as code.
 */
int tp_case_callable = 5;
