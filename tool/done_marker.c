/* A batch job's done-marker: see done_marker.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "done_marker.h"

#define MARKER_VERSION 1

char *marker_path(const Job *job)
{
    char *path = NULL;
    return asprintf(&path, "%s.done", job->output) < 0 ? NULL : path;
}

/* {"size": N, "mtime": "SECONDS.NANOSECONDS"} of path; NULL when it cannot
 * be read. */
static json_object *file_identity(const char *path)
{
    struct stat st;
    char mtime[64];
    json_object *o;
    if (stat(path, &st) || !S_ISREG(st.st_mode))
        return NULL;
    snprintf(mtime, sizeof(mtime), "%lld.%09ld", (long long)st.st_mtim.tv_sec,
             (long)st.st_mtim.tv_nsec);
    o = json_object_new_object();
    json_object_object_add(o, "size", json_object_new_int64(st.st_size));
    json_object_object_add(o, "mtime", json_object_new_string(mtime));
    return o;
}

static json_object *job_object(const Job *job, json_object *args)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "ref", json_object_new_string(job->ref));
    json_object_object_add(o, "dis", json_object_new_string(job->dis));
    json_object_object_add(o, "output", json_object_new_string(job->output));
    json_object_object_add(o, "args", json_object_get(args));
    return o;
}

int marker_write(const Job *job, json_object *args, json_object *result, const char *shard,
                 char *err, size_t len)
{
    char *path = marker_path(job), *tmp = NULL;
    json_object *m = json_object_new_object();
    json_object *ids[3] = {file_identity(job->ref), file_identity(job->dis),
                           file_identity(job->output)};
    const char *text;
    FILE *f = NULL;
    int ret = -1;
    if (!path || asprintf(&tmp, "%s.tmp-%ld", path, (long)getpid()) < 0) {
        snprintf(err, len, "out of memory");
        goto out;
    }
    if (!ids[2]) {
        snprintf(err, len, "%s: the log is not there after the job", job->output);
        goto out;
    }
    json_object_object_add(m, "qgpu_batch_done", json_object_new_int(MARKER_VERSION));
    json_object_object_add(m, "job", job_object(job, args));
    json_object_object_add(m, "index", json_object_new_int(job->index));
    json_object_object_add(m, "shard", json_object_new_string(shard));
    json_object_object_add(m, "ref_file", ids[0] ? ids[0] : json_object_new_null());
    json_object_object_add(m, "dis_file", ids[1] ? ids[1] : json_object_new_null());
    json_object_object_add(m, "log_file", ids[2]);
    json_object_object_add(m, "result", json_object_get(result));
    ids[0] = ids[1] = ids[2] = NULL;
    text = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
    if (!(f = fopen(tmp, "w")) || fprintf(f, "%s\n", text) < 0 || fflush(f) ||
        fsync(fileno(f))) {
        snprintf(err, len, "%s: cannot write the done-marker: %s", tmp, strerror(errno));
        goto out;
    }
    if (fclose(f)) {
        f = NULL;
        snprintf(err, len, "%s: cannot write the done-marker: %s", tmp, strerror(errno));
        goto out;
    }
    f = NULL;
    if (rename(tmp, path)) {
        snprintf(err, len, "%s: cannot rename the done-marker into place: %s", path,
                 strerror(errno));
        goto out;
    }
    ret = 0;
out:
    if (f)
        fclose(f);
    if (ret && tmp)
        unlink(tmp);
    for (int i = 0; i < 3; i++)
        json_object_put(ids[i]);
    json_object_put(m);
    free(path);
    free(tmp);
    return ret;
}

/* The identity recorded under key equals the file's now (both absent is
 * equal: an input that is not a regular file, e.g. a device). */
static int same_file(json_object *m, const char *key, const char *path)
{
    json_object *then = NULL, *now = file_identity(path);
    int same;
    json_object_object_get_ex(m, key, &then);
    if (then && json_object_is_type(then, json_type_null))
        then = NULL;
    same = (!then && !now) || (then && now && json_object_equal(then, now));
    json_object_put(now);
    return same;
}

int marker_check(const Job *job, json_object *args, json_object **marker, char *why,
                 size_t len)
{
    char *path = marker_path(job);
    json_object *m = path ? json_object_from_file(path) : NULL, *v = NULL, *want;
    int ok = 0;
    if (marker)
        *marker = NULL;
    if (!m) {
        snprintf(why, len, access(path ? path : "", F_OK) ? "no done-marker"
                                                           : "unreadable done-marker");
        goto out;
    }
    want = job_object(job, args);
    if (!json_object_object_get_ex(m, "qgpu_batch_done", &v) || json_object_get_int(v) !=
        MARKER_VERSION || !json_object_object_get_ex(m, "job", &v) ||
        !json_object_equal(v, want))
        snprintf(why, len, "the done-marker is for another job (inputs or options changed)");
    else if (!same_file(m, "ref_file", job->ref))
        snprintf(why, len, "the reference changed since");
    else if (!same_file(m, "dis_file", job->dis))
        snprintf(why, len, "the distorted input changed since");
    else if (!json_object_object_get_ex(m, "log_file", &v) || !same_file(m, "log_file",
                                                                          job->output))
        snprintf(why, len, "the log is missing or changed since");
    else if (!json_object_object_get_ex(m, "result", &v) ||
             !json_object_is_type(v, json_type_object))
        snprintf(why, len, "the done-marker has no result");
    else
        ok = 1;
    json_object_put(want);
    if (ok && marker)
        *marker = json_object_get(m);
out:
    json_object_put(m);
    free(path);
    return ok;
}
