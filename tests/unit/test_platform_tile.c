/* SPDX-License-Identifier: MIT */
/* Unit tests of the tile API (include/taskprof/kernel.h) and the AICore
 * context (platform/tile/core_ctx.h): every op's result against a plain
 * reference and its usage delta exactly (pipe, dtype, vector class,
 * instructions, elements, bytes and requests per memory path; cycles > 0 on
 * the op's pipe and 0 elsewhere); the context (memories, binding, local
 * allocator, stale tiles, counting gate and hook, sticky error, task
 * bracket, scalar sections). Bound violations are in
 * test_platform_tile_bounds.c, kernels in test_platform_tile_kernels.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "platform/tile/core_ctx.h"
#include "platform/tile/fp.h"
#include "platform/tile/usage.h"
#include "taskprof/kernel.h"

/* ---- fixture ----------------------------------------------------------- */

#define MAX_CAPTURE 64

struct capture {
	int n;
	struct tp_core_ctx *ctx[MAX_CAPTURE];
	struct tp_usage_delta d[MAX_CAPTURE];
};

static struct capture cap;
static struct tp_core_ctx aiv, aic;

static void capture_hook(struct tp_core_ctx *ctx,
			 const struct tp_usage_delta *d, void *ud)
{
	struct capture *c = ud;
	if (c->n < MAX_CAPTURE) {
		c->ctx[c->n] = ctx;
		c->d[c->n] = *d;
	}
	c->n++;
}

static int setup(void **state)
{
	(void)state;
	if (tp_core_ctx_init(&aiv, 9, TP_CORE_AIV) ||
	    tp_core_ctx_init(&aic, 1, TP_CORE_AIC))
		return -1;
	tp_core_ctx_set_usage_hook(&aiv, capture_hook, &cap);
	tp_core_ctx_set_usage_hook(&aic, capture_hook, &cap);
	tp_core_ctx_set_counting(&aiv, true);
	tp_core_ctx_set_counting(&aic, true);
	tp_core_ctx_bind(&aiv);
	memset(&cap, 0, sizeof(cap));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tp_core_ctx_bind(NULL);
	tp_core_ctx_fini(&aiv);
	tp_core_ctx_fini(&aic);
	return 0;
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

static uint32_t rng = 12345u;
static float frand(float lo, float hi)
{
	rng = rng * 1664525u + 1013904223u;
	return lo + (hi - lo) * (float)(rng >> 8) / 16777216.0f;
}

/* Element access for the references (values widened / rounded as the
 * tile API defines). */
static float getf(const struct tp_tile *t, uint32_t r, uint32_t c)
{
	const void *p = tp_tile_at(t, r, c);
	switch (t->dtype) {
	case TP_FP32: return *(const float *)p;
	case TP_FP16: return tp_f16_to_f32(*(const uint16_t *)p);
	case TP_BF16: return tp_bf16_to_f32(*(const uint16_t *)p);
	case TP_INT8: return *(const int8_t *)p;
	default: return (float)*(const int32_t *)p;
	}
}

static void setf(const struct tp_tile *t, uint32_t r, uint32_t c, float v)
{
	void *p = tp_tile_at(t, r, c);
	switch (t->dtype) {
	case TP_FP32: *(float *)p = v; break;
	case TP_FP16: *(uint16_t *)p = tp_f32_to_f16(v); break;
	case TP_BF16: *(uint16_t *)p = tp_f32_to_bf16(v); break;
	case TP_INT8: *(int8_t *)p = (int8_t)v; break;
	default: *(int32_t *)p = (int32_t)v; break;
	}
}

static float round_to(uint8_t dt, float v)
{
	switch (dt) {
	case TP_FP16: return tp_f16_to_f32(tp_f32_to_f16(v));
	case TP_BF16: return tp_bf16_to_f32(tp_f32_to_bf16(v));
	default: return v;
	}
}

static void fill(const struct tp_tile *t, float lo, float hi)
{
	for (uint32_t r = 0; r < t->rows; r++)
		for (uint32_t c = 0; c < t->cols; c++) {
			float v = frand(lo, hi);
			if (t->dtype == TP_INT32 || t->dtype == TP_INT8)
				v = floorf(v);
			setf(t, r, c, v);
		}
}

static struct tp_tile ub(enum tp_dtype dt, uint32_t rows, uint32_t cols)
{
	struct tp_tile t;
	assert_int_equal(tp_local_tile(&t, TP_MEM_UB, dt, rows, cols), 0);
	return t;
}

static struct tp_tile local(enum tp_mem m, enum tp_dtype dt, uint32_t rows,
			    uint32_t cols)
{
	struct tp_tile t;
	assert_int_equal(tp_local_tile(&t, m, dt, rows, cols), 0);
	return t;
}

/* A GM tensor: heap buffer of rows x stride elements. */
static struct tp_tile gm(enum tp_dtype dt, uint32_t rows, uint32_t cols,
			 uint32_t stride)
{
	size_t bytes = (size_t)rows * stride * tp_dtype_size(dt);
	void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
	assert_non_null(p);
	memset(p, 0, bytes);
	struct tp_tile t;
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, p, bytes, dt, rows, cols,
				      stride), 0);
	return t;
}

/* Reset the bound core's usage record and the captured deltas. */
static void begin_op(void)
{
	tp_core_ctx_usage_reset(tp_core_ctx_current());
	cap.n = 0;
}

struct xacc {
	int mem, dir;
	uint64_t bytes, reqs;
};

/* The op just run produced exactly one delta with these values, and the
 * usage record holds exactly that delta. */
static void check_delta(int op, int pipe, int dtype, int vclass,
			uint64_t instr, uint64_t elems, int nx,
			const struct xacc *x)
{
	struct tp_core_ctx *ctx = tp_core_ctx_current();
	assert_int_equal(cap.n, 1);
	const struct tp_usage_delta *d = &cap.d[0];
	assert_ptr_equal(cap.ctx[0], ctx);
	if (d->op != op || d->pipe != pipe || d->dtype != dtype ||
	    d->vclass != vclass)
		fail_msg("delta op %s pipe %s dtype %d vclass %d; expected "
			 "%s %s %d %d",
			 tp_op_name(d->op), tp_pipe_name(d->pipe), d->dtype,
			 d->vclass, tp_op_name(op), tp_pipe_name(pipe), dtype,
			 vclass);
	assert_int_equal(d->instr, instr);
	assert_int_equal(d->elems, elems);
	assert_true(d->cycles >= 1);
	assert_int_equal(d->n_access, nx);
	for (int i = 0; i < nx; i++) {
		uint64_t b = tp_usage_delta_bytes(d, x[i].mem, x[i].dir);
		uint64_t q = tp_usage_delta_reqs(d, x[i].mem, x[i].dir);
		if (b != x[i].bytes || q != x[i].reqs)
			fail_msg("%s %s %s: %llu bytes %llu reqs; expected "
				 "%llu %llu",
				 tp_op_name(op), tp_mem_name(x[i].mem),
				 x[i].dir ? "write" : "read",
				 (unsigned long long)b, (unsigned long long)q,
				 (unsigned long long)x[i].bytes,
				 (unsigned long long)x[i].reqs);
	}

	const struct tp_core_usage *u = tp_core_ctx_usage(ctx);
	for (int p = 0; p < TP_PIPE_COUNT; p++) {
		if (p == pipe) {
			assert_true(u->cycles[p] > 0);
			assert_int_equal(u->cycles[p], d->cycles);
			assert_int_equal(u->ops[p], 1);
			assert_int_equal(u->instr[p], instr);
		} else {
			assert_int_equal(u->cycles[p], 0);
			assert_int_equal(u->ops[p], 0);
			assert_int_equal(u->instr[p], 0);
		}
		for (int t = 0; t < TP_DTYPE_COUNT; t++) {
			uint64_t want = (p == pipe && t == dtype) ? elems : 0;
			assert_int_equal(u->elems[p][t], want);
			want = (p == pipe && t == dtype) ? instr : 0;
			assert_int_equal(u->instr_dtype[p][t], want);
		}
	}
	for (int v = 0; v < TP_VCLASS_COUNT; v++)
		assert_int_equal(u->vec_instr[v], v == vclass ? instr : 0);
	uint64_t total = 0, want_total = 0;
	for (int p = 0; p < TP_PIPE_COUNT; p++)
		for (int m = 0; m < TP_MEM_COUNT; m++)
			for (int r = 0; r < TP_DIR_COUNT; r++)
				total += u->bytes[p][m][r] + u->reqs[p][m][r];
	for (int i = 0; i < nx; i++) {
		assert_int_equal(u->bytes[pipe][x[i].mem][x[i].dir],
				 x[i].bytes);
		assert_int_equal(u->reqs[pipe][x[i].mem][x[i].dir],
				 x[i].reqs);
		want_total += x[i].bytes + x[i].reqs;
	}
	assert_int_equal(total, want_total);
}

#define XA(...) ((const struct xacc[]){ __VA_ARGS__ })
#define NXA(...) (int)(sizeof((const struct xacc[]){ __VA_ARGS__ }) / \
		       sizeof(struct xacc))
#define CHECK(op, pipe, dt, vc, instr, elems, ...)                         \
	check_delta(op, pipe, dt, vc, instr, elems, NXA(__VA_ARGS__),      \
		    XA(__VA_ARGS__))

#define R TP_DIR_READ
#define W TP_DIR_WRITE
#define NOVC TP_VCLASS_NONE

/* ---- context ---------------------------------------------------------- */

