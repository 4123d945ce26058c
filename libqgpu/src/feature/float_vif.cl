/*
 * float_vif: libvmaf 3.2.0's float VIF extractor (float_vif.c, vif.c,
 * vif_tools.c), luma only, fp32.
 *
 * Build options: -DFVIF_BPS=1 (8-bit samples) or 2 (16-bit words).
 *
 * Per frame (float_vif.c enqueues them):
 *   fvif_stat17..3  one per scale: the five separable filters (mu1, mu2,
 *                 ref^2, dis^2, ref*dis) from a __local tile, then the
 *                 per-pixel VIF statistic; num/den terms stored row by row.
 *                 Scales 0..2 also make the next scale's pictures from the
 *                 same __local tile: blurred with the next scale's filter,
 *                 the even rows/columns kept (vif_dec2_s)
 *   fvif_rowsum   every scale's rows, 8 per work-group: each row's num/den
 *                 terms added left to right in float by one work-item (from
 *                 __local tiles the whole group loads), as vif_statistic_s
 *                 does; the host adds the row sums top to bottom in float.
 * Scale 0 (fvif_stat17) is read from the uploaded luma, each sample made
 * a float in 8-bit units minus 128 as it is staged (libvmaf's
 * picture_copy); the other scales from the decimations' float pictures.
 *
 * What has to match libvmaf: every filter output is a float sum of float
 * products taken in tap order (vertical pass first, then horizontal on the
 * vertical results), no multiply-add contraction; borders mirror with
 * index -1 -> 1 and index n -> n-2 (what libvmaf 3.2.0 does: the n -> n-1
 * rule of older vif_tools.c moves vif_scale0 of the 160x90 pair by 1.2e-3);
 * the per-scale num/den are single-precision sums, row by row.
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef FVIF_BPS
#define FVIF_BPS 1
#endif
#if FVIF_BPS == 1
typedef uchar sample_t;
#else
typedef ushort sample_t;
#endif

/* The statistic's output tile: FVIF_TW x FVIF_TH, work-group FVIF_TW x
 * FVIF_TH / 2 (each work-item two pixels). A wide tile keeps
 * the vertical pass's halo columns (2 r of every TW + 2 r) few. */
#define FVIF_TW 32
#define FVIF_TH 16
#define FVIF_RMAX 8     /* largest filter radius (17 taps) */
#define FVIF_LH (FVIF_TH + 2 * FVIF_RMAX) /* staged rows */
#define FVIF_LW 56      /* staged row stride (>= 32 + 16): 2 x 56 = 16 mod
                           32, so the two rows a warp of the vertical pass
                           reads where its items wrap fall in other banks */

/* vif_tools.c's log2_poly_s, as libvmaf's float array holds them (its
 * double literals rounded to float), written exactly in hex: a literal
 * table, so that the unrolled Horner steps take them as immediates (a
 * table passed as an argument cost a constant-cache load per step). */
__constant float FVIF_LOG2_POLY[9] = {
    -0x1.9f3962p-7f, 0x1.0996e8p-4f, -0x1.41a2d2p-3f, 0x1.0756fap-2f, -0x1.6a4ab2p-2f,
    0x1.eba792p-2f,  -0x1.71501cp-1f, 0x1.715472p+0f, 0x0p+0f,
};

/* vif_tools.c's log2f_approx() (vif_options.h defines VIF_OPT_FAST_LOG2, so
 * libvmaf never calls libm's log2f here): exponent plus a degree-8 Horner
 * polynomial of the mantissa, evaluated in float. */
static inline float fvif_log2(float x)
{
    if (x == 0.0f)
        return -INFINITY;
    if (x < 0.0f)
        return NAN;
    uint u = as_uint(x);
    float remain = as_float((u & 0x007FFFFFu) | 0x3F800000u);
    float log_base = (float)((int)((u & 0x7F800000u) >> 23) - 127);
    float t = remain - 1.0f, var = 0.0f;
#pragma unroll
    for (int i = 0; i < 9; i++)
        var = var * t + FVIF_LOG2_POLY[i];
    return log_base + var;
}

