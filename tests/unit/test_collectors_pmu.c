/* SPDX-License-Identifier: MIT */
/* Unit tests of the PMU collector (collectors/pmu/): the device half
 * driven directly on a simulated device without the runtime — cores
 * programmed, real tile ops run inside counting windows on bound AICore
 * contexts — and the host half: stop, reconcile, export; the pmu.csv
 * header byte for byte for groups of both arches, rows equal to the
 * model's counts, the row order, the a5 slot mismatch bucket, buffer
 * rotation, stale temp removal, no file without records, a failed write
 * that keeps its shard files, the ERROR of a full buffer that cannot be
 * published, and the producer notes (seed 000 §5.1). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "base/log.h"
#include "collectors/pmu/pmu_dev.h"
#include "collectors/pmu/pmu_host.h"
#include "collectors/pmu/pmu_internal.h"
#include "platform/device.h"
#include "platform/platform.h"
#include "platform/pmu_events.h"
#include "platform/pmu_model.h"
#include "platform/tile/core_ctx.h"
#include "platform/tile/usage.h"
#include "taskprof/kernel.h"
#include "unit_helpers.h"

/* ---- log capture ------------------------------------------------------- */

static char logbuf[16384];

static void log_hook(int level, const char *msg, void *ud)
{
	(void)ud;
	size_t n = strlen(logbuf);
	snprintf(logbuf + n, sizeof(logbuf) - n, "%d %s\n", level, msg);
}

static void log_begin(void)
{
	logbuf[0] = '\0';
	tp_log_set_threshold(0);
	tp_log_set_hook(log_hook, NULL);
}

static void log_end(void)
{
	tp_log_set_hook(NULL, NULL);
	tp_log_set_threshold(TP_LOG_DEFAULT_THRESHOLD);
}

/* ---- fixture: one cluster (core 0 AIC, 1-2 AIV) --------------------------- */

struct fx {
	struct tp_device *dev;
	struct tp_pmu_model *m;
	struct tp_core_ctx aic, aiv;
	char *dir;
	struct pmu_collector *c;
	struct pmu_dev *d;
};

#define AIC_CORE 0
#define AIV_CORE 1
#define AIV2_CORE 2

static struct fx *fx_open(const char *platform, uint32_t type, int threads, uint64_t epoch)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	struct tp_device_config cfg = { .platform = platform, .device_id = 3, .block_dim = 1,
					.mem_bytes = 1u << 20 };
	f->dev = tp_device_open(&cfg);
	assert_non_null(f->dev);
	assert_int_equal(tp_pmu_model_create(f->dev, &f->m), 0);
	assert_int_equal(tp_core_ctx_init(&f->aic, AIC_CORE, TP_CORE_AIC), 0);
	assert_int_equal(tp_core_ctx_init(&f->aiv, AIV_CORE, TP_CORE_AIV), 0);
	assert_int_equal(tp_pmu_attach(f->m, AIC_CORE, &f->aic), 0);
	assert_int_equal(tp_pmu_attach(f->m, AIV_CORE, &f->aiv), 0);
	f->dir = uh_mkdtemp();
	assert_non_null(f->dir);
	struct pmu_config pc = { .model = f->m, .num_cores = 3, .num_threads = threads,
				 .event_type = type, .run_epoch = epoch, .output_prefix = f->dir };
	f->c = pmu_open(&pc);
	assert_non_null(f->c);
	f->d = pmu_dev(f->c);
	return f;
}

static void fx_close(struct fx *f)
{
	pmu_close(f->c);
	tp_core_ctx_bind(NULL);
	tp_pmu_model_destroy(f->m);
	tp_core_ctx_fini(&f->aic);
	tp_core_ctx_fini(&f->aiv);
	tp_device_close(f->dev);
	uh_rm_rf(f->dir);
	free(f);
}

static void csv_path(struct fx *f, char *out, size_t len)
{
	snprintf(out, len, "%s/pmu.csv", f->dir);
}

/* ---- kernels (as tests/unit/test_platform_pmu.c) ------------------------- */

#define N 64
static float gm_a[N * N], gm_b[N * N], gm_c[N * N];

static void vec_kernel(void)
{
	struct tp_tile ga, gb, gc, ua, ub, uc;
	assert_int_equal(tp_tile_init(&ga, TP_MEM_GM, gm_a, sizeof(gm_a), TP_FP32, N, N, N), 0);
	assert_int_equal(tp_tile_init(&gb, TP_MEM_GM, gm_b, sizeof(gm_b), TP_FP32, N, N, N), 0);
	assert_int_equal(tp_tile_init(&gc, TP_MEM_GM, gm_c, sizeof(gm_c), TP_FP32, N, N, N), 0);
	assert_int_equal(tp_local_tile(&ua, TP_MEM_UB, TP_FP32, N, N), 0);
	assert_int_equal(tp_local_tile(&ub, TP_MEM_UB, TP_FP32, N, N), 0);
	assert_int_equal(tp_local_tile(&uc, TP_MEM_UB, TP_FP32, N, N), 0);
	assert_int_equal(tp_copy_in(&ua, &ga), 0);
	assert_int_equal(tp_copy_in(&ub, &gb), 0);
	assert_int_equal(tp_vadd(&uc, &ua, &ub), 0);
	assert_int_equal(tp_copy_out(&gc, &uc), 0);
}

