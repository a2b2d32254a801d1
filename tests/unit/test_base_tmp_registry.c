/* SPDX-License-Identifier: MIT */
/* Unit tests of base/tmp_registry: the temporary files an interrupt removes,
 * and tp_file_tx registering its temporary file for its whole life. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/tmp_registry.h"
#include "unit_helpers.h"

static char *dir;

static int setup(void **state)
{
	(void)state;
	tp_tmpreg_reset();
	dir = uh_mkdtemp();
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	tp_tmpreg_reset();
	uh_rm_rf(dir);
	dir = NULL;
	return 0;
}

static void touch(const char *p)
{
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
}

/* The first @cap - 1 bytes of file @p into @buf, NUL-terminated. */
static void slurp(const char *p, char *buf, size_t cap)
{
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
}

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static void test_unlink_registered_only(void **state)
{
	(void)state;
	char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX];
	snprintf(a, sizeof(a), "%s/a.tmp", dir);
	snprintf(b, sizeof(b), "%s/b.tmp", dir);
	snprintf(c, sizeof(c), "%s/c.tmp", dir);
	int ha = tp_tmpreg_add(a), hb = tp_tmpreg_add(b), hc = tp_tmpreg_add(c);
	assert_true(ha > 0 && hb > 0 && hc > 0);
	touch(a);
	touch(b);
	tp_tmpreg_created(ha);
	tp_tmpreg_created(hb);
	tp_tmpreg_created(hc); /* tried: its creation failed */
	/* c registered but never created: not counted. b done with: kept. */
	tp_tmpreg_remove(hb);
	assert_int_equal(tp_tmpreg_unlink_all(), 1);
	assert_false(exists(a));
	assert_true(exists(b));
	/* Claimed for good: the owner's remove is ignored, a second pass
	 * removes nothing, even a file of the same name created since. */
	tp_tmpreg_remove(ha);
	touch(a);
	assert_int_equal(tp_tmpreg_unlink_all(), 0);
	assert_true(exists(a));
	tp_tmpreg_remove(-ENOSPC); /* failed registrations are ignored */
	tp_tmpreg_remove(0);
	(void)hc;
}

static void test_slots_and_limits(void **state)
{
	(void)state;
	char p[PATH_MAX];
	int h[TP_TMPREG_SLOTS];
	for (int i = 0; i < TP_TMPREG_SLOTS; i++) {
		snprintf(p, sizeof(p), "%s/f%d.tmp", dir, i);
		h[i] = tp_tmpreg_add(p);
		assert_true(h[i] > 0);
	}
	assert_int_equal(tp_tmpreg_add("one-too-many"), -ENOSPC);
	tp_tmpreg_remove(h[7]);
	assert_int_equal(tp_tmpreg_add("reuses-a-slot"), h[7]);
	char *long_path = malloc(PATH_MAX + 1);
	memset(long_path, 'x', PATH_MAX);
	long_path[PATH_MAX] = '\0';
	assert_int_equal(tp_tmpreg_add(long_path), -ENAMETOOLONG);
	free(long_path);
}

static void test_run_dir(void **state)
{
	(void)state;
	assert_null(tp_tmpreg_claim_dir());
	tp_tmpreg_set_dir("first");
	tp_tmpreg_set_dir(dir); /* the last one wins */
	const char *d = tp_tmpreg_claim_dir();
	assert_non_null(d);
	assert_string_equal(d, dir);
	assert_null(tp_tmpreg_claim_dir()); /* claimed once */
	tp_tmpreg_reset();
	tp_tmpreg_set_dir("x");
	tp_tmpreg_set_dir(NULL);
	assert_null(tp_tmpreg_claim_dir());
}

/* The folders made for an output, removed on an interrupt while empty;
 * the note appended to an existing file. */
