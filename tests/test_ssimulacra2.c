/* ssimulacra2 on the device vs the plain-C reference: random sizes (odd too,
 * down to the 8x8 minimum, every scale count 1..6), every colour layout,
 * 8..16 bit, padded strides, pipeline depths 1..3, the four yuv_matrix
 * values; identical pictures; error paths. */
#include <math.h>
#include <string.h>

#include "driver.h"
#include "ssimulacra2_ref.h"

/* Device and reference see bit-identical float planes; what differs is the
 * summation order and, on the float-float path, the per-pixel map
 * arithmetic (double in the reference and on the device's fp64 path):
 * ~1e-12 in practice. */
#define TOL 1e-7

/* A picture with structure (gradients + a few edges) plus noise, so that
 * every map sees realistic values, not only white noise. */
static void fill_smooth(TestPicture *t)
{
    const int max = (1 << t->pic.bitdepth) - 1;
    const int fx = test_rand_range(1, 7), fy = test_rand_range(1, 7);
    const int noise = max / test_rand_range(8, 64) + 1;
    for (int p = 0; p < 3; p++) {
        const int pw = test_plane_w(&t->pic, p), ph = test_plane_h(&t->pic, p);
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++) {
                double v = 0.5 + 0.3 * sin(fx * 6.28 * x / pw + p) * cos(fy * 6.28 * y / ph);
                if ((x / 5 + y / 7) % 4 == 0)
                    v += 0.15;
                int s = (int)(v * max) + test_rand_range(-noise, noise);
                test_set_sample(t, p, x, y, (unsigned)(s < 0 ? 0 : s > max ? max : s));
            }
    }
}

/* variant 3: random reference, else smooth; distorted: a noisy copy */
static void fill_ssimulacra2(TestClip *clip, int frame)
{
    const TestCase *c = clip->c;
    if (c->variant == 3)
        test_picture_random(&clip->ref[frame]);
    else
        fill_smooth(&clip->ref[frame]);
    test_picture_noisy_copy(&clip->dist[frame], &clip->ref[frame],
                            (1 << (c->bitdepth - 8)) * (1 + frame * 9));
}

static int ssimulacra2_frame(const TestClip *clip, int frame, const void *arg, double *e,
                             double *bound)
{
    const int *matrix = arg;
    (void)bound;
    e[0] = ssimulacra2_ref(&clip->ref[frame].pic, &clip->dist[frame].pic, *matrix, 0, NULL);
    return 0;
}

static const char *const ssimulacra2_outputs[] = {"ssimulacra2", NULL};
static const TestTolerance ss2_tol = {TOL, 0, 0};
static const int matrix0 = 0, matrix1 = 1, matrix2 = 2, matrix3 = 3;

/* {w, h, layout, bitdepth, depth, frames, stride_pad, variant} */
static const TestCase edge_cases[] = {
    {8, 8, QGPU_LAYOUT_420, 8, 1, 1, 0, 1},      /* minimum: one scale */
    {9, 9, QGPU_LAYOUT_420, 8, 1, 1, 0, 1},      /* odd chroma, 9*5/9 sampling */
    {15, 15, QGPU_LAYOUT_422, 10, 2, 2, 3, 1},   /* 15 -> 8 -> 4: two scales */
    {383, 17, QGPU_LAYOUT_420, 8, 2, 1, 0, 1},   /* odd width, thin */
    {256, 256, QGPU_LAYOUT_444, 8, 2, 2, 0, 1},  /* six scales, last 8x8 */
    {333, 251, QGPU_LAYOUT_420, 10, 3, 2, 2, 1}, /* many tiles, odd 4:2:0 */
};
static const TestCase tall_cases[] = {{9, 300, QGPU_LAYOUT_422, 16, 1, 1, 0, 3}};
/* several tiles in a row */
static const TestCase row_cases[] = {{520, 9, QGPU_LAYOUT_420, 12, 1, 1, 1, 1}};

/* every scale count 1..6; no 4:0:0 (ssimulacra2 needs colour) */
static const TestRandom ss2_random = {.min_w = 8, .max_w = 160, .min_h = 8, .max_h = 120,
                                      .layouts = 7, .max_frames = 3, .max_depth = 3,
                                      .max_pad = 9, .max_variant = 3};

