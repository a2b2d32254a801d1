/* SPDX-License-Identifier: MIT */
/*
 * collectors/pmu/pmu_host.c — the host half (pmu_host.h): the pool's
 * module, shard-local temp CSVs, reconcile, export.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "base/log.h"
#include "base/tmp_registry.h"
#include "collectors/pmu/pmu_host.h"
#include "collectors/pmu/pmu_internal.h"
#include "platform/device.h"
#include "transport/profiler.h"

#define PMU_MAX_CORES_A2A3 72
#define PMU_MAX_CORES_A5 108

/* One buffer's rows in a shard file. */
struct pmu_span {
	uint32_t thread, core, seq, len; /* len: bytes */
	uint64_t off;                    /* byte offset in the shard file */
	int shard;
};

/* Owned by collector shard i while the run executes, by the caller after
 * pmu_stop (the join orders the two). Padded so shards never share a line. */
struct pmu_shard {
	alignas(64) FILE *fp;
	uint64_t rows;  /* rows written successfully */
	uint64_t bytes; /* bytes written so far */
	struct pmu_span *span;
	size_t n, cap;
	bool opened;    /* a file exists on disk */
	int tmpreg;     /* its base/tmp_registry.h handle while it is a .tmp */
	bool io_failed; /* sticky: any open / write / flush / close failure */
	int io_errno;   /* the first failure's errno (0: none or unknown) */
	const char *io_what; /* its step: "open", "write", "close" */
};

struct pmu_collector {
	struct pmu_config cfg;
	char *prefix;
	char *csv_path;
	const struct tp_pmu_event_group *group; /* frozen columns */
	char header[1024];
	int header_len;
	int max_threads;
	pid_t pid;
	struct tp_memops ops;
	struct tp_profiler *p;
	struct pmu_dev dev;
	struct pmu_shard *shards; /* num_threads (= live shards) */
	bool started, stopped, exported, preserved;
	int n_preserved; /* shard files renamed to *.failed.tmp by preserve_shards() */
	/* pmu_export failed after the shard output was fine (opening,
	 * writing or renaming pmu.csv): spec §2.4 / §5 count 0 collected. */
	bool merge_failed;
	char merge_why[1024];
	uint64_t exported_rows;
	uint64_t seeded_bytes, cap_bytes; /* pool bytes seeded (at start), ceiling */
	_Atomic bool test_hold;           /* pmu_test_hold_collect */
	struct pmu_core_note *host_notes; /* host view, valid after reconcile */
};

static int pmu_batch(int kind)
{
	(void)kind;
	/* max(1, BUFFERS_PER_CORE - SLOT_COUNT) (spec §7.1). */
	int n = PMU_BUFFERS_PER_CORE - PMU_SLOT_COUNT;
	return n > 1 ? n : 1;
}

static int pmu_warm(int kind, int shards)
{
	(void)kind;
	(void)shards;
	return 1; /* surplus per core is 0: a minimal reserve (spec §7.1) */
}

/* The module of either platform: the queues hold every buffer of every
 * core (288 on a2a3, 432 on a5); one collector shard per AICPU thread at
 * most. */
#define PMU_MODULE(max_cores, max_collectors)                                   \
	{                                                                       \
		.name = "PmuModule",                                            \
		.kind_names = {"pmu"},                                          \
		.kinds = 1,                                                     \
		.ready_queue_size = (max_cores) * PMU_BUFFERS_PER_CORE,         \
		.slot_count = PMU_SLOT_COUNT,                                   \
		.host_pool_queue_size = (max_cores) * PMU_BUFFERS_PER_CORE,     \
		.host_recycled_queue_size = (max_cores) * PMU_BUFFERS_PER_CORE, \
		.max_collector_threads = (max_collectors),                      \
		.idle_timeout_sec = PMU_TIMEOUT_SECONDS,                        \
		.record_size = {sizeof(struct pmu_record)},                     \
		.records_per_buffer = {PMU_RECORDS_PER_BUFFER},                 \
		.batch_size = pmu_batch,                                        \
		.recycled_warm_target = pmu_warm,                               \
	}

static const struct tp_module pmu_module_a2a3 = PMU_MODULE(PMU_MAX_CORES_A2A3, 4);
static const struct tp_module pmu_module_a5 = PMU_MODULE(PMU_MAX_CORES_A5, 7);

