/* SPDX-License-Identifier: MIT */
#include "base/file.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <fts.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "base/tmp_registry.h"

/* Register / forget @tx's temporary file (base/tmp_registry.h): the
 * registration brackets the file's life, from before its creation to
 * after its rename, removal or hand-over as evidence. */
static void tx_track(struct tp_file_tx *tx)
{
	tp_tmpreg_remove(tx->tmpreg);
	tx->tmpreg = tx->tmp_path ? tp_tmpreg_add(tx->tmp_path) : 0;
}

static void tx_untrack(struct tp_file_tx *tx)
{
	tp_tmpreg_remove(tx->tmpreg);
	tx->tmpreg = 0;
}

static void tx_release(struct tp_file_tx *tx)
{
	tx_untrack(tx);
	free(tx->path);
	free(tx->tmp_path);
	tx->path = NULL;
	tx->tmp_path = NULL;
	tx->fp = NULL;
	tx->flags = 0;
	tx->direct = false;
}

/* Open the non-regular @path (character device or FIFO) for writing in
 * place: there is nothing to rename over, and replacing a device node or a
 * FIFO with a regular file would destroy it. A FIFO is opened without
 * blocking so that one with no reader is an error, not a hang. */
static int tx_open_direct(struct tp_file_tx *tx, bool fifo)
{
	int fd = open(tx->path, O_WRONLY | O_CLOEXEC | O_NOCTTY | (fifo ? O_NONBLOCK : 0));
	if (fd < 0) {
		int err = errno;
		if (fifo && err == ENXIO)
			return tp_set_error(-ENXIO, "%s: FIFO has no reader", tx->path);
		return tp_set_error(-err, "%s: cannot open for writing: %s", tx->path,
				    strerror(err));
	}
	int fl = fcntl(fd, F_GETFL);
	if (fifo && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)) {
		int err = errno;
		close(fd);
		return tp_set_error(-err, "%s: cannot open for writing: %s", tx->path,
				    strerror(err));
	}
	tx->fp = fdopen(fd, "wb");
	if (!tx->fp) {
		int err = errno;
		close(fd);
		return tp_set_error(-err, "%s: cannot open for writing: %s", tx->path,
				    strerror(err));
	}
	tx->direct = true;
	return 0;
}

/* How many bytes of @path the temporary name "<path>.XXXXXX<suffix>" keeps:
 * all of it, unless the file name part would pass NAME_MAX, which a valid
 * name of up to NAME_MAX bytes must not turn into ENAMETOOLONG. Then the
 * name is cut (not inside a UTF-8 sequence); the random tag keeps it
 * unique, and it stays in @path's directory so the rename is atomic. */
static size_t tx_tmp_prefix_len(const char *path, size_t suffix_len)
{
	size_t len = strlen(path);
	const char *slash = strrchr(path, '/');
	size_t base = slash ? (size_t)(slash - path) + 1 : 0;
	size_t extra = 1 + 6 + suffix_len; /* ".XXXXXX" + suffix */
	/* A name already past NAME_MAX is kept, so open(2) reports it. */
	if (len - base + extra <= NAME_MAX || len - base > NAME_MAX)
		return len;
	size_t keep = base + (NAME_MAX > extra ? NAME_MAX - extra : 0);
	while (keep > base && ((unsigned char)path[keep] & 0xC0) == 0x80)
		keep--;
	return keep;
}

/* Create a fresh "<path>.XXXXXX<suffix>" with O_EXCL, so that concurrent
 * writers of the same output never share a temporary file. Mode 0666 before
 * umask, as fopen(3) would create it. */
static int tx_open_unique(struct tp_file_tx *tx, const char *suffix)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	static _Atomic unsigned long counter; /* relaxed: only mixed into names */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned long long seed = ((unsigned long long)ts.tv_nsec << 16) ^
				  (unsigned long long)ts.tv_sec ^
				  ((unsigned long long)getpid() << 40) ^
				  ((unsigned long long)(uintptr_t)tx << 8);
	size_t keep = tx_tmp_prefix_len(tx->path, strlen(suffix));
	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned long long x = seed + 0x9e3779b97f4a7c15ull *
			(atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed) + 1);
		x ^= x >> 31;
		x *= 0xbf58476d1ce4e5b9ull;
		x ^= x >> 29;
		char tag[7];
		for (int i = 0; i < 6; i++) {
			tag[i] = alnum[x % 36];
			x /= 36;
		}
		tag[6] = '\0';
		free(tx->tmp_path);
		if (asprintf(&tx->tmp_path, "%.*s.%s%s", (int)keep, tx->path, tag, suffix) < 0) {
			tx->tmp_path = NULL;
			return tp_set_error(-ENOMEM, "%s: out of memory", tx->path);
		}
		tx_track(tx);
		if (tx->tmpreg == -ECANCELED)
			return tp_set_error(-ECANCELED, "%s: not written: the process is being "
					    "interrupted", tx->path);
		int fd = open(tx->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		const int open_err = errno;
		tp_tmpreg_created(tx->tmpreg);
		errno = open_err;
		if (fd < 0 && errno == EEXIST) {
			tx_untrack(tx); /* someone else's file */
			continue;
		}
		/* The messages name the user's path: the temporary name is
		 * ours, and gone once the error is reported. */
		if (fd < 0) {
			int err = errno;
			/* An existing file (/proc/self/mem, say) is replaced
			 * through a new one beside it: when its folder takes
			 * none, the reason is the folder's, not the file's. */
			struct stat st;
			bool exists = (err == ENOENT || err == EACCES || err == EPERM ||
				       err == EROFS) && stat(tx->path, &st) == 0;
			bool cwd_gone = !exists && err == ENOENT && tx->path[0] != '/' &&
					tp_cwd_removed();
			return tp_set_error(-err, "%s: cannot open for writing: %s%s", tx->path,
					    strerror(err),
					    exists ? " (it exists: it is replaced through a new "
						     "file beside it, and its folder takes none)"
					    : cwd_gone ? " (" TP_CWD_REMOVED_WHY ")"
						   : "");
		}
		tx->fp = fdopen(fd, "wb");
		if (!tx->fp) {
			int err = errno;
			close(fd);
			unlink(tx->tmp_path);
			return tp_set_error(-err, "%s: cannot open for writing: %s",
					    tx->path, strerror(err));
		}
		return 0;
	}
	return tp_set_error(-EEXIST, "%s: cannot create a unique temporary file", tx->path);
}

