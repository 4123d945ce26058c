/*
 * motion: libvmaf's integer motion extractor (libvmaf 3.2.0,
 * libvmaf/src/feature/integer_motion.c, the pipelined variant, and
 * motion_blend_tools.h), bit-exact.
 *
 *   SAD[i]   = sum |blur(ref[i-gap] - ref[i])| (motion.cl), gap = 1,
 *              or 2 with motion_five_frame_window
 *   sad[i]   = min(SAD / 256 / (w*h) * fps_weight, max_val); 0 for i < gap
 *              (VMAF_integer_feature_motion_sad_score; debug: integer_motion)
 *   motion2  = 0 for i < gap; last frame: sad[i]; else min(sad[i+1], sad[lo])
 *              with lo = i (three-frame window) or i-1 (five-frame window)
 *              when lo >= gap, else sad[i+1]
 *   p[i]     = min(blend(motion2[i]), max_val),
 *              blend(x) = x*factor + (1-factor)*min(offset, x)
 *   motion3  = p[i], or (p[i] + p[i-1]) / 2 with motion_moving_average;
 *              frames i < gap take (and stand in as p for the average)
 *              stamp = min(blend(sad[gap]), max_val), 0 for clips of <= gap
 *              frames.
 * Frame i is final once frame i+1 is in (i+2 for frames 0 and 1 with the
 * five-frame window), or at flush.
 *
 * motion_legacy=true computes the SAD as libvmaf did before its 2026 motion
 * rewrite (releases up to v3.0.0 and git master until then, e.g. 2b2cf9c,
 * the libvmaf in FFmpeg 8.0 static builds): each frame blurred on its own,
 * the bottom/right borders mirrored repeating the edge sample, and
 *   sad[i] = (float)(SAD / 256.) / (float)(w*h)
 * in single precision (integer_motion.c's normalize_and_scale_sad at those
 * commits). Those libvmaf versions differ from 3.2.0 by up to ~2e-3 in
 * motion2 (doc/metrics/motion.md says how that was found); they have no
 * motion3 or options other than motion_force_zero, which here still apply.
 *
 * One launch per frame. The previous reference luma stays on the device in
 * feature-owned ping-pong buffers that the kernel itself fills.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "feature.h"

#define MOTION_TW 60 /* tile of motion.cl */
#define MOTION_TH 40
#define HIST 4       /* sad history ring (frames i-2 .. i+1) */

/* Outputs (libvmaf's integer_motion.c names) */
enum { OUT_SAD, OUT_MOTION, OUT_MOTION2, OUT_MOTION3, OUT_COUNT };

static const QgpuFeatureOutput motion_outputs[] = {
    /* the SAD has no alias in libvmaf: printed under its internal name */
    [OUT_SAD] = {"VMAF_integer_feature_motion_sad_score"},
    [OUT_MOTION] = {"integer_motion", "VMAF_integer_feature_motion_score"}, /* debug=true */
    [OUT_MOTION2] = {"integer_motion2", "VMAF_integer_feature_motion2_score"},
    [OUT_MOTION3] = {"integer_motion3", "VMAF_integer_feature_motion3_score"},
    [OUT_COUNT] = {NULL},
};

typedef struct MotionState {
    /* options */
    bool force_zero;
    double blend_factor;
    double blend_offset;
    double fps_weight;
    double max_val;
    bool five_frame_window;
    bool moving_average;
    bool legacy;
    bool debug;
    /* state */
    cl_kernel kernel;
    cl_mem store[3];
    cl_event chain;       /* the last launch: the next one reads its store */
    int nstore;
    unsigned gap;
    int w, h, wg, groups;
    size_t offset;
    int sad_id, motion_id, m2_id, m3_id;
    double sad[HIST];
    unsigned collected;   /* frames collected so far */
    double stamp;         /* motion3 of frames < gap */
    double prev_p;        /* p of the previous frame, for the moving average */
} MotionState;

