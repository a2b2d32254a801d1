/* SPDX-License-Identifier: MIT */
/*
 * engine.c — what the injector does with a launch (spec/opprof.md §4.4,
 * §4.6–§4.9, §4.13; docs/op-internals.md).
 *
 * Kernel replay of one selected launch (W warm-ups, P measured passes):
 *
 *   open the replay window (other threads' malloc/free/memcpy/launch wait)
 *   synchronize; choose the snapshot scope from the budget; snapshot
 *   W x { restore; launch; note its args writes }  results discarded
 *   P x { restore; start AICORE_PMU + TASK_TIME with pass p's events;
 *         launch (pass 0: with the hidden instrumentation buffer); stop;
 *         wait for both END_OF_PASS (reader thread); note its args
 *         writes; pass_<p>.bin; hash }
 *   restore; the application's own launch, once, through the real function
 *   close the window                               => W + P + 1 executions
 *
 * A launch call the runtime would reject (launch_rejected()) is none of
 * this: it goes to the runtime unprofiled, unseen by the selection.
 *
 * Over the host budget the snapshot is spilled to dump/snapshot.bin
 * (take_snapshot()). With no snapshot (no room on disk either): only pass
 * 0 runs, once, unrestored —
 * that execution IS the application's (status=degraded). Application
 * replay (TASKPROF_PASS=i): the same single measured execution with
 * pass i's events, no snapshot, no warm-up.
 *
 * Range replay (range_markers=on, replay_mode=range): between
 * tp_rt_range_push and tp_rt_range_pop on a thread, launches and H2D /
 * D2D copies are captured, not run; mallocs run (their addresses are baked
 * into captured arguments) and are registered; frees are queued; a D2H
 * copy is refused with -ENOTSUP ("unsupported in range"): its data would
 * not exist yet. Captured launch arguments: the args pointer is opaque
 * host memory of unknown size, so the capture copies a bounded window of
 * TP_OP_ARGS_WINDOW (256) bytes of it (stopping at an unreadable page) and
 * the replay passes the copy: an args struct the application reuses or
 * changes between two captured launches keeps each launch's values, and
 * structs up to 256 bytes are supported (a guard after the copy turns a
 * read past it into an error naming the launch: args_guard_fault());
 * host memory an args struct points to is NOT copied and must stay valid
 * until the pop. Args inside a registered allocation (device memory,
 * which the snapshot covers) and args with no readable byte are passed
 * unchanged, not copied. Every
 * captured operation keeps the device current at its call; a range on two
 * devices is not replayed (its operations run once, each on its device,
 * status=skipped). At pop: snapshot every registered allocation of the
 * range's device (born-in-range ones included), W warm-ups of the whole list, P passes (restore, channels,
 * the list, drain); memory is left as after the last pass (that pass is
 * the application's execution: W + P executions per captured launch);
 * then the queued frees run. Records of a pass are split per launch by
 * the device launch sequence number.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/file.h"
#include "base/log.h"
#include "op/inject/inject.h"
#include "platform/tile/core_ctx.h"
#include "op/procstat.h"
#include "op/registry.h"
#include "platform/rt_internal.h"
#include "taskprof/kernel.h"

/* Largest hidden instrumentation buffer, bytes; above it (huge block_dim x
 * instr_cap) the launch runs without one and says so. */
#define INSTR_MAX_BYTES (256u << 20)
/* Channels every pass starts (bit = channel id). */
#define PASS_MASK ((1u << TP_DRV_CH_AICORE_PMU) | (1u << TP_DRV_CH_TASK_TIME))

/* The profiled launch's directory and what launch.txt says about it. */
struct lctx {
	const struct inj_launch *l;
	char dir[4300];
	int k;
	const char *status;     /* ok | degraded | failed | interrupted | skipped */
	char note[600];
	const char *scope;      /* all | none */
	const char *storage;    /* memory | file | none: where the snapshot lives */
	uint64_t snap_bytes;
	uint32_t passes_done;
	const char *range;      /* range name, or NULL */
	struct tp_rt_tool_stats st;
	char *replay;           /* replay.txt lines */
	size_t replay_len, replay_cap;
	/* Range capture: on e_pending (e_mu) until its range pops, and the
	 * capturing thread's launch count (thread-local, alive until that
	 * thread's exit, which unlinks first). */
	struct lctx *pnext;
	bool pending;
	_Atomic size_t *range_nl;
};

static pthread_mutex_t e_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tp_op_filter e_filter;
/* Next k per (device, name): a hint for tp_op_claim_dir (e_mu). */
struct khint {
	struct khint *next;
	int device;
	int next_k;
	char name[TP_OP_NAME_MAX + 1];
};
static struct khint *e_hints;
/* The launch being profiled, for the fatal paths (set under the window). */
static struct lctx *e_cur;
/* Kernel replay: a replayed execution (a warm-up or a measured pass, not
 * the application's own launch) is running, and the device allocations
 * its kernel made (e_kmu): freed after it, since the restore puts device
 * memory back as it was before the launch, when nothing pointed to them
 * (each replay would otherwise leak them; inj_kreplay_call()). */
static _Atomic bool e_kreplay;
static pthread_mutex_t e_kmu = PTHREAD_MUTEX_INITIALIZER;
static void **e_kalloc;
static size_t e_nkalloc, e_capkalloc;
/* Per launch: kernel allocations released, kernel frees left to the
 * application's own execution (e_kmu). */
static uint64_t e_kfreed, e_kskipped;
/* The blocks a replayed execution's kernels allocated and freed again
 * (e_kmu; the first 64, forgotten at the execution's end). */
static void *e_kgone[64];
static size_t e_ngone;
/* The blocks allocated before the launch whose frees a replayed
 * execution's kernels left to the application's execution (e_kmu; the
 * first 64, forgotten at the execution's end). */
static void *e_kskip[64];
static size_t e_nskip;
/*
 * A file the injector keeps open by name (e_mu): the application may close
 * its descriptor behind the injector's back (a loop closing 3..1023) and
 * open a file of its own under that number, which must never receive the
 * injector's bytes; kept_fd() checks the identity before each use and
 * opens the file again by name when the descriptor is no longer it.
 */
struct kept {
	int fd;     /* -1: not open */
	dev_t dev;  /* identity of the file behind @fd */
	ino_t ino;
};
#define KEPT_CLOSED { -1, 0, 0 }
/* launches.txt, opened on first use, and whether opening or writing it
 * failed (reported once; e_mu). */
static struct kept e_launches = KEPT_CLOSED;
static bool e_launches_failed;
/* The process called the device API through the interposer, so its
 * launches.txt exists (relaxed: a lone flag; e_mu orders the file). */
static atomic_bool e_api_called;
/* --kill on bookkeeping (e_mu): selected launches not yet finished,
 * finished profiles per device, and "exit decided". */
static unsigned e_inflight;
static uint32_t e_completed[TP_RT_MAX_DEVICES];
static bool e_killing;
/* Profiled launches captured in ranges not popped yet (e_mu). */
static struct lctx *e_pending;

/*
 * The selection counters survive exec (docs/op.md "Which launches": they
 * count per process, and an exec'd image is the same process): after
 * every change they are written to <base>/.selection_<pid>, and the
 * injector loaded into a new image of the process (same pid, same start
 * time) goes on from them (inj_engine_resume()). A hidden name: the
 * report's walk and the launcher's listing skip it. The start time
 * (/proc/self/stat field 22, clock ticks since boot) is what exec keeps
 * and a later process that reuses the pid does not share.
 */
#define SEL_MAGIC "TPOPSEL1"
struct sel_state {
	char magic[8];
	uint64_t start;
	uint64_t seen[TP_RT_MAX_DEVICES];
	uint64_t matched[TP_RT_MAX_DEVICES];
	uint64_t profiled[TP_RT_MAX_DEVICES];
	uint32_t completed[TP_RT_MAX_DEVICES];
};
/* Its path, file, whether this process wrote it, whether writing it
 * failed (reported once), and the start time written into it (e_mu). */
static char e_sel_path[4300];
static struct kept e_sel = KEPT_CLOSED;
static bool e_sel_written, e_sel_failed;
static uint64_t e_start;

/* Unlink @c from e_pending; false if it was not there (e_mu held). */
static bool pending_take(struct lctx *c)
{
	if (!c->pending)
		return false;
	for (struct lctx **pp = &e_pending; *pp; pp = &(*pp)->pnext)
		if (*pp == c) {
			*pp = c->pnext;
			break;
		}
	c->pending = false;
	c->pnext = NULL;
	return true;
}

/* The calling process's start time: field 22 of /proc/self/stat
 * (starttime), in clock ticks since boot; 0 when it cannot be read. */
static uint64_t proc_start(void)
{
	char buf[1024];
	uint64_t t;
	if (tp_proc_stat_read(0, buf, sizeof(buf)) ||
	    tp_proc_stat_u64(buf, TP_PROC_STAT_STARTTIME, &t))
		return 0;
	return t;
}

/* e_sel_path for the calling process, and its start time. */
static void sel_path_set(void)
{
	snprintf(e_sel_path, sizeof(e_sel_path), "%s/.selection_%ld", g_inj.base,
		 (long)getpid());
	e_start = proc_start();
}

int inj_engine_init(void)
{
	const struct tp_op_config *c = &g_inj.cfg;
	int rc = tp_op_filter_init(&e_filter, c->kernel_name, c->launch_skip_before_match,
				   c->launch_skip, c->launch_count);
	/* --range-markers on: only launches inside a range, in every mode. */
	if (!rc)
		tp_op_filter_set_ranges(&e_filter, c->range_markers);
	return rc;
}

void inj_engine_atfork_child(void)
{
	/* Another thread of the parent may have held it. */
	pthread_mutex_init(&e_mu, NULL);
	pthread_mutex_init(&e_kmu, NULL);
	/* relaxed: the child's only thread. */
	atomic_store_explicit(&e_kreplay, false, memory_order_relaxed);
	e_nkalloc = e_ngone = e_nskip = 0; /* the parent's replayed execution's blocks */
	e_kfreed = e_kskipped = 0;
	e_cur = NULL;
	/* Only the forking thread survives: no profile is in progress. */
	e_inflight = 0;
	memset(e_completed, 0, sizeof(e_completed));
	e_killing = false;
	e_pending = NULL;
	/* A profiled child logs to its own launches_<pid>.txt, and keeps
	 * its own selection state (closing the inherited descriptors leaves
	 * the parent's open). */
	if (e_launches.fd >= 0)
		close(e_launches.fd);
	e_launches.fd = -1;
	e_launches_failed = false;
	if (e_sel.fd >= 0)
		close(e_sel.fd);
	e_sel.fd = -1;
	e_sel_written = e_sel_failed = false;
	sel_path_set();
	atomic_store_explicit(&e_api_called, false, memory_order_relaxed);
	/* Selection counts per process (spec §4.6): a profiled child starts
	 * from zero. */
	(void)inj_engine_init();
}

/* ---- names, directories, small files -------------------------------------- */

void inj_launch_name(struct inj_launch *l)
{
	char *raw = l->real_name;
	const size_t rawn = sizeof(l->real_name);
	tp_rt_internal_kernel_name(l->kernel, l->attr, raw, rawn);
	tp_op_name_sanitise(raw, l->name, sizeof(l->name));
}

/* Claim device<D>/<name>/<k>/ (e_mu held). */
static int claim(const struct inj_launch *l, char *dir, size_t n, int *k)
{
	struct khint *h = e_hints;
	while (h && (h->device != l->device || strcmp(h->name, l->name)))
		h = h->next;
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		h->device = l->device;
		snprintf(h->name, sizeof(h->name), "%s", l->name);
		h->next = e_hints;
		e_hints = h;
	}
	*k = h->next_k;
	int rc = tp_op_claim_dir(g_inj.base, l->device, l->name, dir, n, k);
	if (!rc)
		h->next_k = *k + 1;
	return rc;
}

/* @k's descriptor for @path, opened (with @flags, created 0644) when it
 * is not open or no longer the file it was: the application closed it,
 * maybe opening a file of its own under its number, which is left alone
 * (never written, never closed). e_mu held.
 * Return: the descriptor, or -1 with errno set by open(2). */
static int kept_fd(struct kept *k, const char *path, int flags)
{
	struct stat st;
	if (k->fd >= 0 && !fstat(k->fd, &st) && st.st_dev == k->dev && st.st_ino == k->ino)
		return k->fd;
	const bool lost = k->fd >= 0;
	k->fd = open(path, flags | O_CREAT | O_CLOEXEC, 0644);
	if (k->fd < 0)
		return -1;
	if (fstat(k->fd, &st)) {
		const int e = errno;
		close(k->fd);
		k->fd = -1;
		errno = e;
		return -1;
	}
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	if (lost)
		inj_log(TP_LOG_INFO, "%s: its descriptor was closed (by the application?): "
			"opened again", path);
	return k->fd;
}

/* Open launches.txt (created, appended to: a new image of the process
 * after exec goes on with the file of the one before) unless it is open
 * or could not be (e_mu held). */
static void launches_open(void)
{
	if (e_launches_failed)
		return;
	if (kept_fd(&e_launches, g_inj.launches_path, O_WRONLY | O_APPEND) < 0) {
		/* Once: the launcher fails on the first report anyway. */
		e_launches_failed = true;
		inj_fail("%s: cannot open for writing: %s", g_inj.launches_path, strerror(errno));
	}
}

/* Write the selection counters to e_sel_path (e_mu held); a failure is
 * reported once, as a file the injector could not write: an exec'd image
 * of the process would count from zero again. */
