/* SPDX-License-Identifier: MIT */
/*
 * examples/paged_attention/pa_callable.c — paged attention declared as a
 * taskprof/case.h callable: CALLABLE (orchestration + QK/SF/PV/UP) and
 * CASES (spec/runtime-model.md §4.1, §5.2).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "examples/paged_attention/pa_callable.h"
#include "examples/paged_attention/pa_golden.h"
#include "examples/paged_attention/pa_inputs.h"
#include "examples/paged_attention/pa_kernels.h"

int pa_case_args(struct pa_inputs *in, struct tp_case_args *args)
{
	memset(args, 0, sizeof(*args));
	for (int i = 0; i < PA_ARG_COUNT; i++) {
		struct pa_tensor pt;
		int rc = pa_inputs_tensor(in, (enum pa_arg)i, &pt);
		if (rc)
			return rc;
		struct tp_case_tensor *t = &args->tensors[i];
		*t = (struct tp_case_tensor){
			.name = pt.name, .data = pt.data, .bytes = pt.bytes,
			.dtype = pt.dtype, .ndims = pt.ndims, .is_out = pt.is_out,
		};
		memcpy(t->shape, pt.shape, sizeof(t->shape));
	}
	args->n_tensors = PA_ARG_COUNT;
	args->scalars[0] = (uint64_t)pa_arg_f32(in->scale);
	args->n_scalars = 1;
	args->priv = in;
	return 0;
}

/* The case rows live in pa_cases.c; a case finds its row by name. */
static int pa_generate(const struct tp_case *c, struct tp_case_args *args)
{
	const struct pa_case *pc = pa_case_find(c->name);
	if (!pc)
		return tp_set_error(-ENOENT, "paged_attention: no case '%s'", c->name);
	struct pa_inputs *in = calloc(1, sizeof(*in));
	if (!in)
		return tp_set_error(-ENOMEM, "paged_attention: out of memory");
	int rc = pa_inputs_create(pc, PA_DEFAULT_SEED, in);
	if (!rc)
		rc = pa_case_args(in, args);
	if (rc) {
		pa_inputs_destroy(in);
		free(in);
	}
	return rc;
}

static int pa_golden_cb(const struct tp_case *c, struct tp_case_args *expected)
{
	(void)c;
	return pa_golden(expected->priv, expected->tensors[PA_ARG_OUT].data);
}

static void pa_release(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	pa_inputs_destroy(args->priv);
	free(args->priv);
	args->priv = NULL;
}

static const struct tp_case_kernel pa_incores[PA_FUNC_COUNT] = {
	{ PA_FUNC_QK, "QK", TP_CASE_AIC, pa_kernel_qk },
	{ PA_FUNC_SF, "SF", TP_CASE_AIV, pa_kernel_sf },
	{ PA_FUNC_PV, "PV", TP_CASE_AIC, pa_kernel_pv },
	{ PA_FUNC_UP, "UP", TP_CASE_AIV, pa_kernel_up },
};

#define PA_CASE(n, m)                                                          \
	{                                                                      \
		.name = n, .manual = m, .rtol = PA_RTOL, .atol = PA_ATOL,      \
		.generate = pa_generate, .golden = pa_golden_cb,               \
		.release = pa_release,                                         \
	}

static const struct tp_case pa_case_table[] = {
	PA_CASE("CaseSmall1", false),
	PA_CASE("CaseSmall2", true),
	PA_CASE("CaseVarSeq2", true),
	PA_CASE("CaseVarSeq4", true),
	PA_CASE("Case1", false),
};

const struct tp_callable pa_callable = {
	.name = "paged_attention",
	.orch_name = "aicpu_orchestration_entry",
	.orch = pa_orchestration,
	.kernels = pa_incores,
	.n_kernels = PA_FUNC_COUNT,
	.cases = pa_case_table,
	.n_cases = (int)(sizeof(pa_case_table) / sizeof(pa_case_table[0])),
	.default_case = "CaseSmall1",
};
