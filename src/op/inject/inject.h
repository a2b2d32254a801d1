/* SPDX-License-Identifier: MIT */
/*
 * op/inject/inject.h — internals of libtaskprof_inject.so, the LD_PRELOAD
 * injection library of `taskprof op` (spec/opprof.md §3, §4.3, §4.4,
 * §4.7, §4.8, §4.10; docs/op-internals.md).
 *
 *   hooks.c   the interposed tp_rt_* entry points, the once-init (real
 *             pointers by dlsym(RTLD_NEXT), config.txt), fork, signals,
 *             exit, the log
 *   engine.c  what a profiled launch does: kernel replay, application
 *             replay's single measured run, range capture and replay, and
 *             every file of a launch directory
 *   reader.c  the channel reader thread: drains the driver profiling
 *             channels into the current pass's buffer
 */
#ifndef TASKPROF_OP_INJECT_H
#define TASKPROF_OP_INJECT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "op/config.h"
#include "op/filter.h"
#include "taskprof/rt.h"
#include "taskprof/rt_tool.h"

/* The status a fatal injector error exits with (the launcher's
 * OP_INJECT_FAILURE_STATUS). */
#define INJ_EXIT_FATAL 70

/**
 * struct inj_real - the real tp_rt_* entry points, resolved once by
 * dlsym(RTLD_NEXT) (NULL: missing in the runtime).
 */
struct inj_real {
	int (*set_device)(int);
	int (*reset_device)(int);
	int (*malloc)(void **, size_t);
	int (*free)(void *);
	int (*memcpy)(void *, const void *, size_t, enum tp_rt_memcpy_kind);
	int (*launch)(tp_rt_kernel_fn, uint32_t, void *);
	int (*launch_ex)(tp_rt_kernel_fn, uint32_t, void *, const struct tp_rt_launch_attr *);
	int (*synchronize)(void);
	int (*range_push)(const char *);
	int (*range_pop)(void);
};

/**
 * struct inj_state - process state, written by the once-init (and the
 * fork child handler) before any hook reads it.
 */
struct inj_state {
	struct inj_real real;
	bool active;               /* profiling this process */
	struct tp_op_config cfg;   /* config.txt (valid when active) */
	int app_pass;              /* application replay: TASKPROF_PASS */
	bool no_restore;           /* TASKPROF_DEBUG_NO_RESTORE=1 */
	char launches_path[4300];  /* where every launch is logged */
	char base[4200];           /* parent of device<D>/ */
};
extern struct inj_state g_inj;

/* ---- hooks.c ---------------------------------------------------------------- */

/** inj_log() - one pid-prefixed line to <output>/taskprof.log; WARN and
 *  ERROR lines also go to stderr ("taskprof op: warning: ...").
 *  @level: a TP_LOG_* level (base/log.h); @fmt: printf format. */
void inj_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** inj_fail() - a file the injector could not open or write: an ERROR line
 *  (log and stderr) and a line on the launcher's status pipe, which makes
 *  `taskprof op` fail (exit 1) with this message once the application has
 *  ended. The message names the file and the reason (strerror).
 *  @fmt: printf format of the message, without trailing newline. */
void inj_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** inj_progress() - one "taskprof op: ..." line to stderr (and the log).
 *  @fmt: printf format of the line, without trailing newline. */
