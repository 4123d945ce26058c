/* FNV-1a style over sample values, four interleaved lanes (for speed),
 * folded together per row. */
#include <string.h>

#include "framehash.h"

#define PRIME 0x100000001b3ULL

/* n samples, `step` samples apart, from a row of 8-bit or 16-bit words
 * (16-bit: the value is word >> shift). */
static uint64_t fold_row(uint64_t hash, const unsigned char *row, int n, int step, int wide,
                         int shift)
{
    uint64_t lane[4] = {hash, hash ^ 1, hash ^ 2, hash ^ 3};
    for (int x = 0; x < n; x++) {
        unsigned v;
        if (wide) {
            uint16_t w;
            memcpy(&w, row + 2 * (size_t)x * step, 2);
            v = (unsigned)(w >> shift);
        } else {
            v = row[(size_t)x * step];
        }
        lane[x & 3] = (lane[x & 3] ^ v) * PRIME;
    }
    for (int i = 0; i < 4; i++)
        hash = (hash ^ lane[i]) * PRIME;
    return hash;
}

uint64_t frame_hash(uint64_t hash, const QgpuPicture *pic)
{
    int semi = pic->layout == QGPU_LAYOUT_NV12, wide = pic->bitdepth > 8;
    int shift = semi && wide ? 16 - pic->bitdepth : 0;
    int ss_x = semi || pic->layout == QGPU_LAYOUT_420 || pic->layout == QGPU_LAYOUT_422;
    int ss_y = semi || pic->layout == QGPU_LAYOUT_420;
    int planes = pic->layout == QGPU_LAYOUT_400 ? 1 : 3;
    for (int p = 0; p < planes; p++) {
        int w = p && ss_x ? (pic->width + 1) / 2 : pic->width;
        int h = p && ss_y ? (pic->height + 1) / 2 : pic->height;
        const unsigned char *base = pic->data[semi && p ? 1 : p];
        ptrdiff_t stride = pic->stride[semi && p ? 1 : p];
        /* NV12: Cb at even, Cr at odd positions of plane 1 */
        size_t first = semi && p == 2 ? (wide ? 2 : 1) : 0;
        for (int y = 0; y < h; y++)
            hash = fold_row(hash, base + (ptrdiff_t)y * stride + first, w, semi && p ? 2 : 1,
                            wide, shift);
    }
    return hash;
}
