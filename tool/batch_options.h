/*
 * qgpu batch's and batch-merge's command line (doc/batch.md): its own
 * options, the job list, and the tool options after -- for every job.
 */
#ifndef QGPU_TOOL_BATCH_OPTIONS_H
#define QGPU_TOOL_BATCH_OPTIONS_H

typedef struct BatchOptions {
    const char *jobs_path;
    const char *device;   /* NULL: auto */
    int per_device;       /* --jobs: concurrent jobs per device */
    const char *shard_spec;
    int shard_index, shard_count;
    const char *log_stream;
    const char *output;   /* merge: -o */
    int force, quiet, merge;
    int isolate;          /* --isolate process: a child process per job */
    char **tool_args;     /* after --: options for every job */
    int nb_tool_args;
} BatchOptions;

/* Parses argv (argv[0]: "batch" or "batch-merge"; o->merge set by the
 * caller). Returns 0 (run), -1 (done: --help; exit 0) or an exit status
 * (a message was printed). */
int batch_options_parse(int argc, char **argv, BatchOptions *o);

#endif
