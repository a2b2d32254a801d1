/* SPDX-License-Identifier: MIT */
/*
 * registry.c — allocation registry, host snapshots, replay lock (op/
 * registry.h; spec/opprof.md §3.3, §4.4, §4.8, §4.9).
 *
 * The table is a sorted array (binary search by base; interior lookups for
 * the args scan need ordered search, not a hash). Adds and removes shift
 * it: applications hold hundreds of allocations, not millions, and both are
 * rare next to launches.
 *
 * Locks: g_mu guards the table, the live-snapshot list and every snapshot's
 * entries; restore and hash hold it across their copies, so a concurrent
 * remove (which only the window owner can issue while a window is open)
 * cannot unmap host pages under a copy. The copy function is the REAL
 * tp_rt_memcpy, which never calls back into the injector. g_gate_mu
 * guards the gate and the deferred-free queue; it is never taken while
 * holding g_mu or the reverse.
 */
#include "op/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/error.h"

/* Bytes read back per step when hashing device memory. */
#define HASH_CHUNK (4u << 20)

struct snap_ent {
	uintptr_t base;
	size_t size;
	int device;
	uint64_t gen;
	size_t off;   /* into host, page aligned */
	size_t span;  /* host bytes reserved for it, page multiple */
	bool live;
};

struct tp_op_snap {
	struct tp_op_snap *prev, *next; /* g_snaps list */
	int device;
	size_t n;
	struct snap_ent *e;
	char *host;
	size_t host_len;
	/* Spilled (tp_op_snap_take_file()): the bytes live in this file at
	 * each entry's off, host is NULL; -1 otherwise. */
	int fd;
	char *path;
};

/* Bytes moved per step between the device and a spill file. */
#define SPILL_CHUNK (4u << 20)

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tp_op_alloc *g_v;
static size_t g_n, g_cap;
static uint64_t g_gen;
static struct tp_op_snap *g_snaps;
static tp_op_copy_fn g_copy;

/* ---- table ------------------------------------------------------------------ */

/* First index whose base is >= @a (g_mu held). */
static size_t lower_bound(uintptr_t a)
{
	size_t lo = 0, hi = g_n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g_v[mid].base < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The entry containing @a, or NULL (g_mu held). */
static struct tp_op_alloc *find_containing(uintptr_t a)
{
	size_t i = lower_bound(a);
	if (i < g_n && g_v[i].base == a)
		return &g_v[i];
	if (i == 0)
		return NULL;
	struct tp_op_alloc *e = &g_v[i - 1];
	return a - e->base < e->size ? e : NULL;
}

static size_t page_size(void)
{
	/* Cached by whichever thread asks first; every thread computes the
	 * same value, so relaxed loads and stores suffice (atomic only so
	 * that concurrent first calls are not a data race). */
	static _Atomic size_t ps;
	size_t v = atomic_load_explicit(&ps, memory_order_relaxed);
	if (!v) {
		v = (size_t)sysconf(_SC_PAGESIZE);
		atomic_store_explicit(&ps, v, memory_order_relaxed);
	}
	return v;
}

/* Drop allocation @base from every live snapshot and give its host pages
 * back (g_mu held). */
static void drop_from_snaps(uintptr_t base)
{
	for (struct tp_op_snap *s = g_snaps; s; s = s->next)
		for (size_t i = 0; i < s->n; i++) {
			struct snap_ent *e = &s->e[i];
			if (!e->live || e->base != base)
				continue;
			e->live = false;
			if (s->host)
				(void)madvise(s->host + e->off, e->span, MADV_DONTNEED);
		}
}

void tp_op_reg_set_copy(tp_op_copy_fn fn)
{
	pthread_mutex_lock(&g_mu);
	g_copy = fn;
	pthread_mutex_unlock(&g_mu);
}

int tp_op_reg_add(void *p, size_t size, int device, uint64_t *gen_out)
{
	if (!p || !size)
		return tp_set_error(-EINVAL, "tp_op_reg_add: %s", !p ? "p is NULL" : "size 0");
	uintptr_t a = (uintptr_t)p;
	pthread_mutex_lock(&g_mu);
	size_t i = lower_bound(a);
	if (i < g_n && g_v[i].base == a) {
		/* A free we never saw: the old generation must not come back. */
		drop_from_snaps(a);
	} else {
		if (g_n == g_cap) {
			size_t cap = g_cap ? 2 * g_cap : 64;
			struct tp_op_alloc *nv = realloc(g_v, cap * sizeof(*nv));
			if (!nv) {
				pthread_mutex_unlock(&g_mu);
				return tp_set_error(-ENOMEM, "allocation registry: out of memory "
						    "(%zu entries)", g_n);
			}
			g_v = nv;
			g_cap = cap;
		}
		memmove(&g_v[i + 1], &g_v[i], (g_n - i) * sizeof(*g_v));
		g_n++;
	}
	uint64_t gen = ++g_gen;
	g_v[i] = (struct tp_op_alloc){ .base = a, .size = size, .device = device, .gen = gen };
	pthread_mutex_unlock(&g_mu);
	if (gen_out)
		*gen_out = gen;
	return 0;
}

int tp_op_reg_remove(void *p)
{
	uintptr_t a = (uintptr_t)p;
	pthread_mutex_lock(&g_mu);
	size_t i = lower_bound(a);
	if (i >= g_n || g_v[i].base != a) {
		pthread_mutex_unlock(&g_mu);
		return -ENOENT;
	}
	drop_from_snaps(a);
	memmove(&g_v[i], &g_v[i + 1], (g_n - i - 1) * sizeof(*g_v));
	g_n--;
	pthread_mutex_unlock(&g_mu);
	return 0;
}

int tp_op_reg_lookup(const void *addr, struct tp_op_alloc *out)
{
	pthread_mutex_lock(&g_mu);
	struct tp_op_alloc *e = find_containing((uintptr_t)addr);
	if (e && out)
		*out = *e;
	pthread_mutex_unlock(&g_mu);
	return e ? 0 : -ENOENT;
}

size_t tp_op_reg_count(void)
{
	pthread_mutex_lock(&g_mu);
	size_t n = g_n;
	pthread_mutex_unlock(&g_mu);
	return n;
}

uint64_t tp_op_reg_footprint(int device)
{
	uint64_t sum = 0;
	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < g_n; i++)
		if (device < 0 || g_v[i].device == device)
			sum += g_v[i].size;
	pthread_mutex_unlock(&g_mu);
	return sum;
}

