/* SPDX-License-Identifier: MIT */
/* Unit tests of base/file: temp-then-publish, mkdir -p, whole-file reads. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "unit_helpers.h"

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = uh_mkdtemp();
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	uh_rm_rf(dir);
	dir = NULL;
	return 0;
}

static char *join(const char *name)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Content of @path, or NULL if it cannot be read. */
static char *slurp(const char *path)
{
	char *data = NULL;
	size_t len = 0;
	if (tp_read_file(path, &data, &len) != 0)
		return NULL;
	return data;
}

static void write_plain(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_publish(void **state)
{
	(void)state;
	char *path = join("pmu.csv");
	struct tp_file_tx tx;
	assert_int_equal(tp_file_tx_begin(&tx, path, NULL), 0);
	assert_non_null(tx.fp);
	assert_string_equal(tx.path, path);
	char *want_tmp = join("pmu.csv.tmp");
	assert_string_equal(tx.tmp_path, want_tmp);

	fprintf(tx.fp, "task_id,func_id\n1,2\n");
	/* Not published before commit. */
	assert_false(exists(path));
	assert_true(exists(want_tmp));

	assert_int_equal(tp_file_tx_commit(&tx), 0);
	assert_null(tx.fp);
	assert_null(tx.path);
	assert_null(tx.tmp_path);
	assert_false(exists(want_tmp));
	char *got = slurp(path);
	assert_string_equal(got, "task_id,func_id\n1,2\n");

	free(got);
	free(want_tmp);
	free(path);
}

static void test_publish_replaces_and_custom_suffix(void **state)
{
	(void)state;
	char *path = join("deps.json");
	write_plain(path, "old content");
	struct tp_file_tx tx;
	assert_int_equal(tp_file_tx_begin(&tx, path, ".part"), 0);
	char *want_tmp = join("deps.json.part");
	assert_string_equal(tx.tmp_path, want_tmp);
	fputs("new", tx.fp);
	/* Readers see the old file whole until the rename. */
	char *before = slurp(path);
	assert_string_equal(before, "old content");
	assert_int_equal(tp_file_tx_commit(&tx), 0);
	char *after = slurp(path);
	assert_string_equal(after, "new");
	assert_false(exists(want_tmp));
	free(before);
	free(after);
	free(want_tmp);
	free(path);
}

static void test_commit_onto_directory_keeps_temp(void **state)
{
	(void)state;
	char *path = join("out");
	assert_int_equal(mkdir(path, 0755), 0);
	struct tp_file_tx tx;
	assert_int_equal(tp_file_tx_begin(&tx, path, NULL), 0);
	char *tmp = strdup(tx.tmp_path);
	fputs("evidence", tx.fp);

	tp_clear_error();
	int rc = tp_file_tx_commit(&tx);
	printf("commit onto a directory: %d (%s)\n", rc, tp_last_error());
	assert_int_equal(rc, -EISDIR);
	assert_non_null(strstr(tp_last_error(), path));
	assert_non_null(strstr(tp_last_error(), "temporary file kept"));
	/* The temp file stays, complete; the directory is untouched. */
	char *kept = slurp(tmp);
	assert_string_equal(kept, "evidence");
	assert_true(is_dir(path));
	assert_null(tx.fp);
	assert_null(tx.tmp_path);
	/* Aborting a finished transaction is harmless. */
	tp_file_tx_abort(&tx, false);
	assert_true(exists(tmp));

	free(kept);
	free(tmp);
	free(path);
}

static void test_abort_removes_temp(void **state)
{
	(void)state;
	char *path = join("swimlane.json");
	struct tp_file_tx tx;
	assert_int_equal(tp_file_tx_begin(&tx, path, NULL), 0);
	char *tmp = strdup(tx.tmp_path);
	fputs("partial", tx.fp);
	tp_file_tx_abort(&tx, false);
	assert_false(exists(tmp));
	assert_false(exists(path));
	assert_null(tx.fp);
	assert_null(tx.path);
	tp_file_tx_abort(&tx, false);
	free(tmp);
	free(path);
}

static void test_abort_keeps_temp(void **state)
{
	(void)state;
	char *path = join("swimlane.json");
	struct tp_file_tx tx;
	assert_int_equal(tp_file_tx_begin(&tx, path, NULL), 0);
	char *tmp = strdup(tx.tmp_path);
	fputs("partial but flushed", tx.fp);
	tp_file_tx_abort(&tx, true);
	assert_false(exists(path));
	char *kept = slurp(tmp);
	assert_string_equal(kept, "partial but flushed");
	free(kept);
	free(tmp);
	free(path);
}

static void test_begin_errors(void **state)
{
	(void)state;
	char *path = join("no/such/dir/pmu.csv");
	struct tp_file_tx tx;
	memset(&tx, 0x5a, sizeof(tx));
	int rc = tp_file_tx_begin(&tx, path, NULL);
	printf("begin in missing dir: %d (%s)\n", rc, tp_last_error());
	assert_int_equal(rc, -ENOENT);
	assert_non_null(strstr(tp_last_error(), "pmu.csv.tmp"));
	assert_null(tx.fp);
	assert_null(tx.path);
	assert_null(tx.tmp_path);

	assert_int_equal(tp_file_tx_begin(&tx, "", NULL), -EINVAL);
	assert_int_equal(tp_file_tx_begin(&tx, NULL, NULL), -EINVAL);
	assert_int_equal(tp_file_tx_begin(&tx, path, ""), -EINVAL);
	assert_int_equal(tp_file_tx_begin(NULL, path, NULL), -EINVAL);
	assert_int_equal(tp_file_tx_commit(&tx), -EINVAL);
	free(path);
}

static void test_write_file_atomic(void **state)
{
	(void)state;
	char *path = join("blob.bin");
	size_t n = 1 << 20;
	unsigned char *data = malloc(n);
	assert_non_null(data);
	for (size_t i = 0; i < n; i++)
		data[i] = (unsigned char)(i * 131 + 7);
	assert_int_equal(tp_write_file_atomic(path, data, n), 0);

	char *back = NULL;
	size_t len = 0;
	assert_int_equal(tp_read_file(path, &back, &len), 0);
	assert_int_equal(len, n);
	assert_memory_equal(back, data, n);
	assert_int_equal(back[n], '\0');
	free(back);

	assert_int_equal(tp_write_file_atomic(path, NULL, 0), 0);
	assert_int_equal(tp_read_file(path, &back, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(back, "");
	free(back);

	char *tmp = join("blob.bin.tmp");
	assert_false(exists(tmp));
	char *missing = join("missing/blob.bin");
	assert_int_equal(tp_write_file_atomic(missing, "x", 1), -ENOENT);
	free(missing);
	free(tmp);
	free(data);
	free(path);
}

static void test_mkdir_p(void **state)
{
	(void)state;
	char *deep = join("a/b//c/");
	assert_int_equal(tp_mkdir_p(deep, 0755), 0);
	char *c = join("a/b/c");
	assert_true(is_dir(c));
	/* Existing directories are fine. */
	assert_int_equal(tp_mkdir_p(deep, 0755), 0);
	assert_int_equal(tp_mkdir_p(dir, 0755), 0);

	char *file = join("a/file");
	write_plain(file, "x");
	char *under_file = join("a/file/sub");
	tp_clear_error();
	int rc = tp_mkdir_p(under_file, 0755);
	printf("mkdir under a file: %d (%s)\n", rc, tp_last_error());
	assert_int_equal(rc, -ENOTDIR);
	assert_non_null(strstr(tp_last_error(), "a/file"));
	assert_int_equal(tp_mkdir_p(file, 0755), -ENOTDIR);
	assert_int_equal(tp_mkdir_p("", 0755), -EINVAL);
	assert_int_equal(tp_mkdir_p(NULL, 0755), -EINVAL);

	free(under_file);
	free(file);
	free(c);
	free(deep);
}

static void test_read_file(void **state)
{
	(void)state;
	char *path = join("text.txt");
	write_plain(path, "line1\nline2\n");
	char *data = (char *)0x1;
	size_t len = 0;
	assert_int_equal(tp_read_file(path, &data, &len), 0);
	assert_int_equal(len, 12);
	assert_string_equal(data, "line1\nline2\n");
	free(data);

	/* A length is optional. */
	assert_int_equal(tp_read_file(path, &data, NULL), 0);
	assert_string_equal(data, "line1\nline2\n");
	free(data);

	/* /proc files report size 0 but have content. */
	assert_int_equal(tp_read_file("/proc/self/status", &data, &len), 0);
	assert_true(len > 0);
	assert_non_null(strstr(data, "Name:"));
	assert_int_equal(strlen(data), len);
	free(data);

	char *missing = join("missing.txt");
	assert_int_equal(tp_read_file(missing, &data, &len), -ENOENT);
	assert_null(data);
	assert_non_null(strstr(tp_last_error(), "missing.txt"));
	assert_int_equal(tp_read_file(dir, &data, &len), -EISDIR);
	assert_null(data);
	assert_int_equal(tp_read_file(path, NULL, &len), -EINVAL);
	free(missing);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_publish, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_publish_replaces_and_custom_suffix, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_commit_onto_directory_keeps_temp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_removes_temp, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_abort_keeps_temp, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_begin_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_write_file_atomic, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_p, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_file, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
