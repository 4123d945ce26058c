/* adm on the device vs the plain-C reference (tests/ref/adm_ref.c):
 * random sizes (odd too), 8..16 bit, padded strides, every option, textured
 * and pure-noise content (the overflow paths), flat frames; error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adm_ref.h"
#include "driver.h"

/* expect[] order: the seven scores; with debug also integer_adm,
 * integer_adm_num, integer_adm_den, then num/den of each scale. */
static const char *const adm_outputs[] = {"integer_adm2",       "integer_aim",
                                          "integer_adm3",       "integer_adm_scale0",
                                          "integer_adm_scale1", "integer_adm_scale2",
                                          "integer_adm_scale3", NULL};
static const char *const adm_debug_outputs[] = {
    "integer_adm2",           "integer_aim",            "integer_adm3",
    "integer_adm_scale0",     "integer_adm_scale1",     "integer_adm_scale2",
    "integer_adm_scale3",     "integer_adm",            "integer_adm_num",
    "integer_adm_den",        "integer_adm_num_scale0", "integer_adm_den_scale0",
    "integer_adm_num_scale1", "integer_adm_den_scale1", "integer_adm_num_scale2",
    "integer_adm_den_scale2", "integer_adm_num_scale3", "integer_adm_den_scale3",
    NULL};
/* without debug=true */
static const char *const adm_absent[] = {"integer_adm_num", NULL};

/* Smooth texture with some detail, so masking and decoupling see natural
 * ranges (pure noise is the other extreme). */
static void fill_texture(TestPicture *t, int bitdepth, int seed)
{
    int w = t->pic.width, h = t->pic.height, max = (1 << bitdepth) - 1;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            double v = 0.5 + 0.3 * sin((x + seed) * 0.11) * cos(y * 0.07 + seed) +
                       0.1 * sin((x * y + seed) * 0.013) + (test_rand() % 64) / 2048.0;
            int s = (int)(v * max);
            test_set_sample(t, 0, x, y, (unsigned)(s < 0 ? 0 : s > max ? max : s));
        }
    }
}

/* low-contrast stripes under full-swing stripes: masking centre taps above
 * int16 (libvmaf AVX-512 keeps them in int32) */
static void fill_masked_stripes(TestPicture *ref, TestPicture *dist)
{
    int w = ref->pic.width, h = ref->pic.height, bitdepth = ref->pic.bitdepth;
    int max = (1 << bitdepth) - 1, sh = bitdepth - 8;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            int on = (y + x / 23) & 1;
            test_set_sample(ref, 0, x, y,
                            (unsigned)((128 + (on ? 16 : -16) + (int)(test_rand() % 3)) << sh));
            test_set_sample(dist, 0, x, y, on ? (unsigned)max : (test_rand() % 4u) << sh);
        }
    }
}

/* flat reference, full-swing row stripes: the largest coefficients (int16
 * wrap-arounds, libvmaf's int32 centre tap) */
static void fill_flat_stripes(TestPicture *ref, TestPicture *dist)
{
    int w = ref->pic.width, h = ref->pic.height, max = (1 << ref->pic.bitdepth) - 1;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            test_set_sample(ref, 0, x, y, (unsigned)max / 2);
            unsigned v = ((y + (x / 23)) & 1) ? (unsigned)max : test_rand() % 8u;
            test_set_sample(dist, 0, x, y, v);
        }
    }
}

/* variant 1: texture, 2: pure noise, 3: flat under full-swing stripes,
 * 4: low-contrast under full-swing stripes; distorted a noisy copy */
static void fill_adm(TestClip *clip, int frame)
{
    const TestCase *c = clip->c;
    TestPicture *ref = &clip->ref[frame], *dist = &clip->dist[frame];
    if (c->variant == 2)
        test_picture_random(ref);
    else
        fill_texture(ref, c->bitdepth, frame);
    test_picture_noisy_copy(dist, ref, (1 + frame * 7) << (c->bitdepth - 8));
    if (c->variant == 3)
        fill_flat_stripes(ref, dist);
    if (c->variant == 4)
        fill_masked_stripes(ref, dist);
}

static int adm_frame(const TestClip *clip, int frame, const void *arg, double *e, double *bound)
{
    const TestCase *c = clip->c;
    AdmRefResult r;
    TestLuma l;
    (void)bound;
    if (test_luma(clip, frame, &l))
        return -1;
    int err = adm_ref_compute(l.ref, l.dist, c->w, c->w, c->h, c->bitdepth, arg, &r);
    test_luma_free(&l);
    if (err)
        return -1;
    const double scores[18] = {r.adm2,         r.aim,          r.adm3,         r.scale[0],
                               r.scale[1],     r.scale[2],     r.scale[3],     r.adm2,
                               r.num,          r.den,          r.num_scale[0], r.den_scale[0],
                               r.num_scale[1], r.den_scale[1], r.num_scale[2], r.den_scale[2],
                               r.num_scale[3], r.den_scale[3]};
    memcpy(e, scores, sizeof(double) * clip->nb_outputs);
    return 0;
}

