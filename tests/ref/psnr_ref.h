/* Deliberately independent reference for tests/test_psnr.c (see psnr_ref.c). */
/* Plain-C PSNR as libvmaf's integer extractor defines it (for tests). */
#ifndef QGPU_PSNR_REF_H
#define QGPU_PSNR_REF_H

#include <stdint.h>

#include "qgpu/qgpu.h"

/* SSE of plane p over libvmaf's plane size (floor chroma). */
uint64_t psnr_ref_sse(const QgpuPicture *ref, const QgpuPicture *dist, int plane, int *w, int *h);
/* psnr_y/cb/cr with the default options. */
double psnr_ref_plane(const QgpuPicture *ref, const QgpuPicture *dist, int plane);

#endif
