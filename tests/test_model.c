/* VMAF models: loading (built-in and files), the libsvm predictor against
 * libvmaf's own per-frame scores (fate goldens, no GPU feature involved),
 * the transform/clip/chroma-correction paths on hand-made models, the
 * model loader's errors, and qgpu_use_model() through the pipeline. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json.h>

#include "internal.h"
#include "model.h"
#include "test_util.h"

/* ---- helpers ------------------------------------------------------------- */

static char tmp_dir[] = "/tmp/qgpu-test-model-XXXXXX";

static const char *write_tmp(const char *name, const char *text)
{
    static char path[512];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
    f = fopen(path, "wb");
    if (!CHECK(f != NULL, "cannot write %s", path))
        return path;
    fputs(text, f);
    fclose(f);
    return path;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Replaces the first occurrence of `from` in s (malloc'ed result). */
static char *replace(const char *s, const char *from, const char *to)
{
    const char *p = strstr(s, from);
    char *out;
    if (!p)
        return NULL;
    out = malloc(strlen(s) - strlen(from) + strlen(to) + 1);
    memcpy(out, s, (size_t)(p - s));
    strcpy(out + (p - s), to);
    strcat(out, p + strlen(from));
    return out;
}

/* ---- built-in models --------------------------------------------------- */

static void test_builtins(void)
{
    char err[1024];
    QgpuModel *m = NULL;
    const char *const *names = qgpu_model_builtin_names();
    int n = 0;
    static const char *const v061_ext[6] = {"adm", "motion", "vif", "vif", "vif", "vif"};
    static const char *const v061_out[6] = {"integer_adm2", "integer_motion2",
                                            "integer_vif_scale0", "integer_vif_scale1",
                                            "integer_vif_scale2", "integer_vif_scale3"};

    for (; names[n]; n++) {
        /* the bootstrap models (_b_ in the name) are collections of 21 */
        int boot = strstr(names[n], "_b_v") != NULL;
        QgpuModelCollection *c = NULL;
        int ret = qgpu_model_load_any(&m, &c, names[n], NULL, 0, err, sizeof(err));
        CHECK(ret == 0 && (boot ? c && !m && c->nb_models == 21 : m && !c), "built-in %s: %s",
              names[n], err);
        CHECK(!strcmp(qgpu_model_name(n), names[n]), "qgpu_model_name(%d)", n);
        qgpu_model_free(&m);
        qgpu_model_collection_free(&c);
    }
    CHECK(qgpu_model_name(n) == NULL, "qgpu_model_name past the end");
    CHECK(n >= 4, "%d built-in models", n);

    if (CHECK(qgpu_model_load_builtin(&m, "vmaf_v0.6.1", 0, err, sizeof(err)) == 0, "%s", err)) {
        CHECK(m->nb_features == 6, "vmaf_v0.6.1: %d features", m->nb_features);
        for (int i = 0; i < 6 && i < m->nb_features; i++) {
            CHECK(!strcmp(m->features[i].extractor, v061_ext[i]) &&
                      !strcmp(m->features[i].output, v061_out[i]) && m->features[i].nb_opts == 0,
                  "vmaf_v0.6.1 feature %d: %s %s", i, m->features[i].extractor,
                  m->features[i].output);
        }
        CHECK(m->svm.nb_sv == 211 && m->svm.gamma == 0.04 && m->svm.rho == -1.33133 &&
                  m->svm.dim == 6,
              "vmaf_v0.6.1 svm: %d SVs gamma %g rho %g dim %d", m->svm.nb_sv, m->svm.gamma,
              m->svm.rho, m->svm.dim);
        CHECK(m->norm_type == QGPU_MODEL_NORM_LINEAR_RESCALE &&
                  m->slope == 0.012020766332648465 && m->intercept == -0.3092981927591963 &&
                  m->features[5].slope == 2.08656468286432,
              "vmaf_v0.6.1 slopes/intercepts");
        /* libvmaf: the transform block is read but off unless enabled */
        CHECK(!m->transform.enabled && m->transform.p[0] == 1.70674692 &&
                  m->transform.out_gte_in,
              "vmaf_v0.6.1 transform off by default");
        CHECK(m->clip_enabled && m->clip_min == 0.0 && m->clip_max == 100.0, "vmaf_v0.6.1 clip");
        CHECK(!m->chroma_correction, "vmaf_v0.6.1 has no chroma correction");
        qgpu_model_free(&m);
    }
    if (CHECK(qgpu_model_load_builtin(&m, "vmaf_v0.6.1",
                                      QGPU_MODEL_ENABLE_TRANSFORM | QGPU_MODEL_DISABLE_CLIP, err,
                                      sizeof(err)) == 0, "%s", err)) {
        CHECK(m->transform.enabled && !m->clip_enabled, "enable_transform / disable_clip flags");
        qgpu_model_free(&m);
    }
    if (CHECK(qgpu_model_load_builtin(&m, "vmaf_v0.6.1neg", 0, err, sizeof(err)) == 0, "%s",
              err)) {
        char *o0 = qgpu_model_feature_options(&m->features[0]);
        char *o1 = qgpu_model_feature_options(&m->features[1]);
        char *o2 = qgpu_model_feature_options(&m->features[2]);
        CHECK(!strcmp(o0, "adm_enhn_gain_limit=1") && !strcmp(o1, "") &&
                  !strcmp(o2, "vif_enhn_gain_limit=1"),
              "vmaf_v0.6.1neg options: '%s' '%s' '%s'", o0, o1, o2);
        free(o0);
        free(o1);
        free(o2);
        qgpu_model_free(&m);
    }
    if (CHECK(qgpu_model_load_builtin(&m, "vmaf_4k_v0.6.1", 0, err, sizeof(err)) == 0, "%s",
              err)) {
        CHECK(m->svm.nb_sv == 262 && m->svm.rho == -2.30449, "vmaf_4k_v0.6.1 svm");
        qgpu_model_free(&m);
    }
    if (qgpu_model_builtin("vmaf_v1.0.16_3d0h", NULL) &&
        CHECK(qgpu_model_load_builtin(&m, "vmaf_v1.0.16_3d0h", 0, err, sizeof(err)) == 0, "%s",
              err)) {
        char *o = qgpu_model_feature_options(&m->features[2]);
        CHECK(m->transform.enabled && m->chroma_correction &&
                  m->chroma_correction_parameter == 120.0,
              "v1: transform enabled by the file, chroma correction 120");
        CHECK(!strcmp(m->features[0].extractor, "cambi") &&
                  !strcmp(m->features[1].output, "speed_chroma_uv") &&
                  !strcmp(m->features[3].output, "integer_motion3"),
              "v1 features");
        /* JSON key order of feature_opts_dicts[2]; numbers in shortest form */
        CHECK(o && !strcmp(o, "adm_dlm_weight=0.7:adm_enhn_gain_limit=1:adm_noise_weight=0.02:"
                              "adm_norm_view_dist=3:adm_ref_display_height=1080:adm_min_val=0.5:"
                              "adm_csf_mode=2"),
              "v1 adm options: %s", o);
        free(o);
        qgpu_model_free(&m);
    }
}

/* ---- prediction vs libvmaf's logged scores -------------------------------- */

typedef struct GoldenKind {
    const char *suffix;  /* <pair>.<suffix>.json */
    const char *model;
    unsigned flags;
} GoldenKind;

static const GoldenKind golden_kinds[] = {
    {"vmaf", "vmaf_v0.6.1", 0},
    {"vmaf_neg", "vmaf_v0.6.1neg", 0},
    {"vmaf_4k", "vmaf_4k_v0.6.1", 0},
    {"vmaf_float", "vmaf_float_v0.6.1", 0},
    {"vmaf_v1", "vmaf_v1.0.16_3d0h", 0},
    {"vmaf_v1_10bit", "vmaf_v1.0.16_3d0h", 0},
    {"vmaf_v1_10bit_enc", "vmaf_v1.0.16_3d0h", 0},
    {"vmaf_v1_5d0h", "vmaf_v1.0.16_5d0h", 0},
    {"vmaf_v1_1d5h_2160", "vmaf_v1.0.16_1d5h_2160", 0},
    {"vmaf_v1_3d0h_2160", "vmaf_v1.0.16_3d0h_2160", 0},
    {"vmaf_v1_hfr_3d0h", "vmaf_v1.0.16_hfr_3d0h", 0},
    {"vmaf_v1_noclip", "vmaf_v1.0.16_3d0h", QGPU_MODEL_DISABLE_CLIP},
};

/* The logged value of a model input: the printed base name, or the base
 * name plus libvmaf's option suffix (the one key starting "<base>_"). */
static json_object *find_input(json_object *metrics, const char *base)
{
    json_object *v = NULL, *found = NULL;
    size_t n = strlen(base);
    int count = 0;
    if (json_object_object_get_ex(metrics, base, &v))
        return v;
    json_object_object_foreach(metrics, key, val) {
        if (!strncmp(key, base, n) && key[n] == '_') {
            found = val;
            count++;
        }
    }
    return count == 1 ? found : NULL;
}

/* Half a unit in the last printed place of a logged number (libvmaf prints
 * %.6f, or %.16f for values with more than 6 leading fractional zeros);
 * an exact 0 is taken as exact (libvmaf prints tiny values in full). */
static double half_ulp(json_object *v)
{
    const char *s = json_object_get_string(v);
    const char *dot = strchr(s, '.');
    int digits = 0;
    if (json_object_get_double(v) == 0.0)
        return 0.0;
    if (dot)
        while (dot[1 + digits] >= '0' && dot[1 + digits] <= '9')
            digits++;
    return 0.5 * pow(10.0, -digits);
}

typedef struct Stats {
    int frames;
    int misses;
    double max_diff;
    double max_bound;
} Stats;

/* Checks every frame of one golden log. With `expect_miss`, counts the
 * frames outside the bound instead of failing on them. */
static void check_golden(const char *path, const QgpuModel *m, Stats *st, int expect_miss)
{
    json_object *root = json_object_from_file(path), *frames;
    size_t nb;
    if (!CHECK(root != NULL, "cannot read %s", path))
        return;
    if (!CHECK(json_object_object_get_ex(root, "frames", &frames), "%s: no frames", path)) {
        json_object_put(root);
        return;
    }
    nb = json_object_array_length(frames);
    for (size_t i = 0; i < nb; i++) {
        json_object *fr = json_object_array_get_idx(frames, i), *metrics, *vmaf;
        double raw[QGPU_MODEL_MAX_FEATURES], h[QGPU_MODEL_MAX_FEATURES];
        double pred, dev = 0.0, bound, diff;
        int ok = 1;
        if (!json_object_object_get_ex(fr, "metrics", &metrics) ||
            !json_object_object_get_ex(metrics, "vmaf", &vmaf) ||
            !json_object_is_type(vmaf, json_type_double)) {
            CHECK(0, "%s frame %zu: no vmaf", path, i);
            continue;
        }
        for (int k = 0; k < m->nb_features; k++) {
            json_object *v = find_input(metrics, m->features[k].output);
            if (!v || !(json_object_is_type(v, json_type_double) ||
                        json_object_is_type(v, json_type_int))) {
                ok = CHECK(0, "%s frame %zu: no input %s", path, i, m->features[k].output);
                break;
            }
            raw[k] = json_object_get_double(v);
            h[k] = half_ulp(v);
        }
        if (!ok)
            continue;
        pred = qgpu_model_predict(m, raw);
        /* The logged inputs are libvmaf's values rounded to h[k]; the
         * predictor is smooth at that scale, so the true libvmaf score lies
         * within the range the predictor takes over the corners of that
         * box. Bound = that range + the rounding of the logged vmaf. */
        for (unsigned c = 0; c < (1u << m->nb_features); c++) {
            double x[QGPU_MODEL_MAX_FEATURES];
            for (int k = 0; k < m->nb_features; k++)
                x[k] = raw[k] + ((c >> k) & 1 ? h[k] : -h[k]);
            double d = fabs(qgpu_model_predict(m, x) - pred);
            if (d > dev)
                dev = d;
        }
        bound = dev + half_ulp(vmaf) + 1e-9;
        diff = fabs(pred - json_object_get_double(vmaf));
        st->frames++;
        if (diff > bound)
            st->misses++;
        else if (diff > st->max_diff)
            st->max_diff = diff;
        if (bound > st->max_bound)
            st->max_bound = bound;
        if (!expect_miss)
            CHECK(diff <= bound, "%s frame %zu: predicted %.6f, libvmaf %.6f (|diff| %.3g > "
                  "bound %.3g)", path, i, pred, json_object_get_double(vmaf), diff, bound);
    }
    json_object_put(root);
}

static void test_goldens(void)
{
    char list_path[1024], line[1024], path[2048], rel[1024], err[1024];
    FILE *list = fopen(test_src_path("fate/pairs.txt", list_path, sizeof(list_path)), "r");
    Stats total[sizeof(golden_kinds) / sizeof(golden_kinds[0])];
    Stats transform_on = {0};
    int files = 0;

    memset(total, 0, sizeof(total));
    if (!CHECK(list != NULL, "cannot open %s (set QGPU_SRC)", list_path))
        return;
    while (fgets(line, sizeof(line), list)) {
        char pair[256];
        if (line[0] == '#' || sscanf(line, "%255s", pair) != 1)
            continue;
        for (size_t g = 0; g < sizeof(golden_kinds) / sizeof(golden_kinds[0]); g++) {
            QgpuModel *m = NULL;
            snprintf(rel, sizeof(rel), "fate/pairs/%s/%s.%s.json", pair, pair,
                     golden_kinds[g].suffix);
            test_src_path(rel, path, sizeof(path));
            if (access(path, R_OK))
                continue;
            if (!CHECK(qgpu_model_load_builtin(&m, golden_kinds[g].model, golden_kinds[g].flags,
                                               err, sizeof(err)) == 0, "%s", err))
                continue;
            files++;
            check_golden(path, m, &total[g], 0);
            qgpu_model_free(&m);
            /* the test can tell: with the transform (off in libvmaf for
             * v0.6.1) the scores must miss */
            if (!strcmp(golden_kinds[g].suffix, "vmaf") &&
                qgpu_model_load_builtin(&m, "vmaf_v0.6.1", QGPU_MODEL_ENABLE_TRANSFORM, err,
                                        sizeof(err)) == 0) {
                check_golden(path, m, &transform_on, 1);
                qgpu_model_free(&m);
            }
        }
    }
    fclose(list);
    CHECK(files >= 9, "only %d golden files found", files);
    for (size_t g = 0; g < sizeof(golden_kinds) / sizeof(golden_kinds[0]); g++)
        if (total[g].frames)
            printf("golden %-18s %-24s %4d frames, max |diff| %.3g, max bound %.3g\n",
                   golden_kinds[g].suffix, golden_kinds[g].model, total[g].frames,
                   total[g].max_diff, total[g].max_bound);
    CHECK(transform_on.misses > transform_on.frames / 2,
          "enable_transform should change vmaf_v0.6.1 (%d of %d frames differ)",
          transform_on.misses, transform_on.frames);
}

/* ---- hand-made models: svm, transform, clip, chroma correction -------------- */

static const char small_svm[] =
    "svm_type nu_svr\\nkernel_type rbf\\ngamma 0.5\\nnr_class 2\\ntotal_sv 2\\nrho 0.25\\n"
    "SV\\n1.5 1:0.1 2:0.2 \\n-0.5 2:0.7 \\n";

/* A model JSON with the given model_dict body. */
static char *model_json(const char *dict)
{
    char *s = malloc(strlen(dict) + 64);
    sprintf(s, "{\"param_dict\": {}, \"model_dict\": {%s}}", dict);
    return s;
}

static QgpuModel *parse_ok(const char *dict, unsigned flags)
{
    char err[1024];
    char *json = model_json(dict);
    QgpuModel *m = NULL;
    int ret = qgpu_model_parse(&m, json, strlen(json), "test", flags, err, sizeof(err));
    CHECK(ret == 0 && m, "parse: %s", err);
    free(json);
    return m;
}

static double small_svm_value(double a, double b)
{
    return 1.5 * exp(-0.5 * ((a - 0.1) * (a - 0.1) + (b - 0.2) * (b - 0.2))) -
           0.5 * exp(-0.5 * (a * a + (b - 0.7) * (b - 0.7))) - 0.25;
}

/* The piecewise-linear step at x, through a transform whose polynomial is
 * 2y (the test model below). */
static double transform_probe_knots(const QgpuModel *m, double x)
{
    return qgpu_model_transform(m, x / 2.0);
}

static void test_predict_paths(void)
{
    char dict[4096];
    QgpuModel *m;
    double x[2];

    /* no normalisation, no clip, no transform: the bare SVM */
    snprintf(dict, sizeof(dict),
             "\"model_type\": \"LIBSVMNUSVR\", \"norm_type\": \"none\", "
             "\"feature_names\": [\"psnr_y\", \"psnr_cb\"], \"model\": \"%s\"", small_svm);
    m = parse_ok(dict, 0);
    if (m) {
        for (int i = 0; i < 20; i++) {
            x[0] = test_rand_range(-1000, 1000) / 700.0;
            x[1] = test_rand_range(-1000, 1000) / 900.0;
            double got = qgpu_model_predict(m, x), want = small_svm_value(x[0], x[1]);
            CHECK(fabs(got - want) <= 1e-15 * (1 + fabs(want)), "svm %g %g: %.17g vs %.17g",
                  x[0], x[1], got, want);
        }
        x[0] = NAN;
        CHECK(isnan(qgpu_model_predict(m, x)), "NaN input gives NaN");
        qgpu_model_free(&m);
    }

    /* linear rescale + polynomial transform (enabled in the file) + clip */
    snprintf(dict, sizeof(dict),
             "\"model_type\": \"LIBSVMNUSVR\", \"norm_type\": \"linear_rescale\", "
             "\"feature_names\": [\"psnr_y\", \"psnr_cb\"], \"slopes\": [0.5, 0.02, 0.03], "
             "\"intercepts\": [0.1, -0.5, -1.0], \"score_clip\": [-1.0, 2.0], "
             "\"score_transform\": {\"enabled\": true, \"p0\": 0.3, \"p1\": 1.1, \"p2\": -0.2, "
             "\"out_gte_in\": \"false\"}, \"model\": \"%s\"", small_svm);
    for (int variant = 0; variant < 3; variant++) {
        unsigned flags = variant == 1 ? QGPU_MODEL_DISABLE_CLIP : 0;
        m = parse_ok(dict, flags);
        if (!m)
            continue;
        if (variant == 2)
            m->transform.out_gte_in = 1;
        for (int i = 0; i < 20; i++) {
            x[0] = test_rand_range(0, 6000) / 100.0;
            x[1] = test_rand_range(0, 6000) / 100.0;
            double y = (small_svm_value(0.02 * x[0] - 0.5, 0.03 * x[1] - 1.0) - 0.1) / 0.5;
            double t = 0.3 + 1.1 * y - 0.2 * y * y;
            if (variant == 2 && t < y)
                t = y;
            if (variant != 1)
                t = t < -1.0 ? -1.0 : t > 2.0 ? 2.0 : t;
            double got = qgpu_model_predict(m, x);
            CHECK(fabs(got - t) <= 1e-13, "rescale/transform/clip variant %d: %.17g vs %.17g",
                  variant, got, t);
        }
        if (variant == 2) {
            /* rectification against the transform's input (libvmaf 3.x, Python):
             * 0.3 + 1.1 * 4 - 0.2 * 16 = 1.5 < 4 gives 4; 0.3 > 0 gives 0 */
            CHECK(qgpu_model_transform(m, 4.0) == 4.0, "out_gte_in: %.17g",
                  qgpu_model_transform(m, 4.0));
            m->transform.out_gte_in = 0;
            m->transform.out_lte_in = 1;
            CHECK(qgpu_model_transform(m, 0.0) == 0.0 && qgpu_model_transform(m, 4.0) == 1.5,
                  "out_lte_in: %.17g %.17g", qgpu_model_transform(m, 0.0),
                  qgpu_model_transform(m, 4.0));
        }
        qgpu_model_free(&m);
    }

    /* "enabled": false + enable_transform flag; p1 only; knots */
    snprintf(dict, sizeof(dict),
             "\"model_type\": \"LIBSVMNUSVR\", \"norm_type\": \"none\", "
             "\"feature_names\": [\"psnr_y\", \"psnr_cb\"], "
             "\"score_transform\": {\"enabled\": false, \"p1\": 2.0, "
             "\"knots\": [[0.0, 0.0], [1.0, 3.0], [2.0, 3.0], [4.0, 5.0]]}, \"model\": \"%s\"",
             small_svm);
    m = parse_ok(dict, 0);
    if (m) {
        x[0] = 0.3;
        x[1] = 0.1;
        CHECK(qgpu_model_predict(m, x) == small_svm_value(0.3, 0.1),
              "transform off: enabled false");
        qgpu_model_free(&m);
    }
    m = parse_ok(dict, QGPU_MODEL_ENABLE_TRANSFORM);
    if (m) {
        /* piecewise: y=3x on [0,1], 3 on [1,2], x+1 on [2,4], extended outside */
        static const double pts[][2] = {
            {-0.5, -1.5}, {0.5, 1.5}, {1.5, 3.0}, {3.0, 4.0}, {6.0, 7.0}, {1.0, 3.0}};
        for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++)
            CHECK(fabs(transform_probe_knots(m, pts[i][0]) - pts[i][1]) < 1e-12,
                  "knots at %g: %g", pts[i][0], transform_probe_knots(m, pts[i][0]));
        qgpu_model_free(&m);
    }

    /* VMAF v1's chroma correction: speed_chroma == 0 is replaced by
     * c * (1 - adm3) before normalisation; anything else is kept */
    snprintf(dict, sizeof(dict),
             "\"model_type\": \"LIBSVMNUSVR\", \"norm_type\": \"linear_rescale\", "
             "\"feature_names\": [\"Speed_chroma_feature_speed_chroma_uv_score\", "
             "\"VMAF_integer_feature_adm3_score\"], \"slopes\": [1.0, 0.07, 0.5], "
             "\"intercepts\": [0.0, -0.1, -0.2], \"chroma_correction_parameter\": 120.0, "
             "\"model\": \"%s\"", small_svm);
    m = parse_ok(dict, 0);
    if (m) {
        double zero[2] = {0.0, 0.93}, corrected[2] = {120.0 * (1.0 - 0.93), 0.93};
        double other[2] = {1e-9, 0.93};
        CHECK(fabs(qgpu_model_predict(m, zero) - qgpu_model_predict(m, corrected)) < 1e-12,
              "chroma correction of a zero speed_chroma");
        CHECK(fabs(qgpu_model_predict(m, other) -
                   small_svm_value(0.07 * 1e-9 - 0.1, 0.5 * 0.93 - 0.2)) < 1e-12,
              "no chroma correction of a non-zero speed_chroma");
        qgpu_model_free(&m);
    }
}

/* ---- loader errors --------------------------------------------------------- */

static void expect_parse_error(const char *what, const char *json, const char *needle)
{
    char err[1024] = "";
    QgpuModel *m = (QgpuModel *)1;
    int ret = qgpu_model_parse(&m, json, strlen(json), "bad.json", 0, err, sizeof(err));
    CHECK(ret == QGPU_ERR_MODEL && m == NULL, "%s: returned %d", what, ret);
    CHECK(strstr(err, "bad.json") && strstr(err, needle), "%s: message '%s' lacks '%s'", what,
          err, needle);
}

static void test_parse_errors(void)
{
    char path[1024];
    char *good = read_text(test_src_path("models/vmaf_v0.6.1.json", path, sizeof(path)));
    char *bad;
    if (!CHECK(good != NULL, "cannot read %s", path))
        return;

    bad = strdup(good);
    bad[strlen(bad) / 2] = '\0';
    expect_parse_error("truncated", bad, "malformed JSON");
    free(bad);
    bad = replace(good, "\"slopes\": [", "\"slopes\": [,");
    expect_parse_error("syntax error", bad, "malformed JSON at line");
    free(bad);
    bad = malloc(strlen(good) + 8);
    sprintf(bad, "%s }", good);
    expect_parse_error("trailing data", bad, "malformed JSON");
    free(bad);
    expect_parse_error("not an object", "[1, 2]", "expected an object");
    expect_parse_error("no model_dict", "{\"param_dict\": {}}", "model_dict");
    expect_parse_error("collection", "{\"0\": {}, \"1\": {}}",
                       "a model collection, where a single model");
    expect_parse_error("empty", "", "malformed JSON");

    {
        /* one edit of the good model each, and the message it must give */
        static const struct { const char *from, *to, *name, *needle; } edits[] = {
            {"VMAF_integer_feature_motion2_score", "VMAF_integer_feature_motion9_score",
             "unknown feature", "unknown feature 'VMAF_integer_feature_motion9_score'"},
            {"\"LIBSVMNUSVR\"", "\"RANDOMFOREST\"",
             "model_type", "unknown model_type 'RANDOMFOREST'"},
            {"svm_type nu_svr", "svm_type c_svc",
             "svm_type", "not a regression model"},
            {"kernel_type rbf", "kernel_type poly",
             "kernel", "kernel_type 'poly'"},
            {"total_sv 211", "total_sv 212",
             "total_sv", "total_sv is 212"},
            {"total_sv 211", "total_sv 210",
             "extra SV", "more support vectors"},
            {"1:0.65734273", "1:zero",
             "SV value", "bad entry"},
            {"\"linear_rescale\"", "\"log\"",
             "norm_type", "unknown norm_type"},
            {"0.012020766332648465,", "",
             "slopes length", "\"slopes\" has 6 numbers, expected 7"},
        };
        for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
            bad = replace(good, edits[i].from, edits[i].to);
            expect_parse_error(edits[i].name, bad, edits[i].needle);
            free(bad);
        }
    }
    {
        static const struct { const char *dict, *needle; } cases[] = {
            {"\"score_clip\": [\"a\", 1]", "score_clip"},
            {"\"score_clip\": [0, 1, 2]", "score_clip"},
            {"\"score_transform\": {\"enabled\": 1}", "enabled"},
            {"\"score_transform\": {\"p1\": \"x\"}", "p1"},
            {"\"score_transform\": {\"knots\": [[0, 0], [0, 1]]}", "knots"},
            {"\"score_transform\": {\"knots\": [[0, 0]]}", "knots"},
            {"\"score_transform\": {\"out_gte_in\": true}", "out_gte_in"},
            {"\"feature_opts_dicts\": [{\"psnr_x\": [1]}]", "psnr_x"},
            {"\"feature_opts_dicts\": [{}, {}, {}]", "feature_opts_dicts"},
            {"\"chroma_correction_parameter\": \"big\"", "chroma_correction_parameter"},
            {"\"slopes\": [1, 2, \"3\"]", "slopes"},
            {"\"feature_names\": []", "feature names"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            char dict[2048];
            char *json;
            const char *names = strstr(cases[i].dict, "feature_names")
                                    ? ""
                                    : "\"feature_names\": [\"psnr_y\", \"psnr_cb\"], ";
            const char *norm = strstr(cases[i].dict, "slopes")
                                   ? "\"norm_type\": \"linear_rescale\", \"intercepts\": [1, 2, 3], "
                                   : "\"norm_type\": \"none\", ";
            snprintf(dict, sizeof(dict), "\"model_type\": \"LIBSVMNUSVR\", %s%s%s, \"model\": \"%s\"",
                     norm, names, cases[i].dict, small_svm);
            json = model_json(dict);
            expect_parse_error(cases[i].dict, json, cases[i].needle);
            free(json);
        }
    }
    free(good);
}

/* ---- qgpu_use_model() through a context ------------------------------------- */

static int extractors_present(const char *model)
{
    char err[512];
    QgpuModel *m = NULL;
    int ok = qgpu_model_load_builtin(&m, model, 0, err, sizeof(err)) == 0;
    for (int i = 0; ok && i < m->nb_features; i++)
        ok = qgpu_feature_class_find(m->features[i].extractor) != NULL;
    qgpu_model_free(&m);
    return ok;
}

static void expect_use_error(const char *spec, int code, const char *needle)
{
    QgpuContext *ctx = test_open(2);
    int ret;
    if (!ctx)
        return;
    ret = qgpu_use_model(ctx, spec);
    CHECK(ret == code, "use_model '%s': %d (%s), expected %d", spec, ret, qgpu_last_error(ctx),
          code);
    CHECK(strstr(qgpu_last_error(ctx), needle) != NULL, "use_model '%s': message '%s' lacks '%s'",
          spec, qgpu_last_error(ctx), needle);
    CHECK(ctx->nb_features == 0 && ctx->nb_hooks == 0,
          "use_model '%s' failed but left %d features, %d hooks", spec, ctx->nb_features,
          ctx->nb_hooks);
    qgpu_close(&ctx);
}

static void test_use_errors(void)
{
    char path[1024];
    char *good = read_text(test_src_path("models/vmaf_v0.6.1.json", path, sizeof(path)));
    char spec[1200];
    char *bad;

    expect_use_error("path=/nonexistent/dir/m.json", QGPU_ERR_IO, "/nonexistent/dir/m.json");
    if (good) {
        bad = strdup(good);
        bad[100] = '\0';
        snprintf(spec, sizeof(spec), "path=%s", write_tmp("truncated.json", bad));
        expect_use_error(spec, QGPU_ERR_MODEL, "truncated.json");
        expect_use_error(spec, QGPU_ERR_MODEL, "malformed JSON");
        free(bad);
        bad = replace(good, "VMAF_integer_feature_adm2_score", "VMAF_integer_feature_foo_score");
        snprintf(spec, sizeof(spec), "path=%s", write_tmp("unknown.json", bad));
        expect_use_error(spec, QGPU_ERR_MODEL, "unknown feature 'VMAF_integer_feature_foo_score'");
        free(bad);
        bad = replace(good, "\"LIBSVMNUSVR\"", "\"XGBOOST\"");
        snprintf(spec, sizeof(spec), "path=%s", write_tmp("type.json", bad));
        expect_use_error(spec, QGPU_ERR_MODEL, "model_type 'XGBOOST'");
        free(bad);
    }
    snprintf(spec, sizeof(spec), "path=%s", tmp_dir);
    expect_use_error(spec, QGPU_ERR_IO, tmp_dir); /* a directory */
    snprintf(spec, sizeof(spec), "path=%s", write_tmp("empty.json", ""));
    expect_use_error(spec, QGPU_ERR_MODEL, "empty");
    expect_use_error("version=vmaf_v9", QGPU_ERR_MODEL, "vmaf_v0.6.1neg");
    expect_use_error("version=vmaf_v0.6.1:path=x.json", QGPU_ERR_BAD_OPTION, "not both");
    expect_use_error("version=vmaf_v0.6.1:foo", QGPU_ERR_BAD_OPTION, "unknown option 'foo'");
    expect_use_error("enable_transform=maybe", QGPU_ERR_BAD_OPTION, "enable_transform");
    expect_use_error("version=", QGPU_ERR_BAD_OPTION, "needs a value");
    expect_use_error("name=a:name=b", QGPU_ERR_BAD_OPTION, "twice");
    expect_use_error("adm.=1", QGPU_ERR_BAD_OPTION, "no option");
    if (extractors_present("vmaf_v0.6.1")) {
        expect_use_error("version=vmaf_v0.6.1:adm.adm_no_such_option=1", QGPU_ERR_BAD_OPTION,
                         "adm_no_such_option");
        expect_use_error("version=vmaf_v0.6.1:vif.vif_enhn_gain_limit=1000", QGPU_ERR_BAD_OPTION,
                         "vif_enhn_gain_limit");
    } else {
        expect_use_error("version=vmaf_v0.6.1", QGPU_ERR_MODEL, "which this build does not have");
    }
    if (qgpu_model_builtin("vmaf_v1.0.16_3d0h", NULL) && !extractors_present("vmaf_v1.0.16_3d0h"))
        expect_use_error("version=vmaf_v1.0.16_3d0h", QGPU_ERR_MODEL, "does not have");

    /* state: after the first submit, and a name used twice */
    {
        QgpuContext *ctx = test_open(2);
        if (ctx) {
            const char *p;
            snprintf(spec, sizeof(spec),
                     "{\"model_dict\": {\"model_type\": \"LIBSVMNUSVR\", \"norm_type\": \"none\", "
                     "\"feature_names\": [\"psnr_y\"], \"model\": \"%s\"}}", small_svm);
            p = write_tmp("psnr1.json", spec);
            snprintf(spec, sizeof(spec), "path=%s", p);
            CHECK(qgpu_use_model(ctx, spec) == 0, "psnr model: %s", qgpu_last_error(ctx));
            CHECK(qgpu_use_model(ctx, spec) == QGPU_ERR_BAD_OPTION &&
                      strstr(qgpu_last_error(ctx), "unique name"),
                  "same name twice: %s", qgpu_last_error(ctx));
            qgpu_close(&ctx);
        }
    }
    free(good);
}

/* Frames through the pipeline with models built on psnr (the extractors a
 * model needs are enabled by qgpu_use_model; the score comes from the hook). */
static void test_use_pipeline(void)
{
    QgpuContext *ctx = test_open(2);
    TestPicture ref[4], dist[4];
    char json[2048], spec[1200];
    unsigned frame;
    int frames = 4, got = 0;
    QgpuModel *m = NULL;
    char err[512];

    if (!ctx)
        return;
    snprintf(json, sizeof(json),
             "{\"model_dict\": {\"model_type\": \"LIBSVMNUSVR\", \"norm_type\": \"linear_rescale\", "
             "\"feature_names\": [\"psnr_y\", \"psnr_cb\"], \"slopes\": [0.5, 0.02, 0.03], "
             "\"intercepts\": [0.1, -0.5, -1.0], \"model\": \"%s\"}}", small_svm);
    snprintf(spec, sizeof(spec), "path=%s:name=model_a", write_tmp("psnr2.json", json));
    CHECK(qgpu_use_model(ctx, spec) == 0, "use model_a: %s", qgpu_last_error(ctx));
    /* a second model on the same features (psnr shared), clipped by a flag */
    snprintf(json, sizeof(json),
             "{\"model_dict\": {\"model_type\": \"LIBSVMNUSVR\", \"norm_type\": \"none\", "
             "\"score_clip\": [0.0, 0.1], "
             "\"feature_names\": [\"psnr_cb\", \"psnr_y\"], \"model\": \"%s\"}}", small_svm);
    snprintf(spec, sizeof(spec), "path=%s:name=model_b:disable_clip=false",
             write_tmp("psnr3.json", json));
    CHECK(qgpu_use_model(ctx, spec) == 0, "use model_b: %s", qgpu_last_error(ctx));
    CHECK(qgpu_enable_feature(ctx, "psnr") == 0, "psnr again");
    CHECK(ctx->nb_features == 1, "features shared: %d instances", ctx->nb_features);
    memset(ref, 0, sizeof(ref));
    memset(dist, 0, sizeof(dist));
    for (int i = 0; i < frames; i++) {
        test_picture_alloc(&ref[i], 64, 48, QGPU_LAYOUT_420, 8, 0);
        test_picture_alloc(&dist[i], 64, 48, QGPU_LAYOUT_420, 8, 0);
        test_picture_random(&ref[i]);
        test_picture_noisy_copy(&dist[i], &ref[i], 2 + 5 * i);
        if (!CHECK(qgpu_submit(ctx, &ref[i].pic, &dist[i].pic) == 0, "submit: %s",
                   qgpu_last_error(ctx)))
            goto out;
        while (qgpu_collect(ctx, &frame, 0) == 1)
            got++;
    }
    CHECK(qgpu_use_model(ctx, "version=vmaf_v0.6.1") == QGPU_ERR_STATE, "use_model after submit");
    CHECK(qgpu_flush(ctx) == 0, "flush");
    while (qgpu_collect(ctx, &frame, 1) == 1)
        got++;
    CHECK(got == frames, "%d frames", got);
    {
        int n = qgpu_score_count(ctx);
        CHECK(n >= 2 && !strcmp(qgpu_score_name(ctx, n - 2), "model_a") &&
                  !strcmp(qgpu_score_name(ctx, n - 1), "model_b"),
              "model scores registered last, in order");
    }
    for (int pass = 0; pass < 2; pass++) {
        snprintf(spec, sizeof(spec), "%s/psnr%d.json", tmp_dir, pass + 2);
        if (!CHECK(qgpu_model_load_file(&m, spec, 0, err, sizeof(err)) == 0, "%s", err))
            continue;
        for (int i = 0; i < frames; i++) {
            double y = NAN, cb = NAN, score = NAN, raw[2];
            CHECK(qgpu_get_score(ctx, (unsigned)i, "psnr_y", &y) == 0 &&
                      qgpu_get_score(ctx, (unsigned)i, "psnr_cb", &cb) == 0 &&
                      qgpu_get_score(ctx, (unsigned)i, pass ? "model_b" : "model_a", &score) == 0,
                  "scores of frame %d", i);
            raw[0] = pass ? cb : y;
            raw[1] = pass ? y : cb;
            CHECK(score == qgpu_model_predict(m, raw) && isfinite(score),
                  "model %d frame %d: %.17g vs %.17g", pass, i, score,
                  qgpu_model_predict(m, raw));
            if (pass)
                CHECK(score >= 0.0 && score <= 0.1, "model_b clipped: %g", score);
        }
        qgpu_model_free(&m);
    }
out:
    for (int i = 0; i < frames; i++) {
        test_picture_free(&ref[i]);
        test_picture_free(&dist[i]);
    }
    qgpu_close(&ctx);
}

/* A feature the model needs but the options switch off: caught at init. */
static void test_missing_input(void)
{
    QgpuContext *ctx = test_open(1);
    TestPicture ref, dist;
    char json[2048], spec[1200];
    if (!ctx)
        return;
    snprintf(json, sizeof(json),
             "{\"model_dict\": {\"model_type\": \"LIBSVMNUSVR\", \"norm_type\": \"none\", "
             "\"feature_names\": [\"psnr_y\", \"psnr_cb\"], \"model\": \"%s\"}}", small_svm);
    snprintf(spec, sizeof(spec), "path=%s:psnr.enable_chroma=false",
             write_tmp("psnr4.json", json));
    CHECK(qgpu_use_model(ctx, spec) == 0, "use: %s", qgpu_last_error(ctx));
    test_picture_alloc(&ref, 32, 32, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&dist, 32, 32, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&ref);
    test_picture_random(&dist);
    CHECK(qgpu_submit(ctx, &ref.pic, &dist.pic) == QGPU_ERR_MODEL &&
              strstr(qgpu_last_error(ctx), "psnr_cb"),
          "missing input at init: %s", qgpu_last_error(ctx));
    test_picture_free(&ref);
    test_picture_free(&dist);
    qgpu_close(&ctx);
}

/* Runs `frames` random frames through a context; 0 on success. */
static int run_frames(QgpuContext *ctx, int w, int h, int frames)
{
    TestPicture ref, dist;
    unsigned frame;
    int err = 0;
    test_picture_alloc(&ref, w, h, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&dist, w, h, QGPU_LAYOUT_420, 8, 0);
    for (int i = 0; i < frames && !err; i++) {
        test_picture_random(&ref);
        test_picture_noisy_copy(&dist, &ref, 3 + 4 * i);
        err = qgpu_submit(ctx, &ref.pic, &dist.pic);
        while (!err && qgpu_collect(ctx, &frame, 0) == 1)
            ;
    }
    if (!err)
        err = qgpu_flush(ctx);
    while (!err && qgpu_collect(ctx, &frame, 1) == 1)
        ;
    test_picture_free(&ref);
    test_picture_free(&dist);
    return err;
}

static int run_one_frame(QgpuContext *ctx, int w, int h)
{
    return run_frames(ctx, w, h, 1);
}

/* The names the model code derives for its inputs (output alias + option
 * suffix) are the names libvmaf prints: for every feature of the built-in
 * models whose extractor exists, a one-feature model with that feature and
 * its options must produce the key found in the golden log. */
static void test_names_vs_golden(void)
{
    static const struct { const char *model, *golden; } cases[] = {
        {"vmaf_v0.6.1", "seeking_720x480_x264_crf30.vmaf"},
        {"vmaf_v0.6.1neg", "seeking_720x480_x264_crf30.vmaf_neg"},
        {"vmaf_4k_v0.6.1", "flowerpan_1920x1080_x265_crf38.vmaf_4k"},
        {"vmaf_float_v0.6.1", "seeking_720x480_x264_crf30.vmaf_float"},
        {"vmaf_v1.0.16_3d0h", "seeking_720x480_x264_crf30.vmaf_v1"},
        {"vmaf_v1.0.16_5d0h", "seeking_720x480_x264_crf30.vmaf_v1_5d0h"},
        {"vmaf_v1.0.16_1d5h_2160", "flowerpan_1920x1080_x265_crf38.vmaf_v1_1d5h_2160"},
        {"vmaf_v1.0.16_3d0h_2160", "flowerpan_1920x1080_x265_crf38.vmaf_v1_3d0h_2160"},
        {"vmaf_v1.0.16_hfr_3d0h", "seeking_720x480_x264_crf30.vmaf_v1_hfr_3d0h"},
    };
    int checked = 0;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char rel[512], path[1024], err[512], pair[256];
        QgpuModel *m = NULL;
        json_object *root, *frames, *metrics = NULL;
        snprintf(pair, sizeof(pair), "%s", cases[c].golden);
        pair[strcspn(pair, ".")] = '\0';
        snprintf(rel, sizeof(rel), "fate/pairs/%s/%s.json", pair, cases[c].golden);
        root = json_object_from_file(test_src_path(rel, path, sizeof(path)));
        if (!CHECK(root && json_object_object_get_ex(root, "frames", &frames) &&
                       json_object_object_get_ex(json_object_array_get_idx(frames, 0),
                                                 "metrics", &metrics),
                   "golden %s", path) ||
            !CHECK(qgpu_model_load_builtin(&m, cases[c].model, 0, err, sizeof(err)) == 0, "%s",
                   err)) {
            json_object_put(root);
            continue;
        }
        for (int k = 0; k < m->nb_features; k++) {
            const QgpuModelFeature *f = &m->features[k];
            char json[4096], spec[1200], fname[64];
            char *opts;
            json_object *want_val = find_input(metrics, f->output);
            const char *want = NULL;
            QgpuContext *ctx;
            if (!qgpu_feature_class_find(f->extractor))
                continue;
            json_object_object_foreach(metrics, key, val) {
                if (val == want_val)
                    want = key;
            }
            if (!CHECK(want != NULL, "%s: no key for %s in %s", cases[c].model, f->output, rel))
                continue;
            /* the feature alone, with its options ("k=v" -> "k": v) */
            opts = qgpu_model_feature_options(f);
            {
                size_t n = (size_t)snprintf(json, sizeof(json),
                                            "{\"model_dict\": {\"model_type\": \"LIBSVMNUSVR\", "
                                            "\"norm_type\": \"none\", \"feature_names\": [\"%s\"], "
                                            "\"feature_opts_dicts\": [{", f->name);
                char *save = NULL;
                int first = 1;
                for (char *kv = strtok_r(opts, ":", &save); kv; kv = strtok_r(NULL, ":", &save)) {
                    char *eq = strchr(kv, '=');
                    *eq = '\0';
                    /* strings (speed_prescale_method=bilinear) need quotes */
                    int str = strtod(eq + 1, NULL) == 0.0 && eq[1] != '0' && eq[1] != '-' &&
                              strcmp(eq + 1, "true") && strcmp(eq + 1, "false");
                    n += (size_t)snprintf(json + n, sizeof(json) - n, "%s\"%s\": %s%s%s",
                                          first ? "" : ", ", kv, str ? "\"" : "", eq + 1,
                                          str ? "\"" : "");
                    first = 0;
                }
                snprintf(json + n, sizeof(json) - n, "}], \"model\": \"%s\"}}", small_svm);
            }
            free(opts);
            snprintf(fname, sizeof(fname), "names_%zu_%d.json", c, k);
            snprintf(spec, sizeof(spec), "path=%s", write_tmp(fname, json));
            ctx = test_open(1);
            if (!ctx)
                continue;
            if (CHECK(qgpu_use_model(ctx, spec) == 0, "%s feature %s: %s", cases[c].model,
                      f->name, qgpu_last_error(ctx)) &&
                /* 640x360: speed_chroma needs 80x80 chroma after ps 0.5 */
                CHECK(run_one_frame(ctx, 640, 360) == 0, "%s feature %s: %s", cases[c].model,
                      f->name, qgpu_last_error(ctx)))
                CHECK(qgpu_score_find(ctx, want) >= 0, "%s: libvmaf prints '%s', we do not",
                      cases[c].model, want);
            checked++;
            qgpu_close(&ctx);
        }
        qgpu_model_free(&m);
        json_object_put(root);
    }
    printf("input names checked against the goldens: %d\n", checked);
}

