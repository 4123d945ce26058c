/* vmaf_picture_alloc/unref: planes in one reference-counted buffer. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"

#define PLANE_ALIGN 64 /* stride and plane alignment, bytes */

struct VmafRef {
    atomic_int count;
    void *buffer;
};

VMAF_API int vmaf_picture_alloc(VmafPicture *pic, enum VmafPixelFormat pix_fmt, unsigned bpc,
                                unsigned w, unsigned h)
{
    const unsigned bytes = bpc > 8 ? 2 : 1;
    unsigned cw, ch;
    size_t offset[3], total = 0;
    unsigned char *buf;
    VmafRef *ref;

    if (!pic || !w || !h || bpc < 8 || bpc > 16 || w > 65536 || h > 65536)
        return -EINVAL;
    switch (pix_fmt) {
    case VMAF_PIX_FMT_YUV420P: cw = (w + 1) / 2; ch = (h + 1) / 2; break;
    case VMAF_PIX_FMT_YUV422P: cw = (w + 1) / 2; ch = h; break;
    case VMAF_PIX_FMT_YUV444P: cw = w; ch = h; break;
    case VMAF_PIX_FMT_YUV400P: cw = 0; ch = 0; break;
    default: return -EINVAL;
    }
    memset(pic, 0, sizeof(*pic));
    pic->pix_fmt = pix_fmt;
    pic->bpc = bpc;
    for (int p = 0; p < 3; p++) {
        pic->w[p] = p ? cw : w;
        pic->h[p] = p ? ch : h;
        pic->stride[p] = (ptrdiff_t)(((size_t)pic->w[p] * bytes + PLANE_ALIGN - 1) /
                                     PLANE_ALIGN * PLANE_ALIGN);
        offset[p] = total;
        total += (size_t)pic->stride[p] * pic->h[p];
    }
    ref = malloc(sizeof(*ref));
    buf = aligned_alloc(PLANE_ALIGN, total);
    if (!ref || !buf) {
        free(ref);
        free(buf);
        memset(pic, 0, sizeof(*pic));
        return -ENOMEM;
    }
    atomic_init(&ref->count, 1);
    ref->buffer = buf;
    for (int p = 0; p < 3; p++)
        pic->data[p] = pic->h[p] ? buf + offset[p] : NULL;
    pic->ref = ref;
    return 0;
}

VMAF_API int vmaf_picture_unref(VmafPicture *pic)
{
    if (!pic || !pic->ref)
        return -EINVAL;
    if (atomic_fetch_sub(&pic->ref->count, 1) == 1) {
        free(pic->ref->buffer);
        free(pic->ref);
    }
    memset(pic, 0, sizeof(*pic));
    return 0;
}