static uint16_t gm_h[32 * 32];
static float gm_o[32 * 32];

static void cube_kernel(void)
{
	struct tp_tile gh, go, l1, a, b, c;
	assert_int_equal(tp_tile_init(&gh, TP_MEM_GM, gm_h, sizeof(gm_h), TP_FP16, 32, 32, 32), 0);
	assert_int_equal(tp_tile_init(&go, TP_MEM_GM, gm_o, sizeof(gm_o), TP_FP32, 32, 32, 32), 0);
	assert_int_equal(tp_local_tile(&l1, TP_MEM_L1, TP_FP16, 32, 32), 0);
	assert_int_equal(tp_local_tile(&a, TP_MEM_L0A, TP_FP16, 32, 32), 0);
	assert_int_equal(tp_local_tile(&b, TP_MEM_L0B, TP_FP16, 32, 32), 0);
	assert_int_equal(tp_local_tile(&c, TP_MEM_L0C, TP_FP32, 32, 32), 0);
	assert_int_equal(tp_copy_in(&l1, &gh), 0);
	assert_int_equal(tp_load_l0(&a, &l1, 0), 0);
	assert_int_equal(tp_load_l0(&b, &l1, 0), 0);
	assert_int_equal(tp_mmad(&c, &a, &b, 0), 0);
	assert_int_equal(tp_fixpipe(&go, &c), 0);
}

/* Busy cycles the task's ops reported, per pipe (what the PIPE group counts). */
struct expect {
	uint64_t task_id;
	uint32_t core;
	uint64_t cyc[TP_PIPE_COUNT];
};

/* Run @kernel as one task on @core inside its window; a5 stages the
 * counters on the AICore side. Then the AICPU FIN path on @thread. */
static void run_task(struct fx *f, struct tp_core_ctx *ctx, int core, int thread,
		     void (*kernel)(void), uint64_t task_id, uint32_t reg, struct expect *e)
{
	tp_core_ctx_bind(ctx);
	tp_core_ctx_task_begin(ctx);
	tp_core_ctx_usage_reset(ctx);
	tp_pmu_window_open(f->m, core);
	kernel();
	tp_pmu_window_close(f->m, core);
	pmu_dev_aicore_stage(f->d, core, reg);
	assert_int_equal(tp_core_ctx_task_end(ctx), 0);
	const struct tp_core_usage *u = tp_core_ctx_usage(ctx);
	e->task_id = task_id;
	e->core = (uint32_t)core;
	for (int p = 0; p < TP_PIPE_COUNT; p++)
		e->cyc[p] = u->cycles[p];
	pmu_dev_on_fin(f->d, thread, core, task_id, 7 + (uint32_t)core,
		       ctx == &f->aic ? 0 : 1, reg);
}

/* ---- CSV reading --------------------------------------------------------- */

#define MAXROWS 10000
#define MAXCOLS 24

struct csv {
	char *text;
	char header[1024];
	int nrows, ncols;
	uint64_t v[MAXROWS][MAXCOLS];
};

static struct csv *csv_read(const char *path)
{
	struct csv *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(c->header, sizeof(c->header), fp));
	c->ncols = 1;
	for (char *p = c->header; *p; p++)
		c->ncols += *p == ',';
	char line[1024];
	while (fgets(line, sizeof(line), fp)) {
		assert_true(c->nrows < MAXROWS);
		assert_non_null(strchr(line, '\n'));
		assert_null(strchr(line, '\r'));
		int col = 0;
		for (char *tok = strtok(line, ",\n"); tok; tok = strtok(NULL, ",\n"), col++) {
			assert_true(col < MAXCOLS);
			if (col == 2) {
				/* task_id: 0x + 16 lowercase hex digits */
				assert_int_equal(strlen(tok), 18);
				assert_int_equal(strspn(tok + 2, "0123456789abcdef"), 16);
			}
			c->v[c->nrows][col] = strtoull(tok, NULL, 0);
		}
		assert_int_equal(col, c->ncols);
		c->nrows++;
	}
	fclose(fp);
	return c;
}

static int count_files(const char *dir, const char *sub)
{
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "ls -1 '%s' | grep -c -- '%s'", dir, sub);
	FILE *p = popen(cmd, "r");
	int n = 0;
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = 0;
		pclose(p);
	}
	return n;
}

#define FIXED "thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,"

/* ---- a2a3: PIPE_UTILIZATION end to end ------------------------------------ */

