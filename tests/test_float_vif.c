/* float_vif on the device vs the plain-C reference (tests/ref/float_vif_ref.c):
 * random sizes (odd too), layouts, 8..16 bit, padded strides, pipeline
 * depths, structured pictures (flat, textured, contrast-enhanced,
 * identical); options and output names; error paths. The kernels differ
 * from the reference only by the rounding of log2 (a few ulps per pixel), so
 * scores agree to ~1e-6; the bound used is 1e-5 (absolute on scores,
 * relative on num/den). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "float_vif_ref.h"

/* A row's options, for the reference. */
typedef struct FloatVifArgs {
    double egl, snsq;
} FloatVifArgs;

/* expect[] order: vif_scale0..3; with debug also vif_num_scale0..3,
 * vif_den_scale0..3 and vif. */
static const char *const vif_outputs[] = {"vif_scale0", "vif_scale1", "vif_scale2",
                                          "vif_scale3", NULL};
static const char *const vif_debug_outputs[] = {
    "vif_scale0",     "vif_scale1",     "vif_scale2",     "vif_scale3",     "vif_num_scale0",
    "vif_num_scale1", "vif_num_scale2", "vif_num_scale3", "vif_den_scale0", "vif_den_scale1",
    "vif_den_scale2", "vif_den_scale3", "vif",            NULL};

static int float_vif_frame(const TestClip *clip, int frame, const void *arg, double *e,
                           double *bound)
{
    const FloatVifArgs *o = arg;
    const TestCase *c = clip->c;
    FloatVifRefResult r;
    double tn = 0, td = 0;
    TestLuma l;
    (void)bound;
    if (test_luma(clip, frame, &l))
        return -1;
    int err = float_vif_ref_compute(l.ref, l.dist, c->w, c->h, c->w, c->bitdepth, o->egl,
                                    o->snsq, &r);
    test_luma_free(&l);
    for (int s = 0; !err && s < 4; s++) {
        e[s] = r.score[s];
        tn += r.num[s];
        td += r.den[s];
        if (clip->nb_outputs == 13) { /* debug */
            e[4 + s] = r.num[s];
            e[8 + s] = r.den[s];
        }
    }
    if (clip->nb_outputs == 13)
        e[12] = tn / td;
    return err ? -1 : 0;
}

/* The kernels differ from the reference only by the rounding of log2 (a few
 * ulps per pixel), so scores agree to ~1e-6: 2e-6 absolute on scores, 2e-6
 * relative (+1e-6) on num/den. */
static const TestTolerance score_tol = {2e-6, 0, 0};
static const TestTolerance debug_tol[13] = {
    {2e-6, 0, 0},    {2e-6, 0, 0},    {2e-6, 0, 0},    {2e-6, 0, 0},    {1e-6, 2e-6, 0},
    {1e-6, 2e-6, 0}, {1e-6, 2e-6, 0}, {1e-6, 2e-6, 0}, {1e-6, 2e-6, 0}, {1e-6, 2e-6, 0},
    {1e-6, 2e-6, 0}, {1e-6, 2e-6, 0}, {2e-6, 0, 0}};

static const FloatVifArgs defaults = {100.0, 2.0}, egl1 = {1.0, 2.0}, snsq = {100.0, 1.5};

/* {w, h, layout, bitdepth, depth, frames, stride_pad, variant} */
static const TestCase odd_cases[] = {{383, 287, QGPU_LAYOUT_420, 8, 2, 2, 0, 0}};
static const TestCase small_cases[] = {{16, 16, QGPU_LAYOUT_420, 8, 1, 4, 0, 0}};
static const TestCase egl1_cases[] = {{97, 65, QGPU_LAYOUT_444, 10, 2, 3, 5, 0}};
static const TestCase snsq_cases[] = {{80, 48, QGPU_LAYOUT_400, 8, 1, 2, 0, 0}};

static const TestRandom vif_random = {.min_w = 16, .max_w = 260, .min_h = 16, .max_h = 180,
                                      .max_frames = 4, .max_depth = 3, .max_pad = 20};

