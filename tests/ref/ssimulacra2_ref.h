/* Deliberately independent reference for tests/test_ssimulacra2.c (see ssimulacra2_ref.c). */
/*
 * Plain-C reference of the ssimulacra2 feature (the lusoris/vmaf fork's
 * extractor, itself a port of libjxl tools/ssimulacra2.cc), written for
 * clarity. Float stages are evaluated in the same order as the fork's
 * AVX-512 path (which produced the golden files); the per-pixel map values
 * and all sums are double.
 */
#ifndef QGPU_TESTS_SSIMULACRA2_REF_H
#define QGPU_TESTS_SSIMULACRA2_REF_H

#include <qgpu/qgpu.h>

/* Variants used to measure which arithmetic choices matter (see
 * doc/metrics/ssimulacra2.md). 0 = the fork's arithmetic. */
enum {
    SS2_REF_EDGE_DOUBLE_SUB = 1 << 0, /* |img - mu| in double (fork's scalar path) */
    SS2_REF_CBRT_LIBM = 1 << 1,       /* cbrtf() from libm instead of the fork's Newton cbrt */
    SS2_REF_EOTF_POW = 1 << 2,        /* exact sRGB EOTF instead of the fork's 1024-entry LUT */
    SS2_REF_MAPS_FLOAT = 1 << 3,      /* per-pixel map values in float, sums in float */
    SS2_REF_IIR_FMA = 1 << 4,         /* recursive Gaussian with a contracted multiply-add */
    SS2_REF_PIXEL_FLOAT = 1 << 5,     /* per-pixel map values in float, sums in double */
};

/* Chroma planes as stored: ceil(w/2) (x ceil(h/2)) for subsampled layouts.
 * Returns the score, or NAN for layouts it can't take (4:0:0).
 * norms (may be NULL) receives the 108 pooled norms in libjxl's order. */
double ssimulacra2_ref(const QgpuPicture *ref, const QgpuPicture *dist, int yuv_matrix,
                       unsigned variant, double norms[108]);

/* The final polynomial + power transform of libjxl's Msssim::Score(). */
double ssimulacra2_ref_pool(const double norms[108]);

#endif
