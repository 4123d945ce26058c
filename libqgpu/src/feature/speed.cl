/*
 * speed_chroma (libvmaf speed.c): the per-pixel part on the device.
 *
 * Build options: -DSPEED_BPS=1 (8-bit samples) or 2 (16-bit words).
 *
 * Per frame, four images (U ref, U dis, V ref, V dis; z = 2 * plane + dis):
 *   speed_decimate: D(i, j) = anti-alias filtered (separable Gaussian,
 *       vertical pass first, then horizontal, reflect-101 borders) value of
 *       the prescaled plane at (16 i, 16 j). libvmaf filters the whole
 *       plane and keeps every 16th sample; only the kept samples are
 *       computed here, each with the same float operations in the same
 *       order (acc = 0; acc += tap * sample, tap by tap; no contraction).
 *   speed_bandpass: B = D - 3-tap Gaussian blur of D (same filter rules),
 *       written for the truncated (multiple-of-5) region into the slot's
 *       results, where the host reads it for the 25x25 statistics.
 *   speed_moments (-DSPEED_FP64=1: QGPU_SPEED_FP64=1 on a device with
 *       double precision; off by default): the 25 means and the 325
 *       covariance sums of each band-pass image, in double, into the
 *       slot's results; the host then only divides, and does the 25x25
 *       linear algebra (speed_linalg.c).
 * Samples become floats as libvmaf's picture_copy: value / 2^(bpc-8) - 128
 * (exact). The prescale (libvmaf vif_scale_frame_s, nearest or bilinear)
 * is read through host-made row/column tables (source indices and
 * weights computed in libvmaf's double/float mix on the host).
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef SPEED_BPS
#define SPEED_BPS 1
#endif
#ifndef SPEED_FP64
#define SPEED_FP64 0  /* 1: speed_moments is built (the device has cl_khr_fp64) */
#endif
#if SPEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if SPEED_BPS == 1
typedef uchar sample_t;
#else
typedef ushort sample_t;
#endif

static inline float load_px(__global const sample_t *p, int pitch, int y, int x, float scale)
{
    float v = (float)p[y * pitch + x];
#if SPEED_BPS == 1
    return v + -128.0f;
#else
    return v / scale + -128.0f;
#endif
}

/* sample (y, x) of the prescaled plane */
static inline float scaled_px(__global const sample_t *p, int pitch, int method,
                              __global const int *y1, __global const int *y2,
                              __global const float *dyv, __global const int *x1,
                              __global const int *x2, __global const float *dxv, int y, int x,
                              float scale)
{
    if (method == 0)
        return load_px(p, pitch, y1[y], x1[x], scale);
    float dx = dxv[x], dy = dyv[y];
    float a = load_px(p, pitch, y1[y], x1[x], scale);
    float b = load_px(p, pitch, y1[y], x2[x], scale);
    float c = load_px(p, pitch, y2[y], x1[x], scale);
    float d = load_px(p, pitch, y2[y], x2[x], scale);
    return (1 - dy) * (1 - dx) * a + (1 - dy) * dx * b + dy * (1 - dx) * c + dy * dx * d;
}

/* global (dec_w, dec_h, 4) */
__kernel void speed_decimate(__global const sample_t *ref, __global const sample_t *dis,
                             uint off_u, uint off_v, int pitch, float scale, int method,
                             int scaled_w, int scaled_h, int dec_w, int dec_h,
                             __global const int *y1, __global const int *y2,
                             __global const float *dy, __global const int *x1,
                             __global const int *x2, __global const float *dx,
                             __constant float *taps, int fw, __global float *out)
{
    int j = get_global_id(0), i = get_global_id(1), z = get_global_id(2);
    if (j >= dec_w || i >= dec_h)
        return;
    __global const sample_t *p = ((z & 1) ? dis : ref) + ((z >> 1) ? off_v : off_u);
    int r = fw / 2;
    int ci = 16 * i, cj = 16 * j;
    float acc = 0.0f;
    for (int fj = 0; fj < fw; fj++) {
        int jj = mirror_skip_edge(cj - r + fj, scaled_w);
        float t = 0.0f;
        for (int fi = 0; fi < fw; fi++) {
            int ii = mirror_skip_edge(ci - r + fi, scaled_h);
            t += taps[fi] * scaled_px(p, pitch, method, y1, y2, dy, x1, x2, dx, ii, jj, scale);
        }
        acc += taps[fj] * t;
    }
    out[(z * dec_h + i) * dec_w + j] = acc;
}

