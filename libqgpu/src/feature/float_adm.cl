/*
 * float_adm: libvmaf 3.2.0's float ADM extractor (float_adm.c, adm.c,
 * adm_tools.c), luma only, fp32.
 *
 * Build options: -DFADM_BPS=1 (8-bit samples) or 2 (16-bit words),
 * -DFADM_RL (work-items a row chunk), -DFADM_RR (rows a work-group).
 *
 * Per frame (float_adm.c enqueues them):
 *   fadm_dwt0/fadm_dwt  one per scale: db2 DWT of ref and dis (vertical pass,
 *                 then horizontal, as adm_dwt2_s), band a kept for the next
 *                 scale, and the decoupling of adm_decouple_s: writes the
 *                 ref bands o, the restored bands r and the additive bands a
 *                 (each scale's bands at their own offset of one buffer)
 *   fadm_rows     once, after the four DWTs: every scale's rows, FADM_RR
 *                 rows of a scored region a work-group: each row's float
 *                 sums (left to right) of the CSF-weighted ref cubes (den),
 *                 of the masked r cubes (num, DLM) and of the masked a
 *                 cubes (aim), per orientation; the host adds the rows top
 *                 to bottom in float, as adm_csf_den_scale_s and adm_cm_s
 *                 do.
 * Scale 0's DWT (fadm_dwt0) reads the uploaded luma, each sample made a
 * float in 8-bit units minus 128 as it is loaded (libvmaf's
 * picture_copy).
 *
 * What has to match libvmaf: float products added in tap order without
 * multiply-add contraction; DWT borders -1 -> 1, n -> n-1, n+1 -> n-2
 * (dwt2_src_indices_filt_s); masking neighbourhood borders -1 -> 1,
 * n -> n-1 (the ADM_CM_THRESH_S_* macros); the two double constants
 * FLOAT_ONE_BY_30 / FLOAT_ONE_BY_15 (products taken in double, the centre
 * term added in double), emulated here with a hi/lo split and fma.
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef FADM_BPS
#define FADM_BPS 1
#endif
#if FADM_BPS == 1
typedef uchar sample_t;
#else
typedef ushort sample_t;
#endif

__constant float FADM_LO[4] = {0.482962913144690f, 0.836516303737469f, 0.224143868041857f,
                               -0.129409522550921f};
__constant float FADM_HI[4] = {-0.129409522550921f, -0.224143868041857f, 0.836516303737469f,
                               -0.482962913144690f};

/* float(x * c) for a double constant c = hi + lo (hi = (float)c), close to
 * libvmaf's double product rounded to float */
static inline float fadm_mul_d(float x, float hi, float lo)
{
    float p = x * hi;
    float e = fma(x, hi, -p);
    return p + fma(x, lo, e);
}

/* float((double)s + (double)x * c): the centre term of the threshold */
static inline float fadm_add_mul_d(float s, float x, float hi, float lo)
{
    float p = x * hi;
    float e = fma(x, lo, fma(x, hi, -p));
    float t = s + p;
    float bb = t - s;
    float err = (s - (t - bb)) + (p - bb);
    return t + (err + e);
}

/* A sample of the scale a DWT reads: scale 0 from the uploaded samples
 * (raw = 1: libvmaf's picture_copy, sample / 2^(bpc-8) - 128, exact in
 * float), the others from band a of the previous scale. raw is a
 * compile-time constant in each kernel: one branch folds away. */
static inline float fadm_in(__global const float *pic, __global const sample_t *samples,
                            const int raw, float unit, int i)
{
    return raw ? (float)samples[i] * unit - 128.0f : pic[i];
}

