/* The context: what every part of the library hangs off. Private. */
#ifndef QGPU_INTERNAL_H
#define QGPU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "qgpu/qgpu.h"

#include "feature.h"
#include "ocl.h"
#include "stats.h"

#define QGPU_MAX_SLOTS 16
#define QGPU_ERROR_MAX 8192

/* A compiled program, shared by the features of a context. */
typedef struct QgpuProgram {
    char *key;             /* kernel file name + build options */
    cl_program program;
} QgpuProgram;

/* Scores of all frames: values[frame * capacity_names + id]. */
typedef struct QgpuScoreStore {
    char **names;
    int nb_names;
    int cap_names;
    double *values;        /* frames x stride */
    int stride;            /* row length, >= nb_names (fixed at first frame) */
    unsigned nb_frames;    /* rows allocated and in use */
    unsigned cap_frames;
    char **agg_names;
    double *agg_values;
    int nb_agg;
} QgpuScoreStore;

/* The parts of a device submit that QGPU_TIMING=1 times (timing.c). */
enum {
    QGPU_TIMING_RESULTS,   /* waiting for the oldest frame's results */
    QGPU_TIMING_COPIES,    /* enqueueing the input copies */
    QGPU_TIMING_KERNELS,   /* enqueueing the kernels (qgpu_submit_enqueue) */
    QGPU_TIMING_COPY_WAIT, /* waiting for the input copies */
    QGPU_TIMING_COLLECT,   /* the features' collect() and the frame hooks */
    QGPU_TIMING_PARTS
};

struct QgpuContext {
    QgpuConfig cfg;
    char error[QGPU_ERROR_MAX];

    /* OpenCL */
    bool external;         /* cl and device are the caller's (qgpu_open_cl): retained */
    cl_platform_id platform;
    cl_device_id device;
    cl_context cl;
    cl_command_queue upload_queue;
    cl_command_queue compute_queue;
    cl_command_queue lane_queue[QGPU_MAX_LANES]; /* [0] is compute_queue; the rest owned */
    int nb_lanes;          /* fixed at start (pipeline.c) */
    char device_name[256];
    char platform_name[256];
    char device_cache_id[768]; /* device + driver + platform version */

    QgpuProgram *programs;
    int nb_programs;
    QgpuDevice *shared;    /* qgpu_open_shared: programs come from its cache */
    bool compile_noted;    /* "compiling kernels" was logged */

    /* features and hooks, in enabling order */
    QgpuFeature **features;
    int nb_features;
    QgpuFrameHook *hooks;
    int nb_hooks;
    int max_lookahead;

    /* stream state */
    bool started;          /* qgpu_start or the first submit done: format fixed,
                              features ready */
    bool flushed;
    bool failed;           /* an unrecoverable error happened; only close works */
    QgpuVideoFormat fmt;   /* what features see */
    QgpuVideoFormat in_fmt; /* what the caller submits (differs when widened) */
    int in_layout;         /* the pictures' layout (QGPU_LAYOUT_NV12 or in_fmt.layout) */
    int in_shift;          /* MSB-aligned 16-bit input (NV12 layout): 16 - bitdepth */
    int compute_bitdepth;  /* 0: native; else 8-bit input is widened to it */
    size_t upload_bytes;   /* bytes of each picture sent to the device */
    size_t device_bytes;   /* bytes of each picture on the device, as features see it */
    size_t results_bytes;  /* per slot, reserved by features */

    /* pipeline (pipeline.c creates and releases all of it) */
    int slot_count;
    QgpuSlot slots[QGPU_MAX_SLOTS];
    cl_kernel widen;       /* 8 -> 16 bit, when widening */
    cl_kernel shift_down;  /* MSB-aligned 16-bit input -> low bits */
    cl_kernel split_chroma; /* interleaved CbCr -> two planes (NV12 layout) */
    unsigned submitted;    /* frames submitted */
    unsigned processed;    /* frames whose device work was collected */
    unsigned finalized;    /* frames visible to the user */
    unsigned delivered;    /* frames returned by qgpu_collect */

    QgpuScoreStore scores;
    struct QgpuCopyPool *copy_pool;    /* threads for the staging copies */

