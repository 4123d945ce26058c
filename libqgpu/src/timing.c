/*
 * QGPU_TIMING=1: host seconds in the parts of a submit (qgpu_submit_cl,
 * qgpu_submit_cl_buffer and qgpu_submit_pinned) and of the collect,
 * logged at QGPU_LOG_INFO by qgpu_flush(): where a caller's time goes when
 * its frames come from device memory.
 */
#include <time.h>

#include "internal.h"

double qgpu_timing_now(const QgpuContext *ctx)
{
    struct timespec ts;
    if (!ctx->timing)
        return 0.0;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void qgpu_timing_add(QgpuContext *ctx, int part, double since)
{
    if (ctx->timing)
        ctx->timing_seconds[part] += qgpu_timing_now(ctx) - since;
}

void qgpu_timing_report(QgpuContext *ctx)
{
    const double *t = ctx->timing_seconds;
    if (!ctx->timing)
        return;
    qgpu_log(ctx, QGPU_LOG_INFO,
             "timing: %u frames: waiting for the oldest frame's results %.3f s, enqueueing "
             "the input copies (acquire, copies, release) %.3f s, enqueueing the kernels "
             "%.3f s, waiting for the input copies %.3f s, collecting (the features' "
             "collect and the models) %.3f s",
             ctx->submitted, t[QGPU_TIMING_RESULTS], t[QGPU_TIMING_COPIES],
             t[QGPU_TIMING_KERNELS], t[QGPU_TIMING_COPY_WAIT], t[QGPU_TIMING_COLLECT]);
}
