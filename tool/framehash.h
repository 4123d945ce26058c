/* A checksum of pictures' sample values (--decode-only --hash-frames), the
 * same for the same samples in any layout the decoder delivers (planar, or
 * NV12/P010 from a hardware decoder): for telling that two decoders give
 * identical pictures. */
#ifndef QGPU_TOOL_FRAMEHASH_H
#define QGPU_TOOL_FRAMEHASH_H

#include <stdint.h>

#include "qgpu/qgpu.h"

/* Folds the picture's samples (luma, then Cb, then Cr, row by row, as
 * values) into hash; start from FRAME_HASH_START. */
#define FRAME_HASH_START 0xcbf29ce484222325ULL
uint64_t frame_hash(uint64_t hash, const QgpuPicture *pic);

#endif
