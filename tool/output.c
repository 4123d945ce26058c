/* Outputs written as the run goes: see output.h. */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qgpu/qgpu.h>

#include "input.h"
#include "output.h"

struct OutputStream {
    char *option, *path;
    FILE *f;
    int to_stdout;
    int error; /* errno of the first failed write, 0 */
};

static int stdout_closed;

int output_guard_std_fds(void)
{
    int closed = 0;
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        closed |= 1 << fd;
        /* open() returns the lowest free descriptor: this one */
        if (open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
            break;
    }
    stdout_closed = closed >> 1 & 1;
    return closed;
}

int output_stdout_closed(void)
{
    return stdout_closed;
}

int output_check(const char *option, const char *path, char *err, size_t err_len)
{
    char buf[256];
    const char *name = short_path(path, buf, sizeof(buf));
    int e;
    if (!strcmp(path, "-")) {
        if (stdout_closed) {
            snprintf(err, err_len, "%s -: cannot write: standard output is closed", option);
            return -1;
        }
        return 0;
    }
    e = qgpu_check_log_path(path);
    if (e) {
        snprintf(err, err_len, "%s %s: cannot write: %s", option, name,
                 e == EISDIR ? "is a directory" : strerror(e));
        return -1;
    }
    return 0;
}

int output_open(OutputStream **out, const char *option, const char *path, char *err,
                size_t err_len)
{
    char buf[256];
    OutputStream *s = calloc(1, sizeof(*s));
    *out = NULL;
    if (!s || !(s->option = strdup(option)) || !(s->path = strdup(path))) {
        if (s) {
            free(s->option);
            free(s);
        }
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    s->to_stdout = !strcmp(path, "-");
    s->f = s->to_stdout ? stdout : fopen(path, "w");
    if (!s->f) {
        snprintf(err, err_len, "%s %s: cannot write: %s", option,
                 short_path(path, buf, sizeof(buf)), strerror(errno));
        free(s->option);
        free(s->path);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

int output_write(OutputStream *s, const char *text, size_t len)
{
    if (s->error)
        return -1;
    errno = 0;
    if (fwrite(text, 1, len, s->f) != len || fflush(s->f)) {
        s->error = errno ? errno : EIO;
        return -1;
    }
    return 0;
}

int output_close(OutputStream **ps, char *err, size_t err_len)
{
    OutputStream *s = *ps;
    char buf[256];
    int e;
    if (!s)
        return 0;
    e = s->error;
    errno = 0;
    if (s->to_stdout ? fflush(s->f) : fclose(s->f))
        e = e ? e : errno ? errno : EIO;
    if (e)
        snprintf(err, err_len, "%s %s: write error: %s", s->option,
                 s->to_stdout ? "-" : short_path(s->path, buf, sizeof(buf)), strerror(e));
    free(s->option);
    free(s->path);
    free(s);
    *ps = NULL;
    return e ? -1 : 0;
}

void format_duration(char *buf, size_t len, double seconds)
{
    long s = lrint(seconds);
    if (s >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, len, "%ld:%02ld", s / 60, s % 60);
}
