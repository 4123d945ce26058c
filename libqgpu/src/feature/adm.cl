/*
 * ADM: libvmaf's integer ADM extractor (libvmaf 3.2.0 integer_adm.c), bit-exact.
 *
 * Per frame, luma only:
 *   adm_dwt0    scale 0 db2 DWT of ref and dist, 16x16 band tiles staged
 *               in __local: both pictures' 34x34 sources at once (every
 *               load in flight before the first store), vertical pass,
 *               horizontal pass (taps unrolled);
 *               each work-item keeps its sample's bands of both pictures in
 *               registers and, where the score reads it (the scored region
 *               and its 1-sample border), splits dist h/v/d into the
 *               restored part r (written to the rst planes; the additive
 *               part is a = t - r): every such sample is decoupled once.
 *   adm_dwt123  the same from the previous scale's band a (int32, int64 sums);
 *               launched for scales 1, 2, 3.
 *   adm_score   all four scales in one launch: each work-group scores
 *               ADM_RS band rows across the whole scored width, ADM_CW
 *               columns at a time (each work-item loads its own sample's
 *               ref, dist and r and its share of the halo into registers,
 *               the next chunk's while the current one is scored; the
 *               masking terms of the tile and its halo are staged in
 *               __local), finishes libvmaf's
 *               per-row rounding and writes 9 int64 partial sums (den h/v/d,
 *               DLM num h/v/d, AIM num h/v/d).
 * Band buffers hold 8 planes of bw x bh: ref a, h, v, d, dist a, h, v, d; int16
 * at scale 0 (libvmaf's type there, half the memory traffic), int32 above.
 * The rst buffers hold 3 planes of bw x bh (r of h, v, d), same types; only
 * the decoupled region is written and read.
 * Every intermediate is truncated to the type libvmaf gives it (int16 at
 * scale 0, int32 above); wrap-arounds go through unsigned arithmetic.
 */
#ifndef ADM_FP64
#define ADM_FP64 0    /* 1: the double expressions in IEEE double (cl_khr_fp64) */
#endif
#if ADM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
/* libvmaf's double expressions are separate roundings: no fma contraction */
#pragma OPENCL FP_CONTRACT OFF

#define ADM_T 16      /* DWT output tile */
#define ADM_SRC 34    /* 2 * ADM_T + 2 source rows/columns */
#ifndef ADM_CW
#define ADM_CW 64     /* score kernel: columns per chunk (the host passes -DADM_CW) */
#endif
#ifndef ADM_RS
#define ADM_RS 4      /* score kernel: rows per work-group (the host passes -DADM_RS) */
#endif
#define ADM_LW (ADM_CW + 2)
#define ADM_LH (ADM_RS + 2)
#define ADM_NP 24     /* ints per scale in the parameter table */
#define ADM_NRED 3    /* score kernel: row sums reduced together (divides 9) */

/* db2 in Q15 (integer_adm.h dwt2_db2_coeffs_lo/hi) */
__constant int DB2_LO[4] = {15826, 27411, 7345, -4240};
__constant int DB2_HI[4] = {-4240, -7345, 27411, -15826};

static inline int wrap16(int v)
{
    return ((v & 0xFFFF) ^ 0x8000) - 0x8000;
}

static inline int wrap32(long v)
{
    return as_int((uint)v);
}

/* ------------------------------------------------------------------ DWT */

/* Source tiles -> vertical lo/hi -> horizontal; `scale0` selects libvmaf's
 * 16-bit pipeline (int32 sums, level shift, int16 results) or the int32
 * pipeline of scales 1..3 (int64 sums). */

/* Sample of the previous scale's band a: int16 (scale 0) or int32. */
static inline int prev_at(__global const short *p16, __global const int *p32, size_t at)
{
    return p16 ? p16[at] : p32[at];
}

/* Vertical pass of one column of band a (scales 1..3). */
static int vpass_col(__global const short *p16, __global const int *p32, int w, int h, int i,
                     int col, int hi, long vp_add, int vp_shift)
{
    long acc = 0;
#pragma unroll
    for (int k = 0; k < 4; k++)
        acc += (long)(hi ? DB2_HI[k] : DB2_LO[k]) *
               prev_at(p16, p32, (size_t)mirror_skip_start_edge(2 * i - 1 + k, h) * w + col);
    return wrap32((acc + vp_add) >> vp_shift);
}

/* Vertical high pass of one picture column at scale 0. */
static int vpass0_hi(__global const uchar *pic, int bps, int h, int pitch, int i, int col,
                     int shift_vp, int add_vp)
{
    uint ah = 0;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        size_t at = (size_t)mirror_skip_start_edge(2 * i - 1 + k, h) * pitch + col;
        int u = bps == 1 ? pic[at] : ((__global const ushort *)pic)[at];
        ah += (uint)(DB2_HI[k] * u);
    }
    return wrap16(as_int(ah + (uint)add_vp) >> shift_vp);
}

/* Vertical pass of the two staged tiles (ref z = 0, dist z = 1) into
 * vlo/vhi. The taps are unrolled: the NVIDIA compiler otherwise keeps
 * some of these 4-tap loops, loading each tap from __constant memory
 * inside them. Products of two 32-bit values: 32 x 32 -> 64 multiplies. */
