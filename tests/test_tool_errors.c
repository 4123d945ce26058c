/*
 * The qgpu tool on bad input: every row of tests/tool_bad_inputs.txt runs
 * the built binary and checks its exit status and its one-line message
 * (the table's header says how), with a time limit so that a hang fails
 * instead of blocking. The inputs are written here, into a temporary
 * directory, from fate/ files and libavformat/libavcodec (no ffmpeg CLI):
 * a text file, an empty file, an audio-only WAV, a y4m header without
 * frames, truncated y4m files, a raw file shorter than one frame, raw NV16
 * (a format swscale cannot read), a copy of a fate .mkv with one packet
 * overwritten mid-stream, and MJPEG clips with 1, 120 and 250 garbage
 * packets. Afterwards: the decoding-error counts in the JSON logs of the
 * damaged clips, the pairs after the lost frame still aligned by
 * presentation time, the warnings rate-limited, and Ctrl-C (SIGINT) on an
 * endless input: exit 130 and a complete log.
 *
 * The binary is found as $QGPU_BUILD/qgpu, else next to this test's
 * directory (BUILD/tests/test_tool_errors -> BUILD/qgpu); the device
 * out-of-memory row preloads BUILD/tests/tool_oom_hook.so.
 */
#include <json-c/json.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "tool_run.h"

#define LIMIT_SECONDS 60
#define REF_Y4M "refs/nf_src01_160x90_48f.y4m"
#define CORRUPT_REF "refs/seeking_480x320_422_f000-019.mkv"
#define CORRUPT_SRC "pairs/seeking_480x320_422_x264_crf28/dis.mkv"

static char tool[1024], hook[1024], fate[1024];
static char dir[] = "/tmp/qgpu_test_tool_errors.XXXXXX";
static char out_err[65536];
static int have_mjpeg;

/* ------------------------------------------------------------ helpers */

/* The tool (tool_find()) and the hook next to it: BUILD/tests/. */
static int find_binaries(const char *argv0)
{
    char tmp[1024];
    if (!tool_find(argv0, tool, sizeof(tool)))
        return 0;
    snprintf(tmp, sizeof(tmp), "%s", tool);
    snprintf(hook, sizeof(hook), "%s/tests/tool_oom_hook.so", dirname(tmp));
    if (access(hook, R_OK))
        hook[0] = 0;
    return 1;
}

static int write_file(const char *name, const void *data, size_t size)
{
    char path[1200];
    FILE *f;
    size_t n;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (!f)
        return -1;
    n = size ? fwrite(data, 1, size, f) : 0;
    return fclose(f) == 0 && n == size ? 0 : -1;
}

/* The whole of a fate/ file, malloc'ed. */
static uint8_t *read_fate(const char *rel, size_t *size)
{
    char path[1200];
    uint8_t *buf = NULL;
    long n;
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", fate, rel);
    f = fopen(path, "rb");
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *size = (size_t)n;
    }
    fclose(f);
    return buf;
}

/* y4m inputs: the header alone, a header with part of one frame, and two
 * whole frames followed by 3000 bytes of a third. */
static int write_y4m_inputs(void)
{
    size_t size, header, frame = 6 + 160 * 90 * 3 / 2;
    uint8_t *y4m = read_fate(REF_Y4M, &size);
    const uint8_t *nl = y4m ? memchr(y4m, '\n', size) : NULL;
    int ret = -1;
    if (nl) {
        header = (size_t)(nl - y4m) + 1;
        if (size >= header + 3 * frame && !memcmp(y4m + header, "FRAME\n", 6) &&
            write_file("header.y4m", y4m, header) == 0 &&
            write_file("truncated.y4m", y4m, header + frame / 2) == 0 &&
            write_file("truncated2.y4m", y4m, header + 2 * frame + 3000) == 0 &&
            write_file("unreadable.y4m", y4m, header + frame) == 0)
            ret = 0;
    }
    free(y4m);
    return ret;
}

/* Packet i of the WAV: 400 samples of silence. */
static void silence(void *opaque, int i, AVPacket *pkt, const AVStream *st)
{
    memset(pkt->data, 0, (size_t)pkt->size);
    pkt->pts = pkt->dts = i * 400;
}

