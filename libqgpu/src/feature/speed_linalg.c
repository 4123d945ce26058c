/*
 * SpEED host arithmetic (see speed_linalg.h). Formulas, constants and the
 * order of float operations follow libvmaf 3.2 (libvmaf/src/feature/speed.c
 * and vif_tools.c); the code is our own. Why on the host: the 25x25 work is
 * one small matrix per plane and image (about 0.2 ms at 1080p), strictly
 * sequential (Householder/QR iterations), and its result is only
 * reproducible when every float operation happens in libvmaf's order, which
 * a host loop gives for free. The covariance sums are double in libvmaf,
 * which OpenCL 1.2 devices need not have; where they do, speed.cl's
 * speed_moments can compute them (QGPU_SPEED_FP64=1) and
 * speed_estimate_sums() takes them from there.
 *
 * Speed without changing a single float: the 325 covariance sums advance
 * together, position by position (each is still one chain in libvmaf's
 * order, but the chains vectorise across each other), and the Householder
 * QR skips the products that are exactly zero (qr_decompose_fast, with the
 * argument why the floats stay the same). tests/ref/speed_ref.c keeps the
 * plain form of the estimation and tests/test_speed.c compares bit for bit.
 *
 * Type rules that matter (C promotions as in libvmaf): sqrt/log2/exp of a
 * float are evaluated in double and rounded back to float where libvmaf
 * stores into a float; literals such as 0.5 or 2.0 make an expression double.
 */
#include "speed_linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_E
#define M_E 2.7182818284590452354
#endif

/* The estimation is most of speed_chroma's host time: four images a
 * frame, 0.2-0.5 ms each (1080p), ~8 cores at VMAF v1's 4,000 frames/s on
 * the H200's host. On x86-64 Linux the workers marked SPEED_CLONES are
 * built twice, for AVX2 and for any x86-64, and the loader picks one
 * (target_clones; Makefile: this file at -O3). Same operations in the same
 * order either way: vectors only run independent sums side by side, FMA
 * is not among the targets and ISO C (-std=c11) contracts nothing, so the
 * floats are the same bits (tests/test_speed.c compares them with
 * tests/ref/speed_ref.c). */
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define SPEED_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef SPEED_CLONES
#define SPEED_CLONES
#endif

#define EIG_EPS 1e-6          /* speed.c EIGENVALUE_EPS */
#define EIG_MAX_ITERS 500     /* speed.c EIGENVALUE_MAX_ITERS */
#define QR_W 28               /* padded row of the QR work matrices */

/* ---- filters (vif_tools.c) ---------------------------------------------- */

/* vif_tools.h valid_kernelscales (21 values, compared as floats within 1e-3) */
static const float valid_ks[21] = {
    1.0f, 1.0f / 2.0f, 3.0f / 2.0f, 2.0f, 2.0f / 3.0f, 24.0f / 10.0f, 360.0f / 97.0f,
    4.0f / 3.0f, 3.5f / 3.0f, 3.75f / 3.0f, 4.25f / 3.0f, 5.0f / 3.0f, 3.0f, 1.0f / 2.25f,
    1.4746f, 1.54f, 1.6f, 1.06667f, 0.711111f, 0.740740f, 1.111111f,
};

int speed_kernelscale_valid(double ks)
{
    float k = (float)ks;
    for (int i = 0; i < 21; i++)
        if (fabsf(k - valid_ks[i]) < 1e-3)
            return 1;
    return 0;
}

static int odd_ceil(float f)
{
    int c = (int)ceil(f);
    return c % 2 == 0 ? c + 1 : c;
}

int speed_filter_size(int scale, float kernelscale)
{
    int n = (1 << (4 - scale)) + 1;
    int s = odd_ceil(n * kernelscale);
    return s > 3 ? s : 3;
}

static float gauss_pdf(float x, float stdev)
{
    float num = exp(-0.5 * x / stdev * x / stdev);
    float den = 1 / (stdev * sqrt(2 * M_PI));
    return num / den;
}

static void gauss_kernel(float *out, int size, float stdev)
{
    float sum = 0;
    int k = (size - 1) / 2;
    for (int i = 0; i < size; i++) {
        out[i] = gauss_pdf((float)(i - k), stdev);
        sum += out[i];
    }
    for (int i = 0; i < size; i++)
        out[i] /= sum;
}

void speed_lowpass_filter(float *out, int scale, float kernelscale)
{
    int size = speed_filter_size(scale, kernelscale);
    gauss_kernel(out, size, size / 5.0f);
}

