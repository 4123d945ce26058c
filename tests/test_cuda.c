/* qgpu_cuda.h: pictures in CUDA memory.
 *
 * 1. Everywhere (PoCL in CI): the refusals a caller falls back on. Without
 *    a CUDA driver qgpu_cuda_available and qgpu_cuda_ring_create answer
 *    QGPU_ERR_UNSUPPORTED with a reason; QGPU_HWDEC_ZERO_COPY=0 refuses
 *    whatever the driver; bad arguments are refused; NULLs are safe.
 * 2. Where CUDA and cl_khr_external_memory_opaque_fd exist (the NVIDIA
 *    machine; elsewhere it says why it is skipped): pictures written into
 *    CUDA memory at padded pitches (NV12, P010 of odd size, planar 10-bit,
 *    gray), copied into a ring, scored with qgpu_submit_cuda on a context
 *    of the library's own, give bit-identical scores to qgpu_submit() of
 *    the same bytes from host memory; qgpu_cuda_frame_to_host gives the
 *    bytes back; a full ring, a picture that does not fit, a second
 *    context and a reset behave as documented. Copies only queued
 *    (qgpu_cuda_ring_take_async): the pictures' CUDA memory overwritten
 *    right after each take (on the same stream) and again when the
 *    library hands a picture back (done) changes no score; at most
 *    QGPU_CUDA_HELD pictures are held, handed back oldest first, every
 *    one by qgpu_cuda_ring_free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "qgpu/qgpu_cuda.h"
#include "qgpu/qgpu_opencl.h"
#include "test_util.h"

/* ---- part 1: refusals ---- */

static void test_refusals(void)
{
    QgpuCudaPicture pic = {64, 48, QGPU_LAYOUT_NV12, 8, {0}, {0}, (void *)1, NULL};
    QgpuCudaRing *ring = NULL;
    QgpuCudaFrame *frame = NULL;
    char why[256] = "", err[256] = "";
    int ret;

    CHECK(qgpu_cuda_ring_create(NULL, &pic, 4, err, sizeof(err)) == QGPU_ERR_INVALID_ARG,
          "ring_create without ring pointer");
    CHECK(qgpu_cuda_ring_create(&ring, &pic, 0, err, sizeof(err)) == QGPU_ERR_INVALID_ARG &&
              !ring, "ring_create with 0 slots");
    CHECK(qgpu_cuda_ring_take(NULL, &pic, &frame) == QGPU_ERR_INVALID_ARG && !frame,
          "take without ring");
    CHECK(qgpu_submit_cuda(NULL, NULL, NULL) == QGPU_ERR_INVALID_ARG, "submit without context");
    CHECK(!strcmp(qgpu_cuda_ring_error(NULL), ""), "error of no ring");
    CHECK(qgpu_cuda_ring_reset(NULL) == 0, "reset of no ring");
    CHECK(!qgpu_cuda_ring_fits(NULL, &pic), "no ring fits nothing");
    qgpu_cuda_frame_release(&frame);
    qgpu_cuda_ring_free(&ring);
    qgpu_cuda_ring_free(NULL);

    setenv("QGPU_HWDEC_ZERO_COPY", "0", 1);
    CHECK(qgpu_cuda_available(why, sizeof(why)) == QGPU_ERR_UNSUPPORTED &&
              strstr(why, "QGPU_HWDEC_ZERO_COPY=0"), "QGPU_HWDEC_ZERO_COPY=0 refuses: '%s'", why);
    CHECK(qgpu_cuda_ring_create(&ring, &pic, 4, err, sizeof(err)) == QGPU_ERR_UNSUPPORTED &&
              !ring && strstr(err, "QGPU_HWDEC_ZERO_COPY=0"),
          "no ring with QGPU_HWDEC_ZERO_COPY=0: '%s'", err);
    unsetenv("QGPU_HWDEC_ZERO_COPY");

    ret = qgpu_cuda_available(why, sizeof(why));
    if (ret < 0) {
        CHECK(ret == QGPU_ERR_UNSUPPORTED && *why, "unavailable, with a reason: '%s'", why);
        CHECK(qgpu_cuda_ring_create(&ring, &pic, 4, err, sizeof(err)) == QGPU_ERR_UNSUPPORTED &&
                  !ring && !strcmp(err, why), "no ring without CUDA: '%s'", err);
        CHECK(qgpu_cuda_available(NULL, 0) == QGPU_ERR_UNSUPPORTED, "why may be NULL");
    }
}

/* ---- part 2: scores from CUDA memory ---- */

/* One picture in CUDA memory: planes at padded pitches in one allocation,
 * and the same bytes in host memory (test_block_make: the first plane at
 * byte 256, 512 bytes between planes). */
