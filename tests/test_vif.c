/* vif on the device vs the plain-C reference (tests/ref/vif_ref.c): random
 * sizes (odd too), layouts, 8..16 bit, padded strides, pipeline depths,
 * structured pictures (flat, textured, enhanced, identical), every option;
 * output names; error paths. Integer VIF must match exactly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "vif_ref.h"

/* A row's options, for the reference. */
typedef struct VifArgs {
    double egl;
    int skip0, debug;
} VifArgs;

/* expect[] order: the four scores; with debug also num, den, integer_vif,
 * num_scale0..3, den_scale0..3. */
static const char *const vif_outputs[] = {"integer_vif_scale0", "integer_vif_scale1",
                                          "integer_vif_scale2", "integer_vif_scale3", NULL};
static const char *const vif_debug_outputs[] = {
    "integer_vif_scale0",     "integer_vif_scale1",     "integer_vif_scale2",
    "integer_vif_scale3",     "integer_vif_num",        "integer_vif_den",
    "integer_vif",            "integer_vif_num_scale0", "integer_vif_num_scale1",
    "integer_vif_num_scale2", "integer_vif_num_scale3", "integer_vif_den_scale0",
    "integer_vif_den_scale1", "integer_vif_den_scale2", "integer_vif_den_scale3",
    NULL};

static void vif_debug_expect(const VifRefResult *r, int skip0, double *e)
{
    double tn = 0, td = 0;
    for (int s = skip0 ? 1 : 0; s < 4; s++) {
        tn += r->num[s];
        td += r->den[s];
    }
    e[4] = tn;
    e[5] = td;
    e[6] = td == 0 ? 1.0 : tn / td;
    for (int s = 0; s < 4; s++) {
        e[7 + s] = s == 0 && skip0 ? 0.0 : r->num[s];
        e[11 + s] = s == 0 && skip0 ? -1.0 : r->den[s];
    }
}

static int vif_frame(const TestClip *clip, int frame, const void *arg, double *e, double *bound)
{
    const VifArgs *o = arg;
    const TestCase *c = clip->c;
    VifRefResult r;
    TestLuma l;
    (void)bound;
    if (test_luma(clip, frame, &l))
        return -1;
    vif_ref_compute(l.ref, l.dist, c->w, c->h, c->w, c->bitdepth, o->egl, o->skip0, &r);
    test_luma_free(&l);
    for (int s = 0; s < 4; s++)
        e[s] = r.score[s];
    if (o->debug)
        vif_debug_expect(&r, o->skip0, e);
    return 0;
}

static const int vif_bitdepths[] = {8, 10, 12, 16, 9, 11, 0};
static const VifArgs plain = {100.0, 0, 0}, debug = {100.0, 0, 1}, egl1 = {1.0, 0, 1},
                     egl25 = {2.5, 0, 1}, skip0 = {100.0, 1, 1};

static const TestCase plain_cases[] = {
    {333, 40, QGPU_LAYOUT_422, 12, 3, 3, 7, 0}, /* wide: several tiles per row */
    {383, 287, QGPU_LAYOUT_420, 8, 2, 2, 0, 0}, /* odd 4:2:0 size as in the corpus */
    /* widths of a multiple of 4 with tiles inside the picture at scale 0
     * (staged 4 samples per load), 8 and 16-bit words */
    {264, 72, QGPU_LAYOUT_420, 8, 2, 2, 0, 0},
    {272, 88, QGPU_LAYOUT_444, 10, 2, 3, 8, 0},
};
static const TestCase debug_cases[] = {
    {16, 16, QGPU_LAYOUT_420, 8, 1, 2, 0, 0}, /* smallest size */
    {48, 40, QGPU_LAYOUT_444, 16, 1, 4, 0, 0}, /* 16 bits, every picture kind */
};
/* odd sizes whose scales round down twice */
static const TestCase egl1_cases[] = {{17, 35, QGPU_LAYOUT_444, 10, 2, 2, 5, 0}};
static const TestCase skip0_cases[] = {{16, 300, QGPU_LAYOUT_400, 16, 2, 1, 0, 0}};

