/*
 * libvmaf-qgpu: libvmaf 3.x's C API, scored on the GPU by libqgpu.
 *
 * Same functions, types, enum values and struct layouts as libvmaf 3.x, so
 * that a program compiled against libvmaf's headers runs against this
 * library (soname libvmaf.so.3) unchanged, and one compiled against these
 * headers builds as it would against libvmaf. Written for libqgpu from the
 * API's documentation and its callers (FFmpeg's vf_libvmaf, libvmaf's CLI);
 * what differs is listed in doc/libvmaf-abi.md (the CUDA API is absent;
 * n_threads, cpumask and gpumask are accepted and ignored).
 *
 * Usage (as FFmpeg's libvmaf filter does):
 *   vmaf_init(&vmaf, cfg);
 *   vmaf_model_load(&model, &model_cfg, "vmaf_v0.6.1");
 *   vmaf_use_features_from_model(vmaf, model);
 *   per frame: vmaf_picture_alloc(&ref, ...), (fill), same for dist,
 *              vmaf_read_pictures(vmaf, &ref, &dist, index++);
 *              (the library takes both pictures and unrefs them)
 *   vmaf_read_pictures(vmaf, NULL, NULL, 0);          flush
 *   vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MEAN, &score, 0, n - 1);
 *   vmaf_write_output(vmaf, "log.json", VMAF_OUTPUT_FORMAT_JSON);
 *   vmaf_model_destroy(model); vmaf_close(vmaf);
 *
 * Every function returning int returns 0 on success or a negative errno.
 */
#ifndef LIBVMAF_QGPU_LIBVMAF_H
#define LIBVMAF_QGPU_LIBVMAF_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "picture.h"
#include "feature.h"

#ifdef __cplusplus
extern "C" {
#endif

enum VmafLogLevel {
    VMAF_LOG_LEVEL_NONE = 0,
    VMAF_LOG_LEVEL_ERROR = 1,
    VMAF_LOG_LEVEL_WARNING = 2,
    VMAF_LOG_LEVEL_INFO = 3,
    VMAF_LOG_LEVEL_DEBUG = 4,
};

enum VmafOutputFormat {
    VMAF_OUTPUT_FORMAT_NONE = 0,
    VMAF_OUTPUT_FORMAT_XML = 1,
    VMAF_OUTPUT_FORMAT_JSON = 2,
    VMAF_OUTPUT_FORMAT_CSV = 3,
    VMAF_OUTPUT_FORMAT_SUB = 4,
};

enum VmafPoolingMethod {
    VMAF_POOL_METHOD_UNKNOWN = 0,
    VMAF_POOL_METHOD_MIN = 1,
    VMAF_POOL_METHOD_MAX = 2,
    VMAF_POOL_METHOD_MEAN = 3,
    VMAF_POOL_METHOD_HARMONIC_MEAN = 4,
    VMAF_POOL_METHOD_NB = 5,
};

typedef struct VmafConfiguration {
    enum VmafLogLevel log_level; /* messages up to this level go to stderr */
    unsigned n_threads;          /* ignored: the device does the work */
    unsigned n_subsample;        /* logs and pooling take every Nth frame */
    uint64_t cpumask;            /* ignored */
    uint64_t gpumask;            /* ignored */
} VmafConfiguration;

typedef struct VmafContext VmafContext;

/* Opens a context on libqgpu's device (QGPU_DEVICE, else the fastest GPU). */
int vmaf_init(VmafContext **vmaf, VmafConfiguration cfg);

/* Enables the features a model needs, and its score (named by the
 * model's name). Before the first picture. */
int vmaf_use_features_from_model(VmafContext *vmaf, VmafModel *model);

/* Same for a model collection: its scores "<name>", "<name>_0001"...,
 * "<name>_bagging", "<name>_stddev", "<name>_ci_p95_lo", "<name>_ci_p95_hi". */
int vmaf_use_features_from_model_collection(VmafContext *vmaf,
                                            VmafModelCollection *model_collection);

/* Enables extractor feature_name ("psnr", "float_ssim", ...) with the
 * options of opts_dict (may be NULL). Takes ownership of opts_dict on
 * success; the caller frees it on failure. Before the first picture. */
int vmaf_use_feature(VmafContext *vmaf, const char *feature_name,
                     VmafFeatureDictionary *opts_dict);

/* Not supported by libvmaf-qgpu: returns -ENOTSUP. */
int vmaf_import_feature_score(VmafContext *vmaf, const char *feature_name, double value,
                              unsigned index);

/* Queues a pair of pictures for scoring and takes both (they are unref'ed
 * here, also on error). index: 0, 1, 2... in order. Returns without
 * waiting for the device. ref == dist == NULL: flush (end of stream). */
int vmaf_read_pictures(VmafContext *vmaf, VmafPicture *ref, VmafPicture *dist,
                       unsigned index);

/* The model's score at a picture index already read; waits for the device
 * when that frame is still in flight. -EAGAIN when the frame needs a
 * later picture (temporal features) and the stream is not flushed. */
int vmaf_score_at_index(VmafContext *vmaf, VmafModel *model, double *score, unsigned index);

int vmaf_score_at_index_model_collection(VmafContext *vmaf,
                                         VmafModelCollection *model_collection,
                                         VmafModelCollectionScore *score, unsigned index);

/* A feature's score by its logged name ("psnr_y", "integer_adm2"...). */
int vmaf_feature_score_at_index(VmafContext *vmaf, const char *feature_name, double *score,
                                unsigned index);

/* Pooled over the pictures index_low..index_high (both included). */
int vmaf_score_pooled(VmafContext *vmaf, VmafModel *model, enum VmafPoolingMethod pool_method,
                      double *score, unsigned index_low, unsigned index_high);

int vmaf_score_pooled_model_collection(VmafContext *vmaf,
                                       VmafModelCollection *model_collection,
                                       enum VmafPoolingMethod pool_method,
                                       VmafModelCollectionScore *score, unsigned index_low,
                                       unsigned index_high);

int vmaf_feature_score_pooled(VmafContext *vmaf, const char *feature_name,
                              enum VmafPoolingMethod pool_method, double *score,
                              unsigned index_low, unsigned index_high);

/* Frees the context (pending frames are dropped). */
int vmaf_close(VmafContext *vmaf);

/* Writes every scored frame and the pooled values, in libvmaf's layouts. */
int vmaf_write_output(VmafContext *vmaf, const char *output_path, enum VmafOutputFormat fmt);

/* vmaf_write_output with a printf format for the scores (an addition of
 * libvmaf forks, for their --precision): only NULL and "%.6f", libvmaf's
 * own format, are supported; others give -ENOTSUP. */
int vmaf_write_output_with_format(VmafContext *vmaf, const char *output_path,
                                  enum VmafOutputFormat fmt, const char *score_format);

/* "3.0.0-qgpu-<libqgpu version>". */
const char *vmaf_version(void);

#ifdef __cplusplus
}
#endif

#endif /* LIBVMAF_QGPU_LIBVMAF_H */
