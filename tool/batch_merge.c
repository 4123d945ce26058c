/* qgpu batch-merge: see batch_merge.h and doc/batch.md, "Merging". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch_merge.h"
#include "batch_report.h"
#include "done_marker.h"
#include "options.h"

/* The marker's shard "I/N"; 0, or -1 when it has none that parses. */
static int marker_shard(json_object *marker, int *index, int *count)
{
    json_object *v;
    return json_object_object_get_ex(marker, "shard", &v) &&
           sscanf(json_object_get_string(v), "%d/%d", index, count) == 2 && *count >= 1
               ? 0 : -1;
}

/* Is this complete job's marker the one of its place in the list, run by
 * a shard that holds it, with the shard count of the others (first: -1,
 * then set)? NULL, or what is wrong. */
static const char *check_once(const Job *j, json_object *marker, int *count, char *buf,
                              size_t len)
{
    json_object *v;
    int i, n;
    if (!json_object_object_get_ex(marker, "index", &v) || json_object_get_int(v) != j->index) {
        snprintf(buf, len, "its done-marker is for job %d of the list: the list was reordered "
                 "since it ran", json_object_get_int(v));
        return buf;
    }
    if (marker_shard(marker, &i, &n)) {
        snprintf(buf, len, "its done-marker names no shard");
        return buf;
    }
    if (*count < 0)
        *count = n;
    if (n != *count) {
        snprintf(buf, len, "done by shard %d/%d while other jobs were done with %d shards: "
                 "the shards did not split the list one way (jobs may have run twice or not "
                 "at all); re-run the missing shards with one count, or with --force", i, n,
                 *count);
        return buf;
    }
    if (!jobs_in_shard(j->index, i, n)) {
        snprintf(buf, len, "done by shard %d/%d, which does not hold it", i, n);
        return buf;
    }
    return NULL;
}

static int write_lines(const char *output, json_object **lines, int n)
{
    char *tmp = NULL;
    FILE *f = stdout;
    int ok = 1;
    if (output && strcmp(output, "-")) {
        if (asprintf(&tmp, "%s.tmp-%ld", output, (long)getpid()) < 0 || !(f = fopen(tmp, "w"))) {
            fprintf(stderr, "qgpu batch-merge: -o %s: %s\n", output, strerror(errno));
            free(tmp);
            return EXIT_OUTPUT;
        }
    }
    for (int i = 0; i < n && ok; i++)
        ok = fprintf(f, "%s\n", report_text(lines[i])) > 0;
    ok = !fflush(f) && ok;
    if (tmp) {
        ok = !fclose(f) && ok;
        ok = ok && !rename(tmp, output);
        if (!ok)
            unlink(tmp);
        free(tmp);
    }
    if (!ok) {
        fprintf(stderr, "qgpu batch-merge: -o %s: write error: %s\n", output ? output : "-",
                strerror(errno));
        return EXIT_OUTPUT;
    }
    return EXIT_OK;
}

int batch_merge(const JobList *list, json_object **args, const char *output, int quiet)
{
    json_object **lines = calloc(list->nb_jobs + 1, sizeof(*lines)), *total;
    unsigned long long frames = 0;
    int bad = 0, count = -1, ret;
    if (!lines) {
        fprintf(stderr, "qgpu batch-merge: out of memory\n");
        return EXIT_INTERNAL;
    }
    for (int i = 0; i < list->nb_jobs; i++) {
        const Job *j = &list->jobs[i];
        json_object *marker = NULL, *res = NULL;
        char why[512];
        const char *wrong = NULL;
        if (!marker_check(j, args[i], &marker, why, sizeof(why)))
            wrong = why;
        else
            wrong = check_once(j, marker, &count, why, sizeof(why));
        if (wrong) {
            fprintf(stderr, "qgpu batch-merge: job %d (%s:%d, %s): not done: %s\n", i,
                    list->path, j->line, j->output, wrong);
            bad++;
            json_object_put(marker);
            continue;
        }
        lines[i] = report_job_line("job", j);
        json_object_object_add(lines[i], "shard",
                               json_object_get(json_object_object_get(marker, "shard")));
        json_object_object_get_ex(marker, "result", &res);
        report_add_result(lines[i], res);
        frames += report_frames(res);
        json_object_put(marker);
    }
    if (bad) {
        fprintf(stderr, "qgpu batch-merge: %d of %d jobs not done: no summary written\n", bad,
                list->nb_jobs);
        ret = EXIT_JOBS;
        goto out;
    }
    total = json_object_new_object();
    json_object_object_add(total, "event", json_object_new_string("merge"));
    json_object_object_add(total, "jobs", json_object_new_int(list->nb_jobs));
    json_object_object_add(total, "shards", json_object_new_int(count));
    json_object_object_add(total, "frames", json_object_new_int64(frames));
    lines[list->nb_jobs] = total;
    ret = write_lines(output, lines, list->nb_jobs + 1);
    if (!ret && !quiet)
        fprintf(stderr, "qgpu batch-merge: %d jobs, each done once (%d shard%s), %llu "
                "frames\n", list->nb_jobs, count, count == 1 ? "" : "s", frames);
out:
    for (int i = 0; i <= list->nb_jobs; i++)
        json_object_put(lines[i]);
    free(lines);
    return ret;
}
