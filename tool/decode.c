/*
 * Decoding through libavformat/libavcodec. Frames in a planar YUV/gray
 * format the library takes (8-bit, or 9..16-bit little-endian) are handed
 * over as they are; anything else (NV12, P010, RGB, big-endian...) goes
 * through libswscale to the nearest planar format, as does any frame when
 * decoder_set_output() asked for another size or format.
 *
 * Damaged input: a packet the decoder rejects, a frame it flags as decoded
 * with errors (concealment) and the incomplete last frame of a truncated
 * raw/y4m file are skipped and counted, with a rate-limited warning; the
 * frame is not delivered (the pairing re-aligns by presentation time).
 *
 * Changes midway are not papered over: a frame whose size, pixel format or
 * range differs from the first frame's ends the input with an error (it
 * would otherwise be rescaled silently), and a y4m stream that loses its
 * framing (no FRAME marker where a frame should start) is an error at
 * once. Bytes come from input.c (files by name, streams read once).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/parseutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "decode.h"
#include "cuda_ring.h"
#include "cuda_upload.h"
#include "hwdec.h"
#include "input.h"
#include "pinned_frames.h"
#include "sessions.h"

struct Decoder {
    InputSource *input;
    char name[256];      /* the path, for messages (shortened when long) */
    AVFormatContext *fmt;
    AVCodecContext *codec;
    int stream;
    AVPacket *packet;
    AVFrame *frame;
    AVFrame *pending;    /* decoder_start's first frame, delivered first */
    AVFrame *held;       /* a window's end: the first frame after it, as decoded
                            (the next window's first when it follows on) */
    AVFrame *converted;
    AVFrame *shifted;
    AVFrame *ranged;
    AVFrame *delivered;  /* the frame whose data the last picture shows */
    struct SwsContext *sws;
    int draining;
    int eof;
    unsigned frames;
    unsigned packets;    /* packets of our stream sent to the decoder */
    double last_pts;     /* seconds, of the last frame delivered */
    /* the frames, as the first one is (or the container says) */
    int have_first;
    int src_w, src_h;
    enum AVPixelFormat src_fmt;
    int src_layout, src_bitdepth; /* native, or the planar format converted to */
    int full_range, range_known;
    int chroma_location, interlaced;
    /* output */
    int out_w, out_h, out_layout, out_bitdepth;
    enum AVPixelFormat out_pix_fmt;
    int to_limited;      /* full-range frames are converted to limited */
    uint16_t *range_lut[2]; /* full -> limited, luma and chroma, at src depth */
    int sws_flags;
    double fps;
    int timestamps;      /* 0: frame times are made up by the demuxer */
    double start_time;   /* seconds, of the stream's first packet (NAN: unknown) */
    unsigned expected;   /* frames the container announces, 0 when unknown */
    /* decoding errors: skipped and counted */
    const char *label;   /* "reference" or "distorted", for warnings */
    unsigned errors;     /* packets/frames the decoder failed on */
    unsigned corrupt;    /* frames decoded with errors, not delivered */
    unsigned in_a_row;   /* errors since the last good frame */
    DecoderWarn warn;
    void *warn_opaque;
    /* raw video and y4m: every frame has frame_size bytes; a shorter last
     * one means the file is truncated */
    int frame_size;
    int y4m;
    /* hardware decoding (hwdec.c): NULL when the CPU decodes */
    Hwdec *hw;
    char hw_note[512];   /* why not, when --hwdec auto found no device */
    int pass_semiplanar; /* semi-planar frames go out as QGPU_LAYOUT_NV12 */
    int64_t data_end;    /* file offset after the last whole frame read */
    int64_t header_size; /* y4m: its header line */
    PinnedFrames *pinned; /* CPU decoding into pinned blocks (pinned_frames.h) */
    int pinned_off;       /* decoder_use_pinned_frames(d, 0) */
    /* the mixed decode: frames put on the GPU beside the other input's
     * NVDEC frames (cuda_upload.h), else NULL */
    CudaUpload *upload;
    /* decoding in sessions (sessions.h): the frames come from decoders of
     * their own on the same file, each on a stretch between key frames;
     * this one only hands them out in order */
    Sessions *sessions;
    char *path;          /* as given to decoder_open_hw, for the sessions' decoders */
    int hwdec_mode;      /* enum HwdecMode it was opened with */
    /* a session's decoder: frames before win_start (the stream's time base)
     * are dropped, the first at or after win_end ends its stretch */
    int windowed, window_done;
    int64_t win_start, win_end;
    int64_t win_first;   /* time stamp of its first frame (AV_NOPTS_VALUE: none yet) */
};

/* Depth of semi-planar 4:2:0 frames (NV12, P010...), 0 for other formats:
 * the format's, or the stream's own when it is lower (12-bit video in
 * P016 words). */
static int semi_depth(const Decoder *d, enum AVPixelFormat f)
{
    int depth = hwdec_semiplanar_depth(f);
    const AVPixFmtDescriptor *sw = d->codec ? av_pix_fmt_desc_get(d->codec->sw_pix_fmt) : NULL;
    if (depth > 8 && sw && sw->comp[0].depth > 8 && sw->comp[0].depth < depth)
        depth = sw->comp[0].depth;
    return depth;
}

/* Whether semi-planar pictures of this format and size go out as they
 * are (QGPU_LAYOUT_NV12) at `depth`: passes_as_is for a frame, and
 * decoder_picture_format for the first frame's description. */
static int semiplanar_as_is(const Decoder *d, enum AVPixelFormat format, int w, int h, int depth)
{
    return semi_depth(d, format) == depth && w == d->out_w && h == d->out_h &&
           d->out_layout == QGPU_LAYOUT_420 && d->pass_semiplanar &&
           !(d->to_limited && d->full_range) && d->out_bitdepth == depth;
}

/* The depth of a frame in GPU memory's samples (its software format's,
 * or the codec's when fewer bits: 12-bit video in P016), 0 for others. */
static int hw_depth(const Decoder *d, const AVFrame *f)
{
    if (!f->hw_frames_ctx)
        return 0;
    return semi_depth(d, ((const AVHWFramesContext *)f->hw_frames_ctx->data)->sw_format);
}

/* The planar format qgpu reads for a layout and bit depth. */
static enum AVPixelFormat planar_format(int layout, int bitdepth)
{
    static const enum AVPixelFormat table[4][5] = {
        /*            8                 10                    12                    16 */
        {AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10LE, AV_PIX_FMT_YUV420P12LE,
         AV_PIX_FMT_YUV420P16LE, AV_PIX_FMT_YUV420P9LE},
        {AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV422P10LE, AV_PIX_FMT_YUV422P12LE,
         AV_PIX_FMT_YUV422P16LE, AV_PIX_FMT_YUV422P9LE},
        {AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10LE, AV_PIX_FMT_YUV444P12LE,
         AV_PIX_FMT_YUV444P16LE, AV_PIX_FMT_YUV444P9LE},
        {AV_PIX_FMT_GRAY8, AV_PIX_FMT_GRAY10LE, AV_PIX_FMT_GRAY12LE, AV_PIX_FMT_GRAY16LE,
         AV_PIX_FMT_GRAY9LE},
    };
    int column = bitdepth <= 8 ? 0 : bitdepth == 9 ? 4 : bitdepth <= 10 ? 1 : bitdepth <= 12 ? 2 : 3;
    return table[layout][column];
}

/* Layout and depth of a pixel format qgpu reads directly, or -1. */
static int native_layout(enum AVPixelFormat f, int *bitdepth)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f);
    if (!d || (d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BE |
                           AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM)))
        return -1;
    if (!(d->flags & AV_PIX_FMT_FLAG_PLANAR) && d->nb_components != 1)
        return -1;
    if (d->nb_components == 2 || d->nb_components == 4) /* gray+alpha, yuva */
        return -1;
    for (int c = 0; c < d->nb_components; c++)
        if (d->comp[c].plane != c || d->comp[c].shift != 0 ||
            d->comp[c].depth != d->comp[0].depth)
            return -1;
    *bitdepth = d->comp[0].depth;
    if (*bitdepth < 8 || *bitdepth > 16)
        return -1;
    if (d->nb_components == 1)
        return QGPU_LAYOUT_400;
    if (d->log2_chroma_w == 1 && d->log2_chroma_h == 1)
        return QGPU_LAYOUT_420;
    if (d->log2_chroma_w == 1 && d->log2_chroma_h == 0)
        return QGPU_LAYOUT_422;
    if (d->log2_chroma_w == 0 && d->log2_chroma_h == 0)
        return QGPU_LAYOUT_444;
    return -1;
}

