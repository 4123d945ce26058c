/* Pairing by presentation time: see pairing.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pairing.h"

/* Timestamps closer than this are equal (rounding of pts * time_base). */
#define TIME_EPS 1e-6

struct Pairer {
    PairSource src[2];
    int mode;
    unsigned max_pairs;
    int started, finished;
    double base[2];     /* presentation time of each input's first frame */
    double last[2];     /* last presentation time read (for missing ones) */
    unsigned read[2];   /* frames read from each input */
    int eof[2];
    /* time mode: current and look-ahead distorted frames (relative times) */
    void *cur, *next;
    double cur_t, next_t;
    int cur_used;
    PairStats st;
};

int pairer_init(Pairer **out, const PairSource *ref, const PairSource *dist, int mode,
                unsigned max_pairs)
{
    Pairer *p;
    if (mode == PAIR_TIME && (ref->timeless || dist->timeless))
        return -1;
    p = calloc(1, sizeof(*p));
    if (!p)
        return -1;
    p->src[0] = *ref;
    p->src[1] = *dist;
    p->max_pairs = max_pairs;
    if (mode == PAIR_AUTO) {
        double a = ref->fps, b = dist->fps;
        mode = a > 0 && b > 0 && fabs(a - b) > 1e-3 * fmax(a, b) && !ref->timeless &&
                       !dist->timeless
                   ? PAIR_TIME
                   : PAIR_INDEX;
    }
    p->mode = mode;
    p->st.mode = mode;
    p->st.ended_first = -1;
    p->last[0] = p->last[1] = NAN;
    *out = p;
    return 0;
}

int pairer_mode(const Pairer *p)
{
    return p->mode;
}

static double frame_duration(const PairSource *s)
{
    return s->fps > 0 ? 1.0 / s->fps : 1.0 / 25;
}

/* Reads one frame of input i; a missing timestamp is the previous one plus
 * one frame duration. */
static int read_frame(Pairer *p, int i, double *t, void **frame, char *err, size_t err_len)
{
    double pts = NAN;
    int ret;
    if (p->eof[i])
        return 0;
    ret = p->src[i].read(p->src[i].opaque, &pts, frame, err, err_len);
    if (ret == 0)
        p->eof[i] = 1;
    if (ret != 1)
        return ret;
    if (isnan(pts))
        pts = isnan(p->last[i]) ? 0.0 : p->last[i] + frame_duration(&p->src[i]);
    p->last[i] = pts;
    p->read[i]++;
    *t = pts;
    return 1;
}

/* Counts the frames each input had and ends pairing. */
static int finish(Pairer *p, int ended_first, int limit)
{
    p->finished = 1;
    p->st.ended_first = ended_first;
    p->st.limit_reached = limit;
    for (int i = 0; i < 2; i++) {
        p->st.frames[i] = p->read[i];
        p->st.complete[i] = p->eof[i];
        if (!p->eof[i] && !limit && p->src[i].count_rest) {
            p->st.frames[i] += p->src[i].count_rest(p->src[i].opaque);
            p->st.complete[i] = 1;
        }
    }
    return 0;
}

/* Skips the offsets: 1 when both inputs still have frames, 0 / < 0 else. */
static int start(Pairer *p, char *err, size_t err_len)
{
    p->started = 1;
    for (int i = 0; i < 2; i++) {
        for (unsigned n = 0; n < p->src[i].offset; n++) {
            void *frame;
            double t;
            int ret = read_frame(p, i, &t, &frame, err, err_len);
            if (ret < 0)
                return ret;
            if (ret == 0)
                return finish(p, i, 0);
            p->src[i].release(p->src[i].opaque, frame);
        }
    }
    return 1;
}

static void note_mismatch(Pairer *p, double dt, double tolerance)
{
    dt = fabs(dt);
    if (dt > p->st.max_mismatch)
        p->st.max_mismatch = dt;
    if (dt > tolerance + TIME_EPS)
        p->st.mismatched++;
}

/* The reference ended: did the distorted input have more frames? */
static int ref_ended(Pairer *p, char *err, size_t err_len)
{
    if (p->mode == PAIR_TIME && p->next)
        return finish(p, 0, 0);
    void *frame;
    double t;
    int ret = read_frame(p, 1, &t, &frame, err, err_len);
    if (ret < 0)
        return ret;
    if (ret == 1) {
        p->src[1].release(p->src[1].opaque, frame);
        return finish(p, 0, 0);
    }
    return finish(p, -1, 0);
}

static unsigned lost_frames(const Pairer *p, int i)
{
    return p->src[i].lost ? p->src[i].lost(p->src[i].opaque) : 0;
}

/* Index mode after a loss: while the two frames are more than half a frame
 * apart, the earlier one has no partner: it is left out and the next frame
 * of its input read. 1 with both frames set, 0 / < 0 as pairer_next. */
static int realign(Pairer *p, double *tr, double *td, void **rf, void **df, double tolerance,
                   char *err, size_t err_len)
{
    for (;;) {
        double dt = (*tr - p->base[0]) - (*td - p->base[1]);
        int i = dt < 0 ? 0 : 1; /* the input behind */
        int ret;
        if (fabs(dt) <= tolerance + TIME_EPS)
            return 1;
        p->src[i].release(p->src[i].opaque, i ? *df : *rf);
        p->st.dropped[i]++;
        ret = read_frame(p, i, i ? td : tr, i ? df : rf, err, err_len);
        if (ret != 1) {
            p->src[!i].release(p->src[!i].opaque, i ? *rf : *df);
            *rf = *df = NULL;
            /* the input that ended had no partner for the other's frame */
            return ret < 0 ? ret : finish(p, i, 0);
        }
    }
}

