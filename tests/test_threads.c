/*
 * Two contexts in two threads at once (doc/api.md, "Threads"): each
 * scores its own clip (VMAF v0.6.1, PSNR, SSIM) while the other runs, and
 * every score must equal, bit for bit, the same clip scored alone in one
 * thread. Then four threads on one shared device (qgpu_open_shared: one
 * OpenCL context, programs built once), opening their contexts at the same
 * instant: same scores, and the contexts use the very same programs. This
 * is what qgpu batch relies on when several jobs share a device.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "test_util.h"

#define W 176
#define H 144
#define FRAMES 8
#define MAX_SCORES 64

typedef struct Clip {
    TestPicture ref[FRAMES], dis[FRAMES];
} Clip;

typedef struct Scores {
    int ok;
    int count;
    char names[MAX_SCORES][64];
    double frame[FRAMES][MAX_SCORES];
    char error[512];
} Scores;

typedef struct Work {
    const Clip *clip;
    Scores *out;
    pthread_barrier_t *start; /* both threads submit at the same time */
    QgpuDevice *dev;          /* set: open on it, all threads at once */
} Work;

static int make_clip(Clip *c, int seed)
{
    test_seed(seed);
    for (int i = 0; i < FRAMES; i++) {
        if (test_picture_alloc(&c->ref[i], W, H, QGPU_LAYOUT_420, 8, 0) ||
            test_picture_alloc(&c->dis[i], W, H, QGPU_LAYOUT_420, 8, 0))
            return -1;
        test_picture_random(&c->ref[i]);
        test_picture_noisy_copy(&c->dis[i], &c->ref[i], 6 + i);
    }
    return 0;
}

static void free_clip(Clip *c)
{
    for (int i = 0; i < FRAMES; i++) {
        test_picture_free(&c->ref[i]);
        test_picture_free(&c->dis[i]);
    }
}

static int enable_metrics(QgpuContext *ctx)
{
    return qgpu_use_model(ctx, "version=vmaf_v0.6.1") || qgpu_enable_feature(ctx, "psnr") ||
           qgpu_enable_feature(ctx, "float_ssim");
}

/* Scores the clip on a context of its own (on dev when set: the threads
 * wait for each other before opening, so that they build or look up the
 * device's programs at the same time). */
static void score_clip(const Clip *clip, Scores *s, pthread_barrier_t *start, QgpuDevice *dev)
{
    QgpuContext *ctx = NULL;
    unsigned frame;
    memset(s, 0, sizeof(*s));
    if (dev) {
        if (start)
            pthread_barrier_wait(start);
        qgpu_open_shared(&ctx, dev, NULL);
    } else {
        ctx = test_open(2);
        if (start)
            pthread_barrier_wait(start);
    }
    if (!ctx) {
        snprintf(s->error, sizeof(s->error), "qgpu_open: %s", qgpu_open_error());
        return;
    }
    if (enable_metrics(ctx))
        goto fail;
    for (int i = 0; i < FRAMES; i++) {
        if (qgpu_submit(ctx, &clip->ref[i].pic, &clip->dis[i].pic))
            goto fail;
        while (qgpu_collect(ctx, &frame, 0) == 1)
            ;
    }
    if (qgpu_flush(ctx))
        goto fail;
    while (qgpu_collect(ctx, &frame, 1) == 1)
        ;
    s->count = qgpu_score_count(ctx);
    if (s->count > MAX_SCORES || qgpu_frame_count(ctx) != FRAMES) {
        snprintf(s->error, sizeof(s->error), "%d scores, %u frames", s->count,
                 qgpu_frame_count(ctx));
        qgpu_close(&ctx);
        return;
    }
    for (int k = 0; k < s->count; k++) {
        snprintf(s->names[k], sizeof(s->names[k]), "%s", qgpu_score_name(ctx, k));
        for (int i = 0; i < FRAMES; i++)
            if (qgpu_get_score(ctx, i, s->names[k], &s->frame[i][k]))
                goto fail;
    }
    s->ok = 1;
    qgpu_close(&ctx);
    return;
fail:
    snprintf(s->error, sizeof(s->error), "%s", qgpu_last_error(ctx));
    qgpu_close(&ctx);
}

static void *thread_main(void *opaque)
{
    Work *w = opaque;
    score_clip(w->clip, w->out, w->start, w->dev);
    return NULL;
}

/* Equal names, and every score equal bit for bit. */
static int same(const Scores *a, const Scores *b, char *what, size_t len)
{
    if (!a->ok || !b->ok || a->count != b->count) {
        snprintf(what, len, "runs failed or differ in scores (%s / %s)", a->error, b->error);
        return 0;
    }
    for (int k = 0; k < a->count; k++) {
        if (strcmp(a->names[k], b->names[k])) {
            snprintf(what, len, "score %d: %s vs %s", k, a->names[k], b->names[k]);
            return 0;
        }
        for (int i = 0; i < FRAMES; i++)
            if (memcmp(&a->frame[i][k], &b->frame[i][k], sizeof(double))) {
                snprintf(what, len, "frame %d %s: %.17g vs %.17g", i, a->names[k],
                         a->frame[i][k], b->frame[i][k]);
                return 0;
            }
    }
    return 1;
}

/* Two contexts share the device's programs: the same cl_program objects,
 * built once; a context of qgpu_open has its own. */
