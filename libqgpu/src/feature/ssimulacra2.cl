/*
 * SSIMULACRA 2 (libjxl tools/ssimulacra2.cc as ported by the lusoris/vmaf
 * fork's ssimulacra2 extractor, whose output is the golden reference).
 *
 * Every float stage repeats the reference's operations in the reference's
 * order, with no fused multiply-adds, so that the device's planes (linear
 * RGB, XYB, the blurred mu/sigma planes) are bit-identical to the CPU
 * extractor's.
 * That matters: sigma = blur(x*x) - mu*mu cancels catastrophically against
 * C2 = 0.0009, so one ulp in a blurred plane moves a pixel's SSIM term by
 * up to ~3e-5. The per-pixel map values, which the reference computes in
 * double, are computed here in double where the device has fp64
 * (-DSS2_FP64=1: the reference's own operations, summed in double) and
 * otherwise in float-float (pairs of floats, ~44 bits) and summed in
 * float-float; either way the sums reach the host as 8 bytes each.
 *
 * Launches per frame (every scale, channel and picture in each):
 *   ss2_pyramid     YUV -> linear RGB, 2x2 boxes in __local memory, XYB of
 *                   every scale (one work-group per 32x32 tile of scale 0)
 *   ss2_hblur       horizontal recursive Gaussian of the 5 quantities
 *                   (x1, x2, x1^2, x2^2, x1 x2; only x1 and x2 where the
 *                   score weighs no SSIM term of the channel and scale,
 *                   see G_NEED); rows go through transposed
 *                   __local tiles (coalesced loads), the output planes are
 *                   stored column after column (coalesced stores)
 *   ss2_vblur_maps  vertical recursive Gaussian through __local tiles,
 *                   fused with the SSIM and edge-difference maps and a
 *                   work-group reduction
 *   ss2_reduce      the 108 sums (double or float-float) into the slot's
 *                   results
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef SS2_FP64
#error "ssimulacra2.cl is built with -DSS2_FP64=0 or 1"
#endif
#if SS2_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* A product rounded on its own. The reference never fuses a multiply with
 * an add, and one fused multiply-add in the recursive Gaussian moves the
 * score by up to 0.1 (doc/metrics/ssimulacra2.md). FP_CONTRACT OFF forbids
 * fusing, but not every OpenCL compiler is trusted to honour it; a product
 * computed as fma(a, b, +0) is already rounded, so nothing is left to fuse.
 * (It differs from a * b only in the sign of an exact zero, which no later
 * step observes.) Every product that feeds an addition goes through it. */
#define MUL(a, b) fma((a), (b), 0.0f)

/* ---- correctly rounded float division ------------------------------------
 * OpenCL only requires 2.5 ulp for '/', the reference's cube root divides
 * in IEEE single. With SS2_NATIVE_DIV the host has built us with
 * -cl-fp32-correctly-rounded-divide-sqrt; otherwise fix the quotient up with
 * exact fma remainders. */
static inline float div_rn(float a, float b)
{
#ifdef SS2_NATIVE_DIV
    return a / b;
#else
    float q = a / b;
    float r = fma(-q, b, a);
    q = q + r / b;
    float best = fabs(fma(-q, b, a));
    float qu = nextafter(q, INFINITY), qd = nextafter(q, -INFINITY);
    float ru = fabs(fma(-qu, b, a)), rd = fabs(fma(-qd, b, a));
    if (ru < best) {
        q = qu;
        best = ru;
    }
    if (rd < best)
        q = qd;
    return q;
#endif
}

/* ---- the fork's deterministic helpers (ssimulacra2_math.h) -------------- */

/* Cube root: exponent/3 bit trick (constant 0x2a5137a0), then two Newton
 * steps y = (2y + x / y^2) * (1/3), exactly as the reference evaluates them
 * (its result is not always the correctly rounded cube root, and matching
 * it bit for bit is what keeps the XYB planes identical). */
static inline float ss2_cbrt(float x)
{
    float y = as_float(as_uint(x) / 3u + 0x2a5137a0u);
    for (int k = 0; k < 2; k++) {
        float y2 = y * y;
        float q = div_rn(x, y2);
        float t = 2.0f * y + q; /* 2y is exact */
        y = MUL(t, 1.0f / 3.0f);
    }
    /* 0 for x <= 0, selected rather than branched to: the pyramid's
     * arguments are >= the opsin bias, and the branch and its
     * reconvergence were a fifth of a cube root's instructions */
    return x <= 0.0f ? 0.0f : y;
}

/* sRGB EOTF: 1024-entry table of the exact curve (rounded to float) with
 * linear interpolation, as the fork does. x is in [0, 1] (the callers
 * clamp). The table is in __global memory, not __constant: neighbouring
 * pixels read different entries, and NVIDIA's constant cache serves a
 * warp's different addresses one after another (the pyramid's 12 table
 * reads a pixel were ld.const in the PTX). Its entries come in pairs,
 * pair i = (entry i, entry i + 1) for i = 0 .. 1022, so that one 8-byte
 * load gives both ends of the interval. The fork returns 0 for x <= 0
 * and 1 for x >= 1; on [0, 1] the interpolation gives the same without
 * a test: x = 0 gives entry 0 (+0) + (entry 1 - +0) * 0 = +0, and x = 1
 * takes the last pair (i = 1023 is clamped to 1022) with fraction 1:
 * entry 1022 + (1 - entry 1022) = 1 exactly (entry 1023 is 1, and the
 * difference and the sum are exact). Below 1, i = trunc(1023 x) <= 1022
 * as before, the same operations. */
static inline float ss2_eotf(float x, __global const float2 *lut)
{
    float idx = MUL(x, 1023.0f);
    int i = min(convert_int_rtz(idx), 1022);
    float frac = idx - (float)i;
    const float2 ab = lut[i];
    float d = ab.y - ab.x;
    float t = MUL(d, frac);
    return ab.x + t;
}

#define SS2_BIAS 0.0037930732552754493f /* the opsin bias */

