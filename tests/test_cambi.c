/* cambi on the device vs the plain-C reference (tests/ref/cambi_ref.c):
 * banded random pictures of random sizes, layouts, 8..16 bit, padded
 * strides, pipeline depths; every option (including the high-res speed-up,
 * encode-size decimation, full_ref and the output-name suffix); error paths.
 * The reference itself matches libvmaf's goldens on the whole corpus (see
 * doc/metrics/cambi.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cambi_ref.h"
#include "driver.h"

/* Banding-prone content: a slow 2-D ramp quantised into steps of one code
 * (at 10 bits), flat blocks, and a sprinkle of noise that breaks the mask
 * in places. */
static void fill_banded(TestPicture *t, int variant)
{
    const QgpuPicture *p = &t->pic;
    int bd = p->bitdepth, maxv = (1 << bd) - 1;
    int base = test_rand_range(0, maxv / 2);
    int band = test_rand_range(6, 40);          /* pixels per step */
    int step = bd >= 10 ? 1 << (bd - 10) : 1;   /* one 10-bit code, or one code */
    int dir = test_rand_range(0, 2);
    for (int y = 0; y < p->height; y++)
        for (int x = 0; x < p->width; x++) {
            int pos = dir == 0 ? x : dir == 1 ? y : (x + y) / 2;
            int v = base + (pos / band) * step;
            if (test_rand_range(0, 99) < 2 + variant)
                v += test_rand_range(-3, 3) * step;
            v = v < 0 ? 0 : v > maxv ? maxv : v;
            test_set_sample(t, 0, x, y, (unsigned)v);
        }
    /* flat blocks */
    for (int b = 0; b < 4; b++) {
        int bw = test_rand_range(8, p->width / 3 + 8), bh = test_rand_range(8, p->height / 3 + 8);
        int bx = test_rand_range(0, p->width - 1), by = test_rand_range(0, p->height - 1);
        int v = test_rand_range(0, maxv);
        for (int y = by; y < by + bh && y < p->height; y++)
            for (int x = bx; x < bx + bw && x < p->width; x++)
                test_set_sample(t, 0, x, y, (unsigned)v);
    }
}

/* Copy with a different quantisation of the ramp: the reference side. */
static void fill_source(TestPicture *dst, const TestPicture *src)
{
    const QgpuPicture *p = &src->pic;
    int maxv = (1 << p->bitdepth) - 1;
    for (int y = 0; y < p->height; y++)
        for (int x = 0; x < p->width; x++) {
            int v = (int)test_sample(p, 0, x, y) + ((x + y) & 1);
            test_set_sample(dst, 0, x, y, (unsigned)(v > maxv ? maxv : v));
        }
}

/* The distorted side banded (frame: more noise), the reference side a
 * different quantisation of it; chroma random. */
static void fill_cambi(TestClip *clip, int frame)
{
    test_picture_random(&clip->ref[frame]);
    test_picture_random(&clip->dist[frame]);
    fill_banded(&clip->dist[frame], frame);
    fill_source(&clip->ref[frame], &clip->dist[frame]);
}

/* Flat stripes far apart in value inside every 64-column tile: the sliding
 * kernel must fall back to direct counts there. */
static void fill_wide_range(TestClip *clip, int frame)
{
    TestPicture *a = &clip->dist[frame];
    test_picture_random(a);
    for (int y = 0; y < a->pic.height; y++)
        for (int x = 0; x < a->pic.width; x++) {
            int base = (x / 20) & 1 ? 330 : 90;
            test_set_sample(a, 0, x, y, (unsigned)(base + y / 12 + (x % 20) / 7));
        }
    test_picture_random(&clip->ref[frame]);
    fill_source(&clip->ref[frame], a);
}

/* the banded pictures must exercise the c-values, not just the zero path */
static int nonzero_scores, scores_checked;

static int cambi_score(const CambiRefOptions *o, const QgpuPicture *p, int is_src, double *s)
{
    return cambi_ref_score(o, p->data[0], p->stride[0], p->width, p->height, p->bitdepth, is_src,
                           s);
}

/* expect[] order: cambi; with full_ref (3 outputs) also cambi_source and
 * cambi_full_reference; all clipped to max_val. */
static int cambi_frame(const TestClip *clip, int frame, const void *arg, double *e,
                       double *bound)
{
    const CambiRefOptions *o = arg;
    double d, src;
    (void)bound;
    if (cambi_score(o, &clip->dist[frame].pic, 0, &d))
        return -1;
    scores_checked++;
    nonzero_scores += d > 0.01;
    e[0] = fmin(d, o->max_val);
    if (clip->nb_outputs < 3)
        return 0;
    if (cambi_score(o, &clip->ref[frame].pic, 1, &src))
        return -1;
    e[1] = fmin(src, o->max_val);
    e[2] = fmin(fmax(0.0, d - src), o->max_val);
    return 0;
}

