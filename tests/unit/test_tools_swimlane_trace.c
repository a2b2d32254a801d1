/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the swimlane converter (tools/swimlane/trace.h): the
 * Python-repr float formatter, the JSON writer's escaping and layouts, the
 * label rules of spec/swimlane-format.md §4.5, and one end-to-end
 * conversion of fixture A checking exact events, the resolved func ids and
 * a statistics line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/thread.h"
#include "tools/swimlane/fmt_double.h"
#include "tools/swimlane/json_writer.h"
#include "tools/swimlane/perf_data.h"
#include "tools/swimlane/trace.h"
#include "unit_helpers.h"

static char tree[1024];

/* Expected strings from python3 -c 'print(repr(x))'. */
static void test_fmt_double_repr(void **state)
{
	(void)state;
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{2.6, "2.6"},
		{7.800000000000001, "7.800000000000001"},
		{0.0, "0.0"},
		{-0.0, "-0.0"},
		{26.0, "26.0"},
		{1e-05, "1e-05"},
		{1e16, "1e+16"},
		{1.5e16, "1.5e+16"},
		{1234567890123456.0, "1234567890123456.0"},
		{0.0001, "0.0001"},
		{0.00012345, "0.00012345"},
		{1e22, "1e+22"},
		{1e-7, "1e-07"},
		{5e-324, "5e-324"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{0.1 + 0.2, "0.30000000000000004"},
		{123.456, "123.456"},
		{-2.5e-05, "-2.5e-05"},
		{100.0, "100.0"},
		{0.40000000000000036, "0.40000000000000036"},
		{12345678901234567.0, "1.2345678901234568e+16"},
		{9.999999999999999e15, "1e+16"},
		{(1000140 - 1000000) * 0.02, "2.8000000000000003"},
		/* the exact 128-bit path: 15, 16 and 17 digits, near powers of
		 * ten, at the ends of its range */
		{0.09999999999999998, "0.09999999999999998"},
		{4.359999999998763, "4.359999999998763"},
		{8687.640000000001, "8687.640000000001"},
		{9.999999999999998, "9.999999999999998"},
		{99.99999999999999, "99.99999999999999"},
		{0.00010000000000000002, "0.00010000000000000002"},
		{999999999999999.9, "999999999999999.9"},
		{123456789012.34567, "123456789012.34567"},
	};
	char buf[TP_FMT_DOUBLE_MAX];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = tp_fmt_double_repr(cases[i].v, buf);
		assert_string_equal(buf, cases[i].want);
		assert_int_equal(n, (int)strlen(cases[i].want));
	}
}

/* The k/1000 fast path agrees with double-conversion on timestamp-like
 * values (cycles × 0.02 and × 0.001, differences, k / 1000) and others. */
static void test_fmt_double_fast_path(void **state)
{
	(void)state;
	char a[TP_FMT_DOUBLE_MAX], b[TP_FMT_DOUBLE_MAX];
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < 400000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t c = x % 4000000000ull;
		double v;
		switch (i % 6) {
		case 0: v = (double)c * 0.02; break;
		case 1: v = (double)c * 0.001; break;
		case 2: v = (double)(c % 100000) * 0.02 - (double)(x % 7777) * 0.02; break;
		case 3: v = (double)c / 1000.0; break;
		case 4: v = (double)(x >> 11) * 0x1.0p-53 * 1e6; break;
		default: v = (double)c * 0.02 - 0.01; break;
		}
		tp_fmt_double_repr(v, a);
		tp_fmt_double_repr_slow(v, b);
		if (strcmp(a, b))
			fail_msg("%.17g: fast %s, slow %s", v, a, b);
	}
}

/* The exact path (1e-4 <= |v| < 1e15) agrees with double-conversion on
 * random bit patterns in its range, on µs differences and near powers
 * of ten, and it takes almost all of them (ties go to the slow path). */
static void test_fmt_double_exact_path(void **state)
{
	(void)state;
	char a[TP_FMT_DOUBLE_MAX], b[TP_FMT_DOUBLE_MAX];
	uint64_t x = 0x243F6A8885A308D3ull;
	int taken = 0, in_range = 0;
	for (int i = 0; i < 600000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double v;
		switch (i % 5) {
		case 0: { /* any double with exponent in [-14, 50) */
			uint64_t bits = (x & ((1ull << 52) - 1)) |
					((uint64_t)(1023 - 14 + (x >> 58) % 64) << 52);
			memcpy(&v, &bits, sizeof(v));
			break;
		}
		case 1: v = (double)(x % 100000000) * 0.02 - (double)((x >> 30) % 100000000) * 0.02; break;
		case 2: v = (double)(x % 1000) / 100.0 - (double)((x >> 20) % 1000) / 100.0; break;
		case 3: { /* a few ulps around 10^k */
			double p = 1e-4;
			for (unsigned k = 0; k < (x >> 40) % 19; k++)
				p *= 10;
			v = nextafter(p, (x & 1) ? 0.0 : INFINITY);
			if ((x >> 8) & 1)
				v = nextafter(v, (x & 2) ? 0.0 : INFINITY);
			break;
		}
		default: v = -(double)(x >> 11) * 0x1.0p-53 * 1e6; break;
		}
		double av = fabs(v);
		in_range += av >= 1e-4 && av < 1e15;
		int n = tp_fmt_double_repr_exact(v, a);
		if (!n)
			continue;
		taken++;
		assert_true(av >= 1e-4 && av < 1e15);
		assert_int_equal(n, (int)strlen(a));
		tp_fmt_double_repr_slow(v, b);
		if (strcmp(a, b))
			fail_msg("%.17g: exact %s, slow %s", v, a, b);
	}
	if (taken <= in_range * 99 / 100)
		fail_msg("exact path took %d of %d in range", taken, in_range);
	assert_int_equal(tp_fmt_double_repr_exact(1e15, a), 0);
	assert_int_equal(tp_fmt_double_repr_exact(9e-5, a), 0);
	assert_int_equal(tp_fmt_double_repr_exact(NAN, a), 0);
}

