/* SPDX-License-Identifier: MIT */
/*
 * base/file.h — writing files so that readers never see half of one.
 *
 * Every output of taskprof is written to a temporary name beside its final
 * path and renamed into place when complete (ARCHITECTURE.md §3 step 6). A
 * failed write removes the temporary file unless the caller asks to keep it
 * as evidence (TP_FILE_TX_KEEP_TEMP_ON_FAILURE, tp_file_tx_abort(.., true)).
 *
 * What the final path already is decides how it is written:
 *   - missing or a regular file: temporary file + rename (atomic);
 *   - a symbolic link: its target is written (resolved, then as above or
 *     below); the link itself is never replaced; a dangling link is refused;
 *   - a character device or FIFO (/dev/stdout, a terminal, a pipe): written
 *     straight through, there is nothing to rename over; a FIFO without a
 *     reader is an error (-ENXIO), not a hang;
 *   - a directory: -EISDIR at tp_file_tx_begin(), nothing written (with an
 *     explicit temporary suffix: -EISDIR from the rename at commit, the
 *     older contract some callers log differently);
 *   - anything else (socket, block device): -EINVAL.
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

/* Suffix of the temporary file when tp_file_tx_begin() gets NULL; the
 * file is then named "<path>.XXXXXX.tmp" with a unique XXXXXX. */
#define TP_FILE_TX_DEFAULT_SUFFIX ".tmp"

/* tp_file_tx_begin_flags() flag: a failed tp_file_tx_commit() keeps the
 * temporary file as evidence (and says so in the message) instead of
 * removing it. */
#define TP_FILE_TX_KEEP_TEMP_ON_FAILURE 0x1u

/**
 * struct tp_file_tx - one file being written under a temporary name.
 * @path:     final path (owned copy).
 * @tmp_path: the temporary file (owned copy); NULL when @direct.
 * @fp:       stream open for writing on @tmp_path (or @path when @direct).
 * @flags:    TP_FILE_TX_* flags from tp_file_tx_begin_flags().
 * @direct:   @path is a character device or FIFO written in place.
 * @tmpreg:   @tmp_path's handle in base/tmp_registry.h (removed on
 *            SIGINT / SIGTERM / SIGHUP where a handler is installed), or <= 0.
 *
 * All fields are NULL once the transaction has been committed or aborted
 * (successfully or not), so calling tp_file_tx_abort() again is harmless.
 */
struct tp_file_tx {
	char *path;
	char *tmp_path;
	FILE *fp;
	unsigned flags;
	bool direct;
	int tmpreg;
};

/**
 * tp_file_tx_begin() - open @path's temporary file for writing.
 * @tx:         transaction to fill in; its previous contents are ignored.
 * @path:       final path; its parent directory must exist.
 * @tmp_suffix: NULL: the temporary file is a fresh "<path>.XXXXXX.tmp"
 *              (unique, so concurrent writers of one path do not collide;
 *              <path>'s file name is cut where the whole would pass
 *              NAME_MAX, so any valid name can be written);
 *              otherwise "<path><tmp_suffix>" exactly, truncated if present.
 *
 * Same as tp_file_tx_begin_flags() with no flags.
 *
 * Return: 0 with @tx->fp open; or -EINVAL (@tx or @path NULL, @path or
 * @tmp_suffix empty, @path a socket or block device), -EISDIR (@path is a
 * directory and @tmp_suffix NULL), -ENXIO (a FIFO without reader), -ENOENT (dangling symbolic
 * link or missing parent), -EEXIST (100 candidate unique names all taken),
 * -ENOMEM, or the -errno of open(2). tp_last_error() names the file. On failure
 * all @tx fields are NULL and nothing is left on disk.
 */
int tp_file_tx_begin(struct tp_file_tx *tx, const char *path,
		     const char *tmp_suffix);

/**
 * tp_file_tx_begin_flags() - tp_file_tx_begin() with TP_FILE_TX_* @flags.
 * @tx, @path, @tmp_suffix: as for tp_file_tx_begin().
 * @flags: 0 or TP_FILE_TX_KEEP_TEMP_ON_FAILURE.
 *
 * Return: as tp_file_tx_begin().
 */
