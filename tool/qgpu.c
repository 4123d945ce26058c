/*
 * qgpu: score a distorted video against its reference on an OpenCL device.
 *
 *   qgpu -r REF -d DIST [-m MODEL]... [--feature NAME[=opt=val:...]]...
 *        [-o FILE] [--json|--xml|--csv|--sub] [--device SPEC] [options]
 *
 * User guide: doc/qgpu.md (man page doc/qgpu.1), exit statuses included.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <pthread.h>
#include <sys/stat.h>

#include "decode.h"
#include "reader.h"
#include "qgpu/qgpu.h"

#define MAX_FEATURES 64

/* Exit status (doc/qgpu.md, "Exit status"). */
enum {
    EXIT_OK = 0,
    EXIT_INTERNAL = 1, /* scoring failed for another reason (host memory, threads...) */
    EXIT_USAGE = 2,    /* the command line: option, value, feature, model spec */
    EXIT_INPUT = 3,    /* an input or model file: missing, unreadable, not a video... */
    EXIT_DEVICE = 4,   /* no OpenCL device, device out of memory, OpenCL failure */
    EXIT_OUTPUT = 5,   /* a log file cannot be written */
    EXIT_INTERRUPTED = 130,
};

typedef struct Options {
    const char *reference;
    const char *distorted;
    const char *raw_spec;
    const char *features[MAX_FEATURES];
    int nb_features;
    const char *models[MAX_FEATURES];
    int nb_models;
    const char *output;
    int format;
    const char *device;
    const char *scaler;
    int depth;
    unsigned frame_cnt;
    int quiet;
    unsigned subsample;
    const char *log_stream;
    const char *scale_to;
    unsigned ref_offset, dist_offset;
    int pairing;
} Options;

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    interrupted = 1;
    signal(sig, SIG_DFL); /* a second Ctrl-C stops at once */
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: qgpu -r REFERENCE -d DISTORTED [options]\n"
            "Scores DISTORTED against REFERENCE (any container/codec FFmpeg decodes) with\n"
            "libvmaf's metrics on an OpenCL device.\n\n"
            "  -r, --reference FILE     reference video\n"
            "  -d, --distorted FILE     distorted video\n"
            "  -m, --model SPEC         VMAF model, libvmaf syntax: version=vmaf_v0.6.1,\n"
            "                           path=model.json, name=..., enable_transform,\n"
            "                           disable_clip (repeatable; default\n"
            "                           version=vmaf_v0.6.1 when no --feature is given)\n"
            "      --feature SPEC       metric to compute, libvmaf syntax: psnr,\n"
            "                           psnr=enable_chroma=false (repeatable)\n"
            "  -o, --output FILE        write the per-frame log to FILE (\"-\" = stdout)\n"
            "      --json | --xml | --csv | --sub   log format (default json)\n"
            "      --raw WxH:PIXFMT[:FPS]  both inputs are raw planar video\n"
            "      --scaler NAME        scaler used when the sizes differ\n"
            "                           (default bicubic, as libvmaf users do)\n"
            "      --scale-to ref|dist|WxH  size both inputs are scored at (default ref)\n"
            "      --frame-cnt N        score at most N frames\n"
            "      --ref-offset N       skip the first N reference frames\n"
            "      --dist-offset N      skip the first N distorted frames\n"
            "      --pairing MODE       auto (default): frame i with frame i when the frame\n"
            "                           rates agree, else nearest presentation time;\n"
            "                           index; time\n"
            "      --subsample N        log (and pool) every Nth frame, as libvmaf\n"
            "      --log-stream FILE    one JSON line per frame as it is scored,\n"
            "                           flushed (\"-\" = stdout)\n"
            "      --device SPEC        auto (default), gpu, cpu, P:D or a name substring;\n"
            "                           also $QGPU_DEVICE\n"
            "      --pipeline-depth N   frames in flight on the device (default 2)\n"
            "      --list-devices       list OpenCL devices and exit\n"
            "      --list-features      list the metrics and exit\n"
            "  -q, --quiet              no progress or summary on stderr (warnings and\n"
            "                           errors still are)\n"
            "      --version            print the version and exit\n"
            "  -h, --help               this text\n\n"
            "Exit status: 0 scored, 1 internal error, 2 usage (options, features, model\n"
            "spec), 3 input (file missing, unreadable, not a video, no frames), 4 OpenCL\n"
            "device (none, out of memory), 5 a log cannot be written, 130 interrupted.\n"
            "See man qgpu or doc/qgpu.md.\n");
}

