/*
 * psnr_hvs: libvmaf's PSNR-HVS-M extractor (libvmaf 3.2.0,
 * src/feature/third_party/xiph/psnr_hvs.c, from Xiph's Daala tools).
 *
 * Per plane (libvmaf's floor plane size), 8x8 blocks on a 7-sample step:
 * Daala's integer DCT of reference and distorted block, a masking threshold
 * from the AC energy weighted by (0.3885746225901003 * csf)^2 and the
 * quadrant/block variance ratio, and the CSF-weighted squared DCT errors
 * above the threshold. libvmaf sums those in one float, divides by the term
 * count and by (2^bpc - 1)^2 (still in float):
 *
 *   psnr_hvs_{y,cb,cr} = -10 log10(mse_p)
 *   psnr_hvs           = -10 log10(0.8 mse_y + 0.1 (mse_cb + mse_cr))
 *
 * The device reproduces the float running sum bit for bit (see
 * psnr_hvs.cl: block terms and chunk sums, per-chunk ulp tables on every
 * compute unit, then one work-group per plane walks the chunks); the two float
 * divisions are done here in float.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "feature.h"

#define HVS_WG 64 /* as in psnr_hvs.cl */
#define HVS_BPG (HVS_WG / 2)
#define WALK_WG 256
#define HVS_CHUNK 1024
#define CHUNK_BLOCKS (HVS_CHUNK / 64)
#define HVS_WIN 4

/* Outputs: one per plane, then the 0.8 / 0.1 / 0.1 combination. */
static const QgpuFeatureOutput psnr_hvs_outputs[] = {
    {.name = "psnr_hvs_y"},
    {.name = "psnr_hvs_cb"},
    {.name = "psnr_hvs_cr"},
    {.name = "psnr_hvs"},
    {.name = NULL},
};

typedef struct PsnrHvsState {
    cl_kernel blocks;
    cl_kernel ulps;
    cl_kernel walk;
    cl_mem tables;
    struct HvsLane {       /* per lane: written by every frame */
        cl_mem terms;
        cl_mem chunk_sums; /* one float per chunk (any-order sums) */
        cl_mem ctop;       /* one int per chunk: the top binade of its tables */
        cl_mem ulps_buf;   /* chunks x HVS_WIN longs */
        cl_mem flags;      /* chunks x HVS_WIN ints */
    } lane[QGPU_MAX_LANES];
    int nbx[3];
    int nb[3];             /* blocks of each plane */
    int start[4];          /* number of each plane's first block, a multiple of
                              HVS_BPG; start[3]: the numbers in all */
    int chunks;            /* start[3] / CHUNK_BLOCKS: chunk numbers in all */
    size_t offset;         /* in the slot results: 3 floats */
    int bitdepth;
    int ids[4];
} PsnrHvsState;

static const QgpuOptionDef psnr_hvs_options[] = {
    {NULL},
};

/* Contrast sensitivity tables of libvmaf's psnr_hvs.c (Daala's normalised
 * inverse quantisation matrices at the point of transparency): luma, and
 * the 4:2:0 Cb and Cr tables, used by libvmaf whatever the subsampling.
 * Row = vertical frequency. (Three tables of numbers: `duplicates` pairs
 * them by their shape; they are data, not code written twice.) */
