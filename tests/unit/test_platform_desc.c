/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of platform/platform and platform/topology: the a2a3sim and
 * a5sim descriptors (ARCHITECTURE.md §1, spec/runtime-model.md §1.3,
 * spec/pmu.md §1.5), lookup by name, and core ids / clusters (§1.2).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "platform/platform.h"
#include "platform/topology.h"

static void test_a2a3sim_numbers(void **state)
{
	(void)state;
	const struct tp_platform *p = tp_platform_a2a3sim();
	assert_string_equal(p->name, "a2a3sim");
	assert_string_equal(p->arch, "a2a3");
	assert_string_equal(p->pmu_event_space, "DAV_2201");
	assert_int_equal(p->pmu_slots, 8);
	assert_int_equal(p->pmu_reader, TP_PMU_READ_BY_AICPU);
	assert_int_equal(p->transport, TP_TRANSPORT_SHARED_MAPPING);
	assert_int_equal(p->sys_cnt_freq_hz, 50000000ULL);
	assert_int_equal(p->max_aicpu_threads, 4);
	assert_int_equal(p->aicpu_launch_threads, 6);
	assert_int_equal(p->default_aicpu_threads, 4);
	assert_int_equal(p->max_block_dim, 24);
	assert_int_equal(p->default_block_dim, 8);
	assert_int_equal(p->max_workers, 72);
	assert_true(p->hbg_dummy_path); /* seed 002 §2 */
	printf("a2a3sim: 8 PMU slots, 50 MHz, AICPU max 4 / launch 6, block_dim max 24\n");
}

static void test_a5sim_numbers(void **state)
{
	(void)state;
	const struct tp_platform *p = tp_platform_a5sim();
	assert_string_equal(p->name, "a5sim");
	assert_string_equal(p->arch, "a5");
	assert_string_equal(p->pmu_event_space, "DAV_3510");
	assert_int_equal(p->pmu_slots, 10);
	assert_int_equal(p->pmu_reader, TP_PMU_READ_BY_AICORE);
	assert_int_equal(p->transport, TP_TRANSPORT_HOST_SHADOW);
	assert_int_equal(p->sys_cnt_freq_hz, 1000000000ULL);
	assert_int_equal(p->max_aicpu_threads, 7);
	assert_int_equal(p->aicpu_launch_threads, 14);
	assert_int_equal(p->default_aicpu_threads, 4);
	assert_int_equal(p->max_block_dim, 36);
	assert_int_equal(p->default_block_dim, 8);
	assert_int_equal(p->max_workers, 108);
	assert_false(p->hbg_dummy_path); /* seed 002 §2 */
	printf("a5sim: 10 PMU slots, 1 GHz, AICPU max 7 / launch 14, block_dim max 36\n");
}

/* spec/pmu.md §1.5, a2a3. */
static void test_a2a3_pmu_offsets(void **state)
{
	(void)state;
	const struct tp_pmu_regmap *m = &tp_platform_a2a3sim()->pmu;
	assert_int_equal(m->ctrl0, 0x200);
	assert_int_equal(m->ctrl1, TP_PMU_REG_ABSENT);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(m->cnt[i], 0x210 + 8 * i);
		assert_int_equal(m->cnt_idx[i], 0x1280 + 4 * i);
	}
	assert_int_equal(m->cnt[7], 0x248);
	assert_int_equal(m->cnt_idx[7], 0x129C);
	assert_int_equal(m->cnt[8], TP_PMU_REG_ABSENT);
	assert_int_equal(m->cnt[9], TP_PMU_REG_ABSENT);
	assert_int_equal(m->cnt_idx[8], TP_PMU_REG_ABSENT);
	assert_int_equal(m->cnt_total0, 0x250);
	assert_int_equal(m->cnt_total1, 0x254);
	assert_int_equal(m->start_cyc0, 0x2A0);
	assert_int_equal(m->start_cyc1, 0x2A4);
	assert_int_equal(m->stop_cyc0, 0x2A8);
	assert_int_equal(m->stop_cyc1, 0x2AC);
	assert_int_equal(m->ctrl0_enable_val, 0x7);
	assert_int_equal(m->ctrl1_enable_val, 0);
}