/* Decide where @tx->path is written: -EISDIR for a directory, a direct
 * write for a character device or FIFO (*direct, *fifo), the link's
 * resolved target for a symbolic link to a regular file (tx->path is
 * replaced), an error for anything else. A path that does not exist is
 * written atomically as itself. */
static int tx_resolve(struct tp_file_tx *tx, bool *direct, bool *fifo, bool dir_at_commit)
{
	struct stat st;
	*direct = *fifo = false;
	if (lstat(tx->path, &st) != 0)
		return 0; /* missing (or unreachable: the open reports it) */
	if (S_ISLNK(st.st_mode)) {
		/* Documented choice: write the link's target, never replace the
		 * link itself; a dangling link is refused. */
		if (stat(tx->path, &st) != 0) {
			int err = errno;
			char why[2 * PATH_MAX + 128];
			if (tp_path_bad_link(tx->path, why, sizeof(why)))
				return tp_set_error(-err, "%s: %s", tx->path, why);
			return tp_set_error(-err, "%s: symbolic link to a missing target: %s",
					    tx->path, strerror(err));
		}
		if (S_ISREG(st.st_mode)) {
			char *real = realpath(tx->path, NULL);
			if (!real) {
				int err = errno;
				return tp_set_error(-err, "%s: cannot resolve symbolic link: %s",
						    tx->path, strerror(err));
			}
			free(tx->path);
			tx->path = real;
			return 0;
		}
	}
	if (S_ISREG(st.st_mode))
		return 0;
	if (S_ISDIR(st.st_mode))
		return dir_at_commit ? 0 : tp_set_error(-EISDIR, "%s: is a directory", tx->path);
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		*direct = true;
		*fifo = S_ISFIFO(st.st_mode);
		return 0;
	}
	return tp_set_error(-EINVAL, "%s: not a regular file, character device or FIFO",
			    tx->path);
}

int tp_file_tx_begin_flags(struct tp_file_tx *tx, const char *path, const char *tmp_suffix,
			   unsigned flags)
{
	if (!tx)
		return tp_set_error(-EINVAL, "tp_file_tx_begin: tx is NULL");
	tx->path = tx->tmp_path = NULL;
	tx->fp = NULL;
	tx->flags = flags;
	tx->direct = false;
	tx->tmpreg = 0;
	if (!path || !*path)
		return tp_set_error(-EINVAL, "tp_file_tx_begin: empty path");
	if (tmp_suffix && !*tmp_suffix)
		return tp_set_error(-EINVAL,
				    "%s: empty temporary suffix would write "
				    "the final file in place", path);

	tx->path = strdup(path);
	if (!tx->path) {
		tx_release(tx);
		return tp_set_error(-ENOMEM, "%s: out of memory", path);
	}
	bool direct, fifo;
	/* a caller-chosen suffix keeps the older contract for directories:
	 * the rename in tp_file_tx_commit() reports them (the PMU collector
	 * logs that failure as "failed to flush merged CSV file") */
	int rc = tx_resolve(tx, &direct, &fifo, tmp_suffix != NULL);
	if (rc == 0 && direct)
		rc = tx_open_direct(tx, fifo);
	else if (rc == 0 && !tmp_suffix)
		rc = tx_open_unique(tx, TP_FILE_TX_DEFAULT_SUFFIX);
	else if (rc == 0) {
		/* A caller-chosen suffix names the temporary file exactly
		 * (callers such as the PMU collector rely on the name). */
		if (asprintf(&tx->tmp_path, "%s%s", tx->path, tmp_suffix) < 0) {
			tx->tmp_path = NULL;
			rc = tp_set_error(-ENOMEM, "%s: out of memory", path);
		} else {
			tx_track(tx);
			if (tx->tmpreg == -ECANCELED) {
				rc = tp_set_error(-ECANCELED, "%s: not written: the process is "
						  "being interrupted", tx->path);
			} else if (!(tx->fp = fopen(tx->tmp_path, "wb"))) {
				int err = errno;
				tp_tmpreg_created(tx->tmpreg);
				rc = tp_set_error(-err, "%s: cannot open for writing: %s",
						  tx->tmp_path, strerror(err));
			} else {
				tp_tmpreg_created(tx->tmpreg);
			}
		}
	}
	if (rc)
		tx_release(tx);
	return rc;
}

