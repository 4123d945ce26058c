/*
 * libvmaf's `vmaf` command lines given to the qgpu tool: one check (or a
 * few) per row of doc/compat-cli.md, the row named in each message.
 *
 * Inputs: the fate y4m pair nf_src01 160x90 (48 frames) and raw copies of
 * it written here (4:2:0, 4:2:2, 4:4:4 at 8, 10, 12 and 16 bits), and the
 * 10-bit pair nf_sparks 480x270 (its reference also as an 8-bit y4m
 * written here with libavcodec) for the CTC presets, whose metrics need
 * more than 160x90.
 *
 * The binary is found as $QGPU_BUILD/qgpu, else next to this test's
 * directory (BUILD/tests/test_tool_cli -> BUILD/qgpu).
 */
#include <json-c/json.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include "tool_run.h"

#define REF "refs/nf_src01_160x90_48f.y4m"
#define DIS "pairs/nf_src01_160x90_nfdis/dis.y4m"
#define SPARKS_REF "refs/nf_sparks_480x270_10b_5f.mkv"
#define SPARKS_DIS "pairs/nf_sparks_480x270_10b_nfdis/dis.mkv"
#define W 160
#define H 90
#define FRAMES 10

static char tool[1024], fate[1024];
static char dir[] = "/tmp/qgpu_test_tool_cli.XXXXXX";
static char err[65536];
static char ref[1200], dis[1200], sref[1200], sdis[1200];

static int run(const char *args)
{
    return tool_run(tool, dir, NULL, 120, args, err, sizeof(err));
}

static char *read_text(const char *name)
{
    char path[1300];
    FILE *f;
    long n;
    char *t = NULL;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (t = malloc((size_t)n + 1)) && fread(t, 1, (size_t)n, f) == (size_t)n)
        t[n] = 0;
    else {
        free(t);
        t = NULL;
    }
    fclose(f);
    return t;
}

static json_object *read_json(const char *name)
{
    char path[1300];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return json_object_from_file(path);
}

static json_object *frame_metrics(json_object *root, int i)
{
    json_object *frames, *fr, *m;
    if (!root || !json_object_object_get_ex(root, "frames", &frames) ||
        i >= (int)json_object_array_length(frames))
        return NULL;
    fr = json_object_array_get_idx(frames, i);
    return json_object_object_get_ex(fr, "metrics", &m) ? m : NULL;
}

static int nb_frames(json_object *root)
{
    json_object *frames;
    return root && json_object_object_get_ex(root, "frames", &frames)
               ? (int)json_object_array_length(frames)
               : -1;
}

static int frame_num(json_object *root, int i)
{
    json_object *frames, *v;
    if (!root || !json_object_object_get_ex(root, "frames", &frames) ||
        i >= (int)json_object_array_length(frames))
        return -1;
    return json_object_object_get_ex(json_object_array_get_idx(frames, i), "frameNum", &v)
               ? json_object_get_int(v)
               : -1;
}

static double metric(json_object *root, int i, const char *name)
{
    json_object *m = frame_metrics(root, i), *v;
    return m && json_object_object_get_ex(m, name, &v) ? json_object_get_double(v) : NAN;
}

static double pooled(json_object *root, const char *name, const char *how)
{
    json_object *p, *s, *v;
    return root && json_object_object_get_ex(root, "pooled_metrics", &p) &&
                   json_object_object_get_ex(p, name, &s) &&
                   json_object_object_get_ex(s, how, &v)
               ? json_object_get_double(v)
               : NAN;
}

/* The frames and metrics of two logs are the same (fps and device aside). */
static int same_scores(json_object *a, json_object *b)
{
    json_object *fa, *fb, *pa, *pb;
    if (!a || !b || !json_object_object_get_ex(a, "frames", &fa) ||
        !json_object_object_get_ex(b, "frames", &fb) ||
        !json_object_object_get_ex(a, "pooled_metrics", &pa) ||
        !json_object_object_get_ex(b, "pooled_metrics", &pb))
        return 0;
    return json_object_equal(fa, fb) && json_object_equal(pa, pb);
}

