/*
 * VMAF models (see model.h): JSON model files through json-c, the mapping of
 * libvmaf's model feature names to our extractors (through the names each
 * feature class declares, feature.h), model collections (files of several
 * models, for the bootstrap models) and the per-frame prediction.
 * qgpu_use_model() is in model_use.c.
 *
 * Semantics follow libvmaf 3.2.0 (read_json_model.c, predict.c, model.c,
 * tools/cli_parse.c), summarised in shared/research/libvmaf_features.md
 * sections 2 and 5.8. Our own code; constants come from the model files.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "qgpu/qgpu.h"

#include "feature.h"
#include "internal.h"
#include "model.h"
#include "options.h"

#define MODEL_FILE_MAX (64u << 20) /* refuse absurd "model" files */
#define SVM_MAX_DIM_STACK 64

/* ---- small helpers ------------------------------------------------------ */

static int fail(char *err, size_t err_len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t err_len, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return code;
}

char *qgpu_model_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Shortest text that reads back as exactly v (libvmaf keeps the JSON's
 * number text; any text of the same double gives the same option value). */
static void format_double(char *buf, size_t cap, double v)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static int is_number(const json_object *o)
{
    return json_object_is_type(o, json_type_double) || json_object_is_type(o, json_type_int);
}

static const char *type_name(const json_object *o)
{
    return json_type_to_name(json_object_get_type(o));
}

/* The JSON parser and strtod read '.' decimals whatever the caller's
 * locale; a host program may have set LC_NUMERIC to one with ','. */
typedef struct LocaleGuard {
    locale_t c_locale;
    locale_t old;
} LocaleGuard;

static void locale_enter(LocaleGuard *g)
{
    g->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    g->old = g->c_locale ? uselocale(g->c_locale) : (locale_t)0;
}

static void locale_leave(LocaleGuard *g)
{
    if (g->c_locale) {
        uselocale(g->old);
        freelocale(g->c_locale);
    }
}

/* ---- parsing -------------------------------------------------------------- */

typedef struct ParseCtx {
    QgpuModel *m;
    const char *src;
    unsigned flags;
    char *err;
    size_t err_len;
} ParseCtx;

#define PFAIL(pc, ...) fail((pc)->err, (pc)->err_len, QGPU_ERR_MODEL, __VA_ARGS__)

static int parse_number_array(ParseCtx *pc, json_object *a, const char *key, double *first,
                              double *rest, size_t rest_stride, int expect)
{
    size_t n;
    if (!json_object_is_type(a, json_type_array))
        return PFAIL(pc, "model '%s': \"%s\" is a %s, expected an array of numbers", pc->src,
                     key, type_name(a));
    n = json_object_array_length(a);
    if ((int)n != expect)
        return PFAIL(pc, "model '%s': \"%s\" has %zu numbers, expected %d (one for the score, "
                     "one per feature)", pc->src, key, n, expect);
    for (size_t i = 0; i < n; i++) {
        json_object *v = json_object_array_get_idx(a, i);
        double d;
        if (!is_number(v))
            return PFAIL(pc, "model '%s': \"%s\"[%zu] is a %s, expected a number", pc->src, key,
                         i, type_name(v));
        d = json_object_get_double(v);
        if (!isfinite(d))
            return PFAIL(pc, "model '%s': \"%s\"[%zu] is not finite", pc->src, key, i);
        if (i == 0)
            *first = d;
        else
            *(double *)((char *)rest + (i - 1) * rest_stride) = d;
    }
    return 0;
}

static int add_opt(QgpuModelFeature *f, const char *key, const char *value, int replace)
{
    for (int i = 0; i < f->nb_opts; i++) {
        if (!strcmp(f->opts[i].key, key)) {
            char *v;
            if (!replace)
                return 0; /* libvmaf: VMAF_DICT_DO_NOT_OVERWRITE, first one wins */
            v = qgpu_model_strdup(value);
            if (!v)
                return QGPU_ERR_NO_MEMORY;
            free(f->opts[i].value);
            f->opts[i].value = v;
            return 0;
        }
    }
    if (f->nb_opts >= QGPU_MODEL_MAX_OPTS)
        return QGPU_ERR_BAD_OPTION;
    f->opts[f->nb_opts].key = qgpu_model_strdup(key);
    f->opts[f->nb_opts].value = qgpu_model_strdup(value);
    if (!f->opts[f->nb_opts].key || !f->opts[f->nb_opts].value) {
        free(f->opts[f->nb_opts].key);
        free(f->opts[f->nb_opts].value);
        f->opts[f->nb_opts].key = f->opts[f->nb_opts].value = NULL;
        return QGPU_ERR_NO_MEMORY;
    }
    f->nb_opts++;
    return 0;
}

