/*
 * main.c — the `taskprof` command: dispatch to one subcommand.
 * ARCHITECTURE.md §5.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

static const struct tp_command commands[] = {
	{"run", "run a case on the simulated device and check its golden", cmd_run},
	{"transport-demo", "push records from producer threads through the full transport",
	 cmd_transport_demo},
	{"sched-overhead", "scheduler-overhead report from l2_swimlane_records.json + deps.json",
	 cmd_sched_overhead},
	{"swimlane", "convert l2_swimlane_records.json (+ deps.json) into a Perfetto trace",
	 cmd_swimlane},
	{"pmu", "per-function summary of a pmu.csv (counter means, pipe shares)", cmd_pmu},
	{"op", "profile the kernel launches of an application with replay (operator profiler)",
	 cmd_op},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: taskprof <command> [options]\n\n"
		   "taskprof is a per-task profiler for task-graph runtimes on heterogeneous\n"
		   "accelerators (host, AICPU schedulers, AICore compute cores).\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-16s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\noptions:\n  -h, --help       this text\n  --version        print the version\n"
		   "\nRun 'taskprof <command> --help' for the options of a command.\n");
}

int main(int argc, char **argv)
{
	/* A reader that goes away (`| head`) must not kill a conversion half
	 * way: writes then fail with EPIPE and each command reports
	 * "Error: writing stdout: Broken pipe", exit 1. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("taskprof %s\n", TASKPROF_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "taskprof: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