typedef struct CudaPic {
    CudaExportable mem;
    TestBlock b;
} CudaPic;

static int cuda_pic_make(const CudaApi *cu, CudaPic *c, const QgpuPicture *src, int nv12,
                         int pad)
{
    char err[256];

    if (!CHECK(test_block_make(&c->b, src, nv12, pad, 256, 512) == 0, "malloc"))
        return -1;
    if (!CHECK(qgpu_cuda_alloc_exportable(cu, c->b.size, &c->mem, err, sizeof(err)) == 0,
               "CUDA allocation: %s", err))
        return -1;
    if (!CHECK(qgpu_cuda_copy_2d(cu, c->mem.ptr, NULL, c->b.size, 0, c->b.data, c->b.size,
                                 c->b.size, 1, NULL) == 0 && cu->cuStreamSynchronize(NULL) == 0,
               "CUDA writes the picture"))
        return -1;
    return 0;
}

static void cuda_pic_free(const CudaApi *cu, CudaPic *c)
{
    qgpu_cuda_free_exportable(cu, &c->mem);
    test_block_free(&c->b);
    memset(c, 0, sizeof(*c));
    c->mem.fd = -1;
}

static void cuda_pic_describe(const CudaPic *c, const QgpuPicture *src, int nv12, CUcontext cuctx,
                              QgpuCudaPicture *pic, QgpuPicture *host)
{
    test_block_picture(&c->b, src, nv12, host);
    memset(pic, 0, sizeof(*pic));
    pic->width = host->width;
    pic->height = host->height;
    pic->layout = host->layout;
    pic->bitdepth = host->bitdepth;
    for (int p = 0; p < c->b.planes; p++) {
        pic->plane[p] = c->mem.ptr + c->b.offset[p];
        pic->pitch[p] = c->b.pitch[p];
    }
    pic->cuda_context = cuctx;
}

/* The frame's bytes back in host memory are the picture's (src: the
 * planar picture cuda_pic_make wrote, for the planes' sizes). */
static void check_to_host(const QgpuCudaFrame *frame, const CudaPic *c, const QgpuPicture *src,
                          int nv12, const char *label)
{
    int bps = src->bitdepth > 8 ? 2 : 1;
    unsigned char *back[3] = {NULL, NULL, NULL};
    void *data[3] = {NULL, NULL, NULL};
    size_t pitch[3] = {0, 0, 0}, row[3] = {0, 0, 0};
    int same = 1;

    for (int p = 0; p < c->b.planes; p++) {
        row[p] = (size_t)test_plane_w(src, p) * bps * (nv12 && p ? 2 : 1);
        pitch[p] = row[p] + 8;
        data[p] = back[p] = calloc((size_t)test_plane_h(src, p), pitch[p]);
        if (!back[p])
            same = 0;
    }
    if (CHECK(same && qgpu_cuda_frame_to_host(frame, data, pitch) == 0, "%s: to_host", label))
        for (int p = 0; p < c->b.planes; p++)
            for (int y = 0; y < test_plane_h(src, p); y++)
                same &= !memcmp(back[p] + (size_t)y * pitch[p],
                                c->b.data + c->b.offset[p] + (size_t)y * c->b.pitch[p], row[p]);
    CHECK(same, "%s: the frame's bytes come back to the host unchanged", label);
    for (int p = 0; p < 3; p++)
        free(back[p]);
}

typedef struct Case {
    const char *label;
    int width, height, layout, bitdepth, nv12;
    const char *features;
    int frames, pad;
} Case;

static const Case cases[] = {
    {"NV12 1080p", 1920, 1080, QGPU_LAYOUT_420, 8, 1, "psnr|vif|motion|ciede", 4, 128},
    {"P010 odd size", 67, 45, QGPU_LAYOUT_420, 10, 1, "psnr|ciede|float_ssim", 3, 6},
    {"planar 4:2:0 10-bit", 70, 50, QGPU_LAYOUT_420, 10, 0, "psnr|vif", 3, 10},
    {"gray 8-bit", 80, 40, QGPU_LAYOUT_400, 8, 0, "psnr|motion", 3, 0},
};

/* One case: `frames` pairs through host memory and through the ring.
 * 0, or -1 when the import is not supported here (said). */
