/* SPDX-License-Identifier: MIT */
/*
 * robust — regression cases of the `taskprof op` injector found by an
 * adversarial review (tests/cli/test_op_robust.sh). One mode per run:
 *
 *   indirect  args = { small device buffer, host pointer to a vec }: the
 *             accumulating kernel writes memory the args reach only
 *             indirectly. Over --replay-mem-limit nothing may be replayed
 *             (a partial snapshot would add `in` to `out` per pass).
 *   noalloc   one launch of a kernel touching no device memory, nothing
 *             allocated (the snapshot is empty: output_hash must be 0).
 *   kmalloc   block 0 of the kernel calls tp_rt_malloc + tp_rt_free
 *             (allowed from kernels) — must not deadlock under replay.
 *   kleak     block 0 allocates 8 MiB and keeps it in a device slot; the
 *             host frees it and then allocates 50 MiB (run on a 64 MiB
 *             device): replayed executions must not leak their 8 MiB.
 *   kfree     block 0 frees a block the host allocated: the replayed
 *             executions must not free it (the restore needs it).
 *             `kleak range` / `kfree range`: the launch inside a range
 *             ("kmem"), for range replay.
 *   kfreenext block 0 of "kfree_k" frees a 1 MiB block the host allocated
 *             (in the application's own execution), then "next_k"
 *             accumulates: next_k's snapshot must not hold the freed
 *             block (its launch.txt snapshot_bytes under 1 MiB).
 *   kdfree    block 0 allocates 4 KiB and frees it twice; prints what the
 *             second free returned in each execution (replays included):
 *             the runtime's -EINVAL (-22) every time.
 *   kbadfree  block 0 frees 64 bytes into the host's block, then the
 *             block twice: [-22 0 -22] in every execution, replays too.
 *   kill      THREADS threads launch "kill_k" EACH times concurrently.
 *   reset     tp_rt_reset_device inside a range: prints "reset rc=<n>".
 *   unpopped  a range pushed on the main thread and one on a second
 *             thread that is still running at exit, neither popped.
 *   dotnames  ".hidden" and "../up": names whose folder must not be hidden
 *             or climb out of the device folder.
 *   swapnames "a+b" and "a_b" (both folder name a_b), in the opposite
 *             order when TASKPROF_PASS is odd: application replay must not
 *             take one for the other.
 *   names     "my kernel<1>" and "my_kernel_1_": two real names that
 *             sanitise to the same directory name.
 *   badnames  "k\xff\x01x" (an invalid UTF-8 byte and a control
 *             character) and "ok_\xc3\xa9" (valid UTF-8, e acute).
 *   rangebad  inside a range: an H2D copy of 100 MB into a 4 KiB buffer and
 *             a free of an address no allocation starts at; prints the
 *             return codes, which must be the runtime's (-EFAULT, -EINVAL)
 *             under range replay too (no crash reading the host bytes).
 *   rangefail one range of 10 accumulating launches and, before the 6th, a
 *             launch whose kernel fails a tile op: the launches after the
 *             failing one still run (the result is 10 * in, as unprofiled);
 *             prints the pop's return code.
 *   reusefd P closes descriptors 2..255 (its stderr, taskprof.log's),
 *             opens file P (it gets descriptor 2), launches "fd_acc" once
 *             and writes 4096 'x' into P: nothing else may land in P.
 *   exitpass  one launch of "exitpass_k", whose block 0 ends the process
 *             with _exit(3) when the kernel runs a second time (a replay
 *             pass): its launch folder is left without launch.txt.
 *   closefds [fsize] one launch of "cfd_acc", then every descriptor
 *             from 3 to 1023 closed (the injector's launches file and
 *             status pipe among them), then another: the injector must
 *             open its file again and list both launches. With "fsize",
 *             20 launches come first, and before the last one the file
 *             size limit (RLIMIT_FSIZE, SIGXFSZ ignored) is set to the
 *             size the launches file (launches_<pid>.txt beside
 *             TASKPROF_CONFIG) has then: its next line cannot be
 *             written (EFBIG), which must still reach taskprof op.
 *   exit70    one launch of "exit70_acc", checked, then exit(70): the
 *             application's own status 70 (EX_SOFTWARE), which taskprof
 *             op must pass on, not take for its injector's failure.
 *   dfree     inside a range: allocate, launch, free the block twice,
 *             copy 16 bytes into it, pop; prints the four return codes,
 *             which must be the runtime's (0, -EINVAL, -EFAULT, 0) under
 *             range replay too.
 *   hangpass  one launch of "hang_k", whose kernel spins for ever when it
 *             runs a second time (a replay pass): a SIGINT must still end
 *             the run promptly.
 *   overrun   one launch of "overrun_k", whose block 0 writes 0xFF over
 *             the 64 KiB after the end of out (a bug a profiled kernel may
 *             have): the tool's instrumentation buffer, allocated after
 *             out, gets overwritten, which must not crash the application.
 *             out itself is right, so the result is checked as usual.
 *   hanglast  the same on its 6th execution (with --warm-up 1 and 4
 *             passes: the application's own, after the measured passes).
 *   exitrace US a thread launches "race_k" in a loop while main() launches
 *             it once after US microseconds and returns: the exit must
 *             not wait for the injector's reader thread for ever (a start
 *             racing the exit's stop left a reader nobody told to quit),
 *             and its atexit handler (100 ms, then "atexit done") must
 *             run, whatever profile the exit cuts short.
 *
 * OP_OUT_FILE gets out's bytes (indirect, kmalloc, kill, reset). Exit
 * 0 / 1 (wrong result) / 2 (device error), see op_app.h.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_app.h"

#define APP "robust"
#define N 16384u
#define BLOCKS 4u
#define THREADS 4u
#define EACH 4u

struct ind_args {
	float *small;              /* device: the only device pointer in the blob */
	const struct op_app_vec *v; /* host: reaches in / out indirectly */
};

