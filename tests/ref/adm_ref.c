/* Deliberately independent reference: written from libvmaf's arithmetic for tests/test_adm.c,
 * apart from libqgpu/src/feature/adm.c / adm.cl. It uses only the CSF constant tables
 * (adm_csf_tables.h, data taken from libvmaf). Where the two implement the same step,
 * `duplicates` pairs them: that repeat is the point (two implementations held against each
 * other), not something to fold. */
/*
 * Plain C reference of libvmaf's integer ADM (see adm_ref.h).
 *
 * Follows libvmaf 3.2.0 integer_adm.c / integer_adm.h / barten_csf_tools.h
 * step by step on whole planes. Every intermediate keeps the C type libvmaf
 * gives it (int16 at scale 0, int32 at scales 1..3), so truncations and
 * wrap-arounds are the same. Constants are facts taken from those files and
 * cited where they appear.
 */
#include "adm_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* db2 filters in Q15 and the sum of the low-pass taps (integer_adm.h). */
static const int32_t DB2_LO[4] = {15826, 27411, 7345, -4240};
static const int32_t DB2_HI[4] = {-4240, -7345, 27411, -15826};
#define DB2_LO_SUM 46342

void adm_ref_default_options(AdmRefOptions *o)
{
    memset(o, 0, sizeof(*o));
    o->egl = 100.0;
    o->nvd = 3.0;
    o->rdh = 1080;
    o->csf_mode = 0;
    o->csf_scale = 1.0;
    o->csf_diag_scale = 1.0;
    o->noise_weight = 0.03125;
    o->dlm_weight = 0.5;
    o->min_val = 0.0;
}

/* Whole-sample mirror used by libvmaf's DWT index tables and by the 3x3
 * masking neighbourhood: -1 -> 1, n -> n - 1. */
static int mirror(int i, int n)
{
    if (i < 0)
        return -i;
    if (i >= n)
        return 2 * n - i - 1;
    return i;
}

static int16_t wrap16(int32_t v)
{
    return (int16_t)(uint16_t)(uint32_t)v;
}

/* ---------------------------------------------------------------- CSF factors */

/* The CSF tables and factor functions are data shared with the library
 * (libvmaf's constants); the reference re-implements everything else. */
#include "adm_csf_tables.h"

static void csf_factors(const AdmRefOptions *o, int scale, float f[2])
{
    adm_csf_factors(o->csf_mode, o->nvd, o->rdh, o->csf_scale, o->csf_diag_scale, scale, f);
}

/* ---------------------------------------------------------------- DWT */

typedef struct Bands {
    int w, h;          /* band size */
    int32_t *b[4];     /* a, h, v, d (libvmaf: band_a, band_h, band_v, band_d) */
} Bands;

static int bands_alloc(Bands *bd, int w, int h)
{
    bd->w = w;
    bd->h = h;
    for (int k = 0; k < 4; k++) {
        bd->b[k] = calloc((size_t)w * h, sizeof(int32_t));
        if (!bd->b[k])
            return -1;
    }
    return 0;
}

static void bands_free(Bands *bd)
{
    for (int k = 0; k < 4; k++) {
        free(bd->b[k]);
        bd->b[k] = NULL;
    }
}

/* Scale 0: from the picture. Vertical pass to int16 with the level shift,
 * horizontal pass to int16 (integer_adm.c adm_dwt2_8 / adm_dwt2_16).
 * libvmaf's AVX-512 versions compute the horizontal pass 32 outputs at a
 * time from column 1 while j < hw - (hw - 1) % 32 (8-bit) or % 64 (more
 * bits); when that remainder is 0 the last column's taps past the row are
 * not mirrored and read the next temporary row: lo -> hi[0..1]; hi reads
 * stale memory, where the mirrored value is kept (see dwt_s123). */