/* Linear RGB -> XYB with MakePositiveXYB (libjxl opsin_params.h; the fork's
 * linear_rgb_to_xyb). Operation order as in the reference. cbias is
 * ss2_cbrt(SS2_BIAS), given by the caller: the compiler does not fold the
 * correctly rounded divisions of a constant, and each XYB conversion
 * computed it again (2 of its 8 divisions). */
static inline float3 ss2_xyb(float r, float g, float b, float cbias)
{
    const float m00 = 0.30f, m02 = 0.078f, m10 = 0.23f, m12 = 0.078f;
    const float m20 = 0.24342268924547819f, m21 = 0.20476744424496821f;
    const float bias = SS2_BIAS;
    const float m01 = 1.0f - m00 - m02; /* folded exactly by the compiler (IEEE single) */
    const float m11 = 1.0f - m10 - m12;
    const float m22 = 1.0f - m20 - m21;
    float t0, t1, l, m, s;
    t0 = MUL(m00, r); t1 = MUL(m01, g); l = t0 + t1; t0 = MUL(m02, b); l = l + t0; l = l + bias;
    t0 = MUL(m10, r); t1 = MUL(m11, g); m = t0 + t1; t0 = MUL(m12, b); m = m + t0; m = m + bias;
    t0 = MUL(m20, r); t1 = MUL(m21, g); s = t0 + t1; t0 = MUL(m22, b); s = s + t0; s = s + bias;
    l = fmax(l, 0.0f);
    m = fmax(m, 0.0f);
    s = fmax(s, 0.0f);
    float L = ss2_cbrt(l) - cbias;
    float M = ss2_cbrt(m) - cbias;
    float S = ss2_cbrt(s) - cbias;
    float X = 0.5f * (L - M); /* exact */
    float Y = 0.5f * (L + M);
    float tx = MUL(X, 14.0f);
    return (float3)(tx + 0.42f, Y + 0.01f, (S - Y) + 0.55f);
}

/* ---- YUV -> linear RGB, scale 0 ------------------------------------------ */

typedef struct Ss2Yuv {
    float inv_peak, y_off, y_scale, c_scale, cr_r, cb_g, cr_g, cb_b;
} Ss2Yuv;

/* SS2_BPS (a build option): bytes per input sample, 1 or 2 */
#if SS2_BPS == 1
typedef uchar ss2_sample;
#elif SS2_BPS == 2
typedef ushort ss2_sample;
#else
#error "ssimulacra2.cl is built with -DSS2_BPS=1 or 2"
#endif

/* The fork's nearest chroma sampling: x >> 1 when the (ceil-size) plane is
 * exactly half the luma size, x * pw / lw otherwise (odd sizes). */
static inline int chroma_index(int x, int pw, int lw)
{
    int s;
    if (pw == lw)
        s = x;
    else if (pw * 2 == lw)
        s = x >> 1;
    else
        s = (int)(((long)x * pw) / lw);
    return min(s, pw - 1);
}

/* Sample indices in 32 bits: a picture holds < 2^32 samples (ss2_init
 * limits the pixels to 2^31 / 15). */
static inline float3 yuv_to_linear(__global const ss2_sample *pic, int x, int y, int w, int cw,
                                   int ch, int h, uint off0, uint off1, uint off2,
                                   const Ss2Yuv *k, __global const float2 *lut)
{
    const int sx = chroma_index(x, cw, w), sy = chroma_index(y, ch, h);
    const uint ci = (uint)(sy * cw + sx);
    float Y = MUL((float)pic[off0 + (uint)(y * w + x)], k->inv_peak);
    float U = MUL((float)pic[off1 + ci], k->inv_peak);
    float V = MUL((float)pic[off2 + ci], k->inv_peak);
    float Yn = MUL(Y - k->y_off, k->y_scale);
    float Un = MUL(U - 0.5f, k->c_scale);
    float Vn = MUL(V - 0.5f, k->c_scale);
    float t, R, G, B;
    t = MUL(k->cr_r, Vn); R = Yn + t;
    t = MUL(k->cb_g, Un); G = Yn + t;
    t = MUL(k->cr_g, Vn); G = G + t;
    t = MUL(k->cb_b, Un); B = Yn + t;
    R = fmax(fmin(R, 1.0f), 0.0f);
    G = fmax(fmin(G, 1.0f), 0.0f);
    B = fmax(fmin(B, 1.0f), 0.0f);
    return (float3)(ss2_eotf(R, lut), ss2_eotf(G, lut), ss2_eotf(B, lut));
}

/* ---- scale geometry: geom[s * SS2_G + field] ---------------------------- */
#define SS2_G 9
#define G_W 0      /* width of scale s */
#define G_H 1      /* height */
#define G_OFF 2    /* first float of scale s in the XYB buffers (3 planes) */
#define G_HG0 3    /* first horizontal-pass work-group of scale s */
#define G_VG0 4    /* first vertical-pass work-group of scale s */
#define G_VGN 5    /* vertical-pass work-groups per channel */
#define G_POFF 6   /* first sum (8 bytes) of scale s in the partial sums */
#define G_HOFF 7   /* first float of scale s in the horizontal-pass output (15 planes,
                    * each stored column after column) */
#define G_NEED 8   /* the map terms the score uses: bit c * 3 + t (ss2_need in
                    * ssimulacra2.c) */

/* The terms of channel c the score uses at a scale (the others have zero
 * weights: their sums stay 0) and what they need: the SSIM term the five
 * blurred quantities, the edge terms (ringing, blurring) only mu1 and mu2
 * (quantities 0 and 1), none nothing. */
#define NEED_SSIM 1
#define NEED_RINGING 2
#define NEED_BLURRING 4
#define NEED_EDGE 6   /* ringing (2) or blurring (4) */
static inline int need_of(__constant const int *gm, int c)
{
    return (gm[G_NEED] >> (3 * c)) & 7;
}

static inline int quantities_of(int need)
{
    return (need & NEED_SSIM) ? 5 : (need & NEED_EDGE) ? 2 : 0;
}

