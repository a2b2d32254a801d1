/* SPDX-License-Identifier: MIT */
#include "base/tmp_registry.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "base/log.h"

enum slot_state {
	SLOT_FREE = 0,
	SLOT_BUSY,    /* its owner is writing the path */
	SLOT_READY,   /* path complete; the owner may free it, the handler claim it */
	SLOT_CLAIMED, /* the interrupt handler owns it (never freed again) */
};

struct slot {
	_Atomic int state;
	char path[PATH_MAX];
};

static struct slot files[TP_TMPREG_SLOTS];
_Static_assert(TP_TMPREG_SLOTS <= 64, "tp_tmpreg_unlink_all() keeps a 64-bit mask of slots");
/* [i]: files[i] was registered and its file may be being created
 * (tp_tmpreg_add() until tp_tmpreg_created() / tp_tmpreg_remove()). */
static _Atomic bool creating_slot[TP_TMPREG_SLOTS];
/* How many creating_slot[] are set; the handler waits for 0 before its
 * second pass, so no file is created behind its back and left. */
static _Atomic int creating;
/* Set by the handler (tp_tmpreg_unlink_all()) before its first pass:
 * tp_tmpreg_add() then refuses (the process is ending). */
static _Atomic bool closing;
static struct slot run_dir;
/* The deepest folder made for an output; made_top_len: the length of the
 * shallowest one, a prefix of it (written before the slot's publish, read
 * after its claim). */
static struct slot made_dirs;
static size_t made_top_len;
/* "<file>\0<line>\0<unless>": the line to append to file on an interrupt,
 * unless that path exists ("" : none). */
static struct slot note;
/* "<name>\0<text>": the file to create in the run folder on an
 * interrupt, if it is not there. */
static struct slot unfinished;
/* "<lines>": written before the unfinished text (the run's settings). */
static struct slot unfinished_head;
/* The output being (or last) renamed into place, and the temp file's
 * handle; committed_done once the rename and the handle's removal are
 * over (written before the slot's publish / by its owner, read after the
 * claim). */
static struct slot committed;
static int committed_handle;
static _Atomic bool committed_done;
/* Set by tp_tmpreg_unlink_all(): the committing output's temp file was
 * gone (renamed) when the handler came. */
static bool committed_renamed;

/*
 * Take a FREE slot for writing. Acquire on success: pairs with the release
 * of slot_free(), so the previous owner's writes of the path happen before
 * ours (two threads may pass one slot back and forth: the committed slot
 * of concurrent tp_file_tx_commit() calls). The path written next is
 * published by the release store of READY.
 */
static bool slot_take(struct slot *s)
{
	int want = SLOT_FREE;
	return atomic_compare_exchange_strong_explicit(&s->state, &want, SLOT_BUSY,
						       memory_order_acquire, memory_order_relaxed);
}

/*
 * Release: the path's bytes written before happen-before the handler's
 * acquire CAS that reads READY (slot_claim), so it never sees half a path.
 */
static void slot_publish(struct slot *s)
{
	atomic_store_explicit(&s->state, SLOT_READY, memory_order_release);
}

/*
 * The owner gives a READY slot back. Release on success: pairs with the
 * acquire of the next slot_take(), which then overwrites the path after
 * every access of ours. If the handler claimed it first the CAS fails
 * (relaxed: nothing is published then) and the slot stays its.
 */
static void slot_free(struct slot *s)
{
	int want = SLOT_READY;
	atomic_compare_exchange_strong_explicit(&s->state, &want, SLOT_FREE,
						memory_order_release, memory_order_relaxed);
}

/*
 * The handler takes a READY slot for good. Acquire on success: pairs with
 * slot_publish()'s release, making the path complete. Relaxed on failure:
 * nothing is read then. A CAS, not a load, so the owner cannot free and
 * rewrite the path while the handler reads it.
 */
static bool slot_claim(struct slot *s)
{
	int want = SLOT_READY;
	return atomic_compare_exchange_strong_explicit(&s->state, &want, SLOT_CLAIMED,
						       memory_order_acquire, memory_order_relaxed);
}

