/*
 * vmaf_init/close, the features and models a context uses, and
 * vmaf_read_pictures: pictures go to libqgpu's asynchronous pipeline
 * (qgpu_submit returns without waiting for the device; finished frames are
 * collected without blocking as later pictures arrive).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi.h"

/* Frames in flight on the device: libvmaf's callers have no setting for
 * it; 4, qgpu-bench's default (the library's is 2). */
#define PIPELINE_DEPTH 4

int vmaf_abi_errno(int qgpu_err)
{
    switch (qgpu_err) {
    case QGPU_OK: return 0;
    case QGPU_ERR_NO_MEMORY:
    case QGPU_ERR_DEVICE_MEMORY: return -ENOMEM;
    case QGPU_ERR_NO_DEVICE: return -ENODEV;
    case QGPU_ERR_IO: return -EIO;
    case QGPU_ERR_OPENCL:
    case QGPU_ERR_BUILD: return -EIO;
    case QGPU_ERR_UNSUPPORTED: return -ENOTSUP;
    default: return -EINVAL; /* arguments, options, names, models, state */
    }
}

static const char *const level_names[] = {"", "ERROR", "WARNING", "INFO", "DEBUG"};

void vmaf_abi_log(const VmafContext *vmaf, int level, const char *fmt, ...)
{
    va_list ap;
    int max = vmaf ? (int)vmaf->cfg.log_level : VMAF_LOG_LEVEL_ERROR;
    if (level < VMAF_LOG_LEVEL_ERROR || level > VMAF_LOG_LEVEL_DEBUG || level > max)
        return;
    /* libvmaf writes its messages to stderr itself; so does this library */
    fprintf(stderr, "libvmaf %s ", level_names[level]);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int vmaf_abi_fail(const VmafContext *vmaf, int qgpu_err)
{
    const char *msg = vmaf && vmaf->q ? qgpu_last_error(vmaf->q) : "";
    vmaf_abi_log(vmaf, VMAF_LOG_LEVEL_ERROR, "%s", *msg ? msg : qgpu_strerror(qgpu_err));
    return vmaf_abi_errno(qgpu_err);
}

/* libqgpu's messages, at the context's level (QgpuLogLevel is one below). */
static void log_callback(void *opaque, int level, const char *message)
{
    vmaf_abi_log(opaque, level + 1, "%s", message);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

VMAF_API int vmaf_init(VmafContext **vmaf, VmafConfiguration cfg)
{
    VmafContext *v;
    QgpuConfig qcfg;
    int err;
    if (!vmaf)
        return -EINVAL;
    *vmaf = NULL;
    if (cfg.log_level > VMAF_LOG_LEVEL_DEBUG)
        return -EINVAL;
    if (!(v = calloc(1, sizeof(*v))))
        return -ENOMEM;
    v->cfg = cfg;
    qgpu_config_default(&qcfg);
    qcfg.device = NULL; /* QGPU_DEVICE, else the fastest GPU */
    qcfg.pipeline_depth = PIPELINE_DEPTH;
    if (cfg.log_level != VMAF_LOG_LEVEL_NONE) {
        qcfg.log_callback = log_callback;
        qcfg.log_opaque = v;
        qcfg.log_level = (int)cfg.log_level - 1;
    }
    err = qgpu_open(&v->q, &qcfg);
    if (err) {
        vmaf_abi_log(v, VMAF_LOG_LEVEL_ERROR, "%s", qgpu_open_error());
        free(v);
        return vmaf_abi_errno(err);
    }
    *vmaf = v;
    return 0;
}

VMAF_API int vmaf_close(VmafContext *vmaf)
{
    if (!vmaf)
        return -EINVAL;
    qgpu_close(&vmaf->q);
    for (int i = 0; i < vmaf->nb_models; i++)
        free(vmaf->models[i].name);
    free(vmaf->models);
    free(vmaf);
    return 0;
}

/* Gives a model's spec to libqgpu and remembers its score name. A second
 * model under a name already in use adds its features only: libvmaf keeps
 * the first score written under a name (FFmpeg 5.1's model_path= plus its
 * default model are two models named "vmaf"). */
static int use_model(VmafContext *vmaf, const void *handle, const VmafModel *model)
{
    VmafAbiModel *models;
    char *name, *spec;
    int err, taken = 0;
    if (!vmaf || !model)
        return -EINVAL;
    for (int i = 0; i < vmaf->nb_models; i++) {
        if (vmaf->models[i].handle == handle)
            return 0; /* used already: its features are there */
        taken |= !strcmp(vmaf->models[i].name, model->name);
    }
    models = realloc(vmaf->models, (size_t)(vmaf->nb_models + 1) * sizeof(*models));
    if (!models)
        return -ENOMEM;
    vmaf->models = models;
    if (taken)
        vmaf_abi_log(vmaf, VMAF_LOG_LEVEL_WARNING, "a model named '%s' is in use already: "
                     "this one adds its features, the score stays the first model's",
                     model->name);
    name = vmaf_abi_concat(model->name, NULL);
    spec = vmaf_abi_concat(model->spec, taken ? ":features_only" : "", NULL);
    err = name && spec ? qgpu_use_model(vmaf->q, spec) : QGPU_ERR_NO_MEMORY;
    free(spec);
    if (err) {
        free(name);
        return vmaf_abi_fail(vmaf, err);
    }
    models[vmaf->nb_models].handle = handle;
    models[vmaf->nb_models].name = name;
    vmaf->nb_models++;
    return 0;
}

VMAF_API int vmaf_use_features_from_model(VmafContext *vmaf, VmafModel *model)
{
    return use_model(vmaf, model, model);
}

VMAF_API int vmaf_use_features_from_model_collection(VmafContext *vmaf,
                                                     VmafModelCollection *model_collection)
{
    return use_model(vmaf, model_collection, model_collection ? &model_collection->lead : NULL);
}

VMAF_API int vmaf_use_feature(VmafContext *vmaf, const char *feature_name,
                              VmafFeatureDictionary *opts_dict)
{
    char *opts, *spec;
    int err;
    if (!vmaf || !feature_name || !*feature_name || strpbrk(feature_name, ":="))
        return -EINVAL;
    if (!(opts = vmaf_abi_dict_spec(opts_dict, "", &err)))
        return err;
    spec = vmaf_abi_concat(feature_name, *opts ? "=" : "", opts, NULL);
    free(opts);
    if (!spec)
        return -ENOMEM;
    err = qgpu_enable_feature(vmaf->q, spec);
    free(spec);
    if (err)
        return vmaf_abi_fail(vmaf, err);
    vmaf_feature_dictionary_free(&opts_dict); /* ours on success */
    return 0;
}

VMAF_API int vmaf_import_feature_score(VmafContext *vmaf, const char *feature_name, double value,
                                       unsigned index)
{
    (void)feature_name;
    (void)value;
    (void)index;
    vmaf_abi_log(vmaf, VMAF_LOG_LEVEL_ERROR, "vmaf_import_feature_score: not supported by "
                 "libvmaf-qgpu");
    return -ENOTSUP;
}

static const int layouts[] = {
    [VMAF_PIX_FMT_YUV420P] = QGPU_LAYOUT_420,
    [VMAF_PIX_FMT_YUV422P] = QGPU_LAYOUT_422,
    [VMAF_PIX_FMT_YUV444P] = QGPU_LAYOUT_444,
    [VMAF_PIX_FMT_YUV400P] = QGPU_LAYOUT_400,
};

static int to_qgpu(const VmafPicture *pic, QgpuPicture *out)
{
    if (!pic->ref || pic->pix_fmt < VMAF_PIX_FMT_YUV420P || pic->pix_fmt > VMAF_PIX_FMT_YUV400P ||
        pic->bpc < 8 || pic->bpc > 16)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    out->width = (int)pic->w[0];
    out->height = (int)pic->h[0];
    out->layout = layouts[pic->pix_fmt];
    out->bitdepth = (int)pic->bpc;
    for (int p = 0; p < 3; p++) {
        out->data[p] = pic->data[p];
        out->stride[p] = pic->stride[p];
    }
    return 0;
}

/* Collects the frames the device has finished, without waiting. */
static int collect_ready(VmafContext *vmaf)
{
    unsigned frame;
    int r;
    while ((r = qgpu_collect(vmaf->q, &frame, 0)) == 1)
        ;
    return r < 0 ? vmaf_abi_fail(vmaf, r) : 0;
}

static int flush(VmafContext *vmaf)
{
    unsigned frame;
    int r;
    if (vmaf->flushed)
        return 0;
    vmaf->flushed = 1;
    vmaf->end_time = now();
    if (!vmaf->nb_read)
        return 0;
    if ((r = qgpu_flush(vmaf->q)))
        return vmaf_abi_fail(vmaf, r);
    while ((r = qgpu_collect(vmaf->q, &frame, 1)) == 1)
        ;
    return r < 0 ? vmaf_abi_fail(vmaf, r) : 0;
}

VMAF_API int vmaf_read_pictures(VmafContext *vmaf, VmafPicture *ref, VmafPicture *dist,
                                unsigned index)
{
    QgpuPicture qref, qdist;
    int err;
    if (!vmaf)
        return -EINVAL;
    if (!ref && !dist)
        return flush(vmaf);
    if (!ref || !dist)
        err = -EINVAL;
    else if (vmaf->flushed || index != vmaf->nb_read) {
        vmaf_abi_log(vmaf, VMAF_LOG_LEVEL_ERROR, "vmaf_read_pictures: index %u: %s", index,
                     vmaf->flushed ? "the context was flushed"
                                   : "libvmaf-qgpu takes pictures in order, from index 0");
        err = -EINVAL;
    } else if ((err = to_qgpu(ref, &qref)) || (err = to_qgpu(dist, &qdist))) {
        vmaf_abi_log(vmaf, VMAF_LOG_LEVEL_ERROR, "vmaf_read_pictures: invalid picture");
    } else {
        if (!vmaf->nb_read)
            vmaf->start_time = now();
        err = qgpu_submit(vmaf->q, &qref, &qdist); /* copies the samples */
        err = err ? vmaf_abi_fail(vmaf, err) : 0;
        if (!err)
            vmaf->nb_read++;
    }
    /* the pictures are ours: unref'ed whatever happened */
    if (ref && ref->ref)
        vmaf_picture_unref(ref);
    if (dist && dist->ref)
        vmaf_picture_unref(dist);
    return err ? err : collect_ready(vmaf);
}

int vmaf_abi_wait_frame(VmafContext *vmaf, unsigned index)
{
    unsigned frame;
    if (index >= vmaf->nb_read)
        return -EINVAL;
    while (qgpu_frame_count(vmaf->q) <= index) {
        int r = qgpu_collect(vmaf->q, &frame, 1);
        if (r < 0)
            return vmaf_abi_fail(vmaf, r);
        if (r == 0)
            return -EAGAIN; /* needs a later picture (temporal features) or the flush */
    }
    return 0;
}
