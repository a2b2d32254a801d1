/* SPDX-License-Identifier: MIT */
/*
 * op/procstat.h — fields of /proc/<pid>/stat (proc(5)), for the injector's
 * exec resume (the process's start time: docs/op-internals.md "Which
 * launches", exec) and the launcher's stop check (the state letter).
 *
 * The line is "pid (comm) state ppid ...". comm may itself hold blanks
 * and ')' characters, so the fields after it are counted from the LAST
 * ')' of the line; proc(5) numbers them from 1 (pid), 2 (comm), 3
 * (state) on, and this module uses its numbers.
 */
#ifndef TASKPROF_OP_PROCSTAT_H
#define TASKPROF_OP_PROCSTAT_H

#include <stdint.h>
#include <sys/types.h>

/* proc(5) field numbers used here. */
#define TP_PROC_STAT_STATE 3      /* one letter: R, S, D, T, t, Z, ... */
#define TP_PROC_STAT_STARTTIME 22 /* clock ticks (sysconf(_SC_CLK_TCK)) after boot */

/**
 * tp_proc_stat_field() - where field @field of a stat line begins.
 * @text:  the text of a /proc/<pid>/stat file, NUL-terminated.
 * @field: proc(5)'s number of the field, 3 (state) or more.
 *
 * Return: a pointer into @text at the field's first character (the field
 * ends at the next blank or at the end); NULL when @field is below 3, the
 * text has no ')' or has fewer fields.
 */
const char *tp_proc_stat_field(const char *text, int field);

/**
 * tp_proc_stat_u64() - a numeric field of a stat line.
 * @text:  as for tp_proc_stat_field().
 * @field: as for tp_proc_stat_field(); a field holding an unsigned
 *         decimal number (TP_PROC_STAT_STARTTIME, ...).
 * @out:   receives the value.
 *
 * Return: 0; -1 when the field is missing or does not start with a digit
 * (@out untouched).
 */
int tp_proc_stat_u64(const char *text, int field, uint64_t *out);

/**
 * tp_proc_stat_read() - read /proc/<@pid>/stat.
 * @pid: a process id; 0 reads /proc/self/stat.
 * @buf: receives the text, NUL-terminated (the line is well under 1 KB).
 * @n:   bytes at @buf, at least 2.
 *
 * Return: 0; -1 with errno when the file cannot be opened or read (the
 * process is gone: ENOENT / ESRCH) or is empty (EIO).
 */
int tp_proc_stat_read(pid_t pid, char *buf, size_t n);

#endif