static int parse_feature_opts(ParseCtx *pc, json_object *a)
{
    size_t n;
    if (!json_object_is_type(a, json_type_array))
        return PFAIL(pc, "model '%s': \"feature_opts_dicts\" is a %s, expected an array of "
                     "objects", pc->src, type_name(a));
    n = json_object_array_length(a);
    if ((int)n > pc->m->nb_features)
        return PFAIL(pc, "model '%s': \"feature_opts_dicts\" has %zu entries for %d features",
                     pc->src, n, pc->m->nb_features);
    for (size_t i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(a, i);
        QgpuModelFeature *f = &pc->m->features[i];
        if (!json_object_is_type(d, json_type_object))
            return PFAIL(pc, "model '%s': \"feature_opts_dicts\"[%zu] is a %s, expected an "
                         "object", pc->src, i, type_name(d));
        json_object_object_foreach(d, key, val) {
            char buf[64];
            const char *text;
            int ret;
            if (json_object_is_type(val, json_type_boolean)) {
                text = json_object_get_boolean(val) ? "true" : "false";
            } else if (json_object_is_type(val, json_type_int)) {
                snprintf(buf, sizeof(buf), "%lld", (long long)json_object_get_int64(val));
                text = buf;
            } else if (json_object_is_type(val, json_type_double)) {
                format_double(buf, sizeof(buf), json_object_get_double(val));
                text = buf;
            } else if (json_object_is_type(val, json_type_string)) {
                /* libvmaf 3.2.0 rejects strings here; accepted for options
                 * such as speed_prescale_method, if a later model uses one */
                text = json_object_get_string(val);
                if (strpbrk(text, ":=") || !*text)
                    return PFAIL(pc, "model '%s': option %s of feature %s: bad value '%s'",
                                 pc->src, key, f->name, text);
            } else {
                return PFAIL(pc, "model '%s': option %s of feature %s is a %s, expected a "
                             "number or a boolean", pc->src, key, f->name, type_name(val));
            }
            if (strpbrk(key, ":=.") || !*key)
                return PFAIL(pc, "model '%s': bad option name '%s' for feature %s", pc->src,
                             key, f->name);
            ret = add_opt(f, key, text, 0);
            if (ret == QGPU_ERR_NO_MEMORY)
                return fail(pc->err, pc->err_len, ret, "model '%s': out of memory", pc->src);
            if (ret)
                return PFAIL(pc, "model '%s': too many options for feature %s", pc->src,
                             f->name);
        }
    }
    return 0;
}

