/*
 * --hwdec: FFmpeg's hwaccel decoders (NVDEC through a CUDA device, VAAPI).
 *
 * Setup, before the decoder opens: the codec's hardware configurations
 * (avcodec_get_hw_config) name the device type and the pixel format of
 * frames in GPU memory; a device of that type is created
 * (av_hwdevice_ctx_create; FFmpeg loads libcuda/libnvcuvid or libva at
 * run time) and handed to the decoder, whose get_format callback then picks
 * the hardware format. When the hwaccel cannot take the stream (profile,
 * size), FFmpeg calls get_format again without it and the CPU decodes:
 * hwdec_active() says which happened.
 *
 * Frames: with NVDEC, each decoded frame stays on the GPU when it can
 * (cuda_ring.h: copied on the device into memory the library imports);
 * otherwise, and with VAAPI, it is copied to host memory in the device's
 * native layout (NV12 for 8-bit 4:2:0, P010/P016 deeper), which the
 * library takes directly (QGPU_LAYOUT_NV12); hwdec_to_planar() makes
 * planar frames of them when the other input is planar.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "cuda_ring.h"
#include "hwdec.h"

struct Hwdec {
    enum AVHWDeviceType type;
    enum AVPixelFormat hw_format; /* frames in GPU memory */
    AVBufferRef *device;
    AVFrame *host;                /* the copy of the last frame */
    int active;                   /* get_format picked the hardware format */
    /* host memory for the copies, recycled: a fresh allocation per frame
     * would cost its page faults at every copy */
    AVBufferPool *pool;
    size_t pool_size;
    /* NVDEC's zero-copy path: frames kept on the GPU (cuda_ring.h) */
    int zero_copy;
    CudaRing *ring;
    char zero_copy_note[256]; /* why not, when it was not tried */
    int index;                /* of its device in the table (devices[][index]) */
    int ring_slots;           /* of its ring, 0: cuda_ring.c's default */
};

/* AV_CUDA_USE_PRIMARY_CONTEXT (libavutil/hwcontext_cuda.h, which needs
 * the CUDA SDK's cuda.h here): FFmpeg 4.3 and later */
#define AV_CUDA_PRIMARY (1 << 0)

static const struct {
    const char *name;
    int mode;
    enum AVHWDeviceType type;
} modes[] = {
    {"auto", HWDEC_AUTO, AV_HWDEVICE_TYPE_NONE},
    {"none", HWDEC_NONE, AV_HWDEVICE_TYPE_NONE},
    {"cuda", HWDEC_CUDA, AV_HWDEVICE_TYPE_CUDA},
    {"vaapi", HWDEC_VAAPI, AV_HWDEVICE_TYPE_VAAPI},
};

int hwdec_parse(const char *name, int *mode)
{
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        if (!strcmp(name, modes[i].name)) {
            *mode = modes[i].mode;
            return 0;
        }
    return -1;
}

int hwdec_parse_pair(const char *arg, int *ref, int *dist)
{
    const char *comma = strchr(arg, ',');
    char first[16];
    if (!comma)
        return hwdec_parse(arg, ref) || hwdec_parse(arg, dist);
    if ((size_t)(comma - arg) >= sizeof(first))
        return -1;
    memcpy(first, arg, (size_t)(comma - arg));
    first[comma - arg] = 0;
    return hwdec_parse(first, ref) || hwdec_parse(comma + 1, dist);
}

/* The codec's pixel format for frames of a device type, or NONE. */
static enum AVPixelFormat hw_format_for(const AVCodec *codec, enum AVHWDeviceType type)
{
    for (int i = 0;; i++) {
        const AVCodecHWConfig *cfg = avcodec_get_hw_config(codec, i);
        if (!cfg)
            return AV_PIX_FMT_NONE;
        if ((cfg->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) && cfg->device_type == type)
            return cfg->pix_fmt;
    }
}

