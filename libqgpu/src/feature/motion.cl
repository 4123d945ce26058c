/*
 * Integer motion SAD, bit-exact with libvmaf 3.2.0 (integer_motion.c, the
 * pipelined variant): blur(prev - cur) with the 5-tap filter
 * {3571, 16004, 26386, 16004, 3571} (integer_motion.h), vertical pass
 * (sum + 2^(bpc-1)) >> bpc, horizontal pass (sum + 32768) >> 16, both with
 * floor (arithmetic) shifts, borders mirrored without repeating the edge;
 * SAD = sum of |result|.
 *
 * One launch per frame. A work-group walks tiles of TW x TH pixels (60 x 40:
 * with the 2-pixel halo 64 columns, and 1080p / 2160p split into whole
 * tiles); each work-item owns one column of the tile and its halo and VR
 * rows of it, reads the rows of prev - cur it needs straight into registers,
 * filters them vertically there, and the work-group filters the results
 * horizontally from __local memory and sums (issue #21: 0.0605 -> 0.0455 ms
 * at 2160p on an H200 against staging prev - cur in __local memory first;
 * doc/metrics/motion.md). It also copies the current reference luma into
 * `store`, the feature's own buffer that the next frame reads as `prev`
 * (ping-pong buffers, so no work-group reads what another one writes). With
 * do_sad = 0 (first frame) it only copies. Each work-group writes one ulong
 * partial sum.
 *
 * motion_sad_legacy is the SAD of libvmaf before that rewrite (releases up
 * to v3.0.0 and git master until 2026, e.g. 2b2cf9c, the libvmaf in FFmpeg
 * 8.0 static builds; doc/metrics/motion.md): each reference frame is blurred
 * on its own, vertical pass (sum + 2^(bpc-1)) >> bpc, horizontal pass
 * (sum + 32768) >> 16, both on non-negative sums, borders mirrored without
 * repeating the edge at the top/left (-k -> k) but repeating it at the
 * bottom/right (n-1+k -> n-k: common.cl's mirror_skip_start_edge); the
 * blurred frame (16-bit) is kept, and the SAD is sum |blur(prev) - blur(cur)|.
 * Same tiles, staged in __local memory (not measured in the column form: it
 * is not in VMAF's default models); `store` then holds the blurred frame and
 * `prev` the previous blurred frame.
 * The two kernels share their tiles on purpose: they implement two
 * libvmaf versions' arithmetic (signed difference then blur, against blur
 * then unsigned difference, with other edge rules and types), and keeping
 * each one whole and readable beside its libvmaf version is the point;
 * `duplicates` pairs them for that reason.
 *
 * Build options: -DMOTION_IN8=1 for 8-bit samples (else 16-bit words),
 * -DMOTION_WG=<work-group size> (a power of two, 64 to 256: IW columns by
 * MOTION_WG / IW rows of work-items).
 */

#ifndef MOTION_WG
#define MOTION_WG 256
#endif
#ifndef MOTION_IN8
#define MOTION_IN8 1
#endif

#if MOTION_IN8
#define PIX uchar
#else
#define PIX ushort
#endif

#define TW 60
#define TH 40
#define R 2
#define IW (TW + 2 * R)
#define IH (TH + 2 * R)
/* motion_sad's work-item shape: IW columns by ROWS_WI rows of work-items,
 * each work-item filtering VR rows of its column */
#define ROWS_WI (MOTION_WG / IW)
#define VR (TH / ROWS_WI)

__constant int motion_taps[5] = {3571, 16004, 26386, 16004, 3571};