static void sel_save(void)
{
	if (e_sel_failed)
		return;
	struct sel_state s;
	memset(&s, 0, sizeof(s));
	memcpy(s.magic, SEL_MAGIC, sizeof(s.magic));
	s.start = e_start;
	memcpy(s.seen, e_filter.seen, sizeof(s.seen));
	memcpy(s.matched, e_filter.matched, sizeof(s.matched));
	memcpy(s.profiled, e_filter.profiled, sizeof(s.profiled));
	memcpy(s.completed, e_completed, sizeof(s.completed));
	const int fd = kept_fd(&e_sel, e_sel_path, O_RDWR);
	if (fd < 0) {
		e_sel_failed = true;
		inj_fail("%s: cannot open for writing: %s", e_sel_path, strerror(errno));
		return;
	}
	/* One write at offset 0 of a file of constant size: an exec by
	 * another thread finds the old or the new state, whole. */
	const ssize_t w = pwrite(fd, &s, sizeof(s), 0);
	if (w != (ssize_t)sizeof(s)) {
		e_sel_failed = true;
		inj_fail("%s: write failed: %s", e_sel_path,
			 w < 0 ? strerror(errno) : "short write (file system full?)");
		return;
	}
	e_sel_written = true;
}

void inj_engine_resume(void)
{
	sel_path_set();
	int fd = open(e_sel_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return; /* the process's first image: nothing to go on from */
	struct sel_state s;
	const ssize_t n = pread(fd, &s, sizeof(s), 0);
	close(fd);
	/* Another process's, whose pid this one reuses (or a start time
	 * that cannot be read): start from zero, overwriting it. */
	if (n != (ssize_t)sizeof(s) || memcmp(s.magic, SEL_MAGIC, sizeof(s.magic)) ||
	    !e_start || s.start != e_start)
		return;
	pthread_mutex_lock(&e_mu);
	memcpy(e_filter.seen, s.seen, sizeof(s.seen));
	memcpy(e_filter.matched, s.matched, sizeof(s.matched));
	memcpy(e_filter.profiled, s.profiled, sizeof(s.profiled));
	memcpy(e_completed, s.completed, sizeof(s.completed));
	e_sel_written = true; /* this process's: removed at its exit */
	uint64_t seen = 0, profiled = 0;
	for (int d = 0; d < TP_RT_MAX_DEVICES; d++) {
		seen += s.seen[d];
		profiled += s.profiled[d];
	}
	pthread_mutex_unlock(&e_mu);
	inj_log(TP_LOG_INFO, "a new image of the process (exec): the launch selection goes on "
		"from the image before (%" PRIu64 " launch%s seen, %" PRIu64 " profiled)", seen,
		seen == 1 ? "" : "es", profiled);
}

void inj_engine_api_called(void)
{
	if (atomic_load_explicit(&e_api_called, memory_order_relaxed))
		return;
	pthread_mutex_lock(&e_mu);
	launches_open();
	pthread_mutex_unlock(&e_mu);
	atomic_store_explicit(&e_api_called, true, memory_order_relaxed);
}

/* One line to launches.txt (O_APPEND: each line is one write, whole even
 * when several processes of a run share the file). @n: its bytes, the
 * newline included. */
static void launches_append(const char *line, int n)
{
	if (n <= 0)
		return;
	pthread_mutex_lock(&e_mu);
	launches_open();
	if (!e_launches_failed && e_launches.fd >= 0) {
		ssize_t w = write(e_launches.fd, line, (size_t)n);
		if (w != n && !e_launches_failed) {
			e_launches_failed = true;
			inj_fail("%s: write failed: %s", g_inj.launches_path,
				 w < 0 ? strerror(errno) : "short write (file system full?)");
		}
	}
	pthread_mutex_unlock(&e_mu);
}

/* A launch's line in launches.txt: k is its folder index when profiled;
 * real= is the real name, each byte outside '!'..'~' and each '%' as
 * %XX: application replay matches on it as well, since two real names
 * can sanitise to one name= ("a+b" and "a_b"), and names it in its
 * messages. */
static void log_launch(const struct inj_launch *l, int k, bool profiled)
{
	char real[3 * sizeof(l->real_name)];
	size_t o = 0;
	for (const unsigned char *c = (const unsigned char *)l->real_name; *c; c++) {
		if (*c > ' ' && *c < 0x7f && *c != '%')
			real[o++] = (char)*c;
		else
			o += (size_t)snprintf(real + o, sizeof(real) - o, "%%%02X", *c);
	}
	real[o] = '\0';
	char line[sizeof(real) + 128];
	int n = snprintf(line, sizeof(line),
			 "device=%d name=%s block_dim=%u k=%d profiled=%d real=%s\n",
			 l->device, l->name, l->block_dim, k < 0 ? 0 : k, profiled ? 1 : 0, real);
	launches_append(line, n < (int)sizeof(line) ? n : (int)sizeof(line) - 1);
}

static const char *cores_name(const struct tp_rt_launch_attr *a)
{
	if (!a || a->cores == TP_RT_CORES_ANY)
		return "any";
	return a->cores == TP_RT_CORES_AIV ? "aiv" : "aic";
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4400];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* The message names the temporary file and the reason. */
	if (tp_write_file_atomic(path, data, len))
		inj_fail("%s", tp_last_error());
}

/* launch.txt of @c into @buf (@cap bytes). Allocates nothing (the args
 * guard's fault handler uses it). Return: its length. */
static size_t format_launch_txt(const struct lctx *c, char *buf, size_t cap)
{
	const struct tp_op_config *cfg = &g_inj.cfg;
	/* A note is one line: newlines would start a new key. */
	char note[sizeof(c->note)];
	snprintf(note, sizeof(note), "%s", c->note);
	for (char *p = note; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	/* The real kernel name (the directory has the sanitised one); a
	 * control character would break the key=value line. */
	char rname[sizeof(c->l->real_name)];
	snprintf(rname, sizeof(rname), "%s", c->l->real_name[0] ? c->l->real_name : c->l->name);
	for (char *p = rname; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '_';
	int n = snprintf(buf, cap,
			 "name=%s\nblock_dim=%u\nargs_size=%zu\ncores=%s\npid=%ld\ndevice=%d\n"
			 "platform=%s\n"
			 "arch=%s\nsys_cnt_freq=%" PRIu64 "\ncore_freq_hz=%llu\nreplay_mode=%s\n"
			 "warm_up=%u\npasses=%u\npasses_done=%u\nstatus=%s\nnote=%s\n"
			 "snapshot_scope=%s\nsnapshot_storage=%s\nsnapshot_bytes=%" PRIu64 "\n",
			 rname, c->l->block_dim, c->l->args_size, cores_name(c->l->attr), (long)getpid(),
			 c->l->device, c->st.platform ? c->st.platform : "unknown",
			 tp_op_arch_name(cfg->arch), c->st.sys_cnt_freq,
			 (unsigned long long)TP_CORE_FREQ_HZ, tp_op_replay_mode_name(cfg->replay_mode),
			 cfg->replay_mode == TP_OP_REPLAY_APPLICATION ? 0 : cfg->warm_up,
			 cfg->plan.npasses, c->passes_done, c->status, note, c->scope,
			 c->storage ? c->storage : "none", c->snap_bytes);
	if (c->range && n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, "range=%s\n", c->range);
	if (n < 0 || (size_t)n >= cap)
		n = (int)strlen(buf);
	return (size_t)n;
}

static void write_launch_txt(const struct lctx *c)
{
	char buf[4096];
	write_file(c->dir, "launch.txt", buf, format_launch_txt(c, buf, sizeof(buf)));
}

/* @dir/@name with @len bytes of @data, replaced whole (a temporary file
 * renamed), with async-signal-safe calls only: for a signal handler,
 * which must not allocate (tp_write_file_atomic() does). Best effort: the
 * process is ending with a fatal error that stderr and the fatal mark
 * carry too. */
static void write_file_sigsafe(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4400], tmp[4420];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* tp_file_tx's temporary-name pattern, which the launcher sweeps */
	snprintf(tmp, sizeof(tmp), "%s.fatal0.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	bool ok = write(fd, data, len) == (ssize_t)len;
	ok &= close(fd) == 0;
	if (!ok || rename(tmp, path))
		(void)unlink(tmp);
}

void inj_fatal_launch_dir(const char *dir, const char *note)
{
	inj_end_launch_dir(dir, "failed", note);
}

void inj_end_launch_dir(const char *dir, const char *status, const char *note)
{
	struct lctx *c = e_cur;
	if (!c || strcmp(c->dir, dir))
		return;
	/* The process ends without releasing a spilled snapshot. */
	char spill[4400];
	snprintf(spill, sizeof(spill), "%s/dump/snapshot.bin", c->dir);
	(void)unlink(spill);
	c->status = status;
	snprintf(c->note, sizeof(c->note), "%s", note);
	write_launch_txt(c);
	if (c->replay_len)
		write_file(c->dir, "dump/replay.txt", c->replay, c->replay_len);
}

/* Restore failure: fatal (never "warn and go on", spec §3.3 rule 8). */
static void fatal_restore(struct lctx *c)
{
	char msg[700];
	snprintf(msg, sizeof(msg), "%s", tp_last_error());
	if (inj_exiting()) {
		/* Another thread is ending the process (exit(), or main()
		 * returned), and its teardown released the device memory this
		 * restore wanted: not the replay's fault. The exit ends this
		 * thread with the process, after the application's own exit
		 * work; only an exit still not done in 10 s (a thread of it
		 * waiting for this one) gets the fatal end below. */
		inj_log(TP_LOG_INFO, "%s: restore cut short by the application's exit: %s",
			c->l->name, msg);
		for (int i = 0; i < 100; i++)
			usleep(100000);
	}
	inj_log(TP_LOG_ERROR, "%s: %s; the device memory is in an unknown state: exiting "
		"with status %d", c->l->name, msg, INJ_EXIT_FATAL);
	char note[600];
	snprintf(note, sizeof(note), "restore failed: %.500s", msg);
	inj_fatal_launch_dir(c->dir, note);
	inj_exit_fatal(note);
}

static void replay_line(struct lctx *c, uint32_t p, uint64_t restored, uint64_t hash,
			uint64_t wall_ns, uint64_t kernel_ns)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "pass=%u restored_bytes=%" PRIu64
			 " output_hash=%016" PRIx64 " wall_ns=%" PRIu64 " kernel_ns=%" PRIu64 "\n",
			 p, restored, hash, wall_ns, kernel_ns);
	if (c->replay_len + (size_t)n + 1 > c->replay_cap) {
		size_t cap = c->replay_cap ? 2 * c->replay_cap : 1024;
		char *r = realloc(c->replay, cap);
		if (!r)
			return;
		c->replay = r;
		c->replay_cap = cap;
	}
	memcpy(c->replay + c->replay_len, line, (size_t)n);
	c->replay_len += (size_t)n;
}

/* The LAUNCH record's duration in @b, ns (0 when none). */
static uint64_t kernel_ns_of(const struct inj_pass_buf *b, uint64_t freq)
{
	const struct tp_op_rec *r = (const struct tp_op_rec *)b->data;
	size_t n = b->len / sizeof(*r);
	for (size_t i = 0; i < n; i++)
		if (r[i].kind == TP_OP_REC_LAUNCH && freq)
			return (uint64_t)((double)(r[i].t_end - r[i].t_start) * 1e9 / (double)freq);
	return 0;
}

static void write_pass(const struct lctx *c, uint32_t p, const struct inj_pass_buf *b)
{
	char name[64];
	snprintf(name, sizeof(name), "dump/pass_%u.bin", p);
	write_file(c->dir, name, b->data ? b->data : "", b->len);
}

static int device_stats(int dev, struct tp_rt_tool_stats *st)
{
	memset(st, 0, sizeof(*st));
	int rc = tp_rt_tool_device_stats(dev, st);
	if (rc == -ENODEV && g_inj.real.set_device) {
		/* Not opened yet (nothing allocated): the launch opens it
		 * anyway. set_device changes only this thread's current
		 * device, which is already @dev. */
		(void)g_inj.real.set_device(dev);
		rc = tp_rt_tool_device_stats(dev, st);
	}
	return rc;
}

/* ---- launching ------------------------------------------------------------- */

static int real_launch(const struct inj_launch *l)
{
	if (l->ex)
		return g_inj.real.launch_ex ? g_inj.real.launch_ex(l->kernel, l->block_dim, l->args,
								   l->attr)
					    : -ENOSYS;
	return g_inj.real.launch ? g_inj.real.launch(l->kernel, l->block_dim, l->args) : -ENOSYS;
}

/*
 * Whether the runtime refuses @l without running it: a NULL kernel, a
 * block_dim outside 1..TP_RT_MAX_BLOCK_DIM, an unknown attr->cores (the
 * argument checks of rt.c's rt_launch, in its order), or a current device
 * that cannot be opened (a forked child's inherited device, a bad
 * TASKPROF_PLATFORM: the real tp_rt_set_device of the thread's current
 * device, which is @l->device, runs the same open as the launch and
 * changes nothing else). A launch from a kernel (-EPERM) never gets here
 * (the hooks pass it through). Such a call is no kernel launch: profiled,
 * it took a --launch-count slot and its every execution failed.
 */
static bool launch_rejected(const struct inj_launch *l)
{
	if (!l->kernel || l->block_dim < 1 || l->block_dim > TP_RT_MAX_BLOCK_DIM)
		return true;
	if (l->attr && l->attr->cores != TP_RT_CORES_ANY && l->attr->cores != TP_RT_CORES_AIV &&
	    l->attr->cores != TP_RT_CORES_AIC)
		return true;
	return g_inj.real.set_device && g_inj.real.set_device(l->device) != 0;
}

/*
 * A launch call launch_rejected() found the runtime refuses: to the
 * runtime as the application made it, unprofiled and unseen by the
 * selection, so the application gets the runtime's own error and message.
 * launches.txt gets a "# rejected" line, never a launch line (every
 * reader skips '#' lines; the launcher counts these). Should the runtime
 * run it after all (a device that failed to open, then opened), it is an
 * unprofiled launch and logged as one. @gate: take the gate, as any
 * launch outside a range does.
 * Return: the runtime's result, its message in tp_last_error().
 */
