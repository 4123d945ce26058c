/*
 * The frame pipeline: N slots, each holding one frame pair on its way
 * through the device.
 *
 *   submit:  copy planes into the slot's pinned staging buffer, enqueue the
 *            upload on the upload queue, a barrier on the compute queue of
 *            the slot's lane that waits for it, every feature's kernels,
 *            and one read of the slot's results into pinned host memory.
 *            No host wait. Slot i runs on lane i % lanes (lanes_create()).
 *   collect: wait for the slot's readback event (the only wait of the
 *            frame), let every feature turn its partial sums into scores,
 *            finalise frames whose look-ahead is satisfied, run the model
 *            hooks, hand frames out in order.
 *
 * qgpu_submit_cl() (external.c) replaces the staging and upload by copies
 * on the device from the caller's OpenCL images into the same buffers, in
 * the same layout (pipeline.h has the shared steps), so features see no
 * difference.
 *
 * Frame n is "processed" when its device work is read back and collected,
 * and "final" when frame n + max_lookahead is processed (or at flush).
 */
#include <stdlib.h>
#include <string.h>

#include "copy_pool.h"
#include "fault.h"
#include "internal.h"
#include "pipeline.h"

static int layout_valid(int layout)
{
    return layout == QGPU_LAYOUT_420 || layout == QGPU_LAYOUT_422 ||
           layout == QGPU_LAYOUT_444 || layout == QGPU_LAYOUT_400 ||
           layout == QGPU_LAYOUT_NV12;
}

static const char *layout_name(int layout)
{
    static const char *const names[] = {"4:2:0", "4:2:2", "4:4:4", "4:0:0", "NV12 4:2:0"};
    return layout_valid(layout) ? names[layout] : "invalid";
}

void qgpu_format_from_picture(QgpuVideoFormat *fmt, const QgpuPicture *pic)
{
    /* semi-planar input is planar 4:2:0 once on the device */
    int layout = pic->layout == QGPU_LAYOUT_NV12 ? QGPU_LAYOUT_420 : pic->layout;
    int ss_x = layout == QGPU_LAYOUT_420 || layout == QGPU_LAYOUT_422;
    int ss_y = layout == QGPU_LAYOUT_420;
    size_t offset = 0;

    memset(fmt, 0, sizeof(*fmt));
    fmt->width = pic->width;
    fmt->height = pic->height;
    fmt->layout = layout;
    fmt->bitdepth = pic->bitdepth;
    fmt->bytes_per_sample = pic->bitdepth > 8 ? 2 : 1;
    fmt->nb_planes = layout == QGPU_LAYOUT_400 ? 1 : 3;
    for (int p = 0; p < fmt->nb_planes; p++) {
        int chroma = p > 0;
        fmt->plane_w[p] = chroma && ss_x ? (pic->width + 1) / 2 : pic->width;
        fmt->plane_h[p] = chroma && ss_y ? (pic->height + 1) / 2 : pic->height;
        fmt->vmaf_plane_w[p] = chroma && ss_x ? pic->width / 2 : pic->width;
        fmt->vmaf_plane_h[p] = chroma && ss_y ? pic->height / 2 : pic->height;
        fmt->plane_offset[p] = offset;
        offset += (size_t)fmt->plane_w[p] * fmt->plane_h[p] * fmt->bytes_per_sample;
    }
    fmt->frame_bytes = offset;
}

/* Geometry always; the data pointers and strides of host pictures. */
int qgpu_picture_check(QgpuContext *ctx, const QgpuPicture *pic, const char *which,
                       int check_data)
{
    QgpuVideoFormat fmt;
    if (!pic)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "%s picture is NULL", which);
    if (pic->width <= 0 || pic->height <= 0 || pic->width > 32768 || pic->height > 32768)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "%s picture: size %dx%d out of range",
                          which, pic->width, pic->height);
    if (!layout_valid(pic->layout))
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED, "%s picture: unknown layout %d", which,
                          pic->layout);
    if (pic->bitdepth < 8 || pic->bitdepth > 16)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "%s picture: bit depth %d unsupported (8..16)", which, pic->bitdepth);
    qgpu_format_from_picture(&fmt, pic);
    for (int p = 0; p < fmt.nb_planes && check_data; p++) {
        ptrdiff_t row = (ptrdiff_t)fmt.plane_w[p] * fmt.bytes_per_sample;
        if (pic->layout == QGPU_LAYOUT_NV12 && p == 2)
            break; /* no third plane */
        if (pic->layout == QGPU_LAYOUT_NV12 && p == 1)
            row *= 2; /* Cb Cr pairs */
        if (!pic->data[p])
            return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "%s picture: plane %d is NULL",
                              which, p);
        if (pic->stride[p] < row)
            return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                              "%s picture: plane %d stride %td is smaller than its row "
                              "(%td bytes)",
                              which, p, pic->stride[p], row);
    }
    return 0;
}

