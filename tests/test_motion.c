/* motion on the device vs the plain-C reference (tests/ref/motion_ref.c):
 * moving structured pictures of random sizes and bit depths, every option
 * (blend, fps weight, max value, five-frame window, moving average, forced
 * zero, debug), clips of 1..n frames, look-ahead (when frames become final),
 * output names, error paths. The SAD is integer and must match exactly, and
 * so must every derived score. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "motion_ref.h"

/* A row's options for the reference, and whether it asks for debug. */
typedef struct MotionArgs {
    /* force_zero, blend_factor, blend_offset, fps_weight, max_val,
     * five_frame_window, moving_average, legacy */
    MotionRefOptions ref;
    int debug;
} MotionArgs;

/* with debug also integer_motion (= the SAD score) */
static const char *const motion_outputs[] = {"VMAF_integer_feature_motion_sad_score",
                                             "integer_motion2", "integer_motion3", NULL};
static const char *const motion_debug_outputs[] = {"VMAF_integer_feature_motion_sad_score",
                                                   "integer_motion2", "integer_motion3",
                                                   "integer_motion", NULL};

static int motion_reference(const TestClip *clip, const void *arg, double *expect)
{
    const MotionArgs *o = arg;
    const TestCase *c = clip->c;
    const void **luma = calloc(c->frames, sizeof(*luma));
    double *sad = calloc(c->frames, sizeof(double)), *m2 = calloc(c->frames, sizeof(double));
    double *m3 = calloc(c->frames, sizeof(double));
    int err = !luma || !sad || !m2 || !m3;
    for (int i = 0; !err && i < c->frames; i++) {
        luma[i] = test_luma_copy(&clip->ref[i].pic);
        err = !luma[i];
    }
    if (!err) {
        motion_ref_clip(luma, (unsigned)c->frames, c->w, c->h, c->w, c->bitdepth, &o->ref, sad,
                        m2, m3);
        for (int i = 0; i < c->frames; i++) {
            double *e = expect + i * clip->nb_outputs;
            e[0] = sad[i];
            e[1] = m2[i];
            e[2] = m3[i];
            if (o->debug)
                e[3] = sad[i];
        }
    }
    for (int i = 0; luma && i < c->frames; i++)
        free((void *)luma[i]);
    free(luma);
    free(sad);
    free(m2);
    free(m3);
    return err ? -1 : 0;
}

static const MotionArgs plain = {{0, 1.0, 40.0, 1.0, 10000.0, 0, 0, 0}, 0};
static const MotionArgs max18 = {{0, 1.0, 40.0, 1.0, 18.0, 0, 0, 0}, 0};
static const MotionArgs hfr = {{0, 1.0, 40.0, 1.0, 18.0, 1, 1, 0}, 0};
static const MotionArgs blend = {{0, 0.5, 3.0, 1.0, 10000.0, 0, 0, 0}, 1};
static const MotionArgs fps2 = {{0, 1.0, 40.0, 2.0, 10000.0, 0, 1, 0}, 0};
static const MotionArgs zero = {{1, 1.0, 40.0, 1.0, 10000.0, 0, 0, 0}, 1};
static const MotionArgs five = {{0, 1.0, 40.0, 1.0, 10000.0, 1, 0, 0}, 0};
static const MotionArgs legacy_debug = {{0, 1.0, 40.0, 1.0, 10000.0, 0, 0, 1}, 1};
static const MotionArgs legacy = {{0, 1.0, 40.0, 1.0, 10000.0, 0, 0, 1}, 0};
static const MotionArgs legacy_hfr = {{0, 1.0, 40.0, 1.0, 18.0, 1, 1, 1}, 0};

