/*
 * One scoring run of the tool: see run.h. qgpu's main and each job of qgpu
 * batch (in its own thread) call run_pair; everything a run prints goes to
 * its message stream, and a stop flag ends it after the frame in progress.
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

#include <libavutil/pixdesc.h>

#include "clock.h"
#include "closer.h"
#include "decode.h"
#include "framehash.h"
#include "hwdec.h"
#include "input.h"
#include "output.h"
#include "pinned_frames.h"
#include "probe.h"
#include "reader.h"
#include "run.h"
#include "sessions.h"

/* Serialises the messages of the runs' threads (decoders, the library,
 * the scoring loop) and the progress line (stderr alone has one). */
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;
static int progress_shown; /* a progress line without its newline is on stderr */

static void end_progress_locked(void)
{
    if (progress_shown)
        fputc('\n', stderr);
    progress_shown = 0;
}

/* A warning of a decoder's thread (opaque: the run's message stream). */
static void on_decode_warning(void *opaque, const char *message)
{
    FILE *msg = opaque;
    pthread_mutex_lock(&msg_lock);
    if (msg == stderr)
        end_progress_locked();
    fprintf(msg, "qgpu: warning: %s\n", message);
    pthread_mutex_unlock(&msg_lock);
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
int run_check_paths(FILE *msg, const Options *o)
{
    const char *options[2] = {"-o", "--log-stream"}, *paths[2] = {o->output, o->log_stream};
    char err[1024], buf[4096], name[256];
    struct stat st;
    /* the two inputs as one stream: it cannot be read twice */
    if (input_same_file(o->reference, o->distorted) &&
        (!strcmp(o->reference, "-") || !strcmp(o->distorted, "-") ||
         (!stat(o->reference, &st) && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))))) {
        fprintf(msg, "qgpu: -r and -d name the same stream (%s): it can be read only once\n",
                short_path(o->reference, name, sizeof(name)));
        return EXIT_USAGE;
    }
    /* -o and --log-stream as one file (a device such as /dev/null takes both) */
    if (paths[0] && paths[1] && strcmp(paths[0], "-") && strcmp(paths[1], "-") &&
        ((!strcmp(paths[0], paths[1]) && (stat(paths[0], &st) || S_ISREG(st.st_mode))) ||
         (input_same_file(paths[0], paths[1]) && !stat(paths[0], &st) &&
          S_ISREG(st.st_mode)))) {
        fprintf(msg, "qgpu: -o and --log-stream name the same file (%s)\n",
                short_path(paths[0], name, sizeof(name)));
        return EXIT_USAGE;
    }
    for (int i = 0; i < 2; i++) {
        const char *what;
        if (!paths[i])
            continue;
        if ((what = same_as_input(o, paths[i], buf, sizeof(buf)))) {
            fprintf(msg, "qgpu: %s %s: is %s; refusing to overwrite it\n", options[i],
                    strcmp(paths[i], "-") ? short_path(paths[i], name, sizeof(name))
                                          : "- (standard output)", what);
            return EXIT_USAGE;
        }
    }
    for (int i = 0; i < 2; i++)
        if (paths[i] && output_check(options[i], paths[i], err, sizeof(err))) {
            fprintf(msg, "qgpu: %s\n", err);
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
static void reconcile(FILE *msg, const Options *o, Decoder *ref, Decoder *dis, const DecoderInfo *ri,
                      const DecoderInfo *di, int *depth)
{
    const char *who[2] = {"reference", "distorted"};
    const DecoderInfo *in[2] = {ri, di};
    *depth = ri->bitdepth > di->bitdepth ? ri->bitdepth : di->bitdepth;
    if (ri->bitdepth != di->bitdepth) {
        int low = ri->bitdepth < di->bitdepth ? 0 : 1;
        if (!o->common_bitdepth || !o->quiet)
            fprintf(msg, "qgpu: %sbit depths differ (reference %d-bit, distorted %d-bit): "
                    "the %s input is scored at %d bits, its samples shifted left by %d (as "
                    "libvmaf's --aom_ctc v6.0 does)\n", o->common_bitdepth ? "" : "warning: ",
                    ri->bitdepth, di->bitdepth, who[low], *depth,
                    *depth - in[low]->bitdepth);
    }
    if (ri->full_range != di->full_range) {
        int full = ri->full_range ? 0 : 1;
        decoder_set_limited_range(full ? dis : ref);
        fprintf(msg, "qgpu: warning: colour ranges differ (reference %s, distorted %s): the "
                "%s input is converted to limited range before scoring\n", range_name(ri),
                range_name(di), who[full]);
    }
    if (ri->layout != QGPU_LAYOUT_444 && ri->layout != QGPU_LAYOUT_400 &&
        ri->chroma_location && di->chroma_location &&
        ri->chroma_location != di->chroma_location)
        fprintf(msg, "qgpu: warning: chroma siting differs (reference %s, distorted %s): "
                "chroma planes are compared sample by sample, as libvmaf does, so chroma "
                "scores include the offset\n",
                av_chroma_location_name(ri->chroma_location),
                av_chroma_location_name(di->chroma_location));
    if (ri->interlaced != di->interlaced)
        fprintf(msg, "qgpu: warning: the reference is %s, the distorted input %s: frames "
                "are compared as whole pictures, as libvmaf does; deinterlace both the same "
                "way for comparable scores\n", ri->interlaced ? "interlaced" : "progressive",
                di->interlaced ? "interlaced" : "progressive");
    for (int i = 0; i < 2; i++)
        if (!in[i]->timestamps)
            fprintf(msg, "qgpu: warning: %s \"%s\": its y4m header has no frame rate (F0:0 "
                    "or none): frames are paired by index, their times not checked\n", who[i],
                    i ? o->distorted : o->reference);
}

/* --hwdec: which decoder each input got (a note when auto found no
 * device); an explicit cuda/vaapi that the stream's hwaccel refused is an
 * error. */
static int check_hwdec(FILE *msg, const Options *o, const DecoderInfo *ri, const DecoderInfo *di)
{
    const DecoderInfo *in[2] = {ri, di};
    for (int i = 0; i < 2; i++) {
        const char *who = i ? "distorted" : "reference";
        int mode = i ? o->hwdec_dist : o->hwdec;
        if (in[i]->hw_refused && mode != HWDEC_AUTO) {
            fprintf(msg, "qgpu: --hwdec %s: the %s's hardware decoder refused the stream "
                    "(%dx%d %s: its profile, size or format is beyond the hardware); use "
                    "--hwdec auto or none\n", mode == HWDEC_CUDA ? "cuda" : "vaapi",
                    who, in[i]->width, in[i]->height, in[i]->pix_fmt);
            return EXIT_DEVICE;
        }
        if (o->quiet)
            continue;
        if (*in[i]->hw_note)
            fprintf(msg, "qgpu: %s decoded on the CPU (--hwdec auto: %s)\n", who,
                    in[i]->hw_note);
        else if (in[i]->hw_refused)
            fprintf(msg, "qgpu: %s decoded on the CPU (the hardware decoder refused the "
                    "stream: profile, size or format)\n", who);
    }
    return 0;
}

static unsigned expected_pairs(const Options *o, Decoder *ref, Decoder *dis, int mode);

/* --hwdec auto: NVDEC or the CPU, by measured speed (probe.h); the
 * decoders in use are then started and set to warn on msg. 0, or an exit
 * status with the message on msg. */
static int choose_decoders(FILE *msg, const Options *o, int host_jobs, Decoder **ref,
                           Decoder **dis, ProbeResult *probe)
{
    char err[1024] = "";
    int ret = probe_choose(o, host_jobs, expected_pairs(o, *ref, *dis, PAIR_INDEX), ref, dis,
                           probe, err, sizeof(err));
    if (ret) {
        fprintf(msg, "qgpu: %s\n", err);
        return EXIT_INPUT;
    }
    decoder_set_warn(*ref, "reference", on_decode_warning, msg);
    decoder_set_warn(*dis, "distorted", on_decode_warning, msg);
    return 0;
}

/* Files up to this size get a CPU session beside NVDEC by default: the
 * sessions' first pass reads the whole file before the first frame. */
#define AUTO_CPU_SESSIONS_MAX_MB 1024

/* auto_cpu_sessions' conditions known before the decoders are opened. */
static int auto_cpu_sessions_may(const RunSetup *s, const char *path)
{
    struct stat st;
    return s->host_jobs <= 1 && sysconf(_SC_NPROCESSORS_ONLN) >= 8 && path &&
           !stat(path, &st) && S_ISREG(st.st_mode) &&
           st.st_size <= (off_t)AUTO_CPU_SESSIONS_MAX_MB * 1024 * 1024;
}

/* Opens and starts both decoders: --hwdec auto's choice already known to
 * be the CPU (probe_known_cpu), else as the options say, then
 * choose_decoders; auto_may[i]: auto_cpu_sessions_may of input i (the
 * reading thread goes further ahead with sessions). 0, or an exit status
 * with the message on msg. */
static int open_decoders(FILE *msg, const Options *o, const RunSetup *s, const int auto_may[2],
                         Decoder **ref, Decoder **dis, ProbeResult *probe)
{
    char err[1024] = "";
    int host_jobs = s->host_jobs, ret;
    if (probe_known_cpu(o, host_jobs, ref, dis, probe)) {
        decoder_set_warn(*ref, "reference", on_decode_warning, msg);
        decoder_set_warn(*dis, "distorted", on_decode_warning, msg);
        return 0;
    }
    ret = o->raw_spec ? decoder_open_raw(ref, o->reference, o->raw_spec, err, sizeof(err))
                      : decoder_open_hw(ref, o->reference, o->hwdec, err, sizeof(err));
    if (ret == 0)
        ret = o->raw_spec ? decoder_open_raw(dis, o->distorted, o->raw_spec, err, sizeof(err))
                          : decoder_open_hw(dis, o->distorted, o->hwdec_dist, err, sizeof(err));
    if (ret == 0) {
        decoder_set_warn(*ref, "reference", on_decode_warning, msg);
        decoder_set_warn(*dis, "distorted", on_decode_warning, msg);
        /* sessions (start_sessions): the reading thread goes further ahead */
        for (int i = 0; i < 2; i++)
            if (o->decode_sessions > 1 || o->cpu_sessions > 0 ||
                (o->cpu_sessions < 0 && auto_may[i]))
                decoder_set_ring_slots(i ? *dis : *ref, SESSIONS_FRAMES_OUT);
        ret = decoder_start(*ref, err, sizeof(err));
        if (ret == 0)
            ret = decoder_start(*dis, err, sizeof(err));
    }
    if (ret && *s->stop) {
        /* one line, the last, saying so as an interruption while scoring does */
        fprintf(msg, "qgpu: interrupted (%s) after 0 pairs, while opening the inputs (%s)\n",
                strsignal(*s->stop_signal ? *s->stop_signal : SIGINT), err);
        return EXIT_INPUT;
    }
    if (ret) {
        fprintf(msg, "qgpu: %s\n", err);
        return ret == DECODER_ERR_HWDEC ? EXIT_DEVICE : EXIT_INPUT;
    }
    return choose_decoders(msg, o, host_jobs, ref, dis, probe);
}

/* Whether environment variable name is value (unset counts as ""). */
static int env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return !strcmp(v ? v : "", value);
}

