/*
 * libqgpu on the caller's OpenCL context: pictures already on the device.
 *
 * For programs that hold their frames in OpenCL memory (FFmpeg's OpenCL
 * frames after hwupload, a decoder writing OpenCL images): the library is
 * opened on the caller's cl_context and device, so that its kernels and
 * buffers live in that context, and each frame is copied on the device
 * from the caller's images into the library's own buffers. No sample
 * crosses the host bus.
 *
 *   qgpu_config_default(&cfg);
 *   qgpu_open_cl(&ctx, context, device, &cfg);   (retains both)
 *   qgpu_enable_feature(ctx, "psnr"); qgpu_use_model(ctx, ...);
 *   for each frame pair:
 *       qgpu_submit_cl(ctx, &ref, &dist);   (returns when the copies are done)
 *       while (qgpu_collect(ctx, &frame, 0) == 1) ...   (as in qgpu.h)
 *   qgpu_flush(ctx); ...; qgpu_close(&ctx);        (releases both)
 *
 * Everything else is qgpu.h's API, unchanged: qgpu_submit() with host
 * pictures works on such a context too, and the two may be mixed.
 */
#ifndef QGPU_QGPU_OPENCL_H
#define QGPU_QGPU_OPENCL_H

/* The library uses the OpenCL 1.2 API; a program that includes CL/cl.h
 * first with another target version is fine. */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "qgpu/qgpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opens a context on the caller's OpenCL context and one of its devices
 * (cfg->device is ignored; the rest of cfg applies as for qgpu_open()).
 * The library retains context and device (clRetainContext/clRetainDevice)
 * and releases them in qgpu_close(), so the caller may release its own
 * references at any time. It creates its own two command queues on the
 * device and never uses the caller's queues. Kernels are built (or loaded
 * from the binary cache) for that device. Errors: QGPU_ERR_INVALID_ARG when
 * context or device is NULL, not a valid OpenCL object, or the device is not
 * one of the context's; the message is in qgpu_open_error(). */
QGPU_API int qgpu_open_cl(QgpuContext **ctx, cl_context context, cl_device_id device,
                          const QgpuConfig *cfg);

/* One picture in the caller's OpenCL memory: one 2D image per plane, as
 * FFmpeg's OpenCL frames hold them (AVFrame.data[i] of an AV_PIX_FMT_OPENCL
 * frame). Each image has one channel (CL_R, CL_A, CL_INTENSITY or
 * CL_LUMINANCE) of 8 bits (CL_UNORM_INT8 or CL_UNSIGNED_INT8) when the
 * samples are 8-bit, of 16 bits (CL_UNORM_INT16 or CL_UNSIGNED_INT16,
 * native little-endian words) when they are deeper; it is at least as large
 * as the plane (chroma ceil(w/2) wide for 4:2:0 and 4:2:2, ceil(h/2) high
 * for 4:2:0; qgpu.h's QgpuPicture). Samples are read from the image's
 * top-left corner. The images must belong to the context's cl_context.
 * QGPU_LAYOUT_NV12 (FFmpeg's OpenCL frames of nv12, p010 or p016, and
 * hardware surfaces mapped to OpenCL): plane[0] is luma as above, plane[1]
 * the Cb Cr pairs, an image of two channels (CL_RG or CL_RA) at least
 * ceil(w/2) x ceil(h/2); above 8 bits the words are MSB-aligned (P010:
 * 10-bit values << 6), as qgpu_submit() takes NV12, and shift stays 0. */
typedef struct QgpuCLPicture {
    int width;
    int height;
    int layout;    /* enum QgpuLayout */
    int bitdepth;  /* 8..16: the depth the samples are scored at */
    /* 0: each 16-bit word holds its sample in the low bits (FFmpeg's
     * yuv420p10le layout, were OpenCL frames able to hold it). N > 0: the
     * sample is the word's top bitdepth bits, i.e. word >> N, with
     * bitdepth + N == 16: FFmpeg's p010 (10-bit values << 6) or
     * yuv420p16 converted from 10-bit video (the low bits repeat the high
     * ones: v << 6 | v >> 4; the shift recovers v exactly). The shift is
     * done on the device. Only for bitdepth 9..15; 0 for QGPU_LAYOUT_NV12. */
    int shift;
    /* luma, Cb, Cr; plane[0] only for QGPU_LAYOUT_400; luma and the Cb Cr
     * pairs for QGPU_LAYOUT_NV12 */
    cl_mem plane[3];
} QgpuCLPicture;

