/*
 * qgpu-bench: frames per second of each metric set through the public
 * submit/collect API, next to the machine's limit for frames that come from
 * host memory (the pinned host-to-device copy), measured in the same run.
 *
 *   qgpu-bench -r REF.y4m -d DIST.y4m [--cases LIST] [--sizes 1080p,2160p]
 *              [--bits 8,10] [--seconds S] [--frames N] [--device SPEC]
 *              [--depth N] [--path pinned|staging|both] [--warmup S]
 *
 * Frames are read once, tiled to the target size, converted to the target
 * bit depth (<< 2 for 10-bit, as the 10-bit goldens were made) and kept in
 * host memory; each case then scores them round-robin for S seconds, three
 * times; the table gives the median. Before the first case the device runs
 * that case untimed for --warmup seconds (default 1), so a device that
 * starts at idle clocks does not make the first row read low. QGPU_PROFILE=1 adds per-kernel device
 * times (profiling events; slower); QGPU_TIMING=1 prints the library's split
 * of the last run's submits (host seconds enqueueing copies and kernels,
 * waiting for results, collecting).
 *
 * --path: how the frames reach the library. "pinned" (the default): each
 * run copies them once, before its timing starts, into pinned blocks of
 * its context (qgpu_pinned_picture_alloc) and submits them with
 * qgpu_submit_pinned(), so the device reads them where they are.
 * "staging": from ordinary host memory with qgpu_submit(), which copies
 * each pair into the library's pinned staging memory first. "both": a row
 * for each.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qgpu/qgpu.h"

#include "stats.h"
#include "y4m.h"

#define MAX_FRAMES 64
#define MAX_CASES 32
#define MAX_SPECS 32

typedef struct FrameSet {
    int count;
    unsigned char *ref[MAX_FRAMES];
    unsigned char *dist[MAX_FRAMES];
    QgpuPicture ref_pic[MAX_FRAMES];
    QgpuPicture dist_pic[MAX_FRAMES];
    /* the same frames in pinned blocks of one context (--path pinned) */
    QgpuPinned *ref_block[MAX_FRAMES];
    QgpuPinned *dist_block[MAX_FRAMES];
    QgpuPicture ref_pinned[MAX_FRAMES];
    QgpuPicture dist_pinned[MAX_FRAMES];
} FrameSet;

enum { PATH_STAGING = 1, PATH_PINNED = 2 };

typedef struct Case {
    char label[64];
    char specs[MAX_SPECS][256];
    int nb_specs;
} Case;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Reads up to `count` frames of a y4m file into packed buffers. */
static int read_frames(const char *path, int count, unsigned char **frames, Y4mFile *info)
{
    char err[512];
    int n = 0;
    if (y4m_open(info, path, err, sizeof(err))) {
        fprintf(stderr, "qgpu-bench: %s\n", err);
        return -1;
    }
    while (n < count) {
        frames[n] = malloc(info->frame_bytes);
        if (!frames[n] || y4m_read(info, frames[n]) != 1) {
            free(frames[n]);
            break;
        }
        n++;
    }
    y4m_close(info);
    if (n == 0)
        fprintf(stderr, "qgpu-bench: %s: no frame\n", path);
    return n;
}

/* Tiles a source picture to w x h and converts to `bits`. Returns a packed
 * buffer (planes back to back) described by pic. */