/* adm_dwt2_s at band position (i, j): out[0..3] = a, h, v, d */
static inline __attribute__((always_inline)) void
fadm_dwt_at(__global const float *src, __global const sample_t *samples, const int raw,
            float unit, int w, int h, int i, int j, float out[4])
{
    int iy[4], jx[4];
    for (int k = 0; k < 4; k++) {
        iy[k] = mirror_skip_start_edge(2 * i - 1 + k, h);
        jx[k] = mirror_skip_start_edge(2 * j - 1 + k, w);
    }
    float lo[4], hi[4];
    for (int c = 0; c < 4; c++) {
        float al = 0.0f, ah = 0.0f;
        for (int k = 0; k < 4; k++) {
            float s = fadm_in(src, samples, raw, unit, iy[k] * w + jx[c]);
            al += FADM_LO[k] * s;
        }
        for (int k = 0; k < 4; k++) {
            float s = fadm_in(src, samples, raw, unit, iy[k] * w + jx[c]);
            ah += FADM_HI[k] * s;
        }
        lo[c] = al;
        hi[c] = ah;
    }
    float a = 0.0f, v = 0.0f, hh = 0.0f, d = 0.0f;
    for (int k = 0; k < 4; k++)
        a += FADM_LO[k] * lo[k];
    for (int k = 0; k < 4; k++)
        v += FADM_HI[k] * lo[k];
    for (int k = 0; k < 4; k++)
        hh += FADM_LO[k] * hi[k];
    for (int k = 0; k < 4; k++)
        d += FADM_HI[k] * hi[k];
    out[0] = a;
    out[1] = hh;
    out[2] = v;
    out[3] = d;
}

/* band a alone at (i, j): the same products and sums as fadm_dwt_at's
 * out[0] (where the other bands are not needed) */
static inline __attribute__((always_inline)) float
fadm_dwt_a(__global const float *src, __global const sample_t *samples, const int raw,
           float unit, int w, int h, int i, int j)
{
    int iy[4], jx[4];
    for (int k = 0; k < 4; k++) {
        iy[k] = mirror_skip_start_edge(2 * i - 1 + k, h);
        jx[k] = mirror_skip_start_edge(2 * j - 1 + k, w);
    }
    float a = 0.0f;
    for (int c = 0; c < 4; c++) {
        float al = 0.0f;
        for (int k = 0; k < 4; k++) {
            float s = fadm_in(src, samples, raw, unit, iy[k] * w + jx[c]);
            al += FADM_LO[k] * s;
        }
        a += FADM_LO[c] * al;
    }
    return a;
}

static inline void fadm_decouple(float o, float t, int angle, float egl_hi, float egl_lo,
                                 float *r, float *a)
{
    float k = t / (o + 1e-30f);
    k = k < 0.0f ? 0.0f : (k > 1.0f ? 1.0f : k);
    float rst = k * o;
    /* rst * adm_enhn_gain_limit is a double product in libvmaf; the min/max
     * with t of its float rounding gives the same float */
    if (angle && rst > 0.0f)
        rst = fmin(fadm_mul_d(rst, egl_hi, egl_lo), t);
    else if (angle && rst < 0.0f)
        rst = fmax(fadm_mul_d(rst, egl_hi, egl_lo), t);
    *r = rst;
    *a = t - rst;
}

/* One scale: ref and dis (w x h each; scale 0 the uploaded samples, the
 * others band a of the previous scale); lp_out gets band a of ref and dis
 * (bw x bh, planes of bn); bands (this scale's, at its offset in the
 * lane's buffer) gets 9 planes of plane stride ps: o h/v/d, r h/v/d, a
 * h/v/d, only inside `need` (columns need.s0 .. need.s2, rows need.s1 ..
 * need.s3: the scored region and the one row and column around it that
 * its masking reads); outside, only band a is made. */
