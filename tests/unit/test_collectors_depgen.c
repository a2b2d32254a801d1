/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of dep_gen (collectors/depgen/, worker/run_depgen.c;
 * spec/swimlane-format.md §3.1, §3.4):
 *  - tensor_id is FNV-1a 64 of (buffer_addr, version);
 *  - the name map is byte-exact json.dump(indent=2), escaped like Python,
 *    named name_map_<safe label>.json, absent without names;
 *  - synthetic on a2a3sim / a5sim x TRB / HBG: deps.json is compact (one
 *    line, string u64s, key order), one task per submit, the dummy, the
 *    SPMD task (block_num 128) and the MIX task are right, every edge
 *    joins known tasks and carries its tensor fields;
 *  - a probe callable gives exactly the edges its orchestration implies:
 *    creator (alloc_tensors, OUTPUT), tensormap other, explicit;
 *  - paged attention CaseSmall1: the edge set derived from the case's
 *    structure (exact under HBG; creator edges exact and tensormap edges
 *    a subset under TRB, where a retired producer is no longer an edge);
 *  - 24k-task runs and a 60k-task direct stream reconcile with 0 dropped;
 *    a lost record makes the export fail and leaves no deps.json.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "collectors/depgen/depgen.h"
#include "examples/paged_attention/pa_callable.h"
#include "examples/paged_attention/pa_inputs.h"
#include "examples/paged_attention/pa_kernels.h"
#include "examples/synthetic/syn_callable.h"
#include "runtime/orch.h"
#include "taskprof/case.h"
#include "taskprof/taskprof.h"
#include "taskprof/worker.h"
#include "tools/swimlane/perf_data.h"
#include "transport/profiler.h"
#include "unit_helpers.h"
#include "worker/run_depgen.h"

static char *g_root;

/* ---- helpers ----------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = 0;
	fclose(f);
	if (len)
		*len = (size_t)n;
	return b;
}

static bool exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* A u64 field: must be a JSON string of digits. */
static uint64_t u64s(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_string(v))
		fail_msg("field '%s' is not a string", key);
	char *end;
	const char *s = json_string_value(v);
	uint64_t x = strtoull(s, &end, 10);
	assert_true(*s && !*end);
	return x;
}

static void expect_keys(json_t *o, const char *const *keys, size_t n)
{
	size_t i = 0;
	for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it), i++) {
		assert_true(i < n);
		assert_string_equal(json_object_iter_key(it), keys[i]);
	}
	assert_int_equal(i, n);
}

static void expect_dims(json_t *a, const uint32_t *v, unsigned n)
{
	assert_true(json_is_array(a));
	assert_int_equal(json_array_size(a), n);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(json_integer_value(json_array_get(a, i)), v[i]);
}

static int run_dep(const struct tp_callable *cal, const char *case_name, const char *platform,
		   const char *runtime, int early, struct tp_run_result *r)
{
	struct tp_worker_config cfg = { .platform = platform, .runtime = runtime,
					.output_root = g_root, .dep_gen = true,
					.early_dispatch = early };
	struct tp_worker *w = tp_worker_open(&cfg);
	assert_non_null(w);
	alarm(120);
	int rc = tp_worker_run(w, cal, case_name, r);
	alarm(0);
	tp_worker_close(w);
	if (rc)
		printf("run: %s\n", tp_last_error());
	return rc;
}

/* Parsed deps.json plus the byte-level checks of spec §3.1. */
struct deps {
	json_t *root, *tasks, *tensors, *edges;
};

static void load_deps(const char *dir, struct deps *d)
{
	char path[4300];
	size_t len;
	snprintf(path, sizeof(path), "%s/deps.json", dir);
	char *buf = slurp(path, &len);
	assert_non_null(buf);
	/* Compact: one line, no spaces, trailing newline, key order. */
	assert_true(len > 2 && buf[len - 1] == '\n');
	assert_ptr_equal(strchr(buf, '\n'), buf + len - 1);
	assert_null(strchr(buf, ' '));
	assert_int_equal(strncmp(buf, "{\"tasks\":[", 10), 0);
	char *tn = strstr(buf, "],\"tensors\":["), *ed = strstr(buf, "],\"edges\":[");
	assert_non_null(tn);
	assert_non_null(ed);
	assert_true(tn < ed);
	assert_int_equal(strcmp(buf + len - 3, "]}\n"), 0);
	json_error_t err;
	d->root = json_loadb(buf, len, 0, &err);
	if (!d->root)
		fail_msg("deps.json: %s at line %d", err.text, err.line);
	free(buf);
	d->tasks = json_object_get(d->root, "tasks");
	d->tensors = json_object_get(d->root, "tensors");
	d->edges = json_object_get(d->root, "edges");
	assert_true(json_is_array(d->tasks) && json_is_array(d->tensors) &&
		    json_is_array(d->edges));
}

