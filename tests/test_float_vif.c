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

#include "float_vif_ref.h"
#include "test_util.h"

typedef struct Case {
    int w, h, layout, bitdepth, depth, frames, stride_pad;
    double egl, snsq;
    const char *spec;   /* feature spec */
    const char *suffix; /* output-name suffix */
    int debug;
} Case;

static void run_case(const Case *c)
{
    QgpuContext *ctx = test_open(c->depth);
    TestPicture ref[6], dist[6];
    unsigned frame, got = 0;
    if (!ctx)
        return;
    if (!CHECK(qgpu_enable_feature(ctx, c->spec) == 0, "enable %s: %s", c->spec,
               qgpu_last_error(ctx))) {
        qgpu_close(&ctx);
        return;
    }
    for (int i = 0; i < c->frames; i++) {
        test_picture_alloc(&ref[i], c->w, c->h, c->layout, c->bitdepth, c->stride_pad);
        test_picture_alloc(&dist[i], c->w, c->h, c->layout, c->bitdepth, c->stride_pad + 3);
        if (i % 2)
            test_picture_random(&ref[i]);
        else
            test_picture_structured(&ref[i], i % 4);
        test_picture_distort(&dist[i], &ref[i], i % 4);
        CHECK(qgpu_submit(ctx, &ref[i].pic, &dist[i].pic) == 0, "submit %dx%d: %s", c->w, c->h,
              qgpu_last_error(ctx));
        while (qgpu_collect(ctx, &frame, 0) == 1)
            got++;
    }
    CHECK(qgpu_flush(ctx) == 0, "flush");
    while (qgpu_collect(ctx, &frame, 1) == 1)
        got++;
    CHECK(got == (unsigned)c->frames, "collected %u of %d", got, c->frames);
    for (int i = 0; i < c->frames; i++) {
        FloatVifRefResult r;
        void *a = test_luma_copy(&ref[i].pic), *b = test_luma_copy(&dist[i].pic);
        if (!a || !b || float_vif_ref_compute(a, b, c->w, c->h, c->w, c->bitdepth, c->egl,
                                              c->snsq, &r)) {
            CHECK(0, "out of memory");
            free(a);
            free(b);
            continue;
        }
        free(a);
        free(b);
        for (int s = 0; s < 4; s++) {
            char name[96];
            double v = NAN;
            snprintf(name, sizeof(name), "vif_scale%d%s", s, c->suffix);
            qgpu_get_score(ctx, (unsigned)i, name, &v);
            CHECK(fabs(v - r.score[s]) <= 2e-6, "%dx%d %d-bit frame %d %s: %.9f vs ref %.9f",
                  c->w, c->h, c->bitdepth, i, name, v, r.score[s]);
            if (c->debug) {
                double n = NAN, d = NAN;
                snprintf(name, sizeof(name), "vif_num_scale%d%s", s, c->suffix);
                qgpu_get_score(ctx, (unsigned)i, name, &n);
                snprintf(name, sizeof(name), "vif_den_scale%d%s", s, c->suffix);
                qgpu_get_score(ctx, (unsigned)i, name, &d);
                CHECK(fabs(n - r.num[s]) <= 2e-6 * fabs(r.num[s]) + 1e-6 &&
                          fabs(d - r.den[s]) <= 2e-6 * fabs(r.den[s]) + 1e-6,
                      "frame %d scale %d num/den %g/%g vs ref %g/%g", i, s, n, d, r.num[s],
                      r.den[s]);
            }
        }
        if (c->debug) {
            double tn = 0, td = 0, v = NAN;
            char name[64];
            for (int s = 0; s < 4; s++) {
                tn += r.num[s];
                td += r.den[s];
            }
            snprintf(name, sizeof(name), "vif%s", c->suffix);
            qgpu_get_score(ctx, (unsigned)i, name, &v);
            CHECK(fabs(v - tn / td) <= 2e-6, "frame %d vif %.9f vs %.9f", i, v, tn / td);
        }
    }
    for (int i = 0; i < c->frames; i++) {
        test_picture_free(&ref[i]);
        test_picture_free(&dist[i]);
    }
    qgpu_close(&ctx);
}

static void test_random(void)
{
    static const int depths[] = {8, 10, 12, 16};
    test_seed(4242);
    for (int k = 0; k < 8; k++) {
        Case c = {test_rand_range(16, 260), test_rand_range(16, 180), k % 4, depths[k % 4],
                  1 + k % 3, 1 + k % 4, test_rand_range(0, 20), 100.0, 2.0, "float_vif", "",
                  k % 2};
        if (c.debug)
            c.spec = "float_vif=debug=true";
        run_case(&c);
    }
    Case small = {16, 16, QGPU_LAYOUT_420, 8, 1, 4, 0, 100.0, 2.0, "float_vif=debug=true", "", 1};
    run_case(&small);
    Case odd = {383, 287, QGPU_LAYOUT_420, 8, 2, 2, 0, 100.0, 2.0, "float_vif", "", 0};
    run_case(&odd);
    Case egl = {97, 65, QGPU_LAYOUT_444, 10, 2, 3, 5, 1.0, 2.0,
                "float_vif=vif_enhn_gain_limit=1.0:debug=true", "_egl_1", 1};
    run_case(&egl);
    Case snsq = {80, 48, QGPU_LAYOUT_400, 8, 1, 2, 0, 100.0, 1.5, "float_vif=snsq=1.5",
                 "_snsq_1.5", 0};
    run_case(&snsq);
}

