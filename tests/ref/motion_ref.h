/* Deliberately independent reference for tests/test_motion.c (see motion_ref.c). */
/*
 * Plain-C reference of libvmaf's integer motion ("motion" extractor, libvmaf
 * 3.2.0 integer_motion.c, the pipelined variant), written for clarity. The
 * GPU kernel (motion.cl) must reproduce the SAD bit for bit; the
 * per-frame post-processing (motion2/motion3) is shared by the host code.
 */
#ifndef QGPU_TESTS_MOTION_REF_H
#define QGPU_TESTS_MOTION_REF_H

#include <stddef.h>
#include <stdint.h>

/* Sum of |blur(prev - cur)| over the picture (5-tap filter, vertical pass
 * first). Samples uint8_t (bpc 8) or uint16_t; stride in samples. */
uint64_t motion_ref_sad(const void *prev, const void *cur, int w, int h, ptrdiff_t stride,
                        int bpc);

/* libvmaf before its 2026 motion rewrite (<= v3.0.0, git 2b2cf9c): each
 * frame blurred on its own (non-negative sums, bottom/right borders mirrored
 * repeating the edge), SAD = sum |blur(prev) - blur(cur)|. */
uint64_t motion_ref_sad_legacy(const void *prev, const void *cur, int w, int h,
                               ptrdiff_t stride, int bpc);

typedef struct MotionRefOptions {
    int force_zero;
    double blend_factor;  /* motion_blend_factor */
    double blend_offset;  /* motion_blend_offset */
    double fps_weight;    /* motion_fps_weight */
    double max_val;       /* motion_max_val */
    int five_frame_window;
    int moving_average;
    int legacy;           /* motion_legacy: motion_ref_sad_legacy, float score */
} MotionRefOptions;

void motion_ref_default_options(MotionRefOptions *o);

/* Scores of a whole clip of n reference luma frames (frames[i] points to
 * frame i). Writes n values to sad (VMAF_integer_feature_motion_sad_score),
 * motion2 and motion3. */
void motion_ref_clip(const void *const *frames, unsigned n, int w, int h, ptrdiff_t stride,
                     int bpc, const MotionRefOptions *o, double *sad, double *motion2,
                     double *motion3);

#endif /* QGPU_TESTS_MOTION_REF_H */
