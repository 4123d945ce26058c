/*
 * VMAF models: libvmaf's JSON model format, the feature mapping and the
 * per-frame prediction (normalise, libsvm nu-SVR, denormalise, optional
 * transform, clip), as libvmaf 3.2.0 evaluates them (read_json_model.c,
 * predict.c; summary in shared/research/libvmaf_features.md sections 2
 * and 5.8).
 *
 * qgpu_use_model() (public, qgpu.h) loads a model, enables the extractors
 * its features come from and adds a frame hook that writes the score. The
 * functions below are the host-only part, usable without a device (the
 * unit tests feed them libvmaf's logged features).
 */
#ifndef QGPU_MODEL_H
#define QGPU_MODEL_H

#include <stddef.h>

#include "svm.h"

#define QGPU_MODEL_MAX_FEATURES 32  /* libvmaf's MAX_FEATURE_COUNT */
#define QGPU_MODEL_MAX_KNOTS 10     /* libvmaf's MAX_KNOT_COUNT */
#define QGPU_MODEL_MAX_OPTS 32
#define QGPU_MODEL_MAX_COLLECTION 256 /* models in a collection file, "0" included */

/* Load flags (libvmaf's VmafModelFlags). */
enum {
    QGPU_MODEL_ENABLE_TRANSFORM = 1 << 0, /* apply score_transform even without "enabled" */
    QGPU_MODEL_DISABLE_CLIP = 1 << 1,     /* ignore score_clip */
    QGPU_MODEL_DISABLE_TRANSFORM = 1 << 2, /* no score_transform, even "enabled" */
};

/* model_type (libvmaf's VmafModelType) */
enum {
    QGPU_MODEL_TYPE_SVM = 0,               /* LIBSVMNUSVR */
    QGPU_MODEL_TYPE_BOOTSTRAP = 1,         /* BOOTSTRAP_LIBSVMNUSVR */
    QGPU_MODEL_TYPE_RESIDUE_BOOTSTRAP = 2, /* RESIDUEBOOTSTRAP_LIBSVMNUSVR */
};

enum {
    QGPU_MODEL_NORM_NONE = 1,
    QGPU_MODEL_NORM_LINEAR_RESCALE = 2,
};

/* One extractor option of a model feature ("adm_enhn_gain_limit" = "1"). */
typedef struct QgpuModelOpt {
    char *key;
    char *value;
} QgpuModelOpt;

typedef struct QgpuModelFeature {
    char *name;             /* libvmaf's name in the model: "VMAF_integer_feature_adm2_score" */
    const char *extractor;  /* extractor providing it: "adm" */
    const char *output;     /* printed name before the option suffix: "integer_adm2" */
    int suffixed;           /* 0: printed without the option suffix (libvmaf quirk) */
    double slope, intercept;
    QgpuModelOpt opts[QGPU_MODEL_MAX_OPTS]; /* feature_opts_dicts entry + overrides */
    int nb_opts;
    int overridden;         /* an override from the model spec touched opts */
} QgpuModelFeature;

typedef struct QgpuModel {
    char *source;           /* "vmaf_v0.6.1" or the file path, for messages */
    int type;               /* QGPU_MODEL_TYPE_*; every type predicts the same way */
    int norm_type;
    double slope, intercept; /* index 0 of slopes/intercepts: the output */
    QgpuModelFeature features[QGPU_MODEL_MAX_FEATURES];
    int nb_features;
    int clip_enabled;
    double clip_min, clip_max;
    struct {
        int enabled;
        int p_enabled[3];
        double p[3];
        int nb_knots;       /* 0: no piecewise-linear step */
        double knot_x[QGPU_MODEL_MAX_KNOTS], knot_y[QGPU_MODEL_MAX_KNOTS];
        int out_lte_in, out_gte_in;
    } transform;
    int chroma_correction;  /* chroma_correction_parameter present and non-zero */
    double chroma_correction_parameter;
    QgpuSvm svm;
} QgpuModel;

