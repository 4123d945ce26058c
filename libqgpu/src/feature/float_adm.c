/*
 * float_adm: libvmaf 3.2.0's float ADM extractor (libvmaf/src/feature/
 * float_adm.c, adm.c, adm_tools.c), luma only, fp32 kernels
 * (float_adm.cl).
 *
 * Launches per frame: 4 DWT/decouple (one per scale; scale 0 reads the
 * uploaded luma; each scale's bands kept at their own offset of one
 * buffer) + 1 row kernel for every scale's rows = 5. The results hold 9
 * floats per row of every scale's scored region (den, num, aim sums of
 * the h, v, d bands, each a float sum left to right); collect() adds the
 * rows top to bottom in float and pools as adm_csf_den_scale_s /
 * adm_cm_s do:
 *   per band  powf(sum, 1/p) + powf(area * weight, 1/p)   (float)
 *   per scale (h + v) + d                                  (float)
 *   adm2 = sum num / sum den (double), aim = sum aim / sum den,
 *   adm3 = max(dlmw adm2 + (1 - dlmw)(1 - aim), min), adm_scaleN = num/den.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "feature.h"

#define FADM_RL 256      /* work-items per row chunk in fadm_rows */
#define FADM_RR 1        /* rows per work-group in fadm_rows (2 measured slower:
                            doc/metrics/float_adm.md) */
#define FADM_MIN_SIZE 32 /* scale 3 bands need >= 2 samples for their mirrors */

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

enum {
    O_ADM2, O_AIM, O_ADM3, O_S0, O_S1, O_S2, O_S3,
    O_ADM, O_NUM, O_DEN, O_NUM0, O_DEN0, O_NUM1, O_DEN1, O_NUM2, O_DEN2, O_NUM3, O_DEN3,
    O_COUNT
};

typedef struct FloatAdmState {
    /* options */
    bool debug;
    double egl, nvd;
    int rdh;
    int csf_mode;
    double csf_scale, csf_diag_scale;
    double noise_weight, dlm_weight, min_val;
    bool skip_scale0;
    int bypass_cm;
    bool apply_hm;
    double p_norm;
    double f1s[4], f2s[4];
    int skip_aim_scale;
    /* state */
    cl_kernel k_dwt0, k_dwt, k_rows;
    struct FadmLane {   /* per lane: written by every frame */
        cl_mem lp[2];   /* band a of ref and dis, ping-pong between scales */
        cl_mem bands;   /* per scale 9 planes: o h/v/d, r h/v/d, a h/v/d */
    } lane[QGPU_MAX_LANES];
    int ps;          /* plane stride of lp (scale-0 band size) */
    int boff[4];     /* scale s's bands at boff[s] floats, planes of w[s+1] h[s+1] */
    int bands_size;  /* floats of a lane's bands, every scale */
    int w[5], h[5];  /* [0] picture, [s+1] band of scale s */
    int left[4], top[4], right[4], bottom[4];
    int row_off[4], rows_total;
    float rf[4][3];
    size_t offset;
    int ids[O_COUNT];
} FloatAdmState;

#define OPT_D(n, a, field, def, lo, hi, help)                                                   \
    {n, a, QGPU_OPT_DOUBLE, offsetof(FloatAdmState, field), def, NULL, lo, hi, QGPU_OPT_PARAM, \
     help}

