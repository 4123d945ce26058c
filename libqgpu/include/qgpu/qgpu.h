/*
 * libqgpu: video quality metrics (the libvmaf family) on any OpenCL device.
 *
 * Usage, in order:
 *   qgpu_config_default(&cfg);  cfg.device = "auto";
 *   qgpu_open(&ctx, &cfg);
 *   qgpu_enable_feature(ctx, "psnr");            (any number of times)
 *   for each frame pair:
 *       qgpu_submit(ctx, &ref, &dist);            (returns without waiting)
 *       while (qgpu_collect(ctx, &frame, 0) == 1) (finished frames, in order)
 *           qgpu_get_score(ctx, frame, "psnr_y", &value);
 *   qgpu_flush(ctx);
 *   while (qgpu_collect(ctx, &frame, 1) == 1) ...;
 *   qgpu_get_pooled(ctx, "psnr_y", QGPU_POOL_MEAN, &mean);
 *   qgpu_close(&ctx);
 *
 * Frames already in OpenCL memory (FFmpeg's OpenCL frames...): open the
 * context on the caller's cl_context and submit the images themselves with
 * qgpu/qgpu_opencl.h (qgpu_open_cl, qgpu_submit_cl); no host copy.
 *
 * Threading: a context may be used from one thread at a time (calls on one
 * context must not overlap; the caller serialises them). Different contexts
 * are independent and may be used from different threads at once. The log
 * callback is called from the thread that made the call that logs.
 *
 * Errors: every function that can fail returns a negative QGPU_ERR_* code;
 * qgpu_strerror() names it and qgpu_last_error() gives the context's
 * detailed message (for example a kernel build log). The library never
 * prints and never aborts.
 */
#ifndef QGPU_QGPU_H
#define QGPU_QGPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* QGPU_VERSION_MAJOR, _MINOR, _PATCH and QGPU_VERSION (generated from the
 * project's VERSION file). */
#include "qgpu/version.h"

/* What the shared library exports: it is built with -fvisibility=hidden,
 * and every function declared here carries QGPU_API. */
#if defined(__GNUC__)
#define QGPU_API __attribute__((visibility("default")))
#else
#define QGPU_API
#endif

/* Returns the library version as "MAJOR.MINOR.PATCH". */
QGPU_API const char *qgpu_version(void);

/* Error codes (always negative). */
enum QgpuError {
    QGPU_OK = 0,
    QGPU_ERR_INVALID_ARG = -1,   /* NULL pointer, out-of-range value */
    QGPU_ERR_NO_MEMORY = -2,     /* host allocation failed */
    QGPU_ERR_NO_DEVICE = -3,     /* no OpenCL device matches the selector */
    QGPU_ERR_OPENCL = -4,        /* an OpenCL call failed (see qgpu_last_error) */
    QGPU_ERR_BUILD = -5,         /* kernel compilation failed (log in qgpu_last_error) */
    QGPU_ERR_UNSUPPORTED = -6,   /* pixel format / bit depth / size a feature can't take */
    QGPU_ERR_MISMATCH = -7,      /* reference and distorted pictures differ in geometry */
    QGPU_ERR_UNKNOWN_FEATURE = -8, /* no feature, option or score of that name */
    QGPU_ERR_BAD_OPTION = -9,    /* option value unparsable or out of range */
    QGPU_ERR_STATE = -10,        /* call not allowed now (e.g. submit after flush) */
    QGPU_ERR_DEVICE_MEMORY = -11, /* device out of memory */
    QGPU_ERR_IO = -12,           /* file could not be read or written */
    QGPU_ERR_MODEL = -13,        /* a model file is invalid */
    QGPU_ERR_CUDA = -14,         /* a CUDA driver call failed (qgpu_cuda.h) */
};

/* Static English name of an error code; never NULL. */
QGPU_API const char *qgpu_strerror(int err);

/* Log levels passed to the log callback. */
enum QgpuLogLevel {
    QGPU_LOG_ERROR = 0,
    QGPU_LOG_WARNING = 1,
    QGPU_LOG_INFO = 2,
    QGPU_LOG_DEBUG = 3,
};