static void shard_path(const struct pmu_collector *c, int i, const char *tail, char *out,
		       size_t len)
{
	snprintf(out, len, "%s/" PMU_CSV_FILE ".e%" PRIu64 ".p%d.shard%d%s", c->prefix,
		 c->cfg.run_epoch, (int)c->pid, i, tail);
}

/* Mark shard @s failed at step @what ("open", "write", "close") with
 * @err; the first failure is the one reported (shard_failure()). */
static void shard_fail(struct pmu_shard *s, const char *what, int err)
{
	if (!s->io_failed) {
		s->io_errno = err;
		s->io_what = what;
	}
	s->io_failed = true;
}

/*
 * The first failed shard's "<shard file>: <step> failed: <reason>" into
 * @buf (@len bytes). Return: true when a shard failed (@buf filled in).
 */
static bool shard_failure(const struct pmu_collector *c, char *buf, size_t len)
{
	for (int i = 0; i < c->cfg.num_threads; i++) {
		const struct pmu_shard *s = &c->shards[i];
		if (!s->io_failed)
			continue;
		char path[4200];
		shard_path(c, i, ".tmp", path, sizeof(path));
		if (s->io_what)
			snprintf(buf, len, "%s: %s failed: %s", path, s->io_what,
				 strerror(s->io_errno ? s->io_errno : EIO));
		else
			snprintf(buf, len, "%s: out of memory", path);
		return true;
	}
	return false;
}

/* Collector shard thread: append the buffer's rows to shard file i.
 * Always "kept" for the transport: a write failure is the PMU's own to
 * account (io_failed: pmu.csv is not produced, and its reconcile line
 * reports the rows as silent loss, seed 000). */
static bool pmu_collect(void *ud, const struct tp_ready_info *info, int shard)
{
	struct pmu_collector *c = ud;
	if (shard < 0 || shard >= c->cfg.num_threads || !info->count)
		return true;
	struct pmu_shard *s = &c->shards[shard];
	/* relaxed: a test switch; nothing is published through it. */
	while (atomic_load_explicit(&c->test_hold, memory_order_relaxed))
		usleep(1000);
	if (s->io_failed)
		return true;
	if (!s->fp) {
		char path[4200];
		shard_path(c, shard, ".tmp", path, sizeof(path));
		/* Removed on SIGINT / SIGTERM / SIGHUP until merged or preserved. */
		s->tmpreg = tp_tmpreg_add(path);
		if (s->tmpreg == -ECANCELED) {
			/* Interrupted: the process is ending; create nothing. */
			shard_fail(s, "open", ECANCELED);
			return true;
		}
		s->fp = fopen(path, "w");
		int open_err = errno;
		tp_tmpreg_created(s->tmpreg);
		if (!s->fp) {
			int err = open_err;
			TP_ERROR("PmuCollector: failed to open CSV shard file: %s: %s",
				 tp_shown(path), strerror(err));
			shard_fail(s, "open", err);
			return true;
		}
		s->opened = true;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct pmu_span *ns = realloc(s->span, cap * sizeof(*ns));
		if (!ns) {
			TP_ERROR("PmuCollector: out of memory indexing shard %d", shard);
			shard_fail(s, NULL, ENOMEM);
			return true;
		}
		s->span = ns;
		s->cap = cap;
	}
	const struct pmu_record *r = info->records;
	const struct tp_pmu_event_group *g = c->group;
	uint64_t off = s->bytes;
	for (uint32_t k = 0; k < info->count; k++) {
		char line[512];
		int n = snprintf(line, sizeof(line), "%u,%u,0x%016" PRIx64 ",%" PRIu32 ",%d,%" PRIu64,
				 info->thread, info->instance, r[k].task_id, r[k].func_id,
				 (int)r[k].core_type, r[k].pmu_total_cycles);
		for (int i = 0; i < g->n_slots; i++)
			if (g->slot[i].name[0])
				n += snprintf(line + n, sizeof(line) - (size_t)n, ",%" PRIu32,
					      r[k].pmu_counters[i]);
		n += snprintf(line + n, sizeof(line) - (size_t)n, ",%" PRIu32 ",%" PRIu64 "\n",
			      c->cfg.event_type, c->cfg.run_epoch);
		if (fwrite(line, 1, (size_t)n, s->fp) != (size_t)n) {
			int err = errno ? errno : EIO;
			char path[4200];
			shard_path(c, shard, ".tmp", path, sizeof(path));
			TP_ERROR("PmuCollector: failed to write CSV shard file: %s: %s",
				 tp_shown(path), strerror(err));
			shard_fail(s, "write", err);
			return true;
		}
		s->bytes += (uint64_t)n;
		s->rows++;
	}
	s->span[s->n++] = (struct pmu_span){.thread = info->thread, .core = info->instance,
					     .seq = info->seq, .len = (uint32_t)(s->bytes - off),
					     .off = off, .shard = shard};
	return true;
}

