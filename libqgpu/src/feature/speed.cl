/*
 * speed_chroma (libvmaf speed.c): the per-pixel part on the device.
 *
 * Build options: -DSPEED_BPS=1 (8-bit samples) or 2 (16-bit words).
 *
 * Per frame, four images (U ref, U dis, V ref, V dis; z = 2 * plane + dis),
 * in one launch (speed_bands):
 *   D(i, j) = anti-alias filtered (separable Gaussian,
 *       vertical pass first, then horizontal, reflect-101 borders) value of
 *       the prescaled plane at (16 i, 16 j). libvmaf filters the whole
 *       plane and keeps every 16th sample; only the kept samples are
 *       computed here, each with the same float operations in the same
 *       order (acc = 0; acc += tap * sample, tap by tap; no contraction).
 *   B = D - 3-tap Gaussian blur of D (same filter rules),
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

/* D(i, j) of one image: the anti-alias filtered prescaled plane at
 * (16 i, 16 j) */
static float decimated(__global const sample_t *p, int pitch, float scale, int method,
                       int scaled_w, int scaled_h, __global const int *y1,
                       __global const int *y2, __global const float *dy,
                       __global const int *x1, __global const int *x2,
                       __global const float *dx, __constant float *taps, int fw, int i, int j)
{
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
    return acc;
}

/* One launch for both steps (two before, the decimated images stored
 * between them): a group of SPEED_GW x SPEED_GH work-items takes a tile of
 * tw x th band-pass outputs of image z = get_group_id(2) and first
 * computes, into __local memory, the decimated samples they read: the
 * tile and a border of r = fw_lp / 2 (the 3-tap blur's reflections stay
 * inside it: the picture's edge is the tile's then). A border sample is
 * computed again by each group that reads it. The arithmetic of every
 * sample is unchanged.
 *
 * global (SPEED_GW * tiles_x, SPEED_GH * tiles_y, 4) */
#define SPEED_GW 16
#define SPEED_GH 8
#define SPEED_REGION 256 /* (tw + 2 r) (th + 2 r) <= 16 x 16 (fw_lp <= 9) */
__kernel __attribute__((reqd_work_group_size(SPEED_GW, SPEED_GH, 1)))
void speed_bands(__global const sample_t *ref, __global const sample_t *dis, uint off_u,
                 uint off_v, int pitch, float scale, int method, int scaled_w, int scaled_h,
                 int dec_w, int dec_h, __global const int *y1, __global const int *y2,
                 __global const float *dy, __global const int *x1, __global const int *x2,
                 __global const float *dx, __constant float *taps_aa, int fw_aa,
                 __constant float *taps_lp, int fw_lp, int tw, int th, int trunc_w,
                 int trunc_h, __global float *results, uint results_index)
{
    __local float d[SPEED_REGION];
    const int z = get_group_id(2);
    const int lid = get_local_id(1) * SPEED_GW + get_local_id(0);
    const int r = fw_lp / 2, rw = tw + 2 * r, rh = th + 2 * r;
    const int i0 = get_group_id(1) * th - r, j0 = get_group_id(0) * tw - r; /* region */
    __global const sample_t *p = ((z & 1) ? dis : ref) + ((z >> 1) ? off_v : off_u);

    for (int k = lid; k < rw * rh; k += SPEED_GW * SPEED_GH) {
        const int i = i0 + k / rw, j = j0 + k % rw;
        float v = 0.0f; /* outside the image: never read */
        if (i >= 0 && i < dec_h && j >= 0 && j < dec_w)
            v = decimated(p, pitch, scale, method, scaled_w, scaled_h, y1, y2, dy, x1, x2, dx,
                          taps_aa, fw_aa, i, j);
        d[k] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    const int lx = get_local_id(0), ly = get_local_id(1);
    const int j = get_group_id(0) * tw + lx, i = get_group_id(1) * th + ly;
    if (lx >= tw || ly >= th || j >= trunc_w || i >= trunc_h)
        return;
    float acc = 0.0f;
    for (int fj = 0; fj < fw_lp; fj++) {
        int jj = mirror_skip_edge(j - r + fj, dec_w) - j0;
        float t = 0.0f;
        for (int fi = 0; fi < fw_lp; fi++) {
            int ii = mirror_skip_edge(i - r + fi, dec_h) - i0;
            t += taps_lp[fi] * d[ii * rw + jj];
        }
        acc += taps_lp[fj] * t;
    }
    results[results_index + (z * trunc_h + i) * trunc_w + j] = d[(i - i0) * rw + j - j0] - acc;
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
