/*
 * Scores: per frame (waiting for the device only when the frame asked for
 * is still in flight), pooled over an index range, and the log file.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "internal.h"

/* The score name of a model or collection the context uses. */
static const char *model_name(const VmafContext *vmaf, const void *handle)
{
    for (int i = 0; i < vmaf->nb_models; i++)
        if (vmaf->models[i].handle == handle)
            return vmaf->models[i].name;
    vmaf_abi_log(vmaf, VMAF_LOG_LEVEL_ERROR, "model not in use by this context "
                 "(vmaf_use_features_from_model)");
    return NULL;
}

static int frame_score(VmafContext *vmaf, const char *name, unsigned index, double *score)
{
    int err = vmaf_abi_wait_frame(vmaf, index);
    if (err)
        return err;
    err = qgpu_get_score(vmaf->q, index, name, score);
    return err ? vmaf_abi_fail(vmaf, err) : 0;
}

VMAF_API int vmaf_score_at_index(VmafContext *vmaf, VmafModel *model, double *score,
                                 unsigned index)
{
    const char *name;
    if (!vmaf || !model || !score || !(name = model_name(vmaf, model)))
        return -EINVAL;
    return frame_score(vmaf, name, index, score);
}

/* Fills a collection score from "<name><suffix>" values given by get. */
typedef int (*ScoreGetter)(VmafContext *vmaf, const char *name, void *arg, double *value);

static int collection_score(VmafContext *vmaf, VmafModelCollection *collection,
                            VmafModelCollectionScore *score, ScoreGetter get, void *arg)
{
    static const char *const suffixes[4] = {"_bagging", "_stddev", "_ci_p95_lo", "_ci_p95_hi"};
    double values[4];
    const char *name;
    if (!vmaf || !collection || !score || !(name = model_name(vmaf, collection)))
        return -EINVAL;
    for (int i = 0; i < 4; i++) {
        char *full = vmaf_abi_concat(name, suffixes[i], NULL);
        int err = full ? get(vmaf, full, arg, &values[i]) : -ENOMEM;
        free(full);
        if (err)
            return err;
    }
    memset(score, 0, sizeof(*score));
    score->type = VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP;
    score->bootstrap.bagging_score = values[0];
    score->bootstrap.stddev = values[1];
    score->bootstrap.ci.p95.lo = values[2];
    score->bootstrap.ci.p95.hi = values[3];
    return 0;
}

static int get_at_index(VmafContext *vmaf, const char *name, void *arg, double *value)
{
    return frame_score(vmaf, name, *(const unsigned *)arg, value);
}

VMAF_API int vmaf_score_at_index_model_collection(VmafContext *vmaf,
                                                  VmafModelCollection *model_collection,
                                                  VmafModelCollectionScore *score,
                                                  unsigned index)
{
    return collection_score(vmaf, model_collection, score, get_at_index, &index);
}

/* libvmaf's callers may name a feature as a model file does
 * ("VMAF_integer_feature_adm2_score"); the logs print "integer_adm2". */
static const char *printed_name(const char *name)
{
    const QgpuFeatureClass *cls;
    const QgpuFeatureOutput *out;
    return qgpu_feature_output_find(name, &cls, &out) ? name : out->name;
}

VMAF_API int vmaf_feature_score_at_index(VmafContext *vmaf, const char *feature_name,
                                         double *score, unsigned index)
{
    int err;
    if (!vmaf || !feature_name || !score)
        return -EINVAL;
    if ((err = vmaf_abi_wait_frame(vmaf, index)))
        return err;
    err = qgpu_get_score(vmaf->q, index, feature_name, score);
    if (err == QGPU_ERR_UNKNOWN_FEATURE)
        err = qgpu_get_score(vmaf->q, index, printed_name(feature_name), score);
    return err ? vmaf_abi_fail(vmaf, err) : 0;
}

typedef struct PoolArgs {
    int method;
    unsigned low, high;
} PoolArgs;

static int pool_method(enum VmafPoolingMethod m)
{
    switch (m) {
    case VMAF_POOL_METHOD_MIN: return QGPU_POOL_MIN;
    case VMAF_POOL_METHOD_MAX: return QGPU_POOL_MAX;
    case VMAF_POOL_METHOD_MEAN: return QGPU_POOL_MEAN;
    case VMAF_POOL_METHOD_HARMONIC_MEAN: return QGPU_POOL_HARMONIC_MEAN;
    default: return -1;
    }
}

