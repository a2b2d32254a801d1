/* SPDX-License-Identifier: MIT */
/*
 * platform/rt_internal.h — what the rest of taskprof (tile API, PMU,
 * operator profiler, tests) needs from the device API of rt.c beyond the
 * public include/taskprof/rt.h.
 */
#ifndef TASKPROF_PLATFORM_RT_INTERNAL_H
#define TASKPROF_PLATFORM_RT_INTERNAL_H

#include "platform/device.h"
#include "taskprof/rt.h"

/**
 * tp_rt_internal_set_kernel_hooks() - kernel hooks of every rt launch.
 * @hooks: called around each block on its AICore thread (copied); NULL
 *         removes them.
 *
 * Applies to the open devices and to devices opened later. Waits for
 * launches in progress to finish (it takes the device table's writer
 * lock), so no block runs while the hooks change. The rt device binds
 * each core's tile context itself (also reachable as
 * tp_aicore_kernel_ctx() from a hook) and opens the PMU window itself
 * while the AICORE_PMU driver channel is started; hooks are for tests and
 * tools that want more.
 */
void tp_rt_internal_set_kernel_hooks(const struct tp_kernel_hooks *hooks);

/**
 * tp_rt_internal_device() - the simulated device behind an rt device id.
 * @device_id: 0 .. TP_RT_MAX_DEVICES - 1.
 *
 * Does not open the device.
 *
 * Return: the device if it is open, else NULL. Valid until
 * tp_rt_reset_device(@device_id) (or process exit).
 */
struct tp_device *tp_rt_internal_device(int device_id);

/**
 * tp_rt_internal_kernel_name() - the name tools and messages give a kernel
 * (spec/opprof.md §4.6: launches are selected and matched across the runs
 * of an application replay by it).
 * @kernel: the launched function.
 * @attr:   the launch's attributes, or NULL.
 * @buf:    receives the name, NUL-terminated, cut to @n - 1 bytes.
 * @n:      size of @buf in bytes (>= 1).
 *
 * The name is @attr's name; else the kernel's exported symbol (dladdr);
 * else its name in its object's symbol table (.symtab, libelf: a static
 * function of an object that was not stripped, when no other function
 * of the table has that name; the file as mapped, found through
 * /proc/self/maps, not by the path the loader was given); else
 * "<object>+0x<offset>", the file name
 * of the executable or library that holds it and its offset there in
 * hex, which is the same in every run of the program whatever the load
 * addresses; else, when no loaded object holds @kernel,
 * "kernel_<address>". A C++ symbol (exported or from the table) is
 * demangled as c++filt prints it ("demo::scale(unsigned int, unsigned
 * int, void*)") by the process's C++ runtime (__cxa_demangle; libstdc++
 * is loaded for it when the process has none), unless that name does not
 * fit @buf (the symbol is kept: cut, it could be another kernel's). Names from a symbol table or an offset are cached
 * by address and object (256 kernels). Thread-safe.
 */
void tp_rt_internal_kernel_name(tp_rt_kernel_fn kernel, const struct tp_rt_launch_attr *attr,
				char *buf, size_t n);

#endif /* TASKPROF_PLATFORM_RT_INTERNAL_H */
