/*
 * qgpu: score a distorted video against its reference on an OpenCL device.
 *
 *   qgpu -r REF -d DIST [-m MODEL]... [--feature NAME[=opt=val:...]]...
 *        [-o FILE] [--xml|--json|--csv|--sub] [--device SPEC] [options]
 *
 * User guide: doc/qgpu.md (man page doc/qgpu.1), exit statuses included;
 * libvmaf's vmaf options: doc/compat-cli.md; what the user sees on bad
 * input and faults: doc/reliability.md.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>

#include "batch.h"
#include "decode.h"
#include "framehash.h"
#include "hwdec.h"
#include "input.h"
#include "options.h"
#include "output.h"
#include "reader.h"
#include "qgpu/qgpu.h"

/* ------------------------------------------------------------ signals */

/* SIGINT, SIGTERM and SIGHUP: the first one stops the run after the frame
 * in progress; the frames scored so far are flushed and the log written;
 * the exit status is 128 + the signal. A second one stops at once. */
static volatile sig_atomic_t interrupted;
static volatile sig_atomic_t stop_signal;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void on_stop_signal(int sig)
{
    struct sigaction dfl;
    if (!interrupted)
        stop_signal = sig;
    interrupted = 1;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int i = 0; i < 3; i++)
        sigaction(stop_signals[i], &dfl, NULL);
}

static void setup_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    /* the flag is seen by every wait of ours (they all wake up now and
     * then), whichever thread takes the signal; other threads' calls
     * restart */
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART;
    for (int i = 0; i < 3; i++)
        sigaction(stop_signals[i], &sa, NULL);
    /* write errors are reported, not fatal: a closed pipe is EPIPE, a file
     * over RLIMIT_FSIZE is EFBIG */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    input_set_interrupt(&interrupted);
}

static int interrupted_status(void)
{
    return 128 + (stop_signal ? stop_signal : SIGINT);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Serialises stderr between the main thread's progress line and the
 * reading thread's warnings. */
static pthread_mutex_t stderr_lock = PTHREAD_MUTEX_INITIALIZER;
static int progress_shown; /* a progress line without its newline is on stderr */

static void end_progress_locked(void)
{
    if (progress_shown)
        fputc('\n', stderr);
    progress_shown = 0;
}

static void on_decode_warning(void *opaque, const char *message)
{
    (void)opaque;
    pthread_mutex_lock(&stderr_lock);
    end_progress_locked();
    fprintf(stderr, "qgpu: warning: %s\n", message);
    pthread_mutex_unlock(&stderr_lock);
}

/* Exit status for a library error code. */
static int exit_status(int err)
{
    switch (err) {
    case QGPU_ERR_NO_DEVICE:
    case QGPU_ERR_OPENCL:
    case QGPU_ERR_BUILD:
    case QGPU_ERR_DEVICE_MEMORY:
        return EXIT_DEVICE;
    case QGPU_ERR_UNSUPPORTED:
    case QGPU_ERR_MISMATCH:
        return EXIT_INPUT;
    case QGPU_ERR_UNKNOWN_FEATURE:
    case QGPU_ERR_BAD_OPTION:
        return EXIT_USAGE;
    case QGPU_ERR_IO:
        return EXIT_OUTPUT;
    default:
        return EXIT_INTERNAL;
    }
}

static const char *oom_hint(int err)
{
    return err == QGPU_ERR_DEVICE_MEMORY ? " (out of device memory: try --pipeline-depth 1, "
                                           "fewer metrics or another --device)" : "";
}

/* ------------------------------------------------- environment: PoCL */

/* mkdir -p; 0 when path is a directory we can write in. */
static int make_dirs(const char *path)
{
    char *tmp = strdup(path);
    int ok;
    if (!tmp)
        return -1;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        mkdir(tmp, 0755);
        *p = '/';
    }
    mkdir(tmp, 0755);
    ok = access(tmp, W_OK | X_OK) == 0;
    free(tmp);
    return ok ? 0 : -1;
}

/* PoCL (the CPU OpenCL driver) keeps compiled kernels in $POCL_CACHE_DIR,
 * else $XDG_CACHE_HOME/pocl/kcache, else ~/.cache/pocl/kcache, and offers
 * no device at all when it cannot create that directory. When it cannot,
 * point it at a private directory under $TMPDIR or /tmp instead (kept
 * between runs, so its kernels stay cached). Our own kernel cache needs
 * nothing: the library builds in memory when its cache is unusable. */
static void ensure_pocl_cache(void)
{
    const char *set = getenv("POCL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME"), *tmp = getenv("TMPDIR");
    char *dir = NULL, fallback[4096];
    struct stat st;
    int ok;
    if (set && *set)
        ok = asprintf(&dir, "%s", set) >= 0;
    else if (xdg && *xdg)
        ok = asprintf(&dir, "%s/pocl/kcache", xdg) >= 0;
    else if (home && *home)
        ok = asprintf(&dir, "%s/.cache/pocl/kcache", home) >= 0;
    else
        return; /* PoCL's own fallback, /tmp */
    ok = ok && make_dirs(dir) == 0;
    free(dir);
    if (ok)
        return;
    if (!tmp || !*tmp || tmp[0] != '/' || strlen(tmp) > 1024 || make_dirs(tmp))
        tmp = "/tmp";
    snprintf(fallback, sizeof(fallback), "%s/qgpu-pocl-cache-%ld", tmp, (long)getuid());
    mkdir(fallback, 0700);
    /* ours alone: a directory we own that nobody else can write in */
    if (lstat(fallback, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 022)) {
        snprintf(fallback, sizeof(fallback), "%s/qgpu-pocl-XXXXXX", tmp);
        if (!mkdtemp(fallback))
            return;
    }
    setenv("POCL_CACHE_DIR", fallback, 1);
}