/* The metric names of frame 0, in order, joined by spaces. */
static void names(json_object *root, char *out, size_t len)
{
    json_object *m = frame_metrics(root, 0);
    size_t n = 0;
    out[0] = 0;
    if (!m)
        return;
    json_object_object_foreach(m, key, val) {
        (void)val;
        n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? " " : "", key);
    }
}

/* Frames in the JSON log of `-r REF -d DIS -n --feature psnr OPTIONS --json
 * -o out` (-1 when the run failed). */
static int psnr_frames(const char *options, const char *out)
{
    char a[4096];
    json_object *x;
    int n;
    snprintf(a, sizeof(a), "-r %s -d %s -n --feature psnr %s --json -o %s", ref, dis, options,
             out);
    if (run(a))
        return -1;
    x = read_json(out);
    n = nb_frames(x);
    json_object_put(x);
    return n;
}

/* ------------------------------------------------------------ inputs */

/* Raw copies of REF's first FRAMES frames: layout 420/422/444 (chroma
 * repeated from 4:2:0), depth 8/10/12/16 (samples shifted up). */
static int write_raw(const char *name, int layout, int depth)
{
    char path[1300];
    size_t size;
    uint8_t *y4m;
    FILE *in, *out;
    int ok = 1, hdr;
    snprintf(path, sizeof(path), "%s/%s", fate, REF);
    in = fopen(path, "rb");
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    out = fopen(path, "wb");
    size = 6 + W * H * 3 / 2;
    y4m = malloc(size);
    if (!in || !out || !y4m)
        ok = 0;
    while (ok && (hdr = fgetc(in)) != EOF && hdr != '\n')
        ;
    for (int i = 0; ok && i < FRAMES; i++) {
        ok = fread(y4m, 1, size, in) == size;
        for (int p = 0; ok && p < 3; p++) {
            const uint8_t *src = y4m + 6 + (p == 0 ? 0 : p == 1 ? W * H : W * H * 5 / 4);
            int cw = p && layout != 444 ? W / 2 : W, ch = p && layout == 420 ? H / 2 : H;
            for (int y = 0; ok && y < ch; y++)
                for (int x = 0; ok && x < cw; x++) {
                    int sx = p ? (layout == 444 ? x / 2 : x) : x;
                    int sy = p ? (layout == 420 ? y : y / 2) : y;
                    unsigned v = src[sy * (p ? W / 2 : W) + sx];
                    if (depth == 8) {
                        ok = fputc((int)v, out) != EOF;
                    } else {
                        uint16_t s = (uint16_t)(v << (depth - 8));
                        ok = fwrite(&s, 2, 1, out) == 1;
                    }
                }
        }
    }
    if (in)
        fclose(in);
    if (out && fclose(out))
        ok = 0;
    free(y4m);
    return ok ? 0 : -1;
}

/* The sparks reference (10-bit) as an 8-bit y4m: samples >> 2. */
static int write_sparks8(const char *name)
{
    AVFormatContext *ic = NULL;
    AVCodecContext *dec = NULL;
    const AVCodec *codec = NULL;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    char path[1300];
    FILE *out;
    int s, ret, frames = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    out = fopen(path, "wb");
    if (!out || !pkt || !frame || avformat_open_input(&ic, sref, NULL, NULL) < 0 ||
        avformat_find_stream_info(ic, NULL) < 0 ||
        (s = av_find_best_stream(ic, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0)) < 0 ||
        !(dec = avcodec_alloc_context3(codec)) ||
        avcodec_parameters_to_context(dec, ic->streams[s]->codecpar) < 0 ||
        avcodec_open2(dec, codec, NULL) < 0) {
        ret = -1;
        goto out;
    }
    fprintf(out, "YUV4MPEG2 W%d H%d F25:1 Ip C420jpeg\n", dec->width, dec->height);
    for (int end = 0; !end;) {
        ret = av_read_frame(ic, pkt);
        if (ret < 0) {
            avcodec_send_packet(dec, NULL);
            end = 1;
        } else if (pkt->stream_index == s) {
            avcodec_send_packet(dec, pkt);
        }
        av_packet_unref(pkt);
        while (avcodec_receive_frame(dec, frame) == 0) {
            fputs("FRAME\n", out);
            for (int p = 0; p < 3; p++) {
                int w = p ? (frame->width + 1) / 2 : frame->width;
                int h = p ? (frame->height + 1) / 2 : frame->height;
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++)
                        fputc(((const uint16_t *)(frame->data[p] + y * frame->linesize[p]))[x] >>
                                  2,
                              out);
            }
            frames++;
        }
    }
    ret = frames > 0 ? 0 : -1;
