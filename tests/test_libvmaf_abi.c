/*
 * libvmaf-qgpu (libvmaf-abi/), through libvmaf's API only, as FFmpeg's
 * libvmaf filter and libvmaf's CLI call it: struct layouts and enum values
 * of libvmaf 3.x's ABI, the error cases, and the scores of a bundled pair
 * (fate/pairs/nf_src01_160x90_nfdis) against libvmaf's golden log, within
 * 5e-5 per frame. Linked with libvmaf.so.3 (the build's), not libqgpu.
 * Paths are relative to $QGPU_SRC (default: the current directory).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvmaf/libvmaf.h>

#include "y4m.h"

#define TOL 5e-5
#define MAX_FRAMES 64
#define PAIR "fate/pairs/nf_src01_160x90_nfdis/"

static int passed, failed;

static int check(int cond, int line, const char *what)
{
    if (cond)
        passed++;
    else {
        failed++;
        printf("FAIL line %d: %s\n", line, what);
    }
    return cond;
}
#define CHECK(cond) check(!!(cond), __LINE__, #cond)

static char src_dir[1024];

static const char *src_path(const char *rel)
{
    static char buf[4][2048];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", src_dir, rel);
    return buf[k];
}

/* ---- libvmaf 3.x's ABI on LP64 (its public headers' field order) ---- */
static void test_layout(void)
{
    CHECK(sizeof(VmafPicture) == 96);
    CHECK(offsetof(VmafPicture, bpc) == 4);
    CHECK(offsetof(VmafPicture, w) == 8);
    CHECK(offsetof(VmafPicture, h) == 20);
    CHECK(offsetof(VmafPicture, stride) == 32);
    CHECK(offsetof(VmafPicture, data) == 56);
    CHECK(offsetof(VmafPicture, ref) == 80);
    CHECK(offsetof(VmafPicture, priv) == 88);
    CHECK(sizeof(VmafConfiguration) == 32);
    CHECK(offsetof(VmafConfiguration, n_threads) == 4);
    CHECK(offsetof(VmafConfiguration, n_subsample) == 8);
    CHECK(offsetof(VmafConfiguration, cpumask) == 16);
    CHECK(offsetof(VmafConfiguration, gpumask) == 24);
    CHECK(sizeof(VmafModelConfig) == 16);
    CHECK(offsetof(VmafModelConfig, flags) == 8);
    CHECK(sizeof(VmafModelCollectionScore) == 40);
    CHECK(offsetof(VmafModelCollectionScore, bootstrap.bagging_score) == 8);
    CHECK(offsetof(VmafModelCollectionScore, bootstrap.ci.p95.hi) == 32);
    CHECK(VMAF_PIX_FMT_YUV420P == 1 && VMAF_PIX_FMT_YUV400P == 4);
    CHECK(VMAF_LOG_LEVEL_NONE == 0 && VMAF_LOG_LEVEL_DEBUG == 4);
    CHECK(VMAF_OUTPUT_FORMAT_XML == 1 && VMAF_OUTPUT_FORMAT_JSON == 2 &&
          VMAF_OUTPUT_FORMAT_SUB == 4);
    CHECK(VMAF_POOL_METHOD_MIN == 1 && VMAF_POOL_METHOD_MEAN == 3 &&
          VMAF_POOL_METHOD_HARMONIC_MEAN == 4);
    CHECK(VMAF_MODEL_FLAG_DISABLE_CLIP == 1 && VMAF_MODEL_FLAG_ENABLE_TRANSFORM == 2 &&
          VMAF_MODEL_FLAG_DISABLE_TRANSFORM == 4);
    CHECK(VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP == 1);
    CHECK(vmaf_version() && !strncmp(vmaf_version(), "3.", 2));
}