typedef void (*QgpuLogCallback)(void *opaque, int level, const char *message);

typedef struct QgpuConfig {
    /* Device selector: NULL or "auto" (fastest GPU, else any CPU device),
     * "gpu", "cpu", "P:D" (platform and device index, as --list-devices
     * prints them) or a case-insensitive substring of the device name.
     * When NULL the environment variable QGPU_DEVICE is used, then "auto". */
    const char *device;
    /* Frames in flight: 1..16, default 2. More slots hide more latency at
     * the cost of device memory (one set of buffers per slot). */
    int pipeline_depth;
    /* Messages of level <= log_level go to log_callback (if set). */
    QgpuLogCallback log_callback;
    void *log_opaque;
    int log_level;
} QgpuConfig;

/* Fills cfg with the defaults (auto device, depth 2, no logging). */
QGPU_API void qgpu_config_default(QgpuConfig *cfg);

typedef struct QgpuContext QgpuContext;

/* Opens a context on the selected device. On success *ctx is set and 0 is
 * returned; on failure *ctx is NULL and a negative code is returned (use
 * qgpu_open_error() for its message, as there is no context to ask). */
QGPU_API int qgpu_open(QgpuContext **ctx, const QgpuConfig *cfg);

/* Message of the last qgpu_open() failure in this thread. */
QGPU_API const char *qgpu_open_error(void);

/* Releases everything the context owns and sets *ctx to NULL. Pending frames
 * are discarded. Safe on NULL and on *ctx == NULL. */
QGPU_API void qgpu_close(QgpuContext **ctx);

/* A device shared by several contexts, e.g. the concurrent streams of a
 * batch: one OpenCL context on the selected device, and the kernel programs
 * built (or loaded from the binary cache) once, by the first context that
 * needs each, then reused by every context opened on it, so that opening
 * one more context costs its command queues and buffers only. Contexts
 * opened on it may run in parallel threads (doc/api.md, "Threading").
 * qgpu_device_open: 0, or a negative code with the message in
 * qgpu_open_error(). qgpu_device_close drops the caller's reference; the
 * device lives on until the last context opened on it is closed. */
typedef struct QgpuDevice QgpuDevice;
QGPU_API int qgpu_device_open(QgpuDevice **dev, const char *selector);
QGPU_API void qgpu_device_close(QgpuDevice **dev);

/* Opens a context on a shared device (cfg->device is ignored; the rest of
 * cfg applies as for qgpu_open()). Errors as qgpu_open(). */
QGPU_API int qgpu_open_shared(QgpuContext **ctx, QgpuDevice *dev, const QgpuConfig *cfg);

/* Detailed message of the last error on this context ("" when none). */
QGPU_API const char *qgpu_last_error(const QgpuContext *ctx);

/* Name of the device the context runs on, and of its OpenCL platform. */
QGPU_API const char *qgpu_device_name(const QgpuContext *ctx);
QGPU_API const char *qgpu_platform_name(const QgpuContext *ctx);

/* Enables a feature by its libvmaf extractor name, with options in libvmaf's
 * syntax: "psnr", "psnr=enable_chroma=false:enable_mse=true". Must be called
 * before the first qgpu_submit(). Enabling the same feature twice with the
 * same options is harmless. */
QGPU_API int qgpu_enable_feature(QgpuContext *ctx, const char *spec);

/* Scores 8-bit input at a higher bit depth (e.g. 10, as Netflix recommends
 * for the VMAF v1 models): the device shifts every sample left by
 * (bitdepth - 8) before any feature sees it; uploads stay 8-bit. This is how
 * 8-bit video is brought to 10 bits for limited-range content (ffmpeg's
 * -pix_fmt yuv420p10le does the same). 0 (default) scores at the input's own
 * depth; input deeper than 8 bits is then refused. Before the first submit;
 * the model option bitdepth=N calls it. */
QGPU_API int qgpu_set_compute_bitdepth(QgpuContext *ctx, int bitdepth);

