/* SPDX-License-Identifier: MIT */
/*
 * runtime/async.c — simplified async wait (spec/runtime-model.md §2.10,
 * §7.3 Tier 2): kernel-registered "uint32 counter >= value" conditions, the
 * scheduler-side wait list (a locked list) polled by the AsyncPoll step,
 * and the simulated DMA engine thread that performs delayed copies and
 * bumps the counters (runtime/engine.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "runtime/engine_internal.h"

/* The engine and slab of the kernel running on this AICore thread. */
static _Thread_local struct tp_engine *tl_engine;
static _Thread_local struct tp_async_slab *tl_slab;

void tp_async_bind(struct tp_engine *e, struct tp_async_slab *slab)
{
	tl_engine = slab ? e : NULL;
	tl_slab = slab;
}

int tp_kernel_async_wait(const uint32_t *counter, uint32_t value)
{
	struct tp_async_slab *sl = tl_slab;
	if (!sl)
		return tp_set_error(-EPERM, "runtime: async wait outside a kernel");
	if (!counter || ((uintptr_t)counter & 3u))
		return tp_set_error(-EINVAL, "runtime: async wait on a bad counter address");
	if (sl->n >= TP_MAX_ASYNC_WAITS)
		return tp_set_error(-E2BIG, "runtime: more than %d async waits in one subtask",
				    TP_MAX_ASYNC_WAITS);
	sl->c[sl->n].addr = counter;
	sl->c[sl->n].value = value;
	sl->n++;
	return 0;
}

static inline uint32_t counter_load(const uint32_t *a)
{
	/* acquire: pairs with the DMA engine's release add, so the copied
	 * data is visible to whoever sees the count. */
	return __atomic_load_n(a, __ATOMIC_ACQUIRE);
}

/* ---- the wait list ---------------------------------------------------- */

int tp_async_init(struct tp_engine *e)
{
	pthread_mutex_init(&e->async_mu, NULL);
	struct tp_dma *d = &e->dma;
	pthread_mutex_init(&d->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cv, &ca);
	pthread_condattr_destroy(&ca);
	d->inited = true;
	return 0;
}

void tp_async_fini(struct tp_engine *e)
{
	struct tp_dma *d = &e->dma;
	if (!d->inited)
		return;
	tp_dma_stop(e);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d->reqs);
	d->reqs = NULL;
	pthread_mutex_destroy(&e->async_mu);
	free(e->async_list);
	e->async_list = NULL;
	d->inited = false;
}

void tp_async_take(struct tp_engine *e, struct tp_slot *s, struct tp_async_slab *slab)
{
	const uint32_t n = slab->n;
	if (!n)
		return;
	struct tp_task_payload *p = tp_engine_payload(e, s);
	pthread_mutex_lock(&e->async_mu);
	if (e->async_n + n > e->async_cap) {
		uint32_t cap = e->async_cap ? e->async_cap : 64;
		while (cap < e->async_n + n)
			cap *= 2;
		struct tp_async_entry *l = realloc(e->async_list, cap * sizeof(*l));
		if (!l) {
			pthread_mutex_unlock(&e->async_mu);
			slab->n = 0;
			/* The task completes without waiting; the run fails. */
			tp_engine_fail(e, -ENOMEM, s->task_id, -1,
				       "runtime: out of memory (async wait list)");
			return;
		}
		e->async_list = l;
		e->async_cap = cap;
	}
	for (uint32_t i = 0; i < n; i++)
		e->async_list[e->async_n++] = (struct tp_async_entry){
			.slot = s, .addr = slab->c[i].addr, .value = slab->c[i].value,
		};
	p->async_outstanding += n;
	/* relaxed: read by the task's last subtask completer, ordered by the
	 * acq_rel subtask count this thread bumps next (tp_async_defer). */
	atomic_store_explicit(&p->has_async, 1, memory_order_relaxed);
	/* release: pairs with the acquire peek of tp_async_count(); the list
	 * itself is read under async_mu. */
	atomic_store_explicit(&e->async_size, e->async_n, memory_order_release);
	pthread_mutex_unlock(&e->async_mu);
	/* relaxed: a statistic, read by fill_result. */
	atomic_fetch_add_explicit(&e->async_waits, n, memory_order_relaxed);
	slab->n = 0;
}

bool tp_async_defer(struct tp_engine *e, struct tp_slot *s)
{
	struct tp_task_payload *p = tp_engine_payload(e, s);
	/* relaxed: has_async was stored before that subtask's acq_rel
	 * subtask count, which the last subtask's count (ours) reads. */
	if (!atomic_load_explicit(&p->has_async, memory_order_relaxed))
		return false;
	pthread_mutex_lock(&e->async_mu);
	bool defer = p->async_outstanding > 0;
	if (defer)
		p->async_deferred = 1;
	pthread_mutex_unlock(&e->async_mu);
	return defer;
}