/* The work-group's sum of acc into results[partial_index + group]. */
static void write_group_sum(__local ulong *red, ulong acc, __global ulong *results,
                            int partial_index)
{
    const int lid = get_local_id(0);
    red[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* two barriers: 32 work-items each add MOTION_WG / 32 values (into the
     * first 32 places, which only they read), then work-item 0 those 32 */
    if (lid < 32) {
        ulong s = 0;
        for (int m = 0; m < MOTION_WG / 32; m++)
            s += red[lid + 32 * m];
        red[lid] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        ulong s = 0;
        for (int m = 0; m < 32; m++)
            s += red[m];
        results[partial_index + get_group_id(0)] = s;
    }
}

/* floor(a / 2^s) without relying on the sign behaviour of >> */
static inline long floor_shift(long a, int s)
{
    return a >= 0 ? a >> s : ~((~a) >> s);
}

/* The same on 32-bit values (8-bit samples' sums fit them) */
static inline int floor_shift32(int a, int s)
{
    return a >= 0 ? a >> s : ~((~a) >> s);
}

/*
 * Each work-item owns one column of the staged tile (IW = TW + 4 columns,
 * halo included) and VR consecutive rows of it: it reads the VR + 4 rows of
 * prev - cur it needs straight from global memory into registers, filters
 * them vertically there and puts the VR results into __local memory; after
 * one barrier the work-items of the TW inner columns filter horizontally.
 */
__kernel void motion_sad(__global const PIX *cur, int cur_offset, __global const PIX *prev,
                         __global PIX *store, int w, int h, int bpc, int do_sad,
                         __global ulong *results, int partial_index)
{
    __local int v[TH * IW];
    __local ulong red[MOTION_WG];

    const int lid = get_local_id(0);
    const int c = lid % IW, g = lid / IW; /* column, row group */
    const int tiles_x = (w + TW - 1) / TW, tiles_y = (h + TH - 1) / TH;
    const int ntiles = tiles_x * tiles_y;
    const int vrnd = 1 << (bpc - 1);
    ulong acc = 0;

    cur += cur_offset;
    for (int t = get_group_id(0); t < ntiles; t += get_num_groups(0)) {
        const int x0 = (t % tiles_x) * TW, y0 = (t / tiles_x) * TH;
        const int x = x0 - R + c, xm = mirror_skip_edge(x, w);
        const int ya = y0 + g * VR; /* this work-item's first row */
        const int own_col = c >= R && c < R + TW && x < w;
        int dv[VR + 2 * R];
        /* Rows ya - R .. ya + VR + R - 1 inside the picture (most
         * work-items; uniform across a row group) need no mirroring: the
         * first row's offset and 32-bit steps of w. The others are mirrored
         * row by row, with 32 x 32 -> 64-bit row offsets (the same rows:
         * mirroring maps [0, h) to itself). Each row mirrored with a
         * 64 x 64-bit multiply was most of the column's addressing. */
        const int rows_inside = ya >= R && ya + VR + R <= h;
        const size_t first = (size_t)(uint)(rows_inside ? ya - R : 0) * (uint)w + (uint)xm;

#pragma unroll
        for (int k = 0; k < VR + 2 * R; k++) {
            const int y = ya - R + k;
            const size_t o = rows_inside
                                 ? first + (uint)(k * w)
                                 : (size_t)(uint)mirror_skip_edge(y, h) * (uint)w + (uint)xm;
            const int cv = cur[o];
            dv[k] = do_sad ? (int)prev[o] - cv : 0;
            if (own_col && k >= R && k < R + VR && y < h)
                store[o] = (PIX)cv;
        }
        if (!do_sad)
            continue;

#pragma unroll
        for (int r = 0; r < VR; r++) {
#if MOTION_IN8
            /* 8-bit samples: |sum| <= 255 * 65536 < 2^24, 32-bit sums */
            int a = vrnd;
#pragma unroll
            for (int k = 0; k < 5; k++)
                a += motion_taps[k] * dv[r + k];
            v[(g * VR + r) * IW + c] = floor_shift32(a, bpc);
#else
            long a = 0;
#pragma unroll
            for (int k = 0; k < 5; k++)
                a += (long)motion_taps[k] * dv[r + k];
            v[(g * VR + r) * IW + c] = (int)floor_shift(a + vrnd, bpc);
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        if (c < TW && x0 + c < w) {
#pragma unroll
            for (int r = 0; r < VR; r++) {
                if (ya + r >= h)
                    continue;
                long a = 0;
#pragma unroll
                for (int k = 0; k < 5; k++)
                    a += (long)motion_taps[k] * v[(g * VR + r) * IW + c + k];
                long s = floor_shift(a + 32768, 16);
                acc += (ulong)(s < 0 ? -s : s);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    write_group_sum(red, acc, results, partial_index);
}

__kernel void motion_sad_legacy(__global const PIX *cur, int cur_offset,
                                __global const ushort *prev, __global ushort *store, int w,
                                int h, int bpc, int do_sad, __global ulong *results,
                                int partial_index)
{
    __local uint d[IH * IW];
    __local uint v[TH * IW];
    __local ulong red[MOTION_WG];

    const int lid = get_local_id(0);
    const int tiles_x = (w + TW - 1) / TW, tiles_y = (h + TH - 1) / TH;
    const int ntiles = tiles_x * tiles_y;
    const uint vrnd = 1u << (bpc - 1);
    ulong acc = 0;

    cur += cur_offset;
    for (int t = get_group_id(0); t < ntiles; t += get_num_groups(0)) {
        const int x0 = (t % tiles_x) * TW, y0 = (t / tiles_x) * TH;

        for (int i = lid; i < IH * IW; i += MOTION_WG) {
            int ry = i / IW, rx = i - ry * IW;
            int y = y0 - R + ry, x = x0 - R + rx;
            d[i] = cur[(size_t)mirror_skip_start_edge(y, h) * w +
                       mirror_skip_start_edge(x, w)];
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* vertical pass: at most 65535 * 65536, within 32 bits */
        for (int i = lid; i < TH * IW; i += MOTION_WG) {
            int ry = i / IW, rx = i - ry * IW;
            uint a = 0;
            for (int k = 0; k < 5; k++)
                a += (uint)motion_taps[k] * d[(ry + k) * IW + rx];
            v[i] = (a + vrnd) >> bpc;
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int i = lid; i < TH * TW; i += MOTION_WG) {
            int ry = i / TW, rx = i - ry * TW;
            int y = y0 + ry, x = x0 + rx;
            if (y >= h || x >= w)
                continue;
            ulong a = 0;
            for (int k = 0; k < 5; k++)
                a += (ulong)motion_taps[k] * v[ry * IW + rx + k];
            int b = (int)((a + 32768) >> 16);
            size_t o = (size_t)y * w + x;
            if (do_sad)
                acc += (ulong)abs(b - (int)prev[o]);
            store[o] = (ushort)b;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    write_group_sum(red, acc, results, partial_index);
}