static void test_func_tag(void **state)
{
	(void)state;
	char buf[40];
	assert_string_equal(sl_func_tag(0, buf), "0_a");
	assert_string_equal(sl_func_tag(4, buf), "4_e");
	assert_string_equal(sl_func_tag(25, buf), "25_z");
	assert_string_equal(sl_func_tag(26, buf), "26_aa");
	assert_string_equal(sl_func_tag(27, buf), "27_ab");
	assert_string_equal(sl_func_tag(701, buf), "701_zz");
	assert_string_equal(sl_func_tag(702, buf), "702_aaa");
	assert_string_equal(sl_func_tag(-1, buf), "-1_");
}

static void test_task_label(void **state)
{
	(void)state;
	int64_t ids[] = {0, 2, 5};
	char *names[] = {"SPMDKernel", "PV", "my(odd)"};
	struct sl_name_map nm = {.n = 3, .func_id = ids, .name = names};
	char b[128];

	sl_task_label(b, sizeof(b), -1, &nm, "t1", false);
	assert_string_equal(b, "task(t1)");
	sl_task_label(b, sizeof(b), -1, NULL, "r1t3", true);
	assert_string_equal(b, "task_spmd(r1t3)");
	sl_task_label(b, sizeof(b), 2, &nm, "r1t3", true);
	assert_string_equal(b, "PV_spmd(r1t3)");
	sl_task_label(b, sizeof(b), 2, &nm, "r1t3", false);
	assert_string_equal(b, "PV(r1t3)");
	/* the name already says spmd (any case): unchanged */
	sl_task_label(b, sizeof(b), 0, &nm, "t0", true);
	assert_string_equal(b, "SPMDKernel(t0)");
	/* no name: func_<tag>; SPMD suffix before the first '(' */
	sl_task_label(b, sizeof(b), 4, &nm, "t4", false);
	assert_string_equal(b, "func_4_e(t4)");
	sl_task_label(b, sizeof(b), 26, NULL, "t9", true);
	assert_string_equal(b, "func_26_aa_spmd(t9)");
	/* a name with '(' splits at its first '(' like the reference */
	sl_task_label(b, sizeof(b), 5, &nm, "t1", true);
	assert_string_equal(b, "my_spmd(odd)(t1)");
}

/* The writer: ensure_ascii escapes and both layouts. */
static void test_json_writer(void **state)
{
	(void)state;
	char *mem = NULL;
	size_t len = 0;
	for (int layout = 0; layout < 2; layout++) {
		FILE *f = open_memstream(&mem, &len);
		assert_non_null(f);
		struct jw w;
		assert_int_equal(jw_init(&w, f, layout ? JW_PRETTY : JW_COMPACT, layout == 1), 0);
		jw_obj_begin(&w);
		jw_key(&w, "traceEvents");
		jw_arr_begin(&w);
		jw_obj_begin(&w);
		jw_key(&w, "name");
		jw_str(&w, "complete\xe2\x86\x92ready \"q\"\n\xf0\x9f\x98\x80");
		jw_key(&w, "a");
		jw_arr_begin(&w);
		jw_i64(&w, -1);
		jw_u64(&w, UINT64_MAX);
		jw_arr_end(&w);
		jw_key(&w, "e");
		jw_obj_begin(&w);
		jw_obj_end(&w);
		jw_key(&w, "x");
		jw_double(&w, 0.5);
		jw_obj_end(&w);
		jw_arr_end(&w);
		jw_obj_end(&w);
		assert_int_equal(jw_fini(&w), 0);
		fclose(f);
		if (!layout)
			assert_string_equal(
				mem, "{\"traceEvents\": [\n"
				     "{\"name\":\"complete\\u2192ready \\\"q\\\"\\n\\ud83d\\ude00\","
				     "\"a\":[-1,18446744073709551615],\"e\":{},\"x\":0.5}\n]}");
		else /* python3: json.dump(obj, f, indent=2) */
			assert_string_equal(
				mem, "{\n  \"traceEvents\": [\n    {\n"
				     "      \"name\": \"complete\\u2192ready \\\"q\\\"\\n\\ud83d\\ude00\",\n"
				     "      \"a\": [\n        -1,\n        18446744073709551615\n      ],\n"
				     "      \"e\": {},\n      \"x\": 0.5\n    }\n  ]\n}");
		free(mem);
		mem = NULL;
	}
}

/* Whole events from jw_ev_begin/jw_ev_end between token-built ones give
 * the bytes the token calls give (compact layout). */
/* A compact, unthreaded writer on a memory stream (*@mem, *@len), inside
 * {"traceEvents": [ ; returns the stream (fclose after jw_fini). */
static FILE *events_begin(struct jw *w, char **mem, size_t *len)
{
	FILE *f = open_memstream(mem, len);
	assert_non_null(f);
	assert_int_equal(jw_init(w, f, JW_COMPACT, false), 0);
	jw_obj_begin(w);
	jw_key(w, "traceEvents");
	jw_arr_begin(w);
	return f;
}

