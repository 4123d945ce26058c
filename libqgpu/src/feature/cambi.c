/*
 * cambi: libvmaf's banding metric (libvmaf/src/feature/cambi.c and
 * luminance_tools.c, libvmaf 3.2.0), every stage on the device
 * (cambi.cl). The host only derives the per-geometry constants
 * (visibility thresholds, window, mask threshold, resize maps, top-k ranks)
 * and, per frame, adds the pooled partial sums of the five scales.
 *
 *   score  = sum_s w_s * mean(top-k c-values of scale s) / window^2,
 *            w = {16, 8, 4, 2, 1}, output min(score, cambi_max_val)
 *   c(p)   = max_d  g_d * p0 * max(p+, p-) / (max(p+, p-) + p0)
 *            over the contrast steps d+1 = 1..2^max_log_contrast that are
 *            visible at p's value (tvi) and above the visibility luminance,
 *            p0 / p+ / p- = counts of masked window pixels at value v,
 *            v + d + 1, v - d - 1.
 * See doc/metrics/cambi.md.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feature.h"

#define CAMBI_SCALES 5
#define CAMBI_TILE 16       /* cambi_cvalues' tile side; cambi_filter's groups */
#define CAMBI_PREP_TILE 32  /* MT in cambi.cl: cambi_prep_mask's outputs per group side */
#define CAMBI_PREP_WG 16    /* MG: its work-items per side */
#define CAMBI_CG 8          /* CG in cambi.cl: geometry fields per scale: */
enum { CG_W, CG_H, CG_IMG, CG_CVAL, CG_G0, CG_TX };
#define CAMBI_CV_WG 256     /* CV_WG: work-items of a c-value group */
#define CAMBI_TILE_SMALL 8  /* cambi_cvalues' tile side at the coarse scales */
/* c-values by 8 x 8 tiles at a scale whose 16 x 16 tiles are fewer than
 * this: those groups are few enough to run at once, so the launch lasts
 * as long as one group (doc/metrics/cambi.md) */
#define CAMBI_SMALL_GROUPS 1024
#define CAMBI_SX 64         /* SX, SY, R of cambi_cvalues_slide */
#define CAMBI_SY 32
#define CAMBI_R 128
#define CAMBI_H2_WG 256     /* H2_WG */
/* cambi_hist2's work-groups per scale, each writing a partial sum; they
 * read only the non-zero c-values, a few per cent of the pixels on most
 * pictures, 8 per work-item at a time */
#define CAMBI_H2_GROUPS 32
#define CAMBI_SEL_WG 256
#define CAMBI_ST 8          /* ST in cambi.cl: state words per scale */
#define CAMBI_HIST1_BINS 32768
#define CAMBI_HIST2_BINS 65536
#define CAMBI_MIN_WH 216    /* libvmaf: refuses width AND height < 216 */

/* libvmaf cambi.c constants */
static const int cambi_scale_weights[CAMBI_SCALES] = {16, 8, 4, 2, 1};
static const int cambi_contrast_weights[32] = {1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8,
                                               8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};

/* Geometry of one scored picture (distorted at enc size, reference at src
 * size). */
typedef struct CambiPic {
    int w, h;                 /* working size */
    int window;               /* adjusted window (odd) */
    int mask_threshold;
    int sw[CAMBI_SCALES], sh[CAMBI_SCALES];
    int img_off[CAMBI_SCALES];   /* scale images in `imgs`, after img0 */
    int cval_off[CAMBI_SCALES + 1];
    unsigned kth[CAMBI_SCALES];  /* top-k rank per scale */
    int groups[2];               /* c-value groups of the 16 x 16 tiles, of the 8 x 8 ones */
    int n16;                     /* scales 0 .. n16 - 1 have 16 x 16 tiles */
    cl_mem maps;              /* mx[w], my[h] */
    int scaled;               /* the maps are not the identity (enc/src size) */
    cl_mem geom;              /* the c-value launches' geometry (CG_* per scale) */
    size_t res_off;           /* bytes in the slot results */
} CambiPic;

/* Outputs: the distorted picture's CAMBI, and with a reference
 * (full-reference mode) the source's and the difference. */
enum { OUT_CAMBI, OUT_SOURCE, OUT_FULL_REFERENCE, OUT_COUNT };

static const QgpuFeatureOutput cambi_outputs[] = {
    [OUT_CAMBI] = {"cambi", "Cambi_feature_cambi_score"},
    [OUT_SOURCE] = {"cambi_source"},
    [OUT_FULL_REFERENCE] = {"cambi_full_reference"},
    [OUT_COUNT] = {NULL},
};

typedef struct CambiState {
    /* options (libvmaf names; sorted by name so the table reads like the suffix) */
    char cambi_eotf[QGPU_OPT_STRING_MAX];
    int cambi_high_res_speedup;
    double cambi_max_val;
    double cambi_topk;
    double cambi_vis_lum_threshold;
    int enc_bitdepth;
    int enc_height;
    int enc_width;
    char eotf[QGPU_OPT_STRING_MAX];
    bool full_ref;
    char heatmaps_path[QGPU_OPT_STRING_MAX];
    int max_log_contrast;
    int src_height;
    int src_width;
    double topk;
    double tvi_threshold;
    int window_size;

    /* state */
    int in_w, in_h, bitdepth, bps;
    int hrs;                  /* high-res speed-up in effect */
    int anti_dither;
    int num_diffs;
    int vlt;
    int tvi[32];
    int npics;                /* 1, or 2 with full_ref */
    CambiPic pic[2];          /* 0 distorted, 1 reference */
    int slide;                /* c-values by sliding histograms (else direct) */
    cl_kernel k_prep_mask, k_filter, k_cvalues, k_slide, k_select, k_hist2;
    cl_mem params, kvals;
    struct CambiLane {        /* per lane: written by every frame */
        cl_mem imgs, cval, hist1, hist2, state;
    } lane[QGPU_MAX_LANES];
    int score_id, source_id, fullref_id;
} CambiState;

