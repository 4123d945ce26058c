/* float_ssim and float_ms_ssim on the device vs the plain-C reference
 * (tests/ref/ssim_ref.c): random sizes (odd too), every layout, 8..16 bit,
 * padded strides, pipeline depths 1..3, content with flat, smooth and
 * noisy regions; every option; the size limits and bad options. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "ssim_ref.h"

/* Device vs reference, per frame. Both build the same float moment planes;
 * the device computes l, c, s in float (libvmaf: partly in double) and
 * sums per work-group in float, which moves a mean by ~1e-7. */
#define TOL 2e-6

/* Picture content SSIM cares about: flat areas (variance from rounding
 * only), smooth gradients, edges and noise. kind 0: uniform noise. */
static void fill_content(TestPicture *t, int kind)
{
    int max = (1 << t->pic.bitdepth) - 1;
    int w = t->pic.width, h = t->pic.height;
    if (kind == 0) {
        test_picture_random(t);
        return;
    }
    test_picture_random(t); /* chroma: anything */
    int bx = test_rand_range(4, 40), by = test_rand_range(4, 40);
    double fx = test_rand_range(3, 30), fy = test_rand_range(3, 30);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            double v;
            int block = ((x / bx) + (y / by)) % 4;
            if (block == 0)
                v = 0.8; /* flat, bright */
            else if (block == 1)
                v = 0.5 + 0.4 * sin(x / fx) * cos(y / fy);
            else if (block == 2)
                v = (x / bx) % 2 ? 0.05 : 0.95; /* edges */
            else
                v = 0.5 + 0.3 * ((double)test_rand() / 4294967296.0 - 0.5);
            int s = (int)lround(v * max);
            test_set_sample(t, 0, x, y, (unsigned)(s < 0 ? 0 : s > max ? max : s));
        }
    }
}

/* dist = ref with noise of amplitude amp in some blocks, identical elsewhere */
static void make_dist(TestPicture *dist, const TestPicture *ref, int amp)
{
    int max = (1 << ref->pic.bitdepth) - 1;
    int bs = test_rand_range(8, 64);
    test_picture_noisy_copy(dist, ref, amp);
    for (int y = 0; y < ref->pic.height; y++)
        for (int x = 0; x < ref->pic.width; x++)
            if (((x / bs) + 2 * (y / bs)) % 3 == 0) {
                unsigned v = test_sample(&ref->pic, 0, x, y);
                test_set_sample(dist, 0, x, y, v);
            } else if (((x / bs) + (y / bs)) % 5 == 1) {
                int v = (int)test_sample(&ref->pic, 0, x, y) + amp * 4;
                test_set_sample(dist, 0, x, y, (unsigned)(v > max ? max : v));
            }
}

static float *luma_floats(const QgpuPicture *p)
{
    float *f = malloc(sizeof(float) * p->width * p->height);
    if (f)
        ssim_ref_luma_to_float(p->data[0], p->stride[0], p->width, p->height, p->bitdepth, f);
    return f;
}

/* variant 1: uniform noise, else fill_content; distorted: make_dist with
 * an amplitude that depends on the case and grows by one a frame */
static void fill_ssim(TestClip *clip, int frame)
{
    const TestCase *c = clip->c;
    fill_content(&clip->ref[frame], c->variant == 1 ? 0 : 1);
    make_dist(&clip->dist[frame], &clip->ref[frame], 1 + (c->w * 7) % 20 + frame);
}

/* A row's features and options, for the reference. expect[] order:
 * float_ssim (if on), its l, c, s (with lcs), float_ms_ssim (if on), its
 * l, c, s of scales 0..4 (with lcs). */
typedef struct SsimArgs {
    int ssim, scale, ssim_db, ssim_clip, ssim_lcs;
    int ms, ms_db, ms_clip, ms_lcs;
} SsimArgs;