size_t tp_op_safe_read(const void *src, void *dst, size_t n)
{
	if (!src || !n)
		return 0;
	size_t ps = page_size(), done = 0;
	/* One remote iovec per page: process_vm_readv copies them in order
	 * and stops at the first that faults. */
	while (done < n) {
		struct iovec remote[16], local;
		int nr = 0;
		uintptr_t a = (uintptr_t)src + done, end = (uintptr_t)src + n;
		for (; a < end && nr < 16; nr++) {
			uintptr_t pe = (a & ~(uintptr_t)(ps - 1)) + ps;
			uintptr_t e = pe < end ? pe : end;
			remote[nr] = (struct iovec){ .iov_base = (void *)a, .iov_len = e - a };
			a = e;
		}
		local = (struct iovec){ .iov_base = (char *)dst + done,
					.iov_len = a - ((uintptr_t)src + done) };
		ssize_t got = process_vm_readv(getpid(), &local, 1, remote, (unsigned long)nr, 0);
		if (got <= 0)
			break;
		done += (size_t)got;
		if ((size_t)got < local.iov_len)
			break;
	}
	return done;
}

/* Up to @window bytes of @args as 8-byte words into @w (the blob's size
 * is unknown: the read stops at an unreadable page). */
static size_t read_args_words(const void *args, size_t window, uint64_t *w)
{
	if (!args)
		return 0;
	if (window > TP_OP_ARGS_WINDOW)
		window = TP_OP_ARGS_WINDOW;
	const void *start = (const void *)((uintptr_t)args & ~(uintptr_t)7);
	return tp_op_safe_read(start, w, window) / 8;
}

/* Indices of the entries of @device reached by the words of @args, each
 * once, into @idx (g_mu held). */
static size_t args_entries(int device, const void *args, size_t window, size_t *idx)
{
	uint64_t w[TP_OP_ARGS_WINDOW / 8];
	size_t nw = read_args_words(args, window, w), n = 0;
	for (size_t i = 0; i < nw; i++) {
		struct tp_op_alloc *e = find_containing((uintptr_t)w[i]);
		if (!e || e->device != device)
			continue;
		size_t k = (size_t)(e - g_v);
		bool dup = false;
		for (size_t j = 0; j < n && !dup; j++)
			dup = idx[j] == k;
		if (!dup)
			idx[n++] = k;
	}
	return n;
}

void tp_op_reg_args_footprint(int device, const void *args, size_t window, uint64_t *bytes,
			      size_t *count)
{
	size_t idx[TP_OP_ARGS_WINDOW / 8];
	uint64_t sum = 0;
	pthread_mutex_lock(&g_mu);
	size_t n = args_entries(device, args, window, idx);
	for (size_t i = 0; i < n; i++)
		sum += g_v[idx[i]].size;
	pthread_mutex_unlock(&g_mu);
	if (bytes)
		*bytes = sum;
	if (count)
		*count = n;
}

