/*
 * The models without libvmaf goldens, against tests/ref/model_ref.c (an
 * independent json-c reader and predictor of the model files), on the
 * features the pipeline computes for a bundled pair (fate/):
 *   - vmaf_float_v0.6.1neg, vmaf_4k_v0.6.1neg, vmaf_float_4k_v0.6.1 (and
 *     vmaf_float_v0.6.1, vmaf_4k_v0.6.1 beside them): every frame's score
 *     is the reference prediction from models/<version>.json, and the
 *     relations libvmaf's files imply hold (a neg model is its base model
 *     on the egl_1 features; a float model the integer one on float
 *     features);
 *   - model collections (libvmaf's bootstrap models): a collection written
 *     here from vmaf_float_v0.6.1 (members differing in rho) gives "<name>",
 *     "<name>_0001".., "<name>_bagging", "_stddev", "_ci_p95_lo",
 *     "_ci_p95_hi" equal to the reference, in libvmaf's order, in the logs
 *     too; and the collection loader's errors;
 *   - the qgpu tool with those models (-m version=..., -m path=collection):
 *     its JSON, XML and CSV logs carry the library's values, libvmaf's names
 *     and order.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "qgpu/qgpu.h"

#include "../bench/y4m.h"
#include "model.h"
#include "model_ref.h"
#include "test_util.h"

#define MAX_FRAMES 64
/* The reference repeats the library's arithmetic in another form (sparse
 * vectors, its own parser): equal up to the last bits at most. */
#define REF_TOL 1e-10

static const char *const ref_y4m = "fate/refs/nf_src01_160x90_48f.y4m";
static const char *const dist_y4m = "fate/pairs/nf_src01_160x90_nfdis/dis.y4m";
static char tmp_dir[] = "/tmp/qgpu-test-model-refs-XXXXXX";

/* Scores every frame of the bundled pair; returns the frame count, -1 on
 * an error. */
static int run_pair(QgpuContext *ctx, const char *dist_path)
{
    char p1[1024], p2[1024], err[256];
    Y4mFile r, d;
    unsigned char *rb = NULL, *db = NULL;
    unsigned frame;
    int n = 0, got = 0, ok = 1;

    if (!CHECK(y4m_open(&r, test_src_path(ref_y4m, p1, sizeof(p1)), err, sizeof(err)) == 0,
               "%s", err))
        return -1;
    if (!CHECK(y4m_open(&d, test_src_path(dist_path, p2, sizeof(p2)), err, sizeof(err)) == 0,
               "%s", err)) {
        y4m_close(&r);
        return -1;
    }
    rb = malloc(r.frame_bytes);
    db = malloc(d.frame_bytes);
    while (ok && rb && db && y4m_read(&r, rb) == 1 && y4m_read(&d, db) == 1 && n < MAX_FRAMES) {
        QgpuPicture rp, dp;
        y4m_picture(&r, rb, &rp);
        y4m_picture(&d, db, &dp);
        ok = CHECK(qgpu_submit(ctx, &rp, &dp) == 0, "submit: %s", qgpu_last_error(ctx));
        while (ok && qgpu_collect(ctx, &frame, 0) == 1)
            got++;
        n++;
    }
    if (ok)
        ok = CHECK(qgpu_flush(ctx) == 0, "flush: %s", qgpu_last_error(ctx));
    while (ok && qgpu_collect(ctx, &frame, 1) == 1)
        got++;
    free(rb);
    free(db);
    y4m_close(&r);
    y4m_close(&d);
    return ok && CHECK(got == n && n > 0, "%d of %d frames", got, n) ? n : -1;
}

static json_object *load_json(const char *relative)
{
    char path[1024];
    json_object *o = json_object_from_file(test_src_path(relative, path, sizeof(path)));
    CHECK(o != NULL, "cannot read %s", path);
    return o;
}

static int load_ref(ModelRef *m, const char *version, int enable_transform)
{
    char rel[256];
    json_object *o;
    int ret;
    snprintf(rel, sizeof(rel), "models/%s.json", version);
    o = load_json(rel);
    ret = o ? model_ref_load(m, o, enable_transform, 0) : -1;
    json_object_put(o);
    return CHECK(ret == 0, "reference cannot load %s", version);
}

/* The JSON log `name` in tmp_dir when it holds `frames` frames: its root
 * (json_object_put() it), *arr its "frames"; NULL otherwise. */
static json_object *read_log(const char *name, int frames, json_object **arr)
{
    char path[1100];
    json_object *root;
    snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
    root = json_object_from_file(path);
    if (CHECK(root && json_object_object_get_ex(root, "frames", arr) && frames > 0 &&
                  (int)json_object_array_length(*arr) == frames,
              "%s: %d frames", name, frames))
        return root;
    json_object_put(root);
    return NULL;
}