static void test_ctx_memories(void **state)
{
	(void)state;
	assert_int_equal(aiv.core_type, TP_CORE_AIV);
	assert_int_equal(aiv.core_id, 9);
	assert_int_equal(tp_core_ctx_local_free(&aiv, TP_MEM_UB), 192 * 1024);
	assert_int_equal(tp_core_ctx_local_free(&aiv, TP_MEM_L1), 0);
	assert_int_equal(tp_core_ctx_local_free(&aiv, TP_MEM_L0C), 0);
	assert_int_equal(tp_core_ctx_local_free(&aic, TP_MEM_UB), 0);
	assert_int_equal(tp_core_ctx_local_free(&aic, TP_MEM_L1), 512 * 1024);
	assert_int_equal(tp_core_ctx_local_free(&aic, TP_MEM_L0A), 64 * 1024);
	assert_int_equal(tp_core_ctx_local_free(&aic, TP_MEM_L0B), 64 * 1024);
	assert_int_equal(tp_core_ctx_local_free(&aic, TP_MEM_L0C),
			 128 * 1024);
	assert_int_equal(tp_core_ctx_local_free(&aic, TP_MEM_GM), 0);

	struct tp_core_ctx bad;
	assert_int_equal(tp_core_ctx_init(&bad, 3, (enum tp_core_type)7),
			 -EINVAL);
	size_t caps[TP_MEM_COUNT] = { 0 };
	caps[TP_MEM_UB] = 128u << 20;
	assert_int_equal(tp_core_ctx_init_caps(&bad, 3, TP_CORE_AIV, caps),
			 -EINVAL);
	/* An AIC with a UB (for fixpipe output), and a core with nothing. */
	caps[TP_MEM_UB] = 1000; /* not a multiple of the alignment */
	struct tp_core_ctx odd;
	assert_int_equal(tp_core_ctx_init_caps(&odd, 4, TP_CORE_AIC, caps), 0);
	tp_core_ctx_bind(&odd);
	void *a = tp_local_alloc(TP_MEM_UB, 990);
	assert_non_null(a);
	assert_int_equal(tp_core_ctx_local_free(&odd, TP_MEM_UB), 8);
	uint8_t *tail = tp_local_alloc(TP_MEM_UB, 4); /* a short last block */
	assert_ptr_equal(tail, (uint8_t *)a + 992);
	assert_int_equal(tp_core_ctx_local_free(&odd, TP_MEM_UB), 0);
	assert_null(tp_local_alloc(TP_MEM_UB, 1));
	assert_int_equal(tp_core_ctx_error(&odd), -ENOMEM);
	tp_core_ctx_fini(&odd);
	assert_null(tp_core_ctx_current()); /* fini unbinds */
	memset(caps, 0, sizeof(caps));
	assert_int_equal(tp_core_ctx_init_caps(&odd, 5, TP_CORE_AIV, caps), 0);
	tp_core_ctx_fini(&odd);
	tp_core_ctx_fini(&odd); /* twice is harmless */
}

/* A device's set of cores (tp_core_ctxs_init): one arena aligned to a
 * huge page; given back, the next set of its size gets the same arena
 * with everything the last one wrote zeroed. */
static void test_ctxs_arena_kept_zeroed(void **state)
{
	(void)state;
	const enum tp_core_type types[3] = { TP_CORE_AIC, TP_CORE_AIV, TP_CORE_AIV };
	struct tp_core_ctx set[3];
	assert_int_equal(tp_core_ctxs_init(set, 3, types), 0);
	assert_int_equal((uintptr_t)set[0].arena % (2u << 20), 0);
	assert_int_equal(set[0].arena_len % (2u << 20), 0);
	uint8_t *ub = set[2].mem[TP_MEM_UB].base, *l1 = set[0].mem[TP_MEM_L1].base;
	assert_int_equal(ub[0], 0);
	memset(ub, 0x5a, 192 * 1024);
	memset(l1, 0xa5, 512 * 1024);
	void *arena = set[0].arena;
	tp_core_ctxs_fini(set, 3);

	assert_int_equal(tp_core_ctxs_init(set, 3, types), 0);
	assert_ptr_equal(set[0].arena, arena);
	ub = set[2].mem[TP_MEM_UB].base;
	l1 = set[0].mem[TP_MEM_L1].base;
	for (size_t i = 0; i < 192 * 1024; i++)
		if (ub[i])
			fail_msg("UB byte %zu is %u after reuse", i, ub[i]);
	for (size_t i = 0; i < 512 * 1024; i++)
		if (l1[i])
			fail_msg("L1 byte %zu is %u after reuse", i, l1[i]);
	assert_int_equal(tp_core_ctx_local_free(&set[1], TP_MEM_UB), 192 * 1024);
	tp_core_ctxs_fini(set, 3);
	/* Zeroed contexts: a no-op. */
	memset(set, 0, sizeof(set));
	tp_core_ctxs_fini(set, 3);
}

static void *other_thread(void *arg)
{
	*(struct tp_core_ctx **)arg = tp_core_ctx_current();
	return NULL;
}

static void test_bind_is_per_thread(void **state)
{
	(void)state;
	assert_ptr_equal(tp_core_ctx_current(), &aiv);
	struct tp_core_ctx *seen = &aic;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, other_thread, &seen), 0);
	pthread_join(th, NULL);
	assert_null(seen);
	tp_core_ctx_bind(&aic);
	assert_ptr_equal(tp_core_ctx_current(), &aic);
	tp_core_ctx_bind(NULL);
	assert_null(tp_core_ctx_current());

	/* No bound core: ops and allocation refuse with -ENODEV. */
	struct tp_tile t = { 0 };
	assert_int_equal(tp_vdup(&t, 1.0f), -ENODEV);
	assert_non_null(strstr(tp_last_error(), "tp_vdup"));
	assert_null(tp_local_alloc(TP_MEM_UB, 32));
	assert_int_equal(tp_local_reset(), -ENODEV);
	assert_int_equal(tp_scalar_begin(NULL), -ENODEV);
	assert_int_equal(tp_local_tile(&t, TP_MEM_UB, TP_FP32, 1, 1), -ENODEV);
}

static void test_local_alloc(void **state)
{
	(void)state;
	uint8_t *a = tp_local_alloc(TP_MEM_UB, 1);
	uint8_t *b = tp_local_alloc(TP_MEM_UB, 33);
	uint8_t *c = tp_local_alloc(TP_MEM_UB, 64);
	assert_non_null(a);
	assert_int_equal((uintptr_t)a % TP_LOCAL_ALIGN, 0);
	assert_ptr_equal(b, a + 32);
	assert_ptr_equal(c, b + 64);
	assert_int_equal(tp_core_ctx_local_free(&aiv, TP_MEM_UB),
			 192 * 1024 - 160);
	/* The rest fits exactly; one more byte does not. */
	assert_non_null(tp_local_alloc(TP_MEM_UB, 192 * 1024 - 160));
	assert_int_equal(tp_core_ctx_error(&aiv), 0);
	assert_null(tp_local_alloc(TP_MEM_UB, 1));
	assert_int_equal(tp_core_ctx_error(&aiv), -ENOMEM);
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv), "UB"));
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv), "0 of 196608"));
	/* Sticky: even a fitting request is refused until cleared. */
	assert_int_equal(tp_local_reset(), 0);
	assert_null(tp_local_alloc(TP_MEM_UB, 32));
	tp_core_ctx_clear_error(&aiv);
	assert_ptr_equal(tp_local_alloc(TP_MEM_UB, 32), a);

	/* Memories the core lacks, non-local kinds, zero bytes. */
	assert_null(tp_local_alloc(TP_MEM_L1, 32));
	assert_int_equal(tp_core_ctx_error(&aiv), -EINVAL);
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv), "has no L1"));
	tp_core_ctx_clear_error(&aiv);
	assert_null(tp_local_alloc(TP_MEM_GM, 32));
	assert_int_equal(tp_core_ctx_error(&aiv), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
	assert_null(tp_local_alloc(TP_MEM_UB, 0));
	assert_int_equal(tp_core_ctx_error(&aiv), -EINVAL);
	tp_core_ctx_clear_error(&aiv);

	/* tp_local_tile reports a capacity overflow with the shape. */
	struct tp_tile t;
	assert_int_equal(tp_local_tile(&t, TP_MEM_UB, TP_FP32, 256, 256),
			 -ENOMEM);
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv), "256x256"));
	tp_core_ctx_clear_error(&aiv);

	tp_core_ctx_bind(&aic);
	assert_non_null(tp_local_alloc(TP_MEM_L1, 512 * 1024));
	assert_non_null(tp_local_alloc(TP_MEM_L0A, 64 * 1024));
	assert_non_null(tp_local_alloc(TP_MEM_L0B, 64 * 1024));
	assert_non_null(tp_local_alloc(TP_MEM_L0C, 128 * 1024));
	assert_int_equal(tp_core_ctx_error(&aic), 0);
	assert_null(tp_local_alloc(TP_MEM_UB, 32));
	assert_int_equal(tp_core_ctx_error(&aic), -EINVAL);
}

static void test_stale_tile(void **state)
{
	(void)state;
	struct tp_tile t = ub(TP_FP32, 4, 8);
	assert_int_equal(tp_vdup(&t, 1.0f), 0);
	assert_int_equal(tp_local_reset(), 0);
	struct tp_tile u = ub(TP_FP32, 4, 8); /* same bytes, new generation */
	assert_ptr_equal(u.buf, t.buf);
	assert_int_equal(tp_vdup(&u, 2.0f), 0);
	assert_int_equal(tp_vdup(&t, 3.0f), -ESTALE);
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv), "stale"));
	assert_true(getf(&u, 0, 0) == 2.0f);
	tp_core_ctx_clear_error(&aiv);

	/* task_begin resets locals (stale) and clears the error. */
	tp_core_ctx_task_begin(&aiv);
	assert_int_equal(tp_vdup(&u, 3.0f), -ESTALE);
	tp_core_ctx_task_begin(&aiv);
	assert_int_equal(tp_core_ctx_error(&aiv), 0);
	assert_int_equal(tp_core_ctx_local_free(&aiv, TP_MEM_UB), 192 * 1024);
}

