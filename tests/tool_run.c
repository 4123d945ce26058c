/*
 * The tool's tests' shared helpers (see tool_run.h).
 */
#include "tool_run.h"
#include "test_util.h"

#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Sets tool to the absolute path of candidate when it is an executable. */
static int try_tool(const char *candidate, char *tool, size_t len)
{
    char real[PATH_MAX];
    if (access(candidate, X_OK) || !realpath(candidate, real))
        return 0;
    snprintf(tool, len, "%s", real);
    return 1;
}

int tool_find(const char *argv0, char *tool, size_t len)
{
    const char *b = getenv("QGPU_BUILD");
    char tmp[PATH_MAX], path[PATH_MAX + 16];
    if (b && *b) {
        snprintf(path, sizeof(path), "%s/qgpu", b);
        if (try_tool(path, tool, len))
            return 1;
    }
    snprintf(tmp, sizeof(tmp), "%s", argv0);
    snprintf(path, sizeof(path), "%s/../qgpu", dirname(tmp));
    return try_tool(path, tool, len) || try_tool("build/qgpu", tool, len);
}

int tool_test_setup(const char *argv0, char *tool, size_t tool_len, char *fate,
                    size_t fate_len, char *dir)
{
    char rel[1024], real[PATH_MAX];
    if (!CHECK(tool_find(argv0, tool, tool_len), "the qgpu binary (set QGPU_BUILD)"))
        return 0;
    if (!CHECK(realpath(test_src_path("fate", rel, sizeof(rel)), real) && access(real, R_OK) == 0,
               "the fate/ directory (set QGPU_SRC to the source tree)"))
        return 0;
    snprintf(fate, fate_len, "%s", real);
    return CHECK(mkdtemp(dir) != NULL, "temporary directory");
}

void tool_test_cleanup(const char *dir)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", dir);
}

int tool_run(const char *tool, const char *dir, const char *env, int limit_s, const char *args,
             char *err, size_t len)
{
    char cmd[8192], path[1200], limit[64] = "";
    FILE *f;
    size_t n;
    int st;
    snprintf(path, sizeof(path), "%s/stderr.txt", dir);
    if (limit_s > 0)
        snprintf(limit, sizeof(limit), "timeout -k 5 %d ", limit_s);
    snprintf(cmd, sizeof(cmd), "cd %s && env %s %s%s %s 2>%s >%s/stdout.txt", dir,
             env ? env : "", limit, tool, args, path, dir);
    st = system(cmd);
    err[0] = 0;
    if ((f = fopen(path, "r"))) {
        n = fread(err, 1, len - 1, f);
        err[n] = 0;
        fclose(f);
    }
    if (WIFSIGNALED(st))
        return 1000 + WTERMSIG(st);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

uint8_t tool_content(int c, int plane, int x, int y)
{
    double v = 128 + 90 * sin(x * 0.21 + c * 1.3 + plane) * cos(y * 0.17 - c * 0.7);
    return (uint8_t)lrint(v);
}

/* avio_open() and the header, when ret (the status so far) is >= 0. */
static int start_output(AVFormatContext *oc, const char *path, int ret)
{
    if (ret >= 0)
        ret = avio_open(&oc->pb, path, AVIO_FLAG_WRITE);
    if (ret >= 0)
        ret = avformat_write_header(oc, NULL);
    return ret;
}

/* The trailer when ret >= 0; closes and frees oc. Returns 0 or -1. */
static int end_output(AVFormatContext *oc, int ret)
{
    if (ret >= 0)
        ret = av_write_trailer(oc);
    if (oc)
        avio_closep(&oc->pb);
    avformat_free_context(oc);
    return ret < 0 ? -1 : 0;
}

int tool_write_packets(AVFormatContext *oc, const char *path, int n, int size,
                       void (*fill)(void *opaque, int i, AVPacket *pkt, const AVStream *st),
                       void *opaque)
{
    int ret = start_output(oc, path, 0);
    for (int i = 0; ret >= 0 && i < n; i++) {
        AVPacket *pkt = av_packet_alloc();
        if (!pkt || av_new_packet(pkt, size) < 0) {
            av_packet_free(&pkt);
            ret = -1;
            break;
        }
        fill(opaque, i, pkt, oc->streams[0]);
        ret = av_interleaved_write_frame(oc, pkt);
        av_packet_free(&pkt);
    }
    return end_output(oc, ret);
}

/* Frame i's picture (content i % 50) into frame (planar YUV). */
static void fill_av_frame(AVFrame *frame, int i)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(frame->format);
    av_frame_make_writable(frame);
    for (int p = 0; p < 3; p++) {
        int w = p ? AV_CEIL_RSHIFT(frame->width, d->log2_chroma_w) : frame->width;
        int h = p ? AV_CEIL_RSHIFT(frame->height, d->log2_chroma_h) : frame->height;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                frame->data[p][y * frame->linesize[p] + x] = tool_content(i % 50, p, x, y);
    }
}

int tool_encode_nut(const char *path, AVCodecContext *enc, AVRational tb, int n, double start,
                    int bad_from, int bad_to)
{
    return tool_encode_file(path, "nut", enc, tb, n, start, bad_from, bad_to);
}

int tool_encode_file(const char *path, const char *format, AVCodecContext *enc, AVRational tb,
                     int n, double start, int bad_from, int bad_to)
{
    AVFormatContext *oc = NULL;
    AVStream *st;
    AVFrame *frame = av_frame_alloc();
    AVPacket *pkt = av_packet_alloc();
    int64_t shift = 0;
    int ret = frame && pkt ? avformat_alloc_output_context2(&oc, NULL, format, path) : -1;
    st = ret >= 0 ? avformat_new_stream(oc, NULL) : NULL;
    if (!st)
        ret = -1;
    if (ret >= 0)
        ret = avcodec_parameters_from_context(st->codecpar, enc);
    if (ret >= 0) {
        st->time_base = tb;
        st->avg_frame_rate = st->r_frame_rate = av_inv_q(enc->time_base);
    }
    ret = start_output(oc, path, ret);
    if (ret >= 0) {
        shift = llrint(start / av_q2d(st->time_base));
        frame->format = enc->pix_fmt;
        frame->width = enc->width;
        frame->height = enc->height;
        ret = av_frame_get_buffer(frame, 0);
    }
    for (int i = 0; ret >= 0 && i <= n; i++) {
        if (i < n) {
            fill_av_frame(frame, i);
            frame->pts = i;
        }
        ret = avcodec_send_frame(enc, i < n ? frame : NULL);
        while (ret >= 0 && (ret = avcodec_receive_packet(enc, pkt)) >= 0) {
            if (pkt->pts >= bad_from && pkt->pts <= bad_to)
                memset(pkt->data, 0xAA, (size_t)pkt->size);
            av_packet_rescale_ts(pkt, enc->time_base, st->time_base);
            pkt->pts += shift;
            pkt->dts += shift;
            pkt->stream_index = 0;
            ret = av_interleaved_write_frame(oc, pkt);
        }
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            ret = 0;
    }
    av_packet_free(&pkt);
    av_frame_free(&frame);
    return end_output(oc, ret);
}