static void indirect_k(uint32_t block_idx, uint32_t block_dim, void *p)
{
	const struct ind_args *a = p;
	op_app_elementwise(a->v, block_idx, block_dim, 1);
}

static void empty_k(uint32_t block_idx, uint32_t block_dim, void *p)
{
	(void)block_idx;
	(void)block_dim;
	(void)p;
}

static void kmalloc_k(uint32_t block_idx, uint32_t block_dim, void *p)
{
	if (block_idx == 0) {
		void *t = NULL;
		if (tp_rt_malloc(&t, 4096) == 0)
			(void)tp_rt_free(t);
	}
	op_app_elementwise(p, block_idx, block_dim, 1);
}

/* kleak / kfree: out += in, and block 0 also allocates 8 MiB and keeps
 * its address in *slot (kleak), or frees the block at *slot (kfree). */
struct kmem_args {
	struct op_app_vec v;
	void **slot; /* device: one pointer */
	int free;
};

static void kmem_k(uint32_t block_idx, uint32_t block_dim, void *p)
{
	struct kmem_args *a = p;
	if (block_idx == 0) {
		if (a->free) {
			(void)tp_rt_free(*a->slot);
		} else {
			void *t = NULL;
			if (tp_rt_malloc(&t, 8u << 20) == 0)
				*a->slot = t;
		}
	}
	op_app_elementwise(&a->v, block_idx, block_dim, 1);
}

/* in, out uploaded; want = out0 + times * in. */
static int setup(float **din, float **dout, float *want, uint32_t times)
{
	static float in[N], out[N];
	for (uint32_t i = 0; i < N; i++) {
		in[i] = (float)((int)(i % 11u) - 5);
		out[i] = (float)(i % 6u);
		want[i] = out[i] + (float)times * in[i];
	}
	int rc = op_app_upload(din, in, N);
	if (!rc)
		rc = op_app_upload(dout, out, N);
	return rc;
}

