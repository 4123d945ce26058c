/* qgpu_start: the stream started for a format before the first submit.
 * Scores are bit-identical to a context started by its first submit
 * (host and pinned submits, planar and NV12, 8 and 10 bits, widening, a
 * model with its features, pipeline depths 1..3); a first submit of
 * another format is refused and leaves the context usable; starting twice,
 * too late, with no feature or a bad format, and a failing set-up. */
#include <string.h>

#include "test_util.h"

enum { FRAMES = 5 };

typedef struct StartCase {
    const char *label;
    int w, h, layout, bitdepth;
    const char *features; /* '|'-separated */
    const char *model;    /* NULL: none */
    int compute_bitdepth; /* 0: the input's */
    int depth;            /* pipeline depth */
    int pinned;           /* the started context submits from pinned blocks */
} StartCase;

static const StartCase cases[] = {
    {"vmaf + psnr + ciede, 4:2:0 8-bit", 176, 144, QGPU_LAYOUT_420, 8, "psnr|ciede",
     "version=vmaf_v0.6.1", 0, 2, 0},
    {"the same from pinned blocks", 176, 144, QGPU_LAYOUT_420, 8, "psnr|ciede",
     "version=vmaf_v0.6.1", 0, 2, 1},
    {"psnr + float_ssim, 4:2:2 10-bit, depth 3", 67, 45, QGPU_LAYOUT_422, 10,
     "psnr|float_ssim", NULL, 0, 3, 0},
    {"psnr + ciede, NV12 8-bit (chroma split on the device)", 66, 40, QGPU_LAYOUT_NV12, 8,
     "psnr|ciede", NULL, 0, 2, 0},
    {"psnr, 8-bit widened to 10, depth 1", 48, 32, QGPU_LAYOUT_444, 8, "psnr", NULL, 10, 1,
     0},
    {"motion + psnr, gray 12-bit, pinned", 64, 36, QGPU_LAYOUT_400, 12, "motion|psnr", NULL,
     0, 2, 1},
};

/* A random picture in the case's format (NV12: its Cb Cr pairs written as
 * one plane of twice the width, as the library reads them). */
static int picture_make(TestPicture *t, const StartCase *c)
{
    if (c->layout != QGPU_LAYOUT_NV12) {
        if (test_picture_alloc(t, c->w, c->h, c->layout, c->bitdepth, 0))
            return -1;
        test_picture_random(t);
        return 0;
    }
    /* NV12 from a 4:4:4 allocation of the same size: plane 0 luma, plane 1
     * holds ceil(w/2) pairs a row over ceil(h/2) rows (its rows are w wide,
     * enough for the pairs) */
    if (test_picture_alloc(t, c->w, c->h, QGPU_LAYOUT_444, c->bitdepth, 0))
        return -1;
    test_picture_random(t);
    t->pic.layout = QGPU_LAYOUT_NV12;
    t->pic.data[2] = NULL;
    return 0;
}

/* A copy of a host picture in a pinned block of ctx. */
static int pinned_copy(QgpuContext *ctx, const QgpuPicture *src, QgpuPicture *pic,
                       QgpuPinned **block)
{
    int err = qgpu_pinned_picture_alloc(ctx, src->width, src->height, src->layout,
                                        src->bitdepth, 0, 0, pic, block);
    if (!err)
        test_picture_copy_rows(pic, src);
    return err;
}

/* One pair to ctx, from pinned blocks when asked (dropped right after the
 * submit: the library holds its own references). */
static int submit(QgpuContext *ctx, const QgpuPicture *ref, const QgpuPicture *dist, int pinned)
{
    QgpuPicture pr, pd;
    QgpuPinned *br = NULL, *bd = NULL;
    int err;
    if (!pinned)
        return qgpu_submit(ctx, ref, dist);
    err = pinned_copy(ctx, ref, &pr, &br);
    if (!err)
        err = pinned_copy(ctx, dist, &pd, &bd);
    if (!err)
        err = qgpu_submit_pinned(ctx, &pr, br, &pd, bd);
    qgpu_pinned_unref(&br);
    qgpu_pinned_unref(&bd);
    return err;
}

