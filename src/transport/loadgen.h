/*
 * loadgen.h — synthetic AICPU producers pushing records through the whole
 * transport: the `taskprof transport-demo` job and the transport benchmark.
 *
 * Each producer thread plays one AICPU thread with its own ready queue and
 * `instances_per_producer` instances (cores).  Every record is 64 bytes and
 * carries a system-counter timestamp read at write time, its instance and a
 * per-instance sequence number, so the collector can check that every
 * record arrives exactly once and in order.
 */
#ifndef TP_TRANSPORT_LOADGEN_H
#define TP_TRANSPORT_LOADGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "transport/profiler.h"

/**
 * struct tp_loadgen_record - the 64-byte record the load generator writes.
 */
struct tp_loadgen_record {
	uint64_t seq;       /* per-instance sequence number, from 0 */
	uint32_t instance;
	uint32_t producer;
	uint64_t timestamp; /* tp_sys_cnt() ticks at write time */
	uint64_t payload[5];
};

/**
 * struct tp_loadgen_config - one load (`taskprof transport-demo`
 * options); a 0 field takes the default given beside it.
 */
struct tp_loadgen_config {
	int producers;                 /* AICPU threads, 1..TP_MAX_AICPU_THREADS */
	uint64_t records_per_producer;
	uint32_t instances_per_producer; /* 0 -> 1; at most 4 */
	bool shadow;                   /* a5 host-shadow transport instead of shared mapping */
	uint32_t records_per_buffer;   /* 0 -> 512 */
	uint64_t backstop_cycles;      /* gate backstop, system counter ticks; 0 -> 30 s */
	uint64_t collector_delay_ns;   /* busy delay per delivered buffer (slow collector) */
	/* Called about every 100 ms from the calling thread while producers
	 * run; may be NULL. */
	void (*progress)(void *ud, uint64_t written, uint64_t target);
	void *progress_ud;
};

/**
 * struct tp_loadgen_result - what one load measured; records unless
 * named otherwise.
 */
struct tp_loadgen_result {
	uint64_t total, collected, dropped; /* records, from reconcile */
	uint64_t out_of_order;   /* records that arrived with an unexpected seq */
	double elapsed_s;        /* start of producers to end of prof_stop */
	double producer_ns_per_record; /* mean over producers of wall ns / record */
	/* mean over producers of thread CPU ns / record: the producer's own
	 * cost, without the time the host threads took its core (on real
	 * hardware they run on other CPUs) */
	double producer_cpu_ns_per_record;
	double records_per_s;    /* collected / elapsed_s */
	uint64_t freeze_opened;  /* backpressure freezes opened */
	uint64_t buffers;        /* buffers delivered */
	bool reconcile_ok;
	struct tp_reconcile_pool rec; /* the reconcile figures, drops by cause */
	uint32_t instances;
	uint64_t *per_instance;  /* records delivered per instance (malloc'd; caller frees) */
};

/**
 * tp_loadgen_run() - run one load through the whole transport (seed 004
 * §4 data flow) and reconcile it.
 * @cfg: the load.
 * @out: receives the figures (zeroed first); the caller frees
 *       @out->per_instance (NULL when out of memory).
 *
 * Return: 0 when the run completed (check @out->reconcile_ok, dropped and
 * out_of_order); -EINVAL for producers out of [1, TP_MAX_AICPU_THREADS]
 * or more than 4 instances per producer; -ENOMEM when the pool could not
 * be opened (whatever prof_open() failed with; tp_last_error() says why);
 * the -errno of a failed prof_start(), producer thread start or producer
 * attach (the run then goes on with the producers that started, @out is
 * filled). tp_last_error() says why on every failure.
 */
int tp_loadgen_run(const struct tp_loadgen_config *cfg, struct tp_loadgen_result *out);

#endif