static void test_a2a3_pipe_end_to_end(void **state)
{
	(void)state;
	struct fx *f = fx_open("a2a3sim", TP_PMU_PIPE_UTILIZATION, 2, 41);
	assert_int_equal(pmu_start(f->c), 0);
	assert_int_equal(pmu_dev_init(f->d), 0);
	struct expect e[8];
	/* Interleaved: thread 1 owns the AIV core, thread 0 the AIC core. */
	run_task(f, &f->aiv, AIV_CORE, 1, vec_kernel, 0x0000000200000a00ull, 1, &e[0]);
	run_task(f, &f->aic, AIC_CORE, 0, cube_kernel, 0x10, 2, &e[1]);
	run_task(f, &f->aiv, AIV_CORE, 1, vec_kernel, 0x0000000200000a01ull, 3, &e[2]);
	run_task(f, &f->aic, AIC_CORE, 0, cube_kernel, 0x11, 4, &e[3]);
	pmu_dev_flush_thread(f->d, 0);
	pmu_dev_flush_thread(f->d, 1);
	pmu_dev_finalize(f->d);
	pmu_stop(f->c);

	log_begin();
	struct pmu_reconcile r;
	assert_int_equal(pmu_reconcile(f->c, &r), 0);
	log_end();
	assert_int_equal(r.total, 4);
	assert_int_equal(r.collected, 4);
	assert_int_equal(r.dropped, 0);
	assert_int_equal(r.mismatch, 0);
	assert_true(r.ok);
	assert_non_null(strstr(logbuf, "PMU reconcile: record counts match (collected=4, "
				       "dropped=0, device_total=4)"));
	/* Notes: all three cores enabled at init and held at close. */
	assert_int_equal(r.note_init[TP_PMU_NOTE_ENABLED], 3);
	assert_int_equal(r.note_close[TP_PMU_NOTE_HELD], 3);
	assert_non_null(strstr(logbuf, "PMU notes (run_epoch 41, 3 cores): init enabled=3"));
	struct tp_pmu_note ni, nc;
	assert_int_equal(pmu_notes(f->c, 2, &ni, &nc), 0);
	assert_int_equal(ni.code, TP_PMU_NOTE_ENABLED);
	assert_int_equal(ni.physical_core_id, 2);
	assert_int_equal(nc.code, TP_PMU_NOTE_HELD);

	uint64_t rows = 0;
	assert_int_equal(pmu_export(f->c, &rows), 0);
	assert_int_equal(rows, 4);
	assert_int_equal(count_files(f->dir, "tmp"), 0);
	char path[4200];
	csv_path(f, path, sizeof(path));
	struct csv *c = csv_read(path);
	assert_string_equal(c->header,
			    FIXED "vec_busy_cycles,cube_busy_cycles,scalar_busy_cycles,"
				  "mte1_busy_cycles,mte2_busy_cycles,mte3_busy_cycles,icache_miss,"
				  "icache_req,event_type,run_epoch\n");
	assert_int_equal(c->ncols, 16);
	assert_int_equal(c->nrows, 4);
	/* Order: thread 0 (AIC tasks 1, 3), then thread 1 (AIV tasks 0, 2). */
	const int order[4] = {1, 3, 0, 2};
	for (int i = 0; i < 4; i++) {
		const uint64_t *v = c->v[i];
		const struct expect *x = &e[order[i]];
		assert_int_equal(v[0], i < 2 ? 0 : 1);     /* thread_id */
		assert_int_equal(v[1], x->core);           /* core_id */
		assert_int_equal(v[2], x->task_id);
		assert_int_equal(v[3], 7 + x->core);       /* func_id */
		assert_int_equal(v[4], x->core == AIC_CORE ? 0 : 1);
		assert_int_equal(v[6], x->cyc[TP_PIPE_VEC]);
		assert_int_equal(v[7], x->cyc[TP_PIPE_CUBE]);
		assert_int_equal(v[8], x->cyc[TP_PIPE_SCALAR]);
		assert_int_equal(v[9], x->cyc[TP_PIPE_MTE1]);
		assert_int_equal(v[10], x->cyc[TP_PIPE_MTE2]);
		assert_int_equal(v[11], x->cyc[TP_PIPE_MTE3]);
		assert_int_equal(v[12], 0); /* icache: not modelled */
		assert_int_equal(v[13], 0);
		assert_int_equal(v[14], 2);  /* event_type */
		assert_int_equal(v[15], 41); /* run_epoch */
		uint64_t busy = 0;
		for (int p = 0; p < 6; p++)
			busy = x->cyc[p] > busy ? x->cyc[p] : busy;
		assert_true(busy > 0);
		assert_true(v[5] >= busy); /* no pipe exceeds the total */
	}
	assert_true(c->v[0][7] > 0 && c->v[2][6] > 0);
	free(c);
	/* The spec's example row layout: task id printed zero-padded. */
	char *text = NULL;
	assert_int_equal(tp_read_file(path, &text, NULL), 0);
	assert_non_null(strstr(text, "\n1,1,0x0000000200000a00,8,1,"));
	free(text);
	fx_close(f);
}

/* ---- headers and column mapping of other groups ----------------------------- */

