/* SPDX-License-Identifier: MIT */
/*
 * op_launch.h — the launcher half of `taskprof op` (spec/opprof.md §4.1,
 * §4.7; docs/op-internals.md): running the application under the
 * injector, and matching the runs of an application replay.
 *
 * cmd_op.c parses the command line and drives these; op_exec.c runs one
 * execution of the application; op_app_replay.c matches the runs of an
 * application replay and assembles the per-launch directories;
 * op_app_elf.c reads the application's symbol table.
 */
#ifndef TP_CLI_OP_LAUNCH_H
#define TP_CLI_OP_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

/**
 * op_pathf() - format a path into @buf (vsnprintf).
 * @buf: receives the path, NUL-terminated.
 * @len: bytes of @buf.
 * @fmt: printf format of the path.
 *
 * Return: 0; -ENAMETOOLONG when it did not fit, or the format failed
 * (@buf then holds the truncated text, for messages only). Sets no
 * tp_last_error() message.
 */
int op_pathf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/**
 * op_app_defines_runtime() - whether the executable at @path has the
 * device runtime in itself: its symbol table (or dynamic one) defines
 * tp_rt_launch or tp_rt_launch_ex, as when libtaskprof_core.a is linked
 * in statically. Its calls then never reach the injector (LD_PRELOAD
 * interposes calls into shared libraries only).
 * @path: the application's file (a script, a stripped executable, a file
 *        that cannot be read: false).
 *
 * Return: true when it defines one of them.
 */
bool op_app_defines_runtime(const char *path);

/* Exit status the injector uses when the profiler itself failed inside the
 * application (EX_SOFTWARE of sysexits.h; docs/op.md "Exit status"). */
#define OP_INJECT_FAILURE_STATUS 70
/* The file the injector leaves in the session's output folder when it
 * exits with OP_INJECT_FAILURE_STATUS (op/inject/inject.h INJ_FATAL_MARK):
 * without it, status 70 is the application's own. */
#define OP_INJECT_FAILURE_MARK "injector_failed.txt"

/**
 * struct op_exec - one execution of the application under the injector.
 * @inject_lib:  absolute path of libtaskprof_inject.so (prepended to
 *               LD_PRELOAD).
 * @config_path: absolute path of <output>/config.txt (TASKPROF_CONFIG).
 * @pass:        application replay: the pass this run programs
 *               (TASKPROF_PASS); -1 for kernel and range replay (the
 *               variable is then removed from the environment).
 * @argv:        the application and its arguments, NULL-terminated; argv[0]
 *               is looked up in PATH when it has no '/'.
 * @wait_all:    --target-processes all: taskprof is the subreaper of the
 *               application's processes and, once the application has
 *               ended, waits for every process of this session (its
 *               TASKPROF_CONFIG in their environment) it left running
 *               (they are profiled too), saying so; a SIGINT / SIGTERM /
 *               SIGHUP then gives them up to 4 s more and stops the wait
 *               (those processes go on; op_exec_app() returns 128 + the
 *               signal), a second one at once.
 */
struct op_exec {
	const char *inject_lib;
	const char *config_path;
	int pass;
	char *const *argv;
	bool wait_all;
};

/**
 * op_path_each() - call @fn(candidate, @arg) for each file execvp() would
 * try for @file, a name without '/': "<entry>/@file" for each entry of
 * $PATH in order (unset: /bin:/usr/bin; an empty entry is the current
 * folder; a candidate longer than PATH_MAX is passed over), until @fn
 * returns non-zero. Allocates nothing (usable in a forked child).
 * @file: the program name, without '/'.
 * @fn:   called with each candidate path (valid during the call only) and
 *        @arg; returns 0 to go on.
 * @arg:  passed to @fn unchanged.
 *
 * Return: the first non-zero value of @fn, or 0.
 */
int op_path_each(const char *file, int (*fn)(const char *cand, void *arg), void *arg);

/**
 * op_inject_path() - where libtaskprof_inject.so is: the directory of the
 * running taskprof binary (/proc/self/exe) + "/libtaskprof_inject.so".
 * @buf: receives the absolute path.
 * @len: bytes of @buf.
 *
 * Return: 0 when the library is there and readable; -ENOENT (or the errno
 * of access(2)) otherwise, with a message naming the path and the build
 * target that makes it; -ENAMETOOLONG; the -errno of readlink(2) of
 * /proc/self/exe. tp_last_error() says why.
 */
int op_inject_path(char *buf, size_t len);

/**
 * struct op_exec_result - how one execution of the application went,
 * besides its exit code.
 * @interrupted: taskprof received SIGINT, SIGTERM or SIGHUP while the
 *               application ran (the caller then starts no further run).
 * @term_sig:    the signal that killed the application, 0 when it exited.
 * @n_failures:  lines the injector sent on the status pipe, or appended
 *               to TP_OP_STATUS_FILE during the run when the application
 *               had closed the pipe: files it could not open or write
 *               (TP_OP_STATUS_FD_ENV in op/config.h). Any is a profiler
 *               failure.
 * @failure:     the first of them ("<pid> <message>"), "" when none.
 */
