/*
 * Pictures in CUDA memory (qgpu_cuda.h): a ring of slots in one
 * exportable CUDA allocation, pictures copied into them on the GPU, the
 * allocation imported once into the scoring context's OpenCL context (an
 * import costs ~0.5-1 ms on NVIDIA's driver whatever its size: one per
 * slot made a ring of 64 slots cost ~50 ms a run).
 *
 * Why a copy: the caller's CUDA memory (NVDEC's output surfaces, FFmpeg's
 * pool buffers) is not exportable; only cuMemCreate allocations with a
 * shareable handle type can be imported by OpenCL
 * (cl_khr_external_memory_opaque_fd). The copy is one cuMemcpy2DAsync per
 * plane on the caller's stream, then a CUDA event on it (the slot's
 * `copied`). qgpu_cuda_ring_take waits for that event; take_async does
 * not, and qgpu_submit_cuda waits for it before the OpenCL side reads the
 * slot. The caller's picture must stay until its copy has run: take_async
 * keeps the caller's done callback, with an event of its own, in a small
 * queue (`held`), and calls it once that event is complete (the queue is
 * looked at by the next take_async; a full queue waits for its oldest).
 * Slots are rewritten only after release, which comes after the submit's
 * OpenCL copies have completed (qgpu_submit_cl_buffer waits for them);
 * a slot released unsubmitted is rewritten by a later copy on the same
 * stream, after its own.
 *
 * Ownership: the ring holds one reference for its owner and one per frame
 * out; the allocations are freed with the last. Imports belong to the
 * context they were made in (extmem.c releases them at qgpu_close): the
 * ring remembers its buffer until qgpu_cuda_ring_reset.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "internal.h"
#include "qgpu/qgpu_cuda.h"
#include "qgpu/qgpu_opencl.h"

#define MAX_SLOTS 256
/* Slots start on this boundary within the ring's allocation. */
#define SLOT_ALIGN 65536

struct QgpuCudaFrame {
    QgpuCudaRing *ring;
    CUdeviceptr ptr; /* the slot in the ring's allocation */
    size_t base;     /* its offset there */
    CUevent copied; /* recorded after the last copy into the slot */
    int busy;
    int bitdepth;  /* the picture's, set by take */
};

/* A picture of take_async kept for its caller until its copy has run. */
typedef struct Held {
    CUevent copied;
    void (*done)(void *opaque);
    void *opaque;
} Held;

struct QgpuCudaRing {
    const CudaApi *cu;
    CUcontext cuctx;
    CUstream stream;
    int width, height, layout, bitdepth;
    int nb_planes;
    size_t row[3], rows[3], offset[3]; /* packed planes in a slot */
    QgpuCudaFrame *slots;
    int nb_slots;
    CudaExportable block;   /* every slot's memory */
    cl_mem buffer;          /* block imported into ctx at the first submit, else NULL */
    int next;
    Held held[QGPU_CUDA_HELD]; /* oldest first from held_first, nb_held of them */
    int held_first, nb_held;   /* only the taking thread touches them */
    const QgpuContext *ctx; /* the context of the slots' imports */
    pthread_mutex_t lock;
    int refs;               /* the owner's and each busy slot's */
    atomic_int failed;      /* no more frames through the ring */
    char error[512];
};

int qgpu_cuda_driver_present(void)
{
    return qgpu_cuda_driver_loads();
}

int qgpu_cuda_available(char *why, size_t why_len)
{
    char unused[8];
    const char *env = getenv("QGPU_HWDEC_ZERO_COPY");
    if (!why) {
        why = unused;
        why_len = sizeof(unused);
    }
    if (env && !strcmp(env, "0")) {
        snprintf(why, why_len, "QGPU_HWDEC_ZERO_COPY=0");
        return QGPU_ERR_UNSUPPORTED;
    }
    return qgpu_cuda_api(why, why_len) ? 0 : QGPU_ERR_UNSUPPORTED;
}

/* The packed planes of the ring's pictures: 0, or -1 for a layout or depth
 * the library does not take. */
