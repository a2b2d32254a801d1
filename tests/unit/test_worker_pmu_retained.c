/* SPDX-License-Identifier: MIT */
/* Unit tests of retained PMU runs (tp_worker_config.collect_across_runs,
 * tp_worker_flush_diagnostics(); issue 5 scope 5, seed 000 §3.4 and its
 * FAQ). One test per row of the seed's §3.4 table, each checking the
 * default column and the collect_across_runs column:
 *   1. after run() returns        pmu.csv exists / may not exist yet
 *   2. how to be sure it exists   nothing / flush_diagnostics()
 *   3. runs awaiting publication  none / at most two, a third refused
 *   4. a run with no records      no file / no file, success only when
 *                                 the zero is proved (and unknown raises)
 *   5. a failed write             partial file removed / temp files kept,
 *                                 the next run refused until removed
 * and one per FAQ failure: flush raises with pmu.csv present (drops),
 * sticky failure (across new collectors and PMU off/on), close reporting
 * once more; plus each retained run frozen to its event type, and the
 * pool cap of a retained collector (twice what it holds when the run
 * starts). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "collectors/pmu/pmu_dev.h"
#include "collectors/pmu/pmu_host.h"
#include "platform/device.h"
#include "platform/pmu_events.h"
#include "platform/pmu_model.h"
#include "taskprof/worker.h"
#include "unit_helpers.h"
#include "worker_pmu_helpers.h"
#include "worker/run_pmu.h"

static int setup(void **state)
{
	(void)state;
	wk_pmu_test_fault(WK_PMU_FAULT_NONE, 0);
	wk_pmu_test_hold_writer(false);
	return wp_setup_root(state);
}

static int teardown(void **state)
{
	(void)state;
	wk_pmu_test_fault(WK_PMU_FAULT_NONE, 0);
	wk_pmu_test_hold_writer(false);
	return wp_teardown_root(state);
}

/* ---- helpers ------------------------------------------------------------- */

static struct tp_worker *open_worker_on(const char *platform, bool across, int pmu)
{
	struct tp_worker_config cfg = {
		.platform = platform, .output_root = g_root, .pmu_event_type = pmu,
		.block_dim = 2, .collect_across_runs = across,
	};
	struct tp_worker *w = tp_worker_open(&cfg);
	assert_non_null(w);
	return w;
}

static struct tp_worker *open_worker(bool across, int pmu)
{
	return open_worker_on("a2a3sim", across, pmu);
}

/* A callable that submits nothing: a run with zero records. */
static int empty_orch(struct tp_orch *o, const struct tp_case_args *a)
{
	(void)o;
	(void)a;
	return 0;
}

static int empty_gen(const struct tp_case *c, struct tp_case_args *a)
{
	(void)c;
	memset(a, 0, sizeof(*a));
	return 0;
}

static const struct tp_case EMPTY_CASES[] = { { .name = "Empty", .generate = empty_gen } };
static const struct tp_callable EMPTY = {
	.name = "empty", .orch_name = "empty", .orch = empty_orch,
	.cases = EMPTY_CASES, .n_cases = 1, .default_case = "Empty",
};

static bool exists(const char *dir, const char *name)
{
	char p[4300];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0;
}

/* printf(@fmt, @r's run_epoch) into one of a few rotating buffers: run
 * epochs are process-wide (seed 000 §3.2), so a test knows them only from
 * its results ("run_epoch %llu", "pmu.csv.e%llu."). */
static const char *ep(const char *fmt, const struct tp_run_result *r)
{
	static char buf[4][128];
	static int next;
	char *b = buf[next++ % 4];
	snprintf(b, sizeof(buf[0]), fmt, (unsigned long long)r->pmu_run_epoch);
	return b;
}

/* Data rows of <dir>/pmu.csv; its header into @hdr; every row's last
 * column (run_epoch) must be @epoch and its event_type column @type. */
