/* Deliberately independent reference for tests/test_float_adm.c (see float_adm_ref.c). */
/*
 * Plain-C reference of libvmaf 3.2.0's float ADM ("float_adm" extractor:
 * float_adm.c, adm.c, adm_tools.c), written for clarity, not speed. Every
 * operation is the single-precision one libvmaf performs, in its order
 * (the per-row float sums included), so the device kernels
 * (float_adm.cl) agree with it to a few float roundings.
 */
#ifndef QGPU_TESTS_FLOAT_ADM_REF_H
#define QGPU_TESTS_FLOAT_ADM_REF_H

#include <stddef.h>

typedef struct FloatAdmRefOpts {
    double egl;        /* adm_enhn_gain_limit (100) */
    double nvd;        /* adm_norm_view_dist (3.0) */
    int rdh;           /* adm_ref_display_height (1080) */
    double nw;         /* adm_noise_weight (0.03125) */
    double dlmw;       /* adm_dlm_weight (0.5) */
    double min_val;    /* adm_min_val (0) */
    double p_norm;     /* adm_p_norm (3.0) */
    int bypass_cm;     /* adm_bypass_cm (0) */
    int apply_hm;      /* adm_adm3_apply_hm (0) */
    int skip_scale0;   /* adm_skip_scale0 (0) */
    int skip_aim_scale; /* adm_skip_aim_scale (-1) */
    double f1s[4], f2s[4]; /* adm_f1sN / adm_f2sN (-1 = Watson factor) */
} FloatAdmRefOpts;

typedef struct FloatAdmRefResult {
    float num[4], den[4], aim_num[4]; /* per-scale float values */
    double adm2, aim, adm3, scale[4];
    double num_total, den_total;
} FloatAdmRefResult;

void float_adm_ref_defaults(FloatAdmRefOpts *o);

/* Luma of one pair: samples uint8_t (bpc 8) or uint16_t (bpc 9..16), stride
 * in samples. Returns 0, or -1 when out of memory. */
int float_adm_ref_compute(const void *ref, const void *dis, int w, int h, ptrdiff_t stride,
                          int bpc, const FloatAdmRefOpts *o, FloatAdmRefResult *out);

#endif /* QGPU_TESTS_FLOAT_ADM_REF_H */