/* Writable mappings of the process a kernel's stray write could hit and
 * only the kernel writes while it runs, sorted by start (/proc/self/maps
 * lists them in address order). */
struct wmap {
	uintptr_t lo, hi;
};

/* One line of /proc/self/maps: "lo-hi perms offset dev inode   path". */
struct mline {
	unsigned long lo, hi;
	char perms[8];
	const char *path; /* "" for anonymous memory */
};

/* glibc's HEAP_MAX_SIZE on 64-bit: a thread arena's heap is aligned to it. */
#define ARENA_ALIGN (64ul << 20)
/* Largest guard page area below a thread stack taken for one. */
#define GUARD_MAX (1ul << 20)

static bool no_access_anon(const struct mline *l)
{
	return !strncmp(l->perms, "---", 3) && !l->path[0];
}

/* Whether the writable mapping @l (after @p, before @n: NULL at the ends)
 * is memory a kernel's stray write could hit and nothing but the kernel
 * writes while it runs. Counted: the executable's own data (@exe),
 * [heap], and anonymous memory (host buffers, device memory). Not the
 * main thread's [stack] (the caller's own part is tp_op_args_outside()'s
 * @stack_lo..@stack_hi).
 * Not counted: the data of shared libraries (the loader, the C library
 * and taskprof itself change theirs while a kernel runs) and the
 * anonymous .bss right after it; glibc thread arenas (anonymous memory
 * aligned to 64 MiB with the inaccessible rest of its 64 MiB right after
 * it) and thread stacks
 * (anonymous memory right above a small inaccessible guard area): the
 * simulator's threads write them. */
static bool map_counts(const struct mline *l, const struct mline *p, const struct mline *n,
		       const char *exe)
{
	const size_t el = strlen(exe);
	if (!strcmp(l->path, "[heap]"))
		return true;
	if (l->path[0] == '[')
		return false;
	if (l->path[0])
		return el && !strncmp(l->path, exe, el) && (!l->path[el] || l->path[el] == ' ');
	if (p && p->hi == l->lo && no_access_anon(p) && p->hi - p->lo <= GUARD_MAX)
		return false;
	if (n && n->lo == l->hi && no_access_anon(n) && l->lo % ARENA_ALIGN == 0 &&
	    n->hi - l->lo == ARENA_ALIGN)
		return false;
	if (p && p->hi == l->lo && p->path[0] == '/')
		return el && !strncmp(p->path, exe, el);
	return true;
}

/* Read /proc/self/maps; the writable mappings that count (map_counts())
 * into *@out (malloc'd, caller frees). Return: their number (0 when the
 * file cannot be read). */
static size_t writable_maps(struct wmap **out)
{
	*out = NULL;
	char exe[4096];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = '\0';
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t cap = 64 << 10, len = 0;
	char *buf = malloc(cap + 1);
	for (;;) {
		if (!buf)
			break;
		if (len == cap) {
			char *nb = realloc(buf, 2 * cap + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (!buf)
		return 0;
	buf[len] = '\0';
	size_t nl = 0;
	for (size_t i = 0; i < len; i++)
		nl += buf[i] == '\n';
	struct mline *ls = calloc(nl + 1, sizeof(*ls));
	size_t n = 0;
	for (char *line = buf; ls && line && *line;) {
		char *nlp = strchr(line, '\n');
		if (nlp)
			*nlp = '\0';
		int pos = 0;
		struct mline *l = &ls[n];
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &l->lo, &l->hi, l->perms, &pos) >= 3) {
			l->path = pos > 0 ? line + pos : "";
			n++;
		}
		line = nlp ? nlp + 1 : NULL;
	}
	size_t nm = 0;
	struct wmap *m = ls ? calloc(n + 1, sizeof(*m)) : NULL;
	for (size_t i = 0; m && i < n; i++)
		if (ls[i].perms[1] == 'w' &&
		    map_counts(&ls[i], i ? &ls[i - 1] : NULL, i + 1 < n ? &ls[i + 1] : NULL, exe))
			m[nm++] = (struct wmap){ (uintptr_t)ls[i].lo, (uintptr_t)ls[i].hi };
	free(ls);
	free(buf);
	*out = m;
	return m ? nm : 0;
}

static bool in_maps(const struct wmap *m, size_t n, uintptr_t a)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m[mid].hi <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && m[lo].lo <= a && a < m[lo].hi;
}

