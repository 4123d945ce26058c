/*
 * The qgpu tool: frame pairing (unit tests of tool/pairing.c on synthetic
 * timestamp lists) and runs of the built qgpu binary on inputs this test
 * writes itself with libavformat/libavcodec (no ffmpeg CLI needed):
 * different start times and time bases, B-frames, frame-rate mismatch,
 * timestamp gaps (warning), offsets, --subsample, --log-stream,
 * --scale-to, odd sizes and raw input; --hwdec auto's choice by
 * measurement (tool/decoder_choice.c with given rates, and the
 * measurement and rewinding of tool/probe.c and decoder_rewind on CPU
 * decoders).
 *
 * The binary is found as $QGPU_BUILD/qgpu, else next to this test's
 * directory (BUILD/tests/test_tool -> BUILD/qgpu), else ./build/qgpu.
 */
#include <json-c/json.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <math.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_upload.h"
#include "decode.h"
#include "decoder_choice.h"
#include "framehash.h"
#include "hwdec.h"
#include "pairing.h"
#include "pinned_frames.h"
#include "probe.h"
#include "stretch_choice.h"
#include "test_util.h"
#include "tool_run.h"

/* ---------------------------------------------------------------- pairing */

typedef struct Synth {
    const double *pts;
    unsigned n, pos;
    int fail_at;     /* read error at this index, -1 none */
    int outstanding; /* references handed out, not released */
    unsigned lost;   /* frames lost to decoding errors, as reported */
} Synth;

static int synth_read(void *opaque, double *pts, void **frame, char *err, size_t len)
{
    Synth *s = opaque;
    if ((int)s->pos == s->fail_at) {
        snprintf(err, len, "synthetic read error");
        return -5;
    }
    if (s->pos == s->n)
        return 0;
    *pts = s->pts[s->pos];
    *frame = (void *)(uintptr_t)(s->pos + 1);
    s->pos++;
    s->outstanding++;
    return 1;
}

static void *synth_ref(void *opaque, void *frame)
{
    ((Synth *)opaque)->outstanding++;
    return frame;
}

static void synth_release(void *opaque, void *frame)
{
    (void)frame;
    ((Synth *)opaque)->outstanding--;
}

static unsigned synth_rest(void *opaque)
{
    Synth *s = opaque;
    return s->n - s->pos;
}

static unsigned synth_lost(void *opaque)
{
    return ((Synth *)opaque)->lost;
}

static PairSource synth_source(Synth *s, double fps, unsigned offset)
{
    PairSource p = {synth_read, synth_ref, synth_release, synth_rest, s, fps, offset,
                    synth_lost, 0, 0.0, 0};
    return p;
}

#define MAXF 256

/* Runs a pairing; ri/di get the 0-based frame indices of each pair. */
static int run_pairing(Synth *r, double rfps, unsigned roff, Synth *d, double dfps,
                       unsigned doff, int mode, unsigned max, int *ri, int *di, PairStats *st)
{
    PairSource a = synth_source(r, rfps, roff), b = synth_source(d, dfps, doff);
    Pairer *p = NULL;
    char err[256];
    void *rf, *df;
    int n = 0, ret;
    if (!CHECK(pairer_init(&p, &a, &b, mode, max) == 0, "pairer_init"))
        return -1;
    while ((ret = pairer_next(p, &rf, &df, err, sizeof(err))) == 1 && n < MAXF) {
        ri[n] = (int)(uintptr_t)rf - 1;
        di[n] = (int)(uintptr_t)df - 1;
        synth_release(r, rf);
        synth_release(d, df);
        n++;
    }
    pairer_stats(p, st);
    pairer_free(&p);
    CHECK(r->outstanding == 0 && d->outstanding == 0,
          "every frame released (reference %d, distorted %d left)", r->outstanding,
          d->outstanding);
    return ret < 0 ? ret : n;
}

static void fill_pts(double *t, unsigned n, double start, double fps)
{
    for (unsigned i = 0; i < n; i++)
        t[i] = start + i / fps;
}

