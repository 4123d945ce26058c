/*
 * float_motion: libvmaf's float motion extractor (libvmaf 3.2.0,
 * libvmaf/src/feature/float_motion.c + motion.c, motion_blend_tools.h),
 * reference clip only, luma:
 *
 *   m[i]     = SAD(blur(ref[i-1]), blur(ref[i])) / (w*h), in float
 *              (float_motion.cl); m[0] = 0
 *   motion   = min(m[i] * fps_weight, max_val)            (debug, default on)
 *   motion2  = 0 for frame 0; min(min(m[i], m[i+1]) * fps_weight, max_val);
 *              last frame: min(m[last] * fps_weight, max_val)
 *   motion3  = min(blend(motion2 value * fps_weight), max_val) with the
 *              unweighted min as above, blend(x) = x*factor + (1-factor) *
 *              min(offset, x); frame 0 takes blend(m[1] * fps_weight) (set
 *              when frame 1 arrives); 0 for a one-frame clip
 *   motion_force_zero: every output 0, no device work.
 *   motion_add_uv: m[i] = m_Y + m_U + m_V (double sum of the per-plane
 *              float scores), chroma planes of libvmaf's size.
 *   motion_add_scale1: the luma score is the float sum of the SAD score
 *              above and the same over both blurred frames scaled to
 *              round(w/2) x round(h/2) (bilinear, vif_tools.c).
 * Frame i is final once frame i+1 is in, or at flush (lookahead 1).
 *
 * Launches per frame and plane: fmotion_bands (the blur of both frames
 * from their samples, |prev - cur| and the row sums: the previous frame's
 * samples kept in hist[][]); with motion_add_scale1, whose bilinear
 * scaling reads the whole blurred planes, fmotion_blur (the frame's
 * blurred luma into blur[]) and fmotion_sad instead, plus
 * fmotion_scale1 and fmotion_sad_terms. Every launch that reads or writes
 * the history of another frame is chained after the previous frame's.
 *
 * Refused with QGPU_ERR_UNSUPPORTED: motion_filter_size=3 (coefficients
 * not confirmed), motion_add_scale1 together with motion_add_uv (libvmaf
 * then scales the chroma planes with the luma pitch: undefined values).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "feature.h"

#define FM_TW 64 /* tile of float_motion.cl */
#define FM_TH 16
#define FM_SAD_ROWS 8  /* common.cl ROW_SUMS_ROWS: rows per fmotion_bands/_sad work-group */
#define FM_SAD_WG 256  /* common.cl ROW_SUMS_WG: its work-items */

/* Outputs (libvmaf's float_motion.c names) */
enum { OUT_MOTION, OUT_MOTION2, OUT_MOTION3, OUT_COUNT };

static const QgpuFeatureOutput float_motion_outputs[] = {
    [OUT_MOTION] = {"motion", "VMAF_feature_motion_score"}, /* debug=true */
    [OUT_MOTION2] = {"motion2", "VMAF_feature_motion2_score"},
    [OUT_MOTION3] = {"motion3", "VMAF_feature_motion3_score"},
    [OUT_COUNT] = {NULL},
};

typedef struct FloatMotionState {
    /* options */
    bool debug;
    bool force_zero;
    double fps_weight;
    double blend_factor;
    double blend_offset;
    bool add_scale1;
    int filter_size;
    bool add_uv;
    double max_val;
    /* state */
    cl_kernel k_bands;    /* without motion_add_scale1 */
    cl_mem hist[3][2];    /* frames n % 2: the samples of each plane (packed) */
    cl_kernel k_blur, k_sad; /* with motion_add_scale1 */
    int nb_planes;
    cl_mem blur[2];       /* motion_add_scale1 (luma alone): the blurred luma of
                             frames n % 2; launches that touch it are chained */
    cl_event chain;       /* the last of those, across lanes */
    int w[3], h[3];
    int row_index[3];     /* first row sum of each plane in the results */
    int rows;             /* h[0] + h[1] + h[2] (+ sh) */
    /* motion_add_scale1 */
    cl_kernel k_scale1, k_sad_terms;
    cl_mem diff_s1[QGPU_MAX_LANES];
    int sw, sh, row_index_s1;
    float ratio_x, ratio_y;
    float inv_scale;
    size_t offset;
    int m_id, m2_id, m3_id;
    double prev_m;        /* m[i-1] (unweighted) */
    unsigned collected;
} FloatMotionState;

