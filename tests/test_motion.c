/* motion on the device vs the plain-C reference (tests/ref/motion_ref.c):
 * moving structured pictures of random sizes and bit depths, every option
 * (blend, fps weight, max value, five-frame window, moving average, forced
 * zero, debug), clips of 1..n frames, look-ahead (when frames become final),
 * output names, error paths. The SAD is integer and must match exactly, and
 * so must every derived score. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "motion_ref.h"
#include "test_util.h"

/* Frame i: a textured pattern moving by i pixels, plus a little noise. */
static void fill_moving(TestPicture *t, int i, int speed)
{
    const QgpuPicture *p = &t->pic;
    unsigned maxv = (1u << p->bitdepth) - 1;
    for (int y = 0; y < p->height; y++)
        for (int x = 0; x < p->width; x++) {
            int xs = x + i * speed, ys = y + (i * speed) / 2;
            unsigned v = ((xs / 5 + ys / 7) & 1) ? maxv * 3 / 4 : maxv / 5;
            v += (unsigned)((xs * 7 + ys * 3) % 17) * (maxv / 255 + 1);
            v += test_rand() % (maxv / 64 + 2);
            test_set_sample(t, 0, x, y, v > maxv ? maxv : v);
        }
}

typedef struct Case {
    int w, h, layout, bitdepth, depth, frames, stride_pad, speed;
    const char *options; /* after "motion=" (may be "") */
    const char *suffix;  /* libvmaf's output-name suffix for those options */
    MotionRefOptions ref;
    int debug;
} Case;

static void run_case(const Case *c)
{
    char spec[256], name[128];
    QgpuContext *ctx = test_open(c->depth);
    TestPicture *ref = calloc(c->frames, sizeof(*ref)), dist;
    const void **luma = calloc(c->frames, sizeof(*luma));
    double *sad = calloc(c->frames, sizeof(double)), *m2 = calloc(c->frames, sizeof(double));
    double *m3 = calloc(c->frames, sizeof(double));
    int bps = c->bitdepth > 8 ? 2 : 1, n = 0;
    unsigned frame, got = 0;
    if (!ctx || !ref || !luma || !sad || !m2 || !m3)
        goto out;
    snprintf(spec, sizeof(spec), "motion%s%s", *c->options ? "=" : "", c->options);
    if (!CHECK(qgpu_enable_feature(ctx, spec) == 0, "enable %s: %s", spec, qgpu_last_error(ctx)))
        goto out;
    test_picture_alloc(&dist, c->w, c->h, c->layout, c->bitdepth, 0);
    test_picture_random(&dist);
    for (n = 0; n < c->frames; n++) {
        test_picture_alloc(&ref[n], c->w, c->h, c->layout, c->bitdepth, c->stride_pad);
        test_picture_random(&ref[n]);
        fill_moving(&ref[n], n, c->speed);
        if (n % 4 == 3) /* a repeated frame: SAD 0 */
            for (int y = 0; y < c->h; y++)
                memcpy((char *)ref[n].planes[0] + y * ref[n].pic.stride[0],
                       (const char *)ref[n - 1].planes[0] + y * ref[n - 1].pic.stride[0],
                       (size_t)c->w * bps);
        int err = qgpu_submit(ctx, &ref[n].pic, &dist.pic);
        if (!CHECK(err == 0, "submit: %s", qgpu_last_error(ctx))) {
            n++;
            goto done;
        }
        while (qgpu_collect(ctx, &frame, 0) == 1)
            CHECK(frame == got++, "order");
    }
    CHECK(qgpu_flush(ctx) == 0, "flush: %s", qgpu_last_error(ctx));
    while (qgpu_collect(ctx, &frame, 1) == 1)
        CHECK(frame == got++, "order");
    CHECK(got == (unsigned)c->frames, "collected %u of %d", got, c->frames);

    /* packed luma for the reference */
    for (int i = 0; i < c->frames; i++) {
        size_t row = (size_t)c->w * bps;
        char *l = malloc(row * c->h);
        for (int y = 0; y < c->h; y++)
            memcpy(l + y * row, (const char *)ref[i].pic.data[0] + y * ref[i].pic.stride[0], row);
        luma[i] = l;
    }
    motion_ref_clip(luma, (unsigned)c->frames, c->w, c->h, c->w, c->bitdepth, &c->ref, sad, m2,
                    m3);
    for (int i = 0; i < c->frames; i++) {
        static const char *const bases[4] = {"VMAF_integer_feature_motion_sad_score",
                                             "integer_motion2", "integer_motion3",
                                             "integer_motion"};
        const double expect[4] = {sad[i], m2[i], m3[i], sad[i]};
        for (int k = 0; k < (c->debug ? 4 : 3); k++) {
            double v = NAN;
            snprintf(name, sizeof(name), "%s%s", bases[k], c->suffix);
            int err = qgpu_get_score(ctx, i, name, &v);
            CHECK(err == 0 && v == expect[k],
                  "%dx%d %d-bit '%s' frame %d/%d %s: %.10f vs ref %.10f", c->w, c->h,
                  c->bitdepth, c->options, i, c->frames, name, v, expect[k]);
        }
    }
done:
    test_picture_free(&dist);
out:
    for (int i = 0; i < n; i++)
        test_picture_free(&ref[i]);
    for (int i = 0; ref && luma && i < c->frames; i++)
        free((void *)luma[i]);
    free(ref);
    free(luma);
    free(sad);
    free(m2);
    free(m3);
    qgpu_close(&ctx);
}

