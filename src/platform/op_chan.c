/* SPDX-License-Identifier: MIT */
/*
 * platform/op_chan.c — record rings of the driver profiling channels
 * (platform/op_chan.h).
 */
#include "platform/op_chan.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/log.h"

#define N_CHAN 2 /* TP_DRV_CH_AICORE_PMU, TP_DRV_CH_TASK_TIME */

enum chan_state { CH_IDLE = 0, CH_STARTED, CH_STOPPED };

struct chan {
	enum chan_state state;
	uint32_t pass;
	struct tp_op_rec *ring; /* slots = cap + 1 (the END_OF_PASS slot) */
	uint32_t cap;
	uint64_t head, tail;    /* monotonic: next read, next write */
	uint64_t delivered, dropped;
	bool backstop_hit;      /* drop at once until a reader makes room */
	pthread_cond_t not_full;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_cond_t g_poll_cv;
static struct chan g_chan[TP_RT_MAX_DEVICES][N_CHAN];
static uint64_t g_wake_gen;   /* bumped by tp_op_chan_wake() */
static uint32_t g_pollers;    /* threads waiting in poll */
static uint32_t g_cap_override, g_backstop_override;
static uint64_t g_full_waits;

static bool g_inited; /* init_once() ran (its once, or the fork child) */

/* Condition variables on CLOCK_MONOTONIC: a wall-clock step must not
 * stretch or cut a timeout. */
static void init_once(void)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&g_poll_cv, &a);
	for (int d = 0; d < TP_RT_MAX_DEVICES; d++)
		for (int c = 0; c < N_CHAN; c++)
			pthread_cond_init(&g_chan[d][c].not_full, &a);
	pthread_condattr_destroy(&a);
	g_inited = true;
}

/*
 * fork() child: it has one thread; the parent's readers and producers
 * stayed behind. The mutex one of them held at the fork, or a condition
 * variable one of them waited on (a reader polling, as the operator
 * profiler's always is), would block the child's first use forever: make
 * them new. The channels belonged to the parent's devices, which the
 * child's rt forgets (rt.c rt_atfork_child): idle them, so the devices
 * the child opens start theirs afresh. Runs single-threaded, after
 * glibc made malloc usable again, so free() is safe here.
 */
static void op_chan_atfork_child(void)
{
	g_mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	if (g_inited)
		init_once();
	g_pollers = 0;
	for (int d = 0; d < TP_RT_MAX_DEVICES; d++)
		for (int c = 0; c < N_CHAN; c++) {
			struct chan *ch = &g_chan[d][c];
			free(ch->ring);
			ch->ring = NULL;
			ch->head = ch->tail = 0;
			ch->delivered = ch->dropped = 0;
			ch->backstop_hit = false;
			ch->state = CH_IDLE;
		}
}

__attribute__((constructor)) static void op_chan_init(void)
{
	(void)pthread_atfork(NULL, NULL, op_chan_atfork_child);
}

static struct chan *lock_chan(int device, uint32_t channel)
{
	pthread_once(&g_once, init_once);
	pthread_mutex_lock(&g_mu);
	return &g_chan[device][channel - 1];
}