/* ------------------------------------------- paths, before any output */

/* The path= of a model spec ("path=m.json:name=x"), in buf; NULL when none. */
static const char *model_path(const char *spec, char *buf, size_t len)
{
    for (const char *p = spec; p && *p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL)
        if (!strncmp(p, "path=", 5)) {
            snprintf(buf, len, "%.*s", (int)strcspn(p + 5, ":"), p + 5);
            return buf;
        }
    return NULL;
}

/* Is the output path (or standard output for "-") one of the inputs? */
static const char *same_as_input(const Options *o, const char *path, char *buf, size_t len)
{
    const char *out = strcmp(path, "-") ? path : "/dev/stdout";
    if (input_same_file(out, o->reference))
        return "the reference input";
    if (input_same_file(out, o->distorted))
        return "the distorted input";
    for (int i = 0; i < o->nb_models; i++) {
        const char *m = model_path(o->models[i], buf, len);
        if (m && input_same_file(out, m))
            return "a model file";
    }
    return NULL;
}

/* Every output path, checked before anything is opened for writing. */
static int check_paths(const Options *o)
{
    const char *options[2] = {"-o", "--log-stream"}, *paths[2] = {o->output, o->log_stream};
    char err[1024], buf[4096], name[256];
    struct stat st;
    /* the two inputs as one stream: it cannot be read twice */
    if (input_same_file(o->reference, o->distorted) &&
        (!strcmp(o->reference, "-") || !strcmp(o->distorted, "-") ||
         (!stat(o->reference, &st) && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))))) {
        fprintf(stderr, "qgpu: -r and -d name the same stream (%s): it can be read only once\n",
                short_path(o->reference, name, sizeof(name)));
        return EXIT_USAGE;
    }
    /* -o and --log-stream as one file (a device such as /dev/null takes both) */
    if (paths[0] && paths[1] && strcmp(paths[0], "-") && strcmp(paths[1], "-") &&
        ((!strcmp(paths[0], paths[1]) && (stat(paths[0], &st) || S_ISREG(st.st_mode))) ||
         (input_same_file(paths[0], paths[1]) && !stat(paths[0], &st) &&
          S_ISREG(st.st_mode)))) {
        fprintf(stderr, "qgpu: -o and --log-stream name the same file (%s)\n",
                short_path(paths[0], name, sizeof(name)));
        return EXIT_USAGE;
    }
    for (int i = 0; i < 2; i++) {
        const char *what;
        if (!paths[i])
            continue;
        if ((what = same_as_input(o, paths[i], buf, sizeof(buf)))) {
            fprintf(stderr, "qgpu: %s %s: is %s; refusing to overwrite it\n", options[i],
                    strcmp(paths[i], "-") ? short_path(paths[i], name, sizeof(name))
                                          : "- (standard output)", what);
            return EXIT_USAGE;
        }
    }
    for (int i = 0; i < 2; i++)
        if (paths[i] && output_check(options[i], paths[i], err, sizeof(err))) {
            fprintf(stderr, "qgpu: %s\n", err);
            return EXIT_OUTPUT;
        }
    return 0;
}

/* ------------------------------------------------------------- inputs */

static const char *layout_name(int layout)
{
    return layout == QGPU_LAYOUT_400 ? "gray" : layout == QGPU_LAYOUT_420 ? "4:2:0"
                                        : layout == QGPU_LAYOUT_422 ? "4:2:2" : "4:4:4";
}

static const char *range_name(const DecoderInfo *in)
{
    return in->full_range ? "full (pc)" : in->range_known ? "limited (tv)"
                                                          : "not said, taken as limited (tv)";
}

/* What the two inputs' frames differ in besides size and layout: bit depth
 * (the lower is shifted up), range (the full one is converted to limited),
 * chroma siting and interlacing (reported). */
static void reconcile(const Options *o, Decoder *ref, Decoder *dis, const DecoderInfo *ri,
                      const DecoderInfo *di, int *depth)
{
    const char *who[2] = {"reference", "distorted"};
    const DecoderInfo *in[2] = {ri, di};
    *depth = ri->bitdepth > di->bitdepth ? ri->bitdepth : di->bitdepth;
    if (ri->bitdepth != di->bitdepth) {
        int low = ri->bitdepth < di->bitdepth ? 0 : 1;
        if (!o->common_bitdepth || !o->quiet)
            fprintf(stderr, "qgpu: %sbit depths differ (reference %d-bit, distorted %d-bit): "
                    "the %s input is scored at %d bits, its samples shifted left by %d (as "
                    "libvmaf's --aom_ctc v6.0 does)\n", o->common_bitdepth ? "" : "warning: ",
                    ri->bitdepth, di->bitdepth, who[low], *depth,
                    *depth - in[low]->bitdepth);
    }
    if (ri->full_range != di->full_range) {
        int full = ri->full_range ? 0 : 1;
        decoder_set_limited_range(full ? dis : ref);
        fprintf(stderr, "qgpu: warning: colour ranges differ (reference %s, distorted %s): the "
                "%s input is converted to limited range before scoring\n", range_name(ri),
                range_name(di), who[full]);
    }
    if (ri->layout != QGPU_LAYOUT_444 && ri->layout != QGPU_LAYOUT_400 &&
        ri->chroma_location && di->chroma_location &&
        ri->chroma_location != di->chroma_location)
        fprintf(stderr, "qgpu: warning: chroma siting differs (reference %s, distorted %s): "
                "chroma planes are compared sample by sample, as libvmaf does, so chroma "
                "scores include the offset\n",
                av_chroma_location_name(ri->chroma_location),
                av_chroma_location_name(di->chroma_location));
    if (ri->interlaced != di->interlaced)
        fprintf(stderr, "qgpu: warning: the reference is %s, the distorted input %s: frames "
                "are compared as whole pictures, as libvmaf does; deinterlace both the same "
                "way for comparable scores\n", ri->interlaced ? "interlaced" : "progressive",
                di->interlaced ? "interlaced" : "progressive");
    for (int i = 0; i < 2; i++)
        if (!in[i]->timestamps)
            fprintf(stderr, "qgpu: warning: %s \"%s\": its y4m header has no frame rate (F0:0 "
                    "or none): frames are paired by index, their times not checked\n", who[i],
                    i ? o->distorted : o->reference);
}