static void dwt_vertical(__local int (*src)[ADM_SRC][ADM_SRC + 1],
                         __local int (*vlo)[ADM_T][ADM_SRC], __local int (*vhi)[ADM_T][ADM_SRC],
                         int scale0, int shift_vp, int add_vp, long vp_add, int vp_shift)
{
    int lid = get_local_id(1) * ADM_T + get_local_id(0);
    for (int p = lid; p < 2 * ADM_T * ADM_SRC; p += ADM_T * ADM_T) {
        int z = p >= ADM_T * ADM_SRC, q = p - z * ADM_T * ADM_SRC;
        int r = q / ADM_SRC, c = q % ADM_SRC;
        if (scale0) {
            uint al = 0, ah = 0;
#pragma unroll
            for (int k = 0; k < 4; k++) {
                int u = src[z][2 * r + k][c];
                al += (uint)(DB2_LO[k] * u);
                ah += (uint)(DB2_HI[k] * u);
            }
            al -= (uint)(46342 * add_vp); /* dwt2_db2_coeffs_lo_sum * add_shift_VP */
            vlo[z][r][c] = wrap16(as_int(al + (uint)add_vp) >> shift_vp);
            vhi[z][r][c] = wrap16(as_int(ah + (uint)add_vp) >> shift_vp);
        } else {
            long al = 0, ah = 0;
#pragma unroll
            for (int k = 0; k < 4; k++) {
                int u = src[z][2 * r + k][c];
                al += (long)DB2_LO[k] * u;
                ah += (long)DB2_HI[k] * u;
            }
            vlo[z][r][c] = wrap32((al + vp_add) >> vp_shift);
            vhi[z][r][c] = wrap32((ah + vp_add) >> vp_shift);
        }
    }
}

/* Horizontal pass of picture z at the work-item's sample (i, j), inside
 * the band: its four band samples (a, h, v, d) into res and the band
 * buffer out16 / out. */
static void dwt_horizontal(__local int (*vlo)[ADM_SRC], __local int (*vhi)[ADM_SRC], int scale0,
                           int shift_vp, int add_vp, long vp_add, int vp_shift, long hp_add,
                           int hp_shift, __global short *out16, __global int *out, int bw,
                           int bh, __global const short *same16, __global const int *same,
                           __global const short *dis16, __global const int *dis, int w_in,
                           int h_in, int z, __global const uchar *pic0, int bps, int pitch,
                           int bpc, int i, int j, int res[4])
{
    int tx = get_local_id(0), ty = get_local_id(1);
    int lo[4], hi[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        lo[k] = vlo[ty][2 * tx + k];
        hi[k] = vhi[ty][2 * tx + k];
    }
    if (scale0) {
        /* libvmaf's AVX-512 scale-0 DWT: 32-output blocks, the last column
         * unmirrored when (bw - 1) % 32 (8-bit) / % 64 (more bits) == 0;
         * lo taps past the row read hi[0..1] (see the int32 case below) */
        if (bw > 1 && (bw - 1) % (bpc == 8 ? 32 : 64) == 0 && j == bw - 1) {
            for (int k = 0; k < 4; k++) {
                int idx = 2 * j - 1 + k;
                if (idx >= w_in)
                    lo[k] = vpass0_hi(pic0, bps, h_in, pitch, i, idx - w_in, shift_vp, add_vp);
            }
        }
        int s[4] = {0, 0, 0, 0};
#pragma unroll
        for (int k = 0; k < 4; k++) {
            s[0] += DB2_LO[k] * lo[k]; /* band a */
            s[2] += DB2_HI[k] * lo[k]; /* band v */
            s[1] += DB2_LO[k] * hi[k]; /* band h */
            s[3] += DB2_HI[k] * hi[k]; /* band d */
        }
#pragma unroll
        for (int b = 0; b < 4; b++)
            res[b] = wrap16((s[b] + 32768) >> 16);
    } else {
        /* libvmaf's AVX-512 horizontal pass (the golden scores) does not
         * mirror the last output column when (bw - 1) % 8 == 0: its taps past
         * the row read the next temporary row in memory: lo(img) ->
         * hi(img)[0..1], hi(ref) -> lo(dist)[0..1]; hi(dist) reads stale
         * memory, where the mirrored value is kept. */
        if (bw > 1 && (bw - 1) % 8 == 0 && j == bw - 1) {
            for (int k = 0; k < 4; k++) {
                int idx = 2 * j - 1 + k;
                if (idx >= w_in) {
                    lo[k] = vpass_col(same16, same, w_in, h_in, i, idx - w_in, 1, vp_add,
                                      vp_shift);
                    if (z == 0)
                        hi[k] = vpass_col(dis16, dis, w_in, h_in, i, idx - w_in, 0, vp_add,
                                          vp_shift);
                }
            }
        }
        long s[4] = {0, 0, 0, 0};
#pragma unroll
        for (int k = 0; k < 4; k++) {
            s[0] += (long)DB2_LO[k] * lo[k];
            s[2] += (long)DB2_HI[k] * lo[k];
            s[1] += (long)DB2_LO[k] * hi[k];
            s[3] += (long)DB2_HI[k] * hi[k];
        }
#pragma unroll
        for (int b = 0; b < 4; b++)
            res[b] = wrap32((s[b] + hp_add) >> hp_shift);
    }
    size_t plane = (size_t)bw * bh, at = (size_t)(uint)i * (uint)bw + (uint)j;
#pragma unroll
    for (int b = 0; b < 4; b++) {
        if (scale0)
            out16[b * plane + at] = (short)res[b];
        else
            out[b * plane + at] = res[b];
    }
}

