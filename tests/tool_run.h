/*
 * Shared by the tool's tests (test_tool, test_tool_errors): finding the
 * built qgpu binary, running it with its output captured, and writing
 * synthetic encoded clips for it with libavcodec/libavformat.
 */
#ifndef QGPU_TESTS_TOOL_RUN_H
#define QGPU_TESTS_TOOL_RUN_H

#include <stddef.h>
#include <stdint.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

/* The qgpu binary: $QGPU_BUILD/qgpu, else next to the test's directory
 * (BUILD/tests/test_x -> BUILD/qgpu), else ./build/qgpu. Its absolute path
 * goes to tool; returns 0 when none is found. */
int tool_find(const char *argv0, char *tool, size_t len);

/* The start of a tool test's main: the qgpu binary's absolute path in
 * tool, the absolute fate/ directory in fate (from $QGPU_SRC), the
 * temporary directory dir (a mkdtemp template) created. Each failure is a
 * failed check; returns 1 when all went well. */
int tool_test_setup(const char *argv0, char *tool, size_t tool_len, char *fate,
                    size_t fate_len, char *dir);

/* The end of a tool test's main: removes dir and everything in it. */
void tool_test_cleanup(const char *dir);

/* Runs `cd DIR && [env ENV] [timeout -k 5 LIMIT] TOOL ARGS` with stdout in
 * DIR/stdout.txt and stderr in DIR/stderr.txt, then copied into err (len
 * bytes at most, NUL-terminated). env NULL or "": no env; limit_s 0: no
 * time limit. Returns the exit status, 1000 + the signal when the shell
 * died of one. */
int tool_run(const char *tool, const char *dir, const char *env, int limit_s, const char *args,
             char *err, size_t len);

/* Sample of synthetic content number c (distinct per c, smooth enough to
 * encode well). */
uint8_t tool_content(int c, int plane, int x, int y);

/* Writes the file of oc (an output context for path, its stream set up,
 * the header not written yet): the header, n packets of size bytes, each
 * filled in by fill(opaque, i, pkt, st) (data, timestamps, flags), the
 * trailer. Frees oc. Returns 0, -1 on an error. */
int tool_write_packets(AVFormatContext *oc, const char *path, int n, int size,
                       void (*fill)(void *opaque, int i, AVPacket *pkt, const AVStream *st),
                       void *opaque);

/* Encodes n planar YUV frames with enc (opened), frame
 * i showing content i % 50 and having pts i in enc's time base, into the
 * NUT file path: the stream in time base tb at 1 / enc's time base frames
 * a second. Packets whose pts lies in bad_from..bad_to (enc's time base)
 * are overwritten with bytes no decoder takes; every timestamp is moved by
 * start seconds. Returns 0, -1 on an error. */
int tool_encode_nut(const char *path, AVCodecContext *enc, AVRational tb, int n, double start,
                    int bad_from, int bad_to);

/* The same into a file of another format (FFmpeg's muxer name: "mp4"...). */
int tool_encode_file(const char *path, const char *format, AVCodecContext *enc, AVRational tb,
                     int n, double start, int bad_from, int bad_to);

#endif