/* An audio-only WAV: 0.2 s of 8 kHz 16-bit silence. */
static int write_wav(const char *name)
{
    AVFormatContext *oc = NULL;
    AVStream *st;
    char path[1200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (avformat_alloc_output_context2(&oc, NULL, "wav", path) < 0)
        return -1;
    st = avformat_new_stream(oc, NULL);
    st->codecpar->codec_type = AVMEDIA_TYPE_AUDIO;
    st->codecpar->codec_id = AV_CODEC_ID_PCM_S16LE;
    st->codecpar->sample_rate = 8000;
    av_channel_layout_default(&st->codecpar->ch_layout, 1);
    st->codecpar->bits_per_coded_sample = 16;
    st->codecpar->block_align = 2;
    st->time_base = (AVRational){1, 8000};
    return tool_write_packets(oc, path, 4, 800, silence, NULL);
}

/* A copy of a fate clip whose 6th video packet (in file order; not a
 * keyframe) has all but its first and last 50 bytes overwritten. */
static int write_corrupt_copy(const char *rel, const char *name)
{
    AVFormatContext *ic = NULL;
    AVPacket *pkt = av_packet_alloc();
    char path[1200];
    int64_t pos = -1;
    int size = 0, index = 0, ret = -1;
    size_t len;
    uint8_t *data;
    snprintf(path, sizeof(path), "%s/%s", fate, rel);
    if (!pkt || avformat_open_input(&ic, path, NULL, NULL) < 0) {
        av_packet_free(&pkt);
        return -1;
    }
    while (av_read_frame(ic, pkt) >= 0) {
        int video = ic->streams[pkt->stream_index]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO;
        if (video && index++ == 5) {
            pos = pkt->pos;
            size = pkt->size;
        }
        av_packet_unref(pkt);
    }
    avformat_close_input(&ic);
    av_packet_free(&pkt);
    data = read_fate(rel, &len);
    if (data && pos > 0 && size > 200 && (size_t)(pos + size) <= len) {
        memset(data + pos + 50, 0xAA, (size_t)size - 100);
        ret = write_file(name, data, len);
    }
    free(data);
    return ret;
}

/* n frames of MJPEG (intra only: a damaged frame harms no other) at 25 fps
 * in NUT; the packets of frames bad_from..bad_to are replaced by bytes no
 * decoder takes for a JPEG image. Returns 1 when there is no MJPEG
 * encoder. */
static int write_mjpeg(const char *name, int n, int bad_from, int bad_to)
{
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
    AVCodecContext *enc;
    char path[1200];
    int ret;
    if (!codec)
        return 1;
    enc = avcodec_alloc_context3(codec);
    enc->width = 64;
    enc->height = 48;
    enc->pix_fmt = AV_PIX_FMT_YUVJ420P;
    enc->time_base = (AVRational){1, 25};
    enc->flags |= AV_CODEC_FLAG_QSCALE;
    enc->global_quality = FF_QP2LAMBDA * 2;
    if (avcodec_open2(enc, codec, NULL) < 0) {
        avcodec_free_context(&enc);
        return 1;
    }
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    ret = tool_encode_nut(path, enc, enc->time_base, n, 0.0, bad_from, bad_to);
    avcodec_free_context(&enc);
    return ret;
}

static void write_inputs(void)
{
    static const char text[] = "This is a text file, not a video.\n";
    static const char notmodel[] = "{\"name\": \"not a model\", \"values\": [1, 2, 3]}\n";
    uint8_t nv16[2 * 16 * 16 * 2];
    char path[1200];
    int ret;
    for (size_t i = 0; i < sizeof(nv16); i++)
        nv16[i] = (uint8_t)(i * 7);
    CHECK(write_file("text.txt", text, sizeof(text) - 1) == 0, "write text.txt");
    CHECK(write_file("empty.mp4", "", 0) == 0, "write empty.mp4");
    CHECK(write_file("short.yuv", nv16, 16) == 0, "write short.yuv");
    CHECK(write_file("nv16.yuv", nv16, sizeof(nv16)) == 0, "write nv16.yuv");
    CHECK(write_file("notmodel.json", notmodel, sizeof(notmodel) - 1) == 0,
          "write notmodel.json");
    CHECK(write_y4m_inputs() == 0, "write the y4m inputs from fate/%s", REF_Y4M);
    snprintf(path, sizeof(path), "%s/unreadable.y4m", dir);
    CHECK(chmod(path, 0) == 0, "chmod 000 unreadable.y4m");
    snprintf(path, sizeof(path), "%s/no-vendors", dir);
    CHECK(mkdir(path, 0755) == 0, "mkdir no-vendors");
    CHECK(write_wav("audio.wav") == 0, "write audio.wav");
    CHECK(write_corrupt_copy(CORRUPT_SRC, "corrupt.mkv") == 0, "write corrupt.mkv from fate/%s",
          CORRUPT_SRC);
    ret = write_mjpeg("mjpeg.nut", 12, -1, -1);
    have_mjpeg = ret != 1;
    if (have_mjpeg) {
        CHECK(ret == 0, "write mjpeg.nut");
        CHECK(write_mjpeg("mjpeg_corrupt.nut", 12, 5, 5) == 0, "write mjpeg_corrupt.nut");
        /* 120 bad packets: warnings for the 1st, 2nd, 3rd and 100th only */
        CHECK(write_mjpeg("mjpeg130.nut", 130, -1, -1) == 0, "write mjpeg130.nut");
        CHECK(write_mjpeg("mjpeg_many.nut", 130, 5, 124) == 0, "write mjpeg_many.nut");
        /* 250 in a row: given up */
        CHECK(write_mjpeg("mjpeg_dead.nut", 260, 5, 254) == 0, "write mjpeg_dead.nut");
    }
}

/* ---------------------------------------------------------- the table */

typedef struct Row {
    char what[256];
    int status;
    char args[2048];
    char message[512];
    char flags[512];
} Row;

static char *trim(char *s)
{
    char *e;
    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = 0;
    return s;
}

/* Copies src to dst with @FATE@, @REF@ and @DIR@ replaced. */
static void expand(char *dst, size_t len, const char *src)
{
    size_t n = 0;
    while (*src && n + 1 < len) {
        const char *with = NULL;
        size_t skip = 0;
        char ref[1200];
        if (!strncmp(src, "@FATE@", 6)) {
            with = fate;
            skip = 6;
        } else if (!strncmp(src, "@REF@", 5)) {
            snprintf(ref, sizeof(ref), "%s/%s", fate, REF_Y4M);
            with = ref;
            skip = 5;
        } else if (!strncmp(src, "@DIR@", 5)) {
            with = dir;
            skip = 5;
        }
        if (with) {
            n += (size_t)snprintf(dst + n, len - n, "%s", with);
            if (n >= len)
                n = len - 1;
            src += skip;
        } else {
            dst[n++] = *src++;
        }
    }
    dst[n] = 0;
}

/* "a | b | c | d [| e]" -> row; 0 on success. */
static int parse_row(char *line, Row *row)
{
    char *field[5] = {0};
    int n = 0;
    char *s = line;
    while (n < 5) {
        char *bar = strstr(s, " | ");
        field[n++] = s;
        if (!bar)
            break;
        *bar = 0;
        s = bar + 3;
    }
    if (n < 4)
        return -1;
    snprintf(row->what, sizeof(row->what), "%s", trim(field[0]));
    row->status = atoi(trim(field[1]));
    expand(row->args, sizeof(row->args), trim(field[2]));
    snprintf(row->message, sizeof(row->message), "%s", trim(field[3]));
    expand(row->flags, sizeof(row->flags), n > 4 ? trim(field[4]) : "");
    return 0;
}

/* Runs `qgpu -q ARGS` in dir with env prepended, under the time limit;
 * stderr in out_err. Returns the exit status, or 1000 + signal when it
 * died of one. */
static int run_tool(const char *env, const char *args)
{
    char quiet[4096];
    snprintf(quiet, sizeof(quiet), "-q %s", args);
    return tool_run(tool, dir, env, LIMIT_SECONDS, quiet, out_err, sizeof(out_err));
}

/* Checks stderr as the table's header says. */
static int stderr_ok(const Row *row, char *why, size_t len)
{
    char copy[sizeof(out_err)];
    char *lines[512];
    int n = 0;
    snprintf(copy, sizeof(copy), "%s", out_err);
    for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l && n < 512;
         l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    if (n == 0) {
        snprintf(why, len, "nothing on stderr");
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (strncmp(lines[i], "qgpu: ", 6)) {
            snprintf(why, len, "a line not from qgpu: '%s'", lines[i]);
            return 0;
        }
    if (row->status == 0) {
        for (int i = 0; i < n; i++)
            if (strstr(lines[i], row->message))
                return 1;
        snprintf(why, len, "no line with '%s'", row->message);
        return 0;
    }
    for (int i = 0; i + 1 < n; i++)
        if (strncmp(lines[i], "qgpu: warning: ", 15)) {
            snprintf(why, len, "more than one line of error: '%s'", lines[i]);
            return 0;
        }
    if (!strstr(lines[n - 1], row->message)) {
        snprintf(why, len, "last line lacks '%s'", row->message);
        return 0;
    }
    return 1;
}

static void run_table(void)
{
    char path[1200], line[4096], env[2048], why[1024];
    int rows = 0, skipped = 0;
    FILE *f = fopen(test_src_path("tests/tool_bad_inputs.txt", path, sizeof(path)), "r");
    if (!CHECK(f != NULL, "tests/tool_bad_inputs.txt"))
        return;
    while (fgets(line, sizeof(line), f)) {
        Row row;
        int rc;
        char *t = trim(line);
        if (!*t || *t == '#')
            continue;
        if (!CHECK(parse_row(t, &row) == 0, "table row: %s", t))
            continue;
        rows++;
        env[0] = 0;
        if (strstr(row.flags, "noroot") && geteuid() == 0) {
            printf("skip: %s (running as root: root reads any file)\n", row.what);
            skipped++;
            continue;
        }
        if (strstr(row.flags, "mjpeg") && !have_mjpeg) {
            printf("skip: %s (no MJPEG encoder)\n", row.what);
            skipped++;
            continue;
        }
        if (strstr(row.flags, "oom")) {
            if (!hook[0]) {
                printf("skip: %s (no tests/tool_oom_hook.so next to the test)\n", row.what);
                skipped++;
                continue;
            }
            /* the preloaded hook is not the first library of a sanitizer build */
            const char *asan = getenv("ASAN_OPTIONS");
            snprintf(env, sizeof(env), "LD_PRELOAD=%s QGPU_TEST_DEVICE_MEMORY=4096 "
                     "ASAN_OPTIONS=%s%sverify_asan_link_order=0", hook, asan ? asan : "",
                     asan && *asan ? ":" : "");
        }
        if (!strncmp(row.flags, "env:", 4))
            snprintf(env, sizeof(env), "%s", row.flags + 4);
        rc = run_tool(env, row.args);
        CHECK(rc != 124 && rc != 137 && rc < 1000,
              "%s: no hang, no crash (%s): %s", row.what,
              rc >= 1000 ? "killed by a signal" : rc == 124 || rc == 137 ? "timed out" : "ok",
              out_err);
        why[0] = 0;
        CHECK(rc == row.status && stderr_ok(&row, why, sizeof(why)),
              "%s: exit %d (expected %d), message '%s' %s: qgpu -q %s\n%s", row.what, rc,
              row.status, row.message, why, row.args, out_err);
    }
    fclose(f);
    printf("%d table rows, %d skipped\n", rows, skipped);
    CHECK(rows >= 20, "at least 20 rows in the table (%d)", rows);
}

/* ------------------------------------------- after the table: the logs */

static json_object *read_json(const char *name)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return json_object_from_file(path);
}

static int json_int(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_int(v) : -1;
}

/* psnr_y of every logged frame; returns their number. */
static int json_psnr(json_object *root, double *psnr, int max)
{
    json_object *frames, *fr, *m, *v;
    int n;
    if (!json_object_object_get_ex(root, "frames", &frames))
        return -1;
    n = (int)json_object_array_length(frames);
    for (int i = 0; i < n && i < max; i++) {
        fr = json_object_array_get_idx(frames, i);
        psnr[i] = json_object_object_get_ex(fr, "metrics", &m) &&
                          json_object_object_get_ex(m, "psnr_y", &v)
                      ? json_object_get_double(v)
                      : NAN;
    }
    return n;
}

static void check_logs(void)
{
    double psnr[64];
    json_object *root = read_json("corrupt.json");
    int n;
    /* one x264 packet overwritten: the frame decodes with errors and is
     * left out, with the reference frame of its time */
    if (CHECK(root != NULL, "corrupt.json written")) {
        n = json_psnr(root, psnr, 64);
        CHECK(json_int(root, "decode_errors") >= 1 && json_int(root, "skipped_frames") >= 1,
              "corrupt.mkv: decode_errors %d, skipped_frames %d in the log",
              json_int(root, "decode_errors"), json_int(root, "skipped_frames"));
        CHECK(n >= 15 && n < 20, "corrupt.mkv: 15..19 of 20 frames scored (%d)", n);
        json_object_put(root);
    }
    if (!have_mjpeg) {
        printf("skip: MJPEG checks (no MJPEG encoder)\n");
        return;
    }
    /* intra-only: the pairs around the lost frame 5 are still the same
     * pictures, so aligned by presentation time every pair is identical
     * (60 dB); paired by count, frames 6..11 would meet frames 5..10 */
    root = read_json("mjpeg.json");
    if (CHECK(root != NULL, "mjpeg.json written")) {
        int same = 0;
        n = json_psnr(root, psnr, 64);
        for (int i = 0; i < n && i < 64; i++)
            same += psnr[i] >= 60.0 - 1e-9;
        CHECK(n == 11 && same == 11, "mjpeg: 11 identical pairs after the lost frame (%d of %d)",
              same, n);
        CHECK(json_int(root, "decode_errors") == 1 && json_int(root, "skipped_frames") == 1,
              "mjpeg: decode_errors 1, skipped_frames 1 (the reference frame without a "
              "partner): %d, %d", json_int(root, "decode_errors"),
              json_int(root, "skipped_frames"));
        json_object_put(root);
    }
    /* many errors: rate-limited warnings (1st, 2nd, 3rd, 100th), all counted */
    {
        int rc = run_tool("", "-r mjpeg130.nut -d mjpeg_many.nut --feature psnr -o many.json");
        int lines = 0;
        for (const char *l = out_err; (l = strstr(l, "qgpu: warning: distorted ")); l++)
            lines++;
        root = read_json("many.json");
        n = root ? json_psnr(root, psnr, 64) : -1;
        CHECK(rc == 0 && lines == 4 && strstr(out_err, "(100 decoding errors so far)") &&
                  root && json_int(root, "decode_errors") == 120 && n == 10,
              "120 bad packets: 4 warning lines (%d), 120 counted, 10 pairs (%d) (rc %d): %s",
              lines, n, rc, out_err);
        json_object_put(root);
    }
    /* an intact input logs zero counts */
    CHECK(run_tool("", "-r mjpeg.nut -d mjpeg.nut --feature psnr -o clean.json") == 0,
          "clean run: %s", out_err);
    root = read_json("clean.json");
    CHECK(root && json_int(root, "decode_errors") == 0 && json_int(root, "skipped_frames") == 0,
          "clean log: decode_errors 0, skipped_frames 0");
    json_object_put(root);
}

/* Ctrl-C on an endless input (/dev/zero as raw video): exit 130 within the
 * limit and a complete JSON log of the frames scored so far. */
static void check_sigint(void)
{
    char path[1200], log[1200];
    pid_t pid;
    int st = 0, rc = -1;
    json_object *root;
    snprintf(path, sizeof(path), "%s/sigint.err", dir);
    snprintf(log, sizeof(log), "%s/sigint.json", dir);
    pid = fork();
    if (pid == 0) {
        if (!freopen(path, "w", stderr))
            _exit(99);
        execl(tool, tool, "-q", "--raw", "32x32:gray", "-r", "/dev/zero", "-d", "/dev/zero",
              "--feature", "psnr", "-o", log, (char *)NULL);
        _exit(98);
    }
    if (!CHECK(pid > 0, "fork"))
        return;
    sleep(2);
    kill(pid, SIGINT);
    for (int i = 0; i < LIMIT_SECONDS * 10; i++) {
        struct timespec ts = {0, 100000000};
        if (waitpid(pid, &st, WNOHANG) == pid) {
            rc = WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
            break;
        }
        nanosleep(&ts, NULL);
    }
    if (rc == -1) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    root = json_object_from_file(log);
    CHECK(rc == 130, "SIGINT: exit 130 (%d)", rc);
    CHECK(root && json_psnr(root, (double[1]){0}, 1) > 0 && json_int(root, "decode_errors") == 0,
          "SIGINT: a complete JSON log with the frames scored");
    json_object_put(root);
}

int main(int argc, char **argv)
{
    char cmd[1200];
    (void)argc;
    if (!CHECK(find_binaries(argv[0]), "the qgpu binary (set QGPU_BUILD)"))
        return test_finish();
    {
        char rel[1024];
        if (!CHECK(realpath(test_src_path("fate", rel, sizeof(rel)), fate) &&
                       access(fate, R_OK) == 0,
                   "the fate/ directory (set QGPU_SRC to the source tree)"))
            return test_finish();
    }
    if (!CHECK(mkdtemp(dir) != NULL, "temporary directory"))
        return test_finish();
    write_inputs();
    run_table();
    check_logs();
    check_sigint();
    snprintf(cmd, sizeof(cmd), "chmod -R u+rwx %s; rm -rf %s", dir, dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", dir);
    return test_finish();
}
