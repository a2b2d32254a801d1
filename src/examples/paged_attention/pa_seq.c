/* SPDX-License-Identifier: MIT */
/*
 * examples/paged_attention/pa_seq.c — the §5.3 orchestration, one task
 * after the other on the calling thread (see pa_seq.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "examples/paged_attention/pa_seq.h"
#include "platform/tile/core_ctx.h"

/* A contiguous GM buffer of rows x cols and its tile. */
struct gm_buf {
	void *p;
	struct tp_tile t;
};

static int gm_buf_init(struct gm_buf *g, enum tp_dtype dt, uint32_t rows,
		       uint32_t cols)
{
	size_t bytes = (size_t)rows * cols * tp_dtype_size(dt);
	g->p = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
	if (!g->p)
		return -ENOMEM;
	return tp_tile_init(&g->t, TP_MEM_GM, g->p, bytes, dt, rows, cols,
			    cols);
}

/* Fresh memory from the runtime holds anything: make it NaN. */
static void poison(const struct gm_buf *g)
{
	size_t n = (size_t)g->t.rows * g->t.cols;
	if (g->t.dtype == TP_BF16) {
		uint16_t *h = g->p;
		for (size_t i = 0; i < n; i++)
			h[i] = 0x7fc0u; /* bf16 quiet NaN */
	} else {
		float *f = g->p;
		for (size_t i = 0; i < n; i++)
			f[i] = NAN;
	}
}

struct seq {
	struct tp_core_ctx aic, aiv;
	struct pa_seq_stats st;
	uint32_t b, q, bn; /* the current task, for messages */
};

static int run_task(struct seq *s, enum pa_func f, int64_t *args)
{
	const struct pa_kernel_info *k = &pa_kernels[f];
	struct tp_core_ctx *ctx = k->core_type == TP_CORE_AIC ? &s->aic
							      : &s->aiv;
	tp_core_ctx_bind(ctx);
	tp_core_ctx_task_begin(ctx);
	k->fn(args);
	int rc = tp_core_ctx_task_end(ctx);
	s->st.tasks++;
	s->st.by_func[f]++;
	if (rc)
		return tp_set_error(-EIO,
				    "paged_attention seq: task %s (func %d, "
				    "b %u, q %u, bn %u) failed: %s",
				    k->name, k->func_id, s->b, s->q, s->bn,
				    tp_core_ctx_error_msg(ctx));
	return 0;
}

/* The intermediates of one scope: alloc_tensors (oi, li, mi) and the
 * OUTPUTs of the block tasks. Sequential, so one set is reused. */
struct scope_bufs {
	struct gm_buf oi, li, mi;
	struct gm_buf sij, pij, mij, lij, oi_new;
};

#define SCOPE_NBUF 8

static struct gm_buf *scope_buf(struct scope_bufs *sb, int i)
{
	struct gm_buf *all[SCOPE_NBUF] = { &sb->oi,  &sb->li,  &sb->mi,
					   &sb->sij, &sb->pij, &sb->mij,
					   &sb->lij, &sb->oi_new };
	return all[i];
}

static int run_scope(struct seq *s, struct pa_inputs *in,
		     struct scope_bufs *sb, const struct tp_tile *q2d,
		     const struct tp_tile *k2d, const struct tp_tile *v2d,
		     const struct tp_tile *out2d)
{
	const struct pa_dims *d = &in->d;
	const uint32_t M = d->q_tile, S = d->S, D = d->D;
	const uint32_t row0 = s->b * d->H + s->q * M;
	const uint32_t ctx = (uint32_t)in->context_lens[s->b];
	const uint32_t bn_b = (ctx + S - 1) / S;
	struct tp_tile qi, out_v, kj, vj, sij_v;
	int rc;

	if ((rc = tp_tile_view(&qi, q2d, row0, 0, M, D)) ||
	    (rc = tp_tile_view(&out_v, out2d, row0, 0, M, D)))
		return rc;

	/* Task A: alloc_tensors(oi, li, mi), completed inline. */
	poison(&sb->oi);
	poison(&sb->li);
	poison(&sb->mi);
	s->st.tasks++;
	s->st.alloc_tasks++;

	for (uint32_t bn = 0; bn < bn_b; bn++) {
		s->bn = bn;
		const int32_t blk =
			in->block_table[(size_t)s->b * d->max_blocks + bn];
		if (blk < 0 || (uint32_t)blk >= d->T)
			return tp_set_error(-EINVAL,
					    "paged_attention seq: "
					    "block_table[%u][%u] = %d, "
					    "expected 0..%u",
					    s->b, bn, blk, d->T - 1);
		uint32_t valid = ctx - bn * S;
		valid = valid < S ? valid : S;
		if ((rc = tp_tile_view(&kj, k2d, (uint32_t)blk * S, 0, S,
				       D)) ||
		    (rc = tp_tile_view(&vj, v2d, (uint32_t)blk * S, 0, S,
				       D)) ||
		    (rc = tp_tile_view(&sij_v, &sb->sij.t, 0, 0, M, valid)))
			return rc;

		poison(&sb->sij);
		int64_t qk[PA_QK_NARGS] = {
			[PA_QK_QI] = pa_arg_tile(&qi),
			[PA_QK_KJ] = pa_arg_tile(&kj),
			[PA_QK_SIJ] = pa_arg_tile(&sb->sij.t),
		};
		if ((rc = run_task(s, PA_FUNC_QK, qk)))
			return rc;

		poison(&sb->pij);
		poison(&sb->mij);
		poison(&sb->lij);
		int64_t sf[PA_SF_NARGS] = {
			[PA_SF_SIJ] = pa_arg_tile(&sij_v),
			[PA_SF_PIJ] = pa_arg_tile(&sb->pij.t),
			[PA_SF_MIJ] = pa_arg_tile(&sb->mij.t),
			[PA_SF_LIJ] = pa_arg_tile(&sb->lij.t),
			[PA_SF_SCALE] = pa_arg_f32(in->scale),
		};
		if ((rc = run_task(s, PA_FUNC_SF, sf)))
			return rc;

		poison(&sb->oi_new);
		int64_t pv[PA_PV_NARGS] = {
			[PA_PV_PIJ] = pa_arg_tile(&sb->pij.t),
			[PA_PV_VJ] = pa_arg_tile(&vj),
			[PA_PV_OI_NEW] = pa_arg_tile(&sb->oi_new.t),
		};
		if ((rc = run_task(s, PA_FUNC_PV, pv)))
			return rc;

		int64_t up[PA_UP_NARGS] = {
			[PA_UP_MIJ] = pa_arg_tile(&sb->mij.t),
			[PA_UP_LIJ] = pa_arg_tile(&sb->lij.t),
			[PA_UP_OI_NEW] = pa_arg_tile(&sb->oi_new.t),
			[PA_UP_MI] = pa_arg_tile(&sb->mi.t),
			[PA_UP_LI] = pa_arg_tile(&sb->li.t),
			[PA_UP_OI] = pa_arg_tile(&sb->oi.t),
			[PA_UP_OUT] = pa_arg_tile(&out_v),
			[PA_UP_IS_FIRST] = bn == 0,
			[PA_UP_IS_LAST] = bn == bn_b - 1,
		};
		if ((rc = run_task(s, PA_FUNC_UP, up)))
			return rc;
	}
	return 0;
}

