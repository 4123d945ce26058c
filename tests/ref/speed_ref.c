/* Deliberately independent reference: written from libvmaf's arithmetic for tests/test_speed.c,
 * apart from libqgpu/src/feature/speed.c / speed.cl / speed_linalg.c. It uses only
 * speed_linalg.c's filter taps, eigenvalues and pair score; its plain-form estimation
 * (speed_ref_estimate) is what speed_linalg.c's fast one must equal bit for bit. Where the two
 * implement the same step, `duplicates` pairs them: that repeat is the point (two
 * implementations held against each other), not something to fold. */
/*
 * speed_chroma reference, written like libvmaf does it: the whole chroma
 * plane to float (value / 2^(bpc-8) - 128), the whole plane resized
 * (nearest / bilinear), the whole plane filtered with the anti-alias
 * Gaussian (vertical pass, then horizontal, reflect-101), every 16th sample
 * kept, the 3-tap blur of the decimated image subtracted. The estimation on
 * the band-pass image (covariance, QR, entropies) is written out here in its
 * plain form (speed_ref_estimate); the filter taps, the eigenvalues and the
 * pair score come from the library's speed_linalg.c.
 */
#include "speed_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "speed_linalg.h"
#include "test_util.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_E
#define M_E 2.7182818284590452354
#endif

/* ---- estimation, plain form ---------------------------------------------
 * libvmaf's est_params() written the straightforward way (one covariance
 * sum at a time, full-matrix Householder QR), as the library had it before
 * its faster form; the library's speed_estimate() must give the same bits.
 * The eigenvalues come from the library (speed_eigenvalues, unchanged). */

#define REF_EIG_EPS 1e-6

static int ref_sgn(float x)
{
    return x >= 0 ? 1 : -1;
}

/* dst = x * y for n x n times n x m, float, k-sequential per element */
static void mat_mul(float *dst, const float *x, const float *y, int n, int m)
{
    memset(dst, 0, sizeof(float) * n * m);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++)
            for (int j = 0; j < m; j++)
                dst[i * m + j] += x[i * n + k] * y[k * m + j];
}

static float vec_norm(const float *v, int n)
{
    float s = 0;
    for (int i = 0; i < n; i++)
        s += v[i] * v[i];
    return sqrt(s);
}

/* Q^T (accumulated reflector product, "Q before its transpose") and R,
 * with full n x n products. Kept apart from the library's qr_decompose()
 * on purpose: an independent plain form, so a change there cannot move
 * both sides of test_speed's bit-exact comparison. */