size_t tp_op_args_outside(int device, const void *args, size_t window, uintptr_t stack_lo,
			  uintptr_t stack_hi, struct tp_op_arg_ref *out, size_t max)
{
	uint64_t w[TP_OP_ARGS_WINDOW / 8];
	size_t nw = read_args_words(args, window, w), found = 0;
	const uintptr_t start = (uintptr_t)args & ~(uintptr_t)7;
	struct wmap *m = NULL;
	size_t nm = 0;
	bool maps_read = false;
	for (size_t i = 0; i < nw; i++) {
		/* A word that starts before @args (a misaligned blob). */
		if (start + 8 * i < (uintptr_t)args)
			continue;
		const uintptr_t v = (uintptr_t)w[i];
		/* Small integers (sizes, counts, floats' low halves) and
		 * values past the user address space (two floats, tags). */
		if (v < ((uintptr_t)64 << 10) || v > (uintptr_t)0x7fffffffffffull)
			continue;
		int dev = -1;
		pthread_mutex_lock(&g_mu);
		struct tp_op_alloc *e = find_containing(v);
		if (e)
			dev = e->device;
		pthread_mutex_unlock(&g_mu);
		if (e && dev == device)
			continue;
		if (!e && !(v >= stack_lo && v < stack_hi)) {
			if (!maps_read) {
				nm = writable_maps(&m);
				maps_read = true;
			}
			if (!in_maps(m, nm, v))
				continue;
		}
		if (found < max)
			out[found] = (struct tp_op_arg_ref){
				.offset = start + 8 * i - (uintptr_t)args, .value = v, .device = dev
			};
		found++;
	}
	free(m);
	return found;
}

void tp_op_reg_drop_device(int device)
{
	pthread_mutex_lock(&g_mu);
	size_t j = 0;
	for (size_t i = 0; i < g_n; i++) {
		if (g_v[i].device == device)
			drop_from_snaps(g_v[i].base);
		else
			g_v[j++] = g_v[i];
	}
	g_n = j;
	pthread_mutex_unlock(&g_mu);
}

void tp_op_reg_clear(void)
{
	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < g_n; i++)
		drop_from_snaps(g_v[i].base);
	g_n = 0;
	pthread_mutex_unlock(&g_mu);
}

/* ---- snapshots ------------------------------------------------------------- */

/* Write @n bytes at @off of @fd, whole (short writes continued). */
static int pwrite_all(int fd, const void *buf, size_t n, off_t off)
{
	const char *p = buf;
	while (n) {
		ssize_t w = pwrite(fd, p, n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -ENOSPC;
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

/* Read @n bytes at @off of @fd, whole. */
static int pread_all(int fd, void *buf, size_t n, off_t off)
{
	char *p = buf;
	while (n) {
		ssize_t r = pread(fd, p, n, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO; /* the file is shorter than what was written */
		p += r;
		n -= (size_t)r;
		off += r;
	}
	return 0;
}

/*
 * Whether @bytes more fit in a file in @path's folder: the free space of
 * its file system (statvfs, for an unprivileged user) and the file size
 * limit (RLIMIT_FSIZE: past it a write raises SIGXFSZ, which kills the
 * application). Return: 0, or -ENOSPC / -EFBIG with the message.
 */
static int spill_fits(const char *path, uint64_t bytes)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), slash ? "/" : ".");
	struct statvfs vf;
	if (statvfs(dir, &vf) == 0) {
		uint64_t avail = (uint64_t)vf.f_bavail * (uint64_t)vf.f_frsize;
		/* A margin for the report written next to it. */
		uint64_t margin = 16ull << 20;
		if (avail < bytes || avail - bytes < margin)
			return tp_set_error(-ENOSPC, "spilling the snapshot to %s needs %llu bytes "
					    "and %llu more kept free for the report; its file "
					    "system has %llu free (No space left on device)",
					    path, (unsigned long long)bytes,
					    (unsigned long long)margin, (unsigned long long)avail);
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)rl.rlim_cur < bytes)
		return tp_set_error(-EFBIG, "spilling the snapshot to %s needs %llu bytes; the file "
				    "size limit (ulimit -f) is %llu bytes (File too large)", path,
				    (unsigned long long)bytes, (unsigned long long)rl.rlim_cur);
	return 0;
}

static void snap_free(struct tp_op_snap *s)
{
	if (!s)
		return;
	if (s->host)
		munmap(s->host, s->host_len);
	if (s->fd >= 0)
		close(s->fd);
	if (s->path)
		(void)unlink(s->path);
	free(s->path);
	free(s->e);
	free(s);
}

/* tp_op_snap_take() and tp_op_snap_take_file() (@spill: the file, or
 * NULL for host memory). */
