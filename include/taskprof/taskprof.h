/* SPDX-License-Identifier: MIT */
/*
 * taskprof.h — the public entry header of taskprof.
 *
 * Error convention (ARCHITECTURE.md §4), used by every public function:
 *
 *   - Functions that do something return 0 on success or a negative
 *     errno-style code on failure (-EINVAL, -ENOMEM, -ENOSPC, ...).
 *   - Constructors (`*_open`, `*_new`) return a pointer, or NULL on failure.
 *   - In both cases a failure also leaves a human-readable message naming
 *     the file, the place and what was expected; read it with
 *     tp_last_error() on the same thread, right after the failing call.
 */
#ifndef TASKPROF_TASKPROF_H
#define TASKPROF_TASKPROF_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * tp_last_error() - message of the calling thread's last taskprof failure.
 *
 * Return: a NUL-terminated string owned by taskprof, valid until the calling
 * thread's next taskprof call; "" when no failure was recorded since the
 * thread started or since it last cleared the message. Never NULL; never
 * fails. Messages longer than 511 bytes are truncated.
 */
const char *tp_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TASKPROF_TASKPROF_H */
