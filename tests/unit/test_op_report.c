/* SPDX-License-Identifier: MIT */
/* Unit tests of op/report: the merge (U3 of spec/opprof.md §4.14) and a
 * report written from a synthetic launch directory (§4.12). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <locale.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "op/config.h"
#include "op/groups.h"
#include "op/report/report.h"
#include "taskprof/kernel.h"
#include "taskprof/rt.h"
#include "unit_helpers.h"

static char *dir;
static char ldir[4096];

static int setup(void **state)
{
	(void)state;
	dir = uh_mkdtemp();
	if (!dir)
		return -1;
	snprintf(ldir, sizeof(ldir), "%s/device0/vec_add/3", dir);
	char dump[4200];
	snprintf(dump, sizeof(dump), "%s/dump", ldir);
	return tp_mkdir_p(dump, 0755);
}

static int teardown(void **state)
{
	(void)state;
	uh_rm_rf(dir);
	dir = NULL;
	return 0;
}

/* ---- synthetic records ---- */

static struct tp_op_rec rec_block(uint32_t pass, uint32_t core, int32_t core_id, uint32_t block,
				  uint64_t cycles, uint64_t t0, uint64_t t1, int n,
				  const uint16_t *ids, const uint64_t *vals)
{
	struct tp_op_rec r;
	memset(&r, 0, sizeof(r));
	r.magic = TP_OP_REC_MAGIC;
	r.version = TP_OP_REC_VERSION;
	r.kind = TP_OP_REC_BLOCK;
	r.size = sizeof(r);
	r.channel = TP_DRV_CH_AICORE_PMU;
	r.pass = pass;
	r.core_type = core;
	r.core_id = core_id;
	r.block_id = block;
	r.seq = 1;
	r.total_cycles = cycles;
	r.t_start = t0;
	r.t_end = t1;
	r.n_events = (uint32_t)n;
	for (int i = 0; i < TP_DRV_PROF_MAX_EVENTS; i++) {
		r.event_id[i] = i < n ? ids[i] : TP_EV_NONE;
		r.value[i] = i < n ? vals[i] : 0;
	}
	return r;
}

static struct tp_op_rec rec_other(uint32_t pass, uint16_t kind, uint64_t t0, uint64_t t1,
				  uint32_t block_dim, uint64_t extra)
{
	struct tp_op_rec r;
	memset(&r, 0, sizeof(r));
	r.magic = TP_OP_REC_MAGIC;
	r.version = TP_OP_REC_VERSION;
	r.kind = kind;
	r.size = sizeof(r);
	r.pass = pass;
	r.core_id = -1;
	r.block_id = block_dim;
	r.total_cycles = extra;
	r.t_start = t0;
	r.t_end = t1;
	for (int i = 0; i < TP_DRV_PROF_MAX_EVENTS; i++)
		r.event_id[i] = TP_EV_NONE;
	return r;
}

/* The plan of the synthetic launch: a2a3, 3 passes. */
static void plan3(struct tp_op_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->arch = TP_PMU_ARCH_A2A3;
	p->slots = 8;
	p->npasses = 3;
	for (int i = 0; i < 3; i++)
		for (int c = 0; c < 2; c++)
			for (int s = 0; s < TP_DRV_PROF_MAX_EVENTS; s++)
				p->pass[i].ev[c][s] = TP_EV_NONE;
	static const uint16_t p0c[] = { 0x0a, 0x09 }, p0v[] = { 0x08, 0x09 };
	static const uint16_t p1c[] = { 0x12, 0x13 }, p1v[] = { 0x12, 0x13, 0x08 };
	static const uint16_t p2c[] = { 0x1b }, p2v[] = { 0x15 };
	memcpy(p->pass[0].ev[0], p0c, sizeof(p0c));
	p->pass[0].n[0] = 2;
	memcpy(p->pass[0].ev[1], p0v, sizeof(p0v));
	p->pass[0].n[1] = 2;
	memcpy(p->pass[1].ev[0], p1c, sizeof(p1c));
	p->pass[1].n[0] = 2;
	memcpy(p->pass[1].ev[1], p1v, sizeof(p1v));
	p->pass[1].n[1] = 3;
	memcpy(p->pass[2].ev[0], p2c, sizeof(p2c));
	p->pass[2].n[0] = 1;
	memcpy(p->pass[2].ev[1], p2v, sizeof(p2v));
	p->pass[2].n[1] = 1;
}

/* Pass 0 and 1 of a mix launch: block 0 on AIV core 2, block 1 on AIC
 * core 0; pass 1 reads AIV 0x08 again with a different value. */
static size_t pass_recs(uint32_t pass, struct tp_op_rec *out)
{
	size_t n = 0;
	if (pass == 0) {
		static const uint16_t vi[] = { 0x08, 0x09 }, ci[] = { 0x0a, 0x09 };
		static const uint64_t vv[] = { 900, 180 }, cv[] = { 1800, 360 };
		out[n++] = rec_block(0, 1, 2, 0, 1800, 1000, 2000, 2, vi, vv);
		out[n++] = rec_block(0, 0, 0, 1, 3600, 1000, 1800, 2, ci, cv);
		out[n++] = rec_other(0, TP_OP_REC_LAUNCH, 900, 2500, 2, 0);
		out[n++] = rec_other(0, TP_OP_REC_END_OF_PASS, 2600, 2600, 0, 0);
	} else if (pass == 1) {
		static const uint16_t vi[] = { 0x12, 0x13, 0x08 }, ci[] = { 0x12, 0x13 };
		static const uint64_t vv[] = { 100, 50, 950 }, cv[] = { 200, 0 };
		out[n++] = rec_block(1, 0, 0, 1, 3600, 5000, 5800, 2, ci, cv);
		out[n++] = rec_block(1, 1, 2, 0, 1980, 5000, 6100, 3, vi, vv);
		out[n++] = rec_other(1, TP_OP_REC_LAUNCH, 5000, 6800, 2, 0);
		out[n++] = rec_other(1, TP_OP_REC_END_OF_PASS, 6900, 6900, 0, 0);
	}
	return n;
}

static void write_pass(uint32_t pass)
{
	struct tp_op_rec recs[8];
	size_t n = pass_recs(pass, recs);
	char path[4300];
	snprintf(path, sizeof(path), "%s/dump/pass_%u.bin", ldir, pass);
	assert_int_equal(tp_write_file_atomic(path, recs, n * sizeof(recs[0])), 0);
}

static void write_text(const char *rel, const char *text)
{
	char path[4300];
	snprintf(path, sizeof(path), "%s/%s", ldir, rel);
	assert_int_equal(tp_write_file_atomic(path, text, strlen(text)), 0);
}

static char *read_text(const char *rel)
{
	char path[4300], *t = NULL;
	snprintf(path, sizeof(path), "%s/%s", ldir, rel);
	if (tp_read_file(path, &t, NULL))
		fail_msg("cannot read %s", path);
	return t;
}

/* The cell of column @col in data row @row (0-based) of CSV @text (no
 * quoted fields in these files). */
