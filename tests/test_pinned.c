/* Pictures in pinned blocks (qgpu_pinned_*, qgpu_submit_pinned) scored bit
 * for bit as the same samples through qgpu_submit(): 8, 10 and 12 bits,
 * 4:2:0, 4:2:2, 4:4:4, gray and NV12/P010, widening to 10 bits, strides
 * padded to an alignment or to any byte count (rows written as
 * rectangles), both pictures in one block, pictures released right after
 * the submit or kept and reused across many frames, a stream mixing both
 * submits; and the refusals (no block, a block of another context, planes
 * outside the block, a wrong geometry, bad allocation arguments). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "test_util.h"

/* How a case holds its pinned pictures. */
enum {
    FRESH,  /* a new block per picture, released right after the submit */
    REUSE,  /* a ring of 2 blocks per input, rewritten once the library let go */
    MANUAL, /* one block per frame holding both pictures at odd strides */
};

typedef struct Case {
    const char *label;
    int width, height, layout, bitdepth;
    const char *features; /* '|' separated */
    const char *model;    /* or NULL */
    int compute_bitdepth;
    int depth, frames;
    int hold;             /* FRESH, REUSE or MANUAL */
    int align;            /* qgpu_pinned_picture_alloc's; MANUAL: bytes added to rows */
    int mixed;            /* odd frames through qgpu_submit() */
} Case;

static void put(unsigned char *row, int x, int bps, unsigned v)
{
    if (bps == 2) {
        uint16_t w = (uint16_t)v;
        memcpy(row + 2 * (size_t)x, &w, 2);
    } else {
        row[x] = (unsigned char)v;
    }
}

/* Writes the samples of a planar picture into dst (same geometry; NV12:
 * pairs interleaved and, deeper than 8 bits, MSB-aligned words). */
static void fill(QgpuPicture *dst, const QgpuPicture *src)
{
    int bps = src->bitdepth > 8 ? 2 : 1;
    if (dst->layout == QGPU_LAYOUT_NV12) {
        int shift = bps == 2 ? 16 - src->bitdepth : 0;
        unsigned char *luma = (unsigned char *)dst->data[0];
        unsigned char *pairs = (unsigned char *)dst->data[1];
        for (int y = 0; y < src->height; y++)
            for (int x = 0; x < src->width; x++)
                put(luma + y * dst->stride[0], x, bps, test_sample(src, 0, x, y) << shift);
        for (int y = 0; y < test_plane_h(src, 1); y++)
            for (int x = 0; x < test_plane_w(src, 1); x++) {
                put(pairs + y * dst->stride[1], 2 * x, bps, test_sample(src, 1, x, y) << shift);
                put(pairs + y * dst->stride[1], 2 * x + 1, bps,
                    test_sample(src, 2, x, y) << shift);
            }
        return;
    }
    test_picture_copy_rows(dst, src);
}

/* A new block holding one picture, its padding filled with junk. */
static int pinned_picture(QgpuContext *ctx, const Case *c, QgpuPicture *pic, QgpuPinned **block)
{
    int err = qgpu_pinned_picture_alloc(ctx, c->width, c->height, c->layout, c->bitdepth,
                                        c->align, 64, pic, block);
    if (!err)
        memset(qgpu_pinned_data(*block), 0xa5, qgpu_pinned_size(*block));
    return err;
}

/* MANUAL: both pictures in one block, rows `extra` bytes longer than
 * needed (any count: not a multiple of anything), planes back to back. */
static int manual_pair(QgpuContext *ctx, const Case *c, QgpuPicture pics[2], QgpuPinned **block)
{
    size_t offset = 0, plane_offset[2][3] = {{0}};
    unsigned char *base;
    int err;
    for (int i = 0; i < 2; i++) {
        memset(&pics[i], 0, sizeof(pics[i]));
        pics[i].width = c->width;
        pics[i].height = c->height;
        pics[i].layout = c->layout;
        pics[i].bitdepth = c->bitdepth;
        for (int p = 0; p < test_plane_count(c->layout); p++) {
            pics[i].stride[p] = (ptrdiff_t)(test_row_bytes(&pics[i], p) + (size_t)c->align);
            plane_offset[i][p] = offset;
            offset += (size_t)pics[i].stride[p] * test_plane_rows(&pics[i], p);
        }
    }
    err = qgpu_pinned_alloc(ctx, offset + 7, block);
    if (err)
        return err;
    base = qgpu_pinned_data(*block);
    memset(base, 0x5a, offset + 7);
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < test_plane_count(c->layout); p++)
            pics[i].data[p] = base + 7 + plane_offset[i][p]; /* 7: odd addresses */
    return 0;
}