static void dwt_scale0(const void *src, ptrdiff_t stride, int bpc, int w, int h, Bands *out)
{
    int shift_vp = bpc == 8 ? 8 : bpc;
    int32_t add_vp = 1 << (shift_vp - 1);
    int bw = out->w, block = bpc == 8 ? 32 : 64;
    int quirk = bw > 1 && (bw - 1) % block == 0;
    int16_t *lo = malloc(sizeof(int16_t) * (w + 2)), *hi = malloc(sizeof(int16_t) * (w + 2));
    for (int i = 0; i < out->h; i++) {
        int rows[4];
        for (int k = 0; k < 4; k++)
            rows[k] = mirror(2 * i - 1 + k, h);
        for (int j = 0; j < w; j++) {
            uint32_t u[4];
            for (int k = 0; k < 4; k++) {
                if (bpc == 8)
                    u[k] = ((const uint8_t *)src)[rows[k] * stride + j];
                else
                    u[k] = ((const uint16_t *)src)[rows[k] * stride + j];
            }
            /* int32 arithmetic that may wrap at 16 bits per sample */
            uint32_t al = 0, ah = 0;
            for (int k = 0; k < 4; k++) {
                al += (uint32_t)(DB2_LO[k] * (int32_t)u[k]);
                ah += (uint32_t)(DB2_HI[k] * (int32_t)u[k]);
            }
            al -= (uint32_t)(DB2_LO_SUM * add_vp);
            lo[j] = wrap16((int32_t)(al + (uint32_t)add_vp) >> shift_vp);
            hi[j] = wrap16((int32_t)(ah + (uint32_t)add_vp) >> shift_vp);
        }
        for (int t = 0; t < 2; t++) {
            lo[w + t] = hi[t];
            hi[w + t] = hi[mirror(w + t, w)];
        }
        for (int j = 0; j < bw; j++) {
            int c[4];
            int32_t s[4] = {0, 0, 0, 0};
            for (int k = 0; k < 4; k++) {
                c[k] = 2 * j - 1 + k;
                if (!(quirk && j == bw - 1))
                    c[k] = mirror(c[k], w);
            }
            for (int k = 0; k < 4; k++) {
                s[0] += DB2_LO[k] * lo[c[k]];
                s[2] += DB2_HI[k] * lo[c[k]];
                s[1] += DB2_LO[k] * hi[c[k]];
                s[3] += DB2_HI[k] * hi[c[k]];
            }
            for (int b = 0; b < 4; b++)
                out->b[b][i * bw + j] = wrap16((s[b] + 32768) >> 16);
        }
    }
    free(lo);
    free(hi);
}

/* Scales 1..3: ref and dist together from the previous band_a in int32,
 * int64 accumulators (adm_dwt2_s123_combined).
 *
 * libvmaf's AVX-512 version (the one that made the golden scores) computes
 * the horizontal pass 8 outputs at a time from column 1 while
 * j < hw - (hw - 1) % 8 (hw = output width). When (hw - 1) % 8 == 0 the last
 * output column falls into a vector block and its taps at input columns
 * >= w are not mirrored: they read the next temporary row in memory, i.e.
 * lo(ref) -> hi(ref)[0..1], hi(ref) -> lo(dist)[0..1], lo(dist) ->
 * hi(dist)[0..1]. hi(dist) reads stale memory; we take the mirrored value
 * there (that column only reaches a score for bands narrower than 25). */