/* A sample of the scale a kernel reads: scale 0 from the uploaded
 * samples (raw = 1: libvmaf's picture_copy, sample / 2^(bpc-8) - 128,
 * exact in float), the others from the float pictures of the decimation.
 * raw is a compile-time constant in every kernel: one branch folds away. */
static inline float fvif_in(__global const float *pic, __global const sample_t *samples,
                            const int raw, float unit, int i)
{
    return raw ? (float)samples[i] * unit - 128.0f : pic[i];
}

/* The filters' widths are compile-time constants: one kernel per width
 * (FVIF_STAT_KERNEL below: the statistic's width and the width of the
 * decimation it makes for the next scale), so that every tap loop is
 * unrolled and the taps sit in registers (a width passed as an argument
 * left the loops rolled, one __constant load per tap). The tap loops run
 * to FVIF_FW_MAX with a test of the width inside: a constant trip count
 * is unrolled even where a compiler does so before inlining, and the tests
 * fold away once the width is known. Scale s uses the width
 * vif_get_filter(s, 1.0) gives: 17, 9, 5, 3. */
#define FVIF_FW_MAX 17

/* the taps of a filter of fw taps into registers */
static inline __attribute__((always_inline)) void
fvif_taps(__constant float *filt, const int fw, float *f)
{
#pragma unroll
    for (int k = 0; k < FVIF_FW_MAX; k++)
        if (k < fw)
            f[k] = filt[k];
}

/* Blur (the next scale's filter) + decimation by 2 (vif_dec2_s), taken
 * by the statistic's kernel of the scale it reads (fvif_stat_tile), from
 * the window that kernel has staged. Work-group (gx, gy) of the statistic
 * (tile x0 = 32 gx, y0 = 16 gy) makes the FVIF_DW x FVIF_DH tile of the
 * next scale from (x0 / 2, y0 / 2): it reads the (2 FVIF_DW - 2 + fwd) x
 * (2 FVIF_DH - 2 + fwd) source window from (x0 - rd, y0 - rd), which lies
 * in the statistic's (32 + 2 r) x (16 + 2 r) window from (x0 - r, y0 - r)
 * (rd = fwd / 2 <= r, the statistic's radius) with the same mirrored
 * samples, and the next scale's floor(w/2) x floor(h/2) tiles are never
 * more than the statistic's. The vertical sums of the output rows are
 * taken once per source column (with the statistic's vertical pass), then
 * each output adds fwd of them (with the statistic's pixels): the same
 * products and sums, in the same order, as a 2-D loop taking each
 * column's vertical sum inside the horizontal one. */
#define FVIF_DW 16
#define FVIF_DH 8
#define FVIF_DRMAX 4
#define FVIF_DIN_W (2 * FVIF_DW + 2 * FVIF_DRMAX)
#define FVIF_DV_W (FVIF_DIN_W + 1) /* odd: the strided reads of the
                                      horizontal pass hit different banks */

/* vertical: output row y's sum down source column c of the window, which
 * starts at (off, off) of the staged sr / sd; taken by work-items first ..
 * wg - 1 (k = lid - first of them) */
static inline __attribute__((always_inline)) void
fvif_dec_vertical(__local float (*sr)[FVIF_LW], __local float (*sd)[FVIF_LW], int off,
                  const float *fd, const int fwd, __local float (*vr)[FVIF_DV_W],
                  __local float (*vd)[FVIF_DV_W], int lid, int first, int wg)
{
    const int span_w = 2 * FVIF_DW - 2 + fwd;
    if (lid < first)
        return;
    for (int i = lid - first; i < FVIF_DH * span_w; i += wg - first) {
        int y = i / span_w, c = i - y * span_w;
        float tr = 0.0f, td = 0.0f;
#pragma unroll
        for (int ky = 0; ky < FVIF_FW_MAX; ky++) {
            if (ky < fwd) {
                tr += fd[ky] * sr[off + 2 * y + ky][off + c];
                td += fd[ky] * sd[off + 2 * y + ky][off + c];
            }
        }
        vr[y][c] = tr;
        vd[y][c] = td;
    }
}