/* ------------------------------------------------------------ decouple */

/* float(x) of a non-negative long as m * 2^e, m in [2^23, 2^24) */
static inline void float_parts(long x, ulong *m, int *e)
{
    uint bits = as_uint(convert_float_rte(x));
    *m = (bits & 0x7FFFFF) | 0x800000;
    *e = (int)((bits >> 23) & 0xFF) - 150;
}

/* libvmaf's angle test, in float values promoted to double:
 *   (f(ot)/4096)^2 >= (double)cos1sq * (f(o)/4096) * (f(t)/4096)
 * The left side is exact in double; the right side is one rounding of a
 * 72-bit product. Both are evaluated here exactly with integers. */
static int angle_flag(long ot, long o, long t, ulong cos_m)
{
    if (ot < 0)
        return 0;
    if (o == 0 || t == 0)
        return 1;
    if (ot == 0)
        return 0;
#if ADM_FP64
    /* the same comparison in double: lhs exact, rhs one rounding (the first
     * product has 48 bits) */
    double a = (double)(convert_float_rte(ot) / 4096.0f);
    double rhs = (double)cos_m * 0x1p-24 * (double)(convert_float_rte(o) / 4096.0f) *
                 (double)(convert_float_rte(t) / 4096.0f);
    return a * a >= rhs;
#endif
    ulong m1, m2, m3;
    int e1, e2, e3;
    float_parts(ot, &m1, &e1);
    float_parts(o, &m2, &e2);
    float_parts(t, &m3, &e3);
    ulong p1 = cos_m * m2; /* < 2^48 */
    ulong lo = p1 * m3, hi = mul_hi(p1, m3);
    int len = 128 - (int)clz(hi); /* the product is >= 2^69 */
    int k = len - 53;
    ulong q = (lo >> k) | (hi << (64 - k));
    ulong rem = lo & ((1UL << k) - 1), hlf = 1UL << (k - 1);
    if (rem > hlf || (rem == hlf && (q & 1)))
        q++;
    /* compare m1^2 * 2^(2 e1) with q * 2^(k + e2 + e3 - 24) */
    int ex = k + e2 + e3 - 24 - 2 * e1;
    ulong m1sq = m1 * m1; /* [2^46, 2^48) */
    if (ex >= 0)
        return 0; /* q >= 2^52 > m1sq */
    if (-ex >= 9)
        return 1;
    return (m1sq << -ex) >= q;
}

#if !ADM_FP64 /* with fp64 the gain is a double product (decouple) */
/* floor(RN53(|v| * n) / 2^s) with the sign of v: libvmaf's (rst * egl)
 * in double, truncated to an integer; egl = n * 2^-s exactly. */
static long gain_trunc(long v, ulong n, int s)
{
    ulong a = (ulong)(v < 0 ? -v : v);
    ulong lo = a * n, hi = mul_hi(a, n);
    if (lo == 0 && hi == 0)
        return 0;
    int len = hi ? 128 - (int)clz(hi) : 64 - (int)clz(lo);
    if (len > 53) { /* round the product to double precision */
        int k = len - 53;
        ulong q = k >= 64 ? hi >> (k - 64) : (lo >> k) | (k ? hi << (64 - k) : 0);
        ulong rem, hlf;
        if (k >= 64) {
            rem = 1; /* k < 64 always: |v| < 2^32, n < 2^54 */
            hlf = 1;
        } else {
            rem = lo & ((1UL << k) - 1);
            hlf = 1UL << (k - 1);
        }
        if (rem > hlf || (rem == hlf && (q & 1)))
            q++;
        /* value = q * 2^k; result = floor(q * 2^(k - s)) */
        ulong r = k >= s ? q << (k - s) : q >> (s - k);
        return v < 0 ? -(long)r : (long)r;
    }
    ulong r = s >= 64 ? 0 : (s ? (lo >> s) | (hi << (64 - s)) : lo);
    return v < 0 ? -(long)r : (long)r;
}
#endif

/* The additive part a = t - r, wrapped to the scale's type. */
static inline int additive(int scale0, int t, int r)
{
    return scale0 ? wrap16(t - r) : as_int((uint)t - (uint)r);
}

/* Splits dist band t into restored r and additive a (adm_decouple,
 * adm_decouple_s123); o = ref h/v/d. */