/* With every extractor of vmaf_v0.6.1 present: the whole model registers
 * exactly the names libvmaf prints for it. */
/* Model feature names resolve through the names the feature classes
 * declare. The table is libvmaf's own naming (feature_name.c, alias.c and
 * each extractor's provided-feature list), written out here on purpose as
 * an independent reference: {name a model may use, extractor, printed}. */
static void test_declared_names(void)
{
    static const struct { const char *name, *extractor, *output; } libvmaf[] = {
        {"VMAF_integer_feature_adm2_score", "adm", "integer_adm2"},
        {"VMAF_integer_feature_aim_score", "adm", "integer_aim"},
        {"VMAF_integer_feature_adm3_score", "adm", "integer_adm3"},
        {"integer_adm_scale2", "adm", "integer_adm_scale2"},
        {"integer_adm_num_scale0", "adm", "integer_adm_num_scale0"},
        {"integer_adm_den", "adm", "integer_adm_den"},
        {"VMAF_integer_feature_vif_scale0_score", "vif", "integer_vif_scale0"},
        {"VMAF_integer_feature_vif_scale3_score", "vif", "integer_vif_scale3"},
        {"integer_vif_den_scale1", "vif", "integer_vif_den_scale1"},
        {"VMAF_integer_feature_motion_sad_score", "motion",
         "VMAF_integer_feature_motion_sad_score"},
        {"VMAF_integer_feature_motion_score", "motion", "integer_motion"},
        {"VMAF_integer_feature_motion2_score", "motion", "integer_motion2"},
        {"VMAF_integer_feature_motion3_score", "motion", "integer_motion3"},
        {"VMAF_feature_adm2_score", "float_adm", "adm2"},
        {"VMAF_feature_adm_scale1_score", "float_adm", "adm_scale1"},
        {"adm_den_scale3", "float_adm", "adm_den_scale3"},
        {"VMAF_feature_vif_scale2_score", "float_vif", "vif_scale2"},
        {"vif_num", "float_vif", "vif_num"},
        {"VMAF_feature_motion_score", "float_motion", "motion"},
        {"VMAF_feature_motion2_score", "float_motion", "motion2"},
        {"float_psnr", "float_psnr", "float_psnr"},
        {"float_anpsnr", "float_ansnr", "float_anpsnr"},
        {"float_moment_dis2nd", "float_moment", "float_moment_dis2nd"},
        {"psnr_cb", "psnr", "psnr_cb"},
        {"mse_y", "psnr", "mse_y"},
        {"float_ssim", "float_ssim", "float_ssim"},
        {"float_ms_ssim", "float_ms_ssim", "float_ms_ssim"},
        {"ciede2000", "ciede", "ciede2000"},
        {"psnr_hvs", "psnr_hvs", "psnr_hvs"},
        {"psnr_hvs_cr", "psnr_hvs", "psnr_hvs_cr"},
        {"Cambi_feature_cambi_score", "cambi", "cambi"},
        {"Speed_chroma_feature_speed_chroma_uv_score", "speed_chroma", "speed_chroma_uv"},
        {"ssimulacra2", "ssimulacra2", "ssimulacra2"},
    };
    const QgpuFeatureClass *cls, *other;
    const QgpuFeatureOutput *out;

    for (size_t i = 0; i < sizeof(libvmaf) / sizeof(libvmaf[0]); i++) {
        int found = qgpu_feature_output_find(libvmaf[i].name, &cls, &out) == 0;
        CHECK(found && !strcmp(cls->name, libvmaf[i].extractor) &&
                  !strcmp(out->name, libvmaf[i].output),
              "%s -> %s/%s (got %s/%s)", libvmaf[i].name, libvmaf[i].extractor,
              libvmaf[i].output, found ? cls->name : "-", found ? out->name : "-");
        /* the printed name resolves to the same output */
        CHECK(qgpu_feature_output_find(libvmaf[i].output, &other, &out) == 0 && other == cls,
              "printed name %s resolves", libvmaf[i].output);
    }
    /* no libvmaf extractor of ours provides it (speed_temporal is not built) */
    CHECK(qgpu_feature_output_find("Speed_temporal_feature_speed_temporal_score", &cls, &out) ==
              -1, "speed_temporal is not declared by any feature");
    /* every name is declared once, by one class */
    for (int c = 0; qgpu_feature_classes[c]; c++) {
        CHECK(qgpu_feature_classes[c]->outputs && qgpu_feature_classes[c]->outputs[0].name,
              "%s declares its outputs", qgpu_feature_classes[c]->name);
        for (out = qgpu_feature_classes[c]->outputs; out && out->name; out++) {
            const QgpuFeatureOutput *first;
            CHECK(qgpu_feature_output_find(out->name, &other, &first) == 0 && first == out,
                  "%s (%s) is declared once", out->name, qgpu_feature_classes[c]->name);
            if (out->model_name)
                CHECK(qgpu_feature_output_find(out->model_name, &other, &first) == 0 &&
                          first == out,
                      "%s (%s) is declared once", out->model_name,
                      qgpu_feature_classes[c]->name);
        }
    }
}

