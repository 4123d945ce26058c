/* Deliberately independent reference: written from libvmaf's arithmetic for
 * tests/test_float_misc.c, sharing no code with libqgpu/src/feature/float_motion.c,
 * float_psnr.c, float_ansnr.c, float_moment.c and their kernels. Where the two implement the
 * same step, `duplicates` pairs them: that repeat is the point (two implementations held against
 * each other), not something to fold. */
/* Plain-C references of libvmaf's float extractors float_motion,
 * float_psnr, float_ansnr and float_moment: see float_misc_ref.h and
 * doc/metrics/float_misc.md. Own code; the arithmetic (constants, order of
 * the float operations, border rules) follows libvmaf 3.2.0's
 * float_motion.c, motion.c, common/convolution.c, float_psnr.c, moment.c,
 * ansnr.c, ansnr_tools.c and picture_copy.c. */
#include "float_misc_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* picture_copy.c: float samples in 8-bit units plus an offset */
static float *to_float(const void *plane, int w, int h, int stride, int bitdepth, float offset)
{
    float *out = malloc(sizeof(float) * (size_t)w * h);
    float scale = bitdepth == 8 ? 1.0f : bitdepth == 10 ? 4.0f : bitdepth == 12 ? 16.0f : 256.0f;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float s = bitdepth == 8 ? (float)((const uint8_t *)plane)[(size_t)y * stride + x]
                                    : (float)((const uint16_t *)plane)[(size_t)y * stride + x];
            out[(size_t)y * w + x] = (bitdepth == 8 ? s : s / scale) + offset;
        }
    return out;
}

static void unit(int bitdepth, double *peak, double *psnr_max)
{
    switch (bitdepth) {
    case 8: *peak = 255.0; *psnr_max = 60.0; break;
    case 10: *peak = 255.75; *psnr_max = 72.0; break;
    case 12: *peak = 255.9375; *psnr_max = 84.0; break;
    default: *peak = 255.99609375; *psnr_max = 108.0; break;
    }
}

/* ---- float_motion ---- */

void float_motion_ref_default_options(FloatMotionRefOptions *o)
{
    o->force_zero = 0;
    o->fps_weight = 1.0;
    o->blend_factor = 1.0;
    o->blend_offset = 40.0;
    o->filter_size = 5;
    o->max_val = 10000.0;
    o->add_uv = 0;
    o->add_scale1 = 0;
}

/* the edge is not repeated: -1 reads 1, n reads n-2 */
static int mirror_motion(int i, int n)
{
    if (i < 0)
        return -i;
    if (i >= n)
        return 2 * (n - 1) - i;
    return i;
}

static void blur(const float *in, float *out, int w, int h, int filter_size)
{
    static const float taps5[5] = {0.054488685, 0.244201342, 0.402619947, 0.244201342,
                                   0.054488685}; /* doubles rounded to float, as in libvmaf */
    static const float noop[5] = {0.0f, 0.0f, 1.0f, 0.0f, 0.0f};
    const float *f = filter_size == 1 ? noop : taps5;
    float *tmp = malloc(sizeof(float) * (size_t)w * h);
    for (int y = 0; y < h; y++) /* vertical pass first */
        for (int x = 0; x < w; x++) {
            float acc = 0.0f;
            for (int k = 0; k < 5; k++)
                acc += f[k] * in[(size_t)mirror_motion(y - 2 + k, h) * w + x];
            tmp[(size_t)y * w + x] = acc;
        }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float acc = 0.0f;
            for (int k = 0; k < 5; k++)
                acc += f[k] * tmp[(size_t)y * w + mirror_motion(x - 2 + k, w)];
            out[(size_t)y * w + x] = acc;
        }
    free(tmp);
}

/* vmaf_image_sad_c: float row sums, float total, float division */
static double sad(const float *a, const float *b, int w, int h)
{
    float total = 0.0f;
    for (int y = 0; y < h; y++) {
        float row = 0.0f;
        for (int x = 0; x < w; x++)
            row += fabsf(a[(size_t)y * w + x] - b[(size_t)y * w + x]);
        total += row;
    }
    return (double)(total / (float)(w * h));
}

