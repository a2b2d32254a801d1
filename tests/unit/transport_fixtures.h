/* SPDX-License-Identifier: MIT */
/*
 * transport_fixtures.h — counting device-memory callbacks for the transport
 * unit tests (header-only).
 *
 * struct tf_mem backs a struct tp_memops whose callbacks count and record
 * what the framework asks for:
 *   alloc  aligned_alloc(64, size rounded up to 64) + memset 0; counted.
 *   reg    counted; host view = the device address (identity, like a2a3
 *          halHostRegister in the sims) or, with distinct_host set, a
 *          separate zeroed host buffer so tests can tell host from device
 *          addresses; fails with reg_fail_rc when that is non-zero.
 *   free_  counted; every freed address is recorded (tf_freed_times()).
 *          Addresses this fixture allocated are really freed (with their
 *          distinct host view); foreign addresses are only recorded.
 *   copy_to_device / copy_from_device   memcpy; counted.
 * tf_free_dev() has the shape of a release callback (void *ud, uint64_t dev)
 * and frees through the same bookkeeping.  tf_mem_fini() frees whatever is
 * still live and returns how many allocations that was.
 *
 * All callbacks are serialised by a mutex: safe from several threads.
 */
#ifndef TASKPROF_TESTS_TRANSPORT_FIXTURES_H
#define TASKPROF_TESTS_TRANSPORT_FIXTURES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/module.h"

#define TF_MAX_TRACK 8192

struct tf_block {
	void *dev;
	void *host; /* distinct host view, or NULL when identity / not registered */
	size_t size;
};

struct tf_mem {
	pthread_mutex_t mu;
	/* configuration (set before use) */
	bool distinct_host; /* reg hands out a separate host buffer */
	int reg_fail_rc;    /* non-zero: reg fails with this */
	/* counters */
	int allocs, regs, frees, copies_to, copies_from;
	size_t alloc_bytes; /* sum of requested sizes */
	/* live allocations made by tf_alloc */
	struct tf_block live[TF_MAX_TRACK];
	int nlive;
	/* every address given to free_, in call order */
	uint64_t freed[TF_MAX_TRACK];
	int nfreed;
};

static inline void tf_mem_init(struct tf_mem *m)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->mu, NULL);
}

static inline int tf_find_live_(struct tf_mem *m, const void *dev)
{
	for (int i = 0; i < m->nlive; i++)
		if (m->live[i].dev == dev)
			return i;
	return -1;
}

static inline void *tf_alloc(void *ud, size_t size)
{
	struct tf_mem *m = ud;
	size_t n = (size + 63u) & ~(size_t)63u;
	void *p = aligned_alloc(64, n ? n : 64);
	if (!p)
		return NULL;
	memset(p, 0, n ? n : 64);
	pthread_mutex_lock(&m->mu);
	m->allocs++;
	m->alloc_bytes += size;
	if (m->nlive < TF_MAX_TRACK)
		m->live[m->nlive++] = (struct tf_block){ .dev = p, .size = size };
	pthread_mutex_unlock(&m->mu);
	return p;
}

static inline int tf_reg(void *ud, void *dev, size_t size, void **host_out)
{
	struct tf_mem *m = ud;
	pthread_mutex_lock(&m->mu);
	m->regs++;
	int rc = m->reg_fail_rc;
	bool distinct = m->distinct_host;
	pthread_mutex_unlock(&m->mu);
	if (rc)
		return rc;
	if (!distinct) {
		*host_out = dev;
		return 0;
	}
	size_t n = (size + 63u) & ~(size_t)63u;
	void *host = aligned_alloc(64, n ? n : 64);
	if (!host)
		return -12; /* -ENOMEM */
	memset(host, 0, n ? n : 64);
	pthread_mutex_lock(&m->mu);
	int i = tf_find_live_(m, dev);
	if (i >= 0) {
		free(m->live[i].host);
		m->live[i].host = host;
	}
	pthread_mutex_unlock(&m->mu);
	if (i < 0) { /* not ours: nothing would ever free it */
		free(host);
		return -22; /* -EINVAL */
	}
	*host_out = host;
	return 0;
}

