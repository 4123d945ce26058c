/* Enabling features by name: "name" or "name=opt=val:opt=val". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const QgpuFeatureClass *qgpu_feature_class_find(const char *name)
{
    for (int i = 0; qgpu_feature_classes[i]; i++)
        if (!strcmp(qgpu_feature_classes[i]->name, name))
            return qgpu_feature_classes[i];
    return NULL;
}

int qgpu_feature_output_find(const char *name, const QgpuFeatureClass **cls,
                             const QgpuFeatureOutput **output)
{
    for (int i = 0; qgpu_feature_classes[i]; i++) {
        const QgpuFeatureOutput *o = qgpu_feature_classes[i]->outputs;
        for (; o && o->name; o++) {
            if (!strcmp(name, o->name) || (o->model_name && !strcmp(name, o->model_name))) {
                *cls = qgpu_feature_classes[i];
                *output = o;
                return 0;
            }
        }
    }
    return -1;
}

const char *qgpu_feature_name(int index)
{
    for (int i = 0; qgpu_feature_classes[i]; i++)
        if (i == index)
            return qgpu_feature_classes[i]->name;
    return NULL;
}

void qgpu_feature_free(QgpuFeature *f)
{
    if (!f)
        return;
    if (f->cls->uninit && f->priv)
        f->cls->uninit(f);
    free(f->priv);
    free(f->spec);
    free(f->name_suffix);
    free(f);
}

static int feature_new(QgpuContext *ctx, const QgpuFeatureClass *cls, const char *options,
                       QgpuFeature **out)
{
    QgpuFeature *f = calloc(1, sizeof(*f));
    char msg[1024] = "";
    char *canonical;
    int err;

    if (!f)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    f->cls = cls;
    f->ctx = ctx;
    f->priv = calloc(1, cls->priv_size ? cls->priv_size : 1);
    if (!f->priv) {
        free(f);
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    }
    qgpu_options_set_defaults(cls->options, f->priv);
    err = qgpu_options_parse(cls->options, f->priv, options, cls->name, msg, sizeof(msg));
    if (err) {
        free(f->priv);
        free(f);
        return qgpu_error(ctx, err, "%s", msg);
    }
    canonical = qgpu_options_canonical(cls->options, f->priv);
    f->name_suffix = qgpu_options_name_suffix(cls->options, f->priv);
    if (canonical)
        f->spec = malloc(strlen(cls->name) + strlen(canonical) + 2);
    if (!canonical || !f->name_suffix || !f->spec) {
        free(canonical);
        free(f->name_suffix);
        free(f->spec);
        free(f->priv);
        free(f);
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    }
    strcpy(f->spec, cls->name);
    strcat(f->spec, "=");
    strcat(f->spec, canonical);
    free(canonical);
    *out = f;
    return 0;
}

int qgpu_enable_feature(QgpuContext *ctx, const char *spec)
{
    char name[128];
    const char *eq;
    size_t len;
    const QgpuFeatureClass *cls;
    QgpuFeature *f = NULL, **list;
    int err;

    if (!ctx || !spec || !*spec)
        return QGPU_ERR_INVALID_ARG;
    if (ctx->started)
        return qgpu_error(ctx, QGPU_ERR_STATE,
                          "features must be enabled before the first submit");
    eq = strchr(spec, '=');
    len = eq ? (size_t)(eq - spec) : strlen(spec);
    if (len >= sizeof(name))
        return qgpu_error(ctx, QGPU_ERR_UNKNOWN_FEATURE, "unknown feature '%s'", spec);
    memcpy(name, spec, len);
    name[len] = '\0';
    cls = qgpu_feature_class_find(name);
    if (!cls) {
        char known[1024] = "";
        size_t n = 0;
        for (int i = 0; qgpu_feature_classes[i] && n < sizeof(known); i++)
            n += snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "",
                          qgpu_feature_classes[i]->name);
        return qgpu_error(ctx, QGPU_ERR_UNKNOWN_FEATURE, "unknown feature '%s' (known: %s)",
                          name, known);
    }
    err = feature_new(ctx, cls, eq ? eq + 1 : "", &f);
    if (err)
        return err;
    for (int i = 0; i < ctx->nb_features; i++) {
        if (!strcmp(ctx->features[i]->spec, f->spec)) {
            qgpu_feature_free(f); /* same feature, same options: already on */
            return 0;
        }
    }
    list = realloc(ctx->features, (ctx->nb_features + 1) * sizeof(*list));
    if (!list) {
        qgpu_feature_free(f);
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    }
    ctx->features = list;
    ctx->features[ctx->nb_features++] = f;
    int lookahead = cls->dynamic_lookahead ? cls->dynamic_lookahead(f) : cls->lookahead;
    if (lookahead > ctx->max_lookahead)
        ctx->max_lookahead = lookahead;
    return 0;
}