/* horizontal: work-item k < FVIF_DW * FVIF_DH makes output (k % FVIF_DW,
 * k / FVIF_DW) of the tile from (j0, i0) */
static inline __attribute__((always_inline)) void
fvif_dec_horizontal(__local float (*vr)[FVIF_DV_W], __local float (*vd)[FVIF_DV_W],
                    const float *fd, const int fwd, int k, int j0, int i0,
                    __global float *dst_ref, __global float *dst_dis, int dw, int dh)
{
    int lx = k % FVIF_DW, ly = k / FVIF_DW;
    int j = j0 + lx, i = i0 + ly;
    if (ly >= FVIF_DH || j >= dw || i >= dh)
        return;
    float acc_r = 0.0f, acc_d = 0.0f;
#pragma unroll
    for (int kx = 0; kx < FVIF_FW_MAX; kx++) {
        if (kx < fwd) {
            acc_r += fd[kx] * vr[ly][2 * lx + kx];
            acc_d += fd[kx] * vd[ly][2 * lx + kx];
        }
    }
    dst_ref[i * dw + j] = acc_r;
    dst_dis[i * dw + j] = acc_d;
}

/* The vertical sums' rows (a warp of the horizontal pass reads two rows,
 * consecutive columns; even: read as float2) */
#define FVIF_VS (FVIF_TW + 2 * FVIF_RMAX)

/* output rows of one column a work-item of the vertical pass takes: 4
 * (192 work-items at scale 0; the other 64 make the decimation's vertical
 * sums) loads and squares each sample once for four outputs; 2 took a
 * third more loads and products (0.0775 against 0.0750 ms one lane at
 * 1080p's scale 0, H200) */
#define FVIF_VR 4

/* vif_statistic_s ('matching_matlab' mode): one pixel's num/den terms
 * from its five filter outputs. */
static inline __attribute__((always_inline)) void
fvif_terms(float mu1, float mu2, float xx_f, float yy_f, float xy_f, float egl,
           float sigma_nsq, float sigma_max_inv, float *num_out, float *den_out)
{
    const float eps = 1.0e-10f;
    float sigma1_sq = xx_f - mu1 * mu1;
    float sigma2_sq = yy_f - mu2 * mu2;
    float sigma12 = xy_f - mu1 * mu2;
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
    g = g < egl ? g : egl;
    /* libvmaf evaluates both arguments in double (vif_sigma_nsq is a double)
     * and rounds them to float once; float here moves a term by <= 1 ulp.
     * The logarithms are taken only where they are kept (a warp whose
     * pixels all have sigma1_sq < sigma_nsq skips them). */
    float num, den;
    if (sigma1_sq < sigma_nsq) {
        num = 1.0f - sigma2_sq * sigma_max_inv;
        den = 1.0f;
    } else {
        num = sigma12 < 0.0f ? 0.0f
                             : fvif_log2(1.0f + (g * g * sigma1_sq) / (sv_sq + sigma_nsq));
#ifdef FVIF_INV_NSQ
        /* sigma_nsq a power of two (FVIF_INV_NSQ its exact reciprocal,
         * float_vif.c): the correctly rounded quotient is this product */
        den = fvif_log2(1.0f + sigma1_sq * FVIF_INV_NSQ);
#else
        den = fvif_log2(1.0f + sigma1_sq / sigma_nsq);
#endif
    }
    *num_out = num;
    *den_out = den;
}

/* The horizontal pass of two neighbouring pixels (columns c and c + 1 of
 * row ly, c even) from the vertical sums v of the tile: the two windows
 * share fw - 1 of their fw + 1 samples, read as (fw + 1) / 2 float2 loads
 * per plane (a pixel a work-item read one float per tap and plane). Each
 * output adds its taps in order, as one at a time. */