static void dwt_s123(const int32_t *src_r, const int32_t *src_d, int w, int h, int scale,
                     Bands *out_r, Bands *out_d)
{
    static const int64_t vp_add[3] = {0, 32768, 32768}, hp_add[3] = {16384, 32768, 16384};
    static const int vp_shift[3] = {0, 16, 16}, hp_shift[3] = {15, 16, 15};
    int s = scale - 1, bw = out_r->w;
    int quirk = bw > 1 && (bw - 1) % 8 == 0;
    /* tmp[0] lo ref, [1] hi ref, [2] lo dist, [3] hi dist; 2 extra columns */
    int32_t *tmp[4];
    for (int k = 0; k < 4; k++)
        tmp[k] = malloc(sizeof(int32_t) * (w + 2));
    for (int i = 0; i < out_r->h; i++) {
        int rows[4];
        for (int k = 0; k < 4; k++)
            rows[k] = mirror(2 * i - 1 + k, h);
        for (int j = 0; j < w; j++) {
            for (int img = 0; img < 2; img++) {
                const int32_t *src = img ? src_d : src_r;
                int64_t al = 0, ah = 0;
                for (int k = 0; k < 4; k++) {
                    al += (int64_t)DB2_LO[k] * src[rows[k] * w + j];
                    ah += (int64_t)DB2_HI[k] * src[rows[k] * w + j];
                }
                tmp[2 * img][j] = (int32_t)((al + vp_add[s]) >> vp_shift[s]);
                tmp[2 * img + 1][j] = (int32_t)((ah + vp_add[s]) >> vp_shift[s]);
            }
        }
        for (int t = 0; t < 2; t++) {
            tmp[0][w + t] = tmp[1][t];
            tmp[1][w + t] = tmp[2][t];
            tmp[2][w + t] = tmp[3][t];
            tmp[3][w + t] = tmp[3][mirror(w + t, w)];
        }
        for (int j = 0; j < bw; j++) {
            int c[4];
            for (int k = 0; k < 4; k++) {
                c[k] = 2 * j - 1 + k;
                if (!(quirk && j == bw - 1))
                    c[k] = mirror(c[k], w);
            }
            for (int img = 0; img < 2; img++) {
                const int32_t *lo = tmp[2 * img], *hi = tmp[2 * img + 1];
                Bands *out = img ? out_d : out_r;
                int64_t acc[4] = {0, 0, 0, 0};
                for (int k = 0; k < 4; k++) {
                    acc[0] += (int64_t)DB2_LO[k] * lo[c[k]];
                    acc[2] += (int64_t)DB2_HI[k] * lo[c[k]];
                    acc[1] += (int64_t)DB2_LO[k] * hi[c[k]];
                    acc[3] += (int64_t)DB2_HI[k] * hi[c[k]];
                }
                for (int b = 0; b < 4; b++)
                    out->b[b][i * bw + j] = (int32_t)((acc[b] + hp_add[s]) >> hp_shift[s]);
            }
        }
    }
    for (int k = 0; k < 4; k++)
        free(tmp[k]);
}

/* ---------------------------------------------------------------- decouple */

/* Enhancement gain: MIN/MAX of rst * egl (double) and t, then truncated
 * to the band's integer type. */
static int32_t gain_limit(int32_t rst, int32_t t, int positive, double egl)
{
    double g = rst * egl;
    double v = positive ? (g < t ? g : t) : (g > t ? g : t);
    return (int32_t)v;
}

/* Splits the distorted band into restored r and additive a = t - r
 * (adm_decouple / adm_decouple_s123). */