/* End slot @i's creation window (see creating_slot); once only. */
static void creation_done(int i)
{
	/* release: the writer's file creation happens before the handler's
	 * acquire load of `creating` that sees it done (its second pass then
	 * finds the file). The exchange makes a second call a no-op. */
	if (atomic_exchange_explicit(&creating_slot[i], false, memory_order_relaxed))
		atomic_fetch_sub_explicit(&creating, 1, memory_order_release);
}

int tp_tmpreg_add(const char *path)
{
	size_t n = strlen(path);
	if (n >= PATH_MAX)
		return -ENAMETOOLONG;
	/* seq_cst, with the handler's seq_cst store of closing and load of
	 * creating: either this sees closing (and creates nothing) or the
	 * handler sees this creation pending and waits for it. */
	atomic_fetch_add_explicit(&creating, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&closing, memory_order_seq_cst)) {
		atomic_fetch_sub_explicit(&creating, 1, memory_order_relaxed);
		return -ECANCELED;
	}
	for (int i = 0; i < TP_TMPREG_SLOTS; i++) {
		struct slot *s = &files[i];
		if (!slot_take(s))
			continue;
		memcpy(s->path, path, n + 1);
		/* relaxed: read only by creation_done() on this slot's owner. */
		atomic_store_explicit(&creating_slot[i], true, memory_order_relaxed);
		slot_publish(s);
		return i + 1;
	}
	atomic_fetch_sub_explicit(&creating, 1, memory_order_relaxed);
	TP_DEBUG("tmp_registry: %d slots taken; %s is not removed on an interrupt",
		 TP_TMPREG_SLOTS, tp_shown(path));
	return -ENOSPC;
}

void tp_tmpreg_created(int handle)
{
	if (handle <= 0 || handle > TP_TMPREG_SLOTS)
		return;
	creation_done(handle - 1);
}

void tp_tmpreg_remove(int handle)
{
	if (handle <= 0 || handle > TP_TMPREG_SLOTS)
		return;
	creation_done(handle - 1);
	slot_free(&files[handle - 1]);
}

/* Claim and unlink every READY file slot, setting bit i of *@mine for
 * each slot i claimed. Return: files removed. */
static int unlink_pass(int ch, bool *ch_seen, uint64_t *mine)
{
	int removed = 0;
	for (int i = 0; i < TP_TMPREG_SLOTS; i++) {
		struct slot *s = &files[i];
		if (!slot_claim(s))
			continue;
		*mine |= 1ull << i;
		int rc = unlink(s->path);
		if (rc == 0)
			removed++;
		if (i + 1 == ch) {
			*ch_seen = true;
			/* Its temp file gone: renamed into place. */
			committed_renamed = rc != 0 && errno == ENOENT;
		}
	}
	return removed;
}

/* CLOCK_MONOTONIC in ns (clock_gettime is async-signal-safe). */
static long long mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void tp_tmpreg_set_dir(const char *dir)
{
	slot_free(&run_dir);
	if (!dir || strlen(dir) >= PATH_MAX || !slot_take(&run_dir))
		return;
	memcpy(run_dir.path, dir, strlen(dir) + 1);
	slot_publish(&run_dir);
}

int tp_tmpreg_unlink_all(void)
{
	int removed = 0;
	/* acquire: pairs with the publish of the committed slot; a peek (the
	 * claim comes in tp_tmpreg_claim_committed()). */
	const bool committing = atomic_load_explicit(&committed.state, memory_order_acquire) ==
				SLOT_READY;
	const int ch = committing ? committed_handle : 0;
	bool ch_seen = false;
	/* seq_cst: see tp_tmpreg_add(). From here no new file is registered. */
	atomic_store_explicit(&closing, true, memory_order_seq_cst);
	uint64_t mine = 0;
	removed += unlink_pass(ch, &ch_seen, &mine);
	/* A writer may be creating a file it registered (claimed above, its
	 * unlink too early) on another thread: wait for it, then remove what
	 * it made. Bounded: the writer may be this very thread, interrupted
	 * between its registration and its open. acquire: pairs with
	 * creation_done()'s release. */
	const long long deadline = mono_ns() + TP_TMPREG_CREATE_WAIT_NS;
	while (atomic_load_explicit(&creating, memory_order_seq_cst) > 0 &&
	       mono_ns() < deadline)
		;
	if (atomic_load_explicit(&creating, memory_order_acquire) == 0) {
		/* The slots claimed above whose files came after their unlink:
		 * unlink again (the claim keeps the path; ENOENT is fine). */
		for (int i = 0; i < TP_TMPREG_SLOTS; i++)
			if ((mine >> i & 1) && unlink(files[i].path) == 0)
				removed++;
	}
	removed += unlink_pass(ch, &ch_seen, &mine);
	/* The handle no longer registered: removed after its rename. */
	if (ch > 0 && !ch_seen)
		committed_renamed = true;
	return removed;
}