static int csv_rows(const struct tp_run_result *r, char *hdr, size_t hlen, uint64_t epoch,
		    uint32_t type)
{
	char p[4300], line[1024];
	snprintf(p, sizeof(p), "%s/pmu.csv", r->output_dir);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	assert_non_null(fgets(hdr, (int)hlen, f));
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *last = strrchr(line, ',');
		assert_non_null(last);
		assert_int_equal(strtoull(last + 1, NULL, 10), epoch);
		*last = 0;
		char *et = strrchr(line, ',');
		assert_non_null(et);
		assert_int_equal(strtoul(et + 1, NULL, 10), type);
		n++;
	}
	fclose(f);
	return n;
}

/* Files of @dir whose names start with @prefix and end with @suffix; the
 * lines they hold summed into *lines (may be NULL). */
static int count_files(const char *dir, const char *prefix, const char *suffix, int *lines)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	int n = 0;
	if (lines)
		*lines = 0;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), sl = strlen(suffix);
		if (strncmp(e->d_name, prefix, strlen(prefix)) || l < sl ||
		    strcmp(e->d_name + l - sl, suffix))
			continue;
		n++;
		if (lines) {
			char p[4300];
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			FILE *f = fopen(p, "r");
			assert_non_null(f);
			for (int ch; (ch = fgetc(f)) != EOF;)
				*lines += ch == '\n';
			fclose(f);
		}
	}
	closedir(d);
	return n;
}

static void remove_files(const char *dir, const char *prefix, const char *suffix)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), sl = strlen(suffix);
		if (strncmp(e->d_name, prefix, strlen(prefix)) || l < sl ||
		    strcmp(e->d_name + l - sl, suffix))
			continue;
		char p[4300];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		assert_int_equal(unlink(p), 0);
	}
	closedir(d);
}

