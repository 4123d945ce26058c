/*
 * The qgpu tool on bad input and faults: every row of
 * tests/tool_bad_inputs.txt runs the built binary and checks its exit
 * status, its one-line message and what it left behind (the log absent,
 * unchanged, or a valid JSON/XML/CSV/SUB log or JSON-lines stream); the
 * table's header says how. Rows run four at a time, each under a time
 * limit, so that a hang fails instead of blocking.
 *
 * The inputs are written here, into a temporary directory, from fate/
 * files and libavformat/libavcodec (no ffmpeg CLI): text, empty, audio-only
 * and truncated files, raw NV16, y4m files with impossible or odd headers
 * (every field), 10-bit, full-range, interlaced, MPEG-2-sited and gray
 * copies of a y4m, a copy of a fate .mkv with one packet overwritten, MJPEG
 * clips with garbage packets or a size or pixel format change midway, an
 * MP4 with its index at the end (for a pipe), names with ':', spaces,
 * non-ASCII, '%', and paths longer than PATH_MAX, links to an input, and
 * FIFOs. Afterwards: the decoding-error counts in the JSON logs, the pairs
 * after a lost frame still aligned by presentation time, rate-limited
 * warnings, range conversion that restores the samples, and a corrupt or
 * FIFO kernel-cache entry that does not stop a run.
 *
 * The binary is found as $QGPU_BUILD/qgpu, else next to this test's
 * directory (BUILD/tests/test_tool_errors -> BUILD/qgpu); the device
 * out-of-memory row preloads BUILD/tests/tool_oom_hook.so.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "tool_run.h"

#define LIMIT_SECONDS 60
#define JOBS 4
#define MAX_ROWS 400
#define REF_Y4M "refs/nf_src01_160x90_48f.y4m"
#define DIS_Y4M "pairs/nf_src01_160x90_nfdis/dis.y4m"
#define CORRUPT_SRC "pairs/seeking_480x320_422_x264_crf28/dis.mkv"
#define Y4M_W 160
#define Y4M_H 90
#define Y4M_FRAME (Y4M_W * Y4M_H * 3 / 2)

static char tool[1024], hook[1024], fate[1024];
static char dir[] = "/tmp/qgpu_test_tool_errors.XXXXXX";
static char long_ok[4096], long_bad[8192]; /* relative paths: ~2 KB (exists), > PATH_MAX */
static char long_env[8192];
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

static void dir_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static int write_file(const char *name, const void *data, size_t size)
{
    char path[1200];
    FILE *f;
    size_t n;
    dir_path(path, sizeof(path), name);
    f = fopen(path, "wb");
    if (!f)
        return -1;
    n = size ? fwrite(data, 1, size, f) : 0;
    return fclose(f) == 0 && n == size ? 0 : -1;
}

/* The whole of a file, malloc'ed (NUL-terminated, size without it). */
static uint8_t *read_all(const char *path, size_t *size)
{
    uint8_t *buf = NULL;
    long n;
    FILE *f = fopen(path, "rb");
    *size = 0;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        if (buf) {
            buf[n] = 0;
            *size = (size_t)n;
        }
    }
    fclose(f);
    return buf;
}

static uint8_t *read_fate(const char *rel, size_t *size)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/%s", fate, rel);
    return read_all(path, size);
}

/* ------------------------------------------------------- y4m variants */

static uint8_t *ref_y4m;
static size_t ref_size, ref_header;

/* header line (without its newline) + REF's first frames (their "FRAME\n"
 * and samples). */
static int write_y4m(const char *name, const char *header, int frames)
{
    size_t hlen = strlen(header), body = (size_t)frames * (6 + Y4M_FRAME);
    uint8_t *text = malloc(hlen + 1 + body);
    int ret = -1;
    if (text) {
        memcpy(text, header, hlen);
        text[hlen] = '\n';
        memcpy(text + hlen + 1, ref_y4m + ref_header, body);
        ret = write_file(name, text, hlen + 1 + body);
    }
    free(text);
    return ret;
}

/* The samples of REF's frame i, plane p (0 luma). */
static const uint8_t *ref_plane(int i, int p)
{
    const uint8_t *frame = ref_y4m + ref_header + (size_t)i * (6 + Y4M_FRAME) + 6;
    return frame + (p == 0 ? 0 : p == 1 ? Y4M_W * Y4M_H : Y4M_W * Y4M_H * 5 / 4);
}

/* REF's frames transformed sample by sample: 10-bit (<< 2), full range
 * (limited values expanded), gray (luma only). */
enum Variant { V10BIT, VFULL, VGRAY };

static int write_y4m_variant(const char *name, const char *header, int frames, enum Variant v)
{
    char path[1200];
    FILE *f;
    int ok = 1;
    dir_path(path, sizeof(path), name);
    f = fopen(path, "wb");
    if (!f)
        return -1;
    ok = fprintf(f, "%s\n", header) > 0;
    for (int i = 0; i < frames && ok; i++) {
        ok = fwrite("FRAME\n", 1, 6, f) == 6;
        for (int p = 0; p < (v == VGRAY ? 1 : 3) && ok; p++) {
            const uint8_t *s = ref_plane(i, p);
            int n = p ? Y4M_W * Y4M_H / 4 : Y4M_W * Y4M_H;
            for (int k = 0; k < n && ok; k++) {
                if (v == V10BIT) {
                    uint16_t x = (uint16_t)(s[k] << 2);
                    ok = fwrite(&x, 2, 1, f) == 1;
                } else {
                    int x = s[k];
                    if (v == VFULL) /* limited -> full: 16..235 -> 0..255, 16..240 -> 0..255 */
                        x = p ? (int)lrint((x - 128) * 255.0 / 224.0 + 128)
                              : (int)lrint((x - 16) * 255.0 / 219.0);
                    x = x < 0 ? 0 : x > 255 ? 255 : x;
                    ok = fputc(x, f) != EOF;
                }
            }
        }
    }
    return fclose(f) == 0 && ok ? 0 : -1;
}

