/* QGPU_LAYOUT_NV12 (NV12, P010, P016: what hardware decoders output) scored
 * exactly as the same samples in planar 4:2:0: 8, 10, 12 and 16 bits, odd
 * sizes, padded strides, features that read chroma (psnr, ciede) and luma
 * only (then no chroma crosses the bus), widening to 10 bits, pipeline
 * depths; and the errors (mixed layouts, short strides, OpenCL images). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qgpu/qgpu_opencl.h"
#include "test_util.h"

/* A semi-planar copy of a planar 4:2:0 picture, rows padded by `pad`
 * bytes of junk; deeper than 8 bits the words are MSB-aligned. */
typedef struct SemiPlanar {
    QgpuPicture pic;
    unsigned char *luma, *pairs;
} SemiPlanar;

static void put(unsigned char *row, int x, int bps, unsigned v)
{
    if (bps == 2) {
        uint16_t w = (uint16_t)v;
        memcpy(row + 2 * (size_t)x, &w, 2);
    } else {
        row[x] = (unsigned char)v;
    }
}

static int semiplanar_make(SemiPlanar *sp, const QgpuPicture *src, int pad)
{
    int bps = src->bitdepth > 8 ? 2 : 1, shift = src->bitdepth > 8 ? 16 - src->bitdepth : 0;
    int cw = test_plane_w(src, 1), ch = test_plane_h(src, 1);
    ptrdiff_t ls = (ptrdiff_t)src->width * bps + pad, cs = (ptrdiff_t)cw * 2 * bps + pad;

    memset(sp, 0, sizeof(*sp));
    sp->luma = malloc((size_t)ls * src->height);
    sp->pairs = malloc((size_t)cs * ch);
    if (!sp->luma || !sp->pairs)
        return -1;
    memset(sp->luma, 0xa5, (size_t)ls * src->height);
    memset(sp->pairs, 0x5a, (size_t)cs * ch);
    for (int y = 0; y < src->height; y++)
        for (int x = 0; x < src->width; x++)
            put(sp->luma + y * ls, x, bps, test_sample(src, 0, x, y) << shift);
    for (int y = 0; y < ch; y++)
        for (int x = 0; x < cw; x++) {
            put(sp->pairs + y * cs, 2 * x, bps, test_sample(src, 1, x, y) << shift);
            put(sp->pairs + y * cs, 2 * x + 1, bps, test_sample(src, 2, x, y) << shift);
        }
    sp->pic.width = src->width;
    sp->pic.height = src->height;
    sp->pic.layout = QGPU_LAYOUT_NV12;
    sp->pic.bitdepth = src->bitdepth;
    sp->pic.data[0] = sp->luma;
    sp->pic.data[1] = sp->pairs;
    sp->pic.stride[0] = ls;
    sp->pic.stride[1] = cs;
    return 0;
}

static void semiplanar_free(SemiPlanar *sp)
{
    free(sp->luma);
    free(sp->pairs);
    memset(sp, 0, sizeof(*sp));
}

typedef struct Case {
    const char *label;
    int width, height, bitdepth;
    const char *features; /* '|' separated */
    const char *model;    /* or NULL */
    int compute_bitdepth;
    int depth, frames, pad;
    int luma_only;        /* no chroma may be uploaded */
} Case;

static int configure(QgpuContext *ctx, const Case *c)
{
    return test_configure(ctx, c->features, c->model, c->compute_bitdepth);
}

static void run_case(const Case *c)
{
    QgpuContext *planar = test_open(c->depth), *semi = test_open(c->depth);
    TestPicture ref, dist;

    if (!CHECK(planar && semi, "%s: open", c->label) ||
        !CHECK(configure(planar, c) == 0 && configure(semi, c) == 0, "%s: features: %s",
               c->label, qgpu_last_error(semi))) {
        qgpu_close(&planar);
        qgpu_close(&semi);
        return;
    }
    test_seed(0x5E41u + (uint64_t)c->width * 13 + c->bitdepth);
    test_picture_alloc(&ref, c->width, c->height, QGPU_LAYOUT_420, c->bitdepth, 3);
    test_picture_alloc(&dist, c->width, c->height, QGPU_LAYOUT_420, c->bitdepth, 0);
    for (int i = 0; i < c->frames; i++) {
        SemiPlanar r, d;
        test_picture_random(&ref);
        test_picture_noisy_copy(&dist, &ref, 3 + i);
        CHECK(qgpu_submit(planar, &ref.pic, &dist.pic) == 0, "%s: planar submit %d: %s",
              c->label, i, qgpu_last_error(planar));
        if (CHECK(semiplanar_make(&r, &ref.pic, c->pad) == 0 &&
                      semiplanar_make(&d, &dist.pic, i % 2 ? 0 : c->pad) == 0,
                  "out of memory"))
            CHECK(qgpu_submit(semi, &r.pic, &d.pic) == 0, "%s: NV12 submit %d: %s", c->label,
                  i, qgpu_last_error(semi));
        semiplanar_free(&r);
        semiplanar_free(&d);
        test_collect_both(planar, semi);
    }
    test_flush_compare(c->label, planar, "planar", semi, "NV12", (unsigned)c->frames);
    if (c->luma_only)
        CHECK(!semi->split_chroma && semi->upload_bytes == semi->in_fmt.plane_offset[1],
              "%s: luma only: %zu bytes uploaded per picture, the luma is %zu", c->label,
              semi->upload_bytes, semi->in_fmt.plane_offset[1]);
    else
        CHECK(semi->split_chroma && semi->upload_bytes == planar->upload_bytes,
              "%s: chroma split on the device, %zu bytes uploaded (planar %zu)", c->label,
              semi->upload_bytes, planar->upload_bytes);
    test_picture_free(&ref);
    test_picture_free(&dist);
    qgpu_close(&planar);
    qgpu_close(&semi);
}