/* Scale of a work-group: the last scale whose first group is <= g. */
static inline int scale_of(__constant const int *geom, int scales, int field, int g)
{
    int s = 0;
    for (int i = 1; i < scales; i++)
        if (g >= geom[i * SS2_G + field])
            s = i;
    return s;
}

/* ---- the pyramid: one work-group takes a 32x32 tile of scale 0 and every
 * tile it covers at the coarser scales (16x16, 8x8, .., 1x1): YUV -> linear
 * RGB into __local memory, then repeated 2x2 box averaging (edge replicated:
 * the replicated sample always lies in the same tile), writing XYB of each
 * scale. Linear RGB never leaves the work-group.
 * At scale 0 work-item (tx, ty) takes pixels (tx + 16 i, ty + 16 j): a
 * half-warp loads and stores 16 consecutive samples. At scale 1 each
 * work-item takes one pixel of both pictures; from scale 2 on (8x8 pixels
 * or fewer) the first 2 side^2 work-items take one pixel of one picture
 * each (in place of a side x side corner of the group doing both
 * pictures, most of its warps' lanes idle). cbias is the cube root of the
 * opsin bias (SS2_CBIAS, computed by the host as ss2_cbrt computes it:
 * each work-item computing it cost two correctly rounded divisions). */
#define PY_T 32
#define PY_H (PY_T / 2)   /* the group's side */

__kernel __attribute__((reqd_work_group_size(PY_H, PY_H, 1)))
void ss2_pyramid(__global const ss2_sample *ref, __global const ss2_sample *dist,
                 int cw, int ch, uint off0, uint off1, uint off2,
                 float inv_peak, float y_off, float y_scale, float c_scale,
                 float cr_r, float cb_g, float cr_g, float cb_b,
                 __global const float2 *lut, __constant const int *geom, int scales,
                 __global float *xyb1, __global float *xyb2)
{
    __local float lin[2][3][PY_T][PY_T + 1];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int bx = get_group_id(0), by = get_group_id(1);
    const int w = geom[G_W], h = geom[G_H];
    Ss2Yuv k = {inv_peak, y_off, y_scale, c_scale, cr_r, cb_g, cr_g, cb_b};
    const float cbias = SS2_CBIAS;

    /* scale 0: 2x2 pixels per work-item, 16 apart */
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            const int lx = tx + PY_H * i, ly = ty + PY_H * j;
            const int x = bx * PY_T + lx, y = by * PY_T + ly;
            float3 a = (float3)(0.0f), b = (float3)(0.0f);
            if (x < w && y < h) {
                a = yuv_to_linear(ref, x, y, w, cw, ch, h, off0, off1, off2, &k, lut);
                b = yuv_to_linear(dist, x, y, w, cw, ch, h, off0, off1, off2, &k, lut);
                const int n = w * h, o = y * w + x; /* < 2^31 / 5: see ss2_init */
                float3 p = ss2_xyb(a.x, a.y, a.z, cbias), q = ss2_xyb(b.x, b.y, b.z, cbias);
                xyb1[o] = p.x; xyb1[n + o] = p.y; xyb1[2 * n + o] = p.z;
                xyb2[o] = q.x; xyb2[n + o] = q.y; xyb2[2 * n + o] = q.z;
            }
            lin[0][0][ly][lx] = a.x; lin[0][1][ly][lx] = a.y; lin[0][2][ly][lx] = a.z;
            lin[1][0][ly][lx] = b.x; lin[1][1][ly][lx] = b.y; lin[1][2][ly][lx] = b.z;
        }

    /* scale s from scale s - 1: tile side PY_T >> s */
    for (int s = 1; s < scales; s++) {
        const int side = PY_T >> s;
        const int iw = geom[(s - 1) * SS2_G + G_W], ih = geom[(s - 1) * SS2_G + G_H];
        const int ow = geom[s * SS2_G + G_W], oh = geom[s * SS2_G + G_H];
        const int ibx = bx * (2 * side), iby = by * (2 * side); /* tile origin, scale s-1 */
        const int n = ow * oh, off = geom[s * SS2_G + G_OFF];
        if (side == PY_H) {
            /* scale 1: pixel (tx, ty) of both pictures */
            const int x = bx * side + tx, y = by * side + ty;
            const bool inside = x < ow && y < oh;
            float v[2][3] = {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f}};
            barrier(CLK_LOCAL_MEM_FENCE);
            if (inside) {
                const int x0 = 2 * tx, y0 = 2 * ty;
                const int x1 = min(ibx + x0 + 1, iw - 1) - ibx;
                const int y1 = min(iby + y0 + 1, ih - 1) - iby;
                for (int im = 0; im < 2; im++)
                    for (int c = 0; c < 3; c++) {
                        float t = lin[im][c][y0][x0] + lin[im][c][y0][x1];
                        t = t + lin[im][c][y1][x0];
                        t = t + lin[im][c][y1][x1];
                        v[im][c] = t * 0.25f;
                    }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int im = 0; im < 2; im++)
                for (int c = 0; c < 3; c++)
                    lin[im][c][ty][tx] = v[im][c];
            if (inside) {
                const int o = off + y * ow + x;
                float3 p = ss2_xyb(v[0][0], v[0][1], v[0][2], cbias);
                float3 q = ss2_xyb(v[1][0], v[1][1], v[1][2], cbias);
                xyb1[o] = p.x; xyb1[n + o] = p.y; xyb1[2 * n + o] = p.z;
                xyb2[o] = q.x; xyb2[n + o] = q.y; xyb2[2 * n + o] = q.z;
            }
        } else {
            /* scales 2..5: work-item lid < 2 side^2 takes pixel p of
             * picture im (side is a power of two: 1 << (5 - s)) */
            const int lid = ty * PY_H + tx, sq = side * side;
            const int im = lid >= sq, p = lid - im * sq;
            const int px = p & (side - 1), py = p >> (5 - s);
            const int x = bx * side + px, y = by * side + py;
            const bool active = lid < 2 * sq;
            const bool inside = active && x < ow && y < oh;
            float v[3] = {0.0f, 0.0f, 0.0f};
            barrier(CLK_LOCAL_MEM_FENCE);
            if (inside) {
                const int x0 = 2 * px, y0 = 2 * py;
                const int x1 = min(ibx + x0 + 1, iw - 1) - ibx;
                const int y1 = min(iby + y0 + 1, ih - 1) - iby;
                for (int c = 0; c < 3; c++) {
                    float t = lin[im][c][y0][x0] + lin[im][c][y0][x1];
                    t = t + lin[im][c][y1][x0];
                    t = t + lin[im][c][y1][x1];
                    v[c] = t * 0.25f;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (active)
                for (int c = 0; c < 3; c++)
                    lin[im][c][py][px] = v[c];
            if (inside) {
                const int o = off + y * ow + x;
                __global float *dst = im ? xyb2 : xyb1;
                float3 pv = ss2_xyb(v[0], v[1], v[2], cbias);
                dst[o] = pv.x; dst[n + o] = pv.y; dst[2 * n + o] = pv.z;
            }
        }
    }
}