static const char *cell(const char *text, int row, const char *col)
{
	static char out[128];
	const char *nl = strchr(text, '\n');
	int idx = -1, i = 0;
	for (const char *p = text; p < nl; i++) {
		const char *e = p;
		while (e < nl && *e != ',')
			e++;
		if ((size_t)(e - p) == strlen(col) && !strncmp(p, col, (size_t)(e - p)))
			idx = i;
		p = e + 1;
	}
	if (idx < 0)
		fail_msg("no column %s", col);
	const char *p = nl + 1;
	for (int r = 0; r < row; r++) {
		p = strchr(p, '\n');
		if (!p)
			fail_msg("no row %d", row);
		p++;
	}
	for (i = 0; i < idx; i++) {
		p = strpbrk(p, ",\n");
		if (!p || *p == '\n')
			fail_msg("row %d too short", row);
		p++;
	}
	size_t n = strcspn(p, ",\n");
	snprintf(out, sizeof(out), "%.*s", (int)n, p);
	return out;
}

static int count_lines(const char *t)
{
	int n = 0;
	for (; *t; t++)
		n += *t == '\n';
	return n;
}

/* ---- U3: the merge ---- */

static void test_merge_union_and_last_pass(void **state)
{
	(void)state;
	struct tp_op_plan *plan = malloc(sizeof(*plan));
	assert_non_null(plan);
	plan3(plan);
	struct tp_op_merge m;
	assert_int_equal(tp_op_merge_init(&m, 3), 0);
	struct tp_op_rec recs[8];
	for (uint32_t p = 0; p < 2; p++) {
		size_t n = pass_recs(p, recs);
		assert_int_equal(tp_op_merge_add_records(&m, recs, n, p, plan, "mem"), 0);
	}
	assert_int_equal(m.nblocks, 2);
	uint64_t v;
	/* Union: block 0's AIV events of both passes. */
	assert_true(tp_op_merge_value(&m, 0, 0, TP_OP_AIV, 0x09, &v));
	assert_int_equal(v, 180);
	assert_true(tp_op_merge_value(&m, 0, 0, TP_OP_AIV, 0x12, &v));
	assert_int_equal(v, 100);
	assert_true(tp_op_merge_value(&m, 0, 0, TP_OP_AIV, 0x13, &v));
	assert_int_equal(v, 50);
	assert_true(tp_op_merge_value(&m, 1, 0, TP_OP_AIC, 0x0a, &v));
	assert_int_equal(v, 1800);
	assert_true(tp_op_merge_value(&m, 1, 0, TP_OP_AIC, 0x13, &v));
	assert_int_equal(v, 0);
	/* Core types do not mix: block 0 never ran on AIC. */
	assert_false(tp_op_merge_value(&m, 0, 0, TP_OP_AIC, 0x09, &v));
	/* Duplicate with a different value: the first pass's kept, flagged. */
	assert_true(tp_op_merge_value(&m, 0, 0, TP_OP_AIV, 0x08, &v));
	assert_int_equal(v, 900);
	assert_int_equal(m.n_mismatch, 1);
	assert_non_null(strstr(m.warn, "block 0 sub-block 0 AIV event 0x08: pass 1 read 950, "
				       "pass 0 read 900; kept pass 0's value"));
	/* Cycles: the last pass wins. */
	const struct tp_op_mblock *b0 = tp_op_merge_find(&m, 0, 0);
	assert_non_null(b0);
	assert_true(b0->has_cycles[TP_OP_AIV]);
	assert_false(b0->has_cycles[TP_OP_AIC]);
	assert_int_equal(b0->total_cycles[TP_OP_AIV], 1980);
	assert_int_equal(b0->per_pass[0].total_cycles, 1800);
	assert_int_equal(b0->t_start, 5000);
	assert_int_equal(b0->core_id, 2);
	assert_true(m.launch[1].present);
	assert_int_equal(m.launch[1].t_end - m.launch[1].t_start, 1800);
	assert_int_equal(m.nraw, 9);
	/* Missing pass 2: N/A and a warning naming the groups. */
	assert_false(tp_op_merge_value(&m, 1, 0, TP_OP_AIC, 0x1b, &v));
	tp_op_merge_missing(&m, 2, plan, "d/dump/pass_2.bin");
	assert_non_null(strstr(m.warn, "pass 2 missing (d/dump/pass_2.bin): its 1 AIC and 1 AIV "
				       "events are N/A; groups affected: Memory, MemoryL0\n"));
	assert_int_equal(m.missing_groups, (1u << TP_OP_G_MEMORY) | (1u << TP_OP_G_MEMORY_L0));
	assert_false(m.pass_present[2]);
	tp_op_merge_fini(&m);

	/* Passes added out of order: still the first pass's value and the last
	 * pass's cycles. */
	assert_int_equal(tp_op_merge_init(&m, 3), 0);
	for (int p = 1; p >= 0; p--) {
		size_t n = pass_recs((uint32_t)p, recs);
		assert_int_equal(tp_op_merge_add_records(&m, recs, n, (uint32_t)p, plan, "mem"), 0);
	}
	assert_true(tp_op_merge_value(&m, 0, 0, TP_OP_AIV, 0x08, &v));
	assert_int_equal(v, 900);
	assert_int_equal(tp_op_merge_find(&m, 0, 0)->total_cycles[TP_OP_AIV], 1980);
	/* Not measured on purpose: only the absent pass 2's groups are N/A, and
	 * one line (not one per pass) is kept. */
	assert_int_equal(m.missing_groups, 0);
	tp_op_merge_unmeasured(&m, plan, "skipped");
	assert_int_equal(m.missing_groups, (1u << TP_OP_G_MEMORY) | (1u << TP_OP_G_MEMORY_L0));
	const char *last = strstr(m.warn, "not measured");
	assert_non_null(last);
	assert_string_equal(last, "not measured (status skipped): every event is N/A\n");
	assert_null(strstr(m.warn, "missing"));
	tp_op_merge_fini(&m);
	free(plan);
}

