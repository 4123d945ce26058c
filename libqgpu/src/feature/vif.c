/*
 * vif: libvmaf's integer VIF extractor (libvmaf 3.2.0,
 * libvmaf/src/feature/integer_vif.c), bit-exact.
 *
 * Four launches per frame, one per scale (vif.cl): each computes its
 * scale's statistic sums per work-group and writes the next scale's
 * low-passed, decimated ref/dis into feature-owned buffers. The host adds the
 * int64 partial sums and finishes as libvmaf does:
 *   num = num_log / 2048 + (den_non_log - num_non_log / 16384 / 65025)
 *   den = den_log / 2048 + den_non_log          (both stored as float)
 *   integer_vif_scaleN = num / den               (float division)
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "feature.h"

#define VIF_TW 64 /* tile of vif.cl */
#define VIF_TH 16
#define VIF_MIN_SIZE 16 /* scale 3 needs >= 2 samples for its 3-tap mirror */

/* Outputs (libvmaf's names); from OUT_VIF on only with debug=true. */
enum {
    OUT_SCALE0, OUT_SCALE1, OUT_SCALE2, OUT_SCALE3,
    OUT_VIF, OUT_NUM, OUT_DEN,
    OUT_NUM0, OUT_DEN0, OUT_NUM1, OUT_DEN1, OUT_NUM2, OUT_DEN2, OUT_NUM3, OUT_DEN3,
    OUT_COUNT
};

static const QgpuFeatureOutput vif_outputs[] = {
    [OUT_SCALE0] = {"integer_vif_scale0", "VMAF_integer_feature_vif_scale0_score"},
    [OUT_SCALE1] = {"integer_vif_scale1", "VMAF_integer_feature_vif_scale1_score"},
    [OUT_SCALE2] = {"integer_vif_scale2", "VMAF_integer_feature_vif_scale2_score"},
    [OUT_SCALE3] = {"integer_vif_scale3", "VMAF_integer_feature_vif_scale3_score"},
    [OUT_VIF] = {"integer_vif"},
    [OUT_NUM] = {"integer_vif_num"},
    [OUT_DEN] = {"integer_vif_den"},
    [OUT_NUM0] = {"integer_vif_num_scale0"},
    [OUT_DEN0] = {"integer_vif_den_scale0"},
    [OUT_NUM1] = {"integer_vif_num_scale1"},
    [OUT_DEN1] = {"integer_vif_den_scale1"},
    [OUT_NUM2] = {"integer_vif_num_scale2"},
    [OUT_DEN2] = {"integer_vif_den_scale2"},
    [OUT_NUM3] = {"integer_vif_num_scale3"},
    [OUT_DEN3] = {"integer_vif_den_scale3"},
    [OUT_COUNT] = {NULL},
};

typedef struct VifState {
    /* options */
    double egl;
    bool skip_scale0;
    bool debug;
    /* state */
    cl_kernel kernel[4];
    cl_mem lut;
    cl_mem img[QGPU_MAX_LANES][4][2]; /* per lane, scales 1..3: ref, dis */
    int w[4], h[4];
    int groups[4];
    int wg;
    size_t offset;
    cl_ulong egl_m, eps_m;
    cl_int egl_e, eps_e;
    int ids[OUT_COUNT];       /* integer_vif, _num, _den */
} VifState;

static const QgpuOptionDef vif_options[] = {
    {"debug", NULL, QGPU_OPT_BOOL, offsetof(VifState, debug), 0, NULL, 0, 1, 0,
     "also output integer_vif, integer_vif_num/den and per-scale num/den"},
    {"vif_enhn_gain_limit", "egl", QGPU_OPT_DOUBLE, offsetof(VifState, egl), 100.0, NULL, 1.0,
     100.0, QGPU_OPT_PARAM, "enhancement gain limit, 1.0 disables enhancement"},
    {"vif_skip_scale0", "ssclz", QGPU_OPT_BOOL, offsetof(VifState, skip_scale0), 0, NULL, 0, 1,
     QGPU_OPT_PARAM, "skip scale 0 (integer_vif_scale0 = 0)"},
    {NULL},
};

