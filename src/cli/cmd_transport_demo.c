/*
 * cmd_transport_demo.c — `taskprof transport-demo`: producer threads playing
 * AICPU threads push 64-byte records through the full profiling transport
 * (seed 004) and the run prints its reconcile line and throughput.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/args.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/tmp_registry.h"
#include "base/file.h"
#include "base/log.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "transport/loadgen.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: taskprof transport-demo [options]\n\n"
		"Producer threads (one per simulated AICPU thread) write 64-byte records,\n"
		"each with a system-counter timestamp, through the profiling transport:\n"
		"device buffers, ready and free queues, drain / replenish / collector\n"
		"threads.  Prints the reconcile line (collected + dropped == total) and\n"
		"the throughput, and writes OUTPUT_ROOT/transport_demo_<YYYYMMDD_HHMMSS>/\n"
		"with instances.csv (records delivered per instance) and summary.txt\n"
		"(the run's options and figures, drops by cause: the device's and the\n"
		"host's).\n\n"
		"options:\n"
		"  -p, --platform NAME     a2a3sim (shared mapping, 50 MHz, <= 4 AICPU threads)\n"
		"                          or a5sim (host shadow, 1 GHz, <= 7); default:\n"
		"                          TASKPROF_PLATFORM if set, else a2a3sim\n"
		"  -t, --producers N       producer (AICPU) threads, 1 to the platform's\n"
		"                          AICPU threads (4 on a2a3sim, 7 on a5sim);\n"
		"                          default 4\n"
		"  -n, --records N         records per producer; default 2000000\n"
		"      --instances N       instances (cores) per producer, 1..4; default 2\n"
		"      --slow-collector NS busy delay per delivered buffer, 0..10000000 ns:\n"
		"                          the producers then wait for the host (longer\n"
		"                          backpressure parks, not necessarily more; higher\n"
		"                          ns per record) and still nothing is dropped;\n"
		"                          default 0\n"
		"  -o, --output DIR        output root; default ./taskprof_output\n"
		"  -h, --help              this text\n\n"
		"exit status: 0 reconciled, 1 failed run, reconcile mismatch, records out\n"
		"of order or stdout not written ('writing stdout: <reason>': the outputs are\n"
		"still written), 2 bad usage (an -o/--output that cannot be a folder\n"
		"included)\n");
}

/* @why (may be NULL): where the range comes from, printed after it. */
static int parse_u64_why(const char *opt, const char *s, uint64_t lo, uint64_t hi,
			 const char *why, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr,
			"taskprof transport-demo: %s expects an integer from %" PRIu64 " to %" PRIu64
			"%s%s%s, got '%s'\n",
			opt, lo, hi, why ? " (" : "", why ? why : "", why ? ")" : "", tp_shown(s));
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	return parse_u64_why(opt, s, lo, hi, NULL, out);
}

static void progress(void *ud, uint64_t written, uint64_t target)
{
	(void)ud;
	if (!isatty(STDERR_FILENO) || target == 0)
		return;
	fprintf(stderr, "\r  producing: %5.1f%% of %" PRIu64 " records", 100.0 * written / target,
		target);
}

/* A run that fails before writing its outputs leaves no empty folder
 * behind, as `taskprof run` (rmdir removes only an empty one). */
/* -o's folders this run made (tp_mkdir_missing_len() of the root before
 * tp_mkdir_p(); 0: it existed), removed with the run folder on a failure. */
static char g_root[PATH_MAX];
static size_t g_root_made;

static void remove_empty_dir(const char *dir)
{
	if (rmdir(dir) != 0 && errno != ENOTEMPTY && errno != EEXIST)
		fprintf(stderr, "taskprof transport-demo: cannot remove the empty output folder "
				"%s: %s\n", tp_shown(dir), strerror(errno));
	else if (g_root_made)
		(void)tp_rmdir_made(g_root, g_root_made); /* only while empty */
}

