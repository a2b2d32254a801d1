/* SPDX-License-Identifier: MIT */
/*
 * tools/pmu/pmu_report.h — `taskprof pmu PMU_CSV`: the per-function
 * summary of a pmu.csv (spec/pmu.md §2; seed 000 §3.2, §4). Depends on
 * base/ only.
 *
 *     struct pmu_csv *csv;
 *     if (pmu_csv_load("out/pmu.csv", &csv))      // tp_last_error(): file:line
 *             ...
 *     pmu_report_print(csv, stdout);
 *     pmu_csv_free(csv);
 *
 * Accepted input: the header `thread_id,core_id,task_id,func_id,
 * core_type,pmu_total_cycles`, zero or more counter columns, then
 * `event_type` and optionally `run_epoch` (taskprof writes it; the
 * reference does not); no column name twice. Counter columns the event
 * group does not write are warned about (pmu_csv_check_counters()). Rows: exactly the header's column count, LF or
 * CRLF ends, integers only (task_id 0x-hex or decimal).
 */
#ifndef TASKPROF_TOOLS_PMU_REPORT_H
#define TASKPROF_TOOLS_PMU_REPORT_H

#include <stdint.h>
#include <stdio.h>

struct pmu_csv;

/**
 * pmu_csv_load() - read and validate a pmu.csv.
 * @path: the file.
 * @out:  receives the table (free with pmu_csv_free()).
 *
 * Return: 0; -ENOENT / -EACCES / ... when the file cannot be read,
 * -EINVAL for a malformed file (empty, bad header, a row with the wrong
 * column count, a non-integer field, mixed event types), -ENOMEM. The
 * one-line tp_last_error() names the file, the line and, for a field,
 * the column number and name: `FILE:LINE: column 6 (pmu_total_cycles):
 * expected an unsigned integer, got 'x'`.
 */
int pmu_csv_load(const char *path, struct pmu_csv **out);

/** pmu_csv_rows() - data rows in the table @c (header not counted). */
size_t pmu_csv_rows(const struct pmu_csv *c);

/**
 * pmu_report_print() - the summary: one line for the file (rows,
 * functions, event type, and its run_epoch, or for a file holding rows of
 * several runs (joined by hand), "N runs (run_epoch A..B, pooled
 * below)"), then per func_id ascending: rows
 * (AIC / AIV), mean and median pmu_total_cycles, and one line per counter
 * with its mean per row; for PIPE_UTILIZATION (event_type 2) each pipe
 * counter (a column whose name contains "busy") also shows its share of
 * the function's total cycles, Σ counter / Σ pmu_total_cycles, in %.
 * Cycle figures are in AICore cycles, as pmu.csv holds them (seed 000
 * §4).
 * @c:   a table from pmu_csv_load().
 * @out: the stream to print to; flushed and checked at the end.
 *
 * Return: 0, -ENOMEM, or the -errno of writing @out (tp_stream_flush():
 * -ENOSPC, -EPIPE, -EFBIG, ...; the message is "writing stdout: <reason>"
 * or "writing the report: <reason>").
 */
int pmu_report_print(const struct pmu_csv *c, FILE *out);

struct sl_name_map;
/**
 * pmu_report_print_named() - pmu_report_print() with each func_id's name
 * from @names (a name_map_<case>.json, spec/swimlane-format.md §3.4) after
 * it: "func_id 0 (QK): ...".
 * @c:     a table from pmu_csv_load().
 * @names: the name map, or NULL (no names).
 * @out:   as for pmu_report_print().
 *
 * Return: as pmu_report_print().
 */
int pmu_report_print_named(const struct pmu_csv *c, const struct sl_name_map *names,
			   FILE *out);

/** pmu_csv_free() - free a table from pmu_csv_load() (NULL: no-op). */
void pmu_csv_free(struct pmu_csv *c);

/**
 * struct pmu_counter_set - the counter columns one event group of one
 * architecture writes, in slot order (spec/pmu.md §2.2). The tables live
 * in platform/ (pmu_events.h); the CLI passes them in, so tools/ keeps
 * depending on base/ only.
 * @event_type: 1, 2, 4..8; @type_name: "PIPE_UTILIZATION", ...;
 * @arch: "a2a3" / "a5"; @names, @n: the column names.
 */
struct pmu_counter_set {
	uint32_t event_type;
	const char *type_name;
	const char *arch;
	const char *const *names;
	int n;
};

/**
 * pmu_csv_check_counters() - compare the header's counter columns with
 * what the file's event group writes: the set of @sets with the file's
 * event_type (any set for a file without rows) that shares the most
 * columns with the header. A header that is exactly one of them passes.
 * Otherwise one warning line on @err per column the group does not write
 *   "Warning: FILE:1: column 7 (foo): not a PIPE_UTILIZATION counter
 *    (event_type 2); expected the a2a3 columns vec_busy_cycles, ..."
 * and one for the group's columns the header lacks
 *   "Warning: FILE:1: no column for the a2a3 PIPE_UTILIZATION counter(s)
 *    vec_busy_cycles (event_type 2)";
 * an event_type with no set: "Warning: FILE: event_type 3 is not a known
 * event group (1, 2, 4, 5, 6, 7, 8); its counter columns are not checked".
 * Order does not matter (each value keeps its column's name).
 * @c:      a table from pmu_csv_load().
 * @sets:   the known event groups (spec/pmu.md §1.2, §1.3).
 * @n_sets: entries at @sets.
 * @err:    where the warnings go (stderr for the CLI).
 *
 * Return: the number of warning lines.
 */
int pmu_csv_check_counters(const struct pmu_csv *c, const struct pmu_counter_set *sets,
			   size_t n_sets, FILE *err);

/**
 * pmu_report_main() - `taskprof pmu` (spec/pmu.md §2).
 * @argc, @argv: the command line; argv[0] is the command name.
 * @sets, @n_sets: the known event groups for pmu_csv_check_counters()
 *                 (NULL, 0: not checked).
 *
 * Return: the exit code: 0; 1 bad input or stdout not written ("taskprof
 * pmu: <reason>" on stderr); 2 usage.
 */
int pmu_report_main(int argc, char **argv, const struct pmu_counter_set *sets,
		    size_t n_sets);

/**
 * pmu_report_run() - pmu_report_main() for a caller that owns stdout
 * (`taskprof run` printing the summary after its own lines).
 * @argc, @argv, @sets, @n_sets: as pmu_report_main().
 * @stdout_err: NULL: exactly pmu_report_main(). Otherwise a failure to
 *              write stdout is not reported and does not fail the summary:
 *              *@stdout_err receives its positive errno (0: stdout fine)
 *              and the caller reports it once.
 *
 * Return: the exit code of pmu_report_main().
 */
int pmu_report_run(int argc, char **argv, const struct pmu_counter_set *sets, size_t n_sets,
		   int *stdout_err);

#endif
