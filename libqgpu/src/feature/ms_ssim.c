/*
 * float_ms_ssim: libvmaf's float MS-SSIM (Wang et al. 2003): SSIM's l, c,
 * s means at 5 scales, each scale the previous one low-passed with the 9x9
 * 9/7 biorthogonal filter and decimated by 2. Host side of ssim.cl;
 * see doc/metrics/ssim.md.
 *
 * Per frame, 6 launches: SSIM of scale 0 from the uploaded samples; four
 * decimations (each needs the previous scale); SSIM of scales 1..4 in one
 * launch. The kernels make only the sums read: c and s at every scale, l
 * where its exponent is not 0 (scale 4) or with enable_lcs, never l*c*s.
 * collect() adds the per-tile sums in double and combines the scales.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "feature.h"
#include "ssim_options.h"
#include "ssim_tiles.h"

#define MS_TILE 16
#define MS_SCALES 5
/* every scale, halved with rounding down, must hold the 11x11 window */
#define MS_MIN_SIZE (11 << (MS_SCALES - 1))

/* libvmaf ms_ssim.c: exponents per scale (floats there as well) */
static const float ms_alpha[MS_SCALES] = { 0.0000f, 0.0000f, 0.0000f, 0.0000f, 0.1333f };
static const float ms_beta[MS_SCALES] = { 0.0448f, 0.2856f, 0.3001f, 0.2363f, 0.1333f };
static const float ms_gamma[MS_SCALES] = { 0.0448f, 0.2856f, 0.3001f, 0.2363f, 0.1333f };

/* float_ms_ssim, then (enable_lcs) each scale's luminance, contrast and
 * structure: output 1 + component * MS_SCALES + scale */
static const QgpuFeatureOutput ms_ssim_outputs[] = {
    {.name = "float_ms_ssim"},
    {.name = "float_ms_ssim_l_scale0"},
    {.name = "float_ms_ssim_l_scale1"},
    {.name = "float_ms_ssim_l_scale2"},
    {.name = "float_ms_ssim_l_scale3"},
    {.name = "float_ms_ssim_l_scale4"},
    {.name = "float_ms_ssim_c_scale0"},
    {.name = "float_ms_ssim_c_scale1"},
    {.name = "float_ms_ssim_c_scale2"},
    {.name = "float_ms_ssim_c_scale3"},
    {.name = "float_ms_ssim_c_scale4"},
    {.name = "float_ms_ssim_s_scale0"},
    {.name = "float_ms_ssim_s_scale1"},
    {.name = "float_ms_ssim_s_scale2"},
    {.name = "float_ms_ssim_s_scale3"},
    {.name = "float_ms_ssim_s_scale4"},
    {.name = NULL},
};

typedef struct MsSsimPriv {
    /* options (libvmaf float_ms_ssim.c) */
    bool enable_lcs;
    bool enable_db;
    bool clip_db;

    /* state */
    int sw[MS_SCALES], sh[MS_SCALES];
    int off[MS_SCALES];        /* scales 1..4 in the pyramid buffers (floats) */
    /* per scale: tiles in a row, tiles, first tile (counted from scale 0) */
    int tiles_x[MS_SCALES], groups[MS_SCALES], first[MS_SCALES];
    int groups_float;          /* work-groups of the scales 1..4 launch */
    bool need_l[MS_SCALES];    /* l made and read at this scale */
    int src_off;
    float unit;
    double max_db;
    size_t results_off;
    int id_score;
    int id_lcs[3][MS_SCALES];
    cl_kernel k_ssim_raw, k_ssim_float, k_lpf_raw, k_lpf_float;
    cl_mem pref[QGPU_MAX_LANES], pdis[QGPU_MAX_LANES], table; /* per lane, shared */
} MsSsimPriv;

