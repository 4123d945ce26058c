/*
 * NVDEC's frames kept on the GPU (cuda_ring.h): AVFrames over the
 * library's CUDA ring (qgpu/qgpu_cuda.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* hwcontext_cuda.h includes the SDK's cuda.h unless CUDA_VERSION is set:
 * the two types it uses, as the driver API declares them */
#define CUDA_VERSION 11000
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>
#include <libavutil/pixdesc.h>

#include "clock.h"
#include "cuda_ring.h"

/* Frames out at once per input: the prefetch queue (4), the frame being
 * paired and the one being submitted, the reader's queue of pairs (6),
 * with room to spare. When every slot is out, the frame goes through the
 * host instead of waiting. */
#define RING_SLOTS 16

/* A ring's slots as asked for (0: the default). */
static int ring_slots(int asked)
{
    return asked > 0 ? asked : RING_SLOTS;
}

struct CudaRing {
    QgpuCudaRing *ring;  /* NULL when it could not be made (note says why) */
    AVBufferRef *device; /* FFmpeg's CUDA device: its context outlives the ring */
    int slots;           /* it was made with */
    double copy_seconds; /* in cuda_ring_take, on the decoding thread */
    char note[512];
};

int cuda_ring_available(char *why, size_t why_len)
{
    const char *env = getenv("QGPU_HWDEC_ZERO_COPY");
    if (!why)
        return !(env && !strcmp(env, "0")) && qgpu_cuda_driver_present();
    return qgpu_cuda_available(why, why_len) == 0;
}

/* frame (AV_PIX_FMT_CUDA) as the library's picture: 0, or -1 when its
 * software format is not NV12/P010/P016. */
static int describe(const AVFrame *frame, int bitdepth, QgpuCudaPicture *pic)
{
    const AVHWFramesContext *fc = (const AVHWFramesContext *)frame->hw_frames_ctx->data;
    const AVCUDADeviceContext *hwctx = fc->device_ctx->hwctx;
    memset(pic, 0, sizeof(*pic));
    if (fc->sw_format != AV_PIX_FMT_NV12 && fc->sw_format != AV_PIX_FMT_P010LE &&
        fc->sw_format != AV_PIX_FMT_P016LE)
        return -1;
    pic->width = frame->width;
    pic->height = frame->height;
    pic->layout = QGPU_LAYOUT_NV12;
    pic->bitdepth = fc->sw_format == AV_PIX_FMT_NV12 ? 8 : bitdepth > 8 ? bitdepth : 16;
    for (int p = 0; p < 2; p++) {
        pic->plane[p] = (unsigned long long)(uintptr_t)frame->data[p];
        pic->pitch[p] = (size_t)frame->linesize[p];
    }
    pic->cuda_context = hwctx->cuda_ctx;
    pic->cuda_stream = hwctx->stream;
    return 0;
}

/* The ring for frame's pictures, or a ring that says why there is none. */
static CudaRing *ring_create(const AVFrame *frame, const QgpuCudaPicture *pic, int usable,
                             int slots)
{
    const AVHWFramesContext *fc = (const AVHWFramesContext *)frame->hw_frames_ctx->data;
    CudaRing *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->slots = ring_slots(slots);
    if (!usable)
        snprintf(r->note, sizeof(r->note), "frames are %s, not NV12/P010/P016",
                 av_get_pix_fmt_name(fc->sw_format));
    else if (!(r->device = av_buffer_ref(fc->device_ref)))
        snprintf(r->note, sizeof(r->note), "out of memory");
    else
        qgpu_cuda_ring_create(&r->ring, pic, r->slots, r->note, sizeof(r->note));
    return r;
}

/* A decoded frame held until its copy into the ring has run (NVDEC's
 * surface stays mapped until then): called by the library. */
static void held_free(void *opaque)
{
    AVFrame *frame = opaque;
    av_frame_free(&frame);
}

/* buf[0] of a device frame: its QgpuCudaFrame goes back to the ring */
static void frame_free(void *opaque, uint8_t *data)
{
    QgpuCudaFrame *frame = (QgpuCudaFrame *)data;
    qgpu_cuda_frame_release(&frame);
}