out:
    if (out && fclose(out))
        ret = -1;
    avcodec_free_context(&dec);
    avformat_close_input(&ic);
    av_packet_free(&pkt);
    av_frame_free(&frame);
    return ret;
}

/* ------------------------------------------------------------- rows */


static void rows_inputs(void)
{
    char a[4096];
    json_object *x, *y;
    int rc;
    /* -r/-d, --reference/--distorted: y4m, the default model, XML log */
    snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 3 -o default.xml", ref, dis);
    rc = run(a);
    {
        char *t = read_text("default.xml");
        CHECK(rc == 0 && t && !strncmp(t, "<VMAF version=", 14) && strstr(t, " vmaf=\"") &&
                  strstr(t, "<frame frameNum=\"2\""),
              "[-r/-d, --xml default] XML log with vmaf, 3 frames (rc %d): %s", rc, err);
        CHECK(!strstr(err, "warning"), "[-o .xml] no extension warning: %s", err);
        free(t);
    }
    snprintf(a, sizeof(a), "--reference %s --distorted %s --frame_cnt 3 --json -o long.json", ref,
             dis);
    rc = run(a);
    x = read_json("long.json");
    CHECK(rc == 0 && nb_frames(x) == 3 && metric(x, 0, "vmaf") > 0,
          "[--reference/--distorted, --json] (rc %d): %s", rc, err);
    json_object_put(x);
    /* raw: -w -h -p -b against --raw, every pixel format and depth */
    {
        static const int layouts[3] = {420, 422, 444}, depths[4] = {8, 10, 12, 16};
        for (int l = 0; l < 3; l++)
            for (int d = 0; d < 4; d++) {
                char name[64], spec[64];
                snprintf(name, sizeof(name), "raw%d_%d.yuv", layouts[l], depths[d]);
                if (!CHECK(write_raw(name, layouts[l], depths[d]) == 0, "write %s", name))
                    continue;
                snprintf(a, sizeof(a), "-w 160 -h 90 -p %d -b %d -r %s -d %s -n --feature psnr "
                         "--json -o a.json", layouts[l], depths[d], name, name);
                rc = run(a);
                x = read_json("a.json");
                snprintf(spec, sizeof(spec), "160x90:yuv%dp%s", layouts[l],
                         depths[d] == 8 ? "" : depths[d] == 10 ? "10le" : depths[d] == 12 ? "12le"
                                                                                         : "16le");
                snprintf(a, sizeof(a), "--raw %s -r %s -d %s -n --feature psnr --json -o b.json",
                         spec, name, name);
                run(a);
                y = read_json("b.json");
                CHECK(rc == 0 && nb_frames(x) == FRAMES && same_scores(x, y) &&
                          metric(x, 0, "psnr_cb") > 0,
                      "[-w -h -p -b] -p %d -b %d: %d frames, the same as --raw %s (rc %d): %s",
                      layouts[l], depths[d], nb_frames(x), spec, rc, err);
                json_object_put(x);
                json_object_put(y);
            }
        snprintf(a, sizeof(a), "--width 160 --height 90 --pixel_format 420 --bitdepth 8 -r "
                 "raw420_8.yuv -d raw420_8.yuv -n --feature psnr --json -o c.json");
        rc = run(a);
        x = read_json("c.json");
        CHECK(rc == 0 && nb_frames(x) == FRAMES && metric(x, 0, "psnr_y") >= 60,
              "[--width --height --pixel_format --bitdepth] (rc %d): %s", rc, err);
        json_object_put(x);
    }
    /* -h: the height with a number, help without */
    rc = run("-h");
    {
        char *out = read_text("stdout.txt");
        CHECK(rc == 0 && out && strstr(out, "Usage: qgpu"), "[-h, --help] -h alone: help (rc %d)",
              rc);
        free(out);
    }
    rc = run("--help");
    {
        char *out = read_text("stdout.txt");
        CHECK(rc == 0 && out && strstr(out, "Usage: qgpu"), "[--help] help (rc %d)", rc);
        free(out);
    }
    rc = run("-h 90 -w 160 -p 420 -b 8 -r raw420_8.yuv -d raw420_8.yuv -n --feature psnr --json "
             "-o h.json");
    x = read_json("h.json");
    CHECK(rc == 0 && nb_frames(x) == FRAMES, "[-h] -h 90 is the height (rc %d): %s", rc, err);
    json_object_put(x);
}