/* Waits until the library no longer reads the block (collecting frames). */
static void wait_free(QgpuContext *ctx, const QgpuPinned *block)
{
    unsigned frame;
    while (qgpu_pinned_in_use(block) && qgpu_collect(ctx, &frame, 1) == 1)
        ;
}

static void run_case(const Case *c)
{
    QgpuContext *host = test_open(c->depth), *pinned = test_open(c->depth);
    int planar_layout = c->layout == QGPU_LAYOUT_NV12 ? QGPU_LAYOUT_420 : c->layout;
    QgpuPinned *ring[2][2] = {{NULL}};
    QgpuPicture ring_pic[2][2];
    TestPicture ref, dist;
    unsigned from_pinned = 0;

    if (!CHECK(host && pinned, "%s: open", c->label) ||
        !CHECK(test_configure(host, c->features, c->model, c->compute_bitdepth) == 0 &&
                   test_configure(pinned, c->features, c->model, c->compute_bitdepth) == 0,
               "%s: features: %s", c->label, qgpu_last_error(pinned))) {
        qgpu_close(&host);
        qgpu_close(&pinned);
        return;
    }
    test_seed(0x9133u + (uint64_t)c->width * 7 + (uint64_t)c->bitdepth * 31 + c->layout);
    test_picture_alloc(&ref, c->width, c->height, planar_layout, c->bitdepth, 5);
    test_picture_alloc(&dist, c->width, c->height, planar_layout, c->bitdepth, 0);
    for (int i = 0; i < c->frames; i++) {
        QgpuPicture pics[2];
        QgpuPinned *blocks[2] = {NULL, NULL}, *pair = NULL;
        int err = 0;

        test_picture_random(&ref);
        test_picture_noisy_copy(&dist, &ref, 2 + i % 5);
        CHECK(qgpu_submit(host, &ref.pic, &dist.pic) == 0, "%s: host submit %d: %s", c->label,
              i, qgpu_last_error(host));
        if (c->mixed && i % 2) {
            /* the other path in the same stream (planar cases only) */
            CHECK(qgpu_submit(pinned, &ref.pic, &dist.pic) == 0, "%s: submit %d: %s",
                  c->label, i, qgpu_last_error(pinned));
            goto collect;
        }
        if (c->hold == MANUAL) {
            err = manual_pair(pinned, c, pics, &pair);
            blocks[0] = blocks[1] = pair;
        } else if (c->hold == REUSE) {
            for (int k = 0; k < 2 && !err; k++) {
                QgpuPinned **slot = &ring[k][i % 2];
                if (!*slot)
                    err = pinned_picture(pinned, c, &ring_pic[k][i % 2], slot);
                else
                    wait_free(pinned, *slot);
                if (!err && !CHECK(!qgpu_pinned_in_use(*slot), "%s: frame %d: block still in "
                                   "use after the frames were collected", c->label, i))
                    err = -1;
                pics[k] = ring_pic[k][i % 2];
                blocks[k] = *slot;
            }
        } else {
            err = pinned_picture(pinned, c, &pics[0], &blocks[0]);
            if (!err)
                err = pinned_picture(pinned, c, &pics[1], &blocks[1]);
        }
        if (!CHECK(err == 0, "%s: frame %d: pinned pictures: %s", c->label, i,
                   qgpu_last_error(pinned))) {
            if (c->hold != REUSE) {
                qgpu_pinned_unref(&blocks[0]);
                qgpu_pinned_unref(&blocks[1]);
            }
            qgpu_pinned_unref(&pair);
            break;
        }
        fill(&pics[0], &ref.pic);
        fill(&pics[1], &dist.pic);
        CHECK(qgpu_submit_pinned(pinned, &pics[0], blocks[0], &pics[1], blocks[1]) == 0,
              "%s: pinned submit %d: %s", c->label, i, qgpu_last_error(pinned));
        from_pinned++;
        if (c->hold == FRESH) {
            /* released at once: the library holds them until read */
            qgpu_pinned_unref(&blocks[0]);
            qgpu_pinned_unref(&blocks[1]);
        } else if (c->hold == MANUAL) {
            qgpu_pinned_unref(&pair);
        }
    collect:
        test_collect_both(host, pinned);
    }
    test_flush_compare(c->label, host, "host", pinned, "pinned", (unsigned)c->frames);
    CHECK(pinned->frames_from_pinned == from_pinned &&
              pinned->frames_from_host == (unsigned)c->frames - from_pinned,
          "%s: %u frames from pinned blocks and %u from host memory, expected %u and %u",
          c->label, pinned->frames_from_pinned, pinned->frames_from_host, from_pinned,
          (unsigned)c->frames - from_pinned);
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 2; j++) {
            CHECK(!ring[k][j] || !qgpu_pinned_in_use(ring[k][j]),
                  "%s: a block is in use after the stream's end", c->label);
            qgpu_pinned_unref(&ring[k][j]);
        }
    test_picture_free(&ref);
    test_picture_free(&dist);
    qgpu_close(&host);
    qgpu_close(&pinned);
}

