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
 *   rows then added in float from the top (ansnr_mse_s). fansnr_bands
 *   computes the two per-pixel terms of a band of rows and adds each row
 *   in order (one work-item per row); the host adds the rows.
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

#define R 2                                /* the 5x5 filter's radius */
#define AB_IW (ROW_SUMS_COLS + 2 * R)       /* staged columns of a tile: 260 */
#define AB_IH (ROW_SUMS_ROWS + 2 * R)       /* staged rows of a band: 12 */
#define AB_STAGE (AB_IW * AB_IH)
#define AB_LOADS ((AB_STAGE + ROW_SUMS_WG - 1) / ROW_SUMS_WG) /* 13 a work-item */

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

/* The samples of a tile of a band and its halo (mirrored), into registers:
 * staged sample i = lid + k ROW_SUMS_WG is pr[k], pd[k]. */
static inline void fansnr_fetch(uint *pr, uint *pd, __global const uchar *ref,
                                __global const uchar *dist, int bps, int w, int h, int x0,
                                int y0, int lid)
{
    for (int k = 0; k < AB_LOADS; k++) {
        int i = lid + k * ROW_SUMS_WG;
        int ry = i / AB_IW, rx = i - ry * AB_IW;
        size_t o = (size_t)mirror_skip_start_edge(y0 - R + ry, h) * w +
                   mirror_skip_start_edge(x0 - R + rx, w);
        bool in = i < AB_STAGE;
        pr[k] = in ? fm_load(ref, o, bps) : 0u;
        pd[k] = in ? fm_load(dist, o, bps) : 0u;
    }
}

/*
 * float_ansnr in one launch: a work-group takes ROW_SUMS_ROWS rows (a band)
 * and walks them in tiles of ROW_SUMS_COLS columns: the tile and its halo
 * staged (the next tile's samples loaded while this one is filtered and
 * added), work-item c filters column c of the band's rows into the two
 * terms r^2 and (r - d)^2 (a __local tile, as common.cl's row sums keep
 * theirs), then work-item r < ROW_SUMS_ROWS adds row r's terms left to
 * right in float (row_sums_add). Writes (sig, noise) per row. Each term is
 * the expression of libvmaf's filter and the sums keep its order; the
 * terms never go to global memory.
 */
__kernel __attribute__((reqd_work_group_size(ROW_SUMS_WG, 1, 1)))
void fansnr_bands(__global const uchar *ref, __global const uchar *dist, uint off, int bps, int w,
                  int h, float inv_scale, __global float *results, uint results_index)
{
    __local float lr[AB_STAGE], ld[AB_STAGE];
    __local float4 ts[ROW_SUMS_ROWS][ROW_SUMS_T4], tn[ROW_SUMS_ROWS][ROW_SUMS_T4];
    const int lid = get_local_id(0), y0 = get_group_id(0) * ROW_SUMS_ROWS;
    uint pr[AB_LOADS], pd[AB_LOADS];
    float sig = 0.0f, noise = 0.0f;

    ref += off; /* luma plane, bytes */
    dist += off;
    fansnr_fetch(pr, pd, ref, dist, bps, w, h, 0, y0, lid);
    for (int x0 = 0; x0 < w; x0 += ROW_SUMS_COLS) {
        for (int k = 0; k < AB_LOADS; k++) {
            int i = lid + k * ROW_SUMS_WG;
            if (i < AB_STAGE) {
                lr[i] = (float)pr[k] * inv_scale + -128.0f;
                ld[i] = (float)pd[k] * inv_scale + -128.0f;
            }
        }
        /* also: the adds of the last tile's terms are done */
        barrier(CLK_LOCAL_MEM_FENCE);
        if (x0 + ROW_SUMS_COLS < w)
            fansnr_fetch(pr, pd, ref, dist, bps, w, h, x0 + ROW_SUMS_COLS, y0, lid);
        /* column lid of the band's rows, staged row by staged row: row s
         * is filter row fi = s - ty of output row ty's 5x5 sum (and fi =
         * s - 1 - ty of its 3x3 one); the filters' rows fi and n - 1 - fi
         * are equal, so a staged row's inner sums are formed once for
         * every output row taking them (3 of 5, 2 of 3), each from 5 (3)
         * samples loaded once, and added to the outputs' sums, which
         * thus take their rows fi in order (one output row at a time
         * loaded 34 samples and formed 8 inner sums) */
        float r[ROW_SUMS_ROWS], d[ROW_SUMS_ROWS];
#pragma unroll
        for (int ty = 0; ty < ROW_SUMS_ROWS; ty++) {
            r[ty] = 0.0f;
            d[ty] = 0.0f;
        }
#pragma unroll
        for (int sy = 0; sy < AB_IH; sy++) {
            float in5[3], in3[2];
#pragma unroll
            for (int k = 0; k < 3; k++) {
                float inner = 0.0f;
#pragma unroll
                for (int fj = 0; fj < 5; fj++)
                    inner += an_f5[k * 5 + fj] * ld[sy * AB_IW + lid + fj];
                in5[k] = inner;
            }
#pragma unroll
            for (int fi = 0; fi < 5; fi++)
                if (sy - fi >= 0 && sy - fi < ROW_SUMS_ROWS)
                    d[sy - fi] += in5[fi < 3 ? fi : 4 - fi];
            if (sy < 1 || sy > ROW_SUMS_ROWS + 2)
                continue;
#pragma unroll
            for (int k = 0; k < 2; k++) {
                float inner = 0.0f;
#pragma unroll
                for (int fj = 0; fj < 3; fj++)
                    inner += an_f3[k * 3 + fj] * lr[sy * AB_IW + lid + 1 + fj];
                in3[k] = inner;
            }
#pragma unroll
            for (int fi = 0; fi < 3; fi++)
                if (sy - 1 - fi >= 0 && sy - 1 - fi < ROW_SUMS_ROWS)
                    r[sy - 1 - fi] += in3[fi == 1];
        }
#pragma unroll
        for (int ty = 0; ty < ROW_SUMS_ROWS; ty++) {
            ((__local float *)ts[ty])[lid] = r[ty] * r[ty];
            ((__local float *)tn[ty])[lid] = (r[ty] - d[ty]) * (r[ty] - d[ty]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < ROW_SUMS_ROWS)
            row_sums_add(ts[lid], tn[lid], min(ROW_SUMS_COLS, w - x0), &sig, &noise);
    }
    if (lid < ROW_SUMS_ROWS && y0 + lid < h) {
        results[results_index + 2 * (y0 + lid)] = sig;
        results[results_index + 2 * (y0 + lid) + 1] = noise;
    }
}