void inj_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* How long a pass may go on after a SIGINT before the process ends as
 * SIGINT would (the reader's watchdog; a hung or slow kernel). */
#define INJ_SIGINT_GRACE_NS 3000000000ull
/** inj_sigint_ns() - when the first SIGINT arrived during a replay.
 *  Return: ns of CLOCK_MONOTONIC_RAW (the tp_now_ns() clock); 0 when none
 *  did. */
uint64_t inj_sigint_ns(void);
/** inj_sigint_now() - end the process by SIGINT's default action (the
 *  watchdog, after the pass outlived INJ_SIGINT_GRACE_NS). */
__attribute__((noreturn)) void inj_sigint_now(void);
/** inj_interrupt_name() - "SIGINT", "SIGTERM" or "SIGHUP": the signal that
 *  interrupted the replay (SIGINT before any), for notes and messages. */
const char *inj_interrupt_name(void);
/** inj_interrupted() - whether SIGINT arrived during a replay.
 *  Return: true once one did (it stays true). */
bool inj_interrupted(void);
/** inj_set_replaying() - tell the SIGINT handler a replay runs (a SIGINT
 *  then only sets the flag) or not (it ends the process as usual).
 *  @on: true at the start of a replay, false at its end; false after a
 *       SIGINT arrived during it raises SIGINT now (spec/opprof.md §4.13
 *       "Ctrl-C"). */
void inj_set_replaying(bool on);
/** inj_timeout_advice() - what to do about an execution that outlived
 *  pass_timeout_s, for the replay mode: replay it with application replay
 *  (kernel and range replay), or raise --pass-timeout (application
 *  replay, which already runs each kernel once, as the application).
 *  Return: the advice, one phrase without a final period (a static
 *  string). */
const char *inj_timeout_advice(void);
/** inj_device() - the calling thread's current device.
 *  Return: the device id from tp_rt_get_device(); 0 until the thread sets
 *  another, or when that call fails. */
int inj_device(void);
/** inj_marker_range() - with range markers on (any replay mode): the
 *  tp_rt_range_push range open on the calling thread.
 *  Return: its name (the copy of inj_range_name_copy(), valid until the
 *  pop), or NULL when none is open or markers are off. */
const char *inj_marker_range(void);

/* ---- engine.c --------------------------------------------------------------- */

/**
 * struct inj_launch - one launch as the hooks saw it (every variant
 * normalised): kernel, @block_dim blocks, args blob, optional attributes.
 */
struct inj_launch {
	tp_rt_kernel_fn kernel;
	uint32_t block_dim;
	void *args;
	const struct tp_rt_launch_attr *attr; /* may be NULL */
	bool ex;                              /* came through tp_rt_launch_ex */
	int device;
	/* Bytes of *args the injector reads (a profiled launch's launch.txt
	 * args_size): the runtime passes no size, so the window of
	 * TP_OP_ARGS_WINDOW bytes, fewer when it ends at an unreadable page;
	 * 0 for NULL args. */
	size_t args_size;
	char name[TP_OP_NAME_MAX + 1];        /* sanitised: the directory name */
	char real_name[512];                  /* attr->name / symbol: -k matches it */
};

/** inj_launch_name() - the kernel's name (tp_rt_internal_kernel_name():
 *  attr->name, the symbol, or "<object>+0x<offset>") into @l->real_name
 *  (truncated to 511 bytes), and sanitised into @l->name
 *  (tp_op_name_sanitise()).
 *  @l: the launch; its @kernel and @attr are read. */
void inj_launch_name(struct inj_launch *l);

/** inj_engine_init() - the launch filter from g_inj.cfg (tp_op_filter_init(),
 *  range markers set; spec/opprof.md §4.6).
 *  Return: 0 or -EINVAL (bad kernel_name or a launch_count of 0;
 *  tp_last_error() says which). */
int inj_engine_init(void);

/** inj_engine_resume() - in a new image of the process (after exec; same
 *  pid and start time): go on with the launch selection counters the
 *  image before left in <base>/.selection_<pid> (docs/op.md "Which
 *  launches": counts are per process), so that --launch-count,
 *  --launch-skip*, and --kill on count across exec. Nothing to go on
 *  from (the first image, another process's file): the counters stay
 *  zero. Called once, after inj_engine_init(). */
void inj_engine_resume(void);

/** inj_engine_atfork_child() - re-initialise the engine's lock and the
 *  selection counters in a forked child. */
void inj_engine_atfork_child(void);

/** inj_engine_api_called() - a hook of the device API was entered on a
 *  host thread of a profiled process: its launches file (launches.txt of
 *  the run, launches_<pid>.txt) exists from the first such call on, with
 *  launches or none, so that the launcher tells an application that made
 *  no launch from one whose calls never reached the interposer (a
 *  statically linked runtime; docs/op.md "Limits"). Cheap after the
 *  first call (one relaxed load). */
void inj_engine_api_called(void);

/** inj_engine_exit() - at process exit: write launch.txt (status=failed)
 *  for every profiled launch captured in a range that was never popped. */
void inj_engine_exit(void);

/** inj_engine_launch() - the launch hook's body (not in a range): select,
 *  profile per the replay mode, run the app's launch. A call the runtime
 *  refuses (a NULL kernel, a block_dim out of 1..TP_RT_MAX_BLOCK_DIM, an
 *  unknown attr->cores, a device that cannot be opened) is no launch: it
 *  goes to the runtime unprofiled, is not seen by the selection, and is
 *  logged as a "# rejected" line of launches.txt (spec/opprof.md §4.4,
 *  §4.6, §4.7).
 *  @l: the launch, with @l->device and the names set.
 *  Return: what the application's launch returns (the runtime's error for
 *  a refused call). */
int inj_engine_launch(struct inj_launch *l);

/*
 * Range replay hooks (spec/opprof.md §4.8; range mode with
 * range_markers=on). A range is per thread: push opens it, the hooks
 * below capture the thread's device calls instead of running them, and
 * pop runs the captured list once per pass. Errors set tp_last_error().
 */

/** inj_range_open() - whether the calling thread has a range open.
 *  Return: true between its accepted push and its pop. */
bool inj_range_open(void);

/* Bytes of a range-name copy: up to 1,020 bytes of the name, "..." where
 * it was cut, and the NUL. */
#define INJ_RANGE_NAME_BUF 1024

/**
 * inj_range_name_copy() - the copy of a range name taskprof keeps.
 * @buf:  INJ_RANGE_NAME_BUF bytes, written.
 * @name: the name given to tp_rt_range_push() (NULL: "").
 *
 * Cut to INJ_RANGE_NAME_BUF - 4 bytes ("..." marks the cut), control
 * characters as '_': it goes into launch.txt's key=value lines and
 * one-line warnings, where a newline would start a new key (a range named
 * "r\nstatus=failed" rewrote the launch's status). A copy, because the
 * application's string may not outlive its push.
 *
 * Return: @buf.
 */
const char *inj_range_name_copy(char buf[INJ_RANGE_NAME_BUF], const char *name);

/** inj_range_name() - the open range's name on this thread.
 *  Return: the name as kept at the push; "" when no range is open. */
const char *inj_range_name(void);

/**
 * inj_range_push() - the tp_rt_range_push hook: call the real one, then
 * open a range named @name on this thread (spec/opprof.md §4.8).
 * @name: the range's name (NULL: ""); a copy is kept
 *        (inj_range_name_copy()), the caller's string is not.
 *
 * Return: 0; the real call's error (no range opened), -ENOSYS when the
 * runtime lacks it.
 */
int inj_range_push(const char *name);

/**
 * inj_range_pop() - the tp_rt_range_pop hook: call the real one, then run
 * the captured list under the replay window: once when nothing in it was
 * selected or the footprint exceeds the memory budget (degraded, pass 0
 * only), else warm-up runs and one run per pass with the memory restored
 * before each; then the deferred frees.
 *
 * Return: 0; the real call's error or -ENOSYS (the list then stays
 * captured); else the first error of a captured operation when it ran
 * (what the application's calls would have returned).
 */
int inj_range_pop(void);

/**
 * inj_range_free() - the tp_rt_free hook inside a range: a live
 * allocation's base is queued (tp_op_defer_free()) and freed after the
 * last pass; any other pointer goes to the real free at once.
 * @p: the device pointer; NULL returns 0.
 *
 * Return: 0; -ENOMEM (queue); the real free's error for a pointer that is
 * not an allocation's base.
 */
int inj_range_free(void *p);

/**
 * inj_range_memcpy() - the tp_rt_memcpy hook inside a range: capture a
 * host-to-device (the host bytes are copied now) or device-to-device copy,
 * run at the pop.
 * @dst, @src, @n, @kind: as tp_rt_memcpy(); @n in bytes.
 *
 * Return: 0 when captured; -ENOTSUP for DEVICE_TO_HOST (its result would
 * not exist yet); -EFAULT when a device side is not inside one live
 * allocation; -ENOMEM; the real memcpy's error for an invalid @kind or a
 * NULL pointer.
 */
int inj_range_memcpy(void *dst, const void *src, size_t n, enum tp_rt_memcpy_kind kind);

/**
 * inj_range_launch() - the launch hook inside a range: capture the launch
 * (with a copy of TP_OP_ARGS_WINDOW bytes of its args blob, ending at a
 * PROT_NONE guard, unless the args lie in a registered device allocation
 * or none of their bytes is readable: those are passed unchanged) and
 * decide now whether it is profiled. A kernel that reads past the copy
 * when the range runs ends the process with a fatal error naming it
 * (status INJ_EXIT_FATAL).
 * @l: the launch, copied.
 *
 * A call the runtime refuses (a NULL kernel, a block_dim out of
 * 1..TP_RT_MAX_BLOCK_DIM, an unknown attr->cores, a device that cannot be
 * opened) is not captured: it goes to the runtime at once, as in
 * inj_engine_launch().
 *
 * Return: 0 when captured; -ENOMEM (also when the copy's mapping fails:
 * mmap's -errno); the runtime's error for a call it refuses (-EINVAL,
 * -ENODEV, ...).
 */
int inj_range_launch(struct inj_launch *l);

/* ---- reader.c --------------------------------------------------------------- */

/**
 * struct inj_pass_buf - what one pass collects: whole struct tp_op_rec
 * records in read order; @len bytes used of @cap.
 */
struct inj_pass_buf {
	char *data;   /* whole struct tp_op_rec records, read order */
	size_t len, cap;
	size_t lost;  /* records the reader could not append (out of memory) */
};

/** inj_exiting() - whether the process is exiting (main() returned or
 *  exit() ran: the injector's exit handlers began), so that a pass whose
 *  channel reader the exit stopped is cut short, not taken for a hang.
 *  Return: true once the exit began. */
bool inj_exiting(void);
/**
 * inj_kernel_own_allocs() - how many tp_rt_malloc calls of kernels in the
 * application's own executions (not replayed ones) succeeded so far; each
 * such block is registered like a host allocation (hooks.c).
 *
 * Return: the count since the injector loaded.
 */
uint64_t inj_kernel_own_allocs(void);

/** inj_kreplay_call() - whether the calling thread is a kernel (an
 *  AICore thread bound to a core) of a replayed execution of kernel
 *  replay (a warm-up or a measured pass, not the application's own
 *  launch): its tp_rt_malloc / tp_rt_free then go through
 *  inj_kreplay_alloc() / inj_kreplay_free() (docs/op.md "Limits and
 *  failure modes", a kernel that calls tp_rt_malloc).
 *  Return: true in such a call. */
bool inj_kreplay_call(void);
/** inj_kreplay_alloc() - note @p, a block the kernel of the replayed
 *  execution allocated: freed (for real) when that execution ends, as
 *  the restore leaves nothing pointing to it.
 *  @p: the device address tp_rt_malloc() returned. */
void inj_kreplay_alloc(void *p);
/** inj_kreplay_free() - a free by the kernel of a replayed execution.
 *  @p: the device address.
 *  Return: 1 when @p is a block that execution allocated, or no block
 *  the injector registered (the caller frees it now and returns the
 *  runtime's code); 0 for the start of a block allocated before, whose
 *  free is left to the application's own execution (the restore needs
 *  the block; the caller returns 0 without freeing); -EINVAL, as the
 *  runtime answers it, when the same execution already freed @p (a
 *  double free) or @p lies inside a registered block (the caller
 *  returns it). */
int inj_kreplay_free(void *p);
/** inj_reader_ensure() - a reader thread for @device (stopping and joining
 *  one that serves another device; spec/opprof.md §4.10).
 *  @device: the device whose channels it drains.
 *  Return: 0 (also when one already serves @device), or the -errno of
 *  pthread_create() (-EAGAIN, ...), logged as an ERROR line. */
int inj_reader_ensure(int device);
/** inj_reader_stop() - stop and join the reader if it serves @device.
 *  @device: a device id; any negative value: whichever it serves. */
void inj_reader_stop(int device);
/** inj_reader_arm() - route the channels' records to @buf until an
 *  END_OF_PASS has been seen on each channel of @mask (spec/opprof.md
 *  §4.10).
 *  @buf:  receives whole records; must stay valid until inj_reader_wait().
 *  @mask: bit i = channel id i. */
void inj_reader_arm(struct inj_pass_buf *buf, unsigned mask);
/** inj_reader_watch() - the watchdog: at @deadline_ns the execution in
 *  progress counts as hung and the reader ends the process (status 70,
 *  @dir's launch.txt status=failed; spec/opprof.md §4.13 "pass hangs").
 *  Time the process was stopped (a poll turn far longer than the poll)
 *  moves the deadline.
 *  @deadline_ns: ns of CLOCK_MONOTONIC_RAW (tp_now_ns()); 0 = off.
 *  @dir:         the launch directory; NULL keeps the previous one. */
void inj_reader_watch(uint64_t deadline_ns, const char *dir);
/** inj_reader_wait() - wait until every armed channel's END_OF_PASS was
 *  read (no sleeps: a condition variable the reader signals).
 *  @timeout_ms: the longest wait, in ms (of CLOCK_REALTIME).
 *  Return: 0, or -ETIMEDOUT after @timeout_ms, or at once when no reader
 *  runs. The reader is disarmed either way. */
int inj_reader_wait(int timeout_ms);
/** inj_reader_atfork_child() - forget the parent's reader (it does not
 *  exist in the child). */
void inj_reader_atfork_child(void);

/** inj_fatal_launch_dir() - launch.txt status=failed for @dir; used by the
 *  fatal paths before inj_exit_fatal(). inj_end_launch_dir(@dir, "failed",
 *  @note): nothing is written unless @dir is the launch in progress.
 *  @dir:  the launch directory.
 *  @note: the reason, one line. */
void inj_fatal_launch_dir(const char *dir, const char *note);
/** inj_end_launch_dir() - launch.txt with @status ("failed", or
 *  "interrupted": the passes done so far are reported) and @note for
 *  @dir, the launch in progress, before the process ends. */
void inj_end_launch_dir(const char *dir, const char *status, const char *note);

/* Name of the file a fatal injector error leaves beside the config file
 * (TASKPROF_CONFIG's folder: the session's output folder), so that the
 * launcher tells the injector's exit status 70 from an application that
 * exits 70 itself (the launcher's OP_INJECT_FAILURE_MARK). */
#define INJ_FATAL_MARK "injector_failed.txt"

/**
 * inj_exit_fatal() - end the process after a fatal injector error: write
 * INJ_FATAL_MARK (one line "pid <pid>: <@why>") into the folder of
 * TASKPROF_CONFIG, then _exit(INJ_EXIT_FATAL). Allocates nothing and takes
 * no lock (a stack buffer, open / write / close), so a thread may call it
 * while others hold the injector's locks.
 * @why: one-line reason (NULL: none).
 */
__attribute__((noreturn)) void inj_exit_fatal(const char *why);

#endif /* TASKPROF_OP_INJECT_H */