static int pass_rejected(const struct inj_launch *l, bool gate)
{
	int t = gate ? tp_op_gate_enter() : 0;
	int rc = real_launch(l);
	if (gate)
		tp_op_gate_exit(t);
	if (!rc) {
		log_launch(l, -1, false);
		return 0;
	}
	char msg[TP_ERROR_MSG_MAX], line[512];
	snprintf(msg, sizeof(msg), "%s", tp_last_error());
	int n = snprintf(line, sizeof(line), "# rejected device=%d name=%s block_dim=%u error=%d\n",
			 l->device, l->name, l->block_dim, rc);
	launches_append(line, n < (int)sizeof(line) ? n : (int)sizeof(line) - 1);
	/* The file write may have set another error. */
	return tp_set_error(rc, "%s", msg);
}

/* The hidden instrumentation buffer of one launch. */
struct instr {
	void *dev;
	size_t bytes;
	uint32_t cap;
};

static void instr_alloc(const struct inj_launch *l, struct instr *in)
{
	memset(in, 0, sizeof(*in));
	if (!g_inj.cfg.instr || !g_inj.real.malloc || !g_inj.real.memcpy)
		return;
	size_t bytes = tp_rt_instr_bytes(l->block_dim, g_inj.cfg.instr_cap);
	if (bytes > INSTR_MAX_BYTES) {
		inj_log(TP_LOG_WARN, "%s: instrumentation buffer of %zu bytes (block_dim %u x %u "
			"points) is over %u MiB: launch profiled without it", l->name, bytes,
			l->block_dim, g_inj.cfg.instr_cap, INSTR_MAX_BYTES >> 20);
		return;
	}
	char *host = calloc(1, bytes);
	if (!host)
		return;
	struct tp_instr_hdr *h = (struct tp_instr_hdr *)host;
	*h = (struct tp_instr_hdr){ TP_INSTR_MAGIC, TP_INSTR_VERSION, l->block_dim,
				    g_inj.cfg.instr_cap };
	void *dev = NULL;
	/* The REAL malloc: the buffer is the tool's, never registered. */
	int rc = g_inj.real.malloc(&dev, bytes);
	if (!rc)
		rc = g_inj.real.memcpy(dev, host, bytes, TP_RT_MEMCPY_HOST_TO_DEVICE);
	free(host);
	if (rc) {
		inj_log(TP_LOG_WARN, "%s: no instrumentation buffer (%zu bytes): %s", l->name,
			bytes, tp_last_error());
		if (dev)
			g_inj.real.free(dev);
		return;
	}
	in->dev = dev;
	in->bytes = bytes;
	in->cap = g_inj.cfg.instr_cap;
}

static const char *const instr_kinds[] = {
	"?", "block_begin", "block_end", "mark", "range_begin", "range_end", "scalar_begin",
	"scalar_end",
};

/* Copy the buffer back and write dump/instr.txt, resolving the scalar
 * section names (addresses in this process) here. */
static void instr_write(const struct lctx *c, const struct instr *in)
{
	if (!in->dev)
		return;
	char *host = malloc(in->bytes);
	if (!host)
		return;
	if (g_inj.real.memcpy(host, in->dev, in->bytes, TP_RT_MEMCPY_DEVICE_TO_HOST)) {
		inj_log(TP_LOG_WARN, "%s: reading the instrumentation buffer: %s", c->l->name,
			tp_last_error());
		free(host);
		return;
	}
	char path[4400];
	snprintf(path, sizeof(path), "%s/dump/instr.txt", c->dir);
	struct tp_file_tx tx;
	if (tp_file_tx_begin(&tx, path, NULL)) {
		inj_fail("%s", tp_last_error());
		free(host);
		return;
	}
	fprintf(tx.fp, "# block core kind id name t_ticks cycles\n");
	/* The kernel can write anywhere in device memory, this buffer too:
	 * a header that is not what instr_alloc() wrote means the points
	 * around it are suspect as well, so none is reported; records of no
	 * known kind are left out and counted. The blocks are found with the
	 * tool's own geometry, never the header's. */
	const struct tp_instr_hdr *h = (const struct tp_instr_hdr *)host;
	bool overwritten = h->magic != TP_INSTR_MAGIC || h->version != TP_INSTR_VERSION ||
			   h->block_dim != c->l->block_dim || h->per_block_cap != in->cap;
	const size_t stride =
		sizeof(struct tp_instr_block) + (size_t)in->cap * sizeof(struct tp_instr_rec);
	uint64_t unknown = 0;
	for (uint32_t b = 0; !overwritten && b < c->l->block_dim; b++) {
		struct tp_instr_block *blk =
			(struct tp_instr_block *)(host + sizeof(*h) + (size_t)b * stride);
		uint32_t cnt = blk->count < in->cap ? blk->count : in->cap;
		struct tp_instr_rec *r = (struct tp_instr_rec *)(blk + 1);
		long core = -1;
		for (uint32_t i = 0; i < cnt; i++)
			if (r[i].kind == TP_INSTR_BLOCK_BEGIN) {
				core = (long)r[i].id;
				break;
			}
		for (uint32_t i = 0; i < cnt; i++) {
			if (r[i].kind < TP_INSTR_BLOCK_BEGIN || r[i].kind > TP_INSTR_SCALAR_END) {
				unknown++;
				continue;
			}
			char raw[128] = "-", name[128];
			if (r[i].name) {
				size_t got = tp_op_safe_read((const void *)(uintptr_t)r[i].name, raw,
							     sizeof(raw) - 1);
				raw[got] = '\0';
				if (!raw[0])
					snprintf(raw, sizeof(raw), "-");
			}
			tp_op_name_sanitise(raw, name, sizeof(name));
			if (!strcmp(raw, "-"))
				snprintf(name, sizeof(name), "-");
			fprintf(tx.fp, "%u %ld %s %u %s %" PRIu64 " %" PRIu64 "\n", b, core,
				instr_kinds[r[i].kind], r[i].id, name, r[i].t, r[i].cycles);
		}
		if (blk->overflow)
			fprintf(tx.fp, "overflow %u %u\n", b, blk->overflow);
	}
	if (overwritten) {
		inj_log(TP_LOG_WARN, "%s: the instrumentation buffer's header was overwritten "
			"during the launch (a write past the end of one of the kernel's buffers?): "
			"its points are left out", c->l->name);
		fprintf(tx.fp, "# header overwritten during the launch: points left out\n");
	} else if (unknown) {
		inj_log(TP_LOG_WARN, "%s: %" PRIu64 " instrumentation points of no known kind "
			"(overwritten during the launch?) left out", c->l->name, unknown);
		fprintf(tx.fp, "# %" PRIu64 " points of no known kind left out\n", unknown);
	}
	if (tp_file_tx_commit(&tx))
		inj_fail("%s", tp_last_error());
	free(host);
}

static void instr_free(struct instr *in)
{
	if (in->dev && g_inj.real.free)
		g_inj.real.free(in->dev);
	in->dev = NULL;
}

/* Start both channels with pass @p's events. */
static int start_channels(int dev, uint32_t p)
{
	const struct tp_op_pass *ps = &g_inj.cfg.plan.pass[p];
	struct tp_drv_prof_config cfg = { .pass = p, .n_aic = ps->n[TP_OP_AIC],
					  .n_aiv = ps->n[TP_OP_AIV] };
	memcpy(cfg.aic_events, ps->ev[TP_OP_AIC], sizeof(cfg.aic_events));
	memcpy(cfg.aiv_events, ps->ev[TP_OP_AIV], sizeof(cfg.aiv_events));
	int rc = tp_drv_prof_start(dev, TP_DRV_CH_AICORE_PMU, &cfg);
	if (rc)
		return rc;
	rc = tp_drv_prof_start(dev, TP_DRV_CH_TASK_TIME, &cfg);
	if (rc)
		(void)tp_drv_prof_stop(dev, TP_DRV_CH_AICORE_PMU);
	return rc;
}

/* The watchdog around one execution (warm-up or pass) of a replay. */
static void watch_on(const struct lctx *c)
{
	uint64_t tmo_ns = (uint64_t)g_inj.cfg.pass_timeout_s * 1000000000ull;
	inj_reader_watch(tp_now_ns() + tmo_ns, c->dir);
}

static void watch_off(void)
{
	inj_reader_watch(0, NULL);
}

/* What one measured pass runs between start and stop. */
typedef int (*pass_body_fn)(void *arg);

/*
 * One measured pass: arm the reader, start the channels, run @body, stop,
 * wait for both END_OF_PASS. A drain that does not finish is fatal (the
 * records of the pass would be incomplete). Return: 0 with @body's result
 * in @body_rc, or the channel error (nothing ran).
 */
static int run_pass(struct lctx *c, uint32_t p, struct inj_pass_buf *buf, pass_body_fn body,
		    void *arg, int *body_rc)
{
	int dev = c->l->device;
	inj_reader_arm(buf, PASS_MASK);
	int rc = start_channels(dev, p);
	if (rc) {
		char msg[600];
		snprintf(msg, sizeof(msg), "%s", tp_last_error());
		(void)inj_reader_wait(0);
		return tp_set_error(rc, "%s", msg);
	}
	watch_on(c);
	*body_rc = body(arg);
	watch_off();
	(void)tp_drv_prof_stop(dev, TP_DRV_CH_AICORE_PMU);
	(void)tp_drv_prof_stop(dev, TP_DRV_CH_TASK_TIME);
	if (inj_reader_wait((int)(g_inj.cfg.pass_timeout_s * 1000u))) {
		/* The process is exiting (another thread returned from main()
		 * or called exit()), which stopped the reader: the pass is cut
		 * short, not hung; the exit goes on (its atexit work too). */
		if (inj_exiting())
			return tp_set_error(-ECANCELED, "the application exited during pass %u", p);
		inj_log(TP_LOG_ERROR, "%s: pass %u: the channels did not drain within %u s: %s",
			c->l->name, p, g_inj.cfg.pass_timeout_s, inj_timeout_advice());
		char note[400];
		snprintf(note, sizeof(note), "pass drain timed out; %s", inj_timeout_advice());
		inj_fatal_launch_dir(c->dir, note);
		inj_exit_fatal(note);
	}
	return 0;
}

/* A pass (or a launch's profiling) that could not start or was cut short:
 * the profiler's failure (inj_fail(): taskprof op exits 1), unless the
 * application itself is exiting (-ECANCELED from run_pass(), or another
 * thread's exit tearing down the device and the reader under this
 * launch): the launch is then incomplete, and the exit goes on. */
static void pass_failed(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pass_failed(int rc, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rc == -ECANCELED || inj_exiting())
		inj_log(TP_LOG_ERROR, "%s", msg);
	else
		inj_fail("%s", msg);
}

/* A pass whose body ran but some of whose records the reader could not
 * keep (out of memory): the profiler failed. Sets the launch's status and
 * note, says so (exit status 1). Return: true when @buf lost records. */
static bool pass_lost(struct lctx *c, uint32_t p, const struct inj_pass_buf *buf,
		      const char *what)
{
	if (!buf->lost)
		return false;
	c->status = "failed";
	snprintf(c->note, sizeof(c->note), "channels: the channel reader ran out of memory: "
		 "%zu records of pass %u lost", buf->lost, p);
	inj_fail("%s: %s", what, c->note);
	return true;
}

struct one_launch {
	const struct inj_launch *l;
	struct instr *in; /* NULL: without the hidden buffer */
};

static int body_one(void *arg)
{
	const struct one_launch *o = arg;
	const struct inj_launch *l = o->l;
	if (o->in && o->in->dev)
		return tp_rt_tool_launch(l->kernel, l->block_dim, l->args, l->attr, o->in->dev,
					 o->in->bytes);
	return tp_rt_tool_launch(l->kernel, l->block_dim, l->args, l->attr, NULL, 0);
}

/* ---- kernel replay ---------------------------------------------------------- */

/*
 * Spec §4.13 "kernel writes memory not from tp_rt_malloc": not restored,
 * warn. The pointer-looking words of a replayed launch's args that reach
 * writable memory outside the launch device's registered allocations
 * (tp_op_args_outside(): host memory, untracked device memory, another
 * device's allocation) are watched: the first WATCH_BYTES at each (fewer
 * at an unreadable page) are hashed before the first execution and again
 * after it, and memory that changed gets one warning for the launch
 * (stderr and taskprof.log): every warm-up and pass writes it again and
 * nothing restores it. The output hash covers registered allocations only,
 * so Replay Consistent cannot tell.
 *
 * Why not warn on the words alone: the runtime passes no args size, so the
 * scan reads a 256-byte window (TP_OP_ARGS_WINDOW) that usually reaches
 * past the args struct into the caller's other stack slots (saved frame
 * pointers, host buffers, locals): a test of the words alone warned on
 * nearly every launch. Of the stacks only the calling thread's part above
 * the args counts (the application's frames): below them the injector's
 * own frames live and change, and other threads' stacks change as those
 * threads run (range replay's captured copy is on no stack: no stack
 * counts).
 */
#define WATCH_BYTES 512u

struct args_watch {
	size_t n;
	bool done;
	struct {
		struct tp_op_arg_ref ref;
		size_t len;
		uint64_t hash;
	} w[TP_OP_ARGS_WINDOW / 8];
};

/* [lo, hi) of the calling thread's stack; false when unknown. */
static bool thread_stack(uintptr_t *lo, uintptr_t *hi)
{
	pthread_attr_t at;
	void *addr;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &at))
		return false;
	bool ok = !pthread_attr_getstack(&at, &addr, &size);
	pthread_attr_destroy(&at);
	*lo = (uintptr_t)addr;
	*hi = (uintptr_t)addr + size;
	return ok;
}