/* ---- errors that need no device ---- */
static void test_errors_host(void)
{
    VmafModel *model = (VmafModel *)1;
    VmafModelCollection *coll = NULL;
    VmafModelConfig cfg = { .name = "vmaf" };
    VmafFeatureDictionary *d = NULL;
    VmafPicture pic;

    CHECK(vmaf_init(NULL, (VmafConfiguration){ 0 }) == -EINVAL);
    CHECK(vmaf_model_load(&model, &cfg, "vmaf_v9.9") < 0 && !model);
    CHECK(vmaf_model_load_from_path(&model, &cfg, "/nonexistent/model.json") < 0);
    CHECK(vmaf_model_load(&model, &cfg, "vmaf_b_v0.6.3") == -EINVAL); /* a collection */
    CHECK(vmaf_model_collection_load(&model, &coll, &cfg, "vmaf_v0.6.1") == -EINVAL);
    CHECK(!coll);
    CHECK(vmaf_picture_alloc(&pic, VMAF_PIX_FMT_UNKNOWN, 8, 16, 16) == -EINVAL);
    CHECK(vmaf_picture_alloc(&pic, VMAF_PIX_FMT_YUV420P, 7, 16, 16) == -EINVAL);
    CHECK(vmaf_picture_alloc(&pic, VMAF_PIX_FMT_YUV420P, 8, 0, 16) == -EINVAL);
    CHECK(vmaf_picture_unref(NULL) == -EINVAL);
    CHECK(vmaf_picture_alloc(&pic, VMAF_PIX_FMT_YUV420P, 10, 17, 9) == 0);
    CHECK(pic.w[1] == 9 && pic.h[1] == 5 && pic.stride[0] >= 34 && pic.data[2]);
    CHECK(vmaf_picture_unref(&pic) == 0 && !pic.ref);
    CHECK(vmaf_feature_dictionary_set(NULL, "a", "b") == -EINVAL);
    CHECK(vmaf_feature_dictionary_set(&d, "enable_chroma", "false") == 0 && d);
    CHECK(vmaf_feature_dictionary_set(&d, "enable_chroma", "true") == 0);
    CHECK(vmaf_feature_dictionary_free(&d) == 0 && !d);
    CHECK(vmaf_feature_dictionary_free(NULL) == -EINVAL);
    CHECK(vmaf_model_load(&model, &cfg, "vmaf_v0.6.1") == 0);
    CHECK(vmaf_model_feature_overload(model, "adm", NULL) == -EINVAL);
    vmaf_model_destroy(model);
}

/* ---- the golden log: "name": value lines of each frame ---- */
typedef struct Golden {
    char names[32][64];
    double v[MAX_FRAMES][32];
    int nb_names, nb_frames;
} Golden;

static int golden_read(Golden *g, const char *path)
{
    char line[512];
    int frame = -1;
    FILE *f = fopen(path, "r");
    memset(g, 0, sizeof(*g));
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        char name[64];
        double v;
        int k;
        if (strstr(line, "\"pooled_metrics\""))
            break;
        if (sscanf(line, " \"frameNum\": %d", &frame) == 1) {
            if (frame >= MAX_FRAMES)
                break;
            g->nb_frames = frame + 1;
            continue;
        }
        if (frame < 0 || sscanf(line, " \"%63[^\"]\": %lf", name, &v) != 2)
            continue;
        for (k = 0; k < g->nb_names && strcmp(g->names[k], name); k++)
            ;
        if (k == g->nb_names) {
            if (k == 32)
                continue;
            snprintf(g->names[k], sizeof(g->names[k]), "%s", name);
            g->nb_names++;
        }
        g->v[frame][k] = v;
    }
    fclose(f);
    return g->nb_frames ? 0 : -1;
}

static double golden(const Golden *g, int frame, const char *name)
{
    for (int k = 0; k < g->nb_names; k++)
        if (!strcmp(g->names[k], name))
            return g->v[frame][k];
    return NAN;
}

/* One y4m frame into a picture allocated by the library, as FFmpeg copies
 * its frames (copy_picture_data in vf_libvmaf.c). */
static int to_picture(const Y4mFile *y, const unsigned char *buf, VmafPicture *pic)
{
    QgpuPicture q;
    const unsigned bytes = y->bitdepth > 8 ? 2 : 1;
    y4m_picture(y, buf, &q);
    if (y->layout != QGPU_LAYOUT_420 ||
        vmaf_picture_alloc(pic, VMAF_PIX_FMT_YUV420P, (unsigned)y->bitdepth,
                           (unsigned)y->width, (unsigned)y->height))
        return -1;
    for (int p = 0; p < 3; p++)
        for (unsigned r = 0; r < pic->h[p]; r++)
            memcpy((char *)pic->data[p] + r * pic->stride[p],
                   (const char *)q.data[p] + r * q.stride[p], pic->w[p] * bytes);
    return 0;
}

static const char *const compared[] = {"integer_adm2", "integer_vif_scale0", "integer_vif_scale3",
                                       "integer_motion2", "psnr_y", "psnr_cb"};

static int near(double a, double b)
{
    return fabs(a - b) <= TOL;
}

/* Reads the pair into vmaf: 3 pictures, then a score of frame 0 (the
 * device is waited for), the last frame (needs the next picture), the
 * rest, the errors of a stream. Returns the number of frames read. */
