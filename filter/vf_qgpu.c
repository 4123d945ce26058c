/*
 * vf_qgpu: libvmaf-family video quality metrics computed by libqgpu on an
 * OpenCL device, as an FFmpeg filter.
 *
 *   ffmpeg -i dist.mkv -i ref.mkv -lavfi "[0:v][1:v]qgpu=feature=psnr" -f null -
 *
 * Input 0 ("main") is the distorted video, passed through unchanged with the
 * per-frame scores in its metadata (lavfi.qgpu.<score name>); input 1 is the
 * reference. The inputs are paired by timestamp by framesync (shortest=1 by
 * default; the other framesync options are the filter's options too).
 *
 * OpenCL frames (after hwupload) are scored in place: libqgpu is opened on
 * the frames' own OpenCL context and device (qgpu_open_cl) and copies each
 * plane image on the device into its buffers (qgpu_submit_cl); no sample
 * goes through host memory. Software frames go to libqgpu's own device.
 * OpenCL frames of nv12/p010/p016 (two images: luma, Cb Cr pairs) go in
 * as QGPU_LAYOUT_NV12. VAAPI frames (-hwaccel vaapi -hwaccel_output_format
 * vaapi) are mapped to OpenCL when FFmpeg can derive an OpenCL device from
 * the VAAPI one (Intel's cl_intel_va_api_media_sharing: av_hwframe_map,
 * no copy through the host) and then scored as OpenCL frames. CUDA frames
 * (-hwaccel cuda -hwaccel_output_format cuda) are scored in place through
 * libqgpu's CUDA input (qgpu/qgpu_cuda.h: each frame copied on the GPU,
 * on the frames' own CUDA context and stream, into memory the library
 * imports into its OpenCL context) when the library can (a CUDA driver,
 * an OpenCL device that imports CUDA memory, QGPU_HWDEC_ZERO_COPY not 0).
 * Otherwise they, and VAAPI frames that cannot be mapped, are copied to
 * host memory (av_hwframe_transfer_data; NV12/P010 as the decoder wrote
 * them, QGPU_LAYOUT_NV12) and go the software frames' way.
 *
 * libqgpu is asynchronous and temporal features (motion) only finalise frame
 * n once frame n+1 has been processed, so the filter holds the main frames
 * until their scores are final and releases them in order; at EOF it
 * flushes the library and releases the rest.
 *
 * One source for FFmpeg 5.1 to 8.x: see the version shims below. Register
 * it in a tree with ffmpeg/register-filter.sh (doc/filter.md).
 *
 * This file is part of libqgpu; it is not FFmpeg code. It uses FFmpeg's
 * internal filter API (framesync, filter pads) and so is built inside an
 * FFmpeg tree.
 */

#include <limits.h>
#include <string.h>

#include "config.h"
#include "libavutil/avstring.h"
#include "libavutil/bprint.h"
#include "libavutil/hwcontext.h"
#include "libavutil/mem.h"
#include "libavutil/opt.h"
#include "libavutil/pixdesc.h"

#include "avfilter.h"
#include "filters.h"   /* includes internal.h in 5.1; internal.h is gone from 7.1 */
#include "formats.h"
#include "framesync.h"
#include "version.h"
#include "video.h"

#include <qgpu/qgpu.h>
#if CONFIG_OPENCL
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120   /* libqgpu's API level; FFmpeg sets none */
#endif
#include "libavutil/hwcontext_opencl.h"
#include <qgpu/qgpu_opencl.h>
#endif
/* CUDA frames in place: FFmpeg built with CUDA (nv-codec-headers give the
 * CUDA types hwcontext_cuda.h needs); libqgpu loads libcuda itself */
#define QF_CUDA CONFIG_CUDA
#if QF_CUDA
#include <ffnvcodec/dynlink_cuda.h>
#include "libavutil/hwcontext_cuda.h"
#include <qgpu/qgpu_cuda.h>
#endif

/* ---- version shims ----
 * (1) FFmpeg 7.1 (lavfi 10.4.100): frame_rate and hw_frames_ctx moved from
 *     AVFilterLink to the internal FilterLink.
 * (2) FFmpeg 8.0 (lavfi 11): filters are FFFilter { AVFilter p; ... }. */
#if LIBAVFILTER_VERSION_INT >= AV_VERSION_INT(10, 4, 100)
#define QF_LINK_HWFC(l) (ff_filter_link(l)->hw_frames_ctx)
#define QF_SET_FRAME_RATE(out, in) (ff_filter_link(out)->frame_rate = ff_filter_link(in)->frame_rate)
#define QF_FRAME_RATE(l) (ff_filter_link(l)->frame_rate)
#else
#define QF_LINK_HWFC(l) ((l)->hw_frames_ctx)
#define QF_SET_FRAME_RATE(out, in) ((out)->frame_rate = (in)->frame_rate)
#define QF_FRAME_RATE(l) ((l)->frame_rate)
#endif
#if LIBAVFILTER_VERSION_MAJOR >= 11
#define QF_P(f) .p.f
#define QF_FILTER_T FFFilter
#else
#define QF_P(f) .f
#define QF_FILTER_T AVFilter
#endif

typedef struct HeldFrame {
    AVFrame *frame;
    int64_t index;   /* libqgpu frame index, -1 when the frame is not scored */
    int final;       /* scores attached */
} HeldFrame;

typedef struct QgpuFilterContext {
    const AVClass *class;
    FFFrameSync fs;

    /* options */
    char *model;
    char *feature;
    char *log_path;
    char *log_fmt;
    char *pool;
    char *device;
    int n_subsample;
    int n_threads;            /* accepted for libvmaf's users; no effect */
    int depth;
    int sample_depth;
    /* FFmpeg 5.1's deprecated libvmaf options (see doc/filter.md) */
    char *model_path;
    int enable_transform, phone_model;
    int psnr, ssim, ms_ssim;
    int enable_conf_interval;

    char **model_names;       /* score name of each model, for "VMAF score:" */
    int nb_models;

    QgpuContext *q;
    int log_format;
    int pool_method;
    int flushed;
    int eof_done;
    int64_t submitted;        /* frames given to libqgpu */
    int log_written;          /* log_path written (at EOF, else at uninit) */
    uint64_t events;          /* frame pairs framesync delivered */
    enum AVPixelFormat sw_format;
    int layout, bitdepth;
    int shift;                /* OpenCL frames: sample = 16-bit word >> shift */
    int zero_copy;            /* OpenCL frames, scored in FFmpeg's OpenCL context */
    int transfer;             /* CUDA/VAAPI frames: copied to host memory first */
    AVFrame *host[2];         /* their copies (distorted, reference) */
    /* VAAPI frames mapped to OpenCL: the derived OpenCL device and frames
     * (distorted, reference); NULL when not mapping */
    AVBufferRef *map_device;
    AVBufferRef *map_frames[2];
    int map_failures;         /* pairs that went through the host instead */
#if QF_CUDA
    /* CUDA frames scored in place (qgpu_cuda.h): a ring per input
     * (distorted, reference), made at the first pair */
    int cuda;                 /* still trying the in-place path */
    QgpuCudaRing *cuda_ring[2];
    unsigned cuda_pairs;      /* pairs scored in place */
    unsigned cuda_host_pairs; /* pairs copied through host memory */
#endif

    /* main frames waiting for their scores, in output order (a ring) */
    HeldFrame *held;
    int held_cap, held_head, held_count;
} QgpuFilterContext;

#define OFFSET(x) offsetof(QgpuFilterContext, x)
#define FLAGS (AV_OPT_FLAG_FILTERING_PARAM | AV_OPT_FLAG_VIDEO_PARAM)

#define DEFAULT_MODEL "version=vmaf_v0.6.1"

