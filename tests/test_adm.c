/* adm on the device vs the plain-C reference (tests/ref/adm_ref.c):
 * random sizes (odd too), 8..16 bit, padded strides, every option, textured
 * and pure-noise content (the overflow paths), flat frames; error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adm_ref.h"
#include "test_util.h"

static const char *const names[] = {"integer_adm2", "integer_aim", "integer_adm3",
                                    "integer_adm_scale0", "integer_adm_scale1",
                                    "integer_adm_scale2", "integer_adm_scale3"};
static const char *const debug_names[] = {
    "integer_adm", "integer_adm_num", "integer_adm_den", "integer_adm_num_scale0",
    "integer_adm_den_scale0", "integer_adm_num_scale1", "integer_adm_den_scale1",
    "integer_adm_num_scale2", "integer_adm_den_scale2", "integer_adm_num_scale3",
    "integer_adm_den_scale3"};

static int same(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

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

static void ref_result(const TestPicture *r, const TestPicture *d, const AdmRefOptions *o,
                       AdmRefResult *res)
{
    int bps = r->pic.bitdepth == 8 ? 1 : 2;
    /* the reference takes one stride: copy into packed planes */
    int w = r->pic.width, h = r->pic.height;
    unsigned char *a = malloc((size_t)w * h * bps), *b = malloc((size_t)w * h * bps);
    for (int y = 0; y < h; y++) {
        memcpy(a + (size_t)y * w * bps, (const unsigned char *)r->pic.data[0] + y * r->pic.stride[0],
               (size_t)w * bps);
        memcpy(b + (size_t)y * w * bps, (const unsigned char *)d->pic.data[0] + y * d->pic.stride[0],
               (size_t)w * bps);
    }
    CHECK(adm_ref_compute(a, b, w, w, h, r->pic.bitdepth, o, res) == 0, "reference");
    free(a);
    free(b);
}

