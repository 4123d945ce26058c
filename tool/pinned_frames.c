/*
 * CPU-decoded frames in the library's pinned blocks.
 *
 * The codec's get_buffer2 hands FFmpeg one pinned block per frame, laid
 * out as FFmpeg's own allocator would lay it out for the codec
 * (avcodec_align_dimensions2's size and line size alignment, the width
 * grown until every line size is aligned, each plane padded and 64-byte
 * aligned), all planes in buf[0]. The scoring thread then submits such
 * frames with qgpu_submit_pinned(): no staging copy.
 *
 * Threads: get_buffer2 runs on FFmpeg's decoding threads and the buffers'
 * free callback on whichever thread drops a frame's last reference, so
 * the pool is guarded by a mutex. Blocks are only ever allocated on the
 * scoring thread (pinned_frames_submit), since the context is used by one
 * thread at a time: get_buffer2 only takes free blocks, and when none is
 * free (or the frames have a geometry the blocks were not made for) it
 * falls back to FFmpeg's buffers and counts a miss; each later submit
 * allocates one more block while misses are unanswered, up to MAX_BLOCKS
 * (one block, ~1.5-2 ms of the scoring thread on the H200, is absorbed
 * by the reading thread's queue of pairs; eight at once, as before,
 * stalled the decoders for ~25 ms of a 0.6 s run). Attaching (before the
 * reading thread starts) makes the first FIRST_BLOCKS, for the layout of
 * the frame decoder_start decoded. A block is free when no
 * frame holds it and the library has finished reading it
 * (qgpu_pinned_in_use).
 *
 * All pools of the process (two per job: `qgpu batch --jobs N` runs N
 * jobs at once) share one budget of pinned bytes, PINNED_BUDGET_MB or
 * $QGPU_PINNED_FRAMES_MAX_MB: a pool that would pass it stops growing and
 * its decoder's further frames take FFmpeg's buffers (counted as misses),
 * so that page-locked memory stays bounded whatever the jobs and sizes
 * (a 2160p decoder alone may want up to MAX_BLOCKS x 12.5 MB).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/imgutils.h>

#include "clock.h"
#include "pinned_frames.h"

#define MAX_BLOCKS 64    /* per decoder: frame threads, references, queues */
#define FIRST_BLOCKS 24   /* at attach: measured 16-24 in use (1080p H.264, HEVC) */
#define GROW_PER_SUBMIT 1
#define PLANE_ALIGN 64
#define PLANE_PADDING 128 /* after each plane: decoders may touch past it */
#define PINNED_BUDGET_MB 2048 /* every pool of the process together */

/* Where the planes of one frame go in a block. */
typedef struct FrameLayout {
    int format, width, height; /* what get_buffer2 was asked for */
    int linesize[4];
    size_t offset[4];          /* from the block's 64-byte aligned start */
    int nb_planes;
    size_t size;               /* the block's size */
} FrameLayout;

typedef struct Entry {
    QgpuPinned *block;
    PinnedFrames *pool;
    int in_frame;              /* a frame holds it */
    unsigned generation;       /* the layout it was made for */
} Entry;

struct PinnedFrames {
    pthread_mutex_t lock;
    int refs;                  /* the decoder's + one per block in a frame */
    int closed;
    QgpuContext *ctx;          /* attached: blocks may be handed out */
    FrameLayout layout;        /* of the blocks being made (generation) */
    unsigned generation;
    int have_layout;
    Entry *entries[MAX_BLOCKS];
    int nb_entries;
    unsigned misses;           /* not yet answered with a block */
    unsigned total_misses;
    unsigned submitted;
    /* QGPU_TIMING: blocks made at attach and while decoding, and the
     * seconds their allocations took (on the scoring thread) */
    unsigned made_attach, made_run;
    double t_attach, t_run;
    int attached;
};

/* Pinned bytes held by the blocks of every pool, and the budget. */
static atomic_size_t pinned_bytes;
static size_t pinned_budget;
static pthread_once_t budget_once = PTHREAD_ONCE_INIT;

static void budget_init(void)
{
    const char *env = getenv("QGPU_PINNED_FRAMES_MAX_MB");
    char *end;
    unsigned long long mb = PINNED_BUDGET_MB;
    if (env && *env) {
        unsigned long long v = strtoull(env, &end, 10);
        if (!*end)
            mb = v;
    }
    pinned_budget = (size_t)mb << 20;
}