/* Each input's clock zero: its first frame, or its first packet when
 * frames were lost before the first pair. */
static void set_base(Pairer *p, int i, double t)
{
    p->base[i] = t;
    if (lost_frames(p, i) && p->src[i].has_start && p->src[i].offset == 0 &&
        p->src[i].start < t)
        p->base[i] = p->src[i].start;
}

static int next_index(Pairer *p, void **rf, void **df, char *err, size_t err_len)
{
    double tr, td;
    double fps = p->src[0].fps > 0 ? p->src[0].fps : p->src[1].fps;
    /* the same index should be the same moment: half a frame is the most
     * two frames of one rate can differ and still be the nearest */
    double tolerance = fps > 0 ? 0.5 / fps : 0.5 / 25;
    int ret = read_frame(p, 0, &tr, rf, err, err_len);
    if (ret < 0)
        return ret;
    if (ret == 0)
        return ref_ended(p, err, err_len);
    ret = read_frame(p, 1, &td, df, err, err_len);
    if (ret != 1) {
        p->src[0].release(p->src[0].opaque, *rf);
        *rf = NULL;
        return ret < 0 ? ret : finish(p, 1, 0);
    }
    if (p->st.pairs == 0) {
        set_base(p, 0, tr);
        set_base(p, 1, td);
    }
    if (p->src[0].timeless || p->src[1].timeless) { /* by index, nothing to compare */
        p->st.pairs++;
        return 1;
    }
    if (lost_frames(p, 0) || lost_frames(p, 1)) {
        ret = realign(p, &tr, &td, rf, df, tolerance, err, err_len);
        if (ret != 1)
            return ret;
    }
    note_mismatch(p, (tr - p->base[0]) - (td - p->base[1]), tolerance);
    p->st.pairs++;
    return 1;
}

/* Reads the look-ahead distorted frame (relative time) if there is one. */
static int load_next(Pairer *p, char *err, size_t err_len)
{
    double t;
    int ret;
    if (p->next || p->eof[1])
        return 0;
    ret = read_frame(p, 1, &t, &p->next, err, err_len);
    if (ret == 1)
        p->next_t = t - p->base[1];
    else
        p->next = NULL;
    return ret < 0 ? ret : 0;
}

static int next_time(Pairer *p, void **rf, void **df, char *err, size_t err_len)
{
    double tr, rel, dur = frame_duration(&p->src[1]);
    int ret = read_frame(p, 0, &tr, rf, err, err_len);
    if (ret < 0)
        return ret;
    if (ret == 0)
        return ref_ended(p, err, err_len);
    if (p->st.pairs == 0 && !p->cur) {
        double td;
        p->base[0] = tr;
        ret = read_frame(p, 1, &td, &p->cur, err, err_len);
        if (ret != 1) {
            p->cur = NULL;
            p->src[0].release(p->src[0].opaque, *rf);
            *rf = NULL;
            return ret < 0 ? ret : finish(p, 1, 0);
        }
        p->base[1] = td;
        p->cur_t = 0.0;
        p->cur_used = 0;
    }
    rel = tr - p->base[0];
    if ((ret = load_next(p, err, err_len)) < 0)
        goto fail;
    /* advance to the distorted frame nearest in time (ties: the earlier) */
    while (p->next && fabs(p->next_t - rel) < fabs(p->cur_t - rel) - TIME_EPS) {
        if (!p->cur_used)
            p->st.skipped++;
        p->src[1].release(p->src[1].opaque, p->cur);
        p->cur = p->next;
        p->cur_t = p->next_t;
        p->cur_used = 0;
        p->next = NULL;
        if ((ret = load_next(p, err, err_len)) < 0)
            goto fail;
    }
    if (!p->next && p->eof[1] && rel - p->cur_t > dur / 2 + TIME_EPS) {
        /* past the last distorted frame's time */
        p->src[0].release(p->src[0].opaque, *rf);
        *rf = NULL;
        return finish(p, 1, 0);
    }
    *df = p->src[1].ref(p->src[1].opaque, p->cur);
    if (!*df) {
        snprintf(err, err_len, "out of memory");
        ret = -1;
        goto fail;
    }
    if (p->cur_used)
        p->st.reused++;
    p->cur_used = 1;
    note_mismatch(p, rel - p->cur_t, dur);
    p->st.pairs++;
    return 1;
fail:
    p->src[0].release(p->src[0].opaque, *rf);
    *rf = NULL;
    return ret;
}

int pairer_next(Pairer *p, void **rf, void **df, char *err, size_t err_len)
{
    int ret;
    *rf = *df = NULL;
    if (p->finished)
        return 0;
    if (!p->started && (ret = start(p, err, err_len)) != 1)
        return ret;
    if (p->max_pairs && p->st.pairs == p->max_pairs)
        return finish(p, -1, 1);
    return p->mode == PAIR_TIME ? next_time(p, rf, df, err, err_len)
                                : next_index(p, rf, df, err, err_len);
}

void pairer_stats(const Pairer *p, PairStats *stats)
{
    *stats = p->st;
    if (!p->finished) {
        stats->frames[0] = p->read[0];
        stats->frames[1] = p->read[1];
    }
}

void pairer_free(Pairer **pp)
{
    Pairer *p = *pp;
    if (!p)
        return;
    if (p->cur)
        p->src[1].release(p->src[1].opaque, p->cur);
    if (p->next)
        p->src[1].release(p->src[1].opaque, p->next);
    free(p);
    *pp = NULL;
}
