/* Deliberately independent reference: written from libvmaf's arithmetic for
 * tests/test_float_adm.c, sharing no code with libqgpu/src/feature/float_adm.c / float_adm.cl.
 * Where the two implement the same step, `duplicates` pairs them: that repeat is the point (two
 * implementations held against each other), not something to fold. */
/*
 * Plain-C reference of libvmaf 3.2.0's float ADM (see float_adm_ref.h).
 *
 * Per scale s = 0..3 (adm.c compute_adm / adm_tools.c):
 *   1. db2 DWT of ref and dis (adm_dwt2_s): vertical pass, then horizontal
 *      pass on the vertical results; float sums of float products in tap
 *      order; source index 2i-1+k mirrored -1 -> 1, n -> n-1, n+1 -> n-2
 *      (dwt2_src_indices_filt_s). Output ceil(w/2) x ceil(h/2).
 *   2. decouple (adm_decouple_s, angle test without atan):
 *      k = clamp(t / (o + 1e-30), 0, 1), r = k o; angle < 1 degree ->
 *      r = min(r egl, t) (r > 0) / max(r egl, t) (r < 0); a = t - r.
 *   3. den_s: sum over the scored region of |rf o|^p, float per row, rows
 *      added in float, then powf(sum, 1/p) + powf(area nw, 1/p), per band.
 *   4. num_s (adm_cm_s): x = |rf r| - thr, clipped at 0, ^p, summed the same
 *      way; thr = sum over the bands of the 3x3 neighbourhood of
 *      |rf a| * (double)0.0333333351 (rounded to float), the centre
 *      |rf a| * (double)0.0666666701 added in double. Neighbours mirror
 *      -1 -> 1, n -> n-1.
 *   5. aim_s: as num_s with the roles of r and a swapped, noise weight 0.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "float_adm_ref.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* adm_tools.c: the db2 coefficients as float */
static const float LO[4] = {0.482962913144690f, 0.836516303737469f, 0.224143868041857f,
                            -0.129409522550921f};
static const float HI[4] = {-0.129409522550921f, -0.224143868041857f, 0.836516303737469f,
                            -0.482962913144690f};
/* adm_tools.c FLOAT_ONE_BY_30 / FLOAT_ONE_BY_15: double literals */
#define ONE_BY_30 0.0333333351
#define ONE_BY_15 0.0666666701

void float_adm_ref_defaults(FloatAdmRefOpts *o)
{
    memset(o, 0, sizeof(*o));
    o->egl = 100.0;
    o->nvd = 3.0;
    o->rdh = 1080;
    o->nw = 0.03125;
    o->dlmw = 0.5;
    o->min_val = 0.0;
    o->p_norm = 3.0;
    o->skip_aim_scale = -1;
    for (int i = 0; i < 4; i++)
        o->f1s[i] = o->f2s[i] = -1.0;
}

/* adm_tools.h dwt_quant_step (Watson et al. 1997), float/double as there */
static float quant_step(int lambda, int theta, double nvd, int rdh)
{
    static const float a = 0.495f, k = 0.466f, f0 = 0.401f;
    static const float g[4] = {1.501f, 1.0f, 0.534f, 1.0f};
    static const float amp[4][4] = {{0.62171f, 0.67234f, 0.72709f, 0.67234f},
                                    {0.34537f, 0.41317f, 0.49428f, 0.41317f},
                                    {0.18004f, 0.22727f, 0.28688f, 0.22727f},
                                    {0.091401f, 0.11792f, 0.15214f, 0.11792f}};
    float r = nvd * rdh * M_PI / 180.0;
    float temp = log10(pow(2.0, lambda + 1) * f0 * g[theta] / r);
    float e = k * temp * temp;
    float q = 2.0 * a * pow(10.0, e) / amp[lambda][theta];
    return q;
}

static void factors(const FloatAdmRefOpts *o, int s, float rf[3])
{
    float f1 = 1.0f / quant_step(s, 1, o->nvd, o->rdh);
    float f2 = 1.0f / quant_step(s, 2, o->nvd, o->rdh);
    if (o->f1s[s] >= 0)
        f1 = (float)o->f1s[s];
    if (o->f2s[s] >= 0)
        f2 = (float)o->f2s[s];
    rf[0] = f1;
    rf[1] = f1;
    rf[2] = f2;
}

static int mirror_dwt(int i, int n)
{
    if (i < 0)
        return -i;
    if (i >= n)
        return 2 * n - i - 1;
    return i;
}

