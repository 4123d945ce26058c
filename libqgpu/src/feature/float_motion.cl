/*
 * float_motion: libvmaf's float motion extractor (float_motion.c, motion.c,
 * common/convolution.c, picture_copy.c of libvmaf 3.2.0), in the same
 * single-precision evaluation order, so the result is bit-identical:
 *
 *   p      = sample / scale - 128            (scale 1, 4, 16, 256 for 8/10/12/16 bit)
 *   blur   = separable filter, vertical pass first, then horizontal; each
 *            output accumulates taps 0..n-1 in float starting from 0
 *            (convolution_y_c_s / convolution_x_c_s); borders mirrored
 *            without repeating the edge: index -i reads i, index n-1+k
 *            reads n-1-k. (The older convolution_edge_s reads n-1-k for
 *            n+k, as ansnr does; with that rule motion misses the corpus
 *            goldens by up to 7e-3, with this one it matches every printed
 *            digit: measured on the fate pairs.)
 *   SAD    = per row, a float running sum of |blur_prev - blur_cur| from
 *            left to right; the host adds the rows in float, top to bottom
 *            (vmaf_image_sad_c).
 *
 * No multiply-add contraction: libvmaf's C code is compiled without FMA.
 *
 * Launches per frame and plane: fmotion_bands (below: both frames' blur
 * from their samples, the terms and the row sums in one launch). With
 * motion_add_scale1, whose scaler reads the blurred planes:
 * fmotion_blur (tiles of TW x TH staged with their
 * halo in __local memory; writes the frame's blurred plane into the
 * feature's history buffer) and, from the second frame on, fmotion_sad
 * (ROW_SUMS_ROWS rows a work-group: the terms |prev - cur| of the two
 * blurred planes formed as the group loads them, each row's terms then
 * added left to right by one work-item, libvmaf's order). Planes on the
 * device are column-major so that those loads coalesce. fmotion_sad reads
 * the previous frame's plane, which the next frame's blur overwrites: it
 * is chained across lanes as the blur is.
 *
 * Build options: -DFM_IN8=1 for 8-bit samples (else 16-bit words),
 * -DFM_TAPS=5|1 (1: the 5-tap no-op filter of motion_filter_size=1).
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef FM_IN8
#define FM_IN8 1
#endif
#ifndef FM_TAPS
#define FM_TAPS 5
#endif

#if FM_IN8
#define PIX uchar
#else
#define PIX ushort
#endif

#define TW 64
#define TH 16
#define R 2
#define IW (TW + 2 * R)
#define IH (TH + 2 * R)

/* motion_tools.h FILTER_5_s {0.054488685, 0.244201342, 0.402619947, ...}
 * rounded to float (hex literals: no decimal double rounding in question) */
#if FM_TAPS == 5
__constant float fm_taps[5] = {0x1.be5f0ep-5f, 0x1.f41fd6p-3f, 0x1.9c4868p-2f, 0x1.f41fd6p-3f,
                               0x1.be5f0ep-5f};
#else
/* FILTER_5_NO_OP_s: the picture itself (0 * x adds nothing) */
__constant float fm_taps[5] = {0.0f, 0.0f, 1.0f, 0.0f, 0.0f};
#endif