/* --hwdec: which decoder each input got (a note when auto found no
 * device); an explicit cuda/vaapi that the stream's hwaccel refused is an
 * error. */
static int check_hwdec(const Options *o, const DecoderInfo *ri, const DecoderInfo *di)
{
    const DecoderInfo *in[2] = {ri, di};
    for (int i = 0; i < 2; i++) {
        const char *who = i ? "distorted" : "reference";
        int mode = i ? o->hwdec_dist : o->hwdec;
        if (in[i]->hw_refused && mode != HWDEC_AUTO) {
            fprintf(stderr, "qgpu: --hwdec %s: the %s's hardware decoder refused the stream "
                    "(%dx%d %s: its profile, size or format is beyond the hardware); use "
                    "--hwdec auto or none\n", mode == HWDEC_CUDA ? "cuda" : "vaapi",
                    who, in[i]->width, in[i]->height, in[i]->pix_fmt);
            return EXIT_DEVICE;
        }
        if (o->quiet)
            continue;
        if (*in[i]->hw_note)
            fprintf(stderr, "qgpu: %s decoded on the CPU (--hwdec auto: %s)\n", who,
                    in[i]->hw_note);
        else if (in[i]->hw_refused)
            fprintf(stderr, "qgpu: %s decoded on the CPU (the hardware decoder refused the "
                    "stream: profile, size or format)\n", who);
    }
    return 0;
}

static int open_inputs(const Options *o, Decoder **ref, Decoder **dis)
{
    char err[1024] = "";
    DecoderInfo ri, di;
    int w, h, depth;
    int ret = o->raw_spec ? decoder_open_raw(ref, o->reference, o->raw_spec, err, sizeof(err))
                          : decoder_open_hw(ref, o->reference, o->hwdec, err, sizeof(err));
    if (ret == 0)
        ret = o->raw_spec ? decoder_open_raw(dis, o->distorted, o->raw_spec, err, sizeof(err))
                          : decoder_open_hw(dis, o->distorted, o->hwdec_dist, err, sizeof(err));
    if (ret == 0) {
        decoder_set_warn(*ref, "reference", on_decode_warning, NULL);
        decoder_set_warn(*dis, "distorted", on_decode_warning, NULL);
        ret = decoder_start(*ref, err, sizeof(err));
        if (ret == 0)
            ret = decoder_start(*dis, err, sizeof(err));
    }
    if (ret) {
        fprintf(stderr, "qgpu: %s\n", err);
        return ret == DECODER_ERR_HWDEC ? EXIT_DEVICE : EXIT_INPUT;
    }
    decoder_get_info(*ref, &ri);
    decoder_get_info(*dis, &di);
    if ((ret = check_hwdec(o, &ri, &di)))
        return ret;
    /* scored size: the reference's unless --scale-to says otherwise; layout:
     * the reference's; bit depth: the higher of the two */
    w = ri.width;
    h = ri.height;
    if (o->scale_to && !strcmp(o->scale_to, "dist")) {
        w = di.width;
        h = di.height;
    } else if (o->scale_to && strcmp(o->scale_to, "ref")) {
        sscanf(o->scale_to, "%dx%d", &w, &h);
    }
    reconcile(o, *ref, *dis, &ri, &di, &depth);
    for (int i = 0; i < 2; i++) {
        const DecoderInfo *in = i ? &di : &ri;
        if (in->width == w && in->height == h && in->layout == ri.layout &&
            in->bitdepth == depth)
            continue;
        if (!o->quiet && (in->width != w || in->height != h || in->layout != ri.layout))
            fprintf(stderr, "qgpu: %s %dx%d %s scaled/converted to %dx%d %s with %s\n",
                    i ? "distorted" : "reference", in->width, in->height, in->pix_fmt, w, h,
                    layout_name(ri.layout), o->scaler ? o->scaler : "bicubic");
        if (decoder_set_output(i ? *dis : *ref, w, h, ri.layout, depth, o->scaler, err,
                               sizeof(err))) {
            fprintf(stderr, "qgpu: %s\n", err);
            return EXIT_USAGE;
        }
    }
    /* Both inputs NV12/P010 from hardware decoders, scored as they are:
     * the library splits the chroma on the device (or uploads luma only). */
    if (ri.semiplanar && di.semiplanar && ri.width == w && ri.height == h && di.width == w &&
        di.height == h && ri.bitdepth == depth && di.bitdepth == depth &&
        ri.full_range == di.full_range) {
        decoder_set_semiplanar(*ref, 1);
        decoder_set_semiplanar(*dis, 1);
    }
    return 0;
}