static const char *const cambi_outputs[] = {"cambi", NULL};
static const char *const full_ref_outputs[] = {"cambi", "cambi_source", "cambi_full_reference",
                                               NULL};
static const TestTolerance cambi_tol = {1e-9, 0, 0};
static const int cambi_bitdepths[] = {8, 10, 12, 16, 9, 0};

/* The rows' options: libvmaf's defaults with the row's changes (main). */
static CambiRefOptions defaults, model_v1, enc, encbd, mlc0, mlc3, mlc5, pq, ctpk, cmxv, srcsize;

static void init_options(void)
{
    cambi_ref_default_options(&defaults);
    model_v1 = enc = encbd = mlc0 = mlc3 = mlc5 = pq = ctpk = cmxv = srcsize = defaults;
    model_v1.high_res_speedup = 1080;
    model_v1.vis_lum_threshold = 0.06;
    model_v1.max_val = 17;
    enc.enc_width = 300;
    enc.enc_height = 200;
    enc.enc_bitdepth = 8;
    encbd.enc_bitdepth = 10;
    mlc0.max_log_contrast = 0;
    mlc3.max_log_contrast = 3;
    mlc5.max_log_contrast = 5;
    pq.topk = 0.25;
    pq.tvi_threshold = 0.05;
    pq.window_size = 100;
    pq.eotf_pq = 1;
    ctpk.topk = 1.0;
    ctpk.eotf_pq = 1;
    ctpk.vis_lum_threshold = 2;
    cmxv.topk = 0.0001;
    cmxv.max_val = 0.5;
    srcsize.src_width = 320;
    srcsize.src_height = 240;
}

/* {w, h, layout, bitdepth, depth, frames, stride_pad, variant} */
static const TestCase default_cases[] = {
    {383, 287, QGPU_LAYOUT_420, 8, 2, 2, 0, 0}, /* odd size */
    {216, 100, QGPU_LAYOUT_400, 8, 1, 1, 0, 0}, /* smallest accepted */
};
static const TestCase wide_range_cases[] = {{320, 240, QGPU_LAYOUT_420, 10, 1, 1, 0, 0}};
static const TestCase v1_cases[] = {
    {1920, 1080, QGPU_LAYOUT_420, 10, 2, 1, 0, 0},
    {400, 300, QGPU_LAYOUT_420, 8, 1, 1, 0, 0}, /* below 1080p: no speed-up */
};
static const TestCase enc_cases[] = {{450, 300, QGPU_LAYOUT_420, 10, 1, 1, 5, 0}};
static const TestCase encbd_cases[] = {{300, 240, QGPU_LAYOUT_444, 8, 1, 1, 0, 0}};
static const TestCase mlc_cases[] = {{260, 220, QGPU_LAYOUT_420, 10, 1, 1, 0, 0}};
static const TestCase pq_cases[] = {{320, 240, QGPU_LAYOUT_422, 12, 2, 2, 0, 0}};
static const TestCase ctpk_cases[] = {{320, 240, QGPU_LAYOUT_420, 10, 1, 1, 0, 0}};
static const TestCase cmxv_cases[] = {{300, 230, QGPU_LAYOUT_420, 8, 1, 1, 0, 0}};
static const TestCase full_ref_cases[] = {{330, 250, QGPU_LAYOUT_420, 8, 2, 2, 0, 0}};
static const TestCase srcsize_cases[] = {{400, 300, QGPU_LAYOUT_420, 10, 1, 1, 0, 0}};

static const TestRandom landscape = {.min_w = 216, .max_w = 420, .min_h = 120, .max_h = 300,
                                     .bitdepths = cambi_bitdepths, .max_frames = 3,
                                     .max_depth = 3, .max_pad = 40};
static const TestRandom portrait = {.min_w = 120, .max_w = 300, .min_h = 216, .max_h = 420,
                                    .bitdepths = cambi_bitdepths, .max_frames = 3,
                                    .max_depth = 3, .max_pad = 40};