/* vif_tools.c bilinear_interpolation / vif_scale_frame_bilinear_s */
static float mirror_f(float i, float left, float right)
{
    return i < left ? -i : i > right ? 2 * right - i : i;
}

static float bilinear(const float *src, int w, int h, float x, float y)
{
    int x1 = (int)mirror_f((float)floor(x), 0, (float)(w - 1));
    int x2 = (int)mirror_f((float)ceil(x), 0, (float)(w - 1));
    int y1 = (int)mirror_f((float)floor(y), 0, (float)(h - 1));
    int y2 = (int)mirror_f((float)ceil(y), 0, (float)(h - 1));
    float dx = x - x1, dy = y - y1;
    return (1 - dy) * (1 - dx) * src[y1 * w + x1] + (1 - dy) * dx * src[y1 * w + x2] +
           dy * (1 - dx) * src[y2 * w + x1] + dy * dx * src[y2 * w + x2];
}

static float *scale_half(const float *src, int w, int h, int sw, int sh)
{
    float *dst = malloc(sizeof(float) * (size_t)sw * sh);
    float ratio_x = (float)w / sw, ratio_y = (float)h / sh;
    for (int y = 0; y < sh; y++) {
        float yy = (y + 0.5) * ratio_y - 0.5; /* in double, as libvmaf */
        for (int x = 0; x < sw; x++) {
            float xx = (x + 0.5) * ratio_x - 0.5;
            dst[y * sw + x] = bilinear(src, w, h, xx, yy);
        }
    }
    return dst;
}

/* motion.c vmaf_image_sad_c with motion_add_scale1: scale-0 score plus the
 * score of both frames scaled to round(w/2) x round(h/2), in float */
static double sad_scale1(const float *a, const float *b, int w, int h)
{
    int sw = (int)(w * 0.5 + 0.5), sh = (int)(h * 0.5 + 0.5);
    float s0 = (float)sad(a, b, w, h);
    float *as = scale_half(a, w, h, sw, sh), *bs = scale_half(b, w, h, sw, sh);
    float s1 = (float)sad(as, bs, sw, sh);
    free(as);
    free(bs);
    return (double)(s0 + s1);
}

static double blend(const FloatMotionRefOptions *o, double x)
{
    return x * o->blend_factor + (1 - o->blend_factor) * fmin(o->blend_offset, x);
}

void float_motion_ref_clip(const void *const *planes, unsigned n, const int w[3], const int h[3],
                           int bitdepth, const FloatMotionRefOptions *o, double *motion,
                           double *motion2, double *motion3)
{
    double *m = calloc(n ? n : 1, sizeof(double));
    float *prev[3] = {NULL, NULL, NULL};
    if (o->force_zero) {
        for (unsigned i = 0; i < n; i++)
            motion[i] = motion2[i] = motion3[i] = 0.0;
        free(m);
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        for (int p = 0; p < (o->add_uv ? 3 : 1); p++) {
            float *f = to_float(planes[3 * i + p], w[p], h[p], w[p], bitdepth, -128.0f);
            float *b = malloc(sizeof(float) * (size_t)w[p] * h[p]);
            blur(f, b, w[p], h[p], o->filter_size);
            if (i) { /* float_motion.c: score += score_u; score += score_v */
                double v = o->add_scale1 ? sad_scale1(prev[p], b, w[p], h[p])
                                         : sad(prev[p], b, w[p], h[p]);
                m[i] = p ? m[i] + v : v;
            }
            free(prev[p]);
            free(f);
            prev[p] = b;
        }
    }
    for (int p = 0; p < 3; p++)
        free(prev[p]);
    for (unsigned i = 0; i < n; i++) {
        double raw; /* the unweighted motion2 */
        motion[i] = i ? fmin(m[i] * o->fps_weight, o->max_val) : 0.0;
        if (i == 0) {
            motion2[0] = 0.0;
            motion3[0] = n > 1 ? fmin(blend(o, m[1] * o->fps_weight), o->max_val) : 0.0;
            continue;
        }
        raw = i + 1 < n ? fmin(m[i], m[i + 1]) : m[i];
        motion2[i] = fmin(raw * o->fps_weight, o->max_val);
        motion3[i] = fmin(blend(o, raw * o->fps_weight), o->max_val);
    }
    free(m);
}

