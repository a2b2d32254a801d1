/* SPDX-License-Identifier: MIT */
/*
 * base/clock.h — the simulated device's system counter.
 *
 * Every record timestamp in taskprof is in ticks of the platform's system
 * counter (ARCHITECTURE.md §1): 50 MHz on a2a3, 1 GHz on a5. The counter is
 * derived from CLOCK_MONOTONIC_RAW:
 *
 *     ticks ≈ CLOCK_MONOTONIC_RAW ns × freq / 1e9
 *
 * so tp_sys_cnt() and tp_sys_cnt_from_ns(tp_now_ns()) agree, across threads
 * and processes of the machine.
 *
 * Two sources feed it. On x86-64 with an invariant TSC it reads the TSC and
 * scales it with a multiplier calibrated once (about 20 ms, on first use)
 * against CLOCK_MONOTONIC_RAW; elsewhere, or with TASKPROF_CLOCK=monotonic
 * in the environment, it calls clock_gettime(CLOCK_MONOTONIC_RAW). The
 * calibrated TSC agrees with CLOCK_MONOTONIC_RAW to a few ppm; values are
 * anchored to it at calibration.
 *
 * TASKPROF_CLOCK: "auto" (default), "tsc" (use the TSC even if the CPU does
 * not report it invariant), or "monotonic".
 */
#ifndef TASKPROF_BASE_CLOCK_H
#define TASKPROF_BASE_CLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define TP_SYS_CNT_HAVE_TSC 1
#else
#define TP_SYS_CNT_HAVE_TSC 0
#endif

/* System counter frequencies of the two simulated platforms, in Hz. */
#define TP_SYS_CNT_FREQ_A2A3 50000000ULL
#define TP_SYS_CNT_FREQ_A5 1000000000ULL

/* Highest frequency tp_sys_cnt_set_freq() accepts, in Hz. */
#define TP_SYS_CNT_FREQ_MAX 1000000000000ULL

/**
 * tp_now_ns() - CLOCK_MONOTONIC_RAW now.
 *
 * Return: nanoseconds since an arbitrary start (boot, on Linux); never
 * decreases; not slewed by NTP.
 */
static inline uint64_t tp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/**
 * tp_thread_cpu_ns() - the calling thread's CPU time.
 *
 * CLOCK_THREAD_CPUTIME_ID: a system call (about 0.4 µs on the development
 * VM, against 36 ns for tp_now_ns()), so only for clocks read a few times
 * per simulated kernel: the length of a PMU counting window
 * (platform/pmu_model.c).
 *
 * Return: nanoseconds the thread has run; never decreases on a thread.
 */
static inline uint64_t tp_thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/**
 * tp_sys_cnt_set_freq() - set the system counter frequency.
 * @hz: ticks per second, 1 .. TP_SYS_CNT_FREQ_MAX; usually
 *      TP_SYS_CNT_FREQ_A2A3 or TP_SYS_CNT_FREQ_A5. Other values are
 *      ignored with a WARN line.
 *
 * The whole frequency-dependent state is one 64-bit word stored atomically,
 * so a concurrent tp_sys_cnt() sees either the old or the new scale, never
 * a mix. Values read before and after a change are in different units and
 * cannot be compared (lowering the frequency makes later values smaller):
 * a platform sets its frequency before it starts its device threads.
 */
void tp_sys_cnt_set_freq(uint64_t hz);

/**
 * tp_sys_cnt_freq() - the system counter frequency.
 *
 * Return: ticks per second; TP_SYS_CNT_FREQ_A2A3 until set.
 */
uint64_t tp_sys_cnt_freq(void);

/**
 * tp_sys_cnt_calibrated() - whether tp_sys_cnt() has calibrated already.
 *
 * Return: true once the first read (or tp_sys_cnt_source()) has chosen
 * the source and its scale; a read before that takes about 20 ms.
 */
bool tp_sys_cnt_calibrated(void);

/**
 * tp_sys_cnt_source() - which clock feeds tp_sys_cnt().
 *
 * Calibrates on first use, like tp_sys_cnt().
 *
 * Return: "tsc" or "monotonic" (a static string).
 */
const char *tp_sys_cnt_source(void);

/**
 * tp_sys_cnt_from_ns() - convert nanoseconds to system counter ticks.
 * @ns: nanoseconds (a duration, or a tp_now_ns() value).
 *
 * Return: @ns × freq / 1e9 rounded to nearest, at the current frequency;
 * UINT64_MAX if that does not fit.
 */
uint64_t tp_sys_cnt_from_ns(uint64_t ns);

/**
 * tp_sys_cnt_to_ns() - convert system counter ticks to nanoseconds.
 * @ticks: ticks of the current frequency.
 *
 * Return: @ticks × 1e9 / freq rounded to nearest; UINT64_MAX if that does
 * not fit. For freq <= 1 GHz, tp_sys_cnt_from_ns(tp_sys_cnt_to_ns(t)) == t.
 */