static uint64_t watch_hash(uintptr_t p, size_t *len)
{
	static _Thread_local unsigned char buf[WATCH_BYTES];
	/* Never faults (process_vm_readv), invisible to ASan. */
	size_t got = tp_op_safe_read((const void *)p, buf, WATCH_BYTES);
	if (len)
		*len = got;
	return tp_op_hash64(TP_OP_HASH_SEED, buf, got);
}

/* Before the first execution of @l, whose replay passes @args. */
static void watch_begin(struct args_watch *aw, const struct inj_launch *l, const void *args)
{
	struct tp_op_arg_ref ref[TP_OP_ARGS_WINDOW / 8];
	aw->n = 0;
	aw->done = false;
#if defined(__SANITIZE_THREAD__)
	/* Not under ThreadSanitizer: its runtime keeps per-thread state in
	 * anonymous memory that changes whenever instrumented code runs, and
	 * a stray word of the 256-byte window can point into it (a warning
	 * for a kernel that wrote nothing: test_op_instr's range replay). */
	(void)l;
	(void)args;
	(void)ref;
	return;
#endif
	/* Of the stacks, only the calling thread's part above the args, when
	 * they are on it: the application's frames, which the injector never
	 * writes. */
	uintptr_t slo = 0, shi = 0;
	const uintptr_t a = (uintptr_t)args;
	if (!thread_stack(&slo, &shi) || a < slo || a >= shi)
		slo = shi = 0;
	else
		slo = a;
	size_t n = tp_op_args_outside(l->device, args, TP_OP_ARGS_WINDOW, slo, shi, ref,
				      TP_OP_ARGS_WINDOW / 8);
	if (n > TP_OP_ARGS_WINDOW / 8)
		n = TP_OP_ARGS_WINDOW / 8;
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;
		uint64_t h = watch_hash(ref[i].value, &len);
		if (!len)
			continue;
		aw->w[aw->n].ref = ref[i];
		aw->w[aw->n].len = len;
		aw->w[aw->n].hash = h;
		aw->n++;
	}
}

/* After the first execution: warn when memory a watched word reaches
 * changed. Once per launch (later calls do nothing). @execs: how many
 * times the replay executes the kernel in all. */
static void watch_check(struct args_watch *aw, const struct inj_launch *l, uint32_t execs)
{
	if (aw->done)
		return;
	aw->done = true;
	size_t changed = 0, first = 0;
	for (size_t i = 0; i < aw->n; i++) {
		/* Each address once (a struct may hold it twice). */
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = aw->w[j].ref.value == aw->w[i].ref.value;
		if (seen)
			continue;
		size_t len = 0;
		uint64_t h = watch_hash(aw->w[i].ref.value, &len);
		if (len != aw->w[i].len || h != aw->w[i].hash)
			if (!changed++)
				first = i;
	}
	if (!changed)
		return;
	const struct tp_op_arg_ref *r = &aw->w[first].ref;
	char where[160], more[96] = "";
	if (r->device < 0)
		snprintf(where, sizeof(where), "memory outside every tp_rt_malloc allocation (host "
			 "memory, or device memory taskprof does not track)");
	else
		snprintf(where, sizeof(where), "an allocation of device %d (the replay saves "
			 "device %d's only)", r->device, l->device);
	if (changed > 1)
		snprintf(more, sizeof(more), "; %zu more args word%s point%s to memory that changed",
			 changed - 1, changed > 2 ? "s" : "", changed > 2 ? "" : "s");
	inj_log(TP_LOG_WARN, "%s: the kernel wrote %s at or after 0x%" PRIxPTR " (args word at "
		"+%zu points there%s): replay cannot restore it, so it is written %u times "
		"instead of once; use --replay-mode application", l->name, where, r->value,
		r->offset, more, execs);
}

/*
 * The args of a kernel replay's executions. A kernel may write its own
 * args struct (a counter, a result field: host memory the snapshot does
 * not cover), so every warm-up and pass hands the next execution other
 * args, and the application sees W + P + 1 executions' writes instead of
 * one. That is said, once per launch, not undone: the runtime passes no
 * args size (rt.h: a pointer, no length), and the bytes beside a struct
 * may be another thread's, changing while the kernel runs (a counter in
 * the next global), which a write-back would revert. So the window
 * tp_op_safe_read() gets at the args pointer, TP_OP_ARGS_WINDOW (256)
 * bytes or fewer at an unreadable page, is compared before and after each
 * replayed execution, and a change is reported (docs/op.md "Limits":
 * --replay-mode application runs the launch once per run). Args inside a
 * registered allocation are left to the snapshot, which restores them.
 */
struct args_guard {
	unsigned char *args;    /* NULL: nothing watched */
	size_t n;               /* bytes of @before read */
	unsigned char before[TP_OP_ARGS_WINDOW];
	size_t lo, hi;          /* offsets [lo, hi) executions changed; lo == hi: none */
	uint32_t changed;       /* executions that changed some */
};

static void args_guard_init(struct args_guard *g, const struct inj_launch *l, bool restore)
{
	struct tp_op_alloc a;
	memset(g, 0, sizeof(*g));
	if (restore && l->args && tp_op_reg_lookup(l->args, &a))
		g->args = l->args;
}

/* Before an execution: the bytes it starts from. */
static void args_before(struct args_guard *g)
{
	if (g->args)
		g->n = tp_op_safe_read(g->args, g->before, sizeof(g->before));
}

/* After it: which bytes it changed (never written back, see above). */
static void args_after(struct args_guard *g)
{
	if (!g->args || !g->n)
		return;
	unsigned char now[TP_OP_ARGS_WINDOW];
	size_t n = tp_op_safe_read(g->args, now, g->n);
	bool changed = false;
	for (size_t i = 0; i < n; i++) {
		if (now[i] == g->before[i])
			continue;
		if (g->lo == g->hi || i < g->lo)
			g->lo = i;
		if (i + 1 > g->hi)
			g->hi = i + 1;
		changed = true;
	}
	g->changed += changed;
}

/*
 * The offsets [lo, hi) of an args struct as the warnings say them:
 * "byte +N" for one byte, "bytes +A..+B" (inclusive) for more. hi > lo.
 */
static void byte_range_text(char *out, size_t cap, size_t lo, size_t hi)
{
	if (hi - lo == 1)
		snprintf(out, cap, "byte +%zu", lo);
	else
		snprintf(out, cap, "bytes +%zu..+%zu", lo, hi - 1);
}

/* After the replay: one warning when the args changed during executions. */
static void args_guard_report(const struct args_guard *g, const struct inj_launch *l,
			      uint32_t execs)
{
	if (!g->changed)
		return;
	char where[64];
	byte_range_text(where, sizeof(where), g->lo, g->hi);
	inj_log(TP_LOG_WARN, "%s: the args memory changed during %u of the %u replayed "
		"executions (%s at %p): the kernel wrote its args, or another thread wrote "
		"memory beside them; not undone (the runtime passes no args size), so later "
		"executions got other args and the application sees every execution's writes; "
		"use --replay-mode application", l->name, g->changed, execs, where,
		(void *)g->args);
}

/* The snapshot budget in bytes (spec §4.9). */
static uint64_t budget(const struct tp_rt_tool_stats *st)
{
	const struct tp_op_config *c = &g_inj.cfg;
	if (c->mem_limit_bytes)
		return c->mem_limit_bytes;
	return (uint64_t)st->mem_capacity * c->mem_limit_pct / 100u;
}

/*
 * The single measured execution: application replay's run of pass @p, or
 * kernel replay over budget (pass 0). It is the application's execution:
 * its result is returned to the application.
 */
static int measure_once(struct lctx *c, uint32_t p)
{
	struct instr in;
	instr_alloc(c->l, &in);
	struct inj_pass_buf buf = { 0 };
	struct one_launch o = { c->l, &in };
	int lrc = 0;
	uint64_t t0 = tp_now_ns();
	int rc = run_pass(c, p, &buf, body_one, &o, &lrc);
	uint64_t t1 = tp_now_ns();
	if (rc) {
		/* Channels refused (or records lost): the profiler failed; the
		 * application's launch still runs. */
		c->status = "failed";
		snprintf(c->note, sizeof(c->note), "channels: %.500s", tp_last_error());
		pass_failed(rc, "%s: pass %u: %s", c->l->name, p, c->note);
		free(buf.data);
		instr_free(&in);
		/* -ECANCELED: the pass, this launch, ran; the exit cut its
		 * drain short. */
		return rc == -ECANCELED ? lrc : real_launch(c->l);
	}
	if (pass_lost(c, p, &buf, c->l->name)) {
		/* The pass was the application's launch: it ran. */
		free(buf.data);
		instr_free(&in);
		return lrc;
	}
	write_pass(c, p, &buf);
	replay_line(c, p, 0, 0, t1 - t0, kernel_ns_of(&buf, c->st.sys_cnt_freq));
	c->passes_done = 1;
	if (lrc) {
		c->status = "failed";
		snprintf(c->note, sizeof(c->note), "launch failed: %.500s", tp_last_error());
	}
	instr_write(c, &in);
	instr_free(&in);
	free(buf.data);
	return lrc;
}

/*
 * The snapshot of a replay on @dev (spec §4.9), taken before the warm-up:
 *
 *   1. the footprint fits --replay-mem-limit: host memory (anonymous mmap);
 *   2. (the args-only scope is never used: restoring only the allocations
 *      the args point to would let every warm-up and pass change the
 *      others, which the kernel reaches indirectly through pointers in
 *      device memory, and corrupt the application; nothing tells which
 *      memory a kernel reaches, and what it wrote cannot be undone);
 *   3. else, or when host memory is short: every allocation of @dev spilled
 *      to <@c->dir>/dump/snapshot.bin, if its file system has the room
 *      (removed when the snapshot is released);
 *   4. else none: the caller runs the launch once (degraded); @c->note
 *      says why.
 *
 * Sets @c->scope, @c->storage, @c->snap_bytes. Return: the snapshot, or
 * NULL (case 4).
 */
static struct tp_op_snap *take_snapshot(struct lctx *c, int dev, const char *what)
{
	uint64_t limit = budget(&c->st), foot = tp_op_reg_footprint(dev);
	struct tp_op_snap *snap = NULL;
	char mem_err[300] = "";
	if (foot <= limit) {
		if (!tp_op_snap_take(dev, TP_OP_SNAP_ALL, NULL, 0, &snap)) {
			c->scope = "all";
			c->storage = "memory";
			c->snap_bytes = tp_op_snap_bytes(snap);
			return snap;
		}
		snprintf(mem_err, sizeof(mem_err), "%s", tp_last_error());
	}
	char path[4400];
	snprintf(path, sizeof(path), "%s/dump/snapshot.bin", c->dir);
	if (!tp_op_snap_take_file(dev, path, &snap)) {
		c->scope = "all";
		c->storage = "file";
		c->snap_bytes = tp_op_snap_bytes(snap);
		if (mem_err[0])
			inj_progress("%s: no snapshot in host memory (%s): spilled to %s", what,
				     mem_err, path);
		else
			inj_progress("%s: footprint %" PRIu64 " B > --replay-mem-limit %" PRIu64
				     " B: snapshot spilled to %s", what, foot, limit, path);
		return snap;
	}
	c->scope = "none";
	c->storage = "none";
	c->status = "degraded";
	if (mem_err[0])
		snprintf(c->note, sizeof(c->note), "no snapshot in host memory (%.200s), nor on "
			 "disk (%.250s); use --replay-mode application", mem_err, tp_last_error());
	else
		snprintf(c->note, sizeof(c->note), "footprint %" PRIu64 " B > limit %" PRIu64
			 " B and no room to spill it (%.380s); use --replay-mode application", foot,
			 limit, tp_last_error());
	return NULL;
}

bool inj_kreplay_call(void)
{
	/* relaxed: set and cleared by the launching thread while the
	 * kernel's AICore threads run, around each replayed execution; the
	 * launch itself orders it before and after their work. */
	return atomic_load_explicit(&e_kreplay, memory_order_relaxed) &&
	       tp_core_ctx_current() != NULL;
}

void inj_kreplay_alloc(void *p)
{
	pthread_mutex_lock(&e_kmu);
	if (e_nkalloc == e_capkalloc) {
		size_t cap = e_capkalloc ? 2 * e_capkalloc : 16;
		void **v = realloc(e_kalloc, cap * sizeof(*v));
		if (!v) {
			pthread_mutex_unlock(&e_kmu);
			inj_log(TP_LOG_WARN, "out of memory: the kernel's allocation %p stays "
				"allocated after its replayed execution", p);
			return;
		}
		e_kalloc = v;
		e_capkalloc = cap;
	}
	e_kalloc[e_nkalloc++] = p;
	pthread_mutex_unlock(&e_kmu);
}

int inj_kreplay_free(void *p)
{
	int r = 0;
	pthread_mutex_lock(&e_kmu);
	for (size_t i = 0; i < e_nkalloc; i++)
		if (e_kalloc[i] == p) {
			e_kalloc[i] = e_kalloc[--e_nkalloc];
			r = 1;
			break;
		}
	if (r) {
		/* Remembered until the execution's end: a second free of it
		 * gets the runtime's -EINVAL, not the skip's 0. */
		if (e_ngone < sizeof(e_kgone) / sizeof(e_kgone[0]))
			e_kgone[e_ngone++] = p;
	} else {
		for (size_t i = 0; i < e_ngone; i++)
			if (e_kgone[i] == p)
				r = -EINVAL;
		/* An older block this execution already "freed" (skipped):
		 * a double free, as the runtime would answer it. */
		for (size_t i = 0; i < e_nskip && !r; i++)
			if (e_kskip[i] == p)
				r = -EINVAL;
		struct tp_op_alloc a;
		if (!r && tp_op_reg_lookup(p, &a) == 0) {
			if (a.base != (uintptr_t)p) {
				r = -EINVAL; /* inside a block, not its start */
			} else {
				if (e_nskip < sizeof(e_kskip) / sizeof(e_kskip[0]))
					e_kskip[e_nskip++] = p;
				e_kskipped++;
			}
		} else if (!r) {
			/* No block the injector knows of (never allocated,
			 * or a kernel's of an earlier launch): the runtime
			 * decides, as in the application's execution. */
			r = 1;
		}
	}
	pthread_mutex_unlock(&e_kmu);
	return r;
}