int tp_file_tx_begin(struct tp_file_tx *tx, const char *path,
		     const char *tmp_suffix)
{
	return tp_file_tx_begin_flags(tx, path, tmp_suffix, 0);
}

/*
 * The reason an earlier buffered write to @fd failed, when its errno is
 * gone (the stream only kept its error flag): a pipe whose reader left
 * reports POLLERR, a regular file at the RLIMIT_FSIZE limit (ulimit -f)
 * is EFBIG, one on a file system without a free block ENOSPC. Return: the
 * errno, or EIO when none of these holds.
 */
static int stream_lost_errno(int fd)
{
	struct pollfd pf = {.fd = fd, .events = POLLOUT};
	if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLERR))
		return EPIPE;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return EIO;
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)st.st_size >= (uint64_t)rl.rlim_cur)
		return EFBIG;
	/* root may still write into the reserved blocks: f_bfree then */
	struct statvfs vs;
	if (fstatvfs(fd, &vs) == 0 && (vs.f_bfree == 0 || (vs.f_bavail == 0 && geteuid() != 0)))
		return ENOSPC;
	return EIO;
}

int tp_stream_flush(FILE *fp)
{
	if (!fp)
		return -EINVAL;
	errno = 0;
	int err = 0;
	if (fflush(fp) != 0)
		err = errno ? errno : EIO;
	else if (ferror(fp))
		err = EIO; /* an earlier buffered write failed; its errno is gone */
	/* A pipe whose reader left gives EPIPE on the write, or EIO from a
	 * stream that only kept the flag: name the real cause either way. */
	if (err == EIO && fileno(fp) >= 0)
		err = stream_lost_errno(fileno(fp));
	return -err;
}

/* Flush and close tx->fp. Return 0 or -errno with the error message set.
 * The message names the final path: the temporary name is ours, and gone
 * (removed) once the error is reported, unless it is kept as evidence,
 * which tx_fail_temp() then says. */
static int tx_close(struct tp_file_tx *tx)
{
	int err = -tp_stream_flush(tx->fp);
	const char *what = err ? "write" : NULL;
	errno = 0;
	if (fclose(tx->fp) != 0 && !err) {
		err = errno ? errno : EIO;
		what = "close";
	}
	tx->fp = NULL;
	if (err)
		return tp_set_error(-err, "%s: %s failed: %s", tx->path, what, strerror(err));
	return 0;
}

/* Remove the temporary file after a failed commit unless the caller asked
 * for it as evidence; say which in the message. */
static int tx_fail_temp(struct tp_file_tx *tx, int rc)
{
	if (tx->direct || !tx->tmp_path)
		return rc;
	if (tx->flags & TP_FILE_TX_KEEP_TEMP_ON_FAILURE) {
		return tp_set_error(rc, "%s (temporary file %s kept)", tp_last_error(),
				    tx->tmp_path);
	}
	if (unlink(tx->tmp_path) != 0 && errno != ENOENT)
		TP_WARN("%s: cannot remove temporary file: %s", tp_shown(tx->tmp_path), strerror(errno));
	return rc;
}

int tp_file_tx_commit(struct tp_file_tx *tx)
{
	if (!tx || !tx->fp)
		return tp_set_error(-EINVAL,
				    "tp_file_tx_commit: transaction not open");

	int rc = tx_close(tx);
	/* An interrupt from here on can tell whether the output got into
	 * place (cli/interrupt.c: "... was complete and is in place"). */
	const bool publish = rc == 0 && !tx->direct && tx->tmpreg > 0;
	if (publish)
		tp_tmpreg_committing(tx->tmpreg, tx->path);
	if (rc == 0 && !tx->direct && rename(tx->tmp_path, tx->path) != 0) {
		int err = errno;
		rc = tp_set_error(-err, "%s: cannot rename %s into place: %s", tx->path,
				  tx->tmp_path, strerror(err));
	}
	if (rc)
		rc = tx_fail_temp(tx, rc);
	tx_release(tx);
	if (publish)
		tp_tmpreg_committed(rc == 0);
	return rc;
}

void tp_file_tx_abort(struct tp_file_tx *tx, bool keep_temp)
{
	if (!tx || !tx->path)
		return;
	const char *name = tx->direct ? tx->path : tx->tmp_path;
	if (tx->fp && fclose(tx->fp) != 0)
		TP_WARN("%s: close failed: %s", tp_shown(name), strerror(errno));
	tx->fp = NULL;
	if (!tx->direct && !keep_temp && unlink(tx->tmp_path) != 0 && errno != ENOENT)
		TP_WARN("%s: cannot remove temporary file: %s", tp_shown(tx->tmp_path),
			strerror(errno));
	tx_release(tx);
}

