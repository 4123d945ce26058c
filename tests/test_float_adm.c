/* float_adm on the device vs the plain-C reference (tests/ref/float_adm_ref.c):
 * random sizes (odd too), layouts, 8..16 bit, padded strides, pipeline
 * depths, structured and random pictures; every option with its output
 * name; flat pictures; error paths. The kernels differ from the reference
 * only where libvmaf's double products are emulated in float (hi/lo split)
 * and, for adm_p_norm other than 3, by the device's pow; the bound used is
 * 2e-6 absolute on scores (1e-5 with p-norm 2), 2e-6 relative on num/den. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "float_adm_ref.h"

/* expect[] order: adm2, aim, adm3, adm_scale0..3; with debug also
 * adm_num_scale0..3, adm_den_scale0..3, adm, adm_num, adm_den. With an
 * option suffix the names are written out: libvmaf's "adm" never carries
 * the suffix. */
static const char *const adm_outputs[] = {"adm2",       "aim",        "adm3",       "adm_scale0",
                                          "adm_scale1", "adm_scale2", "adm_scale3", NULL};
static const char *const adm_debug_outputs[] = {
    "adm2",           "aim",            "adm3",           "adm_scale0",     "adm_scale1",
    "adm_scale2",     "adm_scale3",     "adm_num_scale0", "adm_num_scale1", "adm_num_scale2",
    "adm_num_scale3", "adm_den_scale0", "adm_den_scale1", "adm_den_scale2", "adm_den_scale3",
    "adm",            "adm_num",        "adm_den",        NULL};
static const char *const egl1_debug_outputs[] = {
    "adm2_egl_1",           "aim_egl_1",            "adm3_egl_1",
    "adm_scale0_egl_1",     "adm_scale1_egl_1",     "adm_scale2_egl_1",
    "adm_scale3_egl_1",     "adm_num_scale0_egl_1", "adm_num_scale1_egl_1",
    "adm_num_scale2_egl_1", "adm_num_scale3_egl_1", "adm_den_scale0_egl_1",
    "adm_den_scale1_egl_1", "adm_den_scale2_egl_1", "adm_den_scale3_egl_1",
    "adm",                  "adm_num_egl_1",        "adm_den_egl_1",
    NULL};
static const char *const sasc_debug_outputs[] = {
    "adm2_sasc_1",           "aim_sasc_1",            "adm3_sasc_1",
    "adm_scale0_sasc_1",     "adm_scale1_sasc_1",     "adm_scale2_sasc_1",
    "adm_scale3_sasc_1",     "adm_num_scale0_sasc_1", "adm_num_scale1_sasc_1",
    "adm_num_scale2_sasc_1", "adm_num_scale3_sasc_1", "adm_den_scale0_sasc_1",
    "adm_den_scale1_sasc_1", "adm_den_scale2_sasc_1", "adm_den_scale3_sasc_1",
    "adm",                   "adm_num_sasc_1",        "adm_den_sasc_1",
    NULL};

static int float_adm_frame(const TestClip *clip, int frame, const void *arg, double *e,
                           double *bound)
{
    const TestCase *c = clip->c;
    FloatAdmRefResult r;
    TestLuma l;
    (void)bound;
    if (test_luma(clip, frame, &l))
        return -1;
    int err = float_adm_ref_compute(l.ref, l.dist, c->w, c->h, c->w, c->bitdepth, arg, &r);
    test_luma_free(&l);
    if (err)
        return -1;
    e[0] = r.adm2;
    e[1] = r.aim;
    e[2] = r.adm3;
    for (int s = 0; s < 4; s++) {
        e[3 + s] = r.scale[s];
        if (clip->nb_outputs == 18) { /* debug */
            e[7 + s] = r.num[s];
            e[11 + s] = r.den[s];
        }
    }
    if (clip->nb_outputs == 18) {
        e[15] = r.adm2;
        e[16] = r.num_total;
        e[17] = r.den_total;
    }
    return 0;
}

/* The kernels differ from the reference only where libvmaf's double
 * products are emulated in float (hi/lo split) and, for adm_p_norm other
 * than 3, by the device's pow: 2e-6 absolute on scores (1e-5 with p-norm 2),
 * 2e-6 relative (+1e-6) on num/den. */
static const TestTolerance score_tol = {2e-6, 0, 0}, pnorm_tol = {1e-5, 0, 0};
static const TestTolerance debug_tol[18] = {
    {2e-6, 0, 0},    {2e-6, 0, 0},    {2e-6, 0, 0},    {2e-6, 0, 0},    {2e-6, 0, 0},
    {2e-6, 0, 0},    {2e-6, 0, 0},    {1e-6, 2e-6, 0}, {1e-6, 2e-6, 0}, {1e-6, 2e-6, 0},
    {1e-6, 2e-6, 0}, {1e-6, 2e-6, 0}, {1e-6, 2e-6, 0}, {1e-6, 2e-6, 0}, {1e-6, 2e-6, 0},
    {2e-6, 0, 0},    {1e-6, 2e-6, 0}, {1e-6, 2e-6, 0}};