static const QgpuOptionDef float_adm_options[] = {
    {"debug", NULL, QGPU_OPT_BOOL, offsetof(FloatAdmState, debug), 0, NULL, 0, 1, 0,
     "also output adm, adm_num, adm_den and per-scale num/den"},
    OPT_D("adm_enhn_gain_limit", "egl", egl, 100.0, 1.0, 100.0,
          "enhancement gain limit, 1.0 disables the gain"),
    OPT_D("adm_norm_view_dist", "nvd", nvd, 3.0, 0.75, 24.0, "viewing distance / display height"),
    {"adm_ref_display_height", "rdf", QGPU_OPT_INT, offsetof(FloatAdmState, rdh), 1080, NULL, 1,
     4320, QGPU_OPT_PARAM, "reference display height in pixels"},
    {"adm_csf_mode", "csf", QGPU_OPT_INT, offsetof(FloatAdmState, csf_mode), 0, NULL, 0, 9,
     QGPU_OPT_PARAM, "contrast sensitivity function (only 0, Watson97)"},
    OPT_D("adm_csf_scale", "scf", csf_scale, 1.0, 0.0, 50.0, "CSF scale (Barten modes only)"),
    OPT_D("adm_csf_diag_scale", "scfd", csf_diag_scale, 1.0, 0.0, 50.0,
          "diagonal CSF scale (Barten modes only)"),
    OPT_D("adm_noise_weight", "nw", noise_weight, 0.03125, 0.0, 1500.0, "noise weight"),
    OPT_D("adm_dlm_weight", "dlmw", dlm_weight, 0.5, 0.0, 1.0, "weight of the DLM in adm3"),
    OPT_D("adm_min_val", "min", min_val, 0.0, 0.0, 1.0, "lower clip of adm3"),
    {"adm_skip_scale0", "ssz", QGPU_OPT_BOOL, offsetof(FloatAdmState, skip_scale0), 0, NULL, 0,
     1, QGPU_OPT_PARAM, "skip scale 0 (adm_scale0 = 0)"},
    {"adm_bypass_cm", "bcm", QGPU_OPT_INT, offsetof(FloatAdmState, bypass_cm), 0, NULL, 0, 1,
     QGPU_OPT_PARAM, "1: no contrast masking (threshold 0)"},
    {"adm_adm3_apply_hm", "aah", QGPU_OPT_BOOL, offsetof(FloatAdmState, apply_hm), 0, NULL, 0, 1,
     QGPU_OPT_PARAM, "adm3 = harmonic mean of adm2 and aim"},
    OPT_D("adm_p_norm", "apn", p_norm, 3.0, 1.0, 20.0, "exponent of the pooling"),
    OPT_D("adm_f1s0", "f1s0", f1s[0], -1.0, -1.0, 10.0, "h/v CSF factor of scale 0 (-1: Watson)"),
    OPT_D("adm_f1s1", "f1s1", f1s[1], -1.0, -1.0, 10.0, "h/v CSF factor of scale 1 (-1: Watson)"),
    OPT_D("adm_f1s2", "f1s2", f1s[2], -1.0, -1.0, 10.0, "h/v CSF factor of scale 2 (-1: Watson)"),
    OPT_D("adm_f1s3", "f1s3", f1s[3], -1.0, -1.0, 10.0, "h/v CSF factor of scale 3 (-1: Watson)"),
    OPT_D("adm_f2s0", "f2s0", f2s[0], -1.0, -1.0, 10.0, "d CSF factor of scale 0 (-1: Watson)"),
    OPT_D("adm_f2s1", "f2s1", f2s[1], -1.0, -1.0, 10.0, "d CSF factor of scale 1 (-1: Watson)"),
    OPT_D("adm_f2s2", "f2s2", f2s[2], -1.0, -1.0, 10.0, "d CSF factor of scale 2 (-1: Watson)"),
    OPT_D("adm_f2s3", "f2s3", f2s[3], -1.0, -1.0, 10.0, "d CSF factor of scale 3 (-1: Watson)"),
    {"adm_skip_aim_scale", "sasc", QGPU_OPT_INT, offsetof(FloatAdmState, skip_aim_scale), -1, NULL,
     0, 3, QGPU_OPT_PARAM, "leave this scale out of aim"},
    {NULL},
};

/* libvmaf's float_adm.c names; from O_ADM on only with debug=true */
static const QgpuFeatureOutput float_adm_outputs[] = {
    [O_ADM2] = {"adm2", "VMAF_feature_adm2_score"},
    [O_AIM] = {"aim", "VMAF_feature_aim_score"},
    [O_ADM3] = {"adm3", "VMAF_feature_adm3_score"},
    [O_S0] = {"adm_scale0", "VMAF_feature_adm_scale0_score"},
    [O_S1] = {"adm_scale1", "VMAF_feature_adm_scale1_score"},
    [O_S2] = {"adm_scale2", "VMAF_feature_adm_scale2_score"},
    [O_S3] = {"adm_scale3", "VMAF_feature_adm_scale3_score"},
    /* libvmaf quirk: "adm" is not a provided feature, so never suffixed */
    [O_ADM] = {"adm", NULL, QGPU_OUTPUT_NO_SUFFIX},
    [O_NUM] = {"adm_num"},
    [O_DEN] = {"adm_den"},
    [O_NUM0] = {"adm_num_scale0"},
    [O_DEN0] = {"adm_den_scale0"},
    [O_NUM1] = {"adm_num_scale1"},
    [O_DEN1] = {"adm_den_scale1"},
    [O_NUM2] = {"adm_num_scale2"},
    [O_DEN2] = {"adm_den_scale2"},
    [O_NUM3] = {"adm_num_scale3"},
    [O_DEN3] = {"adm_den_scale3"},
    [O_COUNT] = {NULL},
};