static int parse_transform(ParseCtx *pc, json_object *t)
{
    QgpuModel *m = pc->m;
    static const char *const pkeys[3] = { "p0", "p1", "p2" };
    json_object *v;
    if (!json_object_is_type(t, json_type_object))
        return PFAIL(pc, "model '%s': \"score_transform\" is a %s, expected an object", pc->src,
                     type_name(t));
    if (json_object_object_get_ex(t, "enabled", &v)) {
        if (!json_object_is_type(v, json_type_boolean))
            return PFAIL(pc, "model '%s': \"score_transform\".\"enabled\" must be true or false",
                         pc->src);
        m->transform.enabled = json_object_get_boolean(v);
    }
    /* libvmaf: the flag turns the transform on when the file does not */
    if (pc->flags & QGPU_MODEL_ENABLE_TRANSFORM)
        m->transform.enabled = 1;
    /* libvmaf 3.x's VMAF_MODEL_FLAG_DISABLE_TRANSFORM: off whatever the file says */
    if (pc->flags & QGPU_MODEL_DISABLE_TRANSFORM)
        m->transform.enabled = 0;
    for (int k = 0; k < 3; k++) {
        if (!json_object_object_get_ex(t, pkeys[k], &v) || !v) /* absent or null: off */
            continue;
        if (!is_number(v))
            return PFAIL(pc, "model '%s': \"score_transform\".\"%s\" is a %s, expected a number",
                         pc->src, pkeys[k], type_name(v));
        m->transform.p_enabled[k] = 1;
        m->transform.p[k] = json_object_get_double(v);
    }
    if (json_object_object_get_ex(t, "knots", &v) && v) {
        size_t n;
        if (!json_object_is_type(v, json_type_array))
            return PFAIL(pc, "model '%s': \"knots\" must be an array of [x, y] pairs", pc->src);
        n = json_object_array_length(v);
        if (n > QGPU_MODEL_MAX_KNOTS || n < 2)
            return PFAIL(pc, "model '%s': \"knots\" has %zu points (2..%d)", pc->src, n,
                         QGPU_MODEL_MAX_KNOTS);
        for (size_t i = 0; i < n; i++) {
            json_object *p = json_object_array_get_idx(v, i);
            json_object *x, *y;
            if (!json_object_is_type(p, json_type_array) || json_object_array_length(p) != 2 ||
                !is_number(x = json_object_array_get_idx(p, 0)) ||
                !is_number(y = json_object_array_get_idx(p, 1)))
                return PFAIL(pc, "model '%s': \"knots\"[%zu] is not an [x, y] pair of numbers",
                             pc->src, i);
            m->transform.knot_x[i] = json_object_get_double(x);
            m->transform.knot_y[i] = json_object_get_double(y);
            /* libvmaf's piecewise_linear_mapping() gives up on knots that are
             * not increasing in x and non-decreasing in y: reject them here */
            if (i > 0 && !(m->transform.knot_x[i - 1] < m->transform.knot_x[i] &&
                           m->transform.knot_y[i - 1] <= m->transform.knot_y[i]))
                return PFAIL(pc, "model '%s': \"knots\" must increase in x and not decrease "
                             "in y (point %zu)", pc->src, i);
        }
        m->transform.nb_knots = (int)n;
    }
    for (int k = 0; k < 2; k++) {
        const char *key = k ? "out_gte_in" : "out_lte_in";
        if (json_object_object_get_ex(t, key, &v) && v) {
            if (!json_object_is_type(v, json_type_string))
                return PFAIL(pc, "model '%s': \"%s\" must be the string \"true\" or \"false\"",
                             pc->src, key);
            if (!strcmp(json_object_get_string(v), "true")) {
                if (k)
                    m->transform.out_gte_in = 1;
                else
                    m->transform.out_lte_in = 1;
            }
        }
    }
    return 0;
}

