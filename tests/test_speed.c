/* speed_chroma on the device vs the whole-plane reference (tests/ref/speed_ref.c):
 * random sizes, every chroma layout, 8/10/12/16 bit, padded strides, pipeline
 * depths, random options (kernel scale, prescale nearest/bilinear, weight
 * modes, sigma_nn, nn_floor, max_val); 10-bit x4 copies; singular (flat)
 * planes; output names; errors; the covariance sums on the host and on the
 * device (QGPU_SPEED_FP64=0/1). The device computes the same float
 * operations as the reference (and libvmaf), so results are expected to be
 * identical; the bound below only leaves room for a device compiler that
 * rounds differently (observed difference on PoCL: printed at the end). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "speed_ref.h"

static int nonzero; /* reference scores > 0 seen (the cases must not all be singular) */
static const char *const base_names[3] = {"speed_chroma_u", "speed_chroma_v", "speed_chroma_uv"};

/* smooth colour structure + noise, so the 25x25 covariance is regular */
static void fill_content(TestPicture *t, int seed)
{
    int max = (1 << t->pic.bitdepth) - 1;
    for (int p = 0; p < 3; p++)
        for (int y = 0; y < test_plane_h(&t->pic, p); y++)
            for (int x = 0; x < test_plane_w(&t->pic, p); x++) {
                double v = 0.5 + 0.25 * sin((x * (p + 1) + seed) * 0.09) * cos((y + 3 * p) * 0.07);
                int s = (int)(v * max) + test_rand_range(-max / 12, max / 12);
                test_set_sample(t, p, x, y, (unsigned)(s < 0 ? 0 : s > max ? max : s));
            }
}

static void fill_flat_plane(TestPicture *t, int p)
{
    for (int y = 0; y < test_plane_h(&t->pic, p); y++)
        for (int x = 0; x < test_plane_w(&t->pic, p); x++)
            test_set_sample(t, p, x, y, 100u << (t->pic.bitdepth - 8));
}

/* Scores frames of (ref, dis) with speed_chroma on a context of the given
 * pipeline depth; out[frame][0..2]: u, v, uv. Returns 0, or -1 after a
 * failed check. */
static int score_frames(const TestPicture *ref, const TestPicture *dis, int frames, int depth,
                        double out[][3])
{
    QgpuContext *ctx = test_score_pairs("speed_chroma", depth, ref, dis, frames);
    if (!ctx)
        return -1;
    for (int i = 0; i < frames; i++)
        for (int k = 0; k < 3; k++)
            CHECK(qgpu_get_score(ctx, (unsigned)i, base_names[k], &out[i][k]) == 0,
                  "frame %d: no %s", i, base_names[k]);
    qgpu_close(&ctx);
    return 0;
}

static void fill_speed(TestClip *clip, int frame)
{
    const TestCase *c = clip->c;
    fill_content(&clip->ref[frame], frame * 17 + c->w);
    test_picture_noisy_copy(&clip->dist[frame], &clip->ref[frame],
                            (2 + 6 * frame) << (c->bitdepth - 8));
}

static int speed_frame(const TestClip *clip, int frame, const void *arg, double *e,
                       double *bound)
{
    (void)bound;
    if (speed_ref(&clip->ref[frame].pic, &clip->dist[frame].pic, arg, e))
        return -1;
    for (int k = 0; k < 3; k++)
        nonzero += e[k] > 0;
    return 0;
}

static const char *const speed_outputs[] = {"speed_chroma_u", "speed_chroma_v",
                                            "speed_chroma_uv", NULL};
/* The device computes the same float operations as the reference (and
 * libvmaf), so results are expected to be identical; the bound only leaves
 * room for a device compiler that rounds differently. */
static const TestTolerance speed_tol = {2e-5, 0, 0};

/* The rows' options: libvmaf's defaults with the row's changes (main); the
 * option rows take their values from the pools kernel scale {1, 0.5, 1.5,
 * 2, 2/3 (inexact: the spec says 0.666666667)}, prescale {1, 0.6, 0.5,
 * 1.25, 0.8}, nearest/bilinear, weight modes 0..6, sigma_nn, nn_floor,
 * max_val {1000, 2.5}. */
