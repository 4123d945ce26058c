/*
 * One decoding thread per input: decoder_read_owned in a loop into a small
 * queue. The last entry is the input's end or its error, handed out like a
 * frame, after which the thread stops.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prefetch.h"

/* Frames decoded ahead, unless the decoder says more (DecoderInfo's
 * read_ahead: with sessions, a session's stretch handed on at once, so
 * that the input's own decoder goes back to decoding sooner). */
#define AHEAD 4

typedef struct Entry {
    int ret;          /* 1 frame, 0 end, < 0 error */
    void *owner;
    double pts;
    unsigned lost;    /* decoder_error_count after this frame */
} Entry;

struct Prefetch {
    Decoder *dec;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    Entry *queue;
    int ahead;        /* entries */
    int head, count;
    int finished;     /* the thread queued the end or an error and left */
    int stop;         /* cancelled, or counting the rest */
    int joined;
    unsigned lost;    /* of the last entry handed out */
    char message[1024];
};

static void *prefetch_thread(void *opaque)
{
    Prefetch *p = opaque;
    for (;;) {
        Entry e = {0, NULL, 0.0, 0};
        QgpuPicture pic;
        char msg[1024] = "";
        pthread_mutex_lock(&p->lock);
        while (p->count == p->ahead && !p->stop)
            pthread_cond_wait(&p->changed, &p->lock);
        int stop = p->stop;
        pthread_mutex_unlock(&p->lock);
        if (stop)
            break;
        e.ret = decoder_read_owned(p->dec, &pic, &e.owner, msg, sizeof(msg));
        e.pts = decoder_last_pts(p->dec);
        e.lost = decoder_error_count(p->dec);
        pthread_mutex_lock(&p->lock);
        p->queue[(p->head + p->count) % p->ahead] = e;
        p->count++;
        if (e.ret < 0)
            snprintf(p->message, sizeof(p->message), "%s", msg);
        pthread_cond_broadcast(&p->changed);
        pthread_mutex_unlock(&p->lock);
        if (e.ret != 1)
            break;
    }
    pthread_mutex_lock(&p->lock);
    p->finished = 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int prefetch_start(Prefetch **out, Decoder *dec, char *err, size_t err_len)
{
    Prefetch *p = calloc(1, sizeof(*p));
    DecoderInfo info;
    decoder_get_info(dec, &info);
    if (p) {
        p->ahead = info.read_ahead > 0 ? info.read_ahead : AHEAD;
        p->queue = calloc((size_t)p->ahead, sizeof(*p->queue));
    }
    if (!p || !p->queue) {
        free(p);
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    p->dec = dec;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->changed, NULL);
    if (pthread_create(&p->thread, NULL, prefetch_thread, p)) {
        snprintf(err, err_len, "cannot start a decoding thread");
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->changed);
        free(p->queue);
        free(p);
        return -1;
    }
    *out = p;
    return 0;
}

int prefetch_read(Prefetch *p, void **owner, double *pts, char *err, size_t err_len)
{
    Entry e;
    pthread_mutex_lock(&p->lock);
    while (p->count == 0 && !p->finished && !p->stop)
        pthread_cond_wait(&p->changed, &p->lock);
    if (p->count == 0) {
        pthread_mutex_unlock(&p->lock);
        snprintf(err, err_len, "decoding stopped");
        return -1;
    }
    e = p->queue[p->head];
    if (e.ret == 1) { /* the end or the error stays for later calls */
        p->head = (p->head + 1) % p->ahead;
        p->count--;
    } else if (e.ret < 0) {
        snprintf(err, err_len, "%s", p->message);
    }
    p->lost = e.lost;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    *owner = e.ret == 1 ? e.owner : NULL;
    *pts = e.pts;
    return e.ret;
}

unsigned prefetch_lost(const Prefetch *p)
{
    return p->lost;
}

static void join(Prefetch *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    if (!p->joined) {
        pthread_join(p->thread, NULL);
        p->joined = 1;
    }
}

/* Frames decoded ahead: released; how many there were. */
static unsigned drop_queue(Prefetch *p)
{
    unsigned frames = 0;
    while (p->count > 0) {
        Entry *e = &p->queue[p->head];
        if (e->ret == 1) {
            decoder_release(e->owner);
            frames++;
        }
        p->head = (p->head + 1) % p->ahead;
        p->count--;
    }
    return frames;
}

unsigned prefetch_count_rest(Prefetch *p)
{
    unsigned ahead;
    join(p);
    ahead = drop_queue(p);
    return ahead + decoder_count_rest(p->dec);
}

void prefetch_cancel(Prefetch *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

void prefetch_free(Prefetch **pp)
{
    Prefetch *p = *pp;
    if (!p)
        return;
    join(p);
    drop_queue(p);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->changed);
    free(p->queue);
    free(p);
    *pp = NULL;
}
