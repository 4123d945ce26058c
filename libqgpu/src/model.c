/*
 * VMAF models (see model.h): JSON model files through json-c, the mapping of
 * libvmaf's model feature names to our extractors (through the names each
 * feature class declares, feature.h), per-frame prediction, and
 * qgpu_use_model(), which wires a model into a context as a frame hook.
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

static char *dup_str(const char *s)
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
            v = dup_str(value);
            if (!v)
                return QGPU_ERR_NO_MEMORY;
            free(f->opts[i].value);
            f->opts[i].value = v;
            return 0;
        }
    }
    if (f->nb_opts >= QGPU_MODEL_MAX_OPTS)
        return QGPU_ERR_BAD_OPTION;
    f->opts[f->nb_opts].key = dup_str(key);
    f->opts[f->nb_opts].value = dup_str(value);
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
    if (!strcmp(s, "BOOTSTRAP_LIBSVMNUSVR") || !strcmp(s, "RESIDUEBOOTSTRAP_LIBSVMNUSVR"))
        return PFAIL(pc, "model '%s': model_type %s (bootstrap model collections) is not "
                     "supported", pc->src, s);
    if (strcmp(s, "LIBSVMNUSVR"))
        return PFAIL(pc, "model '%s': unknown model_type '%s' (expected LIBSVMNUSVR)", pc->src,
                     s);

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
        f->name = dup_str(json_object_get_string(e));
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

int qgpu_model_parse(QgpuModel **out, const char *json, size_t len, const char *source,
                     unsigned flags, char *err, size_t err_len)
{
    ParseCtx pc = { NULL, source, flags, err, err_len };
    json_tokener *tok;
    json_object *root = NULL, *dict;
    enum json_tokener_error jerr;
    LocaleGuard lg;
    int ret;

    *out = NULL;
    if (len > (size_t)0x7fffffff)
        return fail(err, err_len, QGPU_ERR_MODEL, "model '%s': too large", source);
    pc.m = calloc(1, sizeof(*pc.m));
    if (!pc.m || !(pc.m->source = dup_str(source))) {
        free(pc.m);
        return fail(err, err_len, QGPU_ERR_NO_MEMORY, "model '%s': out of memory", source);
    }

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
    if (!json_object_object_get_ex(root, "model_dict", &dict) ||
        !json_object_is_type(dict, json_type_object)) {
        if (json_object_object_get_ex(root, "0", &dict))
            ret = PFAIL(&pc, "model '%s': model collections are not supported", source);
        else
            ret = PFAIL(&pc, "model '%s': no \"model_dict\" object: not a VMAF model", source);
        goto done;
    }
    ret = parse_model_dict(&pc, dict);

done:
    if (tok)
        json_tokener_free(tok);
    json_object_put(root);
    locale_leave(&lg);
    if (ret)
        qgpu_model_free(&pc.m);
    *out = pc.m;
    return ret;
}

int qgpu_model_load_file(QgpuModel **out, const char *path, unsigned flags, char *err,
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
    ret = qgpu_model_parse(out, buf, len, path, flags, err, err_len);
    free(buf);
    return ret;
}

const char *qgpu_model_builtin(const char *version, size_t *len)
{
    const char *json = version ? qgpu_model_json(version) : NULL;
    if (json && len)
        *len = strlen(json);
    return json;
}

int qgpu_model_load_builtin(QgpuModel **out, const char *version, unsigned flags, char *err,
                            size_t err_len)
{
    size_t len = 0;
    const char *json = qgpu_model_builtin(version, &len);
    *out = NULL;
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
    return qgpu_model_parse(out, json, len, version, flags, err, err_len);
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
    double out = y, stage;
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

double qgpu_model_predict(const QgpuModel *m, const double *raw)
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
    y = qgpu_model_transform(m, y);
    if (m->clip_enabled) {
        y = y < m->clip_min ? m->clip_min : y;
        y = y > m->clip_max ? m->clip_max : y;
    }
    return y;
}

/* ---- qgpu_use_model(): a model in a context --------------------------------
 * The model enables the extractors its features come from (with the model's
 * options; the context shares an extractor between models when the options
 * are the same) and adds a frame hook that computes the score from the
 * features' scores when a frame becomes final. */

typedef struct ModelHook {
    QgpuModel *model;
    char *name;                               /* score name: "vmaf" or name= */
    char *inputs[QGPU_MODEL_MAX_FEATURES];    /* printed input names, suffix included */
    int ids[QGPU_MODEL_MAX_FEATURES];
    int score_id;
} ModelHook;

static void hook_free(void *opaque)
{
    ModelHook *h = opaque;
    if (!h)
        return;
    for (int i = 0; i < QGPU_MODEL_MAX_FEATURES; i++)
        free(h->inputs[i]);
    qgpu_model_free(&h->model);
    free(h->name);
    free(h);
}

static int hook_init(void *opaque, QgpuContext *ctx, const QgpuVideoFormat *fmt)
{
    ModelHook *h = opaque;
    (void)fmt;
    for (int i = 0; i < h->model->nb_features; i++) {
        h->ids[i] = qgpu_score_find(ctx, h->inputs[i]);
        if (h->ids[i] < 0)
            return qgpu_error(ctx, QGPU_ERR_MODEL,
                              "model '%s': its feature %s ('%s' from extractor %s) is not "
                              "produced", h->model->source, h->model->features[i].name,
                              h->inputs[i], h->model->features[i].extractor);
    }
    h->score_id = qgpu_score_register(ctx, h->name);
    return h->score_id < 0 ? h->score_id : 0;
}

