/*
 * CAMBI (libvmaf's banding metric) on the device: every stage, including the
 * window histograms ("c-values") and the top-k pooling.
 *
 * Per picture (distorted, and the reference with full_ref):
 *   cambi_prep_mask input luma -> 10-bit at the working size (nearest
 *                   decimation through index maps) + 2x2 anti-dithering,
 *                   zero-derivative 7x7 count -> spatial mask (full size),
 *                   and scale 0's mode filter when scale 0 is the working
 *                   size; the mask is kept in the samples (UNMASKED_BIT)
 *   cambi_filter    per other scale: 2x decimation of the previous scale +
 *                   3x3 mode filter, the decimated sample's mask bit kept
 *   cambi_cvalues   (GPUs: one launch over the scales, 16x16 tiles then
 *                   8x8 for the coarse ones) or cambi_cvalues_slide (CPUs,
 *                   when its tile fits; scale by scale): window counts of
 *                   the 2*ND+1 bins around each pixel's value, c-value,
 *                   listed when it is not zero (cambi_cvalue_list), and
 *                   the first radix-select histogram (bits 30..16 of the
 *                   float)
 *   cambi_select    (pass 1) finds the 16-bit prefix of the K-th largest
 *   cambi_hist2     over the listed values: fixed-point sums of those
 *                   above the prefix, histogram of the low 16 bits of
 *                   those inside it
 *   cambi_select    (pass 2) exact K-th largest value T, how many copies
 *                   of T belong to the top K, and the sum of the values
 *                   inside the prefix above T
 * The host adds the partial sums, m * T, and weights the scales.
 *
 * Build options: -DND=<num_diffs> (1 << max_log_contrast).
 */

#ifndef ND
#define ND 4
#endif
#define NB (2 * ND + 1)          /* bins the c-value formula reads */
#define NW ((NB + 3) / 4)        /* 16-bit counters packed 4 per ulong */

#define NUM_SCALES 5
#define UNMASKED 0xFFFFu
/* The spatial mask travels with the scales' samples (10-bit values, at
 * most 1024): bit 15 set on a sample the mask leaves out. Scale s reads
 * the full-size mask at (x << s, y << s) (libvmaf), which is the mask of
 * the sample cambi_filter decimates into (x, y), so each scale takes it
 * from there, and the c-values read one array instead of two (the mask
 * was a byte array of its own, read at a stride on the coarse scales).
 * A sample with the bit, like UNMASKED outside the picture, lies above
 * every bin the counts read, so it counts in none. */
#define UNMASKED_BIT 0x8000
#define VALUE_BITS 0x7FFF

#define SEL_WG 256
/* histogram bins a cambi_select work-item loads before it adds them: the
 * launch is one work-group per scale, bound by the rounds of loads (16
 * at a time: 8 rounds in pass 1, 16 in pass 2), and its registers keep
 * no other group off the device */
#define SEL_LOADS 64

/* state[s * ST + field], per lane, for scale s of the picture being
 * scored (each picture's passes end before the next one's start): */
#define ST 8
#define ST_PREFIX 0   /* pass 1: bits 30..16 of the K-th largest c-value */
#define ST_RANK 1     /* pass 1: its rank among the values of that bin */
#define ST_ZERO 2     /* pass 1: the top K reaches the zeros (threshold 0) */
#define ST_T 3        /* pass 2: the threshold's bits */
#define ST_COUNT 4    /* the non-zero c-values listed (cambi_cvalue_list) */

/* Where bin b of a top-k histogram of nbins bins (32768 or 65536) lives.
 * cambi_select gives each of its SEL_WG work-items a chunk of nbins /
 * SEL_WG consecutive bins to add up and zero; stored as they are, the
 * work-items of a warp would read addresses a chunk apart (a memory
 * transaction each). Stored transposed, element e of chunk c at
 * e * SEL_WG + c, consecutive work-items read consecutive words. Only the
 * addresses change: every count is the same. */
static inline uint cambi_slot(uint b, uint nbins)
{
    const uint chunk = nbins / SEL_WG;
    return (b % chunk) * SEL_WG + b / chunk;
}

/* ---- 1. conversion to 10 bits, resize, anti-dithering ---- */

static inline int cambi_in_sample(__global const uchar *in, int bps, int idx)
{
    if (bps == 1)
        return in[idx];
    return in[2 * idx] | (in[2 * idx + 1] << 8);
}

static inline int cambi_to10(int v, int bitdepth)
{
    if (bitdepth <= 10)
        return v << (10 - bitdepth);
    int sh = bitdepth - 10;
    return (v + (1 << (sh - 1))) >> sh;
}

/* scaled: the maps are not the identity (enc/src size below the
 * input's); without it the sample is read without them (one dependent
 * load fewer) */
static inline int cambi_conv(__global const uchar *in, int bps, int bitdepth, int in_pitch,
                             __global const int *mx, __global const int *my, int scaled,
                             int x, int y)
{
    const int idx = scaled ? my[y] * in_pitch + mx[x] : y * in_pitch + x;
    return cambi_to10(cambi_in_sample(in, bps, idx), bitdepth);
}

/* ---- 2. spatial mask (and, at full size, scale 0's mode filter) ---- */

#define MT 32                    /* tile of outputs */
#define MG 16                    /* work-items per side (256) */
#define MR (MT + 6)              /* zero flags: tile + 3 each side */
#define MP (MT + 7)              /* working samples: the flags' + 1 right and below */
#define MQ (MP + 1)              /* converted samples: + 1 more for the anti-dithering */
#define ZS 44                    /* row stride of the flags (11 words: odd, below) */
#define R7S 36                   /* row stride of the 7-wide sums (9 words) */
#define MRUN 10                  /* rows of a work-item's column run (passes 2-3) */
#define MOUT 4                   /* output rows of a work-item (pass 5) */

static inline int cambi_mode3(int a, int b, int c)
{
    if (a == b || a == c)
        return a;
    if (b == c)
        return b;
    return min(min(a, b), c);
}

/* libvmaf's 3x3 mode filter at one output from the centre column (up, mid,
 * down) and the horizontal modes of its three rows: the first and last
 * rows are not filtered, the first and last columns only vertically. */
static inline int cambi_mode_pick(int row_edge, int col_edge, int up, int mid, int down,
                                  int hup, int hmid, int hdown)
{
    if (row_edge)
        return mid;
    if (col_edge)
        return cambi_mode3(up, mid, down);
    return cambi_mode3(hup, hmid, hdown);
}