static void test_tile_init_and_view(void **state)
{
	(void)state;
	float buf[6 * 10];
	for (int i = 0; i < 60; i++)
		buf[i] = (float)i;
	struct tp_tile t, v;
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, buf, sizeof(buf), TP_FP32,
				      6, 8, 10), 0);
	assert_int_equal(t.gen, 0);
	assert_int_equal(tp_tile_view(&v, &t, 2, 3, 4, 5), 0);
	assert_int_equal(v.rows, 4);
	assert_int_equal(v.cols, 5);
	assert_int_equal(v.stride, 10);
	assert_true(*(float *)tp_tile_at(&v, 0, 0) == 23.0f);
	assert_true(*(float *)tp_tile_at(&v, 3, 4) == 57.0f);
	/* A view of a view, in place. */
	assert_int_equal(tp_tile_view(&v, &v, 1, 1, 1, 1), 0);
	assert_true(*(float *)tp_tile_at(&v, 0, 0) == 34.0f);

	/* The last row may end before the stride: 6 rows x 8 of stride 10
	 * need 58 elements. */
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, buf, 58 * 4, TP_FP32, 6,
				      8, 10), 0);
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, buf, 58 * 4 - 1, TP_FP32,
				      6, 8, 10), -EFAULT);
	assert_non_null(strstr(tp_last_error(), "231-byte buffer"));
	assert_int_equal(tp_core_ctx_error(&aiv), -EFAULT); /* bound: sticky */
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, buf, sizeof(buf), TP_FP32,
				      6, 8, 7), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, buf, sizeof(buf), TP_FP32,
				      0, 8, 8), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, NULL, 64, TP_FP32, 1, 8,
				      8), -EFAULT);
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, (uint8_t *)buf + 2, 64,
				      TP_FP32, 1, 8, 8), -EFAULT);
	assert_non_null(strstr(tp_last_error(), "aligned"));
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, buf, sizeof(buf),
				      (enum tp_dtype)9, 1, 8, 8), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_tile_init(&t, (enum tp_mem)9, buf, sizeof(buf),
				      TP_FP32, 1, 8, 8), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
	/* A huge stride overflows no arithmetic. */
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, buf, sizeof(buf), TP_FP32,
				      UINT32_MAX, 8, UINT32_MAX), -EFAULT);
	tp_core_ctx_clear_error(&aiv);

	/* Views that leave the tile. */
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, buf, sizeof(buf), TP_FP32,
				      6, 8, 10), 0);
	assert_int_equal(tp_tile_view(&v, &t, 0, 4, 6, 5), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "tp_tile_view"));
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_tile_view(&v, &t, 6, 0, 1, 1), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_tile_view(&v, &t, 0, 0, 0, 1), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_tile_view(&v, &t, 5, 7, UINT32_MAX, 1), -EINVAL);
	tp_core_ctx_clear_error(&aiv);

	/* GM tiles need no core; local tiles do. */
	tp_core_ctx_bind(NULL);
	assert_int_equal(tp_tile_init(&t, TP_MEM_GM, buf, sizeof(buf), TP_FP32,
				      6, 8, 10), 0);
	assert_int_equal(tp_tile_init(&t, TP_MEM_UB, buf, sizeof(buf), TP_FP32,
				      6, 8, 10), -ENODEV);
	tp_core_ctx_bind(&aiv);
	/* A local tile must be inside the core's allocated memory. */
	assert_int_equal(tp_tile_init(&t, TP_MEM_UB, buf, sizeof(buf), TP_FP32,
				      6, 8, 10), -EFAULT);
	tp_core_ctx_clear_error(&aiv);
	void *p = tp_local_alloc(TP_MEM_UB, 256);
	assert_int_equal(tp_tile_init(&t, TP_MEM_UB, p, 256, TP_FP32, 8, 8, 8),
			 0);
	assert_int_equal(tp_tile_init(&t, TP_MEM_UB, p, 288, TP_FP32, 9, 8, 8),
			 -EFAULT);
	tp_core_ctx_clear_error(&aiv);
}

/* ---- data movement ---------------------------------------------------- */

static void test_copy_in_ub_strided(void **state)
{
	(void)state;
	struct tp_tile g = gm(TP_FP32, 8, 48, 48), gv;
	fill(&g, -4, 4);
	assert_int_equal(tp_tile_view(&gv, &g, 0, 4, 8, 40), 0);
	struct tp_tile u = ub(TP_FP32, 8, 40);
	begin_op();
	assert_int_equal(tp_copy_in(&u, &gv), 0);
	for (uint32_t r = 0; r < 8; r++)
		for (uint32_t c = 0; c < 40; c++)
			assert_true(getf(&u, r, c) == getf(&g, r, c + 4));
	/* src strided: 8 bursts; 1280 bytes = 40 requests each way. */
	CHECK(TP_OP_COPY_IN, TP_PIPE_MTE2, TP_FP32, NOVC, 8, 320,
	      { TP_MEM_GM, R, 1280, 40 }, { TP_MEM_UB, W, 1280, 40 });
	free(g.buf);
}

static void test_copy_in_ub_contig(void **state)
{
	(void)state;
	struct tp_tile g = gm(TP_FP16, 4, 70, 70);
	fill(&g, -1, 1);
	struct tp_tile u = ub(TP_FP16, 4, 70);
	begin_op();
	assert_int_equal(tp_copy_in(&u, &g), 0);
	assert_memory_equal(u.buf, g.buf, 4 * 70 * 2);
	/* 560 bytes: 1 burst, ceil(560 / 32) = 18 requests. */
	CHECK(TP_OP_COPY_IN, TP_PIPE_MTE2, TP_FP16, NOVC, 1, 280,
	      { TP_MEM_GM, R, 560, 18 }, { TP_MEM_UB, W, 560, 18 });
	free(g.buf);
}

static void test_copy_in_l1(void **state)
{
	(void)state;
	tp_core_ctx_bind(&aic);
	struct tp_tile g = gm(TP_BF16, 16, 16, 16);
	fill(&g, -1, 1);
	struct tp_tile l1 = local(TP_MEM_L1, TP_BF16, 16, 16);
	begin_op();
	assert_int_equal(tp_copy_in(&l1, &g), 0);
	assert_memory_equal(l1.buf, g.buf, 512);
	CHECK(TP_OP_COPY_IN, TP_PIPE_MTE2, TP_BF16, NOVC, 1, 256,
	      { TP_MEM_GM, R, 512, 16 }, { TP_MEM_L1, W, 512, 16 });
	/* int8 too. */
	struct tp_tile g8 = gm(TP_INT8, 3, 100, 100);
	fill(&g8, -100, 100);
	struct tp_tile l8 = local(TP_MEM_L1, TP_INT8, 3, 100);
	begin_op();
	assert_int_equal(tp_copy_in(&l8, &g8), 0);
	assert_memory_equal(l8.buf, g8.buf, 300);
	CHECK(TP_OP_COPY_IN, TP_PIPE_MTE2, TP_INT8, NOVC, 1, 300,
	      { TP_MEM_GM, R, 300, 10 }, { TP_MEM_L1, W, 300, 10 });
	free(g.buf);
	free(g8.buf);
}

static void test_copy_out(void **state)
{
	(void)state;
	struct tp_tile g = gm(TP_FP32, 8, 48, 48), gv;
	assert_int_equal(tp_tile_view(&gv, &g, 0, 8, 8, 40), 0);
	struct tp_tile u = ub(TP_FP32, 8, 40);
	fill(&u, -3, 3);
	begin_op();
	assert_int_equal(tp_copy_out(&gv, &u), 0);
	for (uint32_t r = 0; r < 8; r++)
		for (uint32_t c = 0; c < 48; c++) {
			float want = (c >= 8) ? getf(&u, r, c - 8) : 0.0f;
			assert_true(getf(&g, r, c) == want);
		}
	CHECK(TP_OP_COPY_OUT, TP_PIPE_MTE3, TP_FP32, NOVC, 8, 320,
	      { TP_MEM_UB, R, 1280, 40 }, { TP_MEM_GM, W, 1280, 40 });
	free(g.buf);
}

