/* qgpu_opencl.h's buffer pictures and imported memory.
 *
 * 1. qgpu_submit_cl_buffer() (pictures in an OpenCL buffer: planes at
 *    offsets, rows at a pitch; NV12/P010 and planar) scores exactly as
 *    qgpu_submit() of the same bytes from host memory; its error paths; and
 *    qgpu_import_memory_fd() refuses cleanly on a device without
 *    cl_khr_external_memory_opaque_fd. Runs everywhere (PoCL in CI).
 * 2. The CUDA import (the zero-copy decode path, libqgpu/src/cuda_driver.c): a picture
 *    written by CUDA into an exportable allocation, imported into OpenCL,
 *    read back byte for byte through OpenCL and scored as the host copy
 *    is. Runs only where the CUDA driver and the extension exist (the
 *    NVIDIA machine); elsewhere it says why it is skipped. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_driver.h"
#include "internal.h"
#include "qgpu/qgpu_opencl.h"
#include "cl_env.h"
#include "test_util.h"

/* The pictures' bytes: test_block_make with the first plane at byte 64
 * (not at offset 0) and 32 bytes between planes. */
#define BLOCK_FIRST 64
#define BLOCK_GAP 32

static void blob_buffer(const TestBlock *b, const QgpuPicture *host, cl_mem buffer,
                        QgpuCLBuffer *out)
{
    memset(out, 0, sizeof(*out));
    out->width = host->width;
    out->height = host->height;
    out->layout = host->layout;
    out->bitdepth = host->bitdepth;
    out->buffer = buffer;
    for (int p = 0; p < b->planes; p++) {
        out->offset[p] = b->offset[p];
        out->pitch[p] = b->pitch[p];
    }
}

typedef struct Case {
    const char *label;
    int width, height, layout, bitdepth, nv12;
    const char *features;
    int depth, frames, pad;
} Case;

static const Case cases[] = {
    {"NV12 psnr + ciede + ssim", 98, 66, QGPU_LAYOUT_420, 8, 1, "psnr|ciede|float_ssim", 2, 4, 40},
    {"P010 odd size", 67, 45, QGPU_LAYOUT_420, 10, 1, "psnr|ciede", 1, 3, 6},
    {"NV12 luma only", 96, 64, QGPU_LAYOUT_420, 8, 1, "vif|motion", 3, 5, 0},
    {"planar 4:2:0 10-bit", 70, 50, QGPU_LAYOUT_420, 10, 0, "psnr|vif", 2, 3, 10},
    {"planar 4:4:4 8-bit", 64, 48, QGPU_LAYOUT_444, 8, 0, "psnr|float_ssim", 1, 2, 3},
    {"gray 8-bit", 80, 40, QGPU_LAYOUT_400, 8, 0, "psnr|motion", 2, 3, 0},
};

