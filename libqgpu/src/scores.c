/* The score store (every score of every frame), lookups and pooling. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void qgpu_scores_free(QgpuScoreStore *s)
{
    for (int i = 0; i < s->nb_names; i++)
        free(s->names[i]);
    free(s->names);
    free(s->values);
    for (int i = 0; i < s->nb_agg; i++)
        free(s->agg_names[i]);
    free(s->agg_names);
    free(s->agg_values);
    memset(s, 0, sizeof(*s));
}

int qgpu_score_find(const QgpuContext *ctx, const char *name)
{
    for (int i = 0; i < ctx->scores.nb_names; i++)
        if (!strcmp(ctx->scores.names[i], name))
            return i;
    return QGPU_ERR_UNKNOWN_FEATURE;
}

int qgpu_score_register(QgpuContext *ctx, const char *name)
{
    QgpuScoreStore *s = &ctx->scores;
    int id = qgpu_score_find(ctx, name);
    if (id >= 0)
        return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                          "two enabled features both produce '%s': give them different "
                          "options or enable one",
                          name);
    if (s->nb_frames)
        return qgpu_error(ctx, QGPU_ERR_STATE, "score '%s' registered after frames exist",
                          name);
    if (s->nb_names == s->cap_names) {
        int cap = s->cap_names ? s->cap_names * 2 : 16;
        char **names = realloc(s->names, cap * sizeof(*names));
        if (!names)
            return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
        s->names = names;
        s->cap_names = cap;
    }
    s->names[s->nb_names] = strdup(name);
    if (!s->names[s->nb_names])
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    return s->nb_names++;
}

int qgpu_output_register(QgpuFeature *f, int index, int *id)
{
    const QgpuFeatureOutput *o = &f->cls->outputs[index];
    const char *suffix = o->flags & QGPU_OUTPUT_NO_SUFFIX ? "" : f->name_suffix;
    char name[256];
    snprintf(name, sizeof(name), "%s%s", o->name, suffix);
    *id = qgpu_score_register(f->ctx, name);
    return *id < 0 ? *id : 0;
}

int qgpu_outputs_register(QgpuFeature *f, int first, int count, int *ids)
{
    int err = 0;
    for (int i = first; i < first + count && !err; i++)
        err = qgpu_output_register(f, i, &ids[i]);
    return err;
}

/* Makes room for frame_index (rows are NAN until set). */
int qgpu_scores_add_frame(QgpuContext *ctx, unsigned frame_index)
{
    QgpuScoreStore *s = &ctx->scores;
    if (!s->stride)
        s->stride = s->nb_names ? s->nb_names : 1;
    while (frame_index >= s->cap_frames) {
        unsigned cap = s->cap_frames ? s->cap_frames * 2 : 256;
        double *values = realloc(s->values, (size_t)cap * s->stride * sizeof(*values));
        if (!values)
            return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory for scores");
        s->values = values;
        s->cap_frames = cap;
    }
    while (s->nb_frames <= frame_index) {
        double *row = s->values + (size_t)s->nb_frames * s->stride;
        for (int i = 0; i < s->stride; i++)
            row[i] = NAN;
        s->nb_frames++;
    }
    return 0;
}

int qgpu_score_set(QgpuContext *ctx, int score_id, unsigned frame_index, double value)
{
    QgpuScoreStore *s = &ctx->scores;
    if (score_id < 0 || score_id >= s->nb_names || frame_index >= s->nb_frames ||
        frame_index < ctx->finalized)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "internal: score %d of frame %u not settable",
                          score_id, frame_index);
    s->values[(size_t)frame_index * s->stride + score_id] = value;
    return 0;
}

double qgpu_score_value(const QgpuContext *ctx, int score_id, unsigned frame_index)
{
    const QgpuScoreStore *s = &ctx->scores;
    if (score_id < 0 || score_id >= s->nb_names || frame_index >= s->nb_frames)
        return NAN;
    return s->values[(size_t)frame_index * s->stride + score_id];
}

int qgpu_aggregate_set(QgpuContext *ctx, const char *name, double value)
{
    QgpuScoreStore *s = &ctx->scores;
    char **names;
    double *values;
    for (int i = 0; i < s->nb_agg; i++) {
        if (!strcmp(s->agg_names[i], name)) {
            s->agg_values[i] = value;
            return 0;
        }
    }
    names = realloc(s->agg_names, (s->nb_agg + 1) * sizeof(*names));
    if (!names)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    s->agg_names = names;
    values = realloc(s->agg_values, (s->nb_agg + 1) * sizeof(*values));
    if (!values)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    s->agg_values = values;
    s->agg_names[s->nb_agg] = strdup(name);
    if (!s->agg_names[s->nb_agg])
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    s->agg_values[s->nb_agg++] = value;
    return 0;
}

