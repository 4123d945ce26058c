/*
 * VMAF models and collections: each is kept as libqgpu's model spec
 * (qgpu_use_model's syntax), checked at load by libqgpu's model loader, and
 * given to qgpu_use_model when a context uses it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "model.h"

/* Loads version or path with libqgpu's loader (the check libvmaf does at
 * load time); want_collection says which kind must be there. */
static int check_model(const char *version, const char *path, unsigned flags,
                       int want_collection)
{
    char msg[1024] = "";
    QgpuModel *single = NULL;
    QgpuModelCollection *set = NULL;
    int err = qgpu_model_load_any(&single, &set, version, path, flags, msg, sizeof(msg));
    if (err) {
        vmaf_abi_log(NULL, VMAF_LOG_LEVEL_ERROR, "%s", msg);
        return vmaf_abi_errno(err);
    }
    err = want_collection ? !set : !single;
    if (err)
        vmaf_abi_log(NULL, VMAF_LOG_LEVEL_ERROR, "'%s' is a model %s, not a %s",
                     version ? version : path, want_collection ? "file" : "collection",
                     want_collection ? "model collection" : "single model");
    qgpu_model_free(&single);
    qgpu_model_collection_free(&set);
    return err ? -EINVAL : 0;
}

/* Fills model from the configuration; the spec is checked first. */
static int model_init(VmafModel *model, const VmafModelConfig *cfg, const char *version,
                      const char *path, int collection)
{
    const char *name = cfg && cfg->name ? cfg->name : "vmaf";
    const uint64_t flags = cfg ? cfg->flags : 0;
    unsigned qflags = 0;
    int err;

    if ((version && (!*version || strchr(version, ':'))) || (path && (!*path || strchr(path, ':'))) ||
        !*name || strpbrk(name, ":=")) {
        vmaf_abi_log(NULL, VMAF_LOG_LEVEL_ERROR, "model: '%s' cannot be given to libqgpu "
                     "(empty, or holds ':')", version ? version : path ? path : name);
        return -EINVAL;
    }
    if (flags & VMAF_MODEL_FLAG_ENABLE_TRANSFORM)
        qflags |= QGPU_MODEL_ENABLE_TRANSFORM;
    if (flags & VMAF_MODEL_FLAG_DISABLE_TRANSFORM)
        qflags |= QGPU_MODEL_DISABLE_TRANSFORM;
    if (flags & VMAF_MODEL_FLAG_DISABLE_CLIP)
        qflags |= QGPU_MODEL_DISABLE_CLIP;
    if ((err = check_model(version, path, qflags, collection)))
        return err;
    model->name = vmaf_abi_concat(name, NULL);
    model->spec = vmaf_abi_concat(version ? "version=" : "path=", version ? version : path,
                                  ":name=", name,
                                  qflags & QGPU_MODEL_ENABLE_TRANSFORM ? ":enable_transform" : "",
                                  qflags & QGPU_MODEL_DISABLE_TRANSFORM ? ":disable_transform" : "",
                                  qflags & QGPU_MODEL_DISABLE_CLIP ? ":disable_clip" : "", NULL);
    if (!model->name || !model->spec) {
        free(model->name);
        free(model->spec);
        return -ENOMEM;
    }
    return 0;
}

static int model_new(VmafModel **model, VmafModelConfig *cfg, const char *version,
                     const char *path)
{
    VmafModel *m;
    int err;
    if (!model)
        return -EINVAL;
    *model = NULL;
    if (!(version || path))
        return -EINVAL;
    if (!(m = calloc(1, sizeof(*m))))
        return -ENOMEM;
    if ((err = model_init(m, cfg, version, path, 0))) {
        free(m);
        return err;
    }
    *model = m;
    return 0;
}

VMAF_API int vmaf_model_load(VmafModel **model, VmafModelConfig *cfg, const char *version)
{
    return model_new(model, cfg, version, NULL);
}

VMAF_API int vmaf_model_load_from_path(VmafModel **model, VmafModelConfig *cfg,
                                       const char *path)
{
    return model_new(model, cfg, NULL, path);
}

/* Appends ":<feature>.<key>=<value>" for every option of dict. */
static int add_overrides(VmafModel *model, const char *feature_name, VmafFeatureDictionary *dict)
{
    char *prefix, *opts = NULL, *spec = NULL;
    int err = -ENOMEM;
    if (!model || !feature_name || !dict)
        return -EINVAL;
    /* from here the dictionary is ours, on failure too (as in libvmaf) */
    if (!*feature_name || strpbrk(feature_name, ":=."))
        err = -EINVAL;
    else if ((prefix = vmaf_abi_concat(feature_name, ".", NULL))) {
        opts = vmaf_abi_dict_spec(dict, prefix, &err);
        free(prefix);
    }
    if (opts && !(spec = vmaf_abi_concat(model->spec, *opts ? ":" : "", opts, NULL)))
        err = -ENOMEM;
    free(opts);
    vmaf_feature_dictionary_free(&dict);
    if (!spec)
        return err;
    free(model->spec);
    model->spec = spec;
    return 0;
}

VMAF_API int vmaf_model_feature_overload(VmafModel *model, const char *feature_name,
                                         VmafFeatureDictionary *opts_dict)
{
    return add_overrides(model, feature_name, opts_dict);
}

VMAF_API void vmaf_model_destroy(VmafModel *model)
{
    if (!model || model->collection) /* a collection's lead goes with it */
        return;
    free(model->spec);
    free(model->name);
    free(model);
}

static int collection_new(VmafModel **model, VmafModelCollection **collection,
                          VmafModelConfig *cfg, const char *version, const char *path)
{
    VmafModelCollection *c;
    int err;
    if (!model || !collection || !(version || path))
        return -EINVAL;
    *model = NULL;
    *collection = NULL;
    if (!(c = calloc(1, sizeof(*c))))
        return -ENOMEM;
    if ((err = model_init(&c->lead, cfg, version, path, 1))) {
        free(c);
        return err;
    }
    c->lead.collection = c;
    *model = &c->lead;
    *collection = c;
    return 0;
}

VMAF_API int vmaf_model_collection_load(VmafModel **model, VmafModelCollection **model_collection,
                                        VmafModelConfig *cfg, const char *version)
{
    return collection_new(model, model_collection, cfg, version, NULL);
}

VMAF_API int vmaf_model_collection_load_from_path(VmafModel **model,
                                                  VmafModelCollection **model_collection,
                                                  VmafModelConfig *cfg, const char *path)
{
    return collection_new(model, model_collection, cfg, NULL, path);
}

VMAF_API int vmaf_model_collection_feature_overload(VmafModel *model,
                                                    VmafModelCollection **model_collection,
                                                    const char *feature_name,
                                                    VmafFeatureDictionary *opts_dict)
{
    (void)model; /* the lead: the overrides go to every member */
    if (!model_collection || !*model_collection)
        return -EINVAL;
    return add_overrides(&(*model_collection)->lead, feature_name, opts_dict);
}

VMAF_API void vmaf_model_collection_destroy(VmafModelCollection *model_collection)
{
    if (!model_collection)
        return;
    free(model_collection->lead.spec);
    free(model_collection->lead.name);
    free(model_collection);
}
