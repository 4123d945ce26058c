/*
 * libvmaf-qgpu: pictures of the libvmaf 3.x API (same layout as libvmaf's
 * VmafPicture, so that programs built against libvmaf run unchanged).
 */
#ifndef LIBVMAF_QGPU_PICTURE_H
#define LIBVMAF_QGPU_PICTURE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum VmafPixelFormat {
    VMAF_PIX_FMT_UNKNOWN = 0,
    VMAF_PIX_FMT_YUV420P = 1,
    VMAF_PIX_FMT_YUV422P = 2,
    VMAF_PIX_FMT_YUV444P = 3,
    VMAF_PIX_FMT_YUV400P = 4,
};

/* The reference count of a picture's buffer (private). */
typedef struct VmafRef VmafRef;

/* Planes 0..2 (Y, Cb, Cr): w/h in samples, stride in bytes; samples are
 * bytes (bpc 8) or 16-bit words (bpc 9..16). */
typedef struct VmafPicture {
    enum VmafPixelFormat pix_fmt;
    unsigned bpc;
    unsigned w[3];
    unsigned h[3];
    ptrdiff_t stride[3];
    void *data[3];
    VmafRef *ref;
    void *priv;
} VmafPicture;

/* Allocates the planes of a w x h picture and sets every field of *pic.
 * Chroma sizes are rounded up (libvmaf rounds them down; doc/libvmaf-abi.md).
 * 0, or -EINVAL / -ENOMEM. */
int vmaf_picture_alloc(VmafPicture *pic, enum VmafPixelFormat pix_fmt, unsigned bpc,
                       unsigned w, unsigned h);

/* Drops the caller's reference; the planes are freed with the last one.
 * *pic is cleared. 0, or -EINVAL. */
int vmaf_picture_unref(VmafPicture *pic);

#ifdef __cplusplus
}
#endif

#endif /* LIBVMAF_QGPU_PICTURE_H */
