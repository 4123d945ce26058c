/*
 * qgpu batch and batch-merge (doc/batch.md), run as a user would: the job
 * list formats (CSV, JSON lines) giving the same logs as single runs,
 * device lists, resuming after a SIGTERM, a corrupt input among good ones,
 * shards covering every job exactly once (also from Slurm's variables),
 * the merge's checks, bad job lists refused with status 2, and jobs of
 * differing streams one after the other in one slot.
 *
 * Inputs: the fate pair nf_src01 160x90 (48 frames), scored with PSNR on
 * a few frames so that every run is short on PoCL.
 */
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include "tool_run.h"

#define REF "refs/nf_src01_160x90_48f.y4m"
#define DIS "pairs/nf_src01_160x90_nfdis/dis.y4m"
#define PSNR "-n --feature psnr"
/* slow enough (VMAF too, ~0.5 s a job on PoCL) for a signal to land
 * between two jobs in one process */
#define SLOW "--feature float_ssim --feature psnr"

static char tool[1024], fate[1024], ref[1200], dis[1200];
static char dir[] = "/tmp/qgpu_test_batch.XXXXXX";
static char err[65536];

static int run(const char *env, const char *args)
{
    return tool_run(tool, dir, env, 300, args, err, sizeof(err));
}

static int write_text(const char *name, const char *text)
{
    char path[1300];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (!(f = fopen(path, "w")))
        return -1;
    fputs(text, f);
    return fclose(f);
}

