/* SPDX-License-Identifier: MIT */
/*
 * runtime/orch.c — the orchestrator: submit, dummy, alloc_tensors, scopes
 * (spec/runtime-model.md §2.4, §2.6; runtime/orch.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "platform/dev_memory.h"
#include "platform/device.h"
#include "runtime/engine_internal.h"

/* ---- args ------------------------------------------------------------ */

void tp_args_init(struct tp_task_args *a)
{
	a->n_tensors = 0;
	a->n_scalars = 0;
	a->err = 0;
	a->block_num = 1;
	a->has_pred = 0;
	a->pred_op = 0;
	a->pred_size = 0;
	a->pred_addr = 0;
	a->pred_target = 0;
	a->n_deps = 0;
}

int tp_args_set_dependencies(struct tp_task_args *a, const tp_task_id *ids, uint32_t n)
{
	if (n > TP_MAX_EXPLICIT_DEPS || (n && !ids)) {
		if (!a->err)
			a->err = tp_set_error(-E2BIG, "runtime: %u explicit dependencies (at most "
					      "%d)", n, TP_MAX_EXPLICIT_DEPS);
		return -E2BIG;
	}
	for (uint32_t i = 0; i < n; i++)
		if (!tp_task_id_valid(ids[i])) {
			if (!a->err)
				a->err = tp_set_error(-EINVAL, "runtime: explicit dependency %u "
						      "is not a task id (0x%llx)", i,
						      (unsigned long long)ids[i]);
			return -EINVAL;
		}
	for (uint32_t i = 0; i < n; i++)
		a->deps[i] = ids[i];
	a->n_deps = n;
	return 0;
}

int tp_args_set_block_num(struct tp_task_args *a, uint32_t n)
{
	if (n == 0 || n > TP_MAX_BLOCK_NUM) {
		if (!a->err)
			a->err = tp_set_error(-EINVAL, "runtime: block_num %u (1..%u)", n,
					      TP_MAX_BLOCK_NUM);
		return -EINVAL;
	}
	a->block_num = n;
	return 0;
}

int tp_args_set_predicate_addr(struct tp_task_args *a, const void *addr, uint32_t size,
			       enum tp_pred_op op, int64_t target)
{
	if (!addr || (size != 1 && size != 2 && size != 4 && size != 8) ||
	    (int)op < TP_PRED_EQ || op > TP_PRED_LE) {
		if (!a->err)
			a->err = tp_set_error(-EINVAL, "runtime: bad predicate (size %u, op %d)",
					      size, (int)op);
		return -EINVAL;
	}
	a->has_pred = 1;
	a->pred_op = (uint8_t)op;
	a->pred_size = (uint8_t)size;
	a->pred_addr = (uint64_t)(uintptr_t)addr;
	a->pred_target = target;
	return 0;
}

int tp_args_set_predicate(struct tp_task_args *a, const struct tp_tensor *t, uint64_t elem,
			  enum tp_pred_op op, int64_t target)
{
	size_t es = t ? tp_dtype_size((enum tp_dtype)t->dtype) : 0;
	if (!t || t->buffer_addr == 0 || es == 0 ||
	    (t->start_offset + elem + 1) * es > t->buffer_size) {
		if (!a->err)
			a->err = tp_set_error(-EINVAL, "runtime: bad predicate operand");
		return -EINVAL;
	}
	/* Inside the view, not only inside its buffer: element @elem of a
	 * one-row view of a matrix is not the next row's first. @elem counts
	 * buffer elements from start_offset, so it is decomposed along the
	 * view's strides (outermost first); a layout whose strides do not
	 * decrease is not checked beyond its buffer. */
	uint64_t n = 1, q = elem;
	bool inside = true, checked = true;
	for (uint32_t d = 0; d < t->ndims && d < TP_MAX_TENSOR_DIMS; d++) {
		n *= t->shapes[d];
		uint64_t st = t->strides[d];
		if (st == 0 || (d > 0 && st > t->strides[d - 1])) {
			checked = false;
			continue;
		}
		if (q / st >= t->shapes[d])
			inside = false;
		q %= st;
	}
	if (checked && (!inside || q != 0)) {
		if (!a->err)
			a->err = tp_set_error(-EINVAL, "runtime: predicate element %" PRIu64
					      " is outside its tensor view of %" PRIu64
					      " elements", elem, n);
		return -EINVAL;
	}
	return tp_args_set_predicate_addr(
		a, (const void *)(uintptr_t)(t->buffer_addr + (t->start_offset + elem) * es),
		(uint32_t)es, op, target);
}

static int add_tensor(struct tp_task_args *a, const struct tp_tensor *t, enum tp_arg_tag tag)
{
	if (a->n_tensors >= TP_MAX_TENSOR_ARGS) {
		if (!a->err)
			a->err = tp_set_error(-E2BIG, "runtime: more than %d tensor args",
					      TP_MAX_TENSOR_ARGS);
		return -1;
	}
	if (!t || t->ndims == 0 || t->ndims > TP_MAX_TENSOR_DIMS) {
		if (!a->err)
			a->err = tp_set_error(-EINVAL, "runtime: bad tensor arg %u",
					      a->n_tensors);
		return -1;
	}
	a->tensors[a->n_tensors] = *t;
	a->tags[a->n_tensors] = (uint8_t)tag;
	return (int)a->n_tensors++;
}