static enum AVPixelFormat get_format(AVCodecContext *codec, const enum AVPixelFormat *list)
{
    Hwdec *hw = codec->opaque;
    for (const enum AVPixelFormat *p = list; *p != AV_PIX_FMT_NONE; p++)
        if (*p == hw->hw_format) {
            hw->active = 1;
            return *p;
        }
    /* the hwaccel refused the stream: the first software format */
    hw->active = 0;
    for (const enum AVPixelFormat *p = list; *p != AV_PIX_FMT_NONE; p++) {
        const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(*p);
        if (d && !(d->flags & AV_PIX_FMT_FLAG_HWACCEL))
            return *p;
    }
    return AV_PIX_FMT_NONE;
}

/* The devices, kept for the whole process (hwdec_release_devices drops
 * them) and reused by the decoders of later runs: a CUDA device is a CUDA
 * context, whose creation costs ~0.1 s or more. Each decoder of a slot
 * (hwdec_use_slot: a batch's job slot; 0 for the tool's single run) has
 * its own, the reference's and the distorted's: decoders that share a
 * CUDA context serialise their copies on its default stream (measured on
 * an H200: 32 jobs, 4 at a time, 481 pairs/s on one shared context;
 * doc/performance.md). Decoders whose frames stay on the GPU (cuda_ring.h)
 * take the CUDA device's primary context instead (AV_CUDA_PRIMARY), from a
 * table of their own. A device that failed to open is tried again next
 * time. */
#define MAX_DEVICES 512
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static AVBufferRef *devices[3][MAX_DEVICES]; /* CUDA, CUDA primary context, VAAPI */
/* Zero-copy rings (cuda_ring.h) a finished job of the slot left for the
 * next one (hwdec_park): its exportable CUDA allocations are made once
 * per slot and decoder rather than once per job. One per device index. */
static CudaRing *spares[MAX_DEVICES];
static _Thread_local int thread_slot;
static _Thread_local int thread_decoders; /* opened by this thread since its slot was set */

void hwdec_use_slot(int slot)
{
    thread_slot = slot;
    thread_decoders = 0;
}

static int device_ref(enum AVHWDeviceType type, int flags, AVBufferRef **out, int *index)
{
    int t = type != AV_HWDEVICE_TYPE_CUDA ? 2 : flags ? 1 : 0, ret = 0;
    int i = (2 * thread_slot + (thread_decoders & 1)) % MAX_DEVICES;
    *index = i;
    pthread_mutex_lock(&devices_lock);
    if (!devices[t][i])
        ret = av_hwdevice_ctx_create(&devices[t][i], type, NULL, NULL, flags);
    if (ret >= 0 && !(*out = av_buffer_ref(devices[t][i])))
        ret = AVERROR(ENOMEM);
    pthread_mutex_unlock(&devices_lock);
    if (ret >= 0)
        thread_decoders++;
    return ret;
}

void hwdec_release_devices(void)
{
    pthread_mutex_lock(&devices_lock);
    for (int t = 0; t < 3; t++)
        for (int i = 0; i < MAX_DEVICES; i++)
            av_buffer_unref(&devices[t][i]);
    for (int i = 0; i < MAX_DEVICES; i++)
        cuda_ring_free(&spares[i]);
    pthread_mutex_unlock(&devices_lock);
}

