/*
 * The build options of ssim.cl, for float_ssim (ssim.c) and float_ms_ssim
 * (ms_ssim.c).
 */
#ifndef QGPU_FEATURE_SSIM_OPTIONS_H
#define QGPU_FEATURE_SSIM_OPTIONS_H

#include <stdio.h>

#include "feature.h"

/* -DSSIM_BPS (bytes per sample); -DSSIM_FP64=1 where the device has fp64
 * (the filter sums in double, as libvmaf's; else float-float),
 * QGPU_SSIM_FP64=0/1 forcing one path (tests, measurements); and
 * -cl-fp32-correctly-rounded-divide-sqrt where the device has it. */
static inline void ssim_program_options(QgpuContext *ctx, const QgpuVideoFormat *fmt,
                                        char *buf, size_t len)
{
    int use_fp64 = qgpu_fp64_variant(ctx, "QGPU_SSIM_FP64", 0, 1);
    snprintf(buf, len, "-DSSIM_BPS=%d -DSSIM_FP64=%d%s", fmt->bytes_per_sample, use_fp64,
             qgpu_fp32_correctly_rounded(ctx) ? " -cl-fp32-correctly-rounded-divide-sqrt" : "");
}

#endif