#define OFF(x) offsetof(CambiState, x)
static const QgpuOptionDef cambi_options[] = {
    {"cambi_eotf", "ceot", QGPU_OPT_STRING, OFF(cambi_eotf), 0, "bt1886", 0, 0, QGPU_OPT_PARAM,
     "EOTF of the visibility thresholds: bt1886 or pq (wins over eotf when not default)"},
    {"cambi_high_res_speedup", "hrs", QGPU_OPT_INT, OFF(cambi_high_res_speedup), 0, NULL, 0,
     2160, QGPU_OPT_PARAM,
     "1080/1440/2160: at or above that many pixels, work at half resolution"},
    {"cambi_max_val", "cmxv", QGPU_OPT_DOUBLE, OFF(cambi_max_val), 1000.0, NULL, 0, 1000,
     QGPU_OPT_PARAM, "clip the score to this value"},
    {"cambi_topk", "ctpk", QGPU_OPT_DOUBLE, OFF(cambi_topk), 0.6, NULL, 0.0001, 1.0,
     QGPU_OPT_PARAM, "ratio of pixels for the spatial pooling (used when topk is default)"},
    {"cambi_vis_lum_threshold", "vlt", QGPU_OPT_DOUBLE, OFF(cambi_vis_lum_threshold), 0.0,
     NULL, 0, 300, QGPU_OPT_PARAM, "luminance (cd/m2) below which banding is not visible"},
    {"enc_bitdepth", "encbd", QGPU_OPT_INT, OFF(enc_bitdepth), 0, NULL, 6, 16, QGPU_OPT_PARAM,
     "encoding bit depth (0 = input); anti-dithering below 10"},
    {"enc_height", "ench", QGPU_OPT_INT, OFF(enc_height), 0, NULL, 150, 7680, QGPU_OPT_PARAM,
     "encoding height (0 = input)"},
    {"enc_width", "encw", QGPU_OPT_INT, OFF(enc_width), 0, NULL, 180, 7680, QGPU_OPT_PARAM,
     "encoding width (0 = input)"},
    {"eotf", NULL, QGPU_OPT_STRING, OFF(eotf), 0, "bt1886", 0, 0, QGPU_OPT_PARAM,
     "EOTF of the visibility thresholds: bt1886 or pq"},
    {"full_ref", NULL, QGPU_OPT_BOOL, OFF(full_ref), 0, NULL, 0, 1, 0,
     "also score the reference: cambi_source, cambi_full_reference"},
    {"heatmaps_path", NULL, QGPU_OPT_STRING, OFF(heatmaps_path), 0, "", 0, 0, 0,
     "not supported"},
    {"max_log_contrast", "mlc", QGPU_OPT_INT, OFF(max_log_contrast), 2, NULL, 0, 5,
     QGPU_OPT_PARAM, "largest contrast step, 2^mlc 10-bit codes"},
    {"src_height", "srch", QGPU_OPT_INT, OFF(src_height), 0, NULL, 200, 4320, QGPU_OPT_PARAM,
     "source height (full_ref; 0 = input)"},
    {"src_width", "srcw", QGPU_OPT_INT, OFF(src_width), 0, NULL, 320, 7680, QGPU_OPT_PARAM,
     "source width (full_ref; 0 = input)"},
    {"topk", NULL, QGPU_OPT_DOUBLE, OFF(topk), 0.6, NULL, 0.0001, 1.0, QGPU_OPT_PARAM,
     "ratio of pixels for the spatial pooling"},
    {"tvi_threshold", "tvit", QGPU_OPT_DOUBLE, OFF(tvi_threshold), 0.019, NULL, 0.0001, 1.0,
     QGPU_OPT_PARAM, "visibility threshold: dL > tvi_threshold * L"},
    {"window_size", "ws", QGPU_OPT_INT, OFF(window_size), 65, NULL, 15, 127, QGPU_OPT_PARAM,
     "window at 4K (scaled with width + height)"},
    {NULL},
};
#undef OFF

/* ---- luminance model: 10-bit limited range [64, 940] (luminance_tools.c) ---- */

#define CAMBI_FOOT 64
#define CAMBI_HEAD 940

static double cambi_bt1886(double v)
{
    /* BT.1886 with Lw = 300, Lb = 0.01, gamma 2.4 */
    double lw = pow(300.0, 1.0 / 2.4), lb = pow(0.01, 1.0 / 2.4);
    double a = pow(lw - lb, 2.4), b = lb / (lw - lb);
    return a * pow(fmax(v + b, 0.0), 2.4);
}

static double cambi_pq(double v)
{
    /* SMPTE ST 2084 */
    const double m1 = 0.1593017578125, m2 = 78.84375;
    const double c1 = 0.8359375, c2 = 18.8515625, c3 = 18.6875;
    double p = pow(v, 1.0 / m2);
    return 10000.0 * pow(fmax(p - c1, 0.0) / (c2 - c3 * p), 1.0 / m1);
}

