/*
 * Several decoders on one input, each on stretches between key frames,
 * their frames handed out in order (sessions.h).
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sched.h>
#include <unistd.h>

#include <libavformat/avformat.h>

#include "clock.h"
#include "hwdec.h"
#include "sessions.h"
#include "stretch_choice.h"

/* Who decodes a stretch: nobody yet, the input's own decoder, else the
 * index of a session. */
#define TAKER_NONE (-1)
#define TAKER_OWN (-2)

/* The frames whose time stamps lie in [start, end) (the stream's time
 * base; INT64_MIN and INT64_MAX: open). */
typedef struct Stretch {
    int64_t start, end;
    unsigned first;  /* index of its first frame in presentation order */
    unsigned frames; /* frames its packets announce */
    /* under the lock: */
    int taker;       /* TAKER_NONE, TAKER_OWN or a session's index */
    int decoded;     /* its taker queued its end (or an error) */
    int dirty;       /* with decoding errors, or the error */
} Stretch;

typedef struct Entry {
    int ret;         /* 1 a frame, 0 the stretch's end, < 0 an error */
    void *owner;
    double pts;
    unsigned errors; /* the stretch's decoding errors so far */
    unsigned corrupt;
} Entry;

typedef struct Session {
    Sessions *s;
    int index;
    int on_cpu;      /* a CPU decoder */
    int clean_only;  /* a CPU decoder beside a hardware one: its stretches are
                        used only when decoded whole without an error (else
                        the own decoder decodes them again), so that the
                        frames are those one decoder gives, also in damaged
                        files where the two decoders conceal differently */
    int last;        /* the last stretch it took (-1 none): it takes them in order */
    unsigned frames; /* decoded (its rate, with t_decode) */
    pthread_t thread;
    int running;     /* the thread was created */
    Decoder *dec;    /* opened on the thread (set under the lock) */
    Entry *queue;    /* s->ahead entries */
    int head, count;
    char message[1024];
    /* QGPU_TIMING: seconds opening, seeking, decoding, waiting for room */
    double t_open, t_seek, t_decode, t_wait;
} Session;

struct Sessions {
    Decoder *own;    /* the input's decoder, decoding in line on the reading
                        thread the stretches nobody took */
    int n;           /* sessions besides it (threads) */
    int n_cpu;       /* of them, the first n_cpu decode on the CPU */
    int own_on_cpu;  /* the own decoder is a CPU decoder (the CPU path) */
    int cpu_threads; /* each of those decoders' threads */
    int ahead;       /* frames a session queues at most */
    int ring_slots;
    int hw_slot;
    Stretch *stretch;
    int nb_stretches;
    StretchView *view; /* the stretches as stretch_choose_in_time sees them */
    unsigned total;  /* frames of the whole input */
    unsigned delivered; /* frames handed out so far (under the lock) */
    Session *session;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int stop;
    int failed;      /* a session could not open its decoder (message in failure) */
    char failure[1024];
    int current;     /* the stretch being read */
    unsigned errors_done, corrupt_done; /* of the stretches read to their end */
    unsigned errors_now, corrupt_now;   /* of the current one, at its last frame read */
    /* the own decoder's stretch: counts at its start, frames so far */
    unsigned own_errors0, own_corrupt0, own_got;
    /* its rate (frames, seconds decoding) and QGPU_TIMING */
    unsigned own_frames;
    int own_stretches, own_seeks;
    int redecoded;   /* CPU sessions' stretches decoded again by the own decoder */
    double t_own, t_own_seek;
    double t_read;   /* QGPU_TIMING: the reader's seconds waiting for sessions' frames */
};

/* ------------------------------------------------------------- the plan */