/* The rows' options: libvmaf's defaults with one change each (main). */
static FloatAdmRefOpts defaults, egl1, egl12, rdf, nw, dlmw, pnorm, bcm, aah, fs, sasc, ssz;

static void init_options(void)
{
    float_adm_ref_defaults(&defaults);
    egl1 = egl12 = rdf = nw = dlmw = pnorm = bcm = aah = fs = sasc = ssz = defaults;
    egl1.egl = 1.0;
    egl12.egl = 1.2;
    rdf.rdh = 2160;
    rdf.nvd = 1.5;
    nw.nw = 0.02;
    dlmw.dlmw = 0.7;
    dlmw.min_val = 0.5;
    pnorm.p_norm = 2.0;
    bcm.bypass_cm = 1;
    aah.apply_hm = 1;
    fs.f1s[0] = 0.5;
    fs.f2s[3] = 2.0;
    sasc.skip_aim_scale = 1;
    ssz.skip_scale0 = 1;
}

/* {w, h, layout, bitdepth, depth, frames, stride_pad, variant} */
static const TestCase odd_cases[] = {{383, 287, QGPU_LAYOUT_420, 8, 2, 2, 0, 0}};
static const TestCase small_cases[] = {{32, 32, QGPU_LAYOUT_420, 8, 2, 4, 0, 0}};
static const TestCase c97x65[] = {{97, 65, QGPU_LAYOUT_444, 10, 2, 2, 0, 0}};
static const TestCase c120x72[] = {{120, 72, QGPU_LAYOUT_420, 8, 2, 2, 0, 0}};
static const TestCase c130x90[] = {{130, 90, QGPU_LAYOUT_420, 8, 2, 2, 0, 0}};
static const TestCase c100x64_gray[] = {{100, 64, QGPU_LAYOUT_400, 8, 2, 2, 0, 0}};
static const TestCase c100x64[] = {{100, 64, QGPU_LAYOUT_420, 8, 2, 2, 0, 0}};

static const TestRandom adm_random = {.min_w = 32, .max_w = 260, .min_h = 32, .max_h = 180,
                                      .max_frames = 4, .max_depth = 3, .max_pad = 20};