static int run_case(const CudaApi *cu, CUcontext cuctx, const Case *c)
{
    QgpuContext *host = test_open(2), *dev = test_open(2);
    QgpuCudaRing *ring = NULL;
    char err[512] = "";
    int ok = 1, skipped = 0;

    if (!CHECK(host && dev, "%s: open", c->label))
        goto out;
    test_configure(host, c->features, NULL, 0);
    test_configure(dev, c->features, NULL, 0);
    for (int f = 0; f < c->frames && ok; f++) {
        TestPicture r, d;
        CudaPic cp[2];
        QgpuCudaPicture pic[2];
        QgpuPicture hp[2];
        QgpuCudaFrame *frame[2] = {NULL, NULL};
        int ret;

        memset(cp, 0, sizeof(cp));
        cp[0].mem.fd = cp[1].mem.fd = -1;
        test_picture_alloc(&r, c->width, c->height, c->layout, c->bitdepth, 0);
        test_picture_alloc(&d, c->width, c->height, c->layout, c->bitdepth, 0);
        test_picture_random(&r);
        test_picture_noisy_copy(&d, &r, 3 + f);
        ok = cuda_pic_make(cu, &cp[0], &r.pic, c->nv12, c->pad) == 0 &&
             cuda_pic_make(cu, &cp[1], &d.pic, c->nv12, c->pad) == 0;
        for (int i = 0; i < 2 && ok; i++)
            cuda_pic_describe(&cp[i], i ? &d.pic : &r.pic, c->nv12, cuctx, &pic[i], &hp[i]);
        if (ok && !ring)
            ok = CHECK(qgpu_cuda_ring_create(&ring, &pic[0], 2, err, sizeof(err)) == 0,
                       "%s: ring: %s", c->label, err);
        for (int i = 0; i < 2 && ok; i++)
            ok = CHECK(qgpu_cuda_ring_take(ring, &pic[i], &frame[i]) == 1,
                       "%s: take %d: %s", c->label, i, qgpu_cuda_ring_error(ring));
        if (ok && f == 0) {
            QgpuCudaFrame *none = NULL;
            QgpuCudaPicture other = pic[0];
            CHECK(qgpu_cuda_ring_take(ring, &pic[0], &none) == 0 && !none,
                  "%s: a full ring takes nothing", c->label);
            other.width--;
            CHECK(!qgpu_cuda_ring_fits(ring, &other), "%s: another size does not fit", c->label);
            check_to_host(frame[1], &cp[1], &d.pic, c->nv12, c->label);
        }
        if (ok) {
            ret = qgpu_submit_cuda(dev, frame[0], frame[1]);
            if (ret == QGPU_ERR_UNSUPPORTED) {
                printf("test_cuda: CUDA part skipped: %s\n", qgpu_last_error(dev));
                skipped = 1;
                ok = 0;
            } else {
                ok = CHECK(ret == 0, "%s: submit_cuda %d: %s", c->label, f,
                           qgpu_last_error(dev)) &&
                     CHECK(qgpu_submit(host, &hp[0], &hp[1]) == 0, "%s: submit %d: %s",
                           c->label, f, qgpu_last_error(host));
            }
        }
        qgpu_cuda_frame_release(&frame[0]);
        qgpu_cuda_frame_release(&frame[1]);
        cuda_pic_free(cu, &cp[0]);
        cuda_pic_free(cu, &cp[1]);
        test_picture_free(&r);
        test_picture_free(&d);
        test_collect_both(host, dev);
    }
    if (ok) {
        test_flush_compare(c->label, host, "host", dev, "CUDA", (unsigned)c->frames);
        CHECK(qgpu_frames_from_device(dev) == (unsigned)c->frames,
              "%s: every pair from the GPU (%u)", c->label, qgpu_frames_from_device(dev));
    }
out:
    qgpu_close(&host);
    qgpu_close(&dev); /* releases the imports, before their memory goes */
    qgpu_cuda_ring_free(&ring);
    return skipped ? -1 : 0;
}