static void test_load_l0(void **state)
{
	(void)state;
	tp_core_ctx_bind(&aic);
	struct tp_tile l1 = local(TP_MEM_L1, TP_BF16, 16, 32);
	fill(&l1, -1, 1);
	struct tp_tile a = local(TP_MEM_L0A, TP_BF16, 16, 32);
	begin_op();
	assert_int_equal(tp_load_l0(&a, &l1, 0), 0);
	assert_memory_equal(a.buf, l1.buf, 1024);
	/* 1024 bytes = 2 fractals of 512. */
	CHECK(TP_OP_LOAD_L0, TP_PIPE_MTE1, TP_BF16, NOVC, 2, 512,
	      { TP_MEM_L1, R, 1024, 32 }, { TP_MEM_L0A, W, 1024, 32 });

	/* Transposed into L0B: [S=24, D=32] -> [32, 24]. */
	struct tp_tile k = local(TP_MEM_L1, TP_BF16, 24, 32);
	fill(&k, -1, 1);
	struct tp_tile b = local(TP_MEM_L0B, TP_BF16, 32, 24);
	begin_op();
	assert_int_equal(tp_load_l0(&b, &k, TP_LOAD_TRANSPOSE), 0);
	for (uint32_t r = 0; r < 24; r++)
		for (uint32_t c = 0; c < 32; c++)
			assert_true(getf(&b, c, r) == getf(&k, r, c));
	CHECK(TP_OP_LOAD_L0, TP_PIPE_MTE1, TP_BF16, NOVC, 3, 768,
	      { TP_MEM_L1, R, 1536, 48 }, { TP_MEM_L0B, W, 1536, 48 });

	/* int8 and fp32 transposes (1- and 4-byte elements). */
	struct tp_tile k8 = local(TP_MEM_L1, TP_INT8, 16, 48);
	fill(&k8, -100, 100);
	struct tp_tile b8 = local(TP_MEM_L0B, TP_INT8, 48, 16);
	begin_op();
	assert_int_equal(tp_load_l0(&b8, &k8, TP_LOAD_TRANSPOSE), 0);
	for (uint32_t r = 0; r < 16; r++)
		for (uint32_t c = 0; c < 48; c++)
			assert_true(getf(&b8, c, r) == getf(&k8, r, c));
	CHECK(TP_OP_LOAD_L0, TP_PIPE_MTE1, TP_INT8, NOVC, 2, 768,
	      { TP_MEM_L1, R, 768, 24 }, { TP_MEM_L0B, W, 768, 24 });
	struct tp_tile k32 = local(TP_MEM_L1, TP_FP32, 8, 8);
	fill(&k32, -1, 1);
	struct tp_tile a32 = local(TP_MEM_L0A, TP_FP32, 8, 8);
	begin_op();
	assert_int_equal(tp_load_l0(&a32, &k32, TP_LOAD_TRANSPOSE), 0);
	for (uint32_t r = 0; r < 8; r++)
		for (uint32_t c = 0; c < 8; c++)
			assert_true(getf(&a32, c, r) == getf(&k32, r, c));
	CHECK(TP_OP_LOAD_L0, TP_PIPE_MTE1, TP_FP32, NOVC, 1, 64,
	      { TP_MEM_L1, R, 256, 8 }, { TP_MEM_L0A, W, 256, 8 });

	/* Wrong transpose shape, unknown flag. */
	assert_int_equal(tp_load_l0(&b, &k, 0), -EINVAL);
	tp_core_ctx_clear_error(&aic);
	assert_int_equal(tp_load_l0(&b, &k, 0x2), -EINVAL);
	tp_core_ctx_clear_error(&aic);
}

/* ---- cube --------------------------------------------------------------- */

/* M x K x N matmul of dtype @in into @c (fp32, or int32 for int8), checked
 * bit-exactly against the same summation order. */
static void run_mmad(enum tp_dtype in, uint32_t M, uint32_t K, uint32_t N,
		     bool acc, uint64_t instr)
{
	tp_local_reset();
	enum tp_dtype out = in == TP_INT8 ? TP_INT32 : TP_FP32;
	struct tp_tile a = local(TP_MEM_L0A, in, M, K);
	struct tp_tile b = local(TP_MEM_L0B, in, K, N);
	struct tp_tile c = local(TP_MEM_L0C, out, M, N);
	float lo = in == TP_INT8 ? -128 : -1, hi = in == TP_INT8 ? 128 : 1;
	fill(&a, lo, hi);
	fill(&b, lo, hi);
	fill(&c, in == TP_INT8 ? -1000 : -1, in == TP_INT8 ? 1000 : 1);
	size_t cbytes = (size_t)M * N * 4;
	uint8_t *c0 = malloc(cbytes);
	memcpy(c0, c.buf, cbytes);
	begin_op();
	assert_int_equal(tp_mmad(&c, &a, &b, acc ? TP_MMAD_ACCUMULATE : 0), 0);
	for (uint32_t i = 0; i < M; i++)
		for (uint32_t j = 0; j < N; j++) {
			if (in == TP_INT8) {
				int32_t s = acc ? ((int32_t *)c0)[i * N + j] : 0;
				for (uint32_t k = 0; k < K; k++)
					s += (int32_t)getf(&a, i, k) *
					     (int32_t)getf(&b, k, j);
				assert_int_equal(*(int32_t *)tp_tile_at(&c, i, j),
						 s);
			} else {
				float s = acc ? ((float *)c0)[i * N + j] : 0.0f;
				for (uint32_t k = 0; k < K; k++)
					s += getf(&a, i, k) * getf(&b, k, j);
				if (getf(&c, i, j) != s)
					fail_msg("%s c[%u][%u] = %.9g, expected "
						 "%.9g", tp_dtype_name(in), i,
						 j, getf(&c, i, j), s);
			}
		}
	free(c0);
	uint64_t es = tp_dtype_size(in);
	uint64_t ab = M * K * es, bb = K * N * es, cb = M * N * 4;
	if (acc)
		CHECK(TP_OP_MMAD, TP_PIPE_CUBE, in, NOVC, instr,
		      (uint64_t)M * N * K, { TP_MEM_L0A, R, ab, (ab + 31) / 32 },
		      { TP_MEM_L0B, R, bb, (bb + 31) / 32 },
		      { TP_MEM_L0C, R, cb, (cb + 31) / 32 },
		      { TP_MEM_L0C, W, cb, (cb + 31) / 32 });
	else
		CHECK(TP_OP_MMAD, TP_PIPE_CUBE, in, NOVC, instr,
		      (uint64_t)M * N * K, { TP_MEM_L0A, R, ab, (ab + 31) / 32 },
		      { TP_MEM_L0B, R, bb, (bb + 31) / 32 },
		      { TP_MEM_L0C, W, cb, (cb + 31) / 32 });
}

static void test_mmad(void **state)
{
	(void)state;
	tp_core_ctx_bind(&aic);
	/* fractals: ceil(M/16) x ceil(N/16) x ceil(K/k0), k0 = 32 B / es. */
	run_mmad(TP_BF16, 16, 32, 24, false, 1 * 2 * 2);
	run_mmad(TP_BF16, 16, 32, 24, true, 1 * 2 * 2);
	run_mmad(TP_FP16, 8, 16, 16, false, 1 * 1 * 1);
	run_mmad(TP_FP16, 17, 40, 33, true, 2 * 3 * 3);
	run_mmad(TP_FP32, 16, 16, 16, false, 1 * 1 * 2);
	run_mmad(TP_FP32, 5, 9, 3, true, 1 * 1 * 2);
	run_mmad(TP_INT8, 16, 64, 32, false, 1 * 2 * 2);
	run_mmad(TP_INT8, 16, 64, 32, true, 1 * 2 * 2);
	/* The largest bf16 right operand L0B holds (128 x 256). */
	run_mmad(TP_BF16, 16, 128, 256, false, 1 * 16 * 8);
}

static void test_mmad_strided(void **state)
{
	(void)state;
	tp_core_ctx_bind(&aic);
	/* Views with strides on every operand. */
	struct tp_tile A = local(TP_MEM_L0A, TP_BF16, 8, 20);
	struct tp_tile B = local(TP_MEM_L0B, TP_BF16, 20, 12);
	struct tp_tile C = local(TP_MEM_L0C, TP_FP32, 8, 12);
	fill(&A, -1, 1);
	fill(&B, -1, 1);
	struct tp_tile a, b, c;
	assert_int_equal(tp_tile_view(&a, &A, 1, 2, 6, 16), 0);
	assert_int_equal(tp_tile_view(&b, &B, 2, 1, 16, 10), 0);
	assert_int_equal(tp_tile_view(&c, &C, 2, 2, 6, 10), 0);
	assert_int_equal(tp_vdup(&C, 7.0f), -EINVAL); /* L0C is not UB */
	tp_core_ctx_clear_error(&aic);
	memset(C.buf, 0, 8 * 12 * 4);
	assert_int_equal(tp_mmad(&c, &a, &b, 0), 0);
	for (uint32_t i = 0; i < 8; i++)
		for (uint32_t j = 0; j < 12; j++) {
			bool in = i >= 2 && j >= 2;
			float s = 0.0f;
			if (in)
				for (uint32_t k = 0; k < 16; k++)
					s += getf(&a, i - 2, k) *
					     getf(&b, k, j - 2);
			assert_true(getf(&C, i, j) == s);
		}
}