static const TestRandom vif_random = {.min_w = 16, .max_w = 260, .min_h = 16, .max_h = 170,
                                      .bitdepths = vif_bitdepths, .max_frames = 4,
                                      .max_depth = 3, .max_pad = 24};

static const TestRow rows[] = {
    {.name = "vif", .spec = "vif=debug=false", .frame_reference = vif_frame, .ref_arg = &plain,
     .outputs = vif_outputs, .fill = test_fill_structured, .cases = plain_cases,
     .nb_cases = (int)(sizeof(plain_cases) / sizeof(plain_cases[0])),
     .random = &vif_random, .nb_random = 8},
    {.name = "vif_debug", .spec = "vif=debug=true", .frame_reference = vif_frame,
     .ref_arg = &debug, .outputs = vif_debug_outputs, .fill = test_fill_structured,
     .cases = debug_cases, .nb_cases = 2, .random = &vif_random, .nb_random = 4},
    {.name = "vif_egl_1", .spec = "vif=debug=true:vif_enhn_gain_limit=1",
     .frame_reference = vif_frame, .ref_arg = &egl1, .outputs = vif_debug_outputs,
     .suffix = "_egl_1", .fill = test_fill_structured, .cases = egl1_cases, .nb_cases = 1,
     .random = &vif_random, .nb_random = 1},
    {.name = "vif_egl_2.5", .spec = "vif=debug=true:vif_enhn_gain_limit=2.5",
     .frame_reference = vif_frame, .ref_arg = &egl25, .outputs = vif_debug_outputs,
     .suffix = "_egl_2.5", .fill = test_fill_structured, .random = &vif_random, .nb_random = 1},
    {.name = "vif_skip0", .spec = "vif=debug=true:vif_skip_scale0=true",
     .frame_reference = vif_frame, .ref_arg = &skip0, .outputs = vif_debug_outputs,
     .suffix = "_ssclz", .fill = test_fill_structured, .cases = skip0_cases, .nb_cases = 1,
     .random = &vif_random, .nb_random = 1},
};

/* Identical pictures score 1 at every scale (the gain is 1, the residual
 * variance 0). */
static void test_identical(void)
{
    TestPicture a;
    double v = 0;
    test_picture_alloc(&a, 64, 48, QGPU_LAYOUT_420, 8, 0);
    test_picture_structured(&a, 1);
    QgpuContext *ctx = test_score_pairs("vif", 1, &a, &a, 1);
    for (int s = 0; ctx && s < 4; s++) {
        char name[32];
        snprintf(name, sizeof(name), "integer_vif_scale%d", s);
        CHECK(qgpu_get_score(ctx, 0, name, &v) == 0 && fabs(v - 1.0) < 1e-6, "%s = %f", name, v);
    }
    test_picture_free(&a);
    qgpu_close(&ctx);
}

static void test_errors(void)
{
    /* egl below 1, non-numeric egl, a bad bool */
    static const char *const bad[] = {"vif=vif_enhn_gain_limit=0.5", "vif=vif_enhn_gain_limit=abc",
                                      "vif=vif_skip_scale0=maybe", NULL};
    test_expect_bad_options(bad);
    test_expect_refused("vif", 15, 40, QGPU_LAYOUT_420, 8, QGPU_ERR_UNSUPPORTED, "vif", "small");
}

static const TestExtra extras[] = {
    {"vif_errors", test_errors},
    {"vif_identical", test_identical},
};

int main(int argc, char **argv)
{
    /* both paths of the kernels' double expressions (libqgpu/src/feature/),
     * then scale 1's vertical sums in fp64 forced on (a GPU's default where
     * its doubles keep denormals; forced, CPU devices check it too) */
    static const TestPath paths[] = {
        {{"QGPU_VIF_FP64", "QGPU_VIF_S1FP64"}, {"0", "0"}},
        {{"QGPU_VIF_FP64", "QGPU_VIF_S1FP64"}, {"1", "0"}},
        {{"QGPU_VIF_FP64", "QGPU_VIF_S1FP64"}, {"1", "1"}},
    };
    return test_main_paths(argc, argv, paths, 3, rows, sizeof(rows) / sizeof(rows[0]), extras,
                           2);
}