static double cambi_luminance(int sample, int pq)
{
    int s = sample < CAMBI_FOOT ? CAMBI_FOOT : sample > CAMBI_HEAD ? CAMBI_HEAD : sample;
    double v = (double)(s - CAMBI_FOOT) / (CAMBI_HEAD - CAMBI_FOOT);
    return pq ? cambi_pq(v) : cambi_bt1886(v);
}

static int cambi_visible(int sample, int diff, double thr, int pq)
{
    double l0 = cambi_luminance(sample, pq);
    return cambi_luminance(sample + diff, pq) - l0 > thr * l0;
}

/* 0: step not visible at the foot; bisect to the last sample s where the step
 * is visible and not at s + 1; 1023 when still visible at the head. */
static int cambi_tvi(int diff, double thr, int pq)
{
    int lo = CAMBI_FOOT, hi = CAMBI_HEAD - diff - 1;
    if (!cambi_visible(lo, diff, thr, pq))
        return 0;
    if (!cambi_visible(lo + 1, diff, thr, pq))
        return lo;
    if (cambi_visible(hi, diff, thr, pq))
        return cambi_visible(hi + 1, diff, thr, pq) ? 1023 : hi;
    for (int iter = 0; iter < 64; iter++) {
        int mid = lo + (hi - lo) / 2;
        if (!cambi_visible(mid, diff, thr, pq))
            hi = mid;
        else if (cambi_visible(mid + 1, diff, thr, pq))
            lo = mid;
        else
            return mid;
    }
    return lo;
}

/* First code from the foot up whose luminance reaches thr (0 if the foot). */
static int cambi_vlt(double thr, int pq)
{
    int s = CAMBI_FOOT;
    while (s < 65535 && cambi_luminance(s, pq) < thr)
        s++;
    return s == CAMBI_FOOT ? 0 : s;
}

static int cambi_window(int ws, int w, int h, int hrs)
{
    int a = ((ws * (w + h)) / 375) >> 4;
    if (hrs)
        a = (a + 1) >> 1;
    return a | 1;
}

static int cambi_mask_threshold(int w, int h)
{
    unsigned n = (unsigned)(w >> 6) * (unsigned)(h >> 6);
    int lg = 0;
    if (n) {
        for (unsigned t = n - 1; t; t >>= 1)
            lg++;
    }
    return (7 * 7 + 3 * (lg - 11) - 1) >> 1;
}

/* cambi_cvalues' window tile in __local memory for tiles of ct + 2 pad =
 * rw samples a side: rows stored rw | 2 apart (cambi.cl: the lanes of a
 * team read one column of different rows, in different banks). */
static size_t cvalue_tile_bytes(size_t rw)
{
    return rw * (rw | 2) * sizeof(cl_ushort);
}

/* libvmaf's nearest-neighbour walk: a float position starting at
 * ratio/2 - 0.5 (computed in double, stored in float), + ratio per step,
 * index = (int)(pos + 0.5). */
static void cambi_resize_map(int in, int out, cl_int *map)
{
    if (in == out) {
        for (int i = 0; i < out; i++)
            map[i] = i;
        return;
    }
    float ratio = (float)in / (float)out;
    float pos = (float)((double)(ratio / 2) - 0.5);
    for (int i = 0; i < out; i++) {
        int v = (int)((double)pos + 0.5);
        map[i] = v < in ? v : in - 1;
        pos += ratio;
    }
}

static int cambi_zero(QgpuFeature *f, cl_mem buf, size_t bytes)
{
    void *z = calloc(1, bytes);
    if (!z)
        return qgpu_error(f->ctx, QGPU_ERR_NO_MEMORY, "cambi: out of memory");
    int err = qgpu_buffer_write(f->ctx, buf, bytes, z, "cambi: zeroing");
    free(z);
    return err;
}

