/*
 * Pictures in pinned host memory (qgpu_pinned_*, qgpu_submit_pinned).
 *
 * A block is a CL_MEM_ALLOC_HOST_PTR buffer mapped once: page-locked
 * memory the driver allocated, which NVIDIA's clEnqueueWriteBuffer DMAs
 * from directly. qgpu_submit_pinned() enqueues one write per plane (or
 * per run of planes that follow one another in the block and on the
 * device) from the caller's pointers into the slot's buffers, where
 * qgpu_submit() would have written its staging copy: the rest of the
 * frame (barrier, split, shift, widening, features) is the same
 * (pipeline.h).
 *
 * Each block has its own command queue for its map and unmap, so that it
 * may outlive the context that allocated it (FFmpeg frames are often freed
 * after the scoring context is closed). The slot keeps a reference to the
 * pair's blocks and the event of the pair's last write; they are dropped
 * when that event is found complete (qgpu_pinned_slots_poll, at every
 * submit and collect) or when the frame's results are read (the results
 * come after the upload), or at close (after the queues finish).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"
#include "pipeline.h"

struct QgpuPinned {
    atomic_int refs;
    atomic_int in_flight;   /* submits whose upload is not yet released */
    cl_context cl;          /* retained */
    cl_command_queue queue; /* the block's own, for its map and unmap */
    cl_mem buffer;
    void *host;             /* the mapping */
    unsigned char *data;    /* its first BLOCK_ALIGN-aligned byte */
    size_t size;            /* bytes from data, as asked for */
};

#define BLOCK_ALIGN 64

static void block_free(QgpuPinned *block)
{
    if (block->host) {
        clEnqueueUnmapMemObject(block->queue, block->buffer, block->host, 0, NULL, NULL);
        clFinish(block->queue);
    }
    if (block->buffer)
        clReleaseMemObject(block->buffer);
    if (block->queue)
        clReleaseCommandQueue(block->queue);
    if (block->cl)
        clReleaseContext(block->cl);
    free(block);
}

int qgpu_pinned_alloc(QgpuContext *ctx, size_t size, QgpuPinned **out)
{
    QgpuPinned *block;
    cl_int status;
    int err = 0;

    if (!ctx || !out)
        return QGPU_ERR_INVALID_ARG;
    *out = NULL;
    if (size == 0)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "qgpu_pinned_alloc: size 0");
    block = calloc(1, sizeof(*block));
    if (!block)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    atomic_init(&block->refs, 1);
    atomic_init(&block->in_flight, 0);
    block->size = size;
    block->cl = ctx->cl;
    clRetainContext(block->cl);
    block->queue = clCreateCommandQueue(ctx->cl, ctx->device, 0, &status);
    if (status != CL_SUCCESS) {
        block->queue = NULL;
        err = qgpu_cl_error(ctx, status, "clCreateCommandQueue(pinned block)");
    }
    if (!err) {
        /* room to align the start, whatever alignment the driver maps at */
        block->buffer = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                       size + BLOCK_ALIGN, NULL, &status);
        if (status != CL_SUCCESS) {
            block->buffer = NULL;
            err = qgpu_cl_error(ctx, status, "clCreateBuffer(pinned block)");
        }
    }
    if (!err) {
        block->host = clEnqueueMapBuffer(block->queue, block->buffer, CL_TRUE,
                                         CL_MAP_READ | CL_MAP_WRITE, 0, size + BLOCK_ALIGN, 0,
                                         NULL, NULL, &status);
        if (status != CL_SUCCESS) {
            block->host = NULL;
            err = qgpu_cl_error(ctx, status, "clEnqueueMapBuffer(pinned block)");
        } else {
            unsigned char *host = block->host;
            block->data = host + (-(uintptr_t)host & (BLOCK_ALIGN - 1));
        }
    }
    if (err) {
        block_free(block);
        return err;
    }
    *out = block;
    return 0;
}

void *qgpu_pinned_data(const QgpuPinned *block)
{
    return block ? block->data : NULL;
}

size_t qgpu_pinned_size(const QgpuPinned *block)
{
    return block ? block->size : 0;
}

QgpuPinned *qgpu_pinned_ref(QgpuPinned *block)
{
    if (block)
        atomic_fetch_add(&block->refs, 1);
    return block;
}

void qgpu_pinned_unref(QgpuPinned **pblock)
{
    QgpuPinned *block;
    if (!pblock || !*pblock)
        return;
    block = *pblock;
    *pblock = NULL;
    if (atomic_fetch_sub(&block->refs, 1) == 1)
        block_free(block);
}

int qgpu_pinned_in_use(const QgpuPinned *block)
{
    return block && atomic_load(&((QgpuPinned *)block)->in_flight) > 0;
}

static size_t round_up(size_t n, size_t align)
{
    return (n + align - 1) / align * align;
}

