/* SPDX-License-Identifier: MIT */
#include "platform/pmu_events.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"

/* Slot initialisers: a named event and an unused slot. */
#define EV(id_, name_) { (id_), (name_) }
#define NONE { 0x0, "" }

/* spec/pmu.md §1.2 — a2a3, DAV_2201, 8 slots. n_named is typed in; the
 * unit test recounts it from the names. */
static const struct tp_pmu_event_group a2a3_groups[] = {
	{ TP_PMU_ARITHMETIC_UTILIZATION, "ARITHMETIC_UTILIZATION", TP_PMU_ARCH_A2A3, 8, 7, {
		EV(0x49, "cube_fp16_exec"), EV(0x4a, "cube_int8_exec"),
		EV(0x4b, "vec_fp32_exec"), EV(0x4c, "vec_fp16_128lane_exec"),
		EV(0x4d, "vec_fp16_64lane_exec"), EV(0x4e, "vec_int32_exec"),
		EV(0x4f, "vec_misc_exec"), NONE } },
	{ TP_PMU_PIPE_UTILIZATION, "PIPE_UTILIZATION", TP_PMU_ARCH_A2A3, 8, 8, {
		EV(0x08, "vec_busy_cycles"), EV(0x0a, "cube_busy_cycles"),
		EV(0x09, "scalar_busy_cycles"), EV(0x0b, "mte1_busy_cycles"),
		EV(0x0c, "mte2_busy_cycles"), EV(0x0d, "mte3_busy_cycles"),
		EV(0x55, "icache_miss"), EV(0x54, "icache_req") } },
	{ TP_PMU_MEMORY, "MEMORY", TP_PMU_ARCH_A2A3, 8, 8, {
		EV(0x15, "ub_read_req"), EV(0x16, "ub_write_req"),
		EV(0x31, "l1_read_req"), EV(0x32, "l1_write_req"),
		EV(0x0f, "l2_read_req"), EV(0x10, "l2_write_req"),
		EV(0x12, "main_read_req"), EV(0x13, "main_write_req") } },
	{ TP_PMU_MEMORY_L0, "MEMORY_L0", TP_PMU_ARCH_A2A3, 8, 6, {
		EV(0x1b, "l0a_read_req"), EV(0x1c, "l0a_write_req"),
		EV(0x21, "l0b_read_req"), EV(0x22, "l0b_write_req"),
		EV(0x27, "l0c_read_req"), EV(0x28, "l0c_write_req"), NONE, NONE } },
	{ TP_PMU_RESOURCE_CONFLICT, "RESOURCE_CONFLICT", TP_PMU_ARCH_A2A3, 8, 3, {
		EV(0x64, "bankgroup_stall_cycles"), EV(0x65, "bank_stall_cycles"),
		EV(0x66, "vec_resc_conflict_cycles"), NONE, NONE, NONE, NONE, NONE } },
	{ TP_PMU_MEMORY_UB, "MEMORY_UB", TP_PMU_ARCH_A2A3, 8, 8, {
		EV(0x3d, "ub_read_bw_mte"), EV(0x10, "l2_write_bw"),
		EV(0x13, "main_mem_write_bw"), EV(0x3e, "ub_write_bw_mte"),
		EV(0x43, "ub_read_bw_vector"), EV(0x44, "ub_write_bw_vector"),
		EV(0x37, "ub_read_bw_scalar"), EV(0x38, "ub_write_bw_scalar") } },
	{ TP_PMU_L2_CACHE, "L2_CACHE", TP_PMU_ARCH_A2A3, 8, 6, {
		EV(0x500, "write_cache_hit"), EV(0x502, "write_cache_miss_allocate"),
		EV(0x504, "r0_read_cache_hit"), EV(0x506, "r0_read_cache_miss_allocate"),
		EV(0x508, "r1_read_cache_hit"), EV(0x50a, "r1_read_cache_miss_allocate"),
		NONE, NONE } },
};

