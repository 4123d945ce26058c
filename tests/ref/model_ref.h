/*
 * Plain-C VMAF model prediction for tests, written apart from the library:
 * reads one model object ({"model_dict": ...}) with json-c, keeps the
 * support vectors sparse as libsvm does, and predicts as libvmaf 3.2.0's
 * predict.c: normalise, RBF nu-SVR, denormalise, polynomial transform with
 * out_gte_in/out_lte_in, clip; and the bootstrap statistics of a model
 * collection. Only what the shipped v0.6.x models use: no knots, no chroma
 * correction (loading a model that has them fails).
 */
#ifndef QGPU_MODEL_REF_H
#define QGPU_MODEL_REF_H

#include <json-c/json.h>

#define MODEL_REF_MAX_FEATURES 32

typedef struct ModelRef {
    int nb_features;
    int linear_rescale;
    double out_slope, out_intercept;
    double slope[MODEL_REF_MAX_FEATURES], intercept[MODEL_REF_MAX_FEATURES];
    int clip;
    double clip_lo, clip_hi;
    int transform;           /* applied: "enabled": true in the file, or forced */
    int has_p[3];
    double p[3];
    int out_gte_in, out_lte_in;
    double gamma, rho;
    int nb_sv;
    double *coef;            /* nb_sv */
    int *first;              /* nb_sv + 1: entries of SV k are first[k] .. first[k+1]-1 */
    int *index;              /* 1-based feature index of each entry */
    double *value;
} ModelRef;

/* Loads model_obj (the object holding "model_dict"). enable_transform /
 * disable_clip: the spec flags. Returns 0, -1 (with a message on stderr). */
int model_ref_load(ModelRef *m, json_object *model_obj, int enable_transform, int disable_clip);
void model_ref_free(ModelRef *m);

/* The prediction before transform and clip, from the raw feature values. */
double model_ref_svm(const ModelRef *m, const double *features);
/* Transform (when applied) and clip (when on). */
double model_ref_post(const ModelRef *m, double y);

/* libvmaf's bootstrap outputs from n member predictions before transform
 * and clip: out[0] bagging, [1] stddev, [2] ci_p95_lo, [3] ci_p95_hi;
 * `first` (member 1) transforms and clips them. */
void model_ref_bootstrap(const ModelRef *first, const double *raw, int n, double out[4]);

#endif