/* Scores `frames` pairs with `spec`; checks every output of every frame. */
static void run_case(int w, int h, int layout, int bitdepth, int frames, int noise,
                     const char *spec, const char *suffix, const AdmRefOptions *o, int debug)
{
    QgpuContext *ctx = test_open(1 + frames % 3);
    TestPicture ref[4], dist[4];
    unsigned got = 0, frame;
    char name[256];
    if (!ctx)
        return;
    if (!CHECK(qgpu_enable_feature(ctx, spec) == 0, "enable %s: %s", spec, qgpu_last_error(ctx))) {
        qgpu_close(&ctx);
        return;
    }
    for (int i = 0; i < frames; i++) {
        test_picture_alloc(&ref[i], w, h, layout, bitdepth, test_rand_range(0, 33));
        test_picture_alloc(&dist[i], w, h, layout, bitdepth, test_rand_range(0, 17));
        if (noise == 1)
            test_picture_random(&ref[i]);
        else
            fill_texture(&ref[i], bitdepth, i);
        test_picture_noisy_copy(&dist[i], &ref[i], (1 + i * 7) << (bitdepth - 8));
        if (noise == 3) {
            /* low-contrast stripes under full-swing stripes: masking
             * centre taps above int16 (libvmaf AVX-512 keeps them in int32) */
            int max = (1 << bitdepth) - 1, sh = bitdepth - 8;
            for (int y = 0; y < h; y++) {
                for (int x = 0; x < w; x++) {
                    int on = (y + x / 23) & 1;
                    test_set_sample(&ref[i], 0, x, y,
                                    (unsigned)((128 + (on ? 16 : -16) + (int)(test_rand() % 3)) << sh));
                    test_set_sample(&dist[i], 0, x, y,
                                    on ? (unsigned)max : (test_rand() % 4u) << sh);
                }
            }
        }
        if (noise == 2) {
            /* flat reference, full-swing row stripes: the largest
             * coefficients (int16 wrap-arounds, libvmaf's int32 centre tap) */
            int max = (1 << bitdepth) - 1;
            for (int y = 0; y < h; y++) {
                for (int x = 0; x < w; x++) {
                    test_set_sample(&ref[i], 0, x, y, (unsigned)max / 2);
                    unsigned v = ((y + (x / 23)) & 1) ? (unsigned)max : test_rand() % 8u;
                    test_set_sample(&dist[i], 0, x, y, v);
                }
            }
        }
        int err = qgpu_submit(ctx, &ref[i].pic, &dist[i].pic);
        if (!CHECK(err == 0, "submit %dx%d %d-bit %s: %s", w, h, bitdepth, spec,
                   qgpu_last_error(ctx))) {
            frames = i;
            break;
        }
        while (qgpu_collect(ctx, &frame, 0) == 1)
            got++;
    }
    qgpu_flush(ctx);
    while (qgpu_collect(ctx, &frame, 1) == 1)
        got++;
    CHECK(got == (unsigned)frames, "collected %u of %d frames", got, frames);
    for (int i = 0; i < frames && i < (int)got; i++) {
        AdmRefResult r;
        ref_result(&ref[i], &dist[i], o, &r);
        double expect[7] = {r.adm2, r.aim, r.adm3, r.scale[0], r.scale[1], r.scale[2],
                            r.scale[3]};
        for (int k = 0; k < 7; k++) {
            double v = -1;
            snprintf(name, sizeof(name), "%s%s", names[k], suffix);
            int err = qgpu_get_score(ctx, i, name, &v);
            CHECK(err == 0 && same(v, expect[k]), "%dx%d %d-bit %s frame %d %s: %.10g vs %.10g",
                  w, h, bitdepth, spec, i, name, v, expect[k]);
        }
        if (debug) {
            double dexp[11] = {r.adm2, r.num, r.den};
            for (int s = 0; s < 4; s++) {
                dexp[3 + 2 * s] = r.num_scale[s];
                dexp[4 + 2 * s] = r.den_scale[s];
            }
            for (int k = 0; k < 11; k++) {
                double v = -1;
                snprintf(name, sizeof(name), "%s%s", debug_names[k], suffix);
                int err = qgpu_get_score(ctx, i, name, &v);
                CHECK(err == 0 && same(v, dexp[k]), "%s frame %d: %.10g vs %.10g", name, i, v,
                      dexp[k]);
            }
        } else {
            double v;
            CHECK(qgpu_get_score(ctx, i, "integer_adm_num", &v) != 0, "debug output without debug");
        }
    }
    for (int i = 0; i < frames; i++) {
        test_picture_free(&ref[i]);
        test_picture_free(&dist[i]);
    }
    qgpu_close(&ctx);
}

static void test_random_default(void)
{
    static const int depths[] = {8, 10, 12, 16};
    AdmRefOptions o;
    adm_ref_default_options(&o);
    test_seed(777);
    for (int c = 0; c < 10; c++) {
        int w = test_rand_range(33, 260), h = test_rand_range(33, 180);
        run_case(w, h, c % 4, depths[c % 4], 1 + c % 3, c % 3 == 2, "adm", "", &o, 0);
    }
    run_case(33, 33, QGPU_LAYOUT_420, 8, 2, 0, "adm", "", &o, 0);
    run_case(383, 287, QGPU_LAYOUT_420, 8, 1, 0, "adm", "", &o, 0);
    run_case(481, 321, QGPU_LAYOUT_444, 8, 1, 1, "adm", "", &o, 0);
    /* libvmaf AVX-512's unmirrored last column: (bw - 1) % 8 == 0 at scales 1, 2, 3 */
    run_case(130, 66, QGPU_LAYOUT_420, 8, 1, 0, "adm", "", &o, 0);
    run_case(258, 136, QGPU_LAYOUT_420, 10, 1, 1, "adm", "", &o, 0);
    run_case(200, 150, QGPU_LAYOUT_420, 16, 1, 1, "adm", "", &o, 0); /* int32 wrap in the DWT */
    run_case(150, 120, QGPU_LAYOUT_420, 8, 1, 2, "adm", "", &o, 0);
    run_case(101, 77, QGPU_LAYOUT_444, 12, 1, 2, "adm", "", &o, 0);
}