static void decouple(const Bands *ref, const Bands *dis, int scale, double egl, int32_t *r[3],
                     int32_t *a[3])
{
    const float cos_1deg_sq = cos(1.0 * M_PI / 180.0) * cos(1.0 * M_PI / 180.0);
    int n = ref->w * ref->h;
    for (int p = 0; p < n; p++) {
        int32_t o[3], t[3], rst[3];
        for (int k = 0; k < 3; k++) {
            o[k] = ref->b[k + 1][p];
            t[k] = dis->b[k + 1][p];
        }
        int64_t ot_dp = (int64_t)o[0] * t[0] + (int64_t)o[1] * t[1];
        int64_t o_mag_sq = (int64_t)o[0] * o[0] + (int64_t)o[1] * o[1];
        int64_t t_mag_sq = (int64_t)t[0] * t[0] + (int64_t)t[1] * t[1];
        /* angle between (oh,ov) and (th,tv) below 1 degree, evaluated in
         * float values promoted to double as libvmaf does */
        double dp = (float)ot_dp / 4096.0;
        int angle_flag = dp >= 0.0f && dp * dp >= cos_1deg_sq * ((float)o_mag_sq / 4096.0) *
                                                       ((float)t_mag_sq / 4096.0);
        for (int k = 0; k < 3; k++) {
            int64_t tmp_k;
            if (o[k] == 0) {
                tmp_k = 32768;
            } else if (scale == 0) {
                /* th / oh through a Q30 reciprocal table */
                int32_t recip = 1073741824 / abs(o[k]);
                if (o[k] < 0)
                    recip = -recip;
                tmp_k = ((int64_t)recip * t[k] + 16384) >> 15;
            } else {
                /* reciprocal of the 15 most significant bits of |oh| */
                uint32_t ab = (uint32_t)abs(o[k]);
                int sh = 0;
                uint32_t msb = ab;
                if (ab >= 32768) {
                    int lz = 0;
                    while (!(ab & (0x80000000u >> lz)))
                        lz++;
                    sh = 17 - lz;
                    msb = (uint16_t)((ab + (1u << (sh - 1))) >> sh);
                }
                int32_t recip = 1073741824 / (int32_t)msb;
                int64_t sign = o[k] < 0 ? -1 : 1;
                int64_t round = (int32_t)(1u << (14 + sh));
                tmp_k = (((int64_t)recip * t[k]) * sign + round) >> (15 + sh);
            }
            int64_t kk = tmp_k < 0 ? 0 : (tmp_k > 32768 ? 32768 : tmp_k);
            rst[k] = (int32_t)((kk * o[k] + 16384) >> 15);
            if (scale == 0)
                rst[k] = wrap16(rst[k]);
            /* sign of (k / 32768) * (o / 64) in float */
            int pos = kk > 0 && o[k] > 0, neg = kk > 0 && o[k] < 0;
            if (angle_flag && (pos || neg))
                rst[k] = gain_limit(rst[k], t[k], pos, egl);
            if (scale == 0)
                rst[k] = wrap16(rst[k]);
            r[k][p] = rst[k];
            a[k][p] = scale == 0 ? wrap16(t[k] - rst[k]) : (int32_t)((uint32_t)t[k] - (uint32_t)rst[k]);
        }
    }
}

/* ---------------------------------------------------------------- CSF */

typedef struct Fixed {
    uint16_t rf16[3]; /* scale 0: Q21 (h, v) and Q23 (d) */
    uint32_t rf32[3]; /* scales 1..3: Q32 */
    float rf[3];      /* float factors (h, v, d) */
} Fixed;

static void fixed_factors(const AdmRefOptions *o, int scale, Fixed *fx)
{
    float f[2];
    csf_factors(o, scale, f);
    fx->rf[0] = f[0];
    fx->rf[1] = f[0];
    fx->rf[2] = f[1];
    if (scale == 0) {
        if (fabs(o->nvd * o->rdh - 3.0 * 1080) < 1.0e-8 && o->csf_mode == 0) {
            /* libvmaf's hard-coded Watson factors for 3H @ 1080 */
            fx->rf16[0] = 36453;
            fx->rf16[1] = 36453;
            fx->rf16[2] = 49417;
        } else {
            fx->rf16[0] = (uint16_t)(int64_t)(fx->rf[0] * pow(2, 21));
            fx->rf16[1] = (uint16_t)(int64_t)(fx->rf[1] * pow(2, 21));
            fx->rf16[2] = (uint16_t)(int64_t)(fx->rf[2] * pow(2, 23));
        }
    } else {
        for (int k = 0; k < 3; k++)
            fx->rf32[k] = (uint32_t)(int64_t)(fx->rf[k] * pow(2, 32));
    }
}

/* CSF-weighted value of a band sample. */
static int32_t csf_value(int scale, const Fixed *fx, int k, int32_t v)
{
    static const int sh16[3] = {15, 15, 17};
    static const uint32_t add16[3] = {16384, 16384, 65535};
    if (scale == 0)
        return wrap16((int32_t)((uint32_t)(fx->rf16[k] * v) + add16[k]) >> sh16[k]);
    return (int32_t)(((int64_t)fx->rf32[k] * v + (1 << 27)) >> 28);
}

/* |csf| / 30, the masking contribution of a neighbour. */
static int32_t csf_flt(int scale, int32_t c)
{
    if (scale == 0)
        return wrap16((4369 * abs(c) + 2048) >> 12); /* 4369 = 2^17 / 30 */
    /* 143165577 = 2^32 / 30; libvmaf's rounding term is 1u << 31 stored in
     * an int32, i.e. -2^31 */
    return (int32_t)(((int64_t)143165577 * abs(c) - 2147483648LL) >> 32);
}