static json_t *find_task(struct deps *d, uint64_t id)
{
	size_t i;
	json_t *t;
	json_array_foreach(d->tasks, i, t)
		if (u64s(t, "task_id") == id)
			return t;
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * Structure checks shared by every run: task key order, no duplicate
 * ids, args / tensors / edges fields, tensor ids = FNV of (addr, version),
 * every edge's succ a task and its pred a task or (creator only) an alloc.
 */
static void check_structure(struct deps *d)
{
	static const char *const tkeys[] = { "task_id", "scope", "early_dispatch", "kernel_ids",
					     "block_num", "args" };
	static const char *const nkeys[] = { "tensor_id", "buffer_addr", "version", "dtype",
					     "buffer_numel" };
	size_t n = json_array_size(d->tasks), i;
	json_t *t;
	uint64_t *ids = calloc(n + 1, sizeof(*ids));
	assert_non_null(ids);
	json_array_foreach(d->tasks, i, t) {
		expect_keys(t, tkeys, 6);
		ids[i] = u64s(t, "task_id");
		assert_true(json_is_boolean(json_object_get(t, "early_dispatch")));
		assert_true(json_array_size(json_object_get(t, "kernel_ids")) == 3);
		assert_true(json_integer_value(json_object_get(t, "block_num")) >= 1);
		size_t k;
		json_t *a;
		json_array_foreach(json_object_get(t, "args"), k, a) {
			assert_int_equal(json_integer_value(json_object_get(a, "idx")), k);
			const char *ty = json_string_value(json_object_get(a, "type"));
			assert_non_null(ty);
			if (!strcmp(ty, "OUTPUT")) {
				assert_int_equal(json_object_size(a), 2);
			} else {
				static const char *const akeys[] = { "idx", "type", "tensor_id",
								     "dtype", "shape",
								     "start_offset", "strides" };
				expect_keys(a, akeys, 7);
				u64s(a, "tensor_id");
				u64s(a, "start_offset");
			}
		}
	}
	qsort(ids, n, sizeof(*ids), cmp_u64);
	for (i = 1; i < n; i++)
		assert_true(ids[i] != ids[i - 1]);
	json_array_foreach(d->tensors, i, t) {
		expect_keys(t, nkeys, 5);
		uint64_t addr = u64s(t, "buffer_addr");
		uint32_t ver = (uint32_t)json_integer_value(json_object_get(t, "version"));
		/* FNV-1a 64 over the 12 bytes in host (little-endian) order. */
		unsigned char bytes[12];
		memcpy(bytes, &addr, 8);
		memcpy(bytes + 8, &ver, 4);
		uint64_t h = 0xcbf29ce484222325ull;
		for (int b = 0; b < 12; b++)
			h = (h ^ bytes[b]) * 0x100000001b3ull;
		assert_true(u64s(t, "tensor_id") == h);
		u64s(t, "buffer_numel");
	}
	json_array_foreach(d->edges, i, t) {
		uint64_t succ = u64s(t, "succ"), pred = u64s(t, "pred");
		const char *src = json_string_value(json_object_get(t, "source"));
		assert_non_null(src);
		assert_non_null(bsearch(&succ, ids, n, sizeof(*ids), cmp_u64));
		bool pred_known = bsearch(&pred, ids, n, sizeof(*ids), cmp_u64) != NULL;
		/* Only an alloc_tensors task is absent, and only as a creator. */
		assert_true(pred_known || !strcmp(src, "creator"));
		if (!strcmp(src, "explicit")) {
			static const char *const k[] = { "pred", "succ", "arg", "source" };
			expect_keys(t, k, 4);
			assert_int_equal(json_integer_value(json_object_get(t, "arg")), -1);
			continue;
		}
		if (!strcmp(src, "creator")) {
			static const char *const k[] = { "pred", "succ", "arg", "source", "tensor_id",
							 "consumer_dtype", "consumer_shape",
							 "consumer_start_offset", "consumer_strides" };
			expect_keys(t, k, 9);
		} else {
			assert_string_equal(src, "tensormap");
			static const char *const k[] = {
				"pred", "succ", "arg", "source", "overlap", "tensor_id",
				"consumer_dtype", "consumer_shape", "consumer_start_offset",
				"consumer_strides", "producer_shape", "producer_start_offset",
				"producer_strides"
			};
			expect_keys(t, k, 13);
			const char *ov = json_string_value(json_object_get(t, "overlap"));
			assert_true(!strcmp(ov, "covered") || !strcmp(ov, "other"));
			u64s(t, "producer_start_offset");
		}
		u64s(t, "consumer_start_offset");
		/* The edge's tensor is the consumer's argument `arg`. */
		json_t *ct = find_task(d, succ);
		json_t *ca = json_array_get(json_object_get(ct, "args"),
					    (size_t)json_integer_value(json_object_get(t, "arg")));
		assert_non_null(ca);
		assert_true(u64s(ca, "tensor_id") == u64s(t, "tensor_id"));
		assert_true(json_equal(json_object_get(ca, "shape"),
				       json_object_get(t, "consumer_shape")));
		assert_string_equal(json_string_value(json_object_get(ca, "dtype")),
				    json_string_value(json_object_get(t, "consumer_dtype")));
	}
	free(ids);
}

static int kid(json_t *t, int i)
{
	return (int)json_integer_value(json_array_get(json_object_get(t, "kernel_ids"), (size_t)i));
}

/* ---- tensor id ---------------------------------------------------------- */

static void test_tensor_id(void **state)
{
	(void)state;
	/* FNV-1a of 12 zero bytes, computed by hand: offset basis times the
	 * prime, 12 times (x ^ 0 == x). */
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < 12; i++)
		h *= 0x100000001b3ull;
	assert_true(dg_tensor_id(0, 0) == h);
	/* Byte order: addr first (LE), then version (LE). */
	uint64_t h2 = 0xcbf29ce484222325ull;
	const unsigned char b[12] = { 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
				      0x02, 0x01, 0, 0 };
	for (int i = 0; i < 12; i++)
		h2 = (h2 ^ b[i]) * 0x100000001b3ull;
	assert_true(dg_tensor_id(0x1122334455667788ull, 0x0102) == h2);
	assert_true(dg_tensor_id(0x1122334455667788ull, 0x0102) !=
		    dg_tensor_id(0x1122334455667788ull, 0x0201));
	assert_string_equal(dg_dtype_name(DG_BFLOAT16), "BFLOAT16");
	assert_string_equal(dg_dtype_name(200), "UNKNOWN");
}