static const TestRow rows[] = {
    {.name = "float_adm", .spec = "float_adm", .frame_reference = float_adm_frame,
     .ref_arg = &defaults, .outputs = adm_outputs, .tol = score_tol,
     .fill = test_fill_structured, .cases = odd_cases, .nb_cases = 1, .random = &adm_random,
     .nb_random = 4},
    {.name = "float_adm_debug", .spec = "float_adm=debug=true", .frame_reference = float_adm_frame,
     .ref_arg = &defaults, .outputs = adm_debug_outputs, .output_tol = debug_tol,
     .fill = test_fill_structured, .cases = small_cases, .nb_cases = 1, .random = &adm_random,
     .nb_random = 4},
    {.name = "float_adm_egl_1", .spec = "float_adm=adm_enhn_gain_limit=1.0:debug=true",
     .frame_reference = float_adm_frame, .ref_arg = &egl1, .outputs = egl1_debug_outputs,
     .output_tol = debug_tol, .fill = test_fill_structured, .cases = c97x65, .nb_cases = 1},
    {.name = "float_adm_egl_1.2", .spec = "float_adm=egl=1.2", .frame_reference = float_adm_frame,
     .ref_arg = &egl12, .outputs = adm_outputs, .suffix = "_egl_1.2", .tol = score_tol,
     .fill = test_fill_structured, .cases = c120x72, .nb_cases = 1},
    {.name = "float_adm_rdf_nvd", .spec = "float_adm=rdf=2160:nvd=1.5",
     .frame_reference = float_adm_frame, .ref_arg = &rdf, .outputs = adm_outputs,
     .suffix = "_nvd_1.5_rdf_2160", .tol = score_tol, .fill = test_fill_structured,
     .cases = c130x90, .nb_cases = 1},
    {.name = "float_adm_noise_weight", .spec = "float_adm=adm_noise_weight=0.02",
     .frame_reference = float_adm_frame, .ref_arg = &nw, .outputs = adm_outputs,
     .suffix = "_nw_0.02", .tol = score_tol, .fill = test_fill_structured,
     .cases = c100x64_gray, .nb_cases = 1},
    {.name = "float_adm_dlm_min", .spec = "float_adm=adm_dlm_weight=0.7:adm_min_val=0.5",
     .frame_reference = float_adm_frame, .ref_arg = &dlmw, .outputs = adm_outputs,
     .suffix = "_dlmw_0.7_min_0.5", .tol = score_tol, .fill = test_fill_structured,
     .cases = c100x64, .nb_cases = 1},
    {.name = "float_adm_p_norm", .spec = "float_adm=adm_p_norm=2",
     .frame_reference = float_adm_frame, .ref_arg = &pnorm, .outputs = adm_outputs,
     .suffix = "_apn_2", .tol = pnorm_tol, .fill = test_fill_structured, .cases = c100x64,
     .nb_cases = 1},
    {.name = "float_adm_bypass_cm", .spec = "float_adm=adm_bypass_cm=1",
     .frame_reference = float_adm_frame, .ref_arg = &bcm, .outputs = adm_outputs,
     .suffix = "_bcm_1", .tol = score_tol, .fill = test_fill_structured, .cases = c100x64,
     .nb_cases = 1},
    {.name = "float_adm_apply_hm", .spec = "float_adm=adm_adm3_apply_hm=true",
     .frame_reference = float_adm_frame, .ref_arg = &aah, .outputs = adm_outputs,
     .suffix = "_aah", .tol = score_tol, .fill = test_fill_structured, .cases = c100x64,
     .nb_cases = 1},
    {.name = "float_adm_f1s_f2s", .spec = "float_adm=adm_f1s0=0.5:adm_f2s3=2",
     .frame_reference = float_adm_frame, .ref_arg = &fs, .outputs = adm_outputs,
     .suffix = "_f1s0_0.5_f2s3_2", .tol = score_tol, .fill = test_fill_structured,
     .cases = c100x64, .nb_cases = 1},
    {.name = "float_adm_skip_aim", .spec = "float_adm=adm_skip_aim_scale=1:debug=true",
     .frame_reference = float_adm_frame, .ref_arg = &sasc, .outputs = sasc_debug_outputs,
     .output_tol = debug_tol, .fill = test_fill_structured, .cases = c100x64, .nb_cases = 1},
    {.name = "float_adm_skip_scale0", .spec = "float_adm=adm_skip_scale0=true",
     .frame_reference = float_adm_frame, .ref_arg = &ssz, .outputs = adm_outputs,
     .suffix = "_ssz", .tol = score_tol, .fill = test_fill_structured, .cases = c100x64,
     .nb_cases = 1},
};

/* Identical flat pictures: all bands are 0, so num and den of every scale
 * are the noise constant alone: adm2 = 1, aim = 0, adm3 = 1. */
static void test_flat(void)
{
    TestPicture a;
    double v = 0;
    test_picture_alloc(&a, 64, 40, QGPU_LAYOUT_420, 8, 0);
    test_fill_flat_luma(&a, 77);
    QgpuContext *ctx = test_score_pairs("float_adm", 1, &a, &a, 1);
    if (ctx) {
        CHECK(qgpu_get_score(ctx, 0, "adm2", &v) == 0 && fabs(v - 1.0) < 1e-7, "adm2 %.9f", v);
        CHECK(qgpu_get_score(ctx, 0, "aim", &v) == 0 && v == 0.0, "aim %.9f", v);
        CHECK(qgpu_get_score(ctx, 0, "adm3", &v) == 0 && fabs(v - 1.0) < 1e-7, "adm3 %.9f", v);
    }
    test_picture_free(&a);
    qgpu_close(&ctx);
}

static void test_errors(void)
{
    /* egl below 1, apn above 20, sasc above 3, f1s0 above 10; rdh is integer
     * adm's alias, float_adm's is rdf */
    static const char *const bad[] = {"float_adm=adm_enhn_gain_limit=0.5", "float_adm=apn=25",
                                      "float_adm=sasc=4", "float_adm=f1s0=11",
                                      "float_adm=rdh=2160", NULL};
    test_expect_bad_options(bad);
    test_expect_refused("float_adm", 31, 64, QGPU_LAYOUT_420, 8, QGPU_ERR_UNSUPPORTED,
                        "float_adm", NULL);
    test_expect_refused("float_adm=adm_csf_mode=1", 64, 64, QGPU_LAYOUT_420, 8,
                        QGPU_ERR_UNSUPPORTED, "float_adm", NULL);
}

static const TestExtra extras[] = {
    {"float_adm_flat", test_flat},
    {"float_adm_errors", test_errors},
};

int main(int argc, char **argv)
{
    init_options();
    return test_main(argc, argv, rows, sizeof(rows) / sizeof(rows[0]), extras, 2);
}