static const AVOption qgpu_options[] = {
    { "model", "VMAF models, '|' separated, each in libvmaf's syntax (version=vmaf_v0.6.1:name=vmaf); "
      "empty: none", OFFSET(model), AV_OPT_TYPE_STRING, { .str = DEFAULT_MODEL }, 0, 0, FLAGS },
    { "feature", "features, '|' separated: name=psnr:enable_chroma=false (libvmaf), psnr, "
      "float_ssim=...", OFFSET(feature), AV_OPT_TYPE_STRING, { .str = NULL }, 0, 0, FLAGS },
    { "log_path", "write per-frame and pooled scores to this file", OFFSET(log_path),
      AV_OPT_TYPE_STRING, { .str = NULL }, 0, 0, FLAGS },
    { "log_fmt", "log format: xml, json, csv or sub", OFFSET(log_fmt), AV_OPT_TYPE_STRING,
      { .str = "xml" }, 0, 0, FLAGS },
    { "pool", "pooling of the VMAF score printed at the end: mean, min, max, harmonic_mean",
      OFFSET(pool), AV_OPT_TYPE_STRING, { .str = "mean" }, 0, 0, FLAGS },
    { "n_threads", "accepted for libvmaf compatibility; no effect (libqgpu computes on the "
      "OpenCL device)", OFFSET(n_threads), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, UINT_MAX / 2, FLAGS },
    { "n_subsample", "log and pool frames 0, n, 2n... (as libvmaf)", OFFSET(n_subsample),
      AV_OPT_TYPE_INT, { .i64 = 1 }, 1, UINT_MAX / 2, FLAGS },
    { "model_path", "FFmpeg 5.1 (deprecated): use model='path=...'", OFFSET(model_path),
      AV_OPT_TYPE_STRING, { .str = NULL }, 0, 0, FLAGS | AV_OPT_FLAG_DEPRECATED },
    { "enable_transform", "FFmpeg 5.1 (deprecated): use model='...:enable_transform=true'",
      OFFSET(enable_transform), AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1, FLAGS | AV_OPT_FLAG_DEPRECATED },
    { "phone_model", "FFmpeg 5.1 (deprecated): use model='...:enable_transform=true'",
      OFFSET(phone_model), AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1, FLAGS | AV_OPT_FLAG_DEPRECATED },
    { "psnr", "FFmpeg 5.1 (deprecated): use feature='name=psnr'", OFFSET(psnr), AV_OPT_TYPE_BOOL,
      { .i64 = 0 }, 0, 1, FLAGS | AV_OPT_FLAG_DEPRECATED },
    { "ssim", "FFmpeg 5.1 (deprecated): use feature='name=float_ssim'", OFFSET(ssim),
      AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1, FLAGS | AV_OPT_FLAG_DEPRECATED },
    { "ms_ssim", "FFmpeg 5.1 (deprecated): use feature='name=float_ms_ssim'", OFFSET(ms_ssim),
      AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1, FLAGS | AV_OPT_FLAG_DEPRECATED },
    { "enable_conf_interval", "FFmpeg 5.1 (deprecated): confidence intervals of bootstrap models",
      OFFSET(enable_conf_interval), AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1,
      FLAGS | AV_OPT_FLAG_DEPRECATED },
    { "device", "OpenCL device: auto, gpu, cpu, P:D or part of the device name "
      "(default: $QGPU_DEVICE, else auto)", OFFSET(device), AV_OPT_TYPE_STRING, { .str = NULL },
      0, 0, FLAGS },
    { "depth", "frames in flight on the device (1..16, 0 = library default)", OFFSET(depth),
      AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 16, FLAGS },
    { "sample_depth", "OpenCL frames of a 16-bit format (format=yuv420p16,hwupload of 10- or "
      "12-bit video): score the top N bits of each sample, 9..15 (0 = the format's own depth)",
      OFFSET(sample_depth), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 15, FLAGS },
    { NULL }
};

/* Built as `libvmaf` (ffmpeg/register-filter.sh --as-libvmaf compiles this
 * file again with QGPU_AS_LIBVMAF): same options, its own class name. */
#ifdef QGPU_AS_LIBVMAF
#define QF_NAME "libvmaf"
#define QF_SYMBOL ff_vf_libvmaf
#define QF_METADATA_PREFIX "lavfi.vmaf."
FRAMESYNC_DEFINE_CLASS_EXT(libvmaf, QgpuFilterContext, fs, qgpu_options);
#define qgpu_class libvmaf_class
#define qgpu_framesync_preinit libvmaf_framesync_preinit
#else
#define QF_NAME "qgpu"
#define QF_SYMBOL ff_vf_qgpu
#define QF_METADATA_PREFIX "lavfi.qgpu."
FRAMESYNC_DEFINE_CLASS(qgpu, QgpuFilterContext, fs);
#endif

/* framesync's defaults (shortest=0, repeatlast=1) would compare the last
 * distorted frame with every later reference frame: quality metrics want
 * shortest=1. Set before the user's options, so qgpu=shortest=0 still works. */
static av_cold int qgpu_preinit(AVFilterContext *ctx)
{
    QgpuFilterContext *s = ctx->priv;
    int ret = qgpu_framesync_preinit(ctx);
    if (ret < 0)
        return ret;
    s->fs.opt_shortest = 1;
    return 0;
}

static void qgpu_log_cb(void *opaque, int level, const char *message)
{
    /* QGPU_LOG_INFO at FFmpeg's default level: the device used, and a first
     * run compiling its kernels (else the first frames look stuck) */
    static const int av_levels[] = { AV_LOG_ERROR, AV_LOG_WARNING, AV_LOG_INFO, AV_LOG_DEBUG };
    av_log(opaque, level >= 0 && level <= 3 ? av_levels[level] : AV_LOG_DEBUG, "%s\n", message);
}

static int qgpu_averror(AVFilterContext *ctx, int err, const char *what)
{
    QgpuFilterContext *s = ctx->priv;
    const char *msg = s->q ? qgpu_last_error(s->q) : qgpu_open_error();
    av_log(ctx, AV_LOG_ERROR, "%s: %s%s%s\n", what, qgpu_strerror(err),
           msg && *msg ? ": " : "", msg ? msg : "");
    switch (err) {
    case QGPU_ERR_NO_MEMORY:
    case QGPU_ERR_DEVICE_MEMORY:
        return AVERROR(ENOMEM);
    case QGPU_ERR_INVALID_ARG:
    case QGPU_ERR_UNKNOWN_FEATURE:
    case QGPU_ERR_BAD_OPTION:
    case QGPU_ERR_MODEL:
    case QGPU_ERR_MISMATCH:
    case QGPU_ERR_UNSUPPORTED:
        return AVERROR(EINVAL);
    case QGPU_ERR_IO:
        return AVERROR(EIO);
    default:
        return AVERROR_EXTERNAL;
    }
}

/* A libvmaf-style item "key=value:key=value..." as a dictionary (keys in
 * any order). Fails (returns < 0) for items that are not in that form,
 * such as a bare "psnr". */
static int parse_item(const char *item, AVDictionary **dict)
{
    int ret;
    *dict = NULL;
    if (!strchr(item, '='))
        return AVERROR(EINVAL);
    ret = av_dict_parse_string(dict, item, "=", ":", 0);
    if (ret < 0)
        av_dict_free(dict);
    return ret;
}

/* libvmaf's filter syntax for a feature is "name=psnr:enable_chroma=false"
 * with name= anywhere; libqgpu takes "psnr=enable_chroma=false". Items
 * without a name= key are passed as they are (libqgpu's own syntax). */
