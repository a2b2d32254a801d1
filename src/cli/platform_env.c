/* SPDX-License-Identifier: MIT */
/*
 * cli/platform_env.c — TASKPROF_PLATFORM, the platform of every command
 * that runs the simulated device when the command line names none.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "cli/commands.h"
#include "platform/platform.h"

int cli_platform_env(const char *cmd, const char **name)
{
	*name = NULL;
	const char *v = getenv("TASKPROF_PLATFORM");
	if (!v || !*v)
		return 0;
	const struct tp_platform *p = tp_platform_find(v);
	if (!p) {
		fprintf(stderr, "taskprof %s: TASKPROF_PLATFORM expects a2a3sim or a5sim (or "
				"unset), got '%s'\n", cmd, tp_shown(v));
		return 2;
	}
	*name = p->name;
	return 0;
}
