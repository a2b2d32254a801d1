/*
 * cmd_pmu.c — `taskprof pmu PMU_CSV`: the per-function summary of a
 * pmu.csv (spec/pmu.md §2; the work is in tools/pmu/). The event groups'
 * column names come from platform/pmu_events.h and are handed to the tool
 * here, so tools/ keeps depending on base/ only.
 */
#include "cli/commands.h"
#include "platform/pmu_events.h"
#include "tools/pmu/pmu_report.h"

static const uint32_t event_types[] = {
	TP_PMU_ARITHMETIC_UTILIZATION, TP_PMU_PIPE_UTILIZATION, TP_PMU_MEMORY,
	TP_PMU_MEMORY_L0, TP_PMU_RESOURCE_CONFLICT, TP_PMU_MEMORY_UB, TP_PMU_L2_CACHE,
};
#define N_TYPES (sizeof(event_types) / sizeof(event_types[0]))

int cmd_pmu(int argc, char **argv)
{
	return cmd_pmu_run(argc, argv, NULL);
}

int cmd_pmu_run(int argc, char **argv, int *stdout_err)
{
	/* every (architecture, event type) group: a2a3 first, then a5 */
	static const enum tp_pmu_arch archs[] = {TP_PMU_ARCH_A2A3, TP_PMU_ARCH_A5};
	const char *names[2 * N_TYPES][TP_PMU_MAX_SLOTS];
	struct pmu_counter_set sets[2 * N_TYPES];
	size_t n = 0;
	for (size_t a = 0; a < 2; a++) {
		for (size_t t = 0; t < N_TYPES; t++) {
			const struct tp_pmu_event_group *g = tp_pmu_event_group(archs[a], event_types[t]);
			if (!g)
				continue;
			int k = 0;
			for (int i = 0; i < g->n_slots; i++)
				if (g->slot[i].name[0]) /* unused slots have no column */
					names[n][k++] = g->slot[i].name;
			sets[n] = (struct pmu_counter_set){
				.event_type = g->type,
				.type_name = g->type_name,
				.arch = archs[a] == TP_PMU_ARCH_A5 ? "a5" : "a2a3",
				.names = names[n],
				.n = k,
			};
			n++;
		}
	}
	return pmu_report_run(argc, argv, sets, n, stdout_err);
}