/* Identical flat pictures: every pixel takes the sigma1^2 < sigma_nsq branch
 * with sigma2^2 = 0, so every term is 1 and every scale is exactly 1. */
static void test_identical(void)
{
    QgpuContext *ctx = test_open(1);
    TestPicture a;
    unsigned frame;
    double v = 0;
    if (!ctx)
        return;
    test_picture_alloc(&a, 64, 40, QGPU_LAYOUT_420, 8, 0);
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 64; x++)
            test_set_sample(&a, 0, x, y, 77);
    CHECK(qgpu_enable_feature(ctx, "float_vif=debug=true") == 0, "enable");
    CHECK(qgpu_submit(ctx, &a.pic, &a.pic) == 0, "submit: %s", qgpu_last_error(ctx));
    qgpu_flush(ctx);
    CHECK(qgpu_collect(ctx, &frame, 1) == 1, "collect");
    for (int s = 0; s < 4; s++) {
        char name[32];
        snprintf(name, sizeof(name), "vif_scale%d", s);
        int e = qgpu_get_score(ctx, 0, name, &v);
        CHECK(e == 0 && fabs(v - 1.0) < 1e-6, "%s of flat = %.9f (%d)", name, v, e);
    }
    CHECK(qgpu_get_score(ctx, 0, "vif_den_scale0", &v) == 0 && v == 64 * 40, "den = %f", v);
    test_picture_free(&a);
    qgpu_close(&ctx);
}

static void test_min_val(void)
{
    QgpuContext *ctx = test_open(1);
    TestPicture a, b;
    unsigned frame;
    double v = 0;
    if (!ctx)
        return;
    test_picture_alloc(&a, 64, 64, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&b, 64, 64, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&a);
    test_picture_random(&b);
    CHECK(qgpu_enable_feature(ctx, "float_vif=vif_scale2_min_val=1.0") == 0, "enable: %s",
          qgpu_last_error(ctx));
    CHECK(qgpu_submit(ctx, &a.pic, &b.pic) == 0, "submit");
    qgpu_flush(ctx);
    CHECK(qgpu_collect(ctx, &frame, 1) == 1, "collect");
    CHECK(qgpu_get_score(ctx, 0, "vif_scale2_s2miv_1", &v) == 0 && v == 1.0,
          "s2miv clamps to 1, got %f", v);
    CHECK(qgpu_get_score(ctx, 0, "vif_scale1_s2miv_1", &v) == 0 && v < 0.5,
          "other scales unclamped, got %f", v);
    test_picture_free(&a);
    test_picture_free(&b);
    qgpu_close(&ctx);
}

static void test_errors(void)
{
    QgpuContext *ctx = test_open(1);
    TestPicture a;
    if (!ctx)
        return;
    CHECK(qgpu_enable_feature(ctx, "float_vif=vif_enhn_gain_limit=0.5") == QGPU_ERR_BAD_OPTION,
          "egl below 1");
    CHECK(qgpu_enable_feature(ctx, "float_vif=snsq=6") == QGPU_ERR_BAD_OPTION, "snsq above 5");
    CHECK(qgpu_enable_feature(ctx, "float_vif=no_such=1") == QGPU_ERR_BAD_OPTION, "unknown");
    CHECK(qgpu_enable_feature(ctx, "float_vif") == 0, "enable");
    test_picture_alloc(&a, 15, 64, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&a);
    CHECK(qgpu_submit(ctx, &a.pic, &a.pic) == QGPU_ERR_UNSUPPORTED, "15 wide is too small");
    CHECK(strstr(qgpu_last_error(ctx), "float_vif") != NULL, "message names the metric: %s",
          qgpu_last_error(ctx));
    test_picture_free(&a);
    qgpu_close(&ctx);

    static const char *const unsupported[] = {"float_vif=vif_kernelscale=0.5",
                                              "float_vif=vif_prescale=0.5",
                                              "float_vif=vif_skip_scale0=true"};
    for (int i = 0; i < 3; i++) {
        ctx = test_open(1);
        if (!ctx)
            return;
        test_picture_alloc(&a, 64, 64, QGPU_LAYOUT_420, 8, 0);
        test_picture_random(&a);
        CHECK(qgpu_enable_feature(ctx, unsupported[i]) == 0, "enable %s", unsupported[i]);
        CHECK(qgpu_submit(ctx, &a.pic, &a.pic) == QGPU_ERR_UNSUPPORTED, "%s unsupported",
              unsupported[i]);
        test_picture_free(&a);
        qgpu_close(&ctx);
    }
    ctx = test_open(1);
    if (!ctx)
        return;
    test_picture_alloc(&a, 64, 64, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&a);
    CHECK(qgpu_enable_feature(ctx, "float_vif=vif_prescale_method=cubic") == 0, "enable pm");
    CHECK(qgpu_submit(ctx, &a.pic, &a.pic) == QGPU_ERR_BAD_OPTION, "pm=cubic is not a method");
    test_picture_free(&a);
    qgpu_close(&ctx);
}

int main(void)
{
    test_random();
    test_identical();
    test_min_val();
    test_errors();
    return test_finish();
}
