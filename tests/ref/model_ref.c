#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_ref.h"

static int numbers(json_object *dict, const char *key, double *first, double *rest, int n)
{
    json_object *a;
    if (!json_object_object_get_ex(dict, key, &a) || json_object_array_length(a) != (size_t)n + 1)
        return -1;
    *first = json_object_get_double(json_object_array_get_idx(a, 0));
    for (int i = 0; i < n; i++)
        rest[i] = json_object_get_double(json_object_array_get_idx(a, (size_t)i + 1));
    return 0;
}

static int load_transform(ModelRef *m, json_object *t, int enable_transform)
{
    static const char *const keys[3] = {"p0", "p1", "p2"};
    json_object *v;
    m->transform = enable_transform;
    if (json_object_object_get_ex(t, "enabled", &v) && json_object_get_boolean(v))
        m->transform = 1;
    for (int k = 0; k < 3; k++)
        if (json_object_object_get_ex(t, keys[k], &v) && v) {
            m->has_p[k] = 1;
            m->p[k] = json_object_get_double(v);
        }
    m->out_gte_in = json_object_object_get_ex(t, "out_gte_in", &v) &&
                    !strcmp(json_object_get_string(v), "true");
    m->out_lte_in = json_object_object_get_ex(t, "out_lte_in", &v) &&
                    !strcmp(json_object_get_string(v), "true");
    return json_object_object_get_ex(t, "knots", &v) && v ? -1 : 0;
}

/* libsvm's text: "key value" lines, "SV", then "coef i:v i:v ..." lines. */
static int load_svm(ModelRef *m, const char *text)
{
    char *copy = strdup(text), *save = NULL, *line;
    int in_sv = 0, k = 0, entries = 0, cap = 0;
    if (!copy)
        return -1;
    for (const char *c = text; *c; c++)
        cap += *c == ':';
    for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *tok, *s2 = NULL;
        if (!in_sv) {
            if (!strncmp(line, "gamma ", 6))
                m->gamma = strtod(line + 6, NULL);
            else if (!strncmp(line, "rho ", 4))
                m->rho = strtod(line + 4, NULL);
            else if (!strncmp(line, "total_sv ", 9))
                m->nb_sv = atoi(line + 9);
            else if (!strcmp(line, "SV")) {
                in_sv = 1;
                m->coef = calloc((size_t)m->nb_sv, sizeof(*m->coef));
                m->first = calloc((size_t)m->nb_sv + 1, sizeof(*m->first));
                m->index = calloc((size_t)cap + 1, sizeof(*m->index));
                m->value = calloc((size_t)cap + 1, sizeof(*m->value));
                if (!m->coef || !m->first || !m->index || !m->value)
                    break;
            }
            continue;
        }
        if (k >= m->nb_sv)
            break;
        tok = strtok_r(line, " ", &s2);
        m->coef[k] = strtod(tok, NULL);
        m->first[k] = entries;
        while ((tok = strtok_r(NULL, " ", &s2))) {
            char *colon = strchr(tok, ':');
            if (!colon)
                continue;
            m->index[entries] = atoi(tok);
            m->value[entries] = strtod(colon + 1, NULL);
            entries++;
        }
        k++;
    }
    free(copy);
    if (!in_sv || k != m->nb_sv || !m->first)
        return -1;
    m->first[k] = entries;
    return 0;
}

int model_ref_load(ModelRef *m, json_object *model_obj, int enable_transform, int disable_clip)
{
    json_object *d, *v;
    memset(m, 0, sizeof(*m));
    if (!json_object_object_get_ex(model_obj, "model_dict", &d) ||
        !json_object_object_get_ex(d, "feature_names", &v))
        goto fail;
    m->nb_features = (int)json_object_array_length(v);
    if (m->nb_features > MODEL_REF_MAX_FEATURES)
        goto fail;
    m->linear_rescale = json_object_object_get_ex(d, "norm_type", &v) &&
                        !strcmp(json_object_get_string(v), "linear_rescale");
    if (m->linear_rescale &&
        (numbers(d, "slopes", &m->out_slope, m->slope, m->nb_features) ||
         numbers(d, "intercepts", &m->out_intercept, m->intercept, m->nb_features)))
        goto fail;
    if (!disable_clip && json_object_object_get_ex(d, "score_clip", &v) && v) {
        m->clip = 1;
        m->clip_lo = json_object_get_double(json_object_array_get_idx(v, 0));
        m->clip_hi = json_object_get_double(json_object_array_get_idx(v, 1));
    }
    if (json_object_object_get_ex(d, "score_transform", &v) && v &&
        load_transform(m, v, enable_transform))
        goto fail;
    if (json_object_object_get_ex(d, "chroma_correction_parameter", &v) &&
        json_object_get_double(v) != 0.0)
        goto fail;
    if (!json_object_object_get_ex(d, "model", &v) || load_svm(m, json_object_get_string(v)))
        goto fail;
    return 0;
fail:
    fprintf(stderr, "model_ref: a model this reference does not handle\n");
    model_ref_free(m);
    return -1;
}

