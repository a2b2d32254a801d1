/*
 * main.c — the `taskprof` command: dispatch to one subcommand.
 * ARCHITECTURE.md §5.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/args.h"
#include "base/error.h"
#include "base/file.h"
#include "cli/commands.h"
#include "cli/interrupt.h"

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
		   "\nRun 'taskprof <command> --help' (or 'taskprof help <command>') for the "
		   "options of a command.\n");
}

/*
 * The last word on stdout for a command that returned @rc: one that
 * succeeded but whose output did not arrive (its help text into a full
 * device, say) fails with the reason. A command that failed has said why
 * (the commands check stdout themselves where it matters).
 */
static int finish(const char *cmd, int rc)
{
	int err = -tp_stream_flush(stdout);
	if (!err || rc)
		return rc;
	fprintf(stderr, "taskprof%s%s: writing stdout: %s\n", cmd ? " " : "", cmd ? cmd : "",
		strerror(err));
	return 1;
}

const char *cli_argv0 = "taskprof";

/* The smallest stack limit (ulimit -s) a command starts with, KiB: `run`
 * needs about 92 KiB (its main thread and the device threads, whose stacks
 * take the limit's size), `op` 60, the others 40 or less. */
#define MIN_STACK_KIB 128u

/* One line and false when RLIMIT_STACK is below MIN_STACK_KIB: a command
 * would otherwise end in a stack overflow (a crash line, SIGSEGV) part way,
 * perhaps with files half written. */
static bool stack_limit_ok(const char *cmd)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= (rlim_t)MIN_STACK_KIB << 10)
		return true;
	/* Not fprintf(stderr): stderr is unbuffered, so glibc formats into
	 * an 8 KiB buffer on the stack, which alone overflowed a 16 KiB limit
	 * (SIGSEGV, no message, in 2 runs of 3). A static line, written
	 * whole. */
	static char line[256];
	int n = snprintf(line, sizeof(line),
			 "taskprof %s: the stack size limit is %lu KiB (ulimit -s); taskprof "
			 "needs at least %u KiB: raise it (ulimit -s 8192, the usual)\n", cmd,
			 (unsigned long)(rl.rlim_cur >> 10), MIN_STACK_KIB);
	if (n > 0)
		(void)!write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n
									 : sizeof(line) - 1);
	return false;
}

int main(int argc, char **argv)
{
	if (argc > 0 && argv[0] && *argv[0])
		cli_argv0 = argv[0];
	tp_args_set_prog(cli_argv0); /* for the commands the tools print */
	/* The rule for stdout, every command: a reader that goes away
	 * (`| head`) must not kill a run or a conversion half way, leaving
	 * its files incomplete. SIGPIPE is ignored, so writes fail with
	 * EPIPE; the command still finishes its files, then reports
	 * "writing stdout: Broken pipe" (as for any failed stdout, e.g. "No
	 * space left on device") on one line and exits 1, not 141. */
	signal(SIGPIPE, SIG_IGN);
	/* stdio keeps only an error flag when a buffered write fails, not its
	 * errno, and a reason found only for pipes and regular files
	 * (tp_stream_flush()) reads "Input/output error" on a full device: a
	 * 64 KiB buffer (instead of 4 KiB) lets every help text and result
	 * block reach the final flush whole, which then fails with the real
	 * errno. A terminal keeps its line buffering. */
	static char stdout_buf[1 << 16]; /* glibc ignores the size without a buffer */
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, stdout_buf, _IOFBF, sizeof(stdout_buf));
	/* A write past the file-size limit (ulimit -f) must not kill the
	 * process silently and leave its *.tmp files: ignored, the write
	 * fails with EFBIG, and the writer names the file ("<file>: write
	 * failed: File too large"), removes its temporary file and the
	 * command exits 1. Ignoring an ignored signal changes nothing. The
	 * disposition is inherited across exec: `taskprof op` restores the
	 * default in its child before running the application. */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* `taskprof help CMD` is `taskprof CMD --help`. */
	static char help_opt[] = "--help";
	char *help_argv[4] = { NULL, NULL, NULL, NULL }; /* argv[argc] is NULL */
	if (!strcmp(argv[1], "help") && argc == 3) {
		help_argv[0] = argv[0];
		help_argv[1] = argv[2];
		help_argv[2] = help_opt;
		argv = help_argv;
	} else if (!strcmp(argv[1], "help") && argc > 3) {
		fprintf(stderr, "taskprof: help takes one command, got %d words (taskprof help "
				"COMMAND)\n", argc - 2);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return finish(NULL, 0);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("taskprof %s\n", TASKPROF_VERSION);
		return finish(NULL, 0);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		/* A crash (a bug of taskprof, or a stack limit too small for
		 * it: ulimit -s) is one line naming it, with the command's
		 * temporary files removed, not a bare "Segmentation fault".
		 * `taskprof run` installs it again for the case's code. */
		bool help = false; /* --help needs no stack to speak of */
		for (int a = 2; a < argc && !help && strcmp(argv[a], "--"); a++)
			help = !strcmp(argv[a], "-h") || !strcmp(argv[a], "--help");
		if (!help && !stack_limit_ok(commands[i].name))
			return 1;
		static char who[64];
		snprintf(who, sizeof(who), "taskprof %s", commands[i].name);
		cli_crash_install(who, false);
		return finish(commands[i].name, commands[i].run(argc - 1, argv + 1));
	}
	fprintf(stderr, "taskprof: unknown command '%s'\n\n", tp_shown(argv[1]));
	usage(stderr);
	return 2;
}
