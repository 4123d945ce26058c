#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "prefetch.h"
#include "reader.h"

#define QUEUE_SIZE 6

struct Reader {
    Decoder *dec[2];
    /* With a hardware decoder, each input decodes ahead on its own thread
     * (two decoder sessions busy at once); CPU decoders are read in turn
     * by the reader's thread, their own frame threads doing the work. (In
     * parallel, libavcodec's frame-threaded H.264 decoder was seen to hand
     * out a damaged frame without its error flag now and then: 2 runs in
     * 24 of tests/test_tool_errors' corrupt-packet case.) */
    Prefetch *pre[2];  /* NULL: read directly */
    Pairer *pairer;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    FramePair queue[QUEUE_SIZE];
    int head, count;
    int done;        /* the thread has finished: end, error or stop */
    int error;       /* < 0 on a decoding error */
    char message[1024];
    int stop;
    volatile sig_atomic_t *cancel;
    /* QGPU_TIMING: the reading thread's seconds reading pairs (decoding,
     * or waiting for the decoding threads) and waiting for room in the
     * queue (the scoring thread behind); written under the lock */
    double t_read, t_full;
};

/* PairSource callbacks over a Decoder, read on the reader's thread. */
static int source_read(void *opaque, double *pts, void **frame, char *err, size_t err_len)
{
    Decoder *d = opaque;
    QgpuPicture pic;
    int ret = decoder_read_owned(d, &pic, frame, err, err_len);
    if (ret == 1)
        *pts = decoder_last_pts(d);
    return ret;
}

static unsigned source_count_rest(void *opaque)
{
    return decoder_count_rest(opaque);
}

static unsigned source_lost(void *opaque)
{
    return decoder_error_count(opaque);
}

/* The same over a decoder's Prefetch. */
static int prefetch_source_read(void *opaque, double *pts, void **frame, char *err,
                                size_t err_len)
{
    return prefetch_read(opaque, frame, pts, err, err_len);
}

static unsigned prefetch_source_count_rest(void *opaque)
{
    return prefetch_count_rest(opaque);
}

static unsigned prefetch_source_lost(void *opaque)
{
    return prefetch_lost(opaque);
}

static void *source_ref(void *opaque, void *frame)
{
    (void)opaque;
    return decoder_ref_frame(frame);
}

static void source_release(void *opaque, void *frame)
{
    (void)opaque;
    decoder_release(frame);
}