/* One device type: 0 and *out set, or a negative AVERROR (why in msg). */
static int try_type(Hwdec **out, AVCodecContext *codec, enum AVHWDeviceType type, char *msg,
                    size_t msg_len)
{
    const char *tname = av_hwdevice_get_type_name(type);
    enum AVPixelFormat format = hw_format_for(codec->codec, type);
    char reason[AV_ERROR_MAX_STRING_SIZE] = "";
    Hwdec *hw;
    int ret;

    if (format == AV_PIX_FMT_NONE) {
        snprintf(msg, msg_len, "this FFmpeg has no %s decoder for %s", tname,
                 codec->codec->name);
        return AVERROR(ENOSYS);
    }
    hw = av_mallocz(sizeof(*hw));
    if (!hw || !(hw->host = av_frame_alloc())) {
        hwdec_free(&hw);
        snprintf(msg, msg_len, "out of memory");
        return AVERROR(ENOMEM);
    }
    hw->type = type;
    hw->hw_format = format;
    if (type == AV_HWDEVICE_TYPE_CUDA)
        hw->zero_copy = cuda_ring_available(hw->zero_copy_note, sizeof(hw->zero_copy_note));
    /* The zero-copy path puts both decoders in the device's primary context
     * rather than one context each: fewer contexts for the GPU to switch
     * between (HEVC scored 10-20% faster on the H200). Copying frames to
     * the host it is the other way round (HEVC 603-622 against 871-899 fps):
     * own contexts there. doc/performance.md, issue #18. */
    ret = device_ref(type, hw->zero_copy ? AV_CUDA_PRIMARY : 0, &hw->device, &hw->index);
    if (ret < 0) {
        av_strerror(ret, reason, sizeof(reason));
        snprintf(msg, msg_len, "no %s device (%s%s)", tname, reason,
                 type == AV_HWDEVICE_TYPE_CUDA ? ": no NVIDIA GPU or driver?" : "");
        hwdec_free(&hw);
        return ret;
    }
    codec->hw_device_ctx = av_buffer_ref(hw->device);
    if (!codec->hw_device_ctx) {
        hwdec_free(&hw);
        snprintf(msg, msg_len, "out of memory");
        return AVERROR(ENOMEM);
    }
    /* the zero-copy path keeps up to QGPU_CUDA_HELD decoded frames until
     * their copies on the GPU have run (cuda_ring.h): surfaces to spare */
    if (hw->zero_copy)
        codec->extra_hw_frames = QGPU_CUDA_HELD;
    codec->opaque = hw;
    codec->get_format = get_format;
    *out = hw;
    return 0;
}

int hwdec_setup(Hwdec **out, AVCodecContext *codec, int mode, char *note, size_t note_len,
                char *err, size_t err_len)
{
    static const enum AVHWDeviceType auto_order[] = {AV_HWDEVICE_TYPE_CUDA,
                                                     AV_HWDEVICE_TYPE_VAAPI};
    char msg[256];
    int ret;

    *out = NULL;
    if (note_len)
        *note = 0;
    if (mode == HWDEC_NONE || codec->codec_id == AV_CODEC_ID_RAWVIDEO)
        return 0; /* raw video (y4m too): nothing to decode */
    if (mode != HWDEC_AUTO) {
        enum AVHWDeviceType type = mode == HWDEC_CUDA ? AV_HWDEVICE_TYPE_CUDA
                                                      : AV_HWDEVICE_TYPE_VAAPI;
        ret = try_type(out, codec, type, msg, sizeof(msg));
        if (ret < 0)
            snprintf(err, err_len, "--hwdec %s: %s", av_hwdevice_get_type_name(type), msg);
        return ret < 0 ? -1 : 0;
    }
    for (size_t i = 0; i < sizeof(auto_order) / sizeof(auto_order[0]); i++) {
        if (hw_format_for(codec->codec, auto_order[i]) == AV_PIX_FMT_NONE)
            continue; /* nothing to say: no such decoder for this codec */
        ret = try_type(out, codec, auto_order[i], msg, sizeof(msg));
        if (ret == 0)
            return 0;
        if (ret == AVERROR(ENOMEM)) {
            snprintf(err, err_len, "out of memory");
            return -1;
        }
        if (note_len && strlen(note) + strlen(msg) + 3 < note_len)
            snprintf(note + strlen(note), note_len - strlen(note), "%s%s", *note ? "; " : "",
                     msg);
    }
    return 0;
}

int hwdec_active(const Hwdec *hw)
{
    return hw && hw->active;
}

const char *hwdec_name(const Hwdec *hw)
{
    return hwdec_active(hw) ? av_hwdevice_get_type_name(hw->type) : "cpu";
}

/* hw->host: a frame in the device's software format, its memory from the
 * pool. 0 or a negative AVERROR. */
