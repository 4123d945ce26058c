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
 * Samples become floats as libvmaf's picture_copy: value / 2^(bpc-8) - 128
 * (exact). The prescale (libvmaf vif_scale_frame_s, nearest or bilinear)
 * is read through host-made row/column tables (source indices and
 * weights computed in libvmaf's double/float mix on the host).
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef SPEED_BPS
#define SPEED_BPS 1
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
