/* SPDX-License-Identifier: MIT */
/*
 * base/cache.h — cache hints for the record path.
 *
 * __builtin_prefetch(p, 1, ...) asks for a line "for writing", but gcc
 * emits a write prefetch (PREFETCHW) only when the target has it
 * (-mprfchw); for plain x86-64 it emits PREFETCHT0, a read. A line another
 * CPU holds then arrives shared, and the store to it still has to
 * invalidate the other copy: the store waits in the store buffer, and the
 * next fence (a doorbell ring, a locked counter) waits for it. PREFETCHW
 * fetches the line exclusive in advance. x86 CPUs without the instruction
 * decode it as a NOP; other targets get the builtin.
 */
#ifndef TASKPROF_BASE_CACHE_H
#define TASKPROF_BASE_CACHE_H

/**
 * tp_prefetch_w() - a hint that the caller will soon write the cache line
 * holding @p: fetch it exclusive (PREFETCHW on x86-64).
 * @p: any address; never dereferenced, never faults (an invalid or
 *     unmapped address is ignored by the CPU).
 */
static inline void tp_prefetch_w(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

#endif /* TASKPROF_BASE_CACHE_H */
