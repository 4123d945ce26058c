/* qgpu_opencl.h: a context on the test's own cl_context, pictures in OpenCL
 * images (qgpu_submit_cl) scored exactly as the same pictures from host
 * memory (qgpu_submit): every layout, 8 and 10 bits, MSB-aligned 16-bit
 * words, NV12/P010 as two images (luma, Cb Cr pairs), widening to 10
 * bits, luma-only features, pipeline depths, host and
 * device submits mixed; the images may be overwritten and released as soon
 * as qgpu_submit_cl returns; the caller's context outlives its own
 * reference; and the error paths. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qgpu/qgpu_opencl.h"
#include "cl_env.h"
#include "test_util.h"

/* A w x h image of `order` (CL_R or CL_RG), bps bytes per channel, holding
 * data (freed here). */
static cl_mem image_upload(TestClEnv *env, cl_channel_order order, int bps, int w, int h,
                           unsigned char *data, const char *what)
{
    cl_image_format format = {order, bps == 2 ? CL_UNORM_INT16 : CL_UNORM_INT8};
    cl_image_desc desc;
    size_t origin[3] = {0, 0, 0}, region[3] = {(size_t)w, (size_t)h, 1};
    cl_int status;
    cl_mem image;

    memset(&desc, 0, sizeof(desc));
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = (size_t)w;
    desc.image_height = (size_t)h;
    image = clCreateImage(env->cl, CL_MEM_READ_WRITE, &format, &desc, NULL, &status);
    if (status == CL_SUCCESS)
        status = clEnqueueWriteImage(env->queue, image, CL_TRUE, origin, region, 0, 0, data, 0,
                                     NULL, NULL);
    free(data);
    CHECK(status == CL_SUCCESS, "image of %s: %d", what, status);
    return status == CL_SUCCESS ? image : NULL;
}

/* A one-channel image of a plane (extra columns/rows beyond it, filled with
 * junk) holding the host picture's samples; with shift, 16-bit words
 * v << shift | v >> (bitdepth - shift), as FFmpeg's 10-to-16-bit conversion
 * writes them. */
static cl_mem plane_image(TestClEnv *env, const QgpuPicture *pic, int p, int shift, int extra)
{
    int w = test_plane_w(pic, p) + extra, h = test_plane_h(pic, p) + extra;
    int bps = pic->bitdepth > 8 ? 2 : 1;
    unsigned char *data = malloc((size_t)w * h * bps);

    if (!data)
        return NULL;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned v = x < test_plane_w(pic, p) && y < test_plane_h(pic, p)
                             ? test_sample(pic, p, x, y)
                             : test_rand() & ((1u << pic->bitdepth) - 1);
            if (shift)
                v = (v << shift) | (v >> (pic->bitdepth - shift));
            test_store_sample(data, (size_t)y * w + x, bps, v);
        }
    return image_upload(env, CL_R, bps, w, h, data, "a plane");
}

static void cl_picture_make(TestClEnv *env, QgpuCLPicture *out, const QgpuPicture *pic, int shift,
                            int extra)
{
    memset(out, 0, sizeof(*out));
    out->width = pic->width;
    out->height = pic->height;
    out->layout = pic->layout;
    out->bitdepth = pic->bitdepth;
    out->shift = shift;
    for (int p = 0; p < (pic->layout == QGPU_LAYOUT_400 ? 1 : 3); p++)
        out->plane[p] = plane_image(env, pic, p, shift, extra);
}

/* The Cb Cr pairs of a 4:2:0 picture as one two-channel (CL_RG) image, as
 * FFmpeg's OpenCL frames of nv12/p010 hold them; above 8 bits the words are
 * MSB-aligned (v << (16 - bitdepth)). extra: junk columns/rows. */
