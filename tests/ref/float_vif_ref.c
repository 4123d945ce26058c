/* Deliberately independent reference: written from libvmaf's arithmetic for
 * tests/test_float_vif.c, sharing no code with libqgpu/src/feature/float_vif.c / float_vif.cl.
 * Where the two implement the same step, `duplicates` pairs them: that repeat is the point (two
 * implementations held against each other), not something to fold. */
/* See float_vif_ref.h. Sources of the arithmetic: libvmaf 3.2.0
 * libvmaf/src/feature/vif.c (compute_vif), vif_tools.c (filter table,
 * vif_filter1d_s, vif_dec2_s, vif_statistic_s), picture_copy.c. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "float_vif_ref.h"

/* vif_get_filter() at kernelscale 1: Gaussian of size 17, 9, 5, 3 and
 * sigma size / 5; pdf with a double exp rounded to float, float sum, float
 * normalisation (vif_tools.c, get_1d_gaussian_kernel). */
static int make_filter(float *out, int scale)
{
    int size = (1 << (4 - scale)) + 1;
    float stdev = (float)size / 5.0f, sum = 0.0f;
    for (int i = 0; i < size; i++) {
        float x = (float)(i - size / 2);
        float pdf_num = (float)exp(-0.5 * x / stdev * x / stdev);
        float pdf_den = (float)(1 / (stdev * sqrt(2 * M_PI)));
        out[i] = pdf_num / pdf_den;
        sum += out[i];
    }
    for (int i = 0; i < size; i++)
        out[i] /= sum;
    return size;
}

/* vif_tools.c log2f_approx() (VIF_OPT_FAST_LOG2): exponent + Horner
 * polynomial of the mantissa, in float. */
static float log2_approx(float x)
{
    static const float poly[9] = {-0.012671635276421, 0.064841182402670, -0.157048836463065,
                                  0.257167726303123,  -0.353800560300520, 0.480131410397451,
                                  -0.721314327952201, 1.442694803896991,  0};
    if (x == 0)
        return -INFINITY;
    if (x < 0)
        return NAN;
    uint32_t u;
    memcpy(&u, &x, sizeof(u));
    uint32_t m = (u & 0x007FFFFFu) | 0x3F800000u;
    float remain;
    memcpy(&remain, &m, sizeof(remain));
    float log_base = (float)((int32_t)((u & 0x7F800000u) >> 23) - 127);
    float t = remain - 1.0f, var = 0.0f;
    for (int i = 0; i < 9; i++)
        var = var * t + poly[i];
    return log_base + var;
}

/* Border rule of libvmaf 3.2.0's float VIF filters (measured against the
 * golden logs): index -1 reads 1, index n reads n - 2. */
static int mirror(int i, int n)
{
    if (i < 0)
        return -i;
    if (i >= n)
        return 2 * n - i - 2;
    return i;
}

/* Separable filter of src (or src^2, or src*src2): vertical pass first,
 * then horizontal on the vertical results; float sums in tap order. */
enum { F_PLAIN, F_SQ, F_XY };
static void filter(const float *f, int fw, const float *src, const float *src2, float *dst,
                   float *tmp, int w, int h, int mode)
{
    int r = fw / 2;
    for (int i = 0; i < h; i++) {
        for (int j = 0; j < w; j++) {
            float acc = 0.0f;
            for (int k = 0; k < fw; k++) {
                int ii = mirror(i - r + k, h);
                float a = src[(size_t)ii * w + j];
                float v = mode == F_PLAIN ? a : mode == F_SQ ? a * a : a * src2[(size_t)ii * w + j];
                acc += f[k] * v;
            }
            tmp[j] = acc;
        }
        for (int j = 0; j < w; j++) {
            float acc = 0.0f;
            for (int k = 0; k < fw; k++)
                acc += f[k] * tmp[mirror(j - r + k, w)];
            dst[(size_t)i * w + j] = acc;
        }
    }
}

