/*
 * qgpu_use_model(): a VMAF model, or a bootstrap model collection, in a
 * context. The model enables the extractors its features come from (with
 * the model's options; the context shares an extractor between models when
 * the options are the same) and adds a frame hook that computes the scores
 * from the features' scores when a frame becomes final.
 *
 * A collection (libvmaf 3.2.0: tools/vmaf.c loads a --model that is not a
 * single model with vmaf_model_collection_load(); model.c, predict.c)
 * writes, per frame: "<name>" from its model "0", "<name>_0001" ...
 * "<name>_NNNN" from its members (each with its own transform and clip),
 * then "<name>_bagging", "<name>_stddev", "<name>_ci_p95_lo",
 * "<name>_ci_p95_hi" (model_bootstrap.c). libvmaf's CLI scores every single
 * model before any collection, so "<name>" is registered with the single
 * models and the rest after all of them (the hook's init_late).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qgpu/qgpu.h"

#include "feature.h"
#include "internal.h"
#include "model.h"
#include "model_bootstrap.h"
#include "options.h"

/* The printed names of one model's inputs (suffix included), their ids. */
typedef struct ModelInputs {
    char *names[QGPU_MODEL_MAX_FEATURES];
    int ids[QGPU_MODEL_MAX_FEATURES];
} ModelInputs;

static const char *const stat_suffixes[4] = {"_bagging", "_stddev", "_ci_p95_lo",
                                             "_ci_p95_hi"};

typedef struct ModelHook {
    char *name;                  /* score name: "vmaf" or name= */
    QgpuModelCollection *set;    /* models[0]: the score; [1..]: bootstrap members */
    ModelInputs *inputs;         /* one per model */
    int *score_ids;              /* one per model: name, name_0001, ... */
    int stat_ids[4];             /* collections: stat_suffixes */
} ModelHook;

static void hook_free(void *opaque)
{
    ModelHook *h = opaque;
    if (!h)
        return;
    for (int k = 0; h->inputs && k < h->set->nb_models; k++)
        for (int i = 0; i < QGPU_MODEL_MAX_FEATURES; i++)
            free(h->inputs[k].names[i]);
    free(h->inputs);
    free(h->score_ids);
    qgpu_model_collection_free(&h->set);
    free(h->name);
    free(h);
}

static int register_suffixed(QgpuContext *ctx, const char *name, const char *suffix, int *id)
{
    char *full = malloc(strlen(name) + strlen(suffix) + 1);
    if (!full)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    strcpy(full, name);
    strcat(full, suffix);
    *id = qgpu_score_register(ctx, full);
    free(full);
    return *id < 0 ? *id : 0;
}

static int hook_init(void *opaque, QgpuContext *ctx, const QgpuVideoFormat *fmt)
{
    ModelHook *h = opaque;
    (void)fmt;
    for (int k = 0; k < h->set->nb_models; k++) {
        const QgpuModel *m = h->set->models[k];
        ModelInputs *in = &h->inputs[k];
        for (int i = 0; i < m->nb_features; i++) {
            in->ids[i] = qgpu_score_find(ctx, in->names[i]);
            if (in->ids[i] < 0)
                return qgpu_error(ctx, QGPU_ERR_MODEL,
                                  "model '%s': its feature %s ('%s' from extractor %s) is not "
                                  "produced", m->source, m->features[i].name, in->names[i],
                                  m->features[i].extractor);
        }
    }
    return register_suffixed(ctx, h->name, "", &h->score_ids[0]);
}

/* A collection's members and statistics, after every single model's score. */
static int hook_init_late(void *opaque, QgpuContext *ctx, const QgpuVideoFormat *fmt)
{
    ModelHook *h = opaque;
    int err = 0;
    (void)fmt;
    for (int k = 1; k < h->set->nb_models && !err; k++) {
        char suffix[16];
        snprintf(suffix, sizeof(suffix), "_%04d", k);
        err = register_suffixed(ctx, h->name, suffix, &h->score_ids[k]);
    }
    for (int s = 0; s < 4 && !err && h->set->nb_models > 1; s++)
        err = register_suffixed(ctx, h->name, stat_suffixes[s], &h->stat_ids[s]);
    return err;
}

static void read_inputs(QgpuContext *ctx, const QgpuModel *m, const ModelInputs *in,
                        unsigned frame_index, double *raw)
{
    for (int i = 0; i < m->nb_features; i++)
        raw[i] = qgpu_score_value(ctx, in->ids[i], frame_index);
}

