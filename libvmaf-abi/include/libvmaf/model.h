/*
 * libvmaf-qgpu: VMAF models and model collections of the libvmaf 3.x API.
 * Models are libqgpu's (built-in versions, libvmaf JSON files); the
 * declarations and layouts match libvmaf 3.x's.
 */
#ifndef LIBVMAF_QGPU_MODEL_H
#define LIBVMAF_QGPU_MODEL_H

#include <stdint.h>

#include "feature.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct VmafModel VmafModel;

enum VmafModelFlags {
    VMAF_MODEL_FLAGS_DEFAULT = 0,
    VMAF_MODEL_FLAG_DISABLE_CLIP = 1 << 0,
    VMAF_MODEL_FLAG_ENABLE_TRANSFORM = 1 << 1,
    VMAF_MODEL_FLAG_DISABLE_TRANSFORM = 1 << 2,
};

typedef struct VmafModelConfig {
    const char *name;   /* score name; NULL: "vmaf" */
    uint64_t flags;     /* enum VmafModelFlags, or'ed */
} VmafModelConfig;

/* A built-in model by version ("vmaf_v0.6.1", ...). */
int vmaf_model_load(VmafModel **model, VmafModelConfig *cfg, const char *version);

/* A libvmaf JSON model file. */
int vmaf_model_load_from_path(VmafModel **model, VmafModelConfig *cfg, const char *path);

/* Sets the options of opts_dict on every feature of the model that comes
 * from extractor feature_name (e.g. "adm", enhn gain limits). Takes
 * ownership of opts_dict on success. */
int vmaf_model_feature_overload(VmafModel *model, const char *feature_name,
                                VmafFeatureDictionary *opts_dict);

void vmaf_model_destroy(VmafModel *model);

typedef struct VmafModelCollection VmafModelCollection;

enum VmafModelCollectionScoreType {
    VMAF_MODEL_COLLECTION_SCORE_UNKNOWN = 0,
    VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP = 1,
};

typedef struct VmafModelCollectionScore {
    enum VmafModelCollectionScoreType type;
    struct {
        double bagging_score;
        double stddev;
        struct {
            struct {
                double lo;
                double hi;
            } p95;
        } ci;
    } bootstrap;
} VmafModelCollectionScore;

/* A bootstrap collection (vmaf_b_v0.6.3, ...): *model is set to its first
 * member (owned by the collection: do not destroy it). */
int vmaf_model_collection_load(VmafModel **model, VmafModelCollection **model_collection,
                               VmafModelConfig *cfg, const char *version);

int vmaf_model_collection_load_from_path(VmafModel **model,
                                         VmafModelCollection **model_collection,
                                         VmafModelConfig *cfg, const char *path);

int vmaf_model_collection_feature_overload(VmafModel *model,
                                           VmafModelCollection **model_collection,
                                           const char *feature_name,
                                           VmafFeatureDictionary *opts_dict);

void vmaf_model_collection_destroy(VmafModelCollection *model_collection);

#ifdef __cplusplus
}
#endif

#endif /* LIBVMAF_QGPU_MODEL_H */