/* Sets up one picture's geometry; returns 0 or an error. */
static int cambi_pic_init(QgpuFeature *f, CambiPic *p, int w, int h, double topk,
                          size_t *img_total, size_t *cval_total)
{
    CambiState *s = f->priv;
    p->w = w;
    p->h = h;
    p->window = cambi_window(s->window_size, w, h, s->hrs);
    p->mask_threshold = cambi_mask_threshold(w, h);
    int sw = w, sh = h;
    size_t img = (size_t)w * h, cv = 0;
    for (int i = 0; i < CAMBI_SCALES; i++) {
        if (i > 0 || s->hrs) {
            sw = (sw + 1) >> 1;
            sh = (sh + 1) >> 1;
        }
        p->sw[i] = sw;
        p->sh[i] = sh;
        p->img_off[i] = (int)img;
        p->cval_off[i] = (int)cv;
        img += (size_t)sw * sh;
        cv += (size_t)sw * sh;
        long n = (long)sw * sh;
        double kd = topk * (double)n;
        long k = kd < 1.0 ? 1 : kd > (double)n ? n : (long)kd;
        p->kth[i] = (unsigned)k;
    }
    p->cval_off[CAMBI_SCALES] = (int)cv;
    int pad = p->window >> 1;
    if (pad > p->sw[CAMBI_SCALES - 1] || pad > p->sh[CAMBI_SCALES - 1])
        return qgpu_error(f->ctx, QGPU_ERR_UNSUPPORTED,
                          "cambi: %dx%d: the %d-pixel window is larger than the smallest "
                          "scale (%dx%d); libvmaf reads outside the picture there",
                          w, h, p->window, p->sw[CAMBI_SCALES - 1], p->sh[CAMBI_SCALES - 1]);
    if (img > *img_total)
        *img_total = img;
    if (cv > *cval_total)
        *cval_total = cv;

    cl_int *maps = malloc(sizeof(cl_int) * (size_t)(w + h));
    if (!maps)
        return qgpu_error(f->ctx, QGPU_ERR_NO_MEMORY, "cambi: out of memory");
    cambi_resize_map(s->in_w, w, maps);
    cambi_resize_map(s->in_h, h, maps + w);
    p->scaled = 0;
    for (int i = 0; i < w + h; i++)
        if (maps[i] != (i < w ? i : i - w))
            p->scaled = 1;
    int err = qgpu_buffer_create(f->ctx, sizeof(cl_int) * (size_t)(w + h), &p->maps);
    if (!err)
        err = qgpu_buffer_write(f->ctx, p->maps, sizeof(cl_int) * (size_t)(w + h), maps,
                                "cambi: scaling maps");
    free(maps);
    if (err)
        return err;

    /* the c-value launch: 16 x 16 tiles, or 8 x 8 at a scale whose 16 x
     * 16 tiles are fewer than CAMBI_SMALL_GROUPS (the coarse scales: a
     * suffix, sizes only shrink); the groups scale after scale, those of
     * the 8 x 8 tiles after all those of the 16 x 16 ones */
    cl_int geom[CAMBI_SCALES * CAMBI_CG] = {0};
    p->groups[0] = p->groups[1] = 0;
    p->n16 = 0;
    for (int i = 0; i < CAMBI_SCALES; i++) {
        const int tiles16 = ((p->sw[i] + CAMBI_TILE - 1) / CAMBI_TILE) *
                            ((p->sh[i] + CAMBI_TILE - 1) / CAMBI_TILE);
        const int small = tiles16 < CAMBI_SMALL_GROUPS || p->n16 < i;
        const int ct = small ? CAMBI_TILE_SMALL : CAMBI_TILE;
        const int tx = (p->sw[i] + ct - 1) / ct, ty = (p->sh[i] + ct - 1) / ct;
        cl_int *g = geom + i * CAMBI_CG;
        if (!small)
            p->n16 = i + 1;
        g[CG_W] = p->sw[i];
        g[CG_H] = p->sh[i];
        g[CG_IMG] = p->img_off[i];
        g[CG_CVAL] = p->cval_off[i];
        g[CG_G0] = p->groups[small];
        g[CG_TX] = tx;
        p->groups[small] += tx * ty;
    }
    for (int i = p->n16; i < CAMBI_SCALES; i++)
        geom[i * CAMBI_CG + CG_G0] += p->groups[0];
    err = qgpu_buffer_upload(f->ctx, sizeof(geom), geom, &p->geom, "cambi: c-value geometry");
    if (err)
        return err;
    /* per picture: 5 x (threshold bits, copies) then per scale the
     * CAMBI_H2_GROUPS sums of cambi_hist2 and the one of cambi_select */
    return qgpu_results_reserve(f->ctx,
                                sizeof(cl_uint) * 2 * CAMBI_SCALES +
                                    sizeof(cl_long) * CAMBI_SCALES * (CAMBI_H2_GROUPS + 1),
                                &p->res_off);
}