/* The raw feature values of a frame, by printed name. */
static void features(QgpuContext *ctx, unsigned frame, const char *const *names, double *raw)
{
    for (int i = 0; i < 6; i++) {
        raw[i] = NAN;
        CHECK(qgpu_get_score(ctx, frame, names[i], &raw[i]) == 0, "frame %u: no %s", frame,
              names[i]);
    }
}

/* ---- the single models -------------------------------------------------- */

static const char *const in_int[6] = {"integer_adm2", "integer_motion2", "integer_vif_scale0",
                                      "integer_vif_scale1", "integer_vif_scale2",
                                      "integer_vif_scale3"};
static const char *const in_int_neg[6] = {"integer_adm2_egl_1", "integer_motion2",
                                          "integer_vif_scale0_egl_1",
                                          "integer_vif_scale1_egl_1",
                                          "integer_vif_scale2_egl_1",
                                          "integer_vif_scale3_egl_1"};
static const char *const in_float[6] = {"adm2", "motion2", "vif_scale0",
                                        "vif_scale1", "vif_scale2", "vif_scale3"};
static const char *const in_float_neg[6] = {"adm2_egl_1", "motion2", "vif_scale0_egl_1",
                                            "vif_scale1_egl_1", "vif_scale2_egl_1",
                                            "vif_scale3_egl_1"};

typedef struct SingleCase {
    const char *version;
    const char *name;            /* score name in the context */
    const char *const *inputs;   /* its features' printed names */
    const char *base;            /* the model whose parameters it shares */
} SingleCase;

static const SingleCase singles[] = {
    {"vmaf_float_v0.6.1", "f", in_float, "vmaf_float_v0.6.1"},
    {"vmaf_float_v0.6.1neg", "fn", in_float_neg, "vmaf_float_v0.6.1"},
    {"vmaf_4k_v0.6.1", "k", in_int, "vmaf_4k_v0.6.1"},
    {"vmaf_4k_v0.6.1neg", "kn", in_int_neg, "vmaf_4k_v0.6.1"},
    {"vmaf_float_4k_v0.6.1", "fk", in_float, "vmaf_4k_v0.6.1"},
};
#define NB_SINGLES ((int)(sizeof(singles) / sizeof(singles[0])))

static void use_singles(QgpuContext *ctx)
{
    for (int c = 0; c < NB_SINGLES; c++) {
        char spec[128];
        snprintf(spec, sizeof(spec), "version=%s:name=%s", singles[c].version, singles[c].name);
        CHECK(qgpu_use_model(ctx, spec) == 0, "%s: %s", spec, qgpu_last_error(ctx));
    }
}

/* A neg model differs from its base model only where the egl_1 features
 * differ from the plain ones: the frames with equal features (returned)
 * have equal scores. */
static int check_neg_relation(QgpuContext *ctx, int frames, const SingleCase *neg,
                              const SingleCase *b)
{
    int same_inputs = 0;
    for (unsigned i = 0; i < (unsigned)frames; i++) {
        double a[6], p[6], sa = NAN, sp = NAN;
        features(ctx, i, neg->inputs, a);
        features(ctx, i, b->inputs, p);
        qgpu_get_score(ctx, i, neg->name, &sa);
        qgpu_get_score(ctx, i, b->name, &sp);
        if (!memcmp(a, p, sizeof(a))) {
            same_inputs++;
            CHECK(sa == sp && isfinite(sa), "%s frame %u: same features as %s, %.17g vs %.17g",
                  neg->version, i, b->version, sa, sp);
        }
    }
    return same_inputs;
}

/* The distorted input equal to the reference: no enhancement to limit, the
 * float egl_1 features equal the plain ones, and so do the scores. (The
 * integer ADM is not exactly 1 on identical input, 1.000002 vs 0.999988
 * with the limit, as in libvmaf's integer arithmetic: reported only.) */
static void test_neg_identical(void)
{
    QgpuContext *ctx = test_open(2);
    int frames;
    if (!ctx)
        return;
    use_singles(ctx);
    frames = run_pair(ctx, ref_y4m);
    for (int c = 1; c < NB_SINGLES && frames > 0; c++)
        if (singles[c].inputs == in_float_neg || singles[c].inputs == in_int_neg) {
            int same = check_neg_relation(ctx, frames, &singles[c], &singles[c - 1]);
            CHECK(same == frames || singles[c].inputs == in_int_neg,
                  "%s on identical input: %d of %d frames with the features of %s",
                  singles[c].version, same, frames, singles[c - 1].version);
            printf("%s and %s on identical input: same features and score on %d of %d "
                   "frames\n", singles[c].version, singles[c - 1].version, same, frames);
        }
    qgpu_close(&ctx);
}