/* spec/pmu.md §1.3 — a5, DAV_3510, 10 slots. */
static const struct tp_pmu_event_group a5_groups[] = {
	{ TP_PMU_ARITHMETIC_UTILIZATION, "ARITHMETIC_UTILIZATION", TP_PMU_ARCH_A5, 10, 2, {
		EV(0x323, "cube_fp_instr_busy"), EV(0x324, "cube_int_instr_busy"),
		NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE } },
	{ TP_PMU_PIPE_UTILIZATION, "PIPE_UTILIZATION", TP_PMU_ARCH_A5, 10, 9, {
		EV(0x501, "pmu_idc_aic_vec_busy_o"), EV(0x301, "cube_instr_busy"),
		EV(0x1, "scalar_instr_busy"), EV(0x701, "mte1_instr_busy"),
		EV(0x202, "mte2_instr_busy"), EV(0x203, "mte3_instr_busy"),
		EV(0x34, "icache_req"), EV(0x35, "icache_miss"),
		EV(0x714, "pmu_fix_instr_busy"), NONE } },
	{ TP_PMU_MEMORY, "MEMORY", TP_PMU_ARCH_A5, 10, 8, {
		NONE, NONE,
		EV(0x400, "bif_sc_pmu_read_main_instr_core"),
		EV(0x401, "bif_sc_pmu_write_main_instr_core"),
		EV(0x56f, "pmu_aiv_ext_rd_ub_instr"), EV(0x571, "ub_pmu_vec_rd_ub_acc"),
		EV(0x570, "pmu_aiv_ext_wr_ub_instr"), EV(0x572, "ub_pmu_vec_wr_ub_acc"),
		EV(0x707, "pmu_rd_l1_instr"), EV(0x709, "pmu_wr_l1_instr") } },
	{ TP_PMU_MEMORY_L0, "MEMORY_L0", TP_PMU_ARCH_A5, 10, 7, {
		EV(0x304, "cube_sc_pmu_read_l0a_instr"), EV(0x703, "pmu_wr_l0a_instr"),
		EV(0x306, "cube_sc_pmu_read_l0b_instr"), EV(0x705, "pmu_wr_l0b_instr"),
		EV(0x712, "fixp_rd_l0c_instr"), EV(0x30a, "cube_sc_pmu_read_l0c_instr"),
		EV(0x308, "cube_sc_pmu_write_l0c_instr"), NONE, NONE, NONE } },
	{ TP_PMU_RESOURCE_CONFLICT, "RESOURCE_CONFLICT", TP_PMU_ARCH_A5, 10, 4, {
		EV(0x3556, "stu_pmu_wctl_ub_cflt"), EV(0x3540, "ldu_pmu_ib_ub_cflt"),
		EV(0x3502, "pmu_idc_aic_vec_instr_vf_busy_o"),
		EV(0x3528, "idu_pmu_ins_iss_cnt"),
		NONE, NONE, NONE, NONE, NONE, NONE } },
	{ TP_PMU_MEMORY_UB, "MEMORY_UB", TP_PMU_ARCH_A5, 10, 7, {
		EV(0x3, "pmu_rd_acc_ub_instr_p"), EV(0x5, "pmu_wr_acc_ub_instr_p"),
		EV(0x70c, "pmu_fix_wr_ub_instr"),
		EV(0x206, "mte_sc_pmu_write_acc_ub_instr_0"),
		EV(0x204, "mte_sc_pmu_read_acc_ub_instr_0"),
		EV(0x571, "ub_pmu_vec_rd_ub_acc"), EV(0x572, "ub_pmu_vec_wr_ub_acc"),
		NONE, NONE, NONE } },
	{ TP_PMU_L2_CACHE, "L2_CACHE", TP_PMU_ARCH_A5, 10, 6, {
		EV(0x424, "bif_sc_pmu_ar_close_l2_hit_core"),
		EV(0x425, "bif_sc_pmu_ar_close_l2_miss_core"),
		EV(0x426, "bif_sc_pmu_ar_close_l2_victim_core"),
		EV(0x42a, "bif_sc_pmu_aw_close_l2_hit_core"),
		EV(0x42b, "bif_sc_pmu_aw_close_l2_miss_core"),
		EV(0x42c, "bif_sc_pmu_aw_close_l2_victim_core"),
		NONE, NONE, NONE, NONE } },
};

#define N_GROUPS (sizeof(a2a3_groups) / sizeof(a2a3_groups[0]))