/* Imports belong to one context: another is refused until a reset. */
static void test_second_context(const CudaApi *cu, CUcontext cuctx)
{
    TestPicture r;
    CudaPic cp;
    QgpuCudaPicture pic;
    QgpuPicture hp;
    QgpuCudaRing *ring = NULL;
    QgpuCudaFrame *frame[2] = {NULL, NULL};
    QgpuContext *a = test_open(1), *b = test_open(1);
    char err[256];

    memset(&cp, 0, sizeof(cp));
    cp.mem.fd = -1;
    test_picture_alloc(&r, 64, 32, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&r);
    if (!CHECK(a && b, "open") || cuda_pic_make(cu, &cp, &r.pic, 1, 0) < 0)
        goto out;
    test_configure(a, "psnr", NULL, 0);
    test_configure(b, "psnr", NULL, 0);
    cuda_pic_describe(&cp, &r.pic, 1, cuctx, &pic, &hp);
    if (!CHECK(qgpu_cuda_ring_create(&ring, &pic, 2, err, sizeof(err)) == 0, "ring: %s", err) ||
        !CHECK(qgpu_cuda_ring_take(ring, &pic, &frame[0]) == 1 &&
                   qgpu_cuda_ring_take(ring, &pic, &frame[1]) == 1, "take"))
        goto out;
    if (!CHECK(qgpu_submit_cuda(a, frame[0], frame[1]) == 0, "submit: %s", qgpu_last_error(a)))
        goto out;
    CHECK(qgpu_submit_cuda(b, frame[0], frame[1]) == QGPU_ERR_STATE,
          "a second context is refused: %s", qgpu_last_error(b));
    CHECK(qgpu_cuda_ring_reset(ring) == 0, "no reset while frames are out");
    qgpu_cuda_frame_release(&frame[0]);
    qgpu_cuda_frame_release(&frame[1]);
    qgpu_close(&a);
    CHECK(qgpu_cuda_ring_reset(ring) == 1, "reset once the frames are back");
    if (CHECK(qgpu_cuda_ring_take(ring, &pic, &frame[0]) == 1 &&
                  qgpu_cuda_ring_take(ring, &pic, &frame[1]) == 1, "take after reset"))
        CHECK(qgpu_submit_cuda(b, frame[0], frame[1]) == 0, "the next context after a reset: %s",
              qgpu_last_error(b));
out:
    qgpu_cuda_frame_release(&frame[0]);
    qgpu_cuda_frame_release(&frame[1]);
    qgpu_close(&a);
    qgpu_close(&b);
    qgpu_cuda_ring_free(&ring);
    cuda_pic_free(cu, &cp);
    test_picture_free(&r);
}

/* ---- copies only queued (take_async) ---- */

#define ASYNC_FRAMES 7

typedef struct AsyncPic {
    const CudaApi *cu;
    CudaPic pic;
    const unsigned char *garbage;
    int index;
    int *done_order; /* the index of each done call, in order */
    int *nb_done;
} AsyncPic;

/* Garbage over the picture's whole CUDA allocation, on stream (NULL: the
 * default stream); with wait, complete on return. */
static int overwrite(const CudaApi *cu, const CudaPic *c, const unsigned char *garbage, int wait)
{
    return qgpu_cuda_copy_2d(cu, c->mem.ptr, NULL, c->b.size, 0, garbage, c->b.size, c->b.size,
                             1, NULL) == 0 &&
           (!wait || cu->cuStreamSynchronize(NULL) == 0);
}

/* The library hands the picture back: its copy has run, so its memory
 * may be rewritten at once. */
static void async_done(void *opaque)
{
    AsyncPic *a = opaque;
    a->done_order[(*a->nb_done)++] = a->index;
    CHECK(overwrite(a->cu, &a->pic, a->garbage, 1), "overwrite picture %d when handed back",
          a->index);
}