static SpeedRefOptions defaults, opt_a, opt_b, opt_c, opt_d, opt_e, v1, v1_ps06, v1_ps05;

static void init_options(void)
{
    speed_ref_defaults(&defaults);
    opt_a = opt_b = opt_c = opt_d = opt_e = v1 = defaults;
    opt_a.kernelscale = 0.5;
    opt_a.prescale = 1.25;
    opt_a.wvm = 1;
    opt_a.sigma_nn = 0.35;
    opt_a.nn_floor = 0.3;
    opt_b.kernelscale = 1.5;
    opt_b.prescale = 0.8;
    opt_b.bilinear = 1;
    opt_b.wvm = 2;
    opt_b.sigma_nn = 0.9;
    opt_b.max_val = 2.5;
    opt_c.kernelscale = 2.0;
    opt_c.prescale = 0.6;
    opt_c.wvm = 3;
    opt_c.sigma_nn = 0.1;
    opt_c.nn_floor = 1.0;
    opt_d.kernelscale = 2.0 / 3.0;
    opt_d.prescale = 0.5;
    opt_d.bilinear = 1;
    opt_d.wvm = 4;
    opt_d.sigma_nn = 1.1;
    opt_d.nn_floor = 0.5;
    opt_d.max_val = 2.5;
    opt_e.bilinear = 1;
    opt_e.wvm = 6;
    opt_e.sigma_nn = 0.6;
    opt_e.nn_floor = 0.7;
    /* the v1 models' settings */
    v1.max_val = 45;
    v1.nn_floor = 0.1;
    v1.sigma_nn = 0.19;
    v1.wvm = 5;
    v1_ps06 = v1_ps05 = v1;
    v1_ps06.prescale = 0.6;
    v1_ps06.bilinear = 1;
    v1_ps05.prescale = 0.5;
    v1_ps05.bilinear = 1;
}

/* {w, h, layout, bitdepth, depth, frames, stride_pad, variant} */
static const TestCase default_cases[] = {
    /* the smallest sizes libvmaf runs: 160x160 4:2:0 and 80x80 4:4:4 */
    {160, 160, QGPU_LAYOUT_420, 8, 1, 1, 0, 0},
    {80, 80, QGPU_LAYOUT_444, 8, 1, 1, 0, 0},
};
static const TestCase v1_cases[] = {{400, 300, QGPU_LAYOUT_420, 8, 2, 2, 0, 0}};
static const TestCase v1_ps06_cases[] = {{560, 300, QGPU_LAYOUT_420, 10, 2, 1, 3, 0}};
static const TestCase v1_ps05_cases[] = {{640, 360, QGPU_LAYOUT_420, 8, 1, 1, 0, 0}};

/* Enough 5x5-block positions for a regular covariance (operating size >=
 * 12): chroma at least 200 / prescale + 1 wide and high, so luma twice that
 * (4:2:0; more than needed for the other layouts). No 4:0:0. */
static const TestRandom ps1 = {.min_w = 402, .max_w = 642, .min_h = 402, .max_h = 522,
                               .layouts = 7, .max_frames = 3, .max_depth = 3, .max_pad = 9};
static const TestRandom ps125 = {.min_w = 322, .max_w = 562, .min_h = 322, .max_h = 442,
                                 .layouts = 7, .max_frames = 3, .max_depth = 3, .max_pad = 9};
static const TestRandom ps08 = {.min_w = 502, .max_w = 742, .min_h = 502, .max_h = 622,
                                .layouts = 7, .max_frames = 3, .max_depth = 3, .max_pad = 9};
static const TestRandom ps06 = {.min_w = 668, .max_w = 908, .min_h = 668, .max_h = 788,
                                .layouts = 7, .max_frames = 3, .max_depth = 3, .max_pad = 9};