/* Reserves size bytes of the budget: 1, or 0 when they would pass it. */
static int budget_take(size_t size)
{
    pthread_once(&budget_once, budget_init);
    if (atomic_fetch_add(&pinned_bytes, size) + size <= pinned_budget)
        return 1;
    atomic_fetch_sub(&pinned_bytes, size);
    return 0;
}

/* Drops the pool's reference to a block and gives its bytes back. */
static void block_drop(QgpuPinned **block)
{
    size_t size = qgpu_pinned_size(*block);
    qgpu_pinned_unref(block);
    atomic_fetch_sub(&pinned_bytes, size);
}

static int same_request(const FrameLayout *l, const AVFrame *frame)
{
    return l->format == frame->format && l->width == frame->width &&
           l->height == frame->height;
}

/* FFmpeg's rules for a frame's buffers (avcodec_default_get_buffer2's
 * documented behaviour): 0, or < 0 when the format has no layout. */
static int layout_compute(AVCodecContext *codec, const AVFrame *frame, FrameLayout *l)
{
    int w = frame->width, h = frame->height, align[AV_NUM_DATA_POINTERS] = {0};
    ptrdiff_t linesizes[4];
    size_t sizes[4], total = 0;
    int ret;

    memset(l, 0, sizeof(*l));
    l->format = frame->format;
    l->width = frame->width;
    l->height = frame->height;
    avcodec_align_dimensions2(codec, &w, &h, align);
    for (;;) {
        int aligned = 1;
        if ((ret = av_image_fill_linesizes(l->linesize, frame->format, w)) < 0)
            return ret;
        for (int i = 0; i < 4; i++)
            if (align[i] > 0 && l->linesize[i] % align[i])
                aligned = 0;
        if (aligned)
            break;
        w += w & ~(w - 1); /* the next width with one more trailing zero bit */
    }
    for (int i = 0; i < 4; i++)
        linesizes[i] = l->linesize[i];
    if ((ret = av_image_fill_plane_sizes(sizes, frame->format, h, linesizes)) < 0)
        return ret;
    for (int i = 0; i < 4 && sizes[i]; i++) {
        l->offset[i] = (total + PLANE_ALIGN - 1) / PLANE_ALIGN * PLANE_ALIGN;
        total = l->offset[i] + sizes[i] + PLANE_PADDING;
        l->nb_planes = i + 1;
    }
    l->size = total + PLANE_ALIGN; /* room to align the start */
    return l->nb_planes > 0 ? 0 : AVERROR(EINVAL);
}

static void pool_free(PinnedFrames *pool)
{
    for (int i = 0; i < pool->nb_entries; i++) {
        block_drop(&pool->entries[i]->block);
        free(pool->entries[i]);
    }
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}

/* Drops one reference (the lock held); 1 when the pool must be freed. */
static int pool_unref_locked(PinnedFrames *pool)
{
    return --pool->refs == 0;
}

/* Removes entries no frame holds that are stale or of a closed pool (the
 * lock held); their blocks are unreferenced by the caller after unlock. */
static int collect_idle(PinnedFrames *pool, QgpuPinned **drop, int all)
{
    int n = 0, kept = 0;
    for (int i = 0; i < pool->nb_entries; i++) {
        Entry *e = pool->entries[i];
        if (!e->in_frame && (all || e->generation != pool->generation)) {
            drop[n++] = e->block;
            free(e);
        } else {
            pool->entries[kept++] = e;
        }
    }
    pool->nb_entries = kept;
    return n;
}

/* Drops the idle blocks (every one once the pool is closed) and one
 * reference of the pool, freeing it at the last. Called with the lock
 * held; returns with it released. */
static void unref_unlock(PinnedFrames *pool)
{
    QgpuPinned *drop[MAX_BLOCKS];
    int n = collect_idle(pool, drop, pool->closed);
    int last = pool_unref_locked(pool);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < n; i++)
        block_drop(&drop[i]);
    if (last)
        pool_free(pool);
}

static void buffer_free(void *opaque, uint8_t *data)
{
    Entry *e = opaque;
    PinnedFrames *pool = e->pool;
    (void)data;
    pthread_mutex_lock(&pool->lock);
    e->in_frame = 0;
    unref_unlock(pool);
}

/* A free block for the frame and its layout, or NULL (a miss: FFmpeg's
 * buffers). */