static void *reader_thread(void *opaque)
{
    Reader *r = opaque;
    int ret = 0;
    double reading = 0.0; /* the last read's seconds, added under the lock */
    for (;;) {
        FramePair pair;
        void *rf, *df;
        double t = monotonic_seconds();
        pthread_mutex_lock(&r->lock);
        while (r->count == QUEUE_SIZE && !r->stop)
            pthread_cond_wait(&r->changed, &r->lock);
        int stop = r->stop;
        t = monotonic_seconds() - t;
        r->t_full += t;
        pthread_mutex_unlock(&r->lock);
        if (stop)
            break;
        t = monotonic_seconds();
        ret = pairer_next(r->pairer, &rf, &df, r->message, sizeof(r->message));
        reading = monotonic_seconds() - t;
        if (ret != 1)
            break;
        memset(&pair, 0, sizeof(pair));
        pair.ref_owner = rf;
        pair.dist_owner = df;
        decoder_owner_picture(r->dec[0], rf, &pair.ref);
        decoder_owner_picture(r->dec[1], df, &pair.dist);
        pthread_mutex_lock(&r->lock);
        r->queue[(r->head + r->count) % QUEUE_SIZE] = pair;
        r->count++;
        r->t_read += reading;
        reading = 0.0;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
    }
    pthread_mutex_lock(&r->lock);
    r->t_read += reading;
    r->error = ret < 0 ? ret : 0;
    r->done = 1;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* The decoding threads: woken, their reads made to fail (one may wait on
 * a stalled pipe), joined. */
static void stop_prefetch(Reader *r)
{
    for (int i = 0; i < 2; i++) {
        if (!r->pre[i])
            continue;
        prefetch_cancel(r->pre[i]);
        decoder_abort(r->dec[i]);
    }
    for (int i = 0; i < 2; i++)
        prefetch_free(&r->pre[i]);
}

int reader_start(Reader **out, Decoder *ref, Decoder *dist, const ReaderOptions *o, char *err,
                 size_t err_len)
{
    PairSource src[2];
    int parallel = 0;
    Reader *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    r->cancel = o->cancel;
    r->dec[0] = ref;
    r->dec[1] = dist;
    for (int i = 0; i < 2; i++) {
        DecoderInfo info;
        decoder_get_info(r->dec[i], &info);
        parallel |= strcmp(info.decoder, "cpu") != 0;
    }
    for (int i = 0; i < 2 && parallel; i++) {
        if (prefetch_start(&r->pre[i], r->dec[i], err, err_len)) {
            stop_prefetch(r);
            free(r);
            return -1;
        }
    }
    for (int i = 0; i < 2; i++) {
        DecoderInfo info;
        decoder_get_info(r->dec[i], &info);
        memset(&src[i], 0, sizeof(src[i]));
        src[i].read = parallel ? prefetch_source_read : source_read;
        src[i].ref = source_ref;
        src[i].release = source_release;
        /* a stream is not read to its end to count its frames (it may not
         * end) */
        src[i].count_rest = info.stream ? NULL
                            : parallel ? prefetch_source_count_rest : source_count_rest;
        src[i].timeless = !info.timestamps;
        src[i].opaque = parallel ? (void *)r->pre[i] : (void *)r->dec[i];
        src[i].fps = info.fps;
        src[i].offset = i ? o->dist_offset : o->ref_offset;
        src[i].lost = parallel ? prefetch_source_lost : source_lost;
        src[i].start = decoder_start_time(r->dec[i]);
        src[i].has_start = !isnan(src[i].start);
    }
    if (pairer_init(&r->pairer, &src[0], &src[1], o->mode, o->max_frames)) {
        if (o->mode == PAIR_TIME)
            snprintf(err, err_len, "--pairing time: the %s input has no frame rate (a y4m "
                     "header without F, or F0:0): its frames can only be paired by index",
                     src[0].timeless ? "reference" : "distorted");
        else
            snprintf(err, err_len, "out of memory");
        stop_prefetch(r);
        free(r);
        return -1;
    }
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
    if (pthread_create(&r->thread, NULL, reader_thread, r)) {
        snprintf(err, err_len, "cannot start the decoding thread");
        pthread_mutex_destroy(&r->lock);
        pthread_cond_destroy(&r->changed);
        pairer_free(&r->pairer);
        stop_prefetch(r);
        free(r);
        return -1;
    }
    *out = r;
    return 0;
}

int reader_mode(const Reader *r)
{
    return pairer_mode(r->pairer);
}

int reader_next(Reader *r, FramePair *pair, char *err, size_t err_len)
{
    int ret;
    pthread_mutex_lock(&r->lock);
    while (r->count == 0 && !r->done) {
        struct timespec t;
        if (r->cancel && *r->cancel) {
            pthread_mutex_unlock(&r->lock);
            return 0;
        }
        /* wake up now and then to see the cancel flag */
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 100000000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&r->changed, &r->lock, &t);
    }
    if (r->count > 0) {
        *pair = r->queue[r->head];
        r->head = (r->head + 1) % QUEUE_SIZE;
        r->count--;
        pthread_cond_broadcast(&r->changed);
        ret = 1;
    } else {
        ret = r->error;
        if (ret < 0)
            snprintf(err, err_len, "%s", r->message);
    }
    pthread_mutex_unlock(&r->lock);
    return ret;
}

void reader_release(FramePair *pair)
{
    decoder_release(pair->ref_owner);
    decoder_release(pair->dist_owner);
    memset(pair, 0, sizeof(*pair));
}

void reader_stats(Reader *r, PairStats *stats)
{
    pthread_mutex_lock(&r->lock);
    pairer_stats(r->pairer, stats);
    pthread_mutex_unlock(&r->lock);
}

void reader_timing(Reader *r, double *read, double *full)
{
    pthread_mutex_lock(&r->lock);
    *read = r->t_read;
    *full = r->t_full;
    pthread_mutex_unlock(&r->lock);
}

void reader_stop(Reader **pr)
{
    Reader *r = *pr;
    if (!r)
        return;
    int done;
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    done = r->done;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    if (!done) { /* it may wait for a frame, or for data on a pipe: make it return */
        for (int i = 0; i < 2; i++) {
            if (r->pre[i])
                prefetch_cancel(r->pre[i]);
            else
                decoder_abort(r->dec[i]);
        }
    }
    pthread_join(r->thread, NULL);
    stop_prefetch(r);
    while (r->count > 0) {
        reader_release(&r->queue[r->head]);
        r->head = (r->head + 1) % QUEUE_SIZE;
        r->count--;
    }
    pairer_free(&r->pairer);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->changed);
    free(r);
    *pr = NULL;
}