static int ring_geometry(QgpuCudaRing *r)
{
    size_t bps = r->bitdepth > 8 ? 2 : 1;
    size_t w = (size_t)r->width, h = (size_t)r->height;
    size_t cw = (w + 1) / 2, ch = (h + 1) / 2;

    if (r->width <= 0 || r->height <= 0 || r->bitdepth < 8 || r->bitdepth > 16)
        return -1;
    r->row[0] = w * bps;
    r->rows[0] = h;
    switch (r->layout) {
    case QGPU_LAYOUT_NV12:
        r->nb_planes = 2;
        r->row[1] = cw * 2 * bps;
        r->rows[1] = ch;
        break;
    case QGPU_LAYOUT_420:
    case QGPU_LAYOUT_422:
    case QGPU_LAYOUT_444:
        r->nb_planes = 3;
        r->row[1] = r->row[2] = (r->layout == QGPU_LAYOUT_444 ? w : cw) * bps;
        r->rows[1] = r->rows[2] = r->layout == QGPU_LAYOUT_420 ? ch : h;
        break;
    case QGPU_LAYOUT_400:
        r->nb_planes = 1;
        break;
    default:
        return -1;
    }
    for (int p = 1; p < r->nb_planes; p++)
        r->offset[p] = r->offset[p - 1] + r->row[p - 1] * r->rows[p - 1];
    return 0;
}

static void ring_destroy(QgpuCudaRing *r)
{
    CUcontext popped;
    if (r->slots && r->cu && !r->cu->cuCtxPushCurrent(r->cuctx)) {
        for (int i = 0; i < r->nb_slots; i++)
            if (r->slots[i].copied)
                r->cu->cuEventDestroy(r->slots[i].copied);
        qgpu_cuda_free_exportable(r->cu, &r->block);
        for (int i = 0; i < QGPU_CUDA_HELD; i++)
            if (r->held[i].copied)
                r->cu->cuEventDestroy(r->held[i].copied);
        r->cu->cuCtxPopCurrent(&popped);
    }
    free(r->slots);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* Drops one reference; the last one frees the ring. */
static void ring_unref(QgpuCudaRing *r)
{
    int last;
    pthread_mutex_lock(&r->lock);
    last = --r->refs == 0;
    pthread_mutex_unlock(&r->lock);
    if (last)
        ring_destroy(r);
}

/* The slots' allocation and the events, in the ring's CUDA context: 0 or
 * QGPU_ERR_CUDA. */
static int ring_allocate(QgpuCudaRing *r, char *err, size_t err_len)
{
    size_t size = r->offset[r->nb_planes - 1] + r->row[r->nb_planes - 1] * r->rows[r->nb_planes - 1];
    size_t stride = (size + SLOT_ALIGN - 1) / SLOT_ALIGN * SLOT_ALIGN;
    CUcontext popped;
    CUresult cr = r->cu->cuCtxPushCurrent(r->cuctx);
    if (cr) {
        qgpu_cuda_message(r->cu, cr, "cuCtxPushCurrent", err, err_len);
        return QGPU_ERR_CUDA;
    }
    cr = qgpu_cuda_alloc_exportable(r->cu, stride * (size_t)r->nb_slots, &r->block, err,
                                    err_len);
    for (int i = 0; i < r->nb_slots && !cr; i++) {
        r->slots[i].base = stride * (size_t)i;
        r->slots[i].ptr = r->block.ptr + r->slots[i].base;
        if ((cr = r->cu->cuEventCreate(&r->slots[i].copied, CU_EVENT_DISABLE_TIMING)))
            qgpu_cuda_message(r->cu, cr, "cuEventCreate", err, err_len);
    }
    for (int i = 0; i < QGPU_CUDA_HELD && !cr; i++)
        if ((cr = r->cu->cuEventCreate(&r->held[i].copied, CU_EVENT_DISABLE_TIMING)))
            qgpu_cuda_message(r->cu, cr, "cuEventCreate", err, err_len);
    r->cu->cuCtxPopCurrent(&popped);
    return cr ? QGPU_ERR_CUDA : 0;
}

int qgpu_cuda_ring_create(QgpuCudaRing **ring, const QgpuCudaPicture *format, int slots,
                          char *err, size_t err_len)
{
    QgpuCudaRing *r;
    char unused[8];
    int ret;

    if (!err) {
        err = unused;
        err_len = sizeof(unused);
    }
    if (!ring || !format || !format->cuda_context || slots < 1 || slots > MAX_SLOTS) {
        snprintf(err, err_len, "qgpu_cuda_ring_create: invalid argument");
        return QGPU_ERR_INVALID_ARG;
    }
    *ring = NULL;
    if ((ret = qgpu_cuda_available(err, err_len)) < 0)
        return ret;
    r = calloc(1, sizeof(*r));
    if (!r || !(r->slots = calloc((size_t)slots, sizeof(*r->slots)))) {
        free(r);
        snprintf(err, err_len, "out of memory");
        return QGPU_ERR_NO_MEMORY;
    }
    r->cu = qgpu_cuda_api(err, err_len);
    r->cuctx = format->cuda_context;
    r->stream = format->cuda_stream;
    r->width = format->width;
    r->height = format->height;
    r->layout = format->layout;
    r->bitdepth = format->bitdepth;
    r->nb_slots = slots;
    r->refs = 1;
    pthread_mutex_init(&r->lock, NULL);
    r->block.fd = -1;
    for (int i = 0; i < slots; i++)
        r->slots[i].ring = r;
    if (ring_geometry(r) < 0) {
        snprintf(err, err_len, "%dx%d pictures of layout %d at %d bits cannot be scored",
                 format->width, format->height, format->layout, format->bitdepth);
        ret = QGPU_ERR_UNSUPPORTED;
    } else {
        ret = ring_allocate(r, err, err_len);
    }
    if (ret < 0) {
        ring_destroy(r);
        return ret;
    }
    *ring = r;
    return 0;
}

int qgpu_cuda_ring_fits(const QgpuCudaRing *r, const QgpuCudaPicture *pic)
{
    /* the depth only sizes the words: P016 of 12-bit video fits a P010 ring */
    return r && pic && pic->cuda_context == (void *)r->cuctx &&
           pic->cuda_stream == (void *)r->stream && pic->width == r->width &&
           pic->height == r->height && pic->layout == r->layout && pic->bitdepth >= 8 &&
           pic->bitdepth <= 16 && (pic->bitdepth > 8) == (r->bitdepth > 8);
}

/* A free slot, marked busy (and counted as a reference), or NULL. */
static QgpuCudaFrame *slot_get(QgpuCudaRing *r)
{
    QgpuCudaFrame *slot = NULL;
    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < r->nb_slots && !slot; i++) {
        QgpuCudaFrame *s = &r->slots[(r->next + i) % r->nb_slots];
        if (!s->busy) {
            slot = s;
            slot->busy = 1;
            r->refs++;
            r->next = (r->next + i + 1) % r->nb_slots;
        }
    }
    pthread_mutex_unlock(&r->lock);
    return slot;
}