static void test_full_model_names(void)
{
    static const struct { const char *spec, *golden; } cases[] = {
        {"version=vmaf_v0.6.1", "seeking_720x480_x264_crf30.vmaf"},
        {"version=vmaf_v0.6.1neg", "seeking_720x480_x264_crf30.vmaf_neg"},
        {"version=vmaf_v0.6.1:adm.adm_enhn_gain_limit=1.0:vif.vif_enhn_gain_limit=1",
         "seeking_720x480_x264_crf30.vmaf_neg"},
    };
    if (!extractors_present("vmaf_v0.6.1")) {
        printf("skipped: full vmaf_v0.6.1 names (extractors not built yet)\n");
        return;
    }
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char rel[512], path[1024];
        QgpuContext *ctx = test_open(1);
        json_object *root, *frames, *metrics;
        if (!ctx)
            continue;
        snprintf(rel, sizeof(rel), "fate/pairs/seeking_720x480_x264_crf30/%s.json",
                 cases[c].golden);
        root = json_object_from_file(test_src_path(rel, path, sizeof(path)));
        CHECK(qgpu_use_model(ctx, cases[c].spec) == 0, "%s: %s", cases[c].spec,
              qgpu_last_error(ctx));
        CHECK(run_one_frame(ctx, 176, 144) == 0, "%s: %s", cases[c].spec, qgpu_last_error(ctx));
        if (CHECK(root && json_object_object_get_ex(root, "frames", &frames) &&
                      json_object_object_get_ex(json_object_array_get_idx(frames, 0),
                                                "metrics", &metrics),
                  "golden %s", path)) {
            int n = qgpu_score_count(ctx), matched = 0;
            json_object_object_foreach(metrics, key, val) {
                (void)val;
                /* the vmaf golden also has the --feature extractors' scores */
                if (c == 0 && (!strncmp(key, "psnr", 4) || !strncmp(key, "float_", 6) ||
                               !strncmp(key, "ciede", 5) || !strncmp(key, "cambi", 5)))
                    continue;
                int found = qgpu_score_find(ctx, key) >= 0;
                CHECK(found, "%s: libvmaf prints '%s', we do not", cases[c].spec, key);
                matched += found;
            }
            CHECK(matched == n, "%s: %d of our %d names in the golden log", cases[c].spec,
                  matched, n);
        }
        json_object_put(root);
        qgpu_close(&ctx);
    }
}