static char *feature_spec(const char *item)
{
    AVDictionary *dict;
    const AVDictionaryEntry *name, *e = NULL;
    AVBPrint bp;
    char *spec;
    int first = 1;

    if (parse_item(item, &dict) < 0 || !(name = av_dict_get(dict, "name", NULL, 0))) {
        av_dict_free(&dict);
        return av_strdup(item);
    }
    av_bprint_init(&bp, 0, AV_BPRINT_SIZE_UNLIMITED);
    av_bprintf(&bp, "%s", name->value);
    while ((e = av_dict_get(dict, "", e, AV_DICT_IGNORE_SUFFIX))) {
        if (!strcmp(e->key, "name"))
            continue;
        av_bprintf(&bp, "%s%s=%s", first ? "=" : ":", e->key, e->value);
        first = 0;
    }
    av_dict_free(&dict);
    if (av_bprint_finalize(&bp, &spec) < 0)
        return NULL;
    return spec;
}

/* Gives spec (freed here; NULL: out of memory) to libqgpu as a model or a
 * feature; an error names the option's item. */
static int apply_spec(AVFilterContext *ctx, char *spec, int is_model, const char *item)
{
    QgpuFilterContext *s = ctx->priv;
    char what[256];
    int err;
    if (!spec)
        return AVERROR(ENOMEM);
    err = is_model ? qgpu_use_model(s->q, spec) : qgpu_enable_feature(s->q, spec);
    av_free(spec);
    if (err >= 0)
        return 0;
    snprintf(what, sizeof(what), "%s '%s'", is_model ? "model" : "feature", item);
    return qgpu_averror(ctx, err, what);
}

static int use_feature(AVFilterContext *ctx, const char *item)
{
    return apply_spec(ctx, feature_spec(item), 0, item);
}

/* Adds one model (libvmaf's model syntax, which libqgpu takes as it is)
 * and remembers its score name (name=, else "vmaf"). transform appends
 * enable_transform=true (the deprecated enable_transform/phone_model). */
static int use_model(AVFilterContext *ctx, const char *item, int transform)
{
    QgpuFilterContext *s = ctx->priv;
    AVDictionary *dict = NULL;
    const AVDictionaryEntry *name;
    char **names;

    parse_item(item, &dict);
    name = av_dict_get(dict, "name", NULL, 0);
    names = av_realloc_array(s->model_names, s->nb_models + 1, sizeof(*names));
    if (!names) {
        av_dict_free(&dict);
        return AVERROR(ENOMEM);
    }
    s->model_names = names;
    names[s->nb_models] = av_strdup(name ? name->value : "vmaf");
    av_dict_free(&dict);
    if (!names[s->nb_models])
        return AVERROR(ENOMEM);
    s->nb_models++;
    return apply_spec(ctx, transform ? av_asprintf("%s:enable_transform=true", item) :
                      av_strdup(item), 1, item);
}

/* Calls use_model or use_feature for every '|' separated item of list. */
static int for_each_item(AVFilterContext *ctx, const char *list, int is_feature, int transform)
{
    char *copy = av_strdup(list), *save = NULL, *item;
    int ret = 0;
    if (!copy)
        return AVERROR(ENOMEM);
    for (item = av_strtok(copy, "|", &save); item && ret >= 0; item = av_strtok(NULL, "|", &save))
        ret = is_feature ? use_feature(ctx, item) : use_model(ctx, item, transform);
    av_free(copy);
    return ret;
}

/* The models: the model option (default vmaf_v0.6.1, as libvmaf; empty:
 * none). FFmpeg 5.1's model_path=P stands for model='path=P' (see
 * doc/filter.md for how this differs from 5.1). */
static int use_models(AVFilterContext *ctx)
{
    QgpuFilterContext *s = ctx->priv;
    int transform = s->enable_transform || s->phone_model, ret;
    char *spec;

    if (!s->model_path)
        return for_each_item(ctx, s->model ? s->model : "", 0, transform);
    if (s->model && strcmp(s->model, DEFAULT_MODEL)) {
        av_log(ctx, AV_LOG_ERROR, "model_path and model are both set: list every model in "
               "model, as model='path=%s|...'\n", s->model_path);
        return AVERROR(EINVAL);
    }
    if (!(spec = av_asprintf("path=%s", s->model_path)))
        return AVERROR(ENOMEM);
    ret = use_model(ctx, spec, transform);
    av_free(spec);
    return ret;
}

/* enable_conf_interval: every model must give libvmaf's confidence-interval
 * outputs (bootstrap models); fail rather than log a score without them.
 * Asked after the first submit: a model collection registers its
 * statistics once the library knows the video format. */
static int check_conf_interval(AVFilterContext *ctx)
{
    QgpuFilterContext *s = ctx->priv;
    int i, k, n = qgpu_score_count(s->q);
    for (i = 0; i < s->nb_models; i++) {
        char want[256];
        snprintf(want, sizeof(want), "%s_ci_p95_lo", s->model_names[i]);
        for (k = 0; k < n; k++)
            if (!strcmp(qgpu_score_name(s->q, k), want))
                break;
        if (k == n) {
            av_log(ctx, AV_LOG_ERROR, "enable_conf_interval: model '%s' gives no confidence "
                   "interval (%s): use a bootstrap model (model=version=vmaf_b_v0.6.3 or "
                   "vmaf_float_b_v0.6.3, or a collection file)\n", s->model_names[i], want);
            return AVERROR(ENOSYS);
        }
    }
    return 0;
}

/* Models, then the deprecated psnr/ssim/ms_ssim switches, then feature. */
static int use_metrics(AVFilterContext *ctx)
{
    QgpuFilterContext *s = ctx->priv;
    int ret;
    if ((ret = use_models(ctx)) < 0)
        return ret;
    if (s->psnr && (ret = use_feature(ctx, "psnr=enable_chroma=false")) < 0)
        return ret;
    if (s->ssim && (ret = use_feature(ctx, "float_ssim")) < 0)
        return ret;
    if (s->ms_ssim && (ret = use_feature(ctx, "float_ms_ssim")) < 0)
        return ret;
    if (s->feature && (ret = for_each_item(ctx, s->feature, 1, 0)) < 0)
        return ret;
    return 0;
}

static av_cold int qgpu_init(AVFilterContext *ctx)
{
    QgpuFilterContext *s = ctx->priv;

    if (!av_strcasecmp(s->log_fmt, "xml"))
        s->log_format = QGPU_LOG_FORMAT_XML;
    else if (!av_strcasecmp(s->log_fmt, "json"))
        s->log_format = QGPU_LOG_FORMAT_JSON;
    else if (!av_strcasecmp(s->log_fmt, "csv"))
        s->log_format = QGPU_LOG_FORMAT_CSV;
    else if (!av_strcasecmp(s->log_fmt, "sub"))
        s->log_format = QGPU_LOG_FORMAT_SUB;
    else {
        av_log(ctx, AV_LOG_ERROR, "log_fmt '%s' unknown: use xml, json, csv or sub\n", s->log_fmt);
        return AVERROR(EINVAL);
    }
    if (!av_strcasecmp(s->pool, "mean"))
        s->pool_method = QGPU_POOL_MEAN;
    else if (!av_strcasecmp(s->pool, "min"))
        s->pool_method = QGPU_POOL_MIN;
    else if (!av_strcasecmp(s->pool, "max"))
        s->pool_method = QGPU_POOL_MAX;
    else if (!av_strcasecmp(s->pool, "harmonic_mean"))
        s->pool_method = QGPU_POOL_HARMONIC_MEAN;
    else {
        av_log(ctx, AV_LOG_ERROR, "pool '%s' unknown: use mean, min, max or harmonic_mean\n", s->pool);
        return AVERROR(EINVAL);
    }

    /* A log that cannot be written is found now, not after the whole run
     * (libvmaf's filter finds it at the end and loses the scores). */
    if (s->log_path && strcmp(s->log_path, "-")) {
        int e = qgpu_check_log_path(s->log_path);
        if (e) {
            av_log(ctx, AV_LOG_ERROR, "log_path '%s': cannot write: %s\n", s->log_path,
                   av_err2str(AVERROR(e)));
            return AVERROR(e);
        }
    }

    if (s->sample_depth && s->sample_depth < 9) {
        av_log(ctx, AV_LOG_ERROR,
               "sample_depth %d: use 9..15, or 0 for the format's own depth\n", s->sample_depth);
        return AVERROR(EINVAL);
    }
    return 0;
}