void qgpu_cuda_frame_release(QgpuCudaFrame **frame)
{
    QgpuCudaFrame *slot = frame ? *frame : NULL;
    QgpuCudaRing *r;
    if (!slot)
        return;
    r = slot->ring;
    pthread_mutex_lock(&r->lock);
    slot->busy = 0;
    pthread_mutex_unlock(&r->lock);
    ring_unref(r);
    *frame = NULL;
}

/* A failed CUDA call's message as the ring's error: QGPU_ERR_CUDA. */
static int ring_cuda_error(QgpuCudaRing *r, CUresult cr, const char *what)
{
    pthread_mutex_lock(&r->lock);
    qgpu_cuda_message(r->cu, cr, what, r->error, sizeof(r->error));
    pthread_mutex_unlock(&r->lock);
    return QGPU_ERR_CUDA;
}

/* The oldest held picture handed back (done called) and dropped. */
static void held_pop(QgpuCudaRing *r)
{
    Held *h = &r->held[r->held_first];
    h->done(h->opaque);
    r->held_first = (r->held_first + 1) % QGPU_CUDA_HELD;
    r->nb_held--;
}

/* The held pictures whose copies have run handed back, oldest first (the
 * copies run in the stream's order); with wait, every one of them, else
 * only as many as needed to leave room for one more. The ring's context
 * is current. 0 or QGPU_ERR_CUDA (done called all the same: nothing is
 * kept waiting on a failed stream). */
static int held_done(QgpuCudaRing *r, int wait)
{
    int ret = 0;
    while (r->nb_held) {
        Held *h = &r->held[r->held_first];
        CUresult cr = r->cu->cuEventQuery(h->copied);
        if (cr == CUDA_ERROR_NOT_READY) {
            if (!wait && r->nb_held < QGPU_CUDA_HELD)
                break;
            cr = r->cu->cuEventSynchronize(h->copied);
        }
        if (cr)
            ret = ring_cuda_error(r, cr, "waiting for a copy on the GPU");
        held_pop(r);
    }
    return ret;
}

/* The planes of pic into slot, queued on the ring's stream and followed by
 * the slot's event and, with held, that picture's own. The ring's context
 * is current. */
static CUresult copy_in(QgpuCudaRing *r, const QgpuCudaPicture *pic, QgpuCudaFrame *slot,
                        Held *held)
{
    CUresult cr = 0;
    for (int p = 0; p < r->nb_planes && !cr; p++)
        cr = qgpu_cuda_copy_2d(r->cu, slot->ptr + r->offset[p], NULL, r->row[p],
                               (CUdeviceptr)pic->plane[p], NULL, pic->pitch[p], r->row[p],
                               r->rows[p], r->stream);
    if (!cr)
        cr = r->cu->cuEventRecord(slot->copied, r->stream);
    if (!cr && held)
        cr = r->cu->cuEventRecord(held->copied, r->stream);
    return cr;
}

