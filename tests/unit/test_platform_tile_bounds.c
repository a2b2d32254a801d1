/* SPDX-License-Identifier: MIT */
/* Bound violations of the tile API: every op refuses tiles that leave their
 * buffer, local tiles outside the bound core's memory, wrong memories,
 * shapes and dtypes, over-capacity allocations — with a negative errno, a
 * message naming the op and the shapes, a sticky core error, and no byte
 * written anywhere: GM buffers sit between canary bytes and each core's
 * whole local memory is compared before and after. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/tile/core_ctx.h"
#include "platform/tile/usage.h"
#include "taskprof/kernel.h"

#define CANARY 0xa5
#define GUARD 64

static struct tp_core_ctx aiv, aiv2, aic;

/* A GM buffer of @bytes between two GUARD-byte canary zones; the whole
 * allocation is filled with a pattern so any write shows. */
struct gmbuf {
	uint8_t *alloc;
	uint8_t *data;
	size_t bytes;
	uint8_t *shadow;
};

static struct gmbuf gm_new(size_t bytes)
{
	struct gmbuf g;
	g.bytes = bytes;
	g.alloc = aligned_alloc(64, bytes + 2 * GUARD);
	g.shadow = malloc(bytes + 2 * GUARD);
	assert_non_null(g.alloc);
	assert_non_null(g.shadow);
	memset(g.alloc, CANARY, bytes + 2 * GUARD);
	g.data = g.alloc + GUARD;
	for (size_t i = 0; i < bytes; i++)
		g.data[i] = (uint8_t)(i * 7 + 1);
	memcpy(g.shadow, g.alloc, bytes + 2 * GUARD);
	return g;
}

static void gm_check(const struct gmbuf *g)
{
	for (size_t i = 0; i < g->bytes + 2 * GUARD; i++)
		if (g->alloc[i] != g->shadow[i])
			fail_msg("GM byte %zd (relative to the buffer) changed: "
				 "0x%02x -> 0x%02x",
				 (ssize_t)i - GUARD, g->shadow[i], g->alloc[i]);
}

static void gm_free(struct gmbuf *g)
{
	free(g->alloc);
	free(g->shadow);
}

/* Snapshot of every local memory of a core. */
struct snap {
	uint8_t *copy[TP_MEM_COUNT];
};

static void snap_take(const struct tp_core_ctx *c, struct snap *s)
{
	for (int m = 1; m < TP_MEM_COUNT; m++) {
		s->copy[m] = NULL;
		if (!c->mem[m].base)
			continue;
		s->copy[m] = malloc(c->mem[m].cap);
		memcpy(s->copy[m], c->mem[m].base, c->mem[m].cap);
	}
}

static void snap_check(const struct tp_core_ctx *c, struct snap *s)
{
	for (int m = 1; m < TP_MEM_COUNT; m++) {
		if (!s->copy[m])
			continue;
		for (size_t i = 0; i < c->mem[m].cap; i++)
			if (c->mem[m].base[i] != s->copy[m][i])
				fail_msg("%s byte %zu changed", tp_mem_name(m),
					 i);
		free(s->copy[m]);
	}
}

static void fill_local(struct tp_core_ctx *c)
{
	for (int m = 1; m < TP_MEM_COUNT; m++)
		if (c->mem[m].base)
			memset(c->mem[m].base, CANARY, c->mem[m].cap);
}