/* ---- libjxl recursive Gaussian: one step of the three 2nd-order
 * recursions, evaluated as the reference does:
 *   o_k = (n2_k * (in[n-N-1] + in[n+N-1]) - d1_k * prev1_k) - prev2_k
 *   out[n] = (o_0 + o_1) + o_2                                            */

typedef struct Ss2Iir {
    float p1[3], p2[3];
} Ss2Iir;

static inline float iir_step(Ss2Iir *s, float sum, float3 n2, float3 d1)
{
    float a, b, o0, o1, o2;
    a = MUL(n2.x, sum); b = MUL(d1.x, s->p1[0]); o0 = (a - b) - s->p2[0];
    a = MUL(n2.y, sum); b = MUL(d1.y, s->p1[1]); o1 = (a - b) - s->p2[1];
    a = MUL(n2.z, sum); b = MUL(d1.z, s->p1[2]); o2 = (a - b) - s->p2[2];
    s->p2[0] = s->p1[0]; s->p2[1] = s->p1[1]; s->p2[2] = s->p1[2];
    s->p1[0] = o0; s->p1[1] = o1; s->p1[2] = o2;
    return (o0 + o1) + o2;
}

/* SS2_N: the recursion's radius N (5 for the reference's sigma 1.5), set
 * by the host as a build option, so that the windows' lengths, the tiles
 * and the loops over them are known to the compiler (no load or store
 * checks a window length at run time) */
#ifndef SS2_N
#error "ssimulacra2.cl is built with -DSS2_N=<radius>"
#endif
#define HB_ROWS 32   /* rows per work-group */
#define HB_T 32      /* output columns per tile */
#define HB_IN (HB_T + 2 * SS2_N)   /* window columns of a chunk */
#if HB_T != HB_ROWS
#error "ss2_hblur's stores give work-item r output column r: HB_T must equal HB_ROWS"
#endif

/* A chunk's window loads go into registers one chunk ahead: they are
 * issued before the current chunk's recursion and wait for memory while it
 * runs. The work-groups are few (a row or a column is one sequential
 * recursion), so little else on a compute unit hides that wait. (Issuing a
 * chunk's loads together without the chunk of lead did not help: measured
 * in doc/performance.md.) The values are the same; only when they are
 * loaded changes. */
#define HB_RPI ((HB_ROWS + 4) / 5)             /* rows per work-item (of 5) */

/* Step t of a chunk adds the window's samples t and t + 2N (in[n-N-1] and
 * in[n+N-1]); work-item (r, q) loads both for step r: a[k][0] and a[k][1]
 * (b: the distorted picture) of row q + 5k. */
typedef struct HbFetch {
    float a[HB_RPI][2], b[HB_RPI][2];
} HbFetch;

/* work-item (r, q): columns ws + r and ws + r + 2N of rows q, q + 5, ..
 * (no run-time divisions: that index arithmetic, not the recursion, was
 * once most of the pass's time). A window inside the row (every chunk but
 * the first and the last) is read through row pointers stepped by 5 rows,
 * without column checks. */
static inline void hb_fetch(HbFetch *f, __global const float *in1, __global const float *in2,
                            int r, int q, int y0, int ws, int w, int h)
{
    const int N = SS2_N;
    if (ws >= 0 && ws + HB_IN <= w) {
        const int i0 = (y0 + q) * w + ws + r; /* < 2^31: see vb_fetch */
        __global const float *a = in1 + i0, *b = in2 + i0;
        for (int k = 0; k < HB_RPI; k++, a += 5 * w, b += 5 * w) {
            const int rr = q + 5 * k;
            const bool inside = rr < HB_ROWS && y0 + rr < h;
            f->a[k][0] = inside ? a[0] : 0.0f;
            f->a[k][1] = inside ? a[2 * N] : 0.0f;
            f->b[k][0] = inside ? b[0] : 0.0f;
            f->b[k][1] = inside ? b[2 * N] : 0.0f;
        }
        return;
    }
    for (int k = 0; k < HB_RPI; k++)
        for (int m = 0; m < 2; m++) {
            const int rr = q + 5 * k, y = y0 + rr, x = ws + r + 2 * N * m;
            const bool inside = rr < HB_ROWS && x >= 0 && x < w && y < h;
            const int i = inside ? y * w + x : 0;
            f->a[k][m] = inside ? in1[i] : 0.0f;
            f->b[k][m] = inside ? in2[i] : 0.0f;
        }
}