/* |csf| / 15, the centre's own contribution. At scale 0 libvmaf's scalar
 * code truncates it to int16; its AVX-512 code (which made the golden
 * scores) keeps int32 in the columns of its 14-wide vector loop (vec). */
static int32_t csf_centre(int scale, int32_t c, int vec)
{
    if (scale == 0)
        return vec ? (8738 * abs(c) + 2048) >> 12 : wrap16((8738 * abs(c) + 2048) >> 12);
    return (int32_t)(((int64_t)286331153 * abs(c) - 2147483648LL) >> 32);
}

/* ---------------------------------------------------------------- sums */

typedef struct Region {
    int top, bottom, left, right; /* scored rows [top, bottom), columns [left, right) */
} Region;

static Region region_of(int w, int h)
{
    Region r;
    r.left = (int)(w * 0.1 - 0.5); /* ADM_BORDER_FACTOR */
    r.top = (int)(h * 0.1 - 0.5);
    r.right = w - r.left;
    r.bottom = h - r.top;
    return r;
}

/* Denominator: sum of |ref|^3 per orientation, rows rounded as libvmaf. */
static float den_scale(const Bands *ref, int scale, const Fixed *fx, double nw)
{
    Region g = region_of(ref->w, ref->h);
    int rows = g.bottom - g.top, cols = g.right - g.left;
    double csf[3];
    if (scale == 0) {
        int sh = (int)ceil(log2((double)rows * cols) - 20);
        sh = sh > 0 ? sh : 0;
        uint64_t add = sh > 0 ? (uint64_t)1 << (sh - 1) : 0;
        for (int k = 0; k < 3; k++) {
            uint64_t acc = 0;
            for (int i = g.top; i < g.bottom; i++) {
                uint64_t inner = 0;
                for (int j = g.left; j < g.right; j++) {
                    uint64_t v = (uint16_t)abs(ref->b[k + 1][i * ref->w + j]);
                    inner += v * v * v;
                }
                acc += (inner + add) >> sh;
            }
            csf[k] = (double)(acc / pow(2, 18 - sh)) * pow(fx->rf[k], 3);
        }
    } else {
        static const uint32_t sq_shift[3] = {31, 30, 31}, conv[3] = {32, 27, 23};
        uint32_t sq = sq_shift[scale - 1];
        uint32_t sh_cub = (uint32_t)ceil(log2(cols));
        uint64_t add_cub = (uint32_t)pow(2, (double)sh_cub - 1);
        uint32_t sh_acc = (uint32_t)ceil(log2(rows));
        uint64_t add_acc = (uint32_t)pow(2, (double)sh_acc - 1);
        for (int k = 0; k < 3; k++) {
            uint64_t acc = 0;
            for (int i = g.top; i < g.bottom; i++) {
                uint64_t inner = 0;
                for (int j = g.left; j < g.right; j++) {
                    uint64_t v = (uint32_t)abs(ref->b[k + 1][i * ref->w + j]);
                    /* libvmaf adds 1 << sq (not 1 << (sq - 1)) before >> sq */
                    inner += ((((v * v) + ((uint64_t)1 << sq)) >> sq) * v + add_cub) >> sh_cub;
                }
                acc += (inner + add_acc) >> sh_acc;
            }
            csf[k] = (double)(acc / pow(2, (uint32_t)(conv[scale - 1] - sh_acc - sh_cub))) *
                     pow(fx->rf[k], 3);
        }
    }
    float add = powf(rows * cols * nw, 1.0f / 3.0f);
    float d0 = powf(csf[0], 1.0f / 3.0f) + add;
    float d1 = powf(csf[1], 1.0f / 3.0f) + add;
    float d2 = powf(csf[2], 1.0f / 3.0f) + add;
    return d0 + d1 + d2;
}

/* Contrast-masked numerator: src (r for the DLM, a for AIM) CSF-weighted,
 * minus a threshold from the 3x3 neighbourhood of the masker's CSF values
 * (a for the DLM, r for AIM), clipped at 0, cubed. */