static void decouple(int scale0, const int o[3], const int t[3], int r[3], int a[3], ulong cos_m,
                     ulong egl_n, int egl_s, __global const int *recip_q30)
{
    long ot = (long)o[0] * t[0] + (long)o[1] * t[1];
    long om = (long)o[0] * o[0] + (long)o[1] * o[1];
    long tm = (long)t[0] * t[0] + (long)t[1] * t[1];
    int flag = angle_flag(ot, om, tm, cos_m);
#if ADM_FP64
    /* egl = egl_n * 2^-egl_s as a double: egl_n is an integer-valued double
     * (exact), 2^-egl_s (0 <= egl_s <= 60) a normal power of two built from
     * its exponent bits (common.cl's POW2_DOUBLE_BITS), so the product is
     * exact: ldexp's value, without its code for every sample that takes
     * the gain */
    const double egl_d = (double)egl_n * as_double(POW2_DOUBLE_BITS(-egl_s));
#endif
    for (int k = 0; k < 3; k++) {
        long tmp;
        if (o[k] == 0) {
            tmp = 32768;
        } else if (scale0) {
            int recip = recip_q30[abs(o[k])]; /* Q30 div_lookup */
            if (o[k] < 0)
                recip = -recip;
            tmp = ((long)recip * t[k] + 16384) >> 15;
        } else {
            uint ab = abs(o[k]);
            int sh = 0;
            uint msb = ab;
            if (ab >= 32768) { /* get_best15_from32 */
                sh = 17 - (int)clz(ab);
                msb = (ab + (1u << (sh - 1))) >> sh;
            }
            int recip = recip_q30[msb];
            long sign = o[k] < 0 ? -1 : 1;
            long round = as_int(1u << (14 + sh));
            tmp = (((long)recip * t[k]) * sign + round) >> (15 + sh);
        }
        long kk = clamp(tmp, 0L, 32768L);
        int rst = wrap32((kk * o[k] + 16384) >> 15);
        if (scale0)
            rst = wrap16(rst);
        if (flag && kk > 0 && o[k] != 0) {
#if ADM_FP64
            long g = (long)((double)rst * egl_d);
#else
            long g = gain_trunc(rst, egl_n, egl_s);
#endif
            if (o[k] > 0)
                rst = g < t[k] ? (int)g : t[k];
            else
                rst = g > t[k] ? (int)g : t[k];
            if (scale0)
                rst = wrap16(rst);
        }
        r[k] = rst;
        a[k] = additive(scale0, t[k], rst);
    }
}

/* ----------------------------------------------------------------- CSF */

static inline int csf_value(int scale0, uint rf, int k, int v)
{
    if (scale0) {
        /* i_rfactor Q21 (h, v) / Q23 (d); i_shifts {15,15,17}, i_shiftsadd {16384,16384,65535} */
        uint add = k == 2 ? 65535u : 16384u;
        int sh = k == 2 ? 17 : 15;
        return wrap16(as_int(rf * (uint)v + add) >> sh);
    }
    return wrap32(((long)rf * v + (1L << 27)) >> 28);
}

static inline int csf_flt(int scale0, int c)
{
    if (scale0)
        return wrap16((4369 * abs(c) + 2048) >> 12); /* FIX_ONE_BY_30 = 2^17 / 30 */
    /* 2^32 / 30; libvmaf's rounding term 1u << 31 lands in an int32: -2^31 */
    return wrap32((143165577L * (long)abs(c) - 2147483648L) >> 32);
}

/* vec: libvmaf's AVX-512 scale-0 masking (the golden scores) keeps this
 * term in int32 for the columns of its 14-wide vector loop; the scalar
 * code, used for the rest, truncates it to int16. */
static inline int csf_centre(int scale0, int c, int vec)
{
    if (scale0)
        return vec ? (8738 * abs(c) + 2048) >> 12 : wrap16((8738 * abs(c) + 2048) >> 12);
    return wrap32((286331153L * (long)abs(c) - 2147483648L) >> 32); /* I4_ONE_BY_15 */
}

/* ------------------------------------------------------------ score */

/* Parameter table, ADM_NP ints per scale (adm.c fills it). */
enum {
    P_BW, P_BH, P_TOP, P_BOTTOM, P_LEFT, P_RIGHT, P_RF0, P_RF1, P_RF2,
    P_DEN_SH, P_DEN_CUB, P_DEN_SQ, P_CUB0, P_CUB1, P_CUB2, P_INNER, P_FIRST, P_ACTIVE,
    P_DTOP, P_DLEFT, P_DCOLS, P_DROWS
};

/* The restored parts r of the work-item's sample (i, j), from its ref and
 * dist band samples (a, h, v, d), when adm_score reads it: the scored
 * region and its 1-sample border (inactive scales: none). */
