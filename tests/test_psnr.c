/* psnr on the device vs the plain-C reference: random sizes (odd too),
 * every layout, 8..16 bit, padded strides, pipeline depths 1..4; options. */
#include <math.h>
#include <string.h>

#include "driver.h"
#include "psnr_ref.h"

static const char *const psnr_outputs[] = {"psnr_y", "psnr_cb", "psnr_cr", NULL};
static const char *const gray_outputs[] = {"psnr_y", NULL};
static const char *const gray_absent[] = {"psnr_cb", "psnr_cr", NULL};

/* psnr_y/cb/cr of every frame (4:0:0: psnr_y) */
static int psnr_frame(const TestClip *clip, int frame, const void *arg, double *e, double *bound)
{
    (void)arg;
    (void)bound;
    for (int p = 0; p < clip->nb_outputs; p++)
        e[p] = psnr_ref_plane(&clip->ref[frame].pic, &clip->dist[frame].pic, p);
    return 0;
}

static const TestCase psnr_cases[] = {
    {383, 287, QGPU_LAYOUT_420, 8, 2, 3, 0, 0}, /* odd size: floor chroma */
    {1, 1, QGPU_LAYOUT_444, 8, 1, 2, 0, 0},
};

static const TestRandom psnr_random = {.min_w = 2, .max_w = 300, .min_h = 2, .max_h = 200,
                                       .layouts = 7, .max_frames = 5, .max_depth = 4,
                                       .max_pad = 40};
static const TestRandom gray_random = {.min_w = 2, .max_w = 300, .min_h = 2, .max_h = 200,
                                       .layouts = 1 << QGPU_LAYOUT_400, .max_frames = 5,
                                       .max_depth = 4, .max_pad = 40};

static const TestRow rows[] = {
    {.name = "psnr", .spec = "psnr", .frame_reference = psnr_frame, .outputs = psnr_outputs,
     .cases = psnr_cases, .nb_cases = 2, .random = &psnr_random, .nb_random = 14},
    {.name = "psnr_gray", .spec = "psnr", .frame_reference = psnr_frame, .outputs = gray_outputs,
     .absent = gray_absent, .random = &gray_random, .nb_random = 4},
};

/* Identical pictures hit the 6 * bpc + 12 cap. */
static void test_cap(void)
{
    TestPicture a;
    double v = 0;
    test_picture_alloc(&a, 64, 48, QGPU_LAYOUT_420, 10, 0);
    test_picture_random(&a);
    QgpuContext *ctx = test_score_pairs("psnr", 2, &a, &a, 1);
    if (ctx) {
        qgpu_get_score(ctx, 0, "psnr_cr", &v);
        CHECK(v == 72.0, "10-bit cap is 72 dB, got %f", v);
    }
    test_picture_free(&a);
    qgpu_close(&ctx);
}

static void test_bad_options(void)
{
    QgpuContext *ctx = test_open(1);
    if (!ctx)
        return;
    CHECK(qgpu_enable_feature(ctx, "psnr=enable_chroma=maybe") == QGPU_ERR_BAD_OPTION,
          "bad bool");
    CHECK(strstr(qgpu_last_error(ctx), "enable_chroma") != NULL, "message names the option");
    CHECK(qgpu_enable_feature(ctx, "psnr=no_such_option=1") == QGPU_ERR_BAD_OPTION,
          "unknown option");
    CHECK(qgpu_enable_feature(ctx, "psnr=min_sse=-1") == QGPU_ERR_BAD_OPTION, "range");
    qgpu_close(&ctx);
}

/* enable_chroma=false, enable_mse, enable_apsnr on the pairs (a, b), (b, a) */
static void test_options(const TestPicture pair[2])
{
    const TestPicture swapped[2] = {pair[1], pair[0]};
    double v;
    int w, h;
    QgpuContext *ctx = test_score_pairs(
        "psnr=enable_chroma=false:enable_mse=true:enable_apsnr=true", 2, pair, swapped, 2);
    if (!ctx)
        return;
    CHECK(qgpu_get_score(ctx, 0, "psnr_cb", &v) == QGPU_ERR_UNKNOWN_FEATURE,
          "enable_chroma=false has no psnr_cb");
    uint64_t sse = psnr_ref_sse(&pair[0].pic, &pair[1].pic, 0, &w, &h);
    CHECK(qgpu_get_score(ctx, 1, "mse_y", &v) == 0 && v == (double)sse / (w * h), "mse_y");
    CHECK(qgpu_get_aggregate(ctx, "apsnr_y", &v) == 0 &&
              fabs(v - 10.0 * log10(255.0 * 255.0 * 2 * w * h / (2.0 * sse))) < 1e-9,
          "apsnr_y %f", v);
    qgpu_close(&ctx);
}

/* min_sse sets the cap: ceil(10 log10(peak^2 / (min_sse / pixels))) */
static void test_min_sse(const TestPicture *a)
{
    double v;
    QgpuContext *ctx = test_score_pairs("psnr=min_sse=10", 1, a, a, 1);
    if (!ctx)
        return;
    CHECK(qgpu_get_score(ctx, 0, "psnr_y", &v) == 0 &&
              v == ceil(10.0 * log10(255.0 * 255.0 / (10.0 / (96 * 64)))),
          "min_sse cap %f", v);
    CHECK(qgpu_get_score(ctx, 0, "psnr_cb", &v) == 0 &&
              v == ceil(10.0 * log10(255.0 * 255.0 / (10.0 / (48 * 32)))),
          "min_sse chroma cap %f", v);
    qgpu_close(&ctx);
}

static void test_option_values(void)
{
    TestPicture pair[2];
    test_picture_alloc(&pair[0], 96, 64, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&pair[1], 96, 64, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&pair[0]);
    test_picture_noisy_copy(&pair[1], &pair[0], 4);
    test_options(pair);
    test_min_sse(&pair[0]);
    test_picture_free(&pair[0]);
    test_picture_free(&pair[1]);
}

static const TestExtra extras[] = {
    {"psnr_cap", test_cap},
    {"psnr_bad_options", test_bad_options},
    {"psnr_options", test_option_values},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, rows, 2, extras, 3);
}