static const TestRandom ps05 = {.min_w = 802, .max_w = 1042, .min_h = 802, .max_h = 922,
                                .layouts = 7, .max_frames = 3, .max_depth = 3, .max_pad = 9};

static const TestRow rows[] = {
    {.name = "speed_chroma", .spec = "speed_chroma", .frame_reference = speed_frame,
     .ref_arg = &defaults, .outputs = speed_outputs, .tol = speed_tol, .fill = fill_speed,
     .cases = default_cases, .nb_cases = 2, .random = &ps1, .nb_random = 4},
    {.name = "speed_chroma_a",
     .spec = "speed_chroma=speed_kernelscale=0.5:speed_prescale=1.25:speed_weight_var_mode=1:"
             "speed_sigma_nn=0.35:speed_nn_floor=0.3",
     .frame_reference = speed_frame, .ref_arg = &opt_a, .outputs = speed_outputs,
     .suffix = "_ks_0.5_nnf_0.3_ps_1.25_snn_0.35_wvm_1", .tol = speed_tol, .fill = fill_speed,
     .random = &ps125, .nb_random = 3},
    {.name = "speed_chroma_b",
     .spec = "speed_chroma=speed_kernelscale=1.5:speed_prescale=0.8:"
             "speed_prescale_method=bilinear:speed_weight_var_mode=2:speed_sigma_nn=0.9:"
             "speed_nn_floor=0:speed_max_val=2.5",
     .frame_reference = speed_frame, .ref_arg = &opt_b, .outputs = speed_outputs,
     .suffix = "_ks_1.5_mxv_2.5_ps_0.8_psm_bilinear_snn_0.9_wvm_2", .tol = speed_tol,
     .fill = fill_speed, .random = &ps08, .nb_random = 2},
    {.name = "speed_chroma_c",
     .spec = "speed_chroma=speed_kernelscale=2:speed_prescale=0.6:speed_weight_var_mode=3:"
             "speed_sigma_nn=0.1:speed_nn_floor=1",
     .frame_reference = speed_frame, .ref_arg = &opt_c, .outputs = speed_outputs,
     .suffix = "_ks_2_nnf_1_ps_0.6_snn_0.1_wvm_3", .tol = speed_tol, .fill = fill_speed,
     .random = &ps06, .nb_random = 2},
    {.name = "speed_chroma_d",
     .spec = "speed_chroma=speed_kernelscale=0.666666667:speed_prescale=0.5:"
             "speed_prescale_method=bilinear:speed_weight_var_mode=4:speed_sigma_nn=1.1:"
             "speed_nn_floor=0.5:speed_max_val=2.5",
     .frame_reference = speed_frame, .ref_arg = &opt_d, .outputs = speed_outputs,
     .suffix = "_ks_0.666667_mxv_2.5_nnf_0.5_ps_0.5_psm_bilinear_snn_1.1_wvm_4",
     .tol = speed_tol, .fill = fill_speed, .random = &ps05, .nb_random = 2},
    {.name = "speed_chroma_e",
     .spec = "speed_chroma=speed_prescale_method=bilinear:speed_weight_var_mode=6:"
             "speed_sigma_nn=0.6:speed_nn_floor=0.7",
     .frame_reference = speed_frame, .ref_arg = &opt_e, .outputs = speed_outputs,
     .suffix = "_nnf_0.7_psm_bilinear_snn_0.6_wvm_6", .tol = speed_tol, .fill = fill_speed,
     .random = &ps1, .nb_random = 2},
    {.name = "speed_chroma_v1",
     .spec = "speed_chroma=speed_max_val=45:speed_nn_floor=0.1:speed_sigma_nn=0.19:"
             "speed_weight_var_mode=5",
     .frame_reference = speed_frame, .ref_arg = &v1, .outputs = speed_outputs,
     .suffix = "_mxv_45_nnf_0.1_snn_0.19_wvm_5", .tol = speed_tol, .fill = fill_speed,
     .cases = v1_cases, .nb_cases = 1},
    {.name = "speed_chroma_v1_ps06",
     .spec = "speed_chroma=speed_max_val=45:speed_nn_floor=0.1:speed_sigma_nn=0.19:"
             "speed_weight_var_mode=5:speed_prescale=0.6:speed_prescale_method=bilinear",
     .frame_reference = speed_frame, .ref_arg = &v1_ps06, .outputs = speed_outputs,
     .suffix = "_mxv_45_nnf_0.1_ps_0.6_psm_bilinear_snn_0.19_wvm_5", .tol = speed_tol,
     .fill = fill_speed, .cases = v1_ps06_cases, .nb_cases = 1},
    {.name = "speed_chroma_v1_ps05",
     .spec = "speed_chroma=speed_max_val=45:speed_nn_floor=0.1:speed_sigma_nn=0.19:"
             "speed_weight_var_mode=5:speed_prescale=0.5:speed_prescale_method=bilinear",
     .frame_reference = speed_frame, .ref_arg = &v1_ps05, .outputs = speed_outputs,
     .suffix = "_mxv_45_nnf_0.1_ps_0.5_psm_bilinear_snn_0.19_wvm_5", .tol = speed_tol,
     .fill = fill_speed, .cases = v1_ps05_cases, .nb_cases = 1},
};