uint32_t tp_async_poll(struct tp_engine *e, struct tp_slot **out, uint32_t max)
{
	uint32_t n_out = 0;
	if (!tp_async_count(e))
		return 0;
	pthread_mutex_lock(&e->async_mu);
	for (uint32_t i = 0; i < e->async_n && n_out < max;) {
		struct tp_async_entry *en = &e->async_list[i];
		if (counter_load(en->addr) < en->value) {
			i++;
			continue;
		}
		struct tp_slot *s = en->slot;
		struct tp_task_payload *p = tp_engine_payload(e, s);
		*en = e->async_list[--e->async_n];
		if (--p->async_outstanding == 0 && p->async_deferred) {
			p->async_deferred = 0;
			out[n_out++] = s;
		}
	}
	/* release: as in tp_async_take(). */
	atomic_store_explicit(&e->async_size, e->async_n, memory_order_release);
	pthread_mutex_unlock(&e->async_mu);
	if (n_out) /* relaxed: a statistic */
		atomic_fetch_add_explicit(&e->async_done, n_out, memory_order_relaxed);
	return n_out;
}

bool tp_async_any_ready(struct tp_engine *e)
{
	bool ready = false;
	pthread_mutex_lock(&e->async_mu);
	for (uint32_t i = 0; i < e->async_n && !ready; i++)
		ready = counter_load(e->async_list[i].addr) >= e->async_list[i].value;
	pthread_mutex_unlock(&e->async_mu);
	return ready;
}

tp_task_id tp_async_first_task(struct tp_engine *e, const uint32_t **addr, uint32_t *value)
{
	tp_task_id id = TP_TASK_ID_INVALID;
	pthread_mutex_lock(&e->async_mu);
	if (e->async_n) {
		id = e->async_list[0].slot->task_id;
		*addr = e->async_list[0].addr;
		*value = e->async_list[0].value;
	}
	pthread_mutex_unlock(&e->async_mu);
	return id;
}

/* ---- the DMA engine --------------------------------------------------- */

int tp_kernel_dma_copy(void *dst, const void *src, size_t bytes, uint32_t *counter,
		       uint64_t delay_ns)
{
	struct tp_engine *e = tl_engine;
	if (!e)
		return tp_set_error(-EPERM, "runtime: DMA request outside a kernel");
	if ((bytes && (!dst || !src)) || ((uintptr_t)counter & 3u))
		return tp_set_error(-EINVAL, "runtime: bad DMA request");
	struct tp_dma *d = &e->dma;
	pthread_mutex_lock(&d->mu);
	if (d->n == d->cap) {
		uint32_t cap = d->cap ? d->cap * 2 : 64;
		struct tp_dma_req *r = realloc(d->reqs, cap * sizeof(*r));
		if (!r) {
			pthread_mutex_unlock(&d->mu);
			return tp_set_error(-ENOMEM, "runtime: out of memory (DMA queue)");
		}
		d->reqs = r;
		d->cap = cap;
	}
	d->reqs[d->n++] = (struct tp_dma_req){
		.dst = dst, .src = src, .bytes = bytes, .counter = counter,
		.due_ns = tp_now_ns() + delay_ns,
	};
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
	return 0;
}

static void *dma_main(void *arg)
{
	struct tp_engine *e = arg;
	struct tp_dma *d = &e->dma;
	pthread_mutex_lock(&d->mu);
	while (!d->stop) {
		if (!d->n) {
			pthread_cond_wait(&d->cv, &d->mu); /* idle: parked */
			continue;
		}
		uint32_t k = 0;
		for (uint32_t i = 1; i < d->n; i++)
			if (d->reqs[i].due_ns < d->reqs[k].due_ns)
				k = i;
		uint64_t now = tp_now_ns();
		if (d->reqs[k].due_ns > now) {
			uint64_t wait = d->reqs[k].due_ns - now;
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			uint64_t ns = (uint64_t)ts.tv_nsec + wait;
			ts.tv_sec += (time_t)(ns / 1000000000ull);
			ts.tv_nsec = (long)(ns % 1000000000ull);
			pthread_cond_timedwait(&d->cv, &d->mu, &ts);
			continue;
		}
		struct tp_dma_req r = d->reqs[k];
		d->reqs[k] = d->reqs[--d->n];
		pthread_mutex_unlock(&d->mu);
		if (r.bytes)
			memcpy(r.dst, r.src, r.bytes);
		/* release: pairs with the acquire of counter_load(): the copy
		 * above is visible to whoever sees the new count. */
		if (r.counter)
			__atomic_fetch_add(r.counter, 1u, __ATOMIC_RELEASE);
		/* relaxed: a statistic, read after tp_dma_stop()'s join. */
		atomic_fetch_add_explicit(&d->done, 1, memory_order_relaxed);
		tp_engine_wake_all(e); /* a parked scheduler polls the list */
		pthread_mutex_lock(&d->mu);
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

int tp_dma_start(struct tp_engine *e)
{
	struct tp_dma *d = &e->dma;
	d->stop = false;
	int rc = pthread_create(&d->th, NULL, dma_main, e);
	if (rc)
		return tp_set_error(-rc, "runtime: cannot start the DMA engine thread: %s%s",
				    strerror(rc), tp_thread_limit_note(rc));
	d->started = true;
	return 0;
}

void tp_dma_stop(struct tp_engine *e)
{
	struct tp_dma *d = &e->dma;
	if (!d->started)
		return;
	pthread_mutex_lock(&d->mu);
	d->stop = true;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
	pthread_join(d->th, NULL);
	d->started = false;
	if (d->n)
		TP_WARN("runtime: DMA engine stopped with %u request(s) left", d->n);
}
