/* Deliberately independent reference for tests/test_adm.c (see adm_ref.c). */
/*
 * Plain C reference of libvmaf's integer ADM (libvmaf 3.2.0,
 * libvmaf/src/feature/integer_adm.c), written for clarity: whole-plane
 * arrays, one step at a time. Used by tests/test_adm.c to check the OpenCL
 * kernels bit for bit.
 */
#ifndef QGPU_TEST_ADM_REF_H
#define QGPU_TEST_ADM_REF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct AdmRefOptions {
    double egl;            /* adm_enhn_gain_limit, 100 */
    double nvd;            /* adm_norm_view_dist, 3.0 */
    int rdh;               /* adm_ref_display_height, 1080 */
    int csf_mode;          /* adm_csf_mode, 0 */
    double csf_scale;      /* 1.0 */
    double csf_diag_scale; /* 1.0 */
    double noise_weight;   /* 0.03125 */
    double dlm_weight;     /* 0.5 */
    double min_val;        /* 0.0 */
    bool skip_aim;
    bool skip_scale0;
} AdmRefOptions;

typedef struct AdmRefResult {
    double adm2, aim, adm3;
    double scale[4];
    double num, den;
    double num_scale[4], den_scale[4];
} AdmRefResult;

void adm_ref_default_options(AdmRefOptions *o);

/* Luma planes: 8-bit (bpc 8, uint8_t) or 16-bit words (bpc 9..16);
 * stride in samples. Returns 0, or -1 on allocation failure. */
int adm_ref_compute(const void *ref, const void *dis, ptrdiff_t stride, int w, int h, int bpc,
                    const AdmRefOptions *o, AdmRefResult *res);

#endif
