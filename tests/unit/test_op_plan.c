/* SPDX-License-Identifier: MIT */
/* Unit tests of op/plan and op/groups: the U1 planner list of
 * spec/opprof.md §4.14, the metric groups and their formulas. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op/groups.h"
#include "op/plan.h"
#include "platform/pmu_model.h"

#define AIC_SET(arr) { .n_aic = sizeof(arr) / sizeof((arr)[0]), .aic = (arr) }

static bool in_pass(const struct tp_op_pass *p, int c, uint16_t id)
{
	for (uint32_t i = 0; i < p->n[c]; i++)
		if (p->ev[c][i] == id)
			return true;
	return false;
}

static void assert_padding(const struct tp_op_plan *p)
{
	for (uint32_t i = 0; i < p->npasses; i++)
		for (int c = 0; c < 2; c++)
			for (uint32_t s = p->pass[i].n[c]; s < TP_DRV_PROF_MAX_EVENTS; s++)
				assert_int_equal(p->pass[i].ev[c][s], TP_EV_NONE);
}

static void test_zero_events_one_pass(void **state)
{
	(void)state;
	struct tp_op_plan p;
	char err[256] = "";
	assert_int_equal(tp_op_plan_build(NULL, 0, 8, &p, err, sizeof(err)), 0);
	assert_int_equal(p.npasses, 1);
	assert_int_equal(p.slots, 8);
	assert_int_equal(p.pass[0].n[0], 0);
	assert_int_equal(p.pass[0].n[1], 0);
	assert_padding(&p);
	/* BasicInfo (no events) plans the same single pass. */
	assert_int_equal(tp_op_plan_for_groups(TP_PMU_ARCH_A2A3, 1u << TP_OP_G_BASIC_INFO, NULL, 0,
					       NULL, 0, &p, err, sizeof(err)), 0);
	assert_int_equal(p.npasses, 1);
	assert_int_equal(p.pass[0].n[0] + p.pass[0].n[1], 0);
}