/* adm_tools.h dwt_quant_step (Watson, Yang, Solomon, Villasenor 1997,
 * formula (9), Y parameters of Table IV, amplitudes of Table V), with
 * libvmaf's float/double types: r, temp and the exponent are floats. */
static float fadm_quant_step(int lambda, int theta, double nvd, int rdh)
{
    static const float a = 0.495f, k = 0.466f, f0 = 0.401f;
    static const float g[4] = {1.501f, 1.0f, 0.534f, 1.0f};
    static const float amp[4][4] = {{0.62171f, 0.67234f, 0.72709f, 0.67234f},
                                    {0.34537f, 0.41317f, 0.49428f, 0.41317f},
                                    {0.18004f, 0.22727f, 0.28688f, 0.22727f},
                                    {0.091401f, 0.11792f, 0.15214f, 0.11792f}};
    float r = nvd * rdh * M_PI / 180.0;
    float temp = log10(pow(2.0, lambda + 1) * f0 * g[theta] / r);
    float e = k * temp * temp;
    float q = 2.0 * a * pow(10.0, e) / amp[lambda][theta];
    return q;
}

static int float_adm_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    FloatAdmState *s = f->priv;
    QgpuContext *ctx = f->ctx;
    cl_program prog;
    char opts[128];
    int err;

    if (s->csf_mode != 0)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_adm: adm_csf_mode %d is not supported (only 0, Watson97)",
                          s->csf_mode);
    if (fmt->width < FADM_MIN_SIZE || fmt->height < FADM_MIN_SIZE)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "float_adm: picture %dx%d is too small (needs at least %dx%d: four "
                          "DWT scales with mirrored borders)",
                          fmt->width, fmt->height, FADM_MIN_SIZE, FADM_MIN_SIZE);

    for (int i = 0; i < O_COUNT; i++)
        s->ids[i] = -1;
    if ((err = qgpu_outputs_register(f, 0, s->debug ? O_COUNT : O_ADM, s->ids)))
        return err;

    s->w[0] = fmt->width;
    s->h[0] = fmt->height;
    s->rows_total = 0;
    for (int sc = 0; sc < 4; sc++) {
        int bw = (s->w[sc] + 1) / 2, bh = (s->h[sc] + 1) / 2;
        s->w[sc + 1] = bw;
        s->h[sc + 1] = bh;
        /* ADM_BORDER_FACTOR 0.1, truncated as libvmaf's int conversion */
        s->left[sc] = (int)(bw * 0.1 - 0.5);
        s->top[sc] = (int)(bh * 0.1 - 0.5);
        s->right[sc] = bw - s->left[sc];
        s->bottom[sc] = bh - s->top[sc];
        s->row_off[sc] = s->rows_total;
        s->rows_total += s->bottom[sc] - s->top[sc];
        float f1 = 1.0f / fadm_quant_step(sc, 1, s->nvd, s->rdh);
        float f2 = 1.0f / fadm_quant_step(sc, 2, s->nvd, s->rdh);
        if (s->f1s[sc] >= 0)
            f1 = (float)s->f1s[sc];
        if (s->f2s[sc] >= 0)
            f2 = (float)s->f2s[sc];
        s->rf[sc][0] = f1;
        s->rf[sc][1] = f1;
        s->rf[sc][2] = f2;
    }
    s->ps = s->w[1] * s->h[1];
    s->bands_size = 0;
    for (int sc = 0; sc < 4; sc++) {
        s->boff[sc] = s->bands_size;
        s->bands_size += 9 * s->w[sc + 1] * s->h[sc + 1];
    }

    snprintf(opts, sizeof(opts), "-DFADM_BPS=%d -DFADM_RL=%d -DFADM_RR=%d%s",
             fmt->bytes_per_sample, FADM_RL, FADM_RR,
             qgpu_fp32_correctly_rounded(ctx) ? " -cl-fp32-correctly-rounded-divide-sqrt" : "");
    if ((err = qgpu_program_get(ctx, "float_adm", opts, &prog)))
        return err;
    if ((err = qgpu_kernel_create(ctx, prog, "fadm_dwt0", &s->k_dwt0)) ||
        (err = qgpu_kernel_create(ctx, prog, "fadm_dwt", &s->k_dwt)) ||
        (err = qgpu_kernel_create(ctx, prog, "fadm_rows", &s->k_rows)))
        return err;
    for (int i = 0; i < qgpu_lanes(ctx) && !err; i++) {
        struct FadmLane *b = &s->lane[i];
        if ((err = qgpu_buffer_create(ctx, 2 * (size_t)s->ps * sizeof(float), &b->lp[0])) ||
            (err = qgpu_buffer_create(ctx, 2 * (size_t)s->ps * sizeof(float), &b->lp[1])))
            break;
        err = qgpu_buffer_create(ctx, (size_t)s->bands_size * sizeof(float), &b->bands);
    }
    if (err)
        return err;
    return qgpu_results_reserve(ctx, (size_t)s->rows_total * 9 * sizeof(float), &s->offset);
}