static void test_merge_bad_records(void **state)
{
	(void)state;
	struct tp_op_merge m;
	struct tp_op_rec recs[8];
	size_t n = pass_recs(0, recs);
	assert_int_equal(tp_op_merge_init(&m, 2), 0);
	struct {
		void (*mutate)(struct tp_op_rec *);
		const char *want;
	} cases[] = {
		{ NULL, NULL },
	};
	(void)cases;
	recs[1].magic = 0xdeadbeef;
	assert_int_equal(tp_op_merge_add_records(&m, recs, n, 0, NULL, "f.bin"), -EINVAL);
	assert_string_equal(tp_last_error(), "f.bin: record 1: bad magic 0xdeadbeef (expected "
					     "0x504f5054)");
	assert_int_equal(m.nblocks, 0); /* nothing of the bad file merged */
	assert_false(m.pass_present[0]);
	n = pass_recs(0, recs);
	recs[2].version = 7;
	assert_int_equal(tp_op_merge_add_records(&m, recs, n, 0, NULL, "f.bin"), -EINVAL);
	assert_string_equal(tp_last_error(), "f.bin: record 2: version 7, expected 1");
	n = pass_recs(0, recs);
	recs[0].size = 100;
	assert_int_equal(tp_op_merge_add_records(&m, recs, n, 0, NULL, "f.bin"), -EINVAL);
	assert_string_equal(tp_last_error(), "f.bin: record 0: size 100, expected 176");
	n = pass_recs(0, recs);
	recs[3].kind = 9;
	assert_int_equal(tp_op_merge_add_records(&m, recs, n, 0, NULL, "f.bin"), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "f.bin: record 3: kind 9, expected 1"));
	n = pass_recs(0, recs);
	recs[1].pass = 1;
	assert_int_equal(tp_op_merge_add_records(&m, recs, n, 0, NULL, "f.bin"), -EINVAL);
	assert_string_equal(tp_last_error(), "f.bin: record 1: pass 1 in the record, expected 0 "
					     "(the file's pass)");
	n = pass_recs(0, recs);
	recs[0].n_events = 11;
	assert_int_equal(tp_op_merge_add_records(&m, recs, n, 0, NULL, "f.bin"), -EINVAL);
	assert_string_equal(tp_last_error(), "f.bin: record 0: 11 events, max 10");
	n = pass_recs(0, recs);
	recs[0].core_type = 2;
	assert_int_equal(tp_op_merge_add_records(&m, recs, n, 0, NULL, "f.bin"), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "core_type 2"));
	assert_int_equal(tp_op_merge_add_records(&m, recs, n, 5, NULL, "f.bin"), -EINVAL);
	assert_int_equal(m.nblocks, 0);
	tp_op_merge_fini(&m);
}

static void test_merge_file_errors(void **state)
{
	(void)state;
	struct tp_op_merge m;
	struct tp_op_rec recs[8];
	size_t n = pass_recs(0, recs);
	char path[4300];
	snprintf(path, sizeof(path), "%s/dump/pass_0.bin", ldir);
	/* Truncated: two records and 5 bytes. */
	assert_int_equal(tp_write_file_atomic(path, recs, 2 * sizeof(recs[0]) + 5), 0);
	assert_int_equal(tp_op_merge_init(&m, 2), 0);
	assert_int_equal(tp_op_merge_add_file(&m, path, 0, NULL), -EINVAL);
	char want[4500];
	snprintf(want, sizeof(want), "%s: truncated: 357 bytes is not a whole number of 176-byte "
				     "records (record 2 is incomplete)", path);
	assert_string_equal(tp_last_error(), want);
	/* Missing. */
	snprintf(path, sizeof(path), "%s/dump/pass_1.bin", ldir);
	assert_int_equal(tp_op_merge_add_file(&m, path, 1, NULL), -ENOENT);
	/* Empty file: a pass with no record is present but empty. */
	assert_int_equal(tp_write_file_atomic(path, "", 0), 0);
	assert_int_equal(tp_op_merge_add_file(&m, path, 1, NULL), 0);
	assert_true(m.pass_present[1]);
	/* Records whose events are not the plan's: warned, own ids used. */
	struct tp_op_plan *plan = malloc(sizeof(*plan));
	assert_non_null(plan);
	plan3(plan);
	plan->pass[0].ev[1][0] = 0x4b;
	snprintf(path, sizeof(path), "%s/dump/pass_0.bin", ldir);
	assert_int_equal(tp_write_file_atomic(path, recs, n * sizeof(recs[0])), 0);
	assert_int_equal(tp_op_merge_add_file(&m, path, 0, plan), 0);
	assert_non_null(strstr(m.warn, "record 0 (block 0, AIV): its events are not the plan's pass 0 "
				       "row; the record's own event ids are used"));
	uint64_t v;
	assert_true(tp_op_merge_value(&m, 0, 0, TP_OP_AIV, 0x08, &v));
	tp_op_merge_fini(&m);
	free(plan);
	/* Dropped records are reported. */
	assert_int_equal(tp_op_merge_init(&m, 1), 0);
	recs[3].total_cycles = 4;
	assert_int_equal(tp_op_merge_add_records(&m, recs, n, 0, NULL, "x"), 0);
	assert_int_equal(m.eop_dropped[0], 4);
	assert_non_null(strstr(m.warn, "the driver dropped 4 records in pass 0"));
	tp_op_merge_fini(&m);
}

/* Corrupted records never crash the merge: each is refused or merged. */
static void test_merge_corruption_never_crashes(void **state)
{
	(void)state;
	struct tp_op_plan *plan = malloc(sizeof(*plan));
	assert_non_null(plan);
	plan3(plan);
	struct tp_op_rec good[8], recs[8];
	size_t n = pass_recs(1, good);
	uint32_t seed = 12345;
	int refused = 0, merged = 0;
	for (int iter = 0; iter < 3000; iter++) {
		memcpy(recs, good, n * sizeof(recs[0]));
		unsigned char *bytes = (unsigned char *)recs;
		for (int k = 0; k < 1 + iter % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % (n * sizeof(recs[0]));
			seed = seed * 1103515245u + 12345u;
			bytes[at] = (unsigned char)(seed >> 16);
		}
		struct tp_op_merge m;
		assert_int_equal(tp_op_merge_init(&m, 3), 0);
		int rc = tp_op_merge_add_records(&m, recs, n, 1, plan, "fuzz");
		assert_true(rc == 0 || rc == -EINVAL);
		if (rc)
			refused++;
		else
			merged++;
		/* Whatever was merged reads back without a crash. */
		for (size_t b = 0; b < m.nblocks; b++) {
			uint64_t v;
			(void)tp_op_merge_value(&m, m.blocks[b].block_id, m.blocks[b].sub_block,
						TP_OP_AIV, 0x08, &v);
		}
		tp_op_merge_fini(&m);
	}
	assert_true(refused > 0);
	assert_true(merged > 0);
	free(plan);
}

/* ---- a whole launch directory ---- */

static struct tp_op_config *make_cfg(void)
{
	struct tp_op_config *c = malloc(sizeof(*c));
	assert_non_null(c);
	tp_op_config_defaults(c);
	snprintf(c->output, sizeof(c->output), "%s", dir);
	snprintf(c->groups, sizeof(c->groups), "PipeUtilization,Memory,MemoryL0");
	plan3(&c->plan);
	return c;
}

