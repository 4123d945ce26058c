/*
 * The prelude of every kernel program (program.c builds it before the
 * program's own file): helpers several metrics share. OpenCL C 1.2.
 *
 * Edge mirroring. Filters read past the picture's edges; libvmaf's
 * extractors mirror the index back inside, with three different rules.
 * Each rule reflects once and then clamps: one reflection covers every tap
 * of every pixel inside the picture (the metrics check their minimum
 * sizes), and the clamp keeps the reads of work-items outside the picture,
 * whose results are never used, inside the buffer.
 */

/* The edge sample is not repeated: -1 -> 1, n -> n - 2 ("reflect 101"):
 * libvmaf's integer and float VIF, motion, SpEED. */
static inline int mirror_skip_edge(int i, int n)
{
    if (i < 0)
        i = -i;
    if (i >= n)
        i = 2 * (n - 1) - i;
    return clamp(i, 0, n - 1);
}

/* The edge sample is repeated: -1 -> 0, n -> n - 1: libvmaf's SSIM and
 * MS-SSIM filters. */
static inline int mirror_repeat_edge(int i, int n)
{
    if (i < 0)
        i = -1 - i;
    if (i >= n)
        i = 2 * n - 1 - i;
    return clamp(i, 0, n - 1);
}

/* Not repeated at the start, repeated at the end: -1 -> 1, n -> n - 1:
 * libvmaf's ADM (its DWT index tables and contrast masking) and ANSNR. */
static inline int mirror_skip_start_edge(int i, int n)
{
    if (i < 0)
        i = -i;
    if (i >= n)
        i = 2 * n - 1 - i;
    return clamp(i, 0, n - 1);
}

/* The bits of the double 2^e, -1022 <= e <= 1023 (a normal power of two):
 * m * as_double(POW2_DOUBLE_BITS(e)) for an integer-valued double m is
 * ldexp(m, e) exactly whenever that value is a normal double (one
 * multiply, no ldexp call). A macro, not a function: the prelude is built
 * into programs without cl_khr_fp64 too, where the type double may not
 * appear. Used by vif.cl (the gain's eps and limit) and adm.cl (the gain
 * limit). */
#define POW2_DOUBLE_BITS(e) ((ulong)(1023 + (e)) << 52)

/* libvmaf's left-to-right float row sums of two w x h term arrays stored
 * row by row (a[y * w + x]), for float_vif (float_motion uses the tile
 * sizes and row_sums_add): ROW_SUMS_ROWS rows (y0 ...) per work-group of
 * ROW_SUMS_WG work-items. All of them load tiles of ROW_SUMS_COLS columns
 * of the rows' terms into the kernel's two __local tiles (the next tile
 * while the current one is added; work-item lid loads row lid / 32,
 * columns lid % 32 + 32 k, so a warp reads 32 consecutive floats); work-item
 * r < ROW_SUMS_ROWS adds row r's terms left to right in float into
 * *sum_a, *sum_b (0 for the others). Every work-item of the group must
 * call it. A row's sum is a chain of dependent adds whatever the tiles:
 * tiles of 256 columns give each load round a chain long enough to cover
 * the next tile's loads, and 8 rows a group spread a picture's rows over
 * more work-groups. The tiles are kept row by row (ROW_SUMS_T4 float4 a
 * row, one of padding), so that the adding work-items read 4 columns a
 * load and have 32 columns loaded before the first of their adds (a load
 * per column, each waiting for the one before, kept a column at the
 * __local memory's latency). */
#define ROW_SUMS_ROWS 8
#define ROW_SUMS_COLS 256
#define ROW_SUMS_WG 256
#define ROW_SUMS_LOADS (ROW_SUMS_ROWS * ROW_SUMS_COLS / ROW_SUMS_WG)
#define ROW_SUMS_T4 (ROW_SUMS_COLS / 4 + 1) /* float4 a tile row */
#define ROW_SUMS_AHEAD 8                    /* float4 loads before the adds */

