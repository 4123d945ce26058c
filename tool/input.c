/* Inputs as files or streams, and y4m header checks: see input.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/mem.h>

#include "input.h"

/* The first bytes of an input looked at (a y4m header must end before). */
#define PREFIX_MAX 4096
/* FFmpeg's y4m reader takes a header line of at most this many bytes,
 * newline included (MAX_YUV4_HEADER in libavformat/yuv4mpegdec.c). */
#define FFMPEG_Y4M_HEADER_MAX 96
#define STREAM_BUFFER 65536

struct InputSource {
    char *path;            /* as given */
    char *url;             /* "file:PATH" for FFmpeg, NULL for a stream */
    char name[256];        /* path for messages */
    int stream;
    int fd;                /* stream: our descriptor */
    AVIOContext *avio;     /* stream: reads prefix, then fd */
    unsigned char prefix[PREFIX_MAX];
    size_t prefix_len, prefix_pos;
    int is_y4m;
    Y4mHeader y4m;
    int aborted;           /* atomic */
};

static volatile sig_atomic_t *interrupt_flag;
static int stdin_closed;

void input_set_stdin_closed(void)
{
    stdin_closed = 1;
}

void input_set_interrupt(volatile sig_atomic_t *flag)
{
    interrupt_flag = flag;
}

static int stopped(InputSource *in)
{
    return __atomic_load_n(&in->aborted, __ATOMIC_RELAXED) ||
           (interrupt_flag && *interrupt_flag);
}

int input_interrupted(void *opaque)
{
    return opaque && stopped(opaque);
}

void input_abort(InputSource *in)
{
    if (in)
        __atomic_store_n(&in->aborted, 1, __ATOMIC_RELAXED);
}

const char *short_path(const char *path, char *buf, size_t len)
{
    size_t n = strlen(path);
    if (n <= 200 || len < 200)
        return path;
    snprintf(buf, len, "%.60s...%s", path, path + n - 130);
    return buf;
}

/* -------------------------------------------------------- y4m header */

static const char *const y4m_chroma[] = {
    /* the C values FFmpeg's y4m reader knows (libavformat/yuv4mpegdec.c) */
    "420jpeg", "420mpeg2", "420paldv", "420p16", "422p16", "444p16", "420p14", "422p14",
    "444p14", "420p12", "422p12", "444p12", "420p10", "422p10", "444p10", "420p9",
    "422p9", "444p9", "420", "411", "422", "444alpha", "444", "mono16", "mono12",
    "mono10", "mono9", "mono", NULL};

/* A whole decimal number, all of the token. */
static int token_int(const char *s, size_t n, long *out)
{
    char buf[32], *end;
    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    errno = 0;
    *out = strtol(buf, &end, 10);
    return *end || errno || *out < INT_MIN || *out > INT_MAX ? -1 : 0;
}

/* "N:D", both whole numbers. */
static int token_ratio(const char *s, size_t n, long *num, long *den)
{
    const char *colon = memchr(s, ':', n);
    if (!colon)
        return -1;
    return token_int(s, (size_t)(colon - s), num) ||
           token_int(colon + 1, n - (size_t)(colon - s) - 1, den);
}

/* Checks the header line (text, len bytes with its newline): 0, or -1
 * with the reason (naming the field) in why. */