static void test_json_writer_events(void **state)
{
	(void)state;
	char *mem = NULL;
	size_t len = 0;
	struct jw w;
	FILE *f = events_begin(&w, &mem, &len);
	char *p = jw_ev_begin(&w, 64);
	memcpy(p, "{\"a\":1}", 7);
	jw_ev_end(&w, p + 7);
	jw_obj_begin(&w);
	jw_key(&w, "b");
	jw_i64(&w, 2);
	jw_obj_end(&w);
	p = jw_ev_begin(&w, 64);
	memcpy(p, "{\"c\":3}", 7);
	jw_ev_end(&w, p + 7);
	jw_arr_end(&w);
	jw_obj_end(&w);
	assert_int_equal(jw_fini(&w), 0);
	fclose(f);
	assert_string_equal(mem, "{\"traceEvents\": [\n{\"a\":1},\n{\"b\":2},\n{\"c\":3}\n]}");
	free(mem);
}

/* Fragments (jw_fragment_init): events formatted into one and moved into a
 * writer come out as if written there, with the separators of their place;
 * a fragment grows past its 4 MiB start (events and a 3 MiB token), and
 * is empty again after the move. */
static void test_json_writer_fragment(void **state)
{
	(void)state;
	char *mem = NULL;
	size_t len = 0;
	struct jw w, fr;
	FILE *f = events_begin(&w, &mem, &len);
	assert_int_equal(jw_fragment_init(&fr), 0);
	char *p = jw_ev_begin(&w, 64);
	memcpy(p, "{\"a\":1}", 7);
	jw_ev_end(&w, p + 7);
	/* fragment 1: a template event and a token event */
	p = jw_ev_begin(&fr, 64);
	memcpy(p, "{\"b\":2}", 7);
	jw_ev_end(&fr, p + 7);
	jw_obj_begin(&fr);
	jw_key(&fr, "c");
	jw_i64(&fr, 3);
	jw_obj_end(&fr);
	jw_fragment_move(&w, &fr);
	/* fragment 2: 40,000 events of 100+ bytes and a 3 MiB string */
	size_t big = 3u << 20;
	char *s = malloc(big);
	assert_non_null(s);
	memset(s, 'x', big);
	for (int i = 0; i < 40000; i++) {
		jw_obj_begin(&fr);
		jw_key(&fr, "pad");
		jw_strn(&fr, s, 100);
		jw_key(&fr, "i");
		jw_i64(&fr, i);
		jw_obj_end(&fr);
	}
	jw_obj_begin(&fr);
	jw_key(&fr, "big");
	jw_strn(&fr, s, big);
	jw_obj_end(&fr);
	jw_fragment_move(&w, &fr);
	jw_fragment_move(&w, &fr); /* empty: nothing */
	p = jw_ev_begin(&w, 64);
	memcpy(p, "{\"d\":4}", 7);
	jw_ev_end(&w, p + 7);
	jw_arr_end(&w);
	jw_obj_end(&w);
	assert_int_equal(jw_fini(&w), 0);
	jw_fragment_fini(&fr);
	fclose(f);
	const char *head = "{\"traceEvents\": [\n{\"a\":1},\n{\"b\":2},\n{\"c\":3},\n{\"pad\":\"";
	assert_memory_equal(mem, head, strlen(head));
	char ev[160];
	size_t off = strlen(head) - strlen(",\n{\"pad\":\"");
	for (int i = 0; i < 40000; i++) {
		int n = snprintf(ev, sizeof(ev), ",\n{\"pad\":\"%.100s\",\"i\":%d}", s, i);
		assert_memory_equal(mem + off, ev, (size_t)n);
		off += (size_t)n;
	}
	const char *bh = ",\n{\"big\":\"";
	assert_memory_equal(mem + off, bh, strlen(bh));
	off += strlen(bh);
	assert_memory_equal(mem + off, s, big);
	off += big;
	assert_string_equal(mem + off, "\"},\n{\"d\":4}\n]}");
	free(s);
	free(mem);
}

/* A fragment nearly full when a long string comes (the escaped string
 * reserved up front, 1.8 MB, is more than the 256 KiB the writer first
 * grew by: it wrote past the buffer, found by review under ASan): it
 * grows by what the string needs. */
static void test_json_writer_fragment_long_string(void **state)
{
	(void)state;
	char *mem = NULL;
	size_t len = 0;
	struct jw w, fr;
	FILE *f = events_begin(&w, &mem, &len);
	assert_int_equal(jw_fragment_init(&fr), 0);
	jw_obj_begin(&w);
	jw_obj_end(&w);
	/* 3,905,200 bytes of padding events, then a 300,000-byte string */
	size_t pad = 3905200, str = 300000;
	char *s = malloc(str);
	assert_non_null(s);
	memset(s, 'y', str);
	size_t filled = 0;
	while (filled < pad) {
		size_t n = pad - filled < 1000 ? pad - filled : 1000;
		jw_raw(&fr, s, n);
		filled += n;
	}
	jw_strn(&fr, s, str);
	jw_fragment_move(&w, &fr);
	jw_arr_end(&w);
	jw_obj_end(&w);
	assert_int_equal(jw_fini(&w), 0);
	jw_fragment_fini(&fr);
	fclose(f);
	const char *head = "{\"traceEvents\": [\n{}";
	size_t hl = strlen(head);
	/* head, padding, ",\n" (the string is a value of its own), the
	 * quoted string, "\n]}" */
	assert_int_equal(len, hl + pad + 2 + 1 + str + 1 + 3);
	assert_memory_equal(mem, head, hl);
	for (size_t i = 0; i < pad; i++)
		assert_true(mem[hl + i] == 'y');
	assert_memory_equal(mem + hl + pad, ",\n\"", 3);
	for (size_t i = 0; i < str; i++)
		assert_true(mem[hl + pad + 3 + i] == 'y');
	assert_true(mem[hl + pad + 3 + str] == '"');
	assert_string_equal(mem + len - 2, "]}");
	free(s);
	free(mem);
}