/* hi + lo split of a double constant, for the kernels' double products */
static void split_d(double c, cl_float *hi, cl_float *lo)
{
    *hi = (cl_float)c;
    *lo = (cl_float)(c - (double)*hi);
}

static int float_adm_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    static const char *const what_dwt[4] = {"float_adm: DWT 0", "float_adm: DWT 1",
                                            "float_adm: DWT 2", "float_adm: DWT 3"};
    FloatAdmState *s = f->priv;
    const struct FadmLane *b = &s->lane[slot->lane];
    int err;

    /* adm_decouple_s: cos(1 deg)^2 in double, stored as float */
    cl_float cos1sq = (cl_float)(cos(1.0 * M_PI / 180.0) * cos(1.0 * M_PI / 180.0));
    cl_float egl_hi, egl_lo;
    split_d(s->egl, &egl_hi, &egl_lo);
    for (int sc = 0; sc < 4; sc++) {
        int w = s->w[sc], h = s->h[sc], bw = s->w[sc + 1], bh = s->h[sc + 1];
        size_t local[2] = {16, 8};
        size_t global[2] = {qgpu_round_up((size_t)bw, 16), qgpu_round_up((size_t)bh, 8)};
        /* scale 0 from the uploaded luma (fadm_dwt0), the others from band
         * a of the previous scale, ref then dis (fadm_dwt) */
        QgpuArg dwt_args[16];
        int n = 0;
        if (sc == 0) {
            dwt_args[n++] = qgpu_arg_mem("ref", slot->ref);
            dwt_args[n++] = qgpu_arg_mem("dis", slot->dist);
            dwt_args[n++] = qgpu_arg_float("unit", 1.0f / (float)(1 << (f->fmt->bitdepth - 8)));
            dwt_args[n++] = qgpu_arg_int("w", w);
            dwt_args[n++] = qgpu_arg_int("h", h);
        } else {
            dwt_args[n++] = qgpu_arg_mem("src", b->lp[(sc - 1) & 1]);
            dwt_args[n++] = qgpu_arg_int("w", w);
            dwt_args[n++] = qgpu_arg_int("h", h);
            dwt_args[n++] = qgpu_arg_int("n", s->ps);
        }
        dwt_args[n++] = qgpu_arg_mem("lp_out", b->lp[sc & 1]);
        dwt_args[n++] = qgpu_arg_int("bw", bw);
        dwt_args[n++] = qgpu_arg_int("bh", bh);
        dwt_args[n++] = qgpu_arg_int("bn", s->ps);
        dwt_args[n++] = qgpu_arg_mem("bands", b->bands);
        dwt_args[n++] = qgpu_arg_int("boff", s->boff[sc]);
        dwt_args[n++] = qgpu_arg_int("ps", bw * bh);
        /* the bands are made where the rows kernel reads them: the scored
         * region and one row and column around it (its masking window) */
        cl_int4 need = {{s->left[sc] > 0 ? s->left[sc] - 1 : 0, s->top[sc] > 0 ? s->top[sc] - 1 : 0,
                         s->right[sc] < bw ? s->right[sc] : bw - 1,
                         s->bottom[sc] < bh ? s->bottom[sc] : bh - 1}};
        dwt_args[n++] = qgpu_arg_value("need", sizeof(need), &need);
        dwt_args[n++] = qgpu_arg_float("cos1sq", cos1sq);
        dwt_args[n++] = qgpu_arg_float("egl_hi", egl_hi);
        dwt_args[n++] = qgpu_arg_float("egl_lo", egl_lo);
        if ((err = qgpu_launch(f->ctx, slot, sc ? s->k_dwt : s->k_dwt0, what_dwt[sc], dwt_args,
                               n, 2, global, local)))
            return err;
    }

    /* every scale's rows in one launch: work-groups [groups[s-1],
     * groups[s]) take scale s's scored rows, FADM_RR each */
    cl_int4 boff, ps, wid, hei, left, top, right, bottom, groups, roff;
    cl_float4 rfh, rfv, rfd;
    cl_float8 cst = {{0}};
    int nb_groups = 0, aim_mask = 0;
    for (int sc = 0; sc < 4; sc++) {
        nb_groups += (s->bottom[sc] - s->top[sc] + FADM_RR - 1) / FADM_RR;
        groups.s[sc] = nb_groups;
        boff.s[sc] = s->boff[sc];
        ps.s[sc] = s->w[sc + 1] * s->h[sc + 1];
        wid.s[sc] = s->w[sc + 1];
        hei.s[sc] = s->h[sc + 1];
        left.s[sc] = s->left[sc];
        top.s[sc] = s->top[sc];
        right.s[sc] = s->right[sc];
        bottom.s[sc] = s->bottom[sc];
        roff.s[sc] = s->row_off[sc];
        rfh.s[sc] = s->rf[sc][0];
        rfv.s[sc] = s->rf[sc][1];
        rfd.s[sc] = s->rf[sc][2];
        aim_mask |= (sc != s->skip_aim_scale) << sc;
    }
    cst.s[0] = (cl_float)s->p_norm;
    split_d(0.0333333351, &cst.s[1], &cst.s[2]); /* FLOAT_ONE_BY_30 */
    split_d(0.0666666701, &cst.s[3], &cst.s[4]); /* FLOAT_ONE_BY_15 */
    size_t rlocal = FADM_RL, rglobal = (size_t)nb_groups * FADM_RL;
    const QgpuArg rows_args[] = {
        qgpu_arg_mem("bands", b->bands),
        qgpu_arg_value("boff", sizeof(boff), &boff),
        qgpu_arg_value("ps", sizeof(ps), &ps),
        qgpu_arg_value("wid", sizeof(wid), &wid),
        qgpu_arg_value("hei", sizeof(hei), &hei),
        qgpu_arg_value("left", sizeof(left), &left),
        qgpu_arg_value("top", sizeof(top), &top),
        qgpu_arg_value("right", sizeof(right), &right),
        qgpu_arg_value("bottom", sizeof(bottom), &bottom),
        qgpu_arg_value("groups", sizeof(groups), &groups),
        qgpu_arg_value("roff", sizeof(roff), &roff),
        qgpu_arg_value("rfh", sizeof(rfh), &rfh),
        qgpu_arg_value("rfv", sizeof(rfv), &rfv),
        qgpu_arg_value("rfd", sizeof(rfd), &rfd),
        qgpu_arg_value("cst", sizeof(cst), &cst),
        qgpu_arg_int("p3", s->p_norm == 3.0),
        qgpu_arg_int("bypass", s->bypass_cm != 0),
        qgpu_arg_int("aim_mask", aim_mask),
        qgpu_arg_mem("results", slot->results),
        qgpu_arg_int("index", (cl_int)(s->offset / sizeof(float))),
    };
    return qgpu_launch(f->ctx, slot, s->k_rows, "float_adm: rows", rows_args,
                       QGPU_ARRAY_SIZE(rows_args), 1, &rglobal, &rlocal);
}

