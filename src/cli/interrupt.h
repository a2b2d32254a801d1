/* SPDX-License-Identifier: MIT */
/*
 * cli/interrupt.h — SIGINT / SIGTERM / SIGHUP (and the other signals that
 * end a process by default: SIGXCPU, SIGALRM, SIGVTALRM, SIGUSR1,
 * SIGUSR2) and crashes for the commands that write outputs in process
 * (`taskprof run`, `taskprof swimlane`, ...): remove the
 * registered temporary files (base/tmp_registry.h), say so in one line,
 * die by the signal. `taskprof op` installs it for its report phase, once
 * the application has ended; while the application runs it has its own
 * (op_exec.c: it forwards to the application and reports what was
 * collected).
 */
#ifndef TP_CLI_INTERRUPT_H
#define TP_CLI_INTERRUPT_H

#include <stdbool.h>

/**
 * cli_interrupt_install() - handle SIGINT, SIGTERM, SIGHUP, SIGXCPU,
 * SIGALRM, SIGVTALRM, SIGUSR1 and SIGUSR2 for @cmd.
 * @cmd: the name the message starts with ("taskprof run"); must outlive
 *       the process (a string literal).
 *
 * The last five are taken only while their action is the default (a
 * handler some preloaded tool installed stays). On the first of these
 * signals the handler (async-signal-safe throughout) resets them all to
 * their default action, so a second one during the
 * clean-up kills at once; removes every registered temporary file; removes the
 * published run folder if that left it empty; writes one line on stderr:
 *
 *   taskprof run: interrupted by SIGTERM while running paged_attention
 *   Case1 on a2a3sim (round 2 of 5): removed 3 temporary files; what was
 *   written before is in outputs/paged_attention_Case1_20250101_120000
 *
 * (the "while" part is the phase the command marked, base/progress.h,
 * when it had one)
 * and raises the signal again, so the exit status is the conventional
 * 128 + signo (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, 152 for
 * SIGXCPU, whose line adds "(the CPU time limit, ulimit -t, was
 * reached)") as the shell reports it. A signal ignored when taskprof started (a background
 * job of a non-interactive shell ignores SIGINT; nohup ignores SIGHUP)
 * stays ignored. SIGQUIT keeps its default action (a core dump).
 */
void cli_interrupt_install(const char *cmd);

/**
 * cli_crash_install() - report a crash of the process in one line.
 * @cmd: as for cli_interrupt_install().
 * @runs_cases: the command runs a case's code (`taskprof run`): the line
 *       then says which part of the case the crashing thread ran.
 *
 * On SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT (a kernel of a case that
 * writes out of bounds, a case's generate() that aborts, or a bug of
 * taskprof) the handler, async-signal-safe throughout, removes the
 * registered temporary files and the run folder if that left it empty and
 * writes
 *
 *   taskprof run: crashed: SIGSEGV (invalid memory access) in thread
 *   tp0-aiv5 (an AICore thread: a kernel of the case); removed 0
 *   temporary files and the empty run folder outputs/mycase_Default_...
 *
 * then dies by the signal (exit status 128 + signo, a core dump where
 * enabled). A SIGSEGV whose address lies next to the stack pointer is
 * reported "from a stack overflow", on the main thread with its limit
 * ("(the main thread's stack is limited to 64 KiB: ulimit -s)"): the
 * calling thread gets a 64 KiB alternate signal stack for that (unless
 * it has one; not in sanitizer builds, whose runtime reports crashes).
 * It also registers the exit() check of cli_exit_guard().
 */
void cli_crash_install(const char *cmd, bool runs_cases);

/**
 * cli_exit_guard() - whether an exit() now is the case's doing.
 * @on: true from the start of the run to its end.
 *
 * While on, an exit() anywhere in the process (a kernel, the orchestration
 * or generate() calling exit(3)) is reported as "taskprof run: the run was
 * ended by exit(3) in thread ...", the temporary files are removed as
 * above, and the process exits with status 1 (a failed run) instead of the
 * case's status, also when several threads call exit() at once (the
 * others wait in exit handlers registered for that). Needs
 * cli_crash_install() first.
 */
void cli_exit_guard(bool on);

#endif /* TP_CLI_INTERRUPT_H */