static int same_geometry(const QgpuPicture *a, const QgpuPicture *b)
{
    return a->width == b->width && a->height == b->height && a->layout == b->layout &&
           a->bitdepth == b->bitdepth;
}

static unsigned feature_flags(const QgpuFeature *f)
{
    return f->cls->dynamic_flags ? f->cls->dynamic_flags(f) : f->cls->flags;
}

static int needs_chroma(const QgpuContext *ctx)
{
    for (int i = 0; i < ctx->nb_features; i++)
        if (feature_flags(ctx->features[i]) & QGPU_FEATURE_NEEDS_CHROMA)
            return 1;
    return 0;
}

/* Lanes: frames on several in-order compute queues, so that the small
 * launches of one frame overlap another frame's kernels. Only when every
 * feature keeps its scratch per lane; never more lanes than slots. The
 * default is 4 (measured best, doc/performance.md) but at most one per
 * 4 GiB of device memory: each lane holds its own scratch, ~1.6 GB at
 * 2160p with every feature by the buffer sizes. On a CPU device the
 * default is one lane: there each kernel already spreads over every core,
 * and PoCL 3.1 (Debian 12) can abort when two kernels of one program with
 * the same work-group size but grids of different sizes run at once (its
 * compiled-kernel cache finds a finished kernel's entry without the grid
 * specialisation; tool/batch.c, device_limit). QGPU_LANES=1..4 sets it
 * (measurements, tests). */
static int lanes_create(QgpuContext *ctx)
{
    const char *env = getenv("QGPU_LANES");
    int n = QGPU_MAX_LANES;
    if (env && *env) {
        n = atoi(env);
    } else {
        cl_ulong mem = 0;
        cl_device_type type = 0;
        clGetDeviceInfo(ctx->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, NULL);
        clGetDeviceInfo(ctx->device, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
        if ((mem >> 32) < (cl_ulong)n)
            n = (int)(mem >> 32);
        if (type & CL_DEVICE_TYPE_CPU)
            n = 1;
    }
    n = n < 1 ? 1 : n > QGPU_MAX_LANES ? QGPU_MAX_LANES : n;
    n = n > ctx->slot_count ? ctx->slot_count : n;
    for (int i = 0; i < ctx->nb_features; i++)
        if (!(feature_flags(ctx->features[i]) & QGPU_FEATURE_LANES))
            n = 1;
    ctx->lane_queue[0] = ctx->compute_queue;
    for (ctx->nb_lanes = 1; ctx->nb_lanes < n; ctx->nb_lanes++) {
        cl_int status;
        cl_command_queue q = clCreateCommandQueue(
            ctx->cl, ctx->device, ctx->profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &status);
        if (status != CL_SUCCESS)
            return qgpu_cl_error(ctx, status, "clCreateCommandQueue(lane)");
        ctx->lane_queue[ctx->nb_lanes] = q;
    }
    return 0;
}

int qgpu_results_reserve(QgpuContext *ctx, size_t bytes, size_t *offset)
{
    if (ctx->slots[0].results)
        return qgpu_error(ctx, QGPU_ERR_STATE, "internal: results reserved after start");
    *offset = ctx->results_bytes;
    ctx->results_bytes += (bytes + 7) & ~(size_t)7;
    return 0;
}

/* Pinned host memory: a buffer allocated by the driver and mapped once. */
static int pinned_create(QgpuContext *ctx, size_t bytes, cl_mem *buffer, void **host)
{
    cl_int status;
    *buffer = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL,
                             &status);
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clCreateBuffer(pinned)");
    *host = clEnqueueMapBuffer(ctx->upload_queue, *buffer, CL_TRUE,
                               CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &status);
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clEnqueueMapBuffer(pinned)");
    return 0;
}

