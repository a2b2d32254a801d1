/* SPDX-License-Identifier: MIT */
/* Unit tests of op/config: config.txt round trip and every bad line
 * (docs/op-internals.md "config.txt"). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "op/config.h"
#include "op/groups.h"
#include "unit_helpers.h"

static char *dir;
static char path[4096];

static int setup(void **state)
{
	(void)state;
	dir = uh_mkdtemp();
	if (!dir)
		return -1;
	snprintf(path, sizeof(path), "%s/config.txt", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	uh_rm_rf(dir);
	dir = NULL;
	return 0;
}

static void sample(struct tp_op_config *c)
{
	tp_op_config_defaults(c);
	snprintf(c->output, sizeof(c->output), "/tmp/out/OPPROF_20261130183000_ABCDEFGHIJKLMNOP");
	c->arch = TP_PMU_ARCH_A5;
	c->replay_mode = TP_OP_REPLAY_RANGE;
	c->warm_up = 500;
	snprintf(c->kernel_name, sizeof(c->kernel_name), "vec_add|mat*");
	c->launch_skip_before_match = 1000;
	c->launch_skip = 3;
	c->launch_count = 5000;
	c->mem_limit_pct = 0;
	c->mem_limit_bytes = 3ull << 30;
	c->pass_timeout_s = 7;
	c->range_markers = true;
	c->instr = false;
	c->instr_cap = 17;
	c->kill = true;
	c->target_all = true;
	snprintf(c->groups, sizeof(c->groups), "PipeUtilization,MemoryUB");
	uint32_t mask;
	assert_int_equal(tp_op_groups_parse(c->groups, &mask, NULL, 0), 0);
	static const uint16_t extra = 0x0; /* event id 0 is real on a5 */
	assert_int_equal(tp_op_plan_for_groups(c->arch, mask | TP_OP_GROUPS_DEFAULT, &extra, 1, NULL,
					       0, &c->plan, NULL, 0), 0);
}

static void test_defaults(void **state)
{
	(void)state;
	struct tp_op_config c;
	tp_op_config_defaults(&c);
	assert_int_equal(c.version, 1);
	assert_int_equal(c.arch, TP_PMU_ARCH_A2A3);
	assert_int_equal(c.replay_mode, TP_OP_REPLAY_KERNEL);
	assert_int_equal(c.warm_up, 1);
	assert_int_equal(c.launch_count, 1);
	assert_int_equal(c.mem_limit_pct, 50);
	assert_int_equal(c.mem_limit_bytes, 0);
	assert_int_equal(c.pass_timeout_s, 60);
	assert_true(c.instr);
	assert_int_equal(c.instr_cap, 4096);
	assert_false(c.kill);
	assert_false(c.target_all);
	assert_string_equal(c.groups, "PipeUtilization,ArithmeticUtilization,Memory,MemoryL0,"
				      "MemoryUB,ResourceConflictRatio,L2Cache");
	assert_int_equal(c.plan.npasses, 1);
	assert_int_equal(c.plan.slots, 8);
}

static void test_round_trip(void **state)
{
	(void)state;
	struct tp_op_config *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	assert_non_null(a);
	assert_non_null(b);
	sample(a);
	assert_int_equal(tp_op_config_write(path, a), 0);
	assert_int_equal(tp_op_config_read(path, b), 0);
	assert_int_equal(b->version, 1);
	assert_string_equal(b->output, a->output);
	assert_int_equal(b->arch, TP_PMU_ARCH_A5);
	assert_int_equal(b->replay_mode, TP_OP_REPLAY_RANGE);
	assert_int_equal(b->warm_up, 500);
	assert_string_equal(b->kernel_name, "vec_add|mat*");
	assert_int_equal(b->launch_skip_before_match, 1000);
	assert_int_equal(b->launch_skip, 3);
	assert_int_equal(b->launch_count, 5000);
	assert_int_equal(b->mem_limit_bytes, 3ull << 30);
	assert_int_equal(b->mem_limit_pct, 0);
	assert_int_equal(b->pass_timeout_s, 7);
	assert_true(b->range_markers);
	assert_false(b->instr);
	assert_int_equal(b->instr_cap, 17);
	assert_true(b->kill);
	assert_true(b->target_all);
	assert_string_equal(b->groups, "PipeUtilization,MemoryUB");
	assert_int_equal(b->plan.arch, TP_PMU_ARCH_A5);
	assert_int_equal(b->plan.slots, 10);
	assert_int_equal(b->plan.npasses, a->plan.npasses);
	assert_true(a->plan.npasses >= 3);
	for (uint32_t p = 0; p < a->plan.npasses; p++)
		for (int k = 0; k < 2; k++) {
			assert_int_equal(b->plan.pass[p].n[k], a->plan.pass[p].n[k]);
			assert_memory_equal(b->plan.pass[p].ev[k], a->plan.pass[p].ev[k],
					    sizeof(a->plan.pass[p].ev[k]));
		}
	/* Event 0 survived as 0x0 and the padding as the sentinel. */
	assert_true(tp_op_plan_find(&b->plan, TP_OP_AIC, 0) >= 0);
	/* Writing what was read gives the same bytes. */
	char p2[4200], *t1, *t2;
	snprintf(p2, sizeof(p2), "%s/again.txt", dir);
	assert_int_equal(tp_op_config_write(p2, b), 0);
	assert_int_equal(tp_read_file(path, &t1, NULL), 0);
	assert_int_equal(tp_read_file(p2, &t2, NULL), 0);
	assert_string_equal(t1, t2);
	assert_non_null(strstr(t1, "\nreplay_mem_limit=3221225472\n"));
	assert_non_null(strstr(t1, "\npass.0.aic=0x"));
	free(t1);
	free(t2);
	/* Percent form. */
	a->mem_limit_bytes = 0;
	a->mem_limit_pct = 50;
	assert_int_equal(tp_op_config_write(path, a), 0);
	assert_int_equal(tp_op_config_read(path, b), 0);
	assert_int_equal(b->mem_limit_pct, 50);
	assert_int_equal(b->mem_limit_bytes, 0);
	free(a);
	free(b);
}