static int feed(VmafContext *vmaf, VmafModel *model, const Golden *g)
{
    Y4mFile ref, dist;
    char err[256];
    unsigned char *rbuf = NULL, *dbuf = NULL;
    unsigned n = 0;
    double s;

    if (!CHECK(!y4m_open(&ref, src_path("fate/refs/nf_src01_160x90_48f.y4m"), err, sizeof(err)) &&
               !y4m_open(&dist, src_path(PAIR "dis.y4m"), err, sizeof(err))))
        return 0;
    rbuf = malloc(ref.frame_bytes);
    dbuf = malloc(dist.frame_bytes);
    while (rbuf && dbuf && y4m_read(&ref, rbuf) == 1 && y4m_read(&dist, dbuf) == 1) {
        VmafPicture pr, pd;
        if (!CHECK(!to_picture(&ref, rbuf, &pr) && !to_picture(&dist, dbuf, &pd)))
            break;
        if (n == 1) { /* out of order: refused, and both pictures taken */
            VmafPicture xr, xd;
            CHECK(!to_picture(&ref, rbuf, &xr) && !to_picture(&dist, dbuf, &xd));
            CHECK(vmaf_read_pictures(vmaf, &xr, &xd, 5) == -EINVAL && !xr.ref && !xd.ref);
            CHECK(vmaf_read_pictures(vmaf, &xr, NULL, 1) == -EINVAL);
        }
        if (!CHECK(vmaf_read_pictures(vmaf, &pr, &pd, n) == 0))
            break;
        CHECK(!pr.ref && !pd.ref); /* the library took them */
        n++;
        if (n == 3) {
            CHECK(vmaf_score_at_index(vmaf, model, &s, 0) == 0 && near(s, golden(g, 0, "vmaf")));
            CHECK(vmaf_score_at_index(vmaf, model, &s, 2) == -EAGAIN); /* motion: frame 3 */
            CHECK(vmaf_score_at_index(vmaf, model, &s, 3) == -EINVAL); /* not read */
        }
    }
    free(rbuf);
    free(dbuf);
    y4m_close(&ref);
    y4m_close(&dist);
    return (int)n;
}

