/*
 * qgpu batch: see batch.h and doc/batch.md.
 *
 * Each job is one run of the tool (run_pair, the code path of `qgpu -r -d
 * -o`), several at a time on each device. By default (--isolate thread)
 * the jobs run in threads of this process, and the jobs of a device share
 * one OpenCL context and its compiled kernels (QgpuDevice); the hardware
 * decoders of a job slot keep their CUDA devices for its next job (hwdec.c):
 * a job's start-up is its decoders and buffers.
 * Each job's messages go to OUTPUT.stderr (the failure's cause is its last
 * line). --isolate process runs each job as a child qgpu process (this
 * binary, with -r -d -o and --job-summary) instead: a job that crashes
 * takes no other job with it, for one OpenCL start-up per job
 * (doc/batch.md, "Isolation").
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "batch.h"
#include "batch_devices.h"
#include "batch_merge.h"
#include "batch_options.h"
#include "batch_report.h"
#include "clock.h"
#include "done_marker.h"
#include "hwdec.h"
#include "input.h"
#include "job_args.h"
#include "jobs.h"
#include "options.h"
#include "output.h"
#include "run.h"

extern char **environ;

typedef struct Running {
    int busy;             /* 0: free */
    pid_t pid;            /* --isolate process: the child */
    int job, device;
    double start;
    char *summary, *errfile;
    /* --isolate thread: the job's thread, its options and messages; status
     * and result once done (set under Batch.lock) */
    pthread_t thread;
    Options opts;
    FILE *msg;
    QgpuDevice *shared;
    int done, status, slot;
    int host_jobs;        /* jobs of the batch at once (--hwdec auto, probe.h) */
    json_object *result;
    pthread_mutex_t *lock;
    pthread_cond_t *finished;
} Running;

typedef struct Batch {
    BatchOptions o;
    JobList list;
    json_object **args;   /* per job: the options that identify its result */
    Devices devs;
    Running *slots;
    int nb_slots;
    int *queue, nb_queue, next;
    unsigned selected, ok, complete, failed, interrupted, finished_runs;
    unsigned long long frames;
    double start, run_seconds;
    OutputStream *stream;
    int stream_failed;
    char exe[4096], shard[32];
    int tty, progress_shown;
    double last_progress;
    pthread_mutex_t lock;     /* --isolate thread: the slots' done flags */
    pthread_cond_t finished;
} Batch;

static volatile sig_atomic_t batch_signal;

/* The first stop signal: no new job, the running ones get it once; then
 * the default action, so that a second one stops the batch at once. */
static void on_batch_signal(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    batch_signal = sig;
    sigaction(SIGINT, &dfl, NULL);
    sigaction(SIGTERM, &dfl, NULL);
    sigaction(SIGHUP, &dfl, NULL);
}

/* ---------------------------------------------------------- reporting */

static void end_progress(Batch *b)
{
    if (b->progress_shown)
        fputc('\n', stderr);
    b->progress_shown = 0;
}

/* Jobs done/total, frames, pairs/s, ETA (from the jobs run so far). */
static void show_progress(Batch *b, int force)
{
    double elapsed = monotonic_seconds() - b->start;
    unsigned done = b->ok + b->complete + b->failed + b->interrupted;
    unsigned left = b->selected - done;
    char eta[32] = "--:--";
    if (b->o.quiet || (!force && (!b->tty || elapsed - b->last_progress < 0.5)))
        return;
    b->last_progress = elapsed;
    if (b->finished_runs && left)
        format_duration(eta, sizeof(eta), elapsed / b->finished_runs * left);
    else if (!left)
        snprintf(eta, sizeof(eta), "0:00");
    fprintf(stderr, "%sqgpu batch: %u/%u jobs (%u failed, %u already complete), %llu frames, "
            "%.1f pairs/s, ETA %s%s", b->tty ? "\r" : "", done, b->selected, b->failed,
            b->complete, b->frames, elapsed > 0 ? b->frames / elapsed : 0.0, eta,
            b->tty ? "   " : "\n");
    b->progress_shown = b->tty;
}

static void stream_line(Batch *b, json_object *line)
{
    const char *text = report_text(line);
    if (b->stream && !b->stream_failed &&
        (output_write(b->stream, text, strlen(text)) || output_write(b->stream, "\n", 1)))
        b->stream_failed = 1;
    json_object_put(line);
}

