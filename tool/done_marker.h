/*
 * A batch job's done-marker (doc/batch.md, "Resuming"): OUTPUT.done, a
 * JSON file written (temporary file + rename) after the job's log was
 * renamed into place. It records what the job was (inputs, options), the
 * size and modification time of both inputs and of the log, and the job's
 * result (frames, pooled scores, device). A job is complete when its
 * marker says the same job, and the inputs and the log are still the
 * files it describes; anything else re-runs the job.
 */
#ifndef QGPU_TOOL_DONE_MARKER_H
#define QGPU_TOOL_DONE_MARKER_H

#include <stddef.h>

#include <json-c/json.h>

#include "jobs.h"

/* "OUTPUT.done" (malloc'd; NULL when out of memory). */
char *marker_path(const Job *job);

/* Writes the marker of a job that succeeded: args (an array of strings:
 * the job's scoring options) and result (the tool's --job-summary) are
 * recorded, and shard ("I/N"). 0, or -1 with a message. */
int marker_write(const Job *job, json_object *args, json_object *result, const char *shard,
                 char *err, size_t err_len);

/* 1: complete (*marker, when marker is not NULL, is the marker's JSON: the
 * caller puts it); 0: not complete, the reason in why ("no done-marker",
 * "the reference changed since"...). */
int marker_check(const Job *job, json_object *args, json_object **marker, char *why,
                 size_t why_len);

#endif