static const QgpuOptionDef motion_options[] = {
    {"debug", NULL, QGPU_OPT_BOOL, offsetof(MotionState, debug), 0, NULL, 0, 1, 0,
     "also output integer_motion (the SAD score)"},
    {"motion_force_zero", "force_0", QGPU_OPT_BOOL, offsetof(MotionState, force_zero), 0, NULL,
     0, 1, QGPU_OPT_PARAM, "force every motion score to zero"},
    {"motion_blend_factor", "mbf", QGPU_OPT_DOUBLE, offsetof(MotionState, blend_factor), 1.0,
     NULL, 0.0, 1.0, QGPU_OPT_PARAM, "blend motion3 given an offset"},
    {"motion_blend_offset", "mbo", QGPU_OPT_DOUBLE, offsetof(MotionState, blend_offset), 40.0,
     NULL, 0.0, 1000.0, QGPU_OPT_PARAM, "blend motion3 starting from this offset"},
    {"motion_fps_weight", "mfw", QGPU_OPT_DOUBLE, offsetof(MotionState, fps_weight), 1.0, NULL,
     0.0, 5.0, QGPU_OPT_PARAM, "fps-aware multiplicative weight"},
    {"motion_max_val", "mmxv", QGPU_OPT_DOUBLE, offsetof(MotionState, max_val), 10000.0, NULL,
     0.0, 10000.0, QGPU_OPT_PARAM, "clip motion scores to this value"},
    {"motion_five_frame_window", "mffw", QGPU_OPT_BOOL,
     offsetof(MotionState, five_frame_window), 0, NULL, 0, 1, QGPU_OPT_PARAM,
     "compare frame i with i-2 (five-frame window)"},
    {"motion_moving_average", "mma", QGPU_OPT_BOOL, offsetof(MotionState, moving_average), 0,
     NULL, 0, 1, QGPU_OPT_PARAM, "average motion3 with the previous frame's"},
    {"motion_legacy", NULL, QGPU_OPT_BOOL, offsetof(MotionState, legacy), 0, NULL, 0, 1, 0,
     "libvmaf <= v3.0.0 / git 2b2cf9c arithmetic (blur each frame, float score)"},
    {NULL},
};

static int motion_lookahead(const QgpuFeature *f)
{
    const MotionState *s = f->priv;
    return s->five_frame_window ? 2 : 1;
}

static int build_kernel(QgpuFeature *f, MotionState *s, int in8)
{
    const char *name = s->legacy ? "motion_sad_legacy" : "motion_sad";
    QgpuContext *ctx = f->ctx;
    for (int wg = 256; wg >= 64; wg /= 2) { /* motion.cl: 64 columns by wg / 64 rows */
        char opts[64];
        cl_program program;
        size_t max_wg = 0;
        snprintf(opts, sizeof(opts), "-DMOTION_IN8=%d -DMOTION_WG=%d", in8, wg);
        int err = qgpu_program_get(ctx, "motion", opts, &program);
        if (err)
            return err;
        qgpu_kernel_release(&s->kernel);
        err = qgpu_kernel_create(ctx, program, name, &s->kernel);
        if (err)
            return err;
        if (clGetKernelWorkGroupInfo(s->kernel, qgpu_cl_device(ctx), CL_KERNEL_WORK_GROUP_SIZE,
                                     sizeof(max_wg), &max_wg, NULL) == CL_SUCCESS &&
            max_wg >= (size_t)wg) {
            s->wg = wg;
            return 0;
        }
    }
    return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                      "motion: the device runs the motion kernel with fewer than 64 "
                      "work-items per work-group");
}

static int motion_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    MotionState *s = f->priv;
    QgpuContext *ctx = f->ctx;
    cl_uint units = 1;
    int err;

    s->w = fmt->width;
    s->h = fmt->height;
    s->gap = s->five_frame_window ? 2 : 1;
    if (s->w < 3 || s->h < 3)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "motion: picture %dx%d is too small (needs at least 3x3 for the "
                          "mirrored 5-tap blur)",
                          s->w, s->h);
    err = qgpu_output_register(f, OUT_SAD, &s->sad_id);
    if (!err && s->debug)
        err = qgpu_output_register(f, OUT_MOTION, &s->motion_id);
    if (!err)
        err = qgpu_output_register(f, OUT_MOTION2, &s->m2_id);
    if (!err)
        err = qgpu_output_register(f, OUT_MOTION3, &s->m3_id);
    if (err)
        return err;
    if (s->force_zero) /* no device work at all; 8 bytes keep the frame's readback valid */
        return qgpu_results_reserve(ctx, sizeof(uint64_t), &s->offset);

    err = build_kernel(f, s, fmt->bytes_per_sample == 1);
    if (err)
        return err;
    clGetDeviceInfo(qgpu_cl_device(ctx), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units,
                    NULL);
    size_t tiles = (size_t)((s->w + MOTION_TW - 1) / MOTION_TW) *
                   ((s->h + MOTION_TH - 1) / MOTION_TH);
    size_t cap = (size_t)(units ? units : 1) * 16; /* as vif: tiles shared out evenly */
    size_t per_group = (tiles + cap - 1) / cap;
    s->groups = (int)((tiles + per_group - 1) / per_group);
    s->nstore = (int)s->gap + 1;
    for (int i = 0; i < s->nstore; i++) { /* legacy: blurred frames, 16-bit */
        size_t bytes = s->legacy ? sizeof(uint16_t) : (size_t)fmt->bytes_per_sample;
        err = qgpu_buffer_create(ctx, (size_t)s->w * s->h * bytes, &s->store[i]);
        if (err)
            return err;
    }
    return qgpu_results_reserve(ctx, (size_t)s->groups * sizeof(uint64_t), &s->offset);
}

