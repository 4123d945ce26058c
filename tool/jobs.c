/* A batch's job list: see jobs.h and doc/batch.md. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jobs.h"

enum { COL_REF, COL_DIS, COL_OUTPUT, COL_MODEL, COL_FEATURES, COL_OPTIONS, NB_COLS };
static const char *const column_names[NB_COLS] = {"ref", "dis", "output", "model", "features",
                                                   "options"};

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

static int column_of(const char *name)
{
    for (int i = 0; i < NB_COLS; i++)
        if (!strcmp(name, column_names[i]))
            return i;
    return -1;
}

static int add_string(char ***list, int *n, const char *s, size_t len)
{
    char **grown = realloc(*list, (*n + 1) * sizeof(**list));
    if (!grown)
        return -1;
    *list = grown;
    if (!(grown[*n] = strndup(s, len)))
        return -1;
    (*n)++;
    return 0;
}

/* Adds the pieces of s separated by any of seps (empty pieces skipped). */
static int add_split(char ***list, int *n, const char *s, const char *seps)
{
    while (*s) {
        size_t len = strcspn(s, seps);
        if (len && add_string(list, n, s, len))
            return -1;
        s += len;
        s += strspn(s, seps);
    }
    return 0;
}

static void job_free(Job *j)
{
    free(j->ref);
    free(j->dis);
    free(j->output);
    for (int i = 0; i < j->nb_models; i++)
        free(j->models[i]);
    for (int i = 0; i < j->nb_features; i++)
        free(j->features[i]);
    for (int i = 0; i < j->nb_options; i++)
        free(j->options[i]);
    free(j->models);
    free(j->features);
    free(j->options);
}

void jobs_free(JobList *list)
{
    for (int i = 0; i < list->nb_jobs; i++)
        job_free(&list->jobs[i]);
    free(list->jobs);
    free(list->path);
    memset(list, 0, sizeof(*list));
}

static Job *new_job(JobList *list, int line)
{
    Job *grown = realloc(list->jobs, (list->nb_jobs + 1) * sizeof(*grown));
    if (!grown)
        return NULL;
    list->jobs = grown;
    memset(&grown[list->nb_jobs], 0, sizeof(*grown));
    grown[list->nb_jobs].index = list->nb_jobs;
    grown[list->nb_jobs].line = line;
    return &grown[list->nb_jobs++];
}

/* Sets a job's field from column col's text. */
static int set_field(Job *j, int col, const char *text)
{
    char **field = col == COL_REF ? &j->ref : col == COL_DIS ? &j->dis : &j->output;
    switch (col) {
    case COL_MODEL:
        return add_split(&j->models, &j->nb_models, text, ";");
    case COL_FEATURES:
        return add_split(&j->features, &j->nb_features, text, ";");
    case COL_OPTIONS:
        return add_split(&j->options, &j->nb_options, text, " \t");
    default:
        free(*field);
        return (*field = strdup(text)) ? 0 : -1;
    }
}

/* ---------------------------------------------------------------- CSV */

/* Splits one CSV line (RFC 4180 quoting: "a,b" and "" inside quotes) into
 * fields, in place; returns their count, -1 on an unterminated quote,
 * -2 on more than max. */
static int csv_split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        char *out = p;
        if (n == max)
            return -2;
        fields[n++] = out;
        if (*p == '"') {
            p++;
            for (;;) {
                if (!*p)
                    return -1;
                if (*p == '"' && p[1] == '"') {
                    *out++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *out++ = *p++;
                }
            }
            if (*p && *p != ',')
                return -1;
        } else {
            while (*p && *p != ',')
                *out++ = *p++;
        }
        if (!*p) {
            *out = 0;
            return n;
        }
        *out = 0;
        p++;
    }
}

static void chomp(char *line)
{
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = 0;
}

static int blank_or_comment(const char *line)
{
    line += strspn(line, " \t");
    return !*line || *line == '#';
}

/* The state of a CSV list: the header's columns, once read. */
typedef struct CsvHeader {
    int cols[NB_COLS];
    int nb_cols;
} CsvHeader;

static int csv_header(CsvHeader *h, char **fields, int n, const char *where, char *err,
                      size_t len)
{
    int seen[NB_COLS] = {0};
    if (n < 0)
        return fail(err, len, "%s: too many columns in the header (known: ref, dis, output, "
                    "model, features, options)", where);
    for (int i = 0; i < n; i++) {
        int c = column_of(fields[i]);
        if (c < 0)
            return fail(err, len, "%s: unknown column \"%s\" (known: ref, dis, output, model, "
                        "features, options)", where, fields[i]);
        if (seen[c]++)
            return fail(err, len, "%s: column \"%s\" twice", where, fields[i]);
        h->cols[i] = c;
    }
    for (int c = COL_REF; c <= COL_OUTPUT; c++)
        if (!seen[c])
            return fail(err, len, "%s: the header has no \"%s\" column (it needs ref, dis and "
                        "output)", where, column_names[c]);
    h->nb_cols = n;
    return 0;
}

