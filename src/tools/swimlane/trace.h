/* SPDX-License-Identifier: MIT */
/*
 * tools/swimlane/trace.h — the converter `taskprof swimlane`: joined
 * swimlane rows + deps.json + name map → merged_swimlane.json (Chrome Trace
 * Event format for Perfetto) and the per-function statistics table
 * (spec/swimlane-format.md §4, §5).
 *
 *   sl_convert_main()    the whole CLI (spec §5.2–§5.7), reentrant
 *   sl_trace_generate()  one trace file from data already read (spec §4)
 *   sl_print_stats()     the statistics table (spec §5.5)
 *   sl_func_tag(), sl_task_label()  the label rules (spec §4.5)
 */
#ifndef TASKPROF_TOOLS_SWIMLANE_TRACE_H
#define TASKPROF_TOOLS_SWIMLANE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/swimlane/perf_data.h"

/**
 * struct sl_trace_opts - how to write the trace.
 * @output_path: the file to write (temp name, then renamed into place).
 * @verbose:     print the §5.6 "Generating ..." lines to @out.
 * @overhead:    append the §4.6.13 overhead counters.
 * @pretty:      byte-identical json.dump(indent=2) layout; otherwise one
 *               compact event per line (same events, much smaller, faster).
 * @out:         verbose stream (stdout for the CLI).
 * @err:         warnings stream (stderr for the CLI).
 */
struct sl_trace_opts {
	const char *output_path;
	bool verbose, overhead, pretty;
	FILE *out, *err;
};

/**
 * struct sl_trace_result - what was written.
 * @n_events:   events before the overhead counters (the "Total events" line).
 * @n_flows:    the final flow-id counter (arrows).
 * @n_overhead: overhead counter samples appended.
 * @n_flows_queued: flow events (of @n_events) formatted by the flow
 *              formatter thread rather than in place (0 with --pretty or
 *              when the thread could not start; trace.c struct flowq).
 */
struct sl_trace_result {
	uint64_t n_events, n_flows, n_overhead, n_flows_queued;
};

/**
 * sl_trace_generate() - write merged_swimlane.json (spec §4).
 * @pd:    joined data from sl_read_perf_data(); the func ids of its rows
 *         are resolved in place from @deps's kernel map (spec §2.10), so
 *         sl_print_stats() afterwards sees them (spec §9 item 17).
 * @deps:  deps.json contents, or NULL when there is no file. Edges are used
 *         only when @deps->has_edges; the kernel map and block map always.
 * @names: name map, or NULL.
 * @o:     options.
 * @res:   receives the counts (may be NULL).
 *
 * Memory is O(rows + edges + phases); the events are streamed through one
 * buffer. Every lookup is a hash or a binary search (no quadratic loop).
 *
 * Return: 0; -ENOMEM; or the -errno of creating / writing the output file
 * (tp_last_error() names the file).
 */
int sl_trace_generate(struct sl_perf_data *pd, const struct sl_deps *deps,
		      const struct sl_name_map *names, const struct sl_trace_opts *o,
		      struct sl_trace_result *res);

/**
 * sl_print_stats() - the "Task Statistics by Function" block and the lines
 * after it (spec §5.5), grouped by the rows' (resolved) func ids. Times
 * are printed in µs, as the rows hold them (spec §2.3).
 * @out:   the stream; write errors are left in its error flag. Out of
 *         memory, one "(statistics skipped: out of memory)" line instead.
 * @pd:    joined data (after sl_trace_generate() resolved its func ids).
 * @names: name map, or NULL.
 */
void sl_print_stats(FILE *out, const struct sl_perf_data *pd, const struct sl_name_map *names);

/**
 * sl_func_tag() - "<n>_<bijective base-26 letters of n+1>" (0 → "0_a",
 * 25 → "25_z", 26 → "26_aa", -1 → "-1_"), spec §4.5.
 * @n:   the func id; a negative one gets no letters.
 * @buf: at least 32 bytes; receives the NUL-terminated tag.
 *
 * Return: @buf.
 */
char *sl_func_tag(int64_t n, char *buf);

/**
 * sl_task_label() - the task display name of spec §4.5 into @buf (@len
 * bytes, always terminated): "task(<tdisp>)" for func_id < 0,
 * "<mapped name>(<tdisp>)", or "func_<tag>(<tdisp>)" (sl_func_tag());
 * "_spmd" inserted before the first '(' when @spmd and the part before it
 * does not contain "spmd" (any case).
 * @buf:     receives the label.
 * @len:     size of @buf in bytes.
 * @func_id: the task's (resolved) func id.
 * @names:   name map, or NULL.
 * @tdisp:   the task id as displayed (spec §2.9).
 * @spmd:    the task is an SPMD task (spec §4.7).
 *
 * Return: the length in bytes the label has (like snprintf: >= @len when
 * it was cut); "_spmd" is left out when it would not fit in @len; 0 when
 * formatting fails.
 */
size_t sl_task_label(char *buf, size_t len, int64_t func_id, const struct sl_name_map *names,
		     const char *tdisp, bool spmd);

/**
 * sl_convert_main() - `taskprof swimlane [input] [-o OUT] [--func-names F]
 * [--deps-json D] [-v] [--overhead] [--pretty] [-k K] [-h]` (spec §5).
 * @argc, @argv: argv[0] is the command name.
 *
 * Keeps no state between calls, so `taskprof run` may call it again.
 * Return: the exit code: 0 success, 1 error (one "Error: ..." line on
 * stderr), 2 usage error.
 */
int sl_convert_main(int argc, char **argv);

/**
 * sl_convert_run() - sl_convert_main() for a caller that owns stdout
 * (`taskprof run` converting after its own result lines).
 * @argc, @argv: as sl_convert_main().
 * @in_run:      true for `taskprof run`'s own conversion: the closing hint
 *               of the reference ("run sched_overhead_analysis manually
 *               with a separately-captured deps.json") is left out (the
 *               run names the command itself), and a run without a
 *               deps.json gets a note saying what --enable-dep-gen adds
 *               instead of the reference's "no usable deps.json" warning.
 * @stdout_err:  NULL: exactly sl_convert_main(). Otherwise a failure to
 *               write stdout (a full device, a reader that went away) is
 *               neither reported nor counted as a failed conversion: the
 *               trace is written all the same, *@stdout_err receives the
 *               positive errno (0 when stdout is fine) and the caller
 *               reports it once.
 *
 * Return: the exit code, as sl_convert_main(): 0 when the trace was
 * written, 1 when the conversion failed ("Error: ..." on stderr), 2 usage.
 */
int sl_convert_run(int argc, char **argv, int *stdout_err, bool in_run);

/**
 * sl_stdout_finish() - flush stdout and check that everything written to it
 * arrived (a full device, a closed descriptor, a reader that went away).
 *
 * On failure prints "Error: writing stdout: <strerror>" on stderr (EPIPE
 * when the reader of a pipe is gone, even when the failing write was an
 * earlier buffered one; see tp_stream_flush()).
 * Return: 0, or 1 (the exit code) on failure.
 */
int sl_stdout_finish(void);

#endif /* TASKPROF_TOOLS_SWIMLANE_TRACE_H */