static float num_scale(int32_t *const src[3], int32_t *const mask[3], int w, int h, int scale,
                       const Fixed *fx, double nw)
{
    Region g = region_of(w, h);
    int n = w * h;
    int32_t *csf[3], *flt[3];
    for (int k = 0; k < 3; k++) {
        csf[k] = malloc(sizeof(int32_t) * n);
        flt[k] = malloc(sizeof(int32_t) * n);
        for (int p = 0; p < n; p++) {
            csf[k][p] = csf_value(scale, fx, k, mask[k][p]);
            flt[k][p] = csf_flt(scale, csf[k][p]);
        }
    }
    int64_t acc[3] = {0, 0, 0};
    uint32_t sh_cub[3], sh_inner = (uint32_t)ceil(log2(h));
    int64_t add_cub[3], add_inner = (uint32_t)pow(2, (double)sh_inner - 1);
    if (scale == 0) {
        sh_cub[0] = sh_cub[1] = (uint32_t)ceil(log2(w) - 4);
        sh_cub[2] = (uint32_t)ceil(log2(w) - 3);
    } else {
        sh_cub[0] = sh_cub[1] = sh_cub[2] = (uint32_t)ceil(log2(w));
    }
    for (int k = 0; k < 3; k++)
        add_cub[k] = (uint32_t)pow(2, (double)sh_cub[k] - 1);

    /* adm_cm_avx512: middle rows [max(top,1), min(bottom,h-1)) of a band
     * with left > 0 run columns [left, right - (right - left) % 14) in
     * vectors of 14 */
    int vec_end = g.right - (g.right - g.left) % 14;
    for (int i = g.top; i < g.bottom; i++) {
        int64_t inner[3] = {0, 0, 0};
        int vec_row = g.left > 0 && i >= (g.top > 1 ? g.top : 1) && i < (g.bottom < h - 1 ? g.bottom : h - 1);
        for (int j = g.left; j < g.right; j++) {
            int vec = vec_row && j < vec_end;
            int32_t thr = 0;
            for (int k = 0; k < 3; k++) {
                int32_t sum = 0;
                for (int di = -1; di <= 1; di++) {
                    for (int dj = -1; dj <= 1; dj++) {
                        int p = mirror(i + di, h) * w + mirror(j + dj, w);
                        if (di == 0 && dj == 0)
                            sum += csf_centre(scale, csf[k][p], vec);
                        else
                            sum += flt[k][p];
                    }
                }
                thr = (int32_t)((uint32_t)thr + (uint32_t)sum);
            }
            for (int k = 0; k < 3; k++) {
                int32_t x, xsq;
                int32_t v = src[k][i * w + j];
                if (scale == 0) {
                    static const int sub[3] = {10, 10, 12}, sqs[3] = {29, 29, 30};
                    x = (int32_t)((uint32_t)fx->rf16[k] * (uint32_t)v);
                    x = (int32_t)((uint32_t)abs(x) - ((uint32_t)thr << sub[k]));
                    x = x < 0 ? 0 : x;
                    xsq = (int32_t)(((int64_t)x * x + ((int64_t)1 << (sqs[k] - 1))) >> sqs[k]);
                } else {
                    x = (int32_t)(((int64_t)v * fx->rf32[k] + (1 << 27)) >> 28);
                    x = (int32_t)((uint32_t)abs(x) - (uint32_t)thr);
                    x = x < 0 ? 0 : x;
                    xsq = (int32_t)(((int64_t)x * x + (1 << 29)) >> 30);
                }
                inner[k] += ((int64_t)xsq * x + add_cub[k]) >> sh_cub[k];
            }
        }
        for (int k = 0; k < 3; k++)
            acc[k] += (inner[k] + add_inner) >> sh_inner;
    }
    for (int k = 0; k < 3; k++) {
        free(csf[k]);
        free(flt[k]);
    }
    float f[3];
    if (scale == 0) {
        f[0] = (float)(acc[0] / pow(2, (uint32_t)(52 - sh_cub[0] - sh_inner)));
        f[1] = (float)(acc[1] / pow(2, (uint32_t)(52 - sh_cub[1] - sh_inner)));
        f[2] = (float)(acc[2] / pow(2, (uint32_t)(57 - sh_cub[2] - sh_inner)));
    } else {
        static const uint32_t fin[3] = {45, 39, 36};
        float fs = pow(2, (uint32_t)(fin[scale - 1] - sh_cub[0] - sh_inner));
        for (int k = 0; k < 3; k++)
            f[k] = (float)(acc[k] / fs);
    }
    Region g2 = g;
    float add = powf((g2.bottom - g2.top) * (g2.right - g2.left) * nw, 1.0f / 3.0f);
    float n0 = powf(f[0], 1.0f / 3.0f) + add;
    float n1 = powf(f[1], 1.0f / 3.0f) + add;
    float n2 = powf(f[2], 1.0f / 3.0f) + add;
    return n0 + n1 + n2;
}