static const Case cases[] = {
    {"420 8-bit psnr, fresh blocks", 96, 64, QGPU_LAYOUT_420, 8, "psnr", NULL, 0, 2, 5, FRESH,
     0, 0},
    {"420 8-bit vmaf + psnr, reused blocks", 80, 48, QGPU_LAYOUT_420, 8, "psnr",
     "version=vmaf_v0.6.1", 0, 3, 12, REUSE, 0, 0},
    {"420 8-bit packed planes (one write a picture)", 64, 40, QGPU_LAYOUT_420, 8,
     "psnr|ciede", NULL, 0, 2, 4, FRESH, 1, 0},
    {"444 10-bit packed planes, reused", 32, 24, QGPU_LAYOUT_444, 10, "psnr", NULL, 0, 3, 8,
     REUSE, 1, 0},
    {"420 odd size, rows padded to 256", 67, 45, QGPU_LAYOUT_420, 8, "psnr|ciede", NULL, 0, 2,
     4, FRESH, 256, 0},
    {"420 8-bit, odd strides, one block", 66, 40, QGPU_LAYOUT_420, 8, "psnr|float_ssim",
     NULL, 0, 2, 4, MANUAL, 3, 0},
    {"420 10-bit psnr + vmaf, reused", 64, 48, QGPU_LAYOUT_420, 10, "psnr",
     "version=vmaf_v0.6.1", 0, 2, 10, REUSE, 32, 0},
    {"420 10-bit, odd strides", 50, 34, QGPU_LAYOUT_420, 10, "psnr|ciede", NULL, 0, 1, 3,
     MANUAL, 5, 0},
    {"444 8-bit ciede", 48, 32, QGPU_LAYOUT_444, 8, "psnr|ciede", NULL, 0, 2, 3, FRESH, 0, 0},
    {"444 10-bit, padded rows", 40, 24, QGPU_LAYOUT_444, 10, "psnr", NULL, 0, 2, 3, FRESH,
     128, 0},
    {"422 12-bit", 40, 24, QGPU_LAYOUT_422, 12, "psnr", NULL, 0, 2, 3, FRESH, 0, 0},
    {"400 8-bit vif + motion", 64, 48, QGPU_LAYOUT_400, 8, "vif|motion", NULL, 0, 2, 4,
     MANUAL, 1, 0},
    {"420 8-bit scored at 10 bits (widening)", 64, 40, QGPU_LAYOUT_420, 8, "psnr|vif", NULL,
     10, 2, 4, REUSE, 0, 0},
    {"NV12 psnr + ciede (split on the device)", 66, 42, QGPU_LAYOUT_NV12, 8, "psnr|ciede",
     NULL, 0, 2, 4, FRESH, 0, 0},
    {"NV12 odd strides", 48, 32, QGPU_LAYOUT_NV12, 8, "psnr", NULL, 0, 2, 3, MANUAL, 3, 0},
    {"P010 psnr + vmaf", 64, 40, QGPU_LAYOUT_NV12, 10, "psnr", "version=vmaf_v0.6.1", 0, 2,
     4, REUSE, 0, 0},
    {"P010 luma only (vmaf)", 64, 40, QGPU_LAYOUT_NV12, 10, NULL, "version=vmaf_v0.6.1", 0,
     2, 4, FRESH, 0, 0},
    {"a stream mixing qgpu_submit and pinned", 64, 40, QGPU_LAYOUT_420, 8, "psnr|motion",
     NULL, 0, 2, 6, FRESH, 0, 1},
};