/* Horizontal pass, every scale in one launch (work-group ranges per scale
 * in geom). Work-group (HB_ROWS, 5): work-item (r, q) runs the recursion of
 * quantity q (0: x1, 1: x2, 2: x1*x1, 3: x2*x2, 4: x1*x2; zero padding
 * gives 0) along row y0 + r of channel get_group_id(2); where the score
 * weighs no SSIM term of the channel at this scale (G_NEED: X and B at
 * scale 0) only quantities 0 and 1, and none where it weighs no term at
 * all. Each chunk's
 * recursion inputs, the sums in[n-N-1] + in[n+N-1] of the five quantities,
 * are formed while the tile is filled (the same products and additions,
 * in the same order, as a step would make) and stored transposed
 * (tq[q][step][row]), so the recursion reads one __local value a step,
 * consecutive across work-items. Its output goes straight to plane q*3 +
 * c, which is stored column after column (sample (x, y) at x * h + y): at
 * each step the work-items' rows y0 .. y0 + 31 of one column are
 * consecutive, so the stores are coalesced with no pass through the tile
 * (0.181 -> 0.124 ms one lane on the H200, doc/performance.md, wt-ss2h).
 * The next chunk's window is loaded into registers while the recursion
 * runs over this one. (Measured with Nsight Compute on the H200,
 * doc/performance.md: the pass is latency-bound, ~1.7 warps per
 * scheduler, so the instructions each work-item issues per chunk are its
 * time.) The launch is always (HB_ROWS, 5), but the kernel declares no
 * reqd_work_group_size: with one, NVIDIA's compiler ignores the register
 * cap ssimulacra2.c sets for this program (-cl-nv-maxrregcount=128: 162
 * registers, two work-groups per SM, became 128, three: more of other
 * frames' work fits beside it). Splitting each recursion's three chains
 * over three work-items (16 rows, 240 work-items) was slower: 0.186 ->
 * 0.233 ms (doc/performance.md, wt-ss2g). */