static QgpuContext *open_case(const StartCase *c)
{
    QgpuContext *ctx = test_open(c->depth);
    if (ctx && !CHECK(test_configure(ctx, c->features, c->model, c->compute_bitdepth) == 0,
                      "%s: configure: %s", c->label, qgpu_last_error(ctx)))
        qgpu_close(&ctx);
    return ctx;
}

/* The same pairs through a context started early and one started by its
 * first submit: the same scores, bit for bit. */
static void test_same_scores_early(const StartCase *c)
{
    TestPicture ref[FRAMES], dist[FRAMES];
    QgpuContext *early = open_case(c), *plain = open_case(c);
    int ok = early && plain;
    memset(ref, 0, sizeof(ref));
    memset(dist, 0, sizeof(dist));
    for (int i = 0; i < FRAMES; i++) /* random samples: scores differ frame to frame */
        ok = !picture_make(&ref[i], c) && !picture_make(&dist[i], c) && ok;
    if (ok && CHECK(qgpu_start(early, c->w, c->h, c->layout, c->bitdepth) == 0,
                    "%s: start: %s", c->label, qgpu_last_error(early))) {
        for (int i = 0; i < FRAMES; i++) {
            CHECK(submit(early, &ref[i].pic, &dist[i].pic, c->pinned) == 0,
                  "%s: early, frame %d: %s", c->label, i, qgpu_last_error(early));
            CHECK(qgpu_submit(plain, &ref[i].pic, &dist[i].pic) == 0,
                  "%s: plain, frame %d: %s", c->label, i, qgpu_last_error(plain));
            test_collect_both(early, plain);
        }
        test_flush_compare(c->label, plain, "first submit", early, "qgpu_start", FRAMES);
    }
    for (int i = 0; i < FRAMES; i++) {
        test_picture_free(&ref[i]);
        test_picture_free(&dist[i]);
    }
    qgpu_close(&early);
    qgpu_close(&plain);
}

