/*
 * float_psnr: libvmaf's float PSNR extractor (libvmaf 3.2.0,
 * libvmaf/src/feature/float_psnr.c), luma only:
 *
 *   mse   = sum (ref/scale - dis/scale)^2 / (w*h), samples in 8-bit units
 *           (scale 1, 4, 16, 256 for 8/10/12/16 bit)
 *   psnr  = min(10 log10(peak^2 / max(mse, 1e-10)), psnr_max),
 *           peak/psnr_max 255/60, 255.75/72, 255.9375/84, 255.99609375/108
 *
 * libvmaf's double sums of float squares are exact, so the device adds the
 * (float-rounded) integer squares in 64 bits (float_misc.cl,
 * fpsnr_sse, one launch per frame) and the host scales: same value to the
 * last bit.
 */
#include <math.h>
#include <stdint.h>

#include "float_sums.h"

#define FM_ROWS 4

static const QgpuFeatureOutput float_psnr_outputs[] = {
    {.name = "float_psnr"},
    {.name = NULL},
};

typedef struct FloatPsnrState {
    cl_kernel kernel;
    int w, h, groups;
    double scale, peak, psnr_max;
    size_t offset;
    int id;
} FloatPsnrState;

static const QgpuOptionDef float_psnr_options[] = {{NULL}};

/* float_psnr.c init(): peak and cap per bit depth; other depths refused */
static int float_unit(int bpc, double *scale, double *peak, double *psnr_max)
{
    switch (bpc) {
    case 8: *scale = 1.0; *peak = 255.0; *psnr_max = 60.0; return 0;
    case 10: *scale = 4.0; *peak = 255.75; *psnr_max = 72.0; return 0;
    case 12: *scale = 16.0; *peak = 255.9375; *psnr_max = 84.0; return 0;
    case 16: *scale = 256.0; *peak = 255.99609375; *psnr_max = 108.0; return 0;
    default: return -1;
    }
}

static int float_psnr_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    FloatPsnrState *s = f->priv;
    cl_program program;
    int err;

    if (float_unit(fmt->bitdepth, &s->scale, &s->peak, &s->psnr_max))
        return qgpu_error(f->ctx, QGPU_ERR_UNSUPPORTED,
                          "float_psnr: %d-bit input is not supported (8, 10, 12, 16 as libvmaf)",
                          fmt->bitdepth);
    s->w = fmt->width;
    s->h = fmt->height;
    s->groups = (s->h + FM_ROWS - 1) / FM_ROWS;
    if ((err = qgpu_output_register(f, 0, &s->id)))
        return err;
    err = qgpu_program_get(f->ctx, "float_misc", NULL, &program);
    if (!err)
        err = qgpu_kernel_create(f->ctx, program, "fpsnr_sse", &s->kernel);
    if (!err)
        err = qgpu_results_reserve(f->ctx, sizeof(uint64_t) * s->groups, &s->offset);
    return err;
}

static int float_psnr_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    FloatPsnrState *s = f->priv;
    return qgpu_float_sums_run(f, slot, s->kernel, s->w, s->h, s->groups, s->offset,
                               "float_psnr: sse");
}

static int float_psnr_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    FloatPsnrState *s = f->priv;
    const uint64_t *partial =
        (const uint64_t *)((const unsigned char *)slot->results_host + s->offset);
    uint64_t sse = 0;
    for (int g = 0; g < s->groups; g++)
        sse += partial[g];
    /* float_psnr.c: noise /= (w * h) (int product), then the formula */
    double noise = (double)sse / (s->scale * s->scale);
    noise /= (s->w * s->h);
    double score = fmin(10 * log10(s->peak * s->peak / fmax(noise, 1e-10)), s->psnr_max);
    return qgpu_score_set(f->ctx, s->id, slot->frame_index, score) ? QGPU_ERR_INVALID_ARG : 0;
}

static void float_psnr_uninit(QgpuFeature *f)
{
    FloatPsnrState *s = f->priv;
    qgpu_kernel_release(&s->kernel);
}

const QgpuFeatureClass qgpu_feature_float_psnr = {
    .name = "float_psnr",
    .outputs = float_psnr_outputs,
    .options = float_psnr_options,
    .priv_size = sizeof(FloatPsnrState),
    .flags = QGPU_FEATURE_LANES, /* only slot buffers */
    .init = float_psnr_init,
    .enqueue = float_psnr_enqueue,
    .collect = float_psnr_collect,
    .uninit = float_psnr_uninit,
};
