/*
 * float_vif: libvmaf 3.2.0's float VIF extractor (libvmaf/src/feature/
 * float_vif.c, vif.c, vif_tools.c), luma only, fp32 kernels
 * (float_vif.cl).
 *
 * Launches per frame: 4 statistic (one per scale; those of scales 0..2
 * also make the next scale's pictures) + 1 row-sum = 5 (scale 0 is read
 * from the uploaded luma). The results hold
 * one (num, den) float pair per row of every scale; collect() adds them
 * top to bottom in float (libvmaf's accum_num/accum_den are floats) and
 * finishes in double:
 *   vif_scaleN = num[N] / den[N]
 *   vif = sum(num) / sum(den) (1 when the sum of den is 0)   (debug)
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "feature.h"

#define FVIF_TW 32       /* as in float_vif.cl: statistic tile 32 x 16, work-group 32 x 8 */
#define FVIF_TH 16
#define FVIF_RS_ROWS 8   /* common.cl ROW_SUMS_ROWS: rows per row-sum work-group */
#define FVIF_RS_WG 256   /* common.cl ROW_SUMS_WG: its work-items */
#define FVIF_MIN_SIZE 16 /* scale 3 (w/8) needs 2 samples for its 3-tap mirror */

/* Outputs (libvmaf's names); from OUT_VIF on only with debug=true. */
enum {
    OUT_SCALE0, OUT_SCALE1, OUT_SCALE2, OUT_SCALE3,
    OUT_VIF, OUT_NUM, OUT_DEN,
    OUT_NUM0, OUT_DEN0, OUT_NUM1, OUT_DEN1, OUT_NUM2, OUT_DEN2, OUT_NUM3, OUT_DEN3,
    OUT_COUNT
};

static const QgpuFeatureOutput float_vif_outputs[] = {
    [OUT_SCALE0] = {"vif_scale0", "VMAF_feature_vif_scale0_score"},
    [OUT_SCALE1] = {"vif_scale1", "VMAF_feature_vif_scale1_score"},
    [OUT_SCALE2] = {"vif_scale2", "VMAF_feature_vif_scale2_score"},
    [OUT_SCALE3] = {"vif_scale3", "VMAF_feature_vif_scale3_score"},
    [OUT_VIF] = {"vif"},
    [OUT_NUM] = {"vif_num"},
    [OUT_DEN] = {"vif_den"},
    [OUT_NUM0] = {"vif_num_scale0"},
    [OUT_DEN0] = {"vif_den_scale0"},
    [OUT_NUM1] = {"vif_num_scale1"},
    [OUT_DEN1] = {"vif_den_scale1"},
    [OUT_NUM2] = {"vif_num_scale2"},
    [OUT_DEN2] = {"vif_den_scale2"},
    [OUT_NUM3] = {"vif_num_scale3"},
    [OUT_DEN3] = {"vif_den_scale3"},
    [OUT_COUNT] = {NULL},
};

typedef struct FloatVifState {
    /* options */
    bool debug;
    double egl;
    double kernelscale;
    double prescale;
    char prescale_method[QGPU_OPT_STRING_MAX];
    double sigma_nsq;
    double min_val[4]; /* [1..3] used */
    bool skip_scale0;
    /* state */
    cl_kernel k_rowsum;
    cl_kernel k_stat[4]; /* per scale, of its filter width */
    cl_mem img[QGPU_MAX_LANES][4][2]; /* per lane and scale 1..3: ref, dis (float) */
    cl_mem terms[QGPU_MAX_LANES]; /* per lane: num/den terms of every scale */
    float sigma_max_inv;
    cl_mem filt[4];
    int fw[4];
    int w[4], h[4];
    size_t toff[4];
    int rows_total;
    size_t offset;
    int ids[OUT_COUNT];
} FloatVifState;