static void test_pairing(void)
{
    static double rt[MAXF], dt[MAXF];
    int ri[MAXF], di[MAXF], n, ok;
    PairStats st;

    /* same rate, different start times (0 s vs 1.48 s, as an MPEG-TS): i with i */
    fill_pts(rt, 30, 0.0, 25);
    fill_pts(dt, 24, 1.48, 25);
    {
        Synth r = {rt, 30, 0, -1, 0, 0}, d = {dt, 24, 0, -1, 0, 0};
        n = run_pairing(&r, 25, 0, &d, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        ok = n == 24;
        for (int i = 0; ok && i < n; i++)
            ok = ri[i] == i && di[i] == i;
        CHECK(ok, "same rate, different start: 24 pairs i/i (got %d)", n);
        CHECK(st.mode == PAIR_INDEX && st.mismatched == 0, "index mode, no mismatch (%u)",
              st.mismatched);
        CHECK(st.ended_first == 1 && st.frames[0] == 30 && st.frames[1] == 24 &&
                  st.complete[0] && st.complete[1],
              "distorted ended first; 30 and 24 frames counted (%u, %u, ended %d)",
              st.frames[0], st.frames[1], st.ended_first);
    }
    /* the reference shorter */
    {
        Synth r = {rt, 10, 0, -1, 0, 0}, d = {dt, 24, 0, -1, 0, 0};
        n = run_pairing(&r, 25, 0, &d, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        CHECK(n == 10 && st.ended_first == 0 && st.frames[0] == 10 && st.frames[1] == 24,
              "reference ended first: 10 pairs, 10/24 frames (%d, %u/%u, %d)", n,
              st.frames[0], st.frames[1], st.ended_first);
    }
    /* both the same length */
    {
        Synth r = {rt, 24, 0, -1, 0, 0}, d = {dt, 24, 0, -1, 0, 0};
        n = run_pairing(&r, 25, 0, &d, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        CHECK(n == 24 && st.ended_first == -1, "same length: neither ended first");
    }
    /* same nominal rate but a frame missing in the distorted timestamps:
     * still paired by index, and the mismatch is reported */
    {
        double gap[20];
        fill_pts(gap, 20, 0.0, 25);
        for (int i = 10; i < 20; i++)
            gap[i] += 1.0 / 25;
        Synth r = {rt, 20, 0, -1, 0, 0}, d = {gap, 20, 0, -1, 0, 0};
        n = run_pairing(&r, 25, 0, &d, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        CHECK(n == 20 && ri[15] == 15 && di[15] == 15, "gap: index pairing kept");
        CHECK(st.mismatched == 10 && fabs(st.max_mismatch - 0.04) < 1e-9,
              "gap: 10 mismatched pairs, 40 ms (%u, %g)", st.mismatched, st.max_mismatch);
    }
    /* sub-millisecond jitter is not a mismatch */
    {
        double jit[20];
        fill_pts(jit, 20, 5.0, 25);
        for (int i = 0; i < 20; i++)
            jit[i] += (i % 3 - 1) * 0.001;
        Synth r = {rt, 20, 0, -1, 0, 0}, d = {jit, 20, 0, -1, 0, 0};
        run_pairing(&r, 25, 0, &d, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        CHECK(st.mismatched == 0, "jitter: no mismatch (%u)", st.mismatched);
    }
    /* offsets: distorted has 3 extra leading frames, reference 1 */
    {
        Synth r = {rt, 20, 0, -1, 0, 0}, d = {dt, 24, 0, -1, 0, 0};
        n = run_pairing(&r, 25, 1, &d, 25, 3, PAIR_AUTO, 0, ri, di, &st);
        ok = n == 19;
        for (int i = 0; ok && i < n; i++)
            ok = ri[i] == i + 1 && di[i] == i + 3;
        CHECK(ok, "offsets: ref i+1 with dist i+3, 19 pairs (got %d)", n);
        CHECK(st.frames[0] == 20 && st.frames[1] == 24 && st.mismatched == 0,
              "offsets: frame counts include skipped frames (%u, %u)", st.frames[0],
              st.frames[1]);
    }
    /* an offset past the end: no pair */
    {
        Synth r = {rt, 5, 0, -1, 0, 0}, d = {dt, 24, 0, -1, 0, 0};
        n = run_pairing(&r, 25, 7, &d, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        CHECK(n == 0 && st.ended_first == 0, "offset past the end: 0 pairs (%d)", n);
    }
    /* pair limit */
    {
        Synth r = {rt, 30, 0, -1, 0, 0}, d = {dt, 24, 0, -1, 0, 0};
        n = run_pairing(&r, 25, 0, &d, 25, 0, PAIR_AUTO, 7, ri, di, &st);
        CHECK(n == 7 && st.limit_reached && st.ended_first == -1, "limit of 7 pairs (%d)", n);
    }
    /* read errors are passed on */
    {
        Synth r = {rt, 30, 0, -1, 0, 0}, d = {dt, 24, 0, 5, 0, 0};
        n = run_pairing(&r, 25, 0, &d, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        CHECK(n == -5, "distorted read error returned (%d)", n);
        Synth r2 = {rt, 30, 0, 3, 0, 0}, d2 = {dt, 24, 0, -1, 0, 0};
        n = run_pairing(&r2, 25, 0, &d2, 25, 0, PAIR_TIME, 0, ri, di, &st);
        CHECK(n == -5, "reference read error returned in time mode (%d)", n);
    }
    /* reference 50 fps, distorted 25 fps: each distorted frame twice */
    {
        fill_pts(rt, 50, 0.0, 50);
        fill_pts(dt, 25, 3.0, 25);
        Synth r = {rt, 50, 0, -1, 0, 0}, d = {dt, 25, 0, -1, 0, 0};
        n = run_pairing(&r, 50, 0, &d, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        ok = n == 50;
        for (int i = 0; ok && i < n; i++)
            ok = ri[i] == i && di[i] == i / 2;
        CHECK(ok && st.mode == PAIR_TIME, "50 vs 25 fps: ref k with dist k/2, 50 pairs (%d)", n);
        CHECK(st.reused == 25 && st.skipped == 0 && st.mismatched == 0,
              "50 vs 25 fps: 25 reused, none skipped (%u, %u, %u)", st.reused, st.skipped,
              st.mismatched);
    }
    /* reference 25 fps, distorted 50 fps: every other distorted frame */
    {
        fill_pts(rt, 25, 0.0, 25);
        fill_pts(dt, 50, 0.0, 50);
        Synth r = {rt, 25, 0, -1, 0, 0}, d = {dt, 50, 0, -1, 0, 0};
        n = run_pairing(&r, 25, 0, &d, 50, 0, PAIR_AUTO, 0, ri, di, &st);
        ok = n == 25;
        for (int i = 0; ok && i < n; i++)
            ok = di[i] == 2 * i;
        CHECK(ok && st.skipped == 24, "25 vs 50 fps: dist 2k, 24 skipped (%d, %u)", n,
              st.skipped);
    }
    /* 30 vs 24 fps (3:2): every pair is the nearest frame in time */
    {
        fill_pts(rt, 60, 0.0, 30);
        fill_pts(dt, 48, 0.5, 24);
        Synth r = {rt, 60, 0, -1, 0, 0}, d = {dt, 48, 0, -1, 0, 0};
        n = run_pairing(&r, 30, 0, &d, 24, 0, PAIR_AUTO, 0, ri, di, &st);
        ok = n == 60;
        for (int i = 0; ok && i < n; i++) {
            double t = i / 30.0, best = 1e9;
            for (int j = 0; j < 48; j++)
                best = fmin(best, fabs(j / 24.0 - t));
            ok = fabs(fabs(di[i] / 24.0 - t) - best) < 1e-9;
        }
        CHECK(ok, "30 vs 24 fps: nearest distorted frame for each of 60 (%d)", n);
    }
    /* the distorted input ends early in time mode: stop at its last frame */
    {
        fill_pts(rt, 50, 0.0, 50);
        fill_pts(dt, 10, 0.0, 25);
        Synth r = {rt, 50, 0, -1, 0, 0}, d = {dt, 10, 0, -1, 0, 0};
        n = run_pairing(&r, 50, 0, &d, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        CHECK(n == 20 && st.ended_first == 1 && st.frames[0] == 50 && st.frames[1] == 10,
              "time mode, distorted shorter: 20 pairs, 50/10 frames (%d, %u/%u)", n,
              st.frames[0], st.frames[1]);
    }
    /* missing timestamps (NAN): counted from the frame rate */
    {
        double nan_t[10];
        for (int i = 0; i < 10; i++)
            nan_t[i] = NAN;
        fill_pts(rt, 20, 0.0, 50);
        Synth r = {rt, 20, 0, -1, 0, 0}, d = {nan_t, 10, 0, -1, 0, 0};
        n = run_pairing(&r, 50, 0, &d, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        ok = n == 20;
        for (int i = 0; ok && i < n; i++)
            ok = di[i] == i / 2;
        CHECK(ok, "missing timestamps: rate-based times (%d)", n);
    }
    /* decoding errors: the distorted input lost frame 5 (its timestamps
     * skip it): reference frame 5 is left out, the rest stay aligned */
    {
        double lost5[11];
        fill_pts(rt, 12, 0.0, 25);
        for (int i = 0; i < 11; i++)
            lost5[i] = (i < 5 ? i : i + 1) / 25.0;
        Synth r = {rt, 12, 0, -1, 0, 0}, d = {lost5, 11, 0, -1, 0, 1};
        n = run_pairing(&r, 25, 0, &d, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        ok = n == 11;
        for (int i = 0; ok && i < n; i++)
            ok = ri[i] == (i < 5 ? i : i + 1) && di[i] == i;
        CHECK(ok && st.dropped[0] == 1 && st.dropped[1] == 0 && st.mismatched == 0,
              "lost distorted frame: reference 5 left out, 11 aligned pairs (%d, dropped %u/%u, "
              "mismatched %u)", n, st.dropped[0], st.dropped[1], st.mismatched);
        /* the same timestamps without a reported loss: paired by index, warned */
        Synth r2 = {rt, 12, 0, -1, 0, 0}, d2 = {lost5, 11, 0, -1, 0, 0};
        n = run_pairing(&r2, 25, 0, &d2, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        CHECK(n == 11 && ri[10] == 10 && st.dropped[0] == 0 && st.mismatched == 6,
              "no reported loss: index pairing, 6 mismatches (%d, %u)", n, st.mismatched);
        /* the reference lost frames 3 and 4 */
        double lost34[10];
        for (int i = 0; i < 10; i++)
            lost34[i] = (i < 3 ? i : i + 2) / 25.0;
        fill_pts(dt, 12, 7.0, 25);
        Synth r3 = {lost34, 10, 0, -1, 0, 2}, d3 = {dt, 12, 0, -1, 0, 0};
        n = run_pairing(&r3, 25, 0, &d3, 25, 0, PAIR_AUTO, 0, ri, di, &st);
        ok = n == 10;
        for (int i = 0; ok && i < n; i++)
            ok = ri[i] == i && di[i] == (i < 3 ? i : i + 2);
        CHECK(ok && st.dropped[1] == 2 && st.mismatched == 0,
              "lost reference frames 3, 4: distorted 3, 4 left out (%d, dropped %u)", n,
              st.dropped[1]);
    }
    /* the distorted input's first frame lost: its first packet's time is
     * its clock's zero, so reference frame 0 is the one left out */
    {
        double late[11];
        for (int i = 0; i < 11; i++)
            late[i] = 2.0 + (i + 1) / 25.0;
        fill_pts(rt, 12, 0.0, 25);
        Synth r = {rt, 12, 0, -1, 0, 0}, d = {late, 11, 0, -1, 0, 1};
        PairSource a = synth_source(&r, 25, 0), b = synth_source(&d, 25, 0);
        Pairer *p = NULL;
        char err[256];
        void *rf, *df;
        b.has_start = 1;
        b.start = 2.0;
        n = 0;
        ok = pairer_init(&p, &a, &b, PAIR_AUTO, 0) == 0;
        while (ok && pairer_next(p, &rf, &df, err, sizeof(err)) == 1) {
            ok = (int)(uintptr_t)rf - 1 == n + 1 && (int)(uintptr_t)df - 1 == n;
            synth_release(&r, rf);
            synth_release(&d, df);
            n++;
        }
        pairer_stats(p, &st);
        pairer_free(&p);
        CHECK(ok && n == 11 && st.dropped[0] == 1,
              "first distorted frame lost: aligned from the stream's start time (%d)", n);
    }
    /* forced index pairing with different rates */
    {
        fill_pts(rt, 20, 0.0, 50);
        fill_pts(dt, 20, 0.0, 25);
        Synth r = {rt, 20, 0, -1, 0, 0}, d = {dt, 20, 0, -1, 0, 0};
        n = run_pairing(&r, 50, 0, &d, 25, 0, PAIR_INDEX, 0, ri, di, &st);
        CHECK(n == 20 && di[19] == 19 && st.mismatched > 0,
              "forced index pairing: i with i, mismatches reported (%u)", st.mismatched);
    }
}

/* ---------------------------------------------------------- tool runs */

static char tool[1024];
static char dir[] = "/tmp/qgpu_test_tool.XXXXXX";
static char out_err[65536];

static void fill_frame(uint8_t *buf, int w, int h, int c, int noise, unsigned *seed)
{
    int cw = (w + 1) / 2, ch = (h + 1) / 2;
    uint8_t *p = buf;
    for (int plane = 0; plane < 3; plane++) {
        int pw = plane ? cw : w, ph = plane ? ch : h;
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++) {
                int v = tool_content(c, plane, x, y);
                if (noise) {
                    *seed = *seed * 1103515245u + 12345u;
                    v += (int)((*seed >> 16) % (2 * noise + 1)) - noise;
                    v = v < 0 ? 0 : v > 255 ? 255 : v;
                }
                *p++ = (uint8_t)v;
            }
    }
}

typedef struct RawFrames {
    int w, h;
    const int *contents;
    const double *times;
    unsigned seed;
    int nv12;      /* chroma as NV12's Cb Cr pairs */
} RawFrames;

/* Planar 4:2:0 in place to NV12 (the chroma planes interleaved). */
static void to_nv12(uint8_t *buf, int w, int h)
{
    size_t luma = (size_t)w * h, chroma = (size_t)((w + 1) / 2) * ((h + 1) / 2);
    uint8_t *pairs = malloc(2 * chroma);
    if (!pairs)
        return;
    for (size_t k = 0; k < chroma; k++) {
        pairs[2 * k] = buf[luma + k];
        pairs[2 * k + 1] = buf[luma + chroma + k];
    }
    memcpy(buf + luma, pairs, 2 * chroma);
    free(pairs);
}

/* Packet i of write_nut(): the picture and its time, a keyframe. */
static void raw_frame(void *opaque, int i, AVPacket *pkt, const AVStream *st)
{
    RawFrames *r = opaque;
    fill_frame(pkt->data, r->w, r->h, r->contents[i], 0, &r->seed);
    if (r->nv12)
        to_nv12(pkt->data, r->w, r->h);
    pkt->pts = pkt->dts = llrint(r->times[i] / av_q2d(st->time_base));
    pkt->flags |= AV_PKT_FLAG_KEY;
}

/* Writes a NUT file of raw yuv420p (or nv12) frames: frame i shows content
 * contents[i], at time start + pts[i] seconds (time base tb). */
static int write_nut_as(const char *path, int w, int h, const int *contents,
                        const double *times, int n, AVRational tb, double fps, int nv12)
{
    AVFormatContext *oc = NULL;
    AVStream *st;
    enum AVPixelFormat format = nv12 ? AV_PIX_FMT_NV12 : AV_PIX_FMT_YUV420P;
    RawFrames r = {w, h, contents, times, 1, nv12};
    if (avformat_alloc_output_context2(&oc, NULL, "nut", path) < 0)
        return -1;
    st = avformat_new_stream(oc, NULL);
    st->codecpar->codec_type = AVMEDIA_TYPE_VIDEO;
    st->codecpar->codec_id = AV_CODEC_ID_RAWVIDEO;
    st->codecpar->format = format;
    st->codecpar->codec_tag = avcodec_pix_fmt_to_codec_tag(format);
    st->codecpar->width = w;
    st->codecpar->height = h;
    st->time_base = tb;
    st->avg_frame_rate = st->r_frame_rate = av_d2q(fps, 1000000);
    return tool_write_packets(oc, path, n, w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2), raw_frame,
                              &r);
}

static int write_nut(const char *path, int w, int h, const int *contents, const double *times,
                     int n, AVRational tb, double fps)
{
    return write_nut_as(path, w, h, contents, times, n, tb, fps, 0);
}

/* Encodes frames of content i with MPEG-2, a key frame every 12 and 2
 * B-frames (so decode order differs from presentation order) into `format`
 * (nut, mp4...), starting at start seconds; the packets of frames bad_from
 * to bad_to (-1: none) are made undecodable. */
static int write_bframes_damaged(const char *path, const char *format, int w, int h, int n,
                                 double start, int bad_from, int bad_to)
{
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_MPEG2VIDEO);
    AVCodecContext *enc;
    int ret;
    if (!codec)
        return 1; /* not built in: skipped */
    enc = avcodec_alloc_context3(codec);
    enc->width = w;
    enc->height = h;
    enc->pix_fmt = AV_PIX_FMT_YUV420P;
    enc->time_base = (AVRational){1, 25};
    enc->framerate = (AVRational){25, 1};
    enc->gop_size = 12;
    enc->max_b_frames = 2;
    enc->bit_rate = 4000000;
    if (avcodec_open2(enc, codec, NULL) < 0) {
        avcodec_free_context(&enc);
        return 1;
    }
    ret = tool_encode_file(path, format, enc, (AVRational){1, 90000}, n, start, bad_from,
                           bad_to);
    avcodec_free_context(&enc);
    return ret;
}

static int write_bframes_as(const char *path, const char *format, int w, int h, int n,
                            double start)
{
    return write_bframes_damaged(path, format, w, h, n, start, -1, -1);
}

static int write_bframes(const char *path, int w, int h, int n, double start)
{
    return write_bframes_as(path, "nut", w, h, n, start);
}

/* Runs the tool with args; stderr goes to out_err. Returns its exit status. */
static int run_tool(const char *args)
{
    return tool_run(tool, dir, NULL, 0, args, out_err, sizeof(out_err));
}

/* Runs the tool with args on a terminal (a pty, stdout and stderr both);
 * its output goes to out. Returns its exit status, -1 on a failure or
 * after 60 s. */
static int run_on_tty(const char *args, char *out, size_t len)
{
    char cmd[4096];
    size_t n = 0;
    int master, st = 0, ret = -1;
    pid_t pid;
    snprintf(cmd, sizeof(cmd), "cd %s && exec %s %s", dir, tool, args);
    pid = forkpty(&master, NULL, NULL, NULL);
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    for (;;) {
        struct pollfd p = {master, POLLIN, 0};
        ssize_t got;
        if (poll(&p, 1, 60000) <= 0)
            break;
        got = read(master, n + 1 < len ? out + n : cmd, n + 1 < len ? len - 1 - n : sizeof(cmd));
        if (got <= 0)
            break; /* EIO: the child closed the terminal */
        if (n + 1 < len)
            n += (size_t)got;
    }
    out[n] = 0;
    for (int i = 0; i < 100 && ret == -1; i++) { /* up to 10 s after the output ends */
        if (waitpid(pid, &st, WNOHANG) == pid) {
            ret = WIFEXITED(st) ? WEXITSTATUS(st) : -2;
            break;
        }
        usleep(100000);
    }
    if (ret == -1) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    close(master);
    return ret;
}

/* psnr_y values of a JSON log; returns the frame count (frameNum in nums). */
static int read_log(const char *name, double *psnr, int *nums, int max, double *pooled_mean)
{
    char path[1100];
    json_object *root, *frames, *pm, *v;
    int n = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    root = json_object_from_file(path);
    if (!root)
        return -1;
    if (json_object_object_get_ex(root, "frames", &frames)) {
        n = (int)json_object_array_length(frames);
        for (int i = 0; i < n && i < max; i++) {
            json_object *fr = json_object_array_get_idx(frames, i), *m, *num;
            json_object_object_get_ex(fr, "frameNum", &num);
            json_object_object_get_ex(fr, "metrics", &m);
            nums[i] = json_object_get_int(num);
            psnr[i] = json_object_object_get_ex(m, "psnr_y", &v) ? json_object_get_double(v)
                                                                   : NAN;
        }
    }
    if (pooled_mean) {
        *pooled_mean = NAN;
        if (json_object_object_get_ex(root, "pooled_metrics", &pm) &&
            json_object_object_get_ex(pm, "psnr_y", &pm) &&
            json_object_object_get_ex(pm, "mean", &v))
            *pooled_mean = json_object_get_double(v);
    }
    json_object_put(root);
    return n;
}

static int all_at_least(const double *v, int n, double min)
{
    for (int i = 0; i < n; i++)
        if (!(v[i] >= min))
            return 0;
    return n > 0;
}

#define N 12
static void test_runs(void)
{
    int contents[64], nums[64];
    double times[64], psnr[64], mean;
    char path[1100];
    int n, rc;

    /* reference: contents 0..N-1 at 25 fps from 0 s, time base 1/25 */
    for (int i = 0; i < N; i++) {
        contents[i] = i;
        times[i] = i / 25.0;
    }
    snprintf(path, sizeof(path), "%s/ref.nut", dir);
    CHECK(write_nut(path, 64, 48, contents, times, N, (AVRational){1, 25}, 25) == 0,
          "write ref.nut");
    /* distorted: same frames from 10 s, time base 1/90000 */
    for (int i = 0; i < N; i++)
        times[i] = 10.0 + i / 25.0;
    snprintf(path, sizeof(path), "%s/late.nut", dir);
    CHECK(write_nut(path, 64, 48, contents, times, N, (AVRational){1, 90000}, 25) == 0,
          "write late.nut");
    rc = run_tool("-r ref.nut -d late.nut -n --feature psnr --json -o a.json");
    n = read_log("a.json", psnr, nums, 64, NULL);
    CHECK(rc == 0 && n == N && all_at_least(psnr, n, 60.0),
          "different start time and time base: %d identical pairs (rc %d, n %d): %s", N, rc, n,
          out_err);
    CHECK(!strstr(out_err, "warning"), "no warning for aligned inputs: %s", out_err);
    CHECK(strstr(out_err, "reference had 12 frames, distorted 12") != NULL,
          "frame counts reported: %s", out_err);

    /* B-frames (MPEG-2, decode order != presentation order), from 1.4 s */
    snprintf(path, sizeof(path), "%s/bframes.nut", dir);
    rc = write_bframes(path, 64, 48, N, 1.4);
    if (rc == 1) {
        printf("skip: no MPEG-2 encoder\n");
    } else {
        CHECK(rc == 0, "write bframes.nut");
        rc = run_tool("-r ref.nut -d bframes.nut -n --feature psnr --json -o b.json");
        n = read_log("b.json", psnr, nums, 64, NULL);
        CHECK(rc == 0 && n == N && all_at_least(psnr, n, 30.0),
              "B-frames: %d pairs in presentation order, psnr_y >= 30 (rc %d, n %d, "
              "psnr[1] %.2f): %s", N, rc, n, n > 1 ? psnr[1] : 0.0, out_err);
    }

    /* reference 50 fps (each content twice), distorted 25 fps */
    for (int i = 0; i < 2 * N; i++) {
        contents[i] = i / 2;
        times[i] = i / 50.0;
    }
    snprintf(path, sizeof(path), "%s/ref50.nut", dir);
    CHECK(write_nut(path, 64, 48, contents, times, 2 * N, (AVRational){1, 1000}, 50) == 0,
          "write ref50.nut");
    rc = run_tool("-r ref50.nut -d late.nut -n --feature psnr --json -o c.json");
    n = read_log("c.json", psnr, nums, 64, NULL);
    CHECK(rc == 0 && n == 2 * N && all_at_least(psnr, n, 60.0),
          "50 vs 25 fps: %d identical pairs by nearest time (rc %d, n %d): %s", 2 * N, rc, n,
          out_err);
    CHECK(strstr(out_err, "frame rates differ") != NULL, "frame-rate mismatch reported: %s",
          out_err);
    rc = run_tool("-r ref50.nut -d late.nut -n --feature psnr --pairing index --json -o c2.json");
    n = read_log("c2.json", psnr, nums, 64, NULL);
    CHECK(rc == 0 && n == N && strstr(out_err, "warning") != NULL,
          "forced index pairing of 50 vs 25 fps: timestamp warning (rc %d, n %d): %s", rc, n,
          out_err);

    /* same rate, but the distorted input lost a frame: warning */
    for (int i = 0; i < N; i++) {
        contents[i] = i < 6 ? i : i + 1;
        times[i] = (i < 6 ? i : i + 1) / 25.0;
    }
    snprintf(path, sizeof(path), "%s/gap.nut", dir);
    CHECK(write_nut(path, 64, 48, contents, times, N, (AVRational){1, 25}, 25) == 0,
          "write gap.nut");
    rc = run_tool("-r ref.nut -d gap.nut -n --feature psnr --json -o d.json");
    CHECK(rc == 0 && strstr(out_err, "warning") && strstr(out_err, "6 of 12 pairs"),
          "dropped frame: warning with 6 of 12 pairs (rc %d): %s", rc, out_err);

    /* offsets: distorted with 3 leading frames of other content */
    for (int i = 0; i < N + 3; i++) {
        contents[i] = i < 3 ? 50 + i : i - 3;
        times[i] = 2.0 + i / 25.0;
    }
    snprintf(path, sizeof(path), "%s/lead.nut", dir);
    CHECK(write_nut(path, 64, 48, contents, times, N + 3, (AVRational){1, 90000}, 25) == 0,
          "write lead.nut");
    rc = run_tool("-r ref.nut -d lead.nut -n --feature psnr --json -o e.json");
    n = read_log("e.json", psnr, nums, 64, NULL);
    CHECK(rc == 0 && n == N && !all_at_least(psnr, n, 60.0), "without offset: misaligned");
    rc = run_tool("-r ref.nut -d lead.nut -n --feature psnr --dist-offset 3 --json -o e.json");
    n = read_log("e.json", psnr, nums, 64, NULL);
    CHECK(rc == 0 && n == N && all_at_least(psnr, n, 60.0) &&
              strstr(out_err, "distorted 15") != NULL,
          "--dist-offset 3: %d identical pairs, 15 distorted frames (rc %d, n %d): %s", N, rc,
          n, out_err);
    rc = run_tool("-r lead.nut -d ref.nut -n --feature psnr --ref-offset 3 --json -o e.json");
    n = read_log("e.json", psnr, nums, 64, NULL);
    CHECK(rc == 0 && n == N && all_at_least(psnr, n, 60.0), "--ref-offset 3 (rc %d, n %d)", rc,
          n);
    rc = run_tool("-r ref.nut -d lead.nut -n --feature psnr --dist-offset 99 --json -o e.json");
    CHECK(rc == 3 && strstr(out_err, "no frame"), "offset past the end: input error 3 (rc %d): %s", rc,
          out_err);

    /* --subsample 5 on 12 frames of noisy content: frames 0, 5, 10 logged,
     * pooled over them */
    {
        unsigned seed = 7;
        int size = 64 * 48 * 3 / 2;
        uint8_t *buf = malloc(size);
        FILE *fr, *fd;
        double lin[N], se;
        snprintf(path, sizeof(path), "%s/ref.yuv", dir);
        fr = fopen(path, "wb");
        snprintf(path, sizeof(path), "%s/dis.yuv", dir);
        fd = fopen(path, "wb");
        for (int i = 0; i < N; i++) {
            uint8_t *noisy = malloc(size);
            fill_frame(buf, 64, 48, i, 0, &seed);
            fill_frame(noisy, 64, 48, i, 2 + i, &seed);
            fwrite(buf, 1, size, fr);
            fwrite(noisy, 1, size, fd);
            se = 0;
            for (int k = 0; k < 64 * 48; k++)
                se += (double)(buf[k] - noisy[k]) * (buf[k] - noisy[k]);
            /* libvmaf's psnr: 10 log10(peak^2 / mse), capped at 60 dB for 8 bit */
            lin[i] = fmin(60.0, 10 * log10(255.0 * 255.0 / (se / (64 * 48))));
            free(noisy);
        }
        fclose(fr);
        fclose(fd);
        free(buf);
        /* raw input */
        rc = run_tool("--raw 64x48:yuv420p -r ref.yuv -d dis.yuv -n --feature psnr --json -o f.json");
        n = read_log("f.json", psnr, nums, 64, NULL);
        double maxd = 0;
        for (int i = 0; i < n && i < N; i++)
            maxd = fmax(maxd, fabs(psnr[i] - lin[i]));
        CHECK(rc == 0 && n == N && maxd < 1e-5,
              "raw input: psnr_y as computed here (rc %d, n %d, max diff %g)", rc, n, maxd);
        rc = run_tool("--raw 64x48:yuv420p -r ref.yuv -d dis.yuv -n --feature psnr "
                      "--subsample 5 --json -o g.json --log-stream s.jsonl");
        n = read_log("g.json", psnr, nums, 64, &mean);
        CHECK(rc == 0 && n == 3 && nums[0] == 0 && nums[1] == 5 && nums[2] == 10 &&
                  fabs(psnr[1] - lin[5]) < 1e-5,
              "--subsample 5: frames 0, 5, 10 (rc %d, n %d)", rc, n);
        CHECK(fabs(mean - (lin[0] + lin[5] + lin[10]) / 3) < 2e-6,
              "--subsample 5: pooled over the logged frames (%f vs %f)", mean,
              (lin[0] + lin[5] + lin[10]) / 3);
        /* the stream: one JSON object per logged frame */
        snprintf(path, sizeof(path), "%s/s.jsonl", dir);
        FILE *s = fopen(path, "r");
        char line[4096];
        int lines = 0, good = 0;
        while (s && fgets(line, sizeof(line), s)) {
            json_object *o = json_tokener_parse(line), *num, *m, *v;
            if (o && json_object_object_get_ex(o, "frameNum", &num) &&
                json_object_get_int(num) == lines * 5 &&
                json_object_object_get_ex(o, "metrics", &m) &&
                json_object_object_get_ex(m, "psnr_y", &v) &&
                fabs(json_object_get_double(v) - lin[lines * 5]) < 1e-5)
                good++;
            json_object_put(o);
            lines++;
        }
        if (s)
            fclose(s);
        CHECK(lines == 3 && good == 3, "--log-stream: 3 JSON lines (%d, %d good)", lines, good);
        rc = run_tool("--raw 64x48:yuv420p -r ref.yuv -d dis.yuv -n --feature psnr -q "
                      "--log-stream -");
        snprintf(path, sizeof(path), "%s/stdout.txt", dir);
        s = fopen(path, "r");
        lines = 0;
        while (s && fgets(line, sizeof(line), s))
            lines += strncmp(line, "{\"frameNum\": ", 13) == 0;
        if (s)
            fclose(s);
        CHECK(rc == 0 && lines == N, "--log-stream -: %d lines on stdout (%d)", N, lines);
        /* summary on stderr */
        rc = run_tool("--raw 64x48:yuv420p -r ref.yuv -d dis.yuv -n --feature psnr");
        CHECK(rc == 0 && strstr(out_err, "psnr_y") && strstr(out_err, " on "),
              "summary with the device: %s", out_err);
        /* progress on a terminal: frames, fps and the ETA from the known
         * frame count, the last update at 100 %; none with -q, none when
         * stderr is not a terminal */
        {
            static char tty[65536];
            rc = run_on_tty("--raw 64x48:yuv420p -r ref.yuv -d dis.yuv -n --feature psnr", tty,
                            sizeof(tty));
            CHECK(rc == 0 && strstr(tty, "\rqgpu: frame 1/12 (8%), ") &&
                      strstr(tty, "\rqgpu: frame 12/12 (100%), ") && strstr(tty, " fps, ETA ") &&
                      strstr(tty, "psnr_y"),
                  "progress on a terminal (rc %d): %s", rc, tty);
            rc = run_on_tty("-q --raw 64x48:yuv420p -r ref.yuv -d dis.yuv -n --feature psnr", tty,
                            sizeof(tty));
            CHECK(rc == 0 && !strstr(tty, "frame"), "-q: no progress on a terminal (rc %d): %s",
                  rc, tty);
            rc = run_on_tty("--raw 64x48:yuv420p -r ref.yuv -d dis.yuv -n --feature psnr "
                            "--frame-cnt 5", tty, sizeof(tty));
            CHECK(rc == 0 && strstr(tty, "\rqgpu: frame 5/5 (100%), "),
                  "progress: --frame-cnt is the total (rc %d): %s", rc, tty);
            rc = run_tool("--raw 64x48:yuv420p -r ref.yuv -d dis.yuv -n --feature psnr");
            CHECK(rc == 0 && !strchr(out_err, '\r') && !strstr(out_err, "ETA"),
                  "no progress when stderr is not a terminal: %s", out_err);
        }
        /* --frame-cnt */
        rc = run_tool("--raw 64x48:yuv420p -r ref.yuv -d dis.yuv -n --feature psnr --frame-cnt 4 "
                      "--json -o h.json");
        n = read_log("h.json", psnr, nums, 64, NULL);
        CHECK(rc == 0 && n == 4, "--frame-cnt 4 (%d)", n);
    }

    /* odd size, raw 4:2:0 with ceil-size chroma planes */
    {
        int w = 33, h = 17, size = w * h + 2 * 17 * 9;
        unsigned seed = 3;
        uint8_t *buf = malloc(size);
        FILE *f;
        snprintf(path, sizeof(path), "%s/odd.yuv", dir);
        f = fopen(path, "wb");
        for (int i = 0; i < 3; i++) {
            fill_frame(buf, w, h, i, 0, &seed);
            fwrite(buf, 1, size, f);
        }
        fclose(f);
        free(buf);
        rc = run_tool("--raw 33x17:yuv420p -r odd.yuv -d odd.yuv -n --feature psnr --json -o i.json");
        n = read_log("i.json", psnr, nums, 64, NULL);
        CHECK(rc == 0 && n == 3 && all_at_least(psnr, n, 60.0), "odd size 33x17 (rc %d, n %d): %s",
              rc, n, out_err);
    }

    /* --scale-to: the 64x48 reference against a 32x24 distorted */
    {
        for (int i = 0; i < N; i++) {
            contents[i] = i;
            times[i] = i / 25.0;
        }
        snprintf(path, sizeof(path), "%s/small.nut", dir);
        CHECK(write_nut(path, 32, 24, contents, times, N, (AVRational){1, 25}, 25) == 0,
              "write small.nut");
        rc = run_tool("-r ref.nut -d small.nut -n --feature psnr --json -o j.json --xml");
        CHECK(rc == 0 && strstr(out_err, "distorted 32x24") && strstr(out_err, "to 64x48"),
              "default: distorted scaled to the reference (rc %d): %s", rc, out_err);
        rc = run_tool("-r ref.nut -d small.nut -n --feature psnr --scale-to dist --json -o j.json");
        CHECK(rc == 0 && strstr(out_err, "reference 64x48") && strstr(out_err, "to 32x24"),
              "--scale-to dist: reference scaled (rc %d): %s", rc, out_err);
        rc = run_tool("-r ref.nut -d small.nut -n --feature psnr --scale-to 48x36 --json -o j.json");
        CHECK(rc == 0 && strstr(out_err, "reference 64x48") && strstr(out_err, "distorted 32x24"),
              "--scale-to 48x36: both scaled (rc %d): %s", rc, out_err);
    }

    /* usage errors: exit status 2 */
    {
        static const char *const bad[] = {
            "-r ref.nut -d ref.nut --subsample -1",
            "-r ref.nut -d ref.nut --subsample x",
            "-r ref.nut -d ref.nut --dist-offset -1",
            "-r ref.nut -d ref.nut --ref-offset 2x",
            "-r ref.nut -d ref.nut --scale-to 10",
            "-r ref.nut -d ref.nut --scale-to 0x10",
            "-r ref.nut -d ref.nut --pairing fps",
            "-r ref.nut -d ref.nut --frame-cnt 1.5",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            rc = run_tool(bad[i]);
            const char *nl = strchr(out_err, '\n');
            CHECK(rc == 2 && strncmp(out_err, "qgpu: ", 6) == 0 && nl && !nl[1],
                  "usage error exits 2 with one line: %s (rc %d): %s", bad[i], rc, out_err);
        }
        rc = run_tool("-r ref.nut -d ref.nut -n --feature psnr --log-stream /nonexistent/x");
        CHECK(rc == 5 && strstr(out_err, "--log-stream"), "unwritable --log-stream: exit 5 (rc %d): %s",
              rc, out_err);
    }
}

/* ---- --hwdec, --decode-only and semi-planar input ---- */

/* A top-level string of a JSON log ("" when absent), and its "frames"
 * array as text (the caller frees it; NULL when unreadable). */
static char *log_frames(const char *name, char *field_value, size_t len, const char *field)
{
    char path[1100];
    json_object *root, *v;
    char *frames = NULL;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    *field_value = 0;
    root = json_object_from_file(path);
    if (!root)
        return NULL;
    if (field && json_object_object_get_ex(root, field, &v))
        snprintf(field_value, len, "%s", json_object_get_string(v));
    if (json_object_object_get_ex(root, "frames", &v))
        frames = strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    json_object_put(root);
    return frames;
}

/* n frames of 4:2:0, planar (yuv420p, or yuv420p10le with values << 2)
 * and semi-planar (nv12, or p010le: the 10-bit values << 6), the same
 * samples; noise > 0 for a distorted copy. */
static int write_raw_pair(const char *planar, const char *semi, int w, int h, int n, int noise,
                          int ten_bit)
{
    int cw = (w + 1) / 2, ch = (h + 1) / 2, bps = ten_bit ? 2 : 1;
    size_t luma = (size_t)w * h, chroma = (size_t)cw * ch, size = luma + 2 * chroma;
    uint8_t *pic = malloc(size), *out = malloc(size * bps);
    FILE *fp = fopen(planar, "wb"), *fs = fopen(semi, "wb");
    unsigned seed = 7;
    int ok = pic && out && fp && fs;
    for (int i = 0; i < n && ok; i++) {
        fill_frame(pic, w, h, i % 50, noise, &seed);
        for (size_t k = 0; k < size; k++) /* planar */
            if (ten_bit) {
                uint16_t v = (uint16_t)(pic[k] << 2);
                memcpy(out + 2 * k, &v, 2);
            } else {
                out[k] = pic[k];
            }
        ok = fwrite(out, bps, size, fp) == size;
        for (size_t k = 0; k < size; k++) { /* semi-planar: luma, then Cb Cr pairs */
            size_t at = k < luma ? k : k < luma + chroma ? luma + 2 * (k - luma)
                                                       : luma + 2 * (k - luma - chroma) + 1;
            if (ten_bit) {
                uint16_t v = (uint16_t)(pic[k] << 8); /* (value << 2) << 6 */
                memcpy(out + 2 * at, &v, 2);
            } else {
                out[at] = pic[k];
            }
        }
        ok = ok && fwrite(out, bps, size, fs) == size;
    }
    if (fp && fclose(fp))
        ok = 0;
    if (fs && fclose(fs))
        ok = 0;
    free(pic);
    free(out);
    return ok ? 0 : -1;
}

/* --decode-only --hash-frames on r_NAME.yuv / d_NAME.yuv (4 frames of
 * 33x17 pixfmt): its checksum line into line ("" when none); the status. */
static int hash_run(const char *name, const char *pixfmt, char *line, size_t len)
{
    char a[256];
    const char *at;
    int rc;
    snprintf(a, sizeof(a), "-r r_%s.yuv -d d_%s.yuv --raw 33x17:%s --decode-only --hash-frames",
             name, name, pixfmt);
    rc = run_tool(a);
    *line = 0;
    if ((at = strstr(out_err, "checksums of the 4 pairs: ")))
        snprintf(line, len, "%.*s", (int)strcspn(at, "\n"), at);
    return rc;
}

static void test_semiplanar_input(void)
{
    char a[512], path[1100], path2[1100], value[64];
    /* one input NV12, the other planar: the NV12 frames are split into
     * planes on the host, exactly (scores as planar against planar) */
    {
        int contents[N];
        double times[N];
        char *planar, *mixed;
        int rc1, rc2;
        for (int i = 0; i < N; i++) {
            contents[i] = 40 - i;
            times[i] = i / 25.0;
        }
        snprintf(path, sizeof(path), "%s/nv12.nut", dir);
        snprintf(path2, sizeof(path2), "%s/planar.nut", dir);
        CHECK(write_nut_as(path, 33, 17, contents, times, N, (AVRational){1, 25}, 25, 1) == 0 &&
                  write_nut_as(path2, 33, 17, contents, times, N, (AVRational){1, 25}, 25, 0) == 0,
              "write nv12.nut and planar.nut");
        for (int i = 0; i < N; i++)
            contents[i] = i;
        snprintf(path, sizeof(path), "%s/ref33.nut", dir);
        CHECK(write_nut_as(path, 33, 17, contents, times, N, (AVRational){1, 25}, 25, 0) == 0,
              "write ref33.nut");
        rc1 = run_tool("-r ref33.nut -d planar.nut -n --feature psnr --feature ciede --json "
                       "-o mixed_planar.json");
        rc2 = run_tool("-r ref33.nut -d nv12.nut -n --feature psnr --feature ciede --json "
                       "-o mixed_nv12.json");
        planar = log_frames("mixed_planar.json", value, sizeof(value), NULL);
        mixed = log_frames("mixed_nv12.json", value, sizeof(value), NULL);
        CHECK(rc1 == 0 && rc2 == 0 && planar && mixed && !strcmp(planar, mixed),
              "planar reference, NV12 distorted: scored as planar (rc %d, %d): %s", rc1, rc2,
              out_err);
        free(planar);
        free(mixed);
    }
    for (int ten = 0; ten < 2; ten++) {
        const char *pf = ten ? "yuv420p10le" : "yuv420p", *sf = ten ? "p010le" : "nv12";
        char *planar, *semi;
        int rc1, rc2;
        snprintf(path, sizeof(path), "%s/r_planar.yuv", dir);
        snprintf(path2, sizeof(path2), "%s/r_semi.yuv", dir);
        CHECK(write_raw_pair(path, path2, 33, 17, 4, 0, ten) == 0, "write raw reference");
        snprintf(path, sizeof(path), "%s/d_planar.yuv", dir);
        snprintf(path2, sizeof(path2), "%s/d_semi.yuv", dir);
        CHECK(write_raw_pair(path, path2, 33, 17, 4, 6, ten) == 0, "write raw distorted");
        snprintf(a, sizeof(a), "-r r_planar.yuv -d d_planar.yuv --raw 33x17:%s -n --feature psnr "
                 "--feature ciede --json -o planar.json", pf);
        rc1 = run_tool(a);
        snprintf(a, sizeof(a), "-r r_semi.yuv -d d_semi.yuv --raw 33x17:%s -n --feature psnr "
                 "--feature ciede --json -o semi.json", sf);
        rc2 = run_tool(a);
        planar = log_frames("planar.json", value, sizeof(value), NULL);
        semi = log_frames("semi.json", value, sizeof(value), NULL);
        CHECK(rc1 == 0 && rc2 == 0 && planar && semi && strstr(planar, "psnr_cb") &&
                  !strcmp(planar, semi),
              "%s scored as the same samples in %s (rc %d, %d): %s", sf, pf, rc1, rc2, out_err);
        free(planar);
        free(semi);
        /* --hash-frames: the same checksums for the same samples in either
         * layout; another for the distorted input */
        {
            char h1[256], h2[256];
            const char *line;
            rc1 = hash_run("planar", pf, h1, sizeof(h1));
            rc2 = hash_run("semi", sf, h2, sizeof(h2));
            line = strstr(h1, "reference ");
            CHECK(rc1 == 0 && rc2 == 0 && *h1 && !strcmp(h1, h2) && line &&
                      strncmp(line + 10, strstr(h1, "distorted ") + 10, 16),
                  "--hash-frames: %s as %s, the distorted input another (rc %d, %d): '%s' / "
                  "'%s'", sf, pf, rc1, rc2, h1, h2);
        }
    }
}

static void test_hwdec(void)
{
    char path[1100], dec[64], *none, *other;
    int rc;

    snprintf(path, sizeof(path), "%s/hw.nut", dir);
    if (!CHECK(write_bframes(path, 64, 48, N, 0.0) == 0, "write hw.nut (MPEG-2)"))
        return;
    rc = run_tool("-r ref.nut -d hw.nut -n --feature psnr --hwdec none --json -o hw_none.json");
    none = log_frames("hw_none.json", dec, sizeof(dec), "decoder_distorted");
    CHECK(rc == 0 && none && !strcmp(dec, "cpu") && !strstr(out_err, "--hwdec auto") &&
              strstr(out_err, "decoders: reference cpu, distorted cpu"),
          "--hwdec none: the CPU, no note (rc %d, log says %s): %s", rc, dec, out_err);
    /* auto: the GPU's decoder when there is one, else the CPU with a note;
     * the same scores either way */
    rc = run_tool("-r ref.nut -d hw.nut -n --feature psnr --json -o hw_auto.json");
    other = log_frames("hw_auto.json", dec, sizeof(dec), "decoder_distorted");
    CHECK(rc == 0 && none && other && !strcmp(none, other), "--hwdec auto: scores as the CPU's "
          "(rc %d): %s", rc, out_err);
    if (!strcmp(dec, "cpu"))
        CHECK(strstr(out_err, "distorted decoded on the CPU (--hwdec auto: ") &&
                  !strstr(out_err, "reference decoded on the CPU"),
              "--hwdec auto without a device: a note for the coded input only: %s", out_err);
    else
        CHECK(!strcmp(dec, "cuda") || !strcmp(dec, "vaapi"), "--hwdec auto: decoder %s", dec);
    free(other);
    /* explicit: that decoder, or exit 4 naming it */
    for (int i = 0; i < 2; i++) {
        const char *name = i ? "vaapi" : "cuda";
        char args[256], want[64], logname[32];
        snprintf(logname, sizeof(logname), "hw_%s.json", name);
        snprintf(args, sizeof(args), "-r ref.nut -d hw.nut -n --feature psnr --hwdec %s --json "
                 "-o %s", name, logname);
        rc = run_tool(args);
        snprintf(want, sizeof(want), "--hwdec %s: ", name);
        other = log_frames(logname, dec, sizeof(dec), "decoder_distorted");
        if (rc == 0)
            CHECK(!strcmp(dec, name) && none && other && !strcmp(none, other),
                  "--hwdec %s: decoded by %s, scores as the CPU's: %s", name, dec, out_err);
        else
            CHECK(rc == 4 && strstr(out_err, want) && !other,
                  "--hwdec %s without its device: exit 4 and a message (rc %d): %s", name, rc,
                  out_err);
        free(other);
    }
    free(none);
    /* raw inputs are never decoded by hardware: --hwdec cuda is no error */
    rc = run_tool("-r ref.nut -d late.nut -n --feature psnr --hwdec cuda -o raw.xml");
    CHECK(rc == 0 && strstr(out_err, "decoders: reference cpu, distorted cpu"),
          "--hwdec cuda with raw video: the CPU (rc %d): %s", rc, out_err);
    rc = run_tool("-r ref.nut -d hw.nut --hwdec gpu");
    CHECK(rc == 2 && strstr(out_err, "--hwdec gpu: expected auto, none, cuda or vaapi"),
          "--hwdec gpu: a usage error (rc %d): %s", rc, out_err);
    /* REF,DIST: one decoder per input */
    rc = run_tool("-r hw.nut -d hw.nut --hwdec none,gpu");
    CHECK(rc == 2 && strstr(out_err, "--hwdec none,gpu: expected"),
          "--hwdec none,gpu: a usage error (rc %d): %s", rc, out_err);
    rc = run_tool("-r hw.nut -d hw.nut --hwdec none,none --decode-only");
    CHECK(rc == 0 && strstr(out_err, "decoders: reference cpu, distorted cpu"),
          "--hwdec none,none: the CPU for both (rc %d): %s", rc, out_err);
    rc = run_tool("-r hw.nut -d hw.nut --hwdec none,cuda --decode-only");
    CHECK((rc == 0 && strstr(out_err, "decoders: reference cpu, distorted cuda")) ||
              (rc == 4 && strstr(out_err, "--hwdec cuda: ") &&
               !strstr(out_err, "reference decoded")),
          "--hwdec none,cuda: the CPU for the reference, NVDEC or exit 4 for the distorted "
          "(rc %d): %s", rc, out_err);
    /* the mixed decode: NVDEC for one input, the CPU for the other, the
     * CPU's frames put on the GPU beside NVDEC's (cuda_upload.h) where
     * NVDEC's stay there; scores as the CPU's for both. Without NVDEC:
     * exit 4 and why, nothing scored */
    for (int dir_i = 0; dir_i < 2; dir_i++) {
        const char *mode = dir_i ? "none,cuda" : "cuda,none";
        char args[256], logname[32], *none_log, *mixed;
        int rc_none;
        snprintf(logname, sizeof(logname), "mix%d.json", dir_i);
        rc_none = run_tool("-r hw.nut -d hw.nut -n --feature psnr --feature ciede --hwdec none "
                           "--json -o mix_none.json");
        none_log = log_frames("mix_none.json", dec, sizeof(dec), NULL);
        snprintf(args, sizeof(args), "-r hw.nut -d hw.nut -n --feature psnr --feature ciede "
                 "--hwdec %s --json -o %s", mode, logname);
        rc = run_tool(args);
        mixed = log_frames(logname, dec, sizeof(dec), NULL);
        if (rc == 0)
            CHECK(rc_none == 0 && none_log && mixed && !strcmp(none_log, mixed) &&
                      strstr(out_err, dir_i ? "decoders: reference cpu, distorted cuda"
                                            : "decoders: reference cuda, distorted cpu"),
                  "--hwdec %s: scores as the CPU's, each input's decoder said: %s", mode,
                  out_err);
        else
            CHECK(rc == 4 && strstr(out_err, "--hwdec cuda: ") && !mixed &&
                      !strstr(out_err, "mixed decode"),
                  "--hwdec %s without NVDEC: exit 4 and a message (rc %d): %s", mode, rc,
                  out_err);
        free(none_log);
        free(mixed);
        snprintf(args, sizeof(args), "-r hw.nut -d hw.nut --hwdec %s --decode-only", mode);
        rc = run_tool(args);
        CHECK((rc == 0 && strstr(out_err, "decoded 12 pairs in ")) ||
                  (rc == 4 && strstr(out_err, "--hwdec cuda: ")),
              "--hwdec %s --decode-only: its floor, or exit 4 without NVDEC (rc %d): %s", mode,
              rc, out_err);
    }
    /* --decode-only: pairs counted, nothing scored, no log */
    rc = run_tool("-r hw.nut -d hw.nut --hwdec none --decode-only");
    CHECK(rc == 0 && strstr(out_err, "decoded 12 pairs in ") &&
              strstr(out_err, "decoders: reference cpu, distorted cpu") &&
              !strstr(out_err, "vmaf"),
          "--decode-only (rc %d): %s", rc, out_err);
    rc = run_tool("-r hw.nut -d hw.nut --hash-frames");
    CHECK(rc == 2 && strstr(out_err, "--hash-frames goes with --decode-only"),
          "--hash-frames alone: a usage error (rc %d): %s", rc, out_err);
    rc = run_tool("-r hw.nut -d hw.nut --decode-only -o d.json");
    CHECK(rc == 2 && strstr(out_err, "--decode-only scores nothing"),
          "--decode-only -o: a usage error (rc %d): %s", rc, out_err);
}

/* ---- the stretch a CPU session takes on the CPU path ---- */

static void test_stretch_choice(void)
{
    /* the low-bitrate H.264 pair: key frames 250 apart, 600 frames */
    StretchView b600[] = {{0, 250, 0}, {250, 250, 1}, {500, 100, 1}};
    /* looped to 1,200 */
    StretchView b1200[] = {{0, 250, 0}, {250, 250, 1}, {500, 250, 1}, {750, 250, 1},
                           {1000, 200, 1}};
    /* before any rate (equal rates), half to spare: the next stretch is
     * too close (250 x 1.5 > 250), the last one is in time */
    CHECK(stretch_choose_in_time(b600, 3, 0, 0, 0.0, 0.0, 1.5) == 2,
          "600 frames: the last stretch");
    CHECK(stretch_choose_in_time(b600, 3, 0, 0, 1100.0, 0.0, 1.5) == 2 &&
              stretch_choose_in_time(b600, 3, 0, 0, 0.0, 1100.0, 1.5) == 2,
          "one rate unknown: equal rates");
    /* once the own decoder is halfway through the second stretch, the last
     * is no longer in time (100 x 1.5 > 500 - 400) */
    CHECK(stretch_choose_in_time(b600, 3, 1, 400, 0.0, 0.0, 1.5) == -1,
          "600 frames, own decoder at 400: none");
    CHECK(stretch_choose_in_time(b600, 3, 1, 340, 0.0, 0.0, 1.5) == 2,
          "600 frames, own decoder at 340: the last");
    b600[2].free = 0;
    CHECK(stretch_choose_in_time(b600, 3, 0, 0, 0.0, 0.0, 1.5) == -1, "taken: none");
    /* 1,200 frames: the first in time, then the next after it */
    CHECK(stretch_choose_in_time(b1200, 5, 0, 0, 0.0, 0.0, 1.5) == 2,
          "1,200 frames: the third stretch");
    b1200[2].free = 0;
    CHECK(stretch_choose_in_time(b1200, 5, 2, 300, 1100.0, 1000.0, 1.25) == 3,
          "1,200 frames, measured rates: the fourth after the third");
    /* a session four times slower than the own decoder is in time for none */
    CHECK(stretch_choose_in_time(b1200, 5, 2, 300, 1100.0, 275.0, 1.25) == -1,
          "a slow session: none");
    /* a fast one takes the next stretch */
    CHECK(stretch_choose_in_time(b1200, 5, 0, 0, 1000.0, 3000.0, 1.25) == 1,
          "a session three times faster: the next stretch");
    /* never the stretch being read nor one behind the own decoder, nor
     * one before `after` */
    CHECK(stretch_choose_in_time(b1200, 5, -1, 800, 0.0, 0.0, 1.0) == 4,
          "own decoder at 800: the last");
    CHECK(stretch_choose_in_time(b1200, 5, 4, 0, 0.0, 0.0, 1.0) == -1 &&
              stretch_choose_in_time(b1200, 5, 9, 0, 0.0, 0.0, 1.0) == -1,
          "after the last: none");
    CHECK(stretch_choose_in_time(b1200, 0, -1, 0, 0.0, 0.0, 1.0) == -1, "no stretches: none");
}


/* ---- the pool of pinned blocks behind a CPU decoder's get_buffer2 ---- */

/* One frame of the codec's size from its get_buffer2; 1 when it lies in
 * a pinned block (the pool's misses did not grow), 0 in FFmpeg's buffers,
 * -1 on an error. */
static int pool_frame(AVCodecContext *c, PinnedFrames *pool, AVFrame *f)
{
    unsigned misses = pinned_frames_misses(pool);
    f->format = AV_PIX_FMT_YUV420P;
    f->width = 64;
    f->height = 48;
    if (c->get_buffer2(c, f, 0) < 0 || !f->data[0] || !f->buf[0])
        return -1;
    return pinned_frames_misses(pool) == misses;
}

static void test_pinned_pool(void)
{
    const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_MPEG2VIDEO);
    AVCodecContext *c = codec ? avcodec_alloc_context3(codec) : NULL;
    AVFrame *f[40] = {NULL};
    PinnedFrames *pool = NULL;
    QgpuContext *ctx = NULL;
    QgpuConfig cfg;
    unsigned attach = 0, during = 0;
    double t_attach, t_during;
    int n = 0, ok = 1, got;

    qgpu_config_default(&cfg);
    if (!CHECK(c && qgpu_open(&ctx, &cfg) == 0, "a codec and a context"))
        goto done;
    c->width = 64;
    c->height = 48;
    c->pix_fmt = AV_PIX_FMT_YUV420P;
    pinned_frames_install(&pool, c);
    if (!CHECK(pool && avcodec_open2(c, codec, NULL) == 0, "the pool installed, codec opened"))
        goto done;
    for (int i = 0; i < 40; i++)
        if (!(f[i] = av_frame_alloc()))
            ok = 0;
    if (!CHECK(ok, "frames"))
        goto done;
    /* before attach: FFmpeg's buffers, no miss counted, the layout learnt */
    got = pool_frame(c, pool, f[n++]);
    CHECK(got == 1 && pinned_frames_misses(pool) == 0, "before attach: no miss (%d)", got);
    av_frame_unref(f[--n]);
    pinned_frames_attach(pool, ctx);
    pinned_frames_setup(pool, &attach, &t_attach, &during, &t_during);
    CHECK(attach >= 8 && attach < 40 && during == 0, "attach made %u blocks", attach);
    /* every block taken, then one frame more: a miss */
    for (unsigned i = 0; i < attach && ok; i++)
        ok = pool_frame(c, pool, f[n++]) == 1;
    CHECK(ok, "%u frames in the %u blocks made at attach", attach, attach);
    got = pool_frame(c, pool, f[n++]);
    CHECK(got == 0 && pinned_frames_misses(pool) == 1, "one frame more: a miss (%d)", got);
    /* one block per call while misses are unanswered */
    pinned_frames_grow(pool, ctx);
    pinned_frames_setup(pool, &attach, &t_attach, &during, &t_during);
    CHECK(during == 1, "one miss: one block made (%u)", during);
    pinned_frames_grow(pool, ctx);
    pinned_frames_setup(pool, &attach, &t_attach, &during, &t_during);
    CHECK(during == 1, "miss answered: no more blocks (%u)", during);
    got = pool_frame(c, pool, f[n++]);
    CHECK(got == 1, "the new block taken (%d)", got);
    got = pool_frame(c, pool, f[n++]);
    CHECK(got == 0, "then a miss again (%d)", got);
    got = pool_frame(c, pool, f[n++]);
    CHECK(got == 0 && pinned_frames_misses(pool) == 3, "and another (%d)", got);
    pinned_frames_grow(pool, ctx);
    pinned_frames_grow(pool, ctx);
    pinned_frames_grow(pool, ctx);
    pinned_frames_setup(pool, &attach, &t_attach, &during, &t_during);
    CHECK(during == 3, "two misses: two more blocks, one per call (%u made)", during);
    /* frames given back: their blocks are taken again, without a miss */
    while (n > 0)
        av_frame_unref(f[--n]);
    for (int i = 0; i < 4 && ok; i++)
        ok = pool_frame(c, pool, f[n++]) == 1;
    CHECK(ok && pinned_frames_misses(pool) == 3, "blocks given back are reused");
done:
    while (n > 0)
        av_frame_unref(f[--n]);
    for (int i = 0; i < 40; i++)
        av_frame_free(&f[i]);
    avcodec_free_context(&c);
    pinned_frames_close(&pool); /* after the codec, as decode.c does */
    qgpu_close(&ctx);
}

/* ---- --hwdec auto's choice by measurement ---- */

static void test_decoder_choice(void)
{
    DecoderChoiceKey a, b;
    DecoderChoice c = {HWDEC_NONE, 1500.0, 745.0}, got;
    /* the H200's figures (doc/performance.md): low-bitrate H.264, the CPU's
     * floor 1196-1582 against NVDEC's 745; HEVC 876 against 1458 */
    CHECK(decoder_choice_pick(1196.0, 745.0, 1) == HWDEC_NONE, "H.264: the CPU");
    CHECK(decoder_choice_pick(876.0, 1458.0, 1) == HWDEC_CUDA, "HEVC: NVDEC");
    /* near a tie NVDEC stays (the CPU path's scoring reaches less of its floor) */
    CHECK(decoder_choice_pick(800.0, 745.0, 1) == HWDEC_CUDA, "1.07x: NVDEC");
    CHECK(decoder_choice_pick(745.0 * DECODER_CHOICE_CPU_MARGIN + 1.0, 745.0, 0) == HWDEC_NONE,
          "above the margin: the CPU");
    /* a batch's jobs share the cores */
    CHECK(decoder_choice_pick(1500.0, 745.0, 4) == HWDEC_CUDA, "4 jobs at once: NVDEC");
    CHECK(decoder_choice_pick(1500.0, 600.0, 2) == HWDEC_NONE, "2 jobs, 750 vs 600: the CPU");
    /* unknown figures: NVDEC, as before the measurement */
    CHECK(decoder_choice_pick(0.0, 745.0, 1) == HWDEC_CUDA &&
              decoder_choice_pick(1500.0, 0.0, 1) == HWDEC_CUDA &&
              decoder_choice_pick(NAN, 745.0, 1) == HWDEC_CUDA &&
              decoder_choice_pick(INFINITY, 745.0, 1) == HWDEC_CUDA,
          "unknown rates: NVDEC");
    CHECK(decoder_choice_hw_pairs(1400.0, 1500.0) == 1400.0 &&
              decoder_choice_hw_pairs(0.0, 1500.0) == 0.0,
          "NVDEC's pairs/s: the slower input's frames/s");
    /* buckets: half octaves of bits per pixel */
    CHECK(decoder_choice_bucket(1.3e6, 1920, 1080, 25.0) ==
                  decoder_choice_bucket(1.5e6, 1920, 1080, 25.0) &&
              decoder_choice_bucket(1.3e6, 1920, 1080, 25.0) !=
                  decoder_choice_bucket(3.0e6, 1920, 1080, 25.0) &&
              decoder_choice_bucket(0.0, 1920, 1080, 25.0) == DECODER_CHOICE_NO_BUCKET &&
              decoder_choice_bucket(1e6, 1920, 1080, 0.0) == DECODER_CHOICE_NO_BUCKET,
          "bit-rate buckets (%d %d %d)", decoder_choice_bucket(1.3e6, 1920, 1080, 25.0),
          decoder_choice_bucket(1.5e6, 1920, 1080, 25.0),
          decoder_choice_bucket(3.0e6, 1920, 1080, 25.0));
    /* the process's table: claimed, stored, found; another key not */
    decoder_choice_reset();
    memset(&a, 0, sizeof(a));
    a.in[0] = (DecoderStreamKey){27, 1, 1920, 1080, "nv12", -9};
    a.in[1] = a.in[0];
    a.host_jobs = 1;
    b = a;
    b.in[1].rate_bucket = -12;
    CHECK(decoder_choice_claim(&a, &got) == 0, "first run of a kind: measures");
    decoder_choice_store(&a, &c);
    CHECK(decoder_choice_claim(&a, &got) == 1 && got.mode == HWDEC_NONE &&
              got.cpu_pairs == 1500.0 && got.hw_pairs == 745.0,
          "the next run of that kind: the decision kept");
    CHECK(decoder_choice_claim(&b, &got) == 0, "another bit rate: measures");
    decoder_choice_abandon(&b);
    CHECK(decoder_choice_claim(&b, &got) == 0, "abandoned: measured again");
    decoder_choice_abandon(&b);
    b = a;
    b.host_jobs = 8;
    CHECK(decoder_choice_claim(&b, &got) == 0, "another number of jobs: measures");
    decoder_choice_abandon(&b);
    decoder_choice_reset();
}

/* Hashes of the rest of dec's pictures; their count in *n. */
static uint64_t hash_rest(Decoder *dec, unsigned *n)
{
    uint64_t h = FRAME_HASH_START;
    QgpuPicture pic;
    char err[256];
    *n = 0;
    while (decoder_read(dec, &pic, err, sizeof(err)) == 1) {
        h = frame_hash(h, &pic);
        (*n)++;
    }
    return h;
}

/* decoder_rewind: the frames after it are a fresh decoder's (MPEG-2 with
 * B-frames, in NUT and in MP4 with its edit list); probe_rate measures
 * CPU decoders and leaves them to be rewound; too short an input is no
 * measurement. */
static void test_rewind(void)
{
    static const char *formats[2] = {"nut", "mp4"};
    char path[1100], err[1024];
    for (int f = 0; f < 2; f++) {
        Decoder *fresh = NULL, *d = NULL, *e = NULL;
        unsigned n1 = 0, n2 = 0, n3 = 0;
        uint64_t h1 = 0, h2 = 0, h3 = 0;
        double rate = 0.0;
        int ok;
        snprintf(path, sizeof(path), "%s/rewind.%s", dir, formats[f]);
        ok = write_bframes_as(path, formats[f], 64, 48, 60, 0.0) == 0;
        if (!CHECK(ok, "write rewind.%s", formats[f]))
            continue;
        ok = decoder_open(&fresh, path, err, sizeof(err)) == 0 &&
             decoder_start(fresh, err, sizeof(err)) == 0 &&
             decoder_open(&d, path, err, sizeof(err)) == 0 &&
             decoder_start(d, err, sizeof(err)) == 0 &&
             decoder_open(&e, path, err, sizeof(err)) == 0 &&
             decoder_start(e, err, sizeof(err)) == 0;
        if (ok) {
            h1 = hash_rest(fresh, &n1);
            rate = probe_rate(d, e, 3, 24, 10.0); /* 27 pairs read */
            ok = decoder_rewind(d, err, sizeof(err)) == 0;
            h2 = ok ? hash_rest(d, &n2) : 0;
            ok = ok && decoder_rewind(d, err, sizeof(err)) == 0; /* at the end: again */
            h3 = ok ? hash_rest(d, &n3) : 0;
        }
        CHECK(ok && n1 == 60 && n2 == n1 && h2 == h1 && n3 == n1 && h3 == h1 &&
                  decoder_frame_count(d) == 60,
              "%s: rewound after 27 frames and at the end, the frames are a fresh decoder's "
              "(%u / %u / %u frames, %016llx / %016llx / %016llx) %s", formats[f], n1, n2, n3,
              (unsigned long long)h1, (unsigned long long)h2, (unsigned long long)h3,
              ok ? "" : err);
        CHECK(rate > 0.0 && isfinite(rate), "%s: probe_rate of two CPU decoders in turn: %.1f "
              "pairs/s", formats[f], rate);
        /* 60 frames: 53 read before the timing, 7 timed */
        ok = decoder_rewind(e, err, sizeof(err)) == 0;
        rate = ok ? probe_rate(e, NULL, 53, 100, 10.0) : -1.0;
        CHECK(rate == 0.0, "%s: 7 frames left, fewer than PROBE_MIN_FRAMES timed: no "
              "measurement (%.1f)", formats[f], rate);
        decoder_close(&fresh);
        decoder_close(&d);
        decoder_close(&e);
    }
}

/* The "checksums of the N pairs: ..." line of the last run ("" when none). */
static void checksum_line(char *line, size_t len)
{
    const char *at = strstr(out_err, "checksums of the ");
    *line = 0;
    if (at)
        snprintf(line, len, "%.*s", (int)strcspn(at, "\n"), at);
}

/* --decode-sessions: MPEG-2 in mp4, a key frame every 12 frames and
 * B-frames, decoded by 3 decoders at once (stretches of 24, 24 and 12
 * frames; the distorted input with two frames in its second stretch that
 * the decoder drops without a word, as one decoder does) gives the frames
 * one decoder gives and the same scores; a
 * stream is decoded by one decoder, saying why; usage errors. */
/* CPU sessions as beside NVDEC (QGPU_SESSIONS_CLEAN_ONLY=1: their
 * stretches used only when decoded whole without an error, none taken
 * after the input's first error), on 240 frames (15 stretches): one
 * decoder's frames; with bytes of the file overwritten (decoding errors),
 * the run goes through and warns that sessions may conceal a damaged
 * stretch otherwise than one decoder. */
static void test_clean_stretches(void)
{
    char path[1100], one[256], many[256];
    FILE *f;
    int rc;
    snprintf(path, sizeof(path), "%s/gop240.mp4", dir);
    if (!CHECK(write_bframes_as(path, "mp4", 64, 48, 240, 0.0) == 0, "write gop240.mp4"))
        return;
    rc = run_tool("-r gop240.mp4 -d gop240.mp4 --hwdec none --decode-only --hash-frames");
    checksum_line(one, sizeof(one));
    CHECK(rc == 0 && *one, "gop240.mp4 by one decoder (rc %d): %s", rc, out_err);
    rc = tool_run(tool, dir, "QGPU_SESSIONS_CLEAN_ONLY=1", 0,
                  "-r gop240.mp4 -d gop240.mp4 --hwdec none --cpu-sessions 2 --decode-only "
                  "--hash-frames", out_err, sizeof(out_err));
    checksum_line(many, sizeof(many));
    CHECK(rc == 0 && !strcmp(one, many) &&
              strstr(out_err, "decoders: reference cpu x3, distorted cpu x3"),
          "--cpu-sessions 2, clean stretches only: the frames of one decoder (rc %d; '%s' / "
          "'%s'): %s", rc, one, many, out_err);
    /* 200 bytes in the middle of the file overwritten */
    if ((f = fopen(path, "r+b")) && !fseek(f, 0, SEEK_END)) {
        long size = ftell(f);
        fseek(f, size / 2, SEEK_SET);
        for (int i = 0; i < 200; i++)
            fputc((i * 37 + 11) & 0xff, f);
    }
    if (f)
        fclose(f);
    rc = tool_run(tool, dir, "QGPU_SESSIONS_CLEAN_ONLY=1", 0,
                  "-r gop240.mp4 -d gop240.mp4 --hwdec none --cpu-sessions 2 -n --feature psnr "
                  "--json -o clean_damaged.json", out_err, sizeof(out_err));
    CHECK(rc == 0 && strstr(out_err, "skipped") &&
              strstr(out_err, "decoded by several decoders each (sessions)"),
          "decoding errors with sessions: the warning (rc %d): %s", rc, out_err);
}

static void test_decode_sessions(void)
{
    char path[1100], one[256], three[256], value[64];
    char *log1, *log3;
    int rc1, rc3;
    snprintf(path, sizeof(path), "%s/gop.mp4", dir);
    CHECK(write_bframes_as(path, "mp4", 64, 48, 60, 0.0) == 0, "write gop.mp4");
    snprintf(path, sizeof(path), "%s/gop_bad.mp4", dir);
    CHECK(write_bframes_damaged(path, "mp4", 64, 48, 60, 0.0, 30, 31) == 0,
          "write gop_bad.mp4");
    rc1 = run_tool("-r gop.mp4 -d gop_bad.mp4 --hwdec none --decode-sessions 1 --decode-only "
                   "--hash-frames");
    checksum_line(one, sizeof(one));
    rc3 = run_tool("-r gop.mp4 -d gop_bad.mp4 --hwdec none --decode-sessions 3 --decode-only "
                   "--hash-frames");
    checksum_line(three, sizeof(three));
    CHECK(rc1 == 0 && rc3 == 0 && *one && !strcmp(one, three) &&
              strstr(out_err, "decoders: reference cpu x3, distorted cpu x3"),
          "--decode-sessions 3: the frames of one decoder (rc %d, %d; '%s' / '%s'): %s", rc1,
          rc3, one, three, out_err);
    rc1 = run_tool("-r gop.mp4 -d gop_bad.mp4 --hwdec none --decode-sessions 1 -n --feature "
                   "psnr --json -o sessions1.json");
    rc3 = run_tool("-r gop.mp4 -d gop_bad.mp4 --hwdec none --decode-sessions 3 -n --feature "
                   "psnr --json -o sessions3.json");
    log1 = log_frames("sessions1.json", value, sizeof(value), "decode_sessions_reference");
    CHECK(!*value, "one decoder: no decode_sessions field ('%s')", value);
    log3 = log_frames("sessions3.json", value, sizeof(value), "decode_sessions_reference");
    CHECK(rc1 == 0 && rc3 == 0 && log1 && log3 && strstr(log1, "psnr_y") && !strcmp(log1, log3)
              && !strcmp(value, "3"),
          "--decode-sessions 3: the scores of one decoder (rc %d, "
          "%d, decode_sessions_reference '%s'): %s", rc1, rc3, value, out_err);
    free(log1);
    free(log3);
    /* a stream is read once: one decoder, and a note */
    /* (env runs `sh -c 'cat gop.mp4 | TOOL ARGS'`: the reference a pipe) */
    rc3 = tool_run(tool, dir, "QGPU_PIPED=1 sh -c 'cat gop.mp4 | \"$0\" \"$@\"'", 0,
                   "-r - -d gop_bad.mp4 --hwdec none --decode-sessions 3 --decode-only "
                   "--hash-frames", out_err, sizeof(out_err));
    checksum_line(three, sizeof(three));
    CHECK(rc3 == 0 && strstr(out_err, "reference decoded by one decoder (--decode-sessions 3: a "
                             "stream is read once)") &&
              strstr(out_err, "decoders: reference cpu, distorted cpu x3") &&
              strstr(one, "reference ") && strstr(three, "reference ") &&
              !strncmp(strstr(one, "reference "), strstr(three, "reference "), 26),
          "--decode-sessions 3 on a stream: one decoder (rc %d): %s", rc3, out_err);
    /* CPU sessions beside the own decoder (here the CPU's: NVDEC's path is
     * checked on the GPU), stretches taken ahead of the one being read:
     * the same frames and scores */
    rc3 = run_tool("-r gop.mp4 -d gop_bad.mp4 --hwdec none --cpu-sessions 2 --decode-only "
                   "--hash-frames");
    checksum_line(three, sizeof(three));
    CHECK(rc3 == 0 && *one && !strcmp(one, three) &&
              strstr(out_err, "decoders: reference cpu x3, distorted cpu x3"),
          "--cpu-sessions 2: the frames of one decoder (rc %d; '%s' / '%s'): %s", rc3, one,
          three, out_err);
    rc3 = run_tool("-r gop.mp4 -d gop_bad.mp4 --hwdec none --decode-sessions 2 --cpu-sessions 1 "
                   "-n --feature psnr --json -o sessions_cpu.json");
    log1 = log_frames("sessions1.json", value, sizeof(value), "decode_sessions_reference");
    log3 = log_frames("sessions_cpu.json", value, sizeof(value), "decode_sessions_reference");
    CHECK(rc3 == 0 && log1 && log3 && !strcmp(log1, log3) && !strcmp(value, "3"),
          "--decode-sessions 2 --cpu-sessions 1: the scores of one decoder (rc %d, "
          "decode_sessions_reference '%s'): %s", rc3, value, out_err);
    free(log1);
    free(log3);
    test_clean_stretches();
    CHECK(run_tool("-r gop.mp4 -d gop.mp4 --cpu-sessions 17") == 2 &&
              strstr(out_err, "--cpu-sessions 17: expected auto or 0 to 16"),
          "--cpu-sessions 17: a usage error: %s", out_err);
    CHECK(run_tool("-r gop.mp4 -d gop.mp4 --decode-sessions 17") == 2 &&
              strstr(out_err, "--decode-sessions 17: expected auto or 1 to 16"),
          "--decode-sessions 17: a usage error: %s", out_err);
    CHECK(run_tool("-r gop.mp4 -d gop.mp4 --decode-sessions two") == 2 &&
              strstr(out_err, "--decode-sessions two: expected a whole number"),
          "--decode-sessions two: a usage error: %s", out_err);
}

/* --hwdec auto's measurement end to end, CPU decoders standing for
 * NVDEC's (QGPU_HWDEC_PROBE_TEST=1), the decisions kept in
 * DIR/hwdec-choices (QGPU_HWDEC_CHOICES: a fresh XDG_CACHE_HOME would also
 * move PoCL's kernel cache, and LLVM's compile leaks under LeakSanitizer):
 * measured, the log says so and its frames are --hwdec none's; the next
 * run takes the saved decision, QGPU_HWDEC_PROBE=1 measures again; forced;
 * a short pair is not measured. */
static void test_probe_runs(void)
{
    char path[1100], how[64], env[1400], *none, *other;
    static const struct {
        const char *env, *how, *says;
    } runs[] = {
        {"", "measured", "--hwdec auto, measured: "},
        {"", "saved", "--hwdec auto, measured by an earlier run on this host: "},
        {"QGPU_HWDEC_PROBE=1", "measured", "--hwdec auto, measured: "},
        {"QGPU_HWDEC_PROBE=cpu", "forced", "chosen by QGPU_HWDEC_PROBE"},
        {"QGPU_HWDEC_PROBE=cuda", "forced", "chosen by QGPU_HWDEC_PROBE"},
    };
    int rc;
    snprintf(path, sizeof(path), "%s/long.nut", dir);
    if (!CHECK(write_bframes(path, 64, 48, PROBE_MIN_PAIRS + 20, 0.0) == 0,
               "write long.nut (MPEG-2)"))
        return;
    rc = tool_run(tool, dir, NULL, 0, "-r long.nut -d long.nut -n --feature psnr --hwdec none "
                  "--json -o probe_none.json", out_err, sizeof(out_err));
    none = log_frames("probe_none.json", how, sizeof(how), "decoder_choice");
    CHECK(rc == 0 && none && !*how, "--hwdec none: no choice in the log (rc %d): %s", rc,
          out_err);
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        char rates[64];
        int forced = !strcmp(runs[i].how, "forced");
        snprintf(env, sizeof(env),
                 "QGPU_HWDEC_PROBE_TEST=1 QGPU_HWDEC_CHOICES=%s/hwdec-choices %s", dir,
                 runs[i].env);
        rc = tool_run(tool, dir, env, 0, "-r long.nut -d long.nut -n --feature psnr --json "
                      "-o probe_auto.json", out_err, sizeof(out_err));
        other = log_frames("probe_auto.json", how, sizeof(how), "decoder_choice");
        free(log_frames("probe_auto.json", rates, sizeof(rates), "decoder_cpu_pairs_per_s"));
        CHECK(rc == 0 && none && other && !strcmp(none, other) && !strcmp(how, runs[i].how) &&
                  (forced ? !*rates : atof(rates) > 0.0) && strstr(out_err, runs[i].says),
              "%s: %s, the frames --hwdec none's (rc %d, choice '%s', CPU '%s'): %s", env,
              runs[i].how, rc, how, rates, out_err);
        free(other);
    }
    /* a saved decision for the CPU (the measurement above may pick either:
     * its last line is saved again saying cpu) is taken before any NVDEC
     * decoder is opened, as QGPU_HWDEC_PROBE=cpu is */
    {
        char file[1200], line[640] = "", last[640] = "", *mode;
        FILE *f;
        snprintf(file, sizeof(file), "%s/hwdec-choices", dir);
        if ((f = fopen(file, "r"))) {
            while (fgets(line, sizeof(line), f))
                snprintf(last, sizeof(last), "%s", line);
            fclose(f);
        }
        mode = strstr(last, " cuda ");
        if (!mode)
            mode = strstr(last, " cpu ");
        if (CHECK(mode != NULL, "a saved decision in %s: '%s'", file, last) &&
            (f = fopen(file, "a"))) {
            *mode = 0;
            fprintf(f, "%s cpu 2000 1000\n", last);
            fclose(f);
        }
        snprintf(env, sizeof(env), "QGPU_HWDEC_PROBE_TEST=1 QGPU_HWDEC_CHOICES=%s/hwdec-choices",
                 dir);
        rc = tool_run(tool, dir, env, 0, "-r long.nut -d long.nut -n --feature psnr --json "
                      "-o probe_saved.json", out_err, sizeof(out_err));
        other = log_frames("probe_saved.json", how, sizeof(how), "decoder_choice");
        CHECK(rc == 0 && none && other && !strcmp(none, other) && !strcmp(how, "saved") &&
                  strstr(out_err, "CPU 2000 pairs/s") &&
                  strstr(out_err, "known before opening NVDEC"),
              "a saved CPU decision, before opening NVDEC (rc %d, choice '%s'): %s", rc, how,
              out_err);
        free(other);
        rc = tool_run(tool, dir, "QGPU_HWDEC_PROBE_TEST=1 QGPU_HWDEC_PROBE=cpu", 0,
                      "-r long.nut -d long.nut -n --feature psnr", out_err, sizeof(out_err));
        CHECK(rc == 0 && strstr(out_err, "QGPU_HWDEC_PROBE; known before opening NVDEC"),
              "QGPU_HWDEC_PROBE=cpu: before opening NVDEC (rc %d): %s", rc, out_err);
    }
    free(none);
    snprintf(env, sizeof(env), "QGPU_HWDEC_PROBE_TEST=1 QGPU_HWDEC_CHOICES=%s/hwdec-choices2",
             dir);
    rc = tool_run(tool, dir, env, 0, "-r long.nut -d long.nut -n --feature psnr --frame_cnt 40 "
                  "--decode-only", out_err, sizeof(out_err));
    CHECK(rc == 0 && strstr(out_err, "NVDEC kept, 40 pairs: too short to measure"),
          "a short pair is not measured (rc %d): %s", rc, out_err);
}

/* The count of QGPU_TIMING's "qgpu: timing: N pairs from pinned frames"
 * line in err, or -1 without one. */
static int pinned_pairs(const char *err)
{
    static const char tail[] = " pairs from pinned frames";
    const char *end = strstr(err, tail), *start;
    if (!end)
        return -1;
    start = end;
    while (start > err && start[-1] >= '0' && start[-1] <= '9')
        start--;
    return start < end && start - err >= 14 && !strncmp(start - 14, "qgpu: timing: ", 14)
               ? atoi(start)
               : -1;
}

/* The CPU decoders' frames decoded into the library's pinned blocks
 * (QGPU_PINNED_FRAMES=1; on by default only for long pairs) give the
 * staging path's scores, and most pairs come from them; with a budget of
 * 0 MB (QGPU_PINNED_FRAMES_MAX_MB) none does; by default 450 pairs do
 * not use them, 500 do. */
static void test_pinned_frames(void)
{
    static const int sizes[][2] = {{64, 48}, {98, 66}};
    char path[1100], args[1400], value[64], *staging, *pinned;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        int w = sizes[i][0], h = sizes[i][1], rc, n;
        snprintf(path, sizeof(path), "%s/pinned%zu.nut", dir, i);
        if (!CHECK(write_bframes(path, w, h, 40, 0.0) == 0, "write %s", path))
            return;
        snprintf(args, sizeof(args), "-r pinned%zu.nut -d pinned%zu.nut -n --feature psnr "
                 "--feature ciede --json -o pinned_staging.json", i, i);
        rc = tool_run(tool, dir, "QGPU_PINNED_FRAMES=0", 0, args, out_err, sizeof(out_err));
        staging = log_frames("pinned_staging.json", value, sizeof(value), NULL);
        CHECK(rc == 0 && staging, "%dx%d: staging path (rc %d): %s", w, h, rc, out_err);
        snprintf(args, sizeof(args), "-r pinned%zu.nut -d pinned%zu.nut -n --feature psnr "
                 "--feature ciede --json -o pinned_blocks.json", i, i);
        rc = tool_run(tool, dir, "QGPU_PINNED_FRAMES=1 QGPU_TIMING=1", 0, args, out_err,
                      sizeof(out_err));
        pinned = log_frames("pinned_blocks.json", value, sizeof(value), NULL);
        n = pinned_pairs(out_err);
        CHECK(rc == 0 && staging && pinned && !strcmp(staging, pinned),
              "%dx%d: pinned frames score as the staging path (rc %d): %s", w, h, rc, out_err);
        CHECK(n >= 20, "%dx%d: %d of 40 pairs from pinned frames: %s", w, h, n, out_err);
        free(pinned);
        /* a process budget of 0 MB: no block is made, every frame takes
         * FFmpeg's buffers, the scores are the same */
        rc = tool_run(tool, dir, "QGPU_PINNED_FRAMES=1 QGPU_PINNED_FRAMES_MAX_MB=0 QGPU_TIMING=1",
                      0, args, out_err, sizeof(out_err));
        pinned = log_frames("pinned_blocks.json", value, sizeof(value), NULL);
        CHECK(rc == 0 && staging && pinned && !strcmp(staging, pinned) &&
                  strstr(out_err, "qgpu: timing: 0 pairs from pinned frames"),
              "%dx%d: pinned-frame budget 0: no pinned frames, same scores (rc %d): %s", w, h,
              rc, out_err);
        free(staging);
        free(pinned);
        rc = tool_run(tool, dir, "QGPU_TIMING=1", 0, args, out_err, sizeof(out_err));
        CHECK(rc == 0 && strstr(out_err, "qgpu: timing: 0 pairs from pinned frames"),
              "%dx%d: 40 pairs, fewer than the default's minimum: no pinned frames (rc %d): %s",
              w, h, rc, out_err);
    }
    /* the default's minimum (run.c, PINNED_FRAMES_MIN_PAIRS): of a file of
     * 520 frames, 450 pairs (--frame_cnt) take the staging copy, 500 the
     * pinned frames */
    snprintf(path, sizeof(path), "%s/pinned_long.nut", dir);
    if (!CHECK(write_bframes(path, 64, 48, 520, 0.0) == 0, "write %s", path))
        return;
    for (int pairs = 450; pairs <= 500; pairs += 50) {
        int rc, n;
        snprintf(args, sizeof(args), "-r pinned_long.nut -d pinned_long.nut -n --feature psnr "
                 "--frame_cnt %d", pairs);
        rc = tool_run(tool, dir, "QGPU_TIMING=1", 0, args, out_err, sizeof(out_err));
        n = pinned_pairs(out_err);
        CHECK(rc == 0 && (pairs < 500 ? n == 0 : n >= 400),
              "%d pairs by default: %d from pinned frames (rc %d): %s", pairs, n, rc, out_err);
    }
}

/* The mixed decode's conversion (cuda_upload.h): planar 4:2:0 to NV12 /
 * P010 and back (hwdec_to_planar) gives every sample back, the Cb Cr pairs
 * in order and 10-bit samples in the words' top bits. */
static void test_upload_semiplanar(void)
{
    for (int ten = 0; ten < 2; ten++) {
        enum AVPixelFormat pf = ten ? AV_PIX_FMT_YUV420P10LE : AV_PIX_FMT_YUV420P;
        enum AVPixelFormat sf = ten ? AV_PIX_FMT_P010LE : AV_PIX_FMT_NV12;
        int depth = ten ? 10 : 8, bps = ten ? 2 : 1, same = 1, pairs_ok = 1;
        AVFrame *src = av_frame_alloc(), *semi = av_frame_alloc(), *back = av_frame_alloc();
        unsigned seed = 12345;
        if (!CHECK(src && semi && back, "frames")) {
            av_frame_free(&src);
            av_frame_free(&semi);
            av_frame_free(&back);
            return;
        }
        src->format = pf;
        semi->format = sf;
        src->width = semi->width = 33; /* odd: the last chroma column */
        src->height = semi->height = 17;
        CHECK(av_frame_get_buffer(src, 0) == 0 && av_frame_get_buffer(semi, 0) == 0,
              "buffers (%s)", ten ? "10-bit" : "8-bit");
        for (int p = 0; p < 3; p++) {
            int w = p ? 17 : 33, h = p ? 9 : 17;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    seed = seed * 1103515245u + 12345u;
                    unsigned v = (seed >> 8) & ((1u << depth) - 1);
                    uint8_t *row = src->data[p] + (size_t)y * src->linesize[p];
                    if (ten)
                        ((uint16_t *)row)[x] = (uint16_t)v;
                    else
                        row[x] = (uint8_t)v;
                }
        }
        cuda_upload_semiplanar(semi, src, depth);
        for (int y = 0; y < 9; y++)
            for (int x = 0; x < 17; x++)
                for (int c = 0; c < 2; c++) {
                    const uint8_t *in = src->data[1 + c] + (size_t)y * src->linesize[1 + c];
                    const uint8_t *out = semi->data[1] + (size_t)y * semi->linesize[1];
                    unsigned a = ten ? ((const uint16_t *)in)[x] : in[x];
                    unsigned b = ten ? ((const uint16_t *)out)[2 * x + c] : out[2 * x + c];
                    if (b != (a << (ten ? 6 : 0)))
                        pairs_ok = 0;
                }
        CHECK(hwdec_to_planar(semi, depth, back) == 0, "back to planar (%s)",
              ten ? "10-bit" : "8-bit");
        for (int p = 0; p < 3 && back->data[0]; p++) {
            int w = p ? 17 : 33, h = p ? 9 : 17;
            for (int y = 0; y < h; y++)
                if (memcmp(src->data[p] + (size_t)y * src->linesize[p],
                           back->data[p] + (size_t)y * back->linesize[p], (size_t)(w * bps)))
                    same = 0;
        }
        CHECK(pairs_ok, "%s: Cb Cr interleaved in order%s", ten ? "P010" : "NV12",
              ten ? ", samples in the top bits" : "");
        CHECK(same && back->data[0], "%s and back: every sample as it was",
              ten ? "P010" : "NV12");
        av_frame_free(&src);
        av_frame_free(&semi);
        av_frame_free(&back);
    }
}

int main(int argc, char **argv)
{
    char cmd[256];
    (void)argc;
    test_pairing();
    test_stretch_choice();
    test_pinned_pool();
    test_decoder_choice();
    test_upload_semiplanar();
    if (!CHECK(tool_find(argv[0], tool, sizeof(tool)), "the qgpu binary (set QGPU_BUILD)"))
        return test_finish();
    if (!CHECK(mkdtemp(dir) != NULL, "temporary directory"))
        return test_finish();
    test_runs();
    test_hwdec();
    test_rewind();
    test_decode_sessions();
    test_probe_runs();
    test_pinned_frames();
    test_semiplanar_input();
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", dir);
    return test_finish();
}
