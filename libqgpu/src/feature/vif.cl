/*
 * Integer VIF, bit-exact with libvmaf 3.2.0 (integer_vif.c, integer_vif.h).
 *
 * One launch per scale (vif_s0 .. vif_s3). A work-group walks tiles of
 * TW x TH pixels of its scale: it stages the tile and its filter halo of ref
 * and dis in __local memory, runs the vertical then the horizontal pass of
 * the scale's filter (libvmaf's order and rounding), takes the per-pixel
 * statistic and accumulates libvmaf's four integer sums in registers; in the
 * same pass it low-pass filters the even rows/columns with the next scale's
 * filter and writes the next scale's ref/dis. Each work-group writes its four
 * sums (int64) to `partial`; the host adds them.
 *
 * libvmaf computes the gain g = sigma12 / (sigma1^2 + eps) and what follows
 * in IEEE double. Kernels must not need fp64, so those few operations are
 * done here in integer arithmetic with IEEE round-to-nearest-even on 53-bit
 * mantissas (sd_* below): the results are the same doubles, bit for bit.
 *
 * Build options: -DVIF_IN8=1 when scale-0 samples are 8-bit (else 16-bit
 * words), -DVIF_WG=<work-group size> (a power of two >= 64), -DVIF_WIDE=1
 * to accumulate the 48-bit sums of squares with 32x32+64-bit multiply-adds
 * (one instruction on GPUs), 0 to accumulate their 16-bit halves in 32-bit
 * sums (much faster on CPU devices, whose vectorisers handle 64-bit
 * multiplies poorly). Both are exact. -DVIF_S1_VFP64=1: see below.
 *
 * -DVIF_FP64=1 (devices with cl_khr_fp64): the gain and what follows are
 * computed in IEEE double like libvmaf, a handful of correctly rounded
 * operations (OpenCL requires 0-ulp double +, *, /; contraction into fma is
 * switched off below), in place of the integer emulation. Same bits.
 */

#ifndef VIF_FP64
#define VIF_FP64 0
#endif
#if VIF_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
/* libvmaf's double expressions are separate roundings: no fma contraction */
#pragma OPENCL FP_CONTRACT OFF
/* -DVIF_S1_VFP64=1 (with VIF_WIDE; devices whose doubles keep denormals):
 * scale 1's vertical 48-bit sums of squares as fp64 fmas on subnormal
 * doubles, on the fp64 pipe beside the integer work. A ulong n < 2^52 read
 * as a double is exactly n * 2^-1074, and fma(f, n, acc) is exact while
 * f * n + acc < 2^53 units: here x * y < 2^32, the taps sum to 2^16, plus
 * the rounding constant: < 2^49. The program is built without
 * -cl-denorms-are-zero. Measured on an H200 (issue #21): scale 1 0.0657 ->
 * 0.0610 ms at 2160p; at scales 0 and 2 such sums were slower
 * (doc/metrics/vif.md), so only here. */
#ifndef VIF_S1_VFP64
#define VIF_S1_VFP64 0
#endif
#if VIF_S1_VFP64 && !VIF_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifndef VIF_WG
#define VIF_WG 256
#endif
#ifndef VIF_IN8
#define VIF_IN8 1
#endif
#ifndef VIF_WIDE
#define VIF_WIDE 1
#endif

#define TW 64
#define TH 16
#define SIGMA_NSQ 131072 /* 2.0 in the 16.16 variance units (integer_vif.c) */