static void write_launch(void)
{
	write_text("launch.txt", "name=vec_add\nblock_dim=2\ncores=any\npid=4242\ndevice=0\n"
				 "platform=a2a3sim\narch=a2a3\nsys_cnt_freq=1000000\n"
				 "core_freq_hz=1800000000\nreplay_mode=kernel\nwarm_up=1\npasses=3\n"
				 "passes_done=2\nstatus=ok\nnote=\nsnapshot_scope=all\n"
				 "snapshot_bytes=4096\nrange=\nfuture_key=whatever\n");
	write_pass(0);
	write_pass(1);
	write_text("dump/replay.txt",
		   "pass=0 restored_bytes=4096 output_hash=00000000000000aa wall_ns=5000 kernel_ns=1600000\n"
		   "pass=1 restored_bytes=4096 output_hash=00000000000000bb wall_ns=6000 kernel_ns=1800000\n");
	write_text("dump/instr.txt",
		   "# block core kind id name t_ticks cycles\n"
		   "0 2 block_begin 2 - 1000 0\n"
		   "0 2 mark 7 - 1100 0\n"
		   "0 2 scalar_begin 0 setup 1200 0\n"
		   "0 2 scalar_end 0 setup 1300 90\n"
		   "0 2 range_begin 3 - 1400 0\n"
		   "0 2 range_end 3 - 1600 0\n"
		   "0 2 scalar_begin 0 setup 1700 0\n"
		   "0 2 scalar_end 0 setup 1750 45\n"
		   "0 2 block_end 2 - 2000 0\n"
		   "1 0 block_begin 0 - 1000 0\n"
		   "1 0 mark 9 - 1500 0\n"
		   "1 0 block_end 0 - 1800 0\n"
		   "overflow 1 5\n");
}

static void test_report_files(void **state)
{
	(void)state;
	struct tp_op_config *c = make_cfg();
	write_launch();
	struct tp_op_launch_summary s;
	int rc = tp_op_report_launch(ldir, c, &s);
	if (rc)
		fail_msg("report: %s", tp_last_error());
	assert_string_equal(s.name, "vec_add");
	assert_int_equal(s.device, 0);
	assert_int_equal(s.k, 3);
	assert_int_equal(s.block_dim, 2);
	assert_true(s.duration_us > 1799.999 && s.duration_us < 1800.001);
	assert_int_equal(s.passes, 2);
	assert_false(s.replay_consistent);
	assert_string_equal(s.status, "degraded"); /* pass 2 missing */

	char *t = read_text("OpBasicInfo.csv");
	assert_string_equal(t, "Op Name,Op Type,Task Duration(us),Block Dim,Mix Block Dim,Device ID,"
			       "PID,Current Freq,Rated Freq,Replay Mode,Passes,Warm-up,Replay "
			       "Consistent\nvec_add,mix,1800.000,2,1,0,4242,1800,1800,kernel,2,1,No\n");
	free(t);

	t = read_text("PipeUtilization.csv");
	assert_int_equal(count_lines(t), 3);
	assert_string_equal(cell(t, 0, "block_id"), "0");
	assert_string_equal(cell(t, 0, "aic_time(us)"), "N/A");
	/* A group's time columns come from the pass that read its counters
	 * (pass 0 here: 1800 cycles), not the last pass (1980), so that a
	 * row's counters and time describe one execution. */
	assert_string_equal(cell(t, 0, "aiv_total_cycles"), "1800");
	assert_string_equal(cell(t, 0, "aiv_time(us)"), "1.000");      /* 1800 / 1.8 GHz */
	assert_string_equal(cell(t, 0, "aiv_vec_busy_cycles"), "900"); /* first pass kept */
	assert_string_equal(cell(t, 0, "aiv_scalar_busy_cycles"), "180");
	assert_string_equal(cell(t, 0, "aic_scalar_busy_cycles"), "N/A");
	assert_string_equal(cell(t, 0, "aiv_mte2_busy_cycles"), "N/A"); /* not planned */
	assert_string_equal(cell(t, 0, "aiv_vec_time(us)"), "0.500");   /* 900 / 1.8 GHz */
	/* Ratios divide by the cycles of the pass that read the event:
	 * 900 / 1800 (pass 0), not / 1980 (the reported last pass). */
	assert_string_equal(cell(t, 0, "aiv_vec_ratio"), "0.500000");
	assert_string_equal(cell(t, 0, "aiv_scalar_ratio"), "0.100000");
	assert_string_equal(cell(t, 0, "aic_cube_ratio"), "N/A");
	assert_string_equal(cell(t, 1, "block_id"), "1");
	assert_string_equal(cell(t, 1, "aic_total_cycles"), "3600");
	assert_string_equal(cell(t, 1, "aic_time(us)"), "2.000");
	assert_string_equal(cell(t, 1, "aiv_time(us)"), "N/A");
	assert_string_equal(cell(t, 1, "aic_cube_busy_cycles"), "1800");
	assert_string_equal(cell(t, 1, "aic_cube_ratio"), "0.500000");
	assert_string_equal(cell(t, 1, "aic_cube_time(us)"), "1.000");
	assert_string_equal(cell(t, 1, "aic_scalar_ratio"), "0.100000");
	free(t);

	t = read_text("Memory.csv");
	/* 200 requests x 32 B over 3600 cycles at 1.8 GHz (2 µs) = 3.2 GB/s. */
	assert_string_equal(cell(t, 1, "aic_main_mem_read_bw(GB/s)"), "3.200");
	assert_string_equal(cell(t, 1, "aic_read_main_memory_datas(KB)"), "6.250");
	assert_string_equal(cell(t, 1, "aic_main_mem_write_bw(GB/s)"), "0.000");
	assert_string_equal(cell(t, 1, "aic_l1_read_bw(GB/s)"), "N/A");
	/* 50 x 32 B over pass 1's 1980 cycles (1.1 µs) = 1.4545 GB/s. */
	assert_string_equal(cell(t, 0, "aiv_main_mem_write_bw(GB/s)"), "1.455");
	assert_string_equal(cell(t, 0, "aiv_main_read_req"), "100");
	assert_string_equal(cell(t, 0, "aiv_ub_read_req"), "N/A"); /* pass 2 missing */
	free(t);
	t = read_text("MemoryL0.csv");
	assert_string_equal(cell(t, 1, "aic_l0a_read_req"), "N/A");
	assert_string_equal(cell(t, 1, "aic_l0a_read_bw(GB/s)"), "N/A");
	free(t);
	char p[4300];
	snprintf(p, sizeof(p), "%s/L2Cache.csv", ldir);
	struct stat st;
	assert_int_not_equal(stat(p, &st), 0); /* not requested */

	t = read_text("RawEvents.csv");
	assert_int_equal(count_lines(t), 10);
	assert_non_null(strstr(t, "block_id,sub_block_id,core_type,pass,event_id,value\n"
				  "0,0,AIV,0,0x08,900\n0,0,AIV,0,0x09,180\n"
				  "0,0,AIV,1,0x12,100\n0,0,AIV,1,0x13,50\n0,0,AIV,1,0x08,950\n"
				  "1,0,AIC,0,0x0a,1800\n"));
	free(t);

	t = read_text("ReplayInfo.csv");
	assert_string_equal(t, "pass,aic_cycles_max,aiv_cycles_max,duration(us),restored_bytes,"
			       "output_hash,wall_ns,kernel_ns,cycle_deviation(%)\n"
			       "0,3600,1800,1600.000,4096,00000000000000aa,5000,1600000,9.091\n"
			       "1,3600,1980,1800.000,4096,00000000000000bb,6000,1800000,0.000\n"
			       "2,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n");
	free(t);

	t = read_text("Instrumentation.csv");
	assert_non_null(strstr(t, "block_id,core_id,seq,kind,id,name,time(us)\n"
				  "0,2,0,block_begin,2,-,0.000\n0,2,1,mark,7,-,100.000\n"
				  "0,2,2,scalar_begin,0,setup,200.000\n"));
	assert_non_null(strstr(t, "1,0,1,mark,9,-,500.000\n"));
	assert_int_equal(count_lines(t), 13);
	free(t);
	t = read_text("ScalarSections.csv");
	/* Two executions, 90 + 45 cycles, of block 0's 1800 pass-0 cycles. */
	assert_string_equal(t, "block_id,section,executions,cycles,share(%)\n0,setup,2,135,7.50\n");
	free(t);
	free(c);
}