static void test_single_models(void)
{
    QgpuContext *ctx = test_open(2);
    ModelRef own[NB_SINGLES], base[NB_SINGLES];
    int frames, loaded[NB_SINGLES] = {0};

    if (!ctx)
        return;
    use_singles(ctx);
    frames = run_pair(ctx, dist_y4m);
    for (int c = 0; c < NB_SINGLES && frames > 0; c++) {
        double max_diff = 0.0;
        if (!load_ref(&own[c], singles[c].version, 0))
            continue;
        if (!load_ref(&base[c], singles[c].base, 0)) {
            model_ref_free(&own[c]);
            continue;
        }
        loaded[c] = 1;
        for (unsigned i = 0; i < (unsigned)frames; i++) {
            double raw[6], got = NAN, want, via_base;
            features(ctx, i, singles[c].inputs, raw);
            CHECK(qgpu_get_score(ctx, i, singles[c].name, &got) == 0, "%s frame %u",
                  singles[c].name, i);
            want = model_ref_post(&own[c], model_ref_svm(&own[c], raw));
            via_base = model_ref_post(&base[c], model_ref_svm(&base[c], raw));
            CHECK(fabs(got - want) <= REF_TOL && isfinite(got),
                  "%s frame %u: %.17g, reference %.17g", singles[c].version, i, got, want);
            /* same SVM, slopes, intercepts, transform and clip as its base */
            CHECK(want == via_base, "%s frame %u: %.17g, %s's parameters give %.17g",
                  singles[c].version, i, want, singles[c].base, via_base);
            if (fabs(got - want) > max_diff)
                max_diff = fabs(got - want);
        }
        printf("%s: %d frames, max |qgpu - reference| %.3g\n", singles[c].version, frames,
               max_diff);
    }
    for (int c = 0; c < NB_SINGLES; c++)
        if (loaded[c]) {
            model_ref_free(&own[c]);
            model_ref_free(&base[c]);
        }
    qgpu_close(&ctx);
}

/* ---- model collections --------------------------------------------------- */

#define NB_MEMBERS 5
/* Member k's rho: spread enough that the members differ by a few VMAF
 * points and member 5 exceeds 100 on the best frames (clipped alone). */
static const char *const member_rho[NB_MEMBERS + 1] = {"-1.33133", "-1.30", "-1.36",
                                                       "-1.33133", "-1.39", "-1.47"};

static char *replace_all(const char *s, const char *from, const char *to)
{
    size_t n = 0, lf = strlen(from), lt = strlen(to);
    char *out, *o;
    for (const char *p = strstr(s, from); p; p = strstr(p + lf, from))
        n++;
    out = malloc(strlen(s) + n * (lt > lf ? lt - lf : 0) + 1);
    if (!out)
        return NULL;
    o = out;
    for (const char *p = s;;) {
        const char *q = strstr(p, from);
        if (!q) {
            strcpy(o, p);
            break;
        }
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, to, lt);
        o += lt;
        p = q + lf;
    }
    return out;
}

/* A collection file of NB_MEMBERS + 1 models built from vmaf_float_v0.6.1
 * (model_type bootstrap, rho per member); its path, NULL on an error. */
static const char *write_collection(char *path, size_t len)
{
    json_object *base = load_json("models/vmaf_float_v0.6.1.json");
    const char *text = base ? json_object_to_json_string_ext(base, JSON_C_TO_STRING_PLAIN) : NULL;
    char *boot = text ? replace_all(text, "\"LIBSVMNUSVR\"", "\"BOOTSTRAP_LIBSVMNUSVR\"") : NULL;
    FILE *f;
    snprintf(path, len, "%s/collection.json", tmp_dir);
    f = boot ? fopen(path, "w") : NULL;
    if (!CHECK(f != NULL, "cannot write %s", path)) {
        free(boot);
        json_object_put(base);
        return NULL;
    }
    fputc('{', f);
    for (int k = 0; k <= NB_MEMBERS; k++) {
        char rho[32];
        char *member;
        snprintf(rho, sizeof(rho), "rho %s\\n", member_rho[k]);
        member = replace_all(boot, "rho -1.33133\\n", rho);
        fprintf(f, "%s\"%d\": %s", k ? ", " : "", k, member ? member : "null");
        free(member);
    }
    fputs("}\n", f);
    fclose(f);
    free(boot);
    json_object_put(base);
    return path;
}

/* The built-in collections: a full model "0" and 20 bootstrap members. */
#define MAX_REF_MODELS 21

typedef struct CollectionRef {
    ModelRef models[MAX_REF_MODELS];
    int loaded;
} CollectionRef;

/* Loads the nb_models models "0", "1", ... of the collection file at path. */
static int collection_ref_load(CollectionRef *c, const char *path, int nb_models,
                               int enable_transform, int disable_clip)
{
    json_object *root = json_object_from_file(path);
    c->loaded = 0;
    for (int k = 0; root && k < nb_models && k < MAX_REF_MODELS; k++) {
        char key[8];
        json_object *m;
        snprintf(key, sizeof(key), "%d", k);
        if (!json_object_object_get_ex(root, key, &m) ||
            model_ref_load(&c->models[k], m, enable_transform, disable_clip))
            break;
        c->loaded++;
    }
    json_object_put(root);
    return CHECK(c->loaded == nb_models, "reference: %d models of %s", c->loaded, path);
}

