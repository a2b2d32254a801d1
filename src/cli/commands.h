/* commands.h — the subcommands of the taskprof CLI. */
#ifndef TP_CLI_COMMANDS_H
#define TP_CLI_COMMANDS_H

#ifndef TASKPROF_VERSION
#define TASKPROF_VERSION "0.1.0"
#endif

/**
 * struct tp_command - one entry of main.c's subcommand table.
 * @name:    the word after "taskprof" ("run", "op", ...).
 * @summary: one line for `taskprof --help`.
 * @run:     the command; argv[0] is the command name; returns the process
 *           exit code.
 */
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

/**
 * cli_platform_env() - the platform TASKPROF_PLATFORM names: the default of
 * `-p/--platform` for `taskprof run` and `taskprof transport-demo`, and
 * the platform of `taskprof op` and its application when `op -p` is not
 * given (README "Platforms").
 * @cmd:  the command's name for the error line ("run").
 * @name: set to the platform's name (a static string, "a2a3sim" or
 *        "a5sim"), or NULL when the variable is unset or empty.
 *
 * Return: 0; or 2 (bad usage) when the variable names no platform, after
 * one line on stderr: "taskprof CMD: TASKPROF_PLATFORM expects a2a3sim or
 * a5sim (or unset), got 'VALUE'".
 */
int cli_platform_env(const char *cmd, const char **name);

/*
 * The subcommands. Each takes main's argv from the command name on
 * (argv[0] is "run", "op", ...; @argc counts it) and returns the process
 * exit code; errors are printed on stderr, never returned as -errno.
 */

/**
 * cmd_run() - `taskprof run CASE`: run one case on the simulated device,
 * check its golden, print the result line (spec/runtime-model.md §4, §6).
 * @argc, @argv: the command line from "run" on.
 *
 * Return: 0 golden pass, 1 golden failure or a failed run, 2 bad usage.
 */
int cmd_run(int argc, char **argv);

/**
 * cmd_transport_demo() - `taskprof transport-demo`: producer threads push
 * 64-byte records through the profiling transport (seed 004) and the run
 * prints its reconcile line and throughput.
 * @argc, @argv: the command line from "transport-demo" on.
 *
 * Return: 0 reconciled; 1 failed run, reconcile mismatch, records out of
 * order or stdout not written; 2 bad usage.
 */
int cmd_transport_demo(int argc, char **argv);

/**
 * cmd_sched_overhead() - `taskprof sched-overhead`: the scheduler-overhead
 * report (spec/swimlane-format.md §6); sl_sched_overhead_main().
 * @argc, @argv: the command line from "sched-overhead" on.
 *
 * Return: 0 report printed; 1 missing or unreadable input, or no scheduler
 * phases; 2 bad usage.
 */
int cmd_sched_overhead(int argc, char **argv);

/**
 * cmd_swimlane() - `taskprof swimlane`: convert l2_swimlane_records.json
 * (+ deps.json, name map) into a Perfetto trace and print the per-function
 * statistics (spec/swimlane-format.md §4, §5); sl_convert_main() with the
 * interrupt handler of cli_interrupt_install() installed.
 * @argc, @argv: the command line from "swimlane" on.
 *
 * Return: 0 success, 1 error ("Error: ..." on stderr), 2 bad usage
 * (spec/swimlane-format.md §5.7).
 */
int cmd_swimlane(int argc, char **argv);

/**
 * cmd_pmu() - `taskprof pmu PMU_CSV`: the per-function summary of a
 * pmu.csv (spec/pmu.md §2); cmd_pmu_run() with a NULL @stdout_err.
 * @argc, @argv: the command line from "pmu" on.
 *
 * Return: 0, 1 bad input or stdout not written, 2 bad usage.
 */
int cmd_pmu(int argc, char **argv);

/**
 * cmd_op() - `taskprof op [options] [--] APP [ARGS...]`: the operator
 * profiler's launcher (spec/opprof.md §4.1, §4.2, §4.7).
 * @argc, @argv: the command line from "op" on.
 *
 * Return: the application's exit code (killed by signal S: 128 + S); 1
 * when the profiler failed; 2 bad usage; 130 / 143 / 129 when SIGINT /
 * SIGTERM / SIGHUP ends the report phase.
 */
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