static inline __attribute__((always_inline)) void
fadm_dwt_scale(__global const float *src_ref, __global const float *src_dis,
               __global const sample_t *raw_ref, __global const sample_t *raw_dis,
               const int raw, float unit, int w, int h, __global float *lp_out, int bw, int bh,
               int bn, __global float *bands, int ps, int4 need, float cos1sq, float egl_hi,
               float egl_lo)
{
    int j = get_global_id(0), i = get_global_id(1);
    if (j >= bw || i >= bh)
        return;
    int q = i * bw + j;
    if (j < need.s0 || i < need.s1 || j > need.s2 || i > need.s3) {
        lp_out[q] = fadm_dwt_a(src_ref, raw_ref, raw, unit, w, h, i, j);
        lp_out[bn + q] = fadm_dwt_a(src_dis, raw_dis, raw, unit, w, h, i, j);
        return;
    }
    float o[4], t[4];
    fadm_dwt_at(src_ref, raw_ref, raw, unit, w, h, i, j, o);
    fadm_dwt_at(src_dis, raw_dis, raw, unit, w, h, i, j, t);
    lp_out[q] = o[0];
    lp_out[bn + q] = t[0];

    float ot_dp = o[1] * t[1] + o[2] * t[2];
    float o_mag = o[1] * o[1] + o[2] * o[2];
    float t_mag = t[1] * t[1] + t[2] * t[2];
    int angle = (ot_dp >= 0.0f) && (ot_dp * ot_dp >= cos1sq * o_mag * t_mag);
    for (int b = 0; b < 3; b++) {
        float r, a;
        fadm_decouple(o[1 + b], t[1 + b], angle, egl_hi, egl_lo, &r, &a);
        bands[b * ps + q] = o[1 + b];
        bands[(3 + b) * ps + q] = r;
        bands[(6 + b) * ps + q] = a;
    }
}

/* scale 0, from the uploaded samples; its bands at bands + boff */
__kernel void fadm_dwt0(__global const sample_t *ref, __global const sample_t *dis, float unit,
                        int w, int h, __global float *lp_out, int bw, int bh, int bn,
                        __global float *bands, int boff, int ps, int4 need, float cos1sq,
                        float egl_hi, float egl_lo)
{
    fadm_dwt_scale(NULL, NULL, ref, dis, 1, unit, w, h, lp_out, bw, bh, bn, bands + boff, ps,
                   need, cos1sq, egl_hi, egl_lo);
}

/* scales 1..3: src holds ref then dis (planes of n floats) */
__kernel void fadm_dwt(__global const float *src, int w, int h, int n, __global float *lp_out,
                       int bw, int bh, int bn, __global float *bands, int boff, int ps,
                       int4 need, float cos1sq, float egl_hi, float egl_lo)
{
    fadm_dwt_scale(src, src + n, NULL, NULL, 0, 1.0f, w, h, lp_out, bw, bh, bn, bands + boff,
                   ps, need, cos1sq, egl_hi, egl_lo);
}

static inline float fadm_pterm(float x, int p3, float p)
{
    return p3 ? x * x * x : pow(x, p);
}

/* The masking neighbourhood's values of one chunk of FADM_RR rows,
 * staged: mc[y][t] = float(c * FLOAT_ONE_BY_30) of the sample c = |rf m|
 * at row i0 - 1 + y (mirrored) and column j0 - 1 + t (mirrored) of plane
 * m, for the n + 2 columns the chunk's n outputs read. Each sample's
 * product is the same whichever neighbour it is taken for, so it is
 * formed once here instead of nine times in the threshold. FADM_RR rows
 * a work-group share their neighbours (4 rows staged for 2 instead of 3
 * for 1), but 2 measured slower on the H200 (43 KiB of __local memory a
 * group, half the groups: doc/metrics/float_adm.md), so float_adm.c
 * builds 1. */
#ifndef FADM_RL
#define FADM_RL 256
#endif
#ifndef FADM_RR
#define FADM_RR 1
#endif
#define FADM_MW (FADM_RL + 2)
#define FADM_MH (FADM_RR + 2)