/* For formats qgpu can't read: the planar format to convert to. */
static void nearest_planar(enum AVPixelFormat f, int *layout, int *bitdepth)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f);
    int depth = d ? d->comp[0].depth : 8;
    *bitdepth = depth <= 8 ? 8 : depth <= 10 ? 10 : depth <= 12 ? 12 : 16;
    if (!d || (d->flags & AV_PIX_FMT_FLAG_RGB))
        *layout = QGPU_LAYOUT_444;
    else if (d->nb_components <= 2)
        *layout = QGPU_LAYOUT_400;
    else if (d->log2_chroma_w == 1 && d->log2_chroma_h == 1)
        *layout = QGPU_LAYOUT_420;
    else if (d->log2_chroma_w == 1)
        *layout = QGPU_LAYOUT_422;
    else
        *layout = QGPU_LAYOUT_444;
}


static void set_error(char *err, size_t len, const char *what, const char *name, int code)
{
    char buf[AV_ERROR_MAX_STRING_SIZE] = "";
    if (code)
        av_strerror(code, buf, sizeof(buf));
    snprintf(err, len, "%s: %s%s%s", name, what, code ? ": " : "", buf);
}

/* The message for a failed avformat_open_input() or find_stream_info(). */
static void open_error(char *err, size_t len, const Decoder *d, int code)
{
    if (code == AVERROR_EXIT)
        set_error(err, len, "interrupted while opening", d->name, 0);
    else if ((code == AVERROR_INVALIDDATA || code == AVERROR_EOF) && input_is_stream(d->input))
        set_error(err, len, "not a video FFmpeg can read from a stream (a pipe is read once, "
                  "without seeking: a format that needs to seek, such as an MP4 whose index "
                  "is at its end, must be given as a file)", d->name, 0);
    else if (code == AVERROR_INVALIDDATA || code == AVERROR_EOF)
        set_error(err, len, "not a video or image file FFmpeg can read", d->name, 0);
    else
        set_error(err, len, "cannot open", d->name, code);
}

/* Frames announced by the container: its count, else duration x rate. */
static unsigned expected_frames(const AVFormatContext *fmt, const AVStream *st, double fps)
{
    double seconds = 0.0;
    if (st->nb_frames > 0 && st->nb_frames < 1000000000)
        return (unsigned)st->nb_frames;
    if (st->duration > 0 && st->duration != AV_NOPTS_VALUE)
        seconds = st->duration * av_q2d(st->time_base);
    else if (fmt->duration > 0 && fmt->duration != AV_NOPTS_VALUE)
        seconds = fmt->duration / (double)AV_TIME_BASE;
    if (!(seconds > 0.0) || !(fps > 0.0) || seconds * fps > 1e9)
        return 0;
    return (unsigned)lrint(seconds * fps);
}

static void default_warn(void *opaque, const char *message)
{
    (void)opaque;
    fprintf(stderr, "qgpu: warning: %s\n", message);
}

static int decoder_alloc(Decoder **out, char *err, size_t err_len)
{
    Decoder *d = av_mallocz(sizeof(*d));
    if (!d) {
        snprintf(err, err_len, "out of memory");
        return AVERROR(ENOMEM);
    }
    d->packet = av_packet_alloc();
    d->frame = av_frame_alloc();
    d->pending = av_frame_alloc();
    d->held = av_frame_alloc();
    d->converted = av_frame_alloc();
    d->shifted = av_frame_alloc();
    d->ranged = av_frame_alloc();
    d->sws_flags = SWS_BICUBIC;
    d->label = "input";
    d->warn = default_warn;
    d->start_time = NAN;
    d->timestamps = 1;
    if (!d->packet || !d->frame || !d->pending || !d->held || !d->converted || !d->shifted ||
        !d->ranged) {
        decoder_close(&d);
        snprintf(err, err_len, "out of memory");
        return AVERROR(ENOMEM);
    }
    *out = d;
    return 0;
}

static int is_full_range_format(enum AVPixelFormat f)
{
    return f == AV_PIX_FMT_YUVJ420P || f == AV_PIX_FMT_YUVJ422P || f == AV_PIX_FMT_YUVJ444P ||
           f == AV_PIX_FMT_YUVJ440P || f == AV_PIX_FMT_YUVJ411P;
}

/* The frames' description (size, format, range...) from a frame, or from
 * the codec parameters when f is NULL. */
static void describe_source(Decoder *d, const AVFrame *f)
{
    const AVCodecParameters *par = d->fmt->streams[d->stream]->codecpar;
    enum AVColorRange range;
    d->src_w = f ? f->width : d->codec->width;
    d->src_h = f ? f->height : d->codec->height;
    d->src_fmt = f ? (enum AVPixelFormat)f->format : d->codec->pix_fmt;
    d->src_layout = native_layout(d->src_fmt, &d->src_bitdepth);
    if (d->src_layout < 0)
        nearest_planar(d->src_fmt, &d->src_layout, &d->src_bitdepth);
    if (semi_depth(d, d->src_fmt)) {
        d->src_layout = QGPU_LAYOUT_420;
        d->src_bitdepth = semi_depth(d, d->src_fmt);
    }
    range = f && f->color_range != AVCOL_RANGE_UNSPECIFIED ? f->color_range : par->color_range;
    d->range_known = range != AVCOL_RANGE_UNSPECIFIED || is_full_range_format(d->src_fmt);
    d->full_range = range == AVCOL_RANGE_JPEG ||
                    (range == AVCOL_RANGE_UNSPECIFIED && is_full_range_format(d->src_fmt));
    {
        const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(d->src_fmt);
        if (desc && (desc->flags & AV_PIX_FMT_FLAG_RGB)) {
            /* RGB becomes limited-range YUV in the conversion */
            d->full_range = 0;
            d->range_known = 1;
        }
    }
    d->chroma_location = f && f->chroma_location ? f->chroma_location : par->chroma_location;
    d->interlaced = par->field_order != AV_FIELD_UNKNOWN && par->field_order != AV_FIELD_PROGRESSIVE;
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(58, 7, 100)
    if (f && (f->flags & AV_FRAME_FLAG_INTERLACED))
        d->interlaced = 1;
#else
    if (f && f->interlaced_frame)
        d->interlaced = 1;
#endif
}

/* Raw video and y4m: the size of a frame, and y4m's header length, for
 * telling a truncated file. */
static void fixed_size_frames(Decoder *d)
{
    const char *name = d->fmt->iformat->name;
    const Y4mHeader *y4m = input_y4m(d->input);
    d->y4m = !strcmp(name, "yuv4mpegpipe");
    if (strcmp(name, "rawvideo") && !d->y4m)
        return;
    if (d->fmt->streams[d->stream]->codecpar->codec_id != AV_CODEC_ID_RAWVIDEO)
        return;
    d->frame_size = av_image_get_buffer_size(d->codec->pix_fmt, d->codec->width,
                                             d->codec->height, 1);
    if (d->frame_size < 0)
        d->frame_size = 0;
    if (d->y4m && y4m) {
        d->header_size = y4m->header_size;
        if (!y4m->rate_num) { /* F0:0 or no F: FFmpeg would make up 25 fps */
            d->fps = 0.0;
            d->timestamps = 0;
            d->expected = 0;
        }
    }
}