static void test_write_refuses(void **state)
{
	(void)state;
	struct tp_op_config *c = malloc(sizeof(*c));
	assert_non_null(c);
	sample(c);
	c->mem_limit_pct = 10; /* both set */
	assert_int_equal(tp_op_config_write(path, c), -EINVAL);
	sample(c);
	snprintf(c->kernel_name, sizeof(c->kernel_name), "a\nb");
	assert_int_equal(tp_op_config_write(path, c), -EINVAL);
	sample(c);
	c->plan.npasses = 0;
	assert_int_equal(tp_op_config_write(path, c), -EINVAL);
	sample(c);
	c->arch = TP_PMU_ARCH_A2A3; /* the a5 plan has 10-event rows */
	assert_int_equal(tp_op_config_write(path, c), -EINVAL);
	assert_non_null(strstr(tp_last_error(), "max 8"));
	assert_int_equal(tp_op_config_write(NULL, c), -EINVAL);
	free(c);
}

/* The good file with the line of @key replaced by @line (appended when
 * @key is NULL or absent); returns the 1-based line number of @line. */
static int write_variant(const char *key, const char *line)
{
	struct tp_op_config *c = malloc(sizeof(*c));
	assert_non_null(c);
	tp_op_config_defaults(c);
	snprintf(c->output, sizeof(c->output), "/tmp/out");
	assert_int_equal(tp_op_plan_for_groups(TP_PMU_ARCH_A2A3, TP_OP_GROUPS_DEFAULT, NULL, 0, NULL,
					       0, &c->plan, NULL, 0), 0);
	assert_int_equal(tp_op_config_write(path, c), 0);
	free(c);
	char *text;
	assert_int_equal(tp_read_file(path, &text, NULL), 0);
	char *out = malloc(strlen(text) + strlen(line) + 8);
	assert_non_null(out);
	out[0] = '\0';
	int ln = 0, at = 0;
	char *save = NULL;
	size_t klen = key ? strlen(key) : 0;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		ln++;
		if (key && !at && !strncmp(l, key, klen) && l[klen] == '=') {
			if (line[0]) {
				strcat(out, line);
				strcat(out, "\n");
				at = ln;
			} else {
				ln--; /* line removed */
				at = -1;
			}
			continue;
		}
		strcat(out, l);
		strcat(out, "\n");
	}
	if (!at) {
		strcat(out, line);
		strcat(out, "\n");
		at = ln + 1;
	}
	assert_int_equal(tp_write_file_atomic(path, out, strlen(out)), 0);
	free(text);
	free(out);
	return at;
}

/* Read the variant and check the error names the file, line and key. */
static void expect_bad(const char *key, const char *line, const char *want)
{
	struct tp_op_config *c = malloc(sizeof(*c));
	assert_non_null(c);
	int ln = write_variant(key, line);
	int rc = tp_op_config_read(path, c);
	if (rc != -EINVAL)
		fail_msg("'%s': rc %d, expected -EINVAL", line, rc);
	char prefix[4200];
	if (ln > 0)
		snprintf(prefix, sizeof(prefix), "%s:%d: ", path, ln);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", path);
	const char *msg = tp_last_error();
	if (strncmp(msg, prefix, strlen(prefix)) || !strstr(msg, want))
		fail_msg("'%s': message '%s', expected prefix '%s' and '%s'", line, msg, prefix, want);
	free(c);
}