static void check_group(const char *platform, uint32_t type, const char *tail, int ncols)
{
	struct fx *f = fx_open(platform, type, 1, 5);
	assert_int_equal(pmu_start(f->c), 0);
	assert_int_equal(pmu_dev_init(f->d), 0);
	const struct tp_pmu_event_group *g =
		tp_pmu_event_group(tp_pmu_model_arch(f->m), type);
	struct tp_pmu_sample s = { .total_cycles = 123456789012ull, .n_slots = g->n_slots };
	for (int i = 0; i < g->n_slots; i++)
		s.counters[i] = 100 + (uint32_t)i;
	pmu_dev_record(f->d, 0, AIV2_CORE, 0xabcdef0123456789ull, 3, 1, &s);
	pmu_dev_flush_thread(f->d, 0);
	pmu_dev_finalize(f->d);
	pmu_stop(f->c);
	assert_int_equal(pmu_reconcile(f->c, NULL), 0);
	assert_int_equal(pmu_export(f->c, NULL), 0);
	char path[4200];
	csv_path(f, path, sizeof(path));
	char *text = NULL;
	assert_int_equal(tp_read_file(path, &text, NULL), 0);
	char want[2048];
	int n = snprintf(want, sizeof(want), FIXED "%s,event_type,run_epoch\n"
				       "0,2,0xabcdef0123456789,3,1,123456789012",
			 tail);
	for (int i = 0; i < g->n_slots; i++)
		if (g->slot[i].name[0])
			n += snprintf(want + n, sizeof(want) - (size_t)n, ",%d", 100 + i);
	snprintf(want + n, sizeof(want) - (size_t)n, ",%u,5\n", type);
	assert_string_equal(text, want);
	struct csv *c = csv_read(path);
	assert_int_equal(c->ncols, ncols + 1); /* spec count + run_epoch */
	free(c);
	free(text);
	fx_close(f);
}

static void test_headers_both_arches(void **state)
{
	(void)state;
	check_group("a2a3sim", TP_PMU_MEMORY,
		    "ub_read_req,ub_write_req,l1_read_req,l1_write_req,l2_read_req,"
		    "l2_write_req,main_read_req,main_write_req", 15);
	check_group("a2a3sim", TP_PMU_RESOURCE_CONFLICT,
		    "bankgroup_stall_cycles,bank_stall_cycles,vec_resc_conflict_cycles", 10);
	/* a5 MEMORY: slots 0-1 unused, so the first column is slot 2's value. */
	check_group("a5sim", TP_PMU_MEMORY,
		    "bif_sc_pmu_read_main_instr_core,bif_sc_pmu_write_main_instr_core,"
		    "pmu_aiv_ext_rd_ub_instr,ub_pmu_vec_rd_ub_acc,pmu_aiv_ext_wr_ub_instr,"
		    "ub_pmu_vec_wr_ub_acc,pmu_rd_l1_instr,pmu_wr_l1_instr", 15);
	check_group("a5sim", TP_PMU_ARITHMETIC_UTILIZATION,
		    "cube_fp_instr_busy,cube_int_instr_busy", 9);
	check_group("a5sim", TP_PMU_L2_CACHE,
		    "bif_sc_pmu_ar_close_l2_hit_core,bif_sc_pmu_ar_close_l2_miss_core,"
		    "bif_sc_pmu_ar_close_l2_victim_core,bif_sc_pmu_aw_close_l2_hit_core,"
		    "bif_sc_pmu_aw_close_l2_miss_core,bif_sc_pmu_aw_close_l2_victim_core", 13);
}

/* ---- a5: staging slots, commit, mismatch -------------------------------------- */

static void test_a5_stage_commit_mismatch(void **state)
{
	(void)state;
	struct fx *f = fx_open("a5sim", TP_PMU_PIPE_UTILIZATION, 2, 9);
	assert_int_equal(pmu_start(f->c), 0);
	assert_int_equal(pmu_dev_init(f->d), 0);
	/* A FIN for reg_task_id 0 before any staging: the zeroed ring must
	 * not pass for a staged slot. */
	pmu_dev_on_fin(f->d, 0, AIC_CORE, 0x99, 1, 0, 0);
	struct expect e[4];
	run_task(f, &f->aic, AIC_CORE, 0, cube_kernel, 0x0000000100000001ull, 0x11, &e[0]);
	run_task(f, &f->aiv, AIV_CORE, 1, vec_kernel, 0x0000000100000002ull, 0x12, &e[1]);
	run_task(f, &f->aic, AIC_CORE, 0, cube_kernel, 0x0000000100000003ull, 0x13, &e[2]);
	/* Slot 1 of the AIC core holds token 0x13: a FIN for 0x15 (never
	 * staged by the AICore) is a mismatch, not a row. */
	pmu_dev_on_fin(f->d, 0, AIC_CORE, 0x0000000100000005ull, 1, 0, 0x15);
	pmu_dev_flush_thread(f->d, 0);
	pmu_dev_flush_thread(f->d, 1);
	pmu_dev_finalize(f->d);
	pmu_stop(f->c);
	log_begin();
	struct pmu_reconcile r;
	assert_int_equal(pmu_reconcile(f->c, &r), 0);
	log_end();
	assert_int_equal(r.total, 5);
	assert_int_equal(r.collected, 3);
	assert_int_equal(r.mismatch, 2);
	assert_int_equal(r.dropped, 0);
	assert_non_null(strstr(logbuf, "PMU reconcile: 2 records lost to AICore staging-slot "
				       "task_id mismatch — completion-before-dispatch invariant "
				       "violated"));
	assert_non_null(strstr(logbuf, "PMU reconcile: record counts match (collected=3, "
				       "dropped=0, mismatch=2, device_total=5)"));
	assert_int_equal(r.note_init[TP_PMU_NOTE_ENABLED], 3);
	assert_int_equal(r.note_close[TP_PMU_NOTE_HELD], 3);
	uint64_t rows;
	assert_int_equal(pmu_export(f->c, &rows), 0);
	assert_int_equal(rows, 3);
	char path[4200];
	csv_path(f, path, sizeof(path));
	struct csv *c = csv_read(path);
	assert_int_equal(c->ncols, 17);
	assert_int_equal(c->nrows, 3);
	/* thread 0 core 0: tasks 1, 3; thread 1 core 1: task 2. */
	const int order[3] = {0, 2, 1};
	for (int i = 0; i < 3; i++) {
		const uint64_t *v = c->v[i];
		const struct expect *x = &e[order[i]];
		assert_int_equal(v[1], x->core);
		assert_int_equal(v[2], x->task_id); /* logical id, not the token */
		/* a5 PIPE: 0 vec, 1 cube, 2 scalar, 3 mte1, 4 mte2, 5 mte3,
		 * 6-7 icache, 8 fixp */
		assert_int_equal(v[6], x->cyc[TP_PIPE_VEC]);
		assert_int_equal(v[7], x->cyc[TP_PIPE_CUBE]);
		assert_int_equal(v[9], x->cyc[TP_PIPE_MTE1]);
		assert_int_equal(v[10], x->cyc[TP_PIPE_MTE2]);
		assert_int_equal(v[11], x->cyc[TP_PIPE_MTE3]);
		assert_int_equal(v[14], x->cyc[TP_PIPE_FIXP]);
		assert_true(v[5] > 0);
		assert_int_equal(v[15], 2);
		assert_int_equal(v[16], 9);
	}
	assert_true(c->v[0][7] > 0 && c->v[0][14] > 0 && c->v[2][6] > 0);
	free(c);
	fx_close(f);
}