/* A double as the kernels' integer form: value = m * 2^e, m in [2^52, 2^53). */
static void split_double(double v, cl_ulong *m, cl_int *e)
{
    int x;
    double f = frexp(v, &x);
    *m = (cl_ulong)ldexp(f, 53);
    *e = x - 53;
}

static int register_names(QgpuFeature *f, VifState *s)
{
    for (int i = 0; i < OUT_COUNT; i++)
        s->ids[i] = -1;
    return qgpu_outputs_register(f, 0, s->debug ? OUT_COUNT : OUT_VIF, s->ids);
}

/* Builds the kernels with the largest work-group size the device takes. */
static int build_kernels(QgpuFeature *f, VifState *s, int in8)
{
    QgpuContext *ctx = f->ctx;
    cl_device_id dev = qgpu_cl_device(ctx);
    cl_device_type type = CL_DEVICE_TYPE_GPU;
    clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
    /* see vif.cl: 64-bit multiply-adds on GPUs, 32-bit halves on CPUs */
    int wide = !(type & CL_DEVICE_TYPE_CPU);
    /* the gain in IEEE double where the device has it (same bits, far fewer
     * instructions than the integer emulation); QGPU_VIF_FP64=0/1 forces
     * one path (tests, measurements) */
    int use_fp64 = qgpu_fp64_variant(ctx, "QGPU_VIF_FP64", 0, 1);
    /* scale 1's vertical 48-bit sums as fp64 fmas on subnormal doubles
     * (vif.cl) on GPUs whose doubles keep denormals; QGPU_VIF_S1FP64=0/1
     * forces it off / on (on, a CPU device takes the 64-bit multiply-adds
     * too: the tests check the form there) */
    int s1fp64 = qgpu_fp64_variant(ctx, "QGPU_VIF_S1FP64", CL_FP_DENORM, wide);
    if (s1fp64)
        wide = 1;
    for (int wg = 256; wg >= 64; wg /= 2) {
        char opts[160], name[16];
        cl_program program;
        size_t max_wg = 0;
        int err, fits = 1;
        snprintf(opts, sizeof(opts),
                 "-DVIF_IN8=%d -DVIF_WG=%d -DVIF_WIDE=%d -DVIF_FP64=%d -DVIF_S1_VFP64=%d", in8,
                 wg, wide, use_fp64, s1fp64);
        err = qgpu_program_get(ctx, "vif", opts, &program);
        if (err)
            return err;
        for (int i = 0; i < 4; i++) {
            qgpu_kernel_release(&s->kernel[i]);
            snprintf(name, sizeof(name), "vif_s%d", i);
            err = qgpu_kernel_create(ctx, program, name, &s->kernel[i]);
            if (err)
                return err;
            if (clGetKernelWorkGroupInfo(s->kernel[i], dev, CL_KERNEL_WORK_GROUP_SIZE,
                                         sizeof(max_wg), &max_wg, NULL) != CL_SUCCESS ||
                max_wg < (size_t)wg)
                fits = 0;
        }
        if (fits) {
            cl_ulong need = 0, have = 0;
            clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(have), &have, NULL);
            clGetKernelWorkGroupInfo(s->kernel[0], dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(need),
                                     &need, NULL);
            if (have && need > have)
                return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                                  "vif: the kernels need %lu bytes of local memory, the device "
                                  "has %lu",
                                  (unsigned long)need, (unsigned long)have);
            s->wg = wg;
            return 0;
        }
    }
    return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                      "vif: the device runs the VIF kernels with fewer than 64 work-items "
                      "per work-group");
}