/* Start (@on) or end a replayed execution (kernel replay; range replay:
 * the warm-ups and every pass but the last); what its kernels allocate
 * is kept in e_kalloc until kreplay_discard() or kreplay_keep(). */
static void kreplay_exec(bool on)
{
	/* relaxed: see inj_kreplay_call(). */
	atomic_store_explicit(&e_kreplay, on, memory_order_relaxed);
}

/* A restore follows the replayed execution that ended: free what its
 * kernels allocated (nothing points to it once device memory is put back
 * as it was before). */
static void kreplay_discard(void)
{
	pthread_mutex_lock(&e_kmu);
	for (size_t i = 0; i < e_nkalloc; i++)
		if (g_inj.real.free && g_inj.real.free(e_kalloc[i]) == 0)
			e_kfreed++;
	e_nkalloc = 0;
	e_ngone = e_nskip = 0;
	pthread_mutex_unlock(&e_kmu);
}

/* No restore follows the replayed execution that ended: it stands as the
 * application's own (range replay cut short by a SIGINT or a failure), so
 * what its kernels allocated stays allocated; its frees of earlier blocks
 * were left undone (those blocks stay allocated). Returns how many
 * allocations were kept. */
static uint64_t kreplay_keep(void)
{
	pthread_mutex_lock(&e_kmu);
	uint64_t n = e_nkalloc;
	e_nkalloc = 0;
	e_ngone = e_nskip = 0;
	pthread_mutex_unlock(&e_kmu);
	return n;
}

/* After the replay of @what (a kernel's name, or "range NAME"): say once
 * what kreplay_discard() did for it, and the frees left undone. */
static void kreplay_report(const char *what)
{
	pthread_mutex_lock(&e_kmu);
	uint64_t freed = e_kfreed, skipped = e_kskipped;
	e_kfreed = e_kskipped = 0;
	pthread_mutex_unlock(&e_kmu);
	if (freed || skipped)
		inj_log(TP_LOG_INFO, "%s: its kernel allocates or frees device memory: %" PRIu64
			" allocation%s of the replayed executions freed after each, %" PRIu64
			" free%s of earlier allocations left to the application's own execution",
			what, freed, freed == 1 ? "" : "s", skipped, skipped == 1 ? "" : "s");
}

static int kernel_replay(struct lctx *c)
{
	const struct tp_op_config *cfg = &g_inj.cfg;
	const struct inj_launch *l = c->l;
	int dev = l->device;
	char what[300];
	snprintf(what, sizeof(what), "%s launch %d", l->name, c->k);
	struct tp_op_snap *snap = take_snapshot(c, dev, what);
	if (!snap) {
		/* No replay: the single execution is the application's own. */
		inj_log(TP_LOG_WARN, "%s: %s: only pass 0 measured, unreplayed", l->name, c->note);
		return measure_once(c, 0);
	}
	int rc;
	const uint32_t execs = cfg->warm_up + cfg->plan.npasses + 1;
	struct args_watch *aw = malloc(sizeof(*aw));
	if (aw)
		watch_begin(aw, l, l->args);
	bool restore = !g_inj.no_restore;
	/* Whether executions changed the args (said, not undone: struct
	 * args_guard). */
	struct args_guard ag;
	args_guard_init(&ag, l, restore);
	uint32_t replayed = 0;
	uint64_t restored = 0;
	int lrc = 0;
	struct one_launch plain = { l, NULL };
	/* A SIGINT ends the warm-up too: what is left of it measures
	 * nothing, and the launch is written as interrupted below. */
	uint32_t warmed = 0;
	for (; warmed < cfg->warm_up && !lrc && !inj_interrupted(); warmed++) {
		if (restore && tp_op_snap_restore(snap, NULL))
			fatal_restore(c);
		args_before(&ag);
		watch_on(c);
		kreplay_exec(true);
		lrc = body_one(&plain);
		kreplay_exec(false);
		kreplay_discard();
		watch_off();
		args_after(&ag);
		replayed++;
		if (aw)
			watch_check(aw, l, execs);
	}
	if (lrc) {
		c->status = "failed";
		snprintf(c->note, sizeof(c->note), "launch failed in a warm-up: %.480s",
			 tp_last_error());
		inj_log(TP_LOG_ERROR, "%s: %s", l->name, c->note);
	}
	struct instr in;
	instr_alloc(l, &in);
	uint32_t P = cfg->plan.npasses;
	for (uint32_t p = 0; p < P && !lrc; p++) {
		if (inj_interrupted()) {
			c->status = "interrupted";
			if (p == 0 && cfg->warm_up)
				snprintf(c->note, sizeof(c->note), "%s in the warm-up, after %u "
					 "of %u executions: no pass measured", inj_interrupt_name(),
					 warmed, cfg->warm_up);
			else
				snprintf(c->note, sizeof(c->note), "%s after %u of %u passes",
					 inj_interrupt_name(), p, P);
			break;
		}
		inj_progress("%s launch %d: pass %u/%u", l->name, c->k, p + 1, P);
		struct inj_pass_buf buf = { 0 };
		uint64_t t0 = tp_now_ns();
		restored = 0;
		if (restore && tp_op_snap_restore(snap, &restored))
			fatal_restore(c);
		struct one_launch o = { l, p == 0 ? &in : NULL };
		args_before(&ag);
		kreplay_exec(true);
		rc = run_pass(c, p, &buf, body_one, &o, &lrc);
		kreplay_exec(false);
		kreplay_discard();
		uint64_t t1 = tp_now_ns();
		args_after(&ag);
		replayed += !rc;
		if (rc) {
			/* The profiler failed, not the kernel: exit status 1. */
			c->status = "failed";
			snprintf(c->note, sizeof(c->note), "channels: %.500s", tp_last_error());
			pass_failed(rc, "%s: pass %u: %s", l->name, p, c->note);
			free(buf.data);
			break;
		}
		if (pass_lost(c, p, &buf, l->name)) {
			free(buf.data);
			break;
		}
		if (lrc) {
			c->status = "failed";
			snprintf(c->note, sizeof(c->note), "launch failed in pass %u: %.480s", p,
				 tp_last_error());
			inj_log(TP_LOG_ERROR, "%s: %s", l->name, c->note);
			free(buf.data);
			break;
		}
		if (aw)
			watch_check(aw, l, execs);
		uint64_t hash = 0;
		if (tp_op_snap_hash(snap, &hash))
			inj_log(TP_LOG_WARN, "%s: %s", l->name, tp_last_error());
		write_pass(c, p, &buf);
		replay_line(c, p, restored, hash, t1 - t0, kernel_ns_of(&buf, c->st.sys_cnt_freq));
		c->passes_done = p + 1;
		if (p == 0)
			instr_write(c, &in);
		free(buf.data);
	}
	instr_free(&in);
	free(aw);
	args_guard_report(&ag, l, replayed);
	kreplay_report(l->name);
	/* The application's launch sees the inputs as they were. */
	if (restore && tp_op_snap_restore(snap, NULL))
		fatal_restore(c);
	tp_op_snap_release(snap);
	return real_launch(l);
}

/* ---- the launch hook ---------------------------------------------------------- */

static void lctx_init(struct lctx *c, const struct inj_launch *l)
{
	memset(c, 0, sizeof(*c));
	c->l = l;
	c->status = "ok";
	c->scope = "none";
}

static void lctx_finish(struct lctx *c)
{
	write_launch_txt(c);
	if (c->replay_len)
		write_file(c->dir, "dump/replay.txt", c->replay, c->replay_len);
	free(c->replay);
	c->replay = NULL;
	/* Completed only now, its files written: --kill on counts these. */
	pthread_mutex_lock(&e_mu);
	if (e_inflight)
		e_inflight--;
	int d = c->l->device;
	if (d >= 0 && d < TP_RT_MAX_DEVICES)
		e_completed[d]++;
	sel_save();
	pthread_mutex_unlock(&e_mu);
}

/* Select the launch (@range: the range it was made in, NULL when none);
 * on success its directory is claimed (dump/ made). */
static bool select_launch(const struct inj_launch *l, const char *range, char *dir, size_t n,
			  int *k)
{
	pthread_mutex_lock(&e_mu);
	/* -k matches the real name; the directory uses the sanitised one
	 * (the mkdir claim keeps two real names that sanitise alike apart). */
	bool pick = !e_killing && tp_op_filter_decide(&e_filter, l->device,
						      l->real_name[0] ? l->real_name : l->name,
						      range != NULL);
	if (!e_killing)
		sel_save();
	*k = -1;
	if (pick) {
		int rc = claim(l, dir, n, k);
		if (rc) {
			inj_fail("%s: launch directory: %s; launch not profiled", l->name,
				 tp_last_error());
			pick = false;
			*k = -1;
		}
	}
	if (pick)
		e_inflight++;
	pthread_mutex_unlock(&e_mu);
	if (pick) {
		char d[4400];
		snprintf(d, sizeof(d), "%s/dump", dir);
		if (mkdir(d, 0755) && errno != EEXIST)
			inj_fail("%s: cannot create: %s", d, strerror(errno));
	}
	log_launch(l, *k, pick);
	return pick;
}

static void maybe_kill(int device)
{
	if (!g_inj.cfg.kill)
		return;
	/* End only when launch_count profiles of a device have COMPLETED and
	 * no other selected launch (any thread, any device) is still being
	 * profiled: its directory would be left without launch.txt. The
	 * last profile to finish makes the call. e_killing: exactly once,
	 * and no launch is selected (no directory made) after it. */
	pthread_mutex_lock(&e_mu);
	bool done = false;
	if (!e_killing && e_inflight == 0)
		for (int d = 0; d < TP_RT_MAX_DEVICES && !done; d++)
			done = e_completed[d] >= g_inj.cfg.launch_count;
	if (done)
		e_killing = true;
	pthread_mutex_unlock(&e_mu);
	if (!done)
		return;
	inj_log(TP_LOG_INFO, "--kill on: %u launches profiled on device %d; ending the "
		"application", g_inj.cfg.launch_count, device);
	inj_progress("--kill on: %u launch%s profiled, ending the application",
		     g_inj.cfg.launch_count, g_inj.cfg.launch_count == 1 ? "" : "es");
	/* The launcher's evidence that the application was ended here, and
	 * so made no launch after the ones listed above this line. */
	char line[160];
	int n = snprintf(line, sizeof(line), "# killed by --kill on: %u launches profiled on "
			 "device %d\n", g_inj.cfg.launch_count, device);
	launches_append(line, n);
	/* exit, not _exit: the application's buffered output is flushed;
	 * the destructors join the reader. */
	exit(0);
}

int inj_engine_launch(struct inj_launch *l)
{
	char dir[4300];
	int k;
	/* Range replay: this launch is outside every range (those inside are
	 * captured), so the selection only counts it (skip-before-match).
	 * Kernel and application replay with range markers on: the range
	 * open on this thread, if any. */
	const char *range = g_inj.cfg.replay_mode == TP_OP_REPLAY_RANGE ? NULL : inj_marker_range();
	if (launch_rejected(l))
		return pass_rejected(l, true);
	if (!select_launch(l, range, dir, sizeof(dir), &k)) {
		int t = tp_op_gate_enter();
		int rc = real_launch(l);
		tp_op_gate_exit(t);
		return rc;
	}
	{
		unsigned char w[TP_OP_ARGS_WINDOW];
		l->args_size = tp_op_safe_read(l->args, w, sizeof(w));
	}
	struct lctx c;
	lctx_init(&c, l);
	snprintf(c.dir, sizeof(c.dir), "%s", dir);
	c.k = k;
	c.range = range;
	inj_log(TP_LOG_INFO, "profiling %s (device %d, block_dim %u) into %s", l->name, l->device,
		l->block_dim, dir);

	tp_op_window_begin();
	inj_set_replaying(true);
	e_cur = &c;
	if (g_inj.real.synchronize)
		(void)g_inj.real.synchronize();
	int rc = device_stats(l->device, &c.st);
	if (!rc)
		rc = inj_reader_ensure(l->device);
	if (rc) {
		/* The profiler failed: exit status 1; the launch still runs. */
		c.status = "failed";
		snprintf(c.note, sizeof(c.note), "%.500s", tp_last_error());
		pass_failed(rc, "%s: %s", l->name, c.note);
		rc = real_launch(l);
	} else if (g_inj.cfg.replay_mode == TP_OP_REPLAY_APPLICATION) {
		c.scope = "none";
		rc = measure_once(&c, (uint32_t)g_inj.app_pass);
	} else {
		rc = kernel_replay(&c);
	}
	lctx_finish(&c);
	e_cur = NULL;
	inj_set_replaying(false);
	tp_op_window_end();
	maybe_kill(l->device);
	return rc;
}

/* ---- range replay ------------------------------------------------------------- */

enum rop_kind { ROP_LAUNCH, ROP_H2D, ROP_D2D };