static void test_report_json(void **state)
{
	(void)state;
	struct tp_op_config *c = make_cfg();
	write_launch();
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), 0);
	char path[4300];
	json_error_t jerr;
	snprintf(path, sizeof(path), "%s/summary.json", ldir);
	json_t *sum = json_load_file(path, 0, &jerr);
	if (!sum)
		fail_msg("summary.json: %s at line %d", jerr.text, jerr.line);
	assert_string_equal(json_string_value(json_object_get(json_object_get(sum, "launch"), "name")),
			    "vec_add");
	assert_true(json_is_false(json_object_get(json_object_get(sum, "launch"),
						  "replay_consistent")));
	json_t *passes = json_object_get(json_object_get(sum, "plan"), "passes");
	assert_int_equal(json_array_size(passes), 3);
	assert_true(json_is_false(json_object_get(json_array_get(passes, 2), "present")));
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(json_array_get(passes, 1), "aiv"), 2)), "0x08");
	json_t *blocks = json_object_get(sum, "blocks");
	assert_int_equal(json_array_size(blocks), 2);
	json_t *b0 = json_array_get(blocks, 0);
	assert_int_equal(json_integer_value(json_object_get(b0, "aiv_total_cycles")), 1980);
	assert_true(json_is_null(json_object_get(b0, "aic_total_cycles")));
	json_t *ev = json_object_get(b0, "events");
	bool saw_mismatch = false, saw_p1 = false;
	for (size_t i = 0; i < json_array_size(ev); i++) {
		json_t *e = json_array_get(ev, i);
		if (!strcmp(json_string_value(json_object_get(e, "id")), "0x08")) {
			assert_true(json_is_true(json_object_get(e, "mismatch")));
			assert_int_equal(json_integer_value(json_object_get(e, "value")), 900);
			/* read in pass 0, where the block ran 1800 cycles (its
			 * aiv_total_cycles, 1980, are the last pass's) */
			assert_int_equal(json_integer_value(json_object_get(e, "pass")), 0);
			assert_int_equal(json_integer_value(json_object_get(e, "pass_total_cycles")),
					 1800);
			saw_mismatch = true;
		}
		if (!strcmp(json_string_value(json_object_get(e, "id")), "0x12")) {
			assert_int_equal(json_integer_value(json_object_get(e, "pass")), 1);
			assert_int_equal(json_integer_value(json_object_get(e, "pass_total_cycles")),
					 1980);
			saw_p1 = true;
		}
	}
	assert_true(saw_mismatch);
	assert_true(saw_p1);
	json_t *pm = json_object_get(json_object_get(b0, "metrics"), "PipeUtilization");
	assert_true(fabs(json_real_value(json_object_get(pm, "aiv_vec_ratio")) - 0.5) < 1e-9);
	assert_true(json_is_null(json_object_get(pm, "aic_cube_ratio")));
	json_t *rep = json_object_get(sum, "replay");
	assert_int_equal(json_integer_value(json_object_get(rep, "duplicate_mismatches")), 1);
	assert_true(fabs(json_real_value(json_object_get(rep, "max_cycle_deviation_pct")) - 9.091) <
		    1e-9);
	json_t *warns = json_object_get(sum, "warnings");
	assert_int_equal(json_array_size(warns), 4);
	assert_non_null(strstr(json_string_value(json_array_get(warns, 2)),
			       "block 1: 5 instrumentation points did not fit"));
	assert_non_null(strstr(json_string_value(json_array_get(warns, 3)),
			       "output hashes differ across passes"));
	assert_non_null(strstr(json_string_value(json_array_get(warns, 1)),
			       "pass 2 missing"));
	assert_non_null(strstr(json_string_value(json_array_get(warns, 1)),
			       "groups affected: Memory, MemoryL0"));
	json_decref(sum);

	snprintf(path, sizeof(path), "%s/trace.json", ldir);
	json_t *tr = json_load_file(path, 0, &jerr);
	if (!tr)
		fail_msg("trace.json: %s at line %d", jerr.text, jerr.line);
	json_t *evs = json_object_get(tr, "traceEvents");
	assert_true(json_is_array(evs));
	int n_pass = 0, n_inst = 0, n_range = 0, n_scalar = 0, n_threads = 0;
	for (size_t i = 0; i < json_array_size(evs); i++) {
		json_t *e = json_array_get(evs, i);
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *cat = json_string_value(json_object_get(e, "cat"));
		const char *name = json_string_value(json_object_get(e, "name"));
		assert_int_equal(json_integer_value(json_object_get(e, "pid")), 4242);
		if (!strcmp(ph, "M") && !strcmp(name, "thread_name"))
			n_threads++;
		if (!strcmp(ph, "X") && !strcmp(cat, "pass")) {
			n_pass++;
			if (!strcmp(name, "pass 0") &&
			    json_integer_value(json_object_get(e, "tid")) == 1) {
				/* block 0, pass 0: at the origin, 1000 ticks at 1 MHz */
				assert_true(fabs(json_number_value(json_object_get(e, "ts"))) < 1e-9);
				assert_true(fabs(json_number_value(json_object_get(e, "dur")) - 1000.0) < 1e-9);
			}
			if (!strcmp(name, "pass 1"))
				assert_true(json_number_value(json_object_get(e, "ts")) >= 4000.0);
		}
		if (!strcmp(ph, "i")) {
			n_inst++;
			if (!strcmp(name, "mark 7"))
				assert_true(fabs(json_number_value(json_object_get(e, "ts")) - 100.0) < 1e-9);
		}
		if (!strcmp(ph, "X") && !strcmp(cat, "range")) {
			n_range++;
			assert_string_equal(name, "range 3");
			assert_true(fabs(json_number_value(json_object_get(e, "ts")) - 400.0) < 1e-9);
			assert_true(fabs(json_number_value(json_object_get(e, "dur")) - 200.0) < 1e-9);
		}
		if (!strcmp(ph, "X") && !strcmp(cat, "scalar")) {
			n_scalar++;
			assert_string_equal(name, "setup");
		}
	}
	assert_int_equal(n_threads, 2);
	assert_int_equal(n_pass, 4);
	assert_int_equal(n_inst, 2);
	assert_int_equal(n_range, 1);
	assert_int_equal(n_scalar, 2);
	json_decref(tr);
	free(c);
}