/* In dB the bound grows with the score: d(dB) = 4.34 d(ssim) / (1 - ssim). */
static void put_score(const TestClip *clip, int *k, double score, int db, int clip_db,
                      double *e, double *bound)
{
    const TestCase *c = clip->c;
    if (db) {
        e[*k] = ssim_ref_to_db(score, ssim_ref_max_db(c->bitdepth, c->w, c->h, clip_db));
        bound[*k] = TOL * 4.35 / (1 - score);
    } else {
        e[*k] = score;
    }
    (*k)++;
}

static int ssim_expect(const TestClip *clip, const SsimArgs *o, const float *a, const float *b,
                      double *e, double *bound)
{
    const TestCase *c = clip->c;
    int k = 0;
    if (o->ssim) {
        double r[4];
        if (ssim_ref_float_ssim(a, b, c->w, c->h, o->scale, r))
            return -1;
        put_score(clip, &k, r[0], o->ssim_db, o->ssim_clip, e, bound);
        for (int j = 1; o->ssim_lcs && j < 4; j++)
            e[k++] = r[j];
    }
    if (o->ms) {
        double ms, l[5], cc[5], s[5];
        if (ssim_ref_float_ms_ssim(a, b, c->w, c->h, &ms, l, cc, s))
            return -1;
        put_score(clip, &k, ms, o->ms_db, o->ms_clip, e, bound);
        for (int j = 0; o->ms_lcs && j < 5; j++) {
            e[k + j] = l[j];
            e[k + 5 + j] = cc[j];
            e[k + 10 + j] = s[j];
        }
    }
    return 0;
}

static int ssim_frame(const TestClip *clip, int frame, const void *arg, double *e,
                          double *bound)
{
    float *a = luma_floats(&clip->ref[frame].pic), *b = luma_floats(&clip->dist[frame].pic);
    int err = !a || !b || ssim_expect(clip, arg, a, b, e, bound);
    free(a);
    free(b);
    return err ? -1 : 0;
}

static const char *const ssim_outputs[] = {"float_ssim", NULL};
static const char *const ms_outputs[] = {"float_ms_ssim", NULL};
static const char *const both_outputs[] = {"float_ssim", "float_ms_ssim", NULL};
static const char *const ssim_lcs_ms_outputs[] = {"float_ssim", "float_ssim_l", "float_ssim_c",
                                                  "float_ssim_s", "float_ms_ssim", NULL};
static const char *const all_outputs[] = {
    "float_ssim",             "float_ssim_l",           "float_ssim_c",
    "float_ssim_s",           "float_ms_ssim",          "float_ms_ssim_l_scale0",
    "float_ms_ssim_l_scale1", "float_ms_ssim_l_scale2", "float_ms_ssim_l_scale3",
    "float_ms_ssim_l_scale4", "float_ms_ssim_c_scale0", "float_ms_ssim_c_scale1",
    "float_ms_ssim_c_scale2", "float_ms_ssim_c_scale3", "float_ms_ssim_c_scale4",
    "float_ms_ssim_s_scale0", "float_ms_ssim_s_scale1", "float_ms_ssim_s_scale2",
    "float_ms_ssim_s_scale3", "float_ms_ssim_s_scale4", NULL};

/* Device vs reference, per frame. Both build the same float moment planes;
 * the device computes l, c, s in float (libvmaf: partly in double) and
 * sums per work-group in float, which moves a mean by ~1e-7. */
static const TestTolerance ssim_tol = {TOL, 0, 0};

/* {ssim, scale, db, clip, lcs, ms, db, clip, lcs} */
static const SsimArgs ssim_only = {1, 0, 0, 0, 0, 0, 0, 0, 0};
static const SsimArgs scale1 = {1, 1, 0, 0, 0, 0, 0, 0, 0}, scale2 = {1, 2, 0, 0, 0, 0, 0, 0, 0},
                      scale3 = {1, 3, 0, 0, 0, 0, 0, 0, 0}, scale5 = {1, 5, 0, 0, 0, 0, 0, 0, 0},
                      scale7 = {1, 7, 0, 0, 0, 0, 0, 0, 0};