static int cambi_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    CambiState *s = f->priv;
    int err;

    if (s->heatmaps_path[0])
        return qgpu_error(f->ctx, QGPU_ERR_UNSUPPORTED, "cambi: heatmaps_path is not supported");
    /* cambi_eotf wins when it is not the default */
    const char *eotf = strcmp(s->cambi_eotf, "bt1886") ? s->cambi_eotf : s->eotf;
    int pq;
    if (!strcmp(eotf, "bt1886"))
        pq = 0;
    else if (!strcmp(eotf, "pq"))
        pq = 1;
    else
        return qgpu_error(f->ctx, QGPU_ERR_BAD_OPTION,
                          "cambi: eotf '%s' is not one of bt1886, pq", eotf);

    s->in_w = fmt->width;
    s->in_h = fmt->height;
    s->bitdepth = fmt->bitdepth;
    s->bps = fmt->bytes_per_sample;

    /* geometry rules of libvmaf's init() */
    int enc_w = s->enc_width, enc_h = s->enc_height, src_w = s->src_width, src_h = s->src_height;
    int enc_bd = s->enc_bitdepth ? s->enc_bitdepth : fmt->bitdepth;
    if (enc_w == 0 || enc_h == 0) {
        enc_w = fmt->width;
        enc_h = fmt->height;
    }
    if (src_w == 0 || src_h == 0) {
        src_w = fmt->width;
        src_h = fmt->height;
    }
    if (enc_w > fmt->width || enc_h > fmt->height) { /* no upscaling of the encode */
        enc_w = fmt->width;
        enc_h = fmt->height;
    }
    if (enc_w < CAMBI_MIN_WH && enc_h < CAMBI_MIN_WH)
        return qgpu_error(f->ctx, QGPU_ERR_UNSUPPORTED,
                          "cambi: %dx%d is too small (width or height must be >= %d)", enc_w,
                          enc_h, CAMBI_MIN_WH);
    if (src_w < CAMBI_MIN_WH && src_h < CAMBI_MIN_WH)
        return qgpu_error(f->ctx, QGPU_ERR_UNSUPPORTED,
                          "cambi: source %dx%d is too small (width or height must be >= %d)",
                          src_w, src_h, CAMBI_MIN_WH);
    if ((src_w > enc_w && src_h < enc_h) || (src_w < enc_w && src_h > enc_h))
        return qgpu_error(f->ctx, QGPU_ERR_BAD_OPTION,
                          "cambi: source %dx%d and encode %dx%d must scale the same way in "
                          "both directions", src_w, src_h, enc_w, enc_h);
    long enc_pix = (long)enc_w * enc_h;
    s->hrs = (s->cambi_high_res_speedup == 1080 && enc_pix >= 1920L * 1080) ||
             (s->cambi_high_res_speedup == 1440 && enc_pix >= 2560L * 1440) ||
             (s->cambi_high_res_speedup == 2160 && enc_pix >= 3840L * 2160);
    s->anti_dither = enc_bd < 10;
    s->num_diffs = 1 << s->max_log_contrast;
    for (int d = 0; d < s->num_diffs; d++)
        s->tvi[d] = cambi_tvi(d + 1, s->tvi_threshold, pq);
    s->vlt = cambi_vlt(s->cambi_vis_lum_threshold, pq);
    /* topk wins when it is not the default */
    double topk = s->topk != 0.6 ? s->topk : s->cambi_topk;

    err = qgpu_output_register(f, OUT_CAMBI, &s->score_id);
    if (!err && s->full_ref)
        err = qgpu_output_register(f, OUT_SOURCE, &s->source_id);
    if (!err && s->full_ref)
        err = qgpu_output_register(f, OUT_FULL_REFERENCE, &s->fullref_id);
    if (err)
        return err;

    s->npics = s->full_ref ? 2 : 1;
    size_t img_total = 0, cval_total = 0;
    err = cambi_pic_init(f, &s->pic[0], enc_w, enc_h, topk, &img_total, &cval_total);
    if (!err && s->full_ref)
        err = cambi_pic_init(f, &s->pic[1], src_w, src_h, topk, &img_total, &cval_total);
    if (err)
        return err;

    /* local memory of the c-value tiles: the sliding-histogram kernel when
     * its tile fits (every window up to 4K with the default size), else the
     * direct-count kernel with its smaller tile */
    cl_ulong local_mem = 0;
    cl_device_type type = 0;
    clGetDeviceInfo(qgpu_cl_device(f->ctx), CL_DEVICE_LOCAL_MEM_SIZE, sizeof(local_mem),
                    &local_mem, NULL);
    clGetDeviceInfo(qgpu_cl_device(f->ctx), CL_DEVICE_TYPE, sizeof(type), &type, NULL);
    /* Measured at 1080p 8-bit (doc/metrics/cambi.md): on PoCL the sliding
     * histogram is 1.5-1.7x faster than the direct counts; on an NVIDIA H200
     * the direct counts are 2.8x faster (1730 vs 616 fps for all of CAMBI). */
    int slide_fits = 1;
    /* cambi_cvalues' own __local arrays beside its tile: the list of
     * pixels that need a window and, with NW <= 4, the teams' counters */
    const size_t nw = (2 * (size_t)s->num_diffs + 1 + 3) / 4;
    const size_t direct_fixed = (size_t)CAMBI_TILE * CAMBI_TILE *
                                (sizeof(cl_int) + (nw <= 4 ? nw * sizeof(cl_ulong) : 0));
    for (int i = 0; i < s->npics; i++) {
        size_t pad2 = 2 * (size_t)(s->pic[i].window >> 1);
        size_t rw = CAMBI_TILE + pad2;
        size_t slide = (CAMBI_SX + pad2) * (CAMBI_SY + pad2) * sizeof(cl_ushort) +
                       (size_t)CAMBI_SX * CAMBI_R * sizeof(cl_ushort);
        size_t direct = cvalue_tile_bytes(rw) + direct_fixed;
        if (slide + 1024 > local_mem)
            slide_fits = 0;
        if (direct + 1024 > local_mem)
            return qgpu_error(f->ctx, QGPU_ERR_UNSUPPORTED,
                              "cambi: window %d needs %zu bytes of local memory, the device "
                              "has %llu", s->pic[i].window, direct,
                              (unsigned long long)local_mem);
    }
    s->slide = slide_fits && !(type & CL_DEVICE_TYPE_GPU);
    /* measurement switch: QGPU_CAMBI_CVALUES=direct|slide forces a kernel */
    const char *method = getenv("QGPU_CAMBI_CVALUES");
    if (method && !strcmp(method, "direct"))
        s->slide = 0;
    else if (method && !strcmp(method, "slide"))
        s->slide = slide_fits;

    char opts[128];
    snprintf(opts, sizeof(opts), "-DND=%d -cl-fp32-correctly-rounded-divide-sqrt",
             s->num_diffs);
    cl_program program;
    err = qgpu_program_get(f->ctx, "cambi", opts, &program);
    if (!err)
        err = qgpu_kernel_create(f->ctx, program, "cambi_prep_mask", &s->k_prep_mask);
    if (!err)
        err = qgpu_kernel_create(f->ctx, program, "cambi_filter", &s->k_filter);
    if (!err)
        err = qgpu_kernel_create(f->ctx, program, "cambi_cvalues", &s->k_cvalues);
    if (!err)
        err = qgpu_kernel_create(f->ctx, program, "cambi_cvalues_slide", &s->k_slide);
    if (!err)
        err = qgpu_kernel_create(f->ctx, program, "cambi_select", &s->k_select);
    if (!err)
        err = qgpu_kernel_create(f->ctx, program, "cambi_hist2", &s->k_hist2);
    if (err)
        return err;

    /* scratch per lane: the queue of a lane is in order, so one frame's
     * passes finish before the next frame of that lane starts */
    const size_t h1 = sizeof(cl_uint) * CAMBI_SCALES * CAMBI_HIST1_BINS;
    const size_t h2 = sizeof(cl_uint) * CAMBI_SCALES * CAMBI_HIST2_BINS;
    const size_t st = sizeof(cl_uint) * CAMBI_ST * CAMBI_SCALES;
    for (int i = 0; i < qgpu_lanes(f->ctx) && !err; i++) {
        struct CambiLane *b = &s->lane[i];
        err = qgpu_buffer_create(f->ctx, img_total * sizeof(cl_ushort), &b->imgs);
        if (!err)
            err = qgpu_buffer_create(f->ctx, cval_total * sizeof(cl_float), &b->cval);
        if (!err)
            err = qgpu_buffer_create(f->ctx, h1, &b->hist1);
        if (!err)
            err = qgpu_buffer_create(f->ctx, h2, &b->hist2);
        if (!err)
            err = qgpu_buffer_create(f->ctx, st, &b->state);
        /* the select passes zero the histograms after use; start from zero */
        if (!err)
            err = cambi_zero(f, b->hist1, h1);
        if (!err)
            err = cambi_zero(f, b->hist2, h2);
        if (!err)
            err = cambi_zero(f, b->state, st);
    }
    if (!err)
        err = qgpu_buffer_create(f->ctx, sizeof(cl_int) * 64, &s->params);
    if (!err)
        err = qgpu_buffer_create(f->ctx, sizeof(cl_uint) * 2 * CAMBI_SCALES, &s->kvals);
    if (err)
        return err;

    cl_int params[64] = {0};
    for (int d = 0; d < 32; d++) {
        params[d] = d < s->num_diffs ? s->tvi[d] : -1;
        params[32 + d] = cambi_contrast_weights[d];
    }
    cl_uint kvals[2 * CAMBI_SCALES] = {0};
    for (int i = 0; i < s->npics; i++)
        for (int j = 0; j < CAMBI_SCALES; j++)
            kvals[i * CAMBI_SCALES + j] = s->pic[i].kth[j];
    err = qgpu_buffer_write(f->ctx, s->params, sizeof(params), params, "cambi: parameters");
    if (!err)
        err = qgpu_buffer_write(f->ctx, s->kvals, sizeof(kvals), kvals, "cambi: top-k counts");
    return err;
}