/* {w, h, layout, bitdepth, depth, frames, stride_pad, speed} */
static const TestCase plain_cases[] = {
    {96, 64, QGPU_LAYOUT_420, 8, 2, 7, 0, 1},
    {3, 3, QGPU_LAYOUT_444, 8, 2, 3, 0, 1},
    {383, 287, QGPU_LAYOUT_420, 8, 2, 3, 0, 1},
};
static const TestCase max18_cases[] = {{80, 48, QGPU_LAYOUT_420, 10, 2, 6, 0, 9}}; /* the cap */
static const TestCase hfr_cases[] = { /* the v1 HFR models, clips of 1..6 frames */
    {70, 40, QGPU_LAYOUT_420, 8, 2, 1, 0, 1}, {70, 40, QGPU_LAYOUT_420, 8, 3, 2, 0, 1},
    {70, 40, QGPU_LAYOUT_420, 8, 1, 3, 0, 1}, {70, 40, QGPU_LAYOUT_420, 8, 2, 4, 0, 1},
    {70, 40, QGPU_LAYOUT_420, 8, 3, 5, 0, 1}, {70, 40, QGPU_LAYOUT_420, 8, 1, 6, 0, 1},
};
static const TestCase blend_cases[] = {{64, 40, QGPU_LAYOUT_420, 12, 2, 5, 0, 4}};
static const TestCase fps2_cases[] = {{50, 30, QGPU_LAYOUT_420, 16, 2, 4, 0, 1}};
static const TestCase zero_cases[] = {{40, 24, QGPU_LAYOUT_420, 8, 2, 4, 0, 1}};
static const TestCase five_cases[] = {{40, 24, QGPU_LAYOUT_420, 10, 2, 5, 0, 1}};
/* motion_legacy: full-range 8- and 16-bit content (the 32-bit sums of the
 * blur at their largest), large motion, with the other options */
static const TestCase legacy_debug_cases[] = {{150, 70, QGPU_LAYOUT_420, 8, 2, 6, 0, 7}};
static const TestCase legacy_cases[] = {
    {67, 45, QGPU_LAYOUT_420, 16, 2, 4, 0, 11},
    {3, 3, QGPU_LAYOUT_444, 10, 2, 3, 0, 1},
};
static const TestCase legacy_hfr_cases[] = {{70, 40, QGPU_LAYOUT_420, 10, 2, 5, 0, 1}};

static const TestRandom motion_random = {.min_w = 3, .max_w = 300, .min_h = 3, .max_h = 150,
                                         .max_frames = 5, .max_depth = 4, .max_pad = 30,
                                         .max_variant = 3};
static const TestRandom legacy_random = {.min_w = 3, .max_w = 260, .min_h = 3, .max_h = 130,
                                         .max_frames = 5, .max_depth = 4, .max_pad = 20,
                                         .max_variant = 3};

