#include <stdint.h>

#include "float_sums.h"
#include "internal.h"

int qgpu_float_sums_run(QgpuFeature *f, QgpuSlot *slot, cl_kernel k, int w, int h,
                        int groups, size_t offset, const char *what)
{
    const QgpuVideoFormat *fmt = &f->ctx->fmt;
    cl_uint off = (cl_uint)fmt->plane_offset[0];
    cl_int bps = fmt->bytes_per_sample, cw = w, ch = h;
    cl_uint index = (cl_uint)(offset / sizeof(uint64_t));
    size_t local = FLOAT_SUMS_WG, global = (size_t)FLOAT_SUMS_WG * groups;
    cl_int status = 0;
    cl_uint arg = 0;

    status |= clSetKernelArg(k, arg++, sizeof(cl_mem), &slot->ref);
    status |= clSetKernelArg(k, arg++, sizeof(cl_mem), &slot->dist);
    status |= clSetKernelArg(k, arg++, sizeof(cl_uint), &off);
    status |= clSetKernelArg(k, arg++, sizeof(cl_int), &bps);
    status |= clSetKernelArg(k, arg++, sizeof(cl_int), &cw);
    status |= clSetKernelArg(k, arg++, sizeof(cl_int), &ch);
    status |= clSetKernelArg(k, arg++, sizeof(cl_mem), &slot->results);
    status |= clSetKernelArg(k, arg++, sizeof(cl_uint), &index);
    if (status != CL_SUCCESS)
        return qgpu_cl_error(f->ctx, status, what);
    return qgpu_kernel_run(f->ctx, slot, k, 1, &global, &local, what);
}
