/*
 * float_ssim: libvmaf's float SSIM (11x11 Gaussian, K1 0.01, K2 0.03,
 * L 255) on luma, after libvmaf's automatic box decimation. Host side of
 * ssim.cl; see doc/metrics/ssim.md.
 *
 * Per frame: one launch without decimation (SSIM straight from the
 * uploaded samples), two with it (box decimation, then SSIM of the floats).
 * The SSIM kernel writes per-work-group sums of l*c*s, l, c, s; collect()
 * adds them in double.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "qgpu/qgpu.h"

#include "feature.h"

#define SSIM_TILE 16

typedef struct SsimPriv {
    /* options (libvmaf float_ssim.c) */
    bool enable_lcs;
    bool enable_db;
    bool clip_db;
    int scale;

    /* state */
    int w, h;           /* luma size */
    int factor;         /* decimation actually used (1 = none) */
    int sw, sh;         /* size SSIM runs on */
    int src_off;        /* luma offset in samples inside slot->ref/dist */
    float unit;         /* 1 / 2^(bitdepth - 8) */
    double max_db;
    int tiles_x, groups;
    size_t results_off;
    int id[4];          /* float_ssim, _l, _c, _s */
    cl_kernel k_dec, k_ssim;
    cl_mem dref, ddis, table;
} SsimPriv;

static const QgpuOptionDef ssim_options[] = {
    { "enable_lcs", NULL, QGPU_OPT_BOOL, offsetof(SsimPriv, enable_lcs), 0, NULL, 0, 1, 0,
      "also output luminance, contrast and structure (float_ssim_l/_c/_s)" },
    { "enable_db", NULL, QGPU_OPT_BOOL, offsetof(SsimPriv, enable_db), 0, NULL, 0, 1, 0,
      "write float_ssim as dB: -10 log10(1 - ssim)" },
    { "clip_db", NULL, QGPU_OPT_BOOL, offsetof(SsimPriv, clip_db), 0, NULL, 0, 1, 0,
      "clip dB scores at ceil(10 log10(peak^2 * 2 w h))" },
    { "scale", NULL, QGPU_OPT_INT, offsetof(SsimPriv, scale), 0, NULL, 0, 10, 0,
      "decimation factor: 0 = auto (max(1, round(min(w, h) / 256))), 1 = none, 2..10" },
    { NULL, NULL, 0, 0, 0, NULL, 0, 0, 0, NULL },
};

/* libvmaf's _round(): truncate, then up when the fraction is >= 0.5. */
static int ssim_auto_factor(int w, int h)
{
    float a = (float)(w < h ? w : h) / 256.0f;
    int r = (a - (int)a >= 0.5f) ? (int)a + 1 : (int)a;
    return r > 1 ? r : 1;
}

static int ssim_build_options(QgpuContext *ctx, const QgpuVideoFormat *fmt, char *buf,
                              size_t len)
{
    cl_device_fp_config fp = 0;
    clGetDeviceInfo(qgpu_cl_device(ctx), CL_DEVICE_SINGLE_FP_CONFIG, sizeof(fp), &fp, NULL);
    return snprintf(buf, len, "-DSSIM_BPS=%d%s", fmt->bytes_per_sample,
                    (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT)
                        ? " -cl-fp32-correctly-rounded-divide-sqrt" : "");
}

