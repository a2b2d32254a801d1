/* SPDX-License-Identifier: MIT */
#include "cli/interrupt.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "base/error.h"
#include "base/log.h"
#include "base/progress.h"
#include "base/sanitizer.h"
#include "base/tmp_registry.h"

static const char *g_cmd = "taskprof";
/* Whether the command runs a case's code in this process (`taskprof
 * run`): the crash report then says which part of it a thread ran. */
static bool g_runs_cases;
/* The thread (tid) reporting an interrupt, a crash or an exit() of the
 * case, 0 while none is: one report per process. Another thread that
 * gets there too waits for the reporter to end the process; the reporter
 * itself coming back (a fault inside its own report) dies at once. */
static _Atomic long g_report_tid;

enum { ELECTED = 1, OTHER_REPORTS = 0, REENTERED = -1 };

static int elect(void)
{
	long me = (long)syscall(SYS_gettid), none = 0;
	/* Relaxed: elects one reporter; orders nothing else (the others only
	 * wait for the process to end). */
	if (atomic_compare_exchange_strong_explicit(&g_report_tid, &none, me,
						    memory_order_relaxed, memory_order_relaxed))
		return ELECTED;
	return none == me ? REENTERED : OTHER_REPORTS;
}

/* For a thread that is not the reporter: wait to be ended with the
 * process. */
static void wait_for_reporter(void)
{
	for (;;)
		pause();
}

/* Async-signal-safe output: NUL-terminated pieces gathered into one line
 * and written with one write(2) when the line ends (a '\n') or the buffer
 * is full, so that the log lines other threads write meanwhile (a
 * scheduler's ERROR, a device thread's WARN) never land inside it. Only
 * the elected reporter writes here (elect()). */
static char g_line[4096];
static size_t g_line_len;