static void test_nonzero(void)
{
    CHECK(nonzero >= 40, "only %d non-zero reference scores", nonzero);
}

/* bits of a float, NaN as one value */
static int same_float(float a, float b)
{
    return (isnan(a) && isnan(b)) || !memcmp(&a, &b, sizeof(a));
}

/* Band-pass-like image: a few smooth waves times `amp` plus noise. kind 1:
 * flat (singular); 2: one NaN sample; 3: waves only (nearly singular). */
static void fill_band(float *img, int w, int h, size_t stride, float amp, int kind)
{
    double fx[3], fy[3], ph[3];
    for (int k = 0; k < 3; k++) {
        fx[k] = test_rand_range(1, 300) / 100.0;
        fy[k] = test_rand_range(1, 300) / 100.0;
        ph[k] = test_rand_range(0, 628) / 100.0;
    }
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            double v = 0;
            for (int k = 0; k < 3; k++)
                v += sin(fx[k] * j + fy[k] * i + ph[k]);
            if (kind != 3)
                v += test_rand_range(-1000, 1000) / 1000.0;
            img[(size_t)i * stride + j] = kind == 1 ? amp : (float)(amp * v);
        }
    if (kind == 2)
        img[(size_t)(h / 2) * stride + w / 2] = NAN;
}

/* The library's estimation (interleaved covariance sums, QR without the
 * zero products) gives the plain form's floats bit for bit. */
static void test_estimate_bits(void)
{
    static const float amps[] = {1e-3f, 0.05f, 1.0f, 7.5f, 300.0f};
    int regular = 0, cases = 0;
    for (int c = 0; c < 60; c++) {
        SpeedGeometry g;
        int kind = c % 10 == 3 ? 1 : c % 10 == 7 ? 2 : c % 10 == 9 ? 3 : 0;
        int dec_w = test_rand_range(12, 130), dec_h = test_rand_range(10, 70);
        speed_geometry(&g, 16 * dec_w, 16 * dec_h, 1.0);
        size_t stride = (size_t)g.trunc_w + test_rand_range(0, 3);
        float *img = malloc(sizeof(float) * stride * g.trunc_h);
        float *out = malloc(sizeof(float) * 4 * g.nblocks);
        SpeedWork w1, w2;
        if (!img || !out || speed_work_alloc(&w1, g.nblocks) || speed_work_alloc(&w2, g.nblocks)) {
            CHECK(0, "out of memory");
            return;
        }
        fill_band(img, g.trunc_w, g.trunc_h, stride, amps[c % 5], kind);
        SpeedEstimate lib = {out, out + g.nblocks, -1};
        SpeedEstimate ref = {out + 2 * g.nblocks, out + 3 * g.nblocks, -2};
        speed_estimate(&g, img, stride, 0.29f, &w1, &lib);
        speed_ref_estimate(&g, img, stride, 0.29f, &w2, &ref);
        int diff = lib.singular != ref.singular;
        for (int b = 0; b < g.nblocks; b++)
            diff += !same_float(lib.entropies[b], ref.entropies[b]) +
                    !same_float(lib.variances[b], ref.variances[b]);
        CHECK(diff == 0, "%dx%d kind %d amp %g: %d differences (singular %d vs %d)", g.trunc_w,
              g.trunc_h, kind, amps[c % 5], diff, lib.singular, ref.singular);
        regular += kind == 0 && !ref.singular;
        cases++;
        speed_work_free(&w1);
        speed_work_free(&w2);
        free(img);
        free(out);
    }
    CHECK(regular >= 30, "only %d of %d images had a regular covariance", regular, cases);
}