static char *slurp(const char *path);

/* A threaded writer on a real file with direct I/O asked for: the file
 * holds exactly the token stream (events of varying size across many 4 KiB
 * blocks and several buffer hand-offs, a token larger than half a buffer,
 * a final partial block), whether or not the file system took O_DIRECT. */
static void test_json_writer_direct(void **state)
{
	(void)state;
	char *tmp = uh_mkdtemp();
	assert_non_null(tmp);
	char path[600], *want = NULL;
	size_t want_len = 0;
	snprintf(path, sizeof(path), "%s/direct.json", tmp);
	FILE *f = fopen(path, "w");
	FILE *m = open_memstream(&want, &want_len);
	assert_non_null(f);
	assert_non_null(m);
	size_t big_n = 3u << 20;
	char *big = malloc(big_n);
	assert_non_null(big);
	for (size_t i = 0; i < big_n; i++)
		big[i] = (char)('a' + i % 26);
	for (int pass = 0; pass < 2; pass++) {
		struct jw w;
		assert_int_equal(jw_init(&w, pass ? m : f, JW_COMPACT, pass == 0), 0);
		if (pass == 0)
			(void)jw_set_direct(&w); /* may be refused (tmpfs) */
		jw_obj_begin(&w);
		jw_key(&w, "traceEvents");
		jw_arr_begin(&w);
		for (int i = 0; i < 200000; i++) {
			char *p = jw_ev_begin(&w, 64);
			p += sprintf(p, "{\"i\":%d,\"pad\":\"%.*s\"}", i, i % 23, big);
			jw_ev_end(&w, p);
			if (i == 123457)
				jw_strn(&w, big, big_n); /* the huge-token path */
		}
		jw_arr_end(&w);
		jw_obj_end(&w);
		assert_int_equal(jw_fini(&w), 0);
	}
	fclose(f);
	fclose(m);
	char *got = slurp(path);
	assert_non_null(got);
	assert_int_equal(strlen(got), want_len);
	assert_true(want_len > (8u << 20));
	assert_memory_equal(got, want, want_len);
	free(got);
	free(want);
	free(big);
	uh_rm_rf(tmp);
}