static void rows_output(void)
{
    char a[4096];
    int rc;
    static const char *const fmts[4][3] = {{"--xml", "o.xml", "<VMAF"},
                                           {"--json", "o.json", "{"},
                                           {"--csv", "o.csv", "Frame,"},
                                           {"--sub", "o.sub", "{0}{1}frame: 0|"}};
    for (int i = 0; i < 4; i++) {
        char *t;
        snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 2 %s -o %s", ref, dis, fmts[i][0],
                 fmts[i][1]);
        rc = run(a);
        t = read_text(fmts[i][1]);
        CHECK(rc == 0 && t && !strncmp(t, fmts[i][2], strlen(fmts[i][2])) && !strstr(err, "warning"),
              "[-o/--output, %s] (rc %d): %s", fmts[i][0], rc, err);
        free(t);
    }
    /* the extension disagrees with the format: XML written, a warning */
    snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 2 -o x.json", ref, dis);
    rc = run(a);
    {
        char *t = read_text("x.json");
        CHECK(rc == 0 && t && !strncmp(t, "<VMAF", 5) &&
                  strstr(err, "qgpu: warning: -o x.json: the log is written as XML"),
              "[-o extension] x.json without --json: XML and a warning (rc %d): %s", rc, err);
        free(t);
    }
    snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 2 --csv -o x.xml", ref, dis);
    rc = run(a);
    CHECK(rc == 0 && strstr(err, "written as CSV, not XML"),
          "[-o extension] --csv -o x.xml: a warning (rc %d): %s", rc, err);
    /* -q: nothing on stderr */
    snprintf(a, sizeof(a), "-q -r %s -d %s --frame_cnt 2 -o q.xml", ref, dis);
    rc = run(a);
    CHECK(rc == 0 && !err[0], "[-q/--quiet] nothing on stderr (rc %d): %s", rc, err);
    /* -v/--version */
    rc = run("-v");
    {
        char *out = read_text("stdout.txt");
        CHECK(rc == 0 && out && !strncmp(out, "qgpu ", 5), "[-v/--version] -v (rc %d)", rc);
        free(out);
    }
    rc = run("--version");
    CHECK(rc == 0, "[-v/--version] --version (rc %d)", rc);
}