/* Opens libqgpu once the input format is known: in the OpenCL frames' own
 * context when hwfc is set, else on the device option's device. */
static int open_library(AVFilterContext *ctx, AVBufferRef *hwfc)
{
    QgpuFilterContext *s = ctx->priv;
    QgpuConfig cfg;
    int err;

    qgpu_config_default(&cfg);
    cfg.device = s->device;
    if (s->depth)
        cfg.pipeline_depth = s->depth;
    cfg.log_callback = qgpu_log_cb;
    cfg.log_opaque = ctx;
    cfg.log_level = av_log_get_level() >= AV_LOG_DEBUG ? QGPU_LOG_DEBUG :
                    av_log_get_level() >= AV_LOG_INFO ? QGPU_LOG_INFO : QGPU_LOG_WARNING;
    if (hwfc) {
#if CONFIG_OPENCL
        AVHWDeviceContext *dev = ((AVHWFramesContext *)hwfc->data)->device_ctx;
        AVOpenCLDeviceContext *ocl = dev->hwctx;
        if (s->device)
            av_log(ctx, AV_LOG_WARNING, "device=%s is ignored: OpenCL frames are scored on "
                   "their own device\n", s->device);
        err = qgpu_open_cl(&s->q, ocl->context, ocl->device_id, &cfg);
        if (err < 0)
            return qgpu_averror(ctx, err, "cannot use the frames' OpenCL device");
        s->zero_copy = 1;
        av_log(ctx, AV_LOG_VERBOSE, "zero-copy OpenCL input: libqgpu %s scores the frames' "
               "images in FFmpeg's OpenCL context on %s (%s), no host copy\n", qgpu_version(),
               qgpu_device_name(s->q), qgpu_platform_name(s->q));
#else
        return AVERROR_BUG;
#endif
    } else {
        err = qgpu_open(&s->q, &cfg);
        if (err < 0)
            return qgpu_averror(ctx, err, "cannot open the OpenCL device");
        av_log(ctx, AV_LOG_VERBOSE, "libqgpu %s on %s (%s)\n", qgpu_version(),
               qgpu_device_name(s->q), qgpu_platform_name(s->q));
    }

    return use_metrics(ctx);
}

static const enum AVPixelFormat pix_fmts[] = {
    AV_PIX_FMT_GRAY8, AV_PIX_FMT_GRAY10LE, AV_PIX_FMT_GRAY12LE, AV_PIX_FMT_GRAY16LE,
    AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV444P,
    AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P,
    AV_PIX_FMT_YUV420P10LE, AV_PIX_FMT_YUV422P10LE, AV_PIX_FMT_YUV444P10LE,
    AV_PIX_FMT_YUV420P12LE, AV_PIX_FMT_YUV422P12LE, AV_PIX_FMT_YUV444P12LE,
    AV_PIX_FMT_YUV420P16LE, AV_PIX_FMT_YUV422P16LE, AV_PIX_FMT_YUV444P16LE,
#if CONFIG_OPENCL
    AV_PIX_FMT_OPENCL,
#endif
    AV_PIX_FMT_CUDA, AV_PIX_FMT_VAAPI, /* in place when they can be, else copied to host memory */
    AV_PIX_FMT_NONE
};

/* Hardware frames the filter copies to host memory. */
static int is_transfer_format(enum AVPixelFormat fmt)
{
    return fmt == AV_PIX_FMT_CUDA || fmt == AV_PIX_FMT_VAAPI;
}

/* Semi-planar software formats of CUDA/VAAPI frames: the library's
 * QGPU_LAYOUT_NV12 (16-bit words MSB-aligned above 8 bits); 0 or -1. */
static int describe_semiplanar(enum AVPixelFormat fmt, int *layout, int *bitdepth)
{
    *layout = QGPU_LAYOUT_NV12;
    *bitdepth = fmt == AV_PIX_FMT_NV12 ? 8 : fmt == AV_PIX_FMT_P010LE ? 10 :
                fmt == AV_PIX_FMT_P016LE ? 16 : 0;
    return *bitdepth ? 0 : -1;
}

/* Layout and bit depth of a software format; negative when libqgpu can't
 * take it. With msb (OpenCL frames), samples in the top bits of 16-bit
 * words (FFmpeg 8's yuv444p10msb) are taken too; *shift says how far. */
static int describe_format(enum AVPixelFormat fmt, int msb, int *layout, int *bitdepth,
                           int *shift)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    if (!d || (d->flags & (AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_BE |
                           AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM)))
        return -1;
    if (d->comp[0].depth < 8 || d->comp[0].depth > 16)
        return -1;
    if (d->comp[0].shift && (!msb || d->comp[0].shift + d->comp[0].depth != 16))
        return -1;
    *shift = d->comp[0].shift;
    if (d->nb_components == 1 || d->nb_components == 2) {
        if (d->nb_components == 2)
            return -1; /* gray + alpha */
        *layout = QGPU_LAYOUT_400;
    } else if (!(d->flags & AV_PIX_FMT_FLAG_PLANAR) || d->comp[1].plane != 1 || d->comp[2].plane != 2) {
        return -1;
    } else if (d->log2_chroma_w == 1 && d->log2_chroma_h == 1) {
        *layout = QGPU_LAYOUT_420;
    } else if (d->log2_chroma_w == 1 && d->log2_chroma_h == 0) {
        *layout = QGPU_LAYOUT_422;
    } else if (d->log2_chroma_w == 0 && d->log2_chroma_h == 0) {
        *layout = QGPU_LAYOUT_444;
    } else {
        return -1;
    }
    *bitdepth = d->comp[0].depth;
    return 0;
}

static enum AVPixelFormat link_sw_format(AVFilterLink *l)
{
    if (l->format == AV_PIX_FMT_OPENCL || is_transfer_format(l->format)) {
        AVBufferRef *ref = QF_LINK_HWFC(l);
        if (!ref)
            return AV_PIX_FMT_NONE;
        return ((AVHWFramesContext *)ref->data)->sw_format;
    }
    return l->format;
}

/* VAAPI frames of both inputs mapped to OpenCL: an OpenCL device derived
 * from their VAAPI device and an OpenCL frames context derived from each
 * input's. 0 when mapping is set up; otherwise a negative AVERROR, said at
 * verbose level, and the frames are copied through host memory. */
static int map_setup(AVFilterContext *ctx)
{
#if CONFIG_OPENCL
    QgpuFilterContext *s = ctx->priv;
    AVBufferRef *hwfc[2] = {QF_LINK_HWFC(ctx->inputs[0]), QF_LINK_HWFC(ctx->inputs[1])};
    AVHWFramesContext *fc[2];
    int i, ret;

    if (!hwfc[0] || !hwfc[1])
        return AVERROR_BUG;
    fc[0] = (AVHWFramesContext *)hwfc[0]->data;
    fc[1] = (AVHWFramesContext *)hwfc[1]->data;
    if (fc[0]->device_ref->data != fc[1]->device_ref->data) {
        av_log(ctx, AV_LOG_VERBOSE, "VAAPI frames of two devices: copied through host memory\n");
        return AVERROR(ENOSYS);
    }
    ret = av_hwdevice_ctx_create_derived(&s->map_device, AV_HWDEVICE_TYPE_OPENCL,
                                         fc[0]->device_ref, 0);
    for (i = 0; i < 2 && ret >= 0; i++)
        ret = av_hwframe_ctx_create_derived(&s->map_frames[i], AV_PIX_FMT_OPENCL, s->map_device,
                                            hwfc[i], AV_HWFRAME_MAP_READ);
    if (ret < 0) {
        av_log(ctx, AV_LOG_VERBOSE, "VAAPI frames cannot be mapped to OpenCL here (%s: this "
               "FFmpeg or driver has no VAAPI-OpenCL interop): each pair is copied through "
               "host memory\n", av_err2str(ret));
        av_buffer_unref(&s->map_frames[0]);
        av_buffer_unref(&s->map_frames[1]);
        av_buffer_unref(&s->map_device);
        return ret;
    }
    av_log(ctx, AV_LOG_VERBOSE, "VAAPI frames mapped to OpenCL (derived device), scored "
           "without a host copy\n");
    return 0;
#else
    return AVERROR(ENOSYS);
#endif
}

