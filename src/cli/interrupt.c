/* SPDX-License-Identifier: MIT */
#include "cli/interrupt.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

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
	int removed = tp_tmpreg_unlink_all();
	const char *dir = tp_tmpreg_claim_dir();
	bool dir_gone = dir && rmdir(dir) == 0;

	put(g_cmd);
	put(": interrupted by ");
	put(sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM");
	put(": removed ");
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
