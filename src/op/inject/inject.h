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

/* The real entry points, resolved once (NULL: missing in the runtime). */
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

/* Process state, written by the once-init (and the fork child handler)
 * before any hook reads it. */
struct inj_state {
	struct inj_real real;
	bool active;               /* profiling this process */
	struct tp_op_config cfg;   /* config.txt (valid when active) */
	int app_pass;              /* application replay: TASKPROF_OP_PASS */
	bool no_restore;           /* TASKPROF_DEBUG_NO_RESTORE=1 */
	char launches_path[4300];  /* where every launch is logged */
	char base[4200];           /* parent of device<D>/ */
};
extern struct inj_state g_inj;

/* ---- hooks.c ---------------------------------------------------------------- */

/** inj_log() - one pid-prefixed line to <output>/taskprof.log; WARN and
 *  ERROR lines also go to stderr ("taskprof op: warning: ..."). */
void inj_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** inj_fail() - a file the injector could not open or write: an ERROR line
 *  (log and stderr) and a line on the launcher's status pipe, which makes
 *  `taskprof op` fail (exit 1) with this message once the application has
 *  ended. The message names the file and the reason (strerror). */
void inj_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** inj_progress() - one "taskprof op: ..." line to stderr (and the log). */
void inj_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** inj_interrupted() - whether SIGINT arrived during a replay. */
bool inj_interrupted(void);
/** inj_set_replaying() - tell the SIGINT handler a replay runs (a SIGINT
 *  then only sets the flag) or not (it ends the process as usual). */
void inj_set_replaying(bool on);
/** inj_device() - the calling thread's current device. */
int inj_device(void);

/* ---- engine.c --------------------------------------------------------------- */

/* One launch as the hooks saw it (every variant normalised). */
struct inj_launch {
	tp_rt_kernel_fn kernel;
	uint32_t block_dim;
	void *args;
	const struct tp_rt_launch_attr *attr; /* may be NULL */
	bool ex;                              /* came through tp_rt_launch_ex */
	int device;
	char name[TP_OP_NAME_MAX + 1];        /* sanitised: the directory name */
	char real_name[512];                  /* attr->name / symbol: -k matches it */
};

/** inj_launch_name() - the kernel's name (tp_rt_internal_kernel_name():
 *  attr->name, the symbol, or "<object>+0x<offset>") into @l->real_name
 *  (truncated to 511 bytes), and sanitised into @l->name. */
void inj_launch_name(struct inj_launch *l);

/** inj_engine_init() - the launch filter from the config. Return: 0 or
 *  -EINVAL (bad kernel_name). */
int inj_engine_init(void);

/** inj_engine_atfork_child() - re-initialise the engine's lock and the
 *  selection counters in a forked child. */
void inj_engine_atfork_child(void);

/** inj_engine_exit() - at process exit: write launch.txt (status=failed)
 *  for every profiled launch captured in a range that was never popped. */
void inj_engine_exit(void);

/** inj_engine_launch() - the launch hook's body (not in a range): select,
 *  profile per the replay mode, run the app's launch. Return: what the
 *  application's launch returns. */
int inj_engine_launch(struct inj_launch *l);

/** inj_range_*() - range replay hooks (range mode with range_markers=on). */
bool inj_range_open(void);
/** inj_range_name() - the open range's name on this thread ("" if none). */
const char *inj_range_name(void);
int inj_range_push(const char *name);
int inj_range_pop(void);
int inj_range_free(void *p);
int inj_range_memcpy(void *dst, const void *src, size_t n, enum tp_rt_memcpy_kind kind);
int inj_range_launch(struct inj_launch *l);

/* ---- reader.c --------------------------------------------------------------- */

/* What one pass collects. */
struct inj_pass_buf {
	char *data;   /* whole struct tp_op_rec records, read order */
	size_t len, cap;
};

/** inj_reader_ensure() - a reader thread for @device (stopping and joining
 *  one that serves another device). Return: 0 or -errno. */
int inj_reader_ensure(int device);
/** inj_reader_stop() - stop and join the reader if it serves @device (-1:
 *  any). */
void inj_reader_stop(int device);
/** inj_reader_arm() - route the channels' records to @buf until an
 *  END_OF_PASS has been seen on each channel of @mask (bit = channel id). */
void inj_reader_arm(struct inj_pass_buf *buf, unsigned mask);
/** inj_reader_watch() - the watchdog: at @deadline_ns (CLOCK_MONOTONIC_RAW;
 *  0 = off) the execution in progress counts as hung and the reader ends
 *  the process (status 70, @dir's launch.txt status=failed). */
void inj_reader_watch(uint64_t deadline_ns, const char *dir);
/** inj_reader_wait() - wait until every armed channel's END_OF_PASS was
 *  read (no sleeps: a condition variable the reader signals). Return: 0, or
 *  -ETIMEDOUT after @timeout_ms. The reader is disarmed either way. */
int inj_reader_wait(int timeout_ms);
/** inj_reader_atfork_child() - forget the parent's reader (it does not
 *  exist in the child). */
void inj_reader_atfork_child(void);

/** inj_fatal_launch_dir() - launch.txt status=failed for @dir; used by the
 *  fatal paths before _exit(INJ_EXIT_FATAL). */
void inj_fatal_launch_dir(const char *dir, const char *note);

#endif /* TASKPROF_OP_INJECT_H */
