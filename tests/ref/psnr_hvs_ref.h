/* Deliberately independent reference for tests/test_psnr_hvs.c (see psnr_hvs_ref.c). */
/* Plain-C reference of libvmaf's psnr_hvs (Xiph/Daala PSNR-HVS-M), written
 * for clarity. See doc/metrics/psnr_hvs.md. */
#ifndef QGPU_TEST_PSNR_HVS_REF_H
#define QGPU_TEST_PSNR_HVS_REF_H

#include <stddef.h>

#include "qgpu/qgpu.h"

/* How the per-plane sum of squared masked errors is accumulated. */
enum {
    PSNR_HVS_REF_SUM_DOUBLE = 0, /* exact enough: double */
    PSNR_HVS_REF_SUM_FLOAT_SEQ = 1, /* libvmaf's one float accumulator, in scan order */
};

/* The Daala 8x8 integer forward DCT (od_bin_fdct8x8): in[r*8+c] -> out. */
void psnr_hvs_ref_fdct8x8(const int in[64], int out[64]);

/* Mean masked error of one plane, normalised by (2^bitdepth - 1)^2, as
 * libvmaf's calc_psnrhvs returns it (a float). w, h: the plane size used
 * (libvmaf's floor size); samples 8-bit or 16-bit little-endian. */
double psnr_hvs_ref_plane(const void *ref, ptrdiff_t ref_stride, const void *dist,
                          ptrdiff_t dist_stride, int w, int h, int bitdepth, int plane,
                          int sum_mode);

/* Scores of a picture pair: out[0..3] = psnr_hvs_y, _cb, _cr, psnr_hvs (dB).
 * Chroma is read at libvmaf's floor(w/2) (x floor(h/2)) plane size. */
void psnr_hvs_ref(const QgpuPicture *ref, const QgpuPicture *dist, int sum_mode,
                  double out[4]);

#endif
