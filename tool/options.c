/* The qgpu command line: see options.h and doc/compat-cli.md. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libavutil/imgutils.h>

#include "decode.h"
#include "hwdec.h"
#include "options.h"
#include "pairing.h"
#include "qgpu/qgpu.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: qgpu -r REFERENCE -d DISTORTED [options]\n"
            "Scores DISTORTED against REFERENCE (any container/codec FFmpeg decodes; \"-\" is\n"
            "standard input) with libvmaf's metrics on an OpenCL device. Takes the options\n"
            "of libvmaf's vmaf tool too (doc/compat-cli.md). Many pairs: qgpu batch JOBS\n"
            "(qgpu batch --help, doc/batch.md).\n\n"
            "  -r, --reference FILE     reference video\n"
            "  -d, --distorted FILE     distorted video\n"
            "  -m, --model SPEC         VMAF model, libvmaf syntax: version=vmaf_v0.6.1,\n"
            "                           path=model.json, name=..., enable_transform,\n"
            "                           disable_clip (repeatable; default\n"
            "                           version=vmaf_v0.6.1 unless -n)\n"
            "      --feature SPEC       metric to compute, libvmaf syntax: psnr,\n"
            "                           psnr=enable_chroma=false (repeatable)\n"
            "  -n, --no_prediction      no default VMAF model: only the --feature metrics\n"
            "      --aom_ctc vN.0       AOM CTC metric set, v1.0..v6.0 (as libvmaf)\n"
            "      --nflx_ctc v1.0      Netflix CTC metric set (as libvmaf)\n"
            "  -o, --output FILE        write the per-frame log to FILE (\"-\" = stdout)\n"
            "      --xml | --json | --csv | --sub   log format (default xml, as libvmaf)\n"
            "  -w, --width N  -h, --height N  -p, --pixel_format 420|422|444\n"
            "  -b, --bitdepth 8|10|12|16   raw input, as libvmaf (all four together)\n"
            "      --raw WxH:PIXFMT[:FPS]  raw input of any FFmpeg pixel format\n"
            "      --scaler NAME        scaler used when the sizes differ\n"
            "                           (default bicubic, as libvmaf users do)\n"
            "      --scale-to ref|dist|WxH  size both inputs are scored at (default ref)\n"
            "      --frame_cnt N        score at most N frames (also --frame-cnt)\n"
            "      --frame_skip_ref N   skip the first N reference frames (--ref-offset)\n"
            "      --frame_skip_dist N  skip the first N distorted frames (--dist-offset)\n"
            "      --pairing MODE       auto (default): frame i with frame i when the frame\n"
            "                           rates agree, else nearest presentation time;\n"
            "                           index; time\n"
            "      --subsample N        log (and pool) every Nth frame, as libvmaf\n"
            "      --log-stream FILE    one JSON line per frame as it is scored,\n"
            "                           flushed (\"-\" = stdout)\n"
            "      --device SPEC        auto (default), gpu, cpu, P:D or a name substring;\n"
            "                           also $QGPU_DEVICE\n"
            "      --pipeline-depth N   frames in flight on the device (default 2; 4 when\n"
            "                           NVDEC may decode: its frames stay on the GPU)\n"
            "      --hwdec MODE         decoder: auto (default: the GPU's, NVDEC or VAAPI,\n"
            "                           when it takes the stream, else the CPU), none (the\n"
            "                           CPU), cuda or vaapi (that one, or an error);\n"
            "                           REF,DIST: one for each input (e.g. cuda,none: NVDEC\n"
            "                           and the CPU decode at once; the CPU's frames are\n"
            "                           put on the GPU beside NVDEC's)\n"
            "      --decode-sessions N  decoders at once per input, each on stretches\n"
            "                           between key frames (frames still scored in order;\n"
            "                           default auto: 1)\n"
            "      --cpu-sessions N     N CPU decoders per input beside --hwdec cuda's,\n"
            "                           on stretches ahead (default auto: 1 beside NVDEC\n"
            "                           on 8+ cores for a file up to 1 GiB, else 0)\n"
            "      --decode-only        decode and pair the inputs, score nothing: the\n"
            "                           decoding speed (pairs/s) on stderr\n"
            "      --hash-frames        with --decode-only: a checksum of each input's\n"
            "                           decoded samples (to compare decoders)\n"
            "      --threads N  --cpumask N  --gpumask N   accepted for libvmaf's command\n"
            "                           lines; no effect (the device does the work)\n"
            "      --list-devices       list OpenCL devices and exit\n"
            "      --list-features      list the metrics and exit\n"
            "  -q, --quiet              no progress or summary on stderr (warnings and\n"
            "                           errors still are)\n"
            "  -v, --version            print the version and exit\n"
            "      --help               this text (also -h without a number)\n\n"
            "Exit status: 0 scored, 1 internal error, 2 usage (options, features, model\n"
            "spec), 3 input (file missing, unreadable, not a video, no frames), 4 OpenCL\n"
            "device (none, out of memory), 5 a log cannot be written, 128+N stopped by\n"
            "signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP) with a complete log.\n"
            "See man qgpu or doc/qgpu.md.\n");
}

static void print_device(void *opaque, int platform, int device, const char *type,
                         const char *name, const char *platform_name)
{
    (void)opaque;
    printf("%d:%d  %-11s %s  (%s)\n", platform, device, type, name, platform_name);
}

/* A whole non-negative decimal number >= min (base: 10, or 0 for masks
 * that may be written 0x...). */