/* More frames than the look-ahead, every pipeline depth, helper threads on
 * and off: frame i still gets frame i's scores. A context closed without
 * flush while statistics run must not crash. */
static void test_frames_in_flight(void)
{
    enum { FRAMES = 19 }; /* more than twice the look-ahead (8) */
    static TestPicture ref[FRAMES], dis[FRAMES];
    static double want[FRAMES][3], got[FRAMES][3];
    SpeedRefOptions o;
    speed_ref_defaults(&o);
    for (int i = 0; i < FRAMES; i++) {
        test_picture_alloc(&ref[i], 640, 480, QGPU_LAYOUT_420, 8, 0);
        test_picture_alloc(&dis[i], 640, 480, QGPU_LAYOUT_420, 8, 0);
        fill_content(&ref[i], 31 * i);
        test_picture_noisy_copy(&dis[i], &ref[i], 2 + 3 * i);
        speed_ref(&ref[i].pic, &dis[i].pic, &o, want[i]);
    }
    for (int threads = 0; threads <= 3; threads += 3) {
        char env[8];
        snprintf(env, sizeof(env), "%d", threads);
        setenv("QGPU_SPEED_THREADS", env, 1);
        for (int depth = 1; depth <= 4; depth++) {
            memset(got, 0, sizeof(got));
            if (score_frames(ref, dis, FRAMES, depth, got))
                continue;
            for (int i = 0; i < FRAMES; i++)
                for (int k = 0; k < 3; k++)
                    CHECK(got[i][k] == want[i][k] && want[i][k] > 0,
                          "threads %d depth %d frame %d %s: %.9g vs ref %.9g", threads, depth, i,
                          base_names[k], got[i][k], want[i][k]);
        }
        QgpuContext *ctx = test_open(2);
        if (ctx) {
            int status = qgpu_enable_feature(ctx, "speed_chroma");
            for (int i = 0; !status && i < FRAMES; i++)
                status = qgpu_submit(ctx, &ref[i].pic, &dis[i].pic);
            CHECK(status == 0, "submit: %s", qgpu_last_error(ctx));
            qgpu_close(&ctx); /* no flush: jobs still queued */
        }
    }
    unsetenv("QGPU_SPEED_THREADS");
    for (int i = 0; i < FRAMES; i++) {
        test_picture_free(&ref[i]);
        test_picture_free(&dis[i]);
    }
}