static void test_mmad_rejects(void **state)
{
	(void)state;
	tp_core_ctx_bind(&aic);
	struct tp_tile a = local(TP_MEM_L0A, TP_BF16, 16, 32);
	struct tp_tile b = local(TP_MEM_L0B, TP_BF16, 32, 16);
	struct tp_tile bh = local(TP_MEM_L0B, TP_FP16, 32, 16);
	struct tp_tile b2 = local(TP_MEM_L0B, TP_BF16, 16, 16);
	struct tp_tile c = local(TP_MEM_L0C, TP_FP32, 16, 16);
	struct tp_tile ci = local(TP_MEM_L0C, TP_INT32, 16, 16);
	struct tp_tile ca = local(TP_MEM_L0A, TP_FP32, 16, 16);
	memset(c.buf, 0x5a, 1024);
	const struct {
		const struct tp_tile *c, *a, *b;
		unsigned flags;
		const char *msg;
	} bad[] = {
		{ &c, &a, &bh, 0, "both bf16/fp16/fp32" },
		{ &ci, &a, &b, 0, "both bf16/fp16/fp32" },
		{ &c, &a, &b2, 0, "MxK" },
		{ &ca, &a, &b, 0, "expected a L0C tile" },
		{ &c, &b, &b, 0, "expected a L0A tile" },
		{ &c, &a, &b, 4, "unknown flags" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(tp_mmad(bad[i].c, bad[i].a, bad[i].b,
					 bad[i].flags), -EINVAL);
		if (!strstr(tp_core_ctx_error_msg(&aic), bad[i].msg))
			fail_msg("case %zu: message \"%s\" lacks \"%s\"", i,
				 tp_core_ctx_error_msg(&aic), bad[i].msg);
		assert_non_null(strstr(tp_core_ctx_error_msg(&aic), "tp_mmad"));
		tp_core_ctx_clear_error(&aic);
	}
	for (int i = 0; i < 1024; i++)
		assert_int_equal(((uint8_t *)c.buf)[i], 0x5a);
}

static void test_fixpipe(void **state)
{
	(void)state;
	tp_core_ctx_bind(&aic);
	struct tp_tile c = local(TP_MEM_L0C, TP_FP32, 16, 24);
	fill(&c, -70000, 70000);
	setf(&c, 0, 0, NAN);
	setf(&c, 0, 1, 65520.0f);

	/* fp32 -> fp32 into a strided GM view: one burst per row. */
	struct tp_tile g = gm(TP_FP32, 16, 32, 32), gv;
	assert_int_equal(tp_tile_view(&gv, &g, 0, 0, 16, 24), 0);
	begin_op();
	assert_int_equal(tp_fixpipe(&gv, &c), 0);
	for (uint32_t r = 0; r < 16; r++)
		assert_memory_equal(tp_tile_at(&gv, r, 0), tp_tile_at(&c, r, 0),
				    24 * 4);
	CHECK(TP_OP_FIXPIPE, TP_PIPE_FIXP, TP_FP32, NOVC, 16, 384,
	      { TP_MEM_L0C, R, 1536, 48 }, { TP_MEM_GM, W, 1536, 48 });

	/* fp32 -> bf16 and fp16, contiguous: one burst. */
	struct tp_tile gb = gm(TP_BF16, 16, 24, 24);
	begin_op();
	assert_int_equal(tp_fixpipe(&gb, &c), 0);
	CHECK(TP_OP_FIXPIPE, TP_PIPE_FIXP, TP_FP32, NOVC, 1, 384,
	      { TP_MEM_L0C, R, 1536, 48 }, { TP_MEM_GM, W, 768, 24 });
	struct tp_tile gh = gm(TP_FP16, 16, 24, 24);
	assert_int_equal(tp_fixpipe(&gh, &c), 0);
	for (uint32_t r = 0; r < 16; r++)
		for (uint32_t j = 0; j < 24; j++) {
			float v = getf(&c, r, j);
			assert_int_equal(*(uint16_t *)tp_tile_at(&gb, r, j),
					 tp_f32_to_bf16(v));
			assert_int_equal(*(uint16_t *)tp_tile_at(&gh, r, j),
					 tp_f32_to_f16(v));
		}
	assert_int_equal(*(uint16_t *)tp_tile_at(&gh, 0, 1), 0x7c00);
	assert_true(isnan(getf(&gb, 0, 0)) && isnan(getf(&gh, 0, 0)));

	/* int32 -> int32; int32 -> fp32 is refused. */
	struct tp_tile ci = local(TP_MEM_L0C, TP_INT32, 4, 8);
	fill(&ci, -1e6f, 1e6f);
	struct tp_tile gi = gm(TP_INT32, 4, 8, 8);
	begin_op();
	assert_int_equal(tp_fixpipe(&gi, &ci), 0);
	assert_memory_equal(gi.buf, ci.buf, 128);
	CHECK(TP_OP_FIXPIPE, TP_PIPE_FIXP, TP_INT32, NOVC, 1, 32,
	      { TP_MEM_L0C, R, 128, 4 }, { TP_MEM_GM, W, 128, 4 });
	struct tp_tile gf = gm(TP_FP32, 4, 8, 8);
	assert_int_equal(tp_fixpipe(&gf, &ci), -EINVAL);
	tp_core_ctx_clear_error(&aic);
	free(g.buf);
	free(gb.buf);
	free(gh.buf);
	free(gi.buf);
	free(gf.buf);

	/* Into a UB: a platform model may give its AIC one. */
	size_t caps[TP_MEM_COUNT] = { 0 };
	caps[TP_MEM_UB] = 4096;
	caps[TP_MEM_L0C] = 4096;
	struct tp_core_ctx mix;
	assert_int_equal(tp_core_ctx_init_caps(&mix, 2, TP_CORE_AIC, caps), 0);
	tp_core_ctx_set_usage_hook(&mix, capture_hook, &cap);
	tp_core_ctx_set_counting(&mix, true);
	tp_core_ctx_bind(&mix);
	struct tp_tile c2 = local(TP_MEM_L0C, TP_FP32, 8, 16);
	fill(&c2, -2, 2);
	struct tp_tile u = ub(TP_FP16, 8, 16);
	begin_op();
	assert_int_equal(tp_fixpipe(&u, &c2), 0);
	for (uint32_t r = 0; r < 8; r++)
		for (uint32_t j = 0; j < 16; j++)
			assert_int_equal(*(uint16_t *)tp_tile_at(&u, r, j),
					 tp_f32_to_f16(getf(&c2, r, j)));
	CHECK(TP_OP_FIXPIPE, TP_PIPE_FIXP, TP_FP32, NOVC, 1, 128,
	      { TP_MEM_L0C, R, 512, 16 }, { TP_MEM_UB, W, 256, 8 });
	tp_core_ctx_fini(&mix);
}

/* ---- vector ------------------------------------------------------------- */

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN };

static float ref_bin(int k, float a, float b)
{
	switch (k) {
	case OP_ADD: return a + b;
	case OP_SUB: return a - b;
	case OP_MUL: return a * b;
	case OP_DIV: return a / b;
	case OP_MAX: return a > b ? a : b;
	default: return a < b ? a : b;
	}
}

static int32_t ref_ibin(int k, int32_t a, int32_t b)
{
	switch (k) {
	case OP_ADD: return (int32_t)((uint32_t)a + (uint32_t)b);
	case OP_SUB: return (int32_t)((uint32_t)a - (uint32_t)b);
	case OP_MUL: return (int32_t)((uint32_t)a * (uint32_t)b);
	case OP_MAX: return a > b ? a : b;
	default: return a < b ? a : b;
	}
}

typedef int (*bin_fn)(const struct tp_tile *, const struct tp_tile *,
		      const struct tp_tile *);

static uint8_t vclass_of(enum tp_dtype dt)
{
	return dt == TP_FP32    ? TP_VCLASS_FP32
	       : dt == TP_INT32 ? TP_VCLASS_INT32
				: TP_VCLASS_FP16_128LANE;
}

static void test_vec_binary(void **state)
{
	(void)state;
	static const bin_fn fn[] = { tp_vadd, tp_vsub, tp_vmul,
				     tp_vdiv, tp_vmax, tp_vmin };
	static const int ids[] = { TP_OP_VADD, TP_OP_VSUB, TP_OP_VMUL,
				   TP_OP_VDIV, TP_OP_VMAX, TP_OP_VMIN };
	static const enum tp_dtype dts[] = { TP_FP32, TP_FP16, TP_BF16,
					     TP_INT32 };
	for (int di = 0; di < 4; di++) {
		enum tp_dtype dt = dts[di];
		uint64_t es = tp_dtype_size(dt), bytes = 16 * 40 * es;
		for (int k = 0; k < 6; k++) {
			tp_local_reset();
			struct tp_tile a = ub(dt, 16, 40), b = ub(dt, 16, 40);
			struct tp_tile d = ub(dt, 16, 40);
			fill(&a, -50, 50);
			fill(&b, -50, 50);
			setf(&b, 3, 3, dt == TP_INT32 ? 7 : 0.5f); /* no /0 */
			if (dt == TP_INT32 && k == OP_DIV) {
				assert_int_equal(fn[k](&d, &a, &b), -EINVAL);
				assert_non_null(strstr(
					tp_core_ctx_error_msg(&aiv), "int32"));
				tp_core_ctx_clear_error(&aiv);
				continue;
			}
			begin_op();
			assert_int_equal(fn[k](&d, &a, &b), 0);
			for (uint32_t r = 0; r < 16; r++)
				for (uint32_t c = 0; c < 40; c++) {
					float x = getf(&a, r, c);
					float y = getf(&b, r, c);
					float want =
						dt == TP_INT32
							? (float)ref_ibin(
								  k, (int32_t)x,
								  (int32_t)y)
							: round_to(dt,
								   ref_bin(k, x,
									   y));
					float got = getf(&d, r, c);
					if (!(got == want ||
					      (isnan(got) && isnan(want))))
						fail_msg("%s %s [%u][%u]: %g "
							 "op %g = %g, "
							 "expected %g",
							 tp_op_name(ids[k]),
							 tp_dtype_name(dt), r,
							 c, x, y, got, want);
				}
			/* 640 elements in one run: ceil(640 × es / 256). */
			CHECK(ids[k], TP_PIPE_VEC, dt, vclass_of(dt),
			      (640 * es + 255) / 256, 640,
			      { TP_MEM_UB, R, 2 * bytes, 2 * bytes / 32 },
			      { TP_MEM_UB, W, bytes, bytes / 32 });
			/* In place: dst == a. */
			assert_int_equal(fn[k](&a, &a, &b), 0);
			assert_memory_equal(a.buf, d.buf, bytes);
		}
	}
}

