/* SPDX-License-Identifier: MIT */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"

static void tx_release(struct tp_file_tx *tx)
{
	free(tx->path);
	free(tx->tmp_path);
	tx->path = NULL;
	tx->tmp_path = NULL;
	tx->fp = NULL;
}

int tp_file_tx_begin(struct tp_file_tx *tx, const char *path,
		     const char *tmp_suffix)
{
	if (!tx)
		return tp_set_error(-EINVAL, "tp_file_tx_begin: tx is NULL");
	tx->path = tx->tmp_path = NULL;
	tx->fp = NULL;
	if (!path || !*path)
		return tp_set_error(-EINVAL, "tp_file_tx_begin: empty path");
	if (!tmp_suffix)
		tmp_suffix = TP_FILE_TX_DEFAULT_SUFFIX;
	if (!*tmp_suffix)
		return tp_set_error(-EINVAL,
				    "%s: empty temporary suffix would write "
				    "the final file in place", path);

	tx->path = strdup(path);
	if (tx->path && asprintf(&tx->tmp_path, "%s%s", path, tmp_suffix) < 0)
		tx->tmp_path = NULL;
	if (!tx->path || !tx->tmp_path) {
		tx_release(tx);
		return tp_set_error(-ENOMEM, "%s: out of memory", path);
	}

	tx->fp = fopen(tx->tmp_path, "wb");
	if (!tx->fp) {
		int err = errno;
		int rc = tp_set_error(-err, "%s: cannot open for writing: %s",
				      tx->tmp_path, strerror(err));
		tx_release(tx);
		return rc;
	}
	return 0;
}

/* Flush and close tx->fp. Return 0 or -errno with the error message set. */
static int tx_close(struct tp_file_tx *tx)
{
	int err = 0;
	const char *what = NULL;

	errno = 0;
	if (fflush(tx->fp) != 0) {
		err = errno ? errno : EIO;
		what = "write";
	} else if (ferror(tx->fp)) {
		/* An earlier fwrite/fprintf failed; its errno is long gone. */
		err = EIO;
		what = "write";
	}
	errno = 0;
	if (fclose(tx->fp) != 0 && !err) {
		err = errno ? errno : EIO;
		what = "close";
	}
	tx->fp = NULL;
	if (err)
		return tp_set_error(-err, "%s: %s failed: %s", tx->tmp_path,
				    what, strerror(err));
	return 0;
}

int tp_file_tx_commit(struct tp_file_tx *tx)
{
	if (!tx || !tx->fp)
		return tp_set_error(-EINVAL,
				    "tp_file_tx_commit: transaction not open");

	int rc = tx_close(tx);
	if (rc == 0 && rename(tx->tmp_path, tx->path) != 0) {
		int err = errno;
		rc = tp_set_error(-err, "%s: cannot rename %s into place: %s "
				  "(temporary file kept)", tx->path,
				  tx->tmp_path, strerror(err));
	}
	tx_release(tx);
	return rc;
}

void tp_file_tx_abort(struct tp_file_tx *tx, bool keep_temp)
{
	if (!tx || !tx->tmp_path)
		return;
	if (tx->fp && fclose(tx->fp) != 0)
		TP_WARN("%s: close failed: %s", tx->tmp_path, strerror(errno));
	tx->fp = NULL;
	if (!keep_temp && unlink(tx->tmp_path) != 0 && errno != ENOENT)
		TP_WARN("%s: cannot remove temporary file: %s", tx->tmp_path,
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
		rc = tp_set_error(-err, "%s: write of %zu bytes failed: %s "
				  "(temporary file kept)", tx.tmp_path, len,
				  strerror(err));
		tp_file_tx_abort(&tx, true);
		return rc;
	}
	return tp_file_tx_commit(&tx);
}

/* mkdir one component; fine if it already is a directory. */
static int mkdir_one(const char *dir, const char *full, mode_t mode)
{
	if (mkdir(dir, mode) == 0)
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
	}
	return tp_set_error(-err, "%s: cannot create directory %s: %s", full,
			    dir, strerror(err));
}

int tp_mkdir_p(const char *path, mode_t mode)
{
	if (!path || !*path)
		return tp_set_error(-EINVAL, "tp_mkdir_p: empty path");
	size_t len = strlen(path);
	if (len >= PATH_MAX)
		return tp_set_error(-ENAMETOOLONG, "%.64s...: path too long",
				    path);

	char buf[PATH_MAX];
	memcpy(buf, path, len + 1);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';

	/* Create each prefix that ends before a '/', then the whole path. */
	for (size_t i = 1; i < len; i++) {
		if (buf[i] != '/' || buf[i - 1] == '/')
			continue;
		buf[i] = '\0';
		int rc = mkdir_one(buf, path, mode);
		buf[i] = '/';
		if (rc)
			return rc;
	}
	return mkdir_one(buf, path, mode);
}

int tp_read_file(const char *path, char **data_out, size_t *len_out)
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
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (size_t)st.st_size + 1;

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