static void close_shards(struct pmu_collector *c)
{
	for (int i = 0; i < c->cfg.num_threads; i++) {
		struct pmu_shard *s = &c->shards[i];
		if (!s->fp)
			continue;
		bool logged = s->io_failed; /* pmu_collect() said why */
		int err = -tp_stream_flush(s->fp);
		if (err)
			shard_fail(s, "write", err);
		errno = 0;
		if (fclose(s->fp) != 0)
			shard_fail(s, "close", errno ? errno : EIO);
		s->fp = NULL;
		if (err && !logged) {
			char path[4200];
			shard_path(c, i, ".tmp", path, sizeof(path));
			TP_ERROR("PmuCollector: failed to write CSV shard file: %s: %s",
				 tp_shown(path), strerror(err));
		}
	}
}

struct pmu_collector *pmu_open(const struct pmu_config *cfg)
{
	if (!cfg || !cfg->model || !cfg->output_prefix || !cfg->output_prefix[0]) {
		tp_set_error(-EINVAL, "pmu: bad configuration (model and output_prefix are required)");
		return NULL;
	}
	const struct tp_platform *plat = tp_device_platform(tp_pmu_model_device(cfg->model));
	enum tp_pmu_arch arch = tp_pmu_model_arch(cfg->model);
	int max_cores = arch == TP_PMU_ARCH_A5 ? PMU_MAX_CORES_A5 : PMU_MAX_CORES_A2A3;
	int max_threads = plat->max_aicpu_threads;
	if (cfg->num_cores < 1 || cfg->num_cores > max_cores ||
	    cfg->num_cores > tp_pmu_model_cores(cfg->model)) {
		tp_set_error(-EINVAL, "pmu: num_cores %d out of range (1..%d, model has %d)",
			     cfg->num_cores, max_cores, tp_pmu_model_cores(cfg->model));
		return NULL;
	}
	if (cfg->num_threads < 1 || cfg->num_threads > max_threads) {
		tp_set_error(-EINVAL, "pmu: num_threads %d out of range (1..%d on %s)",
			     cfg->num_threads, max_threads, plat->name);
		return NULL;
	}
	struct pmu_collector *c = calloc(1, sizeof(*c));
	if (!c)
		goto oom;
	c->cfg = *cfg;
	c->pid = getpid();
	c->max_threads = max_threads;
	c->prefix = strdup(cfg->output_prefix);
	size_t plen = strlen(cfg->output_prefix) + sizeof("/" PMU_CSV_FILE);
	c->csv_path = malloc(plen);
	/* aligned: shard i's counters stay on their own cache lines. */
	c->shards = aligned_alloc(64, (size_t)cfg->num_threads * sizeof(*c->shards));
	if (c->shards)
		memset(c->shards, 0, (size_t)cfg->num_threads * sizeof(*c->shards));
	struct pmu_dev *d = &c->dev;
	d->cores = calloc((size_t)cfg->num_cores, sizeof(*d->cores));
	if (!c->prefix || !c->csv_path || !c->shards || !d->cores)
		goto oom;
	c->cfg.output_prefix = c->prefix;
	snprintf(c->csv_path, plen, "%s/" PMU_CSV_FILE, c->prefix);
	c->group = tp_pmu_event_group_or_default(arch, cfg->event_type);
	c->header_len = tp_pmu_csv_header(c->group, c->header, sizeof(c->header));