static int parse_y4m(const char *text, size_t len, Y4mHeader *h, char *why, size_t why_len)
{
    long w = -1, ht = -1;
    const char *p = text + 9, *end = text + len - 1; /* after "YUV4MPEG2", before '\n' */
    memset(h, 0, sizeof(*h));
    h->range = -1;
    h->header_size = (int)len;
    while (p < end) {
        const char *tok;
        size_t n;
        if (*p == ' ') {
            p++;
            continue;
        }
        tok = p;
        while (p < end && *p != ' ')
            p++;
        n = (size_t)(p - tok);
#define FIELD (int)(n > 40 ? 40 : n), tok, n > 40 ? "..." : ""
        switch (tok[0]) {
        case 'W':
            if (token_int(tok + 1, n - 1, &w) || w < 1) {
                snprintf(why, why_len, "%.*s%s: the width must be a whole number >= 1", FIELD);
                return -1;
            }
            break;
        case 'H':
            if (token_int(tok + 1, n - 1, &ht) || ht < 1) {
                snprintf(why, why_len, "%.*s%s: the height must be a whole number >= 1", FIELD);
                return -1;
            }
            break;
        case 'F': {
            long num, den;
            if (token_ratio(tok + 1, n - 1, &num, &den) || !((num > 0 && den > 0) ||
                                                           (num == 0 && den == 0))) {
                snprintf(why, why_len, "%.*s%s: not a frame rate (expected F<num>:<den>, both "
                         "> 0, or F0:0 for unknown)", FIELD);
                return -1;
            }
            h->rate_num = (int)num;
            h->rate_den = (int)den;
            break;
        }
        case 'A': {
            long num, den;
            if (token_ratio(tok + 1, n - 1, &num, &den) || num < 0 || den < 0) {
                snprintf(why, why_len, "%.*s%s: not a pixel aspect ratio (expected "
                         "A<num>:<den>, or A0:0 for unknown)", FIELD);
                return -1;
            }
            break;
        }
        case 'I':
            if (n == 2 && tok[1] == 'm') {
                snprintf(why, why_len, "Im: mixed interlaced and progressive frames are not "
                         "supported");
                return -1;
            }
            if (n != 2 || !strchr("ptb?", tok[1])) {
                snprintf(why, why_len, "%.*s%s: unknown interlacing (expected Ip, It, Ib or "
                         "I?)", FIELD);
                return -1;
            }
            h->interlace = tok[1];
            break;
        case 'C': {
            int known = 0;
            for (int i = 0; y4m_chroma[i] && !known; i++)
                known = strlen(y4m_chroma[i]) == n - 1 && !memcmp(y4m_chroma[i], tok + 1, n - 1);
            if (!known) {
                snprintf(why, why_len, "%.*s%s: unknown colour space (known: C420jpeg, "
                         "C420mpeg2, C420paldv, C420, C411, C422, C444, C444alpha, Cmono, and "
                         "C420p9..C444p16, Cmono9..Cmono16)", FIELD);
                return -1;
            }
            snprintf(h->chroma, sizeof(h->chroma), "%.*s", (int)(n - 1), tok + 1);
            break;
        }
        case 'X':
            if (n == 16 && !memcmp(tok, "XCOLORRANGE=FULL", 16))
                h->range = 1;
            else if (n == 19 && !memcmp(tok, "XCOLORRANGE=LIMITED", 19))
                h->range = 0;
            break;
        default: /* unknown tags are ignored, as the format says */
            break;
        }
#undef FIELD
    }
    if (w < 0 || ht < 0) {
        snprintf(why, why_len, "no %s tag: the %s is required", w < 0 ? "W" : "H",
                 w < 0 ? "width" : "height");
        return -1;
    }
    if (av_image_check_size((unsigned)w, (unsigned)ht, 0, NULL) < 0 ||
        (int64_t)w * ht > (INT_MAX / 8)) {
        snprintf(why, why_len, "W%ld H%ld: %ldx%ld is too large", w, ht, w, ht);
        return -1;
    }
    if (len > FFMPEG_Y4M_HEADER_MAX) {
        snprintf(why, why_len, "the header line is %zu bytes long; FFmpeg's y4m reader takes "
                 "at most %d (drop some X tags)", len, FFMPEG_Y4M_HEADER_MAX);
        return -1;
    }
    h->width = (int)w;
    h->height = (int)ht;
    return 0;
}

/* When prefix (len bytes, complete: the whole input when it is shorter)
 * starts a y4m stream, checks its header. 0, or -1 with err set. */