int tp_write_file_atomic(const char *path, const void *data, size_t len)
{
	struct tp_file_tx tx;
	int rc = tp_file_tx_begin(&tx, path, NULL);
	if (rc)
		return rc;
	if (len > 0 && fwrite(data, 1, len, tx.fp) != len) {
		int err = errno ? errno : EIO;
		rc = tp_set_error(-err, "%s: write failed: %s", tx.path, strerror(err));
		tp_file_tx_abort(&tx, false);
		return rc;
	}
	return tp_file_tx_commit(&tx);
}

/* @p (NUL-terminated) if it is a dangling or looping symbolic link. */
static bool bad_link_one(const char *p, char *why, size_t len)
{
	struct stat st;
	if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
		return false;
	if (stat(p, &st) == 0)
		return false;
	int err = errno;
	if (err == ELOOP) {
		snprintf(why, len, "%s is a symbolic link in a loop (%s)", p, strerror(ELOOP));
		return true;
	}
	if (err != ENOENT)
		return false;
	char target[PATH_MAX];
	ssize_t n = readlink(p, target, sizeof(target) - 1);
	if (n < 0)
		snprintf(why, len, "%s is a symbolic link whose target does not exist", p);
	else {
		target[n] = '\0';
		snprintf(why, len, "%s is a symbolic link whose target %s does not exist", p,
			 target);
	}
	return true;
}

/*
 * Call @fn on each prefix of @path that ends before a '/' (a run of '/'
 * counts once), then on the whole path, trailing '/' removed; stop at the
 * first nonzero return and return it. @path is shorter than PATH_MAX.
 */
static int for_each_prefix(const char *path, int (*fn)(const char *prefix, void *arg),
			   void *arg)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);
	memcpy(buf, path, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	for (size_t i = 1; i < n; i++) {
		if (buf[i] != '/' || buf[i - 1] == '/')
			continue;
		buf[i] = '\0';
		int rc = fn(buf, arg);
		buf[i] = '/';
		if (rc)
			return rc;
	}
	return fn(buf, arg);
}

struct bad_link_arg {
	char *why;
	size_t len;
};

static int bad_link_prefix(const char *prefix, void *arg)
{
	struct bad_link_arg *a = arg;
	return bad_link_one(prefix, a->why, a->len);
}

bool tp_path_bad_link(const char *path, char *why, size_t len)
{
	if (!path || !*path || strlen(path) >= PATH_MAX)
		return false;
	struct bad_link_arg a = { why, len };
	return for_each_prefix(path, bad_link_prefix, &a) != 0;
}

struct blocked_arg {
	const char *full;
	char last[PATH_MAX]; /* the deepest prefix that is a folder, "" none */
};

/* 1: stop (this prefix does not exist: nothing below it can be in the
 * way), -ENOTDIR: it exists and is no folder, -ENOENT / -ELOOP: it is a
 * symbolic link to nothing or in a loop, 0: go on. */
static int blocked_prefix(const char *prefix, void *arg)
{
	struct blocked_arg *a = arg;
	struct stat st;
	if (stat(prefix, &st) != 0) {
		int err = errno;
		char why[2 * PATH_MAX + 128];
		if ((err == ENOENT || err == ELOOP) && bad_link_one(prefix, why, sizeof(why)))
			return tp_set_error(-err, "%s: cannot create directory: %s", a->full, why);
		return 1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(a->last, sizeof(a->last), "%s", prefix);
		return 0;
	}
	return tp_set_error(-ENOTDIR, "%s: cannot create directory: %s exists and is not a "
				      "directory", a->full, prefix);
}

bool tp_cwd_removed(void)
{
	char buf[PATH_MAX];
	return !getcwd(buf, sizeof(buf)) && errno == ENOENT;
}

int tp_dir_blocked(const char *path)
{
	if (!path || !*path)
		return 0;
	if (path[0] != '/' && tp_cwd_removed())
		return tp_set_error(-ENOENT, "%s: cannot create directory: %s", path,
				    TP_CWD_REMOVED_WHY);
	if (strlen(path) >= PATH_MAX)
		return tp_set_error(-ENAMETOOLONG, "%.64s...: cannot create directory: the path "
				    "is %zu bytes long (at most %d)", path, strlen(path),
				    PATH_MAX - 1);
	struct blocked_arg *a = calloc(1, sizeof(*a));
	if (!a)
		return 0; /* tp_mkdir_p() reports what goes wrong then */
	a->full = path;
	/* A relative path's folders go into the working directory. */
	if (path[0] != '/')
		snprintf(a->last, sizeof(a->last), ".");
	int rc = for_each_prefix(path, blocked_prefix, a);
	if (rc >= 0 && a->last[0]) {
		/* The folder the new ones go into: one on a read-only file
		 * system, or a pseudo file system (/proc, /sys), takes none. */
		const char *where = strcmp(a->last, ".") ? a->last : "the working directory";
		struct statfs sf;
		if (statfs(a->last, &sf) == 0 &&
		    (sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC))
			rc = tp_set_error(-EACCES, "%s: cannot create directory: %s is on %s, "
					  "which holds no folders of ours", path, where,
					  sf.f_type == PROC_SUPER_MAGIC ? "/proc (procfs)"
									: "/sys (sysfs)");
		else if (access(a->last, W_OK | X_OK) != 0 && (errno == EROFS || errno == EACCES))
			rc = tp_set_error(-errno, "%s: cannot create directory in %s: %s", path,
					  where, strerror(errno));
	}
	free(a);
	return rc < 0 ? rc : 0;
}