static int snap_take(int device, enum tp_op_snap_scope scope, const void *args, size_t window,
		     const char *spill, struct tp_op_snap **out)
{
	*out = NULL;
	struct tp_op_snap *s = calloc(1, sizeof(*s));
	if (!s)
		return tp_set_error(-ENOMEM, "snapshot: out of host memory");
	s->device = device;
	s->fd = -1;
	size_t ps = page_size();
	int rc = 0;
	char *bounce = NULL;
	pthread_mutex_lock(&g_mu);
	if (!g_copy) {
		rc = tp_set_error(-ENOSYS, "snapshot: no device copy function set");
		goto fail;
	}
	size_t idx[TP_OP_ARGS_WINDOW / 8], nsel = 0;
	if (scope == TP_OP_SNAP_ARGS) {
		nsel = args_entries(device, args, window, idx);
	} else {
		for (size_t i = 0; i < g_n; i++)
			nsel += g_v[i].device == device;
	}
	s->e = calloc(nsel ? nsel : 1, sizeof(*s->e));
	if (!s->e) {
		rc = tp_set_error(-ENOMEM, "snapshot: out of host memory (%zu entries)", nsel);
		goto fail;
	}
	size_t off = 0;
	for (size_t i = 0, k = 0; k < nsel; i++) {
		const struct tp_op_alloc *a;
		if (scope == TP_OP_SNAP_ARGS)
			a = &g_v[idx[k]];
		else if (g_v[i].device == device)
			a = &g_v[i];
		else
			continue;
		size_t span = (a->size + ps - 1) & ~(ps - 1);
		s->e[k++] = (struct snap_ent){ .base = a->base, .size = a->size,
					       .device = a->device, .gen = a->gen,
					       .off = off, .span = span, .live = true };
		off += span;
	}
	s->n = nsel;
	s->host_len = off;
	if (spill) {
		/* A file in the launch's dump/ folder: checked first, then
		 * its blocks reserved (no sparse file whose pages could fail
		 * to materialise later), then written through a bounce
		 * buffer with pwrite (errors are return values, never a
		 * SIGBUS as through a mapping). */
		if ((rc = spill_fits(spill, off)))
			goto fail;
		s->path = strdup(spill);
		if (!s->path) {
			rc = tp_set_error(-ENOMEM, "snapshot: out of host memory");
			goto fail;
		}
		s->fd = open(spill, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (s->fd < 0) {
			rc = tp_set_error(-errno, "%s: cannot create the snapshot file: %s", spill,
					  strerror(errno));
			free(s->path);
			s->path = NULL; /* not ours: never unlinked */
			goto fail;
		}
		if (off && (rc = posix_fallocate(s->fd, 0, (off_t)off)) != 0 &&
		    rc != EOPNOTSUPP && rc != EINVAL) {
			rc = tp_set_error(-rc, "%s: cannot reserve %zu bytes for the snapshot: %s",
					  spill, off, strerror(rc));
			goto fail;
		}
		rc = 0;
		size_t bl = off < SPILL_CHUNK ? off : SPILL_CHUNK;
		if (bl) {
			void *m = mmap(NULL, bl, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED) {
				rc = tp_set_error(-ENOMEM, "snapshot: cannot map %zu bytes of host "
						  "memory: %s", bl, strerror(errno));
				goto fail;
			}
			bounce = m;
		}
		for (size_t i = 0; i < s->n && !rc; i++) {
			struct snap_ent *e = &s->e[i];
			for (size_t o = 0; o < e->size && !rc; o += SPILL_CHUNK) {
				size_t len = e->size - o < SPILL_CHUNK ? e->size - o : SPILL_CHUNK;
				rc = g_copy(bounce, (const char *)e->base + o, len,
					    TP_RT_MEMCPY_DEVICE_TO_HOST);
				if (rc) {
					rc = tp_set_error(rc, "snapshot of allocation %p (%zu bytes, "
							  "device %d) failed: %s", (void *)e->base,
							  e->size, e->device, tp_last_error());
					break;
				}
				rc = pwrite_all(s->fd, bounce, len, (off_t)(e->off + o));
				if (rc)
					rc = tp_set_error(rc, "%s: writing the snapshot failed: %s",
							  spill, strerror(-rc));
			}
		}
		if (bounce)
			munmap(bounce, bl);
		bounce = NULL;
		if (rc)
			goto fail;
	} else if (off) {
		/* Anonymous host memory, outside the device pool (§4.9). */
		void *m = mmap(NULL, off, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (m == MAP_FAILED) {
			rc = tp_set_error(-ENOMEM, "snapshot: cannot map %zu bytes of host memory: "
					  "%s", off, strerror(errno));
			goto fail;
		}
		s->host = m;
	}
	for (size_t i = 0; s->host && i < s->n; i++) {
		struct snap_ent *e = &s->e[i];
		rc = g_copy(s->host + e->off, (const void *)e->base, e->size,
			    TP_RT_MEMCPY_DEVICE_TO_HOST);
		if (rc) {
			rc = tp_set_error(rc, "snapshot of allocation %p (%zu bytes, device %d) "
					  "failed: %s", (void *)e->base, e->size, e->device,
					  tp_last_error());
			goto fail;
		}
	}
	/* Published: a later remove drops its entries. */
	s->next = g_snaps;
	if (g_snaps)
		g_snaps->prev = s;
	g_snaps = s;
	pthread_mutex_unlock(&g_mu);
	*out = s;
	return 0;
fail:
	pthread_mutex_unlock(&g_mu);
	snap_free(s);
	return rc;
}

int tp_op_snap_take(int device, enum tp_op_snap_scope scope, const void *args, size_t window,
		    struct tp_op_snap **out)
{
	return snap_take(device, scope, args, window, NULL, out);
}

int tp_op_snap_take_file(int device, const char *path, struct tp_op_snap **out)
{
	if (!path || !*path) {
		*out = NULL;
		return tp_set_error(-EINVAL, "tp_op_snap_take_file: no path");
	}
	return snap_take(device, TP_OP_SNAP_ALL, NULL, 0, path, out);
}

bool tp_op_snap_spilled(const struct tp_op_snap *s)
{
	return s && s->fd >= 0;
}

int tp_op_snap_restore(struct tp_op_snap *s, uint64_t *restored)
{
	uint64_t sum = 0;
	int rc = 0;
	/* A spilled snapshot comes back through a bounce buffer. */
	char *bounce = NULL;
	size_t bl = 0;
	if (s->fd >= 0) {
		for (size_t i = 0; i < s->n; i++)
			if (s->e[i].live && s->e[i].size > bl)
				bl = s->e[i].size;
		if (bl > SPILL_CHUNK)
			bl = SPILL_CHUNK;
		if (bl) {
			void *m = mmap(NULL, bl, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED)
				return tp_set_error(-ENOMEM, "restore from %s: cannot map %zu bytes "
						    "of host memory", s->path, bl);
			bounce = m;
		}
	}
	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < s->n && !rc; i++) {
		struct snap_ent *e = &s->e[i];
		if (!e->live)
			continue;
		/* Only into the very allocation it was taken from: same base
		 * and generation (a remove already cleared live; this check
		 * guards a free the hooks never saw). */
		size_t j = lower_bound(e->base);
		if (j >= g_n || g_v[j].base != e->base || g_v[j].gen != e->gen) {
			e->live = false;
			continue;
		}
		if (bounce) {
			for (size_t o = 0; o < e->size && !rc; o += bl) {
				size_t len = e->size - o < bl ? e->size - o : bl;
				rc = pread_all(s->fd, bounce, len, (off_t)(e->off + o));
				if (rc) {
					rc = tp_set_error(rc, "restore of allocation %p (%zu bytes, "
							  "device %d) failed: reading %s: %s",
							  (void *)e->base, e->size, e->device,
							  s->path, strerror(-rc));
					break;
				}
				rc = g_copy((char *)e->base + o, bounce, len,
					    TP_RT_MEMCPY_HOST_TO_DEVICE);
			}
		} else {
			rc = g_copy((void *)e->base, s->host + e->off, e->size,
				    TP_RT_MEMCPY_HOST_TO_DEVICE);
		}
		if (rc && !strstr(tp_last_error(), "restore of allocation"))
			rc = tp_set_error(rc, "restore of allocation %p (%zu bytes, device %d, "
					  "generation %llu) failed: %s", (void *)e->base, e->size,
					  e->device, (unsigned long long)e->gen, tp_last_error());
		else if (!rc)
			sum += e->size;
	}
	pthread_mutex_unlock(&g_mu);
	if (bounce)
		munmap(bounce, bl);
	if (restored)
		*restored = sum;
	return rc;
}

uint64_t tp_op_hash64(uint64_t h, const void *p, size_t n)
{
	const uint64_t prime = 0x100000001b3ull;
	const unsigned char *b = p;
	/* Four independent lanes: the multiply latency of one FNV chain
	 * would cap the hash at a few GB/s. */
	uint64_t l0 = h, l1 = h ^ 0x9e3779b97f4a7c15ull, l2 = h ^ 0xc2b2ae3d27d4eb4full,
		 l3 = h ^ 0x165667b19e3779f9ull;
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		uint64_t w[4];
		memcpy(w, b + i, sizeof(w));
		l0 = (l0 ^ w[0]) * prime;
		l1 = (l1 ^ w[1]) * prime;
		l2 = (l2 ^ w[2]) * prime;
		l3 = (l3 ^ w[3]) * prime;
	}
	for (; i < n; i++)
		l0 = (l0 ^ b[i]) * prime;
	uint64_t x = l0 ^ (l1 * 31) ^ (l2 * 131) ^ (l3 * 8191) ^ n;
	/* splitmix64 finaliser: every input bit reaches every output bit. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

int tp_op_snap_hash(const struct tp_op_snap *s, uint64_t *hash)
{
	uint64_t h = TP_OP_HASH_SEED;
	size_t chunk = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].live && s->e[i].size > chunk)
			chunk = s->e[i].size;
	if (chunk > HASH_CHUNK)
		chunk = HASH_CHUNK;
	char *buf = NULL;
	if (chunk) {
		void *m = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (m == MAP_FAILED)
			return tp_set_error(-ENOMEM, "output hash: cannot map %zu bytes", chunk);
		buf = m;
	}
	int rc = 0;
	uint64_t hashed = 0;
	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < s->n && !rc; i++) {
		const struct snap_ent *e = &s->e[i];
		if (!e->live)
			continue;
		hashed += e->size;
		for (size_t off = 0; off < e->size && !rc; off += chunk) {
			size_t len = e->size - off < chunk ? e->size - off : chunk;
			/* D2H: a5sim's host must not read device memory. */
			rc = g_copy(buf, (const char *)e->base + off, len,
				    TP_RT_MEMCPY_DEVICE_TO_HOST);
			if (rc)
				rc = tp_set_error(rc, "output hash: reading allocation %p (%zu "
						  "bytes) failed: %s", (void *)e->base, e->size,
						  tp_last_error());
			else
				h = tp_op_hash64(h, buf, len);
		}
	}
	pthread_mutex_unlock(&g_mu);
	if (buf)
		munmap(buf, chunk);
	/* Nothing snapshotted: 0 says "no output hash", not the seed's hash
	 * of zero bytes (which would look like a real, stable output). */
	*hash = hashed ? h : 0;
	return rc;
}

