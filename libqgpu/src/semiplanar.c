/*
 * Semi-planar 4:2:0 input (QGPU_LAYOUT_NV12: NV12, P010, P016), as hardware
 * decoders output it, when some feature reads chroma.
 *
 * Each picture's luma goes where planar luma goes; the interleaved Cb Cr
 * pairs of both pictures go to the slot's `interleaved` buffer (one upload
 * each), and a kernel splits them into planes 1 and 2 of the picture's
 * target buffer on the compute queue, before anything else reads it. The
 * MSB-aligned words of P010 are shifted down afterwards by the pipeline's
 * shift step, for luma and chroma alike. With only luma features none of
 * this runs: the luma plane is uploaded as planar luma is.
 */
#include "internal.h"
#include "pipeline.h"

size_t qgpu_interleaved_bytes(const QgpuContext *ctx)
{
    return ctx->in_fmt.frame_bytes - ctx->in_fmt.plane_offset[1];
}

int qgpu_split_chroma_create(QgpuContext *ctx)
{
    cl_program program;
    int err = qgpu_program_get(ctx, "convert", NULL, &program);
    if (!err)
        err = qgpu_kernel_create(ctx, program,
                                 ctx->in_fmt.bytes_per_sample == 2 ? "split_chroma_16"
                                                                   : "split_chroma_8",
                                 &ctx->split_chroma);
    return err;
}

cl_int qgpu_upload_semiplanar(QgpuContext *ctx, QgpuSlot *slot, cl_event *uploaded)
{
    const unsigned char *staging = slot->staging_host;
    size_t luma = ctx->in_fmt.plane_offset[1], pairs = qgpu_interleaved_bytes(ctx);
    cl_int status = CL_SUCCESS;

    for (int which = 0; which < 2 && status == CL_SUCCESS; which++) {
        const unsigned char *src = staging + (size_t)which * ctx->upload_bytes;
        size_t offset;
        cl_mem target = qgpu_submit_target(ctx, slot, which, &offset);
        status = clEnqueueWriteBuffer(ctx->upload_queue, target, CL_FALSE, offset, luma, src, 0,
                                      NULL, NULL);
        if (status == CL_SUCCESS)
            status = clEnqueueWriteBuffer(ctx->upload_queue, slot->interleaved, CL_FALSE,
                                          (size_t)which * pairs, pairs, src + luma, 0, NULL,
                                          which ? uploaded : NULL);
    }
    return status;
}

int qgpu_split_chroma(QgpuContext *ctx, QgpuSlot *slot)
{
    const QgpuVideoFormat *fmt = &ctx->in_fmt;
    size_t bps = (size_t)fmt->bytes_per_sample;
    cl_uint n = (cl_uint)((size_t)fmt->plane_w[1] * fmt->plane_h[1]);
    size_t local = 256, global = qgpu_round_up(n, 256);
    int err = 0;

    for (int which = 0; which < 2 && !err; which++) {
        size_t offset;
        cl_mem target = qgpu_submit_target(ctx, slot, which, &offset);
        const QgpuArg args[] = {
            qgpu_arg_mem("pairs", slot->interleaved),
            qgpu_arg_uint("pairs_offset", (cl_uint)((size_t)which * n * 2)),
            qgpu_arg_mem("planes", target),
            qgpu_arg_uint("cb_offset", (cl_uint)((offset + fmt->plane_offset[1]) / bps)),
            qgpu_arg_uint("cr_offset", (cl_uint)((offset + fmt->plane_offset[2]) / bps)),
            qgpu_arg_uint("n", n),
        };
        err = qgpu_launch(ctx, slot, ctx->split_chroma, "pipeline: split NV12 chroma", args,
                          QGPU_ARRAY_SIZE(args), 1, &global, &local);
    }
    return err;
}