/* Refusals, and what they leave behind. */
static void test_refusals(void)
{
    TestPicture a, b, a10, thin;
    QgpuContext *ctx, *plain;
    unsigned frame;
    double v = 0.0, w = 1.0;

    CHECK(qgpu_start(NULL, 64, 48, QGPU_LAYOUT_420, 8) == QGPU_ERR_INVALID_ARG, "NULL context");
    test_picture_alloc(&a, 64, 48, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&b, 64, 48, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&a10, 64, 48, QGPU_LAYOUT_420, 10, 0);
    test_picture_alloc(&thin, 1, 8, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&a);
    test_picture_noisy_copy(&b, &a, 7);
    test_picture_random(&a10);

    /* a format refused up front, a mismatched first submit: still usable */
    if ((ctx = test_open(2))) {
        CHECK(qgpu_start(ctx, 64, 48, QGPU_LAYOUT_420, 8) == QGPU_ERR_STATE, "no feature");
        qgpu_enable_feature(ctx, "psnr");
        CHECK(qgpu_start(ctx, 0, 48, QGPU_LAYOUT_420, 8) == QGPU_ERR_INVALID_ARG, "width 0");
        CHECK(qgpu_start(ctx, 64, 48, 9, 8) == QGPU_ERR_UNSUPPORTED, "layout 9");
        CHECK(qgpu_start(ctx, 64, 48, QGPU_LAYOUT_420, 7) == QGPU_ERR_UNSUPPORTED, "7-bit");
        CHECK(qgpu_start(ctx, 64, 48, QGPU_LAYOUT_420, 8) == 0, "start after refusals: %s",
              qgpu_last_error(ctx));
        CHECK(qgpu_start(ctx, 64, 48, QGPU_LAYOUT_420, 8) == 0, "the same format again");
        CHECK(qgpu_start(ctx, 64, 48, QGPU_LAYOUT_444, 8) == QGPU_ERR_MISMATCH,
              "another format");
        CHECK(qgpu_enable_feature(ctx, "ciede") == QGPU_ERR_STATE, "feature after start");
        CHECK(qgpu_use_model(ctx, "version=vmaf_v0.6.1") == QGPU_ERR_STATE, "model after start");
        CHECK(qgpu_set_compute_bitdepth(ctx, 10) == QGPU_ERR_STATE, "bit depth after start");
        CHECK(qgpu_submit(ctx, &a10.pic, &a10.pic) == QGPU_ERR_MISMATCH,
              "first submit of another depth");
        CHECK(strstr(qgpu_last_error(ctx), "qgpu_start") != NULL,
              "the message names qgpu_start: %s", qgpu_last_error(ctx));
        CHECK(qgpu_frame_count(ctx) == 0, "nothing submitted");
        CHECK(qgpu_submit(ctx, &a.pic, &b.pic) == 0, "a matching submit after the refusal: %s",
              qgpu_last_error(ctx));
        CHECK(qgpu_flush(ctx) == 0, "flush: %s", qgpu_last_error(ctx));
        while (qgpu_collect(ctx, &frame, 1) == 1)
            ;
        CHECK(qgpu_frame_count(ctx) == 1, "one frame: %u", qgpu_frame_count(ctx));
        qgpu_get_score(ctx, 0, "psnr_y", &v);
        if ((plain = test_open(2))) {
            qgpu_enable_feature(plain, "psnr");
            qgpu_submit(plain, &a.pic, &b.pic);
            qgpu_flush(plain);
            while (qgpu_collect(plain, &frame, 1) == 1)
                ;
            qgpu_get_score(plain, 0, "psnr_y", &w);
            CHECK(memcmp(&v, &w, sizeof(v)) == 0, "psnr_y %.17g, without the refusal %.17g", v,
                  w);
            qgpu_close(&plain);
        }
        CHECK(qgpu_start(ctx, 64, 48, QGPU_LAYOUT_420, 8) == QGPU_ERR_STATE, "after flush");
        qgpu_close(&ctx);
    }

    /* a context flushed before it started */
    if ((ctx = test_open(2))) {
        qgpu_enable_feature(ctx, "psnr");
        CHECK(qgpu_flush(ctx) == 0, "flush of nothing");
        CHECK(qgpu_start(ctx, 64, 48, QGPU_LAYOUT_420, 8) == QGPU_ERR_STATE,
              "start after flush");
        qgpu_close(&ctx);
    }

    /* a failing set-up leaves the context failed, as a first submit's */
    if ((ctx = test_open(2))) {
        qgpu_enable_feature(ctx, "psnr");
        CHECK(qgpu_start(ctx, 1, 8, QGPU_LAYOUT_420, 8) == QGPU_ERR_UNSUPPORTED,
              "empty chroma plane");
        CHECK(strstr(qgpu_last_error(ctx), "psnr") != NULL, "message names the metric: %s",
              qgpu_last_error(ctx));
        CHECK(qgpu_submit(ctx, &thin.pic, &thin.pic) == QGPU_ERR_STATE, "context stays failed");
        CHECK(qgpu_start(ctx, 1, 8, QGPU_LAYOUT_420, 8) == QGPU_ERR_STATE, "start again");
        qgpu_close(&ctx);
    }
    if ((ctx = test_open(1))) {
        qgpu_set_compute_bitdepth(ctx, 12);
        qgpu_enable_feature(ctx, "psnr");
        CHECK(qgpu_start(ctx, 64, 48, QGPU_LAYOUT_420, 10) == QGPU_ERR_UNSUPPORTED,
              "widening needs 8-bit input");
        qgpu_close(&ctx);
    }
    test_picture_free(&a);
    test_picture_free(&b);
    test_picture_free(&a10);
    test_picture_free(&thin);
}

int main(void)
{
    test_seed(18);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        test_same_scores_early(&cases[i]);
    test_refusals();
    return test_finish();
}