static void deadline_in(struct timespec *ts, uint64_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static uint64_t held(const struct chan *c)
{
	return c->tail - c->head;
}

/* A record became readable: wake pollers (g_mu held). */
static void signal_readable(void)
{
	if (g_pollers)
		pthread_cond_broadcast(&g_poll_cv);
}

static void fill_header(struct tp_op_rec *r, int device, uint32_t channel, uint32_t pass)
{
	r->magic = TP_OP_REC_MAGIC;
	r->version = TP_OP_REC_VERSION;
	r->size = sizeof(*r);
	r->device = device;
	r->channel = channel;
	r->pass = pass;
}

int tp_op_chan_start(int device, uint32_t channel, uint32_t pass)
{
	struct chan *c = lock_chan(device, channel);
	int rc = 0;
	if (c->state != CH_IDLE) {
		rc = tp_set_error(-EBUSY, "tp_drv_prof_start: device %d channel %u is %s",
				  device, channel, c->state == CH_STARTED ? "already started" :
				  "stopped but its END_OF_PASS has not been read");
		goto out;
	}
	uint32_t cap = g_cap_override ? g_cap_override : TP_OP_CHAN_DEFAULT_CAP;
	c->ring = calloc((size_t)cap + 1, sizeof(*c->ring));
	if (!c->ring) {
		rc = tp_set_error(-ENOMEM, "tp_drv_prof_start: device %d channel %u: no memory "
				  "for a ring of %u records", device, channel, cap);
		goto out;
	}
	c->cap = cap;
	c->head = c->tail = 0;
	c->delivered = c->dropped = 0;
	c->backstop_hit = false;
	c->pass = pass;
	c->state = CH_STARTED;
out:
	pthread_mutex_unlock(&g_mu);
	return rc;
}

int tp_op_chan_stop(int device, uint32_t channel, uint64_t t_stop)
{
	struct chan *c = lock_chan(device, channel);
	if (c->state != CH_STARTED) {
		pthread_mutex_unlock(&g_mu);
		return tp_set_error(-ENOENT, "tp_drv_prof_stop: device %d channel %u is not "
				    "started", device, channel);
	}
	/* The spare slot: at most cap data records are held, so this fits. */
	struct tp_op_rec *r = &c->ring[c->tail % ((uint64_t)c->cap + 1)];
	memset(r, 0, sizeof(*r));
	fill_header(r, device, channel, c->pass);
	r->kind = TP_OP_REC_END_OF_PASS;
	r->core_id = -1;
	r->seq = c->delivered;
	r->total_cycles = c->dropped;
	r->t_start = r->t_end = t_stop;
	c->tail++;
	c->state = CH_STOPPED;
	if (c->dropped)
		TP_WARN("drv prof: device %d channel %u: %llu records dropped (the ring "
			"stayed full for the backstop)", device, channel,
			(unsigned long long)c->dropped);
	signal_readable();
	/* A producer still waiting (none should: stop follows the launch)
	 * must see the state change and give up. */
	pthread_cond_broadcast(&c->not_full);
	pthread_mutex_unlock(&g_mu);
	return 0;
}

bool tp_op_chan_started(int device, uint32_t channel)
{
	struct chan *c = lock_chan(device, channel);
	bool on = c->state == CH_STARTED;
	pthread_mutex_unlock(&g_mu);
	return on;
}

void tp_op_chan_push(int device, uint32_t channel, struct tp_op_rec *rec)
{
	struct chan *c = lock_chan(device, channel);
	if (c->state == CH_STARTED && held(c) >= c->cap) {
		if (c->backstop_hit) {
			c->dropped++;
			goto out;
		}
		g_full_waits++;
		struct timespec dl;
		deadline_in(&dl, g_backstop_override ? g_backstop_override :
				 TP_OP_CHAN_BACKSTOP_MS);
		while (c->state == CH_STARTED && held(c) >= c->cap) {
			if (pthread_cond_timedwait(&c->not_full, &g_mu, &dl) == ETIMEDOUT &&
			    c->state == CH_STARTED && held(c) >= c->cap) {
				c->backstop_hit = true;
				c->dropped++;
				goto out;
			}
		}
	}
	if (c->state != CH_STARTED)
		goto out;
	fill_header(rec, device, channel, c->pass);
	c->ring[c->tail % ((uint64_t)c->cap + 1)] = *rec;
	c->tail++;
	c->delivered++;
	signal_readable();
out:
	pthread_mutex_unlock(&g_mu);
}

int tp_op_chan_read(int device, uint32_t channel, void *buf, size_t size)
{
	if (size < sizeof(struct tp_op_rec))
		return tp_set_error(-EINVAL, "tp_drv_prof_channel_read: buffer of %zu bytes "
				    "(expected at least one record, %zu bytes)", size,
				    sizeof(struct tp_op_rec));
	struct chan *c = lock_chan(device, channel);
	if (c->state == CH_IDLE) {
		pthread_mutex_unlock(&g_mu);
		return tp_set_error(-ENOENT, "tp_drv_prof_channel_read: device %d channel %u "
				    "is not started (or already drained to its END_OF_PASS)",
				    device, channel);
	}
	size_t max = size / sizeof(struct tp_op_rec), n = 0;
	struct tp_op_rec *out = buf;
	bool eop = false;
	while (n < max && held(c) > 0 && !eop) {
		out[n] = c->ring[c->head % ((uint64_t)c->cap + 1)];
		c->head++;
		eop = out[n].kind == TP_OP_REC_END_OF_PASS;
		n++;
	}
	if (eop) {
		free(c->ring);
		c->ring = NULL;
		c->head = c->tail = 0;
		c->state = CH_IDLE;
	}
	if (n) {
		c->backstop_hit = false;
		pthread_cond_broadcast(&c->not_full);
	}
	pthread_mutex_unlock(&g_mu);
	return (int)(n * sizeof(struct tp_op_rec));
}

/* Channels with unread records into @out (g_mu held). */
static int scan(struct tp_drv_prof_poll_info *out, int max)
{
	int n = 0;
	for (int d = 0; d < TP_RT_MAX_DEVICES && n < max; d++)
		for (int c = 0; c < N_CHAN && n < max; c++)
			if (g_chan[d][c].state != CH_IDLE && held(&g_chan[d][c]) > 0)
				out[n++] = (struct tp_drv_prof_poll_info){ d, (uint32_t)c + 1 };
	return n;
}

int tp_op_chan_poll(struct tp_drv_prof_poll_info *out, int max, int timeout_ms)
{
	pthread_once(&g_once, init_once);
	pthread_mutex_lock(&g_mu);
	int n = scan(out, max);
	if (n == 0 && timeout_ms > 0) {
		struct timespec dl;
		deadline_in(&dl, (uint64_t)timeout_ms);
		uint64_t gen = g_wake_gen;
		g_pollers++;
		int wrc = 0;
		while ((n = scan(out, max)) == 0 && gen == g_wake_gen && wrc != ETIMEDOUT)
			wrc = pthread_cond_timedwait(&g_poll_cv, &g_mu, &dl);
		g_pollers--;
	}
	pthread_mutex_unlock(&g_mu);
	return n;
}

void tp_op_chan_wake(void)
{
	pthread_once(&g_once, init_once);
	pthread_mutex_lock(&g_mu);
	g_wake_gen++;
	pthread_cond_broadcast(&g_poll_cv);
	pthread_mutex_unlock(&g_mu);
}

void tp_op_chan_set_capacity(uint32_t records)
{
	pthread_mutex_lock(&g_mu);
	g_cap_override = records;
	pthread_mutex_unlock(&g_mu);
}

void tp_op_chan_set_backstop_ms(uint32_t ms)
{
	pthread_mutex_lock(&g_mu);
	g_backstop_override = ms;
	pthread_mutex_unlock(&g_mu);
}

uint64_t tp_op_chan_full_waits(void)
{
	pthread_mutex_lock(&g_mu);
	uint64_t n = g_full_waits;
	pthread_mutex_unlock(&g_mu);
	return n;
}

void tp_op_chan_release_all(void)
{
	pthread_mutex_lock(&g_mu);
	for (int d = 0; d < TP_RT_MAX_DEVICES; d++)
		for (int c = 0; c < N_CHAN; c++) {
			struct chan *ch = &g_chan[d][c];
			/* A started channel's ring may still have a producer
			 * (a device thread at exit): keep it. */
			if (ch->state == CH_STARTED)
				continue;
			free(ch->ring);
			ch->ring = NULL;
			ch->head = ch->tail = 0;
			ch->state = CH_IDLE;
		}
	pthread_mutex_unlock(&g_mu);
}