static void qr_decompose(const float *a, float *qt, float *r, int n)
{
    float z[SPEED_N * SPEED_N], h[SPEED_N * SPEED_N], t[SPEED_N * SPEED_N], v[SPEED_N];
    memcpy(z, a, sizeof(z[0]) * n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            qt[i * n + j] = i == j ? 1 : 0;
    for (int k = 0; k < n - 1; k++) {
        /* minor: rows and columns before k become the identity */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (i < k || j < k)
                    z[i * n + j] = i == j ? 1 : 0;
        for (int i = 0; i < n; i++)
            v[i] = z[i * n + k];
        float norm = vec_norm(v, n);
        int sign = ref_sgn(a[k * n + k]); /* the original matrix's diagonal */
        v[k] += sign * norm;
        float vn = vec_norm(v, n);
        for (int i = 0; i < n; i++)
            v[i] = v[i] / vn;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                h[i * n + j] = -2 * v[i] * v[j];
        for (int i = 0; i < n; i++)
            h[i * n + i] += 1;
        mat_mul(t, h, z, n, n);
        memcpy(z, t, sizeof(z[0]) * n * n);
        mat_mul(t, h, qt, n, n);
        memcpy(qt, t, sizeof(z[0]) * n * n);
    }
    mat_mul(r, qt, a, n, n);
}

/* back substitution R X = B (n x m); -1 when a pivot is below 1e-6 */
static int back_subst(const float *r, float *x, const float *b, int n, int m)
{
    for (int i = n - 1; i >= 0; i--) {
        float den = r[i * n + i];
        if (fabsf(den) < REF_EIG_EPS)
            return -1;
        for (int j = 0; j < m; j++) {
            float t = b[i * m + j];
            for (int k = i + 1; k < n; k++)
                t -= x[k * m + j] * r[i * n + k];
            x[i * m + j] = t / den;
        }
    }
    return 0;
}

static void covariance(const SpeedGeometry *g, const float *data, size_t stride, float *cov)
{
    float means[SPEED_N];
    const int sw = g->sub_w, sh = g->sub_h;
    for (int r = 0; r < SPEED_BLOCK; r++) {
        for (int c = 0; c < SPEED_BLOCK; c++) {
            float s = 0;
            for (int i = 0; i < sh; i++)
                for (int j = 0; j < sw; j++)
                    s += data[(size_t)(r + i) * stride + (c + j)];
            means[r * SPEED_BLOCK + c] = s / (float)((size_t)sw * sh);
        }
    }
    for (int xi = 0; xi < SPEED_N; xi++) {
        for (int yi = 0; yi <= xi; yi++) {
            const float *px = data + (size_t)(xi / SPEED_BLOCK) * stride + xi % SPEED_BLOCK;
            const float *py = data + (size_t)(yi / SPEED_BLOCK) * stride + yi % SPEED_BLOCK;
            double mx = means[xi], my = means[yi], acc = 0;
            for (int i = 0; i < sh; i++)
                for (int j = 0; j < sw; j++)
                    acc += ((double)px[(size_t)i * stride + j] - mx) *
                           ((double)py[(size_t)i * stride + j] - my);
            float v = acc / (double)((size_t)sw * sh);
            cov[xi * SPEED_N + yi] = v;
            cov[yi * SPEED_N + xi] = v;
        }
    }
}

void speed_ref_estimate(const SpeedGeometry *g, const float *data, size_t stride, float sigma_nn,
                        SpeedWork *w, SpeedEstimate *out)
{
    float cov[SPEED_N * SPEED_N], eig[SPEED_N];
    const int nb = g->nblocks;
    int singular = 0;

    covariance(g, data, stride, cov);
    speed_eigenvalues(cov, SPEED_N, eig);

    /* Y: row e = position (si, sj) inside the block, column = block */
    for (int si = 0; si < SPEED_BLOCK; si++)
        for (int sj = 0; sj < SPEED_BLOCK; sj++)
            for (int bi = 0; bi < g->nbv; bi++)
                for (int bj = 0; bj < g->nbh; bj++)
                    w->y[(size_t)(si * SPEED_BLOCK + sj) * nb + bi * g->nbh + bj] =
                        data[(size_t)(bi * SPEED_BLOCK + si) * stride + bj * SPEED_BLOCK + sj];

    for (int k = 0; k < SPEED_N; k++)
        if (eig[k] < REF_EIG_EPS)
            singular = 1;
    if (!singular) {
        float qt[SPEED_N * SPEED_N], r[SPEED_N * SPEED_N];
        qr_decompose(cov, qt, r, SPEED_N);
        mat_mul(w->qb, qt, w->y, SPEED_N, nb);
        singular = back_subst(r, w->x, w->qb, SPEED_N, nb) != 0;
    }
    if (singular)
        memset(w->x, 0, sizeof(float) * (size_t)nb * SPEED_N);

    /* S = column sums of X .* Y / 25 (row by row, in float) */
    const float denom = (float)SPEED_N;
    for (int j = 0; j < nb; j++)
        out->variances[j] = (w->x[j] * w->y[j]) / denom;
    for (int e = 1; e < SPEED_N; e++)
        for (int j = 0; j < nb; j++)
            out->variances[j] += (w->x[(size_t)e * nb + j] * w->y[(size_t)e * nb + j]) / denom;

    const double c2pie = log2(2 * M_PI * M_E);
    for (int j = 0; j < nb; j++)
        out->entropies[j] = 0;
    for (int k = 0; k < SPEED_N; k++) {
        float l = eig[k] < 0 ? 0 : eig[k];
        for (int j = 0; j < nb; j++)
            out->entropies[j] += log2(l * out->variances[j] + sigma_nn) + c2pie;
    }
    out->singular = singular;
}


void speed_ref_defaults(SpeedRefOptions *o)
{
    o->kernelscale = 1.0;
    o->prescale = 1.0;
    o->sigma_nn = 0.29;
    o->nn_floor = 0.0;
    o->max_val = 1000.0;
    o->bilinear = 0;
    o->wvm = 0;
}

static int mirror(int i, int n)
{
    return i < 0 ? -i : (i >= n ? 2 * n - i - 2 : i);
}

/* separable filter, whole image: dst = H(V(src)) */
static void filter(const float *src, float *dst, int w, int h, const float *f, int fw)
{
    float *tmp = malloc(sizeof(float) * w);
    for (int i = 0; i < h; i++) {
        for (int j = 0; j < w; j++) {
            float acc = 0;
            for (int k = 0; k < fw; k++)
                acc += f[k] * src[(size_t)mirror(i - fw / 2 + k, h) * w + j];
            tmp[j] = acc;
        }
        for (int j = 0; j < w; j++) {
            float acc = 0;
            for (int k = 0; k < fw; k++)
                acc += f[k] * tmp[mirror(j - fw / 2 + k, w)];
            dst[(size_t)i * w + j] = acc;
        }
    }
    free(tmp);
}

/* band-pass image of one chroma plane, trunc_w x trunc_h */
static void bandpass(const QgpuPicture *pic, int plane, const SpeedGeometry *g,
                     const SpeedRefOptions *o, float *out)
{
    const int w = g->src_w, h = g->src_h, sw = g->scaled_w, sh = g->scaled_h;
    const float scale = (float)(1 << (pic->bitdepth - 8));
    float *plane_f = malloc(sizeof(float) * w * h);
    float *scaled = malloc(sizeof(float) * sw * sh);
    float *filt = malloc(sizeof(float) * sw * sh);
    float *dec = malloc(sizeof(float) * g->dec_w * g->dec_h);
    float *blur = malloc(sizeof(float) * g->dec_w * g->dec_h);
    float taps[SPEED_MAX_TAPS];
    float ks = (float)o->kernelscale;

    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float v = (float)test_sample(pic, plane, x, y);
            plane_f[y * w + x] = pic->bitdepth == 8 ? v + -128.0f : v / scale + -128.0f;
        }
    if (!g->resample) {
        memcpy(scaled, plane_f, sizeof(float) * w * h);
    } else {
        int *x1 = malloc(sizeof(int) * sw), *x2 = malloc(sizeof(int) * sw);
        int *y1 = malloc(sizeof(int) * sh), *y2 = malloc(sizeof(int) * sh);
        float *dx = malloc(sizeof(float) * sw), *dy = malloc(sizeof(float) * sh);
        speed_scale_table(o->bilinear, w, sw, x1, x2, dx);
        speed_scale_table(o->bilinear, h, sh, y1, y2, dy);
        for (int y = 0; y < sh; y++)
            for (int x = 0; x < sw; x++) {
                float a = plane_f[y1[y] * w + x1[x]];
                if (!o->bilinear) {
                    scaled[y * sw + x] = a;
                    continue;
                }
                float b = plane_f[y1[y] * w + x2[x]], c = plane_f[y2[y] * w + x1[x]];
                float d = plane_f[y2[y] * w + x2[x]];
                float fx = dx[x], fy = dy[y];
                scaled[y * sw + x] = (1 - fy) * (1 - fx) * a + (1 - fy) * fx * b +
                                     fy * (1 - fx) * c + fy * fx * d;
            }
        free(x1);
        free(x2);
        free(y1);
        free(y2);
        free(dx);
        free(dy);
    }
    speed_antialias_filter(taps, SPEED_NUM_SCALES, ks);
    filter(scaled, filt, sw, sh, taps, speed_filter_size(1, ks));
    for (int i = 0; i < g->dec_h; i++)
        for (int j = 0; j < g->dec_w; j++)
            dec[i * g->dec_w + j] = filt[(size_t)(16 * i) * sw + 16 * j];
    speed_lowpass_filter(taps, SPEED_NUM_SCALES, ks);
    filter(dec, blur, g->dec_w, g->dec_h, taps, speed_filter_size(SPEED_NUM_SCALES, ks));
    for (int i = 0; i < g->trunc_h; i++)
        for (int j = 0; j < g->trunc_w; j++)
            out[i * g->trunc_w + j] = dec[i * g->dec_w + j] - blur[i * g->dec_w + j];
    free(plane_f);
    free(scaled);
    free(filt);
    free(dec);
    free(blur);
}