static void rows_metrics(void)
{
    char a[4096], list[4096];
    json_object *x, *y;
    int rc;
    /* --feature alone: libvmaf adds vmaf_v0.6.1; model features first, the
     * --feature ones next, the score last (libvmaf's order but for its
     * motion2/motion3, which it appends at the end) */
    snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 2 --feature psnr --json -o f.json", ref, dis);
    rc = run(a);
    x = read_json("f.json");
    names(x, list, sizeof(list));
    CHECK(rc == 0 && !strncmp(list, "integer_adm2 ", 13) && strstr(list, " psnr_y psnr_cb psnr_cr vmaf"),
          "[--feature] psnr alone: vmaf_v0.6.1 too, its features first (rc %d): %s", rc, list);
    json_object_put(x);
    /* -n/--no_prediction: the feature only */
    snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 2 -n --feature psnr --json -o n.json", ref,
             dis);
    rc = run(a);
    x = read_json("n.json");
    names(x, list, sizeof(list));
    CHECK(rc == 0 && !strcmp(list, "psnr_y psnr_cb psnr_cr"), "[-n/--no_prediction] (rc %d): %s",
          rc, list);
    json_object_put(x);
    snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 2 --no_prediction --feature psnr --json -o "
             "n2.json", ref, dis);
    rc = run(a);
    x = read_json("n2.json");
    names(x, list, sizeof(list));
    CHECK(rc == 0 && !strcmp(list, "psnr_y psnr_cb psnr_cr"), "[-n/--no_prediction] long (rc %d)",
          rc);
    json_object_put(x);
    /* -m/--model: version=, name= */
    snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 2 --model version=vmaf_v0.6.1:name=mine "
             "--json -o m.json", ref, dis);
    rc = run(a);
    x = read_json("m.json");
    CHECK(rc == 0 && metric(x, 0, "mine") > 0 && isnan(metric(x, 0, "vmaf")),
          "[-m/--model] name= (rc %d): %s", rc, err);
    json_object_put(x);
    /* --threads, --cpumask, --gpumask: accepted, the same scores */
    snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 3 --json -o t0.json", ref, dis);
    run(a);
    x = read_json("t0.json");
    snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 3 --threads 8 --cpumask 0xff --gpumask 1 "
             "--json -o t1.json", ref, dis);
    rc = run(a);
    y = read_json("t1.json");
    CHECK(rc == 0 && same_scores(x, y), "[--threads, --cpumask, --gpumask] accepted, same scores "
          "(rc %d): %s", rc, err);
    json_object_put(x);
    json_object_put(y);
}