static const QgpuOptionDef float_motion_options[] = {
    {"debug", NULL, QGPU_OPT_BOOL, offsetof(FloatMotionState, debug), 1, NULL, 0, 1, 0,
     "also output motion (the SAD score)"},
    {"motion_force_zero", "force_0", QGPU_OPT_BOOL, offsetof(FloatMotionState, force_zero), 0,
     NULL, 0, 1, QGPU_OPT_PARAM, "force every motion score to zero"},
    {"motion_fps_weight", "mfw", QGPU_OPT_DOUBLE, offsetof(FloatMotionState, fps_weight), 1.0,
     NULL, 0.0, 5.0, QGPU_OPT_PARAM, "fps-aware multiplicative weight"},
    {"motion_blend_factor", "mbf", QGPU_OPT_DOUBLE, offsetof(FloatMotionState, blend_factor),
     1.0, NULL, 0.0, 1.0, QGPU_OPT_PARAM, "blend motion3 given an offset"},
    {"motion_blend_offset", "mbo", QGPU_OPT_DOUBLE, offsetof(FloatMotionState, blend_offset),
     40.0, NULL, 0.0, 1000.0, QGPU_OPT_PARAM, "blend motion3 starting from this offset"},
    {"motion_add_scale1", "mdc", QGPU_OPT_BOOL, offsetof(FloatMotionState, add_scale1), 0, NULL,
     0, 1, QGPU_OPT_PARAM, "add the motion of the half-size frames"},
    {"motion_filter_size", "mfs", QGPU_OPT_INT, offsetof(FloatMotionState, filter_size), 5, NULL,
     0, 9, QGPU_OPT_PARAM, "blur size: 1 none, 3 (not implemented), else 5"},
    {"motion_add_uv", "mau", QGPU_OPT_BOOL, offsetof(FloatMotionState, add_uv), 0, NULL, 0, 1,
     QGPU_OPT_PARAM, "add the motion of the chroma planes"},
    {"motion_max_val", "mmxv", QGPU_OPT_DOUBLE, offsetof(FloatMotionState, max_val), 10000.0,
     NULL, 0.0, 10000.0, QGPU_OPT_PARAM, "clip motion scores to this value"},
    {NULL},
};

static unsigned float_motion_flags(const QgpuFeature *f)
{
    const FloatMotionState *s = f->priv;
    return (s->add_uv ? QGPU_FEATURE_NEEDS_CHROMA : 0) | QGPU_FEATURE_LANES;
}

static int float_motion_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    FloatMotionState *s = f->priv;
    QgpuContext *ctx = f->ctx;
    int err, bpc = fmt->bitdepth;
    char opts[64];
    cl_program program;

    if (s->filter_size == 3)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_motion: motion_filter_size=3 is not implemented");
    if (s->add_scale1 && s->add_uv)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_motion: motion_add_scale1 with motion_add_uv is not implemented "
                          "(libvmaf reads the scaled chroma planes with the luma pitch)");
    if (bpc != 8 && bpc != 10 && bpc != 12 && bpc != 16)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_motion: %d-bit input is not supported (8, 10, 12, 16 as libvmaf)",
                          bpc);
    if (s->add_uv && fmt->nb_planes != 3)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_motion: motion_add_uv needs chroma planes (the input is gray)");
    s->nb_planes = s->add_uv ? 3 : 1;
    s->rows = 0;
    for (int p = 0; p < s->nb_planes; p++) {
        s->w[p] = fmt->vmaf_plane_w[p];
        s->h[p] = fmt->vmaf_plane_h[p];
        if (s->w[p] < 3 || s->h[p] < 3)
            return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                              "float_motion: %s %dx%d is too small (needs at least 3x3 for the "
                              "mirrored 5-tap blur)",
                              p ? "chroma plane" : "picture", s->w[p], s->h[p]);
        s->row_index[p] = s->rows;
        s->rows += s->h[p];
    }
    if (s->add_scale1) { /* motion.c: (int)(w * 0.5 + 0.5); ratio in float */
        s->sw = (int)(s->w[0] * 0.5 + 0.5);
        s->sh = (int)(s->h[0] * 0.5 + 0.5);
        s->ratio_x = (float)s->w[0] / (float)s->sw;
        s->ratio_y = (float)s->h[0] / (float)s->sh;
        s->row_index_s1 = s->rows;
        s->rows += s->sh;
    }
    /* picture_copy.c: 8-bit units */
    s->inv_scale = bpc == 8 ? 1.0f : bpc == 10 ? 0.25f : bpc == 12 ? 0.0625f : 0.00390625f;
    err = qgpu_output_register(f, OUT_MOTION2, &s->m2_id);
    if (!err)
        err = qgpu_output_register(f, OUT_MOTION3, &s->m3_id);
    s->m_id = -1;
    if (!err && s->debug)
        err = qgpu_output_register(f, OUT_MOTION, &s->m_id);
    if (err)
        return err;
    if (s->force_zero) /* no device work; 8 bytes keep the frame's readback valid */
        return qgpu_results_reserve(ctx, sizeof(uint64_t), &s->offset);

    snprintf(opts, sizeof(opts), "-DFM_IN8=%d -DFM_TAPS=%d", fmt->bytes_per_sample == 1,
             s->filter_size == 1 ? 1 : 5);
    err = qgpu_program_get(ctx, "float_motion", opts, &program);
    if (!err && !s->add_scale1)
        err = qgpu_kernel_create(ctx, program, "fmotion_bands", &s->k_bands);
    for (int p = 0; !err && !s->add_scale1 && p < s->nb_planes; p++) {
        size_t bytes = (size_t)s->w[p] * s->h[p] * fmt->bytes_per_sample;
        err = qgpu_buffer_create(ctx, bytes, &s->hist[p][0]);
        if (!err)
            err = qgpu_buffer_create(ctx, bytes, &s->hist[p][1]);
    }
    if (!err && s->add_scale1) {
        err = qgpu_kernel_create(ctx, program, "fmotion_blur", &s->k_blur);
        if (!err)
            err = qgpu_kernel_create(ctx, program, "fmotion_sad", &s->k_sad);
        size_t bytes = (size_t)s->w[0] * s->h[0] * sizeof(float);
        if (!err)
            err = qgpu_buffer_create(ctx, bytes, &s->blur[0]);
        if (!err)
            err = qgpu_buffer_create(ctx, bytes, &s->blur[1]);
        if (!err)
            err = qgpu_kernel_create(ctx, program, "fmotion_scale1", &s->k_scale1);
        if (!err)
            err = qgpu_kernel_create(ctx, program, "fmotion_sad_terms", &s->k_sad_terms);
        for (int i = 0; !err && i < qgpu_lanes(ctx); i++)
            err = qgpu_buffer_create(ctx, (size_t)s->sw * s->sh * sizeof(float),
                                     &s->diff_s1[i]);
    }
    if (!err)
        err = qgpu_results_reserve(ctx, (size_t)s->rows * sizeof(float), &s->offset);
    return err;
}

