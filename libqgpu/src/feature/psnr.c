/*
 * psnr: libvmaf's integer PSNR extractor (libvmaf/src/feature/integer_psnr.c).
 *
 *   mse    = SSE / (w * h)                        per plane, libvmaf plane size
 *   psnr   = min(10 log10(peak^2 / max(mse, 1e-16)), psnr_max)
 *   peak   = 255 for 8-bit, 2^bpc - 1 above (255 << (bpc - 8) with
 *            reduced_hbd_peak)
 *   psnr_max = 6 * bpc + 12, or with min_sse > 0:
 *            ceil(10 log10(peak^2 / (min_sse / plane_pixels)))
 *   apsnr  (enable_apsnr, aggregate): 10 log10(peak^2 * pixels / SSE) over
 *            the whole clip, capped at ceil(10 log10(peak^2 * pixels * 2)).
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "feature.h"

#define PSNR_WG 256   /* as in psnr.cl */
#define PSNR_ROWS 4

/* Outputs (libvmaf's integer_psnr.c names); the chroma ones with
 * enable_chroma, the MSEs with enable_mse. */
enum { OUT_PSNR_Y, OUT_PSNR_CB, OUT_PSNR_CR, OUT_MSE_Y, OUT_MSE_CB, OUT_MSE_CR, OUT_COUNT };

static const QgpuFeatureOutput psnr_outputs[] = {
    [OUT_PSNR_Y] = {"psnr_y"},
    [OUT_PSNR_CB] = {"psnr_cb"},
    [OUT_PSNR_CR] = {"psnr_cr"},
    [OUT_MSE_Y] = {"mse_y"},
    [OUT_MSE_CB] = {"mse_cb"},
    [OUT_MSE_CR] = {"mse_cr"},
    [OUT_COUNT] = {NULL},
};

typedef struct PsnrState {
    /* options */
    bool enable_chroma;
    bool enable_mse;
    bool enable_apsnr;
    bool reduced_hbd_peak;
    double min_sse;
    /* state */
    cl_kernel kernel;
    int nb_planes;
    int w[3], h[3];
    int groups[3];       /* work-groups per plane */
    size_t offset;       /* in the slot results */
    double peak;
    double psnr_max[3];
    int psnr_id[3];
    int mse_id[3];
    uint64_t clip_sse[3];    /* for apsnr */
    uint64_t clip_pixels[3];
} PsnrState;

static const QgpuOptionDef psnr_options[] = {
    {"enable_chroma", NULL, QGPU_OPT_BOOL, offsetof(PsnrState, enable_chroma), 1, NULL, 0, 1, 0,
     "also compute psnr_cb and psnr_cr"},
    {"enable_mse", NULL, QGPU_OPT_BOOL, offsetof(PsnrState, enable_mse), 0, NULL, 0, 1, 0,
     "also output mse_y/cb/cr"},
    {"enable_apsnr", NULL, QGPU_OPT_BOOL, offsetof(PsnrState, enable_apsnr), 0, NULL, 0, 1, 0,
     "aggregate PSNR of the whole clip (apsnr_y/cb/cr)"},
    {"reduced_hbd_peak", NULL, QGPU_OPT_BOOL, offsetof(PsnrState, reduced_hbd_peak), 0, NULL,
     0, 1, 0, "peak 255 << (bpc - 8) instead of 2^bpc - 1"},
    {"min_sse", NULL, QGPU_OPT_DOUBLE, offsetof(PsnrState, min_sse), 0, NULL, 0, 1e300, 0,
     "lower bound of the SSE, sets the PSNR cap"},
    {NULL},
};

static unsigned psnr_flags(const QgpuFeature *f)
{
    const PsnrState *s = f->priv;
    /* no device scratch: only slot buffers */
    return (s->enable_chroma ? QGPU_FEATURE_NEEDS_CHROMA : 0) | QGPU_FEATURE_LANES;
}

static int register_names(QgpuFeature *f, PsnrState *s)
{
    int err = 0;
    for (int p = 0; p < s->nb_planes && !err; p++) {
        s->mse_id[p] = -1;
        err = qgpu_output_register(f, OUT_PSNR_Y + p, &s->psnr_id[p]);
        if (!err && s->enable_mse)
            err = qgpu_output_register(f, OUT_MSE_Y + p, &s->mse_id[p]);
    }
    return err;
}