/* ---- float_psnr, float_moment ---- */

double float_psnr_ref(const void *ref, const void *dis, int w, int h, int stride, int bitdepth)
{
    float *a = to_float(ref, w, h, stride, bitdepth, 0.0f);
    float *b = to_float(dis, w, h, stride, bitdepth, 0.0f);
    double peak, psnr_max, noise = 0.0;
    unit(bitdepth, &peak, &psnr_max);
    for (int y = 0; y < h; y++) {
        double row = 0.0;
        for (int x = 0; x < w; x++) {
            float d = a[(size_t)y * w + x] - b[(size_t)y * w + x];
            row += (double)(d * d);
        }
        noise += row;
    }
    noise /= (w * h);
    free(a);
    free(b);
    return fmin(10 * log10(peak * peak / fmax(noise, 1e-10)), psnr_max);
}

void float_moment_ref(const void *ref, const void *dis, int w, int h, int stride, int bitdepth,
                      double moments[4])
{
    float *pic[2] = {to_float(ref, w, h, stride, bitdepth, 0.0f),
                     to_float(dis, w, h, stride, bitdepth, 0.0f)};
    for (int p = 0; p < 2; p++) {
        double first = 0.0, second = 0.0;
        for (size_t i = 0; i < (size_t)w * h; i++) {
            float v = pic[p][i];
            first += v;
            second += v * v;
        }
        moments[p] = first / (w * h);
        moments[2 + p] = second / (w * h);
        free(pic[p]);
    }
}

/* ---- float_ansnr ---- */

/* ansnr_tools.c: -1 reads 1, n reads n-1 */
static int mirror_ansnr(int i, int n)
{
    if (i < 0)
        return -i;
    if (i >= n)
        return 2 * n - i - 1;
    return i;
}

static void filter2d(const float *f, int fw, const float *in, float *out, int w, int h)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float acc = 0.0f;
            for (int fi = 0; fi < fw; fi++) {
                float inner = 0.0f;
                for (int fj = 0; fj < fw; fj++) {
                    int yy = mirror_ansnr(y - fw / 2 + fi, h);
                    int xx = mirror_ansnr(x - fw / 2 + fj, w);
                    inner += f[fi * fw + fj] * in[(size_t)yy * w + xx];
                }
                acc += inner;
            }
            out[(size_t)y * w + x] = acc;
        }
}

void float_ansnr_ref(const void *ref, const void *dis, int w, int h, int stride, int bitdepth,
                     double *ansnr, double *anpsnr)
{
    static const int w3[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
    static const int w5[25] = {2,  7,  12, 7,  2,  7,  31, 52, 31, 7,  12, 52, 127,
                               52, 12, 7,  31, 52, 31, 7,  2,  7,  12, 7,  2};
    float f3[9], f5[25];
    for (int i = 0; i < 9; i++)
        f3[i] = (float)(w3[i] / 16.0);
    for (int i = 0; i < 25; i++)
        f5[i] = (float)(w5[i] / 571.0);
    float *a = to_float(ref, w, h, stride, bitdepth, -128.0f);
    float *b = to_float(dis, w, h, stride, bitdepth, -128.0f);
    float *fa = malloc(sizeof(float) * (size_t)w * h), *fb = malloc(sizeof(float) * (size_t)w * h);
    double peak, psnr_max;
    float sig = 0.0f, noise = 0.0f;
    unit(bitdepth, &peak, &psnr_max);
    filter2d(f3, 3, a, fa, w, h);
    filter2d(f5, 5, b, fb, w, h);
    for (int y = 0; y < h; y++) {
        float s = 0.0f, n = 0.0f;
        for (int x = 0; x < w; x++) {
            float r = fa[(size_t)y * w + x], d = fb[(size_t)y * w + x];
            s += r * r;
            n += (r - d) * (r - d);
        }
        sig += s;
        noise += n;
    }
    *ansnr = noise == 0 ? psnr_max : 10.0 * log10(sig / noise);
    *anpsnr = fmin(10 * log10(peak * peak * w * h / fmax(noise, 1e-10)), psnr_max);
    free(a);
    free(b);
    free(fa);
    free(fb);
}