static const Case cases[] = {
    {"NV12 psnr + ciede + ssim", 96, 64, 8, "psnr|ciede|float_ssim", NULL, 0, 2, 4, 8, 0},
    {"NV12 odd size, depth 1", 67, 45, 8, "psnr|ciede", NULL, 0, 1, 3, 0, 0},
    {"P010 psnr + ciede + vmaf", 80, 48, 10, "psnr|ciede", "version=vmaf_v0.6.1", 0, 3, 5, 6,
     0},
    {"P010 odd size", 33, 17, 10, "psnr", NULL, 0, 2, 3, 2, 0},
    {"P012", 64, 40, 12, "psnr|ciede", NULL, 0, 2, 3, 0, 0},
    {"P016", 64, 40, 16, "psnr", NULL, 0, 2, 3, 4, 0},
    {"NV12 luma only (vmaf)", 96, 64, 8, "motion", "version=vmaf_v0.6.1", 0, 2, 4, 8, 1},
    {"P010 luma only (vif, motion)", 96, 64, 10, "vif|motion", NULL, 0, 2, 4, 0, 1},
    {"NV12 scored at 10 bits (widening)", 96, 64, 8, "psnr|vif", NULL, 10, 2, 4, 2, 0},
};

static void test_errors(void)
{
    QgpuContext *ctx = test_open(2);
    TestPicture planar;
    SemiPlanar semi;
    int err;

    if (!CHECK(ctx != NULL, "open"))
        return;
    CHECK(qgpu_enable_feature(ctx, "psnr") == 0, "psnr");
    test_picture_alloc(&planar, 32, 16, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&planar);
    if (!CHECK(semiplanar_make(&semi, &planar.pic, 0) == 0, "out of memory")) {
        test_picture_free(&planar);
        qgpu_close(&ctx);
        return;
    }
    err = qgpu_submit(ctx, &semi.pic, &planar.pic);
    CHECK(err == QGPU_ERR_MISMATCH && strstr(qgpu_last_error(ctx), "NV12"),
          "NV12 against planar: %d %s", err, qgpu_last_error(ctx));
    semi.pic.stride[1] = 32; /* 16 pairs need 32 bytes: fine */
    semi.pic.stride[0] = 31;
    err = qgpu_submit(ctx, &semi.pic, &semi.pic);
    CHECK(err == QGPU_ERR_INVALID_ARG, "short luma stride: %d %s", err, qgpu_last_error(ctx));
    semi.pic.stride[0] = 32;
    semi.pic.stride[1] = 31;
    err = qgpu_submit(ctx, &semi.pic, &semi.pic);
    CHECK(err == QGPU_ERR_INVALID_ARG && strstr(qgpu_last_error(ctx), "plane 1"),
          "short pair stride: %d %s", err, qgpu_last_error(ctx));
    semi.pic.stride[1] = 32;
    semi.pic.data[2] = NULL;
    err = qgpu_submit(ctx, &semi.pic, &semi.pic);
    CHECK(err == 0, "no third plane needed: %s", qgpu_last_error(ctx));
    err = qgpu_submit(ctx, &planar.pic, &planar.pic);
    CHECK(err == QGPU_ERR_MISMATCH && strstr(qgpu_last_error(ctx), "started as"),
          "planar after an NV12 stream: %d %s", err, qgpu_last_error(ctx));
    {
        /* NV12 OpenCL pictures are two images (test_external scores them);
         * without them the call says which plane is missing */
        QgpuCLPicture cl;
        memset(&cl, 0, sizeof(cl));
        cl.width = 32;
        cl.height = 16;
        cl.layout = QGPU_LAYOUT_NV12;
        cl.bitdepth = 8;
        err = qgpu_submit_cl(ctx, &cl, &cl);
        CHECK(err == QGPU_ERR_INVALID_ARG && strstr(qgpu_last_error(ctx), "luma plane is NULL"),
              "NV12 OpenCL picture without images: %d %s", err, qgpu_last_error(ctx));
    }
    semiplanar_free(&semi);
    test_picture_free(&planar);
    qgpu_close(&ctx);
}

int main(void)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
    test_errors();
    return test_finish();
}
