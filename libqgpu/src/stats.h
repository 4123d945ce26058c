/* A context's counters, for qgpu-bench (not part of the public API: the
 * bench links the static library and declares nothing of the context's
 * private struct). */
#ifndef QGPU_STATS_H
#define QGPU_STATS_H

#include <stddef.h>

#include "qgpu/qgpu.h"

#include "ocl.h"

/* Device time of one kernel label, summed over frames (QGPU_PROFILE=1). */
typedef struct QgpuProfileEntry {
    char name[96];
    double total_ms;
    unsigned long long count;
} QgpuProfileEntry;

typedef struct QgpuStats {
    unsigned long long launches;    /* kernels enqueued since open */
    size_t upload_bytes;            /* bytes of each picture sent to the device */
    int profiling;                  /* QGPU_PROFILE=1: every kernel is timed */
    int nb_profile;
    const QgpuProfileEntry *profile; /* per kernel label; valid until the next submit */
    unsigned frames_from_host;      /* qgpu_submit() (staging copy) */
    unsigned frames_from_pinned;    /* qgpu_submit_pinned() (no copy) */
    cl_context cl;                  /* the context's OpenCL context and device */
    cl_device_id device;
} QgpuStats;

/* Fills *stats from the context (any time after qgpu_open). */
void qgpu_stats_get(const QgpuContext *ctx, QgpuStats *stats);

#endif /* QGPU_STATS_H */
