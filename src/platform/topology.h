/* SPDX-License-Identifier: MIT */
/*
 * platform/topology.h — core ids, core types and clusters
 * (spec/runtime-model.md §1.2).
 *
 * A cluster is 1 AIC (cube) + 2 AIV (vector) cores, subtask slots AIC,
 * AIV0, AIV1. With block_dim clusters there are 3·block_dim cores:
 * ids 0..block_dim-1 are the AICs, ids block_dim..3·block_dim-1 the AIVs in
 * pairs, so cluster c = { c, block_dim + 2c, block_dim + 2c + 1 }.
 *
 * Pure arithmetic, inline: the scheduler calls these per dispatch.
 */
#ifndef TASKPROF_PLATFORM_TOPOLOGY_H
#define TASKPROF_PLATFORM_TOPOLOGY_H

/* CoreType of the reference (an int32 in records: AIC=0, AIV=1,
 * spec/pmu.md §2.3). */
enum tp_core_type {
	TP_CORE_AIC = 0,
	TP_CORE_AIV = 1,
};

/* PTO2SubtaskSlot; mask bits AIC=1, AIV0=2, AIV1=4 are 1 << slot. */
enum tp_subslot {
	TP_SLOT_AIC = 0,
	TP_SLOT_AIV0 = 1,
	TP_SLOT_AIV1 = 2,
};

/**
 * tp_topo_num_cores() - cores of @block_dim clusters: 3 · block_dim.
 */
static inline int tp_topo_num_cores(int block_dim)
{
	return 3 * block_dim;
}

/**
 * tp_topo_core_type() - type of core @core_id (0 <= core_id < 3·block_dim).
 */
static inline enum tp_core_type tp_topo_core_type(int block_dim, int core_id)
{
	return core_id < block_dim ? TP_CORE_AIC : TP_CORE_AIV;
}

/**
 * tp_topo_cluster() - cluster of core @core_id.
 */
static inline int tp_topo_cluster(int block_dim, int core_id)
{
	return core_id < block_dim ? core_id : (core_id - block_dim) / 2;
}

/**
 * tp_topo_slot() - subtask slot of core @core_id within its cluster.
 */
static inline enum tp_subslot tp_topo_slot(int block_dim, int core_id)
{
	if (core_id < block_dim)
		return TP_SLOT_AIC;
	return (core_id - block_dim) % 2 == 0 ? TP_SLOT_AIV0 : TP_SLOT_AIV1;
}

/**
 * tp_topo_core_id() - id of the core in slot @slot of cluster @cluster.
 */
static inline int tp_topo_core_id(int block_dim, int cluster, enum tp_subslot slot)
{
	if (slot == TP_SLOT_AIC)
		return cluster;
	return block_dim + 2 * cluster + (slot == TP_SLOT_AIV1 ? 1 : 0);
}

/**
 * tp_topo_cluster_owner() - scheduler thread owning cluster @cluster
 * (decoupled default, spec §1.2): cluster % num_sched_threads. A
 * scheduler thread dispatches only to the cores of its clusters.
 * @num_sched_threads: >= 1.
 */
static inline int tp_topo_cluster_owner(int cluster, int num_sched_threads)
{
	return cluster % num_sched_threads;
}

/**
 * tp_core_type_name() - "AIC" or "AIV".
 */
static inline const char *tp_core_type_name(enum tp_core_type t)
{
	return t == TP_CORE_AIC ? "AIC" : "AIV";
}

#endif /* TASKPROF_PLATFORM_TOPOLOGY_H */
