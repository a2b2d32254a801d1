/* SPDX-License-Identifier: MIT */
/*
 * worker_pmu_helpers.h — what the PMU Worker tests share (header-only):
 * test_worker_pmu.c, test_worker_pmu_retained.c and
 * test_worker_pmu_stall.c (its own binary: it leaks a device thread on
 * purpose).
 *
 * - g_root: the scratch output root of the current test;
 *   wp_setup_root() / wp_teardown_root() make and remove it, and clear the
 *   PMU event-type variables a caller's environment may hold.
 * - wp_run_pa(): paged_attention CaseSmall1 on an open Worker.
 * - wp_csv_exists(): whether a run left a regular pmu.csv.
 * - struct wp_logbuf / wp_log_errors(): a tp_log hook that keeps the lines
 *   at ERROR and above.
 */
#ifndef TASKPROF_TESTS_WORKER_PMU_HELPERS_H
#define TASKPROF_TESTS_WORKER_PMU_HELPERS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "base/log.h"
#include "platform/pmu_events.h"
#include "taskprof/worker.h"
#include "unit_helpers.h"

static char *g_root;

/* cmocka fixtures. Make g_root; the PMU event type comes from the tests'
 * configs only. */
static inline int wp_setup_root(void **state)
{
	(void)state;
	unsetenv(TP_PMU_ENV_EVENT_TYPE);
	unsetenv(TP_PMU_ENV_EVENT_TYPE_ALIAS);
	g_root = uh_mkdtemp();
	return g_root ? 0 : -1;
}

static inline int wp_teardown_root(void **state)
{
	(void)state;
	uh_rm_rf(g_root);
	g_root = NULL;
	return 0;
}

/* paged_attention CaseSmall1 on @w; tp_worker_run()'s return. */
static inline int wp_run_pa(struct tp_worker *w, struct tp_run_result *r)
{
	return tp_worker_run(w, tp_callable_find("paged_attention"), "CaseSmall1", r);
}

/* Whether @r's output folder holds a regular file pmu.csv. */
static inline bool wp_csv_exists(const struct tp_run_result *r)
{
	char p[4300];
	struct stat st;
	snprintf(p, sizeof(p), "%s/pmu.csv", r->output_dir);
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Log lines at ERROR and above, one per line, cut at the buffer's end. */
struct wp_logbuf {
	char text[16384];
	size_t len;
};

/* A tp_log hook: @ud is a struct wp_logbuf. */
static inline void wp_log_errors(int level, const char *msg, void *ud)
{
	struct wp_logbuf *b = ud;
	if (level < TP_LOG_ERROR)
		return;
	int k = snprintf(b->text + b->len, sizeof(b->text) - b->len, "%s\n", msg);
	if (k > 0)
		b->len = b->len + (size_t)k < sizeof(b->text) ? b->len + (size_t)k
							      : sizeof(b->text) - 1;
}

#endif
