/*
 * qgpu batch-merge: every job of the list done exactly once (a complete
 * log and done-marker each, all run with one shard count, each by the
 * shard that holds it), then the combined summary as JSON lines.
 */
#ifndef QGPU_TOOL_BATCH_MERGE_H
#define QGPU_TOOL_BATCH_MERGE_H

#include <json-c/json.h>

#include "jobs.h"

/* args: per job, its scoring options (as the batch computes them).
 * output: the summary's path, NULL or "-" for stdout (written atomically
 * when a file, and only when every job is done). Returns the exit status. */
int batch_merge(const JobList *list, json_object **args, const char *output, int quiet);

#endif
