/* Deliberately independent reference: written from libvmaf's arithmetic for tests/test_ssim.c,
 * sharing no code with libqgpu/src/feature/ssim.c, ms_ssim.c and ssim.cl. Where the two
 * implement the same step, `duplicates` pairs them: that repeat is the point (two
 * implementations held against each other), not something to fold. */
/* Plain-C reference of libvmaf's float_ssim / float_ms_ssim. Written from
 * the description of libvmaf 3.2.0's iqa code (ssim.c, ms_ssim.c,
 * iqa/ssim_tools.c, iqa/convolve.c, iqa/decimate.c); see
 * doc/metrics/ssim.md for what each step does and why the precision
 * choices below matter. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
/* libvmaf's float products are rounded to float before they are summed;
 * a fused multiply-add would skip that rounding. */
#pragma GCC optimize("fp-contract=off")
#endif

#include "ssim_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* 11-tap Gaussian (sigma 1.5) as libvmaf's g_gaussian_window_h lists it. */
static const float gauss11[11] = {
    0.001028f, 0.007599f, 0.036001f, 0.109361f, 0.213006f, 0.266012f,
    0.213006f, 0.109361f, 0.036001f, 0.007599f, 0.001028f,
};

/* MS-SSIM's 9x9 low-pass (9/7 biorthogonal) as libvmaf's g_lpf lists it;
 * the decimation uses this 2-D table, not the outer product of the 1-D one. */
static const float lpf9[9][9] = {
    { 0.000714f,-0.000450f,-0.002090f, 0.007132f, 0.016114f, 0.007132f,-0.002090f,-0.000450f, 0.000714f},
    {-0.000450f, 0.000283f, 0.001316f,-0.004490f,-0.010146f,-0.004490f, 0.001316f, 0.000283f,-0.000450f},
    {-0.002090f, 0.001316f, 0.006115f,-0.020867f,-0.047149f,-0.020867f, 0.006115f, 0.001316f,-0.002090f},
    { 0.007132f,-0.004490f,-0.020867f, 0.071207f, 0.160885f, 0.071207f,-0.020867f,-0.004490f, 0.007132f},
    { 0.016114f,-0.010146f,-0.047149f, 0.160885f, 0.363505f, 0.160885f,-0.047149f,-0.010146f, 0.016114f},
    { 0.007132f,-0.004490f,-0.020867f, 0.071207f, 0.160885f, 0.071207f,-0.020867f,-0.004490f, 0.007132f},
    {-0.002090f, 0.001316f, 0.006115f,-0.020867f,-0.047149f,-0.020867f, 0.006115f, 0.001316f,-0.002090f},
    {-0.000450f, 0.000283f, 0.001316f,-0.004490f,-0.010146f,-0.004490f, 0.001316f, 0.000283f,-0.000450f},
    { 0.000714f,-0.000450f,-0.002090f, 0.007132f, 0.016114f, 0.007132f,-0.002090f,-0.000450f, 0.000714f},
};

/* MS-SSIM exponents per scale (Wang et al. 2003, as libvmaf lists them). */
static const float ms_alpha[5] = { 0.0000f, 0.0000f, 0.0000f, 0.0000f, 0.1333f };
static const float ms_beta[5] = { 0.0448f, 0.2856f, 0.3001f, 0.2363f, 0.1333f };
static const float ms_gamma[5] = { 0.0448f, 0.2856f, 0.3001f, 0.2363f, 0.1333f };

void ssim_ref_luma_to_float(const void *data, ptrdiff_t stride, int w, int h, int bitdepth,
                            float *out)
{
    const float scaler = (float)(1 << (bitdepth - 8));
    for (int y = 0; y < h; y++) {
        const uint8_t *row = (const uint8_t *)data + y * stride;
        for (int x = 0; x < w; x++) {
            if (bitdepth == 8) {
                out[y * w + x] = (float)row[x];
            } else {
                uint16_t v = (uint16_t)(row[2 * x] | (row[2 * x + 1] << 8));
                out[y * w + x] = (float)v / scaler;
            }
        }
    }
}

int ssim_ref_scale(int w, int h, int scale)
{
    if (scale > 0)
        return scale;
    /* libvmaf's _round(): truncate, then up when the fraction is >= 0.5 */
    float a = (float)(w < h ? w : h) / 256.0f;
    int r = (a - (int)a >= 0.5f) ? (int)a + 1 : (int)a;
    return r > 1 ? r : 1;
}