static int psnr_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    PsnrState *s = f->priv;
    cl_program program;
    int bpc = fmt->bitdepth, err;

    s->nb_planes = s->enable_chroma && fmt->nb_planes == 3 ? 3 : 1;
    s->peak = s->reduced_hbd_peak ? (double)(255 << (bpc - 8)) : (double)((1 << bpc) - 1);
    for (int p = 0; p < s->nb_planes; p++) {
        s->w[p] = fmt->vmaf_plane_w[p];
        s->h[p] = fmt->vmaf_plane_h[p];
        if (s->w[p] == 0 || s->h[p] == 0)
            return qgpu_error(f->ctx, QGPU_ERR_UNSUPPORTED,
                              "psnr: plane %d is empty at %dx%d; use enable_chroma=false", p,
                              fmt->width, fmt->height);
        s->groups[p] = (s->h[p] + PSNR_ROWS - 1) / PSNR_ROWS;
        if (s->min_sse > 0.0) {
            double mse = s->min_sse / ((double)s->w[p] * s->h[p]);
            s->psnr_max[p] = ceil(10.0 * log10(s->peak * s->peak / mse));
        } else {
            s->psnr_max[p] = 6.0 * bpc + 12.0;
        }
    }
    err = register_names(f, s);
    if (err)
        return err;
    err = qgpu_program_get(f->ctx, "psnr", NULL, &program);
    if (!err)
        err = qgpu_kernel_create(f->ctx, program, "psnr_sse", &s->kernel);
    if (!err)
        err = qgpu_results_reserve(f->ctx,
                                   sizeof(uint64_t) * (s->groups[0] + s->groups[1] + s->groups[2]),
                                   &s->offset);
    return err;
}

static int psnr_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    static const char *const names[3][4] = {
        {"w0", "h0", "pitch0", "off0"}, {"w1", "h1", "pitch1", "off1"}, {"w2", "h2", "pitch2", "off2"},
    };
    PsnrState *s = f->priv;
    const QgpuVideoFormat *fmt = f->fmt;
    size_t local = PSNR_WG;
    size_t global = (size_t)PSNR_WG * (s->groups[0] + s->groups[1] + s->groups[2]);
    QgpuArg args[21];
    int n = 0;

    args[n++] = qgpu_arg_mem("ref", slot->ref);
    args[n++] = qgpu_arg_mem("dist", slot->dist);
    args[n++] = qgpu_arg_int("bps", fmt->bytes_per_sample);
    for (int p = 0; p < 3; p++) {
        args[n++] = qgpu_arg_int(names[p][0], s->w[p]);
        args[n++] = qgpu_arg_int(names[p][1], s->h[p]);
        args[n++] = qgpu_arg_int(names[p][2], fmt->plane_w[p]);
        args[n++] = qgpu_arg_uint(names[p][3],
                                  (cl_uint)(fmt->plane_offset[p] / fmt->bytes_per_sample));
    }
    args[n++] = qgpu_arg_int("g1", s->groups[0]);
    args[n++] = qgpu_arg_int("g2", s->groups[0] + s->groups[1]);
    /* partial sums go straight into this feature's part of the results */
    args[n++] = qgpu_arg_mem("results", slot->results);
    args[n++] = qgpu_arg_uint("results_index", (cl_uint)(s->offset / sizeof(uint64_t)));
    return qgpu_launch(f->ctx, slot, s->kernel, "psnr: psnr_sse", args, n, 1, &global, &local);
}

static int psnr_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    PsnrState *s = f->priv;
    const uint64_t *partial =
        (const uint64_t *)((const unsigned char *)slot->results_host + s->offset);
    int err = 0;

    for (int p = 0; p < s->nb_planes; p++) {
        uint64_t sse = 0;
        double pixels = (double)s->w[p] * s->h[p];
        for (int g = 0; g < s->groups[p]; g++)
            sse += partial[g];
        partial += s->groups[p];
        double mse = (double)sse / pixels;
        double psnr = fmin(10.0 * log10(s->peak * s->peak / fmax(mse, 1e-16)), s->psnr_max[p]);
        err |= qgpu_score_set(f->ctx, s->psnr_id[p], slot->frame_index, psnr);
        if (s->enable_mse)
            err |= qgpu_score_set(f->ctx, s->mse_id[p], slot->frame_index, mse);
        s->clip_sse[p] += sse;
        s->clip_pixels[p] += (uint64_t)s->w[p] * s->h[p];
    }
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static int psnr_flush(QgpuFeature *f)
{
    static const char *const names[3] = {"apsnr_y", "apsnr_cb", "apsnr_cr"};
    PsnrState *s = f->priv;
    if (!s->enable_apsnr)
        return 0;
    for (int p = 0; p < s->nb_planes; p++) {
        double pixels = (double)s->clip_pixels[p];
        double apsnr = 10.0 * (log10(s->peak * s->peak) + log10(pixels) -
                               log10((double)s->clip_sse[p]));
        double cap = ceil(10.0 * log10(s->peak * s->peak * pixels * 2.0));
        int err = qgpu_aggregate_set(f->ctx, names[p], fmin(apsnr, cap));
        if (err)
            return err;
    }
    return 0;
}

static void psnr_uninit(QgpuFeature *f)
{
    PsnrState *s = f->priv;
    qgpu_kernel_release(&s->kernel);
}

const QgpuFeatureClass qgpu_feature_psnr = {
    .name = "psnr",
    .outputs = psnr_outputs,
    .options = psnr_options,
    .priv_size = sizeof(PsnrState),
    .flags = QGPU_FEATURE_NEEDS_CHROMA | QGPU_FEATURE_LANES,
    .lookahead = 0,
    .dynamic_flags = psnr_flags,
    .init = psnr_init,
    .enqueue = psnr_enqueue,
    .collect = psnr_collect,
    .flush = psnr_flush,
    .uninit = psnr_uninit,
};
