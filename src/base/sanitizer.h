/* SPDX-License-Identifier: MIT */
/*
 * base/sanitizer.h — TP_SANITIZED: 1 in an AddressSanitizer or
 * ThreadSanitizer build (GCC's __SANITIZE_*__ or clang's __has_feature),
 * else 0. Such builds leave fatal signals and alternate signal stacks to
 * the sanitizer, whose report (a stack of the fault) is worth more than
 * taskprof's one line (cli/interrupt.h, platform/device.c).
 */
#ifndef TASKPROF_BASE_SANITIZER_H
#define TASKPROF_BASE_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TP_SANITIZED 1
#endif
#endif
#ifndef TP_SANITIZED
#define TP_SANITIZED 0
#endif

#endif