static cl_mem pairs_image(TestClEnv *env, const QgpuPicture *pic, int extra)
{
    int w = test_plane_w(pic, 1) + extra, h = test_plane_h(pic, 1) + extra;
    int bps = pic->bitdepth > 8 ? 2 : 1, shift = bps == 2 ? 16 - pic->bitdepth : 0;
    unsigned char *data = malloc((size_t)w * h * 2 * bps);

    if (!data)
        return NULL;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 2; c++) {
                int inside = x < test_plane_w(pic, 1) && y < test_plane_h(pic, 1);
                unsigned v = inside ? test_sample(pic, 1 + c, x, y) << shift
                                    : test_rand() & 0xffffu;
                test_store_sample(data, ((size_t)y * w + x) * 2 + c, bps, v);
            }
    return image_upload(env, CL_RG, bps, w, h, data, "the Cb Cr pairs");
}

/* Whether the device has two-channel (CL_RG) images of the data type:
 * PoCL 3.1's CPU device has none, NVIDIA's and Intel's have them. */
static int has_rg_images(TestClEnv *env, cl_channel_type type)
{
    cl_image_format formats[256];
    cl_uint n = 0;
    if (clGetSupportedImageFormats(env->cl, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 256,
                                   formats, &n) != CL_SUCCESS)
        return 0;
    for (cl_uint i = 0; i < n && i < 256; i++)
        if (formats[i].image_channel_order == CL_RG &&
            formats[i].image_channel_data_type == type)
            return 1;
    return 0;
}

/* A planar 4:2:0 picture as NV12 images: luma (MSB-aligned above 8 bits,
 * low bits filled as FFmpeg's conversions fill them) and the pairs. */
static void nv12_picture_make(TestClEnv *env, QgpuCLPicture *out, const QgpuPicture *pic,
                              int extra)
{
    memset(out, 0, sizeof(*out));
    out->width = pic->width;
    out->height = pic->height;
    out->layout = QGPU_LAYOUT_NV12;
    out->bitdepth = pic->bitdepth;
    out->plane[0] = plane_image(env, pic, 0, pic->bitdepth > 8 ? 16 - pic->bitdepth : 0, extra);
    out->plane[1] = pairs_image(env, pic, extra);
}

/* Overwrites the images (the library must be done reading them), then
 * releases them. */
static void cl_picture_clobber_free(TestClEnv *env, QgpuCLPicture *pic)
{
    for (int p = 0; p < 3; p++) {
        if (!pic->plane[p])
            continue;
        size_t w = 0, h = 0, elem = 0;
        clGetImageInfo(pic->plane[p], CL_IMAGE_WIDTH, sizeof(w), &w, NULL);
        clGetImageInfo(pic->plane[p], CL_IMAGE_HEIGHT, sizeof(h), &h, NULL);
        clGetImageInfo(pic->plane[p], CL_IMAGE_ELEMENT_SIZE, sizeof(elem), &elem, NULL);
        unsigned char *junk = malloc(w * h * elem);
        if (junk) {
            size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
            memset(junk, 0x5a, w * h * elem);
            clEnqueueWriteImage(env->queue, pic->plane[p], CL_TRUE, origin, region, 0, 0, junk, 0,
                                NULL, NULL);
            free(junk);
        }
        clReleaseMemObject(pic->plane[p]);
        pic->plane[p] = NULL;
    }
}

typedef struct Case {
    const char *label;
    int width, height, layout, bitdepth;
    int shift;            /* MSB-aligned 16-bit images */
    const char *features; /* '|' separated, or NULL */
    const char *model;    /* or NULL */
    int compute_bitdepth;
    int depth;
    int frames;
    int mixed;            /* every other frame through qgpu_submit on the external context */
    int nv12;             /* images as NV12 (luma + Cb Cr pairs) of the planar 4:2:0 picture */
} Case;

static int configure(QgpuContext *ctx, const Case *c)
{
    return test_configure(ctx, c->features, c->model, c->compute_bitdepth);
}