static const QgpuOptionDef ms_ssim_options[] = {
    { "enable_lcs", NULL, QGPU_OPT_BOOL, offsetof(MsSsimPriv, enable_lcs), 0, NULL, 0, 1, 0,
      "also output per-scale l, c, s (float_ms_ssim_{l,c,s}_scale0..4)" },
    { "enable_db", NULL, QGPU_OPT_BOOL, offsetof(MsSsimPriv, enable_db), 0, NULL, 0, 1, 0,
      "write float_ms_ssim as dB: -10 log10(1 - ms_ssim)" },
    { "clip_db", NULL, QGPU_OPT_BOOL, offsetof(MsSsimPriv, clip_db), 0, NULL, 0, 1, 0,
      "clip dB scores at ceil(10 log10(peak^2 * 2 w h))" },
    { NULL, NULL, 0, 0, 0, NULL, 0, 0, 0, NULL },
};

/* The first of the four sums (l*c*s, l, c, s) the SSIM kernels make for
 * a scale: l, c, s (1) where l is read, else c, s (2); l*c*s (0) never. */
static int ms_first_sum(const MsSsimPriv *p, int scale)
{
    return p->need_l[scale] ? 1 : 2;
}

static int ms_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    MsSsimPriv *p = f->priv;
    QgpuContext *ctx = f->ctx;
    char opts[128];
    cl_program prog;
    int err, total = 0;

    if (fmt->bitdepth < 8 || fmt->bitdepth > 16)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_ms_ssim: bit depth %d not supported (8..16)", fmt->bitdepth);
    if (fmt->width < MS_MIN_SIZE || fmt->height < MS_MIN_SIZE)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_ms_ssim: %dx%d luma is below the minimum size %dx%d "
                          "(5 scales, each at least 11x11)",
                          fmt->width, fmt->height, MS_MIN_SIZE, MS_MIN_SIZE);
    p->src_off = (int)(fmt->plane_offset[0] / fmt->bytes_per_sample);
    p->unit = 1.0f / (float)(1 << (fmt->bitdepth - 8));
    if (p->clip_db) {
        double peak = (double)((1u << fmt->bitdepth) - 1);
        p->max_db = ceil(10.0 * log10(peak * peak / (0.5 / ((double)fmt->width * fmt->height))));
    } else {
        p->max_db = INFINITY;
    }

    /* scale sizes: libvmaf halves rounding up (w / 2 + (w & 1)) */
    p->sw[0] = fmt->width;
    p->sh[0] = fmt->height;
    p->off[0] = 0;
    for (int i = 0; i < MS_SCALES; i++) {
        if (i > 0) {
            p->sw[i] = p->sw[i - 1] / 2 + (p->sw[i - 1] & 1);
            p->sh[i] = p->sh[i - 1] / 2 + (p->sh[i - 1] & 1);
            p->off[i] = i == 1 ? 0 : p->off[i - 1] + p->sw[i - 1] * p->sh[i - 1];
        }
        p->tiles_x[i] = (p->sw[i] - 10 + MS_TILE - 1) / MS_TILE;
        p->groups[i] = p->tiles_x[i] * ((p->sh[i] - 10 + MS_TILE - 1) / MS_TILE);
        p->first[i] = total;
        total += p->groups[i];
        /* pow(l, 0) is 1 whatever l: l is needed only where alpha is not 0 */
        p->need_l[i] = p->enable_lcs || ms_alpha[i] != 0.0f;
    }

    if ((err = qgpu_output_register(f, 0, &p->id_score)))
        return err;
    for (int k = 0; k < 3 && p->enable_lcs; k++)
        for (int i = 0; i < MS_SCALES; i++)
            if ((err = qgpu_output_register(f, 1 + k * MS_SCALES + i, &p->id_lcs[k][i])))
                return err;

    ssim_program_options(ctx, fmt, opts, sizeof(opts));
    if ((err = qgpu_program_get(ctx, "ssim", opts, &prog)))
        return err;
    if ((err = qgpu_results_reserve(ctx, (size_t)total * 4 * sizeof(float), &p->results_off)))
        return err;
    if ((err = qgpu_kernel_create(ctx, prog, "ssim_tiles_raw", &p->k_ssim_raw)) ||
        (err = qgpu_kernel_create(ctx, prog, "ssim_tiles_float2", &p->k_ssim_float)) ||
        (err = qgpu_kernel_create(ctx, prog, "ms_lpf_decimate_raw", &p->k_lpf_raw)) ||
        (err = qgpu_kernel_create(ctx, prog, "ms_lpf_decimate_float", &p->k_lpf_float)))
        return err;

    size_t floats = (size_t)p->off[MS_SCALES - 1] + (size_t)p->sw[MS_SCALES - 1] *
                    p->sh[MS_SCALES - 1];
    for (int i = 0; i < qgpu_lanes(ctx); i++)
        if ((err = qgpu_buffer_create(ctx, floats * sizeof(float), &p->pref[i])) ||
            (err = qgpu_buffer_create(ctx, floats * sizeof(float), &p->pdis[i])))
            return err;
    /* scales 1..4 for ssim_tiles_float2 (two tile rows a work-group):
     * offset, w, h, tiles_x, first group, first tile (both counted from
     * scale 1), first sum made (ssim_first_sum) */
    cl_int table[7 * (MS_SCALES - 1)];
    int groups = 0;
    for (int i = 1; i < MS_SCALES; i++) {
        cl_int *t = table + 7 * (i - 1);
        t[0] = p->off[i];
        t[1] = p->sw[i];
        t[2] = p->sh[i];
        t[3] = p->tiles_x[i];
        t[4] = groups;
        t[5] = p->first[i] - p->first[1];
        t[6] = ms_first_sum(p, i);
        groups += ssim_two_row_groups(p->tiles_x[i], p->groups[i]);
    }
    p->groups_float = groups;
    return qgpu_buffer_upload(ctx, sizeof(table), table, &p->table, "float_ms_ssim: table");
}