int speed_ref(const QgpuPicture *ref, const QgpuPicture *dis, const SpeedRefOptions *o,
              double out[3])
{
    SpeedGeometry g;
    int w = ref->width, h = ref->height;
    if (ref->layout == QGPU_LAYOUT_420) {
        w /= 2;
        h /= 2;
    } else if (ref->layout == QGPU_LAYOUT_422) {
        w /= 2;
    }
    if (speed_geometry(&g, w, h, o->prescale))
        return -1;
    SpeedWork work;
    if (speed_work_alloc(&work, g.nblocks))
        return -1;
    float *band = malloc(sizeof(float) * g.trunc_w * g.trunc_h);
    float *buf = malloc(sizeof(float) * g.nblocks * 4);
    float score[2];
    int singular[2];
    for (int p = 0; p < 2; p++) {
        SpeedEstimate e[2] = {{buf, buf + g.nblocks, 0},
                              {buf + 2 * g.nblocks, buf + 3 * g.nblocks, 0}};
        bandpass(ref, p + 1, &g, o, band);
        speed_ref_estimate(&g, band, g.trunc_w, (float)o->sigma_nn, &work, &e[0]);
        bandpass(dis, p + 1, &g, o, band);
        speed_ref_estimate(&g, band, g.trunc_w, (float)o->sigma_nn, &work, &e[1]);
        score[p] = speed_pair_score(&g, &e[0], &e[1], (float)o->sigma_nn, (float)o->nn_floor,
                                    o->wvm);
        singular[p] = e[0].singular || e[1].singular;
    }
    float uv = singular[0] && !singular[1]   ? score[1]
               : singular[1] && !singular[0] ? score[0]
                                             : (score[0] + score[1]) / 2.0;
    out[0] = score[0] < o->max_val ? score[0] : o->max_val;
    out[1] = score[1] < o->max_val ? score[1] : o->max_val;
    out[2] = uv < o->max_val ? uv : o->max_val;
    free(band);
    free(buf);
    speed_work_free(&work);
    return 0;
}