static void *unref_many(void *arg)
{
    QgpuPinned *block = arg;
    for (int i = 0; i < 10000; i++) {
        QgpuPinned *ref = qgpu_pinned_ref(block);
        qgpu_pinned_unref(&ref);
    }
    return NULL;
}

/* References dropped from other threads, and a block outliving its
 * context. */
static void test_lifetime(void)
{
    QgpuContext *ctx = test_open(2);
    QgpuPinned *block = NULL, *mine;
    pthread_t threads[4];
    int started = 0;

    if (!CHECK(ctx != NULL, "open") ||
        !CHECK(qgpu_pinned_alloc(ctx, 4096, &block) == 0, "alloc: %s", qgpu_last_error(ctx))) {
        qgpu_close(&ctx);
        return;
    }
    CHECK(qgpu_pinned_size(block) == 4096 && ((uintptr_t)qgpu_pinned_data(block) & 63) == 0,
          "a block of %zu bytes at %p", qgpu_pinned_size(block), qgpu_pinned_data(block));
    for (int i = 0; i < 4; i++)
        started += pthread_create(&threads[i], NULL, unref_many, block) == 0;
    for (int i = 0; i < 4 && i < started; i++)
        pthread_join(threads[i], NULL);
    CHECK(started == 4, "threads");
    mine = qgpu_pinned_ref(block);
    qgpu_close(&ctx);
    /* the context is gone: the block's memory is still the caller's */
    memset(qgpu_pinned_data(mine), 1, 4096);
    CHECK(((unsigned char *)qgpu_pinned_data(mine))[4095] == 1, "block after close");
    CHECK(!qgpu_pinned_in_use(mine), "in use without a submit");
    qgpu_pinned_unref(&block);
    qgpu_pinned_unref(&mine);
    CHECK(!block && !mine, "unref clears the pointer");
    qgpu_pinned_unref(&mine); /* NULL-safe */
}