static unsigned char *tile(const QgpuPicture *src, int w, int h, int bits, QgpuPicture *pic)
{
    int bps = bits > 8 ? 2 : 1, src_bps = src->bitdepth > 8 ? 2 : 1;
    int shift = bits - src->bitdepth;
    int planes = src->layout == QGPU_LAYOUT_400 ? 1 : 3;
    int ss_x = src->layout == QGPU_LAYOUT_420 || src->layout == QGPU_LAYOUT_422;
    int ss_y = src->layout == QGPU_LAYOUT_420;
    size_t total = 0, offset[3];
    unsigned char *buf;

    memset(pic, 0, sizeof(*pic));
    pic->width = w;
    pic->height = h;
    pic->layout = src->layout;
    pic->bitdepth = bits;
    for (int p = 0; p < planes; p++) {
        int pw = p && ss_x ? (w + 1) / 2 : w, ph = p && ss_y ? (h + 1) / 2 : h;
        offset[p] = total;
        pic->stride[p] = (ptrdiff_t)pw * bps;
        total += (size_t)pw * ph * bps;
    }
    buf = malloc(total);
    if (!buf)
        return NULL;
    for (int p = 0; p < planes; p++) {
        int pw = p && ss_x ? (w + 1) / 2 : w, ph = p && ss_y ? (h + 1) / 2 : h;
        int sw = p && ss_x ? (src->width + 1) / 2 : src->width;
        int sh = p && ss_y ? (src->height + 1) / 2 : src->height;
        pic->data[p] = buf + offset[p];
        for (int y = 0; y < ph; y++) {
            const unsigned char *srow =
                (const unsigned char *)src->data[p] + src->stride[p] * (y % sh);
            unsigned char *drow = buf + offset[p] + pic->stride[p] * y;
            for (int x = 0; x < pw; x++) {
                unsigned v = src_bps == 1 ? srow[x % sw] : ((const uint16_t *)srow)[x % sw];
                v = shift >= 0 ? v << shift : v >> -shift;
                if (bps == 1)
                    drow[x] = (unsigned char)v;
                else
                    ((uint16_t *)drow)[x] = (uint16_t)v;
            }
        }
    }
    return buf;
}

/* A pinned copy of a picture, in a new block of the context. */
static int pin_picture(QgpuContext *ctx, const QgpuPicture *src, QgpuPicture *dst,
                       QgpuPinned **block)
{
    int bps = src->bitdepth > 8 ? 2 : 1;
    int planes = src->layout == QGPU_LAYOUT_400 ? 1 : 3;
    int ss_x = src->layout == QGPU_LAYOUT_420 || src->layout == QGPU_LAYOUT_422;
    int ss_y = src->layout == QGPU_LAYOUT_420;
    int err = qgpu_pinned_picture_alloc(ctx, src->width, src->height, src->layout,
                                        src->bitdepth, 64, 0, dst, block);
    if (err)
        return err;
    for (int p = 0; p < planes; p++) {
        int pw = p && ss_x ? (src->width + 1) / 2 : src->width;
        int ph = p && ss_y ? (src->height + 1) / 2 : src->height;
        for (int y = 0; y < ph; y++)
            memcpy((unsigned char *)dst->data[p] + dst->stride[p] * y,
                   (const unsigned char *)src->data[p] + src->stride[p] * y, (size_t)pw * bps);
    }
    return 0;
}

static void frameset_unpin(FrameSet *s)
{
    for (int i = 0; i < MAX_FRAMES; i++) {
        qgpu_pinned_unref(&s->ref_block[i]);
        qgpu_pinned_unref(&s->dist_block[i]);
    }
}

static int frameset_pin(QgpuContext *ctx, FrameSet *s)
{
    for (int i = 0; i < s->count; i++) {
        if (pin_picture(ctx, &s->ref_pic[i], &s->ref_pinned[i], &s->ref_block[i]) ||
            pin_picture(ctx, &s->dist_pic[i], &s->dist_pinned[i], &s->dist_block[i])) {
            frameset_unpin(s);
            return -1;
        }
    }
    return 0;
}

static int submit(QgpuContext *ctx, const FrameSet *set, int i, int path)
{
    if (path == PATH_PINNED)
        return qgpu_submit_pinned(ctx, &set->ref_pinned[i], set->ref_block[i],
                                  &set->dist_pinned[i], set->dist_block[i]);
    return qgpu_submit(ctx, &set->ref_pic[i], &set->dist_pic[i]);
}

static void frameset_free(FrameSet *s)
{
    for (int i = 0; i < s->count; i++) {
        free(s->ref[i]);
        free(s->dist[i]);
    }
    s->count = 0;
}

/* Pinned host -> device copy bandwidth of the context's device, GB/s, on
 * an in-order queue of its own (as the library's upload queue is). */