static void test_made_dirs_and_note(void **state)
{
	(void)state;
	assert_null(tp_tmpreg_remove_made_dirs()); /* none published */
	char deep[PATH_MAX], top[PATH_MAX];
	snprintf(top, sizeof(top), "%s/out", dir);
	snprintf(deep, sizeof(deep), "%s/out/a/b", dir);
	assert_int_equal(tp_mkdir_p(deep, 0755), 0);
	tp_tmpreg_set_made_dirs(deep, 0);           /* out of range: nothing */
	tp_tmpreg_set_made_dirs(deep, strlen(deep) + 1);
	assert_null(tp_tmpreg_remove_made_dirs());
	assert_true(exists(deep));
	tp_tmpreg_set_made_dirs(deep, strlen(top));
	const char *gone = tp_tmpreg_remove_made_dirs();
	assert_non_null(gone);
	assert_string_equal(gone, top);
	assert_false(exists(top));
	assert_true(exists(dir));
	assert_null(tp_tmpreg_remove_made_dirs()); /* claimed once */

	tp_tmpreg_reset();
	assert_int_equal(tp_mkdir_p(deep, 0755), 0);
	tp_tmpreg_set_made_dirs(deep, strlen(top));
	tp_tmpreg_set_made_dirs(NULL, 0); /* withdrawn: the output is in place */
	assert_null(tp_tmpreg_remove_made_dirs());
	assert_true(exists(deep));

	char res[PATH_MAX];
	snprintf(res, sizeof(res), "%s/result.txt", dir);
	assert_false(tp_tmpreg_append_note(NULL)); /* none published */
	tp_tmpreg_set_note(res, "trace INTERRUPTED\n", NULL);
	assert_false(tp_tmpreg_append_note(NULL)); /* the file is not created */
	assert_false(exists(res));
	tp_tmpreg_reset();
	FILE *f = fopen(res, "w");
	assert_non_null(f);
	fputs("PASS\n", f);
	fclose(f);
	tp_tmpreg_set_note(res, "first\n", NULL);
	tp_tmpreg_set_note(res, "trace INTERRUPTED\n", NULL); /* the last one wins */
	assert_true(tp_tmpreg_append_note(NULL));
	assert_false(tp_tmpreg_append_note(NULL)); /* claimed once */
	char got[256] = "";
	slurp(res, got, sizeof(got));
	assert_string_equal(got, "PASS\ntrace INTERRUPTED\n");
	tp_tmpreg_reset();
	tp_tmpreg_set_note(res, "x\n", NULL);
	tp_tmpreg_set_note(NULL, NULL, NULL);
	assert_false(tp_tmpreg_append_note(NULL));

	/* Relative names are taken in the folder given at the interrupt; the
	 * line is not appended once the @unless output is in place. */
	tp_tmpreg_reset();
	tp_tmpreg_set_note("result.txt", "trace INTERRUPTED\n", "trace.json");
	assert_false(tp_tmpreg_append_note(NULL)); /* no folder for a relative name */
	tp_tmpreg_reset();
	tp_tmpreg_set_note("result.txt", "trace INTERRUPTED\n", "trace.json");
	char trace[PATH_MAX];
	snprintf(trace, sizeof(trace), "%s/trace.json", dir);
	f = fopen(trace, "w");
	assert_non_null(f);
	fclose(f);
	assert_false(tp_tmpreg_append_note(dir)); /* the trace is there */
	assert_int_equal(unlink(trace), 0);
	tp_tmpreg_reset();
	tp_tmpreg_set_note("result.txt", "trace INTERRUPTED\n", "trace.json");
	assert_true(tp_tmpreg_append_note(dir));
	slurp(res, got, sizeof(got));
	assert_string_equal(got, "PASS\ntrace INTERRUPTED\n"
				 "trace INTERRUPTED\n");

	/* The unfinished mark: created only where there is none. */
	tp_tmpreg_reset();
	assert_false(tp_tmpreg_mark_unfinished(dir, NULL)); /* none published */
	tp_tmpreg_set_unfinished("result.txt", "status FAILED\n");
	assert_false(tp_tmpreg_mark_unfinished(dir, NULL)); /* result.txt exists: kept */
	assert_int_equal(unlink(res), 0);
	tp_tmpreg_reset();
	tp_tmpreg_set_unfinished("result.txt", "status FAILED\n");
	assert_false(tp_tmpreg_mark_unfinished(NULL, NULL)); /* no folder */
	tp_tmpreg_reset();
	tp_tmpreg_set_unfinished("result.txt", "first\n");
	tp_tmpreg_set_unfinished("result.txt", "status FAILED\n"); /* the last one wins */
	assert_true(tp_tmpreg_mark_unfinished(dir, NULL));
	assert_false(tp_tmpreg_mark_unfinished(dir, NULL)); /* claimed once */
	slurp(res, got, sizeof(got));
	assert_string_equal(got, "status FAILED\n");
	assert_int_equal(unlink(res), 0);
	tp_tmpreg_reset();
	tp_tmpreg_set_unfinished("result.txt", "x\n");
	tp_tmpreg_set_unfinished(NULL, NULL); /* withdrawn */
	assert_false(tp_tmpreg_mark_unfinished(dir, NULL));
	assert_false(exists(res));
	/* With an addition: on the last line, before its newline. */
	tp_tmpreg_reset();
	tp_tmpreg_set_unfinished("result.txt", "status FAILED\nerror cut short\n");
	assert_true(tp_tmpreg_mark_unfinished(dir, "the first error it logged: stall"));
	slurp(res, got, sizeof(got));
	assert_string_equal(got, "status FAILED\nerror cut short; the first error it logged: "
				 "stall\n");
	assert_int_equal(unlink(res), 0);
	/* An empty addition writes the text as published. */
	tp_tmpreg_reset();
	tp_tmpreg_set_unfinished("result.txt", "status FAILED\n");
	assert_true(tp_tmpreg_mark_unfinished(dir, ""));
	slurp(res, got, sizeof(got));
	assert_string_equal(got, "status FAILED\n");
	assert_int_equal(unlink(res), 0);
	/* The head (the run's settings) comes first; the addition still goes
	 * on the text's last line; the last head wins, NULL withdraws it. */
	tp_tmpreg_reset();
	tp_tmpreg_set_unfinished("result.txt", "status FAILED\nerror cut short\n");
	tp_tmpreg_set_unfinished_head("callable old\n");
	tp_tmpreg_set_unfinished_head("callable x\ncase y\n");
	assert_true(tp_tmpreg_mark_unfinished(dir, "stall"));
	slurp(res, got, sizeof(got));
	assert_string_equal(got, "callable x\ncase y\nstatus FAILED\nerror cut short; stall\n");
	assert_int_equal(unlink(res), 0);
	tp_tmpreg_reset();
	tp_tmpreg_set_unfinished("result.txt", "status FAILED\n");
	tp_tmpreg_set_unfinished_head("callable x\n");
	tp_tmpreg_set_unfinished_head(NULL);
	assert_true(tp_tmpreg_mark_unfinished(dir, NULL));
	slurp(res, got, sizeof(got));
	assert_string_equal(got, "status FAILED\n");
	assert_int_equal(unlink(res), 0);
	tp_tmpreg_reset();
}