static void test_options(void)
{
    AdmRefOptions o;
    test_seed(99);

    adm_ref_default_options(&o);
    o.egl = 1.0; /* vmaf_v0.6.1neg */
    run_case(176, 144, QGPU_LAYOUT_420, 8, 2, 0, "adm=adm_enhn_gain_limit=1.0:debug=true", "_egl_1", &o, 1);
    run_case(130, 97, QGPU_LAYOUT_420, 10, 1, 1, "adm=egl=1", "_egl_1", &o, 0);
    run_case(150, 120, QGPU_LAYOUT_420, 8, 1, 3, "adm=egl=1", "_egl_1", &o, 0);
    run_case(211, 90, QGPU_LAYOUT_420, 10, 1, 3, "adm=egl=1", "_egl_1", &o, 0);

    adm_ref_default_options(&o);
    o.egl = 1.3; /* not an integer: the double product is truncated */
    run_case(150, 100, QGPU_LAYOUT_444, 8, 1, 0, "adm=egl=1.3", "_egl_1.3", &o, 0);

    adm_ref_default_options(&o);
    o.csf_mode = 2;
    o.egl = 1.0;
    o.noise_weight = 0.02;
    o.dlm_weight = 0.7;
    o.min_val = 0.5; /* vmaf_v1.0.16_3d0h */
    run_case(160, 120, QGPU_LAYOUT_420, 8, 2, 0,
             "adm=adm_csf_mode=2:adm_enhn_gain_limit=1.0:adm_noise_weight=0.02:"
             "adm_dlm_weight=0.7:adm_min_val=0.5:debug=true",
             "_csf_2_dlmw_0.7_egl_1_min_0.5_nw_0.02", &o, 1);

    adm_ref_default_options(&o);
    o.csf_mode = 3;
    o.nvd = 1.5;
    o.rdh = 2160;
    run_case(140, 90, QGPU_LAYOUT_420, 12, 1, 0, "adm=csf=3:nvd=1.5:rdh=2160",
             "_csf_3_nvd_1.5_rdh_2160", &o, 0);

    {
        /* no blend table: libvmaf uses -EINVAL as the factor and prints NaN
         * scores; we refuse the options instead */
        QgpuContext *ctx = test_open(1);
        TestPicture a;
        if (ctx) {
            test_picture_alloc(&a, 96, 64, QGPU_LAYOUT_420, 8, 0);
            test_picture_random(&a);
            CHECK(qgpu_enable_feature(ctx, "adm=csf=2:rdh=1440") == 0, "enable");
            CHECK(qgpu_submit(ctx, &a.pic, &a.pic) == QGPU_ERR_BAD_OPTION,
                  "csf 2 at rdh 1440 must be refused");
            CHECK(strstr(qgpu_last_error(ctx), "adm_csf_mode") != NULL, "message: %s",
                  qgpu_last_error(ctx));
            test_picture_free(&a);
            qgpu_close(&ctx);
        }
    }

    adm_ref_default_options(&o);
    o.csf_mode = 1;
    o.csf_scale = 2.0;
    o.csf_diag_scale = 0.5;
    o.nvd = 5.0;
    run_case(120, 80, QGPU_LAYOUT_420, 8, 1, 0, "adm=csf=1:scf=2:scfd=0.5:nvd=5:debug=true",
             "_scfd_0.5_csf_1_scf_2_nvd_5", &o, 1);

    adm_ref_default_options(&o);
    o.skip_aim = true;
    o.skip_scale0 = true;
    o.rdh = 2160;
    run_case(100, 70, QGPU_LAYOUT_420, 8, 1, 0, "adm=adm_skip_aim=true:ssz=true:rdh=2160:debug=true",
             "_rdh_2160_ssz", &o, 1);
}