static void test_report_json_escaping(void **state)
{
	(void)state;
	struct tp_op_config *c = make_cfg();
	write_launch();
	write_text("launch.txt", "name=we\"ird\\na,me\ndevice=1\nblock_dim=1\npid=7\n"
				 "sys_cnt_freq=1000000\nnote=tab\there \x01 ctl \xc3\xa9 \xff\xc3 end\n"
				 "status=ok\n");
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), 0);
	char path[4300];
	json_error_t jerr;
	snprintf(path, sizeof(path), "%s/summary.json", ldir);
	json_t *sum = json_load_file(path, 0, &jerr);
	if (!sum)
		fail_msg("summary.json: %s", jerr.text);
	json_t *l = json_object_get(sum, "launch");
	assert_string_equal(json_string_value(json_object_get(l, "name")), "we\"ird\\na,me");
	/* Valid UTF-8 (é) passes, invalid bytes become U+FFFD. */
	assert_string_equal(json_string_value(json_object_get(l, "note")),
			    "tab\there \x01 ctl \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd end");
	json_decref(sum);
	snprintf(path, sizeof(path), "%s/trace.json", ldir);
	json_t *tr = json_load_file(path, 0, &jerr);
	assert_non_null(tr);
	json_decref(tr);
	char *t = read_text("OpBasicInfo.csv");
	assert_non_null(strstr(t, "\n\"we\"\"ird\\na,me\",mix,"));
	free(t);
	free(c);
}

static void test_report_errors(void **state)
{
	(void)state;
	struct tp_op_config *c = make_cfg();
	/* No launch.txt. */
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), -ENOENT);
	assert_non_null(strstr(tp_last_error(), "launch.txt: cannot read"));
	write_launch();
	/* A corrupt pass file: an error naming the file and the record. */
	struct tp_op_rec recs[8];
	size_t n = pass_recs(1, recs);
	recs[2].magic = 0x12345678;
	char path[4300];
	snprintf(path, sizeof(path), "%s/dump/pass_1.bin", ldir);
	assert_int_equal(tp_write_file_atomic(path, recs, n * sizeof(recs[0])), 0);
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), -EINVAL);
	char want[4500];
	snprintf(want, sizeof(want), "%s: record 2: bad magic 0x12345678", path);
	assert_non_null(strstr(tp_last_error(), want));
	/* Truncated. */
	assert_int_equal(tp_write_file_atomic(path, recs, 100), 0);
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "pass_1.bin: truncated: 100 bytes"));
	write_pass(1);
	/* Bad launch.txt / instr.txt / replay.txt lines name file:line. */
	write_text("launch.txt", "name=k\ndevice=0\nno equals sign\n");
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "launch.txt:3: expected key=value"));
	write_text("launch.txt", "name=k\ndevice=zero\n");
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "launch.txt:2: device: expected a non-negative"));
	write_text("launch.txt", "name=k\n");
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "launch.txt: missing key 'device'"));
	write_launch();
	write_text("dump/instr.txt", "# header\n0 2 block_begin 2 - 1000 0\n0 2 jump 1 - 1 0\n");
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "instr.txt:3: kind: expected block_begin"));
	write_text("dump/instr.txt", "0 2 mark 1 - 12\n");
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "instr.txt:1: expected 'block core kind id"));
	write_text("dump/instr.txt", "overflow x\n");
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "instr.txt:1: expected 'overflow <block> <count>'"));
	write_launch();
	write_text("dump/replay.txt", "pass=0 output_hash=xyz\n");
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "replay.txt:1: output_hash: expected 16 hex digits"));
	write_text("dump/replay.txt", "restored_bytes=1\n");
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "replay.txt:1: missing pass="));
	/* Without replay.txt and instr.txt: consistent, no instrumentation files. */
	write_launch();
	snprintf(path, sizeof(path), "%s/dump/replay.txt", ldir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/dump/instr.txt", ldir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/Instrumentation.csv", ldir);
	unlink(path);
	struct tp_op_launch_summary s;
	assert_int_equal(tp_op_report_launch(ldir, c, &s), 0);
	assert_true(s.replay_consistent);
	struct stat st;
	assert_int_not_equal(stat(path, &st), 0);
	free(c);
}

static void test_report_reads_config(void **state)
{
	(void)state;
	/* cfg NULL: <launch_dir>/../../../config.txt. */
	struct tp_op_config *c = make_cfg();
	snprintf(c->groups, sizeof(c->groups), "BasicInfo");
	char path[4300];
	snprintf(path, sizeof(path), "%s/config.txt", dir);
	assert_int_equal(tp_op_config_write(path, c), 0);
	write_launch();
	assert_int_equal(tp_op_report_launch(ldir, NULL, NULL), 0);
	snprintf(path, sizeof(path), "%s/PipeUtilization.csv", ldir);
	struct stat st;
	assert_int_not_equal(stat(path, &st), 0); /* BasicInfo: no group CSV */
	char *t = read_text("OpBasicInfo.csv");
	assert_non_null(strstr(t, "\nvec_add,mix,"));
	free(t);
	free(c);
}

static void test_scalar_nested_and_many(void **state)
{
	(void)state;
	struct tp_op_config *c = make_cfg();
	write_launch();
	/* Nested sections: the end closes the innermost begin. Block 1 has
	 * 4000 points of one section (instr_cap-sized blocks stay linear). */
	size_t cap = 1 << 20, off = 0;
	char *text = malloc(cap);
	assert_non_null(text);
	off += (size_t)snprintf(text + off, cap - off,
				"0 2 block_begin 2 - 1000 0\n"
				"0 2 scalar_begin 0 outer 1100 0\n"
				"0 2 scalar_begin 0 inner 1110 0\n"
				"0 2 scalar_end 0 inner 1120 10\n"
				"0 2 scalar_end 0 outer 1200 30\n"
				"0 2 block_end 2 - 2000 0\n"
				"1 0 block_begin 0 - 1000 0\n");
	for (int i = 0; i < 2000; i++)
		off += (size_t)snprintf(text + off, cap - off,
					"1 0 scalar_begin 0 loop %d 0\n1 0 scalar_end 0 loop %d 9\n",
					1001 + i, 1001 + i);
	off += (size_t)snprintf(text + off, cap - off, "1 0 block_end 0 - 9000 0\n");
	assert_true(off < cap);
	write_text("dump/instr.txt", text);
	free(text);
	assert_int_equal(tp_op_report_launch(ldir, c, NULL), 0);
	char *t = read_text("ScalarSections.csv");
	/* Block 1's pass-0 window is 3600 cycles: 18000 / 3600 = 500 %. The
	 * synthetic cycles are not physical; the arithmetic is what is checked. */
	assert_string_equal(t, "block_id,section,executions,cycles,share(%)\n"
			       "0,outer,1,30,1.67\n0,inner,1,10,0.56\n1,loop,2000,18000,500.00\n");
	free(t);
	t = read_text("Instrumentation.csv");
	assert_int_equal(count_lines(t), 1 + 6 + 4002);
	free(t);
	free(c);
}

