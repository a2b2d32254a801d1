/* SPDX-License-Identifier: MIT */
/*
 * filter.c — launch selection and launch directories of `taskprof op`
 * (op/filter.h; spec/opprof.md §1.2, §4.6).
 */
#include "op/filter.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/file.h"

int tp_op_filter_init(struct tp_op_filter *f, const char *pat, uint32_t skip_before,
		      uint32_t skip, uint32_t count)
{
	if (!f)
		return tp_set_error(-EINVAL, "tp_op_filter_init: f is NULL");
	memset(f, 0, sizeof(*f));
	if (!pat)
		pat = "";
	size_t len = strlen(pat);
	if (len > TP_OP_FILTER_PAT_MAX)
		return tp_set_error(-EINVAL, "kernel name pattern of %zu bytes (expected at most "
				    "%u)", len, TP_OP_FILTER_PAT_MAX);
	if (len && (pat[0] == '|' || pat[len - 1] == '|' || strstr(pat, "||")))
		return tp_set_error(-EINVAL, "kernel name pattern '%s': empty alternative "
				    "(expected PAT[|PAT...])", pat);
	if (count == 0)
		return tp_set_error(-EINVAL, "launch count 0 (expected >= 1)");
	memcpy(f->pat, pat, len + 1);
	f->skip_before = skip_before;
	f->skip = skip;
	f->count = count;
	return 0;
}

bool tp_op_name_match(const char *pat, const char *name)
{
	if (!pat || !*pat)
		return true;
	if (!name)
		return false;
	const char *p = pat;
	while (*p) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		char alt[TP_OP_FILTER_PAT_MAX + 1];
		if (n > TP_OP_FILTER_PAT_MAX)
			n = TP_OP_FILTER_PAT_MAX;
		memcpy(alt, p, n);
		alt[n] = '\0';
		/* An empty alternative would match everything by prefix:
		 * init refuses it, here it simply matches nothing. */
		if (n && (strncmp(name, alt, n) == 0 || fnmatch(alt, name, 0) == 0))
			return true;
		if (!bar)
			break;
		p = bar + 1;
	}
	return false;
}

void tp_op_filter_set_ranges(struct tp_op_filter *f, bool on)
{
	f->ranges = on;
}

bool tp_op_filter_decide(struct tp_op_filter *f, int device, const char *name, bool in_range)
{
	if (device < 0 || device >= TP_RT_MAX_DEVICES)
		return false;
	/* Every launch advances seen, matched or not (msprof's
	 * --launch-skip-before-match), in a range or not. */
	if (f->seen[device]++ < f->skip_before)
		return false;
	/* Range filter (msprof's --mstx) before the name (spec §4.6): a
	 * launch outside every range advances neither matched nor profiled. */
	if (f->ranges && !in_range)
		return false;
	if (!tp_op_name_match(f->pat, name))
		return false;
	/* Only matching launches advance matched (ncu's --launch-skip). */
	if (f->matched[device]++ < f->skip)
		return false;
	if (f->profiled[device] >= f->count)
		return false;
	f->profiled[device]++;
	return true;
}

bool tp_op_filter_done(const struct tp_op_filter *f, int device)
{
	if (device < 0 || device >= TP_RT_MAX_DEVICES)
		return false;
	return f->profiled[device] >= f->count;
}

void tp_op_name_sanitise(const char *name, char *out, size_t n)
{
	if (n < 2) {
		if (n)
			out[0] = '\0';
		return;
	}
	size_t max = n - 1 < TP_OP_NAME_MAX ? n - 1 : TP_OP_NAME_MAX;
	size_t i = 0;
	for (; name && name[i] && i < max; i++) {
		char c = name[i];
		bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
		out[i] = ok ? c : '_';
	}
	out[i] = '\0';
	/* "" would name no directory; a leading '.' makes "." and "..", which
	 * name other directories, and hidden names, which the report's walk
	 * over the launch folders skips (a ".hidden" kernel was profiled and
	 * then reported as "no kernel launch was profiled"). */
	if (i == 0)
		snprintf(out, n, "_");
	else if (out[0] == '.')
		out[0] = '_';
}

int tp_op_claim_dir(const char *base, int device, const char *name, char *out, size_t n,
		    int *k)
{
	char parent[4096];
	int len = snprintf(parent, sizeof(parent), "%s/device%d/%s", base, device, name);
	if (len < 0 || (size_t)len >= sizeof(parent))
		return tp_set_error(-ENAMETOOLONG, "%s/device%d/%s: path too long", base, device,
				    name);
	int rc = tp_mkdir_p(parent, 0755);
	if (rc)
		return rc;
	for (int i = *k > 0 ? *k : 0; i < 1000000; i++) {
		len = snprintf(out, n, "%s/%d", parent, i);
		if (len < 0 || (size_t)len >= n)
			return tp_set_error(-ENAMETOOLONG, "%s/%d: path too long", parent, i);
		/* mkdir is the claim: atomic, EEXIST means another launch
		 * (this process or another) has this index. */
		if (mkdir(out, 0755) == 0) {
			*k = i;
			return 0;
		}
		if (errno != EEXIST)
			return tp_set_error(-errno, "%s: cannot create: %s", out, strerror(errno));
	}
	return tp_set_error(-ENOSPC, "%s: 1000000 launch directories taken", parent);
}