__kernel
void ss2_hblur(__global const float *xyb1, __global const float *xyb2,
               __constant const int *geom, int scales, float4 n2v, float4 d1v,
               __global float *hbuf)
{
    __local float tq[5][HB_T][HB_ROWS + 1];
    const int r = get_local_id(0), q = get_local_id(1);
    const int s = scale_of(geom, scales, G_HG0, get_group_id(0));
    __constant const int *gm = geom + s * SS2_G;
    const int w = gm[G_W], h = gm[G_H];
    const int y0 = (get_group_id(0) - gm[G_HG0]) * HB_ROWS, c = get_group_id(2);
    const int nq = quantities_of(need_of(gm, c)); /* the same for the whole group */
    const int rows = min(HB_ROWS, h - y0);
    const size_t plane = (size_t)w * h;
    __global const float *in1 = xyb1 + gm[G_OFF] + c * plane;
    __global const float *in2 = xyb2 + gm[G_OFF] + c * plane;
    /* plane q*3 + c, stored column after column: sample (x, y) at x * h + y */
    __global float *out = hbuf + gm[G_HOFF] + (size_t)(q * 3 + c) * plane + y0 + r;
    const bool row_in = r < rows;
    const int N = SS2_N;
    const float3 n2 = n2v.xyz, d1 = d1v.xyz;
    Ss2Iir st = {{0, 0, 0}, {0, 0, 0}};
    HbFetch f;

    /* steps n = -N+1 .. w-1, HB_T per chunk; chunk window starts at n-N-1 */
    /* (a group whose channel and scale use no quantity runs no chunk) */
    hb_fetch(&f, in1, in2, r, q, y0, -2 * N, w, h);
    for (int base = -N + 1; nq > 0 && base < w; base += HB_T) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < HB_RPI; k++) {
            const int rr = q + 5 * k;
            if (rr < HB_ROWS) {
                const float a0 = f.a[k][0], a1 = f.a[k][1];
                const float b0 = f.b[k][0], b1 = f.b[k][1];
                tq[0][r][rr] = a0 + a1;
                tq[1][r][rr] = b0 + b1;
                if (nq == 5) {
                    tq[2][r][rr] = MUL(a0, a0) + MUL(a1, a1);
                    tq[3][r][rr] = MUL(b0, b0) + MUL(b1, b1);
                    tq[4][r][rr] = MUL(a0, b0) + MUL(a1, b1);
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (base + HB_T < w)
            hb_fetch(&f, in1, in2, r, q, y0, base + HB_T - N - 1, w, h);
        if (q >= nq) {
            /* a quantity the scale's maps do not use: the work-item only
             * fills the tile */
        } else if (base >= 0 && base + HB_T <= w) {
            /* every step's column inside the row (all chunks but the
             * first and the last): a pointer stepped by h */
            __global float *o = out + base * h; /* < 2^31: see vb_fetch */
            for (int t = 0; t < HB_T; t++, o += h) {
                const float v = iir_step(&st, tq[q][t][r], n2, d1);
                if (row_in)
                    *o = v;
            }
        } else {
            for (int t = 0; t < HB_T; t++) {
                const float v = iir_step(&st, tq[q][t][r], n2, d1);
                const int x = base + t;
                if (row_in && x >= 0 && x < w)
                    out[x * h] = v;
            }
        }
    }
}

/* ---- float-float arithmetic (value = hi + lo, |lo| <= ulp(hi)/2) --------- */

static inline float2 ff_two_sum(float a, float b)
{
    float s = a + b;
    float bb = s - a;
    float e = (a - (s - bb)) + (b - bb);
    return (float2)(s, e);
}

static inline float2 ff_fast_two_sum(float a, float b)
{
    float s = a + b;
    float e = b - (s - a);
    return (float2)(s, e);
}

static inline float2 ff_add(float2 x, float2 y)
{
    float2 s = ff_two_sum(x.x, y.x);
    float2 t = ff_two_sum(x.y, y.y);
    s.y += t.x;
    s = ff_fast_two_sum(s.x, s.y);
    s.y += t.y;
    return ff_fast_two_sum(s.x, s.y);
}

static inline float2 ff_mul(float2 x, float2 y)
{
    float p = MUL(x.x, y.x);
    float e = fma(x.x, y.x, -p);
    e += MUL(x.x, y.y) + MUL(x.y, y.x);
    return ff_fast_two_sum(p, e);
}

static inline float2 ff_div(float2 x, float2 y)
{
    float qh = x.x / y.x;
    float p = MUL(qh, y.x);
    float pe = fma(qh, y.x, -p);
    float r = (((x.x - p) - pe) + x.y) - MUL(qh, y.y);
    float ql = r / y.x;
    return ff_fast_two_sum(qh, ql);
}

static inline float2 ff_sq2(float2 x)
{
    float2 s = ff_mul(x, x);
    return ff_mul(s, s);
}

/* ---- a sum of map values: a double where the device has fp64 (the
 * reference sums in double), else float-float. 8 bytes either way, so the
 * partials and the results take the same room on both paths. */
#if SS2_FP64
typedef double ss2_sum;
#define SUM_ZERO 0.0
/* a double product rounded on its own (see MUL) */
#define DMUL(a, b) fma((a), (b), 0.0)
static inline ss2_sum sum_add(ss2_sum a, ss2_sum b)
{
    return a + b;
}
#else
typedef float2 ss2_sum;
#define SUM_ZERO ((float2)(0.0f, 0.0f))
static inline ss2_sum sum_add(ss2_sum a, ss2_sum b)
{
    return ff_add(a, b);
}
#endif

/* Vertical pass + maps. Work-group (VB_COLS, 5) covers VB_COLS columns of
 * channel get_group_id(2): per chunk of VB_T rows it loads the rows the
 * recursion needs (down the planes' columns, coalesced, many loads in
 * flight) into __local memory,
 * work-item (col, q) advances quantity q's recursion down its column (its
 * output for row t written over the sample of row t, which no later step
 * reads), then all work-items compute the maps of the chunk's pixels
 * (reference's SSIMMap / EdgeDiffMap):
 *   d   = max(0, 1 - num_m * num_s / denom_s)        (ssim)
 *   e   = (1 + |x2 - mu2|) / (1 + |x1 - mu1|) - 1 = (ed2 - ed1) / (1 + ed1)
 *   art = max(e, 0), det = max(-e, 0)
 * with num_m, num_s, denom_s and ed1/ed2 in float exactly as the reference
 * (ed = |x - mu| rounded to float, as its AVX-512 path), the rest in double
 * as the reference (SS2_FP64) or in float-float; sums of d, d^4, art,
 * art^4, det, det^4 per work-item, then per work-group into
 * partials[poff + ((c * groups) + g) * 6 + k] of its scale. Only the terms
 * the score weighs (G_NEED) are computed: a group whose channel and scale
 * use no SSIM term (X and B at scale 0) blurs only mu1 and mu2 (its
 * quantities 2-4 load and compute nothing) and skips d; the sums of an
 * unused term stay 0. */
#define VB_COLS 32
#define VB_T 24   /* rows per chunk (26 KiB of __local memory); 16 was ~10% slower.
                   * It also decides which work-item sums which pixel's map
                   * values, so it fixes the order of the float-float sums: 32
                   * (5% faster on the H200) moved scores by ~1e-15. On the
                   * double path 32 was 5% faster one lane too, but not with
                   * 4 lanes (doc/performance.md, wt-fp64): 24 on both */
#define VB_WG (VB_COLS * 5)

/* SSIM map: sums 0 (d) and 1 (d^4) */
static inline void ss2_map_ssim(float mu1, float mu2, float s11, float s22, float s12,
                                ss2_sum acc[6])
{
    const float m11 = MUL(mu1, mu1), m22 = MUL(mu2, mu2), m12 = MUL(mu1, mu2);
    const float df = mu1 - mu2;
    const float num_m = 1.0f - MUL(df, df);
    const float num_s = 2.0f * (s12 - m12) + 0.0009f;
    const float den_s = ((s11 - m11) + (s22 - m22)) + 0.0009f;

#if SS2_FP64
    /* the reference's double operations, one for one: the product of two
     * floats is exact in double, the division is correctly rounded
     * (OpenCL's double '/'), so d is the reference's value and only the
     * order of the sums differs (the same holds for e below) */
    double d = 1.0 - DMUL((double)num_m, (double)num_s) / (double)den_s;
    if (d < 0.0)
        d = 0.0;
    const double d2 = DMUL(d, d);
    acc[0] += d;
    acc[1] += DMUL(d2, d2);
#else
    /* d = 1 - num_m * num_s / den, the product exact */
    float ph = MUL(num_m, num_s);
    float pl = fma(num_m, num_s, -ph);
    float2 qd = ff_div((float2)(ph, pl), (float2)(den_s, 0.0f));
    float2 d = ff_add((float2)(1.0f, 0.0f), -qd);
    if (d.x < 0.0f || (d.x == 0.0f && d.y < 0.0f))
        d = (float2)(0.0f, 0.0f);
    acc[0] = ff_add(acc[0], d);
    acc[1] = ff_add(acc[1], ff_sq2(d));
#endif
}

/* edge-difference map: sums 2, 3 (ringing, ringing^4), 4, 5 (blurring).
 * eneed (the group's NEED_EDGE bits) says which of the two the score
 * weighs at this channel and scale; where it weighs one only (every
 * channel at scale 0, most at the others) only that term's two sums are
 * added to: the other's stay 0, which the score multiplies by 0 (see
 * "Only the weighted terms" in doc/metrics/ssimulacra2.md). The addition
 * into the sum and the select after it are the ones the two-term form
 * makes for that term, so the sums it keeps are bit-identical. */
static inline void ss2_map_edge(float mu1, float mu2, float x1, float x2, int eneed,
                                ss2_sum acc[6])
{
    const float ed1 = fabs(x1 - mu1);
    const float ed2 = fabs(x2 - mu2);
#if SS2_FP64
    const double e = (1.0 + (double)ed2) / (1.0 + (double)ed1) - 1.0;
    const double e2 = DMUL(e, e);
    /* |e| is e where art takes it and -e where det does */
    const double a1 = fabs(e), a4 = DMUL(e2, e2);
    const bool pos = e > 0.0, neg = e < 0.0;
#else
    float2 num = ff_two_sum(ed2, -ed1);
    float2 den = ff_two_sum(1.0f, ed1);
    float2 e = ff_div(num, den);
    /* ff_sq2(e) is the same for -e; e = 0 or NaN adds to neither */
    const bool pos = e.x > 0.0f, neg = e.x < 0.0f;
    const float2 a1 = pos ? e : -e, a4 = ff_sq2(e);
#endif
    if (eneed == NEED_RINGING) {
        const ss2_sum s1 = sum_add(acc[2], a1), s4 = sum_add(acc[3], a4);
        acc[2] = pos ? s1 : acc[2];
        acc[3] = pos ? s4 : acc[3];
    } else if (eneed == NEED_BLURRING) {
        const ss2_sum s1 = sum_add(acc[4], a1), s4 = sum_add(acc[5], a4);
        acc[4] = neg ? s1 : acc[4];
        acc[5] = neg ? s4 : acc[5];
    } else {
        /* both terms: art (e > 0) and det (e < 0) take the same two
         * additions, into different sums: the sums are selected, not
         * branched to, so a warp whose pixels have both signs runs the
         * additions once, not each side in turn */
        const ss2_sum s1 = sum_add(pos ? acc[2] : acc[4], a1);
        const ss2_sum s4 = sum_add(pos ? acc[3] : acc[5], a4);
        acc[2] = pos ? s1 : acc[2];
        acc[3] = pos ? s4 : acc[3];
        acc[4] = neg ? s1 : acc[4];
        acc[5] = neg ? s4 : acc[5];
    }
}

#define VB_IN (VB_T + 2 * SS2_N)                   /* window rows of a chunk */
#define VB_MPI ((VB_T * VB_COLS + VB_WG - 1) / VB_WG) /* map pixels per work-item */

/* One chunk's window, loaded into registers a chunk ahead (see HbFetch).
 * ss2_hblur stores its planes column after column (sample (x, y) at
 * x * h + y), so a warp reads rows of one column: work-item (col, q) of
 * quantity q loads row ws + col of each of the group's columns x0 ..
 * x0 + VB_COLS - 1 (v[0 .. VB_COLS - 1]), and rows ws + VB_COLS .. ws +
 * VB_IN - 1 of column x0 + col (v[VB_COLS ..]). */
#if VB_IN < VB_COLS
#error "vb_fetch gives work-item col window row col: VB_IN must be >= VB_COLS"
#endif
typedef struct VbFetch {
    float v[VB_IN];
} VbFetch;

static inline void vb_fetch(VbFetch *f, __global const float *hin, int col, int x0, int base,
                            int w, int h)
{
    const int ws = base - SS2_N - 1, xc = x0 + col;
    if (ws >= 0 && ws + VB_IN <= h && x0 + VB_COLS <= w) {
        /* the window inside the picture (every chunk but the first and
         * the last, every group but a scale's last if its width is not a
         * multiple of VB_COLS): pointers stepped by h, no checks (each
         * load was ~10 instructions of index arithmetic and checks). int
         * indices: a plane holds < 2^31 samples (ss2_init), and 64-bit
         * products per load were a fifth of the pass's instructions */
        __global const float *p = hin + (x0 * h + ws + col);
        for (int i = 0; i < VB_COLS; i++, p += h)
            f->v[i] = *p;
        __global const float *e = hin + (xc * h + ws);
        for (int i = VB_COLS; i < VB_IN; i++)
            f->v[i] = e[i];
        return;
    }
    for (int i = 0; i < VB_COLS; i++) {
        const int x = x0 + i, y = ws + col;
        const bool inside = x < w && y >= 0 && y < h;
        f->v[i] = inside ? hin[x * h + y] : 0.0f;
    }
    for (int i = VB_COLS; i < VB_IN; i++) {
        const int y = ws + i;
        const bool inside = xc < w && y >= 0 && y < h;
        f->v[i] = inside ? hin[xc * h + y] : 0.0f;
    }
}

/* The map pixels of a chunk: pixel idx = lid + k * VB_WG goes to work-item
 * lid = q * VB_COLS + col, and as VB_WG = 5 * VB_COLS that is the pixel in
 * row t = q + 5 k, column col of the chunk. Written so (not as idx /
 * VB_COLS), the compiler knows each work-item's pixels share its column
 * and lie 5 rows apart: their __local addresses are one base plus
 * constants, and only the row is tested. */
#if VB_WG != 5 * VB_COLS
#error "the map pixels' rows q + 5 k need VB_WG = 5 * VB_COLS"
#endif

/* The pictures' samples at the map pixels work-item (col, q) takes in the
 * chunk at row base (rows q + 5 k, column x0 + col). Loaded in the
 * chunk that uses them, before its recursion (which hides their latency),
 * not a chunk ahead: held and copied through a whole chunk they cost more
 * than their earlier start gained (0.182 -> 0.170 ms one lane on the H200,
 * doc/performance.md, wt-ss2f). */
static inline void vb_samples(float x1[VB_MPI], float x2[VB_MPI], __global const float *p1,
                              __global const float *p2, int q, int col, int x0, int base,
                              int w, int h, bool whole)
{
    const int x = x0 + col;
    if (whole) {
        /* the chunk inside the picture (see ss2_vblur_maps) */
        const int i0 = (base + q) * w + x;
        for (int k = 0; k < VB_MPI; k++) {
            const bool in = q + 5 * k < VB_T;
            const int i = i0 + 5 * k * w;
            x1[k] = in ? p1[i] : 0.0f;
            x2[k] = in ? p2[i] : 0.0f;
        }
        return;
    }
    for (int k = 0; k < VB_MPI; k++) {
        const int t = q + 5 * k, n = base + t;
        const bool inside = t < VB_T && n >= 0 && n < h && x < w;
        const int i = inside ? n * w + x : 0;
        x1[k] = inside ? p1[i] : 0.0f;
        x2[k] = inside ? p2[i] : 0.0f;
    }
}

/* The maps of the pixel in row t, column col of a chunk (the work-item's
 * pixel k): the terms need asks. A macro, not a function taking the
 * tiles: PoCL 3.1's compiler (LLVM 15) crashed inlining a function with
 * a pointer to the __local tiles. */
#define VB_MAP(t, k)                                                                         \
    do {                                                                                     \
        const float mu1 = lm.tin[0][t][col], mu2 = lm.tin[1][t][col];                        \
        if (need & NEED_SSIM)                                                                \
            ss2_map_ssim(mu1, mu2, lm.tin[2][t][col], lm.tin[3][t][col], lm.tin[4][t][col], \
                         acc);                                                               \
        if (need & NEED_EDGE)                                                                \
            ss2_map_edge(mu1, mu2, x1[k], x2[k], need & NEED_EDGE, acc);                     \
    } while (0)

__kernel __attribute__((reqd_work_group_size(VB_COLS, 5, 1)))
void ss2_vblur_maps(__global const float *hbuf, __global const float *xyb1,
                    __global const float *xyb2, __constant const int *geom, int scales,
                    float4 n2v, float4 d1v, __global ss2_sum *partials)
{
    /* the final reduction reuses the input tiles' memory */
    __local union {
        float tin[5][VB_IN][VB_COLS + 1];
        ss2_sum red[6][VB_WG];
    } lm;
    const int col = get_local_id(0), q = get_local_id(1);
    const int lid = q * VB_COLS + col;
    const int s = scale_of(geom, scales, G_VG0, get_group_id(0));
    __constant const int *gm = geom + s * SS2_G;
    const int w = gm[G_W], h = gm[G_H], g = get_group_id(0) - gm[G_VG0];
    const int x0 = g * VB_COLS, c = get_group_id(2);
    const int need = need_of(gm, c), nq = quantities_of(need); /* the whole group's */
    const bool edge = need & NEED_EDGE;
    const size_t plane = (size_t)w * h;
    const int N = SS2_N;
    const float3 n2 = n2v.xyz, d1 = d1v.xyz;
    __global const float *p1 = xyb1 + gm[G_OFF] + c * plane;
    __global const float *p2 = xyb2 + gm[G_OFF] + c * plane;
    __global const float *hin = hbuf + gm[G_HOFF] + (size_t)(q * 3 + c) * plane;
    Ss2Iir st = {{0, 0, 0}, {0, 0, 0}};
    ss2_sum acc[6];
    VbFetch f;
    for (int k = 0; k < 6; k++)
        acc[k] = SUM_ZERO;
    /* work-items of quantities the maps do not use (q >= nq) load and
     * blur nothing; all take their share of the maps */
    const bool blur = q < nq;

    /* steps n = -N+1 .. h-1, VB_T per chunk; chunk window starts at n-N-1;
     * the next chunk's loads are in flight while this one is computed */
    if (blur)
        vb_fetch(&f, hin, col, x0, -N + 1, w, h);
    /* (a group whose channel and scale use no term runs no chunk: its
     * sums stay 0) */
    for (int base = -N + 1; nq > 0 && base < h; base += VB_T) {
        float x1[VB_MPI], x2[VB_MPI];
        /* a chunk inside the picture (every chunk but the first and the
         * last, every group but a scale's last where its width is not a
         * multiple of VB_COLS): its map pixels are tested only for their
         * row in the chunk */
        const bool whole = base >= 0 && base + VB_T <= h && x0 + VB_COLS <= w;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (blur) {
            for (int i = 0; i < VB_COLS; i++)
                lm.tin[q][col][i] = f.v[i];
            for (int i = VB_COLS; i < VB_IN; i++)
                lm.tin[q][i][col] = f.v[i];
        }
        if (edge)
            vb_samples(x1, x2, p1, p2, q, col, x0, base, w, h, whole);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (blur) {
            if (base + VB_T < h)
                vb_fetch(&f, hin, col, x0, base + VB_T, w, h);
            /* the output of step t goes over the sample it has read (later
             * steps read t' and t' + 2N > t): no output tile */
            for (int t = 0; t < VB_T; t++)
                lm.tin[q][t][col] =
                    iir_step(&st, lm.tin[q][t][col] + lm.tin[q][t + 2 * N][col], n2, d1);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the same pixels in the same order either way (column col, see
         * vb_samples): the two loops differ only in their tests */
        if (whole) {
            for (int k = 0; k < VB_MPI; k++) {
                const int t = q + 5 * k;
                if (t < VB_T)
                    VB_MAP(t, k);
            }
        } else {
            for (int k = 0; k < VB_MPI; k++) {
                const int t = q + 5 * k, n = base + t;
                if (t < VB_T && n >= 0 && n < h && x0 + col < w)
                    VB_MAP(t, k);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* the maps read the tiles red overlays */
    for (int k = 0; k < 6; k++)
        lm.red[k][lid] = acc[k];
    barrier(CLK_LOCAL_MEM_FENCE);
    /* VB_WG = 160: fold 160 -> 128, then halve */
    if (lid < VB_WG - 128)
        for (int k = 0; k < 6; k++)
            lm.red[k][lid] = sum_add(lm.red[k][lid], lm.red[k][lid + 128]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = 64; step > 0; step >>= 1) {
        if (lid < step)
            for (int k = 0; k < 6; k++)
                lm.red[k][lid] = sum_add(lm.red[k][lid], lm.red[k][lid + step]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid < 6)
        partials[gm[G_POFF] + ((size_t)c * gm[G_VGN] + g) * 6 + lid] = lm.red[lid][0];
}

/* ---- final sums: work-group s*18 + c*6 + k adds that sum's partials of
 * scale s into results[results_index + s*18 + c*6 + k] (double or
 * float-float, 8 bytes each). */
#define RD_WG 64

__kernel __attribute__((reqd_work_group_size(RD_WG, 1, 1)))
void ss2_reduce(__global const ss2_sum *partials, __constant const int *geom, int scales,
                __global ss2_sum *results, uint results_index)
{
    __local ss2_sum red[RD_WG];
    const int g = get_group_id(0), lid = get_local_id(0);
    const int s = g / 18, c = (g / 6) % 3, k = g % 6;
    ss2_sum acc = SUM_ZERO;
    if (s < scales) {
        __constant const int *gm = geom + s * SS2_G;
        const int n = gm[G_VGN];
        __global const ss2_sum *p = partials + gm[G_POFF] + (size_t)c * n * 6 + k;
        for (int i = lid; i < n; i += RD_WG)
            acc = sum_add(acc, p[(size_t)i * 6]);
    }
    red[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = RD_WG / 2; step > 0; step >>= 1) {
        if (lid < step)
            red[lid] = sum_add(red[lid], red[lid + step]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        results[results_index + g] = red[0];
}
