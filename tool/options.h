/*
 * The qgpu command line: its own options and those of libvmaf's `vmaf`
 * tool (doc/compat-cli.md has the table), checked before anything is
 * opened.
 */
#ifndef QGPU_TOOL_OPTIONS_H
#define QGPU_TOOL_OPTIONS_H

#define MAX_SPECS 64

/* Exit status (doc/qgpu.md, "Exit status"). */
enum {
    EXIT_OK = 0,
    EXIT_INTERNAL = 1, /* scoring failed for another reason (host memory, threads...) */
    EXIT_USAGE = 2,    /* the command line: option, value, feature, model spec */
    EXIT_INPUT = 3,    /* an input or model file: missing, unreadable, not a video... */
    EXIT_DEVICE = 4,   /* no OpenCL device, device out of memory, OpenCL failure */
    EXIT_OUTPUT = 5,   /* a log file cannot be written */
    EXIT_JOBS = 6,     /* qgpu batch: a job failed; batch-merge: a job is not done */
    /* interrupted by signal S: 128 + S (SIGINT 130, SIGTERM 143, SIGHUP 129) */
};

typedef struct Options {
    const char *reference;
    const char *distorted;
    const char *raw_spec;      /* --raw, or built from -w -h -p -b */
    const char *features[MAX_SPECS];
    int nb_features;
    const char *models[MAX_SPECS];
    int nb_models;
    const char *output;
    int format;                /* enum QgpuLogFormat; XML unless asked, as libvmaf */
    const char *device;
    const char *scaler;
    int depth;
    unsigned frame_cnt;        /* 0: every frame */
    int quiet;
    unsigned subsample;        /* 0 or 1: every frame */
    const char *log_stream;
    const char *scale_to;
    unsigned ref_offset, dist_offset;
    int pairing;
    int no_prediction;         /* -n: no default model */
    int common_bitdepth;       /* --aom_ctc v6.0: mixed bit depths asked for */
    const char *ctc;           /* "--aom_ctc v6.0" when a preset was used */
    int hwdec;                 /* enum HwdecMode (hwdec.h); HWDEC_AUTO = 0 */
    int hwdec_dist;            /* the distorted's (--hwdec REF,DIST), else hwdec */
    int decode_sessions;       /* --decode-sessions N (sessions.h); 0: auto */
    int cpu_sessions;          /* --cpu-sessions N (sessions.h); -1: auto */
    int decode_only;           /* --decode-only: decode and pair, score nothing */
    int hash_frames;           /* --hash-frames: checksums of the decoded samples */
    const char *job_summary;   /* --job-summary FILE: a batch's per-job result */
    /* storage */
    char raw_buf[128];
    char ctc_buf[64];
} Options;

/* Parses argv. Returns 0 (run), -1 (done: --help, --version, a listing;
 * exit 0) or an exit status (a message was printed). */
int options_parse(int argc, char **argv, Options *o);

/* Warnings about the options (a log extension that disagrees with the log
 * format), printed on stderr. */
void options_warn(const Options *o);

#endif