static inline void fadm_stage(__global const float *m, int w, int h, int i0, int j0, int n,
                              float rf, float c30h, float c30l, __local float (*mc)[FADM_MW])
{
    int y[FADM_MH];
#pragma unroll
    for (int dy = 0; dy < FADM_MH; dy++)
        y[dy] = mirror_skip_start_edge(i0 - 1 + dy, h);
    for (int t = get_local_id(0); t < n + 2; t += FADM_RL) {
        int x = mirror_skip_start_edge(j0 - 1 + t, w);
#pragma unroll
        for (int dy = 0; dy < FADM_MH; dy++)
            mc[dy][t] = fadm_mul_d(fabs(rf * m[y[dy] * w + x]), c30h, c30l);
    }
}

/* adm_cm_s threshold at (i, j) of a chunk starting at j0, row q of the
 * work-group's rows: the neighbours' staged products (mc[b]: band b of
 * the masking planes, rows q .. q + 2) added in libvmaf's order, the
 * centre c = |rf m(i, j)| added in double */
static inline float fadm_thr(__global const float *bands, int mplane, int ps, int w, int i,
                             int j, int j0, int q, float rf0, float rf1, float rf2, float c15h,
                             float c15l, __local float (*mc)[FADM_MH][FADM_MW])
{
    float thr = 0.0f;
    int t = j - j0;
#pragma unroll
    for (int b = 0; b < 3; b++) {
        __global const float *m = bands + (mplane + b) * ps;
        float rf = b == 0 ? rf0 : (b == 1 ? rf1 : rf2);
        float sum = 0.0f;
#pragma unroll
        for (int dy = 0; dy < 3; dy++)
#pragma unroll
            for (int dx = 0; dx < 3; dx++) {
                if (dy == 1 && dx == 1)
                    sum = fadm_add_mul_d(sum, fabs(rf * m[i * w + j]), c15h, c15l);
                else
                    sum += mc[b][q + dy][t + dx];
            }
        thr += sum;
    }
    return thr;
}

/* FADM_RR rows of one scale's scored region from row i0 (rows top ..
 * bottom - 1, columns left .. right - 1 of bands w x h, planes of ps),
 * walked in chunks of FADM_RL columns: the chunk's masking values are
 * staged (fadm_stage), each work-item computes the 9 terms of its column
 * in each of the rows into __local, then work-items 0 .. 9 FADM_RR - 1
 * add the chunk's terms left to right to the rows' nine float sums each
 * (libvmaf's accum_inner order); row i0 + q's sums go to out[9 q ..].
 * cst: p c30h c30l c15h c15l. Inlined once per scale with that scale's
 * kernel arguments, so that they stay operands of the argument space
 * instead of registers. */