/* global (trunc_w, trunc_h, 4) */
__kernel void speed_bandpass(__global const float *dec, int dec_w, int dec_h, int trunc_w,
                             int trunc_h, __constant float *taps, int fw,
                             __global float *results, uint results_index)
{
    int j = get_global_id(0), i = get_global_id(1), z = get_global_id(2);
    if (j >= trunc_w || i >= trunc_h)
        return;
    __global const float *d = dec + z * dec_h * dec_w;
    int r = fw / 2;
    float acc = 0.0f;
    for (int fj = 0; fj < fw; fj++) {
        int jj = mirror_skip_edge(j - r + fj, dec_w);
        float t = 0.0f;
        for (int fi = 0; fi < fw; fi++) {
            int ii = mirror_skip_edge(i - r + fi, dec_h);
            t += taps[fi] * d[ii * dec_w + jj];
        }
        acc += taps[fj] * t;
    }
    results[results_index + (z * trunc_h + i) * trunc_w + j] = d[i * dec_w + j] - acc;
}

#if SPEED_FP64
#define SPEED_N 25       /* elements of a 5x5 block */
#define SPEED_NSUMS 325  /* covariance sums (xi, yi <= xi): speed_linalg.h */

/*
 * The sums behind libvmaf's 25x25 covariance of one band-pass image, as
 * speed_linalg.c's covariance_sums() computes them on the host, with the
 * same bits: global (SPEED_NSUMS, 4), one work-item per image z and sum
 * k = xi * (xi + 1) / 2 + yi (yi <= xi), written to
 * sums[sums_index + z * SPEED_NSUMS + k] as a double. Each work-item
 * computes the two means it needs itself (the same float chains as its
 * neighbours', so no barrier and no work-group size is needed).
 *
 * Why the bits are the host's: every value is one sequential chain over
 * the positions (i, j) in the host's order (row by row), started at +0,
 * and every operation in it is one IEEE operation that OpenCL requires
 * correctly rounded: the float additions of the means, the double
 * subtractions, multiplications and additions of the sums (contraction
 * into fma is off for the whole file, so each multiply and add rounds
 * separately, as on the host, which is built without FMA instructions).
 * The conversions float -> double are exact. The one expression not
 * written as the host writes it is the mean: the host divides in float
 * (sum / (float)count), whose OpenCL division may be off by 2.5 ulp;
 * here the float operands (count < 2^24 is exact in float) are divided
 * in double, correctly rounded, and the quotient is rounded to float.
 * Rounding twice, to 53 and then to 24 bits, gives the correctly rounded
 * float quotient because 53 >= 2 * 24 + 2 (Figueroa, "When is double
 * rounding innocuous?", 1995), so that is the host's float too.
 */
static double speed_mean(__global const float *img, int e, int trunc_w, int sw, int sh)
{
    __global const float *p = img + (e / 5) * trunc_w + e % 5;
    float s = 0.0f;
    for (int i = 0; i < sh; i++)
        for (int j = 0; j < sw; j++)
            s += p[i * trunc_w + j];
    return (float)((double)s / (double)(sw * sh));
}

__kernel void speed_moments(__global float *results, uint band_index, int trunc_w, int trunc_h,
                            uint sums_index)
{
    const int k = get_global_id(0), z = get_global_id(1);
    const int sw = trunc_w - 4, sh = trunc_h - 4;
    __global const float *img = results + band_index + z * trunc_w * trunc_h;

    int xi = 0; /* the row of sum k: the largest r with r (r + 1) / 2 <= k */
    for (int r = 1; r < SPEED_N; r++)
        if (r * (r + 1) / 2 <= k)
            xi = r;
    const int yi = k - xi * (xi + 1) / 2;
    const double mx = speed_mean(img, xi, trunc_w, sw, sh);
    const double my = speed_mean(img, yi, trunc_w, sw, sh);
    __global const float *px = img + (xi / 5) * trunc_w + xi % 5;
    __global const float *py = img + (yi / 5) * trunc_w + yi % 5;
    double acc = 0.0;
    for (int i = 0; i < sh; i++)
        for (int j = 0; j < sw; j++) {
            double dx = (double)px[i * trunc_w + j] - mx;
            double dy = (double)py[i * trunc_w + j] - my;
            acc += dx * dy;
        }
    ((__global double *)results)[sums_index + z * SPEED_NSUMS + k] = acc;
}
#endif
