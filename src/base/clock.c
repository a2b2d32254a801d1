/* SPDX-License-Identifier: MIT */
#include "base/clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if TP_SYS_CNT_HAVE_TSC
#include <cpuid.h>
#endif

#include "base/error.h"
#include "base/file.h"
#include "base/log.h"

#define NS_PER_SEC 1000000000ULL
#define CALIBRATE_NS 20000000ULL     /* 20 ms */
#define CALIBRATE_SAMPLES 16
/* Plausible TSC rates; outside them the calibration is not trusted. */
#define TSC_HZ_MIN 50000000ULL
#define TSC_HZ_MAX 50000000000ULL

struct tp_sys_cnt_state_ tp_sys_cnt_state_;

static _Atomic uint64_t sys_cnt_freq = TP_SYS_CNT_FREQ_A2A3;

/* Everything below is written under init_lock, and only there. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool calibrated;
/* Counter units (TSC cycles, or ns) → ns, scaled by 2^TP_SYS_CNT_SHIFT_. */
static uint64_t ns_mult;

/* Counter units → ticks at @hz. Never 0, which marks "not calibrated";
 * with the limits on TSC rate and @hz it never saturates either. */
static uint64_t tick_mult(uint64_t hz)
{
	unsigned __int128 m = (unsigned __int128)ns_mult * hz / NS_PER_SEC;
	if (m == 0)
		return 1;
	return m > UINT64_MAX ? UINT64_MAX : (uint64_t)m;
}

#if TP_SYS_CNT_HAVE_TSC
static bool cpuinfo_has_flags(const char *a, const char *b)
{
	char *text = NULL;
	if (tp_read_file("/proc/cpuinfo", &text, NULL) != 0)
		return false;
	bool has_a = false, has_b = false;
	char *line = strstr(text, "\nflags");
	if (line) {
		char *end = strchr(line + 1, '\n');
		if (end)
			*end = '\0';
		char *colon = strchr(line, ':');
		char *save = NULL;
		for (char *tok = colon ? strtok_r(colon + 1, " \t", &save) : NULL;
		     tok; tok = strtok_r(NULL, " \t", &save)) {
			has_a |= strcmp(tok, a) == 0;
			has_b |= strcmp(tok, b) == 0;
		}
	}
	free(text);
	return has_a && has_b;
}

/* Invariant TSC: CPUID 0x80000007 EDX bit 8, or the kernel's flags (some
 * hypervisors hide the CPUID bit but the kernel knows better). */
static bool tsc_is_invariant(void)
{
	unsigned int eax, ebx, ecx, edx;
	/* The cast: clang's <cpuid.h> returns int, gcc's unsigned int. */
	if ((unsigned int)__get_cpuid_max(0x80000000, NULL) >= 0x80000007u &&
	    __get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) &&
	    (edx & (1u << 8)))
		return true;
	return cpuinfo_has_flags("constant_tsc", "nonstop_tsc");
}

/* One (TSC, ns) pair: the read of CLOCK_MONOTONIC_RAW bracketed by two
 * rdtsc, keeping the tightest bracket of several so that an interrupt or a
 * preemption between the reads does not skew the pair. */
static void tsc_sample(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < CALIBRATE_SAMPLES; i++) {
		uint64_t a = __rdtsc();
		uint64_t n = tp_now_ns();
		uint64_t b = __rdtsc();
		if (b > a && b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = n;
		}
	}
}

/* Calibrate the TSC against CLOCK_MONOTONIC_RAW; false if untrustworthy. */
static bool tsc_calibrate(void)
{
	uint64_t t0 = 0, n0 = 0, t1 = 0, n1 = 0;
	tsc_sample(&t0, &n0);
	struct timespec nap = { 0, (long)CALIBRATE_NS };
	while (nanosleep(&nap, &nap) != 0)
		;
	tsc_sample(&t1, &n1);
	if (t1 <= t0 || n1 <= n0) {
		TP_DEBUG("clock: TSC calibration got no progress");
		return false;
	}

	uint64_t dt = t1 - t0, dn = n1 - n0;
	uint64_t hz = (uint64_t)((unsigned __int128)dt * NS_PER_SEC / dn);
	if (hz < TSC_HZ_MIN || hz > TSC_HZ_MAX) {
		TP_DEBUG("clock: TSC calibrated at %llu Hz, not plausible",
			 (unsigned long long)hz);
		return false;
	}
	ns_mult = (uint64_t)(((unsigned __int128)dn << TP_SYS_CNT_SHIFT_) / dt);
	/* Anchor at the last sample: (t1 + off) × ns_mult >> SHIFT == n1. */
	uint64_t scaled = (uint64_t)(((unsigned __int128)n1 << TP_SYS_CNT_SHIFT_)
				     / ns_mult);
	tp_sys_cnt_state_.off = scaled - t1;  /* mod 2^64 on purpose */
	tp_sys_cnt_state_.use_tsc = true;
	unsigned int eax, ebx, ecx, edx;
	tp_sys_cnt_state_.use_rdtscp =
		(unsigned int)__get_cpuid_max(0x80000000, NULL) >= 0x80000001u &&
		__get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) && (edx & (1u << 27));
	TP_DEBUG("clock: TSC at %llu Hz, calibrated over %llu ns",
		 (unsigned long long)hz, (unsigned long long)dn);
	return true;
}
#endif /* TP_SYS_CNT_HAVE_TSC */

