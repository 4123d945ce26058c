/*
 * Plain-C reference of libvmaf's integer VIF ("vif" extractor, libvmaf 3.2.0
 * integer_vif.c / integer_vif.h), written for clarity, not speed. The GPU
 * kernels (vif.cl) must reproduce it bit for bit.
 */
#ifndef QGPU_TESTS_VIF_REF_H
#define QGPU_TESTS_VIF_REF_H

#include <stddef.h>
#include <stdint.h>

/* The four integer sums one scale accumulates, as libvmaf names them. */
typedef struct VifRefSums {
    int64_t num_log;      /* sum of log2 numerator terms, x 2048 */
    int64_t den_log;      /* sum of log2(1 + sigma1^2/2) terms, x 2048 */
    int64_t num_non_log;  /* sum of sigma2^2 where sigma1^2 < 2 */
    int64_t den_non_log;  /* number of pixels where sigma1^2 < 2 */
} VifRefSums;

typedef struct VifRefResult {
    VifRefSums sums[4];
    float num[4];      /* per-scale numerator, single precision as libvmaf */
    float den[4];
    double score[4];   /* integer_vif_scale0..3 */
} VifRefResult;

/* libvmaf's log2 table: entry i = round(log2f(i) * 2048), i in 32767..65535
 * (entries below 32767 are 0). table must hold 65536 entries. */
void vif_ref_log2_table(uint16_t *table);

/* Computes VIF of one luma pair. Samples are uint8_t (bpc 8) or uint16_t
 * (bpc 9..16); stride in samples. egl = vif_enhn_gain_limit. With
 * skip_scale0 scale 0 is not computed (its sums stay 0, score 0).
 * w, h >= 16. */
void vif_ref_compute(const void *ref, const void *dis, int w, int h, ptrdiff_t stride,
                     int bpc, double egl, int skip_scale0, VifRefResult *out);

/* Per-pixel statistic of one (mu1, mu2, xx, yy, xy) tuple, added to sums;
 * exposed so that tests can probe corner cases directly. */
void vif_ref_pixel(uint32_t mu1, uint32_t mu2, uint32_t xx, uint32_t yy, uint32_t xy,
                   double egl, const uint16_t *log2_table, VifRefSums *sums);

/* num/den of a scale from its sums (libvmaf's float arithmetic). */
void vif_ref_finish(const VifRefSums *s, float *num, float *den);

#endif /* QGPU_TESTS_VIF_REF_H */
