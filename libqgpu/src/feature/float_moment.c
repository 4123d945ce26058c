/*
 * float_moment: libvmaf's float moment extractor (libvmaf 3.2.0,
 * libvmaf/src/feature/float_moment.c + moment.c), luma only, samples in
 * 8-bit units (x / 1, 4, 16, 256 for 8/10/12/16 bit), no offset:
 *
 *   float_moment_ref1st / dis1st = mean of the samples
 *   float_moment_ref2nd / dis2nd = mean of the float squares
 *
 * libvmaf's double sums of these values are exact, so the device adds the
 * integers (and the float-rounded integer squares) in 64 bits
 * (float_misc.cl, fmoment_sums, one launch per frame) and the host
 * scales: same value to the last bit.
 */
#include <stdint.h>

#include "float_sums.h"

#define FM_ROWS 4

static const QgpuFeatureOutput float_moment_outputs[] = {
    {.name = "float_moment_ref1st"},
    {.name = "float_moment_dis1st"},
    {.name = "float_moment_ref2nd"},
    {.name = "float_moment_dis2nd"},
    {.name = NULL},
};

typedef struct FloatMomentState {
    cl_kernel kernel;
    int w, h, groups;
    double scale;
    size_t offset;
    int id[4];
} FloatMomentState;

static const QgpuOptionDef float_moment_options[] = {{NULL}};

static int float_moment_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    FloatMomentState *s = f->priv;
    cl_program program;
    int err, bpc = fmt->bitdepth;

    if (bpc != 8 && bpc != 10 && bpc != 12 && bpc != 16)
        return qgpu_error(f->ctx, QGPU_ERR_UNSUPPORTED,
                          "float_moment: %d-bit input is not supported (8, 10, 12, 16 as "
                          "libvmaf)",
                          bpc);
    /* picture_copy.c: 8-bit units */
    s->scale = (double)(1 << (bpc == 8 ? 0 : bpc == 10 ? 2 : bpc == 12 ? 4 : 8));
    s->w = fmt->width;
    s->h = fmt->height;
    s->groups = (s->h + FM_ROWS - 1) / FM_ROWS;
    if ((err = qgpu_outputs_register(f, 0, 4, s->id)))
        return err;
    err = qgpu_program_get(f->ctx, "float_misc", NULL, &program);
    if (!err)
        err = qgpu_kernel_create(f->ctx, program, "fmoment_sums", &s->kernel);
    if (!err)
        err = qgpu_results_reserve(f->ctx, 4 * sizeof(uint64_t) * s->groups, &s->offset);
    return err;
}

static int float_moment_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    FloatMomentState *s = f->priv;
    return qgpu_float_sums_run(f, slot, s->kernel, s->w, s->h, s->groups, s->offset,
                               "float_moment: sums");
}

static int float_moment_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    FloatMomentState *s = f->priv;
    const uint64_t *partial =
        (const uint64_t *)((const unsigned char *)slot->results_host + s->offset);
    uint64_t sum[4] = {0, 0, 0, 0};
    int err = 0;
    for (int g = 0; g < s->groups; g++)
        for (int k = 0; k < 4; k++)
            sum[k] += partial[4 * g + k];
    for (int k = 0; k < 4; k++) {
        /* moment.c: cum (exact) /= (w * h), int product */
        double cum = (double)sum[k] / (k < 2 ? s->scale : s->scale * s->scale);
        cum /= (s->w * s->h);
        err |= qgpu_score_set(f->ctx, s->id[k], slot->frame_index, cum);
    }
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static void float_moment_uninit(QgpuFeature *f)
{
    FloatMomentState *s = f->priv;
    qgpu_kernel_release(&s->kernel);
}

const QgpuFeatureClass qgpu_feature_float_moment = {
    .name = "float_moment",
    .outputs = float_moment_outputs,
    .options = float_moment_options,
    .priv_size = sizeof(FloatMomentState),
    .flags = QGPU_FEATURE_LANES, /* only slot buffers */
    .init = float_moment_init,
    .enqueue = float_moment_enqueue,
    .collect = float_moment_collect,
    .uninit = float_moment_uninit,
};