/* ---- rotation: more records than one buffer holds ------------------------------- */

static void test_rotation_many_records(void **state)
{
	(void)state;
	const char *plats[2] = {"a2a3sim", "a5sim"};
	for (int k = 0; k < 2; k++) {
		struct fx *f = fx_open(plats[k], TP_PMU_PIPE_UTILIZATION, 2, 77);
		assert_int_equal(pmu_start(f->c), 0);
		assert_int_equal(pmu_dev_init(f->d), 0);
		struct tp_pmu_sample s = { .n_slots = k ? 10 : 8 };
		const int n = 1300; /* 512 + 512 + 276: two switches */
		for (int i = 0; i < n; i++) {
			s.total_cycles = 1000 + (uint64_t)i;
			s.counters[0] = (uint32_t)i;
			pmu_dev_record(f->d, 1, AIV2_CORE, (uint64_t)i, 1, 1, &s);
			pmu_dev_record(f->d, 0, AIC_CORE, (uint64_t)(100000 + i), 2, 0, &s);
		}
		pmu_dev_flush_thread(f->d, 0);
		pmu_dev_flush_thread(f->d, 1);
		pmu_dev_finalize(f->d);
		pmu_stop(f->c);
		struct pmu_reconcile r;
		assert_int_equal(pmu_reconcile(f->c, &r), 0);
		assert_int_equal(r.total, 2 * n);
		assert_int_equal(r.collected, 2 * n);
		assert_int_equal(r.dropped, 0);
		uint64_t rows;
		assert_int_equal(pmu_export(f->c, &rows), 0);
		assert_int_equal(rows, 2 * n);
		char path[4200];
		csv_path(f, path, sizeof(path));
		struct csv *c = csv_read(path);
		assert_int_equal(c->nrows, 2 * n);
		for (int i = 0; i < n; i++) {
			/* thread 0 / core 0 first, each core in record order */
			assert_int_equal(c->v[i][0], 0);
			assert_int_equal(c->v[i][2], 100000 + i);
			assert_int_equal(c->v[i][5], 1000 + i);
			assert_int_equal(c->v[i][6], i);
			assert_int_equal(c->v[n + i][0], 1);
			assert_int_equal(c->v[n + i][1], AIV2_CORE);
			assert_int_equal(c->v[n + i][2], i);
		}
		free(c);
		fx_close(f);
	}
}

/* ---- no records, stale temps, failed writes ------------------------------------ */

static void test_no_records_no_file(void **state)
{
	(void)state;
	struct fx *f = fx_open("a2a3sim", TP_PMU_PIPE_UTILIZATION, 2, 3);
	assert_int_equal(pmu_start(f->c), 0);
	assert_int_equal(pmu_dev_init(f->d), 0);
	pmu_dev_flush_thread(f->d, 0);
	pmu_dev_finalize(f->d);
	pmu_stop(f->c);
	struct pmu_reconcile r;
	assert_int_equal(pmu_reconcile(f->c, &r), 0);
	assert_int_equal(r.total, 0);
	uint64_t rows = 99;
	assert_int_equal(pmu_export(f->c, &rows), 0);
	assert_int_equal(rows, 0);
	char path[4200];
	csv_path(f, path, sizeof(path));
	struct stat st;
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(count_files(f->dir, "pmu"), 0);
	fx_close(f);

	/* A pmu.csv already there is left untouched by an empty run. */
	f = fx_open("a5sim", TP_PMU_PIPE_UTILIZATION, 1, 4);
	csv_path(f, path, sizeof(path));
	assert_int_equal(tp_write_file_atomic(path, "old\n", 4), 0);
	assert_int_equal(pmu_start(f->c), 0);
	assert_int_equal(pmu_dev_init(f->d), 0);
	pmu_dev_finalize(f->d);
	pmu_stop(f->c);
	assert_int_equal(pmu_reconcile(f->c, NULL), 0);
	assert_int_equal(pmu_export(f->c, NULL), 0);
	char *text = NULL;
	assert_int_equal(tp_read_file(path, &text, NULL), 0);
	assert_string_equal(text, "old\n");
	free(text);
	fx_close(f);
}