static int write_outputs(const char *dir, const struct tp_loadgen_config *cfg,
			 const struct tp_loadgen_result *r, const char *platform)
{
	char path[PATH_MAX + 32];
	struct tp_file_tx tx;
	snprintf(path, sizeof(path), "%s/instances.csv", dir);
	int rc = tp_file_tx_begin(&tx, path, NULL);
	if (rc)
		return rc;
	fprintf(tx.fp, "instance,producer,records_delivered\n");
	for (uint32_t i = 0; i < r->instances; i++)
		fprintf(tx.fp, "%u,%u,%" PRIu64 "\n", i, i / cfg->instances_per_producer,
			r->per_instance ? r->per_instance[i] : 0);
	if ((rc = tp_file_tx_commit(&tx)))
		return rc;
	char csv[PATH_MAX + 32];
	snprintf(csv, sizeof(csv), "%s", path);
	snprintf(path, sizeof(path), "%s/summary.txt", dir);
	if ((rc = tp_file_tx_begin(&tx, path, NULL))) {
		unlink(csv); /* all or nothing: the caller then removes the folder */
		return rc;
	}
	fprintf(tx.fp,
		"platform %s\nproducers %d\nrecords_per_producer %" PRIu64
		"\ninstances_per_producer %u\nslow_collector_ns %" PRIu64 "\nclock_freq_hz %" PRIu64 "\n"
		"total %" PRIu64 "\ncollected %" PRIu64 "\ndropped %" PRIu64
		"\nout_of_order %" PRIu64 "\nreconcile %s\nelapsed_s %.6f\nrecords_per_s %.4g\n"
		"producer_ns_per_record %.2f\nproducer_cpu_ns_per_record %.2f\nbuffers %" PRIu64
		"\nbackpressure_parks %" PRIu64 "\ndropped_no_buffer %" PRIu64
		"\ndropped_ready_full %" PRIu64 "\ndropped_flush_failed %" PRIu64
		"\ndropped_invalid %" PRIu64 "\nhost_lost_bad_entry %" PRIu64
		"\nhost_lost_unmapped %" PRIu64 "\nhost_lost_copy_failed %" PRIu64
		"\nhost_lost_shard_full %" PRIu64 "\nhost_lost_collector %" PRIu64 "\n",
		platform, cfg->producers, cfg->records_per_producer, cfg->instances_per_producer,
		cfg->collector_delay_ns, tp_sys_cnt_freq(), r->total, r->collected, r->dropped, r->out_of_order,
		r->reconcile_ok ? "ok" : "MISMATCH", r->elapsed_s, r->records_per_s,
		r->producer_ns_per_record, r->producer_cpu_ns_per_record, r->buffers, r->freeze_opened,
		r->rec.dropped_by_cause[TP_DROP_NO_BUFFER], r->rec.dropped_by_cause[TP_DROP_READY_FULL],
		r->rec.dropped_by_cause[TP_DROP_FLUSH_FAILED], r->rec.dropped_by_cause[TP_DROP_INVALID],
		r->rec.host_lost_by_cause[TP_HOST_LOST_BAD_ENTRY],
		r->rec.host_lost_by_cause[TP_HOST_LOST_UNMAPPED],
		r->rec.host_lost_by_cause[TP_HOST_LOST_COPY_FAILED],
		r->rec.host_lost_by_cause[TP_HOST_LOST_SHARD_FULL],
		r->rec.host_lost_by_cause[TP_HOST_LOST_COLLECTOR]);
	rc = tp_file_tx_commit(&tx);
	if (rc)
		unlink(csv); /* all or nothing, as above */
	return rc;
}