static const TestRow rows[] = {
    {.name = "ssimulacra2", .spec = "ssimulacra2", .frame_reference = ssimulacra2_frame,
     .ref_arg = &matrix0, .outputs = ssimulacra2_outputs, .tol = ss2_tol,
     .fill = fill_ssimulacra2, .cases = edge_cases, .nb_cases = 6, .random = &ss2_random,
     .nb_random = 4},
    {.name = "ssimulacra2_matrix1", .spec = "ssimulacra2=yuv_matrix=1",
     .frame_reference = ssimulacra2_frame, .ref_arg = &matrix1, .outputs = ssimulacra2_outputs,
     .tol = ss2_tol, .fill = fill_ssimulacra2, .random = &ss2_random, .nb_random = 4},
    {.name = "ssimulacra2_matrix2", .spec = "ssimulacra2=yuv_matrix=2",
     .frame_reference = ssimulacra2_frame, .ref_arg = &matrix2, .outputs = ssimulacra2_outputs,
     .tol = ss2_tol, .fill = fill_ssimulacra2, .cases = tall_cases, .nb_cases = 1,
     .random = &ss2_random, .nb_random = 4},
    {.name = "ssimulacra2_matrix3", .spec = "ssimulacra2=yuv_matrix=3",
     .frame_reference = ssimulacra2_frame, .ref_arg = &matrix3, .outputs = ssimulacra2_outputs,
     .tol = ss2_tol, .fill = fill_ssimulacra2, .cases = row_cases, .nb_cases = 1,
     .random = &ss2_random, .nb_random = 4},
};

/* Identical pictures: every map is exactly 0, the score exactly 100; and
 * saturated / black pictures (clamped RGB, zero variance). */
static void test_identical(void)
{
    TestPicture a, b, c;
    double v[3] = {NAN, NAN, NAN};
    test_picture_alloc(&a, 64, 48, QGPU_LAYOUT_420, 10, 0);
    test_picture_alloc(&b, 64, 48, QGPU_LAYOUT_420, 10, 0);
    test_picture_alloc(&c, 64, 48, QGPU_LAYOUT_420, 10, 0);
    fill_smooth(&a);
    for (int p = 0; p < 3; p++)
        for (int y = 0; y < test_plane_h(&b.pic, p); y++)
            for (int x = 0; x < test_plane_w(&b.pic, p); x++) {
                test_set_sample(&b, p, x, y, 1023);
                test_set_sample(&c, p, x, y, 0);
            }
    const TestPicture refs[3] = {a, b, c}, dists[3] = {a, c, c};
    QgpuContext *ctx = test_score_pairs("ssimulacra2", 2, refs, dists, 3);
    for (int i = 0; i < 3; i++)
        CHECK(ctx && qgpu_get_score(ctx, i, "ssimulacra2", &v[i]) == 0, "get_score %d", i);
    CHECK(v[0] == 100.0, "identical pictures: %.17g, expected 100", v[0]);
    CHECK(v[2] == 100.0, "identical black pictures: %.17g, expected 100", v[2]);
    double e = ssimulacra2_ref(&b.pic, &c.pic, 0, 0, NULL);
    CHECK(fabs(v[1] - e) <= TOL && v[1] < 0.0, "white vs black: %.12f vs %.12f", v[1], e);
    CHECK(ctx && qgpu_score_count(ctx) == 1 && !strcmp(qgpu_score_name(ctx, 0), "ssimulacra2"),
          "one output named ssimulacra2");
    test_picture_free(&a);
    test_picture_free(&b);
    test_picture_free(&c);
    qgpu_close(&ctx);
}

static void test_errors(void)
{
    static const char *const bad[] = {"ssimulacra2=yuv_matrix=4", "ssimulacra2=yuv_matrix=-1",
                                      "ssimulacra2=yuv_matrix=bt709", "ssimulacra2=matrix=1",
                                      "ssimulacra2=yuv_matrix", NULL};
    /* 7x64, 64x7, gray */
    test_expect_refused("ssimulacra2", 7, 64, QGPU_LAYOUT_420, 8, QGPU_ERR_UNSUPPORTED,
                        "ssimulacra2", NULL);
    test_expect_refused("ssimulacra2", 64, 7, QGPU_LAYOUT_444, 8, QGPU_ERR_UNSUPPORTED,
                        "ssimulacra2", NULL);
    test_expect_refused("ssimulacra2", 64, 64, QGPU_LAYOUT_400, 8, QGPU_ERR_UNSUPPORTED,
                        "ssimulacra2", NULL);
    test_expect_bad_options(bad);
    /* a non-default matrix keeps the output name (the fork's option is not
     * a feature parameter) */
    TestPicture a;
    double v = NAN;
    test_picture_alloc(&a, 16, 16, QGPU_LAYOUT_444, 8, 0);
    fill_smooth(&a);
    QgpuContext *ctx = test_score_pairs("ssimulacra2=yuv_matrix=3", 1, &a, &a, 1);
    CHECK(ctx && qgpu_get_score(ctx, 0, "ssimulacra2", &v) == 0 && v == 100.0,
          "yuv_matrix=3 output named ssimulacra2: %f", v);
    test_picture_free(&a);
    qgpu_close(&ctx);
}

static const TestExtra extras[] = {
    {"ssimulacra2_identical", test_identical},
    {"ssimulacra2_errors", test_errors},
};

int main(int argc, char **argv)
{
    /* both paths of the map values and sums (libqgpu/src/feature/
     * ssimulacra2.cl): float-float, then double (where the device has fp64;
     * elsewhere QGPU_SS2_FP64=1 falls back to float-float) */
    return test_main_both_paths(argc, argv, "QGPU_SS2_FP64", "0", "1", rows,
                                sizeof(rows) / sizeof(rows[0]), extras, 2);
}