static void test_vec_strided_runs(void **state)
{
	(void)state;
	/* Views of 16 x 48 tiles: rows are separate runs. */
	struct tp_tile A = ub(TP_FP32, 16, 48), B = ub(TP_FP32, 16, 48);
	struct tp_tile D = ub(TP_FP32, 16, 48), a, b, d;
	fill(&A, -1, 1);
	fill(&B, -1, 1);
	memset(D.buf, 0, 16 * 48 * 4);
	assert_int_equal(tp_tile_view(&a, &A, 0, 8, 16, 40), 0);
	assert_int_equal(tp_tile_view(&b, &B, 0, 0, 16, 40), 0);
	assert_int_equal(tp_tile_view(&d, &D, 0, 4, 16, 40), 0);
	begin_op();
	assert_int_equal(tp_vadd(&d, &a, &b), 0);
	for (uint32_t r = 0; r < 16; r++)
		for (uint32_t c = 0; c < 48; c++) {
			float want = (c >= 4 && c < 44)
					     ? getf(&a, r, c - 4) +
						       getf(&b, r, c - 4)
					     : 0.0f;
			assert_true(getf(&D, r, c) == want);
		}
	/* 16 rows × ceil(160 / 256). */
	CHECK(TP_OP_VADD, TP_PIPE_VEC, TP_FP32, TP_VCLASS_FP32, 16, 640,
	      { TP_MEM_UB, R, 5120, 160 }, { TP_MEM_UB, W, 2560, 80 });

	/* A 16-bit strided view wider than one chunk of the widening loop. */
	struct tp_tile H = ub(TP_BF16, 3, 700), h;
	fill(&H, -1, 1);
	assert_int_equal(tp_tile_view(&h, &H, 0, 50, 3, 600), 0);
	struct tp_tile hc = ub(TP_BF16, 3, 600);
	assert_int_equal(tp_vcopy(&hc, &h), 0);
	begin_op();
	assert_int_equal(tp_vmul(&h, &h, &hc), 0);
	for (uint32_t r = 0; r < 3; r++)
		for (uint32_t c = 0; c < 600; c++) {
			float x = getf(&hc, r, c);
			assert_true(getf(&h, r, c) == round_to(TP_BF16, x * x));
		}
	CHECK(TP_OP_VMUL, TP_PIPE_VEC, TP_BF16, TP_VCLASS_FP16_128LANE,
	      3 * 5, 1800, { TP_MEM_UB, R, 7200, 226 },
	      { TP_MEM_UB, W, 3600, 113 });
}

typedef int (*sc_fn)(const struct tp_tile *, const struct tp_tile *, float);

static void test_vec_scalar(void **state)
{
	(void)state;
	static const sc_fn fn[] = { tp_vadds, tp_vmuls, tp_vmaxs, tp_vmins };
	static const int ids[] = { TP_OP_VADDS, TP_OP_VMULS, TP_OP_VMAXS,
				   TP_OP_VMINS };
	static const int kinds[] = { OP_ADD, OP_MUL, OP_MAX, OP_MIN };
	static const enum tp_dtype dts[] = { TP_FP32, TP_FP16, TP_BF16,
					     TP_INT32 };
	for (int di = 0; di < 4; di++) {
		enum tp_dtype dt = dts[di];
		uint64_t es = tp_dtype_size(dt), bytes = 16 * 40 * es;
		for (int k = 0; k < 4; k++) {
			tp_local_reset();
			struct tp_tile s = ub(dt, 16, 40), d = ub(dt, 16, 40);
			fill(&s, -50, 50);
			float sc = dt == TP_INT32 ? -3.0f : 0.3f;
			begin_op();
			assert_int_equal(fn[k](&d, &s, sc), 0);
			for (uint32_t r = 0; r < 16; r++)
				for (uint32_t c = 0; c < 40; c++) {
					float x = getf(&s, r, c);
					float want =
						dt == TP_INT32
							? (float)ref_ibin(
								  kinds[k],
								  (int32_t)x,
								  (int32_t)sc)
							: round_to(dt,
								   ref_bin(kinds[k],
									   x, sc));
					assert_true(getf(&d, r, c) == want);
				}
			CHECK(ids[k], TP_PIPE_VEC, dt, vclass_of(dt),
			      (640 * es + 255) / 256, 640,
			      { TP_MEM_UB, R, bytes, bytes / 32 },
			      { TP_MEM_UB, W, bytes, bytes / 32 });
		}
	}
	/* An int32 tile takes only integral scalars in range. */
	struct tp_tile i = ub(TP_INT32, 2, 8);
	memset(i.buf, 0, 64);
	assert_int_equal(tp_vadds(&i, &i, 0.5f), -EINVAL);
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv), "not a int32"));
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_vmuls(&i, &i, 3e9f), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_vmuls(&i, &i, NAN), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
	for (int j = 0; j < 16; j++)
		assert_int_equal(((int32_t *)i.buf)[j], 0);
}

typedef int (*un_fn)(const struct tp_tile *, const struct tp_tile *);

static void test_vec_unary(void **state)
{
	(void)state;
	static const un_fn fn[] = { tp_vexp, tp_vsqrt, tp_vabs, tp_vrelu };
	static const int ids[] = { TP_OP_VEXP, TP_OP_VSQRT, TP_OP_VABS,
				   TP_OP_VRELU };
	static const enum tp_dtype dts[] = { TP_FP32, TP_FP16, TP_BF16,
					     TP_INT32 };
	for (int di = 0; di < 4; di++) {
		enum tp_dtype dt = dts[di];
		uint64_t es = tp_dtype_size(dt), bytes = 8 * 50 * es;
		for (int k = 0; k < 4; k++) {
			tp_local_reset();
			struct tp_tile s = ub(dt, 8, 50), d = ub(dt, 8, 50);
			fill(&s, k == 1 ? 0 : -8, 8);
			if (dt == TP_INT32 && k < 2) {
				assert_int_equal(fn[k](&d, &s), -EINVAL);
				tp_core_ctx_clear_error(&aiv);
				continue;
			}
			begin_op();
			assert_int_equal(fn[k](&d, &s), 0);
			for (uint32_t r = 0; r < 8; r++)
				for (uint32_t c = 0; c < 50; c++) {
					float x = getf(&s, r, c), want;
					switch (k) {
					case 0: want = expf(x); break;
					case 1: want = sqrtf(x); break;
					case 2: want = fabsf(x); break;
					default: want = x > 0 ? x : 0; break;
					}
					want = round_to(dt, want);
					assert_true(getf(&d, r, c) == want);
				}
			CHECK(ids[k], TP_PIPE_VEC, dt, vclass_of(dt),
			      (400 * es + 255) / 256, 400,
			      { TP_MEM_UB, R, bytes, (bytes + 31) / 32 },
			      { TP_MEM_UB, W, bytes, (bytes + 31) / 32 });
		}
	}
	/* int32 abs wraps INT32_MIN instead of overflowing. */
	struct tp_tile i = ub(TP_INT32, 1, 2);
	((int32_t *)i.buf)[0] = INT32_MIN;
	((int32_t *)i.buf)[1] = -5;
	assert_int_equal(tp_vabs(&i, &i), 0);
	assert_int_equal(((int32_t *)i.buf)[0], INT32_MIN);
	assert_int_equal(((int32_t *)i.buf)[1], 5);
}