static void expect_good(const char *key, const char *line)
{
	struct tp_op_config *c = malloc(sizeof(*c));
	assert_non_null(c);
	write_variant(key, line);
	int rc = tp_op_config_read(path, c);
	if (rc)
		fail_msg("'%s': %s", line, tp_last_error());
	free(c);
}

static void test_bad_lines(void **state)
{
	(void)state;
	expect_bad(NULL, "just words", "expected key=value, got 'just words'");
	expect_bad(NULL, "colour=blue", "unknown key 'colour'");
	expect_bad(NULL, "warm_up=2", "duplicate key 'warm_up'");
	expect_bad("version", "version=2", "version: expected 1, got '2'");
	expect_bad("output", "output=relative/dir", "output: expected an absolute path");
	expect_bad("arch", "arch=a3", "arch: expected a2a3 or a5, got 'a3'");
	expect_bad("replay_mode", "replay_mode=graph",
		   "replay_mode: expected kernel, application or range, got 'graph'");
	expect_bad("warm_up", "warm_up=501", "warm_up: expected an integer 0..500, got '501'");
	expect_bad("warm_up", "warm_up=-1", "warm_up: expected an integer 0..500");
	expect_bad("warm_up", "warm_up=1x", "warm_up: expected an integer 0..500");
	expect_bad("launch_skip_before_match", "launch_skip_before_match=1001",
		   "launch_skip_before_match: expected an integer 0..1000");
	expect_bad("launch_skip", "launch_skip=1001", "launch_skip: expected an integer 0..1000");
	expect_bad("launch_count", "launch_count=0", "launch_count: expected an integer 1..5000");
	expect_bad("launch_count", "launch_count=5001", "launch_count: expected an integer 1..5000");
	expect_bad("replay_mem_limit", "replay_mem_limit=0%", "replay_mem_limit: expected BYTES");
	expect_bad("replay_mem_limit", "replay_mem_limit=101%", "replay_mem_limit: expected BYTES");
	expect_bad("replay_mem_limit", "replay_mem_limit=0", "replay_mem_limit: expected BYTES");
	expect_bad("replay_mem_limit", "replay_mem_limit=12Q", "replay_mem_limit: expected BYTES");
	expect_bad("pass_timeout_s", "pass_timeout_s=0", "pass_timeout_s: expected an integer");
	expect_bad("range_markers", "range_markers=yes", "range_markers: expected on or off");
	expect_bad("instr", "instr=1", "instr: expected on or off");
	expect_bad("instr_cap", "instr_cap=0", "instr_cap: expected an integer 1..1048576");
	expect_bad("kill", "kill=maybe", "kill: expected on or off");
	expect_bad("target_processes", "target_processes=some",
		   "target_processes: expected main or all");
	expect_bad("groups", "groups=Memory,Foo", "groups: --aic-metrics: unknown metric group 'Foo'");
	expect_bad("passes", "passes=0", "passes: expected an integer 1..64");
	expect_bad("passes", "passes=65", "passes: expected an integer 1..64");
	{
		/* The error names the first pass line past the count. */
		struct tp_op_config *c = malloc(sizeof(*c));
		assert_non_null(c);
		int ln = write_variant("passes", "passes=2");
		assert_int_equal(tp_op_config_read(path, c), -EINVAL);
		char want[4300];
		snprintf(want, sizeof(want), "%s:%d: pass.3: past passes=2 (line %d)", path,
			 ln + 1 + 2 * 3, ln);
		assert_string_equal(tp_last_error(), want);
		free(c);
	}
	expect_bad("pass.0.aic", "pass.0.aic=1,2", "pass.0.aic: expected hex event ids");
	expect_bad("pass.0.aic", "pass.0.aic=0x1,0x2,0x3,0x4,0x5,0x6,0x7,0x8,0x9",
		   "pass.0.aic: expected at most 8 events");
	expect_bad("pass.0.aic", "pass.0.aic=0x1,0x1", "pass.0.aic: expected distinct event ids");
	expect_bad("pass.0.aiv", "pass.0.aiv=0xffff", "pass.0.aiv: expected event ids 0x0..0xfffe");
	expect_bad("pass.0.aiv", "pass.0.aiv=0x1;0x2", "pass.0.aiv: expected hex event ids");
	expect_bad(NULL, "pass.64.aic=0x1", "pass.64.aic: pass index 64, expected 0..63");
	expect_bad(NULL, "pass.1.aic=0x1", "duplicate key 'pass.1.aic'");
	expect_bad(NULL, "pass.x.aic=0x1", "unknown key 'pass.x.aic'");
	expect_bad(NULL, "pass.0.aix=0x1", "unknown key 'pass.0.aix'");
	expect_bad(NULL, "pass.+1.aic=0x1", "unknown key 'pass.+1.aic'");
	expect_bad(NULL, "pass.1.aic.x=0x1", "unknown key 'pass.1.aic.x'");
	expect_bad(NULL, "pass.9999999999.aic=0x1", "unknown key 'pass.9999999999.aic'");
	char longname[1100] = "kernel_name=";
	memset(longname + 12, 'k', 1025);
	longname[12 + 1025] = '\0';
	expect_bad("kernel_name", longname, "kernel_name: expected at most 1024 characters");
	/* A missing key names the file only. */
	expect_bad("instr_cap", "", "missing key 'instr_cap'");
	expect_bad("replay_mode", "replay_mode=range", "replay_mode: range requires range_markers=on");
	/* And what is fine. */
	expect_good("warm_up", "warm_up=500");
	expect_good("warm_up", "  warm_up = 0  ");
	expect_good("replay_mem_limit", "replay_mem_limit=64MiB");
	expect_good("replay_mem_limit", "replay_mem_limit=100%");
	expect_good(NULL, "# a comment");
	expect_good(NULL, "");
	expect_good("pass.3.aiv", "pass.3.aiv=");
}

