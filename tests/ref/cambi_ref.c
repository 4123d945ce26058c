/* Deliberately independent reference: written from libvmaf's arithmetic for tests/test_cambi.c,
 * sharing no code with libqgpu/src/feature/cambi.c / cambi.cl. Where the two implement the same
 * step, `duplicates` pairs them: that repeat is the point (two implementations held against each
 * other), not something to fold. */
/*
 * Plain-C reference of libvmaf's CAMBI; see cambi_ref.h.
 *
 * Constants and formulas are those of libvmaf 3.2.0 cambi.c /
 * luminance_tools.c (facts, re-implemented here):
 *   - scale weights {16, 8, 4, 2, 1}, contrast weights g[0..31]
 *   - 7x7 zero-derivative count, threshold
 *     (49 + 3 * (ceil_log2((w >> 6) * (h >> 6)) - 11) - 1) >> 1
 *   - window = ((ws * (w + h)) / 375) >> 4, halved (rounded up) with the
 *     high-res speed-up, then made odd
 *   - BT.1886: Lw 300, Lb 0.01, gamma 2.4; PQ: SMPTE ST 2084 constants;
 *     10-bit limited range [64, 940].
 */
#include "cambi_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NUM_SCALES 5

static const int scale_weights[NUM_SCALES] = {16, 8, 4, 2, 1};
static const int contrast_weights[32] = {1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8,
                                         8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};

void cambi_ref_default_options(CambiRefOptions *o)
{
    memset(o, 0, sizeof(*o));
    o->window_size = 65;
    o->topk = 0.6;
    o->tvi_threshold = 0.019;
    o->max_log_contrast = 2;
    o->max_val = 1000.0;
}

/* ---- luminance model (10-bit limited range) ---- */

enum { FOOT = 64, HEAD = 940 };

static double eotf_bt1886(double v)
{
    double lw = pow(300.0, 1.0 / 2.4), lb = pow(0.01, 1.0 / 2.4);
    double a = pow(lw - lb, 2.4);
    double b = lb / (lw - lb);
    double x = v + b;
    return a * pow(x > 0 ? x : 0, 2.4);
}

static double eotf_pq(double v)
{
    const double m1 = 0.1593017578125, m2 = 78.84375;
    const double c1 = 0.8359375, c2 = 18.8515625, c3 = 18.6875;
    double p = pow(v, 1.0 / m2);
    double num = p - c1;
    if (num < 0)
        num = 0;
    return 10000.0 * pow(num / (c2 - c3 * p), 1.0 / m1);
}

static double luminance(int sample, int pq)
{
    int s = sample < FOOT ? FOOT : sample > HEAD ? HEAD : sample;
    double v = (double)(s - FOOT) / (HEAD - FOOT);
    return pq ? eotf_pq(v) : eotf_bt1886(v);
}

/* Is a step of `diff` codes up from `sample` visible? */
static int visible(int sample, int diff, double thr, int pq)
{
    double l0 = luminance(sample, pq);
    double l1 = luminance(sample + diff, pq);
    return l1 - l0 > thr * l0;
}

/* Highest sample where a step of diff is still visible and the next is not
 * (bisection over [FOOT, HEAD - diff - 1]); 0 when not visible at FOOT,
 * 1023 when still visible at the top. */
static int tvi_for_diff(int diff, double thr, int pq)
{
    int lo = FOOT, hi = HEAD - diff - 1;
    if (!visible(lo, diff, thr, pq))
        return 0;
    if (!visible(lo + 1, diff, thr, pq))
        return lo;
    if (visible(hi, diff, thr, pq)) {
        if (visible(hi + 1, diff, thr, pq))
            return 1023;
        return hi;
    }
    for (;;) {
        int mid = lo + (hi - lo) / 2;
        if (!visible(mid, diff, thr, pq))
            hi = mid;
        else if (visible(mid + 1, diff, thr, pq))
            lo = mid;
        else
            return mid;
    }
}

/* First code at or above FOOT whose luminance reaches the threshold; 0 when
 * that is FOOT itself. */
static int vlt_luma(double thr, int pq)
{
    int s = FOOT;
    while (s < 65535 && luminance(s, pq) < thr)
        s++;
    return s == FOOT ? 0 : s;
}

static int adjusted_window(int ws, int w, int h, int hrs)
{
    int a = ((ws * (w + h)) / 375) >> 4;
    if (hrs)
        a = (a + 1) >> 1;
    return a | 1;
}

static int ceil_log2(unsigned n)
{
    int s = 0;
    if (n == 0)
        return 0;
    n -= 1;
    while (n) {
        n >>= 1;
        s++;
    }
    return s;
}