static const QgpuOptionDef float_vif_options[] = {
    {"debug", NULL, QGPU_OPT_BOOL, offsetof(FloatVifState, debug), 0, NULL, 0, 1, 0,
     "also output vif, vif_num, vif_den and per-scale num/den"},
    {"vif_enhn_gain_limit", "egl", QGPU_OPT_DOUBLE, offsetof(FloatVifState, egl), 100.0, NULL,
     1.0, 100.0, QGPU_OPT_PARAM, "enhancement gain limit, 1.0 disables enhancement"},
    {"vif_kernelscale", "ks", QGPU_OPT_DOUBLE, offsetof(FloatVifState, kernelscale), 1.0, NULL,
     0.1, 4.0, QGPU_OPT_PARAM, "scale of the Gaussian kernel (only 1.0 is supported)"},
    {"vif_prescale", "ps", QGPU_OPT_DOUBLE, offsetof(FloatVifState, prescale), 1.0, NULL, 0.1,
     4.0, QGPU_OPT_PARAM, "resize factor before VIF (only 1.0 is supported)"},
    {"vif_prescale_method", "pm", QGPU_OPT_STRING, offsetof(FloatVifState, prescale_method), 0,
     "nearest", 0, 0, QGPU_OPT_PARAM, "resize method of vif_prescale"},
    {"vif_sigma_nsq", "snsq", QGPU_OPT_DOUBLE, offsetof(FloatVifState, sigma_nsq), 2.0, NULL,
     0.0, 5.0, QGPU_OPT_PARAM, "noise variance of the VIF model"},
    {"vif_scale1_min_val", "s1miv", QGPU_OPT_DOUBLE, offsetof(FloatVifState, min_val[1]), 0.0,
     NULL, 0.0, 1.0, QGPU_OPT_PARAM, "lower bound of vif_scale1"},
    {"vif_scale2_min_val", "s2miv", QGPU_OPT_DOUBLE, offsetof(FloatVifState, min_val[2]), 0.0,
     NULL, 0.0, 1.0, QGPU_OPT_PARAM, "lower bound of vif_scale2"},
    {"vif_scale3_min_val", "s3miv", QGPU_OPT_DOUBLE, offsetof(FloatVifState, min_val[3]), 0.0,
     NULL, 0.0, 1.0, QGPU_OPT_PARAM, "lower bound of vif_scale3"},
    {"vif_skip_scale0", "ssclz", QGPU_OPT_BOOL, offsetof(FloatVifState, skip_scale0), 0, NULL, 0,
     1, QGPU_OPT_PARAM, "skip scale 0 (not supported)"},
    {NULL},
};

/* vif_tools.c (libvmaf 3.2.0) computes its filters at start-up:
 * vif_get_filter(scale, kernelscale) = get_1d_gaussian_kernel(size, size / 5)
 * with size = max(round_up_to_odd((2^(4 - scale) + 1) * kernelscale), 3)
 * (17, 9, 5, 3 at kernelscale 1); each tap is the Gaussian pdf (exp in
 * double, rounded to float, divided by a float 1 / (stdev sqrt(2 pi))), the
 * taps are summed in float and each divided by the sum in float. These
 * differ from the decimal table older libvmaf shipped by up to 14 ulps. */
static int fvif_filter(float *out, int scale, float kernelscale)
{
    int n = (1 << (4 - scale)) + 1;
    int size = (int)ceilf((float)n * kernelscale);
    if (size % 2 == 0)
        size++;
    if (size < 3)
        size = 3;
    float stdev = (float)size / 5.0f, sum = 0.0f;
    int k = (size - 1) / 2;
    for (int i = 0; i < size; i++) {
        float x = (float)(i - k);
        float num = (float)exp(-0.5 * x / stdev * x / stdev);
        float den = (float)(1 / (stdev * sqrt(2 * M_PI)));
        out[i] = num / den;
        sum += out[i];
    }
    for (int i = 0; i < size; i++)
        out[i] /= sum;
    return size;
}

static int register_names(QgpuFeature *f, FloatVifState *s)
{
    for (int i = 0; i < OUT_COUNT; i++)
        s->ids[i] = -1;
    return qgpu_outputs_register(f, 0, s->debug ? OUT_COUNT : OUT_VIF, s->ids);
}