static int parse_model_dict(ParseCtx *pc, json_object *d)
{
    QgpuModel *m = pc->m;
    json_object *v, *names;
    const char *s;
    size_t n;
    int ret;

    if (!json_object_object_get_ex(d, "model_type", &v) ||
        !json_object_is_type(v, json_type_string))
        return PFAIL(pc, "model '%s': \"model_type\" is missing or not a string", pc->src);
    s = json_object_get_string(v);
    /* libvmaf's three types; a bootstrap model alone predicts as a plain SVM */
    if (!strcmp(s, "LIBSVMNUSVR"))
        m->type = QGPU_MODEL_TYPE_SVM;
    else if (!strcmp(s, "BOOTSTRAP_LIBSVMNUSVR"))
        m->type = QGPU_MODEL_TYPE_BOOTSTRAP;
    else if (!strcmp(s, "RESIDUEBOOTSTRAP_LIBSVMNUSVR"))
        m->type = QGPU_MODEL_TYPE_RESIDUE_BOOTSTRAP;
    else
        return PFAIL(pc, "model '%s': unknown model_type '%s' (LIBSVMNUSVR, "
                     "BOOTSTRAP_LIBSVMNUSVR or RESIDUEBOOTSTRAP_LIBSVMNUSVR)", pc->src, s);

    if (!json_object_object_get_ex(d, "norm_type", &v) ||
        !json_object_is_type(v, json_type_string))
        return PFAIL(pc, "model '%s': \"norm_type\" is missing or not a string", pc->src);
    s = json_object_get_string(v);
    if (!strcmp(s, "linear_rescale"))
        m->norm_type = QGPU_MODEL_NORM_LINEAR_RESCALE;
    else if (!strcmp(s, "none"))
        m->norm_type = QGPU_MODEL_NORM_NONE;
    else
        return PFAIL(pc, "model '%s': unknown norm_type '%s' (linear_rescale or none)", pc->src,
                     s);

    if (!json_object_object_get_ex(d, "feature_names", &names) ||
        !json_object_is_type(names, json_type_array))
        return PFAIL(pc, "model '%s': \"feature_names\" is missing or not an array", pc->src);
    n = json_object_array_length(names);
    if (n < 1 || n > QGPU_MODEL_MAX_FEATURES)
        return PFAIL(pc, "model '%s': %zu feature names (1..%d)", pc->src, n,
                     QGPU_MODEL_MAX_FEATURES);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(names, i);
        QgpuModelFeature *f = &m->features[i];
        const QgpuFeatureClass *cls;
        const QgpuFeatureOutput *output;
        if (!json_object_is_type(e, json_type_string))
            return PFAIL(pc, "model '%s': \"feature_names\"[%zu] is a %s, expected a string",
                         pc->src, i, type_name(e));
        f->name = qgpu_model_strdup(json_object_get_string(e));
        if (!f->name)
            return fail(pc->err, pc->err_len, QGPU_ERR_NO_MEMORY, "model '%s': out of memory",
                        pc->src);
        m->nb_features = (int)i + 1;
        /* libvmaf looks a model feature up in every extractor's provided
         * names and prints it through its alias table; a model may give
         * either name, and each feature class declares both */
        if (qgpu_feature_output_find(f->name, &cls, &output))
            return PFAIL(pc, "model '%s': unknown feature '%s' (feature_names[%zu]): no "
                         "extractor provides it", pc->src, f->name, i);
        f->extractor = cls->name;
        f->output = output->name;
        f->suffixed = !(output->flags & QGPU_OUTPUT_NO_SUFFIX);
        f->slope = 1.0;
        f->intercept = 0.0;
    }

    if (m->norm_type == QGPU_MODEL_NORM_LINEAR_RESCALE) {
        json_object *sl, *ic;
        if (!json_object_object_get_ex(d, "slopes", &sl) ||
            !json_object_object_get_ex(d, "intercepts", &ic))
            return PFAIL(pc, "model '%s': linear_rescale needs \"slopes\" and \"intercepts\"",
                         pc->src);
        ret = parse_number_array(pc, sl, "slopes", &m->slope, &m->features[0].slope,
                                 sizeof(QgpuModelFeature), m->nb_features + 1);
        if (!ret)
            ret = parse_number_array(pc, ic, "intercepts", &m->intercept,
                                     &m->features[0].intercept, sizeof(QgpuModelFeature),
                                     m->nb_features + 1);
        if (ret)
            return ret;
        if (m->slope == 0.0)
            return PFAIL(pc, "model '%s': slopes[0] is 0 (the score cannot be denormalised)",
                         pc->src);
    }

    if (json_object_object_get_ex(d, "feature_opts_dicts", &v) && v) {
        ret = parse_feature_opts(pc, v);
        if (ret)
            return ret;
    }

    if (json_object_object_get_ex(d, "score_clip", &v) && v) {
        json_object *lo, *hi;
        if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) != 2 ||
            !is_number(lo = json_object_array_get_idx(v, 0)) ||
            !is_number(hi = json_object_array_get_idx(v, 1)))
            return PFAIL(pc, "model '%s': \"score_clip\" must be [min, max]", pc->src);
        if (!(pc->flags & QGPU_MODEL_DISABLE_CLIP)) {
            m->clip_enabled = 1;
            m->clip_min = json_object_get_double(lo);
            m->clip_max = json_object_get_double(hi);
        }
    }

    if (json_object_object_get_ex(d, "score_transform", &v) && v) {
        ret = parse_transform(pc, v);
        if (ret)
            return ret;
    }

    if (json_object_object_get_ex(d, "chroma_correction_parameter", &v) && v) {
        if (!is_number(v))
            return PFAIL(pc, "model '%s': \"chroma_correction_parameter\" is a %s, expected a "
                         "number", pc->src, type_name(v));
        m->chroma_correction_parameter = json_object_get_double(v);
        m->chroma_correction = m->chroma_correction_parameter != 0.0;
    }

    if (!json_object_object_get_ex(d, "model", &v) || !json_object_is_type(v, json_type_string))
        return PFAIL(pc, "model '%s': \"model\" (the libsvm model text) is missing or not a "
                     "string", pc->src);
    {
        char msg[512];
        ret = qgpu_svm_parse(&m->svm, json_object_get_string(v),
                             (size_t)json_object_get_string_len(v), m->nb_features, msg,
                             sizeof(msg));
        if (ret)
            return fail(pc->err, pc->err_len, ret, "model '%s': %s", pc->src, msg);
    }
    return 0;
}

