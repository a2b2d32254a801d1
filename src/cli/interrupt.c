/* SPDX-License-Identifier: MIT */
#include "cli/interrupt.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/prctl.h>
#include <sys/syscall.h>

#include "base/tmp_registry.h"

static const char *g_cmd = "taskprof";
/* Set by the first handler to run: a second one (the other signal on
 * another thread, before the dispositions were reset) dies at once. */
static atomic_flag g_entered = ATOMIC_FLAG_INIT;

/* Async-signal-safe output: write(2) of NUL-terminated pieces. */
static size_t len_of(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

static void put(const char *s)
{
	size_t n = len_of(s);
	while (n) {
		ssize_t k = write(STDERR_FILENO, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

static void put_uint(unsigned v)
{
	char b[16];
	int i = (int)sizeof(b) - 1;
	b[i] = '\0';
	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v && i > 0);
	put(b + i);
}

static void set_default(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa)); /* memset: async-signal-safe (POSIX.1-2016) */
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* Remove the registered temporary files and the run folder if that left
 * it empty; write "removed N temporary files" and where the outputs are,
 * ending the line. Async-signal-safe. */
static void put_cleanup(void)
{
	int removed = tp_tmpreg_unlink_all();
	const char *dir = tp_tmpreg_claim_dir();
	bool dir_gone = dir && rmdir(dir) == 0;
	put("removed ");
	put_uint((unsigned)removed);
	put(removed == 1 ? " temporary file" : " temporary files");
	if (dir_gone) {
		put(" and the empty run folder ");
		put(dir);
	} else if (dir) {
		put("; what was written before is in ");
		put(dir);
	} else {
		put("; no output was written");
	}
	put("\n");
}

/* " in thread NAME (what runs there)" for the calling thread. The device
 * threads are named tp<dev>-aic<N> / -aiv<N> (AICore: kernels) and
 * tp<dev>-aicpu<N> (the orchestration, schedulers, the runtime); the
 * profilers' host threads tp-drain / tp-repl / tp-coll. Async-signal-safe
 * (prctl is a plain system call). */
static void put_thread(void)
{
	char name[17] = { 0 };
	if (prctl(PR_GET_NAME, (unsigned long)name, 0, 0, 0) != 0 || !name[0])
		return;
	put(" in thread ");
	put(name);
	const char *dash = name;
	while (*dash && *dash != '-')
		dash++;
	if (name[0] != 't' || name[1] != 'p' || !*dash)
		put(" (the main thread: the case's generate, golden or release, or taskprof)");
	else if (!strncmp(dash, "-aicpu", 6))
		put(" (an AICPU thread: the case's orchestration or the runtime)");
	else if (!strncmp(dash, "-aic", 4) || !strncmp(dash, "-aiv", 4))
		put(" (an AICore thread: a kernel of the case)");
	else
		put(" (a profiling host thread)");
}

static void on_interrupt(int sig)
{
	set_default(SIGINT);
	set_default(SIGTERM);
	set_default(SIGHUP);
	/* Relaxed: the flag orders nothing; it only elects one cleaner. */
	if (atomic_flag_test_and_set_explicit(&g_entered, memory_order_relaxed)) {
		raise(sig);
		_exit(128 + sig);
	}
	put(g_cmd);
	put(": interrupted by ");
	put(sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM");
	put(": ");
	put_cleanup();
	raise(sig); /* SIG_DFL now, and not blocked (SA_NODEFER): we die here */
	_exit(128 + sig);
}

void cli_interrupt_install(const char *cmd)
{
	/* SIGHUP: the terminal closed. SIGQUIT is left alone: its default
	 * action dumps core, which is what a user sending it asks for. */
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	g_cmd = cmd;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue; /* ignored at entry stays ignored (shell convention) */
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_interrupt;
		/* Nothing blocked while it runs, so the handler's own reset
		 * makes a second signal fatal at once; no SA_RESTART: a wait
		 * cut short only ends sooner, the handler never returns. */
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_NODEFER;
		sigaction(sigs[i], &sa, NULL);
	}
}

/* ---- crashes and exit() during a run ------------------------------------ */

/* The thread reporting a crash (its tid), 0 while none is. */
static _Atomic long g_crash_tid;
static atomic_bool g_exit_guard;

static const char *crash_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV (invalid memory access)";
	case SIGBUS: return "SIGBUS (bus error)";
	case SIGFPE: return "SIGFPE (arithmetic error)";
	case SIGILL: return "SIGILL (illegal instruction)";
	default: return "SIGABRT (abort)";
	}
}

static void on_crash(int sig)
{
	long me = (long)syscall(SYS_gettid);
	long none = 0;
	/* Relaxed: elects the one thread that reports. Orders nothing else:
	 * the others only wait for the process to die. */
	if (!atomic_compare_exchange_strong_explicit(&g_crash_tid, &none, me, memory_order_relaxed,
						     memory_order_relaxed)) {
		if (none == me) {
			/* A fault inside the report itself: die by it now. */
			set_default(sig);
			raise(sig);
			_exit(128 + sig);
		}
		/* Another thread faulted too (every AICore running the same
		 * bad kernel): wait while the first one reports; its raise()
		 * ends the process. */
		for (;;)
			pause();
	}
	put(g_cmd);
	put(": crashed: ");
	put(crash_name(sig));
	put_thread();
	put("; ");
	put_cleanup();
	set_default(sig);
	raise(sig); /* SIG_DFL now: dies by the signal (a core dump if enabled) */
	_exit(128 + sig);
}

/* exit() while the guard is up: the case's code ended the process. Best
 * effort: exit() is not thread-safe, and when several threads call it at
 * once (every AICore running the same kernel) one of them may end the
 * process with the case's status before this is done. */
static void on_exit_guard(int status, void *arg)
{
	(void)arg;
	/* Relaxed: a flag the exiting thread reads; set and cleared by the
	 * main thread around the run. */
	if (!atomic_load_explicit(&g_exit_guard, memory_order_relaxed))
		return;
	put(g_cmd);
	put(": the run was ended by exit(");
	put_uint((unsigned)status & 0xffu);
	put(")");
	put_thread();
	put(", not by taskprof: the run did not finish; ");
	put_cleanup();
	_exit(1);
}

/* Under ASan / TSan the sanitizer's own fatal-signal report (a stack of
 * the fault) is worth more than our line: leave those signals to it. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TP_CRASH_HANDLERS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TP_CRASH_HANDLERS 0
#endif
#endif
#ifndef TP_CRASH_HANDLERS
#define TP_CRASH_HANDLERS 1
#endif

void cli_crash_install(const char *cmd)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	g_cmd = cmd;
	for (size_t i = 0; TP_CRASH_HANDLERS && i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_crash;
		sigemptyset(&sa.sa_mask);
		/* SA_NODEFER: a fault inside the report re-enters and dies. */
		sa.sa_flags = SA_NODEFER;
		sigaction(sigs[i], &sa, NULL);
	}
	static bool registered;
	if (!registered)
		registered = on_exit(on_exit_guard, NULL) == 0;
}

void cli_exit_guard(bool on)
{
	/* Relaxed: see on_exit_guard(). */
	atomic_store_explicit(&g_exit_guard, on, memory_order_relaxed);
}
