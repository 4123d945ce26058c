/*
 * Input conversions done on the device, so only the input's own bytes cross
 * the bus.
 *
 * widen_8_to_16: 8-bit samples of both pictures (reference then distorted,
 * each `n` bytes, packed) to 16-bit samples shifted left by `shift`: 8-bit
 * video scored at 10 bits (shift 2), as libvmaf's 10-bit VMAF v1 goldens
 * were made. Planes are packed the same way in both layouts, so sample i of
 * the input is sample i of the output. get_global_id(1) picks the picture.
 */
__kernel void widen_8_to_16(__global const uchar *raw, __global ushort *ref,
                            __global ushort *dist, uint n, int shift)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    if (get_global_id(1) == 0)
        ref[i] = (ushort)((uint)raw[i] << shift);
    else
        dist[i] = (ushort)((uint)raw[n + i] << shift);
}

/*
 * split_chroma_8 / split_chroma_16: semi-planar chroma (NV12, P010) to two
 * planes. `pairs` holds n Cb Cr pairs from element pairs_offset; pair i
 * becomes sample i of the Cb plane (element cb_offset of `planes`) and of
 * the Cr plane (cr_offset). Rows are packed on both sides, so the index
 * maps straight through.
 */
__kernel void split_chroma_8(__global const uchar *pairs, uint pairs_offset,
                             __global uchar *planes, uint cb_offset, uint cr_offset, uint n)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    planes[cb_offset + i] = pairs[pairs_offset + 2 * i];
    planes[cr_offset + i] = pairs[pairs_offset + 2 * i + 1];
}

__kernel void split_chroma_16(__global const ushort *pairs, uint pairs_offset,
                              __global ushort *planes, uint cb_offset, uint cr_offset, uint n)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    planes[cb_offset + i] = pairs[pairs_offset + 2 * i];
    planes[cr_offset + i] = pairs[pairs_offset + 2 * i + 1];
}
