/* SPDX-License-Identifier: MIT */
/*
 * taskprof/case.h — declaring a callable and its cases (ARCHITECTURE.md §4,
 * spec/runtime-model.md §4.1: the seeds' CALLABLE / CASES).
 *
 * A callable is an orchestration plus the incore kernels it submits, each
 * with its func_id, name and core type. A case is a named set of arguments
 * for it: a generator that builds them in host memory, a golden that
 * computes the expected outputs, and the tolerances of the comparison
 * (allclose: |got - expected| <= atol + rtol·|expected|, spec §4.4).
 *
 * A run (taskprof/worker.h) does, per case:
 *
 *     generate(case, &host)             host tensors + scalars
 *     golden(case, &expected)           expected = host with its OUT tensors
 *                                       replaced by fresh buffers to fill
 *     device copies of every tensor     H2D (OUT tensors too: they start as
 *                                       the generator left them)
 *     orchestration(o, &device)         device = host with data pointing to
 *                                       device memory; runs on the
 *                                       orchestrator thread (AICPU)
 *     D2H of the OUT tensors, compare, release(case, &host)
 *
 * Kernel ABI: `void fn(int64_t *args)`; args[] holds one pointer to a GM
 * `struct tp_tile` per tensor argument, in add order, then the raw 64-bit
 * scalars (runtime/engine.h).
 *
 * Built-in examples (paged_attention, synthetic, gemm) declare themselves
 * with these structs and are listed by tp_callable_find() (taskprof/worker.h).
 *
 * A case shared object (`taskprof run ./libmycase.so [--case NAME]`) defines
 * one entry symbol, TP_CASE_ENTRY_SYMBOL:
 *
 *     const struct tp_callable *tp_case_callable(void);
 *
 * returning its callable (static storage; not NULL). The CLI dlopens the
 * file, calls the entry once and runs the callable like a built-in; the
 * object stays loaded until the process exits. Its orchestration uses the
 * orchestrator API (tp_args_*, tp_submit_*) and its kernels the tile API,
 * both resolved from libtaskprof.so: link the object with -ltaskprof (the
 * taskprof executable links libtaskprof.so too, so there is one runtime).
 * Example: examples/case_so/mycase.c. The orchestrator API's header is
 * still src/runtime/orch.h, so the object also needs -Isrc; from the
 * repository's top folder, after `make`:
 *
 *     gcc -shared -fPIC -Iinclude -Isrc mycase.c -o libmycase.so \
 *         -Lbuild -ltaskprof -Wl,-rpath,$PWD/build
 *     build/taskprof run ./libmycase.so
 *
 * Locale: a case may call setlocale() (or use a library that calls
 * setlocale(LC_ALL, "")); taskprof's outputs still use '.' as the decimal
 * point. The run puts LC_NUMERIC back to what it was before each call into
 * the case (the entry, generate, golden, the device run, release), so the
 * case's LC_NUMERIC holds only during its own calls; its other categories
 * stay as it set them. Do not call setlocale() in a kernel: kernels run
 * beside the collector threads, and setlocale() is not safe against their
 * printf.
 */
#ifndef TASKPROF_CASE_H
#define TASKPROF_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "taskprof/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Orchestration signature limits (spec §4.1: tensors, then scalars). */
#define TP_CASE_MAX_TENSORS 16
#define TP_CASE_MAX_SCALARS 16
#define TP_CASE_MAX_DIMS 4

struct tp_orch;

/* Core type of an incore kernel (same values as the runtime's). */
enum tp_case_core {
	TP_CASE_AIC = 0,
	TP_CASE_AIV = 1,
};

/**
 * struct tp_case_tensor - one tensor of the orchestration signature.
 * @name:   "query", "out", ... (messages, golden reports).
 * @data:   host address (generate / golden) or device address
 *          (orchestration) of element 0; contiguous, row-major.
 * @bytes:  size of the buffer.
 * @dtype:  element type.
 * @ndims:  1 .. TP_CASE_MAX_DIMS.
 * @shape:  sizes, outermost first.
 * @is_out: an OUT / INOUT of the signature, compared with the golden.
 */
struct tp_case_tensor {
	const char *name;
	void *data;
	size_t bytes;
	enum tp_dtype dtype;
	uint32_t ndims;
	uint32_t shape[TP_CASE_MAX_DIMS];
	bool is_out;
};

/**
 * struct tp_case_args - the arguments of one run of a callable.
 * @n_tensors, @tensors: tensors in signature order.
 * @n_scalars, @scalars: scalars as 64-bit patterns (a float: its binary32
 *                       bits in the low half), after the tensors.
 * @priv:                the generator's own state (e.g. its host
 *                       allocations); kept as is in every copy.
 */
struct tp_case_args {
	uint32_t n_tensors;
	struct tp_case_tensor tensors[TP_CASE_MAX_TENSORS];
	uint32_t n_scalars;
	uint64_t scalars[TP_CASE_MAX_SCALARS];
	void *priv;
};

/**
 * struct tp_case - one named case of a callable.
 * @name:     "CaseSmall1".
 * @manual:   the reference runs it only when asked for (informative).
 * @params:   the callable's own parameter row, for the callbacks.
 * @rtol, @atol: tolerances of the golden comparison, finite and >= 0: an
 *            element passes when |got - expected| <= atol + rtol * |expected|.
 * @generate: fill @args with host tensors (data owned by the case) and
 *            scalars. Return 0 or a negative errno (tp_last_error() set).
 *            Required.
 * @golden:   write the expected values into the OUT tensors of @expected,
 *            whose inputs are the generated ones. Return 0 or -errno.
 *            NULL: the expected outputs are the OUT tensors as generate()
 *            left them (a case without OUT tensors, or whose kernels must
 *            leave them unchanged).
 * @release:  free what @generate allocated; NULL when there is nothing.
 *
 * A run of a case without @generate, or with a negative, infinite or NaN
 * tolerance, fails before anything runs (-EINVAL, naming the case).
 */