static void run_case(TestClEnv *env, const Case *c)
{
    QgpuConfig cfg;
    QgpuContext *host = test_open(c->depth), *ext = NULL;
    int err, device_frames = 0, host_frames = 0;

    qgpu_config_default(&cfg);
    cfg.pipeline_depth = c->depth;
    if (c->nv12 && !has_rg_images(env, c->bitdepth > 8 ? CL_UNORM_INT16 : CL_UNORM_INT8)) {
        printf("SKIP %s: the OpenCL device has no two-channel (CL_RG) images to hold Cb Cr "
               "pairs (PoCL's CPU device); it runs on GPUs\n", c->label);
        qgpu_close(&host);
        return;
    }
    err = qgpu_open_cl(&ext, env->cl, env->device, &cfg);
    if (!CHECK(err == 0 && host, "%s: qgpu_open_cl: %s", c->label, qgpu_open_error()) ||
        !CHECK(configure(host, c) == 0 && configure(ext, c) == 0, "%s: features: %s / %s",
               c->label, qgpu_last_error(host), qgpu_last_error(ext))) {
        qgpu_close(&host);
        qgpu_close(&ext);
        return;
    }
    test_seed(0xC0FFEEu + (uint64_t)c->width * 7 + c->layout);
    TestPicture ref, dist;
    test_picture_alloc(&ref, c->width, c->height, c->layout, c->bitdepth, 3);
    test_picture_alloc(&dist, c->width, c->height, c->layout, c->bitdepth, 0);
    for (int i = 0; i < c->frames; i++) {
        test_picture_random(&ref);
        test_picture_noisy_copy(&dist, &ref, 3 + i);
        err = qgpu_submit(host, &ref.pic, &dist.pic);
        CHECK(err == 0, "%s: host submit %d: %s", c->label, i, qgpu_last_error(host));
        if (c->mixed && i % 2) {
            err = qgpu_submit(ext, &ref.pic, &dist.pic);
            host_frames++;
        } else {
            QgpuCLPicture r, d;
            /* odd frames of the extra-size case: images larger than the planes */
            if (c->nv12) {
                nv12_picture_make(env, &r, &ref.pic, i % 2 ? 2 : 0);
                nv12_picture_make(env, &d, &dist.pic, 0);
            } else {
                cl_picture_make(env, &r, &ref.pic, c->shift, i % 2 ? 2 : 0);
                cl_picture_make(env, &d, &dist.pic, c->shift, 0);
            }
            err = qgpu_submit_cl(ext, &r, &d);
            cl_picture_clobber_free(env, &r);
            cl_picture_clobber_free(env, &d);
            device_frames++;
        }
        CHECK(err == 0, "%s: submit %d from images: %s", c->label, i, qgpu_last_error(ext));
        test_collect_both(host, ext);
    }
    test_flush_compare(c->label, host, "host", ext, "images", (unsigned)c->frames);
    CHECK(qgpu_frames_from_device(ext) == (unsigned)device_frames &&
              qgpu_frames_from_host(ext) == (unsigned)host_frames,
          "%s: counters %u device, %u host; expected %d, %d", c->label,
          qgpu_frames_from_device(ext), qgpu_frames_from_host(ext), device_frames, host_frames);
    CHECK(qgpu_frames_from_device(host) == 0 &&
              qgpu_frames_from_host(host) == (unsigned)c->frames,
          "%s: host context counters", c->label);
    test_picture_free(&ref);
    test_picture_free(&dist);
    qgpu_close(&host);
    qgpu_close(&ext);
}