static int config_input_ref(AVFilterLink *inlink)
{
    AVFilterContext *ctx = inlink->dst;
    QgpuFilterContext *s = ctx->priv;
    AVFilterLink *mainlink = ctx->inputs[0];
    enum AVPixelFormat mfmt = link_sw_format(mainlink), rfmt = link_sw_format(inlink);

    if (mainlink->w != inlink->w || mainlink->h != inlink->h || mfmt != rfmt) {
        av_log(ctx, AV_LOG_ERROR,
               "main (distorted) and reference must have the same size and pixel format: "
               "main %dx%d %s, reference %dx%d %s. Scale the distorted video to the "
               "reference first, as libvmaf's users do: "
               "[0:v]scale=%d:%d:flags=bicubic[main];[main][1:v]qgpu\n",
               mainlink->w, mainlink->h, av_get_pix_fmt_name(mfmt) ? av_get_pix_fmt_name(mfmt) : "?",
               inlink->w, inlink->h, av_get_pix_fmt_name(rfmt) ? av_get_pix_fmt_name(rfmt) : "?",
               inlink->w, inlink->h);
        return AVERROR(EINVAL);
    }
    if ((mainlink->format == AV_PIX_FMT_OPENCL) != (inlink->format == AV_PIX_FMT_OPENCL) ||
        is_transfer_format(mainlink->format) != is_transfer_format(inlink->format)) {
        av_log(ctx, AV_LOG_ERROR, "main and reference must both be OpenCL frames (hwupload on "
               "both inputs), both CUDA/VAAPI frames or both software frames\n");
        return AVERROR(EINVAL);
    }
    s->transfer = is_transfer_format(inlink->format);
    s->shift = 0;
    if ((s->transfer || inlink->format == AV_PIX_FMT_OPENCL) &&
        describe_semiplanar(rfmt, &s->layout, &s->bitdepth) == 0) {
        /* NV12/P010 as the decoder (or hwupload) wrote them */
    } else if (describe_format(rfmt, inlink->format == AV_PIX_FMT_OPENCL, &s->layout,
                               &s->bitdepth, &s->shift) < 0) {
        av_log(ctx, AV_LOG_ERROR, "pixel format %s is not supported (planar YUV or gray, 8 to 16 bit%s)\n",
               av_get_pix_fmt_name(rfmt) ? av_get_pix_fmt_name(rfmt) : "?",
               inlink->format == AV_PIX_FMT_OPENCL ?
               "; put format=yuv420p (8-bit) or format=yuv420p16 with sample_depth=10 (10-bit) "
               "before hwupload" : "");
        return AVERROR(EINVAL);
    }
    s->sw_format = rfmt;
    if (s->sample_depth) {
        if (inlink->format != AV_PIX_FMT_OPENCL || s->bitdepth != 16) {
            av_log(ctx, AV_LOG_ERROR, "sample_depth is for OpenCL frames of a 16-bit format "
                   "(format=yuv420p16,hwupload), not %s%s; software frames: convert to the "
                   "depth instead (format=yuv420p10le)\n", av_get_pix_fmt_name(rfmt),
                   inlink->format == AV_PIX_FMT_OPENCL ? " frames" : "");
            return AVERROR(EINVAL);
        }
        s->bitdepth = s->sample_depth;
        s->shift = 16 - s->sample_depth;
    } else if (inlink->format == AV_PIX_FMT_OPENCL && s->bitdepth == 16) {
        av_log(ctx, AV_LOG_WARNING, "OpenCL frames of %s are scored as 16-bit samples; if the "
               "video is 10- or 12-bit (converted to 16 bits for hwupload), set sample_depth=10 "
               "or 12\n", av_get_pix_fmt_name(rfmt));
    }
    if (s->layout == QGPU_LAYOUT_NV12)
        s->shift = 0; /* NV12 above 8 bits: MSB-aligned words, the library shifts */
    if (s->q)
        return 0; /* configured again: keep the library as it is */
    if (inlink->format == AV_PIX_FMT_VAAPI && map_setup(ctx) == 0) {
        s->transfer = 0;
        return open_library(ctx, s->map_frames[1]);
    }
    if (inlink->format == AV_PIX_FMT_OPENCL) {
#if CONFIG_OPENCL
        AVBufferRef *mref = QF_LINK_HWFC(mainlink), *rref = QF_LINK_HWFC(inlink);
        AVHWDeviceContext *mdev, *rdev;
        if (!mref || !rref)
            return AVERROR_BUG;
        mdev = ((AVHWFramesContext *)mref->data)->device_ctx;
        rdev = ((AVHWFramesContext *)rref->data)->device_ctx;
        if (mdev->type != AV_HWDEVICE_TYPE_OPENCL || rdev->type != AV_HWDEVICE_TYPE_OPENCL ||
            ((AVOpenCLDeviceContext *)mdev->hwctx)->context !=
            ((AVOpenCLDeviceContext *)rdev->hwctx)->context) {
            av_log(ctx, AV_LOG_ERROR, "main and reference OpenCL frames must come from the same "
                   "OpenCL device (one -filter_hw_device for both hwuploads)\n");
            return AVERROR(EINVAL);
        }
        return open_library(ctx, rref);
#endif
    }
#if QF_CUDA
    if (inlink->format == AV_PIX_FMT_CUDA) {
        char why[256];
        if (qgpu_cuda_available(why, sizeof(why)) == 0) {
            s->cuda = 1;
            av_log(ctx, AV_LOG_VERBOSE, "CUDA frames (%s): scored in place, each frame copied "
                   "on the GPU into memory libqgpu imports (no host copy)\n",
                   av_get_pix_fmt_name(rfmt));
            return open_library(ctx, NULL);
        }
        av_log(ctx, AV_LOG_VERBOSE, "CUDA frames cannot be scored in place (%s)\n", why);
    }
#endif
    if (s->transfer)
        av_log(ctx, AV_LOG_VERBOSE, "%s frames (%s): each pair copied to host memory, then "
               "to libqgpu's device\n", av_get_pix_fmt_name(inlink->format),
               av_get_pix_fmt_name(rfmt));
    return open_library(ctx, NULL);
}

static int do_qgpu(FFFrameSync *fs);

static int config_output(AVFilterLink *outlink)
{
    AVFilterContext *ctx = outlink->src;
    QgpuFilterContext *s = ctx->priv;
    AVFilterLink *mainlink = ctx->inputs[0], *reflink = ctx->inputs[1];
    int ret;

    if ((ret = ff_framesync_init_dualinput(&s->fs, ctx)) < 0)
        return ret;
    s->fs.on_event = do_qgpu;
    outlink->w = mainlink->w;
    outlink->h = mainlink->h;
    outlink->time_base = mainlink->time_base;
    outlink->sample_aspect_ratio = mainlink->sample_aspect_ratio;
    QF_SET_FRAME_RATE(outlink, mainlink);
    if ((ret = ff_framesync_configure(&s->fs)) < 0)
        return ret;
    outlink->time_base = s->fs.time_base;

    if (av_cmp_q(mainlink->time_base, reflink->time_base))
        av_log(ctx, AV_LOG_WARNING,
               "main and reference have different time bases (%d/%d and %d/%d): frames are "
               "paired by timestamp. If the inputs don't start at the same time, run ffmpeg "
               "with -copyts (or setpts=PTS-STARTPTS on both inputs), or scores may compare "
               "the wrong frames.\n",
               mainlink->time_base.num, mainlink->time_base.den,
               reflink->time_base.num, reflink->time_base.den);
    return 0;
}

