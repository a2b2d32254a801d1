/* SPDX-License-Identifier: MIT */
/*
 * op/report/report.h — the report of `taskprof op`: read one profiled
 * launch's directory (docs/op-internals.md "One profiled launch's
 * directory"), merge its passes (spec/opprof.md §4.11) and write the
 * per-launch outputs (§4.12):
 *
 *   OpBasicInfo.csv      one row: the launch
 *   <Group>.csv          one per requested group: per block timing, the
 *                        group's counters, its derived metrics
 *   RawEvents.csv        every (block, core type, pass, event, value)
 *   ReplayInfo.csv       one row per planned pass
 *   summary.json         plan + merged events + metrics + warnings
 *   trace.json           Chrome trace / Perfetto JSON: a lane per block
 *   Instrumentation.csv  with dump/instr.txt: every point
 *   ScalarSections.csv   with dump/instr.txt: per block and scalar section
 *
 * Bad input (a truncated or corrupt pass file, a malformed launch.txt or
 * instr.txt line) is an error naming the file and the record / line, never
 * a crash. A missing pass file is not an error: its events are N/A and a
 * warning names the groups that lose data.
 */
#ifndef TASKPROF_OP_REPORT_H
#define TASKPROF_OP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "op/config.h"
#include "taskprof/rt_tool.h"

/**
 * struct tp_op_launch_summary - one profiled launch, for the end-of-run
 * table (tp_op_report_print_summary()).
 * @name:              kernel name (launch.txt `name`).
 * @device:            device id.
 * @k:                 occurrence index (the directory's last component).
 * @block_dim:         blocks of the launch.
 * @duration_us:       task duration of the last measured pass, µs; < 0 when
 *                     unknown (no LAUNCH record).
 * @passes:            pass files merged.
 * @replay_consistent: no two passes' output hashes differ.
 * @replay_checked: at least two passes hashed the restored memory, so
 *                  @replay_consistent means something (OpBasicInfo.csv
 *                  says N/A otherwise: application replay, a launch over
 *                  the memory budget, a single pass).
 * @status:            launch.txt `status`, "degraded" when it said ok but
 *                     passes are missing.
 * @dir:               the launch directory.
 */
struct tp_op_launch_summary {
	char name[256];
	int device;
	uint32_t k;
	uint32_t block_dim;
	double duration_us;
	uint32_t passes;
	bool replay_consistent;
	bool replay_checked;
	double max_dev_pct;   /* largest cycle_deviation(%) of ReplayInfo.csv, -1: none */
	char status[32];
	char dir[4096];
};

/**
 * tp_op_report_launch() - write every report file of one launch directory.
 * @launch_dir: `<output>/device<D>/<name>/<k>` holding launch.txt and dump/.
 * @cfg:        the run's configuration (groups, plan, replay mode); NULL
 *              reads `<launch_dir>/../../../config.txt`.
 * @out:        receives the launch's summary line (may be NULL).
 *
 * Files are written atomically (base/file.h). Warnings (missing passes,
 * duplicate events with different values, a record whose events are not the
 * planned ones) go to the log at WARN and into summary.json.
 *
 * Return: 0; -ENOENT when launch.txt is missing; -EINVAL for a malformed
 * launch.txt, a corrupt or truncated pass file ("dump/pass_1.bin: record 3:
 * bad magic 0x..."), a malformed instr.txt / replay.txt line; -ENOMEM; the
 * errors of writing. tp_last_error() says which file and where.
 */
int tp_op_report_launch(const char *launch_dir, const struct tp_op_config *cfg,
			struct tp_op_launch_summary *out);

/**
 * tp_op_report_print_summary() - print @n launches as a table: kernel,
 * device, k, blocks, duration(us), passes, consistent, status, dir; "no
 * kernel launch was profiled" when @n is 0. A note follows when a block's
 * cycles differ across passes by more than TP_OP_DEV_NOTE_PCT percent
 * (@s[i].max_dev_pct).
 * @f: output stream; write errors are left in its error flag.
 * @s: the launches, from tp_op_report_launch().
 * @n: entries at @s.
 */
void tp_op_report_print_summary(FILE *f, const struct tp_op_launch_summary *s, size_t n);

/* ---- the merge (spec §4.11), exposed for tests ------------------------- */

/**
 * struct tp_op_mval - one merged event value of one block on one core
 * type (spec/opprof.md §4.11); @value is the event's count over the
 * block's window.
 */