/* ---------------------------------------------------------- summaries */

/* mean, min and harmonic mean over the logged frames (every subsample-th) */
static void pool(const QgpuContext *ctx, const char *name, unsigned sub, double *mean,
                 double *min, double *hmean)
{
    double sum = 0.0, isum = 0.0, v;
    unsigned n = 0;
    *min = INFINITY;
    for (unsigned i = 0; i < qgpu_frame_count(ctx); i += sub > 1 ? sub : 1) {
        if (qgpu_get_score(ctx, i, name, &v) || isnan(v))
            continue;
        n++;
        sum += v;
        isum += 1.0 / (v + 1.0);
        if (v < *min)
            *min = v;
    }
    *mean = n ? sum / n : NAN;
    *hmean = n ? n / isum - 1.0 : NAN; /* libvmaf's harmonic mean */
    if (!n)
        *min = NAN;
}

static void print_summary(const QgpuContext *ctx, double seconds, unsigned sub)
{
    unsigned frames = qgpu_frame_count(ctx);
    fprintf(stderr, "qgpu: %u frames in %.2f s (%.1f fps) on %s (%s)\n", frames, seconds,
            seconds > 0 ? frames / seconds : 0.0, qgpu_device_name(ctx),
            qgpu_platform_name(ctx));
    if (sub > 1)
        fprintf(stderr, "qgpu: pooled over frames 0, %u, %u... (--subsample %u)\n", sub, 2 * sub,
                sub);
    for (int k = 0; k < qgpu_score_count(ctx); k++) {
        const char *name = qgpu_score_name(ctx, k);
        double mean, min, hmean;
        pool(ctx, name, sub, &mean, &min, &hmean);
        if (!strncmp(name, "vmaf", 4))
            fprintf(stderr, "  %-32s %.6f  (min %.6f, harmonic mean %.6f)\n", name, mean, min,
                    hmean);
        else
            fprintf(stderr, "  %-32s %.6f\n", name, mean);
    }
}

static const char *pair_mode_name(int mode)
{
    return mode == PAIR_TIME ? "nearest presentation time" : "index";
}

/* After the run: frame counts, which input ended first, timestamp checks. */
static void report_pairing(const Options *o, Reader *reader, unsigned submitted)
{
    PairStats st;
    reader_stats(reader, &st);
    if (!o->quiet) {
        if (st.limit_reached)
            fprintf(stderr, "qgpu: stopped after --frame_cnt %u pairs\n", submitted);
        else {
            char rn[64], dn[64], a[256], b[256];
            /* a stream is not read to its end to count its frames */
            snprintf(rn, sizeof(rn), st.complete[0] ? "%u" : "%u or more", st.frames[0]);
            snprintf(dn, sizeof(dn), st.complete[1] ? "%u" : "%u or more", st.frames[1]);
            fprintf(stderr, "qgpu: %s %u pairs (by %s); reference had %s frames, distorted "
                    "%s", o->decode_only ? "decoded" : "scored", submitted,
                    pair_mode_name(st.mode), rn, dn);
            if (o->ref_offset || o->dist_offset)
                fprintf(stderr, " (offsets: reference %u, distorted %u)", o->ref_offset,
                        o->dist_offset);
            if (st.ended_first >= 0)
                fprintf(stderr, "; \"%s\" ended before \"%s\"",
                        short_path(st.ended_first == 0 ? o->reference : o->distorted, a,
                                   sizeof(a)),
                        short_path(st.ended_first == 0 ? o->distorted : o->reference, b,
                                   sizeof(b)));
            fputc('\n', stderr);
        }
        if (st.mode == PAIR_TIME && (st.reused || st.skipped))
            fprintf(stderr, "qgpu: %u distorted frames used twice or more, %u never used\n",
                    st.reused, st.skipped);
    }
    if (st.mismatched)
        fprintf(stderr, "qgpu: warning: %u of %u pairs are more than %s apart in presentation "
                "time (up to %.1f ms): the pairs may be unreliable; check the inputs' frame "
                "rates or use --ref-offset/--dist-offset/--pairing\n", st.mismatched, st.pairs,
                st.mode == PAIR_TIME ? "one distorted frame" : "half a frame",
                st.max_mismatch * 1e3);
}

/* Pairs the run should score, from the containers' frame counts (0 when
 * unknown), for the progress line's ETA. */
static unsigned expected_pairs(const Options *o, Decoder *ref, Decoder *dis, int mode)
{
    DecoderInfo ri, di;
    unsigned r = 0, d = 0, total;
    decoder_get_info(ref, &ri);
    decoder_get_info(dis, &di);
    if (ri.frames)
        r = ri.frames > o->ref_offset ? ri.frames - o->ref_offset : 0;
    if (di.frames) {
        d = di.frames > o->dist_offset ? di.frames - o->dist_offset : 0;
        if (mode == PAIR_TIME && ri.fps > 0 && di.fps > 0)
            d = (unsigned)lrint(d * ri.fps / di.fps);
    }
    total = !ri.frames ? d : !di.frames ? r : r < d ? r : d;
    if (o->frame_cnt && (!total || total > o->frame_cnt))
        total = o->frame_cnt;
    return total;
}