/* the decimations' launch names: each its own line in QGPU_PROFILE (one
 * shared name showed only the four's mean) */
static const char *const ms_decimate_names[MS_SCALES - 1] = {
    "float_ms_ssim decimate 1", "float_ms_ssim decimate 2", "float_ms_ssim decimate 3",
    "float_ms_ssim decimate 4",
};

static int ms_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    MsSsimPriv *p = f->priv;
    size_t local[2] = { MS_TILE, MS_TILE };
    cl_int part0 = (cl_int)(p->results_off / sizeof(float));
    int err;

    /* scale 0 straight from the samples; ssim_tiles_raw takes two tile
     * rows of a column per work-group */
    {
        size_t g[2] = { (size_t)ssim_two_row_groups(p->tiles_x[0], p->groups[0]) * MS_TILE,
                        MS_TILE };
        const QgpuArg args[] = {
            qgpu_arg_mem("ref", slot->ref),
            qgpu_arg_mem("dis", slot->dist),
            qgpu_arg_int("src_off", p->src_off),
            qgpu_arg_int("w", p->sw[0]),
            qgpu_arg_int("h", p->sh[0]),
            qgpu_arg_float("unit", p->unit),
            qgpu_arg_int("tiles_x", p->tiles_x[0]),
            qgpu_arg_int("first", ms_first_sum(p, 0)),
            qgpu_arg_mem("partials", slot->results),
            qgpu_arg_int("part_off", part0),
        };
        if ((err = qgpu_launch(f->ctx, slot, p->k_ssim_raw, "float_ms_ssim scale 0", args,
                               QGPU_ARRAY_SIZE(args), 2, g, local)))
            return err;
    }

    /* the pyramid: scale i from scale i - 1 (scale 1 from the samples) */
    for (int i = 1; i < MS_SCALES; i++) {
        size_t g[2] = { qgpu_round_up(p->sw[i], MS_TILE), qgpu_round_up(p->sh[i], MS_TILE) };
        QgpuArg args[12];
        int n = 0;
        if (i == 1) {
            args[n++] = qgpu_arg_mem("ref", slot->ref);
            args[n++] = qgpu_arg_mem("dis", slot->dist);
            args[n++] = qgpu_arg_int("src_off", p->src_off);
        } else {
            args[n++] = qgpu_arg_mem("sref", p->pref[slot->lane]);
            args[n++] = qgpu_arg_mem("sdis", p->pdis[slot->lane]);
            args[n++] = qgpu_arg_int("src_off", p->off[i - 1]);
        }
        args[n++] = qgpu_arg_int("w", p->sw[i - 1]);
        args[n++] = qgpu_arg_int("h", p->sh[i - 1]);
        if (i == 1)
            args[n++] = qgpu_arg_float("unit", p->unit);
        args[n++] = qgpu_arg_mem("dref", p->pref[slot->lane]);
        args[n++] = qgpu_arg_mem("ddis", p->pdis[slot->lane]);
        args[n++] = qgpu_arg_int("dst_off", p->off[i]);
        args[n++] = qgpu_arg_int("sw", p->sw[i]);
        args[n++] = qgpu_arg_int("sh", p->sh[i]);
        if ((err = qgpu_launch(f->ctx, slot, i == 1 ? p->k_lpf_raw : p->k_lpf_float,
                               ms_decimate_names[i - 1], args, n, 2, g, local)))
            return err;
    }

    /* scales 1..4 in one launch */
    {
        size_t g[2] = { (size_t)p->groups_float * MS_TILE, MS_TILE };
        const QgpuArg args[] = {
            qgpu_arg_mem("ref", p->pref[slot->lane]),
            qgpu_arg_mem("dis", p->pdis[slot->lane]),
            qgpu_arg_mem("table", p->table),
            qgpu_arg_int("count", MS_SCALES - 1),
            qgpu_arg_mem("partials", slot->results),
            qgpu_arg_int("part_off", part0 + 4 * p->first[1]),
        };
        return qgpu_launch(f->ctx, slot, p->k_ssim_float, "float_ms_ssim scales 1-4", args,
                           QGPU_ARRAY_SIZE(args), 2, g, local);
    }
}