static int parse_number(const char *name, const char *s, unsigned min, int base, unsigned *out)
{
    char *end;
    unsigned long v;
    errno = 0;
    v = strtoul(s, &end, base);
    if (!*s || *end || *s == '-' || *s == '+' || *s == ' ' || errno || v > 1000000000UL ||
        v < min) {
        fprintf(stderr, "qgpu: %s %s: expected a whole number >= %u\n", name, s, min);
        return 1;
    }
    *out = (unsigned)v;
    return 0;
}

static int parse_count(const char *name, const char *s, unsigned min, unsigned *out)
{
    return parse_number(name, s, min, 10, out);
}

/* A count from min to max (a message when it is not), or with takes_auto
 * also "auto", given as auto_value: 0, or -1. */
static int parse_bounded(const char *name, const char *s, unsigned min, unsigned max,
                         int takes_auto, int auto_value, int *out)
{
    unsigned n;
    if (takes_auto && !strcmp(s, "auto")) {
        *out = auto_value;
        return 0;
    }
    if (parse_count(name, s, min, &n))
        return -1;
    if (n > max) {
        fprintf(stderr, "qgpu: %s %s: expected %s%u to %u\n", name, s,
                takes_auto ? "auto or " : "", min, max);
        return -1;
    }
    *out = (int)n;
    return 0;
}