static int ssim_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    SsimPriv *p = f->priv;
    QgpuContext *ctx = f->ctx;
    char name[128], opts[128];
    cl_program prog;
    cl_int status;
    int err;

    p->w = fmt->width;
    p->h = fmt->height;
    if (fmt->bitdepth < 8 || fmt->bitdepth > 16)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_ssim: bit depth %d not supported (8..16)", fmt->bitdepth);
    p->factor = p->scale > 0 ? p->scale : ssim_auto_factor(p->w, p->h);
    p->sw = p->w;
    p->sh = p->h;
    if (p->factor > 1) {
        /* libvmaf's _iqa_decimate size: w / f, plus one when w is odd */
        p->sw = p->w / p->factor + (p->w & 1);
        p->sh = p->h / p->factor + (p->h & 1);
    }
    if (p->sw < 11 || p->sh < 11) {
        if (p->factor > 1)
            return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                              "float_ssim: %dx%d luma decimated by %d is %dx%d, below the "
                              "11x11 SSIM window (use a smaller scale)",
                              p->w, p->h, p->factor, p->sw, p->sh);
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_ssim: %dx%d luma is below the minimum size 11x11", p->w, p->h);
    }
    p->src_off = (int)(fmt->plane_offset[0] / fmt->bytes_per_sample);
    p->unit = 1.0f / (float)(1 << (fmt->bitdepth - 8));
    if (p->clip_db) {
        /* libvmaf float_ssim.c: peak of the input depth, mse = 0.5 / (w h) */
        double peak = (double)((1u << fmt->bitdepth) - 1);
        p->max_db = ceil(10.0 * log10(peak * peak / (0.5 / ((double)p->w * p->h))));
    } else {
        p->max_db = INFINITY;
    }

    static const char *const base[4] = { "float_ssim", "float_ssim_l", "float_ssim_c",
                                         "float_ssim_s" };
    for (int i = 0; i < (p->enable_lcs ? 4 : 1); i++) {
        snprintf(name, sizeof(name), "%s%s", base[i], f->name_suffix);
        p->id[i] = qgpu_score_register(ctx, name);
        if (p->id[i] < 0)
            return p->id[i];
    }

    ssim_build_options(ctx, fmt, opts, sizeof(opts));
    if ((err = qgpu_program_get(ctx, "ssim", opts, &prog)))
        return err;
    p->tiles_x = (p->sw - 10 + SSIM_TILE - 1) / SSIM_TILE;
    p->groups = p->tiles_x * ((p->sh - 10 + SSIM_TILE - 1) / SSIM_TILE);
    if ((err = qgpu_results_reserve(ctx, (size_t)p->groups * 4 * sizeof(float),
                                    &p->results_off)))
        return err;

    if (p->factor == 1)
        return qgpu_kernel_create(ctx, prog, "ssim_tiles_raw", &p->k_ssim);

    if ((err = qgpu_kernel_create(ctx, prog, "ssim_box_decimate", &p->k_dec)) ||
        (err = qgpu_kernel_create(ctx, prog, "ssim_tiles_float", &p->k_ssim)))
        return err;
    size_t bytes = (size_t)p->sw * p->sh * sizeof(float);
    if ((err = qgpu_buffer_create(ctx, bytes, &p->dref)) ||
        (err = qgpu_buffer_create(ctx, bytes, &p->ddis)))
        return err;
    /* one picture: offset, w, h, tiles_x, first group */
    cl_int table[5] = { 0, p->sw, p->sh, p->tiles_x, 0 };
    p->table = clCreateBuffer(qgpu_cl_context(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                              sizeof(table), table, &status);
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "float_ssim: clCreateBuffer(table)");
    return 0;
}

#define SET_ARG(k, i, v)                                                    \
    do {                                                                    \
        cl_int st_ = clSetKernelArg((k), (i), sizeof(v), &(v));             \
        if (st_ != CL_SUCCESS)                                              \
            return qgpu_cl_error(ctx, st_, "float_ssim: clSetKernelArg");   \
    } while (0)

