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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavutil/log.h>

#include "batch.h"
#include "closer.h"
#include "hwdec.h"
#include "input.h"
#include "options.h"
#include "output.h"
#include "run.h"

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

int main(int argc, char **argv)
{
    Options o;
    RunSetup s = {NULL, stderr, &interrupted, &stop_signal, NULL, 0};
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
    if (argc > 1 && (!strcmp(argv[1], "batch") || !strcmp(argv[1], "batch-merge"))) {
        ret = batch_main(argc - 1, argv + 1, !strcmp(argv[1], "batch-merge"));
        closer_drain();
        hwdec_release_devices();
        return ret;
    }
    ret = options_parse(argc, argv, &o);
    if (ret)
        return ret < 0 ? EXIT_OK : ret;
    if ((ret = run_check_paths(stderr, &o)))
        return ret;
    options_warn(&o);
    ret = run_pair(&o, &s);
    closer_drain(); /* decoders --hwdec auto did not keep (probe.h) */
    hwdec_release_devices();
    return ret;
}