struct tp_case {
	const char *name;
	bool manual;
	const void *params;
	double rtol, atol;
	int (*generate)(const struct tp_case *c, struct tp_case_args *args);
	int (*golden)(const struct tp_case *c, struct tp_case_args *expected);
	void (*release)(const struct tp_case *c, struct tp_case_args *args);
};

/**
 * struct tp_case_kernel - one incore kernel of a callable.
 * @func_id:   the id the orchestration submits it with (0 .. n_kernels-1).
 * @name:      "QK" (name maps, messages).
 * @core_type: TP_CASE_AIC or TP_CASE_AIV (anything else fails the run).
 * @fn:        the kernel; NULL is an empty kernel.
 */
struct tp_case_kernel {
	int func_id;
	const char *name;
	enum tp_case_core core_type;
	void (*fn)(int64_t *args);
};

/* The orchestration: @args carries device addresses. Runs on the
 * orchestrator thread; return 0 or a negative errno (fails the run).
 * It runs inside one scope, and a scope holds its tasks' ring slots until
 * it ends: at most 16,383 tasks (the ring window less one) in one scope.
 * Submit more in batches, each inside tp_scope_begin() ... tp_scope_end()
 * (src/runtime/orch.h); the 16,384th submit of one scope fails the run
 * with "scope ... can never drain". */
typedef int (*tp_case_orch_fn)(struct tp_orch *o, const struct tp_case_args *args);

/**
 * struct tp_callable - an orchestration, its kernels and its cases.
 * @name:          "paged_attention" (output folder names).
 * @orch_name:     the orchestration's name (name maps).
 * @orch:          the orchestration.
 * @kernels:       @n_kernels kernels; func_ids unique and < n_kernels.
 * @cases:         @n_cases cases.
 * @default_case:  the case a run without a case name uses.
 * @wants_early_dispatch: run with the runtime's early dispatch on unless
 *                 the Worker's configuration turns it off
 *                 (tp_worker_config.early_dispatch).
 */
struct tp_callable {
	const char *name;
	const char *orch_name;
	tp_case_orch_fn orch;
	const struct tp_case_kernel *kernels;
	int n_kernels;
	const struct tp_case *cases;
	int n_cases;
	const char *default_case;
	bool wants_early_dispatch;
};

/* The entry symbol of a case shared object and its type (see the top). */
#define TP_CASE_ENTRY_SYMBOL "tp_case_callable"
typedef const struct tp_callable *(*tp_case_entry_fn)(void);

/*
 * The ABI of the structs a case object and taskprof exchange (this
 * header's and taskprof/kernel.h's): a version, bumped whenever one of
 * their layouts changes, and the sizes the object's compiler gave them
 * (a layout-changing option such as -fpack-struct changes those).
 *
 * Every object that includes this header defines the symbol
 * TP_CASE_ABI_SYMBOL, a weak `const struct tp_case_abi` filled in from
 * the header it was compiled against (weak: the translation units of one
 * object share one definition). `taskprof run` reads it before it calls
 * the entry and refuses, with one line and exit code 2, a case object
 * that defines none (built against a header older than the check), one
 * whose symbol is not such an object, and one whose version or sizes
 * differ from its own: its structs would be read with the wrong layout.
 * Define TP_CASE_NO_ABI_SYMBOL before the include to leave the definition
 * out (a translation unit that defines the symbol itself).
 *
 * The struct has no padding under any packing: its layout is the same
 * for every compiler option that would change the others.
 */
#define TP_CASE_ABI_VERSION 1u
#define TP_CASE_ABI_SYMBOL "tp_case_abi"
struct tp_case_abi {
	uint32_t version;            /* TP_CASE_ABI_VERSION */
	uint32_t callable_bytes;     /* sizeof(struct tp_callable) */
	uint32_t case_bytes;         /* sizeof(struct tp_case) */
	uint32_t case_kernel_bytes;  /* sizeof(struct tp_case_kernel) */
	uint32_t case_args_bytes;    /* sizeof(struct tp_case_args) */
	uint32_t case_tensor_bytes;  /* sizeof(struct tp_case_tensor) */
	uint32_t tile_bytes;         /* sizeof(struct tp_tile) */
};
/* This header's struct tp_case_abi. */
#define TP_CASE_ABI_INIT                                                                        \
	{ TP_CASE_ABI_VERSION, (uint32_t)sizeof(struct tp_callable),                            \
	  (uint32_t)sizeof(struct tp_case), (uint32_t)sizeof(struct tp_case_kernel),             \
	  (uint32_t)sizeof(struct tp_case_args), (uint32_t)sizeof(struct tp_case_tensor),        \
	  (uint32_t)sizeof(struct tp_tile) }
#ifndef TP_CASE_NO_ABI_SYMBOL
#ifdef __cplusplus
extern __attribute__((weak, visibility("default"))) const struct tp_case_abi tp_case_abi =
	TP_CASE_ABI_INIT;
#else
__attribute__((weak, visibility("default"))) const struct tp_case_abi tp_case_abi =
	TP_CASE_ABI_INIT;
#endif
#endif

#ifdef __cplusplus
}
#endif

#endif /* TASKPROF_CASE_H */
