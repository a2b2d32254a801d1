// SPDX-License-Identifier: MIT
/*
 * cxx_kernels — a C++ application whose kernels are launched without a
 * name, for the names `taskprof op` gives C++ kernels (docs/op.md "A
 * kernel's name"; tests/cli/test_op_modes.sh I7d):
 *
 *     0 demo::twice   a static function in a namespace: not exported,
 *                     found in the executable's symbol table
 *                     (_ZN4demoL5twiceEjjPv)
 *     1 times<3>      an exported template instance, found by dladdr
 *                     (_Z5timesILi3EEvjjPv)
 *
 * both demangled by the application's own C++ runtime. x (fp32, 8192
 * elements, x[i] = i % 17) becomes 3 * (2 * x) in place; each launch runs
 * on 2 AIV blocks. Exit 0 when x is right, 1 when not, 2 on a device
 * error (the contract of tests/op_apps/op_app.h, which is C); OP_OUT_FILE
 * gets x's bytes.
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "taskprof/kernel.h"
#include "taskprof/rt.h"

namespace {

const uint32_t kN = 8192;
const uint32_t kTile = 4096; // 16 KiB of fp32 in UB

struct vec {
	float *x; // device
	uint32_t n;
};

// x = a * x over this block's slice, in kTile steps. A tile failure
// leaves the core's sticky error, which fails the launch.
void scale_slice(const vec *v, uint32_t block, uint32_t dim, float a)
{
	const uint32_t lo = (uint32_t)((uint64_t)v->n * block / dim);
	const uint32_t hi = (uint32_t)((uint64_t)v->n * (block + 1) / dim);
	tp_tile g, u;
	if (tp_tile_init(&g, TP_MEM_GM, v->x, (size_t)v->n * sizeof(float), TP_FP32, 1, v->n, v->n) ||
	    tp_local_tile(&u, TP_MEM_UB, TP_FP32, 1, kTile))
		return;
	for (uint32_t off = lo; off < hi; off += kTile) {
		const uint32_t len = hi - off < kTile ? hi - off : kTile;
		tp_tile vg, vu;
		if (tp_tile_view(&vg, &g, 0, off, 1, len) || tp_tile_view(&vu, &u, 0, 0, 1, len) ||
		    tp_copy_in(&vu, &vg) || tp_vmuls(&vu, &vu, a) || tp_copy_out(&vg, &vu))
			return;
	}
}

} // namespace

namespace demo {
static void twice(uint32_t block, uint32_t dim, void *args)
{
	scale_slice(static_cast<const vec *>(args), block, dim, 2.0f);
}
} // namespace demo

template <int K> void times(uint32_t block, uint32_t dim, void *args)
{
	scale_slice(static_cast<const vec *>(args), block, dim, (float)K);
}
template void times<3>(uint32_t, uint32_t, void *);

static int fail(const char *what, int rc)
{
	std::fprintf(stderr, "cxx_kernels: %s failed (%d): %s\n", what, rc, tp_last_error());
	return 2;
}

int main()
{
	std::vector<float> x(kN), want(kN);
	for (uint32_t i = 0; i < kN; i++) {
		x[i] = (float)(i % 17u);
		want[i] = 3.0f * (2.0f * x[i]);
	}
	void *dx = nullptr;
	const size_t bytes = kN * sizeof(float);
	int rc;
	if ((rc = tp_rt_malloc(&dx, bytes)) != 0 ||
	    (rc = tp_rt_memcpy(dx, x.data(), bytes, TP_RT_MEMCPY_HOST_TO_DEVICE)) != 0)
		return fail("allocate and upload", rc);
	vec v = { static_cast<float *>(dx), kN };
	tp_rt_launch_attr attr = {};
	attr.cores = TP_RT_CORES_AIV; // no name: the symbol names the kernel
	if ((rc = tp_rt_launch_ex(demo::twice, 2, &v, &attr)) != 0)
		return fail("launch demo::twice", rc);
	if ((rc = tp_rt_launch_ex(times<3>, 2, &v, &attr)) != 0)
		return fail("launch times<3>", rc);
	if ((rc = tp_rt_synchronize()) != 0 ||
	    (rc = tp_rt_memcpy(x.data(), dx, bytes, TP_RT_MEMCPY_DEVICE_TO_HOST)) != 0 ||
	    (rc = tp_rt_free(dx)) != 0)
		return fail("download", rc);
	uint32_t bad = 0;
	for (uint32_t i = 0; i < kN; i++)
		if (x[i] != want[i] && !bad++)
			std::fprintf(stderr, "cxx_kernels: x[%u] = %g, want %g\n", i, x[i], want[i]);
	const char *path = std::getenv("OP_OUT_FILE");
	if (path && *path) {
		FILE *f = std::fopen(path, "wb");
		if (!f || std::fwrite(x.data(), 1, bytes, f) != bytes || std::fclose(f) != 0) {
			std::fprintf(stderr, "cxx_kernels: cannot write OP_OUT_FILE '%s'\n", path);
			return 2;
		}
	}
	std::printf("cxx_kernels: 2 launches: %s\n", bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