static int slots_create(QgpuContext *ctx)
{
    int err;
    for (int i = 0; i < ctx->slot_count; i++) {
        QgpuSlot *slot = &ctx->slots[i];
        slot->index = i;
        slot->lane = i % ctx->nb_lanes;
        err = pinned_create(ctx, 2 * ctx->upload_bytes, &slot->staging, &slot->staging_host);
        if (!err)
            err = qgpu_buffer_create(ctx, ctx->device_bytes, &slot->ref);
        if (!err)
            err = qgpu_buffer_create(ctx, ctx->device_bytes, &slot->dist);
        if (!err && ctx->widen)
            err = qgpu_buffer_create(ctx, 2 * ctx->upload_bytes, &slot->raw);
        if (!err && ctx->split_chroma)
            err = qgpu_buffer_create(ctx, 2 * qgpu_interleaved_bytes(ctx), &slot->interleaved);
        if (!err)
            err = qgpu_buffer_create(ctx, ctx->results_bytes ? ctx->results_bytes : 8,
                                     &slot->results);
        if (!err)
            err = pinned_create(ctx, ctx->results_bytes ? ctx->results_bytes : 8,
                                &slot->results_pinned, &slot->results_host);
        if (err)
            return err;
    }
    return 0;
}

void qgpu_pipeline_release(QgpuContext *ctx)
{
    for (int i = 0; i < QGPU_MAX_SLOTS; i++) {
        QgpuSlot *slot = &ctx->slots[i];
        if (slot->done)
            clReleaseEvent(slot->done);
        if (slot->staging_host)
            clEnqueueUnmapMemObject(ctx->upload_queue, slot->staging, slot->staging_host, 0,
                                    NULL, NULL);
        if (slot->results_host)
            clEnqueueUnmapMemObject(ctx->upload_queue, slot->results_pinned,
                                    slot->results_host, 0, NULL, NULL);
        if (ctx->upload_queue && (slot->staging_host || slot->results_host))
            clFinish(ctx->upload_queue);
        qgpu_buffer_release(&slot->staging);
        qgpu_buffer_release(&slot->results_pinned);
        qgpu_buffer_release(&slot->ref);
        qgpu_buffer_release(&slot->dist);
        qgpu_buffer_release(&slot->results);
        qgpu_buffer_release(&slot->raw);
        qgpu_buffer_release(&slot->interleaved);
        qgpu_pinned_slot_release(slot);
        qgpu_profile_slot_free(slot);
        memset(slot, 0, sizeof(*slot));
    }
    qgpu_kernel_release(&ctx->widen);
    qgpu_kernel_release(&ctx->shift_down);
    qgpu_kernel_release(&ctx->split_chroma);
}

/* The format is known (qgpu_start, else the first submit): set up
 * features, hooks and slots. */
static int start(QgpuContext *ctx, const QgpuPicture *pic)
{
    int err, chroma = needs_chroma(ctx);
    qgpu_format_from_picture(&ctx->in_fmt, pic);
    ctx->fmt = ctx->in_fmt;
    ctx->in_layout = pic->layout;
    ctx->in_shift = pic->layout == QGPU_LAYOUT_NV12 && pic->bitdepth > 8 ? 16 - pic->bitdepth : 0;
    if (ctx->compute_bitdepth > pic->bitdepth) {
        /* 8-bit input scored at a higher depth: widened on the device */
        QgpuPicture wide = *pic;
        if (pic->bitdepth != 8)
            return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                              "computing at %d bits needs 8-bit input (got %d-bit)",
                              ctx->compute_bitdepth, pic->bitdepth);
        wide.bitdepth = ctx->compute_bitdepth;
        qgpu_format_from_picture(&ctx->fmt, &wide);
    }
    /* only the planes some feature reads cross the bus */
    ctx->upload_bytes = chroma || ctx->in_fmt.nb_planes == 1 ? ctx->in_fmt.frame_bytes
                                                             : ctx->in_fmt.plane_offset[1];
    ctx->device_bytes = chroma || ctx->fmt.nb_planes == 1 ? ctx->fmt.frame_bytes
                                                          : ctx->fmt.plane_offset[1];
    if (ctx->fmt.bitdepth != ctx->in_fmt.bitdepth) {
        cl_program program;
        err = qgpu_program_get(ctx, "convert", NULL, &program);
        if (!err)
            err = qgpu_kernel_create(ctx, program, "widen_8_to_16", &ctx->widen);
        if (err)
            return err;
    }
    if (ctx->in_layout == QGPU_LAYOUT_NV12 && chroma) {
        err = qgpu_split_chroma_create(ctx);
        if (err)
            return err;
    }
    err = lanes_create(ctx);
    if (err)
        return err;
    for (int i = 0; i < ctx->nb_features; i++) {
        QgpuFeature *f = ctx->features[i];
        f->fmt = &ctx->fmt;
        err = f->cls->init(f, &ctx->fmt);
        if (err)
            return err;
    }
    for (int i = 0; i < ctx->nb_hooks; i++) {
        if (ctx->hooks[i].init) {
            err = ctx->hooks[i].init(ctx->hooks[i].opaque, ctx, &ctx->fmt);
            if (err)
                return err;
        }
    }
    for (int i = 0; i < ctx->nb_hooks; i++) {
        if (ctx->hooks[i].init_late) {
            err = ctx->hooks[i].init_late(ctx->hooks[i].opaque, ctx, &ctx->fmt);
            if (err)
                return err;
        }
    }
    err = slots_create(ctx);
    if (err)
        return err;
    if (qgpu_copy_pool_create(&ctx->copy_pool, qgpu_copy_pool_default_threads()))
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory (copy threads)");
    ctx->started = true;
    qgpu_log(ctx, QGPU_LOG_DEBUG, "%dx%d %s %d-bit (scored at %d bits), %zu bytes uploaded per "
             "picture", ctx->fmt.width, ctx->fmt.height, layout_name(ctx->in_layout),
             ctx->in_fmt.bitdepth, ctx->fmt.bitdepth, ctx->upload_bytes);
    return 0;
}