static int ssim_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    SsimPriv *p = f->priv;
    QgpuContext *ctx = f->ctx;
    cl_int part_off = (cl_int)(p->results_off / sizeof(float));
    size_t local[2] = { SSIM_TILE, SSIM_TILE };
    size_t gssim[2] = { (size_t)p->groups * SSIM_TILE, SSIM_TILE };
    int err;

    if (p->factor == 1) {
        cl_int off = p->src_off, w = p->w, h = p->h, tx = p->tiles_x;
        cl_float unit = p->unit;
        SET_ARG(p->k_ssim, 0, slot->ref);
        SET_ARG(p->k_ssim, 1, slot->dist);
        SET_ARG(p->k_ssim, 2, off);
        SET_ARG(p->k_ssim, 3, w);
        SET_ARG(p->k_ssim, 4, h);
        SET_ARG(p->k_ssim, 5, unit);
        SET_ARG(p->k_ssim, 6, tx);
        SET_ARG(p->k_ssim, 7, slot->results);
        SET_ARG(p->k_ssim, 8, part_off);
        return qgpu_kernel_run(ctx, slot, p->k_ssim, 2, gssim, local, "float_ssim");
    }

    cl_int off = p->src_off, w = p->w, h = p->h, fac = p->factor, sw = p->sw, sh = p->sh;
    /* libvmaf's low-pass weight: the float 1 / (f * f) */
    cl_float k = 1.0f / (float)(p->factor * p->factor), unit = p->unit;
    size_t gdec[2] = { (size_t)(p->sw + SSIM_TILE - 1) / SSIM_TILE * SSIM_TILE,
                       (size_t)(p->sh + SSIM_TILE - 1) / SSIM_TILE * SSIM_TILE };
    SET_ARG(p->k_dec, 0, slot->ref);
    SET_ARG(p->k_dec, 1, slot->dist);
    SET_ARG(p->k_dec, 2, off);
    SET_ARG(p->k_dec, 3, w);
    SET_ARG(p->k_dec, 4, h);
    SET_ARG(p->k_dec, 5, fac);
    SET_ARG(p->k_dec, 6, k);
    SET_ARG(p->k_dec, 7, unit);
    SET_ARG(p->k_dec, 8, p->dref);
    SET_ARG(p->k_dec, 9, p->ddis);
    SET_ARG(p->k_dec, 10, sw);
    SET_ARG(p->k_dec, 11, sh);
    if ((err = qgpu_kernel_run(ctx, slot, p->k_dec, 2, gdec, local, "float_ssim decimate")))
        return err;

    cl_int count = 1;
    SET_ARG(p->k_ssim, 0, p->dref);
    SET_ARG(p->k_ssim, 1, p->ddis);
    SET_ARG(p->k_ssim, 2, p->table);
    SET_ARG(p->k_ssim, 3, count);
    SET_ARG(p->k_ssim, 4, slot->results);
    SET_ARG(p->k_ssim, 5, part_off);
    return qgpu_kernel_run(ctx, slot, p->k_ssim, 2, gssim, local, "float_ssim");
}

static int ssim_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    SsimPriv *p = f->priv;
    const float *part = (const float *)((const char *)slot->results_host + p->results_off);
    double sum[4] = { 0, 0, 0, 0 };
    double count = (double)(p->sw - 10) * (p->sh - 10);
    double v[4];
    int err;

    for (int g = 0; g < p->groups; g++)
        for (int i = 0; i < 4; i++)
            sum[i] += part[4 * g + i];
    /* libvmaf returns each mean as a float */
    for (int i = 0; i < 4; i++)
        v[i] = (float)(sum[i] / count);
    if (p->enable_db) {
        double db = -10.0 * log10(1.0 - v[0]);
        v[0] = db < p->max_db ? db : p->max_db;
    }
    for (int i = 0; i < (p->enable_lcs ? 4 : 1); i++)
        if ((err = qgpu_score_set(f->ctx, p->id[i], slot->frame_index, v[i])))
            return err;
    return 0;
}

static void ssim_uninit(QgpuFeature *f)
{
    SsimPriv *p = f->priv;
    if (p->k_dec)
        clReleaseKernel(p->k_dec);
    if (p->k_ssim)
        clReleaseKernel(p->k_ssim);
    if (p->dref)
        clReleaseMemObject(p->dref);
    if (p->ddis)
        clReleaseMemObject(p->ddis);
    if (p->table)
        clReleaseMemObject(p->table);
    p->k_dec = p->k_ssim = NULL;
    p->dref = p->ddis = p->table = NULL;
}

const QgpuFeatureClass qgpu_feature_float_ssim = {
    .name = "float_ssim",
    .options = ssim_options,
    .priv_size = sizeof(SsimPriv),
    .flags = 0,
    .lookahead = 0,
    .init = ssim_init,
    .enqueue = ssim_enqueue,
    .collect = ssim_collect,
    .flush = NULL,
    .uninit = ssim_uninit,
};