	d->arch = arch;
	d->shadow = arch == TP_PMU_ARCH_A5;
	d->num_cores = cfg->num_cores;
	d->num_threads = cfg->num_threads;
	d->event_type = cfg->event_type;
	d->model = cfg->model;
	c->ops = d->shadow ? tp_memops_sim_shadow() : tp_memops_sim_svm();
	if (d->shadow) {
		/* Device-only memory: the AICore writes it, the AICPU reads it. */
		d->rings = c->ops.alloc(c->ops.ud, (size_t)cfg->num_cores * sizeof(*d->rings));
		if (!d->rings)
			goto oom;
	}
	struct tp_profiler_config pc = {
		.module = d->shadow ? &pmu_module_a5 : &pmu_module_a2a3,
		.ops = c->ops,
		.num_threads = (uint32_t)cfg->num_threads,
		.num_instances = (uint32_t)cfg->num_cores,
		.buffers_per_instance = PMU_BUFFERS_PER_CORE,
		.priv_size = (uint32_t)(cfg->num_cores * sizeof(struct pmu_core_note)),
		.backstop_cycles = cfg->backstop_cycles,
		/* Unbounded unless retained; a retained run's cap is twice
		 * what the pool holds when the run starts (seed 000 §3.4:
		 * "twice the bytes it was seeded with"), set by prof_start
		 * after its top-up, so the top-up never spends the growth. */
		.pool_cap_bytes = UINT64_MAX,
		.pool_cap_start_factor = cfg->retained ? 2 : 0,
		.on_buffer_collected = pmu_collect,
		.ud = c,
	};
	c->p = prof_open(&pc);
	if (!c->p) {
		pmu_close(c);
		return NULL;
	}
	/* What open seeded; pmu_start replaces it with what the run starts
	 * with (and, retained, sets the cap from it). */
	c->seeded_bytes = atomic_load_explicit(&c->p->bp.pool_bytes, memory_order_relaxed);
	d->h = prof_shm_dev(c->p);
	d->notes = (struct pmu_core_note *)((char *)d->h + c->p->hdr->priv_off);
	c->host_notes = prof_priv_host(c->p);
	TP_INFO("PMU collector initialized: %d cores, %d threads, SHM=0x%lx, CSV=%s (opened on "
		"first record)",
		cfg->num_cores, cfg->num_threads, (unsigned long)c->p->shm_dev, tp_shown(c->csv_path));
	return c;
oom:
	pmu_close(c);
	tp_set_error(-ENOMEM, "pmu: out of memory");
	return NULL;
}

struct pmu_dev *pmu_dev(struct pmu_collector *c)
{
	return c ? &c->dev : NULL;
}

/* Remove shard files of this run left by an earlier start in this
 * process, and those of processes that no longer exist. */
static void remove_stale(struct pmu_collector *c)
{
	DIR *dir = opendir(c->prefix);
	if (!dir)
		return;
	struct dirent *e;
	int removed = 0;
	while ((e = readdir(dir))) {
		uint64_t epoch;
		int pid, shard;
		if (sscanf(e->d_name, PMU_CSV_FILE ".e%" SCNu64 ".p%d.shard%d.tmp", &epoch, &pid,
			   &shard) != 3)
			continue;
		char want[256];
		snprintf(want, sizeof(want), PMU_CSV_FILE ".e%" PRIu64 ".p%d.shard%d.tmp", epoch, pid,
			 shard);
		if (strcmp(want, e->d_name) != 0)
			continue; /* e.g. a preserved ...failed.tmp */
		bool stale = pid == (int)c->pid ? epoch == c->cfg.run_epoch
						: pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
		if (!stale)
			continue;
		char path[4200];
		snprintf(path, sizeof(path), "%s/%s", c->prefix, e->d_name);
		if (unlink(path) == 0)
			removed++;
	}
	closedir(dir);
	if (removed)
		TP_INFO("PmuCollector: removed %d stale CSV shard file%s in %s", removed,
			removed == 1 ? "" : "s", tp_shown(c->prefix));
}

int pmu_start(struct pmu_collector *c)
{
	if (!c)
		return -EINVAL;
	if (c->started)
		return 0;
	int rc = tp_mkdir_p(c->prefix, 0755);
	if (rc)
		TP_WARN("Failed to create PMU output directory %s: %s", tp_shown(c->prefix),
			strerror(-rc));
	remove_stale(c);
	rc = prof_start(c->p);
	if (rc == 0) {
		c->started = true;
		c->seeded_bytes = c->p->start_bytes;
		c->cap_bytes = c->p->bp.pool_cap_bytes;
	}
	return rc;
}

void pmu_stop(struct pmu_collector *c)
{
	if (!c || !c->p)
		return;
	prof_stop(c->p);
	if (c->started)
		c->stopped = true;
}

