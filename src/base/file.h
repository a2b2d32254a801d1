/* SPDX-License-Identifier: MIT */
/*
 * base/file.h — writing files so that readers never see half of one.
 *
 * Every output of taskprof is written to a temporary name beside its final
 * path and renamed into place when complete (ARCHITECTURE.md §3 step 6). A
 * failed write keeps the temporary file as evidence of how far it got.
 *
 *     struct tp_file_tx tx;
 *     int rc = tp_file_tx_begin(&tx, "out/pmu.csv", NULL);
 *     if (rc)
 *             return rc;
 *     fprintf(tx.fp, "...");
 *     return tp_file_tx_commit(&tx);      // or tp_file_tx_abort(&tx, keep)
 *
 * All functions return 0 or a negative errno and, on failure, leave a
 * message naming the file in tp_last_error().
 */
#ifndef TASKPROF_BASE_FILE_H
#define TASKPROF_BASE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Suffix of the temporary file when tp_file_tx_begin() gets NULL. */
#define TP_FILE_TX_DEFAULT_SUFFIX ".tmp"

/**
 * struct tp_file_tx - one file being written under a temporary name.
 * @path:     final path (owned copy).
 * @tmp_path: @path followed by the temporary suffix (owned copy).
 * @fp:       stream open for writing on @tmp_path; write through it.
 *
 * All fields are NULL once the transaction has been committed or aborted
 * (successfully or not), so calling tp_file_tx_abort() again is harmless.
 */
struct tp_file_tx {
	char *path;
	char *tmp_path;
	FILE *fp;
};

/**
 * tp_file_tx_begin() - open @path's temporary file for writing.
 * @tx:         transaction to fill in; its previous contents are ignored.
 * @path:       final path; its parent directory must exist.
 * @tmp_suffix: appended to @path to name the temporary file, or NULL for
 *              TP_FILE_TX_DEFAULT_SUFFIX (".tmp"). An existing temporary
 *              file of that name is truncated.
 *
 * Return: 0 with @tx->fp open; or -EINVAL (@tx or @path NULL, @path or
 * @tmp_suffix empty), -ENOMEM, or the -errno of fopen(3). On failure all
 * @tx fields are NULL and nothing is left on disk.
 */
int tp_file_tx_begin(struct tp_file_tx *tx, const char *path,
		     const char *tmp_suffix);

/**
 * tp_file_tx_commit() - finish the temporary file and rename it to its path.
 * @tx: transaction from a successful tp_file_tx_begin().
 *
 * Flushes and closes the stream, checks that every write succeeded, then
 * renames the temporary file over the final path (replacing any file there
 * atomically). Does not fsync: a publish is atomic for concurrent readers,
 * not durable across a power loss.
 *
 * Return: 0 when the file is in place; otherwise -EINVAL (@tx not open),
 * -EIO for a stream error without errno, or the -errno of fflush / fclose /
 * rename(2) (e.g. -EISDIR when @path is a directory). On failure the
 * temporary file is kept as evidence. Either way @tx is released.
 */
int tp_file_tx_commit(struct tp_file_tx *tx);

/**
 * tp_file_tx_abort() - give up a transaction.
 * @tx:        transaction from tp_file_tx_begin(), or one already finished
 *             (then this does nothing).
 * @keep_temp: true keeps the temporary file (flushed and closed) as
 *             evidence; false removes it.
 *
 * The final path is never touched. @tx is released. Errors closing or
 * removing the temporary file are logged at WARN, not returned.
 */
void tp_file_tx_abort(struct tp_file_tx *tx, bool keep_temp);

/**
 * tp_write_file_atomic() - publish @len bytes as the whole content of @path.
 * @path: final path; written via "@path.tmp" and rename.
 * @data: bytes to write (may be NULL when @len is 0).
 * @len:  number of bytes.
 *
 * Return: 0, or a negative errno as for tp_file_tx_begin() / _commit(). If
 * writing fails, the temporary file is kept as evidence.
 */
int tp_write_file_atomic(const char *path, const void *data, size_t len);

/**
 * tp_mkdir_p() - create a directory and any missing parents, like mkdir -p.
 * @path: directory path, absolute or relative; trailing slashes allowed.
 * @mode: permission bits for the directories created (before umask).
 *
 * Return: 0 when @path is a directory afterwards (existing ones are fine);
 * -EINVAL for NULL or "", -ENAMETOOLONG, -ENOTDIR when @path or one of its
 * parents exists and is not a directory, or the -errno of mkdir(2).
 */
int tp_mkdir_p(const char *path, mode_t mode);

/**
 * tp_read_file() - read a whole file into memory.
 * @path:     file to read (regular files, pipes and /proc files alike).
 * @data_out: receives a malloc'd buffer of the content plus a terminating
 *            NUL (not counted in the length); the caller frees it.
 * @len_out:  receives the content length in bytes; may be NULL.
 *
 * Return: 0; -EINVAL for NULL arguments, -ENOMEM, or the -errno of
 * open(2) / read(2) (-ENOENT, -EACCES, -EISDIR, ...). On failure
 * *@data_out is set to NULL.
 */
int tp_read_file(const char *path, char **data_out, size_t *len_out);

#endif /* TASKPROF_BASE_FILE_H */