static void touch(const char *dir, const char *name)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_int_equal(tp_write_file_atomic(p, "x\n", 2), 0);
}

static bool exists(const char *dir, const char *name)
{
	char p[4200];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0;
}

static void test_stale_temp_removal(void **state)
{
	(void)state;
	struct fx *f = fx_open("a2a3sim", TP_PMU_PIPE_UTILIZATION, 2, 12);
	/* A process that no longer exists. */
	pid_t dead = fork();
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	int me = (int)getpid();
	char own[128], other_epoch[128], crashed[128], crashed1[128], evidence[128];
	snprintf(own, sizeof(own), "pmu.csv.e12.p%d.shard0.tmp", me);
	snprintf(other_epoch, sizeof(other_epoch), "pmu.csv.e11.p%d.shard0.tmp", me);
	snprintf(crashed, sizeof(crashed), "pmu.csv.e12.p%d.shard0.tmp", (int)dead);
	snprintf(crashed1, sizeof(crashed1), "pmu.csv.e3.p%d.shard1.tmp", (int)dead);
	snprintf(evidence, sizeof(evidence), "pmu.csv.e3.p%d.shard1.failed.tmp", (int)dead);
	touch(f->dir, own);
	touch(f->dir, other_epoch);
	touch(f->dir, crashed);
	touch(f->dir, crashed1);
	touch(f->dir, evidence);
	touch(f->dir, "pmu.csv.notes.tmp");
	assert_int_equal(pmu_start(f->c), 0);
	assert_false(exists(f->dir, own));      /* this run's, from before */
	assert_true(exists(f->dir, other_epoch)); /* a live run of this process */
	assert_false(exists(f->dir, crashed));  /* an abrupt exit */
	assert_false(exists(f->dir, crashed1));
	assert_true(exists(f->dir, evidence));  /* failure evidence is kept */
	assert_true(exists(f->dir, "pmu.csv.notes.tmp"));
	pmu_stop(f->c);
	fx_close(f);
}

static void test_failed_write_keeps_temps(void **state)
{
	(void)state;
	struct fx *f = fx_open("a2a3sim", TP_PMU_PIPE_UTILIZATION, 2, 21);
	char path[4200];
	csv_path(f, path, sizeof(path));
	/* pmu.csv is a directory: the final rename fails. */
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(pmu_start(f->c), 0);
	assert_int_equal(pmu_dev_init(f->d), 0);
	struct tp_pmu_sample s = { .n_slots = 8, .total_cycles = 5 };
	pmu_dev_record(f->d, 0, AIC_CORE, 1, 1, 0, &s);
	pmu_dev_record(f->d, 1, AIV_CORE, 2, 1, 1, &s);
	pmu_dev_flush_thread(f->d, 0);
	pmu_dev_flush_thread(f->d, 1);
	pmu_dev_finalize(f->d);
	pmu_stop(f->c);
	assert_int_equal(pmu_reconcile(f->c, NULL), 0);
	log_begin();
	assert_true(pmu_export(f->c, NULL) < 0);
	log_end();
	assert_non_null(strstr(logbuf, "PmuCollector: failed to flush merged CSV file: "));
	char n0[128], n1[128], merge[128];
	snprintf(n0, sizeof(n0), "pmu.csv.e21.p%d.shard0.failed.tmp", (int)getpid());
	snprintf(n1, sizeof(n1), "pmu.csv.e21.p%d.shard1.failed.tmp", (int)getpid());
	snprintf(merge, sizeof(merge), "pmu.csv.e21.p%d.merge.tmp", (int)getpid());
	assert_true(exists(f->dir, n0));
	assert_true(exists(f->dir, n1));
	assert_false(exists(f->dir, merge)); /* no partial merged file */
	fx_close(f);

	/* A shard file that cannot be opened: nothing is collected and the
	 * export refuses with the spec's line. */
	f = fx_open("a5sim", TP_PMU_PIPE_UTILIZATION, 1, 22);
	char bad[4200];
	snprintf(bad, sizeof(bad), "%s/pmu.csv.e22.p%d.shard0.tmp", f->dir, (int)getpid());
	assert_int_equal(mkdir(bad, 0755), 0);
	assert_int_equal(pmu_start(f->c), 0);
	assert_int_equal(pmu_dev_init(f->d), 0);
	struct tp_pmu_sample s5 = { .n_slots = 10 };
	tp_log_set_threshold(TP_LOG_ERROR + 1); /* the expected ERROR lines */
	pmu_dev_record(f->d, 0, AIC_CORE, 1, 1, 0, &s5);
	pmu_dev_flush_thread(f->d, 0);
	pmu_dev_finalize(f->d);
	pmu_stop(f->c);
	log_begin();
	struct pmu_reconcile r;
	assert_int_equal(pmu_reconcile(f->c, &r), -EPROTO);
	assert_true(r.io_failed);
	assert_int_equal(r.collected, 0);
	assert_int_equal(r.total, 1);
	/* the cause is the failed shard file, not a race */
	char want[4600];
	snprintf(want, sizeof(want), "PMU reconcile: record count mismatch (collected=0 + "
		 "dropped=0 + mismatch=0 != device_total=1, silent_loss=1) — the CSV shard "
		 "output failed, so no row is counted: %s: open failed: Is a directory", bad);
	assert_non_null(strstr(logbuf, want));
	assert_null(strstr(logbuf, "AICore/AICPU race"));
	assert_int_equal(pmu_export(f->c, NULL), -EIO);
	log_end();
	assert_non_null(strstr(logbuf, "PmuCollector: CSV shard output failed; preserving shard "
				       "files for diagnosis"));
	snprintf(want, sizeof(want), ": %s: open failed: Is a directory", bad);
	assert_non_null(strstr(tp_last_error(), want));
	csv_path(f, path, sizeof(path));
	struct stat st;
	assert_int_equal(stat(path, &st), -1);
	fx_close(f);
}

