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

#include "float_adm_ref.h"
#include "test_util.h"

typedef struct Case {
    int w, h, layout, bitdepth, depth, frames, stride_pad;
    const char *spec;   /* feature spec */
    const char *suffix; /* output-name suffix */
    FloatAdmRefOpts o;
    int debug;
    double tol;
} Case;

static double get(QgpuContext *ctx, unsigned frame, const char *base, const char *suffix)
{
    char name[128];
    double v = NAN;
    snprintf(name, sizeof(name), "%s%s", base, suffix);
    if (qgpu_get_score(ctx, frame, name, &v))
        CHECK(0, "no score %s for frame %u", name, frame);
    return v;
}

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
        test_picture_distort(&dist[i], &ref[i], (i + 1) % 4);
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
        FloatAdmRefResult r;
        void *a = test_luma_copy(&ref[i].pic), *b = test_luma_copy(&dist[i].pic);
        if (!a || !b ||
            float_adm_ref_compute(a, b, c->w, c->h, c->w, c->bitdepth, &c->o, &r)) {
            CHECK(0, "out of memory");
            free(a);
            free(b);
            continue;
        }
        free(a);
        free(b);
        unsigned f = (unsigned)i;
        const char *sfx = c->suffix;
        double v;
        v = get(ctx, f, "adm2", sfx);
        CHECK(fabs(v - r.adm2) <= c->tol, "%s %dx%d %d-bit frame %d adm2 %.9f vs ref %.9f",
              c->spec, c->w, c->h, c->bitdepth, i, v, r.adm2);
        v = get(ctx, f, "aim", sfx);
        CHECK(fabs(v - r.aim) <= c->tol, "%s %dx%d frame %d aim %.9f vs ref %.9f", c->spec, c->w,
              c->h, i, v, r.aim);
        v = get(ctx, f, "adm3", sfx);
        CHECK(fabs(v - r.adm3) <= c->tol, "%s %dx%d frame %d adm3 %.9f vs ref %.9f", c->spec,
              c->w, c->h, i, v, r.adm3);
        for (int s = 0; s < 4; s++) {
            char base[32];
            snprintf(base, sizeof(base), "adm_scale%d", s);
            v = get(ctx, f, base, sfx);
            CHECK(fabs(v - r.scale[s]) <= c->tol, "%s %dx%d frame %d %s %.9f vs ref %.9f",
                  c->spec, c->w, c->h, i, base, v, r.scale[s]);
            if (c->debug) {
                snprintf(base, sizeof(base), "adm_num_scale%d", s);
                double n = get(ctx, f, base, sfx);
                snprintf(base, sizeof(base), "adm_den_scale%d", s);
                double d = get(ctx, f, base, sfx);
                CHECK(fabs(n - r.num[s]) <= c->tol * fabs(r.num[s]) + 1e-6 &&
                          fabs(d - r.den[s]) <= c->tol * fabs(r.den[s]) + 1e-6,
                      "frame %d scale %d num/den %g/%g vs ref %g/%g", i, s, n, d, r.num[s],
                      r.den[s]);
            }
        }
        if (c->debug) {
            /* libvmaf quirk: "adm" never carries the option suffix */
            v = get(ctx, f, "adm", "");
            CHECK(fabs(v - r.adm2) <= c->tol, "frame %d adm %.9f vs %.9f", i, v, r.adm2);
            v = get(ctx, f, "adm_num", sfx);
            CHECK(fabs(v - r.num_total) <= c->tol * fabs(r.num_total) + 1e-6, "adm_num %g vs %g",
                  v, r.num_total);
            v = get(ctx, f, "adm_den", sfx);
            CHECK(fabs(v - r.den_total) <= c->tol * fabs(r.den_total) + 1e-6, "adm_den %g vs %g",
                  v, r.den_total);
        }
    }
    for (int i = 0; i < c->frames; i++) {
        test_picture_free(&ref[i]);
        test_picture_free(&dist[i]);
    }
    qgpu_close(&ctx);
}

static Case base_case(int w, int h, int layout, int bitdepth, const char *spec,
                      const char *suffix)
{
    Case c;
    memset(&c, 0, sizeof(c));
    c.w = w;
    c.h = h;
    c.layout = layout;
    c.bitdepth = bitdepth;
    c.depth = 2;
    c.frames = 2;
    c.spec = spec;
    c.suffix = suffix;
    c.tol = 2e-6;
    float_adm_ref_defaults(&c.o);
    return c;
}

static void test_random(void)
{
    static const int depths[] = {8, 10, 12, 16};
    test_seed(4343);
    for (int k = 0; k < 8; k++) {
        Case c = base_case(test_rand_range(32, 260), test_rand_range(32, 180), k % 4,
                           depths[k % 4], k % 2 ? "float_adm=debug=true" : "float_adm", "");
        c.depth = 1 + k % 3;
        c.frames = 1 + k % 4;
        c.stride_pad = test_rand_range(0, 20);
        c.debug = k % 2;
        run_case(&c);
    }
    Case small = base_case(32, 32, QGPU_LAYOUT_420, 8, "float_adm=debug=true", "");
    small.debug = 1;
    small.frames = 4;
    run_case(&small);
    Case odd = base_case(383, 287, QGPU_LAYOUT_420, 8, "float_adm", "");
    run_case(&odd);
}