static Case make_case(int w, int h, int bitdepth, int frames, const char *options,
                      const char *suffix)
{
    Case c = {w, h, QGPU_LAYOUT_420, bitdepth, 2, frames, 0, 1, options, suffix, {0}, 0};
    motion_ref_default_options(&c.ref);
    return c;
}

static void test_options(void)
{
    Case c = make_case(96, 64, 8, 7, "", "");
    run_case(&c);

    c = make_case(80, 48, 10, 6, "motion_max_val=18", "_mmxv_18");
    c.ref.max_val = 18;
    c.speed = 9; /* large motion: the cap matters */
    run_case(&c);

    for (int frames = 1; frames <= 6; frames++) { /* the v1 HFR models */
        c = make_case(70, 40, 8, frames,
                      "motion_max_val=18:motion_five_frame_window=true:motion_moving_average=true",
                      "_mffw_mmxv_18_mma");
        c.ref.max_val = 18;
        c.ref.five_frame_window = 1;
        c.ref.moving_average = 1;
        c.depth = 1 + frames % 3;
        run_case(&c);
    }

    c = make_case(64, 40, 12, 5, "motion_blend_factor=0.5:motion_blend_offset=3:debug=true",
                  "_mbf_0.5_mbo_3");
    c.ref.blend_factor = 0.5;
    c.ref.blend_offset = 3;
    c.debug = 1;
    c.speed = 4;
    run_case(&c);

    c = make_case(50, 30, 16, 4, "motion_fps_weight=2:motion_moving_average=true", "_mfw_2_mma");
    c.ref.fps_weight = 2;
    c.ref.moving_average = 1;
    run_case(&c);

    c = make_case(40, 24, 8, 4, "motion_force_zero=true:debug=true", "_force_0");
    c.ref.force_zero = 1;
    c.debug = 1;
    run_case(&c);

    c = make_case(40, 24, 10, 5, "motion_five_frame_window=true", "_mffw");
    c.ref.five_frame_window = 1;
    run_case(&c);

    /* motion_legacy: full-range 8- and 16-bit content (the 32-bit sums of the
     * blur at their largest), large motion, with the other options */
    c = make_case(150, 70, 8, 6, "motion_legacy=true:debug=true", "");
    c.ref.legacy = 1;
    c.debug = 1;
    c.speed = 7;
    run_case(&c);
    c = make_case(67, 45, 16, 4, "motion_legacy=true", "");
    c.ref.legacy = 1;
    c.speed = 11;
    run_case(&c);
    c = make_case(3, 3, 10, 3, "motion_legacy=true", "");
    c.ref.legacy = 1;
    c.layout = QGPU_LAYOUT_444;
    run_case(&c);
    c = make_case(70, 40, 10, 5,
                  "motion_legacy=true:motion_max_val=18:motion_five_frame_window=true:"
                  "motion_moving_average=true",
                  "_mffw_mmxv_18_mma");
    c.ref.legacy = 1;
    c.ref.max_val = 18;
    c.ref.five_frame_window = 1;
    c.ref.moving_average = 1;
    run_case(&c);
}