static double measure_h2d(QgpuContext *ctx)
{
    const size_t bytes = 256u << 20;
    QgpuStats stats;
    cl_int status;
    cl_command_queue queue;
    cl_mem pinned = NULL, device = NULL;
    double best = 0.0;
    void *host;

    qgpu_stats_get(ctx, &stats);
    queue = clCreateCommandQueue(stats.cl, stats.device, 0, &status);
    if (status != CL_SUCCESS)
        return 0.0;
    pinned = clCreateBuffer(stats.cl, CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &status);
    device = clCreateBuffer(stats.cl, CL_MEM_READ_WRITE, bytes, NULL, &status);
    if (!pinned || !device)
        goto out;
    host = clEnqueueMapBuffer(queue, pinned, CL_TRUE, CL_MAP_WRITE, 0, bytes, 0, NULL, NULL,
                              &status);
    if (status != CL_SUCCESS)
        goto out;
    memset(host, 1, bytes);
    for (int run = 0; run < 6; run++) {
        double t0 = now();
        for (int i = 0; i < 4; i++)
            clEnqueueWriteBuffer(queue, device, CL_FALSE, 0, bytes, host, 0, NULL, NULL);
        clFinish(queue);
        double gbps = 4.0 * bytes / (now() - t0) / 1e9;
        if (run > 0 && gbps > best) /* run 0 warms up */
            best = gbps;
    }
    clEnqueueUnmapMemObject(queue, pinned, host, 0, NULL, NULL);
    clFinish(queue);
out:
    if (pinned)
        clReleaseMemObject(pinned);
    if (device)
        clReleaseMemObject(device);
    clReleaseCommandQueue(queue);
    return best;
}

static int enable_case(QgpuContext *ctx, const Case *c)
{
    for (int i = 0; i < c->nb_specs; i++) {
        int is_model = !strncmp(c->specs[i], "model:", 6);
        int err = is_model ? qgpu_use_model(ctx, c->specs[i] + 6)
                           : qgpu_enable_feature(ctx, c->specs[i]);
        if (err) {
            fprintf(stderr, "qgpu-bench: %s: %s: %s\n", c->label, c->specs[i],
                    qgpu_last_error(ctx));
            return -1;
        }
    }
    return 0;
}

/* Scores frames round-robin for `seconds`; returns fps or -1. */
static double timed_run(QgpuContext *ctx, const FrameSet *set, int path, double seconds,
                        int warmup, unsigned *frames_done)
{
    unsigned submitted = 0, frame;
    double t0 = 0.0, elapsed;
    for (int i = 0; i < warmup; i++) {
        if (submit(ctx, set, i % set->count, path))
            return -1;
        while (qgpu_collect(ctx, &frame, 0) == 1)
            ;
    }
    t0 = now();
    do {
        for (int k = 0; k < 8; k++, submitted++) {
            int i = (int)(submitted % set->count);
            if (submit(ctx, set, i, path))
                return -1;
            while (qgpu_collect(ctx, &frame, 0) == 1)
                ;
        }
        elapsed = now() - t0;
    } while (elapsed < seconds);
    if (qgpu_flush(ctx))
        return -1;
    while (qgpu_collect(ctx, &frame, 1) == 1)
        ;
    elapsed = now() - t0;
    *frames_done = submitted;
    return submitted / elapsed;
}

/* QGPU_TIMING=1: the library's split of the submits, logged at flush */
static void log_to_stderr(void *opaque, int level, const char *message)
{
    (void)opaque;
    (void)level;
    fprintf(stderr, "  %s\n", message);
}

typedef struct Options {
    const char *device;
    int depth;
    double seconds;
    double warmup; /* untimed seconds before the first case */
} Options;

/* A context for case c: opened (QGPU_TIMING's log to stderr when `log`),
 * the pinned H2D bandwidth measured into *h2d by the first one, the case's
 * features enabled and, on the pinned path, the frames pinned. 0 with
 * *ctx ready; 1 when the case fails (reported; *ctx still to close); -1
 * when no context opens (reported). */
static int case_open(const Case *c, FrameSet *set, int path, const Options *opts, int log,
                     double *h2d, QgpuContext **ctx)
{
    QgpuConfig cfg;

    qgpu_config_default(&cfg);
    cfg.device = opts->device;
    cfg.pipeline_depth = opts->depth;
    if (log) {
        cfg.log_callback = log_to_stderr;
        cfg.log_level = QGPU_LOG_INFO;
    }
    if (qgpu_open(ctx, &cfg)) {
        fprintf(stderr, "qgpu-bench: %s\n", qgpu_open_error());
        return -1;
    }
    if (*h2d == 0.0) {
        *h2d = measure_h2d(*ctx);
        fprintf(stderr, "device: %s (%s); pinned H2D %.2f GB/s\n", qgpu_device_name(*ctx),
                qgpu_platform_name(*ctx), *h2d);
    }
    if (enable_case(*ctx, c))
        return 1;
    if (path == PATH_PINNED && frameset_pin(*ctx, set)) {
        fprintf(stderr, "qgpu-bench: %s: pinned pictures: %s\n", c->label,
                qgpu_last_error(*ctx));
        return 1;
    }
    return 0;
}