struct tp_op_mval {
	uint16_t core;   /* TP_OP_AIC / TP_OP_AIV */
	uint16_t id;     /* event id */
	uint32_t pass;   /* the pass the kept value came from */
	uint64_t value;
	bool mismatch;   /* another pass read a different value (kept the first) */
};

/**
 * struct tp_op_block_pass - per pass, what one block's record said
 * (@present: a record was read). @total_cycles in AICore cycles
 * (TP_CORE_FREQ_HZ); @t_start / @t_end in system counter ticks.
 */
struct tp_op_block_pass {
	bool present;
	uint32_t core_type;
	int32_t core_id;
	uint64_t total_cycles;
	uint64_t t_start, t_end;
};

/**
 * struct tp_op_mblock - one (block_id, sub_block) after the merge.
 * @core_type:    of the last pass that ran it (0 AIC, 1 AIV).
 * @core_id:      likewise.
 * @has_cycles:   [core]: the block ran on that core type in some pass.
 * @total_cycles: [core]: PMU_CNT_TOTAL of the LAST pass that ran it there,
 *                AICore cycles (TP_CORE_FREQ_HZ).
 * @t_start, @t_end: of the last pass, system counter ticks.
 * @vals:         the merged event values (@nvals, sorted by core, id).
 * @per_pass:     [p] for each planned pass.
 */
struct tp_op_mblock {
	uint32_t block_id, sub_block;
	uint32_t core_type;
	int32_t core_id;
	bool has_cycles[2];
	uint64_t total_cycles[2];
	int32_t cycles_pass[2];  /* the pass @total_cycles[c] came from, -1 none */
	int32_t last_pass;       /* the pass @core_type / @t_start came from */
	uint64_t t_start, t_end;
	size_t nvals, capvals;
	struct tp_op_mval *vals;
	struct tp_op_block_pass *per_pass;
};

/**
 * struct tp_op_raw - one value as a record carried it (RawEvents.csv).
 */
struct tp_op_raw {
	uint32_t block_id, sub_block;
	uint16_t core, id;
	uint32_t pass;
	uint32_t seq;    /* read order, for a stable sort */
	uint64_t value;
};

/**
 * struct tp_op_pass_launch - the LAUNCH record of one pass: first
 * dispatch to last FIN (@t_start, @t_end) in system counter ticks, the
 * launch's block_dim and device launch sequence number (@seq).
 * @present: the pass file held a LAUNCH record.
 */
struct tp_op_pass_launch {
	bool present;
	uint64_t t_start, t_end;
	uint32_t block_dim;
	uint64_t seq;
};

/**
 * struct tp_op_merge - every pass of one launch merged.
 * @npasses:      planned passes (the array sizes below).
 * @pass_present: [p] the pass file existed and was read.
 * @launch:       [p] its LAUNCH record.
 * @eop_dropped:  [p] records dropped (END_OF_PASS total_cycles), 0 if none.
 * @blocks:       @nblocks merged blocks, sorted by (block_id, sub_block).
 * @n_mismatch:   (block, core, event) values that differed across passes.
 * @missing_groups: groups (mask) that lost events to missing passes.
 * @warn:         the warning lines, '\n'-separated, NUL-terminated ("" when
 *                none); malloc'd.
 * @records:      BLOCK records read, over all passes.
 * @raw:          @nraw values exactly as read, in read order.
 */
struct tp_op_merge {
	uint32_t npasses;
	bool *pass_present;
	struct tp_op_pass_launch *launch;
	uint64_t *eop_dropped;
	struct tp_op_mblock *blocks;
	size_t nblocks, capblocks;
	size_t n_mismatch;
	uint32_t missing_groups;
	char *warn;
	size_t warn_len;
	uint64_t records;
	struct tp_op_raw *raw;
	size_t nraw, capraw;
};

/**
 * tp_op_merge_init() - an empty merge of @npasses passes.
 * @m:       the merge to fill in.
 * @npasses: planned passes, 1..TP_OP_MAX_PASSES.
 *
 * Return: 0; -EINVAL (NULL @m or @npasses out of range), -ENOMEM; with
 * tp_last_error() set.
 */
int tp_op_merge_init(struct tp_op_merge *m, uint32_t npasses);