static void store_rst(int scale0, __constant int *P, int i, int j, const int ob[4],
                      const int tb[4], ulong cos_m, ulong egl_n, int egl_s,
                      __global const int *recip_q30, __global short *rst16, __global int *rst)
{
    if (!P[P_ACTIVE] || i < P[P_DTOP] || i >= P[P_DTOP] + P[P_DROWS] || j < P[P_DLEFT] ||
        j >= P[P_DLEFT] + P[P_DCOLS])
        return;
    int o[3] = {ob[1], ob[2], ob[3]}, t[3] = {tb[1], tb[2], tb[3]}, r[3], a[3];
    decouple(scale0, o, t, r, a, cos_m, egl_n, egl_s, recip_q30);
    size_t plane = (size_t)P[P_BW] * P[P_BH], at = (size_t)(uint)i * (uint)P[P_BW] + (uint)j;
    for (int k = 0; k < 3; k++) {
        if (scale0)
            rst16[k * plane + at] = (short)r[k];
        else
            rst[k * plane + at] = r[k];
    }
}

/* Every work-item's share of the two 34 x 34 source tiles (ref, dist):
 * ADM_LOADS samples of each picture, loaded before any is stored, so that
 * they are all in flight at once; the last round's surplus work-items load
 * the tile's last sample again and do not store it. */
#define ADM_WG (ADM_T * ADM_T)
#define ADM_NSRC (ADM_SRC * ADM_SRC)
#define ADM_LOADS ((ADM_NSRC + ADM_WG - 1) / ADM_WG)

/* Where the work-item's ADM_LOADS samples of the source tile at (r0, c0)
 * are read (sample lid + q * ADM_WG; past the tile's last sample, the last
 * one again). A tile inside the w x h picture (most tiles; uniform across
 * the work-group) needs no mirroring: each offset is the tile's first
 * sample plus a 32-bit offset in the tile (r < ADM_SRC). The others are
 * mirrored, with 32 x 32 -> 64-bit row offsets. The same samples either
 * way: mirroring maps every index in [0, n) to itself. (The mirrored form
 * for every tile spent most of the staging's instructions: two mirrorings
 * and a 64 x 64-bit multiply a sample.) The two forms are separate loops
 * so that the inside tiles run none of the mirroring. */
static inline void tile_offsets(int r0, int c0, int w, int h, int pitch, size_t at[ADM_LOADS])
{
    const int lid = get_local_id(1) * ADM_T + get_local_id(0);
    if (r0 >= 0 && c0 >= 0 && r0 + ADM_SRC <= h && c0 + ADM_SRC <= w) {
        const size_t first = (size_t)(uint)r0 * (uint)pitch + (uint)c0;
#pragma unroll
        for (int q = 0; q < ADM_LOADS; q++) {
            int p = min(lid + q * ADM_WG, ADM_NSRC - 1);
            int r = p / ADM_SRC, c = p % ADM_SRC;
            at[q] = first + (uint)(r * pitch + c);
        }
    } else {
#pragma unroll
        for (int q = 0; q < ADM_LOADS; q++) {
            int p = min(lid + q * ADM_WG, ADM_NSRC - 1);
            int r = p / ADM_SRC, c = p % ADM_SRC;
            at[q] = (size_t)(uint)mirror_skip_start_edge(r0 + r, h) * (uint)pitch +
                    (uint)mirror_skip_start_edge(c0 + c, w);
        }
    }
}

static void stage_store(__local int (*src)[ADM_SRC][ADM_SRC + 1], int v[2][ADM_LOADS])
{
    int lid = get_local_id(1) * ADM_T + get_local_id(0);
#pragma unroll
    for (int z = 0; z < 2; z++) {
#pragma unroll
        for (int q = 0; q < ADM_LOADS; q++) {
            int p = lid + q * ADM_WG;
            if (p < ADM_NSRC)
                src[z][p / ADM_SRC][p % ADM_SRC] = v[z][q];
        }
    }
}

/* Scale 0 from the pictures: the source tiles of ref (z = 0) and dist
 * (z = 1) staged together, the sample's four bands of each kept in
 * registers, then its decoupling (store_rst). */
__kernel __attribute__((reqd_work_group_size(ADM_T, ADM_T, 1)))
void adm_dwt0(__global const uchar *ref, __global const uchar *dist, int bps, int w, int h,
              int pitch, int bpc, __global short *bands, int bw, int bh,
              __constant int *params, ulong cos_m, ulong egl_n, int egl_s,
              __global const int *recip_q30, __global short *rst)
{
    __local int src[2][ADM_SRC][ADM_SRC + 1];
    __local int vlo[2][ADM_T][ADM_SRC], vhi[2][ADM_T][ADM_SRC];
    int r0 = 2 * get_group_id(1) * ADM_T - 1, c0 = 2 * get_group_id(0) * ADM_T - 1;
    int shift_vp = bpc == 8 ? 8 : bpc, add_vp = 1 << (shift_vp - 1);
    size_t at[ADM_LOADS];
    int v[2][ADM_LOADS];
    tile_offsets(r0, c0, w, h, pitch, at);
#pragma unroll
    for (int z = 0; z < 2; z++) {
        __global const uchar *pic = z ? dist : ref;
#pragma unroll
        for (int q = 0; q < ADM_LOADS; q++)
            v[z][q] = bps == 1 ? pic[at[q]] : ((__global const ushort *)pic)[at[q]];
    }
    stage_store(src, v);
    barrier(CLK_LOCAL_MEM_FENCE);
    dwt_vertical(src, vlo, vhi, 1, shift_vp, add_vp, 0, 0);
    barrier(CLK_LOCAL_MEM_FENCE);

    int i = get_group_id(1) * ADM_T + get_local_id(1), j = get_group_id(0) * ADM_T + get_local_id(0);
    if (i >= bh || j >= bw)
        return;
    size_t pd = 4 * (size_t)bw * bh; /* dist's bands */
    int o[4], t[4];
    dwt_horizontal(vlo[0], vhi[0], 1, shift_vp, add_vp, 0, 0, 0, 0, bands, 0, bw, bh, 0, 0, 0,
                   0, w, h, 0, ref, bps, pitch, bpc, i, j, o);
    dwt_horizontal(vlo[1], vhi[1], 1, shift_vp, add_vp, 0, 0, 0, 0, bands + pd, 0, bw, bh, 0, 0,
                   0, 0, w, h, 1, dist, bps, pitch, bpc, i, j, t);
    store_rst(1, params, i, j, o, t, cos_m, egl_n, egl_s, recip_q30, rst, 0);
}