/* ---- the held-frame ring ---- */

static HeldFrame *held_at(QgpuFilterContext *s, int i)
{
    return &s->held[(s->held_head + i) % s->held_cap];
}

static int held_push(QgpuFilterContext *s, AVFrame *frame, int64_t index)
{
    HeldFrame *h;
    if (s->held_count == s->held_cap) {
        int cap = s->held_cap ? 2 * s->held_cap : 8, i;
        HeldFrame *n = av_calloc(cap, sizeof(*n));
        if (!n)
            return AVERROR(ENOMEM);
        for (i = 0; i < s->held_count; i++)
            n[i] = *held_at(s, i);
        av_free(s->held);
        s->held = n;
        s->held_cap = cap;
        s->held_head = 0;
    }
    h = held_at(s, s->held_count++);
    h->frame = frame;
    h->index = index;
    h->final = 0;
    return 0;
}

static int attach_scores(AVFilterContext *ctx, unsigned index)
{
    QgpuFilterContext *s = ctx->priv;
    int i, n = qgpu_score_count(s->q);
    for (i = 0; i < s->held_count; i++) {
        HeldFrame *h = held_at(s, i);
        int k, listed;
        if (h->index != (int64_t)index)
            continue;
        /* n_subsample: metadata on the frames the log lists (0, n, 2n...) */
        listed = index % s->n_subsample == 0;
        for (k = 0; listed && k < n; k++) {
            const char *name = qgpu_score_name(s->q, k);
            char key[128], val[64];
            double v;
            if (!name || qgpu_get_score(s->q, index, name, &v) < 0)
                continue;
            snprintf(key, sizeof(key), QF_METADATA_PREFIX "%s", name);
            snprintf(val, sizeof(val), "%.6f", v);
            av_dict_set(&h->frame->metadata, key, val, 0);
        }
        h->final = 1;
        return 0;
    }
    av_log(ctx, AV_LOG_ERROR, "libqgpu finished frame %u, which the filter does not hold\n", index);
    return AVERROR_BUG;
}

/* Collects the finished frames (waiting for them when wait is set) and
 * sends every leading frame whose scores are final. */
static int drain(AVFilterContext *ctx, int wait)
{
    QgpuFilterContext *s = ctx->priv;
    unsigned index;
    int err, ret;

    while ((err = qgpu_collect(s->q, &index, wait)) == 1) {
        if ((ret = attach_scores(ctx, index)) < 0)
            return ret;
    }
    if (err < 0)
        return qgpu_averror(ctx, err, "scoring failed");

    while (s->held_count) {
        HeldFrame *h = held_at(s, 0);
        AVFrame *f;
        if (h->index >= 0 && !h->final)
            break;
        f = h->frame;
        h->frame = NULL;
        s->held_head = (s->held_head + 1) % s->held_cap;
        s->held_count--;
        if ((ret = ff_filter_frame(ctx->outputs[0], f)) < 0)
            return ret;
    }
    return 0;
}

/* Planes the library reads: luma only for gray formats. */
static int nb_planes(const QgpuFilterContext *s)
{
    return s->layout == QGPU_LAYOUT_400 ? 1 : s->layout == QGPU_LAYOUT_NV12 ? 2 : 3;
}

#if CONFIG_OPENCL
/* Points a QgpuCLPicture at an OpenCL frame's plane images. */
static void fill_cl_picture(QgpuFilterContext *s, QgpuCLPicture *p, const AVFrame *f)
{
    int i;
    *p = (QgpuCLPicture){ .width = f->width, .height = f->height, .layout = s->layout,
                          .bitdepth = s->bitdepth, .shift = s->shift };
    for (i = 0; i < nb_planes(s); i++)
        p->plane[i] = (cl_mem)f->data[i];
}
#endif

/* Points a QgpuPicture at a software frame's planes. */
static void fill_picture(QgpuFilterContext *s, QgpuPicture *p, const AVFrame *f)
{
    int i;
    *p = (QgpuPicture){ .width = f->width, .height = f->height, .layout = s->layout,
                        .bitdepth = s->bitdepth };
    for (i = 0; i < nb_planes(s); i++) {
        p->data[i] = f->data[i];
        p->stride[i] = f->linesize[i];
    }
}

/* Full range: the frame says so, or its format does (yuvj*). Unsaid
 * counts as limited, as in the qgpu tool. */
static int is_full_range(const AVFrame *f)
{
    enum AVPixelFormat fmt = f->format;
    if ((fmt == AV_PIX_FMT_OPENCL || is_transfer_format(fmt)) && f->hw_frames_ctx)
        fmt = ((AVHWFramesContext *)f->hw_frames_ctx->data)->sw_format;
    return f->color_range == AVCOL_RANGE_JPEG || fmt == AV_PIX_FMT_YUVJ420P ||
           fmt == AV_PIX_FMT_YUVJ422P || fmt == AV_PIX_FMT_YUVJ444P;
}

/* A pair the metrics cannot compare as it is: frames of another size than
 * the stream started with (the library would refuse them; say why), or one
 * input full range and the other limited (libvmaf compares samples as they
 * are: the scores would be wrong, not just different). */
static int check_pair(AVFilterContext *ctx, const AVFrame *ref, const AVFrame *dist)
{
    const AVFilterLink *ml = ctx->inputs[0];
    const AVFrame *f[2] = {dist, ref};
    const char *what[2] = {"distorted", "reference"};
    int i;
    for (i = 0; i < 2; i++) {
        if (f[i]->width != ml->w || f[i]->height != ml->h) {
            av_log(ctx, AV_LOG_ERROR, "a %s frame is %dx%d, the stream started as %dx%d: a size "
                   "change midway is not scored (ffmpeg rebuilds the filter graph on such a "
                   "change unless -reinit_filter 0, and the scores start again; score the "
                   "parts separately)\n", what[i], f[i]->width, f[i]->height, ml->w, ml->h);
            return AVERROR(EINVAL);
        }
    }
    if (is_full_range(ref) != is_full_range(dist)) {
        int ref_full = is_full_range(ref);
        av_log(ctx, AV_LOG_ERROR, "the reference is %s range and the distorted input %s range: "
               "libvmaf's metrics compare the samples as they are, so the scores would be "
               "wrong; convert the %s input first, e.g. [%s]scale=in_range=full:"
               "out_range=limited[..]\n", ref_full ? "full" : "limited",
               ref_full ? "limited" : "full", ref_full ? "reference" : "distorted",
               ref_full ? "ref" : "dist");
        return AVERROR(EINVAL);
    }
    return 0;
}

/* CUDA/VAAPI frames to host memory, as they are (NV12, P010...), and
 * submitted from there. */
static int submit_through_host(AVFilterContext *ctx, const AVFrame *ref, const AVFrame *dist)
{
    QgpuFilterContext *s = ctx->priv;
    QgpuPicture pr, pd;
    int i, err;
    for (i = 0; i < 2; i++) {
        if (!s->host[i] && !(s->host[i] = av_frame_alloc()))
            return AVERROR(ENOMEM);
        av_frame_unref(s->host[i]);
        if ((err = av_hwframe_transfer_data(s->host[i], i ? ref : dist, 0)) < 0) {
            av_log(ctx, AV_LOG_ERROR, "cannot copy a %s frame to host memory\n",
                   av_get_pix_fmt_name(ref->format));
            return err;
        }
    }
    fill_picture(s, &pr, s->host[1]);
    fill_picture(s, &pd, s->host[0]);
    err = qgpu_submit(s->q, &pr, &pd);
    return err < 0 ? qgpu_averror(ctx, err, "cannot score the frame") : 0;
}

