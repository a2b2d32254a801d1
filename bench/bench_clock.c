/* SPDX-License-Identifier: MIT */
/*
 * bench_clock — cost of one system counter read.
 *
 * tp_sys_cnt() stamps every profiling record, so its cost is part of the
 * per-record overhead taskprof promises. Prints, for 10 M back-to-back
 * reads each:
 *
 *   BENCH clock source=<tsc|monotonic> ns_per_read=<x>
 *   BENCH clock_gettime ns_per_read=<y>      (CLOCK_MONOTONIC_RAW, reference)
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "base/clock.h"
#include "bench_help.h"

#define USAGE \
	"usage: bench_clock\n\nCost of one system counter read (tp_sys_cnt(), which stamps every record)\nand of clock_gettime for comparison, 10 M reads each:\n  BENCH clock source=<tsc|monotonic> ns_per_read=<x>\n  BENCH clock_gettime ns_per_read=<y>\n"

#define READS 10000000

int main(int argc, char **argv)
{
	bench_help(argc, argv, USAGE);
	tp_sys_cnt_set_freq(TP_SYS_CNT_FREQ_A5);
	(void)tp_sys_cnt();  /* calibrate outside the timed loop */

	/* Sum the values so the reads cannot be optimised away. */
	volatile uint64_t sink = 0;
	uint64_t acc = 0;

	uint64_t t0 = tp_now_ns();
	for (int i = 0; i < READS; i++)
		acc += tp_sys_cnt();
	uint64_t t1 = tp_now_ns();
	sink = acc;

	acc = 0;
	struct timespec ts;
	uint64_t t2 = tp_now_ns();
	for (int i = 0; i < READS; i++) {
		clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
		acc += (uint64_t)ts.tv_nsec;
	}
	uint64_t t3 = tp_now_ns();
	sink += acc;
	(void)sink;

	printf("BENCH clock source=%s ns_per_read=%.2f\n", tp_sys_cnt_source(),
	       (double)(t1 - t0) / READS);
	printf("BENCH clock_gettime ns_per_read=%.2f\n",
	       (double)(t3 - t2) / READS);
	return 0;
}
