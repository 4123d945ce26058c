/*
 * What a batch tells: the JSON lines of --log-stream and of the merged
 * summary (doc/batch.md, "Summary stream"), built with json-c.
 */
#ifndef QGPU_TOOL_BATCH_REPORT_H
#define QGPU_TOOL_BATCH_REPORT_H

#include <json-c/json.h>

#include "jobs.h"

/* {"event": event, "job": N, "line": L, "ref", "dis", "output"} (a new
 * object the caller adds to and puts). */
json_object *report_job_line(const char *event, const Job *job);

/* Adds a job result's fields (frames, seconds, fps, device_name, device_ms,
 * decode_errors, pooled) from the --job-summary object res (NULL: nothing). */
void report_add_result(json_object *line, json_object *res);

/* The result's "frames" (0 when absent) and "device_ms" (-1 when absent). */
unsigned long long report_frames(json_object *res);
double report_device_ms(json_object *res);

/* One line of text (no newline; valid until line is put). */
const char *report_text(json_object *line);

#endif
