/*
 * A batch's job list (doc/batch.md): CSV with a header line (ref, dis,
 * output, optional model and features) or JSON lines (one object a line:
 * ref, dis, output, optional model, features, options). Read and checked
 * as a whole before any job runs: a bad list is a usage error naming the
 * file and line.
 */
#ifndef QGPU_TOOL_JOBS_H
#define QGPU_TOOL_JOBS_H

#include <stddef.h>

typedef struct Job {
    int index;          /* position in the list, from 0: what shards split */
    int line;           /* line of the list file, for messages */
    char *ref, *dis, *output;
    char **models;      /* -m specs */
    int nb_models;
    char **features;    /* --feature specs */
    int nb_features;
    char **options;     /* other tool options, as separate arguments */
    int nb_options;
} Job;

typedef struct JobList {
    char *path;
    Job *jobs;
    int nb_jobs;
} JobList;

/* Reads and checks the list at path. 0, or -1 with a message naming the
 * file and line in err. */
int jobs_read(JobList *list, const char *path, char *err, size_t err_len);

void jobs_free(JobList *list);

/* --shard: "I/N" (0 <= I < N), or "slurm" (SLURM_ARRAY_TASK_ID minus
 * SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT). 0 with *index, *count
 * set, or -1 with a message. */
int jobs_parse_shard(const char *spec, int *index, int *count, char *err, size_t err_len);

/* Does job number job_index belong to shard index of count? (by position:
 * job_index mod count == index; stable while the list is not reordered) */
int jobs_in_shard(int job_index, int index, int count);

#endif