/* The progress line (stderr is a terminal): frames, fps, ETA. */
static void show_progress(unsigned done, unsigned total, double elapsed)
{
    double fps = elapsed > 0 ? done / elapsed : 0.0;
    pthread_mutex_lock(&stderr_lock);
    if (total >= done && total > 0) {
        char eta[32] = "--:--";
        if (fps > 0)
            format_duration(eta, sizeof(eta), (total - done) / fps);
        fprintf(stderr, "\rqgpu: frame %u/%u (%u%%), %.1f fps, ETA %s   ", done, total,
                (unsigned)(100.0 * done / total), fps, eta);
    } else {
        fprintf(stderr, "\rqgpu: frame %u, %.1f fps   ", done, fps);
    }
    progress_shown = 1;
    pthread_mutex_unlock(&stderr_lock);
}

static void end_progress(void)
{
    pthread_mutex_lock(&stderr_lock);
    end_progress_locked();
    pthread_mutex_unlock(&stderr_lock);
}

/* ---------------------------------------------------------- the run */

typedef struct Run {
    const Options *o;
    QgpuContext *ctx;
    OutputStream *stream;     /* --log-stream, opened at the first frame */
    int stream_failed;
    char *line;               /* --log-stream line buffer */
    size_t line_cap;
    unsigned submitted;
    unsigned decode_errors;   /* both inputs */
    unsigned skipped_frames;  /* frames not scored because of them */
    double seconds;           /* wall time of the scoring */
    /* the log's fps, as libvmaf computes it: frames read / processor time
     * (clock(), all threads) of the scoring, here from the first frame
     * handed to the device to the last score */
    clock_t first_submit, last_score;
    const char *decoder[2];   /* who decoded each input: "cpu", "cuda", "vaapi" */
    uint64_t hash[2];         /* --hash-frames: the inputs' samples */
} Run;

/* One frame of --log-stream; a write error stops the run. */
static void stream_frame(Run *r, unsigned frame)
{
    int n = qgpu_frame_json(r->ctx, frame, r->line, r->line_cap);
    if (n >= 0 && (size_t)n + 2 > r->line_cap) {
        size_t cap = (size_t)n + 256;
        char *line = realloc(r->line, cap);
        if (!line) {
            r->stream_failed = 1;
            return;
        }
        r->line = line;
        r->line_cap = cap;
        n = qgpu_frame_json(r->ctx, frame, r->line, r->line_cap);
    }
    if (n < 0) {
        r->stream_failed = 1;
        return;
    }
    r->line[n] = '\n';
    if (output_write(r->stream, r->line, (size_t)n + 1))
        r->stream_failed = 1;
}

/* Collected frames: streamed when asked, timed for the log's fps. */
static int collect(Run *r, int wait)
{
    unsigned frame;
    int ret;
    while ((ret = qgpu_collect(r->ctx, &frame, wait)) == 1) {
        r->last_score = clock();
        if (r->stream && !r->stream_failed &&
            !(r->o->subsample > 1 && frame % r->o->subsample))
            stream_frame(r, frame);
    }
    return ret;
}

/* Decoding errors of both inputs: counted, and a warning line. */
static void report_errors(Decoder *ref, Decoder *dis, const PairStats *st, Run *r)
{
    unsigned er = decoder_error_count(ref), ed = decoder_error_count(dis);
    unsigned corrupt = decoder_corrupt_count(ref) + decoder_corrupt_count(dis);
    unsigned dropped = st->dropped[0] + st->dropped[1];
    r->decode_errors = er + ed;
    r->skipped_frames = corrupt + dropped;
    if (!r->decode_errors)
        return;
    if (!r->skipped_frames) {
        fprintf(stderr, "qgpu: warning: skipped %u decoding error%s (reference %u, distorted "
                "%u)\n", r->decode_errors, r->decode_errors == 1 ? "" : "s", er, ed);
        return;
    }
    fprintf(stderr, "qgpu: warning: skipped %u decoding error%s (reference %u, distorted %u) "
            "and %u frame%s: %u decoded with errors, %u without a partner (reference %u, "
            "distorted %u; pairs kept aligned by presentation time)\n", r->decode_errors,
            r->decode_errors == 1 ? "" : "s", er, ed, r->skipped_frames,
            r->skipped_frames == 1 ? "" : "s", corrupt, dropped, st->dropped[0],
            st->dropped[1]);
}

/* The --log-stream file, opened once the first pair was accepted (so a
 * run that fails before scoring leaves none). */
static int open_stream(Run *r)
{
    char err[1024];
    if (!r->o->log_stream || r->stream)
        return 0;
    if (output_open(&r->stream, "--log-stream", r->o->log_stream, err, sizeof(err))) {
        fprintf(stderr, "qgpu: %s\n", err);
        return EXIT_OUTPUT;
    }
    return 0;
}

/* Both pictures of a pair in host memory (NVDEC's frames left on the GPU
 * copied down): 0 or a negative AVERROR. */
static int pair_to_host(Decoder *ref, Decoder *dis, FramePair *pair)
{
    int ret = decoder_owner_to_host(ref, pair->ref_owner, &pair->ref);
    return ret < 0 ? ret : decoder_owner_to_host(dis, pair->dist_owner, &pair->dist);
}

#define GPU_COPY_FAILED 1

