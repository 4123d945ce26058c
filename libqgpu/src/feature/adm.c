/*
 * adm: libvmaf's integer ADM extractor (libvmaf 3.2.0,
 * libvmaf/src/feature/integer_adm.c), bit-exact.
 *
 * The device computes libvmaf's fixed-point sums (db2 DWT over 4 scales,
 * decoupling into restored + additive parts, CSF weighting, 3x3 contrast
 * masking, cubes, per-row rounding) as int64 partial sums per work-group;
 * the host adds them and finishes in float/double exactly as libvmaf
 * does (powf(x, 1/3), num / den, ...).
 *
 * Launches per frame: adm_dwt0, adm_dwt123 x 3, adm_score = 5. The DWT
 * kernels also decouple each sample the score reads, once (the score
 * kernel's work-groups overlap by a row above and below and a column either
 * side, which they used to decouple again: 1.7-1.8x the samples).
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "adm_csf_tables.h"
#include "feature.h"

#define ADM_T 16  /* as in adm.cl */
/* Score kernel geometry, passed to the kernel build (-DADM_CW -DADM_RS):
 * cw columns x ADM_RS rows per work-group, cw a power of 2. 128 x 4 where the
 * device and the compiled kernel allow 512 work-items, else 64 x 4. */
#define ADM_RS 4
#define ADM_CW_WIDE 128
#define ADM_CW_NARROW 64
#define ADM_NP 24
#define ADM_MIN_SIZE 33 /* 4 dyadic scales with 3+ rows/columns of taps each */

enum {
    P_BW, P_BH, P_TOP, P_BOTTOM, P_LEFT, P_RIGHT, P_RF0, P_RF1, P_RF2,
    P_DEN_SH, P_DEN_CUB, P_DEN_SQ, P_CUB0, P_CUB1, P_CUB2, P_INNER, P_FIRST, P_ACTIVE,
    P_DTOP, P_DLEFT, P_DCOLS, P_DROWS
};

enum {
    OUT_ADM2, OUT_AIM, OUT_ADM3, OUT_SCALE0, OUT_SCALE1, OUT_SCALE2, OUT_SCALE3,
    OUT_ADM, OUT_NUM, OUT_DEN, OUT_NUM0, OUT_DEN0, OUT_NUM1, OUT_DEN1, OUT_NUM2, OUT_DEN2,
    OUT_NUM3, OUT_DEN3, OUT_COUNT
};

typedef struct AdmState {
    /* options */
    bool debug;
    bool skip_aim;
    bool skip_scale0;
    double csf_diag_scale;
    double csf_scale;
    double dlm_weight;
    double egl;
    double nvd;
    double noise_weight;
    double min_val;
    int rdh;
    int csf_mode;
    /* geometry and constants */
    int w, h;
    int cw;              /* score kernel columns per work-group */
    int bw[4], bh[4];
    int top[4], bottom[4], left[4], right[4];
    int groups[4], total_groups;
    int params[4 * ADM_NP];
    float rf[4][3];
    cl_ulong cos_m, egl_n;
    cl_int egl_s;
    /* OpenCL */
    cl_kernel k_dwt0, k_dwt123, k_score;
    cl_mem bands[QGPU_MAX_LANES][4]; /* per lane */
    cl_mem rst[QGPU_MAX_LANES][4];   /* per lane: r of h, v, d (the DWT kernels) */
    cl_mem params_buf;
    cl_mem recip_buf; /* libvmaf's div_lookup: 2^30 / d for d = 1..32768 */
    size_t offset;
    int ids[OUT_COUNT];
} AdmState;