int qgpu_pinned_picture_alloc(QgpuContext *ctx, int width, int height, int layout,
                              int bitdepth, int align, size_t padding, QgpuPicture *pic,
                              QgpuPinned **out)
{
    QgpuPicture geometry = {.width = width, .height = height, .layout = layout,
                            .bitdepth = bitdepth};
    QgpuVideoFormat fmt;
    size_t offset[3], stride[3], rows[3], total = 0, start;
    int nb_planes, err;
    unsigned char *base;

    if (!ctx || !pic || !out)
        return QGPU_ERR_INVALID_ARG;
    *out = NULL;
    if (align == 0)
        align = 64;
    if (align < 0 || (align & (align - 1)) || align > 65536)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                          "qgpu_pinned_picture_alloc: align %d is not a power of two", align);
    /* the geometry checks of a submit, without the planes */
    if ((err = qgpu_picture_check(ctx, &geometry, "pinned", 0)))
        return err;
    qgpu_format_from_picture(&fmt, &geometry);
    nb_planes = layout == QGPU_LAYOUT_NV12 ? 2 : fmt.nb_planes;
    for (int p = 0; p < nb_planes; p++) {
        size_t row = (size_t)fmt.plane_w[p] * fmt.bytes_per_sample;
        if (layout == QGPU_LAYOUT_NV12 && p == 1)
            row *= 2; /* Cb Cr pairs */
        stride[p] = round_up(row, (size_t)align);
        rows[p] = (size_t)fmt.plane_h[p];
        offset[p] = round_up(total, (size_t)align);
        total = offset[p] + stride[p] * rows[p];
    }
    /* room to align the first plane beyond the block's own alignment */
    err = qgpu_pinned_alloc(ctx, total + padding + (align > BLOCK_ALIGN ? (size_t)align : 0),
                            out);
    if (err)
        return err;
    base = qgpu_pinned_data(*out);
    start = (size_t)(-(uintptr_t)base & (uintptr_t)(align - 1));
    *pic = geometry;
    for (int p = 0; p < nb_planes; p++) {
        pic->data[p] = base + start + offset[p];
        pic->stride[p] = (ptrdiff_t)stride[p];
    }
    return 0;
}

/* One upload: rows of row_bytes from src (stride apart) to buffer at
 * offset, packed. */
typedef struct PinnedWrite {
    cl_mem buffer;
    size_t offset;
    const unsigned char *src;
    size_t row_bytes;
    size_t stride;
    size_t rows;
} PinnedWrite;

static size_t plane_row(const QgpuVideoFormat *fmt, int layout, int p)
{
    size_t row = (size_t)fmt->plane_w[p] * fmt->bytes_per_sample;
    return layout == QGPU_LAYOUT_NV12 && p == 1 ? 2 * row : row;
}

/* Every plane of pic inside the block (no state change). */
static int check_inside(QgpuContext *ctx, const QgpuPicture *pic, const QgpuPinned *block,
                        const char *which)
{
    QgpuVideoFormat fmt;
    const unsigned char *lo, *hi;
    int nb_planes;

    if (!block)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "%s picture: no pinned block", which);
    if (block->cl != ctx->cl)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                          "%s picture: its pinned block belongs to another OpenCL context",
                          which);
    lo = block->data;
    hi = lo + block->size;
    qgpu_format_from_picture(&fmt, pic);
    nb_planes = pic->layout == QGPU_LAYOUT_NV12 ? 2 : fmt.nb_planes;
    for (int p = 0; p < nb_planes; p++) {
        const unsigned char *first = pic->data[p];
        size_t extent = (size_t)pic->stride[p] * (size_t)(fmt.plane_h[p] - 1) +
                        plane_row(&fmt, pic->layout, p);
        if (first < lo || first > hi || extent > (size_t)(hi - first))
            return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                              "%s picture: plane %d is not inside its pinned block", which, p);
    }
    return 0;
}

/* The writes of picture `which`: the planes the device reads, where
 * qgpu_submit()'s staged copy would go. Returns their number. */
static int picture_writes(QgpuContext *ctx, QgpuSlot *slot, const QgpuPicture *pic, int which,
                          PinnedWrite *w)
{
    const QgpuVideoFormat *fmt = &ctx->in_fmt;
    size_t offset;
    cl_mem target = qgpu_submit_target(ctx, slot, which, &offset);
    int n = 0;

    for (int p = 0; p < fmt->nb_planes; p++) {
        if (fmt->plane_offset[p] >= ctx->upload_bytes)
            break;
        w[n].buffer = target;
        w[n].offset = offset + fmt->plane_offset[p];
        w[n].src = pic->data[p];
        w[n].row_bytes = plane_row(fmt, ctx->in_layout, p);
        w[n].stride = (size_t)pic->stride[p];
        w[n].rows = (size_t)fmt->plane_h[p];
        if (ctx->in_layout == QGPU_LAYOUT_NV12 && p == 1) {
            /* the pairs, split on the device (semiplanar.c) */
            w[n].buffer = slot->interleaved;
            w[n].offset = (size_t)which * qgpu_interleaved_bytes(ctx);
            n++;
            break;
        }
        /* a packed plane that follows the previous one in the block and on
         * the device joins its write */
        if (n > 0 && w[n].stride == w[n].row_bytes && w[n - 1].stride == w[n - 1].row_bytes &&
            w[n].buffer == w[n - 1].buffer &&
            w[n].offset == w[n - 1].offset + w[n - 1].row_bytes * w[n - 1].rows &&
            w[n].src == w[n - 1].src + w[n - 1].row_bytes * w[n - 1].rows) {
            size_t bytes = w[n].offset + w[n].row_bytes * w[n].rows - w[n - 1].offset;
            w[n - 1].row_bytes = w[n - 1].stride = bytes;
            w[n - 1].rows = 1;
            continue;
        }
        n++;
    }
    return n;
}