static const float hvs_csf[3][64] = {
    {1.6193873005f, 2.2901594831f, 2.08509755623f, 1.48366094411f, 1.00227514334f,
     0.678296995242f, 0.466224900598f, 0.3265091542f, 2.2901594831f, 1.94321815382f,
     2.04793073064f, 1.68731108984f, 1.2305666963f, 0.868920337363f, 0.61280991668f,
     0.436405793551f, 2.08509755623f, 2.04793073064f, 1.34329019223f, 1.09205635862f,
     0.875748795257f, 0.670882927016f, 0.501731932449f, 0.372504254596f, 1.48366094411f,
     1.68731108984f, 1.09205635862f, 0.772819797575f, 0.605636379554f, 0.48309405692f,
     0.380429446972f, 0.295774038565f, 1.00227514334f, 1.2305666963f, 0.875748795257f,
     0.605636379554f, 0.448996256676f, 0.352889268808f, 0.283006984131f, 0.226951348204f,
     0.678296995242f, 0.868920337363f, 0.670882927016f, 0.48309405692f, 0.352889268808f,
     0.27032073436f, 0.215017739696f, 0.17408067321f, 0.466224900598f, 0.61280991668f,
     0.501731932449f, 0.380429446972f, 0.283006984131f, 0.215017739696f, 0.168869545842f,
     0.136153931001f, 0.3265091542f, 0.436405793551f, 0.372504254596f, 0.295774038565f,
     0.226951348204f, 0.17408067321f, 0.136153931001f, 0.109083846276f},
    {1.91113096927f, 2.46074210438f, 1.18284184739f, 1.14982565193f, 1.05017074788f,
     0.898018824055f, 0.74725392039f, 0.615105596242f, 2.46074210438f, 1.58529308355f,
     1.21363250036f, 1.38190029285f, 1.33100189972f, 1.17428548929f, 0.996404342439f,
     0.830890433625f, 1.18284184739f, 1.21363250036f, 0.978712413627f, 1.02624506078f,
     1.03145147362f, 0.960060382087f, 0.849823426169f, 0.731221236837f, 1.14982565193f,
     1.38190029285f, 1.02624506078f, 0.861317501629f, 0.801821139099f, 0.751437590932f,
     0.685398513368f, 0.608694761374f, 1.05017074788f, 1.33100189972f, 1.03145147362f,
     0.801821139099f, 0.676555426187f, 0.605503172737f, 0.55002013668f, 0.495804539034f,
     0.898018824055f, 1.17428548929f, 0.960060382087f, 0.751437590932f, 0.605503172737f,
     0.514674450957f, 0.454353482512f, 0.407050308965f, 0.74725392039f, 0.996404342439f,
     0.849823426169f, 0.685398513368f, 0.55002013668f, 0.454353482512f, 0.389234902883f,
     0.342353999733f, 0.615105596242f, 0.830890433625f, 0.731221236837f, 0.608694761374f,
     0.495804539034f, 0.407050308965f, 0.342353999733f, 0.295530605237f},
    {2.03871978502f, 2.62502345193f, 1.26180942886f, 1.11019789803f, 1.01397751469f,
     0.867069376285f, 0.721500455585f, 0.593906509971f, 2.62502345193f, 1.69112867013f,
     1.17180569821f, 1.3342742857f, 1.28513006198f, 1.13381474809f, 0.962064122248f,
     0.802254508198f, 1.26180942886f, 1.17180569821f, 0.944981930573f, 0.990876405848f,
     0.995903384143f, 0.926972725286f, 0.820534991409f, 0.706020324706f, 1.11019789803f,
     1.3342742857f, 0.990876405848f, 0.831632933426f, 0.77418706195f, 0.725539939514f,
     0.661776842059f, 0.587716619023f, 1.01397751469f, 1.28513006198f, 0.995903384143f,
     0.77418706195f, 0.653238524286f, 0.584635025748f, 0.531064164893f, 0.478717061273f,
     0.867069376285f, 1.13381474809f, 0.926972725286f, 0.725539939514f, 0.584635025748f,
     0.496936637883f, 0.438694579826f, 0.393021669543f, 0.721500455585f, 0.962064122248f,
     0.820534991409f, 0.661776842059f, 0.531064164893f, 0.438694579826f, 0.375820256136f,
     0.330555063063f, 0.593906509971f, 0.802254508198f, 0.706020324706f, 0.587716619023f,
     0.478717061273f, 0.393021669543f, 0.330555063063f, 0.285345396658f},
};

/* Blocks of a plane side: 8-sample blocks every 7 samples while they fit. */
static int hvs_blocks_along(int n)
{
    return n >= 8 ? (n - 8) / 7 + 1 : 0;
}