static const SsimArgs ms_only = {0, 0, 0, 0, 0, 1, 0, 0, 0};
static const SsimArgs both = {1, 0, 0, 0, 0, 1, 0, 0, 0};
static const SsimArgs lcs = {1, 0, 0, 0, 1, 1, 0, 0, 1};
static const SsimArgs db = {1, 0, 1, 0, 1, 1, 1, 0, 0};
static const SsimArgs clip_db = {1, 2, 1, 1, 0, 1, 1, 1, 0};

/* {w, h, layout, bitdepth, depth, frames, stride_pad, variant (1: noise)} */
static const TestCase ssim_cases[] = {
    {11, 11, QGPU_LAYOUT_400, 8, 1, 2, 0, 2}, /* float_ssim's smallest input */
    /* auto scale: 512x384 rounds 1.5 up to 2; 1920x1080 gives 4 */
    {512, 384, QGPU_LAYOUT_420, 8, 1, 1, 0, 2},
    {1920, 1080, QGPU_LAYOUT_400, 8, 1, 1, 0, 2},
};
/* ms_ssim's smallest, odd sizes whose decimation adds a row/column
 * (w / f + (w & 1)) */
static const TestCase both_cases[] = {
    {176, 176, QGPU_LAYOUT_420, 8, 2, 1, 3, 2},
    {513, 385, QGPU_LAYOUT_420, 8, 2, 1, 0, 2},
    {383, 287, QGPU_LAYOUT_420, 10, 1, 1, 0, 2},
};
static const TestCase ms_cases[] = {{177, 203, QGPU_LAYOUT_444, 8, 1, 1, 0, 2}};
/* explicit factors, including ones whose weight 1/f^2 is inexact */
static const TestCase scale1_cases[] = {{237, 171, QGPU_LAYOUT_420, 8, 2, 1, 2, 2}};
static const TestCase scale2_cases[] = {{247, 164, QGPU_LAYOUT_420, 10, 2, 1, 2, 2}};
static const TestCase scale3_cases[] = {{257, 157, QGPU_LAYOUT_420, 8, 2, 1, 2, 2}};
static const TestCase scale5_cases[] = {{267, 150, QGPU_LAYOUT_420, 10, 2, 1, 2, 2}};
static const TestCase scale7_cases[] = {{301, 120, QGPU_LAYOUT_420, 8, 2, 1, 2, 2}}; /* 17 rows */
static const TestCase lcs_cases[] = {{260, 190, QGPU_LAYOUT_420, 8, 2, 2, 0, 2}};
static const TestCase db_cases[] = {{300, 180, QGPU_LAYOUT_422, 10, 1, 1, 0, 2}};
static const TestCase clip_db_cases[] = {{200, 190, QGPU_LAYOUT_444, 12, 1, 1, 0, 2}};

static const TestRandom ssim_random = {.min_w = 11, .max_w = 260, .min_h = 11, .max_h = 200,
                                       .max_frames = 3, .max_depth = 3, .max_pad = 40,
                                       .max_variant = 3};
static const TestRandom both_random = {.min_w = 176, .max_w = 330, .min_h = 176, .max_h = 260,
                                       .max_frames = 2, .max_depth = 3, .max_pad = 17};

