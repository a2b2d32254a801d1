/* SPDX-License-Identifier: MIT */
#include "op/config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/file.h"
#include "op/groups.h"

const char *tp_op_replay_mode_name(enum tp_op_replay_mode m)
{
	switch (m) {
	case TP_OP_REPLAY_KERNEL:
		return "kernel";
	case TP_OP_REPLAY_APPLICATION:
		return "application";
	case TP_OP_REPLAY_RANGE:
		return "range";
	}
	return "?";
}

const char *tp_op_arch_name(enum tp_pmu_arch a)
{
	return a == TP_PMU_ARCH_A5 ? "a5" : "a2a3";
}

void tp_op_config_defaults(struct tp_op_config *c)
{
	memset(c, 0, sizeof(*c));
	c->version = TP_OP_CONFIG_VERSION;
	c->arch = TP_PMU_ARCH_A2A3;
	c->replay_mode = TP_OP_REPLAY_KERNEL;
	c->warm_up = 1;
	c->launch_count = 1;
	c->mem_limit_pct = 50;
	c->pass_timeout_s = 60;
	c->instr = true;
	c->instr_cap = 4096;
	tp_op_groups_format(TP_OP_GROUPS_DEFAULT, c->groups, sizeof(c->groups));
	c->plan.arch = c->arch;
	c->plan.slots = (uint32_t)tp_pmu_arch_slots(c->arch);
	c->plan.npasses = 1;
	for (int p = 0; p < TP_OP_MAX_PASSES; p++)
		for (int k = 0; k < 2; k++)
			for (int s = 0; s < TP_DRV_PROF_MAX_EVENTS; s++)
				c->plan.pass[p].ev[k][s] = TP_EV_NONE;
}

int tp_op_parse_mem_limit(const char *s, uint64_t *bytes, uint32_t *pct)
{
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end == '%' && end[1] == '\0') {
		if (v < 1 || v > 100)
			return -EINVAL;
		*pct = (uint32_t)v;
		*bytes = 0;
		return 0;
	}
	unsigned shift = 0;
	if ((*end == 'B' || *end == 'b') && end[1] == '\0') {
		end++; /* plain bytes: "4096B" */
	} else if (*end) {
		switch (toupper((unsigned char)*end)) {
		case 'K': shift = 10; break;
		case 'M': shift = 20; break;
		case 'G': shift = 30; break;
		case 'T': shift = 40; break;
		default: return -EINVAL;
		}
		end++;
		if (!strcasecmp(end, "iB") || !strcasecmp(end, "B"))
			end += strlen(end);
		if (*end)
			return -EINVAL;
	}
	if (v == 0 || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	*pct = 0;
	return 0;
}

static bool has_newline(const char *s)
{
	return strchr(s, '\n') || strchr(s, '\r');
}

static void write_row(FILE *fp, const struct tp_op_pass *p, int c)
{
	for (uint32_t i = 0; i < p->n[c]; i++)
		fprintf(fp, "%s0x%x", i ? "," : "", p->ev[c][i]);
}