void speed_antialias_filter(float *out, int scale, float kernelscale)
{
    /* always the size of the scale-1 filter, sigma times sqrt(scale) */
    int size = speed_filter_size(1, kernelscale);
    gauss_kernel(out, size, sqrt(scale) * size / 5.0f);
}

/* ---- geometry ----------------------------------------------------------- */

int speed_geometry(SpeedGeometry *g, int w, int h, double prescale)
{
    memset(g, 0, sizeof(*g));
    g->src_w = w;
    g->src_h = h;
    g->scaled_w = (int)(w * prescale + 0.5);
    g->scaled_h = (int)(h * prescale + 0.5);
    g->resample = fabs(prescale - 1.0) >= 1.0e-3;
    g->dec_w = g->scaled_w >> SPEED_NUM_SCALES;
    g->dec_h = g->scaled_h >> SPEED_NUM_SCALES;
    g->trunc_w = g->dec_w / SPEED_BLOCK * SPEED_BLOCK;
    g->trunc_h = g->dec_h / SPEED_BLOCK * SPEED_BLOCK;
    g->nbh = g->trunc_w / SPEED_BLOCK;
    g->nbv = g->trunc_h / SPEED_BLOCK;
    g->nblocks = g->nbh * g->nbv;
    g->sub_w = g->trunc_w - SPEED_BLOCK + 1;
    g->sub_h = g->trunc_h - SPEED_BLOCK + 1;
    return g->trunc_w == 0 || g->trunc_h == 0 ? -1 : 0;
}

/* vif_tools.c mirror() on floats */
static float fmirror(float i, float left, float right)
{
    return i < left ? -i : i > right ? 2 * right - i : i;
}

void speed_scale_table(int method, int src, int dst, int *i1, int *i2, float *d)
{
    float ratio = (float)src / dst;
    for (int x = 0; x < dst; x++) {
        if (method == 0) {
            i1[x] = i2[x] = (int)(x * ratio);
            d[x] = 0.0f;
        } else {
            float xx = (x + 0.5) * ratio - 0.5;
            int a = (int)fmirror(floor(xx), 0, src - 1);
            int b = (int)fmirror(ceil(xx), 0, src - 1);
            i1[x] = a;
            i2[x] = b;
            d[x] = xx - a;
        }
    }
}

/* ---- eigenvalues: Householder tridiagonalisation + implicit QR ---------- */

static int sgn(float x)
{
    return x >= 0 ? 1 : -1;
}

static float hyp(float x, float y)
{
    return sqrt(x * x + y * y);
}

static float col_norm(const float *a, int col, int r0, int n)
{
    float s = 0;
    for (int i = r0; i < n; i++)
        s += a[i * n + col] * a[i * n + col];
    return sqrt(s);
}

/* Householder vector of a[r0:n, col] (scaled so v[0] = 1 implicitly);
 * returns tau. */
static float householder(float *a, int col, int r0, int n)
{
    if (n - r0 == 1)
        return 0.0f;
    float xnorm = col_norm(a, col, r0 + 1, n);
    if (xnorm == 0.0f)
        return 0.0f;
    float alpha = a[r0 * n + col];
    float beta = -sgn(alpha) * hyp(alpha, xnorm);
    float tau = (beta - alpha) / beta;
    float s = alpha - beta;
    if (s != 0.0f) {
        for (int i = r0; i < n; i++)
            a[i * n + col] /= s;
        a[r0 * n + col] = beta;
    }
    return tau;
}

SPEED_CLONES static void tridiag(float *a, int n, float *d, float *sd)
{
    float v[SPEED_N], x[SPEED_N];
    for (int i = 0; i < n - 2; i++) {
        float tau = householder(a, i, i + 1, n);
        for (int j = i + 1; j < n; j++)
            v[j] = a[j * n + i];
        if (tau == 0.0f)
            continue;
        a[(i + 1) * n + i] = v[i + 1];
        v[i + 1] = 1.0f;
        int s = i + 1;
        for (int r = s; r < n; r++) {
            x[r] = 0.0f;
            for (int c = s; c < n; c++)
                x[r] += tau * a[r * n + c] * v[c];
        }
        float xv = 0;
        for (int r = s; r < n; r++)
            xv += x[r] * v[r];
        float alpha = -0.5 * tau * xv;
        for (int r = s; r < n; r++)
            x[r] += alpha * v[r];
        for (int r = s; r < n; r++)
            for (int c = s; c < n; c++)
                a[r * n + c] -= x[r] * v[c] + v[r] * x[c];
    }
    for (int i = 0; i < n; i++)
        d[i] = a[i * n + i];
    for (int i = 0; i < n - 1; i++)
        sd[i] = a[(i + 1) * n + i];
}

