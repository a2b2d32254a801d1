/* SPDX-License-Identifier: MIT */
/*
 * base/tmp_registry.h — the temporary files an interrupted process removes.
 *
 * Writers register each temporary file (tp_file_tx's "<path>.XXXXXX.tmp",
 * the PMU collector's CSV shards) before creating it and unregister it
 * once it is renamed into place or removed. A SIGINT / SIGTERM / SIGHUP handler
 * (cli/interrupt.c) then removes whatever is registered with
 * tp_tmpreg_unlink_all(), which is async-signal-safe, and names the run
 * folder published with tp_tmpreg_set_dir().
 *
 * Fixed storage (TP_TMPREG_SLOTS paths of up to PATH_MAX bytes, in .bss),
 * no locks, no allocation: the handler may interrupt a writer in the middle
 * of tp_tmpreg_add() on its own thread. Each slot is owned by one party at
 * a time, passed on through its state (FREE → BUSY → READY → FREE, or
 * READY → CLAIMED by the handler, for good).
 */
#ifndef TASKPROF_BASE_TMP_REGISTRY_H
#define TASKPROF_BASE_TMP_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

/* Temporary files registered at once: a run has a handful (name map,
 * result.txt, records, deps.json, up to 7 PMU shards and their merge, the
 * trace); more are not removed on an interrupt (logged at DEBUG). */
#define TP_TMPREG_SLOTS 64

/* How long the interrupt handler waits, in ns, for writers between their
 * tp_tmpreg_add() and tp_tmpreg_created() (another thread creating a file
 * it registered) before its last pass. */
#define TP_TMPREG_CREATE_WAIT_NS 200000000LL

/**
 * tp_tmpreg_add() - register @path as a temporary file to remove if the
 * process is interrupted.
 * @path: the file, as open(2) will be given it (relative paths resolve
 *        against the working directory at removal time).
 *
 * Call before creating the file, so that no instant exists when the file
 * is there and not registered, and call tp_tmpreg_created() once the
 * creation was tried (made or failed): until then an interrupt handler on
 * another thread waits for it (TP_TMPREG_CREATE_WAIT_NS at most), so that
 * a file created just after its first pass is removed too.
 *
 * Return: a handle > 0 for tp_tmpreg_created() and tp_tmpreg_remove();
 * -ECANCELED when an interrupt handler is removing the files (the process
 * is ending): create nothing then; -ENAMETOOLONG (@path of PATH_MAX bytes
 * or more) or -ENOSPC (every slot taken): the file is not removed on an
 * interrupt, create it all the same. Pass any return to
 * tp_tmpreg_created() / tp_tmpreg_remove() (they ignore handles <= 0).
 */
int tp_tmpreg_add(const char *path);

/**
 * tp_tmpreg_created() - the file of @handle was created, or its creation
 * failed: the interrupt handler need not wait for it any more.
 * @handle: from tp_tmpreg_add(); <= 0 does nothing. A second call, or one
 *          after tp_tmpreg_remove(), does nothing.
 */
void tp_tmpreg_created(int handle);

/**
 * tp_tmpreg_remove() - forget a registration (the file was renamed into
 * place, removed, or is kept as evidence on purpose).
 * @handle: from tp_tmpreg_add(); <= 0 does nothing.
 *
 * Does nothing either when an interrupt handler has claimed the slot.
 */
void tp_tmpreg_remove(int handle);

/**
 * tp_tmpreg_set_dir() - publish the folder the current run writes to.
 * @dir: the folder, or NULL to withdraw it. The last call wins.
 */
void tp_tmpreg_set_dir(const char *dir);

/**
 * tp_tmpreg_unlink_all() - remove every registered file (interrupt path).
 *
 * Async-signal-safe: unlink(2), clock_gettime(2) and atomics only. Claims
 * each registered slot for good, so a writer's later tp_tmpreg_remove()
 * leaves it alone and a second call removes nothing twice. From its start
 * tp_tmpreg_add() refuses; writers on other threads still creating a file
 * they registered are waited for (TP_TMPREG_CREATE_WAIT_NS at most), and
 * what they made is removed too.
 *
 * Return: the number of files removed (those that no longer existed, e.g.
 * just renamed into place, are not counted).
 */
int tp_tmpreg_unlink_all(void);

/**
 * tp_tmpreg_claim_dir() - take the published run folder (interrupt path).
 *
 * Async-signal-safe. Claims it for good.
 *
 * Return: the folder (valid until tp_tmpreg_reset()), or NULL if none is
 * published.
 */
const char *tp_tmpreg_claim_dir(void);

/**
 * tp_tmpreg_set_made_dirs() - publish the folders this process made for an
 * output file, to remove on an interrupt if they are still empty.
 * @deepest: the deepest folder made (the output's parent), or NULL to
 *           withdraw (the output is in place, or the folders were removed).
 * @top_len: the length in bytes of the shallowest folder made: a prefix of
 *           @deepest ending at a component ("out" of "out/a/b"); 1 ..
 *           strlen(@deepest).
 * The last call wins. A path of PATH_MAX bytes or more, or a @top_len out
 * of range, publishes nothing.
 */
