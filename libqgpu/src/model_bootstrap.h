/*
 * The confidence-interval outputs of a bootstrap model collection
 * (vmaf_b_v0.6.3, vmaf_float_b_v0.6.3): from the members' predictions of one
 * frame, libvmaf's <name>_bagging, _stddev, _ci_p95_lo and _ci_p95_hi
 * (libvmaf 3.2.0 predict.c, vmaf_bootstrap_predict_score_at_index()).
 */
#ifndef QGPU_MODEL_BOOTSTRAP_H
#define QGPU_MODEL_BOOTSTRAP_H

#include "model.h"

typedef struct QgpuBootstrapScore {
    double bagging;  /* mean of the members */
    double stddev;   /* their population standard deviation, through the transform */
    double ci_lo;    /* 2.5th percentile */
    double ci_hi;    /* 97.5th percentile */
} QgpuBootstrapScore;

/* raw[0..n-1]: each member's prediction before its transform and clip
 * (qgpu_model_predict_raw), 1 <= n < QGPU_MODEL_MAX_COLLECTION. `first` is
 * member 1 of the collection: its transform and clip map the mean and the
 * percentiles, and the stddev is scaled by that mapping's slope at the mean
 * (a central difference over +-0.01). A NaN among the inputs makes all four
 * NaN. */
void qgpu_bootstrap_score(const QgpuModel *first, const double *raw, int n,
                          QgpuBootstrapScore *out);

#endif /* QGPU_MODEL_BOOTSTRAP_H */
