/* float_motion on the device vs the plain-C reference (tests/ref/
 * float_misc_ref.c): moving structured pictures of random sizes, bit depths,
 * layouts and pitches, clips of 1..n frames, every implemented option,
 * motion_add_uv on every chroma layout, motion_add_scale1, output names, look-ahead, error
 * paths. The device reproduces libvmaf's
 * float operations in order, so the scores must agree to float rounding of
 * the final value (we ask for 1e-6 relative; on PoCL they are identical). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "float_misc_ref.h"

/* A row's options for the reference: force_zero, fps_weight, blend_factor,
 * blend_offset, filter_size, max_val, add_uv, add_scale1. */
static const char *const float_motion_outputs[] = {"motion2", "motion3", "motion", NULL};
/* debug=false: no "motion" */
static const char *const nodebug_outputs[] = {"motion2", "motion3", NULL};
static const char *const nodebug_absent[] = {"motion", NULL};

/* The reference's planes in libvmaf's sizes (floor-sized chroma), packed. */
static int packed_planes(const TestClip *clip, const void **planes, int pw[3], int ph[3])
{
    const TestCase *c = clip->c;
    for (int p = 0; p < 3; p++) {
        pw[p] = c->w;
        ph[p] = c->h;
    }
    if (c->layout == QGPU_LAYOUT_420 || c->layout == QGPU_LAYOUT_422)
        pw[1] = pw[2] = c->w / 2;
    if (c->layout == QGPU_LAYOUT_420)
        ph[1] = ph[2] = c->h / 2;
    for (int i = 0; i < c->frames; i++)
        for (int p = 0; p < (c->layout == QGPU_LAYOUT_400 ? 1 : 3); p++) {
            const QgpuPicture *pic = &clip->ref[i].pic;
            size_t row = (size_t)pw[p] * (c->bitdepth > 8 ? 2 : 1);
            char *l = malloc(row * ph[p] + 1);
            if (!l)
                return -1;
            for (int y = 0; y < ph[p]; y++)
                memcpy(l + y * row, (const char *)pic->data[p] + y * pic->stride[p], row);
            planes[3 * i + p] = l;
        }
    return 0;
}

static int float_motion_reference(const TestClip *clip, const void *arg, double *expect)
{
    const TestCase *c = clip->c;
    const void **planes = calloc(3 * (size_t)c->frames, sizeof(*planes));
    double *m = calloc(c->frames, sizeof(double)), *m2 = calloc(c->frames, sizeof(double));
    double *m3 = calloc(c->frames, sizeof(double));
    int pw[3], ph[3];
    int err = !planes || !m || !m2 || !m3 || packed_planes(clip, planes, pw, ph);
    if (!err) {
        float_motion_ref_clip(planes, (unsigned)c->frames, pw, ph, c->bitdepth, arg, m, m2, m3);
        for (int i = 0; i < c->frames; i++) {
            double *e = expect + i * clip->nb_outputs;
            e[0] = m2[i];
            e[1] = m3[i];
            if (clip->nb_outputs == 3)
                e[2] = m[i];
        }
    }
    for (int i = 0; planes && i < 3 * c->frames; i++)
        free((void *)planes[i]);
    free(planes);
    free(m);
    free(m2);
    free(m3);
    return err ? -1 : 0;
}

/* The device reproduces libvmaf's float operations in order, so the scores
 * must agree to float rounding of the final value: 1e-6 relative, absolute
 * below 1 (on PoCL they are identical). */
static const TestTolerance float_tol = {0, 1e-6, 1.0};

static const FloatMotionRefOptions plain = {0, 1.0, 1.0, 40.0, 5, 10000.0, 0, 0};
static const FloatMotionRefOptions max3 = {0, 1.0, 1.0, 40.0, 5, 3.0, 0, 0};
static const FloatMotionRefOptions blend = {0, 1.0, 0.5, 3.0, 5, 10000.0, 0, 0};
static const FloatMotionRefOptions fps2 = {0, 2.0, 1.0, 40.0, 5, 10000.0, 0, 0};
static const FloatMotionRefOptions size1 = {0, 1.0, 1.0, 40.0, 1, 10000.0, 0, 0};
static const FloatMotionRefOptions add_uv = {0, 1.0, 1.0, 40.0, 5, 10000.0, 1, 0};
static const FloatMotionRefOptions add_uv_fps = {0, 0.5, 1.0, 40.0, 5, 10000.0, 1, 0};
static const FloatMotionRefOptions scale1 = {0, 1.0, 1.0, 40.0, 5, 10000.0, 0, 1};
static const FloatMotionRefOptions zero = {1, 1.0, 1.0, 40.0, 5, 10000.0, 0, 0};

