/* qgpu_check_log_path: can a log be written at a path? (qgpu.h) Asked
 * before any frame is scored, by the tool for -o/--log-stream and by the
 * filter for log_path, so that a run never ends with its log lost. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qgpu/qgpu.h"

/* Can a new file be created in dir? Tried for real (a file created and
 * removed at once): permissions alone do not tell on a read-only or
 * special file system, for root. 0 or an errno. */
static int try_create(const char *dir)
{
    size_t len = strlen(dir) + 64;
    char *probe = malloc(len);
    int fd, e = 0;
    if (!probe)
        return ENOMEM;
    snprintf(probe, len, "%s/.qgpu-probe-%ld-%lx", dir, (long)getpid(), (long)random());
    fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        e = errno;
    else {
        close(fd);
        unlink(probe);
    }
    free(probe);
    return e;
}

int qgpu_check_log_path(const char *path)
{
    struct stat st;
    const char *slash;
    char *dir;
    int e = 0;
    if (!path || !*path)
        return EINVAL;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return EISDIR;
        if (S_ISREG(st.st_mode)) { /* opened without truncating it */
            int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
            if (fd < 0)
                return errno;
            close(fd);
            return 0;
        }
        return access(path, W_OK) ? errno : 0;
    }
    if (errno != ENOENT)
        return errno;
    /* a new file: its directory must exist and take files */
    slash = strrchr(path, '/');
    dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    e = dir ? try_create(dir) : ENOMEM;
    free(dir);
    return e;
}