__kernel void fmotion_blur(__global const PIX *src, uint src_offset, int pitch, int w, int h,
                           float inv_scale, __global float *blur)
{
    __local float in[IH * IW];
    __local float v[TH * IW];
    const int lid = get_local_id(0), nl = get_local_size(0);
    const int x0 = get_group_id(0) * TW, y0 = get_group_id(1) * TH;

    src += src_offset;
    for (int i = lid; i < IH * IW; i += nl) {
        int ry = i / IW, rx = i - ry * IW;
        int y = mirror_skip_edge(y0 - R + ry, h), x = mirror_skip_edge(x0 - R + rx, w);
        float s = (float)src[(size_t)y * pitch + x];
        in[i] = s * inv_scale + -128.0f; /* exact: 1/scale is a power of 2 */
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < TH * IW; i += nl) {
        int ry = i / IW, rx = i - ry * IW;
        float acc = 0.0f;
        for (int k = 0; k < 5; k++)
            acc += fm_taps[k] * in[(ry + k) * IW + rx];
        v[i] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* column-major planes (index x * h + y), consecutive work-items down a
     * column: the row kernel then reads consecutive addresses across its
     * work-items */
    for (int i = lid; i < TH * TW; i += nl) {
        int rx = i / TH, ry = i - rx * TH;
        int y = y0 + ry, x = x0 + rx;
        if (y >= h || x >= w)
            continue;
        float acc = 0.0f;
        for (int k = 0; k < 5; k++)
            acc += fm_taps[k] * v[ry * IW + rx + k];
        blur[(size_t)x * h + y] = acc;
    }
}

/*
 * fmotion_bands: blur, |prev - cur| and the row sums of one plane in one
 * launch, from the samples of both frames (the blurred planes never go to
 * global memory). A work-group takes ROW_SUMS_ROWS rows (a band) and walks
 * them in tiles of MB_TW columns: work-item j makes the band's vertical
 * sums of column x0 - R + j of both frames from the MB_IH samples it holds
 * in registers (loaded while the tile before was filtered and added),
 * work-item c < MB_TW the horizontal sums of column x0 + c and its terms,
 * work-item r < ROW_SUMS_ROWS adds row r's terms left to right. The blur of
 * frame n - 1 is made again from its samples, which frame n - 1's launch
 * copied into `hist_prev` (frame n copies its own into `hist`: each launch
 * is chained after the previous frame's). Each blurred value is the
 * expression of fmotion_blur (vertical taps 0..4 from 0, then horizontal)
 * and each term |prev - cur| as fmotion_sad forms it: the same sums.
 */
#define MB_WG ROW_SUMS_WG            /* 256: one vertical column each */
#define MB_TW (MB_WG - 2 * R)        /* 252 output columns a tile */
#define MB_IH (ROW_SUMS_ROWS + 2 * R) /* 12 sample rows a band */

/* column x0 - R + lid of the band's MB_IH rows (mirrored) into registers */
static inline void mb_fetch(uint *pc, uint *pp, __global const PIX *cur, int pitch,
                            __global const PIX *prev, const int has_prev, int x0, int y0,
                            int w, int h, int lid)
{
    const int x = mirror_skip_edge(x0 - R + lid, w);
#pragma unroll
    for (int k = 0; k < MB_IH; k++) {
        const int y = mirror_skip_edge(y0 - R + k, h);
        pc[k] = cur[y * pitch + x];
        pp[k] = has_prev ? prev[y * w + x] : pc[k];
    }
}

/* the band's vertical sums of one column of samples (fmotion_blur's
 * vertical pass: taps 0..4 from 0) into v[r][lid] */
static inline void mb_vertical(const uint *p, float inv_scale, __local float (*v)[MB_WG],
                               int lid)
{
    float in[MB_IH];
#pragma unroll
    for (int k = 0; k < MB_IH; k++)
        in[k] = (float)p[k] * inv_scale + -128.0f; /* exact: 1/scale is a power of 2 */
#pragma unroll
    for (int r = 0; r < ROW_SUMS_ROWS; r++) {
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < 5; k++)
            acc += fm_taps[k] * in[r + k];
        v[r][lid] = acc;
    }
}