static const TestRow rows[] = {
    {.name = "cambi", .spec = "cambi", .frame_reference = cambi_frame, .ref_arg = &defaults,
     .outputs = cambi_outputs, .tol = cambi_tol, .fill = fill_cambi, .cases = default_cases,
     .nb_cases = 2, .random = &landscape, .nb_random = 4},
    {.name = "cambi_portrait", .spec = "cambi", .frame_reference = cambi_frame,
     .ref_arg = &defaults, .outputs = cambi_outputs, .tol = cambi_tol, .fill = fill_cambi,
     .random = &portrait, .nb_random = 3},
    {.name = "cambi_wide_range", .spec = "cambi", .frame_reference = cambi_frame,
     .ref_arg = &defaults, .outputs = cambi_outputs, .tol = cambi_tol, .fill = fill_wide_range,
     .cases = wide_range_cases, .nb_cases = 1},
    /* the v1 model's options: high-res speed-up at 1080p, luminance floor, clip */
    {.name = "cambi_v1",
     .spec = "cambi=cambi_high_res_speedup=1080:cambi_vis_lum_threshold=0.06:cambi_max_val=17",
     .frame_reference = cambi_frame, .ref_arg = &model_v1, .outputs = cambi_outputs,
     .suffix = "_hrs_1080_cmxv_17_vlt_0.06", .tol = cambi_tol, .fill = fill_cambi,
     .cases = v1_cases, .nb_cases = 2},
    /* encode side: decimation to the coded size, anti-dithering by enc depth */
    {.name = "cambi_enc", .spec = "cambi=encw=300:ench=200:encbd=8",
     .frame_reference = cambi_frame, .ref_arg = &enc, .outputs = cambi_outputs,
     .suffix = "_encbd_8_ench_200_encw_300", .tol = cambi_tol, .fill = fill_cambi,
     .cases = enc_cases, .nb_cases = 1},
    {.name = "cambi_enc_bitdepth", .spec = "cambi=enc_bitdepth=10",
     .frame_reference = cambi_frame, .ref_arg = &encbd, .outputs = cambi_outputs,
     .suffix = "_encbd_10", .tol = cambi_tol, .fill = fill_cambi, .cases = encbd_cases,
     .nb_cases = 1},
    /* contrast range: every num_diffs variant of the kernel */
    {.name = "cambi_mlc_0", .spec = "cambi=mlc=0", .frame_reference = cambi_frame,
     .ref_arg = &mlc0, .outputs = cambi_outputs, .suffix = "_mlc_0", .tol = cambi_tol,
     .fill = fill_cambi, .cases = mlc_cases, .nb_cases = 1},
    {.name = "cambi_mlc_3", .spec = "cambi=mlc=3", .frame_reference = cambi_frame,
     .ref_arg = &mlc3, .outputs = cambi_outputs, .suffix = "_mlc_3", .tol = cambi_tol,
     .fill = fill_cambi, .cases = mlc_cases, .nb_cases = 1},
    {.name = "cambi_mlc_5", .spec = "cambi=mlc=5", .frame_reference = cambi_frame,
     .ref_arg = &mlc5, .outputs = cambi_outputs, .suffix = "_mlc_5", .tol = cambi_tol,
     .fill = fill_cambi, .cases = mlc_cases, .nb_cases = 1},
    /* pooling, thresholds, window, eotf */
    {.name = "cambi_pq", .spec = "cambi=topk=0.25:tvi_threshold=0.05:window_size=100:eotf=pq",
     .frame_reference = cambi_frame, .ref_arg = &pq, .outputs = cambi_outputs,
     .suffix = "_eotf_pq_topk_0.25_tvit_0.05_ws_100", .tol = cambi_tol, .fill = fill_cambi,
     .cases = pq_cases, .nb_cases = 1},
    {.name = "cambi_ctpk", .spec = "cambi=ctpk=1.0:ceot=pq:vlt=2", .frame_reference = cambi_frame,
     .ref_arg = &ctpk, .outputs = cambi_outputs, .suffix = "_ceot_pq_ctpk_1_vlt_2",
     .tol = cambi_tol, .fill = fill_cambi, .cases = ctpk_cases, .nb_cases = 1},
    {.name = "cambi_cmxv", .spec = "cambi=topk=0.0001:cmxv=0.5", .frame_reference = cambi_frame,
     .ref_arg = &cmxv, .outputs = cambi_outputs, .suffix = "_cmxv_0.5_topk_0.0001",
     .tol = cambi_tol, .fill = fill_cambi, .cases = cmxv_cases, .nb_cases = 1},
    /* full reference, source at a smaller size */
    {.name = "cambi_full_ref", .spec = "cambi=full_ref=true", .frame_reference = cambi_frame,
     .ref_arg = &defaults, .outputs = full_ref_outputs, .tol = cambi_tol, .fill = fill_cambi,
     .cases = full_ref_cases, .nb_cases = 1},
    {.name = "cambi_full_ref_src", .spec = "cambi=full_ref=true:src_width=320:src_height=240",
     .frame_reference = cambi_frame, .ref_arg = &srcsize, .outputs = full_ref_outputs,
     .suffix = "_srch_240_srcw_320", .tol = cambi_tol, .fill = fill_cambi,
     .cases = srcsize_cases, .nb_cases = 1},
};

static void test_nonzero(void)
{
    CHECK(nonzero_scores * 4 >= scores_checked * 3, "only %d of %d scores are > 0.01",
          nonzero_scores, scores_checked);
}

/* Two instances with different options in one context (the VMAF v1 model's
 * and the default one) keep separate state. */
