/* SPDX-License-Identifier: MIT */
/* Unit tests of PMU collection in a run (worker/run_pmu.h, the Worker's
 * pmu_event_type, issue 5 scope 1, 3, 4, 6, 7):
 *  - paged_attention CaseSmall1 with every event type on a2a3sim and
 *    a5sim: the exact pmu.csv header (builder and spec/pmu.md §2.2
 *    strings), one row per dispatched subtask, reconcile 0 dropped / 0
 *    mismatch, the notes enabled / held on every core;
 *  - the counters tell the truth: PIPE_UTILIZATION pipes per kernel,
 *    MEMORY request counts == bytes moved / 32 exactly;
 *  - run_epoch unique in the process across two Workers;
 *  - single issue with PMU on, dual issue used with it off;
 *  - bad event types on the flag and in the environment, --rounds > 1;
 *  - the foreign writer of PMU_CTRL_0 without the lease (enabled / lost,
 *    rows stop counting) and with it (enabled / held, every row of a
 *    spinning task >= 90% of its expected cycles). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "platform/device.h"
#include "platform/drv_prof.h"
#include "platform/platform.h"
#include "platform/pmu_events.h"
#include "platform/pmu_foreign.h"
#include "platform/pmu_model.h"
#include "runtime/engine.h"
#include "runtime/orch.h"
#include "taskprof/worker.h"
#include "unit_helpers.h"
#include "worker_pmu_helpers.h"
#include "worker/run_pmu.h"

/* ---- a parsed pmu.csv ---------------------------------------------------- */

#define MAX_ROWS 256
#define MAX_COLS 24

struct csv {
	char header[1024];
	int ncols;
	char names[MAX_COLS][64];
	int nrows;
	uint64_t v[MAX_ROWS][MAX_COLS]; /* task_id parsed from hex */
};

static void load_csv(const char *path, struct csv *c)
{
	memset(c, 0, sizeof(*c));
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(c->header, sizeof(c->header), f));
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", c->header);
	tmp[strcspn(tmp, "\n")] = 0;
	for (char *s, *t = strtok_r(tmp, ",", &s); t; t = strtok_r(NULL, ",", &s)) {
		assert_true(c->ncols < MAX_COLS);
		snprintf(c->names[c->ncols++], 64, "%s", t);
	}
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		assert_true(c->nrows < MAX_ROWS);
		int k = 0;
		line[strcspn(line, "\n")] = 0;
		for (char *s, *t = strtok_r(line, ",", &s); t; t = strtok_r(NULL, ",", &s)) {
			assert_true(k < c->ncols);
			c->v[c->nrows][k++] = strtoull(t, NULL, 0);
		}
		assert_int_equal(k, c->ncols);
		c->nrows++;
	}
	fclose(f);
}

static int col(const struct csv *c, const char *name)
{
	for (int i = 0; i < c->ncols; i++)
		if (!strcmp(c->names[i], name))
			return i;
	return -1;
}

/* ---- running paged_attention --------------------------------------------- */

static int run_case(const char *platform, const char *case_name, int pmu, int rounds,
		    int block_dim, struct tp_run_result *r)
{
	struct tp_worker_config cfg = {
		.platform = platform, .output_root = g_root, .pmu_event_type = pmu,
		.rounds = rounds, .block_dim = block_dim,
	};
	struct tp_worker *w = tp_worker_open(&cfg);
	assert_non_null(w);
	int rc = tp_worker_run(w, tp_callable_find("paged_attention"), case_name, r);
	tp_worker_close(w);
	return rc;
}

static int run_pa(const char *platform, int pmu, int rounds, int block_dim,
		  struct tp_run_result *r)
{
	return run_case(platform, "CaseSmall1", pmu, rounds, block_dim, r);
}

static const char *const PLATS[2] = { "a2a3sim", "a5sim" };
static const int TYPES[7] = { 1, 2, 4, 5, 6, 7, 8 };

/* Hard-coded headers of spec/pmu.md §2.2, plus taskprof's run_epoch. */
#define LEAD "thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,"
static const struct {
	int plat, type;
	const char *header;
} SPEC_HEADERS[] = {
	{ 0, 2, LEAD "vec_busy_cycles,cube_busy_cycles,scalar_busy_cycles,mte1_busy_cycles,"
		     "mte2_busy_cycles,mte3_busy_cycles,icache_miss,icache_req,event_type,"
		     "run_epoch\n" },
	{ 0, 6, LEAD "bankgroup_stall_cycles,bank_stall_cycles,vec_resc_conflict_cycles,"
		     "event_type,run_epoch\n" },
	{ 1, 1, LEAD "cube_fp_instr_busy,cube_int_instr_busy,event_type,run_epoch\n" },
	{ 1, 4, LEAD "bif_sc_pmu_read_main_instr_core,bif_sc_pmu_write_main_instr_core,"
		     "pmu_aiv_ext_rd_ub_instr,ub_pmu_vec_rd_ub_acc,pmu_aiv_ext_wr_ub_instr,"
		     "ub_pmu_vec_wr_ub_acc,pmu_rd_l1_instr,pmu_wr_l1_instr,event_type,"
		     "run_epoch\n" },
	{ 1, 2, LEAD "pmu_idc_aic_vec_busy_o,cube_instr_busy,scalar_instr_busy,"
		     "mte1_instr_busy,mte2_instr_busy,mte3_instr_busy,icache_req,icache_miss,"
		     "pmu_fix_instr_busy,event_type,run_epoch\n" },
};