static void flush_line(void)
{
	const char *s = g_line;
	size_t n = g_line_len;
	while (n) {
		ssize_t k = write(STDERR_FILENO, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		s += k;
		n -= (size_t)k;
	}
	g_line_len = 0;
}

static void put(const char *s)
{
	char last = '\0';
	for (; *s; s++) {
		if (g_line_len == sizeof(g_line))
			flush_line();
		g_line[g_line_len++] = last = *s;
	}
	if (last == '\n')
		flush_line();
}

/* @s as put() writes it, but a control character in it (a newline in a
 * path) as its C escape (tp_escape_controls(), which allocates nothing,
 * unlike tp_shown()): the line stays one line. */
static void put_shown(const char *s)
{
	for (; *s; s++) {
		const char one[2] = { *s, '\0' };
		char e[5];
		tp_escape_controls(e, sizeof(e), one);
		put(e);
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
	const char *out = tp_tmpreg_claim_committed();
	const char *dir = tp_tmpreg_claim_dir();
	bool dir_gone = dir && rmdir(dir) == 0;
	/* A folder that stays says what was not finished: a line appended to
	 * its result.txt, or a result.txt saying the run was interrupted when
	 * it had none yet. */
	bool noted = false;
	if (!dir_gone) {
		noted = tp_tmpreg_append_note(dir);
		/* A run that logged an error before the interrupt (a stall
		 * whose ~1 s teardown was cut short): its result.txt says it. */
		static char first_err[TP_LOG_FIRST_ERROR_MAX + 64];
		const size_t lead = sizeof("the first error it logged: ") - 1;
		memcpy(first_err, "the first error it logged: ", lead);
		if (!tp_log_first_error(first_err + lead, sizeof(first_err) - lead))
			first_err[0] = '\0';
		noted |= tp_tmpreg_mark_unfinished(dir, first_err);
	}
	/* After the files and the run folder: a folder made for an output
	 * holds only its temporary file (or the run folder) until the output
	 * is in place. */
	const char *made = tp_tmpreg_remove_made_dirs();
	put("removed ");
	put_uint((unsigned)removed);
	put(removed == 1 ? " temporary file" : " temporary files");
	if (dir_gone) {
		put(" and the empty run folder ");
		put_shown(dir);
	}
	if (made) {
		put(" and the folder ");
		put_shown(made);
		put(" made for the output");
	}
	if (dir_gone) {
		/* said above */
	} else if (dir) {
		put("; what was written before is in ");
		put_shown(dir);
		if (noted)
			put(" (its result.txt says what was not finished)");
	} else if (out) {
		/* The interrupt came after the output was renamed into place. */
		put("; the output ");
		put_shown(out);
		put(" was complete and is in place");
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
	/* What the worker said this thread was running for the case. */
	const char *act = tp_thread_activity();
	const bool main_thread = name[0] != 't' || name[1] != 'p' || !*dash;
	if (act) {
		put(main_thread ? " (the main thread: " : " (an AICPU thread: ");
		put_shown(act);
		put(")");
	} else if (main_thread && g_runs_cases) {
		put(" (the main thread: taskprof itself, or the case's code outside its "
		    "generate, golden, release and orchestration)");
	} else if (main_thread) {
		put(" (the main thread)");
	} else if (!strncmp(dash, "-aicpu", 6))
		put(" (an AICPU thread: the runtime)");
	else if (!strncmp(dash, "-aic", 4) || !strncmp(dash, "-aiv", 4))
		put(" (an AICore thread: a kernel of the case)");
	else if (!strncmp(dash, "-swl-", 5))
		put(" (a thread of the swimlane converter)"); /* tp-swl-deps, -writer */
	else
		put(" (a profiling host thread)");
}

/* The signals cli_interrupt_install() handles. SIGINT, SIGTERM, SIGHUP:
 * the user, a job control or a terminal ending the command. The others
 * end a process by default without a word: SIGXCPU (the soft CPU-time
 * limit, ulimit -t, as batch schedulers set it), SIGALRM / SIGVTALRM (a
 * timer nobody set up in taskprof: a wrapper's), SIGUSR1 / SIGUSR2; they
 * are taken only while their action is the default, so a handler a
 * preloaded tool installed stays its own. SIGQUIT (Ctrl-\) gets the same
 * clean-up and then its default action, a core dump where the core limit
 * allows one, which is what a user sending it asks for: the dump shows
 * the handler's frames on top of what the process was doing, and the
 * temporary files (a partial trace of hundreds of MB) are gone. SIGPROF
 * belongs to sampling profilers. */
static const int g_int_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXCPU,
				  SIGALRM, SIGVTALRM, SIGUSR1, SIGUSR2 };
#define N_INT_SIGS (sizeof(g_int_sigs) / sizeof(g_int_sigs[0]))
/* The first four are also taken over a handler (not over SIG_IGN). */
#define N_INT_SIGS_ALWAYS 4

/* "SIGXCPU" and what it means where that is not obvious. */
static void put_signal(int sig)
{
	const char *abbrev = sigabbrev_np(sig);
	put(abbrev ? "SIG" : "signal ");
	if (abbrev)
		put(abbrev);
	else
		put_uint((unsigned)sig);
	if (sig == SIGXCPU)
		put(" (the CPU time limit, ulimit -t, was reached)");
}

/* The first interrupting signal and when it came (CLOCK_MONOTONIC, ns; 0
 * until stored), to tell a repeat of it from a user's second signal. */
static _Atomic int g_first_sig;
static _Atomic int64_t g_first_ns;

/* A repeat of the first signal within this long is the same request sent
 * twice (GNU timeout signals the command and then its process group; a
 * supervisor may do the same): ignored, the clean-up goes on. */
#define REPEAT_WINDOW_NS 1000000000LL

static int64_t mono_ns(void)
{
	struct timespec ts; /* clock_gettime: async-signal-safe (POSIX.1-2008) */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void on_interrupt(int sig)
{
	const int64_t now = mono_ns();
	int none = 0;
	/* Relaxed: the first signal and its time are read back only by later
	 * deliveries of this handler, for the repeat test below; a delivery
	 * that sees the signal but not yet the time (0) takes it as a repeat. */
	if (atomic_compare_exchange_strong_explicit(&g_first_sig, &none, sig,
						    memory_order_relaxed, memory_order_relaxed))
		atomic_store_explicit(&g_first_ns, now, memory_order_relaxed);
	int who = elect();
	if (who != ELECTED) {
		/* A report is under way (this thread's own clean-up, another
		 * thread's, or a crash report). */
		const int64_t t0 = atomic_load_explicit(&g_first_ns, memory_order_relaxed);
		const bool repeat =
			sig == atomic_load_explicit(&g_first_sig, memory_order_relaxed) &&
			(t0 == 0 || now - t0 < REPEAT_WINDOW_NS);
		if (repeat && who == REENTERED)
			return; /* back to the clean-up it interrupted */
		if (repeat)
			wait_for_reporter(); /* its report ends the process */
		/* Another signal, or the same one later: the user insists,
		 * e.g. a clean-up stuck on a hung file system. Die at once. */
		for (size_t i = 0; i < N_INT_SIGS; i++)
			set_default(g_int_sigs[i]);
		raise(sig);
		_exit(128 + sig);
	}
	put(g_cmd);
	put(": interrupted by ");
	put_signal(sig);
	/* What the command was doing ("while running gemm Small on a5sim
	 * (round 38 of 1000)"), when it marked a phase (base/progress.h). */
	char what[200];
	if (tp_progress_phase_snapshot(what, sizeof(what))) {
		put(" while ");
		put_shown(what);
	}
	put(": ");
	put_cleanup();
	for (size_t i = 0; i < N_INT_SIGS; i++)
		set_default(g_int_sigs[i]);
	raise(sig); /* SIG_DFL now, and not blocked (SA_NODEFER): we die here */
	_exit(128 + sig);
}

void cli_interrupt_install(const char *cmd)
{
	g_cmd = cmd;
	for (size_t i = 0; i < N_INT_SIGS; i++) {
		struct sigaction old;
		if (sigaction(g_int_sigs[i], NULL, &old) != 0)
			continue;
		if (old.sa_handler == SIG_IGN)
			continue; /* ignored at entry stays ignored (shell convention) */
		if (i >= N_INT_SIGS_ALWAYS &&
		    ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL))
			continue; /* someone else's handler */
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_interrupt;
		/* Nothing blocked while it runs, so a second signal during
		 * the clean-up reaches the handler, which ignores a quick
		 * repeat of the first and dies at once on anything else; no
		 * SA_RESTART: a wait cut short only ends sooner, the handler
		 * returns only to a clean-up it interrupted. */
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_NODEFER;
		sigaction(g_int_sigs[i], &sa, NULL);
	}
}

/* ---- crashes and exit() during a run ------------------------------------ */

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

/* The main thread's stack limit (RLIMIT_STACK) in KiB, read at
 * cli_crash_install(); 0: unlimited or unknown. */
static unsigned long g_stack_kib;
static long g_main_tid;

/* Whether the fault of @si in the context @ucv hit the guard below the
 * thread's stack: its address lies within 256 KiB of the stack pointer
 * (a push, a call or a big frame's first store), where nothing but the
 * stack or its guard is mapped. Async-signal-safe. */
static bool stack_overflow(int sig, const siginfo_t *si, const void *ucv)
{
	if (sig != SIGSEGV || !si || !ucv)
		return false;
	const ucontext_t *uc = ucv;
	uintptr_t sp;
#if defined(__x86_64__)
	sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
	sp = (uintptr_t)uc->uc_mcontext.sp;
#else
	(void)uc;
	return false;
#endif
	const uintptr_t a = (uintptr_t)si->si_addr, near = 256u << 10;
	return a >= (sp > near ? sp - near : 0) && a <= sp + near;
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
	int who = elect();
	if (who == REENTERED) {
		/* A fault inside the report itself: die by it now. */
		set_default(sig);
		raise(sig);
		_exit(128 + sig);
	}
	if (who == OTHER_REPORTS)
		wait_for_reporter(); /* every AICore running the same bad kernel */
	put(g_cmd);
	if (si && si->si_code <= 0 && si->si_pid > 0 && si->si_pid != getpid()) {
		/* Sent by another process (kill), not a fault of this one nor
		 * its own abort() / raise(). */
		put(": killed by ");
		put(sigabbrev_np(sig) ? "SIG" : "signal ");
		put(sigabbrev_np(sig) ? sigabbrev_np(sig) : "");
		put(" sent by process ");
		put_uint((unsigned)si->si_pid);
		put("; ");
		put_cleanup();
		set_default(sig);
		raise(sig);
		_exit(128 + sig);
	}
	put(": crashed: ");
	put(crash_name(sig));
	const bool overflow = stack_overflow(sig, si, uc);
	if (overflow && (long)syscall(SYS_gettid) == g_main_tid && g_stack_kib) {
		put(" from a stack overflow (the main thread's stack is limited to ");
		put_uint((unsigned)g_stack_kib);
		put(" KiB: ulimit -s)");
	} else if (overflow) {
		put(" from a stack overflow");
	}
	put_thread();
	put("; ");
	put_cleanup();
	set_default(sig);
	raise(sig); /* SIG_DFL now: dies by the signal (a core dump if enabled) */
	_exit(128 + sig);
}

/* exit() while the guard is up: the case's code ended the process. The
 * first exiting thread takes this handler (registered last, run first)
 * and reports; any other thread calling exit() at the same time (every
 * AICore running the same kernel) takes one of the blockers registered
 * before it and waits there, so it never reaches the process's _exit()
 * with the case's status. */
static void on_exit_guard(int status, void *arg)
{
	(void)arg;
	/* Relaxed: a flag the exiting thread reads; set and cleared by the
	 * main thread around the run. */
	if (!atomic_load_explicit(&g_exit_guard, memory_order_relaxed))
		return;
	if (elect() != ELECTED)
		wait_for_reporter();
	put(g_cmd);
	put(": the run was ended by exit(");
	put_uint((unsigned)status & 0xffu);
	put(")");
	put_thread();
	put(", not by taskprof: the run did not finish; ");
	put_cleanup();
	_exit(1);
}

/* quick_exit() while the guard is up: as on_exit_guard(), but its
 * handlers get no status (the case's own status, 0 or not, must not
 * become taskprof's: a run that did not finish is no success). */
static void on_quick_exit_guard(void)
{
	/* Relaxed: as in on_exit_guard(). */
	if (!atomic_load_explicit(&g_exit_guard, memory_order_relaxed))
		return;
	if (elect() != ELECTED)
		wait_for_reporter();
	put(g_cmd);
	put(": the run was ended by quick_exit()");
	put_thread();
	put(", not by taskprof: the run did not finish; ");
	put_cleanup();
	_exit(1);
}

/* Sanitizer builds leave these signals to the sanitizer (base/sanitizer.h). */
#define TP_CRASH_HANDLERS (!TP_SANITIZED)

/* A thread that exits while the guard is up and is not the reporter. */
static void on_exit_blocker(int status, void *arg)
{
	(void)status;
	(void)arg;
	/* Relaxed: as in on_exit_guard(). */
	if (!atomic_load_explicit(&g_exit_guard, memory_order_relaxed))
		return;
	long me = (long)syscall(SYS_gettid);
	/* Relaxed: the reporter's tid, set by elect(). */
	if (atomic_load_explicit(&g_report_tid, memory_order_relaxed) != me)
		wait_for_reporter();
}

/* on_exit_blocker() for quick_exit(), whose handlers get no arguments. */
static void on_quick_exit_blocker(void)
{
	on_exit_blocker(0, NULL);
}

/* Blockers: more than the threads a device runs (108 AICores and 7 AICPU
 * threads at most, plus the host's). */
#define EXIT_BLOCKERS 160

/* An alternate signal stack for the calling (main) thread, so that the
 * report of a stack overflow there runs (the device threads set their
 * own, platform/device.c). Static: the main thread lives as long as the
 * process. Sanitizer builds: their runtime sets one. */
static void main_altstack(void)
{
	static char stack[64u << 10] __attribute__((aligned(16)));
	static bool done;
	if (done || TP_SANITIZED)
		return;
	stack_t old;
	if (sigaltstack(NULL, &old) == 0 && !(old.ss_flags & SS_DISABLE))
		return; /* one set already (by whoever): keep it */
	stack_t ss = { .ss_sp = stack, .ss_size = sizeof(stack), .ss_flags = 0 };
	done = sigaltstack(&ss, NULL) == 0;
	struct rlimit rl;
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		g_stack_kib = (unsigned long)(rl.rlim_cur >> 10);
	g_main_tid = (long)syscall(SYS_gettid);
}

void cli_crash_install(const char *cmd, bool runs_cases)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	g_cmd = cmd;
	g_runs_cases = runs_cases;
	if (TP_CRASH_HANDLERS)
		main_altstack();
	for (size_t i = 0; TP_CRASH_HANDLERS && i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_crash;
		sigemptyset(&sa.sa_mask);
		/* SA_NODEFER: a fault inside the report re-enters and dies.
		 * SA_ONSTACK: on the thread's alternate stack where it has one
		 * (the device threads: a stack overflow still gets its line). */
		sa.sa_flags = SA_NODEFER | SA_SIGINFO | SA_ONSTACK;
		sigaction(sigs[i], &sa, NULL);
	}
	static bool registered;
	if (!registered) {
		for (int i = 0; i < EXIT_BLOCKERS; i++)
			on_exit(on_exit_blocker, NULL);
		registered = on_exit(on_exit_guard, NULL) == 0;
		/* The same for quick_exit(): a thread that finds the list
		 * empty goes straight to _exit() with the case's status. */
		for (int i = 0; i < EXIT_BLOCKERS; i++)
			(void)at_quick_exit(on_quick_exit_blocker);
		(void)at_quick_exit(on_quick_exit_guard);
	}
}

void cli_exit_guard(bool on)
{
	/* Relaxed: see on_exit_guard(). */
	atomic_store_explicit(&g_exit_guard, on, memory_order_relaxed);
}