static const QgpuOptionDef adm_options[] = {
    {"debug", NULL, QGPU_OPT_BOOL, offsetof(AdmState, debug), 0, NULL, 0, 1, 0,
     "debug mode: enable additional output"},
    {"adm_csf_scale", "scf", QGPU_OPT_DOUBLE, offsetof(AdmState, csf_scale), 1.0, NULL, 0.0, 50.0,
     QGPU_OPT_PARAM, "scale of the horizontal and vertical CSF terms (csf mode 1)"},
    {"adm_csf_diag_scale", "scfd", QGPU_OPT_DOUBLE, offsetof(AdmState, csf_diag_scale), 1.0,
     NULL, 0.0, 50.0, QGPU_OPT_PARAM, "scale of the diagonal CSF term (csf mode 1)"},
    {"adm_dlm_weight", "dlmw", QGPU_OPT_DOUBLE, offsetof(AdmState, dlm_weight), 0.5, NULL, 0.0,
     1.0, QGPU_OPT_PARAM, "weight of the DLM against AIM in adm3"},
    {"adm_enhn_gain_limit", "egl", QGPU_OPT_DOUBLE, offsetof(AdmState, egl), 100.0, NULL, 1.0,
     100.0, QGPU_OPT_PARAM, "enhancement gain limit, 1.0 disables the gain"},
    {"adm_norm_view_dist", "nvd", QGPU_OPT_DOUBLE, offsetof(AdmState, nvd), 3.0, NULL, 0.75,
     24.0, QGPU_OPT_PARAM, "viewing distance / display height"},
    {"adm_ref_display_height", "rdh", QGPU_OPT_INT, offsetof(AdmState, rdh), 1080, NULL, 1, 4320,
     QGPU_OPT_PARAM, "reference display height in pixels"},
    {"adm_csf_mode", "csf", QGPU_OPT_INT, offsetof(AdmState, csf_mode), 0, NULL, 0, 3,
     QGPU_OPT_PARAM, "CSF: 0 Watson97, 1 Barten, 2 Barten/Watson blend, 3 blend (MAE)"},
    {"adm_noise_weight", "nw", QGPU_OPT_DOUBLE, offsetof(AdmState, noise_weight), 0.03125, NULL,
     0.0, 1500.0, QGPU_OPT_PARAM, "noise weight"},
    {"adm_skip_aim", NULL, QGPU_OPT_BOOL, offsetof(AdmState, skip_aim), 0, NULL, 0, 1, 0,
     "skip the calculation of AIM"},
    {"adm_skip_scale0", "ssz", QGPU_OPT_BOOL, offsetof(AdmState, skip_scale0), 0, NULL, 0, 1,
     QGPU_OPT_PARAM, "skip the calculation of scale 0"},
    {"adm_min_val", "min", QGPU_OPT_DOUBLE, offsetof(AdmState, min_val), 0.0, NULL, 0.0, 1.0,
     QGPU_OPT_PARAM, "lower clip of adm3"},
    {NULL},
};

/* libvmaf's integer_adm.c names; from OUT_ADM on only with debug=true */
static const QgpuFeatureOutput adm_outputs[] = {
    [OUT_ADM2] = {"integer_adm2", "VMAF_integer_feature_adm2_score"},
    [OUT_AIM] = {"integer_aim", "VMAF_integer_feature_aim_score"},
    [OUT_ADM3] = {"integer_adm3", "VMAF_integer_feature_adm3_score"},
    [OUT_SCALE0] = {"integer_adm_scale0"},
    [OUT_SCALE1] = {"integer_adm_scale1"},
    [OUT_SCALE2] = {"integer_adm_scale2"},
    [OUT_SCALE3] = {"integer_adm_scale3"},
    [OUT_ADM] = {"integer_adm"},
    [OUT_NUM] = {"integer_adm_num"},
    [OUT_DEN] = {"integer_adm_den"},
    [OUT_NUM0] = {"integer_adm_num_scale0"},
    [OUT_DEN0] = {"integer_adm_den_scale0"},
    [OUT_NUM1] = {"integer_adm_num_scale1"},
    [OUT_DEN1] = {"integer_adm_den_scale1"},
    [OUT_NUM2] = {"integer_adm_num_scale2"},
    [OUT_DEN2] = {"integer_adm_den_scale2"},
    [OUT_NUM3] = {"integer_adm_num_scale3"},
    [OUT_DEN3] = {"integer_adm_den_scale3"},
    [OUT_COUNT] = {NULL},
};

static uint32_t ceil_log2_u(double v)
{
    return (uint32_t)ceil(log2(v));
}