static inline __attribute__((always_inline)) void
fvif_pixel_pair(__local float2 (*v)[FVIF_TH][FVIF_VS / 2], int c, int ly, const float *f,
                const int fw, float s[2][5])
{
#pragma unroll
    for (int q = 0; q < 2; q++)
#pragma unroll
        for (int p = 0; p < 5; p++)
            s[q][p] = 0.0f;
#pragma unroll
    for (int j = 0; j < (FVIF_FW_MAX + 1) / 2; j++) {
        if (2 * j > fw)
            break;
#pragma unroll
        for (int p = 0; p < 5; p++) {
            float2 e = v[p][ly][c / 2 + j];
            /* sample 2 j is tap 2 j of pixel c, tap 2 j - 1 of pixel c + 1;
             * sample 2 j + 1 tap 2 j + 1 of c, tap 2 j of c + 1 */
            if (2 * j > 0)
                s[1][p] += f[2 * j - 1] * e.x;
            if (2 * j < fw)
                s[0][p] += f[2 * j] * e.x;
            if (2 * j < fw)
                s[1][p] += f[2 * j] * e.y;
            if (2 * j + 1 < fw)
                s[0][p] += f[2 * j + 1] * e.y;
        }
    }
}

/* The statistic of one FVIF_TW x FVIF_TH tile at one scale (filter of fw
 * taps): the tile and its halo staged, the vertical pass (each work-item
 * FVIF_VR neighbouring rows of one column: the rows' windows share fw - 1
 * samples, loaded once), the horizontal pass and the statistic per pixel
 * (each work-item two neighbouring pixels of a row), the terms stored row
 * by row from the work-items that made them (16 work-items a row store 32
 * consecutive floats). */