/**
 * tp_op_merge_add_file() - read pass file @path (pass @pass) into @m
 * (spec/opprof.md §4.10, §4.11).
 * @m:    a merge from tp_op_merge_init().
 * @path: the pass file (dump/pass_<p>.bin): whole struct tp_op_rec records.
 * @pass: its pass index, 0 .. @m->npasses - 1.
 * @plan: the plan (NULL: do not compare the records' events with it).
 *
 * Records are validated (magic, version, size, kind, n_events, pass):
 * a bad one fails with "PATH: record R: ..." and leaves @m unchanged by
 * that file. A file whose size is not a whole number of records is
 * "truncated". A missing file is -ENOENT (the caller then calls
 * tp_op_merge_missing()).
 *
 * Return: 0; -ENOENT; -EINVAL (a bad record, a truncated file, a NULL @m,
 * a @pass out of range); -ENOMEM; the -errno of reading. tp_last_error()
 * names @path.
 */
int tp_op_merge_add_file(struct tp_op_merge *m, const char *path, uint32_t pass,
			 const struct tp_op_plan *plan);

/**
 * tp_op_merge_add_records() - tp_op_merge_add_file() for @n records in
 * memory.
 * @m:    a merge from tp_op_merge_init().
 * @recs: the records; may be NULL when @n is 0.
 * @n:    records at @recs.
 * @pass: their pass index, 0 .. @m->npasses - 1.
 * @plan: as for tp_op_merge_add_file().
 * @what: names the records in messages (the file's path).
 *
 * Every record is checked before any is merged, so a bad one leaves @m
 * unchanged; an -ENOMEM part-way leaves it partly merged.
 *
 * Return: 0; -EINVAL (a bad record, NULL @m or @recs, @pass out of range);
 * -ENOMEM; with tp_last_error() set.
 */
int tp_op_merge_add_records(struct tp_op_merge *m, const struct tp_op_rec *recs, size_t n,
			    uint32_t pass, const struct tp_op_plan *plan, const char *what);

/**
 * tp_op_merge_missing() - pass @pass had no file: record a warning naming
 * the groups of @plan's arch that lose events of that pass, e.g.
 * "pass 1 missing (dump/pass_1.bin): its 8 AIC and 6 AIV events are N/A;
 * groups affected: Memory, L2Cache" (spec/opprof.md §4.11), logged at WARN
 * too, and add them to @m->missing_groups.
 * @m:    the merge.
 * @pass: the missing pass.
 * @plan: the plan (NULL: no events or groups are named).
 * @path: the file that was looked for, for the message (NULL: "no file").
 */
void tp_op_merge_missing(struct tp_op_merge *m, uint32_t pass, const struct tp_op_plan *plan,
			 const char *path);

/**
 * tp_op_merge_unmeasured() - the launch was not measured on purpose (its
 * launch.txt status, e.g. "skipped": a range replay left it out): every
 * pass without a file marks its groups N/A as tp_op_merge_missing() does,
 * and @m's warnings get one line, "not measured (status @status): every
 * event is N/A", which is not logged (whoever skipped the launch said why).
 * Call it after the passes' files were read.
 * @m:      the merge.
 * @plan:   the plan (NULL: no groups are marked).
 * @status: launch.txt's status, for the line.
 */
void tp_op_merge_unmeasured(struct tp_op_merge *m, const struct tp_op_plan *plan,
			    const char *status);

/**
 * tp_op_merge_value() - the merged value of event @id on @core of block
 * (@block_id, @sub_block).
 * @m:         the merge.
 * @block_id, @sub_block: the block.
 * @core:      TP_OP_AIC or TP_OP_AIV.
 * @id:        the event id.
 * @v:         receives the value, an event count over the block's window.
 *
 * Return: true with *@v set; false when N/A (no such block, or no pass
 * read that event there).
 */
bool tp_op_merge_value(const struct tp_op_merge *m, uint32_t block_id, uint32_t sub_block,
		       int core, uint16_t id, uint64_t *v);

/**
 * tp_op_merge_warn() - log one warning line at WARN and keep it in
 * @m->warn (summary.json "warnings").
 * @m:   the merge.
 * @fmt: printf format of the line, without newline; cut to 511 bytes.
 *
 * Out of memory, the line is logged but not kept.
 */
void tp_op_merge_warn(struct tp_op_merge *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * tp_op_merge_find() - a merged block.
 * @m:         the merge.
 * @block_id, @sub_block: the block.
 *
 * Return: the block, valid until @m changes; NULL when no record of it was
 * merged.
 */
const struct tp_op_mblock *tp_op_merge_find(const struct tp_op_merge *m, uint32_t block_id,
					    uint32_t sub_block);

/**
 * tp_op_merge_fini() - free everything @m holds.
 * @m: a merge from a successful tp_op_merge_init(), or NULL; it is zeroed
 *     afterwards, so a second call does nothing.
 */
void tp_op_merge_fini(struct tp_op_merge *m);

#endif /* TASKPROF_OP_REPORT_H */
