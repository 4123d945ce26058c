/*
 * Closing decoders in the background (closer.h): a queue and a few
 * threads, started at the first decoder handed over.
 */
#include <pthread.h>
#include <stdlib.h>

#include "closer.h"

#define CLOSER_THREADS 2
#define CLOSER_QUEUE 16 /* decoders waiting at most; more are closed at once */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static Decoder *queue[CLOSER_QUEUE];
static int queued, stopping, nb_threads;
static pthread_t threads[CLOSER_THREADS];

static void *closing_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        Decoder *d;
        while (!queued && !stopping)
            pthread_cond_wait(&wake, &lock);
        if (!queued)
            break;
        d = queue[--queued];
        pthread_mutex_unlock(&lock);
        decoder_close(&d);
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

void closer_close(Decoder **dec)
{
    int later = 0;
    if (!*dec)
        return;
    pthread_mutex_lock(&lock);
    if (!stopping && nb_threads < CLOSER_THREADS &&
        !pthread_create(&threads[nb_threads], NULL, closing_thread, NULL))
        nb_threads++;
    if (nb_threads && queued < CLOSER_QUEUE) {
        queue[queued++] = *dec;
        later = 1;
        pthread_cond_signal(&wake);
    }
    pthread_mutex_unlock(&lock);
    if (later)
        *dec = NULL;
    else
        decoder_close(dec);
}

void closer_drain(void)
{
    int n;
    pthread_mutex_lock(&lock);
    stopping = 1;
    n = nb_threads;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++)
        pthread_join(threads[i], NULL);
    pthread_mutex_lock(&lock);
    nb_threads = 0;
    stopping = 0;
    pthread_mutex_unlock(&lock);
}