static int finish(const char *what, float *dout, const float *want)
{
	static float out[N];
	int rc;
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(out, dout, sizeof(out), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0)
		return op_app_fail(APP, "download", rc);
	uint32_t bad = op_app_check(APP, out, want, N);
	if ((rc = op_app_dump(APP, out, sizeof(out))) != 0)
		return rc;
	printf("%s %s: checksum %016llx: %s\n", APP, what,
	       (unsigned long long)op_app_fnv(out, sizeof(out)), bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}

static int m_indirect(void)
{
	static float want[N];
	float *din = NULL, *dout = NULL, *small = NULL;
	int rc = setup(&din, &dout, want, 1);
	if (!rc)
		rc = tp_rt_malloc((void **)&small, 4096);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	static struct op_app_vec v;
	v = (struct op_app_vec){ .in = din, .out = dout, .n = N };
	/* Static and padded: the bytes after the blob (which a scan of the
	 * args might read) hold no device pointer either. */
	static struct {
		struct ind_args a;
		char pad[512];
	} blob;
	blob.a = (struct ind_args){ small, &v };
	const struct tp_rt_launch_attr attr = { .name = "ind_acc", .cores = TP_RT_CORES_AIV };
	if ((rc = tp_rt_launch_ex(indirect_k, BLOCKS, &blob.a, &attr)) != 0)
		return op_app_fail(APP, "launch ind_acc", rc);
	return finish("indirect", dout, want);
}

static int m_noalloc(void)
{
	int rc = op_app_launch(empty_k, "empty_k", 1, NULL);
	if (!rc)
		rc = tp_rt_synchronize();
	if (rc)
		return op_app_fail(APP, "launch empty_k", rc);
	printf("%s noalloc: ok\n", APP);
	return 0;
}

/* One launch of accumulating kernel @fn named @name (mode @tag): out +=
 * in, checked against the host. */
static int one_launch(const char *tag, tp_rt_kernel_fn fn, const char *name)
{
	static float want[N];
	float *din = NULL, *dout = NULL;
	int rc = setup(&din, &dout, want, 1);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	if ((rc = op_app_launch(fn, name, BLOCKS, &v)) != 0)
		return op_app_fail(APP, name, rc);
	return finish(tag, dout, want);
}

static int m_kmalloc(void)
{
	return one_launch("kmalloc", kmalloc_k, "kmalloc_k");
}

/* kdfree: block 0 allocates 4 KiB and frees it twice; what the second
 * free returned in each execution (replayed ones too) lands in host
 * memory, which no restore touches. */
static _Atomic int g_kdf_n;
static int g_kdf_rc[32];

static void kdfree_k(uint32_t block_idx, uint32_t block_dim, void *p)
{
	if (block_idx == 0) {
		void *t = NULL;
		if (tp_rt_malloc(&t, 4096) == 0) {
			int first = tp_rt_free(t);
			int second = tp_rt_free(t);
			int i = atomic_fetch_add(&g_kdf_n, 1);
			if (i < 32)
				g_kdf_rc[i] = first ? 1000 + first : second;
		}
	}
	op_app_elementwise(p, block_idx, block_dim, 1);
}

/* kbadfree: block 0 frees 64 bytes into the host's block (interior),
 * then the block twice; what the three frees returned in each execution
 * lands in host memory: [-22 0 -22] every time, as the runtime answers. */
static _Atomic int g_kbf_n;
static int g_kbf_rc[32][3];

static void kbadfree_k(uint32_t block_idx, uint32_t block_dim, void *p)
{
	struct kmem_args *a = p;
	if (block_idx == 0) {
		char *blk = *a->slot;
		int i = atomic_fetch_add(&g_kbf_n, 1);
		int r0 = tp_rt_free(blk + 64), r1 = tp_rt_free(blk), r2 = tp_rt_free(blk);
		if (i < 32) {
			g_kbf_rc[i][0] = r0;
			g_kbf_rc[i][1] = r1;
			g_kbf_rc[i][2] = r2;
		}
	}
	op_app_elementwise(&a->v, block_idx, block_dim, 1);
}

static int m_kbadfree(void)
{
	static float want[N];
	float *din = NULL, *dout = NULL;
	int rc = setup(&din, &dout, want, 1);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	void **slot = NULL;
	void *blk = NULL;
	if ((rc = tp_rt_malloc((void **)&slot, sizeof(void *))) != 0 ||
	    (rc = tp_rt_malloc(&blk, 4096)) != 0)
		return op_app_fail(APP, "allocate", rc);
	if ((rc = tp_rt_memcpy(slot, &blk, sizeof(blk), TP_RT_MEMCPY_HOST_TO_DEVICE)))
		return op_app_fail(APP, "upload the slot", rc);
	struct kmem_args a = { { .in = din, .out = dout, .n = N }, slot, 1 };
	if ((rc = op_app_launch(kbadfree_k, "kbadfree_k", BLOCKS, &a)) != 0 ||
	    (rc = tp_rt_synchronize()) != 0)
		return op_app_fail(APP, "launch", rc);
	int n = atomic_load(&g_kbf_n);
	printf("%s kbadfree: %d executions:", APP, n);
	for (int i = 0; i < n && i < 32; i++)
		printf(" [%d %d %d]", g_kbf_rc[i][0], g_kbf_rc[i][1], g_kbf_rc[i][2]);
	printf("\n");
	(void)tp_rt_free(slot);
	return finish("kbadfree", dout, want);
}

static int m_kdfree(void)
{
	int rc = one_launch("kdfree", kdfree_k, "kdfree_k");
	int n = atomic_load(&g_kdf_n);
	printf("%s kdfree: %d executions, second free returned:", APP, n);
	for (int i = 0; i < n && i < 32; i++)
		printf(" %d", g_kdf_rc[i]);
	printf("\n");
	return rc;
}

static struct op_app_vec g_kv;

/* kleak: the kernel allocates 8 MiB once (block 0) and keeps it in a
 * device slot; the host frees it, then allocates 50 MiB: on a device of
 * TASKPROF_DEVICE_MEM_MB=64 that fits only if no replayed execution left
 * its own 8 MiB behind. kfree: the host allocates a scratch block, the
 * kernel frees it; the application must still end well under replay. */
static int m_kmem(int do_free, int in_range)
{
	static float want[N];
	float *din = NULL, *dout = NULL;
	int rc = setup(&din, &dout, want, 1);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	void **slot = NULL;
	void *scratch = NULL;
	if ((rc = tp_rt_malloc((void **)&slot, sizeof(void *))) != 0 ||
	    (do_free && (rc = tp_rt_malloc(&scratch, 4096)) != 0))
		return op_app_fail(APP, "allocate", rc);
	if ((rc = tp_rt_memcpy(slot, &scratch, sizeof(scratch), TP_RT_MEMCPY_HOST_TO_DEVICE)))
		return op_app_fail(APP, "upload the slot", rc);
	struct kmem_args a = { { .in = din, .out = dout, .n = N }, slot, do_free };
	if (in_range && (rc = tp_rt_range_push("kmem")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	if ((rc = op_app_launch(kmem_k, do_free ? "kfree_k" : "kleak_k", BLOCKS, &a)) != 0 ||
	    (in_range && (rc = tp_rt_range_pop()) != 0) || (rc = tp_rt_synchronize()) != 0)
		return op_app_fail(APP, "launch", rc);
	if (!do_free) {
		void *got = NULL;
		if ((rc = tp_rt_memcpy(&got, slot, sizeof(got), TP_RT_MEMCPY_DEVICE_TO_HOST)) ||
		    !got || (rc = tp_rt_free(got)))
			return op_app_fail(APP, "free the kernel's block", rc ? rc : -1);
		void *big = NULL;
		rc = tp_rt_malloc(&big, 50u << 20);
		printf("%s kleak: 50 MiB after the kernel's 8 MiB was freed: rc=%d\n", APP, rc);
		if (rc)
			return op_app_fail(APP, "allocate 50 MiB", rc);
		(void)tp_rt_free(big);
	}
	(void)tp_rt_free(slot);
	return finish(do_free ? "kfree" : "kleak", dout, want);
}

/* kfreenext: see the top. */
static int m_kfreenext(void)
{
	static float want[N];
	float *din = NULL, *dout = NULL;
	int rc = setup(&din, &dout, want, 2);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	void **slot = NULL;
	void *big = NULL;
	if ((rc = tp_rt_malloc((void **)&slot, sizeof(void *))) != 0 ||
	    (rc = tp_rt_malloc(&big, 1u << 20)) != 0)
		return op_app_fail(APP, "allocate", rc);
	if ((rc = tp_rt_memcpy(slot, &big, sizeof(big), TP_RT_MEMCPY_HOST_TO_DEVICE)))
		return op_app_fail(APP, "upload the slot", rc);
	struct kmem_args a = { { .in = din, .out = dout, .n = N }, slot, 1 };
	if ((rc = op_app_launch(kmem_k, "kfree_k", BLOCKS, &a)) != 0 ||
	    (rc = tp_rt_synchronize()) != 0 ||
	    (rc = op_app_launch(op_app_accumulate, "next_k", BLOCKS, &a.v)) != 0)
		return op_app_fail(APP, "launch", rc);
	(void)tp_rt_free(slot);
	return finish("kfreenext", dout, want);
}

static void *kill_thread(void *p)
{
	(void)p;
	for (uint32_t i = 0; i < EACH; i++)
		if (op_app_launch(op_app_accumulate, "kill_k", BLOCKS, &g_kv))
			break;
	return NULL;
}

static int m_kill(void)
{
	static float want[N];
	float *din = NULL, *dout = NULL;
	int rc = setup(&din, &dout, want, THREADS * EACH);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	g_kv = (struct op_app_vec){ .in = din, .out = dout, .n = N };
	pthread_t t[THREADS];
	for (uint32_t i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, kill_thread, NULL))
			return op_app_fail(APP, "pthread_create", -1);
	for (uint32_t i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return finish("kill", dout, want);
}

/* exitrace: the looping launcher; it never returns (the process ends
 * under it). */
static void *race_thread(void *p)
{
	(void)p;
	for (;;)
		if (op_app_launch(op_app_accumulate, "race_k", BLOCKS, &g_kv))
			break;
	return NULL;
}

/* exitrace: exit work of the application's own, which a profile cut
 * short by the exit must not prevent. */
static void exitrace_atexit(void)
{
	usleep(100000);
	printf("%s: exitrace: atexit done\n", APP);
	fflush(stdout);
}

static int m_exitrace(unsigned us)
{
	static float want[N];
	float *din = NULL, *dout = NULL;
	int rc = setup(&din, &dout, want, 1);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	g_kv = (struct op_app_vec){ .in = din, .out = dout, .n = N };
	atexit(exitrace_atexit);
	pthread_t t;
	if (pthread_create(&t, NULL, race_thread, NULL))
		return op_app_fail(APP, "pthread_create", -1);
	usleep(us);
	if ((rc = op_app_launch(op_app_accumulate, "race_k", BLOCKS, &g_kv)) != 0)
		return op_app_fail(APP, "launch race_k", rc);
	printf("%s: exitrace: returning from main\n", APP);
	return 0;
}

static int m_reset(void)
{
	static float want[N];
	float *din = NULL, *dout = NULL;
	int rc = setup(&din, &dout, want, 1);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	if ((rc = tp_rt_range_push("rs")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	if ((rc = op_app_launch(op_app_accumulate, "reset_acc", BLOCKS, &v)) != 0)
		return op_app_fail(APP, "launch reset_acc", rc);
	int rrc = tp_rt_reset_device(0);
	printf("reset rc=%d msg=%s\n", rrc, rrc ? tp_last_error() : "");
	if (rrc == 0) {
		/* Not refused (unprofiled): the memory is gone; end the range. */
		(void)tp_rt_range_pop();
		return 0;
	}
	if ((rc = tp_rt_range_pop()) != 0)
		return op_app_fail(APP, "tp_rt_range_pop", rc);
	return finish("reset", dout, want);
}

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_ready;

static void *unpopped_thread(void *p)
{
	const struct op_app_vec *v = p;
	if (tp_rt_range_push("side") == 0)
		(void)op_app_launch(op_app_accumulate, "side_acc", BLOCKS, (void *)v);
	pthread_mutex_lock(&g_mu);
	g_ready = 1;
	pthread_cond_broadcast(&g_cv);
	pthread_mutex_unlock(&g_mu);
	for (;;)
		pause(); /* still running when main exits */
	return NULL;
}

static int m_unpopped(void)
{
	static float want[N];
	float *din = NULL, *dout = NULL;
	int rc = setup(&din, &dout, want, 0);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	static struct op_app_vec v;
	v = (struct op_app_vec){ .in = din, .out = dout, .n = N };
	pthread_t t;
	if (pthread_create(&t, NULL, unpopped_thread, &v))
		return op_app_fail(APP, "pthread_create", -1);
	pthread_mutex_lock(&g_mu);
	while (!g_ready)
		pthread_cond_wait(&g_cv, &g_mu);
	pthread_mutex_unlock(&g_mu);
	if ((rc = tp_rt_range_push("never")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	for (int i = 0; i < 2; i++)
		if ((rc = op_app_launch(op_app_accumulate, "never_acc", BLOCKS, &v)) != 0)
			return op_app_fail(APP, "launch never_acc", rc);
	printf("%s unpopped: exiting with 2 ranges open\n", APP);
	fflush(stdout);
	exit(0);
}

/* Two launches of the accumulating kernel named @n1 and @n2 (mode @tag). */
static int two_names(const char *tag, const char *n1, const char *n2)
{
	static float want[N];
	float *din = NULL, *dout = NULL;
	int rc = setup(&din, &dout, want, 2);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	if ((rc = op_app_launch(op_app_accumulate, n1, BLOCKS, &v)) != 0 ||
	    (rc = op_app_launch(op_app_accumulate, n2, BLOCKS, &v)) != 0)
		return op_app_fail(APP, "launch", rc);
	return finish(tag, dout, want);
}

static int m_names(void)
{
	return two_names("names", "my kernel<1>", "my_kernel_1_");
}

static int m_badnames(void)
{
	return two_names("badnames", "k\xff\x01x", "ok_\xc3\xa9");
}

static int m_dotnames(void)
{
	return two_names("dotnames", ".hidden", "../up");
}

/* swapnames: "a+b" then "a_b" (one folder name, two kernels), swapped
 * in the runs of an odd TASKPROF_PASS (application replay). */
static int m_swapnames(void)
{
	const char *pass = getenv("TASKPROF_PASS");
	const bool odd = pass && atoi(pass) % 2;
	printf("%s swapnames: TASKPROF_PASS=%s, %s\n", APP, pass ? pass : "unset",
	       odd ? "a_b first" : "a+b first");
	return odd ? two_names("swapnames", "a_b", "a+b") : two_names("swapnames", "a+b", "a_b");
}

static int m_rangebad(void)
{
	float *d = NULL;
	static float host[1024];
	int rc = tp_rt_malloc((void **)&d, sizeof(host));
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	if ((rc = tp_rt_range_push("bad")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	int mc = tp_rt_memcpy(d, host, 100u << 20, TP_RT_MEMCPY_HOST_TO_DEVICE);
	int fr = tp_rt_free((void *)(uintptr_t)0x1234);
	int pop = tp_rt_range_pop();
	printf("%s rangebad: memcpy=%d free=%d pop=%d\n", APP, mc, fr, pop);
	return tp_rt_free(d) ? 2 : 0;
}

static void failing_k(uint32_t block_idx, uint32_t block_dim, void *p)
{
	(void)block_idx;
	(void)block_dim;
	(void)p;
	tp_vdup(&(struct tp_tile){ 0 }, 1.0f); /* not a tile: the launch fails */
}

static int m_rangefail(void)
{
	static float want[N];
	float *din = NULL, *dout = NULL;
	int rc = setup(&din, &dout, want, 10);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	if ((rc = tp_rt_range_push("fail")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	int bad = 0;
	for (int i = 0; i < 10; i++) {
		if (i == 5)
			bad = op_app_launch(failing_k, "fail_k", 1, &v);
		if ((rc = op_app_launch(op_app_accumulate, "fail_acc", BLOCKS, &v)) != 0)
			return op_app_fail(APP, "launch fail_acc", rc);
	}
	int pop = tp_rt_range_pop();
	printf("%s rangefail: failing launch %s, pop %s\n", APP, bad ? "failed" : "returned 0",
	       pop ? "failed" : "returned 0");
	return finish("rangefail", dout, want);
}

static int m_reusefd(const char *path)
{
	static float want[N];
	float *din = NULL, *dout = NULL;
	int rc = setup(&din, &dout, want, 1);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	for (int fd = 2; fd < 256; fd++)
		close(fd);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd != 2)
		return 2; /* nowhere to say it: the exit status does */
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	if (op_app_launch(op_app_accumulate, "fd_acc", BLOCKS, &v) || tp_rt_synchronize())
		return 2;
	char buf[4096];
	memset(buf, 'x', sizeof(buf));
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || close(fd))
		return 2;
	return 0;
}

static int m_closefds(bool fsize)
{
	static float want[N];
	const uint32_t before = fsize ? 20 : 1;
	float *din = NULL, *dout = NULL;
	int rc = setup(&din, &dout, want, before + 1);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	for (uint32_t i = 0; i < before; i++)
		if ((rc = op_app_launch(op_app_accumulate, "cfd_acc", BLOCKS, &v)) != 0)
			return op_app_fail(APP, "cfd_acc", rc);
	if ((rc = tp_rt_synchronize()) != 0)
		return op_app_fail(APP, "cfd_acc", rc);
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	const char *cfg = getenv("TASKPROF_CONFIG");
	const char *slash = cfg ? strrchr(cfg, '/') : NULL;
	if (fsize) {
		char path[4200];
		struct stat st;
		snprintf(path, sizeof(path), "%.*s/launches_%ld.txt", slash ? (int)(slash - cfg) : 1,
			 slash ? cfg : ".", (long)getpid());
		struct rlimit lim = { 0, RLIM_INFINITY };
		if (stat(path, &st)) {
			perror(APP ": the launches file");
			return 2;
		}
		lim.rlim_cur = (rlim_t)st.st_size;
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &lim)) {
			perror(APP ": setrlimit");
			return 2;
		}
	}
	if ((rc = op_app_launch(op_app_accumulate, "cfd_acc", BLOCKS, &v)) != 0)
		return op_app_fail(APP, "cfd_acc", rc);
	return finish("closefds", dout, want);
}

static _Atomic uint32_t exitpass_runs;

static void exitpass_k(uint32_t block_idx, uint32_t block_dim, void *p)
{
	/* relaxed: a lone counter; only block 0 counts. */
	if (block_idx == 0 && atomic_fetch_add_explicit(&exitpass_runs, 1,
							memory_order_relaxed) == 1)
		_exit(3);
	op_app_elementwise(p, block_idx, block_dim, 1);
}

static void overrun_k(uint32_t block_idx, uint32_t block_dim, void *p)
{
	const struct op_app_vec *v = p;
	op_app_elementwise(v, block_idx, block_dim, 1);
	if (block_idx == 0)
		memset(v->out + v->n, 0xFF, 64u << 10);
}

static int m_overrun(void)
{
	return one_launch("overrun", overrun_k, "overrun_k");
}

static int m_exitpass(void)
{
	return one_launch("exitpass", exitpass_k, "exitpass_k");
}

static int m_exit70(void)
{
	int rc = one_launch("exit70", op_app_accumulate, "exit70_acc");
	if (rc)
		return rc;
	fflush(stdout);
	exit(70);
}

static int m_dfree(void)
{
	static float want[N];
	float *din = NULL, *dout = NULL, *t = NULL;
	int rc = setup(&din, &dout, want, 1);
	if (!rc)
		rc = tp_rt_malloc((void **)&t, 4096);
	if (rc)
		return op_app_fail(APP, "allocate", rc);
	struct op_app_vec v = { .in = din, .out = dout, .n = N };
	if ((rc = tp_rt_range_push("dfree")) != 0)
		return op_app_fail(APP, "tp_rt_range_push", rc);
	if ((rc = op_app_launch(op_app_accumulate, "dfree_acc", BLOCKS, &v)) != 0)
		return op_app_fail(APP, "launch dfree_acc", rc);
	int f1 = tp_rt_free(t);
	int f2 = tp_rt_free(t);
	static const float h[4] = { 1, 2, 3, 4 };
	int cp = tp_rt_memcpy(t, h, sizeof(h), TP_RT_MEMCPY_HOST_TO_DEVICE);
	int pop = tp_rt_range_pop();
	printf("%s dfree: free1=%d free2=%d copy=%d pop=%d\n", APP, f1, f2, cp, pop);
	return finish("dfree", dout, want);
}

/* Block 0 spins for ever on execution @nth (from 0) of the kernel that
 * counts in @runs; the others accumulate. */
static void hang_on(_Atomic uint32_t *runs, uint32_t nth, uint32_t block_idx,
		    uint32_t block_dim, void *p)
{
	/* relaxed: a lone counter; only block 0 counts. */
	if (block_idx == 0 && atomic_fetch_add_explicit(runs, 1, memory_order_relaxed) == nth)
		for (;;)
			pause();
	op_app_elementwise(p, block_idx, block_dim, 1);
}

static _Atomic uint32_t hang_runs, hanglast_runs;

/* Hangs on its 2nd execution: a replay pass. */
static void hang_k(uint32_t block_idx, uint32_t block_dim, void *p)
{
	hang_on(&hang_runs, 1, block_idx, block_dim, p);
}

static int m_hangpass(void)
{
	return one_launch("hangpass", hang_k, "hang_k");
}

/* Hangs on its 6th execution: with --warm-up 1 and 4 passes, the
 * application's own execution after the passes. */
static void hanglast_k(uint32_t block_idx, uint32_t block_dim, void *p)
{
	hang_on(&hanglast_runs, 5, block_idx, block_dim, p);
}

static int m_hanglast(void)
{
	return one_launch("hanglast", hanglast_k, "hanglast_k");
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	if (!strcmp(m, "indirect"))
		return m_indirect();
	if (!strcmp(m, "noalloc"))
		return m_noalloc();
	if (!strcmp(m, "kmalloc"))
		return m_kmalloc();
	if (!strcmp(m, "kill"))
		return m_kill();
	if (!strcmp(m, "kdfree"))
		return m_kdfree();
	if (!strcmp(m, "kbadfree"))
		return m_kbadfree();
	if (!strcmp(m, "kfreenext"))
		return m_kfreenext();
	const int in_range = argc > 2 && !strcmp(argv[2], "range");
	if (!strcmp(m, "kleak"))
		return m_kmem(0, in_range);
	if (!strcmp(m, "kfree"))
		return m_kmem(1, in_range);
	if (!strcmp(m, "reset"))
		return m_reset();
	if (!strcmp(m, "unpopped"))
		return m_unpopped();
	if (!strcmp(m, "names"))
		return m_names();
	if (!strcmp(m, "badnames"))
		return m_badnames();
	if (!strcmp(m, "dotnames"))
		return m_dotnames();
	if (!strcmp(m, "swapnames"))
		return m_swapnames();
	if (!strcmp(m, "exitpass"))
		return m_exitpass();
	if (!strcmp(m, "rangebad"))
		return m_rangebad();
	if (!strcmp(m, "rangefail"))
		return m_rangefail();
	if (!strcmp(m, "exit70"))
		return m_exit70();
	if (!strcmp(m, "closefds"))
		return m_closefds(argc > 2 && !strcmp(argv[2], "fsize"));
	if (!strcmp(m, "overrun"))
		return m_overrun();
	if (!strcmp(m, "dfree"))
		return m_dfree();
	if (!strcmp(m, "hangpass"))
		return m_hangpass();
	if (!strcmp(m, "hanglast"))
		return m_hanglast();
	if (!strcmp(m, "reusefd") && argc > 2)
		return m_reusefd(argv[2]);
	if (!strcmp(m, "exitrace") && argc > 2)
		return m_exitrace((unsigned)strtoul(argv[2], NULL, 10));
	fprintf(stderr, "usage: %s indirect|noalloc|kmalloc|kleak [range]|kfree [range]|kfreenext|kdfree|kbadfree|kill|reset|unpopped|names|dotnames|swapnames|"
			"exitpass|rangebad|rangefail|exit70|closefds [fsize]|overrun|dfree|hangpass|hanglast|"
			"reusefd FILE|exitrace US\n", APP);
	return 2;
}