/* The rows' options: libvmaf's defaults with the row's changes (main). */
static AdmRefOptions defaults, egl1, egl13, v3d0h, csf3, csf1, skip;

static void init_options(void)
{
    adm_ref_default_options(&defaults);
    egl1 = egl13 = v3d0h = csf3 = csf1 = skip = defaults;
    egl1.egl = 1.0;  /* vmaf_v0.6.1neg */
    egl13.egl = 1.3; /* not an integer: the double product is truncated */
    v3d0h.csf_mode = 2; /* vmaf_v1.0.16_3d0h */
    v3d0h.egl = 1.0;
    v3d0h.noise_weight = 0.02;
    v3d0h.dlm_weight = 0.7;
    v3d0h.min_val = 0.5;
    csf3.csf_mode = 3;
    csf3.nvd = 1.5;
    csf3.rdh = 2160;
    csf1.csf_mode = 1;
    csf1.csf_scale = 2.0;
    csf1.csf_diag_scale = 0.5;
    csf1.nvd = 5.0;
    skip.skip_aim = true;
    skip.skip_scale0 = true;
    skip.rdh = 2160;
}

/* {w, h, layout, bitdepth, depth, frames, stride_pad, content (fill_adm)} */
static const TestCase default_cases[] = {
    {33, 33, QGPU_LAYOUT_420, 8, 3, 2, 7, 1},
    {383, 287, QGPU_LAYOUT_420, 8, 2, 1, 0, 1},
    {481, 321, QGPU_LAYOUT_444, 8, 2, 1, 5, 2},
    /* libvmaf AVX-512's unmirrored last column: (bw - 1) % 8 == 0 at
     * scales 1, 2, 3 */
    {130, 66, QGPU_LAYOUT_420, 8, 2, 1, 0, 1},
    {258, 136, QGPU_LAYOUT_420, 10, 2, 1, 3, 2},
    {200, 150, QGPU_LAYOUT_420, 16, 2, 1, 0, 2}, /* int32 wrap in the DWT */
    {150, 120, QGPU_LAYOUT_420, 8, 2, 1, 9, 3},
    {101, 77, QGPU_LAYOUT_444, 12, 2, 1, 0, 3},
};
static const TestCase egl1_debug_cases[] = {{176, 144, QGPU_LAYOUT_420, 8, 3, 2, 0, 1}};
static const TestCase egl1_cases[] = {
    {130, 97, QGPU_LAYOUT_420, 10, 2, 1, 4, 2},
    {150, 120, QGPU_LAYOUT_420, 8, 2, 1, 0, 4},
    {211, 90, QGPU_LAYOUT_420, 10, 2, 1, 11, 4},
};
static const TestCase egl13_cases[] = {{150, 100, QGPU_LAYOUT_444, 8, 2, 1, 0, 1}};
static const TestCase v3d0h_cases[] = {{160, 120, QGPU_LAYOUT_420, 8, 3, 2, 0, 1}};
static const TestCase csf3_cases[] = {{140, 90, QGPU_LAYOUT_420, 12, 2, 1, 0, 1}};
static const TestCase csf1_cases[] = {{120, 80, QGPU_LAYOUT_420, 8, 2, 1, 0, 1}};
static const TestCase skip_cases[] = {{100, 70, QGPU_LAYOUT_420, 8, 2, 1, 0, 1}};

static const TestRandom adm_random = {.min_w = 33, .max_w = 260, .min_h = 33, .max_h = 180,
                                      .max_frames = 3, .max_depth = 3, .max_pad = 33,
                                      .max_variant = 2};

