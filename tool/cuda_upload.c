/*
 * CPU-decoded frames put on the GPU beside NVDEC's (cuda_upload.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/hwcontext.h>
#include <libavutil/pixfmt.h>

#include "cuda_ring.h"
#include "cuda_upload.h"

struct CudaUpload {
    AVBufferRef *device; /* NVDEC's CUDA device */
    AVBufferRef *frames; /* a pool of CUDA frames, made at the first frame */
    AVFrame *host;       /* the semi-planar frame, reused while writable */
    CudaRing *ring;      /* this input's slots, made by the first take */
    int slots;           /* the ring's (0: cuda_ring.c's default) */
    unsigned uploaded, misses;
};

int cuda_upload_supports(enum AVPixelFormat fmt, int bitdepth)
{
    return (fmt == AV_PIX_FMT_YUV420P && bitdepth == 8) ||
           (fmt == AV_PIX_FMT_YUV420P10LE && bitdepth == 10);
}

int cuda_upload_create(CudaUpload **out, AVBufferRef *device)
{
    CudaUpload *up = calloc(1, sizeof(*up));
    *out = NULL;
    if (!up)
        return AVERROR(ENOMEM);
    up->device = av_buffer_ref(device);
    up->host = av_frame_alloc();
    if (!up->device || !up->host) {
        cuda_upload_free(&up);
        return AVERROR(ENOMEM);
    }
    *out = up;
    return 0;
}

void cuda_upload_semiplanar(AVFrame *dst, const AVFrame *src, int bitdepth)
{
    int cw = (src->width + 1) / 2, ch = (src->height + 1) / 2;
    if (bitdepth == 8) {
        for (int y = 0; y < src->height; y++)
            memcpy(dst->data[0] + (size_t)y * dst->linesize[0],
                   src->data[0] + (size_t)y * src->linesize[0], (size_t)src->width);
        for (int y = 0; y < ch; y++) {
            const uint8_t *cb = src->data[1] + (size_t)y * src->linesize[1];
            const uint8_t *cr = src->data[2] + (size_t)y * src->linesize[2];
            uint8_t *pairs = dst->data[1] + (size_t)y * dst->linesize[1];
            for (int x = 0; x < cw; x++) {
                pairs[2 * x] = cb[x];
                pairs[2 * x + 1] = cr[x];
            }
        }
        return;
    }
    int shift = 16 - bitdepth;
    for (int y = 0; y < src->height; y++) {
        const uint16_t *s = (const uint16_t *)(src->data[0] + (size_t)y * src->linesize[0]);
        uint16_t *d = (uint16_t *)(dst->data[0] + (size_t)y * dst->linesize[0]);
        for (int x = 0; x < src->width; x++)
            d[x] = (uint16_t)(s[x] << shift);
    }
    for (int y = 0; y < ch; y++) {
        const uint16_t *cb = (const uint16_t *)(src->data[1] + (size_t)y * src->linesize[1]);
        const uint16_t *cr = (const uint16_t *)(src->data[2] + (size_t)y * src->linesize[2]);
        uint16_t *pairs = (uint16_t *)(dst->data[1] + (size_t)y * dst->linesize[1]);
        for (int x = 0; x < cw; x++) {
            pairs[2 * x] = (uint16_t)(cb[x] << shift);
            pairs[2 * x + 1] = (uint16_t)(cr[x] << shift);
        }
    }
}

/* The pool of CUDA frames of format sw, frame's size: 0 or an AVERROR. */
static int frames_create(CudaUpload *up, const AVFrame *frame, enum AVPixelFormat sw)
{
    AVHWFramesContext *fc;
    int ret;
    if (up->frames)
        return 0;
    if (!(up->frames = av_hwframe_ctx_alloc(up->device)))
        return AVERROR(ENOMEM);
    fc = (AVHWFramesContext *)up->frames->data;
    fc->format = AV_PIX_FMT_CUDA;
    fc->sw_format = sw;
    fc->width = frame->width;
    fc->height = frame->height;
    if ((ret = av_hwframe_ctx_init(up->frames)) < 0)
        av_buffer_unref(&up->frames);
    return ret;
}