static void rows_frames(void)
{
    char a[4096];
    json_object *x, *y;
    int rc, ok, n;
    /* --frame_cnt N; 0: every frame, as libvmaf */
    n = psnr_frames("--frame_cnt 7", "fc.json");
    CHECK(n == 7, "[--frame_cnt] 7 (%d): %s", n, err);
    n = psnr_frames("--frame_cnt 0", "fc0.json");
    CHECK(n == 48, "[--frame_cnt] 0 is every frame (%d): %s", n, err);
    /* --frame_skip_ref / --frame_skip_dist: the reference against itself,
     * skipped by the same count: identical pairs; by different counts: not */
    snprintf(a, sizeof(a), "-r %s -d %s -n --feature psnr --frame_skip_ref 3 --frame_skip_dist 3 "
             "--json -o sk.json", ref, ref);
    rc = run(a);
    x = read_json("sk.json");
    CHECK(rc == 0 && nb_frames(x) == 45 && metric(x, 0, "psnr_y") >= 60,
          "[--frame_skip_ref, --frame_skip_dist] same skips: 45 identical pairs (rc %d, %d)", rc,
          nb_frames(x));
    json_object_put(x);
    snprintf(a, sizeof(a), "-r %s -d %s -n --feature psnr --frame_skip_ref 3 --json -o sk2.json",
             ref, ref);
    rc = run(a);
    x = read_json("sk2.json");
    CHECK(rc == 0 && nb_frames(x) == 45 && metric(x, 0, "psnr_y") < 60,
          "[--frame_skip_ref] reference frame 3 against distorted frame 0 (rc %d)", rc);
    json_object_put(x);
    /* --subsample N: frames 0, N, 2N... logged, pooled over them; every
     * frame still computed, so temporal features (motion, and VMAF through
     * it) have their frame-to-frame values, as libvmaf's temporal
     * extractors (run on every frame) give */
    snprintf(a, sizeof(a), "-r %s -d %s --json -o all.json", ref, dis);
    run(a);
    x = read_json("all.json");
    snprintf(a, sizeof(a), "-r %s -d %s --subsample 5 --json -o sub.json", ref, dis);
    rc = run(a);
    y = read_json("sub.json");
    ok = rc == 0 && nb_frames(y) == 10;
    {
        double sum = 0.0, hsum = 0.0;
        for (int i = 0; ok && i < 10; i++) {
            double v = metric(x, 5 * i, "vmaf");
            ok = frame_num(y, i) == 5 * i && metric(y, i, "vmaf") == v &&
                 metric(y, i, "integer_motion2") == metric(x, 5 * i, "integer_motion2");
            sum += v;
            hsum += 1.0 / (v + 1.0);
        }
        CHECK(ok, "[--subsample] frames 0, 5 .. 45, the values of the full run (rc %d)", rc);
        CHECK(fabs(pooled(y, "vmaf", "mean") - sum / 10) < 2e-6 &&
                  fabs(pooled(y, "vmaf", "harmonic_mean") - (10 / hsum - 1)) < 2e-6,
              "[--subsample] pooled over the logged frames: mean %f (%f)",
              pooled(y, "vmaf", "mean"), sum / 10);
    }
    json_object_put(x);
    json_object_put(y);
    n = psnr_frames("--subsample 0", "s0.json");
    CHECK(n == 48, "[--subsample] 0 is every frame (%d): %s", n, err);
}