/*
 * Passes of tp_mkdir_p() and tp_mkdir_fresh() when a folder they made or
 * found is removed before the next mkdir(2) in it (ENOENT): another process
 * removed it as an empty folder it had made (a failed run's clean-up,
 * tp_rmdir_made(): once per run, over in microseconds). A pass fails only
 * when such a clean-up falls inside it, so a few passes outlast several runs
 * failing together; the bound ends it when a folder keeps going (or the
 * working directory itself is gone).
 */
#define MKDIR_TRIES 8

/* Test point (tp_mkdir_set_test_point()); set by tests only, while no other
 * thread makes folders, so a plain pointer. */
static void (*mkdir_test_point)(const char *path, void *arg);
static void *mkdir_test_arg;

void tp_mkdir_set_test_point(void (*fn)(const char *path, void *arg), void *arg)
{
	mkdir_test_point = fn;
	mkdir_test_arg = arg;
}

static int mkdir_tp(const char *dir, mode_t mode)
{
	if (mkdir_test_point)
		mkdir_test_point(dir, mkdir_test_arg);
	return mkdir(dir, mode);
}

/* mkdir one component; fine if it already is a directory. *@vanished: the
 * mkdir(2) failed with ENOENT, a folder above it (just made or found) gone. */
static int mkdir_one(const char *dir, const char *full, mode_t mode, bool *vanished)
{
	if (mkdir_tp(dir, mode) == 0)
		return 0;
	int err = errno;
	struct stat st;
	if (err == EEXIST || err == EROFS || err == EACCES) {
		if (stat(dir, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				return 0;
			return tp_set_error(-ENOTDIR, "%s: cannot create "
					    "directory: %s exists and is not a "
					    "directory", full, dir);
		}
		/* EEXIST, yet stat fails: a dangling or looping symbolic
		 * link, which "File exists" would hide. */
		int serr = errno;
		char why[2 * PATH_MAX + 128];
		if (err == EEXIST && (serr == ENOENT || serr == ELOOP) &&
		    bad_link_one(dir, why, sizeof(why)))
			return tp_set_error(-serr, "%s: cannot create directory: %s", full, why);
		/* Removed between the two calls: gone as a parent is. */
		if (err == EEXIST && serr == ENOENT)
			err = ENOENT;
	}
	*vanished = err == ENOENT;
	return tp_set_error(-err, "%s: cannot create directory %s: %s", full,
			    dir, strerror(err));
}

struct mkdir_arg {
	const char *full;
	mode_t mode;
	bool vanished; /* see mkdir_one() */
};

static int mkdir_prefix(const char *prefix, void *arg)
{
	struct mkdir_arg *a = arg;
	return mkdir_one(prefix, a->full, a->mode, &a->vanished);
}

/* One pass of tp_mkdir_p() over @path (checked by the caller): each prefix
 * that ends before a '/', then the whole path. *@vanished as mkdir_one(). */
static int mkdir_chain(const char *path, mode_t mode, bool *vanished)
{
	struct mkdir_arg a = { path, mode, false };
	int rc = for_each_prefix(path, mkdir_prefix, &a);
	*vanished = a.vanished;
	return rc;
}

static int mkdir_p_check(const char *path)
{
	if (!path || !*path)
		return tp_set_error(-EINVAL, "tp_mkdir_p: empty path");
	if (strlen(path) >= PATH_MAX)
		return tp_set_error(-ENAMETOOLONG, "%.64s...: path too long",
				    path);
	return 0;
}

size_t tp_mkdir_missing_len(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	if (!n || n >= PATH_MAX)
		return 0;
	/* A "." or ".." component: the folders made are not the prefixes of
	 * the path that tp_rmdir_made() would remove ("new/../old" makes "new"
	 * and names the old "old"), so nothing is reported as made. */
	for (const char *c = path; *c;) {
		size_t k = strcspn(c, "/");
		if ((k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		c += k;
		c += strspn(c, "/");
	}
	char buf[PATH_MAX];
	memcpy(buf, path, n + 1);
	struct stat st;
	for (size_t i = 1; i <= n; i++) {
		/* A component ends at the first '/' of a run, or at the end. */
		if (i < n && (path[i] != '/' || path[i - 1] == '/'))
			continue;
		buf[i] = '\0';
		bool there = stat(buf, &st) == 0;
		buf[i] = path[i];
		if (!there)
			return i;
	}
	return 0;
}

bool tp_rmdir_made(char *path, size_t top_len)
{
	size_t n = strlen(path);
	if (!top_len || top_len > n)
		return false;
	/* "out/a/b/": the trailing slashes are not a component. */
	while (n > top_len && path[n - 1] == '/')
		path[--n] = '\0';
	for (;;) {
		if (rmdir(path) != 0)
			return false;
		if (n <= top_len)
			return true;
		while (n > top_len && path[n - 1] != '/')
			n--;
		while (n > top_len && path[n - 1] == '/')
			n--;
		path[n] = '\0';
	}
}

int tp_mkdir_p(const char *path, mode_t mode)
{
	int rc = mkdir_p_check(path);
	if (rc)
		return rc;
	bool vanished = true;
	for (int t = 0; t < MKDIR_TRIES && vanished; t++)
		rc = mkdir_chain(path, mode, &vanished);
	return rc;
}

int tp_mkdir_fresh(const char *root, const char *name, char *dir, size_t len,
		   size_t *made_len)
{
	int rc = mkdir_p_check(root);
	if (rc)
		return rc;
	bool vanished = true;
	for (int t = 0; t < MKDIR_TRIES && vanished; t++) {
		/* What this pass makes, measured before it: tp_rmdir_made()
		 * removes only empty folders, so counting one another process
		 * made in between removes nothing that is in use. */
		const size_t missing = tp_mkdir_missing_len(root);
		rc = mkdir_chain(root, 0755, &vanished);
		if (rc && !vanished)
			return rc;
		if (missing && (!*made_len || missing < *made_len)) {
			/* Published before the run folder is made in it: an
			 * interrupt removes the run folder, then these. */
			*made_len = missing;
			tp_tmpreg_set_made_dirs(root, missing);
		}
		if (vanished)
			continue;
		/* The names are counted from the first again after a pass that
		 * found @root gone: it was removed empty, so the names in it
		 * were free, and mkdir(2) claims each one atomically whoever
		 * made @root again. */
		rc = -EEXIST;
		for (int n = 1; n < 1000 && rc == -EEXIST; n++) {
			int k = n == 1 ? snprintf(dir, len, "%s/%s", root, name)
				       : snprintf(dir, len, "%s/%s_%d", root, name, n);
			if (k < 0 || (size_t)k >= len)
				return tp_set_error(-ENAMETOOLONG, "output folder name too long "
						    "under %s", root);
			rc = mkdir_tp(dir, 0755) ? -errno : 0;
		}
		if (rc == -EEXIST)
			return tp_set_error(-EEXIST, "no free output folder name for %s under %s",
					    name, root);
		vanished = rc == -ENOENT;
		if (rc)
			rc = tp_set_error(rc, "cannot create output folder %s: %s", dir,
					  strerror(-rc));
	}
	return rc;
}

int tp_read_file(const char *path, char **data_out, size_t *len_out)
{
	return tp_read_file_max(path, SIZE_MAX - 1, data_out, len_out);
}

int tp_read_file_max(const char *path, size_t max, char **data_out, size_t *len_out)
{
	if (!data_out)
		return tp_set_error(-EINVAL, "tp_read_file: data_out is NULL");
	*data_out = NULL;
	if (!path || !*path)
		return tp_set_error(-EINVAL, "tp_read_file: empty path");

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		return tp_set_error(-err, "%s: cannot open: %s", path,
				    strerror(err));
	}

	/* st_size is only a hint: /proc files and pipes report 0. */
	struct stat st;
	size_t cap = 4096;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if (st.st_size > 0)
			cap = (size_t)st.st_size + 1;
		/* Non-blocking: no effect on a real file, but a /proc file that
		 * stats as regular and blocks on read (/proc/kmsg) then fails
		 * with EAGAIN instead of hanging. Pipes stay blocking. */
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	}

	size_t len = 0;
	char *buf = malloc(cap);
	int rc = 0;
	if (!buf) {
		rc = tp_set_error(-ENOMEM, "%s: out of memory (%zu bytes)",
				  path, cap);
		goto out;
	}
	for (;;) {
		if (len + 1 >= cap) {
			size_t ncap = cap * 2;
			char *nbuf = ncap > cap ? realloc(buf, ncap) : NULL;
			if (!nbuf) {
				rc = tp_set_error(-ENOMEM, "%s: out of memory "
						  "(%zu bytes)", path, ncap);
				goto out;
			}
			buf = nbuf;
			cap = ncap;
		}
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int err = errno;
			rc = tp_set_error(-err, "%s: read failed: %s", path,
					  strerror(err));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			rc = tp_set_error(-EFBIG, "%s: more than %zu bytes (not a file of "
					  "this kind)", path, max);
			goto out;
		}
	}
	buf[len] = '\0';

out:
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	*data_out = buf;
	if (len_out)
		*len_out = len;
	return 0;
}