    /* statistics (qgpu-bench reads them) */
    unsigned long long launches;       /* kernels enqueued since open */
    unsigned frames_from_host;         /* qgpu_submit() */
    unsigned frames_from_pinned;       /* qgpu_submit_pinned() */
    unsigned frames_from_device;       /* qgpu_submit_cl(), qgpu_submit_cl_buffer() */
    cl_mem *imports;                   /* qgpu_import_memory_fd()'s buffers (extmem.c) */
    int nb_imports;
    int profiling;                     /* QGPU_PROFILE=1: time every kernel */
    QgpuProfileEntry *profile;         /* accumulated per kernel label */
    int nb_profile;
    int timing;                        /* QGPU_TIMING=1: timing.c */
    double timing_seconds[QGPU_TIMING_PARTS];
};

/* timing.c (each a no-op unless ctx->timing) */
/* Now in seconds (0 without timing). */
double qgpu_timing_now(const QgpuContext *ctx);
/* Adds the seconds since `since` (qgpu_timing_now) to part. */
void qgpu_timing_add(QgpuContext *ctx, int part, double since);
/* Logs the totals (qgpu_flush). */
void qgpu_timing_report(QgpuContext *ctx);

/* profile.c */
/* Keeps a launch's event with its frame's slot (takes the reference). */
int qgpu_profile_add_event(QgpuContext *ctx, QgpuSlot *slot, const char *what, cl_event event);
/* Adds the slot's events to the context's totals and releases them. */
void qgpu_profile_collect(QgpuContext *ctx, QgpuSlot *slot);
void qgpu_profile_slot_free(QgpuSlot *slot);
void qgpu_profile_free(QgpuContext *ctx);

/* program.c */
/* Builds `source` (cached); `name` names it in messages and cache files.
 * Tests use it directly to check build failures. */
int qgpu_program_build(QgpuContext *ctx, const char *name, const char *source,
                       const char *extra_options, cl_program *out);
void qgpu_programs_release(QgpuContext *ctx);

/* shared_device.c */
/* The shared device's program list, locked while a context looks a
 * program up and builds it; qgpu_shared_programs returns it locked. */
QgpuProgram **qgpu_shared_programs(QgpuDevice *dev, int **count);
void qgpu_shared_unlock(QgpuDevice *dev);
/* A context's reference (qgpu_open_shared takes it, qgpu_close drops it). */
void qgpu_shared_ref(QgpuDevice *dev);
void qgpu_shared_unref(QgpuDevice *dev);
cl_context qgpu_shared_cl(const QgpuDevice *dev, cl_device_id *device);
/* context.c: qgpu_open_shared's work */
int qgpu_open_on(QgpuContext **out, const QgpuConfig *cfg, QgpuDevice *dev);

/* device.c */
int qgpu_device_select(QgpuContext *ctx, const char *selector);
/* Fills platform, names and cache id from ctx->device. */
int qgpu_device_describe(QgpuContext *ctx);

/* scores.c */
void qgpu_scores_free(QgpuScoreStore *s);
int qgpu_scores_add_frame(QgpuContext *ctx, unsigned frame_index);

/* pipeline.c */
void qgpu_pipeline_release(QgpuContext *ctx);

/* launch.c: the compute queue of a slot's lane. */
cl_command_queue qgpu_slot_queue(QgpuContext *ctx, const QgpuSlot *slot);

/* extmem.c: releases the imported buffers */
void qgpu_imports_release(QgpuContext *ctx);

/* features.c */
const QgpuFeatureClass *qgpu_feature_class_find(const char *name);
/* The class and output that declare `name` (a printed or a model name);
 * 0, or -1 when no feature outputs it. */
int qgpu_feature_output_find(const char *name, const QgpuFeatureClass **cls,
                             const QgpuFeatureOutput **output);
void qgpu_feature_free(QgpuFeature *f);
extern const QgpuFeatureClass *const qgpu_feature_classes[];

/* kernels_embedded.c (generated) */
const char *qgpu_kernel_source(const char *name);

#endif /* QGPU_INTERNAL_H */