static void test_vdup_vcopy(void **state)
{
	(void)state;
	static const enum tp_dtype dts[] = { TP_FP32, TP_FP16, TP_BF16,
					     TP_INT8, TP_INT32 };
	for (int di = 0; di < 5; di++) {
		enum tp_dtype dt = dts[di];
		uint64_t es = tp_dtype_size(dt), bytes = 16 * 40 * es;
		struct tp_tile d = ub(dt, 16, 40), c = ub(dt, 16, 40);
		float v = dt >= TP_INT8 ? -7.0f : -INFINITY;
		begin_op();
		assert_int_equal(tp_vdup(&d, v), 0);
		for (uint32_t r = 0; r < 16; r++)
			for (uint32_t k = 0; k < 40; k++)
				assert_true(getf(&d, r, k) == v);
		CHECK(TP_OP_VDUP, TP_PIPE_VEC, dt, TP_VCLASS_MISC,
		      (640 * es + 255) / 256, 640,
		      { TP_MEM_UB, W, bytes, bytes / 32 });
		begin_op();
		assert_int_equal(tp_vcopy(&c, &d), 0);
		assert_memory_equal(c.buf, d.buf, bytes);
		CHECK(TP_OP_VCOPY, TP_PIPE_VEC, dt, TP_VCLASS_MISC,
		      (640 * es + 255) / 256, 640,
		      { TP_MEM_UB, R, bytes, bytes / 32 },
		      { TP_MEM_UB, W, bytes, bytes / 32 });
	}
	/* Masking columns of a view with -inf leaves the rest alone. */
	struct tp_tile s = ub(TP_FP32, 4, 16), m;
	fill(&s, 0, 1);
	assert_int_equal(tp_tile_view(&m, &s, 0, 11, 4, 5), 0);
	begin_op();
	assert_int_equal(tp_vdup(&m, -INFINITY), 0);
	for (uint32_t r = 0; r < 4; r++)
		for (uint32_t k = 0; k < 16; k++)
			assert_true(k >= 11 ? isinf(getf(&s, r, k))
					    : getf(&s, r, k) >= 0);
	CHECK(TP_OP_VDUP, TP_PIPE_VEC, TP_FP32, TP_VCLASS_MISC, 4, 20,
	      { TP_MEM_UB, W, 80, 3 });
	/* An int8 dup needs an int8 value. */
	struct tp_tile i8 = ub(TP_INT8, 1, 4);
	assert_int_equal(tp_vdup(&i8, 128.0f), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
}

static void test_vcast_usage(void **state)
{
	(void)state;
	static const struct {
		enum tp_dtype s, d;
		uint8_t vclass;
	} pairs[] = {
		{ TP_FP32, TP_FP16, TP_VCLASS_FP16_64LANE },
		{ TP_FP32, TP_BF16, TP_VCLASS_FP16_64LANE },
		{ TP_FP16, TP_FP32, TP_VCLASS_FP16_64LANE },
		{ TP_BF16, TP_FP32, TP_VCLASS_FP16_64LANE },
		{ TP_FP16, TP_BF16, TP_VCLASS_FP16_128LANE },
		{ TP_BF16, TP_FP16, TP_VCLASS_FP16_128LANE },
		{ TP_INT32, TP_FP32, TP_VCLASS_MISC },
		{ TP_FP32, TP_INT32, TP_VCLASS_MISC },
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		tp_local_reset();
		uint64_t ss = tp_dtype_size(pairs[i].s);
		uint64_t ds = tp_dtype_size(pairs[i].d);
		uint64_t w = ss > ds ? ss : ds;
		struct tp_tile s = ub(pairs[i].s, 16, 40);
		struct tp_tile d = ub(pairs[i].d, 16, 40);
		fill(&s, -1000, 1000);
		begin_op();
		assert_int_equal(tp_vcast(&d, &s), 0);
		for (uint32_t r = 0; r < 16; r++)
			for (uint32_t c = 0; c < 40; c++) {
				float x = getf(&s, r, c);
				float want = pairs[i].d == TP_INT32
						     ? rintf(x)
						     : round_to(pairs[i].d, x);
				assert_true(getf(&d, r, c) == want);
			}
		CHECK(TP_OP_VCAST, TP_PIPE_VEC, pairs[i].s, pairs[i].vclass,
		      (640 * w + 255) / 256, 640,
		      { TP_MEM_UB, R, 640 * ss, 640 * ss / 32 },
		      { TP_MEM_UB, W, 640 * ds, 640 * ds / 32 });
	}
}

static void test_row_reduce(void **state)
{
	(void)state;
	static const enum tp_dtype dts[] = { TP_FP32, TP_FP16, TP_BF16 };
	for (int di = 0; di < 3; di++) {
		enum tp_dtype dt = dts[di];
		uint64_t es = tp_dtype_size(dt);
		tp_local_reset();
		/* A strided source: 16 x 40 of a 16 x 64 tile. */
		struct tp_tile S = ub(dt, 16, 64), s;
		fill(&S, -5, 5);
		assert_int_equal(tp_tile_view(&s, &S, 0, 10, 16, 40), 0);
		setf(&s, 2, 39, -INFINITY);
		setf(&s, 3, 0, 100.0f);
		struct tp_tile mx = ub(dt, 16, 1), sm = ub(dt, 16, 1);
		begin_op();
		assert_int_equal(tp_vrowmax(&mx, &s), 0);
		CHECK(TP_OP_VROWMAX, TP_PIPE_VEC, dt, vclass_of(dt),
		      16 * ((40 * es + 255) / 256), 640,
		      { TP_MEM_UB, R, 640 * es, 640 * es / 32 },
		      { TP_MEM_UB, W, 16 * es, (16 * es + 31) / 32 });
		begin_op();
		assert_int_equal(tp_vrowsum(&sm, &s), 0);
		CHECK(TP_OP_VROWSUM, TP_PIPE_VEC, dt, vclass_of(dt),
		      16 * ((40 * es + 255) / 256), 640,
		      { TP_MEM_UB, R, 640 * es, 640 * es / 32 },
		      { TP_MEM_UB, W, 16 * es, (16 * es + 31) / 32 });
		for (uint32_t r = 0; r < 16; r++) {
			float m = getf(&s, r, 0), sum = getf(&s, r, 0);
			for (uint32_t c = 1; c < 40; c++) {
				float v = getf(&s, r, c);
				m = v > m ? v : m;
				sum += v;
			}
			assert_true(getf(&mx, r, 0) == round_to(dt, m));
			assert_true(getf(&sm, r, 0) == round_to(dt, sum));
		}
		assert_true(getf(&mx, 3, 0) == 100.0f);
	}
	/* 128 fp32 columns: 2 repeats per row. */
	struct tp_tile w = ub(TP_FP32, 16, 128), o = ub(TP_FP32, 16, 1);
	fill(&w, 0, 1);
	begin_op();
	assert_int_equal(tp_vrowsum(&o, &w), 0);
	CHECK(TP_OP_VROWSUM, TP_PIPE_VEC, TP_FP32, TP_VCLASS_FP32, 32, 2048,
	      { TP_MEM_UB, R, 8192, 256 }, { TP_MEM_UB, W, 64, 2 });
	/* dst must be rows x 1 of the same dtype; int32 is refused. */
	struct tp_tile o2 = ub(TP_FP32, 16, 2), oi = ub(TP_INT32, 16, 1);
	struct tp_tile wi = ub(TP_INT32, 16, 128);
	assert_int_equal(tp_vrowmax(&o2, &w), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_vrowmax(&oi, &wi), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
}

typedef int (*row_fn)(const struct tp_tile *, const struct tp_tile *,
		      const struct tp_tile *);

static void test_row_bcast(void **state)
{
	(void)state;
	static const row_fn fn[] = { tp_vrowadd, tp_vrowsub, tp_vrowmul,
				     tp_vrowdiv };
	static const int ids[] = { TP_OP_VROWADD, TP_OP_VROWSUB,
				   TP_OP_VROWMUL, TP_OP_VROWDIV };
	static const int kinds[] = { OP_ADD, OP_SUB, OP_MUL, OP_DIV };
	static const enum tp_dtype dts[] = { TP_FP32, TP_FP16, TP_BF16,
					     TP_INT32 };
	for (int di = 0; di < 4; di++) {
		enum tp_dtype dt = dts[di];
		uint64_t es = tp_dtype_size(dt), bytes = 640 * es;
		for (int k = 0; k < 4; k++) {
			tp_local_reset();
			struct tp_tile s = ub(dt, 16, 40), d = ub(dt, 16, 40);
			struct tp_tile v = ub(dt, 16, 1);
			fill(&s, -9, 9);
			fill(&v, 1, 9);
			if (dt == TP_INT32 && k == 3) {
				assert_int_equal(fn[k](&d, &s, &v), -EINVAL);
				tp_core_ctx_clear_error(&aiv);
				continue;
			}
			begin_op();
			assert_int_equal(fn[k](&d, &s, &v), 0);
			for (uint32_t r = 0; r < 16; r++)
				for (uint32_t c = 0; c < 40; c++) {
					float x = getf(&s, r, c);
					float y = getf(&v, r, 0);
					float want =
						dt == TP_INT32
							? (float)ref_ibin(
								  kinds[k],
								  (int32_t)x,
								  (int32_t)y)
							: round_to(dt,
								   ref_bin(kinds[k],
									   x, y));
					assert_true(getf(&d, r, c) == want);
				}
			CHECK(ids[k], TP_PIPE_VEC, dt, vclass_of(dt),
			      16 * ((40 * es + 255) / 256), 640,
			      { TP_MEM_UB, R, bytes + 16 * es,
				bytes / 32 + (16 * es + 31) / 32 },
			      { TP_MEM_UB, W, bytes, bytes / 32 });
		}
	}
	/* v as a column of dst itself (read before its row is written). */
	struct tp_tile t = ub(TP_FP32, 4, 8), col;
	fill(&t, 1, 2);
	struct tp_tile ref = ub(TP_FP32, 4, 8);
	assert_int_equal(tp_vcopy(&ref, &t), 0);
	assert_int_equal(tp_tile_view(&col, &t, 0, 0, 4, 1), 0);
	assert_int_equal(tp_vrowdiv(&t, &t, &col), 0);
	for (uint32_t r = 0; r < 4; r++)
		for (uint32_t c = 0; c < 8; c++)
			assert_true(getf(&t, r, c) ==
				    getf(&ref, r, c) / getf(&ref, r, 0));
	/* v must be rows x 1. */
	struct tp_tile v2 = ub(TP_FP32, 4, 2);
	assert_int_equal(tp_vrowmul(&t, &t, &v2), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
}

/* ---- scalar --------------------------------------------------------------- */

static void spin_ns(uint64_t ns)
{
	uint64_t t0 = tp_now_ns();
	while (tp_now_ns() - t0 < ns)
		;
}

static void test_scalar_section(void **state)
{
	(void)state;
	begin_op();
	uint64_t t0 = tp_now_ns();
	assert_int_equal(tp_scalar_begin(NULL), 0);
	spin_ns(2000000);
	assert_int_equal(tp_scalar_end(), 0);
	uint64_t wall = tp_core_cycles_from_ns(tp_now_ns() - t0);
	check_delta(TP_OP_SCALAR_SECTION, TP_PIPE_SCALAR, TP_DTYPE_NONE, NOVC,
		    1, 0, 0, NULL);
	const struct tp_core_usage *u = tp_core_ctx_usage(&aiv);
	assert_true(u->cycles[TP_PIPE_SCALAR] >= 3600000); /* >= 2 ms */
	assert_true(u->cycles[TP_PIPE_SCALAR] <= wall);

	/* Ops inside a section are their own pipes' time, not SCALAR's. */
	struct tp_tile big = ub(TP_FP32, 128, 256);
	fill(&big, 0, 1);
	tp_core_ctx_usage_reset(&aiv);
	cap.n = 0;
	t0 = tp_now_ns();
	assert_int_equal(tp_scalar_begin(NULL), 0);
	for (int i = 0; i < 20; i++)
		assert_int_equal(tp_vexp(&big, &big), 0);
	assert_int_equal(tp_scalar_end(), 0);
	wall = tp_core_cycles_from_ns(tp_now_ns() - t0);
	assert_int_equal(cap.n, 21);
	assert_int_equal(u->ops[TP_PIPE_SCALAR], 1);
	assert_int_equal(u->ops[TP_PIPE_VEC], 20);
	/* Counted once: SCALAR + VEC fit in the section's wall time (each of
	 * the 21 deltas may round up by one cycle); counting the ops twice
	 * would need about twice the wall time. */
	assert_true(u->cycles[TP_PIPE_SCALAR] + u->cycles[TP_PIPE_VEC] <=
		    wall + 21);

	/* No nesting; no end without begin. */
	assert_int_equal(tp_scalar_end(), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_scalar_begin(NULL), 0);
	assert_int_equal(tp_scalar_begin(NULL), -EINVAL);
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv), "nest"));
	tp_core_ctx_clear_error(&aiv);
	assert_int_equal(tp_scalar_end(), 0);

	/* A section left open at task end is closed, counted, an error. */
	tp_core_ctx_task_begin(&aiv);
	tp_core_ctx_usage_reset(&aiv);
	assert_int_equal(tp_scalar_begin(NULL), 0);
	assert_int_equal(tp_core_ctx_task_end(&aiv), -EINVAL);
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv), "still open"));
	assert_int_equal(u->ops[TP_PIPE_SCALAR], 1);
	tp_core_ctx_task_begin(&aiv);
	assert_int_equal(tp_core_ctx_task_end(&aiv), 0);
}