#define ROW_SUMS_LANES (ROW_SUMS_WG / ROW_SUMS_ROWS) /* 32 work-items load a row */
static inline void row_sums_fetch(float *va, float *vb, __global const float *a,
                                  __global const float *b, int lid, int x0, int y0, int w,
                                  int h)
{
    const int y = y0 + lid / ROW_SUMS_LANES, c = x0 + lid % ROW_SUMS_LANES;
    const int i = y < h ? y * w + c : 0;
#pragma unroll
    for (int k = 0; k < ROW_SUMS_LOADS; k++) {
        const bool inside = y < h && c + k * ROW_SUMS_LANES < w;
        va[k] = inside ? a[i + k * ROW_SUMS_LANES] : 0.0f;
        vb[k] = inside ? b[i + k * ROW_SUMS_LANES] : 0.0f;
    }
}

/* row r's columns [0, n) of a tile added to *sa, *sb, left to right */
static inline void row_sums_add(__local const float4 *ra, __local const float4 *rb, int n,
                                float *sa, float *sb)
{
    float a = *sa, b = *sb;
    int c4 = 0;
    for (; c4 + ROW_SUMS_AHEAD <= n / 4; c4 += ROW_SUMS_AHEAD) {
        float4 xa[ROW_SUMS_AHEAD], xb[ROW_SUMS_AHEAD];
#pragma unroll
        for (int k = 0; k < ROW_SUMS_AHEAD; k++) {
            xa[k] = ra[c4 + k];
            xb[k] = rb[c4 + k];
        }
#pragma unroll
        for (int k = 0; k < ROW_SUMS_AHEAD; k++) {
            a += xa[k].x;
            b += xb[k].x;
            a += xa[k].y;
            b += xb[k].y;
            a += xa[k].z;
            b += xb[k].z;
            a += xa[k].w;
            b += xb[k].w;
        }
    }
    __local const float *fa = (__local const float *)ra, *fb = (__local const float *)rb;
    for (int c = 4 * c4; c < n; c++) {
        a += fa[c];
        b += fb[c];
    }
    *sa = a;
    *sb = b;
}

/* the same for one row: columns [0, n) of r added to *s, left to right */
static inline void row_sum_add(__local const float4 *r, int n, float *s)
{
    float a = *s;
    int c4 = 0;
    for (; c4 + ROW_SUMS_AHEAD <= n / 4; c4 += ROW_SUMS_AHEAD) {
        float4 x[ROW_SUMS_AHEAD];
#pragma unroll
        for (int k = 0; k < ROW_SUMS_AHEAD; k++)
            x[k] = r[c4 + k];
#pragma unroll
        for (int k = 0; k < ROW_SUMS_AHEAD; k++) {
            a += x[k].x;
            a += x[k].y;
            a += x[k].z;
            a += x[k].w;
        }
    }
    __local const float *f = (__local const float *)r;
    for (int c = 4 * c4; c < n; c++)
        a += f[c];
    *s = a;
}

static inline void row_sums_pair(__global const float *a, __global const float *b, int w,
                                 int h, int y0, __local float4 (*ta)[ROW_SUMS_T4],
                                 __local float4 (*tb)[ROW_SUMS_T4], float *sum_a, float *sum_b)
{
    const int lid = get_local_id(0), r = lid / ROW_SUMS_LANES;
    __local float *fa = (__local float *)ta[r], *fb = (__local float *)tb[r];
    float va[ROW_SUMS_LOADS], vb[ROW_SUMS_LOADS];
    float sa = 0.0f, sb = 0.0f;

    row_sums_fetch(va, vb, a, b, lid, 0, y0, w, h);
    for (int x0 = 0; x0 < w; x0 += ROW_SUMS_COLS) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < ROW_SUMS_LOADS; k++) {
            const int c = lid % ROW_SUMS_LANES + k * ROW_SUMS_LANES;
            fa[c] = va[k];
            fb[c] = vb[k];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (x0 + ROW_SUMS_COLS < w)
            row_sums_fetch(va, vb, a, b, lid, x0 + ROW_SUMS_COLS, y0, w, h);
        if (lid < ROW_SUMS_ROWS)
            row_sums_add(ta[lid], tb[lid], min(ROW_SUMS_COLS, w - x0), &sa, &sb);
    }
    *sum_a = sa;
    *sum_b = sb;
}
