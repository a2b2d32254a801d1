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
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "base/tmp_registry.h"
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
	tp_mkdir_set_test_point(NULL, NULL); /* a failed test's */
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

/* Number of entries of directory @d besides "." and "..". */
static int count_entries(const char *d)
{
	DIR *dh = opendir(d);
	if (!dh)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dh)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(dh);
	return n;
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
	/* "<path>.XXXXXX.tmp": unique per transaction (F7) */
	char *want_tmp = strdup(tx.tmp_path);
	size_t pl = strlen(path);
	assert_int_equal(strlen(want_tmp), pl + 1 + 6 + 4);
	assert_memory_equal(want_tmp, path, pl);
	assert_int_equal(want_tmp[pl], '.');
	assert_string_equal(want_tmp + pl + 7, ".tmp");

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

/* F1/F6: a directory output fails at begin, before anything is written */
static void test_begin_onto_directory(void **state)
{
	(void)state;
	char *path = join("out");
	assert_int_equal(mkdir(path, 0755), 0);
	struct tp_file_tx tx;
	tp_clear_error();
	assert_int_equal(tp_file_tx_begin(&tx, path, NULL), -EISDIR);
	char want[4200];
	snprintf(want, sizeof(want), "%s: is a directory", path);
	assert_string_equal(tp_last_error(), want);
	assert_null(tx.fp);
	assert_true(is_dir(path));
	assert_int_equal(count_entries(dir), 1); /* only "out" */
	free(path);
}

/* With an explicit suffix a directory is reported by the rename at commit
 * (the older contract the PMU collector logs), and the temp is removed. */
static void test_suffix_directory_at_commit(void **state)
{
	(void)state;
	char *path = join("pmu.csv");
	assert_int_equal(mkdir(path, 0755), 0);
	struct tp_file_tx tx;
	assert_int_equal(tp_file_tx_begin(&tx, path, ".merge.tmp"), 0);
	char *tmp = join("pmu.csv.merge.tmp");
	assert_string_equal(tx.tmp_path, tmp);
	fputs("rows", tx.fp);
	assert_int_equal(tp_file_tx_commit(&tx), -EISDIR);
	assert_false(exists(tmp));
	assert_true(is_dir(path));
	free(tmp);
	free(path);
}

/* F6: a failed commit removes its temporary file unless the caller asked
 * for it as evidence with TP_FILE_TX_KEEP_TEMP_ON_FAILURE. */
static void test_commit_failure_temp(void **state)
{
	(void)state;
	char *path = join("out");
	for (int keep = 0; keep < 2; keep++) {
		struct tp_file_tx tx;
		assert_int_equal(tp_file_tx_begin_flags(&tx, path, NULL,
							keep ? TP_FILE_TX_KEEP_TEMP_ON_FAILURE : 0), 0);
		char *tmp = strdup(tx.tmp_path);
		fputs("evidence", tx.fp);
		/* the path becomes a directory after begin: rename fails */
		assert_int_equal(mkdir(path, 0755), 0);
		tp_clear_error();
		int rc = tp_file_tx_commit(&tx);
		printf("commit onto a directory (keep=%d): %d (%s)\n", keep, rc, tp_last_error());
		assert_int_equal(rc, -EISDIR);
		assert_non_null(strstr(tp_last_error(), path));
		assert_true(is_dir(path));
		assert_null(tx.fp);
		assert_null(tx.tmp_path);
		if (keep) {
			assert_non_null(strstr(tp_last_error(), "kept"));
			char *kept = slurp(tmp);
			assert_string_equal(kept, "evidence");
			free(kept);
			unlink(tmp);
		} else {
			assert_false(exists(tmp));
		}
		tp_file_tx_abort(&tx, false); /* finished: harmless */
		assert_int_equal(rmdir(path), 0);
		free(tmp);
	}
	free(path);
}

/* F1: devices and FIFOs are written in place, never replaced; a link's
 * target is written, the link stays. */
