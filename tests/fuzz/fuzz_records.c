/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: sl_read_perf_data_mem() on arbitrary bytes
 * (tools/swimlane/perf_data.h). Any input must give 0 with a consistent
 * result or -EINVAL with a one-line message naming the input; never a
 * crash, a leak or an ASan/UBSan report. Seeds: tests/fuzz/corpus/records/.
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
	struct sl_perf_data d;
	int rc = sl_read_perf_data_mem("fuzz.json", data, size, &d);
	if (rc != 0) {
		const char *msg = tp_last_error();
		if (rc != -EINVAL || strncmp(msg, "fuzz.json: ", 11) != 0 || strchr(msg, '\n'))
			abort();
		return 0;
	}
	if (d.level < 1 || d.level > 4 || d.clock_freq_hz == 0)
		abort();
	/* every joined row comes from one aicpu row, or one aicore row at level 1 */
	if (d.n_tasks > (d.n_aicpu_rows ? d.n_aicpu_rows : d.n_aicore_rows))
		abort();
	if (d.n_unmatched > d.n_aicpu_rows || (d.n_unmatched > 0) != (d.unmatched_warning != NULL))
		abort();
	char b[32];
	for (size_t i = 0; i < d.n_tasks; i++) {
		if (i > 0 && d.tasks[i - 1].task_id > d.tasks[i].task_id)
			abort(); /* sorted (spec §2.7) */
		sl_tdisp(d.tasks[i].task_id, b, sizeof(b));
	}
	for (size_t t = 0; t < d.n_sched; t++)
		for (size_t i = 0; i < d.sched[t].n; i++)
			if (d.sched[t].v[i].name && d.sched[t].v[i].kind != SL_PH_UNKNOWN)
				abort();
	sl_perf_data_free(&d);
	return 0;
}
