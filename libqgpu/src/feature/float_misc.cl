/*
 * libvmaf's float_psnr, float_moment and float_ansnr extractors (libvmaf
 * 3.2.0: float_psnr.c, float_moment.c + moment.c, float_ansnr.c + ansnr.c +
 * ansnr_tools.c, picture_copy.c). Luma only.
 *
 * float_psnr and float_moment: libvmaf converts samples to float in 8-bit
 * units (x / 4 at 10 bit, / 16 at 12, / 256 at 16, a power of two) and adds
 * float values or float squares in double. Every such value is an integer
 * divided by a power of two, so the double sums are exact; we add the
 * integers (and the float-rounded integer squares, which only differ from
 * the exact squares at 16 bit) in 64-bit integers and the host scales them.
 * Same value to the last bit, any order.
 *
 * float_ansnr is a float computation whose order matters:
 *   r = ref - 128 filtered by the 3x3 kernel {1,2,1}x{1,2,1}/16,
 *   d = dis - 128 filtered by the 5x5 kernel of integer weights / 571;
 *   each output sums rows fi of (sums over columns fj of coef * x) in float
 *   (ansnr_filter2d_s), borders mirrored (index -i reads i, n+k reads n-1-k);
 *   sig = sum r*r, noise = sum (r-d)^2, each a float running sum per row,
 *   rows then added in float from the top (ansnr_mse_s). fansnr_filter
 *   writes the two per-pixel terms, fansnr_rows adds each row in order (one
 *   work-item per row, 32 rows per work-group), the host adds the rows.
 * No multiply-add contraction (libvmaf's C code has none).
 */
#pragma OPENCL FP_CONTRACT OFF

#define FM_WG 256
#define FM_ROWS 4

static inline uint fm_load(__global const uchar *base, size_t index, int bps)
{
    if (bps == 1)
        return base[index];
    return ((__global const ushort *)base)[index];
}

/* float square of an integer, as libvmaf's float product rounds it (the
 * power-of-two unit scale does not change the rounding) */
static inline ulong fm_fsq(int v)
{
    float f = (float)v;
    return (ulong)(f * f);
}