/* Fixed-point constants and per-scale parameters of the kernels. */
static void setup_scales(AdmState *s)
{
    int cw = s->w, ch = s->h, first = 0;
    memset(s->params, 0, sizeof(s->params));
    for (int sc = 0; sc < 4; sc++) {
        int *P = s->params + sc * ADM_NP;
        int bw = (cw + 1) / 2, bh = (ch + 1) / 2;
        float f[2];
        s->bw[sc] = bw;
        s->bh[sc] = bh;
        /* ADM_BORDER_FACTOR 0.1, truncated as libvmaf's int conversion */
        s->left[sc] = (int)(bw * 0.1 - 0.5);
        s->top[sc] = (int)(bh * 0.1 - 0.5);
        s->right[sc] = bw - s->left[sc];
        s->bottom[sc] = bh - s->top[sc];
        adm_csf_factors(s->csf_mode, s->nvd, s->rdh, s->csf_scale, s->csf_diag_scale, sc, f);
        s->rf[sc][0] = f[0];
        s->rf[sc][1] = f[0];
        s->rf[sc][2] = f[1];
        P[P_BW] = bw;
        P[P_BH] = bh;
        P[P_TOP] = s->top[sc];
        P[P_BOTTOM] = s->bottom[sc];
        P[P_LEFT] = s->left[sc];
        P[P_RIGHT] = s->right[sc];
        int rows = s->bottom[sc] - s->top[sc], cols = s->right[sc] - s->left[sc];
        if (sc == 0) {
            uint16_t rf16[3];
            if (fabs(s->nvd * s->rdh - 3.0 * 1080) < 1.0e-8 && s->csf_mode == 0) {
                /* libvmaf hard-codes the Watson factors of 3H @ 1080 at scale 0 */
                rf16[0] = 36453;
                rf16[1] = 36453;
                rf16[2] = 49417;
            } else {
                rf16[0] = (uint16_t)(int64_t)(s->rf[0][0] * pow(2, 21));
                rf16[1] = (uint16_t)(int64_t)(s->rf[0][1] * pow(2, 21));
                rf16[2] = (uint16_t)(int64_t)(s->rf[0][2] * pow(2, 23));
            }
            P[P_RF0] = rf16[0];
            P[P_RF1] = rf16[1];
            P[P_RF2] = rf16[2];
            int sh = (int)ceil(log2((double)rows * cols) - 20);
            P[P_DEN_SH] = sh > 0 ? sh : 0;
            P[P_CUB0] = P[P_CUB1] = (int)(uint32_t)ceil(log2(bw) - 4);
            P[P_CUB2] = (int)(uint32_t)ceil(log2(bw) - 3);
        } else {
            static const int sq[3] = {31, 30, 31};
            for (int k = 0; k < 3; k++)
                P[P_RF0 + k] = (int)(uint32_t)(int64_t)(s->rf[sc][k] * pow(2, 32));
            P[P_DEN_SH] = (int)ceil_log2_u(rows);
            P[P_DEN_CUB] = (int)ceil_log2_u(cols);
            P[P_DEN_SQ] = sq[sc - 1];
            P[P_CUB0] = P[P_CUB1] = P[P_CUB2] = (int)ceil_log2_u(bw);
        }
        P[P_INNER] = (int)ceil_log2_u(bh);
        P[P_FIRST] = first;
        s->groups[sc] = (sc == 0 && s->skip_scale0) ? 0 : (rows + ADM_RS - 1) / ADM_RS;
        P[P_ACTIVE] = s->groups[sc] > 0;
        first += s->groups[sc];
        /* what adm_score reads, decoupled by the DWT kernels: the scored
         * rows and columns and one more on each side, mirrored inside the
         * band */
        {
            int dtop = s->top[sc] > 0 ? s->top[sc] - 1 : 0;
            int dbottom = s->bottom[sc] < bh ? s->bottom[sc] + 1 : bh;
            int dleft = s->left[sc] > 0 ? s->left[sc] - 1 : 0;
            int dright = s->right[sc] < bw ? s->right[sc] + 1 : bw;
            P[P_DTOP] = dtop;
            P[P_DLEFT] = dleft;
            P[P_DCOLS] = dright - dleft;
            P[P_DROWS] = dbottom - dtop;
        }
        cw = bw;
        ch = bh;
    }
    s->total_groups = first;
}