static int motion_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    MotionState *s = f->priv;
    const QgpuVideoFormat *fmt = f->fmt;
    unsigned n = slot->frame_index;
    size_t local = (size_t)s->wg, global = local * s->groups;

    if (s->force_zero) /* no device work (and no history buffers) */
        return 0;
    const QgpuArg args[] = {
        qgpu_arg_mem("cur", slot->ref),
        qgpu_arg_int("cur_offset", (cl_int)(fmt->plane_offset[0] / fmt->bytes_per_sample)),
        qgpu_arg_mem("prev", s->store[(n + s->nstore - s->gap) % s->nstore]),
        qgpu_arg_mem("store", s->store[n % s->nstore]),
        qgpu_arg_int("w", s->w),
        qgpu_arg_int("h", s->h),
        qgpu_arg_int("bpc", fmt->bitdepth),
        qgpu_arg_int("do_sad", n >= s->gap),
        qgpu_arg_mem("results", slot->results),
        qgpu_arg_int("partial_index", (cl_int)(s->offset / sizeof(uint64_t))),
    };
    /* frames on other lanes: in order, each after the one whose store it
     * reads and the one that reads the store it overwrites */
    return qgpu_launch_after(f->ctx, slot, s->kernel, "motion: sad", args,
                             QGPU_ARRAY_SIZE(args), 1, &global, &local, &s->chain);
}

static double min_d(double a, double b)
{
    return a < b ? a : b;
}

/* motion_blend_tools.h */
static double blend(const MotionState *s, double x)
{
    return x * s->blend_factor + (1 - s->blend_factor) * min_d(s->blend_offset, x);
}

/* Sets motion2/motion3 of frame i; has_next: sad[i+1] is known. */
static int finish_frame(QgpuFeature *f, unsigned i, bool has_next)
{
    MotionState *s = f->priv;
    double m2;
    int err = 0;

    if (i < s->gap) {
        m2 = 0.0;
    } else if (!has_next) {
        m2 = s->sad[i % HIST];
    } else {
        unsigned lo = i - (s->gap - 1);
        m2 = lo >= s->gap ? min_d(s->sad[lo % HIST], s->sad[(i + 1) % HIST])
                          : s->sad[(i + 1) % HIST];
    }
    err |= qgpu_score_set(f->ctx, s->m2_id, i, m2);
    if (i >= s->gap) {
        double p = min_d(blend(s, m2), s->max_val);
        err |= qgpu_score_set(f->ctx, s->m3_id, i, s->moving_average ? (p + s->prev_p) / 2.0 : p);
        s->prev_p = p;
    }
    return err;
}

static int motion_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    MotionState *s = f->priv;
    unsigned n = slot->frame_index;
    double score = 0.0;
    int err = 0;

    if (!s->force_zero && n >= s->gap) {
        const uint64_t *partial =
            (const uint64_t *)((const unsigned char *)slot->results_host + s->offset);
        uint64_t sad = 0;
        for (int g = 0; g < s->groups; g++)
            sad += partial[g];
        /* integer_motion.c: (double)sad / 256. / (w * h), unsigned w * h;
         * legacy: (float)(sad / 256.) / (w * h), a float division */
        double raw = s->legacy ? (double)((float)(sad / 256.) / (float)(unsigned)(s->w * s->h))
                               : (double)sad / 256. / (unsigned)(s->w * s->h);
        score = min_d(raw * s->fps_weight, s->max_val);
    }
    s->sad[n % HIST] = score;
    s->collected = n + 1;
    err |= qgpu_score_set(f->ctx, s->sad_id, n, score);
    if (s->debug)
        err |= qgpu_score_set(f->ctx, s->motion_id, n, score);
    if (n == s->gap) {
        s->stamp = min_d(blend(s, score), s->max_val);
        s->prev_p = s->stamp;
        for (unsigned i = 0; i < s->gap; i++)
            err |= qgpu_score_set(f->ctx, s->m3_id, i, s->stamp);
    }
    if (n >= 1)
        err |= finish_frame(f, n - 1, true);
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static int motion_flush(QgpuFeature *f)
{
    MotionState *s = f->priv;
    int err = 0;
    if (!s->collected)
        return 0;
    if (s->collected <= s->gap) /* the stamp never came: libvmaf writes 0 */
        for (unsigned i = 0; i < s->collected; i++)
            err |= qgpu_score_set(f->ctx, s->m3_id, i, 0.0);
    err |= finish_frame(f, s->collected - 1, false);
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static void motion_uninit(QgpuFeature *f)
{
    MotionState *s = f->priv;
    qgpu_kernel_release(&s->kernel);
    if (s->chain)
        clReleaseEvent(s->chain);
    s->chain = NULL;
    for (int i = 0; i < 3; i++)
        qgpu_buffer_release(&s->store[i]);
}

const QgpuFeatureClass qgpu_feature_motion = {
    .name = "motion",
    .outputs = motion_outputs,
    .options = motion_options,
    .priv_size = sizeof(MotionState),
    .flags = QGPU_FEATURE_LANES,
    .lookahead = 1,
    .dynamic_lookahead = motion_lookahead,
    .init = motion_init,
    .enqueue = motion_enqueue,
    .collect = motion_collect,
    .flush = motion_flush,
    .uninit = motion_uninit,
};