/* tp_file_tx: registered from before its temporary file exists until it
 * is renamed or removed, so an interrupt in between removes it. */
static void test_file_tx_registers(void **state)
{
	(void)state;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/out.json", dir);
	struct tp_file_tx tx;
	assert_int_equal(tp_file_tx_begin(&tx, path, NULL), 0);
	assert_true(tx.tmpreg > 0);
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", tx.tmp_path);
	assert_int_equal(tp_file_tx_commit(&tx), 0);
	assert_int_equal(tp_tmpreg_unlink_all(), 0); /* committed: nothing left */
	assert_true(exists(path));

	tp_tmpreg_reset(); /* a handler ran: a new process, as it were */
	assert_int_equal(tp_file_tx_begin(&tx, path, ".mine.tmp"), 0);
	assert_true(tx.tmpreg > 0);
	snprintf(tmp, sizeof(tmp), "%s", tx.tmp_path);
	fputs("partial", tx.fp);
	fflush(tx.fp);
	assert_int_equal(tp_tmpreg_unlink_all(), 1); /* "interrupted" */
	assert_false(exists(tmp));
	tp_file_tx_abort(&tx, false);
	assert_true(exists(path)); /* the published file is never touched */

	/* Aborted and kept-as-evidence temporaries are no longer registered. */
	tp_tmpreg_reset();
	assert_int_equal(tp_file_tx_begin(&tx, path, NULL), 0);
	snprintf(tmp, sizeof(tmp), "%s", tx.tmp_path);
	tp_file_tx_abort(&tx, true);
	assert_int_equal(tp_tmpreg_unlink_all(), 0);
	assert_true(exists(tmp));
}