static const TestRow rows[] = {
    {.name = "motion", .spec = "motion", .reference = motion_reference, .ref_arg = &plain,
     .outputs = motion_outputs, .fill = test_fill_moving, .cases = plain_cases, .nb_cases = 3,
     .random = &motion_random, .nb_random = 10},
    {.name = "motion_max_val", .spec = "motion=motion_max_val=18",
     .reference = motion_reference, .ref_arg = &max18, .outputs = motion_outputs,
     .suffix = "_mmxv_18", .fill = test_fill_moving, .cases = max18_cases, .nb_cases = 1},
    {.name = "motion_hfr",
     .spec = "motion=motion_max_val=18:motion_five_frame_window=true:motion_moving_average=true",
     .reference = motion_reference, .ref_arg = &hfr, .outputs = motion_outputs,
     .suffix = "_mffw_mmxv_18_mma", .fill = test_fill_moving, .cases = hfr_cases,
     .nb_cases = 6},
    {.name = "motion_blend",
     .spec = "motion=motion_blend_factor=0.5:motion_blend_offset=3:debug=true",
     .reference = motion_reference, .ref_arg = &blend, .outputs = motion_debug_outputs,
     .suffix = "_mbf_0.5_mbo_3", .fill = test_fill_moving, .cases = blend_cases, .nb_cases = 1},
    {.name = "motion_fps_weight", .spec = "motion=motion_fps_weight=2:motion_moving_average=true",
     .reference = motion_reference, .ref_arg = &fps2, .outputs = motion_outputs,
     .suffix = "_mfw_2_mma", .fill = test_fill_moving, .cases = fps2_cases, .nb_cases = 1},
    {.name = "motion_force_zero", .spec = "motion=motion_force_zero=true:debug=true",
     .reference = motion_reference, .ref_arg = &zero, .outputs = motion_debug_outputs,
     .suffix = "_force_0", .fill = test_fill_moving, .cases = zero_cases, .nb_cases = 1},
    {.name = "motion_five_frame", .spec = "motion=motion_five_frame_window=true",
     .reference = motion_reference, .ref_arg = &five, .outputs = motion_outputs,
     .suffix = "_mffw", .fill = test_fill_moving, .cases = five_cases, .nb_cases = 1},
    {.name = "motion_legacy_debug", .spec = "motion=motion_legacy=true:debug=true",
     .reference = motion_reference, .ref_arg = &legacy_debug, .outputs = motion_debug_outputs,
     .fill = test_fill_moving, .cases = legacy_debug_cases, .nb_cases = 1},
    /* libvmaf <= v3.0.0 arithmetic (motion_legacy): same names, other SAD */
    {.name = "motion_legacy", .spec = "motion=motion_legacy=true",
     .reference = motion_reference, .ref_arg = &legacy, .outputs = motion_outputs,
     .fill = test_fill_moving, .cases = legacy_cases, .nb_cases = 2,
     .random = &legacy_random, .nb_random = 8},
    {.name = "motion_legacy_hfr",
     .spec = "motion=motion_legacy=true:motion_max_val=18:motion_five_frame_window=true:"
             "motion_moving_average=true",
     .reference = motion_reference, .ref_arg = &legacy_hfr, .outputs = motion_outputs,
     .suffix = "_mffw_mmxv_18_mma", .fill = test_fill_moving, .cases = legacy_hfr_cases,
     .nb_cases = 1},
};

/* Frame n is final once frame n+1 is processed (n+2 for frames 0 and 1 with
 * the five-frame window); with it, collect(wait) cannot return earlier. */
static void test_lookahead(void)
{
    test_expect_lookahead("motion", 2);
    test_expect_lookahead("motion=motion_five_frame_window=true", 3);
}

static void test_errors(void)
{
    /* blend factor > 1, negative fps weight, non-numeric max */
    static const char *const bad[] = {"motion=motion_blend_factor=2",
                                      "motion=motion_fps_weight=-1", "motion=motion_max_val=x",
                                      NULL};
    test_expect_bad_options(bad);
    test_expect_refused("motion", 2, 40, QGPU_LAYOUT_444, 8, QGPU_ERR_UNSUPPORTED, "motion",
                        "small");
}

/* Frames on 1..4 compute queues (QGPU_LANES): VMAF's features (motion's
 * history chained across lanes, vif's and adm's scratch per lane) and psnr
 * give the same scores bit for bit; 11 frames at depth 4 wrap every slot
 * and lane. */
static void test_lanes(void)
{
    enum { N = 11 };
    static const char *const spec = "vif adm motion motion=motion_five_frame_window=true psnr";
    TestPicture ref[N], dist[N];
    for (int i = 0; i < N; i++) {
        test_picture_alloc(&ref[i], 136, 72, QGPU_LAYOUT_420, 8, 3);
        test_picture_alloc(&dist[i], 136, 72, QGPU_LAYOUT_420, 8, 0);
        test_picture_random(&ref[i]);
        test_picture_noisy_copy(&dist[i], &ref[i], 2 + i);
    }
    test_expect_lanes_identical(spec, 4, ref, dist, N, 14);
    for (int i = 0; i < N; i++) {
        test_picture_free(&ref[i]);
        test_picture_free(&dist[i]);
    }
}

static const TestExtra extras[] = {
    {"motion_errors", test_errors},
    {"motion_lookahead", test_lookahead},
    {"motion_lanes", test_lanes},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, rows, sizeof(rows) / sizeof(rows[0]), extras, 3);
}