static int float_vif_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    FloatVifState *s = f->priv;
    QgpuContext *ctx = f->ctx;
    cl_program prog;
    char opts[128];
    size_t terms = 0;
    int err;

    if (fabs(s->kernelscale - 1.0) > 1e-4)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_vif: vif_kernelscale %g is not supported (only 1.0)",
                          s->kernelscale);
    if (s->prescale != 1.0)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_vif: vif_prescale %g is not supported (only 1.0)", s->prescale);
    if (strcmp(s->prescale_method, "nearest") && strcmp(s->prescale_method, "bilinear") &&
        strcmp(s->prescale_method, "bicubic") && strcmp(s->prescale_method, "lanczos4"))
        return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                          "float_vif: vif_prescale_method '%s' is not one of nearest, bilinear, "
                          "bicubic, lanczos4",
                          s->prescale_method);
    if (s->skip_scale0)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_vif: vif_skip_scale0 is not supported");
    if (fmt->width < FVIF_MIN_SIZE || fmt->height < FVIF_MIN_SIZE)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_vif: picture %dx%d is too small (needs at least %dx%d: four "
                          "dyadic scales with mirrored filter borders)",
                          fmt->width, fmt->height, FVIF_MIN_SIZE, FVIF_MIN_SIZE);
    if ((err = register_names(f, s)))
        return err;

    /* With correctly rounded division and vif_sigma_nsq a power of two
     * (2.0 by default), sigma1_sq / sigma_nsq is exactly sigma1_sq times
     * its reciprocal: the statistic takes the product (FVIF_INV_NSQ) */
    int nsq_exp;
    bool cr = qgpu_fp32_correctly_rounded(ctx);
    bool nsq_pow2 = s->sigma_nsq > 0.0 && frexp(s->sigma_nsq, &nsq_exp) == 0.5 &&
                    nsq_exp > -100 && nsq_exp < 100;
    char inv_nsq[48] = "";
    if (cr && nsq_pow2)
        snprintf(inv_nsq, sizeof(inv_nsq), " -DFVIF_INV_NSQ=%af", 1.0 / (float)s->sigma_nsq);
    snprintf(opts, sizeof(opts), "-DFVIF_BPS=%d%s%s", fmt->bytes_per_sample,
             cr ? " -cl-fp32-correctly-rounded-divide-sqrt" : "", inv_nsq);
    if ((err = qgpu_program_get(ctx, "float_vif", opts, &prog)))
        return err;
    if ((err = qgpu_kernel_create(ctx, prog, "fvif_rowsum", &s->k_rowsum)))
        return err;

    s->rows_total = 0;
    for (int i = 0; i < 4; i++) {
        /* vif.c with VIF_OPT_HANDLE_BORDERS: each scale is floor(w/2) x floor(h/2) */
        s->w[i] = i ? s->w[i - 1] / 2 : fmt->width;
        s->h[i] = i ? s->h[i - 1] / 2 : fmt->height;
        s->toff[i] = terms;
        terms += (size_t)2 * s->w[i] * s->h[i];
        s->rows_total += s->h[i];
        for (int k = 0; i && k < 2 * qgpu_lanes(ctx); k++)
            if ((err = qgpu_buffer_create(ctx, (size_t)s->w[i] * s->h[i] * sizeof(float),
                                          &s->img[k / 2][i][k % 2])))
                return err;
        float coef[17] = {0};
        s->fw[i] = fvif_filter(coef, i, (float)s->kernelscale);
        if ((err = qgpu_buffer_upload(ctx, sizeof(coef), coef, &s->filt[i],
                                      "float_vif: filter")))
            return err;
        /* one kernel per filter width (float_vif.cl): fvif_stat17 ...
         * fvif_stat3 */
        char name[32];
        snprintf(name, sizeof(name), "fvif_stat%d", s->fw[i]);
        if ((err = qgpu_kernel_create(ctx, prog, name, &s->k_stat[i])))
            return err;
    }
    for (int i = 0; i < qgpu_lanes(ctx); i++)
        if ((err = qgpu_buffer_create(ctx, terms * sizeof(float), &s->terms[i])))
            return err;
    /* vif_statistic_s: powf(vif_sigma_nsq, 2.0f) / (255.0 * 255.0), as float */
    s->sigma_max_inv = (float)(powf((float)s->sigma_nsq, 2.0f) / (255.0 * 255.0));
    return qgpu_results_reserve(ctx, (size_t)s->rows_total * 2 * sizeof(float), &s->offset);
}