/* Read a whole file into a NUL-terminated buffer. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	if (b)
		b[n] = '\0';
	fclose(f);
	return b;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_fixture_a_end_to_end(void **state)
{
	(void)state;
	char dir[1100], rec[1200], deps[1200], names[1200], out[1200];
	snprintf(dir, sizeof(dir), "%s/tests/conformance/fixtures/swimlane-probe/A_level4_full",
		 tree);
	snprintf(rec, sizeof(rec), "%s/l2_swimlane_records.json", dir);
	snprintf(deps, sizeof(deps), "%s/deps.json", dir);
	snprintf(names, sizeof(names), "%s/name_map_TestProbe_case1.json", dir);
	char *tmp = uh_mkdtemp();
	assert_non_null(tmp);
	snprintf(out, sizeof(out), "%s/merged.json", tmp);

	struct sl_perf_data pd;
	struct sl_deps dp;
	struct sl_name_map nm;
	assert_int_equal(sl_read_perf_data(rec, &pd), 0);
	assert_int_equal(sl_read_deps(deps, &dp), 0);
	assert_int_equal(sl_read_name_map(names, &nm), 0);
	/* the reader leaves func ids unresolved */
	for (size_t i = 0; i < pd.n_tasks; i++)
		assert_int_equal(pd.tasks[i].func_id, -1);

	char *vbuf = NULL, *ebuf = NULL;
	size_t vlen = 0, elen = 0;
	FILE *vout = open_memstream(&vbuf, &vlen);
	FILE *verr = open_memstream(&ebuf, &elen);
	struct sl_trace_opts o = {.output_path = out, .verbose = true, .out = vout, .err = verr};
	struct sl_trace_result res;
	assert_int_equal(sl_trace_generate(&pd, &dp, &nm, &o, &res), 0);
	fclose(vout);
	fclose(verr);
	assert_int_equal(res.n_events, 185);
	assert_int_equal(res.n_flows, 50);
	assert_int_equal(res.n_overhead, 0);
	/* every arrow's s and f went through the flow formatter thread */
	assert_int_equal(res.n_flows_queued, 100);
	assert_string_equal(ebuf, "");
	assert_non_null(strstr(vbuf, "  Dependency flow events: 10 edges (source: deps.json)\n"));
	assert_non_null(strstr(vbuf, "  Happens-before violations: 1 edge(s) flagged as "
				     "'hb_violation'\n"));
	assert_non_null(strstr(vbuf, "  Total events: 185\n  Flow events: 50\n"));

	/* func ids were resolved in place from the kernel map (§2.10): the
	 * MIX task t4 has its AIC row on func 3 and its AIV row on func 4 */
	for (size_t i = 0; i < pd.n_tasks; i++) {
		const struct sl_task *t = &pd.tasks[i];
		if (t->task_id == 4)
			assert_int_equal(t->func_id, t->core_type == SL_AIC ? 3 : 4);
		if (t->task_id == 4294967299ull)
			assert_int_equal(t->func_id, 2);
	}

	char *j = slurp(out);
	assert_non_null(j);
	/* one compact event per line between the container lines */
	assert_int_equal(count_lines(j), 185 + 2);
	assert_true(!strncmp(j, "{\"traceEvents\": [\n", 18));
	static const char *const want[] = {
		"{\"args\":{\"event-hint\":\"Task:t1, FuncId:0, CoreId:0\",\"fanout-hint\":\"2: "
		"[t2, t6]\",\"fanin-hint\":\"1: [t0]\",\"duration-us\":5.4,\"kernel-duration-us\":"
		"5.199999999999999,\"local_setup_us\":0.2,\"taskId\":1},\"cat\":\"event\",\"id\":0,"
		"\"name\":\"QK(t1)\",\"ph\":\"X\",\"pid\":4,\"tid\":10000,\"ts\":2.6,\"dur\":5.4}",
		"\"name\":\"PV_spmd(r1t3)\",\"ph\":\"X\",\"pid\":4,\"tid\":10030,\"ts\":13.08,"
		"\"dur\":5.020000000000001}",
		"{\"args\":{\"phase\":\"alloc\",\"task_id\":0,\"event-hint\":\"alloc(t0)\"},\"cat\":"
		"\"event\",\"cname\":\"olive\",\"id\":16,\"name\":\"alloc(t0)\",\"ph\":\"X\",\"pid\":4,"
		"\"tid\":19002,\"ts\":0.0,\"dur\":0.8}",
		"{\"cat\":\"flow\",\"id\":1,\"name\":\"hb_violation\",\"ph\":\"f\",\"pid\":4,\"tid\":"
		"10020,\"ts\":7.800000000000001,\"bp\":\"e\",\"input_task_count\":1,"
		"\"output_task_count\":1,\"bind_id\":1}",
		"{\"cat\":\"flow\",\"id\":27,\"name\":\"complete\\u2192ready\",\"ph\":\"s\",\"pid\":2,"
		"\"tid\":30000,\"ts\":12.49}",
		"{\"cat\":\"flow\",\"id\":30,\"name\":\"dispatch\",\"ph\":\"f\",\"pid\":3,\"tid\":10000,"
		"\"ts\":2.4,\"bp\":\"e\",\"bind_id\":7}",
		"{\"args\":{\"phase\":\"complete\",\"loop_iter\":12,\"tasks_processed\":2,"
		"\"shared_at_start (aic,aiv,mix)\":[0,0,0],\"shared_at_end (aic,aiv,mix)\":[0,0,0],"
		"\"finishes_processed\":2},\"cat\":\"scheduler\",\"cname\":\"good\",\"name\":"
		"\"complete(2)\",\"ph\":\"X\",\"pid\":2,\"tid\":30010,\"ts\":24.2,"
		"\"dur\":0.40000000000000213}",
		"{\"cat\":\"flow\",\"id\":49,\"name\":\"submit\\u2192dispatch\",\"ph\":\"f\",\"pid\":2,"
		"\"tid\":30010,\"ts\":12.9,\"bp\":\"e\"}\n]}\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(j, want[i]))
			fail_msg("missing event text: %s", want[i]);
	free(j);

	/* the statistics table sees the resolved ids (spec §9 item 17) */
	char *sbuf = NULL;
	size_t slen = 0;
	FILE *s = open_memstream(&sbuf, &slen);
	sl_print_stats(s, &pd, &nm);
	fclose(s);
	assert_non_null(strstr(sbuf, "\n4        func_4_e         1           4.76             5.66   "
				     "84.1%              0.40             0.50          0.20           "
				     "0.20\n"));
	assert_non_null(strstr(sbuf, "\nTOTAL                     7          32.32            "
				     "37.06\n"));
	free(sbuf);

	/* a second conversion of the same data gives the same bytes */
	char out2[1200];
	snprintf(out2, sizeof(out2), "%s/merged2.json", tmp);
	FILE *nul = fopen("/dev/null", "w");
	struct sl_trace_opts o2 = {.output_path = out2, .out = nul, .err = nul};
	assert_int_equal(sl_trace_generate(&pd, &dp, &nm, &o2, NULL), 0);
	fclose(nul);
	char *a = slurp(out), *b = slurp(out2);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(a);
	free(b);

	/* A MIX task with two different AIV kernels: every AIV row still
	 * takes kernel_ids[1] (§2.10), and one warning says so. */
	long k4 = sl_deps_find_task(&dp, 4);
	assert_true(k4 >= 0);
	dp.kernel_ids[k4][2] = 5;
	for (size_t i = 0; i < pd.n_tasks; i++)
		pd.tasks[i].func_id = -1;
	char *wbuf = NULL;
	size_t wlen = 0;
	FILE *werr = open_memstream(&wbuf, &wlen);
	nul = fopen("/dev/null", "w");
	struct sl_trace_opts o3 = {.output_path = out2, .out = nul, .err = werr};
	assert_int_equal(sl_trace_generate(&pd, &dp, &nm, &o3, NULL), 0);
	fclose(nul);
	fclose(werr);
	assert_non_null(strstr(wbuf, "note: 1 task runs two different AIV kernels (first: t4, "
				     "kernel_ids [3, 4, 5]); the records do not say which AIV core "
				     "ran which, so every AIV row takes kernel_ids[1]"));
	assert_non_null(strstr(wbuf, "rows and statistics of func_id 5 appear under 4\n"));
	for (size_t i = 0; i < pd.n_tasks; i++)
		if (pd.tasks[i].task_id == 4)
			assert_int_equal(pd.tasks[i].func_id, pd.tasks[i].core_type == SL_AIC ? 3 : 4);
	free(wbuf);
	/* The kernels' names in that note as a terminal may show them: an
	 * escape sequence, a newline and C1 U+0085 as '?', on one line. */
	int64_t cids[] = { 4, 5 };
	char *cnames[] = { "A\x1b[31mRED\nX", "B\xc2\x85Z" };
	struct sl_name_map cnm = {.n = 2, .func_id = cids, .name = cnames};
	for (size_t i = 0; i < pd.n_tasks; i++)
		pd.tasks[i].func_id = -1;
	werr = open_memstream(&wbuf, &wlen);
	nul = fopen("/dev/null", "w");
	struct sl_trace_opts o4 = {.output_path = out2, .out = nul, .err = werr};
	assert_int_equal(sl_trace_generate(&pd, &dp, &cnm, &o4, NULL), 0);
	fclose(nul);
	fclose(werr);
	assert_non_null(strstr(wbuf, "rows and statistics of func_id 5 (B?Z) appear under 4 "
				     "(A?[31mRED?X)\n"));
	assert_null(strchr(wbuf, '\x1b'));
	free(wbuf);

	free(vbuf);
	free(ebuf);
	sl_perf_data_free(&pd);
	sl_deps_free(&dp);
	sl_name_map_free(&nm);
	uh_rm_rf(tmp);
}