static void collection_ref_free(CollectionRef *c)
{
    for (int k = 0; k < c->loaded; k++)
        model_ref_free(&c->models[k]);
    c->loaded = 0;
}

/* Every output of collection `name` on every frame, against the reference;
 * `inputs`: the printed names of the features, in the model's order. */
static void check_collection(QgpuContext *ctx, int frames, const char *name, CollectionRef *c,
                             const char *const *inputs, int *clipped_members,
                             double *max_stddev)
{
    static const char *const stats[4] = {"_bagging", "_stddev", "_ci_p95_lo", "_ci_p95_hi"};
    const int nb_members = c->loaded - 1;
    for (unsigned i = 0; i < (unsigned)frames; i++) {
        double raw[6], member[MAX_REF_MODELS], want[4], got = NAN;
        char key[64];
        features(ctx, i, inputs, raw);
        CHECK(qgpu_get_score(ctx, i, name, &got) == 0, "%s frame %u", name, i);
        want[0] = model_ref_post(&c->models[0], model_ref_svm(&c->models[0], raw));
        CHECK(fabs(got - want[0]) <= REF_TOL, "%s frame %u: %.17g, reference %.17g", name, i,
              got, want[0]);
        for (int k = 1; k <= nb_members; k++) {
            double post;
            member[k - 1] = model_ref_svm(&c->models[k], raw);
            post = model_ref_post(&c->models[k], member[k - 1]);
            snprintf(key, sizeof(key), "%s_%04d", name, k);
            got = NAN;
            CHECK(qgpu_get_score(ctx, i, key, &got) == 0, "%s frame %u", key, i);
            CHECK(fabs(got - post) <= REF_TOL, "%s frame %u: %.17g, reference %.17g", key, i,
                  got, post);
            *clipped_members += post != member[k - 1];
        }
        model_ref_bootstrap(&c->models[1], member, nb_members, want);
        for (int s = 0; s < 4; s++) {
            snprintf(key, sizeof(key), "%s%s", name, stats[s]);
            got = NAN;
            CHECK(qgpu_get_score(ctx, i, key, &got) == 0, "%s frame %u", key, i);
            CHECK(fabs(got - want[s]) <= REF_TOL, "%s frame %u: %.17g, reference %.17g", key, i,
                  got, want[s]);
        }
        CHECK(want[2] <= want[0] + 1e-9 && want[0] <= want[3] + 1e-9 && want[1] >= 0.0,
              "%s frame %u: lo %.6f bagging %.6f hi %.6f stddev %.6f", name, i, want[2],
              want[0], want[3], want[1]);
        if (want[1] > *max_stddev)
            *max_stddev = want[1];
    }
}

/* libvmaf's order: the features, the single models and each collection's
 * main score in the order given, then each collection's members and
 * statistics. */
static void check_order(QgpuContext *ctx)
{
    static const char *const tail[] = {"vmaf", "plain", "vmaf_0001", "vmaf_0002",
                                       "vmaf_0003", "vmaf_0004", "vmaf_0005",
                                       "vmaf_bagging", "vmaf_stddev", "vmaf_ci_p95_lo",
                                       "vmaf_ci_p95_hi"};
    const int nb_tail = (int)(sizeof(tail) / sizeof(tail[0]));
    int n = qgpu_score_count(ctx);
    if (!CHECK(n > nb_tail, "%d scores", n))
        return;
    for (int i = 0; i < nb_tail; i++)
        CHECK(!strcmp(qgpu_score_name(ctx, n - nb_tail + i), tail[i]), "score %d: %s, not %s",
              n - nb_tail + i, qgpu_score_name(ctx, n - nb_tail + i), tail[i]);
}

/* The JSON log lists the outputs per frame in the same order and pools
 * them as any score (mean of the per-frame values). */