static void test_async_take(const CudaApi *cu, CUcontext cuctx)
{
    const int w = 320, h = 180;
    AsyncPic *pics = calloc(2 * ASYNC_FRAMES, sizeof(*pics));
    int done_order[2 * ASYNC_FRAMES], nb_done = 0, taken = 0, in_order = 1, held_ok = 1;
    unsigned char *garbage = NULL;
    QgpuContext *host = test_open(2), *dev = test_open(2);
    QgpuCudaRing *ring = NULL;
    QgpuCudaFrame *none = NULL;
    char err[512] = "";
    int ok;

    ok = CHECK(pics && host && dev, "async: open");
    if (ok) {
        test_configure(host, "psnr|vif|motion|ciede", NULL, 0);
        test_configure(dev, "psnr|vif|motion|ciede", NULL, 0);
        ok = CHECK(qgpu_cuda_ring_take_async(NULL, NULL, &none, async_done, NULL) ==
                           QGPU_ERR_INVALID_ARG && !none, "take_async without ring") &&
             CHECK(qgpu_cuda_ring_drain(NULL) == 0, "drain of no ring");
    }
    for (int f = 0; f < ASYNC_FRAMES && ok; f++) {
        TestPicture r, d;
        QgpuCudaPicture pic[2];
        QgpuPicture hp[2];
        QgpuCudaFrame *frame[2] = {NULL, NULL};

        test_picture_alloc(&r, w, h, QGPU_LAYOUT_420, 8, 0);
        test_picture_alloc(&d, w, h, QGPU_LAYOUT_420, 8, 0);
        test_picture_random(&r);
        test_picture_noisy_copy(&d, &r, 2 + f);
        for (int i = 0; i < 2 && ok; i++) {
            AsyncPic *a = &pics[2 * f + i];
            a->cu = cu;
            a->index = 2 * f + i;
            a->done_order = done_order;
            a->nb_done = &nb_done;
            a->pic.mem.fd = -1;
            ok = cuda_pic_make(cu, &a->pic, i ? &d.pic : &r.pic, 1, 64) == 0;
            if (ok)
                cuda_pic_describe(&a->pic, i ? &d.pic : &r.pic, 1, cuctx, &pic[i], &hp[i]);
            if (ok && !garbage) {
                ok = CHECK((garbage = malloc(a->pic.b.size)) != NULL, "malloc");
                for (size_t k = 0; ok && k < a->pic.b.size; k++)
                    garbage[k] = (unsigned char)test_rand();
            }
            a->garbage = garbage;
        }
        if (ok && !ring)
            ok = CHECK(qgpu_cuda_ring_create(&ring, &pic[0], 4, err, sizeof(err)) == 0,
                       "async: ring: %s", err);
        for (int i = 0; i < 2 && ok; i++) {
            AsyncPic *a = &pics[2 * f + i];
            ok = CHECK(qgpu_cuda_ring_take_async(ring, &pic[i], &frame[i], async_done, a) == 1,
                       "async: take %d: %s", a->index, qgpu_cuda_ring_error(ring));
            taken += ok;
            held_ok &= taken - nb_done <= QGPU_CUDA_HELD;
            /* queued after the take's copy on the same stream: too late */
            ok = ok && CHECK(overwrite(cu, &a->pic, garbage, 0), "async: overwrite %d", a->index);
        }
        if (ok) {
            int ret = qgpu_submit_cuda(dev, frame[0], frame[1]);
            if (ret == QGPU_ERR_UNSUPPORTED) {
                printf("test_cuda: take_async part skipped: %s\n", qgpu_last_error(dev));
                ok = 0;
            } else {
                ok = CHECK(ret == 0, "async: submit_cuda %d: %s", f, qgpu_last_error(dev)) &&
                     CHECK(qgpu_submit(host, &hp[0], &hp[1]) == 0, "async: submit %d: %s", f,
                           qgpu_last_error(host));
            }
        }
        qgpu_cuda_frame_release(&frame[0]);
        qgpu_cuda_frame_release(&frame[1]);
        test_picture_free(&r);
        test_picture_free(&d);
        test_collect_both(host, dev);
    }
    if (ok) {
        test_flush_compare("async take", host, "host", dev, "CUDA", ASYNC_FRAMES);
        CHECK(held_ok, "at most QGPU_CUDA_HELD pictures held");
        CHECK(nb_done < taken, "the last picture still held before ring_free (%d of %d "
              "handed back)", nb_done, taken);
    }
    qgpu_close(&host);
    qgpu_close(&dev);
    qgpu_cuda_ring_free(&ring); /* hands back the pictures still held */
    if (ok) {
        CHECK(nb_done == taken, "every picture handed back by ring_free (%d of %d)", nb_done,
              taken);
        for (int i = 0; i < nb_done; i++)
            in_order &= done_order[i] == i;
        CHECK(in_order, "pictures handed back oldest first");
    }
    for (int i = 0; pics && i < 2 * ASYNC_FRAMES; i++)
        if (pics[i].cu)
            cuda_pic_free(cu, &pics[i].pic);
    free(pics);
    free(garbage);
}

static void test_cuda_scores(void)
{
    char why[512] = "";
    const CudaApi *cu;
    CUcontext cuctx = NULL, popped;
    CUdevice cudev;
    int skipped = 0;

    if (qgpu_cuda_available(why, sizeof(why)) < 0) {
        printf("test_cuda: CUDA part skipped: %s\n", why);
        return;
    }
    cu = qgpu_cuda_api(why, sizeof(why));
    if (!CHECK(cu && cu->cuDeviceGet(&cudev, 0) == 0 && cu->cuCtxCreate(&cuctx, 0, cudev) == 0,
               "CUDA context"))
        return;
    /* current on this thread: the test's own allocations and copies */
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && !skipped; i++)
        skipped = run_case(cu, cuctx, &cases[i]) < 0;
    if (!skipped) {
        test_second_context(cu, cuctx);
        test_async_take(cu, cuctx);
        printf("test_cuda: pictures in CUDA memory scored through qgpu_submit_cuda\n");
    }
    cu->cuCtxPopCurrent(&popped);
    cu->cuCtxDestroy(cuctx);
}

int main(void)
{
    test_seed(1818);
    test_refusals();
    test_cuda_scores();
    return test_finish();
}