/* fps, as libvmaf: frames read / processor time of the scoring. */
static void row_fps(void)
{
    char a[4096];
    struct rusage before, after;
    json_object *x, *v;
    double cpu, fps;
    int rc;
    getrusage(RUSAGE_CHILDREN, &before);
    snprintf(a, sizeof(a), "-r %s -d %s --subsample 4 --json -o fps.json", ref, dis);
    rc = run(a);
    getrusage(RUSAGE_CHILDREN, &after);
    cpu = (after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
          (after.ru_utime.tv_usec - before.ru_utime.tv_usec) * 1e-6 +
          (after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
          (after.ru_stime.tv_usec - before.ru_stime.tv_usec) * 1e-6;
    x = read_json("fps.json");
    fps = x && json_object_object_get_ex(x, "fps", &v) ? json_object_get_double(v) : -1;
    /* all 48 frames read count (not the 12 logged); the time is part of
     * the process's CPU time, so the fps is at least 48 / all of it */
    CHECK(rc == 0 && fps >= 48 / cpu * 0.99 && fps > 12 / cpu,
          "[fps] %.2f >= 48 frames / %.3f s of CPU (rc %d)", fps, cpu, rc);
    json_object_put(x);
}

/* The CTC presets: each equal to the explicit command line libvmaf's
 * tools/cli_parse.c makes of it. */
static void rows_ctc(void)
{
    static const char *const aom = "-m version=vmaf_v0.6.1:name=vmaf -m "
                                   "version=vmaf_v0.6.1neg:name=vmaf_neg --feature "
                                   "psnr=reduced_hbd_peak=true:enable_apsnr=true:min_sse=0.5 "
                                   "--feature ciede --feature float_ssim=enable_db=true:clip_db=true "
                                   "--feature float_ms_ssim=enable_db=true:clip_db=true --feature "
                                   "psnr_hvs";
    char a[4096], list[4096];
    json_object *x, *y, *agg;
    int rc;
    snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 2 %s --json -o aom1x.json", sref, sdis, aom);
    rc = run(a);
    x = read_json("aom1x.json");
    CHECK(rc == 0 && nb_frames(x) == 2, "aom v1.0 explicitly (rc %d): %s", rc, err);
    for (int v = 1; v <= 6; v++) {
        char out[32];
        snprintf(out, sizeof(out), "aom%d.json", v);
        if (v == 3) { /* v3.0 adds cambi */
            json_object_put(x);
            snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 2 %s --feature cambi --json -o "
                     "aom3x.json", sref, sdis, aom);
            run(a);
            x = read_json("aom3x.json");
        }
        snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 2 --aom_ctc v%d.0 --json -o %s", sref,
                 sdis, v, out);
        rc = run(a);
        y = read_json(out);
        names(y, list, sizeof(list));
        CHECK(rc == 0 && same_scores(x, y) && metric(y, 0, "vmaf_neg") > 0 &&
                  (v < 3 || metric(y, 0, "cambi") >= 0) && (v >= 3 || !strstr(list, "cambi")) &&
                  json_object_object_get_ex(y, "aggregate_metrics", &agg) &&
                  json_object_object_get_ex(agg, "apsnr_y", NULL),
              "[--aom_ctc v%d.0] libvmaf's models and features (rc %d): %s / %s", v, rc, list,
              err);
        json_object_put(y);
    }
    json_object_put(x);
    /* v6.0: inputs of different bit depths, asked for: no warning */
    {
        char s8[1300];
        snprintf(s8, sizeof(s8), "%s/sparks8.y4m", dir);
        if (CHECK(write_sparks8("sparks8.y4m") == 0, "write sparks8.y4m")) {
            snprintf(a, sizeof(a), "-q -r %s -d %s --frame_cnt 2 --aom_ctc v6.0 -o d6.xml", s8,
                     sdis);
            rc = run(a);
            CHECK(rc == 0 && !err[0], "[--aom_ctc v6.0] 8-bit against 10-bit: no warning (rc %d): "
                  "%s", rc, err);
            snprintf(a, sizeof(a), "-q -r %s -d %s --frame_cnt 2 --aom_ctc v5.0 -o d5.xml", s8,
                     sdis);
            rc = run(a);
            CHECK(rc == 0 && strstr(err, "warning: bit depths differ"),
                  "[--aom_ctc v6.0] v5.0 warns (rc %d): %s", rc, err);
        }
    }
    /* --nflx_ctc v1.0: needs vmaf_4k_v0.6.1neg; scored when the build has
     * it, refused with the model's name when it has not */
    rc = run("--list-features");
    {
        char *out = read_text("stdout.txt");
        int have = out && strstr(out, "vmaf_4k_v0.6.1neg\n");
        free(out);
        snprintf(a, sizeof(a), "-r %s -d %s --frame_cnt 2 --nflx_ctc v1.0 --json -o nflx.json",
                 sref, sdis);
        rc = run(a);
        x = read_json("nflx.json");
        if (have)
            CHECK(rc == 0 && metric(x, 0, "vmaf_neg") > 0 && metric(x, 0, "cambi") >= 0,
                  "[--nflx_ctc v1.0] scored (rc %d): %s", rc, err);
        else
            CHECK(rc == 2 && strstr(err, "needs the built-in model vmaf_4k_v0.6.1neg"),
                  "[--nflx_ctc v1.0] refused, naming the missing model (rc %d): %s", rc, err);
        json_object_put(x);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!tool_test_setup(argv[0], tool, sizeof(tool), fate, sizeof(fate), dir))
        return test_finish();
    snprintf(ref, sizeof(ref), "%s/%s", fate, REF);
    snprintf(dis, sizeof(dis), "%s/%s", fate, DIS);
    snprintf(sref, sizeof(sref), "%s/%s", fate, SPARKS_REF);
    snprintf(sdis, sizeof(sdis), "%s/%s", fate, SPARKS_DIS);
    rows_inputs();
    rows_output();
    rows_metrics();
    rows_frames();
    row_fps();
    rows_ctc();
    tool_test_cleanup(dir);
    return test_finish();
}