static inline ulong fm_reduce(__local ulong *sums, ulong v)
{
    int lid = get_local_id(0);
    sums[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = FM_WG / 2; step > 0; step >>= 1) {
        if (lid < step)
            sums[lid] += sums[lid + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    ulong r = sums[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

/* float_psnr: sum of the float-rounded squared differences; one ulong per
 * work-group (FM_ROWS rows each). */
__kernel __attribute__((reqd_work_group_size(FM_WG, 1, 1)))
void fpsnr_sse(__global const uchar *ref, __global const uchar *dist, uint off, int bps, int w, int h,
               __global ulong *results, uint results_index)
{
    __local ulong sums[FM_WG];
    ref += off; /* luma plane, bytes */
    dist += off;
    int lid = get_local_id(0), y0 = get_group_id(0) * FM_ROWS;
    ulong sse = 0;
    for (int y = y0; y < min(y0 + FM_ROWS, h); y++)
        for (int x = lid; x < w; x += FM_WG) {
            size_t o = (size_t)y * w + x;
            sse += fm_fsq((int)fm_load(ref, o, bps) - (int)fm_load(dist, o, bps));
        }
    sse = fm_reduce(sums, sse);
    if (lid == 0)
        results[results_index + get_group_id(0)] = sse;
}

/* float_moment: sums of ref, dis, ref^2, dis^2 (4 ulongs per work-group). */
__kernel __attribute__((reqd_work_group_size(FM_WG, 1, 1)))
void fmoment_sums(__global const uchar *ref, __global const uchar *dist, uint off, int bps, int w, int h,
                  __global ulong *results, uint results_index)
{
    __local ulong sums[FM_WG];
    ref += off; /* luma plane, bytes */
    dist += off;
    int lid = get_local_id(0), y0 = get_group_id(0) * FM_ROWS;
    ulong s[4] = {0, 0, 0, 0};
    for (int y = y0; y < min(y0 + FM_ROWS, h); y++)
        for (int x = lid; x < w; x += FM_WG) {
            size_t o = (size_t)y * w + x;
            int a = (int)fm_load(ref, o, bps), b = (int)fm_load(dist, o, bps);
            s[0] += (ulong)a;
            s[1] += (ulong)b;
            s[2] += fm_fsq(a);
            s[3] += fm_fsq(b);
        }
    for (int k = 0; k < 4; k++) {
        ulong t = fm_reduce(sums, s[k]);
        if (lid == 0)
            results[results_index + 4 * get_group_id(0) + k] = t;
    }
}

#define TW 32
#define TH 16
#define R 2
#define IW (TW + 2 * R)
#define IH (TH + 2 * R)

/* ansnr_filter2d_ref_s: k/16 as float */
__constant float an_f3[9] = {0x1p-4f, 0x1p-3f, 0x1p-4f, 0x1p-3f, 0x1p-2f, 0x1p-3f,
                             0x1p-4f, 0x1p-3f, 0x1p-4f};
/* ansnr_filter2d_dis_s: (float)(k / 571.0) for k = 2, 7, 12, 31, 52, 127 */
#define A2 0x1.cb18a8p-9f
#define A7 0x1.91b594p-7f
#define A12 0x1.58527ep-6f
#define A31 0x1.bcbfe4p-5f
#define A52 0x1.750408p-4f
#define A127 0x1.c78278p-3f
__constant float an_f5[25] = {A2,  A7,  A12,  A7,  A2,  A7, A31, A52, A31, A7, A12, A52, A127,
                              A52, A12, A7, A31, A52, A31, A7, A2, A7,  A12, A7,  A2};

/* One tile of TW x TH per work-group: writes r*r and (r-d)^2 per pixel. */
__kernel void fansnr_filter(__global const uchar *ref, __global const uchar *dist, uint off, int bps, int w,
                            int h, float inv_scale, __global float *sig, __global float *noise)
{
    __local float lr[IH * IW];
    __local float ld[IH * IW];
    const int lid = get_local_id(0), nl = get_local_size(0);
    const int x0 = get_group_id(0) * TW, y0 = get_group_id(1) * TH;

    ref += off; /* luma plane, bytes */
    dist += off;
    for (int i = lid; i < IH * IW; i += nl) {
        int ry = i / IW, rx = i - ry * IW;
        size_t o = (size_t)mirror_skip_start_edge(y0 - R + ry, h) * w +
                   mirror_skip_start_edge(x0 - R + rx, w);
        lr[i] = (float)fm_load(ref, o, bps) * inv_scale + -128.0f;
        ld[i] = (float)fm_load(dist, o, bps) * inv_scale + -128.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* column-major planes (index x * h + y), consecutive work-items down a
     * column, so that the row kernel's loads coalesce */
    for (int i = lid; i < TH * TW; i += nl) {
        int tx = i / TH, ty = i - tx * TH;
        int y = y0 + ty, x = x0 + tx;
        if (y >= h || x >= w)
            continue;
        float r = 0.0f, d = 0.0f;
        for (int fi = 0; fi < 3; fi++) {
            float inner = 0.0f;
            for (int fj = 0; fj < 3; fj++)
                inner += an_f3[fi * 3 + fj] * lr[(ty + 1 + fi) * IW + tx + 1 + fj];
            r += inner;
        }
        for (int fi = 0; fi < 5; fi++) {
            float inner = 0.0f;
            for (int fj = 0; fj < 5; fj++)
                inner += an_f5[fi * 5 + fj] * ld[(ty + fi) * IW + tx + fj];
            d += inner;
        }
        size_t o = (size_t)x * h + y;
        sig[o] = r * r;
        noise[o] = (r - d) * (r - d);
    }
}

/* libvmaf's left-to-right float row sums (common.cl's row_sums_pair). */
__kernel __attribute__((reqd_work_group_size(ROW_SUMS_WG, 1, 1)))
void fansnr_rows(__global const float *sig, __global const float *noise, int w, int h,
                 __global float *results, uint results_index)
{
    __local float4 ta[ROW_SUMS_ROWS][ROW_SUMS_T4], tb[ROW_SUMS_ROWS][ROW_SUMS_T4];
    const int lid = get_local_id(0), y0 = get_group_id(0) * ROW_SUMS_ROWS;
    float s, n;

    row_sums_pair(sig, noise, w, h, y0, ta, tb, &s, &n);
    if (lid < ROW_SUMS_ROWS && y0 + lid < h) {
        results[results_index + 2 * (y0 + lid)] = s;
        results[results_index + 2 * (y0 + lid) + 1] = n;
    }
}
