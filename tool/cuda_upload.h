/*
 * The mixed decode of --hwdec cuda,none (or none,cuda): one input decoded
 * by NVDEC, its frames kept on the GPU (cuda_ring.h), the other by the CPU
 * decoders. The CPU decoder's frames are put on the GPU beside NVDEC's, so
 * that the pair still goes to the library as two CUDA frames
 * (qgpu_submit_cuda) and is copied on the device like an NVDEC pair.
 *
 * Each planar 4:2:0 frame (8-bit, or 10-bit in 16-bit words) is first
 * made semi-planar on the host (NV12, or P010: the Cb Cr pairs
 * interleaved, 10-bit samples moved to the word's top bits; exact), as the
 * library takes both pictures of a pair in one layout; then uploaded into
 * a CUDA frame of FFmpeg's pool on NVDEC's device (av_hwframe_transfer_data,
 * on the device's stream) and copied from there into a slot of this
 * input's own ring (cuda_ring_take). When no slot is free the semi-planar
 * frame stays in host memory: the pair then goes through the host, with
 * the same pictures.
 *
 * Threads: cuda_upload_frame on the decoding thread; cuda_upload_owns and
 * cuda_upload_to_host on the scoring thread.
 */
#ifndef QGPU_TOOL_CUDA_UPLOAD_H
#define QGPU_TOOL_CUDA_UPLOAD_H

#include <stddef.h>

#include <libavutil/buffer.h>
#include <libavutil/frame.h>

typedef struct CudaUpload CudaUpload;

/* Whether frames of format fmt, scored at bitdepth bits, can be uploaded
 * (yuv420p at 8 bits, yuv420p10le at 10). */
int cuda_upload_supports(enum AVPixelFormat fmt, int bitdepth);

/* Planar 4:2:0 src (yuv420p, bitdepth 8; yuv420p10le, 10) -> semi-planar
 * dst of the same size (NV12 / P010, allocated by the caller): luma rows
 * copied, or moved to the words' top bits; Cb Cr interleaved. Exact:
 * hwdec_to_planar gives src back. */
void cuda_upload_semiplanar(AVFrame *dst, const AVFrame *src, int bitdepth);

/* An uploader onto device (FFmpeg's CUDA device of the NVDEC decoder whose
 * frames stay on the GPU; a reference is kept). 0 or a negative AVERROR. */
int cuda_upload_create(CudaUpload **up, AVBufferRef *device);

/* frame (a format cuda_upload_supports) replaced by its semi-planar form:
 * a device frame of the uploader's ring (cuda_ring.h) when a slot was
 * free, else a host frame (NV12/P010). Frames of other formats are left
 * as they are. 0 or a negative AVERROR (message in err). */
int cuda_upload_frame(CudaUpload *up, AVFrame *frame, int bitdepth, char *err, size_t err_len);

/* Slots of the ring made by the first upload (before it; 0: cuda_ring.c's
 * default): a decoding session queues more frames than one decoder. */
void cuda_upload_set_slots(CudaUpload *up, int slots);

/* Whether frame is a device frame of this uploader. */
int cuda_upload_owns(const CudaUpload *up, const AVFrame *frame);

/* A device frame of this uploader replaced by a copy in host memory.
 * 0 or a negative AVERROR. */
int cuda_upload_to_host(CudaUpload *up, AVFrame *frame);

/* Frames put on the GPU so far, and frames left in host memory (no free
 * slot); read once the decoding thread is done. */
unsigned cuda_upload_count(const CudaUpload *up);
unsigned cuda_upload_misses(const CudaUpload *up);

/* Why frames went through host memory (the ring's note), or "". */
const char *cuda_upload_note(const CudaUpload *up);

/* NULL-safe; device frames still out keep the ring's memory. */
void cuda_upload_free(CudaUpload **up);

#endif