/* the rows' sums of a column-major plane of terms into the results:
 * |prev - cur| of the blurred planes `a`, `b` (k_sad: chained, as it reads
 * the previous frame's plane), or motion_add_scale1's terms `a`
 * (k_sad_terms, b NULL) */
static int enqueue_rows(QgpuFeature *f, QgpuSlot *slot, cl_mem a, cl_mem b, cl_int w, cl_int h,
                        int row_index)
{
    FloatMotionState *s = f->priv;
    size_t local = FM_SAD_WG, global = (size_t)(h + FM_SAD_ROWS - 1) / FM_SAD_ROWS * FM_SAD_WG;
    const cl_uint index = (cl_uint)(s->offset / sizeof(float)) + (cl_uint)row_index;
    if (!b) {
        const QgpuArg args[] = {
            qgpu_arg_mem("diff", a),
            qgpu_arg_int("w", w),
            qgpu_arg_int("h", h),
            qgpu_arg_mem("results", slot->results),
            qgpu_arg_uint("results_index", index),
        };
        return qgpu_launch(f->ctx, slot, s->k_sad_terms, "float_motion: sad", args,
                           QGPU_ARRAY_SIZE(args), 1, &global, &local);
    }
    const QgpuArg args[] = {
        qgpu_arg_mem("prev", a),
        qgpu_arg_mem("cur", b),
        qgpu_arg_int("w", w),
        qgpu_arg_int("h", h),
        qgpu_arg_mem("results", slot->results),
        qgpu_arg_uint("results_index", index),
    };
    return qgpu_launch_after(f->ctx, slot, s->k_sad, "float_motion: sad", args,
                             QGPU_ARRAY_SIZE(args), 1, &global, &local, &s->chain);
}