struct rop {
	enum rop_kind kind;
	/* ROP_LAUNCH */
	struct inj_launch l;
	struct tp_rt_launch_attr attr;
	void *args;           /* the captured window (in @args_map), or NULL:
			       * the args are passed unchanged (NULL, in
			       * device memory, or unreadable) */
	void *args_map;       /* its mapping: a page, then the guard */
	size_t args_map_len;
	uintptr_t args_guard; /* where the guard starts: @args + args_size */
	void *args0;          /* its bytes at capture, put back after each execution */
	uint32_t args_wrote;  /* executions that changed @args */
	size_t args_lo, args_hi; /* offsets [lo, hi) they changed */
	bool profiled;
	struct lctx *c;
	struct inj_pass_buf buf;
	struct args_watch *aw; /* profiled and replayed: see watch_begin() */
	struct instr in;       /* profiled: the hidden buffer of pass 0 */
	/* Every kind: the calling thread's current device at the call, the
	 * one the operation runs on (spec §4.8: a range is on one device). */
	int device;
	/* ROP_H2D / ROP_D2D */
	void *dst;
	const void *src;      /* D2D source */
	void *host;           /* H2D: copy of the source bytes */
	size_t n;
};

static _Thread_local struct {
	bool open;
	/* The name as pushed, in name_buf (inj_range_name_copy()). */
	const char *name;
	char name_buf[INJ_RANGE_NAME_BUF];
	/* The captured operations, each allocated alone: a launch's lctx
	 * and inj_launch point into its rop, so the rops must never move
	 * when the list grows. */
	struct rop **v;
	size_t n, cap;
	/* Captured launches of the open range. Atomic: the exit path of
	 * another thread may read it (relaxed: a lone count for a note). */
	_Atomic size_t nlaunch;
} tl_r;

bool inj_range_open(void)
{
	return tl_r.open;
}

const char *inj_range_name(void)
{
	return tl_r.open && tl_r.name ? tl_r.name : "";
}

static void range_release(void);

/*
 * Thread exit (and exit() for the main thread: glibc runs thread-local
 * destructors first) with a range still open: its captured launches never
 * ran. Each selected one still gets launch.txt (status=failed) so no
 * launch directory is left without one.
 */
static void unpopped_note(char *note, size_t n, const char *name, size_t nl)
{
	snprintf(note, n, "range '%.400s' was never popped: its %zu captured launches never "
		 "ran", name ? name : "", nl);
}

static void range_thread_exit(void *arg)
{
	(void)arg;
	if (!tl_r.open)
		return;
	char note[600];
	unpopped_note(note, sizeof(note), tl_r.name,
		      atomic_load_explicit(&tl_r.nlaunch, memory_order_relaxed));
	inj_log(TP_LOG_WARN, "%s", note);
	for (size_t i = 0; i < tl_r.n; i++) {
		struct rop *r = tl_r.v[i];
		if (!r->profiled)
			continue;
		pthread_mutex_lock(&e_mu);
		bool mine = pending_take(r->c);
		pthread_mutex_unlock(&e_mu);
		if (!mine) {
			r->c = NULL; /* the process exit path owns and wrote it */
			r->profiled = false;
			continue;
		}
		r->c->status = "failed";
		snprintf(r->c->note, sizeof(r->c->note), "%s", note);
		lctx_finish(r->c);
	}
	tl_r.open = false;
	range_release();
}

void inj_engine_exit(void)
{
	/* Ranges of threads still running at exit(): their thread-local
	 * destructors never run. The lctx stay allocated (their thread may
	 * still hold them; the process is ending). */
	pthread_mutex_lock(&e_mu);
	struct lctx *list = e_pending;
	e_pending = NULL;
	for (struct lctx *c = list; c; c = c->pnext)
		c->pending = false;
	pthread_mutex_unlock(&e_mu);
	const char *last = NULL;
	for (struct lctx *c = list; c; c = c->pnext) {
		char note[600];
		size_t nl = c->range_nl ? atomic_load_explicit(c->range_nl, memory_order_relaxed)
					: 0;
		unpopped_note(note, sizeof(note), c->range, nl);
		if (c->range != last)
			inj_log(TP_LOG_WARN, "%s", note);
		last = c->range;
		c->status = "failed";
		snprintf(c->note, sizeof(c->note), "%s", note);
		lctx_finish(c);
	}
	/* The process ends: no image follows that would go on from its
	 * selection state. */
	pthread_mutex_lock(&e_mu);
	if (e_sel_written)
		(void)unlink(e_sel_path);
	e_sel_written = false;
	e_sel_failed = true; /* a launch still running on another thread
			      * must not write it again */
	pthread_mutex_unlock(&e_mu);
}

extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso);
extern void *__dso_handle;
static _Thread_local bool tl_exit_hooked;

/* Append a zeroed operation to the open range's list; NULL when out of
 * memory. */
static struct rop *rop_new(void)
{
	if (tl_r.n == tl_r.cap) {
		size_t cap = tl_r.cap ? 2 * tl_r.cap : 16;
		struct rop **v = realloc(tl_r.v, cap * sizeof(*v));
		if (!v)
			return NULL;
		tl_r.v = v;
		tl_r.cap = cap;
	}
	struct rop *r = calloc(1, sizeof(*r));
	if (r)
		tl_r.v[tl_r.n++] = r;
	return r;
}

/* Take back the operation rop_new() just appended (its capture failed
 * before it owned anything). */
static void rop_drop_last(void)
{
	free(tl_r.v[--tl_r.n]);
}

/*
 * The args copy of a captured launch, and the guard after it. The runtime
 * passes no args size, so a capture copies TP_OP_ARGS_WINDOW bytes; a
 * kernel whose args struct is larger read whatever followed the copy and
 * the application got a wrong result from a launch reported ok. So the
 * copy ends where ARGS_GUARD_BYTES of PROT_NONE begin: a read past it
 * faults, and args_guard_fault() ends the process with an error naming
 * the launch, never a result computed from bytes the application did not
 * pass. The guard is address space only (no memory, MAP_NORESERVE); it
 * covers any struct a kernel would take on the stack.
 */
#define ARGS_GUARD_BYTES (1u << 20)

/* Map @r's copy of the @n (1..TP_OP_ARGS_WINDOW) bytes at @src at the end
 * of a page, the guard after it. Aligned as the original needs: 256 bytes
 * before a page end are 256-aligned, and a blob cut short by an
 * unreadable page keeps its offset in the page. Return: 0, or -errno of
 * mmap / mprotect. */
static int args_copy_map(struct rop *r, const void *src, size_t n)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t len = page + ARGS_GUARD_BYTES;
	void *m = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	if (mprotect(m, page, PROT_READ | PROT_WRITE)) {
		int e = errno;
		munmap(m, len);
		return -e;
	}
	r->args_map = m;
	r->args_map_len = len;
	r->args_guard = (uintptr_t)m + page;
	r->args = (char *)m + page - n;
	memcpy(r->args, src, n);
	return 0;
}

static void args_copy_unmap(struct rop *r)
{
	if (r->args_map)
		munmap(r->args_map, r->args_map_len);
	r->args_map = r->args = NULL;
}

const char *inj_range_name_copy(char buf[INJ_RANGE_NAME_BUF], const char *name)
{
	const size_t max = INJ_RANGE_NAME_BUF - 4;
	size_t len = name ? strnlen(name, max + 1) : 0;
	bool cut = len > max;
	if (cut)
		len = max;
	if (len)
		memcpy(buf, name, len);
	if (cut) {
		memcpy(buf + len, "...", 3);
		len += 3;
	}
	buf[len] = '\0';
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '_';
	return buf;
}

int inj_range_push(const char *name)
{
	int rc = g_inj.real.range_push ? g_inj.real.range_push(name) : -ENOSYS;
	if (rc)
		return rc;
	if (!tl_exit_hooked) {
		/* Once per thread: the unpopped-range check at its exit. */
		if (__cxa_thread_atexit_impl(range_thread_exit, NULL, &__dso_handle) == 0)
			tl_exit_hooked = true;
	}
	tl_r.open = true;
	tl_r.name = inj_range_name_copy(tl_r.name_buf, name);
	tl_r.n = 0;
	atomic_store_explicit(&tl_r.nlaunch, 0, memory_order_relaxed);
	return 0;
}

int inj_range_free(void *p)
{
	if (!p)
		return 0;
	/* Not the start of a live allocation: the runtime's own error now,
	 * as outside a range (it frees nothing). */
	struct tp_op_alloc a;
	if (tp_op_reg_lookup(p, &a) || a.base != (uintptr_t)p)
		return g_inj.real.free(p);
	/* Another device's allocation: the runtime frees on the current
	 * device only, and fails this one now. */
	if (a.device != inj_device())
		return g_inj.real.free(p);
	/* Captured launches may still use it: freed after the last pass, on
	 * its device (the thread's may have changed by then). */
	return tp_op_defer_free(p, a.device);
}

/* Whether [@p, @p + @n) lies inside one live allocation of the current
 * device (what the runtime checks when it runs the copy; a range runs it
 * at the pop). */
static bool in_one_alloc(const void *p, size_t n)
{
	struct tp_op_alloc a;
	if (tp_op_reg_lookup(p, &a) || a.device != inj_device())
		return false;
	/* Freed in a range already (the free waits for the last pass):
	 * for the runtime it is no allocation any more. */
	if (tp_op_deferred_refuse((void *)a.base, a.device))
		return false;
	return n <= a.size - ((uintptr_t)p - a.base);
}

int inj_range_memcpy(void *dst, const void *src, size_t n, enum tp_rt_memcpy_kind kind)
{
	if (kind == TP_RT_MEMCPY_DEVICE_TO_HOST)
		return tp_set_error(-ENOTSUP, "tp_rt_memcpy(DEVICE_TO_HOST) inside range \"%s\": "
				    "unsupported in range (`taskprof op --replay-mode range` "
				    "runs the range's launches at tp_rt_range_pop, so their "
				    "results do not exist yet)", tl_r.name);
	if (kind != TP_RT_MEMCPY_HOST_TO_DEVICE && kind != TP_RT_MEMCPY_DEVICE_TO_DEVICE)
		return g_inj.real.memcpy(dst, src, n, kind); /* the runtime's -EINVAL */
	if (!dst || !src)
		return g_inj.real.memcpy(dst, src, n, kind);
	/* Checked now, as the runtime would (the copy itself runs at the
	 * pop): a bad range fails this call, and an H2D copy never reads @n
	 * host bytes for a copy that cannot happen. */
	if (n && (!in_one_alloc(dst, n) ||
		  (kind == TP_RT_MEMCPY_DEVICE_TO_DEVICE && !in_one_alloc(src, n))))
		return tp_set_error(-EFAULT, "tp_rt_memcpy(%s) inside range \"%.200s\": %s %p (+%zu "
				    "bytes) is not inside one allocation of the current device",
				    kind == TP_RT_MEMCPY_HOST_TO_DEVICE ? "HOST_TO_DEVICE"
									: "DEVICE_TO_DEVICE",
				    tl_r.name, !in_one_alloc(dst, n) ? "dst" : "src",
				    !in_one_alloc(dst, n) ? dst : src, n);
	struct rop *r = rop_new();
	if (!r)
		return tp_set_error(-ENOMEM, "range capture: out of memory");
	r->kind = kind == TP_RT_MEMCPY_HOST_TO_DEVICE ? ROP_H2D : ROP_D2D;
	r->device = inj_device();
	r->dst = dst;
	r->n = n;
	if (r->kind == ROP_D2D) {
		r->src = src;
		return 0;
	}
	/* The host source may change after the call returns: copy it. */
	r->host = malloc(n ? n : 1);
	if (!r->host) {
		rop_drop_last();
		return tp_set_error(-ENOMEM, "range capture: out of memory (%zu bytes)", n);
	}
	memcpy(r->host, src, n);
	return 0;
}

int inj_range_launch(struct inj_launch *l)
{
	/* Refused at the call, as the runtime would: never captured (it
	 * used to fail only at the pop, an unknown attr->cores) nor selected. */
	if (launch_rejected(l))
		return pass_rejected(l, false);
	struct rop *r = rop_new();
	if (!r)
		return tp_set_error(-ENOMEM, "range capture: out of memory");
	r->kind = ROP_LAUNCH;
	r->l = *l;
	r->device = l->device;
	if (l->attr) {
		r->attr = *l->attr;
		r->l.attr = &r->attr;
	}
	unsigned char w[TP_OP_ARGS_WINDOW];
	r->l.args_size = tp_op_safe_read(l->args, w, sizeof(w));
	/* Args in a tracked device allocation are device memory, which the
	 * replay backs up and restores: the kernel must read and write that
	 * memory itself (on a host copy its writes were lost, and it read the
	 * args as they were at the call, not after the range's earlier
	 * operations). Args of which nothing can be read are no struct the
	 * host holds (a number passed as the pointer): passed unchanged, as
	 * the runtime passes them. */
	if (r->l.args_size && tp_op_reg_lookup(l->args, NULL)) {
		int rc = args_copy_map(r, w, r->l.args_size);
		if (rc) {
			rop_drop_last();
			return tp_set_error(rc, "range capture: no memory for a copy of the args of "
					    "%.200s: %s", r->l.name, strerror(-rc));
		}
		r->l.args = r->args;
		r->args0 = malloc(r->l.args_size);
		if (!r->args0) {
			args_copy_unmap(r);
			rop_drop_last();
			return tp_set_error(-ENOMEM, "range capture: out of memory");
		}
		memcpy(r->args0, r->args, r->l.args_size);
	}
	char dir[4300];
	int k;
	r->profiled = select_launch(&r->l, tl_r.name, dir, sizeof(dir), &k);
	if (r->profiled) {
		r->c = calloc(1, sizeof(*r->c));
		if (!r->c) {
			r->profiled = false;
		} else {
			lctx_init(r->c, &r->l);
			snprintf(r->c->dir, sizeof(r->c->dir), "%s", dir);
			r->c->k = k;
			r->c->range = tl_r.name;
			r->c->range_nl = &tl_r.nlaunch;
			pthread_mutex_lock(&e_mu);
			r->c->pnext = e_pending;
			e_pending = r->c;
			r->c->pending = true;
			pthread_mutex_unlock(&e_mu);
		}
	}
	atomic_fetch_add_explicit(&tl_r.nlaunch, 1, memory_order_relaxed);
	return 0;
}