/* Whether @name is "<something>.XXXXXX" TP_FILE_TX_DEFAULT_SUFFIX, X in
 * [a-z0-9] (tx_open_unique's names). */
static bool is_tx_temp_name(const char *name)
{
	const size_t sl = strlen(TP_FILE_TX_DEFAULT_SUFFIX), n = strlen(name);
	if (n < 1 + 1 + 6 + sl || strcmp(name + n - sl, TP_FILE_TX_DEFAULT_SUFFIX) != 0)
		return false;
	const char *tag = name + n - sl - 6;
	if (tag[-1] != '.')
		return false;
	for (int i = 0; i < 6; i++)
		if (!((tag[i] >= 'a' && tag[i] <= 'z') || (tag[i] >= '0' && tag[i] <= '9')))
			return false;
	return true;
}

int tp_file_tx_sweep(const char *dir, unsigned *removed)
{
	unsigned n = 0;
	int rc = 0;
	char *paths[] = { (char *)dir, NULL };
	FTS *fts = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	if (!fts) {
		rc = -errno;
		goto out;
	}
	FTSENT *e;
	while ((e = fts_read(fts))) {
		if (e->fts_info == FTS_DNR || e->fts_info == FTS_ERR ||
		    (e->fts_info == FTS_NS && e->fts_level == FTS_ROOTLEVEL)) {
			rc = rc ? rc : -e->fts_errno;
			continue;
		}
		if (e->fts_info != FTS_F || !is_tx_temp_name(e->fts_name))
			continue;
		if (unlink(e->fts_accpath) == 0)
			n++;
		else if (errno != ENOENT)
			rc = rc ? rc : -errno;
	}
	if (errno && !rc)
		rc = -errno;
	fts_close(fts);
out:
	if (removed)
		*removed = n;
	return rc;
}