/* pic into a free slot: 1 and *frame set, 0 when no slot is free, or
 * QGPU_ERR_CUDA. With done, the copy is only queued and the picture held;
 * without, the copy is waited for. The ring's context is current and,
 * with done, the queue of held pictures has room. */
static int copy_to_slot(QgpuCudaRing *r, const QgpuCudaPicture *pic, QgpuCudaFrame **frame,
                        void (*done)(void *opaque), void *opaque)
{
    Held *held = done ? &r->held[(r->held_first + r->nb_held) % QGPU_CUDA_HELD] : NULL;
    QgpuCudaFrame *slot = slot_get(r);
    CUresult cr;

    if (!slot)
        return 0;
    cr = copy_in(r, pic, slot, held);
    if (!cr && !held)
        cr = r->cu->cuEventSynchronize(slot->copied);
    if (cr) {
        if (held) /* the caller frees its picture now: nothing may still read it */
            r->cu->cuStreamSynchronize(r->stream);
        qgpu_cuda_frame_release(&slot);
        return ring_cuda_error(r, cr, "copying a picture on the GPU");
    }
    if (held) {
        held->done = done;
        held->opaque = opaque;
        r->nb_held++;
    }
    slot->bitdepth = pic->bitdepth;
    *frame = slot;
    return 1;
}

/* take and take_async (done set). */
static int take(QgpuCudaRing *r, const QgpuCudaPicture *pic, QgpuCudaFrame **frame,
                void (*done)(void *opaque), void *opaque)
{
    CUcontext popped;
    CUresult cr;
    int ret = 0;

    if (!r || !pic || !frame)
        return QGPU_ERR_INVALID_ARG;
    *frame = NULL;
    if (atomic_load(&r->failed) || !qgpu_cuda_ring_fits(r, pic))
        return 0;
    for (int p = 0; p < r->nb_planes; p++)
        if (!pic->plane[p] || pic->pitch[p] < r->row[p])
            return QGPU_ERR_INVALID_ARG;
    if ((cr = r->cu->cuCtxPushCurrent(r->cuctx)))
        return ring_cuda_error(r, cr, "cuCtxPushCurrent");
    if (done)
        ret = held_done(r, 0); /* room for one more */
    if (ret == 0)
        ret = copy_to_slot(r, pic, frame, done, opaque);
    r->cu->cuCtxPopCurrent(&popped);
    return ret;
}

int qgpu_cuda_ring_take(QgpuCudaRing *r, const QgpuCudaPicture *pic, QgpuCudaFrame **frame)
{
    return take(r, pic, frame, NULL, NULL);
}

int qgpu_cuda_ring_take_async(QgpuCudaRing *r, const QgpuCudaPicture *pic, QgpuCudaFrame **frame,
                              void (*done)(void *opaque), void *opaque)
{
    if (!done) {
        if (frame)
            *frame = NULL;
        return QGPU_ERR_INVALID_ARG;
    }
    return take(r, pic, frame, done, opaque);
}

int qgpu_cuda_ring_drain(QgpuCudaRing *r)
{
    CUcontext popped;
    CUresult cr;
    int ret;
    if (!r || !r->nb_held)
        return 0;
    if ((cr = r->cu->cuCtxPushCurrent(r->cuctx))) {
        /* cannot wait: the stream's copies are lost with the context */
        while (r->nb_held)
            held_pop(r);
        return ring_cuda_error(r, cr, "cuCtxPushCurrent");
    }
    ret = held_done(r, 1);
    r->cu->cuCtxPopCurrent(&popped);
    return ret;
}

int qgpu_cuda_frame_to_host(const QgpuCudaFrame *slot, void *const data[3], const size_t pitch[3])
{
    QgpuCudaRing *r;
    CUcontext popped;
    CUresult cr;

    if (!slot || !data || !pitch)
        return QGPU_ERR_INVALID_ARG;
    r = slot->ring;
    for (int p = 0; p < r->nb_planes; p++)
        if (!data[p] || pitch[p] < r->row[p])
            return QGPU_ERR_INVALID_ARG;
    cr = r->cu->cuCtxPushCurrent(r->cuctx);
    if (!cr) {
        for (int p = 0; p < r->nb_planes && !cr; p++)
            cr = qgpu_cuda_copy_2d(r->cu, 0, data[p], pitch[p], slot->ptr + r->offset[p],
                                   NULL, r->row[p], r->row[p], r->rows[p], r->stream);
        if (!cr)
            cr = r->cu->cuStreamSynchronize(r->stream);
        r->cu->cuCtxPopCurrent(&popped);
    }
    return cr ? ring_cuda_error(r, cr, "copying a picture from the GPU") : 0;
}