static int exists(const char *name)
{
    char path[1300];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static json_object *read_json(const char *name)
{
    char path[1300];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return json_object_from_file(path);
}

/* The lines of a JSON lines file (NULL-terminated, at most max). */
static int read_lines(const char *name, json_object **lines, int max)
{
    char path[1300], *line = NULL;
    size_t cap = 0;
    int n = 0;
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (!(f = fopen(path, "r")))
        return -1;
    while (n < max && getline(&line, &cap, f) > 0)
        lines[n++] = json_tokener_parse(line);
    free(line);
    fclose(f);
    return n;
}

static void put_lines(json_object **lines, int n)
{
    for (int i = 0; i < n; i++)
        json_object_put(lines[i]);
}

/* The "frames" arrays of two JSON logs are equal (every score of every
 * frame), and not empty. */
static int same_frames(const char *a, const char *b)
{
    json_object *x = read_json(a), *y = read_json(b), *fx = NULL, *fy = NULL;
    int same = x && y && json_object_object_get_ex(x, "frames", &fx) &&
               json_object_object_get_ex(y, "frames", &fy) &&
               json_object_array_length(fx) > 0 && json_object_equal(fx, fy);
    json_object_put(x);
    json_object_put(y);
    return same;
}

static long long mtime_ns(const char *name)
{
    char path[1300];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (stat(path, &st))
        return -1;
    return st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

/* A CSV list of n PSNR jobs out/jI.json, job i scoring 4 + i frames. */
static void write_psnr_list(const char *name, int n)
{
    char text[16384];
    size_t len = (size_t)snprintf(text, sizeof(text), "ref,dis,output,options\n");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                "%s,%s,out/j%d.json,--frame_cnt %d\n", ref, dis, i, 4 + i);
    write_text(name, text);
}

static void clean_out(void)
{
    char cmd[1300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s/out && mkdir -p %s/out", dir, dir);
    if (system(cmd))
        printf("could not clean %s/out\n", dir);
}

/* ------------------------------------------------------------ formats */

static void test_formats(void)
{
    char text[8192], args[2600];
    int rc;
    clean_out();
    /* the single runs the batch must reproduce */
    snprintf(args, sizeof(args), "-r %s -d %s %s --frame_cnt 6 --json -o direct_psnr.json -q",
             ref, dis, PSNR);
    CHECK(run(NULL, args) == 0, "single PSNR run: %s", err);
    snprintf(args, sizeof(args), "-r %s -d %s --frame_cnt 3 --feature float_ssim --json "
             "-o direct_vmaf.json -q", ref, dis);
    CHECK(run(NULL, args) == 0, "single VMAF run: %s", err);

    snprintf(text, sizeof(text),
             "# a comment, then the header\n"
             "ref,dis,output,model,features,options\n"
             "%s,%s,out/csv_psnr.json,,psnr,-n --frame_cnt 6\n"
             "\"%s\",\"%s\",out/csv_vmaf.json,version=vmaf_v0.6.1,float_ssim,--frame_cnt 3\n",
             ref, dis, ref, dis);
    write_text("jobs.csv", text);
    rc = run(NULL, "batch jobs.csv --log-stream csv.jsonl");
    CHECK(rc == 0, "CSV batch: exit 0 (%d): %s", rc, err);
    CHECK(same_frames("out/csv_psnr.json", "direct_psnr.json"),
          "CSV job 0 (features, options) gives the single run's scores");
    CHECK(same_frames("out/csv_vmaf.json", "direct_vmaf.json"),
          "CSV job 1 (quoted paths, model, features) gives the single run's scores");

    snprintf(text, sizeof(text),
             "{\"ref\": \"%s\", \"dis\": \"%s\", \"output\": \"out/jl_psnr.json\", "
             "\"features\": [\"psnr\"], \"options\": [\"-n\", \"--frame_cnt\", \"6\"]}\n"
             "\n"
             "{\"ref\": \"%s\", \"dis\": \"%s\", \"output\": \"out/jl_vmaf.json\", "
             "\"model\": \"version=vmaf_v0.6.1\", \"features\": \"float_ssim\", "
             "\"options\": [\"--frame_cnt\", \"3\"]}\n",
             ref, dis, ref, dis);
    write_text("jobs.jsonl", text);
    rc = run(NULL, "batch jobs.jsonl --jobs 1");
    CHECK(rc == 0, "JSON lines batch: exit 0 (%d): %s", rc, err);
    CHECK(same_frames("out/jl_psnr.json", "direct_psnr.json") &&
          same_frames("out/jl_vmaf.json", "direct_vmaf.json"),
          "JSON lines jobs give the single runs' scores");
    CHECK(exists("out/jl_psnr.json.done") && !exists("out/jl_psnr.json.stderr"),
          "a done-marker beside the log, no stderr file left for a job that succeeded");

    {
        json_object *lines[16], *v = NULL;
        int n = read_lines("csv.jsonl", lines, 16), starts = 0, oks = 0;
        for (int i = 0; i < n; i++) {
            const char *event = json_object_get_string(json_object_object_get(lines[i],
                                                                               "event"));
            starts += event && !strcmp(event, "start");
            oks += event && !strcmp(event, "finish") &&
                   !strcmp(json_object_get_string(json_object_object_get(lines[i], "status")),
                           "ok") &&
                   json_object_object_get_ex(lines[i], "pooled", &v);
        }
        CHECK(n == 5 && starts == 2 && oks == 2 &&
              !strcmp(json_object_get_string(json_object_object_get(lines[n - 1], "event")),
                      "batch") &&
              json_object_get_int(json_object_object_get(lines[n - 1], "frames")) == 9,
              "--log-stream: 2 starts, 2 finishes with pooled scores, a batch line of 9 "
              "frames (%d lines)", n);
        put_lines(lines, n > 0 ? n : 0);
    }
}

/* ------------------------------------------------------------ devices */

static void test_devices(void)
{
    json_object *lines[16], *devs = NULL;
    char spec[200] = "", args[600];
    int n, rc;
    clean_out();
    write_psnr_list("dev.csv", 3);
    rc = run(NULL, "batch dev.csv --device all --log-stream all.jsonl -- " PSNR);
    n = read_lines("all.jsonl", lines, 16);
    if (n > 0 && json_object_object_get_ex(lines[n - 1], "devices", &devs) &&
        json_object_array_length(devs) > 0)
        snprintf(spec, sizeof(spec), "%s", json_object_get_string(json_object_object_get(
                     json_object_array_get_idx(devs, 0), "device")));
    CHECK(rc == 0 && *spec, "--device all: exit 0, a device in the batch line (%d): %s", rc,
          err);
    put_lines(lines, n > 0 ? n : 0);
    /* keep the first logs to compare */
    snprintf(args, sizeof(args), "mkdir -p %s/first && cp %s/out/*.json %s/first/", dir, dir,
             dir);
    CHECK(system(args) == 0, "copy the logs");
    /* the same device named twice: two queues, same scores */
    clean_out();
    snprintf(args, sizeof(args), "batch dev.csv --device %s,%s --jobs 1 --log-stream two.jsonl "
             "-- " PSNR, spec, spec);
    rc = run(NULL, args);
    n = read_lines("two.jsonl", lines, 16);
    CHECK(rc == 0 && n > 0 && json_object_object_get_ex(lines[n - 1], "devices", &devs) &&
          json_object_array_length(devs) == 2,
          "--device %s,%s: exit 0 and two device queues (%d): %s", spec, spec, rc, err);
    put_lines(lines, n > 0 ? n : 0);
    for (int i = 0; i < 3; i++) {
        char a[64], b[64];
        snprintf(a, sizeof(a), "out/j%d.json", i);
        snprintf(b, sizeof(b), "first/j%d.json", i);
        CHECK(same_frames(a, b), "job %d: same scores whichever queue ran it", i);
    }
    /* a process per job: the same scores as the threads of one process */
    clean_out();
    rc = run(NULL, "batch dev.csv --isolate process -- " PSNR);
    CHECK(rc == 0, "--isolate process: exit 0 (%d): %s", rc, err);
    for (int i = 0; i < 3; i++) {
        char a[64], b[64];
        snprintf(a, sizeof(a), "out/j%d.json", i);
        snprintf(b, sizeof(b), "first/j%d.json", i);
        CHECK(same_frames(a, b), "job %d: same scores in a process of its own", i);
    }
    rc = run(NULL, "batch dev.csv --isolate fork");
    CHECK(rc == 2 && strstr(err, "--isolate fork: expected thread or process"),
          "--isolate fork: status 2 (%d): %s", rc, err);
    rc = run(NULL, "batch dev.csv --device nosuchdevice");
    CHECK(rc == 4 && strstr(err, "--device nosuchdevice: ") && !strstr(err, "job 0"),
          "a selector that matches no device: status 4 before any job (%d): %s", rc, err);
    rc = run(NULL, "batch dev.csv --device 0:0,,0:1");
    CHECK(rc == 2 && strstr(err, "empty selector"), "--device with an empty item: status 2 "
          "(%d): %s", rc, err);
}

/* ------------------------------------------------------------- resume */

static void test_resume(const char *isolate)
{
    char cmd[4096], args[300];
    int st, done_before = 0, rc;
    long long t0;
    printf("resume, --isolate %s\n", isolate);
    clean_out();
    write_psnr_list("resume.csv", 5);
    /* one job at a time; SIGTERM once the first job is marked done */
    snprintf(cmd, sizeof(cmd),
             "cd %s && { %s batch resume.csv --isolate %s --jobs 1 -- " SLOW " 2>kill_stderr.txt & "
             "pid=$!; i=0; while [ ! -e out/j0.json.done ] && [ $i -lt 1200 ]; do "
             "sleep 0.05; i=$((i+1)); done; kill -TERM $pid; wait $pid; echo $? > kill_rc.txt; }",
             dir, tool, isolate);
    st = system(cmd);
    {
        json_object *rc_json = read_json("kill_rc.txt");
        rc = rc_json ? json_object_get_int(rc_json) : -1;
        json_object_put(rc_json);
    }
    CHECK(st == 0 && rc == 143, "the batch stopped by SIGTERM exits 143 (%d)", rc);
    for (int i = 0; i < 5; i++) {
        char name[64];
        snprintf(name, sizeof(name), "out/j%d.json.done", i);
        done_before += exists(name);
    }
    CHECK(exists("out/j0.json.done") && done_before < 5,
          "after the kill: job 0 marked done, not all (%d of 5)", done_before);
    t0 = mtime_ns("out/j0.json");
    snprintf(args, sizeof(args), "batch resume.csv --isolate %s --jobs 2 --log-stream "
             "resume.jsonl -- " SLOW, isolate);
    rc = run(NULL, args);
    CHECK(rc == 0, "the re-run completes (%d): %s", rc, err);
    {
        char want[64];
        snprintf(want, sizeof(want), "(%d already complete)", done_before);
        CHECK(strstr(err, want) != NULL, "the re-run skips the %d finished jobs: %s",
              done_before, err);
    }
    CHECK(mtime_ns("out/j0.json") == t0, "job 0's log was not rewritten");
    for (int i = 0; i < 5; i++) {
        char name[64];
        json_object *log;
        snprintf(name, sizeof(name), "out/j%d.json", i);
        log = read_json(name);
        CHECK(log && json_object_array_length(json_object_object_get(log, "frames")) ==
                         (size_t)(4 + i), "job %d: a complete log of %d frames", i, 4 + i);
        json_object_put(log);
    }
    /* a log changed after its job: the job runs again */
    write_text("out/j1.json", "{}");
    rc = run(NULL, "batch resume.csv -- " SLOW);
    CHECK(rc == 0 && strstr(err, "(4 already complete)"),
          "a log changed since its job is not complete: re-run (%d): %s", rc, err);
    /* other options: every job runs again */
    rc = run(NULL, "batch resume.csv -q -- " PSNR);
    CHECK(rc == 0 && !strstr(err, "already complete"), "other options: no job is complete "
          "(%d): %s", rc, err);
}

/* ------------------------------------------------ a corrupt input */

static void test_corrupt(void)
{
    char text[8192];
    json_object *lines[16];
    int rc, n, failed = 0;
    clean_out();
    write_text("corrupt.y4m", "YUV4MPEG2 W160 H90 F25:1 C420jpeg\nFRAME\nnot enough bytes");
    snprintf(text, sizeof(text),
             "ref,dis,output,options\n"
             "%s,%s,out/good0.json,--frame_cnt 4\n"
             "%s,corrupt.y4m,out/bad.json,--frame_cnt 4\n"
             "%s,%s,out/new/dir/good1.json,--frame_cnt 5\n",
             ref, dis, ref, ref, dis);
    write_text("corrupt.csv", text);
    rc = run(NULL, "batch corrupt.csv --log-stream corrupt.jsonl -- " PSNR);
    CHECK(rc == 6, "a failed job: batch status 6 (%d): %s", rc, err);
    CHECK(exists("out/good0.json.done") && exists("out/new/dir/good1.json.done") &&
          !exists("out/bad.json.done"), "the good jobs are done (a missing directory of a "
          "log created), the bad one is not");
    CHECK(strstr(err, "job 1 (corrupt.csv:3, out/bad.json) FAILED: exit 3: ") &&
          strstr(err, "out/bad.json.stderr") && exists("out/bad.json.stderr"),
          "the failure is reported with its exit status, cause and stderr file: %s", err);
    n = read_lines("corrupt.jsonl", lines, 16);
    for (int i = 0; i < n; i++) {
        json_object *status = NULL;
        if (json_object_object_get_ex(lines[i], "status", &status) &&
            !strcmp(json_object_get_string(status), "failed") &&
            json_object_get_int(json_object_object_get(lines[i], "exit")) == 3 &&
            strlen(json_object_get_string(json_object_object_get(lines[i], "cause"))) > 8)
            failed++;
    }
    CHECK(failed == 1, "--log-stream: one failed job with exit 3 and its cause (%d)", failed);
    put_lines(lines, n > 0 ? n : 0);
    rc = run(NULL, "batch corrupt.csv -- " PSNR);
    CHECK(rc == 6 && strstr(err, "(2 already complete)"), "re-run: the good jobs are "
          "skipped, the bad one fails again (%d): %s", rc, err);
}

/* A job's process killed from outside (as a crash or the OOM killer
 * would): that job is reported with the signal, the next one still runs. */
static void test_killed_job(void)
{
    char cmd[4096];
    json_object *rc_json;
    int rc;
    clean_out();
    write_psnr_list("killed.csv", 2);
    /* job 0's pid: the batch's first child (/proc), killed as soon as it
     * shows, long before its VMAF is done */
    snprintf(cmd, sizeof(cmd),
             "cd %s && { %s batch killed.csv --isolate process --jobs 1 -- " SLOW " "
             "2>killed_stderr.txt & pid=$!; i=0; child=; "
             "while [ -z \"$child\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); "
             "child=$(cat /proc/$pid/task/$pid/children 2>/dev/null | cut -d' ' -f1); done; "
             "kill -KILL $child; wait $pid; echo $? > killed_rc.txt; }", dir, tool);
    CHECK(system(cmd) == 0, "run and kill");
    rc_json = read_json("killed_rc.txt");
    rc = rc_json ? json_object_get_int(rc_json) : -1;
    json_object_put(rc_json);
    {
        char path[1300], text[8192] = "";
        FILE *f;
        snprintf(path, sizeof(path), "%s/killed_stderr.txt", dir);
        if ((f = fopen(path, "r"))) {
            text[fread(text, 1, sizeof(text) - 1, f)] = 0;
            fclose(f);
        }
        CHECK(rc == 6 && strstr(text, "job 0 (killed.csv:2, out/j0.json) FAILED: killed by "
                                      "signal 9"),
              "a job killed by SIGKILL: reported with its signal, batch status 6 (%d): %s", rc,
              text);
    }
    CHECK(!exists("out/j0.json.done") && exists("out/j1.json.done"),
          "the killed job is not done, the next one is");
}

/* ------------------------------------------------------ shards, merge */

/* Which shard's marker each of n jobs has ("I/N", or "" when none). */
static int marker_shards(int n, char shards[][32])
{
    int count = 0;
    for (int i = 0; i < n; i++) {
        char name[64];
        json_object *m, *v = NULL;
        snprintf(name, sizeof(name), "out/j%d.json.done", i);
        m = read_json(name);
        shards[i][0] = 0;
        if (m && json_object_object_get_ex(m, "shard", &v)) {
            snprintf(shards[i], 32, "%s", json_object_get_string(v));
            count++;
        }
        json_object_put(m);
    }
    return count;
}

static void test_shards(void)
{
    char args[600], shards[7][32];
    json_object *lines[16];
    int rc, n, total = 0;
    clean_out();
    write_psnr_list("shards.csv", 7);
    for (int s = 0; s < 3; s++) {
        json_object *last;
        snprintf(args, sizeof(args), "batch shards.csv --shard %d/3 --log-stream shard%d.jsonl "
                 "-- " PSNR, s, s);
        rc = run(NULL, args);
        CHECK(rc == 0, "shard %d/3: exit 0 (%d): %s", s, rc, err);
        snprintf(args, sizeof(args), "shard%d.jsonl", s);
        n = read_lines(args, lines, 16);
        last = n > 0 ? lines[n - 1] : NULL;
        total += last ? json_object_get_int(json_object_object_get(last, "jobs")) : 0;
        put_lines(lines, n > 0 ? n : 0);
        if (s == 1) {
            rc = run(NULL, "batch-merge shards.csv -o merged.jsonl -- " PSNR);
            CHECK(rc == 6 && strstr(err, "not done: no done-marker") && !exists("merged.jsonl"),
                  "merge with a shard missing: status 6, the missing jobs named, no summary "
                  "(%d): %s", rc, err);
        }
    }
    CHECK(total == 7, "the 3 shards selected 7 jobs in all (%d)", total);
    CHECK(marker_shards(7, shards) == 7, "every job has a done-marker");
    for (int i = 0; i < 7; i++) {
        char want[32];
        snprintf(want, sizeof(want), "%d/3", i % 3);
        CHECK(!strcmp(shards[i], want), "job %d done by shard %s (%s)", i, want, shards[i]);
    }
    rc = run(NULL, "batch-merge shards.csv -o merged.jsonl -- " PSNR);
    n = read_lines("merged.jsonl", lines, 16);
    CHECK(rc == 0 && n == 8 && json_object_get_int(json_object_object_get(lines[7], "frames"))
          == 4 + 5 + 6 + 7 + 8 + 9 + 10, "merge: status 0, 7 job lines and a total of 49 "
          "frames (%d, %d lines): %s", rc, n, err);
    put_lines(lines, n > 0 ? n : 0);
    /* the merge checks the options the jobs ran with */
    rc = run(NULL, "batch-merge shards.csv -o merged2.jsonl");
    CHECK(rc == 6 && strstr(err, "options changed"), "merge with other options: status 6 "
          "(%d): %s", rc, err);
    /* a job run again by a shard of another count: not "once" */
    rc = run(NULL, "batch shards.csv --shard 1/2 --force -q -- " PSNR);
    rc = run(NULL, "batch-merge shards.csv -- " PSNR);
    CHECK(rc == 6 && strstr(err, "did not split the list one way"),
          "shards of two counts: merge refuses (%d): %s", rc, err);
    /* doc/batch.md's Kubernetes Indexed Job command, for each index */
    clean_out();
    for (int k = 0; k < 3; k++) {
        char cmd[3000];
        snprintf(cmd, sizeof(cmd), "cd %s && JOB_COMPLETION_INDEX=%d sh -c 'exec %s batch "
                 "shards.csv --shard \"$JOB_COMPLETION_INDEX/3\" -q -- " PSNR "' 2>k8s.txt",
                 dir, k, tool);
        CHECK(system(cmd) == 0, "the Kubernetes command line, index %d", k);
    }
    rc = run(NULL, "batch-merge shards.csv -o k8s.jsonl -- " PSNR);
    CHECK(rc == 0 && marker_shards(7, shards) == 7 && !strcmp(shards[5], "2/3"),
          "the Kubernetes recipe's 3 indexes cover the list once (%d): %s", rc, err);
    /* Slurm's variables */
    clean_out();
    rc = run("SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=3",
             "batch shards.csv --shard slurm -- " PSNR);
    CHECK(rc == 0 && marker_shards(7, shards) == 2 && !strcmp(shards[1], "1/3") &&
          !strcmp(shards[4], "1/3"), "--shard slurm: task 5 of 4-6 runs jobs 1 and 4 (%d): %s",
          rc, err);
    rc = run(NULL, "batch shards.csv --shard slurm");
    CHECK(rc == 2 && strstr(err, "SLURM_ARRAY_TASK_ID"), "--shard slurm outside Slurm: status "
          "2 (%d): %s", rc, err);
    rc = run(NULL, "batch shards.csv --shard 3/3");
    CHECK(rc == 2 && strstr(err, "the index must be 0 to 2"), "--shard 3/3: status 2 (%d): %s",
          rc, err);
}

/* ---------------------------------------------------- bad job lists */

static void test_bad_lists(void)
{
    static const struct {
        const char *name, *text, *message;
    } cases[] = {
        {"nocol.csv", "ref,dis\na.y4m,b.y4m\n", "the header has no \"output\" column"},
        {"unkcol.csv", "ref,dis,output,colour\na,b,c.json,red\n", "unknown column \"colour\""},
        {"fields.csv", "ref,dis,output\na,b\n", "fields.csv:2: too few fields"},
        {"quote.csv", "ref,dis,output\n\"a,b,c.json\n", "unterminated quote"},
        {"empty.csv", "ref,dis,output\na,,c.json\n", "no \"dis\""},
        {"dup.csv", "ref,dis,output\na,b,c.json\nd,e,c.json\n", "also line 2's"},
        {"stdout.csv", "ref,dis,output\na,b,-\n", "output \"-\""},
        {"none.csv", "ref,dis,output\n", "no jobs"},
        {"key.jsonl", "{\"ref\": \"a\", \"dis\": \"b\", \"output\": \"c.json\", \"modle\": "
                      "\"x\"}\n", "key.jsonl:1: unknown key \"modle\""},
        {"type.jsonl", "{\"ref\": \"a\", \"dis\": 3, \"output\": \"c.json\"}\n",
         "\"dis\" must be a string"},
        {"json.jsonl", "{\"ref\": \"a\",\n", "not one JSON object"},
        {"opts.jsonl", "{\"ref\": \"a\", \"dis\": \"b\", \"output\": \"c.json\", \"options\": "
                       "\"-n\"}\n", "must be an array of strings"},
        {"badopt.csv", "ref,dis,output,options\na,b,c.json,--subsample -1\n",
         "badopt.csv:2: the job's options are not valid"},
        {"clash.csv", "ref,dis,output,options\na,b,c.json,-o x.json\n",
         "-o is set by the batch"},
    };
    char args[300];
    int rc;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        write_text(cases[i].name, cases[i].text);
        snprintf(args, sizeof(args), "batch %s", cases[i].name);
        rc = run(NULL, args);
        CHECK(rc == 2 && strstr(err, cases[i].message), "%s: status 2 and \"%s\" (%d): %s",
              cases[i].name, cases[i].message, rc, err);
    }
    rc = run(NULL, "batch missing.csv");
    CHECK(rc == 2 && strstr(err, "missing.csv: cannot read the job list: No such file"),
          "unreadable job list: status 2 (%d): %s", rc, err);
    rc = run(NULL, "batch");
    CHECK(rc == 2 && strstr(err, "no job list"), "no job list: status 2 (%d): %s", rc, err);
    rc = run(NULL, "batch nocol.csv --frobnicate");
    CHECK(rc == 2 && strstr(err, "unknown option --frobnicate"), "unknown batch option: "
          "status 2 (%d): %s", rc, err);
    rc = run(NULL, "batch --help");
    CHECK(rc == 0, "batch --help: status 0 (%d)", rc);
}

/* ----------------------------------------------------------- one slot */

/* Jobs one after the other in one slot (--jobs 1), whose streams share or
 * differ in codec, size and chroma format: a slot keeps hardware decoders'
 * parts for its next job and closes decoders in the background
 * (doc/batch.md), so every job must still give its single run's scores. */
static void test_one_slot(void)
{
    static const char *const pairs[][2] = {
        {"refs/seeking_720x480_f000-029.mkv", "pairs/seeking_720x480_x264_crf30/dis.mp4"},
        {"refs/seeking_480x320_422_f000-019.mkv", "pairs/seeking_480x320_422_x264_crf28/dis.mkv"},
        {"refs/flowerpan_640x360_444_10f.mkv", "pairs/flowerpan_640x360_444_x264_crf34/dis.mp4"},
        {REF, DIS},
    };
    static const int order[] = {0, 0, 1, 0, 2, 2, 3, 1};
    const int n = (int)(sizeof(order) / sizeof(order[0]));
    char text[16384], args[3000], a[32], b[32];
    size_t len;
    int rc;
    clean_out();
    for (int p = 0; p < 4; p++) {
        snprintf(args, sizeof(args), "-r %s/%s -d %s/%s %s --frame_cnt 5 --json "
                 "-o slot_direct%d.json -q", fate, pairs[p][0], fate, pairs[p][1], PSNR, p);
        CHECK(run(NULL, args) == 0, "single run of pair %d: %s", p, err);
    }
    len = (size_t)snprintf(text, sizeof(text), "ref,dis,output,features,options\n");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                "%s/%s,%s/%s,out/slot%d.json,psnr,-n --frame_cnt 5 --hwdec auto\n",
                                fate, pairs[order[i]][0], fate, pairs[order[i]][1], i);
    write_text("slot.csv", text);
    rc = run(NULL, "batch slot.csv --jobs 1");
    CHECK(rc == 0, "one-slot batch: exit 0 (%d): %s", rc, err);
    for (int i = 0; i < n; i++) {
        snprintf(a, sizeof(a), "out/slot%d.json", i);
        snprintf(b, sizeof(b), "slot_direct%d.json", order[i]);
        CHECK(same_frames(a, b), "job %d in one slot (pair %d after pair %d) gives the single "
              "run's scores", i, order[i], i ? order[i - 1] : -1);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!tool_test_setup(argv[0], tool, sizeof(tool), fate, sizeof(fate), dir))
        return test_finish();
    snprintf(ref, sizeof(ref), "%s/%s", fate, REF);
    snprintf(dis, sizeof(dis), "%s/%s", fate, DIS);
    test_bad_lists();
    test_formats();
    test_devices();
    test_one_slot();
    test_resume("thread");
    test_resume("process");
    test_corrupt();
    test_killed_job();
    test_shards();
    tool_test_cleanup(dir);
    return test_finish();
}
