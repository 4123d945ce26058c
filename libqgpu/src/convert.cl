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