/* The last line of the child's stderr that is not empty: its error. */
static void last_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    snprintf(buf, len, "(no message)");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        if (*line)
            snprintf(buf, len, "%s", strncmp(line, "qgpu: ", 6) ? line : line + 6);
    }
    fclose(f);
}

/* A job that succeeded may have warned (pairs apart in time, decoding
 * errors): its warnings are repeated, with the job named. */
static void echo_warnings(Batch *b, const Job *j, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    if (!f)
        return;
    while (fgets(line, sizeof(line), f))
        if (strstr(line, "warning:")) {
            end_progress(b);
            fprintf(stderr, "qgpu batch: job %d (%s): %s", j->index, j->output,
                    strncmp(line, "qgpu: ", 6) ? line : line + 6);
        }
    fclose(f);
}

/* ------------------------------------------------------------- jobs */

static void free_slot(Running *r)
{
    free(r->summary);
    free(r->errfile);
    json_object_put(r->result);
    memset(r, 0, sizeof(*r));
}

/* A job's thread (--isolate thread): the tool's run, its messages to the
 * job's stderr file. */
static void *job_thread(void *arg)
{
    Running *r = arg;
    RunSetup s = {r->shared, r->msg, &batch_signal, &batch_signal, &r->result, r->host_jobs};
    int ret = run_check_paths(r->msg, &r->opts);
    hwdec_use_slot(r->slot);
    if (!ret)
        ret = run_pair(&r->opts, &s);
    if (fclose(r->msg) && !ret)
        ret = EXIT_OUTPUT;
    r->msg = NULL;
    pthread_mutex_lock(r->lock);
    r->status = ret;
    r->done = 1;
    pthread_cond_signal(r->finished);
    pthread_mutex_unlock(r->lock);
    return NULL;
}

/* The job's options, parsed here (the parser is not thread-safe), and its
 * thread started. */
static int start_thread(Batch *b, Running *r, char **argv, char *err, size_t len)
{
    int argc = 0, ret;
    while (argv[argc])
        argc++;
    if (options_parse(argc, argv, &r->opts)) { /* checked before: not expected */
        snprintf(err, len, "the job's options are not valid");
        return -1;
    }
    if (!(r->msg = fopen(r->errfile, "w"))) {
        snprintf(err, len, "%s: %s", r->errfile, strerror(errno));
        return -1;
    }
    r->shared = b->devs.list[r->device].shared;
    r->host_jobs = b->nb_slots;
    r->lock = &b->lock;
    r->finished = &b->finished;
    if ((ret = pthread_create(&r->thread, NULL, job_thread, r))) {
        fclose(r->msg);
        r->msg = NULL;
        snprintf(err, len, "cannot start a thread: %s", strerror(ret));
        return -1;
    }
    return 0;
}

/* mkdir -p of the directory part of path (a catalogue's logs often go to
 * a tree of their own); errors are left to the job, which reports them. */
static void make_parent_dirs(const char *path)
{
    char *tmp = strdup(path);
    if (!tmp)
        return;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        mkdir(tmp, 0777);
        *p = '/';
    }
    free(tmp);
}

/* Starts job j on device d in slot r. 0, or -1 (reported as the job's
 * failure by the caller, with the reason in err). */