/* 10-bit samples that are 8-bit ones x4 give the same floats, so the same scores */
static void test_shift10(void)
{
    TestPicture r8, d8, r10, d10;
    double a[1][3] = {{NAN, NAN, NAN}}, b[1][3] = {{NAN, NAN, NAN}};
    test_picture_alloc(&r8, 640, 480, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&d8, 640, 480, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&r10, 640, 480, QGPU_LAYOUT_420, 10, 0);
    test_picture_alloc(&d10, 640, 480, QGPU_LAYOUT_420, 10, 0);
    fill_content(&r8, 5);
    test_picture_noisy_copy(&d8, &r8, 9);
    for (int p = 0; p < 3; p++)
        for (int y = 0; y < test_plane_h(&r8.pic, p); y++)
            for (int x = 0; x < test_plane_w(&r8.pic, p); x++) {
                test_set_sample(&r10, p, x, y, test_sample(&r8.pic, p, x, y) << 2);
                test_set_sample(&d10, p, x, y, test_sample(&d8.pic, p, x, y) << 2);
            }
    score_frames(&r8, &d8, 1, 1, a);
    score_frames(&r10, &d10, 1, 1, b);
    for (int k = 0; k < 3; k++)
        CHECK(a[0][k] == b[0][k] && a[0][k] > 0, "%s: 8-bit %.9g, 10-bit x4 %.9g", base_names[k],
              a[0][k], b[0][k]);
    test_picture_free(&r8);
    test_picture_free(&d8);
    test_picture_free(&r10);
    test_picture_free(&d10);
}

/* A flat plane has a singular covariance: that channel scores 0 unless both
 * images are singular, and uv is then the other channel's score. */
static void test_singular(void)
{
    TestPicture r, d;
    double got[1][3], want[3];
    SpeedRefOptions o;
    speed_ref_defaults(&o);
    test_picture_alloc(&r, 640, 480, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&d, 640, 480, QGPU_LAYOUT_420, 8, 0);
    fill_content(&r, 1);
    test_picture_noisy_copy(&d, &r, 6);
    fill_flat_plane(&r, 1); /* U of ref only: one-sided singular */
    score_frames(&r, &d, 1, 1, got);
    speed_ref(&r.pic, &d.pic, &o, want);
    CHECK(got[0][0] == 0.0 && got[0][1] > 0 && got[0][2] == got[0][1],
          "one-sided singular U: u %.9g v %.9g uv %.9g", got[0][0], got[0][1], got[0][2]);
    CHECK(got[0][2] == want[2], "uv %.9g vs ref %.9g", got[0][2], want[2]);
    fill_flat_plane(&d, 1); /* both U flat: formula on v = 0 */
    fill_flat_plane(&r, 2);
    fill_flat_plane(&d, 2);
    score_frames(&r, &d, 1, 1, got);
    CHECK(got[0][0] == 0.0 && got[0][1] == 0.0 && got[0][2] == 0.0,
          "grey chroma: u %.9g v %.9g uv %.9g", got[0][0], got[0][1], got[0][2]);
    test_picture_free(&r);
    test_picture_free(&d);
}

static void test_names(void)
{
    TestPicture r, d;
    double v = NAN;
    test_picture_alloc(&r, 640, 360, QGPU_LAYOUT_444, 8, 0);
    test_picture_alloc(&d, 640, 360, QGPU_LAYOUT_444, 8, 0);
    fill_content(&r, 2);
    test_picture_noisy_copy(&d, &r, 5);
    QgpuContext *ctx = test_score_pairs(
        "speed_chroma=mxv=45:nnf=0.1:snn=0.19:wvm=5:ps=0.6:psm=bilinear:ks=1.0", 1, &r, &d, 1);
    if (ctx) {
        int s = qgpu_get_score(
            ctx, 0, "speed_chroma_uv_mxv_45_nnf_0.1_ps_0.6_psm_bilinear_snn_0.19_wvm_5", &v);
        CHECK(s == 0 && v > 0 && v <= 45, "libvmaf's output name (status %d, value %g)", s, v);
        CHECK(qgpu_get_score(ctx, 0, "speed_chroma_uv", &v) != 0, "no default name with options");
    }
    qgpu_close(&ctx);
    test_picture_free(&r);
    test_picture_free(&d);
}

/* status of enabling spec and submitting one w x h frame */
static int try_run(const char *spec, int w, int h, int layout, int bitdepth, char *msg,
                   size_t len)
{
    QgpuContext *ctx = test_open(1);
    TestPicture r, d;
    int status;
    if (!ctx)
        return 0;
    test_picture_alloc(&r, w, h, layout, bitdepth, 0);
    test_picture_alloc(&d, w, h, layout, bitdepth, 0);
    test_picture_random(&r);
    test_picture_random(&d);
    status = qgpu_enable_feature(ctx, spec);
    if (!status)
        status = qgpu_submit(ctx, &r.pic, &d.pic);
    snprintf(msg, len, "%s", qgpu_last_error(ctx));
    qgpu_close(&ctx);
    test_picture_free(&r);
    test_picture_free(&d);
    return status;
}