/* Is s a whole decimal number (what -h takes as a height)? */
static int is_number(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
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

static int add_spec(const char **list, int *n, const char *spec, const char *what)
{
    if (*n == MAX_SPECS) {
        fprintf(stderr, "qgpu: too many %s (at most %d)\n", what, MAX_SPECS);
        return 1;
    }
    list[(*n)++] = spec;
    return 0;
}

/* ---------------------------------------------- libvmaf's CTC presets */

/* What libvmaf's tools/cli_parse.c enables for --aom_ctc v1.0..v6.0 and
 * --nflx_ctc v1.0. */
static const char *const aom_ctc_models[] = {"version=vmaf_v0.6.1:name=vmaf",
                                             "version=vmaf_v0.6.1neg:name=vmaf_neg", NULL};
static const char *const aom_ctc_features[] = {
    "psnr=reduced_hbd_peak=true:enable_apsnr=true:min_sse=0.5", "ciede",
    "float_ssim=enable_db=true:clip_db=true", "float_ms_ssim=enable_db=true:clip_db=true",
    "psnr_hvs", NULL};
static const char *const nflx_ctc_models[] = {"version=vmaf_4k_v0.6.1:name=vmaf",
                                              "version=vmaf_4k_v0.6.1neg:name=vmaf_neg", NULL};
static const char *const nflx_ctc_features[] = {
    "psnr=enable_chroma=true:enable_apsnr=true", "float_ssim=enable_db=true:clip_db=true",
    "cambi", NULL};

/* Is the built-in model of version=NAME[:...] in this build? */
static int have_model(const char *spec)
{
    size_t len = strcspn(spec + 8, ":");
    for (int i = 0; qgpu_model_name(i); i++)
        if (strlen(qgpu_model_name(i)) == len && !strncmp(qgpu_model_name(i), spec + 8, len))
            return 1;
    return 0;
}

static int add_preset(Options *o, const char *option, const char *version,
                      const char *const *models, const char *const *features)
{
    for (int i = 0; models[i]; i++)
        if (!have_model(models[i])) {
            fprintf(stderr, "qgpu: %s %s: needs the built-in model %.*s, which this build "
                    "does not have (qgpu --list-features lists the models)\n", option, version,
                    (int)strcspn(models[i] + 8, ":"), models[i] + 8);
            return EXIT_USAGE;
        }
    for (int i = 0; models[i]; i++)
        if (add_spec(o->models, &o->nb_models, models[i], "models"))
            return EXIT_USAGE;
    for (int i = 0; features[i]; i++)
        if (add_spec(o->features, &o->nb_features, features[i], "features"))
            return EXIT_USAGE;
    snprintf(o->ctc_buf, sizeof(o->ctc_buf), "%s %s", option, version);
    o->ctc = o->ctc_buf;
    return 0;
}

static int aom_ctc(Options *o, const char *v)
{
    static const char *const versions[] = {"v1.0", "v2.0", "v3.0", "v4.0", "v5.0", "v6.0", NULL};
    int n = -1;
    for (int i = 0; versions[i]; i++)
        if (!strcmp(v, versions[i]))
            n = i + 1;
    if (!strcmp(v, "proposed")) {
        fprintf(stderr, "qgpu: --aom_ctc proposed: deprecated (as in libvmaf); use v1.0..v6.0\n");
        return EXIT_USAGE;
    }
    if (n < 0) {
        fprintf(stderr, "qgpu: --aom_ctc %s: unknown version (v1.0, v2.0, v3.0, v4.0, v5.0, "
                "v6.0)\n", v);
        return EXIT_USAGE;
    }
    if (add_preset(o, "--aom_ctc", v, aom_ctc_models, aom_ctc_features))
        return EXIT_USAGE;
    /* v3.0 adds cambi; v6.0 scores inputs of different bit depths at the
     * higher one (what qgpu always does; the preset only silences the
     * warning) */
    if (n >= 3 && add_spec(o->features, &o->nb_features, "cambi", "features"))
        return EXIT_USAGE;
    if (n >= 6)
        o->common_bitdepth = 1;
    return 0;
}

static int nflx_ctc(Options *o, const char *v)
{
    if (strcmp(v, "v1.0")) {
        fprintf(stderr, "qgpu: --nflx_ctc %s: unknown version (v1.0)\n", v);
        return EXIT_USAGE;
    }
    return add_preset(o, "--nflx_ctc", v, nflx_ctc_models, nflx_ctc_features);
}

/* ---------------------------------------------------- raw (-w -h -p -b) */

typedef struct RawShort {
    unsigned width, height, bitdepth;
    const char *pixel_format;
    int given;
} RawShort;

/* libvmaf's raw options to a --raw spec. */
static int raw_from_short(Options *o, const RawShort *r)
{
    char missing[64] = "";
    const char *depth;
    if (!r->given)
        return 0;
    if (o->raw_spec) {
        fprintf(stderr, "qgpu: --raw and -w/-h/-p/-b both describe raw input: use one\n");
        return EXIT_USAGE;
    }
    if (!r->width)
        strcat(missing, " -w");
    if (!r->height)
        strcat(missing, " -h");
    if (!r->pixel_format)
        strcat(missing, " -p");
    if (!r->bitdepth)
        strcat(missing, " -b");
    if (*missing) {
        fprintf(stderr, "qgpu: raw input needs -w, -h, -p and -b together (missing:%s)\n",
                missing);
        return EXIT_USAGE;
    }
    if (av_image_check_size(r->width, r->height, 0, NULL) < 0) {
        fprintf(stderr, "qgpu: -w %u -h %u: %ux%u is too large\n", r->width, r->height,
                r->width, r->height);
        return EXIT_USAGE;
    }
    depth = r->bitdepth == 8 ? "" : r->bitdepth == 10 ? "10le" : r->bitdepth == 12 ? "12le"
                                                                                 : "16le";
    snprintf(o->raw_buf, sizeof(o->raw_buf), "%ux%u:yuv%sp%s", r->width, r->height,
             r->pixel_format, depth);
    o->raw_spec = o->raw_buf;
    return 0;
}

/* ------------------------------------------------------------ parsing */

/* Checks made once every option is known. */
static int check_options(Options *o)
{
    const char *empty = !o->reference || !o->distorted ? NULL
                        : !*o->reference                ? "-r"
                        : !*o->distorted                ? "-d"
                        : o->output && !*o->output      ? "-o"
                        : o->log_stream && !*o->log_stream ? "--log-stream"
                                                           : NULL;
    if (!o->reference || !o->distorted) {
        fprintf(stderr, "qgpu: both -r REFERENCE and -d DISTORTED are required (see --help)\n");
        return EXIT_USAGE;
    }
    if (empty) {
        fprintf(stderr, "qgpu: %s: empty file name\n", empty);
        return EXIT_USAGE;
    }
    if (!strcmp(o->reference, "-") && !strcmp(o->distorted, "-")) {
        fprintf(stderr, "qgpu: -r - -d -: standard input can be read only once; give one "
                "input as a file\n");
        return EXIT_USAGE;
    }
    if (o->output && o->log_stream && !strcmp(o->output, "-") && !strcmp(o->log_stream, "-")) {
        fprintf(stderr, "qgpu: -o - and --log-stream -: both would write to standard output; "
                "send one to a file\n");
        return EXIT_USAGE;
    }
    for (int i = 0; i < o->nb_features; i++)
        if (!*o->features[i] || o->features[i][0] == '=') {
            fprintf(stderr, "qgpu: --feature '%s': empty feature name\n", o->features[i]);
            return EXIT_USAGE;
        }
    for (int i = 0; i < o->nb_models; i++)
        if (!*o->models[i]) {
            fprintf(stderr, "qgpu: --model: empty model spec (e.g. version=vmaf_v0.6.1)\n");
            return EXIT_USAGE;
        }
    if (o->hash_frames && !o->decode_only) {
        fprintf(stderr, "qgpu: --hash-frames goes with --decode-only\n");
        return EXIT_USAGE;
    }
    if (o->decode_only && (o->output || o->log_stream)) {
        fprintf(stderr, "qgpu: --decode-only scores nothing, so it writes no log: drop %s\n",
                o->output ? "-o" : "--log-stream");
        return EXIT_USAGE;
    }
    if (o->no_prediction && o->nb_models) {
        fprintf(stderr, "qgpu: -n/--no_prediction with %s: not supported (libvmaf would "
                "compute the models' features without their scores); drop -n, or name the "
                "features with --feature\n", o->ctc ? o->ctc : "--model");
        return EXIT_USAGE;
    }
    if (o->no_prediction && !o->nb_features) {
        fprintf(stderr, "qgpu: -n/--no_prediction without --feature: nothing to compute\n");
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
    /* libvmaf adds its default model unless there is one, or -n */
    if (!o->nb_models && !o->no_prediction)
        o->models[o->nb_models++] = "version=vmaf_v0.6.1";
    if (o->subsample == 1)
        o->subsample = 0;
    return 0;
}

int options_parse(int argc, char **argv, Options *o)
{
    enum {
        OPT_FEATURE = 256, OPT_JSON, OPT_XML, OPT_CSV, OPT_SUB, OPT_RAW, OPT_SCALER,
        OPT_FRAME_CNT, OPT_DEVICE, OPT_DEPTH, OPT_LIST_DEVICES, OPT_LIST_FEATURES, OPT_HELP,
        OPT_SUBSAMPLE, OPT_LOG_STREAM, OPT_SCALE_TO, OPT_REF_OFFSET, OPT_DIST_OFFSET, OPT_PAIRING,
        OPT_THREADS, OPT_CPUMASK, OPT_GPUMASK, OPT_AOM_CTC, OPT_NFLX_CTC, OPT_HWDEC,
        OPT_DECODE_ONLY, OPT_HASH_FRAMES, OPT_JOB_SUMMARY, OPT_SESSIONS,
        OPT_CPU_SESSIONS
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
        {"width", required_argument, NULL, 'w'},
        {"height", required_argument, NULL, 'h'},
        {"pixel_format", required_argument, NULL, 'p'},
        {"bitdepth", required_argument, NULL, 'b'},
        {"scaler", required_argument, NULL, OPT_SCALER},
        {"frame-cnt", required_argument, NULL, OPT_FRAME_CNT},
        {"frame_cnt", required_argument, NULL, OPT_FRAME_CNT},
        {"device", required_argument, NULL, OPT_DEVICE},
        {"subsample", required_argument, NULL, OPT_SUBSAMPLE},
        {"log-stream", required_argument, NULL, OPT_LOG_STREAM},
        {"scale-to", required_argument, NULL, OPT_SCALE_TO},
        {"ref-offset", required_argument, NULL, OPT_REF_OFFSET},
        {"frame_skip_ref", required_argument, NULL, OPT_REF_OFFSET},
        {"skip_ref_frame", required_argument, NULL, OPT_REF_OFFSET},
        {"dist-offset", required_argument, NULL, OPT_DIST_OFFSET},
        {"frame_skip_dist", required_argument, NULL, OPT_DIST_OFFSET},
        {"pairing", required_argument, NULL, OPT_PAIRING},
        {"pipeline-depth", required_argument, NULL, OPT_DEPTH},
        {"hwdec", required_argument, NULL, OPT_HWDEC},
        {"decode-sessions", required_argument, NULL, OPT_SESSIONS},
        {"cpu-sessions", required_argument, NULL, OPT_CPU_SESSIONS},
        {"decode-only", no_argument, NULL, OPT_DECODE_ONLY},
        {"hash-frames", no_argument, NULL, OPT_HASH_FRAMES},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"cpumask", required_argument, NULL, OPT_CPUMASK},
        {"gpumask", required_argument, NULL, OPT_GPUMASK},
        {"aom_ctc", required_argument, NULL, OPT_AOM_CTC},
        {"nflx_ctc", required_argument, NULL, OPT_NFLX_CTC},
        {"no_prediction", no_argument, NULL, 'n'},
        {"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
        {"list-features", no_argument, NULL, OPT_LIST_FEATURES},
        {"quiet", no_argument, NULL, 'q'},
        {"version", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, OPT_HELP},
        {"job-summary", required_argument, NULL, OPT_JOB_SUMMARY},
        {NULL, 0, NULL, 0},
    };
    RawShort raw = {0, 0, 0, NULL, 0};
    unsigned ignored;
    int c, ret;
    memset(o, 0, sizeof(*o));
    o->format = QGPU_LOG_FORMAT_XML;
    o->cpu_sessions = -1;
    opterr = 0; /* one-line messages of our own */
    optind = 1;
    while ((c = getopt_long(argc, argv, ":r:d:o:m:w:h:p:b:nqv", long_options, NULL)) != -1) {
        switch (c) {
        case 'r': o->reference = optarg; break;
        case 'd': o->distorted = optarg; break;
        case 'o': o->output = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'n': o->no_prediction = 1; break;
        case 'm':
            if (add_spec(o->models, &o->nb_models, optarg, "--model options"))
                return EXIT_USAGE;
            break;
        case OPT_FEATURE:
            if (add_spec(o->features, &o->nb_features, optarg, "--feature options"))
                return EXIT_USAGE;
            break;
        case OPT_JSON: o->format = QGPU_LOG_FORMAT_JSON; break;
        case OPT_XML: o->format = QGPU_LOG_FORMAT_XML; break;
        case OPT_CSV: o->format = QGPU_LOG_FORMAT_CSV; break;
        case OPT_SUB: o->format = QGPU_LOG_FORMAT_SUB; break;
        case OPT_RAW: o->raw_spec = optarg; break;
        case OPT_JOB_SUMMARY: o->job_summary = optarg; break;
        case 'w':
            raw.given = 1;
            if (parse_count("-w/--width", optarg, 1, &raw.width))
                return EXIT_USAGE;
            break;
        case 'h':
            /* -h is libvmaf's height; without a number after it, help */
            if (!is_number(optarg)) {
                usage(stdout);
                return -1;
            }
            raw.given = 1;
            if (parse_count("-h/--height", optarg, 1, &raw.height))
                return EXIT_USAGE;
            break;
        case 'p':
            raw.given = 1;
            if (strcmp(optarg, "420") && strcmp(optarg, "422") && strcmp(optarg, "444")) {
                fprintf(stderr, "qgpu: -p/--pixel_format %s: expected 420, 422 or 444\n",
                        optarg);
                return EXIT_USAGE;
            }
            raw.pixel_format = optarg;
            break;
        case 'b':
            raw.given = 1;
            if (parse_count("-b/--bitdepth", optarg, 1, &raw.bitdepth))
                return EXIT_USAGE;
            if (raw.bitdepth != 8 && raw.bitdepth != 10 && raw.bitdepth != 12 &&
                raw.bitdepth != 16) {
                fprintf(stderr, "qgpu: -b/--bitdepth %s: expected 8, 10, 12 or 16\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case OPT_SCALER: o->scaler = optarg; break;
        case OPT_FRAME_CNT:
            if (parse_count("--frame_cnt", optarg, 0, &o->frame_cnt))
                return EXIT_USAGE;
            break;
        case OPT_SUBSAMPLE:
            if (parse_count("--subsample", optarg, 0, &o->subsample))
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
        case OPT_THREADS: /* checked, no effect (doc/compat-cli.md) */
        case OPT_CPUMASK:
        case OPT_GPUMASK:
            if (parse_number(c == OPT_THREADS ? "--threads" : c == OPT_CPUMASK ? "--cpumask"
                                                                                : "--gpumask",
                             optarg, 0, c == OPT_THREADS ? 10 : 0, &ignored))
                return EXIT_USAGE;
            break;
        case OPT_AOM_CTC:
            if ((ret = aom_ctc(o, optarg)))
                return ret;
            break;
        case OPT_NFLX_CTC:
            if ((ret = nflx_ctc(o, optarg)))
                return ret;
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
        case OPT_HWDEC:
            if (hwdec_parse_pair(optarg, &o->hwdec, &o->hwdec_dist)) {
                fprintf(stderr, "qgpu: --hwdec %s: expected auto, none, cuda or vaapi, or "
                        "two of them (reference,distorted)\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case OPT_SESSIONS:
            if (parse_bounded("--decode-sessions", optarg, 1, 16, 1, 0, &o->decode_sessions))
                return EXIT_USAGE;
            break;
        case OPT_CPU_SESSIONS:
            if (parse_bounded("--cpu-sessions", optarg, 0, 16, 1, -1, &o->cpu_sessions))
                return EXIT_USAGE;
            break;
        case OPT_DECODE_ONLY: o->decode_only = 1; break;
        case OPT_HASH_FRAMES: o->hash_frames = 1; break;
        case OPT_DEPTH:
            if (parse_bounded("--pipeline-depth", optarg, 1, 16, 0, 0, &o->depth))
                return EXIT_USAGE;
            break;
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
        case 'v': printf("qgpu %s\n", qgpu_version()); return -1;
        case OPT_HELP: usage(stdout); return -1;
        case ':':
            if (optopt == 'h') { /* -h alone: help */
                usage(stdout);
                return -1;
            }
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
    if ((ret = raw_from_short(o, &raw)))
        return ret;
    return check_options(o);
}

void options_warn(const Options *o)
{
    /* in enum QgpuLogFormat's order */
    static const char *const names[] = {"json", "xml", "csv", "sub"};
    static const char *const upper[] = {"JSON", "XML", "CSV", "SUB"};
    const char *dot, *slash;
    int ext = -1;
    if (!o->output || !strcmp(o->output, "-"))
        return;
    dot = strrchr(o->output, '.');
    slash = strrchr(o->output, '/');
    if (!dot || (slash && dot < slash))
        return;
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(dot + 1, names[i]))
            ext = i;
    if (ext < 0 || ext == o->format)
        return;
    fprintf(stderr, "qgpu: warning: -o %s: the log is written as %s%s, not %s; add --%s for "
            "%s\n", o->output, upper[o->format],
            o->format == QGPU_LOG_FORMAT_XML ? " (the default, as libvmaf's)" : "", upper[ext],
            names[ext], upper[ext]);
}