/* A kernel's first arguments, its source pictures: the uploaded luma
 * (pic NULL: scale 0, made float in 8-bit units by `unit` as it is read),
 * else a float picture pair. How many were set. */
static int source_args(QgpuArg *args, const QgpuSlot *slot, const cl_mem pic[2], cl_float unit)
{
    if (!pic) {
        args[0] = qgpu_arg_mem("ref", slot->ref);
        args[1] = qgpu_arg_mem("dis", slot->dist);
        args[2] = qgpu_arg_float("unit", unit);
        return 3;
    }
    args[0] = qgpu_arg_mem("src_ref", pic[0]);
    args[1] = qgpu_arg_mem("src_dis", pic[1]);
    return 2;
}

static int float_vif_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    static const char *const what_stat[4] = {"float_vif: scale 0", "float_vif: scale 1",
                                             "float_vif: scale 2", "float_vif: scale 3"};
    FloatVifState *s = f->priv;
    cl_mem(*img)[2] = s->img[slot->lane];
    cl_mem terms = s->terms[slot->lane];
    int err;

    /* scale 0 is read from the uploaded luma (fvif_stat17), the others
     * from the float pictures the statistic of the scale before made */
    const cl_float unit = 1.0f / (float)(1 << (f->fmt->bitdepth - 8));
    for (int i = 0; i < 4; i++) {
        int w = s->w[i], h = s->h[i];
        size_t local[2] = {FVIF_TW, FVIF_TH / 2};
        size_t global[2] = {qgpu_round_up((size_t)w, FVIF_TW),
                            qgpu_round_up((size_t)h, FVIF_TH) / 2};
        /* the terms of scale i: a sub-range of one buffer, passed as a
         * sub-buffer would need alignment; use a separate offset instead */
        QgpuArg args[14];
        int n = source_args(args, slot, i == 0 ? NULL : img[i], unit);
        args[n++] = qgpu_arg_int("w", w);
        args[n++] = qgpu_arg_int("h", h);
        args[n++] = qgpu_arg_mem("filt", s->filt[i]);
        args[n++] = qgpu_arg_float("egl", (cl_float)s->egl);
        args[n++] = qgpu_arg_float("sigma_nsq", (cl_float)s->sigma_nsq);
        args[n++] = qgpu_arg_float("sigma_max_inv", s->sigma_max_inv);
        args[n++] = qgpu_arg_mem("terms", terms);
        args[n++] = qgpu_arg_int("toff", (cl_int)s->toff[i]);
        if (i < 3) { /* the next scale's filter and pictures */
            args[n++] = qgpu_arg_mem("dfilt", s->filt[i + 1]);
            args[n++] = qgpu_arg_mem("dst_ref", img[i + 1][0]);
            args[n++] = qgpu_arg_mem("dst_dis", img[i + 1][1]);
        }
        if ((err = qgpu_launch(f->ctx, slot, s->k_stat[i], what_stat[i], args, n, 2, global,
                               local)))
            return err;
    }
    {
        cl_int4 groups, rows, toff, wid, hei;
        int acc = 0, nb_groups = 0;
        for (int i = 0; i < 4; i++) {
            acc += s->h[i];
            nb_groups += (s->h[i] + FVIF_RS_ROWS - 1) / FVIF_RS_ROWS;
            groups.s[i] = nb_groups;
            rows.s[i] = acc;
            toff.s[i] = (cl_int)s->toff[i];
            wid.s[i] = s->w[i];
            hei.s[i] = s->h[i];
        }
        size_t local = FVIF_RS_WG, global = (size_t)nb_groups * FVIF_RS_WG;
        const QgpuArg args[] = {
            qgpu_arg_mem("terms", terms),
            qgpu_arg_value("groups", sizeof(groups), &groups),
            qgpu_arg_value("rows", sizeof(rows), &rows),
            qgpu_arg_value("toff", sizeof(toff), &toff),
            qgpu_arg_value("wid", sizeof(wid), &wid),
            qgpu_arg_value("hei", sizeof(hei), &hei),
            qgpu_arg_mem("results", slot->results),
            qgpu_arg_int("results_index", (cl_int)(s->offset / sizeof(float))),
        };
        return qgpu_launch(f->ctx, slot, s->k_rowsum, "float_vif: row sums", args,
                           QGPU_ARRAY_SIZE(args), 1, &global, &local);
    }
}