uint64_t tp_op_snap_bytes(const struct tp_op_snap *s)
{
	uint64_t sum = 0;
	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].live)
			sum += s->e[i].size;
	pthread_mutex_unlock(&g_mu);
	return sum;
}

size_t tp_op_snap_entries(const struct tp_op_snap *s)
{
	size_t n = 0;
	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < s->n; i++)
		n += s->e[i].live;
	pthread_mutex_unlock(&g_mu);
	return n;
}

void tp_op_snap_release(struct tp_op_snap *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&g_mu);
	if (s->prev)
		s->prev->next = s->next;
	else
		g_snaps = s->next;
	if (s->next)
		s->next->prev = s->prev;
	pthread_mutex_unlock(&g_mu);
	snap_free(s);
}

/* ---- gate and deferred frees ---------------------------------------------- */

static pthread_mutex_t g_gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_gate_cv = PTHREAD_COND_INITIALIZER;
static int g_shared;       /* calls inside the gate */
static int g_excl_waiting; /* windows waiting to open */
static bool g_excl;        /* a window is open */
static _Thread_local bool tl_window; /* this thread owns the open window */
/* Queued range frees, each with the thread whose range queued it: a pop
 * frees its own thread's only, never those of a range another thread still
 * has open (its replay at that pop would use the freed memory). */