static int hook_run(void *opaque, QgpuContext *ctx, unsigned frame_index)
{
    ModelHook *h = opaque;
    const QgpuModelCollection *set = h->set;
    double raw[QGPU_MODEL_MAX_FEATURES], members[QGPU_MODEL_MAX_COLLECTION];
    QgpuBootstrapScore b;
    int err;

    read_inputs(ctx, set->models[0], &h->inputs[0], frame_index, raw);
    err = qgpu_score_set(ctx, h->score_ids[0], frame_index,
                         qgpu_model_predict(set->models[0], raw));
    for (int k = 1; k < set->nb_models && !err; k++) {
        read_inputs(ctx, set->models[k], &h->inputs[k], frame_index, raw);
        members[k - 1] = qgpu_model_predict_raw(set->models[k], raw);
        err = qgpu_score_set(ctx, h->score_ids[k], frame_index,
                             qgpu_model_finish(set->models[k], members[k - 1]));
    }
    if (err || set->nb_models < 2)
        return err;
    qgpu_bootstrap_score(set->models[1], members, set->nb_models - 1, &b);
    err = qgpu_score_set(ctx, h->stat_ids[0], frame_index, b.bagging);
    if (!err)
        err = qgpu_score_set(ctx, h->stat_ids[1], frame_index, b.stddev);
    if (!err)
        err = qgpu_score_set(ctx, h->stat_ids[2], frame_index, b.ci_lo);
    if (!err)
        err = qgpu_score_set(ctx, h->stat_ids[3], frame_index, b.ci_hi);
    return err;
}

/* libvmaf's output-name suffix for feature f with its options, through the
 * extractor class's option table (the rule of options.h). */
static int input_name(QgpuContext *ctx, const QgpuModel *m, const QgpuModelFeature *f,
                      char **name, char **opts)
{
    const QgpuFeatureClass *cls = qgpu_feature_class_find(f->extractor);
    char msg[1024] = "";
    char *suffix = NULL;
    void *priv;
    int err;

    *name = NULL;
    *opts = NULL;
    if (!cls)
        return qgpu_error(ctx, QGPU_ERR_MODEL,
                          "model '%s': feature %s needs the extractor '%s', which this build "
                          "does not have", m->source, f->name, f->extractor);
    *opts = qgpu_model_feature_options(f);
    priv = calloc(1, cls->priv_size ? cls->priv_size : 1);
    if (!*opts || !priv) {
        free(priv);
        free(*opts);
        *opts = NULL;
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    }
    qgpu_options_set_defaults(cls->options, priv);
    err = qgpu_options_parse(cls->options, priv, *opts, cls->name, msg, sizeof(msg));
    if (err) {
        free(priv);
        free(*opts);
        *opts = NULL;
        /* bad values in the file are the model's fault, in the spec the caller's */
        return qgpu_error(ctx, f->overridden ? err : QGPU_ERR_MODEL,
                          "model '%s': feature %s: %s", m->source, f->name, msg);
    }
    suffix = qgpu_options_name_suffix(cls->options, priv);
    free(priv);
    if (suffix && !f->suffixed)
        suffix[0] = '\0';
    if (suffix)
        *name = malloc(strlen(f->output) + strlen(suffix) + 1);
    if (!*name) {
        free(suffix);
        free(*opts);
        *opts = NULL;
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    }
    strcpy(*name, f->output);
    strcat(*name, suffix);
    free(suffix);
    return 0;
}

static int parse_bool(const char *v, int *out)
{
    if (!v || !strcmp(v, "true") || !strcmp(v, "1"))
        *out = 1;
    else if (!strcmp(v, "false") || !strcmp(v, "0"))
        *out = 0;
    else
        return -1;
    return 0;
}

/* Model spec in the syntax of libvmaf's --model: "key=value:key=value". */
typedef struct ModelSpec {
    char *copy;
    const char *version, *path, *name;
    int bitdepth;
    int features_only;     /* enable the inputs, add no score */
    unsigned flags;
    struct { char *extractor, *key, *value; } overrides[64];
    int nb_overrides;
} ModelSpec;