static void test_two_instances(void)
{
    TestPicture a[2];
    double v1 = NAN, v2 = NAN, e1, e2;
    CambiRefOptions o;
    test_picture_alloc(&a[0], 400, 300, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&a[0]);
    fill_banded(&a[0], 1);
    a[1] = a[0]; /* the same pictures twice */
    QgpuContext *ctx = test_score_pairs("cambi cambi=hrs=1080:vlt=0.06:cmxv=30:mlc=3", 2, a, a, 2);
    if (!ctx) {
        test_picture_free(&a[0]);
        return;
    }
    cambi_ref_default_options(&o);
    cambi_score(&o, &a[0].pic, 0, &e1);
    o.high_res_speedup = 1080;
    o.vis_lum_threshold = 0.06;
    o.max_log_contrast = 3;
    cambi_score(&o, &a[0].pic, 0, &e2);
    e2 = fmin(e2, 30.0);
    CHECK(qgpu_get_score(ctx, 1, "cambi", &v1) == 0 && fabs(v1 - e1) <= 1e-9,
          "default instance %.9f vs %.9f", v1, e1);
    CHECK(qgpu_get_score(ctx, 1, "cambi_hrs_1080_cmxv_30_vlt_0.06_mlc_3", &v2) == 0 &&
              fabs(v2 - e2) <= 1e-9,
          "second instance %.9f vs %.9f", v2, e2);
    test_picture_free(&a[0]);
    qgpu_close(&ctx);
}

static int submit_one(const char *spec, int w, int h, int *err_out)
{
    QgpuContext *ctx = test_open(1);
    TestPicture a;
    int err;
    if (!ctx)
        return -1;
    err = qgpu_enable_feature(ctx, spec);
    if (err == 0) {
        test_picture_alloc(&a, w, h, QGPU_LAYOUT_420, 8, 0);
        test_picture_random(&a);
        err = qgpu_submit(ctx, &a.pic, &a.pic);
        test_picture_free(&a);
    }
    *err_out = err;
    if (err) {
        const char *msg = qgpu_last_error(ctx);
        CHECK(msg && strstr(msg, "cambi") != NULL, "message names cambi: '%s'", msg ? msg : "");
    }
    qgpu_close(&ctx);
    return 0;
}

static void test_errors(void)
{
    int err;
    if (!submit_one("cambi", 215, 215, &err))
        CHECK(err == QGPU_ERR_UNSUPPORTED, "215x215 must be refused, got %d", err);
    if (!submit_one("cambi", 160, 90, &err))
        CHECK(err == QGPU_ERR_UNSUPPORTED, "160x90 must be refused, got %d", err);
    if (!submit_one("cambi=encw=200:ench=200", 400, 300, &err))
        CHECK(err == QGPU_ERR_UNSUPPORTED, "encode 200x200 must be refused, got %d", err);
    if (!submit_one("cambi=eotf=srgb", 320, 240, &err))
        CHECK(err == QGPU_ERR_BAD_OPTION, "eotf=srgb: got %d", err);
    if (!submit_one("cambi=window_size=200", 320, 240, &err))
        CHECK(err == QGPU_ERR_BAD_OPTION, "window_size=200: got %d", err);
    if (!submit_one("cambi=topk=0", 320, 240, &err))
        CHECK(err == QGPU_ERR_BAD_OPTION, "topk=0: got %d", err);
    if (!submit_one("cambi=mlc=6", 320, 240, &err))
        CHECK(err == QGPU_ERR_BAD_OPTION, "mlc=6: got %d", err);
    if (!submit_one("cambi=heatmaps_path=/tmp/x", 320, 240, &err))
        CHECK(err == QGPU_ERR_UNSUPPORTED, "heatmaps_path: got %d", err);
    /* a 1920x100 picture: the window exceeds the last scale's height */
    if (!submit_one("cambi", 1920, 100, &err))
        CHECK(err == QGPU_ERR_UNSUPPORTED, "1920x100: got %d", err);
    if (!submit_one("cambi=full_ref=true:src_width=320:src_height=400", 400, 300, &err))
        CHECK(err == QGPU_ERR_BAD_OPTION, "src growing in one direction only: got %d", err);
}

static const TestExtra extras[] = {
    {"cambi_two_instances", test_two_instances},
    {"cambi_errors", test_errors},
    {"cambi_nonzero", test_nonzero},
};

int main(int argc, char **argv)
{
    init_options();
    /* both c-value kernels on every device: the sliding histograms (the
     * default on CPUs) and the direct counts (the default on GPUs, and for
     * windows too large for the sliding kernel's tile) */
    return test_main_both_paths(argc, argv, "QGPU_CAMBI_CVALUES", "slide", "direct", rows,
                                sizeof(rows) / sizeof(rows[0]), extras, 3);
}