static Entry *take_block(PinnedFrames *pool, AVCodecContext *codec, const AVFrame *frame,
                         FrameLayout *layout)
{
    Entry *found = NULL;
    pthread_mutex_lock(&pool->lock);
    /* the layout is known from the first frame on (decoder_start's, before
     * the pool is attached), so that attaching can make the blocks */
    if (!pool->closed && (!pool->have_layout || !same_request(&pool->layout, frame))) {
        FrameLayout l;
        if (layout_compute(codec, frame, &l) == 0) {
            pool->layout = l;
            pool->have_layout = 1;
            pool->generation++; /* older blocks go when idle */
        }
    }
    if (pool->ctx && !pool->closed) {
        for (int i = 0; i < pool->nb_entries && pool->have_layout && !found; i++) {
            Entry *e = pool->entries[i];
            if (!e->in_frame && e->generation == pool->generation &&
                same_request(&pool->layout, frame) && !qgpu_pinned_in_use(e->block))
                found = e;
        }
        if (found) {
            found->in_frame = 1;
            pool->refs++;
            *layout = pool->layout;
        } else {
            pool->misses++;
            pool->total_misses++;
        }
    }
    pthread_mutex_unlock(&pool->lock);
    return found;
}

static int get_buffer(AVCodecContext *codec, AVFrame *frame, int flags)
{
    PinnedFrames *pool = codec->opaque;
    FrameLayout l;
    Entry *e = take_block(pool, codec, frame, &l);
    unsigned char *base;
    size_t start;

    if (!e)
        return avcodec_default_get_buffer2(codec, frame, flags);
    base = qgpu_pinned_data(e->block);
    start = (size_t)(-(uintptr_t)base & (PLANE_ALIGN - 1));
    frame->buf[0] = av_buffer_create(base, (int)qgpu_pinned_size(e->block), buffer_free, e, 0);
    if (!frame->buf[0]) {
        buffer_free(e, NULL);
        return AVERROR(ENOMEM);
    }
    for (int i = 0; i < l.nb_planes; i++) {
        frame->data[i] = base + start + l.offset[i];
        frame->linesize[i] = l.linesize[i];
    }
    frame->extended_data = frame->data;
    return 0;
}

/* get_buffer (and the default get_format) may be called from FFmpeg's
 * frame threads at once. libavcodec before 60 (FFmpeg 5.1, Debian 12's)
 * must be told so: otherwise each decoding thread hands every get_buffer2
 * call over to the thread that feeds the packets and waits for it, which
 * serialises the frame threads (libavcodec/pthread_frame.c). From 60 on
 * the field is gone and callbacks must be thread-safe anyway. */
static void mark_thread_safe(AVCodecContext *codec)
{
#if defined(FF_API_THREAD_SAFE_CALLBACKS) && FF_API_THREAD_SAFE_CALLBACKS
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    codec->thread_safe_callbacks = 1;
#pragma GCC diagnostic pop
#else
    (void)codec;
#endif
}

void pinned_frames_install(PinnedFrames **out, AVCodecContext *codec)
{
    const char *env = getenv("QGPU_PINNED_FRAMES");
    PinnedFrames *pool;
    *out = NULL;
    if (env && !strcmp(env, "0"))
        return;
    pool = calloc(1, sizeof(*pool));
    if (!pool || pthread_mutex_init(&pool->lock, NULL)) {
        free(pool);
        return;
    }
    pool->refs = 1;
    codec->opaque = pool;
    codec->get_buffer2 = get_buffer;
    mark_thread_safe(codec);
    *out = pool;
}

/* Allocates `want` blocks, or GROW_PER_SUBMIT while the decoder's misses
 * are not answered (scoring thread). Returns how many it made. */
static int make_blocks(PinnedFrames *pool, QgpuContext *ctx, int want)
{
    QgpuPinned *drop[MAX_BLOCKS];
    int n;
    size_t size;
    unsigned generation;

    pthread_mutex_lock(&pool->lock);
    n = collect_idle(pool, drop, 0);
    if (pool->misses && want < GROW_PER_SUBMIT)
        want = GROW_PER_SUBMIT;
    if (!pool->have_layout)
        want = 0;
    if (want > MAX_BLOCKS - pool->nb_entries)
        want = MAX_BLOCKS - pool->nb_entries;
    pool->misses = pool->misses > (unsigned)want ? pool->misses - (unsigned)want : 0;
    size = pool->layout.size;
    generation = pool->generation;
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < n; i++)
        block_drop(&drop[i]);
    for (int i = 0; i < want; i++) {
        Entry *e;
        if (!budget_take(size))
            return i; /* the process's budget is spent: FFmpeg's buffers */
        e = calloc(1, sizeof(*e));
        if (!e || qgpu_pinned_alloc(ctx, size, &e->block)) {
            free(e);
            atomic_fetch_sub(&pinned_bytes, size);
            return i; /* FFmpeg's buffers then: the frames still go through */
        }
        e->pool = pool;
        e->generation = generation;
        pthread_mutex_lock(&pool->lock);
        if (pool->nb_entries < MAX_BLOCKS && generation == pool->generation) {
            pool->entries[pool->nb_entries++] = e;
            e = NULL;
        }
        pthread_mutex_unlock(&pool->lock);
        if (e) {
            block_drop(&e->block);
            free(e);
        }
    }
    return want;
}

