/* SPDX-License-Identifier: MIT */
/*
 * worker/callables.c — the built-in callables `taskprof run CASE` knows
 * (ARCHITECTURE.md §5).
 */
#include <string.h>

#include "examples/gemm/gemm_callable.h"
#include "examples/paged_attention/pa_callable.h"
#include "examples/synthetic/syn_callable.h"
#include "taskprof/worker.h"

static const struct tp_callable *const builtins[] = {
	&pa_callable,
	&syn_callable,
	&gemm_callable,
};

const struct tp_callable *tp_callable_at(size_t i)
{
	return i < sizeof(builtins) / sizeof(builtins[0]) ? builtins[i] : NULL;
}

const struct tp_callable *tp_callable_find(const char *name)
{
	for (size_t i = 0; name && tp_callable_at(i); i++)
		if (!strcmp(builtins[i]->name, name))
			return builtins[i];
	return NULL;
}