int cmd_transport_demo(int argc, char **argv)
{
	static const struct option opts[] = {
		{"platform", required_argument, NULL, 'p'},
		{"producers", required_argument, NULL, 't'},
		{"records", required_argument, NULL, 'n'},
		{"instances", required_argument, NULL, 'i'},
		{"slow-collector", required_argument, NULL, 's'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	const char *platform = NULL, *out_root = "taskprof_output";
	const char *producers_arg = NULL; /* checked once the platform is known */
	bool out_given = false; /* -o named the output root */
	uint64_t producers = 4, records = 2000000, instances = 2, slow = 0;
	int c;
	optind = 1;
	opterr = 0; /* our own messages, with the command's prefix */
	while ((c = getopt_long(argc, argv, "p:t:n:o:h", opts, NULL)) != -1) {
		int rc = 0;
		optarg = tp_arg_short_eq(optarg, argc, argv); /* -o=DIR: DIR */
		switch (c) {
		case 'p':
			platform = optarg;
			break;
		case 't':
			producers_arg = optarg;
			break;
		case 'n':
			rc = parse_u64("--records", optarg, 1, UINT64_C(1000000000000), &records);
			break;
		case 'i':
			rc = parse_u64("--instances", optarg, 1, 4, &instances);
			break;
		case 's':
			rc = parse_u64("--slow-collector", optarg, 0, 10000000, &slow);
			break;
		case 'o':
			if (strlen(optarg) > PATH_MAX - 64) {
				fprintf(stderr, "taskprof transport-demo: -o/--output path is too long "
						"(%zu bytes, at most %d)\n",
					strlen(optarg), PATH_MAX - 64);
				return 2;
			}
			if (!*optarg) {
				fprintf(stderr, "taskprof transport-demo: -o/--output expects a folder, "
						"got an empty string\n");
				return 2;
			}
			out_root = optarg;
			out_given = true;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			fprintf(stderr,
				"taskprof transport-demo: unknown option or missing value: '%s' "
				"(see taskprof transport-demo --help)\n",
				tp_shown(argv[optind - 1]));
			return 2;
		}
		if (rc)
			return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "taskprof transport-demo: unexpected argument '%s'\n",
			tp_shown(argv[optind]));
		return 2;
	}
	if (!platform) {
		if (cli_platform_env("transport-demo", &platform))
			return 2;
		if (!platform)
			platform = "a2a3sim";
	}
	bool a5 = !strcmp(platform, "a5sim");
	if (!a5 && strcmp(platform, "a2a3sim")) {
		fprintf(stderr,
			"taskprof transport-demo: --platform expects a2a3sim or a5sim, got '%s'\n",
			tp_shown(platform));
		return 2;
	}
	/* The platform's AICPU threads bound the producers, whatever order
	 * -t and -p came in. */
	uint64_t max_threads = a5 ? 7 : 4;
	char why[64];
	snprintf(why, sizeof(why), "the AICPU threads of %s", platform);
	if (producers_arg &&
	    parse_u64_why("--producers", producers_arg, 1, max_threads, why, &producers))
		return 2;
	tp_sys_cnt_set_freq(a5 ? TP_SYS_CNT_FREQ_A5 : TP_SYS_CNT_FREQ_A2A3);

	char stamp[32], dir[PATH_MAX];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &tm);
	/* An output root that cannot be a folder (a file, or a link to
	 * nothing, in the way) is bad usage, as for `taskprof run`. */
	if (tp_dir_blocked(out_root)) {
		fprintf(stderr, "taskprof transport-demo: %s: %s\n",
			out_given ? "-o/--output" : "the default output root (-o chooses another)",
			tp_last_error());
		return 2;
	}
	/* The folder is the uniqueness boundary: a second run in the same
	 * second gets a _2, _3, ... suffix instead of overwriting. -o's
	 * folders it makes are published for an interrupt, which removes them
	 * after the empty run folder; removed by another run (as folders it
	 * made) before the run folder is in them, they are made again. */
	char name[64];
	snprintf(name, sizeof(name), "transport_demo_%s", stamp);
	int rc = tp_mkdir_fresh(out_root, name, dir, sizeof(dir), &g_root_made);
	if (g_root_made) /* set only for a root shorter than PATH_MAX */
		snprintf(g_root, sizeof(g_root), "%s", out_root);
	if (rc) {
		if (rc == -EEXIST)
			fprintf(stderr, "taskprof transport-demo: no free output folder name under "
					"%s\n", tp_shown(out_root));
		else
			fprintf(stderr, "taskprof transport-demo: %s\n", tp_last_error());
		if (g_root_made)
			(void)tp_rmdir_made(g_root, g_root_made);
		return 1;
	}
	/* SIGINT / SIGTERM / SIGHUP: one line, the temporary files and the
	 * folder if still empty removed, death by the signal (as `run`). */
	tp_tmpreg_set_dir(dir);
	cli_interrupt_install("taskprof transport-demo");

	struct tp_loadgen_config cfg = {
		.producers = (int)producers,
		.records_per_producer = records,
		.instances_per_producer = (uint32_t)instances,
		.shadow = a5,
		.collector_delay_ns = slow,
		.progress = progress,
	};
	printf("taskprof transport-demo: %s (%s transport, system counter %g MHz), %" PRIu64
	       " producer%s x %" PRIu64 " records, %" PRIu64 " instance%s (core%s) each\n",
	       platform, a5 ? "host-shadow" : "shared-mapping", tp_sys_cnt_freq() / 1e6, producers,
	       producers == 1 ? "" : "s", records, instances, instances == 1 ? "" : "s",
	       instances == 1 ? "" : "s");
	fflush(stdout);
	struct tp_loadgen_result r;
	rc = tp_loadgen_run(&cfg, &r);
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r%60s\r", "");
	if (rc) {
		fprintf(stderr, "taskprof transport-demo: %s%s\n", tp_last_error(),
			rc == -ENOMEM ? tp_mem_limit_note() : "");
		free(r.per_instance);
		remove_empty_dir(dir);
		return 1;
	}
	printf("reconcile: collected=%" PRIu64 " + dropped=%" PRIu64 " %s total=%" PRIu64 "  %s\n",
	       r.collected, r.dropped, r.reconcile_ok ? "==" : "!=", r.total,
	       r.reconcile_ok ? "OK" : "MISMATCH");
	printf("throughput: %.3g records/s delivered in %.3g s; per producer %.1f ns per record "
	       "(wall), %.1f ns (its own CPU time)\n",
	       r.records_per_s, r.elapsed_s, r.producer_ns_per_record, r.producer_cpu_ns_per_record);
	printf("transport: %" PRIu64 " buffers delivered, %" PRIu64 " backpressure park%s, %" PRIu64
	       " records out of order\n",
	       r.buffers, r.freeze_opened, r.freeze_opened == 1 ? "" : "s", r.out_of_order);
	rc = write_outputs(dir, &cfg, &r, platform);
	free(r.per_instance);
	if (rc) {
		fprintf(stderr, "taskprof transport-demo: cannot write outputs: %s\n",
			tp_last_error());
		remove_empty_dir(dir);
		return 1;
	}
	printf("outputs: %s/instances.csv\n         %s/summary.txt\n", tp_shown(dir),
	       tp_shown(dir));
	/* The outputs are written; lost result lines still fail the run
	 * (SIGPIPE is ignored, main.c: a reader that went away is EPIPE). */
	int err = -tp_stream_flush(stdout);
	if (err) {
		fprintf(stderr, "taskprof transport-demo: writing stdout: %s\n", strerror(err));
		return 1;
	}
	return r.reconcile_ok && r.out_of_order == 0 ? 0 : 1;
}