static inline __attribute__((always_inline)) void
fadm_rows_at(__global const float *bands, int ps, int w, int h, int left, int right,
             int bottom, int i0, float rf0, float rf1, float rf2, float8 cst, int p3,
             int bypass, int do_aim, __global float *out,
             __local float4 (*terms4)[FADM_RL / 4 + 1],
             __local float (*mc)[3][FADM_MH][FADM_MW])
{
    const int lid = get_local_id(0);
    const int nr = min(FADM_RR, bottom - i0); /* rows of this work-group */
    float rf[3] = {rf0, rf1, rf2};
    float p = cst.s0;
    float acc = 0.0f;

    for (int j0 = left; j0 < right; j0 += FADM_RL) {
        const int n = min(FADM_RL, right - j0);
        if (!bypass) {
#pragma unroll
            for (int b = 0; b < 3; b++) {
                fadm_stage(bands + (6 + b) * ps, w, h, i0, j0, n, rf[b], cst.s1, cst.s2,
                           mc[0][b]);
                if (do_aim)
                    fadm_stage(bands + (3 + b) * ps, w, h, i0, j0, n, rf[b], cst.s1, cst.s2,
                               mc[1][b]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        int j = j0 + lid;
        for (int q = 0; q < nr && lid < n; q++) {
            int i = i0 + q, qi = i * w + j;
            __local float4 (*terms)[FADM_RL / 4 + 1] = terms4 + 9 * q;
#pragma unroll
            for (int b = 0; b < 3; b++) {
                float v = fabs(rf[b] * bands[b * ps + qi]);
                ((__local float *)terms[b])[lid] = fadm_pterm(v, p3, p);
            }
            float thr = 0.0f;
            if (!bypass)
                thr = fadm_thr(bands, 6, ps, w, i, j, j0, q, rf[0], rf[1], rf[2], cst.s3,
                               cst.s4, mc[0]);
#pragma unroll
            for (int b = 0; b < 3; b++) {
                float x = bands[(3 + b) * ps + qi] * rf[b];
                x = fabs(x) - thr;
                x = x < 0.0f ? 0.0f : x;
                ((__local float *)terms[3 + b])[lid] = fadm_pterm(x, p3, p);
            }
#pragma unroll
            for (int b = 0; b < 3; b++)
                ((__local float *)terms[6 + b])[lid] = 0.0f;
            if (do_aim) {
                thr = 0.0f;
                if (!bypass)
                    thr = fadm_thr(bands, 3, ps, w, i, j, j0, q, rf[0], rf[1], rf[2], cst.s3,
                                   cst.s4, mc[1]);
#pragma unroll
                for (int b = 0; b < 3; b++) {
                    float x = bands[(6 + b) * ps + qi] * rf[b];
                    x = fabs(x) - thr;
                    x = x < 0.0f ? 0.0f : x;
                    ((__local float *)terms[6 + b])[lid] = fadm_pterm(x, p3, p);
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* work-item 9 q + t adds sum t of row q over the chunk, left to
         * right (the sums are independent: one work-item each) */
        if (lid < 9 * nr)
            row_sum_add(terms4[lid], n, &acc);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid < 9 * nr)
        out[lid] = acc;
}

/* Every scale's rows in one launch, after the four DWTs: work-groups
 * [groups.s<s-1>, groups.s<s>) take scale s, FADM_RR rows of its scored
 * region each (fadm_rows_at). Scale s's bands are at boff.s<s> (plane
 * stride ps.s<s>, rows of wid.s<s>), its rows' sums at result row
 * roff.s<s>; rfh / rfv / rfd the scales' CSF factors; bit s of aim_mask:
 * scale s adds to aim. cst: p c30h c30l c15h c15l */
#define FADM_ROWS_OF(S)                                                                        \
    fadm_rows_at(bands + boff.S, ps.S, wid.S, hei.S, left.S, right.S, bottom.S,               \
                 top.S + (g - g0) * FADM_RR, rfh.S, rfv.S, rfd.S, cst, p3, bypass,              \
                 (aim_mask >> s) & 1,                                                          \
                 results + index + (roff.S + (g - g0) * FADM_RR) * 9, terms4, mc)

__kernel __attribute__((reqd_work_group_size(FADM_RL, 1, 1)))
void fadm_rows(__global const float *bands, int4 boff, int4 ps, int4 wid, int4 hei,
               int4 left, int4 top, int4 right, int4 bottom, int4 groups, int4 roff,
               float4 rfh, float4 rfv, float4 rfd, float8 cst, int p3, int bypass, int aim_mask,
               __global float *results, int index)
{
    /* kept as float4 rows (one of padding): the adding work-items read 4
     * terms a load, 32 before their adds (row_sum_add) */
    __local float4 terms4[9 * FADM_RR][FADM_RL / 4 + 1];
    __local float mc[2][3][FADM_MH][FADM_MW]; /* [a planes, r planes][band][row][column] */
    const int g = get_group_id(0);
    int s, g0;

    if (g < groups.s0) {
        s = 0;
        g0 = 0;
        FADM_ROWS_OF(s0);
    } else if (g < groups.s1) {
        s = 1;
        g0 = groups.s0;
        FADM_ROWS_OF(s1);
    } else if (g < groups.s2) {
        s = 2;
        g0 = groups.s1;
        FADM_ROWS_OF(s2);
    } else {
        s = 3;
        g0 = groups.s2;
        FADM_ROWS_OF(s3);
    }
}