/* Line and column of a byte offset, for parse error messages. */
static void position(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* One model object ({"model_dict": {...}}) into a new model named `source`. */
static int parse_model_object(ParseCtx *pc, json_object *obj, const char *source,
                              QgpuModel **out)
{
    json_object *dict;
    int ret;
    *out = NULL;
    pc->src = source;
    pc->m = calloc(1, sizeof(*pc->m));
    if (!pc->m || !(pc->m->source = qgpu_model_strdup(source))) {
        free(pc->m);
        pc->m = NULL;
        return fail(pc->err, pc->err_len, QGPU_ERR_NO_MEMORY, "model '%s': out of memory",
                    source);
    }
    if (!json_object_object_get_ex(obj, "model_dict", &dict) ||
        !json_object_is_type(dict, json_type_object))
        ret = PFAIL(pc, "model '%s': no \"model_dict\" object: not a VMAF model", source);
    else
        ret = parse_model_dict(pc, dict);
    if (ret)
        qgpu_model_free(&pc->m);
    *out = pc->m;
    pc->m = NULL;
    return ret;
}

/* libvmaf's model collection (read_json_model.c): the root's keys "0", "1",
 * ... are whole models. "0" gives the main score; "1".."n" are the
 * bootstrap members, all of one bootstrap model_type. */
static int parse_collection(ParseCtx *pc, json_object *root, const char *source,
                            QgpuModelCollection **out)
{
    QgpuModelCollection *c = calloc(1, sizeof(*c));
    size_t src_len = strlen(source) + 16;
    char *src = malloc(src_len);
    int ret = 0;

    *out = NULL;
    if (!c || !src) {
        free(c);
        free(src);
        return fail(pc->err, pc->err_len, QGPU_ERR_NO_MEMORY, "model '%s': out of memory",
                    source);
    }
    for (int i = 0; !ret; i++) {
        char key[16];
        json_object *obj;
        snprintf(key, sizeof(key), "%d", i);
        if (!json_object_object_get_ex(root, key, &obj))
            break;
        if (i == QGPU_MODEL_MAX_COLLECTION) {
            ret = PFAIL(pc, "model '%s': a collection of more than %d models", source,
                        QGPU_MODEL_MAX_COLLECTION);
            break;
        }
        snprintf(src, src_len, "%s[%d]", source, i);
        if (!json_object_is_type(obj, json_type_object)) {
            ret = PFAIL(pc, "model '%s': a %s, expected a model object", src, type_name(obj));
            break;
        }
        ret = parse_model_object(pc, obj, src, &c->models[i]);
        if (ret)
            break;
        c->nb_models = i + 1;
        if (i > 0 && (c->models[i]->type == QGPU_MODEL_TYPE_SVM ||
                      c->models[i]->type != c->models[1]->type))
            ret = PFAIL(pc, "model '%s': a collection member must have a bootstrap "
                        "model_type, the same as member 1", src);
    }
    if (!ret && c->nb_models < 2)
        ret = PFAIL(pc, "model '%s': a model collection needs the models \"0\" and \"1\" "
                    "at least", source);
    free(src);
    if (ret)
        qgpu_model_collection_free(&c);
    *out = c;
    return ret;
}

int qgpu_model_parse_any(QgpuModel **model, QgpuModelCollection **collection, const char *json,
                         size_t len, const char *source, unsigned flags, char *err,
                         size_t err_len)
{
    ParseCtx pc = { NULL, source, flags, err, err_len };
    json_tokener *tok;
    json_object *root = NULL, *probe;
    enum json_tokener_error jerr;
    LocaleGuard lg;
    int ret;

    *model = NULL;
    if (collection)
        *collection = NULL;
    if (len > (size_t)0x7fffffff)
        return fail(err, err_len, QGPU_ERR_MODEL, "model '%s': too large", source);

    locale_enter(&lg);
    tok = json_tokener_new_ex(64);
    if (!tok) {
        ret = fail(err, err_len, QGPU_ERR_NO_MEMORY, "model '%s': out of memory", source);
        goto done;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    root = json_tokener_parse_ex(tok, json, (int)len);
    jerr = json_tokener_get_error(tok);
    if (jerr == json_tokener_continue || (!root && jerr == json_tokener_success)) {
        ret = PFAIL(&pc, "model '%s': malformed JSON: unexpected end of file", source);
        goto done;
    }
    if (jerr != json_tokener_success) {
        int line, col;
        position(json, json_tokener_get_parse_end(tok), &line, &col);
        ret = PFAIL(&pc, "model '%s': malformed JSON at line %d, column %d: %s", source, line,
                    col, json_tokener_error_desc(jerr));
        goto done;
    }
    /* json-c stops after the first value: anything but blanks after it */
    for (size_t i = json_tokener_get_parse_end(tok); i < len; i++) {
        if (!strchr(" \t\r\n", json[i])) {
            int line, col;
            position(json, i, &line, &col);
            ret = PFAIL(&pc, "model '%s': malformed JSON: unexpected data after the end at "
                        "line %d, column %d", source, line, col);
            goto done;
        }
    }
    if (!json_object_is_type(root, json_type_object)) {
        ret = PFAIL(&pc, "model '%s': the file is a JSON %s, expected an object with "
                    "\"model_dict\"", source, type_name(root));
        goto done;
    }
    if (!json_object_object_get_ex(root, "model_dict", &probe) &&
        json_object_object_get_ex(root, "0", &probe)) {
        if (collection)
            ret = parse_collection(&pc, root, source, collection);
        else
            ret = PFAIL(&pc, "model '%s': a model collection, where a single model is "
                        "expected", source);
        goto done;
    }
    ret = parse_model_object(&pc, root, source, model);

done:
    if (tok)
        json_tokener_free(tok);
    json_object_put(root);
    locale_leave(&lg);
    return ret;
}

int qgpu_model_parse(QgpuModel **out, const char *json, size_t len, const char *source,
                     unsigned flags, char *err, size_t err_len)
{
    return qgpu_model_parse_any(out, NULL, json, len, source, flags, err, err_len);
}

/* The whole file in *out (malloc'ed), its size in *out_len. */
static int read_model_file(const char *path, char **out, size_t *out_len, char *err,
                           size_t err_len)
{
    FILE *f;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int ret;

    *out = NULL;
    f = fopen(path, "rb");
    if (!f)
        return fail(err, err_len, QGPU_ERR_IO, "model '%s': cannot open: %s", path,
                    strerror(errno));
    for (;;) {
        size_t got;
        if (len == cap) {
            char *nb;
            if (cap >= MODEL_FILE_MAX) {
                fclose(f);
                free(buf);
                return fail(err, err_len, QGPU_ERR_MODEL,
                            "model '%s': larger than %u MiB, not a model", path,
                            MODEL_FILE_MAX >> 20);
            }
            cap = cap ? cap * 2 : 65536;
            nb = realloc(buf, cap);
            if (!nb) {
                fclose(f);
                free(buf);
                return fail(err, err_len, QGPU_ERR_NO_MEMORY, "model '%s': out of memory",
                            path);
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) {
                ret = fail(err, err_len, QGPU_ERR_IO, "model '%s': read error: %s", path,
                           strerror(errno));
                fclose(f);
                free(buf);
                return ret;
            }
            break;
        }
    }
    fclose(f);
    if (len == 0) {
        free(buf);
        return fail(err, err_len, QGPU_ERR_MODEL, "model '%s': the file is empty", path);
    }
    *out = buf;
    *out_len = len;
    return 0;
}

const char *qgpu_model_builtin(const char *version, size_t *len)
{
    const char *json = version ? qgpu_model_json(version) : NULL;
    if (json && len)
        *len = strlen(json);
    return json;
}

int qgpu_model_load_any(QgpuModel **model, QgpuModelCollection **collection,
                        const char *version, const char *path, unsigned flags, char *err,
                        size_t err_len)
{
    size_t len = 0;
    const char *json;
    char *buf = NULL;
    int ret;

    *model = NULL;
    if (collection)
        *collection = NULL;
    if (path) {
        ret = read_model_file(path, &buf, &len, err, err_len);
        if (ret)
            return ret;
        ret = qgpu_model_parse_any(model, collection, buf, len, path, flags, err, err_len);
        free(buf);
        return ret;
    }
    json = qgpu_model_builtin(version, &len);
    if (!json) {
        const char *const *names = qgpu_model_builtin_names();
        size_t n = (size_t)snprintf(err, err_len, "model: no built-in model '%s' (built in:",
                                    version);
        for (int i = 0; names[i] && n < err_len; i++)
            n += (size_t)snprintf(err + n, err_len - n, " %s", names[i]);
        if (n < err_len)
            snprintf(err + n, err_len - n, "; load others with path=FILE)");
        return QGPU_ERR_MODEL;
    }
    return qgpu_model_parse_any(model, collection, json, len, version, flags, err, err_len);
}

int qgpu_model_load_file(QgpuModel **out, const char *path, unsigned flags, char *err,
                         size_t err_len)
{
    return qgpu_model_load_any(out, NULL, NULL, path, flags, err, err_len);
}

int qgpu_model_load_builtin(QgpuModel **out, const char *version, unsigned flags, char *err,
                            size_t err_len)
{
    return qgpu_model_load_any(out, NULL, version, NULL, flags, err, err_len);
}

int qgpu_model_override(QgpuModel *m, const char *extractor, const char *key, const char *value)
{
    int count = 0;
    for (int i = 0; i < m->nb_features; i++) {
        QgpuModelFeature *f = &m->features[i];
        int ret;
        if (strcmp(f->extractor, extractor))
            continue;
        ret = add_opt(f, key, value, 1);
        if (ret)
            return ret;
        f->overridden = 1;
        count++;
    }
    return count;
}

char *qgpu_model_feature_options(const QgpuModelFeature *f)
{
    size_t len = 1;
    char *s;
    for (int i = 0; i < f->nb_opts; i++)
        len += strlen(f->opts[i].key) + strlen(f->opts[i].value) + 2;
    s = malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (int i = 0, n = 0; i < f->nb_opts; i++)
        n += snprintf(s + n, len - (size_t)n, "%s%s=%s", i ? ":" : "", f->opts[i].key,
                      f->opts[i].value);
    return s;
}

void qgpu_model_free(QgpuModel **pm)
{
    QgpuModel *m = pm ? *pm : NULL;
    if (!m)
        return;
    for (int i = 0; i < QGPU_MODEL_MAX_FEATURES; i++) {
        free(m->features[i].name);
        for (int k = 0; k < m->features[i].nb_opts; k++) {
            free(m->features[i].opts[k].key);
            free(m->features[i].opts[k].value);
        }
    }
    qgpu_svm_free(&m->svm);
    free(m->source);
    free(m);
    *pm = NULL;
}

void qgpu_model_collection_free(QgpuModelCollection **pc)
{
    QgpuModelCollection *c = pc ? *pc : NULL;
    if (!c)
        return;
    for (int i = 0; i < QGPU_MODEL_MAX_COLLECTION; i++)
        qgpu_model_free(&c->models[i]);
    free(c);
    *pc = NULL;
}

/* ---- prediction (libvmaf predict.c) --------------------------------------- */

static double normalize(const QgpuModel *m, const QgpuModelFeature *f, double v)
{
    return m->norm_type == QGPU_MODEL_NORM_LINEAR_RESCALE ? f->slope * v + f->intercept : v;
}

static double denormalize_feature(const QgpuModel *m, const QgpuModelFeature *f, double v)
{
    return m->norm_type == QGPU_MODEL_NORM_LINEAR_RESCALE ? (v - f->intercept) / f->slope : v;
}

/* VMAF v1 chroma correction (libvmaf's post_process_feature_from_another with
 * guiding "adm3", guided "speed_chroma", sentinel 0.0): when SpEED chroma is
 * exactly 0 (neutral chroma, or too little chroma for its statistics), its
 * input is replaced by the normalisation of c * (1 - adm3). libvmaf reads both
 * back from the normalised vector, so we do too. */
static void chroma_correct(const QgpuModel *m, double *x)
{
    int guiding = -1, guided = -1;
    double guiding_value = 0.0;
    for (int i = 0; i < m->nb_features; i++) {
        const QgpuModelFeature *f = &m->features[i];
        if (strstr(f->name, "adm3")) {
            guiding = i;
            guiding_value = denormalize_feature(m, f, x[i]);
        }
        if (strstr(f->name, "speed_chroma")) {
            if (denormalize_feature(m, f, x[i]) != 0.0)
                return;
            guided = i;
        }
    }
    if (guiding < 0 || guided < 0)
        return;
    x[guided] = normalize(m, &m->features[guided],
                          -m->chroma_correction_parameter * guiding_value +
                              m->chroma_correction_parameter);
}

/* Line through two knots (libvmaf's find_linear_function_parameters; knots
 * were validated at load: p1.x < p2.x, p1.y <= p2.y). */
static void knot_line(double x1, double y1, double x2, double y2, double *a, double *b)
{
    if (x1 == 0.0) {
        *b = y1;
        *a = (y2 - *b) / x2;
    } else {
        *a = (y2 - y1) / (x2 - x1);
        *b = y1 - x1 * *a;
    }
}

/* libvmaf's piecewise_linear_mapping(): the segment containing x, the
 * first/last segment extended below/above the knots. */
static double piecewise(const QgpuModel *m, double x)
{
    const int n = m->transform.nb_knots;
    const double *kx = m->transform.knot_x, *ky = m->transform.knot_y;
    double y = 0.0;
    for (int i = 0; i < n - 1; i++) {
        int inside = kx[i] <= x && x <= kx[i + 1];
        int below = i == 0 && x < kx[i];
        int above = i == n - 2 && x > kx[i + 1];
        if (ky[i] == ky[i + 1]) {
            if (inside || below || above)
                y = ky[i];
        } else {
            double a, b;
            knot_line(kx[i], ky[i], kx[i + 1], ky[i + 1], &a, &b);
            if (inside || below || above)
                y = a * x + b;
        }
    }
    return y;
}

static double transform(const QgpuModel *m, double y)
{
    double out = y;
    const int *pe = m->transform.p_enabled;
    const double *p = m->transform.p;
    if (pe[0] || pe[1] || pe[2]) {
        out = 0.0;
        if (pe[0])
            out += p[0];
        if (pe[1])
            out += p[1] * y;
        if (pe[2])
            out += p[2] * y * y;
    }
    if (m->transform.nb_knots)
        out = piecewise(m, out);
    /* rectification compares with the transform's input y, the score before
     * the polynomial: libvmaf 3.x predict.c transform() (*y_in), as Netflix's
     * Python VmafQualityRunner.transform_score() (np.maximum(y_out, y_in)) */
    if (m->transform.out_lte_in && out > y)
        out = y;
    if (m->transform.out_gte_in && out < y)
        out = y;
    return out;
}

double qgpu_model_transform(const QgpuModel *m, double y)
{
    return m->transform.enabled ? transform(m, y) : y;
}

double qgpu_model_predict_raw(const QgpuModel *m, const double *raw)
{
    double x[SVM_MAX_DIM_STACK];
    double *xs = x, y;
    if (m->svm.dim > SVM_MAX_DIM_STACK) {
        xs = calloc((size_t)m->svm.dim, sizeof(*xs));
        if (!xs)
            return NAN;
    } else {
        memset(x, 0, sizeof(x));
    }
    for (int i = 0; i < m->nb_features; i++)
        xs[i] = normalize(m, &m->features[i], raw[i]);
    if (m->chroma_correction)
        chroma_correct(m, xs);
    y = qgpu_svm_predict(&m->svm, xs);
    if (xs != x)
        free(xs);
    if (m->norm_type == QGPU_MODEL_NORM_LINEAR_RESCALE)
        y = (y - m->intercept) / m->slope;
    return y;
}

double qgpu_model_finish(const QgpuModel *m, double y)
{
    y = qgpu_model_transform(m, y);
    if (m->clip_enabled) {
        y = y < m->clip_min ? m->clip_min : y;
        y = y > m->clip_max ? m->clip_max : y;
    }
    return y;
}

double qgpu_model_predict(const QgpuModel *m, const double *raw)
{
    return qgpu_model_finish(m, qgpu_model_predict_raw(m, raw));
}