struct deferred {
	void *p;
	int device;     /* the allocation's */
	uint64_t owner; /* defer_owner() of the queuing thread */
};
static struct deferred *g_deferred;
static size_t g_ndeferred, g_capdeferred;
static _Atomic uint64_t g_defer_ids;
static _Thread_local uint64_t tl_defer_id;

/* The calling thread's queue owner id, unique in the process (a pthread_t
 * may be reused by a later thread; this never is). */
static uint64_t defer_owner(void)
{
	/* relaxed: a unique number is all that is needed. */
	if (!tl_defer_id)
		tl_defer_id = atomic_fetch_add_explicit(&g_defer_ids, 1, memory_order_relaxed) + 1;
	return tl_defer_id;
}

int tp_op_gate_enter(void)
{
	if (tl_window)
		return 0;
	pthread_mutex_lock(&g_gate_mu);
	while (g_excl || g_excl_waiting)
		pthread_cond_wait(&g_gate_cv, &g_gate_mu);
	g_shared++;
	pthread_mutex_unlock(&g_gate_mu);
	return 1;
}

void tp_op_gate_exit(int token)
{
	if (!token)
		return;
	pthread_mutex_lock(&g_gate_mu);
	if (--g_shared == 0)
		pthread_cond_broadcast(&g_gate_cv);
	pthread_mutex_unlock(&g_gate_mu);
}