/* up->host: a writable semi-planar frame of format sw and frame's size. */
static int host_frame(CudaUpload *up, const AVFrame *frame, enum AVPixelFormat sw)
{
    if (up->host->buf[0] && av_frame_is_writable(up->host) && up->host->format == sw &&
        up->host->width == frame->width && up->host->height == frame->height)
        return 0;
    av_frame_unref(up->host); /* handed on (a host frame out), or a new size */
    up->host->format = sw;
    up->host->width = frame->width;
    up->host->height = frame->height;
    return av_frame_get_buffer(up->host, 0);
}

int cuda_upload_frame(CudaUpload *up, AVFrame *frame, int bitdepth, char *err, size_t err_len)
{
    enum AVPixelFormat sw = bitdepth == 8 ? AV_PIX_FMT_NV12 : AV_PIX_FMT_P010LE;
    AVFrame *cuda = NULL;
    char msg[256] = "";
    int ret;

    if (!cuda_upload_supports(frame->format, bitdepth))
        return 0;
    if ((ret = host_frame(up, frame, sw)) < 0 || (ret = av_frame_copy_props(up->host, frame)) < 0)
        return ret;
    cuda_upload_semiplanar(up->host, frame, bitdepth);
    /* onto the GPU: FFmpeg's copy from host memory, then into the ring */
    ret = frames_create(up, frame, sw);
    if (ret >= 0 && !(cuda = av_frame_alloc()))
        ret = AVERROR(ENOMEM);
    if (ret >= 0)
        ret = av_hwframe_get_buffer(up->frames, cuda, 0);
    if (ret >= 0)
        ret = av_hwframe_transfer_data(cuda, up->host, 0);
    if (ret >= 0)
        ret = av_frame_copy_props(cuda, up->host);
    if (ret >= 0)
        ret = cuda_ring_take(&up->ring, cuda, bitdepth, up->slots, msg, sizeof(msg));
    if (ret == 1) {
        av_frame_unref(frame);
        av_frame_move_ref(frame, cuda);
        av_frame_free(&cuda);
        up->uploaded++;
        return 0;
    }
    av_frame_free(&cuda);
    if (ret < 0) {
        snprintf(err, err_len, "putting a CPU-decoded frame on the GPU failed (%s)",
                 *msg ? msg : av_err2str(ret));
        return ret;
    }
    /* no free slot: the semi-planar frame in host memory */
    up->misses++;
    av_frame_unref(frame);
    return av_frame_ref(frame, up->host);
}

void cuda_upload_set_slots(CudaUpload *up, int slots)
{
    up->slots = slots;
}

int cuda_upload_owns(const CudaUpload *up, const AVFrame *frame)
{
    return up && cuda_ring_owns(up->ring, frame);
}

int cuda_upload_to_host(CudaUpload *up, AVFrame *frame)
{
    char msg[256];
    return cuda_ring_to_host(up->ring, frame, msg, sizeof(msg));
}

unsigned cuda_upload_count(const CudaUpload *up)
{
    return up ? up->uploaded : 0;
}

unsigned cuda_upload_misses(const CudaUpload *up)
{
    return up ? up->misses : 0;
}

const char *cuda_upload_note(const CudaUpload *up)
{
    return up ? cuda_ring_note(up->ring) : "";
}

void cuda_upload_free(CudaUpload **pup)
{
    CudaUpload *up = *pup;
    if (!up)
        return;
    cuda_ring_free(&up->ring);
    av_frame_free(&up->host);
    av_buffer_unref(&up->frames);
    av_buffer_unref(&up->device);
    free(up);
    *pup = NULL;
}