static int open_input(Decoder **out, const char *path, AVDictionary **opts,
                      const AVInputFormat *ifmt, int hwdec, int threads, char *err,
                      size_t err_len)
{
    Decoder *d;
    const AVCodec *codec = NULL;
    int ret = decoder_alloc(&d, err, err_len);
    if (ret < 0)
        return ret;
    if (input_open(&d->input, path, err, err_len)) {
        decoder_close(&d);
        return -1;
    }
    snprintf(d->name, sizeof(d->name), "%s", input_name(d->input));
    d->hwdec_mode = hwdec;
    if (!(d->path = av_strdup(path))) {
        ret = AVERROR(ENOMEM);
        set_error(err, err_len, "out of memory", d->name, 0);
        goto fail;
    }
    d->fmt = avformat_alloc_context();
    if (!d->fmt) {
        ret = AVERROR(ENOMEM);
        set_error(err, err_len, "out of memory", d->name, 0);
        goto fail;
    }
    d->fmt->interrupt_callback.callback = input_interrupted;
    d->fmt->interrupt_callback.opaque = d->input;
    if (input_avio(d->input)) {
        d->fmt->pb = input_avio(d->input);
        d->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    }
    ret = avformat_open_input(&d->fmt, input_url(d->input) ? input_url(d->input) : path, ifmt,
                              opts);
    if (ret < 0) {
        open_error(err, err_len, d, ret);
        goto fail;
    }
    ret = avformat_find_stream_info(d->fmt, NULL);
    if (ret < 0) {
        open_error(err, err_len, d, ret);
        goto fail;
    }
    ret = av_find_best_stream(d->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (ret == AVERROR_DECODER_NOT_FOUND) {
        int s = av_find_best_stream(d->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
        snprintf(err, err_len, "%s: no decoder for its video stream (codec %s)", d->name,
                 s >= 0 ? avcodec_get_name(d->fmt->streams[s]->codecpar->codec_id) : "?");
        goto fail;
    }
    if (ret < 0) {
        set_error(err, err_len, "no video stream", d->name, 0);
        goto fail;
    }
    d->stream = ret;
    d->codec = avcodec_alloc_context3(codec);
    if (!d->codec) {
        ret = AVERROR(ENOMEM);
        set_error(err, err_len, "out of memory", d->name, 0);
        goto fail;
    }
    avcodec_parameters_to_context(d->codec, d->fmt->streams[d->stream]->codecpar);
    d->codec->thread_count = threads; /* 0: the decoder picks */
    if (hwdec_setup(&d->hw, d->codec, hwdec, d->hw_note, sizeof(d->hw_note), err, err_len)) {
        ret = DECODER_ERR_HWDEC;
        goto fail;
    }
    if (!d->hw)
        pinned_frames_install(&d->pinned, d->codec);
    ret = avcodec_open2(d->codec, codec, NULL);
    if (ret < 0) {
        set_error(err, err_len, "cannot open decoder", d->name, ret);
        goto fail;
    }
    if (d->codec->width <= 0 || d->codec->height <= 0 || d->codec->pix_fmt == AV_PIX_FMT_NONE) {
        ret = AVERROR_INVALIDDATA;
        set_error(err, err_len, "video stream without a size or pixel format", d->name, 0);
        goto fail;
    }
    {
        AVRational r = d->fmt->streams[d->stream]->avg_frame_rate;
        if (r.num <= 0 || r.den <= 0)
            r = d->fmt->streams[d->stream]->r_frame_rate;
        d->fps = r.num > 0 && r.den > 0 ? av_q2d(r) : 0.0;
        if (!isfinite(d->fps))
            d->fps = 0.0;
    }
    {
        const AVStream *st = d->fmt->streams[d->stream];
        d->expected = expected_frames(d->fmt, st, d->fps);
        if (st->start_time != AV_NOPTS_VALUE)
            d->start_time = st->start_time * av_q2d(st->time_base);
    }
    if (native_layout(d->codec->pix_fmt, &(int){0}) < 0 &&
        !sws_isSupportedInput(d->codec->pix_fmt)) {
        ret = AVERROR_PATCHWELCOME;
        snprintf(err, err_len, "%s: unsupported pixel format %s (no conversion to planar YUV)",
                 d->name, av_get_pix_fmt_name(d->codec->pix_fmt));
        goto fail;
    }
    /* output: native when qgpu reads it, else the nearest planar format */
    describe_source(d, NULL);
    d->out_w = d->src_w;
    d->out_h = d->src_h;
    d->out_layout = d->src_layout;
    d->out_bitdepth = d->src_bitdepth;
    fixed_size_frames(d);
    d->out_pix_fmt = planar_format(d->out_layout, d->out_bitdepth);
    *out = d;
    return 0;
fail:
    decoder_close(&d);
    return ret < 0 ? ret : -1;
}

int decoder_open(Decoder **dec, const char *path, char *err, size_t err_len)
{
    return open_input(dec, path, NULL, NULL, HWDEC_NONE, 0, err, err_len);
}

int decoder_open_hw(Decoder **dec, const char *path, int hwdec, char *err, size_t err_len)
{
    return open_input(dec, path, NULL, NULL, hwdec, 0, err, err_len);
}

/* Splits a --raw spec; -1 with a message when it is not one. */
static int parse_raw_spec(const char *spec, int *w, int *h, char *pix_fmt, char *rate,
                          char *err, size_t err_len)
{
    AVRational r;
    char tail = 0;
    if (sscanf(spec, "%dx%d:%63[^:]:%31s", w, h, pix_fmt, rate) < 3 || *w <= 0 || *h <= 0 ||
        strchr(rate, ':')) {
        snprintf(err, err_len, "--raw %s: expected WxH:PIXFMT[:FPS], e.g. 1920x1080:yuv420p",
                 spec);
        return -1;
    }
    if (sscanf(spec, "%*dx%*d%c", &tail) == 1 && tail != ':') {
        snprintf(err, err_len, "--raw %s: expected WxH:PIXFMT[:FPS], e.g. 1920x1080:yuv420p",
                 spec);
        return -1;
    }
    if (av_get_pix_fmt(pix_fmt) == AV_PIX_FMT_NONE) {
        snprintf(err, err_len, "--raw %s: unknown pixel format '%s' (ffmpeg -pix_fmts lists "
                 "them)", spec, pix_fmt);
        return -1;
    }
    if (av_image_check_size(*w, *h, 0, NULL) < 0) {
        snprintf(err, err_len, "--raw %s: %dx%d is too large", spec, *w, *h);
        return -1;
    }
    if (*rate && (av_parse_video_rate(&r, rate) < 0 || r.num <= 0 || r.den <= 0)) {
        snprintf(err, err_len, "--raw %s: bad frame rate '%s'", spec, rate);
        return -1;
    }
    return 0;
}

int decoder_check_raw_spec(const char *spec, char *err, size_t err_len)
{
    char pix_fmt[64] = "", rate[32] = "";
    int w, h;
    return parse_raw_spec(spec, &w, &h, pix_fmt, rate, err, err_len);
}

int decoder_open_raw(Decoder **dec, const char *path, const char *spec, char *err,
                     size_t err_len)
{
    AVDictionary *opts = NULL;
    char size[64], pix_fmt[64] = "", rate[32] = "";
    int w, h, ret;
    if (parse_raw_spec(spec, &w, &h, pix_fmt, rate, err, err_len))
        return -1;
    snprintf(size, sizeof(size), "%dx%d", w, h);
    av_dict_set(&opts, "video_size", size, 0);
    av_dict_set(&opts, "pixel_format", pix_fmt, 0);
    if (*rate)
        av_dict_set(&opts, "framerate", rate, 0);
    ret = open_input(dec, path, &opts, av_find_input_format("rawvideo"), HWDEC_NONE, 0, err,
                     err_len);
    av_dict_free(&opts);
    return ret;
}

void decoder_get_info(const Decoder *d, DecoderInfo *info)
{
    info->width = d->out_w;
    info->height = d->out_h;
    info->layout = d->out_layout;
    info->bitdepth = d->out_bitdepth;
    info->pix_fmt = av_get_pix_fmt_name(d->src_fmt);
    info->fps = d->fps;
    info->frames = d->expected;
    info->full_range = d->full_range;
    info->range_known = d->range_known;
    info->chroma_location = d->chroma_location;
    info->interlaced = d->interlaced;
    info->native_bitdepth = d->src_bitdepth;
    info->timestamps = d->timestamps;
    info->stream = input_is_stream(d->input);
    info->decoder = hwdec_name(d->hw);
    info->hw_note = d->hw_note;
    info->hw_refused = d->hw && d->have_first && !hwdec_active(d->hw);
    info->semiplanar = semi_depth(d, d->src_fmt) != 0;
    {
        const AVCodecParameters *par = d->fmt->streams[d->stream]->codecpar;
        const char *name = av_get_pix_fmt_name(par->format);
        info->stream_pix_fmt = name ? name : "";
        info->codec_id = par->codec_id;
        info->profile = par->profile;
        info->bit_rate = par->bit_rate > 0 ? (double)par->bit_rate
                         : d->fmt->bit_rate > 0 ? (double)d->fmt->bit_rate : 0.0;
        info->threads = d->codec->thread_count > 0 ? d->codec->thread_count : 1;
    }
    info->sessions = d->sessions ? sessions_count(d->sessions) : 1;
    info->read_ahead = d->sessions && hwdec_holds_frames(d->hw, SESSIONS_FRAMES_OUT)
                           ? SESSIONS_READ_AHEAD
                           : 0;
}

/* Seeks d's stream to the last key frame at or before ts (the stream's
 * time base) and drops what the decoder held: 0 or an AVERROR (message:
 * `what`). */
static int seek_and_flush(Decoder *d, int64_t ts, const char *what, char *err, size_t err_len)
{
    int ret = avformat_seek_file(d->fmt, d->stream, INT64_MIN, ts, ts, 0);
    if (ret < 0) {
        set_error(err, err_len, what, d->name, ret);
        return ret;
    }
    avcodec_flush_buffers(d->codec);
    av_packet_unref(d->packet);
    av_frame_unref(d->frame);
    av_frame_unref(d->pending);
    av_frame_unref(d->held);
    d->delivered = NULL;
    d->draining = 0;
    d->eof = 0;
    return 0;
}

/* ------------------------------------------------ decoding in sessions */

/* Why d cannot be decoded in sessions ("" when it can). */
static const char *sessions_refusal(const Decoder *d)
{
    if (!input_url(d->input) || input_is_stream(d->input))
        return "a stream is read once";
    if (d->frame_size)
        return "raw video and y4m are read, not decoded";
    if (d->upload)
        return "the mixed decode puts its frames on the GPU one by one";
    if (!d->timestamps)
        return "its frames have no time stamps";
    return "";
}

void decoder_set_ring_slots(Decoder *d, int slots)
{
    hwdec_set_ring_slots(d->hw, slots);
}

int decoder_ring_slots(const Decoder *d)
{
    return hwdec_ring_slots(d->hw);
}

int decoder_can_add_cpu_sessions(const Decoder *d)
{
    if (!hwdec_active(d->hw))
        return 1; /* CPU decoders beside a CPU decoder */
    return hwdec_zero_copy_device(d->hw) && d->pass_semiplanar && !d->to_limited &&
           d->out_w == d->src_w && d->out_h == d->src_h && d->out_bitdepth == d->src_bitdepth;
}

int decoder_use_sessions(Decoder *d, int n, int n_cpu, char *note, size_t note_len, char *err,
                         size_t err_len)
{
    const char *why = sessions_refusal(d);
    int bytes;
    *note = 0;
    if ((n < 2 && n_cpu < 1) || d->sessions)
        return 1;
    if (*why) {
        snprintf(note, note_len, "%s", why);
        return 1;
    }
    if (n_cpu > 0 && !decoder_can_add_cpu_sessions(d)) {
        snprintf(note, note_len, "CPU decoders join the CPU or a hardware decoder whose "
                 "frames stay on the GPU as they are (--hwdec cuda, no scaling or range "
                 "conversion)");
        return 1;
    }
    bytes = av_image_get_buffer_size(planar_format(d->out_layout, d->out_bitdepth), d->out_w,
                                     d->out_h, 1);
    /* this decoder decodes on in its own thread, sessions beside it */
    return sessions_start(&d->sessions, d, input_url(d->input), d->stream, n - 1, n_cpu,
                          bytes > 0 ? (size_t)bytes : 0, hwdec_slot(d->hw), note, note_len,
                          err, err_len);
}

int decoder_open_session(const Decoder *proto, int on_cpu, int threads, int ring_slots,
                         Decoder **out, char *err, size_t err_len)
{
    Decoder *d;
    int beside_nvdec = on_cpu && hwdec_active(proto->hw);
    int hwdec = on_cpu ? HWDEC_NONE : proto->hwdec_mode;
    int ret = open_input(&d, proto->path, NULL, NULL, hwdec, threads, err, err_len);
    if (ret < 0)
        return ret;
    d->label = proto->label;
    d->warn = proto->warn;
    d->warn_opaque = proto->warn_opaque;
    hwdec_set_ring_slots(d->hw, ring_slots);
    if ((ret = decoder_start(d, err, err_len)) < 0) {
        decoder_close(&d);
        return ret;
    }
    /* a CPU decoder beside NVDEC: planar frames of the same samples, made
     * semi-planar and put on the GPU in a ring of its own (cuda_upload.h) */
    if (beside_nvdec && d->have_first && d->src_bitdepth == proto->src_bitdepth &&
        decoder_upload_beside(d, proto, proto->out_bitdepth) == 1)
        cuda_upload_set_slots(d->upload, ring_slots);
    if (!d->have_first || d->stream != proto->stream || d->src_w != proto->src_w ||
        d->src_h != proto->src_h || d->src_bitdepth != proto->src_bitdepth ||
        d->full_range != proto->full_range || (beside_nvdec && !d->upload) ||
        (!beside_nvdec && (d->src_fmt != proto->src_fmt ||
                           strcmp(hwdec_name(d->hw), hwdec_name(proto->hw))))) {
        snprintf(err, err_len, "%s: a second decoder of the file did not decode it as the "
                 "first did (%s, %s); use one decoder: --decode-sessions 1 --cpu-sessions 0",
                 d->name, hwdec_name(d->hw), av_get_pix_fmt_name(d->src_fmt));
        decoder_close(&d);
        return AVERROR_INVALIDDATA;
    }
    /* the first decoder's output settings */
    d->out_w = proto->out_w;
    d->out_h = proto->out_h;
    d->out_layout = proto->out_layout;
    d->out_bitdepth = proto->out_bitdepth;
    d->out_pix_fmt = proto->out_pix_fmt;
    d->sws_flags = proto->sws_flags;
    d->to_limited = proto->to_limited;
    d->pass_semiplanar = proto->pass_semiplanar;
    d->pinned_off = 1;
    *out = d;
    return 0;
}

/* The window [start, end) of the stream's time base, its frames counted
 * from first. */
static void set_window(Decoder *d, int64_t start, int64_t end, unsigned first)
{
    d->frames = first;
    d->windowed = 1;
    d->window_done = 0;
    d->win_start = start;
    d->win_end = end;
    d->win_first = AV_NOPTS_VALUE;
}

int decoder_seek_window(Decoder *d, int64_t start, int64_t end, unsigned first, char *err,
                        size_t err_len)
{
    const AVStream *st = d->fmt->streams[d->stream];
    int64_t to = start;
    int ret;
    if (start == INT64_MIN) /* the first stretch: from the stream's start */
        to = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    if ((ret = seek_and_flush(d, to, "cannot seek to a key frame", err, err_len)) < 0)
        return ret;
    d->packets = first;
    d->in_a_row = 0;
    set_window(d, start, end, first);
    return 0;
}

void decoder_print_timing(const Decoder *d, const char *label, FILE *out)
{
    if (d->sessions)
        sessions_timing(d->sessions, label, out);
}

int64_t decoder_window_first(const Decoder *d)
{
    return d->win_first;
}

int decoder_window_follow(Decoder *d, int64_t start, int64_t end, unsigned first)
{
    int fresh = !d->windowed && start == INT64_MIN && d->frames == 0 && d->errors == 0;
    int next = d->windowed && d->window_done && d->held->buf[0] && d->held->pts == start;
    if (!fresh && !next)
        return 0;
    set_window(d, start, end, first);
    return 1;
}

void decoder_own_counts(const Decoder *d, unsigned *errors, unsigned *corrupt)
{
    *errors = d->errors;
    *corrupt = d->corrupt;
}

int decoder_owns_frame(const Decoder *d, const void *owner)
{
    const AVFrame *frame = owner;
    return cuda_upload_owns(d->upload, frame) || hwdec_on_device(d->hw, frame);
}

static const struct {
    const char *name;
    int flag;
} scalers[] = {
    {"bicubic", SWS_BICUBIC}, {"bilinear", SWS_BILINEAR}, {"lanczos", SWS_LANCZOS},
    {"neighbor", SWS_POINT}, {"area", SWS_AREA}, {"spline", SWS_SPLINE},
    {"fast_bilinear", SWS_FAST_BILINEAR}, {"gauss", SWS_GAUSS}, {NULL, 0}};

/* The swscale flag of a scaler name (NULL: bicubic), -1 when unknown. */
static int scaler_flag(const char *scaler)
{
    for (int i = 0; scalers[i].name; i++)
        if (!strcmp(scalers[i].name, scaler ? scaler : "bicubic"))
            return scalers[i].flag;
    return -1;
}

int decoder_check_scaler(const char *scaler, char *err, size_t err_len)
{
    if (scaler_flag(scaler) >= 0)
        return 0;
    snprintf(err, err_len, "--scaler %s: unknown scaler (bicubic, bilinear, lanczos, neighbor, "
             "area, spline, fast_bilinear, gauss)", scaler);
    return -1;
}

int decoder_set_output(Decoder *d, int w, int h, int layout, int bitdepth, const char *scaler,
                       char *err, size_t err_len)
{
    int flag = scaler_flag(scaler);
    if (flag < 0)
        return decoder_check_scaler(scaler, err, err_len);
    d->out_w = w;
    d->out_h = h;
    d->out_layout = layout;
    d->out_bitdepth = bitdepth;
    d->out_pix_fmt = planar_format(layout, bitdepth);
    d->sws_flags = flag;
    return 0;
}

void decoder_set_limited_range(Decoder *d)
{
    d->to_limited = 1;
}

int decoder_upload_beside(Decoder *d, const Decoder *nvdec, int bitdepth)
{
    AVBufferRef *device = hwdec_zero_copy_device(nvdec->hw);
    if (d->upload)
        return 1;
    if (!device || hwdec_active(d->hw) || !d->have_first ||
        !cuda_upload_supports(d->src_fmt, bitdepth) || d->src_bitdepth != bitdepth)
        return 0;
    return cuda_upload_create(&d->upload, device) == 0;
}

unsigned decoder_uploaded(const Decoder *d)
{
    return cuda_upload_count(d->upload);
}

unsigned decoder_upload_misses(const Decoder *d)
{
    return cuda_upload_misses(d->upload);
}

void decoder_set_semiplanar(Decoder *d, int pass)
{
    d->pass_semiplanar = pass;
}

int decoder_picture_format(const Decoder *d, QgpuPicture *fmt)
{
    int depth = FFMIN(d->src_bitdepth, d->out_bitdepth);
    memset(fmt, 0, sizeof(*fmt));
    if (!d->have_first || d->upload)
        return 0; /* no frame; the mixed decode's frames made semi-planar */
    fmt->width = d->out_w;
    fmt->height = d->out_h;
    fmt->layout = d->out_layout;
    fmt->bitdepth = d->out_bitdepth;
    /* deliver(): semi-planar frames go out as they are when passes_as_is
     * holds, and every frame has the first one's size, format and range */
    if (semiplanar_as_is(d, d->src_fmt, d->src_w, d->src_h, depth))
        fmt->layout = QGPU_LAYOUT_NV12;
    return 1;
}

/* Converts frame into d->converted (size out_w x out_h, layout out_layout,
 * depth depth, limited range when asked) with swscale. */
static int convert(Decoder *d, const AVFrame *frame, int depth, char *err, size_t err_len)
{
    enum AVPixelFormat to = planar_format(d->out_layout, depth);
    int ret;
    d->sws = sws_getCachedContext(d->sws, frame->width, frame->height, frame->format,
                                  d->out_w, d->out_h, to, d->sws_flags, NULL, NULL, NULL);
    if (!d->sws) {
        snprintf(err, err_len, "%s: cannot convert %s %dx%d to %s %dx%d", d->name,
                 av_get_pix_fmt_name(frame->format), frame->width, frame->height,
                 av_get_pix_fmt_name(to), d->out_w, d->out_h);
        return -1;
    }
    {
        /* YUV keeps its range here (range_to_limited converts it, exactly);
         * RGB becomes limited-range YUV */
        const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(frame->format);
        const int *coefs = sws_getCoefficients(SWS_CS_DEFAULT);
        int rgb = desc && (desc->flags & AV_PIX_FMT_FLAG_RGB);
        sws_setColorspaceDetails(d->sws, coefs, rgb ? 1 : d->full_range, coefs,
                                 rgb ? 0 : d->full_range, 0, 1 << 16, 1 << 16);
    }
    av_frame_unref(d->converted);
    d->converted->format = to;
    d->converted->width = d->out_w;
    d->converted->height = d->out_h;
    ret = av_frame_get_buffer(d->converted, 0);
    if (ret < 0)
        return ret;
    ret = sws_scale(d->sws, (const uint8_t *const *)frame->data, frame->linesize, 0,
                    frame->height, d->converted->data, d->converted->linesize);
    return ret < 0 ? ret : 0;
}

/* Shifts the samples of src (depth `from`) left to out_bitdepth into
 * d->shifted: exact, as libvmaf brings inputs to a common depth. */
static int shift_up(Decoder *d, const AVFrame *src, int from)
{
    int shift = d->out_bitdepth - from, ret;
    av_frame_unref(d->shifted);
    d->shifted->format = d->out_pix_fmt;
    d->shifted->width = src->width;
    d->shifted->height = src->height;
    if ((ret = av_frame_get_buffer(d->shifted, 0)) < 0)
        return ret;
    for (int p = 0; p < (d->out_layout == QGPU_LAYOUT_400 ? 1 : 3); p++) {
        int cw = p && d->out_layout != QGPU_LAYOUT_444 ? (src->width + 1) / 2 : src->width;
        int ch = p && d->out_layout == QGPU_LAYOUT_420 ? (src->height + 1) / 2 : src->height;
        for (int y = 0; y < ch; y++) {
            const uint8_t *in = src->data[p] + (ptrdiff_t)y * src->linesize[p];
            uint16_t *o = (uint16_t *)(d->shifted->data[p] + (ptrdiff_t)y *
                                                                d->shifted->linesize[p]);
            if (from == 8)
                for (int x = 0; x < cw; x++)
                    o[x] = (uint16_t)(in[x] << shift);
            else
                for (int x = 0; x < cw; x++)
                    o[x] = (uint16_t)(((const uint16_t *)in)[x] << shift);
        }
    }
    return 0;
}

/* Full range to limited range, sample by sample through a table, for
 * depth-bit planar samples (BT.2100's definitions of both ranges: limited
 * Y = 2^(d-8) (219 E + 16), full Y = (2^d - 1) E; chroma 224 and 128). */
static int range_to_limited(Decoder *d, const AVFrame *src, int depth)
{
    int peak = (1 << depth) - 1, ret;
    double k = (double)(1 << (depth - 8));
    if (!d->range_lut[0]) {
        for (int c = 0; c < 2; c++) {
            d->range_lut[c] = av_malloc_array((size_t)peak + 1, sizeof(uint16_t));
            if (!d->range_lut[c])
                return AVERROR(ENOMEM);
            for (int x = 0; x <= peak; x++) {
                double v = c ? k * (224.0 * (x - (1 << (depth - 1))) / peak + 128.0)
                             : k * (219.0 * x / peak + 16.0);
                long r = lrint(v);
                d->range_lut[c][x] = (uint16_t)(r < 0 ? 0 : r > peak ? peak : r);
            }
        }
    }
    av_frame_unref(d->ranged);
    d->ranged->format = planar_format(d->out_layout, depth);
    d->ranged->width = src->width;
    d->ranged->height = src->height;
    if ((ret = av_frame_get_buffer(d->ranged, 0)) < 0)
        return ret;
    for (int p = 0; p < (d->out_layout == QGPU_LAYOUT_400 ? 1 : 3); p++) {
        const uint16_t *lut = d->range_lut[p > 0];
        int cw = p && d->out_layout != QGPU_LAYOUT_444 ? (src->width + 1) / 2 : src->width;
        int ch = p && d->out_layout == QGPU_LAYOUT_420 ? (src->height + 1) / 2 : src->height;
        for (int y = 0; y < ch; y++) {
            const uint8_t *in = src->data[p] + (ptrdiff_t)y * src->linesize[p];
            uint8_t *o = d->ranged->data[p] + (ptrdiff_t)y * d->ranged->linesize[p];
            if (depth == 8)
                for (int x = 0; x < cw; x++)
                    o[x] = (uint8_t)lut[in[x]];
            else
                for (int x = 0; x < cw; x++)
                    ((uint16_t *)o)[x] = lut[((const uint16_t *)in)[x] & peak];
        }
    }
    return 0;
}

static void fill_picture(const Decoder *d, const AVFrame *f, QgpuPicture *pic)
{
    memset(pic, 0, sizeof(*pic));
    pic->width = f->width;
    pic->height = f->height;
    pic->layout = d->out_layout;
    pic->bitdepth = d->out_bitdepth;
    if (semi_depth(d, f->format)) {
        /* delivered as decoded (deliver() checked it is what is scored) */
        pic->layout = QGPU_LAYOUT_NV12;
        for (int p = 0; p < 2; p++) {
            pic->data[p] = f->data[p];
            pic->stride[p] = f->linesize[p];
        }
        return;
    }
    for (int p = 0; p < (d->out_layout == QGPU_LAYOUT_400 ? 1 : 3); p++) {
        pic->data[p] = f->data[p];
        pic->stride[p] = f->linesize[p];
    }
}

/* A decoding error mid-stream: counted and reported (the first 3, then
 * every 100th), fatal only after too many in a row. */
static int skip_error(Decoder *d, const char *what, int code, char *err, size_t err_len)
{
    char buf[AV_ERROR_MAX_STRING_SIZE] = "", msg[1200];
    d->errors++;
    d->in_a_row++;
    if (code)
        av_strerror(code, buf, sizeof(buf));
    if (d->in_a_row > DECODER_MAX_ERRORS_IN_A_ROW) {
        snprintf(err, err_len, "%s: %u decoding errors in a row after frame %u; giving up "
                 "(last: %s%s%s)", d->name, d->in_a_row - 1, d->frames, what,
                 *buf ? ": " : "", buf);
        return code ? code : AVERROR_INVALIDDATA;
    }
    if (d->errors <= 3 || d->errors % 100 == 0) {
        snprintf(msg, sizeof(msg), "%s \"%s\": %s%s%s after frame %u; skipped (%u decoding "
                 "error%s so far%s)", d->label, d->name, what, *buf ? ": " : "", buf,
                 d->frames, d->errors, d->errors == 1 ? "" : "s",
                 d->errors == 3 ? "; from now on every 100th is reported" : "");
        d->warn(d->warn_opaque, msg);
    }
    return 0;
}

/* At the end of a y4m file: bytes after the last whole frame are a
 * truncated frame (the demuxer drops it silently). The bytes read so far
 * tell, for a file or a stream. */
static int check_truncated(Decoder *d, char *err, size_t err_len)
{
    int64_t size, end;
    if (!d->frame_size || d->data_end < 0 || !d->header_size || !d->fmt->pb)
        return 0;
    size = FFMAX(avio_size(d->fmt->pb), avio_tell(d->fmt->pb));
    end = d->data_end ? d->data_end : d->header_size;
    if (size <= end)
        return 0;
    {
        char what[160];
        snprintf(what, sizeof(what), "%lld bytes after the last whole frame: the file is "
                 "truncated", (long long)(size - end));
        d->data_end = -1;
        return skip_error(d, what, 0, err, err_len);
    }
}

/* "640x360 yuv420p tv" */
static void describe(char *buf, size_t len, int w, int h, enum AVPixelFormat f, int full)
{
    snprintf(buf, len, "%dx%d %s%s", w, h, av_get_pix_fmt_name(f) ? av_get_pix_fmt_name(f) : "?",
             full ? " full range" : "");
}

/* The first frame describes the input; a later one must be the same. */
static int check_frame(Decoder *d, const AVFrame *f, char *err, size_t err_len)
{
    char was[128], now[128];
    int full;
    if (!d->have_first) {
        d->have_first = 1;
        describe_source(d, f);
        return 0;
    }
    full = f->color_range == AVCOL_RANGE_UNSPECIFIED ? d->full_range
                                                     : f->color_range == AVCOL_RANGE_JPEG;
    if (is_full_range_format(f->format) && f->color_range == AVCOL_RANGE_UNSPECIFIED)
        full = 1;
    if (f->width == d->src_w && f->height == d->src_h && f->format == d->src_fmt &&
        full == d->full_range)
        return 0;
    describe(was, sizeof(was), d->src_w, d->src_h, d->src_fmt, d->full_range);
    describe(now, sizeof(now), f->width, f->height, f->format, full);
    snprintf(err, err_len, "%s: frame %u is %s, the stream started as %s: a stream whose size, "
             "pixel format or range changes midway is not scored (split it where it changes, "
             "or convert it to one format first)", d->name, d->frames, now, was);
    return AVERROR_INPUT_CHANGED;
}

/* A semi-planar frame goes out as it is (QGPU_LAYOUT_NV12). */
static int passes_as_is(const Decoder *d, const AVFrame *f, int depth)
{
    return semiplanar_as_is(d, f->format, f->width, f->height, depth);
}

/* d->frame (a good frame) as the next picture. */
static int deliver(Decoder *d, QgpuPicture *pic, char *err, size_t err_len)
{
    const AVFrame *cur = d->frame;
    int bitdepth, ret, native, depth;
    if ((ret = check_frame(d, d->frame, err, err_len)) < 0)
        return ret;
    native = native_layout(d->frame->format, &bitdepth) >= 0;
    depth = FFMIN(d->src_bitdepth, d->out_bitdepth);
    {
        /* presentation time: the decoder's best guess (pts, else dts) */
        int64_t ts = d->frame->best_effort_timestamp;
        if (ts == AV_NOPTS_VALUE)
            ts = d->frame->pts;
        d->last_pts = ts == AV_NOPTS_VALUE || !d->timestamps
                          ? NAN
                          : ts * av_q2d(d->fmt->streams[d->stream]->time_base);
    }
    /* the mixed decode: the CPU's planar frame made semi-planar, on the GPU
     * when it can be (cuda_upload.h), then delivered as NVDEC's are */
    if (d->upload && (ret = cuda_upload_frame(d->upload, d->frame, depth, err, err_len)) < 0)
        return ret;
    /* a frame kept on the GPU (NVDEC, hwdec.h) that is not scored as it
     * is: to host memory first */
    if (hwdec_on_device(d->hw, d->frame) && !passes_as_is(d, d->frame, depth) &&
        (ret = hwdec_device_to_host(d->hw, d->frame)) < 0) {
        set_error(err, err_len, "copying a frame from the GPU failed", d->name, ret);
        return ret;
    }
    if (semi_depth(d, d->frame->format) == depth && d->frame->width == d->out_w &&
        d->frame->height == d->out_h && d->out_layout == QGPU_LAYOUT_420) {
        /* NV12/P010 (hardware decoders): as they are when both inputs are,
         * else split into planes here, exactly */
        if (passes_as_is(d, d->frame, depth)) {
            d->delivered = d->frame;
            fill_picture(d, d->frame, pic);
            d->frames++;
            return 1;
        }
        if ((ret = hwdec_to_planar(d->frame, depth, d->converted)) < 0) {
            set_error(err, err_len, "conversion failed", d->name, ret);
            return ret;
        }
        cur = d->converted;
    } else if (!native || d->frame->width != d->out_w || d->frame->height != d->out_h ||
               d->src_layout != d->out_layout || bitdepth != depth) {
        ret = convert(d, d->frame, depth, err, err_len);
        if (ret < 0) {
            if (!*err)
                set_error(err, err_len, "conversion failed", d->name, ret);
            return ret;
        }
        cur = d->converted;
    }
    if (d->to_limited && d->full_range) {
        if ((ret = range_to_limited(d, cur, depth)) < 0) {
            set_error(err, err_len, "conversion failed", d->name, ret);
            return ret;
        }
        cur = d->ranged;
    }
    if (d->out_bitdepth > depth) {
        if ((ret = shift_up(d, cur, depth)) < 0) {
            set_error(err, err_len, "conversion failed", d->name, ret);
            return ret;
        }
        cur = d->shifted;
    }
    d->delivered = (AVFrame *)cur;
    fill_picture(d, cur, pic);
    d->frames++;
    return 1;
}

/* Decodes the next good frame into d->frame: 1, 0 at the end, < 0. */
static int decode_next(Decoder *d, char *err, size_t err_len)
{
    int ret;
    if (d->window_done)
        return 0;
    for (;;) {
        if (d->held->buf[0]) { /* the window went on past it (decoder_window_follow) */
            av_frame_move_ref(d->frame, d->held);
            ret = 0;
        } else {
            ret = avcodec_receive_frame(d->codec, d->frame);
        }
        if (ret == 0 && d->windowed) {
            /* a stretch of sessions (sessions.h): the frames of the others
             * are theirs, also the damaged ones (leading pictures of an
             * open GOP) */
            int64_t ts = d->frame->pts;
            if (ts == AV_NOPTS_VALUE) {
                set_error(err, err_len, "a frame without a time stamp while decoding in "
                          "sessions (use one decoder: --decode-sessions 1 --cpu-sessions 0)",
                          d->name, 0);
                return AVERROR_INVALIDDATA;
            }
            if (ts < d->win_start) {
                av_frame_unref(d->frame);
                continue;
            }
            if (ts >= d->win_end) {
                /* the next stretch's first frame: kept, in case this
                 * decoder goes on with it */
                av_frame_move_ref(d->held, d->frame);
                d->window_done = 1;
                return 0;
            }
            if (d->win_first == AV_NOPTS_VALUE)
                d->win_first = ts;
        }
        if (ret == 0) {
            if (d->frame->decode_error_flags || (d->frame->flags & AV_FRAME_FLAG_CORRUPT)) {
                /* decoded with errors (concealed): not scored */
                d->corrupt++;
                av_frame_unref(d->frame);
                ret = skip_error(d, "frame decoded with errors", 0, err, err_len);
                if (ret < 0)
                    return ret;
                continue;
            }
            d->in_a_row = 0;
            /* frames in GPU memory: to host memory, as NV12/P010 */
            if ((ret = hwdec_download(d->hw, d->frame, hw_depth(d, d->frame))) < 0) {
                set_error(err, err_len, "copying a frame from the GPU failed", d->name, ret);
                return ret;
            }
            return 1;
        }
        if (ret == AVERROR_EOF)
            return 0;
        if (ret == AVERROR(ENOMEM)) {
            set_error(err, err_len, "decoding failed", d->name, ret);
            return ret;
        }
        if (ret != AVERROR(EAGAIN)) {
            ret = skip_error(d, "decoding error", ret, err, err_len);
            if (ret < 0)
                return ret;
            continue;
        }
        if (d->draining)
            return 0;
        /* feed the decoder the next packet of our stream */
        ret = av_read_frame(d->fmt, d->packet);
        if (ret == AVERROR_EOF) {
            if ((ret = check_truncated(d, err, err_len)) < 0)
                return ret;
            d->draining = 1;
            avcodec_send_packet(d->codec, NULL);
            continue;
        }
        if (ret == AVERROR_INVALIDDATA && d->y4m) {
            /* the demuxer found no "FRAME" where a frame should start:
             * everything after it is out of step */
            snprintf(err, err_len, "%s: no FRAME marker where frame %u should start: the frames "
                     "are not the size the y4m header says (%dx%d %s), or the file is damaged",
                     d->name, d->frames + d->errors, d->codec->width, d->codec->height,
                     av_get_pix_fmt_name(d->codec->pix_fmt));
            return ret;
        }
        if (ret == AVERROR_INVALIDDATA) {
            ret = skip_error(d, "unreadable packet", ret, err, err_len);
            if (ret < 0)
                return ret;
            continue;
        }
        if (ret == AVERROR_EXIT) {
            set_error(err, err_len, "interrupted", d->name, 0);
            return ret;
        }
        if (ret < 0) {
            set_error(err, err_len, "read error", d->name, ret);
            return ret;
        }
        if (d->packet->stream_index == d->stream && d->frame_size &&
            d->packet->size < d->frame_size) {
            /* raw video: the demuxer hands over a short last frame */
            char what[128];
            snprintf(what, sizeof(what), "incomplete last frame (%d of %d bytes): the file is "
                     "truncated", d->packet->size, d->frame_size);
            av_packet_unref(d->packet);
            d->data_end = -1; /* reported */
            if ((ret = skip_error(d, what, 0, err, err_len)) < 0)
                return ret;
            continue;
        }
        if (d->packet->stream_index == d->stream) {
            /* a session's decoder: a packet of another stretch is that
             * stretch's to count when it fails */
            int theirs = d->windowed && d->packet->pts != AV_NOPTS_VALUE &&
                         (d->packet->pts < d->win_start || d->packet->pts >= d->win_end);
            d->packets++;
            if (d->frame_size && d->packet->pos >= 0 && d->data_end >= 0)
                d->data_end = d->packet->pos + d->packet->size;
            ret = avcodec_send_packet(d->codec, d->packet);
            av_packet_unref(d->packet);
            if (ret == AVERROR(ENOMEM)) {
                set_error(err, err_len, "decoding failed", d->name, ret);
                return ret;
            }
            if (ret < 0 && ret != AVERROR(EAGAIN) && !theirs) {
                ret = skip_error(d, "corrupt packet", ret, err, err_len);
                if (ret < 0)
                    return ret;
            }
            continue;
        }
        av_packet_unref(d->packet);
    }
}

int decoder_start(Decoder *d, char *err, size_t err_len)
{
    int ret;
    if (d->have_first || d->pending->buf[0])
        return 0;
    ret = decode_next(d, err, err_len);
    if (ret <= 0)
        return ret;
    describe_source(d, d->frame);
    d->have_first = 1;
    d->out_w = d->src_w;
    d->out_h = d->src_h;
    d->out_layout = d->src_layout;
    d->out_bitdepth = d->src_bitdepth;
    d->out_pix_fmt = planar_format(d->out_layout, d->out_bitdepth);
    av_frame_move_ref(d->pending, d->frame);
    return 0;
}

/* The next frame the sessions delivered, in order (sessions.h): d's own
 * (decoder_read_window, which counted it) or a session's decoder's. */
static int read_from_sessions(Decoder *d, QgpuPicture *pic, void **owner, char *err,
                              size_t err_len)
{
    double pts;
    int own = 0;
    int ret = sessions_read(d->sessions, owner, &pts, &own, err, err_len);
    if (ret != 1)
        return ret;
    d->last_pts = pts;
    if (!own)
        d->frames++;
    fill_picture(d, *owner, pic);
    return 1;
}

/* The next frame of d's own decoder (pending first). */
static int read_direct(Decoder *d, QgpuPicture *pic, char *err, size_t err_len)
{
    int ret;
    if (d->pending->buf[0]) {
        av_frame_unref(d->frame);
        av_frame_move_ref(d->frame, d->pending);
    } else if ((ret = decode_next(d, err, err_len)) <= 0) {
        return ret;
    }
    return deliver(d, pic, err, err_len);
}

/* A new reference to the frame read_direct delivered, for another thread. */
static int clone_delivered(Decoder *d, QgpuPicture *pic, void **owner, char *err,
                           size_t err_len)
{
    /* a new reference to the same buffers: the decoder may reuse its frames */
    AVFrame *clone = av_frame_clone(d->delivered);
    if (!clone) {
        snprintf(err, err_len, "out of memory");
        return AVERROR(ENOMEM);
    }
    fill_picture(d, clone, pic);
    *owner = clone;
    return 1;
}

int decoder_read_window(Decoder *d, void **owner, char *err, size_t err_len)
{
    QgpuPicture pic;
    int ret;
    *owner = NULL;
    if (d->window_done)
        return 0;
    if ((ret = read_direct(d, &pic, err, err_len)) != 1)
        return ret;
    return clone_delivered(d, &pic, owner, err, err_len);
}

int decoder_read(Decoder *d, QgpuPicture *pic, char *err, size_t err_len)
{
    int ret;
    if (d->sessions) {
        void *owner;
        if ((ret = read_from_sessions(d, pic, &owner, err, err_len)) != 1)
            return ret;
        /* kept until the next call (pic shows the same buffers) */
        av_frame_unref(d->frame);
        av_frame_move_ref(d->frame, owner);
        decoder_release(owner);
        d->delivered = d->frame;
        return 1;
    }
    return read_direct(d, pic, err, err_len);
}

int decoder_read_owned(Decoder *d, QgpuPicture *pic, void **owner, char *err, size_t err_len)
{
    int ret;
    *owner = NULL;
    if (d->sessions)
        return read_from_sessions(d, pic, owner, err, err_len);
    if ((ret = read_direct(d, pic, err, err_len)) != 1)
        return ret;
    return clone_delivered(d, pic, owner, err, err_len);
}

void decoder_release(void *owner)
{
    AVFrame *frame = owner;
    av_frame_free(&frame);
}

double decoder_last_pts(const Decoder *d)
{
    return d->last_pts;
}

void *decoder_ref_frame(void *owner)
{
    return av_frame_clone(owner);
}

void decoder_owner_picture(const Decoder *d, void *owner, QgpuPicture *pic)
{
    fill_picture(d, owner, pic);
}

QgpuCudaFrame *decoder_device_frame(const Decoder *d, void *owner)
{
    /* the mixed decode's frames and NVDEC's: device frames of a ring (with
     * sessions, of the session's decoder that delivered it) */
    if (d->sessions)
        return sessions_frame_decoder(d->sessions, owner) ? cuda_ring_frame(owner) : NULL;
    return decoder_owns_frame(d, owner) ? cuda_ring_frame(owner) : NULL;
}

int decoder_owner_to_host(Decoder *d, void *owner, QgpuPicture *pic)
{
    int ret;
    if (d->sessions) {
        Decoder *by = sessions_frame_decoder(d->sessions, owner);
        if (!by)
            return 0;
        if (by != d) {
            if ((ret = decoder_owner_to_host(by, owner, pic)) < 0)
                return ret;
            fill_picture(d, owner, pic);
            return 0;
        }
    }
    if (cuda_upload_owns(d->upload, owner)) {
        if ((ret = cuda_upload_to_host(d->upload, owner)) < 0)
            return ret;
        fill_picture(d, owner, pic);
        return 0;
    }
    if (!hwdec_on_device(d->hw, owner))
        return 0;
    if ((ret = hwdec_device_to_host(d->hw, owner)) < 0)
        return ret;
    fill_picture(d, owner, pic);
    return 0;
}

const char *decoder_zero_copy_note(const Decoder *d)
{
    if (d->sessions && !*hwdec_zero_copy_note(d->hw))
        return sessions_zero_copy_note(d->sessions);
    return hwdec_zero_copy_note(d->hw);
}

double decoder_zero_copy_seconds(const Decoder *d)
{
    double own = hwdec_zero_copy_seconds(d->hw);
    return d->sessions ? own + sessions_zero_copy_seconds(d->sessions) : own;
}

unsigned decoder_count_rest(Decoder *d)
{
    unsigned rest;
    if (d->sessions) /* the packets the sessions' first pass counted */
        return sessions_count_rest(d->sessions, d->frames);
    /* packets not yet read, plus those the decoder holds; not decoded */
    rest = d->packets > d->frames ? d->packets - d->frames : 0;
    if (d->pending->buf[0])
        rest++;
    if (d->draining || d->eof)
        return rest;
    while (av_read_frame(d->fmt, d->packet) >= 0) {
        if (d->packet->stream_index == d->stream)
            rest++;
        av_packet_unref(d->packet);
    }
    d->eof = 1;
    return rest;
}

int decoder_rewind(Decoder *d, char *err, size_t err_len)
{
    const AVStream *st = d->fmt->streams[d->stream];
    int64_t start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    int ret;
    if (input_is_stream(d->input) || d->eof) {
        set_error(err, err_len, "cannot go back to the start (a stream is read once)", d->name,
                  0);
        return AVERROR(ESPIPE);
    }
    if ((ret = seek_and_flush(d, start, "cannot seek back to the start", err, err_len)) < 0)
        return ret;
    d->frames = d->packets = 0;
    d->errors = d->corrupt = d->in_a_row = 0;
    d->data_end = 0;
    return 0;
}

unsigned decoder_frame_count(const Decoder *d)
{
    return d->frames;
}

unsigned decoder_error_count(const Decoder *d)
{
    return d->sessions ? sessions_error_count(d->sessions) : d->errors;
}

unsigned decoder_corrupt_count(const Decoder *d)
{
    return d->sessions ? sessions_corrupt_count(d->sessions) : d->corrupt;
}

double decoder_start_time(const Decoder *d)
{
    return d->start_time;
}

void decoder_set_warn(Decoder *d, const char *label, DecoderWarn warn, void *opaque)
{
    d->label = label;
    d->warn = warn ? warn : default_warn;
    d->warn_opaque = opaque;
}

void decoder_abort(Decoder *d)
{
    if (!d)
        return;
    input_abort(d->input);
    sessions_abort(d->sessions);
}

PinnedFrames *decoder_pinned_frames(const Decoder *d)
{
    /* only frames delivered as decoded (deliver(): no scaling, format,
     * range or depth conversion) are uploaded from the decoder's buffers */
    int bitdepth;
    if (!d->pinned || d->pinned_off || native_layout(d->src_fmt, &bitdepth) < 0)
        return NULL;
    if (d->src_w != d->out_w || d->src_h != d->out_h || d->src_layout != d->out_layout ||
        bitdepth != d->src_bitdepth || d->out_bitdepth != d->src_bitdepth ||
        (d->to_limited && d->full_range))
        return NULL;
    return d->pinned;
}

void decoder_use_pinned_frames(Decoder *d, int on)
{
    d->pinned_off = !on;
}

void decoder_park(Decoder *d)
{
    if (d)
        hwdec_park(d->hw);
}

void decoder_close(Decoder **pd)
{
    Decoder *d = *pd;
    if (!d)
        return;
    sessions_free(&d->sessions); /* its decoders first: they read this one's settings */
    av_freep(&d->path);
    avcodec_free_context(&d->codec);
    hwdec_free(&d->hw); /* after the codec: its get_format points at it */
    cuda_upload_free(&d->upload);
    avformat_close_input(&d->fmt);
    input_close(&d->input);
    av_packet_free(&d->packet);
    av_frame_free(&d->frame);
    av_frame_free(&d->pending);
    av_frame_free(&d->held);
    av_frame_free(&d->converted);
    av_frame_free(&d->shifted);
    av_frame_free(&d->ranged);
    av_freep(&d->range_lut[0]);
    av_freep(&d->range_lut[1]);
    sws_freeContext(d->sws);
    pinned_frames_close(&d->pinned); /* frames still out keep their blocks */
    av_free(d);
    *pd = NULL;
}