/* Runs a case untimed for opts->warmup seconds, so the device's clocks are
 * up before the first measured run. 0, or -1 when no context opens
 * (reported); a case that fails is reported and left to its measured run. */
static int warm_up(const Case *c, FrameSet *set, int path, const Options *opts, double *h2d)
{
    QgpuContext *ctx = NULL;
    unsigned frames = 0;
    double fps = 0.0;
    int err = case_open(c, set, path, opts, 0, h2d, &ctx);

    if (err < 0)
        return -1;
    if (err == 0)
        fps = timed_run(ctx, set, path, opts->warmup, 2 * opts->depth + 2, &frames);
    qgpu_close(&ctx);
    frameset_unpin(set);
    fprintf(stderr, "warm-up: %s for %.1f s (%.1f fps, not counted)\n", c->label, opts->warmup,
            fps > 0.0 ? fps : 0.0);
    return 0;
}

/* One row of the table: a case over one path, the median of three runs,
 * each in a new context. 0, 1 when the case failed (reported), -1 when
 * no context opens. */
static int bench_case(const Case *c, FrameSet *set, int path, const Options *opts,
                      const char *size, int bits, double *h2d)
{
    double fps[3] = {0};
    unsigned long long launches = 0;
    unsigned frames = 0;
    size_t upload = 0;
    int ok = 1;

    for (int run = 0; run < 3 && ok; run++) {
        QgpuContext *ctx = NULL;
        QgpuStats stats;
        int warmup = 2 * opts->depth + 2;
        unsigned on_path;
        double r;
        int err = case_open(c, set, path, opts, getenv("QGPU_TIMING") && run == 2, h2d, &ctx);

        if (err < 0)
            return -1;
        ok = err == 0;
        if (ok) {
            r = timed_run(ctx, set, path, opts->seconds, warmup, &frames);
            if (r < 0) {
                fprintf(stderr, "qgpu-bench: %s: %s\n", c->label, qgpu_last_error(ctx));
                ok = 0;
            }
            fps[run] = r;
            qgpu_stats_get(ctx, &stats);
            launches = stats.launches / (frames + warmup);
            upload = 2 * stats.upload_bytes;
            /* every frame took the path named in the table */
            on_path = path == PATH_PINNED ? stats.frames_from_pinned : stats.frames_from_host;
            if (ok && on_path != frames + (unsigned)warmup) {
                fprintf(stderr, "qgpu-bench: %s: %u of %u frames on the %s path\n", c->label,
                        on_path, frames + warmup, path == PATH_PINNED ? "pinned" : "staging");
                ok = 0;
            }
            if (ok && run == 2 && stats.profiling) {
                for (int k = 0; k < stats.nb_profile; k++)
                    fprintf(stderr, "  profile %-44s %8.4f ms/launch x %llu\n",
                            stats.profile[k].name,
                            stats.profile[k].total_ms / stats.profile[k].count,
                            stats.profile[k].count / (frames + warmup));
            }
        }
        qgpu_close(&ctx);
        frameset_unpin(set);
    }
    if (!ok)
        return 1;
    qsort(fps, 3, sizeof(double), compare_double);
    double limit = *h2d * 1e9 / (double)upload;
    printf("%-14s %-10s %4d %-8s %10.1f %9.3f %9llu %10.2f %9.2f %11.0f %6.1f%%\n", c->label,
           size, bits, path == PATH_PINNED ? "pinned" : "staging", fps[1], 1000.0 / fps[1],
           launches, upload / 1e6, *h2d, limit, 100.0 * fps[1] / limit);
    fflush(stdout);
    return 0;
}