static int enqueue_scale1(QgpuFeature *f, QgpuSlot *slot)
{
    FloatMotionState *s = f->priv;
    unsigned n = slot->frame_index;
    size_t local[2] = {64, 1}, global[2] = {qgpu_round_up(s->sh, 64), (size_t)s->sw};
    const QgpuArg args[] = {
        qgpu_arg_mem("prev", s->blur[(n + 1) % 2]),
        qgpu_arg_mem("cur", s->blur[n % 2]),
        qgpu_arg_int("w", s->w[0]),
        qgpu_arg_int("h", s->h[0]),
        qgpu_arg_int("sw", s->sw),
        qgpu_arg_int("sh", s->sh),
        qgpu_arg_float("ratio_x", s->ratio_x),
        qgpu_arg_float("ratio_y", s->ratio_y),
        qgpu_arg_mem("diff", s->diff_s1[slot->lane]),
    };
    int err = qgpu_launch_after(f->ctx, slot, s->k_scale1, "float_motion: scale1", args,
                                QGPU_ARRAY_SIZE(args), 2, global, local, &s->chain);
    if (err)
        return err;
    return enqueue_rows(f, slot, s->diff_s1[slot->lane], NULL, s->sw, s->sh, s->row_index_s1);
}

/* plane p's blur, |prev - cur| and row sums in one launch (fmotion_bands):
 * chained, as it reads the previous frame's samples from hist[p][] and
 * writes its own over the ones the previous frame's launch read; frame 0
 * only keeps its samples */
static int enqueue_bands(QgpuFeature *f, QgpuSlot *slot, int p)
{
    FloatMotionState *s = f->priv;
    const QgpuVideoFormat *fmt = f->fmt;
    unsigned n = slot->frame_index;
    size_t local = FM_SAD_WG;
    size_t global = (size_t)(s->h[p] + FM_SAD_ROWS - 1) / FM_SAD_ROWS * FM_SAD_WG;
    const QgpuArg args[] = {
        qgpu_arg_mem("src", slot->ref),
        qgpu_arg_uint("src_offset", (cl_uint)(fmt->plane_offset[p] / fmt->bytes_per_sample)),
        qgpu_arg_int("pitch", fmt->plane_w[p]),
        qgpu_arg_mem("hist_prev", s->hist[p][(n + 1) % 2]),
        qgpu_arg_int("has_prev", n > 0),
        qgpu_arg_mem("hist", s->hist[p][n % 2]),
        qgpu_arg_int("w", s->w[p]),
        qgpu_arg_int("h", s->h[p]),
        qgpu_arg_float("inv_scale", s->inv_scale),
        qgpu_arg_mem("results", slot->results),
        qgpu_arg_uint("results_index",
                      (cl_uint)(s->offset / sizeof(float)) + (cl_uint)s->row_index[p]),
    };
    return qgpu_launch_after(f->ctx, slot, s->k_bands, "float_motion: bands", args,
                             QGPU_ARRAY_SIZE(args), 1, &global, &local, &s->chain);
}

static int enqueue_plane(QgpuFeature *f, QgpuSlot *slot, int p)
{
    FloatMotionState *s = f->priv;
    const QgpuVideoFormat *fmt = f->fmt;
    unsigned n = slot->frame_index;
    int w = s->w[p], h = s->h[p], err;
    if (!s->add_scale1)
        return enqueue_bands(f, slot, p);
    size_t local[2] = {128, 1};
    size_t global[2] = {(size_t)((w + FM_TW - 1) / FM_TW) * 128,
                        (size_t)((h + FM_TH - 1) / FM_TH)};
    const QgpuArg args[] = {
        qgpu_arg_mem("src", slot->ref),
        qgpu_arg_uint("src_offset", (cl_uint)(fmt->plane_offset[p] / fmt->bytes_per_sample)),
        qgpu_arg_int("pitch", fmt->plane_w[p]),
        qgpu_arg_int("w", w),
        qgpu_arg_int("h", h),
        qgpu_arg_float("inv_scale", s->inv_scale),
        qgpu_arg_mem("blur", s->blur[n % 2]),
    };
    /* after the previous frame's launches that read or write blur[] */
    err = qgpu_launch_after(f->ctx, slot, s->k_blur, "float_motion: blur", args,
                            QGPU_ARRAY_SIZE(args), 2, global, local, &s->chain);
    if (err)
        return err;
    if (n == 0)
        return 0;
    err = enqueue_rows(f, slot, s->blur[(n + 1) % 2], s->blur[n % 2], w, h,
                       s->row_index[p]);
    if (!err) /* motion_add_scale1 scores the luma alone (float_motion_init) */
        err = enqueue_scale1(f, slot);
    return err;
}

static int float_motion_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    FloatMotionState *s = f->priv;
    if (s->force_zero)
        return 0;
    for (int p = 0; p < s->nb_planes; p++) {
        int err = enqueue_plane(f, slot, p);
        if (err)
            return err;
    }
    return 0;
}

static double min_d(double a, double b)
{
    return a < b ? a : b;
}

/* motion_blend_tools.h */
static double blend(const FloatMotionState *s, double x)
{
    return x * s->blend_factor + (1 - s->blend_factor) * min_d(s->blend_offset, x);
}