/* Scales 1..3 from band a of the previous scale (w x h), int16 for scale 1
 * (prev16, from16 = 1), else int32 (prev); ref and dist staged together,
 * then the decoupling as in adm_dwt0. */
__kernel __attribute__((reqd_work_group_size(ADM_T, ADM_T, 1)))
void adm_dwt123(__global const short *prev16, __global const int *prev, int from16, int w, int h,
                int scale, __global int *bands, int bw, int bh, __constant int *params,
                ulong cos_m, ulong egl_n, int egl_s, __global const int *recip_q30,
                __global int *rst)
{
    __local int src[2][ADM_SRC][ADM_SRC + 1];
    __local int vlo[2][ADM_T][ADM_SRC], vhi[2][ADM_T][ADM_SRC];
    /* adm_dwt2_s123_combined rounding per scale */
    const long vp_add = scale == 1 ? 0 : 32768;
    const int vp_shift = scale == 1 ? 0 : 16;
    const long hp_add = scale == 2 ? 32768 : 16384;
    const int hp_shift = scale == 2 ? 16 : 15;
    int r0 = 2 * get_group_id(1) * ADM_T - 1, c0 = 2 * get_group_id(0) * ADM_T - 1;
    int i = get_group_id(1) * ADM_T + get_local_id(1), j = get_group_id(0) * ADM_T + get_local_id(0);
    size_t pd = 4 * (size_t)w * h; /* plane a of dist */
    /* the taps past the last column (dwt_horizontal's quirk) read dist's
     * plane a too */
    __global const short *dis16 = from16 ? prev16 + pd : 0;
    __global const int *dis = from16 ? 0 : prev + pd;
    size_t at[ADM_LOADS];
    int v[2][ADM_LOADS];
    tile_offsets(r0, c0, w, h, w, at);
#pragma unroll
    for (int z = 0; z < 2; z++) {
#pragma unroll
        for (int q = 0; q < ADM_LOADS; q++)
            v[z][q] = from16 ? prev16[z * pd + at[q]] : prev[z * pd + at[q]];
    }
    stage_store(src, v);
    barrier(CLK_LOCAL_MEM_FENCE);
    dwt_vertical(src, vlo, vhi, 0, 0, 0, vp_add, vp_shift);
    barrier(CLK_LOCAL_MEM_FENCE);

    if (i >= bh || j >= bw)
        return;
    int res[2][4];
#pragma unroll
    for (int z = 0; z < 2; z++) {
        __global const short *pic16 = from16 ? prev16 + z * pd : 0;
        __global const int *pic = from16 ? 0 : prev + z * pd;
        dwt_horizontal(vlo[z], vhi[z], 0, 0, 0, vp_add, vp_shift, hp_add, hp_shift, 0,
                       bands + z * 4 * (size_t)bw * bh, bw, bh, pic16, pic, dis16, dis, w, h, z,
                       0, 0, 0, 0, i, j, res[z]);
    }
    store_rst(0, params + scale * ADM_NP, i, j, res[0], res[1], cos_m, egl_n, egl_s, recip_q30,
              0, rst);
}

/* A staged sample's dist t, restored r and, with want_o, ref o, at the
 * band position (y, x) before mirroring. Positions outside the decoupled
 * region (rows top-1..bottom, columns left-1..right) are only staged by
 * work-items past the scored area, whose results are never used: 0. */
static inline void load_sample(__global const short *ref16, __global const int *ref,
                               __global const short *dis16, __global const int *dis,
                               __global const short *rst16, __global const int *rst,
                               __constant int *P, int y, int x, int want_o, int o[3], int t[3],
                               int r[3])
{
    int bw = P[P_BW], bh = P[P_BH];
    int inside = y >= P[P_TOP] - 1 && y <= P[P_BOTTOM] && x >= P[P_LEFT] - 1 && x <= P[P_RIGHT];
    size_t plane = (size_t)bw * bh;
    /* 32 x 32 -> 64-bit row offset: the mirrored indices are not negative */
    size_t at = (size_t)(uint)mirror_skip_start_edge(y, bh) * (uint)bw +
                (uint)mirror_skip_start_edge(x, bw);
    for (int k = 0; k < 3; k++) {
        o[k] = 0;
        t[k] = 0;
        r[k] = 0;
        if (!inside)
            continue;
        t[k] = prev_at(dis16, dis, (k + 1) * plane + at);
        r[k] = prev_at(rst16, rst, k * plane + at);
        if (want_o)
            o[k] = prev_at(ref16, ref, (k + 1) * plane + at);
    }
}