/* One line of a CSV list (not blank, not a comment): the header, or a job. */
static int csv_line(JobList *list, void *state, char *line, int lineno, const char *where,
                    char *err, size_t len)
{
    CsvHeader *h = state;
    char *fields[NB_COLS + 1];
    int n = csv_split(line, fields, NB_COLS + 1);
    Job *j;
    if (n == -1)
        return fail(err, len, "%s: unterminated quote", where);
    if (!h->nb_cols)
        return csv_header(h, fields, n, where, err, len);
    if (n != h->nb_cols)
        return fail(err, len, "%s: %s fields, the header has %d", where,
                    n >= 0 && n < h->nb_cols ? "too few" : "too many", h->nb_cols);
    if (!(j = new_job(list, lineno)))
        return fail(err, len, "%s: out of memory", where);
    for (int i = 0; i < n; i++)
        if (set_field(j, h->cols[i], fields[i]))
            return fail(err, len, "%s: out of memory", where);
    return 0;
}

/* -------------------------------------------------------- JSON lines */

/* A string, or (model, features, options) an array of strings. */
static int json_field(Job *j, int col, json_object *v, const char *where, char *err, size_t len)
{
    char ***list = col == COL_MODEL ? &j->models : col == COL_FEATURES ? &j->features
                                                                         : &j->options;
    int *n = col == COL_MODEL ? &j->nb_models : col == COL_FEATURES ? &j->nb_features
                                                                     : &j->nb_options;
    if (json_object_is_type(v, json_type_string)) {
        if (col == COL_OPTIONS)
            return fail(err, len, "%s: \"options\" must be an array of strings, e.g. "
                        "[\"--subsample\", \"2\"]", where);
        return set_field(j, col, json_object_get_string(v)) ? fail(err, len, "out of memory")
                                                            : 0;
    }
    if (col <= COL_OUTPUT || !json_object_is_type(v, json_type_array))
        return fail(err, len, "%s: \"%s\" must be a string%s", where, column_names[col],
                    col <= COL_OUTPUT ? "" : " or an array of strings");
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *s = json_object_array_get_idx(v, i);
        const char *text;
        if (!json_object_is_type(s, json_type_string))
            return fail(err, len, "%s: \"%s\" must hold strings only", where,
                        column_names[col]);
        text = json_object_get_string(s);
        if (add_string(list, n, text, strlen(text)))
            return fail(err, len, "out of memory");
    }
    return 0;
}

/* The job of one JSON line's object. */
static int json_job(JobList *list, json_object *obj, int lineno, const char *where, char *err,
                    size_t len)
{
    Job *j;
    if (!json_object_is_type(obj, json_type_object))
        return fail(err, len, "%s: not a JSON object", where);
    if (!(j = new_job(list, lineno)))
        return fail(err, len, "%s: out of memory", where);
    json_object_object_foreach(obj, key, value) {
        int c = column_of(key);
        if (c < 0)
            return fail(err, len, "%s: unknown key \"%s\" (known: ref, dis, output, model, "
                        "features, options)", where, key);
        if (json_field(j, c, value, where, err, len))
            return -1;
    }
    return 0;
}

static int json_line(JobList *list, void *state, char *line, int lineno, const char *where,
                     char *err, size_t len)
{
    json_tokener *tok = json_tokener_new();
    json_object *obj;
    int ret;
    (void)state;
    if (!tok)
        return fail(err, len, "%s: out of memory", where);
    obj = json_tokener_parse_ex(tok, line, (int)strlen(line));
    if (!obj || json_tokener_get_parse_end(tok) != strlen(line))
        ret = fail(err, len, "%s: not one JSON object (%s)", where,
                   obj ? "text after it" : json_tokener_error_desc(json_tokener_get_error(tok)));
    else
        ret = json_job(list, obj, lineno, where, err, len);
    json_object_put(obj);
    json_tokener_free(tok);
    return ret;
}

/* ---------------------------------------------------------- the file */

typedef int (*LineFn)(JobList *list, void *state, char *line, int lineno, const char *where,
                      char *err, size_t len);

/* Calls fn for every line that is not blank or a comment. */
static int read_lines(JobList *list, FILE *f, LineFn fn, void *state, char *err, size_t len)
{
    char *line = NULL, where[1200];
    size_t cap = 0;
    int lineno = 0, ret = 0;
    while (!ret && getline(&line, &cap, f) >= 0) {
        lineno++;
        chomp(line);
        if (blank_or_comment(line))
            continue;
        snprintf(where, sizeof(where), "%s:%d", list->path, lineno);
        ret = fn(list, state, line, lineno, where, err, len);
    }
    if (!ret && ferror(f))
        ret = fail(err, len, "%s: read error: %s", list->path, strerror(errno));
    free(line);
    return ret;
}

