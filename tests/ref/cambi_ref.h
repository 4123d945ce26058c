/* Deliberately independent reference for tests/test_cambi.c (see cambi_ref.c). */
/*
 * Plain-C reference of libvmaf's CAMBI (banding) feature, written for
 * clarity, not speed: every stage is a separate full-picture pass and the
 * window histograms are counted directly for every pixel.
 *
 * Behaviour follows libvmaf 3.2.0 (libvmaf/src/feature/cambi.c,
 * luminance_tools.c); see doc/metrics/cambi.md for the stages.
 */
#ifndef QGPU_TESTS_CAMBI_REF_H
#define QGPU_TESTS_CAMBI_REF_H

#include <stddef.h>

typedef struct CambiRefOptions {
    int window_size;        /* 65 */
    double topk;            /* 0.6 (the topk in effect) */
    double tvi_threshold;   /* 0.019 */
    int max_log_contrast;   /* 2 */
    int enc_width;          /* 0 = input */
    int enc_height;
    int enc_bitdepth;       /* 0 = input */
    int src_width;          /* 0 = input */
    int src_height;
    int eotf_pq;            /* 0 = bt1886, 1 = pq */
    double vis_lum_threshold; /* 0 */
    int high_res_speedup;   /* 0, 1080, 1440, 2160 */
    double max_val;         /* 1000 */
} CambiRefOptions;

void cambi_ref_default_options(CambiRefOptions *o);

/* Scores one picture's luma (8-bit samples when bitdepth == 8, else 16-bit
 * words; stride in bytes). is_src selects the src_width/src_height geometry
 * (full-reference mode's source side). The score is NOT clipped to max_val.
 * Returns 0, or -1 when libvmaf would refuse the geometry. */
int cambi_ref_score(const CambiRefOptions *o, const void *luma, ptrdiff_t stride,
                    int width, int height, int bitdepth, int is_src, double *score);

#endif