static const TestRow rows[] = {
    {.name = "float_ssim", .spec = "float_ssim", .frame_reference = ssim_frame,
     .ref_arg = &ssim_only, .outputs = ssim_outputs, .tol = ssim_tol, .fill = fill_ssim,
     .cases = ssim_cases, .nb_cases = 3, .random = &ssim_random, .nb_random = 12},
    {.name = "float_ssim_ms_ssim", .spec = "float_ssim float_ms_ssim",
     .frame_reference = ssim_frame, .ref_arg = &both, .outputs = both_outputs, .tol = ssim_tol,
     .fill = fill_ssim, .cases = both_cases, .nb_cases = 3, .random = &both_random,
     .nb_random = 4},
    {.name = "float_ms_ssim", .spec = "float_ms_ssim", .frame_reference = ssim_frame,
     .ref_arg = &ms_only, .outputs = ms_outputs, .tol = ssim_tol, .fill = fill_ssim,
     .cases = ms_cases, .nb_cases = 1},
    {.name = "float_ssim_scale1", .spec = "float_ssim=scale=1", .frame_reference = ssim_frame,
     .ref_arg = &scale1, .outputs = ssim_outputs, .tol = ssim_tol, .fill = fill_ssim,
     .cases = scale1_cases, .nb_cases = 1},
    {.name = "float_ssim_scale2", .spec = "float_ssim=scale=2", .frame_reference = ssim_frame,
     .ref_arg = &scale2, .outputs = ssim_outputs, .tol = ssim_tol, .fill = fill_ssim,
     .cases = scale2_cases, .nb_cases = 1},
    {.name = "float_ssim_scale3", .spec = "float_ssim=scale=3", .frame_reference = ssim_frame,
     .ref_arg = &scale3, .outputs = ssim_outputs, .tol = ssim_tol, .fill = fill_ssim,
     .cases = scale3_cases, .nb_cases = 1},
    {.name = "float_ssim_scale5", .spec = "float_ssim=scale=5", .frame_reference = ssim_frame,
     .ref_arg = &scale5, .outputs = ssim_outputs, .tol = ssim_tol, .fill = fill_ssim,
     .cases = scale5_cases, .nb_cases = 1},
    {.name = "float_ssim_scale7", .spec = "float_ssim=scale=7", .frame_reference = ssim_frame,
     .ref_arg = &scale7, .outputs = ssim_outputs, .tol = ssim_tol, .fill = fill_ssim,
     .cases = scale7_cases, .nb_cases = 1},
    {.name = "float_ssim_lcs", .spec = "float_ssim=enable_lcs=true float_ms_ssim=enable_lcs=true",
     .frame_reference = ssim_frame, .ref_arg = &lcs, .outputs = all_outputs, .tol = ssim_tol,
     .fill = fill_ssim, .cases = lcs_cases, .nb_cases = 1},
    {.name = "float_ssim_db",
     .spec = "float_ssim=enable_db=true:enable_lcs=true float_ms_ssim=enable_db=true",
     .frame_reference = ssim_frame, .ref_arg = &db, .outputs = ssim_lcs_ms_outputs,
     .tol = ssim_tol, .fill = fill_ssim, .cases = db_cases, .nb_cases = 1},
    {.name = "float_ssim_clip_db",
     .spec = "float_ssim=enable_db=true:clip_db=true:scale=2 "
             "float_ms_ssim=enable_db=true:clip_db=true",
     .frame_reference = ssim_frame, .ref_arg = &clip_db, .outputs = both_outputs,
     .tol = ssim_tol, .fill = fill_ssim, .cases = clip_db_cases, .nb_cases = 1},
};

/* Identical pictures: 1.0 (the flat-region clamp keeps s at 1); in dB with
 * clip_db the score is at most the clip value. */
static void test_identical(void)
{
    TestPicture a;
    double v = 0, vdb = 0, ms = ssim_ref_max_db(8, 200, 180, 1);
    test_picture_alloc(&a, 200, 180, QGPU_LAYOUT_420, 8, 0);
    fill_content(&a, 1);
    QgpuContext *ctx = test_score_pairs("float_ssim float_ms_ssim=enable_db=true:clip_db=true", 1,
                                        &a, &a, 1);
    if (ctx) {
        CHECK(qgpu_get_score(ctx, 0, "float_ssim", &v) == 0 && fabs(v - 1.0) < 1e-6,
              "identical float_ssim %.9f", v);
        CHECK(qgpu_get_score(ctx, 0, "float_ms_ssim", &vdb) == 0, "ms_ssim dB missing");
        CHECK(vdb <= ms && vdb > 50.0, "identical float_ms_ssim dB %.6f (clip %.1f)", vdb, ms);
    }
    test_picture_free(&a);
    qgpu_close(&ctx);
}

