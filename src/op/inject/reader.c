/* SPDX-License-Identifier: MIT */
/*
 * reader.c — the channel reader thread of the injector (seed 003 §4.3
 * "通过驱动采集profiling数据"; spec/opprof.md §4.10).
 *
 * One reader at a time, serving one device. It loops on
 * tp_drv_prof_channel_poll() and takes records with
 * tp_drv_prof_channel_read() while a pass runs (a channel's ring is
 * bounded: with more blocks than it holds, the producing AICores wait for
 * this thread), appends them to the armed pass buffer, and signals the
 * replaying thread once it has read the END_OF_PASS of every channel the
 * pass started. No sleeps: the poll wakes on records, on END_OF_PASS and
 * on tp_drv_prof_poll_wake().
 *
 * It is started on first need for the launch's device (lazily: an
 * application that never has a launch profiled gets no thread). A device
 * switch (tp_rt_set_device to another device) or a reset of its device
 * stops and joins it; the next profiled launch starts one for its device.
 * At exit a thread-local destructor of the main thread and the library
 * destructor stop and join it, so no thread is left behind.
 *
 * It is also the replay watchdog: a warm-up or pass that has not finished
 * by the deadline the replaying thread set (the kernel hangs: it waits for
 * the host or a peer, which only the application's first execution gets)
 * ends the process with status 70 after writing status=failed, "use
 * application replay" (spec §4.13; in application replay itself: raise
 * --pass-timeout).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "op/inject/inject.h"

/* Records taken per read call. */
#define READ_RECS 256
/* Longest poll wait, ms: bounds how late the watchdog looks. */
#define POLL_MS 200
/* A turn of the reader's loop this much longer than POLL_MS means the
 * process did not run meanwhile (see reader_main). */
#define STOP_GAP_NS 1000000000ull

/* Held across a whole start (inj_reader_ensure) or stop (its join):
 * one thread starts or stops the reader at a time, so a stop's r_quit
 * store can never land after the r_quit = false of a start that began
 * meanwhile (the old reader then polled on for ever and the join never
 * returned: an application whose main() returned while another thread
 * launched hung at exit). Never taken by the reader thread. */
static pthread_mutex_t r_life = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t r_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t r_cv = PTHREAD_COND_INITIALIZER;
static pthread_t r_thread;
static bool r_running;       /* r_thread exists and is to be joined */
static int r_device = -1;
static _Atomic bool r_quit;  /* see reader_main */
/* Armed pass (r_mu). */
static struct inj_pass_buf *r_buf;
static unsigned r_want, r_seen;
/* Watchdog (r_mu): CLOCK_MONOTONIC_RAW ns after which the execution in
 * progress counts as hung; 0 = off. */
static uint64_t r_deadline;
static char r_dir[4300];