#define H "W160 H90"
/* name, header line, frames */
static const struct {
    const char *name, *header;
    int frames;
} y4m_files[] = {
    {"ref.y4m", "YUV4MPEG2 " H " F24:1 Ip A0:0 C420jpeg XYSCSS=420JPEG", 48},
    {"ref10.y4m", NULL, 0}, /* written as variants below */
    {"f00.y4m", "YUV4MPEG2 " H " F0:0 Ip A0:0 C420jpeg", 10},
    {"nof.y4m", "YUV4MPEG2 " H " Ip A0:0 C420jpeg", 10},
    {"f30.y4m", "YUV4MPEG2 " H " F30:1 Ip C420jpeg", 10},
    {"fbigrate.y4m", "YUV4MPEG2 " H " F1000000:1 C420jpeg", 10},
    {"f250.y4m", "YUV4MPEG2 " H " F25:0 C420jpeg", 2},
    {"fneg.y4m", "YUV4MPEG2 " H " F-25:1 C420jpeg", 2},
    {"fnan.y4m", "YUV4MPEG2 " H " Fnan:1 C420jpeg", 2},
    {"fhalf.y4m", "YUV4MPEG2 " H " F25 C420jpeg", 2},
    {"w0.y4m", "YUV4MPEG2 W0 H90 F25:1 C420jpeg", 2},
    {"h0.y4m", "YUV4MPEG2 W160 H0 F25:1 C420jpeg", 2},
    {"wneg.y4m", "YUV4MPEG2 W-160 H90 F25:1 C420jpeg", 2},
    {"hneg.y4m", "YUV4MPEG2 W160 H-5 F25:1 C420jpeg", 2},
    {"huge.y4m", "YUV4MPEG2 W100000 H100000 F25:1 C420jpeg", 2},
    {"wtext.y4m", "YUV4MPEG2 Wabc H90 F25:1 C420jpeg", 2},
    {"woverflow.y4m", "YUV4MPEG2 W99999999999 H90 F25:1 C420jpeg", 2},
    {"now.y4m", "YUV4MPEG2 H90 F25:1 C420jpeg", 2},
    {"noh.y4m", "YUV4MPEG2 W160 F25:1 C420jpeg", 2},
    {"cfoo.y4m", "YUV4MPEG2 " H " F25:1 C420foo", 2},
    {"cbad.y4m", "YUV4MPEG2 " H " F25:1 Cyuv", 2},
    {"imixed.y4m", "YUV4MPEG2 " H " F25:1 Im C420jpeg", 2},
    {"ibad.y4m", "YUV4MPEG2 " H " F25:1 Ix C420jpeg", 2},
    {"aneg.y4m", "YUV4MPEG2 " H " F25:1 A-1:1 C420jpeg", 2},
    {"longhdr.y4m", "YUV4MPEG2 " H " F25:1 C420jpeg XA=0123456789 XB=0123456789 "
                    "XC=0123456789 XD=0123456789 XE=0123456789", 2},
    {"unknowntag.y4m", "YUV4MPEG2 " H " F25:1 Zfoo C420jpeg", 10},
    {"w161.y4m", "YUV4MPEG2 W161 H90 F25:1 C420jpeg", 10},
    {"c444.y4m", "YUV4MPEG2 " H " F25:1 C444", 10},
    {"mpeg2.y4m", "YUV4MPEG2 " H " F24:1 Ip C420mpeg2", 10},
    {"interlaced.y4m", "YUV4MPEG2 " H " F24:1 It C420jpeg", 10},
    {"range_ltd.y4m", "YUV4MPEG2 " H " F24:1 C420jpeg XCOLORRANGE=LIMITED", 10},
    {"a:b.y4m", "YUV4MPEG2 " H " F24:1 C420jpeg", 10},
    {"with space.y4m", "YUV4MPEG2 " H " F24:1 C420jpeg", 10},
    {"unicod\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac.y4m", "YUV4MPEG2 " H " F24:1 C420jpeg", 10},
    {"file:x.y4m", "YUV4MPEG2 " H " F24:1 C420jpeg", 10},
    {"100%.y4m", "YUV4MPEG2 " H " F24:1 C420jpeg", 10},
    {"-dash.y4m", "YUV4MPEG2 " H " F24:1 C420jpeg", 10},
    {"http:x.y4m", "YUV4MPEG2 " H " F24:1 C420jpeg", 10},
};
#undef H

/* REF with its FRAME marker of frame 5 overwritten. */
static int write_badmarker(void)
{
    size_t n = ref_header + 10 * (6 + Y4M_FRAME);
    uint8_t *copy = malloc(n);
    int ret;
    if (!copy)
        return -1;
    memcpy(copy, ref_y4m, n);
    memcpy(copy + ref_header + 5 * (6 + Y4M_FRAME), "FRXME\n", 6);
    ret = write_file("badmarker.y4m", copy, n);
    free(copy);
    return ret;
}

static int write_y4m_inputs(void)
{
    const uint8_t *nl;
    int ok = 1;
    ref_y4m = read_fate(REF_Y4M, &ref_size);
    nl = ref_y4m ? memchr(ref_y4m, '\n', ref_size) : NULL;
    if (!nl)
        return -1;
    ref_header = (size_t)(nl - ref_y4m) + 1;
    if (ref_size < ref_header + 48 * (size_t)(6 + Y4M_FRAME) ||
        memcmp(ref_y4m + ref_header, "FRAME\n", 6))
        return -1;
    /* the header alone, part of one frame, two frames and 3000 bytes */
    ok = write_file("header.y4m", ref_y4m, ref_header) == 0 &&
         write_file("truncated.y4m", ref_y4m, ref_header + Y4M_FRAME / 2) == 0 &&
         write_file("truncated2.y4m", ref_y4m, ref_header + 2 * (6 + Y4M_FRAME) + 3000) == 0 &&
         write_file("unreadable.y4m", ref_y4m, ref_header + 6 + Y4M_FRAME) == 0 &&
         write_file("nonewline.y4m", "YUV4MPEG2 W160 H90 F25:1", 24) == 0 &&
         write_badmarker() == 0;
    for (size_t i = 0; ok && i < sizeof(y4m_files) / sizeof(y4m_files[0]); i++)
        if (y4m_files[i].header)
            ok = write_y4m(y4m_files[i].name, y4m_files[i].header, y4m_files[i].frames) == 0;
    if (ok) {
        /* no newline in the first 4096 bytes */
        char junk[5000];
        memset(junk, 'x', sizeof(junk));
        memcpy(junk, "YUV4MPEG2 ", 10);
        ok = write_file("endless_header.y4m", junk, sizeof(junk)) == 0;
    }
    return ok && write_y4m_variant("ref10.y4m", "YUV4MPEG2 W160 H90 F24:1 Ip C420p10", 10,
                                   V10BIT) == 0 &&
                   write_y4m_variant("full.y4m", "YUV4MPEG2 W160 H90 F24:1 Ip C420jpeg "
                                     "XCOLORRANGE=FULL", 10, VFULL) == 0 &&
                   write_y4m_variant("gray.y4m", "YUV4MPEG2 W160 H90 F24:1 Ip Cmono", 10,
                                     VGRAY) == 0
               ? 0
               : -1;
}

/* Packet i of the WAV: 400 samples of silence. */
static void silence(void *opaque, int i, AVPacket *pkt, const AVStream *st)
{
    (void)opaque;
    (void)st;
    memset(pkt->data, 0, (size_t)pkt->size);
    pkt->pts = pkt->dts = i * 400;
}