/* Pixel layouts. */
enum QgpuLayout {
    QGPU_LAYOUT_420 = 0, /* chroma w/2 x h/2 (see below for odd sizes) */
    QGPU_LAYOUT_422 = 1, /* chroma w/2 x h */
    QGPU_LAYOUT_444 = 2, /* chroma w x h */
    QGPU_LAYOUT_400 = 3, /* luma only (gray) */
    QGPU_LAYOUT_NV12 = 4, /* 4:2:0 semi-planar (NV12, P010, P016): see below */
};

/* One picture, planar. Samples are 8-bit (bitdepth 8) or 16-bit little-endian
 * words (bitdepth 9..16, values in the low bits). Strides are in bytes and
 * must be >= the plane's row size; they may differ between pictures.
 * Chroma planes of odd-size 4:2:0/4:2:2 pictures are ceil(w/2) wide (and
 * ceil(h/2) high for 4:2:0) in memory, as FFmpeg stores them; metrics read
 * the floor(w/2) x floor(h/2) part, as libvmaf does.
 *
 * QGPU_LAYOUT_NV12, what hardware decoders output: 4:2:0 in two planes,
 * data[0] luma and data[1] the chroma pairs Cb Cr interleaved (ceil(w/2)
 * pairs per row, ceil(h/2) rows); data[2] is not read. 8-bit: NV12's bytes.
 * bitdepth 9..16: 16-bit little-endian words holding the sample in their
 * top bitdepth bits (MSB-aligned: P010 is bitdepth 10, P012 12, P016 16),
 * i.e. the sample is word >> (16 - bitdepth). The pair is scored exactly as
 * the same samples in QGPU_LAYOUT_420 (the chroma is split and the words
 * shifted on the device; with only luma features, only luma is uploaded).
 * Both pictures of a pair, and every pair of a stream, have one layout. */
typedef struct QgpuPicture {
    int width;
    int height;
    int layout;    /* enum QgpuLayout */
    int bitdepth;  /* 8..16 */
    const void *data[3];
    ptrdiff_t stride[3];
} QgpuPicture;

/* Queues one (reference, distorted) pair. Copies the samples, so the
 * caller's buffers may be reused as soon as it returns. Returns at once
 * unless every pipeline slot holds a frame not yet collected; then it waits
 * for the oldest one to finish on the device (it stays collectable).
 * The first submit fixes the geometry (unless qgpu_start did); later
 * pictures must match it. */
QGPU_API int qgpu_submit(QgpuContext *ctx, const QgpuPicture *ref, const QgpuPicture *dist);

/* Starts the stream for pictures of one format before the first submit:
 * the work the first submit would do once it sees the format (the
 * features' programs, kernels, buffers and tables, the models, the
 * pipeline's slots), done now, so that a caller who knows the format
 * early (a decoder's first frame) can overlap it with other work.
 * width, height, layout and bitdepth as in QgpuPicture (no data). Every
 * later submit, the first included, must match it (QGPU_ERR_MISMATCH
 * otherwise; the context stays usable). Features, models and the compute
 * bit depth must be set before it, as before a first submit. Calling it
 * again with the same format does nothing; with another,
 * QGPU_ERR_MISMATCH. QGPU_ERR_STATE with no feature enabled or after
 * qgpu_flush. A failure of the set-up (e.g. QGPU_ERR_UNSUPPORTED: a size
 * a metric cannot take) leaves the context failed, as the first submit's
 * would. Scores are the same with or without it. Optional. */
QGPU_API int qgpu_start(QgpuContext *ctx, int width, int height, int layout, int bitdepth);

/* ---- Pictures in page-locked (pinned) host memory ----
 * qgpu_submit() copies both pictures into the library's own pinned memory
 * before the device reads them. A program that can decode or write its
 * pictures straight into pinned memory saves that copy: it allocates
 * blocks of the context's pinned memory, lays its pictures out in them,
 * and submits with qgpu_submit_pinned(), which has the device read the
 * planes where they are (a DMA from the block, no host copy).
 *
 * A QgpuPinned is a block of page-locked host memory of the context's
 * OpenCL context (any context opened on the same QgpuDevice or the same
 * cl_context may submit from it). It is reference counted: the allocating
 * call holds the first reference; qgpu_submit_pinned() takes one more for
 * each block until the device has read the pair, so the caller may drop its
 * own right after the submit. The block is freed, in whichever thread drops
 * the last reference, when its count reaches 0; it may outlive the context
 * that allocated it. qgpu_pinned_ref/unref may be called from any thread
 * (the count is atomic); everything else follows the context's threading
 * rules. The caller must not write into a block while a submit of it is in
 * flight (the library holds a reference then: qgpu_pinned_in_use()). */
