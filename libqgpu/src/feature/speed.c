/*
 * speed_chroma: libvmaf's SpEED-QA on the chroma planes (speed.c, libvmaf
 * 3.2). doc/metrics/speed.md describes options, outputs and limits.
 *
 * Split: speed.cl does the per-pixel work (prescale, 9-tap
 * anti-alias Gaussian at the decimated positions, decimation by 16, 3-tap
 * local mean removal) for U/V x ref/dis in one launch per frame and
 * writes the band-pass images (a few thousand floats) into the slot's
 * results. With QGPU_SPEED_FP64=1 (a device with double precision) a
 * third launch (speed_moments) adds each image's means and 325 double
 * covariance sums, libvmaf's order and bits. collect() copies the images
 * (and sums) into a job and hands the four images to helper threads
 * (task_pool.c), which run libvmaf's estimation on the host
 * (speed_linalg.c: float means and double covariance sums unless the
 * device made them, float eigenvalues and Householder QR, in libvmaf's
 * order). The frame's scores are set
 * SPEED_LOOKAHEAD frames later (the feature's look-ahead), when the
 * collect() of that later frame waits for the job, or at flush; so the
 * statistics of several frames run in parallel with each other and with
 * the device.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feature.h"
#include "speed_linalg.h"
#include "task_pool.h"

/* Frames whose host statistics may still be running when a later frame is
 * collected; the feature's look-ahead. Deep enough that the collect of
 * frame n + SPEED_LOOKAHEAD rarely finds frame n's job unfinished (a wait
 * there stops the submitting thread, and so the device); it only delays
 * when scores become final. */
#define SPEED_LOOKAHEAD 8
#define SPEED_JOBS (SPEED_LOOKAHEAD + 1)
#define SPEED_MAX_THREADS 8
#define SPEED_GW 16 /* speed_bands' work-group (speed.cl) */
#define SPEED_GH 8

/* est_params() of one band-pass image, run on a helper thread. */
typedef struct SpeedImageTask {
    QgpuTask task;
    const SpeedGeometry *g;
    const float *band;
    const double *sums; /* the device's covariance sums, or NULL */
    float sigma_nn;
    SpeedWork work;
    SpeedEstimate est;
} SpeedImageTask;

/* One frame's four images (U ref, U dis, V ref, V dis). */
typedef struct SpeedJob {
    unsigned frame_index;
    float *band;  /* copy of the slot's band-pass images */
    double *sums; /* copy of their covariance sums (device moments) */
    SpeedImageTask img[4];
} SpeedJob;

static const QgpuFeatureOutput speed_chroma_outputs[] = {
    {.name = "speed_chroma_u", .model_name = "Speed_chroma_feature_speed_chroma_u_score"},
    {.name = "speed_chroma_v", .model_name = "Speed_chroma_feature_speed_chroma_v_score"},
    {.name = "speed_chroma_uv", .model_name = "Speed_chroma_feature_speed_chroma_uv_score"},
    {.name = NULL},
};

typedef struct SpeedState {
    /* options (libvmaf speed.c options_chroma) */
    double kernelscale;
    double max_val;
    double nn_floor;
    double prescale;
    char prescale_method[QGPU_OPT_STRING_MAX];
    double sigma_nn;
    int weight_var_mode;
    /* state */
    SpeedGeometry g;
    int method;
    cl_kernel k_bands, k_mom;
    int moments; /* the device computes the covariance sums (speed_moments) */
    cl_mem taps_aa, taps_lp, rows1, rows2, rowsd, cols1, cols2, colsd;
    int fw_aa, fw_lp;
    int tile_w, tile_h; /* band-pass outputs per speed_bands group */
    size_t offset, sums_offset;
    float scale;
    int id[3];
    QgpuTaskPool *pool;
    SpeedJob jobs[SPEED_JOBS];
    unsigned started, finished; /* frames handed to jobs / scored */
} SpeedState;

#define SPEED_OFF(f) offsetof(SpeedState, f)