int pmu_reconcile(struct pmu_collector *c, struct pmu_reconcile *out)
{
	struct pmu_reconcile r = {0};
	if (!c || !c->p)
		return -EINVAL;
	if (c->started && !c->stopped)
		return tp_set_error(-EBUSY, "pmu: reconcile needs a stopped collector");
	close_shards(c);
	struct tp_reconcile pr;
	int rc = prof_reconcile(c->p, &pr);
	if (rc == -EIO || rc == -EBUSY) {
		if (out)
			*out = r;
		return rc;
	}
	const bool a5 = c->dev.shadow;
	struct tp_shm_header *hdr = c->p->hdr;
	for (int i = 0; i < c->cfg.num_cores; i++) {
		struct tp_buffer_state *st = tp_shm_state(hdr, (uint32_t)i);
		uint64_t cur = atomic_load_explicit(&st->current_buf_ptr, memory_order_relaxed);
		if (!cur)
			continue;
		struct tp_buf_hdr *b = bp_resolve_host_range(&c->p->bp, cur, TP_BUF_HDR_SIZE);
		if (!b || (a5 && bp_copy_buffer_from_device(&c->p->bp, b, cur, TP_BUF_HDR_SIZE)))
			continue;
		uint32_t n = atomic_load_explicit(&b->count, memory_order_relaxed);
		if (n)
			TP_ERROR("PMU reconcile: core %d has un-flushed buffer (current_buf_ptr=0x%lx, "
				 "count=%u) after stop() — device flush failed",
				 i, (unsigned long)cur, n);
	}
	uint64_t rows = 0, lost = 0;
	for (int i = 0; i < c->cfg.num_threads; i++) {
		r.io_failed |= c->shards[i].io_failed;
		rows += c->shards[i].rows;
	}
	for (int i = 0; i < c->cfg.num_cores; i++)
		lost += c->dev.cores[i].lost;
	r.total = pr.pool[0].total;
	r.dropped = pr.pool[0].dropped;
	r.mismatch = pr.pool[0].mismatch;
	r.unflushed = pr.pool[0].unflushed;
	/* Rows are collected only once they are on disk (spec §2.4: a failed
	 * shard output counts nothing) and, once the merge was tried, in
	 * pmu.csv (spec §5 step 5: 0 if the merge failed), so a failure shows
	 * as a mismatch. */
	r.collected = r.io_failed || c->merge_failed ? 0 : rows;
	uint64_t acc = r.collected + r.dropped + (a5 ? r.mismatch : 0);
	r.silent_loss = (int64_t)(r.total - acc);
	if (lost)
		TP_WARN("PMU reconcile: %" PRIu64 " records not counted (a core could not attach "
			"to its ready queue)",
			lost);
	if (r.dropped)
		TP_WARN("PMU reconcile: %" PRIu64 " records dropped on device side (free_queue empty "
			"or ready_queue full). Increase PLATFORM_PMU_BUFFERS_PER_CORE / "
			"PLATFORM_PMU_READYQUEUE_SIZE if this is frequent.",
			r.dropped);
	if (a5 && r.mismatch)
		TP_ERROR("PMU reconcile: %" PRIu64 " records lost to AICore staging-slot task_id "
			 "mismatch — completion-before-dispatch invariant violated",
			 r.mismatch);
	r.ok = acc == r.total && !r.io_failed;
	char why[4400];
	/* Not a race: once a shard file or the merge failed, no row is
	 * counted (the rows did not reach pmu.csv). */
	const char *lost_why = NULL;
	if (acc != r.total && r.io_failed && shard_failure(c, why, sizeof(why))) {
		lost_why = "the CSV shard output failed";
	} else if (acc != r.total && c->merge_failed) {
		lost_why = "merging the shard files into pmu.csv failed";
		snprintf(why, sizeof(why), "%s", c->merge_why);
	}
	if (lost_why) {
		char mm[48] = "";
		if (a5)
			snprintf(mm, sizeof(mm), " + mismatch=%" PRIu64, r.mismatch);
		TP_WARN("PMU reconcile: record count mismatch (collected=%" PRIu64 " + dropped=%" PRIu64
			"%s != device_total=%" PRIu64 ", silent_loss=%" PRId64
			") — %s, so no row is counted: %s",
			r.collected, r.dropped, mm, r.total, r.silent_loss, lost_why, tp_shown(why));
	} else if (acc != r.total) {
		if (a5)
			TP_WARN("PMU reconcile: record count mismatch (collected=%" PRIu64
				" + dropped=%" PRIu64 " + mismatch=%" PRIu64 " != device_total=%" PRIu64
				", silent_loss=%" PRId64 ") — AICore/AICPU race",
				r.collected, r.dropped, r.mismatch, r.total, r.silent_loss);
		else
			TP_WARN("PMU reconcile: record count mismatch (collected=%" PRIu64
				" + dropped=%" PRIu64 " != device_total=%" PRIu64 ", silent_loss=%" PRId64
				") — AICore/AICPU race",
				r.collected, r.dropped, r.total, r.silent_loss);
	} else if (a5) {
		TP_INFO("PMU reconcile: record counts match (collected=%" PRIu64 ", dropped=%" PRIu64
			", mismatch=%" PRIu64 ", device_total=%" PRIu64 ")",
			r.collected, r.dropped, r.mismatch, r.total);
	} else {
		TP_INFO("PMU reconcile: record counts match (collected=%" PRIu64 ", dropped=%" PRIu64
			", device_total=%" PRIu64 ")",
			r.collected, r.dropped, r.total);
	}
	/* Seed §5.1: the notes counted by code, per producer, one line per
	 * run at TIMING (the default threshold); the first reporting core's
	 * physical id and words beside them. */
	int first = -1;
	for (int i = 0; i < c->cfg.num_cores; i++) {
		const struct pmu_core_note *n = &c->host_notes[i];
		if (n->init.code < 6)
			r.note_init[n->init.code]++;
		if (n->close.code < 6)
			r.note_close[n->close.code]++;
		if (first < 0 && n->init.code)
			first = i;
	}
	if (first >= 0) {
		const struct pmu_core_note *n = &c->host_notes[first];
		TP_TIMING("PMU notes (run_epoch %" PRIu64 ", %d cores): init enabled=%u disabled=%u "
			  "no_window=%u; close held=%u lost=%u none=%u; first: core %d physical %d "
			  "init ctrl0=0x%x ctrl1=0x%x close ctrl0=0x%x ctrl1=0x%x",
			  c->cfg.run_epoch, c->cfg.num_cores, r.note_init[TP_PMU_NOTE_ENABLED],
			  r.note_init[TP_PMU_NOTE_DISABLED], r.note_init[TP_PMU_NOTE_NO_WINDOW],
			  r.note_close[TP_PMU_NOTE_HELD], r.note_close[TP_PMU_NOTE_LOST],
			  r.note_close[TP_PMU_NOTE_NONE], first, n->init.physical_core_id,
			  n->init.ctrl0, n->init.ctrl1, n->close.ctrl0, n->close.ctrl1);
	}
	if (out)
		*out = r;
	return r.ok ? 0 : -EPROTO;
}