void model_ref_free(ModelRef *m)
{
    free(m->coef);
    free(m->first);
    free(m->index);
    free(m->value);
    memset(m, 0, sizeof(*m));
}

/* libsvm's RBF kernel over two sparse vectors with increasing indices; x is
 * the (complete) feature vector 1..n. */
static double rbf(const ModelRef *m, const double *x, int k)
{
    double sum = 0.0;
    int i = 0, e = m->first[k];
    const int n = m->nb_features, end = m->first[k + 1];
    while (i < n && e < end) {
        if (i + 1 == m->index[e]) {
            double d = x[i] - m->value[e];
            sum += d * d;
            i++;
            e++;
        } else if (i + 1 > m->index[e]) {
            sum += m->value[e] * m->value[e];
            e++;
        } else {
            sum += x[i] * x[i];
            i++;
        }
    }
    for (; i < n; i++)
        sum += x[i] * x[i];
    for (; e < end; e++)
        sum += m->value[e] * m->value[e];
    return exp(-m->gamma * sum);
}

double model_ref_svm(const ModelRef *m, const double *features)
{
    double x[MODEL_REF_MAX_FEATURES], y = 0.0;
    for (int i = 0; i < m->nb_features; i++)
        x[i] = m->linear_rescale ? m->slope[i] * features[i] + m->intercept[i] : features[i];
    for (int k = 0; k < m->nb_sv; k++)
        y += m->coef[k] * rbf(m, x, k);
    y -= m->rho;
    return m->linear_rescale ? (y - m->out_intercept) / m->out_slope : y;
}

double model_ref_post(const ModelRef *m, double y)
{
    if (m->transform && (m->has_p[0] || m->has_p[1] || m->has_p[2])) {
        double t = 0.0;
        if (m->has_p[0])
            t += m->p[0];
        if (m->has_p[1])
            t += m->p[1] * y;
        if (m->has_p[2])
            t += m->p[2] * y * y;
        /* no knots: the rectification compares with the polynomial's input */
        if (m->out_gte_in && t < y)
            t = y;
        if (m->out_lte_in && t > y)
            t = y;
        y = t;
    }
    if (m->clip)
        y = y < m->clip_lo ? m->clip_lo : y > m->clip_hi ? m->clip_hi : y;
    return y;
}

void model_ref_bootstrap(const ModelRef *first, const double *raw, int n, double out[4])
{
    double *s = malloc((size_t)n * sizeof(*s));
    double mean = 0.0, var = 0.0, pos[2] = {2.5 * (n - 1) / 100.0, 97.5 * (n - 1) / 100.0};
    double ci[2], up, down;
    if (!s) {
        out[0] = out[1] = out[2] = out[3] = NAN;
        return;
    }
    for (int i = 0; i < n; i++)
        mean += raw[i];
    mean /= n;
    for (int i = 0; i < n; i++)
        var += (raw[i] - mean) * (raw[i] - mean);
    /* insertion sort, ascending */
    for (int i = 0; i < n; i++) {
        int j = i;
        for (; j > 0 && s[j - 1] > raw[i]; j--)
            s[j] = s[j - 1];
        s[j] = raw[i];
    }
    for (int c = 0; c < 2; c++) {
        double lo = floor(pos[c]), hi = ceil(pos[c]);
        ci[c] = lo == hi ? s[(int)lo] : s[(int)lo] * (hi - pos[c]) + s[(int)hi] * (pos[c] - lo);
    }
    up = model_ref_post(first, mean + 0.01);
    down = model_ref_post(first, mean - 0.01);
    out[0] = model_ref_post(first, mean);
    out[1] = sqrt(var / n) * ((up - down) / 0.02);
    out[2] = model_ref_post(first, ci[0]);
    out[3] = model_ref_post(first, ci[1]);
    free(s);
}