static int spec_parse(QgpuContext *ctx, const char *spec, ModelSpec *s)
{
    char *save = NULL;
    memset(s, 0, sizeof(*s));
    s->copy = qgpu_model_strdup(spec ? spec : "");
    if (!s->copy)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    for (char *item = strtok_r(s->copy, ":", &save); item; item = strtok_r(NULL, ":", &save)) {
        char *val = strchr(item, '=');
        int on;
        if (val)
            *val++ = '\0';
        if (!strcmp(item, "version") || !strcmp(item, "path") || !strcmp(item, "name")) {
            const char **dst = item[0] == 'v' ? &s->version : item[0] == 'p' ? &s->path
                                                                              : &s->name;
            if (!val || !*val)
                return qgpu_error(ctx, QGPU_ERR_BAD_OPTION, "model: %s= needs a value", item);
            if (*dst)
                return qgpu_error(ctx, QGPU_ERR_BAD_OPTION, "model: %s= given twice", item);
            *dst = val;
        } else if (!strcmp(item, "bitdepth")) {
            char *end = NULL;
            long v = val ? strtol(val, &end, 10) : 0;
            if (!val || end == val || *end || v < 8 || v > 16)
                return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                                  "model: bitdepth=%s: expected 8..16", val ? val : "");
            s->bitdepth = (int)v;
        } else if (!strcmp(item, "enable_transform") || !strcmp(item, "disable_clip") ||
                   !strcmp(item, "disable_transform")) {
            unsigned flag = item[0] == 'e'                 ? QGPU_MODEL_ENABLE_TRANSFORM
                            : !strcmp(item, "disable_clip") ? QGPU_MODEL_DISABLE_CLIP
                                                            : QGPU_MODEL_DISABLE_TRANSFORM;
            if (parse_bool(val, &on))
                return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                                  "model: %s: '%s' is not true/false", item, val);
            s->flags = on ? s->flags | flag : s->flags & ~flag;
        } else if (!strcmp(item, "features_only")) {
            if (parse_bool(val, &s->features_only))
                return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                                  "model: %s: '%s' is not true/false", item, val);
        } else if (strchr(item, '.') && val && *val && item[0] != '.') {
            /* "<extractor>.<option>=value", libvmaf's per-feature override */
            char *dot = strchr(item, '.');
            if (!dot[1])
                return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                                  "model: '%s' names no option after the '.'", item);
            if (s->nb_overrides == (int)(sizeof(s->overrides) / sizeof(s->overrides[0])))
                return qgpu_error(ctx, QGPU_ERR_BAD_OPTION, "model: too many overrides");
            *dot = '\0';
            s->overrides[s->nb_overrides].extractor = item;
            s->overrides[s->nb_overrides].key = dot + 1;
            s->overrides[s->nb_overrides].value = val;
            s->nb_overrides++;
        } else {
            return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                              "model: unknown option '%s' (version=, path=, name=, "
                              "bitdepth=, enable_transform, disable_transform, disable_clip, features_only, "
                              "<feature>.<option>=value)",
                              item);
        }
    }
    if (s->version && s->path)
        return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                          "model: give either version= or path=, not both");
    if (!s->version && !s->path)
        s->version = "vmaf_v0.6.1"; /* libvmaf's CLI default model */
    if (!s->name)
        s->name = "vmaf";
    return 0;
}

/* Extractor spec "ext=opts" of a model feature, enabled (shared if equal). */
static int enable_input(QgpuContext *ctx, const QgpuModelFeature *f, const char *opts)
{
    char *fspec = malloc(strlen(f->extractor) + strlen(opts) + 2);
    int err;
    if (!fspec)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    strcpy(fspec, f->extractor);
    if (*opts) {
        strcat(fspec, "=");
        strcat(fspec, opts);
    }
    err = qgpu_enable_feature(ctx, fspec); /* same spec twice: one instance */
    free(fspec);
    return err;
}

/* Loads the spec's model (or collection) into h->set. */
static int load_models(QgpuContext *ctx, const ModelSpec *s, ModelHook *h)
{
    char msg[1024] = "";
    QgpuModel *single = NULL;
    int err = qgpu_model_load_any(&single, &h->set, s->path ? NULL : s->version, s->path,
                                  s->flags, msg, sizeof(msg));
    if (err)
        return qgpu_error(ctx, err, "%s", msg);
    if (single) {
        h->set = calloc(1, sizeof(*h->set));
        if (!h->set) {
            qgpu_model_free(&single);
            return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
        }
        h->set->models[0] = single;
        h->set->nb_models = 1;
    }
    h->inputs = calloc((size_t)h->set->nb_models, sizeof(*h->inputs));
    h->score_ids = calloc((size_t)h->set->nb_models, sizeof(*h->score_ids));
    if (!h->inputs || !h->score_ids)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    return 0;
}