/* Keep the shard files as evidence under a name no start removes. */
static void preserve_shards(struct pmu_collector *c)
{
	if (c->preserved)
		return;
	c->preserved = true;
	for (int i = 0; i < c->cfg.num_threads; i++) {
		if (!c->shards[i].opened)
			continue;
		char from[4200], to[4200];
		shard_path(c, i, ".tmp", from, sizeof(from));
		shard_path(c, i, ".failed.tmp", to, sizeof(to));
		if (rename(from, to) != 0)
			TP_WARN("PmuCollector: cannot rename %s to %s: %s", tp_shown(from),
				tp_shown(to), strerror(errno));
		else
			c->n_preserved++;
		tp_tmpreg_remove(c->shards[i].tmpreg); /* evidence, kept on purpose */
		c->shards[i].tmpreg = 0;
	}
}

static void remove_shards(struct pmu_collector *c)
{
	for (int i = 0; i < c->cfg.num_threads; i++) {
		if (!c->shards[i].opened)
			continue;
		char path[4200];
		shard_path(c, i, ".tmp", path, sizeof(path));
		if (unlink(path) != 0 && errno != ENOENT)
			TP_WARN("PmuCollector: cannot remove %s: %s", tp_shown(path),
				strerror(errno));
		tp_tmpreg_remove(c->shards[i].tmpreg);
		c->shards[i].tmpreg = 0;
		c->shards[i].opened = false;
	}
}

static int cmp_span(const void *a, const void *b)
{
	const struct pmu_span *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->shard != y->shard)
		return x->shard < y->shard ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Copy every span, in row order, into @out. 0 or -errno (logged). */
