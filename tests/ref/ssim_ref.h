/* Deliberately independent reference for tests/test_ssim.c (see ssim_ref.c). */
/* Plain-C reference of libvmaf's float_ssim and float_ms_ssim (the IQA code
 * libvmaf 3.2.0 carries in libvmaf/src/feature/iqa/), written for clarity.
 * It follows libvmaf's evaluation order and precision (float planes, float
 * products summed in double, float means) so that it lands on libvmaf's
 * numbers; see doc/metrics/ssim.md. */
#ifndef QGPU_TEST_SSIM_REF_H
#define QGPU_TEST_SSIM_REF_H

#include <stddef.h>

/* Luma samples (8-bit, or 16-bit words for bitdepth > 8) to floats in
 * 8-bit units (value / 2^(bitdepth-8)), w*h floats, row pitch w. */
void ssim_ref_luma_to_float(const void *data, ptrdiff_t stride, int w, int h, int bitdepth,
                            float *out);

/* float_ssim's decimation factor: `scale` when > 0, else libvmaf's auto
 * rule max(1, round(min(w, h) / 256)). */
int ssim_ref_scale(int w, int h, int scale);

/* Size after the box decimation by `scale` (libvmaf's w/scale + (w&1)). */
void ssim_ref_decimated_size(int w, int h, int scale, int *sw, int *sh);

/* float_ssim of two float pictures (w x h, pitch w): out[0..3] = ssim, l,
 * c, s (each rounded to float, as libvmaf returns them). Returns 0, or -1
 * when the decimated picture is smaller than 11x11 or memory runs out. */
int ssim_ref_float_ssim(const float *ref, const float *dist, int w, int h, int scale,
                        double out[4]);

/* float_ms_ssim: *score, and the per-scale means l[5], c[5], s[5].
 * Returns -1 when w or h < 176 (a scale below the 11x11 window). */
int ssim_ref_float_ms_ssim(const float *ref, const float *dist, int w, int h, double *score,
                           double l[5], double c[5], double s[5]);

/* enable_db: -10 log10(1 - score), at most max_db; max_db is INFINITY
 * without clip_db, else ceil(10 log10(peak^2 / (0.5 / (w h)))). */
double ssim_ref_max_db(int bitdepth, int w, int h, int clip_db);
double ssim_ref_to_db(double score, double max_db);

#endif
