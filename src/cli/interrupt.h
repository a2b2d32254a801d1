/* SPDX-License-Identifier: MIT */
/*
 * cli/interrupt.h — SIGINT / SIGTERM / SIGHUP for the commands that write
 * outputs in process (`taskprof run`, `taskprof swimlane`): remove the
 * registered temporary files (base/tmp_registry.h), say so in one line,
 * die by the signal. `taskprof op` installs it for its report phase, once
 * the application has ended; while the application runs it has its own
 * (op_exec.c: it forwards to the application and reports what was
 * collected).
 */
#ifndef TP_CLI_INTERRUPT_H
#define TP_CLI_INTERRUPT_H

/**
 * cli_interrupt_install() - handle SIGINT, SIGTERM and SIGHUP for @cmd.
 * @cmd: the name the message starts with ("taskprof run"); must outlive
 *       the process (a string literal).
 *
 * On the first of these signals the handler (async-signal-safe throughout)
 * resets all three to their default action, so a second one during the
 * clean-up kills at once; removes every registered temporary file; removes the
 * published run folder if that left it empty; writes one line on stderr:
 *
 *   taskprof run: interrupted by SIGTERM: removed 3 temporary files; what
 *   was written before is in outputs/paged_attention_Case1_20250101_120000
 *
 * and raises the signal again, so the exit status is the conventional
 * 128 + signo (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP) as the
 * shell reports it. A signal ignored when taskprof started (a background
 * job of a non-interactive shell ignores SIGINT; nohup ignores SIGHUP)
 * stays ignored. SIGQUIT keeps its default action (a core dump).
 */
void cli_interrupt_install(const char *cmd);

#endif /* TP_CLI_INTERRUPT_H */