static int ms_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    MsSsimPriv *p = f->priv;
    QgpuContext *ctx = f->ctx;
    const float *part = (const float *)((const char *)slot->results_host + p->results_off);
    double ms = 1.0;
    int err;

    for (int i = 0; i < MS_SCALES; i++) {
        double sum[3] = { 0, 0, 0 };
        double count = (double)(p->sw[i] - 10) * (p->sh[i] - 10);
        /* sums 1, 2, 3 of each tile: l (where made), c, s */
        int k0 = p->need_l[i] ? 0 : 1;
        for (int g = p->first[i]; g < p->first[i] + p->groups[i]; g++)
            for (int k = k0; k < 3; k++)
                sum[k] += part[4 * g + 1 + k];
        /* libvmaf keeps each scale's means as floats; l's exponent is 0
         * where it is not made (pow(1, 0) = pow(l, 0) = 1) */
        float l = p->need_l[i] ? (float)(sum[0] / count) : 1.0f;
        float c = (float)(sum[1] / count), s = (float)(sum[2] / count);
        ms *= pow(l, ms_alpha[i]) * pow(c, ms_beta[i]) * pow(s, ms_gamma[i]);
        if (p->enable_lcs) {
            if ((err = qgpu_score_set(ctx, p->id_lcs[0][i], slot->frame_index, l)) ||
                (err = qgpu_score_set(ctx, p->id_lcs[1][i], slot->frame_index, c)) ||
                (err = qgpu_score_set(ctx, p->id_lcs[2][i], slot->frame_index, s)))
                return err;
        }
    }
    if (p->enable_db) {
        double db = -10.0 * log10(1.0 - ms);
        ms = db < p->max_db ? db : p->max_db;
    }
    return qgpu_score_set(ctx, p->id_score, slot->frame_index, ms);
}

static void ms_uninit(QgpuFeature *f)
{
    MsSsimPriv *p = f->priv;
    qgpu_kernel_release(&p->k_ssim_raw);
    qgpu_kernel_release(&p->k_ssim_float);
    qgpu_kernel_release(&p->k_lpf_raw);
    qgpu_kernel_release(&p->k_lpf_float);
    for (int i = 0; i < QGPU_MAX_LANES; i++) {
        qgpu_buffer_release(&p->pref[i]);
        qgpu_buffer_release(&p->pdis[i]);
    }
    qgpu_buffer_release(&p->table);
}

const QgpuFeatureClass qgpu_feature_float_ms_ssim = {
    .name = "float_ms_ssim",
    .outputs = ms_ssim_outputs,
    .options = ms_ssim_options,
    .priv_size = sizeof(MsSsimPriv),
    .flags = QGPU_FEATURE_LANES,
    .lookahead = 0,
    .init = ms_init,
    .enqueue = ms_enqueue,
    .collect = ms_collect,
    .flush = NULL,
    .uninit = ms_uninit,
};
