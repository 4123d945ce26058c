/*
 * One scoring run of the tool (-r REF -d DIS and the options): decode both
 * inputs, score them, write the log. qgpu's main runs one; qgpu batch runs
 * one per job, several at once in threads of one process, on a device
 * shared by the jobs (doc/batch.md).
 */
#ifndef QGPU_TOOL_RUN_H
#define QGPU_TOOL_RUN_H

#include <signal.h>
#include <stdio.h>

#include <json-c/json.h>

#include "options.h"
#include "qgpu/qgpu.h"

typedef struct RunSetup {
    QgpuDevice *device;                 /* the shared device; NULL: o->device */
    FILE *msg;                          /* every message of the run */
    volatile sig_atomic_t *stop;        /* non-zero: stop after the frame in progress */
    volatile sig_atomic_t *stop_signal; /* the signal that set it (0: SIGINT) */
    json_object **summary;              /* when set: the job's result, on success */
    int host_jobs;                      /* a batch's jobs decoding at once (0: a single
                                           run; --hwdec auto's choice, probe.h) */
} RunSetup;

/* The output paths (-o, --log-stream), checked before anything is opened:
 * 0, or an exit status with the message on msg. */
int run_check_paths(FILE *msg, const Options *o);

/* Scores o's pair: an exit status (doc/qgpu.md; 128 + the signal when
 * stopped), the cause on s->msg. */
int run_pair(const Options *o, const RunSetup *s);

#endif
