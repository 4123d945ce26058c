/* ciede on the device (float) vs the plain-C reference (tests/ref/ciede_ref.c,
 * libvmaf's mixed float/double arithmetic): random sizes (odd too), every
 * subsampled layout, 8..16 bit, padded strides, pipeline depths 1..4, in the
 * default (correct nearest-neighbour chroma) and libvmaf_422_compat modes;
 * edge cases and errors. */
#include <math.h>
#include <string.h>

#include "ciede_ref.h"
#include "driver.h"

/* Bound on |device - reference| in dB for a picture of n pixels. The
 * device works in float, libvmaf (and the reference) partly in double, and
 * libvmaf rounds L*, a*, b* to float, so single pixels differ by up to
 * ~3e-5 relative (~2.5e-4 dB) where dE00 comes from a difference of nearly
 * equal floats; the mean over n pixels shrinks that like 1/sqrt(n): 1e-5 dB
 * from a few hundred pixels on (observed <= 2.2e-6 on the corpus). Still
 * far below the effect of a wrong chroma sample (>= 1e-3 here). */
static double ciede_tol(int w, int h)
{
    return 1e-5 + 4e-4 / sqrt((double)w * h);
}
#define CIEDE_TOL 1e-5

/* Natural-ish content: gradients, texture and random colour blobs. */
static void fill_content(TestPicture *t)
{
    int max = (1 << t->pic.bitdepth) - 1;
    int ox = test_rand_range(0, 99), oy = test_rand_range(0, 99);
    for (int p = 0; p < 3; p++)
        for (int y = 0; y < test_plane_h(&t->pic, p); y++)
            for (int x = 0; x < test_plane_w(&t->pic, p); x++) {
                double v = p == 0 ? 0.5 + 0.35 * sin((x + ox) * 0.07) * cos((y + oy) * 0.05)
                                  : 0.5 + 0.2 * sin((x * (p + 1) + y + ox) * 0.11);
                int s = (int)(v * max) + test_rand_range(-max / 64, max / 64);
                test_set_sample(t, p, x, y, (unsigned)(s < 0 ? 0 : s > max ? max : s));
            }
}

/* variant 5: random reference, else fill_content; distorted: a noisy copy */
static void fill_ciede(TestClip *clip, int frame)
{
    const TestCase *c = clip->c;
    if (c->variant == 5)
        test_picture_random(&clip->ref[frame]);
    else
        fill_content(&clip->ref[frame]);
    test_picture_noisy_copy(&clip->dist[frame], &clip->ref[frame],
                            (1 + 8 * frame) << (c->bitdepth - 8));
}

static int ciede_frame(const TestClip *clip, int frame, const void *arg, double *e,
                       double *bound)
{
    const int *mode = arg;
    e[0] = ciede_ref(&clip->ref[frame].pic, &clip->dist[frame].pic, *mode);
    bound[0] = ciede_tol(clip->c->w, clip->c->h);
    return 0;
}

static const char *const ciede_outputs[] = {"ciede2000", NULL};
static const int nearest = CIEDE_REF_NEAREST, libvmaf = CIEDE_REF_LIBVMAF;

/* {w, h, layout, bitdepth, depth, frames, stride_pad, variant (5: random)} */
static const TestCase default_cases[] = {
    {383, 287, QGPU_LAYOUT_420, 8, 2, 1, 0, 1},
    {1, 1, QGPU_LAYOUT_444, 8, 1, 1, 0, 5},
    {1, 1, QGPU_LAYOUT_420, 8, 1, 1, 0, 5},
};
static const TestCase compat_cases[] = {
    /* libvmaf's padded rows: chroma widths at and around multiples of 32 */
    {128, 20, QGPU_LAYOUT_422, 8, 2, 1, 0, 1},
    {130, 21, QGPU_LAYOUT_422, 10, 2, 1, 5, 1},
    {129, 33, QGPU_LAYOUT_420, 8, 1, 1, 0, 1},  /* odd 4:2:0, cw = 64 */
    {383, 287, QGPU_LAYOUT_420, 8, 2, 1, 0, 1}, /* odd: past the Cr plane */
    {2, 2, QGPU_LAYOUT_420, 12, 1, 1, 0, 5},
};

/* every subsampled layout (ciede needs colour) */
static const TestRandom ciede_random = {.min_w = 2, .max_w = 220, .min_h = 2, .max_h = 150,
                                        .layouts = 7, .max_frames = 3, .max_depth = 4,
                                        .max_pad = 20, .max_variant = 5};

