/*
 * cmd_sched_overhead.c — `taskprof sched-overhead`: the scheduler-overhead
 * report over l2_swimlane_records.json + deps.json
 * (spec/swimlane-format.md §6; the work is in tools/swimlane/).
 */
#include "cli/commands.h"
#include "tools/swimlane/sched_overhead.h"

int cmd_sched_overhead(int argc, char **argv)
{
	return sl_sched_overhead_main(argc, argv);
}