static int check_y4m(InputSource *in, size_t len, int complete, char *err, size_t err_len)
{
    const unsigned char *nl;
    char why[512];
    if (len < 10 || memcmp(in->prefix, "YUV4MPEG2 ", 10))
        return 0;
    in->is_y4m = 1;
    nl = memchr(in->prefix, '\n', len);
    if (!nl) {
        snprintf(err, err_len, "%s: y4m header: %s", in->name,
                 complete ? "the file ends inside its header line"
                          : "no end of line in its first 4096 bytes");
        return -1;
    }
    if (parse_y4m((const char *)in->prefix, (size_t)(nl - in->prefix) + 1, &in->y4m, why,
                  sizeof(why))) {
        snprintf(err, err_len, "%s: y4m header: %s", in->name, why);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ streams */

static int stream_read(void *opaque, uint8_t *buf, int size)
{
    InputSource *in = opaque;
    if (in->prefix_pos < in->prefix_len) {
        size_t n = in->prefix_len - in->prefix_pos;
        if (n > (size_t)size)
            n = (size_t)size;
        memcpy(buf, in->prefix + in->prefix_pos, n);
        in->prefix_pos += n;
        return (int)n;
    }
    for (;;) {
        struct pollfd p = {in->fd, POLLIN, 0};
        ssize_t n;
        int r;
        if (stopped(in))
            return AVERROR_EXIT;
        r = poll(&p, 1, 200);
        if (r < 0 && errno != EINTR)
            return AVERROR(errno);
        if (r <= 0)
            continue;
        n = read(in->fd, buf, (size_t)size);
        if (n > 0)
            return (int)n;
        if (n == 0)
            return AVERROR_EOF;
        if (errno != EINTR && errno != EAGAIN)
            return AVERROR(errno);
    }
}

/* Reads the first bytes of a stream (until the end of a y4m header line,
 * or what the first read gives): they go to FFmpeg first. */
static int read_prefix(InputSource *in, int *complete, char *err, size_t err_len)
{
    *complete = 0;
    while (in->prefix_len < PREFIX_MAX) {
        struct pollfd p = {in->fd, POLLIN, 0};
        ssize_t n;
        int r;
        if (stopped(in)) {
            snprintf(err, err_len, "%s: interrupted while reading", in->name);
            return -1;
        }
        r = poll(&p, 1, 200);
        if (r < 0 && errno != EINTR) {
            snprintf(err, err_len, "%s: cannot read: %s", in->name, strerror(errno));
            return -1;
        }
        if (r <= 0)
            continue;
        n = read(in->fd, in->prefix + in->prefix_len, PREFIX_MAX - in->prefix_len);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            snprintf(err, err_len, "%s: cannot read: %s", in->name, strerror(errno));
            return -1;
        }
        if (n == 0) {
            *complete = 1;
            break;
        }
        in->prefix_len += (size_t)n;
        /* enough to tell: not y4m, or the header line is complete */
        if ((in->prefix_len >= 10 && memcmp(in->prefix, "YUV4MPEG2 ", 10)) ||
            (in->prefix_len >= 1 && in->prefix[0] != 'Y') ||
            memchr(in->prefix, '\n', in->prefix_len))
            break;
    }
    return 0;
}

static int open_stream(InputSource *in, char *err, size_t err_len)
{
    int complete;
    unsigned char *buffer;
    if (read_prefix(in, &complete, err, err_len) ||
        check_y4m(in, in->prefix_len, complete, err, err_len))
        return -1;
    buffer = av_malloc(STREAM_BUFFER);
    if (buffer)
        in->avio = avio_alloc_context(buffer, STREAM_BUFFER, 0, in, stream_read, NULL, NULL);
    if (!in->avio) {
        av_free(buffer);
        snprintf(err, err_len, "%s: out of memory", in->name);
        return -1;
    }
    in->avio->seekable = 0;
    return 0;
}

/* ------------------------------------------------------------- files */

static int open_file(InputSource *in, const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    size_t len;
    in->url = malloc(strlen(path) + 6);
    if (!in->url) {
        if (f)
            fclose(f);
        snprintf(err, err_len, "%s: out of memory", in->name);
        return -1;
    }
    sprintf(in->url, "file:%s", path);
    if (!f) /* FFmpeg reports it */
        return 0;
    len = fread(in->prefix, 1, PREFIX_MAX, f);
    fclose(f);
    return check_y4m(in, len, len < PREFIX_MAX, err, err_len);
}

/* Is path a terminal? */
static int isatty_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), tty;
    if (fd < 0)
        return 0;
    tty = isatty(fd);
    close(fd);
    return tty;
}

