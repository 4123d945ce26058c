/*
 * Input conversions for pictures copied on the device from the caller's
 * OpenCL images (qgpu_submit_cl).
 *
 * shift_down_16: 16-bit words holding their sample in the top bits (FFmpeg's
 * p010, or yuv420p16 converted from 10-bit video, whose low bits repeat the
 * high ones) to the sample in the low bits, as qgpu_submit() uploads it:
 * word >> shift, in place, over the n words of one picture.
 */
__kernel void shift_down_16(__global ushort *samples, uint n, int shift)
{
    uint i = get_global_id(0);
    if (i < n)
        samples[i] = (ushort)(samples[i] >> shift);
}