/* One pair to the library: from NVDEC's memory on the GPU when both
 * pictures are there (the zero-copy path, hwdec.h), else from host memory.
 * 0, a QGPU_ERR_* code, or GPU_COPY_FAILED (CUDA failed to copy a frame). */
static int submit_pair(QgpuContext *ctx, Decoder *ref, Decoder *dis, FramePair *pair)
{
    QgpuCLBuffer buf[2];
    int on[2];
    on[0] = decoder_device_picture(ref, pair->ref_owner, &pair->ref, ctx, &buf[0]);
    on[1] = decoder_device_picture(dis, pair->dist_owner, &pair->dist, ctx, &buf[1]);
    if (on[0] == 1 && on[1] == 1)
        return qgpu_submit_cl_buffer(ctx, &buf[0], &buf[1]);
    if (on[0] < 0 || on[1] < 0 || pair_to_host(ref, dis, pair) < 0)
        return GPU_COPY_FAILED;
    return qgpu_submit(ctx, &pair->ref, &pair->dist);
}

/* With NVDEC: whether the frames stayed on the GPU, and why not. */
static void print_zero_copy(const QgpuContext *ctx, const Decoder *ref, const Decoder *dis)
{
    const char *note[2] = {decoder_zero_copy_note(ref), decoder_zero_copy_note(dis)};
    unsigned device = qgpu_frames_from_device(ctx), host = qgpu_frames_from_host(ctx);
    if (device)
        fprintf(stderr, "qgpu: %u pairs from NVDEC's memory on the GPU (zero-copy), %u through "
                "host memory\n", device, host);
    for (int i = 0; i < 2; i++)
        if (*note[i])
            fprintf(stderr, "qgpu: %s frames went through host memory: %s\n",
                    i ? "distorted" : "reference", note[i]);
}

static int score(Run *r, Decoder *ref, Decoder *dis)
{
    const Options *o = r->o;
    char err[1024] = "";
    double start = now_seconds(), last_report = 0.0;
    Reader *reader = NULL;
    ReaderOptions ro = {o->frame_cnt, o->ref_offset, o->dist_offset, o->pairing, &interrupted};
    /* no progress lines in logs and pipes */
    int progress = !o->quiet && isatty(STDERR_FILENO);
    unsigned total;
    FramePair pair;
    PairStats st;
    int ret = 0, status = EXIT_OK;

    if (reader_start(&reader, ref, dis, &ro, err, sizeof(err))) {
        fprintf(stderr, "qgpu: %s\n", err);
        return o->pairing == PAIR_TIME ? EXIT_USAGE : EXIT_INTERNAL;
    }
    total = expected_pairs(o, ref, dis, reader_mode(reader));
    if (!o->quiet && reader_mode(reader) == PAIR_TIME) {
        DecoderInfo ri, di;
        decoder_get_info(ref, &ri);
        decoder_get_info(dis, &di);
        fprintf(stderr, "qgpu: frame rates differ (reference %.3f fps, distorted %.3f fps): "
                "each reference frame is paired with the distorted frame nearest in "
                "presentation time\n", ri.fps, di.fps);
    }
    while (!interrupted && !r->stream_failed &&
           (ret = reader_next(reader, &pair, err, sizeof(err))) == 1) {
        if (!r->submitted)
            r->first_submit = clock();
        if (o->decode_only) { /* the decoding speed alone */
            if (o->hash_frames && pair_to_host(ref, dis, &pair) < 0) {
                reader_release(&pair);
                end_progress();
                fprintf(stderr, "qgpu: frame %u: copying a decoded frame from the GPU failed\n",
                        r->submitted);
                status = EXIT_DEVICE;
                goto fail;
            }
            if (o->hash_frames) {
                r->hash[0] = frame_hash(r->hash[0], &pair.ref);
                r->hash[1] = frame_hash(r->hash[1], &pair.dist);
            }
            reader_release(&pair);
            r->submitted++;
            continue;
        }
        ret = submit_pair(r->ctx, ref, dis, &pair); /* copies the samples */
        reader_release(&pair);
        if (ret == GPU_COPY_FAILED) {
            end_progress();
            fprintf(stderr, "qgpu: frame %u: copying a decoded frame from the GPU failed\n",
                    r->submitted);
            status = EXIT_DEVICE;
            goto fail;
        }
        if (ret) {
            end_progress();
            fprintf(stderr, "qgpu: frame %u: %s%s\n", r->submitted, qgpu_last_error(r->ctx),
                    oom_hint(ret));
            status = exit_status(ret);
            goto fail;
        }
        r->submitted++;
        if ((status = open_stream(r)))
            goto fail;
        if ((ret = collect(r, 0)) < 0) {
            end_progress();
            fprintf(stderr, "qgpu: %s%s\n", qgpu_last_error(r->ctx), oom_hint(ret));
            status = exit_status(ret);
            goto fail;
        }
        if (progress && (r->submitted == 1 || now_seconds() - last_report >= 0.5)) {
            last_report = now_seconds();
            show_progress(r->submitted, total, last_report - start);
        }
    }
    if (progress && r->submitted && !interrupted && ret == 0 && !r->stream_failed)
        show_progress(r->submitted, r->submitted, now_seconds() - start); /* 100 % */
    end_progress();
    if (interrupted) {
        fprintf(stderr, "qgpu: interrupted (%s) after %u pairs; finishing the log\n",
                strsignal(stop_signal ? stop_signal : SIGINT), r->submitted);
    } else if (r->stream_failed) {
        fprintf(stderr, "qgpu: --log-stream failed after %u pairs; finishing the log\n",
                r->submitted);
    } else if (ret < 0) {
        /* an input failed midway: the frames before it are still finished
         * and logged; the error (the last line) and the exit status say the
         * input failed */
        status = EXIT_INPUT;
    } else {
        report_pairing(o, reader, r->submitted);
    }
    reader_stats(reader, &st);
    reader_stop(&reader);
    report_errors(ref, dis, &st, r);
    if ((ret = qgpu_flush(r->ctx)) < 0) {
        fprintf(stderr, "qgpu: %s%s\n", qgpu_last_error(r->ctx), oom_hint(ret));
        return exit_status(ret);
    }
    if ((ret = collect(r, 1)) < 0) {
        fprintf(stderr, "qgpu: %s%s\n", qgpu_last_error(r->ctx), oom_hint(ret));
        return exit_status(ret);
    }
    r->seconds = now_seconds() - start;
    if (status) {
        fprintf(stderr, "qgpu: %s\n", err);
        return status;
    }
    if (r->submitted == 0 && !interrupted) {
        char a[256], b[256];
        fprintf(stderr, "qgpu: no frame to score: reference \"%s\" has %u decodable frame%s, "
                "distorted \"%s\" %u%s\n", short_path(o->reference, a, sizeof(a)),
                st.frames[0], st.frames[0] == 1 ? "" : "s",
                short_path(o->distorted, b, sizeof(b)), st.frames[1],
                o->ref_offset || o->dist_offset ? " (offsets included)" : "");
        return EXIT_INPUT;
    }
    return r->stream_failed ? EXIT_OUTPUT : EXIT_OK;
fail:
    reader_stop(&reader);
    return status;
}