/* spec/pmu.md §1.5, a5. */
static void test_a5_pmu_offsets(void **state)
{
	(void)state;
	const struct tp_pmu_regmap *m = &tp_platform_a5sim()->pmu;
	assert_int_equal(m->ctrl0, 0x4200);
	assert_int_equal(m->ctrl1, 0x2400);
	for (int i = 0; i < 8; i++)
		assert_int_equal(m->cnt[i], 0x4210 + 8 * i);
	assert_int_equal(m->cnt[8], 0x4250);
	assert_int_equal(m->cnt[9], 0x4254);
	for (int i = 0; i < 10; i++)
		assert_int_equal(m->cnt_idx[i], 0x2500 + 4 * i);
	assert_int_equal(m->cnt_total0, 0x4260);
	assert_int_equal(m->cnt_total1, 0x4264);
	assert_int_equal(m->start_cyc0, 0x42A0);
	assert_int_equal(m->start_cyc1, 0x42A4);
	assert_int_equal(m->stop_cyc0, 0x42A8);
	assert_int_equal(m->stop_cyc1, 0x42AC);
	assert_int_equal(m->ctrl0_enable_val, 0x7);
	assert_int_equal(m->ctrl1_enable_val, 0x1);
}

/* Every present register is 4-aligned and inside the PMU block, no two
 * share an offset, and exactly pmu_slots counters / selectors exist. */
static void check_regmap(const struct tp_platform *p)
{
	const struct tp_pmu_regmap *m = &p->pmu;
	uint32_t regs[64];
	int n = 0;
	regs[n++] = m->ctrl0;
	if (m->ctrl1 != TP_PMU_REG_ABSENT)
		regs[n++] = m->ctrl1;
	int cnts = 0, idxs = 0;
	for (int i = 0; i < TP_PMU_MAX_SLOTS; i++) {
		if (m->cnt[i] != TP_PMU_REG_ABSENT) {
			regs[n++] = m->cnt[i];
			cnts++;
		}
		if (m->cnt_idx[i] != TP_PMU_REG_ABSENT) {
			regs[n++] = m->cnt_idx[i];
			idxs++;
		}
	}
	assert_int_equal(cnts, p->pmu_slots);
	assert_int_equal(idxs, p->pmu_slots);
	regs[n++] = m->cnt_total0;
	regs[n++] = m->cnt_total1;
	regs[n++] = m->start_cyc0;
	regs[n++] = m->start_cyc1;
	regs[n++] = m->stop_cyc0;
	regs[n++] = m->stop_cyc1;
	assert_int_equal(m->block_bytes % 4, 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(regs[i] % 4, 0);
		assert_true(regs[i] < m->block_bytes);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(regs[i], regs[j]);
	}
	printf("%s: %d PMU registers inside a %#x-byte block, all distinct\n", p->name, n,
	       m->block_bytes);
}

static void test_regmaps_consistent(void **state)
{
	(void)state;
	check_regmap(tp_platform_a2a3sim());
	check_regmap(tp_platform_a5sim());
}

static void test_find_by_name(void **state)
{
	(void)state;
	assert_ptr_equal(tp_platform_find("a2a3sim"), tp_platform_a2a3sim());
	assert_ptr_equal(tp_platform_find("a5sim"), tp_platform_a5sim());
	assert_string_equal(tp_platform_names(), "a2a3sim, a5sim");

	static const char *bad[] = { "A5SIM", "a5", "a2a3", "", "a5sim ", "onboard" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tp_clear_error();
		assert_null(tp_platform_find(bad[i]));
		char want[64];
		snprintf(want, sizeof(want), "unknown platform '%s'", bad[i]);
		printf("find('%s') -> %s\n", bad[i], tp_last_error());
		assert_non_null(strstr(tp_last_error(), want));
		assert_non_null(strstr(tp_last_error(), "expected a2a3sim or a5sim"));
	}
	tp_clear_error();
	assert_null(tp_platform_find(NULL));
	assert_non_null(strstr(tp_last_error(), "platform name missing"));
}