static void test_options(void)
{
    Case c;
    c = base_case(97, 65, QGPU_LAYOUT_444, 10, "float_adm=adm_enhn_gain_limit=1.0:debug=true",
                  "_egl_1");
    c.o.egl = 1.0;
    c.debug = 1;
    run_case(&c);
    c = base_case(120, 72, QGPU_LAYOUT_420, 8, "float_adm=egl=1.2", "_egl_1.2");
    c.o.egl = 1.2;
    run_case(&c);
    c = base_case(130, 90, QGPU_LAYOUT_420, 8, "float_adm=rdf=2160:nvd=1.5",
                  "_nvd_1.5_rdf_2160");
    c.o.rdh = 2160;
    c.o.nvd = 1.5;
    run_case(&c);
    c = base_case(100, 64, QGPU_LAYOUT_400, 8, "float_adm=adm_noise_weight=0.02", "_nw_0.02");
    c.o.nw = 0.02;
    run_case(&c);
    c = base_case(100, 64, QGPU_LAYOUT_420, 8, "float_adm=adm_dlm_weight=0.7:adm_min_val=0.5",
                  "_dlmw_0.7_min_0.5");
    c.o.dlmw = 0.7;
    c.o.min_val = 0.5;
    run_case(&c);
    c = base_case(100, 64, QGPU_LAYOUT_420, 8, "float_adm=adm_p_norm=2", "_apn_2");
    c.o.p_norm = 2.0;
    c.tol = 1e-5;
    run_case(&c);
    c = base_case(100, 64, QGPU_LAYOUT_420, 8, "float_adm=adm_bypass_cm=1", "_bcm_1");
    c.o.bypass_cm = 1;
    run_case(&c);
    c = base_case(100, 64, QGPU_LAYOUT_420, 8, "float_adm=adm_adm3_apply_hm=true", "_aah");
    c.o.apply_hm = 1;
    run_case(&c);
    c = base_case(100, 64, QGPU_LAYOUT_420, 8, "float_adm=adm_f1s0=0.5:adm_f2s3=2",
                  "_f1s0_0.5_f2s3_2");
    c.o.f1s[0] = 0.5;
    c.o.f2s[3] = 2.0;
    run_case(&c);
    c = base_case(100, 64, QGPU_LAYOUT_420, 8, "float_adm=adm_skip_aim_scale=1:debug=true",
                  "_sasc_1");
    c.o.skip_aim_scale = 1;
    c.debug = 1;
    run_case(&c);
    c = base_case(100, 64, QGPU_LAYOUT_420, 8, "float_adm=adm_skip_scale0=true", "_ssz");
    c.o.skip_scale0 = 1;
    run_case(&c);
}

/* Identical flat pictures: all bands are 0, so num and den of every scale
 * are the noise constant alone: adm2 = 1, aim = 0, adm3 = 1. */
static void test_flat(void)
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
    CHECK(qgpu_enable_feature(ctx, "float_adm") == 0, "enable");
    CHECK(qgpu_submit(ctx, &a.pic, &a.pic) == 0, "submit: %s", qgpu_last_error(ctx));
    qgpu_flush(ctx);
    CHECK(qgpu_collect(ctx, &frame, 1) == 1, "collect");
    CHECK(qgpu_get_score(ctx, 0, "adm2", &v) == 0 && fabs(v - 1.0) < 1e-7, "adm2 %.9f", v);
    CHECK(qgpu_get_score(ctx, 0, "aim", &v) == 0 && v == 0.0, "aim %.9f", v);
    CHECK(qgpu_get_score(ctx, 0, "adm3", &v) == 0 && fabs(v - 1.0) < 1e-7, "adm3 %.9f", v);
    test_picture_free(&a);
    qgpu_close(&ctx);
}

static void test_errors(void)
{
    QgpuContext *ctx = test_open(1);
    TestPicture a;
    if (!ctx)
        return;
    CHECK(qgpu_enable_feature(ctx, "float_adm=adm_enhn_gain_limit=0.5") == QGPU_ERR_BAD_OPTION,
          "egl below 1");
    CHECK(qgpu_enable_feature(ctx, "float_adm=apn=25") == QGPU_ERR_BAD_OPTION, "apn above 20");
    CHECK(qgpu_enable_feature(ctx, "float_adm=sasc=4") == QGPU_ERR_BAD_OPTION, "sasc above 3");
    CHECK(qgpu_enable_feature(ctx, "float_adm=f1s0=11") == QGPU_ERR_BAD_OPTION, "f1s0 above 10");
    CHECK(qgpu_enable_feature(ctx, "float_adm=rdh=2160") == QGPU_ERR_BAD_OPTION,
          "rdh is integer adm's alias, float_adm's is rdf");
    CHECK(qgpu_enable_feature(ctx, "float_adm") == 0, "enable");
    test_picture_alloc(&a, 31, 64, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&a);
    CHECK(qgpu_submit(ctx, &a.pic, &a.pic) == QGPU_ERR_UNSUPPORTED, "31 wide is too small");
    CHECK(strstr(qgpu_last_error(ctx), "float_adm") != NULL, "message names the metric: %s",
          qgpu_last_error(ctx));
    test_picture_free(&a);
    qgpu_close(&ctx);

    ctx = test_open(1);
    if (!ctx)
        return;
    test_picture_alloc(&a, 64, 64, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&a);
    CHECK(qgpu_enable_feature(ctx, "float_adm=adm_csf_mode=1") == 0, "enable csf 1");
    CHECK(qgpu_submit(ctx, &a.pic, &a.pic) == QGPU_ERR_UNSUPPORTED, "csf 1 unsupported");
    test_picture_free(&a);
    qgpu_close(&ctx);
}

int main(void)
{
    test_random();
    test_options();
    test_flat();
    test_errors();
    return test_finish();
}