static void choose_source(void)
{
	const char *env = getenv("TASKPROF_CLOCK");
	bool want_tsc = true, force_tsc = false;

	if (env && *env) {
		if (strcasecmp(env, "monotonic") == 0)
			want_tsc = false;
		else if (strcasecmp(env, "tsc") == 0)
			force_tsc = true;
		else if (strcasecmp(env, "auto") != 0)
			TP_WARN("TASKPROF_CLOCK='%s' is not a clock (expected "
				"auto, tsc or monotonic); using auto", tp_shown(env));
	}

	tp_sys_cnt_state_.use_tsc = false;
	tp_sys_cnt_state_.use_rdtscp = false;
	tp_sys_cnt_state_.off = 0;
	ns_mult = 1ULL << TP_SYS_CNT_SHIFT_;   /* monotonic: ns → ns */

#if TP_SYS_CNT_HAVE_TSC
	if (want_tsc) {
		bool invariant = tsc_is_invariant();
		if (!invariant && force_tsc)
			TP_WARN("TASKPROF_CLOCK=tsc: this CPU does not report an "
				"invariant TSC; timestamps may drift");
		if ((invariant || force_tsc) && tsc_calibrate())
			return;
		if (force_tsc)
			TP_WARN("TASKPROF_CLOCK=tsc: calibration failed; using "
				"CLOCK_MONOTONIC_RAW");
		tp_sys_cnt_state_.use_tsc = false;
		tp_sys_cnt_state_.use_rdtscp = false;
		tp_sys_cnt_state_.off = 0;
		ns_mult = 1ULL << TP_SYS_CNT_SHIFT_;
	}
#else
	if (force_tsc)
		TP_WARN("TASKPROF_CLOCK=tsc: no TSC on this architecture; using "
			"CLOCK_MONOTONIC_RAW");
#endif
}

uint64_t tp_sys_cnt_slow_(void)
{
	pthread_mutex_lock(&init_lock);
	if (!calibrated) {
		choose_source();
		calibrated = true;
		uint64_t hz = atomic_load_explicit(&sys_cnt_freq,
						   memory_order_relaxed);
		/* Release: publishes off and use_tsc to tp_sys_cnt(). */
		atomic_store_explicit(&tp_sys_cnt_state_.mult, tick_mult(hz),
				      memory_order_release);
	}
	pthread_mutex_unlock(&init_lock);
	/* Not a call to tp_sys_cnt(): mult is non-zero now, and the fast path
	 * must never be able to recurse into here.  acquire: as in
	 * tp_sys_cnt(), pairs with the release stores of mult (above, and in
	 * tp_sys_cnt_set_freq on another thread), so off and use_tsc below are
	 * calibration's. */
	uint64_t mult = atomic_load_explicit(&tp_sys_cnt_state_.mult,
					     memory_order_acquire);
	uint64_t counter;
#if TP_SYS_CNT_HAVE_TSC
	if (tp_sys_cnt_state_.use_tsc)
		counter = __rdtsc();
	else
#endif
		counter = tp_now_ns();
	counter += tp_sys_cnt_state_.off;
	return (uint64_t)(((unsigned __int128)counter * mult) >>
			  TP_SYS_CNT_SHIFT_);
}

void tp_sys_cnt_set_freq(uint64_t hz)
{
	if (hz == 0 || hz > TP_SYS_CNT_FREQ_MAX) {
		TP_WARN("tp_sys_cnt_set_freq: %llu Hz out of range 1..%llu; "
			"keeping %llu Hz", (unsigned long long)hz,
			(unsigned long long)TP_SYS_CNT_FREQ_MAX,
			(unsigned long long)tp_sys_cnt_freq());
		return;
	}
	pthread_mutex_lock(&init_lock);
	atomic_store_explicit(&sys_cnt_freq, hz, memory_order_relaxed);
	/* release: as at calibration (tp_sys_cnt_slow_), pairs with the
	 * acquire loads of mult in tp_sys_cnt(): a reader of the new mult
	 * still sees off and use_tsc. */
	if (calibrated)
		atomic_store_explicit(&tp_sys_cnt_state_.mult, tick_mult(hz),
				      memory_order_release);
	pthread_mutex_unlock(&init_lock);
}

uint64_t tp_sys_cnt_freq(void)
{
	return atomic_load_explicit(&sys_cnt_freq, memory_order_relaxed);
}

bool tp_sys_cnt_calibrated(void)
{
	/* acquire: as in tp_sys_cnt(); mult is non-zero once calibrated. */
	return atomic_load_explicit(&tp_sys_cnt_state_.mult, memory_order_acquire) != 0;
}

const char *tp_sys_cnt_source(void)
{
	/* acquire: as in tp_sys_cnt(); a non-zero mult publishes use_tsc. */
	if (atomic_load_explicit(&tp_sys_cnt_state_.mult,
				 memory_order_acquire) == 0)
		(void)tp_sys_cnt_slow_();
	return tp_sys_cnt_state_.use_tsc ? "tsc" : "monotonic";
}

static uint64_t mul_div_round(uint64_t a, uint64_t b, uint64_t d)
{
	unsigned __int128 q = ((unsigned __int128)a * b + d / 2) / d;
	return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

uint64_t tp_sys_cnt_from_ns(uint64_t ns)
{
	return mul_div_round(ns, tp_sys_cnt_freq(), NS_PER_SEC);
}

uint64_t tp_sys_cnt_to_ns(uint64_t ticks)
{
	return mul_div_round(ticks, NS_PER_SEC, tp_sys_cnt_freq());
}