/* Every event type on both platforms: header, one row per subtask,
 * reconcile, notes. */
static void test_every_event_type(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		for (int t = 0; t < 7; t++) {
			struct tp_run_result *r = calloc(1, sizeof(*r));
			struct csv *c = malloc(sizeof(*c));
			assert_int_equal(run_pa(PLATS[p], TYPES[t], 1, 0, r), 0);
			assert_true(r->pass);
			assert_true(r->pmu);
			assert_int_equal(r->pmu_event_type, TYPES[t]);
			assert_true(r->pmu_csv[0]);
			load_csv(r->pmu_csv, c);
			const struct tp_pmu_event_group *g = tp_pmu_event_group(
				p ? TP_PMU_ARCH_A5 : TP_PMU_ARCH_A2A3, (uint32_t)TYPES[t]);
			assert_non_null(g);
			char want[1024];
			assert_true(tp_pmu_csv_header(g, want, sizeof(want)) > 0);
			assert_string_equal(c->header, want);
			assert_int_equal(c->ncols, 6 + g->n_named + 2);
			for (size_t k = 0; k < sizeof(SPEC_HEADERS) / sizeof(SPEC_HEADERS[0]); k++)
				if (SPEC_HEADERS[k].plat == p && SPEC_HEADERS[k].type == TYPES[t])
					assert_string_equal(c->header, SPEC_HEADERS[k].header);
			/* CaseSmall1: 3 KV blocks x (QK, SF, PV, UP) on AICores. */
			assert_int_equal(r->subtasks, 12);
			assert_int_equal(c->nrows, (int)r->subtasks);
			assert_int_equal(r->pmu_rows, r->subtasks);
			assert_int_equal(r->pmu_total, r->subtasks);
			assert_int_equal(r->pmu_collected, r->subtasks);
			assert_int_equal(r->pmu_dropped, 0);
			assert_int_equal(r->pmu_mismatch, 0);
			assert_true(r->pmu_reconcile_ok);
			int et = col(c, "event_type"), ep = col(c, "run_epoch");
			assert_int_equal(ep, c->ncols - 1);
			for (int i = 0; i < c->nrows; i++) {
				assert_int_equal(c->v[i][et], (uint64_t)TYPES[t]);
				assert_int_equal(c->v[i][ep], r->pmu_run_epoch);
				assert_true(c->v[i][5] > 0); /* pmu_total_cycles */
			}
			/* Terminal bank: every producer enabled at init, held at close. */
			assert_int_equal(r->pmu_cores, 24);
			assert_int_equal(r->pmu_note_counts[TP_PMU_NOTE_ENABLED], 24);
			assert_int_equal(r->pmu_note_close_counts[TP_PMU_NOTE_HELD], 24);
			for (int k = 0; k < r->pmu_cores; k++) {
				assert_int_equal(r->pmu_note[k].code, TP_PMU_NOTE_ENABLED);
				assert_int_equal(r->pmu_note[k].ctrl0, 0x7);
				assert_int_equal(r->pmu_note_close[k].code, TP_PMU_NOTE_HELD);
				assert_int_equal(r->pmu_note_close[k].ctrl1, p ? 0x1 : 0x0);
			}
			free(c);
			free(r);
		}
	}
}

/* run_epoch is the process-unique run identity (seed 000 §3.2): two
 * Workers open at once, runs interleaved, never write the same one. */