static int start_job(Batch *b, Running *r, int j, int d, char *err, size_t len)
{
    const Job *job = &b->list.jobs[j];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    char **argv;
    char *marker = marker_path(job);
    int ret;
    r->job = j;
    r->device = d;
    if (!marker || asprintf(&r->summary, "%s.summary-%ld", job->output, (long)getpid()) < 0 ||
        asprintf(&r->errfile, "%s.stderr", job->output) < 0) {
        free(marker);
        snprintf(err, len, "out of memory");
        return -1;
    }
    unlink(marker); /* a stale one says nothing of the run about to start */
    make_parent_dirs(job->output);
    free(marker);
    argv = job_argv(b->exe, job, b->args[j], b->devs.list[d].spec,
                    b->o.isolate ? r->summary : NULL);
    if (!argv) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    if (!b->o.isolate) {
        ret = start_thread(b, r, argv, err, len);
        free(argv);
        if (ret)
            return -1;
        goto started;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, r->errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_init(&attr);
    /* its own process group: a terminal's Ctrl-C reaches the batch, which
     * passes it on once */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    ret = posix_spawn(&r->pid, b->exe, &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    free(argv);
    if (ret) {
        r->pid = 0;
        snprintf(err, len, "cannot start qgpu (stderr to %s): %s", r->errfile, strerror(ret));
        return -1;
    }
started:
    r->busy = 1;
    r->start = monotonic_seconds();
    b->devs.list[d].running++;
    if (b->stream) {
        json_object *line = report_job_line("start", job);
        json_object_object_add(line, "device", json_object_new_string(b->devs.list[d].spec));
        stream_line(b, line);
    }
    return 0;
}

static void job_failed(Batch *b, const Job *j, int interrupted, int exit_code,
                       const char *cause, const char *errfile, json_object *line)
{
    if (interrupted)
        b->interrupted++;
    else
        b->failed++;
    end_progress(b);
    fprintf(stderr, "qgpu batch: job %d (%s:%d, %s) %s: %s%s%s\n", j->index, b->list.path,
            j->line, j->output, interrupted ? "interrupted" : "FAILED", cause,
            errfile ? "; its stderr: " : "", errfile ? errfile : "");
    json_object_object_add(line, "status", json_object_new_string(interrupted ? "interrupted"
                                                                              : "failed"));
    json_object_object_add(line, "exit", json_object_new_int(exit_code));
    json_object_object_add(line, "cause", json_object_new_string(cause));
    stream_line(b, line);
}

/* A job ended with exit status code (killed: by that signal, when not 0)
 * and its result res (taken; NULL when none). */
static void finish_job(Batch *b, Running *r, int code, int killed, json_object *res)
{
    const Job *j = &b->list.jobs[r->job];
    Device *dev = &b->devs.list[r->device];
    json_object *line = report_job_line("finish", j);
    char cause[2300], err[1200];
    double seconds = monotonic_seconds() - r->start;
    dev->running--;
    b->finished_runs++;
    b->run_seconds += seconds;
    json_object_object_add(line, "device", json_object_new_string(dev->spec));
    if (code) {
        char msg[2048];
        last_line(r->errfile, msg, sizeof(msg));
        if (killed)
            snprintf(cause, sizeof(cause), "killed by signal %d (%s)", killed,
                     strsignal(killed));
        else
            snprintf(cause, sizeof(cause), "exit %d: %s", code, msg);
        json_object_put(res);
        job_failed(b, j, batch_signal && code > 128, code, cause, r->errfile, line);
        free_slot(r);
        return;
    }
    if (!res || !json_object_is_type(res, json_type_object)) {
        job_failed(b, j, 0, EXIT_JOBS, "qgpu exited 0 without its job summary", r->errfile,
                   line);
    } else if (marker_write(j, b->args[r->job], res, b->shard, err, sizeof(err))) {
        job_failed(b, j, 0, EXIT_OUTPUT, err, r->errfile, line);
    } else {
        unsigned long long frames = report_frames(res);
        double ms = report_device_ms(res);
        b->ok++;
        b->frames += frames;
        dev->jobs++;
        dev->frames += frames;
        dev->seconds += seconds;
        if (ms >= 0) {
            dev->device_ms += ms;
            dev->timed = 1;
        }
        echo_warnings(b, j, r->errfile);
        unlink(r->errfile);
        json_object_object_add(line, "status", json_object_new_string("ok"));
        json_object_object_add(line, "exit", json_object_new_int(0));
        report_add_result(line, res);
        stream_line(b, line);
        if (!b->tty && !b->o.quiet) {
            end_progress(b);
            fprintf(stderr, "qgpu batch: job %d done (%s: %llu frames, %.1f s, %s)\n",
                    j->index, j->output, frames, seconds, dev->spec);
        }
    }
    json_object_put(res);
    free_slot(r);
}

/* A child ended with wait status st: its result from its summary file. */
static void finish_child(Batch *b, Running *r, int st)
{
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    json_object *res = code ? NULL : json_object_from_file(r->summary);
    unlink(r->summary);
    finish_job(b, r, code, WIFSIGNALED(st) ? WTERMSIG(st) : 0, res);
}

/* The jobs that ended since the last call: the children reaped
 * (--isolate process), the threads joined; waits up to 50 ms for one. */
static void reap_jobs(Batch *b)
{
    pid_t pid;
    int st, any = 0;
    if (b->o.isolate) {
        while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
            for (int i = 0; i < b->nb_slots; i++)
                if (b->slots[i].busy && b->slots[i].pid == pid) {
                    finish_child(b, &b->slots[i], st);
                    show_progress(b, 0);
                    break;
                }
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
        return;
    }
    pthread_mutex_lock(&b->lock);
    for (int i = 0; i < b->nb_slots; i++)
        any |= b->slots[i].busy && b->slots[i].done;
    if (!any) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&b->finished, &b->lock, &until);
    }
    pthread_mutex_unlock(&b->lock);
    for (int i = 0; i < b->nb_slots; i++) {
        Running *r = &b->slots[i];
        json_object *res;
        int done;
        pthread_mutex_lock(&b->lock);
        done = r->busy && r->done;
        pthread_mutex_unlock(&b->lock);
        if (!done)
            continue;
        pthread_join(r->thread, NULL);
        res = r->result; /* finish_job takes it */
        r->result = NULL;
        finish_job(b, r, r->status, 0, res);
        show_progress(b, 0);
    }
}