int tp_args_add_input(struct tp_task_args *a, const struct tp_tensor *t)
{
	return add_tensor(a, t, TP_ARG_INPUT);
}

int tp_args_add_inout(struct tp_task_args *a, const struct tp_tensor *t)
{
	return add_tensor(a, t, TP_ARG_INOUT);
}

int tp_args_add_output_existing(struct tp_task_args *a, const struct tp_tensor *t)
{
	return add_tensor(a, t, TP_ARG_OUTPUT_EXISTING);
}

int tp_args_add_no_dep(struct tp_task_args *a, const struct tp_tensor *t)
{
	return add_tensor(a, t, TP_ARG_NO_DEP);
}

int tp_args_add_output(struct tp_task_args *a, enum tp_dtype dtype, uint32_t ndims,
		       const uint32_t *shapes)
{
	struct tp_tensor t;
	if (tp_tensor_make_contiguous(&t, 0, dtype, ndims, shapes)) {
		if (!a->err)
			a->err = tp_set_error(-EINVAL, "runtime: bad OUTPUT create-info "
					      "(arg %u)", a->n_tensors);
		return -1;
	}
	return add_tensor(a, &t, TP_ARG_OUTPUT);
}

int tp_args_add_scalar(struct tp_task_args *a, uint64_t v)
{
	if (a->n_scalars >= TP_MAX_SCALAR_ARGS) {
		if (!a->err)
			a->err = tp_set_error(-E2BIG, "runtime: more than %d scalar args",
					      TP_MAX_SCALAR_ARGS);
		return -1;
	}
	a->scalars[a->n_scalars] = v;
	return (int)a->n_scalars++;
}

/* ---- helpers --------------------------------------------------------- */

