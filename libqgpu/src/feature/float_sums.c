#include <stdint.h>

#include "float_sums.h"

int qgpu_float_sums_run(QgpuFeature *f, QgpuSlot *slot, cl_kernel k, int w, int h,
                        int groups, size_t offset, const char *what)
{
    const QgpuVideoFormat *fmt = f->fmt;
    size_t local = FLOAT_SUMS_WG, global = (size_t)FLOAT_SUMS_WG * groups;
    const QgpuArg args[] = {
        qgpu_arg_mem("ref", slot->ref),
        qgpu_arg_mem("dist", slot->dist),
        qgpu_arg_uint("off", (cl_uint)fmt->plane_offset[0]),
        qgpu_arg_int("bps", fmt->bytes_per_sample),
        qgpu_arg_int("w", w),
        qgpu_arg_int("h", h),
        qgpu_arg_mem("results", slot->results),
        qgpu_arg_uint("results_index", (cl_uint)(offset / sizeof(uint64_t))),
    };
    return qgpu_launch(f->ctx, slot, k, what, args, QGPU_ARRAY_SIZE(args), 1, &global, &local);
}