static inline void tf_free(void *ud, void *dev)
{
	struct tf_mem *m = ud;
	struct tf_block b = { 0 };
	pthread_mutex_lock(&m->mu);
	m->frees++;
	if (m->nfreed < TF_MAX_TRACK)
		m->freed[m->nfreed++] = (uint64_t)(uintptr_t)dev;
	int i = tf_find_live_(m, dev);
	if (i >= 0) {
		b = m->live[i];
		m->live[i] = m->live[--m->nlive];
	}
	pthread_mutex_unlock(&m->mu);
	if (i >= 0) {
		free(b.host);
		free(b.dev);
	}
}

/* Release-callback shape: (void *ud, uint64_t dev). */
static inline void tf_free_dev(void *ud, uint64_t dev)
{
	tf_free(ud, (void *)(uintptr_t)dev);
}

static inline int tf_copy_to(void *ud, void *dev_dst, const void *host_src, size_t size)
{
	struct tf_mem *m = ud;
	pthread_mutex_lock(&m->mu);
	m->copies_to++;
	pthread_mutex_unlock(&m->mu);
	memcpy(dev_dst, host_src, size);
	return 0;
}

static inline int tf_copy_from(void *ud, void *host_dst, const void *dev_src, size_t size)
{
	struct tf_mem *m = ud;
	pthread_mutex_lock(&m->mu);
	m->copies_from++;
	pthread_mutex_unlock(&m->mu);
	memcpy(host_dst, dev_src, size);
	return 0;
}

/* Memops over @m: reg only when @with_reg, copy ops only when @with_copy. */
static inline struct tp_memops tf_memops(struct tf_mem *m, bool with_reg, bool with_copy)
{
	struct tp_memops ops = {
		.alloc = tf_alloc,
		.reg = with_reg ? tf_reg : NULL,
		.free_ = tf_free,
		.copy_to_device = with_copy ? tf_copy_to : NULL,
		.copy_from_device = with_copy ? tf_copy_from : NULL,
		.ud = m,
	};
	return ops;
}

/* How many times @dev was passed to free_. */
static inline int tf_freed_times(struct tf_mem *m, uint64_t dev)
{
	int n = 0;
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < m->nfreed; i++)
		n += m->freed[i] == dev;
	pthread_mutex_unlock(&m->mu);
	return n;
}

static inline bool tf_is_live(struct tf_mem *m, uint64_t dev)
{
	pthread_mutex_lock(&m->mu);
	bool live = tf_find_live_(m, (void *)(uintptr_t)dev) >= 0;
	pthread_mutex_unlock(&m->mu);
	return live;
}

/* Host view that reg handed out for the allocation at @dev (NULL when
 * identity, unregistered or unknown). */
static inline void *tf_host_of(struct tf_mem *m, uint64_t dev)
{
	pthread_mutex_lock(&m->mu);
	int i = tf_find_live_(m, (void *)(uintptr_t)dev);
	void *host = i >= 0 ? m->live[i].host : NULL;
	pthread_mutex_unlock(&m->mu);
	return host;
}

/* Free every allocation still live; returns how many there were. */
static inline int tf_mem_fini(struct tf_mem *m)
{
	int leaked = m->nlive;
	for (int i = 0; i < m->nlive; i++) {
		free(m->live[i].host);
		free(m->live[i].dev);
	}
	m->nlive = 0;
	pthread_mutex_destroy(&m->mu);
	return leaked;
}

/* struct tf_mem is large (call-order logs): keep it off the stack. */
static inline struct tf_mem *tf_mem_new(void)
{
	struct tf_mem *m = malloc(sizeof(*m));
	if (m)
		tf_mem_init(m);
	return m;
}

/* tf_mem_fini() + free; returns the number of allocations still live. */
static inline int tf_mem_delete(struct tf_mem *m)
{
	int leaked = tf_mem_fini(m);
	free(m);
	return leaked;
}

#endif /* TASKPROF_TESTS_TRANSPORT_FIXTURES_H */