void tp_tmpreg_committing(int handle, const char *path)
{
	slot_free(&committed);
	if (handle <= 0 || !path || strlen(path) >= PATH_MAX || !slot_take(&committed))
		return;
	memcpy(committed.path, path, strlen(path) + 1);
	committed_handle = handle;
	/* relaxed: published by the slot's release below. */
	atomic_store_explicit(&committed_done, false, memory_order_relaxed);
	slot_publish(&committed);
}

void tp_tmpreg_committed(bool renamed)
{
	if (!renamed) {
		slot_free(&committed);
		return;
	}
	/* relaxed: a handler that claims the slot after this store reads it
	 * on this thread (signal handlers run on the committing thread of a
	 * single-threaded command) or sees the temp file gone anyway. */
	atomic_store_explicit(&committed_done, true, memory_order_relaxed);
}

const char *tp_tmpreg_claim_committed(void)
{
	if (!slot_claim(&committed))
		return NULL;
	/* relaxed: see tp_tmpreg_committed(). */
	const bool done = atomic_load_explicit(&committed_done, memory_order_relaxed);
	return done || committed_renamed ? committed.path : NULL;
}

const char *tp_tmpreg_claim_dir(void)
{
	return slot_claim(&run_dir) ? run_dir.path : NULL;
}

void tp_tmpreg_set_made_dirs(const char *deepest, size_t top_len)
{
	slot_free(&made_dirs);
	if (!deepest)
		return;
	size_t n = strlen(deepest);
	if (!top_len || top_len > n || n >= PATH_MAX || !slot_take(&made_dirs))
		return;
	memcpy(made_dirs.path, deepest, n + 1);
	made_top_len = top_len;
	slot_publish(&made_dirs);
}

const char *tp_tmpreg_remove_made_dirs(void)
{
	if (!slot_claim(&made_dirs))
		return NULL;
	return tp_rmdir_made(made_dirs.path, made_top_len) ? made_dirs.path : NULL;
}

/* Publish @n strings into @s back to back, each with its NUL; nothing
 * when they do not fit in PATH_MAX bytes or the slot is taken. */
static void slot_set_strings(struct slot *s, const char *const *str, int n)
{
	size_t len[3], total = 0;
	for (int i = 0; i < n; i++)
		total += (len[i] = strlen(str[i])) + 1;
	if (total > PATH_MAX || !slot_take(s))
		return;
	char *w = s->path;
	for (int i = 0; i < n; i++) {
		memcpy(w, str[i], len[i] + 1);
		w += len[i] + 1;
	}
	slot_publish(s);
}

void tp_tmpreg_set_note(const char *file, const char *line, const char *unless)
{
	slot_free(&note);
	if (file && line)
		slot_set_strings(&note, (const char *const[]){ file, line, unless ? unless : "" },
				 3);
}

/* @name, taken in @dir unless it starts with '/', into @buf (PATH_MAX
 * bytes). Async-signal-safe (strlen, memcpy: POSIX.1-2016). Return: @buf,
 * or NULL when a relative name has no @dir or the path is too long. */
static const char *in_dir(const char *dir, const char *name, char *buf)
{
	size_t nn = strlen(name);
	if (name[0] == '/') {
		memcpy(buf, name, nn + 1);
		return buf;
	}
	if (!dir)
		return NULL;
	size_t nd = strlen(dir);
	if (nd + 1 + nn >= PATH_MAX)
		return NULL;
	memcpy(buf, dir, nd);
	buf[nd] = '/';
	memcpy(buf + nd + 1, name, nn + 1);
	return buf;
}

/* open(2) @file with @flags (0644 if created), one write(2) of @text, close.
 * Async-signal-safe. Return: whether the whole text was written. */