static const struct tp_pmu_event_group *find(enum tp_pmu_arch arch, uint32_t type)
{
	const struct tp_pmu_event_group *tab = arch == TP_PMU_ARCH_A5 ? a5_groups : a2a3_groups;
	for (size_t i = 0; i < N_GROUPS; i++)
		if (tab[i].type == type)
			return &tab[i];
	return NULL;
}

enum tp_pmu_arch tp_pmu_arch_of(const struct tp_platform *plat)
{
	return plat && plat->pmu_slots == TP_PMU_SLOTS_A5 ? TP_PMU_ARCH_A5 : TP_PMU_ARCH_A2A3;
}

int tp_pmu_arch_slots(enum tp_pmu_arch arch)
{
	return arch == TP_PMU_ARCH_A5 ? TP_PMU_SLOTS_A5 : TP_PMU_SLOTS_A2A3;
}

const char *tp_pmu_event_type_name(uint32_t type)
{
	const struct tp_pmu_event_group *g = find(TP_PMU_ARCH_A2A3, type);
	return g ? g->type_name : NULL;
}

const char *tp_pmu_group_model_note(enum tp_pmu_arch arch, uint32_t type)
{
	if (type == TP_PMU_L2_CACHE)
		return arch == TP_PMU_ARCH_A5
			       ? NULL
			       : "has one L2 read channel: every GM read counts on r0, "
				 "r1_read_cache_hit and r1_read_cache_miss_allocate read 0";
	if (type == TP_PMU_RESOURCE_CONFLICT)
		return arch == TP_PMU_ARCH_A5
			       ? "does not model bank conflicts or vector-function mode: of "
				 "RESOURCE_CONFLICT only idu_pmu_ins_iss_cnt counts, the other "
				 "three read 0"
			       : "does not model bank or resource conflicts: every "
				 "RESOURCE_CONFLICT counter reads 0";
	return NULL;
}

bool tp_pmu_event_type_valid(int64_t type)
{
	return type > 0 && type <= UINT32_MAX && find(TP_PMU_ARCH_A2A3, (uint32_t)type);
}

const struct tp_pmu_event_group *tp_pmu_event_group(enum tp_pmu_arch arch, uint32_t type)
{
	return find(arch, type);
}

const struct tp_pmu_event_group *
tp_pmu_event_group_or_default(enum tp_pmu_arch arch, uint32_t type)
{
	const struct tp_pmu_event_group *g = find(arch, type);
	return g ? g : find(arch, TP_PMU_EVENT_TYPE_DEFAULT);
}

const struct tp_pmu_event_group *
tp_pmu_event_group_for_init(enum tp_pmu_arch arch, uint32_t type)
{
	const struct tp_pmu_event_group *g = find(arch, type);
	if (g)
		return g;
	TP_WARN("pmu_aicpu_init: invalid event type %u, programming PIPE_UTILIZATION=%u",
		type, (unsigned)TP_PMU_EVENT_TYPE_DEFAULT);
	return find(arch, TP_PMU_EVENT_TYPE_DEFAULT);
}

uint32_t tp_pmu_resolve_event_type(enum tp_pmu_arch arch, int64_t requested)
{
	if (requested > 0 && requested <= UINT32_MAX && find(arch, (uint32_t)requested))
		return (uint32_t)requested;
	if (requested != 0)
		/* %u of the value as the reference passes it (an int32
		 * through %u): -1 prints 4294967295. */
		TP_WARN("Invalid PMU event type %u, using default (PIPE_UTILIZATION=%u)",
			(unsigned)(uint32_t)requested, (unsigned)TP_PMU_EVENT_TYPE_DEFAULT);
	if (requested > 0) {
		/* taskprof's line after the reference's: what would have been
		 * valid (a negative value means off, said by the caller). */
		const struct tp_pmu_event_group *tab = arch == TP_PMU_ARCH_A5 ? a5_groups
									    : a2a3_groups;
		char list[256] = "";
		for (size_t i = 0, o = 0; i < N_GROUPS && o < sizeof(list); i++)
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%u %s", i ? ", " : "",
					      (unsigned)tab[i].type, tab[i].type_name);
		TP_WARN("(taskprof: the PMU event groups are %s)", list);
	}
	return TP_PMU_EVENT_TYPE_DEFAULT;
}

