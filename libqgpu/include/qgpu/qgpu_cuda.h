/*
 * libqgpu — pictures in CUDA memory (optional).
 *
 * For programs that hold their frames in CUDA device memory (NVDEC's
 * output: FFmpeg's AV_PIX_FMT_CUDA frames), on an NVIDIA GPU whose OpenCL
 * driver imports CUDA memory (cl_khr_external_memory_opaque_fd). The
 * library loads the driver's libcuda.so.1 at run time (dlopen): nothing
 * CUDA is needed to build or link, and without a CUDA driver every call
 * here fails with QGPU_ERR_UNSUPPORTED, so that the caller copies its
 * frames to host memory and uses qgpu_submit() instead.
 *
 * A ring holds slots in one allocation of exportable CUDA memory
 * (cuMemCreate with a POSIX file descriptor handle). Each picture is copied
 * on the GPU into a free slot (cuMemcpy2DAsync on the caller's stream, waited for; or
 * only queued, qgpu_cuda_ring_take_async, the submit then waiting for it),
 * and qgpu_submit_cuda() hands the pair to a context: the allocation is
 * imported once into the context's OpenCL context (qgpu_import_memory_fd)
 * and copied from there on the device (qgpu_submit_cl_buffer). No sample
 * crosses the host bus.
 *
 *   QgpuCudaPicture pic = {w, h, QGPU_LAYOUT_NV12, 8, {luma, pairs}, {pitch0, pitch1},
 *                          cuda_context, cuda_stream};
 *   if (qgpu_cuda_ring_create(&ring, &pic, 4, err, sizeof(err)) < 0)
 *       ... copy to host memory instead
 *   for each pair:
 *       qgpu_cuda_ring_take(ring, &ref_pic, &ref);     (1: copied)
 *       qgpu_cuda_ring_take(ring, &dist_pic, &dist);
 *       qgpu_submit_cuda(ctx, ref, dist);              (the frames may go now)
 *       qgpu_cuda_frame_release(&ref); qgpu_cuda_frame_release(&dist);
 *   qgpu_close(&ctx); qgpu_cuda_ring_free(&ring);
 *
 * The copy (take) and the submit may run on different threads, as a
 * decoding thread and a scoring thread do; frames may be released on any
 * thread. The ring's memory is freed with its last frame.
 */
#ifndef QGPU_QGPU_CUDA_H
#define QGPU_QGPU_CUDA_H

#include <stddef.h>

#include "qgpu/qgpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One picture in CUDA device memory. plane[] are CUdeviceptr values (the
 * 64-bit device addresses), pitch[] bytes between rows. Layouts and sample
 * words as qgpu_submit() takes them: QGPU_LAYOUT_NV12 (plane 0 luma,
 * plane 1 the Cb Cr pairs; above 8 bits MSB-aligned 16-bit words, P010 /
 * P016) or planar (QGPU_LAYOUT_420/422/444/400; above 8 bits 16-bit words
 * holding the samples in their low bits). cuda_context is the CUcontext the
 * planes belong to, cuda_stream the CUstream whose work wrote them (NULL:
 * the default stream): the copy is ordered after it. */
typedef struct QgpuCudaPicture {
    int width;
    int height;
    int layout;     /* enum QgpuLayout */
    int bitdepth;   /* 8..16 */
    unsigned long long plane[3];
    size_t pitch[3];
    void *cuda_context;
    void *cuda_stream;
} QgpuCudaPicture;

typedef struct QgpuCudaRing QgpuCudaRing;
typedef struct QgpuCudaFrame QgpuCudaFrame;

/* Whether the CUDA path can be tried: libcuda.so.1 loads, has the entry
 * points the ring uses and cuInit succeeds, and $QGPU_HWDEC_ZERO_COPY is
 * not "0" (which forces the host copy, in the qgpu tool and the filter).
 * 0, or QGPU_ERR_UNSUPPORTED with the reason in why (why may be NULL).
 * Loaded once per process; thread-safe. */
QGPU_API int qgpu_cuda_available(char *why, size_t why_len);

/* Only whether libcuda.so.1 can be loaded (no cuInit: cheap). 1 or 0. */
QGPU_API int qgpu_cuda_driver_present(void);

/* A ring of `slots` (1..256) slots, in one exportable allocation, for
 * pictures of format's size, layout, bit depth, CUDA context and stream
 * (plane[] and pitch[] are not read), packed rows, on the context's device. Errors, with the reason in
 * err: QGPU_ERR_UNSUPPORTED (no CUDA: see qgpu_cuda_available; a layout or
 * depth the library does not take), QGPU_ERR_CUDA (a driver call failed,
 * e.g. out of device memory), QGPU_ERR_INVALID_ARG, QGPU_ERR_NO_MEMORY. */