#if QF_CUDA
/* Stops the in-place CUDA path: said once, at verbose level, with why;
 * later pairs go through host memory. */
static void cuda_stop(AVFilterContext *ctx, const char *why)
{
    QgpuFilterContext *s = ctx->priv;
    s->cuda = 0;
    av_log(ctx, AV_LOG_VERBOSE, "CUDA frames cannot be scored in place (%s): each pair is "
           "copied through host memory\n", why);
}

/* A CUDA frame as libqgpu's picture: its planes' device addresses, on the
 * frames' CUDA context and stream. */
static void fill_cuda_picture(QgpuFilterContext *s, QgpuCudaPicture *p, const AVFrame *f)
{
    const AVHWFramesContext *fc = (const AVHWFramesContext *)f->hw_frames_ctx->data;
    const AVCUDADeviceContext *hwctx = fc->device_ctx->hwctx;
    int i;
    *p = (QgpuCudaPicture){ .width = f->width, .height = f->height, .layout = s->layout,
                            .bitdepth = s->bitdepth, .cuda_context = hwctx->cuda_ctx,
                            .cuda_stream = hwctx->stream };
    for (i = 0; i < nb_planes(s); i++) {
        p->plane[i] = (unsigned long long)(uintptr_t)f->data[i];
        p->pitch[i] = (size_t)f->linesize[i];
    }
}

/* A pair of CUDA frames scored in place: each copied into its input's
 * ring, then submitted from there (the copies on the device are done when
 * qgpu_submit_cuda returns, so the ring's slots go back at once). 1 when
 * submitted, 0 when the pair must go through host memory, or a negative
 * AVERROR. */
static int submit_cuda(AVFilterContext *ctx, const AVFrame *ref, const AVFrame *dist)
{
    QgpuFilterContext *s = ctx->priv;
    QgpuCudaFrame *f[2] = {NULL, NULL};
    QgpuCudaPicture pic;
    char err[256];
    int i, ret = 0;

    for (i = 0; i < 2; i++) {
        fill_cuda_picture(s, &pic, i ? ref : dist);
        if (!s->cuda_ring[i] &&
            (ret = qgpu_cuda_ring_create(&s->cuda_ring[i], &pic, 2, err, sizeof(err))) < 0) {
            cuda_stop(ctx, err);
            break;
        }
        if ((ret = qgpu_cuda_ring_take(s->cuda_ring[i], &pic, &f[i])) <= 0) {
            /* a picture that does not fit the ring (the size changed), or CUDA failed */
            cuda_stop(ctx, ret < 0 ? qgpu_cuda_ring_error(s->cuda_ring[i])
                                   : "the frames changed size or format");
            break;
        }
    }
    if (f[0] && f[1]) {
        ret = qgpu_submit_cuda(s->q, f[1], f[0]);
        if (ret == QGPU_ERR_UNSUPPORTED)
            cuda_stop(ctx, qgpu_last_error(s->q));
    }
    qgpu_cuda_frame_release(&f[0]);
    qgpu_cuda_frame_release(&f[1]);
    if (!s->cuda)
        return 0;
    if (ret < 0)
        return qgpu_averror(ctx, ret, "cannot score the frame");
    s->cuda_pairs++;
    return 1;
}
#endif

#if CONFIG_OPENCL
/* VAAPI frames mapped to OpenCL images for the time of the submit (the
 * library has copied them when it returns); a pair that cannot be mapped
 * goes through host memory. */
static int submit_mapped(AVFilterContext *ctx, const AVFrame *ref, const AVFrame *dist)
{
    QgpuFilterContext *s = ctx->priv;
    AVFrame *m[2] = {av_frame_alloc(), av_frame_alloc()};
    QgpuCLPicture pr, pd;
    int i, err = 0;

    for (i = 0; i < 2 && !err; i++) {
        if (!m[i]) {
            err = AVERROR(ENOMEM);
            break;
        }
        m[i]->format = AV_PIX_FMT_OPENCL;
        m[i]->hw_frames_ctx = av_buffer_ref(s->map_frames[i]);
        if (!m[i]->hw_frames_ctx)
            err = AVERROR(ENOMEM);
        else
            err = av_hwframe_map(m[i], i ? ref : dist, AV_HWFRAME_MAP_READ);
    }
    if (err == AVERROR(ENOMEM)) {
        av_frame_free(&m[0]);
        av_frame_free(&m[1]);
        return err;
    }
    if (err < 0) {
        if (!s->map_failures++)
            av_log(ctx, AV_LOG_WARNING, "cannot map a VAAPI frame to OpenCL (%s): such pairs "
                   "are copied through host memory\n", av_err2str(err));
        av_frame_free(&m[0]);
        av_frame_free(&m[1]);
        return submit_through_host(ctx, ref, dist);
    }
    fill_cl_picture(s, &pr, m[1]);
    fill_cl_picture(s, &pd, m[0]);
    err = qgpu_submit_cl(s->q, &pr, &pd);
    av_frame_free(&m[0]); /* unmaps */
    av_frame_free(&m[1]);
    return err < 0 ? qgpu_averror(ctx, err, "cannot score the frame") : 0;
}
#endif

/* Scores a frame pair: from the frames' OpenCL images in place, or from
 * host memory. */
static int submit_pair(AVFilterContext *ctx, const AVFrame *ref, const AVFrame *dist)
{
    QgpuFilterContext *s = ctx->priv;
    int err;
#if CONFIG_OPENCL
    if (s->map_frames[0])
        return submit_mapped(ctx, ref, dist);
    if (s->zero_copy) {
        QgpuCLPicture pr, pd;
        fill_cl_picture(s, &pr, ref);
        fill_cl_picture(s, &pd, dist);
        /* returns when libqgpu's device copies of the images are done: the
         * frames may go back to their pool afterwards */
        err = qgpu_submit_cl(s->q, &pr, &pd);
    } else
#endif
    if (s->transfer) {
#if QF_CUDA
        if (s->cuda && (err = submit_cuda(ctx, ref, dist)) != 0)
            return err < 0 ? err : 0;
        if (ref->format == AV_PIX_FMT_CUDA)
            s->cuda_host_pairs++;
#endif
        return submit_through_host(ctx, ref, dist);
    } else {
        QgpuPicture pr, pd;
        fill_picture(s, &pr, ref);
        fill_picture(s, &pd, dist);
        err = qgpu_submit(s->q, &pr, &pd);
    }
    if (err < 0)
        return qgpu_averror(ctx, err, "cannot score the frame");
    return 0;
}

static int do_qgpu(FFFrameSync *fs)
{
    AVFilterContext *ctx = fs->parent;
    QgpuFilterContext *s = ctx->priv;
    AVFrame *main_frame = NULL, *ref_frame = NULL, *out;
    int64_t index = -1;
    int ret;

    s->events++;
    /* Not ff_framesync_dualinput_get(): in 5.1 it may make the main frame
     * writable (a pixel copy, EINVAL on OpenCL frames). A reference is enough. */
    if ((ret = ff_framesync_get_frame(fs, 0, &main_frame, 0)) < 0 ||
        (ret = ff_framesync_get_frame(fs, 1, &ref_frame, 0)) < 0)
        return ret;
    if (!(out = av_frame_clone(main_frame)))
        return AVERROR(ENOMEM);
    out->pts = av_rescale_q(fs->pts, fs->time_base, ctx->outputs[0]->time_base);

    /* Every pair is scored (n_subsample only thins the log and the
     * metadata, as libvmaf's temporal features also see every frame) */
    if (ref_frame && !s->flushed) {
        if ((ret = check_pair(ctx, ref_frame, main_frame)) < 0 ||
            (ret = submit_pair(ctx, ref_frame, main_frame)) < 0)
            goto fail;
        index = s->submitted++;
        if (index == 0 && s->enable_conf_interval && (ret = check_conf_interval(ctx)) < 0)
            goto fail;
    }
    if ((ret = held_push(s, out, index)) < 0)
        goto fail;
    return drain(ctx, 0);
fail:
    av_frame_free(&out);
    return ret;
}