/* Identical flat frames: den == 0, adm2 = 1, aim = 0 (libvmaf's CLI). */
static void test_flat(void)
{
    QgpuContext *ctx = test_open(1);
    TestPicture a;
    unsigned frame;
    double v = -1;
    if (!ctx)
        return;
    test_picture_alloc(&a, 64, 48, QGPU_LAYOUT_420, 8, 0);
    for (int y = 0; y < 48; y++)
        for (int x = 0; x < 64; x++)
            test_set_sample(&a, 0, x, y, 128);
    CHECK(qgpu_enable_feature(ctx, "adm") == 0, "enable");
    CHECK(qgpu_submit(ctx, &a.pic, &a.pic) == 0, "submit: %s", qgpu_last_error(ctx));
    qgpu_flush(ctx);
    CHECK(qgpu_collect(ctx, &frame, 1) == 1, "collect");
    qgpu_get_score(ctx, 0, "integer_adm2", &v);
    CHECK(v == 1.0, "flat adm2 %g", v);
    qgpu_get_score(ctx, 0, "integer_aim", &v);
    CHECK(v == 0.0, "flat aim %g", v);
    qgpu_get_score(ctx, 0, "integer_adm3", &v);
    CHECK(v == 1.0, "flat adm3 %g", v);
    test_picture_free(&a);
    qgpu_close(&ctx);
}

static void expect_submit_error(const char *spec, int w, int h, int code, const char *words)
{
    QgpuContext *ctx = test_open(1);
    TestPicture a;
    if (!ctx)
        return;
    test_picture_alloc(&a, w, h, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&a);
    CHECK(qgpu_enable_feature(ctx, spec) == 0, "enable %s", spec);
    int err = qgpu_submit(ctx, &a.pic, &a.pic);
    CHECK(err == code, "%s at %dx%d: got %d, want %d", spec, w, h, err, code);
    CHECK(strstr(qgpu_last_error(ctx), words) != NULL, "message '%s' names '%s'",
          qgpu_last_error(ctx), words);
    test_picture_free(&a);
    qgpu_close(&ctx);
}

static void test_errors(void)
{
    QgpuContext *ctx = test_open(1);
    if (ctx) {
        CHECK(qgpu_enable_feature(ctx, "adm=adm_enhn_gain_limit=0.5") == QGPU_ERR_BAD_OPTION,
              "egl below 1");
        CHECK(qgpu_enable_feature(ctx, "adm=adm_csf_mode=4") == QGPU_ERR_BAD_OPTION, "csf 4");
        CHECK(qgpu_enable_feature(ctx, "adm=nvd=abc") == QGPU_ERR_BAD_OPTION, "nvd text");
        CHECK(qgpu_enable_feature(ctx, "adm=no_such=1") == QGPU_ERR_BAD_OPTION, "unknown");
        qgpu_close(&ctx);
    }
    expect_submit_error("adm", 32, 100, QGPU_ERR_UNSUPPORTED, "too small");
    expect_submit_error("adm", 100, 20, QGPU_ERR_UNSUPPORTED, "33");
    expect_submit_error("adm=nvd=2", 64, 64, QGPU_ERR_BAD_OPTION, "3240");
}

int main(void)
{
    /* both paths of adm.cl's double expressions (libqgpu/src/feature/): the
     * integer emulation and, where the device has fp64, native doubles */
    for (int fp64 = 0; fp64 <= 1; fp64++) {
        setenv("QGPU_ADM_FP64", fp64 ? "1" : "0", 1);
        test_random_default();
        test_options();
    }
    unsetenv("QGPU_ADM_FP64");
    test_flat();
    test_errors();
    return test_finish();
}