/* ------------------------------------------------------------- checks */

static int check_jobs(const JobList *list, char *err, size_t len)
{
    if (!list->nb_jobs)
        return fail(err, len, "%s: no jobs", list->path);
    for (int i = 0; i < list->nb_jobs; i++) {
        const Job *j = &list->jobs[i];
        const char *missing = !j->ref || !*j->ref ? "ref" : !j->dis || !*j->dis ? "dis"
                              : !j->output || !*j->output ? "output" : NULL;
        if (missing)
            return fail(err, len, "%s:%d: no \"%s\" (every job needs ref, dis and output)",
                        list->path, j->line, missing);
        if (!strcmp(j->output, "-"))
            return fail(err, len, "%s:%d: output \"-\": a batch writes each log to a file",
                        list->path, j->line);
        for (int k = 0; k < i; k++)
            if (!strcmp(list->jobs[k].output, j->output))
                return fail(err, len, "%s:%d: output \"%s\" is also line %d's: every job "
                            "needs a log of its own", list->path, j->line, j->output,
                            list->jobs[k].line);
    }
    return 0;
}

/* JSON lines when the name says so (.jsonl, .ndjson, .json) or the first
 * line that is not blank starts with '{'; else CSV. */
static int is_jsonl(const char *path, FILE *f)
{
    const char *dot = strrchr(path, '.');
    int c;
    if (dot && (!strcmp(dot, ".jsonl") || !strcmp(dot, ".ndjson") || !strcmp(dot, ".json")))
        return 1;
    if (dot && !strcmp(dot, ".csv"))
        return 0;
    while ((c = getc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
        ;
    rewind(f);
    return c == '{';
}

int jobs_read(JobList *list, const char *path, char *err, size_t len)
{
    FILE *f;
    int ret;
    memset(list, 0, sizeof(*list));
    if (!(list->path = strdup(path)))
        return fail(err, len, "out of memory");
    f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!f) {
        fail(err, len, "%s: cannot read the job list: %s", path, strerror(errno));
        jobs_free(list);
        return -1;
    }
    if (is_jsonl(path, f)) {
        ret = read_lines(list, f, json_line, NULL, err, len);
    } else {
        CsvHeader header = {{0}, 0};
        ret = read_lines(list, f, csv_line, &header, err, len);
        if (!ret && !header.nb_cols)
            ret = fail(err, len, "%s: no header line (ref,dis,output[,model][,features]"
                       "[,options])", path);
    }
    if (f != stdin)
        fclose(f);
    if (!ret)
        ret = check_jobs(list, err, len);
    if (ret)
        jobs_free(list);
    return ret;
}

/* ------------------------------------------------------------- shards */

static int parse_int(const char *s, int *v)
{
    char *end;
    long n;
    errno = 0;
    n = strtol(s, &end, 10);
    if (end == s || *end || errno || n < 0 || n > 1000000)
        return -1;
    *v = (int)n;
    return 0;
}

int jobs_parse_shard(const char *spec, int *index, int *count, char *err, size_t len)
{
    if (!strcmp(spec, "slurm")) {
        const char *id = getenv("SLURM_ARRAY_TASK_ID"), *min = getenv("SLURM_ARRAY_TASK_MIN");
        const char *n = getenv("SLURM_ARRAY_TASK_COUNT");
        int i, lo = 0;
        if (!id || !n || parse_int(id, &i) || parse_int(n, count) ||
            (min && parse_int(min, &lo)))
            return fail(err, len, "--shard slurm: SLURM_ARRAY_TASK_ID and "
                        "SLURM_ARRAY_TASK_COUNT are not set (or not numbers): run it in a "
                        "Slurm job array (sbatch --array=0-N)");
        *index = i - lo;
    } else {
        const char *slash = strchr(spec, '/');
        char first[32];
        if (!slash || (size_t)(slash - spec) >= sizeof(first))
            return fail(err, len, "--shard %s: expected I/N (e.g. 0/4) or slurm", spec);
        snprintf(first, sizeof(first), "%.*s", (int)(slash - spec), spec);
        if (parse_int(first, index) || parse_int(slash + 1, count))
            return fail(err, len, "--shard %s: expected I/N with whole numbers (e.g. 0/4)",
                        spec);
    }
    if (*count < 1 || *index >= *count)
        return fail(err, len, "--shard %s: index %d of %d shards: the index must be 0 to %d "
                    "(Slurm arrays: --array=0-%d, or set SLURM_ARRAY_TASK_MIN)", spec,
                    *index, *count, *count > 0 ? *count - 1 : 0, *count > 0 ? *count - 1 : 0);
    return 0;
}

int jobs_in_shard(int job_index, int index, int count)
{
    return job_index % count == index;
}
