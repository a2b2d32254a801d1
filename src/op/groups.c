/* SPDX-License-Identifier: MIT */
#include "op/groups.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "op/plan.h"

/* Metric initialisers: one core, a formula, 1..4 event ids. */
#define M1(col, core, f, a) { (col), (core), (f), 1, { (a) }, 0 }
#define M2(col, core, f, a, b) { (col), (core), (f), 2, { (a), (b) }, 0 }
#define AIC TP_OP_AIC
#define AIV TP_OP_AIV

/* A pipe's busy cycles as time and as share of the block's cycles. */
#define PIPE(core, pfx, id) M1(pfx "_time(us)", core, TP_OP_F_TIME_US, id), \
			    M1(pfx "_ratio", core, TP_OP_F_RATIO, id)

/*
 * Derived metrics per group and architecture: the §1.5 columns the
 * simulated PMU models (docs/pmu.md). Groups whose events all read 0 in
 * the simulation (ResourceConflictRatio) have counter columns only. test_op_plan checks every metric reads at least
 * one modelled event of its core type.
 */
static const struct tp_op_metric a2a3_pipe[] = {
	PIPE(AIC, "aic_cube", 0x0a),   PIPE(AIV, "aiv_vec", 0x08),
	PIPE(AIC, "aic_scalar", 0x09), PIPE(AIV, "aiv_scalar", 0x09),
	PIPE(AIC, "aic_mte1", 0x0b),   PIPE(AIC, "aic_mte2", 0x0c),
	PIPE(AIV, "aiv_mte2", 0x0c),   PIPE(AIC, "aic_mte3", 0x0d),
	PIPE(AIV, "aiv_mte3", 0x0d),
};
static const struct tp_op_metric a2a3_arith[] = {
	M1("aic_cube_ratio", AIC, TP_OP_F_RATIO, 0x0a),
	M1("aic_cube_fp16_ratio", AIC, TP_OP_F_RATIO, 0x49),
	M1("aic_cube_int8_ratio", AIC, TP_OP_F_RATIO, 0x4a),
	M2("aic_cube_total_instr_number", AIC, TP_OP_F_COUNT, 0x49, 0x4a),
	M1("aic_cube_fp_instr_number", AIC, TP_OP_F_COUNT, 0x49),
	M1("aic_cube_int_instr_number", AIC, TP_OP_F_COUNT, 0x4a),
	M1("aiv_vec_ratio", AIV, TP_OP_F_RATIO, 0x08),
	M1("aiv_vec_fp32_ratio", AIV, TP_OP_F_RATIO, 0x4b),
	M2("aiv_vec_fp16_ratio", AIV, TP_OP_F_RATIO, 0x4c, 0x4d),
	M1("aiv_vec_int32_ratio", AIV, TP_OP_F_RATIO, 0x4e),
	M1("aiv_vec_misc_ratio", AIV, TP_OP_F_RATIO, 0x4f),
};
static const struct tp_op_metric a2a3_memory[] = {
	M1("aic_l1_read_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x31),
	M1("aic_l1_write_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x32),
	M1("aic_main_mem_read_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x12),
	M1("aic_main_mem_write_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x13),
	M1("aiv_main_mem_read_bw(GB/s)", AIV, TP_OP_F_BW_GBS, 0x12),
	M1("aiv_main_mem_write_bw(GB/s)", AIV, TP_OP_F_BW_GBS, 0x13),
	M1("aic_read_main_memory_datas(KB)", AIC, TP_OP_F_KB, 0x12),
	M1("aic_write_main_memory_datas(KB)", AIC, TP_OP_F_KB, 0x13),
	M1("aiv_read_main_memory_datas(KB)", AIV, TP_OP_F_KB, 0x12),
	M1("aiv_write_main_memory_datas(KB)", AIV, TP_OP_F_KB, 0x13),
};
static const struct tp_op_metric a2a3_l0[] = {
	M1("aic_l0a_read_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x1b),
	M1("aic_l0a_write_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x1c),
	M1("aic_l0b_read_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x21),
	M1("aic_l0b_write_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x22),
	M1("aic_l0c_read_bw_cube(GB/s)", AIC, TP_OP_F_BW_GBS, 0x27),
	M1("aic_l0c_write_bw_cube(GB/s)", AIC, TP_OP_F_BW_GBS, 0x28),
};
static const struct tp_op_metric a2a3_ub[] = {
	M1("aiv_ub_read_bw_vector(GB/s)", AIV, TP_OP_F_BW_GBS, 0x43),
	M1("aiv_ub_write_bw_vector(GB/s)", AIV, TP_OP_F_BW_GBS, 0x44),
	M1("aiv_ub_read_bw_scalar(GB/s)", AIV, TP_OP_F_BW_GBS, 0x37),
	M1("aiv_ub_write_bw_scalar(GB/s)", AIV, TP_OP_F_BW_GBS, 0x38),
	M1("aiv_ub_to_gm_bw(GB/s)", AIV, TP_OP_F_BW_GBS, 0x3d),
	M1("aiv_gm_to_ub_bw(GB/s)", AIV, TP_OP_F_BW_GBS, 0x3e),
};

static const struct tp_op_metric a5_pipe[] = {
	PIPE(AIC, "aic_cube", 0x301),    PIPE(AIV, "aiv_vec", 0x501),
	PIPE(AIC, "aic_scalar", 0x1),    PIPE(AIV, "aiv_scalar", 0x1),
	PIPE(AIC, "aic_mte1", 0x701),    PIPE(AIC, "aic_mte2", 0x202),
	PIPE(AIV, "aiv_mte2", 0x202),    PIPE(AIC, "aic_mte3", 0x203),
	PIPE(AIV, "aiv_mte3", 0x203),    PIPE(AIC, "aic_fixpipe", 0x714),
};
static const struct tp_op_metric a5_arith[] = {
	M1("aic_cube_ratio", AIC, TP_OP_F_RATIO, 0x301),
	M1("aic_cube_fp_ratio", AIC, TP_OP_F_RATIO, 0x323),
	M1("aic_cube_int_ratio", AIC, TP_OP_F_RATIO, 0x324),
	M1("aiv_vec_ratio", AIV, TP_OP_F_RATIO, 0x501),
};
static const struct tp_op_metric a5_memory[] = {
	M1("aic_l1_read_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x707),
	M1("aic_l1_write_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x709),
	M1("aic_main_mem_read_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x400),
	M1("aic_main_mem_write_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x401),
	M1("aiv_main_mem_read_bw(GB/s)", AIV, TP_OP_F_BW_GBS, 0x400),
	M1("aiv_main_mem_write_bw(GB/s)", AIV, TP_OP_F_BW_GBS, 0x401),
	M1("aic_read_main_memory_datas(KB)", AIC, TP_OP_F_KB, 0x400),
	M1("aic_write_main_memory_datas(KB)", AIC, TP_OP_F_KB, 0x401),
	M1("aiv_read_main_memory_datas(KB)", AIV, TP_OP_F_KB, 0x400),
	M1("aiv_write_main_memory_datas(KB)", AIV, TP_OP_F_KB, 0x401),
};
static const struct tp_op_metric a5_l0[] = {
	M1("aic_l0a_read_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x304),
	M1("aic_l0a_write_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x703),
	M1("aic_l0b_read_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x306),
	M1("aic_l0b_write_bw(GB/s)", AIC, TP_OP_F_BW_GBS, 0x705),
	M1("aic_l0c_read_bw_cube(GB/s)", AIC, TP_OP_F_BW_GBS, 0x30a),
	M1("aic_l0c_write_bw_cube(GB/s)", AIC, TP_OP_F_BW_GBS, 0x308),
	M1("aic_l0c_read_bw_fixpipe(GB/s)", AIC, TP_OP_F_BW_GBS, 0x712),
};
static const struct tp_op_metric a5_ub[] = {
	M1("aiv_ub_read_bw_vector(GB/s)", AIV, TP_OP_F_BW_GBS, 0x571),
	M1("aiv_ub_write_bw_vector(GB/s)", AIV, TP_OP_F_BW_GBS, 0x572),
	M1("aiv_ub_to_gm_bw(GB/s)", AIV, TP_OP_F_BW_GBS, 0x204),
	M1("aiv_gm_to_ub_bw(GB/s)", AIV, TP_OP_F_BW_GBS, 0x206),
};

/* L2 hit rates (spec/opprof.md §1.5 L2Cache): hits / (hits + misses),
 * as a percentage, per core type. */
#define HIT(col, core, n_num, n_ev, ...) { (col), (core), TP_OP_F_HIT_PCT, (n_ev), { __VA_ARGS__ }, (n_num) }
#define L2_RATES(core, pfx, wh, wm, rh, rm, rh1, rm1)                                  \
	HIT(pfx "_write_hit_rate(%)", core, 1, 2, wh, wm),                              \
	HIT(pfx "_read_hit_rate(%)", core, 2, 4, rh, rh1, rm, rm1),                     \
	HIT(pfx "_total_hit_rate(%)", core, 3, 6, wh, rh, rh1, wm, rm, rm1)
static const struct tp_op_metric a2a3_l2[] = {
	L2_RATES(AIC, "aic", 0x500, 0x502, 0x504, 0x506, 0x508, 0x50a),
	L2_RATES(AIV, "aiv", 0x500, 0x502, 0x504, 0x506, 0x508, 0x50a),
};
#define L2_RATES_A5(core, pfx)                                                      \
	HIT(pfx "_write_hit_rate(%)", core, 1, 2, 0x42a, 0x42b),                        \
	HIT(pfx "_read_hit_rate(%)", core, 1, 2, 0x424, 0x425),                         \
	HIT(pfx "_total_hit_rate(%)", core, 2, 4, 0x42a, 0x424, 0x42b, 0x425)
static const struct tp_op_metric a5_l2[] = {
	L2_RATES_A5(AIC, "aic"),
	L2_RATES_A5(AIV, "aiv"),
};

#define NM(a) (uint32_t)(sizeof(a) / sizeof((a)[0])), (a)

/* Static part of each group: name, platform table, metrics per arch. The
 * events are filled in from platform/pmu_events.c once (groups_once). */
static struct tp_op_group groups[TP_OP_NGROUPS] = {
	{ .name = "PipeUtilization", .pmu_type = TP_PMU_PIPE_UTILIZATION },
	{ .name = "ArithmeticUtilization", .pmu_type = TP_PMU_ARITHMETIC_UTILIZATION },
	{ .name = "Memory", .pmu_type = TP_PMU_MEMORY },
	{ .name = "MemoryL0", .pmu_type = TP_PMU_MEMORY_L0 },
	{ .name = "MemoryUB", .pmu_type = TP_PMU_MEMORY_UB },
	{ .name = "ResourceConflictRatio", .pmu_type = TP_PMU_RESOURCE_CONFLICT },
	{ .name = "L2Cache", .pmu_type = TP_PMU_L2_CACHE },
	{ .name = "BasicInfo", .pmu_type = 0 },
};

static const struct {
	uint32_t n;
	const struct tp_op_metric *m;
} metric_tab[TP_OP_NGROUPS][2] = {
	[TP_OP_G_PIPE] = { { NM(a2a3_pipe) }, { NM(a5_pipe) } },
	[TP_OP_G_ARITH] = { { NM(a2a3_arith) }, { NM(a5_arith) } },
	[TP_OP_G_MEMORY] = { { NM(a2a3_memory) }, { NM(a5_memory) } },
	[TP_OP_G_MEMORY_L0] = { { NM(a2a3_l0) }, { NM(a5_l0) } },
	[TP_OP_G_MEMORY_UB] = { { NM(a2a3_ub) }, { NM(a5_ub) } },
	[TP_OP_G_L2CACHE] = { { NM(a2a3_l2) }, { NM(a5_l2) } },
};

#define B_AIC TP_OP_CORE_BIT_AIC
#define B_AIV TP_OP_CORE_BIT_AIV
#define B_BOTH (TP_OP_CORE_BIT_AIC | TP_OP_CORE_BIT_AIV)

/*
 * The core type(s) an event means something on: cube / L0 / L1 / MTE1 /
 * FIXPIPE exist only on AIC, vector / UB only on AIV; MTE2 / MTE3 /
 * scalar / GM / L2 / icache on both. Anything not listed counts on both.
 */
static uint8_t event_cores(enum tp_pmu_arch arch, uint16_t id)
{
	static const uint16_t a2a3_aic[] = { 0x49, 0x4a, 0x0a, 0x0b, 0x31, 0x32, 0x1b,
					     0x1c, 0x21, 0x22, 0x27, 0x28 };
	static const uint16_t a2a3_aiv[] = { 0x4b, 0x4c, 0x4d, 0x4e, 0x4f, 0x08, 0x15, 0x16,
					     0x64, 0x65, 0x66, 0x3d, 0x3e, 0x43, 0x44, 0x37,
					     0x38 };
	static const uint16_t a5_aic[] = { 0x323, 0x324, 0x301, 0x701, 0x714, 0x707,
					   0x709, 0x304, 0x703, 0x306, 0x705, 0x712,
					   0x30a, 0x308, 0x70c };
	static const uint16_t a5_aiv[] = { 0x501, 0x56f, 0x571, 0x570, 0x572, 0x3556, 0x3540,
					   0x3502, 0x3, 0x5, 0x206, 0x204 };
	const uint16_t *c = arch == TP_PMU_ARCH_A5 ? a5_aic : a2a3_aic;
	size_t nc = arch == TP_PMU_ARCH_A5 ? sizeof(a5_aic) / 2 : sizeof(a2a3_aic) / 2;
	const uint16_t *v = arch == TP_PMU_ARCH_A5 ? a5_aiv : a2a3_aiv;
	size_t nv = arch == TP_PMU_ARCH_A5 ? sizeof(a5_aiv) / 2 : sizeof(a2a3_aiv) / 2;
	for (size_t i = 0; i < nc; i++)
		if (c[i] == id)
			return B_AIC;
	for (size_t i = 0; i < nv; i++)
		if (v[i] == id)
			return B_AIV;
	return B_BOTH;
}

static pthread_once_t groups_once = PTHREAD_ONCE_INIT;

static void groups_init(void)
{
	for (int g = 0; g < TP_OP_NGROUPS; g++) {
		for (int a = 0; a < 2; a++) {
			struct tp_op_group_arch *ga = &groups[g].arch[a];
			ga->n_metrics = metric_tab[g][a].n;
			ga->metrics = metric_tab[g][a].m;
			ga->n_ev = 0;
			if (!groups[g].pmu_type)
				continue;
			const struct tp_pmu_event_group *pg =
				tp_pmu_event_group((enum tp_pmu_arch)a, groups[g].pmu_type);
			if (!pg)
				continue;
			for (int s = 0; s < pg->n_slots; s++) {
				if (!pg->slot[s].name || !pg->slot[s].name[0])
					continue; /* an unused slot: nothing to count */
				struct tp_op_group_event *e = &ga->ev[ga->n_ev++];
				e->id = (uint16_t)pg->slot[s].id;
				e->cores = event_cores((enum tp_pmu_arch)a, e->id);
				e->name = pg->slot[s].name;
			}
		}
	}
}

const struct tp_op_group *tp_op_group_get(int idx)
{
	if (idx < 0 || idx >= TP_OP_NGROUPS)
		return NULL;
	pthread_once(&groups_once, groups_init);
	return &groups[idx];
}

const char *tp_op_group_name(int idx)
{
	return idx >= 0 && idx < TP_OP_NGROUPS ? groups[idx].name : NULL;
}

static void put_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
}

int tp_op_groups_parse(const char *list, uint32_t *mask, char *err, size_t errlen)
{
	char msg[512];
	if (!mask)
		return tp_set_error(-EINVAL, "tp_op_groups_parse: NULL mask");
	*mask = 0;
	if (!list || !*list) {
		*mask = TP_OP_GROUPS_DEFAULT;
		return 0;
	}
	const char *p = list;
	uint32_t m = 0;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *s = p;
		while (len && (*s == ' ' || *s == '\t')) {
			s++;
			len--;
		}
		while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		int found = -1;
		if (len == 7 && !strncasecmp(s, "Default", 7)) {
			m |= TP_OP_GROUPS_DEFAULT;
			found = 99;
		}
		for (int g = 0; found < 0 && g < TP_OP_NGROUPS; g++)
			if (strlen(groups[g].name) == len && !strncasecmp(s, groups[g].name, len))
				found = g;
		if (found >= 0 && found < TP_OP_NGROUPS)
			m |= 1u << found;
		if (found < 0) {
			if ((len == 9 && !strncasecmp(s, "Occupancy", 9)) ||
			    (len == 8 && !strncasecmp(s, "Roofline", 8))) {
				snprintf(msg, sizeof(msg),
					 "--aic-metrics: '%.*s' is a view of msprof op that taskprof op "
					 "does not produce; use Default (its CSVs hold the same counters)",
					 (int)len, s);
			} else {
				char valid[256] = "";
				for (int g = 0; g < TP_OP_NGROUPS; g++) {
					strcat(valid, groups[g].name);
					strcat(valid, ", ");
				}
				strcat(valid, "Default");
				snprintf(msg, sizeof(msg),
					 "--aic-metrics: %s metric group '%.*s'; valid: %s",
					 len ? "unknown" : "empty", (int)(len > 64 ? 64 : len), s, valid);
			}
			put_err(err, errlen, msg);
			return tp_set_error(-EINVAL, "%s", msg);
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	*mask = m;
	return 0;
}

int tp_op_groups_format(uint32_t mask, char *buf, size_t len)
{
	size_t off = 0;
	int need = 0;
	bool any = false;
	for (int g = 0; g < TP_OP_NGROUPS; g++) {
		if (!(mask & (1u << g)))
			continue;
		/* BasicInfo beside CSV groups adds nothing: OpBasicInfo is always written. */
		if (g == TP_OP_G_BASIC_INFO && (mask & TP_OP_GROUPS_DEFAULT))
			continue;
		int n = snprintf(buf ? buf + off : NULL, buf && off < len ? len - off : 0, "%s%s",
				 any ? "," : "", groups[g].name);
		need += n;
		if (off + (size_t)n < len)
			off += (size_t)n;
		else if (len)
			off = len - 1;
		any = true;
	}
	if (!any) {
		need = snprintf(buf, len, "BasicInfo");
	}
	return need;
}

size_t tp_op_group_events(int idx, enum tp_pmu_arch arch, int core, uint16_t *out, size_t max)
{
	const struct tp_op_group *g = tp_op_group_get(idx);
	if (!g || (arch != TP_PMU_ARCH_A2A3 && arch != TP_PMU_ARCH_A5) ||
	    (core != TP_OP_AIC && core != TP_OP_AIV))
		return 0;
	const struct tp_op_group_arch *ga = &g->arch[arch];
	uint8_t bit = core == TP_OP_AIC ? B_AIC : B_AIV;
	size_t n = 0;
	for (uint32_t i = 0; i < ga->n_ev; i++) {
		if (!(ga->ev[i].cores & bit))
			continue;
		if (out && n < max)
			out[n] = ga->ev[i].id;
		n++;
	}
	return n;
}

uint32_t tp_op_groups_of_event(enum tp_pmu_arch arch, int core, uint16_t id)
{
	uint32_t mask = 0;
	if (arch != TP_PMU_ARCH_A2A3 && arch != TP_PMU_ARCH_A5)
		return 0;
	uint8_t bit = core == TP_OP_AIC ? B_AIC : B_AIV;
	for (int gi = 0; gi < TP_OP_NGROUPS; gi++) {
		const struct tp_op_group_arch *ga = &tp_op_group_get(gi)->arch[arch];
		for (uint32_t i = 0; i < ga->n_ev; i++)
			if (ga->ev[i].id == id && (ga->ev[i].cores & bit))
				mask |= 1u << gi;
		for (uint32_t i = 0; i < ga->n_metrics; i++)
			for (uint32_t k = 0; k < ga->metrics[i].n_ev; k++)
				if (ga->metrics[i].ev[k] == id && ga->metrics[i].core == core)
					mask |= 1u << gi;
	}
	return mask;
}

const char *tp_op_event_name(enum tp_pmu_arch arch, uint16_t id)
{
	if (arch != TP_PMU_ARCH_A2A3 && arch != TP_PMU_ARCH_A5)
		return NULL;
	for (int gi = 0; gi < TP_OP_NGROUPS; gi++) {
		const struct tp_op_group_arch *ga = &tp_op_group_get(gi)->arch[arch];
		for (uint32_t i = 0; i < ga->n_ev; i++)
			if (ga->ev[i].id == id)
				return ga->ev[i].name;
	}
	return NULL;
}

bool tp_op_metric_eval(const struct tp_op_metric *m, const uint64_t *vals, const bool *have,
		       uint64_t cycles, double freq_hz, double *out)
{
	double s = 0, num = 0;
	for (uint32_t i = 0; i < m->n_ev; i++) {
		if (!have[i])
			return false;
		s += (double)vals[i];
		if (i < m->n_num)
			num += (double)vals[i];
	}
	switch (m->formula) {
	case TP_OP_F_COUNT:
		*out = s;
		return true;
	case TP_OP_F_RATIO:
		if (!cycles)
			return false;
		*out = s / (double)cycles;
		return true;
	case TP_OP_F_TIME_US:
		if (!(freq_hz > 0))
			return false;
		*out = s / freq_hz * 1e6;
		return true;
	case TP_OP_F_BW_GBS:
		if (!cycles || !(freq_hz > 0))
			return false;
		/* bytes / seconds / 1e9, with seconds = cycles / freq */
		*out = s * TP_OP_REQ_BYTES * freq_hz / (double)cycles / 1e9;
		return true;
	case TP_OP_F_KB:
		*out = s * TP_OP_REQ_BYTES / 1024.0;
		return true;
	case TP_OP_F_HIT_PCT:
		if (!(s > 0) || !m->n_num)
			return false; /* no access: no rate */
		*out = num / s * 100.0;
		return true;
	default:
		return false;
	}
}

const char *tp_op_metric_format(const struct tp_op_metric *m, bool ok, double v, char *buf,
				size_t len)
{
	if (!ok) {
		snprintf(buf, len, "N/A");
		return buf;
	}
	switch (m->formula) {
	case TP_OP_F_COUNT:
		snprintf(buf, len, "%.0f", v);
		break;
	case TP_OP_F_RATIO:
		snprintf(buf, len, "%.6f", v);
		break;
	default:
		snprintf(buf, len, "%.3f", v);
		break;
	}
	return buf;
}