static void test_sizes(void)
{
    static const int depths[] = {8, 10, 12, 16};
    test_seed(777);
    for (int i = 0; i < 10; i++) {
        Case c = make_case(test_rand_range(3, 300), test_rand_range(3, 150), depths[i % 4],
                           1 + i % 5, "", "");
        c.layout = i % 4;
        c.depth = 1 + i % 4;
        c.stride_pad = test_rand_range(0, 30);
        c.speed = 1 + i % 3;
        run_case(&c);
    }
    /* libvmaf <= v3.0.0 arithmetic (motion_legacy): same names, other SAD */
    test_seed(4242);
    for (int i = 0; i < 8; i++) {
        Case c = make_case(test_rand_range(3, 260), test_rand_range(3, 130), depths[i % 4],
                           1 + i % 5, "motion_legacy=true", "");
        c.ref.legacy = 1;
        c.layout = i % 4;
        c.depth = 1 + i % 4;
        c.stride_pad = test_rand_range(0, 20);
        c.speed = 1 + i % 3;
        run_case(&c);
    }
    Case tiny = make_case(3, 3, 8, 3, "", "");
    tiny.layout = QGPU_LAYOUT_444;
    run_case(&tiny);
    Case odd = make_case(383, 287, 8, 3, "", "");
    run_case(&odd);
}

/* Frame n is final once frame n+1 is processed (n+2 for frames 0 and 1 with
 * the five-frame window); with it, collect(wait) cannot return earlier. */
static void test_lookahead(int five)
{
    QgpuContext *ctx = test_open(4);
    TestPicture a[3];
    unsigned frame;
    if (!ctx)
        return;
    CHECK(qgpu_enable_feature(ctx, five ? "motion=motion_five_frame_window=true" : "motion") == 0,
          "enable");
    for (int i = 0; i < 3; i++) {
        test_picture_alloc(&a[i], 32, 32, QGPU_LAYOUT_420, 8, 0);
        test_picture_random(&a[i]);
    }
    CHECK(qgpu_submit(ctx, &a[0].pic, &a[0].pic) == 0, "submit");
    CHECK(qgpu_collect(ctx, &frame, 1) == 0, "frame 0 cannot be final after one frame");
    CHECK(qgpu_submit(ctx, &a[1].pic, &a[1].pic) == 0, "submit");
    int r = qgpu_collect(ctx, &frame, 1);
    if (five) {
        CHECK(r == 0, "five-frame window: frame 0 needs frame 2 (got %d)", r);
        CHECK(qgpu_submit(ctx, &a[2].pic, &a[2].pic) == 0, "submit");
        r = qgpu_collect(ctx, &frame, 1);
    }
    CHECK(r == 1 && frame == 0, "frame 0 final (got %d)", r);
    test_picture_free(&a[0]);
    test_picture_free(&a[1]);
    test_picture_free(&a[2]);
    qgpu_close(&ctx);
}

static void test_errors(void)
{
    QgpuContext *ctx = test_open(1);
    TestPicture a;
    if (!ctx)
        return;
    CHECK(qgpu_enable_feature(ctx, "motion=motion_blend_factor=2") == QGPU_ERR_BAD_OPTION,
          "blend factor > 1 must be refused");
    CHECK(qgpu_enable_feature(ctx, "motion=motion_fps_weight=-1") == QGPU_ERR_BAD_OPTION,
          "negative fps weight must be refused");
    CHECK(qgpu_enable_feature(ctx, "motion=motion_max_val=x") == QGPU_ERR_BAD_OPTION,
          "non-numeric max must be refused");
    CHECK(qgpu_enable_feature(ctx, "motion") == 0, "enable motion");
    test_picture_alloc(&a, 2, 40, QGPU_LAYOUT_444, 8, 0);
    test_picture_random(&a);
    int err = qgpu_submit(ctx, &a.pic, &a.pic);
    CHECK(err == QGPU_ERR_UNSUPPORTED, "2x40 must be unsupported (got %d)", err);
    CHECK(strstr(qgpu_last_error(ctx), "motion") && strstr(qgpu_last_error(ctx), "small"),
          "message names the metric and the limit: '%s'", qgpu_last_error(ctx));
    test_picture_free(&a);
    qgpu_close(&ctx);
}

int main(void)
{
    test_errors();
    test_lookahead(0);
    test_lookahead(1);
    test_options();
    test_sizes();
    return test_finish();
}