static int open_inputs(FILE *msg, const Options *o, const RunSetup *s, const int auto_may[2],
                       Decoder **ref, Decoder **dis, ProbeResult *probe)
{
    char err[1024] = "";
    DecoderInfo ri, di;
    int w, h, depth;
    int ret = open_decoders(msg, o, s, auto_may, ref, dis, probe);
    if (ret)
        return ret;
    decoder_get_info(*ref, &ri);
    decoder_get_info(*dis, &di);
    if ((ret = check_hwdec(msg, o, &ri, &di)))
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
    reconcile(msg, o, *ref, *dis, &ri, &di, &depth);
    for (int i = 0; i < 2; i++) {
        const DecoderInfo *in = i ? &di : &ri;
        if (in->width == w && in->height == h && in->layout == ri.layout &&
            in->bitdepth == depth)
            continue;
        if (!o->quiet && (in->width != w || in->height != h || in->layout != ri.layout))
            fprintf(msg, "qgpu: %s %dx%d %s scaled/converted to %dx%d %s with %s\n",
                    i ? "distorted" : "reference", in->width, in->height, in->pix_fmt, w, h,
                    layout_name(ri.layout), o->scaler ? o->scaler : "bicubic");
        if (decoder_set_output(i ? *dis : *ref, w, h, ri.layout, depth, o->scaler, err,
                               sizeof(err))) {
            fprintf(msg, "qgpu: %s\n", err);
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
    } else if (ri.width == w && ri.height == h && di.width == w && di.height == h &&
               ri.bitdepth == depth && di.bitdepth == depth && !ri.full_range &&
               !di.full_range && !env_is("QGPU_HWDEC_UPLOAD", "0") &&
               (decoder_upload_beside(*dis, *ref, depth) ||
                decoder_upload_beside(*ref, *dis, depth))) {
        /* the mixed decode: NVDEC's frames stay on the GPU and the CPU
         * decoder's go there too, semi-planar (cuda_upload.h) */
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

static void print_summary(FILE *msg, const QgpuContext *ctx, double seconds, unsigned sub)
{
    unsigned frames = qgpu_frame_count(ctx);
    fprintf(msg, "qgpu: %u frames in %.2f s (%.1f fps) on %s (%s)\n", frames, seconds,
            seconds > 0 ? frames / seconds : 0.0, qgpu_device_name(ctx),
            qgpu_platform_name(ctx));
    if (sub > 1)
        fprintf(msg, "qgpu: pooled over frames 0, %u, %u... (--subsample %u)\n", sub, 2 * sub,
                sub);
    for (int k = 0; k < qgpu_score_count(ctx); k++) {
        const char *name = qgpu_score_name(ctx, k);
        double mean, min, hmean;
        pool(ctx, name, sub, &mean, &min, &hmean);
        if (!strncmp(name, "vmaf", 4))
            fprintf(msg, "  %-32s %.6f  (min %.6f, harmonic mean %.6f)\n", name, mean, min,
                    hmean);
        else
            fprintf(msg, "  %-32s %.6f\n", name, mean);
    }
}

static const char *pair_mode_name(int mode)
{
    return mode == PAIR_TIME ? "nearest presentation time" : "index";
}

/* After the run: frame counts, which input ended first, timestamp checks. */
static void report_pairing(FILE *msg, const Options *o, Reader *reader, unsigned submitted)
{
    PairStats st;
    reader_stats(reader, &st);
    if (!o->quiet) {
        if (st.limit_reached)
            fprintf(msg, "qgpu: stopped after --frame_cnt %u pairs\n", submitted);
        else {
            char rn[64], dn[64], a[256], b[256];
            /* a stream is not read to its end to count its frames */
            snprintf(rn, sizeof(rn), st.complete[0] ? "%u" : "%u or more", st.frames[0]);
            snprintf(dn, sizeof(dn), st.complete[1] ? "%u" : "%u or more", st.frames[1]);
            fprintf(msg, "qgpu: %s %u pairs (by %s); reference had %s frames, distorted "
                    "%s", o->decode_only ? "decoded" : "scored", submitted,
                    pair_mode_name(st.mode), rn, dn);
            if (o->ref_offset || o->dist_offset)
                fprintf(msg, " (offsets: reference %u, distorted %u)", o->ref_offset,
                        o->dist_offset);
            if (st.ended_first >= 0)
                fprintf(msg, "; \"%s\" ended before \"%s\"",
                        short_path(st.ended_first == 0 ? o->reference : o->distorted, a,
                                   sizeof(a)),
                        short_path(st.ended_first == 0 ? o->distorted : o->reference, b,
                                   sizeof(b)));
            fputc('\n', msg);
        }
        if (st.mode == PAIR_TIME && (st.reused || st.skipped))
            fprintf(msg, "qgpu: %u distorted frames used twice or more, %u never used\n",
                    st.reused, st.skipped);
    }
    if (st.mismatched)
        fprintf(msg, "qgpu: warning: %u of %u pairs are more than %s apart in presentation "
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

/* Whether the CPU decoders decode into pinned blocks. Their set-up (~3 MB
 * of pinned memory per 1080p block, 48 blocks: ~0.07-0.1 s on the H200)
 * is paid back by the staging copies it saves (~0.45 ms a 1080p pair on
 * the scoring thread): at 600 pairs, pinned frames scored faster in 6 of
 * 6 rounds (low-bitrate H.264 1038-1082 fps against 881-957, HEVC
 * 628-719 against 620-654) and at 1,200 in 2 of 3 (doc/performance.md,
 * "pinned frames from 500 pairs"): on from PINNED_FRAMES_MIN_PAIRS known
 * pairs, or an unknown count (a stream); QGPU_PINNED_FRAMES=1 always, =0
 * never. */
#define PINNED_FRAMES_MIN_PAIRS 500
static int use_pinned_frames(const Options *o, Decoder *ref, Decoder *dis)
{
    const char *env = getenv("QGPU_PINNED_FRAMES");
    unsigned pairs;
    if (env && !strcmp(env, "1"))
        return 1;
    if (env && !strcmp(env, "0"))
        return 0;
    pairs = expected_pairs(o, ref, dis, PAIR_INDEX);
    return !pairs || pairs >= PINNED_FRAMES_MIN_PAIRS;
}

/* The progress line (stderr is a terminal): frames, fps, ETA. */
static void show_progress(unsigned done, unsigned total, double elapsed)
{
    double fps = elapsed > 0 ? done / elapsed : 0.0;
    pthread_mutex_lock(&msg_lock);
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
    pthread_mutex_unlock(&msg_lock);
}

static void end_progress(void)
{
    pthread_mutex_lock(&msg_lock);
    end_progress_locked();
    pthread_mutex_unlock(&msg_lock);
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
    double begun, setup;      /* the run's start; its time before the scoring */
    /* the log's fps, as libvmaf computes it: frames read / processor time
     * (clock(), all threads) of the scoring, here from the first frame
     * handed to the device to the last score */
    clock_t first_submit, last_score;
    const char *decoder[2];   /* who decoded each input: "cpu", "cuda", "vaapi" */
    int sessions[2];          /* decoders at work on each input (sessions.h) */
    char label[2][32];        /* "cuda", "cuda x4" (4 sessions) */
    ProbeResult probe;        /* --hwdec auto's choice by measurement */
    int host_jobs;            /* RunSetup's */
    uint64_t hash[2];         /* --hash-frames: the inputs' samples */
    FILE *msg;                /* messages */
    volatile sig_atomic_t *stop, *stop_signal;
    /* QGPU_TIMING=1: the scoring thread's seconds waiting for pairs, in
     * the submits, in collect */
    double t_pairs, t_submit, t_collect;
    double t_first; /* the first pair's submit (the library's set-up with it
                       unless start_early did it) */
    double t_start; /* start_early's qgpu_start in the set-up (0: not started) */
    double t_read, t_full; /* the reading thread's (reader_timing) */
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
    FILE *msg = r->msg;
    unsigned er = decoder_error_count(ref), ed = decoder_error_count(dis);
    unsigned corrupt = decoder_corrupt_count(ref) + decoder_corrupt_count(dis);
    unsigned dropped = st->dropped[0] + st->dropped[1];
    r->decode_errors = er + ed;
    r->skipped_frames = corrupt + dropped;
    if (!r->decode_errors)
        return;
    if (!r->skipped_frames)
        fprintf(msg, "qgpu: warning: skipped %u decoding error%s (reference %u, distorted "
                "%u)\n", r->decode_errors, r->decode_errors == 1 ? "" : "s", er, ed);
    else
        fprintf(msg, "qgpu: warning: skipped %u decoding error%s (reference %u, distorted %u) "
                "and %u frame%s: %u decoded with errors, %u without a partner (reference %u, "
                "distorted %u; pairs kept aligned by presentation time)\n", r->decode_errors,
                r->decode_errors == 1 ? "" : "s", er, ed, r->skipped_frames,
                r->skipped_frames == 1 ? "" : "s", corrupt, dropped, st->dropped[0],
                st->dropped[1]);
    if (r->sessions[0] > 1 || r->sessions[1] > 1)
        fprintf(msg, "qgpu: warning: the inputs were decoded by several decoders each "
                "(sessions), which start at key frames: a damaged stretch may be concealed "
                "otherwise than by one decoder that ran through it; --decode-sessions 1 "
                "--cpu-sessions 0 gives one decoder's frames\n");
}

/* The --log-stream file, opened once the first pair was accepted (so a
 * run that fails before scoring leaves none). */
static int open_stream(Run *r)
{
    FILE *msg = r->msg;
    char err[1024];
    if (!r->o->log_stream || r->stream)
        return 0;
    if (output_open(&r->stream, "--log-stream", r->o->log_stream, err, sizeof(err))) {
        fprintf(msg, "qgpu: %s\n", err);
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
    QgpuCudaFrame *on[2] = {decoder_device_frame(ref, pair->ref_owner),
                            decoder_device_frame(dis, pair->dist_owner)};
    if (on[0] && on[1]) {
        int ret = qgpu_submit_cuda(ctx, on[0], on[1]);
        /* UNSUPPORTED: the memory cannot be imported (the ring stopped and
         * says why): this pair and later frames go through the host */
        if (ret != QGPU_ERR_UNSUPPORTED)
            return ret;
    }
    if (pair_to_host(ref, dis, pair) < 0)
        return GPU_COPY_FAILED;
    /* CPU-decoded frames in pinned blocks go without the staging copy */
    return pinned_frames_submit(ctx, decoder_pinned_frames(ref), &pair->ref,
                                decoder_pinned_frames(dis), &pair->dist);
}

/* The mixed decode (cuda_upload.h): the CPU-decoded input's frames put on
 * the GPU beside NVDEC's. */
static void print_uploads(FILE *msg, const Decoder *ref, const Decoder *dis)
{
    for (int i = 0; i < 2; i++) {
        const Decoder *d = i ? dis : ref;
        unsigned up = decoder_uploaded(d), miss = decoder_upload_misses(d);
        if (up || miss)
            fprintf(msg, "qgpu: mixed decode: %s decoded on the CPU, %u frames put on the GPU "
                    "beside the %s's from NVDEC, %u through host memory\n",
                    i ? "distorted" : "reference", up, i ? "reference" : "distorted", miss);
    }
}

/* With NVDEC: whether the frames stayed on the GPU, and why not. */
static void print_zero_copy(FILE *msg, const QgpuContext *ctx, const Decoder *ref,
                            const Decoder *dis)
{
    const char *note[2] = {decoder_zero_copy_note(ref), decoder_zero_copy_note(dis)};
    unsigned device = qgpu_frames_from_device(ctx), host = qgpu_frames_from_host(ctx);
    if (device)
        fprintf(msg, "qgpu: %u pairs from NVDEC's memory on the GPU (zero-copy), %u through "
                "host memory\n", device, host);
    for (int i = 0; i < 2; i++)
        if (*note[i])
            fprintf(msg, "qgpu: %s frames went through host memory: %s\n",
                    i ? "distorted" : "reference", note[i]);
}

/* The library's stream started for the pictures' format (qgpu_start) in
 * the set-up, before the reading thread: the features' set-up (0.015-0.024
 * s on the H200 for VMAF + psnr + ciede at 1080p), which the first submit
 * would do inside the run, stalling the decoders (the reading thread's
 * queue of pairs fills in a few ms). Started instead once the reading
 * thread ran, it did not hide behind the decoders' first frames: the
 * reading thread waited 0.02-0.03 s for room (doc/performance.md). Nothing
 * when a decoder cannot say its pictures' format before the first
 * (decoder_picture_format) or the two differ (the first submit says so).
 * 0 or a QGPU_ERR_* code. */
static int start_early(Run *r, const Decoder *ref, const Decoder *dis)
{
    QgpuPicture a, b;
    double t = monotonic_seconds();
    int ret;
    if (!decoder_picture_format(ref, &a) || !decoder_picture_format(dis, &b) ||
        a.width != b.width || a.height != b.height || a.layout != b.layout ||
        a.bitdepth != b.bitdepth)
        return 0;
    ret = qgpu_start(r->ctx, a.width, a.height, a.layout, a.bitdepth);
    r->t_start = monotonic_seconds() - t;
    return ret;
}

/* QGPU_TIMING=1: where the scoring thread's time went, and the decoding
 * threads' time copying NVDEC's frames on the GPU (cuda_ring.h). */
static void print_timing(const Run *r, const Decoder *ref, const Decoder *dis)
{
    fprintf(r->msg, "qgpu: timing: the library's start in the set-up (qgpu_start) %.3f s\n",
            r->t_start);
    fprintf(r->msg, "qgpu: timing: %u pairs in %.3f s; scoring thread: waiting for pairs "
            "%.3f s, submits %.3f s (the first %.3f s), collect %.3f s; decoding threads' "
            "copies into the CUDA ring (queued; waits when %d frames are held): reference "
            "%.3f s, distorted %.3f s\n",
            r->submitted, r->seconds, r->t_pairs, r->t_submit, r->t_first, r->t_collect,
            QGPU_CUDA_HELD,
            decoder_zero_copy_seconds(ref), decoder_zero_copy_seconds(dis));
    fprintf(r->msg, "qgpu: timing: reading thread: reading pairs %.3f s, waiting for room "
            "in the queue of pairs %.3f s\n", r->t_read, r->t_full);
    fprintf(r->msg, "qgpu: timing: %u pairs from pinned frames (CPU decoders' frames given "
            "FFmpeg's buffers for want of a free block: reference %u, distorted %u)\n",
            pinned_frames_submitted(decoder_pinned_frames(ref)),
            pinned_frames_misses(decoder_pinned_frames(ref)),
            pinned_frames_misses(decoder_pinned_frames(dis)));
    for (int i = 0; i < 2; i++) {
        unsigned attach, during;
        double t_attach, t_during;
        pinned_frames_setup(decoder_pinned_frames(i ? dis : ref), &attach, &t_attach, &during,
                            &t_during);
        if (attach || during)
            fprintf(r->msg, "qgpu: timing: %s pinned blocks: %u made before the run (%.3f s, "
                    "in the set-up), %u while scoring (%.3f s on the scoring thread)\n",
                    i ? "distorted" : "reference", attach, t_attach, during, t_during);
    }
    decoder_print_timing(ref, "reference", r->msg);
    decoder_print_timing(dis, "distorted", r->msg);
}

static int score(Run *r, Decoder *ref, Decoder *dis)
{
    FILE *msg = r->msg;
    const Options *o = r->o;
    char err[1024] = "";
    double start = monotonic_seconds(), last_report = 0.0;
    Reader *reader = NULL;
    r->setup = start - r->begun;
    ReaderOptions ro = {o->frame_cnt, o->ref_offset, o->dist_offset, o->pairing, r->stop};
    /* no progress lines in logs and pipes */
    int progress = !o->quiet && msg == stderr && isatty(STDERR_FILENO);
    unsigned total;
    FramePair pair;
    PairStats st;
    int ret = 0, status = EXIT_OK;

    if (reader_start(&reader, ref, dis, &ro, err, sizeof(err))) {
        fprintf(msg, "qgpu: %s\n", err);
        return o->pairing == PAIR_TIME ? EXIT_USAGE : EXIT_INTERNAL;
    }
    total = expected_pairs(o, ref, dis, reader_mode(reader));
    if (!o->quiet && reader_mode(reader) == PAIR_TIME) {
        DecoderInfo ri, di;
        decoder_get_info(ref, &ri);
        decoder_get_info(dis, &di);
        fprintf(msg, "qgpu: frame rates differ (reference %.3f fps, distorted %.3f fps): "
                "each reference frame is paired with the distorted frame nearest in "
                "presentation time\n", ri.fps, di.fps);
    }
    for (;;) {
        double t = monotonic_seconds();
        if (*r->stop || r->stream_failed ||
            (ret = reader_next(reader, &pair, err, sizeof(err))) != 1)
            break;
        r->t_pairs += monotonic_seconds() - t;
        if (!r->submitted)
            r->first_submit = clock();
        if (o->decode_only) { /* the decoding speed alone */
            if (o->hash_frames && pair_to_host(ref, dis, &pair) < 0) {
                reader_release(&pair);
                end_progress();
                fprintf(msg, "qgpu: frame %u: copying a decoded frame from the GPU failed\n",
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
        t = monotonic_seconds();
        ret = submit_pair(r->ctx, ref, dis, &pair); /* copies the samples */
        reader_release(&pair);
        t = monotonic_seconds() - t; /* the submit's seconds */
        r->t_submit += t;
        if (!r->submitted)
            r->t_first = t;
        if (ret == GPU_COPY_FAILED) {
            end_progress();
            fprintf(msg, "qgpu: frame %u: copying a decoded frame from the GPU failed\n",
                    r->submitted);
            status = EXIT_DEVICE;
            goto fail;
        }
        if (ret) {
            end_progress();
            fprintf(msg, "qgpu: frame %u: %s%s\n", r->submitted, qgpu_last_error(r->ctx),
                    oom_hint(ret));
            status = exit_status(ret);
            goto fail;
        }
        r->submitted++;
        if ((status = open_stream(r)))
            goto fail;
        t = monotonic_seconds();
        ret = collect(r, 0);
        r->t_collect += monotonic_seconds() - t;
        if (ret < 0) {
            end_progress();
            fprintf(msg, "qgpu: %s%s\n", qgpu_last_error(r->ctx), oom_hint(ret));
            status = exit_status(ret);
            goto fail;
        }
        if (progress && (r->submitted == 1 || monotonic_seconds() - last_report >= 0.5)) {
            last_report = monotonic_seconds();
            show_progress(r->submitted, total, last_report - start);
        }
    }
    if (progress && r->submitted && !*r->stop && ret == 0 && !r->stream_failed)
        show_progress(r->submitted, r->submitted, monotonic_seconds() - start); /* 100 % */
    end_progress();
    if (*r->stop) {
        fprintf(msg, "qgpu: interrupted (%s) after %u pairs; finishing the log\n",
                strsignal(*r->stop_signal ? *r->stop_signal : SIGINT), r->submitted);
    } else if (r->stream_failed) {
        fprintf(msg, "qgpu: --log-stream failed after %u pairs; finishing the log\n",
                r->submitted);
    } else if (ret < 0) {
        /* an input failed midway: the frames before it are still finished
         * and logged; the error (the last line) and the exit status say the
         * input failed */
        status = EXIT_INPUT;
    } else {
        report_pairing(msg, o, reader, r->submitted);
    }
    reader_stats(reader, &st);
    reader_timing(reader, &r->t_read, &r->t_full);
    reader_stop(&reader);
    report_errors(ref, dis, &st, r);
    if ((ret = qgpu_flush(r->ctx)) < 0) {
        fprintf(msg, "qgpu: %s%s\n", qgpu_last_error(r->ctx), oom_hint(ret));
        return exit_status(ret);
    }
    if ((ret = collect(r, 1)) < 0) {
        fprintf(msg, "qgpu: %s%s\n", qgpu_last_error(r->ctx), oom_hint(ret));
        return exit_status(ret);
    }
    r->seconds = monotonic_seconds() - start;
    if (!env_is("QGPU_TIMING", "") && !env_is("QGPU_TIMING", "0"))
        print_timing(r, ref, dis);
    if (status) {
        fprintf(msg, "qgpu: %s\n", err);
        return status;
    }
    if (r->submitted == 0 && !*r->stop) {
        char a[256], b[256];
        fprintf(msg, "qgpu: no frame to score: reference \"%s\" has %u decodable frame%s, "
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
    FILE *msg = r->msg;
    const Options *o = r->o;
    char name[256];
    double cpu = (double)(r->last_score - r->first_submit) / CLOCKS_PER_SEC;
    unsigned zero_copy = qgpu_frames_from_device(r->ctx); /* NVDEC frames left on the GPU */
    const ProbeResult *p = &r->probe;
    QgpuLogField fields[10] = {{"decode_errors", NULL, r->decode_errors},
                              {"skipped_frames", NULL, r->skipped_frames},
                              {"decoder_reference", r->decoder[0], 0},
                              {"decoder_distorted", r->decoder[1], 0}};
    int n = 4;
    if (r->sessions[0] > 1 || r->sessions[1] > 1) {
        fields[n++] = (QgpuLogField){"decode_sessions_reference", NULL, r->sessions[0]};
        fields[n++] = (QgpuLogField){"decode_sessions_distorted", NULL, r->sessions[1]};
    }
    if (zero_copy)
        fields[n++] = (QgpuLogField){"pairs_zero_copy", NULL, zero_copy};
    if (p->how) /* --hwdec auto's choice: how, and the floors it compared */
        fields[n++] = (QgpuLogField){"decoder_choice", p->how, 0};
    if (p->how && p->choice.cpu_pairs > 0.0) {
        fields[n++] = (QgpuLogField){"decoder_cuda_pairs_per_s", NULL,
                                     round(p->choice.hw_pairs)};
        fields[n++] = (QgpuLogField){"decoder_cpu_pairs_per_s", NULL,
                                     round(p->choice.cpu_pairs)};
    }
    QgpuLogOptions lo = {o->format, r->submitted && cpu > 0 ? r->submitted / cpu : 0.0,
                         o->subsample, fields, n};
    if (qgpu_write_log_ex(r->ctx, o->output, &lo)) {
        fprintf(msg, "qgpu: -o %s: %s\n",
                strcmp(o->output, "-") ? short_path(o->output, name, sizeof(name)) : "-",
                qgpu_last_error(r->ctx));
        return EXIT_OUTPUT;
    }
    return EXIT_OK;
}

/* A job's result for qgpu batch: frames, time, device and pooled means. */
static json_object *run_summary(const Run *r)
{
    const Options *o = r->o;
    json_object *s = json_object_new_object(), *pooled = json_object_new_object();
    unsigned frames = qgpu_frame_count(r->ctx);
    double ms;
    json_object_object_add(s, "frames", json_object_new_int64(frames));
    json_object_object_add(s, "seconds", json_object_new_double(r->seconds));
    json_object_object_add(s, "fps", json_object_new_double(r->seconds > 0 ? frames /
                                                                    r->seconds : 0.0));
    json_object_object_add(s, "setup_seconds", json_object_new_double(r->setup));
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
    return s;
}

/* --job-summary FILE (a job of qgpu batch --isolate process): the result,
 * written once the log is in place. */
static int write_job_summary(const Run *r, json_object *s)
{
    FILE *msg = r->msg, *f;
    int ok = (f = fopen(r->o->job_summary, "w")) != NULL;
    if (ok) {
        ok = fprintf(f, "%s\n", json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN)) > 0;
        ok = !fclose(f) && ok;
    }
    if (!ok) {
        fprintf(msg, "qgpu: --job-summary %s: %s\n", r->o->job_summary, strerror(errno));
        return EXIT_OUTPUT;
    }
    return EXIT_OK;
}

/* Models and features; a model file that cannot be read or parsed is an
 * input error, the rest of a bad spec a usage error. */
static int enable_metrics(FILE *msg, const Options *o, QgpuContext *ctx)
{
    int ret;
    for (int i = 0; i < o->nb_models; i++) {
        if ((ret = qgpu_use_model(ctx, o->models[i]))) {
            fprintf(msg, "qgpu: --model %s: %s%s\n", o->models[i], qgpu_last_error(ctx),
                    oom_hint(ret));
            if (ret == QGPU_ERR_IO || (ret == QGPU_ERR_MODEL && strstr(o->models[i], "path=")))
                return EXIT_INPUT;
            return ret == QGPU_ERR_MODEL ? EXIT_USAGE : exit_status(ret);
        }
    }
    for (int i = 0; i < o->nb_features; i++) {
        if ((ret = qgpu_enable_feature(ctx, o->features[i]))) {
            fprintf(msg, "qgpu: --feature %s: %s%s\n", o->features[i], qgpu_last_error(ctx),
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
    FILE *msg = opaque;
    pthread_mutex_lock(&msg_lock);
    if (msg == stderr)
        end_progress_locked();
    fprintf(msg, level == QGPU_LOG_WARNING ? "qgpu: warning: %s\n" : "qgpu: %s\n", message);
    pthread_mutex_unlock(&msg_lock);
}

static int interrupted_status(const Run *r)
{
    return 128 + (*r->stop_signal ? *r->stop_signal : SIGINT);
}

/* "decoders: reference cuda, distorted cuda", and --hwdec auto's choice
 * by measurement with its figures. */
static void print_decoders(const Run *r)
{
    const ProbeResult *p = &r->probe;
    fprintf(r->msg, "qgpu: decoders: reference %s, distorted %s", r->label[0], r->label[1]);
    if (p->how && p->choice.cpu_pairs > 0.0)
        fprintf(r->msg, " (--hwdec auto, %s: NVDEC %.0f pairs/s, CPU %.0f pairs/s%s; %.2f s%s)",
                !strcmp(p->how, "cached") ? "measured earlier in this process"
                : !strcmp(p->how, "saved") ? "measured by an earlier run on this host"
                                           : "measured",
                p->choice.hw_pairs, p->choice.cpu_pairs,
                r->host_jobs > 1 ? ", its cores shared by the batch's jobs" : "", p->seconds,
                p->before_nvdec ? "; known before opening NVDEC" : "");
    else if (p->how)
        fprintf(r->msg, " (--hwdec auto, chosen by QGPU_HWDEC_PROBE%s)",
                p->before_nvdec ? "; known before opening NVDEC" : "");
    else if (*p->note)
        fprintf(r->msg, " (--hwdec auto: NVDEC kept, %s)", p->note);
    fputc('\n', r->msg);
}

/* The end of a scoring run: the log (also of the frames before a failure
 * midway), the summary on stderr, the job's result. */
static int finish_run(Run *r, const RunSetup *s, const Decoder *ref, const Decoder *dis,
                      int ret)
{
    const Options *o = r->o;
    FILE *msg = r->msg;
    if (o->decode_only) {
        if (!ret && o->hash_frames)
            fprintf(msg, "qgpu: sample checksums of the %u pairs: reference %016llx, "
                    "distorted %016llx\n", r->submitted, (unsigned long long)r->hash[0],
                    (unsigned long long)r->hash[1]);
        if (!ret)
            fprintf(msg, "qgpu: decoded %u pairs in %.2f s (%.1f pairs/s), nothing scored "
                    "(--decode-only); decoders: reference %s, distorted %s\n", r->submitted,
                    r->seconds, r->seconds > 0 ? r->submitted / r->seconds : 0.0,
                    r->label[0], r->label[1]);
        if (!ret && (r->probe.how || *r->probe.note))
            print_decoders(r);
        if (!ret && !o->quiet)
            print_uploads(msg, ref, dis);
        return ret;
    }
    /* a failure midway (device lost, an input that changes format, a
     * --log-stream that cannot be written): the frames finished before it
     * still get a complete log; the exit status stays the failure's */
    if (ret && ret != EXIT_USAGE && o->output && qgpu_frame_count(r->ctx) > 0)
        write_log(r);
    if (ret)
        return ret;
    if (!o->quiet) {
        print_summary(msg, r->ctx, r->seconds, o->subsample);
        print_decoders(r);
        print_zero_copy(msg, r->ctx, ref, dis);
        print_uploads(msg, ref, dis);
    }
    if (o->output)
        ret = write_log(r);
    if (!ret && !*r->stop && (o->job_summary || s->summary)) {
        json_object *sum = run_summary(r);
        if (o->job_summary)
            ret = write_job_summary(r, sum);
        if (!ret && s->summary)
            *s->summary = sum;
        else
            json_object_put(sum);
    }
    if (*r->stop && !ret)
        ret = interrupted_status(r);
    return ret;
}

/* --cpu-sessions auto: one CPU session beside an NVDEC decoder whose
 * frames stay on the GPU (1080p HEVC on the H200 scored at 103-108% of
 * NVDEC's decoding floor with it, at 94-97% without:
 * doc/performance.md), for a single run (a batch's jobs share the cores)
 * on a host with 8 cores or more, of a file of at most
 * AUTO_CPU_SESSIONS_MAX_MB (may: auto_cpu_sessions_may's answer for the
 * input); else none. */
static int auto_cpu_sessions(int may, const Decoder *d)
{
    DecoderInfo info;
    decoder_get_info(d, &info);
    return may && !strcmp(info.decoder, "cuda") && decoder_can_add_cpu_sessions(d);
}

/* --decode-sessions and --cpu-sessions (sessions.h): auto is one decoder
 * per input (on the H200 more NVDEC sessions decode faster but score
 * slower: the GPU then shares its time between the decoders' CUDA context
 * and the scoring's OpenCL one; CPU decoders share the cores and lose the
 * pinned frames: on the CPU path, with one CPU session per input taking
 * a stretch it decodes in time, low-bitrate 1080p H.264 decoded and
 * scored no faster; doc/performance.md) and auto_cpu_sessions; a note when
 * more were asked for and cannot be had. 0, or an exit status with the
 * message on msg. */
static int start_sessions(FILE *msg, const Options *o, const int auto_may[2], Decoder *ref,
                          Decoder *dis)
{
    for (int i = 0; i < 2; i++) {
        Decoder *d = i ? dis : ref;
        char note[512] = "", err[1024] = "";
        int n = o->decode_sessions ? o->decode_sessions : 1;
        int n_cpu = o->cpu_sessions >= 0 ? o->cpu_sessions : auto_cpu_sessions(auto_may[i], d);
        int ret = decoder_use_sessions(d, n, n_cpu, note, sizeof(note), err, sizeof(err));
        if (ret < 0) {
            fprintf(msg, "qgpu: %s\n", err);
            return EXIT_INPUT;
        }
        if (ret == 1 && *note && o->cpu_sessions > 0 && !o->quiet)
            fprintf(msg, "qgpu: %s decoded by one decoder (--decode-sessions %d, "
                    "--cpu-sessions %d: %s)\n", i ? "distorted" : "reference", n, n_cpu, note);
        else if (ret == 1 && *note && n > 1 && !o->quiet)
            fprintf(msg, "qgpu: %s decoded by one decoder (--decode-sessions %d: %s)\n",
                    i ? "distorted" : "reference", n, note);
    }
    return 0;
}

/* QGPU_BATCH_REUSE=0: batch jobs close their decoders as single runs do
 * (for measuring what the reuse brings). */
static int batch_reuse(void)
{
    const char *env = getenv("QGPU_BATCH_REUSE");
    return !env || strcmp(env, "0");
}

int run_pair(const Options *o, const RunSetup *s)
{
    FILE *msg = s->msg;
    QgpuConfig cfg;
    Run run;
    Decoder *ref = NULL, *dis = NULL;
    char err[1024];
    int auto_may[2], ret;

    memset(&run, 0, sizeof(run));
    run.begun = monotonic_seconds();
    run.o = o;
    run.msg = msg;
    run.stop = s->stop;
    run.stop_signal = s->stop_signal;
    qgpu_config_default(&cfg);
    cfg.device = o->device;
    cfg.pipeline_depth = o->depth || o->raw_spec ? o->depth
                                                 : hwdec_pipeline_depth(o->hwdec, o->hwdec_dist);
    cfg.log_callback = print_library_log;
    cfg.log_opaque = msg;
    cfg.log_level = o->quiet ? QGPU_LOG_WARNING : QGPU_LOG_INFO;
    ret = s->device ? qgpu_open_shared(&run.ctx, s->device, &cfg) : qgpu_open(&run.ctx, &cfg);
    if (ret) {
        fprintf(msg, "qgpu: %s%s\n", qgpu_open_error(), oom_hint(ret));
        ret = exit_status(ret);
        goto out;
    }
    if ((ret = enable_metrics(msg, o, run.ctx)))
        goto out;
    run.host_jobs = s->host_jobs;
    /* one decision per input for the ring size and the sessions */
    auto_may[0] = auto_cpu_sessions_may(s, o->reference);
    auto_may[1] = auto_cpu_sessions_may(s, o->distorted);
    ret = open_inputs(msg, o, s, auto_may, &ref, &dis, &run.probe);
    if (ret) {
        if (*run.stop)
            ret = interrupted_status(&run);
        goto out;
    }
    if ((ret = start_sessions(msg, o, auto_may, ref, dis)))
        goto out;
    for (int i = 0; i < 2; i++) {
        DecoderInfo info;
        decoder_get_info(i ? dis : ref, &info);
        run.decoder[i] = info.decoder;
        run.sessions[i] = info.sessions;
        if (info.sessions > 1)
            snprintf(run.label[i], sizeof(run.label[i]), "%s x%d", info.decoder, info.sessions);
        else
            snprintf(run.label[i], sizeof(run.label[i]), "%s", info.decoder);
    }
    run.hash[0] = run.hash[1] = FRAME_HASH_START;
    /* CPU decoders' frames into pinned blocks (their first ones made now),
     * for long pairs */
    if (!use_pinned_frames(o, ref, dis)) {
        decoder_use_pinned_frames(ref, 0);
        decoder_use_pinned_frames(dis, 0);
    }
    pinned_frames_attach(decoder_pinned_frames(ref), run.ctx);
    pinned_frames_attach(decoder_pinned_frames(dis), run.ctx);
    if (!o->decode_only && (ret = start_early(&run, ref, dis))) {
        fprintf(msg, "qgpu: %s%s\n", qgpu_last_error(run.ctx), oom_hint(ret));
        ret = exit_status(ret);
        goto out;
    }
    ret = finish_run(&run, s, ref, dis, score(&run, ref, dis));
out:
    if (output_close(&run.stream, err, sizeof(err))) {
        fprintf(msg, "qgpu: %s\n", err);
        if (!ret || ret == EXIT_OUTPUT || *run.stop)
            ret = EXIT_OUTPUT;
    }
    free(run.line);
    qgpu_close(&run.ctx);
    if (s->device && batch_reuse()) {
        /* a batch job: the slot's next job reuses the zero-copy rings, and
         * starts while these decoders are closed (doc/batch.md) */
        decoder_park(ref);
        decoder_park(dis);
        closer_close(&ref);
        closer_close(&dis);
    }
    decoder_close(&ref);
    decoder_close(&dis);
    return ret;
}