/* A model collection (libvmaf's VmafModelCollection, e.g. vmaf_b_v0.6.3):
 * the file's root keys "0", "1", ... are whole models. models[0] gives the
 * main score; models[1..nb_models-1] are the bootstrap members. */
typedef struct QgpuModelCollection {
    QgpuModel *models[QGPU_MODEL_MAX_COLLECTION];
    int nb_models;
} QgpuModelCollection;

/* Built-in model JSON by version ("vmaf_v0.6.1"); NULL when unknown. */
const char *qgpu_model_builtin(const char *version, size_t *len);
/* Generated from the models/ JSON files at build time (models/models.mak):
 * the JSON text by version, and the NULL-terminated list of versions. */
const char *qgpu_model_json(const char *name);
const char *const *qgpu_model_builtin_names(void);

/* Parses a model from JSON text. `source` names it in messages. On error
 * returns QGPU_ERR_MODEL / QGPU_ERR_NO_MEMORY with a message naming the
 * source and the problem in err (err_len bytes); *out is NULL then. */
int qgpu_model_parse(QgpuModel **out, const char *json, size_t len, const char *source,
                     unsigned flags, char *err, size_t err_len);
/* Either kind of model text: a single model (root "model_dict") is put in
 * *model, a collection (root keys "0", "1", ...) in *collection. With
 * collection NULL, a collection is an error (QGPU_ERR_MODEL). Member k of a
 * collection is named "<source>[k]" in messages. */
int qgpu_model_parse_any(QgpuModel **model, QgpuModelCollection **collection, const char *json,
                         size_t len, const char *source, unsigned flags, char *err,
                         size_t err_len);
/* A built-in model by version, or a file by path (exactly one is non-NULL),
 * as qgpu_model_parse_any (QGPU_ERR_IO when the file cannot be read,
 * QGPU_ERR_MODEL naming the known versions when the version is unknown). */
int qgpu_model_load_any(QgpuModel **model, QgpuModelCollection **collection,
                        const char *version, const char *path, unsigned flags, char *err,
                        size_t err_len);
/* Single models only: a file, a built-in version. */
int qgpu_model_load_file(QgpuModel **out, const char *path, unsigned flags, char *err,
                         size_t err_len);
int qgpu_model_load_builtin(QgpuModel **out, const char *version, unsigned flags, char *err,
                            size_t err_len);

/* libvmaf's per-feature override ("vif.vif_enhn_gain_limit=1.0"): sets
 * option `key` to `value` for every model feature whose extractor is
 * `extractor`. Returns the number of features changed (0: none uses that
 * extractor, which libvmaf ignores), or QGPU_ERR_NO_MEMORY/BAD_OPTION. */
int qgpu_model_override(QgpuModel *m, const char *extractor, const char *key, const char *value);

/* Options of feature i in libvmaf's syntax ("opt=val:opt=val", "" if none);
 * malloc'ed, NULL on allocation failure. */
char *qgpu_model_feature_options(const QgpuModelFeature *f);

/* Score of one frame from the raw feature values (model order). NaN inputs
 * give NaN, as in libvmaf. predict = finish(predict_raw). */
double qgpu_model_predict(const QgpuModel *m, const double *raw);
/* The SVM's denormalised output, before the transform and the clip (what
 * libvmaf's predict gives with VMAF_MODEL_FLAG_DISABLE_TRANSFORM|_CLIP). */
double qgpu_model_predict_raw(const QgpuModel *m, const double *raw);
/* The transform (when enabled) then the clip (when enabled) applied to y. */
double qgpu_model_finish(const QgpuModel *m, double y);

/* The score transform step alone (identity when the transform is off). */
double qgpu_model_transform(const QgpuModel *m, double y);

void qgpu_model_free(QgpuModel **m);
void qgpu_model_collection_free(QgpuModelCollection **c);

/* A malloc'ed copy of s (NULL when out of memory); free() it. */
char *qgpu_model_strdup(const char *s);

#endif /* QGPU_MODEL_H */