typedef struct QgpuPinned QgpuPinned;

/* Allocates `size` bytes (> 0) of pinned memory, mapped for reading and
 * writing; the start is aligned to at least 64 bytes. 0 or a negative code
 * (QGPU_ERR_DEVICE_MEMORY / QGPU_ERR_OPENCL when the driver refuses). */
QGPU_API int qgpu_pinned_alloc(QgpuContext *ctx, size_t size, QgpuPinned **block);
/* The block's memory and size. */
QGPU_API void *qgpu_pinned_data(const QgpuPinned *block);
QGPU_API size_t qgpu_pinned_size(const QgpuPinned *block);
/* Adds a reference; returns block. */
QGPU_API QgpuPinned *qgpu_pinned_ref(QgpuPinned *block);
/* Drops a reference and sets *block to NULL; NULL-safe. */
QGPU_API void qgpu_pinned_unref(QgpuPinned **block);
/* 1 while a submit of the block has not yet been read by the device (the
 * library still holds a reference), else 0. Only as current as the last
 * call on the submitting context (submit or collect release the
 * references of uploads found complete). */
QGPU_API int qgpu_pinned_in_use(const QgpuPinned *block);

/* Allocates one picture in a new block: width x height, layout (any,
 * QGPU_LAYOUT_NV12 included: then data[1] holds the Cb Cr pairs),
 * bitdepth 8..16. Each plane starts at an `align`-byte boundary and its
 * stride is its row rounded up to a multiple of `align` (a power of two,
 * 0 for 64); `padding` bytes follow the last plane (decoders may read or
 * write past the last row). Fills *pic (its data pointers are writable
 * memory of the block) and returns the block with one reference. */
QGPU_API int qgpu_pinned_picture_alloc(QgpuContext *ctx, int width, int height, int layout,
                                       int bitdepth, int align, size_t padding,
                                       QgpuPicture *pic, QgpuPinned **block);

/* qgpu_submit() for pictures whose planes lie in pinned blocks: every plane
 * the device reads of ref must lie inside ref_block, and of dist inside
 * dist_block (the same block is fine). The planes are uploaded from where
 * they are (strides and padding allowed); no host copy. The library keeps
 * a reference to each block until the device has read it. Otherwise as
 * qgpu_submit() (and a stream may mix both). QGPU_ERR_INVALID_ARG for a
 * NULL block, a block of another OpenCL context, or a plane outside its
 * block. */
QGPU_API int qgpu_submit_pinned(QgpuContext *ctx, const QgpuPicture *ref, QgpuPinned *ref_block,
                                const QgpuPicture *dist, QgpuPinned *dist_block);

/* Returns the next finished frame in submission order: 1 and *frame_index
 * set when a frame is final, 0 when none is final yet (with wait == 0) or
 * none is pending, negative on error. With wait != 0 it blocks until the
 * oldest pending frame is final, if one can become final without further
 * submits. Temporal features (motion) finalise frame n when frame n+1 has
 * been processed, or at qgpu_flush(). */
QGPU_API int qgpu_collect(QgpuContext *ctx, unsigned *frame_index, int wait);

/* Marks the end of the stream: the last frames become final. No submit is
 * accepted afterwards. */
QGPU_API int qgpu_flush(QgpuContext *ctx);

/* Score of a final frame by output name ("psnr_y", ...). Returns
 * QGPU_ERR_UNKNOWN_FEATURE when the name is not produced by the enabled
 * features, QGPU_ERR_INVALID_ARG when the frame is not final. */
QGPU_API int qgpu_get_score(const QgpuContext *ctx, unsigned frame_index, const char *name,
                            double *value);

/* Output names, in the order features registered them. */
QGPU_API int qgpu_score_count(const QgpuContext *ctx);
QGPU_API const char *qgpu_score_name(const QgpuContext *ctx, int index);