static int hook_run(void *opaque, QgpuContext *ctx, unsigned frame_index)
{
    ModelHook *h = opaque;
    double raw[QGPU_MODEL_MAX_FEATURES];
    for (int i = 0; i < h->model->nb_features; i++)
        raw[i] = qgpu_score_value(ctx, h->ids[i], frame_index);
    return qgpu_score_set(ctx, h->score_id, frame_index, qgpu_model_predict(h->model, raw));
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
    unsigned flags;
    struct { char *extractor, *key, *value; } overrides[64];
    int nb_overrides;
} ModelSpec;

static int spec_parse(QgpuContext *ctx, const char *spec, ModelSpec *s)
{
    char *save = NULL;
    memset(s, 0, sizeof(*s));
    s->copy = dup_str(spec ? spec : "");
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
        } else if (!strcmp(item, "enable_transform") || !strcmp(item, "disable_clip")) {
            unsigned flag = item[0] == 'e' ? QGPU_MODEL_ENABLE_TRANSFORM
                                           : QGPU_MODEL_DISABLE_CLIP;
            if (parse_bool(val, &on))
                return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                                  "model: %s: '%s' is not true/false", item, val);
            s->flags = on ? s->flags | flag : s->flags & ~flag;
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
                              "bitdepth=, enable_transform, disable_clip, "
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

int qgpu_use_model(QgpuContext *ctx, const char *spec)
{
    ModelSpec s;
    ModelHook *h = NULL;
    char msg[1024] = "";
    char *opts[QGPU_MODEL_MAX_FEATURES] = { NULL };
    QgpuFrameHook hook;
    int err;

    if (!ctx)
        return QGPU_ERR_INVALID_ARG;
    if (ctx->started)
        return qgpu_error(ctx, QGPU_ERR_STATE, "models must be added before the first submit");
    err = spec_parse(ctx, spec, &s);
    if (err)
        goto fail;
    for (int i = 0; i < ctx->nb_hooks; i++) {
        if (ctx->hooks[i].run == hook_run &&
            !strcmp(((const ModelHook *)ctx->hooks[i].opaque)->name, s.name)) {
            err = qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                             "model: a model named '%s' is already in use; give each model a "
                             "unique name=", s.name);
            goto fail;
        }
    }

    h = calloc(1, sizeof(*h));
    if (!h || !(h->name = dup_str(s.name))) {
        err = qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    err = s.path ? qgpu_model_load_file(&h->model, s.path, s.flags, msg, sizeof(msg))
                 : qgpu_model_load_builtin(&h->model, s.version, s.flags, msg, sizeof(msg));
    if (err) {
        err = qgpu_error(ctx, err, "%s", msg);
        goto fail;
    }
    for (int k = 0; k < s.nb_overrides; k++) {
        int n = qgpu_model_override(h->model, s.overrides[k].extractor, s.overrides[k].key,
                                    s.overrides[k].value);
        if (n < 0) {
            err = qgpu_error(ctx, n, "model '%s': cannot apply %s.%s", h->model->source,
                             s.overrides[k].extractor, s.overrides[k].key);
            goto fail;
        }
        if (n == 0) /* libvmaf ignores these silently */
            qgpu_log(ctx, QGPU_LOG_WARNING,
                     "model '%s': no feature of the model comes from '%s'; %s.%s ignored",
                     h->model->source, s.overrides[k].extractor, s.overrides[k].extractor,
                     s.overrides[k].key);
    }
    /* check every feature before enabling any, so a failure changes nothing */
    for (int i = 0; i < h->model->nb_features; i++) {
        err = input_name(ctx, h->model, &h->model->features[i], &h->inputs[i], &opts[i]);
        if (err)
            goto fail;
    }
    if (s.bitdepth) {
        err = qgpu_set_compute_bitdepth(ctx, s.bitdepth);
        if (err)
            goto fail;
    }
    for (int i = 0; i < h->model->nb_features; i++) {
        const char *ext = h->model->features[i].extractor;
        char *fspec = malloc(strlen(ext) + strlen(opts[i]) + 2);
        if (!fspec) {
            err = qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
            goto fail;
        }
        strcpy(fspec, ext);
        if (*opts[i]) {
            strcat(fspec, "=");
            strcat(fspec, opts[i]);
        }
        err = qgpu_enable_feature(ctx, fspec); /* same spec twice: one instance */
        free(fspec);
        if (err)
            goto fail;
    }
    for (int i = 0; i < QGPU_MODEL_MAX_FEATURES; i++)
        free(opts[i]);
    free(s.copy);
    hook.init = hook_init;
    hook.run = hook_run;
    hook.free = hook_free;
    hook.opaque = h;
    return qgpu_frame_hook_add(ctx, &hook); /* owns h from here, also on failure */

fail:
    for (int i = 0; i < QGPU_MODEL_MAX_FEATURES; i++)
        free(opts[i]);
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
