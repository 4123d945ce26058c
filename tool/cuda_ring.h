/*
 * The zero-copy path of --hwdec cuda: NVDEC's frames stay in GPU memory.
 *
 * An adapter of AVFrames over the library's CUDA input (qgpu/qgpu_cuda.h:
 * the ring of exportable CUDA allocations, the copies, the imports). Each
 * decoded frame (AV_PIX_FMT_CUDA: NV12/P010 surfaces) is copied on the GPU
 * into a slot of the input's ring; the frame handed on is a "device
 * frame": the software format (NV12, P010), no host data (data[] NULL),
 * its buf[0] holding the library's QgpuCudaFrame until the frame is freed
 * (buf[1] a reference to FFmpeg's CUDA device, whose context must outlive
 * the ring's memory). The scoring thread submits a pair of device frames
 * with qgpu_submit_cuda. A frame that must be converted on the host, or
 * whose memory cannot be imported, is copied to host memory instead
 * (cuda_ring_to_host): the host path's result, exactly.
 *
 * The copy into the ring is only queued (qgpu_cuda_ring_take_async): the
 * decoding thread does not wait for the GPU; the decoded frame (NVDEC's
 * mapped surface) is kept by the library until the copy has run, at most
 * QGPU_CUDA_HELD of them (the decoder gets as many extra surfaces:
 * hwdec.c), and qgpu_submit_cuda waits for the copy.
 *
 * Threads: cuda_ring_take on the decoding thread; cuda_ring_frame and
 * cuda_ring_to_host on the scoring thread; frames may be freed on either.
 */
#ifndef QGPU_TOOL_CUDA_RING_H
#define QGPU_TOOL_CUDA_RING_H

#include <stddef.h>

#include <libavutil/frame.h>

#include "qgpu/qgpu_cuda.h"

typedef struct CudaRing CudaRing;

/* The driver's entry points are there (libcuda.so.1 loads, cuInit works)
 * and $QGPU_HWDEC_ZERO_COPY is not "0": 1, else 0 with the reason in why.
 * why NULL: only whether libcuda.so.1 is there (no cuInit: cheap). */
int cuda_ring_available(char *why, size_t why_len);

/* frame (AV_PIX_FMT_CUDA, samples of bitdepth bits) into a free slot,
 * *ring made at the first call (with `slots` slots, 0: 16): 1 with frame replaced by the device frame;
 * 0 when no slot is free, the format is not semi-planar or the ring could
 * not be made (frame left as it is: the caller copies it to the host);
 * < 0 an AVERROR (CUDA failed; message in err). */
int cuda_ring_take(CudaRing **ring, AVFrame *frame, int bitdepth, int slots, char *err,
                   size_t err_len);

/* Whether frame is a device frame of this ring. */
int cuda_ring_owns(const CudaRing *ring, const AVFrame *frame);

/* The library's frame behind a device frame (qgpu_submit_cuda). */
QgpuCudaFrame *cuda_ring_frame(const AVFrame *frame);

/* A device frame replaced by a copy in host memory, same format and
 * properties. 0 or a negative AVERROR (message in err). */
int cuda_ring_to_host(CudaRing *ring, AVFrame *frame, char *err, size_t err_len);

/* Why the zero-copy path stopped (empty when it did not). */
const char *cuda_ring_note(const CudaRing *ring);

/* Seconds the decoding thread spent copying frames into the ring (queuing
 * the device copies, waiting for held frames' copies when QGPU_CUDA_HELD
 * are held): QGPU_TIMING's figures. Read once the decoding thread is done. */
double cuda_ring_copy_seconds(const CudaRing *ring);

/* Reuse across the jobs of a batch slot (hwdec_park): 1 when the ring can
 * serve another decoder of the same CUDA context (it did not fail, no
 * frame of it is out), after forgetting its slots' OpenCL imports (they
 * belonged to the finished job's library context, closed by now) and its
 * timing; else 0 (the caller frees it). */
int cuda_ring_park(CudaRing *ring);

/* Whether a parked ring fits frame (AV_PIX_FMT_CUDA): the same CUDA context
 * and stream, software format and size, and at least `slots` slots (0:
 * the default). */
int cuda_ring_fits(const CudaRing *ring, const AVFrame *frame, int slots);

/* Drops the ring; the library's memory goes with the last frame out. */
void cuda_ring_free(CudaRing **ring);

#endif