/* Worker View dependency arrows (their "s" events, hb_violation
 * included) in @path. */
static size_t count_dep_arrows(const char *path)
{
	char *j = slurp(path);
	assert_non_null(j);
	size_t n = 0;
	static const char *const pat[2] = {"\"name\":\"dependency\",\"ph\":\"s\",\"pid\":4,",
					   "\"name\":\"hb_violation\",\"ph\":\"s\",\"pid\":4,"};
	for (int k = 0; k < 2; k++)
		for (const char *p = strstr(j, pat[k]); p; p = strstr(p + 1, pat[k]))
			n++;
	free(j);
	return n;
}

/* sl_trace_generate() into @out with its warnings in a string (caller
 * frees); @n_flows receives the dependency arrows drawn. */
static char *convert_err(struct sl_perf_data *pd, const struct sl_deps *dp, const char *out,
			 uint64_t *n_flows)
{
	char *ebuf = NULL;
	size_t elen = 0;
	FILE *err = open_memstream(&ebuf, &elen);
	FILE *nul = fopen("/dev/null", "w");
	assert_non_null(err);
	assert_non_null(nul);
	struct sl_trace_opts o = {.output_path = out, .out = nul, .err = err};
	struct sl_trace_result res;
	assert_int_equal(sl_trace_generate(pd, dp, NULL, &o, &res), 0);
	fclose(nul);
	fclose(err);
	(void)res;
	*n_flows = count_dep_arrows(out);
	return ebuf;
}

/* Fixture A's records and deps.json read into @pd / @dp, and @out (@cap
 * bytes) set to merged.json in a new temporary folder, which is returned
 * (remove it with uh_rm_rf()). */
static char *read_fixture_a(struct sl_perf_data *pd, struct sl_deps *dp, char *out, size_t cap)
{
	char dir[1100], rec[1200], deps[1200];
	snprintf(dir, sizeof(dir), "%s/tests/conformance/fixtures/swimlane-probe/A_level4_full",
		 tree);
	snprintf(rec, sizeof(rec), "%s/l2_swimlane_records.json", dir);
	snprintf(deps, sizeof(deps), "%s/deps.json", dir);
	char *tmp = uh_mkdtemp();
	assert_non_null(tmp);
	snprintf(out, cap, "%s/merged.json", tmp);
	assert_int_equal(sl_read_perf_data(rec, pd), 0);
	assert_int_equal(sl_read_deps(deps, dp), 0);
	return tmp;
}

/* deps.json pairs whose task has nothing to anchor on (seed 002 §3.3):
 * fixture A without its dummy_task (t5) and predicated_skip (t7)
 * records, then also without its orchestrator records (alloc t0), then
 * with a deps.json naming tasks the records do not have: one warning
 * line each, counting the pairs left without an arrow and naming the
 * tasks by kind. */
