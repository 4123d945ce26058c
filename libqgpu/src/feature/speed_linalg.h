/*
 * SpEED (libvmaf speed.c) host-side arithmetic: filter taps, geometry, and
 * the per-image estimation on the band-pass image (25x25 covariance of the
 * 5x5-block positions, its eigenvalues, K^-1 y per block, entropies), plus
 * the score of a ref/dis pair. All of it in libvmaf's float arithmetic and
 * operation order (the covariance sums in double), so that the result is
 * the same float libvmaf computes. Shared by speed.c and the test
 * reference.
 */
#ifndef QGPU_SPEED_LINALG_H
#define QGPU_SPEED_LINALG_H

#include <stddef.h>

#define SPEED_BLOCK 5
#define SPEED_N 25           /* elements in a block */
#define SPEED_NUM_SCALES 4
#define SPEED_MAX_TAPS 128
#define SPEED_NSUMS 325      /* covariance sums: (xi, yi <= xi) at xi * (xi + 1) / 2 + yi */

typedef struct SpeedGeometry {
    int src_w, src_h;       /* plane as libvmaf allocates it */
    int scaled_w, scaled_h; /* after the prescale */
    int dec_w, dec_h;       /* scaled >> 4 */
    int trunc_w, trunc_h;   /* dec truncated to multiples of 5 */
    int nbh, nbv, nblocks;  /* 5x5 blocks */
    int sub_w, sub_h;       /* trunc - 4: positions of the covariance */
    int resample;           /* 1 when libvmaf resamples (prescale != 1) */
} SpeedGeometry;

/* libvmaf vif_tools.c: valid kernel scales, filter sizes and taps. */
int speed_kernelscale_valid(double ks);
int speed_filter_size(int scale, float kernelscale);
void speed_lowpass_filter(float *out, int scale, float kernelscale);
void speed_antialias_filter(float *out, int scale, float kernelscale);

/* speed_init_dimensions(); returns -1 when the operating size is 0. */
int speed_geometry(SpeedGeometry *g, int w, int h, double prescale);

/* Resampling tables (libvmaf vif_scale_frame_*_s, method 0 nearest,
 * 1 bilinear): for each output column x1[x], x2[x], dx[x] (rows alike).
 * Nearest fills x2 = x1, dx = 0. */
void speed_scale_table(int method, int src, int dst, int *i1, int *i2, float *d);

typedef struct SpeedEstimate {
    float *entropies; /* nblocks */
    float *variances; /* nblocks */
    int singular;
} SpeedEstimate;

/* Work memory for speed_estimate (nblocks * 25 * 3 floats + matrices). */
typedef struct SpeedWork {
    float *y, *x, *qb;
    int nblocks;
} SpeedWork;

int speed_work_alloc(SpeedWork *w, int nblocks);
void speed_work_free(SpeedWork *w);

/* est_params() on the band-pass image `data` (trunc_w x trunc_h, row pitch
 * `stride` floats). */
void speed_estimate(const SpeedGeometry *g, const float *data, size_t stride, float sigma_nn,
                    SpeedWork *w, SpeedEstimate *out);

/* The same from the image's 325 covariance sums (each the double sum over
 * the positions of (x - mean x)(y - mean y), in libvmaf's order, as
 * speed_estimate computes them and speed.cl's speed_moments on the
 * device); `data` is still read for the blocks. */
void speed_estimate_sums(const SpeedGeometry *g, const double *sums, const float *data,
                         size_t stride, float sigma_nn, SpeedWork *w, SpeedEstimate *out);

/* get_speed_score() plus the one-sided-singular rule of
 * speed_extract_score(). */
float speed_pair_score(const SpeedGeometry *g, const SpeedEstimate *ref,
                       const SpeedEstimate *dis, float sigma_nn, float nn_floor, int wvm);

/* libvmaf's eigenvalues of a symmetric n x n float matrix (not modified). */
void speed_eigenvalues(const float *a, int n, float *eig);

#endif