/* ---- real records from the simulated driver channels ---- */

#define RV_N 65536u /* fp32 elements: 4 blocks x 16384 */
#define RV_TILE 2048u

struct rv_args {
	float *x, *y, *z;
	uint32_t n;
};

/* z = x + y per block slice: per block 2 x 64 KiB GM reads (copy_in), 64 KiB
 * GM write (copy_out), in 32-byte requests: 4096 and 2048. */
static void rv_kernel(uint32_t b, uint32_t bd, void *p)
{
	struct rv_args *a = p;
	uint32_t lo = a->n * b / bd, hi = a->n * (b + 1) / bd;
	size_t bytes = (size_t)a->n * 4;
	struct tp_tile gx, gy, gz, ux, uy, uz;
	if (tp_tile_init(&gx, TP_MEM_GM, a->x, bytes, TP_FP32, 1, a->n, a->n) ||
	    tp_tile_init(&gy, TP_MEM_GM, a->y, bytes, TP_FP32, 1, a->n, a->n) ||
	    tp_tile_init(&gz, TP_MEM_GM, a->z, bytes, TP_FP32, 1, a->n, a->n) ||
	    tp_local_tile(&ux, TP_MEM_UB, TP_FP32, 1, RV_TILE) ||
	    tp_local_tile(&uy, TP_MEM_UB, TP_FP32, 1, RV_TILE) ||
	    tp_local_tile(&uz, TP_MEM_UB, TP_FP32, 1, RV_TILE))
		return;
	for (uint32_t off = lo; off < hi; off += RV_TILE) {
		struct tp_tile vx, vy, vz, sx, sy, sz;
		if (tp_tile_view(&vx, &gx, 0, off, 1, RV_TILE) ||
		    tp_tile_view(&vy, &gy, 0, off, 1, RV_TILE) ||
		    tp_tile_view(&vz, &gz, 0, off, 1, RV_TILE) ||
		    tp_tile_view(&sx, &ux, 0, 0, 1, RV_TILE) ||
		    tp_tile_view(&sy, &uy, 0, 0, 1, RV_TILE) ||
		    tp_tile_view(&sz, &uz, 0, 0, 1, RV_TILE) || tp_copy_in(&sx, &vx) ||
		    tp_copy_in(&sy, &vy) || tp_vadd(&sz, &sx, &sy) || tp_copy_out(&vz, &sz))
			return;
	}
}

/* Drain @ch to its END_OF_PASS into @f; 0 or -ETIMEDOUT after 20 s. */
static int rv_drain(uint32_t ch, FILE *f)
{
	struct tp_op_rec buf[32];
	for (int waited = 0; waited < 20000;) {
		int n = tp_drv_prof_channel_read(0, ch, buf, sizeof(buf));
		if (n < 0)
			return n;
		if (!n) {
			usleep(1000);
			waited++;
			continue;
		}
		for (int i = 0; i < n / (int)sizeof(buf[0]); i++) {
			fwrite(&buf[i], sizeof(buf[i]), 1, f);
			if (buf[i].kind == TP_OP_REC_END_OF_PASS)
				return 0;
		}
	}
	return -ETIMEDOUT;
}

static void test_report_real_records(void **state)
{
	(void)state;
	setenv("TASKPROF_PLATFORM", "a2a3sim", 1);
	struct tp_op_config *c = make_cfg();
	snprintf(c->groups, sizeof(c->groups), "Default");
	assert_int_equal(tp_op_plan_for_groups(TP_PMU_ARCH_A2A3, TP_OP_GROUPS_DEFAULT, NULL, 0, NULL,
					       0, &c->plan, NULL, 0), 0);
	struct rv_args a = { .n = RV_N };
	assert_int_equal(tp_rt_malloc((void **)&a.x, RV_N * 4), 0);
	assert_int_equal(tp_rt_malloc((void **)&a.y, RV_N * 4), 0);
	assert_int_equal(tp_rt_malloc((void **)&a.z, RV_N * 4), 0);
	float *h = malloc(RV_N * 4);
	assert_non_null(h);
	for (uint32_t i = 0; i < RV_N; i++)
		h[i] = (float)i;
	assert_int_equal(tp_rt_memcpy(a.x, h, RV_N * 4, TP_RT_MEMCPY_HOST_TO_DEVICE), 0);
	assert_int_equal(tp_rt_memcpy(a.y, h, RV_N * 4, TP_RT_MEMCPY_HOST_TO_DEVICE), 0);
	struct tp_rt_launch_attr at = { "rv_add", TP_RT_CORES_AIV };
	for (uint32_t p = 0; p < c->plan.npasses; p++) {
		struct tp_drv_prof_config pc = { .pass = p, .n_aic = c->plan.pass[p].n[0],
						 .n_aiv = c->plan.pass[p].n[1] };
		memcpy(pc.aic_events, c->plan.pass[p].ev[0], sizeof(pc.aic_events));
		memcpy(pc.aiv_events, c->plan.pass[p].ev[1], sizeof(pc.aiv_events));
		struct tp_drv_prof_config tc = { .pass = p };
		if (tp_drv_prof_start(0, TP_DRV_CH_AICORE_PMU, &pc) ||
		    tp_drv_prof_start(0, TP_DRV_CH_TASK_TIME, &tc))
			fail_msg("channel start: %s", tp_last_error());
		if (tp_rt_launch_ex(rv_kernel, 4, &a, &at) || tp_rt_synchronize())
			fail_msg("launch: %s", tp_last_error());
		assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_AICORE_PMU), 0);
		assert_int_equal(tp_drv_prof_stop(0, TP_DRV_CH_TASK_TIME), 0);
		char path[4300];
		snprintf(path, sizeof(path), "%s/dump/pass_%u.bin", ldir, p);
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(rv_drain(TP_DRV_CH_AICORE_PMU, f), 0);
		assert_int_equal(rv_drain(TP_DRV_CH_TASK_TIME, f), 0);
		assert_int_equal(fclose(f), 0);
	}
	struct tp_rt_tool_stats st;
	assert_int_equal(tp_rt_tool_device_stats(0, &st), 0);
	char lt[512];
	snprintf(lt, sizeof(lt), "name=rv_add\nblock_dim=4\ncores=aiv\npid=1\ndevice=0\n"
				 "platform=%s\narch=a2a3\nsys_cnt_freq=%llu\ncore_freq_hz=1800000000\n"
				 "replay_mode=kernel\nwarm_up=0\npasses=%u\npasses_done=%u\nstatus=ok\n",
		 st.platform, (unsigned long long)st.sys_cnt_freq, c->plan.npasses, c->plan.npasses);
	write_text("launch.txt", lt);
	struct tp_op_launch_summary s;
	if (tp_op_report_launch(ldir, c, &s))
		fail_msg("report: %s", tp_last_error());
	assert_int_equal(s.passes, 4);
	assert_string_equal(s.status, "ok");
	assert_true(s.duration_us > 0);
	char *t = read_text("OpBasicInfo.csv");
	assert_non_null(strstr(t, "\nrv_add,vector,"));
	free(t);
	/* Counts are a function of the work, identical in every pass. */
	t = read_text("Memory.csv");
	for (int b = 0; b < 4; b++) {
		assert_string_equal(cell(t, b, "aiv_main_read_req"), "4096");
		assert_string_equal(cell(t, b, "aiv_main_write_req"), "2048");
		assert_string_equal(cell(t, b, "aiv_ub_read_req"), "6144");
		assert_string_equal(cell(t, b, "aiv_ub_write_req"), "6144");
		assert_string_equal(cell(t, b, "aiv_read_main_memory_datas(KB)"), "128.000");
		assert_string_equal(cell(t, b, "aic_total_cycles"), "N/A");
	}
	free(t);
	t = read_text("MemoryUB.csv");
	assert_string_equal(cell(t, 2, "aiv_ub_read_bw_mte"), "2048");
	assert_string_equal(cell(t, 2, "aiv_ub_write_bw_mte"), "4096");
	assert_string_equal(cell(t, 2, "aiv_ub_read_bw_vector"), "4096");
	assert_string_equal(cell(t, 2, "aiv_ub_write_bw_vector"), "2048");
	free(t);
	/* 4 blocks x 32 AIV events of the Default plan. */
	t = read_text("RawEvents.csv");
	assert_int_equal(count_lines(t), 1 + 4 * 32);
	free(t);
	char path[4300];
	json_error_t jerr;
	snprintf(path, sizeof(path), "%s/summary.json", ldir);
	json_t *sum = json_load_file(path, 0, &jerr);
	assert_non_null(sum);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(sum, "replay"),
							    "duplicate_mismatches")), 0);
	assert_int_equal(json_array_size(json_object_get(sum, "blocks")), 4);
	json_decref(sum);
	snprintf(path, sizeof(path), "%s/trace.json", ldir);
	json_t *tr = json_load_file(path, 0, &jerr);
	assert_non_null(tr);
	json_decref(tr);
	tp_rt_free(a.x);
	tp_rt_free(a.y);
	tp_rt_free(a.z);
	free(h);
	free(c);
}