static const TestRow rows[] = {
    {.name = "float_vif", .spec = "float_vif", .frame_reference = float_vif_frame,
     .ref_arg = &defaults, .outputs = vif_outputs, .tol = score_tol,
     .fill = test_fill_structured, .cases = odd_cases, .nb_cases = 1, .random = &vif_random,
     .nb_random = 4},
    {.name = "float_vif_debug", .spec = "float_vif=debug=true", .frame_reference = float_vif_frame,
     .ref_arg = &defaults, .outputs = vif_debug_outputs, .output_tol = debug_tol,
     .fill = test_fill_structured, .cases = small_cases, .nb_cases = 1, .random = &vif_random,
     .nb_random = 4},
    {.name = "float_vif_egl_1", .spec = "float_vif=vif_enhn_gain_limit=1.0:debug=true",
     .frame_reference = float_vif_frame, .ref_arg = &egl1, .outputs = vif_debug_outputs,
     .suffix = "_egl_1", .output_tol = debug_tol, .fill = test_fill_structured,
     .cases = egl1_cases, .nb_cases = 1},
    {.name = "float_vif_snsq", .spec = "float_vif=snsq=1.5", .frame_reference = float_vif_frame,
     .ref_arg = &snsq, .outputs = vif_outputs, .suffix = "_snsq_1.5", .tol = score_tol,
     .fill = test_fill_structured, .cases = snsq_cases, .nb_cases = 1},
};

/* Identical flat pictures: every pixel takes the sigma1^2 < sigma_nsq branch
 * with sigma2^2 = 0, so every term is 1 and every scale is exactly 1. */
static void test_identical(void)
{
    TestPicture a;
    double v = 0;
    test_picture_alloc(&a, 64, 40, QGPU_LAYOUT_420, 8, 0);
    test_fill_flat_luma(&a, 77);
    QgpuContext *ctx = test_score_pairs("float_vif=debug=true", 1, &a, &a, 1);
    for (int s = 0; ctx && s < 4; s++) {
        char name[32];
        snprintf(name, sizeof(name), "vif_scale%d", s);
        int e = qgpu_get_score(ctx, 0, name, &v);
        CHECK(e == 0 && fabs(v - 1.0) < 1e-6, "%s of flat = %.9f (%d)", name, v, e);
    }
    CHECK(ctx && qgpu_get_score(ctx, 0, "vif_den_scale0", &v) == 0 && v == 64 * 40, "den = %f",
          v);
    test_picture_free(&a);
    qgpu_close(&ctx);
}

static void test_min_val(void)
{
    TestPicture a, b;
    double v = 0;
    test_picture_alloc(&a, 64, 64, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&b, 64, 64, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&a);
    test_picture_random(&b);
    QgpuContext *ctx = test_score_pairs("float_vif=vif_scale2_min_val=1.0", 1, &a, &b, 1);
    if (ctx) {
        CHECK(qgpu_get_score(ctx, 0, "vif_scale2_s2miv_1", &v) == 0 && v == 1.0,
              "s2miv clamps to 1, got %f", v);
        CHECK(qgpu_get_score(ctx, 0, "vif_scale1_s2miv_1", &v) == 0 && v < 0.5,
              "other scales unclamped, got %f", v);
    }
    test_picture_free(&a);
    test_picture_free(&b);
    qgpu_close(&ctx);
}

static void test_errors(void)
{
    /* egl below 1, snsq above 5, an unknown option */
    static const char *const bad[] = {"float_vif=vif_enhn_gain_limit=0.5", "float_vif=snsq=6",
                                      "float_vif=no_such=1", NULL};
    static const char *const unsupported[] = {"float_vif=vif_kernelscale=0.5",
                                              "float_vif=vif_prescale=0.5",
                                              "float_vif=vif_skip_scale0=true"};
    test_expect_bad_options(bad);
    test_expect_refused("float_vif", 15, 64, QGPU_LAYOUT_420, 8, QGPU_ERR_UNSUPPORTED,
                        "float_vif", NULL);
    for (int i = 0; i < 3; i++)
        test_expect_refused(unsupported[i], 64, 64, QGPU_LAYOUT_420, 8, QGPU_ERR_UNSUPPORTED,
                            "float_vif", NULL);
    /* cubic is not a prescale method */
    test_expect_refused("float_vif=vif_prescale_method=cubic", 64, 64, QGPU_LAYOUT_420, 8,
                        QGPU_ERR_BAD_OPTION, "float_vif", NULL);
}

static const TestExtra extras[] = {
    {"float_vif_identical", test_identical},
    {"float_vif_min_val", test_min_val},
    {"float_vif_errors", test_errors},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, rows, sizeof(rows) / sizeof(rows[0]), extras, 3);
}