uint64_t tp_sys_cnt_to_ns(uint64_t ticks);

/*
 * Private state of tp_sys_cnt(); use the functions.
 *
 * ticks = ((counter + off) × mult) >> TP_SYS_CNT_SHIFT_, where counter is
 * the TSC (use_tsc) or CLOCK_MONOTONIC_RAW ns. off makes counter + off
 * proportional to CLOCK_MONOTONIC_RAW ns, so that off does not depend on
 * the frequency and mult is the only value tp_sys_cnt_set_freq() changes.
 * off and use_tsc are written once, before the first release store of mult.
 */
/* 44 bits keep mult below 2^64 for a 50 MHz TSC at 1 THz and still give
 * 1e-12 relative precision at 50 MHz. */
#define TP_SYS_CNT_SHIFT_ 44
struct tp_sys_cnt_state_ {
	_Atomic uint64_t mult; /* 0 until calibrated */
	uint64_t off;
	bool use_tsc;
	bool use_rdtscp; /* use_tsc and the CPU has rdtscp (CPUID 0x80000001 EDX 27) */
};
extern struct tp_sys_cnt_state_ tp_sys_cnt_state_;
uint64_t tp_sys_cnt_slow_(void);

/**
 * tp_sys_cnt() - read the system counter.
 *
 * Inline because every profiling record stamps it, several times per task:
 * after the first call the cost is one acquire load (a plain load on
 * x86-64), one rdtsc, one add, one 64×64→128-bit multiply and a shift —
 * about 10 ns — instead of a call into the vDSO. The acquire pairs with the
 * release store of mult at calibration, which publishes off and use_tsc.
 *
 * The first call calibrates (about 20 ms, once per process, thread-safe).
 * rdtsc is not ordered against earlier loads; a stamp may be taken a few
 * nanoseconds early, never out of order with another stamp of the thread.
 *
 * Return: ticks at tp_sys_cnt_freq(); never decreases on a thread, and is
 * consistent across threads to within the TSC synchronisation of the CPUs.
 */
static inline uint64_t tp_sys_cnt(void)
{
	uint64_t mult = atomic_load_explicit(&tp_sys_cnt_state_.mult,
					     memory_order_acquire);
	if (__builtin_expect(mult == 0, 0))
		return tp_sys_cnt_slow_();

	uint64_t counter;
#if TP_SYS_CNT_HAVE_TSC
	if (__builtin_expect(tp_sys_cnt_state_.use_tsc, 1))
		counter = __rdtsc();
	else
#endif
		counter = tp_now_ns();
	counter += tp_sys_cnt_state_.off;
	return (uint64_t)(((unsigned __int128)counter * mult) >>
			  TP_SYS_CNT_SHIFT_);
}

/**
 * tp_sys_cnt_after_loads() - read the system counter once every earlier
 * load of the calling thread has completed.
 *
 * For a stamp that records when a thread observed something another
 * thread stored: a scheduler's FIN (finish time, seed 002 §4: end →
 * finish is the FIN-observation latency) or an AICore's token (receive
 * time, after the AICPU's dispatch stamp). A plain tp_sys_cnt() may run
 * ahead of the load it follows while that load waits for the cache line
 * the other CPU wrote, and so come out earlier than the other thread's
 * stamp taken before its store (finish < end: 21 of 19,884 rows of 12
 * synthetic runs). `rdtscp` reads the counter only once every earlier
 * load is globally visible, and unlike `lfence; rdtsc` it does not hold
 * back the instructions after it (Intel SDM and AMD APM, RDTSCP): the
 * scheduler's work on the finished task goes on while it waits. Without
 * rdtscp, `lfence; rdtsc`; the fallback clock_gettime() is ordered
 * already.
 *
 * Return: as tp_sys_cnt().
 */
static inline uint64_t tp_sys_cnt_after_loads(void)
{
#if TP_SYS_CNT_HAVE_TSC
	uint64_t mult = atomic_load_explicit(&tp_sys_cnt_state_.mult,
					     memory_order_acquire);
	if (__builtin_expect(mult != 0 && tp_sys_cnt_state_.use_rdtscp, 1)) {
		unsigned int aux; /* TSC_AUX, the CPU number: not used */
		uint64_t counter = __rdtscp(&aux) + tp_sys_cnt_state_.off;
		return (uint64_t)(((unsigned __int128)counter * mult) >>
				  TP_SYS_CNT_SHIFT_);
	}
	/* lfence: every earlier load has completed before the rdtsc of
	 * tp_sys_cnt() executes (Intel SDM: lfence does not execute until
	 * all prior instructions have completed locally). */
	_mm_lfence();
#endif
	return tp_sys_cnt();
}

#endif /* TASKPROF_BASE_CLOCK_H */