static int set_m2_m3(QgpuFeature *f, unsigned i, double m)
{
    FloatMotionState *s = f->priv;
    int err = qgpu_score_set(f->ctx, s->m2_id, i, min_d(m * s->fps_weight, s->max_val));
    err |= qgpu_score_set(f->ctx, s->m3_id, i,
                          min_d(blend(s, m * s->fps_weight), s->max_val));
    return err;
}

static int float_motion_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    FloatMotionState *s = f->priv;
    unsigned n = slot->frame_index;
    int err = 0;

    s->collected = n + 1;
    if (s->force_zero) {
        err |= qgpu_score_set(f->ctx, s->m2_id, n, 0.0);
        err |= qgpu_score_set(f->ctx, s->m3_id, n, 0.0);
        if (s->debug)
            err |= qgpu_score_set(f->ctx, s->m_id, n, 0.0);
        return err ? QGPU_ERR_INVALID_ARG : 0;
    }
    if (n == 0) {
        err |= qgpu_score_set(f->ctx, s->m2_id, 0, 0.0);
        if (s->debug)
            err |= qgpu_score_set(f->ctx, s->m_id, 0, 0.0);
        s->prev_m = 0.0;
        return err ? QGPU_ERR_INVALID_ARG : 0;
    }

    /* vmaf_image_sad_c per plane: float row sums added in float from the
     * top, then divided in float by (float)(w*h); with motion_add_uv the
     * planes' scores are added in double, Y + U + V */
    const float *rows = (const float *)((const unsigned char *)slot->results_host + s->offset);
    double m = 0.0;
    for (int p = 0; p < s->nb_planes; p++) {
        float accum = 0.0f;
        for (int y = 0; y < s->h[p]; y++)
            accum += rows[s->row_index[p] + y];
        volatile float q = accum / (float)(s->w[p] * s->h[p]);
        if (p == 0 && s->add_scale1) { /* motion_scale0 + motion_scale1, in float */
            float accum1 = 0.0f;
            for (int y = 0; y < s->sh; y++)
                accum1 += rows[s->row_index_s1 + y];
            volatile float q1 = accum1 / (float)(s->sw * s->sh);
            q = q + q1;
        }
        m = p ? m + (double)q : (double)q;
    }

    if (s->debug)
        err |= qgpu_score_set(f->ctx, s->m_id, n, min_d(m * s->fps_weight, s->max_val));
    if (n == 1) /* motion3 of frame 0 from m[1] alone */
        err |= qgpu_score_set(f->ctx, s->m3_id, 0,
                              min_d(blend(s, m * s->fps_weight), s->max_val));
    else
        err |= set_m2_m3(f, n - 1, min_d(m, s->prev_m));
    s->prev_m = m;
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static int float_motion_flush(QgpuFeature *f)
{
    FloatMotionState *s = f->priv;
    int err = 0;
    if (!s->collected || s->force_zero)
        return 0;
    if (s->collected == 1)
        err = qgpu_score_set(f->ctx, s->m3_id, 0, 0.0);
    else
        err = set_m2_m3(f, s->collected - 1, s->prev_m);
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static void float_motion_uninit(QgpuFeature *f)
{
    FloatMotionState *s = f->priv;
    qgpu_kernel_release(&s->k_bands);
    qgpu_kernel_release(&s->k_blur);
    qgpu_kernel_release(&s->k_sad);
    qgpu_kernel_release(&s->k_scale1);
    qgpu_kernel_release(&s->k_sad_terms);
    if (s->chain)
        clReleaseEvent(s->chain);
    s->chain = NULL;
    qgpu_buffer_release(&s->blur[0]);
    qgpu_buffer_release(&s->blur[1]);
    for (int p = 0; p < 3; p++) {
        qgpu_buffer_release(&s->hist[p][0]);
        qgpu_buffer_release(&s->hist[p][1]);
    }
    for (int i = 0; i < QGPU_MAX_LANES; i++)
        qgpu_buffer_release(&s->diff_s1[i]);
}

const QgpuFeatureClass qgpu_feature_float_motion = {
    .name = "float_motion",
    .outputs = float_motion_outputs,
    .options = float_motion_options,
    .priv_size = sizeof(FloatMotionState),
    .flags = QGPU_FEATURE_LANES,
    .lookahead = 1,
    .dynamic_flags = float_motion_flags,
    .init = float_motion_init,
    .enqueue = float_motion_enqueue,
    .collect = float_motion_collect,
    .flush = float_motion_flush,
    .uninit = float_motion_uninit,
};