static cl_int enqueue_write(QgpuContext *ctx, const PinnedWrite *w, cl_event *event)
{
    if (w->stride == w->row_bytes)
        return clEnqueueWriteBuffer(ctx->upload_queue, w->buffer, CL_FALSE, w->offset,
                                    w->row_bytes * w->rows, w->src, 0, NULL, event);
    size_t buffer_origin[3] = {w->offset, 0, 0}, host_origin[3] = {0, 0, 0};
    size_t region[3] = {w->row_bytes, w->rows, 1};
    return clEnqueueWriteBufferRect(ctx->upload_queue, w->buffer, CL_FALSE, buffer_origin,
                                    host_origin, region, w->row_bytes, 0, w->stride, 0, w->src,
                                    0, NULL, event);
}

static void slot_release(QgpuSlot *slot)
{
    for (int i = 0; i < 2; i++) {
        if (slot->pinned[i]) {
            atomic_fetch_sub(&slot->pinned[i]->in_flight, 1);
            qgpu_pinned_unref(&slot->pinned[i]);
        }
    }
    if (slot->pinned_read)
        clReleaseEvent(slot->pinned_read);
    slot->pinned_read = NULL;
}

void qgpu_pinned_slot_release(QgpuSlot *slot)
{
    slot_release(slot);
}

/* The uploads run in order on one queue: the first one still running
 * ends the search (one status query per call, not one per frame in
 * flight: the submitting thread calls this at every submit and collect). */
void qgpu_pinned_slots_poll(QgpuContext *ctx)
{
    for (unsigned f = ctx->processed; f != ctx->submitted; f++) {
        QgpuSlot *slot = &ctx->slots[f % ctx->slot_count];
        cl_int status = CL_QUEUED;
        if (!slot->pinned_read)
            continue;
        clGetEventInfo(slot->pinned_read, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
                       &status, NULL);
        if (status != CL_COMPLETE)
            break;
        slot_release(slot);
    }
}

int qgpu_submit_pinned(QgpuContext *ctx, const QgpuPicture *ref, QgpuPinned *ref_block,
                       const QgpuPicture *dist, QgpuPinned *dist_block)
{
    PinnedWrite writes[6];
    QgpuSlot *slot;
    cl_event uploaded = NULL;
    cl_int status = CL_SUCCESS;
    double t;
    int err, n, shift[2];

    if (!ctx)
        return QGPU_ERR_INVALID_ARG;
    if ((err = qgpu_submit_check(ctx, ref, dist, 1)) ||
        (err = check_inside(ctx, ref, ref_block, "reference")) ||
        (err = check_inside(ctx, dist, dist_block, "distorted")))
        return err;
    if (ctx->started)
        qgpu_pinned_slots_poll(ctx);
    if ((err = qgpu_submit_slot(ctx, ref, &slot)))
        return err;
    /* held from here: released at collect, or at close after a failure */
    slot->pinned[0] = qgpu_pinned_ref(ref_block);
    slot->pinned[1] = qgpu_pinned_ref(dist_block);
    atomic_fetch_add(&ref_block->in_flight, 1);
    atomic_fetch_add(&dist_block->in_flight, 1);

    t = qgpu_timing_now(ctx);
    n = picture_writes(ctx, slot, ref, 0, writes);
    n += picture_writes(ctx, slot, dist, 1, writes + n);
    for (int i = 0; i < n && status == CL_SUCCESS; i++)
        status = enqueue_write(ctx, &writes[i], i == n - 1 ? &uploaded : NULL);
    qgpu_timing_add(ctx, QGPU_TIMING_COPIES, t);
    if (status != CL_SUCCESS)
        return qgpu_submit_failed(ctx, qgpu_cl_error(ctx, status,
                                                     "clEnqueueWriteBuffer(pinned upload)"));
    shift[0] = shift[1] = ctx->in_shift;
    t = qgpu_timing_now(ctx);
    err = qgpu_submit_enqueue(ctx, slot, uploaded, shift);
    qgpu_timing_add(ctx, QGPU_TIMING_KERNELS, t);
    slot->pinned_read = uploaded; /* the slot takes the reference */
    if (err)
        return qgpu_submit_failed(ctx, err);
    ctx->frames_from_pinned++;
    return 0;
}
