/*
 * float_ssim and float_ms_ssim (libvmaf 3.2.0's IQA SSIM), luma only.
 *
 * Build options: -DSSIM_BPS=1 (8-bit samples) or -DSSIM_BPS=2 (16-bit words);
 * -DSSIM_FP64=0/1 (the filter sums in float-float or in double).
 *
 * What has to match libvmaf (doc/metrics/ssim.md has the numbers):
 * - every product of a pixel and a filter weight is rounded to float, the
 *   products of one output are summed exactly (libvmaf: in a double) and
 *   the sum is rounded to float once. Where the device has fp64
 *   (-DSSIM_FP64=1, chosen by ssim_options.h) the kernels sum in a double
 *   too; elsewhere with a float-float accumulator (Knuth's TwoSum), which
 *   carries the exact sum of the products and rounds it once at the end
 *   (on the H200 the double is the faster of the two: doc/metrics/ssim.md).
 *   A plain float sum rounds up to 10 times per output and moves the
 *   variances of flat regions (sigma^2 = E[x^2] - mu^2, with E[x^2] ~
 *   65000) by several ulps, which is visible in the mean.
 * - no multiply-add contraction (FP_CONTRACT OFF below), for the same
 *   reason: libvmaf's products are rounded.
 * - SSIM's Gaussian covers only the "valid" region (output (w-10) x
 *   (h-10), no border handling); the decimations mirror at the borders
 *   (index -1 reads 0, index n reads n-1).
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef SSIM_BPS
#define SSIM_BPS 1
#endif
#if SSIM_BPS == 1
typedef uchar sample_t;
#else
typedef ushort sample_t;
#endif

#define T 16              /* output tile edge; work-group is T x T */
#define R 5               /* Gaussian radius */
#define NIN (T + 2 * R)   /* input tile edge: 26 */
#define WG (T * T)

/* libvmaf iqa/ssim_tools.h g_gaussian_window_h (sigma 1.5, 11 taps) */
__constant float G11[11] = {
    0.001028f, 0.007599f, 0.036001f, 0.109361f, 0.213006f, 0.266012f,
    0.213006f, 0.109361f, 0.036001f, 0.007599f, 0.001028f,
};

/* libvmaf ms_ssim.c g_lpf: the 9x9 9/7 biorthogonal low-pass, used as a
 * 2-D table (it is not exactly the outer product of its 1-D version). */
__constant float LPF9[81] = {
     0.000714f,-0.000450f,-0.002090f, 0.007132f, 0.016114f, 0.007132f,-0.002090f,-0.000450f, 0.000714f,
    -0.000450f, 0.000283f, 0.001316f,-0.004490f,-0.010146f,-0.004490f, 0.001316f, 0.000283f,-0.000450f,
    -0.002090f, 0.001316f, 0.006115f,-0.020867f,-0.047149f,-0.020867f, 0.006115f, 0.001316f,-0.002090f,
     0.007132f,-0.004490f,-0.020867f, 0.071207f, 0.160885f, 0.071207f,-0.020867f,-0.004490f, 0.007132f,
     0.016114f,-0.010146f,-0.047149f, 0.160885f, 0.363505f, 0.160885f,-0.047149f,-0.010146f, 0.016114f,
     0.007132f,-0.004490f,-0.020867f, 0.071207f, 0.160885f, 0.071207f,-0.020867f,-0.004490f, 0.007132f,
    -0.002090f, 0.001316f, 0.006115f,-0.020867f,-0.047149f,-0.020867f, 0.006115f, 0.001316f,-0.002090f,
    -0.000450f, 0.000283f, 0.001316f,-0.004490f,-0.010146f,-0.004490f, 0.001316f, 0.000283f,-0.000450f,
     0.000714f,-0.000450f,-0.002090f, 0.007132f, 0.016114f, 0.007132f,-0.002090f,-0.000450f, 0.000714f,
};

#ifndef SSIM_FP64
#define SSIM_FP64 0
#endif
#if SSIM_FP64
/* where the device has fp64: the sum in a double, as libvmaf's (each
 * product rounded to float first, then converted) */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#define ACC_ZERO 0.0

static inline void acc_add(acc_t *a, float p)
{
    *a += (double)p;
}

static inline acc_t acc_start(float p)
{
    return (double)p;
}