static inline __attribute__((always_inline)) void
fvif_stat_tile(__global const float *src_ref, __global const float *src_dis,
               __global const sample_t *raw_ref, __global const sample_t *raw_dis, const int raw,
               float unit, int w, int h, __constant float *filt, const int fw, float egl,
               float sigma_nsq, float sigma_max_inv, __global float *terms,
               __constant float *dfilt, const int fwd, __global float *dst_ref,
               __global float *dst_dis,
               __local float (*sr)[FVIF_LW], __local float (*sd)[FVIF_LW],
               __local float2 (*v)[FVIF_TH][FVIF_VS / 2], __local float (*vr)[FVIF_DV_W],
               __local float (*vd)[FVIF_DV_W])
{
    const int r = fw / 2, span_w = FVIF_TW + 2 * r, span_h = FVIF_TH + 2 * r;
    const int wg = FVIF_TW * FVIF_TH / 2;
    const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * FVIF_TW + lx;
    int x0 = get_group_id(0) * FVIF_TW, y0 = get_group_id(1) * FVIF_TH;
    float f[FVIF_FW_MAX], fd[FVIF_FW_MAX];

    fvif_taps(filt, fw, f);
    if (fwd)
        fvif_taps(dfilt, fwd, fd);
    for (int yy = ly; yy < span_h; yy += FVIF_TH / 2) {
        int gy = mirror_skip_edge(y0 - r + yy, h);
        for (int xx = lx; xx < span_w; xx += FVIF_TW) {
            int gx = mirror_skip_edge(x0 - r + xx, w);
            sr[yy][xx] = fvif_in(src_ref, raw_ref, raw, unit, gy * w + gx);
            sd[yy][xx] = fvif_in(src_dis, raw_dis, raw, unit, gy * w + gx);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* vertical pass: rows FVIF_VR p .. FVIF_VR p + FVIF_VR - 1 of the
     * output tile, column c of the span (their windows share fw - 1
     * samples: each sample and its products loaded and formed once); each
     * output adds its taps in order, as one at a time */
    __local float (*vf)[FVIF_TH][FVIF_VS] = (__local float (*)[FVIF_TH][FVIF_VS])v;
    const int entries = (FVIF_TH / FVIF_VR) * span_w;
    for (int i = lid; i < entries; i += wg) {
        int p = i / span_w, c = i - p * span_w;
        float a1[FVIF_VR], a2[FVIF_VR], axx[FVIF_VR], ayy[FVIF_VR], axy[FVIF_VR];
#pragma unroll
        for (int q = 0; q < FVIF_VR; q++) {
            a1[q] = 0.0f;
            a2[q] = 0.0f;
            axx[q] = 0.0f;
            ayy[q] = 0.0f;
            axy[q] = 0.0f;
        }
#pragma unroll
        for (int k = 0; k < FVIF_FW_MAX + FVIF_VR - 1; k++) {
            if (k >= fw + FVIF_VR - 1)
                break;
            float a = sr[FVIF_VR * p + k][c], b = sd[FVIF_VR * p + k][c];
            float aa = a * a, bb = b * b, ab = a * b;
#pragma unroll
            for (int q = 0; q < FVIF_VR; q++) {
                const int t = k - q; /* tap t of row FVIF_VR p + q */
                if (t >= 0 && t < fw) {
                    a1[q] += f[t] * a;
                    a2[q] += f[t] * b;
                    axx[q] += f[t] * aa;
                    ayy[q] += f[t] * bb;
                    axy[q] += f[t] * ab;
                }
            }
        }
#pragma unroll
        for (int q = 0; q < FVIF_VR; q++) {
            vf[0][FVIF_VR * p + q][c] = a1[q];
            vf[1][FVIF_VR * p + q][c] = a2[q];
            vf[2][FVIF_VR * p + q][c] = axx[q];
            vf[3][FVIF_VR * p + q][c] = ayy[q];
            vf[4][FVIF_VR * p + q][c] = axy[q];
        }
    }
    /* the next scale's vertical sums, from the same staged window, by the
     * work-items that took one column fewer above */
    if (fwd)
        fvif_dec_vertical(sr, sd, r - fwd / 2, fd, fwd, vr, vd, lid, entries % wg, wg);
    barrier(CLK_LOCAL_MEM_FENCE);

    /* horizontal pass and statistic: each work-item the pixels of columns
     * c, c + 1 of row `row`, its terms stored where the row sums read them */
    {
        int c = 2 * (lid % (FVIF_TW / 2)), row = lid / (FVIF_TW / 2), y = y0 + row;
        float sum[2][5];
        fvif_pixel_pair(v, c, row, f, fw, sum);
#pragma unroll
        for (int q = 0; q < 2; q++) {
            if (x0 + c + q < w && y < h) {
                float num, den;
                fvif_terms(sum[q][0], sum[q][1], sum[q][2], sum[q][3], sum[q][4], egl,
                           sigma_nsq, sigma_max_inv, &num, &den);
                int at = y * w + x0 + c + q;
                terms[at] = num;
                terms[w * h + at] = den;
            }
        }
    }
    /* the next scale's tile: outputs (x0 / 2, y0 / 2) on */
    if (fwd)
        fvif_dec_horizontal(vr, vd, fd, fwd, lid, x0 / 2, y0 / 2, dst_ref, dst_dis, w / 2,
                            h / 2);
}

/* this scale's terms: num at [toff + y*w + x], den at [toff + w*h + y*w + x];
 * with a decimation (FWD taps, the next scale's filter dfilt), the next
 * scale's pictures into dst_ref / dst_dis (floor(w/2) x floor(h/2)):
 * scales 0..2 */
#define FVIF_STAT_LOCALS                                                                       \
    __local float sr[FVIF_LH][FVIF_LW], sd[FVIF_LH][FVIF_LW];                                  \
    __local float2 v[5][FVIF_TH][FVIF_VS / 2];                                                 \
    __local float vr[FVIF_DH][FVIF_DV_W], vd[FVIF_DH][FVIF_DV_W]

#define FVIF_STAT_KERNEL(FW, FWD)                                                              \
    __kernel __attribute__((reqd_work_group_size(FVIF_TW, FVIF_TH / 2, 1)))                   \
    void fvif_stat##FW(__global const float *src_ref, __global const float *src_dis, int w,    \
                       int h, __constant float *filt, float egl, float sigma_nsq,              \
                       float sigma_max_inv, __global float *terms, int toff,                   \
                       __constant float *dfilt, __global float *dst_ref,                       \
                       __global float *dst_dis)                                                \
    {                                                                                          \
        FVIF_STAT_LOCALS;                                                                      \
        fvif_stat_tile(src_ref, src_dis, NULL, NULL, 0, 1.0f, w, h, filt, FW, egl, sigma_nsq,  \
                       sigma_max_inv, terms + toff, dfilt, FWD, dst_ref, dst_dis, sr, sd, v,   \
                       vr, vd);                                                        \
    }
FVIF_STAT_KERNEL(9, 5)
FVIF_STAT_KERNEL(5, 3)

/* scale 3, the last: no decimation */
__kernel __attribute__((reqd_work_group_size(FVIF_TW, FVIF_TH / 2, 1)))
void fvif_stat3(__global const float *src_ref, __global const float *src_dis, int w, int h,
                __constant float *filt, float egl, float sigma_nsq, float sigma_max_inv,
                __global float *terms, int toff)
{
    FVIF_STAT_LOCALS;
    fvif_stat_tile(src_ref, src_dis, NULL, NULL, 0, 1.0f, w, h, filt, 3, egl, sigma_nsq,
                   sigma_max_inv, terms + toff, NULL, 0, NULL, NULL, sr, sd, v, vr, vd);
}

/* scale 0, from the uploaded samples, and scale 1 */
__kernel __attribute__((reqd_work_group_size(FVIF_TW, FVIF_TH / 2, 1)))
void fvif_stat17(__global const sample_t *ref, __global const sample_t *dis, float unit, int w,
                 int h, __constant float *filt, float egl, float sigma_nsq, float sigma_max_inv,
                 __global float *terms, int toff, __constant float *dfilt,
                 __global float *dst_ref, __global float *dst_dis)
{
    FVIF_STAT_LOCALS;
    fvif_stat_tile(NULL, NULL, ref, dis, 1, unit, w, h, filt, 17, egl, sigma_nsq, sigma_max_inv,
                   terms + toff, dfilt, 9, dst_ref, dst_dis, sr, sd, v, vr, vd);
}


/* Row sums of every scale. A work-group takes ROW_SUMS_ROWS rows of one
 * scale (groups [groups.s<s-1>, groups.s<s>) are scale s; rows of scale s
 * are result rows [rows.s<s-1>, rows.s<s>)); terms of scale s at toff.s<s>.
 * The rows' terms are added left to right in float, as vif_statistic_s
 * does (row_sums_pair). Writes (num, den) per row. */
__kernel __attribute__((reqd_work_group_size(ROW_SUMS_WG, 1, 1)))
void fvif_rowsum(__global const float *terms, int4 groups, int4 rows, int4 toff, int4 wid,
                 int4 hei, __global float *results, int results_index)
{
    __local float4 tn[ROW_SUMS_ROWS][ROW_SUMS_T4], td[ROW_SUMS_ROWS][ROW_SUMS_T4];
    const int g = get_group_id(0), lid = get_local_id(0);
    int g0, first, off, w, h;
    if (g < groups.s0) {
        g0 = 0; first = 0; off = toff.s0; w = wid.s0; h = hei.s0;
    } else if (g < groups.s1) {
        g0 = groups.s0; first = rows.s0; off = toff.s1; w = wid.s1; h = hei.s1;
    } else if (g < groups.s2) {
        g0 = groups.s1; first = rows.s1; off = toff.s2; w = wid.s2; h = hei.s2;
    } else {
        g0 = groups.s2; first = rows.s2; off = toff.s3; w = wid.s3; h = hei.s3;
    }
    const int y0 = (g - g0) * ROW_SUMS_ROWS;
    __global const float *num = terms + off, *den = terms + off + w * h;
    float an, ad;

    row_sums_pair(num, den, w, h, y0, tn, td, &an, &ad);
    if (lid < ROW_SUMS_ROWS && y0 + lid < h) {
        results[results_index + 2 * (first + y0 + lid)] = an;
        results[results_index + 2 * (first + y0 + lid) + 1] = ad;
    }
}