static int compare_ts(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Index of the first of the n sorted values that is >= v. */
static unsigned lower_bound(const int64_t *sorted, unsigned n, int64_t v)
{
    unsigned lo = 0, hi = n;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (sorted[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Appends v to the growing array *a of *n values. 0, or -1 out of memory. */
static int append_ts(int64_t **a, unsigned *n, unsigned *cap, int64_t v)
{
    if (*n == *cap) {
        unsigned c = *cap ? 2 * *cap : 1024;
        int64_t *grown = realloc(*a, c * sizeof(**a));
        if (!grown)
            return -1;
        *a = grown;
        *cap = c;
    }
    (*a)[(*n)++] = v;
    return 0;
}

/* The time stamps of stream's frames (packets to decode) and of its key
 * frames, each sorted: 0, 1 when they cannot be cut into stretches (why
 * in note), < 0 an error (message in err). */
static int scan_packets(const char *path, int stream, int64_t **pts, unsigned *nb_pts,
                        int64_t **keys, unsigned *nb_keys, char *note, size_t note_len,
                        char *err, size_t err_len)
{
    AVFormatContext *fmt = NULL;
    AVPacket *pkt = av_packet_alloc();
    unsigned cap = 0, cap_keys = 0;
    int ret = pkt ? avformat_open_input(&fmt, path, NULL, NULL) : AVERROR(ENOMEM);
    *pts = *keys = NULL;
    *nb_pts = *nb_keys = 0;
    if (ret >= 0 && stream >= (int)fmt->nb_streams)
        ret = AVERROR_INVALIDDATA;
    while (ret >= 0) {
        ret = av_read_frame(fmt, pkt);
        if (ret == AVERROR_EOF) {
            ret = 0;
            break;
        }
        if (ret < 0)
            break;
        if (pkt->stream_index == stream && !(pkt->flags & AV_PKT_FLAG_DISCARD)) {
            if (pkt->pts == AV_NOPTS_VALUE) {
                snprintf(note, note_len, "packets without time stamps");
                ret = 1;
            } else if (append_ts(pts, nb_pts, &cap, pkt->pts) ||
                       ((pkt->flags & AV_PKT_FLAG_KEY) &&
                        append_ts(keys, nb_keys, &cap_keys, pkt->pts))) {
                ret = AVERROR(ENOMEM);
            }
        }
        av_packet_unref(pkt);
    }
    av_packet_free(&pkt);
    avformat_close_input(&fmt);
    if (ret < 0) {
        char why[AV_ERROR_MAX_STRING_SIZE];
        av_strerror(ret, why, sizeof(why));
        snprintf(err, err_len, "reading the packets to decode in sessions: %s", why);
    }
    if (ret != 0) {
        free(*pts);
        free(*keys);
        *pts = *keys = NULL;
        return ret;
    }
    qsort(*pts, *nb_pts, sizeof(**pts), compare_ts);
    qsort(*keys, *nb_keys, sizeof(**keys), compare_ts);
    for (unsigned i = 1; i < *nb_pts; i++)
        if ((*pts)[i] == (*pts)[i - 1]) {
            snprintf(note, note_len, "two frames with one time stamp");
            return 1;
        }
    return 0;
}

/* Whether a decoder of its own can start each stretch: a fresh demuxer of
 * path, asked for the key frame at the stretch's start, gives that key
 * frame (or one before it) as its first packet of the stream. 1 yes, 0
 * no (why in note). */
static int check_seeks(const Sessions *s, const char *path, int stream, char *note,
                       size_t note_len)
{
    AVFormatContext *fmt = NULL;
    AVPacket *pkt = av_packet_alloc();
    int ok = pkt && avformat_open_input(&fmt, path, NULL, NULL) >= 0 &&
             stream < (int)fmt->nb_streams;
    for (int k = 1; ok && k < s->nb_stretches; k++) {
        int64_t start = s->stretch[k].start;
        ok = avformat_seek_file(fmt, stream, INT64_MIN, start, start, 0) >= 0;
        while (ok && (ok = av_read_frame(fmt, pkt) >= 0) && pkt->stream_index != stream)
            av_packet_unref(pkt);
        if (ok) {
            ok = (pkt->flags & AV_PKT_FLAG_KEY) && pkt->pts != AV_NOPTS_VALUE &&
                 pkt->pts <= start;
            av_packet_unref(pkt);
        }
        if (!ok)
            snprintf(note, note_len, "its container does not seek to each key frame");
    }
    if (!pkt || !fmt)
        snprintf(note, note_len, "cannot open it a second time");
    av_packet_free(&pkt);
    avformat_close_input(&fmt);
    return ok;
}

/* s->stretch from the sorted time stamps: cut at key frames, each
 * stretch at least SESSIONS_MIN_FRAMES long. 0 or -1 out of memory. */
static int plan_stretches(Sessions *s, const int64_t *pts, unsigned nb_pts, const int64_t *keys,
                          unsigned nb_keys)
{
    unsigned last = 0;
    s->stretch = calloc((size_t)nb_keys + 1, sizeof(*s->stretch));
    if (!s->stretch)
        return -1;
    s->stretch[0].start = INT64_MIN;
    s->nb_stretches = 1;
    for (unsigned k = 0; k < nb_keys; k++) {
        unsigned i = lower_bound(pts, nb_pts, keys[k]);
        Stretch *cur = &s->stretch[s->nb_stretches - 1];
        if (i - last < SESSIONS_MIN_FRAMES || i >= nb_pts)
            continue;
        cur->end = keys[k];
        cur->frames = i - last;
        s->stretch[s->nb_stretches].start = keys[k];
        s->stretch[s->nb_stretches].first = i;
        s->nb_stretches++;
        last = i;
    }
    s->stretch[s->nb_stretches - 1].end = INT64_MAX;
    s->stretch[s->nb_stretches - 1].frames = nb_pts - last;
    s->total = nb_pts;
    return 0;
}

/* Sessions and queue lengths that fit $QGPU_DECODE_SESSIONS_MB: 0, or 1
 * when not two sessions fit (why in note). */
static int fit_memory(Sessions *s, size_t frame_bytes, char *note, size_t note_len)
{
    const char *env = getenv("QGPU_DECODE_SESSIONS_MB");
    double budget = (env && *env ? atof(env) : 3072.0) * 1024.0 * 1024.0;
    double bytes = frame_bytes > 0 ? (double)frame_bytes : 1.0;
    unsigned longest = 0;
    for (int i = 0; i < s->nb_stretches; i++)
        if (s->stretch[i].frames > longest)
            longest = s->stretch[i].frames;
    /* a stretch and its end: a CPU session beside a hardware decoder queues
     * it whole before it is used */
    s->ahead = longest + 1 < SESSIONS_MAX_AHEAD ? (int)longest + 1 : SESSIONS_MAX_AHEAD;
    if (s->ahead < 8)
        s->ahead = 8;
    if (s->n * (s->ahead + SESSIONS_FRAMES_OUT) * bytes > budget) {
        double fit = budget / (s->n * bytes) - SESSIONS_FRAMES_OUT;
        if (fit >= 8.0) {
            s->ahead = (int)fit;
        } else {
            s->ahead = 8;
            s->n = (int)(budget / ((8 + SESSIONS_FRAMES_OUT) * bytes));
        }
    }
    if (s->n < 1) {
        snprintf(note, note_len, "a session's frames would not fit in "
                 "QGPU_DECODE_SESSIONS_MB (%.0f MB)", budget / (1024.0 * 1024.0));
        return 1;
    }
    if (s->n_cpu > s->n) /* fewer sessions: the CPU decoders are kept first */
        s->n_cpu = s->n;
    s->ring_slots = s->ahead + SESSIONS_FRAMES_OUT;
    return 0;
}

/* ------------------------------------------------------------- sessions */

/* Waits until w's queue has room: 0, or 1 when stopping. */
static int wait_for_room(Session *w)
{
    Sessions *s = w->s;
    double t0 = monotonic_seconds();
    int stop;
    pthread_mutex_lock(&s->lock);
    while (w->count >= s->ahead && !s->stop)
        pthread_cond_wait(&s->changed, &s->lock);
    stop = s->stop;
    pthread_mutex_unlock(&s->lock);
    w->t_wait += monotonic_seconds() - t0;
    return stop;
}

/* e into w's queue; the end of stretch st (or an error while decoding it)
 * marks st decoded, and dirty when it had decoding errors. */
static void push(Session *w, const Entry *e, Stretch *st, const char *message)
{
    Sessions *s = w->s;
    pthread_mutex_lock(&s->lock);
    w->queue[(w->head + w->count) % s->ahead] = *e;
    w->count++;
    if (e->ret != 1 && st) {
        st->decoded = 1;
        st->dirty = e->ret < 0 || e->errors || e->corrupt;
    }
    if (message)
        snprintf(w->message, sizeof(w->message), "%s", message);
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
}

/* A stretch decodes as in one decoder when it starts with its key frame (a
 * decoder's state is fresh there either way) and has no frame more than
 * its packets; frames dropped inside it (damaged packets some decoders
 * drop without a word) are dropped by one decoder too. 0, or
 * AVERROR_INVALIDDATA with the message in msg. */
static int check_stretch(const Stretch *st, unsigned got, int64_t first_ts, unsigned errors,
                         char *msg, size_t len)
{
    if (got <= st->frames && (st->start == INT64_MIN || first_ts == st->start))
        return 0;
    snprintf(msg, len, "decoding in sessions: frames %u to %u (%u of them) did not decode "
             "from their key frame as in one decoder (%u frames, %u decoding errors; the key "
             "frame damaged?); use one decoder: --decode-sessions 1 --cpu-sessions 0",
             st->first, st->first + st->frames - 1, st->frames, got, errors);
    return AVERROR_INVALIDDATA;
}

/* One stretch into w's queue: 0 at its end, 1 when stopping, < 0 an
 * error (message in msg). */
static int decode_stretch(Session *w, Decoder *dec, Stretch *st, char *msg, size_t len)
{
    unsigned errors0 = decoder_error_count(dec), corrupt0 = decoder_corrupt_count(dec);
    unsigned got = 0;
    double t0 = monotonic_seconds();
    int ret = decoder_seek_window(dec, st->start, st->end, st->first, msg, len);
    w->t_seek += monotonic_seconds() - t0;
    while (ret >= 0) {
        Entry e = {0, NULL, 0.0, 0, 0};
        QgpuPicture pic;
        if (wait_for_room(w))
            return 1;
        t0 = monotonic_seconds();
        ret = decoder_read_owned(dec, &pic, &e.owner, msg, len);
        w->t_decode += monotonic_seconds() - t0;
        if (ret < 0)
            break;
        e.ret = ret;
        e.errors = decoder_error_count(dec) - errors0;
        e.corrupt = decoder_corrupt_count(dec) - corrupt0;
        if (ret == 1) {
            got++;
            w->frames++;
            e.pts = decoder_last_pts(dec);
            push(w, &e, st, NULL);
            continue;
        }
        ret = check_stretch(st, got, decoder_window_first(dec), e.errors, msg, len);
        if (ret < 0)
            return ret;
        push(w, &e, st, NULL);
        return 0;
    }
    return ret;
}

/* How many stretches ahead of the one being read a CPU session starts its
 * next: as many as the input's own (hardware) decoder decodes while the
 * session decodes one, from the rates so far, and two more (5 before
 * there are any), so that its frames are ready when the reader comes to
 * them (on the H200, one more left the reader waiting now and then for a
 * session that took longer to open). Under the lock. */
static int cpu_lead(const Sessions *s, const Session *w)
{
    double own_rate = s->own_frames >= 8 && s->t_own > 0.0 ? s->own_frames / s->t_own : 0.0;
    double rate = w->frames >= 8 && w->t_decode > 0.0 ? w->frames / w->t_decode : 0.0;
    double lead = own_rate > 0.0 && rate > 0.0 ? ceil(own_rate / rate) + 2.0 : 5.0;
    return lead < 1.0 ? 1 : lead > s->nb_stretches ? s->nb_stretches : (int)lead;
}

/* Margins of a CPU session's time on the CPU path (stretch_choice.h): a
 * quarter to spare once its rate is measured, a half before. */
#define IN_TIME_MARGIN 1.25
#define IN_TIME_MARGIN_UNKNOWN 1.5

/* On the CPU path: the first free stretch after the one being read and
 * after w's last that w can decode before the own decoder comes to it
 * (stretch_choose_in_time, from the rates so far), -1 when none. Under
 * the lock. */
static int in_time_stretch(const Sessions *s, const Session *w)
{
    double own_rate = s->own_frames >= 8 && s->t_own > 0.0 ? s->own_frames / s->t_own : 0.0;
    double rate = w->frames >= 8 && w->t_decode > 0.0 ? w->frames / w->t_decode : 0.0;
    int after = s->current > w->last ? s->current : w->last;
    for (int k = 0; k < s->nb_stretches; k++) {
        s->view[k].first = s->stretch[k].first;
        s->view[k].frames = s->stretch[k].frames + 1; /* and the frame that ends it */
        s->view[k].free = s->stretch[k].taker == TAKER_NONE &&
                          s->stretch[k].frames + 1 <= (unsigned)s->ahead;
    }
    return stretch_choose_in_time(s->view, s->nb_stretches, after, s->delivered, own_rate, rate,
                                  rate > 0.0 ? IN_TIME_MARGIN : IN_TIME_MARGIN_UNKNOWN);
}

/* The next stretch for session w, marked as its own: the first nobody
 * took from the one after the stretch being read (a CPU session: further
 * on, cpu_lead; on the CPU path, in_time_stretch) and after w's last; -1
 * when none is left or stopping. */
static int take_stretch(Session *w)
{
    Sessions *s = w->s;
    int k;
    pthread_mutex_lock(&s->lock);
    /* (QGPU_SESSIONS_CLEAN_ONLY=1 makes the CPU path's sessions behave
     * as beside a hardware decoder, for the tests) */
    if (w->on_cpu && s->own_on_cpu && !w->clean_only) {
        k = s->stop ? -1 : in_time_stretch(s, w);
        if (k >= 0)
            s->stretch[k].taker = w->index;
        pthread_mutex_unlock(&s->lock);
        if (k >= 0)
            w->last = k;
        return k;
    }
    /* beside a hardware decoder: none after the input's first decoding
     * error (a damaged file: its stretches go to the own decoder, which
     * decodes on without seeking where it can) */
    if (w->clean_only && s->errors_done + s->errors_now + s->corrupt_done + s->corrupt_now) {
        pthread_mutex_unlock(&s->lock);
        return -1;
    }
    k = s->current + (w->on_cpu ? cpu_lead(s, w) : 1);
    if (k <= w->last)
        k = w->last + 1;
    while (k < s->nb_stretches &&
           (s->stretch[k].taker != TAKER_NONE ||
            (w->clean_only && s->stretch[k].frames + 1 > (unsigned)s->ahead)))
        k++;
    if (k >= s->nb_stretches || s->stop)
        k = -1;
    else
        s->stretch[k].taker = w->index;
    pthread_mutex_unlock(&s->lock);
    if (k >= 0)
        w->last = k;
    return k;
}

/* Cores kept from the CPU sessions, for the own (hardware) decoders'
 * threads, the readers and the scoring thread: a quarter, at least one
 * ($QGPU_CPU_SESSION_SPARE). On the H200's 16-core host, NVDEC decoding a
 * pair beside a CPU decoding process on every core fell from 1,439 to
 * 1,208 pairs/s, and kept its 1,439 with the CPU process on 8 of the
 * cores (doc/performance.md). */
static int spare_cores(long cores)
{
    const char *env = getenv("QGPU_CPU_SESSION_SPARE");
    long spare = env && *env ? atol(env) : cores / 4;
    if (spare < 1)
        spare = 1;
    return spare < cores ? (int)spare : (int)cores - 1;
}

/* A CPU session's thread, and the decoder threads it starts (they inherit
 * it), on the cores after the spare ones (nothing when there is one core). */
static void keep_off_spare_cores(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (cores < 2 || cores > CPU_SETSIZE)
        return;
    CPU_ZERO(&set);
    for (long c = spare_cores(cores); c < cores; c++)
        CPU_SET((int)c, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *session_thread(void *opaque)
{
    Session *w = opaque;
    Sessions *s = w->s;
    Decoder *dec = NULL;
    char msg[1024] = "";
    double t0 = monotonic_seconds();
    int ret, k;
    hwdec_use_slot(s->hw_slot);
    if (w->on_cpu)
        keep_off_spare_cores();
    ret = decoder_open_session(s->own, w->on_cpu, w->on_cpu ? s->cpu_threads : 0,
                               s->ring_slots, &dec, msg, sizeof(msg));
    w->t_open = monotonic_seconds() - t0;
    pthread_mutex_lock(&s->lock);
    w->dec = dec;
    if (ret < 0 && w->clean_only) /* not needed: the own decoder decodes on */
        snprintf(w->message, sizeof(w->message), "%s", msg);
    else if (ret < 0 && !s->failed) {
        s->failed = ret;
        snprintf(s->failure, sizeof(s->failure), "%s", msg);
        pthread_cond_broadcast(&s->changed);
    }
    pthread_mutex_unlock(&s->lock);
    k = -1;
    while (ret >= 0 && (k = take_stretch(w)) >= 0) {
        ret = decode_stretch(w, dec, &s->stretch[k], msg, sizeof(msg));
        if (ret == 1)
            return NULL; /* stopped */
    }
    if (ret < 0 && dec) {
        Entry e = {ret, NULL, 0.0, 0, 0};
        if (!*msg)
            snprintf(msg, sizeof(msg), "a decoding session failed");
        push(w, &e, k >= 0 ? &s->stretch[k] : NULL, msg);
    }
    return NULL;
}

static void stop_and_join(Sessions *s)
{
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    for (int i = 0; i < s->n; i++) {
        Session *w = &s->session[i];
        if (!w->running)
            continue;
        pthread_mutex_lock(&s->lock);
        decoder_abort(w->dec); /* a read that waits */
        pthread_mutex_unlock(&s->lock);
        pthread_join(w->thread, NULL);
        w->running = 0;
    }
}

static int env_is_one(const char *name)
{
    const char *env = getenv(name);
    return env && !strcmp(env, "1");
}

/* Threads of each CPU session's decoder: $QGPU_CPU_SESSION_THREADS, else
 * the cores besides the spare ones shared by both inputs' n_cpu sessions,
 * at least 2. */
static int cpu_session_threads(int n_cpu)
{
    const char *env = getenv("QGPU_CPU_SESSION_THREADS");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = n_cpu > 0 && cores > 1 ? (int)((cores - spare_cores(cores)) / (2 * n_cpu)) : 2;
    if (env && *env)
        threads = atoi(env);
    return threads < 2 ? 2 : threads;
}

int sessions_start(Sessions **out, Decoder *own, const char *path, int stream, int n,
                   int n_cpu, size_t frame_bytes, int hw_slot, char *note, size_t note_len,
                   char *err, size_t err_len)
{
    int64_t *pts = NULL, *keys = NULL;
    unsigned nb_pts = 0, nb_keys = 0;
    DecoderInfo info;
    Sessions *s;
    int ret, clean_only;
    *out = NULL;
    ret = scan_packets(path, stream, &pts, &nb_pts, &keys, &nb_keys, note, note_len, err,
                       err_len);
    if (ret)
        return ret;
    s = calloc(1, sizeof(*s));
    if (!s || plan_stretches(s, pts, nb_pts, keys, nb_keys)) {
        free(pts);
        free(keys);
        if (s)
            free(s->stretch);
        free(s);
        snprintf(err, err_len, "out of memory");
        return AVERROR(ENOMEM);
    }
    free(pts);
    free(keys);
    for (int k = 0; k < s->nb_stretches; k++)
        s->stretch[k].taker = TAKER_NONE;
    s->own = own;
    s->hw_slot = hw_slot;
    /* the own decoder takes the first stretch at least */
    s->n = n + n_cpu < s->nb_stretches - 1 ? n + n_cpu : s->nb_stretches - 1;
    s->n_cpu = n_cpu < s->n ? n_cpu : s->n;
    s->cpu_threads = cpu_session_threads(s->n_cpu);
    if (s->n < 1)
        snprintf(note, note_len, "one stretch of at least %d frames between key frames",
                 SESSIONS_MIN_FRAMES);
    if (s->n < 1 || !check_seeks(s, path, stream, note, note_len) ||
        fit_memory(s, frame_bytes, note, note_len)) {
        free(s->stretch);
        free(s);
        return 1;
    }
    /* CPU decoders beside a hardware one ($QGPU_SESSIONS_CLEAN_ONLY=1: also
     * beside the CPU's, for the tests) */
    decoder_get_info(own, &info);
    s->own_on_cpu = !strcmp(info.decoder, "cpu");
    clean_only = !s->own_on_cpu || env_is_one("QGPU_SESSIONS_CLEAN_ONLY");
    s->view = calloc((size_t)s->nb_stretches, sizeof(*s->view));
    s->session = calloc((size_t)s->n, sizeof(*s->session));
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->changed, NULL);
    for (int i = 0; s->session && s->view && i < s->n; i++) {
        Session *w = &s->session[i];
        w->s = s;
        w->index = i;
        w->on_cpu = i < s->n_cpu;
        w->clean_only = w->on_cpu && clean_only;
        w->last = -1;
        w->queue = calloc((size_t)s->ahead, sizeof(*w->queue));
        if (!w->queue)
            break;
        if (pthread_create(&w->thread, NULL, session_thread, w)) {
            sessions_free(&s);
            snprintf(err, err_len, "cannot start a decoding thread");
            return -1;
        }
        w->running = 1;
    }
    if (!s->view || !s->session || !s->session[s->n - 1].running) {
        sessions_free(&s);
        snprintf(err, err_len, "out of memory");
        return AVERROR(ENOMEM);
    }
    *out = s;
    return 0;
}

/* The own decoder on stretch k: where it is when the stretch follows its
 * last one (or is the first and it has not moved), else after a seek.
 * 0 or an AVERROR (message in err). */
static int own_begin(Sessions *s, int k, char *err, size_t err_len)
{
    const Stretch *st = &s->stretch[k];
    int ret = 0;
    if (!decoder_window_follow(s->own, st->start, st->end, st->first)) {
        double t0 = monotonic_seconds();
        ret = decoder_seek_window(s->own, st->start, st->end, st->first, err, err_len);
        s->t_own_seek += monotonic_seconds() - t0;
        s->own_seeks++;
    }
    decoder_own_counts(s->own, &s->own_errors0, &s->own_corrupt0);
    s->own_got = 0;
    s->own_stretches++;
    return ret;
}

/* The own decoder's next frame of the current stretch: 1 a frame, 0 the
 * stretch's end (checked and counted), < 0 an error (message in err). */
static int own_next(Sessions *s, void **owner, double *pts, char *err, size_t err_len)
{
    const Stretch *st = &s->stretch[s->current];
    unsigned errors, corrupt;
    double t0 = monotonic_seconds();
    int ret = decoder_read_window(s->own, owner, err, err_len);
    double spent = monotonic_seconds() - t0;
    decoder_own_counts(s->own, &errors, &corrupt);
    errors -= s->own_errors0;
    corrupt -= s->own_corrupt0;
    if (ret == 1)
        s->own_got++;
    else if (ret == 0)
        ret = check_stretch(st, s->own_got, decoder_window_first(s->own), errors, err, err_len);
    pthread_mutex_lock(&s->lock);
    s->t_own += spent;
    if (ret == 1) {
        s->own_frames++;
        s->delivered++;
        s->errors_now = errors;
        s->corrupt_now = corrupt;
    } else if (ret == 0) {
        s->errors_done += errors;
        s->corrupt_done += corrupt;
        s->errors_now = s->corrupt_now = 0;
        s->current++;
        pthread_cond_broadcast(&s->changed);
    }
    pthread_mutex_unlock(&s->lock);
    if (ret == 1)
        *pts = decoder_last_pts(s->own);
    return ret;
}

/* Drops the entries of the stretch at the head of w's queue (its frames,
 * and its end or error). Under the lock. */
static void drop_stretch(Session *w)
{
    Sessions *s = w->s;
    int end = 0;
    while (w->count > 0 && !end) {
        Entry *e = &w->queue[w->head];
        if (e->ret == 1)
            decoder_release(e->owner);
        end = e->ret != 1;
        w->head = (w->head + 1) % s->ahead;
        w->count--;
    }
    pthread_cond_broadcast(&s->changed);
}

/* The next frame in order (sessions_read without the timing). */
static int sessions_next(Sessions *s, void **owner, double *pts, int *own, char *err,
                         size_t err_len)
{
    pthread_mutex_lock(&s->lock);
    for (;;) {
        Session *w;
        Stretch *st;
        Entry e;
        int ret;
        if (s->failed) {
            snprintf(err, err_len, "%s", s->failure);
            pthread_mutex_unlock(&s->lock);
            return s->failed;
        }
        if (s->current >= s->nb_stretches) {
            pthread_mutex_unlock(&s->lock);
            return 0;
        }
        st = &s->stretch[s->current];
        if (st->taker >= 0 && s->session[st->taker].clean_only) {
            /* used only when decoded whole without an error */
            w = &s->session[st->taker];
            while (!st->decoded && !s->stop)
                pthread_cond_wait(&s->changed, &s->lock);
            if (st->dirty) {
                drop_stretch(w);
                st->taker = TAKER_NONE;
                s->redecoded++;
            }
        }
        if (st->taker == TAKER_NONE) {
            st->taker = TAKER_OWN;
            pthread_mutex_unlock(&s->lock);
            if ((ret = own_begin(s, s->current, err, err_len)) < 0)
                return ret;
            pthread_mutex_lock(&s->lock);
        }
        if (st->taker == TAKER_OWN) {
            pthread_mutex_unlock(&s->lock);
            ret = own_next(s, owner, pts, err, err_len);
            if (ret != 0) {
                *own = ret == 1;
                return ret;
            }
            pthread_mutex_lock(&s->lock);
            continue;
        }
        w = &s->session[st->taker];
        while (w->count == 0 && !s->stop && !s->failed)
            pthread_cond_wait(&s->changed, &s->lock);
        if (w->count == 0) {
            if (s->failed)
                continue;
            pthread_mutex_unlock(&s->lock);
            snprintf(err, err_len, "decoding stopped");
            return -1;
        }
        e = w->queue[w->head];
        if (e.ret < 0) { /* stays for later calls */
            snprintf(err, err_len, "%s", w->message);
            pthread_mutex_unlock(&s->lock);
            return e.ret;
        }
        w->head = (w->head + 1) % s->ahead;
        w->count--;
        pthread_cond_broadcast(&s->changed);
        if (e.ret == 1) {
            s->delivered++;
            s->errors_now = e.errors;
            s->corrupt_now = e.corrupt;
            pthread_mutex_unlock(&s->lock);
            *owner = e.owner;
            *pts = e.pts;
            *own = 0;
            return 1;
        }
        s->errors_done += e.errors;
        s->corrupt_done += e.corrupt;
        s->errors_now = s->corrupt_now = 0;
        s->current++;
    }
}

int sessions_read(Sessions *s, void **owner, double *pts, int *own, char *err, size_t err_len)
{
    double t0 = monotonic_seconds(), own0 = s->t_own;
    int ret = sessions_next(s, owner, pts, own, err, err_len);
    s->t_read += monotonic_seconds() - t0 - (s->t_own - own0);
    return ret;
}

void sessions_timing(const Sessions *s, const char *label, FILE *out)
{
    fprintf(out, "qgpu: timing: %s: %d decoding sessions besides its own decoder (%d on the "
            "CPU), %d stretches, up to %d frames queued each; the reader waited %.3f s for "
            "them\n", label, s->n, s->n_cpu, s->nb_stretches, s->ahead, s->t_read);
    fprintf(out, "qgpu: timing: %s own decoder: %d stretches (%d of them again after a CPU "
            "session's decoding errors), %u frames, decoding %.3f s, %d seeks %.3f s\n", label,
            s->own_stretches, s->redecoded, s->own_frames, s->t_own, s->own_seeks,
            s->t_own_seek);
    for (int i = 0; i < s->n; i++) {
        const Session *w = &s->session[i];
        int taken = 0;
        for (int k = 0; k < s->nb_stretches; k++)
            taken += s->stretch[k].taker == i;
        fprintf(out, "qgpu: timing: %s session %d (%s): %d stretches, %u frames, opening "
                "%.3f s, seeking %.3f s, decoding %.3f s, waiting for room %.3f s%s%s\n", label,
                i, w->on_cpu ? "cpu" : "like its own", taken, w->frames, w->t_open, w->t_seek,
                w->t_decode, w->t_wait, *w->message ? "; " : "", w->message);
    }
}

int sessions_count(const Sessions *s)
{
    return s->n + 1;
}

Decoder *sessions_frame_decoder(const Sessions *s, const void *owner)
{
    Sessions *m = (Sessions *)s; /* the lock only */
    Decoder *by = decoder_owns_frame(s->own, owner) ? s->own : NULL;
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < s->n && !by; i++)
        if (s->session[i].dec && decoder_owns_frame(s->session[i].dec, owner))
            by = s->session[i].dec;
    pthread_mutex_unlock(&m->lock);
    return by;
}

/* *done + *current, read under s's lock. */
static unsigned locked_sum(const Sessions *s, const unsigned *done, const unsigned *current)
{
    Sessions *m = (Sessions *)s; /* the lock only */
    unsigned n;
    pthread_mutex_lock(&m->lock);
    n = *done + *current;
    pthread_mutex_unlock(&m->lock);
    return n;
}

unsigned sessions_error_count(const Sessions *s)
{
    return locked_sum(s, &s->errors_done, &s->errors_now);
}

unsigned sessions_corrupt_count(const Sessions *s)
{
    return locked_sum(s, &s->corrupt_done, &s->corrupt_now);
}

unsigned sessions_count_rest(Sessions *s, unsigned delivered)
{
    stop_and_join(s);
    return s->total > delivered ? s->total - delivered : 0;
}

const char *sessions_zero_copy_note(const Sessions *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->session[i].dec && *decoder_zero_copy_note(s->session[i].dec))
            return decoder_zero_copy_note(s->session[i].dec);
    return "";
}

double sessions_zero_copy_seconds(const Sessions *s)
{
    double t = 0.0;
    for (int i = 0; i < s->n; i++)
        if (s->session[i].dec)
            t += decoder_zero_copy_seconds(s->session[i].dec);
    return t;
}

void sessions_abort(Sessions *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    for (int i = 0; i < s->n; i++)
        decoder_abort(s->session[i].dec);
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
}

void sessions_free(Sessions **ps)
{
    Sessions *s = *ps;
    if (!s)
        return;
    if (s->session) {
        stop_and_join(s);
        for (int i = 0; i < s->n; i++) {
            Session *w = &s->session[i];
            for (; w->queue && w->count > 0; w->count--) {
                if (w->queue[w->head].ret == 1)
                    decoder_release(w->queue[w->head].owner);
                w->head = (w->head + 1) % s->ahead;
            }
            free(w->queue);
            decoder_close(&w->dec);
        }
        free(s->session);
    }
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->changed);
    free(s->view);
    free(s->stretch);
    free(s);
    *ps = NULL;
}
