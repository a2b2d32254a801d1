/* SPDX-License-Identifier: MIT */
/*
 * op/config.h — config.txt: what the launcher (`taskprof op`) tells the
 * injector (libtaskprof_inject.so) and the report (docs/op-internals.md
 * "config.txt"; spec/opprof.md §4.1, §4.2, §4.5).
 *
 * One `key=value` per line, `#` starts a comment line, blank lines are
 * ignored, blanks around key and value are trimmed; every key below is
 * required once except the `pass.<p>.aic` / `pass.<p>.aiv` lines, which
 * may be omitted for an empty row. Unknown keys, repeated keys, values
 * out of range are errors naming the file, the line and the key.
 *
 *   version=1
 *   output=/abs/path/OPPROF_20261130183000_ABCDEFGHIJKLMNOP
 *   arch=a2a3                       a2a3 (8 slots) | a5 (10 slots)
 *   replay_mode=kernel              kernel | application | range
 *   warm_up=1                       0..500
 *   kernel_name=                    empty = first launch only; else PAT|PAT
 *   launch_skip_before_match=0      0..1000
 *   launch_skip=0                   0..1000
 *   launch_count=1                  1..5000
 *   replay_mem_limit=50%            BYTES (optional B/K/M/G/T suffix, 1024-based) or N% (1..100)
 *   pass_timeout_s=60               1..86400
 *   range_markers=off               on | off
 *   instr=on                        on | off
 *   instr_cap=4096                  1..1048576 points per block
 *   kill=off                        on | off
 *   target_processes=main           main | all
 *   groups=PipeUtilization,Memory   canonical names (op/groups.h), may be BasicInfo
 *   passes=3                        1..TP_OP_MAX_PASSES
 *   pass.0.aic=0x1,0x2,0x3          hex event ids, may be empty, at most slots
 *   pass.0.aiv=0x8,0x9
 */
#ifndef TASKPROF_OP_CONFIG_H
#define TASKPROF_OP_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "op/plan.h"
#include "platform/pmu_events.h"

#define TP_OP_CONFIG_VERSION 1
/* Bounds the launcher validates and the reader re-checks (spec §1.2, §4.2). */
#define TP_OP_WARM_UP_MAX 500u
#define TP_OP_SKIP_MAX 1000u
#define TP_OP_LAUNCH_COUNT_MAX 5000u
#define TP_OP_KERNEL_NAME_MAX 1024u
#define TP_OP_INSTR_CAP_MAX 1048576u
#define TP_OP_PASS_TIMEOUT_MAX 86400u

/*
 * The launcher's status pipe (docs/op-internals.md "Environment between
 * launcher and injector"): "<fd>:<inode>", the write end of a non-blocking
 * pipe the application inherits. The injector writes one line per file it
 * could not open or write ("<pid> <message>\n", one write(2) of at most
 * TP_OP_STATUS_LINE_MAX bytes, so lines of several processes never mix);
 * the launcher reads them once the application has ended and then fails
 * (exit 1) with the first. The inode tells the pipe from a file the
 * application may have opened under the same number after closing it.
 */
#define TP_OP_STATUS_FD_ENV "TASKPROF_OP_STATUS_FD"
#define TP_OP_STATUS_LINE_MAX 1024u
/* The status pipe's stand-in, in the folder of TASKPROF_CONFIG (the
 * session's output folder): when the application has closed the pipe's
 * descriptor (a loop closing 3..1023), the injector appends the same
 * lines there (open, one write, close), and the launcher reads the lines
 * added during the run as it reads the pipe's. */
#define TP_OP_STATUS_FILE "injector_errors.txt"

enum tp_op_replay_mode {
	TP_OP_REPLAY_KERNEL = 0,
	TP_OP_REPLAY_APPLICATION = 1,
	TP_OP_REPLAY_RANGE = 2,
};

/**
 * struct tp_op_config - the parsed config.txt.
 * @version:        TP_OP_CONFIG_VERSION.
 * @output:         absolute path of the OPPROF_* directory.
 * @arch:           event-id space of the plan.
 * @replay_mode:    kernel | application | range.
 * @warm_up:        discarded executions before the measured passes, 0..500.
 * @launch_skip_before_match: launches of any kernel skipped first, 0..1000.
 * @launch_skip:    matching launches skipped, 0..1000.
 * @launch_count:   most launches profiled, 1..5000.
 * @kernel_name:    "" = the first launch only; else PAT|PAT (prefix or glob).
 * @mem_limit_bytes, @mem_limit_pct: the snapshot budget; exactly one is
 *                  non-zero (pct: of the device capacity, 1..100).
 * @pass_timeout_s: seconds a pass may take before it counts as a hang.
 * @range_markers:  honour tp_rt_range_push/pop.
 * @instr:          pass the hidden instrumentation buffer.
 * @kill:           stop the app after @launch_count launches.
 * @instr_cap:      instrumentation points per block.
 * @target_all:     profile child processes too (target_processes=all).
 * @groups:         canonical group list (tp_op_groups_format()).
 * @plan:           the pass plan (@plan.arch = @arch, @plan.slots = its K).
 */