static void test_unanchored_warning(void **state)
{
	(void)state;
	char out[1200];
	struct sl_perf_data pd;
	struct sl_deps dp;
	char *tmp = read_fixture_a(&pd, &dp, out, sizeof(out));
	uint64_t flows;

	/* Complete records: no warning (every pair has its arrow). */
	char *e = convert_err(&pd, &dp, out, &flows);
	assert_string_equal(e, "");
	assert_int_equal(flows, 10);
	free(e);

	/* Without the two markers. */
	size_t removed = 0;
	for (size_t ti = 0; ti < pd.n_sched; ti++) {
		struct sl_phase_list *l = &pd.sched[ti];
		size_t k = 0;
		for (size_t i = 0; i < l->n; i++) {
			if (l->v[i].kind == SL_PH_DUMMY_TASK || l->v[i].kind == SL_PH_PREDICATED_SKIP)
				removed++;
			else
				l->v[k++] = l->v[i];
		}
		l->n = k;
	}
	assert_int_equal(removed, 2);
	e = convert_err(&pd, &dp, out, &flows);
	assert_string_equal(e,
		"Warning: dummy(t5) has no dummy_task scheduler record; its Worker View bar "
		"cannot be rendered.\n"
		"Warning: 3 of 8 producer-consumer pairs of deps.json have no dependency arrow, "
		"for 2 tasks with no record to anchor on: 1 dummy task without a dummy_task "
		"record (t5); 1 task without task rows or a predicated_skip record (t7); the "
		"records hold no dummy_task / predicated_skip marker at all (the run had no "
		"such task: is deps.json from another run?)\n");
	/* (4,5) had two arrows: MIX t4 anchors on its AIC and its AIV row */
	assert_int_equal(flows, 10 - 2 - 1 - 1);
	free(e);

	/* ... and without orchestrator records: no alloc bar for t0 either. */
	size_t n_orch = pd.n_orch;
	pd.n_orch = 0;
	e = convert_err(&pd, &dp, out, &flows);
	assert_string_equal(e,
		"note: 4 of 8 producer-consumer pairs of deps.json have no dependency arrow, "
		"for 3 tasks with no record to anchor on: 1 dummy task without a dummy_task "
		"record (t5); 1 task without task rows or a predicated_skip record (t7); "
		"1 alloc_tensors task (not in deps.json tasks[]) without an orch_submit record "
		"(t0); the records hold no dummy_task / predicated_skip marker at all (a5sim "
		"host_build_graph writes none); alloc bars need level-4 orchestrator records, "
		"which host_build_graph does not write\n");
	assert_int_equal(flows, 10 - 2 - 1 - 1 - 1);
	free(e);

	/* Level 3 (no orchestrator records at any runtime): it cannot tell
	 * host_build_graph from another run's deps.json, and says both. */
	const int level = pd.level;
	pd.level = 3;
	e = convert_err(&pd, &dp, out, &flows);
	assert_non_null(strstr(e, "; the records hold no dummy_task / predicated_skip marker at "
				  "all (a5sim host_build_graph writes none; any other run had no "
				  "such task: is deps.json from another run?); alloc bars need "
				  "level-4 orchestrator records and the records are level 3\n"));
	free(e);
	pd.level = level;
	pd.n_orch = n_orch;
	sl_deps_free(&dp);

	/* Five successors the records never ran: three named, then "...". */
	static const char five[] =
		"{\"tasks\":[{\"task_id\":1,\"kernel_ids\":[0,-1,-1]},"
		"{\"task_id\":100,\"kernel_ids\":[0,-1,-1]},{\"task_id\":101,\"kernel_ids\":[0,-1,-1]},"
		"{\"task_id\":102,\"kernel_ids\":[0,-1,-1]},{\"task_id\":103,\"kernel_ids\":[0,-1,-1]},"
		"{\"task_id\":104,\"kernel_ids\":[0,-1,-1]}],"
		"\"edges\":[{\"pred\":1,\"succ\":104},{\"pred\":1,\"succ\":100},{\"pred\":1,\"succ\":103},"
		"{\"pred\":1,\"succ\":101},{\"pred\":1,\"succ\":102},{\"pred\":1,\"succ\":102}]}";
	assert_int_equal(sl_read_deps_mem("five.json", (const uint8_t *)five, strlen(five), &dp), 0);
	e = convert_err(&pd, &dp, out, &flows);
	assert_string_equal(e,
		"Warning: 5 of 5 producer-consumer pairs of deps.json have no dependency arrow, "
		"for 5 tasks with no record to anchor on: 5 tasks without task rows or a "
		"predicated_skip record (t100, t101, t102, ...); the records hold no dummy_task / "
		"predicated_skip marker at all (the run had no such task: is deps.json from "
		"another run?)\n");
	free(e);
	sl_deps_free(&dp);
	sl_perf_data_free(&pd);
	uh_rm_rf(tmp);
}

/* A mapped name longer than the label buffer used to be (4096 bytes): the
 * label keeps the whole name and its task id. */
static void test_long_name_label(void **state)
{
	(void)state;
	char out[1200];
	struct sl_perf_data pd;
	struct sl_deps dp;
	char *tmp = read_fixture_a(&pd, &dp, out, sizeof(out));
	static char big[6001];
	memset(big, 'Q', 6000);
	int64_t ids[5] = {0, 1, 2, 3, 4};
	char *names[5] = {"a", "b", "c", big, "e"};
	struct sl_name_map nm = {.n = 5, .func_id = ids, .name = names};
	FILE *null = fopen("/dev/null", "w");
	assert_non_null(null);
	struct sl_trace_opts o = {.output_path = out, .out = null, .err = null};
	assert_int_equal(sl_trace_generate(&pd, &dp, &nm, &o, NULL), 0);
	fclose(null);
	char *j = slurp(out);
	assert_non_null(j);
	const char *q = strstr(j, big);
	assert_non_null(q);
	/* the name whole, then "(t4)" (the MIX task of func 3) */
	assert_true(q[6000] == '(' && !strncmp(q + 6001, "t4)\"", 4));
	free(j);
	sl_deps_free(&dp);
	sl_perf_data_free(&pd);
	uh_rm_rf(tmp);
}

/* Teardown of the tests that fail thread creations: a failed check
 * leaves the test point on, which later tests must not inherit. */
static int threads_back(void **state)
{
	(void)state;
	tp_thread_test_fail_start(0, 0);
	return 0;
}

/* No thread can be started (the thread limit, ulimit -u, reached): a
 * threaded writer writes on the calling thread instead, the same bytes
 * through several buffer hand-offs; jw_init() used to fail with -EAGAIN,
 * which the converter reported as a bare "Error: ". */
