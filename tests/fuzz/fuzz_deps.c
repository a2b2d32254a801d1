/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: sl_read_deps_mem() on arbitrary bytes
 * (tools/swimlane/perf_data.h). Any input must give 0 with unique edges and
 * working lookups, or -EINVAL with a one-line message naming the input.
 * Seeds: tests/fuzz/corpus/deps/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "taskprof/taskprof.h"
#include "tools/swimlane/perf_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_deps d;
	int rc = sl_read_deps_mem("deps.json", data, size, &d);
	if (rc != 0) {
		const char *msg = tp_last_error();
		if (rc != -EINVAL || strncmp(msg, "deps.json: ", 11) != 0 || strchr(msg, '\n'))
			abort();
		return 0;
	}
	if (!d.has_edges != (d.edges_warning != NULL))
		abort();
	/* small inputs: check uniqueness of the edges pairwise */
	if (d.n_edges < 200)
		for (size_t i = 0; i < d.n_edges; i++)
			for (size_t j = i + 1; j < d.n_edges; j++)
				if (d.pred[i] == d.pred[j] && d.succ[i] == d.succ[j])
					abort();
	for (size_t i = 0; i < d.n_tasks; i++) {
		long k = sl_deps_find_task(&d, d.task_id[i]);
		if (k < 0 || d.task_id[k] != d.task_id[i] || d.block_num[i] == 0)
			abort();
		if (sl_deps_block_num(&d, d.task_id[i]) == 0)
			abort(); /* every kernel map task is in the block map */
	}
	sl_deps_free(&d);
	return 0;
}