int tp_op_config_write(const char *path, const struct tp_op_config *c)
{
	if (!path || !c)
		return tp_set_error(-EINVAL, "config.txt: NULL argument");
	if (has_newline(c->output) || has_newline(c->kernel_name) || has_newline(c->groups))
		return tp_set_error(-EINVAL, "%s: output, kernel_name and groups must be one line",
				    path);
	if (!c->plan.npasses || c->plan.npasses > TP_OP_MAX_PASSES)
		return tp_set_error(-EINVAL, "%s: plan has %u passes, expected 1..%d", path,
				    c->plan.npasses, TP_OP_MAX_PASSES);
	uint32_t slots = (uint32_t)tp_pmu_arch_slots(c->arch);
	for (uint32_t p = 0; p < c->plan.npasses; p++)
		for (int k = 0; k < 2; k++)
			if (c->plan.pass[p].n[k] > slots)
				return tp_set_error(-EINVAL, "%s: pass %u has %u %s events, max %u",
						    path, p, c->plan.pass[p].n[k],
						    k ? "AIV" : "AIC", slots);
	if ((c->mem_limit_bytes != 0) == (c->mem_limit_pct != 0) || c->mem_limit_pct > 100)
		return tp_set_error(-EINVAL, "%s: exactly one of mem_limit_bytes / mem_limit_pct "
				    "(1..100) must be set", path);

	struct tp_file_tx tx;
	int rc = tp_file_tx_begin(&tx, path, NULL);
	if (rc)
		return rc;
	FILE *fp = tx.fp;
	fprintf(fp, "# taskprof op configuration (docs/op-internals.md)\n");
	fprintf(fp, "version=%d\n", c->version);
	fprintf(fp, "output=%s\n", c->output);
	fprintf(fp, "arch=%s\n", tp_op_arch_name(c->arch));
	fprintf(fp, "replay_mode=%s\n", tp_op_replay_mode_name(c->replay_mode));
	fprintf(fp, "warm_up=%u\n", c->warm_up);
	fprintf(fp, "kernel_name=%s\n", c->kernel_name);
	fprintf(fp, "launch_skip_before_match=%u\n", c->launch_skip_before_match);
	fprintf(fp, "launch_skip=%u\n", c->launch_skip);
	fprintf(fp, "launch_count=%u\n", c->launch_count);
	if (c->mem_limit_pct)
		fprintf(fp, "replay_mem_limit=%u%%\n", c->mem_limit_pct);
	else
		fprintf(fp, "replay_mem_limit=%" PRIu64 "\n", c->mem_limit_bytes);
	fprintf(fp, "pass_timeout_s=%u\n", c->pass_timeout_s);
	fprintf(fp, "range_markers=%s\n", c->range_markers ? "on" : "off");
	fprintf(fp, "instr=%s\n", c->instr ? "on" : "off");
	fprintf(fp, "instr_cap=%u\n", c->instr_cap);
	fprintf(fp, "kill=%s\n", c->kill ? "on" : "off");
	fprintf(fp, "target_processes=%s\n", c->target_all ? "all" : "main");
	fprintf(fp, "groups=%s\n", c->groups);
	fprintf(fp, "passes=%u\n", c->plan.npasses);
	for (uint32_t p = 0; p < c->plan.npasses; p++) {
		fprintf(fp, "pass.%u.aic=", p);
		write_row(fp, &c->plan.pass[p], 0);
		fprintf(fp, "\npass.%u.aiv=", p);
		write_row(fp, &c->plan.pass[p], 1);
		fputc('\n', fp);
	}
	return tp_file_tx_commit(&tx);
}

/* ---- reading ------------------------------------------------------------ */

enum key_id {
	K_VERSION, K_OUTPUT, K_ARCH, K_REPLAY_MODE, K_WARM_UP, K_KERNEL_NAME, K_SKIP_BEFORE,
	K_SKIP, K_COUNT, K_MEM_LIMIT, K_PASS_TIMEOUT, K_RANGE_MARKERS, K_INSTR, K_INSTR_CAP,
	K_KILL, K_TARGET, K_GROUPS, K_PASSES, K_NKEYS
};

static const char *const key_names[K_NKEYS] = {
	"version", "output", "arch", "replay_mode", "warm_up", "kernel_name",
	"launch_skip_before_match", "launch_skip", "launch_count", "replay_mem_limit",
	"pass_timeout_s", "range_markers", "instr", "instr_cap", "kill", "target_processes",
	"groups", "passes",
};

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

char *tp_op_text_next_line(char **cursor, int *line)
{
	/* strtok_r would skip empty lines and lose the numbering: walk by hand. */
	char *p = *cursor;
	while (p && *p) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		(*line)++;
		char *s = trim(p);
		p = nl ? nl + 1 : NULL;
		if (*s && *s != '#') {
			*cursor = p;
			return s;
		}
	}
	*cursor = NULL;
	return NULL;
}