static void test_print_summary(void **state)
{
	(void)state;
	struct tp_op_launch_summary s[2];
	memset(s, 0, sizeof(s));
	snprintf(s[0].name, sizeof(s[0].name), "vec_add");
	s[0].block_dim = 8;
	s[0].duration_us = 12.5;
	s[0].passes = 4;
	s[0].replay_consistent = true;
	s[0].replay_checked = true;
	snprintf(s[0].status, sizeof(s[0].status), "ok");
	snprintf(s[0].dir, sizeof(s[0].dir), "/o/device0/vec_add/0");
	snprintf(s[1].name, sizeof(s[1].name), "acc");
	s[1].device = 1;
	s[1].k = 2;
	s[1].duration_us = -1;
	snprintf(s[1].status, sizeof(s[1].status), "degraded");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	tp_op_report_print_summary(f, s, 2);
	tp_op_report_print_summary(f, s, 0);
	fclose(f);
	assert_non_null(strstr(buf, "kernel  device    k  blocks   duration(us) passes consistent "
				    "status      dir\n"));
	assert_non_null(strstr(buf, "vec_add      0    0       8         12.500      4        yes "
				    "ok          /o/device0/vec_add/0\n"));
	/* s[1]: no two passes hashed memory — consistency unknown. */
	assert_non_null(strstr(buf, "acc          1    2       0            N/A      0        N/A "
				    "degraded"));
	assert_non_null(strstr(buf, "taskprof op: no kernel launch was profiled\n"));
	/* Deviations of 25% or less: no note. */
	assert_null(strstr(buf, "note:"));
	free(buf);
	/* A launch whose passes' cycles differ by 84%: the note names it. */
	s[1].max_dev_pct = 84.2;
	f = open_memstream(&buf, &len);
	tp_op_report_print_summary(f, s, 2);
	fclose(f);
	assert_non_null(strstr(buf, "\nnote: a block's cycles differ by up to 84% between passes "
				    "(ReplayInfo.csv cycle_deviation(%)): "));
	assert_non_null(strstr(buf, ". \"consistent\" compares the passes' outputs, not their "
				    "timings\n"));
	free(buf);
	/* Widths count columns: an accented name lines up, one past 40
	 * characters is cut to 37 and "..." (not inside a character). */
	snprintf(s[0].name, sizeof(s[0].name), "caf\xc3\xa9");
	snprintf(s[1].name, sizeof(s[1].name), "%s",
		 "\xc3\xa9\xc3\xa9" "abcdefghijklmnopqrstuvwabcdefghijklmnopqrstu");
	f = open_memstream(&buf, &len);
	tp_op_report_print_summary(f, s, 2);
	fclose(f);
	assert_non_null(strstr(buf, "\ncaf\xc3\xa9                                          0    0"));
	assert_non_null(strstr(buf, "\n\xc3\xa9\xc3\xa9" "abcdefghijklmnopqrstuvwabcdefghijkl...      1    2"));
	free(buf);
	/* Without a C.UTF-8 locale every code point takes one column (the
	 * fallback): the wide-character rows below do not apply. */
	locale_t u8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	if (!u8) {
		printf("no C.UTF-8 locale: wide-character columns not checked\n");
		return;
	}
	freelocale(u8);
	/* Wide East Asian characters take two columns each: a 4-character
	 * name is 8 columns wide (32 spaces of padding in a 40-column field),
	 * and a 21-character one (42 columns) is cut to 18 characters and
	 * "..." (39 columns) and 1 space, never half a character. */
	snprintf(s[0].name, sizeof(s[0].name), "%s",
		 "\xe7\x9f\xa9\xe9\x98\xb5\xe4\xb9\x98\xe6\xb3\x95");
	char wide[21 * 3 + 1] = "";
	for (int i = 0; i < 21; i++)
		strcat(wide, "\xe6\x95\xb0");
	snprintf(s[1].name, sizeof(s[1].name), "%s", wide);
	f = open_memstream(&buf, &len);
	tp_op_report_print_summary(f, s, 2);
	fclose(f);
	char want[512];
	snprintf(want, sizeof(want), "\n%s%32s %6d", s[0].name, "", 0);
	assert_non_null(strstr(buf, want));
	snprintf(want, sizeof(want), "\n%.*s...  %6d", 18 * 3, wide, 1);
	assert_non_null(strstr(buf, want));
	/* The header's "kernel" column is 40 columns wide too. */
	snprintf(want, sizeof(want), "kernel%34s device", "");
	assert_non_null(strstr(buf, want));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_union_and_last_pass),
		cmocka_unit_test(test_merge_bad_records),
		cmocka_unit_test(test_merge_corruption_never_crashes),
		cmocka_unit_test_setup_teardown(test_merge_file_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_json_escaping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_reads_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scalar_nested_and_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_real_records, setup, teardown),
		cmocka_unit_test(test_print_summary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