struct op_exec_result {
	bool interrupted;
	int term_sig;
	unsigned n_failures;
	char failure[1024];
};

/**
 * op_exec_app() - run the application once and wait for it.
 * @x:   what to run.
 * @res: receives how it went (see struct op_exec_result); may be NULL.
 *
 * Forks; the child gets LD_PRELOAD=<inject_lib>[ <old LD_PRELOAD>],
 * TASKPROF_CONFIG, TASKPROF_TARGET_PID=<its pid>, TASKPROF_PASS
 * (or none), TASKPROF_OP_STATUS_FD (the write end of the status pipe, the
 * one descriptor it inherits from taskprof), in AddressSanitizer builds
 * verify_asan_link_order=0 added to ASAN_OPTIONS, an empty signal mask and
 * the dispositions taskprof was started with (SIGPIPE and SIGXFSZ, which
 * taskprof ignores for itself, are default again unless they were ignored
 * when taskprof started: an ignored signal stays ignored across exec),
 * then execvp(). While it runs, a SIGINT sent to taskprof with kill(2) is
 * forwarded (one typed at the terminal already reached the whole process
 * group). SIGTERM and SIGHUP are forwarded the same way (SIGHUP ignored at
 * entry, nohup, stays ignored). Each is followed by a SIGCONT, so that a
 * stopped application acts on it; the second of the three kills the
 * application (SIGKILL). A stop of the application (waitpid WUNTRACED) is
 * said on stderr; taskprof keeps waiting.
 *
 * Return: the application's exit code (0..255; killed by signal S: 128 +
 * S), or a negative errno when it could not be run: -ENOENT / -EACCES /
 * ... from execvp() ("cannot execute 'APP': ..."), -EMFILE when taskprof
 * has no descriptor left for its pipes (the message names ulimit -n), or
 * the errno of fork(2) / pipe(2) / waitpid(2); the message is in
 * tp_last_error().
 */
int op_exec_app(const struct op_exec *x, struct op_exec_result *res);

/* How launches of different runs are matched (--app-replay-match). */
enum op_match { OP_MATCH_NAME, OP_MATCH_GRID };
/* What differences between runs are accepted (--app-replay-mode). */
enum op_app_mode { OP_APP_STRICT, OP_APP_BALANCED, OP_APP_RELAXED };

/**
 * op_app_replay_merge() - match the runs of an application replay and
 * assemble the per-launch directories (spec/opprof.md §4.7;
 * docs/op-internals.md "Application replay").
 * @out:      the OPPROF_* directory.
 * @runs:     runs made, 1..passes; run i programmed pass i and wrote
 *            @out/raw/run_<i>/launches.txt and its launch directories.
 * @passes:   passes of the plan (launch.txt gets passes=@passes).
 * @match:    OP_MATCH_NAME: launches are the same when device and name
 *            agree; OP_MATCH_GRID: device, name and block_dim.
 * @mode:     OP_APP_STRICT: every run made the same launches in the same
 *            order; OP_APP_BALANCED: the same launches in any order (the
 *            k-th launch of a name matches the k-th); OP_APP_RELAXED: keep
 *            the profiled launches present in every run, warn on stderr
 *            about the others.
 * @n_launches: receives the launches run 0 made (profiled or not).
 * @n_merged:   receives the launch directories made under @out.
 * @n_dropped:  receives the launches OP_APP_RELAXED dropped (profiled in
 *              some run but not in every run: one warning each).
 *
 * Each matched launch gets @out/device<D>/<name>/<k>/ (k of run 0) with
 * dump/pass_<i>.bin moved from run i, dump/replay.txt the lines of every
 * run, dump/instr.txt of run 0, and launch.txt of run 0 with passes and
 * passes_done (pass files found) set; status becomes degraded when a pass
 * file is missing.
 *
 * Return: 0; -EPROTO when the runs differ beyond what @mode accepts (the
 * message names the first differing launch and run); -EINVAL for a
 * malformed launches.txt (file and line); -errno of file operations.
 */
int op_app_replay_merge(const char *out, int runs, int passes, enum op_match match,
			enum op_app_mode mode, int *n_launches, int *n_merged, int *n_dropped);

/**
 * op_count_launches() - launches recorded in a launches.txt file.
 * @path:        the file.
 * @n_launches:  receives its lines (every launch the process made).
 * @n_profiled:  receives the lines with profiled=1.
 *
 * Return: 0; -ENOENT when the file does not exist (the counts are then
 * 0; no message); -EINVAL for a malformed line (file and line in
 * tp_last_error()), -ENOMEM, or the -errno of reading it (message names
 * the file). The counts are 0 on any failure.
 */
int op_count_launches(const char *path, int *n_launches, int *n_profiled);

#endif /* TP_CLI_OP_LAUNCH_H */
