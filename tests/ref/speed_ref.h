/* Deliberately independent reference for tests/test_speed.c (see speed_ref.c). */
/* Plain-C reference of speed_chroma (libvmaf speed.c), whole-plane. */
#ifndef SPEED_REF_H
#define SPEED_REF_H

#include <stddef.h>

#include "qgpu/qgpu.h"
#include "speed_linalg.h"

typedef struct SpeedRefOptions {
    double kernelscale, prescale, sigma_nn, nn_floor, max_val;
    int bilinear; /* prescale method: 0 nearest, 1 bilinear */
    int wvm;
} SpeedRefOptions;

void speed_ref_defaults(SpeedRefOptions *o);
/* out[0..2] = speed_chroma_u, _v, _uv; returns -1 when the chroma planes
 * are too small. */
int speed_ref(const QgpuPicture *ref, const QgpuPicture *dis, const SpeedRefOptions *o,
              double out[3]);

/* libvmaf's est_params() in its plain form (one covariance sum after the
 * other, full-matrix Householder QR): what speed_estimate() must equal bit
 * for bit. */
void speed_ref_estimate(const SpeedGeometry *g, const float *data, size_t stride, float sigma_nn,
                        SpeedWork *w, SpeedEstimate *out);

#endif