static int append(struct inj_pass_buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 64 * sizeof(struct tp_op_rec);
		while (cap < b->len + n)
			cap *= 2;
		char *d = realloc(b->data, cap);
		if (!d)
			return -ENOMEM;
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

/* Take every record of (@device, @ch) available now. */
static void drain_channel(int device, uint32_t ch, struct tp_op_rec *tmp)
{
	for (;;) {
		int n = tp_drv_prof_channel_read(device, ch, tmp, READ_RECS * sizeof(*tmp));
		if (n <= 0)
			return;
		size_t nrec = (size_t)n / sizeof(*tmp);
		pthread_mutex_lock(&r_mu);
		/* Records of a device this reader does not serve, or read
		 * while no pass is armed, have no launch to go to: dropped
		 * (reading them still frees the ring). */
		if (r_buf && device == r_device && append(r_buf, tmp, (size_t)n)) {
			/* The pass is incomplete: run_pass() fails it. */
			r_buf->lost += nrec;
			inj_log(TP_LOG_ERROR, "reader: out of memory; %zu records lost", nrec);
		}
		for (size_t i = 0; i < nrec; i++)
			if (tmp[i].kind == TP_OP_REC_END_OF_PASS && tmp[i].channel < 32)
				r_seen |= 1u << tmp[i].channel;
		if (r_buf && (r_seen & r_want) == r_want)
			pthread_cond_broadcast(&r_cv);
		pthread_mutex_unlock(&r_mu);
		if (nrec < READ_RECS)
			return;
	}
}

/* True on the reader thread: an exit() there (an application's SIGINT
 * handler run on it after inj_sigint_now()) reaches inj_reader_stop()
 * through the destructors, which must neither join the thread itself
 * nor wait for r_life, which a thread joining this one holds. */
static _Thread_local bool r_on_reader;
/* True while this thread holds r_life: an exit() from a signal handler
 * that interrupted it (in a join) reaches inj_reader_stop() again
 * through the destructors, which must not wait for the lock this very
 * thread holds. */
static _Thread_local bool r_life_held;

static void *reader_main(void *arg)
{
	r_on_reader = true;
	/* Allocated by inj_reader_ensure(), which reports its failure. */
	struct tp_op_rec *tmp = arg;
	struct tp_drv_prof_poll_info info[8];
	uint64_t last = tp_now_ns();
	/* relaxed: r_quit orders nothing; the join publishes the rest. */
	while (!atomic_load_explicit(&r_quit, memory_order_relaxed)) {
		int n = tp_drv_prof_channel_poll(info, 8, POLL_MS);
		for (int i = 0; i < n; i++)
			drain_channel(info[i].device_id, info[i].channel_id, tmp);
		uint64_t now = tp_now_ns(), gap = now - last;
		last = now;
		pthread_mutex_lock(&r_mu);
		/* A turn far longer than the poll: the process was stopped
		 * (SIGSTOP, Ctrl-Z, a debugger, a cgroup freezer), or this
		 * thread got no CPU for that long. That time is not the
		 * execution's: the deadline moves by it, so a stop is never
		 * taken for a hung kernel (a hang is found later at worst). */
		if (r_deadline && gap > POLL_MS * 1000000ull + STOP_GAP_NS)
			r_deadline += gap - POLL_MS * 1000000ull;
		bool hung = r_deadline && now > r_deadline;
		/* A SIGINT the execution in progress outlived by the grace:
		 * end now, as the SIGINT would have (a hung kernel would hold
		 * the interrupt until the pass timeout otherwise; the
		 * application's own execution after the passes has no
		 * deadline, so it is not required here). */
		const uint64_t si = inj_sigint_ns();
		const bool cut = !hung && si && now > si + INJ_SIGINT_GRACE_NS;
		/* The launch folder as of the deadline: the launching thread
		 * rewrites r_dir under the lock (inj_reader_watch). */
		char dir[sizeof(r_dir)];
		if (hung || cut)
			snprintf(dir, sizeof(dir), "%s", r_dir);
		pthread_mutex_unlock(&r_mu);
		if (cut) {
			const char *sig = inj_interrupt_name();
			inj_log(TP_LOG_WARN, "%s: the execution in progress did not end within "
				"%llu s of the %s: ending the application as the %s would", dir,
				INJ_SIGINT_GRACE_NS / 1000000000ull, sig, sig);
			char why[96];
			snprintf(why, sizeof(why),
				 "%s during an execution that did not end within 3 s", sig);
			inj_end_launch_dir(dir, "interrupted", why);
			inj_sigint_now();
		}
		if (hung) {
			inj_log(TP_LOG_ERROR, "%s of %s: an execution did not finish within "
				"pass_timeout_s=%u: %s; exiting with status %d",
				g_inj.cfg.replay_mode == TP_OP_REPLAY_APPLICATION ? "profile"
										  : "replay",
				dir, g_inj.cfg.pass_timeout_s, inj_timeout_advice(),
				INJ_EXIT_FATAL);
			char note[400];
			snprintf(note, sizeof(note), "pass timed out after %u s; %s",
				 g_inj.cfg.pass_timeout_s, inj_timeout_advice());
			inj_fatal_launch_dir(dir, note);
			inj_exit_fatal(note);
		}
	}
	free(tmp);
	return NULL;
}

/* inj_reader_stop()'s body; r_life held. */
static void stop_locked(int device)
{
	pthread_mutex_lock(&r_mu);
	if (!r_running || (device >= 0 && r_device != device)) {
		pthread_mutex_unlock(&r_mu);
		return;
	}
	pthread_t th = r_thread;
	r_running = false;
	pthread_mutex_unlock(&r_mu);
	/* relaxed + wake: the reader re-checks r_quit after every poll. */
	atomic_store_explicit(&r_quit, true, memory_order_relaxed);
	tp_drv_prof_poll_wake();
	pthread_join(th, NULL);
	pthread_mutex_lock(&r_mu);
	r_device = -1;
	pthread_mutex_unlock(&r_mu);
}

int inj_reader_ensure(int device)
{
	pthread_mutex_lock(&r_mu);
	bool same = r_running && r_device == device;
	pthread_mutex_unlock(&r_mu);
	if (same)
		return 0;
	if (r_life_held) /* a signal handler's launch inside a start or stop */
		return tp_set_error(-EDEADLK, "a launch from a signal handler while the "
				    "channel reader was being started or stopped: not profiled");
	pthread_mutex_lock(&r_life);
	r_life_held = true;
	pthread_mutex_lock(&r_mu);
	same = r_running && r_device == device; /* started meanwhile */
	pthread_mutex_unlock(&r_mu);
	if (same) {
		r_life_held = false;
		pthread_mutex_unlock(&r_life);
		return 0;
	}
	stop_locked(-1);
	pthread_mutex_lock(&r_mu);
	/* relaxed: the thread created below reads it after pthread_create,
	 * which orders this store before its start. */
	atomic_store_explicit(&r_quit, false, memory_order_relaxed);
	r_device = device;
	struct tp_op_rec *tmp = malloc(READ_RECS * sizeof(*tmp));
	int rc = tmp ? pthread_create(&r_thread, NULL, reader_main, tmp) : ENOMEM;
	r_running = rc == 0;
	pthread_mutex_unlock(&r_mu);
	r_life_held = false;
	pthread_mutex_unlock(&r_life);
	if (!rc)
		return 0;
	free(tmp);
	if (rc == EAGAIN)
		return tp_set_error(-rc, "cannot start the channel reader thread: %s (the "
				    "process's limit of threads, ulimit -u, or of memory)",
				    strerror(rc));
	return tp_set_error(-rc, "cannot start the channel reader thread: %s", strerror(rc));
}

void inj_reader_stop(int device)
{
	if (r_on_reader || r_life_held)
		return;
	pthread_mutex_lock(&r_life);
	r_life_held = true;
	stop_locked(device);
	r_life_held = false;
	pthread_mutex_unlock(&r_life);
}

void inj_reader_arm(struct inj_pass_buf *buf, unsigned mask)
{
	pthread_mutex_lock(&r_mu);
	r_buf = buf;
	r_want = mask;
	r_seen = 0;
	pthread_mutex_unlock(&r_mu);
}

void inj_reader_watch(uint64_t deadline_ns, const char *dir)
{
	pthread_mutex_lock(&r_mu);
	r_deadline = deadline_ns;
	if (dir)
		snprintf(r_dir, sizeof(r_dir), "%s", dir);
	pthread_mutex_unlock(&r_mu);
}

int inj_reader_wait(int timeout_ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	int rc = 0;
	pthread_mutex_lock(&r_mu);
	while ((r_seen & r_want) != r_want && rc == 0) {
		/* The reader may have gone (device reset by another thread):
		 * nobody will signal. */
		if (!r_running) {
			rc = ETIMEDOUT;
			break;
		}
		rc = pthread_cond_timedwait(&r_cv, &r_mu, &ts);
	}
	bool done = (r_seen & r_want) == r_want;
	r_buf = NULL;
	r_want = r_seen = 0;
	pthread_mutex_unlock(&r_mu);
	return done ? 0 : -ETIMEDOUT;
}

void inj_reader_atfork_child(void)
{
	pthread_mutex_init(&r_life, NULL);
	pthread_mutex_init(&r_mu, NULL);
	pthread_cond_init(&r_cv, NULL);
	r_running = false;
	r_device = -1;
	r_buf = NULL;
	r_want = r_seen = 0;
	r_deadline = 0;
}