static int merge_spans(struct pmu_collector *c, FILE *out)
{
	size_t total = 0;
	for (int i = 0; i < c->cfg.num_threads; i++)
		total += c->shards[i].n;
	struct pmu_span *all = malloc((total ? total : 1) * sizeof(*all));
	FILE **in = calloc((size_t)c->cfg.num_threads, sizeof(*in));
	char *buf = NULL;
	size_t bufcap = 0;
	int rc = 0;
	char why[4400] = "";
	if (!all || !in) {
		rc = tp_set_error(-ENOMEM, "pmu: out of memory merging %s", c->csv_path);
		goto out;
	}
	size_t k = 0;
	for (int i = 0; i < c->cfg.num_threads; i++) {
		if (c->shards[i].n)
			memcpy(all + k, c->shards[i].span, c->shards[i].n * sizeof(*all));
		k += c->shards[i].n;
	}
	qsort(all, total, sizeof(*all), cmp_span);
	for (size_t j = 0; j < total; j++) {
		const struct pmu_span *s = &all[j];
		char path[4200];
		shard_path(c, s->shard, ".tmp", path, sizeof(path));
		if (!in[s->shard] && !(in[s->shard] = fopen(path, "r"))) {
			rc = -errno;
			snprintf(why, sizeof(why), "%s: cannot open for reading: %s", path,
				 strerror(-rc));
			TP_ERROR("PmuCollector: failed to read CSV shard file: %s", tp_shown(why));
			goto out;
		}
		if (s->len > bufcap) {
			char *nb = realloc(buf, s->len);
			if (!nb) {
				rc = tp_set_error(-ENOMEM, "pmu: out of memory merging %s", c->csv_path);
				goto out;
			}
			buf = nb;
			bufcap = s->len;
		}
		errno = 0;
		if (fseeko(in[s->shard], (off_t)s->off, SEEK_SET) != 0 ||
		    fread(buf, 1, s->len, in[s->shard]) != s->len) {
			/* a short read without an error: the file is shorter
			 * than the rows written into it */
			rc = ferror(in[s->shard]) && errno ? -errno : -EIO;
			if (ferror(in[s->shard]) || rc != -EIO)
				snprintf(why, sizeof(why), "%s: read failed: %s", path,
					 strerror(-rc));
			else
				snprintf(why, sizeof(why), "%s: read failed: the file is shorter "
					 "than the rows written into it", path);
			TP_ERROR("PmuCollector: failed to read CSV shard file: %s", tp_shown(why));
			goto out;
		}
		errno = 0;
		if (fwrite(buf, 1, s->len, out) != s->len) {
			rc = errno ? -errno : -EIO;
			snprintf(why, sizeof(why), "write failed: %s", strerror(-rc));
			TP_ERROR("PmuCollector: failed to write merged CSV file: %s: %s",
				 tp_shown(c->csv_path), strerror(-rc));
			goto out;
		}
	}
out:
	for (int i = 0; in && i < c->cfg.num_threads; i++)
		if (in[i])
			fclose(in[i]);
	free(in);
	free(all);
	free(buf);
	if (rc && why[0])
		tp_set_error(rc, "pmu: merging the shard files into %s failed: %s", c->csv_path, why);
	else if (rc)
		tp_set_error(rc, "pmu: merging the shard files into %s failed: %s", c->csv_path,
			     strerror(-rc));
	return rc;
}

/* The merge into pmu.csv failed with @rc (tp_last_error() says why):
 * remembered for pmu_reconcile, which then counts no row collected. */
static int note_merge_failure(struct pmu_collector *c, int rc)
{
	c->merge_failed = true;
	snprintf(c->merge_why, sizeof(c->merge_why), "%s", tp_last_error());
	return rc;
}