static void test_errors(void)
{
    QgpuContext *ctx = test_open(2), *other = test_open(2);
    QgpuPicture a, b, small, theirs;
    QgpuPinned *ba = NULL, *bb = NULL, *bsmall = NULL, *btheirs = NULL, *none = NULL;
    int err;

    if (!CHECK(ctx && other, "open") || !CHECK(qgpu_enable_feature(ctx, "psnr") == 0, "psnr"))
        goto out;
    err = qgpu_pinned_alloc(ctx, 0, &none);
    CHECK(err == QGPU_ERR_INVALID_ARG && !none, "size 0: %d", err);
    err = qgpu_pinned_picture_alloc(ctx, 32, 16, QGPU_LAYOUT_420, 8, 3, 0, &a, &none);
    CHECK(err == QGPU_ERR_INVALID_ARG && !none, "align 3: %d %s", err, qgpu_last_error(ctx));
    err = qgpu_pinned_picture_alloc(ctx, 32, 16, 9, 8, 0, 0, &a, &none);
    CHECK(err == QGPU_ERR_UNSUPPORTED && !none, "layout 9: %d", err);
    err = qgpu_pinned_picture_alloc(ctx, 32, 16, QGPU_LAYOUT_420, 17, 0, 0, &a, &none);
    CHECK(err == QGPU_ERR_UNSUPPORTED && !none, "17 bits: %d", err);
    err = qgpu_pinned_picture_alloc(ctx, 0, 16, QGPU_LAYOUT_420, 8, 0, 0, &a, &none);
    CHECK(err == QGPU_ERR_INVALID_ARG && !none, "width 0: %d", err);

    if (!CHECK(qgpu_pinned_picture_alloc(ctx, 64, 32, QGPU_LAYOUT_420, 8, 0, 0, &a, &ba) == 0 &&
                   qgpu_pinned_picture_alloc(ctx, 64, 32, QGPU_LAYOUT_420, 8, 0, 0, &b, &bb) == 0 &&
                   qgpu_pinned_picture_alloc(ctx, 32, 16, QGPU_LAYOUT_420, 8, 0, 0, &small,
                                             &bsmall) == 0 &&
                   qgpu_pinned_picture_alloc(other, 64, 32, QGPU_LAYOUT_420, 8, 0, 0, &theirs,
                                             &btheirs) == 0,
               "pictures: %s", qgpu_last_error(ctx)))
        goto out;
    memset(qgpu_pinned_data(ba), 10, qgpu_pinned_size(ba));
    memset(qgpu_pinned_data(bb), 12, qgpu_pinned_size(bb));
    memset(qgpu_pinned_data(btheirs), 12, qgpu_pinned_size(btheirs));
    memset(qgpu_pinned_data(bsmall), 12, qgpu_pinned_size(bsmall));

    err = qgpu_submit_pinned(ctx, &a, ba, &b, NULL);
    CHECK(err == QGPU_ERR_INVALID_ARG && strstr(qgpu_last_error(ctx), "no pinned block"),
          "no block: %d %s", err, qgpu_last_error(ctx));
    err = qgpu_submit_pinned(ctx, &a, ba, &theirs, btheirs);
    CHECK(err == QGPU_ERR_INVALID_ARG && strstr(qgpu_last_error(ctx), "another OpenCL context"),
          "block of another context: %d %s", err, qgpu_last_error(ctx));
    err = qgpu_submit_pinned(ctx, &a, ba, &b, ba);
    CHECK(err == QGPU_ERR_INVALID_ARG && strstr(qgpu_last_error(ctx), "plane 0 is not inside"),
          "plane outside its block: %d %s", err, qgpu_last_error(ctx));
    {
        /* the last row of a plane past the block's end */
        QgpuPicture tall = b;
        tall.stride[2] = tall.stride[2] * 4;
        err = qgpu_submit_pinned(ctx, &a, ba, &tall, bb);
        CHECK(err == QGPU_ERR_INVALID_ARG && strstr(qgpu_last_error(ctx), "plane 2"),
              "plane running past the block: %d %s", err, qgpu_last_error(ctx));
    }
    err = qgpu_submit_pinned(ctx, &a, ba, &small, bsmall);
    CHECK(err == QGPU_ERR_MISMATCH, "pair of two sizes: %d %s", err, qgpu_last_error(ctx));
    err = qgpu_submit_pinned(ctx, &a, ba, &b, bb);
    CHECK(err == 0, "a good pair after the refusals: %s", qgpu_last_error(ctx));
    err = qgpu_submit_pinned(ctx, &small, bsmall, &small, bsmall);
    CHECK(err == QGPU_ERR_MISMATCH && strstr(qgpu_last_error(ctx), "started as"),
          "a size other than the stream's: %d %s", err, qgpu_last_error(ctx));
    CHECK(qgpu_flush(ctx) == 0, "flush: %s", qgpu_last_error(ctx));
    {
        unsigned frame;
        double v = 0;
        while (qgpu_collect(ctx, &frame, 1) == 1)
            ;
        CHECK(qgpu_frame_count(ctx) == 1 && qgpu_get_score(ctx, 0, "psnr_y", &v) == 0,
              "one frame scored");
        CHECK(!qgpu_pinned_in_use(ba) && !qgpu_pinned_in_use(bb), "released after collect");
    }
    err = qgpu_submit_pinned(ctx, &a, ba, &b, bb);
    CHECK(err == QGPU_ERR_STATE, "submit after flush: %d", err);
    CHECK(qgpu_submit_pinned(NULL, &a, ba, &b, bb) == QGPU_ERR_INVALID_ARG, "NULL context");
out:
    qgpu_pinned_unref(&ba);
    qgpu_pinned_unref(&bb);
    qgpu_pinned_unref(&bsmall);
    qgpu_pinned_unref(&btheirs);
    qgpu_close(&ctx);
    qgpu_close(&other);
}

int main(void)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
    test_lifetime();
    test_errors();
    return test_finish();
}
