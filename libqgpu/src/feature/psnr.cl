/*
 * PSNR: sum of squared differences per plane, as libvmaf's integer `psnr`
 * extractor computes it (exact 64-bit integer sums).
 *
 * One launch covers every plane: work-group g handles PSNR_ROWS rows of the
 * plane its index falls in (groups [0, g1) luma, [g1, g2) Cb, [g2, ..) Cr)
 * and writes one 64-bit partial sum into the slot's results (at the
 * feature's reserved index); the host adds them per plane.
 */
#define PSNR_WG 256
#define PSNR_ROWS 4

static inline uint load_sample(__global const uchar *base, ulong index, int bps)
{
    if (bps == 1)
        return base[index];
    return ((__global const ushort *)base)[index];
}

__kernel __attribute__((reqd_work_group_size(PSNR_WG, 1, 1)))
void psnr_sse(__global const uchar *ref, __global const uchar *dist, int bps,
              int w0, int h0, int pitch0, uint off0,
              int w1, int h1, int pitch1, uint off1,
              int w2, int h2, int pitch2, uint off2,
              int g1, int g2, __global ulong *results, uint results_index)
{
    __local ulong sums[PSNR_WG];
    int group = get_group_id(0);
    int lid = get_local_id(0);
    int w, h, pitch, first_group;
    uint off;

    if (group < g1) {
        w = w0; h = h0; pitch = pitch0; off = off0; first_group = 0;
    } else if (group < g2) {
        w = w1; h = h1; pitch = pitch1; off = off1; first_group = g1;
    } else {
        w = w2; h = h2; pitch = pitch2; off = off2; first_group = g2;
    }

    ulong sse = 0;
    int y0 = (group - first_group) * PSNR_ROWS;
    for (int y = y0; y < min(y0 + PSNR_ROWS, h); y++) {
        ulong row = off + (ulong)y * pitch;
        for (int x = lid; x < w; x += PSNR_WG) {
            int e = (int)load_sample(ref, row + x, bps) - (int)load_sample(dist, row + x, bps);
            sse += (ulong)((long)e * e);
        }
    }
    sums[lid] = sse;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = PSNR_WG / 2; step > 0; step >>= 1) {
        if (lid < step)
            sums[lid] += sums[lid + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        results[results_index + group] = sums[0];
}
