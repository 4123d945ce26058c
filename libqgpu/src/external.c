/*
 * Pictures in the caller's OpenCL images (qgpu_opencl.h): each plane is
 * copied on the device, with clEnqueueCopyImageToBuffer on the upload
 * queue, into the slot's input buffers at the offsets and row pitch the
 * host path uploads to; the rest of the frame's work is the host path's
 * (pipeline.h). A copy of an image to a buffer moves the bytes of each
 * pixel unchanged, so 8-bit images give the host path's 8-bit samples and
 * 16-bit images its 16-bit words.
 *
 * QGPU_LAYOUT_NV12 pictures (FFmpeg's OpenCL frames of nv12/p010/p016, and
 * VAAPI surfaces mapped to OpenCL) are two images: luma (one channel) and
 * the Cb Cr pairs (two channels, half size). Luma goes where planar luma
 * goes; the pairs go to the slot's interleaved buffer, which the host
 * path's NV12 split (semiplanar.c) turns into planes 1 and 2.
 */
#include <string.h>

#include "internal.h"
#include "pipeline.h"
#include "qgpu/qgpu_opencl.h"

static const char *plane_name(int plane)
{
    static const char *const names[] = {"luma", "Cb", "Cr"};
    return names[plane];
}

static int channel_count(cl_channel_order order)
{
    if (order == CL_R || order == CL_A || order == CL_INTENSITY || order == CL_LUMINANCE)
        return 1;
    if (order == CL_RG || order == CL_RA)
        return 2;
    return 0;
}

/* One plane: a 2D image of the context covering the plane, of one channel
 * of the sample size (two for the Cb Cr pairs of an NV12 picture). */
static int check_image(QgpuContext *ctx, cl_mem image, int plane, const QgpuVideoFormat *fmt,
                       int layout, const char *which)
{
    int channels = layout == QGPU_LAYOUT_NV12 && plane == 1 ? 2 : 1;
    cl_mem_object_type type = 0;
    cl_context owner = NULL;
    cl_image_format format;
    size_t width = 0, height = 0;
    cl_int status;
    int bits;

    if (!image)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "%s picture: %s plane is NULL", which,
                          plane_name(plane));
    status = clGetMemObjectInfo(image, CL_MEM_TYPE, sizeof(type), &type, NULL);
    if (status == CL_SUCCESS)
        status = clGetMemObjectInfo(image, CL_MEM_CONTEXT, sizeof(owner), &owner, NULL);
    if (status != CL_SUCCESS)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                          "%s picture: %s plane is not an OpenCL memory object (%s)", which,
                          plane_name(plane), qgpu_cl_status_name(status));
    if (type != CL_MEM_OBJECT_IMAGE2D)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED, "%s picture: %s plane is not a 2D image",
                          which, plane_name(plane));
    if (owner != ctx->cl)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                          "%s picture: %s plane belongs to another OpenCL context than the "
                          "one qgpu_open_cl() was given",
                          which, plane_name(plane));
    status = clGetImageInfo(image, CL_IMAGE_FORMAT, sizeof(format), &format, NULL);
    if (status == CL_SUCCESS)
        status = clGetImageInfo(image, CL_IMAGE_WIDTH, sizeof(width), &width, NULL);
    if (status == CL_SUCCESS)
        status = clGetImageInfo(image, CL_IMAGE_HEIGHT, sizeof(height), &height, NULL);
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clGetImageInfo");
    switch (format.image_channel_data_type) {
    case CL_UNORM_INT8:
    case CL_UNSIGNED_INT8:
        bits = 8;
        break;
    case CL_UNORM_INT16:
    case CL_UNSIGNED_INT16:
        bits = 16;
        break;
    default:
        bits = 0;
        break;
    }
    if (channel_count(format.image_channel_order) != channels ||
        bits != 8 * fmt->bytes_per_sample)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "%s picture: %s plane: image format (order 0x%x, type 0x%x) is not "
                          "%s of %d bits, as %d-bit samples need",
                          which, plane_name(plane), (unsigned)format.image_channel_order,
                          (unsigned)format.image_channel_data_type,
                          channels == 2 ? "two channels (Cb Cr pairs)" : "one channel",
                          8 * fmt->bytes_per_sample, fmt->bitdepth);
    if (width < (size_t)fmt->plane_w[plane] || height < (size_t)fmt->plane_h[plane])
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                          "%s picture: %s plane image is %zux%zu, smaller than the plane "
                          "(%dx%d)",
                          which, plane_name(plane), width, height, fmt->plane_w[plane],
                          fmt->plane_h[plane]);
    return 0;
}

static int check_cl_picture(QgpuContext *ctx, const QgpuCLPicture *pic, const QgpuPicture *desc,
                            const char *which)
{
    QgpuVideoFormat fmt;
    int err, planes;
    if (pic->layout == QGPU_LAYOUT_NV12 && pic->shift != 0)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                          "%s picture: shift %d with the NV12 layout (its samples above 8 bits "
                          "are MSB-aligned words, as P010's: leave shift 0)",
                          which, pic->shift);
    if (pic->shift < 0 ||
        (pic->shift > 0 && (pic->bitdepth <= 8 || pic->bitdepth + pic->shift != 16)))
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                          "%s picture: shift %d with bit depth %d (a shift needs "
                          "bitdepth + shift == 16, bitdepth 9..15)",
                          which, pic->shift, pic->bitdepth);
    qgpu_format_from_picture(&fmt, desc);
    planes = pic->layout == QGPU_LAYOUT_NV12 ? 2 : fmt.nb_planes;
    for (int p = 0; p < planes; p++)
        if ((err = check_image(ctx, pic->plane[p], p, &fmt, pic->layout, which)))
            return err;
    return 0;
}