static const QgpuOptionDef speed_options[] = {
    {"speed_kernelscale", "ks", QGPU_OPT_DOUBLE, SPEED_OFF(kernelscale), 1.0, NULL, 0.1, 4.0,
     QGPU_OPT_PARAM, "Gaussian kernel scale (one of libvmaf's 21 valid values)"},
    {"speed_prescale", "ps", QGPU_OPT_DOUBLE, SPEED_OFF(prescale), 1.0, NULL, 0.1, 4.0,
     QGPU_OPT_PARAM, "resize factor of the chroma planes before the analysis"},
    {"speed_prescale_method", "psm", QGPU_OPT_STRING, SPEED_OFF(prescale_method), 0,
     "nearest", 0, 0, QGPU_OPT_PARAM, "resize method: nearest or bilinear"},
    {"speed_sigma_nn", "snn", QGPU_OPT_DOUBLE, SPEED_OFF(sigma_nn), 0.29, NULL, 0.1, 2.0,
     QGPU_OPT_PARAM, "standard deviation of the neural noise"},
    {"speed_nn_floor", "nnf", QGPU_OPT_DOUBLE, SPEED_OFF(nn_floor), 0.0, NULL, 0.0, 1.0,
     QGPU_OPT_PARAM, "neural noise floor, fraction of sigma_nn"},
    {"speed_max_val", "mxv", QGPU_OPT_DOUBLE, SPEED_OFF(max_val), 1000.0, NULL, 0.0, 1000.0,
     QGPU_OPT_PARAM, "scores are clipped to this value"},
    {"speed_weight_var_mode", "wvm", QGPU_OPT_INT, SPEED_OFF(weight_var_mode), 0, NULL, 0, 6,
     QGPU_OPT_PARAM, "variance weighting of the ref/dis terms (0..6)"},
    {NULL},
};

static int upload_table(QgpuContext *ctx, int method, int src, int dst, cl_mem *i1, cl_mem *i2,
                        cl_mem *d)
{
    int *a = malloc(sizeof(int) * dst), *b = malloc(sizeof(int) * dst);
    float *w = malloc(sizeof(float) * dst);
    int err = QGPU_ERR_NO_MEMORY;
    if (a && b && w) {
        speed_scale_table(method, src, dst, a, b, w);
        err = qgpu_buffer_upload(ctx, sizeof(int) * dst, a, i1, "speed_chroma: scale table");
        if (!err)
            err = qgpu_buffer_upload(ctx, sizeof(int) * dst, b, i2, "speed_chroma: scale table");
        if (!err)
            err = qgpu_buffer_upload(ctx, sizeof(float) * dst, w, d, "speed_chroma: scale table");
    }
    free(a);
    free(b);
    free(w);
    return err;
}

static void estimate_task(void *arg)
{
    SpeedImageTask *t = arg;
    const size_t stride = (size_t)t->g->trunc_w;
    if (t->sums)
        speed_estimate_sums(t->g, t->sums, t->band, stride, t->sigma_nn, &t->work, &t->est);
    else
        speed_estimate(t->g, t->band, stride, t->sigma_nn, &t->work, &t->est);
}

static int jobs_alloc(SpeedState *s)
{
    const size_t img = (size_t)s->g.trunc_w * s->g.trunc_h;
    const int nb = s->g.nblocks;
    for (int j = 0; j < SPEED_JOBS; j++) {
        SpeedJob *job = &s->jobs[j];
        job->band = malloc(sizeof(float) * 4 * img);
        if (!job->band)
            return -1;
        if (s->moments) {
            job->sums = malloc(sizeof(double) * 4 * SPEED_NSUMS);
            if (!job->sums)
                return -1;
        }
        for (int z = 0; z < 4; z++) {
            SpeedImageTask *t = &job->img[z];
            t->task.run = estimate_task;
            t->task.arg = t;
            t->g = &s->g;
            t->band = job->band + z * img;
            t->sums = job->sums ? job->sums + z * SPEED_NSUMS : NULL;
            t->sigma_nn = (float)s->sigma_nn;
            t->est.entropies = malloc(sizeof(float) * nb);
            t->est.variances = malloc(sizeof(float) * nb);
            if (!t->est.entropies || !t->est.variances || speed_work_alloc(&t->work, nb))
                return -1;
        }
    }
    return 0;
}

static void jobs_free(SpeedState *s)
{
    for (int j = 0; j < SPEED_JOBS; j++) {
        SpeedJob *job = &s->jobs[j];
        free(job->band);
        free(job->sums);
        job->band = NULL;
        job->sums = NULL;
        for (int z = 0; z < 4; z++) {
            SpeedImageTask *t = &job->img[z];
            free(t->est.entropies);
            free(t->est.variances);
            t->est.entropies = t->est.variances = NULL;
            speed_work_free(&t->work);
        }
    }
}