static void check_programs_shared(QgpuDevice *dev, const Clip *clip)
{
    QgpuContext *a = NULL, *b = NULL, *own = test_open(2);
    int same = 0, shared_any = 0;
    CHECK(qgpu_open_shared(&a, dev, NULL) == 0 && qgpu_open_shared(&b, dev, NULL) == 0 && own,
          "two contexts on the shared device: %s", qgpu_open_error());
    /* the programs are built at the first submit */
    if (a && b && own && !enable_metrics(a) && !enable_metrics(b) && !enable_metrics(own) &&
        !qgpu_submit(a, &clip->ref[0].pic, &clip->dis[0].pic) &&
        !qgpu_submit(b, &clip->ref[0].pic, &clip->dis[0].pic) &&
        !qgpu_submit(own, &clip->ref[0].pic, &clip->dis[0].pic)) {
        same = a->nb_programs > 0 && a->nb_programs == b->nb_programs;
        for (int i = 0; same && i < a->nb_programs; i++)
            same = a->programs[i].program == b->programs[i].program;
        for (int i = 0; i < a->nb_programs && i < own->nb_programs; i++)
            shared_any |= a->programs[i].program == own->programs[i].program;
    }
    CHECK(same, "two contexts on one shared device use the same %d programs",
          a ? a->nb_programs : 0);
    CHECK(!shared_any, "a context of qgpu_open has programs of its own");
    qgpu_close(&a);
    qgpu_close(&b);
    qgpu_close(&own);
}

/* Four threads on one shared device (clips 0, 1, 0, 1), opening at once;
 * then a context that outlives the caller's reference to its device. */
static void test_shared(const Clip *clips, const Scores *alone)
{
    static Scores shared[4], late;
    QgpuDevice *dev = NULL;
    QgpuContext *ctx = NULL;
    pthread_barrier_t start;
    pthread_t th[4];
    Work work[4];
    char what[1200];
    if (!CHECK(qgpu_device_open(&dev, NULL) == 0, "qgpu_device_open: %s", qgpu_open_error()))
        return;
    CHECK(qgpu_open_shared(&ctx, NULL, NULL) == QGPU_ERR_INVALID_ARG && !ctx,
          "qgpu_open_shared without a device: invalid argument");
    pthread_barrier_init(&start, NULL, 4);
    for (int t = 0; t < 4; t++) {
        work[t] = (Work){&clips[t % 2], &shared[t], &start, dev};
        CHECK(pthread_create(&th[t], NULL, thread_main, &work[t]) == 0, "thread %d", t);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < 4; t++)
        CHECK(same(&alone[t % 2], &shared[t], what, sizeof(what)),
              "clip %d in thread %d of four on a shared device equals it alone: %s", t % 2, t,
              what);
    pthread_barrier_destroy(&start);
    check_programs_shared(dev, &clips[0]);
    /* the device lives until its last context closes */
    CHECK(qgpu_open_shared(&ctx, dev, NULL) == 0, "a context on the device");
    qgpu_device_close(&dev);
    CHECK(!dev, "qgpu_device_close clears the pointer");
    if (ctx) {
        unsigned frame;
        int ok = !enable_metrics(ctx);
        for (int i = 0; ok && i < FRAMES; i++)
            ok = !qgpu_submit(ctx, &clips[1].ref[i].pic, &clips[1].dis[i].pic);
        ok = ok && !qgpu_flush(ctx);
        while (ok && qgpu_collect(ctx, &frame, 1) == 1)
            ;
        late.ok = ok && qgpu_frame_count(ctx) == FRAMES &&
                  !qgpu_get_score(ctx, FRAMES - 1, "vmaf", &late.frame[0][0]);
        CHECK(late.ok, "a context scores after its device's last other reference is gone: %s",
              qgpu_last_error(ctx));
        qgpu_close(&ctx);
    }
}

int main(void)
{
    static Clip clips[2];
    static Scores alone[2], together[2], twin[2];
    pthread_barrier_t start;
    pthread_t th[2];
    Work work[2];
    char what[1200];
    if (!CHECK(make_clip(&clips[0], 11) == 0 && make_clip(&clips[1], 29) == 0, "clips"))
        return test_finish();
    /* each clip alone, one after the other */
    for (int c = 0; c < 2; c++) {
        score_clip(&clips[c], &alone[c], NULL, NULL);
        CHECK(alone[c].ok, "clip %d alone: %s", c, alone[c].error);
    }
    CHECK(alone[0].ok && alone[0].frame[0][0] != alone[1].frame[0][0],
          "the two clips score differently (the comparison below can fail)");
    /* both at once, one context per thread */
    pthread_barrier_init(&start, NULL, 2);
    for (int c = 0; c < 2; c++) {
        work[c] = (Work){&clips[c], &together[c], &start, NULL};
        CHECK(pthread_create(&th[c], NULL, thread_main, &work[c]) == 0, "thread %d", c);
    }
    for (int c = 0; c < 2; c++)
        pthread_join(th[c], NULL);
    for (int c = 0; c < 2; c++)
        CHECK(same(&alone[c], &together[c], what, sizeof(what)),
              "clip %d in two threads equals clip %d alone: %s", c, c, what);
    /* the same clip in both threads */
    for (int c = 0; c < 2; c++) {
        work[c] = (Work){&clips[0], &twin[c], &start, NULL};
        CHECK(pthread_create(&th[c], NULL, thread_main, &work[c]) == 0, "thread %d", c);
    }
    for (int c = 0; c < 2; c++)
        pthread_join(th[c], NULL);
    for (int c = 0; c < 2; c++)
        CHECK(same(&alone[0], &twin[c], what, sizeof(what)),
              "clip 0 in thread %d of two running it equals clip 0 alone: %s", c, what);
    pthread_barrier_destroy(&start);
    test_shared(clips, alone);
    free_clip(&clips[0]);
    free_clip(&clips[1]);
    return test_finish();
}