/* Adds copy tasks for the planes the device needs (packed, in staging). */
static int stage_tasks(const QgpuContext *ctx, const QgpuPicture *pic, unsigned char *dst,
                       QgpuCopyTask *tasks)
{
    const QgpuVideoFormat *fmt = &ctx->in_fmt;
    int n = 0;
    for (int p = 0; p < fmt->nb_planes; p++) {
        if (fmt->plane_offset[p] >= ctx->upload_bytes)
            break;
        tasks[n].dst = dst + fmt->plane_offset[p];
        tasks[n].src = pic->data[p];
        tasks[n].row_bytes = (size_t)fmt->plane_w[p] * fmt->bytes_per_sample;
        tasks[n].src_stride = pic->stride[p];
        tasks[n].rows = fmt->plane_h[p];
        n++;
        if (ctx->in_layout == QGPU_LAYOUT_NV12 && p == 1) {
            /* the Cb Cr pairs, packed where planes 1 and 2 go */
            tasks[n - 1].row_bytes *= 2;
            break;
        }
    }
    return n;
}

/* Copies both pictures into the slot's pinned staging memory. */
static void stage_pair(QgpuContext *ctx, const QgpuPicture *ref, const QgpuPicture *dist,
                       unsigned char *staging)
{
    QgpuCopyTask tasks[6];
    int n = stage_tasks(ctx, ref, staging, tasks);
    n += stage_tasks(ctx, dist, staging + ctx->upload_bytes, tasks + n);
    /* small frames: threads cost more than they save */
    qgpu_copy_pool_run(ctx->upload_bytes >= (1u << 20) ? ctx->copy_pool : NULL, tasks, n);
}

/* 8-bit samples of both pictures -> 16-bit samples << shift (one launch). */
static int widen(QgpuContext *ctx, QgpuSlot *slot)
{
    cl_uint n = (cl_uint)ctx->upload_bytes;
    size_t global[2] = {qgpu_round_up(n, 256), 2}, local[2] = {256, 1};
    const QgpuArg args[] = {
        qgpu_arg_mem("raw", slot->raw),
        qgpu_arg_mem("ref", slot->ref),
        qgpu_arg_mem("dist", slot->dist),
        qgpu_arg_uint("n", n),
        qgpu_arg_int("shift", ctx->fmt.bitdepth - ctx->in_fmt.bitdepth),
    };
    return qgpu_launch(ctx, slot, ctx->widen, "pipeline: widen to compute depth", args,
                       QGPU_ARRAY_SIZE(args), 2, global, local);
}

