/* Deliberately independent reference for tests/test_ciede.c (see ciede_ref.c). */
/* Plain-C reference of libvmaf's ciede (CIEDE2000 on BT.709 Y'CbCr), written
 * for clarity. See doc/metrics/ciede.md. */
#ifndef QGPU_TEST_CIEDE_REF_H
#define QGPU_TEST_CIEDE_REF_H

#include "qgpu/qgpu.h"

/* Chroma sampling of subsampled layouts. */
enum {
    CIEDE_REF_NEAREST = 0,     /* correct nearest neighbour, all chroma samples */
    CIEDE_REF_LIBVMAF = 1,     /* libvmaf's reading (libvmaf_422_compat=true) */
};

/* Lab colour of one Y'CbCr sample (limited-range BT.709), as libvmaf. */
void ciede_ref_lab(double y, double u, double v, int bitdepth, float lab[3]);

/* CIEDE2000 colour difference with libvmaf's kL = 0.65, kC = 1, kH = 4. */
float ciede_ref_de2000(const float lab1[3], const float lab2[3]);

/* ciede2000 score of a picture pair: 45 - 20 log10(mean dE00). Chroma planes
 * as the public API stores them (ceil(w/2) wide for odd widths). */
double ciede_ref(const QgpuPicture *ref, const QgpuPicture *dist, int chroma_mode);

#endif
