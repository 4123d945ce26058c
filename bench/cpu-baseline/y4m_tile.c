/*
 * y4m-tile: writes an 8-bit 4:2:0 y4m clip of a given size by tiling the
 * first frames of a small one, the way qgpu-bench tiles its input in memory
 * (sample (x, y) of a plane = source sample (x % w, y % h); output frame i =
 * tiled source frame i % S), so that the CPU baseline scores the same content
 * as the GPU benchmark. libc only; build it with -static to carry it.
 *
 *   y4m-tile IN.y4m OUT.y4m WIDTH HEIGHT FRAMES [SOURCE_FRAMES (8)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SOURCE 64

typedef struct Clip {
    int width, height;
    size_t frame_bytes;
    int count;
    unsigned char *frames[MAX_SOURCE];
} Clip;

static int chroma_w(int w) { return (w + 1) / 2; }
static int chroma_h(int h) { return (h + 1) / 2; }

static size_t frame_size(int w, int h)
{
    return (size_t)w * h + 2 * (size_t)chroma_w(w) * chroma_h(h);
}

/* Parses the header; only 8-bit 4:2:0 (C420, C420jpeg, C420mpeg2, C420paldv
 * or no C tag) is accepted. Returns 0 or -1. */
static int parse_header(char *header, int *w, int *h)
{
    char cs[64] = "420jpeg";
    if (strncmp(header, "YUV4MPEG2 ", 10))
        return -1;
    *w = *h = 0;
    for (char *tok = strtok(header + 10, " \n"); tok; tok = strtok(NULL, " \n")) {
        if (tok[0] == 'W')
            *w = atoi(tok + 1);
        else if (tok[0] == 'H')
            *h = atoi(tok + 1);
        else if (tok[0] == 'C')
            snprintf(cs, sizeof(cs), "%s", tok + 1);
    }
    if (strcmp(cs, "420") && strcmp(cs, "420jpeg") && strcmp(cs, "420mpeg2") &&
        strcmp(cs, "420paldv"))
        return -1;
    return *w > 0 && *h > 0 ? 0 : -1;
}

static void clip_free(Clip *c)
{
    for (int i = 0; i < c->count; i++)
        free(c->frames[i]);
    c->count = 0;
}

/* Reads up to max frames. Returns 0 or -1 (message printed). */
static int clip_read(Clip *c, const char *path, int max)
{
    char line[512];
    FILE *f = fopen(path, "rb");
    memset(c, 0, sizeof(*c));
    if (!f) {
        fprintf(stderr, "y4m-tile: %s: cannot open\n", path);
        return -1;
    }
    if (!fgets(line, sizeof(line), f) || parse_header(line, &c->width, &c->height)) {
        fprintf(stderr, "y4m-tile: %s: not an 8-bit 4:2:0 y4m file\n", path);
        fclose(f);
        return -1;
    }
    c->frame_bytes = frame_size(c->width, c->height);
    while (c->count < max && fgets(line, sizeof(line), f) && !strncmp(line, "FRAME", 5)) {
        unsigned char *buf = malloc(c->frame_bytes);
        if (!buf || fread(buf, 1, c->frame_bytes, f) != c->frame_bytes) {
            free(buf);
            break;
        }
        c->frames[c->count++] = buf;
    }
    fclose(f);
    if (c->count == 0) {
        fprintf(stderr, "y4m-tile: %s: no frame\n", path);
        return -1;
    }
    return 0;
}

/* Tiles one source plane (sw x sh) into dst (w x h). */
static void tile_plane(const unsigned char *src, int sw, int sh, unsigned char *dst, int w, int h)
{
    for (int y = 0; y < h; y++) {
        const unsigned char *srow = src + (size_t)sw * (y % sh);
        unsigned char *drow = dst + (size_t)w * y;
        for (int x = 0; x < w; x++)
            drow[x] = srow[x % sw];
    }
}

static void tile_frame(const Clip *c, const unsigned char *src, unsigned char *dst, int w, int h)
{
    int sw = c->width, sh = c->height;
    const unsigned char *su = src + (size_t)sw * sh;
    const unsigned char *sv = su + (size_t)chroma_w(sw) * chroma_h(sh);
    unsigned char *du = dst + (size_t)w * h;
    unsigned char *dv = du + (size_t)chroma_w(w) * chroma_h(h);
    tile_plane(src, sw, sh, dst, w, h);
    tile_plane(su, chroma_w(sw), chroma_h(sh), du, chroma_w(w), chroma_h(h));
    tile_plane(sv, chroma_w(sw), chroma_h(sh), dv, chroma_w(w), chroma_h(h));
}

static int write_clip(const Clip *c, const char *path, int w, int h, int frames)
{
    size_t bytes = frame_size(w, h);
    unsigned char *tiled[MAX_SOURCE] = {0};
    int ok = 1;
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "y4m-tile: %s: cannot create\n", path);
        return -1;
    }
    for (int i = 0; i < c->count && ok; i++) {
        tiled[i] = malloc(bytes);
        ok = tiled[i] != NULL;
        if (ok)
            tile_frame(c, c->frames[i], tiled[i], w, h);
    }
    if (ok)
        ok = fprintf(f, "YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C420jpeg\n", w, h) > 0;
    for (int i = 0; i < frames && ok; i++)
        ok = fputs("FRAME\n", f) >= 0 && fwrite(tiled[i % c->count], 1, bytes, f) == bytes;
    if (fclose(f))
        ok = 0;
    for (int i = 0; i < c->count; i++)
        free(tiled[i]);
    if (!ok)
        fprintf(stderr, "y4m-tile: %s: write failed\n", path);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    Clip clip;
    int w, h, frames, sources = 8, rc;
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: y4m-tile IN.y4m OUT.y4m WIDTH HEIGHT FRAMES [SOURCE_FRAMES (8)]\n");
        return 2;
    }
    w = atoi(argv[3]);
    h = atoi(argv[4]);
    frames = atoi(argv[5]);
    if (argc == 7)
        sources = atoi(argv[6]);
    if (w <= 0 || h <= 0 || frames <= 0 || sources <= 0 || sources > MAX_SOURCE) {
        fprintf(stderr, "y4m-tile: bad size, frame count or source frame count\n");
        return 2;
    }
    if (clip_read(&clip, argv[1], sources))
        return 1;
    rc = write_clip(&clip, argv[2], w, h, frames);
    clip_free(&clip);
    return rc ? 1 : 0;
}
