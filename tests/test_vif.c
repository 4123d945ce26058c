/* vif on the device vs the plain-C reference (tests/ref/vif_ref.c): random
 * sizes (odd too), layouts, 8..16 bit, padded strides, pipeline depths,
 * structured pictures (flat, textured, enhanced, identical), every option;
 * output names; error paths. Integer VIF must match exactly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "vif_ref.h"

typedef struct Case {
    int w, h, layout, bitdepth, depth, frames, stride_pad;
    double egl;
    int skip0, debug;
} Case;

static const char *scale_name(char *buf, size_t len, const char *base, int scale,
                              const char *suffix)
{
    if (scale >= 0)
        snprintf(buf, len, "%s%d%s", base, scale, suffix);
    else
        snprintf(buf, len, "%s%s", base, suffix);
    return buf;
}

static void run_case(const Case *c)
{
    char spec[128], suffix[32] = "", name[96];
    QgpuContext *ctx = test_open(c->depth);
    TestPicture ref[6], dist[6];
    unsigned frame, got = 0;
    int n = 0;
    if (!ctx)
        return;
    snprintf(spec, sizeof(spec), "vif=debug=%s", c->debug ? "true" : "false");
    if (c->egl != 100.0) {
        size_t l = strlen(spec);
        snprintf(spec + l, sizeof(spec) - l, ":vif_enhn_gain_limit=%g", c->egl);
        snprintf(suffix, sizeof(suffix), "_egl_%g", c->egl);
    }
    if (c->skip0) {
        strncat(spec, ":vif_skip_scale0=true", sizeof(spec) - strlen(spec) - 1);
        strncat(suffix, "_ssclz", sizeof(suffix) - strlen(suffix) - 1);
    }
    if (!CHECK(qgpu_enable_feature(ctx, spec) == 0, "enable %s: %s", spec, qgpu_last_error(ctx)))
        goto out;
    for (n = 0; n < c->frames; n++) {
        test_picture_alloc(&ref[n], c->w, c->h, c->layout, c->bitdepth, c->stride_pad);
        test_picture_alloc(&dist[n], c->w, c->h, c->layout, c->bitdepth, c->stride_pad + 3);
        test_picture_random(&dist[n]); /* chroma: noise */
        if (n % 3 == 2)
            test_picture_random(&ref[n]);
        else
            test_picture_structured(&ref[n], (n + c->w) % 4);
        test_picture_distort(&dist[n], &ref[n], (n + c->h) % 4);
        int err = qgpu_submit(ctx, &ref[n].pic, &dist[n].pic);
        if (!CHECK(err == 0, "submit %dx%d: %s", c->w, c->h, qgpu_last_error(ctx))) {
            n++;
            goto out;
        }
        while (qgpu_collect(ctx, &frame, 0) == 1)
            got++;
    }
    CHECK(qgpu_flush(ctx) == 0, "flush");
    while (qgpu_collect(ctx, &frame, 1) == 1)
        got++;
    CHECK(got == (unsigned)c->frames, "collected %u of %d", got, c->frames);
    for (int i = 0; i < c->frames; i++) {
        VifRefResult r;
        int bps = c->bitdepth > 8 ? 2 : 1;
        size_t row = (size_t)c->w * bps;
        unsigned char *a = malloc(row * c->h), *b = malloc(row * c->h);
        if (!a || !b)
            abort();
        for (int y = 0; y < c->h; y++) { /* packed luma for the reference */
            memcpy(a + y * row,
                   (const unsigned char *)ref[i].pic.data[0] + y * ref[i].pic.stride[0], row);
            memcpy(b + y * row,
                   (const unsigned char *)dist[i].pic.data[0] + y * dist[i].pic.stride[0], row);
        }
        vif_ref_compute(a, b, c->w, c->h, c->w, c->bitdepth, c->egl, c->skip0, &r);
        free(a);
        free(b);
        for (int s = 0; s < 4; s++) {
            double v = NAN;
            int err = qgpu_get_score(ctx, i, scale_name(name, sizeof(name), "integer_vif_scale", s,
                                                        suffix), &v);
            CHECK(err == 0 && v == r.score[s],
                  "%dx%d %d-bit egl %g skip %d frame %d %s: %.10f vs ref %.10f (err %d)", c->w,
                  c->h, c->bitdepth, c->egl, c->skip0, i, name, v, r.score[s], err);
        }
        if (c->debug) {
            double tn = 0, td = 0, v = NAN;
            for (int s = c->skip0 ? 1 : 0; s < 4; s++) {
                tn += r.num[s];
                td += r.den[s];
            }
            scale_name(name, sizeof(name), "integer_vif_num", -1, suffix);
            qgpu_get_score(ctx, i, name, &v);
            CHECK(v == tn, "frame %d %s: %.6f vs %.6f", i, name, v, tn);
            scale_name(name, sizeof(name), "integer_vif_den", -1, suffix);
            qgpu_get_score(ctx, i, name, &v);
            CHECK(v == td, "frame %d %s: %.6f vs %.6f", i, name, v, td);
            qgpu_get_score(ctx, i, scale_name(name, sizeof(name), "integer_vif", -1, suffix), &v);
            CHECK(v == (td == 0 ? 1.0 : tn / td), "frame %d %s", i, name);
            for (int s = 0; s < 4; s++) {
                double en = r.num[s], ed = r.den[s];
                if (s == 0 && c->skip0) {
                    en = 0.0;
                    ed = -1.0;
                }
                qgpu_get_score(ctx, i, scale_name(name, sizeof(name), "integer_vif_num_scale", s,
                                                  suffix), &v);
                CHECK(v == en, "frame %d %s: %.6f vs %.6f", i, name, v, en);
                qgpu_get_score(ctx, i, scale_name(name, sizeof(name), "integer_vif_den_scale", s,
                                                  suffix), &v);
                CHECK(v == ed, "frame %d %s: %.6f vs %.6f", i, name, v, ed);
            }
        }
    }