/* A full buffer that cannot be published (the ready queue stays full past
 * the backstop: a host that died) loses its records with the spec's
 * ERROR (spec/framework.md §4.6 step 3), once per failed switch; the
 * final flush that fails too has its own line (spec/pmu.md §4.3). */
static void test_ready_full_switch_logs(void **state)
{
	(void)state;
	const char *plats[2] = { "a2a3sim", "a5sim" };
	for (int k = 0; k < 2; k++) {
		struct tp_device_config dc = { .platform = plats[k], .block_dim = 1,
					       .mem_bytes = 1u << 20 };
		struct tp_device *dev = tp_device_open(&dc);
		assert_non_null(dev);
		struct tp_pmu_model *m = NULL;
		assert_int_equal(tp_pmu_model_create(dev, &m), 0);
		char *dir = uh_mkdtemp();
		assert_non_null(dir);
		struct pmu_config pc = { .model = m, .num_cores = 3, .num_threads = 2,
					 .event_type = 2, .run_epoch = 5, .output_prefix = dir,
					 .backstop_cycles = tp_sys_cnt_freq() / 100 };
		struct pmu_collector *c = pmu_open(&pc);
		assert_non_null(c);
		struct pmu_dev *d = pmu_dev(c);
		/* Never started (no host threads), and ready queue 1 full:
		 * head one ahead of its tail. */
		atomic_store(&d->h->queue_heads[1], 1);
		assert_int_equal(pmu_dev_init(d), 0);
		struct tp_pmu_sample smp = { .n_slots = k ? 10 : 8, .total_cycles = 9 };
		log_begin();
		tp_log_set_threshold(TP_LOG_ERROR);
		for (int i = 0; i < 2 * 512 + 88; i++)
			pmu_dev_record(d, 1, AIV_CORE, (uint64_t)i, 3, 1, &smp);
		pmu_dev_flush_thread(d, 1);
		log_end();
		pmu_dev_finalize(d);
		/* Two full buffers (the second fails fast), then the flush. */
		const char *want = "Thread 1: Core 1 failed to enqueue PMU buffer (ready_queue "
				   "full), data lost!\n";
		char line[128];
		snprintf(line, sizeof(line), "%d %s", TP_LOG_ERROR, want);
		const char *p1 = strstr(logbuf, line);
		assert_non_null(p1);
		const char *p2 = strstr(p1 + 1, line);
		assert_non_null(p2);
		assert_null(strstr(p2 + 1, line));
		assert_non_null(strstr(logbuf, "Thread 1: Core 1 failed to flush PMU buffer "
					       "(ready_queue full), 88 records lost!"));
		/* The flush failure is not also reported as a failed enqueue. */
		assert_true(strstr(logbuf, "failed to flush") > p2);
		pmu_stop(c);
		struct pmu_reconcile r;
		tp_log_set_threshold(TP_LOG_ERROR + 1);
		(void)pmu_reconcile(c, &r);
		tp_log_set_threshold(TP_LOG_DEFAULT_THRESHOLD);
		assert_int_equal(r.total, 2 * 512 + 88);
		assert_int_equal(r.dropped, 2 * 512 + 88);
		assert_int_equal(r.collected, 0);
		pmu_close(c);
		tp_pmu_model_destroy(m);
		tp_device_close(dev);
		uh_rm_rf(dir);
	}
}

static void test_open_rejects(void **state)
{
	(void)state;
	struct fx *f = fx_open("a2a3sim", TP_PMU_PIPE_UTILIZATION, 1, 1);
	struct pmu_config pc = { .model = f->m, .num_cores = 3, .num_threads = 5,
				 .event_type = 2, .output_prefix = f->dir };
	assert_null(pmu_open(&pc)); /* a2a3 has at most 4 AICPU threads */
	pc.num_threads = 1;
	pc.num_cores = 4; /* the device has 3 */
	assert_null(pmu_open(&pc));
	pc.num_cores = 3;
	pc.output_prefix = NULL;
	assert_null(pmu_open(&pc));
	/* An event type without a table gets PIPE columns but keeps its number. */
	pc.output_prefix = f->dir;
	pc.event_type = 3;
	struct pmu_collector *c = pmu_open(&pc);
	assert_non_null(c);
	assert_int_equal(pmu_event_type(c), 3);
	pmu_close(c);
	fx_close(f);
}