/* {w, h, layout, bitdepth, depth, frames, stride_pad, speed} */
static const TestCase plain_cases[] = {
    {96, 64, QGPU_LAYOUT_420, 8, 2, 7, 0, 1},
    {3, 3, QGPU_LAYOUT_444, 8, 2, 3, 0, 1},
    {383, 287, QGPU_LAYOUT_420, 8, 2, 3, 0, 1},
    {1000, 20, QGPU_LAYOUT_420, 10, 2, 3, 0, 1}, /* several tiles across */
    /* clips of 1..4 frames */
    {33, 21, QGPU_LAYOUT_420, 8, 2, 1, 0, 1}, {33, 21, QGPU_LAYOUT_420, 8, 3, 2, 0, 1},
    {33, 21, QGPU_LAYOUT_420, 8, 1, 3, 0, 1}, {33, 21, QGPU_LAYOUT_420, 8, 2, 4, 0, 1},
};
static const TestCase max3_cases[] = {{80, 48, QGPU_LAYOUT_420, 10, 2, 6, 0, 9}}; /* the cap */
static const TestCase blend_cases[] = {{64, 40, QGPU_LAYOUT_420, 12, 2, 5, 0, 4}};
static const TestCase fps2_cases[] = {{50, 30, QGPU_LAYOUT_420, 16, 2, 4, 0, 1}};
static const TestCase filter_cases[] = {{70, 33, QGPU_LAYOUT_420, 8, 2, 5, 0, 1}};
static const TestCase add_uv_cases[] = { /* every chroma layout */
    {67, 45, QGPU_LAYOUT_420, 8, 2, 4, 0, 1},
    {68, 47, QGPU_LAYOUT_422, 10, 2, 4, 3, 1},
    {69, 49, QGPU_LAYOUT_444, 8, 2, 4, 6, 1},
};
static const TestCase add_uv_fps_cases[] = {{7, 6, QGPU_LAYOUT_420, 16, 2, 3, 0, 1}};
static const TestCase scale1_cases[] = {
    {96, 64, QGPU_LAYOUT_420, 8, 2, 4, 0, 1},
    {67, 45, QGPU_LAYOUT_420, 10, 2, 4, 0, 2},
    {301, 77, QGPU_LAYOUT_420, 8, 2, 4, 0, 3},
    {3, 3, QGPU_LAYOUT_420, 10, 2, 4, 0, 4},
};
static const TestCase zero_cases[] = {{40, 24, QGPU_LAYOUT_420, 8, 2, 4, 0, 1}};

static const TestRandom float_motion_random = {.min_w = 3, .max_w = 300, .min_h = 3,
                                               .max_h = 150, .max_frames = 5, .max_depth = 4,
                                               .max_pad = 30, .max_variant = 3};