/* The kernel ABI's GM tile of @t: [Π leading dims, last dim]. */
static int tensor_tile(const struct tp_tensor *t, struct tp_tile *tile)
{
	enum tp_dtype dt = (enum tp_dtype)t->dtype;
	size_t es = tp_dtype_size(dt);
	uint32_t nd = t->ndims, rows, cols, stride;
	if (es == 0 || nd == 0 || nd > TP_MAX_TENSOR_DIMS)
		return tp_set_error(-EINVAL, "runtime: tensor with dtype %u and %u dims: expected "
				    "a known dtype and 1..%d dims", (unsigned)t->dtype, nd,
				    TP_MAX_TENSOR_DIMS);
	if (nd == 1) {
		rows = t->shapes[0];
		cols = 1;
		stride = t->strides[0];
	} else {
		if (t->strides[nd - 1] != 1)
			return tp_set_error(-EINVAL, "runtime: tensor's last stride is %u: a kernel "
					    "tile needs 1", t->strides[nd - 1]);
		cols = t->shapes[nd - 1];
		rows = t->shapes[nd - 2];
		stride = t->strides[nd - 2];
		for (int k = (int)nd - 3; k >= 0; k--) {
			if ((uint64_t)t->strides[k] !=
			    (uint64_t)t->strides[k + 1] * t->shapes[k + 1])
				return tp_set_error(-EINVAL, "runtime: tensor dim %d: stride %u is "
						    "not stride %u x shape %u of the next dim (a "
						    "kernel tile needs the leading dims packed)",
						    k, t->strides[k], t->strides[k + 1],
						    t->shapes[k + 1]);
			rows *= t->shapes[k];
		}
	}
	uint64_t off = t->start_offset * es;
	if (off >= t->buffer_size || t->buffer_addr == 0)
		return tp_set_error(-EINVAL, "runtime: tensor view starts at byte %llu of a "
				    "%llu-byte buffer%s", (unsigned long long)off,
				    (unsigned long long)t->buffer_size,
				    t->buffer_addr ? "" : " at address 0");
	return tp_tile_init(tile, TP_MEM_GM, (uint8_t *)(uintptr_t)t->buffer_addr + off,
			    (size_t)(t->buffer_size - off), dt, rows, cols, stride);
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static int scope_push(struct tp_scope *sc, struct tp_slot *s)
{
	if (sc->n == sc->cap) {
		uint32_t cap = sc->cap ? sc->cap * 2 : 64;
		struct tp_slot **t = realloc(sc->tasks, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		sc->tasks = t;
		sc->cap = cap;
	}
	sc->tasks[sc->n++] = s;
	return 0;
}

/* Whether tensor arg @i of @args lies in memory a kernel may reach: one
 * live allocation of the device's memory (the case's buffers) or a ring's
 * packed-output heap (intermediate tensors). A buffer the orchestration
 * made larger than its allocation, or at an address never allocated, let
 * kernels write past it into the profilers' buffers. */
static int tensor_memory(struct tp_engine *e, const struct tp_task_args *args, uint32_t i)
{
	const struct tp_tensor *t = &args->tensors[i];
	const uint64_t a = t->buffer_addr, n = t->buffer_size;
	for (int r = 0; r < TP_MAX_RING_DEPTH; r++) {
		const struct tp_ring *ring = &e->rings[r];
		uintptr_t h = (uintptr_t)ring->heap;
		if (h && a >= h && n <= ring->heap_size && a - h <= ring->heap_size - n)
			return 0;
	}
	struct tp_dev_mem *mem = tp_device_mem(e->dev);
	if (!mem || tp_dev_mem_owns(mem, (const void *)(uintptr_t)a, (size_t)n))
		return 0;
	char what[64];
	snprintf(what, sizeof(what), "tensor arg %u's buffer", i);
	(void)tp_dev_mem_check(mem, (const void *)(uintptr_t)a, (size_t)n, what);
	return tp_set_error(-EFAULT, "runtime: %s (a kernel task's tensors must lie inside one "
			    "allocation of the case's buffers or the runtime's outputs)",
			    tp_last_error());
}

/* The orchestration this thread runs (tp_orch_thread), or NULL: the API
 * below belongs to the orchestrator thread while its orchestration runs. */
static _Thread_local struct tp_orch *tl_orch;

/* Refuse a call of @fn on @o from any other thread, or after the
 * orchestration returned: the orchestrator's state (scopes, rings, the
 * tensor map) is that thread's alone, and a second thread's submits
 * corrupted it (lost tasks, crashes). @o is not dereferenced: after the
 * run it may be gone. */
static int wrong_thread(const struct tp_orch *o, const char *fn)
{
	if (tl_orch == o)
		return 0;
	return tp_set_error(-EPERM, "runtime: %s called %s: only the orchestration function's "
			    "own thread may call the runtime's API, while it runs", fn,
			    tl_orch ? "on another orchestrator's thread"
			    : "from a thread that is not the orchestrator's (a thread the case "
			      "started, a kernel, or after the orchestration returned)");
}

static inline bool run_failed(struct tp_engine *e)
{
	/* acquire: pairs with tp_engine_fail()'s release store; only a stop
	 * decision here (submit returns -ECANCELED), the failure itself is
	 * read by tp_engine_run. */
	return atomic_load_explicit(&e->failed, memory_order_acquire);
}

/* prepare_task (step 1) + step 3: slot and packed region on the ring of
 * the current scope depth. */
/* host_build_graph: every task in ring 0, whatever the scope depth; no
 * reclaim ever frees room, so a full ring or heap fails the run at once
 * (the graph is never launched). */
static int prepare_hbg(struct tp_orch *o, uint64_t packed, struct tp_ring_alloc *a)
{
	struct tp_engine *e = o->e;
	struct tp_ring *ring = &e->rings[0];
	uint32_t n = tp_ring_current(ring);
	int rc;
	if (n >= e->hbg_cap) {
		rc = -E2BIG;
		tp_engine_fail(e, rc, TP_TASK_ID_INVALID, -1,
			       "runtime: host_build_graph: the graph exceeds %u tasks "
			       "(max_graph_tasks, the one ring's window under this "
			       "runtime); use tensormap_and_ringbuffer (--runtime), whose "
			       "rings reuse their slots", e->hbg_cap);
		return tp_set_error(rc, "%s", e->fail_msg);
	}
	rc = tp_ring_try_alloc(ring, packed, a);
	if (rc == -EAGAIN || rc == -ENOSPC) {
		rc = -ENOSPC;
		tp_engine_fail(e, rc, TP_TASK_ID_INVALID, -1,
			       "runtime: host_build_graph: task %u needs %llu output bytes, "
			       "the ring heap of %llu bytes is full (%llu used); raise "
			       "ring_heap", n, (unsigned long long)packed,
			       (unsigned long long)ring->heap_size,
			       (unsigned long long)ring->heap_top);
		return tp_set_error(rc, "%s", e->fail_msg);
	}
	return rc;
}

static int prepare(struct tp_orch *o, uint64_t packed, struct tp_ring_alloc *a)
{
	struct tp_engine *e = o->e;
	if (o->depth == 0)
		return tp_set_error(-EINVAL, "runtime: submit outside any scope");
	if (e->hbg)
		return prepare_hbg(o, packed, a);
	struct tp_scope *sc = &o->scopes[o->depth - 1];
	uint32_t ring_id = tp_ring_for_scope_depth(o->depth - 1);
	struct tp_ring *ring = &e->rings[ring_id];
	if (sc->n >= ring->window_size - 1)
		return tp_set_error(-EDEADLK,
				    "runtime: scope at depth %u holds %u tasks, ring %u "
				    "window is %u: it can never drain (a scope keeps its "
				    "tasks' slots until it ends: submit in batches of fewer "
				    "tasks, each inside tp_scope_begin() ... tp_scope_end())",
				    o->depth - 1, sc->n, ring_id, ring->window_size);
	/* The ring's back-pressure is one of the run's stall watchdogs:
	 * same budget (e->stall_ns; TP_WATCHDOG_NEVER is
	 * TP_RING_DEADLOCK_NEVER). */
	struct tp_ring_wait w = { .deadlock_ns = e->stall_ns };
	int rc = tp_ring_alloc(ring, packed, &w, a);
	if (rc == -EDEADLK)
		return tp_set_error(rc, "%s; %s", tp_last_error(), TP_ENGINE_STALL_HINT);
	if (rc)
		return rc;
	for (uint32_t r = 0; r < TP_MAX_RING_DEPTH; r++)
		tp_tensormap_sync(&e->tm, r, tp_ring_last_alive(&e->rings[r]));
	return 0;
}

/* Outputs: contiguous tensors in the packed region, owned by @id. */
static void materialise_outputs(struct tp_task_args *args, void *packed, tp_task_id id)
{
	uint64_t off = 0;
	for (uint32_t i = 0; i < args->n_tensors; i++) {
		if (args->tags[i] != TP_ARG_OUTPUT)
			continue;
		struct tp_tensor *t = &args->tensors[i];
		t->buffer_addr = (uint64_t)(uintptr_t)packed + off;
		t->owner_task_id = id;
		off += align_up(t->buffer_size, TP_PACKED_OUTPUT_ALIGN);
	}
}

/* ---- dep_gen (spec §2.4 step 2, §7.1 item 11) ------------------------ */

struct dep_probe {
	const struct tp_orch_hooks *h;
	tp_task_id succ;
	int32_t arg;
};

static bool dep_probe_match(struct tp_tensormap *tm, struct tp_tmap_entry *en,
			    enum tp_overlap ov, void *ud)
{
	(void)tm;
	struct dep_probe *p = ud;
	p->h->on_dep_edge(p->h->ud, en->producer, p->succ, p->arg, TP_DEP_TENSORMAP, (int)ov,
			  &en->view);
	return true;
}

/* Every edge argument @i of task @id gets, in the order of
 * tp_fanin_collect_arg(): the creator edge, then one edge per tensor-map
 * hit. Runs right before that call, so the map is in the state it will
 * see (an INOUT COVERED hit is removed only by the call itself). The
 * probe is a second lookup: it costs only when dep_gen is on. */
static void dep_report_arg(struct tp_engine *e, const struct tp_orch_hooks *h, tp_task_id id,
			   uint32_t i, const struct tp_tensor *t, enum tp_arg_tag tag)
{
	if (tag == TP_ARG_OUTPUT)
		return;
	if (tp_tensormap_task_live(&e->tm, t->owner_task_id))
		h->on_dep_edge(h->ud, t->owner_task_id, id, (int32_t)i, TP_DEP_CREATOR, 0, NULL);
	if ((tag == TP_ARG_INPUT || tag == TP_ARG_INOUT) && !t->manual_dep) {
		struct dep_probe p = { h, id, (int32_t)i };
		tp_tensormap_lookup(&e->tm, t, dep_probe_match, &p);
	}
}

/* Whether @id names a task submitted in this run: a ring the runtime has,
 * and a local id below its next one. */
static bool owner_submitted(struct tp_engine *e, tp_task_id id)
{
	uint32_t ring = tp_task_id_ring(id);
	if (ring >= TP_MAX_RING_DEPTH || !e->rings[ring].slots)
		return false;
	return tp_task_id_local(id) < tp_ring_current(&e->rings[ring]);
}

/* An explicit dependency must name a task submitted before @id. */
static bool dep_submitted(struct tp_engine *e, tp_task_id pid, tp_task_id id)
{
	return tp_task_id_valid(pid) && pid != id && owner_submitted(e, pid);
}

/* ---- submit ---------------------------------------------------------- */

/* A runtime call of the orchestration begins / ends (the stall watch:
 * sched.c orch_stuck()). relaxed: single writer; see orch_calls. */
static inline void call_begin(struct tp_engine *e)
{
	atomic_store_explicit(&e->orch_in_call, true, memory_order_relaxed);
}

static inline void call_end(struct tp_engine *e)
{
	atomic_store_explicit(&e->orch_calls,
			      atomic_load_explicit(&e->orch_calls, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&e->orch_in_call, false, memory_order_relaxed);
}

static int submit_impl(struct tp_orch *o, const int32_t kernel_id[3], struct tp_task_args *args,
		       tp_task_id *out_id);

int tp_submit(struct tp_orch *o, const int32_t kernel_id[3], struct tp_task_args *args,
	      tp_task_id *out_id)
{
	int trc = wrong_thread(o, "tp_submit");
	if (trc)
		return trc;
	call_begin(o->e);
	int rc = submit_impl(o, kernel_id, args, out_id);
	call_end(o->e);
	return rc;
}

static int submit_impl(struct tp_orch *o, const int32_t kernel_id[3], struct tp_task_args *args,
		       tp_task_id *out_id)
{
	struct tp_engine *e = o->e;
	/* HBG: the orchestrator is on the host, no orch records (spec §3);
	 * without an on_orch_submit hook no stamp is taken. */
	const bool hooks = e->hooks_on && !e->hbg && e->hooks.on_orch_submit != NULL;
	uint64_t t0 = hooks ? tp_sys_cnt() : 0;
	int32_t kid[3] = { kernel_id[0], kernel_id[1], kernel_id[2] };
	int rc;

	if (run_failed(e))
		return -ECANCELED;
	if (args->err > 0 || args->err < -4095)
		/* Not an errno: the args never went through tp_args_init(). */
		return tp_set_error(-EINVAL, "runtime: task args not initialised (their error "
				    "field holds %d): call tp_args_init() on them first",
				    args->err);
	if (args->err)
		return args->err;
	tp_clear_error(); /* a failing step below sets the message that explains it */
	/* Step 0: validate, normalise aiv1-only to aiv0. */
	uint8_t mask = 0;
	for (int i = 0; i < 3; i++) {
		if (kid[i] == TP_KERNEL_NONE)
			continue;
		if (kid[i] < 0)
			return tp_set_error(-EINVAL, "runtime: func_id %d out of range (%d kernels; "
					    "-1 leaves a slot empty)", kid[i], e->cfg.num_kernels);
		if (kid[i] >= e->cfg.num_kernels)
			return tp_set_error(-EINVAL, "runtime: func_id %d out of range "
					    "(%d kernels)", kid[i], e->cfg.num_kernels);
		enum tp_core_type want = i == TP_SLOT_AIC ? TP_CORE_AIC : TP_CORE_AIV;
		if (e->cfg.kernels[kid[i]].core_type != want)
			return tp_set_error(-EINVAL, "runtime: func_id %d is an %s kernel, "
					    "submitted in an %s slot", kid[i],
					    tp_core_type_name(e->cfg.kernels[kid[i]].core_type),
					    tp_core_type_name(want));
		mask |= (uint8_t)(1u << i);
	}
	if (mask == (1u << TP_SLOT_AIV1)) {
		kid[TP_SLOT_AIV0] = kid[TP_SLOT_AIV1];
		kid[TP_SLOT_AIV1] = TP_KERNEL_NONE;
		mask = 1u << TP_SLOT_AIV0;
	}
	enum tp_shape shape = mask == 0 ? TP_SHAPE_DUMMY
			      : mask == 1 ? TP_SHAPE_AIC
			      : mask == 2 ? TP_SHAPE_AIV
			      : (mask & (mask - 1)) ? TP_SHAPE_MIX : TP_SHAPE_AIV;
	uint64_t packed = 0;
	for (uint32_t i = 0; i < args->n_tensors; i++) {
		/* A creator that was never submitted (a zero-filled tensor names
		 * task 0 of ring 0; a tensor of an earlier run; a ring this
		 * runtime does not have) would be a producer that never
		 * completes: the task would wait for ever, with nothing running
		 * for the stall watchdog to time. */
		const tp_task_id own = args->tensors[i].owner_task_id;
		if (args->tags[i] != TP_ARG_OUTPUT && tp_task_id_valid(own) &&
		    !owner_submitted(e, own))
			return tp_set_error(-EINVAL, "runtime: tensor arg %u: its owner_task_id "
					    "0x%llx (ring %u, local %u) names no task submitted in "
					    "this run; a tensor made by the orchestration has "
					    "TP_TASK_ID_INVALID (tp_tensor_make_contiguous()), one "
					    "made by a task its id", i, (unsigned long long)own,
					    tp_task_id_ring(own), tp_task_id_local(own));
		if (args->tags[i] == TP_ARG_OUTPUT) {
			packed += align_up(args->tensors[i].buffer_size, TP_PACKED_OUTPUT_ALIGN);
		} else if (shape != TP_SHAPE_DUMMY) {
			struct tp_tile probe;
			if (tensor_tile(&args->tensors[i], &probe))
				return tp_set_error(-EINVAL, "runtime: tensor arg %u cannot be "
						    "viewed as a GM tile", i);
			if (e->cfg.check_tensor_memory && (rc = tensor_memory(e, args, i)))
				return rc;
		}
	}

	/* Step 1 + 3. */
	struct tp_ring_alloc a;
	if ((rc = prepare(o, packed, &a)))
		return rc;
	struct tp_slot *slot = a.slot;
	const tp_task_id id = a.task_id;
	const uint32_t block_num = args->block_num ? args->block_num : 1;
	tp_slot_set_work(slot, mask, block_num);
	for (int i = 0; i < 3; i++)
		slot->kernel_id[i] = kid[i];
	/* MANUAL scope: explicit dependencies only (spec §2.3). */
	const bool manual = o->scopes[o->depth - 1].manual;
	/* Step 2: dep_gen capture, before the outputs are materialised. */
	const struct tp_orch_hooks *dh = e->cfg.orch_hooks;
	if (__builtin_expect(dh != NULL, 0) && dh->on_dep_task) {
		const bool early = e->early && (shape == TP_SHAPE_AIC || shape == TP_SHAPE_AIV) &&
				   block_num == 1 && !args->has_pred;
		dh->on_dep_task(dh->ud, id, manual, early, kid, block_num, args->n_tensors,
				args->tags, args->tensors);
	}
	if (dh && !dh->on_dep_edge)
		dh = NULL;
	materialise_outputs(args, a.packed, id);

	/* Step 4: producers (explicit ones first); step 5: tensor-map inserts. */
	tp_fanin_reset(&o->fanin);
	for (uint32_t i = 0; i < args->n_deps && !rc; i++) {
		tp_task_id pid = args->deps[i];
		if (!dep_submitted(e, pid, id)) {
			rc = tp_set_error(-EINVAL, "runtime: explicit dependency 0x%llx of task "
					  "0x%llx names no earlier task",
					  (unsigned long long)pid, (unsigned long long)id);
			break;
		}
		if (__builtin_expect(dh != NULL, 0))
			dh->on_dep_edge(dh->ud, pid, id, -1, TP_DEP_EXPLICIT, 0, NULL);
		int n = tp_fanin_add_explicit(&o->fanin, &e->tm, pid);
		rc = n < 0 ? n : 0;
	}
	for (uint32_t i = 0; i < args->n_tensors && !rc && !manual; i++)
		if (args->tags[i] != TP_ARG_OUTPUT) {
			if (__builtin_expect(dh != NULL, 0))
				dep_report_arg(e, dh, id, i, &args->tensors[i],
					       (enum tp_arg_tag)args->tags[i]);
			int n = tp_fanin_collect_arg(&o->fanin, &e->tm, &args->tensors[i],
						     (enum tp_arg_tag)args->tags[i]);
			rc = n < 0 ? n : 0;
		}
	for (uint32_t i = 0; i < o->fanin.n && !rc; i++) {
		tp_task_id pid = o->fanin.deps[i].producer;
		int n = tp_slot_add_producer(slot, tp_engine_slot_of(e, pid), pid);
		rc = n < 0 ? n : 0;
	}
	for (uint32_t i = 0; i < args->n_tensors && !rc && !manual; i++)
		rc = tp_fanin_register_arg(&e->tm, &args->tensors[i],
					   (enum tp_arg_tag)args->tags[i], id);

	/* Step 6: payload. */
	struct tp_task_payload *p = tp_engine_payload(e, slot);
	p->shape = (uint8_t)shape;
	p->n_tensors = args->n_tensors;
	p->n_scalars = args->n_scalars;
	p->has_pred = args->has_pred;
	p->pred_op = args->pred_op;
	p->pred_size = args->pred_size;
	p->pred_addr = args->pred_addr;
	p->pred_target = args->pred_target;
	p->pred_skip = 0;
	/* relaxed (the three resets): the slot is this thread's until step 7
	 * publishes the task (tp_slot_wire_fanin: links under the producers'
	 * locks, acq_rel refcount; or the ready queue's lock). */
	atomic_store_explicit(&p->has_async, 0, memory_order_relaxed);
	p->async_deferred = 0;
	p->async_outstanding = 0;
	atomic_store_explicit(&p->published, 0, memory_order_relaxed);
	atomic_store_explicit(&p->early_state, TP_EARLY_NONE, memory_order_relaxed);
	if (shape != TP_SHAPE_DUMMY)
		for (uint32_t i = 0; i < args->n_tensors && !rc; i++) {
			rc = tensor_tile(&args->tensors[i], &p->tiles[i]);
			p->args[i] = (int64_t)(intptr_t)&p->tiles[i];
		}
	for (uint32_t i = 0; i < args->n_scalars; i++)
		p->args[args->n_tensors + i] = (int64_t)args->scalars[i];

	if (rc) {
		/* The slot is allocated and counted: let it drain as a dummy
		 * task and fail the run. */
		p->shape = TP_SHAPE_DUMMY;
		tp_slot_set_work(slot, 0, 1);
		/* The failing step's own message (each sets one), not just
		 * its code. */
		const char *why = tp_last_error();
		tp_engine_fail(e, rc, id, -1, "runtime: submit of task 0x%llx failed: %s",
			       (unsigned long long)id, why && *why ? why : strerror(-rc));
	}
	int prc = scope_push(&o->scopes[o->depth - 1], slot);
	if (prc) {
		/* Without a scope entry the slot is never CONSUMED: only a
		 * leak of one window slot, the run is failed anyway. */
		tp_engine_fail(e, prc, id, -1, "runtime: out of memory (scope list)");
		rc = rc ? rc : prc;
	}
	/* Step 7: wire and publish. */
	if (tp_slot_wire_fanin(slot))
		tp_engine_route_ready(slot, e);
	else if (e->early)
		tp_engine_early_consider(e, slot); /* producers already on cores */
	if (out_id)
		*out_id = id;
	if (hooks)
		e->hooks.on_orch_submit(e->hooks.ud, id, o->submit_idx, t0, tp_sys_cnt());
	o->submit_idx++;
	return rc;
}

/* The one-kernel submits name a kernel: -1 there is a mistake, not the
 * empty slot it is in tp_submit()'s array (tp_submit_dummy() makes a task
 * without a kernel). */
static int one_kernel(struct tp_orch *o, const char *fn, int32_t func_id)
{
	if (func_id >= 0)
		return 0;
	if (run_failed(o->e))
		return -ECANCELED; /* as tp_submit(): the run's error is reported */
	return tp_set_error(-EINVAL, "runtime: func_id %d out of range (%d kernels; %s names "
			    "a kernel: tp_submit_dummy submits a task without one)", func_id,
			    o->e->cfg.num_kernels, fn);
}

int tp_submit_aic(struct tp_orch *o, int32_t func_id, struct tp_task_args *args,
		  tp_task_id *out_id)
{
	const int32_t k[3] = { func_id, TP_KERNEL_NONE, TP_KERNEL_NONE };
	int rc = one_kernel(o, "tp_submit_aic", func_id);
	return rc ? rc : tp_submit(o, k, args, out_id);
}

int tp_submit_aiv(struct tp_orch *o, int32_t func_id, struct tp_task_args *args,
		  tp_task_id *out_id)
{
	const int32_t k[3] = { TP_KERNEL_NONE, func_id, TP_KERNEL_NONE };
	int rc = one_kernel(o, "tp_submit_aiv", func_id);
	return rc ? rc : tp_submit(o, k, args, out_id);
}

int tp_submit_dummy(struct tp_orch *o, struct tp_task_args *args, tp_task_id *out_id)
{
	const int32_t k[3] = { TP_KERNEL_NONE, TP_KERNEL_NONE, TP_KERNEL_NONE };
	return tp_submit(o, k, args, out_id);
}

static int alloc_impl(struct tp_orch *o, uint32_t n, const struct tp_tensor_create *ci,
		      struct tp_tensor *out, tp_task_id *out_id);

int tp_alloc_tensors(struct tp_orch *o, uint32_t n, const struct tp_tensor_create *ci,
		     struct tp_tensor *out, tp_task_id *out_id)
{
	int trc = wrong_thread(o, "tp_alloc_tensors");
	if (trc)
		return trc;
	call_begin(o->e);
	int rc = alloc_impl(o, n, ci, out, out_id);
	call_end(o->e);
	return rc;
}

static int alloc_impl(struct tp_orch *o, uint32_t n, const struct tp_tensor_create *ci,
		      struct tp_tensor *out, tp_task_id *out_id)
{
	struct tp_engine *e = o->e;
	const bool hooks = e->hooks_on && !e->hbg && e->hooks.on_orch_submit != NULL;
	uint64_t t0 = hooks ? tp_sys_cnt() : 0;
	struct tp_task_args args;
	int rc;

	if (run_failed(e))
		return -ECANCELED;
	if (n == 0 || n > TP_MAX_TENSOR_ARGS || !ci || !out)
		return tp_set_error(-EINVAL, "runtime: alloc_tensors of %u tensors", n);
	tp_args_init(&args);
	for (uint32_t i = 0; i < n; i++)
		tp_args_add_output(&args, ci[i].dtype, ci[i].ndims, ci[i].shapes);
	if (args.err)
		return args.err;
	uint64_t packed = 0;
	for (uint32_t i = 0; i < n; i++)
		packed += align_up(args.tensors[i].buffer_size, TP_PACKED_OUTPUT_ALIGN);

	struct tp_ring_alloc a;
	if ((rc = prepare(o, packed, &a)))
		return rc;
	struct tp_slot *slot = a.slot;
	tp_slot_set_work(slot, 0, 1);
	materialise_outputs(&args, a.packed, a.task_id);
	struct tp_task_payload *p = tp_engine_payload(e, slot);
	p->shape = TP_SHAPE_DUMMY;
	p->n_tensors = 0;
	p->n_scalars = 0;
	p->has_pred = 0;
	p->pred_skip = 0;
	/* relaxed: as in tp_submit (the slot is still this thread's). */
	atomic_store_explicit(&p->early_state, TP_EARLY_NONE, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++)
		out[i] = args.tensors[i];
	if ((rc = scope_push(&o->scopes[o->depth - 1], slot)))
		tp_engine_fail(e, rc, a.task_id, -1, "runtime: out of memory (scope list)");

	/* Completed inline on this thread: no producers, no consumers yet. */
	slot->fanin_count = 1;
	/* relaxed: no producer links to this slot; only this thread sees it. */
	atomic_store_explicit(&slot->fanin_refcount, 1, memory_order_relaxed);
	tp_slot_claim_ready(slot);
	tp_slot_complete(slot, NULL, NULL);
	tp_slot_release(slot, tp_engine_on_consumed, e);
	/* relaxed: a statistic. */
	atomic_fetch_add_explicit(&e->inline_done, 1, memory_order_relaxed);
	/* release: pairs with the seq_cst (acquire) loads of sched.c
	 * all_done(). No handshake needed here: this thread stores orch_done
	 * after it, and that store orders the count for all_done(). */
	atomic_fetch_add_explicit(&e->completed_tasks, 1, memory_order_release);
	if (out_id)
		*out_id = a.task_id;
	if (hooks)
		e->hooks.on_orch_submit(e->hooks.ud, a.task_id, o->submit_idx, t0, tp_sys_cnt());
	o->submit_idx++;
	return rc;
}

/* ---- scopes ---------------------------------------------------------- */

int tp_scope_begin(struct tp_orch *o)
{
	int trc = wrong_thread(o, "tp_scope_begin");
	if (trc)
		return trc;
	call_end(o->e);
	if (o->depth >= TP_ORCH_MAX_SCOPES)
		return tp_set_error(-EINVAL, "runtime: more than %d nested scopes",
				    TP_ORCH_MAX_SCOPES);
	o->scopes[o->depth].n = 0;
	o->scopes[o->depth].manual = false;
	o->depth++;
	return 0;
}

int tp_scope_begin_manual(struct tp_orch *o)
{
	int rc = tp_scope_begin(o);
	if (!rc)
		o->scopes[o->depth - 1].manual = true;
	return rc;
}

int tp_scope_end(struct tp_orch *o)
{
	int trc = wrong_thread(o, "tp_scope_end");
	if (trc)
		return trc;
	struct tp_engine *e = o->e;
	call_end(e);
	/* The outer scope (depth 1) is the executor's: only the loop at the
	 * orchestration's return ends it (o->closing). */
	if (o->depth == 0 || (o->depth == 1 && !o->closing))
		return tp_set_error(-EINVAL, "runtime: tp_scope_end without a matching "
				    "tp_scope_begin (no scope of the orchestration's is open)");
	struct tp_scope *sc = &o->scopes[o->depth - 1];
	for (uint32_t i = 0; i < sc->n; i++)
		if (tp_slot_scope_end(sc->tasks[i]))
			tp_engine_on_consumed(sc->tasks[i], e);
	sc->n = 0;
	o->depth--;
	return 0;
}

/* ---- the orchestrator thread ----------------------------------------- */

int tp_orch_init(struct tp_orch *o, struct tp_engine *e)
{
	memset(o, 0, sizeof(*o));
	o->e = e;
	return 0;
}

void tp_orch_fini(struct tp_orch *o)
{
	for (int i = 0; i < TP_ORCH_MAX_SCOPES; i++)
		free(o->scopes[i].tasks);
	tp_fanin_fini(&o->fanin);
	memset(o, 0, sizeof(*o));
}

int tp_orch_host_build(struct tp_engine *e)
{
	tp_orch_thread(e);
	/* acquire: pairs with tp_engine_fail()'s release store, so fail_rc
	 * below is the failure's. */
	if (atomic_load_explicit(&e->failed, memory_order_acquire))
		return e->fail_rc ? e->fail_rc : -EIO;
	return 0;
}

void tp_orch_thread(struct tp_engine *e)
{
	struct tp_orch *o = &e->orch;
	tl_orch = o;
	tp_scope_begin(o); /* the executor's outer scope: depth 0, ring 0 */
	tp_clear_error(); /* a stale message must not explain this failure */
	int rc = e->orch_fn(o, e->orch_arg);
	if (rc > 0) /* not an errno: 7 is not E2BIG here */
		tp_engine_fail(e, -EINVAL, TP_TASK_ID_INVALID, -1,
			       "runtime: orchestration returned %d (expected 0 or a negative errno)",
			       rc);
	else if (rc == -ECANCELED && !run_failed(e))
		/* -ECANCELED passes on a submit's "the run has already failed";
		 * returned when it had not, it is the orchestration's own
		 * failure. */
		tp_engine_fail(e, rc, TP_TASK_ID_INVALID, -1,
			       "runtime: orchestration failed (%d, -ECANCELED, though the run had "
			       "not failed)%s%s", rc, *tp_last_error() ? ": " : "", tp_last_error());
	else if (rc && rc != -ECANCELED)
		tp_engine_fail(e, rc, TP_TASK_ID_INVALID, -1,
			       "runtime: orchestration failed (%d): %s", rc,
			       *tp_last_error() ? tp_last_error()
			       : rc == INT_MIN ? "not an errno" : strerror(-rc));
	o->closing = true;
	while (o->depth > 0)
		tp_scope_end(o);
	tl_orch = NULL;
	/* on_orchestration_done: every task of every ring. */
	uint64_t total = 0;
	for (int r = 0; r < TP_MAX_RING_DEPTH; r++)
		total += tp_ring_current(&e->rings[r]);
	/* relaxed: published by the store of orch_done below. */
	atomic_store_explicit(&e->total_tasks, total, memory_order_relaxed);
	/* seq_cst: the orchestrator's half of the handshake in sched.c
	 * all_done() (see there); its release half publishes total_tasks and
	 * the inline completions (tp_submit_dummy). */
	atomic_store_explicit(&e->orch_done, true, memory_order_seq_cst);
	tp_engine_wake_all(e);
}