static void test_errors(void)
{
    char msg[512];
    int s;
    s = try_run("speed_chroma", 160, 158, QGPU_LAYOUT_420, 8, msg, sizeof(msg));
    CHECK(s == QGPU_ERR_UNSUPPORTED && strstr(msg, "speed_chroma") && strstr(msg, "80x80"),
          "160x158 4:2:0: %d %s", s, msg);
    s = try_run("speed_chroma", 80, 79, QGPU_LAYOUT_444, 8, msg, sizeof(msg));
    CHECK(s == QGPU_ERR_UNSUPPORTED, "80x79 4:4:4: %d %s", s, msg);
    s = try_run("speed_chroma=speed_prescale=0.5", 300, 320, QGPU_LAYOUT_420, 8, msg, sizeof(msg));
    CHECK(s == QGPU_ERR_UNSUPPORTED && strstr(msg, "prescale"), "ps 0.5 at 300x320: %d %s", s,
          msg);
    s = try_run("speed_chroma", 320, 240, QGPU_LAYOUT_400, 8, msg, sizeof(msg));
    CHECK(s == QGPU_ERR_UNSUPPORTED, "4:0:0: %d %s", s, msg);
    s = try_run("speed_chroma", 320, 240, QGPU_LAYOUT_420, 9, msg, sizeof(msg));
    CHECK(s == QGPU_ERR_UNSUPPORTED, "9-bit: %d %s", s, msg);
    s = try_run("speed_chroma=speed_kernelscale=0.3", 320, 240, QGPU_LAYOUT_420, 8, msg,
                sizeof(msg));
    CHECK(s == QGPU_ERR_BAD_OPTION && strstr(msg, "kernelscale"), "ks 0.3: %d %s", s, msg);
    s = try_run("speed_chroma=psm=cubic", 320, 240, QGPU_LAYOUT_420, 8, msg, sizeof(msg));
    CHECK(s == QGPU_ERR_BAD_OPTION, "psm cubic: %d %s", s, msg);
    s = try_run("speed_chroma=psm=lanczos4:ps=0.9", 320, 240, QGPU_LAYOUT_420, 8, msg,
                sizeof(msg));
    CHECK(s == QGPU_ERR_UNSUPPORTED && strstr(msg, "lanczos4"), "lanczos4: %d %s", s, msg);
    s = try_run("speed_chroma=wvm=7", 320, 240, QGPU_LAYOUT_420, 8, msg, sizeof(msg));
    CHECK(s == QGPU_ERR_BAD_OPTION, "wvm 7: %d %s", s, msg);
    s = try_run("speed_chroma=snn=0.05", 320, 240, QGPU_LAYOUT_420, 8, msg, sizeof(msg));
    CHECK(s == QGPU_ERR_BAD_OPTION, "snn 0.05: %d %s", s, msg);
}

static const TestExtra extras[] = {
    {"speed_chroma_nonzero", test_nonzero},
    {"speed_chroma_estimate_bits", test_estimate_bits},
    {"speed_chroma_frames_in_flight", test_frames_in_flight},
    {"speed_chroma_shift10", test_shift10},
    {"speed_chroma_singular", test_singular},
    {"speed_chroma_names", test_names},
    {"speed_chroma_errors", test_errors},
};

int main(int argc, char **argv)
{
    init_options();
    /* the covariance sums on the host, then on the device (speed_moments,
     * where the device has double precision; the extras run on the
     * default path) */
    return test_main_both_paths(argc, argv, "QGPU_SPEED_FP64", "0", "1", rows,
                                sizeof(rows) / sizeof(rows[0]), extras, 7);
}