QGPU_API int qgpu_cuda_ring_create(QgpuCudaRing **ring, const QgpuCudaPicture *format, int slots,
                                   char *err, size_t err_len);

/* Whether pic has the ring's size, layout, CUDA context and stream, and
 * samples of its size (8 bits, or 16-bit words: the depth itself may
 * differ, e.g. P016 holding 12-bit video in a ring made for P010; each
 * frame is scored at its picture's depth). */
QGPU_API int qgpu_cuda_ring_fits(const QgpuCudaRing *ring, const QgpuCudaPicture *pic);

/* Copies pic into a free slot: 1 and *frame set (complete on return: the
 * caller's planes may be reused); 0 when no slot is free, pic does not fit
 * or the ring stopped (qgpu_cuda_ring_error says why): copy it to host
 * memory instead; QGPU_ERR_CUDA when the copy failed (message in
 * qgpu_cuda_ring_error). */
QGPU_API int qgpu_cuda_ring_take(QgpuCudaRing *ring, const QgpuCudaPicture *pic,
                                 QgpuCudaFrame **frame);

/* The most pictures a ring holds for qgpu_cuda_ring_take_async (a decoder
 * handing out its own surfaces needs this many to spare). */
#define QGPU_CUDA_HELD 4

/* As qgpu_cuda_ring_take, but the copy is only queued on pic's stream
 * (then a CUDA event), not waited for: qgpu_submit_cuda and
 * qgpu_cuda_frame_to_host wait for it (by then it has usually run). pic's
 * planes must stay as they are until done(opaque) is called, once the copy
 * has run: on the thread of a later qgpu_cuda_ring_take_async (at most
 * QGPU_CUDA_HELD pictures are held; a take with that many waits for the
 * oldest copy) or of qgpu_cuda_ring_drain, qgpu_cuda_ring_reset or
 * qgpu_cuda_ring_free. done is called only for a take that returned 1.
 * One thread at a time takes from a ring this way. */
QGPU_API int qgpu_cuda_ring_take_async(QgpuCudaRing *ring, const QgpuCudaPicture *pic,
                                       QgpuCudaFrame **frame, void (*done)(void *opaque),
                                       void *opaque);

/* Waits for the copies of the pictures still held and calls their done:
 * 0, or QGPU_ERR_CUDA (done called all the same). NULL-safe. */
QGPU_API int qgpu_cuda_ring_drain(QgpuCudaRing *ring);

/* A frame's samples copied to host memory: data[p] gets plane p's rows
 * (the layout's planes), pitch[p] bytes apart. 0 or QGPU_ERR_CUDA. */
QGPU_API int qgpu_cuda_frame_to_host(const QgpuCudaFrame *frame, void *const data[3],
                                     const size_t pitch[3]);

/* Gives the frame's slot back (thread-safe); *frame becomes NULL. */
QGPU_API void qgpu_cuda_frame_release(QgpuCudaFrame **frame);

/* Scores a pair of frames of rings (one ring or two), as qgpu_submit():
 * each ring's allocation is imported into ctx at its first use (the imports belong to
 * ctx until qgpu_close), then the planes are copied on the device. When
 * it returns the frames may be released. Errors: QGPU_ERR_UNSUPPORTED
 * when the memory cannot be imported (no cl_khr_external_memory_opaque_fd,
 * another GPU's memory: the ring stops, the reason in its
 * qgpu_cuda_ring_error and qgpu_last_error; submit the pair from host
 * memory), QGPU_ERR_STATE when a ring's slots were imported into another
 * context (qgpu_cuda_ring_reset first), else qgpu_submit_cl_buffer()'s. */
QGPU_API int qgpu_submit_cuda(QgpuContext *ctx, QgpuCudaFrame *ref, QgpuCudaFrame *dist);

/* Why the ring stopped taking frames, or a copy failed; "" while it works. */
QGPU_API const char *qgpu_cuda_ring_error(const QgpuCudaRing *ring);

/* For a ring that serves a new context once the old one is closed (a batch
 * of jobs): the held pictures drained (qgpu_cuda_ring_drain), then 1 when
 * no frame of it is out and it did not stop, its imports then forgotten
 * (they went with the closed context); else 0. */
QGPU_API int qgpu_cuda_ring_reset(QgpuCudaRing *ring);

/* Drains the held pictures (qgpu_cuda_ring_drain) and drops the caller's
 * reference; the memory goes with the last frame out. NULL-safe; *ring
 * becomes NULL. */
QGPU_API void qgpu_cuda_ring_free(QgpuCudaRing **ring);

#ifdef __cplusplus
}
#endif

#endif /* QGPU_QGPU_CUDA_H */