void ssim_ref_decimated_size(int w, int h, int scale, int *sw, int *sh)
{
    *sw = w / scale + (w & 1);
    *sh = h / scale + (h & 1);
}

/* Whole-sample symmetric extension: -1 -> 0, n -> n - 1. */
static int mirror(int i, int n)
{
    if (i < 0)
        return -1 - i;
    if (i >= n)
        return 2 * n - 1 - i;
    return i;
}

/* Output (x, y) = sum over the k x k window whose top-left is
 * (x*factor - k/2, y*factor - k/2) of pixel * weight: each product a float,
 * summed in double, rounded to float once. */
static void decimate(const float *src, int w, int h, int factor, const float *kernel, int k,
                     float *dst, int *rw, int *rh)
{
    int sw = w / factor + (w & 1);
    int sh = h / factor + (h & 1);
    int c = k / 2;
    for (int y = 0; y < sh; y++) {
        for (int x = 0; x < sw; x++) {
            double sum = 0.0;
            for (int v = 0; v < k; v++) {
                int yy = mirror(y * factor - c + v, h);
                for (int u = 0; u < k; u++) {
                    int xx = mirror(x * factor - c + u, w);
                    float p = src[yy * w + xx] * kernel[v * k + u];
                    sum += p;
                }
            }
            dst[y * sw + x] = (float)sum;
        }
    }
    *rw = sw;
    *rh = sh;
}

/* 11x11 Gaussian over the "valid" region only (no border): a (w-10) x
 * (h-10) result, horizontal pass first, each pass summing float products
 * in double and rounding to float. */
static void gauss_valid(const float *src, int w, int h, float *tmp, float *dst)
{
    int dw = w - 10, dh = h - 10;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < dw; x++) {
            double sum = 0.0;
            for (int u = 0; u < 11; u++) {
                float p = src[y * w + x + u] * gauss11[u];
                sum += p;
            }
            tmp[y * dw + x] = (float)sum;
        }
    }
    for (int y = 0; y < dh; y++) {
        for (int x = 0; x < dw; x++) {
            double sum = 0.0;
            for (int v = 0; v < 11; v++) {
                float p = tmp[(y + v) * dw + x] * gauss11[v];
                sum += p;
            }
            dst[y * dw + x] = (float)sum;
        }
    }
}

/* SSIM of two float pictures of at least 11x11: the means of l, c, s and
 * l*c*s over the valid region, rounded to float. */
static int ssim_core(const float *ref, const float *cmp, int w, int h, float out[4])
{
    const float C1 = (0.01f * 255) * (0.01f * 255);
    const float C2 = (0.03f * 255) * (0.03f * 255);
    const float C3 = C2 / 2.0f;
    size_t n = (size_t)w * h;
    int dw = w - 10, dh = h - 10;
    float *buf = malloc(n * sizeof(float) * 9);
    if (!buf)
        return -1;
    float *xx = buf, *yy = buf + n, *xy = buf + 2 * n, *tmp = buf + 3 * n;
    float *mu1 = buf + 4 * n, *mu2 = buf + 5 * n;
    float *s1 = buf + 6 * n, *s2 = buf + 7 * n, *s12 = buf + 8 * n;

    for (size_t i = 0; i < n; i++) {
        xx[i] = ref[i] * ref[i];
        yy[i] = cmp[i] * cmp[i];
        xy[i] = ref[i] * cmp[i];
    }
    gauss_valid(ref, w, h, tmp, mu1);
    gauss_valid(cmp, w, h, tmp, mu2);
    gauss_valid(xx, w, h, tmp, s1);
    gauss_valid(yy, w, h, tmp, s2);
    gauss_valid(xy, w, h, tmp, s12);

    double ssim_sum = 0.0, l_sum = 0.0, c_sum = 0.0, s_sum = 0.0;
    for (int i = 0; i < dw * dh; i++) {
        float m1 = mu1[i], m2 = mu2[i];
        float m11 = m1 * m1, m22 = m2 * m2, m12 = m1 * m2;
        float v1 = s1[i] - m11;
        float v2 = s2[i] - m22;
        float v12 = s12[i] - m12;
        if (v1 < 0.0f)
            v1 = 0.0f;
        if (v2 < 0.0f)
            v2 = 0.0f;
        float v1v2 = v1 * v2;
        float sd = (float)sqrt((double)v1v2);
        float lden = m11 + m22 + C1;
        float cden = v1 + v2 + C2;
        /* libvmaf: a flat, identical neighbourhood must give s = 1 even when
         * rounding made the covariance slightly negative */
        float cov = (v12 < 0.0f && sd <= 0.0f) ? 0.0f : v12;
        float snum = cov + C3;
        float sden = sd + C3;
        double l = (2.0 * m1 * m2 + C1) / lden;
        double c = (2.0 * sd + C2) / cden;
        double s = snum / sden; /* a float division in libvmaf */
        ssim_sum += l * c * s;
        l_sum += l;
        c_sum += c;
        s_sum += s;
    }
    double count = (double)dw * dh;
    out[0] = (float)(ssim_sum / count);
    out[1] = (float)(l_sum / count);
    out[2] = (float)(c_sum / count);
    out[3] = (float)(s_sum / count);
    free(buf);
    return 0;
}