/* Enqueues the upload of the staged pair; *uploaded: its last write. */
static int upload_host(QgpuContext *ctx, QgpuSlot *slot, cl_event *uploaded)
{
    unsigned char *staging = slot->staging_host;
    size_t offset;
    cl_mem ref = qgpu_submit_target(ctx, slot, 0, &offset);
    cl_mem dist = qgpu_submit_target(ctx, slot, 1, &offset);
    cl_int status;

    if (ctx->split_chroma) {
        status = qgpu_upload_semiplanar(ctx, slot, uploaded);
    } else if (ctx->widen) {
        /* both pictures, 8-bit, into one raw buffer; widened on the device */
        status = clEnqueueWriteBuffer(ctx->upload_queue, ref, CL_FALSE, 0,
                                      2 * ctx->upload_bytes, staging, 0, NULL, uploaded);
    } else {
        status = clEnqueueWriteBuffer(ctx->upload_queue, ref, CL_FALSE, 0, ctx->upload_bytes,
                                      staging, 0, NULL, NULL);
        if (status == CL_SUCCESS)
            status = clEnqueueWriteBuffer(ctx->upload_queue, dist, CL_FALSE, 0,
                                          ctx->upload_bytes, staging + ctx->upload_bytes, 0,
                                          NULL, uploaded);
    }
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clEnqueueWriteBuffer(frame upload)");
    return 0;
}

cl_mem qgpu_submit_target(QgpuContext *ctx, const QgpuSlot *slot, int which, size_t *offset)
{
    if (ctx->widen) {
        *offset = which ? ctx->upload_bytes : 0;
        return slot->raw;
    }
    *offset = 0;
    return which ? slot->dist : slot->ref;
}

/* 16-bit samples of one picture >> shift, in place (qgpu_submit_cl's
 * MSB-aligned input). The kernel is made at the first need. */
static int shift_down(QgpuContext *ctx, QgpuSlot *slot, cl_mem buffer, int shift)
{
    cl_uint n = (cl_uint)(ctx->upload_bytes / 2);
    size_t local = 256, global = qgpu_round_up(n, 256);
    if (!ctx->shift_down) {
        cl_program program;
        int err = qgpu_program_get(ctx, "external", NULL, &program);
        if (!err)
            err = qgpu_kernel_create(ctx, program, "shift_down_16", &ctx->shift_down);
        if (err)
            return err;
    }
    const QgpuArg args[] = {
        qgpu_arg_mem("samples", buffer),
        qgpu_arg_uint("n", n),
        qgpu_arg_int("shift", shift),
    };
    return qgpu_launch(ctx, slot, ctx->shift_down, "pipeline: MSB-aligned input to low bits",
                       args, QGPU_ARRAY_SIZE(args), 1, &global, &local);
}

int qgpu_submit_enqueue(QgpuContext *ctx, QgpuSlot *slot, cl_event uploaded, const int shift[2])
{
    cl_command_queue queue = qgpu_slot_queue(ctx, slot);
    cl_int status;
    int err = 0;

    /* The upload queue runs ahead; make sure it is submitted to the device. */
    clFlush(ctx->upload_queue);
    status = clEnqueueBarrierWithWaitList(queue, 1, &uploaded, NULL);
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clEnqueueBarrierWithWaitList");
    if (ctx->split_chroma)
        err = qgpu_split_chroma(ctx, slot);
    for (int i = 0; i < 2 && !err; i++) {
        size_t offset;
        if (shift && shift[i] > 0)
            err = shift_down(ctx, slot, qgpu_submit_target(ctx, slot, i, &offset), shift[i]);
    }
    if (!err && ctx->widen)
        err = widen(ctx, slot);
    for (int i = 0; i < ctx->nb_features && !err; i++)
        err = ctx->features[i]->cls->enqueue(ctx->features[i], slot);
    if (err)
        return err;
    status = clEnqueueReadBuffer(queue, slot->results, CL_FALSE, 0,
                                 ctx->results_bytes ? ctx->results_bytes : 8,
                                 slot->results_host, 0, NULL, &slot->done);
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clEnqueueReadBuffer(results)");
    clFlush(queue);
    ctx->submitted++;
    return 0;
}

/* Frames whose look-ahead is satisfied become final (hooks run first). */
static int finalize_ready(QgpuContext *ctx, int all)
{
    while (ctx->finalized < ctx->processed &&
           (all || ctx->finalized + ctx->max_lookahead < ctx->processed)) {
        for (int i = 0; i < ctx->nb_hooks; i++) {
            int err = ctx->hooks[i].run(ctx->hooks[i].opaque, ctx, ctx->finalized);
            if (err)
                return err;
        }
        ctx->finalized++;
    }
    return 0;
}