/* One launch for the working picture's first three steps (three launches
 * before, the working picture stored and read back between them): each
 * group of 16 x 16 work-items takes 32 x 32 outputs, converts the
 * (32 + 8)^2 input samples they need into __local memory (libvmaf's
 * conversion to 10 bits, nearest decimation through the index maps),
 * anti-dithers (32 + 7)^2 of them there (2x2 averages), then writes
 *   - the spatial mask: zero-derivative flags, 7 x 7 count > threshold,
 *     as UNMASKED_BIT in the samples written below;
 *   - with filter0 (scale 0 is the working size: no high-res speed-up),
 *     scale 0, the 3x3 separable mode of the working picture (first and
 *     last rows unfiltered, first and last columns vertical only), at
 *     dst_off; otherwise the working picture itself at 0, which
 *     cambi_filter decimates into scale 0.
 * Each pass but the conversion gives a work-item a run of outputs, so that
 * the samples its neighbouring outputs share are read once: runs down a
 * column for the anti-dithering and the flags (the lanes of a warp on
 * neighbouring columns of one row), runs along a row for the 7-wide sums
 * (the lanes on neighbouring rows, whose strides ZS and R7S are an odd
 * number of words: every lane in its own bank), and for the outputs 4
 * rows of one column, the 7-tall sums and the horizontal modes slid down
 * it. The samples outside the picture are never used as values (the flags
 * and the filter test the picture's edges first). Integers throughout. */
