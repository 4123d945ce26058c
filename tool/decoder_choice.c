/*
 * --hwdec auto's decision by measured speed, and the process's table of
 * decisions: see decoder_choice.h.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "decoder_choice.h"
#include "hwdec.h"

int decoder_choice_bucket(double bit_rate, int width, int height, double fps)
{
    double bpp;
    if (!(bit_rate > 0.0) || width <= 0 || height <= 0 || !(fps > 0.0))
        return DECODER_CHOICE_NO_BUCKET;
    bpp = bit_rate / ((double)width * height * fps);
    return (int)floor(2.0 * log2(bpp));
}

double decoder_choice_hw_pairs(double ref_fps, double dist_fps)
{
    if (!(ref_fps > 0.0) || !(dist_fps > 0.0))
        return 0.0;
    return ref_fps < dist_fps ? ref_fps : dist_fps;
}

int decoder_choice_pick(double cpu_pairs, double hw_pairs, int host_jobs)
{
    double cpu = cpu_pairs / (host_jobs > 1 ? host_jobs : 1);
    if (!(cpu > 0.0) || !(hw_pairs > 0.0) || isinf(cpu) || isinf(hw_pairs))
        return HWDEC_CUDA;
    return cpu > DECODER_CHOICE_CPU_MARGIN * hw_pairs ? HWDEC_NONE : HWDEC_CUDA;
}

/* The table: a few kinds of pairs per process are expected; when it is
 * full, decisions are no longer kept (each run measures). */
#define CHOICES 64
enum { EMPTY, MEASURING, DECIDED };

static struct {
    DecoderChoiceKey key;
    DecoderChoice choice;
    int state;
} table[CHOICES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t decided = PTHREAD_COND_INITIALIZER;

static int same_key(const DecoderChoiceKey *a, const DecoderChoiceKey *b)
{
    for (int i = 0; i < 2; i++) {
        const DecoderStreamKey *x = &a->in[i], *y = &b->in[i];
        if (x->codec_id != y->codec_id || x->profile != y->profile || x->width != y->width ||
            x->height != y->height || x->rate_bucket != y->rate_bucket ||
            strcmp(x->pix_fmt, y->pix_fmt))
            return 0;
    }
    return a->host_jobs == b->host_jobs;
}

/* The entry of key, or -1; called locked. */
static int find(const DecoderChoiceKey *key)
{
    for (int i = 0; i < CHOICES; i++)
        if (table[i].state != EMPTY && same_key(&table[i].key, key))
            return i;
    return -1;
}

int decoder_choice_claim(const DecoderChoiceKey *key, DecoderChoice *out)
{
    int i, found = 0;
    pthread_mutex_lock(&lock);
    for (;;) {
        i = find(key);
        if (i < 0 || table[i].state == DECIDED)
            break;
        pthread_cond_wait(&decided, &lock); /* another run measures it */
    }
    if (i >= 0) {
        *out = table[i].choice;
        found = 1;
    } else {
        for (i = 0; i < CHOICES && table[i].state != EMPTY; i++)
            ;
        if (i < CHOICES) {
            table[i].key = *key;
            table[i].state = MEASURING;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

int decoder_choice_peek(const DecoderChoiceKey *key, DecoderChoice *out)
{
    int i, found;
    pthread_mutex_lock(&lock);
    i = find(key);
    found = i >= 0 && table[i].state == DECIDED;
    if (found)
        *out = table[i].choice;
    pthread_mutex_unlock(&lock);
    return found;
}

int decoder_choice_has_cpu(void)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < CHOICES && !found; i++)
        found = table[i].state == DECIDED && table[i].choice.mode == HWDEC_NONE;
    pthread_mutex_unlock(&lock);
    return found;
}

void decoder_choice_store(const DecoderChoiceKey *key, const DecoderChoice *choice)
{
    int i;
    pthread_mutex_lock(&lock);
    if ((i = find(key)) < 0) /* not claimed: a decision found elsewhere */
        for (i = 0; i < CHOICES && table[i].state != EMPTY; i++)
            ;
    if (i < CHOICES) {
        table[i].key = *key;
        table[i].choice = *choice;
        table[i].state = DECIDED;
    }
    pthread_cond_broadcast(&decided);
    pthread_mutex_unlock(&lock);
}

void decoder_choice_abandon(const DecoderChoiceKey *key)
{
    int i;
    pthread_mutex_lock(&lock);
    if ((i = find(key)) >= 0 && table[i].state == MEASURING)
        table[i].state = EMPTY;
    pthread_cond_broadcast(&decided);
    pthread_mutex_unlock(&lock);
}

void decoder_choice_reset(void)
{
    pthread_mutex_lock(&lock);
    memset(table, 0, sizeof(table));
    pthread_mutex_unlock(&lock);
}