static const Case cases[] = {
    {"420 8-bit psnr + vmaf", 96, 64, QGPU_LAYOUT_420, 8, 0, "psnr", "version=vmaf_v0.6.1", 0, 2,
     5, 0, 0},
    {"420 8-bit odd size, depth 1", 67, 45, QGPU_LAYOUT_420, 8, 0, "psnr|float_ssim", NULL, 0, 1,
     4, 0, 0},
    {"420 10-bit psnr + vmaf", 80, 48, QGPU_LAYOUT_420, 10, 0, "psnr", "version=vmaf_v0.6.1", 0,
     3, 5, 0, 0},
    {"420 10-bit in MSB-aligned words (shift 6)", 80, 48, QGPU_LAYOUT_420, 10, 6,
     "psnr|float_ssim", "version=vmaf_v0.6.1", 0, 2, 4, 0, 0},
    {"420 12-bit shift 4", 64, 40, QGPU_LAYOUT_420, 12, 4, "psnr", NULL, 0, 2, 3, 0, 0},
    {"422 8-bit", 64, 40, QGPU_LAYOUT_422, 8, 0, "psnr|ciede", NULL, 0, 2, 3, 0, 0},
    {"444 10-bit", 48, 32, QGPU_LAYOUT_444, 10, 0, "psnr", NULL, 0, 2, 3, 0, 0},
    {"400 8-bit", 64, 48, QGPU_LAYOUT_400, 8, 0, "psnr|float_ssim", NULL, 0, 2, 3, 0, 0},
    {"luma only (vif, motion)", 96, 64, QGPU_LAYOUT_420, 8, 0, "vif|motion", NULL, 0, 2, 4, 0, 0},
    {"8-bit scored at 10 bits (widening)", 96, 64, QGPU_LAYOUT_420, 8, 0, "psnr|vif", NULL, 10, 2,
     4, 0, 0},
    {"host and device submits mixed", 96, 64, QGPU_LAYOUT_420, 8, 0, "psnr|motion",
     "version=vmaf_v0.6.1", 0, 2, 6, 1, 0},
    /* NV12 images, scored as the planar host pictures they hold */
    {"NV12 images psnr + ciede + vmaf", 96, 64, QGPU_LAYOUT_420, 8, 0, "psnr|ciede",
     "version=vmaf_v0.6.1", 0, 2, 5, 0, 1},
    {"NV12 images odd size, depth 1", 67, 45, QGPU_LAYOUT_420, 8, 0, "psnr|float_ssim", NULL, 0,
     1, 4, 0, 1},
    {"P010 images psnr + vmaf", 80, 48, QGPU_LAYOUT_420, 10, 0, "psnr|ciede",
     "version=vmaf_v0.6.1", 0, 3, 5, 0, 1},
    {"NV12 images luma only (vif, motion)", 96, 64, QGPU_LAYOUT_420, 8, 0, "vif|motion", NULL, 0,
     2, 4, 0, 1},
    {"NV12 images scored at 10 bits (widening)", 96, 64, QGPU_LAYOUT_420, 8, 0, "psnr|vif", NULL,
     10, 2, 4, 0, 1},
};

/* The library keeps the caller's context alive: the test drops its own
 * references before scoring the rest of the stream. */
static void test_context_lifetime(TestClEnv *env)
{
    QgpuContext *ext = NULL;
    cl_context cl;
    cl_command_queue queue;
    cl_int status;
    TestPicture ref;
    QgpuCLPicture r;
    TestClEnv tmp;
    unsigned frame;
    double v = 0;

    cl = clCreateContext(NULL, 1, &env->device, NULL, NULL, &status);
    if (!CHECK(status == CL_SUCCESS, "clCreateContext"))
        return;
    queue = clCreateCommandQueue(cl, env->device, 0, &status);
    tmp.cl = cl;
    tmp.device = env->device;
    tmp.queue = queue;
    CHECK(qgpu_open_cl(&ext, cl, env->device, NULL) == 0, "open: %s", qgpu_open_error());
    if (!ext) {
        clReleaseCommandQueue(queue);
        clReleaseContext(cl);
        return;
    }
    CHECK(qgpu_enable_feature(ext, "psnr") == 0, "psnr");
    test_picture_alloc(&ref, 32, 16, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&ref);
    cl_picture_make(&tmp, &r, &ref.pic, 0, 0);
    clReleaseCommandQueue(queue);
    clReleaseContext(cl); /* the images and the library still hold it */
    CHECK(qgpu_submit_cl(ext, &r, &r) == 0, "submit after the caller released its context: %s",
          qgpu_last_error(ext));
    for (int p = 0; p < 3; p++)
        clReleaseMemObject(r.plane[p]);
    CHECK(qgpu_flush(ext) == 0 && qgpu_collect(ext, &frame, 1) == 1, "collect");
    CHECK(qgpu_get_score(ext, 0, "psnr_y", &v) == 0 && v > 0, "identical pictures: psnr_y %g",
          v);
    CHECK(strlen(qgpu_device_name(ext)) > 0, "device name of an external context");
    test_picture_free(&ref);
    qgpu_close(&ext);
}