/* integer_vif.h: vif_filter1d_table, widths 17, 9, 5, 3 */
__constant ushort vif_taps[4][17] = {
    {489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640, 935,
     489},
    {1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244, 0, 0, 0, 0, 0, 0, 0, 0},
    {3571, 16004, 26386, 16004, 3571, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {10904, 43728, 10904, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
};

#define FW(s) ((s) == 0 ? 17 : (s) == 1 ? 9 : (s) == 2 ? 5 : 3)
/* The tap loops are unrolled (#pragma unroll) so that each tap is an
 * immediate operand: left to itself NVIDIA's compiler unrolled scale 0's
 * horizontal loop only by 4, loading every tap from __constant memory
 * (doc/metrics/vif.md). */

/* ---- IEEE double arithmetic on integers ------------------------------ */

/* value = m * 2^e with m in [2^52, 2^53) */
typedef struct {
    ulong m;
    int e;
} sd_t;

static inline int bitlen64(ulong x)
{
    return 64 - (int)clz(x);
}

static inline sd_t sd_from_uint(uint v) /* v > 0, exact */
{
    sd_t r;
    int b = 32 - (int)clz(v);
    r.m = (ulong)v << (53 - b);
    r.e = b - 53;
    return r;
}

/* (hi:lo) * 2^e, (hi:lo) != 0, rounded to 53 bits, ties to even. */
static inline sd_t sd_round128(ulong hi, ulong lo, int e)
{
    sd_t r;
    int len = hi ? 64 + bitlen64(hi) : bitlen64(lo);
    int sh = len - 53;
    if (sh <= 0) {
        r.m = lo << (-sh);
        r.e = e + sh;
        return r;
    }
    ulong q, rb, st;
    if (sh < 64) {
        q = (lo >> sh) | (hi << (64 - sh));
        rb = (lo >> (sh - 1)) & 1;
        st = sh > 1 ? (ulong)((lo << (65 - sh)) != 0) : 0;
    } else {
        int s2 = sh - 64;
        q = hi >> s2;
        if (s2 == 0) {
            rb = lo >> 63;
            st = (ulong)((lo << 1) != 0);
        } else {
            rb = (hi >> (s2 - 1)) & 1;
            st = (ulong)(lo != 0) | (s2 > 1 ? (ulong)((hi << (65 - s2)) != 0) : 0);
        }
    }
    if (rb && (st || (q & 1))) {
        q++;
        if (q >> 53) {
            q >>= 1;
            sh++;
        }
    }
    r.m = q;
    r.e = e + sh;
    return r;
}

static inline sd_t sd_mul(sd_t a, sd_t b)
{
    return sd_round128(mul_hi(a.m, b.m), a.m * b.m, a.e + b.e);
}

/* a / D for an integer a > 0 and D = dm * 2^de (dm in [2^52, 2^53)): long
 * division in five radix-2^11 steps whose digits are estimated in float and
 * then corrected from the exact remainder (the estimate is off by at most
 * one: float's relative error 2^-22 on a digit < 2^11), so the 55 quotient
 * bits and the remainder are exact and so is the rounding. */
static inline sd_t sd_div_uint(uint a, ulong dm, int de)
{
    const int abits = 32 - (int)clz(a);
    const float dinv = 2048.0f / (float)dm;
    ulong r = (ulong)a << (52 - abits); /* < dm: the leading quotient bits are 0 */
    ulong q = 0;
    for (int i = 0; i < 5; i++) {
        ulong rs = r << 11;
        uint d = (uint)((float)r * dinv);
        ulong p = (ulong)d * dm;
        ulong nr = rs - p;
        if (p > rs) {
            d--;
            nr += dm;
        } else if (nr >= dm) {
            d++;
            nr -= dm;
        }
        q = (q << 11) | d;
        r = nr;
    }
    /* q = floor(a * 2^(107 - abits) / dm), in [2^53, 2^55) */
    int sh = (q >> 54) ? 2 : 1;
    ulong m = q >> sh;
    ulong rb = (q >> (sh - 1)) & 1;
    ulong st = (sh == 2 ? (q & 1) : 0) | (ulong)(r != 0);
    sd_t res;
    res.e = sh - (107 - abits) - de;
    if (rb && (st || (m & 1))) {
        m++;
        if (m >> 53) {
            m >>= 1;
            res.e++;
        }
    }
    res.m = m;
    return res;
}

static inline ulong sd_trunc(sd_t a) /* a > 0; C's conversion to integer */
{
    if (a.e >= 0)
        return a.m << a.e;
    if (a.e <= -64)
        return 0;
    return a.m >> (-a.e);
}

static inline int sd_gt(sd_t a, sd_t b)
{
    return a.e > b.e || (a.e == b.e && a.m > b.m);
}

/* max(0, (int)(s2 - p)) with the subtraction rounded as a double. */
static inline uint sub_trunc(uint s2, sd_t p)
{
    if (p.e >= 0) /* p >= 2^52 > s2 */
        return 0;
    int f = -p.e;
    ulong ahi, alo;
    if (f >= 64) {
        ahi = (ulong)s2 << (f - 64);
        alo = 0;
    } else {
        ahi = (ulong)s2 >> (64 - f);
        alo = (ulong)s2 << f;
    }
    if (ahi == 0 && alo <= p.m)
        return 0;
    ulong dlo = alo - p.m;
    ulong dhi = ahi - (ulong)(alo < p.m);
    return (uint)sd_trunc(sd_round128(dhi, dlo, -f));
}

/* ---- libvmaf's log2 table (entries 32768..65535, x 2048) ------------- */

static inline long log2_32(__global const ushort *lut, uint v)
{
    int k = 16 - (int)clz(v);
    return (long)lut[(v >> k) - 32768] + 2048 * (long)k;
}

static inline long log2_64(__global const ushort *lut, ulong v)
{
    int k = 48 - (int)clz(v);
    return (long)lut[(v >> k) - 32768] + 2048 * (long)k;
}

typedef struct {
    long num_log, den_log, num_non_log, den_non_log;
} vif_acc_t;

/* The gain's constants: its limit egl and eps = eps_m * 2^eps_e; with fp64
 * also as doubles, built once per work-item (vif_gain_make). Built inside
 * vif_pixel, ldexp's two branchy sequences ran for every pixel that
 * reaches the division (seen in the PTX of NVIDIA's driver 580: the
 * compiler does not hoist them out of the conditional block). */
typedef struct {
    sd_t egl;
    ulong eps_m;
    int eps_e;
#if VIF_FP64
    double egl_d, eps_d;
#endif
} vif_gain_t;

static inline vif_gain_t vif_gain_make(sd_t egl, ulong eps_m, int eps_e)
{
    vif_gain_t g;
    g.egl = egl;
    g.eps_m = eps_m;
    g.eps_e = eps_e;
#if VIF_FP64
    /* m * 2^e, exact: egl in [1, 100] and eps = 6.5536e-6 are normal
     * doubles (common.cl's POW2_DOUBLE_BITS) */
    g.egl_d = (double)egl.m * as_double(POW2_DOUBLE_BITS(egl.e));
    g.eps_d = (double)eps_m * as_double(POW2_DOUBLE_BITS(eps_e));
#endif
    return g;
}

/* integer_vif.c's per-pixel statistic. */
static inline void vif_pixel(uint mu1, uint mu2, uint xx, uint yy, uint xy,
                             __global const ushort *lut, const vif_gain_t *gain,
                             vif_acc_t *acc)
{
    const sd_t egl = gain->egl;
    const ulong eps_m = gain->eps_m;
    const int eps_e = gain->eps_e;
    uint mu1_sq = (uint)(((ulong)mu1 * mu1 + 0x80000000UL) >> 32);
    uint mu2_sq = (uint)(((ulong)mu2 * mu2 + 0x80000000UL) >> 32);
    uint mu1_mu2 = (uint)(((ulong)mu1 * mu2 + 0x80000000UL) >> 32);
    int s1 = (int)(xx - mu1_sq);
    int s2 = max((int)(yy - mu2_sq), 0);
    int s12 = (int)(xy - mu1_mu2);

    if (s1 < SIGMA_NSQ) {
        acc->num_non_log += s2;
        acc->den_non_log += 1;
        return;
    }
    acc->den_log += log2_32(lut, (uint)SIGMA_NSQ + (uint)s1) - 2048 * 17;
    if (s12 <= 0 || s2 <= 0)
        return;

#if VIF_FP64
    /* integer_vif.c: g = sigma12 / (sigma1_sq + eps);
     * sv_sq = max((int32)(sigma2_sq - g * sigma12), 0); g = min(g, egl);
     * numer1_tmp = (int64)(g * g * sigma1_sq) + numer1 */
    const double eps_d = gain->eps_d, egl_d = gain->egl_d;
    double gd = (double)s12 / ((double)s1 + eps_d);
    double rest = (double)s2 - gd * (double)s12;
    uint sv64 = rest > 0.0 ? (uint)rest : 0u;
    if (gd > egl_d)
        gd = egl_d;
    double td = gd * gd * (double)s1;
    uint numer1_64 = sv64 + SIGMA_NSQ;
    acc->num_log += log2_64(lut, (ulong)((long)td + numer1_64)) - log2_64(lut, numer1_64);
    return;
#endif

    /* D = (double)s1 + eps: s1 (17..31 bits) plus eps rounded to the ulp of
     * s1's binade (no carry out of the binade: eps < 1). */
    int e1 = 31 - (int)clz((uint)s1);
    int sh = -(eps_e + 52 - e1);
    ulong k = eps_m >> sh;
    ulong rb = (eps_m >> (sh - 1)) & 1;
    ulong st = (eps_m << (65 - sh)) != 0;
    k += rb && (st || (k & 1));
    sd_t D;
    D.m = ((ulong)s1 << (52 - e1)) + k;
    D.e = e1 - 52;

    sd_t s12d = sd_from_uint((uint)s12);
    sd_t g = sd_div_uint((uint)s12, D.m, D.e);     /* g = sigma12 / (sigma1_sq + eps) */
    uint sv = sub_trunc((uint)s2, sd_mul(g, s12d)); /* sv_sq = max(sigma2_sq - g*sigma12, 0) */
    if (sd_gt(g, egl))
        g = egl;
    sd_t t = sd_mul(sd_mul(g, g), sd_from_uint((uint)s1)); /* g * g * sigma1_sq */
    uint numer1 = sv + SIGMA_NSQ;
    long numer1_tmp = (long)sd_trunc(t) + numer1;
    acc->num_log += log2_64(lut, (ulong)numer1_tmp) - log2_64(lut, numer1);
}

/* One scale: statistic of this scale and, unless SCALE == 3, the next
 * scale's pictures. SCALE and IN8 are compile-time constants at each call. */
static inline void vif_scale_run(const int SCALE, const int IN8, __global const uchar *r8,
                                 __global const uchar *d8, __global const ushort *r16,
                                 __global const ushort *d16, const int w, const int h,
                                 const int bpc, __global ushort *next_r, __global ushort *next_d,
                                 const int do_stat, __global long *partial,
                                 __global const ushort *lut, sd_t egl, ulong eps_m, int eps_e,
                                 __local ushort *in_r, __local ushort *in_d,
                                 __local ushort *v_mu1, __local ushort *v_mu2, __local uint *v_xx,
                                 __local uint *v_yy, __local uint *v_xy, __local ushort *s_r,
                                 __local ushort *s_d, __local long *red)
{
    const int F = FW(SCALE), R = F / 2;
    const int HAS_NEXT = SCALE < 3;
    const int FN = HAS_NEXT ? FW(SCALE + 1) : 1, RN = FN / 2;
    const int IW = TW + 2 * R, IH = TH + 2 * R, SW = TW + 2 * RN;
    const int lid = get_local_id(0);

    /* vertical-pass shifts: scale 0 works on bpc-bit samples */
    const int vsh = SCALE == 0 ? bpc : 16;
    const uint vrnd = 1u << (vsh - 1);
    const int vsh_sq = SCALE == 0 ? 2 * (bpc - 8) : 16;
    const uint vrnd_sq = vsh_sq ? (1u << (vsh_sq - 1)) : 0;

    const int tiles_x = (w + TW - 1) / TW, tiles_y = (h + TH - 1) / TH;
    const int ntiles = tiles_x * tiles_y;
    const int nw = w / 2, nh = h / 2;

    vif_acc_t acc = {0, 0, 0, 0};
    const vif_gain_t gain = vif_gain_make(egl, eps_m, eps_e);

    for (int t = get_group_id(0); t < ntiles; t += get_num_groups(0)) {
        const int x0 = (t % tiles_x) * TW, y0 = (t / tiles_x) * TH;

        /* At scale 0 a tile whose halo lies inside the picture needs no
         * mirroring, and when w is a multiple of 4 its rows start on
         * 4-sample boundaries of the buffer (x0 - R = x0 - 8, x0 a multiple
         * of TW), so it is staged 4 samples per load: the same samples.
         * (Scale 1 staged this way measured slower on the H200.) */
        const int inside = SCALE == 0 && w % 4 == 0 && x0 >= R && y0 >= R &&
                           x0 + TW + R <= w && y0 + TH + R <= h;
        if (inside) {
            for (int i = lid; i < IH * IW / 4; i += VIF_WG) {
                int ry = i / (IW / 4), rx = 4 * (i - ry * (IW / 4)); /* 4 * i == ry * IW + rx */
                size_t o = (size_t)(uint)(y0 - R + ry) * (uint)w + (uint)(x0 - R + rx);
                if (IN8) {
                    *(__local ushort4 *)(in_r + 4 * i) =
                        convert_ushort4(*(__global const uchar4 *)(r8 + o));
                    *(__local ushort4 *)(in_d + 4 * i) =
                        convert_ushort4(*(__global const uchar4 *)(d8 + o));
                } else {
                    *(__local ushort4 *)(in_r + 4 * i) = *(__global const ushort4 *)(r16 + o);
                    *(__local ushort4 *)(in_d + 4 * i) = *(__global const ushort4 *)(d16 + o);
                }
            }
        } else {
            /* a tile whose halo lies inside the picture needs no mirroring
             * (uniform across the work-group: the mirroring is skipped) */
            const int mirror = !(x0 >= R && y0 >= R && x0 + TW + R <= w && y0 + TH + R <= h);
            for (int i = lid; i < IH * IW; i += VIF_WG) {
                int ry = i / IW, rx = i - ry * IW;
                int gy = y0 - R + ry, gx = x0 - R + rx;
                if (mirror) {
                    gy = mirror_skip_edge(gy, h);
                    gx = mirror_skip_edge(gx, w);
                }
                size_t o = (size_t)(uint)gy * (uint)w + (uint)gx;
                if (IN8) {
                    in_r[i] = r8[o];
                    in_d[i] = d8[o];
                } else {
                    in_r[i] = r16[o];
                    in_d[i] = d16[o];
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        if (do_stat) {
            for (int i = lid; i < TH * IW; i += VIF_WG) {
                int ry = i / IW, rx = i - ry * IW;
                uint a1 = 0, a2 = 0;
                if (SCALE == 0 && IN8) {
                    /* 8-bit: every sum fits 32 bits; libvmaf keeps them unshifted */
                    uint axx = 0, ayy = 0, axy = 0;
#pragma unroll
                    for (int k = 0; k < F; k++) {
                        uint f = vif_taps[SCALE][k];
                        uint x = in_r[(ry + k) * IW + rx], y = in_d[(ry + k) * IW + rx];
                        uint fx = f * x, fy = f * y;
                        a1 += fx;
                        a2 += fy;
                        axx += fx * x;
                        ayy += fy * y;
                        axy += fx * y;
                    }
                    v_xx[i] = axx;
                    v_yy[i] = ayy;
                    v_xy[i] = axy;
#if VIF_S1_VFP64
                } else if (VIF_WIDE && SCALE == 1) {
                    double axx = as_double((ulong)vrnd_sq), ayy = axx, axy = axx;
#pragma unroll
                    for (int k = 0; k < F; k++) {
                        uint f = vif_taps[SCALE][k];
                        uint x = in_r[(ry + k) * IW + rx], y = in_d[(ry + k) * IW + rx];
                        a1 += f * x;
                        a2 += f * y;
                        axx = fma((double)f, as_double((ulong)(x * x)), axx);
                        ayy = fma((double)f, as_double((ulong)(y * y)), ayy);
                        axy = fma((double)f, as_double((ulong)(x * y)), axy);
                    }
                    v_xx[i] = (uint)(as_ulong(axx) >> vsh_sq);
                    v_yy[i] = (uint)(as_ulong(ayy) >> vsh_sq);
                    v_xy[i] = (uint)(as_ulong(axy) >> vsh_sq);
#endif
                } else if (VIF_WIDE) {
                    /* x*y fits 32 bits, its filtered sum 48: one 32x32+64 mad;
                     * the sums start at the rounding constant */
                    ulong axx = vrnd_sq, ayy = axx, axy = axx;
#pragma unroll
                    for (int k = 0; k < F; k++) {
                        uint f = vif_taps[SCALE][k];
                        uint x = in_r[(ry + k) * IW + rx], y = in_d[(ry + k) * IW + rx];
                        a1 += f * x;
                        a2 += f * y;
                        axx += (ulong)f * (x * x);
                        ayy += (ulong)f * (y * y);
                        axy += (ulong)f * (x * y);
                    }
                    v_xx[i] = (uint)(axx >> vsh_sq);
                    v_yy[i] = (uint)(ayy >> vsh_sq);
                    v_xy[i] = (uint)(axy >> vsh_sq);
                } else {
                    /* the 48-bit sums as two 32-bit sums of the 16-bit halves
                     * of x*y (the taps sum to 65536: no overflow), then
                     * (H * 2^16 + L + rnd) >> sh, sh <= 16, modulo 2^32 */
                    uint xl = 0, yl = 0, cl = 0, xh = 0, yh = 0, ch = 0;
#pragma unroll
                    for (int k = 0; k < F; k++) {
                        uint f = vif_taps[SCALE][k];
                        uint x = in_r[(ry + k) * IW + rx], y = in_d[(ry + k) * IW + rx];
                        uint xx = x * x, yy = y * y, xy = x * y;
                        a1 += f * x;
                        a2 += f * y;
                        xl += f * (xx & 0xffff);
                        yl += f * (yy & 0xffff);
                        cl += f * (xy & 0xffff);
                        xh += f * (xx >> 16);
                        yh += f * (yy >> 16);
                        ch += f * (xy >> 16);
                    }
                    v_xx[i] = (xh << (16 - vsh_sq)) + ((xl + vrnd_sq) >> vsh_sq);
                    v_yy[i] = (yh << (16 - vsh_sq)) + ((yl + vrnd_sq) >> vsh_sq);
                    v_xy[i] = (ch << (16 - vsh_sq)) + ((cl + vrnd_sq) >> vsh_sq);
                }
                v_mu1[i] = (ushort)((a1 + vrnd) >> vsh);
                v_mu2[i] = (ushort)((a2 + vrnd) >> vsh);
            }
        }
        if (HAS_NEXT) {
            for (int i = lid; i < (TH / 2) * SW; i += VIF_WG) {
                int ry = i / SW, rx = i - ry * SW;
                int base = (2 * ry + R - RN) * IW + rx + R - RN;
                uint ar = 0, ad = 0;
#pragma unroll
                for (int k = 0; k < FN; k++) {
                    uint f = vif_taps[min(SCALE + 1, 3)][k];
                    ar += f * in_r[base + k * IW];
                    ad += f * in_d[base + k * IW];
                }
                s_r[i] = (ushort)((ar + vrnd) >> vsh);
                s_d[i] = (ushort)((ad + vrnd) >> vsh);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        if (do_stat) {
            for (int i = lid; i < TH * TW; i += VIF_WG) {
                int ry = i / TW, rx = i - ry * TW;
                if (y0 + ry >= h || x0 + rx >= w)
                    continue;
                uint a1 = 0, a2 = 0, xx, yy, xy;
                int base = ry * IW + rx;
                if (VIF_WIDE) {
                    /* the sums start at the rounding constant */
                    ulong axx = 32768, ayy = axx, axy = axx;
#pragma unroll
                    for (int k = 0; k < F; k++) {
                        uint f = vif_taps[SCALE][k];
                        a1 += f * (uint)v_mu1[base + k];
                        a2 += f * (uint)v_mu2[base + k];
                        axx += (ulong)f * v_xx[base + k];
                        ayy += (ulong)f * v_yy[base + k];
                        axy += (ulong)f * v_xy[base + k];
                    }
                    xx = (uint)(axx >> 16);
                    yy = (uint)(ayy >> 16);
                    xy = (uint)(axy >> 16);
                } else { /* 16-bit halves, as in the vertical pass */
                    uint xl = 0, yl = 0, cl = 0, xh = 0, yh = 0, ch = 0;
#pragma unroll
                    for (int k = 0; k < F; k++) {
                        uint f = vif_taps[SCALE][k];
                        uint vx = v_xx[base + k], vy = v_yy[base + k], vc = v_xy[base + k];
                        a1 += f * (uint)v_mu1[base + k];
                        a2 += f * (uint)v_mu2[base + k];
                        xl += f * (vx & 0xffff);
                        xh += f * (vx >> 16);
                        yl += f * (vy & 0xffff);
                        yh += f * (vy >> 16);
                        cl += f * (vc & 0xffff);
                        ch += f * (vc >> 16);
                    }
                    /* (sum + 32768) >> 16 of the 48-bit sums, as uint32 */
                    xx = xh + ((xl + 32768) >> 16);
                    yy = yh + ((yl + 32768) >> 16);
                    xy = ch + ((cl + 32768) >> 16);
                }
                vif_pixel(a1, a2, xx, yy, xy, lut, &gain, &acc);
            }
        }
        if (HAS_NEXT) {
            for (int i = lid; i < (TH / 2) * (TW / 2); i += VIF_WG) {
                int ry = i / (TW / 2), rx = i - ry * (TW / 2);
                int oy = y0 / 2 + ry, ox = x0 / 2 + rx;
                if (oy >= nh || ox >= nw)
                    continue;
                uint ar = 0, ad = 0;
                int base = ry * SW + 2 * rx;
#pragma unroll
                for (int k = 0; k < FN; k++) {
                    uint f = vif_taps[min(SCALE + 1, 3)][k];
                    ar += f * (uint)s_r[base + k];
                    ad += f * (uint)s_d[base + k];
                }
                const size_t o = (size_t)(uint)oy * (uint)nw + (uint)ox;
                next_r[o] = (ushort)((ar + 32768) >> 16);
                next_d[o] = (ushort)((ad + 32768) >> 16);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* work-group sums of the four accumulators */
    long vals[4] = {acc.num_log, acc.den_log, acc.num_non_log, acc.den_non_log};
    /* All four at once, in two barriers after the stores: 32 work-items per
     * sum each add VIF_WG / 32 of its values (into the first 32 places,
     * which only they read), then one work-item per sum adds those 32. */
    for (int q = 0; q < 4; q++)
        red[q * VIF_WG + lid] = vals[q];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = lid; k < 4 * 32; k += VIF_WG) {
        __local long *r = red + (k / 32) * VIF_WG + k % 32;
        long s = 0;
        for (int m = 0; m < VIF_WG / 32; m++)
            s += r[32 * m];
        r[0] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 4) {
        long s = 0;
        for (int m = 0; m < 32; m++)
            s += red[lid * VIF_WG + m];
        partial[get_group_id(0) * 4 + lid] = s;
    }
}

#define VIF_LOCALS(S)                                                                            \
    /* 8-byte aligned: scale 0's interior tiles are stored 4 samples at a time */               \
    __local ushort in_r[(TH + 2 * (FW(S) / 2)) * (TW + 2 * (FW(S) / 2))]                         \
        __attribute__((aligned(8)));                                                             \
    __local ushort in_d[(TH + 2 * (FW(S) / 2)) * (TW + 2 * (FW(S) / 2))]                         \
        __attribute__((aligned(8)));                                                             \
    __local ushort v_mu1[TH * (TW + 2 * (FW(S) / 2))];                                           \
    __local ushort v_mu2[TH * (TW + 2 * (FW(S) / 2))];                                           \
    __local uint v_xx[TH * (TW + 2 * (FW(S) / 2))];                                              \
    __local uint v_yy[TH * (TW + 2 * (FW(S) / 2))];                                              \
    __local uint v_xy[TH * (TW + 2 * (FW(S) / 2))];                                              \
    __local ushort s_r[(TH / 2) * (TW + 2 * (FW((S) + 1) / 2))];                                 \
    __local ushort s_d[(TH / 2) * (TW + 2 * (FW((S) + 1) / 2))];                                 \
    __local long red[4 * VIF_WG];                                                                \
    sd_t egl;                                                                                    \
    egl.m = egl_m;                                                                               \
    egl.e = egl_e

#if VIF_IN8
#define PIX0 uchar
#else
#define PIX0 ushort
#endif

/* Scale 0: reads the picture (luma at the start of the buffers, row pitch w
 * samples). do_stat = 0 (vif_skip_scale0) only makes scale 1. */
__kernel void vif_s0(__global const PIX0 *ref, __global const PIX0 *dis, int w, int h, int bpc,
                     __global ushort *next_r, __global ushort *next_d, int do_stat,
                     __global long *results, int partial_index, __global const ushort *lut,
                     ulong egl_m, int egl_e, ulong eps_m, int eps_e)
{
    VIF_LOCALS(0);
#if VIF_IN8
    vif_scale_run(0, 1, ref, dis, 0, 0, w, h, bpc, next_r, next_d, do_stat,
                  results + partial_index, lut, egl, eps_m, eps_e, in_r, in_d, v_mu1, v_mu2, v_xx,
                  v_yy, v_xy, s_r, s_d, red);
#else
    vif_scale_run(0, 0, 0, 0, ref, dis, w, h, bpc, next_r, next_d, do_stat,
                  results + partial_index, lut, egl, eps_m, eps_e, in_r, in_d, v_mu1, v_mu2, v_xx,
                  v_yy, v_xy, s_r, s_d, red);
#endif
}

#define VIF_SCALE_KERNEL(S)                                                                      \
    __kernel void vif_s##S(__global const ushort *ref, __global const ushort *dis, int w, int h,  \
                           int bpc, __global ushort *next_r, __global ushort *next_d,            \
                           int do_stat, __global long *results, int partial_index,               \
                           __global const ushort *lut, ulong egl_m, int egl_e, ulong eps_m,      \
                           int eps_e)                                                            \
    {                                                                                            \
        VIF_LOCALS(S);                                                                           \
        vif_scale_run(S, 0, 0, 0, ref, dis, w, h, bpc, next_r, next_d, do_stat,                  \
                      results + partial_index, lut, egl, eps_m, eps_e, in_r, in_d, v_mu1, v_mu2, \
                      v_xx, v_yy, v_xy, s_r, s_d, red);                                          \
    }

VIF_SCALE_KERNEL(1)
VIF_SCALE_KERNEL(2)
VIF_SCALE_KERNEL(3)