static void run_buffer_case(TestClEnv *env, const Case *c)
{
    QgpuContext *host = test_open(c->depth), *dev = NULL;
    QgpuConfig cfg;
    int ok = 1;

    qgpu_config_default(&cfg);
    cfg.pipeline_depth = c->depth;
    if (!host || !CHECK(qgpu_open_cl(&dev, env->cl, env->device, &cfg) == 0, "%s: open_cl",
                        c->label))
        goto out;
    if (!CHECK(test_configure(host, c->features, NULL, 0) == 0 &&
                   test_configure(dev, c->features, NULL, 0) == 0,
               "%s: configure", c->label))
        goto out;
    for (int f = 0; f < c->frames && ok; f++) {
        TestPicture r, d;
        TestBlock rb = {0}, db = {0};
        QgpuPicture rh, dh;
        QgpuCLBuffer rc, dc;
        cl_mem rbuf = NULL, dbuf = NULL;
        cl_int status;
        test_picture_alloc(&r, c->width, c->height, c->layout, c->bitdepth, 0);
        test_picture_alloc(&d, c->width, c->height, c->layout, c->bitdepth, 0);
        test_picture_random(&r);
        test_picture_noisy_copy(&d, &r, 9);
        ok = test_block_make(&rb, &r.pic, c->nv12, c->pad, BLOCK_FIRST, BLOCK_GAP) == 0 &&
             test_block_make(&db, &d.pic, c->nv12, c->pad, BLOCK_FIRST, BLOCK_GAP) == 0;
        if (ok) {
            test_block_picture(&rb, &r.pic, c->nv12, &rh);
            test_block_picture(&db, &d.pic, c->nv12, &dh);
            rbuf = clCreateBuffer(env->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, rb.size,
                                  rb.data, &status);
            if (status == CL_SUCCESS)
                dbuf = clCreateBuffer(env->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                      db.size, db.data, &status);
            ok = CHECK(status == CL_SUCCESS, "%s: buffers: %d", c->label, status);
        }
        if (ok) {
            blob_buffer(&rb, &rh, rbuf, &rc);
            blob_buffer(&db, &dh, dbuf, &dc);
            ok = CHECK(qgpu_submit(host, &rh, &dh) == 0, "%s: host submit %d: %s", c->label,
                       f, qgpu_last_error(host)) &&
                 CHECK(qgpu_submit_cl_buffer(dev, &rc, &dc) == 0, "%s: buffer submit %d: %s",
                       c->label, f, qgpu_last_error(dev));
        }
        /* the buffers may be rewritten and released at once */
        if (rbuf) {
            static const unsigned char junk = 0x33;
            clEnqueueFillBuffer(env->queue, rbuf, &junk, 1, 0, rb.size, 0, NULL, NULL);
            clFinish(env->queue);
            clReleaseMemObject(rbuf);
        }
        if (dbuf)
            clReleaseMemObject(dbuf);
        test_block_free(&rb);
        test_block_free(&db);
        test_picture_free(&r);
        test_picture_free(&d);
    }
    if (ok && test_flush_compare(c->label, host, "host", dev, "buffer", (unsigned)c->frames) == 0) {
        CHECK(qgpu_frames_from_device(dev) == (unsigned)c->frames &&
                  qgpu_frames_from_host(dev) == 0,
              "%s: %u frames from the device, %u from the host", c->label,
              qgpu_frames_from_device(dev), qgpu_frames_from_host(dev));
    }
out:
    qgpu_close(&host);
    qgpu_close(&dev);
}