static int speed_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    SpeedState *s = f->priv;
    QgpuContext *ctx = f->ctx;
    char opts[64];
    cl_program program;
    int err;

    if (!speed_kernelscale_valid(s->kernelscale))
        return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                          "speed_chroma: invalid speed_kernelscale %g (libvmaf accepts 1, 0.5, "
                          "1.5, 2, 2/3, 2.4, 360/97, 4/3, 3.5/3, 3.75/3, 4.25/3, 5/3, 3, 1/2.25, "
                          "1.4746, 1.54, 1.6, 1.06667, 0.711111, 0.74074, 1.111111)",
                          s->kernelscale);
    if (!strcmp(s->prescale_method, "nearest"))
        s->method = 0;
    else if (!strcmp(s->prescale_method, "bilinear"))
        s->method = 1;
    else if (!strcmp(s->prescale_method, "bicubic") || !strcmp(s->prescale_method, "lanczos4"))
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "speed_chroma: speed_prescale_method %s is not implemented (nearest, "
                          "bilinear)", s->prescale_method);
    else
        return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                          "speed_chroma: invalid speed_prescale_method '%s' (nearest, bilinear, "
                          "bicubic, lanczos4)", s->prescale_method);
    if (fmt->nb_planes != 3)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "speed_chroma: needs chroma planes (4:0:0 input has none)");
    switch (fmt->bitdepth) {
    case 8: s->scale = 1.0f; break;
    case 10: s->scale = 4.0f; break;
    case 12: s->scale = 16.0f; break;
    case 16: s->scale = 256.0f; break;
    default:
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "speed_chroma: %d-bit input is not supported (8, 10, 12, 16 bit, as "
                          "libvmaf)", fmt->bitdepth);
    }
    if (speed_geometry(&s->g, fmt->vmaf_plane_w[1], fmt->vmaf_plane_h[1], s->prescale))
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "speed_chroma: chroma planes of %dx%d (x %g prescale = %dx%d) are too "
                          "small; SpEED needs at least 80x80 after the prescale",
                          fmt->vmaf_plane_w[1], fmt->vmaf_plane_h[1], s->prescale,
                          s->g.scaled_w, s->g.scaled_h);
    if (!s->g.resample && (s->g.scaled_w != s->g.src_w || s->g.scaled_h != s->g.src_h))
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "speed_chroma: speed_prescale %g is within 1e-3 of 1 but changes the "
                          "size (libvmaf then reads outside the plane)", s->prescale);

    if ((err = qgpu_outputs_register(f, 0, 3, s->id)))
        return err;

    float taps[SPEED_MAX_TAPS];
    float ks = (float)s->kernelscale;
    s->fw_aa = speed_filter_size(1, ks);
    speed_antialias_filter(taps, SPEED_NUM_SCALES, ks);
    err = qgpu_buffer_upload(ctx, sizeof(float) * s->fw_aa, taps, &s->taps_aa,
                             "speed_chroma: anti-alias taps");
    if (err)
        return err;
    s->fw_lp = speed_filter_size(SPEED_NUM_SCALES, ks);
    speed_lowpass_filter(taps, SPEED_NUM_SCALES, ks);
    err = qgpu_buffer_upload(ctx, sizeof(float) * s->fw_lp, taps, &s->taps_lp,
                             "speed_chroma: low-pass taps");
    if (err)
        return err;
    /* without a resample the tables are the identity (nearest, same size) */
    int method = s->g.resample ? s->method : 0;
    err = upload_table(ctx, method, s->g.src_w, s->g.scaled_w, &s->cols1, &s->cols2, &s->colsd);
    if (!err)
        err = upload_table(ctx, method, s->g.src_h, s->g.scaled_h, &s->rows1, &s->rows2,
                           &s->rowsd);
    if (err)
        return err;
    s->method = method;
    /* a group's decimated region, its tile and a border of fw_lp / 2
     * (at most 4: speed_kernelscale <= 4), fits its 16 x 8 work-items'
     * 256 floats of local memory */
    const int r = s->fw_lp / 2;
    if (r > 4)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "speed_chroma: a %d-tap low-pass filter is too wide", s->fw_lp);
    s->tile_w = SPEED_GW - 2 * r;
    s->tile_h = SPEED_GH - 2 * r > 2 ? SPEED_GH - 2 * r : 2;
    /* The covariance sums on the device (speed_moments) only when asked,
     * QGPU_SPEED_FP64=1, on a device with double precision. Measured on
     * the H200 at 1080p (doc/metrics/speed.md): speed_chroma alone
     * 8,333-8,361 fps with them against 5,333-6,332 on the host, but VMAF
     * v1 4,179-4,443 against 5,042-5,337: the kernel (0.08 ms, latency-bound)
     * lengthens every frame, and with 4 frames in flight on 4 lanes that
     * costs more than the host's time. On PoCL (CPU) 255 against 900 fps. */
    s->moments = qgpu_fp64_variant(ctx, "QGPU_SPEED_FP64", 0, 0);
    snprintf(opts, sizeof(opts), "-DSPEED_BPS=%d -DSPEED_FP64=%d", fmt->bytes_per_sample,
             s->moments);
    err = qgpu_program_get(ctx, "speed", opts, &program);
    if (!err)
        err = qgpu_kernel_create(ctx, program, "speed_bands", &s->k_bands);
    if (!err && s->moments)
        err = qgpu_kernel_create(ctx, program, "speed_moments", &s->k_mom);
    if (!err)
        err = qgpu_results_reserve(ctx, sizeof(float) * 4 * s->g.trunc_w * s->g.trunc_h,
                                   &s->offset);
    if (!err && s->moments)
        err = qgpu_results_reserve(ctx, sizeof(double) * 4 * SPEED_NSUMS, &s->sums_offset);
    if (err)
        return err;
    err = jobs_alloc(s);
    if (err)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "speed_chroma: out of memory");
    if (qgpu_task_pool_create(&s->pool, qgpu_task_pool_default_threads("QGPU_SPEED_THREADS",
                                                                      SPEED_MAX_THREADS)))
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "speed_chroma: cannot start threads");
    return 0;
}