int float_vif_ref_compute(const void *ref, const void *dis, int w, int h, ptrdiff_t stride,
                          int bpc, double egl, double sigma_nsq_d, FloatVifRefResult *out)
{
    size_t n = (size_t)w * h;
    float *buf = malloc(sizeof(float) * (n * 7 + (size_t)w));
    if (!buf)
        return -1;
    float *cr = buf, *cd = buf + n, *mu1 = buf + 2 * n, *mu2 = buf + 3 * n, *xx = buf + 4 * n,
          *yy = buf + 5 * n, *xy = buf + 6 * n, *tmp = buf + 7 * n;
    /* picture_copy: sample / 2^(bpc - 8) - 128 */
    float scale = 1.0f / (float)(1 << (bpc - 8));
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            unsigned a, b;
            if (bpc == 8) {
                a = ((const uint8_t *)ref)[y * stride + x];
                b = ((const uint8_t *)dis)[y * stride + x];
            } else {
                a = ((const uint16_t *)ref)[y * stride + x];
                b = ((const uint16_t *)dis)[y * stride + x];
            }
            cr[(size_t)y * w + x] = (float)a * scale - 128.0f;
            cd[(size_t)y * w + x] = (float)b * scale - 128.0f;
        }
    }
    const float eps = 1.0e-10f;
    const float sigma_max_inv = (float)(powf((float)sigma_nsq_d, 2.0f) / (255.0 * 255.0));
    const float egl_f = (float)egl;
    for (int s = 0; s < 4; s++) {
        float f[17];
        int fw = make_filter(f, s);
        if (s > 0) {
            /* blur with this scale's filter, keep even rows/columns */
            filter(f, fw, cr, NULL, mu1, tmp, w, h, F_PLAIN);
            filter(f, fw, cd, NULL, mu2, tmp, w, h, F_PLAIN);
            int nw = w / 2, nh = h / 2;
            for (int y = 0; y < nh; y++)
                for (int x = 0; x < nw; x++) {
                    cr[(size_t)y * nw + x] = mu1[(size_t)(2 * y) * w + 2 * x];
                    cd[(size_t)y * nw + x] = mu2[(size_t)(2 * y) * w + 2 * x];
                }
            w = nw;
            h = nh;
        }
        filter(f, fw, cr, NULL, mu1, tmp, w, h, F_PLAIN);
        filter(f, fw, cd, NULL, mu2, tmp, w, h, F_PLAIN);
        filter(f, fw, cr, NULL, xx, tmp, w, h, F_SQ);
        filter(f, fw, cd, NULL, yy, tmp, w, h, F_SQ);
        filter(f, fw, cr, cd, xy, tmp, w, h, F_XY);
        float acc_num = 0.0f, acc_den = 0.0f;
        for (int y = 0; y < h; y++) {
            float row_num = 0.0f, row_den = 0.0f;
            for (int x = 0; x < w; x++) {
                size_t i = (size_t)y * w + x;
                float m1 = mu1[i], m2 = mu2[i];
                float sigma1_sq = xx[i] - m1 * m1;
                float sigma2_sq = yy[i] - m2 * m2;
                float sigma12 = xy[i] - m1 * m2;
                sigma1_sq = sigma1_sq > 0.0f ? sigma1_sq : 0.0f;
                sigma2_sq = sigma2_sq > 0.0f ? sigma2_sq : 0.0f;
                float g = sigma12 / (sigma1_sq + eps);
                float sv_sq = sigma2_sq - g * sigma12;
                if (sigma1_sq < eps) {
                    g = 0.0f;
                    sv_sq = sigma2_sq;
                    sigma1_sq = 0.0f;
                }
                if (sigma2_sq < eps) {
                    g = 0.0f;
                    sv_sq = 0.0f;
                }
                if (g < 0.0f) {
                    sv_sq = sigma2_sq;
                    g = 0.0f;
                }
                sv_sq = sv_sq > eps ? sv_sq : eps;
                g = g < egl_f ? g : egl_f;
                /* libvmaf: both arguments in double, rounded to float once */
                float num = log2_approx((float)(1.0 + (g * g * sigma1_sq) / (sv_sq + sigma_nsq_d)));
                float den = log2_approx((float)(1.0 + sigma1_sq / sigma_nsq_d));
                if (sigma12 < 0.0f)
                    num = 0.0f;
                if (sigma1_sq < sigma_nsq_d) {
                    num = 1.0f - sigma2_sq * sigma_max_inv;
                    den = 1.0f;
                }
                row_num += num;
                row_den += den;
            }
            acc_num += row_num;
            acc_den += row_den;
        }
        out->num[s] = acc_num;
        out->den[s] = acc_den;
        out->score[s] = (double)acc_num / (double)acc_den;
    }
    free(buf);
    return 0;
}