static const TestRow rows[] = {
    {.name = "ciede", .spec = "ciede", .frame_reference = ciede_frame, .ref_arg = &nearest,
     .outputs = ciede_outputs, .fill = fill_ciede, .cases = default_cases, .nb_cases = 3,
     .random = &ciede_random, .nb_random = 8},
    {.name = "ciede_compat", .spec = "ciede=libvmaf_422_compat=true",
     .frame_reference = ciede_frame, .ref_arg = &libvmaf, .outputs = ciede_outputs,
     .fill = fill_ciede, .cases = compat_cases, .nb_cases = 5, .random = &ciede_random,
     .nb_random = 8},
};

/* The two 4:2:2 readings must differ (and each match its reference), and
 * 4:2:0 with even sizes and 4:4:4 must read the same in both modes. */
static double score(const TestPicture *a, const TestPicture *b, const char *spec)
{
    double v = NAN;
    QgpuContext *ctx = test_score_pairs(spec, 1, a, b, 1);
    if (ctx)
        qgpu_get_score(ctx, 0, "ciede2000", &v);
    qgpu_close(&ctx);
    return v;
}

static void test_modes(void)
{
    static const int layouts[] = {QGPU_LAYOUT_422, QGPU_LAYOUT_420, QGPU_LAYOUT_444};
    for (int l = 0; l < 3; l++) {
        TestPicture a, b;
        test_picture_alloc(&a, 96, 40, layouts[l], 8, 0);
        test_picture_alloc(&b, 96, 40, layouts[l], 8, 0);
        fill_content(&a);
        test_picture_noisy_copy(&b, &a, 12);
        double def = score(&a, &b, "ciede"), compat = score(&a, &b, "ciede=libvmaf_422_compat=true");
        double rdef = ciede_ref(&a.pic, &b.pic, CIEDE_REF_NEAREST);
        double rcompat = ciede_ref(&a.pic, &b.pic, CIEDE_REF_LIBVMAF);
        CHECK(fabs(def - rdef) <= CIEDE_TOL && fabs(compat - rcompat) <= CIEDE_TOL,
              "layout %d: default %.9f (ref %.9f), compat %.9f (ref %.9f)", layouts[l], def, rdef,
              compat, rcompat);
        if (layouts[l] == QGPU_LAYOUT_422)
            CHECK(fabs(def - compat) > 1e-3, "4:2:2 readings should differ: %.9f %.9f", def, compat);
        else
            CHECK(def == compat, "layout %d: same reading expected: %.9f %.9f", layouts[l], def,
                  compat);
        test_picture_free(&a);
        test_picture_free(&b);
    }

    /* identical pictures: mean dE00 = 0, +inf dB (libvmaf prints null) */
    TestPicture a;
    test_picture_alloc(&a, 40, 30, QGPU_LAYOUT_420, 10, 0);
    test_picture_random(&a);
    double v = score(&a, &a, "ciede");
    CHECK(isinf(v) && v > 0, "identical pictures: %f, want +inf", v);
    test_picture_free(&a);
}

static void test_errors(void)
{
    TestPicture a;
    test_expect_refused("ciede", 32, 32, QGPU_LAYOUT_400, 8, QGPU_ERR_UNSUPPORTED, "ciede", NULL);
    test_expect_refused("ciede=libvmaf_422_compat=true", 1, 8, QGPU_LAYOUT_422, 8,
                        QGPU_ERR_UNSUPPORTED, "ciede", NULL);
    /* the default mode reads the one chroma column of a 1-wide 4:2:2 picture */
    test_picture_alloc(&a, 1, 8, QGPU_LAYOUT_422, 8, 0);
    QgpuContext *ctx = test_score_pairs("ciede", 1, &a, &a, 1);
    CHECK(ctx != NULL, "1-wide 4:2:2 in the default mode");
    qgpu_close(&ctx);
    test_picture_free(&a);

    ctx = test_open(1);
    if (!ctx)
        return;
    CHECK(qgpu_enable_feature(ctx, "ciede=libvmaf_422_compat=maybe") == QGPU_ERR_BAD_OPTION &&
              strstr(qgpu_last_error(ctx), "libvmaf_422_compat"),
          "bad bool: %s", qgpu_last_error(ctx));
    CHECK(qgpu_enable_feature(ctx, "ciede=kl=1") == QGPU_ERR_BAD_OPTION, "unknown option");
    qgpu_close(&ctx);
}

static const TestExtra extras[] = {
    {"ciede_modes", test_modes},
    {"ciede_errors", test_errors},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, rows, 2, extras, 2);
}
