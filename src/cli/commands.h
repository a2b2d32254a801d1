/* commands.h — the subcommands of the taskprof CLI. */
#ifndef TP_CLI_COMMANDS_H
#define TP_CLI_COMMANDS_H

#ifndef TASKPROF_VERSION
#define TASKPROF_VERSION "0.1.0"
#endif

struct tp_command {
	const char *name;
	const char *summary;
	/* argv[0] is the command name; returns the process exit code. */
	int (*run)(int argc, char **argv);
};

int cmd_run(int argc, char **argv);
int cmd_transport_demo(int argc, char **argv);
int cmd_sched_overhead(int argc, char **argv);
int cmd_swimlane(int argc, char **argv);
int cmd_pmu(int argc, char **argv);
int cmd_op(int argc, char **argv);

#endif