/* Why @p (lstat-able, not a candidate) was left out, for the message of
 * tp_newest_run_file(): @st_rc / @err are those of stat(@p, @st). */
static const char *skip_reason(const char *p, int st_rc, int err, const struct stat *st)
{
	struct stat l;
	if (st_rc != 0 && err == ENOENT && lstat(p, &l) == 0 && S_ISLNK(l.st_mode))
		return "a symbolic link whose target does not exist";
	if (st_rc != 0)
		return strerror(err);
	if (S_ISDIR(st->st_mode))
		return "a folder, not a file";
	if (S_ISFIFO(st->st_mode))
		return "a FIFO, not a regular file";
	return "not a regular file";
}

char *tp_newest_run_file(const char *name, char **outputs, char **skipped)
{
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), ".");
	char *dir = NULL, *best = NULL, *best_run = NULL;
	if (outputs)
		*outputs = NULL;
	if (skipped)
		*skipped = NULL;
	if (asprintf(&dir, "%s/outputs", strcmp(cwd, "/") ? cwd : "") < 0)
		return NULL;
	struct timespec best_m = { 0, 0 };
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char *p = NULL;
			struct stat st;
			if (asprintf(&p, "%s/%s/%s", dir, e->d_name, name) < 0)
				break;
			int st_rc = stat(p, &st), err = errno;
			bool cand = st_rc == 0 && S_ISREG(st.st_mode);
			struct stat l;
			/* a name that is there (also as a dangling link) but no candidate */
			if (!cand && skipped && !*skipped &&
			    (st_rc == 0 || (err != ENOENT && err != ENOTDIR) || lstat(p, &l) == 0) &&
			    asprintf(skipped, "%s: %s", p, skip_reason(p, st_rc, err, &st)) < 0)
				*skipped = NULL;
			bool newer = cand &&
				     (!best || st.st_mtim.tv_sec > best_m.tv_sec ||
				      (st.st_mtim.tv_sec == best_m.tv_sec &&
				       (st.st_mtim.tv_nsec > best_m.tv_nsec ||
					(st.st_mtim.tv_nsec == best_m.tv_nsec &&
					 strcmp(e->d_name, best_run) < 0))));
			char *run = newer ? strdup(e->d_name) : NULL;
			if (newer && run) {
				free(best);
				free(best_run);
				best = p;
				best_run = run;
				best_m = st.st_mtim;
			} else {
				free(p);
			}
		}
		closedir(d);
	} else if (errno != ENOENT && skipped) {
		/* ./outputs is there but cannot be listed (a file, a link
		 * loop, no permission): that is the reason, not an empty
		 * folder */
		int err = errno;
		if (asprintf(skipped, "%s: %s%s", dir, strerror(err),
			     err == ENOTDIR ? " (a file, not a folder)" : "") < 0)
			*skipped = NULL;
	}
	free(best_run);
	if (outputs)
		*outputs = dir;
	else
		free(dir);
	return best;
}

/* Whether run result @res (a result.txt) says the run did not have the
 * profiler that writes @name on: such a run failing is no reason for the
 * file's absence ("swimlane_level 0" for l2_swimlane_records.json). */
