/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: sl_read_name_map_mem() on arbitrary bytes
 * (tools/swimlane/perf_data.h). Any input must give 0 with ids sorted and
 * unique, or -EINVAL with a one-line message naming the input.
 * Seeds: tests/fuzz/corpus/name_map/.
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
	struct sl_name_map m;
	int rc = sl_read_name_map_mem("nm.json", data, size, &m);
	if (rc != 0) {
		const char *msg = tp_last_error();
		if (rc != -EINVAL || strncmp(msg, "nm.json: ", 9) != 0 || strchr(msg, '\n'))
			abort();
		return 0;
	}
	for (size_t i = 0; i < m.n; i++) {
		if (i > 0 && m.func_id[i - 1] >= m.func_id[i])
			abort();
		if (sl_name_map_get(&m, m.func_id[i]) != m.name[i])
			abort();
	}
	sl_name_map_free(&m);
	return 0;
}