static void test_special_outputs(void **state)
{
	(void)state;
	struct stat st;
	struct tp_file_tx tx;
	char *nul = join("mynull"), *full = join("myfull");
	assert_int_equal(mknod(nul, S_IFCHR | 0666, makedev(1, 3)), 0);
	assert_int_equal(mknod(full, S_IFCHR | 0666, makedev(1, 7)), 0);
	assert_int_equal(tp_file_tx_begin(&tx, nul, NULL), 0);
	assert_true(tx.direct);
	assert_null(tx.tmp_path);
	fputs("discarded", tx.fp);
	assert_int_equal(tp_file_tx_commit(&tx), 0);
	assert_int_equal(lstat(nul, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(count_entries(dir), 2);

	assert_int_equal(tp_file_tx_begin(&tx, full, NULL), 0);
	fputs("no room", tx.fp);
	assert_int_equal(tp_file_tx_commit(&tx), -ENOSPC);
	char want[4200];
	snprintf(want, sizeof(want), "%s: write failed: No space left on device", full);
	assert_string_equal(tp_last_error(), want);
	assert_int_equal(lstat(full, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(count_entries(dir), 2);

	/* a FIFO without a reader: an error at once, not a hang */
	char *fifo = join("fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(tp_file_tx_begin(&tx, fifo, NULL), -ENXIO);
	snprintf(want, sizeof(want), "%s: FIFO has no reader", fifo);
	assert_string_equal(tp_last_error(), want);
	/* with a reader it is written through */
	int rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(rfd >= 0);
	assert_int_equal(tp_file_tx_begin(&tx, fifo, NULL), 0);
	fputs("piped", tx.fp);
	assert_int_equal(tp_file_tx_commit(&tx), 0);
	char buf[16] = {0};
	assert_int_equal(read(rfd, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "piped");
	close(rfd);
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));

	/* a symbolic link: the target is replaced atomically, the link kept */
	char *target = join("target.txt"), *link = join("link.json");
	write_plain(target, "keep");
	assert_int_equal(symlink("target.txt", link), 0);
	assert_int_equal(tp_write_file_atomic(link, "new", 3), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	char *got = slurp(target);
	assert_string_equal(got, "new");
	free(got);
	/* a dangling link is refused, nothing created */
	assert_int_equal(unlink(target), 0);
	assert_int_equal(tp_write_file_atomic(link, "x", 1), -ENOENT);
	assert_non_null(strstr(tp_last_error(), "link.json is a symbolic link whose target "));
	assert_false(exists(target));
	assert_int_equal(count_entries(dir), 4); /* mynull myfull fifo link.json */
	free(nul);
	free(full);
	free(fifo);
	free(target);
	free(link);
}

/* F7: two open transactions on one path never share a temporary file; the
 * last commit wins whole. */
static void test_concurrent_temps(void **state)
{
	(void)state;
	char *path = join("same.json");
	struct tp_file_tx a, b;
	assert_int_equal(tp_file_tx_begin(&a, path, NULL), 0);
	assert_int_equal(tp_file_tx_begin(&b, path, NULL), 0);
	assert_string_not_equal(a.tmp_path, b.tmp_path);
	fputs("from a, the longer one", a.fp);
	fputs("from b", b.fp);
	assert_int_equal(tp_file_tx_commit(&b), 0);
	assert_int_equal(tp_file_tx_commit(&a), 0);
	char *got = slurp(path);
	assert_string_equal(got, "from a, the longer one");
	free(got);
	assert_int_equal(count_entries(dir), 1);
	free(path);
}

/* A valid file name of up to NAME_MAX bytes: the temporary name is cut to
 * fit NAME_MAX (in the same directory), and the file lands in place. */
static void test_long_name(void **state)
{
	(void)state;
	static const size_t lens[] = { 200, 245, 248, 250, 255 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		char name[256];
		memset(name, 'n', lens[i]);
		memcpy(name + lens[i] - 5, ".json", 5);
		name[lens[i]] = '\0';
		char *path = join(name);
		struct tp_file_tx a, b;
		assert_int_equal(tp_file_tx_begin(&a, path, NULL), 0);
		assert_int_equal(tp_file_tx_begin(&b, path, NULL), 0);
		assert_string_not_equal(a.tmp_path, b.tmp_path); /* still unique */
		const char *base = strrchr(a.tmp_path, '/') + 1;
		assert_memory_equal(a.tmp_path, path, strlen(dir) + 1); /* same dir */
		assert_true(strlen(base) <= 255);
		size_t keep = lens[i] + 11 <= 255 ? lens[i] : 255 - 11;
		assert_int_equal(strlen(base), keep + 11);
		assert_memory_equal(base, name, keep);
		assert_string_equal(base + keep + 7, ".tmp");
		fputs("b", b.fp);
		tp_file_tx_abort(&b, false);
		fputs("long", a.fp);
		assert_int_equal(tp_file_tx_commit(&a), 0);
		char *got = slurp(path);
		assert_string_equal(got, "long");
		free(got);
		assert_int_equal(count_entries(dir), 1);
		assert_int_equal(unlink(path), 0);
		free(path);
	}
	/* a cut never splits a UTF-8 sequence: "a" and 123 two-byte
	 * characters, 252 bytes; byte 244 is inside the 122nd character */
	char name[256] = "a";
	for (int i = 0; i < 123; i++)
		strcat(name, "\xc3\xa9");
	strcat(name, ".json");
	char *path = join(name);
	struct tp_file_tx tx;
	assert_int_equal(tp_file_tx_begin(&tx, path, NULL), 0);
	const char *base = strrchr(tx.tmp_path, '/') + 1;
	assert_int_equal(strlen(base), 243 + 11);
	assert_memory_equal(base, name, 243);
	tp_file_tx_abort(&tx, false);
	assert_int_equal(count_entries(dir), 0);
	free(path);
	/* a name past NAME_MAX is the user's error, named as given */
	char big[300];
	memset(big, 'x', 256);
	big[256] = '\0';
	path = join(big);
	assert_int_equal(tp_file_tx_begin(&tx, path, NULL), -ENAMETOOLONG);
	assert_non_null(strstr(tp_last_error(), "x: cannot open for writing: File name too long"));
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
	/* the message names the user's path, not the temporary name */
	assert_non_null(strstr(tp_last_error(), "pmu.csv: cannot open for writing"));
	assert_null(strstr(tp_last_error(), ".tmp"));
	assert_null(strstr(tp_last_error(), "it exists"));
	/* an existing file whose folder takes no new file (/proc/<pid>): the
	 * reason is the folder's */
	struct tp_file_tx tx2;
	assert_int_equal(tp_file_tx_begin(&tx2, "/proc/self/mem", NULL), -ENOENT);
	assert_non_null(strstr(tp_last_error(), "/proc/self/mem: cannot open for writing: No such "
						"file or directory (it exists: it is replaced "
						"through a new file beside it, and its folder "
						"takes none)"));
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
	assert_int_equal(count_entries(dir), 1); /* no temporary file left */
	char *missing = join("missing/blob.bin");
	assert_int_equal(tp_write_file_atomic(missing, "x", 1), -ENOENT);
	free(missing);
	free(tmp);
	free(data);
	free(path);
}

/* What tp_mkdir_p() is about to make, and removing it again: deepest
 * first, stopping at a folder that is not empty or was there before. */
static void test_mkdir_made(void **state)
{
	(void)state;
	char *had = join("had");
	assert_int_equal(tp_mkdir_p(had, 0755), 0);
	assert_int_equal(tp_mkdir_missing_len(had), 0);
	assert_int_equal(tp_mkdir_missing_len(""), 0);
	assert_int_equal(tp_mkdir_missing_len(NULL), 0);

	char *deep = join("had/x//y/z");
	const size_t top = tp_mkdir_missing_len(deep);
	assert_int_equal(top, strlen(had) + 2); /* ".../had/x" */
	char *trail = join("had/x/");
	assert_int_equal(tp_mkdir_missing_len(trail), top);
	assert_int_equal(tp_mkdir_p(deep, 0755), 0);
	assert_int_equal(tp_mkdir_missing_len(deep), 0);

	/* Not empty: nothing above the full folder goes. */
	char *full = join("had/x/y/f");
	write_plain(full, "f");
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", deep);
	assert_false(tp_rmdir_made(buf, top));
	char *y = join("had/x//y");
	assert_string_equal(buf, y); /* the last one tried, cut at its '/' */
	char *z = join("had/x/y/z");
	assert_false(is_dir(z));
	assert_true(is_dir(y));

	/* Emptied: the rest goes, the folder that was there stays. */
	assert_int_equal(unlink(full), 0);
	snprintf(buf, sizeof(buf), "%s", y);
	assert_true(tp_rmdir_made(buf, top));
	char *x = join("had/x");
	assert_string_equal(buf, x);
	assert_false(is_dir(x));
	assert_true(is_dir(had));
	assert_false(tp_rmdir_made(buf, 0));
	assert_false(tp_rmdir_made(buf, strlen(buf) + 1));

	/* A trailing slash: every folder made goes (it stopped after the
	 * deepest one). */
	char *ts = join("had/q/r/");
	const size_t tq = tp_mkdir_missing_len(ts);
	assert_int_equal(tp_mkdir_p(ts, 0755), 0);
	snprintf(buf, sizeof(buf), "%s", ts);
	assert_true(tp_rmdir_made(buf, tq));
	char *q = join("had/q");
	assert_false(is_dir(q));
	assert_true(is_dir(had));
	/* "new/../had": the folders made are not the path's prefixes, so
	 * none is reported made (removing by the path would take "had"). */
	char *dd = join("new/../had");
	assert_int_equal(tp_mkdir_missing_len(dd), 0);
	char *dot = join("new/./x");
	assert_int_equal(tp_mkdir_missing_len(dot), 0);
	free(dot);
	free(dd);
	free(q);
	free(ts);

	free(x);
	free(z);
	free(y);
	free(full);
	free(trail);
	free(deep);
	free(had);
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

/*
 * A concurrent run that failed removes the empty folders it made
 * (tp_rmdir_made()), which can be the ones this process just made or found
 * for its own output: mkdir(2) in them then fails with ENOENT. The test
 * point removes them just before a chosen mkdir(2), as that run would.
 */
struct vanish {
	const char *at;	  /* the mkdir(2) before which they go */
	const char *also; /* NULL, or an empty folder removed first */
	const char *gone; /* what goes: this folder and those it holds */
	const char *top;  /* the shallowest of them */
	int times;	  /* how many times, then no more */
	int calls;	  /* mkdir(2) calls of @at seen */
};

static void vanish_point(const char *path, void *arg)
{
	struct vanish *v = arg;
	if (strcmp(path, v->at))
		return;
	v->calls++;
	if (v->times <= 0)
		return;
	v->times--;
	if (v->also)
		assert_int_equal(rmdir(v->also), 0);
	/* Deepest first, as tp_rmdir_made(): only while empty. */
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", v->gone);
	assert_true(tp_rmdir_made(buf, strlen(v->top)));
	assert_false(is_dir(v->top));
}

static void test_mkdir_p_parent_vanishes(void **state)
{
	(void)state;
	char *top = join("new"), *a = join("new/a"), *b = join("new/a/b");
	/* ".../new" made, then removed before ".../new/a" is made in it. */
	struct vanish v = { .at = a, .gone = top, .top = top, .times = 1 };
	tp_mkdir_set_test_point(vanish_point, &v);
	int rc = tp_mkdir_p(b, 0755);
	printf("tp_mkdir_p, its first folder removed once: %d (%s), %d mkdir calls\n", rc,
	       rc ? tp_last_error() : "ok", v.calls);
	assert_int_equal(rc, 0);
	assert_true(is_dir(b));
	assert_int_equal(v.times, 0);
	assert_int_equal(v.calls, 2); /* a second pass */

	/* Removed at every pass: a bounded number of passes, then the error
	 * as before (mkdir's ENOENT, naming the folder). */
	assert_int_equal(rmdir(b), 0);
	assert_int_equal(rmdir(a), 0);
	assert_int_equal(rmdir(top), 0);
	v = (struct vanish){ .at = a, .gone = top, .top = top, .times = 1000 };
	rc = tp_mkdir_p(b, 0755);
	printf("removed every time: %d (%s), %d mkdir calls\n", rc, tp_last_error(), v.calls);
	assert_int_equal(rc, -ENOENT);
	assert_int_equal(v.calls, 8);
	char want[2 * PATH_MAX + 64];
	snprintf(want, sizeof(want), "%s: cannot create directory %s: %s", b, a, strerror(ENOENT));
	assert_string_equal(tp_last_error(), want);
	tp_mkdir_set_test_point(NULL, NULL);
	free(b);
	free(a);
	free(top);
}

static void test_mkdir_fresh(void **state)
{
	(void)state;
	char *top = join("new"), *root = join("new/a/b"), *run = join("new/a/b/run");
	char *run2 = join("new/a/b/run_2");
	char got[PATH_MAX];
	size_t made = 0;

	/* Taken names get _2, _3; the folders made for the root are
	 * reported from the first call only (later ones made none). */
	tp_tmpreg_reset();
	assert_int_equal(tp_mkdir_fresh(root, "run", got, sizeof(got), &made), 0);
	assert_string_equal(got, run);
	assert_int_equal(made, strlen(top));
	assert_int_equal(tp_mkdir_fresh(root, "run", got, sizeof(got), &made), 0);
	assert_string_equal(got, run2);
	assert_int_equal(made, strlen(top));

	/* The chain made, then removed by a run that failed just before the
	 * new folder's mkdir(2), three times over: made again each time, and
	 * reported as made here (published for an interrupt). */
	assert_int_equal(rmdir(run2), 0);
	assert_int_equal(rmdir(run), 0);
	assert_int_equal(rmdir(root), 0);
	char *a = join("new/a");
	assert_int_equal(rmdir(a), 0);
	assert_int_equal(rmdir(top), 0);
	made = 0;
	struct vanish v = { .at = run, .gone = root, .top = top, .times = 3 };
	tp_mkdir_set_test_point(vanish_point, &v);
	int rc = tp_mkdir_fresh(root, "run", got, sizeof(got), &made);
	printf("tp_mkdir_fresh, the root removed 3 times: %d (%s), %d mkdir calls\n", rc,
	       rc ? tp_last_error() : got, v.calls);
	assert_int_equal(rc, 0);
	assert_string_equal(got, run);
	assert_true(is_dir(run));
	assert_int_equal(v.times, 0);
	assert_int_equal(v.calls, 4);
	assert_int_equal(made, strlen(top));
	/* Published for an interrupt: the run folder gone, the rest goes. */
	assert_int_equal(rmdir(run), 0);
	const char *gone = tp_tmpreg_remove_made_dirs();
	assert_non_null(gone);
	assert_string_equal(gone, top);
	assert_false(is_dir(top));
	tp_tmpreg_reset();

	/* "run" taken by another run, which fails: before "run_2" is made,
	 * it removes its run folder, then the chain. The next pass makes the
	 * chain again, now reported as made here (the first found it), and
	 * starts from "run", free again: mkdir(2) claimed it. */
	assert_int_equal(tp_mkdir_p(run, 0755), 0);
	made = 0;
	v = (struct vanish){ .at = run2, .also = run, .gone = root, .top = top, .times = 1 };
	rc = tp_mkdir_fresh(root, "run", got, sizeof(got), &made);
	printf("\"run\" taken, then it and the root removed: %d (%s)\n", rc,
	       rc ? tp_last_error() : got);
	assert_int_equal(rc, 0);
	assert_string_equal(got, run);
	assert_int_equal(v.times, 0);
	assert_int_equal(made, strlen(top));
	assert_false(is_dir(run2));

	/* Removed at every pass: bounded, with the message as before. */
	assert_int_equal(rmdir(run), 0);
	v = (struct vanish){ .at = run, .gone = root, .top = top, .times = 1000 };
	made = 0;
	rc = tp_mkdir_fresh(root, "run", got, sizeof(got), &made);
	printf("removed every time: %d (%s)\n", rc, tp_last_error());
	assert_int_equal(rc, -ENOENT);
	assert_int_equal(v.times, 1000 - 8);
	char want[2 * PATH_MAX + 64];
	snprintf(want, sizeof(want), "cannot create output folder %s: %s", run, strerror(ENOENT));
	assert_string_equal(tp_last_error(), want);
	tp_mkdir_set_test_point(NULL, NULL);
	tp_tmpreg_reset();

	/* Errors other than a vanished folder come at once. */
	char *file = join("file");
	write_plain(file, "x");
	made = 0;
	assert_int_equal(tp_mkdir_fresh(file, "run", got, sizeof(got), &made), -ENOTDIR);
	assert_int_equal(made, 0);
	assert_int_equal(tp_mkdir_fresh(dir, "run", got, 8, &made), -ENAMETOOLONG);
	free(file);
	free(a);
	free(run2);
	free(run);
	free(root);
	free(top);
}

/* tp_run_failed() and tp_run_result_value() read the result.txt beside a
 * file of a run folder: "key value" lines, LF or CRLF, the first of a key
 * wins, values cut to the buffer; no result.txt, a directory of that name
 * or a missing key give false and "". */
static void test_run_result(void **state)
{
	(void)state;
	char *res = join("result.txt"), *rec = join("l2_swimlane_records.json");
	char val[8], why[64];
	assert_false(tp_run_result_value(rec, "platform", val, sizeof(val)));
	assert_string_equal(val, "");
	assert_false(tp_run_failed(rec, why, sizeof(why)));

	write_plain(res, "callable synthetic\r\nplatform a5sim\r\nplatform a2a3sim\n"
			 "platforms x\nstatus FAILED\nerror stalled for 10 s\n");
	assert_true(tp_run_result_value(rec, "platform", val, sizeof(val)));
	assert_string_equal(val, "a5sim"); /* no '\r', the first line of the key */
	assert_true(tp_run_result_value(rec, "callable", val, sizeof(val)));
	assert_string_equal(val, "synthet"); /* cut to the buffer: 7 bytes + NUL */
	assert_false(tp_run_result_value(rec, "case", val, sizeof(val)));
	assert_string_equal(val, "");
	assert_false(tp_run_result_value(rec, "plat", val, sizeof(val))); /* whole keys */
	assert_true(tp_run_failed(rec, why, sizeof(why)));
	assert_string_equal(why, "stalled for 10 s");

	write_plain(res, "platform a2a3sim\n");
	assert_false(tp_run_failed(rec, why, sizeof(why)));
	assert_string_equal(why, "");

	assert_int_equal(unlink(res), 0);
	assert_int_equal(mkdir(res, 0755), 0); /* not a regular file */
	assert_false(tp_run_result_value(rec, "platform", val, sizeof(val)));
	assert_int_equal(rmdir(res), 0);
	free(res);
	free(rec);
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

/* A dangling or looping link is named, not hidden behind "File exists". */
static void test_mkdir_p_symlinks(void **state)
{
	(void)state;
	char *a = join("A"), *b = join("B"), *d = join("d"), *sub = join("A/sub");
	char why[8192];
	assert_int_equal(symlink(b, a), 0);
	assert_int_equal(symlink(a, b), 0);
	assert_int_equal(symlink("/nonexistent/x", d), 0);

	assert_int_equal(tp_mkdir_p(a, 0755), -ELOOP);
	assert_non_null(strstr(tp_last_error(), "is a symbolic link in a loop"));
	assert_non_null(strstr(tp_last_error(), "Too many levels of symbolic links"));
	assert_null(strstr(tp_last_error(), "File exists"));
	assert_int_equal(tp_mkdir_p(sub, 0755), -ELOOP);
	assert_non_null(strstr(tp_last_error(), "is a symbolic link in a loop"));

	assert_int_equal(tp_mkdir_p(d, 0755), -ENOENT);
	assert_non_null(strstr(tp_last_error(),
			       "is a symbolic link whose target /nonexistent/x does not exist"));

	/* The first bad component is named, whatever follows it. */
	char *deep = join("d/x/y");
	assert_true(tp_path_bad_link(deep, why, sizeof(why)));
	assert_non_null(strstr(why, "/d is a symbolic link whose target"));
	assert_true(tp_path_bad_link(sub, why, sizeof(why)));
	assert_non_null(strstr(why, "/A is a symbolic link in a loop"));
	/* Plain paths and good links: nothing to say. */
	char *ok = join("ok"), *lok = join("lok");
	assert_int_equal(tp_mkdir_p(ok, 0755), 0);
	assert_int_equal(symlink(ok, lok), 0);
	assert_false(tp_path_bad_link(lok, why, sizeof(why)));
	assert_false(tp_path_bad_link(dir, why, sizeof(why)));
	char *missing = join("missing/file");
	assert_false(tp_path_bad_link(missing, why, sizeof(why)));
	assert_int_equal(tp_mkdir_p(lok, 0755), 0); /* a link to a folder is fine */
	free(a), free(b), free(d), free(sub), free(deep), free(ok), free(lok), free(missing);
}

/* tp_stream_flush(): the reason of a failed write, also when the stream
 * kept only its error flag (an earlier write, its errno gone). */
static void test_stream_flush(void **state)
{
	(void)state;
	assert_int_equal(tp_stream_flush(NULL), -EINVAL);

	char *full = join("full");
	assert_int_equal(mknod(full, S_IFCHR | 0666, makedev(1, 7)), 0);
	FILE *f = fopen(full, "w");
	assert_non_null(f);
	fputs("no room", f);
	assert_int_equal(tp_stream_flush(f), -ENOSPC);
	fclose(f);

	/* a pipe whose reader left: EPIPE (SIGPIPE ignored, as main() does) */
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	int p[2];
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	f = fdopen(p[1], "w");
	assert_non_null(f);
	fputs("gone", f);
	assert_int_equal(tp_stream_flush(f), -EPIPE);
	/* the error flag stays; the errno of that write is gone */
	clearerr(f);
	static char big[1 << 17];
	memset(big, 'x', sizeof(big));
	assert_true(fwrite(big, 1, sizeof(big), f) < sizeof(big));
	assert_int_equal(tp_stream_flush(f), -EPIPE);
	fclose(f);
	signal(SIGPIPE, old);
	free(full);
}

/* Past the file-size limit (ulimit -f) with SIGXFSZ ignored, as the
 * taskprof command does: the write fails with EFBIG, the message names
 * the final path, the temporary file is removed. */
/* tp_file_tx_sweep: only "<name>.XXXXXX.tmp" regular files go, in every
 * folder below, not through symbolic links; a transaction's real
 * temporary file matches. */
static void test_sweep(void **state)
{
	(void)state;
	static const char *gone[] = { "a.json.ab12cd.tmp", "sub/b.bin.zz99yy.tmp",
				      "sub/deeper/.x.000000.tmp" };
	static const char *kept[] = { "keep.tmp", "c.AB12CD.tmp", "d.ab12c.tmp", "e.ab12cd.tmpx",
				      "fab12cd.tmp", "result.txt" };
	char *p;
	assert_int_equal(tp_mkdir_p((p = join("sub/deeper")), 0755), 0);
	free(p);
	assert_int_equal(tp_mkdir_p((p = join("dir.ab12cd.tmp")), 0755), 0); /* not a file */
	free(p);
	for (size_t i = 0; i < sizeof(gone) / sizeof(*gone); i++) {
		write_plain((p = join(gone[i])), "x");
		free(p);
	}
	for (size_t i = 0; i < sizeof(kept) / sizeof(*kept); i++) {
		write_plain((p = join(kept[i])), "x");
		free(p);
	}
	/* A link to a folder outside: not followed. */
	char *outside = uh_mkdtemp(), *link = join("sub/link"), *ofile = NULL;
	assert_non_null(outside);
	assert_true(asprintf(&ofile, "%s/x.ab12cd.tmp", outside) > 0);
	write_plain(ofile, "x");
	assert_int_equal(symlink(outside, link), 0);
	free(link);
	/* A transaction left open, as by a writer that died. */
	struct tp_file_tx tx;
	char *real = join("sub/real.csv");
	assert_int_equal(tp_file_tx_begin(&tx, real, NULL), 0);
	fputs("partial", tx.fp);
	fflush(tx.fp);
	char *tmp = strdup(tx.tmp_path);
	assert_true(exists(tmp));

	unsigned n = 99;
	char *top = join("");
	assert_int_equal(tp_file_tx_sweep(top, &n), 0);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < sizeof(gone) / sizeof(*gone); i++) {
		assert_false(exists((p = join(gone[i]))));
		free(p);
	}
	for (size_t i = 0; i < sizeof(kept) / sizeof(*kept); i++) {
		assert_true(exists((p = join(kept[i]))));
		free(p);
	}
	assert_true(is_dir((p = join("dir.ab12cd.tmp"))));
	free(p);
	assert_false(exists(tmp));
	assert_false(exists(real));
	assert_true(exists(ofile));
	free(ofile);
	uh_rm_rf(outside);
	tp_file_tx_abort(&tx, false);
	/* Nothing left to remove; a missing folder is an error. */
	assert_int_equal(tp_file_tx_sweep(top, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(tp_file_tx_sweep((p = join("no/such")), &n), -ENOENT);
	free(p);
	assert_int_equal(n, 0);
	free(top);
	free(tmp);
	free(real);
}

/* tp_newest_run_file: the newest regular outputs/<run>/NAME under the
 * working folder; hidden runs, FIFOs and other names left out; equal
 * times go to the run that sorts first; none: NULL with the folder. */
static void test_newest_run_file(void **state)
{
	(void)state;
	char old_cwd[4096];
	assert_non_null(getcwd(old_cwd, sizeof(old_cwd)));
	assert_int_equal(chdir(dir), 0);
	char *outputs = NULL, *skipped = (char *)"unset";
	assert_null(tp_newest_run_file("x.json", &outputs, &skipped));
	assert_non_null(outputs);
	assert_non_null(strstr(outputs, "/outputs"));
	assert_null(skipped);
	free(outputs);
	static const char *runs[] = { "outputs/a", "outputs/b", "outputs/c", "outputs/.h",
				      "outputs/d" };
	for (size_t i = 0; i < sizeof(runs) / sizeof(*runs); i++)
		assert_int_equal(tp_mkdir_p(runs[i], 0755), 0);
	write_plain("outputs/a/x.json", "a");
	write_plain("outputs/b/x.json", "b");
	write_plain("outputs/.h/x.json", "h");
	write_plain("outputs/d/y.json", "d");
	assert_int_equal(mkfifo("outputs/c/x.json", 0600), 0);
	struct timespec t[2] = { { 1000, 0 }, { 1000, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, "outputs/a/x.json", t, 0), 0);
	t[0].tv_sec = t[1].tv_sec = 2000;
	assert_int_equal(utimensat(AT_FDCWD, "outputs/b/x.json", t, 0), 0);
	t[0].tv_sec = t[1].tv_sec = 3000;
	assert_int_equal(utimensat(AT_FDCWD, "outputs/.h/x.json", t, 0), 0);
	char *best = tp_newest_run_file("x.json", NULL, &skipped);
	assert_non_null(best);
	assert_non_null(strstr(best, "/outputs/b/x.json"));
	free(best);
	/* the FIFO is named as left out; a plain file in outputs/ (no run
	 * folder) and a run without the name are not */
	assert_non_null(skipped);
	assert_non_null(strstr(skipped, "/outputs/c/x.json: a FIFO, not a regular file"));
	free(skipped);
	/* the same time: the run name that sorts first */
	t[0].tv_sec = t[1].tv_sec = 2000;
	assert_int_equal(utimensat(AT_FDCWD, "outputs/a/x.json", t, 0), 0);
	best = tp_newest_run_file("x.json", NULL, NULL);
	assert_non_null(best);
	assert_non_null(strstr(best, "/outputs/a/x.json"));
	free(best);
	/* only left-out names: NULL, and the dangling link or folder named
	 * with why */
	write_plain("outputs/README", "r");
	best = tp_newest_run_file("z.json", NULL, &skipped);
	assert_null(best);
	assert_null(skipped);
	assert_int_equal(symlink("/no/such/target", "outputs/a/z.json"), 0);
	best = tp_newest_run_file("z.json", NULL, &skipped);
	assert_null(best);
	assert_non_null(skipped);
	assert_non_null(
		strstr(skipped, "/outputs/a/z.json: a symbolic link whose target does not exist"));
	free(skipped);
	assert_int_equal(unlink("outputs/a/z.json"), 0);
	assert_int_equal(tp_mkdir_p("outputs/b/z.json", 0755), 0);
	best = tp_newest_run_file("z.json", NULL, &skipped);
	assert_null(best);
	assert_non_null(skipped);
	assert_non_null(strstr(skipped, "/outputs/b/z.json: a folder, not a file"));
	free(skipped);
	assert_int_equal(chdir(old_cwd), 0);
}

static void test_file_size_limit(void **state)
{
	(void)state;
	void (*old)(int) = signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl, lim;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &rl), 0);
	lim = rl;
	lim.rlim_cur = 1000; /* bytes */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

	char *path = join("big.json"), want[4200];
	struct tp_file_tx tx;
	assert_int_equal(tp_file_tx_begin(&tx, path, NULL), 0);
	for (int i = 0; i < 500; i++)
		fprintf(tx.fp, "%08d,", i);
	int rc = tp_file_tx_commit(&tx);
	snprintf(want, sizeof(want), "%s: write failed: File too large", path);
	/* the stream may have kept only its error flag: the limit is found */
	static char big[1 << 16];
	memset(big, 'y', sizeof(big));
	assert_int_equal(tp_file_tx_begin(&tx, path, NULL), 0);
	assert_true(fwrite(big, 1, sizeof(big), tx.fp) < sizeof(big));
	int rc2 = tp_file_tx_commit(&tx);
	char got2[4200];
	snprintf(got2, sizeof(got2), "%s", tp_last_error());
	assert_int_equal(tp_write_file_atomic(path, big, sizeof(big)), -EFBIG);
	char got3[4200];
	snprintf(got3, sizeof(got3), "%s", tp_last_error());
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
	signal(SIGXFSZ, old);

	assert_int_equal(rc, -EFBIG);
	assert_int_equal(rc2, -EFBIG);
	assert_string_equal(got2, want);
	assert_string_equal(got3, want);
	assert_int_equal(count_entries(dir), 0); /* no temporary file, no output */
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_publish, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newest_run_file, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_publish_replaces_and_custom_suffix, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_begin_onto_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_failure_temp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_suffix_directory_at_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_special_outputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_temps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_removes_temp, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_abort_keeps_temp, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_long_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_begin_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_write_file_atomic, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_p, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_made, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_p_symlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_p_parent_vanishes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_fresh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_result, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_file, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stream_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_size_limit, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
