/* SPDX-License-Identifier: MIT */
/*
 * op/filter.h — which kernel launches `taskprof op` profiles, and where a
 * profiled launch's results go (spec/opprof.md §1.2, §4.6; issue 6 scope
 * 3; docs/op-internals.md "One profiled launch's directory").
 *
 * Selection runs per process and per device, in this order:
 *
 *   1. skip-before-match: the first N launches of the device (of any
 *      kernel) are never profiled; this counter advances for EVERY launch;
 *   2. range: with range markers on (`--range-markers on`, any replay
 *      mode), only a launch made between tp_rt_range_push and
 *      tp_rt_range_pop on its thread goes on;
 *   3. name: the kernel name must match the pattern list (unset = every
 *      launch matches, so with the default count of 1 only the first
 *      launch after the skips is profiled);
 *   4. launch-skip: the first M *matching* launches are skipped;
 *   5. count: at most C launches are profiled.
 *
 * A pattern list is PAT[|PAT...]; a name matches a PAT when it starts with
 * PAT (prefix) or matches it as an fnmatch(3) glob (msprof's StringMatch).
 *
 * The filter is plain data: the caller serialises calls (the injector holds
 * its launch lock).
 */
#ifndef TASKPROF_OP_FILTER_H
#define TASKPROF_OP_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "taskprof/rt.h"

/* Longest pattern list (config.h's TP_OP_KERNEL_NAME_MAX). */
#define TP_OP_FILTER_PAT_MAX 1024u
/* Longest sanitised kernel name used as a directory name, bytes. */
#define TP_OP_NAME_MAX 200u

/**
 * struct tp_op_filter - selection state.
 * @pat:            the pattern list, "" = every name matches.
 * @skip_before:    launches of any kernel skipped first, per device.
 * @skip:           matching launches skipped, per device.
 * @count:          most launches profiled, per device.
 * @ranges:         range markers on: only launches inside a range pass
 *                  (tp_op_filter_set_ranges(); off after init).
 * @seen, @matched, @profiled: per device counters (see the header comment).
 */
struct tp_op_filter {
	char pat[TP_OP_FILTER_PAT_MAX + 1];
	uint32_t skip_before, skip, count;
	bool ranges;
	uint64_t seen[TP_RT_MAX_DEVICES];
	uint64_t matched[TP_RT_MAX_DEVICES];
	uint64_t profiled[TP_RT_MAX_DEVICES];
};

/**
 * tp_op_filter_init() - a filter with zero counters (spec/opprof.md §4.6).
 * @f:   the filter to fill in; zeroed first.
 * @pat: the `--kernel-name` list, NULL or "" for none; at most
 *       TP_OP_FILTER_PAT_MAX bytes.
 * @skip_before, @skip, @count: the options (launch counts, per device:
 *       --launch-skip-before-match, --launch-skip, --launch-count);
 *       @count >= 1.
 *
 * Return: 0; -EINVAL for NULL @f, an over-long @pat, @count 0, or an empty
 * alternative in @pat ("a||b", "a|").
 */
int tp_op_filter_init(struct tp_op_filter *f, const char *pat, uint32_t skip_before,
		      uint32_t skip, uint32_t count);

/**
 * tp_op_name_match() - whether @name matches the pattern list @pat
 * (prefix or glob per alternative; "" matches every name).
 * @pat:  PAT[|PAT...], or NULL / "" for none.
 * @name: the kernel name; NULL matches only an empty @pat.
 *
 * Return: true when an alternative is a prefix of @name or matches it as
 * an fnmatch(3) glob, or @pat is empty; an empty alternative matches
 * nothing.
 */
bool tp_op_name_match(const char *pat, const char *name);

/**
 * tp_op_filter_set_ranges() - range markers on (@on) or off: with them on,
 * step 2 of the selection passes only launches made inside a range.
 * @f:  a filter from tp_op_filter_init().
 * @on: true for `--range-markers on`.
 */
void tp_op_filter_set_ranges(struct tp_op_filter *f, bool on);

/**
 * tp_op_filter_decide() - account one launch of kernel @name on @device and
 * say whether to profile it (spec/opprof.md §4.6).
 * @f:        a filter from tp_op_filter_init().
 * @device:   0 .. TP_RT_MAX_DEVICES - 1 (others are never profiled).
 * @in_range: the launch was made inside a tp_rt_range_push/pop range of
 *            its thread (used only with range markers on).
 * @name:     the kernel's name; NULL matches only an empty pattern list.
 *
 * Return: true when the launch is to be profiled (its @profiled counter is
 * already incremented).
 */
bool tp_op_filter_decide(struct tp_op_filter *f, int device, const char *name, bool in_range);

/**
 * tp_op_filter_done() - whether @device has profiled @count launches (the
 * `--kill` condition).
 * @f:      a filter from tp_op_filter_init().
 * @device: the device id.
 *
 * Return: true when @f->profiled[@device] >= @f->count; false for a device
 * outside 0 .. TP_RT_MAX_DEVICES - 1.
 */
bool tp_op_filter_done(const struct tp_op_filter *f, int device);

/**
 * tp_op_name_sanitise() - copy @name into @out (@n bytes, >= 2) with every
 * byte outside [A-Za-z0-9_.-] replaced by '_', cut to TP_OP_NAME_MAX bytes;
 * a leading '.' becomes '_' and "" becomes "_" (never ".", ".." or a
 * hidden name: the report's walk skips names starting with '.').
 * @name: the kernel name; NULL is taken as "".
 * @out:  receives the NUL-terminated name.
 * @n:    size of @out in bytes; below 2 @out gets "" (or nothing for 0).
 */
void tp_op_name_sanitise(const char *name, char *out, size_t n);

/**
 * tp_op_claim_dir() - create <@base>/device<@device>/<@name>/<k>/ for the
 * smallest k >= 0 whose directory did not exist (mkdir is the claim, so
 * concurrent processes never share one), parents created as needed
 * (spec/opprof.md §4.6, §4.12).
 * @base:   the OPPROF_* output directory.
 * @device: the launch's device id.
 * @name:   an already sanitised name.
 * @out:    receives the directory's path.
 * @n:      size of @out in bytes.
 * @k:    in: the first index to try (a hint: the caller's next index for
 *        this name, 0 when unknown); out: the k claimed.
 *
 * Return: 0; -ENAMETOOLONG when the parent path passes 4095 bytes or the
 * directory's path does not fit @n; the errors of tp_mkdir_p() for the
 * parents; -errno of mkdir (other than EEXIST); -ENOSPC when every index
 * from @k up to 999,999 is taken. tp_last_error() names the path.
 */
int tp_op_claim_dir(const char *base, int device, const char *name, char *out, size_t n,
		    int *k);

#endif /* TASKPROF_OP_FILTER_H */