static void test_errors(TestClEnv *env)
{
    QgpuContext *ctx = NULL;
    QgpuCLBuffer a, b;
    cl_mem small, big, imported = NULL;
    cl_int status;
    int fd, err;

    if (!CHECK(qgpu_open_cl(&ctx, env->cl, env->device, NULL) == 0, "open_cl"))
        return;
    test_configure(ctx, "psnr", NULL, 0);
    small = clCreateBuffer(env->cl, CL_MEM_READ_ONLY, 1000, NULL, &status);
    big = clCreateBuffer(env->cl, CL_MEM_READ_ONLY, 64 * 48 * 2, NULL, &status);
    memset(&a, 0, sizeof(a));
    a.width = 64;
    a.height = 48;
    a.layout = QGPU_LAYOUT_NV12;
    a.bitdepth = 8;
    a.buffer = big;
    a.offset[1] = 64 * 48;
    a.pitch[0] = a.pitch[1] = 64;
    b = a;
    b.buffer = NULL;
    err = qgpu_submit_cl_buffer(ctx, &a, &b);
    CHECK(err == QGPU_ERR_INVALID_ARG && strstr(qgpu_last_error(ctx), "NULL"),
          "NULL buffer: %d %s", err, qgpu_last_error(ctx));
    b.buffer = small;
    err = qgpu_submit_cl_buffer(ctx, &a, &b);
    CHECK(err == QGPU_ERR_INVALID_ARG && strstr(qgpu_last_error(ctx), "does not fit"),
          "buffer too small: %d %s", err, qgpu_last_error(ctx));
    b = a;
    b.pitch[1] = 63;
    err = qgpu_submit_cl_buffer(ctx, &a, &b);
    CHECK(err == QGPU_ERR_INVALID_ARG && strstr(qgpu_last_error(ctx), "pitch"),
          "pitch shorter than a row: %d %s", err, qgpu_last_error(ctx));
    CHECK(qgpu_submit_cl_buffer(ctx, &a, NULL) == QGPU_ERR_INVALID_ARG, "NULL picture");
    CHECK(qgpu_submit_cl_buffer(ctx, &a, &a) == 0, "a valid pair after refusals: %s",
          qgpu_last_error(ctx));
    CHECK(qgpu_import_memory_fd(ctx, -1, 4096, &imported) == QGPU_ERR_INVALID_ARG,
          "import of fd -1");
    /* PoCL and other devices without the extension: a clean refusal */
    fd = open("/dev/null", O_RDONLY);
    err = qgpu_import_memory_fd(ctx, fd, 4096, &imported);
    if (err == QGPU_ERR_UNSUPPORTED)
        CHECK(strstr(qgpu_last_error(ctx), "cl_khr_external_memory_opaque_fd") ||
                  strstr(qgpu_last_error(ctx), "entry points") ||
                  strstr(qgpu_last_error(ctx), "lacks"),
              "unsupported import says why: %s", qgpu_last_error(ctx));
    else
        CHECK(err == QGPU_ERR_OPENCL && !imported,
              "a descriptor that is no CUDA memory is refused: %d %s", err,
              qgpu_last_error(ctx));
    if (fd >= 0)
        close(fd);
    clReleaseMemObject(small);
    clReleaseMemObject(big);
    qgpu_close(&ctx);
}

/* ---------------------------------------------------------------- CUDA */

typedef cl_int(CL_API_CALL *ExternalFn)(cl_command_queue, cl_uint, const cl_mem *, cl_uint,
                                         const cl_event *, cl_event *);

/* The picture's bytes, copied into CUDA memory by CUDA, read back through
 * the imported buffer. */
static void check_readback(TestClEnv *env, cl_mem buffer, const TestBlock *b)
{
    cl_platform_id platform = NULL;
    ExternalFn acquire, release;
    unsigned char *back = malloc(b->size);
    cl_int status;

    clGetDeviceInfo(env->device, CL_DEVICE_PLATFORM, sizeof(platform), &platform, NULL);
    acquire = (ExternalFn)clGetExtensionFunctionAddressForPlatform(
        platform, "clEnqueueAcquireExternalMemObjectsKHR");
    release = (ExternalFn)clGetExtensionFunctionAddressForPlatform(
        platform, "clEnqueueReleaseExternalMemObjectsKHR");
    if (!CHECK(back && acquire && release, "acquire/release entry points"))
        goto out;
    status = acquire(env->queue, 1, &buffer, 0, NULL, NULL);
    if (status == CL_SUCCESS)
        status = clEnqueueReadBuffer(env->queue, buffer, CL_TRUE, 0, b->size, back, 0, NULL,
                                     NULL);
    if (status == CL_SUCCESS)
        status = release(env->queue, 1, &buffer, 0, NULL, NULL);
    clFinish(env->queue);
    if (CHECK(status == CL_SUCCESS, "reading the imported buffer: %d", status))
        CHECK(!memcmp(back, b->data, b->size),
              "the bytes CUDA wrote are the bytes OpenCL reads (%zu bytes)", b->size);
out:
    free(back);
}