static int cambi_enqueue_pic(QgpuFeature *f, QgpuSlot *slot, int which)
{
    CambiState *s = f->priv;
    const QgpuVideoFormat *fmt = f->fmt;
    CambiPic *p = &s->pic[which];
    const struct CambiLane *b = &s->lane[slot->lane];
    QgpuArg args[20];
    int n, err;
    size_t local2[2] = {CAMBI_PREP_WG, CAMBI_PREP_WG};
    size_t global2[2] = {qgpu_round_up(p->w, CAMBI_PREP_TILE) / CAMBI_PREP_TILE * CAMBI_PREP_WG,
                         qgpu_round_up(p->h, CAMBI_PREP_TILE) / CAMBI_PREP_TILE * CAMBI_PREP_WG};

    /* 1. the working picture (10 bits, enc/src size, anti-dithered), its
     * spatial mask (in the samples: UNMASKED_BIT in cambi.cl) and, when
     * scale 0 is the working size, scale 0 */
    const int filter0 = !s->hrs;
    {
        const QgpuArg prep_args[] = {
            qgpu_arg_mem("in_base", which == 0 ? slot->dist : slot->ref),
            qgpu_arg_int("in_off", (cl_int)(fmt->plane_offset[0])),
            qgpu_arg_int("bps", s->bps),
            qgpu_arg_int("bitdepth", s->bitdepth),
            qgpu_arg_int("in_pitch", fmt->plane_w[0]),
            qgpu_arg_mem("maps", p->maps),
            qgpu_arg_int("scaled", p->scaled),
            qgpu_arg_int("w", p->w),
            qgpu_arg_int("h", p->h),
            qgpu_arg_int("anti_dither", s->anti_dither),
            qgpu_arg_int("threshold", p->mask_threshold),
            qgpu_arg_int("filter0", filter0),
            qgpu_arg_int("dst_off", p->img_off[0]),
            qgpu_arg_mem("img", b->imgs),
        };
        err = qgpu_launch(f->ctx, slot, s->k_prep_mask, "cambi: cambi_prep_mask", prep_args,
                          QGPU_ARRAY_SIZE(prep_args), 2, global2, local2);
        if (err)
            return err;
    }

    /* 2. the other scales: 2x decimation of the previous one + mode
     * filter; the last two in one launch (cambi_filter's second scale) */
    local2[0] = local2[1] = CAMBI_TILE;
    for (int i = filter0 ? 1 : 0; i < CAMBI_SCALES; i++) {
        const int two = i == CAMBI_SCALES - 2;
        global2[0] = qgpu_round_up(p->sw[i], CAMBI_TILE);
        global2[1] = qgpu_round_up(p->sh[i], CAMBI_TILE);
        const QgpuArg filter_args[] = {
            qgpu_arg_mem("src_base", b->imgs),
            qgpu_arg_int("src_off", i == 0 ? 0 : p->img_off[i - 1]),
            qgpu_arg_int("src_w", i == 0 ? p->w : p->sw[i - 1]),
            qgpu_arg_int("f", (i > 0 || s->hrs) ? 2 : 1),
            qgpu_arg_mem("dst_base", b->imgs),
            qgpu_arg_int("dst_off", p->img_off[i]),
            qgpu_arg_int("w", p->sw[i]),
            qgpu_arg_int("h", p->sh[i]),
            qgpu_arg_int("dst2_off", two ? p->img_off[i + 1] : 0),
            qgpu_arg_int("w2", two ? p->sw[i + 1] : 0),
            qgpu_arg_int("h2", two ? p->sh[i + 1] : 0),
        };
        err = qgpu_launch(f->ctx, slot, s->k_filter, "cambi: cambi_filter", filter_args,
                          QGPU_ARRAY_SIZE(filter_args), 2, global2, local2);
        if (err)
            return err;
        i += two;
    }

    /* 3. c-values: the direct counts in one launch over the scales (16 x
     * 16 tiles, then 8 x 8), or the sliding histograms scale by scale */
    int pad = p->window >> 1;
    if (!s->slide) {
        const size_t crw = CAMBI_TILE + 2 * (size_t)pad;
        const QgpuArg cv_args[] = {
            qgpu_arg_mem("img_base", b->imgs),
            qgpu_arg_int("pad", pad),
            qgpu_arg_mem("params", s->params),
            qgpu_arg_int("vlt", s->vlt),
            qgpu_arg_mem("geom", p->geom),
            qgpu_arg_int("n16", p->n16),
            qgpu_arg_int("g8", p->groups[0]),
            qgpu_arg_local("tile", cvalue_tile_bytes(crw)),
            qgpu_arg_mem("cval_base", b->cval),
            qgpu_arg_mem("state", b->state),
            qgpu_arg_mem("hist_base", b->hist1),
        };
        size_t lc = CAMBI_CV_WG;
        size_t gc = CAMBI_CV_WG * (size_t)(p->groups[0] + p->groups[1]);
        err = qgpu_launch(f->ctx, slot, s->k_cvalues, "cambi: cambi_cvalues", cv_args,
                          QGPU_ARRAY_SIZE(cv_args), 1, &gc, &lc);
        if (err)
            return err;
    }
    for (int i = 0; i < CAMBI_SCALES && s->slide; i++) {
        n = 0;
        args[n++] = qgpu_arg_mem("img_base", b->imgs);
        args[n++] = qgpu_arg_int("img_off", p->img_off[i]);
        args[n++] = qgpu_arg_int("w", p->sw[i]);
        args[n++] = qgpu_arg_int("h", p->sh[i]);
        args[n++] = qgpu_arg_int("pad", pad);
        args[n++] = qgpu_arg_mem("params", s->params);
        args[n++] = qgpu_arg_int("vlt", s->vlt);
        size_t tile = (CAMBI_SX + 2 * (size_t)pad) * (CAMBI_SY + 2 * (size_t)pad);
        args[n++] = qgpu_arg_local("tile", tile * sizeof(cl_ushort));
        args[n++] = qgpu_arg_local("hist", (size_t)CAMBI_SX * CAMBI_R * sizeof(cl_ushort));
        args[n++] = qgpu_arg_mem("cval_base", b->cval);
        args[n++] = qgpu_arg_int("cval_off", p->cval_off[i]);
        args[n++] = qgpu_arg_mem("state", b->state);
        args[n++] = qgpu_arg_int("scale", i);
        args[n++] = qgpu_arg_mem("hist_base", b->hist1);
        args[n++] = qgpu_arg_int("hist_off", i * CAMBI_HIST1_BINS);
        size_t lc[2] = {CAMBI_SX, 1};
        size_t gc[2] = {qgpu_round_up(p->sw[i], CAMBI_SX),
                        (size_t)(p->sh[i] + CAMBI_SY - 1) / CAMBI_SY};
        err = qgpu_launch(f->ctx, slot, s->k_slide, "cambi: cambi_cvalues_slide", args, n, 2, gc,
                          lc);
        if (err)
            return err;
    }

    /* 4. top-k: radix select in two 16-bit passes over the listed
     * (non-zero) c-values; the sums of the values above the threshold
     * come from cambi_hist2 (above its 16-bit prefix) and the second
     * select (inside it) */
    cl_int res_u32 = (cl_int)(p->res_off / sizeof(cl_uint));
    cl_int res_i64 = (cl_int)((p->res_off + sizeof(cl_uint) * 2 * CAMBI_SCALES) / sizeof(cl_long));
    size_t sel_local = CAMBI_SEL_WG, sel_global = CAMBI_SEL_WG * CAMBI_SCALES;
    for (int pass = 1; pass <= 2; pass++) {
        if (pass == 2) {
            size_t hl = CAMBI_H2_WG, hg = CAMBI_H2_WG * CAMBI_H2_GROUPS * CAMBI_SCALES;
            const QgpuArg hist2_args[] = {
                qgpu_arg_mem("cval", b->cval),
                qgpu_arg_int("o1", p->cval_off[1]),
                qgpu_arg_int("o2", p->cval_off[2]),
                qgpu_arg_int("o3", p->cval_off[3]),
                qgpu_arg_int("o4", p->cval_off[4]),
                qgpu_arg_int("groups_per_scale", CAMBI_H2_GROUPS),
                qgpu_arg_mem("state", b->state),
                qgpu_arg_mem("hist2", b->hist2),
                qgpu_arg_mem("out", slot->results),
                qgpu_arg_int("out_off", res_i64),
            };
            err = qgpu_launch(f->ctx, slot, s->k_hist2, "cambi: cambi_hist2", hist2_args,
                              QGPU_ARRAY_SIZE(hist2_args), 1, &hg, &hl);
            if (err)
                return err;
        }
        const QgpuArg select_args[] = {
            qgpu_arg_mem("hist", pass == 1 ? b->hist1 : b->hist2),
            qgpu_arg_int("nbins", pass == 1 ? CAMBI_HIST1_BINS : CAMBI_HIST2_BINS),
            qgpu_arg_int("pass", pass),
            qgpu_arg_mem("kvals", s->kvals),
            qgpu_arg_int("k_off", which * CAMBI_SCALES),
            qgpu_arg_mem("state", b->state),
            qgpu_arg_mem("out", slot->results),
            qgpu_arg_int("out_off", res_u32),
            qgpu_arg_mem("sums", slot->results),
            qgpu_arg_int("sums_off", res_i64),
            qgpu_arg_int("h2_groups", CAMBI_H2_GROUPS),
        };
        err = qgpu_launch(f->ctx, slot, s->k_select, "cambi: cambi_select", select_args,
                          QGPU_ARRAY_SIZE(select_args), 1, &sel_global, &sel_local);
        if (err)
            return err;
    }
    return 0;
}