/* Too-small inputs fail at the first submit with a message naming the
 * metric and the minimum; bad options fail at enable. */
static void test_errors(void)
{
    static const char *const bad[] = {"float_ssim=scale=11", "float_ssim=scale=-1",
                                      "float_ssim=enable_lcs=maybe", "float_ms_ssim=clip_db=2",
                                      NULL};
    test_expect_refused("float_ssim", 10, 40, QGPU_LAYOUT_420, 8, QGPU_ERR_UNSUPPORTED,
                        "float_ssim", NULL);
    test_expect_refused("float_ssim", 40, 10, QGPU_LAYOUT_420, 8, QGPU_ERR_UNSUPPORTED, "11x11",
                        NULL);
    test_expect_refused("float_ssim=scale=10", 100, 300, QGPU_LAYOUT_420, 8,
                        QGPU_ERR_UNSUPPORTED, "float_ssim", NULL);
    test_expect_refused("float_ms_ssim", 175, 400, QGPU_LAYOUT_420, 8, QGPU_ERR_UNSUPPORTED,
                        "float_ms_ssim", NULL);
    test_expect_refused("float_ms_ssim", 400, 175, QGPU_LAYOUT_420, 8, QGPU_ERR_UNSUPPORTED,
                        "176x176", NULL);
    test_expect_bad_options(bad);

    QgpuContext *ctx = test_open(1);
    if (!ctx)
        return;
    CHECK(qgpu_enable_feature(ctx, "float_ms_ssim=scale=2") < 0, "ms_ssim has no scale");
    qgpu_close(&ctx);
}

/* Output names: libvmaf's, in libvmaf's order. */
static void test_names(void)
{
    static const char *const expect[] = {
        "float_ssim", "float_ssim_l", "float_ssim_c", "float_ssim_s", "float_ms_ssim",
        "float_ms_ssim_l_scale0", "float_ms_ssim_l_scale1", "float_ms_ssim_l_scale2",
        "float_ms_ssim_l_scale3", "float_ms_ssim_l_scale4", "float_ms_ssim_c_scale0",
        "float_ms_ssim_c_scale1", "float_ms_ssim_c_scale2", "float_ms_ssim_c_scale3",
        "float_ms_ssim_c_scale4", "float_ms_ssim_s_scale0", "float_ms_ssim_s_scale1",
        "float_ms_ssim_s_scale2", "float_ms_ssim_s_scale3", "float_ms_ssim_s_scale4",
    };
    TestPicture a;
    test_picture_alloc(&a, 180, 180, QGPU_LAYOUT_400, 8, 0);
    test_picture_random(&a);
    QgpuContext *ctx = test_score_pairs("float_ssim=enable_lcs=true float_ms_ssim=enable_lcs=true",
                                        1, &a, &a, 1);
    CHECK(ctx && qgpu_score_count(ctx) == 20, "%d scores", ctx ? qgpu_score_count(ctx) : -1);
    for (int i = 0; ctx && i < 20 && i < qgpu_score_count(ctx); i++)
        CHECK(!strcmp(qgpu_score_name(ctx, i), expect[i]), "score %d is %s, want %s", i,
              qgpu_score_name(ctx, i), expect[i]);
    test_picture_free(&a);
    qgpu_close(&ctx);
}

static const TestExtra extras[] = {
    {"float_ssim_identical", test_identical},
    {"float_ssim_errors", test_errors},
    {"float_ssim_names", test_names},
};

int main(int argc, char **argv)
{
    /* both paths of the filter sums (libqgpu/src/feature/ssim.cl):
     * float-float, then double (where the device has fp64; elsewhere
     * QGPU_SSIM_FP64=1 falls back to float-float) */
    return test_main_both_paths(argc, argv, "QGPU_SSIM_FP64", "0", "1", rows,
                                sizeof(rows) / sizeof(rows[0]), extras, 3);
}