/* Jobs at once on a device: --jobs, but one on PoCL in threads. PoCL 3.1
 * (Debian 12) finds a finished kernel's entry of its compiled-kernel cache
 * by the kernel and its work-group size alone, not by the grid
 * specialisation the entry was made for, so one context's kernels running
 * beside another's of the same kernel on a picture of another size can
 * decrement the wrong entry and abort the process (`pocl_release_dlhandle_
 * cache: Assertion found->ref_count > 0 failed`; about one batch in ten
 * with pictures of several sizes, 4 jobs at a time, on this project's CI).
 * Jobs in separate processes (--isolate process) do not share that cache. */
static int device_limit(const Batch *b, const Device *dev)
{
    return dev->pocl && !b->o.isolate ? 1 : b->o.per_device;
}

/* A device with room: the one running fewest jobs. -1 when all are full. */
static int free_device(const Batch *b)
{
    int best = -1;
    for (int d = 0; d < b->devs.count; d++)
        if (b->devs.list[d].running < device_limit(b, &b->devs.list[d]) &&
            (best < 0 || b->devs.list[d].running < b->devs.list[best].running))
            best = d;
    return best;
}

static int running_count(const Batch *b)
{
    int n = 0;
    for (int i = 0; i < b->nb_slots; i++)
        n += b->slots[i].busy;
    return n;
}

/* The work queue: a job starts on the least busy device as soon as one
 * has room; stop signals are passed to the running jobs once, and no new
 * job starts. */
static void run_queue(Batch *b)
{
    int forwarded = 0;
    while (b->next < b->nb_queue || running_count(b)) {
        while (!batch_signal && b->next < b->nb_queue) {
            int d = free_device(b), s = 0;
            char err[1200];
            if (d < 0)
                break;
            while (b->slots[s].busy)
                s++;
            b->slots[s].slot = s;
            if (start_job(b, &b->slots[s], b->queue[b->next], d, err, sizeof(err))) {
                json_object *line = report_job_line("finish", &b->list.jobs[b->queue[b->next]]);
                job_failed(b, &b->list.jobs[b->queue[b->next]], 0, EXIT_INTERNAL, err, NULL,
                           line);
                free_slot(&b->slots[s]);
            }
            b->next++;
        }
        if (batch_signal && !forwarded) {
            end_progress(b);
            fprintf(stderr, "qgpu batch: %s: stopping the %d running job%s (their logs are "
                    "finished, not marked done); %d not started\n", strsignal(batch_signal),
                    running_count(b), running_count(b) == 1 ? "" : "s",
                    b->nb_queue - b->next);
            /* threads see the flag themselves */
            for (int i = 0; b->o.isolate && i < b->nb_slots; i++)
                if (b->slots[i].busy)
                    kill(b->slots[i].pid, batch_signal);
            forwarded = 1;
        }
        if (batch_signal && b->next < b->nb_queue && !running_count(b))
            break;
        reap_jobs(b);
        show_progress(b, 0);
    }
}

/* ------------------------------------------------------------ the end */