static int cambi_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    CambiState *s = f->priv;
    for (int i = 0; i < s->npics; i++) {
        int err = cambi_enqueue_pic(f, slot, i);
        if (err)
            return err;
    }
    return 0;
}

static double cambi_pic_score(const CambiState *s, const CambiPic *p, const QgpuSlot *slot)
{
    const unsigned char *base = (const unsigned char *)slot->results_host + p->res_off;
    const cl_uint *sel = (const cl_uint *)base;
    const cl_long *sums = (const cl_long *)(base + sizeof(cl_uint) * 2 * CAMBI_SCALES);
    double total = 0.0;
    for (int i = 0; i < CAMBI_SCALES; i++) {
        float t;
        cl_uint tbits = sel[2 * i];
        memcpy(&t, &tbits, sizeof(t));
        /* the values above t in fixed point (2^24): cambi_hist2's partial
         * sums and cambi_select's, added as integers (exact) */
        cl_long fixed = 0;
        for (int g = 0; g <= CAMBI_H2_GROUPS; g++)
            fixed += sums[i * (CAMBI_H2_GROUPS + 1) + g];
        /* plus the copies of t */
        double sum = (double)fixed / 16777216.0 + (double)sel[2 * i + 1] * (double)t;
        total += sum / (double)p->kth[i] * cambi_scale_weights[i];
    }
    (void)s;
    return total / ((double)p->window * p->window);
}