/* ---- name map ----------------------------------------------------------- */

static void test_name_map_exact(void **state)
{
	(void)state;
	static const struct tp_case_kernel ks[] = {
		{ .func_id = 1, .name = "SF", .core_type = TP_CASE_AIV },
		{ .func_id = 0, .name = "QK", .core_type = TP_CASE_AIC },
		{ .func_id = 2, .name = NULL, .core_type = TP_CASE_AIC },
		{ .func_id = 3, .name = "q\"\\\xc3\xa9\n", .core_type = TP_CASE_AIV },
	};
	struct tp_callable cal = { .name = "Paged Attn", .orch_name = "PagedAttn",
				   .kernels = ks, .n_kernels = 4 };
	char path[4300];
	assert_int_equal(wk_write_name_map(g_root, &cal, "Case/1", path, sizeof(path)), 0);
	char want[4300];
	snprintf(want, sizeof(want), "%s/name_map_Paged_Attn_Case_1.json", g_root);
	assert_string_equal(path, want);
	char *got = slurp(path, NULL);
	assert_non_null(got);
	/* Python: json.dump({"level": 2, "orchestrator_name": "PagedAttn",
	 * "callable_id_to_name": {"1": "SF", "0": "QK", "3": 'q"\\é\n'}},
	 * f, indent=2) */
	assert_string_equal(got, "{\n"
				 "  \"level\": 2,\n"
				 "  \"orchestrator_name\": \"PagedAttn\",\n"
				 "  \"callable_id_to_name\": {\n"
				 "    \"1\": \"SF\",\n"
				 "    \"0\": \"QK\",\n"
				 "    \"3\": \"q\\\"\\\\\\u00e9\\n\"\n"
				 "  }\n"
				 "}");
	free(got);

	/* No kernel names: callable_id_to_name omitted, orch name kept. */
	static const struct tp_case_kernel anon[] = { { .func_id = 0 } };
	struct tp_callable c2 = { .name = "x", .orch_name = "Orch", .kernels = anon,
				  .n_kernels = 1 };
	assert_int_equal(wk_write_name_map(g_root, &c2, "c", path, sizeof(path)), 0);
	got = slurp(path, NULL);
	assert_string_equal(got, "{\n  \"level\": 2,\n  \"orchestrator_name\": \"Orch\"\n}");
	free(got);
	/* Kernel names, no orch name: null. */
	struct tp_callable c3 = { .name = "y", .kernels = ks, .n_kernels = 1 };
	assert_int_equal(wk_write_name_map(g_root, &c3, "c", path, sizeof(path)), 0);
	got = slurp(path, NULL);
	assert_string_equal(got, "{\n  \"level\": 2,\n  \"orchestrator_name\": null,\n"
				 "  \"callable_id_to_name\": {\n    \"1\": \"SF\"\n  }\n}");
	free(got);
	/* No name at all: no file. */
	struct tp_callable c4 = { .name = "z", .kernels = anon, .n_kernels = 1 };
	assert_int_equal(wk_write_name_map(g_root, &c4, "c", path, sizeof(path)), 0);
	assert_string_equal(path, "");
	snprintf(want, sizeof(want), "%s/name_map_z_c.json", g_root);
	assert_false(exists(want));
	/* A 240-byte callable name: the label is cut to 159 bytes as the run
	 * folder's name is, so the file name fits in 255 bytes. */
	static char longname[241];
	memset(longname, 'c', 240);
	struct tp_callable c5 = { .name = longname, .kernels = ks, .n_kernels = 1 };
	assert_int_equal(wk_write_name_map(g_root, &c5, "Default", path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/name_map_%.159s.json", g_root, longname);
	assert_string_equal(path, want);
	assert_true(exists(want));
}

/* ---- synthetic on both platforms and runtimes ---------------------------- */

static void run_synthetic(const char *platform, const char *runtime)
{
	struct tp_run_result r;
	assert_int_equal(run_dep(&syn_callable, NULL, platform, runtime, 0, &r), 0);
	assert_true(r.pass);
	assert_true(r.dep_gen);
	struct deps d;
	load_deps(r.output_dir, &d);
	check_structure(&d);
	/* One alloc_tensors in synthetic (the last piece): a task of the run
	 * but no tasks[] entry, only the pred of creator edges. */
	assert_int_equal(json_array_size(d.tasks), SYN_TASKS - 1);
	assert_int_equal(r.tasks, SYN_TASKS);
	assert_int_equal(r.dep_tasks, SYN_TASKS - 1);
	assert_int_equal(r.dep_edges, json_array_size(d.edges));
	int dummies = 0, spmd = 0, mix = 0, early = 0;
	size_t i;
	json_t *t;
	json_array_foreach(d.tasks, i, t) {
		int bn = (int)json_integer_value(json_object_get(t, "block_num"));
		bool e = json_is_true(json_object_get(t, "early_dispatch"));
		assert_string_equal(json_string_value(json_object_get(t, "scope")), "auto");
		early += e;
		if (kid(t, 0) < 0 && kid(t, 1) < 0 && kid(t, 2) < 0) {
			dummies++;
			assert_false(e);
			/* The join: two INPUTs and one INOUT. */
			assert_int_equal(json_array_size(json_object_get(t, "args")), 3);
		}
		if (bn != 1) {
			spmd++;
			assert_int_equal(bn, SYN_SPMD_BLOCKS);
			assert_int_equal(kid(t, 1), SYN_FUNC_BLOCK);
			assert_false(e);
		}
		if (kid(t, 0) >= 0 && (kid(t, 1) >= 0 || kid(t, 2) >= 0)) {
			mix++;
			assert_int_equal(kid(t, 0), SYN_FUNC_MIX_C);
			assert_int_equal(kid(t, 1), SYN_FUNC_MIX_V0);
			assert_int_equal(kid(t, 2), SYN_FUNC_MIX_V1);
			assert_int_equal(bn, 1);
			assert_false(e);
		}
	}
	assert_int_equal(dummies, 1);
	assert_int_equal(spmd, 1);
	assert_int_equal(mix, 1);
	assert_true(early > 0); /* synthetic asks for early dispatch */
	/* The fan-out: SET then 512 ADDS reading its element: 512 covered
	 * tensormap edges from one producer; the chain: 999 covered ones.
	 * The alloc piece: creator edges alloc → SET and alloc → ADDS, the
	 * only non-tensormap edges; the alloc id is no tasks[] entry. */
	size_t covered = 0, creator = 0, ne = json_array_size(d.edges);
	uint64_t *preds = calloc(ne + 1, sizeof(*preds));
	assert_non_null(preds);
	uint64_t alloc_id = 0;
	json_array_foreach(d.edges, i, t) {
		const char *src = json_string_value(json_object_get(t, "source"));
		preds[i] = u64s(t, "pred");
		if (!strcmp(src, "creator")) {
			if (creator++)
				assert_true(preds[i] == alloc_id);
			alloc_id = preds[i];
			assert_true(u64s(t, "succ") > alloc_id);
			continue;
		}
		assert_string_equal(src, "tensormap");
		covered += !strcmp(json_string_value(json_object_get(t, "overlap")), "covered");
	}
	assert_int_equal(creator, 2);
	json_array_foreach(d.tasks, i, t)
		assert_true(u64s(t, "task_id") != alloc_id);
	qsort(preds, ne, sizeof(*preds), cmp_u64);
	size_t best = 0;
	for (size_t k = 0, run = 0; k < ne; k++) {
		run = k && preds[k] == preds[k - 1] ? run + 1 : 1;
		best = run > best ? run : best;
	}
	free(preds);
	assert_int_equal(best, SYN_FANOUT);
	assert_true(covered >= SYN_FANOUT + SYN_CHAIN - 1);
	printf("%s %s: %zu tasks, %zu tensors, %zu edges (%zu covered)\n", platform, runtime,
	       json_array_size(d.tasks), json_array_size(d.tensors), json_array_size(d.edges),
	       covered);
	/* The name map sits beside it. */
	char nm[4300];
	snprintf(nm, sizeof(nm), "%s/name_map_synthetic_Default.json", r.output_dir);
	assert_true(exists(nm));
	assert_string_equal(r.name_map, nm);
	/* The converter's own readers take both files (spec §3.3). */
	char dp[4300];
	snprintf(dp, sizeof(dp), "%s/deps.json", r.output_dir);
	struct sl_deps sd;
	assert_int_equal(sl_read_deps(dp, &sd), 0);
	assert_true(sd.has_edges);
	assert_int_equal(sd.n_tasks, SYN_TASKS - 1);
	assert_true(sd.n_edges > 0 && sd.n_edges <= json_array_size(d.edges));
	json_array_foreach(d.tasks, i, t)
		assert_int_equal(sl_deps_block_num(&sd, u64s(t, "task_id")),
				 json_integer_value(json_object_get(t, "block_num")));
	sl_deps_free(&sd);
	struct sl_name_map m;
	assert_int_equal(sl_read_name_map(nm, &m), 0);
	assert_string_equal(sl_name_map_get(&m, SYN_FUNC_MIX_C), syn_kernels[SYN_FUNC_MIX_C].name);
	sl_name_map_free(&m);
	json_decref(d.root);
}

static void test_synthetic_a2a3_trb(void **s)
{
	(void)s;
	run_synthetic("a2a3sim", TP_RUNTIME_TRB);
}

static void test_synthetic_a5_trb(void **s)
{
	(void)s;
	run_synthetic("a5sim", TP_RUNTIME_TRB);
}

static void test_synthetic_a2a3_hbg(void **s)
{
	(void)s;
	run_synthetic("a2a3sim", TP_RUNTIME_HBG);
}

static void test_synthetic_a5_hbg(void **s)
{
	(void)s;
	run_synthetic("a5sim", TP_RUNTIME_HBG);
}

/* ---- the probe callable: every edge source --------------------------------- */

static struct {
	tp_task_id t1, t2, a, t4, t5, t6, t7, t8;
} g_probe;

enum { PROBE_V = 0, PROBE_C = 1 };

static int probe_orch(struct tp_orch *o, const struct tp_case_args *args)
{
	struct tp_tensor x, y, xv, acc, out4;
	const uint32_t n8 = 8, n4 = 4, off0 = 0;
	struct tp_task_args a;
	int rc;
	if ((rc = tp_tensor_make_contiguous(&x, (uintptr_t)args->tensors[0].data, TP_INT32, 1,
					    &n8)) ||
	    (rc = tp_tensor_make_contiguous(&y, (uintptr_t)args->tensors[1].data, TP_INT32, 1,
					    &n8)) ||
	    (rc = tp_tensor_view(&x, &n4, &off0, &xv)))
		return rc;
	tp_args_init(&a); /* T1 writes all of x */
	tp_args_add_output_existing(&a, &x);
	if ((rc = tp_submit_aiv(o, PROBE_V, &a, &g_probe.t1)))
		return rc;
	tp_args_init(&a); /* T2 reads half of x: tensormap, other */
	tp_args_add_input(&a, &xv);
	tp_args_add_output_existing(&a, &y);
	if ((rc = tp_submit_aiv(o, PROBE_V, &a, &g_probe.t2)))
		return rc;
	const struct tp_tensor_create ci = { TP_FP32, 1, { 4 } };
	if ((rc = tp_alloc_tensors(o, 1, &ci, &acc, &g_probe.a)))
		return rc;
	tp_args_init(&a); /* T4 reads the alloc (creator), makes an OUTPUT */
	tp_args_add_input(&a, &acc);
	tp_args_add_output(&a, TP_FP32, 1, &n4);
	if ((rc = tp_submit_aic(o, PROBE_C, &a, &g_probe.t4)))
		return rc;
	out4 = a.tensors[1];
	tp_args_init(&a); /* T5: explicit T2, creator T4, NO_DEP x */
	tp_args_set_dependencies(&a, &g_probe.t2, 1);
	tp_args_add_input(&a, &out4);
	tp_args_add_no_dep(&a, &x);
	if ((rc = tp_submit_aiv(o, PROBE_V, &a, &g_probe.t5)))
		return rc;
	tp_args_init(&a); /* T6: a dummy with two explicit deps */
	const tp_task_id deps[2] = { g_probe.t5, g_probe.t1 };
	tp_args_set_dependencies(&a, deps, 2);
	if ((rc = tp_submit_dummy(o, &a, &g_probe.t6)))
		return rc;
	/* T7 in a MANUAL scope: INOUT x would find T1 and register itself;
	 * here only its explicit dependency on T2 counts. */
	if ((rc = tp_scope_begin_manual(o)))
		return rc;
	tp_args_init(&a);
	tp_args_set_dependencies(&a, &g_probe.t2, 1);
	tp_args_add_inout(&a, &x);
	if ((rc = tp_submit_aiv(o, PROBE_V, &a, &g_probe.t7)) || (rc = tp_scope_end(o)))
		return rc;
	tp_args_init(&a); /* T8 reads x: T1's entry (T7 inserted none) */
	tp_args_add_input(&a, &x);
	return tp_submit_aiv(o, PROBE_V, &a, &g_probe.t8);
}

static int probe_generate(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	memset(args, 0, sizeof(*args));
	args->n_tensors = 2;
	for (int i = 0; i < 2; i++) {
		args->tensors[i] = (struct tp_case_tensor){
			.name = i ? "y" : "x", .data = calloc(8, sizeof(int32_t)),
			.bytes = 8 * sizeof(int32_t), .dtype = TP_INT32, .ndims = 1,
			.shape = { 8 },
		};
		if (!args->tensors[i].data)
			return -ENOMEM;
	}
	return 0;
}

static void probe_release(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	for (uint32_t i = 0; i < args->n_tensors; i++)
		free(args->tensors[i].data);
}

static const struct tp_case_kernel probe_kernels[] = {
	{ .func_id = PROBE_V, .name = "PV_PROBE", .core_type = TP_CASE_AIV },
	{ .func_id = PROBE_C, .name = "PC_PROBE", .core_type = TP_CASE_AIC },
};
static const struct tp_case probe_cases[] = {
	{ .name = "one", .generate = probe_generate, .release = probe_release },
};
static const struct tp_callable probe_callable = {
	.name = "probe", .orch_name = "ProbeOrch", .orch = probe_orch,
	.kernels = probe_kernels, .n_kernels = 2, .cases = probe_cases, .n_cases = 1,
	.default_case = "one",
};

static void expect_edge(json_t *e, tp_task_id pred, tp_task_id succ, int arg, const char *src)
{
	assert_true(u64s(e, "pred") == pred);
	assert_true(u64s(e, "succ") == succ);
	assert_int_equal(json_integer_value(json_object_get(e, "arg")), arg);
	assert_string_equal(json_string_value(json_object_get(e, "source")), src);
}

static void run_probe(const char *platform, const char *runtime)
{
	struct tp_run_result r;
	memset(&g_probe, 0, sizeof(g_probe));
	assert_int_equal(run_dep(&probe_callable, NULL, platform, runtime, -1, &r), 0);
	struct deps d;
	load_deps(r.output_dir, &d);
	check_structure(&d);
	/* Seven submits; the alloc_tensors task is not listed. */
	assert_int_equal(json_array_size(d.tasks), 7);
	assert_int_equal(r.tasks, 8);
	assert_null(find_task(&d, g_probe.a));
	json_t *t4 = find_task(&d, g_probe.t4), *t5 = find_task(&d, g_probe.t5);
	json_t *t6 = find_task(&d, g_probe.t6);
	assert_int_equal(kid(t4, 0), PROBE_C);
	assert_int_equal(kid(t4, 1), -1);
	assert_int_equal(kid(t6, 0), -1);
	assert_int_equal(kid(t6, 1), -1);
	assert_int_equal(kid(t6, 2), -1);
	assert_int_equal(json_array_size(json_object_get(t6, "args")), 0);
	json_t *a41 = json_array_get(json_object_get(t4, "args"), 1);
	assert_string_equal(json_string_value(json_object_get(a41, "type")), "OUTPUT");
	assert_int_equal(json_object_size(a41), 2);
	json_t *a51 = json_array_get(json_object_get(t5, "args"), 1);
	assert_string_equal(json_string_value(json_object_get(a51, "type")), "UNKNOWN");
	/* Exactly the edges the orchestration implies, in submit order. */
	assert_int_equal(json_array_size(d.edges), 8);
	json_t *e0 = json_array_get(d.edges, 0);
	expect_edge(e0, g_probe.t1, g_probe.t2, 0, "tensormap");
	assert_string_equal(json_string_value(json_object_get(e0, "overlap")), "other");
	const uint32_t s8 = 8, s4 = 4, one = 1;
	expect_dims(json_object_get(e0, "producer_shape"), &s8, 1);
	expect_dims(json_object_get(e0, "consumer_shape"), &s4, 1);
	expect_dims(json_object_get(e0, "producer_strides"), &one, 1);
	assert_string_equal(json_string_value(json_object_get(e0, "consumer_dtype")), "INT32");
	json_t *e1 = json_array_get(d.edges, 1);
	expect_edge(e1, g_probe.a, g_probe.t4, 0, "creator");
	assert_string_equal(json_string_value(json_object_get(e1, "consumer_dtype")), "FLOAT32");
	expect_edge(json_array_get(d.edges, 2), g_probe.t2, g_probe.t5, -1, "explicit");
	expect_edge(json_array_get(d.edges, 3), g_probe.t4, g_probe.t5, 0, "creator");
	expect_edge(json_array_get(d.edges, 4), g_probe.t5, g_probe.t6, -1, "explicit");
	expect_edge(json_array_get(d.edges, 5), g_probe.t1, g_probe.t6, -1, "explicit");
	expect_edge(json_array_get(d.edges, 6), g_probe.t2, g_probe.t7, -1, "explicit");
	json_t *e7 = json_array_get(d.edges, 7);
	expect_edge(e7, g_probe.t1, g_probe.t8, 0, "tensormap");
	assert_string_equal(json_string_value(json_object_get(e7, "overlap")), "covered");
	size_t i;
	json_t *t;
	json_array_foreach(d.tasks, i, t)
		assert_string_equal(json_string_value(json_object_get(t, "scope")),
				    u64s(t, "task_id") == g_probe.t7 ? "manual" : "auto");
	/* tensors[]: x, y, the alloc buffer, T4's output: 4 unique ones. */
	assert_int_equal(json_array_size(d.tensors), 4);
	json_decref(d.root);
}

static void test_probe_a2a3_trb(void **s)
{
	(void)s;
	run_probe("a2a3sim", TP_RUNTIME_TRB);
}

static void test_probe_a5_hbg(void **s)
{
	(void)s;
	run_probe("a5sim", TP_RUNTIME_HBG);
}

/* ---- paged attention CaseSmall1 ------------------------------------------- */

struct pa_edge {
	uint64_t pred, succ;
	int arg;
	int src; /* 0 creator, 1 tensormap */
};

static int cmp_edge(const void *a, const void *b)
{
	const struct pa_edge *x = a, *y = b;
	if (x->pred != y->pred)
		return x->pred < y->pred ? -1 : 1;
	if (x->succ != y->succ)
		return x->succ < y->succ ? -1 : 1;
	if (x->arg != y->arg)
		return x->arg - y->arg;
	return x->src - y->src;
}

/* The edges pa_orchestration implies, from the case's own shapes: per
 * (b, q) tile an alloc A (oi, li, mi) and per block QK, SF, PV, UP:
 *   QK -> SF arg 0 (sij), SF -> PV arg 0 (pij), SF -> UP args 0, 1 (mij,
 *   lij), PV -> UP arg 2 (oi_new), A -> UP args 3, 4, 5 (creator), and
 *   for bn > 0 the previous UP -> UP args 3..6 (tensormap, covered).
 * Ids: HBG puts everything in ring 0 in submit order; TRB puts A in ring
 * 1 and the blocks in ring 2 (one ring per scope depth). */
static size_t pa_expected(bool hbg, struct pa_edge *out, size_t cap, size_t *n_tasks)
{
	const struct tp_case *cs = tp_callable_case(&pa_callable, "CaseSmall1");
	struct tp_case_args a;
	assert_int_equal(cs->generate(cs, &a), 0);
	const uint32_t B = a.tensors[PA_ARG_QUERY].shape[0], H = a.tensors[PA_ARG_QUERY].shape[1];
	const uint32_t S = a.tensors[PA_ARG_KEY_CACHE].shape[1];
	const int32_t *ctx = a.tensors[PA_ARG_CONTEXT_LENS].data;
	const uint32_t M = H < PA_MAX_Q_TILE ? H : PA_MAX_Q_TILE, q_loop = H / M;
	uint64_t l0 = 0, l1 = 0, l2 = 0;
	size_t n = 0;
	*n_tasks = 0;
#define PA_ID(ring, ctr) (hbg ? (uint64_t)(l0++) : (((uint64_t)(ring) << 32) | (ctr)++))
#define PA_PUT(p, s, ar, sr) \
	do { assert_true(n < cap); out[n++] = (struct pa_edge){ p, s, ar, sr }; } while (0)
	for (uint32_t b = 0; b < B; b++) {
		uint32_t bn_b = ((uint32_t)ctx[b] + S - 1) / S;
		for (uint32_t q = 0; q < q_loop; q++) {
			uint64_t A = PA_ID(1, l1), prev_up = 0;
			for (uint32_t bn = 0; bn < bn_b; bn++) {
				uint64_t qk = PA_ID(2, l2), sf = PA_ID(2, l2), pv = PA_ID(2, l2),
					 up = PA_ID(2, l2);
				*n_tasks += 4;
				PA_PUT(qk, sf, 0, 0);
				PA_PUT(sf, pv, 0, 0);
				PA_PUT(sf, up, 0, 0);
				PA_PUT(sf, up, 1, 0);
				PA_PUT(pv, up, 2, 0);
				for (int k = 3; k <= 5; k++)
					PA_PUT(A, up, k, 0);
				for (int k = 3; bn > 0 && k <= 6; k++)
					PA_PUT(prev_up, up, k, 1);
				prev_up = up;
			}
		}
	}
#undef PA_ID
#undef PA_PUT
	cs->release(cs, &a);
	qsort(out, n, sizeof(*out), cmp_edge);
	return n;
}

static void run_pa(const char *platform, const char *runtime)
{
	const bool hbg = !strcmp(runtime, TP_RUNTIME_HBG);
	struct tp_run_result r;
	assert_int_equal(run_dep(&pa_callable, "CaseSmall1", platform, runtime, 0, &r), 0);
	assert_true(r.pass);
	struct deps d;
	load_deps(r.output_dir, &d);
	check_structure(&d);
	struct pa_edge want[256], got[256];
	size_t n_tasks, nw = pa_expected(hbg, want, 256, &n_tasks);
	assert_int_equal(json_array_size(d.tasks), n_tasks);
	size_t ng = 0, i;
	json_t *e;
	json_array_foreach(d.edges, i, e) {
		const char *src = json_string_value(json_object_get(e, "source"));
		assert_true(ng < 256);
		got[ng++] = (struct pa_edge){ u64s(e, "pred"), u64s(e, "succ"),
					      (int)json_integer_value(json_object_get(e, "arg")),
					      !strcmp(src, "tensormap") };
		if (!strcmp(src, "tensormap"))
			assert_string_equal(json_string_value(json_object_get(e, "overlap")),
					    "covered");
	}
	qsort(got, ng, sizeof(*got), cmp_edge);
	if (hbg) {
		/* Nothing is retired while the graph is built: exactly the set. */
		assert_int_equal(ng, nw);
		for (i = 0; i < nw; i++)
			assert_int_equal(cmp_edge(&got[i], &want[i]), 0);
	} else {
		/* Creator edges: exactly; tensormap edges: those whose producer
		 * was still alive (a subset). */
		size_t nc = 0;
		for (i = 0; i < nw; i++)
			nc += want[i].src == 0;
		size_t gc = 0;
		for (i = 0; i < ng; i++) {
			assert_non_null(bsearch(&got[i], want, nw, sizeof(*want), cmp_edge));
			gc += got[i].src == 0;
		}
		assert_int_equal(gc, nc);
	}
	/* Every kernel task names its func (QK, SF, PV on their slots). */
	json_t *t;
	size_t by_func[PA_FUNC_COUNT] = { 0 };
	json_array_foreach(d.tasks, i, t) {
		int f = kid(t, 0) >= 0 ? kid(t, 0) : kid(t, 1);
		assert_true(f >= 0 && f < PA_FUNC_COUNT);
		by_func[f]++;
	}
	for (int f = 0; f < PA_FUNC_COUNT; f++)
		assert_int_equal(by_func[f], n_tasks / 4);
	json_decref(d.root);
}

static void test_pa_small1_hbg_a2a3(void **s)
{
	(void)s;
	run_pa("a2a3sim", TP_RUNTIME_HBG);
}

static void test_pa_small1_trb_a5(void **s)
{
	(void)s;
	run_pa("a5sim", TP_RUNTIME_TRB);
}

/* ---- a large run: 24k tasks ----------------------------------------------- */

#define LARGE_TASKS 24000u
#define LARGE_SCOPE 1000u

static int large_orch(struct tp_orch *o, const struct tp_case_args *args)
{
	struct tp_tensor x;
	const uint32_t n1 = 1;
	int rc = tp_tensor_make_contiguous(&x, (uintptr_t)args->tensors[0].data, TP_INT32, 1, &n1);
	/* Scopes of LARGE_SCOPE tasks keep a TRB ring window draining. */
	for (uint32_t i = 0; !rc && i < LARGE_TASKS; i++) {
		if (i % LARGE_SCOPE == 0 && (rc = tp_scope_begin(o)))
			break;
		struct tp_task_args a;
		tp_args_init(&a);
		tp_args_add_inout(&a, &x);
		rc = tp_submit_aiv(o, 0, &a, NULL);
		if (!rc && i % LARGE_SCOPE == LARGE_SCOPE - 1)
			rc = tp_scope_end(o);
	}
	return rc;
}

static int large_generate(const struct tp_case *c, struct tp_case_args *args)
{
	(void)c;
	memset(args, 0, sizeof(*args));
	args->n_tensors = 1;
	args->tensors[0] = (struct tp_case_tensor){ .name = "x", .data = calloc(1, 4),
						    .bytes = 4, .dtype = TP_INT32, .ndims = 1,
						    .shape = { 1 } };
	return args->tensors[0].data ? 0 : -ENOMEM;
}

static const struct tp_case_kernel large_kernels[] = {
	{ .func_id = 0, .name = "NOP", .core_type = TP_CASE_AIV },
};
static const struct tp_case large_cases[] = {
	{ .name = "big", .generate = large_generate, .release = probe_release },
};
static const struct tp_callable large_callable = {
	.name = "large", .orch = large_orch, .kernels = large_kernels, .n_kernels = 1,
	.cases = large_cases, .n_cases = 1, .default_case = "big",
};

static void run_large(const char *platform, const char *runtime)
{
	struct tp_run_result r;
	uint64_t t0 = tp_now_ns();
	/* rc 0 with dep_gen means reconcile balanced with 0 dropped. */
	assert_int_equal(run_dep(&large_callable, NULL, platform, runtime, -1, &r), 0);
	assert_true(r.dep_gen);
	assert_int_equal(r.dep_tasks, LARGE_TASKS);
	/* A chain: under HBG every INOUT finds its predecessor. */
	if (!strcmp(runtime, TP_RUNTIME_HBG))
		assert_int_equal(r.dep_edges, LARGE_TASKS - 1);
	else
		assert_true(r.dep_edges <= LARGE_TASKS - 1);
	printf("large %s %s: %" PRIu64 " tasks, %" PRIu64 " edges in %.3f s\n", platform,
	       runtime, r.dep_tasks, r.dep_edges, (double)(tp_now_ns() - t0) * 1e-9);
}

static void test_large_a2a3_trb(void **s)
{
	(void)s;
	run_large("a2a3sim", TP_RUNTIME_TRB);
}

static void test_large_a5_hbg(void **s)
{
	(void)s;
	run_large("a5sim", TP_RUNTIME_HBG);
}

/* ---- the collector on its own: a 60k-task stream, and a loss ---------------- */

static void stream(struct dg_writer *w, uint32_t n)
{
	const int32_t k[3] = { -1, 7, -1 };
	struct dg_tensor t = { .buffer_addr = 0x10000, .buffer_numel = 64, .dtype = DG_FLOAT32,
			       .ndims = 1, .shape = { 64 }, .strides = { 1 } };
	for (uint32_t i = 0; i < n; i++) {
		dg_dev_task(w, i, i, false, false, k, 1, 2);
		dg_dev_arg(w, i, 0, DG_ARG_INOUT, &t);
		dg_dev_arg(w, i, 1, DG_ARG_OUTPUT, NULL);
		if (i)
			dg_dev_edge(w, i - 1, i, 0, DG_SRC_TENSORMAP, DG_OV_COVERED, &t);
	}
}

static void test_collector_stream(void **state)
{
	(void)state;
	for (int shadow = 0; shadow < 2; shadow++) {
		struct dg_config cfg = { .ops = shadow ? tp_memops_sim_shadow()
						       : tp_memops_sim_svm() };
		struct dg_collector *dg = dg_open(&cfg);
		assert_non_null(dg);
		struct dg_writer w;
		assert_int_equal(dg_writer_attach(dg, &w), 0);
		uint64_t t0 = tp_now_ns();
		stream(&w, 60000);
		assert_int_equal(dg_writer_flush(&w), 0);
		printf("stream (%s): 239999 records in %.1f ms, %.0f ns/record\n",
		       shadow ? "host shadow" : "shared mapping", (double)(tp_now_ns() - t0) * 1e-6,
		       (double)(tp_now_ns() - t0) / 239999.0);
		struct dg_summary s;
		char dir[4200];
		snprintf(dir, sizeof(dir), "%s/stream%d", g_root, shadow);
		mkdir(dir, 0755);
		assert_int_equal(dg_finish(dg, dir, &s), 0);
		dg_close(dg);
		assert_true(s.total == 60000u * 4 - 1);
		assert_true(s.collected == s.total);
		assert_true(s.dropped == 0);
		assert_true(s.tasks == 60000 && s.args == 120000 && s.edges == 59999);
		assert_true(s.tensors == 1);
		struct deps d;
		load_deps(dir, &d);
		assert_int_equal(json_array_size(d.tasks), 60000);
		assert_true(u64s(json_array_get(d.tasks, 59999), "task_id") == 59999);
		json_decref(d.root);
	}
}

static void test_collector_loss_fails(void **state)
{
	(void)state;
	struct dg_config cfg = { .ops = tp_memops_sim_svm(),
				 .backstop_cycles = tp_sys_cnt_freq() / 200 };
	struct dg_collector *dg = dg_open(&cfg);
	assert_non_null(dg);
	struct tp_profiler *p = dg_profiler(dg);
	atomic_store(&p->test_pause_drain, true);
	struct dg_writer w;
	assert_int_equal(dg_writer_attach(dg, &w), 0);
	/* The ready queue holds 7 buffers: far more than that cannot be
	 * published while the drain is paused, and the backstop drops them. */
	stream(&w, 20 * DG_RECORDS_PER_BUFFER);
	atomic_store(&p->test_pause_drain, false);
	dg_writer_flush(&w);
	char dir[4200], path[4300];
	snprintf(dir, sizeof(dir), "%s/lossy", g_root);
	mkdir(dir, 0755);
	struct dg_summary s;
	assert_int_equal(dg_finish(dg, dir, &s), -EPROTO);
	dg_close(dg);
	assert_true(s.dropped > 0);
	assert_true(s.collected + s.dropped == s.total);
	assert_non_null(strstr(tp_last_error(), "deps.json not written"));
	/* The message names the cause: the device found no buffer. */
	char want[160];
	snprintf(want, sizeof(want), "dropped on the device: no buffer %" PRIu64 ", ready queue "
		 "full 0, flush failed 0; host out of memory 0", s.dropped);
	if (!strstr(tp_last_error(), want))
		fail_msg("want '%s' in: %s", want, tp_last_error());
	snprintf(path, sizeof(path), "%s/deps.json", dir);
	assert_false(exists(path));
	printf("lossy: total %" PRIu64 " collected %" PRIu64 " dropped %" PRIu64 "\n", s.total,
	       s.collected, s.dropped);
}

static int setup(void **state)
{
	(void)state;
	g_root = uh_mkdtemp();
	return g_root ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	uh_rm_rf(g_root); /* frees it */
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tensor_id),
		cmocka_unit_test(test_name_map_exact),
		cmocka_unit_test(test_synthetic_a2a3_trb),
		cmocka_unit_test(test_synthetic_a5_trb),
		cmocka_unit_test(test_synthetic_a2a3_hbg),
		cmocka_unit_test(test_synthetic_a5_hbg),
		cmocka_unit_test(test_probe_a2a3_trb),
		cmocka_unit_test(test_probe_a5_hbg),
		cmocka_unit_test(test_pa_small1_hbg_a2a3),
		cmocka_unit_test(test_pa_small1_trb_a5),
		cmocka_unit_test(test_large_a2a3_trb),
		cmocka_unit_test(test_large_a5_hbg),
		cmocka_unit_test(test_collector_stream),
		cmocka_unit_test(test_collector_loss_fails),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