static void test_run_epoch_process_unique(void **state)
{
	(void)state;
	struct tp_worker_config cfg = { .platform = "a2a3sim", .output_root = g_root,
					.pmu_event_type = 2 };
	struct tp_worker *a = tp_worker_open(&cfg), *b = tp_worker_open(&cfg);
	assert_non_null(a);
	assert_non_null(b);
	const struct tp_callable *pa = tp_callable_find("paged_attention");
	struct tp_run_result *r = calloc(3, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(tp_worker_run(a, pa, "CaseSmall1", &r[0]), 0);
	assert_int_equal(tp_worker_run(b, pa, "CaseSmall1", &r[1]), 0);
	assert_int_equal(tp_worker_run(a, pa, "CaseSmall1", &r[2]), 0);
	tp_worker_close(a);
	tp_worker_close(b);
	/* Taken in order from one counter, whichever Worker runs. */
	assert_true(r[0].pmu_run_epoch >= 1);
	assert_int_equal(r[1].pmu_run_epoch, r[0].pmu_run_epoch + 1);
	assert_int_equal(r[2].pmu_run_epoch, r[1].pmu_run_epoch + 1);
	struct csv *c = malloc(sizeof(*c));
	assert_non_null(c);
	for (int i = 0; i < 3; i++) {
		load_csv(r[i].pmu_csv, c);
		int ep = col(c, "run_epoch");
		assert_true(ep > 0 && c->nrows > 0);
		for (int k = 0; k < c->nrows; k++)
			assert_int_equal(c->v[k][ep], r[i].pmu_run_epoch);
	}
	free(c);
	free(r);
}

/* PIPE_UTILIZATION: QK (0) / PV (2) on the cube, SF (1) / UP (3) on the
 * vector unit, MTE2 in every kernel (they all load from GM), no pipe
 * above the total. */
static void test_pipe_utilization_truth(void **state)
{
	(void)state;
	static const char *const VEC[2] = { "vec_busy_cycles", "pmu_idc_aic_vec_busy_o" };
	static const char *const CUBE[2] = { "cube_busy_cycles", "cube_instr_busy" };
	static const char *const MTE2[2] = { "mte2_busy_cycles", "mte2_instr_busy" };
	for (int p = 0; p < 2; p++) {
		struct tp_run_result *r = calloc(1, sizeof(*r));
		struct csv *c = malloc(sizeof(*c));
		assert_int_equal(run_pa(PLATS[p], 2, 1, 0, r), 0);
		load_csv(r->pmu_csv, c);
		int vec = col(c, VEC[p]), cube = col(c, CUBE[p]), mte2 = col(c, MTE2[p]);
		assert_true(vec > 0 && cube > 0 && mte2 > 0);
		int per_func[4] = { 0 };
		/* The first block's UP only copies (mi = mij, li = lij, oi =
		 * oi_new, pa_kernels.h): no vector op, so its vector pipe is
		 * honestly idle. It is the UP task submitted first. */
		uint64_t first_up = UINT64_MAX;
		for (int i = 0; i < c->nrows; i++)
			if (c->v[i][3] == 3 && c->v[i][2] < first_up)
				first_up = c->v[i][2];
		for (int i = 0; i < c->nrows; i++) {
			uint64_t f = c->v[i][3], total = c->v[i][5];
			assert_true(f < 4);
			per_func[f]++;
			if (f == 0 || f == 2) {
				assert_int_equal(c->v[i][4], 0); /* AIC */
				assert_true(c->v[i][cube] > 0);
				assert_int_equal(c->v[i][vec], 0);
			} else {
				assert_int_equal(c->v[i][4], 1); /* AIV */
				if (f == 3 && c->v[i][2] == first_up)
					assert_int_equal(c->v[i][vec], 0);
				else
					assert_true(c->v[i][vec] > 0);
				assert_int_equal(c->v[i][cube], 0);
			}
			assert_true(c->v[i][mte2] > 0);
			for (int k = 6; k < c->ncols - 2; k++)
				if (strstr(c->names[k], "busy"))
					assert_true(c->v[i][k] <= total);
		}
		for (int f = 0; f < 4; f++)
			assert_int_equal(per_func[f], 3);
		free(c);
		free(r);
	}
}

/* MEMORY: request counts == Σ over operands of ceil(bytes / 32), computed
 * from CaseSmall1's shapes (H 16 heads = M query rows, D 16, S 16 block
 * size, context 33: blocks of 16, 16 and 1 valid tokens). */
enum { M = 16, D = 16, S = 16, REQ = 32 };
static uint64_t reqs(uint64_t bytes)
{
	return (bytes + REQ - 1) / REQ;
}

static void test_memory_exact(void **state)
{
	(void)state;
	static const char *const GM_RD[2] = { "main_read_req", "bif_sc_pmu_read_main_instr_core" };
	static const char *const GM_WR[2] = { "main_write_req",
					      "bif_sc_pmu_write_main_instr_core" };
	static const char *const L1_RD[2] = { "l1_read_req", "pmu_rd_l1_instr" };
	static const char *const L1_WR[2] = { "l1_write_req", "pmu_wr_l1_instr" };
	const uint32_t valid[3] = { 16, 16, 1 };
	/* Expected sums over a function's 3 rows. */
	uint64_t rd[4] = { 0 }, wr[4] = { 0 }, l1r[4] = { 0 }, l1w[4] = { 0 };
	for (int b = 0; b < 3; b++) {
		/* QK: qi [M,D] bf16 + kj [S,D] bf16 in; sij [M,S] fp32 out. */
		rd[0] += reqs(M * D * 2) + reqs(S * D * 2);
		wr[0] += reqs(M * S * 4);
		l1w[0] += reqs(M * D * 2) + reqs(S * D * 2); /* copy_in to L1 */
		l1r[0] += reqs(M * D * 2) + reqs(S * D * 2); /* load_l0 from L1 */
		/* SF: sij [M,valid] fp32 in; pij [M,S] bf16, mij, lij [M,1] fp32 out. */
		rd[1] += reqs((uint64_t)M * valid[b] * 4);
		wr[1] += reqs(M * S * 2) + 2 * reqs(M * 4);
		/* PV: pij [M,S] bf16 + vj [S,D] bf16 in; oi_new [M,D] fp32 out. */
		rd[2] += reqs(M * S * 2) + reqs(S * D * 2);
		wr[2] += reqs(M * D * 4);
		l1w[2] += reqs(M * S * 2) + reqs(S * D * 2);
		l1r[2] += reqs(M * S * 2) + reqs(S * D * 2);
		/* UP: mij, lij, oi_new in (+ mi, li, oi unless first); mi, li,
		 * oi out (+ out_v when last). */
		rd[3] += 2 * reqs(M * 4) + reqs(M * D * 4);
		if (b > 0)
			rd[3] += 2 * reqs(M * 4) + reqs(M * D * 4);
		wr[3] += 2 * reqs(M * 4) + reqs(M * D * 4);
		if (b == 2)
			wr[3] += reqs(M * D * 4);
	}
	for (int p = 0; p < 2; p++) {
		struct tp_run_result *r = calloc(1, sizeof(*r));
		struct csv *c = malloc(sizeof(*c));
		assert_int_equal(run_pa(PLATS[p], 4, 1, 0, r), 0);
		load_csv(r->pmu_csv, c);
		int crd = col(c, GM_RD[p]), cwr = col(c, GM_WR[p]);
		int cl1r = col(c, L1_RD[p]), cl1w = col(c, L1_WR[p]);
		assert_true(crd > 0 && cwr > 0 && cl1r > 0 && cl1w > 0);
		uint64_t g_rd[4] = { 0 }, g_wr[4] = { 0 }, g_l1r[4] = { 0 }, g_l1w[4] = { 0 };
		for (int i = 0; i < c->nrows; i++) {
			uint64_t f = c->v[i][3];
			g_rd[f] += c->v[i][crd];
			g_wr[f] += c->v[i][cwr];
			g_l1r[f] += c->v[i][cl1r];
			g_l1w[f] += c->v[i][cl1w];
			if (p == 0) { /* a2a3: l2 requests are the GM requests too */
				assert_int_equal(c->v[i][col(c, "l2_read_req")], c->v[i][crd]);
				assert_int_equal(c->v[i][col(c, "l2_write_req")], c->v[i][cwr]);
			}
		}
		for (int f = 0; f < 4; f++) {
			assert_int_equal(g_rd[f], rd[f]);
			assert_int_equal(g_wr[f], wr[f]);
			assert_int_equal(g_l1r[f], l1r[f]);
			assert_int_equal(g_l1w[f], l1w[f]);
		}
		free(c);
		free(r);
	}
}

/* ---- bad event types (spec §1.4, §8) ------------------------------------ */

/* Run a2a3sim with the flag value @flag and the environment @env (NULL:
 * unset; @alias: use SIMPLER_PMU_EVENT_TYPE); return the captured stderr. */
static char *run_env(int flag, const char *env, bool alias, int rounds, struct tp_run_result *r)
{
	if (env)
		setenv(alias ? TP_PMU_ENV_EVENT_TYPE_ALIAS : TP_PMU_ENV_EVENT_TYPE, env, 1);
	struct uh_capture cap;
	assert_int_equal(uh_capture_stderr_begin(&cap), 0);
	int rc = run_pa("a2a3sim", flag, rounds, 0, r);
	char *err = uh_capture_stderr_end(&cap);
	unsetenv(TP_PMU_ENV_EVENT_TYPE);
	unsetenv(TP_PMU_ENV_EVENT_TYPE_ALIAS);
	assert_int_equal(rc, 0);
	assert_true(r->pass);
	return err;
}

static void test_bad_flag_values(void **state)
{
	(void)state;
	struct tp_run_result *r = calloc(1, sizeof(*r));
	/* 0: off, silent. */
	char *err = run_env(0, NULL, false, 1, r);
	assert_false(r->pmu);
	assert_false(r->pmu_csv[0]);
	assert_null(strstr(err, "Invalid PMU event type"));
	free(err);
	/* 3 and 9: on, PIPE_UTILIZATION with the WARN. */
	const int bad[2] = { 3, 9 };
	for (int i = 0; i < 2; i++) {
		err = run_env(bad[i], NULL, false, 1, r);
		assert_true(r->pmu);
		assert_int_equal(r->pmu_event_type, 2);
		char want[96];
		snprintf(want, sizeof(want),
			 "Invalid PMU event type %d, using default (PIPE_UTILIZATION=2)", bad[i]);
		assert_non_null(strstr(err, want));
		assert_int_equal(r->pmu_rows, 12);
		free(err);
	}
	/* -1: resolved (WARN printed through %u) but PMU stays off. */
	err = run_env(-1, NULL, false, 1, r);
	assert_false(r->pmu);
	assert_non_null(strstr(err, "Invalid PMU event type 4294967295, using default"));
	free(err);
	/* --rounds > 1: off, the spec's WARN line word for word (§8.3). */
	err = run_env(4, NULL, false, 2, r);
	assert_false(r->pmu);
	assert_int_equal(r->rounds, 2);
	assert_non_null(strstr(err, "[taskprof] WARN  PMU disabled: --rounds > 1\n"));
	free(err);
	free(r);
}

static void test_env_override(void **state)
{
	(void)state;
	struct tp_run_result *r = calloc(1, sizeof(*r));
	/* A valid value replaces the flag's choice. */
	char *err = run_env(5, "4", false, 1, r);
	assert_int_equal(r->pmu_event_type, 4);
	assert_non_null(strstr(err, "PMU event type set to 4 from TASKPROF_PMU_EVENT_TYPE"));
	free(err);
	err = run_env(2, "7", true, 1, r);
	assert_int_equal(r->pmu_event_type, 7);
	assert_non_null(strstr(err, "from SIMPLER_PMU_EVENT_TYPE"));
	free(err);
	/* Invalid values keep the flag's choice (the WARN says "default"). */
	const char *bad[5] = { "0", "3", "9", "-1", "abc" };
	for (int i = 0; i < 5; i++) {
		err = run_env(5, bad[i], false, 1, r);
		assert_true(r->pmu);
		assert_int_equal(r->pmu_event_type, 5);
		char want[96];
		snprintf(want, sizeof(want), "Invalid TASKPROF_PMU_EVENT_TYPE=%s, using default",
			 bad[i]);
		assert_non_null(strstr(err, want));
		free(err);
	}
	/* The environment never enables PMU by itself. */
	err = run_env(0, "4", false, 1, r);
	assert_false(r->pmu);
	assert_false(r->pmu_csv[0]);
	free(err);
	free(r);
}

/* ---- the foreign writer and the lease (seed 000 §7.0) --------------------- */

#define SPIN_NS 2000000ull /* per task */
#define SPIN_TASKS 4       /* per AIV core */

/* Spins SPIN_NS of its thread's CPU time: the simulated core's time, which
 * its PMU window counts (a wall-clock spin would count less whenever the
 * host ran another thread meanwhile). */
static void k_spin(int64_t *args)
{
	(void)args;
	uint64_t t0 = tp_thread_cpu_ns();
	while (tp_thread_cpu_ns() - t0 < SPIN_NS)
		;
}

static const struct tp_kernel_entry spin_kernels[1] = { { k_spin, TP_CORE_AIV, "SPIN" } };

static int spin_orch(struct tp_orch *o, void *arg)
{
	(void)arg;
	for (int i = 0; i < 2 * SPIN_TASKS; i++) {
		struct tp_task_args a;
		tp_args_init(&a);
		int rc = tp_submit_aiv(o, 0, &a, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

struct spin_run {
	struct tp_run_result res; /* pmu_* fields */
	struct csv csv;
	uint64_t resets, refused;
};

/* One block (1 AIC + 2 AIV), 1 scheduler: 2·SPIN_TASKS spinning AIV tasks
 * under PMU_PIPE_UTILIZATION with a foreign writer @fcfg; @lease NULL:
 * no lease; @other: another owner holds channel 53 first. */
static void spin_run(const struct tp_pmu_foreign_config *fcfg, struct wk_pmu_lease *lease,
		     bool other, struct spin_run *out)
{
	memset(out, 0, sizeof(*out));
	struct tp_device_config dc = { .platform = "a2a3sim", .block_dim = 1,
				       .aicpu_threads = 2, .device_id = 5 };
	struct tp_device *dev = NULL, *dev2 = NULL;
	assert_int_equal(tp_device_create(&dc, &dev), 0);
	if (other) {
		assert_int_equal(tp_device_create(&dc, &dev2), 0);
		assert_int_equal(tp_drv_lease_start(dev2, TP_DRV_PROF_CHANNEL_FFTS, 0xbeef, 0), 0);
	}
	struct wk_pmu *p = NULL;
	assert_int_equal(wk_pmu_open(&p, dev, 2, false, 2, 77, g_root, lease), 0);
	struct tp_pmu_foreign *f = NULL;
	assert_int_equal(tp_pmu_foreign_start(dev, fcfg, &f), 0);
	struct tp_sched_hooks h = { 0 };
	struct tp_engine_config ec = { .dev = dev, .kernels = spin_kernels, .num_kernels = 1 };
	wk_pmu_wire(p, &h, &ec);
	struct tp_engine_result er;
	assert_int_equal(tp_engine_run(&ec, spin_orch, NULL, &er), 0);
	assert_int_equal(er.max_outstanding_per_core, 1);
	out->resets = tp_pmu_foreign_resets(f);
	out->refused = tp_pmu_foreign_refused(f);
	tp_pmu_foreign_stop(f);
	assert_int_equal(wk_pmu_finish(p, &out->res), 0);
	wk_pmu_close(p);
	if (out->res.pmu_csv[0])
		load_csv(out->res.pmu_csv, &out->csv);
	if (other) {
		assert_int_equal(tp_drv_lease_stop(dev2, TP_DRV_PROF_CHANNEL_FFTS, 0xbeef), 0);
		tp_device_close(dev2);
	}
	tp_device_close(dev);
	assert_false(tp_drv_lease_held(5, TP_DRV_PROF_CHANNEL_FFTS));
}

/* The expected total of one spinning task, in core cycles (1.8 GHz). */
static const uint64_t SPIN_CYCLES = SPIN_NS * 18 / 10;

/* Per AIV core: the rows of its tasks, in order. */
static void check_aiv_notes(const struct tp_run_result *r, uint32_t close_code)
{
	/* Cores 1 and 2 are the AIVs of cluster 0; core 0 (AIC) ran nothing. */
	for (int k = 1; k <= 2; k++) {
		assert_int_equal(r->pmu_note[k].code, TP_PMU_NOTE_ENABLED);
		assert_int_equal(r->pmu_note_close[k].code, close_code);
	}
}

static void test_foreign_writer_no_lease(void **state)
{
	(void)state;
	/* Deterministic: each core's PMU_CTRL_0 is reset right after its 2nd
	 * and every later gate open, i.e. from its second task on. */
	struct tp_pmu_foreign_config fc = { .after_gate_opens = 2 };
	struct spin_run *s = malloc(sizeof(*s));
	spin_run(&fc, NULL, false, s);
	assert_false(s->res.pmu_lease_held);
	assert_true(s->resets > 0);
	check_aiv_notes(&s->res, TP_PMU_NOTE_LOST);
	assert_int_equal(s->res.pmu_note_close[1].ctrl0, TP_PMU_CTRL_RESTING);
	assert_int_equal(s->csv.nrows, 2 * SPIN_TASKS);
	int seen[3] = { 0 }, vec = col(&s->csv, "vec_busy_cycles");
	assert_true(vec > 0);
	for (int i = 0; i < s->csv.nrows; i++) {
		int core = (int)s->csv.v[i][1];
		assert_true(core == 1 || core == 2);
		uint64_t total = s->csv.v[i][5];
		if (seen[core]++ == 0)
			assert_true(total >= SPIN_CYCLES * 9 / 10); /* before the first reset */
		else
			assert_true(total < SPIN_CYCLES / 10); /* stopped counting */
	}
	free(s);
}

static void test_foreign_writer_other_owner(void **state)
{
	(void)state;
	/* Another owner holds channel 53: the lease gets -10 and collection
	 * proceeds without it (one WARN line, the run does not fail). The
	 * channel being started is what protects, whoever started it, so the
	 * other owner's channel still holds the resets off. */
	struct tp_pmu_foreign_config fc = { .after_gate_opens = 1 };
	struct wk_pmu_lease lease = { 0 };
	struct spin_run *s = malloc(sizeof(*s));
	struct uh_capture cap;
	assert_int_equal(uh_capture_stderr_begin(&cap), 0);
	spin_run(&fc, &lease, true, s);
	char *err = uh_capture_stderr_end(&cap);
	assert_non_null(strstr(err, "held by another owner (-10)"));
	free(err);
	assert_false(s->res.pmu_lease_held);
	assert_int_equal(lease.refs, 0);
	assert_int_equal(s->resets, 0);
	check_aiv_notes(&s->res, TP_PMU_NOTE_HELD);
	assert_int_equal(s->csv.nrows, 2 * SPIN_TASKS);
	for (int i = 0; i < s->csv.nrows; i++)
		assert_true(s->csv.v[i][5] >= SPIN_CYCLES * 9 / 10);
	free(s);
}

static void test_foreign_writer_with_lease(void **state)
{
	(void)state;
	/* Both sources: a reset at every gate open and a background one every
	 * 200 µs. Channel 53 held: every attempt refused. */
	struct tp_pmu_foreign_config fc = { .after_gate_opens = 1, .period_us = 200 };
	struct wk_pmu_lease lease = { 0 };
	struct spin_run *s = malloc(sizeof(*s));
	spin_run(&fc, &lease, false, s);
	assert_true(s->res.pmu_lease_held);
	assert_int_equal(lease.refs, 0);
	assert_false(lease.held);
	assert_int_equal(s->resets, 0);
	assert_true(s->refused > 0);
	check_aiv_notes(&s->res, TP_PMU_NOTE_HELD);
	assert_int_equal(s->csv.nrows, 2 * SPIN_TASKS);
	/* Per row, never in aggregate (seed §7.0). */
	for (int i = 0; i < s->csv.nrows; i++)
		assert_true(s->csv.v[i][5] >= SPIN_CYCLES * 9 / 10);
	free(s);
}

/* The lease is reference-counted: the channel stays started until the
 * last of two overlapping collections releases it. */
/* With PMU on no core ever holds two tasks, under both runtimes; with it
 * off, the same spinning graph (4 tasks per AIV core, all ready at once)
 * is dual-issued (pending tasks placed behind running ones). */
/*
 * Every row names the kernel that ran on its core: synthetic on one cluster
 * (1 AIC + 2 AIV) spreads its 128-block SPMD AIV task over both AIV cores
 * (1 and 2) and runs MIX tasks on all three; each row's func_id must be a
 * kernel of the callable whose core type is the row's (it once came from
 * the core's subslot, so rows on the second AIV core read -1).
 */
static void test_func_id_every_core(void **state)
{
	(void)state;
	const struct tp_callable *cal = tp_callable_find("synthetic");
	assert_non_null(cal);
	for (int p = 0; p < 2; p++) {
		struct tp_worker_config cfg = { .platform = PLATS[p], .output_root = g_root,
						.pmu_event_type = 2, .block_dim = 1 };
		struct tp_worker *w = tp_worker_open(&cfg);
		assert_non_null(w);
		struct tp_run_result *r = calloc(1, sizeof(*r));
		assert_int_equal(tp_worker_run(w, cal, NULL, r), 0);
		tp_worker_close(w);
		assert_true(r->pass);
		FILE *f = fopen(r->pmu_csv, "r");
		assert_non_null(f);
		char line[1024];
		assert_non_null(fgets(line, sizeof(line), f)); /* header */
		uint64_t rows = 0, per_core[3] = { 0 };
		while (fgets(line, sizeof(line), f)) {
			/* thread_id,core_id,task_id,func_id,core_type,... */
			char *save, *tok = strtok_r(line, ",", &save);
			uint64_t v[5];
			for (int k = 0; k < 5; k++) {
				assert_non_null(tok);
				v[k] = strtoull(tok, NULL, 0);
				tok = strtok_r(NULL, ",", &save);
			}
			uint64_t core = v[1], func = v[3], type = v[4];
			assert_true(core < 3);
			per_core[core]++;
			assert_true(func < (uint64_t)cal->n_kernels);
			assert_int_equal(type, core == 0 ? 0 : 1);
			assert_int_equal(type, (uint64_t)cal->kernels[func].core_type);
			rows++;
		}
		fclose(f);
		assert_int_equal(rows, r->subtasks);
		assert_true(per_core[0] > 0 && per_core[1] > 0 && per_core[2] > 0);
		free(r);
	}
}

static void test_single_issue(void **state)
{
	(void)state;
	static const char *const RT[2] = { TP_RUNTIME_TRB, TP_RUNTIME_HBG };
	for (int p = 0; p < 2; p++) {
		for (int k = 0; k < 2; k++) {
			struct tp_worker_config cfg = { .platform = PLATS[p], .runtime = RT[k],
							.output_root = g_root,
							.pmu_event_type = 2, .block_dim = 1 };
			struct tp_worker *w = tp_worker_open(&cfg);
			assert_non_null(w);
			struct tp_run_result *r = calloc(1, sizeof(*r));
			assert_int_equal(tp_worker_run(w, tp_callable_find("paged_attention"),
						       "CaseSmall1", r), 0);
			tp_worker_close(w);
			assert_true(r->pass);
			assert_true(r->pmu);
			assert_int_equal(r->pending_dispatches, 0);
			assert_int_equal(r->max_outstanding_per_core, 1);
			assert_int_equal(r->pmu_rows, 12);
			assert_int_equal(r->pmu_dropped + r->pmu_mismatch, 0);
			free(r);
		}
	}
	/* The engine directly: PMU off → dual issue, on → single issue. With
	 * PMU off a pending dispatch needs the scheduler to run while a task
	 * spins (2 ms); on a loaded 2-core machine a run can miss that window,
	 * so the off case retries (up to 10 runs) until one shows it. */
	int off_tries = 0;
	for (int on = 0; on < 2; on++) {
		struct tp_device_config dc = { .platform = "a2a3sim", .block_dim = 1,
					       .aicpu_threads = 2, .device_id = 7 };
		struct tp_device *dev = NULL;
		assert_int_equal(tp_device_create(&dc, &dev), 0);
		struct wk_pmu *p = NULL;
		struct tp_sched_hooks h = { 0 };
		struct tp_engine_config ec = { .dev = dev, .kernels = spin_kernels,
					       .num_kernels = 1, .hooks = &h };
		if (on) {
			assert_int_equal(wk_pmu_open(&p, dev, 2, false, 2, 1, g_root, NULL), 0);
			wk_pmu_wire(p, &h, &ec);
		}
		struct tp_engine_result er;
		assert_int_equal(tp_engine_run(&ec, spin_orch, NULL, &er), 0);
		if (on) {
			assert_int_equal(er.pending_dispatches, 0);
			assert_int_equal(er.max_outstanding_per_core, 1);
			struct tp_run_result *r = calloc(1, sizeof(*r));
			assert_int_equal(wk_pmu_finish(p, r), 0);
			assert_int_equal(r->pmu_rows, 2 * SPIN_TASKS);
			free(r);
			wk_pmu_close(p);
		} else {
			assert_true(er.max_outstanding_per_core <= 2);
			if (er.pending_dispatches == 0 && ++off_tries < 10) {
				tp_device_close(dev);
				on--; /* run the PMU-off case again */
				continue;
			}
			assert_true(er.pending_dispatches > 0);
			assert_int_equal(er.max_outstanding_per_core, 2);
		}
		tp_device_close(dev);
	}
}

static void test_lease_refcount(void **state)
{
	(void)state;
	struct tp_device_config dc = { .platform = "a2a3sim", .block_dim = 1,
				       .aicpu_threads = 2, .device_id = 6 };
	struct tp_device *dev = NULL;
	assert_int_equal(tp_device_create(&dc, &dev), 0);
	struct wk_pmu_lease l = { 0 };
	assert_true(wk_pmu_lease_acquire(&l, dev));
	assert_true(wk_pmu_lease_acquire(&l, dev));
	assert_int_equal(l.refs, 2);
	assert_int_equal(tp_drv_lease_holder(6, TP_DRV_PROF_CHANNEL_FFTS), l.owner);
	wk_pmu_lease_release(&l, dev);
	assert_true(tp_drv_lease_held(6, TP_DRV_PROF_CHANNEL_FFTS));
	wk_pmu_lease_release(&l, dev);
	assert_false(tp_drv_lease_held(6, TP_DRV_PROF_CHANNEL_FFTS));
	wk_pmu_lease_release(&l, dev); /* extra release: no-op */
	assert_int_equal(l.refs, 0);
	tp_device_close(dev);
}

int main(void)
{
	/* The INFO lines (env override, rounds) are asserted. */
	tp_log_set_threshold(TP_LOG_INFO);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_event_type, wp_setup_root, wp_teardown_root),
		cmocka_unit_test_setup_teardown(test_run_epoch_process_unique, wp_setup_root, wp_teardown_root),
		cmocka_unit_test_setup_teardown(test_pipe_utilization_truth, wp_setup_root, wp_teardown_root),
		cmocka_unit_test_setup_teardown(test_memory_exact, wp_setup_root, wp_teardown_root),
		cmocka_unit_test_setup_teardown(test_func_id_every_core, wp_setup_root, wp_teardown_root),
		cmocka_unit_test_setup_teardown(test_single_issue, wp_setup_root, wp_teardown_root),
		cmocka_unit_test_setup_teardown(test_bad_flag_values, wp_setup_root, wp_teardown_root),
		cmocka_unit_test_setup_teardown(test_env_override, wp_setup_root, wp_teardown_root),
		cmocka_unit_test_setup_teardown(test_foreign_writer_no_lease, wp_setup_root, wp_teardown_root),
		cmocka_unit_test_setup_teardown(test_foreign_writer_other_owner, wp_setup_root, wp_teardown_root),
		cmocka_unit_test_setup_teardown(test_foreign_writer_with_lease, wp_setup_root, wp_teardown_root),
		cmocka_unit_test_setup_teardown(test_lease_refcount, wp_setup_root, wp_teardown_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