static int psnr_hvs_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    PsnrHvsState *s = f->priv;
    QgpuContext *ctx = f->ctx;
    cl_program program;
    char options[160];
    float tables[3 * 128];
    int err;

    if (fmt->bitdepth > 12)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "psnr_hvs: bit depth %d is not supported (bpc must be <= 12, as in "
                          "libvmaf)", fmt->bitdepth);
    if (fmt->nb_planes != 3)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "psnr_hvs: needs chroma planes (4:0:0 is not supported, as in libvmaf)");
    s->start[0] = 0;
    for (int p = 0; p < 3; p++) {
        int w = fmt->vmaf_plane_w[p], h = fmt->vmaf_plane_h[p];
        if (w < 8 || h < 8) {
            int sx = fmt->layout == QGPU_LAYOUT_444 ? 1 : 2;
            int sy = fmt->layout == QGPU_LAYOUT_420 ? 2 : 1;
            return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                              "psnr_hvs: %dx%d is too small: every plane needs at least one 8x8 "
                              "block (minimum %dx%d for this layout)",
                              fmt->width, fmt->height, 8 * sx, 8 * sy);
        }
        s->nbx[p] = hvs_blocks_along(w);
        s->nb[p] = s->nbx[p] * hvs_blocks_along(h);
        /* each plane's blocks from a multiple of HVS_BPG: a block group is
         * one plane's, two whole chunks */
        s->start[p + 1] = s->start[p] + (s->nb[p] + HVS_BPG - 1) / HVS_BPG * HVS_BPG;
    }
    s->chunks = s->start[3] / CHUNK_BLOCKS;
    s->bitdepth = fmt->bitdepth;

    if ((err = qgpu_outputs_register(f, 0, 4, s->ids)))
        return err;

    /* libvmaf's division and sqrt are IEEE (correctly rounded); ask for the
     * same where the device offers it (PoCL and NVIDIA do). */
    snprintf(options, sizeof(options), "-DQG_HBD=%d%s", fmt->bitdepth > 8,
             qgpu_fp32_correctly_rounded(ctx) ? " -cl-fp32-correctly-rounded-divide-sqrt" : "");
    err = qgpu_program_get(ctx, "psnr_hvs", options, &program);
    if (!err)
        err = qgpu_kernel_create(ctx, program, "psnr_hvs_blocks", &s->blocks);
    if (!err)
        err = qgpu_kernel_create(ctx, program, "psnr_hvs_ulps", &s->ulps);
    if (!err)
        err = qgpu_kernel_create(ctx, program, "psnr_hvs_walk", &s->walk);
    if (err)
        return err;

    /* csf and masking tables; the mask (csf * 0.3885746225901003)^2 is
     * computed in double and stored as float, as libvmaf does */
    for (int p = 0; p < 3; p++)
        for (int k = 0; k < 64; k++) {
            double m = (double)hvs_csf[p][k] * 0.3885746225901003;
            tables[p * 128 + k] = hvs_csf[p][k];
            tables[p * 128 + 64 + k] = (float)(m * m);
        }
    err = qgpu_buffer_upload(ctx, sizeof(tables), tables, &s->tables, "psnr_hvs: tables");
    for (int i = 0; i < qgpu_lanes(ctx) && !err; i++) {
        struct HvsLane *b = &s->lane[i];
        err = qgpu_buffer_create(ctx, (size_t)s->start[3] * 64 * sizeof(float), &b->terms);
        if (!err)
            err = qgpu_buffer_create(ctx, (size_t)s->chunks * sizeof(float), &b->chunk_sums);
        if (!err)
            err = qgpu_buffer_create(ctx, (size_t)s->chunks * sizeof(cl_int), &b->ctop);
        if (!err)
            err = qgpu_buffer_create(ctx, (size_t)s->chunks * HVS_WIN * sizeof(cl_long),
                                     &b->ulps_buf);
        if (!err)
            err = qgpu_buffer_create(ctx, (size_t)s->chunks * HVS_WIN * sizeof(cl_int),
                                     &b->flags);
    }
    if (err)
        return err;
    return qgpu_results_reserve(ctx, 3 * sizeof(float), &s->offset);
}

/* The planes' first block numbers and block counts (start1, start2, nb0,
 * nb1, nb2: arguments of every kernel). Returns the count written to args. */
static int plane_args(const PsnrHvsState *s, QgpuArg *args)
{
    int n = 0;
    args[n++] = qgpu_arg_int("start1", s->start[1]);
    args[n++] = qgpu_arg_int("start2", s->start[2]);
    args[n++] = qgpu_arg_int("nb0", s->nb[0]);
    args[n++] = qgpu_arg_int("nb1", s->nb[1]);
    args[n++] = qgpu_arg_int("nb2", s->nb[2]);
    return n;
}

/* The first arguments of psnr_hvs_ulps and psnr_hvs_walk (the same for
 * both): the terms, the planes' block ranges, the chunk sums, the chunks'
 * binade tops, the ulp tables and the flags. Returns the count written to
 * args. */
static int chunk_args(const PsnrHvsState *s, const struct HvsLane *b, QgpuArg *args)
{
    int n = 0;
    args[n++] = qgpu_arg_mem("terms", b->terms);
    n += plane_args(s, args + n);
    args[n++] = qgpu_arg_mem("chunk_sums", b->chunk_sums);
    args[n++] = qgpu_arg_mem("ctop", b->ctop);
    args[n++] = qgpu_arg_mem("ulps", b->ulps_buf);
    args[n++] = qgpu_arg_mem("flags", b->flags);
    return n;
}