static void test_get_set_value(void **state)
{
	(void)state;
	struct tp_tile t = ub(TP_BF16, 4, 8);
	memset(t.buf, 0, 64);
	begin_op();
	assert_int_equal(tp_set_value(&t, 2, 5, 1.00390625f), 0); /* tie */
	assert_int_equal(*(uint16_t *)tp_tile_at(&t, 2, 5), 0x3f80);
	CHECK(TP_OP_SET_VALUE, TP_PIPE_SCALAR, TP_BF16, NOVC, 1, 1,
	      { TP_MEM_UB, W, 2, 1 });
	float v = 0;
	setf(&t, 3, 7, -2.5f);
	begin_op();
	assert_int_equal(tp_get_value(&t, 3, 7, &v), 0);
	assert_true(v == -2.5f);
	CHECK(TP_OP_GET_VALUE, TP_PIPE_SCALAR, TP_BF16, NOVC, 1, 1,
	      { TP_MEM_UB, R, 2, 1 });
	assert_int_equal(tp_get_value(&t, 4, 0, &v), -EINVAL);
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv), "(4, 0)"));
	tp_core_ctx_clear_error(&aiv);
	struct tp_tile i = ub(TP_INT32, 1, 2);
	assert_int_equal(tp_set_value(&i, 0, 1, 41.0f), 0);
	assert_int_equal(tp_get_value(&i, 0, 1, &v), 0);
	assert_true(v == 41.0f);
	assert_int_equal(tp_set_value(&i, 0, 1, 0.5f), -EINVAL);
	tp_core_ctx_clear_error(&aiv);
	/* L1 on an AIC works too; GM does not. */
	tp_core_ctx_bind(&aic);
	struct tp_tile l1 = local(TP_MEM_L1, TP_INT8, 2, 2);
	begin_op();
	assert_int_equal(tp_set_value(&l1, 1, 1, -7.0f), 0);
	CHECK(TP_OP_SET_VALUE, TP_PIPE_SCALAR, TP_INT8, NOVC, 1, 1,
	      { TP_MEM_L1, W, 1, 1 });
	struct tp_tile g = gm(TP_FP32, 1, 1, 1);
	assert_int_equal(tp_get_value(&g, 0, 0, &v), -EINVAL);
	tp_core_ctx_clear_error(&aic);
	free(g.buf);
}

/* ---- the PMU gate, the hook, the sticky error ------------------------- */

static void test_counting_gate(void **state)
{
	(void)state;
	struct tp_tile a = ub(TP_FP32, 8, 8);
	fill(&a, 0, 1);
	tp_core_ctx_set_counting(&aiv, false);
	assert_false(tp_core_ctx_counting(&aiv));
	begin_op();
	assert_int_equal(tp_vexp(&a, &a), 0);
	assert_int_equal(cap.n, 0); /* hook gated off ... */
	const struct tp_core_usage *u = tp_core_ctx_usage(&aiv);
	assert_int_equal(u->ops[TP_PIPE_VEC], 1); /* ... record kept */
	assert_int_equal(u->bytes[TP_PIPE_VEC][TP_MEM_UB][TP_DIR_READ], 256);

	tp_core_ctx_set_counting(&aiv, true);
	assert_int_equal(tp_vexp(&a, &a), 0);
	assert_int_equal(tp_vadds(&a, &a, 1.0f), 0);
	assert_int_equal(cap.n, 2);
	assert_int_equal(cap.d[0].op, TP_OP_VEXP);
	assert_int_equal(cap.d[1].op, TP_OP_VADDS);

	/* A failed op reports nothing. */
	struct tp_tile b = ub(TP_FP32, 8, 4);
	assert_int_equal(tp_vadd(&a, &a, &b), -EINVAL);
	assert_int_equal(cap.n, 2);
	assert_int_equal(u->ops[TP_PIPE_VEC], 3);
	tp_core_ctx_clear_error(&aiv);

	/* No hook: ops still run and count in the record. */
	tp_core_ctx_set_usage_hook(&aiv, NULL, NULL);
	assert_int_equal(tp_vexp(&a, &a), 0);
	assert_int_equal(cap.n, 2);
	assert_int_equal(u->ops[TP_PIPE_VEC], 4);

	/* The record sums deltas. */
	tp_core_ctx_set_usage_hook(&aiv, capture_hook, &cap);
	begin_op();
	for (int i = 0; i < 5; i++)
		assert_int_equal(tp_vmuls(&a, &a, 0.5f), 0);
	assert_int_equal(cap.n, 5);
	uint64_t cyc = 0;
	for (int i = 0; i < 5; i++)
		cyc += cap.d[i].cycles;
	assert_int_equal(u->cycles[TP_PIPE_VEC], cyc);
	assert_int_equal(u->instr[TP_PIPE_VEC], 5 * 1);
	assert_int_equal(tp_usage_bytes(u, TP_MEM_UB, TP_DIR_WRITE), 5 * 256);
	assert_int_equal(tp_usage_reqs(u, TP_MEM_UB, TP_DIR_READ), 5 * 8);
}

static void test_sticky_error(void **state)
{
	(void)state;
	struct tp_tile a = ub(TP_FP32, 16, 16), b = ub(TP_FP32, 16, 8);
	struct tp_tile d = ub(TP_FP32, 16, 16);
	fill(&a, 0, 1);
	memset(d.buf, 0x77, 1024);
	assert_int_equal(tp_vadd(&d, &a, &b), -EINVAL);
	const char *msg = tp_core_ctx_error_msg(&aiv);
	/* Names the op, the core and every shape. */
	assert_non_null(strstr(msg, "tp_vadd"));
	assert_non_null(strstr(msg, "core 9"));
	assert_non_null(strstr(msg, "dst UB fp32[16x16 stride 16]"));
	assert_non_null(strstr(msg, "b UB fp32[16x8 stride 8]"));
	assert_string_equal(tp_last_error(), msg);
	/* Later ops of the task are skipped, without writing. */
	assert_int_equal(tp_vadd(&d, &a, &a), -ECANCELED);
	assert_int_equal(tp_vdup(&d, 1.0f), -ECANCELED);
	assert_int_equal(tp_scalar_begin(NULL), -ECANCELED);
	assert_null(tp_local_alloc(TP_MEM_UB, 32));
	for (int i = 0; i < 1024; i++)
		assert_int_equal(((uint8_t *)d.buf)[i], 0x77);
	/* The first error stays. */
	assert_int_equal(tp_core_ctx_error(&aiv), -EINVAL);
	assert_non_null(strstr(tp_core_ctx_error_msg(&aiv), "tp_vadd"));
	assert_int_equal(tp_core_ctx_task_end(&aiv), -EINVAL);
	tp_core_ctx_task_begin(&aiv);
	assert_int_equal(tp_core_ctx_error(&aiv), 0);
	assert_string_equal(tp_core_ctx_error_msg(&aiv), "");
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(tp_dtype_name(TP_BF16), "bf16");
	assert_string_equal(tp_dtype_name((enum tp_dtype)99), "?");
	assert_int_equal(tp_dtype_size(TP_INT8), 1);
	assert_int_equal(tp_dtype_size((enum tp_dtype)99), 0);
	assert_string_equal(tp_mem_name(TP_MEM_L0C), "L0C");
	assert_string_equal(tp_pipe_name(TP_PIPE_FIXP), "FIXP");
	assert_string_equal(tp_vclass_name(TP_VCLASS_FP16_64LANE),
			    "fp16_64lane");
	for (int i = 0; i < TP_OP_COUNT; i++)
		assert_non_null(strstr(tp_op_name(i), "tp_"));
	assert_string_equal(tp_op_name(TP_OP_COUNT), "?");
	assert_int_equal(tp_core_cycles_from_ns(1000), 1800);
	assert_int_equal(tp_core_cycles_from_ns(1), 2);
	assert_int_equal(tp_core_cycles_from_ns(0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_ctx_memories),
		T(test_ctxs_arena_kept_zeroed),
		T(test_bind_is_per_thread),
		T(test_local_alloc),
		T(test_stale_tile),
		T(test_tile_init_and_view),
		T(test_copy_in_ub_strided),
		T(test_copy_in_ub_contig),
		T(test_copy_in_l1),
		T(test_copy_out),
		T(test_load_l0),
		T(test_mmad),
		T(test_mmad_strided),
		T(test_mmad_rejects),
		T(test_fixpipe),
		T(test_vec_binary),
		T(test_vec_strided_runs),
		T(test_vec_scalar),
		T(test_vec_unary),
		T(test_vdup_vcopy),
		T(test_vcast_usage),
		T(test_row_reduce),
		T(test_row_bcast),
		T(test_scalar_section),
		T(test_get_set_value),
		T(test_counting_gate),
		T(test_sticky_error),
		T(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