/* libvmaf's FEATURE.OPTION= overrides, on every model of the set. */
static int apply_overrides(QgpuContext *ctx, const ModelSpec *s, QgpuModelCollection *set)
{
    for (int o = 0; o < s->nb_overrides; o++) {
        int total = 0;
        for (int k = 0; k < set->nb_models; k++) {
            int n = qgpu_model_override(set->models[k], s->overrides[o].extractor,
                                        s->overrides[o].key, s->overrides[o].value);
            if (n < 0)
                return qgpu_error(ctx, n, "model '%s': cannot apply %s.%s",
                                  set->models[k]->source, s->overrides[o].extractor,
                                  s->overrides[o].key);
            total += n;
        }
        if (total == 0) /* libvmaf ignores these silently */
            qgpu_log(ctx, QGPU_LOG_WARNING,
                     "model '%s': no feature of the model comes from '%s'; %s.%s ignored",
                     set->models[0]->source, s->overrides[o].extractor,
                     s->overrides[o].extractor, s->overrides[o].key);
    }
    return 0;
}

/* Names every model input and enables its extractor; every feature is
 * checked before any is enabled, so a failure changes nothing. */
static int wire_inputs(QgpuContext *ctx, const ModelSpec *s, ModelHook *h)
{
    const int nb = h->set->nb_models;
    char **opts = calloc((size_t)nb * QGPU_MODEL_MAX_FEATURES, sizeof(*opts));
    int err = 0;
    if (!opts)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    for (int k = 0; k < nb && !err; k++) {
        QgpuModel *m = h->set->models[k];
        for (int i = 0; i < m->nb_features && !err; i++)
            err = input_name(ctx, m, &m->features[i], &h->inputs[k].names[i],
                             &opts[k * QGPU_MODEL_MAX_FEATURES + i]);
    }
    if (!err && s->bitdepth)
        err = qgpu_set_compute_bitdepth(ctx, s->bitdepth);
    for (int k = 0; k < nb && !err; k++) {
        const QgpuModel *m = h->set->models[k];
        for (int i = 0; i < m->nb_features && !err; i++)
            err = enable_input(ctx, &m->features[i], opts[k * QGPU_MODEL_MAX_FEATURES + i]);
    }
    for (int i = 0; i < nb * QGPU_MODEL_MAX_FEATURES; i++)
        free(opts[i]);
    free(opts);
    return err;
}

int qgpu_use_model(QgpuContext *ctx, const char *spec)
{
    ModelSpec s;
    ModelHook *h = NULL;
    QgpuFrameHook hook = { 0 };
    int err;

    if (!ctx)
        return QGPU_ERR_INVALID_ARG;
    if (ctx->started)
        return qgpu_error(ctx, QGPU_ERR_STATE, "models must be added before the first submit");
    err = spec_parse(ctx, spec, &s);
    if (err)
        goto fail;
    for (int i = 0; i < ctx->nb_hooks && !s.features_only; i++) {
        if (ctx->hooks[i].run == hook_run &&
            !strcmp(((const ModelHook *)ctx->hooks[i].opaque)->name, s.name)) {
            err = qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                             "model: a model named '%s' is already in use; give each model a "
                             "unique name=", s.name);
            goto fail;
        }
    }

    h = calloc(1, sizeof(*h));
    if (!h || !(h->name = qgpu_model_strdup(s.name))) {
        err = qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    err = load_models(ctx, &s, h);
    if (!err)
        err = apply_overrides(ctx, &s, h->set);
    if (!err)
        err = wire_inputs(ctx, &s, h);
    if (err || s.features_only) /* features_only: the inputs are enabled, no score */
        goto fail;
    free(s.copy);
    hook.init = hook_init;
    if (h->set->nb_models > 1)
        hook.init_late = hook_init_late;
    hook.run = hook_run;
    hook.free = hook_free;
    hook.opaque = h;
    return qgpu_frame_hook_add(ctx, &hook); /* owns h from here, also on failure */

fail:
    hook_free(h);
    free(s.copy);
    return err;
}

const char *qgpu_model_name(int index)
{
    const char *const *names = qgpu_model_builtin_names();
    for (int i = 0; names[i]; i++)
        if (i == index)
            return names[i];
    return NULL;
}