static int speed_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    SpeedState *s = f->priv;
    const QgpuVideoFormat *fmt = f->fmt;
    const size_t local[3] = {SPEED_GW, SPEED_GH, 1};
    const size_t global[3] = {
        SPEED_GW * (size_t)((s->g.trunc_w + s->tile_w - 1) / s->tile_w),
        SPEED_GH * (size_t)((s->g.trunc_h + s->tile_h - 1) / s->tile_h), 4};
    const QgpuArg args[] = {
        qgpu_arg_mem("ref", slot->ref),
        qgpu_arg_mem("dis", slot->dist),
        qgpu_arg_uint("off_u", (cl_uint)(fmt->plane_offset[1] / fmt->bytes_per_sample)),
        qgpu_arg_uint("off_v", (cl_uint)(fmt->plane_offset[2] / fmt->bytes_per_sample)),
        qgpu_arg_int("pitch", fmt->plane_w[1]),
        qgpu_arg_float("scale", s->scale),
        qgpu_arg_int("method", s->method),
        qgpu_arg_int("scaled_w", s->g.scaled_w),
        qgpu_arg_int("scaled_h", s->g.scaled_h),
        qgpu_arg_int("dec_w", s->g.dec_w),
        qgpu_arg_int("dec_h", s->g.dec_h),
        qgpu_arg_mem("y1", s->rows1),
        qgpu_arg_mem("y2", s->rows2),
        qgpu_arg_mem("dy", s->rowsd),
        qgpu_arg_mem("x1", s->cols1),
        qgpu_arg_mem("x2", s->cols2),
        qgpu_arg_mem("dx", s->colsd),
        qgpu_arg_mem("taps_aa", s->taps_aa),
        qgpu_arg_int("fw_aa", s->fw_aa),
        qgpu_arg_mem("taps_lp", s->taps_lp),
        qgpu_arg_int("fw_lp", s->fw_lp),
        qgpu_arg_int("tw", s->tile_w),
        qgpu_arg_int("th", s->tile_h),
        qgpu_arg_int("trunc_w", s->g.trunc_w),
        qgpu_arg_int("trunc_h", s->g.trunc_h),
        qgpu_arg_mem("results", slot->results),
        qgpu_arg_uint("results_index", (cl_uint)(s->offset / sizeof(float))),
    };
    int err = qgpu_launch(f->ctx, slot, s->k_bands, "speed_chroma: speed_bands", args,
                          QGPU_ARRAY_SIZE(args), 3, global, local);
    if (err || !s->moments)
        return err;

    size_t g3[2] = {SPEED_NSUMS, 4};
    const QgpuArg mom_args[] = {
        qgpu_arg_mem("results", slot->results),
        qgpu_arg_uint("band_index", (cl_uint)(s->offset / sizeof(float))),
        qgpu_arg_int("trunc_w", s->g.trunc_w),
        qgpu_arg_int("trunc_h", s->g.trunc_h),
        qgpu_arg_uint("sums_index", (cl_uint)(s->sums_offset / sizeof(double))),
    };
    return qgpu_launch(f->ctx, slot, s->k_mom, "speed_chroma: speed_moments", mom_args,
                       QGPU_ARRAY_SIZE(mom_args), 2, g3, NULL);
}