static void print_summary(Batch *b, double wall)
{
    if (b->o.quiet)
        return;
    end_progress(b);
    fprintf(stderr, "qgpu batch: %u job%s%s: %u scored, %u already complete, %u failed%s; "
            "%llu frames in %.2f s: %.1f pairs/s\n", b->selected, b->selected == 1 ? "" : "s",
            b->o.shard_spec ? " in this shard" : "", b->ok, b->complete, b->failed,
            b->interrupted ? ", interrupted" : "", b->frames, wall,
            wall > 0 ? b->frames / wall : 0.0);
    for (int d = 0; d < b->devs.count; d++) {
        const Device *dev = &b->devs.list[d];
        fprintf(stderr, "  device %s (%s): %u jobs, %llu frames", dev->spec, dev->name,
                dev->jobs, dev->frames);
        if (dev->timed)
            fprintf(stderr, ", kernels busy %.1f%% of the batch's %.2f s", wall > 0 ?
                    100.0 * dev->device_ms / 1e3 / wall : 0.0, wall);
        else if (!getenv("QGPU_PROFILE"))
            fprintf(stderr, " (QGPU_PROFILE=1 for the device's busy time)");
        fputc('\n', stderr);
    }
}

static void stream_batch_line(Batch *b, double wall)
{
    json_object *line = json_object_new_object(), *devs = json_object_new_array();
    json_object_object_add(line, "event", json_object_new_string("batch"));
    json_object_object_add(line, "jobs", json_object_new_int(b->selected));
    json_object_object_add(line, "ok", json_object_new_int(b->ok));
    json_object_object_add(line, "complete", json_object_new_int(b->complete));
    json_object_object_add(line, "failed", json_object_new_int(b->failed));
    json_object_object_add(line, "interrupted", json_object_new_int(b->interrupted +
                                                                    b->nb_queue - b->next));
    json_object_object_add(line, "frames", json_object_new_int64(b->frames));
    json_object_object_add(line, "seconds", json_object_new_double(wall));
    json_object_object_add(line, "pairs_per_s", json_object_new_double(wall > 0 ? b->frames /
                                                                       wall : 0.0));
    json_object_object_add(line, "shard", json_object_new_string(b->shard));
    for (int d = 0; d < b->devs.count; d++) {
        const Device *dev = &b->devs.list[d];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "device", json_object_new_string(dev->spec));
        json_object_object_add(o, "name", json_object_new_string(dev->name));
        json_object_object_add(o, "jobs", json_object_new_int(dev->jobs));
        json_object_object_add(o, "frames", json_object_new_int64(dev->frames));
        if (dev->timed) {
            json_object_object_add(o, "device_ms", json_object_new_double(dev->device_ms));
            json_object_object_add(o, "busy", json_object_new_double(wall > 0 ? dev->device_ms
                                                                     / 1e3 / wall : 0.0));
        }
        json_object_array_add(devs, o);
    }
    json_object_object_add(line, "devices", devs);
    stream_line(b, line);
}

/* ------------------------------------------------------------- set-up */

static int self_path(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    return 0;
}

/* Reads the list, selects the shard's jobs, checks their command lines. */
static int prepare(Batch *b)
{
    char err[1400];
    if (jobs_read(&b->list, b->o.jobs_path, err, sizeof(err))) {
        fprintf(stderr, "qgpu batch: %s\n", err);
        return EXIT_USAGE;
    }
    snprintf(b->shard, sizeof(b->shard), "%d/%d", b->o.shard_index, b->o.shard_count);
    b->args = calloc(b->list.nb_jobs, sizeof(*b->args));
    b->queue = calloc(b->list.nb_jobs, sizeof(*b->queue));
    if (!b->args || !b->queue || self_path(b->exe, sizeof(b->exe))) {
        fprintf(stderr, "qgpu batch: out of memory, or /proc/self/exe unreadable\n");
        return EXIT_INTERNAL;
    }
    for (int i = 0; i < b->list.nb_jobs; i++) {
        int ret;
        b->args[i] = job_args(&b->list.jobs[i], b->o.tool_args, b->o.nb_tool_args);
        if ((ret = job_args_check(b->exe, b->list.path, &b->list.jobs[i], b->args[i])))
            return ret;
    }
    return 0;
}

