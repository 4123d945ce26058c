/* Deliberately independent reference for tests/test_float_vif.c (see float_vif_ref.c). */
/*
 * Plain-C reference of libvmaf 3.2.0's float VIF ("float_vif" extractor:
 * float_vif.c, vif.c, vif_tools.c), written for clarity, not speed. Every
 * operation is the single-precision one libvmaf performs, in its order, so
 * the GPU kernels (float_vif.cl) agree with it to float rounding of
 * log2 (a few ulps per pixel).
 */
#ifndef QGPU_TESTS_FLOAT_VIF_REF_H
#define QGPU_TESTS_FLOAT_VIF_REF_H

#include <stddef.h>

typedef struct FloatVifRefResult {
    float num[4];     /* per-scale numerator, a float sum as libvmaf's */
    float den[4];
    double score[4];  /* vif_scale0..3 = num / den (before the min_val clamps) */
} FloatVifRefResult;

/* Luma of one pair: samples uint8_t (bpc 8) or uint16_t (bpc 9..16), stride
 * in samples. egl = vif_enhn_gain_limit, sigma_nsq = vif_sigma_nsq.
 * w, h >= 16. Returns 0, or -1 when out of memory. */
int float_vif_ref_compute(const void *ref, const void *dis, int w, int h, ptrdiff_t stride,
                          int bpc, double egl, double sigma_nsq, FloatVifRefResult *out);

#endif /* QGPU_TESTS_FLOAT_VIF_REF_H */