static void chop(float *d, float *sd, int n)
{
    for (int i = 0; i < n - 1; i++)
        if (fabsf(sd[i]) < EIG_EPS * (fabsf(d[i]) + fabsf(d[i + 1])))
            sd[i] = 0.0f;
}

static float wilkinson_shift(const float *d, const float *sd, int n)
{
    float ta = d[n - 2], tb = d[n - 1], tab = sd[n - 2];
    float dt = (ta - tb) / 2.0;
    if (dt > 0)
        return tb - tab * (tab / (dt + hyp(dt, tab)));
    if (dt == 0)
        return tb - fabsf(tab);
    return tb + tab * (tab / (-dt + hyp(dt, tab)));
}

static void givens(float a, float b, float *c, float *s)
{
    if (b == 0) {
        *c = 1;
        *s = 0;
    } else if (fabsf(b) > fabsf(a)) {
        float t = -a / b;
        float s1 = 1.0 / sqrt(1 + t * t);
        *s = s1;
        *c = s1 * t;
    } else {
        float t = -b / a;
        float c1 = 1.0 / sqrt(1 + t * t);
        *c = c1;
        *s = c1 * t;
    }
}

/* one implicit symmetric QR step on the unreduced block d[0..n), sd[0..n-1) */
static void qr_step(float *d, float *sd, int n)
{
    float mu = wilkinson_shift(d, sd, n);
    if (EIG_EPS * fabsf(mu) > fabsf(d[0]) + fabsf(sd[0]))
        mu = 0;
    float x = d[0] - mu, z = sd[0];
    float ak = 0, bk = 0, zk = 0;
    float ap = d[0], bp = sd[0], aq = d[1];
    float c, s;

    if (n == 2) {
        givens(x, z, &c, &s);
        float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        d[0] = ap1;
        sd[0] = bp1;
        d[1] = aq1;
        return;
    }

    float bq = sd[1];
    for (int k = 0; k < n - 1; k++) {
        givens(x, z, &c, &s);
        float bk1 = c * bk - s * zk;
        float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        float zp1 = -s * bq;
        float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        float bq1 = c * bq;
        ak = ap1;
        bk = bp1;
        zk = zp1;
        ap = aq1;
        bp = bq1;
        if (k < n - 2)
            aq = d[k + 2];
        if (k < n - 3)
            bq = sd[k + 2];
        d[k] = ak;
        if (k > 0)
            sd[k - 1] = bk1;
        if (k < n - 2)
            sd[k + 1] = bp;
        x = bk;
        z = zk;
    }
    d[n - 1] = ap;
    sd[n - 2] = bk;
}

SPEED_CLONES static void eigenvalues(const float *a_in, int n, float *eig)
{
    float a[SPEED_N * SPEED_N], d[SPEED_N], sd[SPEED_N];
    memcpy(a, a_in, sizeof(float) * n * n);
    if (n == 1) {
        eig[0] = a[0];
        return;
    }
    tridiag(a, n, d, sd);
    chop(d, sd, n);
    int b = n - 1, iter = 0;
    while (b > 0 && iter < EIG_MAX_ITERS) {
        if (sd[b - 1] == 0.0f) {
            b--;
            continue;
        }
        int lo = b - 1;
        while (lo > 0 && sd[lo - 1] != 0.0f)
            lo--;
        qr_step(d + lo, sd + lo, b - lo + 1);
        chop(d + lo, sd + lo, b - lo + 1);
        iter++;
    }
    for (int i = 0; i < n; i++)
        eig[i] = d[i];
}

void speed_eigenvalues(const float *a_in, int n, float *eig)
{
    eigenvalues(a_in, n, eig);
}

/* ---- linear system K X = Y by Householder QR (speed.c) ----------------- */

/* dst = x * y for n x n times n x m, float, k-sequential per element */
SPEED_CLONES static void mat_mul(float *restrict dst, const float *restrict x,
                                 const float *restrict y, int n, int m)
{
    memset(dst, 0, sizeof(float) * n * m);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            const float xik = x[i * n + k];
            float *restrict d = dst + (size_t)i * m;
            const float *restrict yk = y + (size_t)k * m;
            int j = 0;
            for (; j + 4 <= m; j += 4) /* groups of 4: vectorised */
                for (int q = 0; q < 4; q++)
                    d[j + q] += xik * yk[j + q];
            for (; j < m; j++)
                d[j] += xik * yk[j];
        }
}