static inline float acc_val(acc_t a)
{
    return (float)a;
}
#else
/* float-float accumulator: hi + lo is the running sum, hi rounded */
typedef struct { float hi, lo; } acc_t;
#define ACC_ZERO { 0.0f, 0.0f }

static inline void acc_add(acc_t *a, float p)
{
    float s = a->hi + p;
    float bp = s - a->hi;
    float e = (a->hi - (s - bp)) + (p - bp);
    a->hi = s;
    a->lo += e;
}

/* An accumulator holding its first product: what acc_add() of p to
 * { 0, 0 } leaves, without its six operations. That leaves { p, 0 } for
 * every p but -0, where it leaves { +0, +0 }; { -0, +0 } instead behaves the
 * same in every later acc_add() (a non-zero or +0 product gives both the
 * same accumulator, another -0 keeps both as they are) and in acc_val()
 * (-0 + +0 = +0): the same value whatever the products. */
static inline acc_t acc_start(float p)
{
    acc_t a = { p, 0.0f };
    return a;
}

static inline float acc_val(acc_t a)
{
    return a.hi + a.lo;
}
#endif

/* The SSIM window's five sums (x, y, xx, yy, xy) take their tap's
 * products: the first tap starts them, the others are added. */
static inline void acc5_take(acc_t *s0, acc_t *s1, acc_t *s2, acc_t *s3, acc_t *s4, float p0,
                             float p1, float p2, float p3, float p4, int first)
{
    if (first) {
        *s0 = acc_start(p0);
        *s1 = acc_start(p1);
        *s2 = acc_start(p2);
        *s3 = acc_start(p3);
        *s4 = acc_start(p4);
    } else {
        acc_add(s0, p0);
        acc_add(s1, p1);
        acc_add(s2, p2);
        acc_add(s3, p3);
        acc_add(s4, p4);
    }
}

/* ---- float_ssim's box decimation (scale x scale, weights 1/scale^2) ----
 * Output (x, y) sums the window from (x*f - f/2, y*f - f/2), mirrored
 * (only where it is not inside the picture). No reuse between outputs
 * (the windows tile the picture): no staging. */
__kernel void ssim_box_decimate(__global const sample_t *ref, __global const sample_t *dis,
                                int src_off, int w, int h, int f, float k, float unit,
                                __global float *dref, __global float *ddis, int sw, int sh)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= sw || y >= sh)
        return;
    int x0 = x * f - f / 2, y0 = y * f - f / 2;
    acc_t a = ACC_ZERO, b = ACC_ZERO;
    if (x0 >= 0 && y0 >= 0 && x0 + f <= w && y0 + f <= h) {
        /* inside the picture: no mirroring */
        for (int v = 0; v < f; v++) {
            int row = src_off + (y0 + v) * w + x0;
            for (int u = 0; u < f; u++) {
                float pa = ((float)ref[row + u] * unit) * k;
                float pb = ((float)dis[row + u] * unit) * k;
                acc_add(&a, pa);
                acc_add(&b, pb);
            }
        }
    } else {
        for (int v = 0; v < f; v++) {
            int row = src_off + mirror_repeat_edge(y0 + v, h) * w;
            for (int u = 0; u < f; u++) {
                int col = mirror_repeat_edge(x0 + u, w);
                float pa = ((float)ref[row + col] * unit) * k;
                float pb = ((float)dis[row + col] * unit) * k;
                acc_add(&a, pa);
                acc_add(&b, pb);
            }
        }
    }
    dref[y * sw + x] = acc_val(a);
    ddis[y * sw + x] = acc_val(b);
}

/* ---- MS-SSIM's 2x decimation with the 9x9 low-pass ----
 * A T x T output tile reads a (2T + 7)^2 input window, staged in local
 * memory for both pictures; mirrored only where the window is not inside
 * the picture (the same samples either way). */
#define DIN (2 * T + 7)

static inline bool lpf_window_inside(int x0, int y0, int w, int h)
{
    return x0 >= 0 && y0 >= 0 && x0 + DIN <= w && y0 + DIN <= h;
}

