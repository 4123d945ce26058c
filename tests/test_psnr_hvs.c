/* psnr_hvs on the device vs the plain-C reference (tests/ref/psnr_hvs_ref.c).
 * The device reproduces libvmaf's float running sum bit for bit, so the
 * scores must equal the reference's sequential-float ones; random sizes
 * (odd too), every subsampled layout, 8..12 bit, padded strides, pipeline
 * depths 1..4; a 1080p frame for the chunked sum; edge cases and errors. */
#include <math.h>
#include <string.h>

#include "driver.h"
#include "psnr_hvs_ref.h"

static const char *const names[4] = {"psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs"};

static int psnr_hvs_frame(const TestClip *clip, int frame, const void *arg, double *e,
                          double *bound)
{
    (void)arg;
    (void)bound;
    psnr_hvs_ref(&clip->ref[frame].pic, &clip->dist[frame].pic, PSNR_HVS_REF_SUM_FLOAT_SEQ, e);
    return 0;
}

static void fill_noisy(TestClip *clip, int frame)
{
    test_picture_random(&clip->ref[frame]);
    test_picture_noisy_copy(&clip->dist[frame], &clip->ref[frame],
                            1 + frame * 20 + (1 << (clip->c->bitdepth - 8)));
}

/* Natural-ish content: smooth gradients plus texture, so that masking,
 * zero terms and large terms all occur; at 1080p many chunks of the sum
 * run through binade changes. */
static void fill_gradient_pair(TestPicture *ref, TestPicture *dist)
{
    int w = ref->pic.width, h = ref->pic.height;
    for (int p = 0; p < 3; p++)
        for (int y = 0; y < test_plane_h(&ref->pic, p); y++)
            for (int x = 0; x < test_plane_w(&ref->pic, p); x++) {
                int v = (x * 255 / w + y * 3 / 4 + ((x / 13 + y / 9) % 3) * 20) % 256;
                int noisy = v + ((y > h / (p ? 4 : 2)) ? test_rand_range(-9, 9) : 0);
                test_set_sample(ref, p, x, y, (unsigned)v);
                test_set_sample(dist, p, x, y,
                                (unsigned)(noisy < 0 ? 0 : noisy > 255 ? 255 : noisy));
            }
}

static void fill_gradient(TestClip *clip, int frame)
{
    fill_gradient_pair(&clip->ref[frame], &clip->dist[frame]);
}

/* Full-scale 12-bit checkerboards, one the other's negative: the largest
 * DCT coefficients. */
static void fill_checkerboards(TestClip *clip, int frame)
{
    TestPicture *a = &clip->ref[frame], *b = &clip->dist[frame];
    unsigned max = (1u << clip->c->bitdepth) - 1;
    for (int p = 0; p < 3; p++)
        for (int y = 0; y < test_plane_h(&a->pic, p); y++)
            for (int x = 0; x < test_plane_w(&a->pic, p); x++) {
                test_set_sample(a, p, x, y, ((x + y) & 1) ? max : 0);
                test_set_sample(b, p, x, y, ((x + y) & 1) ? 0 : max);
            }
}

static const char *const psnr_hvs_outputs[] = {"psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr",
                                               "psnr_hvs", NULL};
/* identical results: the same float operations in the same order */
static const TestTolerance psnr_hvs_tol = {1e-9, 0, 0};
static const int psnr_hvs_bitdepths[] = {8, 10, 12, 9, 0};

/* {w, h, layout, bitdepth, depth, frames, stride_pad, variant} */
static const TestCase noise_cases[] = {
    /* the smallest sizes: one block per plane */
    {16, 16, QGPU_LAYOUT_420, 8, 1, 1, 0, 0},
    {16, 8, QGPU_LAYOUT_422, 10, 2, 1, 3, 0},
    {8, 8, QGPU_LAYOUT_444, 12, 1, 2, 0, 0},
    {383, 287, QGPU_LAYOUT_420, 8, 2, 1, 0, 0}, /* odd: floor-size chroma */
};
static const TestCase large_cases[] = {{1920, 1080, QGPU_LAYOUT_420, 8, 2, 1, 0, 0}};
static const TestCase checker_cases[] = {{64, 48, QGPU_LAYOUT_444, 12, 1, 1, 0, 0}};