/* ---- public lookups ---- */

int qgpu_score_count(const QgpuContext *ctx)
{
    return ctx ? ctx->scores.nb_names : 0;
}

const char *qgpu_score_name(const QgpuContext *ctx, int index)
{
    if (!ctx || index < 0 || index >= ctx->scores.nb_names)
        return NULL;
    return ctx->scores.names[index];
}

unsigned qgpu_frame_count(const QgpuContext *ctx)
{
    return ctx ? ctx->finalized : 0;
}

int qgpu_get_score(const QgpuContext *ctx, unsigned frame_index, const char *name, double *value)
{
    int id;
    if (!ctx || !name || !value)
        return QGPU_ERR_INVALID_ARG;
    id = qgpu_score_find(ctx, name);
    if (id < 0)
        return QGPU_ERR_UNKNOWN_FEATURE;
    if (frame_index >= ctx->finalized)
        return QGPU_ERR_INVALID_ARG;
    *value = qgpu_score_value(ctx, id, frame_index);
    return 0;
}

int qgpu_get_pooled(const QgpuContext *ctx, const char *name, int method, double *value)
{
    return qgpu_get_pooled_subsampled(ctx, name, method, 1, value);
}

int qgpu_get_pooled_subsampled(const QgpuContext *ctx, const char *name, int method,
                               unsigned subsample, double *value)
{
    if (!ctx)
        return QGPU_ERR_INVALID_ARG;
    if (!ctx->finalized) { /* no frame: NaN, as for a score that is NaN everywhere */
        if (!name || !value || method < QGPU_POOL_MEAN || method > QGPU_POOL_HARMONIC_MEAN)
            return QGPU_ERR_INVALID_ARG;
        if (qgpu_score_find(ctx, name) < 0)
            return QGPU_ERR_UNKNOWN_FEATURE;
        *value = NAN;
        return 0;
    }
    return qgpu_get_pooled_range(ctx, name, method, 0, ctx->finalized - 1, subsample, value);
}

int qgpu_get_pooled_range(const QgpuContext *ctx, const char *name, int method, unsigned first,
                          unsigned last, unsigned subsample, double *value)
{
    double sum = 0.0, min = INFINITY, max = -INFINITY;
    unsigned n = 0, step = subsample > 1 ? subsample : 1;
    int id;
    if (!ctx || !name || !value || method < QGPU_POOL_MEAN || method > QGPU_POOL_HARMONIC_MEAN ||
        first > last || last >= ctx->finalized)
        return QGPU_ERR_INVALID_ARG;
    id = qgpu_score_find(ctx, name);
    if (id < 0)
        return QGPU_ERR_UNKNOWN_FEATURE;
    for (unsigned i = first; ; i++) {
        if (i % step == 0) {
            double v = qgpu_score_value(ctx, id, i);
            if (!isnan(v)) {
                n++;
                if (v < min)
                    min = v;
                if (v > max)
                    max = v;
                sum += method == QGPU_POOL_HARMONIC_MEAN ? 1.0 / (v + 1.0) : v;
            }
        }
        if (i == last)
            break;
    }
    if (n == 0) {
        *value = NAN;
        return 0;
    }
    switch (method) {
    case QGPU_POOL_MEAN: *value = sum / n; break;
    case QGPU_POOL_MIN: *value = min; break;
    case QGPU_POOL_MAX: *value = max; break;
    default: *value = n / sum - 1.0; break; /* libvmaf: 1/mean(1/(x+1)) - 1 */
    }
    return 0;
}

int qgpu_aggregate_count(const QgpuContext *ctx)
{
    return ctx ? ctx->scores.nb_agg : 0;
}

const char *qgpu_aggregate_name(const QgpuContext *ctx, int index)
{
    if (!ctx || index < 0 || index >= ctx->scores.nb_agg)
        return NULL;
    return ctx->scores.agg_names[index];
}

int qgpu_get_aggregate(const QgpuContext *ctx, const char *name, double *value)
{
    if (!ctx || !name || !value)
        return QGPU_ERR_INVALID_ARG;
    for (int i = 0; i < ctx->scores.nb_agg; i++) {
        if (!strcmp(ctx->scores.agg_names[i], name)) {
            *value = ctx->scores.agg_values[i];
            return 0;
        }
    }
    return QGPU_ERR_UNKNOWN_FEATURE;
}