/* ---------------------------------------------------------------- driver */

int adm_ref_compute(const void *ref, const void *dis, ptrdiff_t stride, int w, int h, int bpc,
                    const AdmRefOptions *o, AdmRefResult *res)
{
    Bands rb[2] = {{0}}, db[2] = {{0}};
    int32_t *r[3] = {0}, *a[3] = {0};
    int err = -1;
    double num = 0, den = 0, aim_num = 0;
    int cw = w, ch = h;

    memset(res, 0, sizeof(*res));
    for (int scale = 0; scale < 4; scale++) {
        Bands *pr = &rb[(scale + 1) & 1], *pd = &db[(scale + 1) & 1];
        Bands *nr = &rb[scale & 1], *nd = &db[scale & 1];
        int bw = (cw + 1) / 2, bh = (ch + 1) / 2;
        float ns = 0.0f, ds = 0.0f, as = 0.0f;
        bands_free(nr);
        bands_free(nd);
        if (bands_alloc(nr, bw, bh) || bands_alloc(nd, bw, bh))
            goto end;
        if (scale == 0) {
            dwt_scale0(ref, stride, bpc, cw, ch, nr);
            dwt_scale0(dis, stride, bpc, cw, ch, nd);
        } else {
            dwt_s123(pr->b[0], pd->b[0], cw, ch, scale, nr, nd);
        }
        cw = bw;
        ch = bh;
        if (scale == 0 && o->skip_scale0) {
            ds = 1e-10f; /* libvmaf: avoid a division by zero */
        } else {
            Fixed fx;
            fixed_factors(o, scale, &fx);
            for (int k = 0; k < 3; k++) {
                free(r[k]);
                free(a[k]);
                r[k] = malloc(sizeof(int32_t) * bw * bh);
                a[k] = malloc(sizeof(int32_t) * bw * bh);
                if (!r[k] || !a[k])
                    goto end;
            }
            decouple(nr, nd, scale, o->egl, r, a);
            ds = den_scale(nr, scale, &fx, o->noise_weight);
            ns = num_scale(r, a, bw, bh, scale, &fx, o->noise_weight);
            if (!o->skip_aim)
                as = num_scale(a, r, bw, bh, scale, &fx, 0.0);
        }
        num += ns;
        den += ds;
        aim_num += as;
        res->num_scale[scale] = ns;
        res->den_scale[scale] = ds;
        res->scale[scale] = res->num_scale[scale] / res->den_scale[scale];
    }
    {
        double limit = 1e-10 * (w * h) / (1920.0 * 1080.0);
        num = num < limit ? 0 : num;
        den = den < limit ? 0 : den;
        if (den == 0.0) {
            res->adm2 = 1.0;
            res->aim = 0.0; /* libvmaf leaves it unset; its CLI printed 0 */
        } else {
            res->aim = aim_num / den;
            res->adm2 = num / den;
        }
        res->num = num;
        res->den = den;
        double adm3 = res->adm2 * o->dlm_weight + (1 - res->aim) * (1 - o->dlm_weight);
        res->adm3 = adm3 > o->min_val ? adm3 : o->min_val;
    }
    err = 0;
end:
    for (int k = 0; k < 2; k++) {
        bands_free(&rb[k]);
        bands_free(&db[k]);
    }
    for (int k = 0; k < 3; k++) {
        free(r[k]);
        free(a[k]);
    }
    return err;
}