__kernel __attribute__((reqd_work_group_size(MB_WG, 1, 1)))
void fmotion_bands(__global const PIX *src, uint src_offset, int pitch,
                   __global const PIX *hist_prev, int has_prev, __global PIX *hist, int w,
                   int h, float inv_scale, __global float *results, uint results_index)
{
    __local float vc[ROW_SUMS_ROWS][MB_WG], vp[ROW_SUMS_ROWS][MB_WG];
    __local float4 tile[ROW_SUMS_ROWS][ROW_SUMS_T4];
    const int lid = get_local_id(0), y0 = get_group_id(0) * ROW_SUMS_ROWS;
    uint pc[MB_IH], pp[MB_IH];
    float sum = 0.0f;

    src += src_offset;
    mb_fetch(pc, pp, src, pitch, hist_prev, has_prev, 0, y0, w, h, lid);
    for (int x0 = 0; x0 < w; x0 += MB_TW) {
        /* this frame's samples of the band for the next frame's launch */
        const int x = x0 - R + lid;
        if (lid >= R && lid < MB_TW + R && x < w)
#pragma unroll
            for (int r = 0; r < ROW_SUMS_ROWS; r++)
                if (y0 + r < h)
                    hist[(y0 + r) * w + x] = (PIX)pc[R + r];
        mb_vertical(pc, inv_scale, vc, lid);
        mb_vertical(pp, inv_scale, vp, lid);
        /* also: the adds of the last tile's terms are done */
        barrier(CLK_LOCAL_MEM_FENCE);
        if (x0 + MB_TW < w)
            mb_fetch(pc, pp, src, pitch, hist_prev, has_prev, x0 + MB_TW, y0, w, h, lid);
        if (lid < MB_TW) {
#pragma unroll
            for (int r = 0; r < ROW_SUMS_ROWS; r++) {
                float a = 0.0f, b = 0.0f;
#pragma unroll
                for (int k = 0; k < 5; k++) {
                    a += fm_taps[k] * vp[r][lid + k];
                    b += fm_taps[k] * vc[r][lid + k];
                }
                const bool inside = x0 + lid < w && y0 + r < h;
                ((__local float *)tile[r])[lid] = inside ? fabs(a - b) : 0.0f;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < ROW_SUMS_ROWS)
            row_sum_add(tile[lid], min(MB_TW, w - x0), &sum);
    }
    if (has_prev && lid < ROW_SUMS_ROWS && y0 + lid < h)
        results[results_index + y0 + lid] = sum;
}

/* The terms of a tile of ROW_SUMS_ROWS rows from column x0 on into
 * registers: |a - b| of two planes (two = 1), or a plane of terms (two =
 * 0: motion_add_scale1's), column-major, 0 outside the picture. */
static inline void fm_fetch(float *t, __global const float *a, __global const float *b,
                            const int two, int lid, int x0, int y0, int w, int h)
{
    const int y = y0 + lid % ROW_SUMS_ROWS, c0 = lid / ROW_SUMS_ROWS;
    for (int k = 0; k < ROW_SUMS_LOADS; k++) {
        const int x = x0 + c0 + k * (ROW_SUMS_WG / ROW_SUMS_ROWS);
        const bool inside = x < w && y < h;
        const size_t i = inside ? (size_t)x * h + y : 0;
        t[k] = inside ? (two ? fabs(a[i] - b[i]) : a[i]) : 0.0f;
    }
}

/* One tile's step: the terms t (column x0 on) into the group's tile, the
 * tile after next fetched into t, and row lid's terms of this tile added
 * to *sum by work-item lid < ROW_SUMS_ROWS. */
static inline void fm_sad_step(float *t, __global const float *a, __global const float *b,
                               const int two, int x0, int y0, int w, int h,
                               __local float4 (*tile)[ROW_SUMS_T4], float *sum)
{
    const int lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    __local float *row = (__local float *)tile[lid % ROW_SUMS_ROWS];
    for (int k = 0; k < ROW_SUMS_LOADS; k++)
        row[lid / ROW_SUMS_ROWS + k * (ROW_SUMS_WG / ROW_SUMS_ROWS)] = t[k];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (x0 + 2 * ROW_SUMS_COLS < w)
        fm_fetch(t, a, b, two, lid, x0 + 2 * ROW_SUMS_COLS, y0, w, h);
    if (lid < ROW_SUMS_ROWS)
        row_sum_add(tile[lid], min(ROW_SUMS_COLS, w - x0), sum);
}

/* libvmaf's left-to-right float sum of each row's terms, ROW_SUMS_ROWS
 * rows a work-group: the group loads tiles of ROW_SUMS_COLS columns two
 * ahead of the one being added (one ahead left the adds waiting for the
 * loads), work-item r < ROW_SUMS_ROWS adds row r's terms (common.cl's
 * row_sum_add). (One work-item per row loading its own terms, 17
 * work-groups at 1080p, waited for memory at every load.) */
static inline void fm_sad_rows(__global const float *a, __global const float *b, const int two,
                               int w, int h, __local float4 (*tile)[ROW_SUMS_T4],
                               __global float *results, uint results_index)
{
    const int lid = get_local_id(0), y0 = get_group_id(0) * ROW_SUMS_ROWS;
    float t0[ROW_SUMS_LOADS], t1[ROW_SUMS_LOADS];
    float sum = 0.0f;

    fm_fetch(t0, a, b, two, lid, 0, y0, w, h);
    if (ROW_SUMS_COLS < w)
        fm_fetch(t1, a, b, two, lid, ROW_SUMS_COLS, y0, w, h);
    for (int x0 = 0; x0 < w; x0 += 2 * ROW_SUMS_COLS) {
        fm_sad_step(t0, a, b, two, x0, y0, w, h, tile, &sum);
        if (x0 + ROW_SUMS_COLS < w) /* the same for every work-item */
            fm_sad_step(t1, a, b, two, x0 + ROW_SUMS_COLS, y0, w, h, tile, &sum);
    }
    if (lid < ROW_SUMS_ROWS && y0 + lid < h)
        results[results_index + y0 + lid] = sum;
}

/* the rows of |prev - cur| (the blurred planes of frames n - 1 and n) */
__kernel __attribute__((reqd_work_group_size(ROW_SUMS_WG, 1, 1)))
void fmotion_sad(__global const float *prev, __global const float *cur, int w, int h,
                 __global float *results, uint results_index)
{
    __local float4 tile[ROW_SUMS_ROWS][ROW_SUMS_T4];
    fm_sad_rows(prev, cur, 1, w, h, tile, results, results_index);
}

/* the rows of a plane of terms (fmotion_scale1's) */
__kernel __attribute__((reqd_work_group_size(ROW_SUMS_WG, 1, 1)))
void fmotion_sad_terms(__global const float *diff, int w, int h, __global float *results,
                       uint results_index)
{
    __local float4 tile[ROW_SUMS_ROWS][ROW_SUMS_T4];
    fm_sad_rows(diff, diff, 0, w, h, tile, results, results_index);
}

/* motion_add_scale1 (motion.c vmaf_image_sad_c with vif_tools.c's
 * vif_scale_frame_bilinear_s): both blurred frames scaled to sw x sh =
 * round(w/2) x round(h/2) by bilinear interpolation, |prev - cur| of the
 * scaled planes into `diff` (column-major, sw x sh). libvmaf forms the
 * source position (d + 0.5) * ratio - 0.5 in double and rounds it once to
 * float: the product of a float and a small half-integer is exact in double,
 * so a fused multiply-add (one rounding) gives the same float. */
static inline float fm_mirror_f(float i, float left, float right)
{
    return i < left ? -i : i > right ? 2 * right - i : i;
}

static inline float fm_bilinear(__global const float *src, int w, int h, float x, float y)
{
    int x1 = (int)fm_mirror_f(floor(x), 0, (float)(w - 1));
    int x2 = (int)fm_mirror_f(ceil(x), 0, (float)(w - 1));
    int y1 = (int)fm_mirror_f(floor(y), 0, (float)(h - 1));
    int y2 = (int)fm_mirror_f(ceil(y), 0, (float)(h - 1));
    float dx = x - (float)x1, dy = y - (float)y1;
    /* column-major planes: (x, y) at x * h + y */
    float t = (1 - dy) * (1 - dx) * src[(size_t)x1 * h + y1];
    t = t + (1 - dy) * dx * src[(size_t)x2 * h + y1];
    t = t + dy * (1 - dx) * src[(size_t)x1 * h + y2];
    t = t + dy * dx * src[(size_t)x2 * h + y2];
    return t;
}

__kernel void fmotion_scale1(__global const float *prev, __global const float *cur, int w, int h,
                             int sw, int sh, float ratio_x, float ratio_y, __global float *diff)
{
    int sy = get_global_id(0), sx = get_global_id(1);
    if (sy >= sh || sx >= sw)
        return;
    float yy = fma((float)sy + 0.5f, ratio_y, -0.5f);
    float xx = fma((float)sx + 0.5f, ratio_x, -0.5f);
    float a = fm_bilinear(prev, w, h, xx, yy), b = fm_bilinear(cur, w, h, xx, yy);
    diff[(size_t)sx * sh + sy] = fabs(a - b);
}
