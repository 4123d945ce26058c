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

#include "feature.h"
#include "ssim_options.h"
#include "ssim_tiles.h"

#define SSIM_TILE 16

/* float_ssim, then luminance, contrast and structure (enable_lcs) */
static const QgpuFeatureOutput ssim_outputs[] = {
    {.name = "float_ssim"},
    {.name = "float_ssim_l"},
    {.name = "float_ssim_c"},
    {.name = "float_ssim_s"},
    {.name = NULL},
};

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
    cl_mem dref[QGPU_MAX_LANES], ddis[QGPU_MAX_LANES], table; /* per lane, shared */
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

static int ssim_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    SsimPriv *p = f->priv;
    QgpuContext *ctx = f->ctx;
    char opts[128];
    cl_program prog;
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

    if ((err = qgpu_outputs_register(f, 0, p->enable_lcs ? 4 : 1, p->id)))
        return err;

    ssim_program_options(ctx, fmt, opts, sizeof(opts));
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
    for (int i = 0; i < qgpu_lanes(ctx); i++)
        if ((err = qgpu_buffer_create(ctx, bytes, &p->dref[i])) ||
            (err = qgpu_buffer_create(ctx, bytes, &p->ddis[i])))
            return err;
    /* one picture: offset, w, h, tiles_x, first group */
    cl_int table[5] = { 0, p->sw, p->sh, p->tiles_x, 0 };
    return qgpu_buffer_upload(ctx, sizeof(table), table, &p->table, "float_ssim: table");
}

static int ssim_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    SsimPriv *p = f->priv;
    cl_int part_off = (cl_int)(p->results_off / sizeof(float));
    size_t local[2] = { SSIM_TILE, SSIM_TILE };
    size_t gssim[2] = { (size_t)p->groups * SSIM_TILE, SSIM_TILE };
    int err;

    if (p->factor == 1) {
        const QgpuArg args[] = {
            qgpu_arg_mem("ref", slot->ref),
            qgpu_arg_mem("dis", slot->dist),
            qgpu_arg_int("src_off", p->src_off),
            qgpu_arg_int("w", p->w),
            qgpu_arg_int("h", p->h),
            qgpu_arg_float("unit", p->unit),
            qgpu_arg_int("tiles_x", p->tiles_x),
            qgpu_arg_int("first", 0), /* all four sums */
            qgpu_arg_mem("partials", slot->results),
            qgpu_arg_int("part_off", part_off),
        };
        /* ssim_tiles_raw: a work-group per two tile rows of a column */
        size_t graw[2] = { (size_t)ssim_two_row_groups(p->tiles_x, p->groups) * SSIM_TILE,
                           SSIM_TILE };
        return qgpu_launch(f->ctx, slot, p->k_ssim, "float_ssim", args, QGPU_ARRAY_SIZE(args),
                           2, graw, local);
    }

    size_t gdec[2] = { qgpu_round_up(p->sw, SSIM_TILE), qgpu_round_up(p->sh, SSIM_TILE) };
    const QgpuArg dec_args[] = {
        qgpu_arg_mem("ref", slot->ref),
        qgpu_arg_mem("dis", slot->dist),
        qgpu_arg_int("src_off", p->src_off),
        qgpu_arg_int("w", p->w),
        qgpu_arg_int("h", p->h),
        qgpu_arg_int("f", p->factor),
        /* libvmaf's low-pass weight: the float 1 / (f * f) */
        qgpu_arg_float("k", 1.0f / (float)(p->factor * p->factor)),
        qgpu_arg_float("unit", p->unit),
        qgpu_arg_mem("dref", p->dref[slot->lane]),
        qgpu_arg_mem("ddis", p->ddis[slot->lane]),
        qgpu_arg_int("sw", p->sw),
        qgpu_arg_int("sh", p->sh),
    };
    if ((err = qgpu_launch(f->ctx, slot, p->k_dec, "float_ssim decimate", dec_args,
                           QGPU_ARRAY_SIZE(dec_args), 2, gdec, local)))
        return err;

    const QgpuArg args[] = {
        qgpu_arg_mem("ref", p->dref[slot->lane]),
        qgpu_arg_mem("dis", p->ddis[slot->lane]),
        qgpu_arg_mem("table", p->table),
        qgpu_arg_int("count", 1),
        qgpu_arg_mem("partials", slot->results),
        qgpu_arg_int("part_off", part_off),
    };
    return qgpu_launch(f->ctx, slot, p->k_ssim, "float_ssim", args, QGPU_ARRAY_SIZE(args), 2,
                       gssim, local);
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
    qgpu_kernel_release(&p->k_dec);
    qgpu_kernel_release(&p->k_ssim);
    for (int i = 0; i < QGPU_MAX_LANES; i++) {
        qgpu_buffer_release(&p->dref[i]);
        qgpu_buffer_release(&p->ddis[i]);
    }
    qgpu_buffer_release(&p->table);
}

const QgpuFeatureClass qgpu_feature_float_ssim = {
    .name = "float_ssim",
    .outputs = ssim_outputs,
    .options = ssim_options,
    .priv_size = sizeof(SsimPriv),
    .flags = QGPU_FEATURE_LANES,
    .lookahead = 0,
    .init = ssim_init,
    .enqueue = ssim_enqueue,
    .collect = ssim_collect,
    .flush = NULL,
    .uninit = ssim_uninit,
};
