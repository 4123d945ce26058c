/*
 * The ring of exportable CUDA allocations behind --hwdec cuda's zero-copy
 * path (cuda_ring.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda.h"
/* hwcontext_cuda.h includes the SDK's cuda.h unless CUDA_VERSION is set:
 * our declarations (cuda.h) give the two types it uses */
#define CUDA_VERSION 11000
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>
#include <libavutil/pixdesc.h>

#include "cuda_ring.h"

/* Frames out at once per input: the prefetch queue (4), the frame being
 * paired and the one being submitted, the reader's queue of pairs (6),
 * with room to spare. When every slot
 * is out, the frame goes through the host instead of waiting. */
#define RING_SLOTS 16

typedef struct Slot {
    CudaExportable mem;
    cl_mem buffer; /* imported by the scoring thread, NULL until then */
    int busy;
} Slot;

struct CudaRing {
    const CudaApi *cu;
    AVBufferRef *device; /* FFmpeg's CUDA device: its context outlives ours */
    CUcontext cuctx;
    CUstream stream;
    enum AVPixelFormat format;
    int width, height;
    size_t row[2], rows[2], chroma_offset;
    Slot slots[RING_SLOTS];
    int next;
    pthread_mutex_t lock;
    int refs;            /* the owner's and each busy slot's */
    atomic_int failed;   /* no more frames through the ring */
    unsigned frames;
    double copy_seconds; /* in copy_in, on the decoding thread */
    char note[512];
};

int cuda_ring_available(char *why, size_t why_len)
{
    const char *env = getenv("QGPU_HWDEC_ZERO_COPY");
    if (env && !strcmp(env, "0")) {
        snprintf(why, why_len, "QGPU_HWDEC_ZERO_COPY=0");
        return 0;
    }
    return why ? cuda_api(why, why_len) != NULL : cuda_driver_present();
}

static void ring_destroy(CudaRing *r)
{
    CUcontext popped;
    if (r->cuctx && !r->cu->cuCtxPushCurrent(r->cuctx)) {
        for (int i = 0; i < RING_SLOTS; i++)
            cuda_free_exportable(r->cu, &r->slots[i].mem);
        r->cu->cuCtxPopCurrent(&popped);
    }
    av_buffer_unref(&r->device);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* Drops one reference; the last one frees the ring. */
static void ring_unref(CudaRing *r)
{
    int last;
    pthread_mutex_lock(&r->lock);
    last = --r->refs == 0;
    pthread_mutex_unlock(&r->lock);
    if (last)
        ring_destroy(r);
}

static void slot_free(void *opaque, uint8_t *data)
{
    CudaRing *r = opaque;
    Slot *slot = (Slot *)data;
    pthread_mutex_lock(&r->lock);
    slot->busy = 0;
    pthread_mutex_unlock(&r->lock);
    ring_unref(r);
}

/* Geometry of frame's format, the allocations: 0, or -1 with the reason in
 * r->note (the ring then stays unused). */
static int ring_setup(CudaRing *r, const AVFrame *frame)
{
    const AVHWFramesContext *fc = (const AVHWFramesContext *)frame->hw_frames_ctx->data;
    const AVCUDADeviceContext *hwctx = fc->device_ctx->hwctx;
    size_t bps;
    CUcontext popped;
    int ret = 0;

    r->format = fc->sw_format;
    if (r->format != AV_PIX_FMT_NV12 && r->format != AV_PIX_FMT_P010LE &&
        r->format != AV_PIX_FMT_P016LE) {
        snprintf(r->note, sizeof(r->note), "frames are %s, not NV12/P010/P016",
                 av_get_pix_fmt_name(r->format));
        return -1;
    }
    bps = r->format == AV_PIX_FMT_NV12 ? 1 : 2;
    r->width = frame->width;
    r->height = frame->height;
    r->row[0] = (size_t)frame->width * bps;
    r->rows[0] = (size_t)frame->height;
    r->row[1] = (size_t)((frame->width + 1) / 2) * 2 * bps;
    r->rows[1] = (size_t)((frame->height + 1) / 2);
    r->chroma_offset = r->row[0] * r->rows[0];
    r->device = av_buffer_ref(fc->device_ref);
    if (!r->device) {
        snprintf(r->note, sizeof(r->note), "out of memory");
        return -1;
    }
    r->cuctx = hwctx->cuda_ctx;
    r->stream = hwctx->stream;
    if (r->cu->cuCtxPushCurrent(r->cuctx)) {
        snprintf(r->note, sizeof(r->note), "cuCtxPushCurrent failed");
        r->cuctx = NULL;
        return -1;
    }
    for (int i = 0; i < RING_SLOTS && !ret; i++)
        ret = cuda_alloc_exportable(r->cu, r->chroma_offset + r->row[1] * r->rows[1],
                                    &r->slots[i].mem, r->note, sizeof(r->note));
    r->cu->cuCtxPopCurrent(&popped);
    return ret ? -1 : 0;
}

static CudaRing *ring_create(const AVFrame *frame)
{
    CudaRing *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->cu = cuda_api(r->note, sizeof(r->note));
    pthread_mutex_init(&r->lock, NULL);
    r->refs = 1;
    for (int i = 0; i < RING_SLOTS; i++)
        r->slots[i].mem.fd = -1;
    if (!r->cu || ring_setup(r, frame) < 0)
        atomic_store(&r->failed, 1);
    return r;
}

/* A free slot, marked busy (and counted as a reference), or NULL. */
static Slot *slot_get(CudaRing *r)
{
    Slot *slot = NULL;
    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < RING_SLOTS && !slot; i++) {
        Slot *s = &r->slots[(r->next + i) % RING_SLOTS];
        if (!s->busy) {
            slot = s;
            slot->busy = 1;
            r->refs++;
            r->next = (r->next + i + 1) % RING_SLOTS;
        }
    }
    pthread_mutex_unlock(&r->lock);
    return slot;
}