int ssim_ref_float_ssim(const float *ref, const float *dist, int w, int h, int scale,
                        double out[4])
{
    int f = ssim_ref_scale(w, h, scale);
    int sw = w, sh = h;
    float res[4];
    int err;

    if (f > 1)
        ssim_ref_decimated_size(w, h, f, &sw, &sh);
    if (sw < 11 || sh < 11)
        return -1;
    if (f == 1) {
        err = ssim_core(ref, dist, w, h, res);
    } else {
        float *kernel = malloc(sizeof(float) * f * f);
        float *a = malloc(sizeof(float) * sw * sh);
        float *b = malloc(sizeof(float) * sw * sh);
        err = (!kernel || !a || !b) ? -1 : 0;
        if (!err) {
            for (int i = 0; i < f * f; i++)
                kernel[i] = 1.0f / (f * f);
            decimate(ref, w, h, f, kernel, f, a, &sw, &sh);
            decimate(dist, w, h, f, kernel, f, b, &sw, &sh);
            err = ssim_core(a, b, sw, sh, res);
        }
        free(kernel);
        free(a);
        free(b);
    }
    if (err)
        return -1;
    for (int i = 0; i < 4; i++)
        out[i] = res[i];
    return 0;
}

int ssim_ref_float_ms_ssim(const float *ref, const float *dist, int w, int h, double *score,
                           double l[5], double c[5], double s[5])
{
    /* libvmaf's check: halving (rounding down) 4 times must stay >= 11 */
    for (int i = 0, cw = w, ch = h; i < 5; i++, cw /= 2, ch /= 2)
        if (cw < 11 || ch < 11)
            return -1;

    float *img[2][5] = { { 0 } };
    int sw[5], sh[5];
    int err = 0;
    sw[0] = w;
    sh[0] = h;
    for (int i = 1; i < 5; i++) {
        sw[i] = sw[i - 1] / 2 + (sw[i - 1] & 1);
        sh[i] = sh[i - 1] / 2 + (sh[i - 1] & 1);
    }
    for (int k = 0; k < 2; k++)
        for (int i = 1; i < 5; i++)
            if (!(img[k][i] = malloc(sizeof(float) * sw[i] * sh[i])))
                err = -1;
    img[0][0] = (float *)ref;
    img[1][0] = (float *)dist;
    double ms = 1.0;
    for (int i = 0; i < 5 && !err; i++) {
        float res[4];
        if (i > 0) {
            int rw, rh;
            for (int k = 0; k < 2; k++)
                decimate(img[k][i - 1], sw[i - 1], sh[i - 1], 2, &lpf9[0][0], 9, img[k][i],
                         &rw, &rh);
        }
        if (ssim_core(img[0][i], img[1][i], sw[i], sh[i], res)) {
            err = -1;
            break;
        }
        /* res[1..3] are the float means libvmaf multiplies in */
        ms *= pow(res[1], ms_alpha[i]) * pow(res[2], ms_beta[i]) * pow(res[3], ms_gamma[i]);
        l[i] = res[1];
        c[i] = res[2];
        s[i] = res[3];
    }
    for (int k = 0; k < 2; k++)
        for (int i = 1; i < 5; i++)
            free(img[k][i]);
    if (err)
        return -1;
    *score = ms;
    return 0;
}

double ssim_ref_max_db(int bitdepth, int w, int h, int clip_db)
{
    if (!clip_db)
        return INFINITY;
    double peak = (double)((1u << bitdepth) - 1);
    double mse = 0.5 / ((double)w * h);
    return ceil(10.0 * log10(peak * peak / mse));
}

double ssim_ref_to_db(double score, double max_db)
{
    double db = -10.0 * log10(1.0 - score);
    return db < max_db ? db : max_db;
}