static int finish(AVFilterContext *ctx)
{
    QgpuFilterContext *s = ctx->priv;
    int err;
    if (s->flushed)
        return 0;
    s->flushed = 1;
    if ((err = qgpu_flush(s->q)) < 0)
        return qgpu_averror(ctx, err, "flush failed");
    return 0;
}

static int write_log(AVFilterContext *ctx)
{
    QgpuFilterContext *s = ctx->priv;
    int err;
    double fps = 0;
    s->log_written = 1;
    if (ctx->outputs[0]) {
        AVRational fr = QF_FRAME_RATE(ctx->outputs[0]);
        if (fr.num > 0 && fr.den > 0)
            fps = av_q2d(fr);
    }
    err = qgpu_write_log_subsampled(s->q, s->log_path, s->log_format, fps, s->n_subsample);
    if (err < 0)
        return qgpu_averror(ctx, err, "cannot write the log");
    return 0;
}

static int qgpu_activate(AVFilterContext *ctx)
{
    QgpuFilterContext *s = ctx->priv;
    uint64_t events = s->events;
    int ret = ff_framesync_activate(&s->fs);
    if (ret < 0)
        return ret;
    /* framesync asks its inputs for frames only while the output wants one,
     * and only when it has no frame pair ready; a pair consumed without a
     * frame going out (it is held for its scores) would otherwise leave
     * nobody to request the next one. Run again: the next call requests. */
    if (!s->fs.eof && s->events != events && ff_outlink_frame_wanted(ctx->outputs[0]))
        ff_filter_set_ready(ctx, 100);
    /* framesync has signalled EOF on the output; the frames still held are
     * queued before that status is seen downstream, in this same call. */
    if (s->fs.eof && !s->eof_done) {
        s->eof_done = 1;
        if ((ret = finish(ctx)) < 0)
            return ret;
        if ((ret = drain(ctx, 1)) < 0)
            return ret;
        if (s->held_count) {
            av_log(ctx, AV_LOG_ERROR, "%d frames never got their scores\n", s->held_count);
            return AVERROR_BUG;
        }
        /* Written here, not at uninit, so that a log that cannot be written
         * (a full disk) fails the run instead of an error line and exit 0. */
        if (s->log_path && s->submitted && (ret = write_log(ctx)) < 0)
            return ret;
    }
    return 0;
}

/* Every score pooled with pool (over the logged frames), and the whole-clip
 * values, at info level: "psnr_y mean: 37.481772". */
static void log_pooled(AVFilterContext *ctx)
{
    QgpuFilterContext *s = ctx->priv;
    int i, n = qgpu_score_count(s->q);
    for (i = 0; i < n; i++) {
        const char *name = qgpu_score_name(s->q, i);
        double v;
        if (name && qgpu_get_pooled_subsampled(s->q, name, s->pool_method, s->n_subsample, &v) == 0)
            av_log(ctx, AV_LOG_INFO, "%s %s: %f\n", name, s->pool, v);
    }
    n = qgpu_aggregate_count(s->q);
    for (i = 0; i < n; i++) {
        const char *name = qgpu_aggregate_name(s->q, i);
        double v;
        if (name && qgpu_get_aggregate(s->q, name, &v) == 0)
            av_log(ctx, AV_LOG_INFO, "%s: %f\n", name, v);
    }
}

/* libvmaf's filter prints "VMAF score: %f" at info level once per model, at
 * the end, after everything else it prints: tools (ab-av1...) parse it. */
static void print_vmaf_scores(AVFilterContext *ctx)
{
    QgpuFilterContext *s = ctx->priv;
    int i;
    for (i = 0; i < s->nb_models; i++) {
        double v;
        int err = qgpu_get_pooled_subsampled(s->q, s->model_names[i], s->pool_method,
                                             s->n_subsample, &v);
        if (err < 0)
            qgpu_averror(ctx, err, "no pooled VMAF score");
        else
            av_log(ctx, AV_LOG_INFO, "VMAF score: %f\n", v);
    }
}

static av_cold void qgpu_uninit(AVFilterContext *ctx)
{
    QgpuFilterContext *s = ctx->priv;
    int i;

#if CONFIG_OPENCL
    if (s->q && s->zero_copy)
        av_log(ctx, AV_LOG_VERBOSE, "zero-copy OpenCL input: %u frame pairs copied on the "
               "device, %u through host memory\n", qgpu_frames_from_device(s->q),
               qgpu_frames_from_host(s->q));
#endif
#if QF_CUDA
    if (s->cuda_pairs || s->cuda_host_pairs)
        av_log(ctx, AV_LOG_VERBOSE, "CUDA frames: %u pairs scored in place, %u copied through "
               "host memory\n", s->cuda_pairs, s->cuda_host_pairs);
#endif
    if (s->q && s->submitted) {
        unsigned index;
        if (finish(ctx) == 0)
            while (qgpu_collect(s->q, &index, 1) == 1)
                ;
        if (qgpu_frame_count(s->q)) {
            log_pooled(ctx);
            print_vmaf_scores(ctx);
        }
        /* not written at EOF: the run stopped early (-frames:v, an error) */
        if (s->log_path && !s->log_written)
            write_log(ctx);
    }
    for (i = 0; i < s->held_count; i++)
        av_frame_free(&held_at(s, i)->frame);
    av_freep(&s->held);
    s->held_count = s->held_cap = 0;
    for (i = 0; i < s->nb_models; i++)
        av_freep(&s->model_names[i]);
    av_freep(&s->model_names);
    s->nb_models = 0;
    qgpu_close(&s->q); /* releases its imports of the rings' memory first */
#if QF_CUDA
    qgpu_cuda_ring_free(&s->cuda_ring[0]);
    qgpu_cuda_ring_free(&s->cuda_ring[1]);
#endif
    av_frame_free(&s->host[0]);
    av_frame_free(&s->host[1]);
    av_buffer_unref(&s->map_frames[0]);
    av_buffer_unref(&s->map_frames[1]);
    av_buffer_unref(&s->map_device);
    ff_framesync_uninit(&s->fs);
}

static const AVFilterPad qgpu_inputs[] = {
    {
        .name = "main",
        .type = AVMEDIA_TYPE_VIDEO,
    },
    {
        .name = "reference",
        .type = AVMEDIA_TYPE_VIDEO,
        .config_props = config_input_ref,
    },
};

static const AVFilterPad qgpu_outputs[] = {
    {
        .name = "default",
        .type = AVMEDIA_TYPE_VIDEO,
        .config_props = config_output,
    },
};

const QF_FILTER_T QF_SYMBOL = {
    QF_P(name) = QF_NAME,
    QF_P(description) = NULL_IF_CONFIG_SMALL("Compute libvmaf-family quality metrics on an OpenCL device (libqgpu). "
                                              "Framesync's shortest is 1 by default here."),
    QF_P(priv_class) = &qgpu_class,
    QF_P(flags) = AVFILTER_FLAG_METADATA_ONLY,
    .preinit = qgpu_preinit,
    .init = qgpu_init,
    .uninit = qgpu_uninit,
    .activate = qgpu_activate,
    .priv_size = sizeof(QgpuFilterContext),
    FILTER_INPUTS(qgpu_inputs),
    FILTER_OUTPUTS(qgpu_outputs),
    FILTER_PIXFMTS_ARRAY(pix_fmts),
};