/* make_blocks, timed for QGPU_TIMING (the counts are the scoring
 * thread's: only it makes blocks). */
static void grow(PinnedFrames *pool, QgpuContext *ctx, int want)
{
    double t0 = monotonic_seconds();
    int made = make_blocks(pool, ctx, want);
    double spent = monotonic_seconds() - t0;
    if (!pool->attached) {
        pool->made_attach += made;
        pool->t_attach += spent;
    } else if (made > 0) {
        pool->made_run += made;
        pool->t_run += spent;
    }
}

void pinned_frames_attach(PinnedFrames *pool, QgpuContext *ctx)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->ctx = ctx;
    pthread_mutex_unlock(&pool->lock);
    grow(pool, ctx, FIRST_BLOCKS);
    pool->attached = 1;
}

/* The block of the pool holding every plane of pic, or NULL. */
static QgpuPinned *find_block(PinnedFrames *pool, const QgpuPicture *pic)
{
    QgpuPinned *found = NULL;
    int planes = pic->layout == QGPU_LAYOUT_400 ? 1 : pic->layout == QGPU_LAYOUT_NV12 ? 2 : 3;
    if (!pool)
        return NULL;
    pthread_mutex_lock(&pool->lock);
    for (int i = 0; i < pool->nb_entries && !found; i++) {
        const unsigned char *lo = qgpu_pinned_data(pool->entries[i]->block);
        const unsigned char *hi = lo + qgpu_pinned_size(pool->entries[i]->block);
        int inside = pool->entries[i]->in_frame;
        for (int p = 0; p < planes && inside; p++) {
            const unsigned char *d = pic->data[p];
            inside = d >= lo && d < hi;
        }
        if (inside)
            found = pool->entries[i]->block;
    }
    pthread_mutex_unlock(&pool->lock);
    return found;
}

int pinned_frames_submit(QgpuContext *ctx, PinnedFrames *ref_pool, const QgpuPicture *ref,
                         PinnedFrames *dist_pool, const QgpuPicture *dist)
{
    QgpuPinned *ref_block = find_block(ref_pool, ref);
    QgpuPinned *dist_block = find_block(dist_pool, dist);
    int err;

    if (ref_block && dist_block) {
        /* the frames hold the blocks until the submit returns */
        err = qgpu_submit_pinned(ctx, ref, ref_block, dist, dist_block);
        if (!err)
            ref_pool->submitted++;
    } else {
        err = qgpu_submit(ctx, ref, dist);
    }
    pinned_frames_grow(ref_pool, ctx);
    pinned_frames_grow(dist_pool, ctx);
    return err;
}

void pinned_frames_grow(PinnedFrames *pool, QgpuContext *ctx)
{
    if (pool)
        grow(pool, ctx, 0);
}

unsigned pinned_frames_submitted(const PinnedFrames *pool)
{
    return pool ? pool->submitted : 0;
}

unsigned pinned_frames_misses(const PinnedFrames *pool)
{
    return pool ? pool->total_misses : 0;
}

void pinned_frames_setup(const PinnedFrames *pool, unsigned *attach, double *t_attach,
                         unsigned *run, double *t_run)
{
    *attach = pool ? pool->made_attach : 0;
    *t_attach = pool ? pool->t_attach : 0.0;
    *run = pool ? pool->made_run : 0;
    *t_run = pool ? pool->t_run : 0.0;
}

void pinned_frames_close(PinnedFrames **ppool)
{
    PinnedFrames *pool = *ppool;
    if (!pool)
        return;
    *ppool = NULL;
    pthread_mutex_lock(&pool->lock);
    pool->closed = 1;
    pool->ctx = NULL;
    unref_unlock(pool);
}