int tp_op_text_kv(char *s, const char *path, int line, char **key, char **val)
{
	char *eq = strchr(s, '=');
	if (!eq)
		return tp_set_error(-EINVAL, "%s:%d: expected key=value, got '%.80s'", path, line,
				    s);
	*eq = '\0';
	*key = trim(s);
	*val = trim(eq + 1);
	return 0;
}

/* A decimal integer in [lo, hi] with nothing else around it. */
static bool parse_u32(const char *v, uint32_t lo, uint32_t hi, uint32_t *out)
{
	if (!isdigit((unsigned char)*v))
		return false;
	errno = 0;
	char *end;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || *end || x < lo || x > hi)
		return false;
	*out = (uint32_t)x;
	return true;
}

static bool parse_onoff(const char *v, bool *out)
{
	if (!strcmp(v, "on")) {
		*out = true;
		return true;
	}
	if (!strcmp(v, "off")) {
		*out = false;
		return true;
	}
	return false;
}

/* "0x1,0x2" → ids; "" → none. */
static bool parse_row(const char *v, uint32_t slots, uint16_t *ev, uint32_t *n, char *why,
		      size_t whylen)
{
	*n = 0;
	if (!*v)
		return true;
	const char *p = v;
	for (;;) {
		while (*p == ' ')
			p++;
		if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X') || !isxdigit((unsigned char)p[2])) {
			snprintf(why, whylen, "hex event ids like 0x1b separated by commas");
			return false;
		}
		errno = 0;
		char *end;
		unsigned long x = strtoul(p + 2, &end, 16);
		if (errno || x >= TP_EV_NONE) {
			snprintf(why, whylen, "event ids 0x0..0xfffe");
			return false;
		}
		if (*n >= slots) {
			snprintf(why, whylen, "at most %u events (the slots of the arch)", slots);
			return false;
		}
		for (uint32_t i = 0; i < *n; i++) {
			if (ev[i] == x) {
				snprintf(why, whylen, "distinct event ids (0x%lx twice)", x);
				return false;
			}
		}
		ev[(*n)++] = (uint16_t)x;
		p = end;
		while (*p == ' ')
			p++;
		if (!*p)
			return true;
		if (*p != ',') {
			snprintf(why, whylen, "hex event ids like 0x1b separated by commas");
			return false;
		}
		p++;
	}
}

/* "pass.<p>.aic" / "pass.<p>.aiv": decimal p (at most 9 digits), core 0 / 1. */
static bool pass_key(const char *key, unsigned *pn, int *core)
{
	if (strncmp(key, "pass.", 5))
		return false;
	const char *p = key + 5;
	unsigned v = 0;
	int nd = 0;
	while (isdigit((unsigned char)*p) && nd < 9) {
		v = v * 10 + (unsigned)(*p++ - '0');
		nd++;
	}
	if (!nd || *p != '.')
		return false;
	p++;
	if (!strcmp(p, "aic"))
		*core = 0;
	else if (!strcmp(p, "aiv"))
		*core = 1;
	else
		return false;
	*pn = v;
	return true;
}