/* Both planes of frame into slot, complete on return. */
static CUresult copy_in(CudaRing *r, const AVFrame *frame, Slot *slot)
{
    CUcontext popped;
    CUresult ret = r->cu->cuCtxPushCurrent(r->cuctx);
    if (ret)
        return ret;
    for (int p = 0; p < 2 && !ret; p++)
        ret = cuda_copy_2d(r->cu, slot->mem.ptr + (p ? r->chroma_offset : 0), NULL, r->row[p],
                           (CUdeviceptr)(uintptr_t)frame->data[p], NULL,
                           (size_t)frame->linesize[p], r->row[p], r->rows[p], r->stream);
    if (!ret)
        ret = r->cu->cuStreamSynchronize(r->stream);
    r->cu->cuCtxPopCurrent(&popped);
    return ret;
}

int cuda_ring_take(CudaRing **ring, AVFrame *frame, char *err, size_t err_len)
{
    CudaRing *r;
    AVFrame *dev;
    Slot *slot;
    CUresult cr;
    struct timespec t0, t1;
    int ret;

    if (!frame->hw_frames_ctx || frame->format != AV_PIX_FMT_CUDA)
        return 0;
    if (!*ring && !(*ring = ring_create(frame)))
        return AVERROR(ENOMEM);
    r = *ring;
    if (atomic_load(&r->failed) || frame->width != r->width || frame->height != r->height ||
        ((const AVHWFramesContext *)frame->hw_frames_ctx->data)->sw_format != r->format)
        return 0;
    if (!(slot = slot_get(r)))
        return 0;
    dev = av_frame_alloc();
    if (!dev) {
        slot_free(r, (uint8_t *)slot);
        return AVERROR(ENOMEM);
    }
    dev->buf[0] = av_buffer_create((uint8_t *)slot, sizeof(*slot), slot_free, r, 0);
    if (!dev->buf[0]) {
        slot_free(r, (uint8_t *)slot);
        av_frame_free(&dev);
        return AVERROR(ENOMEM);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr = copy_in(r, frame, slot);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->copy_seconds += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (cr) {
        cuda_error(r->cu, cr, "copying a decoded frame on the GPU", err, err_len);
        av_frame_free(&dev);
        return AVERROR_EXTERNAL;
    }
    if ((ret = av_frame_copy_props(dev, frame)) < 0) {
        av_frame_free(&dev);
        return ret;
    }
    dev->format = r->format;
    dev->width = r->width;
    dev->height = r->height;
    dev->linesize[0] = (int)r->row[0];
    dev->linesize[1] = (int)r->row[1];
    av_frame_unref(frame);
    av_frame_move_ref(frame, dev);
    av_frame_free(&dev);
    r->frames++;
    return 1;
}

int cuda_ring_owns(const CudaRing *ring, const AVFrame *frame)
{
    return ring && frame->buf[0] && !frame->data[0] &&
           av_buffer_get_opaque(frame->buf[0]) == (void *)ring;
}

int cuda_ring_buffer(CudaRing *ring, const AVFrame *frame, int bitdepth, QgpuContext *ctx,
                     QgpuCLBuffer *out)
{
    Slot *slot = (Slot *)frame->buf[0]->data;
    if (atomic_load(&ring->failed))
        return 0;
    if (!slot->buffer &&
        qgpu_import_memory_fd(ctx, slot->mem.fd, slot->mem.size, &slot->buffer) < 0) {
        snprintf(ring->note, sizeof(ring->note), "%s", qgpu_last_error(ctx));
        atomic_store(&ring->failed, 1);
        return 0;
    }
    memset(out, 0, sizeof(*out));
    out->width = frame->width;
    out->height = frame->height;
    out->layout = QGPU_LAYOUT_NV12;
    out->bitdepth = bitdepth;
    out->buffer = slot->buffer;
    out->offset[1] = ring->chroma_offset;
    out->pitch[0] = ring->row[0];
    out->pitch[1] = ring->row[1];
    return 1;
}

int cuda_ring_to_host(CudaRing *ring, AVFrame *frame, char *err, size_t err_len)
{
    const Slot *slot = (const Slot *)frame->buf[0]->data;
    AVFrame *host = av_frame_alloc();
    CUcontext popped;
    CUresult cr;
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
    cr = ring->cu->cuCtxPushCurrent(ring->cuctx);
    if (!cr) {
        for (int p = 0; p < 2 && !cr; p++)
            cr = cuda_copy_2d(ring->cu, 0, host->data[p], (size_t)host->linesize[p],
                              slot->mem.ptr + (p ? ring->chroma_offset : 0), NULL,
                              ring->row[p], ring->row[p], ring->rows[p], ring->stream);
        if (!cr)
            cr = ring->cu->cuStreamSynchronize(ring->stream);
        ring->cu->cuCtxPopCurrent(&popped);
    }
    if (cr) {
        cuda_error(ring->cu, cr, "copying a frame from the GPU", err, err_len);
        av_frame_free(&host);
        return AVERROR_EXTERNAL;
    }
    av_frame_unref(frame);
    av_frame_move_ref(frame, host);
    av_frame_free(&host);
    return 0;
}

unsigned cuda_ring_frames(const CudaRing *ring)
{
    return ring ? ring->frames : 0;
}

double cuda_ring_copy_seconds(const CudaRing *ring)
{
    return ring ? ring->copy_seconds : 0.0;
}

const char *cuda_ring_note(const CudaRing *ring)
{
    return ring && atomic_load(&((CudaRing *)ring)->failed) ? ring->note : "";
}

int cuda_ring_park(CudaRing *r)
{
    int idle;
    if (!r || atomic_load(&r->failed))
        return 0;
    pthread_mutex_lock(&r->lock);
    idle = r->refs == 1;
    if (idle) {
        for (int i = 0; i < RING_SLOTS; i++)
            r->slots[i].buffer = NULL;
        r->frames = 0;
        r->copy_seconds = 0.0;
        r->next = 0;
    }
    pthread_mutex_unlock(&r->lock);
    return idle;
}

int cuda_ring_fits(const CudaRing *r, const AVFrame *frame)
{
    const AVHWFramesContext *fc;
    const AVCUDADeviceContext *hwctx;
    if (!r || atomic_load(&((CudaRing *)r)->failed) || !frame->hw_frames_ctx ||
        frame->format != AV_PIX_FMT_CUDA)
        return 0;
    fc = (const AVHWFramesContext *)frame->hw_frames_ctx->data;
    hwctx = fc->device_ctx->hwctx;
    return hwctx->cuda_ctx == r->cuctx && hwctx->stream == r->stream &&
           fc->sw_format == r->format && frame->width == r->width && frame->height == r->height;
}

void cuda_ring_free(CudaRing **ring)
{
    if (*ring)
        ring_unref(*ring);
    *ring = NULL;
}
