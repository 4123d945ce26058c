/*
 * --hwdec auto's decisions on disk: see decoder_choice_file.h.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder_choice_file.h"
#include "hwdec.h"

/* The file grows by a line per new kind of pair; past this size it starts
 * over. */
#define MAX_FILE_BYTES (256 * 1024)

/* The cache directory, made when missing: 0, or -1 (no cache). */
static int cache_dir(char *out, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    const char *no_cache = getenv("QGPU_NO_CACHE");
    char parent[4096];
    int n;
    if (no_cache && *no_cache && strcmp(no_cache, "0"))
        return -1;
    if (xdg && *xdg)
        n = snprintf(parent, sizeof(parent), "%s", xdg);
    else if (home && *home)
        n = snprintf(parent, sizeof(parent), "%s/.cache", home);
    else
        return -1;
    if (n < 0 || (size_t)n >= sizeof(parent))
        return -1;
    n = snprintf(out, len, "%s/qgpu", parent);
    if (n < 0 || (size_t)n + 32 >= len)
        return -1;
    mkdir(parent, 0755);
    mkdir(out, 0755);
    return 0;
}

static int file_path(char *out, size_t len)
{
    const char *own = getenv("QGPU_HWDEC_CHOICES");
    const char *no_cache = getenv("QGPU_NO_CACHE");
    char dir[4096];
    if (own && *own) {
        if (no_cache && *no_cache && strcmp(no_cache, "0"))
            return -1;
        return snprintf(out, len, "%s", own) < (int)len ? 0 : -1;
    }
    if (cache_dir(dir, sizeof(dir)))
        return -1;
    return snprintf(out, len, "%s/hwdec-choices", dir) < (int)len ? 0 : -1;
}

/* "HOST PROCESSORS": the start of this machine's keys. */
static size_t host_text(char *out, size_t len)
{
    char host[256] = "?";
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = 0;
    for (char *c = host; *c; c++)
        if (*c == ' ' || *c == '\n')
            *c = '_';
    return (size_t)snprintf(out, len, "%s %ld", host, sysconf(_SC_NPROCESSORS_ONLN));
}

/* The key as one word-separated string (the host, its processors, both
 * inputs, the jobs at once). */
static void key_text(const DecoderChoiceKey *k, char *out, size_t len)
{
    size_t n = host_text(out, len);
    for (int i = 0; i < 2 && n < len; i++)
        n += (size_t)snprintf(out + n, len - n, " %d %d %d %d %s %d", k->in[i].codec_id,
                              k->in[i].profile, k->in[i].width, k->in[i].height,
                              *k->in[i].pix_fmt ? k->in[i].pix_fmt : "-",
                              k->in[i].rate_bucket);
    if (n < len)
        snprintf(out + n, len - n, " %d", k->host_jobs);
}

/* The start of a line's last n words. */
static const char *last_words(const char *line, int n)
{
    const char *p = line + strlen(line);
    while (p > line && (p[-1] == '\n' || p[-1] == ' '))
        p--;
    for (int i = 0; i < n; i++) {
        while (p > line && p[-1] != ' ')
            p--;
        while (i + 1 < n && p > line && p[-1] == ' ')
            p--;
    }
    return p;
}

/* The decision ("KEY MODE CPU HW": the last three words) of the last line
 * starting with `want` and a space: 1 and *out set, or 0. cpu_only: only
 * lines deciding for the CPU count (`want` then being the host part). */
static int scan(const char *want, int cpu_only, DecoderChoice *out)
{
    char path[4200], line[640];
    size_t klen = strlen(want);
    int found = 0;
    FILE *f;
    if (file_path(path, sizeof(path)) || !(f = fopen(path, "r")))
        return 0;
    while (fgets(line, sizeof(line), f)) {
        DecoderChoice c;
        char mode[16];
        if (strncmp(line, want, klen) || line[klen] != ' ' ||
            sscanf(last_words(line, 3), "%15s %lf %lf", mode, &c.cpu_pairs, &c.hw_pairs) != 3 ||
            (strcmp(mode, "cpu") && strcmp(mode, "cuda")))
            continue;
        c.mode = strcmp(mode, "cpu") ? HWDEC_CUDA : HWDEC_NONE;
        if (cpu_only && c.mode != HWDEC_NONE)
            continue;
        *out = c; /* the last line of the key wins */
        found = 1;
    }
    fclose(f);
    return found;
}

int decoder_choice_file_find(const DecoderChoiceKey *key, DecoderChoice *out)
{
    char want[512];
    key_text(key, want, sizeof(want));
    return scan(want, 0, out);
}

int decoder_choice_file_has_cpu(void)
{
    char want[512];
    DecoderChoice c;
    host_text(want, sizeof(want));
    return scan(want, 1, &c);
}

void decoder_choice_file_add(const DecoderChoiceKey *key, const DecoderChoice *choice)
{
    char path[4200], text[512], line[640];
    struct stat st;
    int fd, n, flags = O_WRONLY | O_CREAT | O_APPEND;
    if (file_path(path, sizeof(path)))
        return;
    if (!stat(path, &st) && st.st_size > MAX_FILE_BYTES)
        flags |= O_TRUNC;
    key_text(key, text, sizeof(text));
    n = snprintf(line, sizeof(line), "%s %s %.0f %.0f\n", text,
                 choice->mode == HWDEC_NONE ? "cpu" : "cuda", choice->cpu_pairs,
                 choice->hw_pairs);
    if (n <= 0 || (size_t)n >= sizeof(line) || (fd = open(path, flags, 0644)) < 0)
        return;
    /* one write of a short line: whole, also beside another process's */
    if (write(fd, line, (size_t)n) != n) {
        /* a cache: nothing to do */
    }
    close(fd);
}
