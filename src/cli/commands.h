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

/* How the user invoked taskprof (main's argv[0]), for the commands a
 * command suggests: "build/taskprof" runs from where the user is; a bare
 * "taskprof" was found on PATH. */
extern const char *cli_argv0;

int cmd_run(int argc, char **argv);
int cmd_transport_demo(int argc, char **argv);
int cmd_sched_overhead(int argc, char **argv);
int cmd_swimlane(int argc, char **argv);
int cmd_pmu(int argc, char **argv);
int cmd_op(int argc, char **argv);

/**
 * cmd_pmu_run() - `taskprof pmu` for a caller that owns stdout (`taskprof
 * run` prints the summary after its own lines).
 * @argc, @argv: as cmd_pmu().
 * @stdout_err:  NULL: exactly cmd_pmu(); otherwise a failure to write
 *               stdout is left to the caller: *@stdout_err receives its
 *               positive errno (0: none) and it does not fail the summary.
 *
 * Return: the exit code of cmd_pmu().
 */
int cmd_pmu_run(int argc, char **argv, int *stdout_err);

#endif