__kernel __attribute__((reqd_work_group_size(MG, MG, 1)))
void cambi_prep_mask(__global const uchar *in_base, int in_off, int bps, int bitdepth,
                     int in_pitch,
                     __global const int *maps, /* mx[w] then my[h] */
                     int scaled, int w, int h, int anti_dither, int threshold, int filter0,
                     int dst_off, __global ushort *img)
{
    __local ushort raw[MQ * MQ];
    __local ushort pic[MP * MP];
    __local uchar zero[MR * ZS];
    __local uchar rows7[MR * R7S];
    __global const uchar *in = in_base + in_off;
    __global const int *mx = maps, *my = maps + w;
    const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * MG + lx;
    const int gx0 = get_group_id(0) * MT, gy0 = get_group_id(1) * MT;
    const int x0 = gx0 - 3, y0 = gy0 - 3;

    /* 1. the converted samples, one more right and below for the
     * anti-dithering (each converted once, not up to four times) */
    for (int ty = ly; ty < MQ; ty += MG) {
        const int y = y0 + ty;
        for (int tx = lx; tx < MQ; tx += MG) {
            const int x = x0 + tx;
            int p = 0;
            if (x >= 0 && x < w && y >= 0 && y < h)
                p = cambi_conv(in, bps, bitdepth, in_pitch, mx, my, scaled, x, y);
            raw[ty * MQ + tx] = (ushort)p;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 2. anti-dithering, MRUN rows of a column per work-item: the samples
     * of the row below are the next row's own */
    if (lid < MP * ((MP + MRUN - 1) / MRUN)) {
        const int tx = lid % MP, r0 = lid / MP * MRUN, r1 = min(r0 + MRUN, MP);
        const int x = x0 + tx, right = x + 1 < w;
        int a = raw[r0 * MQ + tx], b = raw[r0 * MQ + tx + 1];
        for (int ty = r0; ty < r1; ty++) {
            const int c = raw[(ty + 1) * MQ + tx], d = raw[(ty + 1) * MQ + tx + 1];
            int p = a;
            if (anti_dither) {
                /* libvmaf averages in place, forward; every average reads
                 * only not-yet-written right/lower neighbours, i.e.
                 * original values */
                const int down = y0 + ty + 1 < h;
                if (right && down)
                    p = (a + b + c + d) >> 2;
                else if (down)
                    p = (a + c) >> 1;
                else if (right)
                    p = (a + b) >> 1;
            }
            pic[ty * MP + tx] = (ushort)p;
            a = c;
            b = d;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 3. zero-derivative flags, MRUN rows of a column per work-item */
    if (lid < MR * ((MR + MRUN - 1) / MRUN)) {
        const int tx = lid % MR, r0 = lid / MR * MRUN, r1 = min(r0 + MRUN, MR);
        const int x = x0 + tx, xin = x >= 0 && x < w, last_x = x == w - 1;
        int p = pic[r0 * MP + tx];
        for (int ty = r0; ty < r1; ty++) {
            const int y = y0 + ty;
            const int below = pic[(ty + 1) * MP + tx], right = pic[ty * MP + tx + 1];
            uchar z = 0;
            if (xin && y >= 0 && y < h)
                z = (uchar)((last_x || p == right) && (y == h - 1 || p == below));
            zero[ty * ZS + tx] = z;
            p = below;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 4. 7-wide sums of the flag rows, 8 outputs of a row per work-item:
     * the first summed, the next slid */
    if (lid < MR * (MT / 8)) {
        const int r = lid % MR, c0 = lid / MR * 8;
        __local const uchar *zr = zero + r * ZS + c0;
        __local uchar *out = rows7 + r * R7S + c0;
        int n = 0;
        for (int dx = 0; dx < 7; dx++)
            n += zr[dx];
        out[0] = (uchar)n;
        for (int c = 1; c < 8; c++) {
            n += zr[c + 6] - zr[c - 1];
            out[c] = (uchar)n;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 5. the outputs (ox, oy0 .. oy0 + MOUT - 1) of the tile: the 7-tall
     * sums slid down the column, the horizontal modes of the rows around
     * each output computed once */
    const int ox = lid % MT, oy0 = lid / MT * MOUT, x = gx0 + ox;
    if (x >= w)
        return;
    const int cx = ox + 3; /* the output (ox, oy)'s sample is pic (cx, oy + 3) */
    int n = 0;
    for (int dy = 0; dy < 7; dy++)
        n += rows7[(oy0 + dy) * R7S + ox];
    /* rows oy0 + 2 + j of pic: the centre column and the horizontal modes */
    int col[MOUT + 2], hm[MOUT + 2];
#pragma unroll
    for (int j = 0; j < MOUT + 2; j++) {
        __local const ushort *pr = pic + (oy0 + 2 + j) * MP + cx;
        col[j] = pr[0];
        hm[j] = cambi_mode3(pr[-1], pr[0], pr[1]);
    }
    const int col_edge = x == 0 || x == w - 1;
#pragma unroll
    for (int k = 0; k < MOUT; k++) {
        const int y = gy0 + oy0 + k;
        if (k > 0)
            n += rows7[(oy0 + k + 6) * R7S + ox] - rows7[(oy0 + k - 1) * R7S + ox];
        if (y >= h)
            break;
        const int flag = n > threshold ? 0 : UNMASKED_BIT;
        if (!filter0) {
            img[y * w + x] = (ushort)(col[k + 1] | flag);
            continue;
        }
        const int v = cambi_mode_pick(y == 0 || y == h - 1, col_edge, col[k], col[k + 1],
                                      col[k + 2], hm[k], hm[k + 1], hm[k + 2]);
        img[dst_off + y * w + x] = (ushort)(v | flag);
    }
}

/* ---- 3. decimation + mode filter ---- */

/* One output of a scale: D(x, y) = src[(y * f) * src_w + x * f] without
 * its mask bit; out = 3x3 separable mode of D (horizontal first; first/last
 * column and first/last row unfiltered), with the mask bit of src's sample
 * at (x f, y f). (x, y) inside the scale's w x h. */
static inline int cambi_filter_at(__global const ushort *src, int src_w, int f, int x, int y,
                                  int w, int h)
{
#define D(xx, yy) ((int)src[(yy) * f * src_w + (xx) * f] & VALUE_BITS)
    const int row_edge = y == 0 || y == h - 1, col_edge = x == 0 || x == w - 1;
    const int centre = src[y * f * src_w + x * f];
    int v = centre & VALUE_BITS;
    if (!row_edge) {
        const int up = D(x, y - 1), down = D(x, y + 1);
        int hu = 0, hc = 0, hd = 0;
        if (!col_edge) {
            hu = cambi_mode3(D(x - 1, y - 1), up, D(x + 1, y - 1));
            hc = cambi_mode3(D(x - 1, y), v, D(x + 1, y));
            hd = cambi_mode3(D(x - 1, y + 1), down, D(x + 1, y + 1));
        }
        v = cambi_mode_pick(0, col_edge, up, v, down, hu, hc, hd);
    }
#undef D
    return v | (centre & UNMASKED_BIT);
}

/* Scale s (w x h at dst_off) from the previous one (src_off, src_w wide,
 * decimated by f), and, when w2 > 0, scale s + 1 too (w2 x h2 at dst2_off,
 * decimated by 2), from scale s's values computed again where it reads
 * them (up to 9 a work-item, each from 9 samples): the last two scales are
 * small, so one launch takes both (four filter launches a picture at
 * 1080p in place of five with the working picture's filter). The grid is
 * scale s's, which is at least scale s + 1's size. */
__kernel void cambi_filter(__global const ushort *src_base, int src_off, int src_w, int f,
                           __global ushort *dst_base, int dst_off, int w, int h, int dst2_off,
                           int w2, int h2)
{
    __global const ushort *src = src_base + src_off;
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < w && y < h)
        dst_base[dst_off + y * w + x] = (ushort)cambi_filter_at(src, src_w, f, x, y, w, h);
    if (x >= w2 || y >= h2)
        return;
#define S(xx, yy) cambi_filter_at(src, src_w, f, 2 * (xx), 2 * (yy), w, h)
#define D(xx, yy) (S(xx, yy) & VALUE_BITS)
    const int row_edge = y == 0 || y == h2 - 1, col_edge = x == 0 || x == w2 - 1;
    const int centre = S(x, y);
    int v = centre & VALUE_BITS;
    if (!row_edge) {
        const int up = D(x, y - 1), down = D(x, y + 1);
        int hu = 0, hc = 0, hd = 0;
        if (!col_edge) {
            hu = cambi_mode3(D(x - 1, y - 1), up, D(x + 1, y - 1));
            hc = cambi_mode3(D(x - 1, y), v, D(x + 1, y));
            hd = cambi_mode3(D(x - 1, y + 1), down, D(x + 1, y + 1));
        }
        v = cambi_mode_pick(0, col_edge, up, v, down, hu, hc, hd);
    }
#undef D
#undef S
    dst_base[dst2_off + y * w2 + x] = (ushort)(v | (centre & UNMASKED_BIT));
}

/* ---- 4. c-values ---- */

#define CV_WG 256                /* work-items of a c-value group */

/* params: tvi[0..31] (highest 10-bit value where a step of d+1 is visible),
 * weights[32..63] (contrast weights).
 *
 * Few pixels need a window (masked, and passing a visibility test), and a
 * launch lasted as long as one work-item's loop over a whole window
 * (33 x 33 at 1080p), the other work-items of its group idle. So the
 * group lists the pixels that need one, and splits the group into teams,
 * one per listed pixel (per run of at most CV_RL same-valued listed
 * pixels along a row, below), as large as the list allows (a power of two, at
 * most 32): lane l of a team counts window rows l, l + t, ..; the lanes'
 * packed counts are added through local memory. The counts are integers:
 * no value depends on the split.
 *
 * A group of CV_WG work-items takes a tile of ct x ct pixels: ct = 16
 * for the fine scales, or ct = 8 (64 pixels, so teams of at least 4
 * work-items) for the coarse scales, in one launch (cambi_cvalues). The window does not shrink
 * with the scale, so a coarse scale's launch has few groups, each as long
 * as a whole window counted by one work-item when all its 256 pixels need
 * one; with 8 x 8 tiles it has four times the groups, each a quarter as
 * long. The group is one-dimensional: work-item lid is (lid % ct, lid /
 * ct) of the tile's work-item grid, whatever ct. */
#if NW <= 4
#define CV_TEAM_MAX 32
#else
#define CV_TEAM_MAX 1   /* max_log_contrast > 2: the teams' counters would not fit */
#endif

/* Pixels a run (cambi_cvalues_tile) takes at most: 1 counts every listed
 * pixel's window on its own (max_log_contrast > 2). On the H200 (1080p,
 * one lane) 2 took cambi_cvalues from 0.0663 to 0.0605 ms, 4 to 0.0640
 * (64 registers in place of 48: 4 groups per SM), 8 to 0.124 (118) */
#ifndef CV_RL
#if NB <= 9
#define CV_RL 2
#else
#define CV_RL 1
#endif
#endif

/* A window's counts: bin b (0 .. 2 ND) in 16-bit field b & 3 of acc[b >> 2]
 * (integers: however they are counted, the counts are the same). */
#if NB <= 9
/* max_log_contrast <= 2: the samples are counted first in 7-bit fields
 * of one ulong, bin b at bit 7 b (127 samples cannot carry a field into
 * the next), added into acc every 127 samples at most (whole rows where
 * a row is shorter): one shift and one 64-bit addition a sample in
 * place of the 8-bit fields' select and addition per counter word.
 * Samples outside the bins are counted too, in field NB (the bin index
 * clamped to NB, no test and select a sample), which is never read: with
 * NB = 9 that field is bit 63 alone, whose carries leave the word. */
static inline void cambi_count_rows(__local const ushort *tile, int rw, int first, int step,
                                    int n, int v, ulong acc[NW])
{
    const int vlo = v - ND, sh0 = -7 * vlo;
    const int per = max(1, 127 / n) * step;
    for (int dy0 = first; dy0 < n; dy0 += per) {
        const int dy1 = min(n, dy0 + per);
        for (int dx0 = 0; dx0 < n; dx0 += 127) {
            const int dx1 = min(n, dx0 + 127);
            ulong rc = 0;
            for (int dy = dy0; dy < dy1; dy += step) {
                __local const ushort *row = tile + dy * rw;
                for (int dx = dx0; dx < dx1; dx++) {
                    /* 7 (sample - vlo) clamped to 7 NB: the field's bit
                     * (one multiply-add and a min). Below vlo the
                     * difference is at least -(1023 + ND), so 7 times it
                     * is a huge unsigned number, clamped like the others */
                    uint sh = min((uint)(7 * (int)row[dx] + sh0), (uint)(7 * NB));
                    rc += (ulong)1 << sh;
                }
            }
#pragma unroll
            for (int b = 0; b < NB; b++)
                acc[b >> 2] += ((rc >> (7 * b)) & 0x7F) << ((b & 3) * 16);
        }
    }
}

/* Runs (cambi_cvalues_tile): pixel j of a run of same-valued pixels
 * along a row has the window of pixel 0 moved j columns right. For
 * j = 1 .. len - 1 this adds to acc[j] the counts of the column entering
 * (j + n - 1) less those of the column leaving (j - 1), over the
 * work-item's rows first, first + step, ..; acc[0] holds pixel 0's own
 * counts (cambi_count_rows), and the prefix sums over j give each pixel's.
 * The 16-bit fields of a difference may wrap, but every sum ends in
 * [0, 65535] per field, and packed integers add and subtract exactly
 * modulo 2^64, so the counts are exact. */
static inline void cambi_slide_cols(__local const ushort *tile, int rw, int first, int step,
                                    int n, int v, int len, ulong acc[CV_RL][NW])
{
    const int sh0 = -7 * (v - ND);
    for (int dy0 = first; dy0 < n; dy0 += 127 * step) {
        const int dy1 = min(n, dy0 + 127 * step);
        ulong in[CV_RL], out[CV_RL];
#pragma unroll
        for (int j = 0; j < CV_RL; j++)
            in[j] = out[j] = 0;
        for (int dy = dy0; dy < dy1; dy += step) {
            __local const ushort *row = tile + dy * rw;
#pragma unroll
            for (int j = 1; j < CV_RL; j++) {
                if (j < len) {
                    in[j] += (ulong)1 << min((uint)(7 * (int)row[j + n - 1] + sh0), (uint)(7 * NB));
                    out[j] += (ulong)1 << min((uint)(7 * (int)row[j - 1] + sh0), (uint)(7 * NB));
                }
            }
        }
#pragma unroll
        for (int j = 1; j < CV_RL; j++) {
#pragma unroll
            for (int b = 0; b < NB; b++)
                acc[j][b >> 2] += (((in[j] >> (7 * b)) & 0x7F) - ((out[j] >> (7 * b)) & 0x7F))
                                  << ((b & 3) * 16);
        }
    }
}
#else
/* max_log_contrast > 2: each row's samples are counted first in 8-bit
 * fields of 32-bit words (a row of at most 255 samples cannot carry a
 * field into the next), added into acc once per row: the 64-bit selects
 * and additions per sample were most of the count's instructions. */
static inline ulong cambi_widen8(uint c)
{
    return (ulong)(c & 0xFFu) | ((ulong)((c >> 8) & 0xFFu) << 16) |
           ((ulong)((c >> 16) & 0xFFu) << 32) | ((ulong)(c >> 24) << 48);
}

static inline void cambi_count_rows(__local const ushort *tile, int rw, int first, int step,
                                    int n, int v, ulong acc[NW])
{
    for (int dy = first; dy < n; dy += step) {
        __local const ushort *row = tile + dy * rw;
        for (int dx0 = 0; dx0 < n; dx0 += 255) {
            const int dx1 = min(n, dx0 + 255);
            uint rc[NW];
#pragma unroll
            for (int k = 0; k < NW; k++)
                rc[k] = 0;
            for (int dx = dx0; dx < dx1; dx++) {
                uint b = (uint)((int)row[dx] - v + ND);
                if (b <= 2 * ND) {
                    uint inc = 1u << ((b & 3) * 8);
                    uint sel = b >> 2;
#pragma unroll
                    for (int k = 0; k < NW; k++)
                        rc[k] += sel == (uint)k ? inc : 0u;
                }
            }
#pragma unroll
            for (int k = 0; k < NW; k++)
                acc[k] += cambi_widen8(rc[k]);
        }
    }
}
#endif

/* A pixel's c-value from its window's counts (bin b in 16-bit field
 * b & 3 of acc[b >> 2]) */
static inline float cambi_cvalue(const ulong acc[NW], int pv, __constant int *params, int vlt)
{
    float best = 0.0f;
#define CNT(i) ((int)((acc[(i) >> 2] >> (((i) & 3) * 16)) & 0xFFFF))
    int p0 = CNT(ND);
#pragma unroll
    for (int d = 0; d < ND; d++) {
        if (pv <= params[d] && pv + ND + d + 1 > vlt) {
            int p1 = CNT(ND + d + 1), p2 = CNT(ND - d - 1);
            int p = p1 > p2 ? p1 : p2;
            /* libvmaf: (float)(weight * p0 * p) / (p + p0) */
            float val = (float)(params[32 + d] * p0 * p) / (float)(p + p0);
            best = fmax(best, val);
        }
    }
#undef CNT
    return best;
}

/* Only the non-zero c-values are kept: a scale's are listed in its
 * region of cval (as large as the scale), in no particular order, their
 * number in *count (state ST_COUNT). The zeros add nothing to the top-k
 * sums and are not counted in the histograms, so no pass needs them (the
 * whole picture's c-values, mostly zeros, were written and then read
 * twice, by cambi_hist2 and a summing kernel). The top-k passes only
 * count and add, integers, so the order does not matter.
 * A group appends its values with one global atomic: work-item lid's
 * c[0 .. CV_RL - 1] (zeros skipped) at its place after the group's
 * earlier ones (*nput, 0 before the caller's last barrier). Each value
 * is also counted in the first top-k histogram (bits 30..16 of the
 * float). Every work-item of the group calls it (barriers inside). */
static inline void cambi_cvalue_list(const float c[CV_RL], int lid, __local int *nput,
                                     __local int *base, __global float *list,
                                     __global uint *count, __global uint *hist1)
{
    int k = 0;
#pragma unroll
    for (int j = 0; j < CV_RL; j++)
        k += c[j] > 0.0f;
    const int off = k ? atomic_add(nput, k) : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        const int total = *nput;
        *base = total ? (int)atomic_add(count, (uint)total) : 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int i = *base + off;
#pragma unroll
    for (int j = 0; j < CV_RL; j++) {
        if (c[j] > 0.0f) {
            list[i++] = c[j];
            atomic_inc(&hist1[cambi_slot(as_uint(c[j]) >> 16, 32768)]);
        }
    }
}

/* samples of the window tile a work-item loads at once: CV_TY rows
 * (CV_WG / ct apart) by CV_TX columns (ct apart); at 1080p (48 x 48
 * samples for 16 x 16 tiles, 40 x 40 for 8 x 8) two rounds */
#define CV_TY 2
#define CV_TX 4

/* The c-values of one ct x ct tile (ct = 1 << ctl), listed (cambi_cvalue_list); the
 * group is (ct, CV_WG / ct) work-items. need, runs: CV_WG ints (runs
 * unused when CV_RL is 1), part: CV_WG * CV_RL * NW counters (unused
 * when CV_TEAM_MAX is 1), nput, pbase: the list's counters, all
 * __local. */
static inline void cambi_cvalues_tile(const int ctl, int tile_x, int tile_y,
                                      __global const ushort *img, int w, int h, int pad,
                                      __constant int *params, int vlt,
                                      __local ushort *tile, __local int *need,
                                      __local int *nneed, __local int *runs,
                                      __local int *nruns, __local ulong *part,
                                      __local int *nput, __local int *pbase,
                                      __global float *list, __global uint *listed,
                                      __global uint *hist1)
{
    const int ct = 1 << ctl, cm = ct - 1; /* tile side (16 or 8), mask */
    const int rows = CV_WG >> ctl; /* work-item rows of the group */
    const int lid = get_local_id(0), lx = lid & cm, ly = lid >> ctl;
    /* rows of rw samples stored rs apart, rs / 2 odd: the lanes of a team
     * read one column of different rows, in different banks */
    int rw = ct + 2 * pad, rs = rw | 2, n = 2 * pad + 1;
    int gx0 = tile_x * ct, gy0 = tile_y * ct;
    int x0 = gx0 - pad, y0 = gy0 - pad;
    /* work-item lid < ct * ct is pixel (lid % ct, lid / ct) of the tile:
     * only a masked centre whose value passes the visibility tests for
     * some d needs its window counted; the others' c-value is 0 (not
     * listed). Most tiles have none (1080p: ~9 in 10 of scales 0-1):
     * those end once they know it (every work-item of the group alike,
     * after the barrier that publishes the count). The pixel's sample
     * (value and mask bit) is loaded before the barrier that clears the
     * list */
    const int qx = lx, qy = ly, qgx = gx0 + qx, qgy = gy0 + qy;
    const int mine = lid < ct * ct && qgx < w && qgy < h;
    int qv = (int)UNMASKED;
    if (mine)
        qv = img[qgy * w + qgx];
    if (lid == 0) {
        *nneed = 0;
        *nput = 0;
#if CV_RL > 1
        *nruns = 0;
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (mine) {
        int any = 0;
#pragma unroll
        for (int d = 0; d < ND; d++)
            any |= qv <= params[d] && qv + ND + d + 1 > vlt;
        if (qv < UNMASKED_BIT && any)
            need[atomic_inc(nneed)] = lid;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int count = *nneed;
    if (count == 0)
        return; /* the whole group: count is the same for all */

    /* the tile by rows and columns (no division by rw per sample), each
     * sample read at a clamped position (so every load is valid) and
     * kept where the position is inside (its mask bit with it), CV_TY x
     * CV_TX samples a work-item loaded before any is stored: the compiler
     * stored each sample before it loaded the next, so a work-item
     * waited for its 9 (1080p) loads one after the other */
    for (int ty0 = ly; ty0 < rw; ty0 += CV_TY * rows) {
        for (int tx0 = lx; tx0 < rw; tx0 += CV_TX * ct) {
            ushort v[CV_TY][CV_TX];
#pragma unroll
            for (int i = 0; i < CV_TY; i++) {
                __global const ushort *irow = img + clamp(y0 + ty0 + i * rows, 0, h - 1) * w;
#pragma unroll
                for (int j = 0; j < CV_TX; j++)
                    v[i][j] = irow[clamp(x0 + tx0 + j * ct, 0, w - 1)];
            }
#pragma unroll
            for (int i = 0; i < CV_TY; i++) {
                const int ty = ty0 + i * rows, y = y0 + ty;
#pragma unroll
                for (int j = 0; j < CV_TX; j++) {
                    const int tx = tx0 + j * ct, x = x0 + tx;
                    if (ty < rw && tx < rw)
                        tile[ty * rs + tx] =
                            x >= 0 && x < w && y >= 0 && y < h ? v[i][j] : UNMASKED;
                }
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

#if CV_RL > 1
    /* a listed pixel whose left neighbour in the tile has its value (so is
     * listed too) is counted with that neighbour: the first pixel of each
     * such row run lists the run in pieces of at most CV_RL pixels, whose
     * windows are counted once and slid (cambi_slide_cols) */
    if (lid < count) {
        const int p = need[lid], rx = p & cm, ry = p >> ctl;
        __local const ushort *tr = tile + (ry + pad) * rs + pad;
        const int v = tr[rx];
        if (rx == 0 || tr[rx - 1] != v) {
            int len = 1;
            while (rx + len < ct && tr[rx + len] == v)
                len++;
            for (int k = 0; k < len; k += CV_RL)
                runs[atomic_inc(nruns)] = (p + k) | (min(CV_RL, len - k) << 16);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int items = *nruns;
#else
    const int items = count;
#endif

    int t = 1;
    while (t < CV_TEAM_MAX && items * t * 2 <= CV_WG)
        t *= 2;
    int team = lid / t, lane = lid - team * t;
    int px = 0, py = 0, pv = 0, len = 1;
    ulong acc[CV_RL][NW];
#pragma unroll
    for (int j = 0; j < CV_RL; j++)
#pragma unroll
        for (int k = 0; k < NW; k++)
            acc[j][k] = 0;
    if (team < items) {
#if CV_RL > 1
        const int r = runs[team], p = r & 0xFFFF;
        len = r >> 16;
#else
        const int p = need[team];
#endif
        px = p & cm;
        py = p >> ctl;
        pv = tile[(py + pad) * rs + px + pad];
        cambi_count_rows(tile + py * rs + px, rs, lane, t, n, pv, acc[0]);
#if CV_RL > 1
        if (len > 1)
            cambi_slide_cols(tile + py * rs + px, rs, lane, t, n, pv, len, acc);
#endif
    }
#if CV_TEAM_MAX > 1
    /* each pixel's counts over the work-item's rows (prefix sums of the
     * slides), then added over the team's lanes through local memory:
     * lane l adds word l (l + t, ..) of its team's lanes; a window's
     * counts fit the 16-bit fields, so the sums never carry from one
     * field into the next */
#pragma unroll
    for (int j = 1; j < CV_RL; j++)
#pragma unroll
        for (int k = 0; k < NW; k++)
            acc[j][k] += acc[j - 1][k];
    if (team < items)
#pragma unroll
        for (int j = 0; j < CV_RL; j++)
#pragma unroll
            for (int k = 0; k < NW; k++)
                part[(lid * CV_RL + j) * NW + k] = acc[j][k];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (team < items)
        for (int q = lane; q < CV_RL * NW; q += t) {
            ulong sum = 0;
            for (int i = 0; i < t; i++)
                sum += part[(team * t + i) * CV_RL * NW + q];
            part[team * t * CV_RL * NW + q] = sum;
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* lane j finishes pixel j of the run (j + t, .. when the team is
     * smaller than the run: at most CV_RL pixels a work-item) */
    float c[CV_RL];
#pragma unroll
    for (int i = 0; i < CV_RL; i++) {
        const int j = lane + i * t;
        c[i] = 0.0f;
        if (team < items && j < len) {
            ulong a[NW];
#pragma unroll
            for (int k = 0; k < NW; k++)
                a[k] = part[(team * t * CV_RL + j) * NW + k];
            c[i] = cambi_cvalue(a, pv, params, vlt);
        }
    }
#else
    float c[CV_RL];
    c[0] = team < items ? cambi_cvalue(acc[0], pv, params, vlt) : 0.0f;
#endif
    cambi_cvalue_list(c, lid, nput, pbase, list, listed, hist1);
}

/* The c-value launch covers every scale: first the groups of the scales
 * with 16 x 16 tiles, then those of the scales with 8 x 8 (two launches
 * before, five before those). geom[s * CG + field], per picture, for
 * scale s: */
#define CG 8
#define CG_W 0       /* size of the scale */
#define CG_H 1
#define CG_IMG 2     /* first sample of the scale in the pictures' buffer */
#define CG_CVAL 3    /* first c-value of the scale */
#define CG_G0 4      /* first group of the scale in the launch */
#define CG_TX 5      /* tiles per row of the scale */

/* The launch's group g: scale (the last of s0 .. s0 + ns - 1 whose first
 * group is <= g) and tile. */
static inline void cambi_cvalues_group(const int ctl, __global const ushort *img_base,
                                       int pad,
                                       __constant int *params, int vlt, __constant int *geom,
                                       int s0, int ns, __local ushort *tile, __local int *need,
                                       __local int *nneed, __local int *runs,
                                       __local int *nruns, __local ulong *part,
                                       __local int *nput, __local int *pbase,
                                       __global float *cval_base, __global uint *state,
                                       __global uint *hist_base)
{
    const int g = get_group_id(0);
    int s = s0;
    for (int i = s0 + 1; i < s0 + ns; i++)
        if (g >= geom[i * CG + CG_G0])
            s = i;
    __constant int *gm = geom + s * CG;
    const int t = g - gm[CG_G0], tx = gm[CG_TX];
    const int ty = t / tx;
    cambi_cvalues_tile(ctl, t - ty * tx, ty, img_base + gm[CG_IMG], gm[CG_W], gm[CG_H], pad,
                       params, vlt, tile, need, nneed, runs,
                       nruns, part, nput, pbase, cval_base + gm[CG_CVAL],
                       state + s * ST + ST_COUNT, hist_base + s * 32768);
}

/* the c-value kernel's other local arrays: the runs (first pixel | length
 * << 16) and their number; each work-item's packed counts per pixel of
 * its run, then a team's sums */
#if CV_RL > 1
#define CV_RUNS_LOCALS __local int runs[CV_WG]; __local int nruns;
#else
#define CV_RUNS_LOCALS __local int *runs = 0; __local int nruns;
#endif
#if CV_TEAM_MAX > 1
#define CV_LOCALS CV_RUNS_LOCALS __local ulong part[CV_WG * CV_RL * NW];
#else
#define CV_LOCALS CV_RUNS_LOCALS __local ulong *part = 0;
#endif
#if CV_RL > 1 && (NB > 9 || CV_TEAM_MAX == 1)
#error "runs need the 7-bit counts and the teams (max_log_contrast <= 2)"
#endif

/* One group a tile: groups 0 .. g8 - 1 take the 16 x 16 tiles of scales
 * 0 .. n16 - 1, the others the 8 x 8 tiles of scales n16 .. 4 (the coarse
 * scales, whose 16 x 16 tiles would be too few to fill the device). The
 * tile side is a run-time value (its log2, so the tile's divisions are
 * shifts): one copy of the code and its barriers, which every work-item
 * of a group reaches alike (two inlined copies, one a branch, gave wrong
 * counts on PoCL 3.1); the tile argument is sized for 16 x 16. */
__kernel __attribute__((reqd_work_group_size(CV_WG, 1, 1)))
void cambi_cvalues(__global const ushort *img_base, int pad, __constant int *params, int vlt,
                   __constant int *geom, int n16, int g8, __local ushort *tile,
                   __global float *cval_base, __global uint *state, __global uint *hist_base)
{
    __local int need[CV_WG];          /* local ids of the pixels that need a window */
    __local int nneed, nput, pbase;
    CV_LOCALS
    const int fine = (int)get_group_id(0) < g8;
    cambi_cvalues_group(fine ? 4 : 3, img_base, pad, params, vlt, geom, fine ? 0 : n16,
                        fine ? n16 : NUM_SCALES - n16, tile, need, &nneed, runs, &nruns, part,
                        &nput, &pbase, cval_base, state, hist_base);
}

/* ---- 4b. c-values with vertical sliding histograms ----
 *
 * Work-group: SX columns x SY rows of outputs, one work-item per column.
 * Each work-item keeps a histogram of its window in local memory over the
 * value range [lo, lo + R) the group needs (lo = smallest value of a centre
 * that needs a c-value, minus ND), and slides it down its column: 2 window
 * rows of updates per output instead of a full window of compares. A group
 * whose centres span more than R - 2 * ND - 1 codes counts each window
 * directly (the cambi_cvalues method) from the same local tile; a group with
 * no centre to compute writes zeros. */

#define SX 64
#define SY 32
#define R 128

static inline int cambi_needs(int v, __constant int *params, int vlt)
{
    int any = 0;
#pragma unroll
    for (int d = 0; d < ND; d++)
        any |= v <= params[d] && v + ND + d + 1 > vlt;
    return v < UNMASKED_BIT && any;
}

__kernel __attribute__((reqd_work_group_size(SX, 1, 1)))
void cambi_cvalues_slide(__global const ushort *img_base, int img_off, int w, int h,
                         int pad, __constant int *params, int vlt,
                         __local ushort *tile, __local ushort *hist,
                         __global float *cval_base, int cval_off,
                         __global uint *state, int scale,
                         __global uint *hist_base, int hist_off)
{
    __global const ushort *img = img_base + img_off;
    __global float *cval = cval_base + cval_off; /* the scale's list (cambi_cvalue_list) */
    __global uint *count = state + scale * ST + ST_COUNT;
    __global uint *hist1 = hist_base + hist_off;
    __local int vmin, vmax;
    int lx = get_local_id(0);
    int n = 2 * pad + 1;
    int rw = SX + 2 * pad, rh = SY + 2 * pad;
    int gx0 = get_group_id(0) * SX, gy0 = get_group_id(1) * SY;
    int x0 = gx0 - pad, y0 = gy0 - pad;
    if (lx == 0) {
        vmin = 0x7FFFFFFF;
        vmax = -1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lx; i < rw * rh; i += SX) {
        int x = x0 + i % rw, y = y0 + i / rw;
        ushort t = UNMASKED;
        if (x >= 0 && x < w && y >= 0 && y < h)
            t = img[y * w + x]; /* with its mask bit */
        tile[i] = t;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int x = gx0 + lx;
    int rows = min(SY, h - gy0);
    int lmin = 0x7FFFFFFF, lmax = -1;
    if (x < w) {
        for (int t = 0; t < rows; t++) {
            int v = tile[(t + pad) * rw + lx + pad];
            if (cambi_needs(v, params, vlt)) {
                lmin = min(lmin, v);
                lmax = max(lmax, v);
            }
        }
    }
    if (lmax >= 0) {
        atomic_min(&vmin, lmin);
        atomic_max(&vmax, lmax);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int gmin = vmin, gmax = vmax;
    int lo = gmin - ND;
    int slide = gmax >= 0 && gmax - gmin + 2 * ND + 1 <= R;

    if (slide) {
        for (int i = 0; i < R; i++)
            hist[i * SX + lx] = 0;
        for (int r = 0; r < n - 1; r++) {
            __local const ushort *row = tile + r * rw + lx;
            for (int c = 0; c < n; c++) {
                uint b = (uint)((int)row[c] - lo);
                if (b < R)
                    hist[b * SX + lx]++;
            }
        }
    }
    uint run_bin = 0, run_len = 0;
    for (int t = 0; t < rows; t++) {
        if (slide) {
            /* window of output row t: tile rows t .. t + 2 * pad */
            __local const ushort *add = tile + (t + n - 1) * rw + lx;
            for (int c = 0; c < n; c++) {
                uint b = (uint)((int)add[c] - lo);
                if (b < R)
                    hist[b * SX + lx]++;
            }
            if (t > 0) {
                __local const ushort *sub = tile + (t - 1) * rw + lx;
                for (int c = 0; c < n; c++) {
                    uint b = (uint)((int)sub[c] - lo);
                    if (b < R)
                        hist[b * SX + lx]--;
                }
            }
        }
        if (x >= w)
            continue;
        int v = tile[(t + pad) * rw + lx + pad];
        float best = 0.0f;
        if (gmax >= 0 && cambi_needs(v, params, vlt)) {
            int cnt[NB];
            if (slide) {
#pragma unroll
                for (int k = 0; k < NB; k++)
                    cnt[k] = hist[(v - ND + k - lo) * SX + lx];
            } else {
                ulong acc[NW];
#pragma unroll
                for (int k = 0; k < NW; k++)
                    acc[k] = 0;
                cambi_count_rows(tile + t * rw + lx, rw, 0, 1, n, v, acc);
#pragma unroll
                for (int k = 0; k < NB; k++)
                    cnt[k] = (int)((acc[k >> 2] >> ((k & 3) * 16)) & 0xFFFF);
            }
            int p0 = cnt[ND];
#pragma unroll
            for (int d = 0; d < ND; d++) {
                if (v <= params[d] && v + ND + d + 1 > vlt) {
                    int p1 = cnt[ND + d + 1], p2 = cnt[ND - d - 1];
                    int p = p1 > p2 ? p1 : p2;
                    float val = (float)(params[32 + d] * p0 * p) / (float)(p + p0);
                    best = fmax(best, val);
                }
            }
        }
        if (best > 0.0f)
            cval[atomic_inc(count)] = best;
        /* down a column, neighbouring c-values mostly share their bin:
         * count runs and add each run with one atomic */
        uint bin = best > 0.0f ? as_uint(best) >> 16 : 0;
        if (bin != run_bin) {
            if (run_len)
                atomic_add(&hist1[cambi_slot(run_bin, 32768)], run_len);
            run_bin = bin;
            run_len = 0;
        }
        run_len += bin != 0;
    }
    if (run_len)
        atomic_add(&hist1[cambi_slot(run_bin, 32768)], run_len);
}

/* ---- 5. top-k selection (radix select on the float bit patterns) ---- */

/* A non-zero c-value in fixed point: value * 2^24, exact (every non-zero
 * c-value is >= 0.5), so the sums are exact integers in any order. */
static inline long cambi_fixed(uint bits)
{
    return convert_long(as_float(bits) * 16777216.0f);
}

/* Inclusive prefix sums of a[0 .. SEL_WG - 1] in place; every work-item
 * of the group calls it (barriers inside). */
static inline void cambi_scan(__local uint *a, int lid)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < SEL_WG; d <<= 1) {
        uint v = lid >= d ? a[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        a[lid] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* The sum of a[0 .. n - 1] (n a power of two, the group's size) in a[0];
 * every work-item of the group calls it (barriers inside). */
static inline void cambi_reduce(__local long *a, int lid, int n)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int m = n / 2; m > 0; m >>= 1) {
        if (lid < m)
            a[lid] += a[lid + m];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* One work-group per scale (state: ST_* above).
 * Pass 1 reads the rank K from kvals[s] and finds the bin (bits 30..16)
 * of the K-th largest value; pass 2 finds, inside that bin, the
 * threshold T (its bits in out[s*2 + 0]) and the number m of copies of
 * it in the top K (out[s*2 + 1]), and adds the values of the bin above T
 * (count x value, fixed point: the bin gives every bit of its value) into
 * sums[s * (h2_groups + 1) + h2_groups], beside cambi_hist2's sums of the
 * values above the bin.
 * Work-item lid owns chunk SEL_WG - 1 - lid (bins counted from the top);
 * the chunk where the count from the top reaches K is then searched by
 * all work-items, a bin each. Every histogram bin is zeroed after use,
 * ready for the next frame, and pass 2 clears the list's count. */
__kernel __attribute__((reqd_work_group_size(SEL_WG, 1, 1)))
void cambi_select(__global uint *hist, int nbins, int pass,
                  __global const uint *kvals, int k_off, __global uint *state,
                  __global uint *out, int out_off, __global long *sums, int sums_off,
                  int h2_groups)
{
    __local uint sums_l[SEL_WG]; /* counts of the chunks from the top, then their prefix sums */
    __local uint run[SEL_WG];    /* the same for the bins of the crossing chunk */
    __local long above[SEL_WG];  /* pass 2: each work-item's values above T */
    __local int cross, cross_bin;
    int s = get_group_id(0), lid = get_local_id(0);
    __global uint *hs = hist + (size_t)s * nbins;
    __global uint *st = state + s * ST;
    const int chunk = nbins / SEL_WG;
    const int c = SEL_WG - 1 - lid; /* bins [c * chunk, (c + 1) * chunk), cambi_slot's layout */

    uint k = pass == 1 ? kvals[k_off + s] : st[ST_RANK];
    int skip = pass == 2 && st[ST_ZERO];
    /* pass 2: the bits 30..16 of every value counted */
    const uint pre = pass == 2 ? st[ST_PREFIX] << 16 : 0;

    /* the chunk's counts SEL_LOADS at a time, the loads issued before
     * they are added (chunk: 128 or 256, a multiple of SEL_LOADS);
     * integers, so the order of the additions does not matter. Pass 2
     * also adds the chunk's values (few bins are not zero) */
    uint sum = 0;
    long wsum = 0;
    /* with skip, cambi_hist2 counted nothing for this scale: its bins are
     * all zero, none is read */
    for (int e = 0; e < (skip ? 0 : chunk); e += SEL_LOADS) {
        uint v[SEL_LOADS];
#pragma unroll
        for (int k = 0; k < SEL_LOADS; k++)
            v[k] = hs[(e + k) * SEL_WG + c];
#pragma unroll
        for (int k = 0; k < SEL_LOADS; k++)
            sum += v[k];
        if (pass == 2) {
#pragma unroll
            for (int k = 0; k < SEL_LOADS; k++)
                if (v[k])
                    wsum += (long)v[k] * cambi_fixed(pre | (uint)(c * chunk + e + k));
        }
    }
    sums_l[lid] = sum;
    if (lid == 0) {
        cross = -1;
        cross_bin = -1;
    }
    cambi_scan(sums_l, lid);
    const uint total = sums_l[SEL_WG - 1];
    const uint before = lid ? sums_l[lid - 1] : 0;

    if (pass == 1 && lid == 0 && total < k) {
        /* fewer non-zero values than K: the rest of the top K are zeros */
        st[ST_PREFIX] = 0;
        st[ST_RANK] = 0;
        st[ST_ZERO] = 1;
        st[ST_T] = 0;
    }
    if (!skip && total >= k && before < k && before + sum >= k)
        cross = lid; /* at most one work-item: the chunks' ranges are disjoint */
    barrier(CLK_LOCAL_MEM_FENCE);
    /* every work-item takes part in the scan (its barriers), also when no
     * chunk crosses (x = -1: nothing is read or written) */
    const int x = cross;
    const int cc = SEL_WG - 1 - max(x, 0);
    const uint acc = x > 0 ? sums_l[x - 1] : 0; /* count above the crossing chunk */
    /* work-item lid: the crossing chunk's bin lid from its top */
    const uint mybin = (uint)(cc * chunk + chunk - 1 - lid);
    const uint r = x >= 0 && lid < chunk ? hs[(chunk - 1 - lid) * SEL_WG + cc] : 0;
    run[lid] = r;
    cambi_scan(run, lid);
    const uint incl = run[lid], excl = lid ? run[lid - 1] : 0;
    if (x >= 0 && lid < chunk && acc + excl < k && acc + incl >= k) {
        uint rem = k - (acc + excl);
        cross_bin = lid;
        if (pass == 1) {
            st[ST_PREFIX] = mybin;
            st[ST_RANK] = rem;
            st[ST_ZERO] = 0;
        } else {
            st[ST_T] = pre | mybin;
            out[out_off + s * 2 + 0] = pre | mybin;
            out[out_off + s * 2 + 1] = rem;
        }
    }
    if (pass == 2 && lid == 0 && (skip || total < k)) {
        st[ST_T] = 0;
        out[out_off + s * 2 + 0] = 0;
        out[out_off + s * 2 + 1] = 0;
    }
    /* the crossing chunk was read by every work-item, cross_bin written */
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (pass == 2) {
        /* the values above T: the chunks above the crossing one, and the
         * crossing chunk's bins above T's */
        long mine = 0;
        if (x >= 0) {
            if (lid < x)
                mine = wsum;
            if (lid < cross_bin && r)
                mine += (long)r * cambi_fixed(pre | mybin);
        }
        above[lid] = mine;
        cambi_reduce(above, lid, SEL_WG);
        if (lid == 0) {
            sums[sums_off + s * (h2_groups + 1) + h2_groups] = above[0];
            st[ST_COUNT] = 0; /* cambi_hist2 has read it: the next picture's list */
        }
    }
    /* a chunk whose count is 0 has only zero bins: nothing to clear (the
     * non-zero c-values fill a few of the 256 chunks) */
    for (int e = 0; e < (sum ? chunk : 0); e++)
        hs[e * SEL_WG + c] = 0;
}

/* Between the passes, over the non-zero c-values only (the lists of
 * cambi_cvalue_list; o1..o4: where scales 1..4 start in cval, scale 0 at
 * 0): a value whose bits 30..16 lie above the K-th largest's (ST_PREFIX;
 * every listed value when the top K reaches the zeros, whose prefix is
 * 0) is in the top K and is added in fixed point; a value inside that
 * bin is counted in the second histogram by its low 16 bits. Group gi of
 * the groups_per_scale groups of scale s writes its sum to
 * out[out_off + s * (groups_per_scale + 1) + gi] (cambi_select's pass 2
 * adds the bin's values above T at gi = groups_per_scale); the host adds
 * them as integers. Each work-item takes H2_RUN consecutive values, all
 * loaded before any is tested, and adds runs of equal bins with one
 * atomic (a group's values are listed together, and neighbouring
 * c-values are often equal). */
#define H2_RUN 8
#define H2_WG 256

__kernel __attribute__((reqd_work_group_size(H2_WG, 1, 1)))
void cambi_hist2(__global const float *cval, int o1, int o2, int o3, int o4,
                 int groups_per_scale, __global const uint *state, __global uint *hist2,
                 __global long *out, int out_off)
{
    __local long part[H2_WG];
    const int g = get_group_id(0), lid = get_local_id(0);
    const int s = g / groups_per_scale, gi = g - s * groups_per_scale;
    const int lo = s == 0 ? 0 : s == 1 ? o1 : s == 2 ? o2 : s == 3 ? o3 : o4;
    __global const uint *st = state + s * ST;
    const int n = (int)st[ST_COUNT];
    const uint prefix = st[ST_PREFIX];
    __global uint *h2 = hist2 + s * 65536;
    long acc = 0;
    int run_bin = -1;
    uint run_len = 0;
    for (int i0 = (gi * H2_WG + lid) * H2_RUN; i0 < n; i0 += groups_per_scale * H2_WG * H2_RUN) {
        uint b[H2_RUN];
#pragma unroll
        for (int k = 0; k < H2_RUN; k++)
            b[k] = i0 + k < n ? as_uint(cval[lo + i0 + k]) : 0u;
#pragma unroll
        for (int k = 0; k < H2_RUN; k++) {
            const uint hi = b[k] >> 16;
            if (hi > prefix)
                acc += cambi_fixed(b[k]);
            const int bin = b[k] != 0 && hi == prefix ? (int)(b[k] & 0xFFFF) : -1;
            if (bin != run_bin) {
                if (run_len)
                    atomic_add(&h2[cambi_slot((uint)run_bin, 65536)], run_len);
                run_bin = bin;
                run_len = 0;
            }
            run_len += bin >= 0;
        }
    }
    if (run_len)
        atomic_add(&h2[cambi_slot((uint)run_bin, 65536)], run_len);
    part[lid] = acc;
    cambi_reduce(part, lid, H2_WG);
    if (lid == 0)
        out[out_off + s * (groups_per_scale + 1) + gi] = part[0];
}