int pmu_export(struct pmu_collector *c, uint64_t *rows)
{
	if (rows)
		*rows = 0;
	if (!c)
		return -EINVAL;
	if (c->exported) {
		if (rows)
			*rows = c->exported_rows;
		return 0;
	}
	if (c->started && !c->stopped)
		return tp_set_error(-EBUSY, "pmu: export needs a stopped collector");
	close_shards(c);
	uint64_t collected = 0;
	bool failed = false;
	for (int i = 0; i < c->cfg.num_threads; i++) {
		failed |= c->shards[i].io_failed;
		collected += c->shards[i].rows;
	}
	if (failed || c->header_len < 0) {
		TP_ERROR("PmuCollector: CSV shard output failed; preserving shard files for "
			 "diagnosis");
		preserve_shards(c);
		char why[4400];
		if (shard_failure(c, why, sizeof(why)))
			return tp_set_error(-EIO, "pmu: CSV shard output failed for %s: %s",
					    c->csv_path, why);
		return tp_set_error(-EIO, "pmu: CSV shard output failed for %s", c->csv_path);
	}
	if (!collected) {
		remove_shards(c);
		c->exported = true;
		return 0;
	}
	tp_mkdir_p(c->prefix, 0755);
	char suffix[96];
	snprintf(suffix, sizeof(suffix), ".e%" PRIu64 ".p%d.merge.tmp", c->cfg.run_epoch,
		 (int)c->pid);
	struct tp_file_tx tx;
	int rc = tp_file_tx_begin(&tx, c->csv_path, suffix);
	if (rc) {
		TP_ERROR("PmuCollector: failed to open CSV file: %s", tp_last_error());
		preserve_shards(c);
		return note_merge_failure(c, rc);
	}
	errno = 0;
	if (fwrite(c->header, 1, (size_t)c->header_len, tx.fp) != (size_t)c->header_len) {
		rc = errno ? -errno : -EIO;
		TP_ERROR("PmuCollector: failed to write CSV header: %s: %s", tp_shown(c->csv_path),
			 strerror(-rc));
		tp_file_tx_abort(&tx, false);
		preserve_shards(c);
		tp_set_error(rc, "pmu: %s: write failed: %s", c->csv_path, strerror(-rc));
		return note_merge_failure(c, rc);
	}
	if ((rc = merge_spans(c, tx.fp))) {
		tp_file_tx_abort(&tx, false);
		preserve_shards(c);
		return note_merge_failure(c, rc);
	}
	char tmp[4300];
	snprintf(tmp, sizeof(tmp), "%s%s", c->csv_path, suffix);
	if ((rc = tp_file_tx_commit(&tx))) {
		TP_ERROR("PmuCollector: failed to flush merged CSV file: %s", tp_last_error());
		unlink(tmp); /* the partial merged file is never left behind */
		preserve_shards(c);
		return note_merge_failure(c, rc);
	}
	remove_shards(c);
	c->exported = true;
	c->exported_rows = collected;
	if (rows)
		*rows = collected;
	return 0;
}

int pmu_notes(const struct pmu_collector *c, int core, struct tp_pmu_note *init,
	      struct tp_pmu_note *close)
{
	if (!c || !c->host_notes || core < 0 || core >= c->cfg.num_cores)
		return -EINVAL;
	if (init)
		*init = c->host_notes[core].init;
	if (close)
		*close = c->host_notes[core].close;
	return 0;
}

uint32_t pmu_event_type(const struct pmu_collector *c)
{
	return c->cfg.event_type;
}

uint64_t pmu_run_epoch(const struct pmu_collector *c)
{
	return c->cfg.run_epoch;
}

const char *pmu_csv_path(const struct pmu_collector *c)
{
	return c->csv_path;
}

bool pmu_shards_kept(const struct pmu_collector *c)
{
	return c->n_preserved > 0;
}

void pmu_release_pool(struct pmu_collector *c)
{
	if (!c || !c->p)
		return;
	pmu_stop(c);
	close_shards(c);
	prof_close(c->p);
	c->p = NULL;
	c->host_notes = NULL;
	if (c->dev.rings)
		c->ops.free_(c->ops.ud, c->dev.rings);
	c->dev.rings = NULL;
	c->dev.h = NULL;
	c->dev.notes = NULL;
}

void pmu_test_hold_collect(struct pmu_collector *c, bool hold)
{
	atomic_store_explicit(&c->test_hold, hold, memory_order_relaxed);
}

int pmu_pool_bytes(const struct pmu_collector *c, uint64_t *seeded, uint64_t *cap,
		   uint64_t *now)
{
	if (!c || !c->p)
		return -EINVAL;
	if (now)
		*now = atomic_load_explicit(&c->p->bp.pool_bytes, memory_order_relaxed);
	if (seeded)
		*seeded = c->seeded_bytes;
	if (cap)
		*cap = (uint64_t)c->p->bp.pool_cap_bytes;
	return 0;
}

void pmu_close(struct pmu_collector *c)
{
	if (!c)
		return;
	if (c->p)
		prof_close(c->p);
	if (c->shards) {
		for (int i = 0; i < c->cfg.num_threads; i++) {
			if (c->shards[i].fp)
				fclose(c->shards[i].fp);
			/* A shard never exported stays for the next start's
			 * stale sweep, as before; only its slot is given back. */
			tp_tmpreg_remove(c->shards[i].tmpreg);
			free(c->shards[i].span);
		}
	}
	if (c->dev.rings)
		c->ops.free_(c->ops.ud, c->dev.rings);
	free(c->shards);
	free(c->dev.cores);
	free(c->csv_path);
	free(c->prefix);
	free(c);
}