static void test_exactly_k_and_k_plus_1(void **state)
{
	(void)state;
	uint16_t ids[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct tp_op_coset sets[9];
	for (int i = 0; i < 9; i++)
		sets[i] = (struct tp_op_coset){ .n_aic = 1, .aic = &ids[i] };
	struct tp_op_plan p;
	assert_int_equal(tp_op_plan_build(sets, 8, 8, &p, NULL, 0), 0);
	assert_int_equal(p.npasses, 1);
	assert_int_equal(p.pass[0].n[0], 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(p.pass[0].ev[0][i], ids[i]); /* request order kept */
	assert_int_equal(tp_op_plan_build(sets, 9, 8, &p, NULL, 0), 0);
	assert_int_equal(p.npasses, 2);
	assert_int_equal(p.pass[0].n[0], 8);
	assert_int_equal(p.pass[1].n[0], 1);
	assert_int_equal(p.pass[1].ev[0][0], 9);
	assert_padding(&p);
	/* a5's K = 10 takes all nine in one pass. */
	assert_int_equal(tp_op_plan_build(sets, 9, 10, &p, NULL, 0), 0);
	assert_int_equal(p.npasses, 1);
}

static void test_coset_kept_together(void **state)
{
	(void)state;
	/* Two sets of 5: sequential packing would split the second across
	 * passes (1..8 | 9 10); FFD keeps each whole. */
	uint16_t a[5] = { 1, 2, 3, 4, 5 }, b[5] = { 6, 7, 8, 9, 10 };
	struct tp_op_coset sets[2] = { AIC_SET(a), AIC_SET(b) };
	struct tp_op_plan p;
	assert_int_equal(tp_op_plan_build(sets, 2, 8, &p, NULL, 0), 0);
	assert_int_equal(p.npasses, 2);
	for (int i = 0; i < 5; i++) {
		assert_true(in_pass(&p.pass[0], 0, a[i]));
		assert_true(in_pass(&p.pass[1], 0, b[i]));
	}
	/* A set spanning both core types stays in one pass for both. */
	uint16_t c_aic[2] = { 0x20, 0x21 }, c_aiv[2] = { 0x30, 0x31 };
	uint16_t fill[8] = { 1, 2, 3, 4, 5, 6, 7 };
	struct tp_op_coset s2[2] = { { .n_aic = 7, .aic = fill },
				     { .n_aic = 2, .aic = c_aic, .n_aiv = 2, .aiv = c_aiv } };
	assert_int_equal(tp_op_plan_build(s2, 2, 8, &p, NULL, 0), 0);
	assert_int_equal(p.npasses, 2);
	int pa = tp_op_plan_find(&p, TP_OP_AIC, 0x20);
	assert_int_equal(tp_op_plan_find(&p, TP_OP_AIC, 0x21), pa);
	assert_int_equal(tp_op_plan_find(&p, TP_OP_AIV, 0x30), pa);
	assert_int_equal(tp_op_plan_find(&p, TP_OP_AIV, 0x31), pa);
}

static void test_coset_over_k_is_error(void **state)
{
	(void)state;
	uint16_t big[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct tp_op_coset sets[2] = { { .n_aic = 1, .aic = big }, AIC_SET(big) };
	struct tp_op_plan p;
	char err[256] = "";
	assert_int_equal(tp_op_plan_build(sets, 2, 8, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "co-schedule set 1 needs 9 AIC events in one pass, max 8"));
	/* The same nine fit a5's ten slots. */
	assert_int_equal(tp_op_plan_build(sets, 2, 10, &p, err, sizeof(err)), 0);
	/* AIV too. */
	struct tp_op_coset v = { .n_aiv = 9, .aiv = big };
	assert_int_equal(tp_op_plan_build(&v, 1, 8, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "9 AIV events"));
	/* A bad K. */
	assert_int_equal(tp_op_plan_build(&v, 1, 11, &p, err, sizeof(err)), -EINVAL);
	assert_int_equal(tp_op_plan_build(&v, 1, 0, &p, err, sizeof(err)), -EINVAL);
}

static void test_9_aic_3_aiv(void **state)
{
	(void)state;
	uint16_t aic[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, aiv[3] = { 0x40, 0x41, 0x42 };
	struct tp_op_coset sets[12];
	for (int i = 0; i < 9; i++)
		sets[i] = (struct tp_op_coset){ .n_aic = 1, .aic = &aic[i] };
	for (int i = 0; i < 3; i++)
		sets[9 + i] = (struct tp_op_coset){ .n_aiv = 1, .aiv = &aiv[i] };
	struct tp_op_plan p;
	assert_int_equal(tp_op_plan_build(sets, 12, 8, &p, NULL, 0), 0);
	assert_int_equal(p.npasses, 2);
	assert_int_equal(p.pass[0].n[0], 8);
	assert_int_equal(p.pass[0].n[1], 3);
	assert_int_equal(p.pass[1].n[0], 1);
	assert_int_equal(p.pass[1].n[1], 0); /* AIV row 2 empty */
	for (int s = 0; s < TP_DRV_PROF_MAX_EVENTS; s++)
		assert_int_equal(p.pass[1].ev[1][s], TP_EV_NONE);
}

static void test_duplicates(void **state)
{
	(void)state;
	/* The same event in several sets is programmed once. */
	uint16_t a[2] = { 1, 2 }, b[2] = { 2, 3 }, c[1] = { 3 }, d[3] = { 4, 4, 4 };
	struct tp_op_coset sets[4] = { AIC_SET(a), AIC_SET(b), AIC_SET(c), AIC_SET(d) };
	struct tp_op_plan p;
	assert_int_equal(tp_op_plan_build(sets, 4, 8, &p, NULL, 0), 0);
	assert_int_equal(p.npasses, 1);
	assert_int_equal(p.pass[0].n[0], 4);
	assert_int_equal(tp_op_plan_total_events(&p), 4);
	/* Two sets sharing an event whose union is over K: each set whole in
	 * its own pass, the shared event read in both. */
	uint16_t x[5] = { 1, 2, 3, 4, 5 }, y[5] = { 5, 6, 7, 8, 9 };
	struct tp_op_coset s2[2] = { AIC_SET(x), AIC_SET(y) };
	assert_int_equal(tp_op_plan_build(s2, 2, 8, &p, NULL, 0), 0);
	assert_int_equal(p.npasses, 2);
	for (int i = 0; i < 5; i++) {
		assert_true(in_pass(&p.pass[0], 0, x[i]));
		assert_true(in_pass(&p.pass[1], 0, y[i]));
	}
	/* Same id on AIC and on AIV are two different events. */
	uint16_t one = 7;
	struct tp_op_coset s3[2] = { { .n_aic = 1, .aic = &one }, { .n_aiv = 1, .aiv = &one } };
	assert_int_equal(tp_op_plan_build(s3, 2, 8, &p, NULL, 0), 0);
	assert_int_equal(p.pass[0].n[0], 1);
	assert_int_equal(p.pass[0].n[1], 1);
}

static void test_deterministic(void **state)
{
	(void)state;
	struct tp_op_plan *p1 = malloc(sizeof(*p1)), *p2 = malloc(sizeof(*p2));
	assert_non_null(p1);
	assert_non_null(p2);
	memset(p1, 0x5a, sizeof(*p1));
	memset(p2, 0xa5, sizeof(*p2));
	for (int arch = 0; arch < 2; arch++) {
		assert_int_equal(tp_op_plan_for_groups(arch, TP_OP_GROUPS_DEFAULT, NULL, 0, NULL, 0, p1,
						       NULL, 0), 0);
		assert_int_equal(tp_op_plan_for_groups(arch, TP_OP_GROUPS_DEFAULT, NULL, 0, NULL, 0, p2,
						       NULL, 0), 0);
		assert_memory_equal(p1, p2, sizeof(*p1));
	}
	free(p1);
	free(p2);
}

static void test_event_id_zero(void **state)
{
	(void)state;
	uint16_t ids[2] = { 0x0, 0x1 };
	struct tp_op_coset s = { .n_aic = 2, .aic = ids };
	struct tp_op_plan p;
	char err[256] = "";
	assert_int_equal(tp_op_plan_build(&s, 1, 10, &p, err, sizeof(err)), 0);
	assert_int_equal(p.pass[0].n[0], 2);
	assert_int_equal(p.pass[0].ev[0][0], 0x0);
	assert_int_equal(p.pass[0].ev[0][2], 0xFFFF);
	assert_int_equal(tp_op_plan_find(&p, TP_OP_AIC, 0), 0);
	/* The sentinel itself is refused. */
	uint16_t bad = TP_EV_NONE;
	struct tp_op_coset sb = { .n_aiv = 1, .aiv = &bad };
	assert_int_equal(tp_op_plan_build(&sb, 1, 10, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "sentinel"));
	/* A raw extra event 0 on a5 with BasicInfo. */
	assert_int_equal(tp_op_plan_for_groups(TP_PMU_ARCH_A5, 1u << TP_OP_G_BASIC_INFO, ids, 1,
					       NULL, 0, &p, err, sizeof(err)), 0);
	assert_int_equal(p.npasses, 1);
	assert_int_equal(p.pass[0].n[0], 1);
	assert_int_equal(p.pass[0].ev[0][0], 0);
}

static void test_worked_example(void **state)
{
	(void)state;
	/* §4.5: K = 8, AIC items {5},{4},{4},{3},{2},{2} → 5+3, 4+4, 2+2. */
	static uint16_t s5[5] = { 1, 2, 3, 4, 5 }, s4a[4] = { 11, 12, 13, 14 },
			s4b[4] = { 21, 22, 23, 24 }, s3[3] = { 31, 32, 33 }, s2a[2] = { 41, 42 },
			s2b[2] = { 51, 52 };
	struct tp_op_coset sets[6] = { AIC_SET(s5), AIC_SET(s4a), AIC_SET(s4b),
				       AIC_SET(s3), AIC_SET(s2a), AIC_SET(s2b) };
	struct tp_op_plan p;
	assert_int_equal(tp_op_plan_build(sets, 6, 8, &p, NULL, 0), 0);
	assert_int_equal(p.npasses, 3);
	static const uint16_t want[3][8] = { { 1, 2, 3, 4, 5, 31, 32, 33 },
					     { 11, 12, 13, 14, 21, 22, 23, 24 },
					     { 41, 42, 51, 52, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF } };
	for (int i = 0; i < 3; i++)
		for (int s = 0; s < 8; s++)
			assert_int_equal(p.pass[i].ev[0][s], want[i][s]);
	/* Input order does not change the packing (only ties). */
	struct tp_op_coset rev[6] = { AIC_SET(s2b), AIC_SET(s2a), AIC_SET(s3),
				      AIC_SET(s4b), AIC_SET(s4a), AIC_SET(s5) };
	assert_int_equal(tp_op_plan_build(rev, 6, 8, &p, NULL, 0), 0);
	assert_int_equal(p.npasses, 3);
	assert_int_equal(p.pass[0].n[0], 8);
	assert_int_equal(p.pass[0].ev[0][0], 1);
	assert_int_equal(p.pass[0].ev[0][5], 31);
}

static void test_too_many_passes(void **state)
{
	(void)state;
	static uint16_t ids[8 * 65];
	static struct tp_op_coset sets[8 * 65];
	for (int i = 0; i < 8 * 65; i++) {
		ids[i] = (uint16_t)i;
		sets[i] = (struct tp_op_coset){ .n_aic = 1, .aic = &ids[i] };
	}
	struct tp_op_plan p;
	char err[256] = "";
	assert_int_equal(tp_op_plan_build(sets, 8 * 64, 8, &p, err, sizeof(err)), 0);
	assert_int_equal(p.npasses, 64);
	assert_int_equal(tp_op_plan_build(sets, 8 * 65, 8, &p, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "more than 64 passes"));
}

static void test_default_plans(void **state)
{
	(void)state;
	struct tp_op_plan p;
	char err[256] = "";
	/* a2a3: 27 AIC + 32 AIV events → 4 passes (the acceptance test needs ≥ 3). */
	assert_int_equal(tp_op_plan_for_groups(TP_PMU_ARCH_A2A3, TP_OP_GROUPS_DEFAULT, NULL, 0,
					       NULL, 0, &p, err, sizeof(err)), 0);
	assert_int_equal(p.arch, TP_PMU_ARCH_A2A3);
	assert_int_equal(p.slots, 8);
	assert_int_equal(p.npasses, 4);
	assert_padding(&p);
	uint32_t n[2] = { 0, 0 };
	for (uint32_t i = 0; i < p.npasses; i++)
		for (int c = 0; c < 2; c++)
			n[c] += p.pass[i].n[c];
	assert_int_equal(n[0], 27);
	assert_int_equal(n[1], 32);
	/* Every group event is planned on each core type it serves, every
	 * metric's events on its core type and all in one pass. */
	for (int arch = 0; arch < 2; arch++) {
		assert_int_equal(tp_op_plan_for_groups(arch, TP_OP_GROUPS_DEFAULT, NULL, 0, NULL, 0,
						       &p, err, sizeof(err)), 0);
		for (int g = 0; g < TP_OP_G_BASIC_INFO; g++) {
			const struct tp_op_group_arch *ga = &tp_op_group_get(g)->arch[arch];
			assert_true(ga->n_ev > 0);
			for (uint32_t e = 0; e < ga->n_ev; e++)
				for (int c = 0; c < 2; c++)
					if (ga->ev[e].cores & (1u << c))
						assert_true(tp_op_plan_find(&p, c, ga->ev[e].id) >= 0);
			for (uint32_t i = 0; i < ga->n_metrics; i++) {
				const struct tp_op_metric *m = &ga->metrics[i];
				int first = tp_op_plan_find(&p, m->core, m->ev[0]);
				assert_true(first >= 0);
				for (uint32_t k = 1; k < m->n_ev; k++)
					assert_true(in_pass(&p.pass[first], m->core, m->ev[k]));
			}
		}
	}
	/* a5: 10 slots, 3 passes. */
	assert_int_equal(tp_op_plan_for_groups(TP_PMU_ARCH_A5, TP_OP_GROUPS_DEFAULT, NULL, 0, NULL,
					       0, &p, err, sizeof(err)), 0);
	assert_int_equal(p.slots, 10);
	assert_int_equal(p.npasses, 3);
	/* One group alone fits one pass on both arches. */
	for (int arch = 0; arch < 2; arch++)
		for (int g = 0; g < TP_OP_G_BASIC_INFO; g++) {
			assert_int_equal(tp_op_plan_for_groups(arch, 1u << g, NULL, 0, NULL, 0, &p, err,
							       sizeof(err)), 0);
			assert_int_equal(p.npasses, 1);
		}
	/* Unknown mask bits are refused. */
	assert_int_equal(tp_op_plan_for_groups(TP_PMU_ARCH_A2A3, 1u << 9, NULL, 0, NULL, 0, &p,
					       err, sizeof(err)), -EINVAL);
}

static void test_plan_print(void **state)
{
	(void)state;
	uint16_t a[2] = { 0x49, 0x4a }, b[1] = { 0x0a }, v[1] = { 0x08 };
	struct tp_op_coset sets[3] = { AIC_SET(a), AIC_SET(b), { .n_aiv = 1, .aiv = v } };
	struct tp_op_plan p;
	p.arch = TP_PMU_ARCH_A2A3;
	assert_int_equal(tp_op_plan_build(sets, 3, 8, &p, NULL, 0), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	tp_op_plan_print(f, &p);
	fclose(f);
	assert_non_null(strstr(buf, "pass plan: arch a2a3, 8 slots per core type, 1 pass, "
				    "3 AIC + 1 AIV events\n"));
	assert_non_null(strstr(buf, "pass 0  AIC: 0x49 0x4a | 0x0a - - - - -    AIV: 0x08 - - - - - "
				    "- -\n"));
	assert_non_null(strstr(buf, "pass 0 AIC 0x0a  cube_busy_cycles"));
	assert_non_null(strstr(buf, "PipeUtilization,ArithmeticUtilization\n"));
	assert_non_null(strstr(buf, "pass 0 AIV 0x08  vec_busy_cycles"));
	free(buf);

	/* A 3-digit id (L2Cache 0x500) keeps the name column of the others. */
	uint16_t l2[1] = { 0x500 };
	struct tp_op_coset sets2[2] = { AIC_SET(l2), AIC_SET(b) };
	assert_int_equal(tp_op_plan_build(sets2, 2, 8, &p, NULL, 0), 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	tp_op_plan_print(f, &p);
	fclose(f);
	const char *l500 = strstr(buf, "  pass 0 AIC 0x500 write_cache_hit ");
	const char *l0a = strstr(buf, "  pass 0 AIC 0x0a  cube_busy_cycles ");
	assert_non_null(l500);
	assert_non_null(l0a);
	/* the group column too: both names padded to the same width */
	assert_int_equal(strchr(l500, '\n') - l500, strchr(l0a, '\n') - l0a +
			 (long)(strlen("L2Cache") - strlen("PipeUtilization,ArithmeticUtilization")));
	free(buf);
}

static void test_groups_parse(void **state)
{
	(void)state;
	uint32_t m = 0;
	char err[512] = "";
	assert_int_equal(tp_op_groups_parse("Default", &m, err, sizeof(err)), 0);
	assert_int_equal(m, TP_OP_GROUPS_DEFAULT);
	assert_int_equal(tp_op_groups_parse("", &m, err, sizeof(err)), 0);
	assert_int_equal(m, TP_OP_GROUPS_DEFAULT);
	assert_int_equal(tp_op_groups_parse(" pipeutilization , MEMORY", &m, err, sizeof(err)), 0);
	assert_int_equal(m, (1u << TP_OP_G_PIPE) | (1u << TP_OP_G_MEMORY));
	assert_int_equal(tp_op_groups_parse("BasicInfo", &m, err, sizeof(err)), 0);
	assert_int_equal(m, 1u << TP_OP_G_BASIC_INFO);
	assert_int_equal(tp_op_groups_parse("L2Cache,Default", &m, err, sizeof(err)), 0);
	assert_int_equal(m, TP_OP_GROUPS_DEFAULT);
	assert_int_equal(tp_op_groups_parse("Memory,Foo", &m, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--aic-metrics: unknown metric group 'Foo'; valid: "
				 "PipeUtilization, ArithmeticUtilization, Memory, MemoryL0, MemoryUB, "
				 "ResourceConflictRatio, L2Cache, BasicInfo, Default");
	assert_int_equal(tp_op_groups_parse("Memory,,L2Cache", &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty metric group"));
	assert_int_equal(tp_op_groups_parse("occupancy", &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'occupancy' is a view of msprof op"));
	assert_int_equal(tp_op_groups_parse("Roofline", &m, err, sizeof(err)), -EINVAL);

	char buf[256];
	tp_op_groups_format((1u << TP_OP_G_MEMORY) | (1u << TP_OP_G_PIPE), buf, sizeof(buf));
	assert_string_equal(buf, "PipeUtilization,Memory");
	tp_op_groups_format(1u << TP_OP_G_BASIC_INFO, buf, sizeof(buf));
	assert_string_equal(buf, "BasicInfo");
	tp_op_groups_format(0, buf, sizeof(buf));
	assert_string_equal(buf, "BasicInfo");
	/* Round trip of every single group. */
	for (int g = 0; g < TP_OP_NGROUPS; g++) {
		tp_op_groups_format(1u << g, buf, sizeof(buf));
		assert_int_equal(tp_op_groups_parse(buf, &m, NULL, 0), 0);
		assert_int_equal(m, 1u << g);
	}
}

static void test_group_tables(void **state)
{
	(void)state;
	/* Events come from the platform tables: PIPE_UTILIZATION a2a3. */
	uint16_t ev[16];
	size_t n = tp_op_group_events(TP_OP_G_PIPE, TP_PMU_ARCH_A2A3, TP_OP_AIC, ev, 16);
	static const uint16_t pipe_aic[] = { 0x0a, 0x09, 0x0b, 0x0c, 0x0d, 0x55, 0x54 };
	assert_int_equal(n, 7);
	assert_memory_equal(ev, pipe_aic, sizeof(pipe_aic));
	n = tp_op_group_events(TP_OP_G_PIPE, TP_PMU_ARCH_A2A3, TP_OP_AIV, ev, 16);
	static const uint16_t pipe_aiv[] = { 0x08, 0x09, 0x0c, 0x0d, 0x55, 0x54 };
	assert_int_equal(n, 6);
	assert_memory_equal(ev, pipe_aiv, sizeof(pipe_aiv));
	/* MemoryL0 is AIC only, ResourceConflictRatio AIV only (a2a3). */
	assert_int_equal(tp_op_group_events(TP_OP_G_MEMORY_L0, TP_PMU_ARCH_A2A3, TP_OP_AIV, ev, 16), 0);
	assert_int_equal(tp_op_group_events(TP_OP_G_MEMORY_L0, TP_PMU_ARCH_A2A3, TP_OP_AIC, ev, 16), 6);
	assert_int_equal(tp_op_group_events(TP_OP_G_RESOURCE_CONFLICT, TP_PMU_ARCH_A2A3, TP_OP_AIC,
					    ev, 16), 0);
	/* a5 MEMORY has two unused slots first: 8 named events. */
	assert_int_equal(tp_op_group_get(TP_OP_G_MEMORY)->arch[TP_PMU_ARCH_A5].n_ev, 8);
	assert_int_equal(tp_op_group_get(TP_OP_G_BASIC_INFO)->arch[0].n_ev, 0);
	assert_null(tp_op_group_get(TP_OP_NGROUPS));
	assert_string_equal(tp_op_group_name(TP_OP_G_L2CACHE), "L2Cache");
	/* Every derived metric reads at least one event the simulator models
	 * (docs/pmu.md), and no column name repeats within a group. */
	for (int arch = 0; arch < 2; arch++)
		for (int g = 0; g < TP_OP_NGROUPS; g++) {
			const struct tp_op_group_arch *ga = &tp_op_group_get(g)->arch[arch];
			for (uint32_t i = 0; i < ga->n_metrics; i++) {
				bool modelled = false;
				for (uint32_t k = 0; k < ga->metrics[i].n_ev; k++)
					modelled |= tp_pmu_event_modelled(arch, ga->metrics[i].ev[k]);
				if (!modelled)
					fail_msg("%s %s reads no modelled event", tp_op_group_name(g),
						 ga->metrics[i].column);
				for (uint32_t j = 0; j < i; j++)
					assert_string_not_equal(ga->metrics[i].column,
								ga->metrics[j].column);
			}
		}
	assert_string_equal(tp_op_event_name(TP_PMU_ARCH_A5, 0x714), "pmu_fix_instr_busy");
	assert_int_equal(tp_op_groups_of_event(TP_PMU_ARCH_A2A3, TP_OP_AIV, 0x10),
			 (1u << TP_OP_G_MEMORY) | (1u << TP_OP_G_MEMORY_UB));
	assert_int_equal(tp_op_groups_of_event(TP_PMU_ARCH_A2A3, TP_OP_AIC, 0x7777), 0);
}

static void test_metric_formulas(void **state)
{
	(void)state;
	const struct tp_op_metric ratio = { "r", TP_OP_AIV, TP_OP_F_RATIO, 2, { 1, 2 }, 0 };
	const struct tp_op_metric time = { "t", TP_OP_AIC, TP_OP_F_TIME_US, 1, { 1 }, 0 };
	const struct tp_op_metric bw = { "b", TP_OP_AIC, TP_OP_F_BW_GBS, 1, { 1 }, 0 };
	const struct tp_op_metric kb = { "k", TP_OP_AIC, TP_OP_F_KB, 1, { 1 }, 0 };
	const struct tp_op_metric cnt = { "c", TP_OP_AIC, TP_OP_F_COUNT, 2, { 1, 2 }, 0 };
	const struct tp_op_metric hit = { "h", TP_OP_AIC, TP_OP_F_HIT_PCT, 2, { 1, 2 }, 1 };
	uint64_t v[2] = { 300, 150 };
	bool h[2] = { true, true };
	double out;
	char buf[64];
	assert_true(tp_op_metric_eval(&ratio, v, h, 1800, 1.8e9, &out));
	assert_string_equal(tp_op_metric_format(&ratio, true, out, buf, sizeof(buf)), "0.250000");
	assert_true(tp_op_metric_eval(&time, v, h, 1800, 1.8e9, &out));
	assert_string_equal(tp_op_metric_format(&time, true, out, buf, sizeof(buf)), "0.167");
	/* 300 requests x 32 B in 1800 cycles at 1.8 GHz (1 µs) = 9.6 GB/s. */
	assert_true(tp_op_metric_eval(&bw, v, h, 1800, 1.8e9, &out));
	assert_string_equal(tp_op_metric_format(&bw, true, out, buf, sizeof(buf)), "9.600");
	assert_true(tp_op_metric_eval(&kb, v, h, 1800, 1.8e9, &out));
	assert_string_equal(tp_op_metric_format(&kb, true, out, buf, sizeof(buf)), "9.375");
	assert_true(tp_op_metric_eval(&cnt, v, h, 0, 1.8e9, &out));
	assert_string_equal(tp_op_metric_format(&cnt, true, out, buf, sizeof(buf)), "450");
	/* 300 hits of 450 lines: 66.667% */
	assert_true(tp_op_metric_eval(&hit, v, h, 0, 1.8e9, &out));
	assert_string_equal(tp_op_metric_format(&hit, true, out, buf, sizeof(buf)), "66.667");
	uint64_t none[2] = { 0, 0 };
	assert_false(tp_op_metric_eval(&hit, none, h, 1800, 1.8e9, &out)); /* no access */
	/* N/A: a missing value, a zero denominator. */
	h[1] = false;
	assert_false(tp_op_metric_eval(&ratio, v, h, 1800, 1.8e9, &out));
	h[1] = true;
	assert_false(tp_op_metric_eval(&ratio, v, h, 0, 1.8e9, &out));
	assert_false(tp_op_metric_eval(&bw, v, h, 0, 1.8e9, &out));
	assert_string_equal(tp_op_metric_format(&bw, false, 0, buf, sizeof(buf)), "N/A");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_events_one_pass),
		cmocka_unit_test(test_exactly_k_and_k_plus_1),
		cmocka_unit_test(test_coset_kept_together),
		cmocka_unit_test(test_coset_over_k_is_error),
		cmocka_unit_test(test_9_aic_3_aiv),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_event_id_zero),
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_too_many_passes),
		cmocka_unit_test(test_default_plans),
		cmocka_unit_test(test_plan_print),
		cmocka_unit_test(test_groups_parse),
		cmocka_unit_test(test_group_tables),
		cmocka_unit_test(test_metric_formulas),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