static inline __attribute__((always_inline)) void
lpf_tile(__local const float *la, __local const float *lb, int sw, int sh, __global float *dref,
         __global float *ddis, int dst_off)
{
    int tx = get_local_id(0), ty = get_local_id(1);
    int x = get_group_id(0) * T + tx, y = get_group_id(1) * T + ty;
    if (x >= sw || y >= sh)
        return;
    acc_t a = ACC_ZERO, b = ACC_ZERO;
#pragma unroll
    for (int v = 0; v < 9; v++) {
        int base = (2 * ty + v) * DIN + 2 * tx;
#pragma unroll
        for (int u = 0; u < 9; u++) {
            float kk = LPF9[v * 9 + u];
            float pa = la[base + u] * kk;
            float pb = lb[base + u] * kk;
            if (v == 0 && u == 0) {
                a = acc_start(pa);
                b = acc_start(pb);
            } else {
                acc_add(&a, pa);
                acc_add(&b, pb);
            }
        }
    }
    dref[dst_off + y * sw + x] = acc_val(a);
    ddis[dst_off + y * sw + x] = acc_val(b);
}

__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void ms_lpf_decimate_raw(__global const sample_t *ref, __global const sample_t *dis,
                         int src_off, int w, int h, float unit,
                         __global float *dref, __global float *ddis, int dst_off, int sw, int sh)
{
    __local float la[DIN * DIN], lb[DIN * DIN];
    int lid = get_local_id(1) * T + get_local_id(0);
    int x0 = get_group_id(0) * 2 * T - 4, y0 = get_group_id(1) * 2 * T - 4;
    if (lpf_window_inside(x0, y0, w, h)) {
        for (int i = lid; i < DIN * DIN; i += WG) {
            int r = i / DIN, c = i - r * DIN;
            int idx = src_off + (y0 + r) * w + x0 + c;
            la[i] = (float)ref[idx] * unit;
            lb[i] = (float)dis[idx] * unit;
        }
    } else {
        for (int i = lid; i < DIN * DIN; i += WG) {
            int r = i / DIN, c = i - r * DIN;
            int idx = src_off + mirror_repeat_edge(y0 + r, h) * w + mirror_repeat_edge(x0 + c, w);
            la[i] = (float)ref[idx] * unit;
            lb[i] = (float)dis[idx] * unit;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    lpf_tile(la, lb, sw, sh, dref, ddis, dst_off);
}

__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void ms_lpf_decimate_float(__global const float *sref, __global const float *sdis,
                           int src_off, int w, int h,
                           __global float *dref, __global float *ddis, int dst_off, int sw, int sh)
{
    __local float la[DIN * DIN], lb[DIN * DIN];
    int lid = get_local_id(1) * T + get_local_id(0);
    int x0 = get_group_id(0) * 2 * T - 4, y0 = get_group_id(1) * 2 * T - 4;
    if (lpf_window_inside(x0, y0, w, h)) {
        for (int i = lid; i < DIN * DIN; i += WG) {
            int r = i / DIN, c = i - r * DIN;
            int idx = src_off + (y0 + r) * w + x0 + c;
            la[i] = sref[idx];
            lb[i] = sdis[idx];
        }
    } else {
        for (int i = lid; i < DIN * DIN; i += WG) {
            int r = i / DIN, c = i - r * DIN;
            int idx = src_off + mirror_repeat_edge(y0 + r, h) * w + mirror_repeat_edge(x0 + c, w);
            la[i] = sref[idx];
            lb[i] = sdis[idx];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    lpf_tile(la, lb, sw, sh, dref, ddis, dst_off);
}

/* ---- SSIM of nt T x T tiles of the valid region, stacked vertically ----
 * lx, ly: the NIN-wide input window of the tiles, nt T + 2 R rows (staged
 * by the caller). Three passes make the five moment planes (mu_x, mu_y,
 * E[x^2], E[y^2], E[xy]): horizontal 11-tap sums of the five into hb
 * (nt T + 2 R rows x T columns each), then the vertical sums by columns
 * into mom (nt T rows x T columns each), then l, c, s per output pixel.
 * Tiles stacked in one work-group share their halo rows: each row's
 * horizontal sums are taken once. Each tile's work-group sums of l*c*s,
 * l, c, s (the same tree for every tile) go to out[t][0..3] (tile t = 0
 * at oy0, t = 1 below it, when it lies in the region), from sum `first`
 * on: 0 makes all four (float_ssim), 1 leaves out l*c*s, 2 l*c*s and l
 * (MS-SSIM reads no l*c*s, and l only where its exponent is not 0 or
 * with enable_lcs); what is left out is neither computed nor reduced.
 *
 * Local layout: hb[q][row][col], rows HS = T + 1 floats apart and planes
 * HP(nt) floats (16 mod 32), so that the vertical pass's 32 work-items
 * of a warp (16 columns of two tiles, or of two quantities) read 32
 * banks; mom[q][tile][row][col], tiles MT floats apart (16 mod 32), in
 * the memory of lx / ly (no longer read by then); the reduction in hb's. */
#define HROWS(nt) ((nt) * T + 2 * R)
#define HS (T + 1)
#define HP(nt) (HROWS(nt) * HS + ((16 - HROWS(nt) * HS % 32) + 32) % 32)
#define MT (T * T + 16)
#define MP(nt) ((nt) * MT)
#define WIN(nt) (2 * NIN * HROWS(nt) > 5 * MP(nt) ? 2 * NIN * HROWS(nt) : 5 * MP(nt))
#define HB(nt) (5 * HP(nt) > 4 * (nt) * WG ? 5 * HP(nt) : 4 * (nt) * WG)

/* The vertical sums of T outputs of one column (one quantity): output y
 * sums fl(h[y + v] g[v]) for v = 0..10, in that order, as one output a
 * work-item did. Since g[v] = g[10 - v], row i's product with g[5 + j]
 * is also output (i - 5 + j)'s with g[5 - j]: formed (and, on the fp64
 * path, converted) once for both, 126 products for the column's 16
 * outputs instead of 176. The rows are taken in order, so each output
 * still gets its products v = 0, 1, .. 10 in turn: the same sums.
 * line_take() takes row i (a constant once the loop is unrolled). */
static inline __attribute__((always_inline)) void line_take(acc_t *acc, float x, const int i)
{
#pragma unroll
    for (int j = 5; j >= 0; j--) {
        const int c1 = i - 5 - j; /* takes it with tap 5 + j */
        const int c2 = i - 5 + j; /* takes it with tap 5 - j */
        const bool v1 = c1 >= 0 && c1 < T;
        const bool v2 = j > 0 && c2 >= 0 && c2 < T;
        if (v1 || v2) {
            float p = x * G11[5 + j];
            if (v1)
                acc_add(&acc[c1], p);
            if (v2) {
                if (j == 5)
                    acc[c2] = acc_start(p);
                else
                    acc_add(&acc[c2], p);
            }
        }
    }
}

static inline __attribute__((always_inline)) void
ssim_tiles(__local const float *lx, __local const float *ly, __local float *hb,
           __local float *mom, int ow, int oh, int ox0, int oy0, int first,
           __global float *out0, __global float *out1, const int nt)
{
    const float C1 = (0.01f * 255.0f) * (0.01f * 255.0f);
    const float C2 = (0.03f * 255.0f) * (0.03f * 255.0f);
    const float C3 = C2 / 2.0f;
    const int hp = HROWS(nt) * T; /* horizontal sums of one quantity */
    int tx = get_local_id(0), ty = get_local_id(1);
    int lid = ty * T + tx;

    for (int i = lid; i < hp; i += WG) {
        int r = i / T, c = i - r * T;
        acc_t s0 = ACC_ZERO, s1 = ACC_ZERO, s2 = ACC_ZERO;
        acc_t s3 = ACC_ZERO, s4 = ACC_ZERO;
#pragma unroll
        for (int u = 0; u < 11; u++) {
            float g = G11[u];
            float a = lx[r * NIN + c + u], b = ly[r * NIN + c + u];
            float aa = a * a, bb = b * b, ab = a * b;
            float p0 = a * g, p1 = b * g, p2 = aa * g, p3 = bb * g, p4 = ab * g;
            acc5_take(&s0, &s1, &s2, &s3, &s4, p0, p1, p2, p3, p4, u == 0);
        }
        int o = r * HS + c;
        hb[0 * HP(nt) + o] = acc_val(s0);
        hb[1 * HP(nt) + o] = acc_val(s1);
        hb[2 * HP(nt) + o] = acc_val(s2);
        hb[3 * HP(nt) + o] = acc_val(s3);
        hb[4 * HP(nt) + o] = acc_val(s4);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* vertical: work-item (quantity, tile, column), columns fastest; 5 nt T
     * of the WG work-items (160 of 256 for two tiles) */
    if (lid < 5 * nt * T) {
        int c = lid % T, k = lid / T;
        int t = k % nt, q = k / nt;
        __local const float *col = hb + q * HP(nt) + t * T * HS + c;
        acc_t acc[T];
#pragma unroll
        for (int i = 0; i < T + 2 * R; i++)
            line_take(acc, col[i * HS], i);
        __local float *o = mom + q * MP(nt) + t * MT + c;
#pragma unroll
        for (int y = 0; y < T; y++)
            o[y * T] = acc_val(acc[y]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* the reduction in hb, free again: tile t's sum k (k >= first) in
     * red[(nq t + k - first) WG ..] */
    __local float *red = hb;
    const int nq = 4 - first;
#pragma unroll
    for (int t = 0; t < nt; t++) {
        float vl = 0.0f, vc = 0.0f, vs = 0.0f, vlcs = 0.0f;
        if (ox0 + tx < ow && oy0 + t * T + ty < oh) {
            int i = t * MT + ty * T + tx;
            float m1 = mom[0 * MP(nt) + i], m2 = mom[1 * MP(nt) + i];
            float m11 = m1 * m1, m22 = m2 * m2, m12 = m1 * m2;
            float v1 = mom[2 * MP(nt) + i] - m11;
            float v2 = mom[3 * MP(nt) + i] - m22;
            float v12 = mom[4 * MP(nt) + i] - m12;
            if (v1 < 0.0f)
                v1 = 0.0f;
            if (v2 < 0.0f)
                v2 = 0.0f;
            float v1v2 = v1 * v2;
            float sd = sqrt(v1v2);
            float cden = (v1 + v2) + C2;
            /* libvmaf: a flat, identical neighbourhood keeps s = 1 even when
             * rounding left the covariance slightly negative */
            float cov = (v12 < 0.0f && sd <= 0.0f) ? 0.0f : v12;
            float snum = cov + C3;
            float sden = sd + C3;
            float cnum = 2.0f * sd + C2;
            if (first < 2) {
                float lden = (m11 + m22) + C1;
                float lnum = (2.0f * m1) * m2 + C1;
                vl = lnum / lden;
            }
            vc = cnum / cden;
            vs = snum / sden;
            if (first == 0)
                vlcs = (vl * vc) * vs;
        }
        float v[4] = { vlcs, vl, vc, vs };
#pragma unroll
        for (int k = 0; k < 4; k++)
            if (k >= first)
                red[(nq * t + k - first) * WG + lid] = v[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int n = WG / 2; n > 0; n >>= 1) {
        if (lid < n) {
#pragma unroll
            for (int k = 0; k < 4 * nt; k++)
                if (k < nq * nt)
                    red[k * WG + lid] += red[k * WG + lid + n];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid < nq)
        out0[first + lid] = red[lid * WG];
    if (nt > 1 && lid < nq && oy0 + T < oh)
        out1[first + lid] = red[(nq + lid) * WG];
}

/* The local memory of an nt-tile work-group: the staged window (lx, ly)
 * and later the moments in win, the horizontal sums and later the
 * reduction in hb. */
#define SSIM_LOCALS(nt)                                                                    \
    __local float win[WIN(nt)], hb[HB(nt)];                                                \
    __local float *lx = win, *ly = win + NIN * HROWS(nt)

/* SSIM straight from the uploaded samples (no decimation), two tiles
 * stacked per work-group: group g takes tile column g % tiles_x and tile
 * rows 2 (g / tiles_x) and the one below; tile (x, y) writes
 * partials[part_off + 4 (y tiles_x + x) + first ..] (first: ssim_tiles). */
__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void ssim_tiles_raw(__global const sample_t *ref, __global const sample_t *dis, int src_off,
                    int w, int h, float unit, int tiles_x, int first,
                    __global float *partials, int part_off)
{
    SSIM_LOCALS(2);
    int g = get_group_id(0);
    int tile = (g / tiles_x) * 2 * tiles_x + g % tiles_x;
    int ox0 = (g % tiles_x) * T, oy0 = (g / tiles_x) * 2 * T;
    int lid = get_local_id(1) * T + get_local_id(0);
    for (int i = lid; i < NIN * HROWS(2); i += WG) {
        int r = i / NIN, c = i - r * NIN;
        int x = ox0 + c, y = oy0 + r;
        float a = 0.0f, b = 0.0f;
        if (x < w && y < h) {
            a = (float)ref[src_off + y * w + x] * unit;
            b = (float)dis[src_off + y * w + x] * unit;
        }
        lx[i] = a;
        ly[i] = b;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __global float *out = partials + part_off + tile * 4;
    ssim_tiles(lx, ly, hb, win, w - 10, h - 10, ox0, oy0, first, out, out + 4 * tiles_x, 2);
}

/* The first n samples (rows of NIN) of a float picture's tile window from
 * (ox0, oy0) into lx / ly, 0 outside the picture; then a barrier. */
static inline void stage_float(__global const float *ref, __global const float *dis, int off,
                               int w, int h, int ox0, int oy0, int n, __local float *lx,
                               __local float *ly)
{
    int lid = get_local_id(1) * T + get_local_id(0);
    for (int i = lid; i < n; i += WG) {
        int r = i / NIN, c = i - r * NIN;
        int x = ox0 + c, y = oy0 + r;
        float a = 0.0f, b = 0.0f;
        if (x < w && y < h) {
            a = ref[off + y * w + x];
            b = dis[off + y * w + x];
        }
        lx[i] = a;
        ly[i] = b;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* SSIM of float pictures, several at once (MS-SSIM's scales 1..4, or
 * float_ssim's decimated picture). table[5 * s ..] = offset (floats), w,
 * h, tiles_x, first group of picture s; groups are numbered across the
 * pictures, in order, and write partials[part_off + 4 * group ..]. */
__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void ssim_tiles_float(__global const float *ref, __global const float *dis,
                      __global const int *table, int count,
                      __global float *partials, int part_off)
{
    SSIM_LOCALS(1);
    int g = get_group_id(0);
    int s = 0;
    while (s + 1 < count && g >= table[5 * (s + 1) + 4])
        s++;
    int off = table[5 * s], w = table[5 * s + 1], h = table[5 * s + 2];
    int tiles_x = table[5 * s + 3], lg = g - table[5 * s + 4];
    int ox0 = (lg % tiles_x) * T, oy0 = (lg / tiles_x) * T;
    stage_float(ref, dis, off, w, h, ox0, oy0, NIN * NIN, lx, ly);
    ssim_tiles(lx, ly, hb, win, w - 10, h - 10, ox0, oy0, 0, partials + part_off + g * 4,
               NULL, 1);
}

/* MS-SSIM's scales 1..4 (float pictures) in one launch, two tiles stacked
 * per work-group as ssim_tiles_raw takes them. table[7 * s ..] = offset
 * (floats), w, h, tiles_x, first group, first tile, first sum (ssim_tiles'
 * first) of picture s; groups are numbered across the pictures, in order
 * (group g of a picture takes tile column g % tiles_x and tile rows
 * 2 (g / tiles_x) and the one below); tile t of a picture (t = y tiles_x
 * + x) writes partials[part_off + 4 (first tile + t) + first sum ..]. */
__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void ssim_tiles_float2(__global const float *ref, __global const float *dis,
                       __global const int *table, int count,
                       __global float *partials, int part_off)
{
    SSIM_LOCALS(2);
    int g = get_group_id(0);
    int s = 0;
    while (s + 1 < count && g >= table[7 * (s + 1) + 4])
        s++;
    int off = table[7 * s], w = table[7 * s + 1], h = table[7 * s + 2];
    int tiles_x = table[7 * s + 3], lg = g - table[7 * s + 4];
    int tile = table[7 * s + 5] + (lg / tiles_x) * 2 * tiles_x + lg % tiles_x;
    int ox0 = (lg % tiles_x) * T, oy0 = (lg / tiles_x) * 2 * T;
    stage_float(ref, dis, off, w, h, ox0, oy0, NIN * HROWS(2), lx, ly);
    __global float *out = partials + part_off + tile * 4;
    ssim_tiles(lx, ly, hb, win, w - 10, h - 10, ox0, oy0, table[7 * s + 6], out,
               out + 4 * tiles_x, 2);
}