/* The description qgpu_submit() would get (no host data). */
static void describe(QgpuPicture *desc, const QgpuCLPicture *pic)
{
    memset(desc, 0, sizeof(*desc));
    desc->width = pic->width;
    desc->height = pic->height;
    desc->layout = pic->layout;
    desc->bitdepth = pic->bitdepth;
}

/* Plane p's image (its plane_w x plane_h corner) -> dst at dst_offset. */
static int copy_image(QgpuContext *ctx, cl_mem image, int p, cl_mem dst, size_t dst_offset)
{
    const QgpuVideoFormat *fmt = &ctx->in_fmt;
    size_t origin[3] = {0, 0, 0};
    size_t region[3] = {(size_t)fmt->plane_w[p], (size_t)fmt->plane_h[p], 1};
    cl_int status = clEnqueueCopyImageToBuffer(ctx->upload_queue, image, dst, origin, region,
                                               dst_offset, 0, NULL, NULL);
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clEnqueueCopyImageToBuffer(frame input)");
    return 0;
}

/* Copies the planes the device needs into the slot's buffer for `which`
 * (NV12: luma there, the Cb Cr pairs, when chroma is read, into the slot's
 * interleaved buffer for the split). */
static int copy_picture(QgpuContext *ctx, const QgpuCLPicture *pic, const QgpuSlot *slot,
                        int which)
{
    const QgpuVideoFormat *fmt = &ctx->in_fmt;
    size_t offset;
    cl_mem dst = qgpu_submit_target(ctx, slot, which, &offset);
    int err = 0;

    if (ctx->in_layout == QGPU_LAYOUT_NV12) {
        err = copy_image(ctx, pic->plane[0], 0, dst, offset);
        if (!err && ctx->split_chroma)
            err = copy_image(ctx, pic->plane[1], 1, slot->interleaved,
                             (size_t)which * qgpu_interleaved_bytes(ctx));
        return err;
    }
    for (int p = 0; p < fmt->nb_planes && fmt->plane_offset[p] < ctx->upload_bytes && !err; p++)
        err = copy_image(ctx, pic->plane[p], p, dst, offset + fmt->plane_offset[p]);
    return err;
}

int qgpu_submit_cl(QgpuContext *ctx, const QgpuCLPicture *ref, const QgpuCLPicture *dist)
{
    QgpuPicture ref_desc, dist_desc;
    QgpuSlot *slot;
    int shift[2], err;

    if (!ctx)
        return QGPU_ERR_INVALID_ARG;
    if (!ref || !dist)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "%s picture is NULL",
                          ref ? "distorted" : "reference");
    describe(&ref_desc, ref);
    describe(&dist_desc, dist);
    if ((err = qgpu_submit_check(ctx, &ref_desc, &dist_desc, 0)) ||
        (err = check_cl_picture(ctx, ref, &ref_desc, "reference")) ||
        (err = check_cl_picture(ctx, dist, &dist_desc, "distorted")) ||
        (err = qgpu_submit_slot(ctx, &ref_desc, &slot)))
        return err;
    if (!ctx->frames_from_device)
        qgpu_log(ctx, QGPU_LOG_DEBUG, "input from OpenCL images: copied on the device");

    err = copy_picture(ctx, ref, slot, 0);
    if (!err)
        err = copy_picture(ctx, dist, slot, 1);
    shift[0] = ctx->in_layout == QGPU_LAYOUT_NV12 ? ctx->in_shift : ref->shift;
    shift[1] = ctx->in_layout == QGPU_LAYOUT_NV12 ? ctx->in_shift : dist->shift;
    return qgpu_submit_device_finish(ctx, slot, shift, err,
                                     "copying the frame's images on the device");
}

int qgpu_submit_device_finish(QgpuContext *ctx, QgpuSlot *slot, const int shift[2], int err,
                              const char *what)
{
    cl_event copied = NULL;
    cl_int status;
    double t = qgpu_timing_now(ctx);
    if (!err) {
        /* completes after every copy (in-order queue) */
        status = clEnqueueMarkerWithWaitList(ctx->upload_queue, 0, NULL, &copied);
        if (status != CL_SUCCESS)
            err = qgpu_cl_error(ctx, status, "clEnqueueMarkerWithWaitList");
    }
    if (!err)
        err = qgpu_submit_enqueue(ctx, slot, copied, shift);
    qgpu_timing_add(ctx, QGPU_TIMING_KERNELS, t);
    /* The caller may release or rewrite its memory when this returns. */
    if (!err) {
        t = qgpu_timing_now(ctx);
        status = clWaitForEvents(1, &copied);
        qgpu_timing_add(ctx, QGPU_TIMING_COPY_WAIT, t);
        if (status != CL_SUCCESS)
            err = qgpu_cl_error(ctx, status, what);
    }
    if (copied)
        clReleaseEvent(copied);
    if (err)
        return qgpu_submit_failed(ctx, err);
    ctx->frames_from_device++;
    return 0;
}

unsigned qgpu_frames_from_device(const QgpuContext *ctx)
{
    return ctx ? ctx->frames_from_device : 0;
}

unsigned qgpu_frames_from_host(const QgpuContext *ctx)
{
    return ctx ? ctx->frames_from_host : 0;
}