/* Queues one (reference, distorted) pair whose samples are in OpenCL
 * images, as qgpu_submit() does with host memory: the same checks, the same
 * scores, the same slot and ordering rules (it may first wait for the
 * oldest frame when every slot is busy). The planes a feature needs are
 * copied on the device (clEnqueueCopyImageToBuffer on the library's upload
 * queue) into the slot's buffers, in the layout qgpu_submit() uploads.
 *
 * Synchronisation, the caller's side:
 *  - before the call, every command that writes the images must be
 *    complete (the library's queues don't wait for the caller's: finish
 *    them, or wait for their events; FFmpeg's hwupload returns frames
 *    whose upload is complete);
 *  - when the call returns, the library has finished reading the images
 *    (it waits for the copies): they may be released, reused or written at
 *    once, as qgpu_submit()'s host buffers may. */
QGPU_API int qgpu_submit_cl(QgpuContext *ctx, const QgpuCLPicture *ref, const QgpuCLPicture *dist);

/* One picture in an OpenCL buffer of the library's context: each plane at
 * a byte offset, rows `pitch` bytes apart, as CUDA and hardware decoders
 * lay pictures out. layout QGPU_LAYOUT_NV12: plane 0 luma, plane 1 the
 * interleaved Cb Cr pairs; bitdepth > 8 means MSB-aligned 16-bit words
 * (P010: 10-bit values << 6; P016), as qgpu_submit() takes NV12. Other
 * layouts: planar, 16-bit words holding their samples in the low bits,
 * as qgpu_submit() takes them. offset[] and pitch[] of unused planes are
 * ignored. */
typedef struct QgpuCLBuffer {
    int width;
    int height;
    int layout;      /* enum QgpuLayout */
    int bitdepth;    /* 8..16 */
    cl_mem buffer;
    size_t offset[3];
    size_t pitch[3];
} QgpuCLBuffer;

/* As qgpu_submit_cl(), pictures in buffers of the library's cl_context
 * (from qgpu_import_memory_fd(), or the caller's own buffers on a
 * qgpu_open_cl() context): the planes a feature needs are copied on the device
 * (clEnqueueCopyBufferRect on the upload queue); NV12 chroma is split
 * on the device. Buffers from qgpu_import_memory_fd() are acquired and
 * released around the copies. Synchronisation as for qgpu_submit_cl():
 * writes must be complete before the call (for imported memory: finished
 * on the other API's side, e.g. cuStreamSynchronize), and the buffers may
 * be rewritten when it returns. Counted in qgpu_frames_from_device(). */
QGPU_API int qgpu_submit_cl_buffer(QgpuContext *ctx, const QgpuCLBuffer *ref,
                                   const QgpuCLBuffer *dist);

/* Imports `size` bytes of another API's memory, exported as an opaque file
 * descriptor (CUDA: cuMemExportToShareableHandle of a cuMemCreate
 * allocation with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), as a buffer of
 * the library's context (cl_khr_external_memory_opaque_fd). The buffer
 * belongs to the context: valid until qgpu_close(), which releases it;
 * the caller must not release it, and keeps the memory itself allocated
 * until then. The caller keeps ownership of fd (close it after
 * qgpu_close()). Errors: QGPU_ERR_UNSUPPORTED when the device lacks the
 * extension or the loader its entry points (PoCL, older drivers; the
 * message says which), QGPU_ERR_OPENCL when the driver refuses the handle
 * (e.g. memory of another GPU). */
QGPU_API int qgpu_import_memory_fd(QgpuContext *ctx, int fd, size_t size, cl_mem *buffer);

/* Frames submitted so far with qgpu_submit_cl() (device copies) and with
 * qgpu_submit() (host uploads): a program can check that its frames never
 * went through the host. */
QGPU_API unsigned qgpu_frames_from_device(const QgpuContext *ctx);
QGPU_API unsigned qgpu_frames_from_host(const QgpuContext *ctx);

#ifdef __cplusplus
}
#endif

#endif /* QGPU_QGPU_OPENCL_H */