/* bands: [0]=a [1]=h [2]=v [3]=d, each bw x bh */
static void dwt2(const float *src, int w, int h, float *band[4], float *tmplo, float *tmphi)
{
    int bw = (w + 1) / 2, bh = (h + 1) / 2;
    for (int i = 0; i < bh; i++) {
        int iy[4];
        for (int k = 0; k < 4; k++)
            iy[k] = mirror_dwt(2 * i - 1 + k, h);
        for (int j = 0; j < w; j++) {
            float acc = 0;
            for (int k = 0; k < 4; k++)
                acc += LO[k] * src[(size_t)iy[k] * w + j];
            tmplo[j] = acc;
            acc = 0;
            for (int k = 0; k < 4; k++)
                acc += HI[k] * src[(size_t)iy[k] * w + j];
            tmphi[j] = acc;
        }
        for (int j = 0; j < bw; j++) {
            int jx[4];
            for (int k = 0; k < 4; k++)
                jx[k] = mirror_dwt(2 * j - 1 + k, w);
            float acc = 0;
            for (int k = 0; k < 4; k++)
                acc += LO[k] * tmplo[jx[k]];
            band[0][(size_t)i * bw + j] = acc;
            acc = 0;
            for (int k = 0; k < 4; k++)
                acc += HI[k] * tmplo[jx[k]];
            band[2][(size_t)i * bw + j] = acc; /* v */
            acc = 0;
            for (int k = 0; k < 4; k++)
                acc += LO[k] * tmphi[jx[k]];
            band[1][(size_t)i * bw + j] = acc; /* h */
            acc = 0;
            for (int k = 0; k < 4; k++)
                acc += HI[k] * tmphi[jx[k]];
            band[3][(size_t)i * bw + j] = acc; /* d */
        }
    }
}

static void decouple(float o, float t, float *r, float *a, double egl, int angle)
{
    float k = t / (o + 1e-30f);
    k = k < 0.0f ? 0.0f : (k > 1.0f ? 1.0f : k);
    float rst = k * o;
    if (angle && rst > 0.0)
        rst = (float)fmin(rst * egl, t);
    if (angle && rst < 0.0)
        rst = (float)fmax(rst * egl, t);
    *r = rst;
    *a = t - rst;
}

static float pterm(float x, double p)
{
    return p == 3.0 ? x * x * x : powf(x, (float)p);
}

static int mirror_cm(int i, int n)
{
    if (i < 0)
        return 1;
    if (i >= n)
        return n - 1;
    return i;
}

/* adm_cm_s: src = the measured bands (unweighted), msk = the masking bands
 * (unweighted; CSF-weighted here). Returns the three per-band float sums. */
static void cm_sums(float *const src[3], float *const msk[3], const float rf[3], int w, int h,
                    int left, int top, int right, int bottom, double p, int bypass,
                    float acc[3])
{
    acc[0] = acc[1] = acc[2] = 0.0f;
    for (int i = top; i < bottom; i++) {
        float inner[3] = {0.0f, 0.0f, 0.0f};
        for (int j = left; j < right; j++) {
            float thr = 0.0f;
            if (!bypass) {
                for (int t = 0; t < 3; t++) {
                    float sum = 0.0f;
                    for (int dy = -1; dy <= 1; dy++) {
                        int y = mirror_cm(i + dy, h);
                        for (int dx = -1; dx <= 1; dx++) {
                            int x = mirror_cm(j + dx, w);
                            float c = rf[t] * msk[t][(size_t)y * w + x];
                            if (dy == 0 && dx == 0)
                                sum = (float)((double)sum + ONE_BY_15 * (double)fabsf(c));
                            else
                                sum += (float)(ONE_BY_30 * (double)fabsf(c));
                        }
                    }
                    thr += sum;
                }
            }
            for (int t = 0; t < 3; t++) {
                float x = src[t][(size_t)i * w + j] * rf[t];
                x = fabsf(x) - thr;
                x = x < 0.0f ? 0.0f : x;
                inner[t] += pterm(x, p);
            }
        }
        for (int t = 0; t < 3; t++)
            acc[t] += inner[t];
    }
}

static float pool(const float acc[3], int area_w, int area_h, double weight, double p)
{
    /* powf(accum, 1.0f / p) + get_noise_constant(w, h, weight, p) */
    float e = (float)(1.0f / p);
    float nc = powf((float)(area_w * area_h * weight), e);
    float b0 = powf(acc[0], e) + nc;
    float b1 = powf(acc[1], e) + nc;
    float b2 = powf(acc[2], e) + nc;
    return b0 + b1 + b2;
}

