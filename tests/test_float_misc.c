/* float_psnr, float_ansnr and float_moment on the device vs the plain-C
 * references (tests/ref/float_misc_ref.c): random pictures of random sizes,
 * bit depths, layouts and pitches, several frames per context, identical
 * pictures (the dB caps), flat pictures, error paths. float_psnr and
 * float_moment are exact sums and must be identical; float_ansnr repeats
 * libvmaf's float operations in order (we ask for 1e-6 relative; on PoCL
 * they are identical). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "float_misc_ref.h"

static const char *const misc_outputs[] = {
    "float_psnr",          "float_ansnr",         "float_anpsnr",        "float_moment_ref1st",
    "float_moment_dis1st", "float_moment_ref2nd", "float_moment_dis2nd", NULL};

static int float_misc_frame(const TestClip *clip, int frame, const void *arg, double *e,
                            double *bound)
{
    const TestCase *c = clip->c;
    TestLuma l;
    (void)arg;
    (void)bound;
    if (test_luma(clip, frame, &l))
        return -1;
    e[0] = float_psnr_ref(l.ref, l.dist, c->w, c->h, c->w, c->bitdepth);
    float_ansnr_ref(l.ref, l.dist, c->w, c->h, c->w, c->bitdepth, &e[1], &e[2]);
    float_moment_ref(l.ref, l.dist, c->w, c->h, c->w, c->bitdepth, &e[3]);
    test_luma_free(&l);
    return 0;
}

/* variant: 1 noisy copy, 2 identical (the dB caps), 3 flat reference luma,
 * 4 independent random pictures */
static void fill_misc(TestClip *clip, int frame)
{
    TestPicture *ref = &clip->ref[frame], *dist = &clip->dist[frame];
    int kind = clip->c->variant;
    test_picture_random(ref);
    if (kind == 3)
        for (int y = 0; y < clip->c->h; y++)
            for (int x = 0; x < clip->c->w; x++)
                test_set_sample(ref, 0, x, y, (1u << clip->c->bitdepth) / 3);
    if (kind == 4)
        test_picture_random(dist);
    else
        test_picture_noisy_copy(dist, ref, kind == 2 ? 0 : 1 + frame * 3);
}

/* float_psnr and float_moment are exact sums and must be identical;
 * float_ansnr repeats libvmaf's float operations in order: 1e-6 relative,
 * absolute below 1 (on PoCL they are identical). */
static const TestTolerance misc_tol[7] = {{0, 0, 0}, {0, 1e-6, 1.0}, {0, 1e-6, 1.0}, {0, 0, 0},
                                          {0, 0, 0}, {0, 0, 0},      {0, 0, 0}};

/* {w, h, layout, bitdepth, depth, frames, stride_pad, kind} */
static const TestCase misc_cases[] = {
    {64, 48, QGPU_LAYOUT_420, 8, 2, 3, 0, 1},
    {64, 48, QGPU_LAYOUT_420, 10, 2, 2, 5, 2},    /* identical: caps */
    {37, 23, QGPU_LAYOUT_444, 12, 1, 2, 0, 3},    /* flat */
    {50, 40, QGPU_LAYOUT_422, 16, 3, 2, 3, 4},    /* 16 bit: float-rounded squares */
    {3, 3, QGPU_LAYOUT_444, 8, 1, 2, 0, 1},       /* smallest ansnr input */
    {1000, 17, QGPU_LAYOUT_400, 8, 2, 2, 7, 1},   /* several tiles across */
    {383, 287, QGPU_LAYOUT_420, 8, 2, 2, 0, 1},
};

static const TestRandom misc_random = {.min_w = 3, .max_w = 320, .min_h = 3, .max_h = 200,
                                       .max_frames = 3, .max_depth = 3, .max_pad = 20,
                                       .max_variant = 4};

/* the three features in one context, several frames each */
static const TestRow rows[] = {
    {.name = "float_misc", .spec = "float_psnr float_ansnr float_moment",
     .frame_reference = float_misc_frame, .outputs = misc_outputs, .output_tol = misc_tol,
     .fill = fill_misc, .cases = misc_cases, .nb_cases = 7, .random = &misc_random,
     .nb_random = 12},
};

static void test_errors(void)
{
    /* none of the three has options */
    static const char *const bad[] = {
        "float_psnr=foo=1", "float_ansnr=debug=true", "float_moment=x", NULL};
    test_expect_bad_options(bad);
    test_expect_refused("float_ansnr", 2, 40, QGPU_LAYOUT_444, 8, QGPU_ERR_UNSUPPORTED,
                        "float_ansnr", "small");
    test_expect_refused("float_ansnr", 40, 2, QGPU_LAYOUT_444, 10, QGPU_ERR_UNSUPPORTED,
                        "float_ansnr", "small");
    test_expect_refused("float_ansnr", 40, 40, QGPU_LAYOUT_444, 9, QGPU_ERR_UNSUPPORTED,
                        "float_ansnr", "9-bit");
    test_expect_refused("float_psnr", 40, 40, QGPU_LAYOUT_444, 11, QGPU_ERR_UNSUPPORTED,
                        "float_psnr", "11-bit");
    test_expect_refused("float_moment", 40, 40, QGPU_LAYOUT_444, 14, QGPU_ERR_UNSUPPORTED,
                        "float_moment", "14-bit");
}

static const TestExtra extras[] = {
    {"float_misc_errors", test_errors},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, rows, 1, extras, 1);
}