static void check_json_log(QgpuContext *ctx, int frames)
{
    char path[1100];
    json_object *root, *arr, *metrics, *pooled, *v;
    const char *prev = NULL;
    int order_ok = 1, seen = 0;
    double sum = 0.0, mean = NAN;
    snprintf(path, sizeof(path), "%s/log.json", tmp_dir);
    if (!CHECK(qgpu_write_log(ctx, path, QGPU_LOG_FORMAT_JSON, 0.0) == 0, "write log: %s",
               qgpu_last_error(ctx)))
        return;
    root = read_log("log.json", frames, &arr);
    if (!root)
        return;
    for (int i = 0; i < frames; i++) {
        double x = NAN;
        v = NULL;
        metrics = NULL;
        json_object_object_get_ex(json_object_array_get_idx(arr, (size_t)i), "metrics",
                                  &metrics);
        if (metrics && json_object_object_get_ex(metrics, "vmaf_ci_p95_lo", &v))
            sum += json_object_get_double(v);
        qgpu_get_score(ctx, (unsigned)i, "vmaf_ci_p95_lo", &x);
        CHECK(v && fabs(json_object_get_double(v) - x) <= 5e-7, "log frame %d ci_p95_lo", i);
    }
    json_object_object_get_ex(json_object_array_get_idx(arr, 0), "metrics", &metrics);
    json_object_object_foreach(metrics, key, val) {
        (void)val;
        if (prev && !strcmp(prev, "plain"))
            order_ok &= !strcmp(key, "vmaf_0001");
        if (prev && !strcmp(prev, "vmaf_stddev"))
            order_ok &= !strcmp(key, "vmaf_ci_p95_lo");
        seen += !strcmp(key, "vmaf_ci_p95_hi");
        prev = key;
    }
    CHECK(order_ok && seen == 1 && !strcmp(prev, "vmaf_ci_p95_hi"), "log key order");
    if (CHECK(json_object_object_get_ex(root, "pooled_metrics", &pooled) &&
                  json_object_object_get_ex(pooled, "vmaf_ci_p95_lo", &v) &&
                  json_object_object_get_ex(v, "mean", &v),
              "pooled vmaf_ci_p95_lo"))
        mean = json_object_get_double(v);
    CHECK(fabs(mean - sum / frames) <= 2e-6, "pooled mean %.6f vs %.6f", mean, sum / frames);
    json_object_put(root);
}

static void test_collection(void)
{
    char path[1100], spec[1200];
    CollectionRef plain_ref, transformed_ref;
    QgpuContext *ctx;
    int frames, clipped = 0, transformed = 0;
    double max_stddev = 0.0, max_stddev_t = 0.0;

    if (!write_collection(path, sizeof(path)) ||
        !collection_ref_load(&plain_ref, path, NB_MEMBERS + 1, 0, 0))
        return;
    if (!collection_ref_load(&transformed_ref, path, NB_MEMBERS + 1, 1, 1)) {
        collection_ref_free(&plain_ref);
        return;
    }
    ctx = test_open(2);
    if (ctx) {
        snprintf(spec, sizeof(spec), "path=%s", path);
        CHECK(qgpu_use_model(ctx, spec) == 0, "%s: %s", spec, qgpu_last_error(ctx));
        CHECK(qgpu_use_model(ctx, "version=vmaf_float_v0.6.1:name=plain") == 0, "%s",
              qgpu_last_error(ctx));
        snprintf(spec, sizeof(spec), "path=%s:name=t:enable_transform:disable_clip", path);
        CHECK(qgpu_use_model(ctx, spec) == 0, "%s: %s", spec, qgpu_last_error(ctx));
        snprintf(spec, sizeof(spec), "path=%s:name=plain", path);
        CHECK(qgpu_use_model(ctx, spec) == QGPU_ERR_BAD_OPTION, "a collection named like a model");
        frames = run_pair(ctx, dist_y4m);
        if (frames > 0) {
            int n = qgpu_score_count(ctx);
            check_collection(ctx, frames, "vmaf", &plain_ref, in_float, &clipped, &max_stddev);
            check_collection(ctx, frames, "t", &transformed_ref, in_float, &transformed,
                             &max_stddev_t);
            CHECK(n > 10 && !strcmp(qgpu_score_name(ctx, n - 1), "t_ci_p95_hi"),
                  "last score %s", qgpu_score_name(ctx, n - 1));
            CHECK(clipped > 0 && clipped < frames * NB_MEMBERS,
                  "%d member scores clipped: the fixture misses a path", clipped);
            CHECK(transformed > 0, "%d member scores transformed", transformed);
            /* the transform's slope (below 1 near 90, 0 where it clips) scales
             * the stddev */
            CHECK(fabs(max_stddev_t - max_stddev) > 1e-3,
                  "stddev through the transform: %.4f vs %.4f", max_stddev_t, max_stddev);
            printf("collection: %d frames, %d of %d member scores clipped, max stddev %.4f "
                   "(%.4f with enable_transform:disable_clip)\n", frames, clipped,
                   frames * NB_MEMBERS, max_stddev, max_stddev_t);
        }
        qgpu_close(&ctx);
    }
    /* order: without the transformed one, "plain" sits between */
    ctx = test_open(2);
    if (ctx) {
        snprintf(spec, sizeof(spec), "path=%s", path);
        CHECK(qgpu_use_model(ctx, spec) == 0, "%s", qgpu_last_error(ctx));
        CHECK(qgpu_use_model(ctx, "version=vmaf_float_v0.6.1:name=plain") == 0, "%s",
              qgpu_last_error(ctx));
        frames = run_pair(ctx, dist_y4m);
        if (frames > 0) {
            check_order(ctx);
            check_json_log(ctx, frames);
        }
        qgpu_close(&ctx);
    }
    collection_ref_free(&plain_ref);
    collection_ref_free(&transformed_ref);
}