/* runtime-model.md §1.2: AICs 0..bd-1, AIVs bd..3bd-1, cluster c =
 * {c, bd+2c, bd+2c+1}. */
static void test_topology_default(void **state)
{
	(void)state;
	const int bd = 8;
	assert_int_equal(tp_topo_num_cores(bd), 24);
	static const struct {
		int core;
		enum tp_core_type type;
		int cluster;
		enum tp_subslot slot;
	} want[] = {
		{ 0, TP_CORE_AIC, 0, TP_SLOT_AIC },   { 7, TP_CORE_AIC, 7, TP_SLOT_AIC },
		{ 8, TP_CORE_AIV, 0, TP_SLOT_AIV0 },  { 9, TP_CORE_AIV, 0, TP_SLOT_AIV1 },
		{ 10, TP_CORE_AIV, 1, TP_SLOT_AIV0 }, { 15, TP_CORE_AIV, 3, TP_SLOT_AIV1 },
		{ 22, TP_CORE_AIV, 7, TP_SLOT_AIV0 }, { 23, TP_CORE_AIV, 7, TP_SLOT_AIV1 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(tp_topo_core_type(bd, want[i].core), want[i].type);
		assert_int_equal(tp_topo_cluster(bd, want[i].core), want[i].cluster);
		assert_int_equal(tp_topo_slot(bd, want[i].core), want[i].slot);
	}
	assert_string_equal(tp_core_type_name(TP_CORE_AIC), "AIC");
	assert_string_equal(tp_core_type_name(TP_CORE_AIV), "AIV");
	/* decoupled ownership: cluster % S */
	assert_int_equal(tp_topo_cluster_owner(0, 3), 0);
	assert_int_equal(tp_topo_cluster_owner(4, 3), 1);
	assert_int_equal(tp_topo_cluster_owner(7, 3), 1);
	assert_int_equal(tp_topo_cluster_owner(7, 1), 0);
}

static void test_topology_round_trip(void **state)
{
	(void)state;
	for (int bd = 1; bd <= 36; bd++) {
		int seen[108] = { 0 };
		for (int c = 0; c < bd; c++) {
			int ids[3] = { tp_topo_core_id(bd, c, TP_SLOT_AIC),
				       tp_topo_core_id(bd, c, TP_SLOT_AIV0),
				       tp_topo_core_id(bd, c, TP_SLOT_AIV1) };
			assert_int_equal(ids[0], c);
			assert_int_equal(ids[1], bd + 2 * c);
			assert_int_equal(ids[2], bd + 2 * c + 1);
			for (int s = 0; s < 3; s++) {
				assert_int_equal(tp_topo_cluster(bd, ids[s]), c);
				assert_int_equal(tp_topo_slot(bd, ids[s]), (enum tp_subslot)s);
				seen[ids[s]]++;
			}
		}
		for (int id = 0; id < 3 * bd; id++)
			assert_int_equal(seen[id], 1);
	}
	printf("topology: every core of 1..36 clusters in exactly one slot\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a2a3sim_numbers),
		cmocka_unit_test(test_a5sim_numbers),
		cmocka_unit_test(test_a2a3_pmu_offsets),
		cmocka_unit_test(test_a5_pmu_offsets),
		cmocka_unit_test(test_regmaps_consistent),
		cmocka_unit_test(test_find_by_name),
		cmocka_unit_test(test_topology_default),
		cmocka_unit_test(test_topology_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