static bool result_profiler_off(const char *res, const char *name)
{
	if (strcmp(name, "l2_swimlane_records.json") != 0)
		return false;
	FILE *f = fopen(res, "r");
	if (!f)
		return false;
	char line[256];
	bool off = false;
	while (fgets(line, sizeof(line), f))
		if (!strcmp(line, "swimlane_level 0\n")) {
			off = true;
			break;
		}
	fclose(f);
	return off;
}

char *tp_newer_failed_run(const char *file, const char *name)
{
	struct stat fst;
	const char *slash = strrchr(file, '/');
	if (!slash || stat(file, &fst) != 0)
		return NULL;
	const char *run_end = slash, *outs_end = NULL;
	for (const char *q = file; q < run_end; q++)
		if (*q == '/')
			outs_end = q; /* the slash before <run> */
	if (!outs_end)
		return NULL;
	char *outs = strndup(file, (size_t)(outs_end - file));
	DIR *d = outs ? opendir(outs) : NULL;
	char *best = NULL;
	struct timespec best_m = fst.st_mtim;
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.' ||
			    (strlen(e->d_name) == (size_t)(run_end - outs_end - 1) &&
			     !strncmp(e->d_name, outs_end + 1, (size_t)(run_end - outs_end - 1))))
				continue;
			char *res = NULL, *f = NULL;
			struct stat rst, nst;
			if (asprintf(&res, "%s/%s/result.txt", outs, e->d_name) < 0)
				break;
			if (asprintf(&f, "%s/%s/%s", outs, e->d_name, name) < 0) {
				free(res);
				break;
			}
			bool newer = stat(res, &rst) == 0 && S_ISREG(rst.st_mode) &&
				     (rst.st_mtim.tv_sec > best_m.tv_sec ||
				      (rst.st_mtim.tv_sec == best_m.tv_sec &&
				       rst.st_mtim.tv_nsec > best_m.tv_nsec)) &&
				     !(stat(f, &nst) == 0 && S_ISREG(nst.st_mode)) &&
				     tp_run_failed(f, NULL, 0) && !result_profiler_off(res, name);
			if (newer) {
				char *run = NULL;
				if (asprintf(&run, "%s/%s", outs, e->d_name) >= 0) {
					free(best);
					best = run;
					best_m = rst.st_mtim;
				}
			}
			free(res);
			free(f);
		}
		closedir(d);
	}
	free(outs);
	return best;
}

/* The text of the result.txt in @file's folder, NUL-terminated (free
 * it); NULL when there is no such regular file under 1 MiB or it cannot
 * be read. */
static char *read_run_result(const char *file)
{
	const char *slash = strrchr(file, '/');
	char *res = NULL;
	if (!slash ? asprintf(&res, "result.txt") < 0
		   : asprintf(&res, "%.*s/result.txt", (int)(slash - file), file) < 0)
		return NULL;
	char *text = NULL;
	size_t n = 0;
	struct stat st;
	/* a regular file only, and a small one: result.txt is a few lines */
	bool ok = stat(res, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (1 << 20) &&
		  tp_read_file(res, &text, &n) == 0;
	free(res);
	return ok ? text : NULL;
}

/* Call @fn(line, length, @ud) for each line of @text, without its line
 * end (LF or CRLF). */
static void each_line(const char *text, void (*fn)(const char *, size_t, void *), void *ud)
{
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t l = nl ? (size_t)(nl - line) : strlen(line);
		if (l && line[l - 1] == '\r')
			l--; /* a file saved with CRLF line ends */
		fn(line, l, ud);
		line = nl ? nl + 1 : NULL;
	}
}

struct failed_scan {
	bool failed;
	char *why;
	size_t len;
};

static void scan_failed(const char *line, size_t l, void *ud)
{
	struct failed_scan *f = ud;
	if (l == 13 && !strncmp(line, "status FAILED", 13))
		f->failed = true;
	else if (f->why && f->len && l > 6 && !strncmp(line, "error ", 6))
		snprintf(f->why, f->len, "%.*s", (int)(l - 6), line + 6);
}

bool tp_run_failed(const char *file, char *why, size_t len)
{
	if (why && len)
		why[0] = '\0';
	char *text = read_run_result(file);
	if (!text)
		return false;
	struct failed_scan f = { false, why, len };
	each_line(text, scan_failed, &f);
	free(text);
	if (!f.failed && why && len)
		why[0] = '\0';
	return f.failed;
}

struct value_scan {
	const char *key;
	size_t key_len;
	char *val;
	size_t len;
	bool found;
};

static void scan_value(const char *line, size_t l, void *ud)
{
	struct value_scan *v = ud;
	if (!v->found && l > v->key_len && !strncmp(line, v->key, v->key_len) &&
	    line[v->key_len] == ' ') {
		snprintf(v->val, v->len, "%.*s", (int)(l - v->key_len - 1), line + v->key_len + 1);
		v->found = true;
	}
}

bool tp_run_result_value(const char *file, const char *key, char *val, size_t len)
{
	if (!len)
		return false;
	val[0] = '\0';
	char *text = read_run_result(file);
	if (!text)
		return false;
	struct value_scan v = { key, strlen(key), val, len, false };
	each_line(text, scan_value, &v);
	free(text);
	return v.found;
}