/* An audio-only WAV: 0.2 s of 8 kHz 16-bit silence. */
static int write_wav(const char *name)
{
    AVFormatContext *oc = NULL;
    AVStream *st;
    char path[1200];
    dir_path(path, sizeof(path), name);
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

/* An opened MJPEG encoder for w x h of fmt at 25 fps, NULL without one. */
static AVCodecContext *mjpeg_encoder(int w, int h, enum AVPixelFormat fmt)
{
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
    AVCodecContext *enc = codec ? avcodec_alloc_context3(codec) : NULL;
    if (!enc)
        return NULL;
    enc->width = w;
    enc->height = h;
    enc->pix_fmt = fmt;
    enc->time_base = (AVRational){1, 25};
    enc->flags |= AV_CODEC_FLAG_QSCALE;
    enc->global_quality = FF_QP2LAMBDA * 2;
    if (avcodec_open2(enc, codec, NULL) < 0)
        avcodec_free_context(&enc);
    return enc;
}

/* n frames of MJPEG (intra only: a damaged frame harms no other) at 25 fps
 * in format (a muxer name); the packets of frames bad_from..bad_to are
 * replaced by bytes no decoder takes for a JPEG image. Returns 1 when
 * there is no MJPEG encoder. */
static int write_mjpeg(const char *name, const char *format, int n, int bad_from, int bad_to)
{
    AVCodecContext *enc = mjpeg_encoder(64, 48, AV_PIX_FMT_YUVJ420P);
    char path[1200];
    int ret;
    if (!enc)
        return 1;
    dir_path(path, sizeof(path), name);
    ret = tool_encode_file(path, format, enc, enc->time_base, n, 0.0, bad_from, bad_to);
    avcodec_free_context(&enc);
    return ret;
}

/* 12 MJPEG frames in one NUT stream, the first 6 from encoder a, the last
 * 6 from b (another size or pixel format): a stream that changes midway. */
static int write_mjpeg_change(const char *name, int w2, int h2, enum AVPixelFormat fmt2)
{
    AVCodecContext *enc[2] = {mjpeg_encoder(64, 48, AV_PIX_FMT_YUVJ420P),
                              mjpeg_encoder(w2, h2, fmt2)};
    AVFormatContext *oc = NULL;
    AVStream *st;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    char path[1200];
    int ret = enc[0] && enc[1] && pkt && frame ? 0 : -1;
    dir_path(path, sizeof(path), name);
    if (ret == 0)
        ret = avformat_alloc_output_context2(&oc, NULL, "nut", path);
    st = ret >= 0 ? avformat_new_stream(oc, NULL) : NULL;
    if (!st)
        ret = -1;
    if (ret >= 0) {
        avcodec_parameters_from_context(st->codecpar, enc[0]);
        st->time_base = (AVRational){1, 25};
        st->avg_frame_rate = st->r_frame_rate = (AVRational){25, 1};
        ret = avio_open(&oc->pb, path, AVIO_FLAG_WRITE);
    }
    if (ret >= 0)
        ret = avformat_write_header(oc, NULL);
    for (int i = 0; ret >= 0 && i < 12; i++) {
        AVCodecContext *e = enc[i >= 6];
        av_frame_unref(frame);
        frame->format = e->pix_fmt;
        frame->width = e->width;
        frame->height = e->height;
        if ((ret = av_frame_get_buffer(frame, 0)) < 0)
            break;
        for (int p = 0; p < 3; p++)
            memset(frame->data[p], 60 + 10 * p + i, (size_t)frame->linesize[p] *
                                                        (p ? (e->height + 1) / 2 : e->height));
        frame->pts = i;
        if ((ret = avcodec_send_frame(e, frame)) < 0 || (ret = avcodec_receive_packet(e, pkt)) < 0)
            break;
        pkt->stream_index = 0;
        av_packet_rescale_ts(pkt, e->time_base, st->time_base);
        pkt->pts = pkt->dts = i;
        ret = av_interleaved_write_frame(oc, pkt);
    }
    if (ret >= 0)
        ret = av_write_trailer(oc);
    if (oc)
        avio_closep(&oc->pb);
    avformat_free_context(oc);
    av_packet_free(&pkt);
    av_frame_free(&frame);
    avcodec_free_context(&enc[0]);
    avcodec_free_context(&enc[1]);
    return ret < 0 ? -1 : 0;
}

/* A relative path of depth levels of 200-byte names, created (directories
 * made with mkdirat, relative to the one before, so that paths longer than
 * PATH_MAX can be made), with name at the end a copy of REF's first frames
 * when make_file. */
static int make_long_path(char *out, size_t len, int depth, int make_file)
{
    char part[201];
    int fd = open(dir, O_RDONLY | O_DIRECTORY), ok = fd >= 0;
    size_t n = 0;
    memset(part, 'd', 200);
    part[200] = 0;
    for (int i = 0; ok && i < depth; i++) {
        int next;
        part[0] = (char)('a' + i % 26);
        mkdirat(fd, part, 0755);
        next = openat(fd, part, O_RDONLY | O_DIRECTORY);
        close(fd);
        fd = next;
        ok = fd >= 0;
        n += (size_t)snprintf(out + n, len - n, "%s/", part);
    }
    snprintf(out + n, len - n, "ref.y4m");
    if (ok && make_file) {
        int f = openat(fd, "ref.y4m", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        size_t size = ref_header + 10 * (6 + Y4M_FRAME);
        ok = f >= 0 && write(f, ref_y4m, size) == (ssize_t)size;
        if (f >= 0)
            close(f);
    }
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

static void write_inputs(void)
{
    static const char text[] = "This is a text file, not a video.\n";
    static const char notmodel[] = "{\"name\": \"not a model\", \"values\": [1, 2, 3]}\n";
    uint8_t nv16[2 * 16 * 16 * 2];
    char path[1200], target[1200];
    size_t size;
    uint8_t *dis;
    int ret;
    for (size_t i = 0; i < sizeof(nv16); i++)
        nv16[i] = (uint8_t)(i * 7);
    CHECK(write_file("text.txt", text, sizeof(text) - 1) == 0, "write text.txt");
    CHECK(write_file("empty.mp4", "", 0) == 0, "write empty.mp4");
    CHECK(write_file("short.yuv", nv16, 16) == 0, "write short.yuv");
    CHECK(write_file("nv16.yuv", nv16, sizeof(nv16)) == 0, "write nv16.yuv");
    CHECK(write_file("notmodel.json", notmodel, sizeof(notmodel) - 1) == 0,
          "write notmodel.json");
    CHECK(write_file("existing.json", "OLD\n", 4) == 0, "write existing.json");
    CHECK(write_file("readonly.json", "OLD\n", 4) == 0, "write readonly.json");
    dir_path(path, sizeof(path), "readonly.json");
    CHECK(chmod(path, 0444) == 0, "chmod 444 readonly.json");
    CHECK(write_y4m_inputs() == 0, "write the y4m inputs from fate/%s", REF_Y4M);
    dis = read_fate(DIS_Y4M, &size);
    CHECK(dis && write_file("dis.y4m", dis, size) == 0, "write dis.y4m");
    CHECK(write_file("stdout_ref.y4m", ref_y4m, ref_size) == 0, "write stdout_ref.y4m");
    free(dis);
    /* raw: REF's first 10 frames without the y4m framing */
    {
        uint8_t *raw = malloc(10 * (size_t)Y4M_FRAME);
        for (int i = 0; raw && i < 10; i++)
            memcpy(raw + (size_t)i * Y4M_FRAME, ref_plane(i, 0), Y4M_FRAME);
        CHECK(raw && write_file("ref.yuv", raw, 10 * (size_t)Y4M_FRAME) == 0, "write ref.yuv");
        free(raw);
    }
    dir_path(path, sizeof(path), "unreadable.y4m");
    CHECK(chmod(path, 0) == 0, "chmod 000 unreadable.y4m");
    dir_path(path, sizeof(path), "no-vendors");
    CHECK(mkdir(path, 0755) == 0, "mkdir no-vendors");
    dir_path(path, sizeof(path), "ref.y4m");
    dir_path(target, sizeof(target), "ref-link.y4m");
    CHECK(symlink(path, target) == 0, "symlink ref-link.y4m");
    dir_path(target, sizeof(target), "ref-hard.y4m");
    CHECK(link(path, target) == 0, "hard link ref-hard.y4m");
    dir_path(path, sizeof(path), "existing.json");
    dir_path(target, sizeof(target), "log-link.json");
    CHECK(symlink(path, target) == 0, "symlink log-link.json");
    dir_path(path, sizeof(path), "stall.fifo");
    CHECK(mkfifo(path, 0644) == 0, "mkfifo stall.fifo");
    dir_path(path, sizeof(path), "cachefile");
    CHECK(write_file("cachefile", "x", 1) == 0, "write cachefile");
    CHECK(make_long_path(long_ok, sizeof(long_ok), 10, 1) == 0 && strlen(long_ok) > 2000,
          "a 2 KB path");
    CHECK(make_long_path(long_bad, sizeof(long_bad), 25, 0) == 0 && strlen(long_bad) > PATH_MAX,
          "a path longer than PATH_MAX");
    snprintf(long_env, sizeof(long_env), "XDG_CACHE_HOME=%s/%s", dir, long_bad);
    CHECK(write_wav("audio.wav") == 0, "write audio.wav");
    CHECK(write_corrupt_copy(CORRUPT_SRC, "corrupt.mkv") == 0, "write corrupt.mkv from fate/%s",
          CORRUPT_SRC);
    ret = write_mjpeg("mjpeg.nut", "nut", 12, -1, -1);
    have_mjpeg = ret != 1;
    if (have_mjpeg) {
        CHECK(ret == 0, "write mjpeg.nut");
        CHECK(write_mjpeg("mjpeg_corrupt.nut", "nut", 12, 5, 5) == 0, "write mjpeg_corrupt.nut");
        /* 120 bad packets: warnings for the 1st, 2nd, 3rd and 100th only */
        CHECK(write_mjpeg("mjpeg130.nut", "nut", 130, -1, -1) == 0, "write mjpeg130.nut");
        CHECK(write_mjpeg("mjpeg_many.nut", "nut", 130, 5, 124) == 0, "write mjpeg_many.nut");
        /* 250 in a row: given up */
        CHECK(write_mjpeg("mjpeg_dead.nut", "nut", 260, 5, 254) == 0, "write mjpeg_dead.nut");
        /* an MP4 whose index (moov) is at its end, as the muxer writes it,
     * larger than what a pipe's reader keeps in its buffer */
        CHECK(write_mjpeg("moov_end.mp4", "mp4", 1500, -1, -1) == 0, "write moov_end.mp4");
        CHECK(write_mjpeg_change("sizechange.nut", 32, 24, AV_PIX_FMT_YUVJ420P) == 0,
              "write sizechange.nut");
        CHECK(write_mjpeg_change("fmtchange.nut", 64, 48, AV_PIX_FMT_YUVJ422P) == 0,
              "write fmtchange.nut");
    }
}

/* ------------------------------------------------------ log validators */

/* A JSON log: the frames array and its length in *frames. */
static int valid_json(const char *text, int *frames)
{
    json_object *root = json_tokener_parse(text), *arr;
    int ok = root && json_object_object_get_ex(root, "frames", &arr) &&
             json_object_is_type(arr, json_type_array) &&
             json_object_object_get_ex(root, "pooled_metrics", NULL);
    if (ok)
        *frames = (int)json_object_array_length(arr);
    json_object_put(root);
    return ok;
}

/* One UTF-8 character XML 1.0 takes; advances *s. */
static int xml_char(const unsigned char **s)
{
    const unsigned char *p = *s;
    int n = p[0] < 0x80 ? 0 : p[0] >= 0xC2 && p[0] <= 0xDF ? 1 : p[0] >= 0xE0 && p[0] <= 0xEF ? 2
                          : p[0] >= 0xF0 && p[0] <= 0xF4 ? 3 : -1;
    if (n < 0 || (p[0] < 0x20 && p[0] != '\t' && p[0] != '\n' && p[0] != '\r'))
        return 0;
    for (int i = 1; i <= n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    *s = p + n + 1;
    return 1;
}

static int xml_name(const unsigned char **s)
{
    const unsigned char *p = *s;
    if (!(isalpha(*p) || *p == '_' || *p == ':' || *p >= 0x80))
        return 0;
    while (isalnum(*p) || *p == '_' || *p == ':' || *p == '-' || *p == '.' || *p >= 0x80)
        p++;
    *s = p;
    return 1;
}

/* A well-formed XML document of elements with attributes (what the log
 * writer produces): UTF-8, names, quoted values without '<' or a bare '&',
 * no repeated attribute, balanced tags, one root. */
static int valid_xml(const char *text)
{
    const unsigned char *s = (const unsigned char *)text, *check = s;
    const unsigned char *stack[16];
    size_t stack_len[16];
    int depth = 0, roots = 0;
    while (*check)
        if (!xml_char(&check))
            return 0;
    for (;;) {
        while (isspace(*s))
            s++;
        if (!*s)
            return depth == 0 && roots == 1;
        if (*s != '<')
            return 0;
        s++;
        if (*s == '/') {
            const unsigned char *name = ++s;
            if (!xml_name(&s) || depth == 0 || (size_t)(s - name) != stack_len[depth - 1] ||
                memcmp(name, stack[depth - 1], (size_t)(s - name)) || *s++ != '>')
                return 0;
            depth--;
            continue;
        }
        {
            const unsigned char *name = s, *attrs[256];
            size_t attr_len[256];
            int nb = 0;
            if (!xml_name(&s))
                return 0;
            if (depth == 0)
                roots++;
            for (;;) {
                int space = isspace(*s);
                while (isspace(*s))
                    s++;
                if (*s == '/' && s[1] == '>') {
                    s += 2;
                    break;
                }
                if (*s == '>') {
                    if (depth == 16)
                        return 0;
                    stack[depth] = name;
                    stack_len[depth++] = strcspn((const char *)name, " \t\n/>");
                    s++;
                    break;
                }
                if (!space || nb == 256)
                    return 0;
                attrs[nb] = s;
                if (!xml_name(&s))
                    return 0;
                attr_len[nb] = (size_t)(s - attrs[nb]);
                for (int i = 0; i < nb; i++)
                    if (attr_len[i] == attr_len[nb] && !memcmp(attrs[i], attrs[nb], attr_len[nb]))
                        return 0;
                nb++;
                if (*s++ != '=' || *s++ != '"')
                    return 0;
                while (*s && *s != '"') {
                    if (*s == '<')
                        return 0;
                    if (*s == '&') {
                        const char *semi = strchr((const char *)s, ';');
                        if (!semi || semi - (const char *)s > 8)
                            return 0;
                    }
                    s++;
                }
                if (*s++ != '"')
                    return 0;
            }
        }
    }
}

/* CSV (RFC 4180): every record has as many fields as the header, which
 * starts "Frame"; returns the number of data records, -1 when invalid. */
static int valid_csv(const char *s)
{
    int fields = 0, header = -1, records = 0;
    if (strncmp(s, "Frame,", 6))
        return -1;
    while (*s) {
        fields = 1;
        while (*s && *s != '\n') {
            if (*s == '"') {
                for (s++; *s && !(*s == '"' && s[1] != '"'); s += *s == '"' ? 2 : 1)
                    ;
                if (*s++ != '"')
                    return -1;
            } else if (*s == ',') {
                fields++;
                s++;
            } else if (*s == '\r') {
                return -1;
            } else {
                s++;
            }
        }
        if (*s == '\n')
            s++;
        if (header < 0)
            header = fields;
        else if (fields != header)
            return -1;
        else
            records++;
    }
    return header < 0 ? -1 : records;
}

/* SUB: "{N}{N+1}frame: N|name: value|...|" per line. */
static int valid_sub(const char *s)
{
    int lines = 0;
    while (*s) {
        unsigned a, b, c;
        const char *end = strchr(s, '\n');
        if (!end || sscanf(s, "{%u}{%u}frame: %u|", &a, &b, &c) != 3 || b != a + 1 || c != a ||
            end[-1] != '|')
            return -1;
        for (const char *p = s; p < end; p++)
            if ((unsigned char)*p < 0x20)
                return -1;
        lines++;
        s = end + 1;
    }
    return lines;
}

/* JSON lines: every whole line an object with frameNum and metrics; an
 * unterminated last line is allowed when partial_ok (the run failed). */
static int valid_jsonl(const char *s, int partial_ok)
{
    int lines = 0;
    while (*s) {
        const char *end = strchr(s, '\n');
        json_object *o;
        char *line;
        if (!end)
            return partial_ok ? lines : -1;
        line = strndup(s, (size_t)(end - s));
        o = line ? json_tokener_parse(line) : NULL;
        free(line);
        if (!o || !json_object_object_get_ex(o, "frameNum", NULL) ||
            !json_object_object_get_ex(o, "metrics", NULL)) {
            json_object_put(o);
            return -1;
        }
        json_object_put(o);
        lines++;
        s = end + 1;
    }
    return lines;
}

/* ---------------------------------------------------------- the table */

typedef struct Row {
    char what[256];
    int status;
    char args[16384];
    char message[512];
    char flags[16384];
    /* the run */
    char *cmd;       /* malloc'ed */
    pid_t pid;
    double start;
    int signal, signal_ms, signal_sent;
    char ready[256]; /* the signal's delay counts from this file's first byte */
    double ready_at; /* when it was seen; 0 not yet */
    int rc;          /* exit status, 1000 + signal when killed, -1 not run */
    int pipe_rc;     /* the status comes from the .rc file */
    int skip;
    rlim_t fsize;
} Row;

static Row rows[MAX_ROWS];
static int nb_rows;

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

/* Copies src to dst with the @NAME@ placeholders replaced. */
static void expand(char *dst, size_t len, const char *src)
{
    size_t n = 0;
    char ref[1200], dis[1200];
    snprintf(ref, sizeof(ref), "%s/%s", fate, REF_Y4M);
    snprintf(dis, sizeof(dis), "%s/%s", fate, DIS_Y4M);
    const struct {
        const char *key, *value;
    } keys[] = {{"@FATE@", fate}, {"@REF@", ref}, {"@DIS@", dis}, {"@DIR@", dir},
                {"@LONG@", long_ok}, {"@TOOLONG@", long_bad}, {"@LONGXDG@", long_env}};
    while (*src && n + 1 < len) {
        size_t k;
        for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            if (!strncmp(src, keys[k].key, strlen(keys[k].key)))
                break;
        if (k < sizeof(keys) / sizeof(keys[0])) {
            n += (size_t)snprintf(dst + n, len - n, "%s", keys[k].value);
            if (n >= len)
                n = len - 1;
            src += strlen(keys[k].key);
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

/* The value of flag NAME: ("name:value" or "name"), or NULL. Flags are
 * separated by spaces; several may have the same name (index picks). */
static const char *flag(const Row *row, const char *name, int index, char *buf, size_t len)
{
    size_t nlen = strlen(name);
    for (const char *p = row->flags; *p;) {
        size_t w = strcspn(p, " ");
        if (w >= nlen && !strncmp(p, name, nlen) && (w == nlen || p[nlen] == ':') &&
            index-- == 0) {
            size_t vlen = w > nlen ? w - nlen - 1 : 0;
            snprintf(buf, len, "%.*s", (int)vlen, p + nlen + 1);
            return buf;
        }
        p += w;
        while (*p == ' ')
            p++;
    }
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The shell command of row i (see the table's header for the flags). */
static void build_command(int i)
{
    Row *r = &rows[i];
    char env[16384] = "", pre[4096] = "", buf[16384], in[1200] = "", out[64];
    const char *v;
    size_t n = 0;
    r->rc = -1;
    if (flag(r, "noroot", 0, buf, sizeof(buf)) && geteuid() == 0) {
        printf("skip: %s (running as root: root reads and writes any file)\n", r->what);
        r->skip = 1;
    }
    if (flag(r, "mjpeg", 0, buf, sizeof(buf)) && !have_mjpeg) {
        printf("skip: %s (no MJPEG encoder)\n", r->what);
        r->skip = 1;
    }
    if (flag(r, "oom", 0, buf, sizeof(buf))) {
        /* the preloaded hook is not the first library of a sanitizer build */
        const char *asan = getenv("ASAN_OPTIONS");
        if (!hook[0]) {
            printf("skip: %s (no tests/tool_oom_hook.so next to the test)\n", r->what);
            r->skip = 1;
        }
        n += (size_t)snprintf(env + n, sizeof(env) - n, " LD_PRELOAD=%s "
                              "QGPU_TEST_DEVICE_MEMORY=4096 ASAN_OPTIONS=%s%sverify_asan_link_order=0",
                              hook, asan ? asan : "", asan && *asan ? ":" : "");
    }
    {
        /* env takes its -u options before the assignments */
        char assign[16384] = "";
        size_t a = 0;
        for (int k = 0; (v = flag(r, "env", k, buf, sizeof(buf))); k++)
            a += (size_t)snprintf(assign + a, sizeof(assign) - a, " '%s'", v);
        for (int k = 0; (v = flag(r, "unset", k, buf, sizeof(buf))); k++)
            n += (size_t)snprintf(env + n, sizeof(env) - n, " -u %s", v);
        n += (size_t)snprintf(env + n, sizeof(env) - n, "%s", assign);
    }
    if ((v = flag(r, "fifo", 0, buf, sizeof(buf)))) { /* fifo:NAME=SOURCE[@BYTES] */
        char name[256], src[1200];
        long bytes = -1;
        const char *at = strchr(v, '@');
        sscanf(v, "%255[^=]=%1199[^@]", name, src);
        if (at)
            bytes = atol(at + 1);
        snprintf(in, sizeof(in), "%s/%s", dir, name);
        mkfifo(in, 0644);
        if (bytes < 0)
            snprintf(pre, sizeof(pre), "cat '%s' > '%s' & ", src, name);
        else /* the writer stalls after BYTES */
            snprintf(pre, sizeof(pre), "(head -c %ld '%s'; sleep 30) > '%s' & ", bytes, src, name);
        in[0] = 0;
    }
    if ((v = flag(r, "pipein", 0, buf, sizeof(buf)))) /* pipein:FILE: cat FILE | qgpu */
        snprintf(pre + strlen(pre), sizeof(pre) - strlen(pre), "cat '%s' | ", v);
    if ((v = flag(r, "stdin", 0, buf, sizeof(buf))))
        snprintf(in, sizeof(in), !strcmp(v, "closed") ? " <&-" : " <'%s'", v);
    snprintf(out, sizeof(out), ">row%d.out", i);
    if ((v = flag(r, "stdout", 0, buf, sizeof(buf))))
        snprintf(out, sizeof(out), "%s%.50s", !strcmp(v, "closed") ? ">&-"
                                              : !strncmp(v, "append=", 7) ? ">>" : ">/dev/full",
                 !strncmp(v, "append=", 7) ? v + 7 : "");
    if ((v = flag(r, "fsize", 0, buf, sizeof(buf))))
        r->fsize = (rlim_t)atol(v);
    if ((v = flag(r, "signal", 0, buf, sizeof(buf)))) { /* signal:TERM@MS */
        char name[16];
        sscanf(v, "%15[^@]@%d", name, &r->signal_ms);
        r->signal = !strcmp(name, "TERM") ? SIGTERM : !strcmp(name, "HUP") ? SIGHUP : SIGINT;
    }
    if ((v = flag(r, "ready", 0, buf, sizeof(buf)))) /* ready:FILE in the row's directory */
        snprintf(r->ready, sizeof(r->ready), "%s/%s", dir, v);
    {
        const size_t cmd_len = 24576;
        const char *args = r->args;
        char *cmd = r->cmd = malloc(cmd_len);
        if (!cmd) {
            r->skip = 1;
            return;
        }
        if ((v = flag(r, "pipeout", 0, buf, sizeof(buf)))) { /* pipeout:BYTES: | head -c BYTES */
            r->pipe_rc = 1;
            snprintf(cmd, cmd_len, "cd '%s' || exit 99; %s{ env%s %s -q %s%s 2>row%d.err; "
                     "echo $? > row%d.rc; } | head -c %s >/dev/null", dir, pre, env, tool, args,
                     in, i, i, v);
        } else {
            /* exec: the shell becomes the tool (its pid gets the signals) */
            snprintf(cmd, cmd_len, "cd '%s' || exit 99; %sexec env%s %s -q %s%s 2>row%d.err %s",
                     dir, pre, env, tool, args, in, i, out);
        }
    }
}

static void start_row(int i)
{
    Row *r = &rows[i];
    const char *shell = strstr(r->flags, "bash") ? "/bin/bash" : "/bin/sh";
    r->start = now();
    r->pid = fork();
    if (r->pid == 0) {
        setpgid(0, 0);
        if (r->fsize) {
            struct rlimit l;
            getrlimit(RLIMIT_FSIZE, &l);
            l.rlim_cur = r->fsize;
            setrlimit(RLIMIT_FSIZE, &l);
        }
        signal(SIGXFSZ, SIG_DFL);
        execl(shell, shell, "-c", r->cmd, (char *)NULL);
        _exit(127);
    }
}

/* Whether a row's signal is due: MS after its start, or with ready:FILE,
 * MS after FILE first held a byte (the tool is then past its set-up, however
 * slowly a loaded machine started it). */
static int signal_due(Row *r)
{
    struct stat st;
    if (!r->ready[0])
        return now() - r->start >= r->signal_ms / 1000.0;
    if (r->ready_at == 0.0 && stat(r->ready, &st) == 0 && st.st_size > 0)
        r->ready_at = now();
    return r->ready_at > 0.0 && now() - r->ready_at >= r->signal_ms / 1000.0;
}

/* Waits for finished rows (and sends the signals that are due); returns
 * how many are still running. */
static int reap(int running)
{
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
        for (int i = 0; i < nb_rows; i++)
            if (rows[i].pid == pid) {
                rows[i].rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
                rows[i].pid = 0;
                kill(-pid, SIGKILL); /* what it left behind (a FIFO writer) */
                running--;
            }
        return running;
    }
    for (int i = 0; i < nb_rows; i++) {
        Row *r = &rows[i];
        if (!r->pid)
            continue;
        if (r->signal && !r->signal_sent && signal_due(r)) {
            kill(r->pid, r->signal);
            r->signal_sent = 1;
        }
        if (now() - r->start > LIMIT_SECONDS) {
            kill(-r->pid, SIGKILL);
            r->signal_sent = 1;
            r->signal = -1; /* marks the time-out */
        }
    }
    usleep(10000);
    return running;
}

static void run_rows(void)
{
    int running = 0;
    for (int i = 0; i < nb_rows; i++) {
        if (rows[i].skip)
            continue;
        while (running >= JOBS)
            running = reap(running);
        start_row(i);
        running++;
    }
    while (running > 0)
        running = reap(running);
}

/* The row's stderr (NUL-terminated, malloc'ed). */
static char *row_file(int i, const char *ext)
{
    char path[1200], name[64];
    size_t size;
    char *text;
    snprintf(name, sizeof(name), "row%d.%s", i, ext);
    dir_path(path, sizeof(path), name);
    text = (char *)read_all(path, &size);
    return text ? text : strdup("");
}

/* Checks stderr as the table's header says. */
static int stderr_ok(const Row *row, const char *err, char *why, size_t len)
{
    char *copy = strdup(err), *lines[512], *save = NULL;
    int n = 0, ok = 0;
    for (char *l = strtok_r(copy, "\n", &save); l && n < 512; l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    if (!strcmp(row->message, "(none)")) {
        ok = n == 0;
        if (!ok)
            snprintf(why, len, "stderr not empty");
        goto out;
    }
    if (n == 0) {
        snprintf(why, len, "nothing on stderr");
        goto out;
    }
    for (int i = 0; i < n; i++)
        if (strncmp(lines[i], "qgpu: ", 6)) {
            snprintf(why, len, "a line not from qgpu: '%.200s'", lines[i]);
            goto out;
        }
    if (row->status == 0) {
        for (int i = 0; i < n && !ok; i++)
            ok = strstr(lines[i], row->message) != NULL;
        if (!ok)
            snprintf(why, len, "no line with '%s'", row->message);
        goto out;
    }
    for (int i = 0; i + 1 < n; i++)
        if (strncmp(lines[i], "qgpu: warning: ", 15) && strncmp(lines[i], "qgpu: interrupted", 17) &&
            !strstr(lines[i], "finishing the log")) {
            snprintf(why, len, "more than one line of error: '%.200s'", lines[i]);
            goto out;
        }
    ok = strstr(lines[n - 1], row->message) != NULL;
    if (!ok)
        snprintf(why, len, "last line lacks '%s'", row->message);
out:
    free(copy);
    return ok;
}

/* The log checks: log:FILE=KIND[=N], KIND json, xml, csv, sub, jsonl,
 * absent, unchanged (still "OLD"). */
static int log_ok(const Row *row, char *why, size_t len)
{
    char buf[16384], file[1024], kind[32], path[1200];
    const char *v;
    for (int k = 0; (v = flag(row, "log", k, buf, sizeof(buf))); k++) {
        int expect = -1, got = -1, frames = -1, exists;
        size_t size;
        char *text;
        kind[0] = 0;
        if (sscanf(v, "%1023[^=]=%31[^=]=%d", file, kind, &expect) < 2) {
            snprintf(why, len, "bad log flag '%s'", v);
            return 0;
        }
        dir_path(path, sizeof(path), file);
        text = (char *)read_all(path, &size);
        exists = access(path, F_OK) == 0;
        if (!strcmp(kind, "absent"))
            got = exists ? -1 : 0;
        else if (!text)
            got = -1;
        else if (!strcmp(kind, "unchanged"))
            got = strcmp(text, "OLD\n") ? -1 : 0;
        else if (!strcmp(kind, "json"))
            got = valid_json(text, &frames) ? frames : -1;
        else if (!strcmp(kind, "xml"))
            got = valid_xml(text) ? (int)(strstr(text, "<frames>") != NULL) : -1;
        else if (!strcmp(kind, "csv"))
            got = valid_csv(text);
        else if (!strcmp(kind, "sub"))
            got = valid_sub(text);
        else if (!strcmp(kind, "jsonl"))
            got = valid_jsonl(text, row->status != 0);
        free(text);
        if (got < 0 || (expect >= 0 && got != expect)) {
            snprintf(why, len, "%.200s is not %s%s (got %d)", file, kind,
                     expect >= 0 ? " with the expected count" : "", got);
            return 0;
        }
    }
    return 1;
}

static void check_rows(void)
{
    char why[1024];
    for (int i = 0; i < nb_rows; i++) {
        Row *r = &rows[i];
        char *err;
        int rc = r->rc;
        if (r->skip)
            continue;
        err = row_file(i, "err");
        if (r->pipe_rc) {
            char *text = row_file(i, "rc");
            rc = *text ? atoi(text) : -1;
            free(text);
        }
        CHECK(r->signal != -1 && rc < 1000, "%s: no hang, no crash (%s): %s", r->what,
              r->signal == -1 ? "timed out" : rc >= 1000 ? "killed by a signal" : "ok", err);
        why[0] = 0;
        CHECK(rc == r->status && stderr_ok(r, err, why, sizeof(why)) &&
                  log_ok(r, why, sizeof(why)),
              "%s: exit %d (expected %d), message '%s' %s: qgpu -q %.300s\n%.2000s", r->what, rc,
              r->status, r->message, why, r->args, err);
        free(err);
    }
}

static void run_table(void)
{
    char path[1200], line[20000];
    int skipped = 0;
    FILE *f = fopen(test_src_path("tests/tool_bad_inputs.txt", path, sizeof(path)), "r");
    if (!CHECK(f != NULL, "tests/tool_bad_inputs.txt"))
        return;
    while (fgets(line, sizeof(line), f) && nb_rows < MAX_ROWS) {
        char *t = trim(line);
        if (!*t || *t == '#')
            continue;
        if (!CHECK(parse_row(t, &rows[nb_rows]) == 0, "table row: %s", t))
            continue;
        build_command(nb_rows);
        skipped += rows[nb_rows].skip;
        nb_rows++;
    }
    fclose(f);
    {
        double t0 = now();
        run_rows();
        printf("%d table rows, %d skipped, %.1f s\n", nb_rows, skipped, now() - t0);
    }
    check_rows();
    for (int i = 0; i < nb_rows; i++)
        free(rows[i].cmd);
    CHECK(nb_rows >= 150, "at least 150 rows in the table (%d)", nb_rows);
}

/* ------------------------------------------- after the table: the logs */

static json_object *read_json(const char *name)
{
    char path[1200];
    dir_path(path, sizeof(path), name);
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

/* Runs the tool once more (after the table), stderr in out. */
static int run_tool(const char *env, const char *args, char *out, size_t len)
{
    char quiet[8192];
    snprintf(quiet, sizeof(quiet), "-q %s", args);
    return tool_run(tool, dir, env, LIMIT_SECONDS, quiet, out, len);
}

static void check_logs(void)
{
    static char out[65536];
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
    /* full range against limited: converted, so the same picture scores
     * high (unconverted it would be far apart: the ranges stretch every
     * sample) */
    root = read_json("range.json");
    if (CHECK(root != NULL, "range.json written")) {
        n = json_psnr(root, psnr, 64);
        CHECK(n == 10 && psnr[0] > 45.0 && psnr[9] > 45.0,
              "full range converted to limited: psnr_y %.2f (n %d)", n ? psnr[0] : 0.0, n);
        json_object_put(root);
    }
    /* 8 against 10 bits: shifted, so identical samples (psnr at its cap) */
    root = read_json("depth.json");
    if (CHECK(root != NULL, "depth.json written")) {
        n = json_psnr(root, psnr, 64);
        CHECK(n == 10 && psnr[0] >= 60.0, "8-bit shifted to 10 bits: identical (psnr_y %.2f)",
              n ? psnr[0] : 0.0);
        json_object_put(root);
    }
    if (!have_mjpeg) {
        printf("skip: MJPEG checks (no MJPEG encoder)\n");
    } else {
        /* intra-only: the pairs around the lost frame 5 are still the same
         * pictures, so aligned by presentation time every pair is identical
         * (60 dB); paired by count, frames 6..11 would meet frames 5..10 */
        root = read_json("mjpeg.json");
        if (CHECK(root != NULL, "mjpeg.json written")) {
            int same = 0;
            n = json_psnr(root, psnr, 64);
            for (int i = 0; i < n && i < 64; i++)
                same += psnr[i] >= 60.0 - 1e-9;
            CHECK(n == 11 && same == 11,
                  "mjpeg: 11 identical pairs after the lost frame (%d of %d)", same, n);
            CHECK(json_int(root, "decode_errors") == 1 && json_int(root, "skipped_frames") == 1,
                  "mjpeg: decode_errors 1, skipped_frames 1: %d, %d",
                  json_int(root, "decode_errors"), json_int(root, "skipped_frames"));
            json_object_put(root);
        }
        /* many errors: rate-limited warnings (1st, 2nd, 3rd, 100th), all counted */
        {
            int rc = run_tool("", "-r mjpeg130.nut -d mjpeg_many.nut -n --feature psnr --json "
                              "-o many.json", out, sizeof(out));
            int lines = 0;
            for (const char *l = out; (l = strstr(l, "qgpu: warning: distorted ")); l++)
                lines++;
            root = read_json("many.json");
            n = root ? json_psnr(root, psnr, 64) : -1;
            CHECK(rc == 0 && lines == 4 && strstr(out, "(100 decoding errors so far)") && root &&
                      json_int(root, "decode_errors") == 120 && n == 10,
                  "120 bad packets: 4 warning lines (%d), 120 counted, 10 pairs (%d) (rc %d): %s",
                  lines, n, rc, out);
            json_object_put(root);
        }
        /* an intact input logs zero counts */
        CHECK(run_tool("", "-r mjpeg.nut -d mjpeg.nut -n --feature psnr --json -o clean.json",
                       out, sizeof(out)) == 0, "clean run: %s", out);
        root = read_json("clean.json");
        CHECK(root && json_int(root, "decode_errors") == 0 &&
                  json_int(root, "skipped_frames") == 0,
              "clean log: decode_errors 0, skipped_frames 0");
        json_object_put(root);
    }
    /* -o through a symbolic link: the log is written to the link's target
     * and the link stays a link */
    {
        struct stat st;
        char path[1200];
        int frames = 0;
        size_t size;
        char *text;
        CHECK(run_tool("", "-r ref.y4m -d dis.y4m -n --feature psnr --frame_cnt 3 --json "
                       "-o log-link.json", out, sizeof(out)) == 0, "-o a link: %s", out);
        dir_path(path, sizeof(path), "log-link.json");
        CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode), "the link is still a link");
        dir_path(path, sizeof(path), "existing.json");
        text = (char *)read_all(path, &size);
        CHECK(text && valid_json(text, &frames) && frames == 3,
              "the link's target holds the log (%d frames)", frames);
        free(text);
    }
}

/* A kernel-cache entry that is garbage, or a FIFO, never stops a run. */
static void check_cache(void)
{
    static char out[65536];
    char env[2600], path[1400], cache[1200];
    int rc, entries = 0;
    DIR *d;
    struct dirent *e;
    dir_path(cache, sizeof(cache), "cache");
    {
        /* PoCL keeps its own cache where it is now (under XDG_CACHE_HOME
         * too): kernels compiled afresh would leak in LLVM under ASan */
        const char *pocl = getenv("POCL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
        const char *home = getenv("HOME");
        char pocl_dir[1200];
        if (pocl && *pocl)
            snprintf(pocl_dir, sizeof(pocl_dir), "%s", pocl);
        else if (xdg && *xdg)
            snprintf(pocl_dir, sizeof(pocl_dir), "%s/pocl/kcache", xdg);
        else
            snprintf(pocl_dir, sizeof(pocl_dir), "%s/.cache/pocl/kcache", home ? home : "/tmp");
        snprintf(env, sizeof(env), "XDG_CACHE_HOME=%s POCL_CACHE_DIR=%s", cache, pocl_dir);
    }
    rc = run_tool(env, "-r ref.y4m -d dis.y4m -n --feature psnr --frame_cnt 2", out, sizeof(out));
    CHECK(rc == 0, "a fresh cache directory: %s", out);
    snprintf(path, sizeof(path), "%s/qgpu", cache);
    d = opendir(path);
    while (d && (e = readdir(d))) {
        char entry[2600];
        if (e->d_name[0] == '.')
            continue;
        snprintf(entry, sizeof(entry), "%s/%s", path, e->d_name);
        unlink(entry);
        /* every other entry a FIFO, the rest garbage */
        if (entries++ % 2)
            mkfifo(entry, 0644);
        else {
            FILE *f = fopen(entry, "w");
            if (f) {
                fputs("garbage", f);
                fclose(f);
            }
        }
    }
    if (d)
        closedir(d);
    CHECK(entries > 0, "the run filled the cache (%d entries)", entries);
    rc = run_tool(env, "-r ref.y4m -d dis.y4m -n --feature psnr --frame_cnt 2 --json -o cache.json",
                  out, sizeof(out));
    CHECK(rc == 0, "garbage and FIFO cache entries: the kernels are built again (rc %d): %s", rc,
          out);
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
    check_cache();
    free(ref_y4m);
    snprintf(cmd, sizeof(cmd), "chmod -R u+rwx %s; rm -rf %s", dir, dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", dir);
    return test_finish();
}
