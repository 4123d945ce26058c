/*
 * float_ansnr: libvmaf's float ANSNR extractor (libvmaf 3.2.0,
 * libvmaf/src/feature/float_ansnr.c + ansnr.c + ansnr_tools.c), luma only,
 * samples in 8-bit units minus 128:
 *
 *   r = ref filtered by {1,2,1}x{1,2,1}/16, d = dis filtered by the 5x5
 *   integer weights / 571 (mirrored borders: -i reads i, n+k reads n-1-k)
 *   sig   = sum r^2, noise = sum (r-d)^2         (float, libvmaf's order)
 *   float_ansnr  = noise == 0 ? psnr_max : 10 log10(sig / noise) (float division)
 *   float_anpsnr = min(10 log10(peak^2 w h / max(noise, 1e-10)), psnr_max)
 *   peak/psnr_max 255/60, 255.75/72, 255.9375/84, 255.99609375/108
 *
 * One launch per frame (float_misc.cl's fansnr_bands): a work-group
 * filters a band of 8 rows tile by tile (staged in __local memory) and
 * adds each row's r^2 and (r-d)^2 in order, one work-item per row; the
 * terms stay in __local memory. The host adds the rows in float, as
 * ansnr_mse_s does.
 */
#include <math.h>
#include <stdint.h>

#include "feature.h"

#define FANSNR_RS_ROWS 8  /* common.cl ROW_SUMS_ROWS: rows per work-group */
#define FANSNR_RS_WG 256  /* common.cl ROW_SUMS_WG: its work-items */

static const QgpuFeatureOutput float_ansnr_outputs[] = {
    {.name = "float_ansnr"},
    {.name = "float_anpsnr"},
    {.name = NULL},
};

typedef struct FloatAnsnrState {
    cl_kernel k_bands;
    int w, h;
    float inv_scale;
    double peak, psnr_max;
    size_t offset;
    int ansnr_id, anpsnr_id;
} FloatAnsnrState;

static const QgpuOptionDef float_ansnr_options[] = {{NULL}};

static int float_ansnr_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    FloatAnsnrState *s = f->priv;
    QgpuContext *ctx = f->ctx;
    cl_program program;
    int err, bpc = fmt->bitdepth;

    /* float_ansnr.c init() */
    switch (bpc) {
    case 8: s->inv_scale = 1.0f; s->peak = 255.0; s->psnr_max = 60.0; break;
    case 10: s->inv_scale = 0.25f; s->peak = 255.75; s->psnr_max = 72.0; break;
    case 12: s->inv_scale = 0.0625f; s->peak = 255.9375; s->psnr_max = 84.0; break;
    case 16: s->inv_scale = 0.00390625f; s->peak = 255.99609375; s->psnr_max = 108.0; break;
    default:
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_ansnr: %d-bit input is not supported (8, 10, 12, 16 as libvmaf)",
                          bpc);
    }
    s->w = fmt->width;
    s->h = fmt->height;
    if (s->w < 3 || s->h < 3)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_ansnr: picture %dx%d is too small (needs at least 3x3 for the "
                          "mirrored 5x5 filter)",
                          s->w, s->h);
    if ((err = qgpu_output_register(f, 0, &s->ansnr_id)) ||
        (err = qgpu_output_register(f, 1, &s->anpsnr_id)))
        return err;
    err = qgpu_program_get(ctx, "float_misc", NULL, &program);
    if (!err)
        err = qgpu_kernel_create(ctx, program, "fansnr_bands", &s->k_bands);
    if (!err)
        err = qgpu_results_reserve(ctx, (size_t)s->h * 2 * sizeof(float), &s->offset);
    return err;
}

static int float_ansnr_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    FloatAnsnrState *s = f->priv;
    const QgpuVideoFormat *fmt = f->fmt;
    size_t local = FANSNR_RS_WG;
    size_t global = (size_t)(s->h + FANSNR_RS_ROWS - 1) / FANSNR_RS_ROWS * FANSNR_RS_WG;
    const QgpuArg args[] = {
        qgpu_arg_mem("ref", slot->ref),
        qgpu_arg_mem("dist", slot->dist),
        qgpu_arg_uint("off", (cl_uint)fmt->plane_offset[0]),
        qgpu_arg_int("bps", fmt->bytes_per_sample),
        qgpu_arg_int("w", s->w),
        qgpu_arg_int("h", s->h),
        qgpu_arg_float("inv_scale", s->inv_scale),
        qgpu_arg_mem("results", slot->results),
        qgpu_arg_uint("results_index", (cl_uint)(s->offset / sizeof(float))),
    };
    return qgpu_launch(f->ctx, slot, s->k_bands, "float_ansnr: bands", args,
                       QGPU_ARRAY_SIZE(args), 1, &global, &local);
}

static int float_ansnr_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    FloatAnsnrState *s = f->priv;
    const float *rows = (const float *)((const unsigned char *)slot->results_host + s->offset);
    float sig = 0.0f, noise = 0.0f;
    int err = 0;

    for (int y = 0; y < s->h; y++) { /* ansnr_mse_s: rows added in float */
        sig += rows[2 * y];
        noise += rows[2 * y + 1];
    }
    volatile float ratio = sig / noise; /* ansnr.c: float / float */
    double ansnr = noise == 0 ? s->psnr_max : 10.0 * log10(ratio);
    double anpsnr = fmin(10 * log10(s->peak * s->peak * s->w * s->h / fmax(noise, 1e-10)),
                         s->psnr_max);
    err |= qgpu_score_set(f->ctx, s->ansnr_id, slot->frame_index, ansnr);
    err |= qgpu_score_set(f->ctx, s->anpsnr_id, slot->frame_index, anpsnr);
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static void float_ansnr_uninit(QgpuFeature *f)
{
    FloatAnsnrState *s = f->priv;
    qgpu_kernel_release(&s->k_bands);
}

const QgpuFeatureClass qgpu_feature_float_ansnr = {
    .name = "float_ansnr",
    .outputs = float_ansnr_outputs,
    .options = float_ansnr_options,
    .priv_size = sizeof(FloatAnsnrState),
    .flags = QGPU_FEATURE_LANES,
    .init = float_ansnr_init,
    .enqueue = float_ansnr_enqueue,
    .collect = float_ansnr_collect,
    .uninit = float_ansnr_uninit,
};