/* Copies one piece of a --cases list; 0, or -1 when it does not fit. */
static int copy_piece(char *dst, size_t size, const char *src, const char *what)
{
    if (strlen(src) >= size) {
        fprintf(stderr, "qgpu-bench: %s '%s' is longer than %zu characters\n", what, src,
                size - 1);
        return -1;
    }
    memcpy(dst, src, strlen(src) + 1);
    return 0;
}

/* The cases of a --cases list; their count, or -1 (reported) when the list
 * holds more cases or specs than the tables take. */
static int parse_cases(const char *text, Case *cases)
{
    int n = 0, err = 0;
    char *copy = strdup(text), *save = NULL;
    if (!copy)
        return -1;
    for (char *item = strtok_r(copy, ";", &save); item && !err;
         item = strtok_r(NULL, ";", &save)) {
        if (n == MAX_CASES) {
            fprintf(stderr, "qgpu-bench: more than %d cases\n", MAX_CASES);
            err = 1;
            break;
        }
        Case *c = &cases[n++];
        char *eq = strchr(item, '='), *save2 = NULL;
        memset(c, 0, sizeof(*c));
        if (eq)
            *eq = '\0';
        if (copy_piece(c->label, sizeof(c->label), item, "case label")) {
            err = 1;
            break;
        }
        if (!eq && !strcmp(item, "all")) {
            /* everything: the VMAF model and every feature */
            snprintf(c->specs[c->nb_specs++], sizeof(c->specs[0]), "model:version=vmaf_v0.6.1");
            for (int i = 0; qgpu_feature_name(i) && c->nb_specs < MAX_SPECS; i++)
                snprintf(c->specs[c->nb_specs++], sizeof(c->specs[0]), "%s",
                         qgpu_feature_name(i));
            continue;
        }
        for (char *s = strtok_r(eq ? eq + 1 : item, "+", &save2); s;
             s = strtok_r(NULL, "+", &save2)) {
            if (c->nb_specs == MAX_SPECS) {
                fprintf(stderr, "qgpu-bench: %s: more than %d specs\n", c->label, MAX_SPECS);
                err = 1;
                break;
            }
            if (copy_piece(c->specs[c->nb_specs++], sizeof(c->specs[0]), s, "spec")) {
                err = 1;
                break;
            }
        }
    }
    free(copy);
    return err ? -1 : n;
}

static void usage(void)
{
    fprintf(stderr,
            "Usage: qgpu-bench -r REF.y4m -d DIST.y4m [--cases 'a;b=spec+spec;all']\n"
            "       (a spec is a feature, or model:SPEC for a VMAF model; 'all' is the\n"
            "       vmaf_v0.6.1 model plus every feature)\n"
            "       [--sizes 1080p,2160p,WxH] [--bits 8,10] [--seconds 5] [--frames 8]\n"
            "       [--device SPEC] [--depth N] [--path pinned|staging|both]\n"
            "       [--warmup S] (untimed seconds of the first case first; default 1)\n");
}