/* The -o log (written by the library: temporary file + rename), with the
 * decoding-error counts as extra fields. */
static int write_log(const Run *r)
{
    const Options *o = r->o;
    char name[256];
    double cpu = (double)(r->last_score - r->first_submit) / CLOCKS_PER_SEC;
    unsigned zero_copy = qgpu_frames_from_device(r->ctx); /* NVDEC frames left on the GPU */
    QgpuLogField fields[5] = {{"decode_errors", NULL, r->decode_errors},
                              {"skipped_frames", NULL, r->skipped_frames},
                              {"decoder_reference", r->decoder[0], 0},
                              {"decoder_distorted", r->decoder[1], 0},
                              {"pairs_zero_copy", NULL, zero_copy}};
    QgpuLogOptions lo = {o->format, r->submitted && cpu > 0 ? r->submitted / cpu : 0.0,
                         o->subsample, fields, zero_copy ? 5 : 4};
    if (qgpu_write_log_ex(r->ctx, o->output, &lo)) {
        fprintf(stderr, "qgpu: -o %s: %s\n",
                strcmp(o->output, "-") ? short_path(o->output, name, sizeof(name)) : "-",
                qgpu_last_error(r->ctx));
        return EXIT_OUTPUT;
    }
    return EXIT_OK;
}

/* --job-summary FILE (run by qgpu batch): frames, time, device and pooled
 * means as one JSON object, written once the log is in place. */
static int write_job_summary(const Run *r)
{
    const Options *o = r->o;
    json_object *s = json_object_new_object(), *pooled = json_object_new_object();
    unsigned frames = qgpu_frame_count(r->ctx);
    double ms;
    FILE *f;
    int ok;
    json_object_object_add(s, "frames", json_object_new_int64(frames));
    json_object_object_add(s, "seconds", json_object_new_double(r->seconds));
    json_object_object_add(s, "fps", json_object_new_double(r->seconds > 0 ? frames /
                                                                    r->seconds : 0.0));
    json_object_object_add(s, "device", json_object_new_string(qgpu_device_name(r->ctx)));
    json_object_object_add(s, "platform", json_object_new_string(qgpu_platform_name(r->ctx)));
    if (qgpu_get_device_time(r->ctx, &ms) == 0)
        json_object_object_add(s, "device_ms", json_object_new_double(ms));
    json_object_object_add(s, "decode_errors", json_object_new_int64(r->decode_errors));
    for (int k = 0; k < qgpu_score_count(r->ctx); k++) {
        const char *name = qgpu_score_name(r->ctx, k);
        double mean, min, hmean;
        pool(r->ctx, name, o->subsample, &mean, &min, &hmean);
        json_object_object_add(pooled, name, isfinite(mean) ? json_object_new_double(mean)
                                                            : json_object_new_null());
    }
    json_object_object_add(s, "pooled", pooled);
    ok = (f = fopen(o->job_summary, "w")) != NULL;
    if (ok) {
        ok = fprintf(f, "%s\n", json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN)) > 0;
        ok = !fclose(f) && ok;
    }
    json_object_put(s);
    if (!ok) {
        fprintf(stderr, "qgpu: --job-summary %s: %s\n", o->job_summary, strerror(errno));
        return EXIT_OUTPUT;
    }
    return EXIT_OK;
}

/* Models and features; a model file that cannot be read or parsed is an
 * input error, the rest of a bad spec a usage error. */