int input_open(InputSource **out, const char *path, char *err, size_t err_len)
{
    InputSource *in;
    struct stat st;
    int stdin_ = !strcmp(path, "-");
    *out = NULL;
    if (!*path) {
        snprintf(err, err_len, "an input file name is empty");
        return -1;
    }
    in = calloc(1, sizeof(*in));
    if (!in || !(in->path = strdup(path))) {
        free(in);
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    in->fd = -1;
    {
        char buf[sizeof(in->name)];
        snprintf(in->name, sizeof(in->name), "%s",
                 stdin_ ? "standard input" : short_path(path, buf, sizeof(buf)));
    }
    if (stdin_ && stdin_closed) {
        snprintf(err, err_len, "standard input: cannot read: it is closed");
        input_close(&in);
        return -1;
    }
    if (stdin_ ? fstat(0, &st) : stat(path, &st)) {
        int e = errno;
        /* a name FFmpeg expands itself (an image sequence "img%03d.png") or
         * a URL: FFmpeg opens it, and says why it cannot */
        if (e == ENOENT && !stdin_ && (strchr(path, '%') || strstr(path, "://"))) {
            in->url = strdup(path);
            if (in->url) {
                *out = in;
                return 0;
            }
        }
        snprintf(err, err_len, "%s: cannot open: %s", in->name, strerror(e));
        input_close(&in);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, err_len, "%s: cannot open: %s", in->name, strerror(EISDIR));
        input_close(&in);
        return -1;
    }
    if (S_ISREG(st.st_mode)) {
        /* standard input redirected from a file (<) is read as that file,
         * seekable, through /dev/stdin (a new description: fd 0 untouched) */
        if (open_file(in, stdin_ ? "/dev/stdin" : path, err, err_len)) {
            input_close(&in);
            return -1;
        }
        *out = in;
        return 0;
    }
    if (stdin_ ? isatty(0) : S_ISCHR(st.st_mode) && isatty_path(path)) {
        snprintf(err, err_len, "%s: cannot read video from a terminal (pipe or redirect a "
                 "file into it)", in->name);
        input_close(&in);
        return -1;
    }
    in->stream = 1;
    /* non-blocking: a FIFO without a writer yet does not block the open
     * (the reads wait in poll(), which an interruption stops) */
    in->fd = stdin_ ? dup(0) : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (in->fd < 0) {
        snprintf(err, err_len, "%s: cannot open: %s", in->name,
                 errno == EINTR ? "interrupted" : strerror(errno));
        input_close(&in);
        return -1;
    }
    if (open_stream(in, err, err_len)) {
        input_close(&in);
        return -1;
    }
    *out = in;
    return 0;
}

const char *input_url(const InputSource *in)
{
    return in->stream ? NULL : in->url;
}

AVIOContext *input_avio(const InputSource *in)
{
    return in->avio;
}

int input_is_stream(const InputSource *in)
{
    return in->stream;
}

const Y4mHeader *input_y4m(const InputSource *in)
{
    return in->is_y4m ? &in->y4m : NULL;
}

const char *input_name(const InputSource *in)
{
    return in->name;
}

void input_close(InputSource **pin)
{
    InputSource *in = *pin;
    if (!in)
        return;
    if (in->avio) {
        av_freep(&in->avio->buffer);
        avio_context_free(&in->avio);
    }
    if (in->fd >= 0)
        close(in->fd);
    free(in->path);
    free(in->url);
    free(in);
    *pin = NULL;
}

static int stat_input(const char *path, struct stat *st)
{
    return !strcmp(path, "-") ? fstat(0, st) : stat(path, st);
}

int input_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat_input(a, &sa) || stat_input(b, &sb))
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