/* Number of frames that are final so far. */
QGPU_API unsigned qgpu_frame_count(const QgpuContext *ctx);

enum QgpuPool {
    QGPU_POOL_MEAN = 0,
    QGPU_POOL_MIN = 1,
    QGPU_POOL_MAX = 2,
    QGPU_POOL_HARMONIC_MEAN = 3, /* libvmaf's: 1 / mean(1 / (x + 1)) - 1 */
};

/* Pooled value over all final frames. */
QGPU_API int qgpu_get_pooled(const QgpuContext *ctx, const char *name, int method, double *value);
/* Same over frames 0, N, 2N... (subsample N; 0 or 1: all), as libvmaf pools
 * with n_subsample / --subsample N. */
QGPU_API int qgpu_get_pooled_subsampled(const QgpuContext *ctx, const char *name, int method,
                                        unsigned subsample, double *value);
/* Same over the final frames first..last (both included; first <= last <
 * qgpu_frame_count(), else QGPU_ERR_INVALID_ARG), taking frame i when
 * i % subsample == 0, as libvmaf's vmaf_score_pooled(index_low, index_high)
 * does with n_subsample. */
QGPU_API int qgpu_get_pooled_range(const QgpuContext *ctx, const char *name, int method,
                                   unsigned first, unsigned last, unsigned subsample,
                                   double *value);

/* Whole-clip values some features emit at flush (e.g. apsnr_y); same
 * contract as qgpu_get_score. */
QGPU_API int qgpu_aggregate_count(const QgpuContext *ctx);
QGPU_API const char *qgpu_aggregate_name(const QgpuContext *ctx, int index);
QGPU_API int qgpu_get_aggregate(const QgpuContext *ctx, const char *name, double *value);

/* Log files in libvmaf's layouts. */
enum QgpuLogFormat {
    QGPU_LOG_FORMAT_JSON = 0,
    QGPU_LOG_FORMAT_XML = 1,
    QGPU_LOG_FORMAT_CSV = 2,
    QGPU_LOG_FORMAT_SUB = 3,
};

/* Writes every final frame and the pooled values to path ("-" = stdout).
 * fps is written as the log's fps field (pass 0 when unknown). A regular
 * file (or a new one) is written to a temporary file in its directory and
 * renamed over path when complete, so a failed write (full disk, file size
 * limit) leaves the old file, or none; other targets (stdout, devices,
 * FIFOs, a file with several hard links) are written in place. Every write
 * error returns QGPU_ERR_IO with the reason in qgpu_last_error(). */
QGPU_API int qgpu_write_log(const QgpuContext *ctx, const char *path, int format, double fps);
/* Same, listing only every subsample-th frame (0, N, 2N...) and pooling over
 * those, as libvmaf's --subsample N logs do; subsample <= 1: every frame. */
QGPU_API int qgpu_write_log_subsampled(const QgpuContext *ctx, const char *path, int format,
                                       double fps, unsigned subsample);

/* Can a log be written at path? An existing regular file must open for
 * writing (it is not truncated), anything else that exists must be writable,
 * and for a new file its directory must take one (tried for real: a file
 * created and removed). Returns 0, or the errno that says why not (EISDIR
 * for a directory, ENOENT for a missing directory, EINVAL for an empty
 * path). Needs no context: callers ask before they open one. */
QGPU_API int qgpu_check_log_path(const char *path);

/* An extra top-level field of a log: a string, or a number (written as an
 * integer when it is one). */
typedef struct QgpuLogField {
    const char *name;
    const char *string; /* NULL: the field is the number */
    double number;
} QgpuLogField;

typedef struct QgpuLogOptions {
    int format;                 /* enum QgpuLogFormat */
    double fps;                 /* the log's fps (0: unknown; NaN/inf give 0) */
    unsigned subsample;         /* log and pool every Nth frame; 0 or 1: all */
    const QgpuLogField *fields; /* extra fields: JSON members after "device",
                                   XML attributes of <fyi>; none in CSV/SUB */
    int nb_fields;
} QgpuLogOptions;

/* qgpu_write_log_subsampled with extra top-level fields (e.g. a tool's
 * decoding-error counts), written atomically the same way. */