static void test_cuda(TestClEnv *env)
{
    char err[512] = "";
    const CudaApi *cu = qgpu_cuda_api(err, sizeof(err));
    CudaExportable mem[2];
    CUcontext cuctx = NULL;
    CUdevice cudev;
    QgpuContext *host = NULL, *dev = NULL;
    TestPicture r, d;
    TestBlock blob[2];
    QgpuPicture hp[2];
    QgpuCLBuffer cb[2];
    int ret;

    if (!cu) {
        printf("test_extmem: CUDA import skipped: %s\n", err);
        return;
    }
    memset(mem, 0, sizeof(mem));
    mem[0].fd = mem[1].fd = -1;
    memset(blob, 0, sizeof(blob));
    if (!CHECK(cu->cuDeviceGet(&cudev, 0) == 0 && cu->cuCtxCreate(&cuctx, 0, cudev) == 0,
               "CUDA context"))
        return;
    test_picture_alloc(&r, 1920, 1080, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&d, 1920, 1080, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&r);
    test_picture_noisy_copy(&d, &r, 5);
    if (!CHECK(qgpu_open_cl(&dev, env->cl, env->device, NULL) == 0, "open_cl") ||
        !CHECK((host = test_open(2)) != NULL, "open"))
        goto out;
    test_configure(host, "psnr|vif|ciede", NULL, 0);
    test_configure(dev, "psnr|vif|ciede", NULL, 0);
    for (int i = 0; i < 2; i++) {
        const QgpuPicture *src = i ? &d.pic : &r.pic;
        cl_mem buffer = NULL;
        if (!CHECK(test_block_make(&blob[i], src, 1, 128, BLOCK_FIRST, BLOCK_GAP) == 0, "blob") ||
            !CHECK(qgpu_cuda_alloc_exportable(cu, blob[i].size, &mem[i], err, sizeof(err)) == 0,
                   "exportable allocation: %s", err))
            goto out;
        ret = qgpu_cuda_copy_2d(cu, mem[i].ptr, NULL, blob[i].size, 0, blob[i].data, blob[i].size,
                           blob[i].size, 1, NULL);
        if (!ret)
            ret = cu->cuStreamSynchronize(NULL);
        if (!CHECK(ret == 0, "CUDA writes the picture: %d", ret))
            goto out;
        ret = qgpu_import_memory_fd(dev, mem[i].fd, mem[i].size, &buffer);
        if (ret == QGPU_ERR_UNSUPPORTED) {
            printf("test_extmem: CUDA import skipped: %s\n", qgpu_last_error(dev));
            goto out;
        }
        if (!CHECK(ret == 0, "import: %s", qgpu_last_error(dev)))
            goto out;
        check_readback(env, buffer, &blob[i]);
        test_block_picture(&blob[i], src, 1, &hp[i]);
        blob_buffer(&blob[i], &hp[i], buffer, &cb[i]);
    }
    for (int f = 0; f < 3; f++)
        if (!CHECK(qgpu_submit(host, &hp[0], &hp[1]) == 0 &&
                       qgpu_submit_cl_buffer(dev, &cb[0], &cb[1]) == 0,
                   "submit %d: %s / %s", f, qgpu_last_error(host), qgpu_last_error(dev)))
            goto out;
    test_flush_compare("CUDA memory", host, "host", dev, "imported", 3);
    printf("test_extmem: CUDA memory imported into OpenCL on %s\n", qgpu_device_name(dev));
out:
    qgpu_close(&host);
    qgpu_close(&dev); /* releases the imports, before their memory goes */
    for (int i = 0; i < 2; i++) {
        qgpu_cuda_free_exportable(cu, &mem[i]);
        test_block_free(&blob[i]);
    }
    test_picture_free(&r);
    test_picture_free(&d);
    cu->cuCtxDestroy(cuctx);
}

int main(void)
{
    TestClEnv env;
    test_seed(18);
    if (test_cl_env_open(&env) == 0) {
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
            run_buffer_case(&env, &cases[i]);
        test_errors(&env);
        test_cuda(&env);
    }
    test_cl_env_close(&env);
    return test_finish();
}