/* With the integer extractors: two models in one context share what they
 * have in common, and each frame's score is the predictor applied to the
 * frame's feature scores (motion2 needs the next frame: the hook runs when
 * the frame becomes final). */
static void test_full_model_values(void)
{
    static const char *const in_v061[6] = {"integer_adm2", "integer_motion2",
                                           "integer_vif_scale0", "integer_vif_scale1",
                                           "integer_vif_scale2", "integer_vif_scale3"};
    static const char *const in_neg[6] = {"integer_adm2_egl_1", "integer_motion2",
                                          "integer_vif_scale0_egl_1", "integer_vif_scale1_egl_1",
                                          "integer_vif_scale2_egl_1", "integer_vif_scale3_egl_1"};
    const int frames = 4;
    QgpuContext *ctx;
    char err[512];
    if (!extractors_present("vmaf_v0.6.1")) {
        printf("skipped: vmaf_v0.6.1 through the pipeline (extractors not built yet)\n");
        return;
    }
    ctx = test_open(2);
    if (!ctx)
        return;
    CHECK(qgpu_use_model(ctx, "version=vmaf_v0.6.1") == 0, "%s", qgpu_last_error(ctx));
    CHECK(qgpu_use_model(ctx, "version=vmaf_v0.6.1neg:name=vmaf_neg") == 0, "%s",
          qgpu_last_error(ctx));
    CHECK(qgpu_use_model(ctx, "version=vmaf_4k_v0.6.1:name=vmaf_4k") == 0, "%s",
          qgpu_last_error(ctx));
    /* adm, motion, vif + adm and vif with egl 1; motion shared by all three */
    CHECK(ctx->nb_features == 5, "%d feature instances for three models", ctx->nb_features);
    if (CHECK(run_frames(ctx, 192, 160, frames) == 0, "run: %s", qgpu_last_error(ctx))) {
        for (int k = 0; k < 3; k++) {
            static const char *const versions[3] = {"vmaf_v0.6.1", "vmaf_v0.6.1neg",
                                                    "vmaf_4k_v0.6.1"};
            static const char *const names[3] = {"vmaf", "vmaf_neg", "vmaf_4k"};
            QgpuModel *m = NULL;
            if (!CHECK(qgpu_model_load_builtin(&m, versions[k], 0, err, sizeof(err)) == 0, "%s",
                       err))
                continue;
            for (int i = 0; i < frames; i++) {
                double raw[6], got = NAN;
                for (int f = 0; f < 6; f++) {
                    raw[f] = NAN;
                    qgpu_get_score(ctx, (unsigned)i, (k == 1 ? in_neg : in_v061)[f], &raw[f]);
                }
                CHECK(qgpu_get_score(ctx, (unsigned)i, names[k], &got) == 0, "%s frame %d",
                      names[k], i);
                CHECK(got == qgpu_model_predict(m, raw) && got >= 0.0 && got <= 100.0,
                      "%s frame %d: %.17g vs predictor %.17g", names[k], i, got,
                      qgpu_model_predict(m, raw));
            }
            qgpu_model_free(&m);
        }
    }
    qgpu_close(&ctx);
}

int main(void)
{
    test_seed(0x6d6f64656cULL);
    if (!CHECK(mkdtemp(tmp_dir) != NULL, "mkdtemp"))
        return test_finish();
    test_builtins();
    test_goldens();
    test_predict_paths();
    test_parse_errors();
    test_use_errors();
    test_use_pipeline();
    test_missing_input();
    test_names_vs_golden();
    test_declared_names();
    test_full_model_names();
    test_full_model_values();
    {
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmp_dir);
    }
    return test_finish();
}