/* Run the captured list once, every operation even after one fails (the
 * application made each call and would have seen each run; its calls
 * returned 0 at capture, and the pop returns the first error). Return: the
 * first error, its message in tp_last_error(); or 0. */
/* body_list()'s argument in measured pass 0: the profiled launches run
 * with their hidden instrumentation buffers (range_instr_alloc()). */
static const bool list_with_instr = true;

static int body_list(void *arg)
{
	const bool with_instr = arg != NULL;
	int first = 0;
	char msg[TP_ERROR_MSG_MAX];
	/* Each operation on the device it was called on (only a range that
	 * spans a device switch, which is not replayed, switches here). */
	const int start = inj_device();
	int cur = start;
	for (size_t i = 0; i < tl_r.n; i++) {
		struct rop *r = tl_r.v[i];
		int rc = 0;
		if (r->device != cur && g_inj.real.set_device) {
			/* Failing, the operation cannot run: its error is this. */
			rc = g_inj.real.set_device(r->device);
			cur = rc ? -1 : r->device;
		}
		if (!rc) {
			if (r->kind == ROP_LAUNCH)
				rc = tp_rt_tool_launch(r->l.kernel, r->l.block_dim, r->l.args,
						       r->l.attr, with_instr ? r->in.dev : NULL,
						       with_instr && r->in.dev ? r->in.bytes : 0);
			else if (r->kind == ROP_H2D)
				rc = g_inj.real.memcpy(r->dst, r->host, r->n,
						       TP_RT_MEMCPY_HOST_TO_DEVICE);
			else
				rc = g_inj.real.memcpy(r->dst, r->src, r->n,
						       TP_RT_MEMCPY_DEVICE_TO_DEVICE);
		}
		if (rc && !first) {
			first = rc;
			snprintf(msg, sizeof(msg), "%s", tp_last_error());
		}
	}
	if (cur != start && g_inj.real.set_device)
		(void)g_inj.real.set_device(start);
	if (first)
		tp_set_error(first, "%s", msg);
	return first;
}

/* A deferred free of the range, on the allocation's device. */
static int free_on_device(void *p, int device)
{
	const int cur = inj_device();
	if (device < 0 || device == cur || !g_inj.real.set_device)
		return g_inj.real.free(p);
	int rc = g_inj.real.set_device(device);
	if (!rc)
		rc = g_inj.real.free(p);
	(void)g_inj.real.set_device(cur);
	return rc;
}

/* Hand each record of @all to the captured launch it belongs to: the i-th
 * LAUNCH record (read in launch order) is the i-th captured launch, and
 * BLOCK records carry the same sequence number; END_OF_PASS goes to all. */
static void split_records(const struct inj_pass_buf *all)
{
	const struct tp_op_rec *rec = (const struct tp_op_rec *)all->data;
	size_t n = all->len / sizeof(*rec), nl = 0;
	size_t nlaunch = 0;
	for (size_t i = 0; i < tl_r.n; i++)
		nlaunch += tl_r.v[i]->kind == ROP_LAUNCH;
	uint64_t *seq = calloc(nlaunch ? nlaunch : 1, sizeof(*seq));
	struct rop **who = calloc(nlaunch ? nlaunch : 1, sizeof(*who));
	if (!seq || !who)
		goto out;
	for (size_t i = 0, j = 0; i < tl_r.n; i++)
		if (tl_r.v[i]->kind == ROP_LAUNCH)
			who[j++] = tl_r.v[i];
	for (size_t i = 0; i < n && nl < nlaunch; i++)
		if (rec[i].kind == TP_OP_REC_LAUNCH)
			seq[nl++] = rec[i].seq;
	for (size_t i = 0; i < n; i++) {
		struct inj_pass_buf *b;
		if (rec[i].kind == TP_OP_REC_END_OF_PASS) {
			for (size_t j = 0; j < nlaunch; j++)
				if (who[j]->profiled) {
					b = &who[j]->buf;
					char *d = realloc(b->data, b->len + sizeof(*rec));
					if (!d)
						continue;
					b->data = d;
					memcpy(b->data + b->len, &rec[i], sizeof(*rec));
					b->len += sizeof(*rec);
				}
			continue;
		}
		for (size_t j = 0; j < nl; j++) {
			if (seq[j] != rec[i].seq || !who[j]->profiled)
				continue;
			b = &who[j]->buf;
			char *d = realloc(b->data, b->len + sizeof(*rec));
			if (!d)
				break;
			b->data = d;
			memcpy(b->data + b->len, &rec[i], sizeof(*rec));
			b->len += sizeof(*rec);
			break;
		}
	}
out:
	free(seq);
	free(who);
}

/* The hidden instrumentation buffer of every profiled launch of the range
 * (instr=on), for measured pass 0 (body_list(&list_with_instr)). */
static void range_instr_alloc(void)
{
	for (size_t i = 0; i < tl_r.n; i++)
		if (tl_r.v[i]->profiled)
			instr_alloc(&tl_r.v[i]->l, &tl_r.v[i]->in);
}

/* After pass 0, which ran: dump/instr.txt of each. */
static void range_instr_write(void)
{
	for (size_t i = 0; i < tl_r.n; i++) {
		struct rop *r = tl_r.v[i];
		if (r->in.dev)
			instr_write(r->c, &r->in);
	}
}

/* dump/instr.txt of each (@write: pass 0 ran and it was not written yet),
 * and the buffers freed. */
static void range_instr_done(bool write)
{
	if (write)
		range_instr_write();
	for (size_t i = 0; i < tl_r.n; i++) {
		struct rop *r = tl_r.v[i];
		if (r->in.dev)
			instr_free(&r->in);
	}
}

/* Watch the args of every profiled launch of the range (their captured
 * copies), before its first execution; check after it. */
static void range_watch_begin(void)
{
	for (size_t i = 0; i < tl_r.n; i++) {
		struct rop *r = tl_r.v[i];
		if (!r->profiled || !r->args)
			continue;
		r->aw = malloc(sizeof(*r->aw));
		if (r->aw)
			watch_begin(r->aw, &r->l, r->args);
	}
}

static void range_watch_check(uint32_t execs)
{
	for (size_t i = 0; i < tl_r.n; i++)
		if (tl_r.v[i]->aw)
			watch_check(tl_r.v[i]->aw, &tl_r.v[i]->l, execs);
}

/*
 * After an execution of the range's list in a replay: the args copies the
 * kernels changed back to their bytes at capture, so that each warm-up
 * and pass runs every launch with the same args (a kernel that writes its
 * args struct; see struct args_guard for kernel replay). The copies are
 * the injector's own memory: the application's struct sees none of it.
 */
static void range_args_undo(void)
{
	if (g_inj.no_restore)
		return;
	for (size_t i = 0; i < tl_r.n; i++) {
		struct rop *r = tl_r.v[i];
		if (r->kind != ROP_LAUNCH || !r->args0)
			continue;
		const unsigned char *a = r->args, *a0 = r->args0;
		size_t lo = r->l.args_size, hi = 0;
		for (size_t j = 0; j < r->l.args_size; j++)
			if (a[j] != a0[j]) {
				lo = j < lo ? j : lo;
				hi = j + 1;
			}
		if (!hi)
			continue;
		memcpy(r->args, r->args0, r->l.args_size);
		if (!r->args_wrote++ || lo < r->args_lo)
			r->args_lo = lo;
		if (hi > r->args_hi)
			r->args_hi = hi;
	}
}

/* One warning per captured launch whose kernel wrote its args. */
static void range_args_report(void)
{
	for (size_t i = 0; i < tl_r.n; i++) {
		const struct rop *r = tl_r.v[i];
		if (!r->args_wrote)
			continue;
		char where[64];
		byte_range_text(where, sizeof(where), r->args_lo, r->args_hi);
		inj_log(TP_LOG_WARN, "%s: the kernel wrote its args (%s of the copy range %.200s "
			"captured): put back after each execution, so each got the args of the "
			"call; in range replay the application's args struct never sees the "
			"kernel's writes", r->l.name, where, tl_r.name);
	}
}

static void range_release(void)
{
	for (size_t i = 0; i < tl_r.n; i++) {
		struct rop *r = tl_r.v[i];
		instr_free(&r->in);
		free(r->aw);
		args_copy_unmap(r);
		free(r->args0);
		free(r->host);
		free(r->buf.data);
		if (r->c)
			free(r->c->replay);
		free(r->c);
		free(r);
	}
	free(tl_r.v);
	tl_r.v = NULL;
	tl_r.n = tl_r.cap = 0;
}

/*
 * The captured list being executed, for args_guard_fault(): the replay
 * window serialises the executions of every thread's ranges, so there is
 * one at most. Published (release) before the first execution, after the
 * window opened, and withdrawn before it closes; the fault handler, on an
 * AICore thread running one of its kernels, reads it (acquire).
 */
static struct rop **_Atomic g_exec_v;
static _Atomic size_t g_exec_n;
static const char *_Atomic g_exec_range;
/* The SIGSEGV action args_guard_fault() replaced (g_guard_mu). */
static struct sigaction g_guard_prev;
static pthread_mutex_t g_guard_mu = PTHREAD_MUTEX_INITIALIZER;

static void args_guard_fault(int sig, siginfo_t *si, void *uc);

/* A fault that is not in a guard: to the handler that was there before,
 * or to the default action (restored, the faulting access runs again and
 * ends the process as it would have without us). */
static void guard_chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction prev = g_guard_prev;
	if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
		prev.sa_sigaction(sig, si, uc);
		return;
	}
	if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL &&
	    prev.sa_handler != SIG_IGN) {
		prev.sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
}

/* Before the list's executions: publish it and make sure the guard fault
 * handler is installed (the application may have set its own SIGSEGV
 * handler since the last range; it becomes the one chained to). Nothing
 * when no launch of the list has an args copy. */
static void args_guard_arm(void)
{
	bool any = false;
	for (size_t i = 0; i < tl_r.n && !any; i++)
		any = tl_r.v[i]->args_map != NULL;
	if (!any)
		return;
	atomic_store_explicit(&g_exec_range, tl_r.name, memory_order_relaxed);
	atomic_store_explicit(&g_exec_n, tl_r.n, memory_order_relaxed);
	/* release: the rops' fields before the handler can see the list */
	atomic_store_explicit(&g_exec_v, tl_r.v, memory_order_release);
	pthread_mutex_lock(&g_guard_mu);
	struct sigaction cur;
	if (sigaction(SIGSEGV, NULL, &cur) == 0 &&
	    !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == args_guard_fault)) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = args_guard_fault;
		sigemptyset(&sa.sa_mask);
		/* ONSTACK: the device threads' alternate stacks (platform) */
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		g_guard_prev = cur;
		sigaction(SIGSEGV, &sa, NULL);
	}
	pthread_mutex_unlock(&g_guard_mu);
}

/* After the executions: the list is no longer the handler's. */
static void args_guard_disarm(void)
{
	atomic_store_explicit(&g_exec_v, NULL, memory_order_release);
	atomic_store_explicit(&g_exec_n, 0, memory_order_relaxed);
}

/*
 * SIGSEGV: a read in the guard after a launch's args copy means its
 * kernel's args struct is larger than the copy. End the process as the
 * other fatal injector errors do (launch.txt status=failed for the range's
 * profiled launches, the error on stderr and in taskprof.log, exit 70:
 * `taskprof op` exits 1 naming it), before the kernel computes anything
 * from what lies past the copy. Runs on the AICore thread of that kernel,
 * which holds none of the injector's locks (inj_log()'s mutex is only
 * ever held around a write); the range's thread waits for the kernel.
 * Allocates nothing. A fault elsewhere goes to guard_chain().
 */
static void args_guard_fault(int sig, siginfo_t *si, void *uc)
{
	struct rop **v = atomic_load_explicit(&g_exec_v, memory_order_acquire);
	const size_t n = v ? atomic_load_explicit(&g_exec_n, memory_order_relaxed) : 0;
	const uintptr_t a = (uintptr_t)si->si_addr;
	const struct rop *hit = NULL;
	for (size_t i = 0; i < n && !hit; i++)
		if (v[i]->args_map && a >= v[i]->args_guard &&
		    a - v[i]->args_guard < ARGS_GUARD_BYTES)
			hit = v[i];
	if (!hit) {
		guard_chain(sig, si, uc);
		return;
	}
	/* Every block of the kernel may fault: one reports, the others wait
	 * for the exit. */
	static atomic_flag reported = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set_explicit(&reported, memory_order_relaxed))
		for (;;)
			pause();
	const char *range = atomic_load_explicit(&g_exec_range, memory_order_relaxed);
	char note[600];
	snprintf(note, sizeof(note), "%.200s (range '%.100s'): the kernel read byte +%zu of its "
		 "args, past the %zu bytes range replay copied: range replay runs a captured "
		 "launch on a copy of at most %u bytes of its args (the runtime passes no args "
		 "size), so a larger args struct is not supported; use --replay-mode kernel or "
		 "application, or keep the args struct within %u bytes (larger data in device "
		 "memory)", hit->l.real_name[0] ? hit->l.real_name : hit->l.name,
		 range ? range : "", (size_t)(a - (uintptr_t)hit->args), hit->l.args_size,
		 TP_OP_ARGS_WINDOW, TP_OP_ARGS_WINDOW);
	inj_log(TP_LOG_ERROR, "%s; the application was ended (exit status %d) rather than let "
		"the kernel compute from bytes past the copy", note, INJ_EXIT_FATAL);
	/* Nothing that allocates (this is a signal handler): launch.txt
	 * written through stack buffers, with the passes done so far. */
	for (size_t i = 0; i < n; i++) {
		struct lctx *c = v[i]->profiled ? v[i]->c : NULL;
		if (!c)
			continue;
		char buf[4096];
		c->status = "failed";
		snprintf(c->note, sizeof(c->note), "%s", note);
		write_file_sigsafe(c->dir, "launch.txt", buf, format_launch_txt(c, buf, sizeof(buf)));
		if (c->replay_len)
			write_file_sigsafe(c->dir, "dump/replay.txt", c->replay, c->replay_len);
		/* the process ends without releasing a spilled snapshot */
		char spill[4400];
		snprintf(spill, sizeof(spill), "%s/dump/snapshot.bin", c->dir);
		(void)unlink(spill);
	}
	inj_exit_fatal(note);
}