static int host_frame(Hwdec *hw, const AVFrame *src)
{
    const AVHWFramesContext *fc;
    int size;
    if (!src->hw_frames_ctx)
        return AVERROR(EINVAL);
    fc = (const AVHWFramesContext *)src->hw_frames_ctx->data;
    size = av_image_get_buffer_size(fc->sw_format, src->width, src->height, 64);
    if (size < 0)
        return size;
    if (!hw->pool || hw->pool_size != (size_t)size) {
        av_buffer_pool_uninit(&hw->pool); /* frames still out keep their memory */
        hw->pool = av_buffer_pool_init((size_t)size, NULL);
        hw->pool_size = (size_t)size;
        if (!hw->pool)
            return AVERROR(ENOMEM);
    }
    hw->host->buf[0] = av_buffer_pool_get(hw->pool);
    if (!hw->host->buf[0])
        return AVERROR(ENOMEM);
    hw->host->format = fc->sw_format;
    hw->host->width = src->width;
    hw->host->height = src->height;
    size = av_image_fill_arrays(hw->host->data, hw->host->linesize, hw->host->buf[0]->data,
                                fc->sw_format, src->width, src->height, 64);
    return size < 0 ? size : 0;
}

int hwdec_download(Hwdec *hw, AVFrame *frame, int bitdepth)
{
    char msg[256];
    int ret;
    if (!hw || frame->format != hw->hw_format)
        return 0;
    if (hw->zero_copy) {
        if (!hw->ring) {
            /* the ring the slot's previous job (or --hwdec auto's measuring
             * decoder) left, when it fits */
            pthread_mutex_lock(&devices_lock);
            if (cuda_ring_fits(spares[hw->index], frame, hw->ring_slots)) {
                hw->ring = spares[hw->index];
                spares[hw->index] = NULL;
            }
            pthread_mutex_unlock(&devices_lock);
        }
        ret = cuda_ring_take(&hw->ring, frame, bitdepth, hw->ring_slots, msg, sizeof(msg));
        if (ret)
            return ret < 0 ? ret : 0;
    }
    av_frame_unref(hw->host);
    ret = host_frame(hw, frame);
    if (ret >= 0)
        ret = av_hwframe_transfer_data(hw->host, frame, 0);
    if (ret >= 0)
        ret = av_frame_copy_props(hw->host, frame);
    if (ret < 0) {
        av_frame_unref(hw->host);
        return ret;
    }
    av_frame_unref(frame);
    av_frame_move_ref(frame, hw->host);
    return 0;
}

int hwdec_pipeline_depth(int ref_mode, int dist_mode)
{
    return (ref_mode == HWDEC_AUTO || ref_mode == HWDEC_CUDA || dist_mode == HWDEC_AUTO ||
            dist_mode == HWDEC_CUDA) && cuda_ring_available(NULL, 0)
               ? 4
               : 0;
}

int hwdec_slot(const Hwdec *hw)
{
    return hw ? hw->index / 2 : 0;
}

int hwdec_ring_slots(const Hwdec *hw)
{
    return hw ? hw->ring_slots : 0;
}

void hwdec_set_ring_slots(Hwdec *hw, int slots)
{
    if (hw)
        hw->ring_slots = slots;
}

int hwdec_holds_frames(const Hwdec *hw, int n)
{
    return !hw || !hw->zero_copy || hw->ring_slots >= n;
}

int hwdec_on_device(const Hwdec *hw, const AVFrame *frame)
{
    return hw && cuda_ring_owns(hw->ring, frame);
}

int hwdec_device_to_host(Hwdec *hw, AVFrame *frame)
{
    char msg[256];
    return cuda_ring_to_host(hw->ring, frame, msg, sizeof(msg));
}

AVBufferRef *hwdec_zero_copy_device(const Hwdec *hw)
{
    return hwdec_active(hw) && hw->type == AV_HWDEVICE_TYPE_CUDA && hw->zero_copy &&
                   !*cuda_ring_note(hw->ring)
               ? hw->device
               : NULL;
}

double hwdec_zero_copy_seconds(const Hwdec *hw)
{
    return hwdec_active(hw) ? cuda_ring_copy_seconds(hw->ring) : 0.0;
}

const char *hwdec_zero_copy_note(const Hwdec *hw)
{
    if (!hwdec_active(hw) || hw->type != AV_HWDEVICE_TYPE_CUDA)
        return "";
    if (!hw->zero_copy)
        return hw->zero_copy_note;
    return *cuda_ring_note(hw->ring) ? cuda_ring_note(hw->ring) : "";
}