/* Waits for the oldest in-flight frame and collects its scores. */
static int process_oldest(QgpuContext *ctx)
{
    unsigned frame = ctx->processed;
    int index = frame % ctx->slot_count;
    QgpuSlot *slot = &ctx->slots[index];
    cl_int exec_status = CL_COMPLETE;
    double t = qgpu_timing_now(ctx);
    cl_int status = qgpu_fault_frame_wait(clWaitForEvents(1, &slot->done));

    qgpu_timing_add(ctx, QGPU_TIMING_RESULTS, t);
    clGetEventInfo(slot->done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(exec_status),
                   &exec_status, NULL);
    clReleaseEvent(slot->done);
    slot->done = NULL;
    if (status == CL_SUCCESS && exec_status >= 0)
        qgpu_pinned_slot_release(slot); /* the upload came before the results */
    if (status != CL_SUCCESS || exec_status < 0)
        return qgpu_cl_error(ctx, status != CL_SUCCESS ? status : exec_status,
                             "frame execution on the device");
    if (ctx->profiling)
        qgpu_profile_collect(ctx, slot);
    t = qgpu_timing_now(ctx);
    for (int i = 0; i < ctx->nb_features; i++) {
        int err = ctx->features[i]->cls->collect(ctx->features[i], slot);
        if (err)
            return err;
    }
    ctx->processed++;
    int err = finalize_ready(ctx, 0);
    qgpu_timing_add(ctx, QGPU_TIMING_COLLECT, t);
    return err;
}

static int oldest_done(const QgpuContext *ctx)
{
    cl_int exec_status = CL_QUEUED;
    const QgpuSlot *slot = &ctx->slots[ctx->processed % ctx->slot_count];
    clGetEventInfo(slot->done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(exec_status),
                   &exec_status, NULL);
    return exec_status == CL_COMPLETE || exec_status < 0;
}

/* A failed step leaves the device queues in an unknown state: stop. */
int qgpu_submit_failed(QgpuContext *ctx, int err)
{
    ctx->failed = true;
    return err;
}

static int fail(QgpuContext *ctx, int err)
{
    return qgpu_submit_failed(ctx, err);
}

static int usable(QgpuContext *ctx)
{
    if (ctx->failed)
        return qgpu_error(ctx, QGPU_ERR_STATE,
                          "the context failed earlier and can only be closed");
    return 0;
}

int qgpu_submit_check(QgpuContext *ctx, const QgpuPicture *ref, const QgpuPicture *dist,
                      int check_data)
{
    int err;
    if ((err = usable(ctx)))
        return err;
    if (ctx->flushed)
        return qgpu_error(ctx, QGPU_ERR_STATE, "submit after flush");
    if (ctx->nb_features == 0)
        return qgpu_error(ctx, QGPU_ERR_STATE, "no feature enabled (qgpu_enable_feature)");
    if ((err = qgpu_picture_check(ctx, ref, "reference", check_data)) ||
        (err = qgpu_picture_check(ctx, dist, "distorted", check_data)))
        return err;
    if (!same_geometry(ref, dist))
        return qgpu_error(ctx, QGPU_ERR_MISMATCH,
                          "reference is %dx%d %s %d-bit but distorted is %dx%d %s %d-bit; "
                          "scale or convert one (e.g. scale=W:H:flags=bicubic)",
                          ref->width, ref->height, layout_name(ref->layout), ref->bitdepth,
                          dist->width, dist->height, layout_name(dist->layout),
                          dist->bitdepth);
    return 0;
}

/* Whether pic has the format the stream started with. */
static int started_as(const QgpuContext *ctx, const QgpuPicture *pic)
{
    return pic->width == ctx->in_fmt.width && pic->height == ctx->in_fmt.height &&
           pic->layout == ctx->in_layout && pic->bitdepth == ctx->in_fmt.bitdepth;
}