static int float_vif_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    FloatVifState *s = f->priv;
    const float *rows = (const float *)((const unsigned char *)slot->results_host + s->offset);
    unsigned frame = slot->frame_index;
    double scores[8];
    int err = 0;

    for (int i = 0; i < 4; i++) {
        /* vif_statistic_s: accum_num += accum_inner_num, in float */
        float num = 0.0f, den = 0.0f;
        for (int y = 0; y < s->h[i]; y++) {
            num += rows[2 * y];
            den += rows[2 * y + 1];
        }
        rows += 2 * s->h[i];
        scores[2 * i] = num;
        scores[2 * i + 1] = den;
    }
    for (int i = 0; i < 4; i++) {
        double v = scores[2 * i] / scores[2 * i + 1];
        if (i > 0 && v < s->min_val[i])
            v = s->min_val[i];
        err |= qgpu_score_set(f->ctx, s->ids[OUT_SCALE0 + i], frame, v);
    }
    if (s->debug) {
        double tnum = 0.0, tden = 0.0;
        for (int i = 0; i < 4; i++) {
            tnum += scores[2 * i];
            tden += scores[2 * i + 1];
        }
        err |= qgpu_score_set(f->ctx, s->ids[OUT_VIF], frame, tden == 0.0 ? 1.0 : tnum / tden);
        err |= qgpu_score_set(f->ctx, s->ids[OUT_NUM], frame, tnum);
        err |= qgpu_score_set(f->ctx, s->ids[OUT_DEN], frame, tden);
        for (int i = 0; i < 4; i++) {
            err |= qgpu_score_set(f->ctx, s->ids[OUT_NUM0 + 2 * i], frame, scores[2 * i]);
            err |= qgpu_score_set(f->ctx, s->ids[OUT_DEN0 + 2 * i], frame, scores[2 * i + 1]);
        }
    }
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static void float_vif_uninit(QgpuFeature *f)
{
    FloatVifState *s = f->priv;
    qgpu_kernel_release(&s->k_rowsum);
    for (int i = 0; i < 4; i++) {
        qgpu_kernel_release(&s->k_stat[i]);
        qgpu_buffer_release(&s->filt[i]);
    }
    for (int k = 0; k < QGPU_MAX_LANES * 8; k++)
        qgpu_buffer_release(&s->img[k / 8][k / 2 % 4][k % 2]);
    for (int i = 0; i < QGPU_MAX_LANES; i++)
        qgpu_buffer_release(&s->terms[i]);
}

const QgpuFeatureClass qgpu_feature_float_vif = {
    .name = "float_vif",
    .outputs = float_vif_outputs,
    .options = float_vif_options,
    .priv_size = sizeof(FloatVifState),
    .flags = QGPU_FEATURE_LANES,
    .lookahead = 0,
    .init = float_vif_init,
    .enqueue = float_vif_enqueue,
    .collect = float_vif_collect,
    .flush = NULL,
    .uninit = float_vif_uninit,
};