/* libvmaf's div_lookup (integer_adm.c): the decoupling's Q30 reciprocal
 * 2^30 / d of a divisor d = 1..32768 (|o| at scale 0, its 15 leading bits
 * above), read by the DWT kernels in place of an integer division for each
 * of a sample's three bands. Entry 0 is never read. */
static int upload_recip(QgpuContext *ctx, AdmState *s)
{
    enum { N = 32769 };
    cl_int *table = malloc(N * sizeof(*table));
    if (!table)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "adm: out of memory");
    table[0] = 0;
    for (int d = 1; d < N; d++)
        table[d] = (cl_int)(1073741824 / d);
    int err = qgpu_buffer_upload(ctx, N * sizeof(*table), table, &s->recip_buf,
                                 "adm: reciprocals");
    free(table);
    return err;
}

static int adm_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    AdmState *s = f->priv;
    QgpuContext *ctx = f->ctx;
    cl_program program;
    int err;

    s->w = fmt->width;
    s->h = fmt->height;
    if (s->w < ADM_MIN_SIZE || s->h < ADM_MIN_SIZE)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "adm: %dx%d is too small, width and height must be >= %d", s->w, s->h,
                          ADM_MIN_SIZE);
    /* libvmaf: "limited by the 16-bit data pipeline", extract() fails */
    if (s->nvd * s->rdh < 3.0 * 1080)
        return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                          "adm: adm_norm_view_dist * adm_ref_display_height = %g is below "
                          "3240 (1080 x 3H), which libvmaf's integer ADM cannot handle",
                          s->nvd * s->rdh);
    if (s->csf_mode >= 2) {
        /* The blended CSF exists only as tables for some (rdh, nvd); libvmaf
         * uses -EINVAL as the factor elsewhere and prints NaN scores. */
        float factor[2];
        adm_csf_factors(s->csf_mode, s->nvd, s->rdh, s->csf_scale, s->csf_diag_scale, 0,
                        factor);
        if (factor[0] == -22.0f)
            return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                              "adm: adm_csf_mode %d has CSF tables only for "
                              "adm_ref_display_height 480/720/1080/2160 with "
                              "adm_norm_view_dist 3 or 5, and 2160 with 1.5 (got %d and %g; "
                              "libvmaf would print NaN scores)",
                              s->csf_mode, s->rdh, s->nvd);
    }
    setup_scales(s);

    {
        /* cos(1 deg)^2 as libvmaf's float, as an integer mantissa * 2^-24 */
        const float c = cos(1.0 * M_PI / 180.0) * cos(1.0 * M_PI / 180.0);
        int e;
        float m = frexpf(c, &e);
        if (e != 0)
            return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "adm: unexpected cos(1deg)^2");
        s->cos_m = (cl_ulong)ldexpf(m, 24);
        /* egl = egl_n * 2^-egl_s exactly */
        int es = 0;
        double n = s->egl;
        while (n != floor(n) && es < 60) {
            n *= 2;
            es++;
        }
        s->egl_n = (cl_ulong)n;
        s->egl_s = es;
    }

    for (int i = 0; i < OUT_COUNT; i++) {
        s->ids[i] = -1;
        if (i >= OUT_ADM && !s->debug)
            continue;
        err = qgpu_output_register(f, i, &s->ids[i]);
        if (err)
            return err;
    }

    {
        size_t dev_max = 0;
        clGetDeviceInfo(qgpu_cl_device(ctx), CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(dev_max),
                        &dev_max, NULL);
        s->cw = dev_max >= ADM_CW_WIDE * ADM_RS ? ADM_CW_WIDE : ADM_CW_NARROW;
    }
    /* libvmaf's few double expressions in IEEE double where the device has
     * it (same bits as the integer emulation, fewer instructions);
     * QGPU_ADM_FP64=0/1 forces a path (tests, measurements) */
    int use_fp64 = qgpu_fp64_variant(ctx, "QGPU_ADM_FP64", 0, 1);
    for (;;) {
        char opts[96];
        size_t kmax = 0;
        snprintf(opts, sizeof(opts), "-DADM_CW=%d -DADM_RS=%d -DADM_FP64=%d", s->cw, ADM_RS,
                 use_fp64);
        err = qgpu_program_get(ctx, "adm", opts, &program);
        if (!err)
            err = qgpu_kernel_create(ctx, program, "adm_score", &s->k_score);
        if (err)
            return err;
        /* registers may cap the work-group below the device maximum */
        clGetKernelWorkGroupInfo(s->k_score, qgpu_cl_device(ctx), CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof(kmax), &kmax, NULL);
        if (kmax >= (size_t)s->cw * ADM_RS || s->cw == ADM_CW_NARROW)
            break;
        qgpu_kernel_release(&s->k_score);
        s->cw = ADM_CW_NARROW;
    }
    if (!err)
        err = qgpu_kernel_create(ctx, program, "adm_dwt0", &s->k_dwt0);
    if (!err)
        err = qgpu_kernel_create(ctx, program, "adm_dwt123", &s->k_dwt123);
    for (int k = 0; k < qgpu_lanes(ctx) * 4 && !err; k++) {
        int sc = k % 4;
        size_t sample = sc ? sizeof(cl_int) : sizeof(cl_short);
        size_t plane = (size_t)s->bw[sc] * s->bh[sc];
        err = qgpu_buffer_create(ctx, sample * 8 * plane, &s->bands[k / 4][sc]);
        if (!err)
            err = qgpu_buffer_create(ctx, sample * 3 * plane, &s->rst[k / 4][sc]);
    }
    if (!err)
        err = qgpu_buffer_upload(ctx, sizeof(s->params), s->params, &s->params_buf,
                                 "adm: parameters");
    if (!err)
        err = upload_recip(ctx, s);
    if (!err)
        err = qgpu_results_reserve(ctx, sizeof(cl_long) * 9 * (size_t)(s->total_groups + 1),
                                   &s->offset);
    return err;
}