static const TestRow rows[] = {
    {.name = "adm", .spec = "adm", .frame_reference = adm_frame, .ref_arg = &defaults,
     .outputs = adm_outputs, .absent = adm_absent, .fill = fill_adm, .cases = default_cases,
     .nb_cases = 8, .random = &adm_random, .nb_random = 10},
    {.name = "adm_egl_1_debug", .spec = "adm=adm_enhn_gain_limit=1.0:debug=true",
     .frame_reference = adm_frame, .ref_arg = &egl1, .outputs = adm_debug_outputs,
     .suffix = "_egl_1", .fill = fill_adm, .cases = egl1_debug_cases, .nb_cases = 1},
    {.name = "adm_egl_1", .spec = "adm=egl=1", .frame_reference = adm_frame, .ref_arg = &egl1,
     .outputs = adm_outputs, .absent = adm_absent, .suffix = "_egl_1", .fill = fill_adm,
     .cases = egl1_cases, .nb_cases = 3},
    {.name = "adm_egl_1.3", .spec = "adm=egl=1.3", .frame_reference = adm_frame,
     .ref_arg = &egl13, .outputs = adm_outputs, .absent = adm_absent, .suffix = "_egl_1.3",
     .fill = fill_adm, .cases = egl13_cases, .nb_cases = 1},
    {.name = "adm_3d0h",
     .spec = "adm=adm_csf_mode=2:adm_enhn_gain_limit=1.0:adm_noise_weight=0.02:"
             "adm_dlm_weight=0.7:adm_min_val=0.5:debug=true",
     .frame_reference = adm_frame, .ref_arg = &v3d0h, .outputs = adm_debug_outputs,
     .suffix = "_csf_2_dlmw_0.7_egl_1_min_0.5_nw_0.02", .fill = fill_adm,
     .cases = v3d0h_cases, .nb_cases = 1},
    {.name = "adm_csf_3", .spec = "adm=csf=3:nvd=1.5:rdh=2160", .frame_reference = adm_frame,
     .ref_arg = &csf3, .outputs = adm_outputs, .absent = adm_absent,
     .suffix = "_csf_3_nvd_1.5_rdh_2160", .fill = fill_adm, .cases = csf3_cases,
     .nb_cases = 1},
    {.name = "adm_csf_1", .spec = "adm=csf=1:scf=2:scfd=0.5:nvd=5:debug=true",
     .frame_reference = adm_frame, .ref_arg = &csf1, .outputs = adm_debug_outputs,
     .suffix = "_scfd_0.5_csf_1_scf_2_nvd_5", .fill = fill_adm, .cases = csf1_cases,
     .nb_cases = 1},
    {.name = "adm_skip", .spec = "adm=adm_skip_aim=true:ssz=true:rdh=2160:debug=true",
     .frame_reference = adm_frame, .ref_arg = &skip, .outputs = adm_debug_outputs,
     .suffix = "_rdh_2160_ssz", .fill = fill_adm, .cases = skip_cases, .nb_cases = 1},
};

/* Identical flat frames: den == 0, adm2 = 1, aim = 0 (libvmaf's CLI). */
static void test_flat(void)
{
    TestPicture a;
    double v = -1;
    test_picture_alloc(&a, 64, 48, QGPU_LAYOUT_420, 8, 0);
    test_fill_flat_luma(&a, 128);
    QgpuContext *ctx = test_score_pairs("adm", 1, &a, &a, 1);
    if (ctx) {
        CHECK(qgpu_get_score(ctx, 0, "integer_adm2", &v) == 0 && v == 1.0, "flat adm2 %g", v);
        CHECK(qgpu_get_score(ctx, 0, "integer_aim", &v) == 0 && v == 0.0, "flat aim %g", v);
        CHECK(qgpu_get_score(ctx, 0, "integer_adm3", &v) == 0 && v == 1.0, "flat adm3 %g", v);
    }
    test_picture_free(&a);
    qgpu_close(&ctx);
}

static void test_errors(void)
{
    /* egl below 1, csf 4, nvd text, an unknown option */
    static const char *const bad[] = {"adm=adm_enhn_gain_limit=0.5", "adm=adm_csf_mode=4",
                                      "adm=nvd=abc", "adm=no_such=1", NULL};
    test_expect_bad_options(bad);
    test_expect_refused("adm", 32, 100, QGPU_LAYOUT_420, 8, QGPU_ERR_UNSUPPORTED, "too small",
                        NULL);
    test_expect_refused("adm", 100, 20, QGPU_LAYOUT_420, 8, QGPU_ERR_UNSUPPORTED, "33", NULL);
    test_expect_refused("adm=nvd=2", 64, 64, QGPU_LAYOUT_420, 8, QGPU_ERR_BAD_OPTION, "3240",
                        NULL);
    /* no blend table: libvmaf uses -EINVAL as the factor and prints NaN
     * scores; we refuse the options instead */
    test_expect_refused("adm=csf=2:rdh=1440", 96, 64, QGPU_LAYOUT_420, 8, QGPU_ERR_BAD_OPTION,
                        "adm_csf_mode", NULL);
}

static const TestExtra extras[] = {
    {"adm_flat", test_flat},
    {"adm_errors", test_errors},
};

int main(int argc, char **argv)
{
    init_options();
    /* both paths of the kernels' double expressions (libqgpu/src/feature/) */
    return test_main_both_paths(argc, argv, "QGPU_ADM_FP64", "0", "1", rows,
                                sizeof(rows) / sizeof(rows[0]), extras, 2);
}