/* ---- collection files: loader ------------------------------------------- */

static void expect_collection_error(const char *what, const char *json, const char *needle)
{
    char err[1024] = "";
    QgpuModel *m = (QgpuModel *)1;
    QgpuModelCollection *c = (QgpuModelCollection *)1;
    int ret = qgpu_model_parse_any(&m, &c, json, strlen(json), "coll.json", 0, err, sizeof(err));
    CHECK(ret == QGPU_ERR_MODEL && !m && !c, "%s: returned %d", what, ret);
    CHECK(strstr(err, needle) != NULL, "%s: message '%s' lacks '%s'", what, err, needle);
}

static void test_collection_loader(void)
{
    char path[1100], err[1024] = "";
    json_object *base = load_json("models/vmaf_float_v0.6.1.json");
    const char *one = base ? json_object_to_json_string_ext(base, JSON_C_TO_STRING_PLAIN) : NULL;
    char *boot = one ? replace_all(one, "\"LIBSVMNUSVR\"", "\"BOOTSTRAP_LIBSVMNUSVR\"") : NULL;
    char *text;
    QgpuModel *m = NULL;
    QgpuModelCollection *c = NULL;

    if (!CHECK(boot != NULL, "fixture"))
        goto out;
    text = malloc(strlen(one) + 3 * strlen(boot) + 64);
    if (!text)
        goto out;
    /* the built-in path: a single model stays single, a collection is one */
    CHECK(qgpu_model_parse_any(&m, &c, one, strlen(one), "single", 0, err, sizeof(err)) == 0 &&
              m && !c, "single model: %s", err);
    qgpu_model_free(&m);
    sprintf(text, "{\"0\": %s, \"1\": %s, \"2\": %s}", boot, boot, boot);
    if (CHECK(qgpu_model_parse_any(&m, &c, text, strlen(text), "vmaf_b_test", 0, err,
                                   sizeof(err)) == 0 && c && !m, "collection: %s", err)) {
        CHECK(c->nb_models == 3 && c->models[1]->type == QGPU_MODEL_TYPE_BOOTSTRAP &&
                  !strcmp(c->models[2]->source, "vmaf_b_test[2]"),
              "collection: %d models", c->nb_models);
        qgpu_model_collection_free(&c);
    }
    /* a bootstrap model alone is a plain model, as in libvmaf */
    CHECK(qgpu_model_parse(&m, boot, strlen(boot), "b", 0, err, sizeof(err)) == 0 && m &&
              m->type == QGPU_MODEL_TYPE_BOOTSTRAP, "bootstrap model alone: %s", err);
    qgpu_model_free(&m);
    CHECK(qgpu_model_parse(&m, text, strlen(text), "b", 0, err, sizeof(err)) == QGPU_ERR_MODEL &&
              strstr(err, "a model collection, where a single model"),
          "collection where a single model is expected: %s", err);

    sprintf(text, "{\"0\": %s}", boot);
    expect_collection_error("no member", text, "needs the models \"0\" and \"1\"");
    sprintf(text, "{\"0\": %s, \"1\": %s}", boot, one);
    expect_collection_error("member not bootstrap", text, "coll.json[1]");
    sprintf(text, "{\"0\": %s, \"1\": %s, \"2\": 7}", boot, boot);
    expect_collection_error("member not an object", text, "coll.json[2]");
    sprintf(text, "{\"0\": %s, \"1\": {\"model_dict\": {}}}", boot);
    expect_collection_error("bad member", text, "coll.json[1]");
    free(text);

    /* through qgpu_use_model: a member's bad feature is reported, nothing
     * is enabled */
    {
        QgpuContext *ctx = test_open(1);
        char *bad = replace_all(boot, "VMAF_feature_motion2_score", "VMAF_feature_motion9_score");
        FILE *f;
        snprintf(path, sizeof(path), "%s/bad_collection.json", tmp_dir);
        f = bad ? fopen(path, "w") : NULL;
        if (f) {
            char spec[1200];
            fprintf(f, "{\"0\": %s, \"1\": %s}", boot, bad);
            fclose(f);
            snprintf(spec, sizeof(spec), "path=%s", path);
            CHECK(ctx && qgpu_use_model(ctx, spec) == QGPU_ERR_MODEL &&
                      strstr(qgpu_last_error(ctx), "[1]") &&
                      strstr(qgpu_last_error(ctx), "motion9"),
                  "bad member through qgpu_use_model: %s", ctx ? qgpu_last_error(ctx) : "");
            CHECK(ctx && qgpu_score_count(ctx) == 0, "nothing enabled");
        }
        free(bad);
        qgpu_close(&ctx);
    }
out:
    free(boot);
    json_object_put(base);
}


/* ---- the tool ------------------------------------------------------------ */