/* powf(sum, 1/p) + get_noise_constant(area_w, area_h, weight, p) per band,
 * the three bands added in float (adm_csf_den_scale_s / adm_cm_s) */
static float pool(const float acc[3], int aw, int ah, double weight, double p)
{
    float e = (float)(1.0f / p);
    float nc = powf((float)(aw * ah * weight), e);
    float b0 = powf(acc[0], e) + nc;
    float b1 = powf(acc[1], e) + nc;
    float b2 = powf(acc[2], e) + nc;
    return b0 + b1 + b2;
}

static int float_adm_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    FloatAdmState *s = f->priv;
    const float *rows = (const float *)((const unsigned char *)slot->results_host + s->offset);
    unsigned frame = slot->frame_index;
    float nums[4], dens[4], aims[4];
    double num = 0, den = 0, aim_num = 0;
    int err = 0;

    for (int sc = 0; sc < 4; sc++) {
        float acc[9] = {0};
        int nr = s->bottom[sc] - s->top[sc];
        const float *r = rows + (size_t)s->row_off[sc] * 9;
        for (int y = 0; y < nr; y++)
            for (int k = 0; k < 9; k++)
                acc[k] += r[(size_t)y * 9 + k];
        int aw = s->right[sc] - s->left[sc], ah = nr;
        if (sc == 0 && s->skip_scale0) {
            /* adm.c: num 0 and den 1e-10f at a skipped scale 0 */
            nums[sc] = 0.0f;
            dens[sc] = 1e-10f;
            aims[sc] = 0.0f;
        } else {
            dens[sc] = pool(acc, aw, ah, s->noise_weight, s->p_norm);
            nums[sc] = pool(acc + 3, aw, ah, s->noise_weight, s->p_norm);
            aims[sc] = sc == s->skip_aim_scale ? 0.0f : pool(acc + 6, aw, ah, 0.0, s->p_norm);
        }
        num += nums[sc];
        den += dens[sc];
        aim_num += aims[sc];
    }
    double limit = 1e-10 * (s->w[0] * s->h[0]) / (1920.0 * 1080.0);
    num = num < limit ? 0 : num;
    den = den < limit ? 0 : den;
    aim_num = aim_num < limit ? 0 : aim_num;
    double adm2 = den == 0.0 ? 1.0 : num / den;
    double aim = den == 0.0 ? 0.0 : aim_num / den;
    double adm3;
    /* float_adm.c: MAX(hm or blend, adm_min_val); the MAX macro turns the
     * NaN of 0 / 0 (adm2 = aim = 0) into adm_min_val */
    if (s->apply_hm)
        adm3 = 2 * adm2 * aim / (adm2 + aim);
    else
        adm3 = adm2 * s->dlm_weight + (1 - aim) * (1 - s->dlm_weight);
    adm3 = adm3 > s->min_val ? adm3 : s->min_val;
    err |= qgpu_score_set(f->ctx, s->ids[O_ADM2], frame, adm2);
    err |= qgpu_score_set(f->ctx, s->ids[O_AIM], frame, aim);
    err |= qgpu_score_set(f->ctx, s->ids[O_ADM3], frame, adm3);
    for (int sc = 0; sc < 4; sc++) {
        double v = (sc == 0 && s->skip_scale0) ? 0.0 : (double)nums[sc] / dens[sc];
        err |= qgpu_score_set(f->ctx, s->ids[O_S0 + sc], frame, v);
    }
    if (s->debug) {
        err |= qgpu_score_set(f->ctx, s->ids[O_ADM], frame, adm2);
        err |= qgpu_score_set(f->ctx, s->ids[O_NUM], frame, num);
        err |= qgpu_score_set(f->ctx, s->ids[O_DEN], frame, den);
        for (int sc = 0; sc < 4; sc++) {
            err |= qgpu_score_set(f->ctx, s->ids[O_NUM0 + 2 * sc], frame, nums[sc]);
            err |= qgpu_score_set(f->ctx, s->ids[O_DEN0 + 2 * sc], frame, dens[sc]);
        }
    }
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static void float_adm_uninit(QgpuFeature *f)
{
    FloatAdmState *s = f->priv;
    qgpu_kernel_release(&s->k_dwt0);
    qgpu_kernel_release(&s->k_dwt);
    qgpu_kernel_release(&s->k_rows);
    for (int i = 0; i < QGPU_MAX_LANES; i++) {
        struct FadmLane *b = &s->lane[i];
        qgpu_buffer_release(&b->lp[0]);
        qgpu_buffer_release(&b->lp[1]);
        qgpu_buffer_release(&b->bands);
    }
}

const QgpuFeatureClass qgpu_feature_float_adm = {
    .name = "float_adm",
    .outputs = float_adm_outputs,
    .options = float_adm_options,
    .priv_size = sizeof(FloatAdmState),
    .flags = QGPU_FEATURE_LANES,
    .lookahead = 0,
    .init = float_adm_init,
    .enqueue = float_adm_enqueue,
    .collect = float_adm_collect,
    .flush = NULL,
    .uninit = float_adm_uninit,
};