static int setup(void **state)
{
	(void)state;
	if (tp_core_ctx_init(&aiv, 8, TP_CORE_AIV) ||
	    tp_core_ctx_init(&aiv2, 10, TP_CORE_AIV) ||
	    tp_core_ctx_init(&aic, 0, TP_CORE_AIC))
		return -1;
	fill_local(&aiv);
	fill_local(&aiv2);
	fill_local(&aic);
	tp_core_ctx_bind(&aiv);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tp_core_ctx_bind(NULL);
	tp_core_ctx_fini(&aiv);
	tp_core_ctx_fini(&aiv2);
	tp_core_ctx_fini(&aic);
	return 0;
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* A tile as a buggy kernel might hand-build it, bypassing the checks of
 * tp_tile_init(). */
static struct tp_tile craft(enum tp_mem mem, void *buf, size_t buf_bytes,
			    enum tp_dtype dt, uint32_t rows, uint32_t cols,
			    uint32_t stride, size_t offset)
{
	struct tp_core_ctx *c = tp_core_ctx_current();
	struct tp_tile t = {
		.buf = buf,
		.buf_bytes = buf_bytes,
		.offset = offset,
		.rows = rows,
		.cols = cols,
		.stride = stride,
		.dtype = (uint8_t)dt,
		.mem = (uint8_t)mem,
		.gen = (mem != TP_MEM_GM && c) ? c->gen : 0,
	};
	return t;
}

static struct tp_tile ltile(enum tp_mem m, enum tp_dtype dt, uint32_t rows,
			    uint32_t cols)
{
	struct tp_tile t;
	assert_int_equal(tp_local_tile(&t, m, dt, rows, cols), 0);
	return t;
}

/* The op failed with @want; the message names @op and contains @what;
 * the error is sticky; clear it for the next case. */
static void expect_fail(int rc, int want, const char *op, const char *what)
{
	struct tp_core_ctx *c = tp_core_ctx_current();
	if (rc != want)
		fail_msg("%s returned %d, expected %d (%s)", op, rc, want,
			 tp_last_error());
	const char *msg = tp_core_ctx_error_msg(c);
	if (!strstr(msg, op) || (what && !strstr(msg, what)))
		fail_msg("message \"%s\" should name %s and \"%s\"", msg, op,
			 what ? what : "");
	assert_int_equal(tp_core_ctx_error(c), want);
	/* Sticky: the next op is skipped. */
	struct tp_tile none = { 0 };
	assert_int_equal(tp_vdup(&none, 0.0f), -ECANCELED);
	tp_core_ctx_clear_error(c);
}

static void test_gm_bounds(void **state)
{
	(void)state;
	struct gmbuf g = gm_new(8 * 40 * 4);
	struct snap s;
	struct tp_tile u = ltile(TP_MEM_UB, TP_FP32, 8, 40);

	/* GM source one row longer than its buffer. */
	struct tp_tile src = craft(TP_MEM_GM, g.data, g.bytes, TP_FP32, 9, 40,
				   40, 0);
	struct tp_tile u9 = ltile(TP_MEM_UB, TP_FP32, 9, 40);
	fill_local(&aiv);
	snap_take(&aiv, &s);
	expect_fail(tp_copy_in(&u9, &src), -EFAULT, "tp_copy_in",
		    "src GM fp32[9x40 stride 40]");
	/* Offset pushing the last element one past the end. */
	src = craft(TP_MEM_GM, g.data, g.bytes, TP_FP32, 8, 40, 40, 4);
	expect_fail(tp_copy_in(&u, &src), -EFAULT, "tp_copy_in",
		    "1280-byte buffer");
	/* Stride too wide for the buffer's last row. */
	src = craft(TP_MEM_GM, g.data, g.bytes, TP_FP32, 8, 40, 41, 0);
	expect_fail(tp_copy_in(&u, &src), -EFAULT, "tp_copy_in", NULL);
	/* Stride below cols. */
	src = craft(TP_MEM_GM, g.data, g.bytes, TP_FP32, 8, 40, 39, 0);
	expect_fail(tp_copy_in(&u, &src), -EINVAL, "tp_copy_in", "stride");
	/* Misaligned GM element. */
	src = craft(TP_MEM_GM, g.data, g.bytes, TP_FP32, 2, 40, 40, 2);
	struct tp_tile u2 = craft(TP_MEM_UB, u.buf, 1280, TP_FP32, 2, 40, 40,
				  0);
	expect_fail(tp_copy_in(&u2, &src), -EFAULT, "tp_copy_in", "aligned");
	snap_check(&aiv, &s);

	/* GM destination too small: copy_out and fixpipe. */
	struct tp_tile dst = craft(TP_MEM_GM, g.data, g.bytes - 1, TP_FP32, 8,
				   40, 40, 0);
	snap_take(&aiv, &s);
	expect_fail(tp_copy_out(&dst, &u), -EFAULT, "tp_copy_out",
		    "dst GM fp32[8x40 stride 40]");
	snap_check(&aiv, &s);
	gm_check(&g);

	tp_core_ctx_bind(&aic);
	struct tp_tile c = ltile(TP_MEM_L0C, TP_FP32, 8, 40);
	fill_local(&aic);
	snap_take(&aic, &s);
	dst = craft(TP_MEM_GM, g.data, 8 * 40 * 2 - 2, TP_BF16, 8, 40, 40, 0);
	expect_fail(tp_fixpipe(&dst, &c), -EFAULT, "tp_fixpipe", NULL);
	dst = craft(TP_MEM_GM, NULL, 0, TP_FP32, 8, 40, 40, 0);
	expect_fail(tp_fixpipe(&dst, &c), -EFAULT, "tp_fixpipe", "NULL");
	snap_check(&aic, &s);
	gm_check(&g);
	gm_free(&g);
}

static void test_local_bounds(void **state)
{
	(void)state;
	struct gmbuf g = gm_new(16 * 16 * 4);
	struct tp_tile src = craft(TP_MEM_GM, g.data, g.bytes, TP_FP32, 16, 16,
				   16, 0);
	/* 8 x 16 fp32 = 512 bytes allocated; a tile claiming 16 rows of it. */
	void *p = tp_local_alloc(TP_MEM_UB, 512);
	struct snap s;
	fill_local(&aiv);
	snap_take(&aiv, &s);
	struct tp_tile big = craft(TP_MEM_UB, p, 512, TP_FP32, 16, 16, 16, 0);
	expect_fail(tp_copy_in(&big, &src), -EFAULT, "tp_copy_in",
		    "dst UB fp32[16x16 stride 16]");
	/* Claiming a buffer larger than what was allocated. */
	big = craft(TP_MEM_UB, p, 1024, TP_FP32, 16, 16, 16, 0);
	expect_fail(tp_copy_in(&big, &src), -EFAULT, "tp_copy_in",
		    "not inside");
	/* Beyond the end of the UB itself. */
	big = craft(TP_MEM_UB, aiv.mem[TP_MEM_UB].base + TP_UB_BYTES - 512,
		    1024, TP_FP32, 16, 16, 16, 0);
	expect_fail(tp_vdup(&big, 1.0f), -EFAULT, "tp_vdup", "not inside");
	/* A "UB" tile over GM memory. */
	struct tp_tile fake = craft(TP_MEM_UB, g.data, g.bytes, TP_FP32, 16,
				    16, 16, 0);
	expect_fail(tp_vexp(&fake, &fake), -EFAULT, "tp_vexp", "not inside");
	/* Another core's UB. */
	tp_core_ctx_bind(&aiv2);
	void *q = tp_local_alloc(TP_MEM_UB, 1024);
	struct tp_tile other = craft(TP_MEM_UB, q, 1024, TP_FP32, 16, 16, 16,
				     0);
	tp_core_ctx_bind(&aiv);
	other.gen = aiv.gen;
	struct tp_tile mine = craft(TP_MEM_UB, p, 512, TP_FP32, 8, 16, 16, 0);
	expect_fail(tp_vadd(&mine, &mine, &other), -EFAULT, "tp_vadd",
		    "b UB fp32[16x16 stride 16]");
	/* A core without a UB running a vector op. */
	tp_core_ctx_bind(&aic);
	other.gen = aic.gen;
	expect_fail(tp_vrelu(&other, &other), -EFAULT, "tp_vrelu",
		    "has no UB");
	tp_core_ctx_bind(&aiv);
	/* Unknown dtype and memory kind. */
	struct tp_tile odd = mine;
	odd.dtype = 17;
	expect_fail(tp_vabs(&odd, &mine), -EINVAL, "tp_vabs", "dtype");
	odd = mine;
	odd.mem = 42;
	expect_fail(tp_vabs(&mine, &odd), -EINVAL, "tp_vabs", NULL);
	snap_check(&aiv, &s);
	gm_check(&g);
	gm_free(&g);
}

static void test_cube_bounds(void **state)
{
	(void)state;
	tp_core_ctx_bind(&aic);
	struct tp_tile l1 = ltile(TP_MEM_L1, TP_BF16, 16, 32);
	struct tp_tile a = ltile(TP_MEM_L0A, TP_BF16, 16, 32);
	struct tp_tile b = ltile(TP_MEM_L0B, TP_BF16, 32, 16);
	struct tp_tile c = ltile(TP_MEM_L0C, TP_FP32, 16, 16);
	struct snap s;
	fill_local(&aic);
	snap_take(&aic, &s);
	/* L0A tile larger than its block. */
	struct tp_tile a2 = craft(TP_MEM_L0A, a.buf, 1024, TP_BF16, 32, 32, 32,
				  0);
	expect_fail(tp_load_l0(&a2, &l1, 0), -EFAULT, "tp_load_l0", NULL);
	/* Transposed into a shape that is not the transpose. */
	expect_fail(tp_load_l0(&a, &l1, TP_LOAD_TRANSPOSE), -EINVAL,
		    "tp_load_l0", "transpose");
	/* L0 move from GM. */
	struct gmbuf g = gm_new(16 * 32 * 2);
	struct tp_tile gsrc = craft(TP_MEM_GM, g.data, g.bytes, TP_BF16, 16, 32,
				    32, 0);
	expect_fail(tp_load_l0(&a, &gsrc, 0), -EINVAL, "tp_load_l0",
		    "expected a L1 tile");
	/* mmad: L0C tile past the allocated L0C. */
	struct tp_tile c2 = craft(TP_MEM_L0C, c.buf, 2048, TP_FP32, 16, 32, 32,
				  0);
	struct tp_tile b2 = craft(TP_MEM_L0B, b.buf, 1024, TP_BF16, 32, 32, 32,
				  0);
	expect_fail(tp_mmad(&c2, &a, &b, 0), -EFAULT, "tp_mmad", NULL);
	expect_fail(tp_mmad(&c, &a, &b2, 0), -EFAULT, "tp_mmad", NULL);
	/* Shapes that do not chain. */
	struct tp_tile bv;
	assert_int_equal(tp_tile_view(&bv, &b, 0, 0, 16, 16), 0);
	expect_fail(tp_mmad(&c, &a, &bv, 0), -EINVAL, "tp_mmad",
		    "b L0B bf16[16x16 stride 16]");
	/* Copy into L0A directly from GM is not a path. */
	expect_fail(tp_copy_in(&a, &gsrc), -EINVAL, "tp_copy_in",
		    "expected a UB or L1 tile");
	snap_check(&aic, &s);
	gm_check(&g);
	gm_free(&g);
}

static void test_vec_bounds(void **state)
{
	(void)state;
	struct tp_tile s16 = ltile(TP_MEM_UB, TP_FP32, 16, 16);
	struct tp_tile d8 = ltile(TP_MEM_UB, TP_FP32, 16, 8);
	struct tp_tile col = ltile(TP_MEM_UB, TP_FP32, 16, 1);
	struct tp_tile col8 = ltile(TP_MEM_UB, TP_FP32, 8, 1);
	struct tp_tile h16 = ltile(TP_MEM_UB, TP_FP16, 16, 16);
	struct snap s;
	fill_local(&aiv);
	snap_take(&aiv, &s);
	expect_fail(tp_vadd(&s16, &s16, &d8), -EINVAL, "tp_vadd",
		    "b UB fp32[16x8 stride 8]");
	expect_fail(tp_vmul(&s16, &s16, &h16), -EINVAL, "tp_vmul", "fp16");
	expect_fail(tp_vexp(&d8, &s16), -EINVAL, "tp_vexp", NULL);
	expect_fail(tp_vcopy(&h16, &s16), -EINVAL, "tp_vcopy", NULL);
	expect_fail(tp_vrowmax(&col8, &s16), -EINVAL, "tp_vrowmax",
		    "dst UB fp32[8x1 stride 1]");
	expect_fail(tp_vrowsum(&d8, &s16), -EINVAL, "tp_vrowsum", NULL);
	expect_fail(tp_vrowsub(&s16, &s16, &col8), -EINVAL, "tp_vrowsub",
		    "v UB fp32[8x1 stride 1]");
	expect_fail(tp_vcast(&d8, &h16), -EINVAL, "tp_vcast", NULL);
	/* A cast whose fp32 destination is larger than its buffer. */
	struct tp_tile wide = craft(TP_MEM_UB, h16.buf, 512, TP_FP32, 16, 16,
				    16, 0);
	expect_fail(tp_vcast(&wide, &h16), -EFAULT, "tp_vcast", NULL);
	/* A view whose offset runs past its buffer. */
	struct tp_tile v = craft(TP_MEM_UB, col.buf, 64, TP_FP32, 16, 1, 1, 4);
	expect_fail(tp_vdup(&v, 1.0f), -EFAULT, "tp_vdup", NULL);
	/* Scalar access outside the tile. */
	expect_fail(tp_set_value(&col, 16, 0, 1.0f), -EINVAL, "tp_set_value",
		    "(16, 0)");
	expect_fail(tp_set_value(&col, 0, 1, 1.0f), -EINVAL, "tp_set_value",
		    NULL);
	float out = 3.0f;
	expect_fail(tp_get_value(&col, 0, 0, NULL), -EINVAL, "tp_get_value",
		    NULL);
	expect_fail(tp_get_value(&v, 0, 0, &out), -EFAULT, "tp_get_value",
		    NULL);
	assert_true(out == 3.0f);
	/* Capacity: nothing is allocated by the failed call. */
	size_t before = tp_core_ctx_local_free(&aiv, TP_MEM_UB);
	struct tp_tile huge;
	expect_fail(tp_local_tile(&huge, TP_MEM_UB, TP_FP32, 64, 1024),
		    -ENOMEM, "tp_local_tile", "64x1024");
	assert_int_equal(tp_core_ctx_local_free(&aiv, TP_MEM_UB), before);
	assert_null(tp_local_alloc(TP_MEM_UB, before + 1));
	expect_fail(-ENOMEM, -ENOMEM, "tp_local_alloc", "requested");
	snap_check(&aiv, &s);
}

static void test_stale_and_reset(void **state)
{
	(void)state;
	struct tp_tile t = ltile(TP_MEM_UB, TP_FP32, 4, 4);
	struct snap s;
	tp_core_ctx_task_begin(&aiv);
	fill_local(&aiv);
	snap_take(&aiv, &s);
	expect_fail(tp_vdup(&t, 5.0f), -ESTALE, "tp_vdup", "stale");
	/* Re-stamping the generation does not help once the block is gone. */
	t.gen = aiv.gen;
	expect_fail(tp_vdup(&t, 5.0f), -EFAULT, "tp_vdup", "not inside");
	snap_check(&aiv, &s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_gm_bounds),
		T(test_local_bounds),
		T(test_cube_bounds),
		T(test_vec_bounds),
		T(test_stale_and_reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