static void test_errors(TestClEnv *env)
{
    QgpuContext *ext = NULL;
    TestPicture a, a10;
    QgpuCLPicture r, d, r10;
    cl_context other;
    cl_int status;
    cl_mem buffer;
    unsigned frame;

    CHECK(qgpu_open_cl(&ext, NULL, env->device, NULL) == QGPU_ERR_INVALID_ARG && !ext,
          "NULL context");
    CHECK(strstr(qgpu_open_error(), "context") != NULL, "message: %s", qgpu_open_error());
    CHECK(qgpu_open_cl(&ext, env->cl, NULL, NULL) == QGPU_ERR_INVALID_ARG, "NULL device");
    CHECK(qgpu_open_cl(NULL, env->cl, env->device, NULL) == QGPU_ERR_INVALID_ARG, "NULL out");
    {
        QgpuConfig cfg;
        qgpu_config_default(&cfg);
        cfg.pipeline_depth = 40;
        CHECK(qgpu_open_cl(&ext, env->cl, env->device, &cfg) == QGPU_ERR_INVALID_ARG,
              "depth out of range");
    }
    CHECK(qgpu_open_cl(&ext, env->cl, env->device, NULL) == 0, "open: %s", qgpu_open_error());
    if (!ext)
        return;
    test_picture_alloc(&a, 32, 16, QGPU_LAYOUT_420, 8, 0);
    test_picture_alloc(&a10, 32, 16, QGPU_LAYOUT_420, 10, 0);
    test_picture_random(&a);
    test_picture_random(&a10);
    cl_picture_make(env, &r, &a.pic, 0, 0);
    cl_picture_make(env, &d, &a.pic, 0, 0);
    cl_picture_make(env, &r10, &a10.pic, 0, 0);

    CHECK(qgpu_submit_cl(NULL, &r, &d) == QGPU_ERR_INVALID_ARG, "NULL ctx");
    CHECK(qgpu_submit_cl(ext, &r, &d) == QGPU_ERR_STATE, "no feature");
    CHECK(qgpu_enable_feature(ext, "psnr") == 0, "psnr");
    CHECK(qgpu_submit_cl(ext, NULL, &d) == QGPU_ERR_INVALID_ARG, "NULL picture");

    /* each error leaves the context usable */
    QgpuCLPicture bad = r;
    bad.plane[1] = NULL;
    CHECK(qgpu_submit_cl(ext, &bad, &d) == QGPU_ERR_INVALID_ARG, "NULL plane");
    bad = r;
    bad.bitdepth = 10; /* 8-bit images for 10-bit samples */
    CHECK(qgpu_submit_cl(ext, &bad, &r10) == QGPU_ERR_UNSUPPORTED, "8-bit image, 10-bit picture");
    CHECK(strstr(qgpu_last_error(ext), "16 bits") != NULL, "message: %s", qgpu_last_error(ext));
    bad = r;
    bad.width = 40; /* larger than the images */
    QgpuCLPicture bad2 = d;
    bad2.width = 40;
    CHECK(qgpu_submit_cl(ext, &bad, &bad2) == QGPU_ERR_INVALID_ARG, "images too small");
    CHECK(strstr(qgpu_last_error(ext), "smaller") != NULL, "message: %s", qgpu_last_error(ext));
    bad = r10;
    bad.shift = 2; /* 10 + 2 != 16 */
    CHECK(qgpu_submit_cl(ext, &bad, &r10) == QGPU_ERR_INVALID_ARG, "shift 2 with 10 bits");
    bad = r;
    bad.shift = 8;
    CHECK(qgpu_submit_cl(ext, &bad, &d) == QGPU_ERR_INVALID_ARG, "shift with 8-bit samples");
    CHECK(qgpu_submit_cl(ext, &r, &r10) == QGPU_ERR_MISMATCH, "8-bit against 10-bit");
    buffer = clCreateBuffer(env->cl, CL_MEM_READ_WRITE, 4096, NULL, &status);
    bad = r;
    bad.plane[0] = buffer;
    CHECK(qgpu_submit_cl(ext, &bad, &d) == QGPU_ERR_UNSUPPORTED, "a buffer, not an image");
    clReleaseMemObject(buffer);
    other = clCreateContext(NULL, 1, &env->device, NULL, NULL, &status);
    if (status == CL_SUCCESS) {
        cl_command_queue q = clCreateCommandQueue(other, env->device, 0, &status);
        TestClEnv o = {other, env->device, q};
        QgpuCLPicture foreign;
        cl_picture_make(&o, &foreign, &a.pic, 0, 0);
        CHECK(qgpu_submit_cl(ext, &foreign, &d) == QGPU_ERR_INVALID_ARG,
              "image of another context");
        CHECK(strstr(qgpu_last_error(ext), "another OpenCL context") != NULL, "message: %s",
              qgpu_last_error(ext));
        for (int p = 0; p < 3; p++)
            clReleaseMemObject(foreign.plane[p]);
        clReleaseCommandQueue(q);
        clReleaseContext(other);
    }
    {
        /* NV12: the pairs must be a two-channel image, luma one channel, no shift */
        QgpuCLPicture n = r;
        n.layout = QGPU_LAYOUT_NV12;
        n.plane[1] = r.plane[0]; /* one channel where the pairs go */
        n.plane[2] = NULL;
        CHECK(qgpu_submit_cl(ext, &n, &n) == QGPU_ERR_UNSUPPORTED &&
                  strstr(qgpu_last_error(ext), "two channels") != NULL,
              "NV12 pairs in a one-channel image: %s", qgpu_last_error(ext));
        n.plane[1] = NULL;
        CHECK(qgpu_submit_cl(ext, &n, &n) == QGPU_ERR_INVALID_ARG, "NV12 without pairs");
        n = r10;
        n.layout = QGPU_LAYOUT_NV12;
        n.shift = 6;
        CHECK(qgpu_submit_cl(ext, &n, &n) == QGPU_ERR_INVALID_ARG &&
                  strstr(qgpu_last_error(ext), "shift") != NULL,
              "NV12 with a shift: %s", qgpu_last_error(ext));
    }
    /* still usable after all that */
    CHECK(qgpu_submit_cl(ext, &r, &d) == 0, "good submit after errors: %s", qgpu_last_error(ext));
    CHECK(qgpu_submit_cl(ext, &r10, &r10) == QGPU_ERR_MISMATCH, "stream started at 8 bits");
    CHECK(qgpu_flush(ext) == 0, "flush");
    CHECK(qgpu_collect(ext, &frame, 1) == 1 && frame == 0, "one frame");
    CHECK(qgpu_submit_cl(ext, &r, &d) == QGPU_ERR_STATE, "submit after flush");
    for (int p = 0; p < 3; p++) {
        clReleaseMemObject(r.plane[p]);
        clReleaseMemObject(d.plane[p]);
        clReleaseMemObject(r10.plane[p]);
    }
    test_picture_free(&a);
    test_picture_free(&a10);
    qgpu_close(&ext);
}

int main(void)
{
    TestClEnv env;
    if (test_cl_env_open(&env) == 0) {
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
            run_case(&env, &cases[i]);
        test_context_lifetime(&env);
        test_errors(&env);
    }
    test_cl_env_close(&env);
    return test_finish();
}