int qgpu_start(QgpuContext *ctx, int width, int height, int layout, int bitdepth)
{
    QgpuPicture pic = {.width = width, .height = height, .layout = layout,
                       .bitdepth = bitdepth};
    int err;

    if (!ctx)
        return QGPU_ERR_INVALID_ARG;
    if ((err = usable(ctx)))
        return err;
    if (ctx->flushed)
        return qgpu_error(ctx, QGPU_ERR_STATE, "start after flush");
    if (ctx->nb_features == 0)
        return qgpu_error(ctx, QGPU_ERR_STATE, "no feature enabled (qgpu_enable_feature)");
    if ((err = qgpu_picture_check(ctx, &pic, "start", 0)))
        return err;
    if (ctx->started) {
        if (started_as(ctx, &pic))
            return 0; /* the same format again: nothing to do */
        return qgpu_error(ctx, QGPU_ERR_MISMATCH,
                          "start as %dx%d %s %d-bit but the stream started as %dx%d %s %d-bit",
                          width, height, layout_name(layout), bitdepth, ctx->in_fmt.width,
                          ctx->in_fmt.height, layout_name(ctx->in_layout),
                          ctx->in_fmt.bitdepth);
    }
    err = start(ctx, &pic);
    return err ? fail(ctx, err) : 0;
}

int qgpu_submit_slot(QgpuContext *ctx, const QgpuPicture *ref, QgpuSlot **out)
{
    QgpuSlot *slot;
    int err;

    if (!ctx->started) {
        err = start(ctx, ref);
        if (err)
            return fail(ctx, err);
    } else if (!started_as(ctx, ref)) {
        return qgpu_error(ctx, QGPU_ERR_MISMATCH,
                          "frame %u is %dx%d %s %d-bit but the stream started as %dx%d %s "
                          "%d-bit%s",
                          ctx->submitted, ref->width, ref->height, layout_name(ref->layout),
                          ref->bitdepth, ctx->in_fmt.width, ctx->in_fmt.height,
                          layout_name(ctx->in_layout), ctx->in_fmt.bitdepth,
                          ctx->submitted ? "" : " (qgpu_start)");
    }
    /* every slot busy: the oldest frame must leave the device first */
    if (ctx->submitted - ctx->processed >= (unsigned)ctx->slot_count) {
        err = process_oldest(ctx);
        if (err)
            return fail(ctx, err);
    }
    slot = &ctx->slots[ctx->submitted % ctx->slot_count];
    slot->frame_index = ctx->submitted;
    err = qgpu_scores_add_frame(ctx, ctx->submitted);
    if (err)
        return fail(ctx, err);
    *out = slot;
    return 0;
}

int qgpu_submit(QgpuContext *ctx, const QgpuPicture *ref, const QgpuPicture *dist)
{
    QgpuSlot *slot;
    cl_event uploaded = NULL;
    int err, shift[2];

    if (!ctx)
        return QGPU_ERR_INVALID_ARG;
    if ((err = qgpu_submit_check(ctx, ref, dist, 1)) || (err = qgpu_submit_slot(ctx, ref, &slot)))
        return err;
    stage_pair(ctx, ref, dist, slot->staging_host);
    err = upload_host(ctx, slot, &uploaded);
    shift[0] = shift[1] = ctx->in_shift;
    if (!err)
        err = qgpu_submit_enqueue(ctx, slot, uploaded, shift);
    if (uploaded)
        clReleaseEvent(uploaded);
    if (err)
        return fail(ctx, err);
    ctx->frames_from_host++;
    return 0;
}

int qgpu_collect(QgpuContext *ctx, unsigned *frame_index, int wait)
{
    int err;
    if (!ctx || !frame_index)
        return QGPU_ERR_INVALID_ARG;
    if ((err = usable(ctx)))
        return err;
    if (ctx->started)
        qgpu_pinned_slots_poll(ctx);
    while (ctx->delivered >= ctx->finalized && ctx->processed < ctx->submitted) {
        if (!wait && !oldest_done(ctx))
            return 0;
        err = process_oldest(ctx);
        if (err)
            return fail(ctx, err);
    }
    if (ctx->delivered >= ctx->finalized)
        return 0;
    *frame_index = ctx->delivered++;
    return 1;
}

int qgpu_flush(QgpuContext *ctx)
{
    int err;
    if (!ctx)
        return QGPU_ERR_INVALID_ARG;
    if ((err = usable(ctx)))
        return err;
    if (ctx->flushed)
        return 0;
    while (ctx->processed < ctx->submitted) {
        err = process_oldest(ctx);
        if (err)
            return fail(ctx, err);
    }
    for (int i = 0; i < ctx->nb_features; i++) {
        QgpuFeature *f = ctx->features[i];
        if (f->cls->flush && ctx->started) {
            err = f->cls->flush(f);
            if (err)
                return fail(ctx, err);
        }
    }
    err = finalize_ready(ctx, 1);
    if (err)
        return fail(ctx, err);
    qgpu_timing_report(ctx);
    ctx->flushed = true;
    return 0;
}