int hwdec_semiplanar_depth(enum AVPixelFormat format)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(format);
    int bytes;
    if (!d || d->nb_components != 3 || d->log2_chroma_w != 1 || d->log2_chroma_h != 1 ||
        (d->flags & (AV_PIX_FMT_FLAG_BE | AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_HWACCEL |
                     AV_PIX_FMT_FLAG_PAL)))
        return 0;
    bytes = d->comp[0].step;
    if (d->comp[0].plane != 0 || d->comp[1].plane != 1 || d->comp[2].plane != 1 ||
        d->comp[1].step != 2 * bytes || d->comp[1].offset != 0 || d->comp[2].offset != bytes)
        return 0; /* NV21 (Cr first), other packings */
    if (bytes == 1 && d->comp[0].depth == 8 && d->comp[0].shift == 0)
        return 8;
    if (bytes == 2 && d->comp[0].depth + d->comp[0].shift == 16)
        return d->comp[0].depth;
    return 0;
}

static enum AVPixelFormat planar_420(int depth)
{
    return depth == 8 ? AV_PIX_FMT_YUV420P : depth == 10 ? AV_PIX_FMT_YUV420P10LE
         : depth == 12 ? AV_PIX_FMT_YUV420P12LE : AV_PIX_FMT_YUV420P16LE;
}

int hwdec_to_planar(const AVFrame *src, int depth, AVFrame *dst)
{
    int cw = (src->width + 1) / 2, ch = (src->height + 1) / 2, ret;
    int shift = depth > 8 ? 16 - depth : 0;

    if (depth != 8 && depth != 10 && depth != 12 && depth != 16)
        return AVERROR(ENOSYS);
    av_frame_unref(dst);
    dst->format = planar_420(depth);
    dst->width = src->width;
    dst->height = src->height;
    if ((ret = av_frame_get_buffer(dst, 0)) < 0)
        return ret;
    for (int y = 0; y < src->height; y++) {
        const uint8_t *in = src->data[0] + (ptrdiff_t)y * src->linesize[0];
        uint8_t *o = dst->data[0] + (ptrdiff_t)y * dst->linesize[0];
        if (depth == 8) {
            memcpy(o, in, (size_t)src->width);
        } else {
            for (int x = 0; x < src->width; x++)
                ((uint16_t *)o)[x] = (uint16_t)(((const uint16_t *)in)[x] >> shift);
        }
    }
    for (int y = 0; y < ch; y++) {
        const uint8_t *in = src->data[1] + (ptrdiff_t)y * src->linesize[1];
        uint8_t *cb = dst->data[1] + (ptrdiff_t)y * dst->linesize[1];
        uint8_t *cr = dst->data[2] + (ptrdiff_t)y * dst->linesize[2];
        if (depth == 8) {
            for (int x = 0; x < cw; x++) {
                cb[x] = in[2 * x];
                cr[x] = in[2 * x + 1];
            }
        } else {
            const uint16_t *pairs = (const uint16_t *)in;
            for (int x = 0; x < cw; x++) {
                ((uint16_t *)cb)[x] = (uint16_t)(pairs[2 * x] >> shift);
                ((uint16_t *)cr)[x] = (uint16_t)(pairs[2 * x + 1] >> shift);
            }
        }
    }
    return 0;
}

void hwdec_park(Hwdec *hw)
{
    CudaRing *old = NULL;
    if (!hw || !hw->ring)
        return;
    if (!cuda_ring_park(hw->ring)) {
        cuda_ring_free(&hw->ring);
        return;
    }
    pthread_mutex_lock(&devices_lock);
    old = spares[hw->index];
    spares[hw->index] = hw->ring;
    pthread_mutex_unlock(&devices_lock);
    hw->ring = NULL;
    cuda_ring_free(&old);
}

void hwdec_free(Hwdec **phw)
{
    Hwdec *hw = *phw;
    if (!hw)
        return;
    cuda_ring_free(&hw->ring); /* its memory goes with the last frame out */
    av_buffer_unref(&hw->device);
    av_frame_free(&hw->host);
    av_buffer_pool_uninit(&hw->pool);
    av_free(hw);
    *phw = NULL;
}