static void print_device(void *opaque, int platform, int device, const char *type,
                         const char *name, const char *platform_name)
{
    printf("%d:%d  %-11s %s  (%s)\n", platform, device, type, name, platform_name);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A whole non-negative decimal number >= min. */
static int parse_count(const char *name, const char *s, unsigned min, unsigned *out)
{
    char *end;
    unsigned long v;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (!*s || *end || *s == '-' || errno || v > 1000000000UL || v < min) {
        fprintf(stderr, "qgpu: %s %s: expected a whole number >= %u\n", name, s, min);
        return 1;
    }
    *out = (unsigned)v;
    return 0;
}

/* Is "name[=value]" one of the long options? */
static int known_long_option(const struct option *options, const char *arg)
{
    size_t len = strcspn(arg, "=");
    for (int i = 0; options[i].name; i++)
        if (strlen(options[i].name) == len && !strncmp(options[i].name, arg, len))
            return 1;
    return 0;
}

static int parse_args(int argc, char **argv, Options *o)
{
    enum {
        OPT_FEATURE = 256, OPT_JSON, OPT_XML, OPT_CSV, OPT_SUB, OPT_RAW, OPT_SCALER,
        OPT_FRAME_CNT, OPT_DEVICE, OPT_DEPTH, OPT_LIST_DEVICES, OPT_LIST_FEATURES, OPT_VERSION,
        OPT_SUBSAMPLE, OPT_LOG_STREAM, OPT_SCALE_TO, OPT_REF_OFFSET, OPT_DIST_OFFSET, OPT_PAIRING
    };
    static const struct option long_options[] = {
        {"reference", required_argument, NULL, 'r'},
        {"distorted", required_argument, NULL, 'd'},
        {"output", required_argument, NULL, 'o'},
        {"feature", required_argument, NULL, OPT_FEATURE},
        {"model", required_argument, NULL, 'm'},
        {"json", no_argument, NULL, OPT_JSON},
        {"xml", no_argument, NULL, OPT_XML},
        {"csv", no_argument, NULL, OPT_CSV},
        {"sub", no_argument, NULL, OPT_SUB},
        {"raw", required_argument, NULL, OPT_RAW},
        {"scaler", required_argument, NULL, OPT_SCALER},
        {"frame-cnt", required_argument, NULL, OPT_FRAME_CNT},
        {"frame_cnt", required_argument, NULL, OPT_FRAME_CNT},
        {"device", required_argument, NULL, OPT_DEVICE},
        {"subsample", required_argument, NULL, OPT_SUBSAMPLE},
        {"log-stream", required_argument, NULL, OPT_LOG_STREAM},
        {"scale-to", required_argument, NULL, OPT_SCALE_TO},
        {"ref-offset", required_argument, NULL, OPT_REF_OFFSET},
        {"dist-offset", required_argument, NULL, OPT_DIST_OFFSET},
        {"pairing", required_argument, NULL, OPT_PAIRING},
        {"pipeline-depth", required_argument, NULL, OPT_DEPTH},
        {"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
        {"list-features", no_argument, NULL, OPT_LIST_FEATURES},
        {"quiet", no_argument, NULL, 'q'},
        {"version", no_argument, NULL, OPT_VERSION},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0; /* one-line messages of our own */
    while ((c = getopt_long(argc, argv, ":r:d:o:m:qh", long_options, NULL)) != -1) {
        switch (c) {
        case 'r': o->reference = optarg; break;
        case 'd': o->distorted = optarg; break;
        case 'o': o->output = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'm':
            if (o->nb_models == MAX_FEATURES) {
                fprintf(stderr, "qgpu: too many --model options\n");
                return EXIT_USAGE;
            }
            o->models[o->nb_models++] = optarg;
            break;
        case OPT_FEATURE:
            if (o->nb_features == MAX_FEATURES) {
                fprintf(stderr, "qgpu: too many --feature options\n");
                return EXIT_USAGE;
            }
            o->features[o->nb_features++] = optarg;
            break;
        case OPT_JSON: o->format = QGPU_LOG_FORMAT_JSON; break;
        case OPT_XML: o->format = QGPU_LOG_FORMAT_XML; break;
        case OPT_CSV: o->format = QGPU_LOG_FORMAT_CSV; break;
        case OPT_SUB: o->format = QGPU_LOG_FORMAT_SUB; break;
        case OPT_RAW: o->raw_spec = optarg; break;
        case OPT_SCALER: o->scaler = optarg; break;
        case OPT_FRAME_CNT:
            if (parse_count("--frame-cnt", optarg, 1, &o->frame_cnt))
                return EXIT_USAGE;
            break;
        case OPT_SUBSAMPLE:
            if (parse_count("--subsample", optarg, 1, &o->subsample))
                return EXIT_USAGE;
            break;
        case OPT_REF_OFFSET:
            if (parse_count("--ref-offset", optarg, 0, &o->ref_offset))
                return EXIT_USAGE;
            break;
        case OPT_DIST_OFFSET:
            if (parse_count("--dist-offset", optarg, 0, &o->dist_offset))
                return EXIT_USAGE;
            break;
        case OPT_LOG_STREAM: o->log_stream = optarg; break;
        case OPT_SCALE_TO: {
            int w, h;
            char tail;
            if (strcmp(optarg, "ref") && strcmp(optarg, "dist") &&
                (sscanf(optarg, "%dx%d%c", &w, &h, &tail) != 2 || w < 1 || h < 1 ||
                 av_image_check_size((unsigned)w, (unsigned)h, 0, NULL) < 0)) {
                fprintf(stderr, "qgpu: --scale-to %s: expected ref, dist or WxH (not too large)\n",
                        optarg);
                return EXIT_USAGE;
            }
            o->scale_to = optarg;
            break;
        }
        case OPT_PAIRING:
            if (!strcmp(optarg, "auto"))
                o->pairing = PAIR_AUTO;
            else if (!strcmp(optarg, "index"))
                o->pairing = PAIR_INDEX;
            else if (!strcmp(optarg, "time"))
                o->pairing = PAIR_TIME;
            else {
                fprintf(stderr, "qgpu: --pairing %s: expected auto, index or time\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case OPT_DEVICE: o->device = optarg; break;
        case OPT_DEPTH: {
            unsigned depth;
            if (parse_count("--pipeline-depth", optarg, 1, &depth))
                return EXIT_USAGE;
            if (depth > 16) {
                fprintf(stderr, "qgpu: --pipeline-depth %s: expected 1 to 16\n", optarg);
                return EXIT_USAGE;
            }
            o->depth = (int)depth;
            break;
        }
        case OPT_LIST_DEVICES: {
            int n = qgpu_list_devices(print_device, NULL);
            if (n < 0) {
                fprintf(stderr, "qgpu: --list-devices: %s\n", qgpu_strerror(n));
                return EXIT_DEVICE;
            }
            return -1;
        }
        case OPT_LIST_FEATURES:
            printf("features (--feature):\n");
            for (int i = 0; qgpu_feature_name(i); i++)
                printf("  %s\n", qgpu_feature_name(i));
            printf("built-in models (--model version=NAME):\n");
            for (int i = 0; qgpu_model_name(i); i++)
                printf("  %s\n", qgpu_model_name(i));
            return -1;
        case OPT_VERSION: printf("qgpu %s\n", qgpu_version()); return -1;
        case 'h': usage(stdout); return -1;
        case ':':
            fprintf(stderr, "qgpu: option '%s' needs a value (see --help)\n", argv[optind - 1]);
            return EXIT_USAGE;
        default:
            if (!strncmp(argv[optind - 1], "--", 2) && strchr(argv[optind - 1], '=') &&
                known_long_option(long_options, argv[optind - 1] + 2))
                fprintf(stderr, "qgpu: option '%s' takes no value (see --help)\n",
                        argv[optind - 1]);
            else if (!strncmp(argv[optind - 1], "--", 2) || !optopt)
                fprintf(stderr, "qgpu: unknown option '%s' (see --help)\n", argv[optind - 1]);
            else
                fprintf(stderr, "qgpu: unknown option '-%c' (see --help)\n", optopt);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "qgpu: unexpected argument '%s' (use -r and -d)\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (!o->reference || !o->distorted) {
        fprintf(stderr, "qgpu: both -r REFERENCE and -d DISTORTED are required (see --help)\n");
        return EXIT_USAGE;
    }
    {
        char err[1024];
        if ((o->raw_spec && decoder_check_raw_spec(o->raw_spec, err, sizeof(err))) ||
            decoder_check_scaler(o->scaler, err, sizeof(err))) {
            fprintf(stderr, "qgpu: %s\n", err);
            return EXIT_USAGE;
        }
    }
    return 0;
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

/* Can a log be written to path? Checked before scoring, without creating
 * the file. */
static int check_writable(const char *option, const char *path)
{
    struct stat st;
    char dir[4096];
    const char *slash;
    if (!strcmp(path, "-"))
        return 0;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "qgpu: %s %s: cannot write: is a directory\n", option, path);
            return EXIT_OUTPUT;
        }
        if (access(path, W_OK)) {
            fprintf(stderr, "qgpu: %s %s: cannot write: %s\n", option, path, strerror(errno));
            return EXIT_OUTPUT;
        }
        return 0;
    }
    slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else
        snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (access(dir, W_OK | X_OK)) {
        fprintf(stderr, "qgpu: %s %s: cannot write: %s\n", option, path, strerror(errno));
        return EXIT_OUTPUT;
    }
    return 0;
}

static int open_inputs(const Options *o, Decoder **ref, Decoder **dis)
{
    char err[1024] = "";
    DecoderInfo ri, di;
    int ret = o->raw_spec ? decoder_open_raw(ref, o->reference, o->raw_spec, err, sizeof(err))
                          : decoder_open(ref, o->reference, err, sizeof(err));
    if (ret == 0)
        ret = o->raw_spec ? decoder_open_raw(dis, o->distorted, o->raw_spec, err, sizeof(err))
                          : decoder_open(dis, o->distorted, err, sizeof(err));
    if (ret) {
        fprintf(stderr, "qgpu: %s\n", err);
        return EXIT_INPUT;
    }
    decoder_set_warn(*ref, "reference", on_decode_warning, NULL);
    decoder_set_warn(*dis, "distorted", on_decode_warning, NULL);
    decoder_get_info(*ref, &ri);
    decoder_get_info(*dis, &di);
    /* scored size: the reference's unless --scale-to says otherwise; pixel
     * format: always the reference's */
    int w = ri.width, h = ri.height;
    if (o->scale_to && !strcmp(o->scale_to, "dist")) {
        w = di.width;
        h = di.height;
    } else if (o->scale_to && strcmp(o->scale_to, "ref")) {
        sscanf(o->scale_to, "%dx%d", &w, &h);
    }
    for (int i = 0; i < 2; i++) {
        const DecoderInfo *in = i ? &di : &ri;
        if (in->width == w && in->height == h && in->layout == ri.layout &&
            in->bitdepth == ri.bitdepth)
            continue;
        if (!o->quiet)
            fprintf(stderr, "qgpu: %s %dx%d %s scaled/converted to %dx%d %d-bit %s with %s\n",
                    i ? "distorted" : "reference", in->width, in->height, in->pix_fmt, w, h,
                    ri.bitdepth, ri.layout == QGPU_LAYOUT_400 ? "gray" :
                    ri.layout == QGPU_LAYOUT_420 ? "4:2:0" : ri.layout == QGPU_LAYOUT_422 ?
                    "4:2:2" : "4:4:4", o->scaler ? o->scaler : "bicubic");
        if (decoder_set_output(i ? *dis : *ref, w, h, ri.layout, ri.bitdepth, o->scaler, err,
                               sizeof(err))) {
            fprintf(stderr, "qgpu: %s\n", err);
            return EXIT_USAGE;
        }
    }
    return 0;
}

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

/* One JSON line per frame for wrappers, values printed as in the logs. */
static void stream_frame(FILE *f, const QgpuContext *ctx, unsigned frame)
{
    fprintf(f, "{\"frameNum\": %u, \"metrics\": {", frame);
    for (int k = 0; k < qgpu_score_count(ctx); k++) {
        const char *name = qgpu_score_name(ctx, k);
        double v = NAN;
        qgpu_get_score(ctx, frame, name, &v);
        fprintf(f, "%s\"", k ? ", " : "");
        for (const char *c = name; *c; c++)
            fprintf(f, *c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
        fputs("\": ", f);
        if (isnan(v) || isinf(v))
            fputs("null", f);
        else
            fprintf(f, v != 0.0 && fabs(v) < 1e-6 ? "%.16f" : "%.6f", v);
    }
    fputs("}}\n", f);
    fflush(f);
}

/* Collected frames: stream them when asked. */
static int collect(const Options *o, QgpuContext *ctx, FILE *stream, int wait)
{
    unsigned frame;
    int ret;
    while ((ret = qgpu_collect(ctx, &frame, wait)) == 1)
        if (stream && !(o->subsample > 1 && frame % o->subsample))
            stream_frame(stream, ctx, frame);
    return ret;
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
            fprintf(stderr, "qgpu: stopped after --frame-cnt %u pairs\n", submitted);
        else {
            char rn[32] = "?", dn[32] = "?";
            if (st.complete[0])
                snprintf(rn, sizeof(rn), "%u", st.frames[0]);
            if (st.complete[1])
                snprintf(dn, sizeof(dn), "%u", st.frames[1]);
            fprintf(stderr, "qgpu: scored %u pairs (by %s); reference had %s frames, distorted "
                    "%s", submitted, pair_mode_name(st.mode), rn, dn);
            if (o->ref_offset || o->dist_offset)
                fprintf(stderr, " (offsets: reference %u, distorted %u)", o->ref_offset,
                        o->dist_offset);
            if (st.ended_first >= 0)
                fprintf(stderr, "; \"%s\" ended before \"%s\"",
                        st.ended_first == 0 ? o->reference : o->distorted,
                        st.ended_first == 0 ? o->distorted : o->reference);
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

static void format_duration(char *buf, size_t len, double seconds)
{
    long s = lrint(seconds);
    if (s >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, len, "%ld:%02ld", s / 60, s % 60);
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

typedef struct RunStats {
    unsigned submitted;
    unsigned decode_errors;  /* both inputs */
    unsigned skipped_frames; /* frames not scored because of them */
} RunStats;

/* Decoding errors of both inputs: counted, and a warning line. */
static void report_errors(Decoder *ref, Decoder *dis, const PairStats *st, RunStats *rs)
{
    unsigned er = decoder_error_count(ref), ed = decoder_error_count(dis);
    unsigned corrupt = decoder_corrupt_count(ref) + decoder_corrupt_count(dis);
    unsigned dropped = st->dropped[0] + st->dropped[1];
    rs->decode_errors = er + ed;
    rs->skipped_frames = corrupt + dropped;
    if (!rs->decode_errors)
        return;
    if (!rs->skipped_frames) {
        fprintf(stderr, "qgpu: warning: skipped %u decoding error%s (reference %u, distorted "
                "%u)\n", rs->decode_errors, rs->decode_errors == 1 ? "" : "s", er, ed);
        return;
    }
    fprintf(stderr, "qgpu: warning: skipped %u decoding error%s (reference %u, distorted %u) "
            "and %u frame%s: %u decoded with errors, %u without a partner (reference %u, "
            "distorted %u; pairs kept aligned by presentation time)\n", rs->decode_errors,
            rs->decode_errors == 1 ? "" : "s", er, ed, rs->skipped_frames,
            rs->skipped_frames == 1 ? "" : "s", corrupt, dropped, st->dropped[0],
            st->dropped[1]);
}

static int score(const Options *o, QgpuContext *ctx, Decoder *ref, Decoder *dis,
                 FILE *stream, double *seconds, RunStats *rs)
{
    char err[1024] = "";
    double start = now_seconds(), last_report = 0.0;
    Reader *reader = NULL;
    ReaderOptions ro = {o->frame_cnt, o->ref_offset, o->dist_offset, o->pairing};
    /* no progress lines in logs and pipes */
    int progress = !o->quiet && isatty(STDERR_FILENO);
    unsigned total;
    FramePair pair;
    PairStats st;
    int ret = 0, status = EXIT_OK;

    if (reader_start(&reader, ref, dis, &ro)) {
        fprintf(stderr, "qgpu: cannot start the decoding thread\n");
        return EXIT_INTERNAL;
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
    while (!interrupted && (ret = reader_next(reader, &pair, err, sizeof(err))) == 1) {
        ret = qgpu_submit(ctx, &pair.ref, &pair.dist); /* copies the samples */
        reader_release(&pair);
        if (ret) {
            end_progress();
            fprintf(stderr, "qgpu: frame %u: %s%s\n", rs->submitted, qgpu_last_error(ctx),
                    oom_hint(ret));
            status = exit_status(ret);
            goto fail;
        }
        rs->submitted++;
        if ((ret = collect(o, ctx, stream, 0)) < 0) {
            end_progress();
            fprintf(stderr, "qgpu: %s%s\n", qgpu_last_error(ctx), oom_hint(ret));
            status = exit_status(ret);
            goto fail;
        }
        if (progress && (rs->submitted == 1 || now_seconds() - last_report >= 0.5)) {
            last_report = now_seconds();
            show_progress(rs->submitted, total, last_report - start);
        }
    }
    if (progress && rs->submitted && !interrupted && ret == 0) /* the last update: 100 % */
        show_progress(rs->submitted, rs->submitted, now_seconds() - start);
    end_progress();
    if (interrupted) {
        fprintf(stderr, "qgpu: interrupted after %u pairs; finishing the log\n", rs->submitted);
    } else if (ret < 0) {
        fprintf(stderr, "qgpu: %s\n", err);
        status = EXIT_INPUT;
        goto fail;
    } else {
        report_pairing(o, reader, rs->submitted);
    }
    reader_stats(reader, &st);
    reader_stop(&reader);
    report_errors(ref, dis, &st, rs);
    if ((ret = qgpu_flush(ctx)) < 0) {
        fprintf(stderr, "qgpu: %s%s\n", qgpu_last_error(ctx), oom_hint(ret));
        return exit_status(ret);
    }
    if ((ret = collect(o, ctx, stream, 1)) < 0) {
        fprintf(stderr, "qgpu: %s%s\n", qgpu_last_error(ctx), oom_hint(ret));
        return exit_status(ret);
    }
    *seconds = now_seconds() - start;
    if (rs->submitted == 0 && !interrupted) {
        fprintf(stderr, "qgpu: no frame to score: reference \"%s\" has %u decodable frame%s, "
                "distorted \"%s\" %u%s\n", o->reference, st.frames[0],
                st.frames[0] == 1 ? "" : "s", o->distorted, st.frames[1],
                o->ref_offset || o->dist_offset ? " (offsets included)" : "");
        return EXIT_INPUT;
    }
    return EXIT_OK;
fail:
    reader_stop(&reader);
    return status;
}

/* Copies a JSON log from src to dst with the run's decoding-error counts
 * added before "frames". */
static int copy_json_log(FILE *src, FILE *dst, const RunStats *rs)
{
    long size;
    char *text, *at;
    int ok;
    if (fseek(src, 0, SEEK_END) || (size = ftell(src)) < 0 || fseek(src, 0, SEEK_SET))
        return -1;
    text = malloc((size_t)size + 1);
    if (!text)
        return -1;
    ok = fread(text, 1, (size_t)size, src) == (size_t)size;
    text[ok ? size : 0] = 0;
    at = strstr(text, "\n  \"frames\":");
    if (!at)
        at = strchr(text, '{') ? strchr(text, '{') + 1 : text;
    if (ok) {
        fwrite(text, 1, (size_t)(at - text), dst);
        fprintf(dst, "\n  \"decode_errors\": %u,\n  \"skipped_frames\": %u,", rs->decode_errors,
                rs->skipped_frames);
        fputs(at, dst);
    }
    free(text);
    return ok ? 0 : -1;
}

/* The -o log. JSON goes through a temporary file to get the decoding-error
 * counts added; the other formats are written as the library writes them. */
static int write_log(const Options *o, const QgpuContext *ctx, double fps, const RunStats *rs)
{
    char path[64];
    FILE *tmp, *out;
    int ret;
    if (o->format != QGPU_LOG_FORMAT_JSON) {
        if (qgpu_write_log_subsampled(ctx, o->output, o->format, fps, o->subsample)) {
            fprintf(stderr, "qgpu: -o %s: %s\n", o->output, qgpu_last_error(ctx));
            return EXIT_OUTPUT;
        }
        return EXIT_OK;
    }
    tmp = tmpfile();
    if (tmp)
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fileno(tmp));
    if (!tmp || qgpu_write_log_subsampled(ctx, path, o->format, fps, o->subsample)) {
        /* no temporary file (or no /proc): the log without the counts */
        if (tmp)
            fclose(tmp);
        if (qgpu_write_log_subsampled(ctx, o->output, o->format, fps, o->subsample)) {
            fprintf(stderr, "qgpu: -o %s: %s\n", o->output, qgpu_last_error(ctx));
            return EXIT_OUTPUT;
        }
        fprintf(stderr, "qgpu: warning: -o %s: written without decode_errors and "
                "skipped_frames (no temporary file)\n", o->output);
        return EXIT_OK;
    }
    out = strcmp(o->output, "-") ? fopen(o->output, "w") : stdout;
    if (!out) {
        fprintf(stderr, "qgpu: -o %s: cannot write: %s\n", o->output, strerror(errno));
        fclose(tmp);
        return EXIT_OUTPUT;
    }
    ret = copy_json_log(tmp, out, rs);
    fclose(tmp);
    if ((out == stdout ? fflush(out) : fclose(out)) || ret) {
        fprintf(stderr, "qgpu: -o %s: write error\n", o->output);
        return EXIT_OUTPUT;
    }
    return EXIT_OK;
}

/* Models and features; a model file that cannot be read or parsed is an
 * input error, the rest of a bad spec a usage error. */
static int enable_metrics(Options *o, QgpuContext *ctx)
{
    int ret;
    if (o->nb_features == 0 && o->nb_models == 0)
        o->models[o->nb_models++] = "version=vmaf_v0.6.1";
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
    fprintf(stderr, level == QGPU_LOG_WARNING ? "qgpu: warning: %s\n" : "qgpu: %s\n", message);
}

int main(int argc, char **argv)
{
    Options o = {0};
    QgpuConfig cfg;
    QgpuContext *ctx = NULL;
    Decoder *ref = NULL, *dis = NULL;
    RunStats rs = {0, 0, 0};
    double seconds = 0.0;
    FILE *stream = NULL;
    int ret;

    /* FFmpeg's own messages (e.g. every concealed macroblock) would flood
     * stderr: the tool reports errors and skipped packets itself.
     * QGPU_FFMPEG_LOG=1 shows FFmpeg's warnings and errors, for debugging. */
    {
        const char *env = getenv("QGPU_FFMPEG_LOG");
        av_log_set_level(env && *env && strcmp(env, "0") ? AV_LOG_WARNING : AV_LOG_QUIET);
    }
    ret = parse_args(argc, argv, &o);
    if (ret)
        return ret < 0 ? EXIT_OK : ret;
    if ((o.output && (ret = check_writable("-o", o.output))) ||
        (o.log_stream && (ret = check_writable("--log-stream", o.log_stream))))
        return ret;
    qgpu_config_default(&cfg);
    cfg.device = o.device;
    cfg.pipeline_depth = o.depth;
    cfg.log_callback = print_library_log;
    cfg.log_level = o.quiet ? QGPU_LOG_WARNING : QGPU_LOG_INFO;
    ret = qgpu_open(&ctx, &cfg);
    if (ret) {
        fprintf(stderr, "qgpu: %s%s\n", qgpu_open_error(), oom_hint(ret));
        ret = exit_status(ret);
        goto out;
    }
    if ((ret = enable_metrics(&o, ctx)))
        goto out;
    if ((ret = open_inputs(&o, &ref, &dis)))
        goto out;
    if (o.log_stream) {
        stream = strcmp(o.log_stream, "-") ? fopen(o.log_stream, "w") : stdout;
        if (!stream) {
            fprintf(stderr, "qgpu: --log-stream %s: cannot write: %s\n", o.log_stream,
                    strerror(errno));
            ret = EXIT_OUTPUT;
            goto out;
        }
    }
    signal(SIGINT, on_sigint);
    ret = score(&o, ctx, ref, dis, stream, &seconds, &rs);
    /* a device lost mid-run: the frames finished before it still get a
     * complete log; the exit status stays the device error */
    if (ret == EXIT_DEVICE && o.output && qgpu_frame_count(ctx) > 0)
        write_log(&o, ctx, 0, &rs);
    if (ret)
        goto out;
    if (!o.quiet)
        print_summary(ctx, seconds, o.subsample);
    if (o.output)
        ret = write_log(&o, ctx, seconds > 0 ? qgpu_frame_count(ctx) / seconds : 0, &rs);
    if (interrupted && !ret)
        ret = EXIT_INTERRUPTED;
out:
    if (stream && stream != stdout && fclose(stream) && !ret) {
        fprintf(stderr, "qgpu: --log-stream %s: write error\n", o.log_stream);
        ret = EXIT_OUTPUT;
    }
    qgpu_close(&ctx);
    decoder_close(&ref);
    decoder_close(&dis);
    return ret;
}
