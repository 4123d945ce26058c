/* Confidence intervals of a bootstrap model collection (see model_bootstrap.h).
 * Our code; the formulas are libvmaf 3.2.0's (predict.c): mean, population
 * standard deviation, percentiles interpolated linearly between the sorted
 * values at position p (n - 1) / 100, and delta = 0.01 for the slope. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_bootstrap.h"

#define SLOPE_DELTA 0.01

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Percentile `perc` (0..100) of n sorted values. */
static double percentile(const double *sorted, int n, double perc)
{
    const double p = perc * (n - 1) / 100.0;
    const int lo = (int)floor(p), hi = (int)ceil(p);
    if (lo == hi)
        return sorted[lo];
    return sorted[lo] * (hi - p) + sorted[hi] * (p - lo);
}

void qgpu_bootstrap_score(const QgpuModel *first, const double *raw, int n,
                          QgpuBootstrapScore *out)
{
    double sorted[QGPU_MODEL_MAX_COLLECTION];
    double sum = 0.0, ssd = 0.0, mean, plus, minus;

    for (int i = 0; i < n; i++) {
        if (isnan(raw[i])) {
            out->bagging = out->stddev = out->ci_lo = out->ci_hi = NAN;
            return;
        }
        sum += raw[i];
    }
    mean = sum / n;
    for (int i = 0; i < n; i++)
        ssd += (raw[i] - mean) * (raw[i] - mean);
    memcpy(sorted, raw, (size_t)n * sizeof(*sorted));
    qsort(sorted, (size_t)n, sizeof(*sorted), compare_doubles);

    out->bagging = qgpu_model_finish(first, mean);
    out->ci_lo = qgpu_model_finish(first, percentile(sorted, n, 2.5));
    out->ci_hi = qgpu_model_finish(first, percentile(sorted, n, 97.5));
    plus = qgpu_model_finish(first, mean + SLOPE_DELTA);
    minus = qgpu_model_finish(first, mean - SLOPE_DELTA);
    out->stddev = sqrt(ssd / n) * ((plus - minus) / (2.0 * SLOPE_DELTA));
}