int main(int argc, char **argv)
{
    const char *ref_path = NULL, *dist_path = NULL;
    Options opts = {NULL, 4, 5.0, 1.0};
    const char *cases_text = "psnr;vmaf=model:version=vmaf_v0.6.1;all";
    char sizes_text[256] = "1080p,2160p", bits_text[64] = "8,10";
    int max_frames = 8, paths = PATH_PINNED;
    Case cases[MAX_CASES];
    unsigned char *src_ref[MAX_FRAMES], *src_dist[MAX_FRAMES];
    Y4mFile ref_info, dist_info;
    int nb_src, nb_cases;
    double h2d = 0.0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v && strcmp(a, "-h") && strcmp(a, "--help")) {
            usage();
            return 2;
        }
        if (!strcmp(a, "-r")) ref_path = argv[++i];
        else if (!strcmp(a, "-d")) dist_path = argv[++i];
        else if (!strcmp(a, "--cases")) cases_text = argv[++i];
        else if (!strcmp(a, "--sizes")) snprintf(sizes_text, sizeof(sizes_text), "%s", argv[++i]);
        else if (!strcmp(a, "--bits")) snprintf(bits_text, sizeof(bits_text), "%s", argv[++i]);
        else if (!strcmp(a, "--seconds")) opts.seconds = atof(argv[++i]);
        else if (!strcmp(a, "--frames")) max_frames = atoi(argv[++i]);
        else if (!strcmp(a, "--device")) opts.device = argv[++i];
        else if (!strcmp(a, "--depth")) opts.depth = atoi(argv[++i]);
        else if (!strcmp(a, "--warmup")) opts.warmup = atof(argv[++i]);
        else if (!strcmp(a, "--path")) {
            const char *p = argv[++i];
            paths = !strcmp(p, "pinned") ? PATH_PINNED : !strcmp(p, "staging") ? PATH_STAGING
                    : !strcmp(p, "both") ? PATH_STAGING | PATH_PINNED : 0;
            if (!paths) { usage(); return 2; }
        }
        else { usage(); return 2; }
    }
    if (!ref_path || !dist_path || max_frames < 1 || max_frames > MAX_FRAMES) {
        usage();
        return 2;
    }
    nb_src = read_frames(ref_path, max_frames, src_ref, &ref_info);
    if (nb_src <= 0)
        return 1;
    int nb_dist = read_frames(dist_path, nb_src, src_dist, &dist_info);
    if (nb_dist <= 0)
        return 1;
    if (nb_dist < nb_src)
        nb_src = nb_dist;
    if (ref_info.width != dist_info.width || ref_info.height != dist_info.height ||
        ref_info.layout != dist_info.layout || ref_info.bitdepth != dist_info.bitdepth) {
        fprintf(stderr, "qgpu-bench: the two y4m files differ in size or format\n");
        return 1;
    }
    nb_cases = parse_cases(cases_text, cases);
    if (nb_cases < 0)
        return 2;

    printf("%-14s %-10s %4s %-8s %10s %9s %9s %10s %9s %11s %7s\n", "case", "size", "bits",
           "path", "fps", "ms/frame", "launches", "MB/frame", "H2D GB/s", "H2D-lim fps", "of lim");
    char *save = NULL, sizes_copy[256];
    snprintf(sizes_copy, sizeof(sizes_copy), "%s", sizes_text);
    for (char *size = strtok_r(sizes_copy, ",", &save); size; size = strtok_r(NULL, ",", &save)) {
        int w = ref_info.width, h = ref_info.height;
        if (!strcmp(size, "1080p")) { w = 1920; h = 1080; }
        else if (!strcmp(size, "2160p")) { w = 3840; h = 2160; }
        else if (!strcmp(size, "720p")) { w = 1280; h = 720; }
        else if (strcmp(size, "native") && sscanf(size, "%dx%d", &w, &h) != 2) {
            fprintf(stderr, "qgpu-bench: bad size %s\n", size);
            return 2;
        }
        char *save2 = NULL, bits_copy[64];
        snprintf(bits_copy, sizeof(bits_copy), "%s", bits_text);
        for (char *b = strtok_r(bits_copy, ",", &save2); b; b = strtok_r(NULL, ",", &save2)) {
            int bits = atoi(b);
            FrameSet set = {0};
            for (int i = 0; i < nb_src; i++) {
                QgpuPicture rp, dp;
                y4m_picture(&ref_info, src_ref[i], &rp);
                y4m_picture(&dist_info, src_dist[i], &dp);
                set.ref[i] = tile(&rp, w, h, bits, &set.ref_pic[i]);
                set.dist[i] = tile(&dp, w, h, bits, &set.dist_pic[i]);
                set.count = i + 1;
                if (!set.ref[i] || !set.dist[i]) {
                    fprintf(stderr, "qgpu-bench: out of memory\n");
                    return 1;
                }
            }
            if (opts.warmup > 0.0 && nb_cases > 0 &&
                warm_up(&cases[0], &set, paths & PATH_PINNED ? PATH_PINNED : PATH_STAGING,
                        &opts, &h2d) < 0)
                return 1;
            opts.warmup = 0.0; /* once: the device stays warm between cases */
            for (int c = 0; c < nb_cases; c++)
                for (int path = PATH_STAGING; path <= PATH_PINNED; path <<= 1)
                    if ((paths & path) &&
                        bench_case(&cases[c], &set, path, &opts, size, bits, &h2d) < 0)
                        return 1;
            frameset_free(&set);
        }
    }
    for (int i = 0; i < nb_src; i++) {
        free(src_ref[i]);
        free(src_dist[i]);
    }
    return 0;
}