void tp_op_window_begin(void)
{
	pthread_mutex_lock(&g_gate_mu);
	g_excl_waiting++;
	while (g_excl || g_shared)
		pthread_cond_wait(&g_gate_cv, &g_gate_mu);
	g_excl_waiting--;
	g_excl = true;
	pthread_mutex_unlock(&g_gate_mu);
	tl_window = true;
}

void tp_op_window_end(void)
{
	tl_window = false;
	pthread_mutex_lock(&g_gate_mu);
	g_excl = false;
	pthread_cond_broadcast(&g_gate_cv);
	pthread_mutex_unlock(&g_gate_mu);
}

bool tp_op_window_owned(void)
{
	return tl_window;
}

/* -EINVAL (the runtime's double-free error, platform/dev_memory.c) when
 * @p of @device is queued; g_gate_mu held. */
static int refuse_queued(void *p, int device)
{
	for (size_t i = 0; i < g_ndeferred; i++)
		if (g_deferred[i].p == p && g_deferred[i].device == device)
			return tp_set_error(-EINVAL, "tp_rt_free: device %d memory: free of %p "
					    "refused: double free (already freed inside a range; "
					    "that free runs after the range's last pass)",
					    device, p);
	return 0;
}

int tp_op_deferred_refuse(void *p, int device)
{
	pthread_mutex_lock(&g_gate_mu);
	int rc = refuse_queued(p, device);
	pthread_mutex_unlock(&g_gate_mu);
	return rc;
}

int tp_op_defer_free(void *p, int device)
{
	pthread_mutex_lock(&g_gate_mu);
	/* Already queued (by this range or another thread's): the first free
	 * stands, so this one is a double free, refused at the call. */
	int rc = refuse_queued(p, device);
	if (rc) {
		pthread_mutex_unlock(&g_gate_mu);
		return rc;
	}
	if (g_ndeferred == g_capdeferred) {
		size_t cap = g_capdeferred ? 2 * g_capdeferred : 16;
		struct deferred *nv = realloc(g_deferred, cap * sizeof(*nv));
		if (!nv) {
			pthread_mutex_unlock(&g_gate_mu);
			return tp_set_error(-ENOMEM, "deferred free queue: out of memory");
		}
		g_deferred = nv;
		g_capdeferred = cap;
	}
	g_deferred[g_ndeferred++] = (struct deferred){ p, device, defer_owner() };
	pthread_mutex_unlock(&g_gate_mu);
	return 0;
}

size_t tp_op_deferred_count(void)
{
	pthread_mutex_lock(&g_gate_mu);
	size_t n = 0;
	const uint64_t me = defer_owner();
	for (size_t i = 0; i < g_ndeferred; i++)
		n += g_deferred[i].owner == me;
	pthread_mutex_unlock(&g_gate_mu);
	return n;
}

int tp_op_deferred_flush(int (*free_fn)(void *p, int device))
{
	pthread_mutex_lock(&g_gate_mu);
	struct deferred *v = malloc((g_ndeferred ? g_ndeferred : 1) * sizeof(*v));
	if (!v) {
		pthread_mutex_unlock(&g_gate_mu);
		return tp_set_error(-ENOMEM, "deferred frees: out of memory");
	}
	/* Take this thread's, in queue order; keep the others'. */
	size_t n = 0, keep = 0;
	const uint64_t me = defer_owner();
	for (size_t i = 0; i < g_ndeferred; i++) {
		if (g_deferred[i].owner == me)
			v[n++] = g_deferred[i];
		else
			g_deferred[keep++] = g_deferred[i];
	}
	g_ndeferred = keep;
	pthread_mutex_unlock(&g_gate_mu);
	int first = 0;
	for (size_t i = 0; i < n; i++) {
		(void)tp_op_reg_remove(v[i].p);
		int rc = free_fn(v[i].p, v[i].device);
		if (rc && !first)
			first = rc;
	}
	free(v);
	return first;
}

void tp_op_registry_atfork_child(void)
{
	/* Only the forking thread exists in the child: a lock another
	 * parent thread held stays held forever unless re-initialised. */
	pthread_mutex_init(&g_mu, NULL);
	pthread_mutex_init(&g_gate_mu, NULL);
	pthread_cond_init(&g_gate_cv, NULL);
	g_shared = 0;
	g_excl_waiting = 0;
	g_excl = false;
	tl_window = false;
	free(g_deferred);
	g_deferred = NULL;
	g_ndeferred = g_capdeferred = 0;
}