/* The frame's slot as a picture in the ring's buffer of ctx (imported at
 * the ring's first use): 0, or an error with the ring stopped when the
 * import failed. */
static int frame_buffer(QgpuContext *ctx, QgpuCudaFrame *slot, QgpuCLBuffer *out)
{
    QgpuCudaRing *r = slot->ring;
    int ret = 0;

    pthread_mutex_lock(&r->lock);
    if (r->ctx && r->ctx != ctx)
        ret = qgpu_error(ctx, QGPU_ERR_STATE,
                         "the CUDA ring's memory was imported into another context "
                         "(qgpu_cuda_ring_reset after closing it)");
    pthread_mutex_unlock(&r->lock);
    if (ret < 0)
        return ret;
    if (atomic_load(&r->failed))
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED, "%s", r->error);
    if (!r->buffer) {
        ret = qgpu_import_memory_fd(ctx, r->block.fd, r->block.size, &r->buffer);
        if (ret < 0) {
            pthread_mutex_lock(&r->lock);
            snprintf(r->error, sizeof(r->error), "%s", qgpu_last_error(ctx));
            pthread_mutex_unlock(&r->lock);
            atomic_store(&r->failed, 1);
            /* whatever the driver said, the caller's answer is the host copy */
            return QGPU_ERR_UNSUPPORTED;
        }
        pthread_mutex_lock(&r->lock);
        r->ctx = ctx;
        pthread_mutex_unlock(&r->lock);
    }
    memset(out, 0, sizeof(*out));
    out->width = r->width;
    out->height = r->height;
    out->layout = r->layout;
    out->bitdepth = slot->bitdepth;
    out->buffer = r->buffer;
    for (int p = 0; p < r->nb_planes; p++) {
        out->offset[p] = slot->base + r->offset[p];
        out->pitch[p] = r->row[p];
    }
    return 0;
}

/* The copy into the slot has run (take_async only queued it; on the GPU
 * it has usually run by the time the pair is submitted): 0 or
 * QGPU_ERR_CUDA. */
static int copy_wait(QgpuContext *ctx, QgpuCudaFrame *slot)
{
    QgpuCudaRing *r = slot->ring;
    CUcontext popped;
    CUresult cr = r->cu->cuCtxPushCurrent(r->cuctx);
    if (!cr) {
        cr = r->cu->cuEventSynchronize(slot->copied);
        r->cu->cuCtxPopCurrent(&popped);
    }
    if (cr) {
        ring_cuda_error(r, cr, "waiting for a copy on the GPU");
        return qgpu_error(ctx, QGPU_ERR_CUDA, "%s", r->error);
    }
    return 0;
}

int qgpu_submit_cuda(QgpuContext *ctx, QgpuCudaFrame *ref, QgpuCudaFrame *dist)
{
    QgpuCLBuffer buf[2];
    int ret;
    if (!ctx)
        return QGPU_ERR_INVALID_ARG;
    if (!ref || !dist)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "qgpu_submit_cuda: a frame is NULL");
    if ((ret = frame_buffer(ctx, ref, &buf[0])) < 0 ||
        (ret = frame_buffer(ctx, dist, &buf[1])) < 0 || (ret = copy_wait(ctx, ref)) < 0 ||
        (ret = copy_wait(ctx, dist)) < 0)
        return ret;
    return qgpu_submit_cl_buffer(ctx, &buf[0], &buf[1]);
}

const char *qgpu_cuda_ring_error(const QgpuCudaRing *ring)
{
    return ring ? ring->error : "";
}

int qgpu_cuda_ring_reset(QgpuCudaRing *r)
{
    int idle;
    if (!r)
        return 0;
    qgpu_cuda_ring_drain(r);
    if (atomic_load(&r->failed))
        return 0;
    pthread_mutex_lock(&r->lock);
    idle = r->refs == 1;
    if (idle) {
        r->buffer = NULL;
        r->ctx = NULL;
        r->next = 0;
        r->error[0] = '\0';
    }
    pthread_mutex_unlock(&r->lock);
    return idle;
}

void qgpu_cuda_ring_free(QgpuCudaRing **ring)
{
    if (ring && *ring) {
        qgpu_cuda_ring_drain(*ring);
        ring_unref(*ring);
    }
    if (ring)
        *ring = NULL;
}