/* Waits for the oldest started frame's statistics and sets its scores. */
static int finish_frame(QgpuFeature *f)
{
    SpeedState *s = f->priv;
    SpeedJob *job = &s->jobs[s->finished % SPEED_JOBS];
    const float snn = (float)s->sigma_nn, nnf = (float)s->nn_floor;
    float score[2];
    int singular[2];

    for (int z = 0; z < 4; z++)
        qgpu_task_pool_wait(s->pool, &job->img[z].task);
    s->finished++;
    for (int p = 0; p < 2; p++) {
        const SpeedEstimate *ref = &job->img[2 * p].est, *dis = &job->img[2 * p + 1].est;
        score[p] = speed_pair_score(&s->g, ref, dis, snn, nnf, s->weight_var_mode);
        singular[p] = ref->singular || dis->singular;
    }
    /* speed.c extract_chroma: a singular channel's uv is the other channel */
    float uv;
    if (singular[0] && !singular[1])
        uv = score[1];
    else if (singular[1] && !singular[0])
        uv = score[0];
    else
        uv = (score[0] + score[1]) / 2.0;
    double v[3] = {score[0], score[1], uv};
    int err = 0;
    for (int k = 0; k < 3; k++)
        err |= qgpu_score_set(f->ctx, s->id[k], job->frame_index, fmin(v[k], s->max_val));
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static int speed_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    SpeedState *s = f->priv;
    const float *band = (const float *)((const unsigned char *)slot->results_host + s->offset);
    const size_t img = (size_t)s->g.trunc_w * s->g.trunc_h;
    SpeedJob *job = &s->jobs[s->started % SPEED_JOBS];
    int err = 0;

    /* the job's previous frame was finished SPEED_LOOKAHEAD collects ago */
    job->frame_index = slot->frame_index;
    memcpy(job->band, band, sizeof(float) * 4 * img);
    if (s->moments)
        memcpy(job->sums, (const unsigned char *)slot->results_host + s->sums_offset,
               sizeof(double) * 4 * SPEED_NSUMS);
    for (int z = 0; z < 4; z++)
        qgpu_task_pool_submit(s->pool, &job->img[z].task);
    s->started++;
    while (!err && s->started - s->finished > SPEED_LOOKAHEAD)
        err = finish_frame(f);
    return err;
}

static int speed_flush(QgpuFeature *f)
{
    SpeedState *s = f->priv;
    int err = 0;
    while (!err && s->finished < s->started)
        err = finish_frame(f);
    return err;
}

static void speed_uninit(QgpuFeature *f)
{
    SpeedState *s = f->priv;
    qgpu_kernel_release(&s->k_bands);
    qgpu_kernel_release(&s->k_mom);
    qgpu_buffer_release(&s->taps_aa);
    qgpu_buffer_release(&s->taps_lp);
    qgpu_buffer_release(&s->rows1);
    qgpu_buffer_release(&s->rows2);
    qgpu_buffer_release(&s->rowsd);
    qgpu_buffer_release(&s->cols1);
    qgpu_buffer_release(&s->cols2);
    qgpu_buffer_release(&s->colsd);
    /* runs what is still queued (a close without flush), then joins */
    qgpu_task_pool_destroy(&s->pool);
    jobs_free(s);
}

const QgpuFeatureClass qgpu_feature_speed_chroma = {
    .name = "speed_chroma",
    .outputs = speed_chroma_outputs,
    .options = speed_options,
    .priv_size = sizeof(SpeedState),
    .flags = QGPU_FEATURE_NEEDS_CHROMA | QGPU_FEATURE_LANES,
    .lookahead = SPEED_LOOKAHEAD,
    .init = speed_init,
    .enqueue = speed_enqueue,
    .collect = speed_collect,
    .flush = speed_flush,
    .uninit = speed_uninit,
};