static int adm_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    AdmState *s = f->priv;
    const QgpuVideoFormat *fmt = f->fmt;
    cl_mem *bands = s->bands[slot->lane];
    cl_mem *rst = s->rst[slot->lane];
    size_t local[3] = {ADM_T, ADM_T, 1};
    int err;

    {
        size_t global[3] = {qgpu_round_up(s->bw[0], ADM_T), qgpu_round_up(s->bh[0], ADM_T), 1};
        const QgpuArg args[] = {
            qgpu_arg_mem("ref", slot->ref),
            qgpu_arg_mem("dist", slot->dist),
            qgpu_arg_int("bps", fmt->bytes_per_sample),
            qgpu_arg_int("w", s->w),
            qgpu_arg_int("h", s->h),
            qgpu_arg_int("pitch", fmt->plane_w[0]),
            qgpu_arg_int("bpc", fmt->bitdepth),
            qgpu_arg_mem("bands", bands[0]),
            qgpu_arg_int("bw", s->bw[0]),
            qgpu_arg_int("bh", s->bh[0]),
            qgpu_arg_mem("params", s->params_buf),
            qgpu_arg_ulong("cos_m", s->cos_m),
            qgpu_arg_ulong("egl_n", s->egl_n),
            qgpu_arg_int("egl_s", s->egl_s),
            qgpu_arg_mem("recip_q30", s->recip_buf),
            qgpu_arg_mem("rst", rst[0]),
        };
        err = qgpu_launch(f->ctx, slot, s->k_dwt0, "adm: adm_dwt0", args, QGPU_ARRAY_SIZE(args),
                          3, global, local);
        if (err)
            return err;
    }
    for (int sc = 1; sc < 4; sc++) {
        size_t global[3] = {qgpu_round_up(s->bw[sc], ADM_T), qgpu_round_up(s->bh[sc], ADM_T),
                            1};
        /* scale 1 reads the int16 planes of scale 0; the unused pointer
         * argument gets a valid buffer too */
        const QgpuArg args[] = {
            qgpu_arg_mem("prev16", bands[0]),
            qgpu_arg_mem("prev", bands[sc == 1 ? 1 : sc - 1]),
            qgpu_arg_int("from16", sc == 1),
            qgpu_arg_int("w", s->bw[sc - 1]),
            qgpu_arg_int("h", s->bh[sc - 1]),
            qgpu_arg_int("scale", sc),
            qgpu_arg_mem("bands", bands[sc]),
            qgpu_arg_int("bw", s->bw[sc]),
            qgpu_arg_int("bh", s->bh[sc]),
            qgpu_arg_mem("params", s->params_buf),
            qgpu_arg_ulong("cos_m", s->cos_m),
            qgpu_arg_ulong("egl_n", s->egl_n),
            qgpu_arg_int("egl_s", s->egl_s),
            qgpu_arg_mem("recip_q30", s->recip_buf),
            qgpu_arg_mem("rst", rst[sc]),
        };
        err = qgpu_launch(f->ctx, slot, s->k_dwt123, "adm: adm_dwt123", args,
                          QGPU_ARRAY_SIZE(args), 3, global, local);
        if (err)
            return err;
    }
    if (s->total_groups == 0)
        return 0;
    {
        size_t lsz = (size_t)s->cw * ADM_RS, global = lsz * s->total_groups;
        const QgpuArg args[] = {
            qgpu_arg_mem("b0", bands[0]),
            qgpu_arg_mem("b1", bands[1]),
            qgpu_arg_mem("b2", bands[2]),
            qgpu_arg_mem("b3", bands[3]),
            qgpu_arg_mem("rst0", rst[0]),
            qgpu_arg_mem("rst1", rst[1]),
            qgpu_arg_mem("rst2", rst[2]),
            qgpu_arg_mem("rst3", rst[3]),
            qgpu_arg_mem("params", s->params_buf),
            qgpu_arg_int("skip_aim", s->skip_aim),
            qgpu_arg_mem("results", slot->results),
            qgpu_arg_uint("results_index", (cl_uint)(s->offset / sizeof(cl_long))),
        };
        return qgpu_launch(f->ctx, slot, s->k_score, "adm: adm_score", args,
                           QGPU_ARRAY_SIZE(args), 1, &global, &lsz);
    }
}