struct tp_op_config {
	int version;
	char output[4096];
	enum tp_pmu_arch arch;
	enum tp_op_replay_mode replay_mode;
	uint32_t warm_up, launch_skip_before_match, launch_skip, launch_count;
	char kernel_name[TP_OP_KERNEL_NAME_MAX + 1];
	uint64_t mem_limit_bytes;
	uint32_t mem_limit_pct;
	uint32_t pass_timeout_s;
	bool range_markers, instr, kill;
	uint32_t instr_cap;
	bool target_all;
	char groups[512];
	struct tp_op_plan plan;
};

/**
 * tp_op_config_defaults() - the defaults of spec §4.2: version 1, output
 * "", arch a2a3, kernel replay, warm_up 1, skips 0, launch_count 1,
 * kernel_name "", 50 %, pass_timeout 60 s, range markers off, instr on
 * with 4096 points, kill off, main process only, groups "Default"
 * expanded (tp_op_groups_format()), and a plan of one empty pass with 8
 * slots (the caller plans with tp_op_plan_for_groups()).
 * @c: the config to fill in; every field is overwritten.
 */
void tp_op_config_defaults(struct tp_op_config *c);

/**
 * tp_op_config_write() - write @c to @path atomically (temporary file +
 * rename, base/file.h) in the format above; `passes` = @c->plan.npasses
 * and one pass.<p>.aic / .aiv line per pass (spec/opprof.md §4.2, §4.5).
 * @path: the file to write (the run's config.txt).
 * @c:    the config; not changed.
 *
 * Return: 0; -EINVAL for NULL arguments or a @c that would not read back
 * (an output / kernel_name / groups with a newline, a plan with 0 or too
 * many passes, more events than slots, exactly one of the memory limits not
 * set); the errors of tp_file_tx_begin() / _commit().
 */
int tp_op_config_write(const char *path, const struct tp_op_config *c);

/**
 * tp_op_config_read() - parse @path into @c (defaults first, then every
 * line).
 * @path: the config.txt to read.
 * @c:    receives the config.
 *
 * Return: 0; -EINVAL for NULL arguments; -EFBIG for a file of more than
 * 1 MiB; -ENOENT etc. (the errno of reading the file); -EINVAL for a
 * bad line, with tp_last_error() = "PATH:LINE: KEY: expected ..., got
 * 'VALUE'" (or "PATH:LINE: unknown key 'K'", "PATH:LINE: expected
 * key=value", "PATH: missing key 'K'", "PATH:LINE: duplicate key 'K'").
 * On failure @c holds what was parsed so far (do not use it).
 */
int tp_op_config_read(const char *path, struct tp_op_config *c);

/**
 * tp_op_text_next_line() - the next line of a text file's contents that
 * holds something: the shared walker of config.txt, launch.txt,
 * replay.txt and instr.txt.
 * @cursor: in: where to start in a NUL-terminated buffer, which is split
 *          into lines in place; out: where the next call starts (NULL at
 *          the end). Start with the buffer itself.
 * @line:   in/out: 1-based number of the returned line (start at 0); it
 *          counts the skipped lines too, for messages.
 *
 * Skips empty lines, lines of blanks and lines starting with '#'.
 *
 * Return: the line with leading blanks and trailing blanks / CR removed,
 * or NULL at the end of the buffer.
 */
char *tp_op_text_next_line(char **cursor, int *line);

/**
 * tp_op_text_kv() - split a line from tp_op_text_next_line() at its first
 * '=' into a trimmed key and value (in place).
 * @s:    the line; written to (the '=' becomes a NUL).
 * @path, @line: file name and 1-based line number, for the message.
 * @key:  receives the key, a pointer into @s.
 * @val:  receives the value, a pointer into @s ("" when none).
 *
 * Return: 0; -EINVAL without '=' ("PATH:LINE: expected key=value, got
 * '...'", tp_last_error()).
 */
int tp_op_text_kv(char *s, const char *path, int line, char **key, char **val);

/**
 * tp_op_replay_mode_name() - name of replay mode @m as config.txt spells it.
 * @m: the mode.
 *
 * Return: "kernel", "application" or "range" (static strings); "?" for a
 * value outside the enum.
 */
const char *tp_op_replay_mode_name(enum tp_op_replay_mode m);

/**
 * tp_op_arch_name() - name of @a as config.txt spells it.
 * @a: the event-id space.
 *
 * Return: "a5" for TP_PMU_ARCH_A5, "a2a3" for any other value (static
 * strings).
 */
const char *tp_op_arch_name(enum tp_pmu_arch a);

/**
 * tp_op_parse_mem_limit() - parse a `--replay-mem-limit` value: "N%"
 * (1..100) or a byte count with an optional K / M / G / T suffix (powers
 * of 1024, in any case; "KB" and "KiB" etc. also accepted, and "B" for
 * plain bytes), > 0
 * (spec/opprof.md §4.9).
 * @s:     the value, NUL-terminated; nothing may follow it.
 * @bytes: receives the limit in bytes, or 0 for a percentage.
 * @pct:   receives the percentage of the device capacity, or 0 for bytes.
 *
 * Return: 0; -EINVAL for NULL or an empty, malformed, zero, out-of-range or
 * overflowing value (no message set: the caller names the place); @bytes
 * and @pct are then untouched.
 */
int tp_op_parse_mem_limit(const char *s, uint64_t *bytes, uint32_t *pct);

#endif /* TASKPROF_OP_CONFIG_H */