static float vec_norm(const float *v, int n)
{
    float s = 0;
    for (int i = 0; i < n; i++)
        s += v[i] * v[i];
    return sqrt(s);
}

/* Q^T (accumulated reflector product, "Q before its transpose") and R,
 * libvmaf's way: for k = 0 .. n-2, the minor of z (rows and columns before
 * k replaced by the identity), v = its column k, v[k] += sign(a[k][k])
 * |v|, v /= |v|, H = I - 2 v v^T, z = H z, Q^T = H Q^T; finally
 * R = Q^T a. This is the reference form (full n x n products); the
 * estimation uses qr_decompose_fast() and comes back here only when that
 * one meets a non-finite value. */
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
        int sign = sgn(a[k * n + k]); /* the original matrix's diagonal */
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

static int all_finite(const float *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

/* t = row i of H x for H = I - 2 v v^T, x's rows padded to QR_W floats:
 * h[c] = -2 v[i] v[c] (+ 1 on the diagonal) for c >= k, and
 * t[j] = sum over c = k .. n-1, in c order, of h[c] x[c][j]. The terms
 * c < k are left out (qr_decompose_fast() says why that gives the same
 * floats). */
static inline void reflect_row(float *restrict t, const float *v, int i, int k, int n,
                               const float (*x)[QR_W])
{
    float h[SPEED_N];
    for (int c = k; c < n; c++)
        h[c] = -2 * v[i] * v[c];
    h[i] += 1;
    for (int j = 0; j < QR_W; j++)
        t[j] = 0;
    for (int c = k; c < n; c++) {
        const float hc = h[c];
        for (int j = 0; j < QR_W; j++)
            t[j] += hc * x[c][j];
    }
}

/* The same floats as qr_decompose() with the products that are exactly
 * zero left out. In step k, v[i] = +0 for i < k (the minor's column k), so
 * H's rows and columns before k are the identity's (entries +-0, diagonal
 * 1), and the minor's are too. Every element of a product is a float sum
 * started at +0 and taken in k' order; a term that is +-0 (a +-0 factor
 * times a finite one) leaves a non-zero sum unchanged and a zero sum at +0,
 * and a sum started at +0 only becomes zero again as +0. Hence, with all
 * values finite:
 *   z = H z     only the block i, j > k is used later: sums over k' >= k;
 *   Q^T = H Q^T rows i < k: +0 + qt[i][j] (a -0 becomes +0); rows i >= k:
 *               sums over k' >= k;
 *   R = Q^T a   only the upper triangle is read (back_subst).
 * Returns -1 when a non-finite value appears (a zero column: v / 0), where
 * the skipped products would not have been zeros; the caller then runs
 * qr_decompose(). With a finite band-pass image the entries stay far from
 * overflow (|v| <= 1, Q^T orthogonal, |z| bounded by the covariance). */
SPEED_CLONES static int qr_decompose_fast(const float *a, float *qt_out, float *r, int n)
{
    /* rows padded to QR_W floats: fixed-length inner loops vectorise; the
     * padding columns stay 0 and nothing reads them */
    float z[SPEED_N][QR_W], qt[SPEED_N][QR_W], t[SPEED_N][QR_W], v[SPEED_N];
    if (n > SPEED_N)
        return -1;
    memset(z, 0, sizeof(z));
    memset(qt, 0, sizeof(qt));
    for (int i = 0; i < n; i++) {
        memcpy(z[i], a + i * n, sizeof(float) * n);
        qt[i][i] = 1;
    }
    for (int k = 0; k < n - 1; k++) {
        for (int i = k; i < n; i++)
            v[i] = z[i][k];
        float norm = vec_norm(v + k, n - k);
        int sign = sgn(a[k * n + k]);
        v[k] += sign * norm;
        float vn = vec_norm(v + k, n - k);
        if (!(vn > 0.0f) || !isfinite(vn))
            return -1;
        for (int i = k; i < n; i++)
            v[i] = v[i] / vn;
        /* z = H z on rows i > k. Columns <= k are computed too
         * (fixed-length rows) and never read. */
        for (int i = k + 1; i < n; i++)
            reflect_row(t[i], v, i, k, n, z);
        for (int i = k + 1; i < n; i++)
            memcpy(z[i], t[i], sizeof(z[i]));
        /* Q^T = H Q^T: rows i >= k, then +0 + q on the rows before k */
        for (int i = k; i < n; i++)
            reflect_row(t[i], v, i, k, n, qt);
        for (int i = 0; i < k; i++)
            for (int j = 0; j < QR_W; j++)
                qt[i][j] = 0.0f + qt[i][j];
        for (int i = k; i < n; i++)
            memcpy(qt[i], t[i], sizeof(qt[i]));
    }
    /* R = Q^T a, upper triangle (the lower one is set to 0, unread) */
    float ap[SPEED_N][QR_W];
    memset(ap, 0, sizeof(ap));
    for (int i = 0; i < n; i++)
        memcpy(ap[i], a + i * n, sizeof(float) * n);
    for (int i = 0; i < n; i++) {
        float ri[QR_W] = {0};
        for (int c = 0; c < n; c++) {
            const float q = qt[i][c];
            for (int j = 0; j < QR_W; j++)
                ri[j] += q * ap[c][j];
        }
        for (int j = 0; j < n; j++)
            r[i * n + j] = j < i ? 0.0f : ri[j];
        memcpy(qt_out + i * n, qt[i], sizeof(float) * n);
    }
    return all_finite(qt_out, n * n) && all_finite(r, n * n) ? 0 : -1;
}

/* back substitution R X = B (n x m); -1 when a pivot is below 1e-6 */
SPEED_CLONES static int back_subst(const float *r, float *x, const float *b, int n, int m)
{
    for (int i = n - 1; i >= 0; i--) {
        float den = r[i * n + i];
        if (fabsf(den) < EIG_EPS)
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

/* ---- estimation --------------------------------------------------------- */

int speed_work_alloc(SpeedWork *w, int nblocks)
{
    size_t n = (size_t)nblocks * SPEED_N;
    w->nblocks = nblocks;
    w->y = malloc(sizeof(float) * n);
    w->x = malloc(sizeof(float) * n);
    w->qb = malloc(sizeof(float) * n);
    if (!w->y || !w->x || !w->qb) {
        speed_work_free(w);
        return -1;
    }
    return 0;
}

void speed_work_free(SpeedWork *w)
{
    free(w->y);
    free(w->x);
    free(w->qb);
    w->y = w->x = w->qb = NULL;
}

/* Row of the covariance accumulators: row xi holds the pairs yi <= xi,
 * computed in whole groups of 4 (fixed-length inner loops vectorise); the
 * extra sums of the last group are not read. */
#define COV_PAD 28

/* libvmaf's means (float sums, position order) and the 325 covariance
 * sums (double sums of (x - mx)(y - my), position order), written to
 * sums[xi * (xi + 1) / 2 + yi] for yi <= xi. Each sum is one sequential
 * chain over the positions in libvmaf's order; the chains are interleaved
 * (all of them advance one position at a time) so the compiler can
 * vectorise across them. speed_moments in speed.cl computes the same sums
 * on the device, one chain per work-item. */
SPEED_CLONES static void covariance_sums(const SpeedGeometry *g, const float *data,
                                         size_t stride, double *sums_out)
{
    float sums[SPEED_N] = {0}, means[SPEED_N];
    double md[SPEED_N], dv[COV_PAD] = {0};
    double acc[SPEED_N][COV_PAD];
    size_t off[SPEED_N];
    const int sw = g->sub_w, sh = g->sub_h;
    const size_t count = (size_t)sw * sh;

    memset(acc, 0, sizeof(acc));
    for (int e = 0; e < SPEED_N; e++)
        off[e] = (size_t)(e / SPEED_BLOCK) * stride + e % SPEED_BLOCK;
    for (int i = 0; i < sh; i++)
        for (int j = 0; j < sw; j++) {
            const float *p = data + (size_t)i * stride + j;
            for (int e = 0; e < SPEED_N; e++)
                sums[e] += p[off[e]];
        }
    for (int e = 0; e < SPEED_N; e++) {
        means[e] = sums[e] / (float)count;
        md[e] = means[e];
    }
    for (int i = 0; i < sh; i++)
        for (int j = 0; j < sw; j++) {
            const float *p = data + (size_t)i * stride + j;
            for (int e = 0; e < SPEED_N; e++)
                dv[e] = (double)p[off[e]] - md[e];
            for (int xi = 0; xi < SPEED_N; xi++) {
                const double dx = dv[xi];
                double *row = acc[xi];
                for (int b = 0; b <= xi; b += 4)
                    for (int q = 0; q < 4; q++)
                        row[b + q] += dx * dv[b + q];
            }
        }
    for (int xi = 0; xi < SPEED_N; xi++)
        for (int yi = 0; yi <= xi; yi++)
            sums_out[xi * (xi + 1) / 2 + yi] = acc[xi][yi];
}

/* The covariance matrix: each sum / count, rounded to float (libvmaf). */
static void covariance_from_sums(const SpeedGeometry *g, const double *sums, float *cov)
{
    const size_t count = (size_t)g->sub_w * g->sub_h;
    for (int xi = 0; xi < SPEED_N; xi++)
        for (int yi = 0; yi <= xi; yi++) {
            float v = sums[xi * (xi + 1) / 2 + yi] / (double)count;
            cov[xi * SPEED_N + yi] = v;
            cov[yi * SPEED_N + xi] = v;
        }
}

SPEED_CLONES static void estimate_sums(const SpeedGeometry *g, const double *sums,
                                       const float *data, size_t stride, float sigma_nn,
                                       SpeedWork *w, SpeedEstimate *out)
{
    float cov[SPEED_N * SPEED_N], eig[SPEED_N];
    const int nb = g->nblocks;
    int singular = 0;

    covariance_from_sums(g, sums, cov);
    eigenvalues(cov, SPEED_N, eig);

    /* Y: row e = position (si, sj) inside the block, column = block */
    for (int si = 0; si < SPEED_BLOCK; si++)
        for (int sj = 0; sj < SPEED_BLOCK; sj++)
            for (int bi = 0; bi < g->nbv; bi++)
                for (int bj = 0; bj < g->nbh; bj++)
                    w->y[(size_t)(si * SPEED_BLOCK + sj) * nb + bi * g->nbh + bj] =
                        data[(size_t)(bi * SPEED_BLOCK + si) * stride + bj * SPEED_BLOCK + sj];

    for (int k = 0; k < SPEED_N; k++)
        if (eig[k] < EIG_EPS)
            singular = 1;
    if (!singular) {
        float qt[SPEED_N * SPEED_N], r[SPEED_N * SPEED_N];
        if (qr_decompose_fast(cov, qt, r, SPEED_N))
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

/* After estimate_sums: clang takes a function as multiversioned
 * (SPEED_CLONES) only when its definition comes before its first use. The
 * clones are static: clang 14 does not export a multiversioned function's
 * name to other files. */
void speed_estimate_sums(const SpeedGeometry *g, const double *sums, const float *data,
                         size_t stride, float sigma_nn, SpeedWork *w, SpeedEstimate *out)
{
    estimate_sums(g, sums, data, stride, sigma_nn, w, out);
}

void speed_estimate(const SpeedGeometry *g, const float *data, size_t stride, float sigma_nn,
                    SpeedWork *w, SpeedEstimate *out)
{
    double sums[SPEED_NSUMS];
    covariance_sums(g, data, stride, sums);
    estimate_sums(g, sums, data, stride, sigma_nn, w, out);
}

float speed_pair_score(const SpeedGeometry *g, const SpeedEstimate *ref,
                       const SpeedEstimate *dis, float sigma_nn, float nn_floor, int wvm)
{
    if (ref->singular != dis->singular)
        return 0.0f;
    float score = 0;
    float base = SPEED_N * (log2((1 + nn_floor) * sigma_nn) + log2(2 * M_PI * M_E));
    for (int i = 0; i < g->nblocks; i++) {
        float er = ref->entropies[i], ed = dis->entropies[i];
        float vr = ref->variances[i], vd = dis->variances[i];
        if (er < base && ed < base)
            continue;
        float sr, sd;
        switch (wvm) {
        case 0: sr = er * log2(1 + vr); sd = ed * log2(1 + vd); break;
        case 1: sr = er * log2(1 + vr); sd = ed * log2(1 + vr); break;
        case 2: sr = er * log2(1 + vd); sd = ed * log2(1 + vd); break;
        case 3:
            sr = er * log2(1 + (vr + vd) / 2.0);
            sd = ed * log2(1 + (vr + vd) / 2.0);
            break;
        case 4: sr = er * log2(1 + vr); sd = ed * log2(1 + (vr + vd) / 2.0); break;
        case 5: sr = er * log2(1 + vr); sd = ed * log2(1 + (0.75 * vr + 0.25 * vd)); break;
        default: sr = er * log2(1 + vr); sd = ed * log2(1 + (0.25 * vr + 0.75 * vd)); break;
        }
        score += fabsf(sr - sd);
    }
    return score / g->nblocks;
}
