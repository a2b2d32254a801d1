/*
 * cmd_swimlane.c — `taskprof swimlane`: convert l2_swimlane_records.json
 * (+ deps.json, name map) into a Perfetto trace and print the per-function
 * statistics (spec/swimlane-format.md §4, §5). The logic lives in
 * tools/swimlane/convert.c so that `taskprof run` can call it too.
 */
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "tools/swimlane/trace.h"

int cmd_swimlane(int argc, char **argv)
{
	/* An interrupted conversion leaves no merged_swimlane.json.*.tmp. */
	cli_interrupt_install("taskprof swimlane");
	return sl_convert_main(argc, argv);
}