static void test_scores(void)
{
    VmafContext *vmaf = NULL;
    VmafModel *model = NULL, *lead = NULL;
    VmafModelCollection *coll = NULL;
    VmafModelConfig mcfg = { .name = "vmaf", .flags = VMAF_MODEL_FLAGS_DEFAULT };
    VmafModelConfig bcfg = { .name = "vmaf_b" };
    VmafModelConfig tcfg = { .name = "vmaf_phone", .flags = VMAF_MODEL_FLAG_ENABLE_TRANSFORM };
    VmafModelConfig ncfg = { .name = "vmaf_plain", .flags = VMAF_MODEL_FLAG_ENABLE_TRANSFORM |
                                                             VMAF_MODEL_FLAG_DISABLE_TRANSFORM };
    VmafModel *phone = NULL, *plain = NULL, *same_name = NULL;
    double t;
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_WARNING, .n_subsample = 1 };
    VmafFeatureDictionary *d = NULL;
    VmafModelCollectionScore cs;
    static Golden g;
    double s, mean = 0;
    int n, worst_ok = 1;
    char log_path[] = "/tmp/qgpu-libvmaf-abi-XXXXXX";

    if (!CHECK(!golden_read(&g, src_path(PAIR "nf_src01_160x90_nfdis.vmaf.json"))))
        return;
    if (!CHECK(vmaf_init(&vmaf, cfg) == 0))
        return;
    CHECK(vmaf_model_load(&model, &mcfg, "vmaf_v0.6.1") == 0);
    CHECK(vmaf_use_features_from_model(vmaf, model) == 0);
    CHECK(vmaf_model_collection_load(&lead, &coll, &bcfg, "vmaf_b_v0.6.3") == 0 && lead);
    CHECK(vmaf_use_features_from_model_collection(vmaf, coll) == 0);
    /* the phone transform of vmaf_v0.6.1, and DISABLE_TRANSFORM winning over it */
    CHECK(vmaf_model_load(&phone, &tcfg, "vmaf_v0.6.1") == 0);
    CHECK(vmaf_use_features_from_model(vmaf, phone) == 0);
    CHECK(vmaf_model_load(&plain, &ncfg, "vmaf_v0.6.1") == 0);
    CHECK(vmaf_use_features_from_model(vmaf, plain) == 0);
    /* a second model named "vmaf" (FFmpeg 5.1's model_path= beside its
     * default model): its features only, the score stays the first one's */
    CHECK(vmaf_model_load(&same_name, &mcfg, "vmaf_4k_v0.6.1") == 0);
    CHECK(vmaf_use_features_from_model(vmaf, same_name) == 0);
    CHECK(vmaf_use_feature(vmaf, "no_such_feature", NULL) == -EINVAL);
    CHECK(vmaf_feature_dictionary_set(&d, "enable_chroma", "true") == 0);
    CHECK(vmaf_use_feature(vmaf, "psnr", d) == 0); /* takes d */
    CHECK(vmaf_import_feature_score(vmaf, "x", 1.0, 0) == -ENOTSUP);

    n = feed(vmaf, model, &g);
    CHECK(n == g.nb_frames);
    CHECK(vmaf_score_at_index(vmaf, model, &s, (unsigned)n - 1) == -EAGAIN);
    CHECK(vmaf_read_pictures(vmaf, NULL, NULL, 0) == 0);
    for (int i = 0; i < n; i++) {
        int ok = vmaf_score_at_index(vmaf, model, &s, (unsigned)i) == 0 &&
                 near(s, golden(&g, i, "vmaf"));
        mean += s;
        for (size_t k = 0; k < sizeof(compared) / sizeof(compared[0]); k++) {
            double f;
            ok &= vmaf_feature_score_at_index(vmaf, compared[k], &f, (unsigned)i) == 0 &&
                  near(f, golden(&g, i, compared[k]));
        }
        if (!ok)
            printf("frame %d differs from the golden log\n", i);
        worst_ok &= ok;
    }
    CHECK(worst_ok);
    CHECK(vmaf_feature_score_at_index(vmaf, "VMAF_integer_feature_adm2_score", &s, 0) == 0 &&
          near(s, golden(&g, 0, "integer_adm2")));
    CHECK(vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MEAN, &s, 0, (unsigned)n - 1) == 0 &&
          near(s, mean / n));
    CHECK(vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MIN, &s, 2, 2) == 0 &&
          near(s, golden(&g, 2, "vmaf")));
    CHECK(vmaf_feature_score_pooled(vmaf, "psnr_y", VMAF_POOL_METHOD_MAX, &s, 0, 1) == 0 &&
          near(s, fmax(golden(&g, 0, "psnr_y"), golden(&g, 1, "psnr_y"))));
    CHECK(vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_UNKNOWN, &s, 0, 1) == -EINVAL);
    CHECK(vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MEAN, &s, 3, 2) == -EINVAL);
    CHECK(vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MEAN, &s, 0, (unsigned)n) == -EINVAL);
    CHECK(vmaf_score_at_index(vmaf, model, &s, 1) == 0 &&
          vmaf_score_at_index(vmaf, phone, &t, 1) == 0 && t > s + 1);
    CHECK(vmaf_score_at_index(vmaf, plain, &t, 1) == 0 && t == s);
    CHECK(vmaf_score_at_index(vmaf, same_name, &t, 1) == 0 && t == s);
    CHECK(vmaf_score_at_index_model_collection(vmaf, coll, &cs, 0) == 0 &&
          cs.type == VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP &&
          cs.bootstrap.ci.p95.lo <= cs.bootstrap.bagging_score &&
          cs.bootstrap.bagging_score <= cs.bootstrap.ci.p95.hi && cs.bootstrap.stddev > 0);
    CHECK(vmaf_score_pooled_model_collection(vmaf, coll, VMAF_POOL_METHOD_MEAN, &cs, 0,
                                             (unsigned)n - 1) == 0 &&
          cs.bootstrap.bagging_score > 0);

    /* the JSON log, as vf_libvmaf writes it, read back */
    if (CHECK(mkstemp(log_path) >= 0)) {
        static Golden out;
        int ok = 1;
        CHECK(vmaf_write_output(vmaf, log_path, VMAF_OUTPUT_FORMAT_NONE) == -EINVAL);
        CHECK(vmaf_write_output_with_format(vmaf, log_path, VMAF_OUTPUT_FORMAT_JSON, "%.17g") ==
              -ENOTSUP);
        CHECK(vmaf_write_output(vmaf, "/nonexistent/dir/x.json", VMAF_OUTPUT_FORMAT_JSON) < 0);
        CHECK(vmaf_write_output(vmaf, log_path, VMAF_OUTPUT_FORMAT_JSON) == 0);
        CHECK(!golden_read(&out, log_path) && out.nb_frames == n);
        for (int i = 0; i < n; i++)
            ok &= near(golden(&out, i, "vmaf"), golden(&g, i, "vmaf")) &&
                  near(golden(&out, i, "psnr_y"), golden(&g, i, "psnr_y"));
        CHECK(ok);
        remove(log_path);
    }
    CHECK(vmaf_close(vmaf) == 0);
    vmaf_model_destroy(model);
    vmaf_model_destroy(phone);
    vmaf_model_destroy(plain);
    vmaf_model_destroy(same_name);
    vmaf_model_collection_destroy(coll);
}

int main(void)
{
    const char *src = getenv("QGPU_SRC");
    snprintf(src_dir, sizeof(src_dir), "%s", src && *src ? src : ".");
    test_layout();
    test_errors_host();
    test_scores();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