static bool write_whole(const char *file, int flags, const char *text)
{
	int fd = open(file, flags, 0644);
	if (fd < 0)
		return false;
	size_t n = strlen(text);
	bool ok = write(fd, text, n) == (ssize_t)n;
	close(fd);
	return ok;
}

/* Interrupt path only (one reporter at a time): the joined paths. */
static char note_file[PATH_MAX], note_unless[PATH_MAX], unfinished_file[PATH_MAX];

bool tp_tmpreg_append_note(const char *dir)
{
	if (!slot_claim(&note))
		return false;
	const char *line = note.path + strlen(note.path) + 1;
	const char *unless = line + strlen(line) + 1;
	const char *file = in_dir(dir, note.path, note_file);
	if (!file)
		return false;
	if (*unless) {
		const char *u = in_dir(dir, unless, note_unless);
		if (!u || access(u, F_OK) == 0)
			return false;
	}
	return write_whole(file, O_WRONLY | O_APPEND | O_CLOEXEC, line);
}

void tp_tmpreg_set_unfinished(const char *name, const char *text)
{
	slot_free(&unfinished);
	if (name && text)
		slot_set_strings(&unfinished, (const char *const[]){ name, text }, 2);
}

void tp_tmpreg_set_unfinished_head(const char *lines)
{
	slot_free(&unfinished_head);
	if (lines)
		slot_set_strings(&unfinished_head, (const char *const[]){ lines }, 1);
}

/* Interrupt path only: the head, the unfinished text and its addition. */
static char unfinished_text[2 * PATH_MAX + 1024];

/* Append @s to @buf (of @cap bytes, @n used, NUL kept); cut when full. */
static size_t put_str(char *buf, size_t cap, size_t n, const char *s)
{
	while (*s && n + 1 < cap)
		buf[n++] = *s++;
	buf[n] = '\0';
	return n;
}

bool tp_tmpreg_mark_unfinished(const char *dir, const char *also)
{
	if (!dir || !slot_claim(&unfinished))
		return false;
	const char *text = unfinished.path + strlen(unfinished.path) + 1;
	const char *file = in_dir(dir, unfinished.path, unfinished_file);
	if (!file)
		return false;
	/* The head's lines (if published), then the text; with @also, the
	 * text's last line without its newline, "; ", @also, newline. */
	const size_t cap = sizeof(unfinished_text);
	size_t n = 0;
	unfinished_text[0] = '\0';
	if (slot_claim(&unfinished_head))
		n = put_str(unfinished_text, cap, n, unfinished_head.path);
	size_t len = strlen(text);
	if (also && *also && len && text[len - 1] == '\n') {
		for (size_t i = 0; i + 1 < len && n + 1 < cap; i++)
			unfinished_text[n++] = text[i];
		unfinished_text[n] = '\0';
		n = put_str(unfinished_text, cap - 1, n, "; ");
		n = put_str(unfinished_text, cap - 1, n, also);
		unfinished_text[n++] = '\n';
		unfinished_text[n] = '\0';
	} else {
		n = put_str(unfinished_text, cap, n, text);
	}
	return write_whole(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, unfinished_text);
}

void tp_tmpreg_reset(void)
{
	/* Relaxed: the caller guarantees no concurrent user. */
	for (int i = 0; i < TP_TMPREG_SLOTS; i++)
		atomic_store_explicit(&files[i].state, SLOT_FREE, memory_order_relaxed);
	atomic_store_explicit(&run_dir.state, SLOT_FREE, memory_order_relaxed);
	atomic_store_explicit(&made_dirs.state, SLOT_FREE, memory_order_relaxed);
	atomic_store_explicit(&note.state, SLOT_FREE, memory_order_relaxed);
	atomic_store_explicit(&unfinished.state, SLOT_FREE, memory_order_relaxed);
	atomic_store_explicit(&unfinished_head.state, SLOT_FREE, memory_order_relaxed);
	atomic_store_explicit(&committed.state, SLOT_FREE, memory_order_relaxed);
	committed_renamed = false;
	for (int i = 0; i < TP_TMPREG_SLOTS; i++)
		atomic_store_explicit(&creating_slot[i], false, memory_order_relaxed);
	atomic_store_explicit(&creating, 0, memory_order_relaxed);
	atomic_store_explicit(&closing, false, memory_order_relaxed);
}