int float_adm_ref_compute(const void *ref, const void *dis, int w, int h, ptrdiff_t stride,
                          int bpc, const FloatAdmRefOpts *o, FloatAdmRefResult *out)
{
    size_t n = (size_t)w * h;
    int bw0 = (w + 1) / 2, bh0 = (h + 1) / 2;
    size_t bn = (size_t)bw0 * bh0;
    float *img[2], *band[2][4], *rb[3], *ab[3], *tmplo, *tmphi;
    float *mem = malloc(sizeof(float) * (2 * n + 14 * bn + 2 * (size_t)w));
    if (!mem)
        return -1;
    float *p = mem;
    img[0] = p, p += n;
    img[1] = p, p += n;
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < 4; b++)
            band[k][b] = p, p += bn;
    for (int b = 0; b < 3; b++)
        rb[b] = p, p += bn;
    for (int b = 0; b < 3; b++)
        ab[b] = p, p += bn;
    tmplo = p, p += w;
    tmphi = p;

    /* picture_copy: sample / 2^(bpc-8) - 128 in float */
    float sc = 1.0f / (float)(1 << (bpc - 8));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t si = (size_t)y * stride + x;
            unsigned vr = bpc == 8 ? ((const uint8_t *)ref)[si] : ((const uint16_t *)ref)[si];
            unsigned vd = bpc == 8 ? ((const uint8_t *)dis)[si] : ((const uint16_t *)dis)[si];
            img[0][(size_t)y * w + x] = (float)vr * sc - 128.0f;
            img[1][(size_t)y * w + x] = (float)vd * sc - 128.0f;
        }

    const float cos1sq = cos(1.0 * M_PI / 180.0) * cos(1.0 * M_PI / 180.0);
    double num = 0, den = 0, aim_num = 0;
    int cw = w, ch = h;
    for (int s = 0; s < 4; s++) {
        float *srcr = s ? band[0][0] : img[0];
        float *srcd = s ? band[1][0] : img[1];
        /* in place is safe: the band a of scale s-1 is consumed row by row
         * ahead of the writes? No: copy it first. */
        float *cr = malloc(sizeof(float) * (size_t)cw * ch * 2);
        if (!cr) {
            free(mem);
            return -1;
        }
        memcpy(cr, srcr, sizeof(float) * (size_t)cw * ch);
        memcpy(cr + (size_t)cw * ch, srcd, sizeof(float) * (size_t)cw * ch);
        dwt2(cr, cw, ch, band[0], tmplo, tmphi);
        dwt2(cr + (size_t)cw * ch, cw, ch, band[1], tmplo, tmphi);
        free(cr);
        int bw = (cw + 1) / 2, bh = (ch + 1) / 2;
        cw = bw;
        ch = bh;

        int left = bw * 0.1 - 0.5, top = bh * 0.1 - 0.5;
        int right = bw - left, bottom = bh - top;
        float rf[3];
        factors(o, s, rf);

        if (s == 0 && o->skip_scale0) {
            out->num[s] = 0.0f;
            out->den[s] = 1e-10f;
            out->aim_num[s] = 0.0f;
        } else {
            for (size_t q = 0; q < (size_t)bw * bh; q++) {
                float oh = band[0][1][q], ov = band[0][2][q], od = band[0][3][q];
                float th = band[1][1][q], tv = band[1][2][q], td = band[1][3][q];
                float ot_dp = oh * th + ov * tv;
                float o_mag = oh * oh + ov * ov;
                float t_mag = th * th + tv * tv;
                int angle = (ot_dp >= 0.0f) && (ot_dp * ot_dp >= cos1sq * o_mag * t_mag);
                decouple(oh, th, &rb[0][q], &ab[0][q], o->egl, angle);
                decouple(ov, tv, &rb[1][q], &ab[1][q], o->egl, angle);
                decouple(od, td, &rb[2][q], &ab[2][q], o->egl, angle);
            }
            /* den */
            float acc[3] = {0, 0, 0};
            for (int i = top; i < bottom; i++) {
                float inner[3] = {0, 0, 0};
                for (int j = left; j < right; j++)
                    for (int t = 0; t < 3; t++) {
                        float v = fabsf(rf[t] * band[0][1 + t][(size_t)i * bw + j]);
                        inner[t] += pterm(v, o->p_norm);
                    }
                for (int t = 0; t < 3; t++)
                    acc[t] += inner[t];
            }
            out->den[s] = pool(acc, right - left, bottom - top, o->nw, o->p_norm);
            cm_sums(rb, ab, rf, bw, bh, left, top, right, bottom, o->p_norm, o->bypass_cm, acc);
            out->num[s] = pool(acc, right - left, bottom - top, o->nw, o->p_norm);
            if (s == o->skip_aim_scale) {
                out->aim_num[s] = 0.0f;
            } else {
                cm_sums(ab, rb, rf, bw, bh, left, top, right, bottom, o->p_norm, o->bypass_cm,
                        acc);
                out->aim_num[s] = pool(acc, right - left, bottom - top, 0.0, o->p_norm);
            }
        }
        num += out->num[s];
        den += out->den[s];
        aim_num += out->aim_num[s];
    }
    free(mem);

    double limit = 1e-10 * (w * h) / (1920.0 * 1080.0);
    num = num < limit ? 0 : num;
    den = den < limit ? 0 : den;
    aim_num = aim_num < limit ? 0 : aim_num;
    out->num_total = num;
    out->den_total = den;
    out->adm2 = den == 0.0 ? 1.0 : num / den;
    out->aim = den == 0.0 ? 0.0 : aim_num / den;
    /* float_adm.c: MAX(2 adm2 aim / (adm2 + aim), min) with adm_adm3_apply_hm,
     * else MAX(adm2 dlmw + (1 - aim)(1 - dlmw), min) */
    double a3;
    if (o->apply_hm)
        a3 = 2 * out->adm2 * out->aim / (out->adm2 + out->aim);
    else
        a3 = out->adm2 * o->dlmw + (1 - out->aim) * (1 - o->dlmw);
    out->adm3 = a3 > o->min_val ? a3 : o->min_val;
    for (int s = 0; s < 4; s++)
        out->scale[s] = (s == 0 && o->skip_scale0) ? 0.0 : (double)out->num[s] / out->den[s];
    return 0;
}