/* Writers on several threads take and give back slots at once (CAS on
 * the slot state): no slot is lost or shared, the registry ends empty. */
struct churn {
	int id;
	int rounds;
};

static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	char p[PATH_MAX];
	for (int i = 0; i < c->rounds; i++) {
		snprintf(p, sizeof(p), "%s/t%d_%d.tmp", dir, c->id, i);
		int h = tp_tmpreg_add(p);
		touch(p);
		if (h > 0)
			tp_tmpreg_remove(h);
		unlink(p);
	}
	return NULL;
}

/* A writer on another thread registered its file and creates it only
 * after the handler's first pass: the handler waits for its
 * tp_tmpreg_created() and removes the file (adversarial trial of 2 Dec: a
 * PMU shard created just then was left). */
struct late {
	const char *path;
	int handle;
	_Atomic int registered;
};

static void *late_writer(void *arg)
{
	struct late *l = arg;
	l->handle = tp_tmpreg_add(l->path);
	atomic_store(&l->registered, 1);
	usleep(50000); /* the handler's first pass runs meanwhile */
	touch(l->path);
	tp_tmpreg_created(l->handle);
	return NULL;
}

static void test_late_creation(void **state)
{
	(void)state;
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/late.tmp", dir);
	struct late l = { .path = p };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, late_writer, &l), 0);
	while (!atomic_load(&l.registered))
		usleep(100);
	assert_true(l.handle > 0);
	assert_int_equal(tp_tmpreg_unlink_all(), 1);
	assert_false(exists(p));
	pthread_join(t, NULL);
	assert_false(exists(p));
	/* From the handler's start nothing new is registered: the caller is
	 * told not to create its file. */
	char q[PATH_MAX];
	snprintf(q, sizeof(q), "%s/after.tmp", dir);
	assert_int_equal(tp_tmpreg_add(q), -ECANCELED);
	struct tp_file_tx tx;
	assert_int_equal(tp_file_tx_begin(&tx, q, NULL), -ECANCELED);
	assert_false(exists(q));
	/* A writer that never reports its creation delays the handler by
	 * TP_TMPREG_CREATE_WAIT_NS at most. */
	tp_tmpreg_reset();
	int h = tp_tmpreg_add(q);
	assert_true(h > 0);
	touch(q);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(tp_tmpreg_unlink_all(), 1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long long ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	assert_true(ns >= TP_TMPREG_CREATE_WAIT_NS);
	assert_false(exists(q));
}

static void test_concurrent_writers(void **state)
{
	(void)state;
	pthread_t t[4];
	struct churn c[4];
	for (int i = 0; i < 4; i++) {
		c[i] = (struct churn){ .id = i, .rounds = 2000 };
		assert_int_equal(pthread_create(&t[i], NULL, churn_thread, &c[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	/* Everything was given back: the registry is empty again. */
	char p[PATH_MAX];
	for (int i = 0; i < TP_TMPREG_SLOTS; i++) {
		snprintf(p, sizeof(p), "%s/again%d", dir, i);
		assert_true(tp_tmpreg_add(p) > 0);
	}
	assert_int_equal(tp_tmpreg_add(p), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unlink_registered_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slots_and_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_made_dirs_and_note, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_tx_registers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_creation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