/* every subsampled layout (psnr_hvs needs colour) */
static const TestRandom psnr_hvs_random = {.min_w = 16, .max_w = 260, .min_h = 16,
                                           .max_h = 180, .layouts = 7,
                                           .bitdepths = psnr_hvs_bitdepths, .max_frames = 3,
                                           .max_depth = 4, .max_pad = 24};

static const TestRow rows[] = {
    {.name = "psnr_hvs", .spec = "psnr_hvs", .frame_reference = psnr_hvs_frame,
     .outputs = psnr_hvs_outputs, .tol = psnr_hvs_tol, .fill = fill_noisy,
     .cases = noise_cases, .nb_cases = 4, .random = &psnr_hvs_random, .nb_random = 16},
    {.name = "psnr_hvs_1080p", .spec = "psnr_hvs", .frame_reference = psnr_hvs_frame,
     .outputs = psnr_hvs_outputs, .tol = psnr_hvs_tol, .fill = fill_gradient,
     .cases = large_cases, .nb_cases = 1},
    {.name = "psnr_hvs_checkerboard", .spec = "psnr_hvs", .frame_reference = psnr_hvs_frame,
     .outputs = psnr_hvs_outputs, .tol = psnr_hvs_tol, .fill = fill_checkerboards,
     .cases = checker_cases, .nb_cases = 1},
};

/* The test can see a sum that is not libvmaf's: on the 1080p content the
 * exact (double) sum differs from the float one. */
static void test_sum_order(void)
{
    TestPicture ref, dist;
    double seq[4], exact[4];
    test_picture_alloc(&ref, 1920, 1080, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&dist, 1920, 1080, QGPU_LAYOUT_420, 8, 0);
    fill_gradient_pair(&ref, &dist);
    psnr_hvs_ref(&ref.pic, &dist.pic, PSNR_HVS_REF_SUM_FLOAT_SEQ, seq);
    psnr_hvs_ref(&ref.pic, &dist.pic, PSNR_HVS_REF_SUM_DOUBLE, exact);
    CHECK(fabs(seq[0] - exact[0]) > 1e-6, "1080p: float and double sums should differ (%.9f, %.9f)",
          seq[0], exact[0]);
    test_picture_free(&ref);
    test_picture_free(&dist);
}

/* Identical pictures: mse 0, +inf dB (libvmaf prints null). */
static void test_identical(void)
{
    TestPicture a;
    double v = 0;
    test_picture_alloc(&a, 64, 48, QGPU_LAYOUT_444, 12, 0);
    test_picture_random(&a);
    QgpuContext *ctx = test_score_pairs("psnr_hvs", 1, &a, &a, 1);
    for (int k = 0; ctx && k < 4; k++)
        CHECK(qgpu_get_score(ctx, 0, names[k], &v) == 0 && isinf(v) && v > 0,
              "identical pictures: %s = %f, want +inf", names[k], v);
    qgpu_close(&ctx);
    test_picture_free(&a);
}

static void test_errors(void)
{
    test_expect_refused("psnr_hvs", 64, 64, QGPU_LAYOUT_420, 16, QGPU_ERR_UNSUPPORTED,
                        "psnr_hvs", "12");
    test_expect_refused("psnr_hvs", 64, 64, QGPU_LAYOUT_444, 13, QGPU_ERR_UNSUPPORTED,
                        "psnr_hvs", NULL);
    test_expect_refused("psnr_hvs", 15, 16, QGPU_LAYOUT_420, 8, QGPU_ERR_UNSUPPORTED,
                        "psnr_hvs", "16x16");
    test_expect_refused("psnr_hvs", 8, 7, QGPU_LAYOUT_444, 8, QGPU_ERR_UNSUPPORTED, "8x8", NULL);
    test_expect_refused("psnr_hvs", 16, 16, QGPU_LAYOUT_400, 8, QGPU_ERR_UNSUPPORTED,
                        "psnr_hvs", NULL);
    QgpuContext *ctx = test_open(1);
    if (!ctx)
        return;
    CHECK(qgpu_enable_feature(ctx, "psnr_hvs=enable_chroma=true") == QGPU_ERR_BAD_OPTION,
          "unknown option");
    qgpu_close(&ctx);
}

static const TestExtra extras[] = {
    {"psnr_hvs_sum_order", test_sum_order},
    {"psnr_hvs_identical", test_identical},
    {"psnr_hvs_errors", test_errors},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, rows, 3, extras, 3);
}