static int vif_init(QgpuFeature *f, const QgpuVideoFormat *fmt)
{
    VifState *s = f->priv;
    QgpuContext *ctx = f->ctx;
    cl_uint units = 1;
    size_t total_groups = 0;
    int err;

    if (fmt->width < VIF_MIN_SIZE || fmt->height < VIF_MIN_SIZE)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "vif: picture %dx%d is too small (needs at least %dx%d: four "
                          "dyadic scales with mirrored filter borders)",
                          fmt->width, fmt->height, VIF_MIN_SIZE, VIF_MIN_SIZE);
    err = register_names(f, s);
    if (err)
        return err;
    err = build_kernels(f, s, fmt->bytes_per_sample == 1);
    if (err)
        return err;

    clGetDeviceInfo(qgpu_cl_device(ctx), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units,
                    NULL);
    /* Up to 16 work-groups per compute unit, tiles shared out evenly: the
     * hardware balances the groups, and the partial sums read back stay
     * small (at most 16 * units * 32 bytes per scale). */
    size_t cap = (size_t)(units ? units : 1) * 16;
    for (int i = 0; i < 4; i++) {
        s->w[i] = i ? s->w[i - 1] / 2 : fmt->width;
        s->h[i] = i ? s->h[i - 1] / 2 : fmt->height;
        size_t tiles =
            (size_t)((s->w[i] + VIF_TW - 1) / VIF_TW) * ((s->h[i] + VIF_TH - 1) / VIF_TH);
        size_t per_group = (tiles + cap - 1) / cap;
        s->groups[i] = (int)((tiles + per_group - 1) / per_group);
        total_groups += s->groups[i];
        for (int k = 0; i && k < qgpu_lanes(ctx) * 2; k++) {
            err = qgpu_buffer_create(ctx, (size_t)s->w[i] * s->h[i] * sizeof(uint16_t),
                                     &s->img[k / 2][i][k % 2]);
            if (err)
                return err;
        }
    }
    err = qgpu_results_reserve(ctx, total_groups * 4 * sizeof(int64_t), &s->offset);
    if (err)
        return err;

    /* libvmaf's table: round(log2f(i) * 2048) for i in 32768..65535 */
    uint16_t table[32768];
    for (int i = 0; i < 32768; i++)
        table[i] = (uint16_t)round(log2f((float)(i + 32768)) * 2048);
    err = qgpu_buffer_upload(ctx, sizeof(table), table, &s->lut, "vif: log2 table");
    if (err)
        return err;

    split_double(s->egl, &s->egl_m, &s->egl_e);
    split_double(65536 * 1.0e-10, &s->eps_m, &s->eps_e); /* integer_vif.c's eps */
    return 0;
}

static int vif_enqueue(QgpuFeature *f, QgpuSlot *slot)
{
    /* labels must outlive the frame: the profiler keeps the pointer */
    static const char *const what[4] = {"vif: scale 0", "vif: scale 1", "vif: scale 2",
                                        "vif: scale 3"};
    VifState *s = f->priv;
    cl_mem(*img)[2] = s->img[slot->lane];
    cl_int index = (cl_int)(s->offset / sizeof(int64_t));
    size_t local = (size_t)s->wg;

    for (int i = 0; i < 4; i++) {
        size_t global = local * s->groups[i];
        const QgpuArg args[] = {
            qgpu_arg_mem("ref", i ? img[i][0] : slot->ref),
            qgpu_arg_mem("dis", i ? img[i][1] : slot->dist),
            qgpu_arg_int("w", s->w[i]),
            qgpu_arg_int("h", s->h[i]),
            qgpu_arg_int("bpc", f->fmt->bitdepth),
            qgpu_arg_mem("next_r", i < 3 ? img[i + 1][0] : NULL),
            qgpu_arg_mem("next_d", i < 3 ? img[i + 1][1] : NULL),
            qgpu_arg_int("do_stat", !(i == 0 && s->skip_scale0)),
            qgpu_arg_mem("results", slot->results),
            qgpu_arg_int("partial_index", index),
            qgpu_arg_mem("lut", s->lut),
            qgpu_arg_ulong("egl_m", s->egl_m),
            qgpu_arg_int("egl_e", s->egl_e),
            qgpu_arg_ulong("eps_m", s->eps_m),
            qgpu_arg_int("eps_e", s->eps_e),
        };
        int err = qgpu_launch(f->ctx, slot, s->kernel[i], what[i], args, QGPU_ARRAY_SIZE(args),
                              1, &global, &local);
        if (err)
            return err;
        index += s->groups[i] * 4;
    }
    return 0;
}