int cuda_ring_take(CudaRing **ring, AVFrame *frame, int bitdepth, int slots, char *err,
                   size_t err_len)
{
    QgpuCudaPicture pic;
    QgpuCudaFrame *slot = NULL;
    CudaRing *r;
    AVFrame *dev, *held;
    double t0;
    int usable, ret;

    if (!frame->hw_frames_ctx || frame->format != AV_PIX_FMT_CUDA)
        return 0;
    usable = describe(frame, bitdepth, &pic) == 0;
    if (!*ring && !(*ring = ring_create(frame, &pic, usable, slots)))
        return AVERROR(ENOMEM);
    r = *ring;
    if (!usable || !r->ring)
        return 0;
    /* the copy is only queued: the decoded frame goes to the library, which
     * frees it once the copy has run (no wait here for the GPU) */
    if (!(held = av_frame_alloc()) || (ret = av_frame_ref(held, frame)) < 0) {
        av_frame_free(&held);
        return AVERROR(ENOMEM);
    }
    t0 = monotonic_seconds();
    ret = qgpu_cuda_ring_take_async(r->ring, &pic, &slot, held_free, held);
    r->copy_seconds += monotonic_seconds() - t0;
    if (ret != 1)
        av_frame_free(&held); /* not taken: the library does not keep it */
    if (ret < 0) {
        snprintf(err, err_len, "%s", qgpu_cuda_ring_error(r->ring));
        return AVERROR_EXTERNAL;
    }
    if (ret == 0)
        return 0; /* every slot out, or the ring stopped */
    dev = av_frame_alloc();
    if (dev) {
        dev->buf[0] = av_buffer_create((uint8_t *)slot, sizeof(slot), frame_free, r, 0);
        dev->buf[1] = av_buffer_ref(r->device);
    }
    if (!dev || !dev->buf[0] || !dev->buf[1]) {
        if (!dev || !dev->buf[0])
            qgpu_cuda_frame_release(&slot);
        av_frame_free(&dev);
        return AVERROR(ENOMEM);
    }
    if ((ret = av_frame_copy_props(dev, frame)) < 0) {
        av_frame_free(&dev);
        return ret;
    }
    dev->format = ((const AVHWFramesContext *)frame->hw_frames_ctx->data)->sw_format;
    dev->width = frame->width;
    dev->height = frame->height;
    dev->linesize[0] = (int)(pic.width * (pic.bitdepth > 8 ? 2 : 1));  /* rows as the slot packs them */
    dev->linesize[1] = (int)((pic.width + 1) / 2 * 2 * (pic.bitdepth > 8 ? 2 : 1));
    av_frame_unref(frame);
    av_frame_move_ref(frame, dev);
    av_frame_free(&dev);
    return 1;
}

int cuda_ring_owns(const CudaRing *ring, const AVFrame *frame)
{
    return ring && frame->buf[0] && !frame->data[0] &&
           av_buffer_get_opaque(frame->buf[0]) == (void *)ring;
}

QgpuCudaFrame *cuda_ring_frame(const AVFrame *frame)
{
    return (QgpuCudaFrame *)frame->buf[0]->data;
}

int cuda_ring_to_host(CudaRing *ring, AVFrame *frame, char *err, size_t err_len)
{
    AVFrame *host = av_frame_alloc();
    void *data[3] = {NULL, NULL, NULL};
    size_t pitch[3] = {0, 0, 0};
    int ret;

    if (!host)
        return AVERROR(ENOMEM);
    host->format = frame->format;
    host->width = frame->width;
    host->height = frame->height;
    if ((ret = av_frame_get_buffer(host, 0)) < 0 || (ret = av_frame_copy_props(host, frame)) < 0) {
        av_frame_free(&host);
        return ret;
    }
    for (int p = 0; p < 2; p++) {
        data[p] = host->data[p];
        pitch[p] = (size_t)host->linesize[p];
    }
    if (qgpu_cuda_frame_to_host(cuda_ring_frame(frame), data, pitch) < 0) {
        snprintf(err, err_len, "%s", qgpu_cuda_ring_error(ring->ring));
        av_frame_free(&host);
        return AVERROR_EXTERNAL;
    }
    av_frame_unref(frame);
    av_frame_move_ref(frame, host);
    av_frame_free(&host);
    return 0;
}

double cuda_ring_copy_seconds(const CudaRing *ring)
{
    return ring ? ring->copy_seconds : 0.0;
}

const char *cuda_ring_note(const CudaRing *ring)
{
    if (!ring)
        return "";
    return ring->ring ? qgpu_cuda_ring_error(ring->ring) : ring->note;
}

int cuda_ring_park(CudaRing *r)
{
    if (!r || !r->ring || !qgpu_cuda_ring_reset(r->ring))
        return 0;
    r->copy_seconds = 0.0;
    return 1;
}

int cuda_ring_fits(const CudaRing *r, const AVFrame *frame, int slots)
{
    QgpuCudaPicture pic;
    if (!r || !r->ring || r->slots < ring_slots(slots) ||
        !frame->hw_frames_ctx || frame->format != AV_PIX_FMT_CUDA ||
        describe(frame, 0, &pic) < 0)
        return 0;
    return qgpu_cuda_ring_fits(r->ring, &pic);
}

void cuda_ring_free(CudaRing **ring)
{
    if (!*ring)
        return;
    qgpu_cuda_ring_free(&(*ring)->ring);
    av_buffer_unref(&(*ring)->device);
    free(*ring);
    *ring = NULL;
}