out:
    for (int i = 0; i < n; i++) {
        test_picture_free(&ref[i]);
        test_picture_free(&dist[i]);
    }
    qgpu_close(&ctx);
}

static void test_random_cases(void)
{
    static const int depths[] = {8, 10, 12, 16, 9, 11};
    test_seed(4242);
    for (int i = 0; i < 12; i++) {
        Case c = {test_rand_range(16, 260), test_rand_range(16, 170), i % 4, depths[(i / 2) % 6],
                  1 + i % 3, 1 + i % 4, test_rand_range(0, 24), 100.0, 0, i % 3 == 0};
        if (i == 5 || i == 9)
            c.egl = i == 5 ? 1.0 : 2.5;
        if (i == 7)
            c.skip0 = 1;
        run_case(&c);
    }
}

static void test_edge_cases(void)
{
    /* smallest size; odd sizes whose scales round down twice */
    Case small = {16, 16, QGPU_LAYOUT_420, 8, 1, 2, 0, 100.0, 0, 1};
    run_case(&small);
    Case odd = {17, 35, QGPU_LAYOUT_444, 10, 2, 2, 5, 1.0, 0, 1};
    run_case(&odd);
    Case tall = {16, 300, QGPU_LAYOUT_400, 16, 2, 1, 0, 100.0, 1, 1};
    run_case(&tall);
    /* a wide picture (several tiles per row) at 12 bits */
    Case wide = {333, 40, QGPU_LAYOUT_422, 12, 3, 3, 7, 100.0, 0, 0};
    run_case(&wide);
    /* 16 bits, every picture kind (full-swing checkerboard included) */
    Case full = {48, 40, QGPU_LAYOUT_444, 16, 1, 4, 0, 100.0, 0, 1};
    run_case(&full);
    /* odd 4:2:0 size as in the corpus (383x287) */
    Case mire = {383, 287, QGPU_LAYOUT_420, 8, 2, 2, 0, 100.0, 0, 0};
    run_case(&mire);
}

/* Identical pictures score 1 at every scale (the gain is 1, the residual
 * variance 0). */
static void test_identical(void)
{
    QgpuContext *ctx = test_open(1);
    TestPicture a;
    unsigned frame;
    double v = 0;
    if (!ctx)
        return;
    test_picture_alloc(&a, 64, 48, QGPU_LAYOUT_420, 8, 0);
    test_picture_structured(&a, 1);
    CHECK(qgpu_enable_feature(ctx, "vif") == 0, "enable");
    CHECK(qgpu_submit(ctx, &a.pic, &a.pic) == 0, "submit: %s", qgpu_last_error(ctx));
    CHECK(qgpu_flush(ctx) == 0, "flush");
    CHECK(qgpu_collect(ctx, &frame, 1) == 1, "collect");
    for (int s = 0; s < 4; s++) {
        char name[32];
        snprintf(name, sizeof(name), "integer_vif_scale%d", s);
        CHECK(qgpu_get_score(ctx, 0, name, &v) == 0 && fabs(v - 1.0) < 1e-6, "%s = %f", name, v);
    }
    test_picture_free(&a);
    qgpu_close(&ctx);
}

static void test_errors(void)
{
    QgpuContext *ctx = test_open(1);
    TestPicture a;
    if (!ctx)
        return;
    CHECK(qgpu_enable_feature(ctx, "vif=vif_enhn_gain_limit=0.5") == QGPU_ERR_BAD_OPTION,
          "egl below 1 must be refused");
    CHECK(qgpu_enable_feature(ctx, "vif=vif_enhn_gain_limit=abc") == QGPU_ERR_BAD_OPTION,
          "non-numeric egl must be refused");
    CHECK(qgpu_enable_feature(ctx, "vif=vif_skip_scale0=maybe") == QGPU_ERR_BAD_OPTION,
          "bad bool must be refused");
    CHECK(qgpu_enable_feature(ctx, "vif") == 0, "enable vif");
    test_picture_alloc(&a, 15, 40, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&a);
    int err = qgpu_submit(ctx, &a.pic, &a.pic);
    CHECK(err == QGPU_ERR_UNSUPPORTED, "15x40 must be unsupported (got %d)", err);
    CHECK(strstr(qgpu_last_error(ctx), "vif") && strstr(qgpu_last_error(ctx), "small"),
          "message names the metric and the limit: '%s'", qgpu_last_error(ctx));
    test_picture_free(&a);
    qgpu_close(&ctx);
}

int main(void)
{
    test_errors();
    test_identical();
    /* both statistic paths of vif.cl (libqgpu/src/feature/): the integer
     * emulation of libvmaf's doubles and, where the device has fp64, native
     * doubles */
    for (int fp64 = 0; fp64 <= 1; fp64++) {
        setenv("QGPU_VIF_FP64", fp64 ? "1" : "0", 1);
        test_edge_cases();
        test_random_cases();
    }
    unsetenv("QGPU_VIF_FP64");
    return test_finish();
}