/* ---- threads: schedulers writing concurrently; a5 AICore -> AICPU slot ---- */

#include <pthread.h>
#include <stdatomic.h>

struct wr_arg {
	struct pmu_dev *d;
	int thread, core, n;
};

static void *writer(void *p)
{
	struct wr_arg *a = p;
	struct tp_pmu_sample s = { .n_slots = 8 };
	for (int i = 0; i < a->n; i++) {
		s.total_cycles = (uint64_t)i;
		pmu_dev_record(a->d, a->thread, a->core, ((uint64_t)a->core << 32) | (uint64_t)i, 1,
			       a->core ? 1 : 0, &s);
	}
	pmu_dev_flush_thread(a->d, a->thread);
	return NULL;
}

static void test_threads_concurrent_writers(void **state)
{
	(void)state;
	struct fx *f = fx_open("a2a3sim", TP_PMU_PIPE_UTILIZATION, 3, 50);
	assert_int_equal(pmu_start(f->c), 0);
	assert_int_equal(pmu_dev_init(f->d), 0);
	pthread_t th[3];
	struct wr_arg a[3];
	for (int t = 0; t < 3; t++) {
		a[t] = (struct wr_arg){ .d = f->d, .thread = t, .core = 2 - t, .n = 3000 };
		assert_int_equal(pthread_create(&th[t], NULL, writer, &a[t]), 0);
	}
	for (int t = 0; t < 3; t++)
		pthread_join(th[t], NULL);
	pmu_dev_finalize(f->d);
	pmu_stop(f->c);
	struct pmu_reconcile r;
	assert_int_equal(pmu_reconcile(f->c, &r), 0);
	assert_int_equal(r.total, 9000);
	assert_int_equal(r.collected, 9000);
	uint64_t rows;
	assert_int_equal(pmu_export(f->c, &rows), 0);
	assert_int_equal(rows, 9000);
	char path[4200];
	csv_path(f, path, sizeof(path));
	struct csv *c = csv_read(path);
	for (int i = 0; i < 9000; i++) {
		int t = i / 3000, k = i % 3000;
		assert_int_equal(c->v[i][0], t);
		assert_int_equal(c->v[i][1], 2 - t);
		assert_int_equal(c->v[i][2], ((uint64_t)(2 - t) << 32) | (uint64_t)k);
		assert_int_equal(c->v[i][5], k);
	}
	free(c);
	fx_close(f);
}

/* a5: an AICore thread stages, then publishes FIN; the AICPU thread
 * acquires the FIN and commits, with at most two tasks in flight. */
struct a5_arg {
	struct pmu_dev *d;
	_Atomic uint32_t dispatched; /* reg token of the last dispatch */
	_Atomic uint32_t fin;        /* reg token of the last FIN */
	int n;
};

static void *aicore(void *p)
{
	struct a5_arg *a = p;
	for (uint32_t reg = 1; reg <= (uint32_t)a->n; reg++) {
		while (atomic_load_explicit(&a->dispatched, memory_order_acquire) < reg)
			;
		pmu_dev_aicore_stage(a->d, AIV_CORE, reg);
		atomic_store_explicit(&a->fin, reg, memory_order_release);
	}
	return NULL;
}

static void test_threads_a5_slot_handoff(void **state)
{
	(void)state;
	struct fx *f = fx_open("a5sim", TP_PMU_PIPE_UTILIZATION, 1, 60);
	assert_int_equal(pmu_start(f->c), 0);
	assert_int_equal(pmu_dev_init(f->d), 0);
	struct a5_arg a = { .d = f->d, .n = 2000 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, aicore, &a), 0);
	uint32_t done = 0;
	/* Keep two dispatches in flight, as dual issue does. */
	atomic_store_explicit(&a.dispatched, 2, memory_order_release);
	while (done < (uint32_t)a.n) {
		uint32_t fin = atomic_load_explicit(&a.fin, memory_order_acquire);
		while (done < fin) {
			done++;
			pmu_dev_on_fin(f->d, 0, AIV_CORE, 0x500000000ull + done, 4, 1, done);
			uint32_t next = done + 2 > (uint32_t)a.n ? (uint32_t)a.n : done + 2;
			atomic_store_explicit(&a.dispatched, next, memory_order_release);
		}
	}
	pthread_join(th, NULL);
	pmu_dev_flush_thread(f->d, 0);
	pmu_dev_finalize(f->d);
	pmu_stop(f->c);
	struct pmu_reconcile r;
	assert_int_equal(pmu_reconcile(f->c, &r), 0);
	assert_int_equal(r.total, 2000);
	assert_int_equal(r.collected, 2000);
	assert_int_equal(r.mismatch, 0);
	fx_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a2a3_pipe_end_to_end),
		cmocka_unit_test(test_headers_both_arches),
		cmocka_unit_test(test_a5_stage_commit_mismatch),
		cmocka_unit_test(test_rotation_many_records),
		cmocka_unit_test(test_no_records_no_file),
		cmocka_unit_test(test_stale_temp_removal),
		cmocka_unit_test(test_failed_write_keeps_temps),
		cmocka_unit_test(test_ready_full_switch_logs),
		cmocka_unit_test(test_open_rejects),
		cmocka_unit_test(test_threads_concurrent_writers),
		cmocka_unit_test(test_threads_a5_slot_handoff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