static int mask_threshold(int w, int h)
{
    unsigned wh = (unsigned)(w >> 6) * (unsigned)(h >> 6);
    return (7 * 7 + 3 * (ceil_log2(wh) - 11) - 1) >> 1;
}

/* ---- stages ---- */

static int read_sample(const void *luma, ptrdiff_t stride, int bitdepth, int x, int y)
{
    const uint8_t *row = (const uint8_t *)luma + (ptrdiff_t)y * stride;
    if (bitdepth == 8)
        return row[x];
    /* byte reads: rows of an odd byte stride are not 2-byte aligned (UBSan) */
    return row[2 * x] | row[2 * x + 1] << 8;
}

static int to_10bit(int v, int bitdepth)
{
    if (bitdepth <= 10)
        return v << (10 - bitdepth);
    int shift = bitdepth - 10;
    return (v + (1 << (shift - 1))) >> shift;
}

/* Nearest-neighbour source index of every output index, as libvmaf walks it:
 * a float position that starts at ratio/2 - 0.5 and grows by ratio. */
static void resize_map(int in, int out, int *map)
{
    if (in == out) {
        for (int i = 0; i < out; i++)
            map[i] = i;
        return;
    }
    float ratio = (float)in / (float)out;
    float pos = (float)((double)(ratio / 2) - 0.5);
    for (int i = 0; i < out; i++) {
        map[i] = (int)((double)pos + 0.5);
        pos += ratio;
    }
}

static int mode3(int a, int b, int c)
{
    if (a == b || a == c)
        return a;
    if (b == c)
        return b;
    int m = a < b ? a : b;
    return m < c ? m : c;
}

static void mode_filter(uint16_t *img, int w, int h)
{
    uint16_t *hor = malloc(sizeof(*hor) * (size_t)w * h);
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            const uint16_t *r = img + (size_t)i * w;
            hor[(size_t)i * w + j] =
                (j == 0 || j == w - 1) ? r[j] : (uint16_t)mode3(r[j - 1], r[j], r[j + 1]);
        }
    for (int i = 1; i < h - 1; i++)
        for (int j = 0; j < w; j++)
            img[(size_t)i * w + j] = (uint16_t)mode3(hor[(size_t)(i - 1) * w + j],
                                                     hor[(size_t)i * w + j],
                                                     hor[(size_t)(i + 1) * w + j]);
    free(hor);
}

static int cmp_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