int tp_op_config_read(const char *path, struct tp_op_config *c)
{
	if (!path || !c)
		return tp_set_error(-EINVAL, "config.txt: NULL argument");
	char *data = NULL;
	/* config.txt is a few hundred bytes; 1 MiB bounds a wrong path
	 * (TASKPROF_CONFIG=/dev/zero read until the memory ran out). */
	int rc = tp_read_file_max(path, 1u << 20, &data, NULL);
	if (rc == -EFBIG)
		return tp_set_error(rc, "%s: more than 1 MiB: not a taskprof op config.txt", path);
	if (rc)
		return tp_set_error(rc, "%s: cannot read: %s", path, strerror(-rc));
	tp_op_config_defaults(c);
	bool seen[K_NKEYS] = { false };
	int key_line[K_NKEYS] = { 0 };
	int pass_line[TP_OP_MAX_PASSES][2] = { { 0 } };
	int passes_line = 0;
	uint32_t max_pass_seen = 0;
	bool any_pass = false;
	int line = 0;
	char *p = data;
	char *s;
	while ((s = tp_op_text_next_line(&p, &line))) {
		char *key, *val;
		if ((rc = tp_op_text_kv(s, path, line, &key, &val)))
			goto out;
		char why[128] = "";
		unsigned pn;
		int k;
		if (pass_key(key, &pn, &k)) {
			if (pn >= TP_OP_MAX_PASSES) {
				rc = tp_set_error(-EINVAL, "%s:%d: %s: pass index %u, expected 0..%d",
						  path, line, key, pn, TP_OP_MAX_PASSES - 1);
				goto out;
			}
			if (pass_line[pn][k]) {
				rc = tp_set_error(-EINVAL, "%s:%d: duplicate key '%s' (first on line %d)",
						  path, line, key, pass_line[pn][k]);
				goto out;
			}
			pass_line[pn][k] = line;
			uint32_t slots = (uint32_t)tp_pmu_arch_slots(c->arch);
			if (!seen[K_ARCH]) {
				rc = tp_set_error(-EINVAL, "%s:%d: %s: must follow the arch= line", path,
						  line, key);
				goto out;
			}
			struct tp_op_pass *pp = &c->plan.pass[pn];
			if (!parse_row(val, slots, pp->ev[k], &pp->n[k], why, sizeof(why))) {
				rc = tp_set_error(-EINVAL, "%s:%d: %s: expected %s, got '%.80s'", path,
						  line, key, why, val);
				goto out;
			}
			any_pass = true;
			if (pn > max_pass_seen)
				max_pass_seen = pn;
			continue;
		}
		int id = -1;
		for (int i = 0; i < K_NKEYS; i++)
			if (!strcmp(key, key_names[i]))
				id = i;
		if (id < 0) {
			rc = tp_set_error(-EINVAL, "%s:%d: unknown key '%.80s'", path, line, key);
			goto out;
		}
		if (seen[id]) {
			rc = tp_set_error(-EINVAL, "%s:%d: duplicate key '%s'", path, line, key);
			goto out;
		}
		seen[id] = true;
		key_line[id] = line;
		const char *expect = NULL;
		uint32_t u;
		switch (id) {
		case K_VERSION:
			if (!parse_u32(val, TP_OP_CONFIG_VERSION, TP_OP_CONFIG_VERSION, &u))
				expect = "1";
			else
				c->version = (int)u;
			break;
		case K_OUTPUT:
			if (strlen(val) >= sizeof(c->output))
				expect = "a path shorter than 4096 bytes";
			else if (val[0] != '/')
				expect = "an absolute path";
			else
				snprintf(c->output, sizeof(c->output), "%s", val);
			break;
		case K_ARCH:
			if (!strcmp(val, "a2a3"))
				c->arch = TP_PMU_ARCH_A2A3;
			else if (!strcmp(val, "a5"))
				c->arch = TP_PMU_ARCH_A5;
			else
				expect = "a2a3 or a5";
			if (!expect && any_pass)
				expect = "arch= before the pass lines";
			c->plan.arch = c->arch;
			c->plan.slots = (uint32_t)tp_pmu_arch_slots(c->arch);
			break;
		case K_REPLAY_MODE:
			if (!strcmp(val, "kernel"))
				c->replay_mode = TP_OP_REPLAY_KERNEL;
			else if (!strcmp(val, "application"))
				c->replay_mode = TP_OP_REPLAY_APPLICATION;
			else if (!strcmp(val, "range"))
				c->replay_mode = TP_OP_REPLAY_RANGE;
			else
				expect = "kernel, application or range";
			break;
		case K_WARM_UP:
			if (!parse_u32(val, 0, TP_OP_WARM_UP_MAX, &c->warm_up))
				expect = "an integer 0..500";
			break;
		case K_KERNEL_NAME:
			if (strlen(val) > TP_OP_KERNEL_NAME_MAX)
				expect = "at most 1024 characters";
			else
				snprintf(c->kernel_name, sizeof(c->kernel_name), "%s", val);
			break;
		case K_SKIP_BEFORE:
			if (!parse_u32(val, 0, TP_OP_SKIP_MAX, &c->launch_skip_before_match))
				expect = "an integer 0..1000";
			break;
		case K_SKIP:
			if (!parse_u32(val, 0, TP_OP_SKIP_MAX, &c->launch_skip))
				expect = "an integer 0..1000";
			break;
		case K_COUNT:
			if (!parse_u32(val, 1, TP_OP_LAUNCH_COUNT_MAX, &c->launch_count))
				expect = "an integer 1..5000";
			break;
		case K_MEM_LIMIT:
			if (tp_op_parse_mem_limit(val, &c->mem_limit_bytes, &c->mem_limit_pct))
				expect = "BYTES (> 0, optional B/K/M/G/T suffix) or N% (1..100)";
			break;
		case K_PASS_TIMEOUT:
			if (!parse_u32(val, 1, TP_OP_PASS_TIMEOUT_MAX, &c->pass_timeout_s))
				expect = "an integer 1..86400 (seconds)";
			break;
		case K_RANGE_MARKERS:
			if (!parse_onoff(val, &c->range_markers))
				expect = "on or off";
			break;
		case K_INSTR:
			if (!parse_onoff(val, &c->instr))
				expect = "on or off";
			break;
		case K_INSTR_CAP:
			if (!parse_u32(val, 1, TP_OP_INSTR_CAP_MAX, &c->instr_cap))
				expect = "an integer 1..1048576 (points per block)";
			break;
		case K_KILL:
			if (!parse_onoff(val, &c->kill))
				expect = "on or off";
			break;
		case K_TARGET:
			if (!strcmp(val, "main"))
				c->target_all = false;
			else if (!strcmp(val, "all"))
				c->target_all = true;
			else
				expect = "main or all";
			break;
		case K_GROUPS: {
			uint32_t mask;
			char gerr[256];
			if (strlen(val) >= sizeof(c->groups)) {
				expect = "a group list shorter than 512 bytes";
			} else if (tp_op_groups_parse(val, &mask, gerr, sizeof(gerr))) {
				rc = tp_set_error(-EINVAL, "%s:%d: groups: %s", path, line, gerr);
				goto out;
			} else {
				snprintf(c->groups, sizeof(c->groups), "%s", val);
			}
			break;
		}
		case K_PASSES:
			if (!parse_u32(val, 1, TP_OP_MAX_PASSES, &c->plan.npasses))
				expect = "an integer 1..64";
			passes_line = line;
			break;
		}
		if (expect) {
			rc = tp_set_error(-EINVAL, "%s:%d: %s: expected %s, got '%.200s'", path, line,
					  key, expect, val);
			goto out;
		}
	}
	for (int i = 0; i < K_NKEYS; i++) {
		if (!seen[i]) {
			rc = tp_set_error(-EINVAL, "%s: missing key '%s'", path, key_names[i]);
			goto out;
		}
	}
	if (any_pass && max_pass_seen >= c->plan.npasses) {
		int bad = pass_line[max_pass_seen][0] ? pass_line[max_pass_seen][0]
						       : pass_line[max_pass_seen][1];
		rc = tp_set_error(-EINVAL, "%s:%d: pass.%u: past passes=%u (line %d)", path, bad,
				  max_pass_seen, c->plan.npasses, passes_line);
		goto out;
	}
	if (c->replay_mode == TP_OP_REPLAY_RANGE && !c->range_markers) {
		rc = tp_set_error(-EINVAL, "%s:%d: replay_mode: range requires range_markers=on "
				  "(line %d)", path, key_line[K_REPLAY_MODE],
				  key_line[K_RANGE_MARKERS]);
		goto out;
	}
out:
	free(data);
	return rc;
}