static int cambi_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    CambiState *s = f->priv;
    double dist = cambi_pic_score(s, &s->pic[0], slot);
    int err = qgpu_score_set(f->ctx, s->score_id, slot->frame_index,
                             fmin(dist, s->cambi_max_val));
    if (!err && s->full_ref) {
        double src = cambi_pic_score(s, &s->pic[1], slot);
        err = qgpu_score_set(f->ctx, s->source_id, slot->frame_index,
                             fmin(src, s->cambi_max_val));
        if (!err)
            err = qgpu_score_set(f->ctx, s->fullref_id, slot->frame_index,
                                 fmin(fmax(0.0, dist - src), s->cambi_max_val));
    }
    return err;
}

static void cambi_uninit(QgpuFeature *f)
{
    CambiState *s = f->priv;
    qgpu_kernel_release(&s->k_prep_mask);
    qgpu_kernel_release(&s->k_filter);
    qgpu_kernel_release(&s->k_cvalues);
    qgpu_kernel_release(&s->k_slide);
    qgpu_kernel_release(&s->k_select);
    qgpu_kernel_release(&s->k_hist2);
    for (int i = 0; i < QGPU_MAX_LANES; i++) {
        struct CambiLane *b = &s->lane[i];
        qgpu_buffer_release(&b->imgs);
        qgpu_buffer_release(&b->cval);
        qgpu_buffer_release(&b->hist1);
        qgpu_buffer_release(&b->hist2);
        qgpu_buffer_release(&b->state);
    }
    qgpu_buffer_release(&s->params);
    qgpu_buffer_release(&s->kvals);
    for (int i = 0; i < 2; i++) {
        qgpu_buffer_release(&s->pic[i].maps);
        qgpu_buffer_release(&s->pic[i].geom);
    }
}

const QgpuFeatureClass qgpu_feature_cambi = {
    .name = "cambi",
    .outputs = cambi_outputs,
    .options = cambi_options,
    .priv_size = sizeof(CambiState),
    .flags = QGPU_FEATURE_LANES,
    .lookahead = 0,
    .dynamic_flags = NULL,
    .init = cambi_init,
    .enqueue = cambi_enqueue,
    .collect = cambi_collect,
    .flush = NULL,
    .uninit = cambi_uninit,
};