int tp_file_tx_begin_flags(struct tp_file_tx *tx, const char *path, const char *tmp_suffix,
			   unsigned flags);

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
 * rename(2) (e.g. -EISDIR when @path became a directory). On failure the
 * temporary file is removed, or kept when the transaction was begun with
 * TP_FILE_TX_KEEP_TEMP_ON_FAILURE. A direct (device / FIFO) transaction
 * only flushes and closes. A failed write is "<path>: write failed:
 * <strerror>" naming the final path, e.g. "No space left on device" for a
 * full disk or device, "File too large" past the file-size limit (ulimit
 * -f; the taskprof command ignores SIGXFSZ, so the write fails with EFBIG
 * instead of killing the process). Either way @tx is released.
 */
int tp_file_tx_commit(struct tp_file_tx *tx);

/**
 * tp_stream_flush() - flush @fp and tell whether everything written to it
 * arrived (a full device or disk, the file-size limit, a closed descriptor,
 * a pipe whose reader went away).
 * @fp: stream open for writing (stdout, a tp_file_tx's fp, ...).
 *
 * When an earlier buffered write failed and its errno is gone (the stream
 * keeps only its error flag), the reason is found again where it can be:
 * -EPIPE for a pipe whose reader left, -EFBIG for a regular file at the
 * RLIMIT_FSIZE limit, -ENOSPC for a file system without a free block;
 * otherwise -EIO. Sets no error message: the caller names the file.
 *
 * Return: 0, -EINVAL for a NULL @fp, or the negative errno of the failure.
 */
