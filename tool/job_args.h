/*
 * A batch job's command line: the options that identify its result (log
 * format from the output's extension, models, features, the job's options,
 * then the batch's options after --), the child qgpu's argv, and the check
 * of both through the tool's own parser before anything runs.
 */
#ifndef QGPU_TOOL_JOB_ARGS_H
#define QGPU_TOOL_JOB_ARGS_H

#include <json-c/json.h>

#include "jobs.h"

/* The options as an array of strings (recorded in the done-marker). */
json_object *job_args(const Job *j, char **tool_args, int nb_tool_args);

/* exe -q -r REF -d DIS -o OUTPUT [--device device] --job-summary summary
 * ARGS..., NULL-terminated (pointers into j and args: free the array
 * only); NULL when out of memory. */
char **job_argv(const char *exe, const Job *j, json_object *args, const char *device,
                const char *summary);

/* 0, or EXIT_USAGE with a message naming list_path and the job's line:
 * options the tool refuses, or one the batch sets itself (-r -d -o
 * --device --log-stream --job-summary). */
int job_args_check(const char *exe, const char *list_path, const Job *j, json_object *args);

#endif