static int subdirs(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* ---- §3.4 row 1: after run() returns ------------------------------------- */

static void test_row_after_run(void **state)
{
	(void)state;
	struct tp_run_result r;
	/* Default: the file exists when run() returns. */
	struct tp_worker *w = open_worker(false, 2);
	assert_int_equal(wp_run_pa(w, &r), 0);
	assert_false(r.pmu_retained);
	assert_true(wp_csv_exists(&r));
	assert_true(r.pmu_collected > 0);
	char hdr0[1024];
	assert_int_equal(csv_rows(&r, hdr0, sizeof(hdr0), r.pmu_run_epoch, 2), (int)r.pmu_collected);
	tp_worker_close(w);

	/* Retained: it may not exist yet. With the background writer held
	 * (a slow disk) it certainly does not. */
	wk_pmu_test_hold_writer(true);
	w = open_worker(true, 2);
	assert_int_equal(wp_run_pa(w, &r), 0);
	assert_true(r.pmu_retained);
	assert_true(r.pmu);
	assert_true(r.pmu_reconcile_ok);
	assert_true(r.pmu_collected > 0);
	assert_string_equal(r.pmu_csv, "");
	assert_int_equal(r.pmu_rows, 0);
	assert_false(wp_csv_exists(&r));
	/* Its rows wait in the shard files of its own epoch. */
	int lines = 0;
	assert_true(count_files(r.output_dir, ep("pmu.csv.e%llu.", &r), ".tmp", &lines) >= 1);
	assert_int_equal(lines, (int)r.pmu_collected);
	wk_pmu_test_hold_writer(false);
	/* Left alone, the background writer publishes it without a flush
	 * (polled for at most 30 s of wall-clock time). */
	struct tp_run_result r2;
	assert_int_equal(wp_run_pa(w, &r2), 0);
	for (uint64_t t0 = tp_now_ns();
	     !(wp_csv_exists(&r) && wp_csv_exists(&r2)) && tp_now_ns() - t0 < 30000000000u;)
		usleep(1000);
	assert_true(wp_csv_exists(&r));
	assert_true(wp_csv_exists(&r2));
	char hdr[1024];
	assert_int_equal(csv_rows(&r2, hdr, sizeof(hdr), r2.pmu_run_epoch, 2), (int)r2.pmu_collected);
	assert_int_equal(tp_worker_flush_diagnostics(w), 0);
	tp_worker_close(w);
}

/* ---- §3.4 row 2: how to be sure it exists --------------------------------- */

static void test_row_flush_is_the_barrier(void **state)
{
	(void)state;
	struct tp_run_result a, b;
	char hdr[1024];
	/* Default: nothing to do, the flush has nothing to publish. */
	struct tp_worker *w = open_worker(false, 2);
	assert_int_equal(wp_run_pa(w, &a), 0);
	assert_true(wp_csv_exists(&a));
	assert_int_equal(tp_worker_flush_diagnostics(w), 0);
	tp_worker_close(w);

	/* Retained: every run closed before the flush has its file after it
	 * (a5sim too: the host shadow is gone before the flush). */
	const char *plats[2] = { "a2a3sim", "a5sim" };
	for (int k = 0; k < 2; k++) {
		/* Held writer: the flush itself must publish them. */
		wk_pmu_test_hold_writer(true);
		w = open_worker_on(plats[k], true, 2);
		assert_int_equal(wp_run_pa(w, &a), 0);
		assert_int_equal(wp_run_pa(w, &b), 0);
		assert_true(a.pmu_collected > 0);
		assert_int_equal(a.pmu_mismatch, 0);
		assert_false(wp_csv_exists(&a));
		assert_false(wp_csv_exists(&b));
		assert_int_equal(tp_worker_flush_diagnostics(w), 0);
		assert_true(wp_csv_exists(&a));
		assert_true(wp_csv_exists(&b));
		assert_int_equal(csv_rows(&a, hdr, sizeof(hdr), a.pmu_run_epoch, 2), (int)a.pmu_collected);
		assert_int_equal(csv_rows(&b, hdr, sizeof(hdr), b.pmu_run_epoch, 2), (int)b.pmu_collected);
		/* The temp files are gone once published. */
		assert_int_equal(count_files(a.output_dir, "pmu.csv.e", ".tmp", NULL), 0);
		assert_int_equal(count_files(b.output_dir, "pmu.csv.e", ".tmp", NULL), 0);
		/* Nothing new, nothing failed: still a success. */
		assert_int_equal(tp_worker_flush_diagnostics(w), 0);
		tp_worker_close(w);
		wk_pmu_test_hold_writer(false);
	}
}

/* ---- §3.4 row 3: runs awaiting publication (FAQ: capacity) ---------------- */

static void test_row_capacity(void **state)
{
	(void)state;
	struct tp_run_result r[3];
	/* Default: none await, so runs never queue up. */
	struct tp_worker *w = open_worker(false, 2);
	for (int i = 0; i < 3; i++)
		assert_int_equal(wp_run_pa(w, &r[i]), 0);
	tp_worker_close(w);
	assert_int_equal(subdirs(g_root), 3);

	/* Retained: at most two; the third fails before it is submitted
	 * (the background writer held: a slow disk). */
	wk_pmu_test_hold_writer(true);
	w = open_worker(true, 2);
	assert_int_equal(wp_run_pa(w, &r[0]), 0);
	assert_int_equal(wp_run_pa(w, &r[1]), 0);
	assert_int_equal(subdirs(g_root), 5);
	assert_int_equal(wp_run_pa(w, &r[2]), -EBUSY);
	assert_non_null(strstr(tp_last_error(), "both retained PMU runs are still unpublished"));
	assert_non_null(strstr(tp_last_error(), ep("run_epoch %llu in ", &r[0])));
	assert_non_null(strstr(tp_last_error(), ep("run_epoch %llu in ", &r[1])));
	/* Nothing ran: no run folder, no figures. */
	assert_int_equal(subdirs(g_root), 5);
	assert_int_equal(r[2].tasks, 0);
	assert_false(r[2].pmu);
	/* After the flush there is room again; the refused call used no epoch. */
	assert_int_equal(tp_worker_flush_diagnostics(w), 0);
	assert_int_equal(wp_run_pa(w, &r[2]), 0);
	assert_int_equal(r[2].pmu_run_epoch, r[1].pmu_run_epoch + 1);
	wk_pmu_test_hold_writer(false);
	assert_int_equal(tp_worker_flush_diagnostics(w), 0);
	assert_true(wp_csv_exists(&r[2]));
	tp_worker_close(w);
}

/* ---- §3.4 row 4: a run that produced no records --------------------------- */

static void test_row_zero_records_proved(void **state)
{
	(void)state;
	struct tp_run_result r;
	/* Default: no file. */
	struct tp_worker *w = open_worker(false, 2);
	assert_int_equal(tp_worker_run(w, &EMPTY, NULL, &r), 0);
	assert_true(r.pmu);
	assert_int_equal(r.pmu_total, 0);
	assert_false(wp_csv_exists(&r));
	tp_worker_close(w);

	/* Retained: no file, and a success because the zero is proved. */
	w = open_worker(true, 2);
	assert_int_equal(tp_worker_run(w, &EMPTY, NULL, &r), 0);
	assert_true(r.pmu_retained);
	assert_int_equal(r.pmu_total, 0);
	assert_int_equal(r.pmu_dropped, 0);
	assert_true(r.pmu_reconcile_ok);
	assert_int_equal(tp_worker_flush_diagnostics(w), 0);
	assert_false(wp_csv_exists(&r));
	assert_int_equal(count_files(r.output_dir, "pmu.csv", "", NULL), 0);
	tp_worker_close(w);
}

static void test_row_zero_records_unknown(void **state)
{
	(void)state;
	struct tp_run_result r;
	/* The same empty run whose counters could not be read is not empty:
	 * the file is absent for a different reason and the flush raises. */
	struct tp_worker *w = open_worker(true, 2);
	wk_pmu_test_fault(WK_PMU_FAULT_UNREADABLE, 0);
	assert_int_equal(tp_worker_run(w, &EMPTY, NULL, &r), 0);
	assert_true(r.pmu_retained);
	assert_false(r.pmu_reconcile_ok);
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	const char *e = tp_last_error();
	assert_non_null(strstr(e, ep("run_epoch %llu (", &r)));
	assert_non_null(strstr(e, r.output_dir));
	assert_non_null(strstr(e, "unknown"));
	assert_non_null(strstr(e, "0 rows published"));
	assert_false(wp_csv_exists(&r));
	struct wp_logbuf lb = { .len = 0 };
	tp_log_set_hook(wp_log_errors, &lb);
	tp_worker_close(w);
	tp_log_set_hook(NULL, NULL);
}

/* ---- §3.4 row 5: a failed write ------------------------------------------- */

static void test_row_failed_write(void **state)
{
	(void)state;
	struct tp_run_result r;
	char name[128];
	/* Default: the run fails, the partial merged file is removed. The
	 * merge is part of the reconcile (spec/pmu.md §2.4, §5 step 3): a
	 * failed one counts 0 rows collected, a mismatch. */
	struct tp_worker *w = open_worker(false, 2);
	wk_pmu_test_fault(WK_PMU_FAULT_WRITE, 0);
	assert_true(wp_run_pa(w, &r) < 0);
	assert_non_null(strstr(tp_last_error(), "the shard files are kept as evidence"));
	assert_false(wp_csv_exists(&r));
	assert_true(r.pmu_total > 0);
	assert_int_equal(r.pmu_collected, 0);
	assert_int_equal(r.pmu_dropped, 0);
	assert_false(r.pmu_reconcile_ok);
	snprintf(name, sizeof(name), "pmu.csv.e%llu.p%d.merge.tmp",
		 (unsigned long long)r.pmu_run_epoch, (int)getpid());
	assert_false(exists(r.output_dir, name));
	/* ... and the next run is not refused. */
	struct tp_run_result r2;
	assert_int_equal(wp_run_pa(w, &r2), 0);
	assert_true(wp_csv_exists(&r2));
	tp_worker_close(w);

	/* Retained: the flush raises, the temp files stay as evidence, the
	 * next run is refused until they are removed. */
	wk_pmu_test_hold_writer(true); /* until the fault is in place */
	w = open_worker(true, 2);
	assert_int_equal(wp_run_pa(w, &r), 0);
	assert_true(r.pmu_collected > 0);
	char pmu_dir[4300];
	snprintf(pmu_dir, sizeof(pmu_dir), "%s/pmu.csv", r.output_dir);
	assert_int_equal(mkdir(pmu_dir, 0755), 0); /* writing pmu.csv fails */
	wk_pmu_test_hold_writer(false);
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	const char *e = tp_last_error();
	assert_non_null(strstr(e, ep("run_epoch %llu (", &r)));
	assert_non_null(strstr(e, "write failed"));
	assert_non_null(strstr(e, "temporary files are kept"));
	assert_false(wp_csv_exists(&r));
	int lines = 0;
	assert_true(count_files(r.output_dir, ep("pmu.csv.e%llu.", &r), ".failed.tmp", &lines) >= 1);
	assert_int_equal(lines, (int)r.pmu_collected); /* every row is in the evidence */
	snprintf(name, sizeof(name), "pmu.csv.e%llu.p%d.merge.tmp",
		 (unsigned long long)r.pmu_run_epoch, (int)getpid());
	assert_false(exists(r.output_dir, name));

	int dirs = subdirs(g_root);
	assert_int_equal(wp_run_pa(w, &r2), -EEXIST);
	assert_non_null(strstr(tp_last_error(), "still holds a failed run's temporary files"));
	assert_non_null(strstr(tp_last_error(), r.output_dir));
	assert_int_equal(subdirs(g_root), dirs); /* nothing ran */
	/* Read them, remove them: the destination is usable again. */
	remove_files(r.output_dir, "pmu.csv.e", ".tmp");
	assert_int_equal(wp_run_pa(w, &r2), 0);
	assert_true(r2.pmu_retained);
	/* The failure stays sticky, yet the new run is published. */
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	assert_true(wp_csv_exists(&r2));
	struct wp_logbuf lb = { .len = 0 };
	tp_log_set_hook(wp_log_errors, &lb);
	tp_worker_close(w);
	tp_log_set_hook(NULL, NULL);
}

/* ---- FAQ: flush raises but pmu.csv is there (drops) ----------------------- */

static void test_faq_raises_with_file(void **state)
{
	(void)state;
	struct tp_run_result r;
	char hdr[1024];
	struct tp_worker *w = open_worker(true, 2);
	wk_pmu_test_fault(WK_PMU_FAULT_DROP, 5);
	assert_int_equal(wp_run_pa(w, &r), 0);
	assert_int_equal(r.pmu_dropped, 5);
	assert_int_equal(r.pmu_total, r.pmu_collected + 5);
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	char want[256];
	snprintf(want, sizeof(want),
		 "incomplete: collected=%" PRIu64 " dropped=5 mismatch=0 total=%" PRIu64
		 "; %" PRIu64 " rows published",
		 r.pmu_collected, r.pmu_total, r.pmu_collected);
	assert_non_null(strstr(tp_last_error(), want));
	assert_non_null(strstr(tp_last_error(), ep("run_epoch %llu (", &r)));
	/* The rows that exist are real, and published. */
	assert_true(wp_csv_exists(&r));
	assert_int_equal(csv_rows(&r, hdr, sizeof(hdr), r.pmu_run_epoch, 2), (int)r.pmu_collected);
	struct wp_logbuf lb = { .len = 0 };
	tp_log_set_hook(wp_log_errors, &lb);
	tp_worker_close(w);
	tp_log_set_hook(NULL, NULL);
}

/* ---- FAQ: the failure is sticky ------------------------------------------- */

static void test_faq_sticky(void **state)
{
	(void)state;
	struct tp_run_result r[4];
	struct tp_worker *w = open_worker(true, 2);
	wk_pmu_test_fault(WK_PMU_FAULT_DROP, 1);
	assert_int_equal(wp_run_pa(w, &r[0]), 0);
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	assert_non_null(strstr(tp_last_error(), "incomplete"));
	/* A clean run on a new collector: still raises, naming the first. */
	assert_int_equal(wp_run_pa(w, &r[1]), 0);
	assert_true(r[1].pmu_reconcile_ok);
	assert_int_equal(r[1].pmu_dropped, 0);
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	assert_non_null(strstr(tp_last_error(), "sticky for this Worker"));
	assert_non_null(strstr(tp_last_error(), ep("run_epoch %llu (", &r[0])));
	assert_true(wp_csv_exists(&r[1]));
	/* PMU off, then on again: still sticky. */
	assert_int_equal(tp_worker_set_pmu_event_type(w, 0), 0);
	assert_int_equal(wp_run_pa(w, &r[2]), 0);
	assert_false(r[2].pmu);
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	assert_int_equal(tp_worker_set_pmu_event_type(w, 2), 0);
	assert_int_equal(wp_run_pa(w, &r[3]), 0);
	assert_true(r[3].pmu_retained);
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	assert_non_null(strstr(tp_last_error(), "sticky for this Worker"));
	assert_non_null(strstr(tp_last_error(), "dropped=1"));
	assert_true(wp_csv_exists(&r[3]));
	struct wp_logbuf lb = { .len = 0 };
	tp_log_set_hook(wp_log_errors, &lb);
	tp_worker_close(w);
	tp_log_set_hook(NULL, NULL);
}

/* ---- FAQ: close reports once more ------------------------------------------ */

static void test_faq_close_reports(void **state)
{
	(void)state;
	struct tp_run_result r;
	struct wp_logbuf lb = { .len = 0 };
	/* A failure already reported by a flush: close reports it again. */
	struct tp_worker *w = open_worker(true, 2);
	wk_pmu_test_fault(WK_PMU_FAULT_DROP, 3);
	assert_int_equal(wp_run_pa(w, &r), 0);
	assert_int_equal(tp_worker_flush_diagnostics(w), -EIO);
	tp_log_set_hook(wp_log_errors, &lb);
	tp_worker_close(w);
	tp_log_set_hook(NULL, NULL);
	char want[256];
	snprintf(want, sizeof(want),
		 "tp_worker_close: PMU flush_diagnostics: an earlier PMU run failed and the "
		 "failure is sticky for this Worker: run_epoch %llu (",
		 (unsigned long long)r.pmu_run_epoch);
	assert_non_null(strstr(lb.text, want));
	assert_non_null(strstr(lb.text, "dropped=3"));

	/* Never flushed: close publishes the run and is the last report. */
	memset(&lb, 0, sizeof(lb));
	wk_pmu_test_hold_writer(true);
	w = open_worker(true, 2);
	wk_pmu_test_fault(WK_PMU_FAULT_DROP, 4);
	assert_int_equal(wp_run_pa(w, &r), 0);
	assert_false(wp_csv_exists(&r)); /* held: close's flush publishes it */
	tp_log_set_hook(wp_log_errors, &lb);
	tp_worker_close(w);
	tp_log_set_hook(NULL, NULL);
	snprintf(want, sizeof(want), "tp_worker_close: PMU flush_diagnostics: run_epoch %llu (",
		 (unsigned long long)r.pmu_run_epoch);
	assert_non_null(strstr(lb.text, want));
	assert_non_null(strstr(lb.text, "dropped=4"));
	assert_true(wp_csv_exists(&r));
	wk_pmu_test_hold_writer(false);

	/* A clean Worker: close logs no error. */
	memset(&lb, 0, sizeof(lb));
	w = open_worker(true, 2);
	assert_int_equal(wp_run_pa(w, &r), 0);
	tp_log_set_hook(wp_log_errors, &lb);
	tp_worker_close(w);
	tp_log_set_hook(NULL, NULL);
	assert_null(strstr(lb.text, "tp_worker_close"));
	assert_true(wp_csv_exists(&r));
}

/* ---- each retained run frozen to its own event type and columns ----------- */

static void test_frozen_event_type(void **state)
{
	(void)state;
	struct tp_run_result a, b;
	char ha[1024], hb[1024], want[1024];
	struct tp_worker *w = open_worker(true, 2);
	assert_int_equal(wp_run_pa(w, &a), 0);
	assert_int_equal(tp_worker_set_pmu_event_type(w, 4), 0);
	assert_int_equal(wp_run_pa(w, &b), 0);
	assert_int_equal(a.pmu_event_type, 2);
	assert_int_equal(b.pmu_event_type, 4);
	assert_int_equal(tp_worker_flush_diagnostics(w), 0);
	assert_int_equal(csv_rows(&a, ha, sizeof(ha), a.pmu_run_epoch, 2), (int)a.pmu_collected);
	assert_int_equal(csv_rows(&b, hb, sizeof(hb), b.pmu_run_epoch, 4), (int)b.pmu_collected);
	const struct tp_pmu_event_group *g2 = tp_pmu_event_group_or_default(TP_PMU_ARCH_A2A3, 2);
	const struct tp_pmu_event_group *g4 = tp_pmu_event_group_or_default(TP_PMU_ARCH_A2A3, 4);
	assert_true(tp_pmu_csv_header(g2, want, sizeof(want)) > 0);
	assert_string_equal(ha, want);
	assert_true(tp_pmu_csv_header(g4, want, sizeof(want)) > 0);
	assert_string_equal(hb, want);
	assert_non_null(strstr(ha, "vec_busy_cycles"));
	assert_null(strstr(hb, "vec_busy_cycles"));
	tp_worker_close(w);
}

/* ---- the pool cap of a retained collector ---------------------------------- */

static void test_pool_cap(void **state)
{
	(void)state;
	const char *plats[2] = { "a2a3sim", "a5sim" };
	for (int k = 0; k < 2; k++) {
		struct tp_device_config dc = { .platform = plats[k], .block_dim = 2,
					       .aicpu_threads = 3 };
		struct tp_device *dev = NULL;
		assert_int_equal(tp_device_create(&dc, &dev), 0);
		struct tp_pmu_model *m = NULL;
		assert_int_equal(tp_pmu_model_create(dev, &m), 0);
		for (int retained = 0; retained < 2; retained++) {
			struct pmu_config cfg = {
				.model = m, .num_cores = 6, .num_threads = 2, .event_type = 2,
				.run_epoch = 1, .output_prefix = g_root, .retained = retained,
			};
			struct pmu_collector *c = pmu_open(&cfg);
			assert_non_null(c);
			uint64_t seeded = 0, cap = 1, now = 0;
			assert_int_equal(pmu_pool_bytes(c, &seeded, &cap, NULL), 0);
			/* Region + PLATFORM_PMU_BUFFERS_PER_CORE (4, seed §7.2)
			 * buffers of 64 + 512 x 64 B per core at least; no cap
			 * before the run starts. */
			assert_true(seeded >= 6u * 4u * (64u + 512u * 64u));
			assert_int_equal(cap, 0);
			const uint64_t at_open = seeded;
			/* Seeded: what the run starts with, the start-up top-up
			 * included. The cap is twice that when retained (else
			 * unbounded, 0), so the run may still grow by as much
			 * again; the top-up never spends it. */
			assert_int_equal(pmu_start(c), 0);
			assert_int_equal(pmu_pool_bytes(c, &seeded, &cap, &now), 0);
			assert_true(seeded > at_open); /* the recycled lanes' blocks */
			assert_true(now >= seeded);
			assert_int_equal(cap, retained ? 2 * seeded : 0);
			if (retained)
				assert_true(cap - now >= seeded);
			pmu_stop(c);
			pmu_release_pool(c);
			assert_int_equal(pmu_pool_bytes(c, NULL, NULL, NULL), -EINVAL);
			pmu_close(c);
		}
		tp_pmu_model_destroy(m);
		tp_device_close(dev);
	}
}

/* A slow writer under retention: the pool grows to its cap, no further;
 * the device then drops, and the reconcile still balances. Without
 * retention the same run grows past twice its seed and drops nothing. */
static void test_pool_cap_drops(void **state)
{
	(void)state;
	enum { RECS = 48 * 512 }; /* more than the 2 x 16 buffers of the cap */
	uint64_t capped_rows = 0;
	for (int retained = 1; retained >= 0; retained--) {
		struct tp_device_config dc = { .platform = "a2a3sim", .block_dim = 1,
					       .aicpu_threads = 2 };
		struct tp_device *dev = NULL;
		assert_int_equal(tp_device_create(&dc, &dev), 0);
		struct tp_pmu_model *m = NULL;
		assert_int_equal(tp_pmu_model_create(dev, &m), 0);
		struct pmu_config cfg = {
			.model = m, .num_cores = 3, .num_threads = 1, .event_type = 2,
			.run_epoch = 9, .output_prefix = g_root, .retained = retained,
			/* A producer that finds no buffer drops after 2 ms when
			 * retained (the capped pool cannot grow), 100 ms otherwise
			 * (time for the unbounded pool to grow). */
			.backstop_cycles = tp_sys_cnt_freq() / (retained ? 500 : 10),
		};
		struct pmu_collector *c = pmu_open(&cfg);
		assert_non_null(c);
		struct pmu_dev *d = pmu_dev(c);
		assert_int_equal(pmu_start(c), 0);
		assert_int_equal(pmu_dev_init(d), 0);
		pmu_test_hold_collect(c, true);
		struct tp_pmu_sample smp = { .n_slots = 8, .total_cycles = 100 };
		for (int i = 0; i < RECS; i++)
			pmu_dev_record(d, 0, 0, (uint64_t)i, 1, 0, &smp);
		uint64_t seeded = 0, cap = 0, now = 0;
		assert_int_equal(pmu_pool_bytes(c, &seeded, &cap, &now), 0);
		pmu_test_hold_collect(c, false);
		pmu_dev_flush_thread(d, 0);
		pmu_dev_finalize(d);
		pmu_stop(c);
		struct pmu_reconcile r;
		int rrc = pmu_reconcile(c, &r);
		assert_int_equal(r.total, RECS);
		assert_int_equal(r.collected + r.dropped, RECS);
		if (retained) {
			assert_int_equal(cap, 2 * seeded);
			assert_true(now <= cap);
			assert_true(r.dropped > 0);
			/* Balanced, yet not complete: the flush would raise. */
			assert_int_equal(rrc, 0);
			capped_rows = r.collected;
		} else {
			/* Unbounded: it grew past the retained ceiling and kept
			 * more of the same records. */
			assert_int_equal(cap, 0);
			assert_true(now > 2 * seeded);
			assert_true(r.collected > capped_rows);
		}
		uint64_t rows = 0;
		assert_int_equal(pmu_export(c, &rows), 0);
		assert_int_equal(rows, r.collected);
		pmu_close(c);
		tp_pmu_model_destroy(m);
		tp_device_close(dev);
		char p[4300];
		snprintf(p, sizeof(p), "%s/pmu.csv", g_root);
		unlink(p);
	}
}

int main(void)
{
	tp_log_set_threshold(TP_LOG_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_row_after_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_row_flush_is_the_barrier, setup, teardown),
		cmocka_unit_test_setup_teardown(test_row_capacity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_row_zero_records_proved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_row_zero_records_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_row_failed_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_faq_raises_with_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_faq_sticky, setup, teardown),
		cmocka_unit_test_setup_teardown(test_faq_close_reports, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frozen_event_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_cap_drops, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