int tp_stream_flush(FILE *fp);

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
 * tp_newest_run_file() - the newest run's @name under the current folder:
 * of the regular files outputs/<run>/@name (runs whose name starts with a
 * dot left out, as a shell glob would), the one modified last; equal
 * times go to the run name that sorts first. FIFOs and devices are
 * skipped (reading one could block).
 * @name:    file name in a run folder, e.g. "pmu.csv".
 * @outputs: set to "<cwd>/outputs" (for the caller's message; free it),
 *           or NULL when out of memory. May be NULL.
 * @skipped: set to "<path>: <why>" for the first outputs/<run>/@name that
 *           exists as a name but was left out (a symbolic link whose
 *           target does not exist, a FIFO, a folder, one stat() refuses),
 *           for the caller's "none found" message (free it), or
 *           "<cwd>/outputs: <strerror>" when outputs itself is there but
 *           cannot be listed (a file, a link loop); NULL when none was.
 *           May be NULL.
 *
 * Return: the path (free it), or NULL when there is none (or out of
 * memory).
 */
char *tp_newest_run_file(const char *name, char **outputs, char **skipped);

/**
 * tp_run_failed() - whether the run folder of @file (a file in it, such
 * as its l2_swimlane_records.json or pmu.csv) belongs to a run that failed
 * after writing outputs: its result.txt holds the line "status FAILED"
 * (the worker writes it then; a passing run's result.txt has no status
 * line).
 * @file: a path; its folder is what is checked.
 * @why, @len: receive the result.txt "error" line's text (cut to @len,
 *        "" when it has none); may be NULL / 0.
 *
 * Return: true for a failed run; false otherwise, also when there is no
 * readable result.txt.
 */
bool tp_run_failed(const char *file, char *why, size_t len);

/**
 * tp_run_result_value() - one value of the result.txt in @file's folder
 * (the worker writes it: one "key value" per line, e.g. "platform a5sim").
 * @file: a path; its folder is where result.txt is looked for.
 * @key:  the key ("platform").
 * @val, @len: receive the value of the first line with that key (cut to
 *        @len bytes with its NUL; "" when not found); @len >= 1.
 *
 * Return: whether such a line was found; false also when there is no
 * readable regular result.txt under 1 MiB.
 */
bool tp_run_result_value(const char *file, const char *key, char *val, size_t len);

/**
 * tp_newer_failed_run() - after an auto-detection picked @file
 * (outputs/<run>/@name, tp_newest_run_file()): the newest other run
 * folder beside it whose result.txt is newer than @file, says the run
 * failed, and which has no @name (a run that stalled before any task
 * finished, or was cut short), for a note that the pick is not the last
 * run. A run whose result.txt says the profiler that writes @name was
 * off ("swimlane_level 0" for l2_swimlane_records.json) is passed over.
 * @file: the picked path; @name: the file name looked for.
 *
 * Return: that folder's path (free it), or NULL when there is none (or
 * out of memory).
 */
char *tp_newer_failed_run(const char *file, const char *name);

/**
 * tp_file_tx_sweep() - remove the temporary files that writers killed in
 * the middle of a transaction left under @dir.
 * @dir:     folder to search, with every folder below it (symbolic links
 *           are not followed).
 * @removed: set to the number of files removed (may be NULL).
 *
 * A temporary file is a regular file named "<name>.XXXXXX.tmp" (X in
 * [a-z0-9]), as tp_file_tx_begin() creates them with the default suffix.
 * For a folder whose writers are all gone (an application that died of a
 * signal while its injector wrote): a live writer's file would go too.
 * Not thread-safe with respect to @dir's contents changing.
 *
 * Return: 0, or the negative errno of the first file or folder that could
 * not be read or removed (the others are still tried). Sets no
 * tp_last_error() message.
 */
int tp_file_tx_sweep(const char *dir, unsigned *removed);

/**
 * tp_write_file_atomic() - publish @len bytes as the whole content of @path.
 * @path: final path; written as tp_file_tx_begin() with a NULL suffix.
 * @data: bytes to write (may be NULL when @len is 0).
 * @len:  number of bytes.
 *
 * Return: 0, or a negative errno as for tp_file_tx_begin() / _commit(). If
 * writing fails, the temporary file is removed.
 */
int tp_write_file_atomic(const char *path, const void *data, size_t len);

/**
 * tp_mkdir_p() - create a directory and any missing parents, like mkdir -p.
 * @path: directory path, absolute or relative; trailing slashes allowed.
 * @mode: permission bits for the directories created (before umask).
 *
 * Return: 0 when @path is a directory afterwards (existing ones are fine);
 * -EINVAL for NULL or "", -ENAMETOOLONG, -ENOTDIR when @path or one of its
 * parents exists and is not a directory, -ENOENT / -ELOOP when one is a
 * symbolic link whose target does not exist / in a loop (the message says
 * which, see tp_path_bad_link()), or the -errno of mkdir(2).
 *
 * A folder of @path made or found here and removed before the next
 * mkdir(2) in it (a concurrent run that failed removes the empty folders it
 * made, tp_rmdir_made()) fails that mkdir(2) with ENOENT: the folders are
 * then made again, up to 8 passes in all.
 */
int tp_mkdir_p(const char *path, mode_t mode);

/**
 * tp_mkdir_fresh() - make a new folder @root/@name, or @root/@name_2, _3,
 * ... _999 when that name is taken, after @root and its missing parents
 * (as tp_mkdir_p(), mode 0755): a run folder, the uniqueness boundary
 * (ARCHITECTURE.md §6). mkdir(2) claims a name atomically, so concurrent
 * processes never get the same one.
 * @root:     the folder that holds it, absolute or relative.
 * @name:     the new folder's name (one component).
 * @dir:      receives the new folder's path; after a failed mkdir(2) of
 *            it, the path that failed.
 * @len:      size of @dir in bytes.
 * @made_len: in/out: 0, or what an earlier call set. Lowered to the
 *            tp_mkdir_missing_len() of @root, taken before each pass, when
 *            that is nonzero and shorter, and then published with
 *            tp_tmpreg_set_made_dirs() before the new folder is made (an
 *            interrupt removes the run folder, then them):
 *            tp_rmdir_made(@root, *@made_len) removes them while empty.
 *
 * Another process may remove @root, or a folder above it, between the
 * steps: a concurrent run that failed removes the empty folders it made
 * (tp_rmdir_made()), which can be the ones this call just made or found.
 * The mkdir(2) in it then fails with ENOENT, and the parents and the new
 * folder are made again (names counted from @name again: the folder
 * removed was empty), up to 8 passes in all.
 *
 * Return: 0 with the folder made; the errors of tp_mkdir_p() for @root;
 * -ENAMETOOLONG when the path does not fit @len ("output folder name too
 * long under <root>"); -EEXIST when all 999 names are taken ("no free
 * output folder name for <name> under <root>"); or the -errno of mkdir(2)
 * ("cannot create output folder <dir>: <reason>").
 */
int tp_mkdir_fresh(const char *root, const char *name, char *dir, size_t len,
		   size_t *made_len);

/**
 * tp_mkdir_set_test_point() - call @fn(@path, @arg) just before each
 * mkdir(2) of tp_mkdir_p() and tp_mkdir_fresh(), @path the folder about to
 * be made; @fn NULL: none. For tests, which remove a folder there as a
 * concurrent run's clean-up can (tests/unit/test_base_file.c). Set it only
 * while no other thread makes folders.
 */
void tp_mkdir_set_test_point(void (*fn)(const char *path, void *arg), void *arg);

/**
 * tp_mkdir_missing_len() - how much of a directory path does not exist yet.
 * @path: directory path, as for tp_mkdir_p().
 *
 * Return: the length in bytes of the shallowest prefix of @path, ending at
 * a component, that does not exist ("out" for "out/a/b" when there is no
 * "out"), or 0 when @path exists (or is empty), or has a "." or ".."
 * component (the folders made are then not prefixes of @path): what
 * tp_mkdir_p() will make, for tp_rmdir_made().
 */
size_t tp_mkdir_missing_len(const char *path);

/**
 * tp_rmdir_made() - remove the directories a tp_mkdir_p() made, deepest
 * first, while they are empty.
 * @path: the directory given to tp_mkdir_p(); written to (cut at each
 *        component removed, it ends as the last one tried).
 * @top_len: tp_mkdir_missing_len() of @path before the tp_mkdir_p();
 *           0 removes nothing.
 *
 * Async-signal-safe: rmdir(2) and byte operations only (the interrupt
 * handler uses it, base/tmp_registry.h).
 * Return: true when every one was removed (@path then holds the shallowest),
 * false when one was not empty or could not be removed (those above it
 * stay), or @top_len was 0 or longer than @path.
 */
bool tp_rmdir_made(char *path, size_t top_len);

/**
 * tp_path_bad_link() - find the symbolic link that makes @path unreachable.
 * @path: the path a call (stat, open, mkdir) failed on.
 * @why:  receives, when a link is found, one phrase naming it and the
 *        reason: "<link> is a symbolic link whose target <target> does not
 *        exist" or "<link> is a symbolic link in a loop (Too many levels of
 *        symbolic links)".
 * @len:  size of @why in bytes.
 *
 * Checks @path and each of its parents, shortest first, so the link named
 * is the first one that fails. Meant for a message after ENOENT, ELOOP or
 * EEXIST, whose strerror() ("File exists", "No such file or directory")
 * hides that a link is the cause.
 *
 * Return: true with @why filled in, or false (no such link, @why
 * untouched).
 */
bool tp_path_bad_link(const char *path, char *why, size_t len);

/* The reason tp_cwd_removed() gives, as the messages say it. */
#define TP_CWD_REMOVED_WHY "the working directory was removed: cd to a folder that exists"

/**
 * tp_cwd_removed() - whether the working directory has been removed (a
 * shell left in a deleted folder): a relative path can then name nothing
 * new, and mkdir / open fail with a bare ENOENT.
 * Return: true when getcwd(3) says the directory is unlinked (ENOENT).
 */
bool tp_cwd_removed(void);

/**
 * tp_dir_blocked() - whether a folder @path cannot be made because it, or
 * a folder above it, exists and is not a folder (a regular file, a FIFO)
 * or is a symbolic link to nothing or in a loop: checked before slow work,
 * so a run fails at once instead of after generating its inputs. Creates
 * nothing.
 * @path: the folder to be made (tp_mkdir_p()), NUL-terminated.
 *
 * Return: 0 when nothing in the way is known (also for a path whose first
 * missing component comes before anything that is not a folder, and for
 * errors other than that, which tp_mkdir_p() then reports);
 * -ENOTDIR with tp_last_error() "<path>: cannot create directory: <prefix>
 * exists and is not a directory", as tp_mkdir_p() says it; -ENOENT or
 * -ELOOP with "<path>: cannot create directory: <prefix> is a symbolic
 * link whose target <t> does not exist" (or "... in a loop (...)");
 * -ENOENT with "<path>: cannot create directory: " TP_CWD_REMOVED_WHY for a
 * relative path when tp_cwd_removed();
 * -ENAMETOOLONG for a path of PATH_MAX bytes or more; -EACCES / -EROFS
 * when the deepest existing folder on the path is on /proc or /sys, or
 * cannot be written (a read-only file system, no permission).
 */
int tp_dir_blocked(const char *path);

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

/**
 * tp_read_file_max() - tp_read_file() that stops past @max bytes.
 * @path, @data_out, @len_out: as for tp_read_file().
 * @max:      the most bytes the file may hold (a config file of a few KB:
 *            /dev/zero or a huge file must not take the memory).
 *
 * Return: as tp_read_file(), or -EFBIG (message names @path and @max)
 * once more than @max bytes were read.
 */
int tp_read_file_max(const char *path, size_t max, char **data_out, size_t *len_out);

#endif /* TASKPROF_BASE_FILE_H */