static int enable_metrics(const Options *o, QgpuContext *ctx)
{
    int ret;
    for (int i = 0; i < o->nb_models; i++) {
        if ((ret = qgpu_use_model(ctx, o->models[i]))) {
            fprintf(stderr, "qgpu: --model %s: %s%s\n", o->models[i], qgpu_last_error(ctx),
                    oom_hint(ret));
            if (ret == QGPU_ERR_IO || (ret == QGPU_ERR_MODEL && strstr(o->models[i], "path=")))
                return EXIT_INPUT;
            return ret == QGPU_ERR_MODEL ? EXIT_USAGE : exit_status(ret);
        }
    }
    for (int i = 0; i < o->nb_features; i++) {
        if ((ret = qgpu_enable_feature(ctx, o->features[i]))) {
            fprintf(stderr, "qgpu: --feature %s: %s%s\n", o->features[i], qgpu_last_error(ctx),
                    oom_hint(ret));
            return exit_status(ret);
        }
    }
    return EXIT_OK;
}

/* The library's messages: warnings always, notes (the device used, a
 * first run compiling its kernels) unless --quiet. */
static void print_library_log(void *opaque, int level, const char *message)
{
    (void)opaque;
    pthread_mutex_lock(&stderr_lock);
    end_progress_locked();
    fprintf(stderr, level == QGPU_LOG_WARNING ? "qgpu: warning: %s\n" : "qgpu: %s\n", message);
    pthread_mutex_unlock(&stderr_lock);
}

int main(int argc, char **argv)
{
    Options o;
    QgpuConfig cfg;
    Run run;
    Decoder *ref = NULL, *dis = NULL;
    char err[1024];
    int ret;

    if (output_guard_std_fds() & 1)
        input_set_stdin_closed();
    setup_signals();
    /* FFmpeg's own messages (e.g. every concealed macroblock) would flood
     * stderr: the tool reports errors and skipped packets itself.
     * QGPU_FFMPEG_LOG=1 shows FFmpeg's warnings and errors, for debugging. */
    {
        const char *env = getenv("QGPU_FFMPEG_LOG");
        av_log_set_level(env && *env && strcmp(env, "0") ? AV_LOG_WARNING : AV_LOG_QUIET);
    }
    ensure_pocl_cache();
    if (argc > 1 && (!strcmp(argv[1], "batch") || !strcmp(argv[1], "batch-merge")))
        return batch_main(argc - 1, argv + 1, !strcmp(argv[1], "batch-merge"));
    ret = options_parse(argc, argv, &o);
    if (ret)
        return ret < 0 ? EXIT_OK : ret;
    if ((ret = check_paths(&o)))
        return ret;
    options_warn(&o);
    memset(&run, 0, sizeof(run));
    run.o = &o;
    qgpu_config_default(&cfg);
    cfg.device = o.device;
    cfg.pipeline_depth = o.depth || o.raw_spec ? o.depth
                                               : hwdec_pipeline_depth(o.hwdec, o.hwdec_dist);
    cfg.log_callback = print_library_log;
    cfg.log_level = o.quiet ? QGPU_LOG_WARNING : QGPU_LOG_INFO;
    ret = qgpu_open(&run.ctx, &cfg);
    if (ret) {
        fprintf(stderr, "qgpu: %s%s\n", qgpu_open_error(), oom_hint(ret));
        ret = exit_status(ret);
        goto out;
    }
    if ((ret = enable_metrics(&o, run.ctx)))
        goto out;
    ret = open_inputs(&o, &ref, &dis);
    if (ret) {
        if (interrupted)
            ret = interrupted_status();
        goto out;
    }
    {
        DecoderInfo ri, di;
        decoder_get_info(ref, &ri);
        decoder_get_info(dis, &di);
        run.decoder[0] = ri.decoder;
        run.decoder[1] = di.decoder;
    }
    run.hash[0] = run.hash[1] = FRAME_HASH_START;
    ret = score(&run, ref, dis);
    if (o.decode_only) {
        if (!ret && o.hash_frames)
            fprintf(stderr, "qgpu: sample checksums of the %u pairs: reference %016llx, "
                    "distorted %016llx\n", run.submitted, (unsigned long long)run.hash[0],
                    (unsigned long long)run.hash[1]);
        if (!ret)
            fprintf(stderr, "qgpu: decoded %u pairs in %.2f s (%.1f pairs/s), nothing scored "
                    "(--decode-only); decoders: reference %s, distorted %s\n", run.submitted,
                    run.seconds, run.seconds > 0 ? run.submitted / run.seconds : 0.0,
                    run.decoder[0], run.decoder[1]);
        goto out;
    }
    /* a failure midway (device lost, an input that changes format, a
     * --log-stream that cannot be written): the frames finished before it
     * still get a complete log; the exit status stays the failure's */
    if (ret && ret != EXIT_USAGE && o.output && qgpu_frame_count(run.ctx) > 0)
        write_log(&run);
    if (ret)
        goto out;
    if (!o.quiet) {
        print_summary(run.ctx, run.seconds, o.subsample);
        fprintf(stderr, "qgpu: decoders: reference %s, distorted %s\n", run.decoder[0],
                run.decoder[1]);
        print_zero_copy(run.ctx, ref, dis);
    }
    if (o.output)
        ret = write_log(&run);
    if (!ret && !interrupted && o.job_summary)
        ret = write_job_summary(&run);
    if (interrupted && !ret)
        ret = interrupted_status();
out:
    if (output_close(&run.stream, err, sizeof(err))) {
        fprintf(stderr, "qgpu: %s\n", err);
        if (!ret || ret == EXIT_OUTPUT || interrupted)
            ret = EXIT_OUTPUT;
    }
    free(run.line);
    qgpu_close(&run.ctx);
    decoder_close(&ref);
    decoder_close(&dis);
    return ret;
}
