/* SPDX-License-Identifier: MIT */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"

static _Thread_local char tp_error_msg[TP_ERROR_MSG_MAX];

int tp_set_error(int err, const char *fmt, ...)
{
	/* Format into scratch first: the arguments may point at tp_error_msg
	 * itself (a caller wrapping tp_last_error() with context), and
	 * vsnprintf with overlapping source and destination is undefined. */
	char scratch[TP_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(scratch, sizeof(scratch), fmt, ap);
	va_end(ap);
	if (n < 0)
		snprintf(scratch, sizeof(scratch), "(unformattable error message)");

	memcpy(tp_error_msg, scratch, strlen(scratch) + 1);
	TP_DEBUG("error %d: %s", err, tp_error_msg);
	return err;
}

const char *tp_last_error(void)
{
	return tp_error_msg;
}

void tp_clear_error(void)
{
	tp_error_msg[0] = '\0';
}
