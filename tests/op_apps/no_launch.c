/* SPDX-License-Identifier: MIT */
/*
 * no_launch — uses the device but never launches a kernel (issue 6
 * acceptance: "an application that never launches a kernel produces an
 * empty report and a note, not a crash").
 *
 * Allocates, copies in and back, checks the round trip, frees.
 * Exit 0 / 1 / 2, see op_app.h.
 */
#include <string.h>

#include "op_app.h"

#define APP "no_launch"
#define N 1000u

int main(void)
{
	static float x[N], y[N];
	for (uint32_t i = 0; i < N; i++)
		x[i] = (float)i * 0.5f;
	float *dx = NULL;
	int rc;
	if ((rc = op_app_upload(&dx, x, N)) != 0 ||
	    (rc = tp_rt_memcpy(y, dx, sizeof(y), TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(dx)) != 0)
		return op_app_fail(APP, "round trip", rc);
	if (memcmp(x, y, sizeof(x)) != 0) {
		fprintf(stderr, "%s: the round trip changed the bytes\n", APP);
		return 1;
	}
	printf("%s: %u elements copied to the device and back, no kernel launched: ok\n", APP, N);
	return 0;
}