int32_t tp_pmu_parse_env_value(const char *s)
{
	if (!s)
		return 0;
	while (isspace((unsigned char)*s))
		s++;
	bool neg = false;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	int64_t v = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > (int64_t)INT32_MAX + 1)
			v = (int64_t)INT32_MAX + 1; /* clamp, keep consuming */
	}
	if (neg)
		return (int32_t)(-v < INT32_MIN ? INT32_MIN : -v);
	return (int32_t)(v > INT32_MAX ? INT32_MAX : v);
}

uint32_t tp_pmu_apply_env_override(enum tp_pmu_arch arch, uint32_t cli_type)
{
	const char *var = TP_PMU_ENV_EVENT_TYPE;
	const char *val = getenv(var);
	if (!val) {
		var = TP_PMU_ENV_EVENT_TYPE_ALIAS;
		val = getenv(var);
	}
	if (!val)
		return cli_type;
	int32_t v = tp_pmu_parse_env_value(val);
	if (v > 0 && find(arch, (uint32_t)v)) {
		TP_INFO("PMU event type set to %u from %s", (unsigned)v, var);
		/* The spec's line is INFO, which a default run does not show:
		 * a different choice on the command line is replaced, so say
		 * it where it is seen. */
		if ((uint32_t)v != cli_type)
			TP_WARN("(taskprof: %s=%s, %s, replaces the --enable-pmu choice %u, %s)",
				var, tp_shown(val), tp_pmu_event_type_name((uint32_t)v), (unsigned)cli_type,
				tp_pmu_event_type_name(cli_type));
		return (uint32_t)v;
	}
	/* The reference's text says "default" while it keeps the CLI
	 * choice (spec §8.2, §10 item 6); we keep both. */
	TP_WARN("Invalid %s=%s, using default (PIPE_UTILIZATION=%u)", var, tp_shown(val),
		(unsigned)TP_PMU_EVENT_TYPE_DEFAULT);
	/* Where that text is wrong, say what is used. */
	if (cli_type != TP_PMU_EVENT_TYPE_DEFAULT)
		TP_WARN("(taskprof: not the default here: the value is ignored and the "
			"--enable-pmu choice is kept, %s=%u)",
			tp_pmu_event_type_name(cli_type), (unsigned)cli_type);
	return cli_type;
}

uint32_t tp_pmu_select_event_type(enum tp_pmu_arch arch, int64_t requested)
{
	return tp_pmu_apply_env_override(arch, tp_pmu_resolve_event_type(arch, requested));
}

int tp_pmu_parse_event_arg(const char *s, int32_t *out)
{
	const char *p = s;
	if (!p)
		p = "";
	while (isspace((unsigned char)*p))
		p++;
	const char *q = p;
	if (*q == '+' || *q == '-')
		q++;
	if (!(*q >= '0' && *q <= '9'))
		goto bad;
	errno = 0;
	char *end;
	long long v = strtoll(p, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	if (*end != '\0')
		goto bad;
	if (errno == ERANGE || v < INT32_MIN || v > INT32_MAX)
		return tp_set_error(-ERANGE, "--enable-pmu: event type '%s' is out of range "
				    "(expected 1, 2, 4, 5, 6, 7 or 8)", s);
	*out = (int32_t)v;
	return 0;
bad:
	return tp_set_error(-EINVAL, "--enable-pmu: expected an integer event type "
			    "(1, 2, 4, 5, 6, 7 or 8), got '%s'", s ? s : "");
}

int tp_pmu_csv_header(const struct tp_pmu_event_group *g, char *buf, size_t len)
{
	size_t n = 0;
	int w = snprintf(buf, len, "thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles");
	if (w < 0 || (size_t)w >= len)
		return -ENOSPC;
	n = (size_t)w;
	for (int i = 0; i < g->n_slots; i++) {
		if (!g->slot[i].name[0])
			continue;
		w = snprintf(buf + n, len - n, ",%s", g->slot[i].name);
		if (w < 0 || (size_t)w >= len - n)
			return -ENOSPC;
		n += (size_t)w;
	}
	w = snprintf(buf + n, len - n, ",event_type,run_epoch\n");
	if (w < 0 || (size_t)w >= len - n)
		return -ENOSPC;
	return (int)(n + (size_t)w);
}