static inline long add_for(int sh)
{
    return sh > 0 ? 1L << (sh - 1) : 0;
}

/* The score's tile: ADM_RS rows x ADM_CW columns of own samples and a
 * halo of ADM_NHALO samples around them, ADM_HROUNDS per work-item. */
#define ADM_WGS (ADM_CW * ADM_RS)
#define ADM_NHALO (2 * ADM_LW + 2 * ADM_RS)
#define ADM_HROUNDS ((ADM_NHALO + ADM_WGS - 1) / ADM_WGS)

/* Halo sample p's place in the tile: rows above and below, then the
 * columns left and right. */
static inline void halo_pos(int p, int *y, int *x)
{
    if (p < 2 * ADM_LW) {
        *y = p < ADM_LW ? 0 : ADM_RS + 1;
        *x = p % ADM_LW;
    } else {
        *y = 1 + (p - 2 * ADM_LW) / 2;
        *x = (p & 1) ? ADM_LW - 1 : 0;
    }
}

/* The chunk at column c0 into registers: the work-item's own sample (o,
 * t, r) and its halo samples (t, r; past ADM_NHALO the last one again,
 * never staged). Only loads: their latency overlaps what follows. */
static void load_chunk(__global const short *ref16, __global const int *ref,
                       __global const short *dis16, __global const int *dis,
                       __global const short *rst16, __global const int *rst, __constant int *P,
                       int row, int row0, int c0, int o[3], int t[3], int r[3],
                       int ht[ADM_HROUNDS][3], int hr[ADM_HROUNDS][3])
{
    int lid = get_local_id(0);
    load_sample(ref16, ref, dis16, dis, rst16, rst, P, row, c0 + lid % ADM_CW, 1, o, t, r);
    for (int q = 0; q < ADM_HROUNDS; q++) {
        int y, x, ho[3];
        halo_pos(min(lid + q * ADM_WGS, ADM_NHALO - 1), &y, &x);
        load_sample(ref16, ref, dis16, dis, rst16, rst, P, row0 - 1 + y, c0 - 1 + x, 0, ho,
                    ht[q], hr[q]);
    }
}