/* libvmaf's float finishing of one scale from the integer sums. */
static void finish_scale(const AdmState *s, int sc, const int64_t sum[9], float *num_out,
                         float *den_out, float *aim_out)
{
    const int *P = s->params + sc * ADM_NP;
    int rows = s->bottom[sc] - s->top[sc], cols = s->right[sc] - s->left[sc];
    double csf[3];
    for (int k = 0; k < 3; k++) {
        uint64_t acc = (uint64_t)sum[k];
        double shift;
        if (sc == 0) {
            shift = pow(2, 18 - P[P_DEN_SH]);
        } else {
            static const uint32_t conv[3] = {32, 27, 23};
            shift = pow(2, (uint32_t)(conv[sc - 1] - (uint32_t)P[P_DEN_SH] -
                                      (uint32_t)P[P_DEN_CUB]));
        }
        csf[k] = (double)(acc / shift) * pow(s->rf[sc][k], 3);
    }
    float add = powf(rows * cols * s->noise_weight, 1.0f / 3.0f);
    float d0 = powf(csf[0], 1.0f / 3.0f) + add;
    float d1 = powf(csf[1], 1.0f / 3.0f) + add;
    float d2 = powf(csf[2], 1.0f / 3.0f) + add;
    *den_out = d0 + d1 + d2;

    for (int pass = 0; pass < 2; pass++) {
        float fa[3];
        if (sc == 0) {
            static const uint32_t base[3] = {52, 52, 57};
            for (int k = 0; k < 3; k++)
                fa[k] = (float)(sum[3 + 3 * pass + k] /
                                pow(2, (uint32_t)(base[k] - (uint32_t)P[P_CUB0 + k] -
                                                  (uint32_t)P[P_INNER])));
        } else {
            static const uint32_t base[3] = {45, 39, 36};
            float fs = pow(2, (uint32_t)(base[sc - 1] - (uint32_t)P[P_CUB0] -
                                         (uint32_t)P[P_INNER]));
            for (int k = 0; k < 3; k++)
                fa[k] = (float)(sum[3 + 3 * pass + k] / fs);
        }
        double nw = pass ? 0.0 : s->noise_weight; /* AIM runs with noise weight 0 */
        float na = powf(rows * cols * nw, 1.0f / 3.0f);
        float n0 = powf(fa[0], 1.0f / 3.0f) + na;
        float n1 = powf(fa[1], 1.0f / 3.0f) + na;
        float n2 = powf(fa[2], 1.0f / 3.0f) + na;
        if (pass == 0)
            *num_out = n0 + n1 + n2;
        else
            *aim_out = s->skip_aim ? 0.0f : n0 + n1 + n2;
    }
}