void tp_tmpreg_set_made_dirs(const char *deepest, size_t top_len);

/**
 * tp_tmpreg_remove_made_dirs() - rmdir(2) the published folders, deepest
 * first, up to the shallowest (interrupt path, after
 * tp_tmpreg_unlink_all()). Async-signal-safe. Claims them for good.
 * Stops at the first folder that is not empty.
 * Return: the shallowest folder when all were removed (valid until
 * tp_tmpreg_reset()), else NULL (none published, or some stayed).
 */
const char *tp_tmpreg_remove_made_dirs(void);

/**
 * tp_tmpreg_set_note() - a line to append to an existing file if the
 * process is interrupted (result.txt: "trace INTERRUPTED ...").
 * @file:   the file (not created if missing), or NULL to withdraw. A name
 *          without a leading '/' is taken in the run folder of the
 *          interrupt (tp_tmpreg_set_dir()), which need not exist yet.
 * @line:   the bytes to append, newline included.
 * @unless: a path (relative as @file), or NULL: the line is not appended
 *          when it exists by then (the output the line says is missing:
 *          one renamed into place just before the interrupt).
 * The last call wins; the three together must be shorter than PATH_MAX
 * bytes, else nothing is published.
 */
void tp_tmpreg_set_note(const char *file, const char *line, const char *unless);

/**
 * tp_tmpreg_append_note() - append the published line to its file
 * (interrupt path; after tp_tmpreg_unlink_all(), so that an output whose
 * rename was under way is either in place or gone). Async-signal-safe:
 * access(2), open(2) with O_APPEND, one write(2). Claims the note for good.
 * @dir: the run folder (tp_tmpreg_claim_dir()) for relative names; NULL:
 *       a note with one is not appended.
 * Return: whether the whole line was written (false: none published, its
 * @unless path exists, the file could not be opened, or a short write).
 */
bool tp_tmpreg_append_note(const char *dir);

/**
 * tp_tmpreg_set_unfinished() - a file to create in the run folder if the
 * process is interrupted (or crashes) before it exists (result.txt:
 * "status FAILED", "error the run was cut short ..."), so that a folder
 * left behind says it is not a finished run.
 * @name: a name in the run folder, or NULL to withdraw.
 * @text: its whole content.
 * The last call wins; the two together must be shorter than PATH_MAX
 * bytes, else nothing is published.
 */
void tp_tmpreg_set_unfinished(const char *name, const char *text);

/**
 * tp_tmpreg_set_unfinished_head() - lines to write before the text of
 * tp_tmpreg_set_unfinished() when the interrupt path creates that file
 * (the run's settings, once known: "callable X\ncase Y\n..."), so that
 * the folder says what ran, as a failed run's result.txt does.
 * @lines: whole lines, each ended by '\n', shorter than PATH_MAX bytes in
 *         all (else nothing is published); NULL withdraws them.
 * The last call wins.
 */
void tp_tmpreg_set_unfinished_head(const char *lines);

/**
 * tp_tmpreg_mark_unfinished() - create the published file in @dir if it
 * does not exist (interrupt path, after tp_tmpreg_unlink_all(): the
 * file's own writer can no longer rename one into place).
 * Async-signal-safe: open(2) with O_CREAT | O_EXCL, one write(2). Claims
 * it for good.
 * @dir:  the run folder (tp_tmpreg_claim_dir()); NULL: nothing is done.
 * @also: NULL or "": the text as published; else added to the text's last
 *        line after "; " (e.g. the first error the run logged before the
 *        interrupt), when the text ends with a newline. The whole is cut to
 *        PATH_MAX + 1 KiB.
 * Return: whether the file was created with the whole text.
 */
bool tp_tmpreg_mark_unfinished(const char *dir, const char *also);

/**
 * tp_tmpreg_committing() - publish that the temporary file of @handle is
 * about to be renamed to @path (tp_file_tx_commit(), before its rename).
 * @handle: from tp_tmpreg_add(); <= 0 publishes nothing.
 * @path:   the output's final path.
 * The last call wins.
 */
void tp_tmpreg_committing(int handle, const char *path);

/**
 * tp_tmpreg_committed() - the rename published by tp_tmpreg_committing()
 * is over.
 * @renamed: true: the output is in place (call after tp_tmpreg_remove() of
 *           its handle); false: the rename failed (withdraws it).
 */
void tp_tmpreg_committed(bool renamed);

/**
 * tp_tmpreg_claim_committed() - the output last renamed into place, when
 * the interrupt came after its rename (interrupt path, after
 * tp_tmpreg_unlink_all(), which notes whether its temporary file was
 * already gone). Async-signal-safe. Claims it for good.
 * Return: the output's path, or NULL (none published, or its temporary
 * file was still there: the output is not in place).
 */
const char *tp_tmpreg_claim_committed(void);

/**
 * tp_tmpreg_reset() - free every slot, claimed ones included (tests only:
 * no other thread may use the registry meanwhile).
 */
void tp_tmpreg_reset(void);

#endif /* TASKPROF_BASE_TMP_REGISTRY_H */