static void cleanup(Batch *b)
{
    char err[1200];
    if (b->stream && output_close(&b->stream, err, sizeof(err)))
        fprintf(stderr, "qgpu batch: %s\n", err);
    for (int i = 0; b->args && i < b->list.nb_jobs; i++)
        json_object_put(b->args[i]);
    for (int i = 0; b->slots && i < b->nb_slots; i++)
        free_slot(&b->slots[i]);
    free(b->args);
    free(b->queue);
    free(b->slots);
    devices_free(&b->devs);
    jobs_free(&b->list);
}

static void setup_batch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_batch_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* The jobs of this shard: skipped when complete (unless --force), else
 * queued. */
static void select_jobs(Batch *b)
{
    for (int i = 0; i < b->list.nb_jobs; i++) {
        const Job *j = &b->list.jobs[i];
        json_object *marker = NULL, *line;
        char why[256];
        if (!jobs_in_shard(i, b->o.shard_index, b->o.shard_count))
            continue;
        b->selected++;
        if (b->o.force || !marker_check(j, b->args[i], &marker, why, sizeof(why))) {
            b->queue[b->nb_queue++] = i;
            continue;
        }
        b->complete++;
        line = report_job_line("finish", j);
        json_object_object_add(line, "status", json_object_new_string("complete"));
        {
            json_object *res = NULL;
            json_object_object_get_ex(marker, "result", &res);
            report_add_result(line, res);
        }
        stream_line(b, line);
        json_object_put(marker);
    }
}

static int run_batch(Batch *b)
{
    char err[1200];
    double wall;
    int ret;
    if ((ret = devices_resolve(&b->devs, b->o.device, !b->o.isolate, err, sizeof(err)))) {
        fprintf(stderr, "qgpu batch: %s\n", err);
        return ret;
    }
    if (b->o.log_stream) {
        if (output_check("--log-stream", b->o.log_stream, err, sizeof(err)) ||
            output_open(&b->stream, "--log-stream", b->o.log_stream, err, sizeof(err))) {
            fprintf(stderr, "qgpu batch: %s\n", err);
            return EXIT_OUTPUT;
        }
    }
    if (!b->o.isolate)
        input_set_interrupt(&batch_signal);
    b->nb_slots = b->devs.count * b->o.per_device;
    if (!(b->slots = calloc(b->nb_slots, sizeof(*b->slots)))) {
        fprintf(stderr, "qgpu batch: out of memory\n");
        return EXIT_INTERNAL;
    }
    b->tty = isatty(STDERR_FILENO);
    b->start = monotonic_seconds();
    setup_batch_signals();
    select_jobs(b);
    if (!b->o.quiet) {
        fprintf(stderr, "qgpu batch: %u job%s%s (%u already complete), %d device%s x %d at a "
                "time\n", b->selected, b->selected == 1 ? "" : "s",
                b->o.shard_spec ? " in this shard" : "", b->complete, b->devs.count,
                b->devs.count == 1 ? "" : "s", b->o.per_device);
        for (int d = 0; d < b->devs.count; d++)
            if (device_limit(b, &b->devs.list[d]) < b->o.per_device)
                fprintf(stderr, "qgpu batch: %s is PoCL: one job at a time there (PoCL's "
                        "kernel cache can abort a process running several; --isolate "
                        "process runs several)\n", b->devs.list[d].name);
    }
    run_queue(b);
    wall = monotonic_seconds() - b->start;
    show_progress(b, 1);
    print_summary(b, wall);
    stream_batch_line(b, wall);
    if (b->stream_failed) {
        fprintf(stderr, "qgpu batch: --log-stream %s: write error\n", b->o.log_stream);
        return EXIT_OUTPUT;
    }
    if (batch_signal)
        return 128 + batch_signal;
    return b->failed ? EXIT_JOBS : EXIT_OK;
}

int batch_main(int argc, char **argv, int merge)
{
    Batch b;
    int ret;
    memset(&b, 0, sizeof(b));
    pthread_mutex_init(&b.lock, NULL);
    pthread_cond_init(&b.finished, NULL);
    b.o.merge = merge;
    ret = batch_options_parse(argc, argv, &b.o);
    if (ret)
        return ret < 0 ? EXIT_OK : ret;
    if (!(ret = prepare(&b)))
        ret = merge ? batch_merge(&b.list, b.args, b.o.output, b.o.quiet) : run_batch(&b);
    cleanup(&b);
    pthread_cond_destroy(&b.finished);
    pthread_mutex_destroy(&b.lock);
    return ret;
}