int pa_seq_run(struct pa_inputs *in, struct pa_seq_stats *st)
{
	const struct pa_dims *d = &in->d;
	const uint32_t M = d->q_tile, S = d->S, D = d->D;
	struct tp_core_ctx *prev = tp_core_ctx_current();
	struct seq *s = calloc(1, sizeof(*s));
	struct scope_bufs sb;
	struct tp_tile q2d, k2d, v2d, out2d;
	uint64_t t0 = tp_now_ns();
	int rc;

	memset(&sb, 0, sizeof(sb));
	if (!s)
		return tp_set_error(-ENOMEM, "paged_attention seq: out of "
					     "memory");
	if ((rc = tp_core_ctx_init(&s->aic, 0, TP_CORE_AIC)) ||
	    (rc = tp_core_ctx_init(&s->aiv, 1, TP_CORE_AIV)))
		goto out;

	/* §5.3: query / out as [B·H, D], the caches as [T·S, D]. */
	const size_t nq = (size_t)d->B * d->H * D;
	const size_t nkv = (size_t)d->T * S * D;
	if ((rc = tp_tile_init(&q2d, TP_MEM_GM, in->query, nq * 2, TP_BF16,
			       d->B * d->H, D, D)) ||
	    (rc = tp_tile_init(&out2d, TP_MEM_GM, in->out, nq * 4, TP_FP32,
			       d->B * d->H, D, D)) ||
	    (rc = tp_tile_init(&k2d, TP_MEM_GM, in->key_cache, nkv * 2,
			       TP_BF16, d->T * S, D, D)) ||
	    (rc = tp_tile_init(&v2d, TP_MEM_GM, in->value_cache, nkv * 2,
			       TP_BF16, d->T * S, D, D)))
		goto out;

	if ((rc = gm_buf_init(&sb.oi, TP_FP32, M, D)) ||
	    (rc = gm_buf_init(&sb.li, TP_FP32, M, 1)) ||
	    (rc = gm_buf_init(&sb.mi, TP_FP32, M, 1)) ||
	    (rc = gm_buf_init(&sb.sij, TP_FP32, M, S)) ||
	    (rc = gm_buf_init(&sb.pij, TP_BF16, M, S)) ||
	    (rc = gm_buf_init(&sb.mij, TP_FP32, M, 1)) ||
	    (rc = gm_buf_init(&sb.lij, TP_FP32, M, 1)) ||
	    (rc = gm_buf_init(&sb.oi_new, TP_FP32, M, D))) {
		if (rc == -ENOMEM)
			tp_set_error(rc, "paged_attention seq: out of memory");
		goto out;
	}

	for (uint32_t b = 0; b < d->B && !rc; b++)
		for (uint32_t q = 0; q < d->q_loop && !rc; q++) {
			s->b = b;
			s->q = q;
			s->bn = 0;
			rc = run_scope(s, in, &sb, &q2d, &k2d, &v2d, &out2d);
		}
out:
	for (int i = 0; i < SCOPE_NBUF; i++)
		free(scope_buf(&sb, i)->p);
	tp_core_ctx_fini(&s->aic);
	tp_core_ctx_fini(&s->aiv);
	tp_core_ctx_bind(prev);
	s->st.ns = tp_now_ns() - t0;
	if (st)
		*st = s->st;
	free(s);
	return rc;
}