static void range_status(const char *status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void range_status(const char *status, const char *fmt, ...)
{
	char note[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < tl_r.n; i++)
		if (tl_r.v[i]->profiled) {
			tl_r.v[i]->c->status = status;
			snprintf(tl_r.v[i]->c->note, sizeof(tl_r.v[i]->c->note), "%s", note);
		}
}

int inj_range_pop(void)
{
	int rc = g_inj.real.range_pop ? g_inj.real.range_pop() : -ENOSYS;
	if (rc)
		return rc;
	tl_r.open = false;
	/* Popped: the exit path must no longer write these. */
	pthread_mutex_lock(&e_mu);
	for (size_t i = 0; i < tl_r.n; i++)
		if (tl_r.v[i]->profiled)
			(void)pending_take(tl_r.v[i]->c);
	pthread_mutex_unlock(&e_mu);
	const struct tp_op_config *cfg = &g_inj.cfg;
	/* The range's device: the one its operations were called on (the
	 * thread's current device at the pop when it has none). A range on
	 * two devices is not replayed (spec §4.8: a range is on one stream,
	 * one device; a snapshot and the channels cover one device). */
	const int pop_dev = inj_device();
	int dev = -1, dev2 = -1;
	struct rop *first = NULL;
	for (size_t i = 0; i < tl_r.n; i++) {
		struct rop *r = tl_r.v[i];
		if (dev < 0)
			dev = r->device;
		else if (r->device != dev && dev2 < 0)
			dev2 = r->device;
		if (r->profiled && !first)
			first = r;
	}
	if (dev < 0)
		dev = pop_dev;
	tp_op_window_begin();
	inj_set_replaying(true);
	args_guard_arm();
	int lrc = 0;
	if (!first) {
		/* Nothing selected: the range runs once, as captured. */
		lrc = body_list(NULL);
		goto done;
	}
	if (dev2 >= 0) {
		/* Not replayed: every operation runs once, on its own device —
		 * the application's execution, unmeasured. */
		char note[600];
		snprintf(note, sizeof(note), "range '%.200s' spans devices %d and %d (tp_rt_set_device "
			 "inside the range; a replayed range must stay on one device): not "
			 "replayed, its operations ran once, unmeasured", tl_r.name, dev, dev2);
		inj_log(TP_LOG_WARN, "%s", note);
		lrc = body_list(NULL);
		range_status("skipped", "%s", note);
		for (size_t i = 0; i < tl_r.n; i++)
			if (tl_r.v[i]->profiled)
				(void)tp_rt_tool_device_stats(tl_r.v[i]->device, &tl_r.v[i]->c->st);
		goto done;
	}
	/* The replay runs on the range's device, whichever the thread
	 * switched to before the pop; switched back below. */
	if (dev != pop_dev && g_inj.real.set_device && (rc = g_inj.real.set_device(dev))) {
		range_status("failed", "%.500s", tp_last_error());
		lrc = body_list(NULL);
		goto done;
	}
	struct lctx *c0 = first->c;
	e_cur = c0;
	if (g_inj.real.synchronize)
		(void)g_inj.real.synchronize();
	if ((rc = device_stats(dev, &c0->st)) || (rc = inj_reader_ensure(dev))) {
		range_status("failed", "%.500s", tp_last_error());
		/* The profiler failed: exit status 1. */
		pass_failed(rc, "range %.200s: %s", tl_r.name, c0->note);
		lrc = body_list(NULL);
		goto done;
	}
	for (size_t i = 0; i < tl_r.n; i++)
		if (tl_r.v[i]->profiled)
			tl_r.v[i]->c->st = c0->st;
	char what[300];
	snprintf(what, sizeof(what), "range %.200s", tl_r.name);
	struct tp_op_snap *snap = take_snapshot(c0, dev, what);
	if (!snap) {
		/* No replay: the list runs once with pass 0's events. */
		char note[sizeof(c0->note)];
		snprintf(note, sizeof(note), "%s", c0->note);
		range_status("degraded", "%s", note);
		inj_log(TP_LOG_WARN, "range %.200s: %s: only pass 0 measured", tl_r.name, c0->note);
		struct inj_pass_buf all = { 0 };
		uint64_t t0 = tp_now_ns();
		range_instr_alloc();
		if (!run_pass(c0, 0, &all, body_list, (void *)&list_with_instr, &lrc)) {
			range_instr_done(true);
			split_records(&all);
			for (size_t i = 0; i < tl_r.n; i++) {
				struct rop *r = tl_r.v[i];
				if (!r->profiled)
					continue;
				write_pass(r->c, 0, &r->buf);
				replay_line(r->c, 0, 0, 0, tp_now_ns() - t0,
					    kernel_ns_of(&r->buf, c0->st.sys_cnt_freq));
				r->c->passes_done = 1;
				free(r->buf.data);
				r->buf = (struct inj_pass_buf){ 0 };
			}
		} else {
			range_instr_done(false);
			lrc = body_list(NULL);
		}
		free(all.data);
		goto done;
	}
	for (size_t i = 0; i < tl_r.n; i++)
		if (tl_r.v[i]->profiled) {
			tl_r.v[i]->c->scope = c0->scope;
			tl_r.v[i]->c->storage = c0->storage;
			tl_r.v[i]->c->snap_bytes = c0->snap_bytes;
		}
	bool restore = !g_inj.no_restore;
	const uint32_t execs = cfg->warm_up + cfg->plan.npasses;
	range_watch_begin();
	/* A SIGINT ends the warm-up too (the application ends by it once the
	 * range is written, so its memory no longer matters). */
	uint32_t warmed = 0;
	/* The instrumentation buffers live through every execution, not
	 * pass 0's alone: each pass then meets the allocator as the others
	 * do, and a kernel's allocation gets the same address in each (one
	 * stored in the hashed memory made pass 0's output hash differ). */
	range_instr_alloc();
	for (uint32_t w = 0; w < cfg->warm_up && !lrc && !inj_interrupted(); w++, warmed++) {
		/* The execution before was replayed: a restore follows. */
		kreplay_discard();
		if (restore && tp_op_snap_restore(snap, NULL))
			fatal_restore(c0);
		watch_on(c0);
		kreplay_exec(true);
		lrc = body_list(NULL);
		kreplay_exec(false);
		watch_off();
		range_args_undo();
		range_watch_check(execs);
		if (lrc) {
			/* The warm-up ran the whole list: it stands as the
			 * application's execution; nothing was measured. */
			range_status("failed", "launch failed in warm-up %u: %.480s", w + 1,
				     tp_last_error());
			inj_log(TP_LOG_ERROR, "range %.200s: %s", tl_r.name, c0->note);
		}
	}
	uint32_t P = cfg->plan.npasses;
	uint64_t hash0 = 0; /* the first pass's output hash */
	for (uint32_t p = 0; p < P && !lrc; p++) {
		if (inj_interrupted()) {
			if (p == 0 && cfg->warm_up)
				range_status("interrupted", "%s in the warm-up, after %u of %u "
					     "executions: no pass measured", inj_interrupt_name(), warmed,
					     cfg->warm_up);
			else
				range_status("interrupted", "%s after %u of %u passes",
					     inj_interrupt_name(), p, P);
			break;
		}
		inj_progress("range %.200s pass %u/%u", tl_r.name, p + 1, P);
		uint64_t restored = 0, hash = 0;
		uint64_t t0 = tp_now_ns();
		kreplay_discard();
		if (restore && tp_op_snap_restore(snap, &restored))
			fatal_restore(c0);
		struct inj_pass_buf all = { 0 };
		/* Every pass but the last is a replayed execution: the last
		 * one is the application's (its kernels' allocations and
		 * frees stand). */
		kreplay_exec(p + 1 < P);
		const size_t live0 = tp_op_snap_entries(snap);
		const uint64_t own0 = inj_kernel_own_allocs();
		rc = run_pass(c0, p, &all, body_list, p == 0 ? (void *)&list_with_instr : NULL,
			      &lrc);
		kreplay_exec(false);
		uint64_t t1 = tp_now_ns();
		range_args_undo();
		if (p == 0 && !rc && !lrc)
			range_instr_write();
		if (!rc)
			range_watch_check(execs);
		if (rc || lrc) {
			range_status("failed", "%s in pass %u: %.480s",
				     rc == -ECANCELED ? "cut short"
				     : rc	      ? "channels"
						      : "launch failed",
				     p, tp_last_error());
			/* Channels that did not start are the profiler's
			 * failure (exit status 1); a kernel's is not, nor a
			 * pass the application's exit cut short. */
			if (rc)
				pass_failed(rc, "range %.200s: %s", tl_r.name, c0->note);
			else
				inj_log(TP_LOG_ERROR, "range %.200s: %s", tl_r.name, c0->note);
			free(all.data);
			/* The application's execution of the range, unless it
			 * ran: channels that did not start ran nothing (the
			 * memory is as the pass's restore left it); a pass the
			 * exit cut short ran its body, which was the
			 * application's execution if it was the last pass, and
			 * a replay on memory to restore first if not. */
			if (rc == -ECANCELED && !lrc && p + 1 < P) {
				if (restore && tp_op_snap_restore(snap, NULL))
					fatal_restore(c0);
				lrc = body_list(NULL);
			} else if (rc && rc != -ECANCELED && !lrc) {
				lrc = body_list(NULL);
			}
			break;
		}
		if (all.lost) {
			range_status("failed", "channels in pass %u: the channel reader ran out of "
				     "memory: %zu records lost", p, all.lost);
			inj_fail("range %.200s: %s", tl_r.name, c0->note);
			free(all.data);
			/* A replayed pass: the application's execution is still
			 * to come, on the memory as the range found it. */
			if (p + 1 < P) {
				if (restore && tp_op_snap_restore(snap, NULL))
					fatal_restore(c0);
				lrc = body_list(NULL);
			}
			break;
		}
		/* A pass that freed snapshotted blocks (the application's
		 * execution, the last: its kernels' frees stand) has fewer to
		 * hash than the passes before it: its hash, of other memory,
		 * stays 0 (left out of the consistency check, as "nothing
		 * hashed"), not a false "not replay-consistent". */
		/* Likewise a pass whose kernels allocated for real (the last)
		 * and whose hash differs: the addresses they got, stored in the
		 * hashed memory, need not be the replayed passes' ones. */
		const size_t live1 = tp_op_snap_entries(snap);
		const uint64_t own = inj_kernel_own_allocs() - own0;
		if (live1 < live0)
			inj_log(TP_LOG_INFO, "range %.200s: pass %u freed %zu of the %zu allocations "
				"its output is hashed over: its output_hash is 0, left out of the "
				"consistency check", tl_r.name, p, live0 - live1, live0);
		else if (tp_op_snap_hash(snap, &hash))
			inj_log(TP_LOG_WARN, "range %.200s: %s", tl_r.name, tp_last_error());
		else if (own && hash0 && hash != hash0) {
			inj_log(TP_LOG_INFO, "range %.200s: pass %u (the application's execution) "
				"made %" PRIu64 " kernel allocation%s, whose addresses need not be "
				"the replayed passes': its output_hash %016" PRIx64 " (pass 0's %016"
				PRIx64 ") is left out of the consistency check (0)", tl_r.name, p, own,
				own == 1 ? "" : "s", hash, hash0);
			hash = 0;
		}
		if (!hash0)
			hash0 = hash;
		split_records(&all);
		free(all.data);
		for (size_t i = 0; i < tl_r.n; i++) {
			struct rop *r = tl_r.v[i];
			if (!r->profiled)
				continue;
			write_pass(r->c, p, &r->buf);
			replay_line(r->c, p, restored, hash, t1 - t0,
				    kernel_ns_of(&r->buf, c0->st.sys_cnt_freq));
			r->c->passes_done = p + 1;
			free(r->buf.data);
			r->buf = (struct inj_pass_buf){ 0 };
		}
	}
	range_instr_done(false);
	/* No final restore: the last pass was the application's execution.
	 * When the passes were cut short (a SIGINT, a failure) the last
	 * execution, a replayed one, stands as the application's: what its
	 * kernels allocated stays. */
	uint64_t kept = kreplay_keep();
	if (kept)
		inj_log(TP_LOG_WARN, "range %.200s: the passes ended early; the last execution "
			"stands as the application's and keeps the %" PRIu64 " device "
			"allocation%s its kernels made (frees of earlier blocks in it were "
			"left undone)", tl_r.name, kept, kept == 1 ? "" : "s");
	kreplay_report(what);
	tp_op_snap_release(snap);
	range_args_report();
done:
	if (inj_device() != pop_dev && g_inj.real.set_device)
		(void)g_inj.real.set_device(pop_dev);
	for (size_t i = 0; i < tl_r.n; i++)
		if (tl_r.v[i]->profiled)
			lctx_finish(tl_r.v[i]->c);
	e_cur = NULL;
	args_guard_disarm();
	inj_set_replaying(false);
	tp_op_window_end();
	/* The queued frees, now that no captured launch runs any more. */
	if (g_inj.real.free) {
		int frc = tp_op_deferred_flush(free_on_device);
		if (frc)
			inj_log(TP_LOG_WARN, "range %.200s: a deferred tp_rt_free failed: %s", tl_r.name,
				tp_last_error());
	}
	range_release();
	maybe_kill(dev);
	return lrc;
}