/* The built qgpu: $QGPU_BUILD/qgpu, else beside this test's directory. */
static int find_tool(const char *argv0, char *tool, size_t len)
{
    const char *b = getenv("QGPU_BUILD");
    char tmp[PATH_MAX], path[PATH_MAX + 16], real[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s", argv0);
    if (b && *b)
        snprintf(path, sizeof(path), "%s/qgpu", b);
    else
        snprintf(path, sizeof(path), "%s/../qgpu", dirname(tmp));
    if (access(path, X_OK) || !realpath(path, real))
        return 0;
    snprintf(tool, len, "%s", real);
    return 1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
        (buf = calloc(1, (size_t)n + 1)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (f)
        fclose(f);
    return buf;
}

/* Runs the tool on the bundled pair with `models`, log format `fmt`. */
static int run_tool(const char *tool, const char *models, const char *fmt, const char *out)
{
    char cmd[16384], p1[1024], p2[1024], abs1[PATH_MAX], abs2[PATH_MAX];
    if (!realpath(test_src_path(ref_y4m, p1, sizeof(p1)), abs1) ||
        !realpath(test_src_path(dist_y4m, p2, sizeof(p2)), abs2))
        return -1;
    snprintf(cmd, sizeof(cmd), "cd %s && '%s' -r '%s' -d '%s' %s %s -o %s 2>stderr.txt",
             tmp_dir, tool, abs1, abs2, models, fmt, out);
    return system(cmd);
}

static const char *const tool_names[] = {"vmaf", "kn", "fk", "b", "b_0001", "b_0002",
                                         "b_0003", "b_0004", "b_0005", "b_bagging",
                                         "b_stddev", "b_ci_p95_lo", "b_ci_p95_hi"};
#define NB_TOOL_NAMES ((int)(sizeof(tool_names) / sizeof(tool_names[0])))

static void test_tool(const char *argv0)
{
    char tool[PATH_MAX + 16], coll[1100], models[1400], path[1200];
    QgpuContext *ctx;
    json_object *root = NULL, *frames_arr = NULL;
    int frames = 0;
    char *text;

    if (!find_tool(argv0, tool, sizeof(tool))) {
        printf("skipped: the tool (not built)\n");
        return;
    }
    printf("tool: %s\n", tool);
    if (!write_collection(coll, sizeof(coll)))
        return;
    snprintf(models, sizeof(models),
             "-m version=vmaf_float_v0.6.1neg -m version=vmaf_4k_v0.6.1neg:name=kn "
             "-m version=vmaf_float_4k_v0.6.1:name=fk -m path=%s:name=b", coll);
    ctx = test_open(2);
    if (ctx) {
        char spec[1200];
        CHECK(qgpu_use_model(ctx, "version=vmaf_float_v0.6.1neg") == 0 &&
                  qgpu_use_model(ctx, "version=vmaf_4k_v0.6.1neg:name=kn") == 0 &&
                  qgpu_use_model(ctx, "version=vmaf_float_4k_v0.6.1:name=fk") == 0,
              "%s", qgpu_last_error(ctx));
        snprintf(spec, sizeof(spec), "path=%s:name=b", coll);
        CHECK(qgpu_use_model(ctx, spec) == 0, "%s", qgpu_last_error(ctx));
        frames = run_pair(ctx, dist_y4m);
    }
    if (CHECK(run_tool(tool, models, "--json", "out.json") == 0, "qgpu %s --json", models))
        root = read_log("out.json", frames, &frames_arr);
    if (root) {
        for (int i = 0; i < frames; i++) {
            json_object *metrics = NULL;
            int k = 0, nb = 0;
            json_object_object_get_ex(json_object_array_get_idx(frames_arr, (size_t)i),
                                      "metrics", &metrics);
            json_object_object_foreach(metrics, key, val) {
                nb++;
                (void)key;
                (void)val;
            }
            /* the models' outputs close each frame, in libvmaf's order */
            json_object_object_foreach(metrics, key2, val2) {
                double lib = NAN;
                if (k++ < nb - NB_TOOL_NAMES)
                    continue;
                CHECK(!strcmp(key2, tool_names[k - 1 - (nb - NB_TOOL_NAMES)]),
                      "tool frame %d: %s at %d", i, key2, k);
                qgpu_get_score(ctx, (unsigned)i, key2, &lib);
                CHECK(fabs(json_object_get_double(val2) - lib) <= 5e-7,
                      "tool frame %d %s: %s vs library %.6f", i, key2,
                      json_object_get_string(val2), lib);
            }
        }
    }
    json_object_put(root);
    /* XML and CSV: the same names, per frame and pooled */
    if (CHECK(run_tool(tool, models, "--xml", "out.xml") == 0, "qgpu --xml")) {
        snprintf(path, sizeof(path), "%s/out.xml", tmp_dir);
        text = slurp(path);
        CHECK(text && strstr(text, "b_0005=\"") && strstr(text, " b_ci_p95_hi=\"") &&
                  strstr(text, "<metric name=\"b_stddev\" min=\"") &&
                  strstr(text, "kn=\"") && strstr(text, "fk=\""),
              "XML log names");
        free(text);
    }
    if (CHECK(run_tool(tool, models, "--csv", "out.csv") == 0, "qgpu --csv")) {
        snprintf(path, sizeof(path), "%s/out.csv", tmp_dir);
        text = slurp(path);
        CHECK(text && strstr(text, ",vmaf,kn,fk,b,b_0001,b_0002,b_0003,b_0004,b_0005,"
                                   "b_bagging,b_stddev,b_ci_p95_lo,b_ci_p95_hi,\n"),
              "CSV header");
        free(text);
    }
    qgpu_close(&ctx);
}

/* ---- the built-in collections ------------------------------------------- */

/* libvmaf's bootstrap models, by version= in the library and the tool:
 * every output on every frame against the reference reading the same
 * files, and the tool's JSON log against the library. */
static void check_tool_collection(const char *tool, QgpuContext *ctx, int frames)
{
    json_object *root = NULL, *arr = NULL, *metrics = NULL, *v;
    static const char *const names[] = {"vmaf", "vmaf_0001", "vmaf_0020", "vmaf_bagging",
                                        "vmaf_stddev", "vmaf_ci_p95_lo", "vmaf_ci_p95_hi",
                                        "fb", "fb_0007", "fb_ci_p95_hi"};
    const char *models = "-m version=vmaf_b_v0.6.3 -m version=vmaf_float_b_v0.6.3:name=fb";

    if (CHECK(run_tool(tool, models, "--json", "builtin.json") == 0, "qgpu %s", models))
        root = read_log("builtin.json", frames, &arr);
    if (!root)
        return;
    for (int i = 0; i < frames; i++) {
        json_object_object_get_ex(json_object_array_get_idx(arr, (size_t)i), "metrics",
                                  &metrics);
        for (int k = 0; k < (int)(sizeof(names) / sizeof(names[0])); k++) {
            double lib = NAN;
            v = NULL;
            qgpu_get_score(ctx, (unsigned)i, names[k], &lib);
            CHECK(metrics && json_object_object_get_ex(metrics, names[k], &v) &&
                      fabs(json_object_get_double(v) - lib) <= 5e-7,
                  "tool frame %d %s: %s vs library %.6f", i, names[k],
                  v ? json_object_get_string(v) : "missing", lib);
        }
    }
    CHECK(metrics && !json_object_object_get_ex(metrics, "vmaf_0021", NULL) &&
              !json_object_object_get_ex(metrics, "fb_0021", NULL),
          "20 members, not more");
    json_object_put(root);
}

static void test_builtin_collections(const char *argv0)
{
    static const struct {
        const char *version, *name;
        const char *const *inputs;
    } cases[2] = {{"vmaf_b_v0.6.3", "vmaf", in_int}, {"vmaf_float_b_v0.6.3", "fb", in_float}};
    CollectionRef refs[2];
    char path[1024], tool[PATH_MAX + 16];
    QgpuContext *ctx;
    int loaded = 0, frames;

    for (; loaded < 2; loaded++) {
        char rel[256];
        snprintf(rel, sizeof(rel), "models/%s.json", cases[loaded].version);
        if (!collection_ref_load(&refs[loaded], test_src_path(rel, path, sizeof(path)),
                                 MAX_REF_MODELS, 0, 0))
            break;
    }
    ctx = loaded == 2 ? test_open(2) : NULL;
    if (ctx) {
        CHECK(qgpu_use_model(ctx, "version=vmaf_b_v0.6.3") == 0 &&
                  qgpu_use_model(ctx, "version=vmaf_float_b_v0.6.3:name=fb") == 0,
              "%s", qgpu_last_error(ctx));
        frames = run_pair(ctx, dist_y4m);
        for (int c = 0; c < 2 && frames > 0; c++) {
            int clipped = 0;
            double max_stddev = 0.0;
            check_collection(ctx, frames, cases[c].name, &refs[c], cases[c].inputs, &clipped,
                             &max_stddev);
            printf("%s: %d frames x 20 members, %d member scores clipped, max stddev %.4f\n",
                   cases[c].version, frames, clipped, max_stddev);
        }
        if (frames > 0 && find_tool(argv0, tool, sizeof(tool)))
            check_tool_collection(tool, ctx, frames);
        qgpu_close(&ctx);
    }
    for (int c = 0; c < loaded; c++)
        collection_ref_free(&refs[c]);
}

int main(int argc, char **argv)
{
    if (!CHECK(mkdtemp(tmp_dir) != NULL, "mkdtemp"))
        return test_finish();
    test_single_models();
    test_neg_identical();
    test_collection();
    test_collection_loader();
    test_tool(argc > 0 ? argv[0] : "build/tests/test_model_refs");
    test_builtin_collections(argc > 0 ? argv[0] : "build/tests/test_model_refs");
    {
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmp_dir);
    }
    return test_finish();
}