__kernel __attribute__((reqd_work_group_size(ADM_CW * ADM_RS, 1, 1)))
void adm_score(__global const short *b0, __global const int *b1, __global const int *b2,
               __global const int *b3, __global const short *rst0, __global const int *rst1,
               __global const int *rst2, __global const int *rst3, __constant int *params,
               int skip_aim, __global long *results, uint results_index)
{
    __local int lfa[3][ADM_LH][ADM_LW], lfr[3][ADM_LH][ADM_LW];
    __local long red[ADM_NRED][ADM_CW * ADM_RS];
    __local long rows[ADM_RS][9];

    int g = get_group_id(0), lid = get_local_id(0);
    int tx = lid % ADM_CW, ty = lid / ADM_CW;
    int scale = 0;
    while (scale < 3 && g >= params[(scale + 1) * ADM_NP + P_FIRST])
        scale++;
    __constant int *P = params + scale * ADM_NP;
    __global const int *bands = scale == 1 ? b1 : scale == 2 ? b2 : b3;
    int scale0 = scale == 0;
    int bw = P[P_BW], bh = P[P_BH], bottom = P[P_BOTTOM], left = P[P_LEFT], right = P[P_RIGHT];
    int row0 = P[P_TOP] + (g - P[P_FIRST]) * ADM_RS;
    uint rf[3] = {(uint)P[P_RF0], (uint)P[P_RF1], (uint)P[P_RF2]};
    size_t plane = (size_t)bw * bh;
    __global const int *ref = bands, *dis = bands + 4 * plane;
    __global const short *ref16 = b0, *dis16 = b0 + 4 * plane;
    __global const int *rst = scale == 1 ? rst1 : scale == 2 ? rst2 : rst3;
    __global const short *rst16 = rst0;
    if (scale0) {
        ref = 0;
        dis = 0;
        rst = 0;
    } else {
        ref16 = 0;
        dis16 = 0;
        rst16 = 0;
    }

    long acc[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    int row = row0 + ty;
    int o[3], t[3], r[3], ht[ADM_HROUNDS][3], hr[ADM_HROUNDS][3];
    int den_sh = P[P_DEN_SH], den_cub = P[P_DEN_CUB], den_sq = P[P_DEN_SQ];
    long den_cub_add = add_for(den_cub);
    int cub[3] = {P[P_CUB0], P[P_CUB1], P[P_CUB2]};

    load_chunk(ref16, ref, dis16, dis, rst16, rst, P, row, row0, left, o, t, r, ht, hr);
    for (int c0 = left; c0 < right; c0 += ADM_CW) {
        int col = c0 + tx;
        int oc[3], rc[3], a[3];
        for (int k = 0; k < 3; k++) {
            oc[k] = o[k];
            rc[k] = r[k];
            a[k] = additive(scale0, t[k], r[k]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* own sample's masking terms to __local (outside the band the
         * mirrored sample, as a neighbour needs it), then the halo's */
        for (int k = 0; k < 3; k++) {
            lfa[k][ty + 1][tx + 1] = csf_flt(scale0, csf_value(scale0, rf[k], k, a[k]));
            lfr[k][ty + 1][tx + 1] = csf_flt(scale0, csf_value(scale0, rf[k], k, rc[k]));
        }
        for (int q = 0; q < ADM_HROUNDS; q++) {
            int p = lid + q * ADM_WGS, y, x;
            if (p >= ADM_NHALO)
                break;
            halo_pos(p, &y, &x);
            for (int k = 0; k < 3; k++) {
                int ha = additive(scale0, ht[q][k], hr[q][k]);
                lfa[k][y][x] = csf_flt(scale0, csf_value(scale0, rf[k], k, ha));
                lfr[k][y][x] = csf_flt(scale0, csf_value(scale0, rf[k], k, hr[q][k]));
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the next chunk's loads in flight while this one is scored */
        if (c0 + ADM_CW < right)
            load_chunk(ref16, ref, dis16, dis, rst16, rst, P, row, row0, c0 + ADM_CW, o, t, r,
                       ht, hr);

        if (row >= bottom || col >= right)
            continue;
        int y = ty + 1, x = tx + 1;

        /* denominator: |ref|^3 */
        for (int k = 0; k < 3; k++) {
            if (scale0) {
                ulong u = (ushort)abs(oc[k]);
                acc[k] += (long)(u * u * u);
            } else {
                ulong u = (uint)abs(oc[k]);
                acc[k] += (long)(((((u * u) + (1UL << den_sq)) >> den_sq) * u + den_cub_add) >>
                                 den_cub);
            }
        }

        /* thresholds: 3x3 of |csf|/30 around, |csf|/15 at the centre, all orientations */
        uint thr_d = 0, thr_a = 0;
        int vec = scale0 && left > 0 && row >= max(P[P_TOP], 1) && row < min(bottom, bh - 1) &&
                  col < right - (right - left) % 14;
        for (int k = 0; k < 3; k++) {
            int sd = 0, sa = 0;
            for (int dy = -1; dy <= 1; dy++) {
                for (int dx = -1; dx <= 1; dx++) {
                    if (dy == 0 && dx == 0)
                        continue;
                    sd += lfa[k][y + dy][x + dx];
                    sa += lfr[k][y + dy][x + dx];
                }
            }
            sd += csf_centre(scale0, csf_value(scale0, rf[k], k, a[k]), vec);
            sa += csf_centre(scale0, csf_value(scale0, rf[k], k, rc[k]), vec);
            thr_d += (uint)sd;
            thr_a += (uint)sa;
        }

        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1 && skip_aim)
                break;
            uint thr = pass ? thr_a : thr_d;
            for (int k = 0; k < 3; k++) {
                int v = pass ? a[k] : rc[k];
                int xv, xsq;
                if (scale0) {
                    int sub = k == 2 ? 12 : 10, sqs = k == 2 ? 30 : 29;
                    xv = as_int(rf[k] * (uint)v);
                    xv = as_int((uint)abs(xv) - (thr << sub));
                    xv = max(xv, 0);
                    xsq = wrap32(((long)xv * xv + (1L << (sqs - 1))) >> sqs);
                } else {
                    xv = wrap32(((long)v * rf[k] + (1L << 27)) >> 28);
                    xv = as_int((uint)abs(xv) - thr);
                    xv = max(xv, 0);
                    xsq = wrap32(((long)xv * xv + (1L << 29)) >> 30);
                }
                acc[3 + 3 * pass + k] += ((long)xsq * xv + add_for(cub[k])) >> cub[k];
            }
        }
    }

    /* per-row rounding as libvmaf, then the work-group's sum; the row sums
     * three at a time (a third of the barriers of one at a time) */
    int inner = P[P_INNER];
    for (int q0 = 0; q0 < 9; q0 += ADM_NRED) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < ADM_NRED; j++)
            red[j][lid] = acc[q0 + j];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int step = ADM_CW / 2; step > 0; step >>= 1) {
            if (tx < step) {
                for (int j = 0; j < ADM_NRED; j++)
                    red[j][lid] += red[j][lid + step];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (tx == 0) {
            for (int j = 0; j < ADM_NRED; j++) {
                int q = q0 + j;
                long s = red[j][lid], v = 0;
                if (row < bottom) {
                    if (q < 3)
                        v = (long)(((ulong)s + (ulong)add_for(den_sh)) >> den_sh);
                    else
                        v = (s + add_for(inner)) >> inner;
                }
                rows[ty][q] = v;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 9) {
        long s = 0;
        for (int y = 0; y < ADM_RS; y++)
            s += rows[y][lid];
        results[results_index + (size_t)g * 9 + lid] = s;
    }
}
