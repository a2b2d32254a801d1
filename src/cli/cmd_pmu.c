/*
 * cmd_pmu.c — `taskprof pmu PMU_CSV`: the per-function summary of a
 * pmu.csv (spec/pmu.md §2; the work is in tools/pmu/).
 */
#include "cli/commands.h"
#include "tools/pmu/pmu_report.h"

int cmd_pmu(int argc, char **argv)
{
	return pmu_report_main(argc, argv);
}