static void test_json_writer_no_thread(void **state)
{
	(void)state;
	char *tmp = uh_mkdtemp();
	assert_non_null(tmp);
	char path[600], *want = NULL;
	size_t want_len = 0;
	snprintf(path, sizeof(path), "%s/nothread.json", tmp);
	FILE *f = fopen(path, "w");
	FILE *m = open_memstream(&want, &want_len);
	assert_non_null(f);
	assert_non_null(m);
	for (int pass = 0; pass < 2; pass++) {
		struct jw w;
		tp_thread_test_fail_start(pass == 0 ? 1 : 0, EAGAIN);
		assert_int_equal(jw_init(&w, pass ? m : f, JW_COMPACT, pass == 0), 0);
		assert_false(w.threaded);
		assert_false(jw_set_direct(&w)); /* a threaded writer's only */
		jw_obj_begin(&w);
		jw_key(&w, "traceEvents");
		jw_arr_begin(&w);
		for (int i = 0; i < 300000; i++) {
			char *p = jw_ev_begin(&w, 64);
			p += sprintf(p, "{\"i\":%d,\"pad\":\"%.*s\"}", i, i % 23,
				     "abcdefghijklmnopqrstuvw");
			jw_ev_end(&w, p);
		}
		jw_arr_end(&w);
		jw_obj_end(&w);
		assert_int_equal(jw_fini(&w), 0);
	}
	tp_thread_test_fail_start(0, 0);
	fclose(f);
	fclose(m);
	char *got = slurp(path);
	assert_non_null(got);
	assert_true(want_len > (8u << 20)); /* past two 4 MiB buffers */
	assert_int_equal(strlen(got), want_len);
	assert_memory_equal(got, want, want_len);
	free(got);
	free(want);
	uh_rm_rf(tmp);
}

/* `taskprof swimlane` on fixture A, its stdout sent to /dev/null and its
 * stderr into @err (@cap bytes). Return: the exit code. */
static int convert_quiet(const char *out, char *err, size_t cap)
{
	char rec[1200];
	snprintf(rec, sizeof(rec),
		 "%s/tests/conformance/fixtures/swimlane-probe/A_level4_full/l2_swimlane_records.json",
		 tree);
	char *argv[] = { "taskprof swimlane", rec, "-o", (char *)out, NULL };
	fflush(stdout);
	int saved = dup(STDOUT_FILENO), nul = open("/dev/null", O_WRONLY);
	assert_true(saved >= 0 && nul >= 0);
	dup2(nul, STDOUT_FILENO);
	close(nul);
	struct uh_capture c;
	assert_int_equal(uh_capture_stderr_begin(&c), 0);
	int code = sl_convert_main(4, argv);
	fflush(stdout);
	char *e = uh_capture_stderr_end(&c);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	snprintf(err, cap, "%s", e ? e : "(no stderr)");
	free(e);
	return code;
}

/* The whole conversion with no thread to be had: the deps reader and
 * the writer work on the calling thread, the trace and the messages are
 * those of a conversion with threads. */
static void test_convert_no_threads(void **state)
{
	(void)state;
	char *tmp = uh_mkdtemp();
	assert_non_null(tmp);
	char a[600], b[600], ea[4096], eb[4096];
	snprintf(a, sizeof(a), "%s/threads.json", tmp);
	snprintf(b, sizeof(b), "%s/nothreads.json", tmp);
	assert_int_equal(convert_quiet(a, ea, sizeof(ea)), 0);
	tp_thread_test_fail_start(1, EAGAIN);
	int code = convert_quiet(b, eb, sizeof(eb));
	tp_thread_test_fail_start(0, 0);
	assert_string_equal(eb, ea);
	assert_int_equal(code, 0);
	char *ja = slurp(a), *jb = slurp(b);
	assert_non_null(ja);
	assert_non_null(jb);
	assert_true(strlen(ja) > 1000);
	assert_string_equal(jb, ja);
	free(ja);
	free(jb);
	uh_rm_rf(tmp);
}

/* An output path in a missing directory: an error naming it, no crash. */
static void test_output_error(void **state)
{
	(void)state;
	char rec[1200];
	snprintf(rec, sizeof(rec),
		 "%s/tests/conformance/fixtures/swimlane-probe/C_level1_v2rows/l2_swimlane_records.json",
		 tree);
	struct sl_perf_data pd;
	assert_int_equal(sl_read_perf_data(rec, &pd), 0);
	FILE *nul = fopen("/dev/null", "w");
	struct sl_trace_opts o = {.output_path = "/nonexistent-dir/x/merged.json", .out = nul,
				  .err = nul};
	int rc = sl_trace_generate(&pd, NULL, NULL, &o, NULL);
	assert_true(rc < 0);
	assert_non_null(strstr(tp_last_error(), "/nonexistent-dir/x/merged.json"));
	fclose(nul);
	sl_perf_data_free(&pd);
}

int main(void)
{
	snprintf(tree, sizeof(tree), "%s", __FILE__);
	for (int up = 0; up < 3; up++) {
		char *s = strrchr(tree, '/');
		if (s)
			*s = '\0';
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_double_repr),
		cmocka_unit_test(test_fmt_double_fast_path),
		cmocka_unit_test(test_fmt_double_exact_path),
		cmocka_unit_test(test_func_tag),
		cmocka_unit_test(test_task_label),
		cmocka_unit_test(test_json_writer),
		cmocka_unit_test(test_json_writer_events),
		cmocka_unit_test(test_json_writer_fragment),
		cmocka_unit_test(test_json_writer_fragment_long_string),
		cmocka_unit_test(test_json_writer_direct),
		cmocka_unit_test_teardown(test_json_writer_no_thread, threads_back),
		cmocka_unit_test_teardown(test_convert_no_threads, threads_back),
		cmocka_unit_test(test_fixture_a_end_to_end),
		cmocka_unit_test(test_long_name_label),
		cmocka_unit_test(test_unanchored_warning),
		cmocka_unit_test(test_output_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
