/*
 * Where an input's bytes come from, before any demuxer sees them.
 *
 * - A regular file is opened by FFmpeg by name, as "file:NAME" so that a
 *   name with a ':' is never taken for a protocol.
 * - A stream (a pipe, a FIFO, "-" or /dev/stdin, a process substitution
 *   /dev/fd/N, a character device) is read exactly once, through our own
 *   AVIOContext over its file descriptor: its first bytes are read here
 *   (to check a y4m header) and handed to FFmpeg afterwards. Reads wait at
 *   most 0.2 s at a time, so an interruption (input_set_interrupt, or
 *   input_abort) stops a read blocked on a stalled pipe.
 * - A y4m header (a file or stream starting "YUV4MPEG2 ") is checked
 *   field by field before FFmpeg's reader, which accepts impossible
 *   values or invents them (a zero or missing frame rate becomes 25 fps).
 */
#ifndef QGPU_TOOL_INPUT_H
#define QGPU_TOOL_INPUT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <libavformat/avio.h>

typedef struct InputSource InputSource;

/* A y4m stream header, as checked. */
typedef struct Y4mHeader {
    int width, height;
    int rate_num, rate_den;  /* 0:0 when the header has none (F0:0 or no F) */
    char chroma[16];         /* the C tag's value, "" when absent (4:2:0) */
    char interlace;          /* the I tag: 'p', 't', 'b', '?', 0 when absent */
    int range;               /* XCOLORRANGE: 1 FULL, 0 LIMITED, -1 absent */
    int header_size;         /* bytes of the header line, newline included */
} Y4mHeader;

/* Opens path ("-" is standard input). 0, or -1 with a message in err
 * ("NAME: cannot open: REASON", "NAME: y4m header: W0: ..."). */
int input_open(InputSource **in, const char *path, char *err, size_t err_len);

/* What to give avformat_open_input: the name (NULL when the input is read
 * through input_avio()). */
const char *input_url(const InputSource *in);

/* The AVIOContext of a stream (owned by the input), NULL for a file. */
AVIOContext *input_avio(const InputSource *in);

/* 1 for a pipe, FIFO, socket or character device. */
int input_is_stream(const InputSource *in);

/* The checked y4m header, NULL when the input is not y4m. */
const Y4mHeader *input_y4m(const InputSource *in);

/* The path as given, shortened for messages when it is very long. */
const char *input_name(const InputSource *in);

/* Makes every later read of the input fail (AVERROR_EXIT), also one that
 * is waiting for data; safe from another thread. */
void input_abort(InputSource *in);

/* An FFmpeg interrupt callback (AVIOInterruptCB) for the input's format
 * context: 1 once the input was aborted or interrupted. */
int input_interrupted(void *in);

/* Reads of every input stop when *flag becomes non-zero (a signal
 * handler's flag). */
void input_set_interrupt(volatile sig_atomic_t *flag);

/* Standard input was closed when the program started: "-" is refused. */
void input_set_stdin_closed(void);

void input_close(InputSource **in);

/* Do two paths name the same file (the same device and inode, through any
 * link; "-" is standard input)? 0 when either does not exist. */
int input_same_file(const char *a, const char *b);

/* path for a message: itself, or when longer than 200 bytes its first 60
 * and last 130 bytes around "...", so the reason after it is never cut. */
const char *short_path(const char *path, char *buf, size_t len);

#endif