static const TestRow rows[] = {
    {.name = "float_motion", .spec = "float_motion", .reference = float_motion_reference,
     .ref_arg = &plain, .outputs = float_motion_outputs, .tol = float_tol,
     .fill = test_fill_moving, .cases = plain_cases, .nb_cases = 8,
     .random = &float_motion_random, .nb_random = 10},
    {.name = "float_motion_max_val", .spec = "float_motion=motion_max_val=3",
     .reference = float_motion_reference, .ref_arg = &max3, .outputs = float_motion_outputs,
     .suffix = "_mmxv_3", .tol = float_tol, .fill = test_fill_moving, .cases = max3_cases,
     .nb_cases = 1},
    {.name = "float_motion_blend",
     .spec = "float_motion=motion_blend_factor=0.5:motion_blend_offset=3:debug=false",
     .reference = float_motion_reference, .ref_arg = &blend, .outputs = nodebug_outputs,
     .absent = nodebug_absent, .suffix = "_mbf_0.5_mbo_3", .tol = float_tol,
     .fill = test_fill_moving, .cases = blend_cases, .nb_cases = 1},
    {.name = "float_motion_fps_weight", .spec = "float_motion=motion_fps_weight=2",
     .reference = float_motion_reference, .ref_arg = &fps2, .outputs = float_motion_outputs,
     .suffix = "_mfw_2", .tol = float_tol, .fill = test_fill_moving, .cases = fps2_cases,
     .nb_cases = 1},
    {.name = "float_motion_filter_size_1", .spec = "float_motion=motion_filter_size=1",
     .reference = float_motion_reference, .ref_arg = &size1, .outputs = float_motion_outputs,
     .suffix = "_mfs_1", .tol = float_tol, .fill = test_fill_moving, .cases = filter_cases,
     .nb_cases = 1},
    /* 7 is libvmaf's default size written out: the same 5 taps */
    {.name = "float_motion_filter_size_7", .spec = "float_motion=motion_filter_size=7",
     .reference = float_motion_reference, .ref_arg = &plain, .outputs = float_motion_outputs,
     .suffix = "_mfs_7", .tol = float_tol, .fill = test_fill_moving, .cases = filter_cases,
     .nb_cases = 1},
    {.name = "float_motion_add_uv", .spec = "float_motion=motion_add_uv=true",
     .reference = float_motion_reference, .ref_arg = &add_uv, .outputs = float_motion_outputs,
     .suffix = "_mau", .tol = float_tol, .fill = test_fill_moving, .cases = add_uv_cases,
     .nb_cases = 3},
    {.name = "float_motion_add_uv_fps",
     .spec = "float_motion=motion_add_uv=true:motion_fps_weight=0.5",
     .reference = float_motion_reference, .ref_arg = &add_uv_fps,
     .outputs = float_motion_outputs, .suffix = "_mau_mfw_0.5", .tol = float_tol,
     .fill = test_fill_moving, .cases = add_uv_fps_cases, .nb_cases = 1},
    {.name = "float_motion_add_scale1", .spec = "float_motion=motion_add_scale1=true",
     .reference = float_motion_reference, .ref_arg = &scale1, .outputs = float_motion_outputs,
     .suffix = "_mdc", .tol = float_tol, .fill = test_fill_moving, .cases = scale1_cases,
     .nb_cases = 4},
    {.name = "float_motion_force_zero", .spec = "float_motion=motion_force_zero=true",
     .reference = float_motion_reference, .ref_arg = &zero, .outputs = float_motion_outputs,
     .suffix = "_force_0", .tol = float_tol, .fill = test_fill_moving, .cases = zero_cases,
     .nb_cases = 1},
};

/* Frame n is final once frame n+1 is in. */
static void test_lookahead(void)
{
    test_expect_lookahead("float_motion", 2);
}

static void test_errors(void)
{
    /* blend factor > 1, negative fps weight, non-numeric max, filter size 10 */
    static const char *const bad[] = {
        "float_motion=motion_blend_factor=2", "float_motion=motion_fps_weight=-1",
        "float_motion=motion_max_val=x", "float_motion=motion_filter_size=10", NULL};
    test_expect_bad_options(bad);
    test_expect_refused("float_motion", 2, 40, QGPU_LAYOUT_444, 8, QGPU_ERR_UNSUPPORTED,
                        "float_motion", "small");
    test_expect_refused("float_motion", 40, 2, QGPU_LAYOUT_444, 8, QGPU_ERR_UNSUPPORTED,
                        "float_motion", "small");
    test_expect_refused("float_motion", 40, 40, QGPU_LAYOUT_444, 9, QGPU_ERR_UNSUPPORTED,
                        "float_motion", "9-bit");
    test_expect_refused("float_motion=motion_add_scale1=true:motion_add_uv=true", 40, 40,
                        QGPU_LAYOUT_444, 8, QGPU_ERR_UNSUPPORTED, "float_motion",
                        "not implemented");
    /* motion_add_uv: gray input, and chroma below 3x3 */
    test_expect_refused("float_motion=motion_add_uv=true", 40, 40, QGPU_LAYOUT_400, 8,
                        QGPU_ERR_UNSUPPORTED, "gray", NULL);
    test_expect_refused("float_motion=motion_add_uv=true", 40, 5, QGPU_LAYOUT_420, 8,
                        QGPU_ERR_UNSUPPORTED, "chroma plane 20x2 is too small", NULL);
    test_expect_refused("float_motion=motion_filter_size=3", 40, 40, QGPU_LAYOUT_444, 8,
                        QGPU_ERR_UNSUPPORTED, "float_motion", "not implemented");
}

static const TestExtra extras[] = {
    {"float_motion_errors", test_errors},
    {"float_motion_lookahead", test_lookahead},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, rows, sizeof(rows) / sizeof(rows[0]), extras, 2);
}