int cambi_ref_score(const CambiRefOptions *o, const void *luma, ptrdiff_t stride,
                    int in_w, int in_h, int bitdepth, int is_src, double *score)
{
    int enc_w = o->enc_width, enc_h = o->enc_height;
    int src_w = o->src_width, src_h = o->src_height;
    int enc_bd = o->enc_bitdepth ? o->enc_bitdepth : bitdepth;
    if (enc_w == 0 || enc_h == 0) {
        enc_w = in_w;
        enc_h = in_h;
    }
    if (src_w == 0 || src_h == 0) {
        src_w = in_w;
        src_h = in_h;
    }
    if (enc_w > in_w || enc_h > in_h) {
        enc_w = in_w;
        enc_h = in_h;
    }
    if ((enc_w < 216 && enc_h < 216) || (src_w < 216 && src_h < 216))
        return -1;
    if ((src_w > enc_w && src_h < enc_h) || (src_w < enc_w && src_h > enc_h))
        return -1;
    long enc_pix = (long)enc_w * enc_h;
    int hrs = 0;
    if ((o->high_res_speedup == 1080 && enc_pix >= 1920L * 1080) ||
        (o->high_res_speedup == 1440 && enc_pix >= 2560L * 1440) ||
        (o->high_res_speedup == 2160 && enc_pix >= 3840L * 2160))
        hrs = 1;

    int w = is_src ? src_w : enc_w;
    int h = is_src ? src_h : enc_h;
    int ws = adjusted_window(o->window_size, w, h, hrs);
    int pad = ws >> 1;
    int nd = 1 << o->max_log_contrast;
    int tvi[32];
    for (int d = 0; d < nd; d++)
        tvi[d] = tvi_for_diff(d + 1, o->tvi_threshold, o->eotf_pq);
    int vlt = vlt_luma(o->vis_lum_threshold, o->eotf_pq);

    /* 1. 10-bit luma at the working size */
    int *mx = malloc(sizeof(int) * w), *my = malloc(sizeof(int) * h);
    resize_map(in_w, w, mx);
    resize_map(in_h, h, my);
    uint16_t *img = malloc(sizeof(*img) * (size_t)w * h);
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++)
            img[(size_t)i * w + j] =
                (uint16_t)to_10bit(read_sample(luma, stride, bitdepth, mx[j], my[i]), bitdepth);
    free(mx);
    free(my);

    /* 2. anti-dithering: average with the right/lower neighbours */
    if (enc_bd < 10) {
        uint16_t *t = malloc(sizeof(*t) * (size_t)w * h);
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                int r = j + 1 < w, d = i + 1 < h;
                int p = img[(size_t)i * w + j];
                if (r && d)
                    p = (p + img[(size_t)i * w + j + 1] + img[(size_t)(i + 1) * w + j] +
                         img[(size_t)(i + 1) * w + j + 1]) >> 2;
                else if (d)
                    p = (p + img[(size_t)(i + 1) * w + j]) >> 1;
                else if (r)
                    p = (p + img[(size_t)i * w + j + 1]) >> 1;
                t[(size_t)i * w + j] = (uint16_t)p;
            }
        free(img);
        img = t;
    }

    /* 3. spatial mask: 7x7 count of zero-derivative pixels */
    uint8_t *zero = malloc((size_t)w * h);
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            int p = img[(size_t)i * w + j];
            int hz = j == w - 1 || p == img[(size_t)i * w + j + 1];
            int vz = i == h - 1 || p == img[(size_t)(i + 1) * w + j];
            zero[(size_t)i * w + j] = (uint8_t)(hz && vz);
        }
    int mthr = mask_threshold(w, h);
    uint8_t *mask = malloc((size_t)w * h);
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            int n = 0;
            for (int y = i - 3; y <= i + 3; y++)
                for (int x = j - 3; x <= j + 3; x++)
                    if (y >= 0 && y < h && x >= 0 && x < w)
                        n += zero[(size_t)y * w + x];
            mask[(size_t)i * w + j] = n > mthr;
        }
    free(zero);

    /* 4. scales */
    double pooled[NUM_SCALES];
    int sw = w, sh = h;
    for (int s = 0; s < NUM_SCALES; s++) {
        if (s > 0 || hrs) {
            int nw = (sw + 1) >> 1, nh = (sh + 1) >> 1;
            for (int i = 0; i < nh; i++)
                for (int j = 0; j < nw; j++) {
                    img[(size_t)i * nw + j] = img[(size_t)(2 * i) * sw + 2 * j];
                    mask[(size_t)i * nw + j] = mask[(size_t)(2 * i) * sw + 2 * j];
                }
            sw = nw;
            sh = nh;
        }
        mode_filter(img, sw, sh);

        float *c = calloc((size_t)sw * sh, sizeof(float));
        for (int i = 0; i < sh; i++)
            for (int j = 0; j < sw; j++) {
                if (!mask[(size_t)i * sw + j])
                    continue;
                int v = img[(size_t)i * sw + j];
                /* counts of v-nd .. v+nd among masked window pixels */
                int cnt[65] = {0};
                for (int y = i - pad; y <= i + pad; y++)
                    for (int x = j - pad; x <= j + pad; x++) {
                        if (y < 0 || y >= sh || x < 0 || x >= sw)
                            continue;
                        if (!mask[(size_t)y * sw + x])
                            continue;
                        int k = img[(size_t)y * sw + x] - v;
                        if (k >= -nd && k <= nd)
                            cnt[k + nd]++;
                    }
                int p0 = cnt[nd];
                float best = 0.0f;
                for (int d = 0; d < nd; d++) {
                    if (v > tvi[d] || v + nd + d + 1 <= vlt)
                        continue;
                    int p1 = cnt[nd + d + 1], p2 = cnt[nd - d - 1];
                    int p = p1 > p2 ? p1 : p2;
                    float val = (float)(contrast_weights[d] * p0 * p) / (float)(p + p0);
                    if (val > best)
                        best = val;
                }
                c[(size_t)i * sw + j] = best;
            }

        int n = sw * sh;
        double kd = o->topk * n;
        int k = (int)kd;
        if (k < 1)
            k = 1;
        if (k > n)
            k = n;
        qsort(c, (size_t)n, sizeof(float), cmp_desc);
        double sum = 0;
        for (int t = 0; t < k; t++)
            sum += c[t];
        pooled[s] = sum / k;
        free(c);
    }
    free(img);
    free(mask);

    double total = 0;
    for (int s = 0; s < NUM_SCALES; s++)
        total += pooled[s] * scale_weights[s];
    *score = total / (double)(ws * ws);
    return 0;
}