static int psnr_hvs_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    static const char *const names[3][3] = {
        {"pitch0", "off0", "nbx0"}, {"pitch1", "off1", "nbx1"}, {"pitch2", "off2", "nbx2"},
    };
    PsnrHvsState *s = f->priv;
    const struct HvsLane *b = &s->lane[slot->lane];
    const QgpuVideoFormat *fmt = f->fmt;
    /* two work-items per block (one per picture) */
    size_t local = HVS_WG, global = qgpu_round_up(2 * (size_t)s->start[3], HVS_WG);
    QgpuArg args[20];
    int n = 0, err;

    args[n++] = qgpu_arg_mem("ref", slot->ref);
    args[n++] = qgpu_arg_mem("dist", slot->dist);
    for (int p = 0; p < 3; p++) {
        args[n++] = qgpu_arg_int(names[p][0], fmt->plane_w[p]);
        args[n++] = qgpu_arg_uint(names[p][1],
                                  (cl_uint)(fmt->plane_offset[p] / fmt->bytes_per_sample));
        args[n++] = qgpu_arg_int(names[p][2], s->nbx[p]);
    }
    n += plane_args(s, args + n);
    args[n++] = qgpu_arg_mem("tables", s->tables);
    args[n++] = qgpu_arg_mem("terms", b->terms);
    args[n++] = qgpu_arg_mem("chunk_sums", b->chunk_sums);
    err = qgpu_launch(f->ctx, slot, s->blocks, "psnr_hvs: psnr_hvs_blocks", args, n, 1, &global,
                      &local);
    if (err)
        return err;

    /* the per-chunk tops and ulp tables, the walk */
    local = WALK_WG;
    n = chunk_args(s, b, args);
    global = (size_t)s->chunks * WALK_WG;
    err = qgpu_launch(f->ctx, slot, s->ulps, "psnr_hvs: psnr_hvs_ulps", args, n, 1, &global,
                      &local);
    if (err)
        return err;

    n = chunk_args(s, b, args);
    args[n++] = qgpu_arg_mem("results", slot->results);
    args[n++] = qgpu_arg_uint("results_index", (cl_uint)(s->offset / sizeof(float)));
    global = 3 * WALK_WG;
    return qgpu_launch(f->ctx, slot, s->walk, "psnr_hvs: psnr_hvs_walk", args, n, 1, &global,
                       &local);
}

static double hvs_db(double mse)
{
    return -10.0 * log10(mse);
}

static int psnr_hvs_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    PsnrHvsState *s = f->priv;
    const float *sums = (const float *)((const unsigned char *)slot->results_host + s->offset);
    const int maxval = (1 << s->bitdepth) - 1;
    double mse[3];
    int err = 0;

    for (int p = 0; p < 3; p++) {
        /* libvmaf divides its float sum by the term count, then by the
         * squared peak, both in float */
        float r = sums[p];
        r /= (float)(s->nb[p] * 64);
        r /= (float)(maxval * maxval);
        mse[p] = r;
        err |= qgpu_score_set(f->ctx, s->ids[p], slot->frame_index, hvs_db(mse[p]));
    }
    err |= qgpu_score_set(f->ctx, s->ids[3], slot->frame_index,
                          hvs_db(0.8 * mse[0] + 0.1 * (mse[1] + mse[2])));
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static void psnr_hvs_uninit(QgpuFeature *f)
{
    PsnrHvsState *s = f->priv;
    qgpu_kernel_release(&s->blocks);
    qgpu_kernel_release(&s->ulps);
    qgpu_kernel_release(&s->walk);
    qgpu_buffer_release(&s->tables);
    for (int i = 0; i < QGPU_MAX_LANES; i++) {
        struct HvsLane *b = &s->lane[i];
        qgpu_buffer_release(&b->terms);
        qgpu_buffer_release(&b->chunk_sums);
        qgpu_buffer_release(&b->ctop);
        qgpu_buffer_release(&b->ulps_buf);
        qgpu_buffer_release(&b->flags);
    }
}

const QgpuFeatureClass qgpu_feature_psnr_hvs = {
    .name = "psnr_hvs",
    .outputs = psnr_hvs_outputs,
    .options = psnr_hvs_options,
    .priv_size = sizeof(PsnrHvsState),
    .flags = QGPU_FEATURE_NEEDS_CHROMA | QGPU_FEATURE_LANES,
    .lookahead = 0,
    .init = psnr_hvs_init,
    .enqueue = psnr_hvs_enqueue,
    .collect = psnr_hvs_collect,
    .uninit = psnr_hvs_uninit,
};