QGPU_API int qgpu_write_log_ex(const QgpuContext *ctx, const char *path,
                               const QgpuLogOptions *opts);

/* One final frame as one line of JSON (no newline), as the JSON log writes
 * it: {"frameNum": N, "metrics": {"psnr_y": 34.123456, ...}}. Writes at
 * most len bytes (NUL included) to buf, as snprintf; returns the line's
 * length, or a negative error (frame not final: QGPU_ERR_INVALID_ARG). */
QGPU_API int qgpu_frame_json(const QgpuContext *ctx, unsigned frame, char *buf, size_t len);

/* Device time the context's kernels took so far, in milliseconds (frames
 * collected), measured with OpenCL profiling events when the environment
 * has QGPU_PROFILE=1 at qgpu_open(); uploads are not counted. Divided by a
 * run's wall time it says how busy the device's compute was (kernels of
 * several contexts may overlap on one device).
 * QGPU_ERR_STATE when profiling is off. */
QGPU_API int qgpu_get_device_time(const QgpuContext *ctx, double *ms);

/* Device listing, independent of any context: one line per device,
 * "P:D  type  name  (platform)". Calls back once per device. */
typedef void (*QgpuDeviceCallback)(void *opaque, int platform, int device, const char *type,
                                   const char *name, const char *platform_name);
QGPU_API int qgpu_list_devices(QgpuDeviceCallback cb, void *opaque);

/* Name of the index-th feature the library knows ("psnr", ...), NULL past
 * the end. */
QGPU_API const char *qgpu_feature_name(int index);

/* ---- VMAF models ----
 * Adds a VMAF model: its score ("vmaf", or the name= given) is computed for
 * every frame from the features the model needs, which this call enables
 * with the model's options (as qgpu_enable_feature would; models and
 * --feature-style calls that need the same feature with the same options
 * share one instance). The spec has libvmaf's --model syntax, items
 * separated by ':':
 *   version=NAME          a built-in model: vmaf_v0.6.1 (the default when
 *                         neither version= nor path= is given),
 *                         vmaf_v0.6.1neg, vmaf_4k_v0.6.1, vmaf_4k_v0.6.1neg,
 *                         vmaf_float_v0.6.1, vmaf_float_v0.6.1neg,
 *                         vmaf_float_4k_v0.6.1 (qgpu_model_name() lists all)
 *   path=FILE             a libvmaf JSON model file, or a model collection
 *                         (bootstrap models such as vmaf_b_v0.6.3): then
 *                         also NAME_0001.., NAME_bagging, NAME_stddev,
 *                         NAME_ci_p95_lo, NAME_ci_p95_hi (doc/api.md)
 *   name=NAME             score name (default "vmaf"); unique per context
 *   enable_transform[=true|false]   apply the model's score_transform
 *                         (libvmaf applies it only when asked or when the
 *                         file says "enabled": true)
 *   disable_clip[=true|false]       do not clip to the model's score_clip
 *   disable_transform[=true|false]  never apply the score_transform, even
 *                         when the file enables it (libvmaf's
 *                         VMAF_MODEL_FLAG_DISABLE_TRANSFORM)
 *   features_only[=true|false]      enable the model's features but add no
 *                         score (the name need not be unique then)
 *   FEATURE.OPTION=VALUE  set an option of every model feature computed by
 *                         extractor FEATURE, e.g. "adm.adm_enhn_gain_limit=1.0"
 *                         (renames those inputs as the option suffix rule says)
 * Must be called before the first qgpu_submit(). Errors: QGPU_ERR_IO (file
 * unreadable), QGPU_ERR_MODEL (malformed JSON, wrong model type, unknown
 * feature, unknown built-in version), QGPU_ERR_BAD_OPTION (spec), with a
 * message naming the model and the problem in qgpu_last_error(). */
QGPU_API int qgpu_use_model(QgpuContext *ctx, const char *spec);

/* Name of the index-th built-in model ("vmaf_v0.6.1", ...), NULL past the
 * end. */
QGPU_API const char *qgpu_model_name(int index);

#ifdef __cplusplus
}
#endif

#endif /* QGPU_QGPU_H */