static int adm_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    AdmState *s = f->priv;
    const int64_t *part = (const int64_t *)((const unsigned char *)slot->results_host + s->offset);
    double num = 0, den = 0, aim_num = 0, sc_num[4], sc_den[4];
    double adm2, aim;
    int err = 0;

    for (int sc = 0; sc < 4; sc++) {
        float ns = 0.0f, ds = 0.0f, as = 0.0f;
        if (sc == 0 && s->skip_scale0) {
            ds = 1e-10f; /* libvmaf: avoid a division by zero */
        } else {
            int64_t sum[9] = {0};
            for (int g = 0; g < s->groups[sc]; g++)
                for (int q = 0; q < 9; q++)
                    sum[q] += part[(size_t)(s->params[sc * ADM_NP + P_FIRST] + g) * 9 + q];
            finish_scale(s, sc, sum, &ns, &ds, &as);
        }
        num += ns;
        den += ds;
        aim_num += as;
        sc_num[sc] = ns;
        sc_den[sc] = ds;
    }
    double limit = 1e-10 * (s->w * s->h) / (1920.0 * 1080.0);
    num = num < limit ? 0 : num;
    den = den < limit ? 0 : den;
    if (den == 0.0) {
        adm2 = 1.0;
        aim = 0.0; /* libvmaf leaves it unset; its CLI printed 0 (flat frames) */
    } else {
        aim = aim_num / den;
        adm2 = num / den;
    }
    double adm3 = adm2 * s->dlm_weight + (1 - aim) * (1 - s->dlm_weight);
    adm3 = adm3 > s->min_val ? adm3 : s->min_val;

    double v[OUT_COUNT];
    v[OUT_ADM2] = adm2;
    v[OUT_AIM] = aim;
    v[OUT_ADM3] = adm3;
    for (int sc = 0; sc < 4; sc++) {
        v[OUT_SCALE0 + sc] = sc_num[sc] / sc_den[sc];
        v[OUT_NUM0 + 2 * sc] = sc_num[sc];
        v[OUT_DEN0 + 2 * sc] = sc_den[sc];
    }
    v[OUT_ADM] = adm2;
    v[OUT_NUM] = num;
    v[OUT_DEN] = den;
    for (int i = 0; i < OUT_COUNT; i++)
        if (s->ids[i] >= 0)
            err |= qgpu_score_set(f->ctx, s->ids[i], slot->frame_index, v[i]);
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static void adm_uninit(QgpuFeature *f)
{
    AdmState *s = f->priv;
    qgpu_kernel_release(&s->k_dwt0);
    qgpu_kernel_release(&s->k_dwt123);
    qgpu_kernel_release(&s->k_score);
    for (int k = 0; k < QGPU_MAX_LANES * 4; k++) {
        qgpu_buffer_release(&s->bands[k / 4][k % 4]);
        qgpu_buffer_release(&s->rst[k / 4][k % 4]);
    }
    qgpu_buffer_release(&s->params_buf);
    qgpu_buffer_release(&s->recip_buf);
}

const QgpuFeatureClass qgpu_feature_adm = {
    .name = "adm",
    .outputs = adm_outputs,
    .options = adm_options,
    .priv_size = sizeof(AdmState),
    .flags = QGPU_FEATURE_LANES,
    .lookahead = 0,
    .dynamic_flags = NULL,
    .init = adm_init,
    .enqueue = adm_enqueue,
    .collect = adm_collect,
    .flush = NULL,
    .uninit = adm_uninit,
};