static int vif_collect(QgpuFeature *f, const QgpuSlot *slot)
{
    VifState *s = f->priv;
    const int64_t *partial =
        (const int64_t *)((const unsigned char *)slot->results_host + s->offset);
    unsigned frame = slot->frame_index;
    float num[4] = {0}, den[4] = {0};
    int err = 0;

    for (int i = 0; i < 4; i++) {
        int64_t sum[4] = {0, 0, 0, 0}; /* num_log, den_log, num_non_log, den_non_log */
        for (int g = 0; g < s->groups[i]; g++)
            for (int q = 0; q < 4; q++)
                sum[q] += partial[g * 4 + q];
        partial += s->groups[i] * 4;
        if (i == 0 && s->skip_scale0)
            continue;
        num[i] = (float)(sum[0] / 2048.0 + (sum[3] - (sum[2] / 16384.0) / 65025.0));
        den[i] = (float)(sum[1] / 2048.0 + sum[3]);
    }
    for (int i = 0; i < 4; i++) {
        double score = (i == 0 && s->skip_scale0) ? 0.0 : (double)(num[i] / den[i]);
        err |= qgpu_score_set(f->ctx, s->ids[OUT_SCALE0 + i], frame, score);
    }
    if (s->debug) {
        double tnum = 0.0, tden = 0.0;
        for (int i = s->skip_scale0 ? 1 : 0; i < 4; i++) {
            tnum += num[i];
            tden += den[i];
        }
        err |= qgpu_score_set(f->ctx, s->ids[OUT_VIF], frame, tden == 0.0 ? 1.0 : tnum / tden);
        err |= qgpu_score_set(f->ctx, s->ids[OUT_NUM], frame, tnum);
        err |= qgpu_score_set(f->ctx, s->ids[OUT_DEN], frame, tden);
        for (int i = 0; i < 4; i++) {
            bool skipped = i == 0 && s->skip_scale0; /* libvmaf reports (0, -1) */
            err |= qgpu_score_set(f->ctx, s->ids[OUT_NUM0 + 2 * i], frame, skipped ? 0.0 : num[i]);
            err |= qgpu_score_set(f->ctx, s->ids[OUT_DEN0 + 2 * i], frame, skipped ? -1.0 : den[i]);
        }
    }
    return err ? QGPU_ERR_INVALID_ARG : 0;
}

static void vif_uninit(QgpuFeature *f)
{
    VifState *s = f->priv;
    for (int i = 0; i < 4; i++)
        qgpu_kernel_release(&s->kernel[i]);
    for (int k = 0; k < QGPU_MAX_LANES * 4 * 2; k++)
        qgpu_buffer_release(&s->img[k / 8][k / 2 % 4][k % 2]);
    qgpu_buffer_release(&s->lut);
}

const QgpuFeatureClass qgpu_feature_vif = {
    .name = "vif",
    .outputs = vif_outputs,
    .options = vif_options,
    .priv_size = sizeof(VifState),
    .flags = QGPU_FEATURE_LANES,
    .lookahead = 0,
    .init = vif_init,
    .enqueue = vif_enqueue,
    .collect = vif_collect,
    .flush = NULL,
    .uninit = vif_uninit,
};