static void test_arch_before_pass_lines(void **state)
{
	(void)state;
	const char *text = "version=1\npass.0.aic=0x1\narch=a2a3\n";
	assert_int_equal(tp_write_file_atomic(path, text, strlen(text)), 0);
	struct tp_op_config *c = malloc(sizeof(*c));
	assert_non_null(c);
	assert_int_equal(tp_op_config_read(path, c), -EINVAL);
	char want[4200];
	snprintf(want, sizeof(want), "%s:2: pass.0.aic: must follow the arch= line", path);
	assert_string_equal(tp_last_error(), want);
	char missing[4200];
	snprintf(missing, sizeof(missing), "%s/nope.txt", dir);
	assert_int_equal(tp_op_config_read(missing, c), -ENOENT);
	assert_non_null(strstr(tp_last_error(), "nope.txt: cannot read"));
	free(c);
}

static void test_mem_limit_parse(void **state)
{
	(void)state;
	uint64_t b;
	uint32_t p;
	assert_int_equal(tp_op_parse_mem_limit("50%", &b, &p), 0);
	assert_int_equal(p, 50);
	assert_int_equal(b, 0);
	assert_int_equal(tp_op_parse_mem_limit("4096", &b, &p), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(p, 0);
	assert_int_equal(tp_op_parse_mem_limit("2G", &b, &p), 0);
	assert_int_equal(b, 2ull << 30);
	assert_int_equal(tp_op_parse_mem_limit("3kib", &b, &p), 0);
	assert_int_equal(b, 3072);
	assert_int_equal(tp_op_parse_mem_limit("1MB", &b, &p), 0);
	assert_int_equal(b, 1ull << 20);
	assert_int_equal(tp_op_parse_mem_limit("1B", &b, &p), 0); /* plain bytes */
	assert_int_equal(b, 1);
	assert_int_equal(tp_op_parse_mem_limit("4096b", &b, &p), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(tp_op_parse_mem_limit("1BB", &b, &p), -EINVAL);
	assert_int_equal(tp_op_parse_mem_limit("0B", &b, &p), -EINVAL);
	assert_int_equal(tp_op_parse_mem_limit("5T", &b, &p), 0);
	assert_int_equal(b, 5ull << 40);
	assert_int_equal(tp_op_parse_mem_limit("16777215t", &b, &p), 0);
	assert_int_equal(b, 16777215ull << 40);
	assert_int_equal(tp_op_parse_mem_limit("16777216T", &b, &p), -EINVAL);
	assert_int_equal(tp_op_parse_mem_limit("5P", &b, &p), -EINVAL);
	assert_int_equal(tp_op_parse_mem_limit("", &b, &p), -EINVAL);
	assert_int_equal(tp_op_parse_mem_limit("-1", &b, &p), -EINVAL);
	assert_int_equal(tp_op_parse_mem_limit("5%%", &b, &p), -EINVAL);
	assert_int_equal(tp_op_parse_mem_limit("99999999999999999999", &b, &p), -EINVAL);
	assert_int_equal(tp_op_parse_mem_limit("17179869184G", &b, &p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arch_before_pass_lines, setup, teardown),
		cmocka_unit_test(test_mem_limit_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