static int get_pooled(VmafContext *vmaf, const char *name, void *arg, double *value)
{
    const PoolArgs *p = arg;
    int err = vmaf_abi_wait_frame(vmaf, p->high);
    if (err)
        return err;
    err = qgpu_get_pooled_range(vmaf->q, name, p->method, p->low, p->high,
                                vmaf->cfg.n_subsample, value);
    return err ? vmaf_abi_fail(vmaf, err) : 0;
}

static int pool_args(const VmafContext *vmaf, enum VmafPoolingMethod method, unsigned low,
                     unsigned high, PoolArgs *p)
{
    p->method = pool_method(method);
    p->low = low;
    p->high = high;
    if (p->method < 0 || low > high) {
        vmaf_abi_log(vmaf, VMAF_LOG_LEVEL_ERROR, "pooling: unknown method or %u > %u", low,
                     high);
        return -EINVAL;
    }
    return 0;
}

VMAF_API int vmaf_score_pooled(VmafContext *vmaf, VmafModel *model,
                               enum VmafPoolingMethod pool_method, double *score,
                               unsigned index_low, unsigned index_high)
{
    PoolArgs p;
    const char *name;
    int err;
    if (!vmaf || !model || !score || !(name = model_name(vmaf, model)))
        return -EINVAL;
    if ((err = pool_args(vmaf, pool_method, index_low, index_high, &p)))
        return err;
    return get_pooled(vmaf, name, &p, score);
}

VMAF_API int vmaf_score_pooled_model_collection(VmafContext *vmaf,
                                                VmafModelCollection *model_collection,
                                                enum VmafPoolingMethod pool_method,
                                                VmafModelCollectionScore *score,
                                                unsigned index_low, unsigned index_high)
{
    PoolArgs p;
    int err = pool_args(vmaf, pool_method, index_low, index_high, &p);
    return err ? err : collection_score(vmaf, model_collection, score, get_pooled, &p);
}

VMAF_API int vmaf_feature_score_pooled(VmafContext *vmaf, const char *feature_name,
                                       enum VmafPoolingMethod pool_method, double *score,
                                       unsigned index_low, unsigned index_high)
{
    PoolArgs p;
    int err;
    if (!vmaf || !feature_name || !score)
        return -EINVAL;
    if ((err = pool_args(vmaf, pool_method, index_low, index_high, &p)))
        return err;
    if (qgpu_score_find(vmaf->q, feature_name) < 0)
        feature_name = printed_name(feature_name);
    return get_pooled(vmaf, feature_name, &p, score);
}

VMAF_API int vmaf_write_output_with_format(VmafContext *vmaf, const char *output_path,
                                           enum VmafOutputFormat fmt, const char *score_format)
{
    int format, err;
    double seconds;
    if (!vmaf || !output_path)
        return -EINVAL;
    if (score_format && strcmp(score_format, "%.6f")) {
        vmaf_abi_log(vmaf, VMAF_LOG_LEVEL_ERROR, "score format '%s': libvmaf-qgpu writes "
                     "\"%%.6f\" only", score_format);
        return -ENOTSUP;
    }
    switch (fmt) {
    case VMAF_OUTPUT_FORMAT_XML: format = QGPU_LOG_FORMAT_XML; break;
    case VMAF_OUTPUT_FORMAT_JSON: format = QGPU_LOG_FORMAT_JSON; break;
    case VMAF_OUTPUT_FORMAT_CSV: format = QGPU_LOG_FORMAT_CSV; break;
    case VMAF_OUTPUT_FORMAT_SUB: format = QGPU_LOG_FORMAT_SUB; break;
    default: return -EINVAL;
    }
    /* the log's fps: pictures per second from the first read to the flush */
    seconds = vmaf->end_time - vmaf->start_time;
    err = qgpu_write_log_subsampled(vmaf->q, output_path, format,
                                    vmaf->flushed && seconds > 0 ? vmaf->nb_read / seconds : 0,
                                    vmaf->cfg.n_subsample);
    return err ? vmaf_abi_fail(vmaf, err) : 0;
}

VMAF_API int vmaf_write_output(VmafContext *vmaf, const char *output_path,
                               enum VmafOutputFormat fmt)
{
    return vmaf_write_output_with_format(vmaf, output_path, fmt, NULL);
}

VMAF_API const char *vmaf_version(void)
{
    return VMAF_QGPU_VERSION;
}
